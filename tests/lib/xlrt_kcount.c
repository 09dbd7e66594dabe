/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_kcount.c - our own kernel count of a uid's tasks, for tests and
 * benchmarks: a child takes all ids of uid, RLIMIT_NPROC = limit, and
 * forks once; the fork fits exactly when uid's other tasks number
 * limit - 2 or fewer.  Written apart from xlreaper_count.c on purpose,
 * so that a verdict on the library does not rest on the library.
 * Raw syscalls in the child: async-signal-safe, and per-thread in a
 * child of a threaded caller.  No cmocka: benchmarks link it too.
 */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlrt_kcount.h"

int xlrt_probe_fits(uid_t uid, unsigned long limit)
{
    pid_t pid = fork();
    int status;

    if (pid < 0)
        return -1;
    if (pid == 0) {
        struct rlimit rl = { limit, limit };
        if (syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, uid, uid, uid) ||
            setrlimit(RLIMIT_NPROC, &rl) ||
            syscall(SYS_setresuid, uid, uid, uid))
            _exit(3);
        pid_t c = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        if (c == 0)
            _exit(0);
        if (c < 0)
            _exit(errno == EAGAIN ? 1 : 3);
        while (waitpid(c, &status, 0) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED(status))
        return XLRT_PROBE_KILLED; /* only a live task of uid could */
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
        return -1;
    return WEXITSTATUS(status) == 0;
}

long xlrt_kernel_count(uid_t uid)
{
    unsigned long lo = 1, hi = 2;
    int f;

    /* fits(L) holds iff the other tasks number at most L - 2. */
    while ((f = xlrt_probe_fits(uid, hi)) == 0) {
        lo = hi;
        hi *= 2;
        if (hi > (1ul << 23))
            return -1;
    }
    if (f < 0)
        return f;
    while (hi - lo > 1) {
        unsigned long mid = lo + (hi - lo) / 2;
        f = xlrt_probe_fits(uid, mid);
        if (f < 0)
            return f;
        if (f)
            hi = mid;
        else
            lo = mid;
    }
    return (long)hi - 2;
}

long xlrt_kernel_count_settled(uid_t uid, unsigned ms)
{
    struct timespec pause = { 0, 2000000 };
    long n;

    /* Zombies wait for their reaper: ask until none, or ms pass. */
    for (unsigned waited = 0;; waited += 2) {
        n = xlrt_kernel_count(uid);
        if (n == 0 || waited >= ms)
            return n;
        nanosleep(&pause, NULL);
    }
}
