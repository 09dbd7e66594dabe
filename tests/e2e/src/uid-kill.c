/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * uid-kill UID PET: the test harness's own cleanup between scenarios, so
 * that a failed scenario cannot leave a fork racer burning the (emulated)
 * CPUs of the next one. Not the code under test: the project's reaper is.
 *
 * The article's tuple: with euid = UID the kill(-1) reaches every task of
 * UID, while ruid = PET and suid = 0 leave UID's tasks no right to kill us.
 * PET must run nothing else. One kill under the tasklist lock ends a fork
 * racer; a few rounds cover tasks that were mid-exec.
 */
#ifndef _GNU_SOURCE /* make analyze passes -D_GNU_SOURCE */
#define _GNU_SOURCE /* setresuid, getresuid */
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    uid_t uid, pet, r, e, s;
    pid_t pid;
    int i, st;

    if (argc != 3) {
        fprintf(stderr, "usage: uid-kill UID PET\n");
        return 2;
    }
    uid = (uid_t)strtoul(argv[1], NULL, 10);
    pet = (uid_t)strtoul(argv[2], NULL, 10);
    if (uid == 0 || pet == 0 || uid == pet)
        return 2;
    for (i = 0; i < 3; i++) {
        pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            if (setresuid(pet, uid, 0) || getresuid(&r, &e, &s) ||
                r != pet || e != uid || s != 0)
                _exit(2);
            kill(-1, SIGKILL);
            _exit(0);
        }
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
            WEXITSTATUS(st))
            return 2;
    }
    return 0;
}
