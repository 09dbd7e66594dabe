/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_reap_outcomes.c - what the reaper reports and refuses, with real
 * processes: an empty uid, zombies held by a live parent, a task it may
 * not signal, a busy pet uid, the lock (why it exists, its timeout, its
 * file), and eight concurrent `xl-reaper kill`s.
 *
 * uid block of this suite: 3100000 (base and pet) .. 3132751.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_rsuite.h"

#define BASE 3100000u

static struct {
    xlrt_rsuite r;        /* reap_timeout_ms short: outcomes, not waits */
    char *patient_config; /* the same, but waits as long as need be */
} S;

static int suite_setup(void **state)
{
    (void)state;
    xlrt_rsuite_setup(&S.r, BASE,
                      "reap_timeout_ms = 3000\nlock_timeout_ms = 300\n");
    S.patient_config = xlrt_rsuite_config(&S.r, "patient.conf", BASE,
                                          "lock_timeout_ms = 120000\n");
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    free(S.patient_config);
    xlrt_rsuite_teardown(&S.r);
    return 0;
}

/* Everything a test started, for teardown to end if a check fails. */
#define MAX_STARTED 16
static struct {
    pid_t pids[MAX_STARTED];   /* our children: killed by pid, reaped */
    pid_t nurseries[MAX_STARTED];
    uint32_t domids[MAX_STARTED];
    unsigned npids, nnurseries, ndomids;
} started;

static void track_pid(pid_t p) { started.pids[started.npids++] = p; }
static void track_domid(uint32_t d) { started.domids[started.ndomids++] = d; }

static int test_teardown(void **state)
{
    xlreaper_reap_result res;

    (void)state;
    /* Reap before the nurseries go: without them a racer's orphans pile
     * up as zombies for a slow init. */
    for (unsigned i = 0; i < started.ndomids; i++) {
        xlreaper_reap_result_init(&res);
        xlreaper_reap(S.r.ctx, NULL, started.domids[i], &res);
        xlreaper_reap_result_dispose(&res);
    }
    for (unsigned i = 0; i < started.nnurseries; i++)
        xlrt_nursery_stop(started.nurseries[i]);
    for (unsigned i = 0; i < started.npids; i++)
        xlrt_bystander_stop(started.pids[i]); /* kill + waitpid */
    memset(&started, 0, sizeof(started));
    xlrt_capture_reset();
    return 0;
}

/* ---------- starting adversaries ---------- */

/* An adversary in a nursery, as in production (orphans reaped). */
static void start_in_nursery(uint32_t domid, const char *mode)
{
    pid_t n;

    track_domid(domid);
    /* Recorded only once started: a failed start leaves no slot. */
    n = xlrt_adversary_in_nursery(S.r.ctx, domid, mode);
    started.nurseries[started.nnurseries++] = n;
}

/* An adversary that is this process's own child, not waited for. */
static pid_t start_as_child(uint32_t domid, const char *mode)
{
    pid_t p;

    track_domid(domid);
    p = xlrt_adversary_as_child(S.r.ctx, domid, mode);
    track_pid(p);
    return p;
}

/* ---------- outcomes ---------- */

static void test_already_empty(void **state)
{
    xlreaper_reap_result res;

    (void)state;
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(S.r.ctx, NULL, 20, &res), 0);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_EMPTY);
    assert_true(res.was_empty);
    /* One round: the killer's own count after its kill is the proof. */
    assert_int_equal(res.rounds, 1);
    assert_int_equal(res.tasks_seen, 0);
    assert_int_equal(res.uid, BASE + 20);
    xlreaper_reap_result_dispose(&res);
}

static void test_zombie_held_by_live_parent(void **state)
{
    xlreaper_reap_result res;
    pid_t dm;
    int status;

    (void)state;
    dm = start_as_child(21, "sleeper");
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(S.r.ctx, NULL, 21, &res), 0);
    /* We are its parent and have not waited: it stays a zombie, which
     * still counts against the uid, and the report says whose. */
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_ZOMBIES);
    assert_int_equal(res.tasks_seen, 1); /* the sleeper, seen and killed */
    assert_int_equal(res.zombies.num, 1);
    assert_int_equal(res.zombies.tasks[0].tid, dm);
    assert_int_equal(res.zombies.tasks[0].ppid, getpid());
    assert_false(res.kernel_empty);
    assert_int_equal(xlrt_kernel_count(BASE + 21), 1);
    xlreaper_reap_result_dispose(&res);

    assert_int_equal(waitpid(dm, &status, 0), dm);
    started.npids = 0;
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(xlrt_kernel_count(BASE + 21), 0);
}

