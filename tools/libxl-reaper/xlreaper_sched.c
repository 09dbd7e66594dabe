/*
 * xlreaper_sched.c - the reap's scheduling, on a host full of racers.
 *
 * Measured (bench_lock): with 64 fork racers on 2 CPUs, a reaper at the
 * default priority waits a whole scheduling period (64 runnable tasks
 * of 3 ms) at every wake-up, and so does each task it has just killed
 * before it can finish exiting: 64 reaps took 34 s one after another,
 * and 64 at once missed their deadlines.  The reap's own work is a few
 * hundred microseconds, so:
 *
 *  - while it waits for the lock the calling thread runs at nice -20,
 *    so that it notices a free lock at once, yet 64 waiters polling it
 *    never get in the way of the holder or of what it killed;
 *  - holding the lock it runs SCHED_FIFO at the lowest real-time
 *    priority, until its verdict (bounded by reap_timeout_ms; every
 *    wait in it sleeps), and its killer inherits that across fork;
 *  - once the uid has been killed, every task left with it as its real
 *    uid gets nice -20 (setpriority(PRIO_USER)), so that it finishes
 *    dying ahead of the racers still alive.  A task with SIGKILL
 *    pending runs no user code again: the boost buys nothing but its
 *    exit.
 *
 * Neither is needed for the argument that the kill is complete; both
 * need CAP_SYS_NICE, and without it the reap runs as it is, slower.
 */
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlreaper_internal.h"

void xlreaper__sched_wait_boost(xlreaper__sched_saved *saved)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);

    saved->policy = sched_getscheduler(0);
    saved->boosted = saved->niced = false;
    if (saved->policy != SCHED_OTHER || sched_getparam(0, &saved->param))
        return; /* the caller chose its own: keep it */
    /* Per thread on Linux: PRIO_PROCESS with a tid. */
    errno = 0;
    saved->nice = getpriority(PRIO_PROCESS, (id_t)tid);
    if (errno)
        return;
    saved->niced = setpriority(PRIO_PROCESS, (id_t)tid, -20) == 0;
}

void xlreaper__sched_hold_boost(xlreaper__sched_saved *saved)
{
    struct sched_param rt = { .sched_priority = 1 };

    if (saved->policy != SCHED_OTHER)
        return;
    saved->boosted = sched_setscheduler(0, SCHED_FIFO, &rt) == 0;
}

void xlreaper__sched_restore(const xlreaper__sched_saved *saved)
{
    if (saved->boosted)
        sched_setscheduler(0, saved->policy, &saved->param);
    if (saved->niced)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), saved->nice);
}

void xlreaper__sched_hurry_dying(uid_t uid)
{
    /* Real uid uid: what the kill reached, now dying. */
    setpriority(PRIO_USER, uid, -20);
}
