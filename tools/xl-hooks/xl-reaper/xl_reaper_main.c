/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_main.c - xl-reaper, the admin CLI:
 *   xl-reaper [--config FILE] [--json] [-v] COMMAND ...
 */
#include <getopt.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xl_reaper.h"

/*
 * destroy and audit need libxenlight: they are linked into xl-reaper-xen
 * only, and in xl-reaper these references are NULL and the command is
 * handed to xl-reaper-xen (xl_reaper_xen_handoff.c).
 */
#pragma weak xlr_cmd_destroy
#pragma weak xlr_cmd_audit

#define EXITS                                                                 \
    "exit: 0 ok, 1 bad input or config, 2 lock timeout, "                     \
    "3 tasks remain,\n4 system error, 5 tasks stuck in D state\n"

const xlr_command xlr_commands[] = {
    { "uid", "DOMID | --pet", "print a DM's uid and gid, or the pet uid",
      xlr_cmd_uid,
      "DOMID is a decimal number from 1 to 32751.  --pet prints the real\n"
      "uid of every killer, which must never run anything.\n" EXITS,
      XLR_EXIT_USAGE },
    { "spawn", "[--reap-stale] DOMID -- PROG [ARG...]",
      "exec PROG in place under DOMID's DM uid, restricted", xlr_cmd_spawn,
      "  --reap-stale  reap the uid first when something still runs "
      "under it\n"
      "\n"
      "Everything is checked first; then, under the reaper lock, the uid\n"
      "must be empty, and PROG runs in place with the restrictions of the\n"
      "config under the DM's ids.  Returns only if a step failed, naming\n"
      "it.  Needs root.\n" EXITS,
      XLR_EXIT_USAGE, true },
    { "kill", "DOMID", "kill every task of DOMID's DM uid and verify",
      xlr_cmd_kill,
      "One kill(-1, SIGKILL) from a child holding the uid, under the\n"
      "reaper lock, verified by the kernel's count of the uid's tasks.\n"
      "Needs root.\n"
      "exit: 0 no live task of the uid remains, 1 bad input or config,\n"
      "2 lock timeout, 3 tasks remain (it says which), 4 system error,\n"
      "5 killed tasks stuck in D state (it says which, and where)\n",
      XLR_EXIT_USAGE, true },
    { "destroy", "DOMID",
      "destroy the domain through libxl, then reap its DM uid and verify",
      xlr_cmd_destroy,
      "The reap is skipped if the domid lives again after the destroy\n"
      "(reused: exit 3).  Needs root and Xen.\n" EXITS,
      XLR_EXIT_USAGE, true },
    { "status", "DOMID", "show the tasks of DOMID's DM uid (read-only)",
      xlr_cmd_status,
      "The kernel's count of the uid's tasks, and what /proc shows.\n"
      "Needs root.\n"
      "exit: 0 the kernel counts no task, 1 bad input or config, 2 lock\n"
      "timeout, 3 it counts some\n",
      XLR_EXIT_USAGE, true },
    { "check", "", "check the config, the uid range and what a DM needs",
      xlr_cmd_check,
      "Loads the config; checks the uid range against the passwd and\n"
      "group databases and the subordinate ids, and what the wrapper and\n"
      "the daemon need: qemu_path, cgroup_parent, the lock file's\n"
      "directory.  Prints the settings in force and one line a check;\n"
      "\"ok\" only when a device model can start.  Run it as root.\n"
      "exit: 0 ok, 1 a problem (each one is named on stderr)\n",
      XLR_EXIT_USAGE },
    { "audit",
      "[--tap | --json | --prometheus | --prometheus-file FILE] [--fix] "
      "[--probe-all] [--xenstore-timeout MS] [--setid-timeout MS] "
      "[--deadline MS] [--dm-timeout MS]",
      "check every DM is jailed and every dead domain's uid is empty",
      xlr_cmd_audit,
      "  --tap                  TAP version 13\n"
      "  --json                 one JSON object\n"
      "  --prometheus           node_exporter's textfile format\n"
      "  --prometheus-file FILE the same into FILE (*.prom), replaced\n"
      "                         atomically\n"
      "  --fix                  reap every leftover uid and clear the set-id\n"
      "                         bits of the range's files, and say so\n"
      "  --probe-all            ask the kernel's count of every dead uid\n"
      "  --xenstore-timeout MS  wait at most MS for xenstored "
      "(default 2000)\n"
      "  --setid-timeout MS     walk the writable file systems for set-id\n"
      "                         files of the range for at most MS (default\n"
      "                         120000; 0: no walk)\n"
      "  --deadline MS          the whole audit's deadline, the walk aside\n"
      "                         (default 5000 plus --dm-timeout per\n"
      "                         process of a live domain's uid)\n"
      "  --dm-timeout MS        read one such process's /proc for at most\n"
      "                         MS (default 3000)\n"
      "\n"
      "Changes nothing without --fix.  Needs root.\n"
      "exit: 0 every check passed, 1 a violation, 2 could not check\n",
      XLR_AUDIT_EXIT_UNKNOWN, true },
    { NULL, NULL, NULL, NULL, NULL, 0, false },
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
            "  -V, --version      print the version\n"
            "  -h, --help         this text; COMMAND --help: the "
            "command's\n"
            "\n"
            "commands:\n",
            XLREAPER_DEFAULT_CONFIG);
    for (const xlr_command *c = xlr_commands; c->name; c++)
        fprintf(f, "  %s %s\n      %s\n", c->name, c->args, c->summary);
    fprintf(f, "\n" EXITS "audit exits 0 all passed, 1 a violation, 2 "
               "could not check\n");
}

