/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_tree.c - removing a directory tree (xlrt_tree.h), without a
 * shell: a path with a quote in it is just a path.
 */
#include <ftw.h>
#include <stdio.h>

#include "xlrt_tree.h"

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int xlrt_tree_remove(const char *dir)
{
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}
