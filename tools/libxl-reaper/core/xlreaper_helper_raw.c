/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_helper_raw.c - all the code a helper runs, and nothing else.
 *
 * A helper started with clone(CLONE_VM) (xlreaper_clone.c) runs in the
 * caller's memory, beside the caller's threads and with the calling
 * thread's TLS: a libc call there could write the caller's errno, take a
 * lock a caller's thread holds, or run a handler of the caller's.  So a
 * helper makes raw system calls only (xlreaper_raw.h) and writes nothing
 * but its own stack and its report pipe.  That rule is proved, not
 * hoped: this file holds every function a helper runs, and the build
 * fails if its object needs any symbol from outside it (lib.mk's
 * helper_raw_check, with nm), as hooks.mk proves that xl-reaper loads
 * no libxenlight.  The functions called from outside are the helpers'
 * entry points, and the kill and the kernel count that a caller's
 * thread also makes when no task can be created (xlreaper_reap.c).
 *
 * The kill, and why its ids are (pet, dm, 0), is described beside its
 * code below; the kernel count (xlreaper__nproc_others) in
 * xlreaper_count.c, the verification in xlreaper_reap.c, the prelude
 * and the report pipe in xlreaper_child.c, the census probe in
 * xlreaper_census.c, the FUSE abort in xlreaper_fuse.c.  The forked
 * child that execs QEMU's -help (xlreaper_qemu_args.c) is here too: it
 * may be forked from a threaded caller, where only async-signal-safe
 * calls are allowed, and raw calls are that and more.  The spawn's
 * child is not: it has its own list of what it may call
 * (xlreaper_spawn_apply.allow).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xlreaper_internal.h"
#include "xlreaper_raw.h"

/* ---------- the report pipe, and the end ---------- */

void XLREAPER__HELPER_CODE xlreaper__child_send(int wfd, int step, int err,
                                                long detail)
{
    xlreaper__child_report rep = { .step = step,
                                   .err = err,
                                   .detail = detail };

    /* One record is smaller than PIPE_BUF, so the write is atomic. */
    if (wfd >= 0)
        xlreaper__raw(SYS_write, wfd, &rep, sizeof(rep));
}

void XLREAPER__HELPER_CODE xlreaper__child_exit(int status)
{
    for (;;)
        xlreaper__raw(SYS_exit_group, status, 0, 0);
}

void XLREAPER__HELPER_CODE xlreaper__child_fail(int wfd, int step, int err,
                                                long detail)
{
    xlreaper__child_send(wfd, step, err, detail);
    xlreaper__child_exit(127);
}

/* ---------- the prelude, and ids that keep PDEATHSIG ---------- */

/* close_range, or one by one on a kernel before 5.9.  0 or -errno;
 * raw (xlreaper_raw.h). */
int XLREAPER__HELPER_CODE xlreaper__close_from_raw(unsigned lo, unsigned hi)
{
    struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
    long r;

    if (lo > hi)
        return 0;
    r = xlreaper__raw(SYS_close_range, lo, hi, 0);
    if (r != -ENOSYS)
        return (int)r;
    /* No descriptor can be at or above the hard NOFILE limit... unless
     * the limit was lowered after it was opened; fs.nr_open's default
     * bounds the loop then. */
    r = xlreaper__raw6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&rl, 0, 0);
    if (r < 0)
        return (int)r;
    if (rl.rlim_max > (1u << 20) || rl.rlim_max == RLIM_INFINITY)
        rl.rlim_max = 1u << 20;
    for (unsigned fd = lo; fd <= hi && fd < rl.rlim_max; fd++)
        xlreaper__raw(SYS_close, fd, 0, 0);
    return 0;
}

