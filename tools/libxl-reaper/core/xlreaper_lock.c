/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_lock.c - the global reaper lock.
 *
 * Why it exists: every killer runs with the same real uid, the pet.  Two
 * killers at once could signal each other, since each one's real uid
 * matches the other's, and kill(-1) would take the other down half way.
 * Spawn takes it too, so that no DM is born into a uid while that uid
 * is being killed.  The file is the one upstream libxl's own uid reaper
 * flocks, so libxl and this project never kill at the same time either.
 *
 * Rounds, not reaps.  A reap holds the lock for one round at a time:
 * its kill(-1) and the count after it, microseconds to a few
 * milliseconds, and not while it waits for dying or stuck tasks between
 * rounds; the next round takes it again.  A uid whose tasks never die
 * (one stuck in D state on a FUSE request or a dead NFS server) so
 * costs the host one round's hold now and then, where a reap that held
 * the lock for its whole reap_timeout_ms, over a dozen such uids, held
 * it all the time and no DM could be started or reaped.  libxl's rule
 * still holds:
 *  - No two killers with the pet uid at once: every killer, from its
 *    start to its reaping by us, runs inside one hold, whatever a reap
 *    does between its rounds.
 *  - No DM born into a uid being killed.  A spawn checks that the uid
 *    is empty and starts the DM (the execve of exec mode; a runas QEMU
 *    recorded for the reap) inside one hold.  A reap marks its uid
 *    inside its first hold, before its first kill, and keeps the mark
 *    until its verdict: an OFD lock on the byte at offset uid of this
 *    file (xlreaper__reaping_mark), which dies with the reap if the
 *    reap is killed.  A spawn, inside its hold and before its check,
 *    waits while the mark is held (xlreaper__lock_acquire_unmarked).
 *    The spawn's hold comes before the reap's first hold, and the DM is
 *    born before the reap begins: the reap kills it as any DM of the
 *    uid; or after it, and before the verdict: the spawn sees the mark
 *    and waits, at most lock_timeout_ms ("busy"); or after the verdict:
 *    a new DM in a reaped uid.  Without the mark a round could leave
 *    dying tasks, a spawn between rounds find them gone and start its
 *    DM, and the next round kill it.
 *  - Upstream libxl's own reaper flocks this file for its whole kill
 *    and knows nothing of the marks (OFD locks and flock are separate
 *    locks on Linux): it and our killers still never overlap.
 * A caller that holds the lock across a reap (to check, under it, that
 * the domid was not reused) hands it over (XLREAPER_REAP_LOCK_ROUNDS):
 * its check and the mark fall in the same hold.
 *
 * Anyone who can open the file can flock it, and so stall every reap:
 * it is kept root-only (0600, in a 0700 directory when we create one).
 *
 * Waiting.  The wait is bounded without signals (a library must not
 * touch the caller's alarm), so a waiter cannot block in flock.  It
 * used to poll, every 0.5-2 ms: with 64 reaps at once, 63 waiters at
 * the reap's priority woke 30,000 times a second and took most of a
 * CPU from the one holder they waited for (bench_lock: 8.9 s for 64
 * reaps of fork racers, against 5.1 s one after another).  Now a
 * waiter sleeps in poll() on an inotify watch of the lock file: every
 * holder, ours or libxl's, opens it for writing and releases by
 * closing it, which raises IN_CLOSE_WRITE, so waiters wake when the
 * lock changes hands and not otherwise.  A release that does not close
 * (flock(LOCK_UN)) or an event lost to a full queue only costs the
 * poll's timeout, LOCK_LOOK_MAX_MS: the wait stays correct and bounded
 * whatever other lockers do.  The watch is set before the next try, so
 * a release between the failed try and the watch is not missed.
 *
 * Fairness.  flock hands nothing over: a release wakes the tasks
 * blocked on the lock, and the lock goes to whichever tries first.  A
 * holder that lets go and takes the lock again while it still runs
 * (the kernel census, a run of uids a hold; a reap's next round; the
 * daemon's reaps one after another) so keeps it from every waiter that
 * has not run in between, and a woken waiter runs in between only if
 * the scheduler prefers it to a holder that is still running: at nice
 * -20 (a reap's, xlreaper_sched.c) the holder is preferred to a waiter
 * at the default priority on Debian 12's kernel, and a waiter waited
 * through a whole census of the range (docs/facts.md F17).  So a taker
 * that let go of the lock less than LOCK_GAP_US ago sleeps out the rest
 * of that gap first (lock_pause): a sleeping task leaves its CPU to the
 * runnable ones, and a waiter woken by the release is one of them,
 * whatever its priority.  This serves every waiter without seeing it:
 * libxl's reaper blocked in flock(LOCK_EX), which nothing but
 * /proc/locks shows, and ours.  A waiter of ours also says that it
 * waits, with an OFD read lock on byte 0 of the lock file while it
 * waits (no DM uid is 0, so no reap's mark is there); a re-taker that
 * sees one (F_OFD_GETLK, which reads the locks of this one inode, all
 * of them ours: a DM cannot open the file) sleeps on, up to
 * LOCK_TURN_MS after its release, until the mark is gone, that is
 * until the waiter had the lock.  A mark that stays that long (a waiter
 * stopped, or starved by more than the turn) is not waited for again
 * for LOCK_TURN_QUIET_MS.  A ctx's first take (a kill, or `xl-reaper
 * kill` in a process of its own) pays nothing, and neither does a
 * spawn's: it comes once per domain start, so it cannot keep the lock
 * from a waiter by itself, and a toolstack that starts domains one
 * after another in one ctx would pay the gap in every start.
 *
 * Nothing here reads /proc/locks: it lists every file lock of the host,
 * a read costs O(N^2) in their number, and any DM can add tens of
 * thousands in a fraction of a second (docs/facts.md F18, F19).  Who
 * holds the lock, for the message of a lock timeout, is asked of the
 * lock file itself, after the waiter let go of everything: a holder of
 * ours holds an OFD lock on the byte at HOLDER_BYTE + its pid for as
 * long as it holds the flock (on the same open file, so both end
 * together); a holder that is not ours (libxl's reaper) holds none,
 * and is named as that.
 */
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <sys/inotify.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "xlreaper_internal.h"

struct xlreaper_lock {
    int fd;
    uint64_t wait_us;
    xlreaper_ctx *ctx; /* whose ctx->held this is */
};

static int make_parent_dir(xlreaper_ctx *ctx, const char *path)
{
    char *copy = strdup(path);
    int rc = 0;

    if (!copy)
        return XLREAPER_ERROR_NOMEM;
    if (mkdir(dirname(copy), 0700) < 0 && errno != EEXIST) {
        LOGE(ERROR, "creating the lock directory %s", copy);
        rc = XLREAPER_ERROR_FAIL;
    }
    free(copy);
    return rc;
}

/*
 * Opens the lock file, making it 0600 if absent, and refuses one that
 * is not a root-owned regular file of mode 0600 with one link, in a
 * place nobody else may write (xlreaper_path_trust): anyone who could
 * open it could hold it, and a process that opened it while it was
 * readable keeps its descriptor whatever its mode becomes.  Upstream
 * libxl makes it 0644 when it makes it first; the admin removes it
 * (nothing holds it between reaps) and the next lock makes it 0600.
 */
static int open_lock_file(xlreaper_ctx *ctx, const char *path, int *fd_r)
{
    struct stat st, trusted;
    bool existed;
    int fd, rc;

    rc = xlreaper__path_trust_log(ctx, "reaper lock", path,
                                  XLREAPER_TRUST_ABSENT_OK, &trusted);
    if (rc < 0)
        return XLREAPER_ERROR_FAIL;
    existed = rc == 0; /* 1: absent, to be made */
    fd =
        open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0 && errno == ENOENT) {
        rc = make_parent_dir(ctx, path);
        if (rc)
            return rc;
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                  0600);
    }
    /* Never 0-2: a spawn child keeps those for the DM. */
    if (fd >= 0)
        fd = xlreaper__fd_above_stdio(fd);
    if (fd < 0) {
        LOGE(ERROR, "opening the reaper lock %s", path);
        return XLREAPER_ERROR_FAIL;
    }
    if (fstat(fd, &st) < 0) {
        LOGE(ERROR, "fstat %s", path);
        rc = XLREAPER_ERROR_FAIL;
        goto fail;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_nlink != 1) {
        LOG(ERROR,
            "reaper lock %s is not a root-owned regular file with "
            "one link; refusing it",
            path);
        rc = XLREAPER_ERROR_FAIL;
        goto fail;
    }
    if ((st.st_mode & 07777) != 0600) {
        LOG(ERROR,
            "reaper lock %s is mode %04o, not 0600: whoever opened it "
            "may hold it; refusing it (remove it: the next lock makes it "
            "0600)",
            path, (unsigned)(st.st_mode & 07777));
        rc = XLREAPER_ERROR_FAIL;
        goto fail;
    }
    /* An existing file was judged before the open: the same one. */
    if (existed &&
        (st.st_dev != trusted.st_dev || st.st_ino != trusted.st_ino)) {
        LOG(ERROR,
            "reaper lock %s changed while it was checked; "
            "refusing it",
            path);
        rc = XLREAPER_ERROR_FAIL;
        goto fail;
    }
    *fd_r = fd;
    return 0;

fail:
    close(fd);
    return rc;
}

/* Does path still name the file fd has open?  A lock taken on a file
 * that was removed or replaced meanwhile excludes nobody who opens the
 * path now. */
static bool still_named(int fd, const char *path)
{
    struct stat a, b;

    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The gap a taker leaves between its release and its next take, and
 * how long after its release it lets a waiter of ours that it sees go
 * first, looking every LOCK_TURN_LOOK_US.  A waiter's mark that
 * outlives a turn is not waited for again for LOCK_TURN_QUIET_MS. */
#define LOCK_GAP_US 1000
#define LOCK_TURN_MS 50
#define LOCK_TURN_LOOK_US 500
#define LOCK_TURN_QUIET_MS 1000

/* Byte 0: our waiters' marks.  From HOLDER_BYTE on, a byte per pid: a
 * holder of ours.  Both out of the way of the reaps' marks, a byte at
 * offset uid (no DM uid is 0, and uids end at 2^32). */
#define WAITER_BYTE ((off_t)0)
#define HOLDER_BYTE ((off_t)1 << 40)
#define HOLDER_SPAN ((off_t)1 << 32)
_Static_assert(sizeof(off_t) >= 8, "the holders' bytes need a 64-bit off_t");

static void lock_range(struct flock *fl, short type, off_t start, off_t len)
{
    memset(fl, 0, sizeof(*fl));
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = start;
    fl->l_len = len;
}

/* Best effort, both: without the mark a re-taker only fails to see
 * this waiter, which still has the gap; without the holder's byte a
 * timeout only cannot name the holder. */
static void mark_waiting(int fd, bool waiting)
{
    struct flock fl;

    lock_range(&fl, waiting ? F_RDLCK : F_UNLCK, WAITER_BYTE, 1);
    fcntl(fd, F_OFD_SETLK, &fl);
}

static void mark_holder(int fd)
{
    struct flock fl;

    lock_range(&fl, F_WRLCK, HOLDER_BYTE + getpid(), 1);
    fcntl(fd, F_OFD_SETLK, &fl);
}

bool xlreaper__lock_waiter_seen(int fd)
{
    struct flock fl;

    lock_range(&fl, F_WRLCK, WAITER_BYTE, 1);
    return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

long xlreaper__lock_holder(int fd)
{
    struct flock fl;

    lock_range(&fl, F_WRLCK, HOLDER_BYTE, HOLDER_SPAN);
    if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
        return -1;
    return fl.l_type != F_UNLCK && fl.l_start >= HOLDER_BYTE
               ? (long)(fl.l_start - HOLDER_BYTE)
               : 0;
}

/* Before a take: the rest of the gap since this ctx's last release,
 * then, while a waiter of ours is seen, its turn; never past
 * deadline.  See the top of this file. */
static void lock_pause(xlreaper_ctx *ctx, int fd, uint64_t deadline)
{
    uint64_t now = xlreaper__now_us();
    uint64_t gap_end = ctx->lock_released_us + LOCK_GAP_US;
    uint64_t turn_end = ctx->lock_released_us + LOCK_TURN_MS * 1000u;

    if (!ctx->lock_released_us || now >= turn_end)
        return;
    if (gap_end > deadline)
        gap_end = deadline;
    if (turn_end > deadline)
        turn_end = deadline;
    if (now < gap_end)
        xlreaper__sleep_us(gap_end - now);
    if (now < ctx->lock_turn_quiet_us)
        return;
    while (xlreaper__lock_waiter_seen(fd)) {
        now = xlreaper__now_us();
        if (now >= turn_end) {
            /* Not taken in a whole turn: stopped, or gone. */
            ctx->lock_turn_quiet_us = now + LOCK_TURN_QUIET_MS * 1000u;
            return;
        }
        xlreaper__sleep_us(turn_end - now < LOCK_TURN_LOOK_US
                               ? turn_end - now
                               : LOCK_TURN_LOOK_US);
    }
}

/* As a hold on fd ends. */
static void lock_let_go(xlreaper_ctx *ctx, int fd)
{
    xlreaper__close_keep_errno(fd); /* drops the flock and holder byte */
    ctx->lock_released_us = xlreaper__now_us();
}

/*
 * Who holds the lock, for a timeout's message, asked once fd holds
 * nothing (its waiting mark dropped): into buf, " (held by pid N, a
 * reaper of ours)" from the holder's byte, or, when no holder of ours
 * is there, that it is libxl's reaper or another flock of the file.
 */
static void describe_holder(int fd, char *buf, size_t n)
{
    long pid = xlreaper__lock_holder(fd);

    if (pid > 0)
        snprintf(buf, n, " (held by pid %ld, a reaper of ours)", pid);
    else if (pid == 0)
        snprintf(buf, n,
                 " (held, not by a reaper of ours: libxl's, or another "
                 "flock of the file)");
    else
        snprintf(buf, n, " (its holder is unknown)");
}

/* The longest sleep between two tries, woken by a release or not. */
#define LOCK_LOOK_MAX_MS 20

/* Sleeps until a release is seen (ino >= 0) or a pause has passed,
 * never past left_us.  Without a watch the pause grows to 2 ms, as the
 * polling wait always did. */
static void wait_release(int ino, uint64_t left_us, uint64_t *pause_us)
{
    if (ino >= 0) {
        struct pollfd pfd = { .fd = ino, .events = POLLIN };
        char buf[4096]
            __attribute__((aligned(__alignof__(struct inotify_event))));
        int ms = left_us / 1000 + 1 < LOCK_LOOK_MAX_MS
                     ? (int)(left_us / 1000 + 1)
                     : LOCK_LOOK_MAX_MS;

        if (poll(&pfd, 1, ms) > 0)
            while (read(ino, buf, sizeof(buf)) > 0)
                ; /* only that something was released matters */
        return;
    }
    xlreaper__sleep_us(*pause_us < left_us ? *pause_us : left_us);
    if (*pause_us < 2000)
        *pause_us *= 2;
}

/* flock on a fresh descriptor of the lock file, waiting until
 * deadline (xlreaper__now_us's clock), after lock_pause if pause.  0
 * with *fd_r, _LOCK_TIMEOUT (logged unless quiet) or _FAIL. */
static int lock_take(xlreaper_ctx *ctx, uint64_t deadline, bool quiet,
                     bool pause, int *fd_r)
{
    const xlreaper_config *cfg = ctx->cfg;
    uint64_t pause_us = 500;
    bool ino_failed = false;
    int fd = -1, ino = -1, rc;

again:
    rc = open_lock_file(ctx, cfg->lock_file, &fd);
    if (rc)
        goto fail;
    if (pause)
        lock_pause(ctx, fd, deadline);

    /* Bounded without signals: see the top of this file. */
    for (;;) {
        uint64_t now;

        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (still_named(fd, cfg->lock_file)) {
                mark_holder(fd);
                break;
            }
            /* Removed or replaced while we waited: the lock is the
             * file the path names now. */
            LOG(NOTICE,
                "reaper lock %s was replaced while we waited; "
                "taking it again",
                cfg->lock_file);
            close(fd);
            fd = -1;
            if (ino >= 0)
                close(ino);
            ino = -1;
            ino_failed = false;
            if (xlreaper__now_us() >= deadline) {
                rc = XLREAPER_ERROR_LOCK_TIMEOUT;
                if (!quiet)
                    LOG(ERROR,
                        "timed out after %u ms waiting for the "
                        "reaper lock %s",
                        cfg->lock_timeout_ms, cfg->lock_file);
                goto fail;
            }
            goto again;
        }
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            LOGE(ERROR, "flock %s", cfg->lock_file);
            rc = XLREAPER_ERROR_FAIL;
            goto fail;
        }
        now = xlreaper__now_us();
        if (now >= deadline) {
            if (!quiet) {
                char holder[160];

                mark_waiting(fd, false);
                describe_holder(fd, holder, sizeof(holder));
                LOG(ERROR,
                    "timed out after %u ms waiting for the reaper "
                    "lock %s%s",
                    cfg->lock_timeout_ms, cfg->lock_file, holder);
            }
            rc = XLREAPER_ERROR_LOCK_TIMEOUT;
            goto fail;
        }
        if (ino < 0 && !ino_failed) {
            /* Contended: from now on, woken by releases, and seen by a
             * re-taker, which then lets us try first.  Then try once
             * more before the first sleep. */
            mark_waiting(fd, true);
            ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
            if (ino >= 0 &&
                inotify_add_watch(ino, cfg->lock_file, IN_CLOSE_WRITE) < 0) {
                close(ino);
                ino = -1;
            }
            ino_failed = ino < 0; /* then by the clock alone */
            if (!ino_failed)
                continue;
        }
        wait_release(ino, deadline - now, &pause_us);
    }
    /* Said to be waiting exactly when the contended branch ran. */
    if (ino >= 0 || ino_failed)
        mark_waiting(fd, false);
    if (ino >= 0)
        close(ino);
    *fd_r = fd;
    return 0;

fail:
    if (ino >= 0)
        close(ino);
    if (fd >= 0)
        close(fd);
    return rc;
}

static int lock_acquire(xlreaper_ctx *ctx, bool pause, xlreaper_lock **lock_r)
{
    const xlreaper_config *cfg = ctx->cfg;
    xlreaper_lock *lock;
    uint64_t start;
    int fd = -1, rc;

    if (!cfg)
        return XLREAPER_ERROR_INVAL;
    start = xlreaper__now_us();
    rc = lock_take(ctx, start + (uint64_t)cfg->lock_timeout_ms * 1000u, false,
                   pause, &fd);
    if (rc)
        return rc;

    lock = malloc(sizeof(*lock));
    if (!lock) {
        close(fd);
        return XLREAPER_ERROR_NOMEM;
    }
    lock->fd = fd;
    lock->wait_us = xlreaper__now_us() - start;
    /* So that what enters a DM uid under this ctx knows the lock is
     * had: a second flock of ours would wait for ourselves. */
    lock->ctx = ctx;
    if (!ctx->held)
        ctx->held = lock;
    *lock_r = lock;
    return 0;
}

int xlreaper_lock_acquire(xlreaper_ctx *ctx, xlreaper_lock **lock_r)
{
    return lock_acquire(ctx, true, lock_r);
}

void xlreaper__lock_drop(xlreaper_lock *lock)
{
    if (lock->ctx->held == lock)
        lock->ctx->held = NULL;
    lock_let_go(lock->ctx, lock->fd);
    lock->fd = -1;
}

int xlreaper__lock_retake(xlreaper_lock *lock, uint64_t deadline, bool quiet)
{
    xlreaper_ctx *ctx = lock->ctx;
    int rc;

    if (lock->fd >= 0)
        return 0;
    rc = lock_take(ctx, deadline, quiet, true, &lock->fd);
    if (rc) {
        lock->fd = -1;
        return rc;
    }
    if (!ctx->held)
        ctx->held = lock;
    return 0;
}

void xlreaper_lock_release(xlreaper_lock *lock)
{
    if (!lock)
        return;
    if (lock->ctx->held == lock)
        lock->ctx->held = NULL;
    if (lock->fd >= 0)
        lock_let_go(lock->ctx, lock->fd);
    free(lock);
}

int xlreaper__lock_fd(const xlreaper_lock *lock)
{
    return lock->fd;
}

uint64_t xlreaper_lock_wait_us(const xlreaper_lock *lock)
{
    return lock ? lock->wait_us : 0;
}

/* ---------- "this uid is being reaped" ---------- */

/* A byte of the lock file per uid, at offset uid, for OFD locks: those
 * and flock are separate locks on Linux, so libxl's flock of the file
 * neither sees nor disturbs them, and they need no file per uid. */
static void uid_byte(struct flock *fl, short type, uid_t uid)
{
    lock_range(fl, type, (off_t)uid, 1);
}

int xlreaper__reaping_mark(xlreaper_ctx *ctx, uid_t uid, int *fd_r)
{
    struct flock fl;
    int fd = -1, rc;

    rc = open_lock_file(ctx, ctx->cfg->lock_file, &fd);
    if (rc)
        return rc;
    /* Shared: two reaps of one uid may overlap (their rounds take
     * turns under the lock); only a spawn asks whether any holds it. */
    uid_byte(&fl, F_RDLCK, uid);
    if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
        LOGE(ERROR, "marking uid %lu as being reaped (%s)", (unsigned long)uid,
             ctx->cfg->lock_file);
        close(fd);
        return XLREAPER_ERROR_FAIL;
    }
    *fd_r = fd;
    return 0;
}

void xlreaper__reaping_unmark(int fd)
{
    xlreaper__close_keep_errno(fd); /* drops the OFD lock */
}

int xlreaper__reaping_marked(xlreaper_ctx *ctx, const xlreaper_lock *lock,
                             uid_t uid, bool *marked_r)
{
    struct flock fl;

    /* The lock's own descriptor holds no OFD lock: any held is a
     * reap's. */
    uid_byte(&fl, F_WRLCK, uid);
    if (fcntl(lock->fd, F_OFD_GETLK, &fl) < 0) {
        LOGE(ERROR, "asking whether uid %lu is being reaped",
             (unsigned long)uid);
        return XLREAPER_ERROR_FAIL;
    }
    *marked_r = fl.l_type != F_UNLCK;
    return 0;
}

int xlreaper__lock_acquire_unmarked(xlreaper_ctx *ctx, uid_t uid,
                                    xlreaper_lock **lock_r)
{
    uint64_t deadline =
        xlreaper__now_us() + (uint64_t)ctx->cfg->lock_timeout_ms * 1000u;
    uint64_t pause_us = 500;
    xlreaper_lock *lock = *lock_r;
    bool marked;
    int rc;

    if (!lock) {
        /* A spawn's first take is not a re-take: no pause (see the
         * top of this file). */
        rc = lock_acquire(ctx, false, &lock);
        if (rc)
            return rc;
        *lock_r = lock;
    }
    for (;;) {
        rc = xlreaper__lock_retake(lock, deadline, false);
        if (rc)
            return rc;
        rc = xlreaper__reaping_marked(ctx, lock, uid, &marked);
        if (rc || !marked)
            return rc;
        /* A reap of the uid is between two rounds: it owns the uid
         * until its verdict.  Its rounds need the lock. */
        xlreaper__lock_drop(lock);
        if (xlreaper__now_us() + pause_us >= deadline) {
            LOG(ERROR,
                "uid %lu was being reaped for all of lock_timeout_ms (%u "
                "ms): not starting anything in it",
                (unsigned long)uid, ctx->cfg->lock_timeout_ms);
            return XLREAPER_ERROR_BUSY;
        }
        xlreaper__sleep_us(pause_us);
        if (pause_us < 16000)
            pause_us *= 2;
    }
}
