/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_race - every way to kill a uid, against the same fork racer, in
 * the same run, and the goal's ratios: the library's verified kill
 * within 1.5x of a bare forked kill, the CLI within 2x of a bare
 * exec'd killer.
 *
 * Each trial starts a fresh fork racer under one DM uid, in a nursery
 * (a child subreaper, so zombies do not wait for a slow PID 1) and in a
 * cgroup v2 of our own, lets it race, applies one method and takes the
 * method's own verdict ("empty", or none within the budget).  Then the
 * truth, from two witnesses that do not depend on the method: the
 * kernel's per-user task count reaches zero (a live racer always has a
 * task), and the racer's birth counter (a shared page the racer
 * increments on every fork) stops.  A method wins a trial when it said
 * "empty" and the uid really was.  Whatever a method leaves is cleaned
 * up with the bare uid kill before the next trial.
 *
 * The loops an operator would run by hand (pkill, kill(-pgid), a /proc
 * scan) run in a child with the killer's credentials (ruid pet, euid
 * the DM uid): as root, a pid or pgid recycled between their scan and
 * their kill would be some other user's process.  It changes nothing
 * in the race they run.
 *
 * Methods run in a shuffled order in every round, on both racers: the
 * plain one and one whose children each take a new process group.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define DOMID 2u
/* Rounds per block for the spread of the goal's ratios. */
#define GOAL_BLOCK 10

enum {
    M_BARE_FORK,
    M_BARE_EXEC,
    M_LIB,
    M_CLI,
    M_CGROUP,
    M_PKILL,
    M_PGID,
    M_PROCSCAN,
    NUM_METHODS
};

static const char *const method_name[NUM_METHODS] = {
    "bare-kill-fork", "bare-kill-exec", "reaper-lib", "reaper-cli",
    "cgroup.kill",    "pkill-loop",     "kill-pgid-loop", "proc-scan-loop",
};

static const char *const method_desc[NUM_METHODS] = {
    "fork; setresuid(pet,uid,0); kill(-1) (unverified)",
    "fork+exec bench_barekill (unverified)",
    "xlreaper_reap(), ctx loaded: lock, kill, verify",
    "fork+exec xl-reaper kill DOMID",
    "write 1 to cgroup.kill; wait populated 0",
    "pkill -9 -U uid until it matches nothing",
    "kill(-pgid) until ESRCH",
    "scan /proc, kill each task of uid, until a scan finds none",
};

enum { R_PLAIN, R_PGID, NUM_RACERS };
static const char *const racer_name[NUM_RACERS] = { "plain", "pgid-hop" };

typedef struct {
    bool claimed;     /* the method said "empty" */
    uint64_t us;      /* from the start to its verdict (or budget) */
    unsigned iters;   /* loop iterations or reaper rounds */
} verdict;

static xlreaper_ctx *ctx;
static const char *cgroup;
static uint64_t budget_us;
static bool slow_init;
static char uidstr[16], domidstr[16];

/* ---------- the operator loops, in a restricted child ---------- */

static bool scan_and_kill(uid_t uid, unsigned *found_r)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    unsigned found = 0;

    if (!d)
        return false;
    while ((de = readdir(d))) {
        char path[300], buf[4096], *p;
        unsigned long ids[3];
        char state = '?';
        ssize_t r;
        int fd;

        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        r = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        if ((p = strstr(buf, "\nState:")))
            state = p[8];
        p = strstr(buf, "\nUid:");
        if (!p || sscanf(p + 5, "%lu %lu %lu", &ids[0], &ids[1], &ids[2]) != 3)
            continue;
        /* The real uid, as pkill -U and ps -U match; not ourselves,
         * whose euid is uid. */
        if (ids[0] != uid)
            continue;
        if (state == 'Z' || state == 'X')
            continue;
        found++;
        kill((pid_t)strtol(de->d_name, NULL, 10), SIGKILL);
    }
    closedir(d);
    *found_r = found;
    return true;
}