void XLREAPER__HELPER_CODE xlreaper__helper_prelude(int wfd, pid_t parent)
{
    /* Its own group: a terminal's ^C or ^Z for the caller's group does
     * not reach it, and a kill(-pgid) of the caller's group neither. */
    xlreaper__raw(SYS_setpgid, 0, 0, 0);
    /* Never outlive the parent, which is the only one that would kill
     * a stopped helper; the check closes the race with its death. */
    xlreaper__helper_rearm(parent);
    /* With CLONE_VM this is the caller's flag too, which the caller
     * puts back (xlreaper_clone.c); the first change of euid would
     * clear it anyway. */
    xlreaper__raw(SYS_prctl, PR_SET_DUMPABLE, 0, 0);
    /* Nothing inherited (privcmd, xenstore, the lock, stdio) may be
     * held while a DM uid can stop us: only the report pipe stays. */
    if ((wfd > 0 && xlreaper__close_from_raw(0, (unsigned)wfd - 1) < 0) ||
        xlreaper__close_from_raw((unsigned)wfd + 1, ~0u) < 0)
        xlreaper__child_exit(127);
}

void XLREAPER__HELPER_CODE xlreaper__helper_rearm(pid_t parent)
{
    /* A caller SIGKILLed while its helper sat stopped by a task of the
     * uid left it stopped for good, under init, with saved uid 0 and
     * full permitted capabilities: its first change of euid had
     * cleared the signal. */
    if (xlreaper__raw(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0) < 0 ||
        xlreaper__raw(SYS_getppid, 0, 0, 0) != parent)
        xlreaper__child_exit(127);
}

long XLREAPER__HELPER_CODE xlreaper__helper_setresuid(pid_t parent, uid_t r,
                                                      uid_t e, uid_t s)
{
    long n = xlreaper__raw(SYS_setresuid, r, e, s);

    if (parent)
        xlreaper__helper_rearm(parent);
    return n;
}

int XLREAPER__HELPER_CODE xlreaper__caps_none_raw(bool permitted_too)
{
    struct __user_cap_header_struct hdr = { .version =
                                                _LINUX_CAPABILITY_VERSION_3,
                                            .pid = 0 };
    /* What the kernel does not write reads as "has capabilities": the
     * analyzers cannot see into the raw call. */
    struct __user_cap_data_struct data[2] = { { ~0u, ~0u, ~0u },
                                              { ~0u, ~0u, ~0u } };
    long r = xlreaper__raw(SYS_capget, &hdr, data, 0);

    if (r < 0)
        return (int)r;
    if (data[0].effective || data[1].effective ||
        (permitted_too && (data[0].permitted || data[1].permitted)))
        return -EPERM;
    return 0;
}

/* ---------- scheduling (xlreaper_sched.c says why) ---------- */

/* Raw: the killer runs it, in our memory (xlreaper_clone.c). */
void XLREAPER__HELPER_CODE xlreaper__sched_killer_rt(void)
{
    struct sched_param rt = { .sched_priority = 1 };

    xlreaper__raw(SYS_sched_setscheduler, 0, SCHED_FIFO, &rt);
}

/* Raw, for the same reason: the killer calls it too. */
void XLREAPER__HELPER_CODE xlreaper__sched_hurry_dying(uid_t uid)
{
    /* Real uid uid: what the kill reached, now dying. */
    xlreaper__raw(SYS_setpriority, PRIO_USER, uid, -20);
}

/* ---------- the kernel count ---------- */

/* The soft limit is set per question; the hard limit stays as it is:
 * raising it needs CAP_SYS_RESOURCE, which root lacks in some
 * containers.  The count is asked up to it.  Read once per count, into
 * the helper's own stack: a helper shares the caller's memory
 * (xlreaper_clone.c) and writes no static. */
typedef struct {
    rlim_t hard;
    pid_t parent; /* a helper's, for xlreaper__helper_rearm; or 0 */
} nproc_asker;

static XLREAPER__HELPER_CODE int set_nproc(const nproc_asker *q, rlim_t soft)
{
    struct rlimit rl = { .rlim_cur = soft, .rlim_max = q->hard };

    return (int)xlreaper__raw6(SYS_prlimit64, 0, RLIMIT_NPROC, (long)&rl, 0, 0,
                               0);
}

