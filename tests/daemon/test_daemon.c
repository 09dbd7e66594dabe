/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon.c - the real xl-reaperd against fake_xenstored, with real
 * fork racers under uids of this suite's block (5000000 + domid).
 *
 * One daemon serves the group; the scenarios use domids of their own and
 * assert outcomes (events, the kernel's count by our own probe, who is
 * still alive), never durations: waits are bounded only to turn a hang
 * into a failure.  Racers run in a nursery, so that their zombies are
 * reaped at once, as a healthy init would.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_dfix.h"

#define BASE 5000000u
#define WAIT_MS 30000u

typedef struct {
    xlrt_dfix d;
    int lfd; /* the reaper lock, when a scenario holds it */
} fixture;

/* No metrics file: the default one may be a real collector's. */
static const char config_extra[] = "lock_timeout_ms = 60000\n"
                                   "sweep_interval_s = 3600\n"
                                   "metrics_file = \"\"\n";

/* ---------- device models ---------- */

/* Under uid, stops whatever enters it: the daemon's census probes. */
typedef struct {
    uid_t uid;
    int ready_fd;
} stopper_args;

static void stopper_main(void *arg)
{
    const stopper_args *a = arg;

    if (xlrt_become(a->uid, a->uid) < 0)
        _exit(1);
    (void)!write(a->ready_fd, "R", 1);
    for (;;)
        kill(-1, SIGSTOP);
}

/* An event of a reap that killed and verified: no live task left. */
static void assert_reaped(const char *ev, uint32_t domid, const char *trig)
{
    char buf[32];

    assert_int_equal(xlrt_json_int(ev, "domid"), domid);
    assert_int_equal(xlrt_json_int(ev, "uid"), BASE + domid);
    xlrt_json_str(ev, "trigger", buf, sizeof(buf));
    /* The census after a release is a sweep by /proc alone. */
    if (strcmp(buf, trig) &&
        !((!strcmp(trig, "sweep") || !strcmp(trig, "release|census")) &&
          !strcmp(buf, "census")) &&
        !(!strcmp(trig, "release|census") && !strcmp(buf, "release")))
        fail_msg("domid %u: trigger %s, want %s", domid, buf, trig);
    if (strcmp(xlrt_json_str(ev, "result", buf, sizeof(buf)), "ok"))
        fail_msg("domid %u: result %s: %s", domid, buf, ev);
    xlrt_json_str(ev, "outcome", buf, sizeof(buf));
    if (strcmp(buf, "empty") && strcmp(buf, "zombies"))
        fail_msg("domid %u: outcome %s: %s", domid, buf, ev);
    assert_int_equal(xlrt_json_array_len(ev, "live"), 0);
    assert_int_equal(xlrt_json_array_len(ev, "stuck"), 0);
}

/* ---------- fixture ---------- */

static int group_setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    xlrt_dfix_setup(&f->d, BASE, config_extra);
    xlrt_dfix_up(&f->d, NULL, NULL);
    /* Deaths before the start sweep ends may be found by the sweep
     * first; the scenarios want the release path. */
    xlrt_dfix_wait_swept(&f->d);
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    fixture *f = *state;
    xlreaper_reap_result res;
    xlreaper_ctx *moved;
    char *cfg;
    int st;

    if (!f)
        return 0; /* the setup failed */

    st = xlrt_daemon_stop(&f->d.dm);
    /* test_sighup's racer ran in the moved range. */
    cfg = xlrt_dfix_config_text(&f->d, BASE + 100000, config_extra);
    moved = xlrt_ctx(f->d.dir, cfg);
    free(cfg);
    if (xlrt_kernel_count(BASE + 100000 + 52) != 0) {
        xlreaper_reap_result_init(&res);
        xlreaper_reap(moved, NULL, 52, &res);
        xlreaper_reap_result_dispose(&res);
    }
    xlreaper_ctx_free(moved);
    /* XLR_KEEP=1 keeps the daemon's log and events for a post-mortem. */
    xlrt_dfix_teardown(&f->d, 1, 70);
    free(f);
    /* SIGTERM is a clean stop: exit status 0. */
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}

/* Each scenario looks only at what happens after it starts. */
static int mark(void **state)
{
    fixture *f = *state;

    xlrt_daemon_log_mark(&f->d.dm);
    f->lfd = -1;
    return 0;
}

