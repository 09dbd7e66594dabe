/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_passwd.c - the host's passwd and group databases, as the
 * library asks them: through NSS (files, LDAP, ...: every source
 * nsswitch.conf names), or /etc/passwd alone for the quick load of a
 * kill (xlreaper_uid.c says when).  Unit tests substitute tables of
 * their own.
 */
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_internal.h"

/* getpwnam_r with a buffer grown on ERANGE, as libxl's userlookup does. */
static int system_by_name(void *opaque, const char *name, uid_t *uid_r,
                          gid_t *gid_r, bool *found_r)
{
    long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t bufsz = sz > 0 ? (size_t)sz : 1024;
    struct passwd pw, *res;
    char *buf = NULL;
    int r;

    (void)opaque;
    for (;;) {
        char *nbuf = realloc(buf, bufsz);
        if (!nbuf) {
            free(buf);
            return XLREAPER_ERROR_NOMEM;
        }
        buf = nbuf;
        r = getpwnam_r(name, &pw, buf, bufsz, &res);
        if (r != ERANGE)
            break;
        bufsz *= 2;
    }
    if (r == 0 && res) {
        *uid_r = res->pw_uid;
        *gid_r = res->pw_gid;
    }
    free(buf);
    if (r != 0 && r != ENOENT && r != ESRCH) {
        errno = r;
        return XLREAPER_ERROR_FAIL;
    }
    *found_r = r == 0 && res;
    return 0;
}

/*
 * getpwent_r walks state that is global to the process; our walks are
 * serialised here, and callers must not walk the database in another
 * thread at the same time (documented in the header).
 */
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;

static int system_each(void *opaque,
                       int (*fn)(void *arg, const char *name, uid_t uid),
                       void *arg)
{
    struct passwd pw, *res;
    size_t bufsz = 4096;
    char *buf = malloc(bufsz);
    int r, rc = 0;

    (void)opaque;
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    pthread_mutex_lock(&walk_lock);
    setpwent();
    for (;;) {
        r = getpwent_r(&pw, buf, bufsz, &res);
        if (r == ERANGE) {
            /* The same entry is returned again with a bigger buffer. */
            char *nbuf = bufsz < (1u << 20) ? realloc(buf, bufsz * 2) : NULL;
            if (!nbuf) {
                rc = XLREAPER_ERROR_NOMEM;
                break;
            }
            buf = nbuf;
            bufsz *= 2;
            continue;
        }
        if (r == ENOENT || (r == 0 && !res))
            break;
        if (r) {
            errno = r;
            rc = XLREAPER_ERROR_FAIL;
            break;
        }
        rc = fn(arg, res->pw_name, res->pw_uid);
        if (rc)
            break;
    }
    endpwent();
    pthread_mutex_unlock(&walk_lock);
    free(buf);
    return rc;
}

/* As system_each, over getgrent_r; the same lock serialises both. */
static int system_each_group(void *opaque,
                             int (*fn)(void *arg, const char *name, gid_t gid,
                                       char *const *members),
                             void *arg)
{
    struct group gr, *res;
    size_t bufsz = 4096;
    char *buf = malloc(bufsz);
    int r, rc = 0;

    (void)opaque;
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    pthread_mutex_lock(&walk_lock);
    setgrent();
    for (;;) {
        r = getgrent_r(&gr, buf, bufsz, &res);
        if (r == ERANGE) {
            /* A group with many members: the same entry comes again. */
            char *nbuf = bufsz < (1u << 24) ? realloc(buf, bufsz * 2) : NULL;
            if (!nbuf) {
                rc = XLREAPER_ERROR_NOMEM;
                break;
            }
            buf = nbuf;
            bufsz *= 2;
            continue;
        }
        if (r == ENOENT || (r == 0 && !res))
            break;
        if (r) {
            errno = r;
            rc = XLREAPER_ERROR_FAIL;
            break;
        }
        rc = fn(arg, res->gr_name, res->gr_gid, res->gr_mem);
        if (rc)
            break;
    }
    endgrent();
    pthread_mutex_unlock(&walk_lock);
    free(buf);
    return rc;
}

