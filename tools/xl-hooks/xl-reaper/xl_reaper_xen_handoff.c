/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_xen_handoff.c - the commands that need libxenlight (destroy,
 * audit) run in a second binary, xl-reaper-xen.
 *
 * Why: libxenlight brings 13 more shared objects (libxenctrl,
 * libxenguest, libz, ...), and mapping and relocating them cost every
 * `xl-reaper kill` about 2 ms before it did anything, more than the
 * bare kill itself (bench/RESULTS.md, bench_start).  xl-reaper is linked
 * without them (tools/xl-hooks/hooks.mk says how); the two commands'
 * code is not in it, and main hands them here before it loads anything.
 *
 * The helper is found beside this binary, ../libexec/xl-reaper/ from
 * its own directory (/proc/self/exe): an installed tree, a DESTDIR tree
 * and a build tree each run their own, never one another's, and no
 * environment variable can point a root command elsewhere.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xl_reaper.h"

#define XEN_HELPER "../libexec/xl-reaper/xl-reaper-xen"

int xlr_xen_handoff(char **argv, int fail)
{
    char self[PATH_MAX], path[PATH_MAX + sizeof(XEN_HELPER)];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *slash;

    if (n <= 0) {
        xlr_error("cannot find xl-reaper-xen: /proc/self/exe: %s",
                  n < 0 ? strerror(errno) : "empty");
        return fail;
    }
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (!slash) {
        xlr_error("cannot find xl-reaper-xen: /proc/self/exe is %s", self);
        return fail;
    }
    *slash = '\0';
    snprintf(path, sizeof(path), "%s/" XEN_HELPER, self);
    /* Nothing is buffered yet; flushed all the same, so that nothing
     * written before the exec could be lost or written twice. */
    fflush(NULL);
    execv(path, argv);
    xlr_error("cannot run %s: %s", path, strerror(errno));
    return fail;
}
