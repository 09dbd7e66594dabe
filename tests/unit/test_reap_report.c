/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_reap_report.c - how a reap's outcome is reported: the line for
 * people and the JSON event for machines (parsed back with yajl).
 */
#include <stdlib.h>

#include <yajl/yajl_tree.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

static xlreaper_task task(pid_t tid, pid_t ppid, char state, uid_t r,
                          uid_t s, const char *comm, const char *wchan)
{
    xlreaper_task t = { .tid = tid, .tgid = tid, .ppid = ppid,
                        .state = state, .ruid = r, .euid = 131077,
                        .suid = s, .fsuid = 131077, .kill_pending = true };
    snprintf(t.comm, sizeof(t.comm), "%s", comm);
    snprintf(t.wchan, sizeof(t.wchan), "%s", wchan);
    return t;
}

static void expect_line(const xlreaper_reap_result *res, const char *want)
{
    char *s = xlreaper_reap_result_describe(res);

    assert_non_null(s);
    if (!strstr(s, want))
        fail_msg("\"%s\" lacks \"%s\"", s, want);
    free(s);
}

static void test_describe_outcomes(void **state)
{
    xlreaper_reap_result res;
    xlreaper_task t;
    (void)state;

    xlreaper_reap_result_init(&res);
    res.domid = 5;
    res.uid = 131077;
    res.outcome = XLREAPER_OUTCOME_EMPTY;
    res.was_empty = true;
    res.rounds = 1;
    res.duration_us = 400;
    expect_line(&res, "domid 5 (uid 131077): killed in 0.4 ms, verified "
                      "empty (the kernel counted no task right after the "
                      "kill)");

    res.was_empty = false;
    res.rounds = 2;
    res.tasks_seen = 3;
    res.duration_us = 2100;
    expect_line(&res, "killed in 2.1 ms (2 rounds, 3 tasks seen), "
                      "verified empty");

    res.outcome = XLREAPER_OUTCOME_ZOMBIES;
    t = task(123, 100, 'Z', 131077, 131077, "qemu", "");
    xlreaper__task_list_add(&res.zombies, &t);
    expect_line(&res, "no live task remains; 1 zombie(s) still count "
                      "against the uid: pid 123 (qemu) waits for its "
                      "parent pid 100");

    xlreaper_task_list_dispose(&res.zombies);
    res.outcome = XLREAPER_OUTCOME_REMAIN;
    res.duration_us = 5000000;
    t = task(7, 1, 'D', 131077, 131077, "qemu", "nfs_wait");
    xlreaper__task_list_add(&res.stuck, &t);
    t = task(8, 1, 'S', 0, 0, "helper", "");
    xlreaper__task_list_add(&res.live, &t);
    expect_line(&res, "tasks remain after 5000.0 ms and 2 rounds");
    expect_line(&res, "pid 7 (qemu) in D state at nfs_wait with SIGKILL "
                      "pending");
    expect_line(&res, "pid 8 (helper) has the uid only as effective or "
                      "filesystem uid (real 0, saved 0)");
    xlreaper_reap_result_dispose(&res);
    xlreaper_reap_result_dispose(&res); /* idempotent */

    xlreaper_reap_result_init(&res);
    res.outcome = XLREAPER_OUTCOME_REMAIN;
    expect_line(&res, "the kernel still counts tasks of the uid but /proc "
                      "shows none");
    xlreaper_reap_result_dispose(&res);

    /* Killed, stuck on a wait the reap cannot end: said apart from
     * "remain", with where each waits. */
    xlreaper_reap_result_init(&res);
    res.outcome = XLREAPER_OUTCOME_STUCK;
    res.duration_us = 5000000;
    res.rounds = 3;
    t = task(9, 1, 'D', 131077, 131077, "qemu", "request_wait_answer");
    xlreaper__task_list_add(&res.stuck, &t);
    expect_line(&res, "killed, but tasks are stuck after 5000.0 ms and 3 "
                      "rounds: nothing the reap can do ends their wait; 1 "
                      "stuck: pid 9 (qemu) in D state at "
                      "request_wait_answer with SIGKILL pending");
    xlreaper_reap_result_dispose(&res);

    /* A FUSE connection of the uid's, aborted on the way to "empty". */
    xlreaper_reap_result_init(&res);
    res.outcome = XLREAPER_OUTCOME_EMPTY;
    res.fuse_aborted = 1;
    expect_line(&res, "verified empty");
    expect_line(&res, "; aborted 1 FUSE connection(s) of the uid, on which "
                      "killed tasks were stuck");
    xlreaper_reap_result_dispose(&res);
}

static void test_describe_caps_long_lists(void **state)
{
    xlreaper_reap_result res;
    (void)state;

    xlreaper_reap_result_init(&res);
    res.outcome = XLREAPER_OUTCOME_ZOMBIES;
    for (int i = 0; i < 100; i++) {
        xlreaper_task t = task(1000 + i, 50, 'Z', 9, 9, "z", "");
        xlreaper__task_list_add(&res.zombies, &t);
    }
    expect_line(&res, "100 zombie(s)");
    expect_line(&res, "and 92 more");
    xlreaper_reap_result_dispose(&res);
}

static void test_json_event(void **state)
{
    xlreaper_reap_result res;
    xlreaper_task t;
    char *json, err[256];
    yajl_val v, x;
    (void)state;

    xlreaper_reap_result_init(&res);
    res.domid = 9;
    res.uid = 3000009;
    res.outcome = XLREAPER_OUTCOME_ZOMBIES;
    res.tasks_seen = 4;
    res.rounds = 1;
    res.duration_us = 1234;
    t = task(55, 44, 'Z', 3000009, 3000009, "a\"b\\c", "");
    xlreaper__task_list_add(&res.zombies, &t);
    assert_int_equal(xlreaper_reap_result_json(&res, &json), 0);

    v = yajl_tree_parse(json, err, sizeof(err));
    if (!v)
        fail_msg("not JSON: %s: %s", err, json);
    const char *p_event[] = { "event", NULL };
    const char *p_domid[] = { "domid", NULL };
    const char *p_outcome[] = { "outcome", NULL };
    const char *p_seen[] = { "tasks_seen", NULL };
    const char *p_zombies[] = { "zombies", NULL };
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, p_event,
                                                      yajl_t_string)),
                        "reap");
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(v, p_domid,
                                                    yajl_t_number)),
                     9);
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, p_outcome,
                                                      yajl_t_string)),
                        "zombies");
    assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(v, p_seen,
                                                    yajl_t_number)),
                     4);
    x = yajl_tree_get(v, p_zombies, yajl_t_array);
    assert_true(YAJL_IS_ARRAY(x));
    assert_int_equal(YAJL_GET_ARRAY(x)->len, 1);
    const char *p_comm[] = { "comm", NULL };
    assert_string_equal(
        YAJL_GET_STRING(yajl_tree_get(YAJL_GET_ARRAY(x)->values[0], p_comm,
                                      yajl_t_string)),
        "a\"b\\c");
    yajl_tree_free(v);
    free(json);
    xlreaper_reap_result_dispose(&res);
}

static void test_strerror_covers_codes(void **state)
{
    (void)state;
    for (int rc = 0; rc >= -7; rc--)
        assert_string_not_equal(xlreaper_strerror(rc), "unknown error");
    assert_string_equal(xlreaper_strerror(-99), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe_outcomes),
        cmocka_unit_test(test_describe_caps_long_lists),
        cmocka_unit_test(test_json_event),
        cmocka_unit_test(test_strerror_covers_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
