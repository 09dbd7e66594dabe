/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_proc.c - what the audit reads in /proc: one pass over
 * every task, bucketed later by uid; the host's fork counter that tells
 * whether a pass can have missed anything; and what a DM shows of
 * itself (status, cmdline, limits).  Everything here is written by, or
 * about, processes we do not trust: sizes are bounded and every field
 * is validated.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"

/* The inode of the initial pid namespace (PROC_PID_INIT_INO): fixed in
 * Linux since namespaces got inodes (3.8). */
#define PROC_PID_INIT_INO 0xEFFFFFFCu

/* ---------- parsers ---------- */

/* What the audit reads in a status past xlreaper__parse_status's. */
static int parse_status_more(const char *text, size_t len, xlreaper_task *at)
{
    const char *end = text + len, *p, *eol;
    unsigned long long v[4];

    if (!(p = xlreaper__status_field(text, end, "Gid", &eol)) ||
        xlreaper__parse_numbers(p, eol, 10, v, 4))
        return XLREAPER_ERROR_INVAL;
    at->audit.rgid = (gid_t)v[0];
    at->audit.egid = (gid_t)v[1];
    at->audit.sgid = (gid_t)v[2];
    at->audit.fsgid = (gid_t)v[3];

    /* "Groups:\t27 100 \n", or nothing after the tab. */
    if (!(p = xlreaper__status_field(text, end, "Groups", &eol)))
        return XLREAPER_ERROR_INVAL;
    for (;;) {
        /* Blanks as xlreaper__parse_numbers() skips them: a tab skipped there but not
         * here would never be passed (found by tests/fuzz). */
        while (p < eol && (*p == ' ' || *p == '\t'))
            p++;
        if (p >= eol)
            break;
        if (xlreaper__parse_numbers(p, eol, 10, v, 1))
            return XLREAPER_ERROR_INVAL;
        if (at->audit.ngroups < XLREAPER_TASK_GROUPS_KEPT)
            at->audit.groups[at->audit.ngroups] = (gid_t)v[0];
        at->audit.ngroups++;
        while (p < eol && isdigit((unsigned char)*p))
            p++;
    }

    at->audit.nnp = -1;
    if ((p = xlreaper__status_field(text, end, "NoNewPrivs", &eol)) &&
        !xlreaper__parse_numbers(p, eol, 10, v, 1) && v[0] <= 1)
        at->audit.nnp = (int)v[0];

    at->audit.seccomp = -1;
    if ((p = xlreaper__status_field(text, end, "Seccomp", &eol)) &&
        !xlreaper__parse_numbers(p, eol, 10, v, 1) && v[0] <= 2)
        at->audit.seccomp = (int)v[0];

    at->audit.caps_known = false;
    if ((p = xlreaper__status_field(text, end, "CapPrm", &eol)) &&
        !xlreaper__parse_numbers(p, eol, 16, v, 1)) {
        at->audit.cap_prm = v[0];
        if ((p = xlreaper__status_field(text, end, "CapEff", &eol)) &&
            !xlreaper__parse_numbers(p, eol, 16, v, 1)) {
            at->audit.cap_eff = v[0];
            /* CapAmb is newer (4.3); absent means none. */
            at->audit.cap_amb = 0;
            if ((p = xlreaper__status_field(text, end, "CapAmb", &eol)) &&
                !xlreaper__parse_numbers(p, eol, 16, v, 1))
                at->audit.cap_amb = v[0];
            at->audit.caps_known = true;
        }
    }
    return 0;
}

int xlreaper__audit_parse_status(const char *text, size_t len,
                                 xlreaper_task *at)
{
    unsigned threads;
    int rc;

    memset(at, 0, sizeof(*at));
    rc = xlreaper__parse_status(text, len, at, &threads);
    if (rc)
        return rc;
    at->audit.threads = threads;
    return parse_status_more(text, len, at);
}

