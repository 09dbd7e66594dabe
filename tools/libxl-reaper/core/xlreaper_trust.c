/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_trust.c - may a root process trust a file or directory?
 *
 * Whoever can write the config chooses which uids get killed; whoever
 * can replace the lock file stalls every reap or runs a kill beside
 * another; whoever can replace QEMU runs code as root.  One rule for all
 * of them, after OpenSSH's StrictModes (safe_path) and sudo:
 *
 *  - the object and every directory above it, symlinks resolved, are
 *    owned by root (or by the caller's own euid, for a non-root run);
 *  - nobody else may write them: not by the mode bits (group write only
 *    for group 0), not by a POSIX ACL entry (system.posix_acl_access: a
 *    named user or group, or the owning group, with write under the
 *    mask);
 *  - a directory above the object may be writable by others if it is
 *    sticky (/tmp): nobody else can then rename or remove what root put
 *    there.  The object itself may not: in a sticky directory anyone
 *    could make the name first.
 *  - a symlink at the path is judged too: its owner, and the
 *    directories that hold it.
 *
 * The ACL is parsed here from the xattr's kernel format
 * (include/uapi/linux/posix_acl_xattr.h): a little-endian version 2
 * header, then entries of tag, perm (u16 each) and id (u32).  Any other
 * version, or a length that is not a whole number of entries, is not
 * trusted.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "xlreaper_internal.h"

#define ACL_XATTR "system.posix_acl_access"
#define ACL_VERSION 2
#define ACL_USER_OBJ 0x01
#define ACL_USER 0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP 0x08
#define ACL_MASK 0x10
#define ACL_OTHER 0x20
#define ACL_WRITE 0x02
#define ACL_MAX_BYTES 4096

static void why_set(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void why_set(char *why, size_t n, const char *fmt, ...)
{
    va_list al;

    if (!why || !n)
        return;
    va_start(al, fmt);
    vsnprintf(why, n, fmt, al);
    va_end(al);
}

static bool owner_trusted(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

static uint32_t le(const unsigned char *p, size_t n)
{
    uint32_t v = 0;

    while (n--)
        v = v << 8 | p[n];
    return v;
}

int xlreaper__acl_others_write(const void *xattr, size_t len, gid_t gid,
                               char *why, size_t why_size)
{
    const unsigned char *p = xattr;
    unsigned mask = 7, entries;
    bool has_mask = false;

    if (len < 4 || (len - 4) % 8 || le(p, 4) != ACL_VERSION) {
        why_set(why, why_size,
                "has an ACL that cannot be read "
                "(%zu bytes)",
                len);
        return -1;
    }
    entries = (unsigned)((len - 4) / 8);
    /* The mask limits named entries and the owning group: first find it. */
    for (unsigned i = 0; i < entries; i++) {
        const unsigned char *e = p + 4 + 8 * i;

        if (le(e, 2) == ACL_MASK) {
            mask = le(e + 2, 2);
            has_mask = true;
        }
    }
    for (unsigned i = 0; i < entries; i++) {
        const unsigned char *e = p + 4 + 8 * i;
        unsigned tag = le(e, 2), perm = le(e + 2, 2);
        uint32_t id = le(e + 4, 4);

        switch (tag) {
        case ACL_USER_OBJ:
        case ACL_MASK:
        case ACL_OTHER: /* the mode's own bits: judged from the mode */ break;
        case ACL_USER:
            if ((perm & mask & ACL_WRITE) && !owner_trusted((uid_t)id)) {
                why_set(why, why_size,
                        "is writable by uid %lu (ACL user entry)",
                        (unsigned long)id);
                return 1;
            }
            break;
        case ACL_GROUP_OBJ:
            if ((perm & mask & ACL_WRITE) && gid != 0) {
                why_set(why, why_size,
                        "is writable by group %lu (ACL owning group%s)",
                        (unsigned long)gid, has_mask ? " under the mask" : "");
                return 1;
            }
            break;
        case ACL_GROUP:
            if ((perm & mask & ACL_WRITE) && id != 0) {
                why_set(why, why_size,
                        "is writable by group %lu (ACL group entry)",
                        (unsigned long)id);
                return 1;
            }
            break;
        default:
            why_set(why, why_size, "has an ACL entry of unknown tag %#x", tag);
            return -1;
        }
    }
    return 0;
}

/*
 * One object, its stat st; inner: a directory above the object, which
 * may be writable by others if it is sticky.  0, or XLREAPER_ERROR_PERM
 * with why set to "NAME ...".
 */
static int judge(const char *name, const struct stat *st, bool inner,
                 char *why, size_t n)
{
    bool sticky_dir = inner && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);
    unsigned char acl[ACL_MAX_BYTES];
    char acl_why[160];
    ssize_t len;
    int r;

    if (!owner_trusted(st->st_uid)) {
        why_set(why, n, "%s is owned by uid %lu, not root", name,
                (unsigned long)st->st_uid);
        return XLREAPER_ERROR_PERM;
    }
    if (S_ISLNK(st->st_mode))
        return 0; /* a symlink's mode means nothing; its owner does */
    if (sticky_dir)
        return 0;
    if (st->st_mode & S_IWOTH) {
        why_set(why, n, "%s is writable by everyone (mode %04o%s)", name,
                (unsigned)(st->st_mode & 07777),
                S_ISDIR(st->st_mode) && inner ? ", not sticky" : "");
        return XLREAPER_ERROR_PERM;
    }
    len = lgetxattr(name, ACL_XATTR, acl, sizeof(acl));
    if (len < 0 && errno != ENODATA && errno != ENOTSUP) {
        why_set(why, n, "%s: its ACL cannot be read: %s", name,
                strerror(errno));
        return XLREAPER_ERROR_PERM;
    }
    if (len >= 0) {
        /* With an ACL the mode's group bits are the mask: the owning
         * group is judged from its entry. */
        r = xlreaper__acl_others_write(acl, (size_t)len, st->st_gid, acl_why,
                                       sizeof(acl_why));
        if (r) {
            why_set(why, n, "%s %s", name, acl_why);
            return XLREAPER_ERROR_PERM;
        }
        return 0;
    }
    if ((st->st_mode & S_IWGRP) && st->st_gid != 0) {
        why_set(why, n, "%s is writable by group %lu (mode %04o)", name,
                (unsigned long)st->st_gid, (unsigned)(st->st_mode & 07777));
        return XLREAPER_ERROR_PERM;
    }
    return 0;
}

/* Every directory of resolved (absolute, no symlinks) from / down, then
 * resolved itself (as an inner directory when last_inner). */
static int judge_chain(const char *resolved, bool last_inner,
                       struct stat *st_r, char *why, size_t n)
{
    char buf[PATH_MAX];
    struct stat st;
    size_t len = strlen(resolved);
    int rc;

    if (resolved[0] != '/' || len >= sizeof(buf)) {
        why_set(why, n, "%s is not an absolute path", resolved);
        return XLREAPER_ERROR_PERM;
    }
    if (len > 1) {
        if (lstat("/", &st) < 0) {
            why_set(why, n, "/: %s", strerror(errno));
            return XLREAPER_ERROR_FAIL;
        }
        rc = judge("/", &st, true, why, n);
        if (rc)
            return rc;
    }
    /* Then each prefix that ends before a slash, and the whole. */
    for (size_t i = 1; i <= len; i++) {
        bool last = i == len;

        if (!last && resolved[i] != '/')
            continue;
        memcpy(buf, resolved, i);
        buf[i] = '\0';
        if (lstat(buf, &st) < 0) {
            why_set(why, n, "%s: %s", buf, strerror(errno));
            return XLREAPER_ERROR_FAIL;
        }
        rc = judge(buf, &st, !last || last_inner, why, n);
        if (rc)
            return rc;
        if (last && st_r)
            *st_r = st;
    }
    return 0;
}

/* The directory holding path, resolved, into buf. */
static int resolve_parent(const char *path, char *buf, size_t n)
{
    char copy[PATH_MAX];
    char *slash, *real;

    if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
        return -1;
    slash = strrchr(copy, '/');
    if (!slash)
        return -1;
    if (slash == copy)
        slash[1] = '\0';
    else
        *slash = '\0';
    real = realpath(copy, NULL);
    if (!real)
        return -1;
    if (snprintf(buf, n, "%s", real) >= (int)n) {
        free(real);
        errno = ENAMETOOLONG;
        return -1;
    }
    free(real);
    return 0;
}

int xlreaper_path_trust(const char *path, unsigned flags, struct stat *st_r,
                        char *why, size_t why_size)
{
    char parent[PATH_MAX], up[PATH_MAX], abs[PATH_MAX], cwd[PATH_MAX];
    struct stat st;
    char *real = NULL;
    int rc;

    if (!path || !path[0] || strlen(path) >= PATH_MAX) {
        why_set(why, why_size, "%s is not a path", path ? path : "(none)");
        return XLREAPER_ERROR_INVAL;
    }
    if (path[0] != '/') {
        /* A relative name (--config FILE): the directories above the
         * working directory count as much as those above the file. */
        if (!getcwd(cwd, sizeof(cwd)) ||
            snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >=
                (int)sizeof(abs)) {
            why_set(why, why_size, "%s: the working directory: %s", path,
                    strerror(errno));
            return XLREAPER_ERROR_FAIL;
        }
        path = abs;
    }
    if (lstat(path, &st) < 0) {
        if (errno != ENOENT && errno != ENOTDIR) {
            why_set(why, why_size, "%s: %s", path, strerror(errno));
            return XLREAPER_ERROR_FAIL;
        }
        if (!(flags & XLREAPER_TRUST_ABSENT_OK))
            return 1;
        /* It will be made: judge the nearest directory that is there,
         * as the one it will be made in (no sticky exception). */
        snprintf(up, sizeof(up), "%s", path);
        for (;;) {
            char *slash = strrchr(up, '/');

            if (!slash || slash == up) {
                snprintf(up, sizeof(up), "/");
                if (lstat(up, &st) < 0) {
                    why_set(why, why_size, "/: %s", strerror(errno));
                    return XLREAPER_ERROR_FAIL;
                }
                break;
            }
            *slash = '\0';
            if (lstat(up, &st) == 0)
                break;
        }
        real = realpath(up, NULL);
        if (!real) {
            why_set(why, why_size, "%s: %s", up, strerror(errno));
            return XLREAPER_ERROR_FAIL;
        }
        /* st: what the resolved name is (up may be a symlink, as
         * /var/run is to /run). */
        rc = judge_chain(real, false, &st, why, why_size);
        if (!rc && !S_ISDIR(st.st_mode)) {
            why_set(why, why_size, "%s is not a directory", up);
            rc = XLREAPER_ERROR_PERM;
        }
        free(real);
        return rc ? rc : 1;
    }
    if (S_ISLNK(st.st_mode)) {
        /* Whoever may replace the link chooses what it names. */
        if (resolve_parent(path, parent, sizeof(parent)) < 0) {
            why_set(why, why_size, "%s: %s", path, strerror(errno));
            return XLREAPER_ERROR_FAIL;
        }
        rc = judge_chain(parent, true, NULL, why, why_size);
        if (rc)
            return rc;
        rc = judge(path, &st, false, why, why_size);
        if (rc)
            return rc;
    }
    real = realpath(path, NULL);
    if (!real) {
        if (errno == ENOENT && !(flags & XLREAPER_TRUST_ABSENT_OK))
            return 1; /* a dangling link: as absent */
        why_set(why, why_size, "%s: %s", path, strerror(errno));
        return XLREAPER_ERROR_FAIL;
    }
    rc = judge_chain(real, false, &st, why, why_size);
    if (!rc && (flags & XLREAPER_TRUST_DIR) && !S_ISDIR(st.st_mode)) {
        why_set(why, why_size, "%s is not a directory", real);
        rc = XLREAPER_ERROR_PERM;
    }
    if (!rc && !(flags & XLREAPER_TRUST_DIR) && !S_ISREG(st.st_mode) &&
        !(flags & XLREAPER_TRUST_ANY_TYPE)) {
        why_set(why, why_size, "%s is not a regular file", real);
        rc = XLREAPER_ERROR_PERM;
    }
    if (!rc && st_r)
        *st_r = st;
    free(real);
    return rc;
}

int xlreaper__path_trust_log(xlreaper_ctx *ctx, const char *what,
                             const char *path, unsigned flags,
                             struct stat *st_r)
{
    char why[PATH_MAX + 128];
    int rc;

    why[0] = '\0';
    rc = xlreaper_path_trust(path, flags, st_r, why, sizeof(why));
    if (rc < 0)
        LOG(ERROR, "%s %s: %s; refusing it", what, path, why);
    return rc;
}
