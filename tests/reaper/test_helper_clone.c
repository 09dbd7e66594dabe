/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_helper_clone - what a helper started with clone(CLONE_VM)
 * (xlreaper_clone.c) must leave of its caller, whose memory it shares:
 * the dumpable flag as the caller had it, the caller's descriptors, and
 * no handler of the caller's run by the helper.  Real kills and probes
 * of real uids; only this suite's range (9500000..).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define BASE 9500000u

static struct {
    char *dir;
    xlreaper_ctx *ctx;
} S;

static int suite_setup(void **state)
{
    char cfg[512], *path;

    (void)state;
    S.dir = xlrt_tmpdir();
    snprintf(cfg, sizeof(cfg),
             "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
             "reap_timeout_ms = 3000\nlock_timeout_ms = 3000\n",
             BASE, S.dir);
    path = xlrt_write_file(S.dir, "xl-reaper.conf", cfg);
    assert_int_equal(xlreaper_ctx_alloc(&S.ctx, xlrt_capture_logger()), 0);
    assert_int_equal(
        xlreaper_config_load(S.ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlreaper_ctx_free(S.ctx);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

static void reap_empty(uint32_t domid)
{
    xlreaper_reap_result res;

    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(S.ctx, NULL, domid, &res), 0);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_EMPTY);
    xlreaper_reap_result_dispose(&res);
}

/* The helper's change of euid clears "dumpable" on the shared memory:
 * the caller gets its own value back, 1 or 0. */
static void test_dumpable_put_back(void **state)
{
    bool empty;

    (void)state;
    for (int want = 1; want >= 0; want--) {
        assert_int_equal(prctl(PR_SET_DUMPABLE, want, 0, 0, 0), 0);
        reap_empty(1);
        assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), want);
        assert_int_equal(xlreaper_uid_empty(S.ctx, BASE + 1, &empty), 0);
        assert_true(empty);
        assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), want);
    }
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* The helper closes every descriptor but its pipe: in its own copy of
 * the table, none of ours. */
static void test_caller_descriptors_kept(void **state)
{
    int fd = open("/dev/null", O_RDONLY); /* not close-on-exec */

    (void)state;
    assert_true(fd > 2);
    reap_empty(2);
    assert_true(fcntl(fd, F_GETFD) >= 0);
    assert_true(fcntl(0, F_GETFD) >= 0 || errno == EBADF);
    close(fd);
}

static volatile sig_atomic_t handled;
static volatile int stop_sending;
static pid_t main_tid, zombie;
static unsigned sent;

static void on_usr1(int sig)
{
    (void)sig;
    handled++; /* in our memory, which a helper shares */
}

/* Sends SIGUSR1 to every child of the main thread but the zombie, over
 * and over: the helpers, while they run. */
static void *sender(void *arg)
{
    char path[64];

    (void)arg;
    snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)main_tid);
    while (!stop_sending) {
        char buf[256];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
            break;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        for (char *p = buf, *e; *p; p = e) {
            long pid = strtol(p, &e, 10);
            if (e == p)
                break;
            if (pid > 0 && pid != zombie && kill((pid_t)pid, SIGUSR1) == 0)
                __atomic_fetch_add(&sent, 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

/* Signals block across the clone and stay blocked in the helper: a
 * SIGUSR1 sent to it while it runs neither runs our handler on its
 * stack (that would count here) nor ends it (the reaps all answer);
 * and ours is unblocked again after.  A zombie of ours in the uid keeps
 * each killer looking at the count for about 1.5 ms, long enough to be
 * signalled while it runs. */
static void test_no_handler_in_helper(void **state)
{
    struct sigaction sa = { .sa_handler = on_usr1 }, old;
    pthread_t th;
    sigset_t mask;

    (void)state;
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    handled = 0;
    stop_sending = 0;
    sent = 0;
    main_tid = (pid_t)syscall(SYS_gettid);
    zombie = fork();
    assert_true(zombie >= 0);
    if (zombie == 0) {
        syscall(SYS_setresuid, BASE + 3, BASE + 3, BASE + 3);
        _exit(0);
    }
    /* A zombie once it shows as one; our child, so it stays. */
    for (int i = 0; i < 2000 && xlrt_alive(zombie); i++)
        usleep(1000);
    assert_false(xlrt_alive(zombie));
    assert_int_equal(pthread_create(&th, NULL, sender, NULL), 0);
    for (int i = 0; i < 200 && __atomic_load_n(&sent, __ATOMIC_RELAXED) < 20;
         i++) {
        xlreaper_reap_result res;

        xlreaper_reap_result_init(&res);
        assert_int_equal(xlreaper_reap(S.ctx, NULL, 3, &res), 0);
        assert_int_equal(res.outcome, XLREAPER_OUTCOME_ZOMBIES);
        xlreaper_reap_result_dispose(&res);
    }
    stop_sending = 1;
    pthread_join(th, NULL);
    assert_int_equal(waitpid(zombie, NULL, 0), zombie);
    if (sent == 0)
        fail_msg("no signal reached a helper in 200 reaps: nothing tested");
    assert_int_equal(handled, 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &mask), 0);
    assert_false(sigismember(&mask, SIGUSR1));
    raise(SIGUSR1);
    assert_int_equal(handled, 1);
    sigaction(SIGUSR1, &old, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dumpable_put_back),
        cmocka_unit_test(test_caller_descriptors_kept),
        cmocka_unit_test(test_no_handler_in_helper),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
