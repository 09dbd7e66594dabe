/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * qemu_dm_restrict.c - qemu-dm-restrict, the device model xl runs: it
 * restricts itself with libxlreaper's plan and execs QEMU in place.
 *
 * In xl.cfg (qemu-xen only):
 *
 *     device_model_version = "qemu-xen"
 *     device_model_override = "/usr/libexec/xl-reaper/qemu-dm-restrict"
 *     dm_restrict = 1
 *
 * and in /etc/xen/xl-reaper.conf, for a QEMU that must open Xen's
 * devices as root before it drops privileges:
 *
 *     uid_switch = "runas"
 *     dm_gid_mode = "range-base"     (the gid libxl passes in -runas)
 *
 * libxl runs us with QEMU's arguments, after its own preexec
 * (libxl__local_dm_preexec_restrict: setsid, unshare of the mount and IPC
 * namespaces, its rlimits), with stdin on /dev/null and stdout/stderr on
 * /var/log/xen/qemu-dm-<name>.log, where our messages go.  We are root.
 * The same pid becomes QEMU, so the pid libxl records in xenstore stays
 * the DM's.  What is refused: a missing, repeated or out-of-range
 * -xen-domid, a -runas/-run-with user= that is not exactly this domain's
 * uid:gid, a -run-with given more than twice or naming a key twice, a
 * qemu_path that is not an executable file (or is this wrapper), and
 * whatever the spawn itself refuses (a busy uid, ...).
 *
 * The DM line in each spelling libxl uses: 4.17 gives -chroot DIR and
 * -runas UID:GID; 4.20+ gives -run-with chroot=DIR and, as a second
 * option, -run-with user=UID:GID when its probe found QEMU takes them
 * (QEMU 9.1+; 10.0 has neither -chroot nor -runas), besides
 * -xen-domid D -no-shutdown, -chardev ...,fd=N, -S, -xen-domid-restrict
 * and -incoming fd:N on restore.  A uid switch or chroot the line lacks
 * is added in the form the QEMU's -help lists, and only ever as
 * -run-with when the line already uses -run-with.
 *
 * libxl 4.20+ also runs us first, as root, as its QEMU option probe:
 *
 *     -S -no-user-config -nodefaults -nographic -machine none,accel=xen
 *     -chardev socket,id=libxl-cmd,fd=N,server=on,wait=off
 *     -mon chardev=libxl-cmd,mode=control
 *
 * exactly that and nothing else (xlreaper_libxl_probe.c).  It is for no
 * domain: we exec qemu_path in place with the same arguments, keeping
 * only 0-2 and N open, as root (libxl runs the probe as root without a
 * wrapper too), and log one line saying so.
 *
 * libvirt's libxl driver, given us as a domain's <emulator>, runs
 * "<emulator> -help" as root first to learn the emulator's type
 * (xlreaper_libvirt_probe.c): that line, or "-version", alone, is
 * answered by exec'ing qemu_path with it, as root, 0-2 open, one line
 * logged.  Any other line without -xen-domid is refused.  libvirt's DM
 * line has no uid switch, chroot or -xen-domid-restrict (libvirt asks
 * libxl for no dm_restrict): the uid switch is added, and with
 * add_dm_restrict = 1 the other two, in one line logged.
 *
 * The config file is $XL_REAPER_CONFIG when set (it must then exist),
 * else /etc/xen/xl-reaper.conf, whose absence means the defaults.
 *
 * Exit: 1 when refused (bad input or config, a busy uid, the lock not
 * had in time), 4 when a system call failed, while preparing (the lock
 * file, the cgroup) or in a step of the restriction; QEMU's own status
 * otherwise.  Either way the DM was not started.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xlreaper.h"

#define PROG "qemu-dm-restrict"
#define EXIT_REFUSED 1
#define EXIT_FAILED 4

/* One line in the DM's log, "qemu-dm-restrict: error: ...", as the
 * library's own lines are (xlreaper_ctx_set_progname). */
