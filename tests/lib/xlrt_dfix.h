/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_dfix.h - the daemon suites' fixture: a directory of their own,
 * the config in it, the fake xenstored, xl-reaperd started and waited
 * for, and the clean-up that stops them and reaps whatever a failed
 * test left under the suite's uids.  Fork racers for the suites to
 * kill.  cmocka asserts: tests only (bench/ uses xlrt_daemon.h).
 *
 *     xlrt_dfix_setup(&f->d, BASE, "sweep_interval_s = 3600\n");
 *     xlrt_dfix_up(&f->d, NULL, NULL);        the daemon, ready
 *     xlrt_dfix_wait_swept(&f->d);            its start sweep done
 *     ...
 *     st = xlrt_daemon_stop(&f->d.dm);
 *     xlrt_dfix_teardown(&f->d, 1, 70);       reaps domids 1..70
 */
#ifndef XLRT_DFIX_H
#define XLRT_DFIX_H

#include "xlr_test.h"
#include "xlrt_daemon.h"

typedef struct {
    unsigned base; /* dm_uid_base: the suite's block of uids */
    char *dir;     /* a fresh directory: lock, socket, daemon's files */
    char *config;  /* dir/xl-reaper.conf */
    char *sock;    /* dir/xs.sock: the fake xenstored's */
    xlrt_xs xs;
    xlrt_daemon dm;
    xlreaper_ctx *ctx; /* on the first config: for the clean-up's reaps */
} xlrt_dfix;

/* A config: dm_uid_base = base, lock_file in dir, then extra (more
 * lines, or ""); malloc'd. */
char *xlrt_dfix_config_text(const xlrt_dfix *f, unsigned base,
                            const char *extra);
/* Writes that config to f->config (again), for the next daemon or its
 * SIGHUP; f->ctx and f->base stay. */
void xlrt_dfix_write_config(xlrt_dfix *f, unsigned base, const char *extra);

/* A fresh dir, the config with extra in it and in f->ctx, and the fake
 * xenstored listening on f->sock (no domain yet). */
void xlrt_dfix_setup(xlrt_dfix *f, unsigned base, const char *extra);

/* Starts the daemon: prog under the build dir (NULL: bin/xl-reaperd),
 * its events at events (NULL: dir/events).  Does not wait. */
void xlrt_dfix_start(xlrt_dfix *f, const char *prog, const char *events);
/* The same, then waits until it is ready (its log says "ready:"). */
void xlrt_dfix_up(xlrt_dfix *f, const char *prog, const char *events);
/* Waits until its start sweep is done: a death before that may be
 * found by the sweep first, where a scenario wants the release path. */
void xlrt_dfix_wait_swept(xlrt_dfix *f);

/* Reaps domid's uid with f->ctx when the kernel counts a task under it:
 * what a test left, reaped and not guessed. */
void xlrt_dfix_reap_left(xlrt_dfix *f, uint32_t domid);
/* Kills the daemon (unless stopped already) and the fake xenstored,
 * reaps what is left of domids first..last (none when first > last),
 * and removes dir, unless XLR_KEEP is set: then it is kept for a
 * post-mortem of the daemon's log and events, and named. */
void xlrt_dfix_teardown(xlrt_dfix *f, uint32_t first, uint32_t last);

/* tests/progs/fork_racer under uid (all three ids), in a nursery;
 * returns the nursery once the kernel counts a task of uid. */
pid_t xlrt_racer_start(uid_t uid);
/* Reaps domid (its uid should be empty already) and ends the nursery:
 * a nursery that ends leaves live orphans to a slow init. */
void xlrt_racer_stop(xlrt_dfix *f, pid_t nursery, uint32_t domid);
/* Waits until the kernel counts want tasks of uid (zombies included:
 * the nursery reaps them); fails the test after about 6 s. */
void xlrt_wait_count(uid_t uid, long want);

#endif /* XLRT_DFIX_H */
