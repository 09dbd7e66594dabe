/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * file-hog: what a compromised device model does to take from the host
 * the files a reap needs: eventfds (no file system, no privilege) until
 * the kernel refuses one with ENFILE, fs.file-max reached; then it holds
 * them all and waits to be killed.  A process that reaches its own
 * RLIMIT_NOFILE first (EMFILE) forks, and the child goes on with a
 * table of its own; so any RLIMIT_NOFILE x RLIMIT_NPROC is enough.
 * Started by the scenarios under a DM's uid (setpriv), in a dom0 whose
 * fs.file-max they lowered (docs/facts.md F20).
 *
 * Prints "enfile N" (the eventfds this process holds, the others' are
 * not counted) once the host refused, and goes on taking every file
 * another task closes; or prints "error ERRNO" and exits 2.  Never
 * exits otherwise.  Like fork-racer, every process inherits the
 * descriptors it was started with.
 */
#ifndef _GNU_SOURCE /* make analyze passes -D_GNU_SOURCE */
#define _GNU_SOURCE /* close_range */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

int main(void)
{
    long held = 0;
    int first = 3, said = 0;

    /* The scenario's descriptors (stdout, the FIFO at 3) stay open. */
    while (fcntl(first, F_GETFD) >= 0)
        first++;
    for (;;) {
        if (eventfd(0, EFD_CLOEXEC) >= 0) {
            held++;
            continue;
        }
        /* Files other tasks close are taken again, so that the host
         * stays full for as long as this runs. */
        if (errno == ENFILE) {
            if (!said) {
                printf("enfile %ld\n", held);
                fflush(stdout);
                said = 1;
            }
            usleep(5000);
            continue;
        }
        if (errno != EMFILE) {
            printf("error %d\n", errno);
            fflush(stdout);
            _exit(2);
        }
        /* The parent keeps what it holds; the child starts afresh.  A
         * failed fork (RLIMIT_NPROC) is retried, holding on. */
        pid_t pid = fork();

        if (pid > 0)
            for (;;)
                pause();
        if (pid < 0) {
            usleep(1000);
            continue;
        }
        close_range((unsigned)first, ~0u, 0);
        held = 0;
    }
}