/* A failed scenario must not leave the daemon waiting for our lock. */
static int unlock(void **state)
{
    fixture *f = *state;

    if (f->lfd >= 0)
        close(f->lfd);
    f->lfd = -1;
    return 0;
}

/* ---------- scenarios ---------- */

/* A domain dies with a fork racer under its uid: reaped and verified;
 * the DM of a live domain is untouched. */
static void test_death_with_racer(void **state)
{
    fixture *f = *state;
    pid_t racer, bystander;
    char *ev;

    xlrt_daemon_log_mark(&f->d.dm);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 1 %u", BASE + 1), 0);
    /* Learnt while the domain lives: libxl removes it before the death. */
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 1: its DM runs as uid 5000001",
                             WAIT_MS),
        0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 2 %u", BASE + 2), 0);
    racer = xlrt_racer_start(BASE + 1);
    bystander = xlrt_bystander_start(BASE + 2);

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 1"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 1, WAIT_MS, &ev), 0);
    assert_reaped(ev, 1, "release");
    /* The kernel counted the racer before the kill: it was killed. */
    assert_int_equal(xlrt_json_int(ev, "xs_kill_uid"), BASE + 1);
    free(ev);
    xlrt_wait_count(BASE + 1, 0);

    assert_true(xlrt_alive(bystander));
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 2), 0);
    xlrt_bystander_stop(bystander);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 2"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 2, WAIT_MS, &ev), 0);
    assert_true(xlrt_json_bool(ev, "was_empty"));
    free(ev);
    xlrt_racer_stop(&f->d, racer, 1);
}

/* Ten domains die at once (one @releaseDomain): every uid is reaped. */
static void test_ten_at_once(void **state)
{
    fixture *f = *state;
    pid_t racers[4], sleepers[6];
    char line[256] = "del";

    for (uint32_t d = 11; d <= 20; d++) {
        assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add %u", d), 0);
        snprintf(line + strlen(line), sizeof(line) - strlen(line), " %u", d);
    }
    for (unsigned i = 0; i < 4; i++)
        racers[i] = xlrt_racer_start(BASE + 11 + i);
    for (unsigned i = 0; i < 6; i++)
        sleepers[i] = xlrt_bystander_start(BASE + 15 + i);

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "%s", line), 0);
    for (uint32_t d = 11; d <= 20; d++) {
        char *ev;
        assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, d, WAIT_MS, &ev), 0);
        assert_reaped(ev, d, "release");
        free(ev);
    }
    for (unsigned i = 0; i < 6; i++) {
        int st;
        /* Our own children: killed by the daemon, reaped by us. */
        assert_int_equal(waitpid(sleepers[i], &st, 0), sleepers[i]);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    }
    for (uint32_t d = 11; d <= 20; d++)
        xlrt_wait_count(BASE + d, 0);
    for (unsigned i = 0; i < 4; i++)
        xlrt_racer_stop(&f->d, racers[i], 11 + i);
}

/* Runs `xl-reaper spawn --reap-stale DOMID -- /bin/sleep 600` as our
 * child: it takes the lock, reaps leftovers and execs in place. */
