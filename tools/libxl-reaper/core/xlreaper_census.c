/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_census.c - which DM uids have tasks, in one pass over /proc.
 *
 * A sweep of the whole range with the kernel's count would cost one
 * probe (two forks) per uid, 32751 of them; one pass over /proc that
 * buckets every task by uid costs a read per task on the host.  The
 * pass is a hint, not a verdict: a fork racer's generations can live
 * shorter than the pass (docs/facts.md F2), so a uid that looks empty may
 * not be.  A uid that looks busy is confirmed by xlreaper_reap, which
 * asks the kernel before it kills.  Zombies are counted apart: a racer
 * leaves a trail of them that a pass sees more easily than the racer,
 * but a uid with only zombies has nothing left to kill.
 *
 * The pass misses a lone fork racer about two times in three on an idle
 * host (measured: 127 of 200 passes), because each generation exits
 * between the readdir that lists it and the read of its status.  But a
 * racer is what allocates pids: the newest pid on the host is most
 * likely its latest child.  So the pass ends with a few samples of the
 * last pid allocated (/proc/loadavg), which caught the same racer in
 * 200 of 200 passes.  Several racers, or other forking on the host,
 * share the samples; the kernel census below leaves nothing to chance.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_internal.h"

typedef struct {
    const xlreaper_config *cfg;
    xlreaper_census_entry *counts;
    unsigned tasks;
} census;

static void count_task(census *c, const xlreaper_task *t)
{
    const uid_t ids[] = { t->ruid, t->euid, t->suid, t->fsuid };
    bool zombie = t->state == 'Z' || t->state == 'X';
    uid_t base = c->cfg->dm_uid_base;
    /* Zeroed for cppcheck, which misses that only seen[0..n-1] is read
     * (a false uninitvar). */
    uint32_t seen[4] = { 0 };
    unsigned n = 0;

    for (unsigned i = 0; i < 4; i++) {
        uint32_t domid;
        bool dup = false;

        if (ids[i] <= base || ids[i] - base > xlreaper_max_domid())
            continue;
        domid = ids[i] - base;
        /* A task with the same DM uid in several slots counts once. */
        for (unsigned j = 0; j < n; j++)
            dup = dup || seen[j] == domid;
        if (dup)
            continue;
        seen[n++] = domid;
        if (zombie)
            c->counts[domid].zombies++;
        else
            c->counts[domid].live++;
    }
}

static int count_visit(void *arg, int procfd, const char *rel,
                       const xlreaper__proc_status *st)
{
    census *c = arg;

    (void)procfd;
    (void)rel;
    c->tasks++;
    count_task(c, &st->t);
    return 0;
}

