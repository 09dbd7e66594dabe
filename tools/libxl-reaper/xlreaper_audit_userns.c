/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_userns.c - does a DM live in a user namespace of its
 * own?  In one it is root: it can mount FUSE and make one of its own
 * tasks unkillable (the stuck-FUSE attack, xlreaper_setid.c), and its
 * tasks there may escape the kernel's per-user count.  The spawn's
 * filter refuses a DM every way in; a DM found in one was started
 * elsewhere, or made it before the filter existed.
 *
 * The kernel names a namespace by the inode of /proc/PID/ns/user: the
 * DM's is compared with the audit's own, root's in the host's.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "xlreaper_audit_internal.h"

int xlreaper__audit_userns(pid_t pid, unsigned long *ino_r,
                           unsigned long *host_r)
{
    char path[64];
    struct stat dm, host;

    snprintf(path, sizeof(path), "/proc/%ld/ns/user", (long)pid);
    if (stat(path, &dm) < 0 || stat("/proc/self/ns/user", &host) < 0)
        return -1;
    *ino_r = (unsigned long)dm.st_ino;
    *host_r = (unsigned long)host.st_ino;
    return dm.st_ino != host.st_ino || dm.st_dev != host.st_dev;
}
