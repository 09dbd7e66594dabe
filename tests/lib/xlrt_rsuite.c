/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_rsuite.c - the reaper suites' shared setup (xlrt_rsuite.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "xlrt_rsuite.h"

char *xlrt_rsuite_config(const xlrt_rsuite *r, const char *name, unsigned base,
                         const char *extra)
{
    char *text, *path;

    assert_true(asprintf(&text,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "nproc_limit = 4096\n%s",
                         base, r->dir, extra) > 0);
    path = xlrt_write_file(r->dir, name, text);
    free(text);
    return path;
}

void xlrt_rsuite_setup(xlrt_rsuite *r, unsigned base, const char *extra)
{
    r->dir = xlrt_tmpdir();
    r->config = xlrt_rsuite_config(r, "xl-reaper.conf", base, extra);
    assert_int_equal(xlreaper_ctx_alloc(&r->ctx, xlrt_capture_logger()), 0);
    assert_int_equal(
        xlreaper_config_load(r->ctx, r->config, XLREAPER_CONFIG_MUST_EXIST),
        0);
    snprintf(r->cli, sizeof(r->cli), "%s/bin/xl-reaper", xlrt_build_dir());
}

void xlrt_rsuite_teardown(xlrt_rsuite *r)
{
    xlreaper_ctx_free(r->ctx);
    free(r->config);
    xlrt_tmpdir_remove(r->dir);
    r->ctx = NULL;
    r->config = r->dir = NULL;
}
