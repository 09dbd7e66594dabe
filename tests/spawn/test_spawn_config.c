/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_config.c - the spawn keys of the config file: their
 * defaults, that each one is read, and that every out-of-range or
 * mistyped value is refused with the key named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "xlrt_spawn.h"

typedef xlrt_sfix fixture;

static int load(fixture *f, const char *text, xlreaper_ctx **ctx_r)
{
    char *all, *path;
    int rc;

    assert_true(asprintf(&all, "dm_uid_base = 4000000\n%s", text) > 0);
    path = xlrt_write_file(f->dir, "c.conf", all);
    assert_int_equal(xlreaper_ctx_alloc(ctx_r, xlrt_capture_logger()), 0);
    rc = xlreaper_config_load(*ctx_r, path, XLREAPER_CONFIG_MUST_EXIST);
    free(path);
    free(all);
    return rc;
}

static uint64_t rlimit_of(const xlreaper_config *c, int resource)
{
    for (unsigned i = 0; i < c->num_rlimits; i++)
        if (c->rlimits[i].resource == resource)
            return c->rlimits[i].limit;
    fail_msg("no rlimit %d", resource);
    return 0;
}

static void test_defaults(void **state)
{
    xlreaper_ctx *ctx;
    const xlreaper_config *c;

    assert_int_equal(load(*state, "", &ctx), 0);
    c = xlreaper_config_get(ctx);
    assert_int_equal(c->nproc_limit, 256);
    assert_int_equal(c->num_rlimits, 6);
    assert_int_equal(rlimit_of(c, RLIMIT_NOFILE), 192);
    assert_int_equal(rlimit_of(c, RLIMIT_FSIZE), 256 * 1024);
    assert_int_equal(rlimit_of(c, RLIMIT_CORE), 0);
    assert_int_equal(rlimit_of(c, RLIMIT_MSGQUEUE), 0);
    assert_int_equal(rlimit_of(c, RLIMIT_LOCKS), 0);
    assert_int_equal(rlimit_of(c, RLIMIT_MEMLOCK), 0);
    assert_int_equal(c->uid_switch, XLREAPER_UID_SWITCH_EXEC);
    assert_false(c->reap_stale);
    assert_false(c->unshare_ipc_mount);
    assert_false(c->unshare_net);
    assert_false(c->dumpable);
    assert_string_equal(c->chroot_base, "/var/run/xen");
    assert_null(c->cgroup_parent);
    assert_string_equal(c->qemu_path, "/usr/libexec/xen-qemu-system-i386");
    xlreaper_ctx_free(ctx);
}

static void test_every_key_read(void **state)
{
    xlreaper_ctx *ctx;
    const xlreaper_config *c;

    assert_int_equal(load(*state,
                          "nproc_limit = 2\n"
                          "nofile_limit = 1048576\n"
                          "fsize_limit = 1099511627776\n"
                          "core_limit = 1\n"
                          "msgqueue_limit = 1073741824\n"
                          "locks_limit = 1048576\n"
                          "memlock_limit = 65536\n"
                          "uid_switch = \"runas\"\n"
                          "reap_stale = 1\n"
                          "unshare_ipc_mount = 1\n"
                          "unshare_net = 1\n"
                          "dumpable = 1\n"
                          "chroot_base = \"/run/xen\"\n"
                          "cgroup_parent = \"/sys/fs/cgroup/xen\"\n"
                          "qemu_path = \"/usr/bin/qemu-system-i386\"\n",
                          &ctx),
                     0);
    c = xlreaper_config_get(ctx);
    assert_int_equal(c->nproc_limit, 2);
    assert_int_equal(rlimit_of(c, RLIMIT_NOFILE), 1048576);
    assert_int_equal(rlimit_of(c, RLIMIT_FSIZE), 1ull << 40);
    assert_int_equal(rlimit_of(c, RLIMIT_CORE), 1);
    assert_int_equal(rlimit_of(c, RLIMIT_MSGQUEUE), 1ull << 30);
    assert_int_equal(rlimit_of(c, RLIMIT_LOCKS), 1048576);
    assert_int_equal(rlimit_of(c, RLIMIT_MEMLOCK), 65536);
    assert_int_equal(c->uid_switch, XLREAPER_UID_SWITCH_RUNAS);
    assert_true(c->reap_stale);
    assert_true(c->unshare_ipc_mount);
    assert_true(c->unshare_net);
    assert_true(c->dumpable);
    assert_string_equal(c->chroot_base, "/run/xen");
    assert_string_equal(c->cgroup_parent, "/sys/fs/cgroup/xen");
    assert_string_equal(c->qemu_path, "/usr/bin/qemu-system-i386");
    xlreaper_ctx_free(ctx);
}

