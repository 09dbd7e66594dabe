/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_stuck - one stuck uid must not hold the host: while
 * N DM uids are stuck (N = 1, 12, 64) and reaped over and over, an
 * unrelated domain's `xl-reaper kill` keeps its p99 within 2x of its
 * p99 on a quiet host, with no lock timeout.
 *
 * A stuck uid: one task of it in D state on a FUSE request that its
 * root server (tests/progs/fuse_holder) read and never answers, as a
 * hung NFS server or disk would leave it; SIGKILL does not end it, and
 * the uid never becomes empty.  The stuck uids are reaped one after
 * another, for ever, by one process (as the daemon's sweep reaps its
 * candidates, or spawn --reap-stale a busy uid), each reap waiting for
 * "empty" until reap_timeout_ms (5000, the default).  The config is the
 * default otherwise: lock_timeout_ms 10000.
 *
 * Quiet host first, same run: the same kills with nothing stuck.
 * Output: stuck.csv (one row per kill), stuck.summary.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "xlrt_fuse.h"

#define DOMID0 200u      /* the stuck ones: DOMID0 .. DOMID0 + N - 1 */
#define OTHER_DOMID 300u /* the unrelated domain that is killed */

static const unsigned levels[] = { 0, 1, 12, 64 };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

static char config[512];
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

/* Reaps the stuck uids one after another until SIGTERM; writes how
 * many reaps it made, and how many said anything but "remain", to fd. */
static void __attribute__((noreturn)) sweeper(unsigned n, int fd)
{
    struct sigaction sa = { .sa_handler = on_term };
    xlreaper_ctx *ctx = NULL;
    unsigned reaps = 0, odd = 0;
    char line[64];

    sigaction(SIGTERM, &sa, NULL);
    if (xlreaper_ctx_alloc(&ctx, bench_logger()) ||
        xlreaper_config_load(ctx, config, XLREAPER_CONFIG_MUST_EXIST))
        _exit(1);
    while (!stop) {
        for (unsigned i = 0; i < n && !stop; i++) {
            xlreaper_reap_result res;
            int rc;

            xlreaper_reap_result_init(&res);
            rc = xlreaper_reap_flags(ctx, NULL, DOMID0 + i,
                                     XLREAPER_REAP_WAIT_EMPTY, &res);
            reaps++;
            odd += rc != XLREAPER_ERROR_STUCK; /* root's FUSE: stuck */
            xlreaper_reap_result_dispose(&res);
        }
    }
    snprintf(line, sizeof(line), "%u %u\n", reaps, odd);
    (void)!write(fd, line, strlen(line));
    xlreaper_ctx_free(ctx);
    _exit(0);
}

/* fuse_holder for the first n stuck uids (tests/lib/xlrt_fuse.c). */
static void holder_start(unsigned n, xlrt_fuse_holder *h)
{
    uid_t uids[64];
    char prog[512];

    snprintf(prog, sizeof(prog), "%s/tests/progs/fuse_holder",
             getenv("BENCH_BUILD") ? getenv("BENCH_BUILD") : "build");
    for (unsigned i = 0; i < n; i++)
        uids[i] = bench_dm_uid(DOMID0 + i);
    if (xlrt_fuse_holder_start(h, prog, uids, n, NULL, 0))
        bench_die("fuse_holder did not hold %u uid(s) stuck", n);
}

