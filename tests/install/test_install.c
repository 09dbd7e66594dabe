/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_install.c - `make install` and `make uninstall` into a DESTDIR:
 * the layout under PREFIX (the Debian package's, debian/), an existing
 * config never replaced, and uninstall removing exactly what install put
 * (an edited config excepted).  Runs the tree's own make from the
 * repository root, against the build that `make check` has just made.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define CONF "/etc/xen/xl-reaper.conf"

typedef struct {
    char *dir; /* the DESTDIR */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlrt_tmpdir_remove(f->dir);
    free(f);
    return 0;
}

/* make TARGET DESTDIR=dir BUILD=<build> PREFIX=prefix [extra]; returns
 * its exit status; *out_r gets stdout and stderr together. */
static int run_make(const char *target, const char *dir, const char *prefix,
                    const char *extra, char **out_r)
{
    char destdir[4200], build[4200], pfx[256];
    char *argv[] = { "/usr/bin/make", "-s", (char *)target, destdir,
                     build,           pfx,  (char *)extra,  NULL };
    char *out = NULL, *err = NULL;
    int st;

    snprintf(destdir, sizeof(destdir), "DESTDIR=%s", dir);
    snprintf(build, sizeof(build), "BUILD=%s", xlrt_build_dir());
    snprintf(pfx, sizeof(pfx), "PREFIX=%s", prefix);
    st = xlrt_run(argv, &out, &err);
    assert_true(asprintf(out_r, "%s%s", out ? out : "", err ? err : "") >= 0);
    free(out);
    free(err);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *path_in(const char *dir, const char *rel)
{
    char *p;

    assert_true(asprintf(&p, "%s%s", dir, rel) > 0);
    return p;
}

static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *buf;

    if (fd < 0)
        return NULL;
    buf = xlrt_read_to_eof(fd);
    close(fd);
    return buf;
}

static void expect_file(const char *dir, const char *rel, mode_t mode)
{
    char *p = path_in(dir, rel);
    struct stat st;

    if (lstat(p, &st) < 0)
        fail_msg("make install put no %s", rel);
    if (!S_ISREG(st.st_mode) || (st.st_mode & 07777) != mode)
        fail_msg("%s: mode %o, want a file of mode %o", rel,
                 (unsigned)st.st_mode, (unsigned)mode);
    free(p);
}

static void expect_absent(const char *dir, const char *rel)
{
    char *p = path_in(dir, rel);
    struct stat st;

    if (lstat(p, &st) == 0)
        fail_msg("%s should not be there", rel);
    free(p);
}

/* Every path under the DESTDIR that is not a directory, one a line. */
static char *listing;
static size_t listing_len;
static const char *listing_root;

static int list_one(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    size_t l = strlen(path) - strlen(listing_root) + 1;
    char *n;

    (void)st;
    (void)ftw;
    if (flag == FTW_D || flag == FTW_DP)
        return 0;
    n = realloc(listing, listing_len + l + 1);
    assert_non_null(n);
    listing = n;
    memcpy(listing + listing_len, path + strlen(listing_root), l - 1);
    listing[listing_len + l - 1] = '\n';
    listing_len += l;
    listing[listing_len] = '\0';
    return 0;
}

static char *files_under(const char *dir)
{
    listing = strdup("");
    listing_len = 0;
    listing_root = dir;
    assert_int_equal(nftw(dir, list_one, 16, FTW_PHYS), 0);
    return listing;
}

/* ---------- the layout ---------- */

static void test_layout_under_prefix(void **state)
{
    fixture *f = *state;
    char *out, *unit, *conf, *shipped;

    if (run_make("install", f->dir, "/usr/local", NULL, &out))
        fail_msg("make install failed:\n%s", out);
    expect_file(f->dir, "/usr/local/sbin/xl-reaper", 0755);
    expect_file(f->dir, "/usr/local/sbin/xl-reaperd", 0755);
    expect_file(f->dir, "/usr/local/libexec/xl-reaper/qemu-dm-restrict", 0755);
    expect_file(f->dir, "/usr/local/libexec/xl-reaper/xl-reaper-xen", 0755);
    expect_file(f->dir, "/usr/local/lib/systemd/system/xl-reaperd.service",
                0644);
    expect_file(f->dir, "/usr/local/lib/tmpfiles.d/xl-reaper.conf", 0644);
    expect_file(f->dir, CONF, 0644);
    expect_file(f->dir, "/etc/logrotate.d/xl-reaper", 0644);
    expect_file(f->dir, "/usr/local/share/man/man8/xl-reaperd.8", 0644);
    expect_file(f->dir, "/usr/local/share/man/man5/xl-reaper.conf.5", 0644);
    /* Nothing outside PREFIX but /etc; no library nothing links. */
    expect_absent(f->dir, "/lib");
    expect_absent(f->dir, "/usr/lib");
    expect_absent(f->dir, "/usr/local/lib/libxlreaper.so.0");
    expect_absent(f->dir, "/usr/local/include/xlreaper.h");

    unit = slurp(
        path_in(f->dir, "/usr/local/lib/systemd/system/xl-reaperd.service"));
    assert_non_null(unit);
    assert_non_null(strstr(unit, "\nExecStart=/usr/local/sbin/xl-reaperd "));
    assert_non_null(
        strstr(unit, "\nConditionPathExists=/proc/xen/capabilities\n"));
    conf = slurp(path_in(f->dir, CONF));
    shipped = slurp("config/xl-reaper.conf");
    assert_non_null(conf);
    assert_non_null(shipped);
    assert_string_equal(conf, shipped);
    /* The lock the config names is the one made root's 0600 at boot. */
    assert_non_null(
        strstr(conf, "\nlock_file = \"/var/run/xen/dm-reaper-lock\"\n"));
    free(unit);
    unit = slurp(path_in(f->dir, "/usr/local/lib/tmpfiles.d/xl-reaper.conf"));
    assert_non_null(unit);
    assert_non_null(
        strstr(unit, "\nf /run/xen/dm-reaper-lock 0600 root root -\n"));
    /* What to write in xl.cfg is what was installed. */
    assert_non_null(strstr(out, "device_model_override = "
                                "\"/usr/local/libexec/xl-reaper/"
                                "qemu-dm-restrict\""));
    free(out);
    free(unit);
    free(conf);
    free(shipped);
}

static void test_prefix_usr(void **state)
{
    fixture *f = *state;
    char *out, *unit;

    if (run_make("install", f->dir, "/usr", NULL, &out))
        fail_msg("make install failed:\n%s", out);
    expect_file(f->dir, "/usr/sbin/xl-reaperd", 0755);
    expect_file(f->dir, "/usr/libexec/xl-reaper/qemu-dm-restrict", 0755);
    expect_file(f->dir, "/usr/lib/systemd/system/xl-reaperd.service", 0644);
    unit =
        slurp(path_in(f->dir, "/usr/lib/systemd/system/xl-reaperd.service"));
    assert_non_null(unit);
    assert_non_null(strstr(unit, "\nExecStart=/usr/sbin/xl-reaperd "));
    free(out);
    free(unit);
}

static void test_fsize_limit_set(void **state)
{
    fixture *f = *state;
    char *out, *conf;

    if (run_make("install", f->dir, "/usr", "FSIZE_LIMIT=67108864", &out))
        fail_msg("make install failed:\n%s", out);
    conf = slurp(path_in(f->dir, CONF));
    assert_non_null(conf);
    assert_non_null(strstr(conf, "\nfsize_limit = 67108864\n"));
    assert_null(strstr(conf, "#fsize_limit = 262144"));
    free(out);
    free(conf);
}

/* ---------- the config is the admin's ---------- */

static void test_existing_config_kept(void **state)
{
    fixture *f = *state;
    char *etc = path_in(f->dir, "/etc/xen");
    char *out, *conf;

    assert_int_equal(mkdir(path_in(f->dir, "/etc"), 0755), 0);
    assert_int_equal(mkdir(etc, 0755), 0);
    free(xlrt_write_file(etc, "xl-reaper.conf", "reap_stale = 1\n"));
    for (int i = 0; i < 2; i++) {
        if (run_make("install", f->dir, "/usr/local", NULL, &out))
            fail_msg("make install failed:\n%s", out);
        conf = slurp(path_in(f->dir, CONF));
        assert_non_null(conf);
        assert_string_equal(conf, "reap_stale = 1\n");
        assert_non_null(strstr(out, "kept "));
        free(conf);
        free(out);
    }
    free(etc);
}

/* ---------- uninstall ---------- */

static void test_uninstall_removes_what_install_put(void **state)
{
    fixture *f = *state;
    char *out, *files;

    if (run_make("install", f->dir, "/usr/local", NULL, &out))
        fail_msg("make install failed:\n%s", out);
    free(out);
    files = files_under(f->dir);
    assert_non_null(strstr(files, "/usr/local/sbin/xl-reaperd\n"));
    free(files);
    if (run_make("uninstall", f->dir, "/usr/local", NULL, &out))
        fail_msg("make uninstall failed:\n%s", out);
    files = files_under(f->dir);
    if (*files)
        fail_msg("left after uninstall:\n%s", files);
    /* Our own directories go, the shared ones (sbin, share/man) stay. */
    expect_absent(f->dir, "/usr/local/libexec/xl-reaper");
    expect_absent(f->dir, "/usr/local/share/doc/libxl-reaper");
    free(files);
    free(out);
}

static void test_uninstall_keeps_edited_config(void **state)
{
    fixture *f = *state;
    char *out, *files, *conf = path_in(f->dir, CONF);
    FILE *fp;

    if (run_make("install", f->dir, "/usr/local", NULL, &out))
        fail_msg("make install failed:\n%s", out);
    free(out);
    fp = fopen(conf, "a");
    assert_non_null(fp);
    fputs("reap_stale = 1\n", fp);
    fclose(fp);
    if (run_make("uninstall", f->dir, "/usr/local", NULL, &out))
        fail_msg("make uninstall failed:\n%s", out);
    files = files_under(f->dir);
    assert_string_equal(files, CONF "\n");
    assert_non_null(strstr(out, "kept "));
    free(files);
    free(out);
    free(conf);
}

int main(void)
{
    /* This suite runs under make check: the inner make must not take the
     * outer one's jobserver or its variables. */
    unsetenv("MAKEFLAGS");
    unsetenv("MFLAGS");
    unsetenv("MAKELEVEL");
    unsetenv("MAKEOVERRIDES");
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_layout_under_prefix),
        T(test_prefix_usr),
        T(test_fsize_limit_set),
        T(test_existing_config_kept),
        T(test_uninstall_removes_what_install_put),
        T(test_uninstall_keeps_edited_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
