/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_wrapper.c - build/libexec/qemu-dm-restrict against a fake
 * QEMU (tests/progs/fake_qemu.c, which prints what it got): arguments
 * pass through unchanged apart from -runas (and -chroot) added in the
 * form the "installed" QEMU's -help offers, a bad or missing -xen-domid
 * and a mismatched -runas are refused, the pid stays the same (exec in
 * place), and it works after libxl's own preexec.  libxl 4.20's QEMU
 * option probe runs through unchanged as root with its QMP socket (and
 * its exit cannot unlink the DM's socket libxl binds at the same path
 * next), and its DM lines (-run-with chroot= and a second -run-with
 * user=) pass as 4.17's do, against a fake answering -help as QEMU 7.2
 * and 10.0 do.  A line no restriction was asked for (libvirt's) gets
 * the uid switch, and with add_dm_restrict -xen-domid-restrict and a
 * chroot, once, said in one line.
 * uid block: base 4200000 (domids 61..90).
 */
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_spawn.h"

#define BASE 4200000ul

typedef struct {
    xlrt_sfix s;
    char *fake;
    char *wrapper;
} fixture;

/* The config, with runas unless extra says otherwise. */
static void write_conf(fixture *f, const char *extra)
{
    xlrt_sfix_conf(&f->s, BASE, f->fake,
                   extra ? extra : "uid_switch = \"runas\"\n");
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *w;

    assert_non_null(f);
    xlrt_sfix_setup(&f->s);
    f->fake = xlrt_prog("fake_qemu");
    assert_true(asprintf(&w, "%s/libexec/qemu-dm-restrict", xlrt_build_dir()) >
                0);
    f->wrapper = realpath(w, NULL);
    assert_non_null(f->wrapper);
    free(w);
    write_conf(f, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    xlrt_sfix_teardown(&f->s);
    free(f->fake);
    free(f->wrapper);
    free(f);
    return 0;
}

typedef struct {
    pid_t pid;
    int status;
    char *out, *err;
} run_result;

static void run_result_dispose(run_result *r)
{
    free(r->out);
    free(r->err);
}

/*
 * Runs the wrapper with args as libxl would: first what
 * libxl__spawn_local_dm's inner child does before exec (setsid, and
 * libxl__local_dm_preexec_restrict's namespaces and limits, here
 * written out from its documented effect), stdin on /dev/null.
 */
static void run_wrapper(fixture *f, const char *help, char *const args[],
                        run_result *r)
{
    int out[2], err[2];
    char *argv[64];
    int n = 0;

    argv[n++] = f->wrapper;
    for (int i = 0; args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(err, O_CLOEXEC), 0);
    r->pid = fork();
    assert_true(r->pid >= 0);
    if (r->pid == 0) {
        static const struct {
            int res;
            rlim_t lim;
        } libxl_limits[] = {
            { RLIMIT_FSIZE, 256 * 1024 }, { RLIMIT_CORE, 0 },
            { RLIMIT_MSGQUEUE, 0 },       { RLIMIT_LOCKS, 0 },
            { RLIMIT_MEMLOCK, 0 },
        };
        int null = open("/dev/null", O_RDONLY);
        setsid();
        if (unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
            _exit(120);
        for (size_t i = 0; i < 5; i++) {
            struct rlimit rl = { libxl_limits[i].lim, libxl_limits[i].lim };
            if (setrlimit(libxl_limits[i].res, &rl) < 0)
                _exit(121);
        }
        dup2(null, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        setenv("XL_REAPER_CONFIG", f->s.conf, 1);
        setenv("FAKE_QEMU_HELP", help, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    r->out = xlrt_read_to_eof(out[0]);
    r->err = xlrt_read_to_eof(err[0]);
    close(out[0]);
    close(err[0]);
    assert_int_equal(waitpid(r->pid, &r->status, 0), r->pid);
}

static int exit_code(const run_result *r)
{
    return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

/* The fake's "arg=" lines after argv[0], joined with ' '. */
static char *args_seen(const char *out)
{
    char *joined = calloc(1, strlen(out) + 1);
    size_t n = 0;
    bool first = true;

    assert_non_null(joined);
    for (const char *p = out; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (!strncmp(p, "arg=", 4)) {
            if (!first) {
                memcpy(joined + n, p + 4, l - 4);
                n += l - 4;
                joined[n++] = ' ';
            }
            first = false;
        }
        p = end ? end + 1 : NULL;
    }
    if (n)
        joined[n - 1] = '\0';
    return joined;
}

static void expect_ran(const run_result *r)
{
    char want[64];

    if (exit_code(r) != 0)
        fail_msg("wrapper exit %d, stderr:\n%s", exit_code(r), r->err);
    /* Exec in place: QEMU has the pid libxl forked. */
    snprintf(want, sizeof(want), "pid=%ld", (long)r->pid);
    assert_true(xlrt_has_line(r->out, want));
}

static void expect_refused(const run_result *r, const char *why)
{
    if (exit_code(r) != 1)
        fail_msg("wrapper exit %d, want 1; stderr:\n%s", exit_code(r), r->err);
    assert_string_equal(r->out, ""); /* QEMU never ran */
    if (!strstr(r->err, why))
        fail_msg("stderr lacks '%s':\n%s", why, r->err);
}

/* QEMU ran (expect_ran) with exactly the arguments fmt says after
 * argv[0]. */
static void __attribute__((format(printf, 2, 3)))
expect_args(const run_result *r, const char *fmt, ...)
{
    char want[8400];
    char *seen;
    va_list ap;

    expect_ran(r);
    va_start(ap, fmt);
    vsnprintf(want, sizeof(want), fmt, ap);
    va_end(ap);
    seen = args_seen(r->out);
    assert_string_equal(seen, want);
    free(seen);
}

/* The wrapper, on a QEMU whose -help is help, runs it with exactly the
 * arguments fmt says. */
static void __attribute__((format(printf, 4, 5)))
ran_with(fixture *f, const char *help, char *const args[], const char *fmt,
         ...)
{
    char want[8400];
    run_result r;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(want, sizeof(want), fmt, ap);
    va_end(ap);
    run_wrapper(f, help, args, &r);
    expect_args(&r, "%s", want);
    run_result_dispose(&r);
}

/* The wrapper, on a QEMU whose -help is help, refuses args saying why. */
static void refused(fixture *f, const char *help, char *const args[],
                    const char *why)
{
    run_result r;

    run_wrapper(f, help, args, &r);
    expect_refused(&r, why);
    run_result_dispose(&r);
}

/* A command line (NULL-terminated within a) and why it is refused. */
typedef struct {
    const char *a[10];
    const char *why;
} refusal;

/* refused() for each of n cases. */
static void refused_all(fixture *f, const char *help, const refusal *cases,
                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        refused(f, help, (char *const *)cases[i].a, cases[i].why);
}

/* ---------- passing through ---------- */

/* libxl 4.17's own command line for a dm_restrict HVM guest, with the
 * pre-opened QMP socket it leaves inheritable. */
static void test_passthrough_libxl_cmdline(void **state)
{
    fixture *f = *state;
    int qmp = open("/dev/null", O_RDWR);   /* no CLOEXEC, as libxl's */
    int stray = open("/dev/null", O_RDWR); /* a leak, not named */
    char chardev[128], joined[1024], want_fds[64], want_ids[64];
    run_result r;

    assert_true(qmp > 2 && stray > qmp);
    snprintf(chardev, sizeof(chardev),
             "socket,id=libxl-cmd,fd=%d,server=on,wait=off", qmp);
    char *const args[] = {
        "-xen-domid",
        "61",
        "-no-shutdown",
        "-chardev",
        chardev,
        "-S",
        "-mon",
        "chardev=libxl-cmd,mode=control",
        "-xen-domid-restrict",
        "-runas",
        "4200061:4200061",
        "-nodefaults",
        "-name",
        "guest,fd=99",
        "-machine",
        "xenfv,suppress-vmdesc=on",
        NULL,
    };

    run_wrapper(f, "runas", args, &r);
    joined[0] = '\0';
    for (int i = 0; args[i]; i++)
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined),
                 "%s%s", i ? " " : "", args[i]);
    expect_args(&r, "%s", joined);
    /* argv[0] is QEMU's own path, as libxl would have given it. */
    snprintf(joined, sizeof(joined), "arg=%s", f->fake);
    assert_true(xlrt_has_line(r.out, joined));
    snprintf(want_fds, sizeof(want_fds), "fds=0,1,2,%d", qmp);
    assert_true(xlrt_has_line(r.out, want_fds));
    /* Root until QEMU switches itself; the gid already taken. */
    snprintf(want_ids, sizeof(want_ids), "ids=0,0,0:%lu,%lu,%lu", BASE + 61,
             BASE + 61, BASE + 61);
    assert_true(xlrt_has_line(r.out, want_ids));
    run_result_dispose(&r);
    close(qmp);
    close(stray);
}

static void test_runas_added(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "62", "-S", NULL };
    char dir[4096];

    /* QEMU 7.2: -runas; no chroot dir, so no -chroot. */
    ran_with(f, "runas", args, "-xen-domid 62 -S -runas 4200062:4200062");

    /* With libxl's chroot dir: -chroot too. */
    snprintf(dir, sizeof(dir), "%s/qemu-root-62", f->s.dir);
    assert_int_equal(mkdir(dir, 0), 0);
    ran_with(f, "runas", args,
             "-xen-domid 62 -S -runas 4200062:4200062 -chroot %s", dir);

    /* QEMU 9.1: -run-with, for both. */
    ran_with(f, "run-with", args,
             "-xen-domid 62 -S -run-with user=4200062:4200062 -run-with "
             "chroot=%s",
             dir);

    /* A QEMU that offers neither. */
    refused(f, "none", args, "offers neither -runas nor -run-with user=");
    refused(f, "fail", args, "cannot tell which options it takes");
    assert_int_equal(rmdir(dir), 0);
}

/* libxl's own form in range-base mode: the range base's gid. */
static void test_runas_range_base_gid(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "63", "-runas", "4200063:4200000",
                           NULL };
    run_result r;

    write_conf(f, "uid_switch = \"runas\"\ndm_gid_mode = \"range-base\"\n");
    run_wrapper(f, "runas", args, &r);
    expect_ran(&r);
    assert_true(xlrt_has_line(r.out, "ids=0,0,0:4200000,4200000,4200000"));
    run_result_dispose(&r);

    /* The same line under per-domain gids is a mismatch. */
    write_conf(f, NULL);
    refused(f, "runas", args,
            "runs it as 4200063:4200000, but this domain's "
            "device model ids are 4200063:4200063");
}

/* ---------- refused ---------- */

static void test_runas_mismatch_refused(void **state)
{
    fixture *f = *state;
    static const refusal cases[] = {
        { { "-xen-domid", "64", "-runas", "4200065:4200065" },
          "runs it as 4200065:4200065, but this domain's device model ids "
          "are 4200064:4200064" },
        { { "-xen-domid", "64", "-runas", "0:0" }, "runs it as 0:0" },
        { { "-xen-domid", "64", "-runas", "xen-qemuuser-range-base" },
          "runs it as \"xen-qemuuser-range-base\", not as uid:gid" },
        { { "-xen-domid", "64", "-runas", "4200064" }, "not as uid:gid" },
        { { "-xen-domid", "64", "-runas", "4200064:" }, "not as uid:gid" },
        /* 04200064 is octal to QEMU: another uid */
        { { "-xen-domid", "64", "-runas", "04200064:4200064" },
          "not as uid:gid" },
        { { "-xen-domid", "64", "-runas", "4200064:4200064", "-runas",
            "4200064:4200064" },
          "names the user to run as twice" },
        { { "-xen-domid", "64", "-run-with", "user=1:1" },
          "runs it as 1:1, but" },
        { { "-xen-domid", "64", "-runas", "4200064:4200064", "-run-with",
            "user=4200064:4200064" },
          "names the user to run as twice" },
        { { "-xen-domid", "64", "-runas" }, "-runas has no value" },
    };

    refused_all(f, "runas", cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_chroot_mismatch_refused(void **state)
{
    fixture *f = *state;
    char dir[4096];
    char *const args[] = { "-xen-domid", "66", "-runas", "4200066:4200066",
                           "-chroot",    "/",  NULL };

    snprintf(dir, sizeof(dir), "%s/qemu-root-66", f->s.dir);
    assert_int_equal(mkdir(dir, 0), 0);
    refused(f, "runas", args, "chroots it to /, not to this domain's");
    assert_int_equal(rmdir(dir), 0);
}

static void test_bad_domid_refused(void **state)
{
    fixture *f = *state;
    static const refusal cases[] = {
        { { "-S", "-machine", "xenfv" }, "no -xen-domid" },
        { { "-xen-domid" }, "-xen-domid without a value" },
        { { "-xen-domid", "0" }, "expected a domid from 1 to 32751" },
        { { "-xen-domid", "32752" }, "expected a domid from 1 to 32751" },
        { { "-xen-domid", "4294967363" }, "expected a domid" },
        { { "-xen-domid", "-5" }, "expected a domid" },
        { { "-xen-domid", "67x" }, "expected a domid" },
        { { "-xen-domid", "" }, "expected a domid" },
        { { "-xen-domid", "67", "-xen-domid", "68" },
          "-xen-domid given twice" },
        { { "-xen-domid", "67", "--xen-domid", "67" },
          "-xen-domid given twice" },
        { { "-xen-domid=67" }, "takes -xen-domid N as two arguments" },
    };

    refused_all(f, "runas", cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_qemu_path_checked(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "69", NULL };
    char *extra;

    assert_true(asprintf(&extra, "uid_switch = \"runas\"\n") > 0);
    free(f->fake);
    f->fake = strdup("/nonexistent/qemu");
    write_conf(f, extra);
    refused(f, "runas", args, "qemu_path /nonexistent/qemu: No such file");

    free(f->fake);
    f->fake = strdup(f->wrapper);
    write_conf(f, extra);
    refused(f, "runas", args, "is this wrapper");
    free(extra);
}

/* exec mode cannot honour QEMU's own -runas: said, not left to QEMU. */
static void test_exec_mode_with_runas_refused(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "70", "-runas", "4200070:4200070",
                           NULL };

    write_conf(f, "uid_switch = \"exec\"\n");
    refused(f, "runas", args, "use uid_switch = \"runas\"");
}

/* exec mode: the wrapper becomes QEMU already under the DM uid. */
static void test_exec_mode(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "71", "-S", NULL };
    run_result r;

    write_conf(f, "uid_switch = \"exec\"\n");
    run_wrapper(f, "runas", args, &r);
    expect_args(&r, "-xen-domid 71 -S");
    assert_true(xlrt_has_line(r.out, "ids=4200071,4200071,4200071:4200071,"
                                     "4200071,4200071"));
    run_result_dispose(&r);
}

/* The uid of the domid still busy: refused, the stale task untouched. */
static void test_busy_uid_refused(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "72", "-runas", "4200072:4200072",
                           NULL };
    pid_t stale = f->s.bystander = xlrt_bystander_start(BASE + 72);
    run_result r;

    for (int i = 0; xlrt_kernel_count(BASE + 72) < 1; i++) {
        assert_true(i < 10000); /* it never took the uid */
        usleep(1000);
    }
    run_wrapper(f, "runas", args, &r);
    expect_refused(&r, "uid 4200072 still has tasks");
    assert_true(xlrt_alive(stale));
    run_result_dispose(&r);
    xlrt_bystander_stop(stale);
    f->s.bystander = 0;
}

/* ---------- libxl 4.20 ---------- */

/* A listening unix socket as libxl__pre_open_qmp_socket leaves it:
 * inheritable, above 2. */
static int qmp_socket(fixture *f, const char *name)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    assert_true(fd > 2);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", f->s.dir, name);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 1), 0);
    return fd;
}

static char *join_args(char *const args[])
{
    size_t n = 1;
    char *j;

    for (int i = 0; args[i]; i++)
        n += strlen(args[i]) + 1;
    j = calloc(1, n);
    assert_non_null(j);
    for (int i = 0; args[i]; i++) {
        if (i)
            strcat(j, " ");
        strcat(j, args[i]);
    }
    return j;
}

/* The fake's "fd=N:dev:ino:cloexec" line for the file fd is here. */
static void expect_same_fd(const run_result *r, int fd)
{
    struct stat st;
    char want[128];

    assert_int_equal(fstat(fd, &st), 0);
    snprintf(want, sizeof(want), "fd=%d:%lu:%lu:0", fd,
             (unsigned long)st.st_dev, (unsigned long)st.st_ino);
    if (!xlrt_has_line(r->out, want))
        fail_msg("QEMU lacks '%s':\n%s", want, r->out);
}

/* libxl_dm.c's probe line, RELEASE-4.20.0 to 4.21 alike. */
#define PROBE_ARGS(chardev)                                                   \
    "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",         \
        "none,accel=xen", "-chardev", (chardev), "-mon",                      \
        "chardev=libxl-cmd,mode=control"

static void test_libxl_probe_runs_unchanged(void **state)
{
    static const char *const helps[] = { "7.2", "10.0" };
    fixture *f = *state;
    int qmp = qmp_socket(f, "qmp-probe");
    int stray = open("/dev/null", O_RDWR); /* not named: closed */
    char chardev[128], want[4200];

    snprintf(chardev, sizeof(chardev),
             "socket,id=libxl-cmd,fd=%d,server=on,wait=off", qmp);
    char *const args[] = { PROBE_ARGS(chardev), NULL };
    char *joined = join_args(args);

    assert_true(stray > qmp);
    for (size_t i = 0; i < 2; i++) {
        run_result r;

        run_wrapper(f, helps[i], args, &r);
        /* The same argv after argv[0], which is qemu_path. */
        expect_args(&r, "%s", joined);
        snprintf(want, sizeof(want), "arg=%s", f->fake);
        assert_true(xlrt_has_line(r.out, want));
        /* Root, for no domain: no DM uid or gid taken. */
        assert_true(xlrt_has_line(r.out, "ids=0,0,0:0,0,0"));
        /* libxl's socket itself, inheritable, and nothing else. */
        snprintf(want, sizeof(want), "fds=0,1,2,%d", qmp);
        if (!xlrt_has_line(r.out, want))
            fail_msg("want '%s':\n%s", want, r.out);
        expect_same_fd(&r, qmp);
        /* -help was not asked: the probe is passed, not planned. */
        assert_null(strstr(r.out, "QEMU emulator version"));
        if (!strstr(r.err, "libxl's QEMU option probe"))
            fail_msg("no probe line in stderr:\n%s", r.err);
        run_result_dispose(&r);
    }
    free(joined);
    close(stray);
    close(qmp);
}

/*
 * What libxl 4.20 does around the probe: it binds the probe's socket at
 * <run dir>/qmp-libxl-<domid>, then, not waiting for the probe to exit,
 * the DM's at the same path; the probe QEMU unlinks the path its socket
 * was bound to when it exits.  The DM's socket must still be there under
 * that name afterwards: libxl connects to the DM by it.
 */
static void test_libxl_probe_exit_keeps_dm_socket(void **state)
{
    fixture *f = *state;
    int probe = qmp_socket(f, "qmp-libxl-70");
    char path[4200], chardev[128], want[4400];
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct pollfd pfd = { .events = POLLIN };
    struct stat st;
    int dm, c;
    run_result r;

    /* libxl__pre_open_qmp_socket for the DM: unlink, bind anew. */
    snprintf(path, sizeof(path), "%s/qmp-libxl-70", f->s.dir);
    assert_int_equal(unlink(path), 0);
    dm = qmp_socket(f, "qmp-libxl-70");
    snprintf(chardev, sizeof(chardev),
             "socket,id=libxl-cmd,fd=%d,server=on,wait=off", probe);
    char *const args[] = { PROBE_ARGS(chardev), NULL };

    setenv("FAKE_QEMU_UNLINK", "1", 1);
    run_wrapper(f, "10.0", args, &r);
    unsetenv("FAKE_QEMU_UNLINK");
    expect_ran(&r);
    expect_same_fd(&r, probe);
    /* The probe did try, as QEMU does, and found nothing to remove. */
    snprintf(want, sizeof(want), "unlink=%s:%d", path, ENOENT);
    if (!xlrt_has_line(r.out, want))
        fail_msg("want '%s':\n%s", want, r.out);
    /* The DM's socket still has its name (and no tmpfs of the probe's
     * covers the directory here), and it is the DM's: a connection by
     * the path, as libxl's, reaches it. */
    if (stat(path, &st) < 0)
        fail_msg("the probe's exit removed the DM's socket %s", path);
    assert_true(S_ISSOCK(st.st_mode));
    assert_true(strlen(path) < sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(c >= 0);
    assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
    pfd.fd = dm;
    assert_int_equal(poll(&pfd, 1, 5000), 1);
    run_result_dispose(&r);
    close(c);
    close(dm);
    close(probe);
}

/*
 * libvirt's libxl driver runs "<emulator> -help" as root to tell
 * qemu-xen from qemu-traditional (libxlDomainGetEmulatorType): QEMU's
 * own text answers it, on stdout, and nothing is planned for a domain.
 */
static void test_libvirt_help_answered_by_qemu(void **state)
{
    static const struct {
        const char *help, *version;
    } cases[] = { { "7.2", "QEMU emulator version 7.2." },
                  { "10.0", "QEMU emulator version 10.0." } };
    fixture *f = *state;
    char *const args[] = { "-help", NULL };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        run_result r;

        run_wrapper(f, cases[i].help, args, &r);
        if (exit_code(&r) != 0)
            fail_msg("wrapper exit %d, stderr:\n%s", exit_code(&r), r.err);
        if (!strstr(r.out, cases[i].version))
            fail_msg("QEMU %s's -help text not on stdout:\n%s", cases[i].help,
                     r.out);
        if (!strstr(r.err, "libvirt's look at the emulator"))
            fail_msg("no notice line in stderr:\n%s", r.err);
        run_result_dispose(&r);
    }
}

/* "-version" likewise: QEMU in place, as root, argv unchanged but for
 * argv[0], and none of the caller's descriptors above 2. */
static void test_libvirt_version_root_no_fds(void **state)
{
    fixture *f = *state;
    int stray = open("/dev/null", O_RDWR); /* inheritable: closed */
    char *const args[] = { "-version", NULL };
    char want[4200];
    run_result r;

    assert_true(stray > 2);
    run_wrapper(f, "10.0", args, &r);
    expect_args(&r, "-version");
    snprintf(want, sizeof(want), "arg=%s", f->fake);
    assert_true(xlrt_has_line(r.out, want));
    assert_true(xlrt_has_line(r.out, "ids=0,0,0:0,0,0"));
    if (!xlrt_has_line(r.out, "fds=0,1,2"))
        fail_msg("descriptors leaked to QEMU:\n%s", r.out);
    run_result_dispose(&r);
    close(stray);
}

/* Only "-help" or "-version" alone: anything more or else without
 * -xen-domid is refused, and QEMU never runs. */
static void test_libvirt_probe_shape_exact(void **state)
{
    fixture *f = *state;
    const char *const cases[][3] = {
        { "-help", "-version" },
        { "-version", "-help" },
        { "-help", "-S" },
        { "--help=x" },
        { "-helpx" },
        { "help" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        refused(f, "10.0", (char *const *)cases[i], "no -xen-domid");
    }
}

/* Only that exact line is the probe: anything else without -xen-domid
 * is refused as before, and QEMU never runs. */
static void test_libxl_probe_shape_exact(void **state)
{
    fixture *f = *state;
    int qmp = qmp_socket(f, "qmp-shape");
    char ok[128], lead0[128], two[128], closed[128];

    snprintf(ok, sizeof(ok), "socket,id=libxl-cmd,fd=%d,server=on,wait=off",
             qmp);
    snprintf(lead0, sizeof(lead0),
             "socket,id=libxl-cmd,fd=0%d,server=on,wait=off", qmp);
    snprintf(two, sizeof(two), "socket,id=libxl-cmd,fd=2,server=on,wait=off");
    snprintf(closed, sizeof(closed),
             "socket,id=libxl-cmd,fd=%d,server=on,wait=off", qmp + 40);
    const char *const cases[][16] = {
        { PROBE_ARGS(ok), "-name", "x" },    /* an option more */
        { PROBE_ARGS(ok), "-runas", "0:0" }, /* a uid switch more */
        { PROBE_ARGS(ok), "-xen-domid-restrict" },
        { PROBE_ARGS(ok), "-S" }, /* even a repeat */
        { "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
          "none,accel=xen", "-chardev", ok }, /* no -mon */
        { "-no-user-config", "-S", "-nodefaults", "-nographic", "-machine",
          "none,accel=xen", "-chardev", ok, "-mon",
          "chardev=libxl-cmd,mode=control" }, /* order */
        { "--S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
          "none,accel=xen", "-chardev", ok, "-mon",
          "chardev=libxl-cmd,mode=control" }, /* spelling */
        { PROBE_ARGS(lead0) },
        { PROBE_ARGS(two) },
        { PROBE_ARGS("socket,id=libxl-cmd,fd=x,server=on,wait=off") },
        { PROBE_ARGS("socket,id=libxl-cmd,path=/x,server=on,wait=off") },
        { "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
          "xenfv,accel=xen", "-chardev", ok, "-mon",
          "chardev=libxl-cmd,mode=control" }, /* a machine */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        refused(f, "10.0", (char *const *)cases[i], "no -xen-domid");
    }
    /* The probe's shape, but the descriptor libxl names is not open. */
    char *const shut[] = { PROBE_ARGS(closed), NULL };
    refused(f, "10.0", shut, "the QMP descriptor");
    close(qmp);
}

static void make_chroot(fixture *f, unsigned domid, char *dir, size_t n)
{
    snprintf(dir, n, "%s/qemu-root-%u", f->s.dir, domid);
    assert_int_equal(mkdir(dir, 0), 0);
}

/*
 * libxl 4.20's DM line for a dm_restrict HVM guest on QEMU 10.0, as
 * libxl__build_device_model_args_new orders it, restoring (-incoming):
 * passed through unchanged, both descriptors kept.
 */
static void test_libxl420_dm_line(void **state)
{
    fixture *f = *state;
    int qmp = qmp_socket(f, "qmp-73");
    int incoming = open("/dev/null", O_RDONLY);
    char chardev[128], inc[32], dir[4096], chroot[4200], want[128];
    char *joined;
    run_result r;

    make_chroot(f, 73, dir, sizeof(dir));
    snprintf(chardev, sizeof(chardev),
             "socket,id=libxl-cmd,fd=%d,server=on,wait=off", qmp);
    snprintf(inc, sizeof(inc), "fd:%d", incoming);
    snprintf(chroot, sizeof(chroot), "chroot=%s", dir);
    char *const args[] = {
        "-xen-domid",
        "73",
        "-no-shutdown",
        "-chardev",
        chardev,
        "-S",
        "-mon",
        "chardev=libxl-cmd,mode=control",
        "-chardev",
        "socket,id=libxenstat-cmd,path=/run/xen/qmp-libxenstat-73,"
        "server=on,wait=off",
        "-mon",
        "chardev=libxenstat-cmd,mode=control",
        "-nodefaults",
        "-no-user-config",
        "-name",
        "guest",
        "-nographic",
        "-xen-domid-restrict",
        "-run-with",
        chroot,
        "-incoming",
        inc,
        "-machine",
        "xenfv,suppress-vmdesc=on",
        "-m",
        "128",
        "-run-with",
        "user=4200073:4200073",
        NULL,
    };

    joined = join_args(args);
    run_wrapper(f, "10.0", args, &r);
    expect_args(&r, "%s", joined);
    snprintf(want, sizeof(want), "fds=0,1,2,%d,%d", qmp, incoming);
    assert_true(xlrt_has_line(r.out, want));
    expect_same_fd(&r, qmp);
    expect_same_fd(&r, incoming);
    assert_true(xlrt_has_line(r.out, "ids=0,0,0:4200073,4200073,4200073"));
    /* Complete: -help was not asked. */
    assert_null(strstr(r.out, "QEMU emulator version"));
    run_result_dispose(&r);

    /* Its fallback when the probe failed (-chroot, -runas), on 7.2;
     * and QEMU 9.0's mix, -run-with chroot= with -runas. */
    char *const fallback[] = { "-xen-domid",      "73", "-xen-domid-restrict",
                               "-chroot",         dir,  "-runas",
                               "4200073:4200073", NULL };
    char *const mixed[] = { "-xen-domid", "73",     "-run-with",
                            chroot,       "-runas", "4200073:4200073",
                            NULL };
    char *const *lines[] = { fallback, mixed };
    for (size_t i = 0; i < 2; i++) {
        char *j = join_args(lines[i]);
        run_wrapper(f, "7.2", lines[i], &r);
        expect_args(&r, "%s", j);
        free(j);
        run_result_dispose(&r);
    }
    free(joined);
    close(incoming);
    close(qmp);
    assert_int_equal(rmdir(dir), 0);
}

/* What a line lacks is added as -run-with when QEMU 10.0 is installed,
 * and a line that uses -run-with never gets -runas or -chroot. */
static void test_run_with_added(void **state)
{
    fixture *f = *state;
    char dir[4096], chroot[4200];
    run_result r;

    make_chroot(f, 74, dir, sizeof(dir));
    snprintf(chroot, sizeof(chroot), "chroot=%s", dir);

    /* Nothing given: both, as two -run-with. */
    char *const bare[] = { "-xen-domid", "74", "-S", NULL };
    ran_with(f, "10.0", bare,
             "-xen-domid 74 -S -run-with user=4200074:4200074 -run-with %s",
             chroot);

    /* libxl's -run-with chroot= without a user: user= added. */
    char *const no_user[] = { "-xen-domid", "74", "-run-with", chroot, NULL };
    ran_with(f, "10.0", no_user,
             "-xen-domid 74 -run-with %s -run-with user=4200074:4200074",
             chroot);

    /* The same on a QEMU whose -help offers only -runas: refused, not
     * switched to -runas. */
    run_wrapper(f, "7.2", no_user, &r);
    expect_refused(&r, "uses -run-with but");
    assert_non_null(strstr(r.err, "not adding -runas"));
    run_result_dispose(&r);

    /* A -run-with user= line lacking the chroot, on 7.2: no -chroot. */
    char *const no_chroot[] = { "-xen-domid", "74", "-run-with",
                                "user=4200074:4200074", NULL };
    refused(f, "7.2", no_chroot, "not adding -chroot");
    ran_with(f, "10.0", no_chroot,
             "-xen-domid 74 -run-with user=4200074:4200074 -run-with %s",
             chroot);

    /* QEMU 10.0 offers no -runas: a 4.17-style line lacking the uid
     * switch gets -run-with user=, and none offered is refused. */
    refused(f, "none", bare, "offers neither -runas nor -run-with user=");
    assert_int_equal(rmdir(dir), 0);
}

static void test_run_with_refused(void **state)
{
    fixture *f = *state;
    static const refusal cases[] = {
        /* another domain's uid */
        { { "-xen-domid", "75", "-run-with", "user=4200076:4200076" },
          "runs it as 4200076:4200076, but this domain's device model ids "
          "are 4200075:4200075" },
        { { "-xen-domid", "75", "-run-with", "chroot=/x", "-run-with",
            "user=4200075:4200075", "-run-with", "async-teardown=on" },
          "-run-with given 3 times" },
        { { "-xen-domid", "75", "-run-with", "user=4200075:4200075",
            "-run-with", "user=4200075:4200075" },
          "gives -run-with user= twice" },
        { { "-xen-domid", "75", "-run-with", "chroot=/x", "-run-with",
            "chroot=/x,user=4200075:4200075" },
          "gives -run-with chroot= twice" },
        { { "-xen-domid", "75", "-run-with",
            "async-teardown=on,user=4200075:4200075", "-run-with",
            "noasync-teardown" },
          "gives -run-with async-teardown= twice" },
        /* "user" alone is user=on to QEMU */
        { { "-xen-domid", "75", "-run-with", "user" },
          "user without a value" },
        { { "-xen-domid", "75", "-run-with", "nochroot" },
          "chroot without a value" },
        { { "-xen-domid", "75", "-runas", "4200075:4200075", "-run-with",
            "user=4200075:4200075" },
          "names the user to run as twice" },
        { { "-xen-domid", "75", "-run-with", "user=xen-qemuuser-range-base" },
          "not as uid:gid" },
    };

    refused_all(f, "10.0", cases, sizeof(cases) / sizeof(cases[0]));
}

/* ---------- add_dm_restrict: a line no restriction was asked for ---------- */

/* How many times arg is in the fake's argv. */
static unsigned count_arg(const char *out, const char *arg)
{
    char want[256];
    unsigned n = 0;

    snprintf(want, sizeof(want), "arg=%s\n", arg);
    for (const char *p = strstr(out, want); p; p = strstr(p + 1, want))
        if (p == out || p[-1] == '\n')
            n++;
    return n;
}

/*
 * libvirt's line (libxl without dm_restrict): no uid switch, no chroot,
 * no -xen-domid-restrict.  With the key off (the default) only the uid
 * switch is added, no chroot is made, and the one line says what was
 * added and that -xen-domid-restrict was not.
 */
static void test_dm_restrict_key_off(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "76", "-S", "-name", "lv", NULL };
    char dir[4096];
    struct stat st;
    run_result r;

    run_wrapper(f, "7.2", args, &r);
    expect_args(&r, "-xen-domid 76 -S -name lv -runas "
                    "4200076:4200076");
    if (!strstr(r.err, "added: -runas 4200076:4200076; not "
                       "-xen-domid-restrict (add_dm_restrict = 0)"))
        fail_msg("no line saying what was added:\n%s", r.err);
    snprintf(dir, sizeof(dir), "%s/qemu-root-76", f->s.dir);
    assert_int_equal(lstat(dir, &st), -1);
    /* Nothing was restricted: the vkbd is QEMU's to serve. */
    assert_null(strstr(r.err, "vkbd"));
    run_result_dispose(&r);
}

/* The key on: -xen-domid-restrict and a chroot libxl's way, once. */
static void test_dm_restrict_key_on(void **state)
{
    fixture *f = *state;
    char *const bare[] = { "-xen-domid", "77", "-S", NULL };
    char dir[4096], want[8400];
    struct stat st;
    run_result r;

    write_conf(f, "uid_switch = \"runas\"\nadd_dm_restrict = 1\n");
    snprintf(dir, sizeof(dir), "%s/qemu-root-77", f->s.dir);

    /* QEMU 7.2, no chroot yet: made root's, mode 0000, empty. */
    run_wrapper(f, "7.2", bare, &r);
    expect_args(&r,
                "-xen-domid 77 -S -runas 4200077:4200077 -chroot %s "
                "-xen-domid-restrict",
                dir);
    snprintf(want, sizeof(want),
             "added: -runas 4200077:4200077 -chroot %s "
             "-xen-domid-restrict (chroot made)",
             dir);
    if (!strstr(r.err, want))
        fail_msg("stderr lacks '%s':\n%s", want, r.err);
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 07777, 0);
    /* The vkbd QEMU cannot serve restricted is looked for in xenstore
     * (none here: it says it could not look, and QEMU starts). */
    if (!strstr(r.err, "vkbd"))
        fail_msg("no word of the guest's vkbd:\n%s", r.err);
    run_result_dispose(&r);

    /* QEMU 10.0, the chroot there from the last start: used, not made. */
    run_wrapper(f, "10.0", bare, &r);
    expect_args(&r,
                "-xen-domid 77 -S -run-with user=4200077:4200077 -run-with "
                "chroot=%s -xen-domid-restrict",
                dir);
    assert_null(strstr(r.err, "chroot made"));
    run_result_dispose(&r);

    /* Given once already: not added twice. */
    char *const given[] = { "-xen-domid", "77", "-xen-domid-restrict", "-S",
                            NULL };
    run_wrapper(f, "7.2", given, &r);
    expect_args(&r,
                "-xen-domid 77 -xen-domid-restrict -S -runas 4200077:4200077 "
                "-chroot %s",
                dir);
    assert_int_equal(count_arg(r.out, "-xen-domid-restrict"), 1);
    run_result_dispose(&r);

    /* xl's dm_restrict line lacks nothing: unchanged, nothing logged. */
    char *const xl[] = { "-xen-domid",      "77", "-xen-domid-restrict",
                         "-chroot",         dir,  "-runas",
                         "4200077:4200077", NULL };
    char *j = join_args(xl);
    run_wrapper(f, "7.2", xl, &r);
    expect_args(&r, "%s", j);
    assert_null(strstr(r.err, "added:"));
    free(j);
    run_result_dispose(&r);

    /* Read as -name's value, it is no flag to QEMU: added at the end. */
    char *const as_value[] = { "-xen-domid", "77", "-name",
                               "-xen-domid-restrict", NULL };
    run_wrapper(f, "7.2", as_value, &r);
    expect_ran(&r);
    assert_int_equal(count_arg(r.out, "-xen-domid-restrict"), 2);
    run_result_dispose(&r);
    assert_int_equal(rmdir(dir), 0);
}

/* What is appended must not become the value of an option the line ends
 * with ("-name -runas" names the guest "-runas" and switches nothing). */
static void test_added_after_trailing_option_refused(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "78", "-S", "-name", NULL };

    refused(f, "7.2", args,
            "ends with -name, which may take what would be added");
}

