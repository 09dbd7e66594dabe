/*
 * xlreaper_passwd.c - the host's passwd and group databases, as the
 * library asks them (through NSS: files, LDAP, ...).  Unit tests
 * substitute tables of their own.
 */
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
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
                             int (*fn)(void *arg, const char *name,
                                       gid_t gid, char *const *members),
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

const xlreaper__passwd_ops xlreaper__passwd_system = {
    .by_name = system_by_name,
    .each = system_each,
    .each_group = system_each_group,
};
