/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_prom.c - Prometheus' text format, and its file replaced
 * atomically (xlr_prom.h).
 *
 * The format (Prometheus' exposition_formats.md, as node_exporter's
 * textfile collector parses it): "# HELP name text" with \\ and \n
 * escaped, "# TYPE name type", then "name{label="value",...} value"
 * lines, label values with \\, \" and \n escaped.  A family's samples
 * must follow its HELP and TYPE, and may not be split by another
 * family: callers write one family at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlr_prom.h"

int xlr_prom_init(xlr_prom *p)
{
    memset(p, 0, sizeof(*p));
    p->f = open_memstream(&p->buf, &p->len);
    return p->f ? 0 : -1;
}

void xlr_prom_dispose(xlr_prom *p)
{
    if (p->f)
        fclose(p->f);
    free(p->buf);
    memset(p, 0, sizeof(*p));
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, the same without ':' for
 * labels; "__" starts the names Prometheus keeps for itself. */
static bool good_name(const char *s, bool label)
{
    if (!s || !*s || (label && !strncmp(s, "__", 2)))
        return false;
    for (const char *c = s; *c; c++) {
        bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     *c == '_' || (!label && *c == ':');
        if (!alpha && (c == s || *c < '0' || *c > '9'))
            return false;
    }
    return true;
}

static void escaped(xlr_prom *p, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", p->f);
        else if (*s == '\n')
            fputs("\\n", p->f);
        else if (quote && *s == '"')
            fputs("\\\"", p->f);
        else
            fputc(*s, p->f);
    }
}

void xlr_prom_family(xlr_prom *p, const char *name, const char *type,
                     const char *help)
{
    if (p->bad || !good_name(name, false) ||
        (strcmp(type, "counter") && strcmp(type, "gauge") &&
         strcmp(type, "histogram"))) {
        p->bad = true;
        return;
    }
    fprintf(p->f, "# HELP %s ", name);
    escaped(p, help, false);
    fprintf(p->f, "\n# TYPE %s %s\n", name, type);
}

static void value(xlr_prom *p, double v)
{
    if (isnan(v))
        fputs("NaN", p->f);
    else if (isinf(v))
        fputs(v > 0 ? "+Inf" : "-Inf", p->f);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0) /* 2^53 */
        fprintf(p->f, "%.0f", v);
    else
        fprintf(p->f, "%.15g", v);
}

/* name{labels[,extra_name="extra_value"]} value */
static void series(xlr_prom *p, const char *name, const char *suffix,
                   const char *const *labels, const char *extra_name,
                   const char *extra_value, double v)
{
    bool first = true;

    if (p->bad)
        return;
    fprintf(p->f, "%s%s", name, suffix);
    for (unsigned i = 0; labels && labels[i]; i += 2) {
        if (!good_name(labels[i], true) || !labels[i + 1]) {
            p->bad = true;
            return;
        }
        fprintf(p->f, "%c%s=\"", first ? '{' : ',', labels[i]);
        escaped(p, labels[i + 1], true);
        fputc('"', p->f);
        first = false;
    }
    if (extra_name) {
        fprintf(p->f, "%c%s=\"%s\"", first ? '{' : ',', extra_name,
                extra_value);
        first = false;
    }
    if (!first)
        fputc('}', p->f);
    fputc(' ', p->f);
    value(p, v);
    fputc('\n', p->f);
}

void xlr_prom_sample(xlr_prom *p, const char *name, const char *const *labels,
                     double v)
{
    if (!good_name(name, false))
        p->bad = true;
    series(p, name, "", labels, NULL, NULL, v);
}

void xlr_prom_histogram(xlr_prom *p, const char *name,
                        const char *const *labels, const double *le,
                        const unsigned long long *bucket, unsigned n,
                        unsigned long long count, double sum)
{
    char b[32];

    if (!good_name(name, false))
        p->bad = true;
    for (unsigned i = 0; i < n; i++) {
        snprintf(b, sizeof(b), "%g", le[i]);
        series(p, name, "_bucket", labels, "le", b, (double)bucket[i]);
    }
    series(p, name, "_bucket", labels, "le", "+Inf", (double)count);
    series(p, name, "_sum", labels, NULL, NULL, sum);
    series(p, name, "_count", labels, NULL, NULL, (double)count);
}

int xlr_prom_finish(xlr_prom *p, const char **text_r, size_t *len_r)
{
    if (p->bad || fflush(p->f) || ferror(p->f))
        return -1;
    *text_r = p->buf;
    *len_r = p->len;
    return 0;
}

/* ---------- the file ---------- */

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t r = write(fd, s, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            return -1;
        }
        s += r;
        n -= (size_t)r;
    }
    return 0;
}

/* The directory part of path ("." for a bare name), opened without
 * following any symlink on the way: the daemon writes as root into a
 * directory that may belong to the collector's user (Debian's
 * prometheus), who must not be able to point it elsewhere. */
static int open_dir(const char *path, const char *base)
{
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_NO_SYMLINKS,
    };
    char *dir;
    int fd;

    if (base == path)
        dir = strdup(".");
    else if (base == path + 1)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(base - path - 1));
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
    free(dir);
    return fd;
}

int xlr_prom_write_file(const char *path, const char *text, size_t len,
                        const char **what_r)
{
    const char *base = strrchr(path, '/');
    char tmp[NAME_MAX + 1];
    unsigned char rnd[6];
    bool created = false;
    int dfd, fd = -1, esave;

    base = base ? base + 1 : path;
    if (!*base || strlen(base) > NAME_MAX - 16) {
        *what_r = "not a file name";
        errno = EINVAL;
        return -1;
    }
    dfd = open_dir(path, base);
    if (dfd < 0) {
        *what_r = errno == ELOOP ? "its directory (a symlink on the way: "
                                   "not followed)"
                                 : "its directory";
        return -1;
    }
    /* Same directory, so renameat(2) replaces in one step; a dot file
     * not ending in .prom, which the textfile collector skips. */
    for (unsigned tries = 0; !created && tries < 8; tries++) {
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
            *what_r = "getrandom";
            goto fail;
        }
        snprintf(tmp, sizeof(tmp), ".%s.%02x%02x%02x%02x%02x%02x", base,
                 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
        /* O_EXCL: a name planted there is never followed or reused. */
        fd = openat(dfd, tmp,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
                        O_NOCTTY,
                    0644);
        if (fd >= 0)
            created = true;
        else if (errno != EEXIST)
            break;
    }
    if (!created) {
        *what_r = "creating a temporary file beside it";
        goto fail;
    }
    /* Whatever the umask: the collector may run as another user. */
    if (fchmod(fd, 0644) < 0) {
        *what_r = "fchmod of the temporary file";
        goto fail;
    }
    if (write_all(fd, text, len) < 0) {
        *what_r = "writing the temporary file";
        goto fail;
    }
    /* No fsync: a reader is safe without one (rename is atomic for every
     * reader), and after a crash the file is rewritten at once; an fsync
     * per reap would cost the daemon a disk flush each time. */
    if (close(fd) < 0) {
        fd = -1;
        *what_r = "closing the temporary file";
        goto fail;
    }
    fd = -1;
    if (renameat(dfd, tmp, dfd, base) < 0) {
        *what_r = "renaming the temporary file over it";
        goto fail;
    }
    close(dfd);
    return 0;

fail:
    esave = errno;
    if (fd >= 0)
        close(fd);
    if (created)
        unlinkat(dfd, tmp, 0);
    close(dfd);
    errno = esave;
    return -1;
}
