/*
 * xlreaper_count.c - the kernel's own count of a uid's tasks.
 *
 * The kernel charges every task (thread, zombie, task in a child user
 * namespace) to its real uid, and fork() fails with EAGAIN when the
 * charge would exceed RLIMIT_NPROC for a task without CAP_SYS_RESOURCE
 * or CAP_SYS_ADMIN.  So a probe that takes all three ids of uid, sets
 * RLIMIT_NPROC = L and drops every capability can fork once exactly when
 * uid has at most L - 2 other tasks.  L = 2 asks "is uid empty?"; a
 * search over L gives the count.  No /proc scan can miss a task this
 * way: there is nothing to race.
 */
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"

enum {
    PROBE_GROUPS = 1,
    PROBE_SETRESGID,
    PROBE_RLIMIT,
    PROBE_SETRESUID,
    PROBE_CAPS,
    PROBE_FORK,
};

static const char *probe_step_name(int step)
{
    switch (step) {
    case PROBE_GROUPS: return "setgroups";
    case PROBE_SETRESGID: return "setresgid";
    case PROBE_RLIMIT: return "setrlimit(RLIMIT_NPROC)";
    case PROBE_SETRESUID: return "setresuid";
    case PROBE_CAPS: return "dropping capabilities";
    case PROBE_FORK: return "fork";
    default: return "unknown step";
    }
}

typedef struct {
    uid_t uid;
    gid_t gid;
    unsigned limit;
} probe_args;

/* The probe's own child: it exists to be counted, nothing more. */
static int probe_grandchild(void *arg)
{
    (void)arg;
    _exit(0);
}

/* The probe child: exits 0 if a fork fitted under the limit, 1 if not. */
static void __attribute__((noreturn)) probe_child(int wfd, void *arg)
{
    const probe_args *a = arg;
    uid_t uid = a->uid;
    gid_t gid = a->gid;
    unsigned limit = a->limit;
    struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };
    /* The grandchild's stack: it only calls _exit. */
    char stack[16384] __attribute__((aligned(16)));
    long c;
    int status;

    if (xlreaper__sys_setgroups0() < 0)
        xlreaper__child_fail(wfd, PROBE_GROUPS, errno, 0);
    if (xlreaper__sys_setresgid(gid, gid, gid) < 0)
        xlreaper__child_fail(wfd, PROBE_SETRESGID, errno, gid);
    if (setrlimit(RLIMIT_NPROC, &rl) < 0)
        xlreaper__child_fail(wfd, PROBE_RLIMIT, errno, limit);
    if (xlreaper__sys_setresuid(uid, uid, uid) < 0)
        xlreaper__child_fail(wfd, PROBE_SETRESUID, errno, uid);
    /* With a capability left the limit would not apply and the probe
     * would answer "empty" whatever the count (SECBIT_NO_SETUID_FIXUP). */
    if (xlreaper__caps_none(true) < 0)
        xlreaper__child_fail(wfd, PROBE_CAPS, errno, 0);

    /*
     * clone, not fork: no atfork handlers in a child of a threaded
     * caller, and CLONE_VM spares copying the caller's page tables a
     * second time (the count is charged all the same: RLIMIT_NPROC is
     * checked for every new task).  Not CLONE_VFORK: a task of uid could
     * stop the grandchild and so hang us inside vfork; here a stop shows
     * in waitpid below and is answered with SIGKILL.
     */
    c = clone(probe_grandchild, stack + sizeof(stack), CLONE_VM | SIGCHLD,
              NULL);
    if (c < 0) {
        if (errno == EAGAIN)
            _exit(1);
        xlreaper__child_fail(wfd, PROBE_FORK, errno, 0);
    }
    /* Reap it here: a zombie left to init would count against uid for
     * the next probe.  A stop can only come from a task of uid. */
    for (;;) {
        pid_t r = waitpid((pid_t)c, &status, __WALL | WUNTRACED);
        if (r == (pid_t)c && WIFSTOPPED(status)) {
            kill((pid_t)c, SIGKILL);
            continue;
        }
        if (r == (pid_t)c || errno != EINTR)
            break;
    }
    _exit(0);
}

int xlreaper__probe_nproc(xlreaper_ctx *ctx, uid_t uid, gid_t gid,
                          unsigned limit, bool *fits_r)
{
    probe_args a = { .uid = uid, .gid = gid, .limit = limit };
    xlreaper__child_report rep;
    bool reported;
    int rc, status;

    if (uid == 0 || uid == (uid_t)-1 || gid == 0 || gid == (gid_t)-1) {
        LOG(ERROR, "refusing to probe uid %lu gid %lu", (unsigned long)uid,
            (unsigned long)gid);
        return XLREAPER_ERROR_INVAL;
    }
    /* Its child must take uid's ids: that needs root, and without it
     * the child's setresuid fails, which is no system error. */
    if (geteuid() != 0) {
        LOG(ERROR, "the kernel's task count of uid %lu needs root",
            (unsigned long)uid);
        return XLREAPER_ERROR_PERM;
    }
    rc = xlreaper__run_child(ctx, "the task-count probe", probe_child, &a,
                             &rep, &reported, &status);
    if (rc)
        return rc;
    if (reported) {
        LOGEV(ERROR, rep.err, "task-count probe of uid %lu: %s(%ld)",
              (unsigned long)uid, probe_step_name(rep.step), rep.detail);
        return XLREAPER_ERROR_FAIL;
    }
    if (WIFSIGNALED(status)) {
        /* Only a live task of uid can signal the probe: not empty. */
        LOG(DEBUG, "probe of uid %lu killed by signal %d", (unsigned long)uid,
            WTERMSIG(status));
        *fits_r = false;
        return 0;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        LOG(ERROR, "task-count probe of uid %lu: unexpected status %#x",
            (unsigned long)uid, status);
        return XLREAPER_ERROR_FAIL;
    }
    *fits_r = WEXITSTATUS(status) == 0;
    return 0;
}

int xlreaper_uid_empty(xlreaper_ctx *ctx, uid_t uid, bool *empty_r)
{
    return xlreaper__probe_nproc(ctx, uid, (gid_t)uid, 2, empty_r);
}

/* Above any pid_max Linux allows (PID_MAX_LIMIT is 4 Mi). */
#define COUNT_LIMIT_MAX (1u << 23)

int xlreaper_uid_count(xlreaper_ctx *ctx, uid_t uid, unsigned *count_r)
{
    unsigned lo = 2, hi = 2; /* the least limit that fits is in (lo, hi] */
    bool fits;
    int rc;

    /* Grow hi until it fits; then bisect.  fits(L) holds exactly when
     * the others number L - 2 or fewer. */
    for (;;) {
        rc = xlreaper__probe_nproc(ctx, uid, (gid_t)uid, hi, &fits);
        if (rc)
            return rc;
        if (fits)
            break;
        lo = hi;
        if (hi >= COUNT_LIMIT_MAX) {
            LOG(ERROR, "uid %lu: task count beyond %u", (unsigned long)uid,
                COUNT_LIMIT_MAX);
            return XLREAPER_ERROR_FAIL;
        }
        hi = hi * 2;
    }
    if (hi == 2) {
        *count_r = 0;
        return 0;
    }
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        rc = xlreaper__probe_nproc(ctx, uid, (gid_t)uid, mid, &fits);
        if (rc)
            return rc;
        if (fits)
            hi = mid;
        else
            lo = mid;
    }
    *count_r = hi - 2;
    return 0;
}
