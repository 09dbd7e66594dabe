/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_test.c - helpers shared by the test suites.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlrt_tree.h"

void xlrt_assert_failed(const char *expr, const char *file, int line)
{
    /* cmocka's own report of a failed check, which ends the test. */
    _assert_true(0, expr, file, line);
    _fail(file, line); /* not reached */
}

unsigned xlrt_rounds(unsigned dflt)
{
    const char *s = getenv("XLR_ROUNDS");
    long v = s ? strtol(s, NULL, 10) : 0;

    return v > 0 ? (unsigned)v : dflt;
}

const char *xlrt_build_dir(void)
{
    const char *b = getenv("XLR_BUILD");

    return b && *b ? b : "build";
}

/* The first directory of path (itself included) that others cannot
 * search, into bad (size n); false when there is none. */
static bool untraversable(const char *path, char *bad, size_t n)
{
    char *abs = realpath(path, NULL), *slash;
    struct stat st;
    bool found = false;

    if (!abs) {
        snprintf(bad, n, "%s (%s)", path, strerror(errno));
        return true;
    }
    for (slash = abs + strlen(abs); slash; ) {
        if (stat(abs[0] ? abs : "/", &st) < 0 || !(st.st_mode & S_IXOTH)) {
            snprintf(bad, n, "%s (mode %04o)", abs[0] ? abs : "/",
                     (unsigned)(st.st_mode & 07777));
            found = true;
        }
        slash = strrchr(abs, '/');
        if (slash)
            *slash = '\0';
    }
    free(abs);
    return found;
}

const char *xlrt_progs_dir(void)
{
    static char dir[4096];
    const char *p = getenv("XLR_PROGS");
    char bad[4200];

    if (dir[0])
        return dir;
    if (p && *p)
        snprintf(dir, sizeof(dir), "%s", p);
    else
        snprintf(dir, sizeof(dir), "%s/tests/progs", xlrt_build_dir());
    /* The highest such directory is the one named: the one to fix. */
    if (untraversable(dir, bad, sizeof(bad))) {
        fprintf(stderr,
                "the test programs in %s cannot be run by DM uids: %s is "
                "not searchable by others.  Run the suites through `make "
                "check` (tests/run-suites stages them in a /tmp/xlr-suite-* "
                "directory of its own), or set XLR_PROGS to a copy of them "
                "in a directory every uid can traverse\n",
                dir, bad);
        dir[0] = '\0';
        fail_msg("%s: not traversable by DM uids", bad);
    }
    return dir;
}

char *xlrt_tmpdir(void)
{
    char *d = strdup("/tmp/xlr-test.XXXXXX");

    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    return d;
}

void xlrt_tmpdir_remove(char *dir)
{
    if (!dir)
        return;
    xlrt_tree_remove(dir);
    free(dir);
}

char *xlrt_write_file(const char *dir, const char *name, const char *text)
{
    char *path;
    FILE *f;

    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, 0644), 0);
    return path;
}

xentoollog_logger *xlrt_logger(void)
{
    static xentoollog_logger_stdiostream *lg;
    const char *l = getenv("XLR_TEST_LOG");
    xentoollog_level level = XTL_CRITICAL;

    if (lg)
        return (xentoollog_logger *)lg;
    if (l && !strcmp(l, "debug"))
        level = XTL_DEBUG;
    else if (l && !strcmp(l, "info"))
        level = XTL_INFO;
    else if (l && !strcmp(l, "warn"))
        level = XTL_WARN;
    lg = xtl_createlogger_stdiostream(stderr, level, 0);
    assert_non_null(lg);
    return (xentoollog_logger *)lg;
}

xlreaper_ctx *xlrt_ctx(const char *tmpdir, const char *config_text)
{
    xlreaper_ctx *ctx;
    char *path = xlrt_write_file(tmpdir, "xl-reaper.conf", config_text);

    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_logger()), 0);
    assert_int_equal(
        xlreaper_config_load(ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
    return ctx;
}

/* ---------- nursery ---------- */

static volatile sig_atomic_t nursery_stop;

static void nursery_on_term(int sig)
{
    (void)sig;
    nursery_stop = 1;
}

pid_t xlrt_nursery_start(void (*fn)(void *arg), void *arg)
{
    pid_t n = fork();

    assert_true(n >= 0);
    if (n > 0)
        return n;

    /* The nursery: orphans of fn's tree come to us, not to a slow init. */
    struct sigaction sa = { .sa_handler = nursery_on_term };
    sigaction(SIGTERM, &sa, NULL);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    pid_t c = fork();
    if (c < 0)
        _exit(1);
    if (c == 0) {
        sa.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &sa, NULL);
        fn(arg);
        _exit(0);
    }
    while (!nursery_stop) {
        /* Orphans can arrive after ECHILD: poll, briefly. */
        if (waitpid(-1, NULL, __WALL) < 0 && errno == ECHILD)
            usleep(1000);
    }
    /* Whatever is left is ours to reap, not to kill: the test decides. */
    while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
        ;
    _exit(0);
}

void xlrt_nursery_stop(pid_t nursery)
{
    int status;

    /* kill(0) or kill(-1) would signal the whole group, or everything. */
    if (nursery <= 0)
        return;
    kill(nursery, SIGTERM);
    while (waitpid(nursery, &status, 0) < 0 && errno == EINTR)
        ;
}

/* ---------- bystanders ---------- */

int xlrt_become(uid_t uid, gid_t gid)
{
    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, gid, gid, gid) ||
        syscall(SYS_setresuid, uid, uid, uid))
        return -1;
    return 0;
}

void xlrt_exec_as(uid_t uid, gid_t gid, char *const argv[])
{
    if (xlrt_become(uid, gid) < 0)
        _exit(100);
    execv(argv[0], argv);
    _exit(101);
}

pid_t xlrt_bystander_start(uid_t uid)
{
    int p[2];
    char ok = 0;
    pid_t pid;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        if (xlrt_become(uid, uid) < 0)
            _exit(1);
        /* After the switch: a change of credentials clears it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (write(p[1], "k", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    /* Returned only once it runs as uid: a check made before that would
     * see a root task turn into uid's under its feet. */
    assert_int_equal(read(p[0], &ok, 1), 1);
    assert_int_equal(ok, 'k');
    close(p[0]);
    return pid;
}

bool xlrt_alive(pid_t pid)
{
    char path[64], buf[512], *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

void xlrt_bystander_stop(pid_t pid)
{
    int status;

    if (pid <= 0)
        return;
    /* Our own unreaped child: the pid cannot have been reused. */
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
}

/* ---------- running a program ---------- */

char *xlrt_read_to_eof(int fd)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t r;

    assert_non_null(buf);
    while ((r = read(fd, buf + len, cap - len - 1)) != 0) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        len += (size_t)r;
        if (cap - len < 2) {
            char *grown = realloc(buf, cap * 2);

            assert_non_null(grown);
            buf = grown;
            cap *= 2;
        }
    }
    buf[len] = '\0';
    return buf;
}

int xlrt_run(char *const argv[], char **out_r, char **err_r)
{
    int out[2], err[2], status;
    char *o, *e;
    pid_t pid;

    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(err, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        execv(argv[0], argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    /* Small outputs: reading one pipe to its end before the other cannot
     * deadlock below the pipe buffer's size. */
    o = xlrt_read_to_eof(out[0]);
    e = xlrt_read_to_eof(err[0]);
    close(out[0]);
    close(err[0]);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (out_r)
        *out_r = o;
    else
        free(o);
    if (err_r)
        *err_r = e;
    else
        free(e);
    return status;
}
