/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_reap.h - the domains the daemon knows, one reap, and the
 * deaths waiting for theirs (xl_reaperd_reap.c).
 */
#ifndef XL_REAPERD_REAP_H
#define XL_REAPERD_REAP_H

#include "xl_reaperd.h"
#include "xl_reaperd_domains.h"
#include "xl_reaperd_events.h"
#include "xl_reaperd_metrics.h"
#include "xl_reaperd_state.h"
#include "xl_reaperd_xs.h"

/* What the daemon knows of a domid. */
typedef struct {
    bool alive;           /* in the last list we read */
    bool zombies_only;    /* the last sweep found nothing live to kill */
    bool retry;           /* a reap failed: try again at the next sweep */
    bool dead_pending;    /* known alive, listed dead: its reap is due */
    uint64_t event_us;    /* the @releaseDomain that told its death */
    uint64_t reaped_us;   /* the last reap's verdict */
    unsigned failures;    /* reaps in a row that left tasks alive */
    uint64_t next_try_us; /* backed off until then (failures > 0) */
} xlrd_dom;

typedef enum {
    XLRD_REAP_DONE,    /* a verdict: empty, or zombies only */
    XLRD_REAP_FAILED,  /* tried, no verdict: retried at a later sweep */
    XLRD_REAP_ALIVE,   /* the domid lives again: not touched */
    XLRD_REAP_UNKNOWN, /* cannot tell whether it lives: not touched */
    XLRD_REAP_NOLOCK,  /* the lock was not had in time */
} xlrd_reap_status;

typedef struct {
    xlreaper_ctx *ctx;
    xlrd_dom *doms;        /* by domid, 0 .. xlreaper_max_domid() */
    bool *listed;          /* the list reconcile reads */
    unsigned dead_pending; /* doms[] with dead_pending set */
    /* what a reap uses (borrowed) */
    xlrd_domains *dm;
    xlrd_xs *xs;
    xlrd_events *ev;
    xlrd_state *st;
    xlrd_metrics *m;
} xlrd_reaper;

/* 0, or -1 (out of memory). */
int xlrd_reaper_init(xlrd_reaper *rp, xlreaper_ctx *ctx, xlrd_domains *dm,
                     xlrd_xs *xs, xlrd_events *ev, xlrd_state *st,
                     xlrd_metrics *m);
void xlrd_reaper_dispose(xlrd_reaper *rp);
/* What the daemon knows of domid (read only: a sweep's questions).
 * Inline: the census after every release asks it of every domid. */
static inline const xlrd_dom *xlrd_reaper_dom(const xlrd_reaper *rp,
                                              uint32_t domid)
{
    return &rp->doms[domid];
}
/* The uids whose last reap had no verdict, and those backed off. */
void xlrd_reaper_counts(const xlrd_reaper *rp, unsigned *retry_r,
                        unsigned *backed_off_r);

/* After xlrd_intents_open: the reaps an earlier run did not finish are
 * due first (xlrd_reap_next). */
void xlrd_reaper_recovered(xlrd_reaper *rp);
/* Reads the kill-uid nodes whose watches fired, of the domains known
 * alive (a dead one's mark is dropped unread: its node is gone).  false
 * when no watch had fired. */
bool xlrd_reaper_kill_uids(xlrd_reaper *rp);
/* When a list is marked (xlrd_xs_take_reconcile) and can be read:
 * lists the domains, learns the new ones, and marks the known ones that
 * died dead_pending (their reaps are done by xlrd_reap_next).  false
 * when there was nothing to do. */
bool xlrd_reconcile(xlrd_reaper *rp);
/* Reaps one dead_pending domid, under the lock taken for it alone.
 * false when none was pending. */
bool xlrd_reap_next(xlrd_reaper *rp);
/* Takes the lock for domid alone, asks once more whether it lives,
 * reaps its uid and lets the lock go.  cand: what the sweep saw (0 for
 * a release); *reported_r (may be NULL): an event was written. */
xlrd_reap_status xlrd_reap_domid(xlrd_reaper *rp, uint32_t domid,
                                 xlrd_trigger trig, unsigned cand,
                                 bool *reported_r);
/* Before the first reap: a run killed while it reaped left its killer
 * under the reaper uid, and every reap is refused while that uid has a
 * task.  Waits (bounded: a few seconds) until it has none. */
void xlrd_wait_reaper_uid(xlrd_reaper *rp);

#endif /* XL_REAPERD_REAP_H */
