/*
 * xlreaper_reap.c - killing a DM uid and proving it empty.
 *
 * The kill.  A forked child calls setresuid(pet, dm_uid, 0) and
 * kill(-1, SIGKILL).  The kernel lets A signal B when A's real or
 * effective uid equals B's real or saved uid (or A has CAP_KILL):
 *
 *                          euid    ruid    suid
 *   compared, receiver              ====    ====
 *   compared, sender       ====    ====
 *   rogue DM tasks         dm      dm      dm
 *   root-ish tasks         0|any   0|any   0|any   (one of them is 0)
 *   the killer             dm      pet     0
 *
 * The killer's euid dm matches every rogue's ruid: they die.  Its ids
 * (dm, pet) match no root task's real or saved uid (0), nor a bystander
 * DM's: they live.  A rogue's ruid and euid (dm, dm) match neither the
 * killer's ruid (pet) nor its suid (0): it cannot signal back.  The
 * change of euid from 0 clears the effective capabilities (so no
 * CAP_KILL), which the child checks, since SECBIT_NO_SETUID_FIXUP would
 * keep them and kill(-1) would then take down the whole host.
 *
 * kill(-1) walks the task list holding the tasklist lock, and fork()
 * re-checks for a pending fatal signal under that lock, so no child of a
 * fork racer is born unsignalled.  Its return value is 0 whenever any
 * other process exists, so it proves nothing (FINDINGS.md).
 *
 * The verification.  After a kill no task of the uid can fork, so a /proc
 * scan now sees everything that is left; zombies and D-state tasks stay
 * there, and count against the uid, until they are reaped or wake.  The
 * verdict "empty" needs both witnesses: a scan that finds nothing and the
 * kernel's own per-user count (xlreaper_count.c) at zero.
 *
 * With cgroup_parent set, the DM's own cgroup is killed first
 * (cgroup.kill, a second belt) and removed once the uid is empty; the
 * argument above needs neither.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_internal.h"

/* How long zombies held by a live parent outside the uid are waited for. */
#define ZOMBIE_GRACE_US 250000

enum {
    KILLER_SETRESUID = 1,
    KILLER_IDS,
    KILLER_CAPS,
};

static const char *killer_step_name(int step)
{
    switch (step) {
    case KILLER_SETRESUID: return "setresuid";
    case KILLER_IDS: return "checking the ids set";
    case KILLER_CAPS: return "checking no capability is left";
    default: return "unknown step";
    }
}

typedef struct {
    uid_t pet, target;
} killer_args;

static void __attribute__((noreturn)) killer_child(int wfd, void *arg)
{
    const killer_args *a = arg;
    uid_t pet = a->pet, target = a->target;
    uid_t r, e, s;

    if (xlreaper__sys_setresuid(pet, target, 0) < 0)
        xlreaper__child_fail(wfd, KILLER_SETRESUID, errno, target);
    if (getresuid(&r, &e, &s) < 0 || r != pet || e != target || s != 0)
        xlreaper__child_fail(wfd, KILLER_IDS, EPERM, 0);
    if (xlreaper__caps_none(false) < 0)
        xlreaper__child_fail(wfd, KILLER_CAPS, errno, 0);
    kill(-1, SIGKILL);
    _exit(0);
}

