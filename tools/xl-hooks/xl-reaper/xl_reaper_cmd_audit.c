/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_cmd_audit.c - `xl-reaper audit [--tap | --json |
 * --prometheus | --prometheus-file FILE] [--fix] [--probe-all]
 * [--xenstore-timeout MS] [--setid-timeout MS] [--deadline MS]
 * [--dm-timeout MS]`: is every DM jailed, is
 * every dead domain's uid empty, does no set-id file lead back into the
 * range?  Changes nothing unless --fix.
 *
 * Exit codes (not the other commands' ones; test harnesses rely on
 * them): 0 every check passed, 1 a violation, 2 could not check (bad
 * usage, no config, not root, no source of live domains, ...; the output
 * says what).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xl_reaper.h"

static const char *mark(const xlreaper_audit_check *c)
{
    switch (c->status) {
    case XLREAPER_AUDIT_PASS:
        return c->fixed ? "\u2713 fixed" : "\u2713";
    case XLREAPER_AUDIT_FAIL:
        return "\u2717";
    case XLREAPER_AUDIT_UNKNOWN:
        return "? could not check:";
    case XLREAPER_AUDIT_SKIP:
        return "-";
    }
    return "?";
}

static void col_domid(char *buf, size_t n, const xlreaper_audit_check *c)
{
    if (c->domid == XLREAPER_AUDIT_NO_DOMID)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%u", c->domid);
}

static void col_uid(char *buf, size_t n, const xlreaper_audit_check *c)
{
    if (c->uid == XLREAPER_AUDIT_NO_UID)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%lu", (unsigned long)c->uid);
}

static void col_pid(char *buf, size_t n, const xlreaper_audit_check *c)
{
    if (!c->pid)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%ld", (long)c->pid);
}

typedef struct {
    unsigned pass, fail, unknown, skip, fixed;
} tally;

static tally count(const xlreaper_audit_result *res)
{
    tally t = { 0 };

    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        t.pass += c->status == XLREAPER_AUDIT_PASS;
        t.fail += c->status == XLREAPER_AUDIT_FAIL;
        t.unknown += c->status == XLREAPER_AUDIT_UNKNOWN;
        t.skip += c->status == XLREAPER_AUDIT_SKIP;
        t.fixed += c->fixed;
    }
    return t;
}

static int exit_for(xlreaper_audit_status v)
{
    return v == XLREAPER_AUDIT_FAIL      ? XLR_AUDIT_EXIT_VIOLATION
           : v == XLREAPER_AUDIT_UNKNOWN ? XLR_AUDIT_EXIT_UNKNOWN
                                         : XLR_AUDIT_EXIT_OK;
}

static void summary(FILE *f, const char *prefix,
                    const xlreaper_audit_result *res, int ret)
{
    tally t = count(res);

    fprintf(f,
            "%saudit: %s: %u violation%s, %u could not check, %u passed, "
            "%u skipped%s; %u /proc pass%s (%s), %u kernel-count probe%s, "
            "%.1f ms (deadline %u ms%s); exit %d\n",
            prefix,
            ret == XLR_AUDIT_EXIT_OK          ? "PASS"
            : ret == XLR_AUDIT_EXIT_VIOLATION ? "FAIL"
                                              : "COULD NOT CHECK",
            t.fail, t.fail == 1 ? "" : "s", t.unknown, t.pass, t.skip,
            t.fixed ? " (some fixed by --fix)" : "", res->passes,
            res->passes == 1 ? "" : "es", res->quiet ? "quiet" : "not quiet",
            res->probes, res->probes == 1 ? "" : "s",
            (double)res->duration_us / 1000.0, res->deadline_ms,
            res->deadline_passed ? ", passed" : "", ret);
}

static void print_table(const xlr_cli *cli, const xlreaper_audit_result *res,
                        int ret)
{
    const xlreaper_config *cfg = xlreaper_config_get(cli->ctx);

    char range[96];

    printf("xl-reaper audit: dm uid range %s, reaper uid %lu\n",
           xlr_range_text(cfg, range, sizeof(range)),
           (unsigned long)cfg->reaper_uid);
    printf("%-6s %-10s %-8s %-14s %s\n", "DOMID", "UID", "PID", "CHECK",
           "RESULT");
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        char d[16], u[16], p[16];

        col_domid(d, sizeof(d), c);
        col_uid(u, sizeof(u), c);
        col_pid(p, sizeof(p), c);
        printf("%-6s %-10s %-8s %-14s %s %s\n", d, u, p, c->name, mark(c),
               c->reason);
    }
    summary(stdout, "", res, ret);
}

