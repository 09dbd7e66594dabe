/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon_metrics.c - xl-reaperd's metrics file, as node_exporter's
 * textfile collector would read it: after a death, after a sweep that
 * finds a leftover, when the file cannot be written (reaping goes on),
 * and after a clean stop.  Against the real daemon, the test xenstored
 * and real tasks; every version of the file must pass promtool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_daemon.h"
#include "xlrt_prom.h"

/* This suite's uids: 9340000-9379999 (of 9300000-9399999). */
#define BASE 9340000u
#define WAIT_MS 30000u

typedef struct {
    char *dir, *config, *sock, *prom;
    xlrt_xs xs;
    xlrt_daemon dm;
    bool stopped;
} fixture;

static char *write_config(fixture *f, const char *metrics)
{
    char *text, *path;

    assert_true(asprintf(&text,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "sweep_interval_s = 1\nmetrics_file = \"%s\"\n",
                         BASE, f->dir, metrics) > 0);
    path = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
    return path;
}

/* The file as it is now, or NULL when there is none. */
static char *read_metrics(const fixture *f)
{
    int fd = open(f->prom, O_RDONLY | O_CLOEXEC);
    char *text;

    if (fd < 0)
        return NULL;
    text = xlrt_read_to_eof(fd);
    close(fd);
    return text;
}

/* Waits until series has at least want, and returns that version of
 * the file (checked by promtool). */
static char *wait_metric(const fixture *f, const char *series, double want)
{
    char *text = NULL;

    for (unsigned i = 0; i < 3000; i++) {
        free(text);
        text = read_metrics(f);
        if (text && xlrt_prom_has(text, series) &&
            xlrt_prom_value(text, series) >= want) {
            xlrt_prom_check(text);
            return text;
        }
        usleep(10000);
    }
    fail_msg("%s never reached %g; the file:\n%s", series, want,
             text ? text : "(none)");
    return NULL;
}

static int group_setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_true(asprintf(&f->prom, "%s/xl-reaper.prom", f->dir) > 0);
    f->config = write_config(f, f->prom);
    assert_true(asprintf(&f->sock, "%s/xs.sock", f->dir) > 0);
    assert_int_equal(xlrt_xs_start(&f->xs, f->sock, NULL), 0);
    assert_int_equal(xlrt_daemon_start(&f->dm, f->dir, f->config, f->sock), 0);
    assert_int_equal(xlrt_daemon_wait_log(&f->dm, "ready:", WAIT_MS), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->dm, "sweep (whole range", 120000), 0);
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *f = *state;

    if (!f)
        return 0;
    if (!f->stopped)
        xlrt_daemon_stop(&f->dm);
    xlrt_daemon_dispose(&f->dm);
    xlrt_xs_kill(&f->xs);
    if (getenv("XLR_KEEP"))
        fprintf(stderr, "test_daemon_metrics: kept %s\n", f->dir);
    else
        xlrt_tmpdir_remove(f->dir);
    free(f->config);
    free(f->sock);
    free(f->prom);
    free(f);
    return 0;
}

/* A task under uid until killed; the nursery reaps it at once, so no
 * zombie of ours holds the uid. */
static void sleeper(void *arg)
{
    uid_t uid = *(uid_t *)arg;

    if (xlrt_become(uid, uid) < 0)
        _exit(1);
    for (;;)
        pause();
}

static pid_t sleeper_start(uid_t *uid)
{
    pid_t n = xlrt_nursery_start(sleeper, uid);

    for (unsigned i = 0; xlrt_kernel_count(*uid) < 1; i++) {
        if (i > 2000)
            fail_msg("the sleeper never ran as uid %lu", (unsigned long)*uid);
        usleep(1000);
    }
    return n;
}

/* At start: the full sweep, no reap yet, every series there. */
static void test_after_start(void **state)
{
    fixture *f = *state;
    char *m = wait_metric(f, "xl_reaper_sweeps_total{kind=\"full\"}", 1);

    assert_int_equal(xlrt_prom_value(m, "xl_reaper_daemon_up"), 1);
    assert_int_equal(xlrt_prom_value(m, "xl_reaper_xenstore_connected"), 1);
    assert_int_equal(xlrt_prom_value(m, "xl_reaper_reaps_total{trigger="
                                        "\"release\",outcome=\"empty\"}"),
                     0);
    assert_true(xlrt_prom_value(m, "xl_reaper_last_sweep_timestamp_seconds") >
                1.7e9);
    assert_int_equal(
        xlrt_prom_value(m, "xl_reaper_release_latency_seconds_count"), 0);
    assert_int_equal(xlrt_prom_value(m, "xl_reaper_uids_pending_retry"), 0);
    free(m);
}

/* A domain dies with a task under its uid: one release reap, verified
 * empty, in the counters and both histograms. */
