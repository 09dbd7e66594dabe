/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_destroy.c - `xl-reaper destroy DOMID`: the CLI as built for tests
 * (build/tests/xl-reaper-fakexen: libxl's domain calls answered from
 * fake_xenstored's stand-in for the hypervisor), run as a program,
 * against real fork racers under this suite's uids (5000000 + domid,
 * domids 81..90).  The real binary, on this host without Xen, is
 * checked to fail as it should.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xenstore.h>

#include "xlr_test.h"
#include "xlrt_dfix.h"

#define BASE 5000000u

typedef struct {
    xlrt_dfix d;
    char *prog;
} fixture;

/* Runs prog --config C --json destroy ARG; its exit code. */
static int destroy(fixture *f, const char *prog, const char *arg, char **out_r,
                   char **err_r)
{
    char *argv[] = { (char *)prog, "--config",  f->d.config, "--json",
                     "destroy",    (char *)arg, NULL };
    int st = xlrt_run(argv, out_r, err_r);

    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static bool xs_exists(const char *path)
{
    struct xs_handle *h = xs_open(0);
    unsigned len;
    void *v;

    assert_non_null(h);
    v = xs_read(h, XBT_NULL, path, &len);
    free(v);
    xs_close(h);
    return v != NULL;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    xlrt_dfix_setup(&f->d, BASE, "");
    assert_true(asprintf(&f->prog, "%s/tests/xl-reaper-fakexen",
                         xlrt_build_dir()) > 0);
    /* For the CLI we run, and for our own reads. */
    setenv("XENSTORED_PATH", f->d.sock, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    unsetenv("XENSTORED_PATH");
    xlrt_dfix_teardown(&f->d, 81, 90);
    free(f->prog);
    free(f);
    return 0;
}

/* The domain is destroyed (libxl's order: xenstore, then the domain) and
 * the racer under its uid dies: exit 0, verified. */
static void test_destroy_kills_racer(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 81;
    char *out, *err, buf[16];
    pid_t racer;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 81 %u", uid), 0);
    racer = xlrt_racer_start(uid);
    assert_int_equal(destroy(f, f->prog, "81", &out, &err), 0);
    assert_int_equal(xlrt_json_int(out, "domid"), 81);
    xlrt_json_str(out, "outcome", buf, sizeof(buf));
    assert_true(!strcmp(buf, "empty") || !strcmp(buf, "zombies"));
    assert_int_equal(xlrt_json_array_len(out, "live"), 0);
    free(out);
    free(err);
    assert_false(xs_exists("/local/domain/81"));
    assert_false(xs_exists("/fakexen/domain/81"));
    xlrt_wait_count(uid, 0);
    xlrt_racer_stop(&f->d, racer, 81);
}

/* What libxl wrote of the DM's uid is read before the destroy removes
 * it: a uid outside the range is reported (exit 1) though the domain is
 * gone and the range's uid reaped. */
static void test_destroy_reads_kill_uid_first(void **state)
{
    fixture *f = *state;
    char *out, *err;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 82 12345"), 0);
    assert_int_equal(destroy(f, f->prog, "82", &out, &err), 1);
    assert_non_null(strstr(err, "as uid 12345, outside the configured"));
    assert_int_equal(xlrt_json_int(out, "uid"), BASE + 82);
    assert_false(xs_exists("/fakexen/domain/82"));
    free(out);
    free(err);
}

/* No such domain: exit 1, nothing killed. */
static void test_destroy_no_domain(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 83;
    char *err;
    pid_t racer;

    /* A racer under the uid of a domid that does not exist: destroy is
     * not kill, and leaves it alone. */
    racer = xlrt_racer_start(uid);
    assert_int_equal(destroy(f, f->prog, "83", NULL, &err), 1);
    assert_non_null(strstr(err, "no such domain"));
    free(err);
    assert_true(xlrt_kernel_count(uid) >= 1);
    xlrt_racer_stop(&f->d, racer, 83);
    xlrt_wait_count(uid, 0);
}

/* libxl fails and the domain stays: exit 4, and its uid is not reaped,
 * since its DM may still serve it. */
static void test_destroy_fails(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 84;
    char *err;
    pid_t racer;

    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 84"), 0);
    assert_int_equal(
        xlrt_xs_cmd(&f->d.xs, NULL, 0, "write /fakexen/destroy-fails/84 1"),
        0);
    racer = xlrt_racer_start(uid);
    assert_int_equal(destroy(f, f->prog, "84", NULL, &err), 4);
    assert_non_null(strstr(err, "the domain still exists"));
    free(err);
    assert_true(xlrt_kernel_count(uid) >= 1);
    xlrt_racer_stop(&f->d, racer, 84);
}

static void test_destroy_usage(void **state)
{
    fixture *f = *state;

    assert_int_equal(destroy(f, f->prog, "0", NULL, NULL), 1);
    assert_int_equal(destroy(f, f->prog, "32752", NULL, NULL), 1);
    assert_int_equal(destroy(f, f->prog, "x", NULL, NULL), 1);
}

/* The real binary on a host without Xen: libxl cannot start, exit 4. */
static void test_destroy_real_no_xen(void **state)
{
    fixture *f = *state;
    char prog[512], *err;

    if (access("/dev/xen/privcmd", F_OK) == 0 ||
        access("/proc/xen/privcmd", F_OK) == 0)
        skip();
    snprintf(prog, sizeof(prog), "%s/bin/xl-reaper", xlrt_build_dir());
    assert_int_equal(xlrt_xs_cmd(&f->d.xs, NULL, 0, "add 85"), 0);
    assert_int_equal(destroy(f, prog, "85", NULL, &err), 4);
    assert_non_null(strstr(err, "cannot talk to Xen"));
    free(err);
    assert_true(xs_exists("/local/domain/85"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_destroy_kills_racer),
        cmocka_unit_test(test_destroy_reads_kill_uid_first),
        cmocka_unit_test(test_destroy_no_domain),
        cmocka_unit_test(test_destroy_fails),
        cmocka_unit_test(test_destroy_usage),
        cmocka_unit_test(test_destroy_real_no_xen),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
