/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_uid_table.c - the uid range, the pet and the gid, against a
 * passwd table of the test's own (never the host's /etc/passwd).
 */
#include <stdlib.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"
#include "xlreaper_host.h"

typedef struct {
    char *dir;
    xlreaper_ctx *ctx;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_int_equal(xlreaper_ctx_alloc(&f->ctx, xlrt_capture_logger()), 0);
    xlrt_capture_reset();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlreaper_ctx_free(f->ctx);
    xlrt_tmpdir_remove(f->dir);
    free(f);
    return 0;
}

/* Loads config text (NULL: no file, the defaults) with the table given. */
static int load(fixture *f, const xlrt_user *table, const char *text)
{
    char *path;
    int rc;

    xlrt_fake_passwd(f->ctx, table);
    xlrt_capture_reset();
    if (!text)
        return xlreaper_config_load(f->ctx, "/nonexistent/xl-reaper.conf",
                                    0);
    path = xlrt_write_file(f->dir, "c.conf", text);
    rc = xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST);
    free(path);
    return rc;
}

static const xlrt_user base_only[] = {
    { "root", 0, 0 },
    { "xen-qemuuser-range-base", 131072, 131072 },
    { NULL, 0, 0 },
};

static void test_base_from_passwd_user(void **state)
{
    fixture *f = *state;
    const xlreaper_config *c;
    uint32_t d;
    uid_t uid;
    gid_t gid;

    assert_int_equal(load(f, base_only, NULL), 0);
    c = xlreaper_config_get(f->ctx);
    assert_int_equal(c->dm_uid_base, 131072);
    assert_null(c->path);
    /* The pet is the uid of domid 0 when no reaper user exists. */
    assert_int_equal(c->reaper_uid, 131072);

    assert_int_equal(xlreaper_dm_ids(f->ctx, 1, &uid, &gid), 0);
    assert_int_equal(uid, 131073);
    assert_int_equal(gid, 131073);
    assert_int_equal(xlreaper_dm_ids(f->ctx, 32751, &uid, &gid), 0);
    assert_int_equal(uid, 131072 + 32751);
    assert_int_equal(xlreaper_dm_ids(f->ctx, 0, &uid, &gid),
                     XLREAPER_ERROR_INVAL);
    assert_int_equal(xlreaper_dm_ids(f->ctx, 32752, &uid, &gid),
                     XLREAPER_ERROR_INVAL);

    assert_int_equal(xlreaper_uid_domid(f->ctx, 131077, &d), 0);
    assert_int_equal(d, 5);
    assert_int_equal(xlreaper_uid_domid(f->ctx, 131072, &d),
                     XLREAPER_ERROR_INVAL); /* the pet, not a DM */
    assert_int_equal(xlreaper_uid_domid(f->ctx, 131072 + 32752, &d),
                     XLREAPER_ERROR_INVAL);
    assert_int_equal(xlreaper_uid_domid(f->ctx, 1000, &d),
                     XLREAPER_ERROR_INVAL);
}

