/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_dmrec.c - root's record of a DM: what it was started as.
 *
 * A DM's own account of itself (its argv, its environment, anything in
 * its memory) is the attacker speaking: a DM can rewrite its argv to say
 * "-chroot /", and can make reads of its cmdline block for good (its own
 * mmap lock).  So the spawn, under the lock and before the DM runs a
 * line of its own code, writes what root started it as:
 *
 *     <dir of lock_file>/xl-reaper-dm-<domid>.record
 *
 * root's, mode 0600, written whole under another name and renamed over
 * the old one.  The audit (xlreaper_audit_dm.c) compares what the kernel
 * shows of the DM with it, and trusts it only as a regular file of
 * root's that no one else may read or write.  Text, one "key value"
 * line each, bytes outside printable ASCII and '%' as %XX:
 *
 *     xl-reaper-dm-record 1
 *     domid 3
 *     pid 1234            the DM (in place: the wrapper itself)
 *     start 56789         field 22 of /proc/PID/stat
 *     mode runas          or exec
 *     uid 6000003
 *     gid 6000000
 *     root /var/run/xen/qemu-root-3     or "-": none
 *     rlimit 6 64         resource, limit ("inf": unlimited); repeated
 *     nnp 1
 *     unshare ns net      or "-"; ns is the mount and IPC namespaces
 *     seccomp setid       or "-"
 *     path /usr/bin/qemu-system-i386
 *     arg ...             argv, in order, argv[0] first; repeated
 *     end
 *
 * The reap removes it once the process it names is gone.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlreaper_internal.h"

#define MAGIC "xl-reaper-dm-record 1"
#define RECORD_MAX (256u * 1024)

char *xlreaper__dmrec_path(const xlreaper_config *cfg, uint32_t domid)
{
    const char *slash = strrchr(cfg->lock_file, '/');
    int dirlen = slash ? (int)(slash - cfg->lock_file) : 1;
    const char *dir = slash ? cfg->lock_file : ".";
    char *p;

    if (asprintf(&p, "%.*s/xl-reaper-dm-%u.record", dirlen, dir, domid) < 0)
        return NULL;
    return p;
}

void xlreaper__dmrec_dispose(xlreaper__dmrec *r)
{
    free(r->root);
    free(r->path);
    free(r->argv);
    memset(r, 0, sizeof(*r));
}

/* ---------- writing ---------- */

static void put_escaped(xlreaper__sb *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || c == '%')
            xlreaper__sb_printf(sb, "%%%02X", c);
        else
            xlreaper__sb_printf(sb, "%c", c);
    }
}

static char *format(const xlreaper__dmrec *r)
{
    xlreaper__sb sb = { 0 };
    size_t off = 0;

    xlreaper__sb_printf(&sb,
                        MAGIC "\ndomid %u\npid %ld\nstart %llu\nmode %s\n"
                              "uid %lu\ngid %lu\nroot ",
                        r->domid, (long)r->pid, r->start,
                        r->runas ? "runas" : "exec", (unsigned long)r->uid,
                        (unsigned long)r->gid);
    if (r->root)
        put_escaped(&sb, r->root, strlen(r->root));
    else
        xlreaper__sb_printf(&sb, "-");
    xlreaper__sb_printf(&sb, "\n");
    for (unsigned i = 0; i < r->num_rl; i++) {
        if (r->rl[i].limit == UINT64_MAX)
            xlreaper__sb_printf(&sb, "rlimit %d inf\n", r->rl[i].resource);
        else
            xlreaper__sb_printf(&sb, "rlimit %d %llu\n", r->rl[i].resource,
                                (unsigned long long)r->rl[i].limit);
    }
    xlreaper__sb_printf(&sb, "nnp %d\nunshare %s%s%s\nseccomp %s\npath ",
                        r->nnp, r->unshare_ns ? "ns" : "",
                        r->unshare_ns && r->unshare_net ? " " : "",
                        r->unshare_net   ? "net"
                        : !r->unshare_ns ? "-"
                                         : "",
                        r->seccomp_setid ? "setid" : "-");
    put_escaped(&sb, r->path ? r->path : "", r->path ? strlen(r->path) : 0);
    xlreaper__sb_printf(&sb, "\n");
    while (r->argv && off < r->argv_len) {
        size_t n = strnlen(r->argv + off, r->argv_len - off);
        xlreaper__sb_printf(&sb, "arg ");
        put_escaped(&sb, r->argv + off, n);
        xlreaper__sb_printf(&sb, "\n");
        off += n + 1;
    }
    xlreaper__sb_printf(&sb, "end\n");
    if (sb.oom) {
        xlreaper__sb_dispose(&sb);
        return NULL;
    }
    return sb.buf;
}

