/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_setid.c - no way back into a DM's uid: a device model
 * (tests/progs/setid_planter.c) that tries to leave a set-uid and a
 * set-gid file in a world-writable directory, by every system call that
 * can set the bits, fails each time (xlreaper_setid.c): in exec mode
 * through `xl-reaper spawn`, and in runas mode, still root, through
 * qemu-dm-restrict.  The files it made are read back here with stat.
 * And libxl's chroot, QEMU's world in runas mode, must be as libxl
 * makes it: root's, empty, mode 0; anything else is refused, in either
 * spelling (-chroot, 4.20's -run-with chroot=).
 * uid block: base 9400000 (domids 1..19).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_spawn.h"

#define BASE 9400000ul

typedef struct {
    xlrt_sfix s;   /* s.dir 0755, ours */
    char *drop;    /* dir/drop, 01777: anyone may write there */
    char *planter; /* a copy in dir, so a DM uid may exec it wherever
                    * the tree sits (a 0700 home) */
} fixture;

static void copy_file(const char *from, const char *to, mode_t mode)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ssize_t n;

    assert_true(in >= 0 && out >= 0);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        assert_int_equal(write(out, buf, (size_t)n), n);
    assert_int_equal(n, 0);
    assert_int_equal(fchmod(out, mode), 0);
    close(in);
    close(out);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *built = xlrt_prog("setid_planter");

    assert_non_null(f);
    xlrt_sfix_setup(&f->s);
    assert_int_equal(chmod(f->s.dir, 0755), 0);
    assert_true(asprintf(&f->drop, "%s/drop", f->s.dir) > 0);
    assert_int_equal(mkdir(f->drop, 0), 0);
    assert_int_equal(chmod(f->drop, 01777), 0);
    assert_true(asprintf(&f->planter, "%s/setid_planter", f->s.dir) > 0);
    copy_file(built, f->planter, 0755);
    free(built);
    xlrt_sfix_conf(&f->s, BASE, f->planter, NULL);
    assert_int_equal(setenv("SETID_PLANTER_DIR", f->drop, 1), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    unsetenv("SETID_PLANTER_DIR");
    xlrt_sfix_teardown(&f->s);
    free(f->drop);
    free(f->planter);
    free(f);
    return 0;
}

static const xlrt_attempt attempts[] = {
    { "chmod-suid", "EPERM" },
    { "chmod-sgid", "EPERM" },
    { "fchmod-suid", "EPERM" },
    { "fchmodat-sgid", "EPERM" },
    { "fchmodat2-suid", "EPERM" },
    { "chmod-highbits", "EPERM" },
    { "open-suid", "EPERM" },
    { "openat-sgid", "EPERM" },
    { "creat-suid", "EPERM" },
    { "mknod-suid", "EPERM" },
    { "mknodat-sgid", "EPERM" },
    { "openat2-suid", "ENOSYS" },
    { "io_uring_setup", "ENOSYS" },
    /* The control: a DM still chmods its own file without the bits. */
    { "plain", "0" },
};

#define NUM_ATTEMPTS (sizeof(attempts) / sizeof(attempts[0]))

/*
 * What the DM left in the drop directory, read by us: no file with a
 * set-id bit; the files it made are owner's (so it could write there:
 * the test proves the filter, not a permission); the control chmod took.
 */
static void expect_no_setid_left(const fixture *f, uid_t owner)
{
    static const char *const made[] = { "chmod-suid", "chmod-sgid",
                                        "fchmod-suid", "plain" };
    char path[4200];
    struct stat st;

    for (size_t i = 0; i < NUM_ATTEMPTS; i++) {
        snprintf(path, sizeof(path), "%s/%s", f->drop, attempts[i].name);
        if (lstat(path, &st) < 0) {
            assert_int_equal(errno, ENOENT);
            continue;
        }
        if (st.st_mode & (S_ISUID | S_ISGID))
            fail_msg("%s is mode %04o: a set-id file was left", path,
                     (unsigned)(st.st_mode & 07777));
    }
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", f->drop, made[i]);
        assert_int_equal(lstat(path, &st), 0);
        assert_int_equal(st.st_uid, owner);
    }
    snprintf(path, sizeof(path), "%s/plain", f->drop);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
}

/* Exec mode, the built-in default: `xl-reaper spawn` execs the DM in
 * place under domid 5's uid. */
