/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuse_holder UID... - holds one task of each UID stuck in D state, as
 * a hung NFS server or disk would: a FUSE file system served here, as
 * root, in a mount namespace of its own (nothing is mounted on the
 * host), whose every request after INIT is read and never answered.
 * The task of UID looks a name up in it; the kernel waits out a
 * request that userspace has read uninterruptibly, SIGKILL or not, so
 * a kill(-1) of UID leaves it counted against UID, stuck, for as long
 * as this program lives.
 *
 * Prints "ready" and the stuck tasks' pids on stdout once every one
 * waits for its answer (a fatal signal then leaves it in D state); ends when stdin reaches EOF or on SIGTERM: closing the
 * FUSE descriptors aborts the connections, and the tasks' requests fail
 * (they then die of the SIGKILL a reap left pending, or exit).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuse_init.h"

#define MAX_UIDS 256
#define BUFSZ (1u << 20)

static char buf[BUFSZ];

static void die(const char *what)
{
    fprintf(stderr, "fuse_holder: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Answers INIT; every other request is read and left unanswered. */
static void serve_one(int fd)
{
    ssize_t r = read(fd, buf, sizeof(buf));
    const struct fuse_in_header *in = (const void *)buf;
    fuse_init_reply rep;

    if (r < (ssize_t)sizeof(*in) || in->opcode != FUSE_INIT)
        return;
    fuse_init_answer(in, &rep);
    if (write(fd, &rep, sizeof(rep)) < 0)
        die("INIT reply");
}

/* Whether pid waits for the answer to a request (interruptibly until
 * a signal comes: a fatal one then leaves it in D state). */
static int waits_answer(pid_t pid)
{
    char path[64], w[128];
    ssize_t r;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    r = read(fd, w, sizeof(w) - 1);
    close(fd);
    if (r <= 0)
        return 0;
    w[r] = '\0';
    return strstr(w, "request_wait_answer") != NULL;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    struct sigaction sa = { .sa_handler = on_term };
    int fds[MAX_UIDS];
    pid_t pids[MAX_UIDS];
    char dir[] = "/tmp/xlr-fuse-XXXXXX";
    int n = argc - 1;

    if (n < 1 || n > MAX_UIDS) {
        fprintf(stderr, "usage: fuse_holder UID... (at most %d)\n",
                MAX_UIDS);
        return 2;
    }
    sigaction(SIGTERM, &sa, NULL);
    if (!mkdtemp(dir))
        die("mkdtemp");
    chmod(dir, 0755);
    if (unshare(CLONE_NEWNS) < 0)
        die("unshare(CLONE_NEWNS)");
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        die("making / private");

    for (int i = 0; i < n; i++) {
        uid_t uid = (uid_t)strtoul(argv[i + 1], NULL, 10);
        char sub[64], opts[160], name[128];

        fds[i] = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fds[i] < 0)
            die("/dev/fuse");
        snprintf(sub, sizeof(sub), "%s/%d", dir, i);
        if (mkdir(sub, 0755) < 0)
            die("mkdir");
        snprintf(opts, sizeof(opts),
                 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
                 fds[i]);
        if (mount("xlr-holder", sub, "fuse.xlr-holder", MS_NOSUID | MS_NODEV,
                  opts) < 0)
            die("mount fuse");
        serve_one(fds[i]); /* INIT */
        snprintf(name, sizeof(name), "%s/x", sub);
        pids[i] = fork();
        if (pids[i] < 0)
            die("fork");
        if (pids[i] == 0) {
            struct stat st;

            prctl(PR_SET_PDEATHSIG, SIGKILL);
            /* Not the FUSE descriptors: a task that holds its own
             * connection's keeps it alive (and itself stuck) after we
             * are gone.  Nor our stdout. */
            syscall(SYS_close_range, 0u, ~0u, 0u);
            if (syscall(SYS_setgroups, 0, NULL) < 0 ||
                syscall(SYS_setresgid, uid, uid, uid) < 0 ||
                syscall(SYS_setresuid, uid, uid, uid) < 0)
                _exit(126);
            stat(name, &st); /* LOOKUP: read, never answered */
            _exit(0);
        }
    }
    /* Read each LOOKUP (so that it is in userspace), then its wait. */
    for (int i = 0; i < n; i++) {
        struct pollfd p = { .fd = fds[i], .events = POLLIN };

        if (poll(&p, 1, 10000) != 1) {
            fprintf(stderr, "fuse_holder: no request from uid task %d\n", i);
            return 1;
        }
        serve_one(fds[i]);
        for (int t = 0; !waits_answer(pids[i]); t++) {
            struct timespec ts = { 0, 1000000 };

            if (t > 10000) {
                fprintf(stderr, "fuse_holder: task %d waits for no answer\n",
                        (int)pids[i]);
                return 1;
            }
            nanosleep(&ts, NULL);
        }
    }
    printf("ready");
    for (int i = 0; i < n; i++)
        printf(" %d", (int)pids[i]);
    printf("\n");
    fflush(stdout);

    while (!stop) {
        char c;
        ssize_t r = read(0, &c, 1);

        if (r == 0 || (r < 0 && errno != EINTR))
            break;
    }
    for (int i = 0; i < n; i++)
        close(fds[i]); /* aborts the connection: the requests fail */
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL); /* our children: not reused */
        waitpid(pids[i], NULL, 0);
    }
    /* The mounts go with the namespace; the directories are the host's. */
    for (int i = 0; i < n; i++) {
        char sub[64];

        snprintf(sub, sizeof(sub), "%s/%d", dir, i);
        umount2(sub, MNT_DETACH);
        rmdir(sub);
    }
    rmdir(dir);
    return 0;
}
