/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_child.c - what every forked helper child shares: the report
 * pipe that carries (step, errno) to the parent, a bounded wait for it,
 * and the raw credential system calls.
 *
 * Between fork and _exit/execve a child of a possibly multi-threaded
 * caller may only make async-signal-safe calls on memory prepared
 * before the fork (as minijail and bubblewrap do).  Raw syscall(2) is
 * used for credentials because glibc's setresuid() in a process with
 * other threads broadcasts the change to them; in the child there are
 * none, and the raw call says exactly what happens.
 *
 * Hostile territory.  A helper that takes a DM uid as its real uid (the
 * killer while it counts, a count probe, a census probe) can be
 * signalled by any task of that uid: stopped, killed, or held in a stop
 * forever.  So a helper holds nothing it could lose (no descriptor but
 * its report pipe, its own process group, not dumpable, PDEATHSIG so it
 * cannot outlive us, armed again after each change of its ids, which
 * clears it: xlreaper__helper_rearm) and takes saved uid 0, which keeps it out of
 * ptrace and prlimit (both need all three ids to match).  The parent
 * never blocks on it without a deadline: it polls the report pipe and
 * the child's pidfd, looks for a stop between polls, and answers a stop
 * or a missed deadline with SIGKILL.  Such a helper's answer is void:
 * the caller turns it into a verdict ("busy", "could not tell"), never
 * into "empty".
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

int xlreaper__report_pipe_open(xlreaper_ctx *ctx, xlreaper__report_pipe *p)
{
    int fds[2];

    if (pipe2(fds, O_CLOEXEC) < 0) {
        LOGE(ERROR, "pipe2");
        p->rfd = p->wfd = -1;
        return XLREAPER_ERROR_FAIL;
    }
    p->rfd = fds[0];
    p->wfd = fds[1];
    return 0;
}

void xlreaper__report_pipe_close(xlreaper__report_pipe *p)
{
    xlreaper__close_keep_errno(p->rfd);
    xlreaper__close_keep_errno(p->wfd);
    p->rfd = p->wfd = -1;
}

int xlreaper__report_read(xlreaper_ctx *ctx, int rfd,
                          xlreaper__child_report *rep)
{
    ssize_t r = xlreaper__read_all(rfd, (char *)rep, sizeof(*rep));

    if (r < 0) {
        LOGE(ERROR, "reading a child's report");
        return XLREAPER_ERROR_FAIL;
    }
    if (r == 0)
        return 0;
    if ((size_t)r != sizeof(*rep)) {
        LOG(ERROR, "a child's report was cut short (%zd bytes)", r);
        return XLREAPER_ERROR_FAIL;
    }
    return 1;
}

int xlreaper__close_from(unsigned lo, unsigned hi)
{
    int r = xlreaper__close_from_raw(lo, hi);

    if (r < 0) {
        errno = -r;
        return -1;
    }
    return 0;
}

/* The longest sleep between two looks for a stop. */
#define STOP_LOOK_MAX_MS 16

/* A waitid record as waitpid's status word. */
static int si_status_word(const siginfo_t *si)
{
    switch (si->si_code) {
    case CLD_EXITED: return (si->si_status & 0xff) << 8;
    case CLD_DUMPED: return si->si_status | 0x80;
    default: return si->si_status; /* CLD_KILLED */
    }
}

/*
 * A helper that exits (the killer, a count probe): wait for its exit
 * alone, then read its report.  Its report is at most 16 bytes in an
 * empty pipe, so it never blocks writing it, and once it has been reaped
 * the pipe holds all it wrote (nothing else has the write end: helpers
 * do not fork).  One wake-up, at its exit, where polling the pipe as
 * well woke the parent once for the report and again for the exit
 * (bench_parts: a few percent of an empty uid's reap).
 */
