/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_host_check.c - xlreaper_host_check's group database walk and its
 * subordinate id line, against tables of the test's own (never the
 * host's /etc/group): which groups collide with the gids the DMs will
 * use, in each gid mode, and that each is named.
 */
#include <stdlib.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"
#include "xlreaper_host.h"

typedef struct {
    char *dir;
    xlreaper_ctx *ctx;
    char lines[4096]; /* "name ok|FAILED detail\n" a check */
    size_t len;
} fixture;

static const xlrt_user upstream[] = {
    { "root", 0, 0 },
    { "xen-qemuuser-range-base", 131072, 131072 },
    { NULL, 0, 0 },
};

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_int_equal(xlreaper_ctx_alloc(&f->ctx, xlrt_capture_logger()), 0);
    xlrt_fake_passwd(f->ctx, upstream);
    xlrt_capture_reset();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlrt_fake_groups(NULL);
    xlreaper_ctx_free(f->ctx);
    xlrt_tmpdir_remove(f->dir);
    free(f);
    return 0;
}

static void collect(void *arg, const char *name, bool ok, const char *detail)
{
    fixture *f = arg;
    int n = snprintf(f->lines + f->len, sizeof(f->lines) - f->len,
                     "%s %s %s\n", name, ok ? "ok" : "FAILED", detail);

    assert_true(n > 0 && (size_t)n < sizeof(f->lines) - f->len);
    f->len += (size_t)n;
}

/* Loads text, runs the checks with groups; returns their rc. */
static int run(fixture *f, const char *text, const xlrt_group *groups)
{
    char *path = xlrt_write_file(f->dir, "c.conf", text);

    assert_int_equal(
        xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
    xlrt_fake_groups(groups);
    f->len = 0;
    f->lines[0] = '\0';
    return xlreaper_host_check(f->ctx, collect, f);
}

#define assert_line(f, needle)                                                \
    do {                                                                      \
        if (!strstr((f)->lines, (needle)))                                    \
            fail_msg("no \"%s\" in:\n%s", (needle), (f)->lines);              \
    } while (0)

static void test_per_domain_groups(void **state)
{
    static const xlrt_group clean[] = {
        { "root", 0, NULL },
        /* The range base's own gid is no DM's in per-domain mode. */
        { "xen-qemuuser-range-base", 131072, NULL },
        /* Just past the last DM gid (131072 + 32751). */
        { "after", 163824, NULL },
        { NULL, 0, NULL },
    };
    static const xlrt_group clash[] = {
        { "first", 131073, NULL },
        { "last", 163823, "alice" },
        { NULL, 0, NULL },
    };
    static const xlrt_group many[] = {
        { "g1", 131081, NULL }, { "g2", 131082, NULL }, { "g3", 131083, NULL },
        { "g4", 131084, NULL }, { "g5", 131085, NULL }, { "g6", 131086, NULL },
        { NULL, 0, NULL },
    };
    fixture *f = *state;

    run(f, "dm_gid_mode = \"per-domain\"\n", clean);
    assert_line(f, "group_range ok no group in gids 131073..163823");

    run(f, "dm_gid_mode = \"per-domain\"\n", clash);
    assert_line(f, "group_range FAILED group first (gid 131073) is domid 1's "
                   "DM gid; group last (gid 163823) is domid 32751's DM gid");

    /* Four named, the rest said to be there. */
    run(f, "dm_gid_mode = \"per-domain\"\n", many);
    assert_line(f, "g4 (gid 131084) is domid 12's DM gid; and more: see "
                   "getent group\n");
    if (strstr(f->lines, "g5"))
        fail_msg("a fifth group named:\n%s", f->lines);
}

static void test_range_base_groups(void **state)
{
    static const xlrt_group own[] = {
        /* What adduser --group makes: the user's own group. */
        { "xen-qemuuser-range-base", 131072, NULL },
        /* Per-domain gids are no DM's in this mode. */
        { "inside", 131080, NULL },
        { NULL, 0, NULL },
    };
    static const xlrt_group other[] = {
        { "users", 131072, NULL },
        { NULL, 0, NULL },
    };
    static const xlrt_group member[] = {
        { "xen-qemuuser-range-base", 131072, "bob" },
        { NULL, 0, NULL },
    };
    fixture *f = *state;

    run(f, "dm_gid_mode = \"range-base\"\n", own);
    assert_line(f, "group_range ok gid 131072 (range-base, every DM's) is no "
                   "other group's and lists no member");
    run(f, "dm_gid_mode = \"range-base\"\n", other);
    assert_line(f, "group_range FAILED group users (gid 131072) is every DM's "
                   "gid (dm_gid_mode \"range-base\")");
    run(f, "dm_gid_mode = \"range-base\"\n", member);
    assert_line(f, "group_range FAILED group xen-qemuuser-range-base (gid "
                   "131072), every DM's gid, lists member bob");
}

static void test_every_check_reported(void **state)
{
    static const char *const names[] = {
        "root ",      "passwd_range ",  "group_range ", "subordinate_ids ",
        "qemu_path ", "cgroup_parent ", "lock_file ",   "file_pool ",
        NULL
    };
    fixture *f = *state;
    char text[600];

    snprintf(text, sizeof(text),
             "qemu_path = \"/bin/true\"\nlock_file = \"%s/lock\"\n", f->dir);
    assert_int_equal(run(f, text, NULL), 0);
    for (int i = 0; names[i]; i++)
        assert_line(f, names[i]);
    if (strstr(f->lines, "FAILED"))
        fail_msg("a check failed:\n%s", f->lines);
}

/* The pet's owner is named: passwd user xen-qemuuser-reaper, or the
 * range base user when the pet is the base; "no user's" only when
 * passwd has none. */
static void test_pet_owner_named(void **state)
{
    static const xlrt_user with_reaper[] = {
        { "root", 0, 0 },
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "xen-qemuuser-reaper", 103, 103 },
        { NULL, 0, 0 },
    };
    static const xlrt_user only_root[] = { { "root", 0, 0 }, { NULL, 0, 0 } };
    fixture *f = *state;

    (void)run(f, "qemu_path = \"/bin/true\"\n", NULL);
    assert_line(f, "the pet uid 131072 is passwd user "
                   "xen-qemuuser-range-base's (the range base");
    xlrt_fake_passwd(f->ctx, with_reaper);
    (void)run(f, "qemu_path = \"/bin/true\"\n", NULL);
    assert_line(f, "the pet uid 103 is passwd user xen-qemuuser-reaper's "
                   "(passwd user xen-qemuuser-reaper)");
    xlrt_fake_passwd(f->ctx, only_root);
    (void)run(f,
              "dm_uid_base = 3000000\nreaper_uid = 2999999\n"
              "qemu_path = \"/bin/true\"\n",
              NULL);
    assert_line(f, "the pet uid 2999999 is no user's");
}

