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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_host.h"

/*
 * The *_r functions of passwd and group all say ERANGE when the buffer
 * is too small for the entry, and then give the same entry again with a
 * bigger one (libxl's userlookup does the same).  next() calls one of
 * them with buf and returns its error number, ENOENT for "no (more)
 * entry"; read_entry grows *buf, up to max bytes, until next() stops
 * asking.  0, with the entry in next's state or (its res NULL) none, or
 * a negative code.
 */
static int read_entry(int (*next)(void *state, char *buf, size_t n),
                      void *state, char **buf, size_t *bufsz, size_t max)
{
    int r;

    while ((r = next(state, *buf, *bufsz)) == ERANGE) {
        char *nbuf = *bufsz < max ? realloc(*buf, *bufsz * 2) : NULL;
        if (!nbuf)
            return XLREAPER_ERROR_NOMEM;
        *buf = nbuf;
        *bufsz *= 2;
    }
    if (r && r != ENOENT && r != ESRCH) {
        errno = r;
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

typedef struct {
    const char *name; /* by_name's key */
    FILE *f;          /* fgetpwent_r's stream */
    struct passwd pw, *res;
} pw_state;

typedef struct {
    gid_t gid; /* group_by_gid's key */
    struct group gr, *res;
} gr_state;

/* The next()s of read_entry: res NULL after 0 is "no entry". */
static int pwnam_next(void *state, char *buf, size_t n)
{
    pw_state *st = state;
    int r = getpwnam_r(st->name, &st->pw, buf, n, &st->res);

    return r ? r : st->res ? 0 : ENOENT;
}

static int pwent_next(void *state, char *buf, size_t n)
{
    pw_state *st = state;
    int r = getpwent_r(&st->pw, buf, n, &st->res);

    return r ? r : st->res ? 0 : ENOENT;
}

static int fpwent_next(void *state, char *buf, size_t n)
{
    pw_state *st = state;
    int r = fgetpwent_r(st->f, &st->pw, buf, n, &st->res);

    return r ? r : st->res ? 0 : ENOENT;
}

static int grgid_next(void *state, char *buf, size_t n)
{
    gr_state *st = state;
    int r = getgrgid_r(st->gid, &st->gr, buf, n, &st->res);

    return r ? r : st->res ? 0 : ENOENT;
}

static int grent_next(void *state, char *buf, size_t n)
{
    gr_state *st = state;
    int r = getgrent_r(&st->gr, buf, n, &st->res);

    return r ? r : st->res ? 0 : ENOENT;
}

static int system_by_name(void *opaque, const char *name, uid_t *uid_r,
                          gid_t *gid_r, bool *found_r)
{
    long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t bufsz = sz > 0 ? (size_t)sz : 1024;
    pw_state st = { .name = name };
    char *buf = malloc(bufsz);
    int rc;

    (void)opaque;
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    rc = read_entry(pwnam_next, &st, &buf, &bufsz, SIZE_MAX / 2);
    *found_r = !rc && st.res;
    if (*found_r) {
        *uid_r = st.res->pw_uid;
        *gid_r = st.res->pw_gid;
    }
    free(buf);
    return rc;
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
    size_t bufsz = 4096;
    char *buf = malloc(bufsz);
    pw_state st = { 0 };
    int rc;

    (void)opaque;
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    pthread_mutex_lock(&walk_lock);
    setpwent();
    while (!(rc = read_entry(pwent_next, &st, &buf, &bufsz, 1u << 20)) &&
           st.res && !(rc = fn(arg, st.res->pw_name, st.res->pw_uid)))
        ;
    endpwent();
    pthread_mutex_unlock(&walk_lock);
    free(buf);
    return rc;
}

/* As system_each, over getgrent_r; the same lock serialises both.  A
 * group with many members may need a large buffer. */
static int system_each_group(void *opaque,
                             int (*fn)(void *arg, const char *name, gid_t gid,
                                       char *const *members),
                             void *arg)
{
    size_t bufsz = 4096;
    char *buf = malloc(bufsz);
    gr_state st = { 0 };
    int rc;

    (void)opaque;
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    pthread_mutex_lock(&walk_lock);
    setgrent();
    while (!(rc = read_entry(grent_next, &st, &buf, &bufsz, 1u << 24)) &&
           st.res &&
           !(rc = fn(arg, st.res->gr_name, st.res->gr_gid, st.res->gr_mem)))
        ;
    endgrent();
    pthread_mutex_unlock(&walk_lock);
    free(buf);
    return rc;
}

static int system_group_by_gid(void *opaque, gid_t gid, char *name, size_t n,
                               bool *members_r, bool *found_r)
{
    size_t bufsz = 4096;
    gr_state st = { .gid = gid };
    char *buf = malloc(bufsz);
    int rc;

    (void)opaque;
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    rc = read_entry(grgid_next, &st, &buf, &bufsz, 1u << 24);
    *found_r = !rc && st.res;
    if (*found_r) {
        snprintf(name, n, "%s", st.res->gr_name);
        *members_r = st.res->gr_mem && st.res->gr_mem[0];
    }
    free(buf);
    return rc;
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
    pw_state st = { 0 };
    int rc;

    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    rc = files_open(opaque, &st.f);
    if (rc) {
        free(buf);
        return rc > 0 ? 0 : rc; /* no file: no users */
    }
    /* On ERANGE the stream is put back before the line: read again. */
    while (!(rc = read_entry(fpwent_next, &st, &buf, &bufsz, 1u << 20)) &&
           st.res && !(rc = fn(arg, st.res)))
        ;
    fclose(st.f);
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
