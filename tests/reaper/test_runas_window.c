/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_runas_window.c - a reap in the runas window: the DM qemu-dm-restrict
 * started is still root (QEMU has not reached its own setuid), so the
 * uid kill cannot see it; the reap must kill it all the same, by the pid
 * its spawn recorded (xlreaper_dmpid.c), and never a process that only
 * has that pid now.  The "DM" is tests/progs/fake_dm, which never
 * switches: the window held open.
 * uid block: base 9410000 (domids 1..9).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlrt_spawn.h"

#define BASE 9410000ul

typedef struct {
    char *dir;
    char *fake;  /* fake_dm */
    pid_t child; /* the wrapper, then the DM: stopped by teardown */
    pid_t sleeper;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    f->fake = xlrt_prog("fake_dm");
    xlrt_capture_reset();
    *state = f;
    return 0;
}

static void stop_child(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL); /* our own unreaped child */
        waitpid(*pid, NULL, 0);
    }
    *pid = 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    stop_child(&f->child);
    stop_child(&f->sleeper);
    xlrt_tmpdir_remove(f->dir);
    free(f->fake);
    free(f);
    return 0;
}

static xlreaper_ctx *runas_ctx(fixture *f)
{
    char extra[4300];

    snprintf(extra, sizeof(extra),
             "uid_switch = \"runas\"\nqemu_path = \"%s\"\n", f->fake);
    return xlrt_spawn_ctx(f->dir, BASE, extra);
}

static char *record_path(const fixture *f, unsigned domid)
{
    char *p;

    assert_true(asprintf(&p, "%s/xl-reaper-dm-%u.pid", f->dir, domid) > 0);
    return p;
}

/* Waits up to 5 s for pid to have exec'd the fake DM. */
static void wait_exec(const fixture *f, pid_t pid)
{
    char link[64], got[4096];

    snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
    for (int i = 0; i < 500; i++) {
        ssize_t n = readlink(link, got, sizeof(got) - 1);
        if (n > 0) {
            got[n] = '\0';
            if (!strcmp(got, f->fake))
                return;
        }
        usleep(10000);
    }
    fail_msg("pid %ld never became %s", (long)pid, f->fake);
}

/* 1 if our child pid died of SIGKILL within 2 s, 0 if it still lives.
 * Left unreaped (the caller's stop reaps it), so that its pid stays
 * ours. */
static int died_of_sigkill(pid_t pid)
{
    siginfo_t si;

    for (int i = 0; i < 200; i++) {
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == pid)
            return si.si_code == CLD_KILLED && si.si_status == SIGKILL;
        usleep(10000);
    }
    return 0;
}

