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

#include "xl_reaperd_events.h"
#include "xl_reaperd_log.h"

/* How often a queue that could not be written is tried again. */
#define RETRY_US 1000000u

int xlrd_events_init(xlrd_events *ev, const char *path, xlrd_state *st,
                     xlrd_metrics *m)
{
    memset(ev, 0, sizeof(*ev));
    ev->path = path;
    ev->fd = -1;
    ev->state = st;
    ev->metrics = m;
    ev->queue = calloc(XLRD_EVENTS_QUEUE_MAX, sizeof(*ev->queue));
    return ev->queue ? 0 : -1;
}

void xlrd_events_dispose(xlrd_events *ev)
{
    for (unsigned i = 0; ev->queue && i < ev->q_len; i++)
        free(ev->queue[(ev->q_head + i) % XLRD_EVENTS_QUEUE_MAX].line);
    free(ev->queue);
    ev->queue = NULL;
    ev->q_len = 0;
    if (ev->fd >= 0)
        close(ev->fd);
    ev->fd = -1;
}

/*
 * A daemon killed inside a write(2) that crossed a page may leave part
 * of a line: the kernel stops a write to a file between two pages when
 * a fatal signal is pending.  That line's intent record has no end, so
 * the next run writes its event again; the cut part goes, so that the
 * next line starts a line and the cut one is not taken for written.
 */
static void cut_torn_tail(const char *path, int fd)
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
            XLRD_LOG(WARN,
                     "events file %s: cutting %lld bytes of a line a killed "
                     "run left unfinished (its event is written again)",
                     path, (long long)(st.st_size - (from + i)));
            if (ftruncate(fd, from + i) < 0)
                XLRD_LOGE(ERROR, "events file %s: ftruncate", path);
            return;
        }
        end = from;
    }
    if (ftruncate(fd, 0) < 0) /* one cut line and nothing else */
        XLRD_LOGE(ERROR, "events file %s: ftruncate", path);
}

int xlrd_events_open(xlrd_events *ev)
{
    int fd;

    if (!ev->path)
        return 0;
    fd = open(ev->path,
              O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
              0640);
    if (fd < 0) {
        XLRD_LOGE(ERROR, "opening the events file %s", ev->path);
        return -1;
    }
    cut_torn_tail(ev->path, fd);
    if (ev->fd >= 0)
        close(ev->fd);
    ev->fd = fd;
    return 0;
}

void xlrd_events_flush(xlrd_events *ev)
{
    unsigned written = 0;

    while (ev->q_len) {
        xlrd_event *q = &ev->queue[ev->q_head];
        int e =
            ev->fd >= 0 ? xlrd_write_line(ev->fd, q->line, q->len, true) : 0;

        if (e) {
            if (e != ev->write_errno) {
                errno = e;
                XLRD_LOGE(ERROR,
                          "writing to the events file %s: %u event%s "
                          "queued in memory (at most %u), written when it "
                          "can be",
                          ev->path, ev->q_len, ev->q_len == 1 ? "" : "s",
                          XLRD_EVENTS_QUEUE_MAX);
            }
            ev->write_errno = e;
            xlrd_metrics_count(ev->metrics, XLRD_COUNT_EVENT_WRITE_ERRORS, 1);
            ev->next_flush_us = xlreaper_now_us() + RETRY_US;
            return;
        }
        if (ev->fd >= 0)
            xlrd_metrics_count(ev->metrics, XLRD_COUNT_EVENTS_WRITTEN, 1);
        if (q->intent)
            xlrd_intent_end(ev->state, q->intent, false);
        free(q->line);
        q->line = NULL;
        ev->q_head = (ev->q_head + 1) % XLRD_EVENTS_QUEUE_MAX;
        ev->q_len--;
        written++;
    }
    if (ev->write_errno && written)
        XLRD_LOG(NOTICE, "events file %s: written again (%u queued event%s)",
                 ev->path, written, written == 1 ? "" : "s");
    ev->write_errno = 0;
    ev->next_flush_us = 0;
}

void xlrd_events_put(xlrd_events *ev, char *line, size_t len, uint64_t intent)
{
    if (ev->q_len == XLRD_EVENTS_QUEUE_MAX) {
        xlrd_event *old = &ev->queue[ev->q_head];

        /* Its line is in the log; its record is ended, or a restart
         * would reap and report it again. */
        XLRD_LOG(ERROR,
                 "events queue full (%u): dropping the oldest event: %.*s",
                 XLRD_EVENTS_QUEUE_MAX, (int)old->len - 1, old->line);
        if (old->intent)
            xlrd_intent_end(ev->state, old->intent, false);
        free(old->line);
        ev->q_head = (ev->q_head + 1) % XLRD_EVENTS_QUEUE_MAX;
        ev->q_len--;
        xlrd_metrics_count(ev->metrics, XLRD_COUNT_EVENTS_DROPPED, 1);
    }
    ev->queue[(ev->q_head + ev->q_len) % XLRD_EVENTS_QUEUE_MAX] =
        (xlrd_event){ .line = line, .len = len, .intent = intent };
    ev->q_len++;
    xlrd_events_flush(ev);
}

unsigned xlrd_events_queued(const xlrd_events *ev)
{
    return ev->q_len;
}

uint64_t xlrd_events_next_flush_us(const xlrd_events *ev)
{
    return ev->next_flush_us;
}
