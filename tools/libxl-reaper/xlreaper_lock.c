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
 */
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <sys/inotify.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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

static int open_lock_file(xlreaper_ctx *ctx, const char *path, int *fd_r)
{
    struct stat st;
    int fd, rc;

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
    if (st.st_mode & 077) {
        /* Upstream libxl creates it 0644: readable is enough to flock. */
        LOG(NOTICE, "reaper lock %s was mode %03o; making it 0600", path,
            (unsigned)(st.st_mode & 0777));
        if (fchmod(fd, 0600) < 0) {
            LOGE(ERROR, "fchmod %s", path);
            rc = XLREAPER_ERROR_FAIL;
            goto fail;
        }
    }
    *fd_r = fd;
    return 0;

fail:
    close(fd);
    return rc;
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

int xlreaper_lock_acquire(xlreaper_ctx *ctx, xlreaper_lock **lock_r)
{
    const xlreaper_config *cfg = ctx->cfg;
    uint64_t start, deadline, pause_us = 500;
    xlreaper_lock *lock;
    bool ino_failed = false;
    int fd = -1, ino = -1, rc;

    if (!cfg)
        return XLREAPER_ERROR_INVAL;
    rc = open_lock_file(ctx, cfg->lock_file, &fd);
    if (rc)
        return rc;

    /* Bounded without signals: see the top of this file. */
    start = xlreaper__now_us();
    deadline = start + (uint64_t)cfg->lock_timeout_ms * 1000u;
    for (;;) {
        uint64_t now;

        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            LOGE(ERROR, "flock %s", cfg->lock_file);
            rc = XLREAPER_ERROR_FAIL;
            goto fail;
        }
        now = xlreaper__now_us();
        if (now >= deadline) {
            LOG(ERROR,
                "timed out after %u ms waiting for the reaper lock %s "
                "(another reaper, ours or libxl's, holds it)",
                cfg->lock_timeout_ms, cfg->lock_file);
            rc = XLREAPER_ERROR_LOCK_TIMEOUT;
            goto fail;
        }
        if (ino < 0 && !ino_failed) {
            /* Contended: from now on, woken by releases.  Then try
             * once more before the first sleep. */
            ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
            if (ino >= 0 && inotify_add_watch(ino, cfg->lock_file,
                                              IN_CLOSE_WRITE) < 0) {
                close(ino);
                ino = -1;
            }
            ino_failed = ino < 0; /* then by the clock alone */
            if (!ino_failed)
                continue;
        }
        wait_release(ino, deadline - now, &pause_us);
    }
    if (ino >= 0)
        close(ino);

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

fail:
    if (ino >= 0)
        close(ino);
    close(fd);
    return rc;
}

void xlreaper_lock_release(xlreaper_lock *lock)
{
    if (!lock)
        return;
    if (lock->ctx->held == lock)
        lock->ctx->held = NULL;
    close(lock->fd); /* drops the flock */
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
