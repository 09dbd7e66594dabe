/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_steps.c - a spawn step that fails is reported by the parent
 * with the step's name and the child's errno, through the report pipe,
 * and leaves nothing running.
 *
 * Real failures where the kernel can be made to fail (a chroot that
 * vanished after the plan, an execve of a file that is no program, or
 * that the DM uid may not execute, a kept descriptor closed after the
 * plan); -Wl,--wrap (tests/spawn/spawn.mk) for the system calls that
 * root cannot be made to fail.  The wraps fail only in the spawn child:
 * it is the only caller of sigprocmask in the library, which marks it.
 * uid block: base 4100000 (domids 31..70).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_spawn_internal.h"
#include "xlrt_spawn.h"

#define BASE 4100000ul

/* ---------- the wraps ---------- */

enum {
    W_NONE = 0,
    W_SETGROUPS,
    W_SETRESGID,
    W_RLIMIT,
    W_UNSHARE_NS,
    W_UNSHARE_NET,
    W_SETRESUID,
    W_SETRESUID_NOOP, /* "succeeds" without changing anything */
    W_NO_NEW_PRIVS,
    W_DUMPABLE,
    W_SETID_FILTER,
};

static pid_t suite_pid;
static int armed, armed_errno, armed_resource;
static int in_spawn_child;

#define FAIL_IF(w)                                                            \
    do {                                                                      \
        if (in_spawn_child && armed == (w)) {                                 \
            errno = armed_errno;                                              \
            return -1;                                                        \
        }                                                                     \
    } while (0)

int __real_sigprocmask(int how, const sigset_t *set, sigset_t *old);
int __wrap_sigprocmask(int how, const sigset_t *set, sigset_t *old);
int __wrap_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (how == SIG_SETMASK && getpid() != suite_pid)
        in_spawn_child = 1;
    return __real_sigprocmask(how, set, old);
}

int __real_xlreaper__sys_setgroups0(void);
int __wrap_xlreaper__sys_setgroups0(void);
int __wrap_xlreaper__sys_setgroups0(void)
{
    FAIL_IF(W_SETGROUPS);
    return __real_xlreaper__sys_setgroups0();
}

int __real_xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s);
int __wrap_xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s);
int __wrap_xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s)
{
    FAIL_IF(W_SETRESGID);
    return __real_xlreaper__sys_setresgid(r, e, s);
}

int __real_xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s);
int __wrap_xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s);
int __wrap_xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s)
{
    FAIL_IF(W_SETRESUID);
    if (in_spawn_child && armed == W_SETRESUID_NOOP)
        return 0;
    return __real_xlreaper__sys_setresuid(r, e, s);
}

int __real_setrlimit(__rlimit_resource_t r, const struct rlimit *rl);
int __wrap_setrlimit(__rlimit_resource_t r, const struct rlimit *rl);
int __wrap_setrlimit(__rlimit_resource_t r, const struct rlimit *rl)
{
    if ((int)r == armed_resource)
        FAIL_IF(W_RLIMIT);
    return __real_setrlimit(r, rl);
}

int __real_unshare(int flags);
int __wrap_unshare(int flags);
int __wrap_unshare(int flags)
{
    if (flags & CLONE_NEWNS)
        FAIL_IF(W_UNSHARE_NS);
    if (flags & CLONE_NEWNET)
        FAIL_IF(W_UNSHARE_NET);
    return __real_unshare(flags);
}

/* <sys/prctl.h> is not included: its prototype is variadic. */
#define PR_SET_DUMPABLE_ 4
#define PR_SET_NO_NEW_PRIVS_ 38
int __real_prctl(int option, ...);
int __wrap_prctl(int option, ...);
int __wrap_prctl(int option, ...)
{
    unsigned long a[4];
    va_list al;

    va_start(al, option);
    for (int i = 0; i < 4; i++)
        a[i] = va_arg(al, unsigned long);
    va_end(al);
    if (option == PR_SET_NO_NEW_PRIVS_)
        FAIL_IF(W_NO_NEW_PRIVS);
    if (option == PR_SET_DUMPABLE_)
        FAIL_IF(W_DUMPABLE);
    return __real_prctl(option, a[0], a[1], a[2], a[3]);
}

int __real_xlreaper__setid_filter_install(const xlreaper__setid_filter *f);
int __wrap_xlreaper__setid_filter_install(const xlreaper__setid_filter *f);
int __wrap_xlreaper__setid_filter_install(const xlreaper__setid_filter *f)
{
    FAIL_IF(W_SETID_FILTER);
    return __real_xlreaper__setid_filter_install(f);
}

