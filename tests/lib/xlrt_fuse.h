/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_fuse.h - uids with a task stuck in D state, for a test or a
 * benchmark: tests/progs/fuse_holder started on them, and its "ready"
 * line awaited.  No cmocka here, so that bench/ can link it too.
 */
#ifndef XLRT_FUSE_H
#define XLRT_FUSE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    pid_t pid; /* fuse_holder, our child; -1 when not running */
    int in;    /* its stdin: closing it ends it */
} xlrt_fuse_holder;

/*
 * Starts prog (fuse_holder) with one argument per uid of uids[0..n-1]
 * and reads its first line, into line (at most len - 1 bytes) when not
 * NULL.  0 once it said "ready" (each uid has its stuck task then);
 * -1 when it did not, the holder then stopped.
 */
int xlrt_fuse_holder_start(xlrt_fuse_holder *h, const char *prog,
                           const uid_t *uids, unsigned n, char *line,
                           size_t len);
/* Closes its stdin (it then ends, and the stuck tasks' requests fail)
 * and waits for it. */
void xlrt_fuse_holder_stop(xlrt_fuse_holder *h);

#endif /* XLRT_FUSE_H */
