/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_audit_parse.c - the audit's parsers of what a DM shows in /proc
 * (status, limits, cmdline), of /proc/stat's fork count, and its verdict
 * on Xen descriptors: table-driven, with malformed input for each.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "xlr_test.h"
#include "xlreaper_audit_internal.h"

/* ---------- status ---------- */

#define STATUS_HEAD                                                           \
    "Name:\tqemu-system-i38\nUmask:\t0022\nState:\tS (sleeping)\n"            \
    "Tgid:\t1234\nNgid:\t0\nPid:\t1234\nPPid:\t1\nTracerPid:\t0\n"            \
    "Uid:\t131077\t131077\t131077\t131077\n"

static void test_status_ok(void **state)
{
    static const char text[] =
        STATUS_HEAD "Gid:\t131077\t131078\t131079\t131080\n"
                    "FDSize:\t64\nGroups:\t27 100 \nThreads:\t3\n"
                    "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
                    "CapEff:\t00000000000000c0\nCapBnd:\t000001ffffffffff\n"
                    "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";
    xlreaper_task at;
    (void)state;

    assert_int_equal(xlreaper__audit_parse_status(text, strlen(text), &at), 0);
    assert_int_equal(at.tid, 1234);
    assert_int_equal(at.ruid, 131077);
    assert_int_equal(at.audit.rgid, 131077);
    assert_int_equal(at.audit.egid, 131078);
    assert_int_equal(at.audit.sgid, 131079);
    assert_int_equal(at.audit.fsgid, 131080);
    assert_int_equal(at.audit.ngroups, 2);
    assert_int_equal(at.audit.groups[0], 27);
    assert_int_equal(at.audit.groups[1], 100);
    assert_int_equal(at.audit.threads, 3);
    assert_true(at.audit.caps_known);
    assert_int_equal(at.audit.cap_eff, 0xc0);
    assert_int_equal(at.audit.nnp, 1);
}

static void test_status_variants(void **state)
{
    static const struct {
        const char *text;
        int rc;
        unsigned ngroups;
        int nnp;
        bool caps;
    } cases[] = {
        /* no groups at all: the tab and nothing */
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\nGroups:\t\nNoNewPrivs:\t0\n", 0, 0, 0,
          false },
        /* no NoNewPrivs line (old kernel): unknown, not "set" */
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\nGroups:\t\n", 0, 0, -1, false },
        /* NoNewPrivs garbage: unknown */
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\nGroups:\t\nNoNewPrivs:\t7\n", 0, 0,
          -1, false },
        /* more groups than kept: all counted */
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\nGroups:\t1 2 3 4 5 6 7 8 9 10 11\n"
                      "NoNewPrivs:\t1\n",
          0, 11, 1, false },
        /* caps without CapAmb (before 4.3): known, ambient none */
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\nGroups:\t\nCapPrm:\t0\nCapEff:\t0\n",
          0, 0, -1, true },
        /* malformed: */
        { STATUS_HEAD "Gid:\t1\t1\t1\nGroups:\t\n", XLREAPER_ERROR_INVAL },
        { STATUS_HEAD "Gid:\tx\t1\t1\t1\nGroups:\t\n", XLREAPER_ERROR_INVAL },
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\n", XLREAPER_ERROR_INVAL },
        { STATUS_HEAD "Gid:\t1\t1\t1\t1\nGroups:\t1 x\n",
          XLREAPER_ERROR_INVAL },
        { STATUS_HEAD "Gid:\t1\t1\t1\t99999999999999999999999\nGroups:\t\n",
          XLREAPER_ERROR_INVAL },
        { "Name:\tx\nGid:\t1\t1\t1\t1\nGroups:\t\n", XLREAPER_ERROR_INVAL },
        { "", XLREAPER_ERROR_INVAL },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        xlreaper_task at;
        int rc = xlreaper__audit_parse_status(cases[i].text,
                                              strlen(cases[i].text), &at);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d", i, rc, cases[i].rc);
        if (rc)
            continue;
        if (at.audit.ngroups != cases[i].ngroups ||
            at.audit.nnp != cases[i].nnp ||
            at.audit.caps_known != cases[i].caps)
            fail_msg("case %zu: groups %u nnp %d caps %d", i, at.audit.ngroups,
                     at.audit.nnp, at.audit.caps_known);
    }
}

/* ---------- limits ---------- */

static const char limits[] =
    "Limit                     Soft Limit           Hard Limit           "
    "Units     \n"
    "Max cpu time              unlimited            unlimited            "
    "seconds   \n"
    "Max core file size        0                    unlimited            "
    "bytes     \n"
    "Max processes             64                   64                   "
    "processes \n"
    "Max open files            1024                 524288               "
    "files     \n"
    "Max nice priority         0                    0                    \n";