/* The loop of method m; exit status 0: it said empty, 1: budget out. */
static void __attribute__((noreturn))
operator_child(int m, uid_t uid, pid_t pgid, uint64_t deadline, int wfd)
{
    unsigned iters = 0;
    int said = 1;

    if (syscall(SYS_setresuid, BENCH_PET, uid, 0))
        _exit(3);
    while (xlreaper__now_us() < deadline) {
        iters++;
        if (m == M_PKILL) {
            char *argv[] = { "/usr/bin/pkill", "-9", "-U", uidstr, NULL };
            int st;
            if (bench_run(argv, NULL, 0, &st) < 0)
                _exit(3);
            if (WIFEXITED(st) && WEXITSTATUS(st) == 1) {
                said = 0; /* "no process matched" */
                break;
            }
        } else if (m == M_PGID) {
            if (kill(-pgid, SIGKILL) < 0 && errno == ESRCH) {
                said = 0;
                break;
            }
        } else {
            unsigned found;
            if (!scan_and_kill(uid, &found))
                _exit(3);
            if (!found) {
                said = 0;
                break;
            }
        }
    }
    (void)!write(wfd, &iters, sizeof(iters));
    _exit(said);
}

static int run_operator(int m, uid_t uid, pid_t pgid, verdict *v)
{
    uint64_t t0 = xlreaper__now_us();
    int p[2], status;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        operator_child(m, uid, pgid, t0 + budget_us, p[1]);
    close(p[1]);
    if (read(p[0], &v->iters, sizeof(v->iters)) != sizeof(v->iters))
        v->iters = 0;
    close(p[0]);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    v->us = xlreaper__now_us() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
        return -1;
    v->claimed = WEXITSTATUS(status) == 0;
    return 0;
}

/* ---------- cgroup.kill ---------- */

static int cgroup_populated(int fd)
{
    char buf[256], *p;
    ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);

    if (r <= 0)
        return -1;
    buf[r] = '\0';
    p = strstr(buf, "populated ");
    return p ? p[10] == '1' : -1;
}

static int run_cgroup(verdict *v)
{
    char path[300];
    uint64_t t0 = xlreaper__now_us();
    int kfd, efd, rc = -1;

    snprintf(path, sizeof(path), "%s/cgroup.kill", cgroup);
    kfd = open(path, O_WRONLY | O_CLOEXEC);
    snprintf(path, sizeof(path), "%s/cgroup.events", cgroup);
    efd = open(path, O_RDONLY | O_CLOEXEC);
    if (kfd < 0 || efd < 0)
        goto out;
    if (write(kfd, "1", 1) != 1)
        goto out;
    v->iters = 1;
    for (;;) {
        int pop = cgroup_populated(efd);
        if (pop < 0)
            goto out;
        if (!pop) {
            v->claimed = true;
            break;
        }
        if (xlreaper__now_us() - t0 > budget_us)
            break;
        xlreaper__sleep_us(20);
    }
    rc = 0;
out:
    v->us = xlreaper__now_us() - t0;
    if (kfd >= 0)
        close(kfd);
    if (efd >= 0)
        close(efd);
    return rc;
}

/* ---------- one trial ---------- */

