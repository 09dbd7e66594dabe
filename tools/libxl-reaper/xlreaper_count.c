/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_count.c - the kernel's own count of a uid's tasks.
 *
 * The kernel charges every task (thread, zombie) to its real uid, and
 * keeps a mark for the rule of execve(2) (EAGAIN, since Linux 3.1): a
 * set*uid() that changes the real uid marks the task when the new
 * uid's count, the task itself included, is over its soft RLIMIT_NPROC;
 * the next execve fails with EAGAIN if the count is still over the
 * limit then, before it looks at the file, and otherwise clears the
 * mark.  So a task that takes uid as its real uid with the soft limit
 * at 0 is always marked, and with the soft limit then at L an
 * execve("/") fails with EAGAIN exactly when uid has L or more other
 * tasks, and with EACCES (a directory is never executed) when it has
 * fewer.  A search over L gives the count, inside the asking task: no
 * task is created, so nothing a DM does (pids.max, threads-max, a full
 * pid space) can be mistaken for a busy uid, and there is no second
 * task to stop.  A real uid 0 is exempt from the rule; capabilities,
 * on kernels that once checked them in set_user, are shed before the
 * real uid changes (docs/facts.md F4).  What a question costs is in
 * bench/RESULTS.md (bench_parts, the kernel-count probe).
 *
 * What the count cannot see: a task of uid inside a user namespace
 * created by another uid is charged to that uid's namespace owner
 * (config.c refuses a DM range that overlaps /etc/subuid, and the
 * reap keeps /proc as its witness then).
 *
 * The asking task has (uid, uid, 0) while it asks.  The saved uid 0 is
 * the asymmetry of the uid table in xlreaper_reap.c: a task of uid can
 * neither prlimit() it to raise its limit and pass a busy uid as empty,
 * nor ptrace it (both need all three ids to match).  It can signal it, which the parent's
 * bounded wait (xlreaper_child.c) turns into "busy".
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

/* The soft limit is set per question; the hard limit stays as it is:
 * raising it needs CAP_SYS_RESOURCE, which root lacks in some
 * containers.  The count is asked up to it.  Read once per count, into
 * the helper's own stack: a helper shares the caller's memory
 * (xlreaper_clone.c) and writes no static. */
typedef struct {
    rlim_t hard;
} nproc_asker;

static XLREAPER__HELPER_CODE int set_nproc(const nproc_asker *q, rlim_t soft)
{
    struct rlimit rl = { .rlim_cur = soft, .rlim_max = q->hard };

    return (int)xlreaper__raw6(SYS_prlimit64, 0, RLIMIT_NPROC, (long)&rl, 0, 0,
                               0);
}

/*
 * Leaves the task (uid, uid, 0), marked.  Precondition: saved uid 0.
 * The real uid goes to 0 and back, so that it changes even when it is
 * uid already; the last change is made without effective capabilities.
 * 0 or -errno.
 */
static XLREAPER__HELPER_CODE int nproc_mark(const nproc_asker *q, uid_t uid)
{
    long r;

    /* Saved uid 0 lets the real and effective uids both go to 0 in one
     * call; the real uid 0 is never marked. */
    if ((r = xlreaper__raw(SYS_setresuid, 0, 0, -1)) < 0 ||
        (r = set_nproc(q, 0)) < 0 ||
        (r = xlreaper__raw(SYS_setresuid, -1, uid, -1)) < 0 ||
        (r = xlreaper__raw(SYS_setresuid, uid, -1, -1)) < 0)
        return (int)r;
    return 0;
}

/* 1: uid has limit or more other tasks (the mark stays); 0: fewer (the
 * mark is gone); -errno: neither answer. */
static XLREAPER__HELPER_CODE int nproc_at_least(const nproc_asker *q,
                                                unsigned long limit)
{
    static char *const argv[] = { "/", NULL };
    static char *const envp[] = { NULL };
    long r = set_nproc(q, limit);

    if (r < 0)
        return (int)r;
    r = xlreaper__raw(SYS_execve, "/", argv, envp);
    if (r == -EAGAIN)
        return 1;
    if (r == -EACCES)
        return 0;
    return r < 0 ? (int)r : -EINVAL; /* an execve of "/" that worked */
}

long XLREAPER__HELPER_CODE xlreaper__nproc_others(uid_t uid, unsigned long max)
{
    unsigned long lo, hi; /* lo or more others, fewer than hi */
    struct rlimit cur = { 0, 0 }; /* unwritten: every question fails */
    nproc_asker q;
    long r;

    r = xlreaper__raw6(SYS_prlimit64, 0, RLIMIT_NPROC, 0, (long)&cur, 0, 0);
    if (r < 0)
        return r;
    q.hard = cur.rlim_max;
    if ((r = nproc_mark(&q, uid)) < 0)
        return r;
    r = nproc_at_least(&q, 1);
    if (r <= 0)
        return r; /* the common answer: none, in one question */
    /* Doubling keeps the mark (each question fails); the halving that
     * follows marks afresh before each question. */
    if (max > q.hard)
        max = q.hard;
    for (lo = 1, hi = 2;; lo = hi, hi *= 2) {
        if (hi > max)
            return (long)max;
        r = nproc_at_least(&q, hi);
        if (r < 0)
            return r;
        if (!r)
            break;
    }
    while (hi - lo > 1) {
        unsigned long mid = lo + (hi - lo) / 2;

        if ((r = nproc_mark(&q, uid)) < 0 || (r = nproc_at_least(&q, mid)) < 0)
            return r;
        if (r)
            lo = mid;
        else
            hi = mid;
    }
    return (long)lo;
}