static pid_t spawn_dm(fixture *f, uint32_t domid)
{
    char prog[512], d[16];
    pid_t pid;

    snprintf(prog, sizeof(prog), "%s/bin/xl-reaper", xlrt_build_dir());
    snprintf(d, sizeof(d), "%u", domid);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl(prog, prog, "--config", f->d.config, "spawn", "--reap-stale", d,
              "--", "/bin/sleep", "600", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Waits until pid runs comm under uid: the spawn exec'd. */
static void wait_exec(pid_t pid, uid_t uid, const char *comm)
{
    char path[64], buf[4096];

    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    for (unsigned i = 0;; i++) {
        FILE *fp = fopen(path, "re");
        size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
        char want_name[64], want_uid[64];

        if (fp)
            fclose(fp);
        buf[n] = '\0';
        snprintf(want_name, sizeof(want_name), "Name:\t%s\n", comm);
        snprintf(want_uid, sizeof(want_uid), "Uid:\t%lu\t",
                 (unsigned long)uid);
        if (strstr(buf, want_name) && strstr(buf, want_uid))
            return;
        if (!xlrt_alive(pid) || i >= 10000)
            fail_msg("pid %ld never ran %s as uid %lu", (long)pid, comm,
                     (unsigned long)uid);
        usleep(1000);
    }
}

/* A domid is reused at once, racing the daemon: the new DM survives and
 * the old domain's tasks die, whoever of the daemon and the spawn gets
 * the lock first.  "reuse" is a death and a birth between two of the
 * daemon's requests; "del" then "add" leaves the daemon time to see the
 * domid dead. */
static void test_domid_reused(void **state)
{
    fixture *f = *state;
    const char *how[] = { "reuse", "del", "del" };

    for (unsigned round = 0; round < 3; round++) {
        uint32_t domid = 21 + round;
        pid_t racer, dm;
        int st;
        char born[40], reaped[48];

        snprintf(born, sizeof(born), "domid %u: a new domain", domid);
        assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add %u", domid), 0);
        /* Known to the daemon before it dies, as a real domain is. */
        assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, born, WAIT_MS), 0);
        racer = xlrt_racer_start(BASE + domid);
        if (!strcmp(how[round], "reuse")) {
            assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "reuse %u", domid),
                             0);
        } else {
            if (round == 2) /* wait until the daemon has reaped it */
                xlrt_daemon_log_mark(&f->d.dm);
            assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del %u", domid),
                             0);
            if (round == 2)
                assert_int_equal(
                    xlrt_daemon_wait_event(&f->d.dm, domid, WAIT_MS, NULL), 0);
            assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add %u", domid),
                             0);
        }
        dm = spawn_dm(f, domid);
        /* Once the spawn has exec'd the DM, only the DM is left: the
         * racer is dead. */
        wait_exec(dm, BASE + domid, "sleep");
        xlrt_wait_count(BASE + domid, 1);
        assert_true(xlrt_alive(dm));
        assert_int_equal(waitpid(dm, &st, WNOHANG), 0);
        kill(dm, SIGKILL); /* our own child */
        assert_int_equal(waitpid(dm, &st, 0), dm);
        xlrt_racer_stop(&f->d, racer, domid);
        xlrt_wait_count(BASE + domid, 0);
        /* The next round, and the next scenario, start once the daemon
         * has handled this death: one still pending would take the lock
         * that they hold, or reap beside them. */
        xlrt_daemon_log_mark(&f->d.dm);
        assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del %u", domid), 0);
        snprintf(reaped, sizeof(reaped), "\"event\":\"reap\",\"domid\":%u,",
                 domid);
        assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, reaped, WAIT_MS), 0);
    }
}

/* A task under uid that does not hold our lock descriptor (a fork
 * would share its flock). */
static pid_t stock_dm_start(fixture *f, uid_t uid)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        if (f->lfd >= 0)
            close(f->lfd);
        if (xlrt_become(uid, uid) < 0)
            _exit(1);
        /* After the switch, which clears it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    return pid;
}

/* A DM started by stock libxl takes no lock.  The daemon decides that
 * domid 25 is dead, then waits for the lock (the test holds it); the
 * domid is reused meanwhile and a DM starts in its uid without the lock:
 * the daemon asks again under the lock and leaves the new DM alone. */
static void test_reuse_stock_dm(void **state)
{
    fixture *f = *state;
    char *lockpath;
    pid_t dm;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 25"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 25: a new domain", WAIT_MS), 0);
    assert_true(asprintf(&lockpath, "%s/lock", f->d.dir) > 0);
    f->lfd = open(lockpath, O_RDWR | O_CLOEXEC);
    free(lockpath);
    assert_true(f->lfd >= 0);
    assert_int_equal(flock(f->lfd, LOCK_EX), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 25"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 25 died: taking", WAIT_MS), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 25"), 0);
    dm = stock_dm_start(f, BASE + 25);
    unlock(state);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 25: alive again", WAIT_MS), 0);
    assert_true(xlrt_alive(dm));
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 25), 0);
    xlrt_bystander_stop(dm);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 25"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 25, WAIT_MS, NULL), 0);
}

/* A domain is born and dies while the daemon is busy (here: waiting for
 * the lock), so that it never lists it alive: the census after the
 * release finds the racer it left. */
static void test_born_and_dead_unseen(void **state)
{
    fixture *f = *state;
    char *lockpath, *ev;
    pid_t racer;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 26"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 26: a new domain", WAIT_MS), 0);
    /* Its DM first: a nursery would share the lock taken below. */
    racer = xlrt_racer_start(BASE + 27);
    assert_true(asprintf(&lockpath, "%s/lock", f->d.dir) > 0);
    f->lfd = open(lockpath, O_RDWR | O_CLOEXEC);
    free(lockpath);
    assert_true(f->lfd >= 0);
    assert_int_equal(flock(f->lfd, LOCK_EX), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 26"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 26 died: taking", WAIT_MS), 0);
    /* 27 lives and dies while the daemon waits. */
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 27"), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 27"), 0);
    unlock(state);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 27, WAIT_MS, &ev), 0);
    assert_reaped(ev, 27, "census");
    free(ev);
    xlrt_wait_count(BASE + 27, 0);
    xlrt_racer_stop(&f->d, racer, 27);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 26, WAIT_MS, NULL), 0);
}

