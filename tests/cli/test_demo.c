/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_demo.c - `make demo` (scripts/demo) in each range it may find:
 * a configured one, a demo range on a bare host, and the passwd user
 * xen-qemuuser-range-base made for the test; and its refusals, each
 * before anything is started or killed.
 *
 * uid block of this suite: 9250000..9289999.
 *   9250000 + d   a configured range (XLR_DEMO_HOST_CONFIG)
 *   9260000 + d   the demo's own range on a bare host (XLR_DEMO_BASE)
 *   9270000 + d   a temporary xen-qemuuser-range-base user
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define CONF_BASE 9250000u
#define BARE_BASE 9260000u
#define USER_BASE 9270000u

static struct {
    char *dir;
    char demo[600], conf[600];
    char *demo_copy; /* for nobody, who may not search the checkout */
} S;

static int suite_setup(void **state)
{
    char text[800], *p;

    (void)state;
    S.dir = xlrt_tmpdir();
    assert_int_equal(chmod(S.dir, 0755), 0);
    p = realpath("scripts/demo", NULL);
    if (!p)
        fail_msg("scripts/demo: %s (run from the source tree, as make check "
                 "does)",
                 strerror(errno));
    snprintf(S.demo, sizeof(S.demo), "%s", p);
    free(p);
    {
        int fd = open(S.demo, O_RDONLY | O_CLOEXEC);
        char *script;

        assert_true(fd >= 0);
        script = xlrt_read_to_eof(fd);
        close(fd);
        S.demo_copy = xlrt_write_file(S.dir, "demo", script);
        free(script);
        assert_int_equal(chmod(S.demo_copy, 0644), 0);
    }
    snprintf(text, sizeof(text), "dm_uid_base = %u\nlock_file = \"%s/lock\"\n",
             CONF_BASE, S.dir);
    p = xlrt_write_file(S.dir, "host.conf", text);
    snprintf(S.conf, sizeof(S.conf), "%s", p);
    free(p);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    free(S.demo_copy);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

typedef struct {
    int status;
    char *out, *err;
} result;

/* scripts/demo with the environment given ("NAME=value", NULL-ended). */
static result demo(const char *const *env)
{
    char *argv[] = { "/bin/sh", S.demo, NULL };
    result r;

    assert_int_equal(setenv("XLR_BUILD", xlrt_build_dir(), 1), 0);
    for (int i = 0; env[i]; i++)
        assert_int_equal(putenv((char *)env[i]), 0);
    r.status = xlrt_run(argv, &r.out, &r.err);
    for (int i = 0; env[i]; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%.*s",
                 (int)(strchr(env[i], '=') - env[i]), env[i]);
        unsetenv(name);
    }
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* A run that shows what it should: the racer seen running, surviving
 * pkill, and the uid emptied by xl-reaper. */
static void assert_shown(const result *r, uid_t uid, const char *where)
{
    char done[200], seen[100];

    snprintf(done, sizeof(done), "xl-reaper kill emptied uid %lu in one call",
             (unsigned long)uid);
    snprintf(seen, sizeof(seen), "under uid %lu\n   in %s", (unsigned long)uid,
             where);
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) ||
        !strstr(r->out, seen) || !strstr(r->out, "   seen running: ") ||
        !strstr(r->out, done) || strstr(r->out, "survived 0 of 5"))
        fail_msg("demo: status %#x\nstdout: %s\nstderr: %s", r->status, r->out,
                 r->err);
    /* Nothing left behind. */
    assert_int_equal(xlrt_kernel_count(uid), 0);
}

static void assert_refused(const result *r, const char *why)
{
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 1 ||
        strncmp(r->err, "demo: refusing: ", 16) || !strstr(r->err, why) ||
        strstr(r->out, "=="))
        fail_msg("demo: status %#x, want exit 1 and \"demo: refusing: "
                 "...%s...\" before anything\nstdout: %s\nstderr: %s",
                 r->status, why, r->out, r->err);
}

/* Other tests here assume the host has no range of its own: then a
 * configured range can be any, and a bare host's is the demo's. */
static bool host_has_range(void)
{
    struct stat st;

    return getpwnam("xen-qemuuser-range-base") ||
           stat("/etc/xen/xl-reaper.conf", &st) == 0;
}

static char env_conf[700], env_domid[] = "XLR_DEMO_DOMID=9",
                           env_none[] = "XLR_DEMO_HOST_CONFIG=/nonexistent/"
                                        "xlrtest-demo.conf";

static void test_configured_range(void **state)
{
    const char *env[] = { env_conf, env_domid, NULL };
    result r;

    (void)state;
    if (getpwnam("xen-qemuuser-range-base"))
        skip(); /* a range of 9250000 would disagree with it */
    snprintf(env_conf, sizeof(env_conf), "XLR_DEMO_HOST_CONFIG=%s", S.conf);
    r = demo(env);
    assert_shown(&r, CONF_BASE + 9, "the host's range");
    result_free(&r);
}

