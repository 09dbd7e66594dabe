/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_audit_prom.c - `xl-reaper audit --prometheus` and
 * --prometheus-file, run as an admin's timer would run them: the real
 * CLI, a test xenstored (tests/progs/fake_xenstored) for the live
 * domains, real tasks under a dead domain's uid.  Every output must
 * pass promtool and say what the audit found, also when it could not
 * check, and when it could not run at all.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_daemon.h"
#include "xlrt_prom.h"

/* This suite's uids: 9300000-9399999; the range takes 32752 of them. */
#define BASE 9300000u
#define LIVE 3u
#define DEAD 7u

typedef struct {
    char *dir, *conf, *sock;
    xlrt_xs xs;
    bool xs_up;
    pid_t task; /* ours, under a dead domain's uid */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    char *text;

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_true(asprintf(&text,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "reap_timeout_ms = 5000\n",
                         BASE, f->dir) > 0);
    f->conf = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
    assert_true(asprintf(&f->sock, "%s/xs.sock", f->dir) > 0);
    /* No xenstored until a test starts one (libxenstore tries
     * XENSTORED_PATH first). */
    setenv("XENSTORED_PATH", f->sock, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;

    xlrt_bystander_stop(f->task);
    if (f->xs_up)
        xlrt_xs_kill(&f->xs);
    unsetenv("XENSTORED_PATH");
    free(f->conf);
    free(f->sock);
    xlrt_tmpdir_remove(f->dir);
    free(f);
    return 0;
}

static void xenstored(fx *f)
{
    char live[16];

    snprintf(live, sizeof(live), "%u", LIVE);
    assert_int_equal(
        xlrt_xs_start(&f->xs, f->sock, (const char *[]){ live, NULL }), 0);
    f->xs_up = true;
}

/* xl-reaper -c CONF audit ARGS...: its exit status, stdout and stderr. */
static int audit(fx *f, const char *conf, const char *const *args,
                 char **out_r, char **err_r)
{
    char bin[512];
    char *argv[14];
    int n = 0, status;

    snprintf(bin, sizeof(bin), "%s/bin/xl-reaper", xlrt_build_dir());
    argv[n++] = bin;
    argv[n++] = "-c";
    argv[n++] = (char *)(conf ? conf : f->conf);
    argv[n++] = "audit";
    /* The set-id walk of the host takes seconds a run: test_audit_setid's. */
    argv[n++] = "--setid-timeout";
    argv[n++] = "0";
    for (; *args && n < 13; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    status = xlrt_run(argv, out_r, err_r);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void assert_verdict(const char *m, const char *v)
{
    static const char *const all[] = { "pass", "fail", "unknown" };
    char s[64];

    for (unsigned i = 0; i < 3; i++) {
        snprintf(s, sizeof(s), "xl_reaper_audit_verdict{verdict=\"%s\"}",
                 all[i]);
        assert_int_equal(xlrt_prom_value(m, s), !strcmp(all[i], v));
    }
}

/* No xenstored, no hypervisor: the live domains cannot be listed.
 * That is said in the metrics (a check unknown, the verdict unknown),
 * not left out. */
static void test_could_not_check(void **state)
{
    fx *f = *state;
    char *out, *err;

    assert_int_equal(
        audit(f, NULL, (const char *[]){ "--prometheus", NULL }, &out, &err),
        2);
    xlrt_prom_check(out);
    assert_int_equal(xlrt_prom_value(out, "xl_reaper_audit_up"), 1);
    assert_verdict(out, "unknown");
    assert_int_equal(
        xlrt_prom_value(out, "xl_reaper_audit_checks{check=\"live_domains\","
                             "status=\"unknown\"}"),
        1);
    assert_int_equal(
        xlrt_prom_value(out, "xl_reaper_audit_checks{check=\"live_domains\","
                             "status=\"pass\"}"),
        0);
    /* Unknown live domains: no count of them is made up. */
    assert_false(xlrt_prom_has(out, "xl_reaper_audit_live_domains"));
    assert_true(xlrt_prom_value(out, "xl_reaper_audit_duration_seconds") > 0);
    /* What it could not check, counted, and its deadline. */
    assert_true(xlrt_prom_value(out, "xl_reaper_audit_could_not_check") >= 2);
    assert_int_equal(xlrt_prom_value(out, "xl_reaper_audit_deadline_passed"),
                     0);
    assert_true(xlrt_prom_value(out, "xl_reaper_audit_deadline_seconds") >= 5);
    free(out);
    free(err);
}

/* A task under a dead domain's uid: a failed cleanup, with its domid,
 * uid and task count; gone, the audit passes and the series says 0. */
static void test_leftover_then_pass(void **state)
{
    fx *f = *state;
    char *out, *err, series[128];

    xenstored(f);
    f->task = xlrt_bystander_start(BASE + DEAD);
    assert_int_equal(
        audit(f, NULL, (const char *[]){ "--prometheus", NULL }, &out, &err),
        1);
    xlrt_prom_check(out);
    assert_verdict(out, "fail");
    snprintf(series, sizeof(series),
             "xl_reaper_audit_leftover_tasks{domid=\"%u\",uid=\"%u\"}", DEAD,
             BASE + DEAD);
    assert_int_equal(xlrt_prom_value(out, series), 1);
    assert_int_equal(xlrt_prom_value(out, "xl_reaper_audit_leftover_uids"), 1);
    assert_int_equal(
        xlrt_prom_value(out, "xl_reaper_audit_checks{check=\"leftover\","
                             "status=\"fail\"}"),
        1);
    assert_int_equal(xlrt_prom_value(out, "xl_reaper_audit_live_domains"), 1);
    free(out);
    free(err);

    xlrt_bystander_stop(f->task);
    f->task = 0;
    assert_int_equal(
        audit(f, NULL, (const char *[]){ "--prometheus", NULL }, &out, &err),
        0);
    xlrt_prom_check(out);
    assert_verdict(out, "pass");
    assert_false(xlrt_prom_has(out, series));
    assert_int_equal(xlrt_prom_value(out, "xl_reaper_audit_leftover_uids"), 0);
    assert_int_equal(
        xlrt_prom_value(out, "xl_reaper_audit_checks{check=\"dead_uids\","
                             "status=\"pass\"}"),
        1);
    free(out);
    free(err);
}

/* A config that does not load: the audit cannot run, and the metrics
 * say so, with the reason. */
static void test_cannot_run(void **state)
{
    fx *f = *state;
    char *bad = xlrt_write_file(f->dir, "bad.conf", "no_such_key = 1\n");
    char *out, *err;

    assert_int_equal(
        audit(f, bad, (const char *[]){ "--prometheus", NULL }, &out, &err),
        2);
    xlrt_prom_check(out);
    assert_int_equal(xlrt_prom_value(out, "xl_reaper_audit_up"), 0);
    assert_int_equal(
        xlrt_prom_value(out, "xl_reaper_audit_error{reason=\"the config "
                             "did not load\"}"),
        1);
    assert_verdict(out, "unknown");
    assert_non_null(strstr(err, "unknown key no_such_key"));
    free(out);
    free(err);
    free(bad);
}

/* --prometheus-file: the file replaced whole, 0644, no temporary file
 * left beside it; a name the collector would not read is refused. */
static void test_file(void **state)
{
    fx *f = *state;
    char *path, *out, *err, *text;
    struct stat st;
    struct dirent *e;
    DIR *d;
    FILE *fp;
    long n;

    xenstored(f);
    assert_true(asprintf(&path, "%s/xl-reaper-audit.prom", f->dir) > 0);
    assert_int_equal(audit(f, NULL,
                           (const char *[]){ "--prometheus-file", path, NULL },
                           &out, &err),
                     0);
    assert_string_equal(out, "");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    fp = fopen(path, "r");
    assert_non_null(fp);
    text = calloc(1, (size_t)st.st_size + 1);
    assert_non_null(text);
    n = (long)fread(text, 1, (size_t)st.st_size, fp);
    fclose(fp);
    assert_int_equal(n, st.st_size);
    xlrt_prom_check(text);
    assert_verdict(text, "pass");
    free(text);
    free(out);
    free(err);

    d = opendir(f->dir);
    assert_non_null(d);
    while ((e = readdir(d)))
        if (strstr(e->d_name, "xl-reaper-audit.prom."))
            fail_msg("temporary file left: %s", e->d_name);
    closedir(d);

    assert_int_equal(
        audit(f, NULL,
              (const char *[]){ "--prometheus-file", "/tmp/x.txt", NULL },
              NULL, &err),
        2);
    assert_non_null(strstr(err, "must end in .prom"));
    free(err);
    assert_int_equal(audit(f, NULL,
                           (const char *[]){ "--prometheus", "--tap", NULL },
                           NULL, &err),
                     2);
    assert_non_null(strstr(err, "exclude each other"));
    free(err);
    free(path);
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_could_not_check),
        T(test_leftover_then_pass),
        T(test_cannot_run),
        T(test_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
