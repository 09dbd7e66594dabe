/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon_dispatch.c - xl-reaperd's one dispatcher: what the start
 * sweep finds is reaped by that sweep, whatever the watch events do
 * meanwhile.
 *
 * The census is made to miss chosen uids (/fakexen/census-misses, see
 * tests/daemon/fakexen_libxl.c), so that only the kernel's count, asked
 * chunk by chunk over the whole range, finds the tasks under them; and
 * xenstored fires every watch once when it is registered, and a death
 * is added, so that watch events arrive between the chunks.  A census
 * run from the watch handler between two chunks (as before) cleared
 * what the first chunks had found: those uids were reaped only a
 * sweep_interval_s later.  Uids of this suite: 5200000 + domid.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_dfix.h"

#define BASE 5200000u
#define WAIT_MS 30000u

/* Dead domids with a task the census misses: two in the first chunk
 * of the kernel's pass (1..1024), two in later ones. */
static const uint32_t hidden[] = { 7, 1000, 1100, 2000 };
#define NHIDDEN (sizeof(hidden) / sizeof(hidden[0]))

typedef struct {
    xlrt_dfix d;
    pid_t tasks[NHIDDEN];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    /* An hour between sweeps: only the start sweep can find them. */
    xlrt_dfix_setup(&f->d, BASE,
                    "sweep_interval_s = 3600\nmetrics_file = \"\"\n");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlrt_daemon_dispose(&f->d.dm);
    for (unsigned i = 0; i < NHIDDEN; i++) {
        if (f->tasks[i] > 0 && xlrt_alive(f->tasks[i]))
            xlrt_bystander_stop(f->tasks[i]);
        xlrt_dfix_reap_left(&f->d, hidden[i]);
    }
    xlrt_dfix_teardown(&f->d, 1, 0);
    free(f);
    return 0;
}

/* The start sweep reaps every uid its kernel pass found, in the first
 * chunk too, while watch events (their first firing, and a death) come
 * in between its chunks; each exactly once. */
static void test_start_sweep_keeps_its_findings(void **state)
{
    fixture *f = *state;
    char *ev, trig[16];

    for (unsigned i = 0; i < NHIDDEN; i++) {
        assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0,
                                     "write /fakexen/census-misses/%u x",
                                     hidden[i]),
                         0);
        f->tasks[i] = xlrt_bystander_start(BASE + hidden[i]);
        assert_true(xlrt_kernel_count(BASE + hidden[i]) >= 1);
    }
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 5"), 0);
    xlrt_dfix_start(&f->d, "tests/xl-reaperd-fakexen", NULL);
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, "ready:", WAIT_MS), 0);
    /* A death while the start sweep runs. */
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 5"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "sweep (whole range", 120000), 0);

    /* By the end of the start sweep, each was reaped by it. */
    for (unsigned i = 0; i < NHIDDEN; i++) {
        int st;

        if (xlrt_daemon_count_events(&f->d.dm, hidden[i]) != 1)
            fail_msg("domid %u: %u events by the end of the start sweep, "
                     "want 1 (its task was found by the kernel's count "
                     "and then forgotten?)",
                     hidden[i], xlrt_daemon_count_events(&f->d.dm, hidden[i]));
        assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, hidden[i], 0, &ev),
                         0);
        xlrt_json_str(ev, "trigger", trig, sizeof(trig));
        assert_string_equal(trig, "sweep");
        assert_true(xlrt_json_int(ev, "tasks_seen") >= 0);
        free(ev);
        /* Our own child, killed by the daemon. */
        assert_int_equal(waitpid(f->tasks[i], &st, 0), f->tasks[i]);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        f->tasks[i] = -1;
    }
    /* The death during the sweep: one release event. */
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 5, WAIT_MS, &ev), 0);
    xlrt_json_str(ev, "trigger", trig, sizeof(trig));
    assert_string_equal(trig, "release");
    free(ev);
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 5), 1);
    assert_int_equal(xlrt_daemon_stop(&f->d.dm), 0);
}

