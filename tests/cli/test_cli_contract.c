/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_cli_contract.c - `xl-reaper` as other tools see it: output, exit
 * codes, and one clear line on stderr for every bad input, which must
 * kill nothing.
 *
 * uid block of this suite: 3200000 (base and pet) .. 3232751.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define BASE 3200000u

static struct {
    char *dir;
    char cli[512], good[512];
    pid_t sleeper; /* domid 9's "DM": every bad input must leave it be */
} S;

#define GOOD_CONFIG                                                           \
    "dm_uid_base = 3200000\nlock_file = \"%s/lock\"\n"                        \
    "reap_timeout_ms = 300\nlock_timeout_ms = 200\n"                          \
    "qemu_path = \"/bin/true\"\n"

static int suite_setup(void **state)
{
    char text[512], *p;

    (void)state;
    S.dir = xlrt_tmpdir();
    snprintf(S.cli, sizeof(S.cli), "%s/bin/xl-reaper", xlrt_build_dir());
    snprintf(text, sizeof(text), GOOD_CONFIG, S.dir);
    p = xlrt_write_file(S.dir, "good.conf", text);
    snprintf(S.good, sizeof(S.good), "%s", p);
    free(p);
    S.sleeper = xlrt_bystander_start(BASE + 9);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_bystander_stop(S.sleeper);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

typedef struct {
    const char *config;  /* text of the file given with --config; NULL:
                          * the good config */
    const char *args[8]; /* after --config FILE */
    int exit;
    const char *out;     /* stdout contains, or NULL */
    const char *err;     /* stderr contains; also: stderr is one line */
} cli_case;

static int count_lines(const char *s)
{
    int n = 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void run_case(const cli_case *c, size_t i)
{
    char *argv[16], *out, *err, *cfg;
    int n = 0, status;

    if (c->config)
        cfg = xlrt_write_file(S.dir, "case.conf", c->config);
    else
        cfg = strdup(S.good);
    argv[n++] = S.cli;
    argv[n++] = "--config";
    argv[n++] = cfg;
    for (int k = 0; c->args[k]; k++)
        argv[n++] = (char *)c->args[k];
    argv[n] = NULL;

    status = xlrt_run(argv, &out, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != c->exit)
        fail_msg("case %zu (%s %s): status %#x, want exit %d\nstdout: %s\n"
                 "stderr: %s",
                 i, c->args[0], c->args[1] ? c->args[1] : "", status,
                 c->exit, out, err);
    if (c->out && !strstr(out, c->out))
        fail_msg("case %zu: stdout lacks \"%s\": %s", i, c->out, out);
    if (c->err && !strstr(err, c->err))
        fail_msg("case %zu: stderr lacks \"%s\": %s", i, c->err, err);
    /* A refusal is one line on stderr; a verdict (0, or 3 from status or
     * kill) is stdout's alone. */
    bool refusal = c->exit == 1 || c->exit == 2 || (c->exit == 3 && c->err);
    if (refusal && count_lines(err) != 1)
        fail_msg("case %zu: want one line on stderr, got: %s", i, err);
    /* Every binary's lines start "PROG: LEVEL: ", the library's too. */
    if (refusal && strncmp(err, "xl-reaper: error: ", 18))
        fail_msg("case %zu: stderr does not start \"xl-reaper: error: \": "
                 "%s",
                 i, err);
    if (!refusal && *err)
        fail_msg("case %zu: stderr with exit %d: %s", i, c->exit, err);
    if (!xlrt_alive(S.sleeper))
        fail_msg("case %zu killed domid 9's task", i);
    free(out);
    free(err);
    free(cfg);
}

static void run_table(const cli_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i], i);
}

