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

#include "xl_reaperd_log.h"
#include "xl_reaperd_parse.h"
#include "xl_reaperd_xs.h"

#define TOKEN_RELEASE XLRD_TOKEN_RELEASE
#define TOKEN_INTRODUCE XLRD_TOKEN_INTRODUCE
#define TOKEN_KILL_UID XLRD_TOKEN_KILL_UID

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000

int xlrd_xs_init(xlrd_xs *xs)
{
    uint32_t n = xlreaper_max_domid() + 1;

    memset(xs, 0, sizeof(*xs));
    xs->watched = calloc(n, sizeof(*xs->watched));
    xs->kill_uid_changed = calloc(n, sizeof(*xs->kill_uid_changed));
    return xs->watched && xs->kill_uid_changed ? 0 : -1;
}

void xlrd_xs_dispose(xlrd_xs *xs)
{
    if (xs->h)
        xs_close(xs->h);
    xs->h = NULL;
    free(xs->watched);
    free(xs->kill_uid_changed);
    xs->watched = xs->kill_uid_changed = NULL;
}

static void kill_uid_path(char *buf, size_t sz, uint32_t domid)
{
    snprintf(buf, sz, "/local/domain/%u/image/device-model-kill-uid", domid);
}

static void schedule_retry(xlrd_xs *xs)
{
    xs->next_connect_us = xlreaper_now_us() + (uint64_t)xs->backoff_ms * 1000u;
    xs->backoff_ms = xs->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
                                                         : xs->backoff_ms * 2;
}

/*
 * The socket named by XENSTORED_PATH must be one only root could have
 * put there (xlreaper_path_trust): whoever answers as xenstored says
 * which domains live, and so which uids are killed.  An untrusted one
 * stops the daemon with the reason: waiting for it to change would
 * only log the same refusal for ever.  (The default paths are root's
 * by construction.)
 */
static bool socket_trusted(xlrd_xs *xs)
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
        XLRD_LOG(ERROR, "XENSTORED_PATH %s: %s; refusing it, stopping", p,
                 why);
        xs->refused = true;
        return false;
    }
    return true;
}

