/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_fds.c - the descriptors around a spawn: finding the ones open
 * to Xen devices, and keeping our own off 0-2.
 *
 * Why report Xen descriptors: privcmd and evtchn handles are restricted
 * by QEMU's own xentoolcore_restrict_all only if QEMU knows of them; one
 * inherited from the toolstack is not, and would give the DM the
 * hypervisor as the toolstack has it.  libxl opens them close-on-exec,
 * but a caller that runs several ctxs in threads can fork while another
 * thread holds a descriptor that is not (yet) (Ian Jackson's worry in the
 * seed mail).  The spawn closes every descriptor the command line does
 * not name; this says which Xen ones it closed, so that the leak is
 * fixed where it is made.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_spawn_internal.h"

static const char *const xen_prefixes[] = { "/dev/xen/", "/proc/xen/", NULL };

static bool is_xen_path(const char *target)
{
    for (unsigned i = 0; xen_prefixes[i]; i++)
        if (!strncmp(target, xen_prefixes[i], strlen(xen_prefixes[i])))
            return true;
    return false;
}

static bool kept(int fd, const int *keep, unsigned num_keep)
{
    if (fd <= 2)
        return true;
    for (unsigned i = 0; i < num_keep; i++)
        if (keep[i] == fd)
            return true;
    return false;
}

unsigned xlreaper__report_xen_fds(xlreaper_ctx *ctx, uint32_t domid,
                                  const int *keep, unsigned num_keep)
{
    unsigned found = 0;
    struct dirent *de;
    DIR *d;

    d = opendir("/proc/self/fd");
    if (!d) {
        LOGED(WARN, domid, "/proc/self/fd: cannot look for Xen descriptors");
        return 0;
    }
    while ((de = readdir(d))) {
        char link[64], target[256];
        ssize_t n;
        int fd, flags;
        char *end;
        long v;

        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        v = strtol(de->d_name, &end, 10);
        if (*end || v < 0 || v > 0x7fffffff)
            continue;
        fd = (int)v;
        if (fd == dirfd(d))
            continue;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue; /* closed meanwhile by another thread */
        target[n] = '\0';
        if (!is_xen_path(target))
            continue;
        found++;
        flags = fcntl(fd, F_GETFD);
        if (kept(fd, keep, num_keep))
            LOGD(WARN, domid,
                 "descriptor %d, open to %s, is passed on to the device "
                 "model as the command line or stdio asks",
                 fd, target);
        else if (flags >= 0 && !(flags & FD_CLOEXEC))
            LOGD(WARN, domid,
                 "descriptor %d is open to %s without close-on-exec: it "
                 "would have leaked into the device model; closed before "
                 "execve",
                 fd, target);
        else
            LOGD(DEBUG, domid,
                 "descriptor %d open to %s (close-on-exec) is closed "
                 "before execve",
                 fd, target);
    }
    closedir(d);
    return found;
}
