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

void xlreaper__spawn_apply(const xlreaper__spawn_run *run, int *step_r,
                           int *err_r, long *detail_r)
{
    const xlreaper_spawn_plan *plan = run->plan;
    /* The kernel's struct sigaction: glibc's sigaction() refuses its own
     * signals 32 and 33, which a caller may have ignored (SIG_IGN
     * survives execve). */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
    } dfl = { .handler = SIG_DFL };
    unsigned lo = 3;
    sigset_t none;
    uid_t r, e, s;
    gid_t gr, ge, gs;

#define FAIL(step, detail)                                                    \
    return fail_step(run, step_r, err_r, detail_r, (step), (long)(detail))

    /* A DM must not inherit the toolstack's mask or ignored signals. */
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        FAIL(STEP_SIGNALS, 0);
    for (int sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP &&
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask)) < 0)
            FAIL(STEP_SIGNALS, sig);

    /* Close every descriptor but 0-2, the kept ones and our own (which
     * are close-on-exec and go at execve): whatever another thread of
     * the caller opened, with or without close-on-exec, is gone. */
    for (unsigned i = 0; i < run->num_preserve; i++) {
        unsigned p = (unsigned)run->preserve[i];
        if (xlreaper__close_from(lo, p - 1) < 0)
            FAIL(STEP_CLOSE_FDS, lo);
        lo = p + 1;
    }
    if (xlreaper__close_from(lo, ~0u) < 0)
        FAIL(STEP_CLOSE_FDS, lo);
    /* A closed 0-2 would be taken by the DM's next open(): a log written
     * into a disk image. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        if (errno != EBADF)
            FAIL(STEP_STDIO, fd);
        if (open("/dev/null", O_RDWR) != fd) /* the lowest free one */
            FAIL(STEP_STDIO, fd);
    }
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_SETFD, 0) < 0)
            FAIL(STEP_KEEP_FD, fd);
    for (unsigned i = 0; i < plan->num_keep; i++)
        if (fcntl(plan->keep[i], F_SETFD, 0) < 0)
            FAIL(STEP_KEEP_FD, plan->keep[i]);

    if (xlreaper__sys_setgroups0() < 0)
        FAIL(STEP_SETGROUPS, 0);
    if (xlreaper__sys_setresgid(plan->gid, plan->gid, plan->gid) < 0)
        FAIL(STEP_SETRESGID, plan->gid);
    /* NPROC first; counted against the real uid, which is the DM's from
     * setresuid on (exec mode) or from QEMU's own setuid (runas). */
    for (unsigned i = 0; i < plan->num_rl; i++) {
        struct rlimit rl = { .rlim_cur = plan->rl[i].limit,
                             .rlim_max = plan->rl[i].limit };
        if (i == 0 && run->uid_check)
            rl.rlim_cur = 0; /* until the check (uid_check) */
        if (setrlimit(plan->rl[i].resource, &rl) < 0)
            FAIL(STEP_RLIMIT, i);
    }

    if (plan->unshare_ipc_mount && unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
        FAIL(STEP_UNSHARE_NS, 0);
    if (plan->unshare_net && unshare(CLONE_NEWNET) < 0)
        FAIL(STEP_UNSHARE_NET, 0);
    if (plan->chroot_dir) {
        if (chroot(plan->chroot_dir) < 0)
            FAIL(STEP_CHROOT, 0);
        if (chdir("/") < 0)
            FAIL(STEP_CHDIR, 0);
    }
    /* "0" is the writer itself: no pid to format, and right in any pid
     * namespace. */
    if (run->cgroup_fd >= 0 && write(run->cgroup_fd, "0", 1) != 1)
        FAIL(STEP_CGROUP, 0);

    if (plan->mode == XLREAPER_UID_SWITCH_EXEC) {
        if (run->uid_check) {
            struct rlimit rl = { .rlim_cur = plan->rl[0].limit,
                                 .rlim_max = plan->rl[0].limit };
            int step = uid_check(plan);

            if (step == STEP_SETRESUID)
                FAIL(STEP_SETRESUID, plan->uid);
            if (step)
                FAIL(step, 0); /* STEP_UID_BUSY with EAGAIN: not alone */
            if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) < 0)
                FAIL(STEP_SETRESUID, plan->uid);
            if (setrlimit(RLIMIT_NPROC, &rl) < 0)
                FAIL(STEP_RLIMIT_RAISE, 0);
        } else if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) <
                   0) {
            FAIL(STEP_SETRESUID, plan->uid);
        }
        if (getresuid(&r, &e, &s) < 0 || r != plan->uid || e != plan->uid ||
            s != plan->uid) {
            errno = EPERM;
            FAIL(STEP_CHECK_IDS, 0);
        }
        if (xlreaper__caps_none(true) < 0)
            FAIL(STEP_CHECK_CAPS, 0);
    }
    if (getresgid(&gr, &ge, &gs) < 0 || gr != plan->gid || ge != plan->gid ||
        gs != plan->gid) {
        errno = EPERM;
        FAIL(STEP_CHECK_IDS, 0);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        FAIL(STEP_NO_NEW_PRIVS, 0);
    if (prctl(PR_SET_DUMPABLE, plan->dumpable ? 1 : 0, 0, 0, 0) < 0)
        FAIL(STEP_DUMPABLE, 0);
    /* Last: nothing above makes a file, and the filter needs
     * no_new_privs.  It outlives execve and binds all the DM starts. */
    if (xlreaper__setid_filter_install(&plan->setid) < 0)
        FAIL(STEP_SETID_FILTER, 0);

    if (plan->exe_fd >= 0)
        syscall(SYS_execveat, plan->exe_fd, "", plan->argv, plan->envp,
                AT_EMPTY_PATH);
    else
        execve(plan->path, plan->argv, plan->envp);
    FAIL(STEP_EXECVE, 0);
#undef FAIL
}
