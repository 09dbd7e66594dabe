/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_restrict.c - every restriction of a spawn, read back from
 * the kernel: /proc/<pid>/status, limits, fd/, root, ns/ and cgroup of
 * a spawned probe (tests/progs/spawn_probe.c), plus the stale-task check
 * and the lock.  uid block: base 4000000 (domids 11..40).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "xlrt_spawn.h"

#define BASE 4000000ul

typedef xlrt_sfix fixture;

static void expect_field(pid_t pid, const char *field, const char *want)
{
    char *st = xlrt_proc_read(pid, "status");
    char *v;

    assert_non_null(st);
    v = xlrt_status_field(st, field);
    assert_non_null(v);
    if (strcmp(v, want))
        fail_msg("%s: '%s', want '%s'", field, v, want);
    free(v);
    free(st);
}

static void expect_limit(pid_t pid, const char *name, uint64_t want)
{
    uint64_t soft, hard;

    assert_int_equal(xlrt_limit(pid, name, &soft, &hard), 0);
    if (soft != want || hard != want)
        fail_msg("%s: %llu/%llu, want %llu", name, (unsigned long long)soft,
                 (unsigned long long)hard, (unsigned long long)want);
}

static void ids4(char *buf, size_t n, unsigned long id)
{
    snprintf(buf, n, "%lu\t%lu\t%lu\t%lu", id, id, id, id);
}

/* The descriptors /proc/<pid>/fd lists, as "0,1,2". */
static char *fd_list(pid_t pid)
{
    char *out = calloc(1, 4096);
    size_t n = 0;

    assert_non_null(out);
    for (int fd = 0; fd < 1024; fd++) {
        char path[64], t[256];
        snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)pid, fd);
        if (readlink(path, t, sizeof(t)) < 0)
            continue;
        n += (size_t)snprintf(out + n, 4096 - n, "%s%d", n ? "," : "", fd);
    }
    return out;
}

/* The "fds=" of a probe report. */
static char *report_fds(const char *report)
{
    const char *p = strstr(report, "fds=");

    assert_non_null(p);
    p += 4;
    return strndup(p, strcspn(p, " \n"));
}

/* ---------- exec mode: ids, groups, NoNewPrivs, capabilities ---------- */

