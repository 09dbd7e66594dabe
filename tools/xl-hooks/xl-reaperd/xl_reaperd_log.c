/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_log.c - the daemon's log line and its clocks.
 *
 * A leaf: every other file of the daemon calls these, and these call
 * none of the daemon's functions, so that the daemon's call graph has
 * no cycle (xl-reaperd.mk checks it with nm at every link).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "xl_reaperd.h"

void xlrd_log(const xlrd *d, xentoollog_level level, int errnoval,
              const char *fmt, ...)
{
    char msg[2048];
    va_list al;
    int esave = errno;

    va_start(al, fmt);
    vsnprintf(msg, sizeof(msg), fmt, al);
    va_end(al);
    xtl_log(d->lg, level, errnoval, "xl-reaperd", "%s", msg);
    errno = esave;
}

uint64_t xlrd_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t xlrd_wall_us(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}