static void test_good_commands(void **state)
{
    static const cli_case cases[] = {
        { NULL, { "uid", "5" }, 0, "3200005 3200005\n", NULL },
        { NULL, { "uid", "32751" }, 0, "3232751 3232751\n", NULL },
        { NULL, { "uid", "--pet" }, 0, "3200000\n", NULL },
        { NULL,
          { "--json", "uid", "5" },
          0,
          "{\"domid\":5,\"uid\":3200005,\"gid\":3200005}",
          NULL },
        { NULL, { "check" }, 0, "ok\n", NULL },
        { NULL,
          { "check" },
          0,
          "3200001..3232751 (base 3200000 + domid "
          "1..32751)",
          NULL },
        { NULL,
          { "check" },
          0,
          "\n  ok     group_range      no group in gids "
          "3200001..3232751",
          NULL },
        { NULL, { "check" }, 0, "\n  uid_switch = \"exec\"\n", NULL },
        { NULL, { "check" }, 0, "\n  # cgroup_parent is not set\n", NULL },
        { NULL,
          { "--json", "check" },
          0,
          "\"settings\":{\"dm_uid_base\":3200000,",
          NULL },
        { NULL,
          { "kill", "7" },
          0,
          "verified empty (the kernel counted no task",
          NULL },
        { NULL, { "--json", "kill", "7" }, 0, "\"outcome\":\"empty\"", NULL },
        { NULL, { "status", "7" }, 0, "the kernel counts 0 tasks", NULL },
        { NULL, { "status", "9" }, 3, "the kernel counts 1 task;", NULL },
        { NULL, { "--help" }, 0, "spawn [--reap-stale] DOMID -- PROG", NULL },
    };
    (void)state;
    run_table(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_bad_domids(void **state)
{
    static const char *bad[] = { "0",   "32752", "65535", "-1", "abc",
                                 "5x",  "",      " 5",    "05", "1e3",
                                 "0x5", "99999999999999999999" };
    static const char *cmds[] = { "uid", "kill", "status" };
    (void)state;

    for (size_t c = 0; c < 3; c++) {
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            cli_case k = { NULL, { cmds[c], bad[i] }, 1, NULL,
                           strcmp(bad[i], "0") ? "invalid domid"
                                               : "domid 0 is dom0" };
            run_case(&k, i);
        }
        cli_case missing = { NULL, { cmds[c] }, 1, NULL, "usage" };
        run_case(&missing, 99);
    }
}

static void test_bad_configs(void **state)
{
    static const cli_case cases[] = {
        { "", { "check" }, 1, NULL, "sets nothing" },
        { "dm_uid_base =\n", { "kill", "7" }, 1, NULL, "parsing error" },
        { "\x7f"
          "ELF\x02\x01\x01\xff",
          { "kill", "7" },
          1,
          NULL,
          NULL },
        { "dm_uid_base = 0\n", { "kill", "7" }, 1, NULL, "out of range" },
        { "dm_uid_base = \"x\"\n", { "check" }, 1, NULL, "must be a number" },
        { "dm_uid_base = 4294967295\n",
          { "uid", "1" },
          1,
          NULL,
          "range would end past" },
        { "dm_uid_base = 3200000\nreaper_uid = 0\n",
          { "check" },
          1,
          NULL,
          "out of range" },
        { "dm_uid_base = 3200000\nlock_fle = \"/x\"\n",
          { "kill", "9" },
          1,
          NULL,
          "case.conf:2: unknown key lock_fle" },
        /* xl.cfg has no negative numbers: libxlutil's "lexical error" and
         * its three lines of "looks like Python" become one line that
         * names the key and its range (run_case: one line only). */
        { "dm_uid_base = 3200000\nlock_timeout_ms = -5\n",
          { "check" },
          1,
          NULL,
          "case.conf:2: lock_timeout_ms = -5: a negative number; "
          "lock_timeout_ms takes 0..3600000" },
        { "dm_uid_base = 3200000\nlock_timeout_ms = 1.5\n",
          { "check" },
          1,
          NULL,
          "case.conf:2: config parsing error near `.5': lexical error" },
    };
    (void)state;
    run_table(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_missing_config_file(void **state)
{
    char *argv[] = { S.cli, "--config", "/nonexistent/xl-reaper.conf",
                     "kill", "9", NULL };
    char *err;
    int status;

    (void)state;
    status = xlrt_run(argv, NULL, &err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_non_null(strstr(err, "does not exist"));
    assert_int_equal(count_lines(err), 1);
    assert_true(xlrt_alive(S.sleeper));
    free(err);
}

static void test_bad_commands(void **state)
{
    static const cli_case cases[] = {
        { NULL, { "frobnicate" }, 1, NULL, "unknown command 'frobnicate'" },
        { NULL,
          { "--bogus-option", "kill", "9" },
          1,
          NULL,
          "unknown option '--bogus-option'" },
        { NULL, { "kill", "9", "10" }, 1, NULL, "usage" },
        { NULL, { "uid", "--pat" }, 1, NULL, "uid: unknown option '--pat'" },
        { NULL, { "check", "extra" }, 1, NULL, "usage" },
        { NULL, { "spawn", "9", "/bin/true" }, 1, NULL, "usage" },
        { NULL, { "spawn", "9", "--" }, 1, NULL, "usage" },
        { NULL, { "spawn", "0", "--", "/bin/true" }, 1, NULL, "dom0" },
        { NULL,
          { "spawn", "8", "--", "/nonexistent/qemu" },
          1,
          NULL,
          "/nonexistent/qemu" },
        { NULL,
          { "spawn", "8", "--", "/etc/passwd" },
          1,
          NULL,
          "not an executable file" },
        { NULL,
          { "spawn", "8", "--", "/tmp" },
          1,
          NULL,
          "not an executable file" },
    };
    (void)state;
    run_table(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_spawn_refuses_busy_uid(void **state)
{
    static const cli_case busy = {
        NULL, { "spawn", "9", "--", "/bin/true" }, 3, NULL,
        "domid 9: uid 3200009 still has tasks"
    };
    (void)state;
    run_case(&busy, 0);
}

static void test_spawn_runs_restricted(void **state)
{
    char *argv[] = { S.cli, "--config", S.good, "spawn", "6", "--",
                     "/bin/sh", "-c",
                     "id -u; id -g; id -G; "
                     "grep -E '^(NoNewPrivs|Uid|Gid|Groups):' /proc/$$/status; "
                     "grep 'Max processes' /proc/$$/limits; "
                     "echo fds: $(ls /proc/$$/fd)",
                     NULL };
    char *out, *err;
    int leak, status;

    (void)state;
    static const gid_t groups[] = { 4242, 4243 };

    /* Inherited without O_CLOEXEC, and supplementary groups: neither
     * may reach the DM. */
    leak = dup2(open("/etc/passwd", O_RDONLY), 50);
    assert_int_equal(leak, 50);
    assert_int_equal(setgroups(2, groups), 0);
    status = xlrt_run(argv, &out, &err);
    assert_int_equal(setgroups(0, NULL), 0);
    close(leak);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("spawn: status %#x: %s", status, err);
    assert_non_null(strstr(out, "3200006\n3200006\n3200006\n"));
    assert_non_null(strstr(out, "Uid:\t3200006\t3200006\t3200006\t3200006"));
    assert_non_null(strstr(out, "Gid:\t3200006\t3200006\t3200006\t3200006"));
    assert_non_null(strstr(out, "Groups:\t \n"));
    assert_non_null(strstr(out, "NoNewPrivs:\t1"));
    /* The default nproc_limit, soft and hard. */
    assert_non_null(strstr(out, "Max processes             256"
                                "                  256"));
    /* 3 is the shell's own pipe for $(...). */
    assert_non_null(strstr(out, "fds: 0 1 2 3\n"));
    free(out);
    free(err);
}

static void test_exit_3_when_tasks_remain(void **state)
{
    static const cli_case remain = {
        NULL, { "kill", "4" }, 3, "tasks remain",
        NULL
    };
    pid_t p;

    (void)state;
    /* A thread of a root process holding the DM uid: counted, but the
     * uid kill checks its leader's ids and cannot reach it. */
    p = xlrt_thread_holder_start(BASE + 4);
    /* Exit 3 is not an input error: stdout says why, stderr is quiet. */
    char *argv[] = { S.cli, "--config", S.good, "kill", "4", NULL };
    char *out, *err;
    int status = xlrt_run(argv, &out, &err);
    xlrt_bystander_stop(p);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == remain.exit);
    assert_non_null(strstr(out, "kill(-1) checks only its leader's"));
    free(out);
    free(err);
}

static void test_exit_2_on_lock_timeout(void **state)
{
    static const cli_case locked = {
        NULL, { "kill", "9" }, 2, NULL,
        "timed out after 200 ms waiting for the reaper lock"
    };
    char *path;
    int fd;

    (void)state;
    assert_true(asprintf(&path, "%s/lock", S.dir) > 0);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    run_case(&locked, 0);
    close(fd);
    free(path);
}

/*
 * What the dynamic loader maps for prog (LD_TRACE_LOADED_OBJECTS, as
 * ldd asks it): the list, to be freed.
 */
static char *loaded_objects(const char *prog)
{
    char *argv[] = { (char *)prog, NULL }, *out, *err;
    int status;

    assert_int_equal(setenv("LD_TRACE_LOADED_OBJECTS", "1", 1), 0);
    status = xlrt_run(argv, &out, &err);
    unsetenv("LD_TRACE_LOADED_OBJECTS");
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        fail_msg("%s: loader trace status %#x: %s", prog, status, err);
    free(err);
    return out;
}

/*
 * The commands that kill, spawn and look start without libxenlight and
 * its libraries (loading them cost some 2 ms of every start:
 * bench/results/start.md); destroy and audit run
 * in xl-reaper-xen, which has them, and xl-reaper hands those two over
 * with the whole command line (a bad domid is refused there, exit 1).
 */
static void test_start_without_libxenlight(void **state)
{
    static const char *const xen_libs[] = { "libxenlight", "libxenctrl",
                                            "libxenguest", "libxlutil" };
    static const cli_case handed[] = {
        { NULL, { "destroy", "0" }, 1, NULL, "domid 0 is dom0" },
        { NULL, { "destroy" }, 1, NULL, "usage: xl-reaper destroy DOMID" },
    };
    const char *progs[] = { S.cli, NULL };
    char qdr[600], xen[600], *objs;

    (void)state;
    snprintf(qdr, sizeof(qdr), "%s/libexec/qemu-dm-restrict",
             xlrt_build_dir());
    snprintf(xen, sizeof(xen), "%s/libexec/xl-reaper/xl-reaper-xen",
             xlrt_build_dir());
    progs[1] = qdr;
    for (int i = 0; i < 2; i++) {
        objs = loaded_objects(progs[i]);
        for (size_t k = 0; k < sizeof(xen_libs) / sizeof(xen_libs[0]); k++)
            if (strstr(objs, xen_libs[k]))
                fail_msg("%s loads %s:\n%s", progs[i], xen_libs[k], objs);
        free(objs);
    }
    /* The same look sees libxenlight where it is. */
    objs = loaded_objects(xen);
    assert_non_null(strstr(objs, "libxenlight"));
    free(objs);
    run_table(handed, sizeof(handed) / sizeof(handed[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_commands),
        cmocka_unit_test(test_bad_domids),
        cmocka_unit_test(test_bad_configs),
        cmocka_unit_test(test_missing_config_file),
        cmocka_unit_test(test_bad_commands),
        cmocka_unit_test(test_spawn_refuses_busy_uid),
        cmocka_unit_test(test_spawn_runs_restricted),
        cmocka_unit_test(test_exit_3_when_tasks_remain),
        cmocka_unit_test(test_exit_2_on_lock_timeout),
        cmocka_unit_test(test_start_without_libxenlight),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