int xlreaper__audit_parse_forks_line(const char *line, uint64_t *forks_r)
{
    unsigned long long v;
    const char *eol;

    if (strncmp(line, "processes ", 10))
        return 0;
    eol = line + strlen(line);
    if (eol > line && eol[-1] == '\n')
        eol--;
    if (xlreaper__parse_numbers(line + 10, eol, 10, &v, 1))
        return 0;
    *forks_r = v;
    return 1;
}

int xlreaper__audit_read_forks(xlreaper_ctx *ctx, uint64_t *forks_r)
{
    FILE *f = fopen("/proc/stat", "re");
    char *line = NULL;
    size_t cap = 0;
    int found = 0;

    if (!f) {
        LOGE(ERROR, "open /proc/stat");
        return XLREAPER_ERROR_FAIL;
    }
    while (!found && getline(&line, &cap, f) > 0)
        found = xlreaper__audit_parse_forks_line(line, forks_r);
    free(line);
    fclose(f);
    if (!found) {
        LOG(ERROR, "/proc/stat has no \"processes\" line");
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

bool xlreaper__audit_init_pidns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 &&
           st.st_ino == PROC_PID_INIT_INO;
}

/* ---------- limits ---------- */

/* /proc/<pid>/limits names its rows; the kernel's lnames[] order is the
 * RLIMIT_* order, but we match by name, not by position. */
static const struct {
    int resource;
    const char *row;
    const char *name;
} limit_rows[] = {
    { RLIMIT_CPU, "Max cpu time", "CPU" },
    { RLIMIT_FSIZE, "Max file size", "FSIZE" },
    { RLIMIT_DATA, "Max data size", "DATA" },
    { RLIMIT_STACK, "Max stack size", "STACK" },
    { RLIMIT_CORE, "Max core file size", "CORE" },
    { RLIMIT_RSS, "Max resident set", "RSS" },
    { RLIMIT_NPROC, "Max processes", "NPROC" },
    { RLIMIT_NOFILE, "Max open files", "NOFILE" },
    { RLIMIT_MEMLOCK, "Max locked memory", "MEMLOCK" },
    { RLIMIT_AS, "Max address space", "AS" },
    { RLIMIT_LOCKS, "Max file locks", "LOCKS" },
    { RLIMIT_SIGPENDING, "Max pending signals", "SIGPENDING" },
    { RLIMIT_MSGQUEUE, "Max msgqueue size", "MSGQUEUE" },
    { RLIMIT_NICE, "Max nice priority", "NICE" },
    { RLIMIT_RTPRIO, "Max realtime priority", "RTPRIO" },
    { RLIMIT_RTTIME, "Max realtime timeout", "RTTIME" },
};

#define NUM_LIMIT_ROWS (sizeof(limit_rows) / sizeof(limit_rows[0]))

const char *xlreaper__audit_rlimit_name(int resource)
{
    for (size_t i = 0; i < NUM_LIMIT_ROWS; i++)
        if (limit_rows[i].resource == resource)
            return limit_rows[i].name;
    return "?";
}

/* One value: "unlimited" or a number, then blanks. */
static const char *limit_value(const char *p, const char *eol, uint64_t *v)
{
    unsigned long long n;
    const char *s;

    while (p < eol && *p == ' ')
        p++;
    if ((size_t)(eol - p) >= 9 && !memcmp(p, "unlimited", 9)) {
        *v = XLREAPER__RLIM_INF;
        p += 9;
    } else {
        s = p;
        while (p < eol && isdigit((unsigned char)*p))
            p++;
        if (p == s || xlreaper__parse_numbers(s, p, 10, &n, 1))
            return NULL;
        *v = n;
    }
    if (p < eol && *p != ' ')
        return NULL;
    return p;
}

int xlreaper__audit_parse_limit(const char *text, size_t len, int resource,
                                uint64_t *soft_r, uint64_t *hard_r)
{
    const char *end = text + len, *row = NULL;
    size_t rlen;

    for (size_t i = 0; i < NUM_LIMIT_ROWS; i++)
        if (limit_rows[i].resource == resource)
            row = limit_rows[i].row;
    if (!row)
        return XLREAPER_ERROR_INVAL;
    rlen = strlen(row);

    for (const char *p = text; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        /* The name is padded with spaces: "Max processes   64 ...". */
        if ((size_t)(eol - p) > rlen && !memcmp(p, row, rlen) &&
            p[rlen] == ' ') {
            const char *q = limit_value(p + rlen, eol, soft_r);
            if (!q || !limit_value(q, eol, hard_r))
                return XLREAPER_ERROR_INVAL;
            return 0;
        }
        p = eol + 1;
    }
    return XLREAPER_ERROR_INVAL;
}

/* ---------- command line ---------- */

static bool arg_is(const char *a, size_t alen, const char *opt)
{
    size_t olen = strlen(opt);

    /* QEMU takes "-opt" and "--opt" alike. */
    if (alen >= 2 && a[0] == '-' && a[1] == '-') {
        a++;
        alen--;
    }
    return alen == olen && !memcmp(a, opt, olen);
}

/* value (n bytes) into buf as QemuOpts reads it: ",," is ",".  False
 * when it does not fit. */
static bool unescape(const char *v, size_t n, char *buf, size_t size,
                     size_t *len_r)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        if (o + 1 >= size)
            return false;
        buf[o++] = v[i];
        if (v[i] == ',' && i + 1 < n && v[i + 1] == ',')
            i++;
    }
    buf[o] = '\0';
    *len_r = o;
    return true;
}

