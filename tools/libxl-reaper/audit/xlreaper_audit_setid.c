/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_setid.c - the audit's "setid" check: no file on the
 * host leads back into a DM uid or gid.
 *
 * A regular file with S_ISUID owned by a uid of the range (the DM uids
 * base+1 .. base+max_domid, the base, the pet), or with S_ISGID and a
 * gid of the range (the same span, and the range base's gid that every
 * DM shares in "range-base" gid mode), lets anyone who runs it hold that
 * id again after its DM was reaped (xlreaper_setid.c says how a DM could
 * make one before the spawn's filter existed).
 *
 * What is walked: every mount in /proc/self/mountinfo that is mounted
 * read-write, once per file system (the mount of its root if there is
 * one), without crossing into other mounts and without following
 * symbolic links.  What is not: read-only mounts (no DM could have
 * written there while it was read-only), pseudo file systems that hold
 * no executable a DM could have made (proc, sysfs, cgroup, devpts,
 * mqueue, ...), and network file systems (nfs, cifs, fuse, ...), whose
 * walk could take any time and whose servers decide set-id anyway;
 * each skipped type is named in the result.  The walk stops at its
 * deadline (setid_timeout_ms) and then says "could not check".
 *
 * --fix clears the bits that made the file a finding, on the very inode
 * the walk saw: it opens the path O_PATH|O_NOFOLLOW, checks that the
 * descriptor is that regular file (device and inode) still with the
 * bits and the owner, and chmods it through /proc/self/fd, so a path
 * swapped meanwhile (a directory replaced by a symbolic link) changes
 * nothing else.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"

/* Findings reported one by one; past this, a count. */
#define SETID_MAX_REPORTED 64
/* Entries between two looks at the clock. */
#define SETID_CLOCK_EVERY 256
/* Directories deeper than this are counted unreadable: each level
 * holds a descriptor. */
#define SETID_MAX_DEPTH 256

/* Types that hold no file a DM could have made executable. */
static const char *const pseudo_types[] = {
    "proc",        "sysfs",    "cgroup",     "cgroup2",    "devpts",
    "mqueue",      "debugfs",  "tracefs",    "securityfs", "pstore",
    "bpf",         "configfs", "fusectl",    "hugetlbfs",  "autofs",
    "binfmt_misc", "efivarfs", "rpc_pipefs", "nsfs",       "xenfs",
    "selinuxfs",   "nfsd",     NULL,
};
/* Network and user-space file systems: not walked, and said so. */
static const char *const remote_types[] = {
    "nfs", "nfs4",      "cifs",   "smb3", "smbfs", "9p",    "ceph",
    "afs", "glusterfs", "lustre", "gfs2", "ocfs2", "sshfs", NULL,
};

static bool in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (!strcmp(*l, s))
            return true;
    return false;
}

/* One line of mountinfo, as far as the walk cares. */
typedef struct {
    char *path; /* mount point */
    dev_t dev;
    bool root; /* the mount of the file system's root */
    bool walk; /* rw, and a type that is walked */
} fs_mount;

typedef struct {
    fs_mount *m;
    unsigned num, cap;
    xlreaper__sb skipped; /* "type (mount point), ..." */
    unsigned num_skipped;
} mount_set;