static int await_exit(xlreaper_ctx *ctx, pid_t pid, int pidfd, int rfd,
                      uint64_t deadline_us, xlreaper__child_report *rep,
                      bool *reported_r, int *status_r,
                      xlreaper__helper_end *end_r)
{
    unsigned slice_ms = 1;
    size_t got = 0;
    bool exited = false;
    int rc;

    for (;;) {
        uint64_t now = xlreaper__now_us();
        struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
        int timeout, pr;
        siginfo_t si;

        if (now >= deadline_us) {
            kill(pid, SIGKILL);
            *end_r = XLREAPER__HELPER_TIMEOUT;
            break;
        }
        timeout = (int)((deadline_us - now + 999) / 1000);
        if (timeout > (int)slice_ms)
            timeout = (int)slice_ms;
        pr = poll(&pfd, 1, timeout);
        if (pr < 0 && errno != EINTR) {
            LOGE(ERROR, "poll for child %ld", (long)pid);
            kill(pid, SIGKILL);
            xlreaper__wait_child(ctx, pid, status_r);
            return XLREAPER_ERROR_FAIL;
        }
        if (pr == 0 && slice_ms < STOP_LOOK_MAX_MS)
            slice_ms *= 2;
        /* A stop shows only here (a pidfd says nothing of it); an exit
         * is reaped by the same call. */
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)pid, &si,
                   WEXITED | WSTOPPED | WNOHANG | __WALL) < 0 ||
            si.si_pid != pid)
            continue;
        if (si.si_code == CLD_STOPPED || si.si_code == CLD_TRAPPED) {
            /* Only a task sharing the child's uid can have stopped it,
             * and would hang us if we let it. */
            LOG(DEBUG, "child %ld stopped by signal %d; killing it", (long)pid,
                si.si_status);
            kill(pid, SIGKILL);
            *end_r = XLREAPER__HELPER_STOPPED;
            break;
        }
        *status_r = si_status_word(&si);
        exited = true;
        break;
    }
    if (!exited) {
        /* After SIGKILL the wait is the kernel's, not the child's. */
        rc = xlreaper__wait_child(ctx, pid, status_r);
        if (rc)
            return rc;
    }
    /* Reaped: what it wrote is there, and then EOF. */
    while (got < sizeof(*rep)) {
        ssize_t r = read(rfd, (char *)rep + got, sizeof(*rep) - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got && got != sizeof(*rep) && *end_r == XLREAPER__HELPER_DONE) {
        LOG(ERROR, "a child's report was cut short (%zu bytes)", got);
        return XLREAPER_ERROR_FAIL;
    }
    *reported_r = got == sizeof(*rep);
    return 0;
}

int xlreaper__await_child(xlreaper_ctx *ctx, pid_t pid, int rfd,
                          uint64_t deadline_us, bool until_exit,
                          xlreaper__child_report *rep, bool *reported_r,
                          int *status_r, xlreaper__helper_end *end_r)
{
    struct pollfd pfd[2];
    bool eof = rfd < 0, exited = false;
    unsigned slice_ms = 1;
    size_t got = 0;
    int pidfd, rc;

    *reported_r = false;
    *end_r = XLREAPER__HELPER_DONE;
    *status_r = -1; /* not reaped */
    /* Our unreaped child: its pid cannot have been reused. */
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd >= 0 && until_exit && rfd >= 0) {
        rc = await_exit(ctx, pid, pidfd, rfd, deadline_us, rep, reported_r,
                        status_r, end_r);
        xlreaper__close_keep_errno(pidfd);
        return rc;
    }

    while (!(eof && (exited || !until_exit))) {
        uint64_t now = xlreaper__now_us();
        int n = 0, timeout, pr;
        siginfo_t si;

        if (now >= deadline_us) {
            kill(pid, SIGKILL);
            *end_r = XLREAPER__HELPER_TIMEOUT;
            break;
        }
        timeout = (int)((deadline_us - now + 999) / 1000);
        if (timeout > (int)slice_ms)
            timeout = (int)slice_ms;
        if (!eof)
            pfd[n++] = (struct pollfd){ .fd = rfd, .events = POLLIN };
        if (pidfd >= 0 && until_exit)
            pfd[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        pr = poll(pfd, (nfds_t)n, timeout);
        if (pr < 0 && errno != EINTR) {
            LOGE(ERROR, "poll for child %ld", (long)pid);
            kill(pid, SIGKILL);
            rc = XLREAPER_ERROR_FAIL;
            goto fail;
        }
        if (pr == 0 && slice_ms < STOP_LOOK_MAX_MS)
            slice_ms *= 2;
        if (!eof && pr > 0 && pfd[0].revents) {
            ssize_t r = read(rfd, (char *)rep + got, sizeof(*rep) - got);
            if (r > 0)
                got += (size_t)r;
            else if (r == 0 || errno != EINTR)
                eof = true;
            if (got == sizeof(*rep))
                eof = true; /* one record at most */
        }
        /* Once a child that execs is at EOF it is not ours to reap. */
        if (eof && !until_exit)
            break;
        /* A stop shows only here (a pidfd says nothing of it); a look
         * that reaps nothing, since a child that execs is the caller's
         * to reap once it runs. */
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)pid, &si,
                   WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) < 0 ||
            si.si_pid != pid)
            continue;
        if (si.si_code == CLD_STOPPED || si.si_code == CLD_TRAPPED) {
            /* Only a task sharing the child's uid can have stopped it,
             * and would hang us if we let it. */
            LOG(DEBUG, "child %ld stopped by signal %d; killing it", (long)pid,
                si.si_status);
            kill(pid, SIGKILL);
            *end_r = XLREAPER__HELPER_STOPPED;
            break;
        }
        /* Exited: the pipe is at EOF now, after what it wrote. */
        if (until_exit && !exited &&
            waitpid(pid, status_r, WNOHANG | __WALL) == pid)
            exited = true;
    }
    if (*end_r != XLREAPER__HELPER_DONE || (until_exit && !exited)) {
        /* After SIGKILL the wait is the kernel's, not the child's. */
        rc = xlreaper__wait_child(ctx, pid, status_r);
        if (rc)
            goto fail;
    }
    xlreaper__close_keep_errno(pidfd);
    if (got && got != sizeof(*rep) && *end_r == XLREAPER__HELPER_DONE) {
        LOG(ERROR, "a child's report was cut short (%zu bytes)", got);
        return XLREAPER_ERROR_FAIL;
    }
    *reported_r = got == sizeof(*rep);
    return 0;

