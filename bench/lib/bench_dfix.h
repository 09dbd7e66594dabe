/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_dfix.h - what the daemon benchmarks (bench_daemon,
 * bench_daemon_faults) share: their directory, config and ctx, the
 * fake xenstored, and tasks under a DM uid in a subreaper of their own.
 * They are not bench/lib/bench.c's programs (no bench_init): each
 * failure here is fatal, said under the program's name.
 */
#ifndef BENCH_DFIX_H
#define BENCH_DFIX_H

#include <stdbool.h>
#include <sys/types.h>

#include "xlreaper.h"
#include "../../tests/lib/xlrt_daemon.h"

typedef struct {
    const char *who; /* the program, for its messages */
    char dir[sizeof("/tmp/xlr-bench.XXXXXX")];
    char *config;      /* dir/xl-reaper.conf */
    char *sock;        /* dir/xs.sock, the fake's */
    xlreaper_ctx *ctx; /* with config loaded */
    xlrt_xs xs;
} bench_dfix;

/* Says "who: why" and exits 1. */
void bench_dfix_die(const bench_dfix *b, const char *why)
    __attribute__((noreturn));

/* As root: a fresh dir, a config with DM uids at base (the lock in dir,
 * no periodic sweep for an hour, no metrics file), a ctx that loaded it
 * (errors to stderr) and the fake xenstored started on sock. */
void bench_dfix_setup(bench_dfix *b, const char *who, unsigned base);
/* Frees what setup allocated (the daemon and the fake are the
 * caller's to stop); with $XLR_BENCH_KEEP the dir stays, said on
 * stdout.  0, or -1 if it could not be removed. */
int bench_dfix_dispose(bench_dfix *b);

/* The kernel's word: uid has a task (a probe through the library). */
bool bench_dfix_uid_busy(const bench_dfix *b, uid_t uid);

/*
 * A root subreaper whose child runs under uid: prog (a path; NULL: the
 * child only sleeps).  The subreaper reaps every zombie at once, as a
 * healthy init would; with exit_when_alone it exits once it has no
 * child left, else it waits to be killed.  Its pid, or -1.
 */
pid_t bench_dfix_task(uid_t uid, const char *prog, bool exit_when_alone);

#endif /* BENCH_DFIX_H */
