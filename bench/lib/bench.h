/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench.h - what the benchmarks share: statistics, CSV, the
 * machine line, task sets under a uid (in a child-subreaper nursery),
 * the kernel's own count of a uid's tasks, the bare uid kill, and
 * pid_max.  Like the test helpers, it talks to the kernel directly and
 * uses the library only where the library is what is measured.
 *
 * Every uid used is in the benchmarks' own block, 7000000-7999999:
 *   7000000            the pet (dm_uid_base; reaper_uid defaults to it)
 *   7000000 + domid    the DM uid of domid
 *   7100000 + i        bystanders (not DM uids)
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "xlreaper.h"
#include "xlreaper_internal.h"

#define BENCH_UID_BASE 7000000u
#define BENCH_PET BENCH_UID_BASE
#define BENCH_BYSTANDER_UID 7100000u

static inline uid_t bench_dm_uid(uint32_t domid)
{
    return BENCH_UID_BASE + domid;
}

/* ---------- set-up ---------- */

/*
 * Checks root, makes a temp dir with the reaper's config (our uid
 * block, a lock file of our own), installs the clean-up that runs on
 * exit and on SIGINT/SIGTERM/SIGHUP, and prints the machine line.
 */
void bench_init(const char *name);
/* Fatal error: clean up and exit(1). */
void bench_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

const char *bench_config_path(void);
const char *bench_tmpdir(void);
/* $BENCH_<name> as a number, or dflt. */
unsigned bench_env(const char *name, unsigned dflt);
/* Path of a program built next to the benchmarks: $BENCH_BUILD/...  */
const char *bench_prog(const char *name);
/* The xl-reaper CLI. */
const char *bench_cli(void);

/* "date kernel machine cpus" as one line, for tables, CSV and RESULTS. */
const char *bench_machine(void);

/* A ctx with the benchmark config loaded (dies on failure). */
xlreaper_ctx *bench_ctx(void);
xentoollog_logger *bench_logger(void);

/* ---------- statistics ---------- */

/* The clock is the library's (xlreaper__now_us, xlreaper__sleep_us), so
 * that a benchmark times with the clock the library's own deadlines
 * use. */

typedef struct {
    double *v;
    size_t n, cap;
} bench_samples;

void bench_samples_add(bench_samples *s, double x);
void bench_samples_free(bench_samples *s);
/* Quantile q in [0, 1], interpolated; NAN when empty. */
double bench_q(const bench_samples *s, double q);
#define bench_median(s) bench_q((s), 0.5)

/* ---------- CSV in $BENCH_RESULTS (bench/results) ---------- */

/* Opens <results>/<name>.csv, writes "# <machine>" and the header. */
FILE *bench_csv(const char *name, const char *header);
/* The same directory, for a summary file. */
FILE *bench_results_file(const char *name);

/* ---------- the kernel's count (RLIMIT_NPROC probe, our own) ---------- */

/* 1 if uid has no task at all (live or zombie), 0 if it has, -1 error. */
int bench_uid_empty(uid_t uid);
/* The number of tasks of uid, or -1. */
long bench_kernel_count(uid_t uid);
/* Polls bench_uid_empty every poll_us until empty or timeout_us.
 * Returns the time it took (us), or -1 on timeout. */
int64_t bench_wait_empty(uid_t uid, uint64_t timeout_us, uint64_t poll_us);

/* ---------- task sets ---------- */

typedef enum {
    BENCH_PROCS,      /* N sleeping processes */
    BENCH_THREADS,    /* one process of N threads */
    BENCH_RACER,      /* a fork racer */
    BENCH_RACER_PGID, /* a fork racer whose children change pgid */
} bench_kind;

typedef struct {
    uid_t uid;
    bench_kind kind;
    pid_t nursery;             /* the subreaper (our child), or 0 */
    pid_t leader;              /* first task; pgid of a racer */
    volatile uint64_t *births; /* a racer's births so far, or NULL */
    int slot;                  /* in the clean-up registry */
} bench_set;

/*
 * Starts N tasks of kind under uid (all three uids and gids), and
 * returns once they all exist (a racer: once it has forked 50 times).
 * nursery: in a child subreaper of ours that reaps orphans at once;
 * without, the tasks are orphaned to whatever reaper this machine has
 * (PID 1).  cgroup: a cgroup v2 directory to place the leader in, or
 * NULL.  0, or -1 with the reason printed.
 */
int bench_set_start(bench_set *s, uid_t uid, bench_kind kind, unsigned n,
                    bool nursery, const char *cgroup);
/* Kills whatever is left with the bare uid kill, waits (up to
 * timeout_us) until the kernel counts nothing, ends the nursery.
 * 0, or -1 if the uid did not empty in time (it is left registered and
 * the exit clean-up tries again). */
int bench_set_stop(bench_set *s, uint64_t timeout_us);

/* ---------- kills ---------- */

/* Fork + setresuid(pet, uid, 0) + kill(-1, SIGKILL) in the child; wait.
 * Elapsed us, or -1. */
int64_t bench_barekill_fork(uid_t uid);
/*
 * fork + execve argv (argv[0] a path), waits; stdout into out (at most
 * outlen - 1 bytes, NUL-terminated) when out is not NULL, else to
 * /dev/null.  *status_r is the wait status.  Elapsed us, or -1.
 */
int64_t bench_run(char *const argv[], char *out, size_t outlen,
                  int *status_r);

/* ---------- the system ---------- */

/* Tasks (threads) on the system now, from /proc/loadavg. */
long bench_tasks_now(void);
long bench_pid_max(void);
/*
 * Makes room for need more pids with a margin for the other users of
 * this machine: raises kernel.pid_max for the run if it must (root
 * allows it here) and remembers the old value.  0 if there is room, -1
 * if not (the caller skips, saying why: why is filled).
 */
int bench_pids_reserve(unsigned need, char *why, size_t whylen);
/* Puts pid_max back if bench_pids_reserve raised it. */
void bench_pids_restore(void);

/* ---------- cgroup v2 ---------- */

/* Creates a child cgroup of the v2 hierarchy (/sys/fs/cgroup/unified or
 * /sys/fs/cgroup), removed at exit; NULL if there is no cgroup v2 with
 * cgroup.kill. */
const char *bench_cgroup(void);

#endif /* BENCH_H */