static void test_exec_mode_ids(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    gid_t groups[] = { 1234, 5678 };
    xlrt_probe p;
    char want[128];
    int rc;

    /* A caller with supplementary groups (root has none here). */
    assert_int_equal(setgroups(2, groups), 0);
    rc = xlrt_probe_spawn(ctx, 11, "wait", NULL, &p);
    assert_int_equal(setgroups(0, NULL), 0);
    assert_int_equal(rc, 0);
    ids4(want, sizeof(want), BASE + 11);
    expect_field(p.pid, "Uid", want);
    expect_field(p.pid, "Gid", want);
    expect_field(p.pid, "Groups", "");
    expect_field(p.pid, "NoNewPrivs", "1");
    expect_field(p.pid, "CapEff", "0000000000000000");
    expect_field(p.pid, "CapPrm", "0000000000000000");
    /* Nothing masked, nothing ignored: the toolstack's state stays out. */
    expect_field(p.pid, "SigBlk", "0000000000000000");
    expect_field(p.pid, "SigIgn", "0000000000000000");
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/* The caller's ignored signal and blocked mask must not reach the DM. */
static void test_signals_reset(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    sigset_t set, oldset;
    xlrt_probe p;

    sigaction(SIGPIPE, &ign, &old);
    /* glibc's own signal (SIGCANCEL): its sigaction() refuses it, yet a
     * caller can inherit it ignored, as `make` passes it here. */
    struct {
        void (*h)(int);
        unsigned long f;
        void (*r)(void);
        uint64_t m;
    } kign = { SIG_IGN, 0, NULL, 0 }, kold;
    assert_int_equal(syscall(SYS_rt_sigaction, 32, &kign, &kold, 8), 0);
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &oldset);
    assert_int_equal(xlrt_probe_spawn(ctx, 12, "wait", NULL, &p), 0);
    sigprocmask(SIG_SETMASK, &oldset, NULL);
    sigaction(SIGPIPE, &old, NULL);
    syscall(SYS_rt_sigaction, 32, &kold, NULL, 8);
    expect_field(p.pid, "SigBlk", "0000000000000000");
    expect_field(p.pid, "SigIgn", "0000000000000000");
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/* ---------- rlimits ---------- */

static void test_limits_configured(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE,
                                       "nproc_limit = 77\n"
                                       "nofile_limit = 333\n"
                                       "fsize_limit = 123456\n"
                                       "core_limit = 4096\n"
                                       "msgqueue_limit = 8192\n"
                                       "locks_limit = 7\n"
                                       "memlock_limit = 65536\n");
    xlrt_probe p;

    assert_int_equal(xlrt_probe_spawn(ctx, 13, "wait", NULL, &p), 0);
    expect_limit(p.pid, "Max processes", 77);
    expect_limit(p.pid, "Max open files", 333);
    expect_limit(p.pid, "Max file size", 123456);
    expect_limit(p.pid, "Max core file size", 4096);
    expect_limit(p.pid, "Max msgqueue size", 8192);
    expect_limit(p.pid, "Max file locks", 7);
    expect_limit(p.pid, "Max locked memory", 65536);
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

static void test_limits_default(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    xlrt_probe p;

    assert_int_equal(xlrt_probe_spawn(ctx, 14, "wait", NULL, &p), 0);
    /* Upstream libxl_linux.c's values, and ours for NPROC and NOFILE. */
    expect_limit(p.pid, "Max processes", 256);
    expect_limit(p.pid, "Max open files", 192);
    expect_limit(p.pid, "Max file size", 256 * 1024);
    expect_limit(p.pid, "Max core file size", 0);
    expect_limit(p.pid, "Max msgqueue size", 0);
    expect_limit(p.pid, "Max file locks", 0);
    expect_limit(p.pid, "Max locked memory", 0);
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/*
 * libxl's preexec has set RLIMIT_FSIZE to 256 KiB as the hard limit
 * before it runs the wrapper; without CAP_SYS_RESOURCE a larger
 * fsize_limit cannot be set.  The spawn goes on with the inherited limit
 * and says so, rather than failing in the child.  Run in a child of the
 * test, which lowers its own limit and drops the capability as such a
 * host would have it; the child reports by exit status.
 */
static int clamp_child(const char *dir)
{
    struct __user_cap_header_struct hdr = { .version =
                                                _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct cd[2];
    struct rlimit libxl_fsize = { 256 * 1024, 256 * 1024 };
    uint64_t soft, hard;
    xlreaper_ctx *ctx;
    xlrt_probe p;
    int rc = 0;

    if (syscall(SYS_capget, &hdr, cd) < 0)
        return 10;
    cd[CAP_SYS_RESOURCE / 32].effective &= ~(1u << (CAP_SYS_RESOURCE % 32));
    if (syscall(SYS_capset, &hdr, cd) < 0)
        return 11;
    if (setrlimit(RLIMIT_FSIZE, &libxl_fsize) < 0)
        return 12;
    ctx = xlrt_spawn_ctx(dir, BASE, "fsize_limit = 67108864\n");
    if (!ctx)
        return 13;
    if (xlrt_probe_spawn(ctx, 17, "wait", NULL, &p) != 0)
        return 14;
    if (xlrt_limit(p.pid, "Max file size", &soft, &hard) < 0)
        rc = 15;
    else if (soft != 256 * 1024 || hard != 256 * 1024)
        rc = 16;
    /* The limits under the inherited ones stay as configured. */
    else if (xlrt_limit(p.pid, "Max open files", &soft, &hard) < 0 ||
             soft != 192 || hard != 192)
        rc = 17;
    else if (!strstr(xlrt_captured(),
                     "fsize_limit = 67108864 is above the inherited hard "
                     "RLIMIT_FSIZE of 262144") ||
             !strstr(xlrt_captured(), "lacks: 262144 applies"))
        rc = 18;
    if (rc)
        fprintf(stderr, "clamp_child: rc %d, log:\n%s\n", rc, xlrt_captured());
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
    return rc;
}

static void test_limits_clamped_to_inherited_hard(void **state)
{
    fixture *f = *state;
    pid_t pid;
    int st;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(clamp_child(f->dir));
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st))
        fail_msg("clamp_child failed with %d (see its stderr)",
                 WEXITSTATUS(st));
}

/* ---------- descriptors ---------- */

static void test_only_kept_fds(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    int leak = open("/dev/null", O_RDONLY);           /* no CLOEXEC */
    int leak2 = open(f->dir, O_RDONLY | O_DIRECTORY); /* no CLOEXEC */
    int cloexec = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int high = fcntl(leak, F_DUPFD, 300); /* above every kept one */
    char *inside, *outside, want[64];
    const char *kept_fd;
    xlrt_probe p;

    assert_true(leak > 2 && leak2 > 2 && cloexec > 2 && high >= 300);
    assert_int_equal(xlrt_probe_spawn(ctx, 15, "wait", NULL, &p), 0);
    /* Inside, before it closed it: 0-2 and the descriptor its command
     * line named (close-on-exec in the parent, so the spawn cleared
     * that), nothing else. */
    kept_fd = strstr(p.report, "arg=fd=");
    assert_non_null(kept_fd);
    snprintf(want, sizeof(want), "0,1,2,%d", atoi(kept_fd + 7));
    inside = report_fds(p.report);
    assert_string_equal(inside, want);
    /* Outside, after it closed it. */
    outside = fd_list(p.pid);
    assert_string_equal(outside, "0,1,2");
    free(inside);
    free(outside);
    xlrt_probe_stop(&p);
    close(leak);
    close(leak2);
    close(cloexec);
    close(high);
    xlreaper_ctx_free(ctx);
}

/* A caller with stdin closed: the DM gets /dev/null there, not some
 * descriptor of ours that took the number. */
static void test_closed_stdio_is_dev_null(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    int saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
    char path[64], target[256];
    xlrt_probe p;
    ssize_t n;
    int rc;

    assert_true(saved > 2);
    close(0);
    rc = xlrt_probe_spawn(ctx, 16, "wait", NULL, &p);
    dup2(saved, 0);
    close(saved);
    assert_int_equal(rc, 0);
    snprintf(path, sizeof(path), "/proc/%ld/fd/0", (long)p.pid);
    n = readlink(path, target, sizeof(target) - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_string_equal(target, "/dev/null");
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/*
 * A descriptor open to a Xen device without close-on-exec is reported,
 * by name, and does not reach the DM.  /dev/xen exists only on a Xen
 * host, so a child of the test makes one in a private mount namespace.
 */
static int xen_fd_child(const char *dir)
{
    xlreaper_ctx *ctx;
    xlrt_probe p;
    char want[160];
    int fd, rc;

    if (unshare(CLONE_NEWNS) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("xlr-test", "/dev", "tmpfs", 0, "mode=0755") < 0 ||
        mkdir("/dev/xen", 0755) < 0)
        return 10;
    fd = open("/dev/xen/privcmd", O_RDWR | O_CREAT, 0600); /* no CLOEXEC */
    if (fd < 0)
        return 11;
    ctx = xlrt_spawn_ctx(dir, BASE, NULL);
    rc = xlrt_probe_spawn(ctx, 17, "wait", NULL, &p);
    if (rc)
        return 12;
    snprintf(want, sizeof(want),
             "domid 17: descriptor %d is open to /dev/xen/privcmd without "
             "close-on-exec",
             fd);
    if (!strstr(xlrt_captured(), want)) {
        fprintf(stderr, "log lacks '%s':\n%s", want, xlrt_captured());
        rc = 13;
    }
    snprintf(want, sizeof(want), ",%d,", fd);
    if (strstr(p.report, want) || !strstr(p.report, "fds=0,1,2,")) {
        fprintf(stderr, "leaked: %s", p.report);
        rc = 14;
    }
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
    return rc;
}

static void test_xen_fd_reported(void **state)
{
    fixture *f = *state;
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(xen_fd_child(f->dir));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---------- chroot and namespaces ---------- */

static void test_chroot(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char dir[4096], got[4096];
    xlrt_probe p;
    char link[64];
    ssize_t n;

    /* As libxl makes it: root's, mode 0000. */
    snprintf(dir, sizeof(dir), "%s/qemu-root-18", f->dir);
    assert_int_equal(mkdir(dir, 0), 0);
    assert_int_equal(xlrt_probe_spawn(ctx, 18, "wait", NULL, &p), 0);
    assert_non_null(strstr(p.report, "pid="));
    snprintf(link, sizeof(link), "/proc/%ld/root", (long)p.pid);
    n = readlink(link, got, sizeof(got) - 1);
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, dir);
    snprintf(link, sizeof(link), "/proc/%ld/cwd", (long)p.pid);
    n = readlink(link, got, sizeof(got) - 1);
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, dir);
    xlrt_probe_stop(&p);

    /* Without the directory: no chroot. */
    assert_int_equal(rmdir(dir), 0);
    assert_int_equal(xlrt_probe_spawn(ctx, 18, "wait", NULL, &p), 0);
    snprintf(link, sizeof(link), "/proc/%ld/root", (long)p.pid);
    n = readlink(link, got, sizeof(got) - 1);
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, "/");
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/* A chroot a DM uid could write to is refused. */
static void test_chroot_writable_refused(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    char dir[4096];
    xlrt_probe p;

    snprintf(dir, sizeof(dir), "%s/qemu-root-19", f->dir);
    assert_int_equal(mkdir(dir, 0), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(xlrt_probe_spawn(ctx, 19, "wait", NULL, &p),
                     XLREAPER_ERROR_INVAL);
    assert_non_null(strstr(xlrt_captured(), "only writable by root"));
    xlreaper_ctx_free(ctx);
}

static bool same_ns(pid_t pid, const char *ns)
{
    char a[64], b[64], ta[64] = "", tb[64] = "";

    snprintf(a, sizeof(a), "/proc/self/ns/%s", ns);
    snprintf(b, sizeof(b), "/proc/%ld/ns/%s", (long)pid, ns);
    assert_true(readlink(a, ta, sizeof(ta) - 1) > 0);
    assert_true(readlink(b, tb, sizeof(tb) - 1) > 0);
    return !strcmp(ta, tb);
}

static void test_namespaces(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *off = xlrt_spawn_ctx(f->dir, BASE, NULL);
    xlreaper_ctx *on;
    xlrt_probe p;

    assert_int_equal(xlrt_probe_spawn(off, 20, "wait", NULL, &p), 0);
    assert_true(same_ns(p.pid, "mnt"));
    assert_true(same_ns(p.pid, "ipc"));
    assert_true(same_ns(p.pid, "net"));
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(off);

    on = xlrt_spawn_ctx(f->dir, BASE,
                        "unshare_ipc_mount = 1\nunshare_net = 1\n");
    assert_int_equal(xlrt_probe_spawn(on, 20, "wait", NULL, &p), 0);
    assert_false(same_ns(p.pid, "mnt"));
    assert_false(same_ns(p.pid, "ipc"));
    assert_false(same_ns(p.pid, "net"));
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(on);
}

/* ---------- dumpable: what the kernel keeps across execve ---------- */

/*
 * xlreaper_spawn_internal.h says: execve recomputes dumpability, so a
 * probe the DM uid can read is dumpable whatever was set before, and one
 * it can only execute (0711) is not.  This pins that claim to the kernel.
 */
static void test_dumpable_rule(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, "dumpable = 0\n");
    char *src = xlrt_prog("spawn_probe"), *cmd, copy[4096];
    xlreaper_spawn_plan *plan;
    char *argv[6], fdarg[32], buf[4096];
    int fds[2], status;
    pid_t pid;
    ssize_t n;

    xlrt_probe p;
    assert_int_equal(xlrt_probe_spawn(ctx, 21, "exit", NULL, &p), 0);
    assert_non_null(strstr(p.report, "dumpable=1"));
    xlrt_probe_stop(&p);

    snprintf(copy, sizeof(copy), "%s/probe-0711", f->dir);
    assert_true(asprintf(&cmd, "cp %s %s && chmod 0711 %s && chmod 0755 %s",
                         src, copy, copy, f->dir) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    snprintf(fdarg, sizeof(fdarg), "fd=%d,set=1", fds[1]);
    argv[0] = copy;
    argv[1] = (char *)"exit";
    argv[2] = (char *)"-add-fd";
    argv[3] = fdarg;
    argv[4] = NULL;
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 21, copy, argv, &plan), 0);
    assert_int_equal(xlreaper_spawn(ctx, plan, 0, &pid, NULL), 0);
    close(fds[1]);
    n = read(fds[0], buf, sizeof(buf) - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "dumpable=0"));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(fds[0]);
    xlreaper_spawn_plan_free(plan);
    free(src);
    xlreaper_ctx_free(ctx);
}

