/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * setid_planter - a device model that tries to leave a way back into its
 * uid and gid: a set-uid and a set-gid copy of a file in a directory
 * anyone can write to, by every system call that can set the bits.
 *
 *   SETID_PLANTER_DIR=DIR setid_planter [ARG...]
 *
 * (the directory comes from the environment, so that it passes through
 * qemu-dm-restrict unchanged; the arguments, a QEMU line, are ignored).
 *
 * Prints one line per attempt, "NAME=0" when the call succeeded or
 * "NAME=ERRNO" (EPERM, ENOSYS, ...) when it failed, and one control
 * line, "plain=0", for a chmod without set-id bits, which must work.
 * Files are DIR/NAME.  Exits 0 once every attempt was made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

static const char *dir;

static void say(const char *name, long r)
{
    const char *e = "0";

    if (r < 0) {
        switch (errno) {
        case EPERM: e = "EPERM"; break;
        case ENOSYS: e = "ENOSYS"; break;
        case EACCES: e = "EACCES"; break;
        case EINVAL: e = "EINVAL"; break;
        case EFAULT: e = "EFAULT"; break;
        default: e = "other"; break;
        }
    }
    printf("%s=%s\n", name, e);
}

/* DIR/name, made plainly (mode 0755) for the chmod family. */
static char *plain_file(const char *name)
{
    char *p;
    int fd;

    if (asprintf(&p, "%s/%s", dir, name) < 0)
        exit(3);
    fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
    if (fd < 0) {
        printf("setup-%s=failed\n", name);
        exit(4);
    }
    close(fd);
    return p;
}

static char *path_of(const char *name)
{
    char *p;

    if (asprintf(&p, "%s/%s", dir, name) < 0)
        exit(3);
    return p;
}

int main(int argc, char **argv)
{
    struct {
        uint64_t flags, mode, resolve;
    } how = { O_CREAT | O_WRONLY, 04755, 0 };
    char params[120] = { 0 };
    char *p;
    int fd;

    (void)argc;
    (void)argv;
    dir = getenv("SETID_PLANTER_DIR");
    if (!dir || !*dir)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);

    p = plain_file("chmod-suid");
    say("chmod-suid", chmod(p, 04755));
    p = plain_file("chmod-sgid");
    say("chmod-sgid", chmod(p, 02755));
    p = plain_file("fchmod-suid");
    fd = open(p, O_RDONLY | O_CLOEXEC);
    say("fchmod-suid", fchmod(fd, 04755));
    close(fd);
    p = plain_file("fchmodat-sgid");
    say("fchmodat-sgid", fchmodat(AT_FDCWD, p, 02755, 0));
    p = plain_file("fchmodat2-suid");
    say("fchmodat2-suid", syscall(__NR_fchmodat2, AT_FDCWD, p, 04755, 0));
    /* The mode's high bits are not the kernel's: only the low 16 count. */
#ifdef __NR_chmod
    p = plain_file("chmod-highbits");
    say("chmod-highbits",
        syscall(__NR_chmod, p, (unsigned long)0x100000000ul | 04755));
#endif

    p = path_of("open-suid");
    fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 04755);
    say("open-suid", fd);
    if (fd >= 0)
        close(fd);
    p = path_of("openat-sgid");
    fd = openat(AT_FDCWD, p, O_CREAT | O_WRONLY | O_CLOEXEC, 02755);
    say("openat-sgid", fd);
    if (fd >= 0)
        close(fd);
    p = path_of("creat-suid");
    fd = creat(p, 04755);
    say("creat-suid", fd);
    if (fd >= 0)
        close(fd);
    p = path_of("mknod-suid");
    say("mknod-suid", mknod(p, S_IFREG | 04755, 0));
    p = path_of("mknodat-sgid");
    say("mknodat-sgid", mknodat(AT_FDCWD, p, S_IFREG | 02755, 0));
    p = path_of("openat2-suid");
    fd = (int)syscall(__NR_openat2, AT_FDCWD, p, &how, sizeof(how));
    say("openat2-suid", fd);
    if (fd >= 0)
        close(fd);
    /* An io_uring OPENAT would carry a mode no filter reads. */
    fd = (int)syscall(__NR_io_uring_setup, 4, params);
    say("io_uring_setup", fd);

    /* The control: a DM may still chmod its own file. */
    p = plain_file("plain");
    say("plain", chmod(p, 0700));
    return 0;
}