/*
 * Leaves the task (uid, uid, 0), marked.  Precondition: saved uid 0.
 * The real uid goes to 0 and back, so that it changes even when it is
 * uid already (the kernel marks only on a change of the real uid); the
 * last change is made without effective capabilities (kernels that
 * once skipped the mark for a capable caller judged the caller's
 * capabilities before the change).  0 or -errno.
 *
 * PDEATHSIG is armed again once, after the second call, not after
 * each.  commit_creds() (kernel/cred.c) clears it when the euid, egid,
 * fsuid or fsgid changes or the permitted capabilities grow; a signal
 * is allowed (kill_ok_by_cred, kernel/signal.c) when the sender's real
 * or effective uid is our real or saved uid.  So:
 *  - (0, 0, s): clears it (the euid changes), but no DM task can
 *    signal a task whose real and saved uids are 0;
 *  - (0, uid, 0): clears it again, and still no task of uid can signal
 *    us; armed here, and getppid() proves the parent still ours;
 *  - (uid, uid, 0): the first state a task of uid can signal; only the
 *    real uid changes, the euid and fsuid stay, the permitted set
 *    stays (the saved uid 0 keeps it), so it stays armed.
 * A task of uid can stop us only while PDEATHSIG is armed: if the
 * parent then dies, we die with it, never left stopped with saved uid
 * 0.  test_helper_orphans checks it against a DM that stops the probe.
 */
static XLREAPER__HELPER_CODE int nproc_mark(const nproc_asker *q, uid_t uid)
{
    long r;

    /* Saved uid 0 lets the real and effective uids both go to 0 in one
     * call; the real uid 0 is never marked. */
    if ((r = xlreaper__raw(SYS_setresuid, 0, 0, -1)) < 0 ||
        (r = set_nproc(q, 0)) < 0 ||
        (r = xlreaper__helper_setresuid(q->parent, -1, uid, -1)) < 0 ||
        (r = xlreaper__raw(SYS_setresuid, uid, -1, -1)) < 0)
        return (int)r;
    return 0;
}

/* 1: uid has limit or more other tasks (the mark stays); 0: fewer (the
 * mark is gone); -errno: neither answer. */
static XLREAPER__HELPER_CODE int nproc_at_least(const nproc_asker *q,
                                                unsigned long limit)
{
    static char *const argv[] = { "/", NULL };
    static char *const envp[] = { NULL };
    long r = set_nproc(q, limit);

    if (r < 0)
        return (int)r;
    r = xlreaper__raw(SYS_execve, "/", argv, envp);
    if (r == -EAGAIN)
        return 1;
    /* Past the mark's check the kernel opens "/" (a directory: EACCES);
     * with fs.file-max reached it cannot, and a task without effective
     * CAP_SYS_ADMIN, as this one is, gets ENFILE: also past the check,
     * so also fewer (docs/facts.md F20). */
    if (r == -EACCES || r == -ENFILE)
        return 0;
    return r < 0 ? (int)r : -EINVAL; /* an execve of "/" that worked */
}

long XLREAPER__HELPER_CODE xlreaper__nproc_others(pid_t parent, uid_t uid,
                                                  unsigned long max)
{
    unsigned long lo, hi;         /* lo or more others, fewer than hi */
    struct rlimit cur = { 0, 0 }; /* unwritten: every question fails */
    nproc_asker q;
    long r;

    r = xlreaper__raw6(SYS_prlimit64, 0, RLIMIT_NPROC, 0, (long)&cur, 0, 0);
    if (r < 0)
        return r;
    q.hard = cur.rlim_max;
    q.parent = parent;
    if ((r = nproc_mark(&q, uid)) < 0)
        return r;
    r = nproc_at_least(&q, 1);
    if (r <= 0)
        return r; /* the common answer: none, in one question */
    /* Doubling keeps the mark (each question fails); the halving that
     * follows marks afresh before each question. */
    if (max > q.hard)
        max = q.hard;
    for (lo = 1, hi = 2;; lo = hi, hi *= 2) {
        if (hi > max)
            return (long)max;
        r = nproc_at_least(&q, hi);
        if (r < 0)
            return r;
        if (!r)
            break;
    }
    while (hi - lo > 1) {
        unsigned long mid = lo + (hi - lo) / 2;

        if ((r = nproc_mark(&q, uid)) < 0 || (r = nproc_at_least(&q, mid)) < 0)
            return r;
        if (r)
            lo = mid;
        else
            hi = mid;
    }
    return (long)lo;
}

