/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_capture.c - a xentoollog logger that keeps every message, so that
 * tests can assert the reason the library gave, not just its code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlr_test.h"

static char *text;
static size_t len;

static void capture_vmessage(xentoollog_logger *lg, xentoollog_level level,
                             int errnoval, const char *context,
                             const char *fmt, va_list al)
{
    char msg[2048];
    char *line, *grown;
    int n;

    (void)lg;
    (void)context;
    vsnprintf(msg, sizeof(msg), fmt, al);
    n = asprintf(&line, "%s: %s%s%s\n", xtl_level_to_string(level), msg,
                 errnoval >= 0 ? ": " : "",
                 errnoval >= 0 ? strerror(errnoval) : "");
    if (n < 0)
        return;
    grown = realloc(text, len + (size_t)n + 1);
    /* Not fail(): its longjmp would leave the library's call midway. */
    if (!grown)
        abort();
    text = grown;
    memcpy(text + len, line, (size_t)n + 1);
    len += (size_t)n;
    free(line);
    if (getenv("XLR_TEST_LOG"))
        fputs(text + len - (size_t)n, stderr);
}

static void capture_destroy(xentoollog_logger *lg)
{
    (void)lg;
}

static xentoollog_logger capture = {
    .vmessage = capture_vmessage,
    .destroy = capture_destroy,
};

xentoollog_logger *xlrt_capture_logger(void)
{
    return &capture;
}

const char *xlrt_captured(void)
{
    return text ? text : "";
}

void xlrt_capture_reset(void)
{
    free(text);
    text = NULL;
    len = 0;
}
