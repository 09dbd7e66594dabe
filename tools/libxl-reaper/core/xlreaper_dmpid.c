/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_dmpid.c - the runas window: a DM outside its uid, in reach.
 *
 * In runas mode the spawn execs QEMU as root, and QEMU drops to the DM
 * uid itself (-runas, -run-with user=) only after it has opened Xen's
 * devices.  The lock goes with the execve.  Until QEMU's setuid the DM
 * is not in its uid: a reap in that window kills nothing of it, counts
 * the uid empty and says so, and a moment later the DM of a domain the
 * toolstack believes reaped runs as that uid.
 *
 * So the spawn records the DM while it still holds the lock: the file
 * <dir of lock_file>/xl-reaper-dm-<domid>.pid, root's, mode 0644,
 * written whole under another name and renamed over the old one, says
 * "PID STARTTIME\n" (STARTTIME: field 22 of /proc/PID/stat, in clock
 * ticks since boot).  Every reap of that domid, under the lock and
 * before the uid kill, kills that process if it is still the one
 * recorded, whatever its uid now, and removes the file.
 *
 * Never the wrong process: the reaper opens a pidfd for PID first and
 * only then reads /proc/PID/stat.  A pidfd holds on to the process it
 * was opened for, not to the number.  If the start time read after
 * the open is the recorded one, /proc/PID was the recorded process at
 * the moment of the read; it existed before the file was written,
 * hence before the pidfd was opened, so the pidfd is that process (a
 * pid is never reused while its process lives, and a new process at
 * PID would have a later start time).  The signal goes through the
 * pidfd: if the process has died since, it reaches no one.
 *
 * A DM with SIGKILL pending never runs user code again, so it never
 * reaches its setuid; if it was already past it, it is a dying task of
 * the uid, which the uid kill's rounds wait for.  The file is trusted
 * only if it is a regular file of root's that no one else may write, in
 * the lock's directory (root's, XLREAPER_DEFAULT_LOCK_FILE's /run/xen).
 * A missing file is not an error: a DM of exec mode, of stock libxl, or
 * no DM.  The window that remains is the one stock libxl's lockless
 * start leaves for the uid kill itself (docs/qemu-deprivilege.pandoc).
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlreaper_internal.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* <dir of lock_file>/<prefix>xl-reaper-dm-<domid>.pid, malloc'd. */
static char *dmpid_path(const xlreaper_config *cfg, uint32_t domid,
                        const char *prefix)
{
    const char *slash = strrchr(cfg->lock_file, '/');
    int dirlen = slash ? (int)(slash - cfg->lock_file) : 1;
    const char *dir = slash ? cfg->lock_file : ".";
    char *p;

    if (slash == cfg->lock_file)
        dirlen = 0; /* "/lock": the root directory */
    if (asprintf(&p, "%.*s/%sxl-reaper-dm-%u.pid", dirlen, dir, prefix,
                 domid) < 0)
        return NULL;
    return p;
}

int xlreaper__parse_stat_starttime(const char *text, size_t len,
                                   unsigned long long *start_r)
{
    const char *end = text + len, *p;

    /* comm may hold anything, ')' too: the fields start after the last. */
    p = memrchr(text, ')', len);
    if (!p)
        return -1;
    p++;
    /* Fields 3 (state) .. 21 are 19 fields before starttime, field 22. */
    for (int field = 3; field < 22; field++) {
        while (p < end && *p == ' ')
            p++;
        while (p < end && *p != ' ')
            p++;
        if (p >= end)
            return -1;
    }
    while (p < end && *p == ' ')
        p++;
    if (xlreaper__parse_numbers(p, end, 10, start_r, 1))
        return -1;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p < end && (*p == ' ' || *p == '\n') ? 0 : -1;
}

