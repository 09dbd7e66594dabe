/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_lock_file.c - the lock is really the lock: the file is refused
 * unless it is root's, mode 0600, in a place only root may write; a
 * lock taken on a file the path no longer names is taken again; and a
 * lock timeout names the holder when it is a reaper of ours, with its
 * pid, and says it is none of ours otherwise (from the lock file's own
 * locks: nothing reads /proc/locks).
 *
 * uid block: 7400000 (a base for the config; nothing runs in the range).
 * uid 65534 (nobody) holds the lock in one case, a child of this suite.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

#define NOBODY 65534

static const xlrt_user no_users[] = { { NULL, 0, 0 } };

typedef struct {
    char *dir;
    char *lock; /* dir/l/lock */
    xlreaper_ctx *ctx;
} fixture;

static void load_config(fixture *f, unsigned timeout_ms)
{
    char text[1024], *path;

    snprintf(text, sizeof(text),
             "dm_uid_base = 7400000\nlock_file = \"%s\"\n"
             "lock_timeout_ms = %u\n",
             f->lock, timeout_ms);
    path = xlrt_write_file(f->dir, "c.conf", text);
    assert_int_equal(
        xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *l;

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_true(asprintf(&l, "%s/l", f->dir) > 0);
    assert_int_equal(mkdir(l, 0700), 0);
    assert_true(asprintf(&f->lock, "%s/lock", l) > 0);
    free(l);
    assert_int_equal(xlreaper_ctx_alloc(&f->ctx, xlrt_capture_logger()), 0);
    xlrt_fake_passwd(f->ctx, no_users);
    load_config(f, 300);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlreaper_ctx_free(f->ctx);
    xlrt_tmpdir_remove(f->dir);
    free(f->lock);
    free(f);
    return 0;
}

static void make_lock(const fixture *f, mode_t mode)
{
    int fd = open(f->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* The file made when absent is 0600 and taken; then it is had again. */
static void test_made_0600(void **state)
{
    fixture *f = *state;
    xlreaper_lock *lock = NULL;
    struct stat st;

    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock), 0);
    assert_int_equal(stat(f->lock, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    xlreaper_lock_release(lock);
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock), 0);
    xlreaper_lock_release(lock);
}

/* Upstream libxl's 0644: whoever opened it while readable holds it
 * whatever its mode becomes, so it is refused, not fixed. */
static void test_mode_0644_refused(void **state)
{
    fixture *f = *state;
    xlreaper_lock *lock = NULL;
    struct stat st;

    make_lock(f, 0644);
    xlrt_capture_reset();
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock),
                     XLREAPER_ERROR_FAIL);
    assert_null(lock);
    assert_logged("is mode 0644, not 0600");
    assert_logged("remove it");
    assert_int_equal(stat(f->lock, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644); /* left as it was */
}

/* In a directory others may write, anyone could replace it. */
static void test_directory_others_write_refused(void **state)
{
    fixture *f = *state;
    xlreaper_lock *lock = NULL;
    char *l;

    make_lock(f, 0600);
    assert_true(asprintf(&l, "%s/l", f->dir) > 0);
    assert_int_equal(chmod(l, 0777), 0);
    xlrt_capture_reset();
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock),
                     XLREAPER_ERROR_FAIL);
    assert_logged("l is writable by everyone (mode 0777, not sticky)");
    /* Nor made in one. */
    assert_int_equal(unlink(f->lock), 0);
    xlrt_capture_reset();
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock),
                     XLREAPER_ERROR_FAIL);
    assert_logged("refusing it");
    assert_int_equal(access(f->lock, F_OK), -1);
    free(l);
}

/* A child that takes the lock, with a bare flock (as libxl's reaper
 * does) or as a reaper of ours, and then (as uid) waits for a byte on
 * the pipe or its end; its pid. */
