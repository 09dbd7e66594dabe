/*
 * xl_reaper_cmd_spawn.c - `xl-reaper spawn [--reap-stale] DOMID -- PROG
 * [ARG...]`: everything is validated before any process is touched; then
 * PROG is exec'd in place, already restricted, under the DM's ids.
 */
#include <getopt.h>
#include <string.h>

#include "xl_reaper.h"

int xlr_cmd_spawn(xlr_cli *cli, int argc, char **argv)
{
    static const struct option opts[] = {
        { "reap-stale", no_argument, NULL, 'r' },
        { NULL, 0, NULL, 0 },
    };
    xlreaper_spawn_plan *plan = NULL;
    unsigned flags = 0;
    uint32_t domid;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (opt != 'r') {
            xlr_error("usage: xl-reaper spawn [--reap-stale] DOMID -- PROG "
                      "[ARG...]");
            return XLR_EXIT_USAGE;
        }
        flags |= XLREAPER_SPAWN_REAP_STALE;
    }
    if (optind + 3 > argc || strcmp(argv[optind + 1], "--")) {
        xlr_error("usage: xl-reaper spawn [--reap-stale] DOMID -- PROG "
                  "[ARG...]");
        return XLR_EXIT_USAGE;
    }
    if (xlr_parse_domid(argv[optind], &domid))
        return XLR_EXIT_USAGE;

    rc = xlreaper_spawn_plan_new(cli->ctx, domid, argv[optind + 2],
                                 argv + optind + 2, &plan);
    if (!rc)
        rc = xlreaper_spawn_exec(cli->ctx, plan, flags);
    /* Only failures come back here. */
    xlreaper_spawn_plan_free(plan);
    return xlr_exit_code(rc);
}
