/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_strbuf.c - a growing string for messages built in pieces
 * (a reap's description, an audit's reasons).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_internal.h"

void xlreaper__sb_printf(xlreaper__sb *sb, const char *fmt, ...)
{
    va_list al;
    int n;

    if (sb->oom)
        return;
    for (;;) {
        size_t room = sb->cap - sb->len;
        va_start(al, fmt);
        n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, room, fmt, al);
        va_end(al);
        if (n < 0) {
            sb->oom = true;
            return;
        }
        if ((size_t)n < room) {
            sb->len += (size_t)n;
            return;
        }
        size_t ncap = (sb->cap + (size_t)n + 1) * 2;
        char *nb = realloc(sb->buf, ncap);
        if (!nb) {
            sb->oom = true;
            return;
        }
        sb->buf = nb;
        sb->cap = ncap;
    }
}

void xlreaper__sb_dispose(xlreaper__sb *sb)
{
    free(sb->buf);
    memset(sb, 0, sizeof(*sb));
}
