/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_scale - reap latency against the number of tasks.  N sleeping
 * tasks (processes, or threads of one process) under one DM uid,
 * beside 0, 1,000 or 10,000 bystander processes under other uids of
 * our block; each rep kills a fresh set three ways,
 * interleaved: the bare kill (fork; setresuid; kill(-1)), the library
 * (xlreaper_reap, to a verified-empty uid) and the CLI.  For the bare
 * kill the time until our own kernel count reaches zero is kept too.
 * Tasks live in nurseries (child subreapers) so that zombies are reaped
 * at once; a last section shows what PID 1 does without one.
 *
 * kill(-1) walks every process on the system, and the verification
 * reads /proc/<pid>/status of every task, so both grow with the tasks
 * of the whole system, not only the uid's: the table gives that total.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define DOMID 1u
#define BYSTANDER_UIDS 10

enum { K_BARE, K_LIB, K_CLI, NUM_KILLS };
static const char *const kill_name[NUM_KILLS] = { "bare", "lib", "cli" };

static xlreaper_ctx *ctx;
static FILE *csv;
static char domidstr[16];

static const char *outcome_name(xlreaper_outcome o)
{
    switch (o) {
    case XLREAPER_OUTCOME_EMPTY: return "empty";
    case XLREAPER_OUTCOME_ZOMBIES: return "zombies";
    case XLREAPER_OUTCOME_REMAIN: return "remain";
    default: return "none";
    }
}

typedef struct {
    int64_t us;        /* to the method's return */
    int64_t empty_us;  /* to our own oracle's "empty", from the start */
    unsigned seen, rounds;
    const char *outcome;
} one_kill;

/* Kills uid's set once with method k; -1 if the method failed. */
static int kill_once(int k, uid_t uid, one_kill *o)
{
    uint64_t t0 = xlreaper__now_us();
    int64_t w;

    memset(o, 0, sizeof(*o));
    o->outcome = "-";
    if (k == K_BARE) {
        o->us = bench_barekill_fork(uid);
        if (o->us < 0)
            return -1;
    } else if (k == K_LIB) {
        xlreaper_reap_result res;
        int rc;
        xlreaper_reap_result_init(&res);
        rc = xlreaper_reap(ctx, NULL, DOMID, &res);
        o->us = (int64_t)(xlreaper__now_us() - t0);
        o->seen = res.tasks_seen;
        o->rounds = res.rounds;
        o->outcome = outcome_name(res.outcome);
        xlreaper_reap_result_dispose(&res);
        if (rc)
            fprintf(stderr, "bench_scale: xlreaper_reap: %s\n",
                    xlreaper_strerror(rc));
    } else {
        char *argv[] = { (char *)bench_cli(), "--config",
                         (char *)bench_config_path(), "kill", domidstr,
                         NULL };
        int st;
        o->us = bench_run(argv, NULL, 0, &st);
        if (o->us < 0)
            return -1;
        o->outcome = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exit0"
                                                          : "exit!=0";
    }
    /* Our own verdict: the kernel counts nothing under uid. */
    w = bench_wait_empty(uid, 60000000u, 500);
    o->empty_us = w < 0 ? -1 : (int64_t)(xlreaper__now_us() - t0);
    return 0;
}

static unsigned reps_for(unsigned n)
{
    unsigned r = bench_env("REPS", 7);

    if (n >= 10000)
        return r > 3 ? 3 : r;
    if (n >= 1000)
        return r > 5 ? 5 : r;
    return r;
}

/* Bystanders: `total` processes over BYSTANDER_UIDS uids. */
static bench_set bys[BYSTANDER_UIDS];
static unsigned bys_per_uid;

static int bystanders_start(unsigned total)
{
    bys_per_uid = total / BYSTANDER_UIDS;
    for (int i = 0; i < BYSTANDER_UIDS && total; i++)
        if (bench_set_start(&bys[i], BENCH_BYSTANDER_UID + i, BENCH_PROCS,
                            bys_per_uid, true, NULL))
            return -1;
    return 0;
}