/* ---------- runas mode ---------- */

static void test_runas_mode(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE,
                                       "uid_switch = \"runas\"\n"
                                       "nproc_limit = 99\n");
    char ids[64], want[128];
    const char *extra[] = { "-runas", ids, NULL };
    xlrt_probe p;

    gid_t groups[] = { 1234 };
    int rc;

    snprintf(ids, sizeof(ids), "%lu:%lu", BASE + 22, BASE + 22);
    assert_int_equal(setgroups(1, groups), 0);
    rc = xlrt_probe_spawn(ctx, 22, "wait", extra, &p);
    assert_int_equal(setgroups(0, NULL), 0);
    assert_int_equal(rc, 0);
    /* Root still (QEMU switches itself), everything else applied. */
    expect_field(p.pid, "Uid", "0\t0\t0\t0");
    ids4(want, sizeof(want), BASE + 22);
    expect_field(p.pid, "Gid", want);
    expect_field(p.pid, "Groups", "");
    expect_field(p.pid, "NoNewPrivs", "1");
    expect_limit(p.pid, "Max processes", 99);
    expect_limit(p.pid, "Max file size", 256 * 1024);
    /* The command line unchanged: -runas was there and right. */
    assert_non_null(strstr(p.report, "argc=6\n"));
    snprintf(want, sizeof(want), "arg=-runas\narg=%s\n", ids);
    assert_non_null(strstr(p.report, want));
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/* ---------- cgroup v2 ---------- */

