/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_proc_status.c - parsing /proc/<pid>/status: what a real task
 * shows, zombies, pending SIGKILL, a DM's hostile name, and malformed
 * text; the one reader of a status file and the one walk over /proc
 * (xlreaper__proc_read_status, xlreaper__proc_walk), on this process
 * and on a /proc made of files; and the start time in /proc/<pid>/stat.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---------- the reader and the walk ---------- */

/* A status of a task in a fake /proc: uid, threads, and pad bytes of
 * filler between PPid: and Uid: (a long line, as many groups make). */
static void fake_status(const char *dir, const char *rel, unsigned uid,
                        unsigned threads, size_t pad)
{
    char path[512], head[256], tail[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/%s/status", dir, rel);
    f = fopen(path, "w");
    assert_non_null(f);
    snprintf(head, sizeof(head),
             "Name:\tfake\nState:\tS (sleeping)\nTgid:\t7\nPid:\t7\n"
             "PPid:\t1\n");
    snprintf(tail, sizeof(tail), "Uid:\t%u\t%u\t%u\t%u\nThreads:\t%u\n", uid,
             uid, uid, uid, threads);
    fputs(head, f);
    if (pad) {
        fputs("Groups:\t", f);
        for (size_t i = 0; i < pad; i++)
            fputc(i % 2 ? ' ' : '9', f);
        fputc('\n', f);
    }
    fputs(tail, f);
    assert_int_equal(fclose(f), 0);
}

/* The pad that makes fake_status exactly len bytes long. */
static size_t pad_for(size_t len, unsigned uid, unsigned threads)
{
    char tail[256];
    size_t fixed = strlen("Name:\tfake\nState:\tS (sleeping)\nTgid:\t7\n"
                          "Pid:\t7\nPPid:\t1\nGroups:\t\n");

    snprintf(tail, sizeof(tail), "Uid:\t%u\t%u\t%u\t%u\nThreads:\t%u\n", uid,
             uid, uid, uid, threads);
    return len - fixed - strlen(tail);
}

static void test_read_own_status(void **state)
{
    xlreaper__proc_status st;
    char rel[32];
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    (void)state;

    assert_true(procfd >= 0);
    snprintf(rel, sizeof(rel), "%ld", (long)getpid());
    assert_int_equal(xlreaper__proc_read_status(procfd, rel, &st), 1);
    assert_int_equal(st.t.tgid, getpid());
    assert_int_equal(st.t.ruid, getuid());
    assert_int_equal(st.threads, 1);
    assert_int_equal(st.len, strlen(st.text));
    /* A task that is gone is 0, not an error. */
    assert_int_equal(xlreaper__proc_read_status(procfd, "0", &st), 0);
    close(procfd);
}

/* A status that fills the buffer exactly is read whole; one byte more
 * is an error, not a text cut before its Uid: line. */
static void test_read_too_long(void **state)
{
    char *dir = xlrt_tmpdir();
    xlreaper__proc_status st;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    (void)state;

    assert_true(dfd >= 0);
    fake_status(dir, "10", 200123, 1,
                pad_for(XLREAPER__STATUS_MAX, 200123, 1));
    fake_status(dir, "11", 200123, 1,
                pad_for(XLREAPER__STATUS_MAX + 1, 200123, 1));
    assert_int_equal(xlreaper__proc_read_status(dfd, "10", &st), 1);
    assert_int_equal(st.len, XLREAPER__STATUS_MAX);
    assert_int_equal(st.t.ruid, 200123);
    assert_int_equal(xlreaper__proc_read_status(dfd, "11", &st),
                     XLREAPER__ERROR_TOO_LONG);
    close(dfd);
    xlrt_tmpdir_remove(dir);
}

typedef struct {
    char seen[8][32];
    unsigned num;
    const char *stop_at; /* a rel whose visit ends the walk */
} walk_log;

static int log_visit(void *arg, int procfd, const char *rel,
                     const xlreaper__proc_status *st)
{
    walk_log *l = arg;

    (void)procfd;
    assert_true(l->num < 8);
    snprintf(l->seen[l->num++], sizeof(l->seen[0]), "%s:%u", rel,
             (unsigned)st->t.ruid);
    return l->stop_at && !strcmp(rel, l->stop_at) ? XLREAPER__PROC_STOP : 0;
}

static bool skip_30(void *arg, int procfd, const char *pid)
{
    (void)arg;
    (void)procfd;
    return !strcmp(pid, "30");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

static int walk_fake(const char *dir, xlreaper__proc_walker *wk)
{
    xlreaper_ctx *ctx = NULL;
    int dfd, rc;
    DIR *d;

    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_capture_logger()), 0);
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dfd >= 0);
    d = opendir(dir);
    assert_non_null(d);
    rc = xlreaper__proc_walk(ctx, dfd, d, wk);
    closedir(d);
    close(dfd);
    xlreaper_ctx_free(ctx);
    return rc;
}

