/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_prom_writer.c - the metrics writer (tools/xl-hooks/xlr_prom.c):
 * the text format, checked by promtool, escaping, a bad name refused
 * whole; and the file replaced atomically: a reader racing a writer
 * sees one whole version or the other, never a mix or a cut, and no
 * symlink on the way is followed.  Plus the metrics_file config key.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlr_prom.h"
#include "xlrt_prom.h"

static char *finish(xlr_prom *p)
{
    const char *t;
    size_t n;
    char *copy;

    assert_int_equal(xlr_prom_finish(p, &t, &n), 0);
    copy = strndup(t, n);
    assert_non_null(copy);
    return copy;
}

static void test_format(void **state)
{
    static const double le[] = { 0.001, 0.5, 10 };
    static const unsigned long long b[] = { 1, 2, 2 };
    xlr_prom p;
    char *t;

    (void)state;
    assert_int_equal(xlr_prom_init(&p), 0);
    xlr_prom_family(&p, "xlr_test_things", "gauge",
                    "Things, with a \\ and a\nnewline.");
    xlr_prom_sample(&p, "xlr_test_things",
                    XLR_PROM_LABELS("reason", "a \"quoted\" \\ and\nnewline"),
                    1);
    xlr_prom_sample(&p, "xlr_test_things", XLR_PROM_LABELS("reason", "b"),
                    0.25);
    xlr_prom_family(&p, "xlr_test_wait_seconds", "histogram", "Waits.");
    xlr_prom_histogram(&p, "xlr_test_wait_seconds",
                       XLR_PROM_LABELS("kind", "x"), le, b, 3, 3, 11.5);
    xlr_prom_family(&p, "xlr_test_big_total", "counter", "Big.");
    xlr_prom_sample(&p, "xlr_test_big_total", XLR_PROM_NO_LABELS,
                    4294967296.0 * 1000);
    t = finish(&p);
    xlrt_prom_check(t);
    assert_non_null(strstr(t, "# HELP xlr_test_things Things, with a \\\\ "
                              "and a\\nnewline.\n"));
    assert_non_null(strstr(t, "xlr_test_things{reason=\"a \\\"quoted\\\" "
                              "\\\\ and\\nnewline\"} 1\n"));
    assert_non_null(strstr(t, "xlr_test_things{reason=\"b\"} 0.25\n"));
    assert_non_null(
        strstr(t, "xlr_test_wait_seconds_bucket{kind=\"x\",le=\"0.001\"} 1\n"
                  "xlr_test_wait_seconds_bucket{kind=\"x\",le=\"0.5\"} 2\n"
                  "xlr_test_wait_seconds_bucket{kind=\"x\",le=\"10\"} 2\n"
                  "xlr_test_wait_seconds_bucket{kind=\"x\",le=\"+Inf\"} 3\n"
                  "xlr_test_wait_seconds_sum{kind=\"x\"} 11.5\n"
                  "xlr_test_wait_seconds_count{kind=\"x\"} 3\n"));
    /* Integers as integers, not 4.29e+12. */
    assert_non_null(strstr(t, "xlr_test_big_total 4294967296000\n"));
    free(t);
    xlr_prom_dispose(&p);
}

/* A name the format does not allow spoils the whole text: nothing
 * half-valid is ever written. */
static void test_bad_names(void **state)
{
    static const char *const bad[] = { "1abc", "a-b", "a b", "", NULL };
    xlr_prom p;
    const char *t;
    size_t n;

    (void)state;
    for (unsigned i = 0; bad[i]; i++) {
        assert_int_equal(xlr_prom_init(&p), 0);
        xlr_prom_family(&p, bad[i], "gauge", "x");
        assert_int_equal(xlr_prom_finish(&p, &t, &n), -1);
        xlr_prom_dispose(&p);

        assert_int_equal(xlr_prom_init(&p), 0);
        xlr_prom_family(&p, "xlr_ok", "gauge", "x");
        xlr_prom_sample(&p, "xlr_ok", XLR_PROM_LABELS(bad[i], "v"), 1);
        assert_int_equal(xlr_prom_finish(&p, &t, &n), -1);
        xlr_prom_dispose(&p);
    }
    assert_int_equal(xlr_prom_init(&p), 0);
    xlr_prom_family(&p, "xlr_ok", "summary", "x"); /* not one we write */
    assert_int_equal(xlr_prom_finish(&p, &t, &n), -1);
    xlr_prom_dispose(&p);
    assert_int_equal(xlr_prom_init(&p), 0);
    xlr_prom_family(&p, "xlr_ok", "gauge", "x");
    xlr_prom_sample(&p, "xlr_ok", XLR_PROM_LABELS("__reserved", "v"), 1);
    assert_int_equal(xlr_prom_finish(&p, &t, &n), -1);
    xlr_prom_dispose(&p);
}