/* The first cgroup2 mount in mountinfo, malloc'd, or NULL. */
static char *cgroup2_mount(void)
{
    FILE *m = fopen("/proc/self/mountinfo", "re");
    char line[4096], *out = NULL;

    if (!m)
        return NULL;
    while (!out && fgets(line, sizeof(line), m)) {
        char *sep = strstr(line, " - cgroup2 ");
        char *f[6];
        int i = 0;
        if (!sep)
            continue;
        *sep = '\0';
        for (char *s = strtok(line, " "); s && i < 6; s = strtok(NULL, " "))
            f[i++] = s;
        if (i >= 5)
            out = strdup(f[4]);
    }
    fclose(m);
    return out;
}

/* dir/name as a string (malloc'd), or NULL. */
static char *xlrt_file_read_dir(const char *dir, const char *name)
{
    char path[4300], *buf = calloc(1, 4096);
    ssize_t n;
    int fd;

    assert_non_null(buf);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(buf);
        return NULL;
    }
    n = read(fd, buf, 4095);
    close(fd);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Whether the cgroup dir offers the memory controller to its children. */
static bool cg_offers_memory(const char *dir)
{
    char *text = xlrt_file_read_dir(dir, "cgroup.controllers");
    bool yes = false;

    if (text)
        for (char *t = strtok(text, " \n"); t; t = strtok(NULL, " \n"))
            yes |= !strcmp(t, "memory");
    free(text);
    return yes;
}

