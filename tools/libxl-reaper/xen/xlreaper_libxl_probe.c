/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_libxl_probe.c - libxl 4.20's QEMU option probe: recognising
 * its command line, and running it unchanged.
 *
 * libxl__spawn_local_dm (tools/libs/light/libxl_dm.c, the same from
 * RELEASE-4.20.0 to 4.21) runs, for every qemu-xen guest and whether or
 * not dm_restrict is set,
 *
 *     <dm> -S -no-user-config -nodefaults -nographic
 *          -machine none,accel=xen
 *          -chardev socket,id=libxl-cmd,fd=N,server=on,wait=off
 *          -mon chardev=libxl-cmd,mode=control
 *
 * as root (only setsid() before its exec), records the pid at
 * image/device-model-pid, logs to qemu-probe-<name>.log, asks QMP
 * query-command-line-options, sends quit and SIGHUPs the pid.  If that
 * fails libxl ignores it and builds the DM line with -chroot and -runas,
 * which QEMU 10.0 takes neither of: a wrapper that refuses the probe
 * fails every xl create there.
 *
 * The line is matched as a whole: any argument more, less or spelled
 * otherwise is not the probe (and, having no -xen-domid, is refused by
 * the wrapper).  A probe QEMU has no -xen-domid and no guest, so no DM
 * uid applies; it keeps root, as under libxl without a wrapper.  What
 * the wrapper still does is what it does for every DM: exec the
 * configured QEMU, and close every descriptor but 0-2 and the one the
 * line names, so nothing else of libxl's leaks to a root QEMU.
 *
 * And one thing for the DM that follows: the probe runs in a mount
 * namespace of its own with an empty tmpfs over its socket's directory.
 * libxl binds the probe's QMP socket and then the DM's at the same path,
 * <run dir>/qmp-libxl-<domid> (libxl__pre_open_qmp_socket unlinks
 * whatever is there and binds anew), and does not wait for the probe to
 * exit: it sends "quit", SIGHUPs it and goes on to the DM.  QEMU, when
 * it closes a listening UNIX socket at exit, unlinks the path the socket
 * was bound to (socket_listen_cleanup: getsockname, unlink), and that
 * path names the DM's socket by then whenever the probe is the slower
 * one.  libxl reaches the DM by that path only (qmp_ev_lock_aquired), so
 * its next QMP command fails ("Failed to connect to QMP socket", ENOENT)
 * and so does xl create, the DM having started fine.  Measured on Debian
 * 13 (libxl 4.20.4, QEMU 10.0.13) under TCG, where the probe is slow to
 * exit.  Inside its own namespace the probe's unlink meets an empty
 * directory (ENOENT, which QEMU ignores); the socket it was given is an
 * open descriptor and works as before.  Where that namespace cannot be
 * made (no CAP_SYS_ADMIN), the probe runs as upstream runs it, and says
 * so: that is upstream's race, not less safety.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "xlreaper_xen.h"

#define CHARDEV_PREFIX "socket,id=libxl-cmd,fd="
#define CHARDEV_SUFFIX ",server=on,wait=off"

/* libxl's probe line after argv[0]; NULL where the -chardev value is. */
static const char *const probe_args[] = {
    "-S",          "-no-user-config",
    "-nodefaults", "-nographic",
    "-machine",    "none,accel=xen",
    "-chardev",    NULL,
    "-mon",        "chardev=libxl-cmd,mode=control",
};
#define NUM_PROBE_ARGS (sizeof(probe_args) / sizeof(probe_args[0]))

/* "N" as libxl's %d prints a descriptor above 2: digits, no sign, no
 * leading 0 (QEMU reads fd= base 10, but one spelling only). */
static int parse_chardev(const char *v, int *fd_r)
{
    size_t pl = strlen(CHARDEV_PREFIX), sl = strlen(CHARDEV_SUFFIX);
    size_t len = strlen(v), n;
    long fd = 0;

    if (len <= pl + sl || strncmp(v, CHARDEV_PREFIX, pl) ||
        strcmp(v + len - sl, CHARDEV_SUFFIX))
        return -1;
    n = len - pl - sl;
    v += pl;
    if (n > 10 || v[0] == '0')
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        fd = fd * 10 + (v[i] - '0');
    }
    if (fd <= 2 || fd > INT_MAX)
        return -1;
    *fd_r = (int)fd;
    return 0;
}

int xlreaper_libxl_probe_line(char *const argv[], int *fd_r)
{
    int fd = -1;

    if (!argv || !argv[0])
        return 0;
    for (size_t i = 0; i < NUM_PROBE_ARGS; i++) {
        const char *a = argv[i + 1];

        if (!a)
            return 0;
        if (probe_args[i] ? strcmp(a, probe_args[i])
                          : parse_chardev(a, &fd) < 0)
            return 0;
    }
    if (argv[NUM_PROBE_ARGS + 1])
        return 0;
    *fd_r = fd;
    return 1;
}

