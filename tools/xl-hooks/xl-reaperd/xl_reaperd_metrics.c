/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_metrics.c - the daemon's metrics file, for node_exporter's
 * textfile collector: what it reaped and how that ended, how long reaps
 * take, when it last swept, and what it found under the uids of dead
 * domains.  xlr_prom.c formats and writes; this file only counts.
 *
 * The file is rewritten whole (replaced by a rename, so a reader never
 * sees half of it, and a full disk leaves the last whole version) from
 * the daemon's first second, after the reaps of the deaths pending
 * (deaths come first: xl_reaperd.c's dispatcher) and after every sweep,
 * and at least every XLRD_METRICS_PERIOD_S by a timer of the loop's
 * that does not wait for xenstored (once no death is pending);
 * xl_reaper_metrics_timestamp_seconds says when (an alert rule sees a
 * file that stopped changing); at a clean stop it says
 * xl_reaper_daemon_up 0.  A file that cannot be written never stops a
 * reap: the daemon logs it and goes on.  The names are an interface
 * (alert rules use them): xl-reaperd(8) lists them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xl_reaperd_log.h"
#include "xl_reaperd_metrics.h"
#include "xlr_prom.h"

/* Seconds: a reap takes milliseconds; reap_timeout_ms is 5 s by
 * default, and a lock wait can add lock_timeout_ms. */
static const double bounds[XLRD_LATENCY_BOUNDS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

static const char *const trigger_names[XLRD_TRIGGERS] = {
    [XLRD_TRIGGER_RELEASE] = "release",
    [XLRD_TRIGGER_SWEEP] = "sweep",
    [XLRD_TRIGGER_CENSUS] = "census",
};

static const char *const outcome_names[XLRD_REAP_OUTCOMES] = {
    "empty", "zombies", "remain", "stuck", "error",
};

static const char *const sweep_names[XLRD_SWEEP_KINDS] = {
    [XLRD_SWEEP_FULL] = "full",
    [XLRD_SWEEP_WINDOW] = "window",
    [XLRD_SWEEP_CENSUS] = "census",
};

static double wall_s(void)
{
    return (double)(xlrd_wall_us() / 1000u) / 1000.0;
}

static void observe(xlrd_histogram *h, double s)
{
    for (unsigned i = 0; i < XLRD_LATENCY_BOUNDS; i++)
        if (s <= bounds[i])
            h->bucket[i]++;
    h->count++;
    h->sum_s += s;
}

void xlrd_metrics_init(xlrd_metrics *m)
{
    memset(m, 0, sizeof(*m));
    m->start_s = wall_s();
}

void xlrd_metrics_count(xlrd_metrics *m, xlrd_counter c, unsigned long long n)
{
    m->count[c] += n;
}

void xlrd_metrics_reap(xlrd_metrics *m, xlrd_trigger trig,
                       const xlreaper_reap_result *res, uint64_t event_us)
{
    unsigned o;

    /* By the outcome, as the event gives it: a release that timed out
     * waiting for zombies to be reaped (rc _REMAIN) left no live task. */
    switch (res->outcome) {
    case XLREAPER_OUTCOME_EMPTY:
        o = 0;
        break;
    case XLREAPER_OUTCOME_ZOMBIES:
        o = 1;
        break;
    case XLREAPER_OUTCOME_REMAIN:
        o = 2;
        break;
    case XLREAPER_OUTCOME_STUCK: o = 3; break;
    default: o = 4; break;
    }
    m->reaps[trig][o]++;
    observe(&m->reap_duration[trig], (double)res->duration_us / 1e6);
    if (trig == XLRD_TRIGGER_RELEASE && event_us)
        observe(&m->release_latency,
                (double)(xlreaper_now_us() - event_us) / 1e6);
}

void xlrd_metrics_sweep(xlrd_metrics *m, xlrd_sweep_kind kind,
                        uint64_t duration_us, unsigned dead_uids,
                        unsigned long long dead_tasks)
{
    m->sweeps[kind]++;
    m->dead_tasks_found += dead_tasks;
    /* "The last sweep" is a periodic one: a census after a release
     * looks at /proc only, and says nothing of the kernel's count. */
    if (kind == XLRD_SWEEP_CENSUS)
        return;
    m->last_sweep_s = wall_s();
    m->last_sweep_duration_s = (double)duration_us / 1e6;
    m->last_sweep_dead_uids = dead_uids;
}

void xlrd_metrics_due(xlrd_metrics *m)
{
    m->next_write_us = 0;
}

uint64_t xlrd_metrics_next_us(const xlrd_metrics *m)
{
    return m->next_write_us;
}

/* A family of one sample without labels: a gauge or a counter. */
typedef struct {
    const char *name, *type, *help;
    double v;
} plain_metric;

static void plain(xlr_prom *p, const plain_metric *pm, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xlr_prom_family(p, pm[i].name, pm[i].type, pm[i].help);
        xlr_prom_sample(p, pm[i].name, XLR_PROM_NO_LABELS, pm[i].v);
    }
}

/* The reaps made, by trigger and outcome, and those not made. */
static void format_reaps(const xlrd_metrics *m, xlr_prom *p)
{
    xlr_prom_family(p, "xl_reaper_reaps_total", "counter",
                    "Reaps of a dead domain's DM uid, by what started them "
                    "(release: @releaseDomain; sweep, census: tasks found "
                    "under a dead domid's uid) and how they ended (empty, "
                    "zombies: no live task left; remain: live tasks "
                    "survived; error: no verdict).");
    for (unsigned t = 0; t < XLRD_TRIGGERS; t++)
        for (unsigned o = 0; o < XLRD_REAP_OUTCOMES; o++)
            xlr_prom_sample(p, "xl_reaper_reaps_total",
                            XLR_PROM_LABELS("trigger", trigger_names[t],
                                            "outcome", outcome_names[o]),
                            (double)m->reaps[t][o]);

    xlr_prom_family(p, "xl_reaper_reaps_skipped_total", "counter",
                    "Reaps not made: the domid was alive again (reused), "
                    "or whether it lives could not be told (retried).");
    xlr_prom_sample(p, "xl_reaper_reaps_skipped_total",
                    XLR_PROM_LABELS("reason", "alive_again"),
                    (double)m->count[XLRD_COUNT_SKIPPED_ALIVE]);
    xlr_prom_sample(p, "xl_reaper_reaps_skipped_total",
                    XLR_PROM_LABELS("reason", "liveness_unknown"),
                    (double)m->count[XLRD_COUNT_SKIPPED_UNKNOWN]);
}

/* How long the reaps took, and how long a DM outlived its domain. */
static void format_durations(const xlrd_metrics *m, xlr_prom *p)
{
    xlr_prom_family(p, "xl_reaper_reap_duration_seconds", "histogram",
                    "How long a reap took, from the call to its verdict "
                    "(the kill and its verification), by trigger.");
    for (unsigned t = 0; t < XLRD_TRIGGERS; t++)
        xlr_prom_histogram(p, "xl_reaper_reap_duration_seconds",
                           XLR_PROM_LABELS("trigger", trigger_names[t]),
                           bounds, m->reap_duration[t].bucket,
                           XLRD_LATENCY_BOUNDS, m->reap_duration[t].count,
                           m->reap_duration[t].sum_s);

    xlr_prom_family(p, "xl_reaper_release_latency_seconds", "histogram",
                    "From the @releaseDomain event to the verdict on the "
                    "dead domain's DM uid: how long a DM outlived its "
                    "domain's release, at most.");
    xlr_prom_histogram(p, "xl_reaper_release_latency_seconds",
                       XLR_PROM_NO_LABELS, bounds, m->release_latency.bucket,
                       XLRD_LATENCY_BOUNDS, m->release_latency.count,
                       m->release_latency.sum_s);
}

/* The sweeps, then the counters and gauges of one sample each. */
static void format_sweeps(const xlrd_metrics *m, const xlrd_metrics_gauges *g,
                          xlr_prom *p)
{
    const plain_metric tail[] = {
        { "xl_reaper_sweep_errors_total", "counter",
          "Sweeps that could not finish (a census or a domain list "
          "failed); the next one tries again.",
          (double)m->count[XLRD_COUNT_SWEEP_ERRORS] },
        { "xl_reaper_lock_failures_total", "counter",
          "Times the reaper lock could not be had in lock_timeout_ms "
          "(the reap waits for the next sweep).",
          (double)m->count[XLRD_COUNT_LOCK_FAILURES] },
        { "xl_reaper_last_sweep_timestamp_seconds", "gauge",
          "When the last full or window sweep ended (Unix time; 0: none "
          "yet).  Alert when it is older than a few sweep_interval_s.",
          (double)m->last_sweep_s },
        { "xl_reaper_last_sweep_duration_seconds", "gauge",
          "How long the last full or window sweep took.",
          (double)m->last_sweep_duration_s },
        { "xl_reaper_dead_uids_with_tasks", "gauge",
          "DM uids of dead domids that the last full or window sweep found "
          "with tasks (each was reaped).",
          (double)m->last_sweep_dead_uids },
        { "xl_reaper_dead_uid_tasks_found_total", "counter",
          "Tasks the sweeps found under the uids of dead domids: what "
          "their /proc censuses saw, or one for a uid only the kernel "
          "counted tasks in (sightings: a fork racer's task may be seen "
          "twice).",
          (double)m->dead_tasks_found },
        { "xl_reaper_uids_pending_retry", "gauge",
          "DM uids whose last reap had no verdict: the next sweep tries "
          "again.",
          (double)g->uids_pending_retry },
        { "xl_reaper_events_written_total", "counter",
          "Event lines written to the events file.",
          (double)m->count[XLRD_COUNT_EVENTS_WRITTEN] },
        { "xl_reaper_events_dropped_total", "counter",
          "Events dropped, never written: the events file could not be "
          "written and the in-memory queue (1024 events) was full.",
          (double)m->count[XLRD_COUNT_EVENTS_DROPPED] },
        { "xl_reaper_event_write_errors_total", "counter",
          "Failed writes of the events file (each event stays queued and "
          "is written again).",
          (double)m->count[XLRD_COUNT_EVENT_WRITE_ERRORS] },
        { "xl_reaper_events_queued", "gauge",
          "Events waiting in memory for the events file to be writable.",
          (double)g->events_queued },
        { "xl_reaper_intents_redone_total", "counter",
          "Reaps an earlier run of the daemon began and did not finish "
          "(killed, or the host went down), done again at start.",
          (double)m->count[XLRD_COUNT_INTENTS_REDONE] },
        { "xl_reaper_uids_backed_off", "gauge",
          "DM uids whose reaps left tasks alive (stuck) and that are now "
          "tried again after a doubling delay, not at every sweep.",
          (double)g->uids_backed_off },
    };

    xlr_prom_family(p, "xl_reaper_sweeps_total", "counter",
                    "Sweeps that ran to their end, by kind (full: the "
                    "kernel's count of the whole range; window: of 1/60th "
                    "of it; census: /proc only, after a release).");
    for (unsigned k = 0; k < XLRD_SWEEP_KINDS; k++)
        xlr_prom_sample(p, "xl_reaper_sweeps_total",
                        XLR_PROM_LABELS("kind", sweep_names[k]),
                        (double)m->sweeps[k]);
    plain(p, tail, sizeof(tail) / sizeof(tail[0]));
}

/* The file, in the order its families have always had (the names and
 * their order are an interface). */
static void format(const xlrd_metrics *m, const xlrd_metrics_gauges *g,
                   xlr_prom *p, bool running)
{
    const plain_metric head[] = {
        { "xl_reaper_daemon_up", "gauge",
          "1 while xl-reaperd runs; 0 once it has stopped cleanly.",
          (double)running },
        { "xl_reaper_daemon_start_time_seconds", "gauge",
          "When xl-reaperd started (Unix time).", (double)m->start_s },
        { "xl_reaper_metrics_timestamp_seconds", "gauge",
          "When xl-reaperd wrote this file (Unix time); it does at least "
          "every 5 s while it runs.",
          wall_s() },
        { "xl_reaper_xenstore_connected", "gauge",
          "1 while xl-reaperd is connected to xenstore (it learns of deaths "
          "from @releaseDomain).",
          (double)g->xenstore_connected },
    };

    plain(p, head, sizeof(head) / sizeof(head[0]));
    format_reaps(m, p);
    format_durations(m, p);
    format_sweeps(m, g, p);
}

void xlrd_metrics_write(xlrd_metrics *m, const char *path,
                        const xlrd_metrics_gauges *g, bool running)
{
    const char *text, *what = "formatting";
    size_t len;
    xlr_prom p;
    int e = 0;

    m->next_write_us = xlreaper_now_us() + XLRD_METRICS_PERIOD_S * 1000000u;
    if (!path)
        return;
    if (xlr_prom_init(&p) < 0) {
        e = ENOMEM;
    } else {
        format(m, g, &p, running);
        if (xlr_prom_finish(&p, &text, &len) < 0)
            e = ENOMEM;
        else if (xlr_prom_write_file(path, text, len, &what) < 0)
            e = errno ? errno : EIO;
        xlr_prom_dispose(&p);
    }
    /* Once when it starts failing (or fails otherwise, or another file
     * fails after a reload), once when it works again: not at every
     * reap. */
    if (e && (e != m->write_errno ||
              strncmp(path, m->failed_path, sizeof(m->failed_path) - 1))) {
        snprintf(m->failed_path, sizeof(m->failed_path), "%s", path);
        errno = e;
        XLRD_LOGE(WARN,
                  "metrics file %s: %s%s; reaping goes on without it, and "
                  "each later write tries again",
                  path, what,
                  e == ENOENT ? " (no such directory: is "
                                "prometheus-node-exporter installed? "
                                "metrics_file in the config sets another)"
                              : "");
    } else if (!e && m->write_errno) {
        XLRD_LOG(NOTICE, "metrics file %s: written again", path);
    }
    m->write_errno = e;
}
