/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_reap.c - reaping the DM uids of dead domains.
 *
 * The lock.  A decision to kill uid base + d rests on a list that says
 * domain d is dead.  If d were reused and a new DM started in that uid
 * between the list and the kill, the kill would take the new DM.  Our
 * spawn (qemu-dm-restrict, xl-reaper spawn) takes the reaper lock, so
 * the daemon reads the list under that lock and holds it until its
 * reaps end: no DM of ours is born in between.
 *
 * The hole that is left.  Stock libxl does not take the lock when it
 * starts a DM (it runs QEMU as root with -runas, and QEMU changes uid
 * itself).  So the daemon asks about each domid once more, right before
 * its kill, and skips one that is alive again.  What remains is the
 * time from that question to the kill(-1), a few milliseconds: a new
 * domain created with that very domid, whose QEMU has already taken its
 * uid, in that window, would lose its DM.  libxl does not reuse a domid
 * within 60 s of its destruction (LIBXL_DOMID_REUSE_TIMEOUT) unless one
 * is asked for, which makes it rarer still; the libxl series in
 * docs/libxl-patches/ makes libxl take the lock and closes it.
 *
 * A domain that is born and dies between two of our lists (while a
 * reap takes long, say) is never known; after every @releaseDomain a
 * /proc census finds what such a domain left, and the sweeps what the
 * census misses.  A domain that died and was reborn between two of our
 * lists is never seen dead: its leftovers share the uid with the new
 * DM, and no uid kill can tell them apart.  Our spawn reaps a busy uid before the new
 * DM starts (reap_stale); stock libxl does not, and the patch does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "xl_reaperd.h"

/* Every sweep asks the kernel about this share of the range, so that
 * the whole range is asked about every KERNEL_WINDOWS sweeps. */
#define KERNEL_WINDOWS 60
/* The start sweep asks about the whole range in chunks this big,
 * handling events in between. */
#define KERNEL_CHUNK 1024

/* Why a uid is a candidate of a sweep. */
#define CAND_LIVE 1u
#define CAND_ZOMBIE 2u
#define CAND_KERNEL 4u
#define CAND_RETRY 8u

/* ---------- events ---------- */

int xlrd_events_open(xlrd *d)
{
    int fd;

    if (!d->events_path)
        return 0;
    fd =
        open(d->events_path,
             O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
             0640);
    if (fd < 0) {
        XLRD_LOGE(d, ERROR, "opening the events file %s", d->events_path);
        return -1;
    }
    if (d->events_fd >= 0)
        close(d->events_fd);
    d->events_fd = fd;
    return 0;
}

static uint64_t wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000u + (uint64_t)tv.tv_usec / 1000u;
}

/*
 * One event, one line: the library's JSON object for the result, with
 * the daemon's own fields in front: trigger, time_ms (wall clock),
 * result (the library's verdict on the call), xs_kill_uid (what xenstore
 * said, or null), and for a release event_us, from the watch event to
 * the verdict.
 */
static void emit(xlrd *d, xlrd_trigger trig, uint32_t domid,
                 const xlreaper_reap_result *res, int rc)
{
    char *json = NULL, *line = NULL, extra[160] = "", kuid[16] = "null";
    int n;

    if (xlreaper_reap_result_json(res, &json) || json[0] != '{') {
        XLRD_LOG(d, ERROR, "domid %u: out of memory for its event", domid);
        free(json);
        return;
    }
    if (d->doms[domid].kill_uid)
        snprintf(kuid, sizeof(kuid), "%u", d->doms[domid].kill_uid);
    if (trig == XLRD_TRIGGER_RELEASE && d->event_us)
        snprintf(extra, sizeof(extra), "\"event_us\":%llu,",
                 (unsigned long long)(xlrd_now_us() - d->event_us));
    n = asprintf(&line,
                 "{\"trigger\":\"%s\",\"time_ms\":%llu,\"result\":\"%s\","
                 "\"xs_kill_uid\":%s,%s%s\n",
                 trig == XLRD_TRIGGER_RELEASE ? "release"
                 : trig == XLRD_TRIGGER_SWEEP ? "sweep"
                                              : "census",
                 (unsigned long long)wall_ms(),
                 rc ? xlreaper_strerror(rc) : "ok", kuid, extra, json + 1);
    free(json);
    if (n < 0) {
        XLRD_LOG(d, ERROR, "domid %u: out of memory for its event", domid);
        return;
    }
    XLRD_LOG(d, NOTICE, "event: %.*s", n - 1, line);
    if (d->events_fd >= 0) {
        /* One write of an O_APPEND file: lines never interleave. */
        const char *p = line;
        size_t left = (size_t)n;
        while (left) {
            ssize_t r = write(d->events_fd, p, left);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                XLRD_LOGE(d, ERROR, "writing to the events file %s",
                          d->events_path);
                break;
            }
            p += r;
            left -= (size_t)r;
        }
    }
    free(line);
}

