/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_config_file.c - reading the config file: every malformed input is
 * refused with the reason, and a refused reload keeps the settings that
 * were in force.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

/* Every case names its base (3000000 is in this suite's uid block), and
 * the passwd database is empty: the host's plays no part. */
static const xlrt_user no_users[] = { { NULL, 0, 0 } };

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
    xlrt_fake_passwd(f->ctx, no_users);
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

static int load_text(fixture *f, const char *text, size_t len)
{
    char *path;
    FILE *fp;
    int rc;

    assert_true(asprintf(&path, "%s/c.conf", f->dir) > 0);
    fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, len, fp), len);
    fclose(fp);
    chmod(path, 0644);
    xlrt_capture_reset();
    rc = xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST);
    free(path);
    return rc;
}

static int load(fixture *f, const char *text)
{
    return load_text(f, text, strlen(text));
}

#define BASE "dm_uid_base = 3000000\n"

static void test_good_file(void **state)
{
    fixture *f = *state;
    const xlreaper_config *c;

    assert_int_equal(load(f, "# comment\n" BASE "lock_file = \"/run/x/lock\"\n"
                             "lock_timeout_ms = 250; reap_timeout_ms = 900\n"
                             "nproc_limit = 32\n"
                             "dm_gid_mode = 'range-base'\n"
                             "dm_max_file_locks = 20000\n"
                             "dm_oom_score_adj = 0\n"
                             "dm_memory_max = 1048576\n"),
                     0);
    c = xlreaper_config_get(f->ctx);
    assert_non_null(c->path);
    assert_int_equal(c->dm_uid_base, 3000000);
    assert_string_equal(c->lock_file, "/run/x/lock");
    assert_int_equal(c->lock_timeout_ms, 250);
    assert_int_equal(c->reap_timeout_ms, 900);
    assert_int_equal(c->nproc_limit, 32);
    assert_int_equal(c->dm_gid_mode, XLREAPER_GID_RANGE_BASE);
    assert_int_equal(c->range_base_gid, 3000000);
    assert_int_equal(c->dm_max_file_locks, 20000);
    assert_int_equal(c->dm_oom_score_adj, 0);
    assert_true(c->dm_memory_max == 1048576);
}

static void test_defaults(void **state)
{
    fixture *f = *state;
    const xlreaper_config *c;

    assert_int_equal(load(f, BASE), 0);
    c = xlreaper_config_get(f->ctx);
    assert_string_equal(c->lock_file, XLREAPER_DEFAULT_LOCK_FILE);
    assert_string_equal(c->lock_file, "/var/run/xen/dm-reaper-lock");
    assert_int_equal(c->dm_gid_mode, XLREAPER_GID_PER_DOMAIN);
    assert_true(c->lock_timeout_ms > 0);
    assert_true(c->reap_timeout_ms > 0);
    assert_int_equal(c->dm_max_file_locks, 1024);
    /* Every DM before any other process (xlreaper_config.c says why),
     * and 256 MiB of its own memory. */
    assert_int_equal(c->dm_oom_score_adj, 1000);
    assert_true(c->dm_memory_max == 256u << 20);
}

static void test_missing_file(void **state)
{
    fixture *f = *state;

    xlrt_capture_reset();
    assert_int_equal(xlreaper_config_load(f->ctx, "/nonexistent/x.conf",
                                          XLREAPER_CONFIG_MUST_EXIST),
                     XLREAPER_ERROR_INVAL);
    assert_logged("/nonexistent/x.conf: config file does not exist");
}

