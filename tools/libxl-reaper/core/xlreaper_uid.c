/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_uid.c - the uid table.
 *
 *   uid                     runs
 *   base + 0 (domid 0)      nothing: the reaper's "pet" real uid, unless
 *                           the passwd user xen-qemuuser-reaper or the
 *                           reaper_uid key names another reserved uid
 *   base + d, 1 <= d < DOMID_FIRST_RESERVED
 *                           domid d's device model, and nothing else
 *
 * A uid is never shared by two domains: killing by uid could not tell
 * them apart.  That is why xen-qemuuser-shared, upstream's weaker
 * fallback, is refused, and why no passwd user may sit in the range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* xen.h needs <stdint.h> first. */
#include <xen/xen.h>

#include "xlreaper_internal.h"

/* The highest uid the range may reach: (uid_t)-1 means "unchanged" to
 * setresuid and must never be a DM's uid. */
#define UID_TOP ((uid_t)-2)

uint32_t xlreaper_max_domid(void)
{
    return DOMID_FIRST_RESERVED - 1;
}

int xlreaper_domid_parse(const char *s, uint32_t *domid_r)
{
    unsigned long v = 0;
    const char *p;

    if (!s || !*s || *s == '0')
        return XLREAPER_ERROR_INVAL; /* empty, dom0, or leading zero */
    for (p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return XLREAPER_ERROR_INVAL;
        v = v * 10 + (unsigned long)(*p - '0');
        if (v > xlreaper_max_domid())
            return XLREAPER_ERROR_INVAL;
    }
    *domid_r = (uint32_t)v;
    return 0;
}

int xlreaper_dm_ids(const xlreaper_ctx *ctx, uint32_t domid, uid_t *uid_r,
                    gid_t *gid_r)
{
    const xlreaper_config *cfg = ctx->cfg;

    if (!cfg || domid < 1 || domid > xlreaper_max_domid())
        return XLREAPER_ERROR_INVAL;
    *uid_r = cfg->dm_uid_base + domid;
    if (gid_r)
        *gid_r = cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE
                     ? cfg->range_base_gid
                     : (gid_t)*uid_r;
    return 0;
}

int xlreaper_uid_domid(const xlreaper_ctx *ctx, uid_t uid, uint32_t *domid_r)
{
    const xlreaper_config *cfg = ctx->cfg;

    if (!cfg || uid <= cfg->dm_uid_base ||
        uid - cfg->dm_uid_base > xlreaper_max_domid())
        return XLREAPER_ERROR_INVAL;
    *domid_r = uid - cfg->dm_uid_base;
    return 0;
}

/* ---------- checking the range against passwd ---------- */

struct range_walk {
    xlreaper_ctx *ctx;
    uid_t base, pet;
    unsigned clashes;
    char pet_owner[64];
};

static bool reserved_name(const char *name)
{
    return !strcmp(name, XLREAPER_USER_RANGE_BASE) ||
           !strcmp(name, XLREAPER_USER_REAPER);
}

static int range_walk_one(void *arg, const char *name, uid_t uid)
{
    struct range_walk *w = arg;
    xlreaper_ctx *ctx = w->ctx;

    if (uid == w->pet && !reserved_name(name) && !w->pet_owner[0])
        snprintf(w->pet_owner, sizeof(w->pet_owner), "%s", name);
    if (uid < w->base || uid - w->base > xlreaper_max_domid())
        return 0;
    if (uid == w->base && reserved_name(name))
        return 0;
    LOG(ERROR,
        "passwd user %s (uid %lu) is inside the device model uid range "
        "%lu..%lu (it would be domid %lu's uid)",
        name, (unsigned long)uid, (unsigned long)w->base,
        (unsigned long)(w->base + xlreaper_max_domid()),
        (unsigned long)(uid - w->base));
    w->clashes++;
    return 0;
}

