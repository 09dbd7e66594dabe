/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_no_pid.c - a DM that holds every free pid, and takes each one
 * freed, is still killed and verified empty: the kill needs no new task.
 *
 * The pids are exhausted inside a pid namespace of the test's own with
 * pid_max 400 (per pid namespace since Linux 6.14), so the host is not
 * touched: its init reaps orphans, a reaper process waits, and the DM (a
 * task of the uid without RLIMIT_NPROC, as stock libxl 4.20 starts it)
 * forks until no pid is left and keeps forking.  Then the reaper, inside
 * the namespace, reaps the uid: its clone fails with EAGAIN, and the
 * kill and its count are made from its own thread.
 *
 * uid block of this suite: 5500000 (base and pet) .. 5532751.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_rsuite.h"

#define BASE 5500000u
#define DOMID 11
#define NS_PID_MAX "400"

static struct {
    xlrt_rsuite r;
} S;

static int suite_setup(void **state)
{
    (void)state;
    xlrt_rsuite_setup(&S.r, BASE, "reap_timeout_ms = 5000\n");
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_rsuite_teardown(&S.r);
    return 0;
}

static long read_long(const char *path)
{
    char buf[32] = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t r;

    if (fd < 0)
        return -1;
    r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return r > 0 ? strtol(buf, NULL, 10) : -1;
}

static bool write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    bool ok;

    if (fd < 0)
        return false;
    ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
    close(fd);
    return ok;
}

/* The DM: forks until no pid is left, says so once, and goes on. */
static void __attribute__((noreturn)) exhaust(uid_t uid, int full_fd)
{
    struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
    bool said = false;

    setrlimit(RLIMIT_NPROC, &inf);
    if (syscall(SYS_setgroups, 0, NULL) < 0 ||
        syscall(SYS_setresgid, uid, uid, uid) < 0 ||
        syscall(SYS_setresuid, uid, uid, uid) < 0)
        _exit(2);
    for (;;) {
        pid_t p = fork();

        if (p == 0)
            for (;;)
                pause();
        if (p < 0 && !said) {
            said = write(full_fd, "F", 1) == 1;
            close(full_fd);
        }
    }
}

/* Outcome codes of the reaper inside the namespace. */
enum {
    NS_EMPTY = 0,
    NS_SETUP = 70,     /* the namespace could not be made: skip */
    NS_NOT_FULL,       /* the DM never ran out of pids */
    NS_NO_FALLBACK,    /* empty, but a task was created after all */
    NS_OUTCOME = 80,   /* + outcome: not empty */
    NS_RC = 100,       /* + -rc: the reap failed */
};

/* The reaper: waits for the DM to fill the pid space, then reaps. */
static int reaper(int full_fd)
{
    xlreaper_reap_result res;
    char c;
    int rc, ret;

    if (read(full_fd, &c, 1) != 1)
        return NS_NOT_FULL;
    usleep(100000); /* the DM grabs what its failed forks free */
    xlrt_capture_reset();
    xlreaper_reap_result_init(&res);
    /* Waiting for "empty": the first answer may be "zombies" while
     * this namespace's init still reaps the DM's 400 (a loaded host). */
    rc = xlreaper_reap_flags(S.r.ctx, NULL, DOMID, XLREAPER_REAP_WAIT_EMPTY,
                             &res);
    if (rc)
        ret = NS_RC - rc;
    else if (res.outcome != XLREAPER_OUTCOME_EMPTY)
        ret = NS_OUTCOME + (int)res.outcome;
    else if (!strstr(xlrt_captured(), "from this thread"))
        ret = NS_NO_FALLBACK;
    else
        ret = NS_EMPTY;
    if (ret)
        fprintf(stderr, "reap in the namespace: rc %d, outcome %d\n%s\n", rc,
                res.outcome, xlrt_captured());
    xlreaper_reap_result_dispose(&res);
    return ret;
}

/* PID 1 of the namespace: starts the reaper and the DM, reaps orphans,
 * and exits with the reaper's code. */
static int __attribute__((noreturn)) ns_init(void)
{
    int full[2], status = 0;
    pid_t r, e, w;

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              NULL) < 0 ||
        !write_str("/proc/sys/kernel/pid_max", NS_PID_MAX) ||
        read_long("/proc/sys/kernel/pid_max") != atol(NS_PID_MAX) ||
        pipe(full) < 0)
        _exit(NS_SETUP);
    r = fork();
    if (r == 0) {
        close(full[1]);
        _exit(reaper(full[0]));
    }
    e = fork();
    if (e == 0) {
        close(full[0]);
        exhaust(BASE + DOMID, full[1]);
    }
    close(full[0]);
    close(full[1]);
    if (r < 0 || e < 0)
        _exit(NS_SETUP);
    /* Orphans come here; the reaper's end is ours. */
    while ((w = waitpid(-1, &status, __WALL)) != r)
        if (w < 0)
            _exit(NS_SETUP);
    /* Whatever is left in the namespace dies with its init. */
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : NS_SETUP);
}

static void test_kill_without_a_free_pid(void **state)
{
    struct utsname u;
    unsigned major = 0, minor = 0;
    long host_max = read_long("/proc/sys/kernel/pid_max");
    pid_t p;
    int status, code;

    (void)state;
    /* Before 6.14 pid_max is the host's, whatever the namespace: never
     * written then. */
    if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2 ||
        major < 6 || (major == 6 && minor < 14))
        skip();
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        pid_t init;
        int st;

        if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
            _exit(NS_SETUP);
        init = fork();
        if (init == 0)
            ns_init();
        if (init < 0 || waitpid(init, &st, 0) != init)
            _exit(NS_SETUP);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : NS_SETUP);
    }
    assert_int_equal(waitpid(p, &status, 0), p);
    assert_int_equal(read_long("/proc/sys/kernel/pid_max"), host_max);
    assert_true(WIFEXITED(status));
    code = WEXITSTATUS(status);
    if (code == NS_SETUP)
        skip(); /* no pid namespace of our own here */
    if (code)
        fail_msg("the reap with no free pid ended with code %d (%s)", code,
                 code == NS_NOT_FULL      ? "the DM never filled the pids"
                 : code == NS_NO_FALLBACK ? "not killed from the thread"
                 : code >= NS_RC          ? "the reap failed"
                                          : "the uid is not empty");
    /* Verified from outside too: the kernel counts nothing of the uid. */
    assert_int_equal(xlrt_kernel_count(BASE + DOMID), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_without_a_free_pid),
    };

    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