int main(void)
{
    unsigned reps = bench_env("STUCK_REPS", 200);
    bench_samples s[NLEVELS] = { { 0 } };
    unsigned fails[NLEVELS] = { 0 }, locks[NLEVELS] = { 0 };
    unsigned reaps[NLEVELS] = { 0 }, odd[NLEVELS] = { 0 };
    double base_p99;
    FILE *csv, *sum;
    char dom[16];
    bool ok = true;

    bench_init("stuck");
    if (access("/dev/fuse", R_OK | W_OK) < 0)
        bench_die("no /dev/fuse: no stuck task can be made here");
    snprintf(config, sizeof(config), "%s/stuck.conf", bench_tmpdir());
    {
        FILE *f = fopen(config, "w");

        if (!f)
            bench_die("%s: %s", config, strerror(errno));
        fprintf(f, "dm_uid_base = %u\nlock_file = \"%s/lock\"\n",
                BENCH_UID_BASE, bench_tmpdir());
        if (fclose(f))
            bench_die("%s: %s", config, strerror(errno));
    }
    snprintf(dom, sizeof(dom), "%u", OTHER_DOMID);
    csv = bench_csv("stuck", "stuck_uids,rep,kill_us,exit");
    printf("%-10s %8s %10s %10s %10s %6s %6s %8s\n", "stuck", "kills",
           "p50 ms", "p99 ms", "max ms", "fail", "lock", "reaps");
    for (unsigned l = 0; l < NLEVELS; l++) {
        unsigned n = levels[l];
        xlrt_fuse_holder holder = { -1, -1 };
        int swp[2] = { -1, -1 };
        pid_t sw = -1;

        if (n) {
            holder_start(n, &holder);
            if (pipe(swp) < 0)
                bench_die("pipe: %s", strerror(errno));
            sw = fork();
            if (sw < 0)
                bench_die("fork: %s", strerror(errno));
            if (sw == 0) {
                close(swp[0]);
                sweeper(n, swp[1]);
            }
            close(swp[1]);
            xlreaper__sleep_us(500000); /* the sweep is under way */
        }
        for (unsigned r = 0; r < reps; r++) {
            char *argv[] = { (char *)bench_cli(), "--config", config, "kill",
                             dom, NULL };
            int status = 0;
            int64_t us = bench_run(argv, NULL, 0, &status);
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;

            if (us < 0)
                bench_die("running xl-reaper kill");
            bench_samples_add(&s[l], (double)us / 1000.0);
            fails[l] += code != 0;
            locks[l] += code == 2;
            fprintf(csv, "%u,%u,%lld,%d\n", n, r, (long long)us, code);
            xlreaper__sleep_us(10000); /* kills now and then, not a storm */
        }
        if (n) {
            char line[64] = "";
            ssize_t got;

            kill(sw, SIGTERM); /* our child */
            got = read(swp[0], line, sizeof(line) - 1);
            if (got > 0)
                line[got] = '\0';
            sscanf(line, "%u %u", &reaps[l], &odd[l]);
            close(swp[0]);
            waitpid(sw, NULL, 0);
            xlrt_fuse_holder_stop(&holder);
        }
        printf("%-10u %8u %10.2f %10.2f %10.2f %6u %6u %8u\n", n, reps,
               bench_median(&s[l]), bench_q(&s[l], 0.99),
               bench_q(&s[l], 1.0), fails[l], locks[l], reaps[l]);
    }
    fclose(csv);

    base_p99 = bench_q(&s[0], 0.99);
    sum = bench_results_file("stuck.summary.md");
    if (!sum)
        bench_die("stuck.summary.md: %s", strerror(errno));
    fprintf(sum, "<!-- %s -->\n", bench_machine());
    fprintf(sum,
            "Each stuck uid: one task of it in D state on a FUSE request "
            "that its root server (tests/progs/fuse_holder, in a mount "
            "namespace of its own) read and never answers; SIGKILL does "
            "not end it.  One process reaps the stuck uids one after "
            "another for as long as the kills run, each reap waiting for "
            "\"empty\" until reap_timeout_ms (5000); the config is the "
            "default otherwise (lock_timeout_ms 10000).  %u kills of "
            "another, empty domid per row, 10 ms apart; the quiet host "
            "first, in the same run.\n\n",
            reps);
    fprintf(sum, "| stuck uids | kills | p50 ms | p99 ms | max ms | p99 / "
                 "quiet p99 | failed | lock timeouts | reaps of stuck uids "
                 "meanwhile | goal |\n");
    fprintf(sum, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned l = 0; l < NLEVELS; l++) {
        double ratio = bench_q(&s[l], 0.99) / base_p99;
        bool pass = !fails[l] && !locks[l] && (l == 0 || ratio <= 2.0);

        ok = ok && pass;
        fprintf(sum, "| %u%s | %u | %.2f | %.2f | %.2f | %.2fx | %u | %u | "
                     "%u%s | %s |\n",
                levels[l], l == 0 ? " (quiet host)" : "", reps,
                bench_median(&s[l]), bench_q(&s[l], 0.99),
                bench_q(&s[l], 1.0), ratio, fails[l], locks[l], reaps[l],
                odd[l] ? " (some not \"remain\")" : "",
                l == 0 ? (pass ? "baseline" : "**failed kills**")
                       : (pass ? "met" : "**missed**"));
        bench_samples_free(&s[l]);
    }
    fclose(sum);
    printf("bench-stuck: %s\n", ok ? "goal met" : "goal missed");
    return 0;
}
