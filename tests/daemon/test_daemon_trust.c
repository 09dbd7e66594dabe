/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_daemon_trust.c - xl-reaperd given a xenstored socket it may not
 * trust (in a directory anyone may write, so anyone could have put it
 * there and answer as xenstored) stops with that reason, exit 1, rather
 * than retrying for ever.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_daemon.h"

/* This suite's uids: 9380000-9389999 (of 9300000-9399999); nothing
 * runs in them. */
#define BASE 9380000u

static void test_untrusted_socket_stops(void **state)
{
    char *dir = xlrt_tmpdir(), *w, *sock, *text, *config;
    xlrt_daemon dm = { 0 };
    xlrt_xs xs = { 0 };
    bool found, stopped;
    int status = -1;

    (void)state;
    assert_true(asprintf(&w, "%s/w", dir) > 0);
    assert_int_equal(mkdir(w, 0777), 0);
    assert_int_equal(chmod(w, 0777), 0);
    assert_true(asprintf(&sock, "%s/xs.sock", w) > 0);
    assert_true(asprintf(&text,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "metrics_file = \"\"\n",
                         BASE, dir) > 0);
    config = xlrt_write_file(dir, "xl-reaper.conf", text);
    assert_int_equal(xlrt_xs_start(&xs, sock, NULL), 0);
    if (xlrt_daemon_start(&dm, dir, config, sock)) {
        xlrt_xs_kill(&xs);
        fail_msg("the daemon did not start");
    }
    found = xlrt_daemon_wait_log(&dm,
                                 "/w is writable by everyone (mode 0777, not "
                                 "sticky); refusing it, stopping",
                                 10000) == 0;
    /* It stops on its own: wait for it, without a signal. */
    for (int i = 0; i < 500; i++) {
        if (waitpid(dm.pid, &status, WNOHANG) == dm.pid) {
            dm.pid = 0;
            break;
        }
        usleep(10000);
    }
    stopped = dm.pid == 0;
    /* Nothing of ours outlives the test, whatever it found: the daemon
     * holds every descriptor the suite had, the test lock's too. */
    xlrt_daemon_dispose(&dm);
    xlrt_xs_kill(&xs);
    xlrt_tmpdir_remove(dir);
    free(w);
    free(sock);
    free(text);
    free(config);
    if (!found)
        fail_msg("no refusal of the socket in the daemon's log");
    if (!stopped)
        fail_msg("the daemon did not stop on its own");
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untrusted_socket_stops),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
