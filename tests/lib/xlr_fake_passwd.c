/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_fake_passwd.c - passwd and group databases of the test's own,
 * injected through the library's internal lookup hooks.
 */
#include "xlr_test.h"
#include "xlreaper_internal.h"
#include "xlreaper_host.h"

static const xlrt_user *users;
static const xlrt_group *groups;

static int fake_by_name(void *opaque, const char *name, uid_t *uid_r,
                        gid_t *gid_r, bool *found_r)
{
    (void)opaque;
    *found_r = false;
    for (const xlrt_user *u = users; u && u->name; u++) {
        if (!strcmp(u->name, name)) {
            *uid_r = u->uid;
            *gid_r = u->gid;
            *found_r = true;
        }
    }
    return 0;
}

static int fake_each(void *opaque,
                     int (*fn)(void *arg, const char *name, uid_t uid),
                     void *arg)
{
    (void)opaque;
    for (const xlrt_user *u = users; u && u->name; u++) {
        int rc = fn(arg, u->name, u->uid);
        if (rc)
            return rc;
    }
    return 0;
}

static int fake_each_group(void *opaque,
                           int (*fn)(void *arg, const char *name, gid_t gid,
                                     char *const *members),
                           void *arg)
{
    (void)opaque;
    for (const xlrt_group *g = groups; g && g->name; g++) {
        char *members[] = { (char *)g->member, NULL };
        int rc = fn(arg, g->name, g->gid, members);
        if (rc)
            return rc;
    }
    return 0;
}

static int fake_group_by_gid(void *opaque, gid_t gid, char *name, size_t n,
                             bool *members_r, bool *found_r)
{
    (void)opaque;
    *found_r = false;
    for (const xlrt_group *g = groups; g && g->name; g++) {
        if (g->gid == gid && !*found_r) {
            snprintf(name, n, "%s", g->name);
            *members_r = g->member != NULL;
            *found_r = true;
        }
    }
    return 0;
}

static const xlreaper__passwd_ops fake_ops = { fake_by_name, fake_each,
                                               fake_each_group,
                                               fake_group_by_gid };

void xlrt_fake_passwd(xlreaper_ctx *ctx, const xlrt_user *table)
{
    users = table;
    xlreaper__ctx_set_passwd(ctx, &fake_ops, NULL);
}

void xlrt_fake_groups(const xlrt_group *table)
{
    groups = table;
}