/* ---------- one reap ---------- */

typedef enum {
    REAP_DONE,    /* a verdict: empty, or zombies only */
    REAP_FAILED,  /* tried, no verdict: retried at the next sweep */
    REAP_ALIVE,   /* the domid lives again: not touched */
    REAP_UNKNOWN, /* cannot tell whether it lives: not touched */
} reap_status;

/* Reaps domid's uid under the held lock, unless it lives again. */
static reap_status reap_one(xlrd *d, xlreaper_lock *lock, uint32_t domid,
                            xlrd_trigger trig, bool *reported_r)
{
    xlreaper_reap_result res;
    bool done, report = true;
    char *what;
    int alive, rc;

    /* The last question before the kill: see the top of this file. */
    alive = xlrd_domain_alive(d, domid);
    if (alive != 0) {
        if (alive > 0)
            XLRD_LOG(d, NOTICE,
                     "domid %u: alive again before its uid was reaped (the "
                     "domid was reused): not killing, its new DM would die",
                     domid);
        else
            XLRD_LOG(d, WARN,
                     "domid %u: cannot tell whether it lives: not killing "
                     "now; the next sweep tries again",
                     domid);
        if (reported_r)
            *reported_r = false;
        if (alive < 0)
            d->doms[domid].retry = true;
        if (alive > 0)
            d->metrics.skipped_alive++;
        else
            d->metrics.skipped_unknown++;
        return alive > 0 ? REAP_ALIVE : REAP_UNKNOWN;
    }

    XLRD_LOG(d, INFO, "domid %u: reaping its DM uid (%s)", domid,
             trig == XLRD_TRIGGER_RELEASE ? "it died" : "its uid has tasks");
    xlreaper_reap_result_init(&res);
    res.lock_wait_us = xlreaper_lock_wait_us(lock);
    /* A release reports the domid free: its uid must be empty, zombies
     * and all, before a new domain of that domid starts in it. */
    rc = xlreaper_reap_flags(d->ctx, lock, domid,
                             trig == XLRD_TRIGGER_RELEASE
                                 ? XLREAPER_REAP_WAIT_EMPTY
                                 : 0,
                             &res);
    done = !rc && (res.outcome == XLREAPER_OUTCOME_EMPTY ||
                   res.outcome == XLREAPER_OUTCOME_ZOMBIES);
    if (trig != XLRD_TRIGGER_RELEASE && !rc) {
        /* A sweep reports what it did, not every uid it looked at. */
        /* The kill comes before any look into the uid, so "nothing
         * was left right after it" is not "nothing was killed": what
         * the census saw alive, or the kernel counted, is reported. */
        bool nothing = (res.was_empty &&
                        !(d->cand[domid] & (CAND_LIVE | CAND_KERNEL))) ||
                       (res.outcome == XLREAPER_OUTCOME_ZOMBIES &&
                        !res.tasks_seen && d->cand[domid] == CAND_ZOMBIE);
        d->doms[domid].zombies_only = nothing && !res.was_empty;
        report = !nothing;
    }
    if (report) {
        what = xlreaper_reap_result_describe(&res);
        xlrd_log(d, done ? XTL_INFO : XTL_ERROR, -1, "%s%s%s",
                 what ? what : "(out of memory)", rc ? ": " : "",
                 rc ? xlreaper_strerror(rc) : "");
        free(what);
        emit(d, trig, domid, &res, rc);
        /* Counted as the events are: what a sweep did, not every uid
         * it looked at. */
        xlrd_metrics_reap(d, trig, &res);
    }
    xlreaper_reap_result_dispose(&res);
    d->doms[domid].retry = !done;
    if (reported_r)
        *reported_r = report;
    return done ? REAP_DONE : REAP_FAILED;
}

/* The lock, or NULL (logged) when it cannot be had. */
static xlreaper_lock *take_lock(xlrd *d, const char *why)
{
    xlreaper_lock *lock = NULL;
    int rc;

    XLRD_LOG(d, INFO, "%s: taking the reaper lock", why);
    rc = xlreaper_lock_acquire(d->ctx, &lock);

    if (rc) {
        XLRD_LOG(d, ERROR,
                 "%s: cannot take the reaper lock (%s); the next "
                 "sweep tries again",
                 why, xlreaper_strerror(rc));
        d->metrics.lock_failures++;
        return NULL;
    }
    return lock;
}