/* 0 if every bystander still lives. */
static int bystanders_check(unsigned total)
{
    int bad = 0;

    for (int i = 0; i < BYSTANDER_UIDS && total; i++) {
        long c = bench_kernel_count(BENCH_BYSTANDER_UID + i);
        if (c != (long)bys_per_uid) {
            printf("!! bystander uid %u: %ld tasks, expected %u\n",
                   BENCH_BYSTANDER_UID + i, c, bys_per_uid);
            bad = 1;
        }
    }
    return bad;
}

static void bystanders_stop(unsigned total)
{
    for (int i = 0; i < BYSTANDER_UIDS && total; i++)
        bench_set_stop(&bys[i], 60000000u);
}

typedef struct {
    bench_samples us[NUM_KILLS], empty_us[NUM_KILLS];
    double system_tasks;
    unsigned n, bystanders;
    bench_kind kind;
    bool done;
} cell;

#define MAX_CELLS 64
static cell cells[MAX_CELLS];
static unsigned num_cells;

static void run_cell(bench_kind kind, unsigned n, unsigned bystanders)
{
    cell *c = &cells[num_cells++];
    uid_t uid = bench_dm_uid(DOMID);
    unsigned reps = reps_for(n);
    char why[256];

    c->kind = kind;
    c->n = n;
    c->bystanders = bystanders;
    if (bench_pids_reserve(n, why, sizeof(why))) {
        printf("SKIP %s n=%u bystanders=%u: %s\n",
               kind == BENCH_THREADS ? "threads" : "procs", n, bystanders,
               why);
        return;
    }
    for (unsigned r = 0; r < reps; r++) {
        for (int j = 0; j < NUM_KILLS; j++) {
            int k = (int)((j + r) % NUM_KILLS); /* rotate the order */
            one_kill o;
            bench_set s;
            long tasks;

            if (bench_set_start(&s, uid, kind, n, true, NULL))
                bench_die("cannot start %u tasks", n);
            tasks = bench_tasks_now();
            if (kill_once(k, uid, &o))
                bench_die("%s kill failed", kill_name[k]);
            if (bench_set_stop(&s, 60000000u))
                bench_die("uid %u did not empty", (unsigned)uid);
            bench_samples_add(&c->us[k], (double)o.us);
            bench_samples_add(&c->empty_us[k], (double)o.empty_us);
            c->system_tasks += (double)tasks / (reps * NUM_KILLS);
            fprintf(csv, "%s,%u,%u,%s,%u,%lld,%lld,%ld,%u,%u,%s\n",
                    kind == BENCH_THREADS ? "threads" : "procs",
                    bystanders, n, kill_name[k], r, (long long)o.us,
                    (long long)o.empty_us, tasks, o.seen, o.rounds,
                    o.outcome);
        }
    }
    fflush(csv);
    c->done = true;
    bench_pids_restore();
    printf("%-7s %5u %6u %8.0f | %8.2f %8.2f %8.2f | %8.2f %6.1f | "
           "%8.2f\n",
           kind == BENCH_THREADS ? "threads" : "procs", bystanders, n,
           c->system_tasks, bench_median(&c->us[K_BARE]) / 1000.0,
           bench_median(&c->us[K_LIB]) / 1000.0,
           bench_median(&c->us[K_CLI]) / 1000.0,
           bench_median(&c->empty_us[K_BARE]) / 1000.0,
           bench_median(&c->us[K_LIB]) / bench_median(&c->us[K_BARE]),
           (bench_q(&c->us[K_LIB], 0.9) - bench_q(&c->us[K_LIB], 0.1)) /
               1000.0);
}

/* How the library's time grows with the tasks on the system between
 * two cells of one kind and bystander level: t ~ tasks^e. */
static double growth(const cell *a, const cell *b)
{
    return log(bench_median(&b->us[K_LIB]) / bench_median(&a->us[K_LIB])) /
           log(b->system_tasks / a->system_tasks);
}