/*
 * A DM that allocates without end under dm_memory_max is OOM-killed
 * inside its own cgroup, and nothing else is: the test (its parent, at
 * the same oom_score_adj 0 or lower) lives, the cgroup's memory.events
 * counts one oom_kill, and memory.swap.max is 0.  Needs a cgroup2 mount
 * that offers the memory controller; a hybrid host (memory on v1, as
 * the machines this suite runs on) cannot show it.
 */
static void test_cgroup_memory_oom(void **state)
{
    static const char *const hog[] = { "-alloc", NULL };
    fixture *f = *state;
    char *mnt = cgroup2_mount(), parent[4096], extra[4200], dmdir[4200];
    char *v;
    xlreaper_ctx *ctx;
    xlreaper_reap_result res;
    xlrt_probe p;
    int st;

    if (!mnt)
        skip();
    snprintf(parent, sizeof(parent), "%s/xlr-spawn-oom-%ld", mnt,
             (long)getpid());
    assert_int_equal(mkdir(parent, 0755), 0);
    if (!cg_offers_memory(parent)) {
        fprintf(stderr,
                "no memory controller in cgroup2 at %s: a DM's "
                "OOM kill in its cgroup cannot be shown here\n",
                mnt);
        rmdir(parent);
        free(mnt);
        skip();
    }
    snprintf(dmdir, sizeof(dmdir), "%s/dm-31", parent);
    snprintf(extra, sizeof(extra),
             "cgroup_parent = \"%s\"\ndm_memory_max = 16777216\n", parent);
    ctx = xlrt_spawn_ctx(f->dir, BASE, extra);
    assert_int_equal(xlrt_probe_spawn(ctx, 31, "wait", hog, &p), 0);
    v = xlrt_file_read_dir(dmdir, "memory.max");
    assert_non_null(v);
    assert_string_equal(v, "16777216\n");
    free(v);
    v = xlrt_file_read_dir(dmdir, "memory.swap.max");
    if (v)
        assert_string_equal(v, "0\n");
    free(v);
    /* It allocates 1 MiB at a time, touched, for ever: the kernel's
     * OOM killer ends it within the cgroup (bounded: 30 s). */
    for (int i = 0;; i++) {
        siginfo_t si = { 0 };

        /* Not reaped (WNOWAIT): the pid stays ours for probe_stop. */
        assert_int_equal(
            waitid(P_PID, (id_t)p.pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
        if (si.si_pid == p.pid) {
            st = si.si_code == CLD_KILLED ? si.si_status : -1;
            break;
        }
        if (i == 3000)
            fail_msg("the DM outlived its memory.max for 30 s");
        usleep(10000);
    }
    assert_int_equal(st, SIGKILL);
    v = xlrt_file_read_dir(dmdir, "memory.events");
    assert_non_null(v);
    if (!strstr(v, "\noom_kill 1\n"))
        fail_msg("memory.events of %s:\n%s", dmdir, v);
    free(v);
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 31, &res), 0);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_EMPTY);
    xlreaper_reap_result_dispose(&res);
    xlrt_probe_stop(&p);
    assert_int_equal(rmdir(parent), 0);
    xlreaper_ctx_free(ctx);
    free(mnt);
}

