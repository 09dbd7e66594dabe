/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_args.c - the QEMU command line parser (descriptors to keep,
 * -runas / -run-with, -chroot), the uid:gid parser, the -help feature
 * scan and libxl 4.20's probe line: table-driven, with every kind of
 * malformed input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_internal.h"
#include "xlreaper_qemu.h"
#include "xlrt_spawn.h"

static xlreaper_ctx *ctx;

static int setup(void **state)
{
    (void)state;
    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_capture_logger()), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xlreaper_ctx_free(ctx);
    return 0;
}

#define MAXA 8

/* "3,5,7" of the parsed keep-list. */
static void keep_string(const xlreaper__qemu_cmdline *cl, char *buf, size_t n)
{
    size_t l = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < cl->num_keep; i++)
        l += (size_t)snprintf(buf + l, n - l, "%s%d", i ? "," : "",
                              cl->keep[i]);
}

static int parse(const char *const args[MAXA], xlreaper__qemu_cmdline *cl)
{
    char *argv[MAXA + 2];
    int n = 0;

    argv[n++] = (char *)"qemu";
    for (int i = 0; i < MAXA && args[i]; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    return xlreaper__qemu_cmdline_parse(ctx, 7, argv, cl);
}

static void test_keep_fds_table(void **state)
{
    static const struct {
        const char *args[MAXA];
        const char *keep; /* NULL: refused */
    } cases[] = {
        /* libxl 4.17's forms */
        { { "-chardev", "socket,id=libxl-cmd,fd=7,server=on,wait=off", "-mon",
            "chardev=libxl-cmd,mode=control" },
          "7" },
        { { "-incoming", "fd:9" }, "9" },
        /* QEMU's others */
        { { "-add-fd", "fd=12,set=2,opaque=rdonly:/dev/null" }, "12" },
        { { "-netdev", "tap,id=n,fds=20:21:22,vhostfds=23:24" },
          "20,21,22,23,24" },
        { { "-netdev", "tap,id=n,fd=5,vhostfd=6" }, "5,6" },
        { { "-netdev", "socket,id=n,fd=8" }, "8" },
        { { "-netdev", "stream,id=n,addr.type=fd,addr.str=30" }, "30" },
        { { "-netdev", "dgram,id=n,local.type=fd,local.str=31,"
                       "remote.type=fd,remote.str=33" },
          "31,33" },
        { { "-netdev", "stream,id=n,addr.type=inet,addr.str=32" }, "" },
        { { "-netdev", "stream,id=n,addr.str=34,addr.type=fd" }, "34" },
        { { "-net", "tap,fd=35" }, "35" },
        { { "-device", "vfio-pci,fd=40" }, "40" },
        { { "-object", "memory-backend-foo,id=m,fd=41" }, "41" },
        { { "--chardev", "socket,fd=42" }, "42" },
        { { "-add-fd", "fd=50", "-add-fd", "fd=3", "-chardev",
            "socket,fd=50" },
          "3,50" },
        { { "-chardev", "socket,fd=0" }, "" },
        { { "-chardev", "socket,fd=2" }, "" },
        { { "-chardev", "socket,fd=0" }, "" },
        /* not descriptors, or not ours to read */
        { { "-name", "guest,fd=99" }, "" },
        { { "-append", "fd=98", "-name", "fd:97" }, "" },
        { { "-chardev", "socket,path=/a,,fd=97" }, "" },
        { { "-chardev", "socket,path=/a,,,fd=96" }, "96" },
        { { "-chardev", "{\"backend\":\"socket\",\"fd\":\"5\"}" }, "" },
        { { "-incoming", "tcp:0:4444" }, "" },
        { { "-incoming", "defer" }, "" },
        { { "-chardev", "socket,fdx=3,xfd=4,fd_=5" }, "" },
        { { "-S", "-nodefaults" }, "" },
        { { NULL }, "" },
        /* malformed: refused */
        { { "-chardev", "socket,fd=abc" }, NULL },
        { { "-add-fd", "fd=010,set=1" }, NULL }, /* 8 to QEMU (base 0) */
        { { "-chardev", "socket,fd=007" }, NULL },
        { { "-chardev", "socket,fd=0x3" }, NULL },
        { { "-chardev", "socket,fd=" }, NULL },
        { { "-chardev", "socket,fd=-1" }, NULL },
        { { "-chardev", "socket,fd=+3" }, NULL },
        { { "-chardev", "socket,fd= 3" }, NULL },
        { { "-chardev", "socket,fd=3x" }, NULL },
        { { "-chardev", "socket,fd=2147483648" }, NULL },
        { { "-chardev", "socket,fd=99999999999999999999" }, NULL },
        { { "-netdev", "tap,fds=1::2" }, NULL },
        { { "-netdev", "tap,fds=:4" }, NULL },
        { { "-netdev", "tap,fds=4:" }, NULL },
        { { "-netdev", "tap,vhostfds=" }, NULL },
        { { "-netdev", "tap,fds=4:x" }, NULL },
        { { "-netdev", "stream,addr.type=fd,addr.str=name" }, NULL },
        { { "-netdev", "stream,addr.type=fd,addr.str=12345678901234567" },
          NULL },
        { { "-incoming", "fd:" }, NULL },
        { { "-incoming", "fd:x" }, NULL },
        { { "-chardev" }, NULL },
        { { "-incoming" }, NULL },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        xlreaper__qemu_cmdline cl;
        char got[512];
        int rc = parse(cases[i].args, &cl);

        if (!cases[i].keep) {
            if (rc != XLREAPER_ERROR_INVAL)
                fail_msg("case %zu (%s %s): rc %d, want refused", i,
                         cases[i].args[0], cases[i].args[1], rc);
            continue;
        }
        if (rc)
            fail_msg("case %zu (%s %s): rc %d", i, cases[i].args[0],
                     cases[i].args[1], rc);
        keep_string(&cl, got, sizeof(got));
        if (strcmp(got, cases[i].keep))
            fail_msg("case %zu (%s %s): kept '%s', want '%s'", i,
                     cases[i].args[0], cases[i].args[1], got, cases[i].keep);
        /* A restore's state descriptor, which the "running" watcher
         * waits for QEMU to close (xlreaper_dm_ready.c). */
        if (cl.incoming_fd !=
            (cases[i].args[0] && !strcmp(cases[i].args[0], "-incoming") &&
                     *cases[i].keep
                 ? atoi(cases[i].keep)
                 : 0))
            fail_msg("case %zu (%s %s): incoming_fd %d", i, cases[i].args[0],
                     cases[i].args[1], cl.incoming_fd);
    }
}

static void test_keep_fds_bounded(void **state)
{
    char *argv[2 * XLREAPER__MAX_KEEP_FDS + 4],
        vals[XLREAPER__MAX_KEEP_FDS + 1][32];
    xlreaper__qemu_cmdline cl;
    int n = 0;
    (void)state;

    argv[n++] = (char *)"qemu";
    for (int i = 0; i <= XLREAPER__MAX_KEEP_FDS; i++) {
        snprintf(vals[i], sizeof(vals[i]), "fd=%d", 100 + i);
        argv[n++] = (char *)"-add-fd";
        argv[n++] = vals[i];
    }
    argv[n] = NULL;
    assert_int_equal(xlreaper__qemu_cmdline_parse(ctx, 7, argv, &cl),
                     XLREAPER_ERROR_INVAL);
    /* One fewer fits. */
    argv[n - 2] = NULL;
    assert_int_equal(xlreaper__qemu_cmdline_parse(ctx, 7, argv, &cl), 0);
    assert_int_equal(cl.num_keep, XLREAPER__MAX_KEEP_FDS);
}

static void test_runas_chroot_table(void **state)
{
    static const struct {
        const char *args[MAXA];
        int rc;
        const char *runas;
        xlreaper__qemu_form rform;
        const char *chroot;
        xlreaper__qemu_form cform;
    } cases[] = {
        { { "-runas", "1:2" }, 0, "1:2", XLREAPER__QEMU_FORM_OPTION, NULL, 0 },
        { { "--runas", "1:2" },
          0,
          "1:2",
          XLREAPER__QEMU_FORM_OPTION,
          NULL,
          0 },
        { { "-run-with", "user=1:2" },
          0,
          "1:2",
          XLREAPER__QEMU_FORM_RUN_WITH,
          NULL,
          0 },
        { { "-run-with", "async-teardown=on,chroot=/x,user=3:4" },
          0,
          "3:4",
          XLREAPER__QEMU_FORM_RUN_WITH,
          "/x",
          XLREAPER__QEMU_FORM_RUN_WITH },
        { { "-run-with", "chroot=/a,,b" },
          0,
          NULL,
          0,
          "/a,b",
          XLREAPER__QEMU_FORM_RUN_WITH },
        { { "-run-with", "chroot=/c", "-run-with", "user=5:6" },
          0,
          "5:6",
          XLREAPER__QEMU_FORM_RUN_WITH,
          "/c",
          XLREAPER__QEMU_FORM_RUN_WITH },
        { { "-chroot", "/d", "-runas", "user" },
          0,
          "user",
          XLREAPER__QEMU_FORM_OPTION,
          "/d",
          XLREAPER__QEMU_FORM_OPTION },
        { { "-run-with", "async-teardown=on" }, 0, NULL, 0, NULL, 0 },
        { { "-name", "-runas" }, XLREAPER_ERROR_INVAL }, /* no value */
        { { "-runas", "1:2", "-runas", "1:2" }, XLREAPER_ERROR_INVAL },
        { { "-runas", "1:2", "-run-with", "user=1:2" }, XLREAPER_ERROR_INVAL },
        { { "-run-with", "user=1:2,user=1:2" }, XLREAPER_ERROR_INVAL },
        { { "-chroot", "/d", "-run-with", "chroot=/e" },
          XLREAPER_ERROR_INVAL },
        { { "-chroot", "/d", "-chroot", "/d" }, XLREAPER_ERROR_INVAL },
        { { "-run-with" }, XLREAPER_ERROR_INVAL },
        /* libxl 4.20: two -run-with, their keys combined */
        { { "-run-with", "chroot=/var/run/xen/qemu-root-7", "-incoming",
            "fd:9", "-run-with", "user=131079:131072" },
          0,
          "131079:131072",
          XLREAPER__QEMU_FORM_RUN_WITH,
          "/var/run/xen/qemu-root-7",
          XLREAPER__QEMU_FORM_RUN_WITH },
        /* QEMU 9.0 under libxl 4.20: -run-with chroot=, -runas */
        { { "-run-with", "chroot=/r", "-runas", "1:2" },
          0,
          "1:2",
          XLREAPER__QEMU_FORM_OPTION,
          "/r",
          XLREAPER__QEMU_FORM_RUN_WITH },
        { { "-run-with", "chroot=/r,", "-run-with", ",user=1:2" },
          0,
          "1:2",
          XLREAPER__QEMU_FORM_RUN_WITH,
          "/r",
          XLREAPER__QEMU_FORM_RUN_WITH },
        { { "-run-with", "async-teardown", "-run-with", "user=1:2" },
          0,
          "1:2",
          XLREAPER__QEMU_FORM_RUN_WITH,
          NULL,
          0 },
        /* a third -run-with, whatever it says */
        { { "-run-with", "chroot=/r", "-run-with", "user=1:2", "-run-with",
            "async-teardown=on" },
          XLREAPER_ERROR_INVAL },
        /* a key twice, in one option or across two */
        { { "-run-with", "chroot=/r", "-run-with", "chroot=/r" },
          XLREAPER_ERROR_INVAL },
        { { "-run-with", "user=1:2", "-run-with", "user=1:2" },
          XLREAPER_ERROR_INVAL },
        { { "-run-with", "async-teardown=on,async-teardown=off" },
          XLREAPER_ERROR_INVAL },
        { { "-run-with", "async-teardown=on", "-run-with",
            "noasync-teardown" },
          XLREAPER_ERROR_INVAL },
        /* "user" alone is user=on, "nochroot" chroot=off, to QemuOpts */
        { { "-run-with", "user" }, XLREAPER_ERROR_INVAL },
        { { "-run-with", "nouser" }, XLREAPER_ERROR_INVAL },
        { { "-run-with", "chroot" }, XLREAPER_ERROR_INVAL },
        { { "-run-with", "nochroot" }, XLREAPER_ERROR_INVAL },
        { { "-run-with", "averyveryverylongkeythatnoqemutakes=1" },
          XLREAPER_ERROR_INVAL },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *runas = cases[i].runas, *chroot = cases[i].chroot;
        xlreaper__qemu_cmdline cl;
        int rc = parse(cases[i].args, &cl);

        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d", i, rc, cases[i].rc);
        if (rc)
            continue;
        if ((runas == NULL) != (cl.runas == NULL) ||
            (runas && strcmp(cl.runas, runas)) ||
            (runas && cl.runas_form != cases[i].rform))
            fail_msg("case %zu: runas '%s' (form %d)", i,
                     cl.runas ? cl.runas : "(none)", cl.runas_form);
        if ((chroot == NULL) != (cl.chroot == NULL) ||
            (chroot && strcmp(cl.chroot, chroot)) ||
            (chroot && cl.chroot_form != cases[i].cform))
            fail_msg("case %zu: chroot '%s' (form %d)", i,
                     cl.chroot ? cl.chroot : "(none)", cl.chroot_form);
    }
}

static void test_parse_ids_table(void **state)
{
    static const struct {
        const char *s;
        int rc;
        uid_t uid;
        gid_t gid;
    } cases[] = {
        { "1:2", 0, 1, 2 },
        { "131077:131072", 0, 131077, 131072 },
        { "4294967294:4294967294", 0, 4294967294u, 4294967294u },
        /* QEMU reads these base 0: 010 is 8, 0x10 is 16 */
        { "01:02", -1 },
        { "010:8", -1 },
        { "8:010", -1 },
        { "04200061:4200061", -1 },
        { "0:0", 0, 0, 0 },
        { "4294967295:1", -1 }, /* (uid_t)-1: "unchanged" */
        { "1:4294967295", -1 },
        { "4294967296:1", -1 },
        { "99999999999:1", -1 },
        { ":1", -1 },
        { "1:", -1 },
        { "1", -1 },
        { "", -1 },
        { "a:b", -1 },
        { "user", -1 },
        { "1:2:3", -1 },
        { "-1:2", -1 },
        { "+1:2", -1 },
        { " 1:2", -1 },
        { "1:2 ", -1 },
        { "1 :2", -1 },
        { "0x1:2", -1 },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uid_t u = 77;
        gid_t g = 77;
        int rc = xlreaper__qemu_parse_ids(cases[i].s, &u, &g);

        if (rc != cases[i].rc)
            fail_msg("'%s': rc %d, want %d", cases[i].s, rc, cases[i].rc);
        if (!rc && (u != cases[i].uid || g != cases[i].gid))
            fail_msg("'%s': %u:%u", cases[i].s, u, g);
        if (rc && (u != 77 || g != 77))
            fail_msg("'%s': written on failure", cases[i].s);
    }
    assert_int_equal(xlreaper__qemu_parse_ids(NULL, NULL, NULL), -1);
}

static void test_help_features_table(void **state)
{
    static const struct {
        const char *text;
        unsigned want;
    } cases[] = {
        /* Debian 12's qemu-system-i386 7.2, as printed */
        { "-chroot dir     chroot to dir just before starting the VM\n"
          "-runas user     change to user id user just before starting the "
          "VM\n                user can be numeric uid:gid instead\n",
          XLREAPER__QEMU_HAS_RUNAS | XLREAPER__QEMU_HAS_CHROOT },
        /* QEMU 9.1 */
        { "-run-with [async-teardown=on|off][,chroot=dir][user=username|"
          "uid:gid]\n",
          XLREAPER__QEMU_HAS_RUN_WITH_USER |
              XLREAPER__QEMU_HAS_RUN_WITH_CHROOT },
        /* QEMU 8.1: -run-with chroot= only, -runas still */
        { "-run-with [async-teardown=on|off][,chroot=dir]\n"
          "-runas user     change to user id\n",
          XLREAPER__QEMU_HAS_RUN_WITH_CHROOT | XLREAPER__QEMU_HAS_RUNAS },
        /* Debian 13's 10.0.13: -run-with only (no -runas, no -chroot) */
        { "-sandbox on[,obsolete=allow|deny]\n"
          "          [,spawn=allow|deny][,resourcecontrol=allow|deny]\n"
          "-run-with [async-teardown=on|off][,chroot=dir][user=username|"
          "uid:gid]\n"
          "                Set miscellaneous QEMU process lifecycle "
          "options:\n"
          "                chroot=dir chroot to dir just before starting the "
          "VM\n"
          "                user=username switch to the specified user before "
          "starting the VM\n"
          "-msg [timestamp[=on|off]][,guest-name=[on|off]]\n",
          XLREAPER__QEMU_HAS_RUN_WITH_USER |
              XLREAPER__QEMU_HAS_RUN_WITH_CHROOT },
        /* 10.1 moves user= to a continuation line */
        { "-run-with [async-teardown=on|off][,chroot=dir]\n"
          "          [,exit-with-parent=on|off][,user=username|uid:gid]\n"
          "                Set miscellaneous QEMU process lifecycle "
          "options:\n",
          XLREAPER__QEMU_HAS_RUN_WITH_USER |
              XLREAPER__QEMU_HAS_RUN_WITH_CHROOT },
        /* user= in another option's entry is not -run-with's */
        { "-run-with [async-teardown=on|off][,chroot=dir]\n"
          "-netdev user,id=str[,user=x]\n"
          "                user=x is not -run-with's\n",
          XLREAPER__QEMU_HAS_RUN_WITH_CHROOT },
        { "-runas\tuser", XLREAPER__QEMU_HAS_RUNAS }, /* no newline */
        { "                -runas user (in a help paragraph)\n", 0 },
        { "-runasx user\n-chrootdir\n", 0 },
        { "-runas\n", 0 },
        { "", 0 },
        { "\n\n\n", 0 },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned f =
            xlreaper__qemu_help_features(cases[i].text, strlen(cases[i].text));
        if (f != cases[i].want)
            fail_msg("case %zu: %#x, want %#x", i, f, cases[i].want);
    }
}

/* ---------- libxl 4.20's probe line ---------- */

#define PROBE_HEAD                                                            \
    "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",         \
        "none,accel=xen", "-chardev"
#define PROBE_MON "-mon", "chardev=libxl-cmd,mode=control"
#define SOCK(n) "socket,id=libxl-cmd,fd=" n ",server=on,wait=off"

static void test_libxl_probe_line_table(void **state)
{
    static const struct {
        const char *args[16];
        int fd; /* -1: not the probe */
    } cases[] = {
        /* libxl_dm.c, RELEASE-4.20.0..4.21 */
        { { PROBE_HEAD, SOCK("3"), PROBE_MON }, 3 },
        { { PROBE_HEAD, SOCK("27"), PROBE_MON }, 27 },
        { { PROBE_HEAD, SOCK("2147483647"), PROBE_MON }, 2147483647 },
        { { PROBE_HEAD, SOCK("2147483648"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("99999999999"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("2"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("0"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("03"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("+3"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("-3"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK(" 3"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("3 "), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("0x3"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK(""), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("3,fd=4"), PROBE_MON }, -1 },
        { { PROBE_HEAD, "socket,id=libxl-cmd,fd=3,server=on,wait=off,x=y",
            PROBE_MON },
          -1 },
        { { PROBE_HEAD, "socket,id=libxl-cmd,path=/run/x,server=on,wait=off",
            PROBE_MON },
          -1 },
        { { PROBE_HEAD, "socket,id=other,fd=3,server=on,wait=off", PROBE_MON },
          -1 },
        /* an argument more, anywhere; one less */
        { { PROBE_HEAD, SOCK("3"), PROBE_MON, "-xen-domid", "5" }, -1 },
        { { PROBE_HEAD, SOCK("3"), PROBE_MON, "-run-with", "user=0:0" }, -1 },
        { { PROBE_HEAD, SOCK("3"), PROBE_MON, "" }, -1 },
        { { "-S", PROBE_HEAD, SOCK("3"), PROBE_MON }, -1 },
        { { PROBE_HEAD, SOCK("3"), "-mon" }, -1 },
        { { PROBE_HEAD, SOCK("3") }, -1 },
        { { "-S" }, -1 },
        { { NULL }, -1 },
        /* spelled otherwise: QEMU would take these, libxl does not give
         * them */
        { { "--S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
            "none,accel=xen", "-chardev", SOCK("3"), PROBE_MON },
          -1 },
        { { "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
            "accel=xen,none", "-chardev", SOCK("3"), PROBE_MON },
          -1 },
        { { "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
            "xenfv,accel=xen", "-chardev", SOCK("3"), PROBE_MON },
          -1 },
        { { "-S", "-no-user-config", "-nodefaults", "-nographic", "-M",
            "none,accel=xen", "-chardev", SOCK("3"), PROBE_MON },
          -1 },
        { { "-no-user-config", "-S", "-nodefaults", "-nographic", "-machine",
            "none,accel=xen", "-chardev", SOCK("3"), PROBE_MON },
          -1 },
        { { PROBE_HEAD, SOCK("3"), "-mon", "chardev=libxl-cmd,mode=readline" },
          -1 },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[20];
        int n = 0, fd = -1, r;

        argv[n++] = (char *)"/usr/local/libexec/xl-reaper/qemu-dm-restrict";
        for (int j = 0; j < 16 && cases[i].args[j]; j++)
            argv[n++] = (char *)cases[i].args[j];
        argv[n] = NULL;
        r = xlreaper_libxl_probe_line(argv, &fd);
        if (r != (cases[i].fd >= 0) || (r && fd != cases[i].fd))
            fail_msg("case %zu: %d fd %d, want fd %d", i, r, fd, cases[i].fd);
    }
    assert_int_equal(xlreaper_libxl_probe_line(NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_fds_table),
        cmocka_unit_test(test_keep_fds_bounded),
        cmocka_unit_test(test_runas_chroot_table),
        cmocka_unit_test(test_parse_ids_table),
        cmocka_unit_test(test_help_features_table),
        cmocka_unit_test(test_libxl_probe_line_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