/* Without a nursery: the tasks are orphans, PID 1 reaps their zombies. */
static void no_nursery(FILE *sum)
{
    static const unsigned sizes[] = { 100, 1000 };
    uid_t uid = bench_dm_uid(DOMID);

    printf("\nwithout a nursery (zombies left to PID 1):\n");
    printf("%6s %-5s %10s %10s %-8s\n", "n", "kill", "return ms",
           "empty ms", "outcome");
    fprintf(sum, "\nWithout a nursery (zombies wait for PID 1):\n\n"
                 "| tasks | kill | returns after, ms | uid empty after, ms "
                 "| outcome |\n|---|---|---|---|---|\n");
    /* Each kill and the CLI's baseline, the bare killer exec'd
     * (bench_barekill), as in bench_race: the CLI's goal, 2x that
     * killer, holds with zombies left to a slow PID 1 too. */
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (int k = K_BARE; k <= NUM_KILLS; k++) {
            const char *name = k < NUM_KILLS ? kill_name[k] : "bare-exec";
            one_kill o;
            bench_set s;

            if (bench_set_start(&s, uid, BENCH_PROCS, sizes[i], false, NULL))
                bench_die("cannot start %u orphans", sizes[i]);
            if (k == NUM_KILLS) {
                char pet[16], us[16];
                char *argv[] = { (char *)bench_prog("bench_barekill"), pet,
                                 us, NULL };
                uint64_t t0 = xlreaper__now_us();
                int64_t w;
                int st;

                snprintf(pet, sizeof(pet), "%u", (unsigned)BENCH_PET);
                snprintf(us, sizeof(us), "%u", (unsigned)uid);
                memset(&o, 0, sizeof(o));
                o.outcome = "-";
                o.us = bench_run(argv, NULL, 0, &st);
                if (o.us < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
                    bench_die("bench_barekill failed");
                w = bench_wait_empty(uid, 60000000u, 500);
                o.empty_us = w < 0 ? -1 : (int64_t)(xlreaper__now_us() - t0);
            } else if (kill_once(k, uid, &o)) {
                bench_die("kill failed");
            }
            bench_set_stop(&s, 60000000u);
            printf("%6u %-5s %10.1f %10.1f %-8s\n", sizes[i], name,
                   (double)o.us / 1000.0, (double)o.empty_us / 1000.0,
                   o.outcome);
            fprintf(sum, "| %u | %s | %.1f | %.1f | %s |\n", sizes[i],
                    name, (double)o.us / 1000.0,
                    (double)o.empty_us / 1000.0, o.outcome);
            fprintf(csv, "procs-orphans,0,%u,%s,0,%lld,%lld,%ld,%u,%u,%s\n",
                    sizes[i], name, (long long)o.us,
                    (long long)o.empty_us, bench_tasks_now(), o.seen,
                    o.rounds, o.outcome);
        }
    }
}

