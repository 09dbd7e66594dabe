/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd.h - xl-reaperd, the daemon that reaps the DM uid of every
 * domain that dies: its state and the parts of it, one file each.
 *
 *   xl_reaperd.c          main: options, environment, signals, and the
 *                         loop, the one dispatcher of all the work
 *   xl_reaperd_log.c      the log line and the clocks (a leaf)
 *   xl_reaperd_xs.c       xenstore: connection, watches, reconnection
 *   xl_reaperd_domains.c  which domains live (libxl or xenstore), and
 *                         what their xenstore says of their DM's uid
 *   xl_reaperd_reap.c     one reap, and the deaths waiting for theirs
 *   xl_reaperd_sweep.c    sweeps, one step at a time
 *   xl_reaperd_events.c   the events file: whole lines, a bounded queue
 *   xl_reaperd_state.c    the run directory (one daemon) and the state
 *                         directory (intent records, redone after a crash)
 *   xl_reaperd_metrics.c  the metrics file (node_exporter's textfile)
 *
 * One dispatcher.  Only the loop (xl_reaperd.c) starts work: a watch
 * event or a signal only marks work pending (reconcile_pending,
 * census_pending, stop, reload), and the loop does one bounded piece of
 * it at a time (a list, one reap, one chunk of a sweep) before it looks
 * at its descriptors again.  No function here calls back into the loop,
 * and each sweep keeps its state in its own xlrd_sweep: a census that
 * runs between two chunks of the start sweep cannot clear what that
 * sweep found.  The files call each other without a cycle (nm checks
 * it at link time, xl-reaperd.mk).
 */
#ifndef XL_REAPERD_H
#define XL_REAPERD_H

#include <stdbool.h>
#include <stdint.h>

#include <libxl.h>
#include <xenstore.h>

#include "xlreaper.h"

/* Where the daemon keeps its pid lock, and its intent records. */
#define XLRD_DEFAULT_RUN_DIR "/run/xl-reaperd"
#define XLRD_DEFAULT_STATE_DIR "/var/lib/xl-reaperd"

/* Events that could not be written (a full or failing disk) wait in
 * memory, at most this many; past that the oldest is dropped (and
 * counted). */
#define XLRD_EVENTS_QUEUE_MAX 1024

/* The metrics file is rewritten at least this often, whatever else the
 * daemon is doing or waiting for. */
#define XLRD_METRICS_PERIOD_S 5

/* Exit codes, as xl-reaper's. */
#define XLRD_EXIT_OK 0
#define XLRD_EXIT_USAGE 1 /* bad option, environment or config */
#define XLRD_EXIT_FAIL 4  /* a system call failed */

typedef enum {
    XLRD_LIST_XENSTORE = 0, /* no hypervisor: /local/domain/ is all */
    XLRD_LIST_LIBXL,        /* the hypervisor's list, through libxl */
} xlrd_list_mode;

/* What triggered a reap, for the events. */
typedef enum {
    XLRD_TRIGGER_RELEASE = 0, /* @releaseDomain: a known domain died */
    XLRD_TRIGGER_SWEEP,       /* a uid of a dead domid still has tasks */
    XLRD_TRIGGER_CENSUS,      /* the same, found by the /proc census
                               * that follows every @releaseDomain: a
                               * domain that lived and died between two
                               * of our lists */
} xlrd_trigger;

typedef enum {
    XLRD_SWEEP_FULL,   /* the kernel's count over the whole range */
    XLRD_SWEEP_WINDOW, /* over the next 1/60th of it (periodic) */
    XLRD_SWEEP_CENSUS, /* the /proc census alone (after a release) */
} xlrd_sweep_kind;

/* What the metrics file reports (xl_reaperd_metrics.c): counters since
 * the daemon started, and the last sweep. */
#define XLRD_TRIGGERS 3            /* xlrd_trigger */
#define XLRD_REAP_OUTCOMES 5       /* empty, zombies, remain, stuck, error */
#define XLRD_SWEEP_KINDS 3         /* xlrd_sweep_kind */
#define XLRD_LATENCY_BOUNDS 13     /* 1 ms .. 10 s */

typedef struct {
    unsigned long long bucket[XLRD_LATENCY_BOUNDS]; /* cumulative */
    unsigned long long count;
    double sum_s;
} xlrd_histogram;

typedef struct {
    double start_s; /* wall clock */
    unsigned long long reaps[XLRD_TRIGGERS][XLRD_REAP_OUTCOMES];
    unsigned long long skipped_alive, skipped_unknown;
    xlrd_histogram reap_duration[XLRD_TRIGGERS];
    xlrd_histogram release_latency; /* @releaseDomain to the verdict */
    unsigned long long sweeps[XLRD_SWEEP_KINDS];
    unsigned long long sweep_errors;
    unsigned long long lock_failures;
    unsigned long long dead_tasks_found; /* census sightings */
    double last_sweep_s;                 /* 0: none yet */
    double last_sweep_duration_s;
    unsigned last_sweep_dead_uids;       /* with tasks */
    int write_errno;                     /* of the last write, 0: ok */
    char failed_path[256];               /* of the failure last logged */
    unsigned long long events_written;
    unsigned long long events_dropped; /* the queue was full */
    unsigned long long event_write_errors;
    unsigned long long intents_redone; /* after a crash */
} xlrd_metrics;

/* An event waiting to be written. */
typedef struct {
    char *line; /* one whole line, newline included */
    size_t len;
    uint64_t intent; /* its intent record, ended once it is written */
} xlrd_event;

/* Per domid, indexed 0 .. xlreaper_max_domid(). */
typedef struct {
    bool alive;        /* in the last list we read */
    bool watched;      /* our kill-uid watch is registered */
    bool zombies_only; /* the last sweep found nothing live to kill */
    bool retry;        /* a reap failed: try again at the next sweep */
    bool dead_pending; /* known alive, listed dead: its reap is due */
    uint32_t kill_uid; /* device-model-kill-uid as last read, 0: none */
    uint64_t event_us; /* the @releaseDomain that told its death */
    uint64_t intent;   /* its open intent record: the "A" written when
                        * it was learnt alive, or one an earlier run left
                        * unfinished; 0: none */
    bool recovered;    /* that record is an earlier run's */
    bool adopt;        /* an earlier run's "A": alive or dead is for
                        * the first list to say */
    uint8_t intent_trigger, intent_cand; /* what that record says */
    uint64_t reaped_us;                  /* the last reap's verdict */
    unsigned failures;    /* reaps in a row that left tasks alive */
    uint64_t next_try_us; /* backed off until then (failures > 0) */
} xlrd_dom;

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
    xentoollog_logger *lg;
    const char *config_path; /* NULL: the default */
    unsigned config_flags;
    const char *events_path; /* NULL: no events file */
    int events_fd;
    xlrd_event *queue; /* ring of XLRD_EVENTS_QUEUE_MAX */
    unsigned q_head, q_len;
    int events_errno;       /* of the last failed write, 0: ok */
    uint64_t next_flush_us; /* a retry of the queue, 0: none */
    const char *run_dir, *state_dir;
    int run_fd;    /* holds the pid lock */
    int intent_fd; /* the intent journal */
    uint64_t last_intent;
    unsigned intents_open;
    uint64_t next_metrics_us;
    int sfd; /* signalfd: TERM, INT, HUP */
    bool stop;
    bool reload;
    int exit_code; /* when stopped by a refusal: not XLRD_EXIT_OK */

    /* xenstore */
    struct xs_handle *xsh; /* NULL while disconnected */
    uint64_t next_connect_us;
    unsigned backoff_ms;
    unsigned connect_failures;
    uint64_t disconnected_at_us;
    bool ever_connected;

    /* domains */
    xlrd_list_mode mode;
    libxl_ctx *lctx; /* XLRD_LIST_LIBXL only */
    xlrd_dom *doms;
    bool *listed; /* the list reconcile reads */

    /* work the loop has to do (set by watch events and by the loop) */
    bool reconcile_pending; /* list the domains: a birth or a death */
    bool census_pending;    /* a release: a /proc census follows */
    uint64_t release_us;    /* when the pending release came */
    unsigned dead_pending;  /* doms[] with dead_pending set */

    /* sweeps */
    xlrd_sweep periodic;     /* the start sweep, then the windows */
    xlrd_sweep census;       /* after a release */
    bool full_sweep_pending; /* the start sweep has not run yet */
    uint32_t window_next;    /* next domid of the kernel window */
    uint64_t next_sweep_us;

    xlrd_metrics metrics;
} xlrd;