/* libxl's way: fork, then exec the wrapper, which execs QEMU in place. */
static pid_t start_wrapper(fixture *f, unsigned domid)
{
    char wrapper[4096], conf[4200], dom[16], ids[64];
    pid_t pid;

    snprintf(wrapper, sizeof(wrapper), "%s/libexec/qemu-dm-restrict",
             xlrt_build_dir());
    snprintf(conf, sizeof(conf), "%s/xl-reaper.conf", f->dir);
    snprintf(dom, sizeof(dom), "%u", domid);
    snprintf(ids, sizeof(ids), "%lu:%lu", BASE + domid, BASE + domid);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        setenv("XL_REAPER_CONFIG", conf, 1);
        execl(wrapper, wrapper, "-xen-domid", dom, "-runas", ids,
              (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void test_reap_kills_root_dm(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = runas_ctx(f);
    xlreaper_reap_result res;
    char *rec = record_path(f, 3), *st, *uid, *desc;
    struct stat sb;

    f->child = start_wrapper(f, 3);
    wait_exec(f, f->child);
    /* In the window: root, so nothing of the uid. */
    st = xlrt_proc_read(f->child, "status");
    assert_non_null(st);
    uid = xlrt_status_field(st, "Uid");
    assert_string_equal(uid, "0\t0\t0\t0");
    free(uid);
    free(st);
    assert_int_equal(xlrt_kernel_count((uid_t)(BASE + 3)), 0);
    assert_int_equal(lstat(rec, &sb), 0);
    assert_int_equal(sb.st_uid, 0);
    assert_int_equal(sb.st_mode & 07777, 0644);

    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 3, &res), 0);
    assert_int_equal(res.outcome, XLREAPER_OUTCOME_EMPTY);
    if (!died_of_sigkill(f->child))
        fail_msg("the reap said \"%s\", but the root DM lives on",
                 xlreaper_reap_result_describe(&res));
    /* In place: the wrapper's pid is QEMU's. */
    assert_int_equal(res.recorded_dm, f->child);
    desc = xlreaper_reap_result_describe(&res);
    assert_non_null(strstr(desc, "also killed device model pid"));
    free(desc);
    /* The record has served. */
    assert_int_equal(lstat(rec, &sb), -1);
    assert_int_equal(errno, ENOENT);
    xlreaper_reap_result_dispose(&res);
    free(rec);
    xlreaper_ctx_free(ctx);
}

/* The forked spawn records its child as well. */
static void test_forked_spawn_recorded(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = runas_ctx(f);
    char ids[64];
    const char *extra[] = { "-runas", ids, NULL };
    xlreaper_reap_result res;
    xlrt_probe p;
    pid_t pid;

    snprintf(ids, sizeof(ids), "%lu:%lu", BASE + 4, BASE + 4);
    assert_int_equal(xlrt_probe_spawn(ctx, 4, "wait", extra, &p), 0);
    pid = p.pid;
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 4, &res), 0);
    assert_int_equal(res.recorded_dm, pid);
    if (!died_of_sigkill(pid))
        fail_msg("the probe, root in runas mode, outlived the reap");
    xlrt_probe_stop(&p);
    xlreaper_reap_result_dispose(&res);
    xlreaper_ctx_free(ctx);
}

/* A root sleeper of ours: something that holds a pid a record names. */
static pid_t start_sleeper(void)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

static void write_record(const fixture *f, unsigned domid, const char *text,
                         mode_t mode)
{
    char *rec = record_path(f, domid);
    int fd = open(rec, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
    free(rec);
}

/* Never a process that only has the recorded pid: a start time that is
 * not its own, or a record that is not root's alone, kills nothing. */
static void test_reused_pid_never_killed(void **state)
{
    fixture *f = *state;
    xlreaper_ctx *ctx = runas_ctx(f);
    unsigned long long start;
    xlreaper_reap_result res;
    char text[64], *rec;
    struct stat sb;

    f->sleeper = start_sleeper();
    usleep(20000);
    assert_int_equal(xlreaper__proc_starttime(f->sleeper, &start), 0);

    /* Its pid, another start time: the recorded DM is gone, the pid
     * reused. */
    snprintf(text, sizeof(text), "%ld %llu\n", (long)f->sleeper, start + 1);
    write_record(f, 5, text, 0644);
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 5, &res), 0);
    assert_int_equal(res.recorded_dm, 0);
    assert_true(xlrt_alive(f->sleeper));
    rec = record_path(f, 5);
    assert_int_equal(lstat(rec, &sb), -1); /* stale: removed */
    free(rec);
    xlreaper_reap_result_dispose(&res);

    /* The right start time, but a record anyone may write. */
    snprintf(text, sizeof(text), "%ld %llu\n", (long)f->sleeper, start);
    write_record(f, 6, text, 0666);
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 6, &res), 0);
    assert_int_equal(res.recorded_dm, 0);
    assert_true(xlrt_alive(f->sleeper));
    assert_logged("not trusted");
    xlreaper_reap_result_dispose(&res);

    /* Garbage. */
    write_record(f, 7, "12 34 56\n", 0644);
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 7, &res), 0);
    assert_int_equal(res.recorded_dm, 0);
    assert_logged("not \"PID STARTTIME\"");
    xlreaper_reap_result_dispose(&res);

    /* And the control: the same record, root's alone, does kill. */
    write_record(f, 8, text, 0644);
    xlreaper_reap_result_init(&res);
    assert_int_equal(xlreaper_reap(ctx, NULL, 8, &res), 0);
    assert_int_equal(res.recorded_dm, f->sleeper);
    assert_true(died_of_sigkill(f->sleeper));
    xlreaper_reap_result_dispose(&res);
    xlreaper_ctx_free(ctx);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_reap_kills_root_dm),
        T(test_forked_spawn_recorded),
        T(test_reused_pid_never_killed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
