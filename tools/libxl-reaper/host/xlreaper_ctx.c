/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_ctx.c - the context: the caller's logger and the settings,
 * and the host's passwd database it reads them against.
 */
#include <errno.h>
#include <stdlib.h>

#include "xlreaper_host.h"

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
