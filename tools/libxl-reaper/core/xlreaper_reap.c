/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_reap.c - killing a DM uid and proving it empty.
 *
 * The kill.  A killer task takes the ids (pet, dm_uid, 0) and calls
 * kill(-1, SIGKILL) once: every task of the uid dies, none of root's
 * or another DM's, and none of the uid's can signal back.  The kernel's
 * rules that make it so, and why those ids, are written once beside
 * the code of the kill (xlreaper__kill_as_pet, xlreaper_helper_raw.c),
 * which the killer helper runs, and the calling thread when no task can
 * be created (kill_in_thread below).
 *
 * The verification: kill first, then count, inside the killer.  After
 * its kill(-1) the killer takes the DM uid as its real uid and asks the
 * kernel's own per-user count how many other tasks remain
 * (xlreaper_count.c): no task of the uid can fork any more, and nothing
 * has entered the uid before the kill, so a live DM has no window to
 * stop or mislead a probe.  Before the kill it asks the same of the pet
 * uid, which must run nothing (its tasks would die with the DM's and
 * could kill the killer).  A count of 0 is "empty": no /proc scan at
 * all.  Otherwise /proc is read until it accounts for the count
 * (xlreaper__scan_after_kill): zombies and D-state tasks stay, and
 * count against the uid, until they are reaped or wake.  Zombies whose
 * reaper is init, a subreaper or a dying task, or a live parent outside
 * the uid, have nothing left to kill: that is the outcome "zombies", at
 * once, unless the caller will reuse the uid and must wait for "empty".
 *
 * A killed task in D state cannot exit until what it waits on answers.
 * When it waits on a FUSE connection of the DM's own (a stuck-FUSE DM,
 * xlreaper_setid.c), the reap aborts the uid's connections and kills
 * again (xlreaper_fuse.c); a wait it cannot end (another owner's FUSE,
 * a hung NFS server or disk) is the outcome "stuck", with each task's
 * wchan, at reap_timeout_ms: never "empty", never a hang.
 *
 * What the count cannot see (a task of the uid in a user namespace of
 * another uid's) /proc can, and kill(-1) kills it: where the config
 * says such tasks may exist (a subordinate id range overlapping the DM
 * range), every verdict also needs a scan of the whole host.
 *
 * Before the uid kill, the DM its spawn recorded is killed by its pidfd
 * if it is still that process: in runas mode QEMU is root, outside the
 * uid, until its own setuid (xlreaper_dmpid.c).  With cgroup_parent
 * set, the DM's own cgroup is killed too (cgroup.kill, a second belt)
 * and removed once the uid is empty; the argument above needs neither.
 */
#include <limits.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

static const char *killer_step_name(int step)
{
    switch (step) {
    case KILLER_GROUPS: return "setgroups";
    case KILLER_PET_COUNT: return "counting the reaper uid's tasks";
    case KILLER_SETRESUID: return "setresuid";
    case KILLER_IDS: return "checking the ids set";
    case KILLER_CAPS: return "checking no capability is left";
    case KILLER_COUNT: return "counting the tasks left";
    default: return "unknown step";
    }
}

/* The kill stopped at rep->step (xlreaper__kill_as_pet): _INVAL when
 * the pet runs tasks, else _FAIL. */
static int killer_failed(xlreaper_ctx *ctx, uint32_t domid, uid_t pet,
                         uid_t uid, const xlreaper__child_report *rep,
                         const char *who)
{
    if (rep->step == KILLER_PET_BUSY) {
        LOGD(ERROR, domid,
             "the reaper uid %lu runs %ld task(s) (by the kernel's count): "
             "it must never run anything; refusing to kill, since they "
             "would be killed too and could kill the reaper",
             (unsigned long)pet, rep->detail);
        return XLREAPER_ERROR_INVAL;
    }
    LOGEV(ERROR, rep->err, "domid %u: %s: %s (uids %lu, %lu)", domid, who,
          killer_step_name(rep->step), (unsigned long)pet, (unsigned long)uid);
    return XLREAPER_ERROR_FAIL;
}

/* ---------- the kill when no task can be created ---------- */

/*
 * When clone fails with EAGAIN (a DM without a process limit holds
 * every free pid and takes each one freed, or threads-max is reached)
 * the kill must not need a task: the calling thread makes it itself,
 * by the killer's own code (xlreaper__kill_as_pet, xlreaper__kill_count)
 * but for its setgroups and real-time priority, which are this
 * thread's to keep.  Credentials are per thread in the kernel; glibc's
 * setresuid changes every thread of the process (it signals each one),
 * so the raw system call changes this thread's alone, and its other
 * threads stay root.  The thread takes the killer's ids and goes back:
 * the saved uid 0, kept throughout, allows it, and keeps the permitted
 * capabilities, which come back as effective ones with the euid 0.
 *
 * Why no DM task can signal, trace or read the thread meanwhile:
 *  - signals (the kernel's rule is beside xlreaper__kill_as_pet): the
 *    thread is (pet, pet, 0) while it counts the pet's tasks (the pet
 *    runs nothing: no task but root's matches), then (pet, uid, 0) up
 *    to its kill(-1): a DM task (uid, uid, uid) matches neither pet
 *    nor 0.  Then it counts what is left as (uid, uid, 0), for
 *    microseconds: every task with uid as its real or saved uid has
 *    SIGKILL pending and runs no user code again; a live task with uid
 *    as its effective uid alone (only a privileged task makes one)
 *    could, so a /proc scan looks for one first and, finding one,
 *    counts nothing (the verdict then names it).
 *    Signals to the process are checked against its leader's ids, to
 *    the thread against the thread's: both are covered, whichever
 *    thread this is.  Every catchable signal is blocked on the thread,
 *    so no handler of the caller's runs with these ids.
 *  - ptrace and /proc/PID/mem need all three of the thread's ids to
 *    match the tracer's: its saved uid is 0.  The memory's dumpable flag,
 *    which the change of euid clears for the whole process, is put back
 *    after (as for the helpers, xlreaper_clone.c).
 * A multi-threaded caller (the daemon) stays safe: kill(-1) never
 * signals the sender's own thread group, and checks every other process
 * against its leader's ids, which are root's; its other threads keep
 * their ids.  What is shared is put back: RLIMIT_NPROC (per process; a
 * thread of the caller that forks meanwhile passes the low soft limit
 * to its child, which only a spawn would notice, and a spawn needs the
 * lock held here), PDEATHSIG of this thread (cleared by the change of
 * euid), and the dumpable flag.  A thread that cannot get back to root
 * aborts the process: it must not run the caller's code with a DM's ids.
 */
static bool unreached_live(xlreaper_ctx *ctx, uid_t uid, bool *found_r)
{
    xlreaper_task_list l;
    int rc;

    *found_r = false;
    xlreaper_task_list_init(&l);
    rc = xlreaper_scan_uid(ctx, uid, &l);
    for (unsigned i = 0; !rc && i < l.num; i++) {
        const xlreaper_task *t = &l.tasks[i];

        if (t->state != 'Z' && t->state != 'X' && t->ruid != uid &&
            t->suid != uid)
            *found_r = true;
    }
    xlreaper_task_list_dispose(&l);
    return rc == 0;
}

static void back_to_root(xlreaper_ctx *ctx)
{
    uid_t r = (uid_t)-1, e = (uid_t)-1, s = (uid_t)-1;

    if (xlreaper__raw(SYS_setresuid, 0, 0, 0) < 0 ||
        xlreaper__raw(SYS_getresuid, &r, &e, &s) < 0 || r || e || s ||
        xlreaper__cap_effective(CAP_KILL) != 1) {
        LOG(CRITICAL, "this thread could not get back to root after a kill "
                      "from it: aborting");
        abort();
    }
}

static int kill_in_thread(xlreaper_ctx *ctx, uint32_t domid, uid_t pet,
                          uid_t uid, bool settle, long *left_r)
{
    uid_t r = (uid_t)-1, e = (uid_t)-1, s = (uid_t)-1;
    xlreaper__child_report rep;
    struct rlimit nproc;
    sigset_t all, old;
    int pdeath = 0;
    bool unreached = true;
    long n = -1;

    if (getresuid(&r, &e, &s) < 0 || r || e || s ||
        getrlimit(RLIMIT_NPROC, &nproc) < 0) {
        LOGD(ERROR, domid,
             "no task can be created to kill uid %lu, and this thread is "
             "not (0, 0, 0) to make the kill itself",
             (unsigned long)uid);
        return XLREAPER_ERROR_FAIL;
    }
    LOGD(WARN, domid,
         "no task can be created (pids or threads exhausted): killing uid "
         "%lu from this thread",
         (unsigned long)uid);
    prctl(PR_GET_PDEATHSIG, &pdeath, 0, 0, 0);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    xlreaper__dumpable_hold();

    xlreaper__kill_as_pet(0, pet, uid, &rep);
    back_to_root(ctx);
    /* The count, as the killer makes it, unless a task the kill could
     * not reach might signal this thread while it has the uid. */
    if (!rep.step && unreached_live(ctx, uid, &unreached) && !unreached) {
        n = xlreaper__kill_count(0, uid, settle);
        back_to_root(ctx);
        if (n < 0) {
            rep.step = KILLER_COUNT;
            rep.err = (int)-n;
            rep.detail = uid;
        }
    }
    /* else no count: the scan that follows names the task */
    setrlimit(RLIMIT_NPROC, &nproc);
    if (pdeath)
        prctl(PR_SET_PDEATHSIG, pdeath, 0, 0, 0);
    xlreaper__dumpable_release();
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    if (rep.step)
        return killer_failed(ctx, domid, pet, uid, &rep,
                             "kill from this thread");
    *left_r = n;
    return 0;
}

/*
 * One kill(-1) as the pet, and the kernel's count of what is left.
 * 0 with *left_r, or *left_r = -1 when the killer was stopped, killed
 * or too slow after its kill (a task of the uid outside the kill's
 * reach did it: see the scan); _INVAL when the pet runs tasks; _FAIL.
 */
static int kill_round(xlreaper_ctx *ctx, uint32_t domid, uid_t pet, uid_t uid,
                      bool settle, uint64_t deadline, long *left_r)
{
    xlreaper__killer_args a = { .pet = pet, .target = uid, .settle = settle };
    xlreaper__child_report rep;
    xlreaper__helper_end end;
    bool reported;
    int rc, status;

    rc = xlreaper__run_helper(ctx, "the killer", xlreaper__killer_child, &a,
                              deadline, &rep, &reported, &status, &end);
    if (rc == XLREAPER__ERROR_NO_TASK)
        return kill_in_thread(ctx, domid, pet, uid, settle, left_r);
    if (rc)
        return rc;
    *left_r = -1;
    if (end == XLREAPER__HELPER_DONE && reported && rep.step == 0 &&
        WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *left_r = rep.detail;
        return 0;
    }
    if (end == XLREAPER__HELPER_DONE && reported)
        return killer_failed(ctx, domid, pet, uid, &rep, "killer");
    if (end == XLREAPER__HELPER_DONE && !WIFSIGNALED(status)) {
        LOGD(ERROR, domid, "the killer exited with status %#x", status);
        return XLREAPER_ERROR_FAIL;
    }
    /* Before its kill only the pet's tasks (or root) could signal or
     * stop it, and the pet was idle; after it, only a task of the uid
     * that the kill could not reach. */
    LOGD(WARN, domid,
         "the killer was %s after its kill: a task of uid %lu outside the "
         "kill's reach?",
         end == XLREAPER__HELPER_STOPPED   ? "stopped"
         : end == XLREAPER__HELPER_TIMEOUT ? "held past the deadline"
                                           : "killed",
         (unsigned long)uid);
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
    unsigned num, cap;
} tid_set;

static int tid_set_add(tid_set *s, pid_t tid)
{
    pid_t *n = xlreaper__grow(s->tids, s->num, &s->cap, sizeof(*n), 64);

    if (!n)
        return XLREAPER_ERROR_NOMEM;
    s->tids = n;
    s->tids[s->num++] = tid;
    return 0;
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* Distinct tids in seen. */
static unsigned count_distinct(tid_set *seen)
{
    unsigned n = 0;

    if (!seen->num)
        return 0; /* qsort's base may not be NULL, even for 0 */
    qsort(seen->tids, seen->num, sizeof(pid_t), cmp_pid);
    for (unsigned i = 0; i < seen->num; i++)
        n += !i || seen->tids[i] != seen->tids[i - 1];
    return n;
}

/* ---------- tasks stuck in D state ---------- */

typedef struct {
    uint64_t last_us; /* when the remedy last ran, or 0 */
    unsigned aborted; /* what it aborted then */
    bool failed;      /* it could not run here (logged once) */
} stuck_remedy;

/* How often the remedy runs again while tasks stay stuck and it found
 * nothing: a task in D state for I/O wakes by itself, and a connection
 * can only appear through a mount already under way at the kill. */
#define STUCK_REMEDY_EVERY_US 100000

/* After a kill, a task of the uid in D state with SIGKILL pending
 * cannot exit until what it waits on answers.  Its wait on a FUSE
 * request the DM itself read and will never answer ends only when the
 * connection is aborted (xlreaper_fuse.c), whatever its wchan says
 * (request_wait_answer, or a page or lock a FUSE request holds): try
 * that first, then again only if it helped or a while has passed. */
static bool stuck_remedy_due(const xlreaper_reap_result *res,
                             const stuck_remedy *r)
{
    bool killed = false;

    for (unsigned i = 0; i < res->stuck.num; i++)
        killed |= res->stuck.tasks[i].kill_pending;
    return killed && !r->failed &&
           (!r->last_us || r->aborted ||
            xlreaper__now_us() >= r->last_us + STUCK_REMEDY_EVERY_US);
}

/* When due: the uid's FUSE connections aborted, and *again_r when any
 * was, so that the rounds kill and count again at once.  0
 * (the verdict stands without the remedy when it cannot run), or
 * _NOMEM. */
static int stuck_remedy_run(xlreaper_ctx *ctx, uint32_t domid, uid_t uid,
                            uint64_t deadline, xlreaper_reap_result *res,
                            stuck_remedy *r, bool *again_r)
{
    unsigned n = 0;
    int rc;

    *again_r = false;
    if (!stuck_remedy_due(res, r))
        return 0;
    rc = xlreaper__fuse_abort_uid(ctx, domid, uid, deadline, &n);
    if (rc == XLREAPER_ERROR_NOMEM)
        return rc;
    r->failed = rc != 0; /* the verdict stands without it */
    res->fuse_aborted += n;
    r->last_us = xlreaper__now_us();
    r->aborted = n;
    if (n) {
        LOGD(WARN, domid,
             "uid %lu: %u task(s) stuck in D state after the kill; "
             "aborted %u FUSE connection(s) of the uid",
             (unsigned long)uid, res->stuck.num, n);
        *again_r = true;
    }
    return 0;
}

/* ---------- the rounds ---------- */

/* Room left for one more round before the deadline: a killer that
 * would be cut short by it proves nothing. */
#define KILLER_ROUND_US 20000
/* Prefilter shortfalls in a row before every task is read. */
#define SHORTFALLS_MAX 2
/* The least time a killer is given, deadline or not. */
#define KILLER_MIN_US 250000
/* How long a caller that waits for "empty" gives a live parent outside
 * the uid to reap its zombies: a nursery or subreaper does it within a
 * slice, which on a loaded host is tens of milliseconds (the spawn
 * tests saw it fail now and then without this); a parent that never
 * reaps is reported after it, not after the whole reap_timeout_ms. */
#define ZOMBIE_PARENT_GRACE_US 200000

/* The global lock as the rounds hold it: for each round's kill and
 * count only when per_round (xlreaper_lock.c says why that is safe),
 * else throughout (a caller's lock it may not let go). */
typedef struct {
    xlreaper_lock *lock;
    bool per_round;
} round_lock;

/* The verdict when no further round can be made by the deadline: a
 * round cut short proves nothing, so the last one stands. */
static xlreaper_outcome last_verdict(const xlreaper_reap_result *res,
                                     bool sound, long left, unsigned seen)
{
    return res->live.num || !sound || left < 0 || (!seen && left != 0)
               ? XLREAPER_OUTCOME_REMAIN
           : res->stuck.num ? XLREAPER_OUTCOME_STUCK
                            : XLREAPER_OUTCOME_ZOMBIES;
}

/* What the rounds carry from one to the next. */
typedef struct {
    long left;               /* the last round's count, or -1 */
    xlreaper_task_list scan; /* the last scan of /proc */
    bool sound;              /* it saw every task there is */
    scan_view v;             /* and what it showed (classify) */
    unsigned shortfalls;     /* prefilter shortfalls in a row */
    tid_set seen;            /* every tid a scan showed */
    stuck_remedy remedy;
    uint64_t first_us, pause_us; /* when the rounds began; the next pause */
} round_state;

/* A round's count into res: true when it alone proves the uid empty. */
static bool note_count(xlreaper_reap_result *res, uid_t uid, long left,
                       bool subid_overlap)
{
    res->rounds++;
    if (res->rounds == 1) {
        res->kernel_left = left;
        /* Nothing was left: not "nothing was there", since a task
         * killed can exit and be reaped within the killer's few looks
         * (xlreaper.h says so of was_empty). */
        res->was_empty = left == 0;
    }
    res->kernel_empty = left == 0;
    if (left > 0)
        xlreaper__sched_hurry_dying(uid);
    if (left == 0 && !subid_overlap) {
        xlreaper_task_list_dispose(&res->zombies);
        xlreaper_task_list_dispose(&res->stuck);
        xlreaper_task_list_dispose(&res->live);
        res->outcome = XLREAPER_OUTCOME_EMPTY;
        return true;
    }
    return false;
}

/* The count is not 0 (or cannot see everything): /proc says what is
 * left and why, into st and res.  Outside the lock: the scan enters no
 * uid, and the reap's mark keeps a spawn out meanwhile.  0, with
 * *again_r when the scan fell short of the count; or an error. */
static int look(xlreaper_ctx *ctx, uid_t uid, bool subid_overlap,
                round_state *st, xlreaper_reap_result *res, bool *again_r)
{
    bool fell_short;
    int rc;

    xlreaper_task_list_dispose(&st->scan);
    st->sound = true;
    rc = xlreaper__scan_after_kill(
        ctx, uid,
        st->left > 0 && !subid_overlap ? (unsigned long)st->left : ULONG_MAX,
        st->shortfalls >= SHORTFALLS_MAX, &st->scan, &st->sound, &fell_short);
    if (rc)
        return rc;
    /* The prefilter found fewer than were counted: most often some
     * finished dying in between.  A fresh count, one fork, is cheaper
     * than reading every task on the host; a shortfall that persists
     * gets the full pass. */
    *again_r = fell_short;
    if (fell_short) {
        st->shortfalls++;
        return 0;
    }
    st->shortfalls = 0;
    for (unsigned i = 0; i < st->scan.num; i++)
        if ((rc = tid_set_add(&st->seen, st->scan.tasks[i].tid)))
            return rc;
    rc = classify(&st->scan, uid, res, &st->v);
    if (rc)
        return rc;
    res->proc_sound = st->sound;
    return 0;
}

/* After a scan: true, with res->outcome, when the rounds end here. */
static bool rounds_end(const round_state *st, bool wait_empty,
                       uint64_t deadline, xlreaper_reap_result *res)
{
    if (st->left == 0 && st->sound && !st->scan.num) {
        res->outcome = XLREAPER_OUTCOME_EMPTY;
        return true;
    }
    /* Zombies only, and /proc shows all there is: nothing is left to
     * kill.  Their parent reaps them when it does; a caller that reuses
     * the uid waits for those whose reaper is init or a dying task,
     * which go soon, and gives a live parent's ZOMBIE_PARENT_GRACE_US
     * to reap them, not more: such a parent may never reap them. */
    if (st->left >= 0 && st->sound && st->scan.num && !res->live.num &&
        !res->stuck.num &&
        (!wait_empty ||
         (!st->v.waiting &&
          xlreaper__now_us() >= st->first_us + ZOMBIE_PARENT_GRACE_US))) {
        res->outcome = XLREAPER_OUTCOME_ZOMBIES;
        return true;
    }
    /* Dying tasks finish exiting; a task that dequeued SIGKILL but has
     * not yet set PF_EXITING shows no pending signal, and the next
     * round's kill costs nothing more than its count.  A round that
     * could not finish by the deadline proves nothing: the last verdict
     * stands. */
    if (xlreaper__now_us() + st->pause_us + KILLER_ROUND_US >= deadline) {
        res->outcome = last_verdict(res, st->sound, st->left, st->scan.num);
        return true;
    }
    return false;
}

/* Kill and count, look at what is left, until a verdict or the
 * deadline. */
static int reap_rounds(xlreaper_ctx *ctx, uint32_t domid, uid_t uid,
                       unsigned flags, xlreaper_reap_result *res,
                       const round_lock *rl, uint64_t deadline)
{
    const xlreaper_config *cfg = ctx->cfg;
    round_state st = { .left = -1, .sound = true };
    int rc;

    xlreaper_task_list_init(&st.scan);
    st.first_us = xlreaper__now_us();
    st.pause_us = 200;
    for (;;) {
        bool again;
        uint64_t kdeadline;

        /* A later round waits for the lock no longer than the reap
         * may take: then the last round's verdict stands. */
        if (res->rounds && rl->per_round) {
            rc = xlreaper__lock_retake(rl->lock, deadline, true);
            if (rc == XLREAPER_ERROR_LOCK_TIMEOUT) {
                res->outcome =
                    last_verdict(res, st.sound, st.left, st.scan.num);
                break;
            }
            if (rc)
                goto out;
        }
        /* Each killer gets a moment even at the deadline: on a loaded
         * host one that is cut short would prove nothing. */
        kdeadline = xlreaper__now_us() + KILLER_MIN_US;
        rc = kill_round(ctx, domid, cfg->reaper_uid, uid, res->rounds == 0,
                        kdeadline > deadline ? kdeadline : deadline, &st.left);
        if (rl->per_round)
            xlreaper__lock_drop(rl->lock);
        if (rc)
            goto out;
        if (note_count(res, uid, st.left, cfg->subid_overlap))
            break;
        rc = look(ctx, uid, cfg->subid_overlap, &st, res, &again);
        if (rc)
            goto out;
        if (again)
            continue;
        /* Killed tasks in D state: if they wait on a FUSE connection
         * of the DM's own, only aborting it ends the wait; then kill
         * and count again at once. */
        rc = stuck_remedy_run(ctx, domid, uid, deadline, res, &st.remedy,
                              &again);
        if (rc)
            goto out;
        if (again)
            continue;
        if (rounds_end(&st, flags & XLREAPER_REAP_WAIT_EMPTY, deadline, res))
            break;
        xlreaper__sleep_us(st.pause_us);
        if (st.pause_us < 20000)
            st.pause_us *= 2;
    }
    rc = 0;

out:
    res->tasks_seen = count_distinct(&st.seen);
    free(st.seen.tids);
    xlreaper_task_list_dispose(&st.scan);
    return rc;
}

void xlreaper_reap_result_init(xlreaper_reap_result *res)
{
    memset(res, 0, sizeof(*res));
    res->proc_sound = true; /* no scan, nothing hidden from it */
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

int xlreaper_reap_flags(xlreaper_ctx *ctx, xlreaper_lock *held, uint32_t domid,
                        unsigned flags, xlreaper_reap_result *res)
{
    const xlreaper_config *cfg = ctx->cfg;
    xlreaper_lock *lock = NULL;
    uint64_t start = xlreaper__now_us();
    xlreaper__sched_saved sched;
    round_lock rl = { NULL, false };
    int rc, dm_rc, mark = -1;
    uid_t uid;

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

    /* From the lock wait on: a waiter that is slow to notice the lock
     * is free holds up every reap behind it (xlreaper_sched.c). */
    xlreaper__sched_boost(&sched);
    if (held) {
        /* The caller's: let go between rounds only if it said so. */
        rl.lock = held;
        rl.per_round = flags & XLREAPER_REAP_LOCK_ROUNDS;
    } else if (ctx->held) {
        rl.lock = ctx->held; /* someone else's: held throughout */
    } else {
        rc = xlreaper_lock_acquire(ctx, &lock);
        if (rc)
            goto out;
        res->lock_wait_us = xlreaper_lock_wait_us(lock);
        rl.lock = lock;
        rl.per_round = true;
    }
    if (rl.per_round) {
        rc = xlreaper__lock_retake(
            rl.lock, start + (uint64_t)cfg->lock_timeout_ms * 1000u, false);
        if (rc)
            goto out;
    }
    /* Inside the first hold: from here to the verdict no spawn starts
     * anything in the uid, though the lock is let go between rounds. */
    rc = xlreaper__reaping_mark(ctx, uid, &mark);
    if (rc)
        goto out;
    /* First the DM its spawn recorded, which may not be in the uid yet
     * (runas mode); it dies before it can reach its setuid, or, if it
     * was past it, is a dying task the rounds wait for. */
    dm_rc = xlreaper__dmpid_kill(ctx, domid, &res->recorded_dm);
    if (cfg->cgroup_parent)
        xlreaper__cgroup_kill(ctx, domid, cfg->cgroup_parent);
    /* reap_timeout_ms is the kill's own time, from the lock on: the
     * wait for the lock has lock_timeout_ms.  Counted from the call, 64
     * reaps at once had spent it in the queue, and the late ones
     * reported tasks left after one round (bench_lock). */
    rc = reap_rounds(ctx, domid, uid, flags, res, &rl,
                     xlreaper__now_us() +
                         (uint64_t)cfg->reap_timeout_ms * 1000u);
    /* A recorded DM that could not be signalled is outside the kill:
     * the verdict on the uid says nothing of it. */
    if (!rc && dm_rc)
        rc = dm_rc;
    if (!rc && cfg->cgroup_parent &&
        (res->outcome == XLREAPER_OUTCOME_EMPTY ||
         res->outcome == XLREAPER_OUTCOME_ZOMBIES))
        xlreaper__cgroup_remove(ctx, domid, cfg->cgroup_parent);
    /* Root's record of the DM (xlreaper_dmrec.c) goes with it. */
    if (!rc && (res->outcome == XLREAPER_OUTCOME_EMPTY ||
                res->outcome == XLREAPER_OUTCOME_ZOMBIES))
        xlreaper__dmrec_reaped(ctx, domid);
    res->duration_us = xlreaper__now_us() - start;
    if (rc)
        goto out;
    LOGD(DEBUG, domid, "uid %lu: %u round(s), outcome %d in %llu us",
         (unsigned long)uid, res->rounds, res->outcome,
         (unsigned long long)res->duration_us);
    rc = res->outcome == XLREAPER_OUTCOME_REMAIN  ? XLREAPER_ERROR_REMAIN
         : res->outcome == XLREAPER_OUTCOME_STUCK ? XLREAPER_ERROR_STUCK
                                                  : 0;

out:
    xlreaper__reaping_unmark(mark);
    if (rl.per_round)
        xlreaper__lock_drop(rl.lock);
    xlreaper_lock_release(lock);
    xlreaper__sched_restore(&sched);
    return rc;
}

int xlreaper_reap(xlreaper_ctx *ctx, xlreaper_lock *held, uint32_t domid,
                  xlreaper_reap_result *res)
{
    return xlreaper_reap_flags(ctx, held, domid, 0, res);
}