static void test_subordinate_ids(void **state)
{
    fixture *f = *state;
    char *u = xlrt_write_file(f->dir, "subuid", "alice:131100:10\n");
    char text[600];

    snprintf(text, sizeof(text),
             "qemu_path = \"/bin/true\"\nlock_file = \"%s/lock\"\n", f->dir);
    f->ctx->subuid_file = u;
    assert_int_equal(run(f, text, NULL), XLREAPER_ERROR_INVAL);
    assert_line(f, "subordinate_ids FAILED ");
    assert_line(f, "subuid:1 (alice: 131100..131109): subordinate ids overlap "
                   "the DM range");
    f->ctx->subuid_file = NULL;
    free(u);
}

/* The host's file table against the DMs' limits: said, never refused,
 * a warning whenever one DM's limits reach past 1/8 of the host's
 * fs.file-max, judged here against the host's own value. */
static void test_file_pool_warning(void **state)
{
    fixture *f = *state;
    unsigned long long file_max = 0;
    char text[600], want[128];
    FILE *fm = fopen("/proc/sys/fs/file-max", "re");

    assert_non_null(fm);
    assert_int_equal(fscanf(fm, "%llu", &file_max), 1);
    fclose(fm);
    snprintf(text, sizeof(text),
             "qemu_path = \"/bin/true\"\nlock_file = \"%s/lock\"\n"
             "nproc_limit = 1048576\nnofile_limit = 1048576\n",
             f->dir);
    assert_int_equal(run(f, text, NULL), 0);
    snprintf(want, sizeof(want),
             "file_pool ok %sfs.file-max %llu; one DM may hold nproc_limit "
             "x nofile_limit = 1048576 x 1048576 = 1099511627776 files",
             1099511627776ull > file_max / 8 ? "warning: " : "", file_max);
    assert_line(f, want);
    assert_line(f, "the range allows 32751");
    /* 2 x 16 files are within 1/8 of any host's (at least 8192). */
    snprintf(text, sizeof(text),
             "qemu_path = \"/bin/true\"\nlock_file = \"%s/lock\"\n"
             "nproc_limit = 2\nnofile_limit = 16\n",
             f->dir);
    assert_int_equal(run(f, text, NULL), 0);
    snprintf(want, sizeof(want), "= 2 x 16 = 32 files (");
    assert_line(f, want);
    assert_line(f, "within 1/8)");
}

/* The one lookup a spawn makes. */
static void test_dm_gid_lookup(void **state)
{
    static const xlrt_group groups[] = {
        { "xen-qemuuser-range-base", 131072, NULL },
        { "dm5", 131077, NULL },
        { NULL, 0, NULL },
    };
    static const xlrt_group member[] = {
        { "xen-qemuuser-range-base", 131072, "bob" },
        { NULL, 0, NULL },
    };
    fixture *f = *state;

    run(f, "dm_gid_mode = \"per-domain\"\n", groups);
    xlrt_capture_reset();
    assert_int_equal(xlreaper__dm_gid_check(f->ctx, 4, 131076), 0);
    assert_int_equal(xlreaper__dm_gid_check(f->ctx, 5, 131077),
                     XLREAPER_ERROR_INVAL);
    assert_logged("domid 5: its DM gid 131077 is group dm5 of this host");
    /* range-base: the base user's own group is meant to be it ... */
    run(f, "dm_gid_mode = \"range-base\"\n", groups);
    assert_int_equal(xlreaper__dm_gid_check(f->ctx, 5, 131072), 0);
    /* ... with no member. */
    run(f, "dm_gid_mode = \"range-base\"\n", member);
    xlrt_capture_reset();
    assert_int_equal(xlreaper__dm_gid_check(f->ctx, 5, 131072),
                     XLREAPER_ERROR_INVAL);
    assert_logged("group xen-qemuuser-range-base, which lists members,");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_per_domain_groups, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_range_base_groups, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_every_check_reported, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pet_owner_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subordinate_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dm_gid_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_pool_warning, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