/*
 * The quick load (XLREAPER_CONFIG_QUICK, for kill, uid and status) reads
 * /etc/passwd alone.  Where the config gives the value, a name is
 * looked up only to see that passwd agrees, and a disagreement in
 * another NSS source is left to the full loads (check, audit, spawn,
 * the wrapper, the daemon), which refuse it; the answer of the kill
 * does not depend on it.  Where the range base comes from passwd
 * alone, a name /etc/passwd lacks is asked of NSS, which is only
 * slower: NSS reads files first, so what /etc/passwd has is what NSS
 * would say.  The reaper user is not: most hosts have none (the range
 * base is then the pet), and the first NSS call costs more than the
 * kill (dlopen of libnss_systemd, userdb probes: bench/RESULTS.md).  A
 * reaper user that only another NSS source has is left to the full
 * loads; the quick one uses the range base, which is as good a pet:
 * the pet need only run nothing and be no domain's uid, the killer
 * counts it idle before every kill (xlreaper_reap.c), and the global
 * lock keeps it from ever killing beside libxl's own reaper.
 */
static int lookup(xlreaper_ctx *ctx, const char *name, bool quick, bool given,
                  uid_t *uid_r, gid_t *gid_r, bool *found_r)
{
    int rc;

    if (quick) {
        rc = ctx->pw_local->by_name(ctx->pw_local_opaque, name, uid_r, gid_r,
                                    found_r);
        if (rc || *found_r || given)
            goto out;
    }
    rc = ctx->pw->by_name(ctx->pw_opaque, name, uid_r, gid_r, found_r);

out:
    if (rc)
        LOGE(ERROR, "looking up passwd user %s", name);
    return rc;
}

/* An id that a config key may give and a passwd user may hold. */
typedef struct {
    const char *key, *from_key;   /* the key, and "config key <key>" */
    const char *user, *from_user; /* the user, and "passwd user <user>" */
    const char *why;              /* why the key and the user must agree */
} id_rule;

#define ID_RULE(k, u, w)                                                      \
    {                                                                         \
        .key = k, .from_key = "config key " k, .user = u,                     \
        .from_user = "passwd user " u, .why = w                               \
    }

/*
 * The one rule for the range base and the pet: the config key, when
 * set (want >= 0), wins, but must name the passwd user's uid when that
 * user exists (libxl goes by the user); else the user.  given is
 * lookup's.  0 with *found_r (false: neither names one) and, when
 * found, *uid_r, *gid_r (the user's gid, or the key's value) and
 * *from_r; or an error.
 */
static int settle_id(xlreaper_ctx *ctx, const id_rule *r, long want,
                     bool quick, bool given, uid_t *uid_r, gid_t *gid_r,
                     const char **from_r, bool *found_r)
{
    uid_t uid;
    gid_t gid;
    bool found;
    int rc;

    rc = lookup(ctx, r->user, quick, given, &uid, &gid, &found);
    if (rc)
        return rc;
    if (want >= 0) {
        if (found && uid != (uid_t)want) {
            LOG(ERROR, "%s %ld disagrees with passwd user %s (uid %lu)%s",
                r->key, want, r->user, (unsigned long)uid, r->why);
            return XLREAPER_ERROR_INVAL;
        }
        *uid_r = (uid_t)want;
        *gid_r = found ? gid : (gid_t)want;
        *from_r = r->from_key;
        *found_r = true;
        return 0;
    }
    *found_r = found;
    if (found) {
        *uid_r = uid;
        *gid_r = gid;
        *from_r = r->from_user;
    }
    return 0;
}

static int settle_base(xlreaper_ctx *ctx, xlreaper_config *cfg, long want_base,
                       bool quick)
{
    static const id_rule rule =
        ID_RULE("dm_uid_base", XLREAPER_USER_RANGE_BASE,
                ": libxl would start device models in the other range");
    uid_t uid;
    gid_t gid;
    bool found;
    int rc;

    rc = settle_id(ctx, &rule, want_base, quick, want_base >= 0,
                   &cfg->dm_uid_base, &cfg->range_base_gid,
                   &cfg->dm_uid_base_from, &found);
    if (rc)
        return rc;
    if (found && want_base < 0 && cfg->dm_uid_base == 0) {
        LOG(ERROR, "passwd user %s has uid 0 (root)",
            XLREAPER_USER_RANGE_BASE);
        return XLREAPER_ERROR_INVAL;
    }
    if (found)
        return 0;

    rc = lookup(ctx, XLREAPER_USER_SHARED, quick, false, &uid, &gid, &found);
    if (rc)
        return rc;
    if (found) {
        LOG(ERROR,
            "only the shared device model user %s exists: refusing it, "
            "because killing by uid cannot tell apart two domains that "
            "share a uid; create the system user %s (or set dm_uid_base) "
            "to give each domain its own uid",
            XLREAPER_USER_SHARED, XLREAPER_USER_RANGE_BASE);
        return XLREAPER_ERROR_INVAL;
    }
    LOG(ERROR,
        "no device model uid range: create the system user %s or set "
        "dm_uid_base in the config file",
        XLREAPER_USER_RANGE_BASE);
    return XLREAPER_ERROR_INVAL;
}

