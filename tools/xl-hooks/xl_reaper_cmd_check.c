/*
 * xl_reaper_cmd_check.c - `xl-reaper check`: the config and the uid
 * range were validated on load; print what would be used.
 */
#include <stdio.h>

#include "xl_reaper.h"

int xlr_cmd_check(xlr_cli *cli, int argc, char **argv)
{
    const xlreaper_config *c = xlreaper_config_get(cli->ctx);
    unsigned long base = c->dm_uid_base;

    (void)argv;
    if (argc != 1) {
        xlr_error("usage: xl-reaper check");
        return XLR_EXIT_USAGE;
    }
    if (cli->json) {
        printf("{\"config\":%s%s%s,\"dm_uid_base\":%lu,\"dm_uid_last\":%lu,"
               "\"reaper_uid\":%lu,\"dm_gid_mode\":\"%s\","
               "\"lock_file\":\"%s\",\"lock_timeout_ms\":%u,"
               "\"reap_timeout_ms\":%u,\"nproc_limit\":%u}\n",
               c->path ? "\"" : "", c->path ? c->path : "null",
               c->path ? "\"" : "", base, base + xlreaper_max_domid(),
               (unsigned long)c->reaper_uid,
               c->dm_gid_mode == XLREAPER_GID_RANGE_BASE ? "range-base"
                                                         : "per-domain",
               c->lock_file, c->lock_timeout_ms, c->reap_timeout_ms,
               c->nproc_limit);
        return XLR_EXIT_OK;
    }
    printf("config file:     %s\n", c->path ? c->path : "none (defaults)");
    printf("dm uid range:    %lu..%lu (domid 1..%u), base from %s\n",
           base + 1, base + xlreaper_max_domid(), xlreaper_max_domid(),
           c->dm_uid_base_from);
    printf("reaper uid:      %lu, from %s\n", (unsigned long)c->reaper_uid,
           c->reaper_uid_from);
    if (c->dm_gid_mode == XLREAPER_GID_RANGE_BASE)
        printf("dm gid:          %lu for every domain (range-base)\n",
               (unsigned long)c->range_base_gid);
    else
        printf("dm gid:          the DM's uid (per-domain)\n");
    printf("lock file:       %s (wait at most %u ms)\n", c->lock_file,
           c->lock_timeout_ms);
    printf("reap timeout:    %u ms\n", c->reap_timeout_ms);
    printf("nproc limit:     %u\n", c->nproc_limit);
    printf("ok\n");
    return XLR_EXIT_OK;
}
