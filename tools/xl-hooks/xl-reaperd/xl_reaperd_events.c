/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_events.c - the events file: one JSON line per reap.
 *
 * A line is written whole or not at all.  The file is O_APPEND and each
 * line goes in one write(2), so lines of two writers never interleave;
 * but on a full or failing disk write(2) may take part of a line and
 * fail the rest, and the next line would then be glued to a cut one (a
 * JSON-lines reader loses both).  So the space is reserved first
 * (fallocate with FALLOC_FL_KEEP_SIZE, past the end: ENOSPC comes
 * before any byte is written), and a write that still falls short is
 * cut back (ftruncate to the size before it; the daemon is the file's
 * only writer).  A line that could not be written stays queued in
 * memory, XLRD_EVENTS_QUEUE_MAX of them at most (the oldest dropped past
 * that, and counted), and is written again at each later event and
 * every second, in order.  A written line is made durable (fdatasync)
 * before its intent record is ended: a crash never loses an event whose
 * record is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xl_reaperd.h"

/* How often a queue that could not be written is tried again. */
#define RETRY_US 1000000u

int xlrd_events_init(xlrd *d)
{
    d->queue = calloc(XLRD_EVENTS_QUEUE_MAX, sizeof(*d->queue));
    return d->queue ? 0 : -1;
}

void xlrd_events_dispose(xlrd *d)
{
    for (unsigned i = 0; d->queue && i < d->q_len; i++)
        free(d->queue[(d->q_head + i) % XLRD_EVENTS_QUEUE_MAX].line);
    free(d->queue);
    d->queue = NULL;
    d->q_len = 0;
    if (d->events_fd >= 0)
        close(d->events_fd);
    d->events_fd = -1;
}

/*
 * A daemon killed inside a write(2) that crossed a page may leave part
 * of a line: the kernel stops a write to a file between two pages when
 * a fatal signal is pending.  That line's intent record has no end, so
 * the next run writes its event again; the cut part goes, so that the
 * next line starts a line and the cut one is not taken for written.
 */
static void cut_torn_tail(xlrd *d, int fd)
{
    char buf[4096];
    struct stat st;
    off_t end;

    if (fstat(fd, &st) < 0 || !st.st_size)
        return;
    end = st.st_size;
    while (end > 0) {
        off_t from = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
        ssize_t n = pread(fd, buf, (size_t)(end - from), from);

        if (n <= 0)
            return;
        for (ssize_t i = n; i > 0; i--) {
            if (buf[i - 1] != '\n')
                continue;
            if (from + i == st.st_size)
                return; /* it ends with a whole line */
            XLRD_LOG(d, WARN,
                     "events file %s: cutting %lld bytes of a line a killed "
                     "run left unfinished (its event is written again)",
                     d->events_path, (long long)(st.st_size - (from + i)));
            if (ftruncate(fd, from + i) < 0)
                XLRD_LOGE(d, ERROR, "events file %s: ftruncate",
                          d->events_path);
            return;
        }
        end = from;
    }
    if (ftruncate(fd, 0) < 0) /* one cut line and nothing else */
        XLRD_LOGE(d, ERROR, "events file %s: ftruncate", d->events_path);
}

int xlrd_events_open(xlrd *d)
{
    int fd;

    if (!d->events_path)
        return 0;
    fd = open(d->events_path,
              O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
              0640);
    if (fd < 0) {
        XLRD_LOGE(d, ERROR, "opening the events file %s", d->events_path);
        return -1;
    }
    cut_torn_tail(d, fd);
    if (d->events_fd >= 0)
        close(d->events_fd);
    d->events_fd = fd;
    return 0;
}

void xlrd_events_flush(xlrd *d)
{
    unsigned written = 0;

    while (d->q_len) {
        xlrd_event *ev = &d->queue[d->q_head];
        int e = d->events_fd >= 0
                    ? xlrd_write_line(d->events_fd, ev->line, ev->len, true)
                    : 0;

        if (e) {
            if (e != d->events_errno) {
                errno = e;
                XLRD_LOGE(d, ERROR,
                          "writing to the events file %s: %u event%s "
                          "queued in memory (at most %u), written when it "
                          "can be",
                          d->events_path, d->q_len, d->q_len == 1 ? "" : "s",
                          XLRD_EVENTS_QUEUE_MAX);
            }
            d->events_errno = e;
            d->metrics.event_write_errors++;
            d->next_flush_us = xlrd_now_us() + RETRY_US;
            return;
        }
        if (d->events_fd >= 0)
            d->metrics.events_written++;
        if (ev->intent)
            xlrd_intent_end(d, ev->intent);
        free(ev->line);
        ev->line = NULL;
        d->q_head = (d->q_head + 1) % XLRD_EVENTS_QUEUE_MAX;
        d->q_len--;
        written++;
    }
    if (d->events_errno && written)
        XLRD_LOG(d, NOTICE,
                 "events file %s: written again (%u queued event%s)",
                 d->events_path, written, written == 1 ? "" : "s");
    d->events_errno = 0;
    d->next_flush_us = 0;
}

void xlrd_events_put(xlrd *d, char *line, size_t len, uint64_t intent)
{
    if (d->q_len == XLRD_EVENTS_QUEUE_MAX) {
        xlrd_event *old = &d->queue[d->q_head];

        /* Its line is in the log; its record is ended, or a restart
         * would reap and report it again. */
        XLRD_LOG(d, ERROR,
                 "events queue full (%u): dropping the oldest event: %.*s",
                 XLRD_EVENTS_QUEUE_MAX, (int)old->len - 1, old->line);
        if (old->intent)
            xlrd_intent_end(d, old->intent);
        free(old->line);
        d->q_head = (d->q_head + 1) % XLRD_EVENTS_QUEUE_MAX;
        d->q_len--;
        d->metrics.events_dropped++;
    }
    d->queue[(d->q_head + d->q_len) % XLRD_EVENTS_QUEUE_MAX] =
        (xlrd_event){ .line = line, .len = len, .intent = intent };
    d->q_len++;
    xlrd_events_flush(d);
}
