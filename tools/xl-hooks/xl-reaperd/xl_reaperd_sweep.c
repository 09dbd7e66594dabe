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

#include "xl_reaperd.h"

/* Every periodic sweep asks the kernel about this share of the range,
 * so that the whole range is asked about every KERNEL_WINDOWS sweeps. */
#define KERNEL_WINDOWS 60
/* The kernel is asked about this many uids a step (a few ms). */
#define KERNEL_CHUNK 1024

int xlrd_sweep_alloc(xlrd_sweep *s)
{
    uint32_t n = xlreaper_max_domid() + 1;

    memset(s, 0, sizeof(*s));
    s->census = calloc(n, sizeof(*s->census));
    s->busy = calloc(KERNEL_CHUNK, sizeof(*s->busy));
    s->listed = calloc(n, sizeof(*s->listed));
    s->cand = calloc(n, sizeof(*s->cand));
    return s->census && s->busy && s->listed && s->cand ? 0 : -1;
}

void xlrd_sweep_dispose(xlrd_sweep *s)
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

/* A sweep that did not finish, unless the daemon is stopping; the
 * metrics say so at once. */
static void failed(xlrd *d, xlrd_sweep *s)
{
    s->phase = XLRD_SWEEP_IDLE;
    if (d->stop)
        return;
    d->metrics.sweep_errors++;
    xlrd_metrics_write(d, true);
}

void xlrd_sweep_begin(xlrd *d, xlrd_sweep *s, xlrd_sweep_kind kind)
{
    uint32_t max = xlreaper_max_domid();
    uint64_t now = xlrd_now_us();
    int rc;

    s->kind = kind;
    s->start_us = now;
    s->tasks = s->ncand = s->reaped = 0;
    s->dead_tasks = 0;
    memset(s->cand, 0, max + 1);
    if (kind != XLRD_SWEEP_CENSUS)
        d->next_sweep_us =
            now +
            (uint64_t)xlreaper_config_get(d->ctx)->sweep_interval_s * 1000000u;

    /* Candidates, without the lock: hints and the kernel's answers. */
    rc = xlreaper_census(d->ctx, s->census, &s->tasks);
    if (rc) {
        XLRD_LOG(d, ERROR, "%s: the /proc census failed (%s)", sweep_name(s),
                 xlreaper_strerror(rc));
        failed(d, s);
        return;
    }
    for (uint32_t i = 1; i <= max; i++) {
        if (s->census[i].live)
            s->cand[i] |= XLRD_CAND_LIVE;
        else if (s->census[i].zombies)
            s->cand[i] |= XLRD_CAND_ZOMBIE;
        if (d->doms[i].retry)
            s->cand[i] |= XLRD_CAND_RETRY;
    }
    if (kind == XLRD_SWEEP_FULL) {
        s->next = 1;
        s->end = max + 1;
    } else if (kind == XLRD_SWEEP_WINDOW) {
        uint32_t w = (max + KERNEL_WINDOWS - 1) / KERNEL_WINDOWS;
        uint32_t first = d->window_next ? d->window_next : 1;

        if (first + w - 1 > max)
            w = max - first + 1;
        s->next = first;
        s->end = first + w;
        d->window_next = first + w > max ? 1 : first + w;
    } else {
        s->next = s->end = 0;
    }
    s->phase = XLRD_SWEEP_KERNEL;
}

/* One chunk of the kernel's count. */
static void kernel_step(xlrd *d, xlrd_sweep *s)
{
    uint32_t n = s->end - s->next, max = xlreaper_max_domid();
    int rc;

    if (n > KERNEL_CHUNK)
        n = KERNEL_CHUNK;
    if (n) {
        rc = xlreaper_census_kernel(d->ctx, s->next, n, s->busy);
        if (rc) {
            XLRD_LOG(d, ERROR, "%s: the kernel census failed (%s)",
                     sweep_name(s), xlreaper_strerror(rc));
            failed(d, s);
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
    if (xlrd_domains_list(d, s->listed) < 0) {
        failed(d, s);
        return;
    }
    for (uint32_t i = 1; i <= max; i++) {
        /* Zombies already reaped, and reported, once: the kernel's
         * count of them (it counts zombies) is no new find. */
        if ((s->cand[i] & XLRD_CAND_ZOMBIE) && d->doms[i].zombies_only &&
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

static void finish(xlrd *d, xlrd_sweep *s)
{
    bool full = s->kind == XLRD_SWEEP_FULL;
    uint64_t took = xlrd_now_us() - s->start_us;

    s->phase = XLRD_SWEEP_IDLE;
    if (full)
        d->full_sweep_pending = false;
    xlrd_metrics_sweep(d, s->kind, took, s->ncand, s->dead_tasks);
    xlrd_metrics_write(d, true);
    xlrd_log(d, full || s->reaped ? XTL_NOTICE : XTL_DEBUG, -1,
             "%s%s done in %.1f ms: %u tasks on the host, %u candidate "
             "uid%s of dead domids, %u reaped",
             sweep_name(s),
             full ? " (whole range, by the kernel's count)" : "",
             (double)took / 1000.0, s->tasks, s->ncand,
             s->ncand == 1 ? "" : "s", s->reaped);
}

/* The next candidate's reap, or the end. */
static void reap_step(xlrd *d, xlrd_sweep *s)
{
    uint32_t max = xlreaper_max_domid();
    uint64_t now = xlrd_now_us();

    for (; s->next <= max; s->next++) {
        uint32_t i = s->next;
        xlrd_dom *dom = &d->doms[i];
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
        xlrd_reap_domid(d, i, trig, s->cand[i], &reported);
        s->reaped += reported;
        return;
    }
    finish(d, s);
}

bool xlrd_sweep_step(xlrd *d, xlrd_sweep *s)
{
    switch (s->phase) {
    case XLRD_SWEEP_KERNEL: kernel_step(d, s); break;
    case XLRD_SWEEP_REAP: reap_step(d, s); break;
    case XLRD_SWEEP_IDLE: break;
    }
    return s->phase != XLRD_SWEEP_IDLE;
}
