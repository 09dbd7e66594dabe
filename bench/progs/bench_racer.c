/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_racer [plain|pgid] - the fork racer of the benchmarks: each
 * generation forks and exits at once (as tests/progs/fork_racer.c), and
 * counts its births in a shared page the benchmark passes as fd 3, so
 * that the benchmark knows how many tasks the racer produced while a
 * kill method worked on it.  "pgid" also moves every child into a
 * process group of its own, as the article's racer does to escape
 * kill(-pgid).  The leader makes its own group first, so that the
 * benchmark knows the group to kill: pgid = the leader's pid.
 */
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static uint64_t dummy;
    int hop = argc > 1 && !strcmp(argv[1], "pgid");
    uint64_t *births = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                            3, 0);

    if (births == MAP_FAILED)
        births = &dummy;
    close(3);
    setpgid(0, 0);
    for (;;) {
        pid_t p = fork();
        if (p > 0) {
            __atomic_fetch_add(births, 1, __ATOMIC_RELAXED);
            _exit(0);
        }
        if (p == 0) {
            if (hop)
                setpgid(0, 0);
            continue;
        }
        sched_yield(); /* EAGAIN: try again */
    }
}
