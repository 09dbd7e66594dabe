/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_proc.c - finding the tasks of a uid in /proc.
 *
 * A scan is a witness only after the kill: before it, a fork racer's
 * generations live shorter than the scan takes (docs/facts.md F2).  After
 * kill(-1) no task of the uid can fork or clone (the kernel refuses a
 * fork with a fatal signal pending), so a later scan sees every task
 * that is left.  Threads are tasks with their own credentials, so each
 * one is read.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xlreaper_internal.h"

/* SIGKILL is bit 8 of the masks in status (signal n is bit n-1). */
#define SIGKILL_BIT (1ull << 8)

void xlreaper_task_list_init(xlreaper_task_list *list)
{
    list->tasks = NULL;
    list->num = list->cap = 0;
}

void xlreaper_task_list_dispose(xlreaper_task_list *list)
{
    free(list->tasks);
    xlreaper_task_list_init(list);
}

int xlreaper__task_list_add(xlreaper_task_list *list, const xlreaper_task *t)
{
    xlreaper_task *n =
        xlreaper__grow(list->tasks, list->num, &list->cap, sizeof(*n), 16);

    if (!n)
        return XLREAPER_ERROR_NOMEM;
    list->tasks = n;
    list->tasks[list->num++] = *t;
    return 0;
}

/* The value after "Key:\t" on its own line, or NULL. */
const char *xlreaper__status_field(const char *text, const char *end,
                                   const char *key, const char **eol_r)
{
    size_t klen = strlen(key);
    const char *p = text;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        if ((size_t)(nl - p) > klen && !memcmp(p, key, klen) &&
            p[klen] == ':') {
            p += klen + 1;
            while (p < nl && (*p == '\t' || *p == ' '))
                p++;
            if (eol_r)
                *eol_r = nl;
            return p;
        }
        p = nl + 1;
    }
    return NULL;
}

/* The value of one hex or decimal digit, or -1. */
static int digit_value(char c, int base)
{
    int d;

    if (c >= '0' && c <= '9')
        d = c - '0';
    else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
    else
        return -1;
    return d < base ? d : -1;
}

/*
 * Read only within [p, end): the text is the bytes read from /proc, not
 * NUL-terminated, and strtoull reads to the first non-digit, past the
 * buffer (found by tests/fuzz).
 */
int xlreaper__parse_numbers(const char *p, const char *end, int base,
                            unsigned long long *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned long long v = 0;
        const char *start;
        int d;

        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        start = p;
        for (; p < end && (d = digit_value(*p, base)) >= 0; p++) {
            if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
                return -1;
            v = v * (unsigned)base + (unsigned)d;
        }
        if (p == start)
            return -1;
        out[i] = v;
    }
    return 0;
}

