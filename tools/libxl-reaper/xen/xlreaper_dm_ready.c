/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_dm_ready.c - add_dm_restrict: tell libxl that the DM is up,
 * as QEMU no longer does once it is restricted.
 *
 * libxl without dm_restrict (libvirt's) gives QEMU its QMP socket by
 * path and waits for QEMU to write "running" to
 * device-model/<domid>/state; with dm_restrict it passes a pre-opened
 * QMP socket and asks QEMU there.  QEMU writes that node from a run
 * state handler that QEMU 10 does not install under
 * -xen-domid-restrict ("the XenStore write would fail when running
 * restricted"): a line to which we added the restriction gets no
 * "running", libxl gives up after its start timeout and kills the DM
 * (measured on Debian 13).  QEMU 7.2 writes it before it restricts
 * itself.
 *
 * So a watcher, forked before the exec and holding nothing of ours,
 * waits for the DM (this very process, QEMU once exec'd) to have
 * switched to its uid, which QEMU does last, after its machine is up
 * and restricted: a fact the kernel gives (/proc/PID/status), not
 * something the DM says.  Then it writes "running" where QEMU would
 * have, in a transaction that finds the domain still there, and exits.
 * It gives up when the DM exits (its pidfd) or after WAIT_S; each
 * xenstore call is bounded by an alarm.  A second "running" (QEMU 7.2
 * wrote its own) changes nothing.
 *
 * A restore (-incoming fd:N) is not up when QEMU switches uid: QEMU
 * then loads the saved state from N, and writes "running" itself only
 * once its machine runs, after the load.  Told "running" before that,
 * libxl went on with its post-start configuration while QEMU 7.2 was
 * still loading, and QEMU aborted (xen_add_to_physmap's assertion; e2e
 * 09 on Xen 4.17, key on, 2 restores in 9).  QEMU closes N once the
 * load is done (migration_incoming_state_destroy), so the watcher
 * also waits until /proc/PID/fd/N is no longer the file libxl opened:
 * the kernel's word again, not the DM's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xenstore.h>

#include "xlreaper_xen.h"

#define WAIT_S 300 /* libxl's own start timeout is shorter */
#define XS_ALARM_S 10
#define XS_TRIES 5

/* All four uids of pid are uid, by the kernel's status of it, read and
 * parsed as the reap and the census read every status. */
static bool switched(pid_t pid, uid_t uid)
{
    static xlreaper__proc_status st; /* 8 KiB: not on the stack */
    char rel[32];

    snprintf(rel, sizeof(rel), "/proc/%ld", (long)pid);
    if (xlreaper__proc_read_status(AT_FDCWD, rel, &st) != 1)
        return false;
    return st.t.ruid == uid && st.t.euid == uid && st.t.suid == uid &&
           st.t.fsuid == uid;
}

/* 0 written, 1 the domain is gone, -1 failed. */
static int write_running(uint32_t domid)
{
    char dom[64], node[64];
    struct xs_handle *h;
    int ret = -1;

    snprintf(dom, sizeof(dom), "/local/domain/%u/domid", domid);
    snprintf(node, sizeof(node), "device-model/%u/state", domid);
    alarm(XS_ALARM_S);
    h = xs_open(0);
    for (int i = 0; h && i < XS_TRIES && ret < 0; i++) {
        xs_transaction_t t = xs_transaction_start(h);
        unsigned len = 0;
        char *v;

        if (t == XBT_NULL)
            break;
        v = xs_read(h, t, dom, &len);
        ret = !v ? 1 : xs_write(h, t, node, "running", 7) ? 0 : -1;
        free(v);
        if (!xs_transaction_end(h, t, ret != 0) && ret == 0) {
            ret = -1;
            if (errno != EAGAIN)
                break;
        }
    }
    if (h)
        xs_close(h);
    alarm(0);
    return ret;
}

/* Whether the DM still has the saved state open as fd (the file whose
 * device and inode are in *st). */
static bool loading(pid_t pid, int fd, const struct stat *st)
{
    char path[64];
    struct stat now;

    snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)pid, fd);
    return stat(path, &now) == 0 && now.st_dev == st->st_dev &&
           now.st_ino == st->st_ino;
}

static void watch(xlreaper_ctx *ctx, uint32_t domid, pid_t dm, uid_t uid,
                  int incoming_fd)
{
    uint64_t t0;
    int pfd = (int)syscall(SYS_pidfd_open, dm, 0);
    struct stat saved;
    bool restore = incoming_fd > 2 && fstat(incoming_fd, &saved) == 0;
    int r;

    if (pfd < 0) {
        LOGED(WARN, domid, "pidfd_open of the DM: not telling libxl it runs");
        return;
    }
    xlreaper__close_all_but(pfd);
    t0 = xlreaper__now_us();
    for (;;) {
        struct pollfd p = { .fd = pfd, .events = POLLIN };

        if (poll(&p, 1, 50) > 0)
            return; /* the DM exited */
        if (switched(dm, uid) &&
            (!restore || !loading(dm, incoming_fd, &saved)))
            break;
        if (xlreaper__now_us() - t0 > WAIT_S * 1000000ull) {
            LOGD(WARN, domid,
                 "the DM did not switch to uid %lu%s within %d s: not "
                 "telling libxl it runs",
                 (unsigned long)uid,
                 restore ? " and load its saved state" : "", WAIT_S);
            return;
        }
    }
    r = write_running(domid);
    if (r < 0)
        LOGD(WARN, domid, "could not write device-model/%u/state", domid);
    else if (r == 0)
        LOGD(NOTICE, domid,
             "the DM runs under uid %lu, restricted%s: wrote \"running\" "
             "to device-model/%u/state for libxl, as QEMU does when not "
             "under -xen-domid-restrict",
             (unsigned long)uid, restore ? ", its saved state loaded" : "",
             domid);
}

void xlreaper__dm_ready_later(xlreaper_ctx *ctx, uint32_t domid, uid_t uid,
                              int incoming_fd)
{
    xlreaper__wait w = { .mode = XLREAPER__WAIT_REPORT, .rfd = -1 };
    pid_t dm = getpid(), c;

    c = fork();
    if (c < 0) {
        LOGED(WARN, domid, "fork: not telling libxl the DM runs");
        return;
    }
    if (c == 0) {
        /* Twice, so that the watcher is no child of the DM's. */
        pid_t g = fork();
        if (g == 0) {
            watch(ctx, domid, dm, uid, incoming_fd);
            _exit(0);
        }
        _exit(g < 0);
    }
    /* It forks and exits at once; bounded all the same. */
    w.pid = c;
    w.deadline_us = xlreaper__helper_deadline(ctx);
    xlreaper__wait_bounded(ctx, &w);
}
