/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_metrics.h - what the metrics file reports
 * (xl_reaperd_metrics.c): counters since the daemon started, and the
 * last sweep.  The other modules count through these functions; what
 * is not a count of theirs (the connection, the queue, the backed-off
 * uids) is handed to xlrd_metrics_write when the file is written.
 */
#ifndef XL_REAPERD_METRICS_H
#define XL_REAPERD_METRICS_H

#include "xl_reaperd.h"

/* The metrics file is rewritten at least this often, whatever else the
 * daemon is doing or waiting for. */
#define XLRD_METRICS_PERIOD_S 5

#define XLRD_REAP_OUTCOMES 5   /* empty, zombies, remain, stuck, error */
#define XLRD_LATENCY_BOUNDS 13 /* 1 ms .. 10 s */

/* The plain counters. */
typedef enum {
    XLRD_COUNT_SKIPPED_ALIVE,   /* a reap not made: the domid lives */
    XLRD_COUNT_SKIPPED_UNKNOWN, /* nor when that cannot be told */
    XLRD_COUNT_SWEEP_ERRORS,
    XLRD_COUNT_LOCK_FAILURES,
    XLRD_COUNT_EVENTS_WRITTEN,
    XLRD_COUNT_EVENTS_DROPPED, /* the queue was full */
    XLRD_COUNT_EVENT_WRITE_ERRORS,
    XLRD_COUNT_INTENTS_REDONE, /* after a crash */
    XLRD_COUNTERS
} xlrd_counter;

typedef struct {
    unsigned long long bucket[XLRD_LATENCY_BOUNDS]; /* cumulative */
    unsigned long long count;
    double sum_s;
} xlrd_histogram;

typedef struct {
    double start_s; /* wall clock */
    unsigned long long reaps[XLRD_TRIGGERS][XLRD_REAP_OUTCOMES];
    xlrd_histogram reap_duration[XLRD_TRIGGERS];
    xlrd_histogram release_latency; /* @releaseDomain to the verdict */
    unsigned long long sweeps[XLRD_SWEEP_KINDS];
    unsigned long long count[XLRD_COUNTERS];
    unsigned long long dead_tasks_found; /* census sightings */
    double last_sweep_s;                 /* 0: none yet */
    double last_sweep_duration_s;
    unsigned last_sweep_dead_uids; /* with tasks */
    uint64_t next_write_us;        /* the next rewrite is due then */
    int write_errno;               /* of the last write, 0: ok */
    char failed_path[256];         /* of the failure last logged */
} xlrd_metrics;

/* What the file says that the metrics do not count. */
typedef struct {
    bool xenstore_connected;
    unsigned events_queued;
    unsigned uids_pending_retry;
    unsigned uids_backed_off;
} xlrd_metrics_gauges;

void xlrd_metrics_init(xlrd_metrics *m);
void xlrd_metrics_count(xlrd_metrics *m, xlrd_counter c, unsigned long long n);
/* A reap's verdict, by its outcome (NONE: an error, no verdict).
 * event_us: for a release, when its @releaseDomain came (0: unknown). */
void xlrd_metrics_reap(xlrd_metrics *m, xlrd_trigger trig,
                       const xlreaper_reap_result *res, uint64_t event_us);
/* A sweep that ended: how long it took, how many uids of dead domids
 * had tasks and how many tasks the census saw under them. */
void xlrd_metrics_sweep(xlrd_metrics *m, xlrd_sweep_kind kind,
                        uint64_t duration_us, unsigned dead_uids,
                        unsigned long long dead_tasks);
/* The file says something new: rewritten at the loop's next turn that
 * has no death to serve. */
void xlrd_metrics_due(xlrd_metrics *m);
/* When the next rewrite is due (xlreaper_now_us's clock). */
uint64_t xlrd_metrics_next_us(const xlrd_metrics *m);
/* Rewrites the metrics file at path (config key metrics_file; NULL:
 * nothing).  running false: the last write, at a clean stop.  A write
 * that fails is logged when it starts failing, and when it works again;
 * the daemon's work goes on either way. */
void xlrd_metrics_write(xlrd_metrics *m, const char *path,
                        const xlrd_metrics_gauges *g, bool running);

#endif /* XL_REAPERD_METRICS_H */
