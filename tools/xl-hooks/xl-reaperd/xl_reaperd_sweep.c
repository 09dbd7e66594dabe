/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_sweep.c - sweeps: finding the uids of dead domids that
 * still have tasks, and reaping them.
 *
 * A sweep is begun by the loop (xl_reaperd.c) and then advanced by it
 * one step at a time: one chunk of the kernel's count, or one
 * candidate's reap.  Between two steps the loop handles what came
 * meanwhile (a death is reaped between two chunks of the start sweep,
 * whose whole range takes seconds), and every sweep keeps what it found
 * in its own xlrd_sweep: the census that follows a release has its own,
 * so that it cannot clear what the start sweep's first chunks found.
 *
 * Candidates come without the lock (hints from /proc and the kernel's
 * count); each is reaped under a lock of its own, after the hypervisor
 * was asked again under it (xlrd_reap_domid).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xl_reaperd_log.h"
#include "xl_reaperd_sweep.h"

/* Every periodic sweep asks the kernel about this share of the range,
 * so that the whole range is asked about every KERNEL_WINDOWS sweeps. */
#define KERNEL_WINDOWS 60
/* The kernel is asked about this many uids a step (a few ms). */
#define KERNEL_CHUNK 1024

static int sweep_alloc(xlrd_sweep *s)
{
    uint32_t n = xlreaper_max_domid() + 1;

    memset(s, 0, sizeof(*s));
    s->census = calloc(n, sizeof(*s->census));
    s->busy = calloc(KERNEL_CHUNK, sizeof(*s->busy));
    s->listed = calloc(n, sizeof(*s->listed));
    s->cand = calloc(n, sizeof(*s->cand));
    return s->census && s->busy && s->listed && s->cand ? 0 : -1;
}

static void sweep_dispose(xlrd_sweep *s)
{
    free(s->census);
    free(s->busy);
    free(s->listed);
    free(s->cand);
    memset(s, 0, sizeof(*s));
}

static const char *sweep_name(const xlrd_sweep *s)
{
    return s->kind == XLRD_SWEEP_CENSUS ? "census" : "sweep";
}

/* A sweep that did not finish; the metrics say so at the loop's next
 * turn.  (The loop does no step once it is stopping.) */
static void failed(xlrd_sweeps *sw, xlrd_sweep *s)
{
    s->phase = XLRD_SWEEP_IDLE;
    xlrd_metrics_count(sw->m, XLRD_COUNT_SWEEP_ERRORS, 1);
    xlrd_metrics_due(sw->m);
}

static void begin(xlrd_sweeps *sw, xlrd_sweep *s, xlrd_sweep_kind kind)
{
    uint32_t max = xlreaper_max_domid();
    uint64_t now = xlreaper_now_us();
    int rc;

    s->kind = kind;
    s->start_us = now;
    s->tasks = s->ncand = s->reaped = 0;
    s->dead_tasks = 0;
    memset(s->cand, 0, max + 1);
    if (kind != XLRD_SWEEP_CENSUS)
        sw->next_us =
            now + (uint64_t)xlreaper_config_get(sw->ctx)->sweep_interval_s *
                      1000000u;

    /* Candidates, without the lock: hints and the kernel's answers. */
    rc = xlreaper_census(sw->ctx, s->census, &s->tasks);
    if (rc) {
        XLRD_LOG(ERROR, "%s: the /proc census failed (%s)", sweep_name(s),
                 xlreaper_strerror(rc));
        failed(sw, s);
        return;
    }
    for (uint32_t i = 1; i <= max; i++) {
        if (s->census[i].live)
            s->cand[i] |= XLRD_CAND_LIVE;
        else if (s->census[i].zombies)
            s->cand[i] |= XLRD_CAND_ZOMBIE;
        if (xlrd_reaper_dom(sw->rp, i)->retry)
            s->cand[i] |= XLRD_CAND_RETRY;
    }
    if (kind == XLRD_SWEEP_FULL) {
        s->next = 1;
        s->end = max + 1;
    } else if (kind == XLRD_SWEEP_WINDOW) {
        uint32_t w = (max + KERNEL_WINDOWS - 1) / KERNEL_WINDOWS;
        uint32_t first = sw->window_next ? sw->window_next : 1;

        if (first + w - 1 > max)
            w = max - first + 1;
        s->next = first;
        s->end = first + w;
        sw->window_next = first + w > max ? 1 : first + w;
    } else {
        s->next = s->end = 0;
    }
    s->phase = XLRD_SWEEP_KERNEL;
}

/* One chunk of the kernel's count. */
static void kernel_step(xlrd_sweeps *sw, xlrd_sweep *s)
{
    uint32_t n = s->end - s->next, max = xlreaper_max_domid();
    int rc;

    if (n > KERNEL_CHUNK)
        n = KERNEL_CHUNK;
    if (n) {
        rc = xlreaper_census_kernel(sw->ctx, s->next, n, s->busy);
        if (rc) {
            XLRD_LOG(ERROR, "%s: the kernel census failed (%s)", sweep_name(s),
                     xlreaper_strerror(rc));
            failed(sw, s);
            return;
        }
        for (uint32_t i = 0; i < n; i++)
            if (s->busy[i])
                s->cand[s->next + i] |= XLRD_CAND_KERNEL;
        s->next += n;
    }
    if (s->next < s->end)
        return;

    /* The live domains, without the lock: a candidate that lives is
     * not one; the dead ones are asked again under the lock. */
    if (xlrd_domains_list(sw->dm, s->listed) < 0) {
        failed(sw, s);
        return;
    }
    for (uint32_t i = 1; i <= max; i++) {
        /* Zombies already reaped, and reported, once: the kernel's
         * count of them (it counts zombies) is no new find. */
        if ((s->cand[i] & XLRD_CAND_ZOMBIE) &&
            xlrd_reaper_dom(sw->rp, i)->zombies_only &&
            !(s->cand[i] & (XLRD_CAND_LIVE | XLRD_CAND_RETRY)))
            s->cand[i] = 0;
        if (!s->cand[i] || s->listed[i]) {
            s->cand[i] = 0;
            continue;
        }
        {
            unsigned long long seen = s->census[i].live + s->census[i].zombies;

            s->ncand++;
            /* A task that came after the /proc census is in the
             * kernel's count only: at least one was found. */
            if (!seen && (s->cand[i] & XLRD_CAND_KERNEL))
                seen = 1;
            s->dead_tasks += seen;
        }
    }
    s->phase = XLRD_SWEEP_REAP;
    s->next = 1;
}

