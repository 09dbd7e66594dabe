/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_reap_fuse.c - a DM that makes itself unkillable through FUSE
 * (tests/progs/fuse_stuck.c: a user and mount namespace of its own,
 * FUSE served by one thread, a request read and never answered while
 * another thread waits on it) is killed and verified empty within
 * reap_timeout_ms, by aborting its FUSE connection (xlreaper_fuse.c);
 * `xl-reaper spawn --reap-stale` then starts a DM in its uid.  A DM task
 * stuck on a FUSE connection that is not the DM's (root's) cannot be
 * ended: the reap says "stuck", exit 5, with the task and its wchan,
 * at reap_timeout_ms, never "empty" and never a hang; the audit (no
 * domain live) says "stuck" of it too, with the task and its wchan.
 *
 * The adversary is started as the DM uid directly, not through the
 * spawn: the spawn's seccomp filter now refuses it the user namespace
 * (test_spawn_userns.c); this is the DM that was started elsewhere.
 * The host's /dev/fuse is left alone (on a test host it may be 0600):
 * the test makes its own 0666 node (c 10 229) in a directory of its
 * own.  Teardown aborts whatever connection the test made that is still
 * there, kills what is left of the uid and waits for the kernel to
 * count it empty, so that no stuck task outlives the test.
 * uid block: base 9740000 (domids 1..9).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"
#include "xlrt_caps.h"
#include "xlrt_spawn.h"

#define BASE 9740000ul
/* The stuck case's reap_timeout_ms: short, it is waited out in full. */
#define SHORT_REAP_MS 1000u
/* How long the adversary may take to be in place. */
#define READY_MS 5000

typedef struct {
    char *dir;
    char dev[4200], mnt[4200];
    char *conf, *conf_short;
    pid_t nursery;    /* the userns adversary's, or 0 */
    pid_t root_dm;    /* the root-served adversary, our child, or 0 */
    int out;          /* the adversary's stdout */
    unsigned conn;    /* its connection under fusectl, or 0 */
    pid_t waiter;     /* its waiting task */
    uid_t uid;        /* the DM uid in use, or 0 */
    char cannot[512]; /* why this host cannot make the attack, or "" */
} fixture;

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---------- cleanup, without the code under test ---------- */

/* Aborts every connection owned by uid, and conn, through fusectl
 * mounted in a mount namespace of a child of ours. */
static void abort_conns(uid_t uid, unsigned conn)
{
    pid_t pid = fork();

    if (pid < 0)
        return;
    if (pid == 0) {
        DIR *d;
        struct dirent *de;

        if (unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL) <
                0 ||
            !(d = opendir("/sys/fs/fuse/connections")))
            _exit(1);
        while ((de = readdir(d))) {
            char path[512];
            struct stat st;
            int fd;

            if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
                fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
                (st.st_uid != uid && strtoul(de->d_name, NULL, 10) != conn))
                continue;
            snprintf(path, sizeof(path), "%s/abort", de->d_name);
            fd = openat(dirfd(d), path, O_WRONLY | O_CLOEXEC);
            if (fd >= 0) {
                if (write(fd, "1", 1) != 1)
                    fprintf(stderr, "abort %s: %s\n", path, strerror(errno));
                close(fd);
            }
        }
        closedir(d);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

/* kill(-1, SIGKILL) as uid, from a child that takes it. */
static void kill_uid(uid_t uid)
{
    pid_t pid = fork();

    if (pid < 0)
        return;
    if (pid == 0) {
        if (syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, uid, uid, uid) ||
            syscall(SYS_setresuid, uid, uid, uid))
            _exit(1);
        kill(-1, SIGKILL);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

/* ---------- the adversary ---------- */

typedef struct {
    uid_t uid;
    int out;
    const char *prog, *dev, *mnt;
} adv_args;

/* In the nursery: the DM, as the uid, with no filter at all. */
static void adversary_userns(void *arg)
{
    const adv_args *a = arg;

    if (dup2(a->out, 1) < 0 || syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, a->uid, a->uid, a->uid) ||
        syscall(SYS_setresuid, a->uid, a->uid, a->uid))
        _exit(1);
    execl(a->prog, a->prog, "userns", a->dev, a->mnt, (char *)NULL);
    _exit(127);
}

