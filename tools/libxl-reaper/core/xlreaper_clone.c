/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_clone.c - starting a helper without copying the caller.
 *
 * A helper (the killer, a count probe) is a few dozen system calls.
 * fork() copies the caller's page tables first: measured on this
 * project's VMs, 0.6 ms for a small caller and 3 ms for one with 100
 * MB mapped, where the helper's own work is a fraction of that, and a
 * PV dom0 pays more for every page table it builds.  So a helper is
 * started as posix_spawn starts a program: clone(CLONE_VM), on a stack
 * of its own, without CLONE_VFORK (a helper that a task of a DM uid
 * stops would hold the caller in the vfork wait, which no deadline
 * can end: xlreaper_wait.c's bounded wait stays as it is).
 *
 * What sharing the memory asks of the helper, and of us:
 *  - it writes nothing but its own stack and its report pipe: no libc
 *    call that touches errno or other state (xlreaper_raw.h), no
 *    malloc, no static it could share with a caller's thread;
 *  - every signal is blocked before the clone and stays blocked in the
 *    helper, so no handler of the caller's ever runs on its stack;
 *  - its descriptor table is its own copy (no CLONE_FILES), so closing
 *    all but its pipe closes nothing of the caller's;
 *  - the kernel's "dumpable" flag belongs to the memory, and the
 *    helper's change of euid (and its own PR_SET_DUMPABLE 0) clears it
 *    for the caller too: the caller's flag is saved before the first
 *    helper and put back after the last (a count, for threads).
 * What it does not change: a task of the DM uid can reach the helper's
 * memory only by ptrace or /proc/PID/mem, both of which need all three
 * of its ids to match the helper's (its saved uid is 0) and the memory
 * to be dumpable; it can signal it, which the bounded wait turns into
 * a void answer, as for a forked helper.
 *
 * Where xlreaper_raw.h has no stubs, helpers are forked.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

/* The helpers' deepest path (the killer's count) uses well under 4
 * KiB; the rest is margin, and a guard page below it. */
#define HELPER_STACK (64u << 10)
#define GUARD_PAGE 4096u

static pthread_mutex_t dumpable_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned dumpable_users;
static int dumpable_saved;

void xlreaper__dumpable_hold(void)
{
    pthread_mutex_lock(&dumpable_lock);
    if (!dumpable_users++)
        dumpable_saved = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    pthread_mutex_unlock(&dumpable_lock);
}

void xlreaper__dumpable_release(void)
{
    pthread_mutex_lock(&dumpable_lock);
    /* PR_SET_DUMPABLE takes 0 or 1; a 2 (suid_dumpable) is what the
     * kernel itself leaves after a change of ids. */
    if (!--dumpable_users && (dumpable_saved == 0 || dumpable_saved == 1))
        prctl(PR_SET_DUMPABLE, dumpable_saved, 0, 0, 0);
    pthread_mutex_unlock(&dumpable_lock);
}

int xlreaper__helper_start(xlreaper_ctx *ctx, const char *what,
                           void (*fn)(int wfd, void *arg), void *arg, int wfd,
                           xlreaper__helper_vm *vm, pid_t *pid_r)
{
    sigset_t all, old;
    pid_t pid;
    int e;

    vm->stack = NULL;
    vm->held = false;
    vm->fn = fn;
    vm->arg = arg;
    vm->wfd = wfd;
    vm->parent = getpid();
    if (!XLREAPER__RAW_SYSCALLS) {
        pid = fork();
        if (pid < 0 && errno == EAGAIN) {
            LOGE(WARN, "fork for %s", what);
            return XLREAPER__ERROR_NO_TASK;
        }
        if (pid < 0) {
            LOGE(ERROR, "fork for %s", what);
            return XLREAPER_ERROR_FAIL;
        }
        if (pid == 0)
            xlreaper__helper_main(vm);
        xlreaper__sched_killer_started(fn, pid);
        *pid_r = pid;
        return 0;
    }
    vm->stack = mmap(NULL, HELPER_STACK + GUARD_PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (vm->stack == MAP_FAILED) {
        vm->stack = NULL;
        LOGE(ERROR, "a stack for %s", what);
        return XLREAPER_ERROR_NOMEM;
    }
    if (mprotect(vm->stack, GUARD_PAGE, PROT_NONE) < 0) {
        LOGE(ERROR, "the guard page of %s's stack", what);
        xlreaper__helper_finish(vm);
        return XLREAPER_ERROR_FAIL;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    xlreaper__dumpable_hold();
    vm->held = true;
    /* vm and arg live in the caller's frame until the helper has been
     * reaped (xlreaper__run_helper_wait waits for that before it
     * returns). */
    pid = clone(xlreaper__helper_main,
                (char *)vm->stack + GUARD_PAGE + HELPER_STACK,
                CLONE_VM | SIGCHLD, vm);
    e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        xlreaper__helper_finish(vm);
        errno = e;
        if (e == EAGAIN) {
            LOGE(WARN, "clone for %s", what);
            return XLREAPER__ERROR_NO_TASK;
        }
        LOGE(ERROR, "clone for %s", what);
        return XLREAPER_ERROR_FAIL;
    }
    xlreaper__sched_killer_started(fn, pid);
    *pid_r = pid;
    return 0;
}

void xlreaper__helper_finish(xlreaper__helper_vm *vm)
{
    if (vm->held)
        xlreaper__dumpable_release();
    vm->held = false;
    if (vm->stack)
        munmap(vm->stack, HELPER_STACK + GUARD_PAGE);
    vm->stack = NULL;
}