static void set_user(xlreaper__audit_cmdline *out, const char *v, size_t n,
                     bool run_with)
{
    out->nuser++;
    out->user_run_with = run_with;
    /* Too long for a uid:gid or a user name libxl gives: "?", which
     * names no uid. */
    if (n >= sizeof(out->user_buf) || memchr(v, '\0', n))
        n = 0;
    memcpy(out->user_buf, n ? v : "?", n ? n : 1);
    out->user_buf[n ? n : 1] = '\0';
    out->user = out->user_buf;
}

/* -run-with's chroot= and user= (QEMU 8.1+ and 9.1+; libxl 4.20 gives
 * each in a -run-with of its own).  QemuOpts elements are split at a
 * single ','; ",," is a literal one. */
static void parse_run_with(const char *v, size_t len,
                           xlreaper__audit_cmdline *out)
{
    const char *end = v + len;

    for (const char *q = v; q < end;) {
        const char *c = q;
        size_t n;

        while (c < end && !(*c == ',' && !(c + 1 < end && c[1] == ',')))
            c += *c == ',' ? 2 : 1;
        if (c > end)
            c = end;
        n = (size_t)(c - q);
        if (n >= 7 && !memcmp(q, "chroot=", 7)) {
            if (unescape(q + 7, n - 7, out->chroot_buf,
                         sizeof(out->chroot_buf), &out->chroot_len)) {
                out->chroot = out->chroot_buf;
            } else {
                /* Not absolute: the chroot check says unknown. */
                out->chroot = "";
                out->chroot_len = 0;
            }
            out->chroot_run_with = true;
        } else if (n >= 5 && !memcmp(q, "user=", 5)) {
            char u[64];
            size_t ul;
            if (unescape(q + 5, n - 5, u, sizeof(u), &ul))
                set_user(out, u, ul, true);
            else
                set_user(out, "", 0, true);
        }
        q = c + 1;
    }
}

#define PROBE_ARGC 11