/* ---------- the helpers ---------- */

int XLREAPER__HELPER_CODE xlreaper__helper_main(void *opaque)
{
    const xlreaper__helper_vm *h = opaque;

    xlreaper__helper_prelude(h->wfd, h->parent);
    h->fn(h->wfd, h->arg);
    xlreaper__child_exit(127); /* fn does not return */
    return 127;
}

XLREAPER__HELPER_CODE void __attribute__((noreturn))
xlreaper__probe_child(int wfd, void *arg)
{
    const xlreaper__probe_args *a = arg;
    /* The parent the prelude checked, or we die of PDEATHSIG. */
    pid_t parent = (pid_t)xlreaper__raw(SYS_getppid, 0, 0, 0);
    long n;

    n = xlreaper__raw(SYS_setgroups, 0, NULL, 0);
    if (n < 0)
        xlreaper__child_fail(wfd, PROBE_GROUPS, (int)-n, 0);
    n = xlreaper__nproc_others(parent, a->uid, a->max);
    if (n < 0)
        xlreaper__child_fail(wfd, PROBE_COUNT, (int)-n, a->uid);
    xlreaper__child_send(wfd, 0, 0, n);
    xlreaper__child_exit(0);
}

/* ---------- the kill ---------- */

/*
 * The kill, written once: the killer helper makes it (below), and so
 * does a caller's own thread when no task can be created
 * (xlreaper_reap.c's kill_in_thread).  Raw system calls, which change
 * the calling task's ids alone: a thread's other threads keep theirs.
 *
 * The task takes the ids (pet, dm, 0) and calls kill(-1, SIGKILL).  The
 * kernel lets A signal B when A's real or effective uid equals B's real
 * or saved uid (or A has CAP_KILL; kill_ok_by_cred, kernel/signal.c):
 *
 *                          euid    ruid    suid
 *   compared, receiver              ====    ====
 *   compared, sender       ====    ====
 *   rogue DM tasks         dm      dm      dm
 *   root-ish tasks         0|any   0|any   0|any   (one of them is 0)
 *   the killer             dm      pet     0
 *
 * The killer's euid dm matches every rogue's ruid: they die.  Its ids
 * (dm, pet) match no root task's real or saved uid (0), nor a bystander
 * DM's: they live.  A rogue's ruid and euid (dm, dm) match neither the
 * killer's ruid (pet) nor its suid (0): it cannot signal back.  So:
 *  - the real uid is pet, a uid that runs nothing: a real uid 0 would
 *    match every root task and kill(-1) would take down the host; a
 *    real uid dm would let a rogue stop the killer before its kill
 *    (docs/facts.md F8).  The pet's own tasks would die too and could
 *    kill the killer, so the kernel count asks first, as the pet
 *    itself, that it runs none;
 *  - the saved uid is 0: it matches no DM task, and it lets the task go
 *    back to euid 0 after the kill, to take the dm uid's ids for the
 *    count that follows (xlreaper__nproc_others) or, in a thread, to
 *    become root again.
 * The change of euid from 0 clears the effective capabilities (so no
 * CAP_KILL), which is checked, since SECBIT_NO_SETUID_FIXUP would keep
 * them and kill(-1) would then take down the whole host.  The ids are
 * read back too: kill(-1) reaches what the ids the kernel holds allow,
 * whatever setresuid returned (a caller's seccomp filter can make a
 * call return 0 without making it).
 *
 * kill(-1) walks the task list holding the tasklist lock, and fork()
 * re-checks for a pending fatal signal under that lock, so no child of
 * a fork racer is born unsignalled (docs/facts.md F3).  What it returns
 * is not looked at: 0 whenever any other process exists, so it proves
 * nothing (docs/facts.md F1); the count after it is the proof.
 */

/* The kill's report: the step it stopped at, or 0 when it was made. */
static XLREAPER__HELPER_CODE int kill_report(xlreaper__child_report *rep,
                                             int step, int err, long detail)
{
    rep->step = step;
    rep->err = err;
    rep->detail = detail;
    return step;
}

