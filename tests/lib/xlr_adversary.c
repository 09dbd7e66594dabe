/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_adversary.c - starting tests/progs/adversary the way a device model
 * starts: through the library's own restricted spawn, under a domid's DM
 * uid, and waiting until it reports its trick is in place.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlr_test.h"

typedef struct {
    xlreaper_ctx *ctx;
    uint32_t domid;
    const char *mode;
    int ready_fd;
    char path[512];
} start_args;

static void spawn_adversary(void *arg)
{
    start_args *a = arg;
    char *argv[] = { a->path, (char *)a->mode, NULL };
    xlreaper_spawn_plan *plan;

    dup2(a->ready_fd, 1);
    if (!strcmp(a->mode, "userns")) {
        /* The spawn's filter refuses a DM a user namespace
         * (test_spawn_userns.c): this one was started elsewhere, with
         * no filter, as the uid and no more. */
        uid_t uid;
        gid_t gid;

        if (xlreaper_dm_ids(a->ctx, a->domid, &uid, &gid) ||
            syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, gid, gid, gid) ||
            syscall(SYS_setresuid, uid, uid, uid))
            _exit(3);
        execv(a->path, argv);
        _exit(3);
    }
    if (xlreaper_spawn_plan_new(a->ctx, a->domid, a->path, argv, &plan))
        _exit(3);
    xlreaper_spawn_exec(a->ctx, plan, 0);
    _exit(3);
}

static void wait_ready(int fd, const char *mode)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    char c;

    if (poll(&p, 1, 5000) != 1 || read(fd, &c, 1) != 1 || c != 'R')
        fail_msg("adversary %s never became ready", mode);
    close(fd);
}

static pid_t start(xlreaper_ctx *ctx, uint32_t domid, const char *mode,
                   bool nursery)
{
    start_args a = { .ctx = ctx, .domid = domid, .mode = mode };
    int fds[2];
    pid_t p;

    snprintf(a.path, sizeof(a.path), "%s/adversary", xlrt_progs_dir());
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    a.ready_fd = fds[1];
    if (nursery) {
        p = xlrt_nursery_start(spawn_adversary, &a);
    } else {
        p = fork();
        assert_true(p >= 0);
        if (p == 0)
            spawn_adversary(&a);
    }
    close(fds[1]);
    wait_ready(fds[0], mode);
    return p;
}

pid_t xlrt_adversary_in_nursery(xlreaper_ctx *ctx, uint32_t domid,
                                const char *mode)
{
    return start(ctx, domid, mode, true);
}

pid_t xlrt_adversary_as_child(xlreaper_ctx *ctx, uint32_t domid,
                              const char *mode)
{
    return start(ctx, domid, mode, false);
}

pid_t xlrt_euid_holder_start(uid_t uid)
{
    int fds[2];
    char c;
    pid_t p;

    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        if (syscall(SYS_setresuid, 0, uid, 0))
            _exit(1);
        (void)!write(fds[1], "R", 1);
        for (;;)
            pause();
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    return p;
}

static void *thread_hold_uid(void *arg)
{
    uid_t uid = *(uid_t *)arg;
    int fd = ((int *)arg)[1];

    /* Raw: this thread only; its process, and leader, stay root. */
    if (syscall(SYS_setresuid, uid, uid, uid))
        _exit(1);
    (void)!write(fd, "R", 1);
    for (;;)
        pause();
    return NULL;
}

pid_t xlrt_thread_holder_start(uid_t uid)
{
    int fds[2], arg[2];
    pthread_t t;
    char c;
    pid_t p;

    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        arg[0] = (int)uid;
        arg[1] = fds[1];
        if (pthread_create(&t, NULL, thread_hold_uid, arg))
            _exit(1);
        for (;;)
            pause();
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    return p;
}