int xlreaper__parse_status(const char *text, size_t len, xlreaper_task *t,
                           unsigned *threads_r)
{
    const char *end = text + len, *p;
    unsigned long long v[4];
    size_t i;

    memset(t, 0, sizeof(*t));

    p = xlreaper__status_field(text, end, "Name", NULL);
    if (!p)
        return XLREAPER_ERROR_INVAL;
    /* A DM chooses its own name: keep it printable for logs and JSON. */
    for (i = 0; i < sizeof(t->comm) - 1 && p + i < end && p[i] != '\n'; i++)
        t->comm[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';

    p = xlreaper__status_field(text, end, "State", NULL);
    if (!p || p >= end || !isalpha((unsigned char)*p))
        return XLREAPER_ERROR_INVAL;
    t->state = *p;

    if (!(p = xlreaper__status_field(text, end, "Tgid", NULL)) ||
        xlreaper__parse_numbers(p, end, 10, v, 1))
        return XLREAPER_ERROR_INVAL;
    t->tgid = (pid_t)v[0];
    if (!(p = xlreaper__status_field(text, end, "Pid", NULL)) ||
        xlreaper__parse_numbers(p, end, 10, v, 1))
        return XLREAPER_ERROR_INVAL;
    t->tid = (pid_t)v[0];
    if (!(p = xlreaper__status_field(text, end, "PPid", NULL)) ||
        xlreaper__parse_numbers(p, end, 10, v, 1))
        return XLREAPER_ERROR_INVAL;
    t->ppid = (pid_t)v[0];

    if (!(p = xlreaper__status_field(text, end, "Uid", NULL)) ||
        xlreaper__parse_numbers(p, end, 10, v, 4))
        return XLREAPER_ERROR_INVAL;
    t->ruid = (uid_t)v[0];
    t->euid = (uid_t)v[1];
    t->suid = (uid_t)v[2];
    t->fsuid = (uid_t)v[3];

    /* Absent for some exiting tasks: then the leader is all we see. */
    *threads_r = 1;
    if ((p = xlreaper__status_field(text, end, "Threads", NULL)) &&
        !xlreaper__parse_numbers(p, end, 10, v, 1))
        *threads_r = (unsigned)v[0];

    t->kill_pending = false;
    if ((p = xlreaper__status_field(text, end, "ShdPnd", NULL)) &&
        !xlreaper__parse_numbers(p, end, 16, v, 1) && (v[0] & SIGKILL_BIT))
        t->kill_pending = true;
    if ((p = xlreaper__status_field(text, end, "SigPnd", NULL)) &&
        !xlreaper__parse_numbers(p, end, 16, v, 1) && (v[0] & SIGKILL_BIT))
        t->kill_pending = true;
    return 0;
}

static bool task_has_uid(const xlreaper_task *t, uid_t uid)
{
    return t->ruid == uid || t->euid == uid || t->suid == uid ||
           t->fsuid == uid;
}

/* Reads dirfd/name into buf.  Bytes, or -1 (the task may be gone). */
static ssize_t read_at(int dirfd, const char *name, char *buf, size_t max)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t r;

    if (fd < 0)
        return -1;
    r = xlreaper__read_all(fd, buf, max);
    xlreaper__close_keep_errno(fd);
    return r;
}

