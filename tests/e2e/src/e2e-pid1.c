/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * e2e-pid1: PID 1 of the test dom0. Runs the init script (argv[1], default
 * /e2e/dom0-init) and reaps every orphan at once: a zombie still counts
 * against its uid's task count, so a PID 1 that reaps slowly would make a
 * killed fork racer look alive. When the script ends, powers off.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char *script = argc > 1 ? argv[1] : "/e2e/dom0-init";
    char *args[] = { "/bin/sh", script, NULL };
    char *env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
                    "TERM=dumb", NULL };
    pid_t main_pid, pid;
    int st;

    main_pid = fork();
    if (main_pid < 0) {
        perror("e2e-pid1: fork");
        return 1;
    }
    if (main_pid == 0) {
        setsid();
        execve(args[0], args, env);
        perror("e2e-pid1: execve /bin/sh");
        _exit(127);
    }
    for (;;) {
        pid = wait(&st);
        if (pid == main_pid || (pid < 0 && errno == ECHILD))
            break;
    }
    sync();
    reboot(RB_POWER_OFF);
    /* PID 1 must not exit: the kernel would panic instead of powering off. */
    for (;;)
        pause();
}
