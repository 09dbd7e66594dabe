/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_xs_bounded.c - libxenstore calls with a deadline
 * (xlreaper__xs_bounded): a fn that returns at once, on a real handle
 * to the fake xenstored, is waited for and leaves its data to the
 * caller; one that blocks past the deadline gives -ETIMEDOUT within the
 * deadline and a margin, and its data is released exactly once, by the
 * worker, after fn returns; a xenstored that is not there still runs fn,
 * with no handle and errno set.
 *
 * No uid is used: the fake xenstored is this suite's child.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "xlr_test.h"
#include "xlrt_daemon.h"
#include "xlreaper_internal.h"
#include "xlreaper_xen.h"

#define DEADLINE_MS 300
#define MARGIN_MS 150

typedef struct {
    int unblock;      /* fn reads a byte from it first, when >= 0 */
    bool had_handle;  /* fn got a handle */
    int open_errno;   /* errno fn saw without one */
    bool saw_domain;  /* /local/domain listed domid 7 */
    atomic_bool done; /* fn is about to return */
} job;

static atomic_int fn_calls, releases;
static atomic_bool released_after_fn;
static int release_pipe[2] = { -1, -1 };

static void fn(struct xs_handle *h, void *data)
{
    job *j = data;
    char c;

    atomic_fetch_add(&fn_calls, 1);
    j->had_handle = h != NULL;
    j->open_errno = h ? 0 : errno;
    if (j->unblock >= 0)
        while (read(j->unblock, &c, 1) < 0 && errno == EINTR)
            ;
    if (h) {
        unsigned n = 0;
        char **ents = xs_directory(h, XBT_NULL, "/local/domain", &n);
        for (unsigned i = 0; ents && i < n; i++)
            if (!strcmp(ents[i], "7"))
                j->saw_domain = true;
        free(ents);
    }
    atomic_store(&j->done, true);
}

static void release(void *data)
{
    job *j = data;

    atomic_store(&released_after_fn, atomic_load(&j->done));
    atomic_fetch_add(&releases, 1);
    free(j);
    if (write(release_pipe[1], "r", 1) != 1)
        abort();
}

static int setup(void **state)
{
    (void)state;
    atomic_store(&fn_calls, 0);
    atomic_store(&releases, 0);
    atomic_store(&released_after_fn, false);
    return pipe(release_pipe);
}

static int teardown(void **state)
{
    (void)state;
    close(release_pipe[0]);
    close(release_pipe[1]);
    return 0;
}

static job *new_job(int unblock)
{
    job *j = calloc(1, sizeof(*j));

    assert_non_null(j);
    j->unblock = unblock;
    return j;
}

static void test_returns_at_once(void **state)
{
    const char *const initial[] = { "7", NULL };
    char *dir = xlrt_tmpdir(), *sock;
    xlrt_xs xs;
    uint64_t t0;
    job *j = new_job(-1);
    int rc;

    (void)state;
    assert_true(asprintf(&sock, "%s/xs.sock", dir) > 0);
    assert_int_equal(xlrt_xs_start(&xs, sock, initial), 0);
    setenv("XENSTORED_PATH", sock, 1);

    t0 = xlreaper__now_us();
    rc = xlreaper__xs_bounded(XS_OPEN_SOCKETONLY | XS_OPEN_READONLY,
                              DEADLINE_MS, fn, j, release);
    assert_int_equal(rc, 0);
    assert_true((xlreaper__now_us() - t0) / 1000 < DEADLINE_MS);
    assert_int_equal(atomic_load(&fn_calls), 1);
    assert_true(atomic_load(&j->done));
    assert_true(j->had_handle);
    assert_true(j->saw_domain);
    /* The caller owns data: never released. */
    assert_int_equal(atomic_load(&releases), 0);

    free(j);
    unsetenv("XENSTORED_PATH");
    xlrt_xs_kill(&xs);
    free(sock);
    xlrt_tmpdir_remove(dir);
}

static void test_blocks_past_deadline(void **state)
{
    struct pollfd pfd = { .events = POLLIN };
    char *dir = xlrt_tmpdir(), *nowhere;
    int unblock[2];
    uint64_t t0, ms;
    job *j;
    char c;
    int rc;

    (void)state;
    assert_int_equal(pipe(unblock), 0);
    assert_true(asprintf(&nowhere, "%s/no-xenstored", dir) > 0);
    setenv("XENSTORED_PATH", nowhere, 1);
    j = new_job(unblock[0]);

    t0 = xlreaper__now_us();
    rc = xlreaper__xs_bounded(XS_OPEN_SOCKETONLY, DEADLINE_MS, fn, j, release);
    ms = (xlreaper__now_us() - t0) / 1000;
    assert_int_equal(rc, -ETIMEDOUT);
    assert_true(ms >= DEADLINE_MS - 1 && ms < DEADLINE_MS + MARGIN_MS);
    /* j is the worker's now, and fn still blocks: nothing released. */
    assert_int_equal(atomic_load(&fn_calls), 1);
    assert_int_equal(atomic_load(&releases), 0);

    assert_int_equal(write(unblock[1], "u", 1), 1);
    pfd.fd = release_pipe[0];
    assert_int_equal(poll(&pfd, 1, 5000), 1);
    assert_int_equal(read(release_pipe[0], &c, 1), 1);
    /* Once, after fn returned; and not again. */
    assert_true(atomic_load(&released_after_fn));
    pfd.fd = release_pipe[0];
    assert_int_equal(poll(&pfd, 1, 100), 0);
    assert_int_equal(atomic_load(&releases), 1);
    assert_int_equal(atomic_load(&fn_calls), 1);

    close(unblock[0]);
    close(unblock[1]);
    unsetenv("XENSTORED_PATH");
    free(nowhere);
    xlrt_tmpdir_remove(dir);
}

static void test_no_xenstored(void **state)
{
    char *dir = xlrt_tmpdir(), *nowhere;
    job *j = new_job(-1);
    int rc;

    (void)state;
    assert_true(asprintf(&nowhere, "%s/no-xenstored", dir) > 0);
    setenv("XENSTORED_PATH", nowhere, 1);

    rc = xlreaper__xs_bounded(XS_OPEN_SOCKETONLY, DEADLINE_MS, fn, j, release);
    assert_int_equal(rc, 0);
    assert_int_equal(atomic_load(&fn_calls), 1);
    assert_false(j->had_handle);
    assert_int_equal(j->open_errno, ENOENT);
    assert_int_equal(atomic_load(&releases), 0);

    free(j);
    unsetenv("XENSTORED_PATH");
    free(nowhere);
    xlrt_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_returns_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocks_past_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_xenstored, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