/* Exec mode starts QEMU without root: it could not open Xen's devices
 * before restricting itself. */
static void test_dm_restrict_needs_runas(void **state)
{
    fixture *f = *state;
    char *const args[] = { "-xen-domid", "79", "-S", NULL };

    write_conf(f, "add_dm_restrict = 1\n");
    refused(f, "7.2", args,
            "add_dm_restrict = 1 needs uid_switch = \"runas\"");
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_passthrough_libxl_cmdline),
        T(test_runas_added),
        T(test_runas_range_base_gid),
        T(test_runas_mismatch_refused),
        T(test_chroot_mismatch_refused),
        T(test_bad_domid_refused),
        T(test_qemu_path_checked),
        T(test_exec_mode_with_runas_refused),
        T(test_exec_mode),
        T(test_busy_uid_refused),
        T(test_libxl_probe_runs_unchanged),
        T(test_libxl_probe_shape_exact),
        T(test_libxl_probe_exit_keeps_dm_socket),
        T(test_libvirt_help_answered_by_qemu),
        T(test_libvirt_version_root_no_fds),
        T(test_libvirt_probe_shape_exact),
        T(test_libxl420_dm_line),
        T(test_run_with_added),
        T(test_run_with_refused),
        T(test_dm_restrict_key_off),
        T(test_dm_restrict_key_on),
        T(test_added_after_trailing_option_refused),
        T(test_dm_restrict_needs_runas),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