int main(void)
{
    static const unsigned sizes[] = { 1, 10, 100, 1000, 10000 };
    static const unsigned byst[] = { 0, 1000, 10000 };
    static const bench_kind kinds[] = { BENCH_PROCS, BENCH_THREADS };
    unsigned max_n = bench_env("SCALE_MAX", 10000);
    uint64_t start = xlreaper__now_us();
    FILE *sum, *agg;

    bench_init("bench_scale");
    ctx = bench_ctx();
    snprintf(domidstr, sizeof(domidstr), "%u", DOMID);
    csv = bench_csv("scale", "kind,bystanders,n,kill,rep,us,empty_us,"
                             "system_tasks,tasks_seen,rounds,outcome");
    printf("# times in ms, medians; bare = fork+setresuid+kill(-1) (not "
           "verified), lib = xlreaper_reap (verified), cli = xl-reaper "
           "kill; bare->empty = bare kill until our kernel count is 0\n");
    printf("%-7s %5s %6s %8s | %8s %8s %8s | %8s %6s | %8s\n", "kind",
           "bystd", "n", "sys.tasks", "bare", "lib", "cli", "bare->0",
           "lib/bare", "lib p90-p10");

    for (size_t b = 0; b < sizeof(byst) / sizeof(byst[0]); b++) {
        char why[256];

        if (byst[b] > bench_env("BYST_MAX", 10000))
            continue;
        if (bench_pids_reserve(byst[b] + max_n, why, sizeof(why))) {
            printf("SKIP bystanders=%u: %s\n", byst[b], why);
            continue;
        }
        if (bystanders_start(byst[b]))
            bench_die("cannot start %u bystanders", byst[b]);
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
                if (sizes[i] <= max_n)
                    run_cell(kinds[k], sizes[i], byst[b]);
        if (bystanders_check(byst[b]))
            printf("!! bystanders were lost: the kill reached other uids\n");
        else if (byst[b])
            printf("# all %u bystanders alive after the runs above\n",
                   byst[b]);
        bystanders_stop(byst[b]);
        bench_pids_restore();
    }

    sum = bench_results_file("scale.summary.md");
    fprintf(sum, "Reap latency against tasks (medians, ms; sys = tasks on "
                 "the whole system during the kill):\n\n"
                 "| kind | bystanders | n | sys | bare kill(-1) | "
                 "xlreaper_reap | xl-reaper kill | lib / bare |\n"
                 "|---|---|---|---|---|---|---|---|\n");
    for (unsigned i = 0; i < num_cells; i++) {
        const cell *c = &cells[i];
        if (!c->done)
            continue;
        fprintf(sum, "| %s | %u | %u | %.0f | %.2f | %.2f | %.2f | %.1f |\n",
                c->kind == BENCH_THREADS ? "threads" : "procs", c->bystanders,
                c->n, c->system_tasks, bench_median(&c->us[K_BARE]) / 1000.0,
                bench_median(&c->us[K_LIB]) / 1000.0,
                bench_median(&c->us[K_CLI]) / 1000.0,
                bench_median(&c->us[K_LIB]) / bench_median(&c->us[K_BARE]));
    }
    agg = bench_csv("scale_summary",
                    "kind,bystanders,n,system_tasks,bare_ms,bare_p10,"
                    "bare_p90,lib_ms,lib_p10,lib_p90,cli_ms,cli_p10,cli_p90,"
                    "bare_empty_ms");
    for (unsigned i = 0; i < num_cells; i++) {
        const cell *c = &cells[i];
        if (!c->done)
            continue;
        fprintf(agg, "%s,%u,%u,%.0f", c->kind == BENCH_THREADS ? "threads"
                                                               : "procs",
                c->bystanders, c->n, c->system_tasks);
        for (int k = 0; k < NUM_KILLS; k++)
            fprintf(agg, ",%.3f,%.3f,%.3f", bench_median(&c->us[k]) / 1000.0,
                    bench_q(&c->us[k], 0.1) / 1000.0,
                    bench_q(&c->us[k], 0.9) / 1000.0);
        fprintf(agg, ",%.3f\n", bench_median(&c->empty_us[K_BARE]) / 1000.0);
    }
    fclose(agg);
    /* Growth: from the smallest to the largest system in each series. */
    printf("\ngrowth of xlreaper_reap with the tasks on the system "
           "(t ~ tasks^e; e <= 1 is linear or better):\n");
    fprintf(sum, "\nGrowth of xlreaper_reap with the tasks on the system "
                 "(t ~ tasks^e between consecutive sizes):\n\n");
    for (unsigned i = 0; i + 1 < num_cells; i++) {
        const cell *a = &cells[i], *b = &cells[i + 1];
        if (!a->done || !b->done || a->kind != b->kind ||
            a->bystanders != b->bystanders || b->n < 1000)
            continue;
        printf("  %-7s bystanders %5u: n %5u -> %5u (sys %6.0f -> %6.0f): "
               "e = %.2f\n",
               a->kind == BENCH_THREADS ? "threads" : "procs", a->bystanders,
               a->n, b->n, a->system_tasks, b->system_tasks, growth(a, b));
        fprintf(sum, "- %s, %u bystanders, n %u -> %u (system %.0f -> %.0f "
                     "tasks): e = %.2f\n",
                a->kind == BENCH_THREADS ? "threads" : "procs", a->bystanders,
                a->n, b->n, a->system_tasks, b->system_tasks, growth(a, b));
    }
    no_nursery(sum);
    fclose(sum);
    fclose(csv);
    printf("# bench_scale: %.0f s\n",
           (double)(xlreaper__now_us() - start) / 1e6);
    xlreaper_ctx_free(ctx);
    return 0;
}
