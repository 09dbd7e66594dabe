/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_proc_status.c - parsing /proc/<pid>/status: what a real task
 * shows, zombies, pending SIGKILL, a DM's hostile name, and malformed
 * text; and the start time in /proc/<pid>/stat.
 */
#include <stdio.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

static const char sleeping[] =
    "Name:\tqemu-system-i38\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t4167\n"
    "Ngid:\t0\n"
    "Pid:\t4170\n"
    "PPid:\t1\n"
    "TracerPid:\t0\n"
    "Uid:\t131077\t131078\t131079\t131080\n"
    "Gid:\t131077\t131077\t131077\t131077\n"
    "Threads:\t12\n"
    "SigQ:\t0/95000\n"
    "SigPnd:\t0000000000000000\n"
    "ShdPnd:\t0000000000000000\n";

static void test_sleeping_thread(void **state)
{
    xlreaper_task t;
    unsigned threads;
    (void)state;

    assert_int_equal(xlreaper__parse_status(sleeping, strlen(sleeping), &t,
                                            &threads),
                     0);
    assert_string_equal(t.comm, "qemu-system-i38");
    assert_int_equal(t.state, 'S');
    assert_int_equal(t.tgid, 4167);
    assert_int_equal(t.tid, 4170);
    assert_int_equal(t.ppid, 1);
    assert_int_equal(t.ruid, 131077);
    assert_int_equal(t.euid, 131078);
    assert_int_equal(t.suid, 131079);
    assert_int_equal(t.fsuid, 131080);
    assert_int_equal(threads, 12);
    assert_false(t.kill_pending);
}

static void test_kill_pending_bits(void **state)
{
    static const struct {
        const char *sig, *shd;
        bool pending;
    } cases[] = {
        { "0000000000000100", "0000000000000000", true },  /* SIGKILL */
        { "0000000000000000", "0000000000000100", true },
        { "0000000000000080", "0000000000000000", false }, /* SIGFPE */
        { "0000000000000200", "0000000000000000", false }, /* SIGUSR1 */
        { "ffffffffffffffff", "0000000000000000", true },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[512];
        xlreaper_task t;
        unsigned threads;

        snprintf(text, sizeof(text),
                 "Name:\tx\nState:\tR (running)\nTgid:\t5\nPid:\t5\n"
                 "PPid:\t1\nUid:\t1\t1\t1\t1\nSigPnd:\t%s\nShdPnd:\t%s\n",
                 cases[i].sig, cases[i].shd);
        assert_int_equal(
            xlreaper__parse_status(text, strlen(text), &t, &threads), 0);
        if (t.kill_pending != cases[i].pending)
            fail_msg("case %zu: kill_pending %d", i, t.kill_pending);
        assert_int_equal(threads, 1); /* absent: the leader alone */
    }
}

static void test_zombie(void **state)
{
    static const char z[] = "Name:\tfork_racer\nState:\tZ (zombie)\n"
                            "Tgid:\t99\nPid:\t99\nPPid:\t1\n"
                            "Uid:\t7\t7\t7\t7\n";
    xlreaper_task t;
    unsigned threads;
    (void)state;

    assert_int_equal(xlreaper__parse_status(z, strlen(z), &t, &threads), 0);
    assert_int_equal(t.state, 'Z');
}

static void test_hostile_name_made_printable(void **state)
{
    static const char h[] = "Name:\t\x1b[2Jevil\x07\xff\nState:\tS\n"
                            "Tgid:\t9\nPid:\t9\nPPid:\t1\n"
                            "Uid:\t7\t7\t7\t7\n";
    xlreaper_task t;
    unsigned threads;
    (void)state;

    assert_int_equal(xlreaper__parse_status(h, strlen(h), &t, &threads), 0);
    assert_string_equal(t.comm, "?[2Jevil??");
}

static void test_malformed(void **state)
{
    static const char *cases[] = {
        "",
        "Name:\tx\n",
        "Name:\tx\nState:\tS\nTgid:\t1\nPid:\t1\nPPid:\t0\n",
        "Name:\tx\nState:\tS\nTgid:\t1\nPid:\t1\nPPid:\t0\nUid:\t1\t2\t3\n",
        "Name:\tx\nState:\tS\nTgid:\tz\nPid:\t1\nPPid:\t0\nUid:\t1\t1\t1\t1\n",
        "Name:\tx\nState:\t\nTgid:\t1\nPid:\t1\nPPid:\t0\nUid:\t1\t1\t1\t1\n",
        /* One string in two pieces; parenthesised, so that clang does
         * not take it for a missing comma. */
        ("Name:\tx\nState:\tS\nTgid:\t1\nPid:\t1\nPPid:\t0\n"
         "Uid:\t1\t1\t1\t-1\n"),
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        xlreaper_task t;
        unsigned threads;
        if (xlreaper__parse_status(cases[i], strlen(cases[i]), &t,
                                   &threads) != XLREAPER_ERROR_INVAL)
            fail_msg("case %zu accepted", i);
    }
}

/* The text is not NUL-terminated in the scan's buffer: nothing past len
 * may be read. */
static void test_respects_length(void **state)
{
    xlreaper_task t;
    unsigned threads;
    (void)state;

    /* Cut inside the Uid line: the fourth uid is past len. */
    size_t cut = (size_t)(strstr(sleeping, "131080") - sleeping);
    assert_int_equal(xlreaper__parse_status(sleeping, cut, &t, &threads),
                     XLREAPER_ERROR_INVAL);
}

/* A number that runs on past len is read up to len only (strtoull read
 * on, past the buffer: tests/fuzz/regress/proc_status). */
static void test_number_cut_at_length(void **state)
{
    xlreaper_task t;
    unsigned threads;
    (void)state;

    size_t cut = (size_t)(strstr(sleeping, "131080") - sleeping) + 3;
    assert_int_equal(xlreaper__parse_status(sleeping, cut, &t, &threads), 0);
    assert_int_equal(t.fsuid, 131);
}

/* /proc/PID/stat's start time, for the runas window's record. */
static void test_stat_starttime(void **state)
{
    static const struct {
        const char *text;
        int rc;
        unsigned long long start;
    } cases[] = {
        { "4170 (qemu) S 1 4170 4170 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 "
          "12 0 98765 1000 20\n",
          0, 98765 },
        /* A DM names itself: the fields start after the last ')'. */
        { "7 (a) b) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42 1\n", 0,
          42 },
        { "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42\n", 0, 42 },
        { "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42", -1, 0 },
        { "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n", -1, 0 },
        { "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -4 1\n", -1,
          0 },
        { "7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4x 1\n", -1,
          0 },
        { "7 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42 1\n", -1, 0 },
        { "", -1, 0 },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned long long start = 0;
        int rc = xlreaper__parse_stat_starttime(cases[i].text,
                                                strlen(cases[i].text), &start);
        if (rc != cases[i].rc || (!rc && start != cases[i].start))
            fail_msg("case %zu: rc %d start %llu", i, rc, start);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sleeping_thread),
        cmocka_unit_test(test_kill_pending_bits),
        cmocka_unit_test(test_zombie),
        cmocka_unit_test(test_hostile_name_made_printable),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_respects_length),
        cmocka_unit_test(test_number_cut_at_length),
        cmocka_unit_test(test_stat_starttime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
