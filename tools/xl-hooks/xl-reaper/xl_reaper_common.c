/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_common.c - what the CLI's commands share: one form for every
 * message about the user's own mistakes, and the DOMID argument.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xl_reaper.h"

void xlr_error(const char *fmt, ...)
{
    va_list al;

    fputs(XLR_PROG ": error: ", stderr);
    va_start(al, fmt);
    vfprintf(stderr, fmt, al);
    va_end(al);
    fputc('\n', stderr);
    va_start(al, fmt);
    xlr_note_error(fmt, al);
    va_end(al);
}

const xlr_command *xlr_find_command(const char *name)
{
    for (const xlr_command *c = xlr_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

int xlr_usage_error(const char *cmd, const char *fmt, ...)
{
    const xlr_command *c = xlr_find_command(cmd);
    va_list al;

    fprintf(stderr, XLR_PROG ": error: %s: ", cmd);
    va_start(al, fmt);
    vfprintf(stderr, fmt, al);
    va_end(al);
    va_start(al, fmt);
    xlr_note_error(fmt, al);
    va_end(al);
    /* One line: a script's log shows what was wrong and what is right. */
    fprintf(stderr, " (usage: " XLR_PROG " %s%s%s)\n", cmd,
            c && *c->args ? " " : "", c ? c->args : "");
    return c ? c->usage_exit : XLR_EXIT_USAGE;
}

int xlr_option_error(const char *cmd, int opt, char **argv)
{
    /* getopt has stepped past the option; a short one inside a group
     * ("-jx") is named by optopt alone. */
    const char *arg = argv[optind - 1];

    if (opt == ':')
        return xlr_usage_error(cmd, "option '%s' needs a value", arg);
    if (optopt && strncmp(arg, "--", 2))
        return xlr_usage_error(cmd, "unknown option '-%c'", optopt);
    return xlr_usage_error(cmd, "unknown option '%s'", arg);
}

int xlr_parse_domid(const char *arg, uint32_t *domid_r)
{
    if (!arg) {
        xlr_error("missing DOMID");
        return -1;
    }
    if (!strcmp(arg, "0")) {
        xlr_error("domid 0 is dom0: it has no device model uid (its uid "
                  "is the reaper's)");
        return -1;
    }
    if (xlreaper_domid_parse(arg, domid_r)) {
        xlr_error("invalid domid '%s': expected a decimal number from 1 "
                  "to %u",
                  arg, xlreaper_max_domid());
        return -1;
    }
    return 0;
}

/* "--x" or "-x" is an option; "-1" is a (bad) domid. */
static bool looks_like_option(const char *a)
{
    return a[0] == '-' && a[1] && (a[1] < '0' || a[1] > '9');
}

int xlr_domid_only(const char *cmd, int argc, char **argv, uint32_t *domid_r)
{
    const xlr_command *c = xlr_find_command(cmd);
    int bad = c ? c->usage_exit : XLR_EXIT_USAGE;

    if (argc < 2)
        return xlr_usage_error(cmd, "missing DOMID");
    if (looks_like_option(argv[1]))
        return xlr_usage_error(cmd, "unknown option '%s'", argv[1]);
    if (argc > 2)
        return xlr_usage_error(cmd, "unexpected argument '%s' after DOMID",
                               argv[2]);
    return xlr_parse_domid(argv[1], domid_r) ? bad : 0;
}

const char *xlr_range_text(const xlreaper_config *c, char *buf, size_t n)
{
    unsigned long base = c->dm_uid_base;

    snprintf(buf, n, "%lu..%lu (base %lu + domid 1..%u)", base + 1,
             base + xlreaper_max_domid(), base, xlreaper_max_domid());
    return buf;
}

int xlr_load_config(xlr_cli *cli)
{
    int rc =
        xlreaper_config_load(cli->ctx, cli->config_path, cli->config_flags);

    return rc ? xlr_exit_code(rc) : 0;
}

int xlr_load_config_oom(xlr_cli *cli)
{
    int rc = xlr_load_config(cli);

    /* A refusal is logged and the command goes on: a reap without
     * CAP_SYS_RESOURCE is still the only way to empty the uid. */
    if (!rc)
        xlreaper_oom_protect(cli->ctx);
    return rc;
}

int xlr_exit_code(int rc)
{
    switch (rc) {
    case 0:
        return XLR_EXIT_OK;
    case XLREAPER_ERROR_INVAL:
    case XLREAPER_ERROR_PERM:
        return XLR_EXIT_USAGE;
    case XLREAPER_ERROR_LOCK_TIMEOUT:
        return XLR_EXIT_LOCK;
    case XLREAPER_ERROR_REMAIN:
    case XLREAPER_ERROR_BUSY:
        return XLR_EXIT_REMAIN;
    case XLREAPER_ERROR_STUCK: return XLR_EXIT_STUCK;
    default:
        return XLR_EXIT_FAIL;
    }
}

void xlr_print_reap(const xlr_cli *cli, const xlreaper_reap_result *res)
{
    char *s = NULL;

    if (cli->json) {
        if (!xlreaper_reap_result_json(res, &s))
            printf("%s\n", s);
    } else {
        s = xlreaper_reap_result_describe(res);
        if (s)
            printf("%s\n", s);
    }
    free(s);
    fflush(stdout);
}
