/*
 * xl_reaper_main.c - xl-reaper, the admin CLI:
 *   xl-reaper [--config FILE] [--json] [-v] COMMAND ...
 */
#include <getopt.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xl_reaper.h"

/*
 * destroy and audit need libxenlight: they are linked into xl-reaper-xen
 * only, and in xl-reaper these references are NULL and the command is
 * handed to xl-reaper-xen (xl_reaper_xen_handoff.c).
 */
#pragma weak xlr_cmd_destroy
#pragma weak xlr_cmd_audit

const xlr_command xlr_commands[] = {
    { "uid", "DOMID | --pet", "print a DM's uid and gid, or the pet uid",
      xlr_cmd_uid },
    { "spawn", "[--reap-stale] DOMID -- PROG [ARG...]",
      "exec PROG in place under DOMID's DM uid, restricted", xlr_cmd_spawn },
    { "kill", "DOMID", "kill every task of DOMID's DM uid and verify",
      xlr_cmd_kill },
    { "destroy", "DOMID",
      "destroy the domain through libxl, then reap its DM uid and verify",
      xlr_cmd_destroy },
    { "status", "DOMID", "show the tasks of DOMID's DM uid (read-only)",
      xlr_cmd_status },
    { "check", "", "validate the config and the uid range", xlr_cmd_check },
    { "audit",
      "[--tap | --json] [--fix] [--probe-all] [--xenstore-timeout MS]",
      "check every DM is jailed and every dead domain's uid is empty",
      xlr_cmd_audit },
    { NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xl-reaper [--config FILE] [--json] [-v] COMMAND ...\n"
            "\n"
            "options:\n"
            "  -c, --config FILE  config file (default %s;\n"
            "                     when that is absent, the defaults)\n"
            "  -j, --json         machine-readable output\n"
            "  -v, --verbose      more log output (twice: debug)\n"
            "  -h, --help         this text\n"
            "\n"
            "commands:\n",
            XLREAPER_DEFAULT_CONFIG);
    for (const xlr_command *c = xlr_commands; c->name; c++)
        fprintf(f, "  %s %s\n      %s\n", c->name, c->args, c->summary);
    fprintf(f, "\nexit: 0 ok, 1 bad input or config, 2 lock timeout, "
               "3 tasks remain, 4 system error\n"
               "audit exits 0 all passed, 1 a violation, 2 could not "
               "check\n");
}

static const xlr_command *find_command(const char *name)
{
    for (const xlr_command *c = xlr_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    xlr_cli cli = { 0 };
    xentoollog_logger_stdiostream *lg;
    xentoollog_level level = XTL_WARN;
    const xlr_command *cmd;
    unsigned flags = 0;
    int opt, rc, ret, ci;

    opterr = 0; /* one line of our own for a bad option, not getopt's */
    while ((opt = getopt_long(argc, argv, "+c:jvh", opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            cli.config_path = optarg;
            flags |= XLREAPER_CONFIG_MUST_EXIST;
            break;
        case 'j':
            cli.json = true;
            break;
        case 'v':
            level = level == XTL_WARN ? XTL_INFO : XTL_DEBUG;
            break;
        case 'h':
            usage(stdout);
            return XLR_EXIT_OK;
        default:
            xlr_error("unknown option '%s' (see xl-reaper --help)",
                      argv[optind - 1]);
            return XLR_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        xlr_error("missing COMMAND (see xl-reaper --help)");
        return XLR_EXIT_USAGE;
    }
    ci = optind;
    cmd = find_command(argv[ci]);
    if (!cmd) {
        xlr_error("unknown command '%s' (see xl-reaper --help)",
                  argv[ci]);
        return XLR_EXIT_USAGE;
    }
    if (!cmd->fn)
        return xlr_xen_handoff(argv, !strcmp(cmd->name, "audit")
                                         ? XLR_AUDIT_EXIT_UNKNOWN
                                         : XLR_EXIT_FAIL);

    /* A kill is most needed on a host full of racers, where a process
     * at the default priority waits a whole scheduling period at every
     * step.  The reap raises its own priority (xlreaper_sched.c); this
     * covers reading the config before it.  Without CAP_SYS_NICE
     * nothing changes. */
    if (cmd->fn == xlr_cmd_kill)
        setpriority(PRIO_PROCESS, 0, -20);
    /* These read the range against /etc/passwd alone: NSS's first call
     * would cost more than the kill (xlreaper.h, XLREAPER_CONFIG_QUICK).
     * spawn, check and audit, which vouch for the range, walk it all. */
    if (cmd->fn == xlr_cmd_kill || cmd->fn == xlr_cmd_uid ||
        cmd->fn == xlr_cmd_status ||
        (xlr_cmd_destroy && cmd->fn == xlr_cmd_destroy))
        flags |= XLREAPER_CONFIG_QUICK;

    lg = xtl_createlogger_stdiostream(stderr, level, 0);
    if (!lg)
        return XLR_EXIT_FAIL;
    cli.lg = (xentoollog_logger *)lg;
    rc = xlreaper_ctx_alloc(&cli.ctx, cli.lg);
    if (rc) {
        ret = XLR_EXIT_FAIL;
        goto out;
    }
    rc = xlreaper_config_load(cli.ctx, cli.config_path, flags);
    if (rc) {
        /* For audit a config that does not load means "could not
         * check", not its exit 1, "a violation". */
        ret = cmd->fn == xlr_cmd_audit ? XLR_AUDIT_EXIT_UNKNOWN
                                       : xlr_exit_code(rc);
        goto out;
    }
    /* Each command parses its own options, its name as argv[0]; 0 makes
     * getopt start afresh. */
    optind = 0;
    ret = cmd->fn(&cli, argc - ci, argv + ci);

out:
    xlreaper_ctx_free(cli.ctx);
    xtl_logger_destroy(cli.lg);
    return ret;
}
