/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_spawn_apply.c - a spawn's child: the plan applied between fork
 * and execve (xlreaper_spawn_internal.h says where the other parts are).
 *
 * The caller may be threaded, so only async-signal-safe calls on memory
 * the plan prepared: no malloc, no stdio, no lock, no NSS.  lib.mk checks
 * this object's undefined symbols against xlreaper_spawn_apply.allow, so
 * a call added here that is not on that list fails the build.
 *
 * The steps, in order (xlreaper__spawn_apply):
 *   signals      empty mask, default dispositions (SIG_IGN survives exec)
 *   descriptors  close all but 0-2 and those the command line names;
 *                /dev/null for a closed 0-2; clear CLOEXEC on the kept
 *   setgroups(0), setresgid(gid, gid, gid)
 *   rlimits      NPROC, NOFILE, FSIZE, CORE, MSGQUEUE, LOCKS, MEMLOCK
 *   oom          oom_score_adj dm_oom_score_adj, while /proc is in reach
 *                and the task holds CAP_SYS_RESOURCE (the DM's floor)
 *   unshare      CLONE_NEWNS|CLONE_NEWIPC and CLONE_NEWNET, if configured
 *   chroot       <chroot_base>/qemu-root-<domid>, exec mode only
 *   cgroup       <cgroup_parent>/dm-<domid>, if configured
 *   setresuid(uid, uid, uid) and the checks that it took, exec mode only
 *                (in a forked spawn by way of (uid, uid, 0) and the check
 *                that the uid has no other task: see uid_check below)
 *   PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE
 *   seccomp      the set-id filter: no call may make a set-uid or
 *                set-gid file (xlreaper_setid.c says why), both modes
 *   execve
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlreaper_spawn_internal.h"

static void fail_step(const xlreaper__spawn_run *run, int *step_r, int *err_r,
                      long *detail_r, int step, long detail)
{
    if (run->wfd >= 0)
        xlreaper__child_fail(run->wfd, step, errno, detail);
    *step_r = step;
    *err_r = errno;
    *detail_r = detail;
}

/*
 * uid_check: the spawn child itself asks the kernel whether the DM uid
 * has any other task, live or zombie (the kernel's per-user count, as in
 * xlreaper_count.c), at the moment it takes the uid, without a probe
 * process: a probe per spawn (a fork of the whole caller, or even a
 * vfork of the child) doubled the cost of a spawn (bench_spawn.c).
 *
 * The kernel rule (execve(2), EAGAIN, since Linux 3.1): set*uid() that
 * changes the real uid marks the task when the new uid's count is over
 * RLIMIT_NPROC, and the next execve fails with EAGAIN if the count is
 * still over the limit then; execve checks this before it looks at the
 * file.  The mark is computed before the task itself is counted, so
 *   soft limit 0, setresuid(uid, uid, 0): marked iff another task exists
 *   soft limit 1, execve("/"): EAGAIN iff marked and another task still
 *                exists; else the mark is cleared and "/" fails EACCES
 * and no other task is created.  Under the lock no task can join the
 * uid meanwhile.
 *
 * During the check the child is (uid, uid, 0): the saved uid 0 is the
 * asymmetry of the kill's uid table (xlreaper_helper_raw.c): a task of
 * the uid, which is there exactly when the check fails, can neither
 * prlimit() the child to raise its limit and pass a busy uid as empty,
 * nor ptrace it (both need all three uids to match), whatever
 * fs.suid_dumpable says.  It can kill it, which only fails the spawn.
 * Then (uid, uid, uid), which drops the permitted capabilities, and the
 * soft limit goes up to nproc_limit.
 *
 * Used in forked spawns of exec mode.  In place the caller could not
 * undo the steps before to reap, and in runas mode the child stays root;
 * those ask a probe in the parent first (ensure_uid_empty).
 */
static int uid_check(const xlreaper_spawn_plan *plan)
{
    struct rlimit one = { .rlim_cur = 1, .rlim_max = plan->rl[0].limit };

    if (xlreaper__sys_setresuid(plan->uid, plan->uid, 0) < 0)
        return STEP_SETRESUID;
    if (setrlimit(RLIMIT_NPROC, &one) < 0)
        return STEP_RLIMIT_RAISE;
    execve("/", plan->argv, plan->envp);
    if (errno == EAGAIN)
        return STEP_UID_BUSY;
    return 0;
}

/*
 * The steps, each a static function: 0, or the step that failed with
 * errno its own and *detail_r what it was at (a signal, a descriptor, a
 * limit's index, an id).  They return at once on a failure, so that
 * nothing changes errno before fail_step reads it.
 */

/* step, having failed at detail. */
static int step_at(long *detail_r, long detail, int step)
{
    *detail_r = detail;
    return step;
}

/* A DM must not inherit the toolstack's mask or ignored signals. */
static int apply_signals(long *detail_r)
{
    /* The kernel's struct sigaction: glibc's sigaction() refuses its own
     * signals 32 and 33, which a caller may have ignored (SIG_IGN
     * survives execve). */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
    } dfl = { .handler = SIG_DFL };
    sigset_t none;

    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        return STEP_SIGNALS;
    for (int sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP &&
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask)) < 0)
            return step_at(detail_r, sig, STEP_SIGNALS);
    return 0;
}