/* A TAP description may not hold '#' (it starts a directive). */
static void tap_text(const char *s)
{
    for (; *s; s++) {
        if (*s == '#' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
}

static void yaml_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

/* TAP 13: one test line per check, the plan first; a YAML block for
 * every failure; "could not check" is a failed test too. */
static void print_tap(const xlreaper_audit_result *res, int ret)
{
    printf("TAP version 13\n1..%u\n", res->num);
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        bool ok = c->status == XLREAPER_AUDIT_PASS ||
                  c->status == XLREAPER_AUDIT_SKIP;

        printf("%s %u - ", ok ? "ok" : "not ok", i + 1);
        if (c->domid != XLREAPER_AUDIT_NO_DOMID)
            printf("domid %u ", c->domid);
        if (c->uid != XLREAPER_AUDIT_NO_UID)
            printf("uid %lu ", (unsigned long)c->uid);
        if (c->pid)
            printf("pid %ld ", (long)c->pid);
        printf("%s", c->name);
        if (c->status == XLREAPER_AUDIT_SKIP) {
            printf(" # SKIP ");
            tap_text(c->reason);
        } else {
            printf(": %s%s", c->fixed ? "fixed: " : "",
                   c->status == XLREAPER_AUDIT_UNKNOWN ? "could not check: "
                                                       : "");
            tap_text(c->reason);
        }
        putchar('\n');
        if (ok)
            continue;
        printf("  ---\n  check: %s\n  status: %s\n", c->name,
               xlreaper_audit_status_name(c->status));
        if (c->domid != XLREAPER_AUDIT_NO_DOMID)
            printf("  domid: %u\n", c->domid);
        if (c->uid != XLREAPER_AUDIT_NO_UID)
            printf("  uid: %lu\n", (unsigned long)c->uid);
        if (c->pid)
            printf("  pid: %ld\n", (long)c->pid);
        printf("  reason: ");
        yaml_string(c->reason);
        printf("\n  ...\n");
    }
    summary(stdout, "# ", res, ret);
}

typedef enum { OUT_TABLE, OUT_TAP, OUT_JSON, OUT_PROM } out_kind;

typedef struct {
    out_kind out;
    const char *prom_file; /* OUT_PROM: NULL for stdout */
    xlreaper_audit_opts ao;
} audit_args;

/* 0, or the exit code of a usage error (said). */
static int parse_args(audit_args *a, bool json, int argc, char **argv)
{
    static const struct option opts[] = {
        { "tap", no_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "prometheus", no_argument, NULL, 'P' },
        { "prometheus-file", required_argument, NULL, 'F' },
        { "fix", no_argument, NULL, 'f' },
        { "probe-all", no_argument, NULL, 'p' },
        { "xenstore-timeout", required_argument, NULL, 'x' },
        { "setid-timeout", required_argument, NULL, 's' },
        { "deadline", required_argument, NULL, 'd' },
        { "dm-timeout", required_argument, NULL, 'm' },
        { NULL, 0, NULL, 0 },
    };
    unsigned outs = json;
    size_t n;
    char *end;
    long v;
    int opt;

    memset(a, 0, sizeof(*a));
    xlreaper_audit_opts_init(&a->ao);
    a->out = json ? OUT_JSON : OUT_TABLE;
    while ((opt = getopt_long(argc, argv, "+:tjfpx:s:d:m:", opts, NULL)) !=
           -1) {
        switch (opt) {
        case 't':
            a->out = OUT_TAP;
            outs++;
            break;
        case 'j':
            /* The global --json and this one are the same request. */
            outs += a->out != OUT_JSON;
            a->out = OUT_JSON;
            break;
        case 'F':
            n = strlen(optarg);
            /* The textfile collector reads *.prom files only. */
            if (n < 6 || strcmp(optarg + n - 5, ".prom") ||
                optarg[n - 6] == '/')
                return xlr_usage_error("audit",
                                       "--prometheus-file '%s': the name "
                                       "must end in .prom (node_exporter's "
                                       "textfile collector reads no other)",
                                       optarg);
            a->prom_file = optarg;
            /* fall through */
        case 'P':
            a->out = OUT_PROM;
            outs++;
            break;
        case 'f':
            a->ao.flags |= XLREAPER_AUDIT_FIX;
            break;
        case 'p':
            a->ao.flags |= XLREAPER_AUDIT_PROBE_ALL;
            break;
        case 'x':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 600000)
                return xlr_usage_error("audit",
                                       "--xenstore-timeout '%s': "
                                       "a number of ms, 1..600000",
                                       optarg);
            a->ao.xenstore_timeout_ms = (unsigned)v;
            break;
        case 's':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 3600000)
                return xlr_usage_error("audit", "--setid-timeout '%s': "
                                                "a number of ms, 0..3600000 "
                                                "(0: no set-id walk)",
                                       optarg);
            a->ao.setid_timeout_ms = (unsigned)v;
            break;
        case 'd':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 3600000)
                return xlr_usage_error("audit",
                                       "--deadline '%s': a number "
                                       "of ms, 1..3600000",
                                       optarg);
            a->ao.deadline_ms = (unsigned)v;
            break;
        case 'm':
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 600000)
                return xlr_usage_error("audit",
                                       "--dm-timeout '%s': a "
                                       "number of ms, 1..600000",
                                       optarg);
            a->ao.dm_timeout_ms = (unsigned)v;
            break;
        default: return xlr_option_error("audit", opt, argv);
        }
    }
    if (optind != argc)
        return xlr_usage_error("audit", "unexpected argument '%s'",
                               argv[optind]);
    if (outs > 1)
        return xlr_usage_error("audit", "--tap and --json exclude each "
                                        "other, and both exclude "
                                        "--prometheus[-file]");
    return 0;
}