static void test_limits(void **state)
{
    static const struct {
        int resource;
        int rc;
        uint64_t soft, hard;
    } cases[] = {
        { RLIMIT_NPROC, 0, 64, 64 },
        { RLIMIT_CORE, 0, 0, XLREAPER__RLIM_INF },
        { RLIMIT_CPU, 0, XLREAPER__RLIM_INF, XLREAPER__RLIM_INF },
        { RLIMIT_NOFILE, 0, 1024, 524288 },
        { RLIMIT_NICE, 0, 0, 0 },
        { RLIMIT_AS, XLREAPER_ERROR_INVAL }, /* row missing */
        { 999, XLREAPER_ERROR_INVAL },       /* no such resource */
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t soft = 7, hard = 7;
        int rc = xlreaper__audit_parse_limit(limits, strlen(limits),
                                             cases[i].resource, &soft, &hard);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d", i, rc);
        if (!rc && (soft != cases[i].soft || hard != cases[i].hard))
            fail_msg("case %zu: %llu %llu", i, (unsigned long long)soft,
                     (unsigned long long)hard);
    }
    assert_string_equal(xlreaper__audit_rlimit_name(RLIMIT_NPROC), "NPROC");
    assert_string_equal(xlreaper__audit_rlimit_name(12345), "?");
}

static void test_limits_malformed(void **state)
{
    static const char *const bad[] = {
        "Max processes             \n",
        "Max processes             64\n",
        "Max processes             64x                  64\n",
        "Max processes             -1                   64\n",
        "Max processes             unlimitedx           64\n",
        "Max processes             99999999999999999999999 1\n",
        "Max processesX            64                   64\n",
        "",
    };
    (void)state;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t s, h;
        if (xlreaper__audit_parse_limit(bad[i], strlen(bad[i]), RLIMIT_NPROC,
                                        &s, &h) != XLREAPER_ERROR_INVAL)
            fail_msg("case %zu accepted", i);
    }
}

/* ---------- cmdline ---------- */

static void test_cmdline(void **state)
{
#define CL(s) s, sizeof(s) - 1
    static const struct {
        const char *text;
        size_t len;
        unsigned ndomid;
        bool bad, conflict, restr;
        uint32_t domid;
        const char *chroot;
    } cases[] = {
        { CL("qemu\0-xen-domid\0005\0-xen-domid-restrict\0"), 1, false, false,
          true, 5, NULL },
        { CL("qemu\0--xen-domid\0005\0"), 1, false, false, false, 5, NULL },
        /* no trailing NUL (a truncated read) */
        { CL("qemu\0-xen-domid\00012"), 1, false, false, false, 12, NULL },
        { CL("qemu\0-xen-domid\0"), 1, true, false, false, 0, NULL },
        { CL("qemu\0-xen-domid"), 1, true, false, false, 0, NULL },
        { CL("qemu\0-xen-domid\0000\0"), 1, true, false, false, 0, NULL },
        { CL("qemu\0-xen-domid\00005\0"), 1, true, false, false, 0, NULL },
        { CL("qemu\0-xen-domid\0+5\0"), 1, true, false, false, 0, NULL },
        { CL("qemu\0-xen-domid\00032752\0"), 1, true, false, false, 0, NULL },
        { CL("qemu\0-xen-domid\00099999999999999999999\0"), 1, true, false,
          false, 0, NULL },
        { CL("qemu\0-xen-domid\0005\0-xen-domid\0006\0"), 2, false, true,
          false, 6, NULL },
        { CL("qemu\0-xen-domid\0005\0-xen-domid\0005\0"), 2, false, false,
          false, 5, NULL },
        { CL("qemu\0-xen-domid=5\0"), 0, false, false, false, 0, NULL },
        { CL("qemu\0-chroot\0/var/run/xen/qemu-root-5\0-xen-domid\0005"), 1,
          false, false, false, 5, "/var/run/xen/qemu-root-5" },
        { CL("qemu\0-run-with\0async-teardown=on,chroot=/r,user=x\0"), 0,
          false, false, false, 0, "/r" },
        { CL(""), 0, false, false, false, 0, NULL },
        { CL("\0\0\0"), 0, false, false, false, 0, NULL },
    };
#undef CL
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *chroot = cases[i].chroot;
        xlreaper__audit_cmdline cl;
        xlreaper__audit_parse_cmdline(cases[i].text, cases[i].len, &cl);
        if (cl.ndomid != cases[i].ndomid || cl.domid_bad != cases[i].bad ||
            cl.domid_conflict != cases[i].conflict ||
            cl.restrict_opt != cases[i].restr ||
            (!cl.domid_bad && cl.ndomid && cl.domid != cases[i].domid))
            fail_msg("case %zu: n %u bad %d conflict %d restrict %d domid "
                     "%u",
                     i, cl.ndomid, cl.domid_bad, cl.domid_conflict,
                     cl.restrict_opt, cl.domid);
        if (!chroot != !cl.chroot ||
            (chroot && (cl.chroot_len != strlen(chroot) ||
                        memcmp(cl.chroot, chroot, cl.chroot_len))))
            fail_msg("case %zu: chroot", i);
    }
}

