/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * nursery CMD [ARG...] - runs CMD as a child subreaper would: every
 * orphan of CMD's tree is reparented here and reaped at once, as a
 * healthy init reaps them.  (Some init processes reap slowly, about 2 s
 * per 1,000 zombies, and zombies still count against their uid.)  Ends
 * on SIGTERM, or when CMD's whole tree is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    struct sigaction sa = { .sa_handler = on_term };
    pid_t c;

    if (argc < 2) {
        fprintf(stderr, "usage: nursery CMD [ARG...]\n");
        return 1;
    }
    sigaction(SIGTERM, &sa, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        perror("nursery: PR_SET_CHILD_SUBREAPER");
        return 1;
    }
    c = fork();
    if (c < 0) {
        perror("nursery: fork");
        return 1;
    }
    if (c == 0) {
        sa.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &sa, NULL);
        execvp(argv[1], argv + 1);
        perror("nursery: exec");
        _exit(127);
    }
    while (!stop)
        if (waitpid(-1, NULL, __WALL) < 0 && errno == ECHILD)
            break;
    return 0;
}