/* Each case: text refused, and the log names the reason. */
static void test_refused(void **state)
{
    static const struct {
        const char *text;
        const char *why;
    } cases[] = {
        { "", "sets nothing" },
        { "\n\n   \n", "sets nothing" },
        { "# only a comment\n", "sets nothing" },
        /* libxlutil's own report, which numbers a line ending a
         * statement from 0 (its lexer's quirk). */
        { "dm_uid_base =\n", "c.conf:1: config parsing error near "
                             "<newline>" },
        { "dm_uid_base = 3000000 7\n", "config parsing error" },
        { "\x7f\x45\x4c\x46\x02\x01\x01\x03\xff\xfe", "c.conf" },
        { BASE "dm_uid_base = 3000000\n", "c.conf:2: dm_uid_base is set "
                                          "again (first set at line 1)" },
        { BASE "dm_uid_bsae = 3000000\n", "c.conf:2: unknown key "
                                          "dm_uid_bsae" },
        { BASE "\n\n# x = 1\nlock_timout_ms = 5\n", "c.conf:5: unknown key "
                                                    "lock_timout_ms" },
        { "dm_uid_base = 0\n", "dm_uid_base = 0 is out of range" },
        /* xl.cfg has no negative numbers: the key, its value and its
         * range, in place of libxlutil's "lexical error" (its Python
         * guess is dropped: see test_no_python_guess). */
        { "dm_uid_base = -5\n", "c.conf:1: dm_uid_base = -5: a negative "
                                "number; dm_uid_base takes 1..4294967295" },
        { BASE "lock_timeout_ms = - 5 # ms\n",
          "c.conf:2: lock_timeout_ms = - 5: a negative number; "
          "lock_timeout_ms takes 0..3600000" },
        { BASE "lock_file = -1\n", "c.conf:2: lock_file must be a quoted "
                                   "string" },
        { BASE "lock_fil = -1\n", "c.conf:2: unknown key lock_fil" },
        { BASE "lock_timeout_ms = 1.5\n", "c.conf:2: config parsing error "
                                          "near `.5': lexical error" },
        { "dm_uid_base = \"abc\"\n", "dm_uid_base must be a number" },
        { "dm_uid_base = 7x\n", "dm_uid_base must be a number" },
        { "dm_uid_base = [3000000]\n", "dm_uid_base must be a number" },
        { "dm_uid_base = 4294967296\n", "c.conf:1: dm_uid_base = 4294967296 "
                                        "is too large (at most 4294967295)" },
        { BASE "lock_file = \"relative/lock\"\n", "absolute path" },
        { BASE "lock_file = 5\n", "absolute path" },
        { BASE "lock_timeout_ms = 3600001\n", "too large (at most 3600000)" },
        { BASE "reap_timeout_ms = 0\n", "out of range" },
        { BASE "nproc_limit = 0\n", "out of range" },
        { BASE "dm_max_file_locks = 0\n", "out of range" },
        { BASE "dm_max_file_locks = 262145\n", "too large (at most 262144)" },
        { BASE "dm_max_file_locks = 5\ndm_max_file_locks = 6\n",
          "dm_max_file_locks" },
        { BASE "dm_oom_score_adj = 1001\n", "c.conf:2: dm_oom_score_adj = "
                                            "1001 is too large (at most "
                                            "1000)" },
        { BASE "dm_oom_score_adj = -1000\n",
          "c.conf:2: dm_oom_score_adj = -1000: a negative number; "
          "dm_oom_score_adj takes 0..1000" },
        { BASE "dm_oom_score_adj = \"1000\"\n", "a number is written "
                                                "without quotes" },
        { BASE "dm_memory_max = 4096\n", "c.conf:2: dm_memory_max = 4096 "
                                         "is below 1048576 bytes (1 MiB)" },
        { BASE "dm_memory_max = 1099511627777\n",
          "c.conf:2: dm_memory_max = 1099511627777 is too large (at most "
          "1099511627776)" },
        { BASE "dm_memory_max = 256M\n", "c.conf:2: config parsing error "
                                         "near `M': lexical error" },
        { BASE "dm_gid_mode = \"shared\"\n", "not one of the choices" },
        { BASE "dm_gid_mode = 1\n", "not one of the choices" },
        { BASE "dm_gid_mode = [\"per-domain\"]\n", "must be a quoted string" },
    };
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = load(f, cases[i].text);
        if (rc != XLREAPER_ERROR_INVAL)
            fail_msg("case %zu (%s): rc %d", i, cases[i].text, rc);
        if (!strstr(xlrt_captured(), cases[i].why))
            fail_msg("case %zu (%s): log lacks \"%s\":\n%s", i, cases[i].text,
                     cases[i].why, xlrt_captured());
    }
}

/* libxlutil follows a lexical error with three lines guessing that the
 * file "looks like it contains Python code"; one line says it all. */
/*
 * Numbers are decimal, as written: libxlutil reads them with
 * strtol(..., 0) and takes a quoted number, so 0500000 was 163840,
 * 010000 was 4096 and "500000" was taken; now each is an error naming
 * the key, the line and the value.  Line numbers are the file's (an
 * error at a line's end said :0: for line 1), a CR says so, and no
 * byte that is not printable reaches a message.
 */