/* Two versions, each far larger than a page and a pipe buffer, so that
 * a writer that wrote in place would be caught half way. */
static char *version(char tag)
{
    size_t cap = 400 * 1024, len = 0;
    char *s = malloc(cap);

    assert_non_null(s);
    len += (size_t)snprintf(s, cap, "# HELP xlr_v v\n# TYPE xlr_v gauge\n");
    for (unsigned i = 0; len + 64 < cap - 64; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                "xlr_v{n=\"%u\",tag=\"%c\"} %u\n", i, tag, i);
    snprintf(s + len, cap - len, "# end %c\n", tag);
    return s;
}

static void test_reader_never_sees_a_partial_file(void **state)
{
    char *dir = xlrt_tmpdir(), *path, *a = version('a'), *b = version('b');
    const char *what;
    unsigned reads = 0, seen_a = 0, seen_b = 0;
    struct dirent *e;
    pid_t writer;
    DIR *d;
    int st;

    (void)state;
    assert_true(asprintf(&path, "%s/x.prom", dir) > 0);
    assert_int_equal(xlr_prom_write_file(path, a, strlen(a), &what), 0);
    writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        for (unsigned i = 0; i < 600; i++) {
            const char *v = i % 2 ? a : b;
            if (xlr_prom_write_file(path, v, strlen(v), &what) < 0)
                _exit(1);
        }
        _exit(0);
    }
    while (waitpid(writer, &st, WNOHANG) == 0) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        char *got;

        /* Never absent: rename replaces, there is no gap. */
        assert_true(fd >= 0);
        got = xlrt_read_to_eof(fd);
        close(fd);
        if (!strcmp(got, a))
            seen_a++;
        else if (!strcmp(got, b))
            seen_b++;
        else
            fail_msg("read %u: neither version whole (%zu bytes)", reads,
                     strlen(got));
        free(got);
        reads++;
    }
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* Both versions were read, or the race was not run. */
    assert_true(seen_a > 0 && seen_b > 0);
    xlrt_prom_check(b);

    /* No temporary file left, and the file is readable by a collector
     * that is not root, whatever our umask. */
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") &&
            strcmp(e->d_name, ".."))
            fail_msg("left behind: %s", e->d_name);
    closedir(d);
    {
        struct stat sb;
        mode_t old = umask(077);
        assert_int_equal(xlr_prom_write_file(path, a, strlen(a), &what), 0);
        umask(old);
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0644);
    }
    free(path);
    free(a);
    free(b);
    xlrt_tmpdir_remove(dir);
}

/* A directory reached through a symlink is refused, and nothing is
 * written where it points. */
static void test_no_symlink_followed(void **state)
{
    char *dir = xlrt_tmpdir(), *real, *link, *path, *there;
    const char *what = NULL;

    (void)state;
    assert_true(asprintf(&real, "%s/real", dir) > 0);
    assert_true(asprintf(&link, "%s/link", dir) > 0);
    assert_true(asprintf(&path, "%s/link/x.prom", dir) > 0);
    assert_true(asprintf(&there, "%s/real/x.prom", dir) > 0);
    assert_int_equal(mkdir(real, 0755), 0);
    assert_int_equal(symlink(real, link), 0);
    errno = 0;
    assert_int_equal(xlr_prom_write_file(path, "x 1\n", 4, &what), -1);
    assert_int_equal(errno, ELOOP);
    assert_non_null(strstr(what, "symlink"));
    assert_int_equal(access(there, F_OK), -1);
    free(real);
    free(link);
    free(path);
    free(there);
    xlrt_tmpdir_remove(dir);
}