static void test_cgroup(void **state)
{
    fixture *f = *state;
    char *mnt = cgroup2_mount(), parent[4096], extra[4200], want[4200];
    char dmdir[4200], *cg;
    xlreaper_ctx *ctx;
    xlrt_probe p;

    if (!mnt)
        skip();
    snprintf(parent, sizeof(parent), "%s/xlr-spawn-test-%ld", mnt,
             (long)getpid());
    assert_int_equal(mkdir(parent, 0755), 0);
    snprintf(dmdir, sizeof(dmdir), "%s/dm-23", parent);
    snprintf(extra, sizeof(extra), "cgroup_parent = \"%s\"\n", parent);
    ctx = xlrt_spawn_ctx(f->dir, BASE, extra);
    if (!cg_offers_memory(parent)) {
        struct stat sb;

        /* dm_memory_max (256 MiB by default) cannot be had here (a
         * hybrid host, memory on cgroup v1): refused, not run unbounded,
         * and nothing left behind. */
        xlrt_capture_reset();
        assert_int_equal(xlrt_probe_spawn(ctx, 23, "wait", NULL, &p),
                         XLREAPER_ERROR_INVAL);
        snprintf(want, sizeof(want),
                 "cgroup_parent %s has no memory controller (its "
                 "cgroup.controllers: \"",
                 parent);
        if (!strstr(xlrt_captured(), want) ||
            !strstr(xlrt_captured(), "or set dm_memory_max = 0"))
            fail_msg("want '%s' in:\n%s", want, xlrt_captured());
        assert_int_equal(stat(dmdir, &sb), -1);
        xlreaper_ctx_free(ctx);
        snprintf(extra, sizeof(extra),
                 "cgroup_parent = \"%s\"\ndm_memory_max = 0\n", parent);
        ctx = xlrt_spawn_ctx(f->dir, BASE, extra);
    }
    assert_int_equal(xlrt_probe_spawn(ctx, 23, "wait", NULL, &p), 0);
    if (cg_offers_memory(parent)) {
        char *v = xlrt_file_read_dir(dmdir, "memory.max");

        assert_non_null(v);
        assert_string_equal(v, "268435456\n");
        free(v);
    }
    cg = xlrt_proc_read(p.pid, "cgroup");
    assert_non_null(cg);
    snprintf(want, sizeof(want), "0::%s/dm-23\n", parent + strlen(mnt));
    if (!strstr(cg, want))
        fail_msg("cgroup '%s', want '%s'", cg, want);
    free(cg);
    xlrt_probe_stop(&p);

    /* A task left in the domain's cgroup (here a root sleeper: the uid
     * check does not see it) stops the next spawn. */
    pid_t sleeper = fork();
    assert_true(sleeper >= 0);
    if (sleeper == 0) {
        char procs[4300];
        snprintf(procs, sizeof(procs), "%s/cgroup.procs", dmdir);
        FILE *pf = fopen(procs, "w");
        if (!pf || fprintf(pf, "0") < 0 || fclose(pf))
            _exit(1);
        for (;;)
            pause();
    }
    for (int i = 0; i < 1000; i++) {
        char *c = xlrt_proc_read(sleeper, "cgroup");
        bool in = c && strstr(c, "/dm-23");
        free(c);
        if (in)
            break;
        usleep(1000);
    }
    xlrt_capture_reset();
    assert_int_equal(xlrt_probe_spawn(ctx, 23, "wait", NULL, &p),
                     XLREAPER_ERROR_BUSY);
    assert_non_null(strstr(xlrt_captured(), "still has tasks"));

    /* The reap kills the domain's cgroup first, a belt the uid kill does
     * not need (the root sleeper dies of it), and removes the cgroup once
     * the uid is empty. */
    xlreaper_reap_result res;
    struct stat sb;
    int st;

    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 23, &res), 0);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_EMPTY);
    xlreaper_reap_result_dispose(&res);
    assert_int_equal(waitpid(sleeper, &st, 0), sleeper);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    assert_int_equal(stat(dmdir, &sb), -1);
    assert_int_equal(errno, ENOENT);

    assert_int_equal(rmdir(parent), 0);
    xlreaper_ctx_free(ctx);
    free(mnt);
}

