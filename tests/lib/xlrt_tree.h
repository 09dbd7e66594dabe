/* SPDX-License-Identifier: LGPL-2.1-only */
/* xlrt_tree.h - removing a directory tree, for the test suites and the
 * benchmarks alike (xlrt_tree.c needs no cmocka, so bench links it). */
#ifndef XLRT_TREE_H
#define XLRT_TREE_H

/* Removes dir and everything below it, following no symlink.  0, or -1
 * when something could not be removed. */
int xlrt_tree_remove(const char *dir);

#endif /* XLRT_TREE_H */
