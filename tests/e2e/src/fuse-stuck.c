/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuse-stuck: the unit tests' tests/progs/fuse_stuck.c, built static for
 * dom0 (a DM task stuck in D state on its own FUSE request; see there).
 * Included rather than copied, so that the e2e attack is the one the
 * unit tests make.
 */
#ifndef _GNU_SOURCE /* make analyze passes -D_GNU_SOURCE */
#define _GNU_SOURCE /* the tests build with it: unshare, setresuid */
#endif
#include "../../progs/fuse_stuck.c"