static void say_at(const char *level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say_at(const char *level, const char *fmt, ...)
{
    va_list al;

    fprintf(stderr, PROG ": %s: ", level);
    va_start(al, fmt);
    vfprintf(stderr, fmt, al);
    va_end(al);
    fputc('\n', stderr);
}

#define say(...) say_at("error", __VA_ARGS__)

/*
 * Run by hand with --version or --help alone.  libxl never passes
 * either alone (its lines always hold -xen-domid, or are its probe), so
 * nothing QEMU would have answered is taken from it.
 */
static bool own_option(int argc, char **argv)
{
    if (argc != 2)
        return false;
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf(PROG " %s\n", XLREAPER_VERSION);
        return true;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: " PROG " QEMU-ARGUMENTS...   (run by libxl as "
               "device_model_override)\n"
               "       " PROG " --version | --help\n"
               "\n"
               "  -V, --version  print the version\n"
               "  -h, --help     this text\n"
               "\n"
               "Checks the device model line libxl gives, restricts itself "
               "(uid, gid,\n"
               "groups, rlimits, no_new_privs, descriptors, namespaces, "
               "cgroup) and\n"
               "execs qemu_path in place.  Config: $XL_REAPER_CONFIG, else "
               "%s.\n"
               "exit: 1 refused, 4 a system call failed; QEMU's own "
               "status otherwise\n",
               XLREAPER_DEFAULT_CONFIG);
        return true;
    }
    return false;
}

/* QEMU takes -opt and --opt alike; "-xen-domid=5" it does not take. */
static bool is_domid_option(const char *a)
{
    if (a[0] != '-')
        return false;
    a += a[1] == '-' ? 2 : 1;
    return !strcmp(a, "xen-domid") || !strncmp(a, "xen-domid=", 10);
}

static int find_domid(int argc, char **argv, uint32_t *domid_r)
{
    const char *found = NULL;

    for (int i = 1; i < argc; i++) {
        if (!is_domid_option(argv[i]))
            continue;
        if (strchr(argv[i], '=')) {
            say("'%s': QEMU takes -xen-domid N as two arguments", argv[i]);
            return -1;
        }
        if (found) {
            say("-xen-domid given twice (%s and %s): which domain is "
                "this?",
                found, argv[i + 1] ? argv[i + 1] : "nothing");
            return -1;
        }
        if (i + 1 >= argc) {
            say("-xen-domid without a value");
            return -1;
        }
        found = argv[++i];
    }
    if (!found) {
        say("no -xen-domid: not started by libxl for a domain?");
        return -1;
    }
    if (xlreaper_domid_parse(found, domid_r)) {
        say("-xen-domid '%s': expected a domid from 1 to %u", found,
            xlreaper_max_domid());
        return -1;
    }
    return 0;
}

/* qemu_path must be an executable file, and not ourselves: that would
 * loop until the lock or the uid check stopped it. */
