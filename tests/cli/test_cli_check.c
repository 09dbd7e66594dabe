/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_cli_check.c - `xl-reaper check` says "ok" only when a device
 * model can start: each thing the wrapper or the daemon would refuse
 * (a QEMU that cannot be executed, a cgroup_parent where no cgroup can
 * be made, a lock that cannot be had, a group of the host holding a
 * DM's gid) makes it say "not ok", name the problem on stderr and exit 1.
 *
 * uid and gid block of this suite: 9200000..9299999 (groups made here
 * are named xlrtest-*, and removed).  No process runs under them.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define BASE 9200000u
#define RB_BASE 9210000u /* a range-base range, no passwd user */

static struct {
    char *dir;
    char cli[512], wrapper[600];
    char *cg_mount; /* a cgroup2 mount, or NULL */
} S;

static int run_cmd(const char *const *argv)
{
    char *out, *err;
    int status = xlrt_run((char *const *)argv, &out, &err);

    free(out);
    free(err);
    return status;
}

static void groupdel(const char *name)
{
    const char *argv[] = { "/usr/sbin/groupdel", name, NULL };

    run_cmd(argv); /* absent is fine */
}

static void groupadd(const char *name, gid_t gid)
{
    char g[16];
    const char *argv[] = { "/usr/sbin/groupadd", "-g", g, name, NULL };

    snprintf(g, sizeof(g), "%lu", (unsigned long)gid);
    groupdel(name); /* left by an interrupted run */
    if (run_cmd(argv) != 0)
        fail_msg("groupadd -g %s %s failed", g, name);
}

/* The first cgroup2 mount in mountinfo, malloc'd, or NULL. */
static char *cgroup2_mount(void)
{
    FILE *m = fopen("/proc/self/mountinfo", "re");
    char line[4096], *out = NULL;

    if (!m)
        return NULL;
    while (!out && fgets(line, sizeof(line), m)) {
        char *sep = strstr(line, " - cgroup2 "), *f[6];
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

/* Whether the cgroup dir offers the memory controller to its children. */
static bool cg_offers_memory(const char *dir)
{
    char path[4200], text[512] = "";
    FILE *f;
    bool yes = false;

    snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
    f = fopen(path, "re");
    if (f && fgets(text, sizeof(text), f))
        for (char *t = strtok(text, " \n"); t; t = strtok(NULL, " \n"))
            yes |= !strcmp(t, "memory");
    if (f)
        fclose(f);
    return yes;
}

static int suite_setup(void **state)
{
    char *real;

    (void)state;
    S.dir = xlrt_tmpdir();
    snprintf(S.cli, sizeof(S.cli), "%s/bin/xl-reaper", xlrt_build_dir());
    snprintf(S.wrapper, sizeof(S.wrapper), "%s/libexec/qemu-dm-restrict",
             xlrt_build_dir());
    real = realpath(S.wrapper, NULL);
    assert_non_null(real);
    snprintf(S.wrapper, sizeof(S.wrapper), "%s", real);
    free(real);
    S.cg_mount = cgroup2_mount();
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    groupdel("xlrtest-dm5");
    groupdel("xlrtest-rb");
    free(S.cg_mount);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

/* A config: the suite's range, a lock in its directory, an executable
 * qemu_path, then extra (which may set any of these again: it replaces
 * the line). */
static char *config(const char *extra)
{
    char text[4096], lock[600];
    bool own_qemu = extra && strstr(extra, "qemu_path");
    bool own_lock = extra && strstr(extra, "lock_file");
    bool own_base = extra && strstr(extra, "dm_uid_base");

    snprintf(lock, sizeof(lock), "lock_file = \"%s/lock\"\n", S.dir);
    snprintf(text, sizeof(text), "%s%s%s%s",
             own_base ? "" : "dm_uid_base = 9200000\n", own_lock ? "" : lock,
             own_qemu ? "" : "qemu_path = \"/bin/true\"\n",
             extra ? extra : "");
    return xlrt_write_file(S.dir, "check.conf", text);
}

typedef struct {
    int status;
    char *out, *err;
} result;

static result check(const char *extra, bool json)
{
    char *cfg = config(extra);
    char *argv[] = { S.cli,
                     "--config",
                     cfg,
                     json ? "--json" : "check",
                     json ? "check" : NULL,
                     NULL };
    result r;

    r.status = xlrt_run(argv, &r.out, &r.err);
    free(cfg);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* The report's line for check name, malloc'd, or NULL. */
static char *report_line(const char *out, const char *prefix, const char *name)
{
    char head[128];
    const char *l, *nl;

    snprintf(head, sizeof(head), "\n  %-6s %-16s ", prefix, name);
    l = strstr(out, head);
    if (!l)
        return NULL;
    l++;
    nl = strchr(l, '\n');
    return strndup(l, nl ? (size_t)(nl - l) : strlen(l));
}

/* A refusal: exit 1, "not ok", and the problem, named, on stderr and in
 * the report. */
static void assert_refused(const char *extra, const char *name,
                           const char *why)
{
    result r = check(extra, false);
    char *line = report_line(r.out, "FAILED", name), head[128];

    snprintf(head, sizeof(head), "xl-reaper: error: check: %s: ", name);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 1 || !line ||
        !strstr(line, why) || !strstr(r.out, "\nnot ok: ") ||
        strstr(r.out, "\nok\n") || !strstr(r.err, head) || !strstr(r.err, why))
        fail_msg("config with\n%s\nstatus %#x, want exit 1 and %s "
                 "FAILED: ...%s...\nreport line: %s\nstderr: %s",
                 extra ? extra : "", r.status, name, why, line, r.err);
    free(line);
    result_free(&r);
}

static void assert_ok(const char *extra, const char *name, const char *what)
{
    result r = check(extra, false);
    char *line = report_line(r.out, "ok", name);

    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || !line ||
        !strstr(line, what) || !strstr(r.out, "\nok\n") || *r.err)
        fail_msg("config with\n%s\nstatus %#x, want exit 0 and %s ok: "
                 "...%s...\nreport line: %s\nstderr: %s",
                 extra ? extra : "", r.status, name, what, line, r.err);
    free(line);
    result_free(&r);
}

static void test_ok_means_every_check(void **state)
{
    static const char *const names[] = { "root",        "passwd_range",
                                         "group_range", "subordinate_ids",
                                         "qemu_path",   "cgroup_parent",
                                         "lock_file",   "dm_devices",
                                         NULL };
    result r;

    (void)state;
    assert_ok(NULL, "qemu_path", "/bin/true");
    r = check(NULL, false);
    for (int i = 0; names[i]; i++) {
        char want[64];

        snprintf(want, sizeof(want), "\n  ok     %s", names[i]);
        if (!strstr(r.out, want))
            fail_msg("no \"%s\" line:\n%s", names[i], r.out);
    }
    result_free(&r);

    /* The same in JSON, with "ok" false on a refusal. */
    r = check(NULL, true);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    assert_non_null(strstr(r.out, "{\"check\":\"qemu_path\",\"ok\":true,"));
    assert_non_null(strstr(r.out, "],\"ok\":true}"));
    result_free(&r);
    r = check("qemu_path = \"/nonexistent/qemu\"\n", true);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1);
    assert_non_null(strstr(r.out, "{\"check\":\"qemu_path\",\"ok\":false,"));
    assert_non_null(strstr(r.out, "],\"ok\":false}"));
    assert_non_null(strstr(r.err, "check: qemu_path: /nonexistent/qemu"));
    result_free(&r);
}

/* What a DM without a chroot can open in /dev, /dev/fuse first: said as
 * the kernel shows it, and never a refusal. */
static void test_dm_devices(void **state)
{
    struct stat st;
    const char *want;

    (void)state;
    if (stat("/dev/fuse", &st) < 0)
        want = "from the host's root, where a DM without a chroot of its "
               "own lives: no /dev/fuse";
    else if (S_ISCHR(st.st_mode) && (st.st_mode & 006))
        want = "/dev/fuse is open to a DM (a DM spawned here has no user "
               "namespace to mount it in";
    else
        want = "/dev/fuse is not open to a DM";
    assert_ok(NULL, "dm_devices", want);
}

static void test_qemu_path(void **state)
{
    char extra[800];

    (void)state;
    assert_refused("qemu_path = \"/nonexistent/qemu\"\n", "qemu_path",
                   "/nonexistent/qemu: No such file or directory");
    assert_refused("qemu_path = \"/etc/passwd\"\n", "qemu_path",
                   "/etc/passwd is not an executable file");
    assert_refused("qemu_path = \"/usr/bin\"\n", "qemu_path",
                   "/usr/bin is not an executable file");
    /* The wrapper would exec itself. */
    snprintf(extra, sizeof(extra), "qemu_path = \"%s\"\n", S.wrapper);
    assert_refused(extra, "qemu_path", "is the wrapper qemu-dm-restrict");
}

static void test_cgroup_parent(void **state)
{
    char extra[800], parent[600];
    struct stat st;

    (void)state;
    assert_ok(NULL, "cgroup_parent", "not set");
    assert_refused("cgroup_parent = \"/nonexistent/cg\"\n", "cgroup_parent",
                   "/nonexistent/cg: No such file or directory");
    snprintf(extra, sizeof(extra), "cgroup_parent = \"%s\"\n", S.dir);
    assert_refused(extra, "cgroup_parent",
                   "is not a directory of a cgroup2 file system");
    if (!S.cg_mount)
        fail_msg("no cgroup2 mount on this host: the cgroup_parent checks "
                 "that pass cannot be shown");

    snprintf(parent, sizeof(parent), "%s/xlrtest-check-%ld", S.cg_mount,
             (long)getpid());
    assert_int_equal(mkdir(parent, 0755), 0);
    /* dm_memory_max (256 MiB by default) needs the memory controller
     * in the parent: said when it is offered, refused when not. */
    snprintf(extra, sizeof(extra), "cgroup_parent = \"%s\"\n", parent);
    if (cg_offers_memory(parent)) {
        assert_ok(extra, "cgroup_parent", "each DM's memory.max 268435456");
    } else {
        char why[700];

        snprintf(why, sizeof(why),
                 "%s has no memory controller (cgroup.controllers: \"",
                 parent);
        assert_refused(extra, "cgroup_parent", why);
    }
    snprintf(extra, sizeof(extra),
             "cgroup_parent = \"%s\"\ndm_memory_max = 0\n", parent);
    assert_ok(extra, "cgroup_parent", "no memory.max (dm_memory_max = 0)");
    /* The cgroup it made is gone again: rmdir works only when empty. */
    assert_int_equal(rmdir(parent), 0);

    /*
     * A cgroup2 directory that is there but read-only, as systemd's
     * ProtectControlGroups=yes makes it: stat and access look fine, only
     * making a cgroup shows otherwise.  In a mount namespace of a child
     * of ours, so that the host's mounts are untouched.
     */
    assert_int_equal(mkdir(parent, 0755), 0);
    char *cfg = config(extra), *err;
    int p[2], status;
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char *argv[] = { S.cli, "--config", cfg, "check", NULL };
        int fd = open("/dev/null", O_WRONLY);

        if (unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount(parent, parent, NULL, MS_BIND, NULL) < 0 ||
            mount(NULL, parent, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) <
                0)
            _exit(100);
        dup2(fd, 1);
        dup2(p[1], 2);
        execv(S.cli, argv);
        _exit(101);
    }
    close(p[1]);
    err = xlrt_read_to_eof(p[0]);
    close(p[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
        !strstr(err, "check: cgroup_parent: cannot make a cgroup in ") ||
        !strstr(err, ": Read-only file system"))
        fail_msg("read-only cgroup_parent: status %#x, want exit 1; "
                 "stderr: %s",
                 status, err);
    free(err);
    free(cfg);
    assert_int_equal(stat(parent, &st), 0);
    assert_int_equal(rmdir(parent), 0);
}

static void test_lock_file(void **state)
{
    char extra[800], path[700];

    (void)state;
    assert_ok(NULL, "lock_file", "will be made (0600)");
    assert_refused("lock_file = \"/nonexistent/a/lock\"\n", "lock_file",
                   "/nonexistent/a/lock: neither /nonexistent/a nor a "
                   "writable directory /nonexistent to make it in");

    /* A file of someone else's: every lock attempt refuses it. */
    snprintf(path, sizeof(path), "%s/other-lock", S.dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fchown(fd, 65534, 65534), 0);
    close(fd);
    snprintf(extra, sizeof(extra), "lock_file = \"%s\"\n", path);
    assert_refused(extra, "lock_file",
                   "other-lock is owned by uid 65534, not root");
    unlink(path);

    /* A symbolic link: opened O_NOFOLLOW, refused. */
    assert_int_equal(symlink("/etc/hostname", path), 0);
    assert_refused(extra, "lock_file", "other-lock is a symbolic link");
    unlink(path);

    /* Root's, but readable by others: whoever opened it may hold it. */
    fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0644), 0);
    close(fd);
    assert_refused(extra, "lock_file", "is mode 0644 with 1 links, not 0600");
    unlink(path);

    /* In a directory anyone may write: anyone could make it first. */
    snprintf(path, sizeof(path), "%s/open", S.dir);
    assert_int_equal(mkdir(path, 0777), 0);
    assert_int_equal(chmod(path, 01777), 0);
    snprintf(extra, sizeof(extra), "lock_file = \"%s/lock\"\n", path);
    assert_refused(extra, "lock_file",
                   "open is writable by everyone (mode "
                   "1777)");
    snprintf(extra, sizeof(extra), "lock_file = \"%s/sub/lock\"\n", path);
    assert_refused(extra, "lock_file",
                   "open is writable by everyone (mode "
                   "1777)");
    assert_int_equal(rmdir(path), 0);
}

