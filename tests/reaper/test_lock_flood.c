/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_lock_flood.c - a DM that fills the host's table of file locks
 * slows no other domain's kill, spawn or census, and a lock timeout
 * stays within lock_timeout_ms.
 *
 * Nothing limits how many file locks a process holds (RLIMIT_LOCKS is
 * ignored, and they are not charged to a memory cgroup), and every one
 * of them is a line of /proc/locks, whose read costs O(N^2) in their
 * number (docs/facts.md F18, F19).  Here a process in a DM uid, with no file
 * system and no privilege, holds NLOCKS one-byte read locks on memfds,
 * as a hostile DM can.  Then `xl-reaper kill` of another, empty uid,
 * `xl-reaper spawn` of a third domain and a kernel census of a run of
 * uids are each timed ROUNDS times without the flood and ROUNDS times
 * with it, in the same run.  The lock, the kill, the spawn and the
 * census read nothing whose size a DM sets, so the flood changes
 * nothing but the load: its median is held to twice the quiet one plus
 * SLACK_MS.  Code that read /proc/locks as it let go of the lock paid
 * one read per release, some 0.5 s at 50,000 locks on a 2-CPU build
 * host (several for the census), against a quiet kill of a few ms.
 *
 * uid block of this suite: 9860000 (base and pet) .. 9861100.
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

#include "xlrt_rsuite.h"

#define BASE 9860000u
#define FLOOD_DOMID 3u
#define KILL_DOMID 4u
#define SPAWN_DOMID 5u
/* The census asks about CENSUS_NUM uids from CENSUS_FIRST on: four of
 * the census's runs, so four takes of the lock. */
#define CENSUS_FIRST 20u
#define CENSUS_NUM 1024u
/* The flood: NLOCKS locks, LOCKS_PER_FD on each memfd (one inode's
 * list is walked at each new lock of it: many short lists). */
#define NLOCKS 50000u
#define LOCKS_PER_FD 1000u
#define ROUNDS 5
#define SLACK_MS 100
/* A lock timeout under the flood: at most this much past
 * lock_timeout_ms. */
#define TIMEOUT_MS 300u
#define TIMEOUT_SLACK_MS 200

static struct {
    xlrt_rsuite r;
    char *config_short; /* lock_timeout_ms = TIMEOUT_MS */
    pid_t flooder;
} S;

static int suite_setup(void **state)
{
    char extra[64];

    (void)state;
    xlrt_rsuite_setup(&S.r, BASE, "");
    snprintf(extra, sizeof(extra), "lock_timeout_ms = %u\n", TIMEOUT_MS);
    S.config_short = xlrt_rsuite_config(&S.r, "short.conf", BASE, extra);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    free(S.config_short);
    xlrt_rsuite_teardown(&S.r);
    return 0;
}

static uint64_t now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The flooder's child side: as the DM uid, NLOCKS locks, then a byte to
 * wfd, then it waits to be killed. */
static void flooder_child(uid_t uid, gid_t gid, int wfd)
{
    if (xlrt_become(uid, gid) < 0)
        _exit(2);
    for (unsigned made = 0; made < NLOCKS;) {
        int fd = memfd_create("flood", MFD_CLOEXEC);

        if (fd < 0)
            _exit(3);
        /* Every other byte: neighbouring locks of one owner merge. */
        for (unsigned i = 0; i < LOCKS_PER_FD && made < NLOCKS; i++, made++) {
            struct flock fl = { .l_type = F_RDLCK,
                                .l_whence = SEEK_SET,
                                .l_start = 2 * (off_t)i,
                                .l_len = 1 };

            if (fcntl(fd, F_SETLK, &fl) < 0)
                _exit(4);
        }
    }
    if (write(wfd, "", 1) != 1)
        _exit(5);
    for (;;)
        pause();
}

static void flood_start(void)
{
    uid_t uid;
    gid_t gid;
    uint64_t t = now_us();
    int p[2];
    char c;

    assert_int_equal(xlreaper_dm_ids(S.r.ctx, FLOOD_DOMID, &uid, &gid), 0);
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    S.flooder = fork();
    assert_true(S.flooder >= 0);
    if (S.flooder == 0) {
        close(p[0]);
        flooder_child(uid, gid, p[1]);
    }
    close(p[1]);
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    print_message("the flood: %u locks in %llu ms\n", NLOCKS,
                  (unsigned long long)((now_us() - t) / 1000u));
}

static void flood_stop(void)
{
    int status;

    if (S.flooder <= 0)
        return;
    kill(S.flooder, SIGKILL); /* our child: its pid is its own */
    waitpid(S.flooder, &status, 0);
    S.flooder = 0;
}

