/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_log.h - the daemon's log line, its wall clock, and the
 * write of a whole line (xl_reaperd_log.c).  A leaf: it calls none of
 * the daemon's other files.  Its one piece of state is the ctx the
 * lines go through, set once at start (as OpenSSH's log.c keeps its
 * own); the monotonic clock is the library's, xlreaper_now_us.
 */
#ifndef XL_REAPERD_LOG_H
#define XL_REAPERD_LOG_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlreaper.h"

/* The lines go through ctx's logger, under its progname; before this
 * (or with NULL) nothing is logged. */
void xlrd_log_init(const xlreaper_ctx *ctx);

/* One line, "domid N: " first for a domain. */
void xlrd_log(xentoollog_level level, int errnoval, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define XLRD_LOG(l, ...) xlrd_log(XTL_##l, -1, __VA_ARGS__)
#define XLRD_LOGE(l, ...) xlrd_log(XTL_##l, errno, __VA_ARGS__)

/* The wall clock in microseconds. */
uint64_t xlrd_wall_us(void);

/* One whole line appended to fd, or nothing (see xl_reaperd_log.c);
 * sync: made durable.  0, or an errno. */
int xlrd_write_line(int fd, const char *line, size_t len, bool sync);

#endif /* XL_REAPERD_LOG_H */
