/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fork-racer: what a compromised device model does to outrun kill(pid):
 * each generation forks and exits at once, so its pid is never the same
 * for long and a scan of /proc rarely sees it. Started by the scenarios
 * under a DM's uid (setpriv), exactly as QEMU would run it.
 *
 * Every generation inherits the descriptors it was started with; the
 * scenarios hand it the write end of a FIFO, whose reader sees EOF only
 * when no generation is left alive (zombies hold no descriptors).
 */
#include <unistd.h>

int main(void)
{
    for (;;) {
        /* A failed fork (EAGAIN under RLIMIT_NPROC) is simply retried. */
        if (fork() > 0)
            _exit(0);
    }
}
