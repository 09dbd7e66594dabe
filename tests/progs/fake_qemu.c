/*
 * fake_qemu - stands in for QEMU behind qemu-dm-restrict: prints what it
 * got and exits.
 *
 *   fake_qemu -help      a help text chosen by $FAKE_QEMU_HELP:
 *                        "runas" (QEMU 7.2: -runas, -chroot), "run-with"
 *                        (QEMU 9.1: -run-with user=, chroot=), "none";
 *                        "fail" exits 1
 *   fake_qemu ARG...     prints "pid=P", "ids=RUID,EUID,SUID:RGID,..."
 *                        and one "arg=..." line per argument (argv[0]
 *                        included) on stdout, exits 0
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help_runas[] =
    "QEMU emulator version 7.2.22\n"
    "usage: qemu-system-i386 [options] [disk_image]\n"
    "-chroot dir     chroot to dir just before starting the VM\n"
    "-runas user     change to user id user just before starting the VM\n"
    "                user can be numeric uid:gid instead\n";

static const char help_run_with[] =
    "QEMU emulator version 9.1.0\n"
    "-run-with [async-teardown=on|off][,chroot=dir][user=username|uid:gid]\n"
    "                Set miscellaneous QEMU process lifecycle options:\n"
    "                chroot=dir chroot to dir just before starting the VM\n"
    "                user=username switch to the specified user before\n"
    "                starting the VM\n"
    "-runas user     obsolete: see -run-with user=\n";

int main(int argc, char **argv)
{
    uid_t r, e, s;
    gid_t gr, ge, gs;

    if (argc == 2 && !strcmp(argv[1], "-help")) {
        const char *h = getenv("FAKE_QEMU_HELP");
        if (h && !strcmp(h, "fail"))
            return 1;
        if (h && !strcmp(h, "run-with"))
            fputs(help_run_with, stdout);
        else if (h && !strcmp(h, "none"))
            fputs("QEMU emulator version 2.0\n-name string\n", stdout);
        else
            fputs(help_runas, stdout);
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
    for (int i = 0; i < argc; i++)
        printf("arg=%s\n", argv[i]);
    return 0;
}