/* Close every descriptor but 0-2, the kept ones and our own (which are
 * close-on-exec and go at execve): whatever another thread of the
 * caller opened, with or without close-on-exec, is gone. */
static int apply_fds(const xlreaper__spawn_run *run, long *detail_r)
{
    const xlreaper_spawn_plan *plan = run->plan;
    unsigned lo = 3;

    for (unsigned i = 0; i < run->num_preserve; i++) {
        unsigned p = (unsigned)run->preserve[i];
        if (xlreaper__close_from(lo, p - 1) < 0)
            return step_at(detail_r, lo, STEP_CLOSE_FDS);
        lo = p + 1;
    }
    if (xlreaper__close_from(lo, ~0u) < 0)
        return step_at(detail_r, lo, STEP_CLOSE_FDS);
    /* A closed 0-2 would be taken by the DM's next open(): a log written
     * into a disk image. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        if (errno != EBADF)
            return step_at(detail_r, fd, STEP_STDIO);
        if (open("/dev/null", O_RDWR) != fd) /* the lowest free one */
            return step_at(detail_r, fd, STEP_STDIO);
    }
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_SETFD, 0) < 0)
            return step_at(detail_r, fd, STEP_KEEP_FD);
    for (unsigned i = 0; i < plan->num_keep; i++)
        if (fcntl(plan->keep[i], F_SETFD, 0) < 0)
            return step_at(detail_r, plan->keep[i], STEP_KEEP_FD);
    return 0;
}

/* The groups, the gid and the limits. */
static int apply_gid_limits(const xlreaper__spawn_run *run, long *detail_r)
{
    const xlreaper_spawn_plan *plan = run->plan;

    if (xlreaper__sys_setgroups0() < 0)
        return STEP_SETGROUPS;
    if (xlreaper__sys_setresgid(plan->gid, plan->gid, plan->gid) < 0)
        return step_at(detail_r, plan->gid, STEP_SETRESGID);
    /* NPROC first; counted against the real uid, which is the DM's from
     * setresuid on (exec mode) or from QEMU's own setuid (runas). */
    for (unsigned i = 0; i < plan->num_rl; i++) {
        struct rlimit rl = { .rlim_cur = plan->rl[i].limit,
                             .rlim_max = plan->rl[i].limit };
        if (i == 0 && run->uid_check)
            rl.rlim_cur = 0; /* until the check (uid_check) */
        if (setrlimit(plan->rl[i].resource, &rl) < 0)
            return step_at(detail_r, i, STEP_RLIMIT);
    }
    return 0;
}

/*
 * The OOM killer's choice first (xlreaper_spawn_plan.c's plan_oom says
 * why here): before the chroot, outside which /proc/self is, and before
 * setresuid drops CAP_SYS_RESOURCE, which makes the value the DM's
 * floor.  Closed at once: in place, a later failed step returns to the
 * caller.
 */
static int apply_oom(const xlreaper_spawn_plan *plan)
{
    ssize_t n;
    int fd, e;

    if (!plan->oom_adj_len) {
        errno = EINVAL;
        return STEP_OOM_SCORE_ADJ;
    }
    fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return STEP_OOM_SCORE_ADJ;
    n = write(fd, plan->oom_adj, plan->oom_adj_len);
    e = n < 0 ? errno : EIO;
    close(fd);
    if (n != (ssize_t)plan->oom_adj_len) {
        errno = e;
        return STEP_OOM_SCORE_ADJ;
    }
    return 0;
}