/* Reads the adversary's lines until "stuck"; skips when it cannot. */
static void await_stuck(fixture *f)
{
    char buf[1024];
    size_t got = 0;
    uint64_t end = now_ms() + READY_MS;

    for (;;) {
        struct pollfd p = { .fd = f->out, .events = POLLIN };
        const char *l;
        ssize_t n;
        uint64_t now = now_ms();

        if (now >= end)
            fail_msg("the adversary never said \"stuck\"; it said:\n%.*s",
                     (int)got, buf);
        if (poll(&p, 1, (int)(end - now)) <= 0)
            continue;
        n = read(f->out, buf + got, sizeof(buf) - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
        if ((l = strstr(buf, "conn=")))
            f->conn = (unsigned)strtoul(l + 5, NULL, 10);
        if ((l = strstr(buf, "waiter=")))
            f->waiter = (pid_t)strtol(l + 7, NULL, 10);
        if (strstr(buf, "stuck\n"))
            return;
        if ((l = strstr(buf, "cannot=")) && strchr(l, '\n')) {
            print_message("[  SKIPPED ] this host cannot make the attack: "
                          "%s",
                          l + 7);
            skip();
        }
    }
    buf[got] = '\0';
    if (strstr(buf, "cannot=")) {
        print_message("[  SKIPPED ] this host cannot make the attack: %s",
                      strstr(buf, "cannot=") + 7);
        skip();
    }
    fail_msg("the adversary ended before it was stuck; it said:\n%s", buf);
}

/* A host without FUSE skips, with the reason. */
static void need_fuse(const fixture *f)
{
    if (!f->cannot[0])
        return;
    print_message("[  SKIPPED ] %s\n", f->cannot);
    skip();
}

static void start_userns_dm(fixture *f, uint32_t domid)
{
    static adv_args a;
    static char *prog;
    int p[2];

    need_fuse(f);
    if (!prog)
        prog = xlrt_prog("fuse_stuck");
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    a = (adv_args){ .uid = (uid_t)(BASE + domid),
                    .out = p[1],
                    .prog = prog,
                    .dev = f->dev,
                    .mnt = f->mnt };
    f->uid = a.uid;
    f->nursery = xlrt_nursery_start(adversary_userns, &a);
    close(p[1]);
    f->out = p[0];
    await_stuck(f);
}

static void start_root_dm(fixture *f, uint32_t domid)
{
    char *prog, uid[32];
    int p[2];

    need_fuse(f);
    prog = xlrt_prog("fuse_stuck");
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    snprintf(uid, sizeof(uid), "%lu", BASE + domid);
    f->uid = (uid_t)(BASE + domid);
    f->root_dm = fork();
    assert_true(f->root_dm >= 0);
    if (f->root_dm == 0) {
        if (dup2(p[1], 1) < 0)
            _exit(1);
        execl(prog, prog, "root", f->dev, f->mnt, uid, (char *)NULL);
        _exit(127);
    }
    free(prog);
    close(p[1]);
    f->out = p[0];
    await_stuck(f);
}

/* ---------- fixture ---------- */

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *text;
    int fd;

    assert_non_null(f);
    f->out = -1;
    f->dir = xlrt_tmpdir();
    assert_int_equal(chmod(f->dir, 0755), 0);
    snprintf(f->dev, sizeof(f->dev), "%s/fuse", f->dir);
    snprintf(f->mnt, sizeof(f->mnt), "%s/mnt", f->dir);
    assert_int_equal(mkdir(f->mnt, 0755), 0);
    /* Our own node: the host's /dev/fuse is not ours to change. */
    if (mknod(f->dev, S_IFCHR | 0666, makedev(10, 229)) < 0) {
        snprintf(f->cannot, sizeof(f->cannot),
                 "cannot make a fuse device node in %s: %s", f->dir,
                 strerror(errno));
    } else {
        assert_int_equal(chmod(f->dev, 0666), 0);
        fd = open(f->dev, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            snprintf(f->cannot, sizeof(f->cannot),
                     "no FUSE in this kernel (open of a 10:229 node: %s)",
                     strerror(errno));
        else
            close(fd);
    }
    assert_true(asprintf(&text,
                         "dm_uid_base = %lu\n"
                         "lock_file = \"%s/lock\"\n",
                         BASE, f->dir) > 0);
    f->conf = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
    assert_true(asprintf(&text,
                         "dm_uid_base = %lu\n"
                         "lock_file = \"%s/lock\"\n"
                         "reap_timeout_ms = %u\n",
                         BASE, f->dir, SHORT_REAP_MS) > 0);
    f->conf_short = xlrt_write_file(f->dir, "short.conf", text);
    free(text);
    xlrt_capture_reset();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    /* Whatever the code under test left: no stuck task survives us. */
    if (f->uid)
        abort_conns(f->uid, f->conn);
    if (f->root_dm > 0) {
        kill(f->root_dm, SIGKILL); /* our child: the root server */
        waitpid(f->root_dm, NULL, 0);
    }
    if (f->uid) {
        kill_uid(f->uid);
        if (xlrt_kernel_count_settled(f->uid, 5000) != 0)
            print_message("teardown: uid %lu still has tasks\n",
                          (unsigned long)f->uid);
    }
    xlrt_nursery_stop(f->nursery);
    if (f->out >= 0)
        close(f->out);
    xlrt_tmpdir_remove(f->dir);
    free(f->conf);
    free(f->conf_short);
    free(f);
    return 0;
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The waiter is in D state with SIGKILL pending after a kill by the
 * old reap; before any kill, only asleep on its request. */
static void expect_waiting(const fixture *f)
{
    char path[64], wchan[64] = "";
    int fd;
    ssize_t n;

    /* The server may read the request a moment before the waiter
     * goes to sleep on it. */
    snprintf(path, sizeof(path), "/proc/%ld/wchan", (long)f->waiter);
    for (int i = 0; i < 200; i++) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, wchan, sizeof(wchan) - 1);
        close(fd);
        wchan[n > 0 ? n : 0] = '\0';
        if (!strcmp(wchan, "request_wait_answer"))
            break;
        usleep(10000);
    }
    if (strcmp(wchan, "request_wait_answer"))
        fail_msg("the waiter %ld waits at \"%s\", not on its FUSE request",
                 (long)f->waiter, wchan);
}

