/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_prom.h - metrics in Prometheus' text exposition format, as
 * node_exporter's textfile collector reads them, and the file they go
 * to, replaced atomically.  Used by `xl-reaper audit --prometheus` and
 * by xl-reaperd.  One job: format and write; what is measured is the
 * caller's.
 *
 *     xlr_prom p;
 *     xlr_prom_init(&p);
 *     xlr_prom_family(&p, "xl_reaper_x_total", "counter", "What x is.");
 *     xlr_prom_sample(&p, "xl_reaper_x_total", XLR_PROM_LABELS("k", v), 3);
 *     rc = xlr_prom_finish(&p, &text, &len);   (or xlr_prom_write_file)
 *     xlr_prom_dispose(&p);
 *
 * Every sample of a family follows its HELP and TYPE lines, as the
 * format wants; names are checked, label values and help text escaped.
 * A mistake (a bad name, out of memory) sticks: finish then fails, and
 * nothing half-made is ever written.
 */
#ifndef XLR_PROM_H
#define XLR_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct {
    FILE *f; /* open_memstream */
    char *buf;
    size_t len;
    bool bad;
} xlr_prom;

/* A NULL-terminated list of label name, value, name, value, ... */
#define XLR_PROM_LABELS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define XLR_PROM_NO_LABELS ((const char *const *)NULL)

/* 0, or -1 (out of memory). */
int xlr_prom_init(xlr_prom *p);
void xlr_prom_dispose(xlr_prom *p);

/* type: "counter", "gauge" or "histogram". */
void xlr_prom_family(xlr_prom *p, const char *name, const char *type,
                     const char *help);
void xlr_prom_sample(xlr_prom *p, const char *name, const char *const *labels,
                     double value);

/*
 * A histogram's series from cumulative counts: bucket[i] counts the
 * observations <= le[i] (n bounds, ascending), count all of them (the
 * +Inf bucket), sum their total.  labels are added to each series.
 */
void xlr_prom_histogram(xlr_prom *p, const char *name,
                        const char *const *labels, const double *le,
                        const unsigned long long *bucket, unsigned n,
                        unsigned long long count, double sum);

/* The text so far, owned by p.  0, or -1 when something went wrong
 * before (then no text). */
int xlr_prom_finish(xlr_prom *p, const char **text_r, size_t *len_r);

/*
 * Replaces path with the text, atomically for every reader: written to
 * a temporary file in path's own directory (a dot file whose name does
 * not end in .prom, so the collector never reads it), mode 0644, then
 * renamed over path.  A reader sees the old file or the new one, never
 * part of one.  No symlink is followed on the way to the directory
 * (openat2 RESOLVE_NO_SYMLINKS), nor in its place.  0, or -1 with errno
 * set and what failed in what_r (a static string).
 */
int xlr_prom_write_file(const char *path, const char *text, size_t len,
                        const char **what_r);

#endif /* XLR_PROM_H */
