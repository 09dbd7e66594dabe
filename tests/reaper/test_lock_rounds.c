/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_lock_rounds.c - a uid that stays stuck does not hold the lock:
 * a reap holds it for each round's kill and count, not while it waits
 * between rounds, and its mark keeps a spawn out of the uid until its
 * verdict.  The stuck uid is real: a task of it in D state on a FUSE
 * request its root server (tests/progs/fuse_holder) never answers.
 *
 * uid block of this suite: 5300000 (base and pet) .. 5332751.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlrt_fuse.h"
#include "xlrt_rsuite.h"
#include "xlreaper_internal.h"

#define BASE 5300000u
#define STUCK_DOMID 7u
#define OTHER_DOMID 8u
/* Long enough that a reap that held the lock throughout would time out
 * every acquire below (lock_timeout_ms 300). */
#define REAP_MS 2500u

static struct {
    xlrt_rsuite r;
    xlrt_fuse_holder holder;
} S = { .holder = { -1, -1 } };

static int suite_setup(void **state)
{
    char extra[128];

    (void)state;
    snprintf(extra, sizeof(extra),
             "reap_timeout_ms = %u\nlock_timeout_ms = 300\n", REAP_MS);
    xlrt_rsuite_setup(&S.r, BASE, extra);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_rsuite_teardown(&S.r);
    return 0;
}

static void holder_stop(void)
{
    xlrt_fuse_holder_stop(&S.holder);
}

static int test_teardown(void **state)
{
    (void)state;
    holder_stop();
    xlrt_capture_reset();
    return 0;
}

/* One task of uid stuck on an unanswered FUSE request, or a skip. */
static pid_t holder_start(uid_t uid)
{
    char path[512], line[128];
    int pid = -1;

    if (access("/dev/fuse", R_OK | W_OK) < 0)
        skip(); /* no FUSE on this host: no stuck task to make */
    snprintf(path, sizeof(path), "%s/fuse_holder", xlrt_progs_dir());
    if (xlrt_fuse_holder_start(&S.holder, path, &uid, 1, line, sizeof(line)) ||
        sscanf(line, "ready %d", &pid) != 1)
        fail_msg("fuse_holder did not start: \"%s\"", line);
    return pid;
}

static uint64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A reap of domid in a child: its exit status is the outcome, or 100
 * plus -rc when it failed otherwise than _REMAIN or _STUCK. */
static pid_t reap_in_child(uint32_t domid)
{
    pid_t p = fork();

    assert_true(p >= 0);
    if (p == 0) {
        xlreaper_reap_result res;
        int rc;

        xlreaper_reap_result_init(&res);
        rc = xlreaper_reap(S.r.ctx, NULL, domid, &res);
        _exit(rc && rc != XLREAPER_ERROR_REMAIN && rc != XLREAPER_ERROR_STUCK
                  ? 100 - rc
                  : (int)res.outcome);
    }
    return p;
}

static void test_stuck_uid_leaves_the_lock_free(void **state)
{
    uid_t uid = BASE + STUCK_DOMID;
    uint64_t start, worst = 0;
    unsigned acquired = 0;
    pid_t stuck, reaper;
    int status;

    (void)state;
    stuck = holder_start(uid);
    assert_int_equal(xlrt_kernel_count(uid), 1);
    start = now_us();
    reaper = reap_in_child(STUCK_DOMID);
    /* While the reap waits for a task that cannot die, the lock is had
     * within a round's time, again and again. */
    usleep(100000);
    while (now_us() < start + (REAP_MS - 500) * 1000u) {
        xlreaper_lock *lock = NULL;
        uint64_t t = now_us();
        int rc = xlreaper_lock_acquire(S.r.ctx, &lock);

        if (rc)
            fail_msg("lock acquire during the stuck reap: %d (%s)", rc,
                     xlrt_captured());
        t = now_us() - t;
        worst = t > worst ? t : worst;
        acquired++;
        xlreaper_lock_release(lock);
        usleep(20000);
    }
    /* And another domain's kill goes through meanwhile. */
    {
        char dom[16], *out = NULL, *err = NULL;
        char *argv[] = { S.r.cli, "--config", S.r.config, "kill", dom, NULL };

        snprintf(dom, sizeof(dom), "%u", OTHER_DOMID);
        assert_int_equal(xlrt_run(argv, &out, &err), 0);
        free(out);
        free(err);
    }
    assert_int_equal(waitpid(reaper, &status, 0), reaper);
    /* The stuck task was seen and is reported: never "empty". */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), XLREAPER_OUTCOME_STUCK);
    assert_true(acquired > 10);
    if (worst > 100000)
        fail_msg("the lock took %llu us to get while a stuck uid was reaped",
                 (unsigned long long)worst);
    assert_true(xlrt_alive(stuck)); /* stuck indeed, all along */
}

static void test_spawn_kept_out_until_the_verdict(void **state)
{
    uid_t uid = BASE + STUCK_DOMID;
    xlreaper_lock *lock = NULL;
    uint64_t start;
    pid_t reaper;
    bool marked = false;
    int status, rc;

    (void)state;
    holder_start(uid);
    start = now_us();
    reaper = reap_in_child(STUCK_DOMID);
    usleep(200000);
    /* Between rounds: the lock is free, the uid marked. */
    assert_int_equal(xlreaper_lock_acquire(S.r.ctx, &lock), 0);
    assert_int_equal(xlreaper__reaping_marked(S.r.ctx, lock, uid, &marked), 0);
    assert_true(marked);
    assert_int_equal(
        xlreaper__reaping_marked(S.r.ctx, lock, BASE + OTHER_DOMID, &marked),
        0);
    assert_false(marked);
    xlreaper_lock_release(lock);
    lock = NULL;
    /* What would start a DM in it waits, and gives up with "busy". */
    rc = xlreaper__lock_acquire_unmarked(S.r.ctx, uid, &lock);
    assert_int_equal(rc, XLREAPER_ERROR_BUSY);
    assert_true(now_us() - start < REAP_MS * 1000u);
    xlreaper_lock_release(lock);
    lock = NULL;
    /* Another uid is not held up. */
    assert_int_equal(
        xlreaper__lock_acquire_unmarked(S.r.ctx, BASE + OTHER_DOMID, &lock),
        0);
    xlreaper_lock_release(lock);
    lock = NULL;
    assert_int_equal(waitpid(reaper, &status, 0), reaper);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), XLREAPER_OUTCOME_STUCK);
    /* After the verdict the mark is gone (the uid is still not empty,
     * which is the spawn's own check). */
    assert_int_equal(xlreaper__lock_acquire_unmarked(S.r.ctx, uid, &lock), 0);
    xlreaper_lock_release(lock);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_stuck_uid_leaves_the_lock_free),
        T(test_spawn_kept_out_until_the_verdict),
    };
#undef T
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