/* The in-place test: at execve, is the reaper lock still held? */
static int lock_probe_fd = -1, lock_report_fd = -1;

int __real_execve(const char *path, char *const argv[], char *const envp[]);
int __wrap_execve(const char *path, char *const argv[], char *const envp[]);
int __wrap_execve(const char *path, char *const argv[], char *const envp[])
{
    if (lock_probe_fd >= 0 && strcmp(path, "/")) {
        /* Another open file description of the lock file: its flock
         * conflicts with the holder's. */
        int r = flock(lock_probe_fd, LOCK_EX | LOCK_NB);
        char c = r < 0 && errno == EWOULDBLOCK ? 'H' : 'F';
        if (write(lock_report_fd, &c, 1) != 1)
            _exit(90);
    }
    return __real_execve(path, argv, envp);
}

/* ---------- fixture ---------- */

typedef struct {
    char *dir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_int_equal(chmod(f->dir, 0755), 0); /* DM uids run from it */
    xlrt_capture_reset();
    armed = W_NONE;
    armed_resource = -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    armed = W_NONE;
    xlrt_tmpdir_remove(f->dir);
    free(f);
    return 0;
}

static void expect_logged(const char *want)
{
    if (!strstr(xlrt_captured(), want))
        fail_msg("log lacks '%s'; it has:\n%s", want, xlrt_captured());
}

/* Nothing of the uid survives a failed spawn: the child was reaped. */
static void expect_uid_empty(unsigned long uid)
{
    assert_int_equal(xlrt_kernel_count((uid_t)uid), 0);
}

/* ---------- injected failures, one per step ---------- */

static const struct {
    const char *name;
    const char *config;
    int wrap, err, resource;
    const char *logged; /* %lu: the DM uid */
} cases[] = {
    { "setgroups", NULL, W_SETGROUPS, EPERM, -1,
      "spawn domid %u: setgroups: Operation not permitted" },
    { "setresgid", NULL, W_SETRESGID, EINVAL, -1,
      "spawn domid %u: setresgid(%lu): Invalid argument" },
    { "nproc", NULL, W_RLIMIT, EPERM, RLIMIT_NPROC,
      "spawn domid %u: setrlimit(RLIMIT_NPROC, 256): Operation not "
      "permitted" },
    { "nofile", NULL, W_RLIMIT, EPERM, RLIMIT_NOFILE,
      "spawn domid %u: setrlimit(RLIMIT_NOFILE, 192): Operation not "
      "permitted" },
    { "fsize", NULL, W_RLIMIT, EINVAL, RLIMIT_FSIZE,
      "spawn domid %u: setrlimit(RLIMIT_FSIZE, 262144): Invalid argument" },
    { "core", NULL, W_RLIMIT, EINVAL, RLIMIT_CORE,
      "spawn domid %u: setrlimit(RLIMIT_CORE, 0): Invalid argument" },
    { "msgqueue", NULL, W_RLIMIT, EINVAL, RLIMIT_MSGQUEUE,
      "spawn domid %u: setrlimit(RLIMIT_MSGQUEUE, 0): Invalid argument" },
    { "locks", NULL, W_RLIMIT, EINVAL, RLIMIT_LOCKS,
      "spawn domid %u: setrlimit(RLIMIT_LOCKS, 0): Invalid argument" },
    { "memlock", NULL, W_RLIMIT, EINVAL, RLIMIT_MEMLOCK,
      "spawn domid %u: setrlimit(RLIMIT_MEMLOCK, 0): Invalid argument" },
    { "unshare ns", "unshare_ipc_mount = 1\n", W_UNSHARE_NS, ENOSPC, -1,
      "spawn domid %u: unshare(CLONE_NEWNS|CLONE_NEWIPC): No space left "
      "on device" },
    { "unshare net", "unshare_net = 1\n", W_UNSHARE_NET, EPERM, -1,
      "spawn domid %u: unshare(CLONE_NEWNET): Operation not permitted" },
    { "setresuid", NULL, W_SETRESUID, EAGAIN, -1,
      "spawn domid %u: setresuid(%lu): Resource temporarily unavailable" },
    { "setresuid no-op", NULL, W_SETRESUID_NOOP, 0, -1,
      "spawn domid %u: checking the ids set: Operation not permitted" },
    { "no_new_privs", NULL, W_NO_NEW_PRIVS, EINVAL, -1,
      "spawn domid %u: prctl(PR_SET_NO_NEW_PRIVS): Invalid argument" },
    { "dumpable", NULL, W_DUMPABLE, EINVAL, -1,
      "spawn domid %u: prctl(PR_SET_DUMPABLE): Invalid argument" },
    /* No DM runs without it (xlreaper_setid.c). */
    { "set-id filter", NULL, W_SETID_FILTER, EACCES, -1,
      "spawn domid %u: installing the set-id seccomp filter: Permission "
      "denied" },
};