uint64_t xlreaper__helper_deadline(const xlreaper_ctx *ctx)
{
    return xlreaper__now_us() + (uint64_t)ctx->cfg->reap_timeout_ms * 1000u;
}

/* ---------- a probe that counts, killing nothing ---------- */

enum {
    PROBE_GROUPS = 1,
    PROBE_COUNT,
};

typedef struct {
    uid_t uid;
    unsigned long max;
} probe_args;

static XLREAPER__HELPER_CODE void __attribute__((noreturn))
probe_child(int wfd, void *arg)
{
    const probe_args *a = arg;
    long n;

    n = xlreaper__raw(SYS_setgroups, 0, NULL, 0);
    if (n < 0)
        xlreaper__child_fail(wfd, PROBE_GROUPS, (int)-n, 0);
    n = xlreaper__nproc_others(a->uid, a->max);
    if (n < 0)
        xlreaper__child_fail(wfd, PROBE_COUNT, (int)-n, a->uid);
    xlreaper__child_send(wfd, 0, 0, n);
    xlreaper__child_exit(0);
}

/*
 * The count of uid's other tasks, at most max, by a bounded probe.
 * *count_r is set, or *busy_r when the probe was stopped, killed or too
 * slow (only a task of uid can do the first two: it is not empty).
 */
static int probe(xlreaper_ctx *ctx, uid_t uid, unsigned long max,
                 unsigned long *count_r, bool *busy_r)
{
    probe_args a = { .uid = uid, .max = max };
    xlreaper__child_report rep;
    xlreaper__helper_end end;
    xlreaper_lock *lock = NULL;
    bool reported;
    int rc, status;

    *busy_r = false;
    if (!ctx->cfg)
        return XLREAPER_ERROR_INVAL;
    if (uid == 0 || uid == (uid_t)-1) {
        LOG(ERROR, "refusing to probe uid %lu", (unsigned long)uid);
        return XLREAPER_ERROR_INVAL;
    }
    /* Its child must take uid's ids: that needs root, and without it
     * the child's setresuid fails, which is no system error. */
    if (geteuid() != 0) {
        LOG(ERROR, "the kernel's task count of uid %lu needs root",
            (unsigned long)uid);
        return XLREAPER_ERROR_PERM;
    }
    /* Under the lock, so that a spawn never takes the probe for a
     * leftover and a kill never counts it among its dead. */
    if (!ctx->held) {
        rc = xlreaper_lock_acquire(ctx, &lock);
        if (rc)
            return rc;
    }
    rc = xlreaper__run_helper(ctx, "the task-count probe", probe_child, &a,
                              xlreaper__helper_deadline(ctx), &rep, &reported,
                              &status, &end);
    if (rc)
        goto out;
    if (end == XLREAPER__HELPER_DONE && reported && rep.step == 0 &&
        WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *count_r = (unsigned long)rep.detail;
        goto out;
    }
    if (end == XLREAPER__HELPER_DONE && reported) {
        LOGEV(ERROR, rep.err, "task-count probe of uid %lu: %s",
              (unsigned long)uid,
              rep.step == PROBE_GROUPS ? "setgroups" : "counting");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (end == XLREAPER__HELPER_DONE && !WIFSIGNALED(status)) {
        LOG(ERROR, "task-count probe of uid %lu: unexpected status %#x",
            (unsigned long)uid, status);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    /* Stopped, killed, or held past its deadline: a task of uid did
     * it, or the host is too loaded to tell; never "empty". */
    LOG(DEBUG, "probe of uid %lu %s: busy", (unsigned long)uid,
        end == XLREAPER__HELPER_STOPPED   ? "stopped"
        : end == XLREAPER__HELPER_TIMEOUT ? "timed out"
                                          : "killed");
    *busy_r = true;

out:
    xlreaper_lock_release(lock);
    return rc;
}

int xlreaper_uid_empty(xlreaper_ctx *ctx, uid_t uid, bool *empty_r)
{
    unsigned long n = 0;
    bool busy;
    int rc = probe(ctx, uid, 1, &n, &busy);

    if (!rc)
        *empty_r = !busy && n == 0;
    return rc;
}

int xlreaper_uid_count(xlreaper_ctx *ctx, uid_t uid, unsigned *count_r)
{
    unsigned long n = 0;
    bool busy;
    int rc = probe(ctx, uid, XLREAPER__NPROC_MAX, &n, &busy);

    if (rc)
        return rc;
    if (busy) {
        LOG(ERROR,
            "uid %lu: the count probe was stopped or killed (only a task "
            "of the uid can do that): busy, count unknown",
            (unsigned long)uid);
        return XLREAPER_ERROR_BUSY;
    }
    if (n >= XLREAPER__NPROC_MAX) {
        LOG(ERROR, "uid %lu: task count beyond %lu", (unsigned long)uid,
            XLREAPER__NPROC_MAX);
        return XLREAPER_ERROR_FAIL;
    }
    *count_r = (unsigned)n;
    return 0;
}