int xlreaper__dmrec_write(xlreaper_ctx *ctx, const xlreaper__dmrec *r)
{
    char *path = xlreaper__dmrec_path(ctx->cfg, r->domid), *tmp = NULL;
    char *text = format(r);
    int rc = XLREAPER_ERROR_NOMEM, fd = -1;

    if (!path || !text || asprintf(&tmp, "%s.new", path) < 0) {
        tmp = NULL;
        goto out;
    }
    rc = XLREAPER_ERROR_FAIL;
    /* Under the lock no one else writes it; a leftover of a writer that
     * died goes. */
    if (unlink(tmp) < 0 && errno != ENOENT) {
        LOGED(ERROR, r->domid, "removing %s", tmp);
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod(fd, 0600) < 0 ||
        xlreaper__write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0) {
        LOGED(ERROR, r->domid, "writing %s", tmp);
        goto out;
    }
    if (close(fd) < 0) {
        fd = -1;
        LOGED(ERROR, r->domid, "writing %s", tmp);
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        LOGED(ERROR, r->domid, "renaming %s to %s", tmp, path);
        goto out;
    }
    LOGD(DEBUG, r->domid, "device model pid %ld recorded in %s", (long)r->pid,
         path);
    rc = 0;

out:
    if (fd >= 0) {
        xlreaper__close_keep_errno(fd);
        unlink(tmp);
    }
    free(text);
    free(tmp);
    free(path);
    return rc;
}

/* ---------- reading ---------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescapes v[0..n) into a malloc'd buffer; *len_r its length (it may
 * hold NULs only if the escapes say so, which is refused). */
static char *unescape(const char *v, size_t n, size_t *len_r)
{
    char *out = malloc(n + 1);
    size_t o = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i] != '%') {
            if ((unsigned char)v[i] <= 0x20 || (unsigned char)v[i] >= 0x7f)
                goto bad;
            out[o++] = v[i];
            continue;
        }
        if (i + 2 >= n)
            goto bad;
        {
            int hi = hexval(v[i + 1]), lo = hi < 0 ? -1 : hexval(v[i + 2]);
            if (lo < 0 || (hi == 0 && lo == 0))
                goto bad;
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        }
    }
    out[o] = '\0';
    *len_r = o;
    return out;
bad:
    free(out);
    return NULL;
}

static int num(const char *v, size_t n, unsigned long long max,
               unsigned long long *out)
{
    unsigned long x;

    if (xlreaper__parse_ulong(
            v, n, max > ULONG_MAX ? ULONG_MAX : (unsigned long)max, &x))
        return -1;
    *out = x;
    return 0;
}

/* The key of a line is k (klen bytes long). */
#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(key, k, klen))

/* A line of a key every record has: 1 with its bit set in *seen, 0 for
 * another key, -1 for a bad value. */