/* #17: a group inside the gids the DMs will use is named and refused. */
static void test_group_in_range(void **state)
{
    (void)state;
    assert_ok(NULL, "group_range", "no group in gids 9200001..9232751");
    groupadd("xlrtest-dm5", BASE + 5);
    assert_refused(NULL, "group_range",
                   "group xlrtest-dm5 (gid 9200005) is domid 5's DM gid");
    /* range-base mode gives no DM gid 9200005: no collision there ... */
    assert_ok("dm_gid_mode = \"range-base\"\n", "group_range",
              "gid 9200000 (range-base, every DM's)");
    groupdel("xlrtest-dm5");
    assert_ok(NULL, "group_range", "no group in gids 9200001..9232751");

    /* ... but its one gid must be no other group's. */
    groupadd("xlrtest-rb", RB_BASE);
    assert_refused("dm_uid_base = 9210000\ndm_gid_mode = \"range-base\"\n",
                   "group_range",
                   "group xlrtest-rb (gid 9210000) is every DM's gid "
                   "(dm_gid_mode \"range-base\")");
    /* In per-domain mode the base's gid is no DM's. */
    assert_ok("dm_uid_base = 9210000\n", "group_range",
              "no group in gids 9210001..9242751");
    groupdel("xlrtest-rb");
}

