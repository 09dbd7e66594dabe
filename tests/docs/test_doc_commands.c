/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_doc_commands.c - every command README.md and the man pages show
 * is run, here or by a named test, or says why it cannot be.
 *
 * A command is a line of an indented block that starts with a root
 * prompt ("    # CMD"), a line of README.md's indented blocks that starts
 * with make or dpkg (README writes them without a prompt; a "  # ..."
 * after the command is a comment), or an inline `make ...`, `dpkg ...`,
 * `systemctl ...` or `scripts/...`.  The {.shell-session} examples are
 * run by test_docs.c and are not read here.
 *
 * Each command must be in the table below, word for word, as one of:
 *  - HERE: this suite runs it (with a scratch config instead of the
 *    host's) and checks its exit status and what it prints;
 *  - BY: a file of the tree runs it; the file must contain the given
 *    text (the command, or the part of it that file runs);
 *  - NOT: it cannot run inside make check, and why; a make target named
 *    so must still exist in the Makefiles.
 * A command the docs gain, lose or change fails here until the table
 * says how it is run: the next drift between the docs and the tree
 * fails `make check`.
 *
 * uid block: 8100000 (base) .. 8100005.  Runs nothing under a uid but
 * `xl-reaper kill`'s helper, on an empty uid.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define MAX_COMMANDS 128u

typedef enum { HERE, BY, NOT } how;

typedef struct {
    const char *cmd;
    how how;
    /* HERE: the scratch config but for its lock_file; BY: the file;
     * NOT: why. */
    const char *arg;
    /* HERE: what stdout must start with; BY: what the file contains;
     * NOT: a make target that must exist, or NULL. */
    const char *want;
    /* HERE: its argv after "xl-reaper --config CONF", or a make target. */
    const char *run[4];
} doc_command;

static const doc_command table[] = {
    /* README.md */
    { "make demo",
      BY,
      "tests/cli/test_demo.c",
      "realpath(\"scripts/demo\"",
      { 0 } },
    { "make check",
      NOT,
      "it is the suite this test is part of",
      "check",
      { 0 } },
    { "make format-check",
      HERE,
      NULL,
      "format-check: lines changed since",
      { "format-check" } },
    { "make deb", BY, "tests/e2e/build-project", " deb ", { 0 } },
    /* VERSION: debian/changelog's, which make deb builds. */
    { "dpkg -i build/deb/xl-reaper_VERSION_amd64.deb",
      BY,
      "tests/e2e/dom0-init",
      "dpkg -i",
      { 0 } },
    { "dpkg -i", BY, "tests/e2e/dom0-init", "dpkg -i", { 0 } },
    { "dpkg -r",
      BY,
      "tests/e2e/scenarios/08-systemd-unit.sh",
      "dpkg -r",
      { 0 } },
    { "dpkg -P",
      NOT,
      "purges this host's package; the e2e removes it with dpkg -r (08)",
      NULL,
      { 0 } },
    { "make install",
      BY,
      "tests/install/test_install.c",
      "run_make(\"install\"",
      { 0 } },
    { "make uninstall",
      BY,
      "tests/install/test_install.c",
      "run_make(\"uninstall\"",
      { 0 } },
    { "make docs", BY, "tests/docs/test_docs.c", "docs/render", { 0 } },
    { "make soak",
      NOT,
      "each adversary test 10,000 times: hours",
      "soak",
      { 0 } },
    { "make bench",
      NOT,
      "benchmarks stay out of timed tests",
      "bench",
      { 0 } },
    { "make bench-results",
      NOT,
      "writes bench/RESULTS.md from a bench run",
      "bench-results",
      { 0 } },
    { "make bench-compare BASE=main",
      NOT,
      "benchmarks stay out of timed tests",
      "bench-compare",
      { 0 } },
    { "make e2e", NOT, "boots Xen in QEMU: .ci/run runs it", "e2e", { 0 } },
    { "make check-libxl-patch",
      NOT,
      "builds libxl from Debian's Xen source: minutes",
      "check-libxl-patch",
      { 0 } },
    { "make SANITIZE=1 check",
      NOT,
      "this suite again, under ASan and UBSan",
      "check",
      { 0 } },
    { "scripts/install-deps --deb",
      BY,
      "debian/deb.mk",
      "install-deps --deb",
      { 0 } },
    /* xl-reaper(8) */
    { "xl-reaper uid 5",
      HERE,
      "dm_uid_base = 131072\n"
      "dm_gid_mode = \"range-base\"\n",
      "131077 131072\n",
      { "uid", "5" } },
    { "xl-reaper kill 5",
      HERE,
      "dm_uid_base = 8100000\n",
      "domid 5 (uid 8100005): killed in ",
      { "kill", "5" } },
    { "xl-reaper audit --tap", BY, "tests/e2e/lib.sh", "audit --tap", { 0 } },
    /* xl-reaperd(8) */
    { "systemctl enable --now xl-reaperd.service",
      BY,
      "tests/e2e/scenarios/08-systemd-unit.sh",
      "is-enabled",
      { 0 } },
    { "systemctl enable --now xl-reaperd",
      BY,
      "tests/e2e/scenarios/08-systemd-unit.sh",
      "is-enabled",
      { 0 } },
    { "systemctl reload",
      BY,
      "tests/e2e/scenarios/08-systemd-unit.sh",
      "systemctl reload",
      { 0 } },
    { "journalctl -u xl-reaperd",
      BY,
      "tests/e2e/scenarios/08-systemd-unit.sh",
      "journalctl",
      { 0 } },
    { "tail -n 1 /var/log/xen/xl-reaperd.events",
      BY,
      "tests/e2e/scenarios/08-systemd-unit.sh",
      "xl-reaperd.events",
      { 0 } },
};

#define NTABLE (sizeof(table) / sizeof(table[0]))

typedef struct {
    char *cmd, *where;
} found;

static struct {
    found f[MAX_COMMANDS];
    unsigned n;
} S;

/* debian/changelog's version, which `make deb` builds, as VERSION. */
static char *version_as_word(char *cmd)
{
    static char version[64];
    char *at, *out;

    if (!version[0]) {
        FILE *f = fopen("debian/changelog", "r");

        assert_non_null(f);
        assert_int_equal(fscanf(f, "xl-reaper (%63[^)])", version), 1);
        fclose(f);
    }
    at = strstr(cmd, version);
    if (!at)
        return cmd;
    assert_true(asprintf(&out, "%.*sVERSION%s", (int)(at - cmd), cmd,
                         at + strlen(version)) > 0);
    free(cmd);
    return out;
}

static void add(const char *doc, unsigned line, const char *start, size_t len)
{
    char *cmd;

    while (len && (start[len - 1] == ' ' || start[len - 1] == '\n'))
        len--;
    if (!len)
        return;
    if (S.n == MAX_COMMANDS)
        fail_msg("more than %u commands in the docs", MAX_COMMANDS);
    cmd = strndup(start, len);
    assert_non_null(cmd);
    S.f[S.n].cmd = version_as_word(cmd);
    assert_true(asprintf(&S.f[S.n].where, "%s:%u", doc, line) > 0);
    S.n++;
}

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The inline `...` spans of one line that are commands. */
static void inline_commands(const char *doc, unsigned line, const char *s)
{
    static const char *const words[] = { "make ", "dpkg ", "systemctl ",
                                         "scripts/", NULL };

    for (const char *o = strchr(s, '`'); o; o = strchr(o + 1, '`')) {
        const char *c = strchr(o + 1, '`');

        if (!c)
            return;
        for (unsigned w = 0; words[w]; w++)
            if (starts(o + 1, words[w]))
                add(doc, line, o + 1, (size_t)(c - o - 1));
        o = c;
    }
}

static void read_doc(const char *doc)
{
    FILE *f = fopen(doc, "r");
    char buf[4096];
    unsigned line = 0;
    bool fenced = false, readme = strstr(doc, "README") != NULL;

    if (!f)
        fail_msg("%s: %s", doc, strerror(errno));
    while (fgets(buf, sizeof(buf), f)) {
        line++;
        if (starts(buf, "```")) {
            fenced = !fenced; /* test_docs.c runs the sessions */
            continue;
        }
        if (fenced)
            continue;
        if (starts(buf, "    # ")) {
            add(doc, line, buf + 6, strlen(buf + 6));
        } else if (readme &&
                   (starts(buf, "    make ") || starts(buf, "    dpkg "))) {
            char *comment = strstr(buf, "  #");

            add(doc, line, buf + 4,
                comment ? (size_t)(comment - buf - 4) : strlen(buf + 4));
        } else {
            inline_commands(doc, line, buf);
        }
    }
    fclose(f);
}

static int suite_setup(void **state)
{
    DIR *d = opendir("docs/man");
    struct dirent *de;

    (void)state;
    assert_non_null(d);
    read_doc("README.md");
    while ((de = readdir(d))) {
        char *path;
        size_t n = strlen(de->d_name);

        if (n < 4 || strcmp(de->d_name + n - 3, ".md"))
            continue;
        assert_true(asprintf(&path, "docs/man/%s", de->d_name) > 0);
        read_doc(path);
        free(path);
    }
    closedir(d);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < S.n; i++) {
        free(S.f[i].cmd);
        free(S.f[i].where);
    }
    return 0;
}

