/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_dead.c - the audit's scope of uids that must run
 * nothing: the pet, the range base, the shared user, and every dead
 * domain's DM uid (xlreaper_audit.c says how a /proc pass and the
 * kernel's count share that work).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"

#define NO_DOMID XLREAPER_AUDIT_NO_DOMID
#define NO_UID XLREAPER_AUDIT_NO_UID
#define ADD XLREAPER__AUDIT_ADD

typedef xlreaper__audit audit;

#define task_has_uid xlreaper__audit_task_has_uid
#define is_live xlreaper__audit_is_live
#define uid_domid xlreaper__audit_uid_domid
#define cmp_u32 xlreaper__audit_cmp_u32

/* ---------- uids that must run nothing ---------- */

typedef struct {
    unsigned tasks, zombies;
    const xlreaper_task *first;
} bucket;

static bucket bucket_of(const audit *a, uid_t uid)
{
    bucket b = { 0 };

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i];
        if (!task_has_uid(t, uid))
            continue;
        if (!b.first)
            b.first = t;
        b.tasks++;
        b.zombies += t->state == 'Z' || t->state == 'X';
    }
    return b;
}

static int probe_empty(audit *a, uid_t uid, bool *empty_r)
{
    a->res->probes++;
    return xlreaper_uid_empty(a->ctx, uid, empty_r);
}

static int probe_count(audit *a, uid_t uid, unsigned *count_r)
{
    a->res->probes++;
    return xlreaper_uid_count(a->ctx, uid, count_r);
}

/*
 * Root's own helpers pass through these uids: a killer runs with real
 * uid pet, a kernel-census probe (ours, or xl-reaperd's sweeping at the
 * same time) with each dead uid in turn, a spawn's child holds the DM
 * uid before its execve; each for a millisecond or so, and always with
 * saved uid 0, which no DM task can have.  So a uid that a pass or the
 * kernel saw busy is looked at again: busy when a task of it without
 * saved uid 0 shows in /proc, or when the kernel still counts tasks of
 * it at every look (a fork racer hides from /proc, never from that);
 * settled empty as soon as the kernel counts none.  *busy_r is set.
 */
#define SETTLE_LOOKS 5
#define SETTLE_PAUSE_US 20000

static int settle(audit *a, uid_t uid, bool *busy_r)
{
    for (unsigned look = 0; look < SETTLE_LOOKS; look++) {
        xlreaper_task_list l;
        bool empty, real = false;
        int rc;

        if (look)
            xlreaper__sleep_us(SETTLE_PAUSE_US);
        xlreaper_task_list_init(&l);
        rc = xlreaper_scan_uid(a->ctx, uid, &l);
        for (unsigned i = 0; !rc && i < l.num; i++)
            real |= l.tasks[i].suid != 0;
        xlreaper_task_list_dispose(&l);
        if (rc)
            return rc;
        if (real) {
            *busy_r = true;
            return 0;
        }
        rc = probe_empty(a, uid, &empty);
        if (rc)
            return rc;
        if (empty) {
            *busy_r = false;
            return 0;
        }
    }
    *busy_r = true;
    return 0;
}

/* The pet, the uid of domid 0 and the shared user must never run
 * anything: a pass and the kernel count both say so. */
