/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuse_stuck - a device model that makes one of its tasks unkillable
 * through FUSE, speaking the raw /dev/fuse protocol (linux/fuse.h), no
 * libfuse.  It mounts FUSE, answers FUSE_INIT, then a task of its own
 * looks a name up there and the server reads that request and never
 * answers it.  After SIGKILL the waiter stays in D state
 * (request_wait_answer) with SIGKILL pending: a request already read is
 * waited out uninterruptibly, and nothing but an abort of the
 * connection (fusectl) or the server's answer ends it.
 *
 *   fuse_stuck userns DEV MNT
 *       As the DM uid: a user and mount namespace of its own, FUSE on
 *       MNT from DEV (a /dev/fuse node), served by a thread of this
 *       process while another thread waits.  The connection is owned
 *       by the DM uid, and the /dev/fuse descriptor is in the dying
 *       process's own file table, so the kill never aborts it.
 *   fuse_stuck root DEV MNT UID
 *       As root: a mount namespace of its own, FUSE on MNT (allow_other)
 *       served by root, and a child that takes UID (all three ids, and
 *       its gid) and waits.  The connection is root's: killing UID's
 *       tasks cannot end the wait, and aborting UID's connections does
 *       not either.  Killing this root process (the server) does.
 *
 * Prints "conn=N" (the connection's name under fusectl, and the
 * waiter's pid as "waiter=P") then "stuck" once the request it will
 * never answer has been read, and then sleeps.  On a host that cannot,
 * prints "cannot=REASON" and exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "fuse_init.h"

static int dev_fd = -1;
static const char *mnt;

static void cannot(const char *why)
{
    printf("cannot=%s (%s)\n", why, strerror(errno));
    fflush(stdout);
    exit(2);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);

    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        cannot(path);
    close(fd);
}

/* The request in buf, of len bytes, for an answer. */
static struct fuse_in_header *read_request(char *buf, size_t size)
{
    for (;;) {
        ssize_t n = read(dev_fd, buf, size);

        if (n >= (ssize_t)sizeof(struct fuse_in_header))
            return (struct fuse_in_header *)buf;
        if (n < 0 && (errno == EINTR || errno == ENOENT))
            continue; /* ENOENT: a request interrupted meanwhile */
        cannot("read /dev/fuse");
    }
}

static void answer_init(void)
{
    static char buf[FUSE_MIN_READ_BUFFER + 65536];
    struct fuse_in_header *in = read_request(buf, sizeof(buf));
    fuse_init_reply out;

    if (in->opcode != FUSE_INIT)
        cannot("first request is not FUSE_INIT");
    fuse_init_answer(in, &out);
    out.o.max_background = 16;
    out.o.congestion_threshold = 12;
    out.o.time_gran = 1;
    if (write(dev_fd, &out, sizeof(out)) != (ssize_t)sizeof(out))
        cannot("answer FUSE_INIT");
}

/* The server: INIT, then one request read and never answered. */
static void *serve(void *arg)
{
    static char buf[FUSE_MIN_READ_BUFFER + 65536];

    (void)arg;
    read_request(buf, sizeof(buf));
    printf("stuck\n");
    fflush(stdout);
    for (;;)
        pause();
    return NULL;
}

/* The waiter: a lookup it will wait out forever. */
static void wait_forever(void)
{
    char path[4200];
    struct stat st;

    snprintf(path, sizeof(path), "%s/never", mnt);
    stat(path, &st);
    /* Only an abort gets here. */
    for (;;)
        pause();
}

static void *waiter_thread(void *arg)
{
    (void)arg;
    printf("waiter=%ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    wait_forever();
    return NULL;
}

/*
 * Prints the connection's name under fusectl: the kernel's dev_t of the
 * mount, MAJOR << 20 | MINOR, read from mountinfo (a stat of the mount
 * would send a GETATTR that nobody serves yet).
 */
static void print_conn(void)
{
    char line[8192];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    unsigned maj, min;

    if (!f)
        cannot("open mountinfo");
    while (fgets(line, sizeof(line), f)) {
        char point[4200], *dash = strstr(line, " - fuse ");

        if (dash &&
            sscanf(line, "%*u %*u %u:%u %*s %4199s", &maj, &min, point) == 3 &&
            !strcmp(point, mnt)) {
            printf("conn=%u\n", maj << 20 | min);
            fclose(f);
            return;
        }
    }
    errno = ENOENT;
    cannot("find the mount in mountinfo");
}

/* Mounts FUSE on mnt from dev; prints the connection's name. */
static void mount_fuse(const char *dev, bool allow_other)
{
    char opts[256];

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        cannot("make / private");
    dev_fd = open(dev, O_RDWR | O_CLOEXEC);
    if (dev_fd < 0)
        cannot("open the fuse device");
    snprintf(opts, sizeof(opts),
             "fd=%d,rootmode=40000,user_id=%u,group_id=%u%s", dev_fd,
             (unsigned)geteuid(), (unsigned)getegid(),
             allow_other ? ",allow_other" : "");
    if (mount("fuse_stuck", mnt, "fuse", MS_NOSUID | MS_NODEV, opts) < 0)
        cannot("mount fuse");
    /* Mounted: the kernel has sent FUSE_INIT. */
    answer_init();
    print_conn();
}

static void __attribute__((noreturn)) run_userns(const char *dev)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    pthread_t server, waiter;
    char map[64];

    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        cannot("unshare a user and mount namespace");
    snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
    write_file("/proc/self/uid_map", map);
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
    write_file("/proc/self/gid_map", map);
    mount_fuse(dev, false);
    if (pthread_create(&server, NULL, serve, NULL) ||
        pthread_create(&waiter, NULL, waiter_thread, NULL))
        cannot("pthread_create");
    for (;;)
        pause();
}

static void __attribute__((noreturn)) run_root(const char *dev, uid_t uid)
{
    pthread_t server;
    pid_t pid;

    if (unshare(CLONE_NEWNS) < 0)
        cannot("unshare a mount namespace");
    mount_fuse(dev, true);
    pid = fork();
    if (pid < 0)
        cannot("fork");
    if (pid == 0) {
        close(dev_fd);
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
            setresuid(uid, uid, uid) < 0)
            _exit(3);
        wait_forever();
    }
    printf("waiter=%ld\n", (long)pid);
    fflush(stdout);
    /* The server reads the request after the waiter sent it. */
    if (pthread_create(&server, NULL, serve, NULL))
        cannot("pthread_create");
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && !strcmp(argv[1], "userns")) {
        mnt = argv[3];
        run_userns(argv[2]);
    }
    if (argc == 5 && !strcmp(argv[1], "root")) {
        mnt = argv[3];
        run_root(argv[2], (uid_t)strtoul(argv[4], NULL, 10));
    }
    fprintf(stderr, "usage: fuse_stuck userns DEV MNT | root DEV MNT UID\n");
    return 1;
}
