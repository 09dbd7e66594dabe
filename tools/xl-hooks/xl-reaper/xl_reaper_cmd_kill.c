/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_cmd_kill.c - `xl-reaper kill DOMID`: reap and verify.
 * Exit 0 only when no live task of the uid remains.
 */
#include "xl_reaper.h"

int xlr_cmd_kill(xlr_cli *cli, int argc, char **argv)
{
    xlreaper_reap_result res;
    uint32_t domid;
    int rc;

    rc = xlr_domid_only("kill", argc, argv, &domid);
    if (!rc)
        rc = xlr_load_config_oom(cli);
    if (rc)
        return rc;

    xlreaper_reap_result_init(&res);
    rc = xlreaper_reap(cli->ctx, NULL, domid, &res);
    if (res.outcome != XLREAPER_OUTCOME_NONE)
        xlr_print_reap(cli, &res);
    xlreaper_reap_result_dispose(&res);
    return xlr_exit_code(rc);
}
