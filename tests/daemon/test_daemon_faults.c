/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon_faults.c - xl-reaperd when things fail: a second daemon,
 * SIGKILL at each phase of a reap, a full disk for the events and the
 * metrics, xenstored killed and restarted, no xenstored at all.  The
 * real daemon against fake_xenstored, real tasks under the uids of
 * this suite (5300000 + domid).  Asserted: nothing lost, nothing
 * doubled, no torn line, the metrics right within one timer period.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_dfix.h"
#include "xlrt_kcount.h"
#include "xlrt_prom.h"

#define BASE 5300000u
#define WAIT_MS 30000u
/* XLRD_METRICS_PERIOD_S, and a second for the loop's turn. */
#define METRICS_PERIOD_MS 6000u

typedef struct {
    xlrt_dfix d;
    char *small, *events, *prom;
    int lfd;
    bool mounted;
    pid_t holder; /* a thread holder: kill(-1) cannot end it */
} fixture;

/* The config, with the metrics at f->prom (which a scenario moves). */
static void write_config(fixture *f)
{
    char *extra;

    assert_true(asprintf(&extra,
                         "lock_timeout_ms = 60000\nreap_timeout_ms = 2000\n"
                         "sweep_interval_s = 3600\nmetrics_file = \"%s\"\n",
                         f->prom) > 0);
    xlrt_dfix_write_config(&f->d, BASE, extra);
    free(extra);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->lfd = -1;
    /* The clean-up's ctx needs no metrics file. */
    xlrt_dfix_setup(&f->d, BASE,
                    "lock_timeout_ms = 60000\nreap_timeout_ms = 2000\n"
                    "sweep_interval_s = 3600\nmetrics_file = \"\"\n");
    assert_true(asprintf(&f->small, "%s/small", f->d.dir) > 0);
    assert_true(asprintf(&f->events, "%s/events", f->d.dir) > 0);
    assert_true(asprintf(&f->prom, "%s/xl-reaper.prom", f->d.dir) > 0);
    write_config(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    if (f->lfd >= 0)
        close(f->lfd);
    /* Stopped here too when the test failed half way: it keeps every
     * descriptor it inherited (the suite runner's lock). */
    if (f->holder > 0)
        xlrt_bystander_stop(f->holder);
    xlrt_daemon_dispose(&f->d.dm);
    if (f->mounted)
        umount2(f->small, MNT_DETACH);
    xlrt_dfix_teardown(&f->d, 1, 60);
    free(f->small);
    free(f->events);
    free(f->prom);
    free(f);
    return 0;
}

static void daemon_start(fixture *f)
{
    xlrt_dfix_start(&f->d, NULL, f->events);
}

static void daemon_up(fixture *f)
{
    xlrt_dfix_up(&f->d, NULL, f->events);
    xlrt_dfix_wait_swept(&f->d);
}

static void lock_hold(fixture *f)
{
    char *path;

    assert_true(asprintf(&path, "%s/lock", f->d.dir) > 0);
    f->lfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    free(path);
    assert_true(f->lfd >= 0);
    assert_int_equal(flock(f->lfd, LOCK_EX), 0);
}

static void lock_let_go(fixture *f)
{
    close(f->lfd);
    f->lfd = -1;
}

static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *t;

    if (fd < 0)
        return NULL;
    t = xlrt_read_to_eof(fd);
    close(fd);
    return t;
}

/* Every line of the events file whole: it ends with a newline, and each
 * line is one JSON object with a domid.  Returns the number of lines. */
static unsigned assert_whole_lines(const fixture *f)
{
    char *text = slurp(f->events), *save = NULL;
    unsigned n = 0;

    assert_non_null(text);
    if (*text && text[strlen(text) - 1] != '\n')
        fail_msg("the events file ends in a cut line:\n%s", text);
    for (char *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save), n++)
        if (xlrt_json_int(l, "domid") < 1)
            fail_msg("a line that is not a whole event: %s", l);
    free(text);
    return n;
}

/* Each of domids first..last has exactly one event in the whole file. */
static void assert_once(fixture *f, uint32_t first, uint32_t last)
{
    size_t from = f->d.dm.events_from;

    f->d.dm.events_from = 0;
    for (uint32_t d = first; d <= last; d++) {
        unsigned n = xlrt_daemon_count_events(&f->d.dm, d);
        if (n != 1)
            fail_msg("domid %u: %u events, want exactly 1", d, n);
    }
    f->d.dm.events_from = from;
}

