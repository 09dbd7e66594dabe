/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_reap.c - reaping the DM uids of dead domains.
 *
 * The lock.  A decision to kill uid base + d rests on the hypervisor
 * saying that domain d is dead.  If d were reused and a new DM started
 * in that uid between that answer and the kill, the kill would take
 * the new DM.  Our spawn (qemu-dm-restrict, xl-reaper spawn) takes the
 * reaper lock, so the daemon takes the lock for one domid, asks the
 * hypervisor about that domid under it, reaps, and lets it go: no DM of
 * ours is born between the answer and the kill, and no two killers with
 * the pet uid run at once (libxl's rule).  The lock is taken and let go
 * per domid, never held across a whole death list or sweep, and the
 * reap itself lets it go after its first round's kill
 * (XLREAPER_REAP_LOCK_ROUNDS): a uid whose reap waits out
 * reap_timeout_ms (tasks stuck in D state) holds up no one else's reap
 * or spawn, and such a uid is then backed off (see backoff()).
 *
 * The hole that is left.  Stock libxl does not take the lock when it
 * starts a DM (it runs QEMU as root with -runas, and QEMU changes uid
 * itself).  What remains is the time from the question under the lock
 * to the kill(-1), a few milliseconds: a new
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
#include <unistd.h>

#include "xl_reaperd_log.h"
#include "xl_reaperd_reap.h"

/* A uid whose reaps leave live or stuck tasks is tried again after
 * sweep_interval_s, then after twice that, and so on up to this many
 * sweep intervals (and at most an hour): reported every time, never
 * retried at every sweep. */
#define BACKOFF_MAX_SWEEPS 64u
#define BACKOFF_MAX_S 3600u

/* ---------- events ---------- */

/*
 * One event, one line: the library's JSON object for the result, with
 * the daemon's own fields in front: trigger, time_ms (wall clock),
 * result (the library's verdict on the call), xs_kill_uid (what xenstore
 * said, or null), intent (its record's id, when the daemon keeps
 * them), recovered (true: the reap of a record an earlier run left
 * unfinished), and for a release event_us, from the watch event to the
 * verdict.
 */
static void emit(xlrd_reaper *rp, xlrd_trigger trig, uint32_t domid,
                 const xlreaper_reap_result *res, int rc, uint64_t intent,
                 bool recovered)
{
    char *json = NULL, *line = NULL, extra[160] = "", kuid[16] = "null";
    char ids[64] = "";
    int n;

    if (xlreaper_reap_result_json(res, &json) || json[0] != '{') {
        XLRD_LOG(ERROR, "domid %u: out of memory for its event", domid);
        free(json);
        return;
    }
    uint32_t kill_uid = xlrd_domains_kill_uid(rp->dm, domid);
    uint64_t event_us = rp->doms[domid].event_us;

    if (kill_uid)
        snprintf(kuid, sizeof(kuid), "%u", kill_uid);
    if (trig == XLRD_TRIGGER_RELEASE && event_us)
        snprintf(extra, sizeof(extra), "\"event_us\":%llu,",
                 (unsigned long long)(xlreaper_now_us() - event_us));
    if (intent)
        snprintf(ids, sizeof(ids), "\"intent\":%llu,%s",
                 (unsigned long long)intent,
                 recovered ? "\"recovered\":true," : "");
    n = asprintf(&line,
                 "{\"trigger\":\"%s\",\"time_ms\":%llu,\"result\":\"%s\","
                 "\"xs_kill_uid\":%s,%s%s%s\n",
                 trig == XLRD_TRIGGER_RELEASE ? "release"
                 : trig == XLRD_TRIGGER_SWEEP ? "sweep"
                                              : "census",
                 (unsigned long long)(xlrd_wall_us() / 1000u),
                 rc ? xlreaper_strerror(rc) : "ok", kuid, ids, extra,
                 json + 1);
    free(json);
    if (n < 0) {
        XLRD_LOG(ERROR, "domid %u: out of memory for its event", domid);
        return;
    }
    XLRD_LOG(NOTICE, "event: %.*s", n - 1, line);
    /* The queue takes the line, and ends the intent once it is
     * written. */
    xlrd_events_put(rp->ev, line, (size_t)n, intent);
}

/* ---------- one reap ---------- */

static void forget(xlrd_reaper *rp, uint32_t domid)
{
    xlrd_dom *dom = &rp->doms[domid];

    xlrd_xs_watch_kill_uid(rp->xs, domid, false);
    dom->alive = false;
    xlrd_domains_forget_kill_uid(rp->dm, domid);
    dom->event_us = 0;
    (void)xlrd_intent_take(rp->st, domid);
    if (dom->dead_pending) {
        dom->dead_pending = false;
        rp->dead_pending--;
    }
}

static void learn(xlrd_reaper *rp, uint32_t domid)
{
    xlrd_dom *dom = &rp->doms[domid];

    /* Its death's intent record, durable before it is said known. */
    xlrd_intent_learn(rp->st, domid);
    XLRD_LOG(DEBUG, "domid %u: a new domain", domid);
    dom->alive = true;
    dom->zombies_only = false;
    dom->failures = 0;
    dom->next_try_us = 0;
    xlrd_read_kill_uid(rp->dm, domid);
    xlrd_xs_watch_kill_uid(rp->xs, domid, true);
}

/* A reap that left tasks alive (or stuck): the uid is not tried again
 * at every sweep, but after a delay that doubles, and each time it is
 * said.  (A new death of the domid is reaped at once all the same.) */
static void backoff(xlrd_reaper *rp, uint32_t domid)
{
    xlrd_dom *dom = &rp->doms[domid];
    uint64_t s = xlreaper_config_get(rp->ctx)->sweep_interval_s;
    uint64_t cap = s * BACKOFF_MAX_SWEEPS;

    if (cap > BACKOFF_MAX_S)
        cap = BACKOFF_MAX_S;
    if (dom->failures < 32)
        dom->failures++;
    s <<= dom->failures - 1 < 20 ? dom->failures - 1 : 20;
    if (s > cap)
        s = cap;
    if (!s)
        s = 1;
    dom->next_try_us = xlreaper_now_us() + s * 1000000u;
    XLRD_LOG(WARN,
             "domid %u: its uid still has tasks after %u reap%s; backing "
             "off: next try in %llu s",
             domid, dom->failures, dom->failures == 1 ? "" : "s",
             (unsigned long long)s);
}

/* Reaps domid's uid under the held lock, unless it lives again. */
static xlrd_reap_status reap_locked(xlrd_reaper *rp, xlreaper_lock *lock,
                                    uint32_t domid, xlrd_trigger trig,
                                    unsigned cand, uint64_t intent,
                                    bool recovered, bool *reported_r)
{
    xlreaper_reap_result res;
    bool done, report = true;
    char *what;
    int alive, rc;

    /* The last question before the kill: see the top of this file. */
    alive = xlrd_domain_alive(rp->dm, domid);
    if (alive != 0) {
        if (alive > 0)
            XLRD_LOG(NOTICE,
                     "domid %u: alive again before its uid was reaped (the "
                     "domid was reused): not killing, its new DM would die",
                     domid);
        else
            XLRD_LOG(WARN,
                     "domid %u: cannot tell whether it lives: not killing "
                     "now; the next sweep tries again",
                     domid);
        if (alive < 0)
            rp->doms[domid].retry = true;
        xlrd_metrics_count(rp->m,
                           alive > 0 ? XLRD_COUNT_SKIPPED_ALIVE
                                     : XLRD_COUNT_SKIPPED_UNKNOWN,
                           1);
        return alive > 0 ? XLRD_REAP_ALIVE : XLRD_REAP_UNKNOWN;
    }

    XLRD_LOG(INFO, "domid %u: reaping its DM uid (%s)", domid,
             trig == XLRD_TRIGGER_RELEASE ? "it died" : "its uid has tasks");
    xlreaper_reap_result_init(&res);
    res.lock_wait_us = xlreaper_lock_wait_us(lock);
    /* A release reports the domid free: its uid must be empty, zombies
     * and all, before a new domain of that domid starts in it.  The
     * lock is handed over: the reap lets it go after its first round's
     * kill, and a uid that stays stuck holds nobody up while it is
     * waited for (the reap marks the uid, so that no spawn starts a DM
     * in it meanwhile: xlreaper_lock.c). */
    rc = xlreaper_reap_flags(
        rp->ctx, lock, domid,
        XLREAPER_REAP_LOCK_ROUNDS |
            (trig == XLRD_TRIGGER_RELEASE ? XLREAPER_REAP_WAIT_EMPTY : 0),
        &res);
    done = !rc && (res.outcome == XLREAPER_OUTCOME_EMPTY ||
                   res.outcome == XLREAPER_OUTCOME_ZOMBIES);
    if (trig != XLRD_TRIGGER_RELEASE && !rc) {
        /* A sweep reports what it did, not every uid it looked at.
         * The kill comes before any look into the uid, so "nothing
         * was left right after it" is not "nothing was killed": what
         * the census saw alive, or the kernel counted, is reported.
         * Zombies found again (the census saw zombies and nothing
         * alive, and zombies are all that is left) are not a reap:
         * their death was reported when it happened. */
        bool nothing =
            (res.was_empty && !(cand & (XLRD_CAND_LIVE | XLRD_CAND_KERNEL))) ||
            (res.outcome == XLREAPER_OUTCOME_ZOMBIES &&
             (cand & XLRD_CAND_ZOMBIE) && !(cand & XLRD_CAND_LIVE));
        report = !nothing;
    }
    if (done) {
        rp->doms[domid].zombies_only = res.outcome == XLREAPER_OUTCOME_ZOMBIES;
        rp->doms[domid].reaped_us = xlreaper_now_us();
    }
    if (report) {
        what = xlreaper_reap_result_describe(&res);
        xlrd_log(done ? XTL_INFO : XTL_ERROR, -1, "%s%s%s",
                 what ? what : "(out of memory)", rc ? ": " : "",
                 rc ? xlreaper_strerror(rc) : "");
        free(what);
        emit(rp, trig, domid, &res, rc, intent, recovered);
        /* Counted as the events are: what a sweep did, not every uid
         * it looked at. */
        xlrd_metrics_reap(rp->m, trig, &res, rp->doms[domid].event_us);
    }
    if (done) {
        rp->doms[domid].failures = 0;
        rp->doms[domid].next_try_us = 0;
    } else if (res.outcome == XLREAPER_OUTCOME_REMAIN) {
        backoff(rp, domid);
    }
    xlreaper_reap_result_dispose(&res);
    rp->doms[domid].retry = !done;
    if (reported_r)
        *reported_r = report;
    return done ? XLRD_REAP_DONE : XLRD_REAP_FAILED;
}

/* intent: the open record this reap finishes (the domain's "A", or one
 * an earlier run left, then recovered), or 0 for a new one. */
static xlrd_reap_status reap_domid(xlrd_reaper *rp, uint32_t domid,
                                   xlrd_trigger trig, unsigned cand,
                                   uint64_t intent, bool recovered,
                                   bool *reported_r)
{
    xlreaper_lock *lock = NULL;
    bool reported = false;
    xlrd_reap_status st;
    int rc;

    /* Durable before the lock is taken, and so before the kill. */
    if (!intent)
        intent = xlrd_intent_begin(rp->st, domid, trig, cand);
    XLRD_LOG(INFO, "domid %u%s: taking the reaper lock", domid,
             trig == XLRD_TRIGGER_RELEASE ? " died" : "'s uid has tasks");
    rc = xlreaper_lock_acquire(rp->ctx, &lock);
    if (rc) {
        XLRD_LOG(ERROR,
                 "domid %u: cannot take the reaper lock (%s); the next "
                 "sweep tries again",
                 domid, xlreaper_strerror(rc));
        xlrd_metrics_count(rp->m, XLRD_COUNT_LOCK_FAILURES, 1);
        rp->doms[domid].retry = true;
        st = XLRD_REAP_NOLOCK;
    } else {
        st = reap_locked(rp, lock, domid, trig, cand, intent, recovered,
                         &reported);
        xlreaper_lock_release(lock);
    }
    /* An event ends its intent once written; no event, no wait. */
    if (!reported)
        xlrd_intent_end(rp->st, intent, xlrd_events_queued(rp->ev) == 0);
    if (reported_r)
        *reported_r = reported;
    /* A known domain is forgotten once its death was dealt with. */
    if (rp->doms[domid].alive) {
        switch (st) {
        case XLRD_REAP_DONE:
        case XLRD_REAP_FAILED: /* retry is set: a sweep takes it on */
        case XLRD_REAP_NOLOCK: forget(rp, domid); break;
        case XLRD_REAP_ALIVE: /* a new domain: learnt afresh */
            forget(rp, domid);
            learn(rp, domid);
            break;
        case XLRD_REAP_UNKNOWN: /* still known alive: asked again */ break;
        }
    }
    return st;
}

xlrd_reap_status xlrd_reap_domid(xlrd_reaper *rp, uint32_t domid,
                                 xlrd_trigger trig, unsigned cand,
                                 bool *reported_r)
{
    uint64_t intent = 0;
    bool recovered = false;

    /* A known domain's death: the record of its birth is its intent. */
    if (trig == XLRD_TRIGGER_RELEASE && xlrd_intent_of(rp->st, domid)->id) {
        xlrd_intent r = xlrd_intent_take(rp->st, domid);

        intent = r.id;
        recovered = r.recovered;
    }
    return reap_domid(rp, domid, trig, cand, intent, recovered, reported_r);
}

/* ---------- the reaper uid at start ---------- */

/* An init that reaps orphans on a timer (every 2 s on the host the
 * benchmarks ran on) keeps a killed run's killer that long; systemd
 * reaps it at once.  Less than a metrics period, so that the file
 * written just before stays fresh. */
#define REAPER_UID_WAIT_MS 3000u
#define REAPER_UID_POLL_US 20000u

void xlrd_wait_reaper_uid(xlrd_reaper *rp)
{
    uid_t pet = xlreaper_config_get(rp->ctx)->reaper_uid;
    uint64_t start = xlreaper_now_us();
    bool empty = false, said = false;

    for (;;) {
        /* No answer: the reaps go on, and say what they find. */
        if (xlreaper_uid_empty(rp->ctx, pet, &empty) || empty)
            break;
        if (!said) {
            XLRD_LOG(NOTICE,
                     "the reaper uid %lu has tasks (a run killed while it "
                     "reaped leaves its killer there, dying or a zombie, "
                     "until init reaps it, and no reap kills while the "
                     "reaper uid runs anything): waiting up to %u ms",
                     (unsigned long)pet, REAPER_UID_WAIT_MS);
            said = true;
        }
        if (xlreaper_now_us() - start >= REAPER_UID_WAIT_MS * 1000ull) {
            XLRD_LOG(WARN,
                     "the reaper uid %lu still has tasks after %u ms: "
                     "every reap is refused while it has",
                     (unsigned long)pet, REAPER_UID_WAIT_MS);
            return;
        }
        usleep(REAPER_UID_POLL_US);
    }
    if (said)
        XLRD_LOG(NOTICE, "the reaper uid %lu is empty after %.1f ms",
                 (unsigned long)pet,
                 (double)(xlreaper_now_us() - start) / 1000.0);
}

/* ---------- deaths ---------- */

bool xlrd_reconcile(xlrd_reaper *rp)
{
    uint32_t max = xlreaper_max_domid();
    bool *now = rp->listed;
    uint64_t release_us;

    if (!xlrd_domains_can_list(rp->dm) ||
        !xlrd_xs_take_reconcile(rp->xs, &release_us))
        return false;
    if (xlrd_domains_list(rp->dm, now) < 0)
        return true; /* logged; the next event or sweep lists again */
    for (uint32_t i = 1; i <= max; i++) {
        xlrd_dom *dom = &rp->doms[i];

        if (xlrd_intent_of(rp->st, i)->adopt) {
            /* Known alive by an earlier run (its "A" record): alive
             * still, or it died while no daemon watched. */
            xlrd_intent_adopted(rp->st, i);
            if (now[i]) {
                learn(rp, i);
                continue;
            }
            XLRD_LOG(NOTICE,
                     "domid %u: known alive by an earlier run, dead now: "
                     "reaping its uid",
                     i);
            xlrd_metrics_count(rp->m, XLRD_COUNT_INTENTS_REDONE, 1);
            dom->alive = true;
            dom->dead_pending = true;
            dom->event_us = 0;
            rp->dead_pending++;
            continue;
        }
        if (now[i] && !dom->alive)
            learn(rp, i);
        else if (now[i] && !xlrd_xs_watched(rp->xs, i))
            xlrd_xs_watch_kill_uid(rp->xs, i, true); /* after a reconnect */
        else if (!now[i] && dom->alive && !dom->dead_pending) {
            /* Reaped by xlrd_reap_next, one at a time, each under a
             * lock of its own and after one more question. */
            dom->dead_pending = true;
            dom->event_us = release_us;
            rp->dead_pending++;
        }
    }
    xlrd_xs_release_done(rp->xs);
    return true;
}

bool xlrd_reap_next(xlrd_reaper *rp)
{
    uint32_t max = xlreaper_max_domid();

    if (!rp->dead_pending)
        return false;
    for (uint32_t i = 1; i <= max; i++) {
        if (!rp->doms[i].dead_pending)
            continue;
        xlrd_intent r = xlrd_intent_take(rp->st, i);

        rp->doms[i].dead_pending = false;
        rp->dead_pending--;
        if (r.recovered)
            reap_domid(rp, i, (xlrd_trigger)r.trigger, r.cand, r.id, true,
                       NULL);
        else
            reap_domid(rp, i, XLRD_TRIGGER_RELEASE, 0, r.id, false, NULL);
        /* Written once no death waits (the dispatcher's order). */
        xlrd_metrics_due(rp->m);
        return true;
    }
    rp->dead_pending = 0; /* not reached: the count said one was */
    return false;
}

/* ---------- the known domains ---------- */

int xlrd_reaper_init(xlrd_reaper *rp, xlreaper_ctx *ctx, xlrd_domains *dm,
                     xlrd_xs *xs, xlrd_events *ev, xlrd_state *st,
                     xlrd_metrics *m)
{
    uint32_t n = xlreaper_max_domid() + 1;

    *rp = (xlrd_reaper){
        .ctx = ctx, .dm = dm, .xs = xs, .ev = ev, .st = st, .m = m
    };
    rp->doms = calloc(n, sizeof(*rp->doms));
    rp->listed = calloc(n, sizeof(*rp->listed));
    return rp->doms && rp->listed ? 0 : -1;
}

void xlrd_reaper_dispose(xlrd_reaper *rp)
{
    free(rp->doms);
    free(rp->listed);
    rp->doms = NULL;
    rp->listed = NULL;
}

void xlrd_reaper_counts(const xlrd_reaper *rp, unsigned *retry_r,
                        unsigned *backed_off_r)
{
    uint32_t max = xlreaper_max_domid();
    unsigned retry = 0, backed_off = 0;

    for (uint32_t i = 1; i <= max; i++) {
        retry += rp->doms[i].retry;
        backed_off += rp->doms[i].failures > 0;
    }
    *retry_r = retry;
    *backed_off_r = backed_off;
}

void xlrd_reaper_recovered(xlrd_reaper *rp)
{
    uint32_t max = xlreaper_max_domid();
    unsigned redone = 0;

    for (uint32_t i = 1; i <= max; i++) {
        if (!xlrd_intent_take_redo(rp->st, i) || rp->doms[i].dead_pending)
            continue;
        rp->doms[i].dead_pending = true;
        rp->dead_pending++;
        redone++;
    }
    xlrd_metrics_count(rp->m, XLRD_COUNT_INTENTS_REDONE, redone);
}

bool xlrd_reaper_kill_uids(xlrd_reaper *rp)
{
    bool any = false;
    uint32_t domid;

    while (xlrd_xs_take_kill_uid(rp->xs, &domid)) {
        any = true;
        if (rp->doms[domid].alive)
            xlrd_read_kill_uid(rp->dm, domid);
    }
    return any;
}
