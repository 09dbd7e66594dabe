/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_hostile_uid.c - a DM uid that stops whatever enters it cannot
 * stall or hang anything: every command answers within seconds, the
 * lock is free afterwards, and another domain's kill is not held up.
 *
 * The adversary is tests/progs/adversary stopper: kill(-1, SIGSTOP)
 * for ever, which stops every task whose real or saved uid is its own
 * (a count probe, a killer counting, a spawn's check).
 *
 * uid block of this suite: 3600000 (base and pet) .. 3632751.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_kcount.h"

#define BASE 3600000u
#define STOPPER_DOMID 5u
#define RACER_DOMID 6u
/* What "answers within seconds" means here: far below the 10 s lock
 * timeout, and far above a loaded CI machine's slowest honest answer. */
#define ANSWER_MS 5000u

static struct {
    char *dir;
    char *config;
    char lock[600];
    xlreaper_ctx *ctx;
    char cli[512];
    pid_t stopper, racer; /* their nurseries */
} S;

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Runs the CLI with args; kills it after limit_ms.  Its exit status,
 * or -1 if it had to be killed; *ms_r how long it ran. */
static int run_cli(unsigned limit_ms, uint64_t *ms_r, const char *a1,
                   const char *a2, const char *a3, const char *a4,
                   const char *a5)
{
    char *argv[] = { S.cli,      "--config", S.config,
                     (char *)a1, (char *)a2, (char *)a3,
                     (char *)a4, (char *)a5, NULL };
    uint64_t start = now_ms();
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (now_ms() - start > limit_ms) {
            kill(pid, SIGKILL); /* our unreaped child */
            waitpid(pid, &status, 0);
            *ms_r = now_ms() - start;
            return -1;
        }
        usleep(2000);
    }
    *ms_r = now_ms() - start;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The global lock can be had at once. */
static bool lock_free(void)
{
    int fd = open(S.lock, O_RDONLY | O_CLOEXEC);
    bool ok = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;

    if (fd >= 0)
        close(fd);
    return ok;
}

static int suite_setup(void **state)
{
    char cfg[1024];

    (void)state;
    S.dir = xlrt_tmpdir();
    snprintf(S.lock, sizeof(S.lock), "%s/lock", S.dir);
    snprintf(cfg, sizeof(cfg),
             "dm_uid_base = %u\nlock_file = \"%s\"\nnproc_limit = 4096\n"
             "reap_timeout_ms = 2000\nlock_timeout_ms = 10000\n",
             BASE, S.lock);
    S.config = xlrt_write_file(S.dir, "xl-reaper.conf", cfg);
    assert_int_equal(xlreaper_ctx_alloc(&S.ctx, xlrt_logger()), 0);
    assert_int_equal(
        xlreaper_config_load(S.ctx, S.config, XLREAPER_CONFIG_MUST_EXIST), 0);
    snprintf(S.cli, sizeof(S.cli), "%s/bin/xl-reaper", xlrt_build_dir());
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlreaper_ctx_free(S.ctx);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

/* Each test: a stopper in STOPPER_DOMID's uid, reaped afterwards. */
static int stopper_setup(void **state)
{
    (void)state;
    S.stopper = xlrt_adversary_in_nursery(S.ctx, STOPPER_DOMID, "stopper");
    return 0;
}

static int stopper_teardown(void **state)
{
    xlreaper_reap_result res;

    (void)state;
    xlreaper_reap_result_init(&res);
    xlreaper_reap(S.ctx, NULL, STOPPER_DOMID, &res);
    xlreaper_reap_result_dispose(&res);
    xlrt_nursery_stop(S.stopper);
    if (S.racer) {
        xlreaper_reap_result_init(&res);
        xlreaper_reap(S.ctx, NULL, RACER_DOMID, &res);
        xlreaper_reap_result_dispose(&res);
        xlrt_nursery_stop(S.racer);
        S.racer = 0;
    }
    return 0;
}

static void test_status_answers(void **state)
{
    uint64_t ms;
    int rc;

    (void)state;
    for (int i = 0; i < 5; i++) {
        rc = run_cli(ANSWER_MS * 2, &ms, "status", "5", NULL, NULL, NULL);
        if (rc != 3 || ms > ANSWER_MS)
            fail_msg("status %d: exit %d after %llu ms (want 3 within %u)", i,
                     rc, (unsigned long long)ms, ANSWER_MS);
        assert_true(lock_free());
    }
}

static void test_count_probe_is_a_verdict(void **state)
{
    uint64_t start = now_ms();
    unsigned count = 0;
    bool empty = true;

    (void)state;
    /* Stopped or killed: "busy"; or done before the stopper's next
     * SIGSTOP: a count.  Never "empty", never a hang. */
    for (int i = 0; i < 20; i++) {
        int rc = xlreaper_uid_count(S.ctx, BASE + STOPPER_DOMID, &count);

        if (rc != XLREAPER_ERROR_BUSY && !(rc == 0 && count >= 1))
            fail_msg("try %d: rc %d, count %u", i, rc, count);
    }
    assert_int_equal(xlreaper_uid_empty(S.ctx, BASE + STOPPER_DOMID, &empty),
                     0);
    assert_false(empty);
    assert_true(now_ms() - start < ANSWER_MS);
    assert_true(lock_free());
}

static void test_spawn_refuses_in_time(void **state)
{
    uint64_t ms;
    int rc;

    (void)state;
    rc = run_cli(ANSWER_MS * 2, &ms, "spawn", "5", "--", "/bin/true", NULL);
    if (rc != 3 || ms > ANSWER_MS)
        fail_msg("spawn: exit %d after %llu ms (want 3 within %u)", rc,
                 (unsigned long long)ms, ANSWER_MS);
    assert_true(lock_free());
}

static void test_census_answers(void **state)
{
    uint64_t start = now_ms();
    bool busy[8] = { 0 };

    (void)state;
    /* Domids 2..9: only the stopper's uid is busy. */
    assert_int_equal(xlreaper_census_kernel(S.ctx, 2, 8, busy), 0);
    assert_true(now_ms() - start < ANSWER_MS);
    for (unsigned i = 0; i < 8; i++)
        if (busy[i] != (i + 2 == STOPPER_DOMID))
            fail_msg("domid %u: busy %d", i + 2, busy[i]);
    assert_true(lock_free());
}

static void test_other_kill_not_held_up(void **state)
{
    uint64_t ms, status_ms;
    pid_t poller;
    int rc;

    (void)state;
    S.racer = xlrt_adversary_in_nursery(S.ctx, RACER_DOMID, "fork-racer");
    /* Someone keeps looking into the stopper's uid meanwhile. */
    poller = fork();
    assert_true(poller >= 0);
    if (poller == 0) {
        for (int i = 0; i < 3; i++)
            run_cli(ANSWER_MS * 2, &status_ms, "status", "5", NULL, NULL,
                    NULL);
        _exit(0);
    }
    rc = run_cli(ANSWER_MS * 2, &ms, "kill", "6", NULL, NULL, NULL);
    waitpid(poller, NULL, 0);
    if (rc != 0 || ms > ANSWER_MS)
        fail_msg("kill 6: exit %d after %llu ms (want 0 within %u)", rc,
                 (unsigned long long)ms, ANSWER_MS);
    assert_int_equal(xlrt_kernel_count_settled(BASE + RACER_DOMID, 2000), 0);
    assert_true(lock_free());
}

static void test_kill_reaps_the_stopper(void **state)
{
    uint64_t ms;
    int rc;

    (void)state;
    /* Kill first, then count: it is dead before anything enters. */
    rc = run_cli(ANSWER_MS * 2, &ms, "kill", "5", NULL, NULL, NULL);
    if (rc != 0 || ms > ANSWER_MS)
        fail_msg("kill 5: exit %d after %llu ms (want 0 within %u)", rc,
                 (unsigned long long)ms, ANSWER_MS);
    assert_int_equal(xlrt_kernel_count_settled(BASE + STOPPER_DOMID, 2000), 0);
    assert_true(lock_free());
}

/* Looking is serialised with starting: a `status` polling a domid's uid
 * never makes a spawn into it fail, nor is taken for a leftover. */
static void test_status_beside_spawn(void **state)
{
    volatile bool *stop = NULL;
    uint64_t ms;
    pid_t poller;
    int failed = 0;

    (void)state;
    stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(stop != MAP_FAILED);
    *stop = false;
    poller = fork();
    assert_true(poller >= 0);
    if (poller == 0) {
        while (!*stop)
            run_cli(ANSWER_MS * 2, &ms, "status", "7", NULL, NULL, NULL);
        _exit(0);
    }
    for (int i = 0; i < 30; i++) {
        int rc =
            run_cli(ANSWER_MS * 2, &ms, "spawn", "7", "--", "/bin/true", NULL);
        failed += rc != 0;
        if (rc != 0)
            fprintf(stderr, "spawn %d: exit %d\n", i, rc);
    }
    *stop = true;
    waitpid(poller, NULL, 0);
    munmap((void *)stop, sizeof(*stop));
    assert_int_equal(failed, 0);
    assert_true(lock_free());
}

int main(void)
{
#define T(f)                                                                  \
    cmocka_unit_test_setup_teardown(f, stopper_setup, stopper_teardown)
    const struct CMUnitTest tests[] = {
        T(test_status_answers),         T(test_count_probe_is_a_verdict),
        T(test_spawn_refuses_in_time),  T(test_census_answers),
        T(test_other_kill_not_held_up), T(test_kill_reaps_the_stopper),
        T(test_status_beside_spawn),
    };
#undef T
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