/* Waits until the metrics file has series == want, within ms. */
static void wait_metric(const fixture *f, const char *series, double want,
                        unsigned ms)
{
    char *text = NULL;

    for (unsigned i = 0; i <= ms / 10; i++) {
        free(text);
        text = slurp(f->prom);
        if (text && xlrt_prom_has(text, series) &&
            xlrt_prom_value(text, series) == want) {
            xlrt_prom_check(text);
            free(text);
            return;
        }
        usleep(10000);
    }
    fail_msg("%s never became %g within %u ms; the file:\n%s", series, want,
             ms, text ? text : "(none)");
}

/* ---------- one daemon ---------- */

/* A second daemon on the same run directory refuses to start, and says
 * which pid holds it; the first goes on. */
static void test_one_daemon(void **state)
{
    fixture *f = *state;
    xlrt_daemon second;
    char want[96];
    int st;

    daemon_up(f);
    assert_int_equal(xlrt_daemon_start_events(&second, "bin/xl-reaperd",
                                              f->d.dir, f->d.config, f->d.sock,
                                              f->events),
                     0);
    assert_int_equal(waitpid(second.pid, &st, 0), second.pid);
    second.pid = -1;
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    snprintf(want, sizeof(want), "another xl-reaperd (pid %ld) runs",
             (long)f->d.dm.pid);
    assert_int_equal(xlrt_daemon_wait_log(&second, want, 1000), 0);
    xlrt_daemon_dispose(&second);
    /* The first still reaps. */
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 1"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 1: a new domain", WAIT_MS), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 1"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 1, WAIT_MS, NULL), 0);
    assert_once(f, 1, 1);
}

/* ---------- SIGKILL at each phase of a reap ---------- */

/* Its event: the reap of the death, finished by the next run. */
static void assert_recovered(fixture *f, uint32_t domid, const char *outcome)
{
    char *ev, buf[32];

    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, domid, WAIT_MS, &ev), 0);
    xlrt_json_str(ev, "trigger", buf, sizeof(buf));
    if (strcmp(buf, "release") || !xlrt_json_bool(ev, "recovered"))
        fail_msg("domid %u: want the release's event, recovered: %s", domid,
                 ev);
    xlrt_json_str(ev, "outcome", buf, sizeof(buf));
    if (!strstr(outcome, buf) || !*buf)
        fail_msg("domid %u: outcome %s, want %s: %s", domid, buf, outcome, ev);
    free(ev);
}

/* Killed while it waits for the lock (the test holds it): the next run
 * reaps the death and reports it, once. */
static void test_killed_waiting_for_lock(void **state)
{
    fixture *f = *state;
    pid_t task;

    daemon_up(f);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 11"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 11: a new domain", WAIT_MS), 0);
    task = xlrt_bystander_start(BASE + 11);
    lock_hold(f);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 11"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 11 died: taking", WAIT_MS), 0);
    xlrt_daemon_kill(&f->d.dm);
    lock_let_go(f);
    assert_true(xlrt_alive(task));

    daemon_up(f);
    /* Our own child: a zombie until we reap it. */
    assert_recovered(f, 11, "empty|zombies");
    xlrt_bystander_stop(task);
    assert_int_equal(xlrt_kernel_count(BASE + 11), 0);
    assert_once(f, 11, 11);
    assert_whole_lines(f);
}

/* Killed while it holds the lock, in the reap of a uid that a thread
 * kill(-1) cannot reach keeps busy: the next run reaps it again and
 * reports it once (tasks remain: said). */
static void test_killed_holding_lock(void **state)
{
    fixture *f = *state;

    daemon_up(f);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 12"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 12: a new domain", WAIT_MS), 0);
    f->holder = xlrt_thread_holder_start(BASE + 12);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 12"), 0);
    assert_int_equal(xlrt_daemon_wait_log(
                         &f->d.dm, "domid 12: reaping its DM uid", WAIT_MS),
                     0);
    xlrt_daemon_kill(&f->d.dm);
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 12), 0);

    daemon_up(f);
    assert_recovered(f, 12, "remain");
    assert_once(f, 12, 12);
    xlrt_bystander_stop(f->holder);
    f->holder = 0;
    assert_whole_lines(f);
}