/* libxl 4.20's spellings beside 4.17's, and its option probe. */
static void test_cmdline_420(void **state)
{
#define CL(s) s, sizeof(s) - 1
#define PROBE                                                                 \
    "qemu\0-S\0-no-user-config\0-nodefaults\0-nographic\0-machine\0"          \
    "none,accel=xen\0-chardev\0socket,id=libxl-cmd,fd=27,server=on,"          \
    "wait=off\0-mon\0chardev=libxl-cmd,mode=control\0"
    static const struct {
        const char *text;
        size_t len;
        uint32_t domid; /* 0: no -xen-domid */
        const char *chroot;
        bool chroot_rw;
        const char *user;
        bool user_rw;
        unsigned nuser;
        bool probe;
    } cases[] = {
        /* 4.17: -chroot, -runas */
        { CL("qemu\0-xen-domid\0005\0-xen-domid-restrict\0-chroot\0"
             "/var/run/xen/qemu-root-5\0-runas\000131077:131072\0"),
          5, "/var/run/xen/qemu-root-5", false, "131077:131072", false, 1,
          false },
        /* 4.20: two -run-with, user= last on the line */
        { CL("qemu\0-xen-domid\0005\0-no-shutdown\0-xen-domid-restrict\0"
             "-run-with\0chroot=/var/run/xen/qemu-root-5\0-incoming\0fd:9\0"
             "-machine\0xenfv\0-run-with\0user=131077:131072\0"),
          5, "/var/run/xen/qemu-root-5", true, "131077:131072", true, 1,
          false },
        /* QEMU 9.0 under 4.20: -run-with chroot= and -runas */
        { CL("qemu\0-xen-domid\0005\0-run-with\0chroot=/r\0-runas\0"
             "1:2\0"),
          5, "/r", true, "1:2", false, 1, false },
        /* both in one, QemuOpts' ",," a literal comma */
        { CL("qemu\0-xen-domid\0005\0-run-with\0async-teardown=on,"
             "chroot=/a,,b,user=3:4\0"),
          5, "/a,b", true, "3:4", true, 1, false },
        { CL("qemu\0-xen-domid\0005\0-run-with\0user=3:4,,x\0"), 5, NULL,
          false, "3:4,x", true, 1, false },
        /* two uid switches: counted, the last kept */
        { CL("qemu\0-xen-domid\0005\0-runas\0001:1\0-run-with\0user=2:2\0"), 5,
          NULL, false, "2:2", true, 2, false },
        /* too long for ids or a name: "?" */
        { CL("qemu\0-xen-domid\0005\0-run-with\0user="
             "1111111111111111111111111111111111111111111111111111111111111111"
             "\0"),
          5, NULL, false, "?", true, 1, false },
        /* libxl 4.20's probe, and near misses */
        { CL(PROBE), 0, NULL, false, NULL, false, 0, true },
        { CL(PROBE "-name\0x\0"), 0, NULL, false, NULL, false, 0, false },
        { PROBE, sizeof(PROBE) - 2, 0, NULL, false, NULL, false, 0, false },
        { CL("qemu\0-S\0-no-user-config\0-nodefaults\0-nographic\0-machine\0"
             "none,accel=xen\0-chardev\0socket,id=libxl-cmd,fd=27,server=on,"
             "wait=off\0-mon\0chardev=libxl-cmd,mode=readline\0"),
          0, NULL, false, NULL, false, 0, false },
    };
#undef PROBE
#undef CL
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        xlreaper__audit_cmdline cl;
        xlreaper__audit_parse_cmdline(cases[i].text, cases[i].len, &cl);
        if ((cases[i].domid ? cl.domid != cases[i].domid : cl.ndomid != 0))
            fail_msg("case %zu: domid %u (%u seen)", i, cl.domid, cl.ndomid);
        if (!cases[i].chroot != !cl.chroot ||
            (cl.chroot && (cl.chroot_len != strlen(cases[i].chroot) ||
                           memcmp(cl.chroot, cases[i].chroot, cl.chroot_len) ||
                           cl.chroot_run_with != cases[i].chroot_rw)))
            fail_msg("case %zu: chroot %.*s", i,
                     cl.chroot ? (int)cl.chroot_len : 6,
                     cl.chroot ? cl.chroot : "(none)");
        if (!cases[i].user != !cl.user ||
            (cl.user && (strcmp(cl.user, cases[i].user) ||
                         cl.user_run_with != cases[i].user_rw)) ||
            cl.nuser != cases[i].nuser)
            fail_msg("case %zu: user %s (%u)", i, cl.user ? cl.user : "-",
                     cl.nuser);
        if (cl.libxl_probe != cases[i].probe)
            fail_msg("case %zu: probe %d", i, cl.libxl_probe);
    }
}