static void mount_set_dispose(mount_set *s)
{
    for (unsigned i = 0; i < s->num; i++)
        free(s->m[i].path);
    free(s->m);
    xlreaper__sb_dispose(&s->skipped);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
    char *o = s;

    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
            s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

static bool has_opt(const char *opts, const char *opt)
{
    size_t n = strlen(opt);

    for (const char *p = opts; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && !strncmp(p, opt, n))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

static int add_mount(mount_set *s, const char *path, dev_t dev, bool root,
                     bool walk)
{
    fs_mount *n = xlreaper__grow(s->m, s->num, &s->cap, sizeof(*n), 32);

    if (!n)
        return XLREAPER_ERROR_NOMEM;
    s->m = n;
    s->m[s->num].path = strdup(path);
    /* gcc 12's -fanalyzer loses the strdup'd path once it is stored in
     * the grown s->m (freed with the set) and calls it a leak here:
     * a false positive, as in xlreaper_audit.c's merge_live. */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    if (!s->m[s->num].path)
        return XLREAPER_ERROR_NOMEM;
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
    s->m[s->num].dev = dev;
    s->m[s->num].root = root;
    s->m[s->num].walk = walk;
    s->num++;
    return 0;
}

static void note_skipped(mount_set *s, const char *type, const char *path)
{
    if (s->num_skipped++ < 12)
        xlreaper__sb_printf(&s->skipped, "%s%s (%s)",
                            s->num_skipped > 1 ? ", " : "", type, path);
}

/*
 * One line of mountinfo:
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SRC SUPER
 */
static int parse_mount_line(mount_set *s, char *line)
{
    char *f[6], *sep, *type, *super, *save = NULL;
    unsigned maj, min;
    bool walk = true;
    int i = 0;

    sep = strstr(line, " - ");
    if (!sep)
        return 0;
    *sep = '\0';
    for (char *t = strtok_r(line, " ", &save); t && i < 6;
         t = strtok_r(NULL, " ", &save))
        f[i++] = t;
    if (i < 6 || sscanf(f[2], "%u:%u", &maj, &min) != 2)
        return 0;
    save = NULL;
    type = strtok_r(sep + 3, " ", &save);
    if (!type)
        return 0;
    (void)strtok_r(NULL, " ", &save); /* source */
    super = strtok_r(NULL, " \n", &save);
    unescape(f[4]);
    /* Read-only: not written to now; a rw mount of it is walked. */
    if (has_opt(f[5], "ro") || has_opt(super, "ro") ||
        in_list(pseudo_types, type))
        walk = false;
    else if (in_list(remote_types, type) || !strncmp(type, "fuse", 4)) {
        note_skipped(s, type, f[4]);
        walk = false;
    }
    return add_mount(s, f[4], makedev(maj, min), !strcmp(f[3], "/"), walk);
}

/*
 * Which mounts to walk: one per file system (the mount of its root if
 * there is one), and never one that a later mount on the same mount
 * point hides (mountinfo lists a mount after what it covers): a walk by
 * path would only see the top one again.
 */
static void choose_mounts(mount_set *s)
{
    for (unsigned i = 0; i < s->num; i++) {
        for (unsigned j = i + 1; s->m[i].walk && j < s->num; j++)
            if (!strcmp(s->m[i].path, s->m[j].path))
                s->m[i].walk = false;
    }
    for (unsigned i = 0; i < s->num; i++) {
        for (unsigned j = 0; s->m[i].walk && j < s->num; j++) {
            if (j == i || !s->m[j].walk || s->m[j].dev != s->m[i].dev)
                continue;
            /* Keep j over i: j is the root's mount and i not, or both
             * alike and j first. */
            if ((s->m[j].root && !s->m[i].root) ||
                (j < i && s->m[j].root == s->m[i].root))
                s->m[i].walk = false;
        }
    }
}

static int read_mounts(xlreaper_ctx *ctx, mount_set *s)
{
    FILE *m = fopen("/proc/self/mountinfo", "re");
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;

    if (!m) {
        LOGE(ERROR, "/proc/self/mountinfo");
        return XLREAPER_ERROR_FAIL;
    }
    while (!rc && getline(&line, &cap, m) > 0)
        rc = parse_mount_line(s, line);
    free(line);
    fclose(m);
    if (!rc)
        choose_mounts(s);
    return rc;
}

typedef struct {
    xlreaper_ctx *ctx;
    const xlreaper_config *cfg;
    xlreaper_audit_result *res;
    bool fix;
    uint64_t deadline;
    unsigned long entries, files, dirs, unreadable;
    unsigned found, reported, fixed;
    bool cut;   /* the deadline stopped the walk */
    char *path; /* of the entry at hand, for the report */
    size_t cap;
} setid_walk;

static bool uid_in_range(const xlreaper_config *cfg, uid_t u)
{
    return (u >= cfg->dm_uid_base &&
            u - cfg->dm_uid_base <= xlreaper_max_domid()) ||
           u == cfg->reaper_uid;
}

static bool gid_in_range(const xlreaper_config *cfg, gid_t g)
{
    return (g >= cfg->dm_uid_base &&
            g - cfg->dm_uid_base <= xlreaper_max_domid()) ||
           (cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE &&
            g == cfg->range_base_gid);
}

/* Clears bits on the inode st describes, name in dfd.  0, or -1 with
 * *why set. */
static int disarm(int dfd, const char *name, const struct stat *st,
                  mode_t bits, const char **why)
{
    char proc[64];
    struct stat now;
    int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), r;

    *why = "it could not be opened";
    if (fd < 0)
        return -1;
    r = -1;
    if (fstat(fd, &now) < 0)
        goto out;
    *why = "it changed under the audit";
    if (!S_ISREG(now.st_mode) || now.st_dev != st->st_dev ||
        now.st_ino != st->st_ino || now.st_uid != st->st_uid ||
        now.st_gid != st->st_gid || !(now.st_mode & bits))
        goto out;
    /* chmod follows the descriptor's magic link to that very inode. */
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    *why = "chmod failed";
    r = chmod(proc, now.st_mode & 07777 & ~bits);
out:
    xlreaper__close_keep_errno(fd);
    return r;
}

static int finding(setid_walk *w, int dfd, const char *name,
                   const struct stat *st)
{
    const xlreaper_config *cfg = w->cfg;
    bool u = (st->st_mode & S_ISUID) && uid_in_range(cfg, st->st_uid);
    bool g = (st->st_mode & S_ISGID) && gid_in_range(cfg, st->st_gid);
    mode_t bits = (u ? S_ISUID : 0) | (g ? S_ISGID : 0);
    uint32_t domid = XLREAPER_AUDIT_NO_DOMID, d;
    xlreaper_ctx *ctx = w->ctx;
    const char *why = NULL, *path = w->path;
    char what[96];
    int rc;

    if (!bits)
        return 0;
    w->found++;
    if (++w->reported > SETID_MAX_REPORTED && !w->fix)
        return 0;
    if (!xlreaper_uid_domid(ctx, u ? st->st_uid : (uid_t)st->st_gid, &d))
        domid = d;
    snprintf(what, sizeof(what), "%s%s%s", u ? "set-uid" : "",
             u && g ? " and " : "", g ? "set-gid" : "");
    if (w->fix) {
        if (disarm(dfd, name, st, bits, &why) == 0) {
            rc = xlreaper__audit_add(
                w->res, "setid", domid, u ? st->st_uid : XLREAPER_AUDIT_NO_UID,
                0, XLREAPER_AUDIT_PASS,
                "%s: was a %s file of uid %lu gid %lu, mode %04o; --fix "
                "removed the %s bit%s: mode now %04o",
                path, what, (unsigned long)st->st_uid,
                (unsigned long)st->st_gid, (unsigned)(st->st_mode & 07777),
                what, u && g ? "s" : "",
                (unsigned)(st->st_mode & 07777 & ~bits));
            if (!rc)
                w->res->checks[w->res->num - 1].fixed = true;
            w->fixed++;
            LOG(NOTICE, "%s: %s bit removed", path, what);
            return rc;
        }
        LOGE(ERROR, "--fix of %s: %s", path, why);
    }
    return xlreaper__audit_add(
        w->res, "setid", domid, u ? st->st_uid : XLREAPER_AUDIT_NO_UID, 0,
        XLREAPER_AUDIT_FAIL,
        "%s: a %s file of uid %lu gid %lu, mode %04o, in the DM range: "
        "whoever runs it holds that id again%s%s",
        path, what, (unsigned long)st->st_uid, (unsigned long)st->st_gid,
        (unsigned)(st->st_mode & 07777), why ? "; not fixed: " : "",
        why ? why : "");
}

/* w->path = its first len bytes + "/" + name; false on ENOMEM. */
static bool path_set(setid_walk *w, size_t len, const char *name)
{
    size_t need = len + 1 + strlen(name) + 1;

    /* !w->path: the first call, and what the analyzer cannot rule out
     * when need wraps. */
    if (need > w->cap || !w->path) {
        size_t ncap = need * 2;
        char *n = realloc(w->path, ncap);
        if (!n)
            return false;
        w->path = n;
        w->cap = ncap;
    }
    w->path[len] = '/';
    strcpy(w->path + len + (len && w->path[len - 1] == '/' ? 0 : 1), name);
    return true;
}

/*
 * Walks the directory dfd (which it closes), whose path is the first
 * len bytes of w->path, on device dev: fstatat by name, never a path,
 * never a symbolic link followed, never into another mount.  0 or an
 * error; w->cut once the deadline passed.
 */
static int walk_dir(setid_walk *w, int dfd, dev_t dev, size_t len,
                    unsigned depth)
{
    DIR *d = fdopendir(dfd);
    struct dirent *de;
    int rc = 0;

    if (!d) {
        close(dfd);
        w->unreadable++;
        return 0;
    }
    w->dirs++;
    while (!rc && !w->cut && (errno = 0, de = readdir(d))) {
        const char *name = de->d_name;
        struct stat st;
        int cfd;

        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        if (++w->entries % SETID_CLOCK_EVERY == 0 &&
            xlreaper__now_us() >= w->deadline) {
            w->cut = true;
            break;
        }
        if (de->d_type != DT_REG && de->d_type != DT_DIR &&
            de->d_type != DT_UNKNOWN)
            continue; /* links, devices, fifos, sockets: no exec */
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            w->unreadable++;
            continue;
        }
        if (S_ISREG(st.st_mode)) {
            w->files++;
            if (!(st.st_mode & (S_ISUID | S_ISGID)))
                continue;
            if (!path_set(w, len, name))
                rc = XLREAPER_ERROR_NOMEM;
            else
                rc = finding(w, dirfd(d), name, &st);
            continue;
        }
        if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
            continue; /* another mount: walked on its own if writable */
        if (depth >= SETID_MAX_DEPTH) {
            w->unreadable++;
            continue;
        }
        cfd = openat(dirfd(d), name,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
                         O_CLOEXEC);
        if (cfd < 0) {
            w->unreadable++;
            continue;
        }
        if (!path_set(w, len, name)) {
            close(cfd);
            rc = XLREAPER_ERROR_NOMEM;
            break;
        }
        rc = walk_dir(w, cfd, dev, strlen(w->path), depth + 1);
    }
    if (!rc && !w->cut && errno)
        w->unreadable++;
    closedir(d);
    return rc;
}