/* One kill(-1) as the pet.  0 or _FAIL. */
static int kill_round(xlreaper_ctx *ctx, uint32_t domid, uid_t pet, uid_t uid)
{
    killer_args a = { .pet = pet, .target = uid };
    xlreaper__child_report rep;
    bool reported;
    int rc, status;

    rc = xlreaper__run_child(ctx, "the killer", killer_child, &a, &rep,
                             &reported, &status);
    if (rc)
        return rc;
    if (reported) {
        LOGEV(ERROR, rep.err, "domid %u: killer: %s(%lu, %lu, 0)", domid,
              killer_step_name(rep.step), (unsigned long)pet,
              (unsigned long)uid);
        return XLREAPER_ERROR_FAIL;
    }
    if (WIFSIGNALED(status)) {
        /* Only a task with the pet's uid (or root) can do that. */
        LOGD(ERROR, domid,
             "the killer died of signal %d: something runs under the "
             "reaper uid %lu",
             WTERMSIG(status), (unsigned long)pet);
        return XLREAPER_ERROR_FAIL;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        LOGD(ERROR, domid, "the killer exited with status %#x", status);
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

/* ---------- what a scan shows ---------- */

static bool is_zombie(const xlreaper_task *t)
{
    return t->state == 'Z' || t->state == 'X';
}

/* uid kill reaches a task through its real or saved uid only. */
static bool reachable(const xlreaper_task *t, uid_t uid)
{
    return t->ruid == uid || t->suid == uid;
}

typedef struct {
    unsigned dying;    /* live, reachable, SIGKILL pending */
    unsigned unkilled; /* live, reachable, no SIGKILL seen yet */
    unsigned waiting;  /* zombies whose reaper is init or a dying task */
} scan_view;

static bool tid_in(const xlreaper_task_list *l, pid_t tid)
{
    for (unsigned i = 0; i < l->num; i++)
        if (l->tasks[i].tid == tid)
            return true;
    return false;
}

/* Sorts tasks of the last scan into res's lists. */
static int classify(const xlreaper_task_list *scan, uid_t uid,
                    xlreaper_reap_result *res, scan_view *v)
{
    int rc;

    memset(v, 0, sizeof(*v));
    xlreaper_task_list_dispose(&res->zombies);
    xlreaper_task_list_dispose(&res->stuck);
    xlreaper_task_list_dispose(&res->live);
    res->unreachable = 0;
    for (unsigned i = 0; i < scan->num; i++) {
        const xlreaper_task *t = &scan->tasks[i];
        xlreaper_task_list *to;

        if (is_zombie(t)) {
            /* Init (or a subreaper, or a dying parent of the uid) will
             * reap it soon; a live parent outside the uid may never. */
            if (t->ppid <= 1 || tid_in(scan, t->ppid))
                v->waiting++;
            to = &res->zombies;
        } else if (t->state == 'D' && reachable(t, uid)) {
            to = &res->stuck;
        } else {
            to = &res->live;
            if (!reachable(t, uid))
                res->unreachable++;
            else if (t->kill_pending)
                v->dying++;
            else
                v->unkilled++;
        }
        rc = xlreaper__task_list_add(to, t);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---------- counting what was killed ---------- */

typedef struct {
    pid_t *tids;
    size_t num, cap;
} tid_set;

static int tid_set_add(tid_set *s, pid_t tid)
{
    if (s->num == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        pid_t *n = realloc(s->tids, ncap * sizeof(*n));
        if (!n)
            return XLREAPER_ERROR_NOMEM;
        s->tids = n;
        s->cap = ncap;
    }
    s->tids[s->num++] = tid;
    return 0;
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* A zombie of before: dead already, so not killed by us. */
static bool was_zombie(const xlreaper_task_list *before, pid_t tid)
{
    for (unsigned i = 0; i < before->num; i++)
        if (before->tasks[i].tid == tid)
            return is_zombie(&before->tasks[i]);
    return false;
}

/* Distinct tids in seen that were not zombies before the kill. */
static unsigned count_killed(tid_set *seen, const xlreaper_task_list *before)
{
    unsigned n = 0;

    if (!seen->num)
        return 0; /* qsort's base may not be NULL, even for 0 */
    qsort(seen->tids, seen->num, sizeof(pid_t), cmp_pid);
    for (size_t i = 0; i < seen->num; i++) {
        if (i && seen->tids[i] == seen->tids[i - 1])
            continue;
        if (!was_zombie(before, seen->tids[i]))
            n++;
    }
    return n;
}

/* ---------- the rounds ---------- */

/* Refuses when the pet runs anything (l: its tasks): every reap would
 * kill them, and they could kill the reaper. */
static int check_pet_idle(xlreaper_ctx *ctx, uint32_t domid, uid_t pet,
                          const xlreaper_task_list *l)
{
    if (!l->num)
        return 0;
    LOGD(ERROR, domid,
         "the reaper uid %lu runs %u task(s), first pid %ld (%s): it "
         "must never run anything; refusing to kill, since they would "
         "be killed too and could kill the reaper",
         (unsigned long)pet, l->num, (long)l->tasks[0].tid,
         l->tasks[0].comm);
    return XLREAPER_ERROR_INVAL;
}

/* before: the scan of uid taken with the pet's, before any kill. */
static int reap_rounds(xlreaper_ctx *ctx, uint32_t domid, uid_t uid,
                       const xlreaper_task_list *before,
                       xlreaper_reap_result *res, uint64_t deadline)
{
    const xlreaper_config *cfg = ctx->cfg;
    xlreaper_task_list scan;
    tid_set seen = { 0 };
    uint64_t pause_us = 200, foreign_since = 0;
    bool need_kill = true;
    scan_view v;
    int rc;

    xlreaper_task_list_init(&scan);

    /* Before the kill the scan is only a lower bound of what will die,
     * and tells which zombies were there already. */
    for (unsigned i = 0; i < before->num; i++)
        if (!is_zombie(&before->tasks[i]) &&
            (rc = tid_set_add(&seen, before->tasks[i].tid)))
            goto out;
    if (!before->num) {
        /* The kernel's count is sound even before a kill: with none, no
         * task can appear but from root, and spawn waits for our lock. */
        rc = xlreaper_uid_empty(ctx, uid, &res->was_empty);
        if (rc)
            goto out;
        if (res->was_empty) {
            res->kernel_empty = true;
            res->outcome = XLREAPER_OUTCOME_EMPTY;
            goto out;
        }
    }

    for (;;) {
        if (need_kill) {
            rc = kill_round(ctx, domid, cfg->reaper_uid, uid);
            if (rc)
                goto out;
            res->rounds++;
        }
        xlreaper_task_list_dispose(&scan);
        rc = xlreaper_scan_uid(ctx, uid, &scan);
        if (rc)
            goto out;
        for (unsigned i = 0; i < scan.num; i++)
            if ((rc = tid_set_add(&seen, scan.tasks[i].tid)))
                goto out;
        rc = classify(&scan, uid, res, &v);
        if (rc)
            goto out;

        if (!scan.num) {
            rc = xlreaper_uid_empty(ctx, uid, &res->kernel_empty);
            if (rc)
                goto out;
            if (res->kernel_empty) {
                res->outcome = XLREAPER_OUTCOME_EMPTY;
                break;
            }
        } else if (!res->live.num && !res->stuck.num && !v.waiting) {
            /* Only zombies whose live parent is outside the uid: reaping
             * them is up to that parent.  A healthy one (a subreaper, a
             * toolstack's SIGCHLD handler) does so at once; give it a
             * moment, not the whole deadline. */
            uint64_t now = xlreaper__now_us();
            if (!foreign_since)
                foreign_since = now;
            if (now - foreign_since >= ZOMBIE_GRACE_US) {
                res->outcome = XLREAPER_OUTCOME_ZOMBIES;
                break;
            }
        } else {
            foreign_since = 0;
        }
        if (xlreaper__now_us() >= deadline) {
            res->outcome = res->live.num || res->stuck.num || !scan.num
                               ? XLREAPER_OUTCOME_REMAIN
                               : XLREAPER_OUTCOME_ZOMBIES;
            break;
        }
        /* A task that dequeued SIGKILL but has not yet set PF_EXITING
         * shows no pending signal: another round costs one fork. */
        need_kill = v.unkilled > 0;
        xlreaper__sleep_us(pause_us);
        if (pause_us < 20000)
            pause_us *= 2;
    }
    rc = 0;

out:
    res->tasks_seen = count_killed(&seen, before);
    free(seen.tids);
    xlreaper_task_list_dispose(&scan);
    return rc;
}

void xlreaper_reap_result_init(xlreaper_reap_result *res)
{
    memset(res, 0, sizeof(*res));
    xlreaper_task_list_init(&res->zombies);
    xlreaper_task_list_init(&res->stuck);
    xlreaper_task_list_init(&res->live);
}

void xlreaper_reap_result_dispose(xlreaper_reap_result *res)
{
    xlreaper_task_list_dispose(&res->zombies);
    xlreaper_task_list_dispose(&res->stuck);
    xlreaper_task_list_dispose(&res->live);
}

int xlreaper_reap(xlreaper_ctx *ctx, xlreaper_lock *held, uint32_t domid,
                  xlreaper_reap_result *res)
{
    const xlreaper_config *cfg = ctx->cfg;
    xlreaper_lock *lock = NULL;
    xlreaper_task_list before, pet_tasks;
    uint64_t start = xlreaper__now_us();
    uid_t uid;
    int rc;

    if (!cfg || xlreaper_dm_ids(ctx, domid, &uid, NULL)) {
        LOG(ERROR, "domid %u: not a domid with a device model uid", domid);
        return XLREAPER_ERROR_INVAL;
    }
    if (geteuid() != 0) {
        LOGD(ERROR, domid, "reaping needs root");
        return XLREAPER_ERROR_PERM;
    }
    res->domid = domid;
    res->uid = uid;
    xlreaper_task_list_init(&before);
    xlreaper_task_list_init(&pet_tasks);

    if (!held) {
        rc = xlreaper_lock_acquire(ctx, &lock);
        if (rc)
            return rc;
        res->lock_wait_us = xlreaper_lock_wait_us(lock);
    }
    /* One pass finds the pet's tasks and the DM uid's. */
    rc = xlreaper__scan_uids(ctx, uid, &before, cfg->reaper_uid, &pet_tasks);
    if (rc)
        goto out;
    rc = check_pet_idle(ctx, domid, cfg->reaper_uid, &pet_tasks);
    if (rc)
        goto out;
    if (cfg->cgroup_parent)
        xlreaper__cgroup_kill(ctx, domid, cfg->cgroup_parent);
    rc = reap_rounds(ctx, domid, uid, &before, res,
                     start + (uint64_t)cfg->reap_timeout_ms * 1000u);
    if (!rc && cfg->cgroup_parent &&
        (res->outcome == XLREAPER_OUTCOME_EMPTY ||
         res->outcome == XLREAPER_OUTCOME_ZOMBIES))
        xlreaper__cgroup_remove(ctx, domid, cfg->cgroup_parent);
    res->duration_us = xlreaper__now_us() - start;
    if (rc)
        goto out;
    LOGD(DEBUG, domid, "uid %lu: %u round(s), outcome %d in %llu us",
         (unsigned long)uid, res->rounds, res->outcome,
         (unsigned long long)res->duration_us);
    rc = res->outcome == XLREAPER_OUTCOME_REMAIN ? XLREAPER_ERROR_REMAIN : 0;

out:
    xlreaper_task_list_dispose(&before);
    xlreaper_task_list_dispose(&pet_tasks);
    xlreaper_lock_release(lock);
    return rc;
}
