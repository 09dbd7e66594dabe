/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_lockflood - one DM that fills the host's table of file locks
 * must not slow the other domains down.  While a process under a DM
 * uid of the benchmark's block holds N one-byte F_RDLCK POSIX locks on
 * memfds (N = BENCH_FLOOD_LOCKS, default 100,000), four things are
 * timed, each against the same thing with no flood in the same run.
 * Nothing bounds N: the kernel ignores RLIMIT_LOCKS, and since Linux
 * 6.3 file locks are not charged to a memory cgroup; a DM under the
 * spawn's own restrictions (seccomp, no_new_privs, RLIMIT_NPROC and
 * RLIMIT_NOFILE, no file system) makes 100,000 in about half a second.
 *
 *
 *   kill    `xl-reaper kill` of another, empty domain (p99)
 *   spawn   `xl-reaper spawn` of another domain, in place, of a static
 *           program that exits at once (p99)
 *   census  xl-reaperd's start, to its log line for the start sweep of
 *           the whole range (by our clock, and the time the daemon
 *           itself reports), against the test suite's xenstored with
 *           the flooding domain live
 *   audit   the library's audit of the flooding DM (declared live
 *           through the audit's test hooks: no Xen here), under a
 *           deadline: its time, whether it ended within the deadline,
 *           how many checks could not answer, and whether a check names
 *           the DM's locks
 *
 * Goal: each p99 (census: the median) under the flood at most 2x its
 * quiet one, no lock timeout, and the audit within its deadline with
 * every check answered and the DM's locks flagged (a check named
 * "...lock..." that fails, or a failure whose reason says "file lock").
 * The calls run one after another: no other reaper runs meanwhile.  The config is the default otherwise
 * (lock_timeout_ms 10000), so a lock timeout shows as exit 2.
 *
 * A flooded measurement may take seconds per call on a lock that reads
 * a table the DM grows: each stops after BENCH_FLOOD_BUDGET_S (60)
 * seconds, and says how many of its calls ran (a cut measurement is a
 * missed goal).  BENCH_FLOOD_REPS calls of kill and spawn (50), of the
 * audit (5), BENCH_FLOOD_CENSUS_REPS daemon starts (3).
 *
 * Output: lockflood.csv (one row per call), lockflood.summary.md, and
 * on stdout one "metric" line per measurement for bench/compare.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "xlreaper_audit_internal.h"
#include "xlrt_daemon.h"

#define FLOOD_DOMID 400u /* the DM that holds the locks */
#define KILL_DOMID 401u  /* the other domain killed */
#define SPAWN_DOMID 402u /* the other domain spawned */
/* Non-adjacent one-byte locks of one kind do not merge, so each is an
 * entry of its own; this many per memfd keeps each inode's list short
 * (the flood is made fast) and the descriptors under RLIMIT_NOFILE. */
#define LOCKS_PER_FD 128u

enum { W_KILL, W_SPAWN, W_CENSUS, W_AUDIT, NUM_WHAT };
static const char *const what_name[NUM_WHAT] = { "kill", "spawn", "census",
                                                 "audit" };
enum { P_QUIET, P_FLOOD, NUM_PHASE };
static const char *const phase_name[NUM_PHASE] = { "quiet", "flood" };

typedef struct {
    bench_samples ms;
    unsigned calls, wanted, failed, lock_timeouts;
    bool cut;      /* the budget ended it */
    double cut_ms; /* a call the budget ended: how long it had run */
    /* census: the daemon's own figure; audit: its answers */
    bench_samples own_ms;
    unsigned over_deadline, lock_flags, checks;
    unsigned unanswered; /* the most checks one audit could not make */
} measure;

static measure m[NUM_PHASE][NUM_WHAT];
static char config[512], dconfig[512], sock[512], walk[512], prog[512];
static FILE *csv;
static pid_t flooder = -1;
static uint64_t budget_us;

/* ---------- the flooding DM ---------- */

static void flooder_kill(void)
{
    int status;

    if (flooder <= 0)
        return;
    kill(flooder, SIGKILL); /* our child, by its pid */
    while (waitpid(flooder, &status, 0) < 0 && errno == EINTR)
        ;
    flooder = -1;
}