/* The namespaces, the chroot and the cgroup. */
static int apply_confine(const xlreaper__spawn_run *run)
{
    const xlreaper_spawn_plan *plan = run->plan;

    if (plan->unshare_ipc_mount && unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
        return STEP_UNSHARE_NS;
    if (plan->unshare_net && unshare(CLONE_NEWNET) < 0)
        return STEP_UNSHARE_NET;
    if (plan->chroot_dir) {
        if (chroot(plan->chroot_dir) < 0)
            return STEP_CHROOT;
        if (chdir("/") < 0)
            return STEP_CHDIR;
    }
    /* "0" is the writer itself: no pid to format, and right in any pid
     * namespace. */
    if (run->cgroup_fd >= 0 && write(run->cgroup_fd, "0", 1) != 1)
        return STEP_CGROUP;
    return 0;
}

/* Exec mode: the DM's uid, all three ids (by way of uid_check in a
 * forked spawn), and the checks that it took and left no capability. */
static int apply_uid(const xlreaper__spawn_run *run, long *detail_r)
{
    const xlreaper_spawn_plan *plan = run->plan;
    uid_t r, e, s;

    if (run->uid_check) {
        struct rlimit rl = { .rlim_cur = plan->rl[0].limit,
                             .rlim_max = plan->rl[0].limit };
        int step = uid_check(plan);

        if (step == STEP_SETRESUID)
            return step_at(detail_r, plan->uid, STEP_SETRESUID);
        if (step)
            return step; /* STEP_UID_BUSY with EAGAIN: not alone */
        if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) < 0)
            return step_at(detail_r, plan->uid, STEP_SETRESUID);
        if (setrlimit(RLIMIT_NPROC, &rl) < 0)
            return STEP_RLIMIT_RAISE;
    } else if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) < 0) {
        return step_at(detail_r, plan->uid, STEP_SETRESUID);
    }
    if (getresuid(&r, &e, &s) < 0 || r != plan->uid || e != plan->uid ||
        s != plan->uid) {
        errno = EPERM;
        return STEP_CHECK_IDS;
    }
    if (xlreaper__caps_none(true) < 0)
        return STEP_CHECK_CAPS;
    return 0;
}

/* The gid checked, no_new_privs, dumpable, and the set-id filter. */
static int apply_seal(const xlreaper_spawn_plan *plan)
{
    gid_t gr, ge, gs;

    if (getresgid(&gr, &ge, &gs) < 0 || gr != plan->gid || ge != plan->gid ||
        gs != plan->gid) {
        errno = EPERM;
        return STEP_CHECK_IDS;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return STEP_NO_NEW_PRIVS;
    if (prctl(PR_SET_DUMPABLE, plan->dumpable ? 1 : 0, 0, 0, 0) < 0)
        return STEP_DUMPABLE;
    /* Last: nothing above makes a file, and the filter needs
     * no_new_privs.  It outlives execve and binds all the DM starts. */
    if (xlreaper__setid_filter_install(&plan->setid) < 0)
        return STEP_SETID_FILTER;
    return 0;
}

void xlreaper__spawn_apply(const xlreaper__spawn_run *run, int *step_r,
                           int *err_r, long *detail_r)
{
    const xlreaper_spawn_plan *plan = run->plan;
    long detail = 0;
    int step;

    step = apply_signals(&detail);
    if (!step)
        step = apply_fds(run, &detail);
    if (!step)
        step = apply_gid_limits(run, &detail);
    if (!step)
        step = apply_oom(plan);
    if (!step)
        step = apply_confine(run);
    if (!step && plan->mode == XLREAPER_UID_SWITCH_EXEC)
        step = apply_uid(run, &detail);
    if (!step)
        step = apply_seal(plan);
    if (!step) {
        if (plan->exe_fd >= 0)
            syscall(SYS_execveat, plan->exe_fd, "", plan->argv, plan->envp,
                    AT_EMPTY_PATH);
        else
            execve(plan->path, plan->argv, plan->envp);
        step = STEP_EXECVE;
    }
    fail_step(run, step_r, err_r, detail_r, step, detail);
}