/* ---------- the tests ---------- */

/* The library, as a spawn calls it (wait for "empty"): verified empty
 * within reap_timeout_ms, the DM's connection aborted. */
static void test_fuse_stuck_dm_verified_empty(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    const xlreaper_config *cfg = xlreaper_config_get(ctx);
    xlreaper_reap_result res;
    int rc;

    start_userns_dm(f, 1);
    expect_waiting(f);
    xlreaper_reap_result_init(&res);
    rc = xlreaper_reap_flags(ctx, NULL, 1, XLREAPER_REAP_WAIT_EMPTY, &res);
    if (rc || res.outcome != XLREAPER_OUTCOME_EMPTY) {
        char *d = xlreaper_reap_result_describe(&res);

        fail_msg("reap: rc %d, %s\n%s", rc, d ? d : "?", xlrt_captured());
    }
    assert_true(res.fuse_aborted >= 1);
    if (res.duration_us >= (uint64_t)cfg->reap_timeout_ms * 1000u)
        fail_msg("verified empty only after %llu us (reap_timeout_ms %u)",
                 (unsigned long long)res.duration_us, cfg->reap_timeout_ms);
    /* Ours, not the library's word. */
    assert_int_equal(xlrt_kernel_count(f->uid), 0);
    xlreaper_reap_result_dispose(&res);
    xlreaper_ctx_free(ctx);
}

/* ---------- under xl-reaperd's unit ---------- */

/* What the unit's RestrictNamespaces= and SystemCallFilter= (no @mount)
 * do to the FUSE helper's fallback: unshare and mount fail with EPERM,
 * as SystemCallErrorNumber= says.  0, or -1. */