static void test_release_counted(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 5;
    char *ev, *m, want[64], outcome[32], series[128];
    pid_t n;

    xlrt_daemon_log_mark(&f->dm);
    assert_int_equal(xlrt_xs_cmd(&f->xs, NULL, 0, "add 5 %u", uid), 0);
    snprintf(want, sizeof(want), "domid 5: its DM runs as uid %u", uid);
    assert_int_equal(xlrt_daemon_wait_log(&f->dm, want, WAIT_MS), 0);
    n = sleeper_start(&uid);
    assert_int_equal(xlrt_xs_cmd(&f->xs, NULL, 0, "del 5"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->dm, 5, WAIT_MS, &ev), 0);
    xlrt_json_str(ev, "outcome", outcome, sizeof(outcome));
    free(ev);
    xlrt_nursery_stop(n);

    /* Counted under the outcome its event gives (empty, or zombies if
     * the nursery had not yet reaped the sleeper), and nowhere else. */
    m = wait_metric(f, "xl_reaper_release_latency_seconds_count", 1);
    snprintf(series, sizeof(series),
             "xl_reaper_reaps_total{trigger=\"release\",outcome=\"%s\"}",
             outcome);
    assert_int_equal(xlrt_prom_value(m, series), 1);
    assert_int_equal(xlrt_prom_value(m, "xl_reaper_reaps_total{trigger="
                                        "\"release\",outcome=\"empty\"}") +
                         xlrt_prom_value(m, "xl_reaper_reaps_total{trigger="
                                            "\"release\",outcome="
                                            "\"zombies\"}"),
                     1);
    assert_int_equal(xlrt_prom_value(m, "xl_reaper_reaps_total{trigger="
                                        "\"release\",outcome=\"error\"}"),
                     0);
    assert_int_equal(
        xlrt_prom_value(m, "xl_reaper_reap_duration_seconds_count{trigger="
                           "\"release\"}"),
        1);
    /* A reap here takes milliseconds, not 10 s. */
    assert_int_equal(
        xlrt_prom_value(m, "xl_reaper_reap_duration_seconds_bucket{trigger="
                           "\"release\",le=\"10\"}"),
        1);
    assert_true(xlrt_prom_value(m, "xl_reaper_release_latency_seconds_sum") >
                0);
    free(m);
}

/* A task under the uid of a domid xenstore never had: a sweep finds it
 * and reaps it, and says how many tasks it saw. */
static void test_sweep_leftover_counted(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 9;
    char *ev, *m, trig[32], outcome[32], series[128];
    pid_t n;

    n = sleeper_start(&uid);
    assert_int_equal(xlrt_daemon_wait_event(&f->dm, 9, WAIT_MS, &ev), 0);
    xlrt_json_str(ev, "trigger", trig, sizeof(trig));
    xlrt_json_str(ev, "outcome", outcome, sizeof(outcome));
    free(ev);
    xlrt_nursery_stop(n);
    /* Counted as its event says (zombies: the nursery had not yet
     * reaped the sleeper when the reap looked). */
    assert_true(!strcmp(trig, "sweep") || !strcmp(trig, "census"));
    snprintf(series, sizeof(series),
             "xl_reaper_reaps_total{trigger=\"%s\",outcome=\"%s\"}", trig,
             outcome);
    m = wait_metric(f, series, 1);
    assert_true(xlrt_prom_value(m, "xl_reaper_dead_uid_tasks_found_total") >=
                1);
    free(m);
}

/* Rewritten every sweep (1 s here): a reader polling the file never
 * finds it missing or cut short. */
static void test_reader_sees_whole_files(void **state)
{
    fixture *f = *state;
    uint64_t end = xlrt_now_us() + 3500000u;
    unsigned reads = 0, versions = 0;
    char *last = NULL;

    while (xlrt_now_us() < end) {
        char *m = read_metrics(f);

        if (!m)
            fail_msg("%s missing after %u reads", f->prom, reads);
        /* The last family the daemon writes, whole. */
        if (!strstr(m, "\nxl_reaper_uids_pending_retry ") ||
            m[strlen(m) - 1] != '\n')
            fail_msg("a partial file after %u reads:\n%s", reads, m);
        if (!last || strcmp(last, m)) {
            xlrt_prom_check(m);
            versions++;
        }
        free(last);
        last = m;
        reads++;
    }
    free(last);
    /* Several rewrites were seen, or this proved nothing. */
    assert_true(versions >= 3);
}

/* A metrics_file that cannot be written: said once, and reaping goes
 * on; back to a good one, said again. */
static void test_unwritable_file(void **state)
{
    fixture *f = *state;
    char *bad, *ev, *good;
    uid_t uid = BASE + 11;
    pid_t n;

    assert_true(asprintf(&bad, "%s/no-such-dir/xl-reaper.prom", f->dir) > 0);
    free(write_config(f, bad));
    xlrt_daemon_log_mark(&f->dm);
    assert_int_equal(xlrt_daemon_hup(&f->dm), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->dm, "no such directory", WAIT_MS), 0);
    n = sleeper_start(&uid);
    assert_int_equal(xlrt_daemon_wait_event(&f->dm, 11, WAIT_MS, &ev), 0);
    free(ev);
    xlrt_nursery_stop(n);

    good = write_config(f, f->prom);
    free(good);
    assert_int_equal(xlrt_daemon_hup(&f->dm), 0);
    assert_int_equal(xlrt_daemon_wait_log(&f->dm, "written again", WAIT_MS),
                     0);
    free(wait_metric(f, "xl_reaper_daemon_up", 1));
    free(bad);
}

/* A clean stop says so: the file stays, and reads "down". */
static void test_stop_says_down(void **state)
{
    fixture *f = *state;
    char *m;
    int st = xlrt_daemon_stop(&f->dm);

    f->stopped = true;
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    m = read_metrics(f);
    assert_non_null(m);
    xlrt_prom_check(m);
    assert_int_equal(xlrt_prom_value(m, "xl_reaper_daemon_up"), 0);
    assert_true(xlrt_prom_value(m, "xl_reaper_reaps_total{trigger="
                                   "\"release\",outcome=\"empty\"}") +
                    xlrt_prom_value(m, "xl_reaper_reaps_total{trigger="
                                       "\"release\",outcome=\"zombies\"}") >=
                1);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_after_start),
        cmocka_unit_test(test_release_counted),
        cmocka_unit_test(test_sweep_leftover_counted),
        cmocka_unit_test(test_reader_sees_whole_files),
        cmocka_unit_test(test_unwritable_file),
        cmocka_unit_test(test_stop_says_down),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