static const doc_command *lookup(const char *cmd)
{
    for (unsigned i = 0; i < NTABLE; i++)
        if (!strcmp(table[i].cmd, cmd))
            return &table[i];
    return NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;

    if (!f)
        return NULL;
    n = getdelim(&buf, &cap, '\0', f);
    fclose(f);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Every target make knows, read from its database without running a
 * recipe ("make -pq" of a goal that does not exist). */
static bool make_has_target(const char *target)
{
    static char *db;
    char *argv[] = { "/usr/bin/make",     "-pq", "-f", "Makefile", "NODEPS=1",
                     "xlr-no-such-goal-", NULL };
    char want[128];

    if (!db) {
        xlrt_run(argv, &db, NULL);
        assert_non_null(db);
    }
    snprintf(want, sizeof(want), "\n%s:", target);
    return strstr(db, want) != NULL;
}

/* ---------- the tests ---------- */

/* Every command the docs show is in the table, and every entry of the
 * table is still shown (else it is dead weight that hides drift). */
static void test_every_command_is_known(void **state)
{
    bool shown[NTABLE] = { false };
    char problems[4096] = "";
    size_t len = 0;

    (void)state;
    assert_true(S.n > 10); /* the reader found the docs' commands */
    for (unsigned i = 0; i < S.n; i++) {
        const doc_command *c = lookup(S.f[i].cmd);

        if (c)
            shown[c - table] = true;
        else
            len += (size_t)snprintf(problems + len, sizeof(problems) - len,
                                    "  %s: `%s` is run nowhere: add it to "
                                    "the table of %s\n",
                                    S.f[i].where, S.f[i].cmd, __FILE__);
        if (len >= sizeof(problems))
            break;
    }
    for (unsigned t = 0; t < NTABLE && len < sizeof(problems); t++)
        if (!shown[t])
            len += (size_t)snprintf(problems + len, sizeof(problems) - len,
                                    "  `%s` is in the table, but no "
                                    "document shows it any more\n",
                                    table[t].cmd);
    if (len)
        fail_msg("the docs and this table disagree:\n%s", problems);
}

/* BY: the file named runs it; NOT: the make target it names exists. */
static void test_run_elsewhere(void **state)
{
    (void)state;
    for (unsigned t = 0; t < NTABLE; t++) {
        const doc_command *c = &table[t];
        char *text;

        if (c->how == BY) {
            text = slurp(c->arg);
            if (!text)
                fail_msg("`%s`: %s, which runs it, is gone", c->cmd, c->arg);
            if (!strstr(text, c->want))
                fail_msg("`%s`: %s does not contain \"%s\" any more", c->cmd,
                         c->arg, c->want);
            free(text);
        } else if (c->want && (c->how == NOT || starts(c->cmd, "make "))) {
            if (!make_has_target(c->how == NOT ? c->want : c->run[0]))
                fail_msg("`%s`: make has no target %s", c->cmd,
                         c->how == NOT ? c->want : c->run[0]);
        }
    }
}

static void run_here(const doc_command *c, const char *dir)
{
    char *conf, *text, *out = NULL, *err = NULL;
    char *argv[12] = { 0 };
    unsigned n = 0;
    int status;

    if (starts(c->cmd, "make ")) {
        argv[n++] = "/usr/bin/make";
        argv[n++] = "-s";
        argv[n++] = (char *)c->run[0];
    } else {
        assert_true(
            asprintf(&text, "lock_file = \"%s/lock\"\n%s", dir, c->arg) > 0);
        conf = xlrt_write_file(dir, "scratch.conf", text);
        free(text);
        assert_true(
            asprintf(&argv[n++], "%s/bin/xl-reaper", xlrt_build_dir()) > 0);
        argv[n++] = "--config";
        argv[n++] = conf;
        for (unsigned i = 0; c->run[i]; i++)
            argv[n++] = (char *)c->run[i];
    }
    status = xlrt_run(argv, &out, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("`%s`: status %#x\nstdout:\n%s\nstderr:\n%s", c->cmd, status,
                 out ? out : "", err ? err : "");
    if (!out || !starts(out, c->want))
        fail_msg("`%s`: printed\n%s\nnot starting\n%s", c->cmd,
                 out ? out : "(nothing)", c->want);
    if (!starts(c->cmd, "make ")) {
        free(argv[0]);
        free(argv[2]);
    }
    free(out);
    free(err);
}

static void test_run_here(void **state)
{
    char *dir = xlrt_tmpdir();
    unsigned ran = 0;

    (void)state;
    for (unsigned t = 0; t < NTABLE; t++)
        if (table[t].how == HERE) {
            run_here(&table[t], dir);
            ran++;
        }
    assert_true(ran >= 3);
    xlrt_tmpdir_remove(dir);
}

/* What the docs show a command print is what the table checks. */
static void test_shown_output(void **state)
{
    char *page = slurp("docs/man/xl-reaper.8.md");

    (void)state;
    assert_non_null(page);
    /* The shipped config's range base and gid mode, as the page says. */
    assert_non_null(
        strstr(page, "    # xl-reaper uid 5\n    131077 131072\n"));
    assert_non_null(strstr(page,
                           "    # xl-reaper kill 5\n    domid 5 (uid 131077): "
                           "killed in "));
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_command_is_known),
        cmocka_unit_test(test_run_elsewhere),
        cmocka_unit_test(test_run_here),
        cmocka_unit_test(test_shown_output),
    };
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