static void finish(xlrd_sweeps *sw, xlrd_sweep *s)
{
    bool full = s->kind == XLRD_SWEEP_FULL;
    uint64_t took = xlreaper_now_us() - s->start_us;

    s->phase = XLRD_SWEEP_IDLE;
    if (full)
        sw->full_pending = false;
    xlrd_metrics_sweep(sw->m, s->kind, took, s->ncand, s->dead_tasks);
    xlrd_metrics_due(sw->m);
    xlrd_log(full || s->reaped ? XTL_NOTICE : XTL_DEBUG, -1,
             "%s%s done in %.1f ms: %u tasks on the host, %u candidate "
             "uid%s of dead domids, %u reaped",
             sweep_name(s),
             full ? " (whole range, by the kernel's count)" : "",
             (double)took / 1000.0, s->tasks, s->ncand,
             s->ncand == 1 ? "" : "s", s->reaped);
}

/* The next candidate's reap, or the end. */
static void reap_step(xlrd_sweeps *sw, xlrd_sweep *s)
{
    uint32_t max = xlreaper_max_domid();
    uint64_t now = xlreaper_now_us();

    for (; s->next <= max; s->next++) {
        uint32_t i = s->next;
        const xlrd_dom *dom = xlrd_reaper_dom(sw->rp, i);
        bool reported = false;
        xlrd_trigger trig;

        if (!s->cand[i])
            continue;
        /* A uid backed off after reaps that left tasks waits for its
         * time, whatever a sweep sees in it meanwhile. */
        if (dom->failures && now < dom->next_try_us && !dom->alive)
            continue;
        /* Its death's reap is pending: that one reports it. */
        if (dom->dead_pending)
            continue;
        /* Reaped, with a verdict, since this sweep looked: what it saw
         * (the kernel's count of a task that reap killed) is stale. */
        if (dom->reaped_us > s->start_us && !dom->retry)
            continue;
        /* A known domain that died before its @releaseDomain was
         * handled: this reap is its death's, reported as a release
         * would be, even when its uid was already empty. */
        trig = dom->alive                     ? XLRD_TRIGGER_RELEASE
               : s->kind == XLRD_SWEEP_CENSUS ? XLRD_TRIGGER_CENSUS
                                              : XLRD_TRIGGER_SWEEP;
        s->next++;
        xlrd_reap_domid(sw->rp, i, trig, s->cand[i], &reported);
        s->reaped += reported;
        return;
    }
    finish(sw, s);
}

static bool step(xlrd_sweeps *sw, xlrd_sweep *s)
{
    switch (s->phase) {
    case XLRD_SWEEP_KERNEL: kernel_step(sw, s); break;
    case XLRD_SWEEP_REAP: reap_step(sw, s); break;
    case XLRD_SWEEP_IDLE: return false;
    }
    return true;
}

int xlrd_sweeps_init(xlrd_sweeps *sw, xlreaper_ctx *ctx, xlrd_reaper *rp,
                     xlrd_domains *dm, xlrd_metrics *m)
{
    *sw = (xlrd_sweeps){
        .ctx = ctx, .rp = rp, .dm = dm, .m = m, .full_pending = true
    };
    return sweep_alloc(&sw->periodic) < 0 || sweep_alloc(&sw->census) < 0 ? -1
                                                                          : 0;
}

void xlrd_sweeps_dispose(xlrd_sweeps *sw)
{
    sweep_dispose(&sw->periodic);
    sweep_dispose(&sw->census);
}

bool xlrd_sweeps_step_census(xlrd_sweeps *sw)
{
    return step(sw, &sw->census);
}

void xlrd_sweeps_begin_census(xlrd_sweeps *sw)
{
    begin(sw, &sw->census, XLRD_SWEEP_CENSUS);
}

bool xlrd_sweeps_step_periodic(xlrd_sweeps *sw)
{
    return step(sw, &sw->periodic);
}

bool xlrd_sweeps_periodic_due(const xlrd_sweeps *sw, uint64_t now)
{
    return sw->full_pending || now >= sw->next_us;
}

void xlrd_sweeps_begin_periodic(xlrd_sweeps *sw)
{
    begin(sw, &sw->periodic,
          sw->full_pending ? XLRD_SWEEP_FULL : XLRD_SWEEP_WINDOW);
}

uint64_t xlrd_sweeps_next_us(const xlrd_sweeps *sw)
{
    return sw->next_us;
}

void xlrd_sweeps_reschedule(xlrd_sweeps *sw)
{
    sw->next_us =
        xlreaper_now_us() +
        (uint64_t)xlreaper_config_get(sw->ctx)->sweep_interval_s * 1000000u;
}

void xlrd_sweeps_postpone(xlrd_sweeps *sw, uint64_t until)
{
    sw->next_us = until;
}