void xlreaper__read_wchan(int dirfd, const char *rel, char *buf, size_t size)
{
    char path[320];
    ssize_t r;

    snprintf(path, sizeof(path), "%s/wchan", rel);
    r = read_at(dirfd, path, buf, size - 1);
    buf[r > 0 ? r : 0] = '\0';
    if (!strcmp(buf, "0"))
        buf[0] = '\0';
    for (char *p = buf; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';
}

int xlreaper__proc_read_status(int dirfd, const char *rel,
                               xlreaper__proc_status *st)
{
    char path[320];
    ssize_t r;

    snprintf(path, sizeof(path), "%s/status", rel);
    /* One byte more than fits: a read that fills the buffer was cut. */
    r = read_at(dirfd, path, st->text, sizeof(st->text));
    if (r <= 0)
        return 0;
    if ((size_t)r == sizeof(st->text))
        return XLREAPER__ERROR_TOO_LONG;
    st->text[r] = '\0'; /* so that no number is read past the text */
    st->len = (size_t)r;
    return xlreaper__parse_status(st->text, st->len, &st->t, &st->threads) ==
           0;
}

/* Visits every thread of pid that can be read. */
static int walk_threads(xlreaper__proc_walker *wk, int procfd, const char *pid)
{
    char rel[300];
    int fd, rc = 0;
    DIR *d;
    struct dirent *de;

    snprintf(rel, sizeof(rel), "%s/task", pid);
    fd = openat(procfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0; /* gone */
    d = fdopendir(fd);
    if (!d) {
        xlreaper__close_keep_errno(fd);
        return 0;
    }
    while (!rc && (de = readdir(d))) {
        xlreaper__proc_status st;
        char trel[600];

        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        snprintf(trel, sizeof(trel), "%s/task/%s", pid, de->d_name);
        rc = xlreaper__proc_read_status(procfd, trel, &st);
        if (rc == 1)
            rc = wk->visit(wk->arg, procfd, trel, &st);
    }
    closedir(d);
    return rc;
}

int xlreaper__proc_walk(xlreaper_ctx *ctx, int procfd, DIR *d,
                        xlreaper__proc_walker *wk)
{
    struct dirent *de;
    int rc = 0;

    rewinddir(d);
    while (!rc && (de = readdir(d))) {
        xlreaper__proc_status st;

        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        if (wk->skip_pid && wk->skip_pid(wk->arg, procfd, de->d_name))
            continue;
        rc = xlreaper__proc_read_status(procfd, de->d_name, &st);
        if (rc != 1)
            continue;
        /* Every thread has its own credentials (a raw setresuid is per
         * thread), so a multi-threaded process is read thread by
         * thread; a single-threaded one is its leader, and after a kill
         * no thread can be added meanwhile. */
        if (st.threads <= 1)
            rc = wk->visit(wk->arg, procfd, de->d_name, &st);
        else
            rc = walk_threads(wk, procfd, de->d_name);
        if (rc == XLREAPER__ERROR_TOO_LONG) {
            LOG(ERROR,
                "/proc/%s: a status longer than %zu bytes: its task "
                "cannot be checked",
                de->d_name, sizeof(st.text) - 1);
            rc = XLREAPER_ERROR_FAIL;
        }
    }
    return rc == XLREAPER__PROC_STOP ? 0 : rc;
}

/* The uids one pass looks for, and the list each one's tasks go to:
 * reading /proc costs the same for one uid as for two. */
typedef struct {
    uid_t uid[2];
    xlreaper_task_list *list[2];
    unsigned num;
} scan_want;

static int add_if_ours(int dirfd, const char *rel, const xlreaper_task *t,
                       const scan_want *w)
{
    xlreaper_task copy = *t;
    bool wchan = false;
    int rc;

    for (unsigned i = 0; i < w->num; i++) {
        if (!task_has_uid(t, w->uid[i]))
            continue;
        if (copy.state == 'D' && !wchan) {
            xlreaper__read_wchan(dirfd, rel, copy.wchan, sizeof(copy.wchan));
            wchan = true;
        }
        rc = xlreaper__task_list_add(w->list[i], &copy);
        if (rc)
            return rc;
    }
    return 0;
}

static int want_task(void *arg, int procfd, const char *rel,
                     const xlreaper__proc_status *st)
{
    return add_if_ours(procfd, rel, &st->t, arg);
}

int xlreaper__proc_open(xlreaper_ctx *ctx, int *procfd_r, DIR **dir_r)
{
    int procfd, dupfd;
    DIR *d;

    procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) {
        LOGE(ERROR, "open /proc");
        return XLREAPER_ERROR_FAIL;
    }
    /* readdir gets its own descriptor: procfd stays for openat. */
    dupfd = fcntl(procfd, F_DUPFD_CLOEXEC, 0);
    d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
    if (!d) {
        LOGE(ERROR, "opendir /proc");
        xlreaper__close_keep_errno(dupfd);
        close(procfd);
        return XLREAPER_ERROR_FAIL;
    }
    *procfd_r = procfd;
    *dir_r = d;
    return 0;
}

static int scan(xlreaper_ctx *ctx, const scan_want *w)
{
    xlreaper__proc_walker wk = { .visit = want_task, .arg = (void *)w };
    int procfd, rc;
    DIR *d;

    rc = xlreaper__proc_open(ctx, &procfd, &d);
    if (rc)
        return rc;
    rc = xlreaper__proc_walk(ctx, procfd, d, &wk);
    if (rc == XLREAPER_ERROR_NOMEM)
        LOG(ERROR, "out of memory listing the tasks of uid %lu",
            (unsigned long)w->uid[0]);
    closedir(d);
    close(procfd);
    return rc;
}

int xlreaper_scan_uid(xlreaper_ctx *ctx, uid_t uid, xlreaper_task_list *list)
{
    scan_want w = { .uid = { uid }, .list = { list }, .num = 1 };

    return scan(ctx, &w);
}

int xlreaper__scan_uids(xlreaper_ctx *ctx, uid_t uid, xlreaper_task_list *list,
                        uid_t uid2, xlreaper_task_list *list2)
{
    scan_want w = { .uid = { uid, uid2 }, .list = { list, list2 }, .num = 2 };

    return scan(ctx, &w);
}

/* ---------- after a kill: as much of /proc as the count needs ---------- */

/* nr_threads and the forks since boot, from /proc/loadavg's "r/total"
 * and /proc/stat's "processes".  0, or -1 when unreadable. */
static int kernel_tasks(int procfd, unsigned long *threads_r,
                        unsigned long *forks_r)
{
    char buf[8192];
    const char *p;
    ssize_t r;

    r = read_at(procfd, "loadavg", buf, sizeof(buf) - 1);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    p = strchr(buf, '/');
    if (!p || sscanf(p + 1, "%lu", threads_r) != 1)
        return -1;
    r = read_at(procfd, "stat", buf, sizeof(buf) - 1);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    p = strstr(buf, "\nprocesses ");
    if (!p || sscanf(p + 11, "%lu", forks_r) != 1)
        return -1;
    return 0;
}

typedef struct {
    uid_t uid;
    unsigned long expect, found; /* found: tasks of real uid uid */
    xlreaper_task_list *list;
    unsigned long seen; /* every task read, for the total */
    bool prefilter;
} after_scan;

/* The owner of /proc/PID is the leader's euid: a speed-up that misses
 * what differs (a thread of its own uid, an euid that is not the real
 * uid), so a shortfall forces the full pass. */
static bool after_skip(void *arg, int procfd, const char *pid)
{
    const after_scan *a = arg;
    struct stat st;

    return fstatat(procfd, pid, &st, 0) < 0 || st.st_uid != a->uid;
}

static int after_add(void *arg, int procfd, const char *rel,
                     const xlreaper__proc_status *st)
{
    after_scan *a = arg;
    scan_want w = { .uid = { a->uid }, .list = { a->list }, .num = 1 };
    int rc;

    a->seen++;
    if (!task_has_uid(&st->t, a->uid))
        return 0;
    a->found += st->t.ruid == a->uid;
    rc = add_if_ours(procfd, rel, &st->t, &w);
    if (!rc && a->prefilter && a->found >= a->expect)
        rc = XLREAPER__PROC_STOP;
    return rc;
}

/* One pass; with prefilter only over /proc/PID owned by uid, stopping
 * once the count is accounted for. */
static int after_pass(xlreaper_ctx *ctx, after_scan *a, bool prefilter,
                      int procfd, DIR *d)
{
    xlreaper__proc_walker wk = {
        .skip_pid = prefilter ? after_skip : NULL,
        .visit = after_add,
        .arg = a,
    };
    int rc;

    a->prefilter = prefilter;
    rc = xlreaper__proc_walk(ctx, procfd, d, &wk);
    if (rc == XLREAPER_ERROR_NOMEM)
        LOG(ERROR, "out of memory listing the tasks of uid %lu",
            (unsigned long)a->uid);
    return rc;
}

int xlreaper__scan_after_kill(xlreaper_ctx *ctx, uid_t uid,
                              unsigned long expect, bool full_if_short,
                              xlreaper_task_list *list, bool *sound_r,
                              bool *short_r)
{
    after_scan a = { .uid = uid, .expect = expect, .list = list };
    unsigned long threads0, forks0, threads1, forks1;
    unsigned start_num = list->num;
    int procfd, rc;
    DIR *d;

    *sound_r = false;
    *short_r = false;
    rc = xlreaper__proc_open(ctx, &procfd, &d);
    if (rc)
        return rc;
    if (expect != ULONG_MAX) {
        rc = after_pass(ctx, &a, true, procfd, d);
        if (rc || a.found >= expect) {
            *sound_r = !rc;
            goto out;
        }
        list->num = start_num; /* the full pass lists them again */
        if (!full_if_short) {
            *short_r = true;
            goto out;
        }
        a.found = a.seen = 0;
    }
    /*
     * Every task, and the kernel's own total around the pass.  A task
     * alive from the first read to the last is listed, so the pass
     * sees at least threads1 - (forks1 - forks0) of them; fewer means
     * /proc hides tasks from us (hidepid without CAP_SYS_PTRACE,
     * another pid namespace), and then "none found" proves nothing.
     */
    if (kernel_tasks(procfd, &threads0, &forks0) < 0) {
        LOGE(ERROR, "reading the kernel's task total");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    rc = after_pass(ctx, &a, false, procfd, d);
    if (rc)
        goto out;
    if (kernel_tasks(procfd, &threads1, &forks1) < 0) {
        LOGE(ERROR, "reading the kernel's task total");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    *sound_r = a.seen + (forks1 - forks0) >= threads1;
    if (!*sound_r)
        LOG(WARN,
            "/proc showed %lu tasks, the kernel has at least %lu: it hides "
            "tasks (hidepid? another pid namespace?); a scan proves no "
            "uid empty here",
            a.seen, threads1 - (forks1 - forks0));
    (void)threads0;

out:
    closedir(d);
    close(procfd);
    return rc;
}