ssize_t xlreaper__proc_stat(pid_t pid, char *buf, size_t size)
{
    char path[64];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = xlreaper__read_all(fd, buf, size - 1);
    xlreaper__close_keep_errno(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

int xlreaper__proc_starttime(pid_t pid, unsigned long long *start_r)
{
    char buf[1024];
    ssize_t n = xlreaper__proc_stat(pid, buf, sizeof(buf));

    if (n <= 0)
        return -1;
    if (xlreaper__parse_stat_starttime(buf, (size_t)n, start_r)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int xlreaper__dmpid_record(xlreaper_ctx *ctx, uint32_t domid, pid_t pid)
{
    char *path = dmpid_path(ctx->cfg, domid, ""), *tmp = NULL;
    unsigned long long start;
    char line[64];
    int rc = XLREAPER_ERROR_NOMEM, fd = -1, n;

    if (!path)
        goto out;
    tmp = dmpid_path(ctx->cfg, domid, ".new-");
    if (!tmp)
        goto out;
    rc = XLREAPER_ERROR_FAIL;
    if (xlreaper__proc_starttime(pid, &start) < 0) {
        LOGED(ERROR, domid, "reading the start time of device model pid %ld",
              (long)pid);
        goto out;
    }
    n = snprintf(line, sizeof(line), "%ld %llu\n", (long)pid, start);
    /* Under the lock no one else writes it; a leftover of a writer that
     * died goes. */
    if (unlink(tmp) < 0 && errno != ENOENT) {
        LOGED(ERROR, domid, "removing %s", tmp);
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || fchmod(fd, 0644) < 0 ||
        xlreaper__write_all(fd, line, (size_t)n) < 0) {
        LOGED(ERROR, domid, "writing %s", tmp);
        goto out;
    }
    if (close(fd) < 0) {
        fd = -1;
        LOGED(ERROR, domid, "writing %s", tmp);
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        LOGED(ERROR, domid, "renaming %s to %s", tmp, path);
        goto out;
    }
    LOGD(DEBUG, domid, "device model pid %ld (start %llu) recorded in %s",
         (long)pid, start, path);
    rc = 0;

out:
    if (fd >= 0) {
        xlreaper__close_keep_errno(fd);
        unlink(tmp);
    }
    free(tmp);
    free(path);
    return rc;
}

/* Parses "PID STARTTIME\n" exactly.  0 or -1. */
static int parse_record(const char *text, pid_t *pid_r,
                        unsigned long long *start_r)
{
    unsigned long long start;
    char *end;
    long pid;

    if (*text < '1' || *text > '9')
        return -1;
    errno = 0;
    pid = strtol(text, &end, 10);
    if (errno || *end != ' ' || pid <= 0 || pid > INT_MAX)
        return -1;
    text = end + 1;
    if (*text < '0' || *text > '9')
        return -1;
    start = strtoull(text, &end, 10);
    if (errno || strcmp(end, "\n"))
        return -1;
    *pid_r = (pid_t)pid;
    *start_r = start;
    return 0;
}

/*
 * Reads the record of domid into *pid_r and *start_r.  1 when there is
 * one to act on, 0 when there is none (or it cannot be trusted, which
 * is logged: then nothing is killed by it), or an error.
 */
static int read_record(xlreaper_ctx *ctx, uint32_t domid, const char *path,
                       pid_t *pid_r, unsigned long long *start_r)
{
    char text[64];
    struct stat st;
    ssize_t n;
    int fd;

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        LOGED(WARN, domid, "%s (its device model pid is not killed)", path);
        return 0;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 022)) {
        LOGD(WARN, domid,
             "%s is not a regular file only root may write: not trusted, "
             "its pid is not killed",
             path);
        close(fd);
        return 0;
    }
    n = xlreaper__read_all(fd, text, sizeof(text) - 1);
    close(fd);
    if (n < 0) {
        LOGED(WARN, domid, "reading %s", path);
        return 0;
    }
    text[n] = '\0';
    if (parse_record(text, pid_r, start_r) < 0) {
        LOGD(WARN, domid, "%s: not \"PID STARTTIME\": ignored", path);
        return 0;
    }
    return 1;
}

int xlreaper__dmpid_kill(xlreaper_ctx *ctx, uint32_t domid, pid_t *killed_r)
{
    char *path = dmpid_path(ctx->cfg, domid, "");
    unsigned long long want, start;
    pid_t pid;
    int r, pidfd = -1;

    *killed_r = 0;
    if (!path)
        return XLREAPER_ERROR_NOMEM;
    r = read_record(ctx, domid, path, &pid, &want);
    if (r <= 0)
        goto out;
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        if (errno != ESRCH)
            LOGED(WARN, domid, "pidfd_open of recorded device model pid %ld",
                  (long)pid);
        else
            LOGD(DEBUG, domid, "recorded device model pid %ld is gone",
                 (long)pid);
        goto done;
    }
    /* After the pidfd: see the argument at the top. */
    if (xlreaper__proc_starttime(pid, &start) < 0 || start != want) {
        LOGD(DEBUG, domid,
             "pid %ld is no longer the device model recorded (start %llu)",
             (long)pid, want);
        goto done;
    }
    if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0) {
        if (errno != ESRCH) {
            LOGED(ERROR, domid, "killing recorded device model pid %ld",
                  (long)pid);
            r = XLREAPER_ERROR_FAIL; /* the file stays for the next reap */
            goto out;
        }
        goto done;
    }
    LOGD(INFO, domid,
         "killed device model pid %ld, recorded at its start (runas mode: "
         "perhaps still root, before its own setuid)",
         (long)pid);
    *killed_r = pid;

done:
    /* The record has served: a later reap must not find it. */
    if (unlink(path) < 0 && errno != ENOENT)
        LOGED(WARN, domid, "removing %s", path);
    r = 0;
out:
    if (pidfd >= 0)
        close(pidfd);
    free(path);
    return r < 0 ? r : 0;
}
