/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_sched.c - the reap's scheduling, on a host full of racers.
 *
 * With dozens of fork racers on a few CPUs, a reaper at the default
 * priority waits a whole scheduling period at every wake-up, and so
 * does each task it has just killed before it can finish exiting: one
 * after another the reaps take seconds each, and at once they miss
 * their deadlines (bench_lock; the figures are in bench/RESULTS.md,
 * "Measurements behind the design").  So:
 *
 *  - the calling thread runs at nice -20 for the length of one reap,
 *    lock wait included, so that it notices a free lock at once and is
 *    not held up by the racers; not real-time: with 10,000 tasks to
 *    kill, a real-time reaper reading /proc starved the very tasks it
 *    waited for of the CPU they need to exit (bench_scale).  At nice
 *    -20 it is preferred to a waiter woken by its own release, so its
 *    next round's take of the lock sleeps first (xlreaper_lock.c,
 *    Fairness);
 *  - the killer child runs SCHED_FIFO at the lowest real-time priority
 *    from birth (set by the parent right after the clone, and again by
 *    the killer itself): its work is a few system calls, and its
 *    kill(-1) then reaches the racers without waiting for a slice among
 *    them;
 *  - every task with the uid as its real uid gets nice -20 too
 *    (setpriority(PRIO_USER)), so that it finishes dying ahead of the
 *    racers still alive: by the killer just before its kill(-1), while
 *    its euid is still 0 (after the kill it has no capability left to
 *    raise a priority), and again by the reap for what a later round
 *    finds.  A live DM task so runs at nice -20 for the few
 *    microseconds until the kill (a fork racer's children inherit it,
 *    and die with it); a task with SIGKILL pending runs no user code
 *    again, so the boost buys nothing but its exit.  A renice after
 *    the kill came only after the killer had reported, by when most
 *    reaps had paid a second round for tasks still waiting for a slice
 *    to exit (bench_lock, bench/RESULTS.md).
 *
 * Neither is needed for the argument that the kill is complete; all
 * need CAP_SYS_NICE, and without it the reap runs as it is, slower.
 */
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

void xlreaper__sched_boost(xlreaper__sched_saved *saved)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);

    saved->niced = false;
    if (sched_getscheduler(0) != SCHED_OTHER)
        return; /* the caller chose its own: keep it */
    /* Per thread on Linux: PRIO_PROCESS with a tid. */
    errno = 0;
    saved->nice = getpriority(PRIO_PROCESS, (id_t)tid);
    if (errno)
        return;
    saved->niced = setpriority(PRIO_PROCESS, (id_t)tid, -20) == 0;
}

void xlreaper__sched_killer_started(void (*fn)(int wfd, void *arg), pid_t pid)
{
    struct sched_param rt = { .sched_priority = 1 };

    /* The killer's own call comes only once it has had its first
     * slice, as a new task at the default policy: perf sched timehist
     * of bench-daemon on a loaded 2-CPU host put that wait at p99 10 ms
     * and up to 46 ms, most of a slow reap.  From here it is real-time
     * before it first runs.  Our unreaped child: the pid is its. */
    if (fn == xlreaper__killer_child)
        sched_setscheduler(pid, SCHED_FIFO, &rt);
}

void xlreaper__sched_restore(const xlreaper__sched_saved *saved)
{
    if (saved->niced)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), saved->nice);
}