/* Tasks under dead domids' uids before the daemon starts, that the
 * /proc census sees: the census xenstored's first watch event asks for
 * reaps them at once, and the start sweep, which counts the whole range
 * in the kernel first (seconds: more than e2e 04's 10 s bound in a TCG
 * dom0), finds them gone and does not report them again. */
static void test_start_leftovers_reaped_by_the_first_census(void **state)
{
    static const uint32_t left[] = { 40, 3000, 20000 };
    fixture *f = *state;
    char *ev, trig[16];

    for (unsigned i = 0; i < 3; i++) {
        f->tasks[i] = xlrt_bystander_start(BASE + left[i]);
        assert_true(xlrt_kernel_count(BASE + left[i]) >= 1);
    }
    assert_int_equal(xlrt_daemon_start_prog(&f->d.dm,
                                            "tests/xl-reaperd-fakexen",
                                            f->d.dir, f->d.config, f->d.sock),
                     0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "sweep (whole range", 120000), 0);
    for (unsigned i = 0; i < 3; i++) {
        int st;

        assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, left[i], 0, &ev), 0);
        xlrt_json_str(ev, "trigger", trig, sizeof(trig));
        if (strcmp(trig, "census"))
            fail_msg("domid %u: reaped by \"%s\", not by the first census",
                     left[i], trig);
        free(ev);
        assert_int_equal(xlrt_daemon_count_events(&f->d.dm, left[i]), 1);
        assert_int_equal(waitpid(f->tasks[i], &st, 0), f->tasks[i]);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        f->tasks[i] = -1;
    }
    assert_int_equal(xlrt_daemon_stop(&f->d.dm), 0);
}

/* The time_ms of the k-th event of domid, waiting for it. */
static long long event_time(fixture *f, uint32_t domid, unsigned timeout_ms)
{
    char *ev;
    long long t;

    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, domid, timeout_ms, &ev),
                     0);
    t = xlrt_json_int(ev, "time_ms");
    free(ev);
    return t;
}

/* A uid that stays stuck (a thread that kill(-1) cannot reach and the
 * kernel counts) is reaped, and
 * reported, after a delay that doubles each time: not at every sweep
 * (here every second). */
static void test_stuck_uid_backed_off(void **state)
{
    fixture *f = *state;
    char *text, *m;
    long long t[4];
    pid_t holder;

    assert_true(asprintf(&text,
                         "sweep_interval_s = 1\nreap_timeout_ms = 200\n"
                         "metrics_file = \"%s/m.prom\"\n",
                         f->d.dir) > 0);
    xlrt_dfix_write_config(&f->d, BASE, text);
    free(text);
    holder = xlrt_thread_holder_start(BASE + 9);
    f->tasks[0] = holder;
    xlrt_dfix_start(&f->d, "tests/xl-reaperd-fakexen", NULL);
    for (unsigned i = 0; i < 4; i++)
        t[i] = event_time(f, 9, 20000);
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm,
                                          "domid 9: its uid still "
                                          "has tasks after 3 reaps; backing "
                                          "off: next try in 4 s",
                                          WAIT_MS),
                     0);
    /* 1 s, 2 s, 4 s (each ends at the first sweep after it; the reap
     * itself takes reap_timeout_ms). */
    if (t[1] - t[0] < 900 || t[2] - t[1] < 1900 || t[3] - t[2] < 3900)
        fail_msg("reaps of a stuck uid %lld, %lld, %lld ms apart: want "
                 "at least 1, 2 and 4 s",
                 t[1] - t[0], t[2] - t[1], t[3] - t[2]);
    {
        char path[600];
        int fd;

        snprintf(path, sizeof(path), "%s/m.prom", f->d.dir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        m = xlrt_read_to_eof(fd);
        close(fd);
    }
    assert_non_null(strstr(m, "\nxl_reaper_uids_backed_off 1\n"));
    free(m);
    assert_true(xlrt_alive(holder));
    assert_int_equal(xlrt_daemon_stop(&f->d.dm), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_start_sweep_keeps_its_findings,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_start_leftovers_reaped_by_the_first_census, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stuck_uid_backed_off, setup,
                                        teardown),
    };
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon_dispatch: needs root\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