/* metrics_file: a *.prom path, "" for none, the Debian default. */
static void test_metrics_file_key(void **state)
{
    static const struct {
        const char *value;
        bool ok;
        const char *want; /* NULL: none */
    } cases[] = {
        { "\"/var/tmp/xl.prom\"", true, "/var/tmp/xl.prom" },
        { "\"\"", true, NULL },
        { "\"/var/tmp/xl.txt\"", false, NULL },
        { "\"/var/tmp/.prom\"", false, NULL },
        { "\"xl.prom\"", false, NULL },
        { "5", false, NULL },
    };
    char *dir = xlrt_tmpdir(), text[256], *path;
    xlreaper_ctx *ctx;

    (void)state;
    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_capture_logger()), 0);
    path = xlrt_write_file(dir, "xl-reaper.conf", "dm_uid_base = 9390000\n");
    assert_int_equal(
        xlreaper_config_load(ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
    assert_string_equal(xlreaper_config_get(ctx)->metrics_file,
                        "/var/lib/prometheus/node-exporter/xl-reaper.prom");
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const xlreaper_config *c;

        snprintf(text, sizeof(text),
                 "dm_uid_base = 9390000\n"
                 "metrics_file = %s\n",
                 cases[i].value);
        path = xlrt_write_file(dir, "xl-reaper.conf", text);
        xlrt_capture_reset();
        assert_int_equal(
            xlreaper_config_load(ctx, path, XLREAPER_CONFIG_MUST_EXIST) == 0,
            cases[i].ok);
        c = xlreaper_config_get(ctx);
        if (cases[i].ok && cases[i].want)
            assert_string_equal(c->metrics_file, cases[i].want);
        else if (cases[i].ok)
            assert_null(c->metrics_file);
        else
            assert_logged("metrics_file");
        free(path);
    }
    xlreaper_ctx_free(ctx);
    xlrt_tmpdir_remove(dir);
}

/* The documented alert rule: the same line in the feature document and
 * both man pages, and a rule promtool accepts. */
static char *alert_line(const char *doc)
{
    char line[2048], *found = NULL;
    FILE *f = fopen(doc, "r");

    if (!f)
        fail_msg("%s: %s", doc, strerror(errno));
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "    expr: xl_reaper", 19)) {
            if (found)
                fail_msg("%s: two alert rules", doc);
            found = strdup(line + 4);
        }
    fclose(f);
    if (!found)
        fail_msg("%s: no \"    expr: xl_reaper...\" alert rule", doc);
    return found;
}

static void test_alert_rule(void **state)
{
    static const char *const docs[] = { "docs/man/xl-reaper.8.md",
                                        "docs/man/xl-reaperd.8.md", NULL };
    char *rule = alert_line("docs/qemu-deprivilege.pandoc");
    char *dir = xlrt_tmpdir(), *text, *path, *cmd, *out, *err;
    char *argv[] = { "/bin/sh", "-c", NULL, NULL };
    int status;

    (void)state;
    for (unsigned i = 0; docs[i]; i++) {
        char *other = alert_line(docs[i]);
        assert_string_equal(other, rule);
        free(other);
    }
    assert_true(asprintf(&text,
                         "groups:\n"
                         "  - name: xl-reaper\n"
                         "    rules:\n"
                         "      - alert: XlReaper\n"
                         "        %s",
                         rule) > 0);
    path = xlrt_write_file(dir, "rules.yml", text);
    assert_true(asprintf(&cmd, "exec /usr/bin/promtool check rules %s", path) >
                0);
    argv[2] = cmd;
    status = xlrt_run(argv, &out, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        !strstr(out, "SUCCESS: 1 rules found"))
        fail_msg("promtool check rules: status %d:\n%s%s\non:\n%s", status,
                 out, err, text);
    free(out);
    free(err);
    free(cmd);
    free(path);
    free(text);
    free(rule);
    xlrt_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_bad_names),
        cmocka_unit_test(test_reader_never_sees_a_partial_file),
        cmocka_unit_test(test_no_symlink_followed),
        cmocka_unit_test(test_metrics_file_key),
        cmocka_unit_test(test_alert_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
