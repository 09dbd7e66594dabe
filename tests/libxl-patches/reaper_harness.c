/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * reaper_harness.c - runs the DM reaper code of the libxl series, as
 * patched into a real libxl tree, against hostile and broken setups.
 *
 * scripts/check-libxl-patch cuts the reaper's functions out of the
 * patched tools/libs/light/libxl_dm.c (REAPER_DM_C) and libxl_linux.c
 * (REAPER_LINUX_C) and compiles them here, with stand-ins for the few
 * libxl calls they make in libxl's own process (logging, the gc, the
 * passwd lookup).  The code under test is libxl's, unchanged: what runs
 * after a fork (the lock, the killer, its bounded waits, the count) is
 * exactly what libxl would run.
 *
 * Needs root, and uids 6100000..6100003 free; run it under the shared
 * real-tests lock.  Prints one line a case and exits 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <ctype.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

/* ---------- stand-ins for libxl, in libxl's own process only ---------- */
typedef struct {
    int unused;
} libxl__gc;
#define ERROR_FAIL (-3)
#define ERROR_INVAL (-6)
#define XTL_ERROR 0
#define CTX NULL
#define CTYPE(f, c) f((unsigned char)(c))
#define LOGD(l, d, ...) harness_log(#l, __VA_ARGS__)
#define LOGED(l, d, ...) harness_log(#l, __VA_ARGS__)
#define GCSPRINTF(...) harness_sprintf(__VA_ARGS__)

static void harness_log(const char *level, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "    libxl: %s: ", level);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static char *harness_sprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        abort();
    va_end(ap);
    return s;
}

static char rundir[] = "/tmp/xlr-reaper-harness.XXXXXX";
static const char *libxl__run_dir_path(void)
{
    return rundir;
}
static uid_t harness_reaper_uid;
static int libxl__get_reaper_uid(libxl__gc *gc, uid_t *reaper_uid)
{
    (void)gc;
    *reaper_uid = harness_reaper_uid;
    return 0;
}
static void libxl_report_child_exitstatus(void *ctx, int level,
                                          const char *what, pid_t pid,
                                          int status)
{
    (void)ctx;
    (void)level;
    fprintf(stderr, "    %s [%d] status %#x\n", what, (int)pid, status);
}

/* libxl_setresuid.c, as patched */
int libxl__setresuid(uid_t ruid, uid_t euid, uid_t suid);
int libxl__getresuid(uid_t *ruid, uid_t *euid, uid_t *suid);
int libxl__dm_reaper_check_nocaps(void);
int libxl__dm_reaper_count_prepare(void);
int libxl__dm_reaper_count(uid_t uid, bool *empty_r);
int libxl__setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
    return setresuid(ruid, euid, suid);
}
int libxl__getresuid(uid_t *ruid, uid_t *euid, uid_t *suid)
{
    return getresuid(ruid, euid, suid);
}

#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include REAPER_LINUX_C
#include REAPER_DM_C

/* ---------- the cases ---------- */
#define PET 6100000u
#define DM1 6100001u
#define DM2 6100002u

static int failures;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void result(bool ok, const char *what, double secs)
{
    printf("reaper harness: %s: %s (%.2f s)\n", ok ? "ok" : "FAILED", what,
           secs);
    if (!ok)
        failures++;
}

/* Tasks of uid, live or zombie, seen in /proc (real or saved uid). */
static int tasks_of(uid_t uid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;

    if (!d)
        abort();
    while ((e = readdir(d))) {
        char path[300], line[256];
        unsigned long r, eu, s;
        FILE *f;

        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "Uid: %lu %lu %lu", &r, &eu, &s) == 3) {
                if (r == uid || s == uid)
                    n++;
                break;
            }
        fclose(f);
    }
    closedir(d);
    return n;
}

/*
 * n tasks of uid, orphaned (their parent exits, so init or the nearest
 * subreaper reaps them, as for a DM).  mode 0: pause(); 1: a fork racer
 * that also stops whatever it may signal.
 */
static void start_tasks(uid_t uid, int n, int mode)
{
    pid_t mid = fork();

    if (mid < 0)
        abort();
    if (!mid) {
        for (int i = 0; i < n; i++) {
            if (fork())
                continue;
            if (setresuid(uid, uid, uid))
                _exit(1);
            for (;;) {
                if (!mode) {
                    pause();
                    continue;
                }
                kill(-1, SIGSTOP);
                if (fork() > 0)
                    _exit(0);
            }
        }
        _exit(0);
    }
    waitpid(mid, NULL, 0);
    usleep(100000);
}

