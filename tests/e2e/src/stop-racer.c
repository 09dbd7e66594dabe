/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * stop-racer: a compromised device model that fights its reaper. Each
 * generation first sends SIGSTOP to every process it may signal, that is
 * to everything whose real or saved uid is its uid (a probe or a killer
 * that has entered the uid while the DM still runs), then forks and
 * exits, as fork-racer does. It is what wedged the first libxl patch:
 * a probe stopped this way kept the reaper lock for good (docs/facts.md
 * F8).
 *
 * Every generation inherits the descriptors it was started with; the
 * scenarios hand it the write end of a FIFO, whose reader sees EOF only
 * when no generation is left alive.
 */
#include <signal.h>
#include <unistd.h>

int main(void)
{
    for (;;) {
        /* Its own older generations are stopped too; SIGKILL ends them. */
        kill(-1, SIGSTOP);
        if (fork() > 0)
            _exit(0);
    }
}
