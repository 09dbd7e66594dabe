/*
 * xlreaper_child.c - what every forked helper child shares: the report
 * pipe that carries (step, errno) to the parent, waiting, and the raw
 * credential system calls.
 *
 * Between fork and _exit/execve a child of a possibly multi-threaded
 * caller may only make async-signal-safe calls on memory prepared
 * before the fork (as minijail and bubblewrap do).  Raw syscall(2) is
 * used for credentials because glibc's setresuid() in a process with
 * other threads broadcasts the change to them; in the child there are
 * none, and the raw call says exactly what happens.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"

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

void xlreaper__child_fail(int wfd, int step, int err, long detail)
{
    xlreaper__child_report rep = { .step = step, .err = err,
                                   .detail = detail };

    /* One record is smaller than PIPE_BUF, so the write is atomic. */
    if (wfd >= 0)
        (void)!write(wfd, &rep, sizeof(rep));
    _exit(127);
}

int xlreaper__report_read(xlreaper_ctx *ctx, int rfd,
                          xlreaper__child_report *rep)
{
    ssize_t r = xlreaper__read_all(rfd, (char *)rep, sizeof(*rep));

    if (r < 0) {
        LOGE(ERROR, "reading a child's report");
        return XLREAPER_ERROR_FAIL;
    }
    if (r == 0)
        return 0;
    if ((size_t)r != sizeof(*rep)) {
        LOG(ERROR, "a child's report was cut short (%zd bytes)", r);
        return XLREAPER_ERROR_FAIL;
    }
    return 1;
}

int xlreaper__wait_child(xlreaper_ctx *ctx, pid_t pid, int *status_r)
{
    for (;;) {
        pid_t r = waitpid(pid, status_r, __WALL | WUNTRACED);
        if (r == pid && WIFSTOPPED(*status_r)) {
            /* Only a task sharing the child's uid can stop it, and would
             * hang us if we let it: the child's answer is void.  It is our
             * unreaped child, so the pid cannot have been reused. */
            LOG(DEBUG, "child %ld stopped by signal %d; killing it",
                (long)pid, WSTOPSIG(*status_r));
            kill(pid, SIGKILL);
            continue;
        }
        if (r == pid)
            return 0;
        if (r < 0 && errno == EINTR)
            continue;
        LOGE(ERROR, "waitpid %ld", (long)pid);
        return XLREAPER_ERROR_FAIL;
    }
}

int xlreaper__run_child(xlreaper_ctx *ctx, const char *what,
                        void (*fn)(int wfd, void *arg), void *arg,
                        xlreaper__child_report *rep, bool *reported_r,
                        int *status_r)
{
    xlreaper__report_pipe p;
    pid_t pid;
    int rc;

    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        return rc;
    pid = fork();
    if (pid < 0) {
        LOGE(ERROR, "fork for %s", what);
        xlreaper__report_pipe_close(&p);
        return XLREAPER_ERROR_FAIL;
    }
    if (pid == 0) {
        fn(p.wfd, arg);
        _exit(127); /* fn does not return */
    }
    close(p.wfd);
    p.wfd = -1;
    rc = xlreaper__report_read(ctx, p.rfd, rep);
    if (xlreaper__wait_child(ctx, pid, status_r) < 0 && rc >= 0)
        rc = XLREAPER_ERROR_FAIL;
    xlreaper__report_pipe_close(&p);
    if (rc < 0)
        return rc;
    *reported_r = rc == 1;
    return 0;
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

int xlreaper__caps_none(bool permitted_too)
{
    struct __user_cap_header_struct hdr = {
        .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[2];

    if (syscall(SYS_capget, &hdr, data) < 0)
        return -1;
    if (data[0].effective || data[1].effective ||
        (permitted_too && (data[0].permitted || data[1].permitted))) {
        errno = EPERM;
        return -1;
    }
    return 0;
}
