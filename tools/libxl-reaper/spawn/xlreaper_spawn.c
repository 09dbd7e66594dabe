/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_spawn.c - a spawn's run, in the parent: the lock, the check
 * that the DM uid is empty (or its reap), the cgroup, the fork or the
 * exec in place, the bounded wait for the child's report, and the log
 * line for a failed step (xlreaper_spawn_internal.h says where the plan
 * and the child's half are).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_spawn_internal.h"

/* clang-format off: a table reads better one case a line. */
static const char *step_name(int step)
{
    switch (step) {
    case STEP_SIGNALS: return "resetting signals";
    case STEP_CLOSE_FDS: return "close_range";
    case STEP_STDIO: return "opening /dev/null as a standard descriptor";
    case STEP_KEEP_FD: return "keeping descriptor";
    case STEP_SETGROUPS: return "setgroups";
    case STEP_SETRESGID: return "setresgid";
    case STEP_RLIMIT: return "setrlimit";
    case STEP_OOM_SCORE_ADJ: return "writing /proc/self/oom_score_adj";
    case STEP_UNSHARE_NS: return "unshare(CLONE_NEWNS|CLONE_NEWIPC)";
    case STEP_UNSHARE_NET: return "unshare(CLONE_NEWNET)";
    case STEP_CHROOT: return "chroot";
    case STEP_CHDIR: return "chdir(/) in the chroot";
    case STEP_CGROUP: return "joining the cgroup";
    case STEP_SETRESUID: return "setresuid";
    case STEP_UID_BUSY: return "checking the uid has no other task";
    case STEP_RLIMIT_RAISE: return "setrlimit(RLIMIT_NPROC) after the check";
    case STEP_CHECK_IDS: return "checking the ids set";
    case STEP_CHECK_CAPS: return "checking no capability is left";
    case STEP_NO_NEW_PRIVS: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case STEP_DUMPABLE: return "prctl(PR_SET_DUMPABLE)";
    case STEP_SETID_FILTER: return "installing the set-id seccomp filter";
    case STEP_EXECVE: return "execve";
    default: return "unknown step";
    }
}
/* clang-format on */

/* ---------- before the fork: the lock and leftovers ---------- */

/* The uid of the plan is not empty and will not be reaped: say so. */
static void log_busy(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan)
{
    xlreaper_task_list l;

    xlreaper_task_list_init(&l);
    xlreaper_scan_uid(ctx, plan->uid, &l);
    if (l.num)
        LOGD(ERROR, plan->domid,
             "uid %lu still has tasks (%u visible, first pid %ld): a "
             "previous domain's device model lives on; reap it with "
             "`xl-reaper kill %u`, or set reap_stale = 1 (`xl-reaper "
             "spawn --reap-stale`)",
             (unsigned long)plan->uid, l.num, (long)l.tasks[0].tid,
             plan->domid);
    else
        LOGD(ERROR, plan->domid,
             "uid %lu still has tasks (the kernel counts them, /proc "
             "shows none: a fork racer?): a previous domain's device "
             "model lives on; reap it with `xl-reaper kill %u`, or set "
             "reap_stale = 1 (`xl-reaper spawn --reap-stale`)",
             (unsigned long)plan->uid, plan->domid);
    xlreaper_task_list_dispose(&l);
}

/* With the lock held: reaps the stale tasks of the plan's uid.  0 only
 * when the kernel then counts none. */
static int reap_stale(xlreaper_ctx *ctx, xlreaper_lock *lock,
                      const xlreaper_spawn_plan *plan)
{
    xlreaper_reap_result res;
    char *what;
    int rc;

    LOGD(WARN, plan->domid,
         "uid %lu still has tasks of a previous domain; reaping them "
         "before the new device model starts",
         (unsigned long)plan->uid);
    xlreaper_reap_result_init(&res);
    /* The new DM is counted against the same uid: wait for "empty".
     * The reap lets the lock go between its rounds, so that a uid that
     * stays stuck does not hold up the host; it is taken again after,
     * and the caller checks the uid anew under it. */
    rc = xlreaper_reap_flags(
        ctx, lock, plan->domid,
        XLREAPER_REAP_WAIT_EMPTY | XLREAPER_REAP_LOCK_ROUNDS, &res);
    what = xlreaper_reap_result_describe(&res);
    if (!rc && res.outcome != XLREAPER_OUTCOME_EMPTY)
        rc = XLREAPER_ERROR_BUSY; /* zombies would still count */
    if (rc)
        LOGD(ERROR, plan->domid, "stale tasks: %s",
             what ? what : "(out of memory)");
    else
        LOGD(WARN, plan->domid, "stale tasks: %s",
             what ? what : "(out of memory)");
    free(what);
    xlreaper_reap_result_dispose(&res);
    if (!rc)
        rc = xlreaper__lock_acquire_unmarked(ctx, plan->uid, &lock);
    return rc;
}

/* With the lock held: fails unless domid's uid is empty, or is made so. */
static int ensure_uid_empty(xlreaper_ctx *ctx, xlreaper_lock *lock,
                            const xlreaper_spawn_plan *plan, bool reap)
{
    bool empty;
    int rc;

    rc = xlreaper_uid_empty(ctx, plan->uid, &empty);
    if (rc || empty)
        return rc;
    if (reap) {
        /* The lock was let go and taken again: the uid is asked anew,
         * in the hold that starts the DM. */
        rc = reap_stale(ctx, lock, plan);
        if (!rc)
            rc = xlreaper_uid_empty(ctx, plan->uid, &empty);
        if (rc || empty)
            return rc;
    }
    log_busy(ctx, plan);
    return XLREAPER_ERROR_BUSY;
}

static void preserve_add(xlreaper__spawn_run *run, int fd)
{
    unsigned i;

    if (fd <= 2)
        return;
    for (i = 0; i < run->num_preserve && run->preserve[i] < fd; i++)
        ;
    if (i < run->num_preserve && run->preserve[i] == fd)
        return;
    memmove(&run->preserve[i + 1], &run->preserve[i],
            (run->num_preserve - i) * sizeof(run->preserve[0]));
    run->preserve[i] = fd;
    run->num_preserve++;
}

static void preserve_remove(xlreaper__spawn_run *run, int fd)
{
    for (unsigned i = 0; i < run->num_preserve; i++) {
        if (run->preserve[i] == fd) {
            memmove(&run->preserve[i], &run->preserve[i + 1],
                    (run->num_preserve - i - 1) * sizeof(run->preserve[0]));
            run->num_preserve--;
            return;
        }
    }
}

/*
 * Takes the lock, checks the uid, makes the chroot and the cgroup, and
 * fills run with
 * the descriptors the child must not close.  On failure nothing is left
 * held.
 */
static bool want_reap(const xlreaper_ctx *ctx, unsigned flags)
{
    return (flags & XLREAPER_SPAWN_REAP_STALE) || ctx->cfg->reap_stale;
}

static int prepare(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                   unsigned flags, bool forked, xlreaper_lock **lock_r,
                   xlreaper__spawn_run *run)
{
    char *cgdir = NULL;
    int rc;

    run->plan = plan;
    run->wfd = -1;
    run->cgroup_fd = -1;
    run->num_preserve = 0;
    run->uid_check = forked && plan->mode == XLREAPER_UID_SWITCH_EXEC &&
                     plan->rl[0].limit >= 2;
    *lock_r = NULL;

    if (geteuid() != 0) {
        LOGD(ERROR, plan->domid, "spawning a device model needs root");
        return XLREAPER_ERROR_PERM;
    }
    /* Before the lock, which the watcher must not inherit, and before
     * drop_vkbd's thread: xenstore is waited for, with a deadline. */
    if (plan->drop_vkbd && !forked)
        xlreaper__dm_ready_later(ctx, plan->domid, plan->uid,
                                 plan->incoming_fd);
    if (plan->drop_vkbd)
        xlreaper__drop_vkbd(ctx, plan->domid);
    /* Not while a reap of the uid is between its rounds: the DM would
     * die in its next one (xlreaper_lock.c). */
    rc = xlreaper__lock_acquire_unmarked(ctx, plan->uid, lock_r);
    if (rc)
        goto fail;
    if (!run->uid_check) {
        rc = ensure_uid_empty(ctx, *lock_r, plan, want_reap(ctx, flags));
        if (rc)
            goto fail;
    }
    /* As libxl makes it for dm_restrict: root's (we are root), mode
     * 0000, empty.  One that appeared since the plan checked it absent
     * was made by someone else: refused, not used. */
    if (plan->make_chroot && mkdir(plan->make_chroot, 0) < 0) {
        LOGED(ERROR, plan->domid, "making QEMU's chroot %s",
              plan->make_chroot);
        rc = errno == EEXIST ? XLREAPER_ERROR_INVAL : XLREAPER_ERROR_FAIL;
        goto fail;
    }
    if (plan->cgroup_parent) {
        rc = xlreaper__cgroup_prepare(ctx, plan->domid, plan->cgroup_parent,
                                      plan->memory_max, &cgdir,
                                      &run->cgroup_fd);
        if (rc)
            goto fail;
        LOGD(DEBUG, plan->domid, "cgroup %s", cgdir);
        free(cgdir);
    }
    for (unsigned i = 0; i < plan->num_keep; i++)
        preserve_add(run, plan->keep[i]);
    preserve_add(run, run->cgroup_fd);
    preserve_add(run, plan->exe_fd);
    return 0;

fail:
    xlreaper_lock_release(*lock_r);
    *lock_r = NULL;
    return rc;
}

static void run_dispose(xlreaper__spawn_run *run)
{
    xlreaper__close_keep_errno(run->cgroup_fd);
    run->cgroup_fd = -1;
}

static void log_step(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                     int step, int err, long detail)
{
    uint32_t d = plan->domid;

    switch (step) {
    case STEP_SETRESUID:
    case STEP_SETRESGID:
        LOGEV(ERROR, err, "spawn domid %u: %s(%ld)", d, step_name(step),
              detail);
        break;
    case STEP_KEEP_FD:
    case STEP_STDIO:
        LOGEV(ERROR, err, "spawn domid %u: %s %ld", d, step_name(step),
              detail);
        break;
    case STEP_RLIMIT:
        if (detail >= 0 && (unsigned long)detail < plan->num_rl)
            LOGEV(ERROR, err, "spawn domid %u: setrlimit(%s, %llu)", d,
                  xlreaper__spawn_rlimit_name(plan->rl[detail].resource),
                  (unsigned long long)plan->rl[detail].limit);
        else
            LOGEV(ERROR, err, "spawn domid %u: setrlimit", d);
        break;
    case STEP_OOM_SCORE_ADJ:
        LOGEV(ERROR, err,
              "spawn domid %u: writing %.*s to /proc/self/oom_score_adj "
              "(dm_oom_score_adj)",
              d, (int)plan->oom_adj_len, plan->oom_adj);
        break;
    case STEP_CHROOT:
        LOGEV(ERROR, err, "spawn domid %u: chroot(%s)", d, plan->chroot_dir);
        break;
    case STEP_CGROUP:
        LOGEV(ERROR, err, "spawn domid %u: joining cgroup %s/dm-%u", d,
              plan->cgroup_parent, d);
        break;
    case STEP_EXECVE:
        LOGEV(ERROR, err, "spawn domid %u: execve(%s)", d, plan->path);
        break;
    default: LOGEV(ERROR, err, "spawn domid %u: %s", d, step_name(step));
    }
}

/* ---------- root's record of the DM (xlreaper_dmrec.c) ---------- */

/* Under the lock: what root started pid as, for the audit.  In place
 * (the wrapper) it is written before the execve.  Not async-signal-safe:
 * the parent's (or the in-place caller's) side, never the apply's. */
static int record_dm(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                     pid_t pid)
{
    xlreaper__dmrec r = {
        .domid = plan->domid,
        .pid = pid,
        .runas = plan->mode == XLREAPER_UID_SWITCH_RUNAS,
        .uid = plan->uid,
        .gid = plan->gid,
        .root = plan->record_root,
        .nnp = true,
        .unshare_ns = plan->unshare_ipc_mount,
        .unshare_net = plan->unshare_net,
        .seccomp_setid = true,
        .path = plan->path,
    };
    xlreaper__sb args = { 0 };
    int rc;

    if (xlreaper__proc_starttime(pid, &r.start) < 0) {
        LOGED(ERROR, plan->domid,
              "reading the start time of device model pid %ld", (long)pid);
        return XLREAPER_ERROR_FAIL;
    }
    for (unsigned i = 0; i < plan->num_rl && i < MAX_RL; i++) {
        r.rl[i].resource = plan->rl[i].resource;
        r.rl[i].limit = plan->rl[i].limit == RLIM_INFINITY
                            ? UINT64_MAX
                            : (uint64_t)plan->rl[i].limit;
        r.num_rl++;
    }
    for (char **a = plan->argv; *a; a++) {
        xlreaper__sb_printf(&args, "%s", *a);
        xlreaper__sb_printf(&args, "%c", 1);
        if (!args.oom)
            args.buf[args.len - 1] = '\0';
    }
    if (args.oom) {
        xlreaper__sb_dispose(&args);
        return XLREAPER_ERROR_NOMEM;
    }
    r.argv = args.buf;
    r.argv_len = args.len;
    rc = xlreaper__dmrec_write(ctx, &r);
    xlreaper__sb_dispose(&args);
    return rc;
}

int xlreaper_spawn_exec(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                        unsigned flags)
{
    xlreaper_lock *lock = NULL;
    xlreaper__spawn_run run;
    int rc, step = 0, err = 0;
    long detail = 0;

    rc = prepare(ctx, plan, flags, false, &lock, &run);
    if (rc)
        return rc;
    /* Runas mode: this process becomes QEMU, root until its setuid.
     * Recorded under the lock, so that no reap after the lock is let go
     * misses it (xlreaper_dmpid.c). */
    if (plan->mode == XLREAPER_UID_SWITCH_RUNAS) {
        rc = xlreaper__dmpid_record(ctx, plan->domid, getpid());
        if (rc) {
            run_dispose(&run);
            xlreaper_lock_release(lock);
            return rc;
        }
    }
    rc = record_dm(ctx, plan, getpid());
    if (rc) {
        run_dispose(&run);
        xlreaper_lock_release(lock);
        return rc;
    }
    /* The lock is held until the execve that makes the DM closes its
     * close-on-exec descriptor: no reaper can kill the uid between our
     * check that it is empty and the DM's birth. */
    preserve_add(&run, xlreaper__lock_fd(lock));
    xlreaper__spawn_apply(&run, &step, &err, &detail);
    log_step(ctx, plan, step, err, detail);
    run_dispose(&run);
    xlreaper_lock_release(lock);
    return XLREAPER_ERROR_FAIL;
}

/*
 * One fork of run.  0: the child reached execve, *pid_r set.  1: it
 * reported a failing step in *rep, and was reaped.  Or an error.
 */
static int fork_once(xlreaper_ctx *ctx, xlreaper__spawn_run *run, pid_t *pid_r,
                     xlreaper__child_report *rep)
{
    const xlreaper_spawn_plan *plan = run->plan;
    xlreaper__report_pipe p = { -1, -1 };
    xlreaper__wait w;
    bool reported;
    pid_t pid;
    int rc, status;

    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        return rc;
    /* A caller with 0-2 closed would get the pipe there, and the child
     * would keep it as stdio: the parent would wait for the DM's end. */
    p.rfd = xlreaper__fd_above_stdio(p.rfd);
    p.wfd = xlreaper__fd_above_stdio(p.wfd);
    if (p.rfd < 0 || p.wfd < 0) {
        LOGED(ERROR, plan->domid, "moving the report pipe");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    run->wfd = p.wfd;
    preserve_add(run, p.wfd);
    pid = fork();
    if (pid < 0) {
        LOGED(ERROR, plan->domid, "fork for the device model");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (pid == 0) {
        int step, err;
        long detail;
        xlreaper__spawn_apply(run, &step, &err, &detail);
        _exit(127); /* not reached: apply_plan reports and exits */
    }
    close(p.wfd);
    p.wfd = -1;
    /* Bounded: in a busy uid a task of the uid can stop the child while
     * it checks (uid_check), and we hold the lock. */
    w = (xlreaper__wait){ .mode = XLREAPER__WAIT_EXEC,
                          .pid = pid,
                          .rfd = p.rfd,
                          .buf = (char *)rep,
                          .size = sizeof(*rep),
                          .deadline_us = xlreaper__helper_deadline(ctx) };
    rc = xlreaper__wait_bounded(ctx, &w);
    if (!rc)
        rc = xlreaper__wait_report(ctx, &w, &reported);
    if (rc)
        goto out;
    status = w.status;
    if (w.end != XLREAPER__HELPER_DONE) {
        /* Killed and reaped: only a task of the uid can stop it. */
        *rep =
            (xlreaper__child_report){ .step = STEP_UID_BUSY, .err = EAGAIN };
        rc = 1;
        goto out;
    }
    if (reported) {
        /* It _exits at once after its report. */
        if (status == -1)
            xlreaper__wait_child(ctx, pid, &status);
        rc = 1;
        goto out;
    }
    *pid_r = pid;

out:
    preserve_remove(run, run->wfd);
    run->wfd = -1;
    xlreaper__report_pipe_close(&p);
    return rc;
}

int xlreaper_spawn(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                   unsigned flags, pid_t *pid_r, int *pidfd_r)
{
    xlreaper_lock *lock = NULL;
    /* fork_once fills it whenever it returns 1; zeroed so that no path
     * reads it unset (scan-build). */
    xlreaper__child_report rep = { 0 };
    xlreaper__spawn_run run;
    bool reaped = false;
    pid_t pid = -1;
    int rc;

    rc = prepare(ctx, plan, flags, true, &lock, &run);
    if (rc)
        return rc;
    for (;;) {
        rc = fork_once(ctx, &run, &pid, &rep);
        if (rc < 0)
            goto out;
        if (rc == 0)
            break;
        if (rep.step == STEP_UID_BUSY && rep.err == EAGAIN) {
            /* Found by the child itself (uid_check), under our lock. */
            if (want_reap(ctx, flags) && !reaped) {
                rc = reap_stale(ctx, lock, plan);
                if (rc)
                    goto out;
                reaped = true;
                continue;
            }
            log_busy(ctx, plan);
            rc = XLREAPER_ERROR_BUSY;
            goto out;
        }
        log_step(ctx, plan, rep.step, rep.err, rep.detail);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }

    /* Runas mode: the child is QEMU, root until its setuid; recorded
     * while we hold the lock (xlreaper_dmpid.c).  Without the record no
     * reap could reach it: it does not run. */
    if (plan->mode == XLREAPER_UID_SWITCH_RUNAS)
        rc = xlreaper__dmpid_record(ctx, plan->domid, pid);
    if (!rc)
        rc = record_dm(ctx, plan, pid);
    if (rc) {
        int status;

        kill(pid, SIGKILL); /* our unreaped child: the pid is its */
        xlreaper__wait_child(ctx, pid, &status);
        goto out;
    }

    /* Our unreaped child: its pid cannot be reused under us. */
    if (pidfd_r) {
        *pidfd_r = (int)syscall(SYS_pidfd_open, pid, 0);
        if (*pidfd_r < 0)
            LOGED(WARN, plan->domid, "pidfd_open %ld", (long)pid);
    }
    *pid_r = pid;
    rc = 0;

out:
    run_dispose(&run);
    xlreaper_lock_release(lock);
    return rc;
}