static int check_qemu(const char *path)
{
    struct stat st, self;
    char why[PATH_MAX + 128];
    int rc;

    if (stat(path, &st) < 0) {
        say("qemu_path %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
        say("qemu_path %s is not an executable file", path);
        return -1;
    }
    /* Run as root (libxl's option probe) and then as the DM: whoever
     * may replace it, or a directory above it, runs code as root. */
    rc = xlreaper_path_trust(path, 0, NULL, why, sizeof(why));
    if (rc) {
        say("qemu_path %s: %s; refusing it", path, rc == 1 ? "absent" : why);
        return -1;
    }
    if (stat("/proc/self/exe", &self) == 0 && self.st_dev == st.st_dev &&
        self.st_ino == st.st_ino) {
        say("qemu_path %s is this wrapper", path);
        return -1;
    }
    return 0;
}

/*
 * libxl 4.20's option probe: QEMU as root with libxl's arguments and its
 * QMP socket, for no domain (see xlreaper_libxl_probe.c).  Only
 * failures return.
 */
static int run_probe(xlreaper_ctx *ctx, const char *qemu, char **argv, int fd)
{
    int rc;

    say_at("notice",
           "libxl's QEMU option probe (no -xen-domid, QMP on descriptor %d): "
           "exec %s as root, arguments unchanged, no domain uid",
           fd, qemu);
    rc = xlreaper_libxl_probe_exec(ctx, qemu, argv);
    say("probe: %s: %s not started", xlreaper_strerror(rc), qemu);
    return rc == XLREAPER_ERROR_FAIL ? EXIT_FAILED : EXIT_REFUSED;
}

/* libvirt's "-help" or "-version" (see xlreaper_libvirt_probe.c): its
 * answer goes to stdout, so our line goes to stderr.  Only failures
 * return. */
static int run_libvirt_probe(xlreaper_ctx *ctx, const char *qemu, char **argv)
{
    int rc;

    say_at("notice",
           "%s (libvirt's look at the emulator): exec %s as "
           "root, no domain uid",
           argv[1], qemu);
    rc = xlreaper_libvirt_probe_exec(ctx, qemu, argv);
    say("%s: %s: %s not started", argv[1], xlreaper_strerror(rc), qemu);
    return rc == XLREAPER_ERROR_FAIL ? EXIT_FAILED : EXIT_REFUSED;
}

int main(int argc, char **argv)
{
    xentoollog_logger_stdiostream *lg = NULL;
    xlreaper_spawn_plan *plan = NULL;
    const xlreaper_config *cfg;
    xlreaper_ctx *ctx = NULL;
    const char *config = getenv("XL_REAPER_CONFIG");
    char **qargv = NULL;
    uint32_t domid = 0;
    int rc, ret = EXIT_REFUSED, probe_fd = -1;
    bool probe, libvirt_probe;

    if (argc < 1)
        return EXIT_REFUSED;
    if (own_option(argc, argv))
        return 0;
    probe = xlreaper_libxl_probe_line(argv, &probe_fd) == 1;
    libvirt_probe = xlreaper_libvirt_probe_line(argv) == 1;
    probe = probe || libvirt_probe;
    if (!probe && find_domid(argc, argv, &domid) < 0)
        return EXIT_REFUSED;
    lg = xtl_createlogger_stdiostream(stderr, XTL_NOTICE, 0);
    if (!lg || xlreaper_ctx_alloc(&ctx, (xentoollog_logger *)lg)) {
        say("out of memory");
        goto out;
    }
    xlreaper_ctx_set_progname(ctx, PROG);
    if (config && !*config)
        config = NULL;
    rc = xlreaper_config_load(ctx, config,
                              config ? XLREAPER_CONFIG_MUST_EXIST : 0);
    if (rc) {
        if (probe)
            say("probe: config %s: %s",
                config ? config : XLREAPER_DEFAULT_CONFIG,
                xlreaper_strerror(rc));
        else
            say("domid %u: config %s: %s", domid,
                config ? config : XLREAPER_DEFAULT_CONFIG,
                xlreaper_strerror(rc));
        goto out;
    }
    /* Until the execve, this process may reap a stale uid (reap_stale)
     * and holds the lock: out of the OOM killer's reach, where the
     * kernel allows it; QEMU then gets dm_oom_score_adj (the spawn). */
    if (!probe)
        xlreaper_oom_protect(ctx);
    cfg = xlreaper_config_get(ctx);
    if (check_qemu(cfg->qemu_path) < 0)
        goto out;
    if (libvirt_probe) {
        ret = run_libvirt_probe(ctx, cfg->qemu_path, argv);
        goto out;
    }
    if (probe) {
        ret = run_probe(ctx, cfg->qemu_path, argv, probe_fd);
        goto out;
    }

    /* QEMU's arguments exactly as libxl gave them, under QEMU's name. */
    qargv = calloc((size_t)argc + 1, sizeof(char *));
    if (!qargv) {
        say("out of memory");
        goto out;
    }
    qargv[0] = (char *)cfg->qemu_path;
    for (int i = 1; i < argc; i++)
        qargv[i] = argv[i];

    rc = xlreaper_spawn_plan_new(ctx, domid, cfg->qemu_path, qargv, &plan);
    if (rc) {
        say("domid %u: %s: refusing to start the device model", domid,
            xlreaper_strerror(rc));
        goto out;
    }
    rc = xlreaper_spawn_exec(ctx, plan, 0);
    /* Only failures return. */
    say("domid %u: %s: device model not started", domid,
        xlreaper_strerror(rc));
    ret = rc == XLREAPER_ERROR_FAIL ? EXIT_FAILED : EXIT_REFUSED;

out:
    xlreaper_spawn_plan_free(plan);
    free(qargv);
    xlreaper_ctx_free(ctx);
    if (lg)
        xtl_logger_destroy((xentoollog_logger *)lg);
    return ret;
}
