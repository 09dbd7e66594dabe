/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_xs_bounded.c - libxenstore calls with a deadline.
 *
 * libxenstore has no timeout: a xenstored that accepts and never
 * answers blocks xs_read forever (and Debian's crashes on the first
 * request without a hypervisor: docs/facts.md F6).  So the calls run
 * in a thread of their own, with a handle it opens and closes, that
 * the caller waits for at most timeout_ms; on timeout the thread is
 * left to finish (or block) on its own, and whichever of the two lets
 * go last frees the job.  Cancelling it instead could leave
 * libxenstore's mutexes held.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <xenstore.h>

#include "xlreaper_xen.h"

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;      /* fn returned */
    bool abandoned; /* the caller gave up: the worker frees it all */
    unsigned long open_flags;
    xlreaper__xs_fn *fn;
    void *data;
    void (*release)(void *data);
} xs_bounded_job;

static void job_free(xs_bounded_job *j)
{
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->cond);
    free(j);
}

static void *worker(void *arg)
{
    xs_bounded_job *j = arg;
    struct xs_handle *h = xs_open(j->open_flags);
    bool abandoned;

    if (!h && !errno)
        errno = EIO;
    j->fn(h, j->data);
    if (h)
        xs_close(h);
    pthread_mutex_lock(&j->lock);
    j->done = true;
    abandoned = j->abandoned;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    if (abandoned) {
        if (j->release)
            j->release(j->data);
        job_free(j);
    }
    return NULL;
}

int xlreaper__xs_bounded(unsigned long open_flags, unsigned timeout_ms,
                         xlreaper__xs_fn *fn, void *data,
                         void (*release)(void *data))
{
    pthread_condattr_t ca;
    struct timespec deadline;
    pthread_t thr;
    xs_bounded_job *j;
    bool done;
    int r, rc;

    j = calloc(1, sizeof(*j));
    if (!j)
        return -ENOMEM;
    j->open_flags = open_flags;
    j->fn = fn;
    j->data = data;
    j->release = release;
    pthread_mutex_init(&j->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* xlreaper__now_us's */
    pthread_cond_init(&j->cond, &ca);
    pthread_condattr_destroy(&ca);

    r = pthread_create(&thr, NULL, worker, j);
    if (r) {
        job_free(j);
        rc = -r;
        goto out;
    }
    deadline = xlreaper__timespec_us(xlreaper__now_us() +
                                     (uint64_t)timeout_ms * 1000u);
    /* The verdict and the hand-over are one step under the lock: the
     * worker, once it sees abandoned, is the only one left. */
    pthread_mutex_lock(&j->lock);
    r = 0;
    while (!j->done && r != ETIMEDOUT)
        r = pthread_cond_timedwait(&j->cond, &j->lock, &deadline);
    done = j->done;
    if (!done)
        j->abandoned = true;
    pthread_mutex_unlock(&j->lock);
    if (!done) {
        pthread_detach(thr);
        rc = -ETIMEDOUT;
        goto out;
    }
    pthread_join(thr, NULL);
    job_free(j);
    rc = 0;

out:
    return rc;
}