static int parse_required(xlreaper__dmrec *r, const char *key, size_t klen,
                          const char *v, size_t vlen, unsigned *seen)
{
    unsigned long long x;
    size_t n;

    if (KEY("domid")) {
        if (num(v, vlen, xlreaper_max_domid(), &x) || !x)
            return -1;
        r->domid = (uint32_t)x;
        *seen |= 1;
    } else if (KEY("pid")) {
        if (num(v, vlen, INT_MAX, &x) || !x)
            return -1;
        r->pid = (pid_t)x;
        *seen |= 2;
    } else if (KEY("start")) {
        if (num(v, vlen, ULONG_MAX, &x))
            return -1;
        r->start = x;
        *seen |= 4;
    } else if (KEY("mode")) {
        if (vlen == 5 && !memcmp(v, "runas", 5))
            r->runas = true;
        else if (vlen != 4 || memcmp(v, "exec", 4))
            return -1;
        *seen |= 8;
    } else if (KEY("uid")) {
        if (num(v, vlen, UINT32_MAX - 1, &x))
            return -1;
        r->uid = (uid_t)x;
        *seen |= 16;
    } else if (KEY("gid")) {
        if (num(v, vlen, UINT32_MAX - 1, &x))
            return -1;
        r->gid = (gid_t)x;
        *seen |= 32;
    } else if (KEY("root")) {
        if (r->root)
            return -1;
        if (!(vlen == 1 && v[0] == '-')) {
            r->root = unescape(v, vlen, &n);
            if (!r->root || r->root[0] != '/')
                return -1;
        }
        *seen |= 64;
    } else {
        return 0;
    }
    return 1;
}

/* "rlimit RESOURCE LIMIT" (LIMIT a number or "inf").  0 or -1. */
static int parse_rlimit(xlreaper__dmrec *r, const char *v, size_t vlen)
{
    const char *sp = memchr(v, ' ', vlen), *end = v + vlen;
    unsigned long long res, lim;

    if (!sp || r->num_rl >= XLREAPER_MAX_RLIMITS + 1 ||
        num(v, (size_t)(sp - v), RLIM_NLIMITS - 1, &res))
        return -1;
    if ((size_t)(end - sp - 1) == 3 && !memcmp(sp + 1, "inf", 3))
        lim = UINT64_MAX;
    else if (num(sp + 1, (size_t)(end - sp - 1), ULONG_MAX, &lim))
        return -1;
    r->rl[r->num_rl].resource = (int)res;
    r->rl[r->num_rl].limit = lim;
    r->num_rl++;
    return 0;
}

/* A line of any other key; one not known is passed over.  The args go
 * to *args, each followed by a NUL.  0 or -1. */
static int parse_optional(xlreaper__dmrec *r, const char *key, size_t klen,
                          const char *v, size_t vlen, xlreaper__sb *args)
{
    unsigned long long x;
    size_t n;

    if (KEY("rlimit"))
        return parse_rlimit(r, v, vlen);
    if (KEY("nnp")) {
        if (num(v, vlen, 1, &x))
            return -1;
        r->nnp = x;
    } else if (KEY("unshare")) {
        r->unshare_ns = vlen >= 2 && !memcmp(v, "ns", 2);
        r->unshare_net = vlen >= 3 && !memcmp(v + vlen - 3, "net", 3);
    } else if (KEY("seccomp")) {
        r->seccomp_setid = vlen == 5 && !memcmp(v, "setid", 5);
    } else if (KEY("path")) {
        if (r->path)
            return -1;
        r->path = unescape(v, vlen, &n);
        if (!r->path)
            return -1;
    } else if (KEY("arg")) {
        char *a = unescape(v, vlen, &n);
        if (!a)
            return -1;
        xlreaper__sb_printf(args, "%s", a);
        free(a);
        /* The separator: sb_printf keeps a NUL after the text. */
        xlreaper__sb_printf(args, "%c", 1);
        if (!args->oom)
            args->buf[args->len - 1] = '\0';
    }
    return 0;
}
#undef KEY

int xlreaper__dmrec_parse(const char *text, size_t len, xlreaper__dmrec *r)
{
    const char *p = text, *end = text + len;
    unsigned seen = 0;
    bool ended = false;
    xlreaper__sb args = { 0 };
    int rc = XLREAPER_ERROR_INVAL;

    memset(r, 0, sizeof(*r));
    if (len < sizeof(MAGIC) || memcmp(text, MAGIC "\n", sizeof(MAGIC)))
        return rc;
    p += sizeof(MAGIC);
    while (p < end && !ended) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *sp, *v;
        size_t klen, vlen;
        int r1;

        if (!eol)
            goto out;
        if ((size_t)(eol - p) == 3 && !memcmp(p, "end", 3)) {
            ended = true;
            p = eol + 1;
            break;
        }
        sp = memchr(p, ' ', (size_t)(eol - p));
        if (!sp)
            goto out;
        klen = (size_t)(sp - p);
        v = sp + 1;
        vlen = (size_t)(eol - v);
        r1 = parse_required(r, p, klen, v, vlen, &seen);
        if (r1 < 0 || (!r1 && parse_optional(r, p, klen, v, vlen, &args)))
            goto out;
        p = eol + 1;
    }
    if (!ended || p != end || seen != 127 || args.oom || !args.len)
        goto out;
    r->argv = args.buf;
    r->argv_len = args.len;
    args.buf = NULL;
    rc = 0;