static int run_method(int m, const bench_set *s, verdict *v)
{
    memset(v, 0, sizeof(*v));
    switch (m) {
    case M_BARE_FORK: {
        int64_t us = bench_barekill_fork(s->uid);
        if (us < 0)
            return -1;
        v->us = (uint64_t)us;
        v->claimed = true; /* it says nothing; the truth decides */
        v->iters = 1;
        return 0;
    }
    case M_BARE_EXEC: {
        char pet[16];
        char *argv[] = { (char *)bench_prog("bench_barekill"), pet, uidstr,
                         NULL };
        int st;
        int64_t us;
        snprintf(pet, sizeof(pet), "%u", BENCH_PET);
        us = bench_run(argv, NULL, 0, &st);
        if (us < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            return -1;
        v->us = (uint64_t)us;
        v->claimed = true;
        v->iters = 1;
        return 0;
    }
    case M_LIB: {
        xlreaper_reap_result res;
        uint64_t t0 = xlreaper__now_us();
        int rc;
        xlreaper_reap_result_init(&res);
        rc = xlreaper_reap(ctx, NULL, DOMID, &res);
        v->us = xlreaper__now_us() - t0;
        v->claimed = rc == 0;
        v->iters = res.rounds;
        xlreaper_reap_result_dispose(&res);
        return 0;
    }
    case M_CLI: {
        char *argv[] = { (char *)bench_cli(), "--config",
                         (char *)bench_config_path(), "kill", domidstr,
                         NULL };
        int st;
        int64_t us = bench_run(argv, NULL, 0, &st);
        if (us < 0)
            return -1;
        v->us = (uint64_t)us;
        v->claimed = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        v->iters = 1;
        return 0;
    }
    case M_CGROUP:
        return run_cgroup(v);
    default:
        return run_operator(m, s->uid, s->leader, v);
    }
}

typedef struct {
    unsigned trials, wins, false_empty, timeouts, errors;
    bench_samples win_us;   /* time to verdict, winning trials */
    bench_samples births;   /* racer births during the method */
    bench_samples iters;
    bench_samples all_us;   /* per round index, for paired ratios */
} tally;

static tally tallies[NUM_RACERS][NUM_METHODS];

/*
 * The truth after a verdict: dead when the kernel counts no task of uid
 * within the window; alive at once if the racer keeps being born (a
 * task that forked just before SIGKILL may still count one birth).
 */
static bool truly_dead(const bench_set *s, uint64_t births_at_verdict,
                       uint64_t *after_r)
{
    uint64_t t0 = xlreaper__now_us();
    bool dead = false;

    for (;;) {
        uint64_t b = __atomic_load_n(s->births, __ATOMIC_RELAXED);
        if (bench_uid_empty(s->uid) == 1) {
            dead = true;
            break;
        }
        if (b - births_at_verdict >= 10 || xlreaper__now_us() - t0 > 1000000u)
            break;
        xlreaper__sleep_us(1000);
    }
    *after_r = __atomic_load_n(s->births, __ATOMIC_RELAXED) -
               births_at_verdict;
    return dead;
}

/* $BENCH_METHODS: a comma-separated list of method names, or all. */
static bool selected(int m)
{
    const char *want = getenv("BENCH_METHODS");
    size_t len = strlen(method_name[m]);

    if (!want || !*want)
        return true;
    for (const char *p = want; (p = strstr(p, method_name[m])); p += len)
        if ((p == want || p[-1] == ',') && (p[len] == ',' || !p[len]))
            return true;
    return false;
}

static void shuffle(int *a, int n, unsigned *seed)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rand_r(seed) % (unsigned)(i + 1)), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void print_ms_stats(FILE *f, const bench_samples *s)
{
    if (!s->n) {
        fprintf(f, "%27s", "-");
        return;
    }
    fprintf(f, "%8.2f [%7.2f - %7.2f]", bench_median(s) / 1000.0,
            bench_q(s, 0.1) / 1000.0, bench_q(s, 0.9) / 1000.0);
}

/* Ratio of medians of a over b in each block of `block` trials; min and
 * max over the blocks. */
static void block_ratios(const bench_samples *a, const bench_samples *b,
                         unsigned block, double *lo, double *hi, FILE *out,
                         const char *label)
{
    unsigned k = 0;

    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t start = 0; start + block <= a->n && start + block <= b->n;
         start += block) {
        bench_samples x = { a->v + start, block, block };
        bench_samples y = { b->v + start, block, block };
        double r = bench_median(&x) / bench_median(&y);
        if (r < *lo)
            *lo = r;
        if (r > *hi)
            *hi = r;
        fprintf(out, "%s,%u,%.3f\n", label, k++, r);
    }
}