static void test_numbers_and_messages(void **state)
{
    static const struct {
        const char *text;
        const char *why;
    } cases[] = {
        { "dm_uid_base = 0500000\n",
          "c.conf:1: dm_uid_base must be a number: dm_uid_base = 0500000: "
          "a leading zero is not taken" },
        { BASE "lock_timeout_ms = 010000\n",
          "c.conf:2: lock_timeout_ms must be a number: lock_timeout_ms = "
          "010000: a leading zero" },
        { BASE "nproc_limit = 0256\n", "c.conf:2: nproc_limit must be a "
                                       "number: nproc_limit = 0256" },
        { BASE "fsize_limit = 067108864\n", "fsize_limit = 067108864: a "
                                            "leading zero is not taken" },
        { BASE "nproc_limit = 00\n", "nproc_limit = 00: a leading zero" },
        { BASE "nproc_limit = 0x20\n",
          "c.conf:2: nproc_limit must be a number: nproc_limit = 0x20: "
          "hexadecimal is not taken" },
        { "dm_uid_base = \"500000\"\n",
          "c.conf:1: dm_uid_base must be a number: dm_uid_base = "
          "\"500000\": a number is written without quotes" },
        { BASE "reap_stale = '1'\n", "reap_stale = '1': a number is "
                                     "written without quotes" },
        { "dm_uid_base = +5\n", "c.conf:1: dm_uid_base = +5: a number is "
                                "written without a sign" },
        { "dm_uid_base = 99999999999999999999999\n",
          "c.conf:1: dm_uid_base = 99999999999999999999999 is too large "
          "(at most 4294967295)" },
        { BASE "nproc_limit = 1048577\n", "c.conf:2: nproc_limit = "
                                          "1048577 is too large (at most "
                                          "1048576)" },
        { "dm_uid_base = 3000000\r\n", "c.conf:1: the line ends in CR" },
        { BASE "\n\nnproc_limit = 5\r\n", "c.conf:4: the line ends in CR" },
        { BASE "nproc_limit = 5\r # x\n", "c.conf:2: a CR byte" },
        { "x\n", "c.conf:1: config parsing error near <newline>" },
        { "\n\ndm_uid_base =\n", "c.conf:3: config parsing error near "
                                 "<newline>" },
        { BASE "\x1b[31mred = 1\n", "c.conf:2: config parsing error near "
                                    "`\\x1b[31mred': lexical error" },
        { "dm_uid_base = 3000000 \x01\x7f\xff\n", "near `\\x01\\x7f\\xff'" },
    };
    fixture *f = *state;
    char *path;
    int rc;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *log;

        rc = load(f, cases[i].text);
        log = xlrt_captured();
        if (rc != XLREAPER_ERROR_INVAL)
            fail_msg("case %zu (%s): rc %d", i, cases[i].text, rc);
        if (!strstr(log, cases[i].why))
            fail_msg("case %zu (%s): log lacks \"%s\":\n%s", i, cases[i].text,
                     cases[i].why, log);
        for (const char *p = log; *p; p++)
            if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (*p & 0x80))
                fail_msg("case %zu: a raw byte %#x in the log:\n%s", i,
                         (unsigned)(unsigned char)*p, log);
    }
    /* A path of 5000 bytes: said so, not "must be an absolute path". */
    assert_true(asprintf(&path, BASE "qemu_path = \"/%04999d\"\n", 0) > 0);
    assert_int_equal(load(f, path), XLREAPER_ERROR_INVAL);
    assert_logged("c.conf:2: qemu_path is 5000 bytes long: a path is at "
                  "most 4095");
    free(path);
    /* Decimal still reads as decimal. */
    assert_int_equal(load(f, "dm_uid_base = 3000000\nnproc_limit = 2560"
                             "\nlock_timeout_ms = 0\n"),
                     0);
    assert_int_equal(xlreaper_config_get(f->ctx)->dm_uid_base, 3000000);
    assert_int_equal(xlreaper_config_get(f->ctx)->nproc_limit, 2560);
    assert_int_equal(xlreaper_config_get(f->ctx)->lock_timeout_ms, 0);
}