/* The kill, as above (its contract: xlreaper_internal.h). */
int XLREAPER__HELPER_CODE xlreaper__kill_as_pet(pid_t parent, uid_t pet,
                                                uid_t target,
                                                xlreaper__child_report *rep)
{
    uid_t r = (uid_t)-1, e = (uid_t)-1, s = (uid_t)-1; /* unwritten: no */
    long n;

    /* Is the pet idle?  Asked as the pet itself, by the kernel count:
     * no /proc scan can see a task the count misses here, and a scan
     * could be blinded (hidepid). */
    n = xlreaper__nproc_others(parent, pet, XLREAPER__NPROC_MAX);
    if (n < 0)
        return kill_report(rep, KILLER_PET_COUNT, (int)-n, pet);
    if (n > 0)
        return kill_report(rep, KILLER_PET_BUSY, 0, n);
    /* Back to euid 0 (saved uid 0 allows it), then the killer's ids. */
    n = xlreaper__helper_setresuid(parent, -1, 0, -1);
    if (n < 0)
        return kill_report(rep, KILLER_SETRESUID, (int)-n, target);
    /* While it may (euid 0): what is about to be killed finishes dying
     * ahead of the host's other tasks (xlreaper_sched.c). */
    xlreaper__sched_hurry_dying(target);
    n = xlreaper__helper_setresuid(parent, pet, target, 0);
    if (n < 0)
        return kill_report(rep, KILLER_SETRESUID, (int)-n, target);
    if (xlreaper__raw(SYS_getresuid, &r, &e, &s) < 0 || r != pet ||
        e != target || s != 0)
        return kill_report(rep, KILLER_IDS, EPERM, 0);
    n = xlreaper__caps_none_raw(false);
    if (n < 0)
        return kill_report(rep, KILLER_CAPS, (int)-n, 0);
    xlreaper__raw(SYS_kill, -1, SIGKILL, 0);
    return kill_report(rep, 0, 0, 0);
}

/* The count after the kill.  Every task the kill reached has SIGKILL
 * pending and runs no user code again: the uid can be entered to count
 * it.  A killed task takes some microseconds to exit and be reaped:
 * with settle, a few more looks, a fraction of a fork's cost, spare the
 * reap a second round. */
long XLREAPER__HELPER_CODE xlreaper__kill_count(pid_t parent, uid_t target,
                                                bool settle)
{
    for (unsigned i = 0;; i++) {
        struct timespec ts = { 0, (long)KILLER_SETTLE_NS << i };
        long n = xlreaper__nproc_others(parent, target, XLREAPER__NPROC_MAX);

        if (n <= 0 || i == KILLER_SETTLE_LOOKS || !settle)
            return n;
        xlreaper__raw(SYS_nanosleep, &ts, NULL, 0);
    }
}

/* The killer: the kill and its count, at once, in a task of its own.
 * Reports (0, 0, n): n other tasks of target are left after the kill. */
void XLREAPER__HELPER_CODE __attribute__((noreturn))
xlreaper__killer_child(int wfd, void *arg)
{
    const xlreaper__killer_args *a = arg;
    /* The parent the prelude checked, or we die of PDEATHSIG. */
    pid_t parent = (pid_t)xlreaper__raw(SYS_getppid, 0, 0, 0);
    xlreaper__child_report rep;
    long n;

    xlreaper__sched_killer_rt();
    n = xlreaper__raw(SYS_setgroups, 0, NULL, 0);
    if (n < 0)
        xlreaper__child_fail(wfd, KILLER_GROUPS, (int)-n, 0);
    if (xlreaper__kill_as_pet(parent, a->pet, a->target, &rep))
        xlreaper__child_fail(wfd, rep.step, rep.err, rep.detail);
    n = xlreaper__kill_count(parent, a->target, a->settle);
    if (n < 0)
        xlreaper__child_fail(wfd, KILLER_COUNT, (int)-n, a->target);
    xlreaper__child_send(wfd, 0, 0, n);
    xlreaper__child_exit(0);
}