/* ---------- numbers, /proc/stat ---------- */

static void test_parse_ulong(void **state)
{
    static const struct {
        const char *s;
        unsigned long max;
        int rc;
        unsigned long v;
    } cases[] = {
        { "0", 10, 0, 0 },
        { "7", 10, 0, 7 },
        { "10", 10, 0, 10 },
        { "11", 10, -1, 0 },
        { "07", 10, -1, 0 },
        { "", 10, -1, 0 },
        { "-1", 10, -1, 0 },
        { " 1", 10, -1, 0 },
        { "1 ", 10, -1, 0 },
        { "0x1", 10, -1, 0 },
        { "18446744073709551616", ULONG_MAX, -1, 0 },
        { "4294967295", 4294967295ul, 0, 4294967295ul },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned long v = 99;
        int rc = xlreaper__parse_ulong(cases[i].s, strlen(cases[i].s),
                                       cases[i].max, &v);
        if (rc != cases[i].rc || (!rc && v != cases[i].v))
            fail_msg("'%s': rc %d v %lu", cases[i].s, rc, v);
    }
}

static void test_forks_line(void **state)
{
    uint64_t v = 0;
    (void)state;

    assert_int_equal(
        xlreaper__audit_parse_forks_line("processes 1160713\n", &v), 1);
    assert_int_equal(v, 1160713);
    assert_int_equal(xlreaper__audit_parse_forks_line("processes 5", &v), 1);
    assert_int_equal(v, 5);
    assert_int_equal(xlreaper__audit_parse_forks_line("procs_running 3\n", &v),
                     0);
    assert_int_equal(xlreaper__audit_parse_forks_line("processes x\n", &v), 0);
    assert_int_equal(xlreaper__audit_parse_forks_line("processes \n", &v), 0);
    assert_int_equal(xlreaper__audit_parse_forks_line("", &v), 0);
}

/* ---------- Xen descriptors ---------- */

static void test_xenfd_verdicts(void **state)
{
    static const struct {
        xlreaper__xendev_kind kind;
        int probe, confirm;
        xlreaper_audit_status st;
        const char *why;
    } cases[] = {
        /* privcmd: EPERM before reading the argument = restricted */
        { XLREAPER__XENDEV_PRIVCMD, EPERM, 0, XLREAPER_AUDIT_PASS,
          "restricted to domid 5" },
        { XLREAPER__XENDEV_PRIVCMD, EPERM, EINVAL, XLREAPER_AUDIT_FAIL,
          "to another domid" },
        { XLREAPER__XENDEV_PRIVCMD, EPERM, EFAULT, XLREAPER_AUDIT_UNKNOWN,
          "checking the domid failed" },
        /* EFAULT: it read the (NULL) argument, so it would have run it */
        { XLREAPER__XENDEV_PRIVCMD, EFAULT, -1, XLREAPER_AUDIT_FAIL,
          "NOT restricted" },
        { XLREAPER__XENDEV_PRIVCMD, ENOTTY, -1, XLREAPER_AUDIT_FAIL,
          "not shown to be restricted" },
        { XLREAPER__XENDEV_PRIVCMD, 0, -1, XLREAPER_AUDIT_FAIL,
          "the probe succeeded" },
        { XLREAPER__XENDEV_EVTCHN, EACCES, -1, XLREAPER_AUDIT_PASS,
          "restricted (to which domid" },
        { XLREAPER__XENDEV_EVTCHN, EFAULT, -1, XLREAPER_AUDIT_FAIL,
          "NOT restricted" },
        { XLREAPER__XENDEV_EVTCHN, EINVAL, -1, XLREAPER_AUDIT_FAIL,
          "Xen's evtchn driver" },
        { XLREAPER__XENDEV_XENBUS, 0, -1, XLREAPER_AUDIT_FAIL,
          "open xenstore device" },
        { XLREAPER__XENDEV_XENBUS_BACKEND, 0, -1, XLREAPER_AUDIT_FAIL,
          "open xenstore device" },
        { XLREAPER__XENDEV_GNTDEV, 0, -1, XLREAPER_AUDIT_SKIP,
          "no restriction" },
        { XLREAPER__XENDEV_HYPERCALL, 0, -1, XLREAPER_AUDIT_SKIP,
          "no restriction" },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[200];
        xlreaper_audit_status st =
            xlreaper__xenfd_verdict(cases[i].kind, cases[i].probe,
                                    cases[i].confirm, 5, why, sizeof(why));
        if (st != cases[i].st || !strstr(why, cases[i].why))
            fail_msg("case %zu: %s \"%s\"", i, xlreaper_audit_status_name(st),
                     why);
    }
}