/* Every descriptor but 0-2 and keep (none when keep < 3): close_range,
 * or one by one on a kernel before 5.9 (up to the hard NOFILE limit,
 * bounded). */
int xlreaper__close_all_but(int keep)
{
    struct rlimit rl;
    long max;

    if (keep < 3 && syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
        return 0;
    /* close_range refuses lo > hi: nothing below keep when it is 3. */
    if (keep >= 3 &&
        (keep == 3 ||
         syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) == 0) &&
        syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
        return 0;
    if (errno != ENOSYS)
        return -1;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    max = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20)
              ? 1l << 20
              : (long)rl.rlim_max;
    for (long fd = 3; fd < max; fd++)
        if (fd != keep)
            close((int)fd);
    return 0;
}

/*
 * The directory of the path fd is bound to, into dir_r (which has room
 * for a sun_path): 1 if there is one to hide, 0 if there is nothing the
 * probe could unlink (not a UNIX socket, unnamed, abstract), -1 on error
 * (logged).  A path that is not absolute, or whose directory is "/", is
 * an error: nothing libxl makes, and no directory to cover.
 */
static int socket_dir(xlreaper_ctx *ctx, int fd, char *dir_r, size_t size)
{
    struct sockaddr_un un;
    socklen_t len = sizeof(un);
    size_t n;
    char *slash;

    memset(&un, 0, sizeof(un));
    if (getsockname(fd, (struct sockaddr *)&un, &len) < 0) {
        LOGE(ERROR, "probe: getsockname of the QMP descriptor %d", fd);
        return -1;
    }
    if (un.sun_family != AF_UNIX ||
        len <= offsetof(struct sockaddr_un, sun_path) ||
        un.sun_path[0] == '\0')
        return 0;
    n = len - offsetof(struct sockaddr_un, sun_path);
    if (n > sizeof(un.sun_path))
        n = sizeof(un.sun_path);
    if (n >= size)
        n = size - 1;
    memcpy(dir_r, un.sun_path, n);
    dir_r[n] = '\0';
    slash = strrchr(dir_r, '/');
    if (dir_r[0] != '/' || !slash || slash == dir_r) {
        LOG(ERROR, "probe: QMP socket %s: not in a directory of its own",
            dir_r);
        return -1;
    }
    *slash = '\0';
    return 1;
}

/*
 * A mount namespace for this process in which the directory of fd's
 * path is an empty tmpfs (see the top of this file).  0 when done or
 * when there is no path to protect, -1 (logged) when not: the caller
 * goes on without.  Nothing propagates to the host's mounts: "/" is made
 * private first, recursively.
 */
static int hide_socket_dir(xlreaper_ctx *ctx, int fd)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
    int r = socket_dir(ctx, fd, dir, sizeof(dir));

    if (r <= 0)
        return r;
    if (unshare(CLONE_NEWNS) < 0) {
        LOGE(WARN, "probe: unshare(CLONE_NEWNS)");
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        LOGE(WARN, "probe: making / private in its mount namespace");
        return -1;
    }
    if (mount("xl-reaper-probe", dir, "tmpfs",
              MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700,size=4096") < 0) {
        LOGE(WARN, "probe: a tmpfs over %s", dir);
        return -1;
    }
    return 0;
}

int xlreaper_libxl_probe_exec(xlreaper_ctx *ctx, const char *path,
                              char *const argv[])
{
    char *qargv[NUM_PROBE_ARGS + 2];
    int fd;

    if (!path || !xlreaper_libxl_probe_line(argv, &fd)) {
        LOG(ERROR, "not libxl's QEMU option probe line");
        return XLREAPER_ERROR_INVAL;
    }
    if (fcntl(fd, F_GETFD) < 0) {
        LOGE(ERROR, "probe: the QMP descriptor %d libxl names", fd);
        return XLREAPER_ERROR_INVAL;
    }
    qargv[0] = (char *)path;
    for (size_t i = 1; i <= NUM_PROBE_ARGS; i++)
        qargv[i] = argv[i];
    qargv[NUM_PROBE_ARGS + 1] = NULL;

    if (xlreaper__close_all_but(fd) < 0) {
        LOGE(ERROR, "probe: closing descriptors");
        return XLREAPER_ERROR_FAIL;
    }
    if (hide_socket_dir(ctx, fd) < 0)
        LOG(WARN, "probe: QEMU runs in the host's mount namespace: its exit "
                  "may unlink the QMP socket libxl has bound for the DM "
                  "since, and fail the xl create that follows");
    /* N is left as it is: having come to us across libxl's execve it
     * has no FD_CLOEXEC; a caller that opened N itself clears it. */
    execv(path, qargv);
    LOGE(ERROR, "probe: execve %s", path);
    return XLREAPER_ERROR_FAIL;
}
