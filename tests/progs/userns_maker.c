/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * userns_maker - a device model that tries to make a user namespace of
 * its own, the first step of the stuck-FUSE attack (xlreaper_setid.c),
 * by every call that can, and checks that what QEMU needs of the same
 * calls still works.
 *
 *   userns_maker [ARG...]     (the arguments, a QEMU line, are ignored)
 *
 * Prints one line per attempt, "NAME=0" when the call succeeded or
 * "NAME=ERRNO" (EPERM, ENOSYS, EINVAL, ...) when it failed:
 *
 *   unshare-newuser     unshare(CLONE_NEWUSER)
 *   clone-newuser       raw clone(CLONE_NEWUSER | SIGCHLD)
 *   clone3-newuser      raw clone3 with CLONE_NEWUSER
 *   clone3-plain        raw clone3 with no flag (a plain fork)
 *   setns-user          setns(own user namespace, CLONE_NEWUSER)
 *   setns-any           setns(own user namespace, 0)
 *
 * and the controls, which must say 0: fork, pthread_create and
 * posix_spawn (glibc's use clone3 and fall back to clone on ENOSYS),
 * and a namespace-less clone.  Exits 0 once every attempt was made; a
 * child that a call made by mistake exits at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sched.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif

static const char *err_name(int e)
{
    switch (e) {
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case EACCES: return "EACCES";
    case EAGAIN: return "EAGAIN";
    case EUSERS: return "EUSERS";
    case ENOSPC: return "ENOSPC";
    default: return "other";
    }
}

static void say(const char *name, long r, int e)
{
    printf("%s=%s\n", name, r < 0 ? err_name(e) : "0");
    fflush(stdout);
}

/* A child a clone made: gone at once, and reaped by us. */
static void reap(long pid)
{
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, __WALL);
}

/* 1 in the parent once its child (which gets 0) is done; exits 3
 * when there is no child. */
static int in_parent(void)
{
    pid_t pid = fork();

    if (pid < 0) {
        printf("fork-for-attempt=failed\n");
        exit(3);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return pid > 0;
}

static void *thread_main(void *arg)
{
    return arg;
}

int main(int argc, char **argv, char **envp)
{
    struct clone_args ca;
    pthread_t th;
    long r;
    int fd, e;

    if (argc > 1 && !strcmp(argv[1], "--child"))
        return 0;

    /* Each in a child of its own: one that worked would change what
     * the next one sees (a second user namespace from inside one
     * without a mapping is EPERM from the kernel). */
    if (!in_parent()) {
        r = unshare(CLONE_NEWUSER);
        say("unshare-newuser", r, errno);
        _exit(0);
    }
    if (!in_parent()) {
        r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL, NULL, 0);
        e = errno;
        reap(r);
        say("clone-newuser", r, e);
        _exit(0);
    }
    if (!in_parent()) {
        memset(&ca, 0, sizeof(ca));
        ca.flags = CLONE_NEWUSER;
        ca.exit_signal = SIGCHLD;
        r = syscall(__NR_clone3, &ca, sizeof(ca));
        e = errno;
        reap(r);
        say("clone3-newuser", r, e);
        _exit(0);
    }

    memset(&ca, 0, sizeof(ca));
    ca.exit_signal = SIGCHLD;
    r = syscall(__NR_clone3, &ca, sizeof(ca));
    e = errno;
    reap(r);
    say("clone3-plain", r, e);

    /* Our own user namespace: joining it is EINVAL from the kernel,
     * EPERM only from the filter. */
    fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        say("setns-user", -1, errno);
        say("setns-any", -1, errno);
    } else {
        r = setns(fd, CLONE_NEWUSER);
        say("setns-user", r, errno);
        r = setns(fd, 0);
        say("setns-any", r, errno);
        close(fd);
    }

    /* The controls. */
    r = syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
    e = errno;
    reap(r);
    say("clone-plain", r, e);
    r = fork();
    e = errno;
    reap(r);
    say("fork", r, e);
    e = pthread_create(&th, NULL, thread_main, NULL);
    if (!e)
        pthread_join(th, NULL);
    say("pthread_create", e ? -1 : 0, e);
    {
        char *cargv[] = { argv[0], "--child", NULL };
        pid_t pid;
        int status = -1;

        e = posix_spawn(&pid, argv[0], NULL, NULL, cargv, envp);
        if (!e && (waitpid(pid, &status, 0) != pid || status != 0))
            e = ECHILD;
        say("posix_spawn", e ? -1 : 0, e);
    }
    return 0;
}
