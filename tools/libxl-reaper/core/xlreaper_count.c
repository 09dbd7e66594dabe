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
 * the asymmetry of the kill's uid table (xlreaper_helper_raw.c): a
 * task of uid can neither prlimit() it to raise its limit and pass a
 * busy uid as empty, nor ptrace it (both need all three ids to match).
 * It can signal it, which the parent's bounded wait (xlreaper_wait.c)
 * turns into "busy".
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

uint64_t xlreaper__helper_deadline(const xlreaper_ctx *ctx)
{
    return xlreaper__now_us() + (uint64_t)ctx->cfg->reap_timeout_ms * 1000u;
}

/* ---------- a probe that counts, killing nothing ---------- */

/*
 * The count of uid's other tasks, at most max, by a bounded probe.
 * *count_r is set, or *busy_r when the probe was stopped, killed or too
 * slow (only a task of uid can do the first two: it is not empty).
 */
static int probe(xlreaper_ctx *ctx, uid_t uid, unsigned long max,
                 unsigned long *count_r, bool *busy_r)
{
    xlreaper__probe_args a = { .uid = uid, .max = max };
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
    rc = xlreaper__run_helper(
        ctx, "the task-count probe", xlreaper__probe_child, &a,
        xlreaper__helper_deadline(ctx), &rep, &reported, &status, &end);
    /* A uid that may be live is never entered from the caller's own
     * thread (a task of it could stop the caller): no answer. */
    if (rc == XLREAPER__ERROR_NO_TASK) {
        LOG(ERROR,
            "uid %lu: no task can be created to count it (pids or "
            "threads exhausted): cannot tell",
            (unsigned long)uid);
        rc = XLREAPER_ERROR_FAIL;
    }
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
