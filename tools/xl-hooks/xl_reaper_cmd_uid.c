/*
 * xl_reaper_cmd_uid.c - `xl-reaper uid DOMID | --pet`.
 */
#include <stdio.h>
#include <string.h>

#include "xl_reaper.h"

int xlr_cmd_uid(xlr_cli *cli, int argc, char **argv)
{
    const xlreaper_config *cfg = xlreaper_config_get(cli->ctx);
    uint32_t domid;
    uid_t uid;
    gid_t gid;

    if (argc != 2) {
        xlr_error("usage: xl-reaper uid DOMID | --pet");
        return XLR_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--pet")) {
        if (cli->json)
            printf("{\"pet_uid\":%lu}\n", (unsigned long)cfg->reaper_uid);
        else
            printf("%lu\n", (unsigned long)cfg->reaper_uid);
        return XLR_EXIT_OK;
    }
    if (xlr_parse_domid(argv[1], &domid))
        return XLR_EXIT_USAGE;
    if (xlreaper_dm_ids(cli->ctx, domid, &uid, &gid))
        return XLR_EXIT_USAGE;
    if (cli->json)
        printf("{\"domid\":%u,\"uid\":%lu,\"gid\":%lu}\n", domid,
               (unsigned long)uid, (unsigned long)gid);
    else
        printf("%lu %lu\n", (unsigned long)uid, (unsigned long)gid);
    return XLR_EXIT_OK;
}
