/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fork_racer - a compromised device model that will not be killed by
 * pid: each generation forks and exits at once, so the pid anyone saw
 * is gone by the time they signal it.  A failed fork (RLIMIT_NPROC, or
 * zombies not yet reaped) is simply tried again.
 */
#include <sched.h>
#include <unistd.h>

int main(void)
{
    for (;;) {
        pid_t p = fork();
        if (p > 0)
            _exit(0);
        if (p < 0)
            sched_yield();
    }
}
