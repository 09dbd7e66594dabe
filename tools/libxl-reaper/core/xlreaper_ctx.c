/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_ctx.c - the context: the caller's logger and the settings.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_internal.h"

int xlreaper_ctx_alloc(xlreaper_ctx **ctx_r, xentoollog_logger *lg)
{
    xlreaper_ctx *ctx;

    if (!lg)
        return XLREAPER_ERROR_INVAL;
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return XLREAPER_ERROR_NOMEM;
    ctx->lg = lg;
    ctx->pw = &xlreaper__passwd_system;
    ctx->pw_local = &xlreaper__passwd_files;
    ctx->progname = program_invocation_short_name;
    *ctx_r = ctx;
    return 0;
}

void xlreaper_ctx_set_progname(xlreaper_ctx *ctx, const char *name)
{
    if (name && *name)
        ctx->progname = name;
}

void xlreaper_ctx_free(xlreaper_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->cfg) {
        xlreaper__config_dispose(ctx->cfg);
        free(ctx->cfg);
    }
    free(ctx);
}

void xlreaper__ctx_set_passwd(xlreaper_ctx *ctx,
                              const xlreaper__passwd_ops *ops, void *opaque)
{
    ctx->pw = ops;
    ctx->pw_opaque = opaque;
    ctx->pw_local = ops;
    ctx->pw_local_opaque = opaque;
}

void xlreaper__ctx_set_passwd_local(xlreaper_ctx *ctx,
                                    const xlreaper__passwd_ops *ops,
                                    void *opaque)
{
    ctx->pw_local = ops;
    ctx->pw_local_opaque = opaque;
}

const xlreaper_config *xlreaper_config_get(const xlreaper_ctx *ctx)
{
    return ctx->cfg;
}

void xlreaper__log(const xlreaper_ctx *ctx, xentoollog_level level,
                   int errnoval, const char *func, const char *fmt, ...)
{
    char msg[1024];
    va_list al;
    int esave = errno;

    va_start(al, fmt);
    vsnprintf(msg, sizeof(msg), fmt, al);
    va_end(al);
    /* Debug lines carry the function, as libxl's do; the rest are for
     * operators and say only what happened. */
    if (level <= XTL_DETAIL)
        xtl_log(ctx->lg, level, errnoval, ctx->progname, "%s: %s", func, msg);
    else
        xtl_log(ctx->lg, level, errnoval, ctx->progname, "%s", msg);
    errno = esave;
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
