/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_rsuite.h - the setup the reaper suites share: a directory of
 * their own with the lock in it, a config for the suite's uid block
 * written there, a ctx on it that logs into the capture logger (for
 * assert_logged), and the path of the CLI under test.
 *
 *     static struct { xlrt_rsuite r; ... } S;
 *     xlrt_rsuite_setup(&S.r, BASE, "reap_timeout_ms = 500\n");
 *     ... S.r.ctx, S.r.config, S.r.cli ...
 *     xlrt_rsuite_teardown(&S.r);
 */
#ifndef XLRT_RSUITE_H
#define XLRT_RSUITE_H

#include "xlr_test.h"

typedef struct {
    char *dir;    /* a fresh directory: the lock, the configs */
    char *config; /* dir/xl-reaper.conf */
    xlreaper_ctx *ctx;
    char cli[512]; /* <build>/bin/xl-reaper */
} xlrt_rsuite;

/* Writes dir/name: dm_uid_base = base, lock_file in dir, nproc_limit =
 * 4096 (room for the adversaries' forks), then extra (more lines, or
 * "").  Returns the malloc'd path. */
char *xlrt_rsuite_config(const xlrt_rsuite *r, const char *name, unsigned base,
                         const char *extra);
/* A fresh dir, xl-reaper.conf in it (as above) and r->ctx on it. */
void xlrt_rsuite_setup(xlrt_rsuite *r, unsigned base, const char *extra);
void xlrt_rsuite_teardown(xlrt_rsuite *r);

#endif /* XLRT_RSUITE_H */