static int check_idle_uid(audit *a, const char *name, uid_t uid,
                          const char *what)
{
    bucket b = bucket_of(a, uid);
    unsigned count = 0;
    bool empty, busy;
    int rc;

    if (b.tasks) {
        rc = settle(a, uid, &busy);
        if (rc == XLREAPER_ERROR_NOMEM)
            return rc;
        if (!rc && !busy)
            return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_PASS,
                       "%s uid %lu runs nothing (kernel count 0; pid %ld, "
                       "seen in passing, was gone when looked at again)",
                       what, (unsigned long)uid, (long)b.first->tid);
    }
    if (b.tasks) {
        rc = probe_count(a, uid, &count);
        if (rc == XLREAPER_ERROR_NOMEM)
            return rc;
        return ADD(a, name, NO_DOMID, uid, b.first->tid, XLREAPER_AUDIT_FAIL,
                   "%s uid %lu runs %u task%s (kernel count %s%u, %u "
                   "zombie%s), first pid %ld (%s, state %c): it must run "
                   "nothing",
                   what, (unsigned long)uid, b.tasks, b.tasks == 1 ? "" : "s",
                   rc ? "unknown, " : "", count, b.zombies,
                   b.zombies == 1 ? "" : "s", (long)b.first->tid,
                   b.first->comm, b.first->state);
    }
    rc = probe_empty(a, uid, &empty);
    if (rc == XLREAPER_ERROR_NOMEM)
        return rc;
    if (rc)
        return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "%s uid %lu: the kernel-count probe failed", what,
                   (unsigned long)uid);
    if (!empty) {
        rc = settle(a, uid, &busy);
        if (rc == XLREAPER_ERROR_NOMEM)
            return rc;
        empty = !rc && !busy;
    }
    if (!empty)
        return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_FAIL,
                   "%s uid %lu: the kernel counts tasks that /proc did not "
                   "show (racing it?): it must run nothing",
                   what, (unsigned long)uid);
    return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_PASS,
               "%s uid %lu runs nothing (kernel count 0)", what,
               (unsigned long)uid);
}

int xlreaper__audit_idle_pet(xlreaper__audit *a, xlreaper__audit_dm *unused)
{
    (void)unused;
    return check_idle_uid(a, "reaper_idle", a->w.pet, "the reaper (pet)");
}

int xlreaper__audit_idle_base(xlreaper__audit *a, xlreaper__audit_dm *unused)
{
    (void)unused;
    if (a->w.pet == a->w.base)
        return 0;
    return check_idle_uid(a, "domid0_uid", a->w.base,
                          "the range base (domid 0's)");
}

int xlreaper__audit_idle_shared(xlreaper__audit *a, xlreaper__audit_dm *unused)
{
    (void)unused;
    if (a->w.shared == NO_UID)
        return 0;
    return check_idle_uid(a, "shared_user", a->w.shared,
                          "the shared DM user " XLREAPER_USER_SHARED "'s");
}

/* ---------- leftovers ---------- */

static int fix_uid(audit *a, uint32_t domid, xlreaper_audit_check *c)
{
    xlreaper_reap_result rr;
    char *what, *reason;
    int rc;

    xlreaper_reap_result_init(&rr);
    rc = xlreaper_reap(a->ctx, NULL, domid, &rr);
    what = rr.outcome != XLREAPER_OUTCOME_NONE
               ? xlreaper_reap_result_describe(&rr)
               : NULL;
    c->fixed = true;
    if (!rc && rr.outcome == XLREAPER_OUTCOME_EMPTY)
        c->status = XLREAPER_AUDIT_PASS;
    if (asprintf(&reason, "%s; --fix reaped it: %s", c->reason,
                 what ? what : xlreaper_strerror(rc)) >= 0) {
        for (char *p = reason; *p; p++)
            if (*p < 0x20 || *p > 0x7e)
                *p = '?';
        free(c->reason);
        c->reason = reason;
    }
    free(what);
    xlreaper_reap_result_dispose(&rr);
    return 0;
}

/* Whether a pass saw a task of uid that is not one of root's helpers. */
static bool bucket_has_real(const audit *a, uid_t uid)
{
    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i];
        if (task_has_uid(t, uid) && t->suid != 0)
            return true;
    }
    return false;
}

/* Where tid sleeps, printable, into buf ("?" when it cannot be read):
 * read here, like the pass's status files (xlreaper__read_wchan takes no
 * lock the task can hold). */
static void read_wchan(pid_t tid, char *buf, size_t size)
{
    char rel[64];

    snprintf(rel, sizeof(rel), "/proc/%ld", (long)tid);
    xlreaper__read_wchan(AT_FDCWD, rel, buf, size);
    if (!buf[0])
        snprintf(buf, size, "?");
}