/* The device table knows nodes by numbers, and names no absent one. */
static void test_xendevs(void **state)
{
    char *dir = xlrt_tmpdir(), *p;
    xlreaper__xendevs d;
    struct stat st;
    (void)state;

    xlreaper__xendevs_load("/nonexistent", "/nonexistent", &d);
    assert_int_equal(d.num, 0);
    assert_true(asprintf(&p, "%s/privcmd", dir) > 0);
    assert_int_equal(mknod(p, S_IFCHR | 0600, makedev(1, 7)), 0);
    free(p);
    free(xlrt_write_file(dir, "xenbus", ""));
    xlreaper__xendevs_load(dir, dir, &d);
    /* one directory for both: privcmd and xenbus, found twice */
    assert_int_equal(d.num, 4);
    assert_int_equal(stat("/dev/full", &st), 0);
    assert_non_null(xlreaper__xendevs_match(&d, &st));
    assert_int_equal(xlreaper__xendevs_match(&d, &st)->kind,
                     XLREAPER__XENDEV_PRIVCMD);
    assert_int_equal(stat("/dev/zero", &st), 0);
    assert_null(xlreaper__xendevs_match(&d, &st));
    xlrt_tmpdir_remove(dir);
}

/* ---------- results ---------- */

static void test_result_verdict_and_json(void **state)
{
    xlreaper_audit_result res;
    char *js;
    (void)state;

    xlreaper_audit_result_init(&res);
    assert_int_equal(xlreaper_audit_verdict(&res), XLREAPER_AUDIT_UNKNOWN);
    assert_int_equal(
        xlreaper__audit_add(&res, "a", 5, 6, 7, XLREAPER_AUDIT_SKIP, "x"), 0);
    assert_int_equal(xlreaper_audit_verdict(&res), XLREAPER_AUDIT_PASS);
    assert_int_equal(xlreaper__audit_add(&res, "b", XLREAPER_AUDIT_NO_DOMID,
                                         XLREAPER_AUDIT_NO_UID, 0,
                                         XLREAPER_AUDIT_UNKNOWN,
                                         "bell\a and \"quote\""),
                     0);
    assert_int_equal(xlreaper_audit_verdict(&res), XLREAPER_AUDIT_UNKNOWN);
    assert_string_equal(res.checks[1].reason, "bell? and \"quote\"");
    assert_int_equal(xlreaper__audit_add(&res, "c", 1, 2, 3,
                                         XLREAPER_AUDIT_FAIL, "%s", "y"),
                     0);
    assert_int_equal(xlreaper_audit_verdict(&res), XLREAPER_AUDIT_FAIL);
    assert_int_equal(xlreaper_audit_result_json(&res, &js), 0);
    assert_non_null(strstr(js, "\"verdict\":\"fail\""));
    assert_non_null(strstr(js, "{\"check\":\"b\",\"domid\":null,\"uid\":"
                               "null,\"pid\":null,\"status\":\"unknown\""));
    assert_non_null(strstr(js, "\"reason\":\"bell? and \\\"quote\\\"\""));
    free(js);
    xlreaper_audit_result_dispose(&res);
    xlreaper_audit_result_dispose(&res); /* idempotent */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_ok),
        cmocka_unit_test(test_status_variants),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_limits_malformed),
        cmocka_unit_test(test_cmdline),
        cmocka_unit_test(test_cmdline_420),
        cmocka_unit_test(test_parse_ulong),
        cmocka_unit_test(test_forks_line),
        cmocka_unit_test(test_xenfd_verdicts),
        cmocka_unit_test(test_xendevs),
        cmocka_unit_test(test_result_verdict_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