int main(void)
{
    unsigned trials, seed = 9;
    int order[NUM_METHODS];
    FILE *csv, *sum, *agg, *goal;
    uid_t uid = bench_dm_uid(DOMID);
    uint64_t start;

    bench_init("bench_race");
    trials = bench_env("TRIALS", 100);
    /* BENCH_SLOW_INIT=1: no nursery, so the racer's zombies wait for
     * this machine's PID 1 (slow: docs/facts.md F5), as on a host whose init
     * reaps late. */
    slow_init = bench_env("SLOW_INIT", 0) != 0;
    budget_us = (uint64_t)bench_env("BUDGET_MS", 500) * 1000u;
    snprintf(uidstr, sizeof(uidstr), "%u", (unsigned)uid);
    snprintf(domidstr, sizeof(domidstr), "%u", DOMID);
    ctx = bench_ctx();
    cgroup = bench_cgroup();
    if (!cgroup)
        printf("# no cgroup v2 with cgroup.kill: that method is skipped\n");
    printf("# %u trials per racer and method, budget %llu ms per trial, "
           "uid %s, cgroup %s\n",
           trials, (unsigned long long)(budget_us / 1000), uidstr,
           cgroup ? cgroup : "none");
    for (int m = 0; m < NUM_METHODS; m++)
        printf("#   %-15s %s\n", method_name[m], method_desc[m]);

    csv = bench_csv("race",
                    "racer,method,trial,claimed,dead,win,us,births,"
                    "births_after,iters");
    for (int m = 0; m < NUM_METHODS; m++)
        order[m] = m;
    start = xlreaper__now_us();

    for (unsigned t = 0; t < trials; t++) {
        for (int r = 0; r < NUM_RACERS; r++) {
            shuffle(order, NUM_METHODS, &seed);
            for (int k = 0; k < NUM_METHODS; k++) {
                int m = order[k];
                tally *ty = &tallies[r][m];
                uint64_t b0, b1, after;
                bench_set s;
                verdict v;
                bool dead;

                if ((m == M_CGROUP && !cgroup) || !selected(m))
                    continue;
                if (bench_set_start(&s, uid,
                                    r == R_PGID ? BENCH_RACER_PGID
                                                : BENCH_RACER,
                                    1, !slow_init, cgroup))
                    bench_die("cannot start the racer");
                b0 = __atomic_load_n(s.births, __ATOMIC_RELAXED);
                if (run_method(m, &s, &v)) {
                    ty->errors++;
                    fprintf(stderr, "bench_race: %s failed to run\n",
                            method_name[m]);
                    bench_set_stop(&s, 30000000u);
                    continue;
                }
                b1 = __atomic_load_n(s.births, __ATOMIC_RELAXED);
                dead = truly_dead(&s, b1, &after);
                ty->trials++;
                if (v.claimed && dead) {
                    ty->wins++;
                    bench_samples_add(&ty->win_us, (double)v.us);
                } else if (v.claimed) {
                    ty->false_empty++;
                } else {
                    ty->timeouts++;
                }
                bench_samples_add(&ty->all_us, (double)v.us);
                bench_samples_add(&ty->births, (double)(b1 - b0));
                bench_samples_add(&ty->iters, v.iters);
                fprintf(csv, "%s,%s,%u,%d,%d,%d,%llu,%llu,%llu,%u\n",
                        racer_name[r], method_name[m], t, v.claimed, dead,
                        v.claimed && dead, (unsigned long long)v.us,
                        (unsigned long long)(b1 - b0),
                        (unsigned long long)after, v.iters);
                if (bench_set_stop(&s, 30000000u))
                    bench_die("uid %s did not empty after a trial", uidstr);
            }
        }
        if ((t + 1) % 10 == 0)
            fprintf(stderr, "bench_race: %u/%u rounds, %.0f s\n", t + 1,
                    trials, (double)(xlreaper__now_us() - start) / 1e6);
    }
    fclose(csv);

    agg = bench_csv("race_summary", "racer,method,wins,trials,false_empty,"
                                    "timeouts,med_ms,p10_ms,p90_ms,"
                                    "births_med");
    sum = bench_results_file("race.summary.md");
    fprintf(sum, "Against the alternatives (%u trials each, budget %llu ms)"
                 "\n\n",
            trials, (unsigned long long)(budget_us / 1000));
    fprintf(sum, "| racer | method | wins | said empty, was not | "
                 "no verdict in budget | time to verdict, ms: median "
                 "[p10-p90] of wins | racer births meanwhile, median |\n"
                 "|---|---|---|---|---|---|---|\n");
    printf("\n%-8s %-15s %9s %6s %7s %27s %9s %7s\n", "racer", "method",
           "wins", "false", "timeout", "verdict ms, wins [p10-p90]",
           "births", "iters");
    for (int r = 0; r < NUM_RACERS; r++) {
        for (int m = 0; m < NUM_METHODS; m++) {
            tally *ty = &tallies[r][m];
            if (!ty->trials)
                continue;
            printf("%-8s %-15s %4u/%-4u %6u %7u ", racer_name[r],
                   method_name[m], ty->wins, ty->trials, ty->false_empty,
                   ty->timeouts);
            print_ms_stats(stdout, &ty->win_us);
            printf(" %9.0f %7.0f\n", bench_median(&ty->births),
                   bench_median(&ty->iters));
            fprintf(sum, "| %s | %s | %u/%u | %u | %u | ", racer_name[r],
                    method_name[m], ty->wins, ty->trials, ty->false_empty,
                    ty->timeouts);
            if (ty->win_us.n)
                fprintf(sum, "%.2f [%.2f-%.2f]",
                        bench_median(&ty->win_us) / 1000.0,
                        bench_q(&ty->win_us, 0.1) / 1000.0,
                        bench_q(&ty->win_us, 0.9) / 1000.0);
            else
                fprintf(sum, "-");
            fprintf(sum, " | %.0f |\n", bench_median(&ty->births));
            fprintf(agg, "%s,%s,%u,%u,%u,%u,%.3f,%.3f,%.3f,%.0f\n",
                    racer_name[r], method_name[m], ty->wins, ty->trials,
                    ty->false_empty, ty->timeouts,
                    bench_median(&ty->win_us) / 1000.0,
                    bench_q(&ty->win_us, 0.1) / 1000.0,
                    bench_q(&ty->win_us, 0.9) / 1000.0,
                    bench_median(&ty->births));
        }
    }
    fclose(agg);

    /* The goals: the library's verified kill within 1.5x of the
     * bare kill forked the same way, the CLI within 2x of the bare
     * killer exec'd; CLI over forked bare is information only.  Ratios
     * of the medians of wins, as RESULTS.md's headline takes them (a
     * trial without a verdict has no time to the verdict), and their
     * spread over blocks of GOAL_BLOCK rounds of all trials. */
    fprintf(sum,
            "\nGoal ratios (median of wins over median of wins, same "
            "run; spread = min-max over blocks of %d rounds of all "
            "trials):\n\n",
            GOAL_BLOCK);
    printf("\ngoal: verified kill / bare kill started the same way\n");
    goal = bench_csv("race_goal", "racer,pair,block,ratio");
    for (int r = 0; r < NUM_RACERS; r++) {
        static const struct {
            int num, den;
            double target; /* 0: information only */
        } pairs[] = { { M_LIB, M_BARE_FORK, 1.5 },
                      { M_CLI, M_BARE_EXEC, 2.0 },
                      { M_CLI, M_BARE_FORK, 0 } };
        for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
            tally *a = &tallies[r][pairs[i].num];
            tally *b = &tallies[r][pairs[i].den];
            double num = bench_median(&a->win_us);
            double den = bench_median(&b->win_us);
            double ratio = num / den;
            double lo, hi;
            char label[96], verdict[32];
            snprintf(label, sizeof(label), "%s,%s/%s", racer_name[r],
                     method_name[pairs[i].num], method_name[pairs[i].den]);
            block_ratios(&a->all_us, &b->all_us, GOAL_BLOCK, &lo, &hi, goal,
                         label);
            if (pairs[i].target > 0)
                snprintf(verdict, sizeof(verdict), "target <= %.1f: %s",
                         pairs[i].target,
                         ratio <= pairs[i].target ? "met" : "MISSED");
            else
                snprintf(verdict, sizeof(verdict), "information");
            printf("  %-8s %-11s / %-15s = %5.2f  (blocks %.2f-%.2f; "
                   "%.2f ms / %.2f ms) %s\n",
                   racer_name[r], method_name[pairs[i].num],
                   method_name[pairs[i].den], ratio, lo, hi, num / 1000.0,
                   den / 1000.0, verdict);
            fprintf(sum,
                    "- %s racer: %s / %s = **%.2f** (blocks %.2f-%.2f;"
                    " %.2f ms / %.2f ms; %s)\n",
                    racer_name[r], method_name[pairs[i].num],
                    method_name[pairs[i].den], ratio, lo, hi, num / 1000.0,
                    den / 1000.0, verdict);
        }
    }
    fclose(sum);
    fclose(goal);
    printf("# bench_race: %.0f s\n",
           (double)(xlreaper__now_us() - start) / 1e6);
    xlreaper_ctx_free(ctx);
    return 0;
}
