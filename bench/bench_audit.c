/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_audit LABEL [REPS] - how long `xl-reaper audit` takes on a host
 * with 64 live DMs (the goal: under 1 s).
 *
 * It spawns 64 device models through the library's own spawn (exec
 * mode, tests/progs/fake_dm, domids 1..64 of a range of its own), so
 * that each is what the library makes of a DM, root's record included
 * where the library writes one; declares those 64 domains live through
 * the audit's test hook (no Xen here), and runs the whole audit REPS
 * times (default 10; the set-id walk limited to a small directory, which
 * is not what is measured).  The same source is built against the
 * library before its audit read each DM's /proc in one reader child
 * under a deadline per process (bench_audit.mk: BENCH_AUDIT_BASE) and
 * this one, and both run in the same `make bench-audit`: the figure
 * before and the new one, on the same machine at the same time.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"
#include "xlrt_tree.h"

#define BASE 9450000u
#define NDMS 64u

static int hook_live(void *opaque, uint32_t **domids_r, unsigned *num_r)
{
    (void)opaque;
    *domids_r = calloc(NDMS, sizeof(uint32_t));
    if (!*domids_r)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < NDMS; i++)
        (*domids_r)[i] = i + 1;
    *num_r = NDMS;
    return 0;
}

static int hook_forks(void *opaque, uint64_t *forks_r)
{
    (void)opaque;
    *forks_r = 1; /* quiet passes: the dead uids are not what is timed */
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The library's clock, in ms for the statistics. */
static double now_ms(void)
{
    return (double)xlreaper__now_us() / 1e3;
}

int main(int argc, char **argv)
{
    const char *label = argc > 1 ? argv[1] : "?";
    unsigned reps = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
    const char *build = getenv("XLR_BUILD");
    char dir[] = "/tmp/xlr-bench-audit.XXXXXX", prog[4096], conf[4200];
    char text[8192], empty[4300];
    const char *roots[2] = { empty, NULL };
    xentoollog_logger_stdiostream *lg;
    xlreaper__audit_hooks h;
    pid_t pids[NDMS] = { 0 };
    double *ms;
    xlreaper_ctx *ctx;
    unsigned fails = 0, dms = 0, checks = 0;
    FILE *f;
    int rc = 1;

    if (!reps)
        reps = 1;
    ms = calloc(reps, sizeof(*ms));
    snprintf(prog, sizeof(prog), "%s/tests/progs/fake_dm",
             build && *build ? build : "build");
    if (!ms || access(prog, X_OK) < 0 || !mkdtemp(dir)) {
        fprintf(stderr, "bench_audit: %s: %s\n", prog, strerror(errno));
        free(ms);
        return 1;
    }
    chmod(dir, 0755);
    snprintf(empty, sizeof(empty), "%s/walk", dir);
    mkdir(empty, 0755);
    snprintf(conf, sizeof(conf), "%s/xl-reaper.conf", dir);
    snprintf(text, sizeof(text),
             "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
             "chroot_base = \"%s\"\nnproc_limit = 4\n",
             BASE, dir, dir);
    f = fopen(conf, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        fprintf(stderr, "bench_audit: writing %s failed\n", conf);
        exit(1);
    }
    lg = xtl_createlogger_stdiostream(stderr, XTL_WARN, 0);
    if (!lg || xlreaper_ctx_alloc(&ctx, (xentoollog_logger *)lg) ||
        xlreaper_config_load(ctx, conf, XLREAPER_CONFIG_MUST_EXIST)) {
        fprintf(stderr, "bench_audit: the config did not load\n");
        exit(1);
    }

    for (unsigned i = 0; i < NDMS; i++) {
        char dom[16];
        char *dargv[] = { prog, "-xen-domid", dom, NULL };
        xlreaper_spawn_plan *plan;

        snprintf(dom, sizeof(dom), "%u", i + 1);
        pids[i] = 0;
        if (xlreaper_spawn_plan_new(ctx, i + 1, prog, dargv, &plan) ||
            xlreaper_spawn(ctx, plan, XLREAPER_SPAWN_REAP_STALE, &pids[i],
                           NULL)) {
            fprintf(stderr, "bench_audit: spawning domid %u failed\n", i + 1);
            goto out;
        }
        xlreaper_spawn_plan_free(plan);
    }

    memset(&h, 0, sizeof(h));
    h.live_domids = hook_live;
    h.forks = hook_forks;
    h.sweep_max_domid = NDMS + 8;
    h.setid_roots = roots;
    for (unsigned r = 0; r < reps; r++) {
        xlreaper_audit_opts o;
        xlreaper_audit_result res;
        double t0;

        xlreaper_audit_opts_init(&o);
        o.setid_timeout_ms = 60000;
        xlreaper_audit_result_init(&res);
        t0 = now_ms();
        if (xlreaper__audit_run(ctx, &o, &h, &res)) {
            fprintf(stderr, "bench_audit: the audit failed\n");
            goto out;
        }
        ms[r] = now_ms() - t0;
        dms = res.dms;
        checks = res.num;
        for (unsigned i = 0; i < res.num; i++)
            fails += res.checks[i].status == XLREAPER_AUDIT_FAIL ||
                     res.checks[i].status == XLREAPER_AUDIT_UNKNOWN;
        xlreaper_audit_result_dispose(&res);
    }
    qsort(ms, reps, sizeof(*ms), cmp_double);
    printf("bench-audit: %s: %u live DMs, %u DM processes checked, %u "
           "lines, %u not passed over all runs; %u audits: median %.1f ms, "
           "p99 %.1f ms, min %.1f ms, max %.1f ms\n",
           label, NDMS, dms, checks, fails, reps, ms[reps / 2],
           ms[(reps * 99 + 99) / 100 - 1], ms[0], ms[reps - 1]);
    rc = 0;

out:
    for (unsigned i = 0; i < NDMS; i++) {
        xlreaper_reap_result rr;
        int status;

        if (!pids[i])
            continue;
        xlreaper_reap_result_init(&rr);
        xlreaper_reap(ctx, NULL, i + 1, &rr);
        xlreaper_reap_result_dispose(&rr);
        waitpid(pids[i], &status, 0);
    }
    rmdir(empty);
    if (xlrt_tree_remove(dir) < 0)
        rc = 1;
    xlreaper_ctx_free(ctx);
    xtl_logger_destroy((xentoollog_logger *)lg);
    free(ms);
    return rc;
}
