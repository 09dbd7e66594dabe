/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_sweep.h - the sweeps (xl_reaperd_sweep.c): the periodic
 * one (the start sweep, then the windows) and the census after a
 * release, each with its own state, each advanced one bounded step at
 * a time by the loop.
 */
#ifndef XL_REAPERD_SWEEP_H
#define XL_REAPERD_SWEEP_H

#include "xl_reaperd.h"
#include "xl_reaperd_domains.h"
#include "xl_reaperd_metrics.h"
#include "xl_reaperd_reap.h"

/* A sweep's own state: nothing of it is shared with another sweep. */
typedef enum {
    XLRD_SWEEP_IDLE = 0,
    XLRD_SWEEP_KERNEL, /* asking the kernel, a chunk a step */
    XLRD_SWEEP_REAP,   /* reaping the candidates, one a step */
} xlrd_sweep_phase;

typedef struct {
    xlrd_sweep_kind kind;
    xlrd_sweep_phase phase;
    uint64_t start_us;
    uint32_t next, end; /* kernel: domids next .. end - 1 to ask;
                         * reap: the next domid to look at */
    unsigned tasks;     /* on the host, by the /proc census */
    unsigned ncand, reaped;
    unsigned long long dead_tasks;
    xlreaper_census_entry *census; /* by domid */
    bool *busy;                    /* the kernel's answers, a chunk */
    bool *listed;                  /* the live domains, by domid */
    uint8_t *cand;                 /* why a domid's uid is a candidate */
} xlrd_sweep;

typedef struct {
    xlreaper_ctx *ctx;
    xlrd_reaper *rp;      /* reaps the candidates (borrowed) */
    xlrd_domains *dm;     /* lists the live domains (borrowed) */
    xlrd_metrics *m;      /* (borrowed) */
    xlrd_sweep periodic;  /* the start sweep, then the windows */
    xlrd_sweep census;    /* after a release */
    bool full_pending;    /* the start sweep has not run yet */
    uint32_t window_next; /* next domid of the kernel window */
    uint64_t next_us;     /* the next periodic sweep is due then */
} xlrd_sweeps;

/* 0, or -1 (out of memory). */
int xlrd_sweeps_init(xlrd_sweeps *sw, xlreaper_ctx *ctx, xlrd_reaper *rp,
                     xlrd_domains *dm, xlrd_metrics *m);
void xlrd_sweeps_dispose(xlrd_sweeps *sw);

/* One step of the census under way: false when none is. */
bool xlrd_sweeps_step_census(xlrd_sweeps *sw);
/* Starts the census after a release: the /proc census, and the
 * candidates it gives. */
void xlrd_sweeps_begin_census(xlrd_sweeps *sw);
/* One step of the periodic sweep under way: false when none is. */
bool xlrd_sweeps_step_periodic(xlrd_sweeps *sw);
/* Whether the next periodic sweep is due (the start sweep always is). */
bool xlrd_sweeps_periodic_due(const xlrd_sweeps *sw, uint64_t now);
/* Starts it: the whole range the first time, the next window after. */
void xlrd_sweeps_begin_periodic(xlrd_sweeps *sw);
/* When the next periodic sweep is due; a sweep_interval_s from now
 * (after a reload), or at until (when it could not start). */
uint64_t xlrd_sweeps_next_us(const xlrd_sweeps *sw);
void xlrd_sweeps_reschedule(xlrd_sweeps *sw);
void xlrd_sweeps_postpone(xlrd_sweeps *sw, uint64_t until);

#endif /* XL_REAPERD_SWEEP_H */