/* In the child: the DM's ids, then the locks; "N\n" on fd once made. */
static void __attribute__((noreturn)) flood(uid_t uid, unsigned n, int fd)
{
    unsigned nfds = (n + LOCKS_PER_FD - 1) / LOCKS_PER_FD, made = 0;
    struct rlimit rl;
    char line[32];

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < nfds + 64) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, uid, uid, uid) ||
        syscall(SYS_setresuid, uid, uid, uid))
        _exit(125);
    /* Cleared by the change of ids (docs/facts.md F14): set after it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (unsigned f = 0; f < nfds && made < n; f++) {
        int mfd = (int)syscall(SYS_memfd_create, "flood", 0);

        if (mfd < 0)
            break;
        for (unsigned j = 0; j < LOCKS_PER_FD && made < n; j++) {
            struct flock fl = { .l_type = F_RDLCK,
                                .l_whence = SEEK_SET,
                                .l_start = 2 * (off_t)j,
                                .l_len = 1 };
            if (fcntl(mfd, F_SETLK, &fl) < 0)
                break;
            made++;
        }
    }
    snprintf(line, sizeof(line), "%u\n", made);
    (void)!write(fd, line, strlen(line));
    close(fd);
    for (;;)
        pause();
}

static unsigned flooder_start(unsigned n)
{
    char line[32] = "";
    uint64_t t0 = xlreaper__now_us();
    int p[2];
    ssize_t r;

    if (pipe2(p, O_CLOEXEC) < 0)
        bench_die("pipe: %s", strerror(errno));
    flooder = fork();
    if (flooder < 0)
        bench_die("fork: %s", strerror(errno));
    if (flooder == 0) {
        close(p[0]);
        flood(bench_dm_uid(FLOOD_DOMID), n, p[1]);
    }
    close(p[1]);
    while ((r = read(p[0], line, sizeof(line) - 1)) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (r <= 0)
        bench_die("the flooding DM did not start");
    line[r] = '\0';
    printf("# the DM of domid %u (pid %ld) holds %u file locks, made in "
           "%.2f s\n",
           FLOOD_DOMID, (long)flooder, (unsigned)strtoul(line, NULL, 10),
           (double)(xlreaper__now_us() - t0) / 1e6);
    return (unsigned)strtoul(line, NULL, 10);
}

/* Lines of /proc/locks, read only when the table is small again. */
static long proc_locks_lines(void)
{
    FILE *f = fopen("/proc/locks", "re");
    long n = 0;
    int c;

    if (!f)
        return -1;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* ---------- the measurements ---------- */

static void record(int ph, int w, unsigned rep, double ms, int code)
{
    measure *x = &m[ph][w];

    bench_samples_add(&x->ms, ms);
    x->calls++;
    x->failed += code != 0;
    x->lock_timeouts += code == 2;
    fprintf(csv, "%s,%s,%u,%.0f,%d\n", phase_name[ph], what_name[w], rep,
            ms * 1000.0, code);
}

static int run_cli(char **argv, double *ms)
{
    int status = 0;
    int64_t us = bench_run(argv, NULL, 0, &status);

    if (us < 0)
        bench_die("running %s", argv[0]);
    *ms = (double)us / 1000.0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* kill and spawn, alternated, reps of each or until the budget. */
static void cli_calls(int ph, unsigned reps)
{
    char kd[16], sd[16];
    char *kill_argv[] = {
        (char *)bench_cli(), "--config", config, "kill", kd, NULL
    };
    char *spawn_argv[] = {
        (char *)bench_cli(), "--config", config, "spawn", sd, "--", prog, NULL
    };
    uint64_t t0 = xlreaper__now_us();

    snprintf(kd, sizeof(kd), "%u", KILL_DOMID);
    snprintf(sd, sizeof(sd), "%u", SPAWN_DOMID);
    m[ph][W_KILL].wanted = m[ph][W_SPAWN].wanted = reps;
    if (ph == P_QUIET) {
        /* Not timed: the first calls load the page cache. */
        for (int i = 0; i < 3; i++) {
            double ms;
            run_cli(kill_argv, &ms);
            run_cli(spawn_argv, &ms);
        }
    }
    for (unsigned r = 0; r < reps; r++) {
        double ms;
        int code;

        if (xlreaper__now_us() - t0 > budget_us) {
            m[ph][W_KILL].cut = m[ph][W_SPAWN].cut = true;
            break;
        }
        code = run_cli(kill_argv, &ms);
        record(ph, W_KILL, r, ms, code);
        code = run_cli(spawn_argv, &ms);
        record(ph, W_SPAWN, r, ms, code);
        xlreaper__sleep_us(10000); /* calls now and then, not a storm */
    }
}

/* The daemon's start, to the end of its start sweep. */
static void census_calls(int ph, unsigned reps)
{
    measure *x = &m[ph][W_CENSUS];
    uint64_t t0 = xlreaper__now_us();

    x->wanted = reps;
    for (unsigned r = 0; r < reps; r++) {
        static const char needle[] = "sweep (whole range";
        char dir[600], *log = NULL, *hit;
        uint64_t left, s0;
        xlrt_daemon dm;
        double own = -1;
        bool ended;
        FILE *f;

        if (xlreaper__now_us() - t0 > budget_us) {
            x->cut = true;
            break;
        }
        left = budget_us - (xlreaper__now_us() - t0);
        snprintf(dir, sizeof(dir), "%s/daemon-%s-%u", bench_tmpdir(),
                 phase_name[ph], r);
        if (mkdir(dir, 0700) < 0)
            bench_die("%s: %s", dir, strerror(errno));
        s0 = xlreaper__now_us();
        if (xlrt_daemon_start(&dm, dir, dconfig, sock))
            bench_die("could not start xl-reaperd");
        ended = xlrt_daemon_wait_log(&dm, needle,
                                     (unsigned)(left / 1000u) + 1000u) == 0;
        if (!ended) {
            /* Cut: what it took so far is a lower bound, not a time. */
            x->cut = true;
            x->cut_ms = (double)(xlreaper__now_us() - s0) / 1000.0;
            xlrt_daemon_kill(&dm);
            xlrt_daemon_dispose(&dm);
            break;
        }
        record(ph, W_CENSUS, r, (double)(xlreaper__now_us() - s0) / 1000.0, 0);
        f = fopen(dm.log, "re");
        if (f) {
            size_t len = 0;
            if (getdelim(&log, &len, '\0', f) < 0) {
                free(log);
                log = NULL;
            }
            fclose(f);
        }
        hit = log ? strstr(log, needle) : NULL;
        if (hit && strstr(hit, "done in "))
            sscanf(strstr(hit, "done in "), "done in %lf ms", &own);
        if (own >= 0)
            bench_samples_add(&x->own_ms, own);
        free(log);
        if (xlrt_daemon_stop(&dm) < 0)
            x->failed++;
        xlrt_daemon_dispose(&dm);
    }
}

static int hook_live(void *opaque, uint32_t **domids_r, unsigned *num_r)
{
    (void)opaque;
    *domids_r = malloc(sizeof(uint32_t));
    if (!*domids_r)
        return XLREAPER_ERROR_NOMEM;
    (*domids_r)[0] = FLOOD_DOMID;
    *num_r = 1;
    return 0;
}

static int hook_dm_pid(void *opaque, uint32_t domid, long *pid_r)
{
    (void)opaque;
    if (domid != FLOOD_DOMID)
        return 0;
    *pid_r = (long)flooder;
    return 1;
}

static int hook_forks(void *opaque, uint64_t *forks_r)
{
    (void)opaque;
    *forks_r = 1; /* quiet passes: other users' forks are not measured */
    return 0;
}

static void audit_calls(xlreaper_ctx *ctx, int ph, unsigned reps,
                        unsigned deadline_ms)
{
    const char *roots[2] = { walk, NULL };
    measure *x = &m[ph][W_AUDIT];
    xlreaper__audit_hooks h;
    uint64_t t0 = xlreaper__now_us();

    memset(&h, 0, sizeof(h));
    h.live_domids = hook_live;
    h.dm_pid = hook_dm_pid;
    h.forks = hook_forks;
    h.sweep_max_domid = 64;
    h.setid_roots = roots;
    x->wanted = reps;
    for (unsigned r = 0; r < reps; r++) {
        xlreaper_audit_opts o;
        xlreaper_audit_result res;
        unsigned unanswered = 0, flags = 0;
        uint64_t a0;
        int rc;

        if (xlreaper__now_us() - t0 > budget_us) {
            x->cut = true;
            break;
        }
        xlreaper_audit_opts_init(&o);
        o.deadline_ms = deadline_ms;
        o.setid_timeout_ms = 60000;
        xlreaper_audit_result_init(&res);
        a0 = xlreaper__now_us();
        rc = xlreaper__audit_run(ctx, &o, &h, &res);
        record(ph, W_AUDIT, r, (double)(xlreaper__now_us() - a0) / 1000.0,
               rc ? 4 : 0);
        for (unsigned i = 0; i < res.num; i++) {
            const xlreaper_audit_check *c = &res.checks[i];
            unanswered += c->status == XLREAPER_AUDIT_UNKNOWN;
            flags +=
                c->status == XLREAPER_AUDIT_FAIL &&
                (strstr(c->name, "lock") || strstr(c->reason, "file lock"));
        }
        x->checks = res.num;
        if (unanswered > x->unanswered)
            x->unanswered = unanswered;
        x->lock_flags += flags > 0;
        x->over_deadline += res.deadline_passed ||
                            (xlreaper__now_us() - a0) / 1000u > deadline_ms;
        if (r == 0 && unanswered) {
            for (unsigned i = 0; i < res.num; i++)
                if (res.checks[i].status == XLREAPER_AUDIT_UNKNOWN)
                    printf("# %s audit: %s: could not check: %s\n",
                           phase_name[ph], res.checks[i].name,
                           res.checks[i].reason);
        }
        xlreaper_audit_result_dispose(&res);
    }
}

static void measure_all(xlreaper_ctx *ctx, int ph, unsigned reps,
                        unsigned census_reps, unsigned deadline_ms)
{
    uint64_t t0 = xlreaper__now_us();

    cli_calls(ph, reps);
    census_calls(ph, census_reps);
    audit_calls(ctx, ph, reps / 10 ? reps / 10 : 1, deadline_ms);
    printf("# %s: measured in %.1f s\n", phase_name[ph],
           (double)(xlreaper__now_us() - t0) / 1e6);
}

/* ---------- the report ---------- */

/* The figure compared: the p99, the census's median (a few starts);
 * when the budget ended the only call, the time it had run (a lower
 * bound, printed with ">="). */
static double figure(int ph, int w)
{
    const measure *x = &m[ph][w];

    if (!x->ms.n && x->cut)
        return x->cut_ms;
    return bench_q(&x->ms, w == W_CENSUS ? 0.5 : 0.99);
}

static const char *ge(int ph, int w)
{
    return !m[ph][w].ms.n && m[ph][w].cut ? ">=" : "";
}

/* kill, spawn, census: at most 2x quiet.  The audit: within its
 * deadline, no check unanswered that the quiet audit answered, and the
 * DM's locks flagged in every audit; not 2x quiet, since counting the
 * DM's locks is work the quiet audit does not have. */
static bool goal_met(int w)
{
    const measure *q = &m[P_QUIET][w], *f = &m[P_FLOOD][w];
    bool ok = f->calls && !f->cut && !f->lock_timeouts && !f->failed;

    if (w == W_AUDIT)
        return ok && !f->over_deadline && f->unanswered <= q->unanswered &&
               f->lock_flags == f->calls;
    return ok && figure(P_FLOOD, w) <= 2.0 * figure(P_QUIET, w);
}

static void write_summary(unsigned locks, unsigned deadline_ms)
{
    FILE *sum = bench_results_file("lockflood.summary.md");
    bool all = true;

    fprintf(sum, "<!-- %s -->\n", bench_machine());
    fprintf(sum,
            "One process under the DM uid of domid %u holds %u one-byte "
            "F_RDLCK POSIX locks on memfds, as a DM under the spawn's "
            "restrictions can.  Each row: another domain's call with no "
            "flood, then under the flood, in the same run; p99 of the "
            "calls (census: the median of the daemon's starts, to its "
            "log line for the start sweep; in brackets the time the "
            "daemon itself reported).  Each flooded measurement stops "
            "after %llu s; \"cut\" says it did.  The audit ran under a "
            "deadline of %u ms.\n\n",
            FLOOD_DOMID, locks, (unsigned long long)(budget_us / 1000000u),
            deadline_ms);
    fprintf(sum, "| what | quiet calls | quiet ms | flood calls | flood ms "
                 "| flood / quiet | failed | lock timeouts | goal |\n");
    fprintf(sum, "|---|---|---|---|---|---|---|---|---|\n");
    for (int w = 0; w < NUM_WHAT; w++) {
        const measure *q = &m[P_QUIET][w], *f = &m[P_FLOOD][w];
        char qown[48] = "", fown[48] = "", extra[160] = "";
        bool ok = goal_met(w);

        all = all && ok;
        if (w == W_CENSUS) {
            snprintf(qown, sizeof(qown), " [%.1f]", bench_median(&q->own_ms));
            snprintf(fown, sizeof(fown), " [%.1f]", bench_median(&f->own_ms));
        }
        if (w == W_AUDIT)
            snprintf(extra, sizeof(extra),
                     "; over the deadline %u/%u, at most %u checks "
                     "unanswered quiet, %u flood; the DM's locks flagged in "
                     "%u/%u",
                     f->over_deadline, f->calls, q->unanswered, f->unanswered,
                     f->lock_flags, f->calls);
        fprintf(sum,
                "| %s | %u/%u | %.2f%s | %u/%u%s | %s%.2f%s | %s%.2fx%s | %u "
                "| %u | %s |\n",
                w == W_CENSUS  ? "xl-reaperd start census (median)"
                : w == W_AUDIT ? "audit (p99)"
                : w == W_KILL  ? "`xl-reaper kill` of another domain (p99)"
                               : "`xl-reaper spawn` of another domain (p99)",
                q->calls, q->wanted, figure(P_QUIET, w), qown, f->calls,
                f->wanted, f->cut ? " (cut)" : "", ge(P_FLOOD, w),
                figure(P_FLOOD, w), fown, ge(P_FLOOD, w),
                figure(P_FLOOD, w) / figure(P_QUIET, w), extra,
                f->failed + q->failed, f->lock_timeouts + q->lock_timeouts,
                ok ? "met" : "**missed**");
    }
    fclose(sum);
    printf("bench-lockflood: %s\n", all ? "goal met" : "goal missed");
}

int main(void)
{
    unsigned n = bench_env("FLOOD_LOCKS", 100000);
    unsigned reps = bench_env("FLOOD_REPS", 50);
    unsigned census_reps = bench_env("FLOOD_CENSUS_REPS", 3);
    unsigned deadline_ms = bench_env("FLOOD_AUDIT_DEADLINE_MS", 5000);
    char initial[16], path[600];
    const char *xs_initial[2] = { initial, NULL };
    long before, after;
    unsigned locks;
    xlreaper_ctx *ctx;
    xlrt_xs xs;
    FILE *f;

    budget_us = (uint64_t)bench_env("FLOOD_BUDGET_S", 60) * 1000000u;
    bench_init("lockflood");
    /* The DM uid must reach the spawned program and the chroot base. */
    chmod(bench_tmpdir(), 0755);
    snprintf(prog, sizeof(prog), "%s/bench_true", bench_tmpdir());
    snprintf(path, sizeof(path), "cp %s %s", bench_prog("bench_true"), prog);
    if (system(path) != 0)
        bench_die("could not copy bench_true");
    snprintf(walk, sizeof(walk), "%s/walk", bench_tmpdir());
    mkdir(walk, 0755);
    snprintf(config, sizeof(config), "%s/lockflood.conf", bench_tmpdir());
    snprintf(dconfig, sizeof(dconfig), "%s/daemon.conf", bench_tmpdir());
    snprintf(sock, sizeof(sock), "%s/xs.sock", bench_tmpdir());
    /* The default config but for our block, our lock and our chroot
     * base; the daemon's without its periodic sweep and metrics file. */
    f = fopen(config, "we");
    if (!f ||
        fprintf(f,
                "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                "chroot_base = \"%s\"\n",
                BENCH_UID_BASE, bench_tmpdir(), bench_tmpdir()) < 0 ||
        fclose(f))
        bench_die("%s: %s", config, strerror(errno));
    f = fopen(dconfig, "we");
    if (!f ||
        fprintf(f,
                "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                "chroot_base = \"%s\"\nsweep_interval_s = 3600\n"
                "metrics_file = \"\"\n",
                BENCH_UID_BASE, bench_tmpdir(), bench_tmpdir()) < 0 ||
        fclose(f))
        bench_die("%s: %s", dconfig, strerror(errno));
    {
        xentoollog_logger *lg = bench_logger();
        if (xlreaper_ctx_alloc(&ctx, lg) ||
            xlreaper_config_load(ctx, config, XLREAPER_CONFIG_MUST_EXIST))
            bench_die("the config did not load");
    }
    /* The flooding domain is live: the daemon leaves its uid alone. */
    snprintf(initial, sizeof(initial), "%u", FLOOD_DOMID);
    if (xlrt_xs_start(&xs, sock, xs_initial))
        bench_die("could not start the test xenstored");

    csv = bench_csv("lockflood", "phase,what,rep,us,exit");
    printf("# %u locks; %u kills and spawns, %u daemon starts, %u audits "
           "(deadline %u ms) per phase; each flooded measurement stops "
           "after %llu s\n",
           n, reps, census_reps, reps / 10 ? reps / 10 : 1, deadline_ms,
           (unsigned long long)(budget_us / 1000000u));
    before = proc_locks_lines();

    /* The flooding DM is there, without locks, in the quiet run too:
     * only the locks differ. */
    flooder_start(0);
    measure_all(ctx, P_QUIET, reps, census_reps, deadline_ms);
    flooder_kill();

    atexit(flooder_kill);
    locks = flooder_start(n);
    measure_all(ctx, P_FLOOD, reps, census_reps, deadline_ms);
    flooder_kill();
    if (bench_wait_empty(bench_dm_uid(FLOOD_DOMID), 10000000u, 1000u) < 0)
        bench_die("the flooding DM's uid did not empty");
    after = proc_locks_lines();
    printf("# /proc/locks: %ld lines before the flood, %ld after its "
           "release\n",
           before, after);
    fclose(csv);
    xlrt_xs_kill(&xs);
    xlreaper_ctx_free(ctx);

    printf("%-8s %8s %10s %8s %10s %8s %6s %6s\n", "what", "quiet", "ms",
           "flood", "ms", "ratio", "fail", "lock");
    for (int w = 0; w < NUM_WHAT; w++) {
        const measure *q = &m[P_QUIET][w], *fl = &m[P_FLOOD][w];
        printf("%-8s %4u/%-3u %10.2f %4u/%-3u %2s%8.2f %7.2fx %6u %6u%s\n",
               what_name[w], q->calls, q->wanted, figure(P_QUIET, w),
               fl->calls, fl->wanted, ge(P_FLOOD, w), figure(P_FLOOD, w),
               figure(P_FLOOD, w) / figure(P_QUIET, w), q->failed + fl->failed,
               q->lock_timeouts + fl->lock_timeouts, fl->cut ? " cut" : "");
    }
    /* For bench/compare: "bound" when the budget ended the only call
     * (the figure is how long it had run), "short" when it ended the
     * calls before all were made. */
    for (int w = 0; w < NUM_WHAT; w++)
        printf("metric lockflood.%s quiet %.3f flood %.3f%s\n", what_name[w],
               figure(P_QUIET, w), figure(P_FLOOD, w),
               *ge(P_FLOOD, w)     ? " bound"
               : m[P_FLOOD][w].cut ? " short"
                                   : "");
    write_summary(locks, deadline_ms);
    for (int w = 0; w < NUM_WHAT; w++)
        for (int ph = 0; ph < NUM_PHASE; ph++) {
            bench_samples_free(&m[ph][w].ms);
            bench_samples_free(&m[ph][w].own_ms);
        }
    return 0;
}