static void test_bad_values_refused(void **state)
{
    static const struct {
        const char *line;
        const char *why;
    } cases[] = {
        { "nofile_limit = 15\n", "nofile_limit = 15 is out of range" },
        { "nofile_limit = 1048577\n", "too large (at most 1048576)" },
        /* xl.cfg has no negative numbers; the key and its range. */
        { "fsize_limit = -1\n", "c.conf:2: fsize_limit = -1: a negative "
                                "number; fsize_limit takes 0..1099511627776" },
        { "fsize_limit = 1099511627777\n",
          "too large (at most 1099511627776)" },
        { "core_limit = 1099511627777\n", "core_limit" },
        { "msgqueue_limit = 1073741825\n", "msgqueue_limit" },
        { "locks_limit = 1048577\n", "locks_limit" },
        { "memlock_limit = -5\n", "c.conf:2: memlock_limit = -5: a negative "
                                  "number" },
        { "nproc_limit = 0\n", "nproc_limit = 0 is out of range" },
        { "fsize_limit = \"256k\"\n", "fsize_limit must be a number" },
        { "uid_switch = \"setuid\"\n", "is not one of the choices" },
        { "uid_switch = 1\n", "uid_switch = \"1\" is not one of the choices" },
        { "reap_stale = 2\n", "reap_stale = 2 is too large (at most 1)" },
        { "unshare_net = 2\n", "unshare_net = 2 is too large (at most 1)" },
        { "unshare_ipc_mount = \"yes\"\n", "must be a number" },
        { "dumpable = 7\n", "dumpable" },
        { "chroot_base = \"run/xen\"\n", "must be an absolute path" },
        { "cgroup_parent = \"\"\n", "must be an absolute path" },
        { "qemu_path = 5\n", "qemu_path must be an absolute path" },
        { "qemu_path = [ \"/a\" ]\n", "qemu_path must be a quoted string" },
        { "qemu_path = \"/a\"\nqemu_path = \"/b\"\n", "is set again" },
        { "memlock_limt = 0\n", "unknown key memlock_limt" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        xlreaper_ctx *ctx;
        xlrt_capture_reset();
        if (load(*state, cases[i].line, &ctx) != XLREAPER_ERROR_INVAL)
            fail_msg("'%s' accepted", cases[i].line);
        if (!strstr(xlrt_captured(), cases[i].why))
            fail_msg("'%s': log lacks '%s':\n%s", cases[i].line, cases[i].why,
                     xlrt_captured());
        assert_null(xlreaper_config_get(ctx));
        xlreaper_ctx_free(ctx);
    }
}

static void test_key_names_listed(void **state)
{
    static const char *const want[] = {
        "nofile_limit",      "fsize_limit",   "core_limit",  "msgqueue_limit",
        "locks_limit",       "memlock_limit", "uid_switch",  "reap_stale",
        "unshare_ipc_mount", "unshare_net",   "dumpable",    "chroot_base",
        "cgroup_parent",     "qemu_path",     "nproc_limit",
    };
    (void)state;

    for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
        bool found = false;
        for (unsigned i = 0; xlreaper_config_key_name(i); i++)
            found |= !strcmp(xlreaper_config_key_name(i), want[w]);
        if (!found)
            fail_msg("key %s not listed", want[w]);
    }
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, xlrt_sfix_new, xlrt_sfix_free)
    const struct CMUnitTest tests[] = {
        T(test_defaults),
        T(test_every_key_read),
        T(test_bad_values_refused),
        T(test_key_names_listed),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
