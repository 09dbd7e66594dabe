/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_cli_usage.c - what a newcomer types first: --version, --help and
 * mistakes, for xl-reaper, xl-reaperd and qemu-dm-restrict.
 *
 * - --version prints "PROG VERSION", the version of debian/changelog.
 * - Every command's --help works with no config at all: it is answered
 *   before the config is read, so a missing or broken one cannot stop it.
 * - Every usage error says what was wrong, on one line, before any config
 *   is read (each case runs with a config file that does not exist: a
 *   check made after the load would report that instead).
 * - Every line on stderr starts "PROG: LEVEL: ", the library's lines too,
 *   whatever name the program was run under.
 *
 * No uid is used: nothing here gets as far as touching a process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define NO_CONFIG "/nonexistent/xlrtest-usage.conf"

static struct {
    char *dir;
    char cli[512], daemon[512], wrapper[512];
    char *bad; /* a config with an unknown key */
} S;

static int suite_setup(void **state)
{
    (void)state;
    S.dir = xlrt_tmpdir();
    snprintf(S.cli, sizeof(S.cli), "%s/bin/xl-reaper", xlrt_build_dir());
    snprintf(S.daemon, sizeof(S.daemon), "%s/bin/xl-reaperd",
             xlrt_build_dir());
    snprintf(S.wrapper, sizeof(S.wrapper), "%s/libexec/qemu-dm-restrict",
             xlrt_build_dir());
    S.bad = xlrt_write_file(S.dir, "bad.conf",
                            "dm_uid_base = 9200000\nlock_fle = \"/x\"\n");
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    free(S.bad);
    xlrt_tmpdir_remove(S.dir);
    return 0;
}