static void command_help(const xlr_command *c)
{
    printf("usage: xl-reaper [--config FILE] [--json] [-v] %s%s%s\n\n"
           "%c%s.\n\n%s",
           c->name, *c->args ? " " : "", c->args, c->summary[0] - 'a' + 'A',
           c->summary + 1, c->help);
}

/* `COMMAND --help` (or -h) anywhere among its options, never past a
 * "--": answered before any config is read, so that it works on a host
 * with none, or a broken one. */
static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    xlr_cli cli = { 0 };
    xentoollog_logger_stdiostream *lg;
    xentoollog_level level = XTL_WARN;
    const xlr_command *cmd;
    unsigned flags = 0;
    int opt, rc, ret, ci;

    opterr = 0; /* one line of our own for a bad option, not getopt's */
    while ((opt = getopt_long(argc, argv, "+:c:jvhV", opts, NULL)) != -1) {
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
        case 'V':
            printf("xl-reaper %s\n", XLREAPER_VERSION);
            return XLR_EXIT_OK;
        case ':':
            xlr_error("option '%s' needs a value (see xl-reaper --help)",
                      argv[optind - 1]);
            return XLR_EXIT_USAGE;
        default:
            if (optopt && strncmp(argv[optind - 1], "--", 2))
                xlr_error("unknown option '-%c' (see xl-reaper --help)",
                          optopt);
            else
                xlr_error("unknown option '%s' (see xl-reaper --help)",
                          argv[optind - 1]);
            return XLR_EXIT_USAGE;
        }
    }
    if (cli.json)
        xlr_json_begin();
    if (optind >= argc) {
        xlr_error("missing COMMAND (see xl-reaper --help)");
        if (cli.json)
            xlr_json_error(NULL, NULL, XLR_EXIT_USAGE);
        return XLR_EXIT_USAGE;
    }
    ci = optind;
    cmd = xlr_find_command(argv[ci]);
    if (!cmd) {
        xlr_error("unknown command '%s' (see xl-reaper --help)",
                  argv[ci]);
        if (cli.json)
            xlr_json_error(argv[ci], NULL, XLR_EXIT_USAGE);
        return XLR_EXIT_USAGE;
    }
    if (wants_help(argc - ci, argv + ci)) {
        command_help(cmd);
        return XLR_EXIT_OK;
    }
    /* Said first: as another uid, a spawn got as far as "chroot ...:
     * Permission denied" and a destroy as libxl's own errors. */
    if (cmd->needs_root && geteuid() != 0) {
        xlr_error("%s needs root (running as uid %lu)", cmd->name,
                  (unsigned long)geteuid());
        if (cli.json)
            xlr_json_error(cmd->name, NULL, cmd->usage_exit);
        return cmd->usage_exit;
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
    /* The tee remembers the last error for a --json error object. */
    cli.lg = xlr_tee_logger((xentoollog_logger *)lg);
    if (!cli.lg) {
        xtl_logger_destroy((xentoollog_logger *)lg);
        return XLR_EXIT_FAIL;
    }
    rc = xlreaper_ctx_alloc(&cli.ctx, cli.lg);
    if (rc) {
        ret = XLR_EXIT_FAIL;
        goto out;
    }
    xlreaper_ctx_set_progname(cli.ctx, XLR_PROG);
    cli.config_flags = flags;
    /* Each command parses its own options, its name as argv[0] (0 makes
     * getopt start afresh), and only then loads the config: a usage
     * error is named on a host with no config, or a broken one. */
    optind = 0;
    ret = cmd->fn(&cli, argc - ci, argv + ci);
    if (cli.json && ret != XLR_EXIT_OK)
        xlr_json_error(cmd->name, NULL, ret);

out:
    xlreaper_ctx_free(cli.ctx);
    xtl_logger_destroy(cli.lg);
    return ret;
}
