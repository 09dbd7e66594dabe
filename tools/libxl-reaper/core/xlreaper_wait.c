/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_wait.c - the one bounded wait for a child: what it writes
 * to a pipe, then its exit, by a deadline.
 *
 * Every child the library and its programs wait for goes through here
 * (the helpers, the kernel census's probe, the spawn's child until its
 * execve, QEMU's -help, the audit's /proc reader, add_dm_restrict's
 * watcher's parent), as every exec-with-timeout of libxl goes through
 * libxl_aoutils.c; lib.mk checks that no other object calls waitpid,
 * wait4, waitid or wait.  Each caller names its child's kind
 * (xlreaper__wait_mode), and modes[] below says what each kind means
 * for the wait.  The rules it keeps:
 *  - no wait without a deadline: not for the output, and not for the
 *    exit after the output has ended (a child may close its end and
 *    live on);
 *  - a missed deadline, or a stop, is answered with SIGKILL and said
 *    in the verdict; only then is the wait the kernel's, without a
 *    deadline (xlreaper__wait_child), except for a child that reads a
 *    DM's files (the audit's reader), which a kernel bug or a FUSE
 *    server could hold in an uninterruptible sleep: that one is left
 *    unreaped at the deadline (_KILL);
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

/* When a child's pipe is read. */
typedef enum {
    /* Once it has exited: what it writes fits in an empty pipe, so it
     * never blocks writing it, and once it has been reaped the pipe
     * holds all it wrote (and then EOF: a helper does not fork).  One
     * wake-up, where polling the pipe as well woke us once for the
     * report and again for the exit (bench_parts: a few percent of an
     * empty uid's reap). */
    READ_AT_EXIT,
    /* At each look for a stop, and after its exit: it reports its
     * progress as it goes (the kernel census: a byte a uid) but writes
     * no more than a pipe holds, so it never blocks either.  Polling
     * the pipe woke us once a uid (strace of a census of the whole
     * range: a poll, a read and a waitid a uid, a third of all its
     * system calls). */
    READ_AT_LOOKS,
    /* As it comes: its output may not fit in a pipe. */
    READ_AS_IT_COMES,
    /* Until EOF, the end of the wait: a child that execs is the
     * caller's once it runs, and is not reaped. */
    READ_UNTIL_EOF,
    /* Never: no output is wanted. */
    READ_NONE,
} read_when;

static const struct {
    read_when read;
    bool stops_ok;   /* a stop is waited out, not the child's answer */
    bool full_kills; /* a full buf is too much: killed, _OVERFLOW */
    bool progress;   /* a read that brings bytes moves the deadline */
    bool killed;     /* SIGKILL first; left unreaped at the deadline */
} modes[] = {
    [XLREAPER__WAIT_REPORT] = { .read = READ_AT_EXIT },
    [XLREAPER__WAIT_PROGRESS] = { .read = READ_AT_LOOKS, .progress = true },
    [XLREAPER__WAIT_PROGRAM] = { .read = READ_AS_IT_COMES,
                                 .stops_ok = true,
                                 .full_kills = true },
    [XLREAPER__WAIT_EXEC] = { .read = READ_UNTIL_EOF },
    [XLREAPER__WAIT_KILL] = { .read = READ_NONE, .killed = true },
};

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
    if (modes[w->mode].progress)
        w->deadline_us = xlreaper__now_us() + w->progress_us;
    return w->len < w->size;
}

/* The tail of every wait that did not end by itself: SIGKILL to our
 * unreaped child (the pid is still its), and then the kernel's wait. */
static int kill_and_reap(xlreaper_ctx *ctx, xlreaper__wait *w)
{
    kill(w->pid, SIGKILL);
    return xlreaper__wait_child(ctx, w->pid, &w->status);
}

int xlreaper__wait_bounded(xlreaper_ctx *ctx, xlreaper__wait *w)
{
    bool known = w->mode > 0 && w->mode < sizeof(modes) / sizeof(modes[0]);
    read_when when = known ? modes[w->mode].read : READ_NONE;
    bool reading = when != READ_NONE && w->rfd >= 0 && w->size > 0;
    bool exited = false, until_eof = when == READ_UNTIL_EOF;
    int looks = WEXITED | WNOHANG | __WALL;
    unsigned slice_ms = 1;
    int pidfd = -1, rc;

    w->len = 0;
    w->status = -1; /* not reaped */
    w->end = XLREAPER__HELPER_DONE;
    if (!known) {
        LOG(ERROR, "child %ld: no such wait mode %d", (long)w->pid, w->mode);
        rc = XLREAPER_ERROR_INVAL;
        goto fail;
    }
    if ((when == READ_AT_EXIT || when == READ_AT_LOOKS) && w->size > PIPE_BUF)
        when = READ_AS_IT_COMES; /* it could block writing: no longer ours */
    if (!modes[w->mode].stops_ok)
        looks |= WSTOPPED;
    if (modes[w->mode].killed)
        kill(w->pid, SIGKILL); /* our unreaped child: the pid is its */
    /* A look that reaps nothing: the child is the caller's to reap. */
    if (until_eof)
        looks |= WNOWAIT;
    else /* our unreaped child: its pid cannot have been reused */
        pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
    if (pidfd < 0 && (when == READ_AT_EXIT || when == READ_AT_LOOKS))
        when = READ_AS_IT_COMES; /* no exit to wake us but the pipe's */

    for (;;) {
        bool pipe = reading && (exited || when == READ_AS_IT_COMES ||
                                when == READ_UNTIL_EOF);
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
            (when == READ_AT_LOOKS && reading && !exited &&
             ready_now(w->rfd))) {
            reading = read_some(w);
            if (!reading && w->len == w->size && modes[w->mode].full_kills) {
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
        /* Killed already, and still not ended: an uninterruptible
         * sleep, which no wait of ours can shorten.  Left unreaped
         * (PDEATHSIG ends it with us). */
        if (modes[w->mode].killed) {
            LOG(DEBUG, "child %ld, killed, has not ended: left", (long)w->pid);
            rc = 0;
            goto out;
        }
        rc = kill_and_reap(ctx, w);
        if (rc)
            goto out;
        /* Reaped, and a helper does not fork: the pipe ends at EOF. */
        while (when == READ_AT_LOOKS && reading)
            reading = read_some(w);
    }
    rc = 0;
    goto out;

fail:
    if (!exited && !(known && modes[w->mode].killed))
        kill_and_reap(ctx, w);
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
