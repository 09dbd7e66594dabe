/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_xs.h - the daemon's xenstore connection (xl_reaperd_xs.c):
 * the handle, its watches, the reconnection, and the work its watch
 * events ask for.  An event only marks that work; the loop takes each
 * mark (xlrd_xs_take_*) when it does the work.
 */
#ifndef XL_REAPERD_XS_H
#define XL_REAPERD_XS_H

#include <xenstore.h>

#include "xl_reaperd.h"

typedef struct {
    struct xs_handle *h; /* NULL while disconnected */
    uint64_t next_connect_us;
    unsigned backoff_ms;
    unsigned connect_failures;
    uint64_t disconnected_at_us;
    bool ever_connected;
    bool refused;  /* XENSTORED_PATH is not root's: the daemon stops */
    bool *watched; /* by domid: our kill-uid watch is registered */

    /* the marks of the work the events ask for */
    bool reconcile_pending; /* list the domains: a birth or a death */
    bool census_pending;    /* a release: a /proc census follows */
    uint64_t release_us;    /* when the pending release came */
    bool *kill_uid_changed; /* by domid: its kill-uid node changed */
    unsigned kill_uid_changes;
} xlrd_xs;

/* Disconnected, nothing marked.  0, or -1 (out of memory). */
int xlrd_xs_init(xlrd_xs *xs);
void xlrd_xs_dispose(xlrd_xs *xs);
/* One attempt to connect and to watch; schedules the next on failure.
 * true when connected; a connection marks a list (deaths while the
 * daemon was away are found by comparing lists). */
bool xlrd_xs_connect(xlrd_xs *xs);
void xlrd_xs_disconnect(xlrd_xs *xs, const char *why);
/* The handle, NULL while disconnected. */
static inline struct xs_handle *xlrd_xs_handle(const xlrd_xs *xs)
{
    return xs->h;
}
/* When the next attempt to connect is due. */
uint64_t xlrd_xs_next_connect_us(const xlrd_xs *xs);
/* XENSTORED_PATH was refused: the daemon is to stop (XLRD_EXIT_USAGE). */
bool xlrd_xs_refused(const xlrd_xs *xs);
/* The fd to poll for watch events, or -1. */
int xlrd_xs_fd(const xlrd_xs *xs);
/* Reads the pending watch events and marks the work they ask for; does
 * none of it.  Also notices a lost connection, which no event would
 * tell: call it on every tick. */
void xlrd_xs_events(xlrd_xs *xs);
/* Watches (or stops watching) domid's device-model-kill-uid. */
void xlrd_xs_watch_kill_uid(xlrd_xs *xs, uint32_t domid, bool on);
static inline bool xlrd_xs_watched(const xlrd_xs *xs, uint32_t domid)
{
    return xs->watched[domid];
}

/* A list is marked: true, and the mark is taken; *release_us_r: when
 * the release that asked for it came (0: none).  The release time is
 * kept until xlrd_xs_release_done, so that a list that failed leaves it
 * to the next. */
bool xlrd_xs_take_reconcile(xlrd_xs *xs, uint64_t *release_us_r);
void xlrd_xs_release_done(xlrd_xs *xs);
/* A census is marked: true, and the mark is taken. */
bool xlrd_xs_take_census(xlrd_xs *xs);
/* A domid whose kill-uid node changed: true, and its mark is taken. */
bool xlrd_xs_take_kill_uid(xlrd_xs *xs, uint32_t *domid_r);

#endif /* XL_REAPERD_XS_H */