/* A spawn looks its one gid up, and refuses it too. */
static void test_spawn_refuses_group_gid(void **state)
{
    char *cfg = config(NULL), *out, *err;
    char *argv[] = { S.cli, "--config", cfg,         "spawn",
                     "5",   "--",       "/bin/true", NULL };
    int status;

    (void)state;
    groupadd("xlrtest-dm5", BASE + 5);
    status = xlrt_run(argv, &out, &err);
    groupdel("xlrtest-dm5");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
        !strstr(err, "xl-reaper: error: domid 5: its DM gid 9200005 is group "
                     "xlrtest-dm5 of this host"))
        fail_msg("spawn with a group at the DM's gid: status %#x\nstderr: %s",
                 status, err);
    free(out);
    free(err);
    /* Without it, the same spawn runs. */
    status = xlrt_run(argv, &out, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("spawn: status %#x\nstderr: %s", status, err);
    free(out);
    free(err);
    free(cfg);
}

/* check and audit print the DM uid range in one form. */
static void test_range_printed_alike(void **state)
{
    static const char want[] = "9200001..9232751 (base 9200000 + domid "
                               "1..32751)";
    char *cfg = config(NULL), *out, *err, *at;
    char *audit[] = { S.cli, "--config", cfg, "audit", "--xenstore-timeout",
                      "100", NULL };
    result r;
    int status;

    (void)state;
    r = check(NULL, false);
    at = strstr(r.out, "\ndm uid range:    ");
    if (!at || strncmp(at + 18, want, strlen(want)))
        fail_msg("check's range line lacks \"%s\":\n%s", want, r.out);
    result_free(&r);
    /* Without Xen the audit cannot check the domains (exit 2), and still
     * heads its table with the range. */
    status = xlrt_run(audit, &out, &err);
    assert_true(WIFEXITED(status));
    if (strncmp(out, "xl-reaper audit: dm uid range ", 30) ||
        strncmp(out + 30, want, strlen(want)))
        fail_msg("audit's first line lacks \"dm uid range %s\":\n%s", want,
                 out);
    free(out);
    free(err);
    free(cfg);
}

