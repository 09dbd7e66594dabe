/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_userns.c - a device model cannot make a user namespace, the
 * first step of the stuck-FUSE attack (xlreaper_setid.c): a DM
 * (tests/progs/userns_maker.c) started by `xl-reaper spawn` in exec
 * mode, and by qemu-dm-restrict in runas mode (still root), gets EPERM
 * from unshare and clone with CLONE_NEWUSER and from setns into a user
 * namespace, and ENOSYS from clone3; fork, pthread_create and
 * posix_spawn, which glibc makes with clone3 and then clone, still work.
 * First the same uid, unfiltered, must be able to make one: a host that
 * refuses it anyway cannot show the filter at work, and skips.
 * uid block: base 9730000 (domids 1..9).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_spawn.h"

#define BASE 9730000ul

typedef struct {
    xlrt_sfix s;
    char *maker;
} fixture;

static bool userns_allowed(uid_t uid)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        if (xlrt_become(uid, uid) < 0)
            _exit(2);
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        _exit(unshare(CLONE_NEWUSER) < 0 ? 1 : 0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
    return WEXITSTATUS(status) == 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    xlrt_sfix_setup(&f->s);
    assert_int_equal(chmod(f->s.dir, 0755), 0);
    f->maker = xlrt_prog("userns_maker");
    xlrt_sfix_conf(&f->s, BASE, f->maker, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlrt_sfix_teardown(&f->s);
    free(f->maker);
    free(f);
    return 0;
}

static const xlrt_attempt attempts[] = {
    { "unshare-newuser", "EPERM" },
    { "clone-newuser", "EPERM" },
    { "clone3-newuser", "ENOSYS" },
    { "clone3-plain", "ENOSYS" },
    { "setns-user", "EPERM" },
    { "setns-any", "EPERM" },
    /* What QEMU does with the same calls. */
    { "clone-plain", "0" },
    { "fork", "0" },
    { "pthread_create", "0" },
    { "posix_spawn", "0" },
};
#define NUM_ATTEMPTS (sizeof(attempts) / sizeof(attempts[0]))

/* Exec mode: `xl-reaper spawn` execs the DM in place as domid 1's uid,
 * which is not chrooted (no chroot in exec mode by default). */
static void test_exec_mode_no_userns(void **state)
{
    fixture *f = *state;
    char *out;

    if (!userns_allowed((uid_t)(BASE + 1))) {
        print_message("[  SKIPPED ] the host refuses an unprivileged user "
                      "namespace anyway (user.max_user_namespaces, "
                      "kernel.unprivileged_userns_clone): nothing for "
                      "the filter to refuse\n");
        skip();
    }
    out = xlrt_spawn_cli_report(&f->s, 1, f->maker);
    xlrt_expect_attempts(out, attempts, NUM_ATTEMPTS);
    free(out);
}

/* Runas mode: QEMU is root when it execs, and still may not. */
static void test_runas_mode_no_userns(void **state)
{
    fixture *f = *state;
    char *out = xlrt_runas_report(&f->s, BASE, f->maker, 2);

    xlrt_expect_attempts(out, attempts, NUM_ATTEMPTS);
    free(out);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_exec_mode_no_userns),
        T(test_runas_mode_no_userns),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
