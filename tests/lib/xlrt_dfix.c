/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_dfix.c - the daemon suites' fixture (xlrt_dfix.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "xlrt_dfix.h"

char *xlrt_dfix_config_text(const xlrt_dfix *f, unsigned base,
                            const char *extra)
{
    char *text;

    assert_true(asprintf(&text,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n%s", base,
                         f->dir, extra) > 0);
    return text;
}

void xlrt_dfix_write_config(xlrt_dfix *f, unsigned base, const char *extra)
{
    char *text = xlrt_dfix_config_text(f, base, extra);

    free(f->config);
    f->config = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
}

void xlrt_dfix_setup(xlrt_dfix *f, unsigned base, const char *extra)
{
    char *text;

    f->base = base;
    /* Checked here: a racer's child could only exit. */
    (void)xlrt_progs_dir();
    f->dir = xlrt_tmpdir();
    text = xlrt_dfix_config_text(f, base, extra);
    f->ctx = xlrt_ctx(f->dir, text);
    f->config = xlrt_write_file(f->dir, "xl-reaper.conf", text);
    free(text);
    assert_true(asprintf(&f->sock, "%s/xs.sock", f->dir) > 0);
    assert_int_equal(xlrt_xs_start(&f->xs, f->sock, NULL), 0);
}

void xlrt_dfix_start(xlrt_dfix *f, const char *prog, const char *events)
{
    assert_int_equal(
        xlrt_daemon_start_events(&f->dm, prog ? prog : "bin/xl-reaperd",
                                 f->dir, f->config, f->sock, events),
        0);
}

void xlrt_dfix_up(xlrt_dfix *f, const char *prog, const char *events)
{
    xlrt_dfix_start(f, prog, events);
    assert_int_equal(xlrt_daemon_wait_log(&f->dm, "ready:", 30000), 0);
}

void xlrt_dfix_wait_swept(xlrt_dfix *f)
{
    assert_int_equal(
        xlrt_daemon_wait_log(&f->dm, "sweep (whole range", 120000), 0);
}

void xlrt_dfix_reap_left(xlrt_dfix *f, uint32_t domid)
{
    xlreaper_reap_result res;

    if (xlrt_kernel_count(f->base + domid) == 0)
        return;
    xlreaper_reap_result_init(&res);
    xlreaper_reap(f->ctx, NULL, domid, &res);
    xlreaper_reap_result_dispose(&res);
}

void xlrt_dfix_teardown(xlrt_dfix *f, uint32_t first, uint32_t last)
{
    xlrt_daemon_dispose(&f->dm);
    xlrt_xs_kill(&f->xs);
    for (uint32_t d = first; d <= last; d++)
        xlrt_dfix_reap_left(f, d);
    xlreaper_ctx_free(f->ctx);
    if (getenv("XLR_KEEP"))
        fprintf(stderr, "xlrt: kept %s\n", f->dir);
    else
        xlrt_tmpdir_remove(f->dir);
    free(f->config);
    free(f->sock);
    f->ctx = NULL;
    f->dir = f->config = f->sock = NULL;
}

/* ---------- fork racers ---------- */

static void racer_main(void *arg)
{
    uid_t uid = *(uid_t *)arg;
    char prog[512];
    char *argv[] = { prog, NULL };

    snprintf(prog, sizeof(prog), "%s/fork_racer", xlrt_progs_dir());
    xlrt_exec_as(uid, uid, argv);
}

pid_t xlrt_racer_start(uid_t uid)
{
    /* The nursery's child runs on a copy of this frame: a local will do. */
    pid_t n = xlrt_nursery_start(racer_main, &uid);

    for (unsigned i = 0; xlrt_kernel_count(uid) < 1; i++) {
        assert_true(i < 3000);
        usleep(1000);
    }
    return n;
}

void xlrt_racer_stop(xlrt_dfix *f, pid_t nursery, uint32_t domid)
{
    xlreaper_reap_result res;

    xlreaper_reap_result_init(&res);
    xlreaper_reap(f->ctx, NULL, domid, &res);
    xlreaper_reap_result_dispose(&res);
    xlrt_nursery_stop(nursery);
}

void xlrt_wait_count(uid_t uid, long want)
{
    long c;

    for (unsigned i = 0; (c = xlrt_kernel_count(uid)) != want; i++) {
        if (i >= 3000)
            fail_msg("uid %lu: the kernel counts %ld tasks, want %ld",
                     (unsigned long)uid, c, want);
        usleep(2000);
    }
}
