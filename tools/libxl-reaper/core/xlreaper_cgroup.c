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
 *
 * With dm_memory_max, the domain's cgroup is bounded (memory.max, and
 * memory.swap.max 0) before the DM joins it, so that a DM that
 * allocates without end is OOM-killed inside its own cgroup and nothing
 * else is.  The guest's RAM is not in it: QEMU maps it from Xen
 * (docs/facts.md F31).
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

/* dir/name's text, up to size - 1 bytes, NUL-terminated: 0 or -errno. */
static int read_small(const char *dir, const char *name, char *buf,
                      size_t size)
{
    char path[4200];
    ssize_t n;
    int fd, e;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = xlreaper__read_all(fd, buf, size - 1);
    e = errno;
    close(fd);
    if (n < 0)
        return -e;
    buf[n] = '\0';
    return 0;
}

/* 1 if dir's cgroup.events says "populated 1", 0 if not, or an error. */
static int populated(xlreaper_ctx *ctx, uint32_t domid, const char *dir)
{
    char buf[256];
    int r = read_small(dir, "cgroup.events", buf, sizeof(buf));

    if (r) {
        errno = -r;
        LOGED(ERROR, domid, "%s/cgroup.events", dir);
        return XLREAPER_ERROR_FAIL;
    }
    if (strstr(buf, "populated 1"))
        return 1;
    if (strstr(buf, "populated 0"))
        return 0;
    LOGD(ERROR, domid, "%s/cgroup.events: no populated line", dir);
    return XLREAPER_ERROR_FAIL;
}

/* text to dir/name: 0 or -errno. */
static int write_small(const char *dir, const char *name, const char *text)
{
    char path[4200];
    size_t len = strlen(text);
    ssize_t n;
    int fd, e;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = write(fd, text, len);
    e = n < 0 ? errno : EIO;
    close(fd);
    return n == (ssize_t)len ? 0 : -e;
}

/* Whether the space-separated list has word. */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

/*
 * The memory controller for parent's children: in its
 * cgroup.subtree_control already, or added there when its
 * cgroup.controllers offers it (the parent is the project's, given by
 * cgroup_parent).  0, or _INVAL with the reason logged: a DM is not
 * started unbounded when it was to be bounded.
 */
static int memory_controller(xlreaper_ctx *ctx, uint32_t domid,
                             const char *parent)
{
    char buf[512];
    int r;

    r = read_small(parent, "cgroup.subtree_control", buf, sizeof(buf));
    if (!r && has_word(buf, "memory"))
        return 0;
    if (!r)
        r = read_small(parent, "cgroup.controllers", buf, sizeof(buf));
    if (r) {
        errno = -r;
        LOGED(ERROR, domid, "cgroup_parent %s: reading its controllers",
              parent);
        return XLREAPER_ERROR_INVAL;
    }
    if (!has_word(buf, "memory")) {
        buf[strcspn(buf, "\n")] = '\0';
        LOGD(ERROR, domid,
             "cgroup_parent %s has no memory controller (its "
             "cgroup.controllers: \"%s\"), so dm_memory_max cannot bound "
             "the device model: enable memory in the cgroup.subtree_control "
             "of the cgroup above it, or set dm_memory_max = 0 to start "
             "device models without a memory bound",
             parent, buf);
        return XLREAPER_ERROR_INVAL;
    }
    r = write_small(parent, "cgroup.subtree_control", "+memory");
    if (r) {
        errno = -r;
        LOGED(ERROR, domid,
              "cgroup_parent %s: enabling the memory controller for its "
              "children (+memory in cgroup.subtree_control; dm_memory_max "
              "= 0 starts device models without a memory bound)",
              parent);
        return XLREAPER_ERROR_INVAL;
    }
    LOGD(INFO, domid,
         "cgroup_parent %s: memory controller enabled for its children",
         parent);
    return 0;
}

/*
 * memory.max, and memory.swap.max 0: without it, what the DM swaps out
 * leaves memory.current and a DM under memory.max could fill the
 * host's swap.  A kernel that accounts no swap has no memory.swap.max:
 * said, not refused (there the DM's swap is bounded by no cgroup).
 */
static int memory_bound(xlreaper_ctx *ctx, uint32_t domid, const char *dir,
                        uint64_t memory_max)
{
    char v[32];
    int r;

    snprintf(v, sizeof(v), "%llu", (unsigned long long)memory_max);
    r = write_small(dir, "memory.max", v);
    if (r) {
        errno = -r;
        LOGED(ERROR, domid, "writing %s to %s/memory.max (dm_memory_max)", v,
              dir);
        return XLREAPER_ERROR_FAIL;
    }
    r = write_small(dir, "memory.swap.max", "0");
    if (r == -ENOENT)
        LOGD(WARN, domid,
             "%s has no memory.swap.max (this kernel accounts no swap): "
             "what the device model swaps out is bounded by no cgroup",
             dir);
    else if (r) {
        errno = -r;
        LOGED(ERROR, domid, "writing 0 to %s/memory.swap.max", dir);
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

int xlreaper__cgroup_prepare(xlreaper_ctx *ctx, uint32_t domid,
                             const char *parent, uint64_t memory_max,
                             char **dir_r, int *procs_fd_r)
{
    char *dir = NULL, *procs = NULL;
    bool made = false;
    int rc, r, fd;

    if (asprintf(&dir, "%s/dm-%u", parent, domid) < 0) {
        dir = NULL;
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    if (memory_max) {
        rc = memory_controller(ctx, domid, parent);
        if (rc)
            goto out;
    }
    if (!mkdir(dir, 0755)) {
        made = true;
    } else {
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
    /* Before the DM joins: no byte of it is ever unbounded. */
    if (memory_max) {
        rc = memory_bound(ctx, domid, dir, memory_max);
        if (rc)
            goto out;
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
    if (rc && made)
        rmdir(dir); /* ours and empty: a refusal leaves nothing */
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