/* ---------- the OOM killer's choice ---------- */

static void expect_oom_adj(pid_t pid, const char *want)
{
    char *v = xlrt_proc_read(pid, "oom_score_adj");

    assert_non_null(v);
    if (strcmp(v, want))
        fail_msg("oom_score_adj '%s', want '%s'", v, want);
    free(v);
}

static bool have_sys_resource(void)
{
    struct __user_cap_header_struct hdr = { .version =
                                                _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct cd[2];

    assert_int_equal(syscall(SYS_capget, &hdr, cd), 0);
    return cd[CAP_SYS_RESOURCE / 32].effective &
           (1u << (CAP_SYS_RESOURCE % 32));
}

/*
 * The DM is raised to dm_oom_score_adj before its execve.  Written by a
 * task with CAP_SYS_RESOURCE, that is also its floor, which the DM (no
 * capability) may not go below; written without (root in a container,
 * as on the machines this suite runs on), the DM may lower it again to
 * what it inherited, and the spawn says so.  Raising needs nothing.
 */
static void test_oom_score_adj(void **state)
{
    static const char *const lower[] = { "-oom-write=999", NULL };
    static const char *const raise_lower[] = { "-oom-write=600",
                                               "-oom-write=499", NULL };
    fixture *f = *state;
    bool floor = have_sys_resource();
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    xlrt_probe p;

    xlrt_capture_reset();
    assert_int_equal(xlrt_probe_spawn(ctx, 29, "wait", NULL, &p), 0);
    expect_oom_adj(p.pid, "1000\n");
    xlrt_probe_stop(&p);
    assert_int_equal(xlrt_probe_spawn(ctx, 29, "wait", lower, &p), 0);
    if (floor) {
        expect_oom_adj(p.pid, "1000\n");
        if (!strstr(p.report, " oom-write=999:13 "))
            fail_msg("the DM lowered its oom_score_adj: %s", p.report);
        assert_null(strstr(xlrt_captured(), "CAP_SYS_RESOURCE"));
    } else {
        expect_oom_adj(p.pid, "999\n");
        if (!strstr(xlrt_captured(),
                    "lacks CAP_SYS_RESOURCE: the device model's "
                    "oom_score_adj is raised to 1000 (dm_oom_score_adj) "
                    "but is not its floor"))
            fail_msg("no word of the missing floor:\n%s", xlrt_captured());
    }
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);

    ctx = xlrt_spawn_ctx(f->dir, BASE, "dm_oom_score_adj = 500\n");
    assert_int_equal(xlrt_probe_spawn(ctx, 30, "wait", NULL, &p), 0);
    expect_oom_adj(p.pid, "500\n");
    xlrt_probe_stop(&p);
    assert_int_equal(xlrt_probe_spawn(ctx, 30, "wait", raise_lower, &p), 0);
    if (!strstr(p.report, floor ? " oom-write=600:0 oom-write=499:13 "
                                : " oom-write=600:0 oom-write=499:0 "))
        fail_msg("raise then lower: %s", p.report);
    expect_oom_adj(p.pid, floor ? "600\n" : "499\n");
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

static void test_cgroup_not_cgroup2_refused(void **state)
{
    fixture *f = *state;
    char extra[4200];
    xlreaper_ctx *ctx;
    xlrt_probe p;

    snprintf(extra, sizeof(extra), "cgroup_parent = \"%s\"\n", f->dir);
    ctx = xlrt_spawn_ctx(f->dir, BASE, extra);
    assert_int_equal(xlrt_probe_spawn(ctx, 24, "wait", NULL, &p),
                     XLREAPER_ERROR_INVAL);
    assert_non_null(strstr(xlrt_captured(), "not a directory of a cgroup2"));
    xlreaper_ctx_free(ctx);
}

/* ---------- stale tasks and the lock ---------- */

static void test_stale_refused(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    pid_t stale = f->bystander = xlrt_bystander_start(BASE + 25);
    xlrt_probe p;

    for (int i = 0; xlrt_kernel_count(BASE + 25) < 1; i++) {
        assert_true(i < 10000); /* it never took the uid */
        usleep(1000);
    }
    assert_int_equal(xlrt_probe_spawn(ctx, 25, "wait", NULL, &p),
                     XLREAPER_ERROR_BUSY);
    assert_non_null(strstr(xlrt_captured(), "domid 25: uid 4000025 still "
                                            "has tasks"));
    assert_true(xlrt_alive(stale)); /* refused, not reaped */
    xlrt_bystander_stop(stale);
    f->bystander = 0;
    xlreaper_ctx_free(ctx);
}

/* A zombie counts as much as a live task: the kernel still charges it
 * to the uid, and a domid reused now would share the uid with it. */
static void test_stale_zombie_refused(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, NULL);
    xlrt_probe p;
    int status;
    pid_t z = fork();

    assert_true(z >= 0);
    if (z == 0) {
        _exit(xlrt_become(BASE + 28, BASE + 28) < 0);
    }
    /* Exited, not reaped: wait for the zombie without reaping it. */
    siginfo_t si;
    assert_int_equal(waitid(P_PID, z, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(xlrt_kernel_count(BASE + 28), 1);
    assert_int_equal(xlrt_probe_spawn(ctx, 28, "wait", NULL, &p),
                     XLREAPER_ERROR_BUSY);
    assert_non_null(strstr(xlrt_captured(), "uid 4000028 still has tasks"));
    assert_int_equal(waitpid(z, &status, 0), z);
    assert_int_equal(xlrt_probe_spawn(ctx, 28, "wait", NULL, &p), 0);
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

/* A stale DM of domid 26, under a nursery that reaps it as soon as it
 * dies (as a healthy init would), and dies with the nursery. */
static void stale_dm(void *arg)
{
    uid_t u = (uid_t)(uintptr_t)arg;

    if (xlrt_become(u, u) < 0)
        _exit(1);
    /* After the switch, which clears it: dies with the nursery. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;)
        pause();
}

static void test_stale_reaped(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = xlrt_spawn_ctx(f->dir, BASE, "reap_stale = 1\n");
    pid_t nursery =
        xlrt_nursery_start(stale_dm, (void *)(uintptr_t)(BASE + 26));
    xlrt_probe p;
    int rc;

    for (int i = 0; xlrt_kernel_count(BASE + 26) < 1; i++) {
        assert_true(i < 10000); /* it never took the uid */
        usleep(1000);
    }
    rc = xlrt_probe_spawn(ctx, 26, "wait", NULL, &p);
    xlrt_nursery_stop(nursery);
    if (rc)
        fail_msg("spawn: %d\n%s", rc, xlrt_captured());
    assert_non_null(strstr(xlrt_captured(), "domid 26: uid 4000026 still "
                                            "has tasks of a previous "
                                            "domain"));
    /* The probe is now the uid's one task. */
    assert_int_equal(xlrt_kernel_count(BASE + 26), 1);
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
}

static void test_lock_held_blocks_spawn(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *holder = xlrt_spawn_ctx(f->dir, BASE, NULL);
    xlreaper_ctx *ctx =
        xlrt_spawn_ctx(f->dir, BASE, "lock_timeout_ms = 100\n");
    xlreaper_lock *lock;
    xlrt_probe p;

    assert_int_equal(xlreaper_lock_acquire(holder, &lock), 0);
    assert_int_equal(xlrt_probe_spawn(ctx, 27, "wait", NULL, &p),
                     XLREAPER_ERROR_LOCK_TIMEOUT);
    assert_int_equal(xlrt_kernel_count(BASE + 27), 0); /* nothing born */
    xlreaper_lock_release(lock);
    assert_int_equal(xlrt_probe_spawn(ctx, 27, "wait", NULL, &p), 0);
    xlrt_probe_stop(&p);
    xlreaper_ctx_free(ctx);
    xlreaper_ctx_free(holder);
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, xlrt_sfix_new, xlrt_sfix_free)
    const struct CMUnitTest tests[] = {
        T(test_exec_mode_ids),
        T(test_signals_reset),
        T(test_limits_configured),
        T(test_limits_default),
        T(test_limits_clamped_to_inherited_hard),
        T(test_only_kept_fds),
        T(test_closed_stdio_is_dev_null),
        T(test_xen_fd_reported),
        T(test_chroot),
        T(test_chroot_writable_refused),
        T(test_namespaces),
        T(test_dumpable_rule),
        T(test_runas_mode),
        T(test_cgroup),
        T(test_cgroup_not_cgroup2_refused),
        T(test_oom_score_adj),
        T(test_cgroup_memory_oom),
        T(test_stale_refused),
        T(test_stale_zombie_refused),
        T(test_stale_reaped),
        T(test_lock_held_blocks_spawn),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
