/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_pools.c - the host's file table against what the DMs may take
 * of it, said by `xl-reaper check` and by the audit in the same words.
 *
 * Once the host holds fs.file-max open files the kernel refuses a new
 * one (ENFILE) to any task without CAP_SYS_ADMIN, xl-reaperd included
 * (docs/facts.md F40).  A DM holds at most nproc_limit processes, each
 * with a table of nofile_limit descriptors: nproc_limit x nofile_limit
 * files, with no file system needed (eventfds).  The shipped limits keep
 * that to at most 1/XLREAPER__FILE_SHARE_DIV of a 4 GiB dom0's
 * file-max; several DMs together can still exceed it, and on a host
 * whose fs.file-max is LONG_MAX (as systemd sets it) only memory bounds
 * them: struct file is charged to the DM's memory cgroup.
 *
 * A mapping holds its file without a descriptor (docs/facts.md F41), so
 * a process may hold vm.max_map_count files more: that route is not in
 * the rlimits' power to bound, and is said beside the number.
 *
 * How many DMs a host can run: the uid range's size, which is Xen's own
 * bound on domids (DOMID_FIRST_RESERVED - 1).  Memory stops a host far
 * sooner, but that memory is also what the DMs' files cost, so it is
 * not a bound apart from the one said here.  The audit counts the DMs
 * of the domains live when it runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "xlreaper_host.h"

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    if (a && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

void xlreaper__file_pool_calc(const xlreaper__file_pool_in *in,
                              xlreaper__file_pool *out)
{
    memset(out, 0, sizeof(*out));
    out->per_dm = mul_sat(in->nproc, in->nofile);
    out->mapped = mul_sat(in->nproc, in->map_max);
    out->all = mul_sat(out->per_dm, in->dms);
    out->over_share = out->per_dm > in->file_max / XLREAPER__FILE_SHARE_DIV;
    out->all_over = out->all > in->file_max;
    /* How many DMs at their limits hold every file of the host. */
    if (out->per_dm)
        out->dms_to_fill =
            in->file_max / out->per_dm + (in->file_max % out->per_dm != 0);
}

/* A decimal number of /proc/sys (one line), or -1. */
static int read_sysctl(const char *dir, const char *name, uint64_t *v)
{
    char path[256], buf[64];
    unsigned long u;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = xlreaper__read_all(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n <= 0 || xlreaper__parse_ulong(buf, (size_t)n, ULONG_MAX, &u))
        return -1;
    *v = u;
    return 0;
}

int xlreaper__file_pool_read(const char *procsys, const xlreaper_config *cfg,
                             uint64_t dms, xlreaper__file_pool_in *in)
{
    memset(in, 0, sizeof(*in));
    if (read_sysctl(procsys, "fs/file-max", &in->file_max) ||
        read_sysctl(procsys, "vm/max_map_count", &in->map_max))
        return -1;
    in->nproc = cfg->nproc_limit;
    /* Without a nofile_limit a table is bounded by fs.nr_open. */
    if (read_sysctl(procsys, "fs/nr_open", &in->nofile))
        return -1;
    for (unsigned i = 0; i < cfg->num_rlimits; i++)
        if (cfg->rlimits[i].resource == RLIMIT_NOFILE)
            in->nofile = cfg->rlimits[i].limit;
    in->dms = dms;
    return 0;
}

bool xlreaper__file_pool_text(const xlreaper__file_pool_in *in,
                              const xlreaper__file_pool *p,
                              const char *dms_are, char *buf, size_t size)
{
    bool warn = p->over_share || p->all_over;
    double share =
        in->file_max ? (double)p->per_dm / (double)in->file_max : 1.0;

    snprintf(buf, size,
             "%sfs.file-max %" PRIu64 "; one DM may hold nproc_limit x "
             "nofile_limit = %" PRIu64 " x %" PRIu64 " = %" PRIu64
             " files (%.3g%% of it; %s 1/%u)%s; %" PRIu64
             " DM%s at %s limits hold%s all of it, %s %" PRIu64 "%s; "
             "mappings hold nproc_limit x vm.max_map_count = %" PRIu64
             " more, bounded by memory alone",
             warn ? "warning: " : "", in->file_max, in->nproc, in->nofile,
             p->per_dm, 100.0 * share, p->over_share ? "more than" : "within",
             XLREAPER__FILE_SHARE_DIV,
             p->over_share ? ": a few DMs can take every file of the host"
                           : "",
             p->dms_to_fill, p->dms_to_fill == 1 ? "" : "s",
             p->dms_to_fill == 1 ? "its" : "their",
             p->dms_to_fill == 1 ? "s" : "", dms_are, in->dms,
             p->all_over ? " (together they can exceed it: then the host "
                           "refuses a new file to all but CAP_SYS_ADMIN)"
                         : "",
             p->mapped);
    return warn;
}
