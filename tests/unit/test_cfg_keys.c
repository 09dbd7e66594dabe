/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_cfg_keys.c - finding each `key =` of an xl.cfg text with its line,
 * the way libxlutil's lexer reads it.
 */
#include <stdio.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"
#include "xlreaper_host.h"

static int collect(void *arg, const char *key, unsigned line)
{
    char *out = arg;
    size_t n = strlen(out);

    snprintf(out + n, 512 - n, "%s@%u ", key, line);
    return 0;
}

static void test_key_walk_table(void **state)
{
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        { "a = 1\n", "a@1 " },
        { "a = 1\nb = \"x\"\n", "a@1 b@2 " },
        { "a = 1; b = 2\n", "a@1 b@1 " },
        { "# c = 3\na = 1 # d = 4\n", "a@2 " },
        { "a = \"# not = a comment\"\nb = 2\n", "a@1 b@2 " },
        { "a = 'x = y; z = w'\n", "a@1 " },
        { "a = \"esc \\\" q = 1\"\nb = 1\n", "a@1 b@2 " },
        { "l = [ \"x\",\n  \"y = 2\",\n  3 ]\nm = 1\n", "l@1 m@4 " },
        { "l = [\n# k = 1\n]\nm = 1\n", "l@1 m@4 " },
        { "a += \"x\"\n", "a@1 " },
        { "  \tindented = 1\n", "indented@1 " },
        { "dotted.key_9 = 1\n", "dotted.key_9@1 " },
        { "a = 1", "a@1 " },  /* no final newline */
        { "\n\n\n", "" },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char got[512] = "";
        xlreaper__cfg_each_key(cases[i].text, strlen(cases[i].text),
                               collect, got);
        if (strcmp(got, cases[i].want))
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, got,
                     cases[i].want);
    }
}

static int stop_at_second(void *arg, const char *key, unsigned line)
{
    int *n = arg;
    (void)key;
    (void)line;
    return ++*n == 2 ? 42 : 0;
}

static void test_walk_stops_when_asked(void **state)
{
    static const char text[] = "a = 1\nb = 2\nc = 3\n";
    int n = 0;
    (void)state;

    assert_int_equal(xlreaper__cfg_each_key(text, strlen(text),
                                            stop_at_second, &n),
                     42);
    assert_int_equal(n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_walk_table),
        cmocka_unit_test(test_walk_stops_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