/*
 * A task of a dead domain's uid in D state with SIGKILL pending has
 * been killed and cannot exit until what it waits on answers: a reap
 * says "stuck" of it (or, on a FUSE connection of the DM's own, aborts
 * it).  Said apart from the leftover, with where the first one waits.
 */
static int check_stuck(audit *a, uint32_t domid, uid_t uid)
{
    const xlreaper_task *first = NULL;
    char wchan[64];
    unsigned n = 0;

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i];

        if (task_has_uid(t, uid) && t->state == 'D' && t->kill_pending) {
            first = first ? first : t;
            n++;
        }
    }
    if (!first)
        return 0;
    read_wchan(first->tid, wchan, sizeof(wchan));
    return ADD(a, "stuck", domid, uid, first->tid, XLREAPER_AUDIT_FAIL,
               "domid %u is not live, and %u task%s of its uid %lu %s in D "
               "state with SIGKILL pending, first pid %ld (%s) at %s: "
               "killed, it cannot exit until what it waits on answers "
               "(`xl-reaper kill %u` aborts the uid's own FUSE connections)",
               domid, n, n == 1 ? "" : "s", (unsigned long)uid,
               n == 1 ? "is" : "are", (long)first->tid, first->comm, wchan,
               domid);
}

static int leftover(audit *a, uint32_t domid, uid_t uid, const bucket *b,
                    unsigned *found)
{
    unsigned count = 0;
    bool busy;
    int rc, prc;

    /* Seen busy, by a pass or the kernel: a helper of root's in passing
     * is not a leftover (see settle). */
    prc = settle(a, uid, &busy);
    if (prc == XLREAPER_ERROR_NOMEM)
        return prc;
    if (!prc && !busy)
        return 0;
    /* The kernel could not be asked (the lock not had in time, a probe
     * that failed), and /proc showed only root's helpers, which no DM
     * task can be (saved uid 0): nothing here proves a failed cleanup,
     * nor that there is none.  A real task seen stays a violation. */
    if (prc && !bucket_has_real(a, uid))
        return ADD(a, "leftover", domid, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "domid %u is not live; its uid %lu showed only root's "
                   "helpers (saved uid 0) in /proc, and the kernel could "
                   "not be asked for its count: %s",
                   domid, (unsigned long)uid, xlreaper_strerror(prc));
    prc = probe_count(a, uid, &count);
    if (prc == XLREAPER_ERROR_NOMEM)
        return prc;
    if (b->tasks)
        rc = ADD(a, "leftover", domid, uid, b->first->tid, XLREAPER_AUDIT_FAIL,
                 "domid %u is not live, but its uid %lu has %u task%s in "
                 "/proc (%u zombie%s; kernel count %s%u), first pid %ld "
                 "(%s, state %c, ppid %ld): a failed cleanup",
                 domid, (unsigned long)uid, b->tasks, b->tasks == 1 ? "" : "s",
                 b->zombies, b->zombies == 1 ? "" : "s",
                 prc ? "unknown, " : "", count, (long)b->first->tid,
                 b->first->comm, b->first->state, (long)b->first->ppid);
    else
        rc = ADD(a, "leftover", domid, uid, 0, XLREAPER_AUDIT_FAIL,
                 "domid %u is not live, but the kernel counts %u task%s "
                 "of its uid %lu that /proc did not show: a task racing "
                 "/proc (a fork racer?)",
                 domid, count, count == 1 ? "" : "s", (unsigned long)uid);
    if (rc)
        return rc;
    /* For the metrics: how many tasks a dead domain left. */
    a->res->checks[a->res->num - 1].tasks =
        !prc && count > b->tasks ? count : b->tasks;
    (*found)++;
    /* The fix's reap says "stuck" itself, or frees them. */
    if (a->opts->flags & XLREAPER_AUDIT_FIX)
        return fix_uid(a, domid, &a->res->checks[a->res->num - 1]);
    return check_stuck(a, domid, uid);
}