void xlreaper__audit_parse_cmdline(const char *text, size_t len,
                                   xlreaper__audit_cmdline *out)
{
    const char *end = text + len, *p = text;
    /* What the argument before was: an option whose value this one is
     * (as QEMU reads them: xlreaper_qemu_args.c), an option we do not
     * know, or neither. */
    xlreaper__qemu_opt pending = XLREAPER__QOPT_NONE;
    bool after_unknown = false;
    char *argv[PROBE_ARGC + 1];
    unsigned argc = 0;
    bool argv_ok = true;

    memset(out, 0, sizeof(*out));
    while (p < end) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        size_t alen = nul ? (size_t)(nul - p) : (size_t)(end - p);
        xlreaper__qemu_opt kind;

        /* The probe is matched on whole, NUL-ended arguments only. */
        if (argc < PROBE_ARGC && nul)
            argv[argc] = (char *)p;
        else
            argv_ok = false;

        if (pending == XLREAPER__QOPT_XEN_DOMID) {
            unsigned long v;
            if (xlreaper__parse_ulong(p, alen, xlreaper_max_domid(), &v) ||
                v == 0) {
                out->domid_bad = true;
            } else {
                if (out->ndomid && out->domid != v)
                    out->domid_conflict = true;
                out->domid = (uint32_t)v;
            }
            out->ndomid++;
        } else if (pending == XLREAPER__QOPT_CHROOT) {
            out->chroot = p;
            out->chroot_len = alen;
            out->chroot_run_with = false;
        } else if (pending == XLREAPER__QOPT_RUNAS) {
            set_user(out, p, alen, false);
        } else if (pending == XLREAPER__QOPT_RUN_WITH) {
            parse_run_with(p, alen, out);
        }
        if (pending != XLREAPER__QOPT_NONE) {
            /* A value, whatever it looks like. */
            pending = XLREAPER__QOPT_NONE;
            after_unknown = false;
        } else if (argc) {
            kind = xlreaper__qemu_opt_kind(p, alen);
            if (arg_is(p, alen, "-xen-domid-restrict"))
                out->restrict_opt = true;
            if (kind >= XLREAPER__QOPT_XEN_DOMID) {
                /* An option we read, after one that may take it: QEMU
                 * may not see it as an option at all. */
                if (after_unknown)
                    out->ambiguous = true;
                pending = kind;
            }
            after_unknown = kind == XLREAPER__QOPT_UNKNOWN;
        }
        argc++;
        p += alen + 1;
    }
    /* A -xen-domid as the last argument has no value. */
    if (pending == XLREAPER__QOPT_XEN_DOMID) {
        out->domid_bad = true;
        out->ndomid++;
    }
    if (argv_ok && argc == PROBE_ARGC) {
        int fd;
        argv[argc] = NULL;
        out->libxl_probe = xlreaper_libxl_probe_line(argv, &fd) == 1;
    }
}

/* ---------- the pass ---------- */

bool xlreaper__audit_watched(const xlreaper__audit_watch *w, uid_t uid)
{
    return (uid >= w->base && uid - w->base <= xlreaper_max_domid()) ||
           uid == w->pet ||
           (w->shared != XLREAPER_AUDIT_NO_UID && uid == w->shared);
}

typedef struct {
    const xlreaper__audit_watch *w;
    xlreaper_task_list *out;
} pass_arg;

static bool task_watched(const xlreaper__audit_watch *w,
                         const xlreaper_task *t)
{
    return xlreaper__audit_watched(w, t->ruid) ||
           xlreaper__audit_watched(w, t->euid) ||
           xlreaper__audit_watched(w, t->suid) ||
           xlreaper__audit_watched(w, t->fsuid);
}

static int pass_visit(void *arg, int procfd, const char *rel,
                      const xlreaper__proc_status *st)
{
    pass_arg *pa = arg;
    xlreaper_task at;

    (void)procfd;
    (void)rel;
    if (!task_watched(pa->w, &st->t))
        return 0;
    at = st->t; /* at.audit all 0 (xlreaper__parse_status) */
    at.audit.threads = st->threads;
    if (parse_status_more(st->text, st->len, &at))
        return 0;
    return xlreaper__task_list_add(pa->out, &at);
}

int xlreaper__audit_pass(xlreaper_ctx *ctx, const xlreaper__audit_watch *w,
                         xlreaper_task_list *out)
{
    pass_arg pa = { .w = w, .out = out };
    xlreaper__proc_walker wk = { .visit = pass_visit, .arg = &pa };
    int procfd, rc;
    DIR *d;

    rc = xlreaper__proc_open(ctx, &procfd, &d);
    if (rc)
        return rc;
    rc = xlreaper__proc_walk(ctx, procfd, d, &wk);
    if (rc == XLREAPER_ERROR_NOMEM)
        LOG(ERROR, "out of memory listing the tasks of the uid range");
    closedir(d);
    close(procfd);
    return rc;
}
