/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_facts.c - what the tree promises about itself holds.
 *
 * A comment that leans on a measured fact cites it as "docs/facts.md
 * F<n>"; the fact must be there, under a heading "## F<n>.", with a way
 * to measure it again.  No file cites the notes the facts were first
 * collected in, which are not part of the repository.  And every source
 * file (C, make, shell, any script with a #! line) names its licence in
 * an SPDX line near its top, as debian/copyright says it does: a file
 * without one could not move into libxl.  Reads the source tree (the
 * current directory) only.
 */
#include <ctype.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xlr_test.h"

#define FACTS "docs/facts.md"
#define MAX_FACTS 100
#define MAX_FILE (1u << 20)

/* Spelled in two pieces, so that this file does not cite it itself. */
static const char outside[] = "FINDINGS" ".md";

static struct {
    bool defined[MAX_FACTS];
    bool measurable[MAX_FACTS];
    char problems[8192];
    size_t len;
    unsigned cited, files, sources;
} S;

#define SPDX "SPDX-License-Identifier: LGPL-2.1-only"
#define SPDX_LINES 3

/* n < 0: no fact number to add to what. */
static void problem(const char *path, const char *what, long n)
{
    char num[24] = "";
    int r;

    if (n >= 0)
        snprintf(num, sizeof(num), "%ld", n);
    r = snprintf(S.problems + S.len, sizeof(S.problems) - S.len,
                 "  %s: %s%s\n", path, what, num);

    if (r > 0 && S.len + (size_t)r < sizeof(S.problems))
        S.len += (size_t)r;
}

static char *slurp(const char *path, size_t max)
{
    struct stat st;
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (size_t)st.st_size <= max) {
        buf = malloc((size_t)st.st_size + 1);
        assert_non_null(buf);
        if (read(fd, buf, (size_t)st.st_size) != st.st_size) {
            free(buf);
            buf = NULL;
        } else {
            buf[st.st_size] = '\0';
        }
    }
    close(fd);
    return buf;
}

/* The facts: "## F<n>." headings, and whether the section says how to
 * measure it again. */
static void read_facts(void)
{
    char *text = slurp(FACTS, MAX_FILE), *p;
    unsigned cur = 0;

    assert_non_null(text);
    for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        unsigned n;
        char dot;

        if (sscanf(p, "## F%u%c", &n, &dot) == 2 && dot == '.') {
            if (n == 0 || n >= MAX_FACTS || S.defined[n])
                problem(FACTS, "bad or repeated fact F", (long)n);
            else
                S.defined[n] = true;
            cur = n < MAX_FACTS ? n : 0;
        } else if (!strncmp(p, "## ", 3)) {
            cur = 0;
        } else if (cur && !strncmp(p, "Measure again:", 14)) {
            S.measurable[cur] = true;
        }
    }
    free(text);
}

/* Every "docs/facts.md F<n>" in text, the F perhaps on the next line of
 * a comment. */
static void check_citations(const char *path, const char *text)
{
    static const char cite[] = FACTS;
    const char *p = text;

    while ((p = strstr(p, cite))) {
        const char *q = p + strlen(cite);
        unsigned n = 0;

        while (*q == ' ' || *q == '\n' || *q == '*' || *q == '#')
            q++;
        p = q;
        if (*q != 'F' || !isdigit((unsigned char)q[1]))
            continue; /* the document as a whole */
        for (q++; isdigit((unsigned char)*q); q++)
            n = n * 10 + (unsigned)(*q - '0');
        S.cited++;
        if (n >= MAX_FACTS || !S.defined[n])
            problem(path, "cites a fact docs/facts.md does not have: F",
                    (long)n);
    }
}

/* A source by its name, or a script by its first bytes. */
static bool is_source(const char *base, const char *text)
{
    static const char *const exts[] = {
        ".c", ".h", ".mk", ".sh", ".pl", ".py"
    };
    size_t n = strlen(base);

    if (!strcmp(base, "Makefile") || !strncmp(text, "#!", 2))
        return true;
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        size_t e = strlen(exts[i]);

        if (n > e && !strcmp(base + n - e, exts[i]))
            return true;
    }
    return false;
}

/* The SPDX line within the first SPDX_LINES lines. */
static void check_licence(const char *path, const char *text)
{
    const char *end = text;

    for (unsigned i = 0; i < SPDX_LINES && end; i++) {
        end = strchr(end, '\n');
        end = end ? end + 1 : NULL;
    }
    S.sources++;
    if (!memmem(text, end ? (size_t)(end - text) : strlen(text), SPDX,
                strlen(SPDX)))
        problem(path, "has no \"" SPDX "\" line at its top", -1);
}

static int visit(const char *path, const struct stat *st, int type,
                 struct FTW *ftw)
{
    const char *base = path + ftw->base;
    char *text;

    (void)st;
    /* Fuzzing corpora are data, whatever their first bytes. */
    if (type == FTW_D && (!strcmp(base, ".git") || !strcmp(base, "build") ||
                          !strcmp(base, "images") || !strcmp(base, "corpus")))
        return FTW_SKIP_SUBTREE;
    if (type != FTW_F)
        return FTW_CONTINUE;
    text = slurp(path, MAX_FILE);
    if (!text)
        return FTW_CONTINUE;
    S.files++;
    if (strstr(text, outside))
        problem(path, "cites a file outside the repository", -1);
    check_citations(path, text);
    if (is_source(base, text))
        check_licence(path, text);
    free(text);
    return FTW_CONTINUE;
}

static void test_facts_in_tree(void **state)
{
    static const char *const roots[] = {
        "tools", "tests", "bench", "docs", "scripts", "debian", "config",
        "Makefile", "README.md",
    };

    (void)state;
    read_facts();
    for (unsigned n = 1; n < MAX_FACTS; n++)
        if (S.defined[n] && !S.measurable[n])
            problem(FACTS, "says no way to measure it again: F", (long)n);
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        assert_int_equal(nftw(roots[i], visit, 16,
                              FTW_PHYS | FTW_ACTIONRETVAL), 0);
    print_message("note: %u files read, %u citations of facts, %u sources\n",
                  S.files, S.cited, S.sources);
    assert_true(S.files > 100);
    assert_true(S.cited > 0);
    assert_true(S.sources > 100);
    if (S.len)
        fail_msg("problems:\n%s", S.problems);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts_in_tree),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
