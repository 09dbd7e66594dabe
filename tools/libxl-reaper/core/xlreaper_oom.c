/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_oom.c - the reaper is never the OOM killer's choice.
 *
 * Under memory pressure (a DM that allocates, or kernel memory a DM
 * makes that no cgroup is charged for: docs/facts.md F18) the kernel
 * must kill a DM, never the process that reaps DMs nor a helper of its
 * reap.  oom_score_adj -1000 exempts a process (oom_badness,
 * mm/oom_kill.c).  It is set here, by the program's main, and not by
 * the library on its own, for three reasons the kernel gives
 * (fs/proc/base.c __set_oom_adj, kernel/fork.c copy_oom_score_adj;
 * docs/facts.md F30):
 *
 *  - it is process-wide, and a write by a holder of CAP_SYS_RESOURCE
 *    also sets the process's floor for good: a library that set it
 *    during a call could not put its caller back as it found it;
 *  - a helper started with CLONE_VM (xlreaper_clone.c) shares its
 *    caller's memory, and the kernel keeps one value for every process
 *    sharing a memory, because the OOM killer kills them together: a
 *    helper's own write would change its caller's too, and the caller
 *    at 0 would take the helper down with it anyway;
 *  - every helper, forked or cloned, starts with its parent's value
 *    (copy_signal), so a main at -1000 is a reap at -1000 throughout,
 *    with no file opened on the kill path (where the host may be out of
 *    files).
 *
 * No DM can change a helper's value: /proc/<helper>/oom_score_adj is
 * mode 0644, and its owner is root, not the helper's euid, because a
 * helper is not dumpable (its prelude clears the flag and every change
 * of its euid clears it again; task_dump_owner, fs/proc/base.c).  The
 * file checks no ptrace access: the owner is the whole guard, so a host
 * with fs.suid_dumpable = 1 (a change of euid then makes the memory
 * dumpable again) would hand the file to the DM uid while the killer
 * holds it as its euid.  Debian's default is 0.
 *
 * Lowering needs CAP_SYS_RESOURCE.  xl-reaperd's unit sets
 * OOMScoreAdjust=-1000 before it drops capabilities, so its own write
 * is the same value and allowed; a CLI run as root in a container
 * without the capability is refused by the kernel, and says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_internal.h"

#define OOM_PATH "/proc/self/oom_score_adj"
#define OOM_MIN "-1000"

/* The value in force, as the kernel prints it, into buf; or "?". */
static void oom_now(char *buf, size_t size)
{
    ssize_t n = -1;
    int fd = open(OOM_PATH, O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        n = xlreaper__read_all(fd, buf, size - 1);
        close(fd);
    }
    if (n <= 0) {
        snprintf(buf, size, "?");
        return;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

int xlreaper_oom_protect(xlreaper_ctx *ctx)
{
    char now[16];
    ssize_t n;
    int fd, e;

    fd = open(OOM_PATH, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        LOGE(WARN,
             "%s: cannot open it; the OOM killer may choose this "
             "process",
             OOM_PATH);
        return XLREAPER_ERROR_FAIL;
    }
    n = write(fd, OOM_MIN, strlen(OOM_MIN));
    e = errno;
    close(fd);
    if (n == (ssize_t)strlen(OOM_MIN))
        return 0;
    oom_now(now, sizeof(now));
    if (n < 0 && e == EACCES) {
        /* Said at INFO: a host property, not an event; the daemon says
         * it as a warning once, `xl-reaper check` on its own line, and
         * a CLI on every hook call would bury the lines that matter. */
        LOG(INFO,
            "oom_score_adj stays %s, not -1000: lowering it needs "
            "CAP_SYS_RESOURCE, which this process lacks; under memory "
            "pressure the OOM killer may choose it, and its helpers, "
            "before a device model",
            now);
        return XLREAPER_ERROR_PERM;
    }
    errno = n < 0 ? e : EIO;
    LOGE(WARN, "writing -1000 to %s (oom_score_adj stays %s)", OOM_PATH, now);
    return XLREAPER_ERROR_FAIL;
}
