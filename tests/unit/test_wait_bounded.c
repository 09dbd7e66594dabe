/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_wait_bounded.c - the one bounded wait for a child
 * (xlreaper__wait_bounded): real children of this suite, each of which
 * misbehaves in one way, and the verdict and the time it took.  A child
 * that never writes, or that closes its pipe and lives on, is killed at
 * the deadline and reaped, and the wait returns within the deadline and
 * a small margin; a child that writes and exits is done, with what it
 * wrote; a stopped child is killed at once.  Every case is run as a
 * helper's report (read once the child has exited) and as a program's
 * large output (read as it comes); the kernel census's progress is
 * read at each look for a stop.
 *
 * No uid is used: the children are this suite's, as root or not.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

/* The deadline the cases give, and how far past it a wait may return:
 * a kill and a reap are well under a millisecond, the margin is for a
 * loaded 2-CPU host. */
#define DEADLINE_MS 300
#define MARGIN_MS 150

typedef enum {
    CHILD_SILENT,      /* keeps its end open, never writes */
    CHILD_WRITES,      /* writes "hello", exits 3 */
    CHILD_CLOSES,      /* closes its end, lives on */
    CHILD_STOPS,       /* stops itself */
    CHILD_FLOODS,      /* writes without end */
    CHILD_TRICKLES,    /* a byte every 60 ms, 8 of them, then exits 0 */
    CHILD_COUNTS,      /* a byte every 200 us, COUNT_BYTES, then exits 0 */
    CHILD_FORKS_HOLDER /* exits 0, its own child keeps the pipe open */
} child_kind;

/* The kernel census's pace: a byte a uid, a uid in tens of us. */
#define COUNT_BYTES 200

static xlreaper_ctx *ctx;

static int suite_setup(void **state)
{
    (void)state;
    return xlreaper_ctx_alloc(&ctx, xlrt_capture_logger());
}

static int suite_teardown(void **state)
{
    (void)state;
    xlreaper_ctx_free(ctx);
    return 0;
}

static uint64_t ms_since(uint64_t start_us)
{
    return (xlreaper__now_us() - start_us) / 1000;
}

static void __attribute__((noreturn)) child_main(child_kind kind, int wfd)
{
    static char flood[4096];
    struct timespec tick = { 0, 60 * 1000 * 1000 };

    switch (kind) {
    case CHILD_SILENT: break;
    case CHILD_WRITES:
        if (write(wfd, "hello", 5) != 5)
            _exit(100);
        _exit(3);
    case CHILD_CLOSES: close(wfd); break;
    case CHILD_STOPS: raise(SIGSTOP); break;
    case CHILD_FLOODS:
        for (;;)
            if (write(wfd, flood, sizeof(flood)) < 0)
                _exit(100);
    case CHILD_TRICKLES:
        for (int i = 0; i < 8; i++) {
            nanosleep(&tick, NULL);
            if (write(wfd, "x", 1) != 1)
                _exit(100);
        }
        _exit(0);
    case CHILD_COUNTS:
        for (int i = 0; i < COUNT_BYTES; i++) {
            struct timespec t = { 0, 200 * 1000 };

            nanosleep(&t, NULL);
            if (write(wfd, "0", 1) != 1)
                _exit(100);
        }
        _exit(0);
    case CHILD_FORKS_HOLDER:
        /* The holder outlives us by 2 s: it is no child of the suite,
         * and ends by itself. */
        if (fork() == 0) {
            sleep(2);
            _exit(0);
        }
        _exit(0);
    }
    for (;;)
        pause();
}

/* A child of the given kind, with the read end of its pipe in *rfd_r. */
static pid_t start(child_kind kind, int *rfd_r)
{
    int fds[2];
    pid_t pid;

    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_main(kind, fds[1]);
    }
    close(fds[1]);
    *rfd_r = fds[0];
    return pid;
}

/* Runs the wait on a fresh child; *ms_r how long it took. */
static int wait_for(child_kind kind, char *buf, size_t size,
                    xlreaper__wait_mode mode, uint64_t progress_us,
                    xlreaper__wait *w, uint64_t *ms_r)
{
    uint64_t t0;
    int rc;

    *w = (xlreaper__wait){
        .mode = mode, .buf = buf, .size = size, .progress_us = progress_us
    };
    w->pid = start(kind, &w->rfd);
    t0 = xlreaper__now_us();
    w->deadline_us = t0 + DEADLINE_MS * 1000u;
    rc = xlreaper__wait_bounded(ctx, w);
    *ms_r = ms_since(t0);
    close(w->rfd);
    return rc;
}

