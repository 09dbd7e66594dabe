/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_wait.c - the one bounded wait for a child: what it writes
 * to a pipe, then its exit, by a deadline.
 *
 * Every child the library starts and waits for goes through here (the
 * helpers, the spawn's child until its execve, the kernel census's
 * probe, QEMU's -help), as every exec-with-timeout of libxl goes
 * through libxl_aoutils.c.  The rules it keeps:
 *  - no wait without a deadline: not for the output, and not for the
 *    exit after the output has ended (a child may close its end and
 *    live on);
 *  - a missed deadline, or a stop, is answered with SIGKILL and said
 *    in the verdict; only then is the wait the kernel's, without a
 *    deadline (xlreaper__wait_child);
 *  - the pid is signalled only while the child is unreaped, so it
 *    cannot have been reused.
 * A helper that takes a DM uid can be stopped by any task of that uid,
 * which would hold us for as long as it liked: a pidfd says nothing of
 * a stop, so the wait looks for one between polls, 1 ms apart and then
 * twice as far each time, up to 16 ms.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"

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

/* Something to read on fd now, without waiting. */
static bool ready_now(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN };

    return poll(&pfd, 1, 0) > 0 && pfd.revents;
}

/* One read into w->buf.  False once nothing more is to be read: EOF,
 * an error, or a full buffer. */
static bool read_some(xlreaper__wait *w)
{
    ssize_t r = read(w->rfd, w->buf + w->len, w->size - w->len);

    if (r < 0 && errno == EINTR)
        return true;
    if (r <= 0)
        return false;
    w->len += (size_t)r;
    if (w->progress_us)
        w->deadline_us = xlreaper__now_us() + w->progress_us;
    return w->len < w->size;
}

int xlreaper__wait_bounded(xlreaper_ctx *ctx, xlreaper__wait *w)
{
    bool until_eof = w->flags & XLREAPER__WAIT_UNTIL_EOF;
    bool reading = w->rfd >= 0 && w->size > 0, exited = false;
    /* What it writes fits in an empty pipe: it never blocks writing it,
     * and once it has been reaped the pipe holds all it wrote (and then
     * EOF: a helper does not fork).  So it is read after the exit: one
     * wake-up, where polling the pipe as well woke us once for the
     * report and again for the exit (bench_parts: a few percent of an
     * empty uid's reap). */
    bool after_exit = !until_eof && !w->progress_us && w->size <= PIPE_BUF;
    /* One that reports its progress as it goes (the kernel census: a
     * byte a uid) but writes no more than that never blocks either: its
     * pipe is read at each look for a stop, not at each byte, which woke
     * us once a uid (strace of a census of the whole range: a poll, a
     * read and a waitid a uid, a third of all its system calls).  What
     * it wrote before a stop, a kill or its exit is read after it. */
    bool lazy = !until_eof && w->progress_us && w->size <= PIPE_BUF;
    int looks = WEXITED | WNOHANG | __WALL;
    unsigned slice_ms = 1;
    int pidfd = -1, rc;

    w->len = 0;
    w->status = -1; /* not reaped */
    w->end = XLREAPER__HELPER_DONE;
    if (!(w->flags & XLREAPER__WAIT_STOPS_OK))
        looks |= WSTOPPED;
    /* A child that execs is the caller's to reap once it runs: a look
     * that reaps nothing. */
    if (until_eof)
        looks |= WNOWAIT;
    else /* our unreaped child: its pid cannot have been reused */
        pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
    if (pidfd < 0)
        after_exit = lazy = false;

    for (;;) {
        bool pipe = reading && (exited || !(after_exit || lazy));
        struct pollfd pfd[2];
        nfds_t n = 0;
        uint64_t now;
        int timeout, pr;
        siginfo_t si;

        if (until_eof ? !reading : exited && !reading)
            break;
        now = xlreaper__now_us();
        if (now >= w->deadline_us) {
            w->end = XLREAPER__HELPER_TIMEOUT;
            break;
        }
        timeout = (int)((w->deadline_us - now + 999) / 1000);
        if (!exited && timeout > (int)slice_ms)
            timeout = (int)slice_ms;
        if (pipe)
            pfd[n++] = (struct pollfd){ .fd = w->rfd, .events = POLLIN };
        if (pidfd >= 0 && !exited)
            pfd[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        pr = poll(pfd, n, timeout);
        if (pr < 0 && errno != EINTR) {
            LOGE(ERROR, "poll for child %ld", (long)w->pid);
            rc = XLREAPER_ERROR_FAIL;
            goto fail;
        }
        if (pr == 0 && slice_ms < STOP_LOOK_MAX_MS)
            slice_ms *= 2;
        if ((pipe && pr > 0 && pfd[0].revents) ||
            (lazy && reading && !exited && ready_now(w->rfd))) {
            reading = read_some(w);
            if (!reading && w->len == w->size &&
                (w->flags & XLREAPER__WAIT_KILL_IF_FULL)) {
                w->end = XLREAPER__HELPER_OVERFLOW;
                break;
            }
        }
        if (exited || (until_eof && !reading))
            continue;
        /* A stop shows only here (a pidfd says nothing of it); an exit
         * is reaped by the same call, unless the child execs. */
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)w->pid, &si, looks) < 0 || si.si_pid != w->pid)
            continue;
        if (si.si_code == CLD_STOPPED || si.si_code == CLD_TRAPPED) {
            /* Only a task sharing the child's uid can have stopped it,
             * and would hang us if we let it. */
            LOG(DEBUG, "child %ld stopped by signal %d; killing it",
                (long)w->pid, si.si_status);
            w->end = XLREAPER__HELPER_STOPPED;
            break;
        }
        /* Exited: the pipe is at EOF after what it wrote. */
        if (!until_eof) {
            w->status = si_status_word(&si);
            exited = true;
        }
    }
    if (w->end != XLREAPER__HELPER_DONE && !exited) {
        kill(w->pid, SIGKILL); /* unreaped: the pid is still its */
        /* After SIGKILL the wait is the kernel's, not the child's. */
        rc = xlreaper__wait_child(ctx, w->pid, &w->status);
        if (rc)
            goto out;
        /* Reaped, and a helper does not fork: the pipe ends at EOF. */
        while (lazy && reading)
            reading = read_some(w);
    }
    rc = 0;
    goto out;

fail:
    if (!exited) {
        kill(w->pid, SIGKILL);
        xlreaper__wait_child(ctx, w->pid, &w->status);
    }
out:
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