/* The reaper uid busy at start: a run killed while it reaped left its
 * killer under the reaper uid (this host's init reaps such orphans
 * every 2 s; here a zombie of ours stands for it), and a death waits
 * from the run before.  The next run waits for the reaper uid to be
 * empty before it reaps, and reports the death once, reaped; it used
 * to reap at once, be refused ("the reaper uid runs 1 task"), and
 * report that as the death's one event. */
static void test_reaper_uid_busy_at_start(void **state)
{
    fixture *f = *state;
    char *ev, buf[48];
    pid_t zombie;
    int st;

    daemon_up(f);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 14"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 14: a new domain", WAIT_MS), 0);
    xlrt_daemon_kill(&f->d.dm);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 14"), 0);

    zombie = fork();
    assert_true(zombie >= 0);
    if (zombie == 0) {
        _exit(xlrt_become(BASE, BASE) < 0);
    }
    while (xlrt_kernel_count(BASE) != 1)
        usleep(1000);
    daemon_start(f);
    usleep(1000000);
    assert_int_equal(waitpid(zombie, &st, 0), zombie);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 14, WAIT_MS, &ev), 0);
    xlrt_json_str(ev, "result", buf, sizeof(buf));
    if (strcmp(buf, "ok"))
        fail_msg("domid 14: reaped while the reaper uid was busy: %s", ev);
    xlrt_json_str(ev, "outcome", buf, sizeof(buf));
    assert_string_equal(buf, "empty");
    free(ev);
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm,
                                          "the reaper uid 5300000 "
                                          "has tasks",
                                          0),
                     0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "sweep (whole range", 120000), 0);
    assert_once(f, 14, 14);
    assert_whole_lines(f);
}

/* ---------- a full disk ---------- */

/* A tmpfs of 64 KiB of our own at f->small, for the events and the
 * metrics. */
static void small_fs(fixture *f)
{
    assert_int_equal(mkdir(f->small, 0700), 0);
    if (mount("xlrt-small", f->small, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=64k,mode=0700") < 0) {
        fprintf(stderr, "cannot mount a tmpfs here: %s\n", strerror(errno));
        skip();
    }
    f->mounted = true;
    free(f->events);
    free(f->prom);
    assert_true(asprintf(&f->events, "%s/events", f->small) > 0);
    assert_true(asprintf(&f->prom, "%s/xl-reaper.prom", f->small) > 0);
    write_config(f);
}

/* Fills the small tmpfs to its last page.  Twice: a metrics file the
 * daemon was replacing meanwhile frees the old one's pages after the
 * rename. */
static void fill(fixture *f)
{
    char *path, buf[4096];
    int fd;

    memset(buf, 'x', sizeof(buf));
    assert_true(asprintf(&path, "%s/filler", f->small) > 0);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    free(path);
    assert_true(fd >= 0);
    for (unsigned round = 0; round < 2; round++) {
        if (round)
            usleep(500000);
        while (write(fd, buf, sizeof(buf)) > 0)
            ;
        while (write(fd, buf, 1) > 0)
            ;
        assert_int_equal(errno, ENOSPC);
    }
    close(fd);
}

static void unfill(fixture *f)
{
    char *path;

    assert_true(asprintf(&path, "%s/filler", f->small) > 0);
    assert_int_equal(unlink(path), 0);
    free(path);
}

/* Domains first..last die one by one on a full filesystem: each event
 * is logged, and some could not be written (queued). */
static void deaths(fixture *f, uint32_t first, uint32_t last)
{
    size_t from = f->d.dm.log_seen;

    for (uint32_t d = first; d <= last; d++) {
        char want[64];

        snprintf(want, sizeof(want), "\"event\":\"reap\",\"domid\":%u,", d);
        assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del %u", d), 0);
        assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, want, WAIT_MS), 0);
    }
    /* Said once, when the first line did not fit: somewhere above. */
    f->d.dm.log_seen = from;
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, "queued in memory", 1000),
                     0);
}

/* The events file and the metrics file on a full filesystem: events
 * wait in memory and are written, whole, once there is room; the
 * metrics file keeps its last whole version and is right within one
 * timer period after; a daemon killed with an event still queued (after
 * the kill, before the event) has it written by the next run, once. */
