/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_child.c - what every helper child shares: the report pipe
 * that carries (step, errno) to the parent, a helper run start to end
 * (xlreaper_clone.c starts it, xlreaper_wait.c waits for it), and the
 * raw credential system calls.
 *
 * Between fork and _exit/execve a child of a possibly multi-threaded
 * caller may only make async-signal-safe calls on memory prepared
 * before the fork (as minijail and bubblewrap do).  Raw syscall(2) is
 * used for credentials because glibc's setresuid() in a process with
 * other threads broadcasts the change to them; in the child there are
 * none, and the raw call says exactly what happens.
 *
 * Hostile territory.  A helper that takes a DM uid as its real uid (the
 * killer while it counts, a count probe, a census probe) can be
 * signalled by any task of that uid: stopped, killed, or held in a stop
 * forever.  So a helper holds nothing it could lose (no descriptor but
 * its report pipe, its own process group, not dumpable, PDEATHSIG so it
 * cannot outlive us, armed again after each change of its ids, which
 * clears it: xlreaper__helper_rearm) and takes saved uid 0, which keeps
 * it out of ptrace and prlimit (both need all three ids to match).  The parent
 * never blocks on it without a deadline (xlreaper__wait_bounded), and
 * answers a stop or a missed deadline with SIGKILL.  Such a helper's
 * answer is void:
 * the caller turns it into a verdict ("busy", "could not tell"), never
 * into "empty".
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

int xlreaper__report_pipe_open(xlreaper_ctx *ctx, xlreaper__report_pipe *p)
{
    int fds[2];

    if (pipe2(fds, O_CLOEXEC) < 0) {
        LOGE(ERROR, "pipe2");
        p->rfd = p->wfd = -1;
        return XLREAPER_ERROR_FAIL;
    }
    p->rfd = fds[0];
    p->wfd = fds[1];
    return 0;
}

void xlreaper__report_pipe_close(xlreaper__report_pipe *p)
{
    xlreaper__close_keep_errno(p->rfd);
    xlreaper__close_keep_errno(p->wfd);
    p->rfd = p->wfd = -1;
}

int xlreaper__close_from(unsigned lo, unsigned hi)
{
    int r = xlreaper__close_from_raw(lo, hi);

    if (r < 0) {
        errno = -r;
        return -1;
    }
    return 0;
}

int xlreaper__wait_report(xlreaper_ctx *ctx, const xlreaper__wait *w,
                          bool *reported_r)
{
    *reported_r = w->len == sizeof(xlreaper__child_report);
    if (w->len && !*reported_r && w->end == XLREAPER__HELPER_DONE) {
        LOG(ERROR, "a child's report was cut short (%zu bytes)", w->len);
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

int xlreaper__run_helper_wait(xlreaper_ctx *ctx, const char *what,
                              void (*fn)(int wfd, void *arg), void *arg,
                              xlreaper__wait *w)
{
    xlreaper__report_pipe p;
    xlreaper__helper_vm vm;
    int rc;

    w->status = -1;
    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        return rc;
    rc = xlreaper__helper_start(ctx, what, fn, arg, p.wfd, &vm, &w->pid);
    if (rc) {
        xlreaper__report_pipe_close(&p);
        return rc;
    }
    /* The child makes its own process group first thing; until then a
     * signal to ours could only kill it, which is a void answer. */
    close(p.wfd);
    p.wfd = -1;
    w->rfd = p.rfd;
    rc = xlreaper__wait_bounded(ctx, w);
    /* Reaped on every path but a failed waitpid, which leaves a child
     * we cannot wait for: its stack stays rather than be freed under
     * it. */
    if (w->status != -1 || !rc)
        xlreaper__helper_finish(&vm);
    xlreaper__report_pipe_close(&p);
    w->rfd = -1;
    if (!rc && w->end != XLREAPER__HELPER_DONE)
        LOG(DEBUG, "%s (pid %ld) %s: its answer is void", what, (long)w->pid,
            w->end == XLREAPER__HELPER_STOPPED    ? "was stopped"
            : w->end == XLREAPER__HELPER_OVERFLOW ? "said too much"
                                                  : "missed its deadline");
    return rc;
}

int xlreaper__run_helper(xlreaper_ctx *ctx, const char *what,
                         void (*fn)(int wfd, void *arg), void *arg,
                         uint64_t deadline_us, xlreaper__child_report *rep,
                         bool *reported_r, int *status_r,
                         xlreaper__helper_end *end_r)
{
    xlreaper__wait w = { .mode = XLREAPER__WAIT_REPORT,
                         .buf = (char *)rep,
                         .size = sizeof(*rep),
                         .deadline_us = deadline_us };
    int rc;

    *reported_r = false;
    rc = xlreaper__run_helper_wait(ctx, what, fn, arg, &w);
    *status_r = w.status;
    *end_r = w.end;
    if (rc)
        return rc;
    return xlreaper__wait_report(ctx, &w, reported_r);
}

int xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s)
{
    return (int)syscall(SYS_setresuid, r, e, s);
}

int xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s)
{
    return (int)syscall(SYS_setresgid, r, e, s);
}

int xlreaper__sys_setgroups0(void)
{
    return (int)syscall(SYS_setgroups, 0, NULL);
}

int xlreaper__cap_effective(int cap)
{
    struct __user_cap_header_struct hdr = { .version =
                                                _LINUX_CAPABILITY_VERSION_3,
                                            .pid = 0 };
    struct __user_cap_data_struct data[2];

    if (cap < 0 || cap >= 64)
        return -1;
    if (syscall(SYS_capget, &hdr, data) < 0)
        return -1;
    return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int xlreaper__caps_none(bool permitted_too)
{
    int r = xlreaper__caps_none_raw(permitted_too);

    if (r < 0) {
        errno = -r;
        return -1;
    }
    return 0;
}