/* The kernel census's probe (xlreaper_census.c): a byte per uid of the
 * run, '1' busy or '0' not; exit 0 after the last. */
void XLREAPER__HELPER_CODE __attribute__((noreturn))
xlreaper__census_child(int wfd, void *arg)
{
    const xlreaper__census_args *a = arg;
    /* The parent the prelude checked, or we die of PDEATHSIG. */
    pid_t parent = (pid_t)xlreaper__raw(SYS_getppid, 0, 0, 0);

    if (xlreaper__raw(SYS_setgroups, 0, NULL, 0) < 0)
        xlreaper__child_exit(126);
    for (uint32_t i = 0; i < a->num; i++) {
        long n = xlreaper__nproc_others(parent, a->first + i, 1);
        char busy = n > 0 ? '1' : '0';
        long r;

        if (n < 0)
            xlreaper__child_exit(125);
        while ((r = xlreaper__raw(SYS_write, wfd, &busy, 1)) != 1)
            if (r != -EINTR)
                xlreaper__child_exit(124);
    }
    xlreaper__child_exit(0);
}

/* ---------- the FUSE abort ---------- */

struct dirent64_raw {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

/* As memset(p, 0, n * 8), which a compiler may emit for an
 * initialiser of a large array, and which this file may not call:
 * volatile stores are not turned into a call. */
static void XLREAPER__HELPER_CODE raw_zero(uint64_t *p, size_t n)
{
    volatile uint64_t *v = p;

    for (size_t i = 0; i < n; i++)
        v[i] = 0;
}

/* Writes "1" to dirfd/name/abort if dirfd/name is owned by uid; 1 if it
 * did.  The abort file is the connection owner's, mode 0200: it is
 * opened with the fsuid uid, which CAP_SETUID allows and needs neither
 * CAP_DAC_OVERRIDE nor CAP_SYS_ADMIN (xlreaper_fuse.c says why that is
 * safe).  Raw system calls only. */
static int XLREAPER__HELPER_CODE abort_if_owned(pid_t parent, int dirfd,
                                                const char *name, uid_t uid)
{
    struct statx stx;
    char path[64];
    unsigned n = 0;
    long fd, r;

    /* fusectl names a connection by a number; nothing else is ours. */
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9' || n >= sizeof(path) - sizeof("/abort"))
            return 0;
        path[n++] = *p;
    }
    if (!n)
        return 0;
    stx.stx_uid = (uint32_t)-1; /* unwritten: not the uid's */
    if (xlreaper__raw6(SYS_statx, dirfd, (long)name, AT_SYMLINK_NOFOLLOW,
                       STATX_UID, (long)&stx, 0) < 0 ||
        stx.stx_uid != uid)
        return 0;
    for (const char *p = "/abort"; *p; p++)
        path[n++] = *p;
    path[n] = '\0';
    /* setfsuid answers with the old fsuid, never an error: asked again,
     * it says whether the change was made.  Each change of fsuid clears
     * PDEATHSIG (commit_creds), hence the re-arms. */
    xlreaper__raw(SYS_setfsuid, uid, 0, 0);
    xlreaper__helper_rearm(parent);
    fd = (uid_t)xlreaper__raw(SYS_setfsuid, uid, 0, 0) != uid
             ? -EPERM
             : xlreaper__raw6(SYS_openat, dirfd, (long)path,
                              O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0, 0, 0);
    xlreaper__raw(SYS_setfsuid, 0, 0, 0);
    xlreaper__helper_rearm(parent);
    if (fd < 0)
        return 0; /* gone meanwhile: nothing left to abort */
    r = xlreaper__raw(SYS_write, fd, "1", 1);
    xlreaper__raw(SYS_close, fd, 0, 0);
    return r == 1;
}

/* Whether FUSECTL_DIR is fusectl itself, mounted: 1, 0, or -errno (the
 * kernel has no FUSE when the directory is absent). */
