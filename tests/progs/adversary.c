/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * adversary MODE - a device model taken over by a hostile guest, doing
 * its best not to die.  It writes "R" to stdout once its trick is in
 * place (so a test knows it is running, not merely started), then keeps
 * at it.  A failed set-up exits 2 with a reason: a test must never take
 * an adversary that did not run for one that was killed.
 *
 * Modes:
 *   fork-racer     fork(); parent _exit(): the pid seen is always stale
 *   setsid-racer   the same, changing session and group each generation
 *   hunter         the same, calling kill(-1, SIGKILL) to kill its killer
 *   threads        100 threads, one of them starting a fork racer
 *   stopped        16 children stopped with SIGSTOP, then a fork racer
 *   userns         a user and pid namespace of its own, racing inside
 *   vfork-chain    32 parents suspended in vfork, the last one racing
 *   zombie-farm    200 unreaped zombie children, then racing
 *   deaf           ignores and blocks every catchable signal, racing
 *   stopper        kill(-1, SIGSTOP) for ever: stops whatever enters its
 *                  uid (a probe, a killer counting, a spawn's check)
 *   leader-exit    the thread-group leader exits; 8 threads live on
 *   sleeper        just sleeps (for tests of what is not killed)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void ready(void)
{
    (void)!write(1, "R", 1);
    close(1);
}

static void __attribute__((noreturn)) die(const char *what)
{
    fprintf(stderr, "adversary: %s: %s\n", what, strerror(errno));
    _exit(2);
}

/* Races for ever; never returns.  A failed fork is tried again. */
static void __attribute__((noreturn)) race(bool new_session, bool hunt)
{
    for (;;) {
        pid_t p = fork();
        if (p > 0)
            _exit(0);
        if (p < 0) {
            sched_yield();
            continue;
        }
        if (new_session) {
            setsid();
            setpgid(0, 0);
        }
        if (hunt)
            kill(-1, SIGKILL);
    }
}

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void *racer_thread(void *arg)
{
    (void)arg;
    if (fork() == 0)
        race(false, false);
    return spin(NULL);
}

static void mode_threads(void)
{
    pthread_t t;

    for (int i = 0; i < 99; i++)
        if ((errno = pthread_create(&t, NULL, spin, NULL)))
            die("pthread_create");
    if ((errno = pthread_create(&t, NULL, racer_thread, NULL)))
        die("pthread_create");
    ready();
    spin(NULL);
}

static void mode_stopped(void)
{
    for (int i = 0; i < 16; i++) {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0) {
            raise(SIGSTOP);
            for (;;)
                pause();
        }
    }
    ready();
    race(false, false);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);

    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die(path);
    close(fd);
}

static void mode_userns(void)
{
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    pid_t init;

    if (unshare(CLONE_NEWUSER) < 0)
        die("unshare(CLONE_NEWUSER)");
    snprintf(map, sizeof(map), "0 %lu 1\n", (unsigned long)uid);
    write_file("/proc/self/uid_map", map);
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof(map), "0 %lu 1\n", (unsigned long)gid);
    write_file("/proc/self/gid_map", map);
    /* Now "root" inside: a pid namespace whose init races. */
    if (unshare(CLONE_NEWPID) < 0)
        die("unshare(CLONE_NEWPID)");
    init = fork();
    if (init < 0)
        die("fork");
    if (init == 0) {
        if (fork() == 0)
            race(true, false);
        for (;;)
            pause();
    }
    ready();
    for (;;)
        pause();
}

static void mode_vfork_chain(void)
{
    /* Each vfork child runs on in the parent's memory and vforks again;
     * the parents stay suspended (shown as D state, but killable). */
    for (volatile int depth = 0; depth < 32; depth++) {
#ifdef __clang_analyzer__
        /* What clang forbids after a vfork (unix.Vfork), and vfork itself
         * (security.insecureAPI.vfork), is this mode's point. */
        pid_t p = fork();
#else
        pid_t p = vfork();
#endif
        if (p < 0)
            _exit(2);
        if (p > 0)
            _exit(0);
    }
    /* The deepest: a normal child races, this one reports and waits. */
    if (fork() == 0)
        race(false, false);
    ready();
    for (;;)
        pause();
}

static void mode_zombie_farm(void)
{
    for (int i = 0; i < 200; i++) {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0)
            _exit(0);
    }
    ready();
    /* The farmer never reaps; a racer of its own runs beside it. */
    if (fork() == 0)
        race(false, false);
    for (;;)
        pause();
}

static void mode_deaf(void)
{
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigset_t all;

    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &ign, NULL);
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    ready();
    race(false, false);
}

static void __attribute__((noreturn)) mode_stopper(void)
{
    ready();
    for (;;)
        kill(-1, SIGSTOP);
}

/* The leader leaves (a zombie leader, State Z) while its threads run:
 * a scan must not take the process for a zombie. */
static void __attribute__((noreturn)) mode_leader_exit(void)
{
    pthread_t t;

    for (int i = 0; i < 8; i++)
        if (pthread_create(&t, NULL, spin, NULL))
            die("pthread_create");
    ready();
    syscall(SYS_exit, 0); /* this thread only */
    _exit(2);
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";

    if (!strcmp(m, "fork-racer")) {
        ready();
        race(false, false);
    } else if (!strcmp(m, "setsid-racer")) {
        ready();
        race(true, false);
    } else if (!strcmp(m, "hunter")) {
        ready();
        race(false, true);
    } else if (!strcmp(m, "threads")) {
        mode_threads();
    } else if (!strcmp(m, "stopped")) {
        mode_stopped();
    } else if (!strcmp(m, "userns")) {
        mode_userns();
    } else if (!strcmp(m, "vfork-chain")) {
        mode_vfork_chain();
    } else if (!strcmp(m, "zombie-farm")) {
        mode_zombie_farm();
    } else if (!strcmp(m, "deaf")) {
        mode_deaf();
    } else if (!strcmp(m, "stopper")) {
        mode_stopper();
    } else if (!strcmp(m, "leader-exit")) {
        mode_leader_exit();
    } else if (!strcmp(m, "sleeper")) {
        ready();
        for (;;)
            pause();
    }
    fprintf(stderr, "adversary: unknown mode '%s'\n", m);
    return 2;
}
