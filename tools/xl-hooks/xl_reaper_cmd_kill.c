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

    if (argc != 2) {
        xlr_error("usage: xl-reaper kill DOMID");
        return XLR_EXIT_USAGE;
    }
    if (xlr_parse_domid(argv[1], &domid))
        return XLR_EXIT_USAGE;

    xlreaper_reap_result_init(&res);
    rc = xlreaper_reap(cli->ctx, NULL, domid, &res);
    if (res.outcome != XLREAPER_OUTCOME_NONE)
        xlr_print_reap(cli, &res);
    xlreaper_reap_result_dispose(&res);
    return xlr_exit_code(rc);
}