/* ---------- logging: one line, "domid N: " first for a domain ---------- */

void xlrd_log(const xlrd *d, xentoollog_level level, int errnoval,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define XLRD_LOG(d, l, ...) xlrd_log((d), XTL_##l, -1, __VA_ARGS__)
#define XLRD_LOGE(d, l, ...) xlrd_log((d), XTL_##l, errno, __VA_ARGS__)

/* CLOCK_MONOTONIC, and the wall clock, in microseconds. */
uint64_t xlrd_now_us(void);
uint64_t xlrd_wall_us(void);

/* One whole line appended to fd, or nothing (see xl_reaperd_log.c);
 * sync: made durable.  0, or an errno. */
int xlrd_write_line(int fd, const char *line, size_t len, bool sync);

/* ---------- xenstore (xl_reaperd_xs.c) ---------- */

/* One attempt to connect and to watch; schedules the next on failure.
 * true when connected. */
bool xlrd_xs_connect(xlrd *d);
void xlrd_xs_disconnect(xlrd *d, const char *why);
/* The fd to poll for watch events, or -1. */
int xlrd_xs_fd(const xlrd *d);
/* Reads the pending watch events and marks the work they ask for
 * (reconcile_pending, census_pending); does none of it.  Also notices a
 * lost connection, which no event would tell: call it on every tick. */
void xlrd_xs_events(xlrd *d);
/* Watches (or stops watching) domid's device-model-kill-uid. */
void xlrd_xs_watch_kill_uid(xlrd *d, uint32_t domid, bool on);

/* ---------- domains (xl_reaperd_domains.c) ---------- */

/* Whether this host runs on Xen (a privcmd device is there). */
bool xlrd_hypervisor_present(void);
/* libxl when there is a hypervisor, xenstore otherwise.  0, or an
 * XLRD_EXIT_* code. */
int xlrd_domains_init(xlrd *d, bool hypervisor);
void xlrd_domains_dispose(xlrd *d);
/* Fills alive[domid] from the authoritative list.  0, or -1 when the
 * list could not be read (then alive[] means nothing). */
int xlrd_domains_list(xlrd *d, bool *alive);
/* Asks about one domid, right before a kill: 1 alive, 0 dead, -1 when
 * it cannot be told (then nothing is killed). */
int xlrd_domain_alive(xlrd *d, uint32_t domid);
/* Reads domid's device-model-kill-uid from xenstore into doms[domid],
 * checked against the configured range. */
void xlrd_read_kill_uid(xlrd *d, uint32_t domid);

/* ---------- xenstore values (xl_reaperd_parse.c) ---------- */

/* The tokens of our watches: they come back with every event. */
#define XLRD_TOKEN_RELEASE "xlrd:release"
#define XLRD_TOKEN_INTRODUCE "xlrd:introduce"
#define XLRD_TOKEN_KILL_UID "xlrd:kuid:" /* then the domid */

typedef enum {
    XLRD_KILL_UID_BAD = 0, /* not a uid: no digits, a sign, 0, ... */
    XLRD_KILL_UID_MINE,    /* this domain's DM uid */
    XLRD_KILL_UID_OTHER,   /* another domid's DM uid (*other_r) */
    XLRD_KILL_UID_OUTSIDE, /* outside the DM uid range */
} xlrd_kill_uid;

/* What a device-model-kill-uid value of domid (len bytes, as xs_read
 * gives them) says, against ctx's uid table; *uid_r unless _BAD. */
xlrd_kill_uid xlrd_kill_uid_parse(const xlreaper_ctx *ctx, uint32_t domid,
                                  const char *v, unsigned len,
                                  uint32_t *uid_r, uint32_t *other_r);

typedef enum {
    XLRD_TOKEN_IS_OTHER = 0,
    XLRD_TOKEN_IS_RELEASE,
    XLRD_TOKEN_IS_INTRODUCE,
    XLRD_TOKEN_IS_KILL_UID, /* *domid_r: whose node */
} xlrd_token;

/* Which of our watches a token names. */
xlrd_token xlrd_token_parse(const char *token, uint32_t *domid_r);

/* ---------- reaping (xl_reaperd_reap.c) ---------- */

/* Lists the domains; learns the new ones, and marks the known ones that
 * died dead_pending (their reaps are done by xlrd_reap_next). */
void xlrd_reconcile(xlrd *d);
/* Reaps one dead_pending domid, under the lock taken for it alone.
 * false when none was pending. */
bool xlrd_reap_next(xlrd *d);
/* Before the first reap: a run killed while it reaped left its killer
 * under the reaper uid, and every reap is refused while that uid has a
 * task.  Waits (bounded: a few seconds) until it has none. */
void xlrd_wait_reaper_uid(xlrd *d);
/* ---------- events (xl_reaperd_events.c) ---------- */

/* Opens (again) the events file.  0 or -1. */
int xlrd_events_open(xlrd *d);
int xlrd_events_init(xlrd *d);
void xlrd_events_dispose(xlrd *d);
/* Queues line (taken over; one whole line, newline included) for the
 * events file and writes what the queue holds.  intent: its record,
 * ended once the line is written (0: none). */
void xlrd_events_put(xlrd *d, char *line, size_t len, uint64_t intent);
/* Writes what is queued, each line in one write(2) or not at all. */
void xlrd_events_flush(xlrd *d);

/* ---------- state (xl_reaperd_state.c) ---------- */

/* Takes the run directory's pid lock: one daemon per run directory.
 * 0, or an XLRD_EXIT_* code (another daemon holds it: said, with its
 * pid). */
int xlrd_run_lock(xlrd *d);
/* Opens the intent journal; every unfinished intent of an earlier run
 * whose event is not in the events file is marked for its reap again
 * (doms[].intent).  0 or -1. */
int xlrd_intents_open(xlrd *d);
void xlrd_intents_close(xlrd *d);
/* Makes durable (written and fdatasync'd) that domid's uid is about to
 * be reaped; returns the record's id (0 when it could not be written:
 * said, and the reap goes on). */
uint64_t xlrd_intent_begin(xlrd *d, uint32_t domid, xlrd_trigger trig,
                           unsigned cand);
/* The same for a domain learnt alive: its death's reap is due (written
 * at its birth, so that no fdatasync waits between a death and its
 * kill). */
uint64_t xlrd_intent_alive(xlrd *d, uint32_t domid);
/* The reap of id is over and its event (if any) is written. */
void xlrd_intent_end(xlrd *d, uint64_t id);

/* Why a uid is a candidate of a sweep (xlrd_sweep.cand). */
#define XLRD_CAND_LIVE 1u   /* the census saw a live task */
#define XLRD_CAND_ZOMBIE 2u /* the census saw only zombies */
#define XLRD_CAND_KERNEL 4u /* the kernel counts a task */
#define XLRD_CAND_RETRY 8u  /* an earlier reap had no verdict */

typedef enum {
    XLRD_REAP_DONE,    /* a verdict: empty, or zombies only */
    XLRD_REAP_FAILED,  /* tried, no verdict: retried at a later sweep */
    XLRD_REAP_ALIVE,   /* the domid lives again: not touched */
    XLRD_REAP_UNKNOWN, /* cannot tell whether it lives: not touched */
    XLRD_REAP_NOLOCK,  /* the lock was not had in time */
} xlrd_reap_status;

/* Takes the lock for domid alone, asks once more whether it lives,
 * reaps its uid and lets the lock go.  cand: what the sweep saw (0 for
 * a release); *reported_r (may be NULL): an event was written. */
xlrd_reap_status xlrd_reap_domid(xlrd *d, uint32_t domid, xlrd_trigger trig,
                                 unsigned cand, bool *reported_r);

/* ---------- sweeps (xl_reaperd_sweep.c) ---------- */

int xlrd_sweep_alloc(xlrd_sweep *s);
void xlrd_sweep_dispose(xlrd_sweep *s);
/* Starts a sweep of that kind: the /proc census, and the candidates
 * it gives.  Its kernel pass and its reaps are left to xlrd_sweep_step. */
void xlrd_sweep_begin(xlrd *d, xlrd_sweep *s, xlrd_sweep_kind kind);
/* One bounded step of a sweep that is under way: a chunk of the kernel
 * pass, or one candidate's reap.  false once it has ended. */
bool xlrd_sweep_step(xlrd *d, xlrd_sweep *s);

/* ---------- metrics (xl_reaperd_metrics.c) ---------- */

void xlrd_metrics_init(xlrd *d);
/* A reap's verdict, by its outcome (NONE: an error, no verdict). */
void xlrd_metrics_reap(xlrd *d, xlrd_trigger trig, uint32_t domid,
                       const xlreaper_reap_result *res);
/* A sweep that ended: how long it took, how many uids of dead domids
 * had tasks and how many tasks the census saw under them. */
void xlrd_metrics_sweep(xlrd *d, xlrd_sweep_kind kind, uint64_t duration_us,
                        unsigned dead_uids, unsigned long long dead_tasks);
/* Rewrites the metrics file (config key metrics_file; none: nothing).
 * running false: the last write, at a clean stop.  A write that fails
 * is logged when it starts failing, and when it works again; the
 * daemon's work goes on either way. */
void xlrd_metrics_write(xlrd *d, bool running);

#endif /* XL_REAPERD_H */