static void test_refuses_busy_uids(void **state)
{
    const char *env[] = { env_conf, env_domid, NULL };
    pid_t b;
    result r;

    (void)state;
    if (getpwnam("xen-qemuuser-range-base"))
        skip();
    snprintf(env_conf, sizeof(env_conf), "XLR_DEMO_HOST_CONFIG=%s", S.conf);

    /* Something of someone else's under the demo's uid: it must live on. */
    b = xlrt_bystander_start(CONF_BASE + 9);
    r = demo(env);
    assert_refused(&r, "uid 9250009 (domid 9) already has tasks");
    assert_true(xlrt_alive(b));
    xlrt_bystander_stop(b);
    result_free(&r);

    /* Under the pet: every kill would refuse, so the demo does first. */
    b = xlrt_bystander_start(CONF_BASE);
    r = demo(env);
    assert_refused(&r, "the pet uid 9250000 runs something");
    assert_true(xlrt_alive(b));
    xlrt_bystander_stop(b);
    result_free(&r);
}

static void test_refuses_broken_config(void **state)
{
    char *bad = xlrt_write_file(S.dir, "bad.conf", "dm_uid_base = -5\n");
    char env_bad[700];
    const char *env[] = { env_bad, NULL };
    result r;

    (void)state;
    snprintf(env_bad, sizeof(env_bad), "XLR_DEMO_HOST_CONFIG=%s", bad);
    r = demo(env);
    assert_refused(&r, "the host's xl-reaper config does not load "
                       "(xl-reaper: error: ");
    assert_non_null(strstr(r.err, "or run XLR_DEMO_HOST_CONFIG=/nonexistent "
                                  "make demo for a demo range"));
    assert_non_null(strstr(r.err, "dm_uid_base = -5: a negative number"));
    result_free(&r);
    free(bad);
}

/* The package's config on a host that is no Xen host yet: it sets no
 * range and passwd has no range base user, so the demo's own range
 * serves (it used to refuse, "no device model uid range"). */
static void test_host_config_without_range(void **state)
{
    static char base[] = "XLR_DEMO_BASE=9260000";
    char *norange =
        xlrt_write_file(S.dir, "norange.conf", "lock_timeout_ms = 5000\n");
    char env_nr[700], where[700];
    const char *env[] = { env_nr, base, NULL };
    result r;

    (void)state;
    if (getpwnam("xen-qemuuser-range-base"))
        skip(); /* then the host has a range */
    assert_int_equal(chmod(norange, 0644), 0);
    snprintf(env_nr, sizeof(env_nr), "XLR_DEMO_HOST_CONFIG=%s", norange);
    r = demo(env);
    snprintf(where, sizeof(where), "a demo range (%s sets no range", norange);
    assert_shown(&r, BARE_BASE + 7, where);
    result_free(&r);
    free(norange);
}

static void test_refuses_non_root(void **state)
{
    char *out = NULL, *err;
    int p[2], status;

    (void)state;
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The copy: a checkout under /root is no place nobody may
         * search, and the refusal must come from the script itself. */
        char *argv[] = { "/bin/sh", S.demo_copy, NULL };

        dup2(p[1], 2);
        xlrt_exec_as(65534, 65534, argv);
    }
    close(p[1]);
    err = xlrt_read_to_eof(p[0]);
    close(p[0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
        !strstr(err, "demo: refusing: run it as root"))
        fail_msg("demo as nobody: status %#x, stderr %s", status, err);
    free(out);
    free(err);
}

static void test_bare_host(void **state)
{
    static char base[] = "XLR_DEMO_BASE=9260000";
    const char *env[] = { env_none, base, NULL };
    result r;

    (void)state;
    if (host_has_range())
        skip();
    r = demo(env);
    assert_shown(&r, BARE_BASE + 7, "a demo range");
    result_free(&r);
}

/* Upstream libxl's way to give the range: the passwd user, made for the
 * test (no config file), then removed. */
static void test_range_base_user(void **state)
{
    static char domid[] = "XLR_DEMO_DOMID=5";
    const char *env[] = { env_none, domid, NULL };
    const char *add[] = { "/usr/sbin/useradd",
                          "--system",
                          "--no-create-home",
                          "--uid",
                          "9270000",
                          "--user-group",
                          "--shell",
                          "/usr/sbin/nologin",
                          "xen-qemuuser-range-base",
                          NULL };
    const char *del[] = { "/usr/sbin/userdel", "xen-qemuuser-range-base",
                          NULL };
    struct stat st;
    bool had_run_xen;
    result r;
    int status;

    (void)state;
    if (host_has_range())
        skip();
    had_run_xen = stat("/var/run/xen", &st) == 0;
    status = xlrt_run((char *const *)add, NULL, NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        fail_msg("useradd xen-qemuuser-range-base: status %#x", status);
    r = demo(env);
    status = xlrt_run((char *const *)del, NULL, NULL);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_null(getgrnam("xen-qemuuser-range-base"));
    assert_shown(&r, USER_BASE + 5, "the host's range");
    /* The lock's directory it had to make is gone again. */
    assert_int_equal(stat("/var/run/xen", &st) == 0, had_run_xen);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configured_range),
        cmocka_unit_test(test_refuses_busy_uids),
        cmocka_unit_test(test_refuses_broken_config),
        cmocka_unit_test(test_host_config_without_range),
        cmocka_unit_test(test_refuses_non_root),
        cmocka_unit_test(test_bare_host),
        cmocka_unit_test(test_range_base_user),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