static int settle_pet(xlreaper_ctx *ctx, xlreaper_config *cfg,
                      long want_reaper, bool quick)
{
    static const id_rule rule = ID_RULE("reaper_uid", XLREAPER_USER_REAPER,
                                        ", which libxl's own reaper uses");
    gid_t gid;
    bool found;
    int rc;

    rc = settle_id(ctx, &rule, want_reaper, quick, want_reaper >= 0 || quick,
                   &cfg->reaper_uid, &gid, &cfg->reaper_uid_from, &found);
    if (rc)
        return rc;
    if (!found) {
        cfg->reaper_uid = cfg->dm_uid_base;
        cfg->reaper_uid_from = "the range base (the uid of domid 0)";
    }

    if (cfg->reaper_uid == 0) {
        LOG(ERROR, "the reaper uid (%s) is 0: it must never be root",
            cfg->reaper_uid_from);
        return XLREAPER_ERROR_INVAL;
    }
    if (cfg->reaper_uid > cfg->dm_uid_base &&
        cfg->reaper_uid - cfg->dm_uid_base <= xlreaper_max_domid()) {
        LOG(ERROR, "the reaper uid %lu (%s) is domid %lu's device model uid",
            (unsigned long)cfg->reaper_uid, cfg->reaper_uid_from,
            (unsigned long)(cfg->reaper_uid - cfg->dm_uid_base));
        return XLREAPER_ERROR_INVAL;
    }
    return 0;
}

int xlreaper__uid_settle(xlreaper_ctx *ctx, xlreaper_config *cfg,
                         long want_base, long want_reaper, bool quick)
{
    struct range_walk w = { .ctx = ctx };
    int rc;

    rc = settle_base(ctx, cfg, want_base, quick);
    if (rc)
        return rc;
    if ((uint64_t)cfg->dm_uid_base + xlreaper_max_domid() > UID_TOP) {
        LOG(ERROR, "dm_uid_base %lu: the range would end past uid %lu",
            (unsigned long)cfg->dm_uid_base, (unsigned long)UID_TOP);
        return XLREAPER_ERROR_INVAL;
    }
    rc = settle_pet(ctx, cfg, want_reaper, quick);
    if (rc)
        return rc;
    if (cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE &&
        cfg->range_base_gid == 0) {
        LOG(ERROR, "dm_gid_mode \"range-base\" would give every device "
                   "model gid 0 (root)");
        return XLREAPER_ERROR_INVAL;
    }

    w.base = cfg->dm_uid_base;
    w.pet = cfg->reaper_uid;
    /* The quick load walks /etc/passwd alone (see lookup). */
    rc = quick ? ctx->pw_local->each(ctx->pw_local_opaque, range_walk_one, &w)
               : ctx->pw->each(ctx->pw_opaque, range_walk_one, &w);
    if (rc) {
        LOGE(ERROR, "walking the passwd database");
        return rc;
    }
    if (w.clashes)
        return XLREAPER_ERROR_INVAL;
    if (w.pet_owner[0]) {
        LOG(ERROR,
            "the reaper uid %lu belongs to passwd user %s: it must be "
            "reserved, because every reap kills what runs under it",
            (unsigned long)cfg->reaper_uid, w.pet_owner);
        return XLREAPER_ERROR_INVAL;
    }
    return 0;
}