static void test_no_python_guess(void **state)
{
    static const char *const texts[] = {
        BASE "lock_timeout_ms = -5\n",
        BASE "lock_timeout_ms = 1.5\n",
        BASE "lock_timeout_ms = --5\n",
    };
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        const char *log;
        int lines = 0;

        assert_int_equal(load(f, texts[i]), XLREAPER_ERROR_INVAL);
        log = xlrt_captured();
        for (const char *p = log; *p; p++)
            lines += *p == '\n';
        if (lines != 1 || strstr(log, "Python"))
            fail_msg("%s: want one line, got:\n%s", texts[i], log);
    }
}

static void test_nul_byte_is_binary(void **state)
{
    static const char text[] = "dm_uid_base = 3000000\n\0\n";
    fixture *f = *state;

    assert_int_equal(load_text(f, text, sizeof(text) - 1),
                     XLREAPER_ERROR_INVAL);
    assert_logged("binary data");
}

static void test_writable_by_others_refused(void **state)
{
    fixture *f = *state;
    char *path = xlrt_write_file(f->dir, "w.conf", BASE);

    assert_int_equal(chmod(path, 0666), 0);
    xlrt_capture_reset();
    assert_int_equal(
        xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST),
        XLREAPER_ERROR_INVAL);
    assert_logged("w.conf is writable by everyone (mode 0666); refusing it");
    free(path);
}

/*
 * The cases: a config of root's, 0664, that uid 65534 may write
 * through an ACL entry; one in a directory anyone may write; one
 * reached through a symlink into such a directory.  Each refused with
 * what on the path is wrong (test_path_trust has every way to fail).
 */
static void test_untrusted_places_refused(void **state)
{
    /* version 2; user_obj rw, user 65534 rw, group_obj r, mask rw,
     * other r; little-endian. */
    static const unsigned char acl[] = {
        2,    0,    0,    0,    1,    0,    6,    0,    0xff, 0xff, 0xff,
        0xff, 2,    0,    6,    0,    0xfe, 0xff, 0,    0,    4,    0,
        4,    0,    0xff, 0xff, 0xff, 0xff, 0x10, 0,    6,    0,    0xff,
        0xff, 0xff, 0xff, 0x20, 0,    4,    0,    0xff, 0xff, 0xff, 0xff,
    };
    fixture *f = *state;
    char *path = xlrt_write_file(f->dir, "acl.conf", BASE), *w, *wpath, *link;

    if (setxattr(path, "system.posix_acl_access", acl, sizeof(acl), 0) < 0)
        fail_msg("setxattr: %s", strerror(errno));
    xlrt_capture_reset();
    assert_int_equal(
        xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST),
        XLREAPER_ERROR_INVAL);
    assert_logged("acl.conf is writable by uid 65534 (ACL user entry); "
                  "refusing it");

    assert_true(asprintf(&w, "%s/w", f->dir) > 0);
    assert_int_equal(mkdir(w, 0777), 0);
    assert_int_equal(chmod(w, 0777), 0);
    wpath = xlrt_write_file(w, "c.conf", BASE);
    xlrt_capture_reset();
    assert_int_equal(
        xlreaper_config_load(f->ctx, wpath, XLREAPER_CONFIG_MUST_EXIST),
        XLREAPER_ERROR_INVAL);
    assert_logged("/w is writable by everyone (mode 0777, not sticky)");

    assert_true(asprintf(&link, "%s/link.conf", f->dir) > 0);
    assert_int_equal(symlink(wpath, link), 0);
    xlrt_capture_reset();
    assert_int_equal(
        xlreaper_config_load(f->ctx, link, XLREAPER_CONFIG_MUST_EXIST),
        XLREAPER_ERROR_INVAL);
    assert_logged("/w is writable by everyone (mode 0777, not sticky)");
    free(path);
    free(w);
    free(wpath);
    free(link);
}

static void test_refused_reload_keeps_old(void **state)
{
    fixture *f = *state;

    assert_int_equal(load(f, BASE "lock_timeout_ms = 123\n"), 0);
    assert_int_equal(load(f, "dm_uid_base = 3100000\nbogus = 1\n"),
                     XLREAPER_ERROR_INVAL);
    assert_int_equal(xlreaper_config_get(f->ctx)->dm_uid_base, 3000000);
    assert_int_equal(xlreaper_config_get(f->ctx)->lock_timeout_ms, 123);
}