static void forget(xlrd *d, uint32_t domid)
{
    xlrd_xs_watch_kill_uid(d, domid, false);
    d->doms[domid].alive = false;
    d->doms[domid].kill_uid = 0;
}

static void learn(xlrd *d, uint32_t domid)
{
    XLRD_LOG(d, DEBUG, "domid %u: a new domain", domid);
    d->doms[domid].alive = true;
    d->doms[domid].zombies_only = false;
    xlrd_read_kill_uid(d, domid);
    xlrd_xs_watch_kill_uid(d, domid, true);
}

/* ---------- deaths ---------- */

void xlrd_reconcile(xlrd *d)
{
    uint32_t max = xlreaper_max_domid(), ndead = 0;
    xlreaper_lock *lock;
    bool *now = d->listed;

    if (xlrd_domains_list(d, now) < 0)
        return; /* logged; the next event or sweep lists again */
    for (uint32_t i = 1; i <= max; i++) {
        if (now[i] && !d->doms[i].alive)
            learn(d, i);
        else if (now[i] && !d->doms[i].watched)
            xlrd_xs_watch_kill_uid(d, i, true); /* after a reconnect */
        else if (!now[i] && d->doms[i].alive)
            ndead++;
    }
    if (!ndead)
        return;
    for (uint32_t i = 1; i <= max; i++)
        d->listed_dead[i] = !now[i] && d->doms[i].alive;

    /* The list that decides is read under the lock, which is held until
     * the reaps end. */
    {
        char why[64];
        uint32_t first = 0;

        for (uint32_t i = 1; i <= max && !first; i++)
            if (!now[i] && d->doms[i].alive)
                first = i;
        if (ndead == 1)
            snprintf(why, sizeof(why), "domid %u died", first);
        else
            snprintf(why, sizeof(why), "%u known domains died (domid %u, ...)",
                     ndead, first);
        lock = take_lock(d, why);
    }
    if (!lock) {
        for (uint32_t i = 1; i <= max; i++)
            if (!now[i] && d->doms[i].alive) {
                d->doms[i].retry = true;
                forget(d, i);
            }
        xlrd_metrics_write(d, true);
        return;
    }
    if (xlrd_domains_list(d, now) < 0) {
        xlreaper_lock_release(lock);
        return;
    }
    for (uint32_t i = 1; i <= max; i++) {
        if (!d->doms[i].alive)
            continue;
        if (now[i]) {
            if (d->listed_dead[i]) {
                XLRD_LOG(d, NOTICE,
                         "domid %u: alive again before its uid was reaped "
                         "(the domid was reused): not killing, its new DM "
                         "would die",
                         i);
                d->metrics.skipped_alive++;
            }
            continue;
        }
        if (d->stop || xlrd_poll_signals(d)) {
            /* Stopping: what is not reaped now, the start sweep of the
             * next run finds. */
            break;
        }
        switch (reap_one(d, lock, i, XLRD_TRIGGER_RELEASE, NULL)) {
        case REAP_DONE:
        case REAP_FAILED: /* retry is set: the sweep takes it on */
            forget(d, i);
            break;
        case REAP_ALIVE: /* a new domain: learn it afresh */
            forget(d, i);
            learn(d, i);
            break;
        case REAP_UNKNOWN: /* still known alive: asked again next time */
            break;
        }
    }
    xlreaper_lock_release(lock);
    d->event_us = 0;
    xlrd_metrics_write(d, true);
}

/* ---------- sweeps ---------- */

/* A sweep that did not finish, unless the daemon is stopping; the
 * metrics say so at once. */
static void sweep_failed(xlrd *d)
{
    if (d->stop)
        return;
    d->metrics.sweep_errors++;
    xlrd_metrics_write(d, true);
}

/* Asks the kernel about domids first .. first + num - 1 in chunks,
 * handling events in between.  false when stopped or failed. */
static bool kernel_pass(xlrd *d, uint32_t first, uint32_t num)
{
    while (num) {
        uint32_t n = num < KERNEL_CHUNK ? num : KERNEL_CHUNK;
        int rc = xlreaper_census_kernel(d->ctx, first, n, d->busy);

        if (rc) {
            XLRD_LOG(d, ERROR, "sweep: the kernel census failed (%s)",
                     xlreaper_strerror(rc));
            return false;
        }
        for (uint32_t i = 0; i < n; i++)
            if (d->busy[i])
                d->cand[first + i] |= CAND_KERNEL;
        first += n;
        num -= n;
        if (num) {
            xlrd_xs_events(d);
            if (d->stop || xlrd_poll_signals(d))
                return false;
        }
    }
    return true;
}