/* The daemon is killed while a reap is under way (here: waiting for the
 * lock, which the test holds); the restarted daemon finishes the job
 * (the death's intent record), and spares the DM of a live domain. */
static void test_killed_mid_reap(void **state)
{
    fixture *f = *state;
    pid_t racer, bystander;
    char *lockpath, *ev;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 31"), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 32"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 32: a new domain", WAIT_MS), 0);
    racer = xlrt_racer_start(BASE + 31);
    bystander = xlrt_bystander_start(BASE + 32);

    assert_true(asprintf(&lockpath, "%s/lock", f->d.dir) > 0);
    f->lfd = open(lockpath, O_RDWR | O_CLOEXEC);
    assert_true(f->lfd >= 0);
    assert_int_equal(flock(f->lfd, LOCK_EX), 0);
    xlrt_daemon_log_mark(&f->d.dm);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 31"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "domid 31 died: taking", WAIT_MS), 0);
    xlrt_daemon_kill(&f->d.dm);
    unlock(state);
    free(lockpath);
    /* Nobody reaped it: the racer lives on. */
    assert_true(xlrt_kernel_count(BASE + 31) >= 1);

    xlrt_daemon_dispose(&f->d.dm);
    xlrt_dfix_up(&f->d, NULL, NULL);
    /* The death's own reap, finished by the next run (its intent
     * record), not a sweep's find. */
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 31, WAIT_MS, &ev), 0);
    assert_reaped(ev, 31, "release");
    assert_true(xlrt_json_bool(ev, "recovered"));
    free(ev);
    xlrt_wait_count(BASE + 31, 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "sweep (whole range", WAIT_MS), 0);
    assert_true(xlrt_alive(bystander));
    xlrt_bystander_stop(bystander);
    xlrt_racer_stop(&f->d, racer, 31);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 32"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 32, WAIT_MS, NULL), 0);
}

/* A dead domain's uid holds a task that stops whatever enters it: the
 * daemon's start-up sweep still finishes, reaps it, and the daemon
 * goes on answering deaths at once. */
static void test_stopper_in_sweep(void **state)
{
    fixture *f = *state;
    stopper_args a = { .uid = BASE + 61 };
    int fds[2];
    pid_t nursery;
    char c, *ev;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 62"), 0);
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    a.ready_fd = fds[1];
    nursery = xlrt_nursery_start(stopper_main, &a);
    close(fds[1]);
    /* Not by the kernel count: its probe would be stopped too. */
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);

    xlrt_daemon_kill(&f->d.dm);
    xlrt_daemon_dispose(&f->d.dm);
    xlrt_dfix_up(&f->d, NULL, NULL);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 61, WAIT_MS, &ev), 0);
    assert_reaped(ev, 61, "sweep");
    free(ev);
    xlrt_wait_count(BASE + 61, 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "sweep (whole range", WAIT_MS), 0);
    /* The loop is not held: the next death is handled at once. */
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 62"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 62, 5000, NULL), 0);
    xlrt_nursery_stop(nursery);
}

/* xenstored dies and comes back (with the domains it had): the daemon
 * reconnects, and the next death is still reaped. */
static void test_xenstored_restart(void **state)
{
    fixture *f = *state;
    const char *initial[] = { "41:5000041", "42", NULL };
    pid_t racer;
    char *ev;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 41 %u", BASE + 41),
                     0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 42"), 0);
    racer = xlrt_racer_start(BASE + 41);

    xlrt_daemon_log_mark(&f->d.dm);
    xlrt_xs_kill(&f->d.xs);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "lost the connection", WAIT_MS), 0);
    assert_int_equal(xlrt_xs_start(&f->d.xs, f->d.sock, initial), 0);
    assert_int_equal(xlrt_daemon_wait_log(&f->d.dm, "reconnected", WAIT_MS),
                     0);

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 41"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 41, WAIT_MS, &ev), 0);
    /* Its release, or the census after the first release the daemon
     * reads once back (both are reaps of a domain found dead). */
    assert_reaped(ev, 41, "release|census");
    free(ev);
    xlrt_wait_count(BASE + 41, 0);
    /* 42 lived through it all and was never reaped. */
    assert_int_equal(xlrt_daemon_count_events(&f->d.dm, 42), 0);
    xlrt_racer_stop(&f->d, racer, 41);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 42"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 42, WAIT_MS, NULL), 0);
}