static void test_exec_mode_dm_cannot_plant(void **state)
{
    fixture *f = *state;
    char *out = xlrt_spawn_cli_report(&f->s, 5, f->planter);

    xlrt_expect_attempts(out, attempts, NUM_ATTEMPTS);
    expect_no_setid_left(f, (uid_t)(BASE + 5));
    free(out);
}

/* Runas mode: QEMU is root when it execs; the filter binds it from
 * there, through its own setuid, to everything it starts. */
static void test_runas_mode_dm_cannot_plant(void **state)
{
    fixture *f = *state;
    char *out = xlrt_runas_report(&f->s, BASE, f->planter, 6);

    xlrt_expect_attempts(out, attempts, NUM_ATTEMPTS);
    expect_no_setid_left(f, 0); /* root made them: QEMU had not switched */
    free(out);
}

/* ---------- libxl's chroot, in runas mode ---------- */

/* The wrapper, runas mode, with extra on QEMU's line after -runas. */
static int run_runas(fixture *f, unsigned domid, const char *const *extra,
                     char **err_r)
{
    return xlrt_runas_wrapper(&f->s, BASE, f->planter, domid, extra, NULL,
                              err_r);
}

static void expect_refused(int code, char *err, const char *why)
{
    if (code != 1 || !strstr(err, why))
        fail_msg("wrapper exit %d, want 1 and \"%s\"; stderr:\n%s", code, why,
                 err);
    free(err);
}

/* As libxl makes it, root's, mode 0, empty: QEMU starts. */
static void test_libxl_chroot_accepted(void **state)
{
    fixture *f = *state;
    char dir[4200], *err = NULL;
    const char *extra[] = { "-chroot", dir, NULL };
    int code;

    snprintf(dir, sizeof(dir), "%s/qemu-root-7", f->s.dir);
    assert_int_equal(mkdir(dir, 0), 0);
    code = run_runas(f, 7, extra, &err);
    if (code != 0)
        fail_msg("wrapper exit %d; stderr:\n%s", code, err);
    free(err);
}

/* Anything else is refused, whichever spelling names it. */
static void test_libxl_chroot_refused(void **state)
{
    fixture *f = *state;
    char dir[4200], other[4200], file[4300], runwith[4300], *err = NULL;
    const char *dash_chroot[] = { "-chroot", dir, NULL };
    const char *run_with[] = { "-run-with", runwith, NULL };
    const char *elsewhere[] = { "-chroot", other, NULL };
    int fd, code;

    snprintf(dir, sizeof(dir), "%s/qemu-root-8", f->s.dir);
    snprintf(runwith, sizeof(runwith), "chroot=%s", dir);
    assert_int_equal(mkdir(dir, 0), 0);

    /* Not mode 0: QEMU, as the DM uid, could read or enter it. */
    assert_int_equal(chmod(dir, 0711), 0);
    code = run_runas(f, 8, dash_chroot, &err);
    expect_refused(code, err, "is mode 0711, not 0000 as libxl makes it");
    assert_int_equal(chmod(dir, 0), 0);

    /* Not empty: something planted in QEMU's world (4.20's spelling). */
    snprintf(file, sizeof(file), "%s/planted", dir);
    fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 04755);
    assert_true(fd >= 0);
    close(fd);
    code = run_runas(f, 8, run_with, &err);
    expect_refused(code, err, "is not empty");
    assert_int_equal(unlink(file), 0);

    /* Not root's. */
    assert_int_equal(chown(dir, (uid_t)(BASE + 8), (gid_t)(BASE + 8)), 0);
    code = run_runas(f, 8, dash_chroot, &err);
    expect_refused(code, err,
                   "is not a directory owned and only writable by root");
    assert_int_equal(chown(dir, 0, 0), 0);

    /* A chroot the line names outside chroot_base is checked as well. */
    assert_int_equal(rmdir(dir), 0);
    snprintf(other, sizeof(other), "%s/elsewhere", f->s.dir);
    assert_int_equal(mkdir(other, 0755), 0);
    code = run_runas(f, 8, elsewhere, &err);
    expect_refused(code, err, "is mode 0755, not 0000 as libxl makes it");
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_exec_mode_dm_cannot_plant),
        T(test_runas_mode_dm_cannot_plant),
        T(test_libxl_chroot_accepted),
        T(test_libxl_chroot_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
