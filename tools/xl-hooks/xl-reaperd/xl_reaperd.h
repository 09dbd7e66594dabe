/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd.h - xl-reaperd, the daemon that reaps the DM uid of every
 * domain that dies: the parts of it, one file and one header each, and
 * the few types they share.
 *
 *   xl_reaperd.c          main: options, environment, signals, and the
 *                         loop, the one dispatcher of all the work
 *   xl_reaperd_log.c      the log line, the wall clock and the write of
 *                         a whole line (a leaf)
 *   xl_reaperd_metrics.c  the counters, and the metrics file
 *                         (node_exporter's textfile)
 *   xl_reaperd_state.c    the run directory (one daemon) and the state
 *                         directory (intent records, redone after a crash)
 *   xl_reaperd_events.c   the events file: whole lines, a bounded queue
 *   xl_reaperd_parse.c    what a xenstore value or a watch token says
 *   xl_reaperd_xs.c       xenstore: connection, watches, reconnection,
 *                         and the work its watch events ask for
 *   xl_reaperd_domains.c  which domains live (libxl or xenstore), and
 *                         what their xenstore says of their DM's uid
 *   xl_reaperd_reap.c     the known domains, one reap, and the deaths
 *                         waiting for theirs
 *   xl_reaperd_sweep.c    sweeps, one step at a time
 *
 * Each module keeps its state in a struct of its own, declared in its
 * header and changed only by its own functions (as libxl's libxl__ev_*
 * and OpenSSH's monitor keep theirs); a module is given, at its init,
 * the other modules it calls, and touches no other module's state.
 * xl_reaperd.c holds one of each.  A module calls and includes only
 * modules listed above it (main, which holds them all, excepted): the
 * build checks that the calls (nm, scripts/check-call-graph) and the
 * includes (scripts/check-include-cycle) make no cycle (xl-reaperd.mk).
 *
 * One dispatcher.  Only the loop (xl_reaperd.c) starts work: a watch
 * event or a signal only marks work pending (xl_reaperd_xs.c keeps the
 * marks of its events, the loop those of its signals), and the loop does
 * one bounded piece of it at a time (a list, one reap, one chunk of a
 * sweep) before it looks at its descriptors again.  No function here
 * calls back into the loop, and each sweep keeps its state in its own
 * xlrd_sweep: a census that runs between two chunks of the start sweep
 * cannot clear what that sweep found.
 */
#ifndef XL_REAPERD_H
#define XL_REAPERD_H

#include <stdbool.h>
#include <stdint.h>

#include "xlreaper.h"

/* Exit codes, as xl-reaper's. */
#define XLRD_EXIT_OK 0
#define XLRD_EXIT_USAGE 1 /* bad option, environment or config */
#define XLRD_EXIT_FAIL 4  /* a system call failed */

/* What triggered a reap, for the events. */
typedef enum {
    XLRD_TRIGGER_RELEASE = 0, /* @releaseDomain: a known domain died */
    XLRD_TRIGGER_SWEEP,       /* a uid of a dead domid still has tasks */
    XLRD_TRIGGER_CENSUS,      /* the same, found by the /proc census
                               * that follows every @releaseDomain: a
                               * domain that lived and died between two
                               * of our lists */
} xlrd_trigger;
#define XLRD_TRIGGERS 3

typedef enum {
    XLRD_SWEEP_FULL,   /* the kernel's count over the whole range */
    XLRD_SWEEP_WINDOW, /* over the next 1/60th of it (periodic) */
    XLRD_SWEEP_CENSUS, /* the /proc census alone (after a release) */
} xlrd_sweep_kind;
#define XLRD_SWEEP_KINDS 3

/* Why a uid is a candidate of a sweep (xlrd_sweep.cand). */
#define XLRD_CAND_LIVE 1u   /* the census saw a live task */
#define XLRD_CAND_ZOMBIE 2u /* the census saw only zombies */
#define XLRD_CAND_KERNEL 4u /* the kernel counts a task */
#define XLRD_CAND_RETRY 8u  /* an earlier reap had no verdict */

#endif /* XL_REAPERD_H */
