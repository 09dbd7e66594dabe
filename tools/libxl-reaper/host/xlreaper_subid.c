/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_subid.c - subordinate id ranges that overlap the DM range.
 *
 * The kernel's per-user count (xlreaper_count.c) charges a task to its
 * real uid in the user namespace that owns it.  A task whose uid is a
 * DM uid inside a user namespace created by another user (newuidmap
 * maps it from /etc/subuid) is charged to that user instead: the count
 * does not see it, though kill(-1) kills it and /proc shows it.  Where
 * /etc/subuid or /etc/subgid hands out ids of the DM range, the count
 * cannot be trusted alone: the reap keeps /proc as a witness, and
 * `xl-reaper check` refuses the config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_host.h"

/* The first line of path whose start:count overlaps [lo, hi], as
 * "path:line (name)", or NULL. */
static char *overlap_in(const char *path, unsigned long lo, unsigned long hi)
{
    char line[512], *found = NULL;
    unsigned n = 0;
    FILE *f = fopen(path, "re");

    if (!f)
        return NULL; /* no file: no subordinate ids */
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned long start, count;
        char name[256];

        n++;
        if (sscanf(line, "%255[^:]:%lu:%lu", name, &start, &count) != 3 ||
            !count)
            continue;
        if (start <= hi && start + count - 1 >= lo &&
            asprintf(&found, "%s:%u (%s: %lu..%lu)", path, n, name, start,
                     start + count - 1) < 0)
            found = NULL;
    }
    fclose(f);
    return found;
}

int xlreaper__subid_check(xlreaper_ctx *ctx, xlreaper_config *cfg)
{
    unsigned long lo = cfg->dm_uid_base,
                  hi = (unsigned long)cfg->dm_uid_base + xlreaper_max_domid();
    const char *uidf = ctx->subuid_file ? ctx->subuid_file : "/etc/subuid";
    const char *gidf = ctx->subgid_file ? ctx->subgid_file : "/etc/subgid";
    char *o = overlap_in(uidf, lo, hi);

    if (!o && cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE)
        o = overlap_in(gidf, cfg->range_base_gid, cfg->range_base_gid);
    else if (!o)
        o = overlap_in(gidf, lo, hi);
    free(cfg->subid_overlap);
    cfg->subid_overlap = o;
    if (o)
        LOG(WARN,
            "%s hands out ids of the DM range %lu..%lu: tasks in user "
            "namespaces escape the kernel count, so every reap also scans "
            "all of /proc",
            o, lo, hi);
    return 0;
}
