/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * spawn_probe - what a spawn test starts as its "device model": it tells
 * the test what it can only know from inside, through the descriptor
 * that its command line hands it the way QEMU's does (-add-fd fd=N), so
 * the test also sees that a named descriptor arrives.
 *
 *   spawn_probe wait -add-fd fd=N,set=1 [ARG...]   report, then sleep
 *   spawn_probe exit -add-fd fd=N,set=1 [ARG...]   report, then exit 0
 *   spawn_probe true                               exit 0 at once
 *
 * The report is one line: "pid=P dumpable=D fds=0,1,2,N argc=C\n" and
 * then one line per argument, "arg=...".  Descriptors are listed from
 * /proc/self/fd, or in a chroot (no /proc) with fcntl on 0..4095.
 * Static: it runs the same inside an empty chroot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int named_fd(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "-add-fd") && !strncmp(argv[i + 1], "fd=", 3))
            return atoi(argv[i + 1] + 3);
    return -1;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Appends "0,1,2,..." to buf at n; returns the new length. */
static size_t list_fds(char *buf, size_t n, size_t size)
{
    int fds[4096], num = 0;
    DIR *d = opendir("/proc/self/fd");

    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) && num < 4096) {
            int fd = atoi(de->d_name);
            if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && fd != dirfd(d))
                fds[num++] = fd;
        }
        closedir(d);
        /* Only fds[0..num-1], each set, are sorted: cppcheck's uninitvar
         * is false. */
        // cppcheck-suppress uninitvar
        qsort(fds, (size_t)num, sizeof(int), cmp_int);
    } else {
        for (int i = 0; i < 4096; i++)
            if (fcntl(i, F_GETFD) >= 0)
                fds[num++] = i;
    }
    for (int i = 0; i < num && n < size - 16; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%d", i ? "," : "", fds[i]);
    return n;
}

/* -alloc's blocks, reachable from here. */
static void *alloc_kept;

int main(int argc, char **argv)
{
    char buf[16384];
    size_t n = 0;
    int fd;

    if (argc < 2 || !strcmp(argv[1], "true"))
        return 0;
    fd = named_fd(argc, argv);
    if (fd < 0)
        return 2;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                          "pid=%ld dumpable=%d fds=", (long)getpid(),
                          prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    n = list_fds(buf, n, sizeof(buf));
    /* -oom-write=N: the DM itself tries to set its oom_score_adj to N;
     * reported as oom-write=N:ERRNO (0 when the kernel took it). */
    for (int i = 1; i < argc && n < sizeof(buf) - 64; i++) {
        const char *v = argv[i];
        int ofd, e = 0;

        if (strncmp(v, "-oom-write=", 11))
            continue;
        v += 11;
        ofd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (ofd < 0 || write(ofd, v, strlen(v)) < 0)
            e = errno;
        if (ofd >= 0)
            close(ofd);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, " oom-write=%s:%d", v,
                              e);
    }
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, " argc=%d\n", argc);
    for (int i = 0; i < argc && n < sizeof(buf) - 1; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "arg=%s\n", argv[i]);
    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    if (write(fd, buf, n) != (ssize_t)n)
        return 3;
    close(fd);
    /* -alloc: a DM that allocates without end, 1 MiB at a time. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-alloc"))
            continue;
        /* Each block kept reachable, as a DM's heap. */
        for (;;) {
            void **m = malloc(1 << 20);

            if (m) {
                memset(m, 1, 1 << 20);
                *m = alloc_kept;
                alloc_kept = m;
            }
        }
    }
    if (!strcmp(argv[1], "wait"))
        for (;;)
            pause();
    return 0;
}