static int count_lines(const char *s)
{
    int n = 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Fails unless every line of err starts with prefix. */
static void each_line_starts(const char *what, const char *err,
                             const char *prefix)
{
    const char *l = err;

    if (!*err)
        fail_msg("%s: nothing on stderr", what);
    while (*l) {
        const char *nl = strchr(l, '\n');

        if (strncmp(l, prefix, strlen(prefix)))
            fail_msg("%s: a line does not start \"%s\":\n%s", what, prefix,
                     err);
        if (!nl)
            fail_msg("%s: stderr does not end in a newline: %s", what, err);
        l = nl + 1;
    }
}

/* The version at the top of debian/changelog: "pkg (VERSION) ...". */
static char *changelog_version(void)
{
    char line[256], *open, *close;
    FILE *f = fopen("debian/changelog", "re");

    if (!f)
        fail_msg("debian/changelog: %s (run from the source tree, as make "
                 "check does)",
                 strerror(errno));
    if (!fgets(line, sizeof(line), f))
        fail_msg("debian/changelog is empty");
    fclose(f);
    open = strchr(line, '(');
    close = open ? strchr(open, ')') : NULL;
    if (!close)
        fail_msg("debian/changelog: no (version) on line 1: %s", line);
    *close = '\0';
    return strdup(open + 1);
}

static void test_version(void **state)
{
    const char *progs[] = { S.cli, S.daemon, S.wrapper };
    const char *names[] = { "xl-reaper", "xl-reaperd", "qemu-dm-restrict" };
    char *version = changelog_version(), want[300], *out, *err;

    (void)state;
    assert_string_equal(version, XLREAPER_VERSION);
    for (int i = 0; i < 3; i++) {
        char *argv[] = { (char *)progs[i], "--version", NULL };
        int status = xlrt_run(argv, &out, &err);

        snprintf(want, sizeof(want), "%s %s\n", names[i], version);
        if (!WIFEXITED(status) || WEXITSTATUS(status) || strcmp(out, want) ||
            *err)
            fail_msg("%s --version: status %#x, stdout \"%s\" (want "
                     "\"%s\"), stderr \"%s\"",
                     names[i], status, out, want, err);
        free(out);
        free(err);
    }
    free(version);
}

static const char *const commands[] = { "uid",    "spawn", "kill",  "destroy",
                                        "status", "check", "audit", NULL };

/* argv: the CLI, then pre (NULL-ended), the command, then post. */
static int run_cli(const char *const *pre, const char *cmd,
                   const char *const *post, char **out, char **err)
{
    char *argv[32];
    int n = 0;

    argv[n++] = S.cli;
    for (; pre && *pre; pre++)
        argv[n++] = (char *)*pre;
    if (cmd)
        argv[n++] = (char *)cmd;
    for (; post && *post; post++)
        argv[n++] = (char *)*post;
    argv[n] = NULL;
    return xlrt_run(argv, out, err);
}

static void test_help_without_config(void **state)
{
    /* No config file at all, a missing one named, a broken one, and the
     * host's default (whatever it is): help must not care. */
    const char *const none[] = { NULL };
    const char *const missing[] = { "--config", NO_CONFIG, NULL };
    const char *const broken[] = { "--config", S.bad, NULL };
    const char *const *configs[] = { none, missing, broken };
    const char *const helps[][4] = {
        { "--help", NULL },
        { "-h", NULL },
        { "7", "--help", NULL },
    };
    char *out, *err, want[64];

    (void)state;
    for (int c = 0; c < 3; c++) {
        for (int k = 0; commands[k]; k++) {
            for (int h = 0; h < 3; h++) {
                int status =
                    run_cli(configs[c], commands[k], helps[h], &out, &err);

                snprintf(want, sizeof(want), " %s", commands[k]);
                if (!WIFEXITED(status) || WEXITSTATUS(status) || *err ||
                    strncmp(out, "usage: xl-reaper ", 17) ||
                    !strstr(out, want) || !strstr(out, "exit: 0"))
                    fail_msg("config %d: %s %s: status %#x\nstdout: "
                             "%s\nstderr: %s",
                             c, commands[k], helps[h][0], status, out, err);
                free(out);
                free(err);
            }
        }
        /* The whole CLI's help lists every command. */
        const char *const top[] = { "--help", NULL };
        int status = run_cli(configs[c], NULL, top, &out, &err);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        for (int k = 0; commands[k]; k++)
            assert_non_null(strstr(out, commands[k]));
        assert_non_null(strstr(out, "--version"));
        free(out);
        free(err);
    }

    /* After "--" it is PROG's argument, not ours: the spawn goes on to
     * read the config (which does not exist). */
    const char *const past[] = { "5", "--", "/bin/true", "--help", NULL };
    int status = run_cli(missing, "spawn", past, &out, &err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_non_null(strstr(err, "does not exist"));
    free(out);
    free(err);

    /* The daemon and the wrapper: their own help, no config read. */
    const char *others[] = { S.daemon, S.wrapper };
    const char *names[] = { "usage: xl-reaperd ", "usage: qemu-dm-restrict " };
    for (int i = 0; i < 2; i++) {
        char *argv[] = { (char *)others[i], "--help", NULL };

        assert_int_equal(setenv("XL_REAPER_CONFIG", NO_CONFIG, 1), 0);
        status = xlrt_run(argv, &out, &err);
        unsetenv("XL_REAPER_CONFIG");
        if (!WIFEXITED(status) || WEXITSTATUS(status) || *err ||
            strncmp(out, names[i], strlen(names[i])))
            fail_msg("%s --help: status %#x\nstdout: %s\nstderr: %s",
                     others[i], status, out, err);
        free(out);
        free(err);
    }
}

typedef struct {
    const char *args[8]; /* after --config NO_CONFIG */
    int exit;
    const char *err; /* stderr, after "xl-reaper: error: " */
} usage_case;

static void test_usage_errors_say_what(void **state)
{
    static const usage_case cases[] = {
        /* The issue's own example. */
        { { "spawn", "--bogus", "5", "--", "x" },
          1,
          "spawn: unknown option '--bogus' (usage: xl-reaper spawn "
          "[--reap-stale] DOMID -- PROG [ARG...])" },
        { { "spawn", "-q", "5", "--", "x" }, 1, "spawn: unknown option '-q'" },
        { { "spawn" }, 1, "spawn: missing DOMID (usage: " },
        { { "spawn", "5" }, 1, "spawn: missing '--' and PROG after DOMID" },
        { { "spawn", "5", "x" },
          1,
          "spawn: expected '--' after DOMID, got 'x'" },
        { { "spawn", "5", "--" }, 1, "spawn: missing PROG after '--'" },
        { { "spawn", "0", "--", "x" }, 1, "domid 0 is dom0" },
        { { "spawn", "x5", "--", "x" }, 1, "invalid domid 'x5'" },
        { { "kill" }, 1, "kill: missing DOMID (usage: xl-reaper kill DOMID)" },
        { { "kill", "5", "6" },
          1,
          "kill: unexpected argument '6' after DOMID" },
        { { "kill", "--now", "5" }, 1, "kill: unknown option '--now'" },
        { { "kill", "-1" }, 1, "invalid domid '-1'" },
        { { "kill", "0" }, 1, "domid 0 is dom0" },
        { { "status" }, 1, "status: missing DOMID" },
        { { "status", "5", "x" },
          1,
          "status: unexpected argument 'x' after DOMID" },
        /* destroy and audit run in xl-reaper-xen: the same words. */
        { { "destroy" }, 1, "destroy: missing DOMID" },
        { { "destroy", "--force", "5" },
          1,
          "destroy: unknown option '--force'" },
        { { "uid" },
          1,
          "uid: missing DOMID (usage: xl-reaper uid DOMID | "
          "--pet)" },
        { { "uid", "--pet", "x" },
          1,
          "uid: unexpected argument 'x' after --pet" },
        { { "uid", "--pat" }, 1, "uid: unknown option '--pat'" },
        { { "check", "extra" },
          1,
          "check: unexpected argument 'extra' (usage: xl-reaper check)" },
        { { "check", "--quiet" }, 1, "check: unknown option '--quiet'" },
        { { "audit", "--bogus" }, 2, "audit: unknown option '--bogus'" },
        { { "audit", "--tap", "--json" },
          2,
          "audit: --tap and --json exclude each other" },
        { { "audit", "--setid-timeout", "-1" },
          2,
          "audit: --setid-timeout '-1': a number of ms, 0..3600000" },
        { { "audit", "--xenstore-timeout" },
          2,
          "audit: option '--xenstore-timeout' needs a value" },
        { { "audit", "--xenstore-timeout", "0" },
          2,
          "audit: --xenstore-timeout '0': a number of ms, 1..600000" },
        { { "audit", "extra" }, 2, "audit: unexpected argument 'extra'" },
        { { "frobnicate" },
          1,
          "unknown command 'frobnicate' (see xl-reaper --help)" },
        { { "--bogus", "kill", "5" }, 1, "unknown option '--bogus'" },
        { { "-jz", "kill", "5" }, 1, "unknown option '-z'" },
        { { NULL }, 1, "missing COMMAND" },
    };
    const char *const missing[] = { "--config", NO_CONFIG, NULL };
    char *out, *err;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const usage_case *c = &cases[i];
        int status = run_cli(missing, NULL, c->args, &out, &err);

        if (!WIFEXITED(status) || WEXITSTATUS(status) != c->exit)
            fail_msg("case %zu (%s): status %#x, want exit %d\nstderr: %s", i,
                     c->args[0] ? c->args[0] : "", status, c->exit, err);
        if (count_lines(err) != 1 || strncmp(err, "xl-reaper: error: ", 18) ||
            !strstr(err, c->err))
            fail_msg("case %zu: want one line \"xl-reaper: error: ...%s...\""
                     ", got: %s",
                     i, c->err, err);
        if (*out)
            fail_msg("case %zu: stdout: %s", i, out);
        free(out);
        free(err);
    }
    /* --config without its FILE. */
    const char *const dangling[] = { "--config", NULL };
    int status = run_cli(dangling, NULL, NULL, &out, &err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_string_equal(err, "xl-reaper: error: option '--config' needs a "
                             "value (see xl-reaper --help)\n");
    free(out);
    free(err);
}

static void test_daemon_usage_errors(void **state)
{
    static const struct {
        const char *args[4];
        const char *err;
    } cases[] = {
        { { "--bogus" },
          "xl-reaperd: error: unknown option '--bogus' (see xl-reaperd "
          "--help)\n" },
        { { "-q" },
          "xl-reaperd: error: unknown option '-q' (see xl-reaperd "
          "--help)\n" },
        { { "-c" },
          "xl-reaperd: error: option '-c' needs a value (see xl-reaperd "
          "--help)\n" },
        { { "stray" },
          "xl-reaperd: error: unexpected argument 'stray' (it takes "
          "options only; see xl-reaperd --help)\n" },
        { { "--events", "relative.log" },
          "xl-reaperd: error: --events needs an absolute path (the file "
          "is reopened on SIGHUP)\n" },
    };
    char *out, *err;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[6] = { S.daemon };
        int status;

        for (int k = 0; cases[i].args[k]; k++)
            argv[k + 1] = (char *)cases[i].args[k];
        status = xlrt_run(argv, &out, &err);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 ||
            strcmp(err, cases[i].err) || *out)
            fail_msg("xl-reaperd %s: status %#x\nstdout: %s\nstderr: %s"
                     "want: %s",
                     cases[i].args[0], status, out, err, cases[i].err);
        free(out);
        free(err);
    }
}