static void test_task_it_may_not_signal(void **state)
{
    xlreaper_reap_result res;
    uid_t uid = BASE + 22;
    char *d;
    pid_t p;

    (void)state;
    /* A thread that took all three ids of the uid inside a root
     * process: the kernel counts it, but kill(-1) checks its leader's
     * ids and cannot reach it.  Say so; never report success. */
    p = xlrt_thread_holder_start(uid);
    track_pid(p);
    usleep(20000);

    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(S.r.ctx, NULL, 22, &res),
                     XLREAPER_ERROR_REMAIN);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_REMAIN);
    assert_int_equal(res.kernel_left, 1);
    assert_int_equal(res.live.num, 1);
    assert_int_equal(res.live.tasks[0].tgid, p);
    assert_true(res.live.tasks[0].tid != p);
    d = xlreaper_reap_result_describe(&res);
    assert_non_null(strstr(d, "with ids of its own, and kill(-1) checks "
                              "only its leader's"));
    free(d);
    xlreaper_reap_result_dispose(&res);
    assert_true(xlrt_alive(p)); /* not ours to kill */
}

static void test_busy_pet_refused_and_nothing_killed(void **state)
{
    xlreaper_reap_result res;
    pid_t pet, dm;

    (void)state;
    dm = start_as_child(23, "sleeper");
    pet = xlrt_bystander_start(BASE); /* something runs as the pet */
    track_pid(pet);
    usleep(20000);

    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(S.r.ctx, NULL, 23, &res),
                     XLREAPER_ERROR_INVAL);
    assert_logged("the reaper uid 3100000 runs 1 task(s)");
    assert_int_equal(res.rounds, 0);
    xlreaper_reap_result_dispose(&res);
    assert_true(xlrt_alive(pet));
    assert_true(xlrt_alive(dm));
}

/* ---------- the lock ---------- */

/* A killer's ids, held until told to go; writes 'K' when set. */
static pid_t fake_killer(uid_t target, int ready_fd, int hold_ms)
{
    pid_t p = fork();

    assert_true(p >= 0);
    if (p == 0) {
        if (syscall(SYS_setresuid, BASE, target, 0))
            _exit(1);
        (void)!write(ready_fd, "K", 1);
        usleep((useconds_t)hold_ms * 1000);
        _exit(0);
    }
    return p;
}

static void test_two_killers_without_lock_kill_each_other(void **state)
{
    int fds[2], status;
    pid_t b, a;
    char c;

    (void)state;
    /* B holds the killer's ids (as if mid-reap of domid 25)... */
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    b = fake_killer(BASE + 25, fds[1], 3000);
    track_pid(b);
    assert_int_equal(read(fds[0], &c, 1), 1);
    /* ...when A, sharing the pet as its real uid, kills for domid 26. */
    a = fork();
    assert_true(a >= 0);
    if (a == 0) {
        if (syscall(SYS_setresuid, BASE, BASE + 26, 0))
            _exit(1);
        kill(-1, SIGKILL);
        _exit(0);
    }
    assert_int_equal(waitpid(a, &status, 0), a);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(waitpid(b, &status, 0), b);
    started.npids = 0;
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    close(fds[0]);
    close(fds[1]);
}

static void test_target_cannot_kill_the_killer(void **state)
{
    int fds[2], status;
    pid_t k;
    char c;

    (void)state;
    /* A hunter calls kill(-1, SIGKILL) in every generation... */
    start_in_nursery(27, "hunter");
    /* ...while a killer for its uid holds (pet, dm, 0) for 300 ms. */
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    k = fake_killer(BASE + 27, fds[1], 300);
    assert_int_equal(read(fds[0], &c, 1), 1);
    assert_int_equal(waitpid(k, &status, 0), k);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(fds[0]);
    close(fds[1]);
}

static void test_lock_timeout(void **state)
{
    xlreaper_reap_result res;
    char *path;
    pid_t dm;
    int fd;

    (void)state;
    dm = start_as_child(28, "sleeper");
    assert_true(asprintf(&path, "%s/lock", S.r.dir) > 0);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);

    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(S.r.ctx, NULL, 28, &res),
                     XLREAPER_ERROR_LOCK_TIMEOUT);
    assert_logged("timed out after 300 ms waiting for the reaper lock");
    assert_int_equal(res.rounds, 0);
    xlreaper_reap_result_dispose(&res);
    assert_true(xlrt_alive(dm)); /* nothing killed without the lock */
    close(fd);
    free(path);
}

/* reap_timeout_ms is the kill's own, from the lock on: a reap that
 * waited longer than it for the lock still gets all of it (once, 64
 * reaps at once reported tasks left after one round, bench_lock).  The
 * zombie of our own child waits out the grace a caller that wants
 * "empty" gives a live parent: more rounds than one. */
