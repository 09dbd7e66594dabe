/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_xs.c - the daemon's xenstore connection.
 *
 * Watches: @releaseDomain (a domain died: list and reap), @introduceDomain
 * (a domain was born: learn it), and per live domain its
 * image/device-model-kill-uid, which libxl writes when it starts a
 * restricted DM, after the introduction, and removes with the rest of
 * the domain's directory before the domain is destroyed: it can only be
 * read while the domain lives.
 *
 * libxenstore reads in a thread of its own; when xenstored goes away
 * that thread closes the socket and nothing wakes a poll on xs_fileno(),
 * so the main loop asks xs_check_watch() on every tick, which says
 * EINVAL (rather than EAGAIN) once the connection is gone.  Then the
 * daemon reconnects with a doubling backoff and lists the domains again:
 * deaths while it was away are found by comparing lists.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xl_reaperd.h"

#define TOKEN_RELEASE XLRD_TOKEN_RELEASE
#define TOKEN_INTRODUCE XLRD_TOKEN_INTRODUCE
#define TOKEN_KILL_UID XLRD_TOKEN_KILL_UID

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000

static void kill_uid_path(char *buf, size_t sz, uint32_t domid)
{
    snprintf(buf, sz, "/local/domain/%u/image/device-model-kill-uid", domid);
}

static void schedule_retry(xlrd *d)
{
    d->next_connect_us = xlrd_now_us() + (uint64_t)d->backoff_ms * 1000u;
    d->backoff_ms = d->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
                                                       : d->backoff_ms * 2;
}

/*
 * The socket named by XENSTORED_PATH must be one only root could have
 * put there (xlreaper_path_trust): whoever answers as xenstored says
 * which domains live, and so which uids are killed.  An untrusted one
 * stops the daemon with the reason: waiting for it to change would
 * only log the same refusal for ever.  (The default paths are root's
 * by construction.)
 */
static bool socket_trusted(xlrd *d)
{
    const char *p = getenv("XENSTORED_PATH");
    char why[PATH_MAX + 128];
    struct stat st;
    int rc;

    if (!p)
        return true;
    rc =
        xlreaper_path_trust(p, XLREAPER_TRUST_ANY_TYPE, &st, why, sizeof(why));
    if (rc == 1)
        return true; /* not there yet: xs_open will fail */
    if (!rc && !S_ISSOCK(st.st_mode) && !S_ISCHR(st.st_mode)) {
        snprintf(why, sizeof(why), "%s is not a socket or a device", p);
        rc = XLREAPER_ERROR_PERM;
    }
    if (rc) {
        XLRD_LOG(d, ERROR, "XENSTORED_PATH %s: %s; refusing it, stopping", p,
                 why);
        d->stop = true;
        d->exit_code = XLRD_EXIT_USAGE;
        return false;
    }
    return true;
}

bool xlrd_xs_connect(xlrd *d)
{
    struct xs_handle *h = NULL;
    const char *step;
    int e;

    if (!d->backoff_ms)
        d->backoff_ms = BACKOFF_FIRST_MS;
    step = "xs_open";
    if (!socket_trusted(d)) {
        errno = EPERM;
        goto fail;
    }
    h = xs_open(0);
    if (!h)
        goto fail;
    step = "watching @releaseDomain";
    if (!xs_watch(h, "@releaseDomain", TOKEN_RELEASE))
        goto fail;
    step = "watching @introduceDomain";
    if (!xs_watch(h, "@introduceDomain", TOKEN_INTRODUCE))
        goto fail;

    d->xsh = h;
    if (d->connect_failures || d->ever_connected)
        XLRD_LOG(d, NOTICE,
                 "reconnected to xenstored after %u failed attempt%s, "
                 "%.1f s without it",
                 d->connect_failures, d->connect_failures == 1 ? "" : "s",
                 d->disconnected_at_us
                     ? (double)(xlrd_now_us() - d->disconnected_at_us) / 1e6
                     : 0.0);
    else
        XLRD_LOG(d, INFO, "connected to xenstored");
    d->ever_connected = true;
    d->connect_failures = 0;
    d->backoff_ms = BACKOFF_FIRST_MS;
    d->disconnected_at_us = 0;
    return true;

fail:
    e = errno;
    if (h)
        xs_close(h);
    if (!d->disconnected_at_us)
        d->disconnected_at_us = xlrd_now_us();
    /* The first failure in a row is news; the retries are not. */
    xlrd_log(d, d->connect_failures ? XTL_DEBUG : XTL_WARN, e,
             "cannot connect to xenstored (%s); retrying with backoff up "
             "to %u ms",
             step, BACKOFF_MAX_MS);
    d->connect_failures++;
    schedule_retry(d);
    return false;
}

void xlrd_xs_disconnect(xlrd *d, const char *why)
{
    uint32_t max = xlreaper_max_domid();

    if (!d->xsh)
        return;
    XLRD_LOG(d, WARN, "lost the connection to xenstored (%s); reconnecting",
             why);
    xs_close(d->xsh);
    d->xsh = NULL;
    for (uint32_t i = 0; i <= max; i++)
        d->doms[i].watched = false;
    d->disconnected_at_us = xlrd_now_us();
    d->connect_failures = 0;
    d->backoff_ms = BACKOFF_FIRST_MS;
    schedule_retry(d);
}

int xlrd_xs_fd(const xlrd *d)
{
    return d->xsh ? xs_fileno(d->xsh) : -1;
}

void xlrd_xs_watch_kill_uid(xlrd *d, uint32_t domid, bool on)
{
    char path[80], token[32];

    if (!d->xsh || d->doms[domid].watched == on)
        return;
    kill_uid_path(path, sizeof(path), domid);
    snprintf(token, sizeof(token), TOKEN_KILL_UID "%u", domid);
    if (on ? xs_watch(d->xsh, path, token) : xs_unwatch(d->xsh, path, token))
        d->doms[domid].watched = on;
    else
        XLRD_LOGE(d, DEBUG, "domid %u: %s %s", domid,
                  on ? "xs_watch" : "xs_unwatch", path);
}

void xlrd_xs_events(xlrd *d)
{
    unsigned n = 0;
    char **w;

    if (!d->xsh)
        return;
    /* A bound, so that a flood of events cannot starve the rest; what
     * is left keeps the watch pipe readable for the next poll. */
    while (n++ < 4096) {
        const char *token;
        uint32_t domid;

        w = xs_check_watch(d->xsh);
        if (!w) {
            if (errno == EAGAIN)
                break;
            xlrd_xs_disconnect(d, errno == EINVAL ? "the connection closed"
                                                  : strerror(errno));
            return;
        }
        /* Tokens are ours, but come back from xenstored: checked. */
        token = w[XS_WATCH_TOKEN];
        XLRD_LOG(d, DEBUG, "watch event %.60s %.40s", w[XS_WATCH_PATH], token);
        switch (xlrd_token_parse(token, &domid)) {
        case XLRD_TOKEN_IS_RELEASE:
            /* A domain born and dead between two of our lists was
             * never known: the census finds what it left (see
             * xl_reaperd_reap.c). */
            d->census_pending = true;
            /* fall through */
        case XLRD_TOKEN_IS_INTRODUCE:
            if (!d->reconcile_pending || !d->release_us)
                d->release_us = xlrd_now_us();
            d->reconcile_pending = true;
            break;
        case XLRD_TOKEN_IS_KILL_UID:
            if (d->doms[domid].alive)
                xlrd_read_kill_uid(d, domid);
            break;
        default:
            XLRD_LOG(d, DEBUG, "ignoring a watch event with token %.40s",
                     token);
        }
        free(w);
    }
}