/* The child is gone: reaped by the wait, nothing left to wait for. */
static void assert_reaped(pid_t pid)
{
    errno = 0;
    assert_int_equal(waitpid(pid, NULL, WNOHANG | __WALL), -1);
    assert_int_equal(errno, ECHILD);
}

/* The two ways the wait reads: a helper's report, read once it has
 * exited, and a program's output of more than a pipe, read as it
 * comes. */
static const size_t sizes[] = { sizeof(xlreaper__child_report), 1u << 20 };
static const xlreaper__wait_mode size_modes[] = { XLREAPER__WAIT_REPORT,
                                                  XLREAPER__WAIT_PROGRAM };

static void killed_at_deadline(child_kind kind)
{
    char *buf = malloc(sizes[1]);

    assert_non_null(buf);
    for (unsigned i = 0; i < 2; i++) {
        xlreaper__wait w;
        uint64_t ms;

        assert_int_equal(
            wait_for(kind, buf, sizes[i], size_modes[i], 0, &w, &ms), 0);
        print_message("kind %d, buffer %zu: timed out after %llu ms\n", kind,
                      sizes[i], (unsigned long long)ms);
        assert_int_equal(w.end, XLREAPER__HELPER_TIMEOUT);
        assert_true(ms >= DEADLINE_MS);
        assert_true(ms <= DEADLINE_MS + MARGIN_MS);
        assert_true(w.status != -1);
        assert_true(WIFSIGNALED(w.status));
        assert_int_equal(WTERMSIG(w.status), SIGKILL);
        assert_int_equal(w.len, 0);
        assert_reaped(w.pid);
    }
    free(buf);
}

/* Never writes, never exits: killed at the deadline, and said so. */
static void test_silent_child_times_out(void **state)
{
    (void)state;
    killed_at_deadline(CHILD_SILENT);
}

/* The end of its output is not the end of the wait: a child that
 * closes its pipe and lives on is still killed at the deadline. */
static void test_closed_pipe_still_bounded(void **state)
{
    (void)state;
    killed_at_deadline(CHILD_CLOSES);
}

/* Writes and exits: done, with what it wrote and its own status. */
static void test_writer_done(void **state)
{
    char *buf = malloc(sizes[1]);

    (void)state;
    assert_non_null(buf);
    for (unsigned i = 0; i < 2; i++) {
        xlreaper__wait w;
        uint64_t ms;

        assert_int_equal(
            wait_for(CHILD_WRITES, buf, sizes[i], size_modes[i], 0, &w, &ms),
            0);
        print_message("buffer %zu: done after %llu ms\n", sizes[i],
                      (unsigned long long)ms);
        assert_int_equal(w.end, XLREAPER__HELPER_DONE);
        assert_true(ms < DEADLINE_MS);
        assert_int_equal(w.len, 5);
        assert_memory_equal(buf, "hello", 5);
        assert_true(WIFEXITED(w.status));
        assert_int_equal(WEXITSTATUS(w.status), 3);
        assert_reaped(w.pid);
    }
    free(buf);
}

/* Stopped: killed at once (only a task of its uid could have stopped a
 * helper, reporting at its exit or as it goes), not left to hold the
 * wait until the deadline. */
static void test_stopped_child_killed(void **state)
{
    char buf[64];

    (void)state;
    for (unsigned i = 0; i < 2; i++) {
        size_t size = i ? sizeof(buf) : sizeof(xlreaper__child_report);
        xlreaper__wait_mode mode =
            i ? XLREAPER__WAIT_PROGRESS : XLREAPER__WAIT_REPORT;
        xlreaper__wait w;
        uint64_t ms;

        assert_int_equal(wait_for(CHILD_STOPS, buf, size, mode, 0, &w, &ms),
                         0);
        assert_int_equal(w.end, XLREAPER__HELPER_STOPPED);
        assert_true(ms < DEADLINE_MS);
        assert_true(WIFSIGNALED(w.status));
        assert_int_equal(WTERMSIG(w.status), SIGKILL);
        assert_reaped(w.pid);
    }
}

static void *continue_later(void *arg)
{
    struct timespec t = { 0, 100 * 1000 * 1000 };

    nanosleep(&t, NULL);
    kill((pid_t)(intptr_t)arg, SIGCONT);
    return NULL;
}

/* XLREAPER__WAIT_PROGRAM: a stop is waited out (QEMU -help under ^Z),
 * and the child's end is its own. */
