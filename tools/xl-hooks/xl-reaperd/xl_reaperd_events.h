/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_events.h - the events file (xl_reaperd_events.c): one JSON
 * line per reap, written whole or not at all, and a bounded queue of
 * the lines that could not be written yet.
 */
#ifndef XL_REAPERD_EVENTS_H
#define XL_REAPERD_EVENTS_H

#include <stddef.h>

#include "xl_reaperd.h"
#include "xl_reaperd_metrics.h"
#include "xl_reaperd_state.h"

/* Events that could not be written (a full or failing disk) wait in
 * memory, at most this many; past that the oldest is dropped (and
 * counted). */
#define XLRD_EVENTS_QUEUE_MAX 1024

/* An event waiting to be written. */
typedef struct {
    char *line; /* one whole line, newline included */
    size_t len;
    uint64_t intent; /* its intent record, ended once it is written */
} xlrd_event;

typedef struct {
    const char *path; /* NULL: no events file */
    int fd;
    xlrd_event *queue; /* ring of XLRD_EVENTS_QUEUE_MAX */
    unsigned q_head, q_len;
    int write_errno;        /* of the last failed write, 0: ok */
    uint64_t next_flush_us; /* a retry of the queue, 0: none */
    xlrd_state *state;      /* ends the intents (borrowed) */
    xlrd_metrics *metrics;  /* counts the writes (borrowed) */
} xlrd_events;

/* path: the events file (NULL: none), opened by xlrd_events_open.
 * 0, or -1 (out of memory). */
int xlrd_events_init(xlrd_events *ev, const char *path, xlrd_state *st,
                     xlrd_metrics *m);
void xlrd_events_dispose(xlrd_events *ev);
/* Opens (again) the events file.  0 or -1. */
int xlrd_events_open(xlrd_events *ev);
/* Queues line (taken over; one whole line, newline included) for the
 * events file and writes what the queue holds.  intent: its record,
 * ended once the line is written (0: none). */
void xlrd_events_put(xlrd_events *ev, char *line, size_t len, uint64_t intent);
/* Writes what is queued, each line in one write(2) or not at all. */
void xlrd_events_flush(xlrd_events *ev);
/* How many events wait in memory. */
unsigned xlrd_events_queued(const xlrd_events *ev);
/* When the queue is to be written again (0: it need not be). */
uint64_t xlrd_events_next_flush_us(const xlrd_events *ev);

#endif /* XL_REAPERD_EVENTS_H */
