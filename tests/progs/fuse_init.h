/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuse_init.h - the FUSE_INIT answer of the test file systems
 * (fuse_holder, fuse_stuck): the kernel's major version, the lesser of
 * the two minor versions, the kernel's readahead, 4 KiB writes.
 */
#ifndef FUSE_INIT_H
#define FUSE_INIT_H

#include <linux/fuse.h>
#include <string.h>

typedef struct {
    struct fuse_out_header h;
    struct fuse_init_out o;
} fuse_init_reply;

/* The answer to in, a FUSE_INIT request (its fuse_init_in follows it). */
static inline void fuse_init_answer(const struct fuse_in_header *in,
                                    fuse_init_reply *rep)
{
    const struct fuse_init_in *ii = (const void *)(in + 1);

    memset(rep, 0, sizeof(*rep));
    rep->h.len = sizeof(*rep);
    rep->h.unique = in->unique;
    rep->o.major = FUSE_KERNEL_VERSION;
    rep->o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION
                       ? ii->minor
                       : FUSE_KERNEL_MINOR_VERSION;
    rep->o.max_readahead = ii->max_readahead;
    rep->o.max_write = 4096;
}

#endif /* FUSE_INIT_H */