static void test_stop_waited_out(void **state)
{
    xlreaper__wait w = { .mode = XLREAPER__WAIT_PROGRAM, .size = 0 };
    pthread_t t;
    int fds[2];

    (void)state;
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    w.pid = fork();
    assert_true(w.pid >= 0);
    if (w.pid == 0) {
        raise(SIGSTOP);
        _exit(4);
    }
    close(fds[1]);
    w.rfd = fds[0];
    w.deadline_us = xlreaper__now_us() + 2000 * 1000u;
    assert_int_equal(
        pthread_create(&t, NULL, continue_later, (void *)(intptr_t)w.pid), 0);
    assert_int_equal(xlreaper__wait_bounded(ctx, &w), 0);
    pthread_join(t, NULL);
    close(fds[0]);
    assert_int_equal(w.end, XLREAPER__HELPER_DONE);
    assert_true(WIFEXITED(w.status));
    assert_int_equal(WEXITSTATUS(w.status), 4);
    assert_reaped(w.pid);
}

/* XLREAPER__WAIT_PROGRAM: more output than asked for is refused at
 * once, not read until the deadline. */
static void test_flood_overflows(void **state)
{
    char buf[1 << 16];
    xlreaper__wait w;
    uint64_t ms;

    (void)state;
    assert_int_equal(wait_for(CHILD_FLOODS, buf, sizeof(buf),
                              XLREAPER__WAIT_PROGRAM, 0, &w, &ms),
                     0);
    assert_int_equal(w.end, XLREAPER__HELPER_OVERFLOW);
    assert_int_equal(w.len, sizeof(buf));
    assert_true(ms < DEADLINE_MS);
    assert_true(WIFSIGNALED(w.status));
    assert_reaped(w.pid);
}

/* _PROGRESS: a child that keeps answering outlives the first deadline
 * (the kernel census asks a question a uid); as a helper's report (its
 * progress_us ignored), the same child is killed at the deadline. */
static void test_progress_moves_deadline(void **state)
{
    char buf[16];
    xlreaper__wait w;
    uint64_t ms;

    (void)state;
    assert_int_equal(wait_for(CHILD_TRICKLES, buf, sizeof(buf),
                              XLREAPER__WAIT_PROGRESS, DEADLINE_MS * 1000u, &w,
                              &ms),
                     0);
    print_message("trickle with progress: done after %llu ms\n",
                  (unsigned long long)ms);
    assert_int_equal(w.end, XLREAPER__HELPER_DONE);
    assert_int_equal(w.len, 8);
    assert_true(ms > DEADLINE_MS);
    assert_true(WIFEXITED(w.status));
    assert_int_equal(WEXITSTATUS(w.status), 0);

    assert_int_equal(wait_for(CHILD_TRICKLES, buf, sizeof(buf),
                              XLREAPER__WAIT_REPORT, DEADLINE_MS * 1000u, &w,
                              &ms),
                     0);
    assert_int_equal(w.end, XLREAPER__HELPER_TIMEOUT);
    assert_true(ms <= DEADLINE_MS + MARGIN_MS);
    assert_true(w.len < 8);
    assert_reaped(w.pid);
}

/* progress_us with a small buffer (the kernel census's run): every byte
 * is read, but the wait wakes at its looks for a stop and at the exit,
 * not once a byte (it did, and a census of the whole range spent a
 * third of its system calls on it). */
static void test_progress_read_lazily(void **state)
{
    char buf[256];
    struct rusage before, after;
    xlreaper__wait w;
    uint64_t ms;
    long woke;

    (void)state;
    assert_int_equal(getrusage(RUSAGE_THREAD, &before), 0);
    assert_int_equal(wait_for(CHILD_COUNTS, buf, sizeof(buf),
                              XLREAPER__WAIT_PROGRESS, DEADLINE_MS * 1000u, &w,
                              &ms),
                     0);
    assert_int_equal(getrusage(RUSAGE_THREAD, &after), 0);
    woke = after.ru_nvcsw - before.ru_nvcsw;
    print_message("%d bytes in %llu ms: the wait slept %ld times\n",
                  COUNT_BYTES, (unsigned long long)ms, woke);
    assert_int_equal(w.end, XLREAPER__HELPER_DONE);
    assert_int_equal(w.len, COUNT_BYTES);
    for (unsigned i = 0; i < COUNT_BYTES; i++)
        assert_int_equal(buf[i], '0');
    assert_true(WIFEXITED(w.status));
    assert_int_equal(WEXITSTATUS(w.status), 0);
    /* Its looks 1, 2, 4, 8 and then 16 ms apart, for some 50 ms (more
     * on a loaded host); once a byte would be COUNT_BYTES. */
    if (woke >= COUNT_BYTES / 4)
        fail_msg("woke %ld times for %d bytes", woke, COUNT_BYTES);
}