/* Runs kill_device_model_uid_child as libxl does: in a child. */
static int destroy_status(const dm_reaper *dr)
{
    int status;
    pid_t pid = fork();

    if (!pid)
        _exit(kill_device_model_uid_child(dr));
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool lock_free(const char *lockfile)
{
    int fd = open(lockfile, O_RDWR);
    bool ok = fd >= 0 && !flock(fd, LOCK_EX | LOCK_NB);

    if (fd >= 0)
        close(fd);
    return ok;
}

int main(void)
{
    dm_reaper dr;
    struct stat st;
    double t;
    int status, fd;
    pid_t holder;

    if (geteuid()) {
        fprintf(stderr, "reaper harness: needs root\n");
        return 2;
    }
    if (!mkdtemp(rundir))
        abort();
    harness_reaper_uid = PET;
    {
        libxl__gc gc;
        dm_reaper bad;
        bool ok = dm_reaper_prepare(&gc, 1, "6100001", &dr) == 0 &&
                  dr.dm_uid == DM1 && dr.reaper_uid == PET;

        ok = ok && dm_reaper_prepare(&gc, 1, "0", &bad) == ERROR_INVAL &&
             dm_reaper_prepare(&gc, 1, "12x", &bad) == ERROR_INVAL &&
             dm_reaper_prepare(&gc, 1, "", &bad) == ERROR_INVAL &&
             dm_reaper_prepare(&gc, 1, "-5", &bad) == ERROR_INVAL &&
             dm_reaper_prepare(&gc, 1, "4294967295", &bad) == ERROR_INVAL;
        result(ok, "device-model-kill-uid parsed strictly", 0);
    }

    /* An older libxl's lock file, 0644. */
    fd = open(dr.lockfile, O_RDWR | O_CREAT, 0644);
    fchmod(fd, 0644);
    close(fd);
    t = now_s();
    status = destroy_status(&dr);
    stat(dr.lockfile, &st);
    result(status == 0 && (st.st_mode & 07777) == 0600,
           "empty uid: verified empty; a 0644 lock file made 0600",
           now_s() - t);

    /* Two fork racers that stop whatever enters their uid. */
    start_tasks(DM1, 2, 1);
    t = now_s();
    status = destroy_status(&dr);
    t = now_s() - t;
    result(status == 0 && tasks_of(DM1) == 0 && lock_free(dr.lockfile) &&
               t < LIBXL_DM_REAP_TIMEOUT + 2,
           "2 SIGSTOPping fork racers: killed, uid empty, lock free", t);

    /* Another domain's DM in another uid lives on. */
    start_tasks(DM2, 1, 0);
    start_tasks(DM1, 3, 0);
    t = now_s();
    status = destroy_status(&dr);
    result(status == 0 && tasks_of(DM1) == 0 && tasks_of(DM2) == 1,
           "the other uid's DM survives the kill", now_s() - t);

    /* A lock file that is not root's: refused, the kill goes on. */
    chown(dr.lockfile, PET, PET);
    start_tasks(DM1, 1, 0);
    t = now_s();
    status = destroy_status(&dr);
    result(status == LIBXL__DM_REAP_STATUS(LIBXL__DM_REAPER_LOCK_UNSAFE,
                                           LIBXL__DM_REAP_EMPTY) &&
               tasks_of(DM1) == 0,
           "lock file not root's: refused, killed and verified without it",
           now_s() - t);
    chown(dr.lockfile, 0, 0);

    /* A holder that never lets go: a bounded wait, then the kill. */
    holder = fork();
    if (!holder) {
        int hfd = open(dr.lockfile, O_RDONLY);

        flock(hfd, LOCK_EX);
        pause();
        _exit(0);
    }
    usleep(100000);
    start_tasks(DM1, 1, 0);
    t = now_s();
    status = destroy_status(&dr);
    t = now_s() - t;
    result(status == LIBXL__DM_REAP_STATUS(LIBXL__DM_REAPER_LOCK_TIMEOUT,
                                           LIBXL__DM_REAP_EMPTY) &&
               tasks_of(DM1) == 0 &&
               t < LIBXL_DM_REAPER_LOCK_TIMEOUT + LIBXL_DM_REAP_TIMEOUT,
           "lock held for good: gave up on it in time, killed and verified",
           t);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);

    /* The spawn: a stale task in the new DM's uid is gone before exec. */
    start_tasks(DM1, 1, 1);
    t = now_s();
    {
        pid_t pid = fork();

        if (!pid) {
            dm_reap_stale_uid(&dr, 2);
            _exit(tasks_of(DM1) == 0 ? 0 : 1);
        }
        waitpid(pid, &status, 0);
    }
    result(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
               tasks_of(DM1) == 0 && lock_free(dr.lockfile),
           "spawn: a stale racer is reaped before the DM would start",
           now_s() - t);

    /* A task that never dies (here: a live zombie parent) is a failure
     * within the timeout, not a hang. */
    {
        pid_t keeper = fork();

        if (!keeper) {
            /* Its zombie child of uid DM1 stays charged: never reaped. */
            if (!fork()) {
                if (setresuid(DM1, DM1, DM1))
                    _exit(1);
                _exit(0);
            }
            pause();
            _exit(0);
        }
        usleep(100000);
        t = now_s();
        status = destroy_status(&dr);
        t = now_s() - t;
        result(status == LIBXL__DM_REAP_REMAIN &&
                   t < LIBXL_DM_REAP_TIMEOUT + 2 && lock_free(dr.lockfile),
               "an unreaped zombie: the destroy fails in time, lock free", t);
        kill(keeper, SIGKILL);
        waitpid(keeper, NULL, 0);
    }

    /* Clean up DM2's task. */
    {
        dm_reaper d2 = dr;

        d2.dm_uid = DM2;
        destroy_status(&d2);
    }
    {
        libxl__gc gc;
        int ok = dm_reaper_report(&gc, 1, 1, 0) == 0 &&
                 dm_reaper_report(&gc, 1, 1, LIBXL__DM_REAP_REMAIN << 8) ==
                     ERROR_FAIL;

        result(ok, "the parent's report: 0 for empty, an error else", 0);
    }
    unlink(dr.lockfile);
    rmdir(rundir);
    printf("reaper harness: %d failed\n", failures);
    return failures ? 1 : 0;
}
