/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_audit_setid.c - `xl-reaper audit`'s setid check, for real: set-id
 * files of the DM range planted by root (the way a DM could have before
 * the spawn's filter, xlreaper_setid.c, stopped it) are named by a walk
 * of the host's writable file systems, left alone without --fix, and
 * disarmed with it; a root set-uid file and a plain file of a DM uid are
 * not findings; the walk's deadline makes it "could not check".
 * uid block: base 9420000 (domids 7..9).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define BASE 9420000ul

typedef struct {
    char *dir, *conf;
    char suid[4200], sgid[4200], both[4200], rootsuid[4200], plain[4200];
} fixture;

static void plant(const char *path, uid_t u, gid_t g, mode_t mode)
{
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
    assert_int_equal(fchown(fd, u, g), 0);
    assert_int_equal(fchmod(fd, mode), 0); /* after fchown, which clears */
    close(fd);
}

static mode_t mode_of(const char *path)
{
    struct stat st;

    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode & 07777;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *text, deep[4200];

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_int_equal(chmod(f->dir, 01777), 0); /* anyone may write */
    assert_true(asprintf(&text,
                         "dm_uid_base = %lu\n"
                         "lock_file = \"%s/lock\"\n",
                         BASE, f->dir) > 0);
    f->conf = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
    snprintf(f->suid, sizeof(f->suid), "%s/suid", f->dir);
    snprintf(f->sgid, sizeof(f->sgid), "%s/sgid", f->dir);
    snprintf(deep, sizeof(deep), "%s/a", f->dir);
    assert_int_equal(mkdir(deep, 0755), 0);
    snprintf(deep, sizeof(deep), "%s/a/b", f->dir);
    assert_int_equal(mkdir(deep, 0777), 0);
    snprintf(f->both, sizeof(f->both), "%s/a/b/both", f->dir);
    snprintf(f->rootsuid, sizeof(f->rootsuid), "%s/rootsuid", f->dir);
    snprintf(f->plain, sizeof(f->plain), "%s/plain", f->dir);
    plant(f->suid, (uid_t)(BASE + 7), 0, 04755);
    plant(f->sgid, 0, (gid_t)(BASE + 8), 02755);
    plant(f->both, (uid_t)(BASE + 9), (gid_t)(BASE + 9), 06755);
    plant(f->rootsuid, 0, 0, 04755);
    plant(f->plain, (uid_t)(BASE + 7), (gid_t)(BASE + 7), 0755);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlrt_tmpdir_remove(f->dir);
    free(f->conf);
    free(f);
    return 0;
}

static int audit(fixture *f, const char *extra, const char *extra2,
                 char **out_r)
{
    char cli[4096];
    char *argv[] = { cli,     "--config",    f->conf,        "audit",
                     "--tap", (char *)extra, (char *)extra2, NULL };
    char *err = NULL;
    int status;

    snprintf(cli, sizeof(cli), "%s/bin/xl-reaper", xlrt_build_dir());
    status = xlrt_run(argv, out_r, &err);
    free(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect_in(const char *out, const char *fmt, const char *path)
{
    char want[4400];

    snprintf(want, sizeof(want), fmt, path);
    if (!strstr(out, want))
        fail_msg("the audit lacks \"%s\"; it has:\n%s", want, out);
}

static void expect_not_named(const char *out, const char *path)
{
    char want[4300];

    snprintf(want, sizeof(want), "%s:", path);
    if (strstr(out, want))
        fail_msg("the audit names %s, which leads nowhere:\n%s", path, out);
}

/* Named without --fix, and left as they were. */
static void test_audit_names_planted(void **state)
{
    fixture *f = *state;
    char *out = NULL;

    assert_int_equal(audit(f, NULL, NULL, &out), 1); /* a violation */
    expect_in(out, "not ok %s", "");
    expect_in(out, "%s: a set-uid file of uid 9420007 gid 0, mode 4755",
              f->suid);
    expect_in(out, "%s: a set-gid file of uid 0 gid 9420008, mode 2755",
              f->sgid);
    expect_in(out, "%s: a set-uid and set-gid file of uid 9420009 gid 9420009",
              f->both);
    expect_not_named(out, f->rootsuid);
    expect_not_named(out, f->plain);
    expect_in(out, "%s", "domid 7 uid 9420007 setid");
    assert_int_equal(mode_of(f->suid), 04755);
    assert_int_equal(mode_of(f->sgid), 02755);
    assert_int_equal(mode_of(f->both), 06755);
    free(out);
}

/* --fix disarms each, says so, and touches nothing else; a second
 * audit finds none left. */
static void test_audit_fix_disarms(void **state)
{
    fixture *f = *state;
    char *out = NULL;

    assert_int_not_equal(audit(f, "--fix", NULL, &out), 1);
    expect_in(out, "%s: fixed: ", "setid");
    expect_in(out,
              "%s: was a set-uid file of uid 9420007 gid 0, mode 4755; "
              "--fix removed the set-uid bit: mode now 0755",
              f->suid);
    expect_in(out, "%s: was a set-gid file", f->sgid);
    expect_in(out, "%s: was a set-uid and set-gid file", f->both);
    assert_int_equal(mode_of(f->suid), 0755);
    assert_int_equal(mode_of(f->sgid), 0755);
    assert_int_equal(mode_of(f->both), 0755);
    assert_int_equal(mode_of(f->rootsuid), 04755);
    assert_int_equal(mode_of(f->plain), 0755);
    free(out);

    assert_int_not_equal(audit(f, NULL, NULL, &out), 1);
    expect_in(out, "%s: 0 set-id files of a DM uid or gid left", "setid");
    free(out);
}

/* A walk cut short by its deadline proves nothing: "could not check". */
static void test_audit_setid_deadline(void **state)
{
    fixture *f = *state;
    char *out = NULL;

    /* 1 or 2: what it saw before the deadline may be a violation. */
    assert_int_not_equal(audit(f, "--setid-timeout", "1", &out), 0);
    expect_in(out, "%s",
              "setid: could not check: the walk stopped at its "
              "deadline");
    free(out);
    /* 0: not walked, and said so. */
    audit(f, "--setid-timeout", "0", &out);
    expect_in(out, "%s", "setid # SKIP not walked: --setid-timeout 0");
    free(out);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_audit_names_planted),
        T(test_audit_fix_disarms),
        T(test_audit_setid_deadline),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