static int flood_teardown(void **state)
{
    (void)state;
    flood_stop();
    return 0;
}

/* The CLI with config, exiting 0; its time in us. */
static uint64_t run_cli(const char *config, const char *cmd, uint32_t domid)
{
    char dom[16], *out = NULL, *err = NULL;
    char *argv[] = { S.r.cli, "--config", (char *)config, (char *)cmd,
                     dom,     "--",       "/bin/true",    NULL };
    uint64_t t;
    int status;

    snprintf(dom, sizeof(dom), "%u", domid);
    if (strcmp(cmd, "spawn"))
        argv[5] = NULL;
    t = now_us();
    status = xlrt_run(argv, &out, &err);
    t = now_us() - t;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("xl-reaper %s %u: status %#x: %s", cmd, domid, status,
                 err ? err : "");
    free(out);
    free(err);
    return t;
}

static uint64_t census_once(void)
{
    bool *busy = calloc(CENSUS_NUM, sizeof(*busy));
    uint64_t t;

    assert_non_null(busy);
    t = now_us();
    assert_int_equal(
        xlreaper_census_kernel(S.r.ctx, CENSUS_FIRST, CENSUS_NUM, busy), 0);
    t = now_us() - t;
    for (unsigned i = 0; i < CENSUS_NUM; i++)
        assert_false(busy[i]);
    free(busy);
    return t;
}

typedef enum { OP_KILL, OP_SPAWN, OP_CENSUS, OP_NUM } op;
static const char *const op_name[] = { "kill", "spawn", "census" };

static uint64_t op_once(op o)
{
    switch (o) {
    case OP_KILL: return run_cli(S.r.config, "kill", KILL_DOMID);
    case OP_SPAWN: return run_cli(S.r.config, "spawn", SPAWN_DOMID);
    default: return census_once();
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The median of ROUNDS of each operation, one of each in turn. */
static void medians(uint64_t med[OP_NUM])
{
    uint64_t t[OP_NUM][ROUNDS];

    for (int i = 0; i < ROUNDS; i++)
        for (int o = 0; o < OP_NUM; o++)
            t[o][i] = op_once((op)o);
    for (int o = 0; o < OP_NUM; o++) {
        qsort(t[o], ROUNDS, sizeof(t[o][0]), cmp_u64);
        med[o] = t[o][ROUNDS / 2];
    }
}

static void test_flood_slows_no_other_domain(void **state)
{
    uint64_t quiet[OP_NUM], flood[OP_NUM];
    bool slow = false;

    (void)state;
    medians(quiet);
    flood_start();
    medians(flood);
    flood_stop();
    for (int o = 0; o < OP_NUM; o++) {
        uint64_t bound = 2 * quiet[o] + SLACK_MS * 1000u;

        print_message("%s: median %llu us quiet, %llu us with %u locks "
                      "(bound %llu us)\n",
                      op_name[o], (unsigned long long)quiet[o],
                      (unsigned long long)flood[o], NLOCKS,
                      (unsigned long long)bound);
        slow = slow || flood[o] > bound;
    }
    if (slow)
        fail_msg("a DM's file locks slowed another domain's kill, spawn "
                 "or census");
}

/* While the lock is held (by this process, a reaper of ours), a kill
 * gives up after lock_timeout_ms, not after a read of the flood, and
 * says who holds it. */
static void test_flood_timeout_is_bounded(void **state)
{
    char dom[16], *out = NULL, *err = NULL;
    char *argv[] = { S.r.cli, "--config", S.config_short, "kill", dom, NULL };
    xlreaper_lock *lock = NULL;
    char pid[32];
    uint64_t t;
    int status;

    (void)state;
    snprintf(dom, sizeof(dom), "%u", KILL_DOMID);
    flood_start();
    assert_int_equal(xlreaper_lock_acquire(S.r.ctx, &lock), 0);
    t = now_us();
    status = xlrt_run(argv, &out, &err);
    t = now_us() - t;
    xlreaper_lock_release(lock);
    flood_stop();
    print_message("lock timeout of %u ms with %u locks: %llu us: %s",
                  TIMEOUT_MS, NLOCKS, (unsigned long long)t, err ? err : "");
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
    if (t > (TIMEOUT_MS + TIMEOUT_SLACK_MS) * 1000u)
        fail_msg("the lock timeout took %llu us, lock_timeout_ms is %u",
                 (unsigned long long)t, TIMEOUT_MS);
    snprintf(pid, sizeof(pid), "pid %ld", (long)getpid());
    assert_non_null(err);
    assert_non_null(strstr(err, pid));
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_flood_slows_no_other_domain,
                                  flood_teardown),
        cmocka_unit_test_teardown(test_flood_timeout_is_bounded,
                                  flood_teardown),
    };

    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