static void test_shipped_config_loads(void **state)
{
    static const xlrt_user upstream[] = {
        { "xen-qemuuser-range-base", 131072, 131072 },
        { NULL, 0, 0 },
    };
    fixture *f = *state;

    /* The file `make install` puts in /etc/xen, with upstream's user. */
    xlrt_fake_passwd(f->ctx, upstream);
    assert_int_equal(xlreaper_config_load(f->ctx, "config/xl-reaper.conf",
                                          XLREAPER_CONFIG_MUST_EXIST),
                     0);
    assert_int_equal(xlreaper_config_get(f->ctx)->dm_uid_base, 131072);
    assert_string_equal(xlreaper_config_get(f->ctx)->lock_file,
                        XLREAPER_DEFAULT_LOCK_FILE);
    /* Set for xl's QEMU, which switches uid itself (-runas uid:gid). */
    assert_int_equal(xlreaper_config_get(f->ctx)->uid_switch,
                     XLREAPER_UID_SWITCH_RUNAS);
    assert_int_equal(xlreaper_config_get(f->ctx)->dm_gid_mode,
                     XLREAPER_GID_RANGE_BASE);
}

static void test_key_names_listed(void **state)
{
    unsigned n = 0;
    (void)state;

    while (xlreaper_config_key_name(n))
        n++;
    assert_true(n >= 7);
    assert_string_equal(xlreaper_config_key_name(0), "dm_uid_base");
}

/* Every key's value, "key = value" lines as `xl-reaper check` prints. */
static char *format_all(const xlreaper_config *c)
{
    char *out = NULL, value[4200];
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);

    assert_non_null(m);
    for (unsigned i = 0; xlreaper_config_key_name(i); i++) {
        int r = xlreaper_config_key_value(c, i, value, sizeof(value));

        assert_true(r == 0 || r == 1);
        if (!r)
            fprintf(m, "%s = %s\n", xlreaper_config_key_name(i), value);
    }
    fclose(m);
    return out;
}

/* What check prints is a config file that loads to the same values. */
static void test_values_round_trip(void **state)
{
    fixture *f = *state;
    char *first, *second;

    assert_int_equal(load(f, BASE "reaper_uid = 2999999\n"
                                  "uid_switch = \"runas\"\n"
                                  "dm_gid_mode = \"range-base\"\n"
                                  "unshare_net = 1\nfsize_limit = 4096\n"
                                  "cgroup_parent = \"/sys/fs/cgroup/x\"\n"),
                     0);
    first = format_all(xlreaper_config_get(f->ctx));
    assert_non_null(strstr(first, "uid_switch = \"runas\"\n"));
    assert_non_null(strstr(first, "reaper_uid = 2999999\n"));
    assert_non_null(strstr(first, "fsize_limit = 4096\n"));
    assert_non_null(strstr(first, "cgroup_parent = \"/sys/fs/cgroup/x\"\n"));
    assert_int_equal(load(f, first), 0);
    second = format_all(xlreaper_config_get(f->ctx));
    assert_string_equal(first, second);
    free(first);
    free(second);
}

static void test_value_past_last_key(void **state)
{
    char buf[8];
    unsigned n = 0;
    fixture *f = *state;

    assert_int_equal(load(f, BASE), 0);
    while (xlreaper_config_key_name(n))
        n++;
    assert_int_equal(
        xlreaper_config_key_value(xlreaper_config_get(f->ctx), n, buf, 8),
        XLREAPER_ERROR_INVAL);
    /* Too small a buffer is an error, never a truncated value. */
    assert_int_equal(
        xlreaper_config_key_value(xlreaper_config_get(f->ctx), 0, buf, 3),
        XLREAPER_ERROR_INVAL);
    /* An unset path. */
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(xlreaper_config_key_name(i), "cgroup_parent"))
            assert_int_equal(xlreaper_config_key_value(
                                 xlreaper_config_get(f->ctx), i, buf, 8),
                             1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers_and_messages, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_python_guess, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nul_byte_is_binary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_writable_by_others_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_untrusted_places_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_reload_keeps_old, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shipped_config_loads, setup,
                                        teardown),
        cmocka_unit_test(test_key_names_listed),
        cmocka_unit_test_setup_teardown(test_values_round_trip, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_value_past_last_key, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