/* A bad config on SIGHUP is refused and the old one kept (deaths reaped
 * in the old range); a good one is taken (deaths reaped in the new). */
static void test_sighup(void **state)
{
    fixture *f = *state;
    char *bad, *ev;
    pid_t racer;

    /* A range that would move, in a file that does not parse. */
    bad = xlrt_write_file(f->d.dir, "xl-reaper.conf",
                          "dm_uid_base = 5100000\nsweep_interval_s = \n");
    free(bad);
    xlrt_daemon_log_mark(&f->d.dm);
    assert_int_equal(xlrt_daemon_hup(&f->d.dm), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "the config was refused", WAIT_MS), 0);

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 51"), 0);
    racer = xlrt_racer_start(BASE + 51);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 51"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 51, WAIT_MS, &ev), 0);
    assert_reaped(ev, 51, "release"); /* uid BASE + 51: the old range */
    free(ev);
    xlrt_wait_count(BASE + 51, 0);
    xlrt_racer_stop(&f->d, racer, 51);

    /* A good one moves the range. */
    xlrt_dfix_write_config(&f->d, BASE + 100000, config_extra);
    xlrt_daemon_log_mark(&f->d.dm);
    assert_int_equal(xlrt_daemon_hup(&f->d.dm), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "SIGHUP: reloaded", WAIT_MS), 0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 52"), 0);
    racer = xlrt_racer_start(BASE + 100000 + 52);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 52"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, 52, WAIT_MS, &ev), 0);
    assert_int_equal(xlrt_json_int(ev, "uid"), BASE + 100000 + 52);
    free(ev);
    xlrt_wait_count(BASE + 100000 + 52, 0);
    xlrt_nursery_stop(racer); /* counted empty just above */

    xlrt_dfix_write_config(&f->d, BASE, config_extra);
    xlrt_daemon_log_mark(&f->d.dm);
    assert_int_equal(xlrt_daemon_hup(&f->d.dm), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm, "SIGHUP: reloaded", WAIT_MS), 0);
}

/* What xenstore says of a DM's uid is not believed past the range. */
static void test_kill_uid_outside_range(void **state)
{
    fixture *f = *state;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 61 12345"), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->d.dm,
                             "domid 61: device-model-kill-uid 12345 "
                             "is outside the DM uid range",
                             WAIT_MS),
        0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 62 %u", BASE + 63),
                     0);
    assert_int_equal(xlrt_daemon_wait_log(
                         &f->d.dm, "is domid 63's uid, not its own", WAIT_MS),
                     0);
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "del 61 62"), 0);
    for (uint32_t d = 61; d <= 62; d++) {
        char *ev;
        assert_int_equal(xlrt_daemon_wait_event(&f->d.dm, d, WAIT_MS, &ev), 0);
        /* The range's uid was reaped; the node's value is not reported
         * as the DM's. */
        assert_int_equal(xlrt_json_int(ev, "uid"), BASE + d);
        assert_int_equal(xlrt_json_int(ev, "xs_kill_uid"), -1);
        free(ev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_death_with_racer, mark, unlock),
        cmocka_unit_test_setup_teardown(test_ten_at_once, mark, unlock),
        cmocka_unit_test_setup_teardown(test_domid_reused, mark, unlock),
        cmocka_unit_test_setup_teardown(test_reuse_stock_dm, mark, unlock),
        cmocka_unit_test_setup_teardown(test_born_and_dead_unseen, mark,
                                        unlock),
        cmocka_unit_test_setup_teardown(test_kill_uid_outside_range, mark,
                                        unlock),
        cmocka_unit_test_setup_teardown(test_xenstored_restart, mark, unlock),
        cmocka_unit_test_setup_teardown(test_killed_mid_reap, mark, unlock),
        cmocka_unit_test_setup_teardown(test_sighup, mark, unlock),
        cmocka_unit_test_setup_teardown(test_stopper_in_sweep, mark, unlock),
    };
    if (geteuid() != 0) {
        fprintf(stderr, "test_daemon: needs root\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
