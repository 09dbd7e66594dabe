/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_spawn_threads.c - a threaded caller (libxl callers run several
 * ctxs in threads): while other threads open and close descriptors
 * without close-on-exec, as fast as they can, one thread spawns 1,000
 * times; every child must arrive with 0-2 and its named descriptor and
 * nothing else.  This is the race of the seed mail: "forking for a qemu
 * while another thread is opening privcmd".
 * uid block: base 4300000 (domid 81).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_spawn.h"

#define BASE 4300000ul
#define SPAWNS 1000
#define CHURNERS 2

static atomic_int stop;
static atomic_long opened;

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        int a = open("/dev/null", O_RDWR); /* no close-on-exec */
        int p[2] = { -1, -1 }, s[2] = { -1, -1 };
        int d = a >= 0 ? dup(a) : -1;

        if (pipe(p) < 0)
            p[0] = p[1] = -1;
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) < 0)
            s[0] = s[1] = -1;
        atomic_fetch_add(&opened, 6);
        close(a);
        close(d);
        close(p[0]);
        close(p[1]);
        close(s[0]);
        close(s[1]);
        /* Busy, but not starving the spawner on a 2-core machine. */
        sched_yield();
    }
    return NULL;
}

static void test_no_leak_under_threads(void **state)
{
    char *dir = xlrt_tmpdir();
    xlreaper_ctx *ctx;
    char *prog = xlrt_prog("spawn_probe");
    char fdarg[32], want[64], buf[8192];
    char *argv[] = { prog, (char *)"exit", (char *)"-add-fd", fdarg, NULL };
    xlreaper_spawn_plan *plan;
    pthread_t t[CHURNERS];
    int fds[2], leaks = 0, rc;

    (void)state;
    ctx = xlrt_spawn_ctx(dir, BASE, NULL);
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    snprintf(fdarg, sizeof(fdarg), "fd=%d,set=1", fds[1]);
    snprintf(want, sizeof(want), "fds=0,1,2,%d ", fds[1]);
    assert_int_equal(xlreaper_spawn_plan_new(ctx, 81, prog, argv, &plan), 0);

    for (int i = 0; i < CHURNERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < SPAWNS; i++) {
        pid_t pid;
        int status;
        ssize_t n;

        rc = xlreaper_spawn(ctx, plan, 0, &pid, NULL);
        if (rc) {
            atomic_store(&stop, 1);
            fail_msg("spawn %d: rc %d\n%s", i, rc, xlrt_captured());
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* One write, smaller than PIPE_BUF, made before it exited. */
        n = read(fds[0], buf, sizeof(buf) - 1);
        assert_true(n > 0);
        buf[n] = '\0';
        if (!strstr(buf, want)) {
            if (leaks++ < 5)
                fprintf(stderr, "spawn %d leaked: %.*s\n", i,
                        (int)strcspn(buf, "\n"), buf);
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < CHURNERS; i++)
        pthread_join(t[i], NULL);
    fprintf(stderr,
            "%d spawns while other threads opened %ld "
            "descriptors: %d leaked\n",
            SPAWNS, atomic_load(&opened), leaks);
    assert_int_equal(leaks, 0);
    assert_true(atomic_load(&opened) > 0);

    xlreaper_spawn_plan_free(plan);
    close(fds[0]);
    close(fds[1]);
    free(prog);
    xlreaper_ctx_free(ctx);
    xlrt_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_leak_under_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
