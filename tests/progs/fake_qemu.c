/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fake_qemu - stands in for QEMU behind qemu-dm-restrict: prints what it
 * got and exits.
 *
 *   fake_qemu -help      a help text chosen by $FAKE_QEMU_HELP:
 *                        "7.2" or "runas" (Debian 12's 7.2: -runas,
 *                        -chroot), "9.1" or "run-with" (-run-with
 *                        user=, chroot=, and -runas), "10.0" (Debian
 *                        13's 10.0: -run-with only), "none"; "fail"
 *                        exits 1
 *   fake_qemu ARG...     prints "pid=P", "ids=RUID,EUID,SUID:RGID,...",
 *                        "fds=0,1,2,...", one "fd=N:dev:ino:cloexec"
 *                        line for each open descriptor above 2, and one
 *                        "arg=..." line per argument (argv[0] included)
 *                        on stdout, exits 0
 *   FAKE_QEMU_UNLINK=1   before it exits, does what QEMU does when it
 *                        closes a listening UNIX socket at exit
 *                        (socket_listen_cleanup): unlinks the path each
 *                        listening socket above 2 was bound to, and
 *                        prints "unlink=PATH:0" or "unlink=PATH:ERRNO"
 *
 * The help texts are the lines around the uid and chroot options as the
 * real binaries print them: 7.2 from Debian 12's qemu-system-i386
 * 1:7.2+dfsg-7+deb12u18, 10.0 from the strings of Debian 13's
 * xen-qemu-system-i386 (qemu-system-xen 1:10.0.13+ds-0+deb13u1), which
 * has neither -runas (removed in 10.0) nor -chroot (removed in 9.0).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char help_7_2[] =
    "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\n"
    "usage: qemu-system-i386 [options] [disk_image]\n"
    "-nodefaults     don't create default devices\n"
    "-chroot dir     chroot to dir just before starting the VM\n"
    "-runas user     change to user id user just before starting the VM\n"
    "                user can be numeric uid:gid instead\n"
    "-sandbox on[,obsolete=allow|deny][,elevateprivileges=allow|deny|"
    "children]\n"
    "          [,spawn=allow|deny][,resourcecontrol=allow|deny]\n";

static const char help_9_1[] =
    "QEMU emulator version 9.1.0\n"
    "-runas user     change to user id user just before starting the VM\n"
    "                user can be numeric uid:gid instead\n"
    "-run-with [async-teardown=on|off][,chroot=dir][user=username|uid:gid]\n"
    "                Set miscellaneous QEMU process lifecycle options:\n"
    "                async-teardown=on enables asynchronous teardown "
    "(Linux only)\n"
    "                chroot=dir chroot to dir just before starting the VM\n"
    "                user=username switch to the specified user before "
    "starting the VM\n"
    "                user=uid:gid ditto, but use specified user-ID and "
    "group-ID instead\n";

static const char help_10_0[] =
    "QEMU emulator version 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)\n"
    "usage: qemu-system-i386 [options] [disk_image]\n"
    "-nodefaults     don't create default devices\n"
    "-sandbox on[,obsolete=allow|deny][,elevateprivileges=allow|deny|"
    "children]\n"
    "          [,spawn=allow|deny][,resourcecontrol=allow|deny]\n"
    "-trace [[enable=]<pattern>][,events=<file>][,file=<file>]\n"
    "                specify tracing options\n"
    "-plugin [file=]<file>[,<argname>=<argvalue>]\n"
    "                load a plugin\n"
    "-run-with [async-teardown=on|off][,chroot=dir][user=username|uid:gid]\n"
    "                Set miscellaneous QEMU process lifecycle options:\n"
    "                async-teardown=on enables asynchronous teardown "
    "(Linux only)\n"
    "                chroot=dir chroot to dir just before starting the VM\n"
    "                user=username switch to the specified user before "
    "starting the VM\n"
    "                user=uid:gid ditto, but use specified user-ID and "
    "group-ID instead\n"
    "-msg [timestamp[=on|off]][,guest-name=[on|off]]\n"
    "                control error message format\n";

/* QEMU's socket_listen_cleanup for every listening UNIX socket: the path
 * getsockname reports, whatever that path names now. */
static void unlink_listening(void)
{
    for (int fd = 3; fd < 4096; fd++) {
        struct sockaddr_un un;
        socklen_t len = sizeof(un);
        int on = 0;
        socklen_t ol = sizeof(on);

        memset(&un, 0, sizeof(un));
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) < 0 || !on ||
            getsockname(fd, (struct sockaddr *)&un, &len) < 0 ||
            un.sun_family != AF_UNIX ||
            len <= offsetof(struct sockaddr_un, sun_path) || !un.sun_path[0])
            continue;
        printf("unlink=%s:%d\n", un.sun_path,
               unlink(un.sun_path) < 0 ? errno : 0);
    }
}

int main(int argc, char **argv)
{
    uid_t r, e, s;
    gid_t gr, ge, gs;

    if (argc == 2 && !strcmp(argv[1], "-help")) {
        const char *h = getenv("FAKE_QEMU_HELP");
        if (h && !strcmp(h, "fail"))
            return 1;
        if (h && (!strcmp(h, "run-with") || !strcmp(h, "9.1")))
            fputs(help_9_1, stdout);
        else if (h && !strcmp(h, "10.0"))
            fputs(help_10_0, stdout);
        else if (h && !strcmp(h, "none"))
            fputs("QEMU emulator version 2.0\n-name string\n", stdout);
        else
            fputs(help_7_2, stdout);
        return 0;
    }
    getresuid(&r, &e, &s);
    getresgid(&gr, &ge, &gs);
    printf("pid=%ld\n", (long)getpid());
    printf("ids=%lu,%lu,%lu:%lu,%lu,%lu\n", (unsigned long)r, (unsigned long)e,
           (unsigned long)s, (unsigned long)gr, (unsigned long)ge,
           (unsigned long)gs);
    printf("fds=");
    for (int fd = 0, n = 0; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            printf("%s%d", n++ ? "," : "", fd);
    printf("\n");
    /* Which file each is: a test compares it with what it passed. */
    for (int fd = 3; fd < 4096; fd++) {
        struct stat st;
        int fl = fcntl(fd, F_GETFD);
        if (fl >= 0 && fstat(fd, &st) == 0)
            printf("fd=%d:%lu:%lu:%d\n", fd, (unsigned long)st.st_dev,
                   (unsigned long)st.st_ino, !!(fl & FD_CLOEXEC));
    }
    for (int i = 0; i < argc; i++)
        printf("arg=%s\n", argv[i]);
    if (getenv("FAKE_QEMU_UNLINK"))
        unlink_listening();
    return 0;
}
