/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_prom.c - checking metrics text (xlrt_prom.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_prom.h"

/* promtool reads the metrics on stdin. */
static void promtool(const char *text)
{
    char *dir = xlrt_tmpdir(), *path, *cmd, *out = NULL, *err = NULL;
    char *argv[] = { "/bin/sh", "-c", NULL, NULL };
    int status;

    if (access("/usr/bin/promtool", X_OK) != 0)
        fail_msg("/usr/bin/promtool is missing: it comes with Debian's "
                 "prometheus package (scripts/install-deps installs it)");
    path = xlrt_write_file(dir, "metrics.prom", text);
    assert_true(
        asprintf(&cmd, "exec /usr/bin/promtool check metrics < %s", path) > 0);
    argv[2] = cmd;
    status = xlrt_run(argv, &out, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || *out || *err)
        fail_msg("promtool check metrics: status %d, said:\n%s%s\non:\n%s",
                 status, out, err, text);
    free(out);
    free(err);
    free(cmd);
    free(path);
    xlrt_tmpdir_remove(dir);
}

/* The family a sample belongs to: its name, less a histogram's
 * suffix when the family is a histogram. */
static bool in_family(const char *sample, size_t n, const char *family,
                      bool histogram)
{
    size_t f = strlen(family);
    static const char *const sfx[] = { "_bucket", "_sum", "_count", NULL };

    if (n == f && !strncmp(sample, family, f))
        return true;
    if (!histogram || n <= f || strncmp(sample, family, f))
        return false;
    for (unsigned i = 0; sfx[i]; i++)
        if (n - f == strlen(sfx[i]) && !strncmp(sample + f, sfx[i], n - f))
            return true;
    return false;
}

void xlrt_prom_check(const char *text)
{
    char *copy = strdup(text), *save = NULL, family[256] = "";
    char **seen = NULL;
    unsigned nseen = 0;
    bool histogram = false;

    assert_non_null(copy);
    promtool(text);
    assert_true(text[0] && text[strlen(text) - 1] == '\n');
    for (char *l = strtok_r(copy, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        char type[32], **grown;
        size_t n;

        if (sscanf(l, "# TYPE %255s %31s", family, type) == 2) {
            histogram = !strcmp(type, "histogram");
            continue;
        }
        if (l[0] == '#')
            continue;
        n = strcspn(l, "{ ");
        if (!family[0] || !in_family(l, n, family, histogram))
            fail_msg("sample outside its family (after TYPE %s): %s", family,
                     l);
        /* The series: everything before the value. */
        *strrchr(l, ' ') = '\0';
        for (unsigned i = 0; i < nseen; i++)
            if (!strcmp(seen[i], l))
                fail_msg("series %s appears twice", l);
        grown = realloc(seen, (nseen + 1) * sizeof(*seen));
        assert_non_null(grown);
        seen = grown;
        seen[nseen++] = l;
    }
    free(seen);
    free(copy);
}

static const char *find_series(const char *text, const char *series)
{
    size_t n = strlen(series);

    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
        if (!strncmp(l, series, n) && l[n] == ' ')
            return l + n + 1;
    return NULL;
}

bool xlrt_prom_has(const char *text, const char *series)
{
    return find_series(text, series) != NULL;
}

double xlrt_prom_value(const char *text, const char *series)
{
    const char *v = find_series(text, series);

    if (!v)
        fail_msg("no series %s in:\n%s", series, text);
    return strtod(v, NULL);
}
