/* SPDX-License-Identifier: LGPL-2.1-only */
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

    while ((opt = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
        if (opt != 'r')
            return xlr_option_error("spawn", opt, argv);
        flags |= XLREAPER_SPAWN_REAP_STALE;
    }
    /* Each missing piece by name: "usage" alone leaves the reader to
     * find which. */
    if (optind >= argc)
        return xlr_usage_error("spawn", "missing DOMID");
    if (optind + 1 >= argc)
        return xlr_usage_error("spawn", "missing '--' and PROG after "
                                        "DOMID");
    if (strcmp(argv[optind + 1], "--"))
        return xlr_usage_error("spawn",
                               "expected '--' after DOMID, got "
                               "'%s'",
                               argv[optind + 1]);
    if (optind + 2 >= argc)
        return xlr_usage_error("spawn", "missing PROG after '--'");
    if (xlr_parse_domid(argv[optind], &domid))
        return XLR_EXIT_USAGE;
    /* The DM then gets dm_oom_score_adj between fork and execve. */
    rc = xlr_load_config_oom(cli);
    if (rc)
        return rc;

    rc = xlreaper_spawn_plan_new(cli->ctx, domid, argv[optind + 2],
                                 argv + optind + 2, &plan);
    if (!rc)
        rc = xlreaper_spawn_exec(cli->ctx, plan, flags);
    /* Only failures come back here. */
    xlreaper_spawn_plan_free(plan);
    return xlr_exit_code(rc);
}