out:
    xlreaper__sb_dispose(&args);
    if (rc) {
        free(r->root);
        free(r->path);
        memset(r, 0, sizeof(*r));
    }
    return rc;
}

int xlreaper__dmrec_read(xlreaper_ctx *ctx, uint32_t domid, xlreaper__dmrec *r,
                         char *why, size_t whylen)
{
    char *path = xlreaper__dmrec_path(ctx->cfg, domid), *text = NULL;
    struct stat st;
    ssize_t n;
    int fd = -1, rc;

    memset(r, 0, sizeof(*r));
    why[0] = '\0';
    if (!path)
        return XLREAPER_ERROR_NOMEM;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        rc = errno == ENOENT ? 0 : XLREAPER_ERROR_INVAL;
        if (rc)
            snprintf(why, whylen, "%s: %s", path, strerror(errno));
        goto out;
    }
    rc = XLREAPER_ERROR_INVAL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 077) || st.st_nlink != 1) {
        snprintf(why, whylen,
                 "%s is not a regular file only root may read and write: "
                 "not trusted",
                 path);
        goto out;
    }
    /* The one rule for what a root part trusts (xlreaper_trust.c): a
     * directory on the way that another may write lets them put any
     * record there.  The file opened must be the one judged. */
    {
        char twhy[256] = "";
        struct stat tst;

        if (xlreaper_path_trust(path, 0, &tst, twhy, sizeof(twhy)) ||
            tst.st_dev != st.st_dev || tst.st_ino != st.st_ino) {
            snprintf(why, whylen, "%s: not trusted (%s)", path,
                     twhy[0] ? twhy : "replaced while it was read");
            goto out;
        }
    }
    text = malloc(RECORD_MAX + 1);
    if (!text) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    n = xlreaper__read_all(fd, text, RECORD_MAX);
    if (n < 0 || xlreaper__dmrec_parse(text, (size_t)n, r) ||
        r->domid != domid) {
        xlreaper__dmrec_dispose(r);
        snprintf(why, whylen, "%s is not a record of domid %u: not trusted",
                 path, domid);
        goto out;
    }
    rc = 1;
out:
    if (fd >= 0)
        close(fd);
    free(text);
    free(path);
    return rc;
}

/* ---------- removal, by the reap ---------- */

/* Whether pid is the process started at start and not yet dead (a
 * zombie is dead: its parent has not looked yet). */
static bool still_runs(pid_t pid, unsigned long long start)
{
    char buf[1024];
    unsigned long long got;
    ssize_t n = xlreaper__proc_stat(pid, buf, sizeof(buf));
    const char *p;

    if (n <= 0)
        return false;
    p = memrchr(buf, ')', (size_t)n);
    if (!p || p + 2 >= buf + n || p[2] == 'Z' || p[2] == 'X')
        return false;
    return !xlreaper__parse_stat_starttime(buf, (size_t)n, &got) &&
           got == start;
}

void xlreaper__dmrec_reaped(xlreaper_ctx *ctx, uint32_t domid)
{
    char *path = xlreaper__dmrec_path(ctx->cfg, domid), why[512];
    xlreaper__dmrec r;

    if (!path)
        return;
    if (xlreaper__dmrec_read(ctx, domid, &r, why, sizeof(why)) == 1) {
        /* Removed only once what it names is gone: a reap that left the
         * DM alive (or a record already of a new DM) keeps it. */
        if (!still_runs(r.pid, r.start) && unlink(path) < 0 && errno != ENOENT)
            LOGED(WARN, domid, "removing %s", path);
        xlreaper__dmrec_dispose(&r);
    }
    free(path);
}