static void test_injected_steps(void **state)
{
    fixture *f = *state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t domid = 31 + (uint32_t)i;
        xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, cases[i].config);
        char want[256];
        xlrt_probe p;
        int rc;

        /* The config file is rewritten for each case: same dir. */
        xlrt_capture_reset();
        armed = cases[i].wrap;
        armed_errno = cases[i].err;
        armed_resource = cases[i].resource;
        rc = xlrt_probe_spawn(ctx, domid, "wait", NULL, &p);
        armed = W_NONE;
        armed_resource = -1;
        if (rc != XLREAPER_ERROR_FAIL)
            fail_msg("%s: rc %d", cases[i].name, rc);
        snprintf(want, sizeof(want), cases[i].logged, domid, BASE + domid);
        expect_logged(want);
        expect_uid_empty(BASE + domid);
        xlreaper_ctx_free(ctx);
    }
}

/* ---------- real failures ---------- */

static void test_chroot_vanished(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char *prog = xlrt_prog("spawn_probe");
    char *argv[] = { prog, (char *)"true", NULL };
    xlreaper_spawn_plan *plan;
    char dir[4096], want[4200];
    pid_t pid;

    snprintf(dir, sizeof(dir), "%s/qemu-root-50", f->dir);
    assert_int_equal(mkdir(dir, 0), 0);
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 50, prog, argv, &plan), 0);
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(xlreaper_spawn(ctx, plan, 0, &pid, NULL),
                     XLREAPER_ERROR_FAIL);
    snprintf(want, sizeof(want),
             "spawn domid 50: chroot(%s): No such file or directory", dir);
    expect_logged(want);
    expect_uid_empty(BASE + 50);
    xlreaper_spawn_plan_free(plan);
    free(prog);
    xlreaper_ctx_free(ctx);
}

static void test_execve_not_a_program(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char *path = xlrt_write_file(f->dir, "garbage", "no ELF, no #!\n");
    char *argv[] = { path, NULL };
    xlreaper_spawn_plan *plan;
    char want[4200];
    pid_t pid;

    /* Executable by its mode: the plan's checks pass, the kernel says
     * no. */
    assert_int_equal(chmod(path, 0755), 0);
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 51, path, argv, &plan), 0);
    assert_int_equal(xlreaper_spawn(ctx, plan, 0, &pid, NULL),
                     XLREAPER_ERROR_FAIL);
    snprintf(want, sizeof(want),
             "spawn domid 51: execve(%s): Exec format error", path);
    expect_logged(want);
    expect_uid_empty(BASE + 51);
    xlreaper_spawn_plan_free(plan);
    free(path);
    xlreaper_ctx_free(ctx);
}

/* Root may run it, the DM uid may not: found only after setresuid. */
static void test_execve_denied_to_dm_uid(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char *prog = xlrt_prog("spawn_probe"), *cmd, sub[4096], copy[4200];
    char *argv[3];
    xlreaper_spawn_plan *plan;
    char want[4300];
    pid_t pid;

    snprintf(sub, sizeof(sub), "%s/root-only", f->dir);
    snprintf(copy, sizeof(copy), "%s/probe", sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_true(asprintf(&cmd, "cp %s %s", prog, copy) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    argv[0] = copy;
    argv[1] = (char *)"true";
    argv[2] = NULL;
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 52, copy, argv, &plan), 0);
    assert_int_equal(xlreaper_spawn(ctx, plan, 0, &pid, NULL),
                     XLREAPER_ERROR_FAIL);
    snprintf(want, sizeof(want),
             "spawn domid 52: execve(%s): Permission denied", copy);
    expect_logged(want);
    expect_uid_empty(BASE + 52);
    xlreaper_spawn_plan_free(plan);
    free(prog);
    xlreaper_ctx_free(ctx);
}

