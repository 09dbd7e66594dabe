/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_alert_rules.c - the documented alert rule is the tested one, and
 * it fires when it must: promtool test rules on
 * tests/daemon/alert_rules_test.yml (a healthy host; no metrics file;
 * a stale one; xenstored gone), and every man page or document that
 * prints the rule prints config/xl-reaper.rules.yml's expr.  Run from
 * the top of the tree, as make check does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

#define RULES "config/xl-reaper.rules.yml"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf;
    long n;

    if (!f)
        fail_msg("%s: cannot open (run from the top of the tree)", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The text after "expr: " up to the end of its line, malloc'd. */
static char *expr_of(const char *text, const char *path)
{
    const char *p = strstr(text, "expr: "), *nl;
    char *e;

    if (!p)
        fail_msg("%s: no \"expr: \" line", path);
    p += strlen("expr: ");
    nl = strchr(p, '\n');
    e = strndup(p, nl ? (size_t)(nl - p) : strlen(p));
    assert_non_null(e);
    return e;
}

static void test_promtool_test_rules(void **state)
{
    char *argv[] = { "/usr/bin/promtool", "test", "rules",
                     "tests/daemon/alert_rules_test.yml", NULL };
    char *out = NULL, *err = NULL;
    int st;

    (void)state;
    if (access(argv[0], X_OK) != 0)
        fail_msg("/usr/bin/promtool is missing: it comes with Debian's "
                 "prometheus package (scripts/install-deps installs it)");
    st = xlrt_run(argv, &out, &err);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !strstr(out, "SUCCESS"))
        fail_msg("promtool test rules: status %d, said:\n%s%s", st, out, err);
    free(out);
    free(err);
}

static void test_documented_rule_is_the_tested_one(void **state)
{
    static const char *const docs[] = {
        "docs/man/xl-reaperd.8.md",
        "docs/man/xl-reaper.8.md",
        "docs/qemu-deprivilege.pandoc",
    };
    char *rules = slurp(RULES), *want = expr_of(rules, RULES);

    (void)state;
    for (unsigned i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        char *text = slurp(docs[i]), *got = expr_of(text, docs[i]);

        if (strcmp(got, want))
            fail_msg("%s prints the rule\n  %s\nbut %s has\n  %s", docs[i],
                     got, RULES, want);
        free(got);
        free(text);
    }
    free(want);
    free(rules);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_promtool_test_rules),
        cmocka_unit_test(test_documented_rule_is_the_tested_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
