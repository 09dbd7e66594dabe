/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_cgroup.c - the optional per-domain cgroup v2 of a DM.
 *
 * <cgroup_parent>/dm-<domid> holds the DM from before its execve, so
 * that everything it starts stays inside, and `cgroup.kill` there is a
 * second belt.  It is not the guarantee: a cgroup can be left by a task
 * that may write to another cgroup.procs, and the argument of
 * xlreaper_reap.c needs nothing but the uid.  Any cgroup2 mount works
 * (/sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a hybrid
 * one); the parent must exist, the domain's directory is made here,
 * and removed by the reap that leaves it empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "xlreaper_internal.h"

int xlreaper__cgroup_check(xlreaper_ctx *ctx, uint32_t domid, const char *path)
{
    struct statfs sfs;
    struct stat st;

    if (stat(path, &st) < 0 || statfs(path, &sfs) < 0) {
        LOGED(ERROR, domid, "cgroup_parent %s", path);
        return XLREAPER_ERROR_INVAL;
    }
    if (!S_ISDIR(st.st_mode) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
        LOGD(ERROR, domid,
             "cgroup_parent %s is not a directory of a "
             "cgroup2 file system",
             path);
        return XLREAPER_ERROR_INVAL;
    }
    return 0;
}

/* 1 if dir's cgroup.events says "populated 1", 0 if not, or an error. */
static int populated(xlreaper_ctx *ctx, uint32_t domid, const char *dir)
{
    char path[4200], buf[256];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "%s/cgroup.events", dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        LOGED(ERROR, domid, "%s", path);
        return XLREAPER_ERROR_FAIL;
    }
    n = xlreaper__read_all(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0) {
        LOGED(ERROR, domid, "%s", path);
        return XLREAPER_ERROR_FAIL;
    }
    buf[n] = '\0';
    if (strstr(buf, "populated 1"))
        return 1;
    if (strstr(buf, "populated 0"))
        return 0;
    LOGD(ERROR, domid, "%s: no populated line", path);
    return XLREAPER_ERROR_FAIL;
}

int xlreaper__cgroup_prepare(xlreaper_ctx *ctx, uint32_t domid,
                             const char *parent, char **dir_r, int *procs_fd_r)
{
    char *dir = NULL, *procs = NULL;
    int rc, r, fd;

    if (asprintf(&dir, "%s/dm-%u", parent, domid) < 0) {
        dir = NULL;
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    if (mkdir(dir, 0755) < 0) {
        if (errno != EEXIST) {
            LOGED(ERROR, domid, "making cgroup %s", dir);
            rc = XLREAPER_ERROR_FAIL;
            goto out;
        }
        /* Left by a previous domain of this domid: its tasks must be gone
         * before a new DM joins them. */
        r = populated(ctx, domid, dir);
        if (r < 0) {
            rc = r;
            goto out;
        }
        if (r) {
            LOGD(ERROR, domid,
                 "cgroup %s still has tasks of a previous "
                 "device model",
                 dir);
            rc = XLREAPER_ERROR_BUSY;
            goto out;
        }
    }
    if (asprintf(&procs, "%s/cgroup.procs", dir) < 0) {
        procs = NULL;
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    fd = open(procs, O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
        fd = xlreaper__fd_above_stdio(fd);
    if (fd < 0) {
        LOGED(ERROR, domid, "%s", procs);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    *procs_fd_r = fd;
    *dir_r = dir;
    dir = NULL;
    rc = 0;

out:
    free(procs);
    free(dir);
    return rc;
}

/* How long a cgroup killed outright may take to empty before rmdir. */
#define CGROUP_EMPTY_WAIT_US 200000

void xlreaper__cgroup_kill(xlreaper_ctx *ctx, uint32_t domid,
                           const char *parent)
{
    char path[4200];
    int fd;

    snprintf(path, sizeof(path), "%s/dm-%u/cgroup.kill", parent, domid);
    fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        /* No cgroup: a DM we did not start (stock libxl), or none. */
        if (errno == EROFS)
            LOGED(WARN, domid,
                  "%s: cgroupfs is read-only here (a unit's "
                  "ProtectControlGroups= without ReadWritePaths= for "
                  "cgroup_parent?); the uid kill goes on",
                  path);
        else if (errno != ENOENT)
            LOGED(WARN, domid, "%s (the uid kill goes on)", path);
        return;
    }
    if (write(fd, "1", 1) != 1)
        LOGED(WARN, domid, "writing %s (the uid kill goes on)", path);
    else
        LOGD(DEBUG, domid, "%s written", path);
    close(fd);
}

void xlreaper__cgroup_remove(xlreaper_ctx *ctx, uint32_t domid,
                             const char *parent)
{
    uint64_t until = xlreaper__now_us() + CGROUP_EMPTY_WAIT_US;
    char dir[4200];

    snprintf(dir, sizeof(dir), "%s/dm-%u", parent, domid);
    for (;;) {
        if (!rmdir(dir)) {
            LOGD(DEBUG, domid, "cgroup %s removed", dir);
            return;
        }
        if (errno == ENOENT)
            return;
        /* Killed by cgroup.kill but not yet exited, or alive: only a
         * task outside the uid can be left, e.g. one root moved in. */
        if (errno != EBUSY || xlreaper__now_us() >= until)
            break;
        xlreaper__sleep_us(5000);
    }
    LOGED(WARN, domid,
          "cgroup %s not removed (a task outside the DM uid in it?); a "
          "new device model of this domid is refused until it is empty",
          dir);
}