static void test_full_disk(void **state)
{
    fixture *f = *state;

    small_fs(f);
    daemon_up(f);
    for (uint32_t d = 21; d <= 60; d++)
        assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add %u", d), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 60: a new domain", WAIT_MS), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 21"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 21, WAIT_MS, NULL), 0);

    /* Full: the next lines fill the events file's last page (a line is
     * about 400 bytes), and then they do not fit. */
    fill(f);
    deaths(f, 22, 41);
    if (assert_whole_lines(f) >= 21)
        fail_msg("every event was written on a full filesystem: the test "
                 "did not fill it");
    /* Room again: the queue is written, in order, each line once. */
    unfill(f);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 41, 5000, NULL), 0);
    assert_once(f, 21, 41);
    assert_whole_lines(f);
    wait_metric(f, "xl_reaper_events_queued", 0, METRICS_PERIOD_MS);
    wait_metric(f, "xl_reaper_events_written_total", 21, METRICS_PERIOD_MS);
    wait_metric(f, "xl_reaper_events_dropped_total", 0, METRICS_PERIOD_MS);

    /* Full again, deaths, and the daemon killed with events queued:
     * after the kill, before the event. */
    fill(f);
    deaths(f, 42, 60);
    xlrt_daemon_kill(&f->d.dm);
    if (assert_whole_lines(f) >= 40)
        fail_msg("every event was written on a full filesystem: the test "
                 "did not fill it");
    unfill(f);
    xlrt_daemon_dispose(&f->d.dm);
    daemon_up(f);
    f->d.dm.events_from = 0;
    for (uint32_t d = 42; d <= 60; d++)
        assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, d, WAIT_MS, NULL),
                         0);
    assert_once(f, 21, 60);
    assert_whole_lines(f);
    wait_metric(f, "xl_reaper_events_queued", 0, METRICS_PERIOD_MS);
}

/* ---------- xenstored ---------- */

/* xenstored dies: the metrics say so within a timer period; a domain
 * dies while it is gone; xenstored comes back: that death is reaped,
 * once, and the metrics say connected again. */
static void test_xenstored_killed(void **state)
{
    fixture *f = *state;
    const char *initial[] = { "32", NULL };
    pid_t task;

    daemon_up(f);
    wait_metric(f, "xl_reaper_xenstore_connected", 1, METRICS_PERIOD_MS);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 31"), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 32"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 32: a new domain", WAIT_MS), 0);
    task = xlrt_bystander_start(BASE + 31);

    xlrt_xs_kill(&f->d.xs);
    wait_metric(f, "xl_reaper_xenstore_connected", 0, METRICS_PERIOD_MS);
    wait_metric(f, "xl_reaper_daemon_up", 1, 0);
    /* 31 died while xenstored was away: the new one never knew it. */
    assert_int_equal(xlrt_xs_start(&f->d.xs, f->d.sock, initial), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 31, WAIT_MS, NULL), 0);
    wait_metric(f, "xl_reaper_xenstore_connected", 1, METRICS_PERIOD_MS);
    {
        int st;
        /* Our own child, killed by the daemon. */
        assert_int_equal(waitpid(task, &st, 0), task);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    }
    assert_once(f, 31, 31);
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 32), 0);
}

/* No xenstored at all: the metrics file is there from the first second
 * and says so, and is rewritten on its timer. */
static void test_no_xenstored(void **state)
{
    fixture *f = *state;
    char *a, *b;

    xlrt_xs_kill(&f->d.xs);
    daemon_start(f);
    wait_metric(f, "xl_reaper_xenstore_connected", 0, 1500);
    wait_metric(f, "xl_reaper_daemon_up", 1, 0);
    a = slurp(f->prom);
    assert_non_null(a);
    usleep(METRICS_PERIOD_MS * 1000u);
    b = slurp(f->prom);
    assert_non_null(b);
    if (xlrt_prom_value(b, "xl_reaper_metrics_timestamp_seconds") <=
        xlrt_prom_value(a, "xl_reaper_metrics_timestamp_seconds"))
        fail_msg("the metrics file was not rewritten in %u ms without "
                 "xenstored",
                 METRICS_PERIOD_MS);
    free(a);
    free(b);
    assert_int_equal(xlrt_daemon_stop(&f->d.dm), 0);
    wait_metric(f, "xl_reaper_daemon_up", 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_waiting_for_lock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_killed_holding_lock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reaper_uid_busy_at_start, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_full_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xenstored_killed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_xenstored, setup, teardown),
    };
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon_faults: needs root\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