/* The last pid the kernel allocated (the last field of loadavg). */
static long last_pid(int procfd)
{
    char buf[128], *p;
    ssize_t r;
    int fd;

    fd = openat(procfd, "loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    r = xlreaper__read_all(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    p = strrchr(buf, ' ');
    return p ? strtol(p + 1, NULL, 10) : -1;
}

#define LAST_PID_SAMPLES 16

static int sample_newest(census *c, int procfd)
{
    int rc;

    for (unsigned i = 0; i < LAST_PID_SAMPLES; i++) {
        long pid = last_pid(procfd);

        /* The newest pid, and its parent's, which it may have been
         * moments ago: a racer's previous generation. */
        for (long p = pid; p > 0 && p > pid - 2; p--) {
            char rel[24];
            xlreaper__proc_status st;

            snprintf(rel, sizeof(rel), "%ld", p);
            rc = xlreaper__proc_read_status(procfd, rel, &st);
            if (rc < 0)
                return rc;
            if (rc)
                count_task(c, &st.t);
        }
    }
    return 0;
}

int xlreaper_census(xlreaper_ctx *ctx, xlreaper_census_entry *counts,
                    unsigned *tasks_r)
{
    census c = { .cfg = ctx->cfg, .counts = counts };
    xlreaper__proc_walker wk = { .visit = count_visit, .arg = &c };
    int procfd, rc;
    DIR *d;

    if (!ctx->cfg)
        return XLREAPER_ERROR_INVAL;
    memset(counts, 0,
           (xlreaper_max_domid() + 1) * sizeof(xlreaper_census_entry));
    rc = xlreaper__proc_open(ctx, &procfd, &d);
    if (rc)
        return rc;
    rc = xlreaper__proc_walk(ctx, procfd, d, &wk);
    closedir(d);
    if (!rc && sample_newest(&c, procfd) == XLREAPER__ERROR_TOO_LONG) {
        LOG(ERROR, "/proc: the newest task's status is too long to read");
        rc = XLREAPER_ERROR_FAIL;
    }
    close(procfd);
    if (tasks_r)
        *tasks_r = c.tasks;
    return rc;
}

/* ---------- the kernel's own census ---------- */

/*
 * One probe child asks the kernel about each uid of a run in turn, the
 * way xlreaper_count.c asks about one: it takes the uid as its real uid
 * (keeping saved uid 0, so it can go back) with the soft RLIMIT_NPROC
 * at 0, and an execve("/") at soft limit 1 fails with EAGAIN exactly
 * when the uid has another task, live or zombie.  No task is created:
 * nothing can hold the probe up inside a fork.  While it asks about u
 * it can be signalled by u's tasks (its real uid is u); not ptraced or
 * reniced, since its saved uid is 0 and it is not dumpable.  A probe
 * stopped or killed by one of them only proves u busy: it is marked so,
 * the probe is killed, and a fresh one goes on from the next uid.
 *
 * Each run of CENSUS_CHUNK uids is asked under the global lock, so that
 * a spawn never takes the probe for a leftover of its uid and a kill
 * never counts it among its dead; between runs the lock is let go, so a
 * sweep of the whole range never holds up a spawn or a reap for long:
 * the next run's take leaves a waiter woken by the release its turn
 * (xlreaper_lock.c, Fairness).
 */

/* About 1 to 3 ms of kernel questions a run on this hardware. */
#define CENSUS_CHUNK 256

/* One probe over busy[*done..num); advances *done past every uid it
 * answered, and past the one it was asking when it was stopped, killed
 * or too slow (but see last_stop).  0 or _FAIL. */
static int kprobe_run(xlreaper_ctx *ctx, uid_t first, uint32_t num, bool *busy,
                      uint32_t *done, uint32_t *last_stop)
{
    xlreaper__census_args a = { .first = first + *done, .num = num - *done };
    char out[CENSUS_CHUNK]; /* a byte per uid: '1' busy, '0' not */
    xlreaper__wait w = {
        .mode = XLREAPER__WAIT_PROGRESS,
        .buf = out,
        .size = a.num < sizeof(out) ? a.num : sizeof(out),
        .deadline_us = xlreaper__helper_deadline(ctx),
        /* Progress: the deadline is for one question, not all. */
        .progress_us = (uint64_t)ctx->cfg->reap_timeout_ms * 1000u,
    };
    bool killed;
    int rc, status;

    rc = xlreaper__run_helper_wait(ctx, "the kernel census",
                                   xlreaper__census_child, &a, &w);
    if (rc == XLREAPER__ERROR_NO_TASK) {
        LOG(ERROR, "kernel census: no task can be created for the probe "
                   "(pids or threads exhausted)");
        return XLREAPER_ERROR_FAIL;
    }
    if (rc)
        return rc;
    for (size_t i = 0; i < w.len && *done < num; i++)
        busy[(*done)++] = out[i] == '1';
    killed = w.end != XLREAPER__HELPER_DONE;
    status = w.status;
    if (*done < num && (killed || WIFSIGNALED(status))) {
        /* The signal was sent while the probe's real uid was the one
         * asked about: this one, or the one before if it came as that
         * answer was written, and then that answer said busy already
         * (the sender is a task of it).  So that one earns a second
         * question before it is called busy. */
        if (*done > 0 && busy[*done - 1] && *last_stop != *done) {
            *last_stop = *done;
            LOG(DEBUG,
                "kernel census: the probe was stopped just past "
                "busy uid %lu: asking uid %lu again",
                (unsigned long)(first + *done - 1),
                (unsigned long)(first + *done));
        } else {
            LOG(DEBUG, "kernel census: the probe was %s at uid %lu: busy",
                killed ? "stopped or too slow" : "killed",
                (unsigned long)(first + *done));
            busy[(*done)++] = true;
        }
    } else if (*done < num || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        LOG(ERROR, "kernel census: the probe ended at uid %lu with status %#x",
            (unsigned long)(first + *done), status);
        return XLREAPER_ERROR_FAIL;
    }
    return 0;
}

int xlreaper_census_kernel(xlreaper_ctx *ctx, uint32_t first, uint32_t num,
                           bool *busy_r)
{
    uint32_t done = 0, last_stop = UINT32_MAX;
    uid_t uid;
    int rc = 0;

    if (!num)
        return 0;
    if (!ctx->cfg || xlreaper_dm_ids(ctx, first, &uid, NULL) ||
        num > xlreaper_max_domid() - first + 1) {
        LOG(ERROR, "kernel census of domids %u..+%u: not DM domids", first,
            num);
        return XLREAPER_ERROR_INVAL;
    }
    if (geteuid() != 0) {
        LOG(ERROR, "the kernel census needs root");
        return XLREAPER_ERROR_PERM;
    }
    while (!rc && done < num) {
        uint32_t end = num - done > CENSUS_CHUNK ? done + CENSUS_CHUNK : num;
        xlreaper_lock *lock = NULL;

        if (!ctx->held && (rc = xlreaper_lock_acquire(ctx, &lock)))
            break;
        while (!rc && done < end)
            rc = kprobe_run(ctx, uid, end, busy_r, &done, &last_stop);
        xlreaper_lock_release(lock);
    }
    return rc;
}
