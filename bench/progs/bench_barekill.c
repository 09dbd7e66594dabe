/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_barekill PET UID - the bare uid kill, nothing else: one
 * setresuid(PET, UID, 0) and one kill(-1, SIGKILL), as the article and
 * the reaper's killer child do, without lock, checks or verification.
 * The baseline that the reaper's verified kill is measured against.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (syscall(SYS_setresuid, strtoul(argv[1], NULL, 10),
                strtoul(argv[2], NULL, 10), 0))
        return 1;
    kill(-1, SIGKILL);
    return 0;
}
