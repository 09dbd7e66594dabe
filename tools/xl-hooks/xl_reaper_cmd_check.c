/*
 * xl_reaper_cmd_check.c - `xl-reaper check`: the config and the uid
 * range were validated on load; print what would be used, and every
 * key's value in force, as it would be written in the config file.
 */
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "xl_reaper.h"

/* Room for the longest value: a path (PATH_MAX) in quotes. */
#define VALUE_MAX 4200

static void gen_str(yajl_gen g, const char *s)
{
    yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static int print_json(const xlreaper_config *c)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    const unsigned char *buf;
    char value[VALUE_MAX];
    size_t len;

    if (!g)
        return XLR_EXIT_FAIL;
    yajl_gen_map_open(g);
    gen_str(g, "config");
    if (c->path)
        gen_str(g, c->path);
    else
        yajl_gen_null(g);
    gen_str(g, "dm_uid_base");
    yajl_gen_integer(g, c->dm_uid_base);
    gen_str(g, "dm_uid_base_from");
    gen_str(g, c->dm_uid_base_from);
    gen_str(g, "dm_uid_last");
    yajl_gen_integer(g, (long long)c->dm_uid_base + xlreaper_max_domid());
    gen_str(g, "reaper_uid");
    yajl_gen_integer(g, c->reaper_uid);
    gen_str(g, "reaper_uid_from");
    gen_str(g, c->reaper_uid_from);
    gen_str(g, "dm_gid_mode");
    gen_str(g, c->dm_gid_mode == XLREAPER_GID_RANGE_BASE ? "range-base"
                                                         : "per-domain");
    gen_str(g, "lock_file");
    gen_str(g, c->lock_file);
    gen_str(g, "lock_timeout_ms");
    yajl_gen_integer(g, c->lock_timeout_ms);
    gen_str(g, "reap_timeout_ms");
    yajl_gen_integer(g, c->reap_timeout_ms);
    gen_str(g, "nproc_limit");
    yajl_gen_integer(g, c->nproc_limit);
    /* Every key, its value as the config file would say it. */
    gen_str(g, "settings");
    yajl_gen_map_open(g);
    for (unsigned i = 0; xlreaper_config_key_name(i); i++) {
        int r = xlreaper_config_key_value(c, i, value, sizeof(value));

        if (r < 0)
            continue;
        gen_str(g, xlreaper_config_key_name(i));
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
    yajl_gen_map_close(g);
    if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
        yajl_gen_free(g);
        return XLR_EXIT_FAIL;
    }
    printf("%.*s\n", (int)len, (const char *)buf);
    yajl_gen_free(g);
    return XLR_EXIT_OK;
}

int xlr_cmd_check(xlr_cli *cli, int argc, char **argv)
{
    const xlreaper_config *c;
    unsigned long base;
    char value[VALUE_MAX];
    int rc;

    if (argc > 1 && argv[1][0] == '-')
        return xlr_usage_error("check", "unknown option '%s'", argv[1]);
    if (argc > 1)
        return xlr_usage_error("check", "unexpected argument '%s'", argv[1]);
    rc = xlr_load_config(cli);
    if (rc)
        return rc;
    c = xlreaper_config_get(cli->ctx);
    base = c->dm_uid_base;
    /* The kill's verification rests on the kernel count, which misses
     * tasks of the range inside user namespaces mapped from these. */
    if (c->subid_overlap) {
        xlr_error("%s: subordinate ids overlap the DM range %lu..%lu; a "
                  "task of a DM uid inside a user namespace would escape "
                  "the kernel count. Move the range or the subordinate ids",
                  c->subid_overlap, base, base + xlreaper_max_domid());
        return XLR_EXIT_USAGE;
    }
    if (cli->json)
        return print_json(c);
    printf("config file:     %s\n", c->path ? c->path : "none (defaults)");
    printf("dm uid range:    %lu..%lu (domid 1..%u), base from %s\n", base + 1,
           base + xlreaper_max_domid(), xlreaper_max_domid(),
           c->dm_uid_base_from);
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
    printf("ok\n");
    return XLR_EXIT_OK;
}