static void test_reap_timeout_starts_at_the_lock(void **state)
{
    xlreaper_reap_result res;
    xlreaper_ctx *ctx;
    char cfg[512], *path;
    pid_t dm, holder;
    int fds[2], status;
    char c;

    (void)state;
    snprintf(cfg, sizeof(cfg),
             "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
             "nproc_limit = 4096\nreap_timeout_ms = 1000\n"
             "lock_timeout_ms = 10000\n",
             BASE, S.r.dir);
    path = xlrt_write_file(S.r.dir, "slow-lock.conf", cfg);
    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_capture_logger()), 0);
    assert_int_equal(
        xlreaper_config_load(ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    dm = start_as_child(29, "sleeper");

    /* A holder of the lock for 1.5 s, longer than reap_timeout_ms. */
    assert_int_equal(pipe(fds), 0);
    holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        char *lp;
        int fd;

        if (asprintf(&lp, "%s/lock", S.r.dir) < 0)
            _exit(1);
        fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || flock(fd, LOCK_EX) < 0)
            _exit(1);
        (void)!write(fds[1], "x", 1);
        usleep(1500000);
        _exit(0);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);

    xlreaper_reap_result_init(&res);
    assert_int_equal(
        xlreaper_reap_flags(ctx, NULL, 29, XLREAPER_REAP_WAIT_EMPTY, &res), 0);
    assert_true(res.lock_wait_us >= 1000000);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_ZOMBIES);
    if (res.rounds < 2)
        fail_msg("one round only: the deadline ran during the lock wait "
                 "(lock wait %llu us, reap %llu us)",
                 (unsigned long long)res.lock_wait_us,
                 (unsigned long long)res.duration_us);
    xlreaper_reap_result_dispose(&res);
    assert_int_equal(waitpid(holder, &status, 0), holder);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(waitpid(dm, &status, 0), dm);
    started.npids = 0;
    xlreaper_ctx_free(ctx);
    free(path);
}

static void test_lock_file_kept_root_only(void **state)
{
    xlreaper_lock *lock;
    struct stat st;
    char *path;

    (void)state;
    assert_true(asprintf(&path, "%s/lock", S.r.dir) > 0);
    /* Upstream libxl creates it 0644, and readable is enough to flock
     * it: whoever opened it then keeps a descriptor that can hold it
     * whatever its mode becomes, so it is refused, not chmod'ed. */
    unlink(path);
    close(open(path, O_RDWR | O_CREAT, 0644));
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(xlreaper_lock_acquire(S.r.ctx, &lock),
                     XLREAPER_ERROR_FAIL);
    assert_logged("is mode 0644, not 0600");
    /* Removed, as the message says, the next lock makes it 0600. */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(xlreaper_lock_acquire(S.r.ctx, &lock), 0);
    xlreaper_lock_release(lock);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    /* Someone else's file, or a symlink, is refused. */
    assert_int_equal(chown(path, 65534, 65534), 0);
    assert_int_equal(xlreaper_lock_acquire(S.r.ctx, &lock),
                     XLREAPER_ERROR_FAIL);
    unlink(path);
    assert_int_equal(symlink("/etc/passwd", path), 0);
    assert_int_equal(xlreaper_lock_acquire(S.r.ctx, &lock),
                     XLREAPER_ERROR_FAIL);
    unlink(path);
    free(path);
}

static void test_lock_dir_created_root_only(void **state)
{
    xlreaper_ctx *ctx;
    xlreaper_lock *lock;
    struct stat st;
    char cfg[512], *dir;

    (void)state;
    /* A lock directory that does not exist yet is made 0700. */
    assert_true(asprintf(&dir, "%s/run-xen", S.r.dir) > 0);
    snprintf(cfg, sizeof(cfg), "dm_uid_base = %u\nlock_file = \"%s/lock\"\n",
             BASE, dir);
    ctx = xlrt_ctx(S.r.dir, cfg);
    assert_int_equal(xlreaper_lock_acquire(ctx, &lock), 0);
    xlreaper_lock_release(lock);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(st.st_uid, 0);
    xlreaper_ctx_free(ctx);
    free(dir);
}

static void test_eight_concurrent_cli_kills(void **state)
{
    pid_t kills[8];
    int status;

    (void)state;
    for (int i = 0; i < 8; i++)
        start_in_nursery(31 + i, "fork-racer");
    for (int i = 0; i < 8; i++) {
        char dom[16];
        snprintf(dom, sizeof(dom), "%d", 31 + i);
        kills[i] = fork();
        assert_true(kills[i] >= 0);
        if (kills[i] == 0) {
            execl(S.r.cli, S.r.cli, "--config", S.patient_config, "kill", dom,
                  (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < 8; i++) {
        assert_int_equal(waitpid(kills[i], &status, 0), kills[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("xl-reaper kill %d: status %#x", 31 + i, status);
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(xlrt_kernel_count(BASE + 31 + i), 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_already_empty),
        T(test_zombie_held_by_live_parent),
        T(test_task_it_may_not_signal),
        T(test_busy_pet_refused_and_nothing_killed),
        T(test_two_killers_without_lock_kill_each_other),
        T(test_target_cannot_kill_the_killer),
        T(test_lock_timeout),
        T(test_reap_timeout_starts_at_the_lock),
        T(test_lock_file_kept_root_only),
        T(test_lock_dir_created_root_only),
        T(test_eight_concurrent_cli_kills),
    };
#undef T
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