static int unit_seccomp(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* The reap as the daemon makes it, in a child of ours with the
 * capabilities in keep (the unit's, or fewer), in a mount namespace of
 * its own where fusectl is mounted (as systemd and the unit's
 * sys-fs-fuse-connections.mount do on a host) or not, and with the unit's refusal of
 * unshare and mount or without it (a hook's `xl-reaper destroy` with
 * the same capabilities).  The child writes its outcome, fuse_aborted,
 * duration and the log. */
typedef struct {
    int outcome, rc;
    unsigned aborted;
    uint64_t duration_us;
    char log[3000];
} unit_reap;

static void reap_under_caps(const fixture *f, const char *extra,
                            uint32_t domid, uint64_t keep, bool host_fusectl,
                            bool filter, unit_reap *r)
{
    int p[2];
    pid_t pid;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unit_reap out = { .outcome = -1, .rc = -1 };
        xlreaper_reap_result res;
        xlreaper_ctx *ctx;

        close(p[0]);
        if (unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            _exit(2);
        umount2("/sys/fs/fuse/connections", MNT_DETACH); /* if any */
        if (host_fusectl && mount("fusectl", "/sys/fs/fuse/connections",
                                  "fusectl", 0, NULL) < 0)
            _exit(3);
        if (xlrt_caps_only(keep) < 0)
            _exit(4);
        if (filter && unit_seccomp() < 0)
            _exit(5);
        ctx = xlrt_spawn_ctx(f->dir, BASE, extra);
        xlreaper_reap_result_init(&res);
        out.rc = xlreaper_reap_flags(ctx, NULL, domid,
                                     XLREAPER_REAP_WAIT_EMPTY, &res);
        out.outcome = (int)res.outcome;
        out.aborted = res.fuse_aborted;
        out.duration_us = res.duration_us;
        snprintf(out.log, sizeof(out.log), "%s", xlrt_captured());
        if (write(p[1], &out, sizeof(out)) != (ssize_t)sizeof(out))
            _exit(6);
        _exit(0);
    }
    close(p[1]);
    memset(r, 0, sizeof(*r));
    ssize_t n = read(p[0], r, sizeof(*r));
    int status;

    close(p[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (n != (ssize_t)sizeof(*r))
        fail_msg("the reaping child ended with status 0x%x, no result",
                 status);
}

/* The unit's set, which must keep CAP_SYS_ADMIN (the one exemption
 * from fs.file-max, docs/facts.md F20). */
static uint64_t unit_set(void)
{
    uint64_t keep = xlrt_unit_caps();

    if (!keep || !(keep & (1ull << CAP_SYS_ADMIN)))
        fail_msg("config/xl-reaperd.service: no CapabilityBoundingSet= this "
                 "test can read, or one without CAP_SYS_ADMIN (%#llx)",
                 (unsigned long long)keep);
    return keep;
}

/* Verified empty within reap_timeout_ms, the connection aborted. */
static void expect_unit_empty(const fixture *f, const unit_reap *r,
                              const char *how)
{
    if (r->rc || r->outcome != XLREAPER_OUTCOME_EMPTY || r->aborted < 1)
        fail_msg("%s: rc %d, outcome %d, %u aborted; log:\n%s", how, r->rc,
                 r->outcome, r->aborted, r->log);
    if (r->duration_us >= 5000u * 1000u)
        fail_msg("%s: verified empty only after %llu us", how,
                 (unsigned long long)r->duration_us);
    assert_int_equal(xlrt_kernel_count(f->uid), 0);
}

/* "stuck", never "empty", at reap_timeout_ms, and the log says what to
 * mount. */
static void expect_unit_stuck(const unit_reap *r, const char *how)
{
    if (r->outcome != XLREAPER_OUTCOME_STUCK || r->aborted)
        fail_msg("%s: rc %d, outcome %d, %u aborted; log:\n%s", how, r->rc,
                 r->outcome, r->aborted, r->log);
    if (!strstr(r->log,
                "fusectl is not mounted on /sys/fs/fuse/connections") ||
        !strstr(r->log, "no CAP_SYS_ADMIN"))
        fail_msg("%s: the log does not say what to mount:\n%s", how, r->log);
    if (r->duration_us > (SHORT_REAP_MS + 2000u) * 1000u)
        fail_msg("%s: stuck said after %llu us (reap_timeout_ms %u)", how,
                 (unsigned long long)r->duration_us, SHORT_REAP_MS);
}

/* Under the unit, fusectl mounted on the host (by the mount unit it
 * by nothing else): the abort files are the DM uid's own, opened with
 * that fsuid; verified empty within reap_timeout_ms. */
static void test_fuse_stuck_unit_caps_host_fusectl(void **state)
{
    fixture *f = *state;
    unit_reap r;

    start_userns_dm(f, 5);
    expect_waiting(f);
    reap_under_caps(f, NULL, 5, unit_set(), true, true, &r);
    expect_unit_empty(f, &r, "under the unit, fusectl mounted");
}

/* The unit's capabilities without its system call filter, and no
 * fusectl mount anywhere: `xl-reaper destroy` from a hook with the
 * unit's set mounts its own in a private namespace (CAP_SYS_ADMIN). */
static void test_fuse_stuck_unit_caps_no_fusectl(void **state)
{
    fixture *f = *state;
    unit_reap r;

    start_userns_dm(f, 6);
    expect_waiting(f);
    reap_under_caps(f, NULL, 6, unit_set(), false, false, &r);
    expect_unit_empty(f, &r, "the unit's set, no fusectl mount");
}

/* The unit itself, no fusectl mount: its filter refuses the private
 * mount (it has systemd mount the host's instead), so "stuck",
 * said clearly, never a kill of the daemon and never "empty". */
static void test_fuse_stuck_unit_filter_no_fusectl(void **state)
{
    fixture *f = *state;
    unit_reap r;

    start_userns_dm(f, 7);
    expect_waiting(f);
    reap_under_caps(f, "reap_timeout_ms = 1000\n", 7, unit_set(), false, true,
                    &r);
    expect_unit_stuck(&r, "under the unit's filter, no fusectl mount");
}

/* Without CAP_SYS_ADMIN (a hook with less than the unit's set), no
 * fusectl mount: the same clear "stuck". */
static void test_fuse_stuck_no_sys_admin_no_fusectl(void **state)
{
    fixture *f = *state;
    unit_reap r;

    start_userns_dm(f, 8);
    expect_waiting(f);
    reap_under_caps(f, "reap_timeout_ms = 1000\n", 8,
                    unit_set() & ~(1ull << CAP_SYS_ADMIN), false, false, &r);
    expect_unit_stuck(&r, "without CAP_SYS_ADMIN, no fusectl mount");
}

/* The CLI: spawn --reap-stale starts a DM in the uid of a stuck one. */
static void test_spawn_reap_stale_after_fuse_stuck(void **state)
{
    fixture *f = *state;
    char cli[4096];
    char *probe = xlrt_prog("spawn_probe");
    char *out = NULL, *err = NULL;
    uint64_t t0;
    int status;

    start_userns_dm(f, 2);
    snprintf(cli, sizeof(cli), "%s/bin/xl-reaper", xlrt_build_dir());
    char *argv[] = { cli, "--config", f->conf, "spawn", "--reap-stale",
                     "2", "--",       probe,   "true",  NULL };
    t0 = now_ms();
    status = xlrt_run(argv, &out, &err);
    if (exit_code(status) != 0)
        fail_msg("spawn --reap-stale exit %d after %llu ms; stderr:\n%s",
                 exit_code(status), (unsigned long long)(now_ms() - t0), err);
    if (!strstr(err, "aborted 1 FUSE connection"))
        fail_msg("spawn does not say it aborted the connection:\n%s", err);
    free(out);
    free(err);
    free(probe);
}

/* A wait the reap cannot end: "stuck", exit 5, the task and its wchan,
 * after reap_timeout_ms and not much later. */
static void test_foreign_fuse_wait_is_stuck(void **state)
{
    fixture *f = *state;
    char cli[4096], pid[160];
    char *out = NULL, *err = NULL;
    uint64_t t0, took;
    int status;

    start_root_dm(f, 3);
    expect_waiting(f);
    snprintf(cli, sizeof(cli), "%s/bin/xl-reaper", xlrt_build_dir());
    char *argv[] = { cli,    "--config", f->conf_short, "--json",
                     "kill", "3",        NULL };
    t0 = now_ms();
    status = xlrt_run(argv, &out, &err);
    took = now_ms() - t0;
    if (exit_code(status) != 5)
        fail_msg("kill exit %d, want 5 (stuck); stdout:\n%s\nstderr:\n%s",
                 exit_code(status), out, err);
    snprintf(pid, sizeof(pid), "\"pid\":%ld", (long)f->waiter);
    if (!strstr(out, "\"outcome\":\"stuck\"") || !strstr(out, pid) ||
        !strstr(out, "\"wchan\":\"request_wait_answer\"") ||
        !strstr(out, "\"fuse_aborted\":0"))
        fail_msg("the event does not say stuck, pid %ld at "
                 "request_wait_answer, nothing aborted:\n%s",
                 (long)f->waiter, out);
    if (took > SHORT_REAP_MS + 2000)
        fail_msg("stuck said after %llu ms (reap_timeout_ms %u)",
                 (unsigned long long)took, SHORT_REAP_MS);
    free(out);
    free(err);
    /* The line for people names it too. */
    char *argv2[] = { cli, "--config", f->conf_short, "kill", "3", NULL };
    status = xlrt_run(argv2, &out, &err);
    assert_int_equal(exit_code(status), 5);
    snprintf(pid, sizeof(pid),
             "pid %ld (fuse_stuck) in D state at "
             "request_wait_answer with SIGKILL pending",
             (long)f->waiter);
    if (!strstr(out, pid))
        fail_msg("the line lacks \"%s\":\n%s", pid, out);
    free(out);
    free(err);
}

/* No domain is live: every DM uid is a dead domain's. */
static int hook_no_live(void *opaque, uint32_t **domids_r, unsigned *num_r)
{
    (void)opaque;
    *domids_r = calloc(1, sizeof(uint32_t));
    *num_r = 0;
    return *domids_r ? 0 : XLREAPER_ERROR_NOMEM;
}

/* True once tid is in D state with SIGKILL pending (SigPnd or ShdPnd
 * has bit 8, signal 9). */
static bool killed_in_d(pid_t tid)
{
    char path[64], buf[4096];
    const char *l;
    bool d = false, pending = false;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    if ((l = strstr(buf, "\nState:\t")))
        d = l[8] == 'D';
    for (const char *k = buf; (k = strstr(k, "Pnd:\t")); k += 5)
        pending |= (strtoull(k + 5, NULL, 16) & (1ull << 8)) != 0;
    return d && pending;
}

/* The audit, with no domain live, names the killed task stuck on a FUSE
 * wait: a "stuck" line with its pid and wchan, besides the leftover. */
static void test_audit_says_stuck(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char walk[4300];
    const char *roots[2] = { walk, NULL };
    xlreaper__audit_hooks h;
    xlreaper_audit_opts o;
    xlreaper_audit_result res;
    const xlreaper_audit_check *stuck = NULL, *left = NULL;
    int i;

    start_root_dm(f, 4);
    expect_waiting(f);
    kill_uid(f->uid);
    for (i = 0; i < 200 && !killed_in_d(f->waiter); i++)
        usleep(10000);
    if (!killed_in_d(f->waiter))
        fail_msg("the waiter %ld is not in D state with SIGKILL pending",
                 (long)f->waiter);
    /* The set-id walk: an empty directory, not the FUSE mount. */
    snprintf(walk, sizeof(walk), "%s/walk", f->dir);
    assert_int_equal(mkdir(walk, 0755), 0);
    memset(&h, 0, sizeof(h));
    h.live_domids = hook_no_live;
    h.sweep_max_domid = 9;
    h.setid_roots = roots;
    xlreaper_audit_opts_init(&o);
    xlreaper_audit_result_init(&res);
    assert_int_equal(xlreaper__audit_run(ctx, &o, &h, &res), 0);
    for (unsigned k = 0; k < res.num; k++) {
        const xlreaper_audit_check *c = &res.checks[k];

        if (c->domid != 4)
            continue;
        if (!strcmp(c->name, "stuck"))
            stuck = c;
        if (!strcmp(c->name, "leftover"))
            left = c;
    }
    if (!left || left->status != XLREAPER_AUDIT_FAIL)
        fail_msg("no failed leftover line for domid 4");
    if (!stuck || stuck->status != XLREAPER_AUDIT_FAIL ||
        stuck->pid != f->waiter ||
        !strstr(stuck->reason, "at request_wait_answer"))
        fail_msg("no stuck line naming pid %ld at request_wait_answer: "
                 "%s",
                 (long)f->waiter, stuck ? stuck->reason : "(none)");
    xlreaper_audit_result_dispose(&res);
    xlreaper_ctx_free(ctx);
    rmdir(walk);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_fuse_stuck_dm_verified_empty),
        T(test_spawn_reap_stale_after_fuse_stuck),
        T(test_foreign_fuse_wait_is_stuck),
        T(test_audit_says_stuck),
        T(test_fuse_stuck_unit_caps_host_fusectl),
        T(test_fuse_stuck_unit_caps_no_fusectl),
        T(test_fuse_stuck_unit_filter_no_fusectl),
        T(test_fuse_stuck_no_sys_admin_no_fusectl),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
