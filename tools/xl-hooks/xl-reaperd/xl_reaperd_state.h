/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_state.h - what the daemon keeps on disk besides its events
 * (xl_reaperd_state.c): the run directory's pid lock, and the intent
 * journal with each domain's open record.
 */
#ifndef XL_REAPERD_STATE_H
#define XL_REAPERD_STATE_H

#include "xl_reaperd.h"

/* Where the daemon keeps its pid lock, and its intent records. */
#define XLRD_DEFAULT_RUN_DIR "/run/xl-reaperd"
#define XLRD_DEFAULT_STATE_DIR "/var/lib/xl-reaperd"

/* A domain's open intent record. */
typedef struct {
    uint64_t id;           /* the "A" written when it was learnt alive, or one
                     * an earlier run left unfinished; 0: none */
    bool recovered;        /* that record is an earlier run's */
    bool adopt;            /* an earlier run's "A": alive or dead is for the
                     * first list to say */
    bool redo;             /* an earlier run's "B": its reap is due again */
    uint8_t trigger, cand; /* what that record says */
} xlrd_intent;

typedef struct {
    const char *run_dir, *state_dir;
    int run_fd;    /* holds the pid lock */
    int intent_fd; /* the intent journal */
    uint64_t last_intent;
    unsigned intents_open;
    xlrd_intent *rec; /* by domid, 0 .. xlreaper_max_domid() */
} xlrd_state;

/* Before anything else: nothing held yet.  0, or -1 (out of memory). */
int xlrd_state_init(xlrd_state *st, const char *run_dir,
                    const char *state_dir);
/* Lets go of the journal and of the pid lock. */
void xlrd_state_dispose(xlrd_state *st);

/* Takes the run directory's pid lock: one daemon per run directory.
 * 0, or an XLRD_EXIT_* code (another daemon holds it: said, with its
 * pid). */
int xlrd_run_lock(xlrd_state *st);

/* Opens the intent journal; every unfinished intent of an earlier run
 * whose event is not in the events file (events_path, NULL: none) is
 * kept as its domain's record, recovered (a "B" marked redo, an "A"
 * adopt).  0 or -1. */
int xlrd_intents_open(xlrd_state *st, const char *events_path);
/* Makes durable (written and fdatasync'd) that domid's uid is about to
 * be reaped; returns the record's id (0 when it could not be written:
 * said, and the reap goes on). */
uint64_t xlrd_intent_begin(xlrd_state *st, uint32_t domid, xlrd_trigger trig,
                           unsigned cand);
/* The reap of id is over and its event (if any) is written.
 * may_compact: no event waits to be written, so that the open records
 * are the domains' alone and a grown journal may be rewritten. */
void xlrd_intent_end(xlrd_state *st, uint64_t id, bool may_compact);

/* domid's open record (id 0: none).  Inline: the list asks it of every
 * domid, between a death and its reap. */
static inline const xlrd_intent *xlrd_intent_of(const xlrd_state *st,
                                                uint32_t domid)
{
    return &st->rec[domid];
}
/* A domain learnt alive: its death's reap is due, so its record is
 * written now unless it has one (at its birth, so that no fdatasync
 * waits between a death and its kill); no longer an earlier run's. */
void xlrd_intent_learn(xlrd_state *st, uint32_t domid);
/* domid's open record, handed to its reap (which ends it); the domain
 * has none after.  id 0: it had none. */
xlrd_intent xlrd_intent_take(xlrd_state *st, uint32_t domid);
/* The first list said whether an adopted record's domain lives. */
void xlrd_intent_adopted(xlrd_state *st, uint32_t domid);
/* Whether domid's record is an earlier run's reap to redo; once. */
bool xlrd_intent_take_redo(xlrd_state *st, uint32_t domid);

#endif /* XL_REAPERD_STATE_H */
