/* SPDX-License-Identifier: LGPL-2.1-only */
/* xlrt_kcount.h - our own kernel count of a uid's tasks (xlrt_kcount.c). */
#ifndef XLRT_KCOUNT_H
#define XLRT_KCOUNT_H

#include <sys/types.h>

/* A task of uid killed the probe: uid certainly has a live task. */
#define XLRT_PROBE_KILLED (-2)

/* 1 if a probe under uid with RLIMIT_NPROC = limit could fork, 0 if not,
 * XLRT_PROBE_KILLED, or -1 on error. */
int xlrt_probe_fits(uid_t uid, unsigned long limit);

/* The kernel's count of uid's tasks, live and zombie, by an RLIMIT_NPROC
 * search; -1 on error, or XLRT_PROBE_KILLED. */
long xlrt_kernel_count(uid_t uid);

/* xlrt_kernel_count, asked again every 2 ms until it is 0 or ms have
 * passed (zombies wait for their reaper); the last answer. */
long xlrt_kernel_count_settled(uid_t uid, unsigned ms);

#endif