int xlreaper__audit_dead_uids(xlreaper__audit *a, xlreaper__audit_dm *unused)
{
    const xlreaper_audit_result *res = a->res;
    uint32_t max = a->h && a->h->sweep_max_domid ? a->h->sweep_max_domid
                                                 : xlreaper_max_domid();
    bool sweep = !res->quiet || !xlreaper__audit_init_pidns() ||
                 (a->opts->flags & XLREAPER_AUDIT_PROBE_ALL);
    uint64_t t0 = xlreaper__now_us();
    unsigned found = 0, probed = 0, dead = 0;
    uint32_t *seen;
    bool *busy = NULL;
    unsigned nseen = 0;
    int rc = 0;

    (void)unused;
    if (!a->live_known)
        return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_UNKNOWN,
                   "which domains are live is unknown, so no uid can be "
                   "judged a leftover");

    /* The dead domids a pass saw tasks of, each once. */
    seen = calloc(a->tasks.num + 1, sizeof(*seen));
    if (!seen)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i];
        uid_t ids[4] = { t->ruid, t->euid, t->suid, t->fsuid };
        for (int k = 0; k < 4; k++) {
            uint32_t d = uid_domid(a, ids[k]);
            bool dup = false;
            if (d == NO_DOMID || is_live(a, d))
                continue;
            for (unsigned j = 0; j < nseen; j++)
                dup |= seen[j] == d;
            if (!dup)
                seen[nseen++] = d;
        }
    }
    qsort(seen, nseen, sizeof(*seen), cmp_u32);
    for (unsigned i = 0; !rc && i < nseen; i++) {
        uid_t uid = a->w.base + seen[i];
        bucket b = bucket_of(a, uid);
        rc = leftover(a, seen[i], uid, &b, &found);
    }

    /* The kernel's answer for the whole range at once: one vfork per
     * uid in a single child, not two forks and a wait each, which on a
     * slow dom0 (or one where xl-reaperd sweeps meanwhile, so that no
     * pass is quiet) is the difference between seconds and many
     * minutes. */
    if (!rc && sweep) {
        busy = calloc(max + 1, sizeof(*busy));
        if (!busy) {
            free(seen);
            return XLREAPER_ERROR_NOMEM;
        }
        rc = xlreaper_census_kernel(a->ctx, 1, max, busy + 1);
        if (rc == XLREAPER_ERROR_NOMEM) {
            free(busy);
            free(seen);
            return rc;
        }
        if (rc) {
            free(busy);
            free(seen);
            return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0,
                       XLREAPER_AUDIT_UNKNOWN,
                       "the kernel census of the dead uids failed (%u "
                       "found with tasks before)",
                       found);
        }
    }

    for (uint32_t d = 1; !rc && d <= max; d++) {
        uid_t uid = a->w.base + d;
        bool dup = false;
        bucket none = { 0 };

        if (is_live(a, d))
            continue;
        dead++;
        if (!sweep)
            continue;
        for (unsigned j = 0; j < nseen; j++)
            dup |= seen[j] == d;
        if (dup)
            continue;
        probed++;
        a->res->probes++;
        if (busy[d])
            rc = leftover(a, d, uid, &none, &found);
    }
    free(busy);
    free(seen);
    if (rc)
        return rc;

    if (found)
        return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_FAIL,
                   "%u of the %u dead domids' uids ha%s tasks", found, dead,
                   found == 1 ? "s" : "ve");
    if (!sweep)
        return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
                   "none of the %u dead domids' uids has a task: a /proc "
                   "pass during which the host created no task saw none "
                   "(pass %u)",
                   dead, res->passes);
    return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "none of the %u dead domids' uids has a task: the kernel "
               "counts none for each (%u probes in %.1f s, since %s)%s",
               dead, probed, (double)(xlreaper__now_us() - t0) / 1e6,
               (a->opts->flags & XLREAPER_AUDIT_PROBE_ALL)
                   ? "--probe-all asked"
               : !res->quiet ? "no /proc pass was quiet"
                             : "this is not the initial pid namespace",
               max < xlreaper_max_domid() ? "; domids beyond the test "
                                            "bound not checked"
                                          : "");
}
