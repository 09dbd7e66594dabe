/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_cmd_uid.c - `xl-reaper uid DOMID | --pet`.
 */
#include <stdio.h>
#include <string.h>

#include "xl_reaper.h"

int xlr_cmd_uid(xlr_cli *cli, int argc, char **argv)
{
    const xlreaper_config *cfg;
    uint32_t domid;
    uid_t uid;
    gid_t gid;
    int rc;

    if (argc >= 3 && !strcmp(argv[1], "--pet"))
        return xlr_usage_error("uid",
                               "unexpected argument '%s' after "
                               "--pet",
                               argv[2]);
    if (argc >= 2 && !strcmp(argv[1], "--pet")) {
        rc = xlr_load_config(cli);
        if (rc)
            return rc;
        cfg = xlreaper_config_get(cli->ctx);
        if (cli->json)
            printf("{\"pet_uid\":%lu}\n", (unsigned long)cfg->reaper_uid);
        else
            printf("%lu\n", (unsigned long)cfg->reaper_uid);
        return XLR_EXIT_OK;
    }
    rc = xlr_domid_only("uid", argc, argv, &domid);
    if (!rc)
        rc = xlr_load_config(cli);
    if (rc)
        return rc;
    if (xlreaper_dm_ids(cli->ctx, domid, &uid, &gid))
        return XLR_EXIT_USAGE;
    if (cli->json)
        printf("{\"domid\":%u,\"uid\":%lu,\"gid\":%lu}\n", domid,
               (unsigned long)uid, (unsigned long)gid);
    else
        printf("%lu %lu\n", (unsigned long)uid, (unsigned long)gid);
    return XLR_EXIT_OK;
}
