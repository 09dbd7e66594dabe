/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_log.c - the daemon's log line, its wall clock, and the
 * write of a whole line.
 *
 * A leaf: every other file of the daemon calls these, and these call
 * none of the daemon's functions, so that the daemon's call graph has
 * no cycle (xl-reaperd.mk checks it with nm at every link).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "xl_reaperd_log.h"

static const xlreaper_ctx *log_ctx;

void xlrd_log_init(const xlreaper_ctx *ctx)
{
    log_ctx = ctx;
}

void xlrd_log(xentoollog_level level, int errnoval, const char *fmt, ...)
{
    va_list al;

    if (!log_ctx)
        return;
    va_start(al, fmt);
    xlreaper_vlog(log_ctx, level, errnoval, fmt, al);
    va_end(al);
}

uint64_t xlrd_wall_us(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

/*
 * One whole line at the end of an O_APPEND file of which this process
 * is the only writer, or nothing.  On a full or failing disk write(2)
 * may take part of a line and fail the rest; the next line would then
 * be glued to a cut one.  So the space is reserved first (fallocate,
 * FALLOC_FL_KEEP_SIZE, past the end: ENOSPC before any byte is
 * written), and a write that still falls short is cut back to the size
 * before it.  sync: fdatasync once written.  0, or an errno.
 */
int xlrd_write_line(int fd, const char *line, size_t len, bool sync)
{
    struct stat st;
    ssize_t r;
    int e;

    if (fstat(fd, &st) < 0)
        return errno;
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)len) < 0 &&
        errno != EOPNOTSUPP && errno != ENOSYS && errno != EINTR)
        return errno;
    do
        r = write(fd, line, len);
    while (r < 0 && errno == EINTR);
    if (r == (ssize_t)len)
        return sync && fdatasync(fd) < 0 && errno != EINVAL ? errno : 0;
    e = r < 0 ? errno : ENOSPC;
    if (r > 0 && ftruncate(fd, st.st_size) < 0)
        return errno;
    return e;
}