static void test_not_root(void **state)
{
    char *cfg = config(NULL), *out, *err, cli[512];
    int status, p[2];

    (void)state;
    /* The config must stay readable to nobody. */
    assert_int_equal(chmod(S.dir, 0755), 0);
    /* The staged copy: nobody may not search the build's directories. */
    snprintf(cli, sizeof(cli), "%s/xl-reaper", xlrt_progs_dir());
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char *argv[] = { cli, "--config", cfg, "check", NULL };

        dup2(p[1], 2);
        xlrt_exec_as(65534, 65534, argv);
    }
    close(p[1]);
    err = xlrt_read_to_eof(p[0]);
    close(p[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(chmod(S.dir, 0700), 0);
    out = NULL;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
        !strstr(err, "xl-reaper: error: check: root: running as uid 65534"))
        fail_msg("check as nobody: status %#x, stderr %s", status, err);
    free(out);
    free(err);
    free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_means_every_check),
        cmocka_unit_test(test_dm_devices),
        cmocka_unit_test(test_qemu_path),
        cmocka_unit_test(test_cgroup_parent),
        cmocka_unit_test(test_lock_file),
        cmocka_unit_test(test_group_in_range),
        cmocka_unit_test(test_spawn_refuses_group_gid),
        cmocka_unit_test(test_range_printed_alike),
        cmocka_unit_test(test_not_root),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
