/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * uid-empty UID [WAIT_MS]: is there no task at all, live or zombie, under
 * UID? Asks the kernel's per-user task count rather than /proc, which a
 * fork racer outruns: a probe that takes all three uids of UID with
 * RLIMIT_NPROC = 2 can fork once only if UID has no other task.
 *
 * Probes until the uid is empty or WAIT_MS (default 0) has passed.
 * Exit 0 and print the milliseconds it took: empty. Exit 1: not empty.
 * Exit 2: could not probe (bad argument, setresuid failed...).
 */
#ifndef _GNU_SOURCE /* make analyze passes -D_GNU_SOURCE */
#define _GNU_SOURCE /* setresuid, getresuid */
#endif
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* In a child: 0 empty, 1 busy, 2 error. Never returns. */
static void probe(uid_t uid)
{
    struct rlimit rl = { 2, 2 };
    uid_t r, e, s;
    pid_t pid;
    int st;

    if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
        setrlimit(RLIMIT_NPROC, &rl) || setresuid(uid, uid, uid))
        _exit(2);
    /* With every uid non-zero the capabilities are gone: the limit holds. */
    if (getresuid(&r, &e, &s) || r != uid || e != uid || s != uid)
        _exit(2);
    pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid < 0)
        _exit(errno == EAGAIN ? 1 : 2);
    /* A task of the uid may SIGSTOP the child (scenario 07's racers do):
     * then the uid is busy, and the child is ours to kill. */
    while (waitpid(pid, &st, WUNTRACED) != pid)
        if (errno != EINTR)
            _exit(2);
    if (WIFSTOPPED(st)) {
        kill(pid, SIGKILL);
        _exit(1);
    }
    _exit(0);
}

static int probe_once(uid_t uid)
{
    pid_t pid = fork();
    int st;

    if (pid < 0)
        return 2;
    if (pid == 0)
        probe(uid);
    for (;;) {
        if (waitpid(pid, &st, WUNTRACED) < 0) {
            if (errno != EINTR)
                return 2;
            continue;
        }
        if (!WIFSTOPPED(st))
            break;
        /* Stopped by a task of the uid: kill it, wait for its end. */
        kill(pid, SIGKILL);
    }
    /* Killed or stopped: only a task of the uid, or a reaper killing the
     * uid (the daemon, at the same moment), can signal it: busy, ask
     * again. */
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    char *end;
    unsigned long uid;
    long wait_ms = 0, t0, r;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: uid-empty UID [WAIT_MS]\n");
        return 2;
    }
    errno = 0;
    uid = strtoul(argv[1], &end, 10);
    if (errno || *end || end == argv[1] || uid == 0 || uid >= (uid_t)-1) {
        fprintf(stderr, "uid-empty: bad uid '%s'\n", argv[1]);
        return 2;
    }
    if (argc == 3) {
        wait_ms = strtol(argv[2], &end, 10);
        if (*end || end == argv[2] || wait_ms < 0) {
            fprintf(stderr, "uid-empty: bad wait '%s'\n", argv[2]);
            return 2;
        }
    }
    t0 = now_ms();
    for (;;) {
        r = probe_once((uid_t)uid);
        if (r == 0) {
            printf("%ld\n", now_ms() - t0);
            return 0;
        }
        if (r != 1) {
            fprintf(stderr, "uid-empty: probe of uid %lu failed\n", uid);
            return 2;
        }
        if (now_ms() - t0 >= wait_ms)
            return 1;
        usleep(10000);
    }
}
