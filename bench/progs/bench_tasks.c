/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_tasks procs|threads N - N sleeping tasks under the caller's ids:
 * this process and N-1 children, or this process and N-1 threads (small
 * stacks).  Writes one byte to fd 3 when all N exist, then sleeps until
 * killed.  The caller sets the ids and a large enough RLIMIT_NPROC.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long n;
    int threads;
    pthread_attr_t attr;

    if (argc != 3 || (strcmp(argv[1], "procs") && strcmp(argv[1], "threads"))) {
        fprintf(stderr, "usage: bench_tasks procs|threads N\n");
        return 2;
    }
    threads = !strcmp(argv[1], "threads");
    n = strtoul(argv[2], NULL, 10);
    if (n < 1 || n > 1000000)
        return 2;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (unsigned long i = 1; i < n; i++) {
        if (threads) {
            pthread_t t;
            if (pthread_create(&t, &attr, sleeper, NULL))
                return 1;
            continue;
        }
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            close(3);
            for (;;)
                pause();
        }
    }
    if (write(3, "r", 1) != 1)
        return 1;
    close(3);
    for (;;)
        pause();
}
