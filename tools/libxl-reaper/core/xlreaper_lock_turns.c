/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_lock_turns.c - who holds the reaper lock and who waits for
 * it, from /proc/locks, and the turn a holder owes its waiters.
 *
 * flock wakes its waiters on a release but does not hand the lock over:
 * whoever tries first after the release has it.  A holder that takes it
 * again at once (the kernel census, a run of uids a hold; a reap's next
 * round; the daemon's reaps one after another) is still running, and
 * at nice -20 (xlreaper_sched.c, xl_reaperd.c) a woken waiter at the
 * default priority does not preempt it: the waiter runs only once the
 * holder sleeps, and the holder sleeps only inside a hold, waiting for
 * its probe or killer.  So a waiter could wait for a whole census of
 * the range, seconds on a small dom0 under emulation, though the lock
 * was let go over a hundred times (docs/facts.md F17; it failed a
 * stock-path e2e run).
 *
 * So a holder looks, as it lets go, for waiters: libxl's uid reaper
 * and anything else blocked in flock (a "->" line of /proc/locks), and
 * ours, which wait without blocking (xlreaper_lock.c) and say so with
 * an OFD read lock on byte 0 of the file while they wait (no DM uid is
 * 0, so no reap's mark is there).  If it saw one, its next take of the
 * lock first sleeps until someone else holds the lock or LOCK_TURN_MS
 * have passed since the release, whichever is first, and a turn that
 * nobody took is given once more at the next release.  A waiter that
 * never comes (it gave up, or is stopped) so costs two LOCK_TURN_MS.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "xlreaper_internal.h"

/* How long a holder that saw waiters lets them try first: a waiter
 * woken by the release must get a CPU meanwhile, on a loaded host. */
#define LOCK_TURN_MS 50
/* How often it looks meanwhile. */
#define LOCK_TURN_LOOK_US 500

/* One line of /proc/locks about the file fd has open:
 * "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF", blocked requests
 * with "->" after the number, the device in hex. */
typedef struct {
    bool blocked;
    char cls[16], rw[16];
    long pid; /* -1 for OFD locks */
    long long start;
} lock_line;

static bool parse_line(const char *line, const struct stat *st, lock_line *l)
{
    const char *p = strchr(line, ':');
    unsigned maj, min;
    unsigned long long ino;

    if (!p)
        return false;
    p += strspn(p + 1, " ") + 1;
    l->blocked = strncmp(p, "->", 2) == 0;
    if (l->blocked)
        p += 2;
    return sscanf(p, "%15s %*s %15s %ld %x:%x:%llu %lld", l->cls, l->rw,
                  &l->pid, &maj, &min, &ino, &l->start) == 7 &&
           ino == (unsigned long long)st->st_ino && maj == major(st->st_dev) &&
           min == minor(st->st_dev);
}

/* A waiter of ours: its OFD read lock on byte 0. */
static bool our_waiter(const lock_line *l)
{
    return !l->blocked && strcmp(l->cls, "OFDLCK") == 0 &&
           strcmp(l->rw, "READ") == 0 && l->start == 0;
}

void xlreaper__lock_look(int fd, xlreaper__lock_seen *seen)
{
    char line[256];
    struct stat st;
    lock_line l;
    FILE *f;

    memset(seen, 0, sizeof(*seen));
    if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re")))
        return;
    while (fgets(line, sizeof(line), f)) {
        bool flock_line;

        if (!parse_line(line, &st, &l))
            continue;
        flock_line = strcmp(l.cls, "FLOCK") == 0;
        if (flock_line && !l.blocked) {
            seen->holders++;
            seen->holder_pid = l.pid;
        } else if (flock_line || our_waiter(&l)) {
            seen->waiters++;
        }
    }
    fclose(f);
}

/* Byte 0 of the lock file, for an OFD lock of type. */
static int waiting_byte(int fd, short type)
{
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_len = 1 };

    return fcntl(fd, F_OFD_SETLK, &fl);
}

void xlreaper__lock_waiting(int fd, bool waiting)
{
    /* Best effort: without it a holder only fails to see this waiter,
     * which then waits as it always could. */
    waiting_byte(fd, waiting ? F_RDLCK : F_UNLCK);
}

void xlreaper__lock_turn_note(xlreaper_ctx *ctx, int fd)
{
    xlreaper__lock_seen seen;

    xlreaper__lock_look(fd, &seen);
    /* This release's turn, and one more if nobody takes it: a waiter
     * woken by this release that has not run by the next one is no
     * longer listed then. */
    if (seen.waiters)
        ctx->turns_owed = 2;
    ctx->turn_until_us = xlreaper__now_us() + LOCK_TURN_MS * 1000u;
}

void xlreaper__lock_turn_give(xlreaper_ctx *ctx, int fd, uint64_t deadline)
{
    uint64_t until =
        ctx->turn_until_us < deadline ? ctx->turn_until_us : deadline;

    ctx->turns_owed--;
    while (xlreaper__now_us() < until) {
        xlreaper__lock_seen seen;

        xlreaper__sleep_us(LOCK_TURN_LOOK_US);
        xlreaper__lock_look(fd, &seen);
        if (seen.holders) {
            /* A waiter has it: wait for it as for any holder. */
            ctx->turns_owed = 0;
            return;
        }
    }
}
