/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_cmd_check.c - `xl-reaper check`: the config and the uid
 * range were validated on load; then what a device model needs to start
 * (xlreaper_host_check: the group database, qemu_path, cgroup_parent,
 * the lock, ...).  Prints what would be used, every key's value in
 * force as it would be written in the config file, and one line a
 * check; "ok" only when every check passed, else each problem is named
 * on stderr and the exit is 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xl_reaper.h"
#include "xlreaper_json.h"

/* Room for the longest value: a path (PATH_MAX) in quotes. */
#define VALUE_MAX 4200

/* How xlreaper_host_check marks a line that passed but warns. */
#define WARNING "warning: "

/* One check, as xlreaper_host_check reported it. */
typedef struct {
    char name[32];
    bool ok;
    bool warning; /* passed, but its line starts "warning: " */
    char detail[1024];
} check_line;

typedef struct {
    check_line lines[16];
    unsigned num, failed;
} checks;

static void collect(void *arg, const char *name, bool ok, const char *detail)
{
    checks *cs = arg;
    check_line *l;

    if (cs->num == sizeof(cs->lines) / sizeof(cs->lines[0]))
        return;
    l = &cs->lines[cs->num++];
    snprintf(l->name, sizeof(l->name), "%s", name);
    snprintf(l->detail, sizeof(l->detail), "%s", detail);
    l->ok = ok;
    l->warning = ok && !strncmp(detail, WARNING, strlen(WARNING));
    cs->failed += !ok;
}

static int print_json(const xlreaper_config *c, const checks *cs)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    char value[VALUE_MAX];
    char *json;

    if (!g)
        return XLR_EXIT_FAIL;
    yajl_gen_map_open(g);
    xlreaper_json_str(g, "config", c->path);
    xlreaper_json_int(g, "dm_uid_base", c->dm_uid_base);
    xlreaper_json_int(g, "dm_uid_first", (long long)c->dm_uid_base + 1);
    xlreaper_json_str(g, "dm_uid_base_from", c->dm_uid_base_from);
    xlreaper_json_int(g, "dm_uid_last",
                      (long long)c->dm_uid_base + xlreaper_max_domid());
    xlreaper_json_int(g, "reaper_uid", c->reaper_uid);
    xlreaper_json_str(g, "reaper_uid_from", c->reaper_uid_from);
    xlreaper_json_str(g, "dm_gid_mode",
                      c->dm_gid_mode == XLREAPER_GID_RANGE_BASE
                          ? "range-base"
                          : "per-domain");
    xlreaper_json_str(g, "lock_file", c->lock_file);
    xlreaper_json_int(g, "lock_timeout_ms", c->lock_timeout_ms);
    xlreaper_json_int(g, "reap_timeout_ms", c->reap_timeout_ms);
    xlreaper_json_int(g, "nproc_limit", c->nproc_limit);
    /* Every key, its value as the config file would say it. */
    xlreaper_json_key(g, "settings");
    yajl_gen_map_open(g);
    for (unsigned i = 0; xlreaper_config_key_name(i); i++) {
        int r = xlreaper_config_key_value(c, i, value, sizeof(value));

        if (r < 0)
            continue;
        xlreaper_json_key(g, xlreaper_config_key_name(i));
        /* A number as a number, a string without its quotes. */
        if (r == 1)
            yajl_gen_null(g);
        else if (value[0] == '"')
            yajl_gen_string(g, (const unsigned char *)value + 1,
                            strlen(value) - 2);
        else
            yajl_gen_number(g, value, strlen(value));
    }
    yajl_gen_map_close(g);
    xlreaper_json_key(g, "checks");
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < cs->num; i++) {
        yajl_gen_map_open(g);
        xlreaper_json_str(g, "check", cs->lines[i].name);
        xlreaper_json_bool(g, "ok", cs->lines[i].ok);
        xlreaper_json_bool(g, "warning", cs->lines[i].warning);
        xlreaper_json_str(g, "detail", cs->lines[i].detail);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    xlreaper_json_bool(g, "ok", !cs->failed);
    yajl_gen_map_close(g);
    if (xlreaper_json_done(g, &json))
        return XLR_EXIT_FAIL;
    printf("%s\n", json);
    free(json);
    return cs->failed ? XLR_EXIT_USAGE : XLR_EXIT_OK;
}

int xlr_cmd_check(xlr_cli *cli, int argc, char **argv)
{
    const xlreaper_config *c;
    char value[VALUE_MAX], range[96];
    checks *cs;
    int rc, ret;

    if (argc > 1 && argv[1][0] == '-')
        return xlr_usage_error("check", "unknown option '%s'", argv[1]);
    if (argc > 1)
        return xlr_usage_error("check", "unexpected argument '%s'", argv[1]);
    rc = xlr_load_config(cli);
    if (rc)
        return rc;
    c = xlreaper_config_get(cli->ctx);
    cs = calloc(1, sizeof(*cs));
    if (!cs)
        return XLR_EXIT_FAIL;
    rc = xlreaper_host_check(cli->ctx, collect, cs);
    if (rc && rc != XLREAPER_ERROR_INVAL) {
        free(cs);
        return xlr_exit_code(rc);
    }
    /* Each problem on stderr, where a script sees it; the report on
     * stdout, all of it, so that the reader sees what was in force.  A
     * warning is in the report alone: an exit of 0 writes no stderr. */
    for (unsigned i = 0; i < cs->num; i++)
        if (!cs->lines[i].ok)
            xlr_error("check: %s: %s", cs->lines[i].name, cs->lines[i].detail);
    if (cli->json) {
        ret = print_json(c, cs);
        free(cs);
        return ret;
    }
    printf("config file:     %s\n", c->path ? c->path : "none (defaults)");
    printf("dm uid range:    %s, base from %s\n",
           xlr_range_text(c, range, sizeof(range)), c->dm_uid_base_from);
    printf("reaper uid:      %lu, from %s\n", (unsigned long)c->reaper_uid,
           c->reaper_uid_from);
    if (c->dm_gid_mode == XLREAPER_GID_RANGE_BASE)
        printf("dm gid:          %lu for every domain (range-base)\n",
               (unsigned long)c->range_base_gid);
    else
        printf("dm gid:          the DM's uid (per-domain)\n");
    printf("lock file:       %s (wait at most %u ms)\n", c->lock_file,
           c->lock_timeout_ms);
    printf("reap timeout:    %u ms\n", c->reap_timeout_ms);
    printf("nproc limit:     %u\n", c->nproc_limit);
    printf("settings in force:\n");
    for (unsigned i = 0; xlreaper_config_key_name(i); i++) {
        int r = xlreaper_config_key_value(c, i, value, sizeof(value));

        if (r == 1)
            printf("  # %s is not set\n", xlreaper_config_key_name(i));
        else if (!r)
            printf("  %s = %s\n", xlreaper_config_key_name(i), value);
    }
    printf("what a device model needs:\n");
    for (unsigned i = 0; i < cs->num; i++)
        printf("  %-6s %-16s %s\n",
               !cs->lines[i].ok       ? "FAILED"
               : cs->lines[i].warning ? "warn"
                                      : "ok",
               cs->lines[i].name,
               cs->lines[i].detail +
                   (cs->lines[i].warning ? strlen(WARNING) : 0));
    if (cs->failed)
        printf("not ok: %u problem%s\n", cs->failed,
               cs->failed == 1 ? "" : "s");
    else
        printf("ok\n");
    ret = cs->failed ? XLR_EXIT_USAGE : XLR_EXIT_OK;
    free(cs);
    return ret;
}
