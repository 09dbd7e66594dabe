/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_log.c - the library's one way to speak: through the
 * caller's xentoollog logger, and an error code in words.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "xlreaper_internal.h"

/* Lines are cut at 2048 bytes: a daemon's event line (xl-reaperd logs
 * each one) is a whole reap result. */
static void vlog(const xlreaper_ctx *ctx, xentoollog_level level, int errnoval,
                 const char *func, const char *fmt, va_list al)
{
    char msg[2048];
    int esave = errno;

    vsnprintf(msg, sizeof(msg), fmt, al);
    /* Debug lines carry the function, as libxl's do; the rest are for
     * operators and say only what happened. */
    if (func && level <= XTL_DETAIL)
        xtl_log(ctx->lg, level, errnoval, ctx->progname, "%s: %s", func, msg);
    else
        xtl_log(ctx->lg, level, errnoval, ctx->progname, "%s", msg);
    errno = esave;
}

void xlreaper__log(const xlreaper_ctx *ctx, xentoollog_level level,
                   int errnoval, const char *func, const char *fmt, ...)
{
    va_list al;

    va_start(al, fmt);
    vlog(ctx, level, errnoval, func, fmt, al);
    va_end(al);
}

void xlreaper_log(const xlreaper_ctx *ctx, xentoollog_level level,
                  int errnoval, const char *fmt, ...)
{
    va_list al;

    va_start(al, fmt);
    vlog(ctx, level, errnoval, NULL, fmt, al);
    va_end(al);
}

void xlreaper_vlog(const xlreaper_ctx *ctx, xentoollog_level level,
                   int errnoval, const char *fmt, va_list al)
{
    vlog(ctx, level, errnoval, NULL, fmt, al);
}

const char *xlreaper_strerror(int rc)
{
    switch (rc) {
    case 0: return "success";
    case XLREAPER_ERROR_FAIL: return "system call failed";
    case XLREAPER_ERROR_INVAL: return "invalid input or configuration";
    case XLREAPER_ERROR_NOMEM: return "out of memory";
    case XLREAPER_ERROR_LOCK_TIMEOUT:
        return "timed out waiting for the reaper lock";
    case XLREAPER_ERROR_REMAIN:
        return "tasks remain under the device model uid";
    case XLREAPER_ERROR_BUSY: return "the device model uid still has tasks";
    case XLREAPER_ERROR_PERM: return "permission denied (needs root)";
    case XLREAPER_ERROR_STUCK:
        return "tasks of the device model uid are stuck in D state";
    default: return "unknown error";
    }
}
