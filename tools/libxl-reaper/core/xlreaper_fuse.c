/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_fuse.c - ending a DM task stuck on its own FUSE connection.
 *
 * A DM-uid process that can make a user and mount namespace (one the
 * spawn's seccomp filter did not bind: started outside this project,
 * or before it refused user namespaces; xlreaper_setid.c tells the
 * attack) can mount FUSE, read a request of one of its own threads
 * from /dev/fuse and never answer it.  After the kill that thread
 * waits in request_wait_answer, in D state with SIGKILL pending: the
 * kernel waits out a request already read uninterruptibly, and the
 * /dev/fuse descriptor whose last close would abort the connection is
 * in the dying process's own file table.  No signal ends it; the uid
 * is never empty again, and no DM can start in it (docs/facts.md F12).
 *
 * What does end it: writing to the connection's `abort` file under
 * fusectl, /sys/fs/fuse/connections/N/abort.  Every request is then
 * ended with ECONNABORTED, the waiter returns to its pending SIGKILL
 * and exits, and with it the descriptor.  fusectl makes each
 * connection's directory owned by the connection's user_id, which a
 * mount in a user namespace can only set to a uid its namespace maps:
 * the DM uid.  So after a kill, the connections owned by the DM uid
 * are the DM's own, and serve nothing but tasks being killed; they are
 * all aborted.  A connection of another owner (root's FUSE mount that
 * a DM task waits on) is not the DM's to end: its stuck task is the
 * outcome "stuck".
 *
 * Where fusectl is mounted on FUSECTL_DIR (systemd mounts it at boot,
 * and xl-reaperd.service makes sure of it), the helper uses that
 * mount: it opens each abort file with its fsuid set to the DM uid,
 * the file's owner, so that the owner's write bit lets it in.  That
 * takes CAP_SETUID alone, which every reaper has, and not
 * CAP_DAC_OVERRIDE, which xl-reaperd's unit does not keep.  The fsuid
 * is used for file access only: a DM task can signal a task whose
 * real or saved uid is its own, and trace one whose uids are; the
 * helper's stay 0.  Where fusectl is not mounted, the helper mounts
 * it in a mount namespace of its own, made private first so that
 * nothing propagates back to the host's: the namespace, and the mount
 * in it, end with the helper, whatever happens to it or to us.  That
 * takes CAP_SYS_ADMIN and the unshare and mount calls, which
 * xl-reaperd's unit refuses (it has systemd mount fusectl on the host
 * instead); without them the reap says so, and what to mount.
 * fusectl is one superblock for the whole host, so either way every
 * connection shows.  The helper is root and takes no DM id: a DM task
 * can neither signal nor trace it.  Where the kernel has no FUSE
 * (FUSECTL_DIR absent) or no fusectl, there is no connection to
 * abort.  The helper itself, raw system calls only, is
 * xlreaper__fuse_abort_child in xlreaper_helper_raw.c.
 */
#include <errno.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"

static const char *fuse_step_name(int step)
{
    switch (step) {
    case FUSE_UNSHARE: return "unshare(CLONE_NEWNS)";
    case FUSE_PRIVATE: return "making its mounts private";
    case FUSE_MOUNT: return "mounting fusectl";
    case FUSE_OPEN: return "opening " FUSECTL_DIR;
    case FUSE_READDIR: return "reading " FUSECTL_DIR;
    default: return "unknown step";
    }
}

/* The least time the helper is given, deadline or not: it is root and
 * no DM task can stop it, so only a very loaded host makes it slow. */
#define FUSE_HELPER_MIN_US 250000

int xlreaper__fuse_abort_uid(xlreaper_ctx *ctx, uint32_t domid, uid_t uid,
                             uint64_t deadline_us, unsigned *aborted_r)
{
    xlreaper__fuse_args a = { .uid = uid };
    xlreaper__child_report rep;
    xlreaper__helper_end end;
    uint64_t least = xlreaper__now_us() + FUSE_HELPER_MIN_US;
    bool reported;
    int rc, status;

    *aborted_r = 0;
    rc =
        xlreaper__run_helper(ctx, "the FUSE abort", xlreaper__fuse_abort_child,
                             &a, deadline_us > least ? deadline_us : least,
                             &rep, &reported, &status, &end);
    if (rc)
        return rc;
    if (end == XLREAPER__HELPER_DONE && reported && rep.step == 0 &&
        WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *aborted_r = rep.detail > 0 && rep.detail <= UINT_MAX
                         ? (unsigned)rep.detail
                         : 0;
        if (rep.err)
            LOGD(DEBUG, domid,
                 "no FUSE connection to abort: fusectl cannot be mounted "
                 "(%s)",
                 rep.err == ENOENT ? "no " FUSECTL_DIR : "no fusectl");
        return 0;
    }
    if (end == XLREAPER__HELPER_DONE && reported && rep.err == EPERM &&
        (rep.step == FUSE_UNSHARE || rep.step == FUSE_PRIVATE ||
         rep.step == FUSE_MOUNT)) {
        LOGD(ERROR, domid,
             "cannot abort uid %lu's FUSE connections: fusectl is not "
             "mounted on " FUSECTL_DIR " and this process may not mount "
             "it (%s refused: no CAP_SYS_ADMIN, or a system call filter "
             "such as xl-reaperd.service's); mount it on the host (`mount -t "
             "fusectl fusectl " FUSECTL_DIR "`, as xl-reaperd.service does)",
             (unsigned long)uid, fuse_step_name(rep.step));
        return XLREAPER_ERROR_FAIL;
    }
    if (end == XLREAPER__HELPER_DONE && reported) {
        *aborted_r = rep.detail > 0 && rep.detail <= UINT_MAX
                         ? (unsigned)rep.detail
                         : 0;
        LOGEV(ERROR, rep.err,
              "domid %u: aborting uid %lu's FUSE connections: %s", domid,
              (unsigned long)uid, fuse_step_name(rep.step));
        return XLREAPER_ERROR_FAIL;
    }
    LOGD(ERROR, domid, "aborting uid %lu's FUSE connections: the helper %s",
         (unsigned long)uid,
         end == XLREAPER__HELPER_TIMEOUT   ? "missed its deadline"
         : end == XLREAPER__HELPER_STOPPED ? "was stopped"
                                           : "ended without a report");
    return XLREAPER_ERROR_FAIL;
}