/* The directory of path exists, is a directory and may be written. */
static int prom_dir_check(const char *path)
{
    char *copy = strdup(path);
    const char *dir;
    struct stat st;
    int r = -1;

    if (!copy) {
        xlr_error("audit: out of memory");
        return -1;
    }
    dir = dirname(copy);
    if (stat(dir, &st) < 0)
        xlr_error("audit --prometheus-file %s: %s: %s; nothing audited", path,
                  dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        xlr_error("audit --prometheus-file %s: %s is not a directory; "
                  "nothing audited",
                  path, dir);
    else if (access(dir, W_OK | X_OK) < 0)
        xlr_error("audit --prometheus-file %s: %s: %s; nothing audited", path,
                  dir, strerror(errno));
    else
        r = 0;
    free(copy);
    return r;
}

int xlr_cmd_audit(xlr_cli *cli, int argc, char **argv)
{
    audit_args a;
    xlreaper_audit_result res;
    char *js = NULL;
    int rc, ret;

    ret = parse_args(&a, cli->json, argc, argv);
    if (ret)
        return ret;
    /* Where the metrics go is looked at first: an audit of minutes that
     * ends unable to write them has checked for nothing. */
    if (a.prom_file && prom_dir_check(a.prom_file) < 0)
        return XLR_AUDIT_EXIT_UNKNOWN;

    /* A config that does not load means "could not check", not exit 1,
     * "a violation"; the metrics say so rather than go stale. */
    if (xlr_load_config(cli)) {
        if (a.out == OUT_PROM)
            xlr_audit_prometheus(NULL, "the config did not load",
                                 a.prom_file);
        return XLR_AUDIT_EXIT_UNKNOWN;
    }
    xlreaper_audit_result_init(&res);
    rc = xlreaper_audit(cli->ctx, &a.ao, &res);
    ret = rc ? XLR_AUDIT_EXIT_UNKNOWN : exit_for(xlreaper_audit_verdict(&res));
    switch (a.out) {
    case OUT_JSON:
        if (xlreaper_audit_result_json(&res, &js) == 0)
            printf("%s\n", js);
        free(js);
        break;
    case OUT_TAP:
        print_tap(&res, ret);
        break;
    case OUT_PROM:
        /* A metrics file that cannot be written is no audit for the
         * collector: could not check, whatever was found. */
        if (xlr_audit_prometheus(&res, rc ? xlreaper_strerror(rc) : NULL,
                                 a.prom_file) < 0 &&
            ret == XLR_AUDIT_EXIT_OK)
            ret = XLR_AUDIT_EXIT_UNKNOWN;
        break;
    case OUT_TABLE:
        print_table(cli, &res, ret);
        break;
    }
    if (rc)
        xlr_error("audit: could not check: %s", xlreaper_strerror(rc));
    if (a.ao.flags & XLREAPER_AUDIT_FIX)
        for (unsigned i = 0; i < res.num; i++)
            if (res.checks[i].fixed)
                fprintf(stderr, XLR_PROG ": notice: audit --fix: %s\n",
                        res.checks[i].reason);
    fflush(stdout);
    xlreaper_audit_result_dispose(&res);
    return ret;
}