static pid_t holder(const fixture *f, uid_t uid, bool ours, int *go_w,
                    int *ready_r)
{
    int go[2], ready[2];
    pid_t pid;

    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(f->lock, O_RDWR | O_CLOEXEC);
        xlreaper_lock *lock = NULL;
        char c;

        close(go[1]);
        close(ready[0]);
        if (ours ? xlreaper_lock_acquire(f->ctx, &lock) != 0
                 : fd < 0 || flock(fd, LOCK_SH) < 0)
            _exit(1);
        if (uid && setresuid(uid, uid, uid) < 0)
            _exit(2);
        if (write(ready[1], "r", 1) != 1)
            _exit(3);
        (void)!read(go[0], &c, 1);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    *go_w = go[1];
    *ready_r = ready[0];
    return pid;
}

static void holder_wait(pid_t pid, int go_w, int ready_r)
{
    int status;

    close(go_w);
    close(ready_r);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A holder that is not ours (a bare flock, as libxl's reaper takes,
 * here by nobody) is said to be none of ours. */
static void test_foreign_holder_named(void **state)
{
    fixture *f = *state;
    xlreaper_lock *lock = NULL;
    int go, ready;
    pid_t pid;
    char c;

    make_lock(f, 0600);
    pid = holder(f, NOBODY, false, &go, &ready);
    assert_int_equal(read(ready, &c, 1), 1);
    xlrt_capture_reset();
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock),
                     XLREAPER_ERROR_LOCK_TIMEOUT);
    assert_logged("(held, not by a reaper of ours");
    holder_wait(pid, go, ready);
}

/* A reaper of ours: named, with its pid. */
static void test_our_holder_named(void **state)
{
    fixture *f = *state;
    xlreaper_lock *lock = NULL;
    char want[128], c;
    int go, ready;
    pid_t pid;

    make_lock(f, 0600);
    pid = holder(f, 0, true, &go, &ready);
    assert_int_equal(read(ready, &c, 1), 1);
    xlrt_capture_reset();
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock),
                     XLREAPER_ERROR_LOCK_TIMEOUT);
    snprintf(want, sizeof(want), "(held by pid %ld, a reaper of ours)",
             (long)pid);
    assert_logged(want);
    holder_wait(pid, go, ready);
}

/*
 * The lock file is replaced while a waiter waits on the old one: when
 * the old one is released, the waiter must not stop at it (a newcomer
 * takes the new file the path names, and both would run); it takes the
 * file the path names.
 */
static void test_replaced_while_waiting(void **state)
{
    fixture *f = *state;
    xlreaper_lock *lock = NULL;
    struct stat held, named;
    char *tmp, c;
    int go, ready, other;
    pid_t pid, swapper;

    load_config(f, 3000);
    make_lock(f, 0600);
    pid = holder(f, 0, false, &go, &ready);
    assert_int_equal(read(ready, &c, 1), 1);
    assert_true(asprintf(&tmp, "%s.new", f->lock) > 0);
    swapper = fork();
    assert_true(swapper >= 0);
    if (swapper == 0) {
        /* While the waiter waits: a new file over the path, then the
         * old one released. */
        int fd;

        usleep(200 * 1000);
        fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || rename(tmp, f->lock) < 0)
            _exit(1);
        _exit(write(go, "g", 1) == 1 ? 0 : 2);
    }
    assert_int_equal(xlreaper_lock_acquire(f->ctx, &lock), 0);
    assert_int_equal(fstat(xlreaper__lock_fd(lock), &held), 0);
    assert_int_equal(stat(f->lock, &named), 0);
    assert_int_equal(held.st_ino, named.st_ino);
    /* And so a newcomer is kept out. */
    other = open(f->lock, O_RDWR | O_CLOEXEC);
    assert_true(other >= 0);
    assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
    close(other);
    xlreaper_lock_release(lock);
    assert_int_equal(waitpid(swapper, NULL, 0), swapper);
    holder_wait(pid, go, ready);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_made_0600, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mode_0644_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_directory_others_write_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_holder_named, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_our_holder_named, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_replaced_while_waiting, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