static void test_reaper_user_is_the_pet(void **state)
{
    static const xlrt_user t[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "xen-qemuuser-reaper", 120000, 120000 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    assert_int_equal(load(f, t, NULL), 0);
    assert_int_equal(xlreaper_config_get(f->ctx)->reaper_uid, 120000);
}

static void test_reaper_user_inside_range_refused(void **state)
{
    static const xlrt_user t[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "xen-qemuuser-reaper", 131080, 131080 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    assert_int_equal(load(f, t, NULL), XLREAPER_ERROR_INVAL);
    assert_logged("domid 8's device model uid");
}

static void test_root_refused_everywhere(void **state)
{
    static const xlrt_user base_root[] = {
        { "xen-qemuuser-range-base", 0, 0 },
        { NULL, 0, 0 },
    };
    static const xlrt_user reaper_root[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "xen-qemuuser-reaper", 0, 0 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    assert_int_equal(load(f, base_root, NULL), XLREAPER_ERROR_INVAL);
    assert_logged("uid 0 (root)");
    assert_int_equal(load(f, reaper_root, NULL), XLREAPER_ERROR_INVAL);
    assert_logged("must never be root");
}

static void test_shared_user_refused(void **state)
{
    static const xlrt_user t[] = {
        { "xen-qemuuser-shared", 131000, 131000 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    assert_int_equal(load(f, t, NULL), XLREAPER_ERROR_INVAL);
    assert_logged("cannot tell apart two domains that share a uid");
}

static void test_no_range_at_all(void **state)
{
    static const xlrt_user t[] = { { "root", 0, 0 }, { NULL, 0, 0 } };
    fixture *f = *state;

    assert_int_equal(load(f, t, NULL), XLREAPER_ERROR_INVAL);
    assert_logged("no device model uid range");
}

static void test_passwd_user_inside_range(void **state)
{
    static const xlrt_user t[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "alice", 131072 + 32751, 100 }, /* the last DM uid */
        { "bob", 131072 + 32752, 100 },   /* just past: fine */
        { "carol", 131071, 100 },         /* just before: fine */
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    assert_int_equal(load(f, t, NULL), XLREAPER_ERROR_INVAL);
    assert_logged("passwd user alice (uid 163823) is inside");
    assert_logged("domid 32751's uid");
    if (strstr(xlrt_captured(), "bob") || strstr(xlrt_captured(), "carol"))
        fail_msg("users outside the range reported:\n%s", xlrt_captured());
}

static void test_other_user_at_base_refused(void **state)
{
    static const xlrt_user t[] = {
        { "mallory", 2000000, 2000000 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    /* The pet (base + 0) must be reserved: every reap kills under it. */
    assert_int_equal(load(f, t, "dm_uid_base = 2000000\n"),
                     XLREAPER_ERROR_INVAL);
    assert_logged("mallory");
}

static void test_config_base_and_overflow(void **state)
{
    static const xlrt_user none[] = { { NULL, 0, 0 } };
    static const struct {
        const char *text;
        int rc;
    } cases[] = {
        { "dm_uid_base = 4294934543\n", 0 },     /* last = 0xFFFFFFFE */
        { "dm_uid_base = 4294934544\n", -2 },    /* last = (uid_t)-1 */
        { "dm_uid_base = 4294967295\n", -2 },
        { "dm_uid_base = 4294967296\n", -2 },    /* past uid_t */
        { "dm_uid_base = 99999999999999999999999\n", -2 },
        { "dm_uid_base = 0\n", -2 },
        { "dm_uid_base = 1\n", 0 },
    };
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = load(f, none, cases[i].text);
        if (rc != cases[i].rc)
            fail_msg("%s: rc %d, want %d\n%s", cases[i].text, rc,
                     cases[i].rc, xlrt_captured());
    }
}

static void test_config_base_disagrees_with_passwd(void **state)
{
    fixture *f = *state;

    assert_int_equal(load(f, base_only, "dm_uid_base = 131072\n"), 0);
    assert_int_equal(load(f, base_only, "dm_uid_base = 200000\n"),
                     XLREAPER_ERROR_INVAL);
    assert_logged("disagrees with passwd user xen-qemuuser-range-base");
}

static void test_reaper_uid_key(void **state)
{
    static const xlrt_user t[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "nobody", 65534, 65534 },
        { NULL, 0, 0 },
    };
    static const xlrt_user with_reaper[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "xen-qemuuser-reaper", 120000, 120000 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    assert_int_equal(load(f, t, "reaper_uid = 125000\n"), 0);
    assert_int_equal(xlreaper_config_get(f->ctx)->reaper_uid, 125000);
    assert_int_equal(load(f, t, "reaper_uid = 65534\n"),
                     XLREAPER_ERROR_INVAL);
    assert_logged("belongs to passwd user nobody");
    assert_int_equal(load(f, t, "reaper_uid = 131073\n"),
                     XLREAPER_ERROR_INVAL);
    assert_int_equal(load(f, with_reaper, "reaper_uid = 125000\n"),
                     XLREAPER_ERROR_INVAL);
    assert_logged("disagrees with passwd user xen-qemuuser-reaper");
}

static void test_gid_modes(void **state)
{
    static const xlrt_user t[] = {
        { "xen-qemuuser-range-base", 131072, 4242 },
        { NULL, 0, 0 },
    };
    static const xlrt_user root_group[] = {
        { "xen-qemuuser-range-base", 131072, 0 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;
    uid_t uid;
    gid_t gid;

    assert_int_equal(load(f, t, "dm_gid_mode = \"range-base\"\n"), 0);
    assert_int_equal(xlreaper_dm_ids(f->ctx, 9, &uid, &gid), 0);
    assert_int_equal(uid, 131081);
    assert_int_equal(gid, 4242);

    assert_int_equal(load(f, t, "dm_gid_mode = \"per-domain\"\n"), 0);
    assert_int_equal(xlreaper_dm_ids(f->ctx, 9, &uid, &gid), 0);
    assert_int_equal(gid, 131081);

    /* Per-domain gids never need the base's group, even if it is 0... */
    assert_int_equal(load(f, root_group, "dm_gid_mode = \"per-domain\"\n"),
                     0);
    /* ...but range-base would hand every DM gid 0. */
    assert_int_equal(load(f, root_group, "dm_gid_mode = \"range-base\"\n"),
                     XLREAPER_ERROR_INVAL);
    assert_logged("gid 0 (root)");
}

/* Subordinate ids inside the DM range: the kernel count would miss a
 * task of the range in a user namespace, so the config is flagged
 * (and `check` refuses it); ranges beside it are fine. */
static void test_subid_overlap(void **state)
{
    static const struct {
        const char *subuid, *subgid, *conf;
        bool overlap;
    } cases[] = {
        { "alice:100000:65536\n", "", "dm_uid_base = 200000\n", false },
        { "alice:100000:65536\n", "", "dm_uid_base = 131072\n", true },
        /* The range is base .. base + 32751 (the pet is the base). */
        { "bob:232751:10\n", "", "dm_uid_base = 200000\n", true },
        { "bob:232752:10\n", "", "dm_uid_base = 200000\n", false },
        { "# x\nbad line\ncarol:190000:10001\n", "",
          "dm_uid_base = 200000\n", true },
        { "", "dave:200005:1\n", "dm_uid_base = 200000\n", true },
        /* range-base: every DM has the base's gid, only it matters. */
        { "", "dave:200005:1\n",
          "dm_uid_base = 200000\ndm_gid_mode = \"range-base\"\n", false },
    };
    static const xlrt_user root_only[] = { { "root", 0, 0 }, { NULL, 0, 0 } };
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *u = xlrt_write_file(f->dir, "subuid", cases[i].subuid);
        char *g = xlrt_write_file(f->dir, "subgid", cases[i].subgid);

        f->ctx->subuid_file = u;
        f->ctx->subgid_file = g;
        assert_int_equal(load(f, root_only, cases[i].conf), 0);
        if (!xlreaper_config_get(f->ctx)->subid_overlap != !cases[i].overlap)
            fail_msg("case %zu: overlap %s, want %d", i,
                     xlreaper_config_get(f->ctx)->subid_overlap
                         ? xlreaper_config_get(f->ctx)->subid_overlap
                         : "none",
                     cases[i].overlap);
        f->ctx->subuid_file = f->ctx->subgid_file = NULL;
        free(u);
        free(g);
    }
}

/*
 * XLREAPER_CONFIG_QUICK: /etc/passwd alone (here a file of the test's),
 * NSS (the table) only for a name the config leaves to passwd and the
 * file lacks.
 */
static int load_quick(fixture *f, const xlrt_user *nss, const char *passwd,
                      const char *text, unsigned flags)
{
    char *ppath = xlrt_write_file(f->dir, "passwd", passwd);
    char *path = xlrt_write_file(f->dir, "c.conf", text);
    int rc;

    xlrt_fake_passwd(f->ctx, nss);
    xlreaper__ctx_set_passwd_local(f->ctx, &xlreaper__passwd_files, ppath);
    xlrt_capture_reset();
    rc = xlreaper_config_load(f->ctx, path,
                              XLREAPER_CONFIG_MUST_EXIST | flags);
    free(path);
    free(ppath);
    return rc;
}

static void test_quick_load_reads_the_file_alone(void **state)
{
    static const xlrt_user nss[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "alice", 131072 + 5, 100 }, /* inside, in another NSS source */
        { NULL, 0, 0 },
    };
    static const char files[] = "root:x:0:0::/root:/bin/sh\n"
                                "bob:x:1000:1000::/home/bob:/bin/sh\n";
    static const char files_clash[] =
        "root:x:0:0::/root:/bin/sh\n"
        "carol:x:131079:100::/home/carol:/bin/sh\n";
    static const char files_base[] =
        "xen-qemuuser-range-base:x:131072:131072::/:/usr/sbin/nologin\n";
    const xlreaper_config *cfg;
    fixture *f = *state;

    /* The full load walks every source and refuses alice... */
    assert_int_equal(load_quick(f, nss, files, "dm_uid_base = 131072\n", 0),
                     XLREAPER_ERROR_INVAL);
    assert_logged("passwd user alice");
    /* ...the quick one reads the file, where she is not. */
    assert_int_equal(load_quick(f, nss, files, "dm_uid_base = 131072\n",
                                XLREAPER_CONFIG_QUICK),
                     0);
    /* A user of the file inside the range is refused by either. */
    assert_int_equal(load_quick(f, nss, files_clash,
                                "dm_uid_base = 131072\n",
                                XLREAPER_CONFIG_QUICK),
                     XLREAPER_ERROR_INVAL);
    assert_logged("passwd user carol (uid 131079) is inside");
    /* No dm_uid_base: a base the file lacks is asked of NSS... */
    if (load_quick(f, nss, files, "lock_timeout_ms = 5000\n", XLREAPER_CONFIG_QUICK))
        fail_msg("%s", xlrt_captured());
    cfg = xlreaper_config_get(f->ctx);
    assert_int_equal(cfg->dm_uid_base, 131072);
    assert_string_equal(cfg->dm_uid_base_from,
                        "passwd user xen-qemuuser-range-base");
    /* ...and one the file has is taken from it. */
    assert_int_equal(load_quick(f, (const xlrt_user[]){ { NULL, 0, 0 } },
                                files_base, "lock_timeout_ms = 5000\n",
                                XLREAPER_CONFIG_QUICK),
                     0);
    assert_int_equal(xlreaper_config_get(f->ctx)->dm_uid_base, 131072);
}

/* The quick load never asks NSS for the reaper user: a host without
 * one (most) would pay NSS's first call on every kill.  It uses the
 * range base, which the full load would too when NSS has none, and the
 * full load still finds one that only NSS has. */
static void test_quick_load_leaves_reaper_user_to_full(void **state)
{
    static const xlrt_user nss[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { "xen-qemuuser-reaper", 131071, 131071 }, /* NSS alone */
        { NULL, 0, 0 },
    };
    static const char files[] =
        "xen-qemuuser-range-base:x:131072:131072::/:/usr/sbin/nologin\n";
    static const char files_reaper[] =
        "xen-qemuuser-range-base:x:131072:131072::/:/usr/sbin/nologin\n"
        "xen-qemuuser-reaper:x:131070:131070::/:/usr/sbin/nologin\n";
    const xlreaper_config *cfg;
    fixture *f = *state;

    if (load_quick(f, nss, files, "lock_timeout_ms = 5000\n",
                   XLREAPER_CONFIG_QUICK))
        fail_msg("%s", xlrt_captured());
    cfg = xlreaper_config_get(f->ctx);
    assert_int_equal(cfg->reaper_uid, 131072);
    assert_string_equal(cfg->reaper_uid_from,
                        "the range base (the uid of domid 0)");
    if (load_quick(f, nss, files, "lock_timeout_ms = 5000\n", 0))
        fail_msg("%s", xlrt_captured());
    assert_int_equal(xlreaper_config_get(f->ctx)->reaper_uid, 131071);
    /* One the file has is the pet of the quick load too. */
    if (load_quick(f, nss, files_reaper, "lock_timeout_ms = 5000\n",
                   XLREAPER_CONFIG_QUICK))
        fail_msg("%s", xlrt_captured());
    assert_int_equal(xlreaper_config_get(f->ctx)->reaper_uid, 131070);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_base_from_passwd_user, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_quick_load_leaves_reaper_user_to_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reaper_user_is_the_pet, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reaper_user_inside_range_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_refused_everywhere, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_user_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_range_at_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_passwd_user_inside_range, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_user_at_base_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_config_base_and_overflow, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_config_base_disagrees_with_passwd,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reaper_uid_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gid_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subid_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quick_load_reads_the_file_alone,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