fail:
    xlreaper__close_keep_errno(pidfd);
    return rc;
}

int xlreaper__wait_child(xlreaper_ctx *ctx, pid_t pid, int *status_r)
{
    for (;;) {
        pid_t r = waitpid(pid, status_r, __WALL | WUNTRACED);
        if (r == pid && WIFSTOPPED(*status_r)) {
            /* Only a task sharing the child's uid can stop it, and would
             * hang us if we let it: the child's answer is void.  It is our
             * unreaped child, so the pid cannot have been reused. */
            LOG(DEBUG, "child %ld stopped by signal %d; killing it", (long)pid,
                WSTOPSIG(*status_r));
            kill(pid, SIGKILL);
            continue;
        }
        if (r == pid)
            return 0;
        if (r < 0 && errno == EINTR)
            continue;
        LOGE(ERROR, "waitpid %ld", (long)pid);
        return XLREAPER_ERROR_FAIL;
    }
}

int xlreaper__run_helper(xlreaper_ctx *ctx, const char *what,
                         void (*fn)(int wfd, void *arg), void *arg,
                         uint64_t deadline_us, xlreaper__child_report *rep,
                         bool *reported_r, int *status_r,
                         xlreaper__helper_end *end_r)
{
    xlreaper__report_pipe p;
    xlreaper__helper_vm vm;
    pid_t pid;
    int rc;

    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        return rc;
    rc = xlreaper__helper_start(ctx, what, fn, arg, p.wfd, &vm, &pid);
    if (rc) {
        xlreaper__report_pipe_close(&p);
        return rc;
    }
    /* The child makes its own process group first thing; until then a
     * signal to ours could only kill it, which is a void answer. */
    close(p.wfd);
    p.wfd = -1;
    rc = xlreaper__await_child(ctx, pid, p.rfd, deadline_us, true, rep,
                               reported_r, status_r, end_r);
    /* Reaped on every path but a failed waitpid, which leaves a child
     * we cannot wait for: its stack stays rather than be freed under
     * it. */
    if (*status_r != -1 || !rc)
        xlreaper__helper_finish(&vm);
    xlreaper__report_pipe_close(&p);
    if (!rc && *end_r != XLREAPER__HELPER_DONE)
        LOG(DEBUG, "%s (pid %ld) %s: its answer is void", what, (long)pid,
            *end_r == XLREAPER__HELPER_STOPPED ? "was stopped"
                                               : "missed its deadline");
    return rc;
}

int xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s)
{
    return (int)syscall(SYS_setresuid, r, e, s);
}

int xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s)
{
    return (int)syscall(SYS_setresgid, r, e, s);
}

int xlreaper__sys_setgroups0(void)
{
    return (int)syscall(SYS_setgroups, 0, NULL);
}

int xlreaper__cap_effective(int cap)
{
    struct __user_cap_header_struct hdr = { .version =
                                                _LINUX_CAPABILITY_VERSION_3,
                                            .pid = 0 };
    struct __user_cap_data_struct data[2];

    if (cap < 0 || cap >= 64)
        return -1;
    if (syscall(SYS_capget, &hdr, data) < 0)
        return -1;
    return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int xlreaper__caps_none(bool permitted_too)
{
    int r = xlreaper__caps_none_raw(permitted_too);

    if (r < 0) {
        errno = -r;
        return -1;
    }
    return 0;
}