/* A descriptor the command line names, closed after the plan. */
static void test_kept_fd_closed(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char *prog = xlrt_prog("spawn_probe");
    char fdarg[32], want[128];
    char *argv[] = { prog, (char *)"true", (char *)"-add-fd", fdarg, NULL };
    xlreaper_spawn_plan *plan;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t pid;

    fd = fcntl(fd, F_DUPFD_CLOEXEC, 200); /* a number nothing reuses */
    assert_true(fd >= 200);
    snprintf(fdarg, sizeof(fdarg), "fd=%d,set=1", fd);
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 53, prog, argv, &plan), 0);
    close(fd);
    assert_int_equal(xlreaper_spawn(ctx, plan, 0, &pid, NULL),
                     XLREAPER_ERROR_FAIL);
    snprintf(want, sizeof(want),
             "spawn domid 53: keeping descriptor %d: Bad file descriptor", fd);
    expect_logged(want);
    xlreaper_spawn_plan_free(plan);

    /* Not open at plan time: refused before any process. */
    xlrt_capture_reset();
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 53, prog, argv, &plan),
                     XLREAPER_ERROR_INVAL);
    snprintf(want, sizeof(want), "names descriptor %d, which is not open", fd);
    expect_logged(want);
    free(prog);
    xlreaper_ctx_free(ctx);
}

/*
 * A uid range that overflows.  The config refuses one, so the test
 * forces it into the settings; the plan must still not hand out
 * (uid_t)-1 (setresuid's "unchanged", i.e. root) or a wrapped uid.
 */
static void test_uid_overflow_refused(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char *prog = xlrt_prog("spawn_probe");
    char *argv[] = { prog, (char *)"true", NULL };
    xlreaper_spawn_plan *plan = NULL;

    ctx->cfg->dm_uid_base = UINT32_MAX - 54; /* domid 54: uid -1 */
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 54, prog, argv, &plan),
                     XLREAPER_ERROR_INVAL);
    expect_logged("domid 54: device model ids 4294967295:4294967295 are "
                  "out of range");
    xlrt_capture_reset();
    /* domid 55: wraps to uid 0. */
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 55, prog, argv, &plan),
                     XLREAPER_ERROR_INVAL);
    expect_logged("domid 55: device model ids 0:0 are out of range");
    assert_null(plan);
    free(prog);
    xlreaper_ctx_free(ctx);
}

/* In place (the wrapper's way): the step is logged by the same process,
 * which then carries on to exit. */
static void test_in_place_failure(void **state)
{
    fixture *f = *state;
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
        char *path = xlrt_write_file(f->dir, "garbage2", "junk\n");
        char *argv[] = { path, NULL };
        xlreaper_spawn_plan *plan;
        char want[4200];
        int rc;

        chmod(path, 0755);
        if (xlreaper_spawn_plan_new(ctx, 56, path, argv, &plan))
            _exit(10);
        rc = xlreaper_spawn_exec(ctx, plan, 0);
        if (rc != XLREAPER_ERROR_FAIL)
            _exit(11);
        snprintf(want, sizeof(want),
                 "spawn domid 56: execve(%s): Exec format error", path);
        if (!strstr(xlrt_captured(), want))
            _exit(12);
        if (getuid() != BASE + 56) /* it was applied here */
            _exit(13);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* In place (the wrapper), the lock is held until the execve that makes
 * the DM: no reaper can kill the uid between the check and the birth. */
static void test_in_place_holds_lock_until_execve(void **state)
{
    fixture *f = *state;
    int rep[2], status;
    char c = '?';
    pid_t pid;

    assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
        char *prog = xlrt_prog("spawn_probe"), lockpath[4200];
        char a1[32], a2[32];
        char *argv[] = { prog, (char *)"true",    (char *)"-add-fd",
                         a1,   (char *)"-add-fd", a2,
                         NULL };
        xlreaper_spawn_plan *plan;

        snprintf(lockpath, sizeof(lockpath), "%s/lock", f->dir);
        lock_probe_fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        lock_report_fd = rep[1];
        snprintf(a1, sizeof(a1), "fd=%d,set=1", lock_probe_fd);
        snprintf(a2, sizeof(a2), "fd=%d,set=2", lock_report_fd);
        if (lock_probe_fd < 0 ||
            xlreaper_spawn_plan_new(ctx, 57, prog, argv, &plan))
            _exit(10);
        xlreaper_spawn_exec(ctx, plan, 0);
        _exit(11);
    }
    close(rep[1]);
    assert_int_equal(read(rep[0], &c, 1), 1);
    close(rep[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* the probe ran */
    assert_int_equal(c, 'H');
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_injected_steps),       T(test_chroot_vanished),
        T(test_execve_not_a_program), T(test_execve_denied_to_dm_uid),
        T(test_kept_fd_closed),       T(test_uid_overflow_refused),
        T(test_in_place_failure),     T(test_in_place_holds_lock_until_execve),
    };
#undef T
    suite_pid = getpid();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
