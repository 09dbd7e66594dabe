/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_dfix.c - the daemon benchmarks' shared setup (bench_dfix.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_dfix.h"
#include "xlrt_tree.h"

void bench_dfix_die(const bench_dfix *b, const char *why)
{
    fprintf(stderr, "%s: %s\n", b->who, why);
    exit(1);
}

void bench_dfix_setup(bench_dfix *b, const char *who, unsigned base)
{
    xentoollog_logger *lg;
    char path[512];
    FILE *f;

    memset(b, 0, sizeof(*b));
    b->who = who;
    snprintf(b->dir, sizeof(b->dir), "/tmp/xlr-bench.XXXXXX");
    if (geteuid() != 0 || !mkdtemp(b->dir))
        bench_dfix_die(b, "needs root");
    snprintf(path, sizeof(path), "%s/xl-reaper.conf", b->dir);
    f = fopen(path, "w");
    if (!f)
        bench_dfix_die(b, "cannot write its config");
    fprintf(f,
            "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
            "sweep_interval_s = 3600\nmetrics_file = \"\"\n",
            base, b->dir);
    fclose(f);
    chmod(path, 0644);
    b->config = strdup(path);
    lg = (xentoollog_logger *)xtl_createlogger_stdiostream(stderr, XTL_ERROR,
                                                           0);
    if (!b->config || xlreaper_ctx_alloc(&b->ctx, lg) ||
        xlreaper_config_load(b->ctx, b->config, XLREAPER_CONFIG_MUST_EXIST))
        bench_dfix_die(b, "cannot load its config");
    if (asprintf(&b->sock, "%s/xs.sock", b->dir) < 0 ||
        xlrt_xs_start(&b->xs, b->sock, NULL))
        bench_dfix_die(b, "could not start the test xenstored");
}

int bench_dfix_dispose(bench_dfix *b)
{

    xlreaper_ctx_free(b->ctx);
    free(b->config);
    free(b->sock);
    /* XLR_BENCH_KEEP: the directory (events, log) is left for a look. */
    if (getenv("XLR_BENCH_KEEP")) {
        printf("  kept: %s\n", b->dir);
        return 0;
    }
    return xlrt_tree_remove(b->dir);
}

bool bench_dfix_uid_busy(const bench_dfix *b, uid_t uid)
{
    bool empty = true;

    return xlreaper_uid_empty(b->ctx, uid, &empty) == 0 && !empty;
}

pid_t bench_dfix_task(uid_t uid, const char *prog, bool exit_when_alone)
{
    pid_t n = fork();

    if (n != 0)
        return n;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (fork() == 0) {
        if (syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, uid, uid, uid) ||
            syscall(SYS_setresuid, uid, uid, uid))
            _exit(1);
        if (!prog)
            for (;;)
                pause();
        execl(prog, strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog,
              (char *)NULL);
        _exit(127);
    }
    signal(SIGTERM, SIG_DFL);
    for (;;) {
        if (waitpid(-1, NULL, __WALL) >= 0 || errno == EINTR)
            continue;
        if (exit_when_alone)
            _exit(0);
        usleep(1000);
    }
}