void xlrd_sweep(xlrd *d, xlrd_sweep_kind kind)
{
    bool full = kind == XLRD_SWEEP_FULL;
    uint32_t max = xlreaper_max_domid(), ncand = 0, reaped = 0;
    uint64_t start = xlrd_now_us();
    const xlreaper_config *cfg = xlreaper_config_get(d->ctx);
    xlreaper_lock *lock;
    unsigned tasks = 0;
    unsigned long long dead_tasks = 0;
    bool *now = d->listed;
    int rc;

    if (kind != XLRD_SWEEP_CENSUS)
        d->next_sweep_us = start + (uint64_t)cfg->sweep_interval_s * 1000000u;
    memset(d->cand, 0, max + 1);

    /* Candidates, without the lock: hints and the kernel's answers. */
    rc = xlreaper_census(d->ctx, d->census, &tasks);
    if (rc) {
        XLRD_LOG(d, ERROR, "sweep: the /proc census failed (%s)",
                 xlreaper_strerror(rc));
        sweep_failed(d);
        return;
    }
    for (uint32_t i = 1; i <= max; i++) {
        if (d->census[i].live)
            d->cand[i] |= CAND_LIVE;
        else if (d->census[i].zombies && !d->doms[i].zombies_only)
            d->cand[i] |= CAND_ZOMBIE;
        if (d->doms[i].retry)
            d->cand[i] |= CAND_RETRY;
    }
    if (full) {
        if (!kernel_pass(d, 1, max)) {
            sweep_failed(d);
            return; /* full_sweep_pending stays: tried again */
        }
    } else if (kind == XLRD_SWEEP_WINDOW) {
        uint32_t w = (max + KERNEL_WINDOWS - 1) / KERNEL_WINDOWS;
        uint32_t first = d->window_next ? d->window_next : 1;

        if (first + w - 1 > max)
            w = max - first + 1;
        if (!kernel_pass(d, first, w)) {
            sweep_failed(d);
            return;
        }
        d->window_next = first + w > max ? 1 : first + w;
    }

    if (xlrd_domains_list(d, now) < 0) {
        sweep_failed(d);
        return;
    }
    for (uint32_t i = 1; i <= max; i++)
        if (d->cand[i] && !now[i]) {
            unsigned long long seen = d->census[i].live + d->census[i].zombies;

            ncand++;
            /* A task that came after the /proc census is in the
             * kernel's count only: at least one was found. */
            if (!seen && (d->cand[i] & CAND_KERNEL))
                seen = 1;
            dead_tasks += seen;
        }
    if (ncand) {
        lock = take_lock(d, kind == XLRD_SWEEP_CENSUS
                                ? "census: uids of dead domids have tasks"
                                : "sweep: uids of dead domids have tasks");
        if (!lock) {
            sweep_failed(d);
            return;
        }
        if (xlrd_domains_list(d, now) < 0) {
            xlreaper_lock_release(lock);
            sweep_failed(d);
            return;
        }
        for (uint32_t i = 1; i <= max; i++) {
            bool reported = false;
            xlrd_trigger trig;

            if (!d->cand[i] || now[i])
                continue;
            if (d->stop || xlrd_poll_signals(d))
                break;
            /* A known domain that died before its @releaseDomain was
             * handled: this reap is its death's, reported as a release
             * would be, even when its uid was already empty; the release
             * that follows finds it forgotten. */
            trig = d->doms[i].alive            ? XLRD_TRIGGER_RELEASE
                   : kind == XLRD_SWEEP_CENSUS ? XLRD_TRIGGER_CENSUS
                                               : XLRD_TRIGGER_SWEEP;
            if (reap_one(d, lock, i, trig, &reported) == REAP_DONE &&
                d->doms[i].alive)
                forget(d, i);
            reaped += reported;
        }
        xlreaper_lock_release(lock);
    }
    if (full)
        d->full_sweep_pending = false;
    xlrd_metrics_sweep(d, kind, xlrd_now_us() - start, ncand, dead_tasks);
    xlrd_metrics_write(d, true);
    xlrd_log(d, full || reaped ? XTL_NOTICE : XTL_DEBUG, -1,
             "%s%s done in %.1f ms: %u tasks on the host, %u candidate "
             "uid%s of dead domids, %u reaped",
             kind == XLRD_SWEEP_CENSUS ? "census" : "sweep",
             full ? " (whole range, by the kernel's count)" : "",
             (double)(xlrd_now_us() - start) / 1000.0, tasks, ncand,
             ncand == 1 ? "" : "s", reaped);
}