/* getgrgid_r with a buffer grown on ERANGE, as system_by_name does. */
static int system_group_by_gid(void *opaque, gid_t gid, char *name, size_t n,
                               bool *members_r, bool *found_r)
{
    size_t bufsz = 4096;
    struct group gr, *res;
    char *buf = NULL;
    int r;

    (void)opaque;
    for (;;) {
        char *nbuf = realloc(buf, bufsz);
        if (!nbuf) {
            free(buf);
            return XLREAPER_ERROR_NOMEM;
        }
        buf = nbuf;
        r = getgrgid_r(gid, &gr, buf, bufsz, &res);
        if (r != ERANGE || bufsz >= (1u << 24))
            break;
        bufsz *= 2;
    }
    *found_r = r == 0 && res;
    if (*found_r) {
        snprintf(name, n, "%s", res->gr_name);
        *members_r = res->gr_mem && res->gr_mem[0];
    }
    free(buf);
    if (r != 0 && r != ENOENT && r != ESRCH) {
        errno = r;
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

const xlreaper__passwd_ops xlreaper__passwd_system = {
    .by_name = system_by_name,
    .each = system_each,
    .each_group = system_each_group,
    .group_by_gid = system_group_by_gid,
};

/* ---------- /etc/passwd alone ---------- */

/*
 * The first NSS call of a process loads every module nsswitch.conf
 * names: with "files systemd", as on Debian 12, libnss_systemd probes
 * userdb's directories and sockets, 2.4-3.3 ms here against 0.4 ms
 * with "files" alone (bench/results/start.md), more than the kill it
 * precedes.  fgetpwent_r parses the file itself and loads nothing.
 */
static int files_open(void *opaque, FILE **f_r)
{
    const char *path = opaque ? opaque : "/etc/passwd";

    *f_r = fopen(path, "re");
    if (*f_r)
        return 0;
    return errno == ENOENT ? 1 : XLREAPER_ERROR_FAIL;
}

static int files_each_entry(void *opaque,
                            int (*fn)(void *arg, const struct passwd *pw),
                            void *arg)
{
    size_t bufsz = 1024;
    char *buf = malloc(bufsz);
    struct passwd pw, *res;
    FILE *f;
    int r, rc;

    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    rc = files_open(opaque, &f);
    if (rc) {
        free(buf);
        return rc > 0 ? 0 : rc; /* no file: no users */
    }
    for (;;) {
        r = fgetpwent_r(f, &pw, buf, bufsz, &res);
        if (r == ERANGE) {
            /* The stream is put back before the line: again, bigger. */
            char *nbuf = bufsz < (1u << 20) ? realloc(buf, bufsz * 2) : NULL;
            if (!nbuf) {
                rc = XLREAPER_ERROR_NOMEM;
                break;
            }
            buf = nbuf;
            bufsz *= 2;
            continue;
        }
        if (r == ENOENT || (!r && !res))
            break; /* the end */
        if (r) {
            errno = r;
            rc = XLREAPER_ERROR_FAIL;
            break;
        }
        rc = fn(arg, res);
        if (rc)
            break;
    }
    fclose(f);
    free(buf);
    return rc;
}

typedef struct {
    const char *name;
    uid_t uid;
    gid_t gid;
    bool found;
} files_find;

static int files_find_one(void *arg, const struct passwd *pw)
{
    files_find *ff = arg;

    if (strcmp(pw->pw_name, ff->name))
        return 0;
    ff->uid = pw->pw_uid;
    ff->gid = pw->pw_gid;
    ff->found = true;
    return 1; /* the first entry wins, as in NSS's files module */
}

static int files_by_name(void *opaque, const char *name, uid_t *uid_r,
                         gid_t *gid_r, bool *found_r)
{
    files_find ff = { .name = name };
    int rc = files_each_entry(opaque, files_find_one, &ff);

    if (rc < 0)
        return rc;
    if (ff.found) {
        *uid_r = ff.uid;
        *gid_r = ff.gid;
    }
    *found_r = ff.found;
    return 0;
}

typedef struct {
    int (*fn)(void *arg, const char *name, uid_t uid);
    void *arg;
} files_walk;

static int files_walk_one(void *arg, const struct passwd *pw)
{
    files_walk *w = arg;

    return w->fn(w->arg, pw->pw_name, pw->pw_uid);
}

static int files_each(void *opaque,
                      int (*fn)(void *arg, const char *name, uid_t uid),
                      void *arg)
{
    files_walk w = { fn, arg };

    return files_each_entry(opaque, files_walk_one, &w);
}

/* No each_group: only the full checks (xlreaper_hostcheck.c) walk the
 * groups, and they ask NSS. */
const xlreaper__passwd_ops xlreaper__passwd_files = {
    .by_name = files_by_name,
    .each = files_each,
};
