/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon_libxl.c - xl-reaperd as it runs on a hypervisor: the live
 * domains are the hypervisor's (libxl_list_domain), not xenstore's.  The
 * daemon under test is built for tests (build/tests/xl-reaperd-fakexen:
 * its libxl calls answered from fake_xenstored's stand-in for the
 * hypervisor); domids 71..80 of this suite's uid block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_daemon.h"

#define BASE 5000000u
#define WAIT_MS 30000u

typedef struct {
    char *dir, *config, *sock;
    xlrt_xs xs;
    xlrt_daemon dm;
    xlreaper_ctx *ctx;
} fixture;

static void racer_main(void *arg)
{
    uid_t uid = *(uid_t *)arg;
    char prog[512];

    snprintf(prog, sizeof(prog), "%s/fork_racer", xlrt_progs_dir());
    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, uid, uid, uid) ||
        syscall(SYS_setresuid, uid, uid, uid))
        _exit(1);
    execl(prog, "fork_racer", (char *)NULL);
    _exit(127);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    char *text;

    assert_non_null(f);
    /* Checked here: the racer's child could only exit 127. */
    (void)xlrt_progs_dir();
    f->dir = xlrt_tmpdir();
    assert_true(asprintf(&text,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "sweep_interval_s = 1\nmetrics_file = \"\"\n",
                         BASE, f->dir) > 0);
    f->ctx = xlrt_ctx(f->dir, text);
    f->config = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
    assert_true(asprintf(&f->sock, "%s/xs.sock", f->dir) > 0);
    assert_int_equal(xlrt_xs_start(&f->xs, f->sock, NULL), 0);
    assert_int_equal(xlrt_daemon_start_prog(&f->dm, "tests/xl-reaperd-fakexen",
                                            f->dir, f->config, f->sock),
                     0);
    assert_int_equal(xlrt_daemon_wait_log(&f->dm, "by libxl", WAIT_MS), 0);
    assert_int_equal(xlrt_daemon_wait_log(&f->dm, "ready:", WAIT_MS), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->dm, "sweep (whole range", 120000), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    int st;

    if (!f)
        return 0; /* the setup failed */
    st = xlrt_daemon_stop(&f->dm);

    xlrt_daemon_dispose(&f->dm);
    xlrt_xs_kill(&f->xs);
    for (uint32_t d = 71; d <= 80; d++) {
        xlreaper_reap_result res;
        if (xlrt_kernel_count(BASE + d) == 0)
            continue;
        xlreaper_reap_result_init(&res);
        xlreaper_reap(f->ctx, NULL, d, &res);
        xlreaper_reap_result_dispose(&res);
    }
    xlreaper_ctx_free(f->ctx);
    xlrt_tmpdir_remove(f->dir);
    free(f->config);
    free(f->sock);
    free(f);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}

/* xenstore loses a domain's directory (as during a destroy, or after a
 * xenstored restart) while the hypervisor still has the domain: its DM is
 * not touched.  When the hypervisor lets it go, the uid is reaped. */
static void test_hypervisor_decides(void **state)
{
    fixture *f = *state;
    uid_t uid = BASE + 71;
    pid_t racer;
    char *ev;

    xlrt_daemon_log_mark(&f->dm);
    assert_int_equal(xlrt_xs_cmd(&f->xs, NULL, 0, "add 71 %u", uid), 0);
    assert_int_equal(
        xlrt_daemon_wait_log(&f->dm, "domid 71: its DM runs as uid 5000071",
                             WAIT_MS),
        0);
    racer = xlrt_nursery_start(racer_main, &uid);
    for (unsigned i = 0; xlrt_kernel_count(uid) < 1; i++) {
        assert_true(i < 3000);
        usleep(1000);
    }
    assert_int_equal(xlrt_xs_cmd(&f->xs, NULL, 0, "rm /local/domain/71"), 0);
    assert_int_equal(xlrt_xs_cmd(&f->xs, NULL, 0, "release"), 0);
    /* Nor does a sweep after it (one a second here): the second one to
     * end has begun after the release. */
    xlrt_daemon_log_mark(&f->dm);
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            xlrt_daemon_wait_log(&f->dm, "sweep done in", WAIT_MS), 0);
    assert_int_equal(xlrt_daemon_count_events(&f->dm, 71), 0);
    assert_true(xlrt_kernel_count(uid) >= 1);

    assert_int_equal(xlrt_xs_cmd(&f->xs, NULL, 0, "hv-del 71"), 0);
    assert_int_equal(xlrt_daemon_wait_event(&f->dm, 71, WAIT_MS, &ev), 0);
    assert_int_equal(xlrt_json_int(ev, "uid"), uid);
    assert_int_equal(xlrt_json_array_len(ev, "live"), 0);
    /* It was read while the domain lived. */
    assert_int_equal(xlrt_json_int(ev, "xs_kill_uid"), uid);
    free(ev);
    for (unsigned i = 0; xlrt_kernel_count(uid) != 0; i++) {
        assert_true(i < 3000);
        usleep(2000);
    }
    xlrt_nursery_stop(racer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hypervisor_decides),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