/* XLREAPER__WAIT_EXEC (a child that execs): the wait ends at EOF
 * and leaves the child to the caller, unreaped; a child that never
 * reaches EOF is killed and reaped at the deadline. */
static void test_until_eof(void **state)
{
    xlreaper__child_report rep;
    xlreaper__wait w;
    uint64_t ms;
    int status;

    (void)state;
    assert_int_equal(wait_for(CHILD_CLOSES, (char *)&rep, sizeof(rep),
                              XLREAPER__WAIT_EXEC, 0, &w, &ms),
                     0);
    assert_int_equal(w.end, XLREAPER__HELPER_DONE);
    assert_int_equal(w.status, -1);
    assert_true(ms < DEADLINE_MS);
    assert_true(xlrt_alive(w.pid));
    kill(w.pid, SIGKILL); /* our unreaped child */
    assert_int_equal(waitpid(w.pid, &status, 0), w.pid);

    assert_int_equal(wait_for(CHILD_SILENT, (char *)&rep, sizeof(rep),
                              XLREAPER__WAIT_EXEC, 0, &w, &ms),
                     0);
    assert_int_equal(w.end, XLREAPER__HELPER_TIMEOUT);
    assert_true(ms <= DEADLINE_MS + MARGIN_MS);
    assert_true(WIFSIGNALED(w.status));
    assert_reaped(w.pid);
}

/* A child that exits while another process holds its pipe: the exit is
 * reaped, and the wait for the rest of the output still ends at the
 * deadline (no kill: the pid is no longer ours). */
static void test_exited_holder_bounded(void **state)
{
    char *buf = malloc(sizes[1]);

    (void)state;
    assert_non_null(buf);
    for (unsigned i = 0; i < 2; i++) {
        xlreaper__wait w;
        uint64_t ms;

        assert_int_equal(wait_for(CHILD_FORKS_HOLDER, buf, sizes[i],
                                  size_modes[i], 0, &w, &ms),
                         0);
        assert_int_equal(w.end, XLREAPER__HELPER_TIMEOUT);
        assert_true(ms >= DEADLINE_MS);
        assert_true(ms <= DEADLINE_MS + MARGIN_MS);
        assert_true(WIFEXITED(w.status));
        assert_int_equal(WEXITSTATUS(w.status), 0);
        assert_reaped(w.pid);
    }
    free(buf);
}

/* XLREAPER__WAIT_KILL (the audit's reader): killed at once, not at the
 * deadline, and reaped. */
static void test_kill_now(void **state)
{
    xlreaper__wait w;
    uint64_t ms;

    (void)state;
    assert_int_equal(
        wait_for(CHILD_SILENT, NULL, 0, XLREAPER__WAIT_KILL, 0, &w, &ms), 0);
    assert_int_equal(w.end, XLREAPER__HELPER_DONE);
    assert_true(ms < DEADLINE_MS / 2);
    assert_true(WIFSIGNALED(w.status));
    assert_int_equal(WTERMSIG(w.status), SIGKILL);
    assert_reaped(w.pid);
}

/* No mode: refused, and the child is not left behind. */
static void test_no_mode_refused(void **state)
{
    char buf[16];
    xlreaper__wait w;
    uint64_t ms;

    (void)state;
    assert_int_equal(wait_for(CHILD_SILENT, buf, sizeof(buf), 0, 0, &w, &ms),
                     XLREAPER_ERROR_INVAL);
    assert_true(ms < DEADLINE_MS);
    assert_reaped(w.pid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_child_times_out),
        cmocka_unit_test(test_closed_pipe_still_bounded),
        cmocka_unit_test(test_writer_done),
        cmocka_unit_test(test_stopped_child_killed),
        cmocka_unit_test(test_stop_waited_out),
        cmocka_unit_test(test_flood_overflows),
        cmocka_unit_test(test_progress_moves_deadline),
        cmocka_unit_test(test_progress_read_lazily),
        cmocka_unit_test(test_until_eof),
        cmocka_unit_test(test_exited_holder_bounded),
        cmocka_unit_test(test_kill_now),
        cmocka_unit_test(test_no_mode_refused),
    };

    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