/* A single-threaded process is its leader; a multi-threaded one is each
 * of its threads; what is not a pid, or skipped, is not read. */
static void test_walk(void **state)
{
    char *dir = xlrt_tmpdir();
    walk_log l = { .num = 0 };
    xlreaper__proc_walker wk = { .skip_pid = skip_30,
                                 .visit = log_visit,
                                 .arg = &l };
    char path[512];
    (void)state;

    fake_status(dir, "10", 200101, 1, 0);
    fake_status(dir, "20", 200102, 2, 0);
    snprintf(path, sizeof(path), "%s/20/task", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    fake_status(dir, "20/task/20", 200102, 2, 0);
    fake_status(dir, "20/task/21", 200103, 2, 0);
    fake_status(dir, "30", 200104, 1, 0);
    fake_status(dir, "self", 200105, 1, 0);
    assert_int_equal(walk_fake(dir, &wk), 0);
    qsort(l.seen, l.num, sizeof(l.seen[0]), cmp_str);
    assert_int_equal(l.num, 3);
    assert_string_equal(l.seen[0], "10:200101");
    assert_string_equal(l.seen[1], "20/task/20:200102");
    assert_string_equal(l.seen[2], "20/task/21:200103");

    /* A visit may end the walk: no error, nothing after it. */
    l.num = 0;
    l.stop_at = "10";
    wk.skip_pid = NULL;
    fake_status(dir, "9", 200106, 1, 0);
    assert_int_equal(walk_fake(dir, &wk), 0);
    assert_true(l.num >= 1);
    assert_string_equal(l.seen[l.num - 1], "10:200101");

    /* A thread's status too long to read fails the walk. */
    l.num = 0;
    l.stop_at = NULL;
    fake_status(dir, "20/task/22", 200107, 2,
                pad_for(XLREAPER__STATUS_MAX + 1, 200107, 2));
    xlrt_capture_reset();
    assert_int_equal(walk_fake(dir, &wk), XLREAPER_ERROR_FAIL);
    assert_logged("/proc/20: a status longer than 8192 bytes");
    xlrt_tmpdir_remove(dir);
}

/* Where a task waits comes from wchan alone, never its kernel stack
 * (whose read can wait on the task): "0" and no file say nothing. */
static void test_wchan_only(void **state)
{
    char *dir = xlrt_tmpdir();
    char buf[32];
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *f;
    (void)state;

    assert_true(dfd >= 0);
    assert_int_equal(mkdirat(dfd, "5", 0755), 0);
    f = xlrt_write_file(dir, "5/stack",
                        "[<0>] request_wait_answer+0x1d8/0x280\n");
    free(f);
    xlreaper__read_wchan(dfd, "5", buf, sizeof(buf));
    assert_string_equal(buf, ""); /* no wchan file */
    f = xlrt_write_file(dir, "5/wchan", "0");
    free(f);
    xlreaper__read_wchan(dfd, "5", buf, sizeof(buf));
    assert_string_equal(buf, "");
    f = xlrt_write_file(dir, "5/wchan", "fuse_\x1b[2Jwait");
    free(f);
    xlreaper__read_wchan(dfd, "5", buf, sizeof(buf));
    assert_string_equal(buf, "fuse_?[2Jwait");
    f = xlrt_write_file(dir, "5/wchan", "a_kernel_function_of_a_long_name");
    free(f);
    xlreaper__read_wchan(dfd, "5", buf, 8);
    assert_string_equal(buf, "a_kerne");
    close(dfd);
    xlrt_tmpdir_remove(dir);
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
        cmocka_unit_test(test_read_own_status),
        cmocka_unit_test(test_read_too_long),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_wchan_only),
        cmocka_unit_test(test_stat_starttime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
