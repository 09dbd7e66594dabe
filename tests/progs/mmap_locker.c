/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * mmap_locker FUSEDEV DIR UID GID - a DM that holds its own mmap lock,
 * for the audit's tests.  Run as root.
 *
 * It mounts a FUSE file system of its own at DIR (through FUSEDEV, a
 * /dev/fuse node) with one file, f, and serves it: every request is
 * answered but READ, which is kept unanswered.  Its child, the "DM",
 * takes UID:GID (without no_new_privs) and opens f twice: once with the
 * page cache, once with FOPEN_DIRECT_IO.  One thread reads the first
 * (the page is locked, waiting for the READ); another maps the second,
 * MAP_PRIVATE: mmap takes the DM's mmap lock for writing, and the
 * direct-I/O mmap waits for that locked page to be dropped from the
 * cache.  From then on every reader of the DM's mmap lock, such as a
 * read of /proc/PID/cmdline, environ or smaps_rollup, blocks.
 *
 * It prints "pid N\n" (the DM's pid) once the DM has started both
 * threads, then serves until killed.  Killed, its /dev/fuse descriptor
 * closes, the connection aborts, the DM's threads wake, and the DM dies
 * with it (PR_SET_PDEATHSIG).  The caller unmounts DIR (MNT_DETACH).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fd_a = -1, fd_b = -1;

static void *reader(void *arg)
{
    char buf[4096];

    (void)arg;
    (void)!read(fd_a, buf, sizeof(buf)); /* never answered */
    return NULL;
}

static void *mapper(void *arg)
{
    (void)arg;
    /* Holds the mmap lock while it waits for the locked page. */
    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd_b, 0);
    return NULL;
}

static void dm(const char *dir, uid_t uid, gid_t gid, int wfd)
{
    pthread_t r, m;
    char line[32];
    int n;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The mount is reached from inside: the test's directory above it
     * is not the DM uid's to traverse. */
    if (chdir(dir) < 0 || syscall(SYS_setgroups, 0, NULL) < 0 ||
        syscall(SYS_setresgid, gid, gid, gid) < 0 ||
        syscall(SYS_setresuid, uid, uid, uid) < 0)
        _exit(2);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* cleared by the change of ids */
    fd_a = open("f", O_RDONLY);
    fd_b = open("f", O_RDONLY);
    if (fd_a < 0 || fd_b < 0)
        _exit(3);
    if (pthread_create(&r, NULL, reader, NULL))
        _exit(4);
    usleep(200000); /* the READ is sent, its page locked */
    if (pthread_create(&m, NULL, mapper, NULL))
        _exit(4);
    usleep(200000);
    n = snprintf(line, sizeof(line), "pid %ld\n", (long)getpid());
    (void)!write(wfd, line, (size_t)n);
    close(wfd);
    for (;;)
        pause();
}

static void reply(int fd, uint64_t unique, int error, const void *body,
                  size_t len)
{
    char buf[sizeof(struct fuse_out_header) + 512];
    struct fuse_out_header h = {
        .len = (uint32_t)(sizeof(h) + len),
        .error = error,
        .unique = unique,
    };

    memcpy(buf, &h, sizeof(h));
    if (len)
        memcpy(buf + sizeof(h), body, len);
    (void)!write(fd, buf, sizeof(h) + len);
}

static void attr_of(uint64_t node, struct fuse_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->ino = node;
    a->nlink = 1;
    a->blksize = 4096;
    if (node == FUSE_ROOT_ID) {
        a->mode = S_IFDIR | 0755;
    } else {
        a->mode = S_IFREG | 0444;
        a->size = 65536;
        a->blocks = 128;
    }
}

static void serve(int fd)
{
    static char buf[1 << 20]; /* at least FUSE_MIN_READ_BUFFER */
    unsigned opens = 0;

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        struct fuse_in_header *in = (void *)buf;
        void *arg = buf + sizeof(*in);

        if (n < 0 && (errno == EINTR || errno == ENOENT))
            continue;
        if (n < (ssize_t)sizeof(*in))
            _exit(0);
        switch (in->opcode) {
        case FUSE_INIT: {
            struct fuse_init_in *ii = arg;
            struct fuse_init_out o = {
                .major = FUSE_KERNEL_VERSION,
                .minor = ii->minor < FUSE_KERNEL_MINOR_VERSION
                             ? ii->minor
                             : FUSE_KERNEL_MINOR_VERSION,
                .max_readahead = ii->max_readahead,
                .max_write = 4096,
                .max_background = 16,
                .congestion_threshold = 12,
            };
            reply(fd, in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_LOOKUP: {
            struct fuse_entry_out e = { .nodeid = 2,
                                        .generation = 1,
                                        .entry_valid = 1000,
                                        .attr_valid = 1000 };
            if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "f")) {
                reply(fd, in->unique, -ENOENT, NULL, 0);
                break;
            }
            attr_of(2, &e.attr);
            reply(fd, in->unique, 0, &e, sizeof(e));
            break;
        }
        case FUSE_GETATTR: {
            struct fuse_attr_out a = { .attr_valid = 1000 };
            attr_of(in->nodeid, &a.attr);
            reply(fd, in->unique, 0, &a, sizeof(a));
            break;
        }
        case FUSE_OPEN: {
            /* The first open reads through the page cache, the second
             * is direct I/O. */
            struct fuse_open_out o = { .fh = ++opens };
            if (opens > 1)
                o.open_flags = FOPEN_DIRECT_IO;
            else
                o.open_flags = FOPEN_KEEP_CACHE;
            reply(fd, in->unique, 0, &o, sizeof(o));
            break;
        }
        case FUSE_READ:
        case FUSE_INTERRUPT:
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
            break; /* never answered, or no answer wanted */
        case FUSE_FLUSH:
        case FUSE_RELEASE: reply(fd, in->unique, 0, NULL, 0); break;
        default: reply(fd, in->unique, -ENOSYS, NULL, 0);
        }
    }
}

int main(int argc, char **argv)
{
    char opts[128];
    int fd, p[2];
    pid_t child;

    if (argc != 5) {
        fprintf(stderr, "usage: mmap_locker FUSEDEV DIR UID GID\n");
        return 1;
    }
    fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    snprintf(opts, sizeof(opts),
             "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
    if (mount("mmap_locker", argv[2], "fuse", MS_NOSUID | MS_NODEV, opts) <
        0) {
        perror("mount");
        return 1;
    }
    if (pipe(p) < 0)
        return 1;
    child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        close(fd);
        close(p[0]);
        dm(argv[2], (uid_t)strtoul(argv[3], NULL, 10),
           (gid_t)strtoul(argv[4], NULL, 10), p[1]);
    }
    close(p[1]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The DM's line, once it has started both threads, from another
     * thread of ours: serving cannot wait for it. */
    if (fork() == 0) {
        char line[64];
        ssize_t n;
        close(fd);
        n = read(p[0], line, sizeof(line));
        if (n > 0)
            (void)!write(1, line, (size_t)n);
        _exit(0);
    }
    close(p[0]);
    serve(fd);
    return 0;
}
