/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon_libxl.c - xl-reaperd as it runs on a hypervisor: the live
 * domains are the hypervisor's (libxl_list_domain), not xenstore's.  The
 * daemon under test is built for tests (build/tests/xl-reaperd-fakexen:
 * its libxl calls answered from fake_xenstored's stand-in for the
 * hypervisor); domids 71..80 of this suite's uid block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_dfix.h"

#define BASE 5000000u
#define WAIT_MS 30000u

typedef struct {
    xlrt_dfix d;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    xlrt_dfix_setup(&f->d, BASE,
                    "sweep_interval_s = 1\nmetrics_file = \"\"\n");
    xlrt_dfix_start(&f->d, "tests/xl-reaperd-fakexen", NULL);
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, "by libxl", WAIT_MS), 0);
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, "ready:", WAIT_MS), 0);
    xlrt_dfix_wait_swept(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int st;

    if (!f)
        return 0; /* the setup failed */
    st = xlrt_daemon_stop(&f->d.dm);
    xlrt_dfix_teardown(&f->d, 71, 80);
    free(f);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}

/* xenstore loses a domain's directory (as during a destroy, or after a
 * xenstored restart) while the hypervisor still has the domain: its DM is
 * not touched.  When the hypervisor lets it go, the uid is reaped. */
static void test_hypervisor_decides(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 71;
    pid_t racer;
    char *ev;

    xlrt_daemon_log_mark(&f->d.dm);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 71 %u", uid), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 71: its DM runs as uid 5000071",
                             WAIT_MS),
        0);
    racer = xlrt_racer_start(uid);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "rm /local/domain/71"), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "release"), 0);
    /* Nor does a sweep after it (one a second here): the second one to
     * end has begun after the release. */
    xlrt_daemon_log_mark(&f->d.dm);
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            xlrt_daemon_wait_log(&f->d.dm, "sweep done in", WAIT_MS), 0);
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 71), 0);
    assert_true(xlrt_kernel_count(uid) >= 1);

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "hv-del 71"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 71, WAIT_MS, &ev), 0);
    assert_int_equal(xlrt_json_int(ev, "uid"), uid);
    assert_int_equal(xlrt_json_array_len(ev, "live"), 0);
    /* It was read while the domain lived. */
    assert_int_equal(xlrt_json_int(ev, "xs_kill_uid"), uid);
    free(ev);
    xlrt_wait_count(uid, 0);
    xlrt_nursery_stop(racer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hypervisor_decides),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