/* Walks one tree from its root.  0 or an error. */
static int walk(setid_walk *w, const char *root)
{
    struct stat st;
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        w->unreadable++;
        return 0;
    }
    if (!path_set(w, 0, root)) {
        close(fd);
        return XLREAPER_ERROR_NOMEM;
    }
    /* path_set wrote "/root": drop the slash it put first. */
    memmove(w->path, w->path + 1, strlen(w->path));
    return walk_dir(w, fd, st.st_dev, strlen(w->path), 0);
}

int xlreaper__audit_setid(xlreaper_ctx *ctx, const xlreaper_audit_opts *opts,
                          const char *const *roots, xlreaper_audit_result *res)
{
    uint64_t t0 = xlreaper__now_us();
    setid_walk w = { .ctx = ctx,
                     .cfg = ctx->cfg,
                     .res = res,
                     .fix = opts->flags & XLREAPER_AUDIT_FIX,
                     .deadline =
                         t0 + (uint64_t)opts->setid_timeout_ms * 1000u };
    mount_set ms = { 0 };
    xlreaper__sb walked = { 0 };
    unsigned num_walked = 0, left;
    bool cut;
    int rc = 0;

    if (!opts->setid_timeout_ms)
        return xlreaper__audit_add(
            res, "setid", XLREAPER_AUDIT_NO_DOMID, XLREAPER_AUDIT_NO_UID, 0,
            XLREAPER_AUDIT_SKIP, "not walked: --setid-timeout 0");
    if (!roots) {
        rc = read_mounts(ctx, &ms);
        if (rc)
            goto out;
    }
    for (unsigned i = 0; !rc && !w.cut; i++) {
        const char *root = roots ? roots[i] : i < ms.num ? ms.m[i].path : NULL;

        if (!root)
            break;
        if (!roots && !ms.m[i].walk)
            continue;
        xlreaper__sb_printf(&walked, "%s%s", num_walked ? " " : "", root);
        num_walked++;
        rc = walk(&w, root);
    }
    if (rc < 0)
        goto out;
    cut = w.cut;
    if (walked.oom || ms.skipped.oom) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    if (w.found > SETID_MAX_REPORTED && !w.fix) {
        rc = xlreaper__audit_add(res, "setid", XLREAPER_AUDIT_NO_DOMID,
                                 XLREAPER_AUDIT_NO_UID, 0, XLREAPER_AUDIT_FAIL,
                                 "%u more set-id files in the DM range not "
                                 "listed (%u found)",
                                 w.found - SETID_MAX_REPORTED, w.found);
        if (rc)
            goto out;
    }
    left = w.found - w.fixed;
    rc = xlreaper__audit_add(
        res, "setid", XLREAPER_AUDIT_NO_DOMID, XLREAPER_AUDIT_NO_UID, 0,
        cut    ? XLREAPER_AUDIT_UNKNOWN
        : left ? XLREAPER_AUDIT_FAIL
               : XLREAPER_AUDIT_PASS,
        "%s%u set-id file%s of a DM uid or gid%s%s (%u disarmed by --fix): "
        "%lu files, %lu directories (%lu unreadable) on %u file system%s "
        "(%s) in %.1f s%s%s%s",
        cut ? "the walk stopped at its deadline (--setid-timeout): "
              "what it saw: "
            : "",
        left, left == 1 ? "" : "s", cut ? "" : " left",
        cut ? "" : " on the walked file systems", w.fixed, w.files, w.dirs,
        w.unreadable, num_walked, num_walked == 1 ? "" : "s",
        walked.buf ? walked.buf : "none",
        (double)(xlreaper__now_us() - t0) / 1e6,
        ms.num_skipped ? "; not walked: " : "",
        ms.num_skipped ? ms.skipped.buf : "",
        ms.num_skipped > 12 ? ", ..." : "");

out:
    free(w.path);
    xlreaper__sb_dispose(&walked);
    mount_set_dispose(&ms);
    return rc < 0 ? rc : 0;
}
