/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_json_error.c - with --json, a command that fails prints a
 * JSON error object on stdout when it printed nothing else there, so
 * that a script reading stdout never gets an empty answer:
 *   {"error":"MESSAGE","command":"check","exit":1}
 * MESSAGE is the last error said on stderr (the library's, through the
 * logger below, or the CLI's own xlr_error).  Whether anything reached
 * stdout is counted by the stream itself (fopencookie), so that no
 * command has to say so.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xl_reaper.h"

static char last_error[512];
static size_t stdout_bytes;

void xlr_note_error(const char *fmt, va_list al)
{
    vsnprintf(last_error, sizeof(last_error), fmt, al);
}

static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
    size_t done = 0;

    (void)cookie;
    while (done < n) {
        ssize_t r = write(STDOUT_FILENO, buf + done, n - done);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return done ? (ssize_t)done : -1;
        done += (size_t)r;
    }
    stdout_bytes += n;
    return (ssize_t)n;
}

void xlr_json_begin(void)
{
    cookie_io_functions_t io = { NULL, count_write, NULL, NULL };
    FILE *f = fopencookie(NULL, "w", io);

    if (!f)
        return; /* then an error object may follow other output */
    fflush(stdout);
    stdout = f;
}

/* A JSON string body: quote, backslash and control bytes escaped. */
static void put_json_string(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
}

void xlr_json_error(const char *cmd, const char *message, int exit_code)
{
    if (stdout_bytes)
        return;
    if (!message || !*message)
        message = last_error[0] ? last_error : "failed";
    printf("{\"error\":\"");
    put_json_string(message);
    printf("\",\"command\":\"");
    put_json_string(cmd ? cmd : "");
    printf("\",\"exit\":%d}\n", exit_code);
    fflush(stdout);
}

/* ---------- a logger that remembers the last error ---------- */

typedef struct {
    xentoollog_logger vtable;
    xentoollog_logger *inner;
} tee_logger;

static void tee_vmessage(xentoollog_logger *logger, xentoollog_level level,
                         int errnoval, const char *context, const char *format,
                         va_list al)
{
    tee_logger *t = (tee_logger *)logger;
    va_list copy;

    va_copy(copy, al);
    if (level >= XTL_ERROR) {
        size_t n;

        vsnprintf(last_error, sizeof(last_error), format, copy);
        n = strlen(last_error);
        if (errnoval >= 0 && n < sizeof(last_error))
            snprintf(last_error + n, sizeof(last_error) - n, ": %s",
                     strerror(errnoval));
    }
    va_end(copy);
    t->inner->vmessage(t->inner, level, errnoval, context, format, al);
}

static void tee_progress(xentoollog_logger *logger, const char *context,
                         const char *doing_what, int percent,
                         unsigned long done, unsigned long total)
{
    tee_logger *t = (tee_logger *)logger;

    if (t->inner->progress)
        t->inner->progress(t->inner, context, doing_what, percent, done,
                           total);
}

static void tee_destroy(xentoollog_logger *logger)
{
    tee_logger *t = (tee_logger *)logger;

    xtl_logger_destroy(t->inner);
    free(t);
}

xentoollog_logger *xlr_tee_logger(xentoollog_logger *inner)
{
    tee_logger *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->vtable.vmessage = tee_vmessage;
    t->vtable.progress = tee_progress;
    t->vtable.destroy = tee_destroy;
    t->inner = inner;
    return (xentoollog_logger *)t; /* vtable is its first member */
}