bool xlrd_xs_connect(xlrd_xs *xs)
{
    struct xs_handle *h = NULL;
    const char *step;
    int e;

    if (!xs->backoff_ms)
        xs->backoff_ms = BACKOFF_FIRST_MS;
    step = "xs_open";
    if (!socket_trusted(xs)) {
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

    xs->h = h;
    /* Deaths while we were away are found by comparing lists. */
    xs->reconcile_pending = true;
    if (xs->connect_failures || xs->ever_connected)
        XLRD_LOG(NOTICE,
                 "reconnected to xenstored after %u failed attempt%s, "
                 "%.1f s without it",
                 xs->connect_failures, xs->connect_failures == 1 ? "" : "s",
                 xs->disconnected_at_us
                     ? (double)(xlreaper_now_us() - xs->disconnected_at_us) /
                           1e6
                     : 0.0);
    else
        XLRD_LOG(INFO, "connected to xenstored");
    xs->ever_connected = true;
    xs->connect_failures = 0;
    xs->backoff_ms = BACKOFF_FIRST_MS;
    xs->disconnected_at_us = 0;
    return true;

fail:
    e = errno;
    if (h)
        xs_close(h);
    if (!xs->disconnected_at_us)
        xs->disconnected_at_us = xlreaper_now_us();
    /* The first failure in a row is news; the retries are not. */
    xlrd_log(xs->connect_failures ? XTL_DEBUG : XTL_WARN, e,
             "cannot connect to xenstored (%s); retrying with backoff up "
             "to %u ms",
             step, BACKOFF_MAX_MS);
    xs->connect_failures++;
    schedule_retry(xs);
    return false;
}

void xlrd_xs_disconnect(xlrd_xs *xs, const char *why)
{
    uint32_t max = xlreaper_max_domid();

    if (!xs->h)
        return;
    XLRD_LOG(WARN, "lost the connection to xenstored (%s); reconnecting", why);
    xs_close(xs->h);
    xs->h = NULL;
    memset(xs->watched, 0, (max + 1) * sizeof(*xs->watched));
    xs->disconnected_at_us = xlreaper_now_us();
    xs->connect_failures = 0;
    xs->backoff_ms = BACKOFF_FIRST_MS;
    schedule_retry(xs);
}

int xlrd_xs_fd(const xlrd_xs *xs)
{
    return xs->h ? xs_fileno(xs->h) : -1;
}

void xlrd_xs_watch_kill_uid(xlrd_xs *xs, uint32_t domid, bool on)
{
    char path[80], token[32];

    if (!xs->h || xs->watched[domid] == on)
        return;
    kill_uid_path(path, sizeof(path), domid);
    snprintf(token, sizeof(token), TOKEN_KILL_UID "%u", domid);
    if (on ? xs_watch(xs->h, path, token) : xs_unwatch(xs->h, path, token))
        xs->watched[domid] = on;
    else
        XLRD_LOGE(DEBUG, "domid %u: %s %s", domid,
                  on ? "xs_watch" : "xs_unwatch", path);
}

void xlrd_xs_events(xlrd_xs *xs)
{
    unsigned n = 0;
    char **w;

    if (!xs->h)
        return;
    /* A bound, so that a flood of events cannot starve the rest; what
     * is left keeps the watch pipe readable for the next poll. */
    while (n++ < 4096) {
        const char *token;
        uint32_t domid;

        w = xs_check_watch(xs->h);
        if (!w) {
            if (errno == EAGAIN)
                break;
            xlrd_xs_disconnect(xs, errno == EINVAL ? "the connection closed"
                                                   : strerror(errno));
            return;
        }
        /* Tokens are ours, but come back from xenstored: checked. */
        token = w[XS_WATCH_TOKEN];
        XLRD_LOG(DEBUG, "watch event %.60s %.40s", w[XS_WATCH_PATH], token);
        switch (xlrd_token_parse(token, &domid)) {
        case XLRD_TOKEN_IS_RELEASE:
            /* A domain born and dead between two of our lists was
             * never known: the census finds what it left (see
             * xl_reaperd_reap.c). */
            xs->census_pending = true;
            /* fall through */
        case XLRD_TOKEN_IS_INTRODUCE:
            if (!xs->reconcile_pending || !xs->release_us)
                xs->release_us = xlreaper_now_us();
            xs->reconcile_pending = true;
            break;
        case XLRD_TOKEN_IS_KILL_UID:
            /* Read by the loop, for a domain it knows alive. */
            if (!xs->kill_uid_changed[domid]) {
                xs->kill_uid_changed[domid] = true;
                xs->kill_uid_changes++;
            }
            break;
        default:
            XLRD_LOG(DEBUG, "ignoring a watch event with token %.40s", token);
        }
        free(w);
    }
}

uint64_t xlrd_xs_next_connect_us(const xlrd_xs *xs)
{
    return xs->next_connect_us;
}

bool xlrd_xs_refused(const xlrd_xs *xs)
{
    return xs->refused;
}

bool xlrd_xs_take_reconcile(xlrd_xs *xs, uint64_t *release_us_r)
{
    if (!xs->reconcile_pending)
        return false;
    xs->reconcile_pending = false;
    *release_us_r = xs->release_us;
    return true;
}

void xlrd_xs_release_done(xlrd_xs *xs)
{
    xs->release_us = 0;
}

bool xlrd_xs_take_census(xlrd_xs *xs)
{
    bool pending = xs->census_pending;

    xs->census_pending = false;
    return pending;
}

bool xlrd_xs_take_kill_uid(xlrd_xs *xs, uint32_t *domid_r)
{
    uint32_t max = xlreaper_max_domid();

    for (uint32_t i = 1; xs->kill_uid_changes && i <= max; i++) {
        if (!xs->kill_uid_changed[i])
            continue;
        xs->kill_uid_changed[i] = false;
        xs->kill_uid_changes--;
        *domid_r = i;
        return true;
    }
    xs->kill_uid_changes = 0; /* not reached: the count said one was */
    return false;
}