static int XLREAPER__HELPER_CODE fusectl_mounted(void)
{
    struct statfs sfs;
    long n;

    sfs.f_type = 0; /* unwritten: not fusectl */
    n = xlreaper__raw(SYS_statfs, (long)FUSECTL_DIR, (long)&sfs, 0);
    if (n < 0)
        return (int)n;
    return sfs.f_type == FUSECTL_SUPER_MAGIC;
}

/* The FUSE abort (xlreaper_fuse.c says why).  Reports (0, 0, n): n
 * connections of the uid aborted. */
void XLREAPER__HELPER_CODE __attribute__((noreturn))
xlreaper__fuse_abort_child(int wfd, void *arg)
{
    const xlreaper__fuse_args *a = arg;
    /* The parent the prelude checked, or we die of PDEATHSIG. */
    pid_t parent = (pid_t)xlreaper__raw(SYS_getppid, 0, 0, 0);
    /* getdents64 wants room for a whole record: a name is at most 255
     * bytes, a connection's at most 10. */
    uint64_t buf[512];
    long aborted = 0, n, dirfd;

    raw_zero(buf, sizeof(buf) / sizeof(buf[0])); /* for the analyzers */

    n = fusectl_mounted();
    if (n == -ENOENT) {
        /* No FUSE in this kernel: no connection exists. */
        xlreaper__child_send(wfd, 0, ENOENT, 0);
        xlreaper__child_exit(0);
    }
    if (n < 0)
        xlreaper__child_fail(wfd, FUSE_OPEN, (int)-n, 0);
    if (!n) {
        /* Not mounted here: mount it where only this task sees it. */
        n = xlreaper__raw(SYS_unshare, CLONE_NEWNS, 0, 0);
        if (n < 0)
            xlreaper__child_fail(wfd, FUSE_UNSHARE, (int)-n, 0);
        /* Else a mount below a shared one would appear on the host too. */
        n = xlreaper__raw6(SYS_mount, 0, (long)"/", 0, MS_REC | MS_PRIVATE, 0,
                           0);
        if (n < 0)
            xlreaper__child_fail(wfd, FUSE_PRIVATE, (int)-n, 0);
        n = xlreaper__raw6(SYS_mount, (long)"fusectl", (long)FUSECTL_DIR,
                           (long)"fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                           0, 0);
        if (n == -ENODEV) {
            /* FUSE without fusectl: no connection can be aborted. */
            xlreaper__child_send(wfd, 0, ENODEV, 0);
            xlreaper__child_exit(0);
        }
        if (n < 0)
            xlreaper__child_fail(wfd, FUSE_MOUNT, (int)-n, 0);
    }
    dirfd = xlreaper__raw6(SYS_openat, AT_FDCWD, (long)FUSECTL_DIR,
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
    if (dirfd < 0)
        xlreaper__child_fail(wfd, FUSE_OPEN, (int)-dirfd, 0);
    while ((n = xlreaper__raw(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < n;) {
            const struct dirent64_raw *d =
                (const struct dirent64_raw *)((char *)buf + off);

            aborted += abort_if_owned(parent, (int)dirfd, d->name, a->uid);
            off += d->reclen;
        }
    }
    if (n < 0)
        xlreaper__child_fail(wfd, FUSE_READDIR, (int)-n, aborted);
    xlreaper__child_send(wfd, 0, 0, aborted);
    xlreaper__child_exit(0);
}

/* ---------- a child that execs ---------- */

void XLREAPER__HELPER_CODE __attribute__((noreturn))
xlreaper__exec_child(const xlreaper__exec_args *a)
{
    /* dup3, which aarch64 has where it lacks dup2; every fd is above 2,
     * so none is its own target and none is clobbered. */
    if (xlreaper__raw(SYS_dup3, a->in_fd, 0, 0) < 0 ||
        xlreaper__raw(SYS_dup3, a->out_fd, 1, 0) < 0 ||
        xlreaper__raw(SYS_dup3, a->err_fd, 2, 0) < 0)
        xlreaper__child_exit(127);
    xlreaper__close_from_raw(3, ~0u);
    xlreaper__raw(SYS_execve, a->path, a->argv, a->envp);
    xlreaper__child_exit(127);
}
