/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_adversary.c - real hostile device models against the reaper.
 *
 * Each round starts an adversary (tests/progs/adversary.c) through the
 * library's own restricted spawn, under one domid's DM uid, in a nursery
 * that reaps orphans as a healthy init would; waits until it is at its
 * trick; checks with our own probe that the kernel counts its tasks;
 * reaps; and then demands, by our own probe again, that the kernel
 * counts no task of that uid, while a bystander under the neighbouring
 * domid's uid and one under an unrelated uid still live.  $XLR_ROUNDS
 * rounds of each (50 in make check, 10,000 in make soak).
 *
 * uid block of this suite: 3000000 (range base and pet) .. 3032751, and
 * 3400000 for the unrelated bystander.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlr_test.h"

#define BASE 3000000u
#define UNRELATED_UID 3400000u

typedef struct {
    char *dir;
    xlreaper_ctx *ctx;
} suite;

static suite S;

static int suite_setup(void **state)
{
    char cfg[512];

    (void)state;
    S.dir = xlrt_tmpdir();
    /* A generous NPROC, so that the kill and not the limit is tested. */
    snprintf(cfg, sizeof(cfg),
             "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
             "nproc_limit = 4096\nreap_timeout_ms = 10000\n",
             BASE, S.dir);
    S.ctx = xlrt_ctx(S.dir, cfg);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlreaper_ctx_free(S.ctx);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

static void short_random_pause(void)
{
    struct timespec ts = { 0, (rand() % 3000) * 1000L };
    nanosleep(&ts, NULL);
}

/* What a round has started, for teardown to end if a check fails. */
static struct {
    pid_t nursery, neighbour, unrelated;
    uint32_t domid;
} live;

static int round_teardown(void **state)
{
    xlreaper_reap_result res;

    (void)state;
    /* Reap while the nursery still reaps the racer's orphans. */
    if (live.domid) {
        xlreaper_reap_result_init(&res);
        xlreaper_reap(S.ctx, NULL, live.domid, &res);
        xlreaper_reap_result_dispose(&res);
    }
    xlrt_nursery_stop(live.nursery);
    if (live.neighbour)
        xlrt_bystander_stop(live.neighbour);
    if (live.unrelated)
        xlrt_bystander_stop(live.unrelated);
    memset(&live, 0, sizeof(live));
    return 0;
}

static void run_rounds(const char *mode, uint32_t domid)
{
    uid_t uid = BASE + domid;
    unsigned rounds = xlrt_rounds(50);

    live.domid = domid;
    live.neighbour = xlrt_bystander_start(uid + 1);
    live.unrelated = xlrt_bystander_start(UNRELATED_UID);

    for (unsigned r = 0; r < rounds; r++) {
        xlreaper_reap_result res;
        long before, after;
        int rc;

        live.nursery = xlrt_adversary_in_nursery(S.ctx, domid, mode);
        short_random_pause();

        /* Only a live task of the uid can kill our probe. */
        before = xlrt_kernel_count(uid);
        if (before <= 0 && before != XLRT_PROBE_KILLED)
            fail_msg("%s round %u: no task of uid %u before the kill "
                     "(count %ld): nothing would be tested", mode, r,
                     (unsigned)uid, before);

        xlreaper_reap_result_init(&res);
        rc = xlreaper_reap(S.ctx, NULL, domid, &res);
        /* No live task is left the moment it returns; zombies only wait
         * for the nursery, which reaps at once. */
        after = xlrt_kernel_count_settled(uid, 2000);
        if (rc ||
            (res.outcome != XLREAPER_OUTCOME_EMPTY &&
             res.outcome != XLREAPER_OUTCOME_ZOMBIES) ||
            res.live.num || res.stuck.num || after != 0) {
            char *d = xlreaper_reap_result_describe(&res);
            fail_msg("%s round %u: rc %d, %s; kernel count after: %ld",
                     mode, r, rc, d, after);
        }
        assert_true(res.outcome == XLREAPER_OUTCOME_ZOMBIES
                        ? res.zombies.num > 0 && !res.kernel_empty
                        : res.kernel_empty);
        assert_true(res.rounds >= 1);
        xlreaper_reap_result_dispose(&res);

        if (!xlrt_alive(live.neighbour) || !xlrt_alive(live.unrelated))
            fail_msg("%s round %u: a bystander died", mode, r);
        xlrt_nursery_stop(live.nursery);
        live.nursery = 0;
    }
}

static void test_fork_racer(void **s) { (void)s; run_rounds("fork-racer", 11); }
static void test_setsid_racer(void **s) { (void)s; run_rounds("setsid-racer", 12); }
static void test_hunter(void **s) { (void)s; run_rounds("hunter", 13); }
static void test_threads(void **s) { (void)s; run_rounds("threads", 14); }
static void test_stopped(void **s) { (void)s; run_rounds("stopped", 15); }
static void test_userns(void **s) { (void)s; run_rounds("userns", 16); }
static void test_vfork_chain(void **s) { (void)s; run_rounds("vfork-chain", 17); }
static void test_zombie_farm(void **s) { (void)s; run_rounds("zombie-farm", 18); }
static void test_deaf(void **s) { (void)s; run_rounds("deaf", 19); }
static void test_leader_exit(void **s) { (void)s; run_rounds("leader-exit", 20); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fork_racer, round_teardown),
        cmocka_unit_test_teardown(test_setsid_racer, round_teardown),
        cmocka_unit_test_teardown(test_hunter, round_teardown),
        cmocka_unit_test_teardown(test_threads, round_teardown),
        cmocka_unit_test_teardown(test_stopped, round_teardown),
        cmocka_unit_test_teardown(test_userns, round_teardown),
        cmocka_unit_test_teardown(test_vfork_chain, round_teardown),
        cmocka_unit_test_teardown(test_zombie_farm, round_teardown),
        cmocka_unit_test_teardown(test_deaf, round_teardown),
        cmocka_unit_test_teardown(test_leader_exit, round_teardown),
    };
    srand((unsigned)time(NULL));
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