/*
 * The library logs as the program that called it, not as "xl-reaper"
 * everywhere, and not as whatever name the program was run under: each
 * binary is run through a symbolic link of another name.
 */
static void test_one_prefix_per_program(void **state)
{
    char link_d[600], link_w[600], *out, *err;
    int status;

    (void)state;
    snprintf(link_d, sizeof(link_d), "%s/xlrtest-daemon-link", S.dir);
    snprintf(link_w, sizeof(link_w), "%s/xlrtest-wrapper-link", S.dir);
    /* The build directory may be relative: the links need its real
     * path. */
    char *real_d = realpath(S.daemon, NULL),
         *real_w = realpath(S.wrapper, NULL);
    assert_non_null(real_d);
    assert_non_null(real_w);
    assert_int_equal(symlink(real_d, link_d), 0);
    assert_int_equal(symlink(real_w, link_w), 0);
    free(real_d);
    free(real_w);

    char *cli[] = { S.cli, "--config", S.bad, "kill", "5", NULL };
    status = xlrt_run(cli, &out, &err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    each_line_starts("xl-reaper", err, "xl-reaper: error: ");
    assert_non_null(strstr(err, "bad.conf:2: unknown key lock_fle"));
    free(out);
    free(err);

    char *daemon[] = { link_d, "--config", S.bad, NULL };
    status = xlrt_run(daemon, &out, &err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    each_line_starts("xl-reaperd", err, "xl-reaperd: error: ");
    assert_non_null(strstr(err, "bad.conf:2: unknown key lock_fle"));
    free(out);
    free(err);

    /* As libxl runs it: the config refused, the DM not started. */
    char *wrapper[] = { link_w, "-xen-domid", "5", "-nographic", NULL };
    assert_int_equal(setenv("XL_REAPER_CONFIG", S.bad, 1), 0);
    status = xlrt_run(wrapper, &out, &err);
    unsetenv("XL_REAPER_CONFIG");
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    each_line_starts("qemu-dm-restrict", err, "qemu-dm-restrict: error: ");
    assert_non_null(strstr(err, "bad.conf:2: unknown key lock_fle"));
    assert_non_null(strstr(err, "domid 5: config "));
    free(out);
    free(err);

    /* Its own refusals too. */
    char *nodomid[] = { link_w, "-nographic", NULL };
    status = xlrt_run(nodomid, &out, &err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_string_equal(err, "qemu-dm-restrict: error: no -xen-domid: not "
                             "started by libxl for a domain?\n");
    free(out);
    free(err);
    unlink(link_d);
    unlink(link_w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_help_without_config),
        cmocka_unit_test(test_usage_errors_say_what),
        cmocka_unit_test(test_daemon_usage_errors),
        cmocka_unit_test(test_one_prefix_per_program),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
