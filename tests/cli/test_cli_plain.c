/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_cli_plain.c - `xl-reaper` says plainly what went wrong: a command
 * that needs root says so first, as any other uid (not "chroot ...:
 * Permission denied", not libxl's errors); with --json every failure
 * prints a JSON error object on stdout; audit --prometheus-file into a
 * directory that is not there refuses before it audits.
 *
 * uid block: 7420000 (a base for the config; nothing runs in the
 * range).  uid 65534 (nobody) runs the CLI.
 */
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

static struct {
    char *dir;
    char cli[512];
    char cli_others[512]; /* the staged copy, for uids other than root */
    char *config;
} S;

static int suite_setup(void **state)
{
    char text[512];

    (void)state;
    S.dir = xlrt_tmpdir();
    assert_int_equal(chmod(S.dir, 0755), 0); /* nobody reads the config */
    snprintf(S.cli, sizeof(S.cli), "%s/bin/xl-reaper", xlrt_build_dir());
    /* Nobody may not search the build's directories (a clone in a 0700
     * directory); the commands it runs need no sibling of the CLI. */
    snprintf(S.cli_others, sizeof(S.cli_others), "%s/xl-reaper",
             xlrt_progs_dir());
    snprintf(text, sizeof(text),
             "dm_uid_base = 7420000\nlock_file = \"%s/lock\"\n"
             "qemu_path = \"/bin/true\"\n",
             S.dir);
    S.config = xlrt_write_file(S.dir, "good.conf", text);
    assert_int_equal(chmod(S.config, 0644), 0);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_tmpdir_remove(S.dir);
    free(S.config);
    return 0;
}

/* Runs argv as uid (0: as we are); stdout and stderr into *out, *err;
 * the wait status. */
static int run_as(uid_t uid, char *const argv[], char **out, char **err)
{
    int o[2], e[2], status;
    pid_t pid;

    assert_int_equal(pipe2(o, O_CLOEXEC), 0);
    assert_int_equal(pipe2(e, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(o[1], 1);
        dup2(e[1], 2);
        if (uid && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
                    setresuid(uid, uid, uid) < 0))
            _exit(100);
        execv(argv[0], argv);
        _exit(101);
    }
    close(o[1]);
    close(e[1]);
    *out = xlrt_read_to_eof(o[0]);
    *err = xlrt_read_to_eof(e[0]);
    close(o[0]);
    close(e[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_needs_root_first(void **state)
{
    static const struct {
        const char *args[6];
        int exit;
    } cases[] = {
        { { "spawn", "5", "--", "/bin/true" }, 1 },
        { { "kill", "5" }, 1 },
        { { "destroy", "5" }, 1 },
        { { "status", "5" }, 1 },
        { { "audit" }, 2 },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[10], *out, *err, want[128];
        int n = 0, status;

        argv[n++] = S.cli_others;
        argv[n++] = "--config";
        argv[n++] = S.config;
        for (int k = 0; cases[i].args[k]; k++)
            argv[n++] = (char *)cases[i].args[k];
        argv[n] = NULL;
        status = run_as(65534, argv, &out, &err);
        snprintf(want, sizeof(want),
                 "xl-reaper: error: %s needs root (running as uid 65534)\n",
                 cases[i].args[0]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != cases[i].exit ||
            strcmp(err, want))
            fail_msg("%s as nobody: status %#x, want exit %d and only "
                     "\"%s\"; stderr: %s",
                     cases[i].args[0], status, cases[i].exit, want, err);
        free(out);
        free(err);
    }
}

/* stdout is one JSON object with the error, the command and the exit. */
static void expect_json_error(const char *out, const char *error,
                              const char *cmd, int exit_code)
{
    char want[256];

    snprintf(want, sizeof(want), "\"command\":\"%s\",\"exit\":%d}\n", cmd,
             exit_code);
    if (strncmp(out, "{\"error\":\"", 10) || !strstr(out, error) ||
        !strstr(out, want) || strchr(out, '\n') != out + strlen(out) - 1)
        fail_msg("want one JSON error object with \"%s\" and %s; stdout: "
                 "%s",
                 error, want, out);
}

static void test_json_error_object(void **state)
{
    char *bad = xlrt_write_file(S.dir, "bad.conf", "bogus = 1\n");
    char *out, *err;
    int status;

    (void)state;
    {
        char *argv[] = { S.cli, "--json", "--config", bad, "check", NULL };

        status = run_as(0, argv, &out, &err);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
        expect_json_error(out, "bad.conf:1: unknown key bogus", "check", 1);
        free(out);
        free(err);
    }
    {
        char *argv[] = { S.cli,  "--json", "--config", S.config,
                         "kill", "0",      NULL };

        status = run_as(0, argv, &out, &err);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
        expect_json_error(out, "domid 0 is dom0", "kill", 1);
        free(out);
        free(err);
    }
    {
        char *argv[] = { S.cli, "--json", "frob", NULL };

        status = run_as(0, argv, &out, &err);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
        expect_json_error(out, "unknown command 'frob'", "frob", 1);
        free(out);
        free(err);
    }
    {
        char *argv[] = { S.cli_others, "--json",    "--config",
                         S.config,     "spawn",     "5",
                         "--",         "/bin/true", NULL };

        status = run_as(65534, argv, &out, &err);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
        expect_json_error(out, "spawn needs root", "spawn", 1);
        free(out);
        free(err);
    }
    /* A success prints its own answer, and no error. */
    {
        char *argv[] = { S.cli, "--json", "--config", S.config,
                         "uid", "5",      NULL };

        status = run_as(0, argv, &out, &err);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_null(strstr(out, "\"error\""));
        free(out);
        free(err);
    }
    free(bad);
}

/* Refused before the audit: at once, and nothing audited. */
static void test_prometheus_file_checked_first(void **state)
{
    char *argv[] = { S.cli,   "--config",          S.config,
                     "audit", "--prometheus-file", "/nonexistent-xlr/x.prom",
                     NULL };
    char *out, *err;
    int status;

    (void)state;
    status = run_as(0, argv, &out, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 2 ||
        strcmp(err, "xl-reaper: error: audit --prometheus-file "
                    "/nonexistent-xlr/x.prom: /nonexistent-xlr: No such "
                    "file or directory; nothing audited\n"))
        fail_msg("status %#x; stderr: %s", status, err);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_needs_root_first),
        cmocka_unit_test(test_json_error_object),
        cmocka_unit_test(test_prometheus_file_checked_first),
    };

    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
