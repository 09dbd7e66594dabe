/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_internal.h - declarations shared inside the library and with
 * its unit tests.  Nothing here is part of the public interface.
 */
#ifndef XLREAPER_INTERNAL_H
#define XLREAPER_INTERNAL_H

#include "xlreaper_os.h" /* refuses to build where the kill is unsafe */
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <linux/filter.h>

#include "xlreaper.h"

#define _hidden __attribute__((visibility("hidden")))
/* Code a helper runs in the caller's memory (xlreaper_clone.c): raw
 * system calls only, and no sanitizer bookkeeping on a stack that is
 * freed after it. */
#define XLREAPER__HELPER_CODE __attribute__((no_sanitize_address))

/* ---------- logging: the function name and errno are added ---------- */

_hidden void xlreaper__log(const xlreaper_ctx *ctx, xentoollog_level level,
                           int errnoval, const char *func, const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));

/* The macros use the `ctx` in scope, as libxl's use `gc`. */
#define LOG(l, f, ...)                                                        \
    xlreaper__log(ctx, XTL_##l, -1, __func__, f, ##__VA_ARGS__)
#define LOGE(l, f, ...)                                                       \
    xlreaper__log(ctx, XTL_##l, errno, __func__, f, ##__VA_ARGS__)
#define LOGEV(l, e, f, ...)                                                   \
    xlreaper__log(ctx, XTL_##l, (e), __func__, f, ##__VA_ARGS__)
#define LOGD(l, d, f, ...)                                                    \
    xlreaper__log(ctx, XTL_##l, -1, __func__, "domid %u: " f, (d),            \
                  ##__VA_ARGS__)
#define LOGED(l, d, f, ...)                                                   \
    xlreaper__log(ctx, XTL_##l, errno, __func__, "domid %u: " f, (d),         \
                  ##__VA_ARGS__)

/* ---------- passwd lookups, injectable for tests ---------- */

typedef struct {
    /* 0 with *found_r; or a negative XLREAPER_ERROR_*. */
    int (*by_name)(void *opaque, const char *name, uid_t *uid_r, gid_t *gid_r,
                   bool *found_r);
    /* Calls each(arg, name, uid) for every user; stops early when it
     * returns non-zero and returns that.  Else 0 or an error. */
    int (*each)(void *opaque,
                int (*fn)(void *arg, const char *name, uid_t uid), void *arg);
    /* The same over the group database: each group's name, gid and
     * NULL-terminated member list. */
    int (*each_group)(void *opaque,
                      int (*fn)(void *arg, const char *name, gid_t gid,
                                char *const *members),
                      void *arg);
    /* The group of gid: 0 with *found_r, its name in name (size n) and
     * whether it lists a member; or a negative XLREAPER_ERROR_*. */
    int (*group_by_gid)(void *opaque, gid_t gid, char *name, size_t n,
                        bool *members_r, bool *found_r);
} xlreaper__passwd_ops;

/* ---------- the context ---------- */

struct xlreaper_ctx {
    xentoollog_logger *lg;
    const xlreaper__passwd_ops *pw; /* every NSS source */
    void *pw_opaque;
    const xlreaper__passwd_ops *pw_local; /* /etc/passwd alone */
    void *pw_local_opaque;
    xlreaper_config *cfg; /* NULL until a load succeeds */
    xlreaper_lock *held;  /* the global lock, while this ctx holds it */
    /* When this ctx last let go of the global lock, and until when a
     * re-take waits for no waiter's turn (xlreaper_lock.c, Fairness). */
    uint64_t lock_released_us, lock_turn_quiet_us;
    const char *subuid_file, *subgid_file; /* NULL: /etc's; for tests */
    const char *progname;                  /* the log lines' context */
};

/* ---------- configuration ---------- */

/*
 * Checks and completes cfg's uid settings (range, pet, gid) against the
 * passwd database.  want_* are what the file said, or -1 when absent.
 * quick: XLREAPER_CONFIG_QUICK (xlreaper_uid.c says what it skips).
 */
_hidden int xlreaper__uid_settle(xlreaper_ctx *ctx, xlreaper_config *cfg,
                                 long want_base, long want_reaper, bool quick);

/*
 * xlreaper_trust.c.  Does a system.posix_acl_access value (len bytes)
 * let anyone but root, or the caller's euid, write?  gid is the file's
 * group (the owning group's entry).  0 no, 1 yes, -1 unreadable (not
 * to be trusted either); why says which entry.
 */
_hidden int xlreaper__acl_others_write(const void *xattr, size_t len,
                                       gid_t gid, char *why, size_t why_size);
/* xlreaper_path_trust, and on a refusal one line in the log: "WHAT PATH:
 * why; refusing it". */
_hidden int xlreaper__path_trust_log(xlreaper_ctx *ctx, const char *what,
                                     const char *path, unsigned flags,
                                     struct stat *st_r);

/* ---------- children that report (step, errno) to their parent ---------- */

/*
 * Used by every forked helper (killer, probe, spawn): between fork and
 * _exit or execve the child only calls async-signal-safe functions, and
 * a failing step writes one record to a CLOEXEC pipe.  EOF with no record
 * means the child reached its end (execve succeeded, or it _exited).
 * The parent reads it only within a bounded wait (xlreaper__wait_report).
 */
typedef struct {
    int step; /* caller's own step numbers, > 0 */
    int err;  /* errno */
    long detail;
} xlreaper__child_report;

typedef struct {
    int rfd, wfd;
} xlreaper__report_pipe;

_hidden int xlreaper__report_pipe_open(xlreaper_ctx *ctx,
                                       xlreaper__report_pipe *p);
_hidden void xlreaper__report_pipe_close(xlreaper__report_pipe *p);
/* Child side: writes the record and _exit(127)s. */
_hidden void xlreaper__child_fail(int wfd, int step, int err, long detail)
    __attribute__((noreturn));

/* How a bounded wait for a child ended (xlreaper_wait.c). */
typedef enum {
    XLREAPER__HELPER_DONE = 0, /* it ended by itself: status is its own */
    XLREAPER__HELPER_STOPPED,  /* it was stopped: killed, answer void */
    XLREAPER__HELPER_TIMEOUT,  /* it missed its deadline: killed, void */
    XLREAPER__HELPER_OVERFLOW, /* it wrote more than asked: killed, void */
} xlreaper__helper_end;

/*
 * The one bounded wait for a child (xlreaper_wait.c): what pid writes
 * to rfd goes to buf (at most size bytes), and pid is waited for until
 * deadline_us (xlreaper__now_us's clock), its output and its exit
 * alike.  A missed deadline or a stop is answered with SIGKILL, and the
 * child is then reaped.  0 with len, end and status (the child's wait
 * status once reaped, else -1), or _FAIL (the child killed and reaped,
 * as far as it could be).
 */
/* What the child is; each caller's child is one of these. */
typedef enum {
    /* A helper: a report no larger than a pipe holds (read once it has
     * exited; what does not fit in buf is left unread).  A stop is its
     * void answer. */
    XLREAPER__WAIT_REPORT = 1,
    /* A helper that reports as it goes, no more than a pipe holds (the
     * kernel census): each read that brings bytes moves the deadline to
     * now + progress_us. */
    XLREAPER__WAIT_PROGRESS,
    /* A program of root's in our process group (QEMU -help): a full buf
     * is too much output (killed, _OVERFLOW); a stop, which only root
     * or our terminal can cause, is waited out. */
    XLREAPER__WAIT_PROGRAM,
    /* A child that execs: only until rfd is at EOF; it is then not
     * reaped, and is the caller's. */
    XLREAPER__WAIT_EXEC,
    /* A child to end now (the audit's /proc reader): SIGKILL at once,
     * no output read; one not ended by the deadline (an uninterruptible
     * sleep) is left unreaped, _TIMEOUT with status -1. */
    XLREAPER__WAIT_KILL,
} xlreaper__wait_mode;

typedef struct {
    xlreaper__wait_mode mode;
    pid_t pid; /* our unreaped child */
    int rfd;   /* the read end of its output, or -1 */
    char *buf;
    size_t size;
    uint64_t deadline_us;
    uint64_t progress_us; /* _PROGRESS only */
    /* Set by the wait. */
    size_t len;
    int status;
    xlreaper__helper_end end;
} xlreaper__wait;

_hidden int xlreaper__wait_bounded(xlreaper_ctx *ctx, xlreaper__wait *w);

/* Child side, raw: one record, without exiting (a success carries a value
 * in detail with step 0). */
_hidden void xlreaper__child_send(int wfd, int step, int err, long detail);

/*
 * Child side, first thing after fork for a helper that will take a DM
 * uid: its own process group, PDEATHSIG, not dumpable, and every
 * descriptor but wfd closed (stdio too).  _exits on failure.
 */
_hidden void xlreaper__helper_prelude(int wfd, pid_t parent);
/*
 * Child side, raw: after a change of a helper's ids that clears
 * PDEATHSIG, before a DM task can signal it.  The kernel clears it when
 * a task's euid, egid, fsuid or fsgid changes or its permitted
 * capabilities grow: it is set again, and the helper exits if parent is
 * no longer its parent (it died before the signal was armed again).
 */
_hidden void xlreaper__helper_rearm(pid_t parent);
/* Raw setresuid in a helper, then xlreaper__helper_rearm(parent) (none
 * when parent is 0).  0 or -errno. */
_hidden long xlreaper__helper_setresuid(pid_t parent, uid_t r, uid_t e,
                                        uid_t s);

/* Closes descriptors lo..hi (close_range).  0 or -1; async-signal-safe. */
_hidden int xlreaper__close_from(unsigned lo, unsigned hi);

/*
 * Starts a helper running fn(wfd, arg) (xlreaper__helper_start), and
 * waits for it, its output into w->buf, by xlreaper__wait_bounded (w's
 * pid and rfd are set here).  0 with w's verdict, or an error.
 */
_hidden int xlreaper__run_helper_wait(xlreaper_ctx *ctx, const char *what,
                                      void (*fn)(int wfd, void *arg),
                                      void *arg, xlreaper__wait *w);
/* A wait whose buf is an xlreaper__child_report: whether it holds a
 * whole record; _FAIL for part of one from a child that ended by
 * itself. */
_hidden int xlreaper__wait_report(xlreaper_ctx *ctx, const xlreaper__wait *w,
                                  bool *reported_r);
/*
 * xlreaper__run_helper_wait for a helper that sends at most one record:
 * 0 with *end_r, *status_r and *reported_r (whether it sent *rep), or
 * an error.
 */
_hidden int xlreaper__run_helper(xlreaper_ctx *ctx, const char *what,
                                 void (*fn)(int wfd, void *arg), void *arg,
                                 uint64_t deadline_us,
                                 xlreaper__child_report *rep, bool *reported_r,
                                 int *status_r, xlreaper__helper_end *end_r);

/*
 * Starting a helper (xlreaper_clone.c): clone(CLONE_VM) on a stack of
 * its own where xlreaper_raw.h has stubs, else fork.  The child runs
 * xlreaper__helper_prelude(wfd) and fn(wfd, arg), which must use raw
 * system calls only and never return.  vm and arg must live until the
 * child is reaped; then xlreaper__helper_finish(vm).
 */
typedef struct {
    void *stack;
    bool held; /* the caller's dumpable flag is saved */
    void (*fn)(int wfd, void *arg);
    void *arg;
    int wfd;
    pid_t parent;
} xlreaper__helper_vm;

_hidden int xlreaper__helper_start(xlreaper_ctx *ctx, const char *what,
                                   void (*fn)(int wfd, void *arg), void *arg,
                                   int wfd, xlreaper__helper_vm *vm,
                                   pid_t *pid_r);
_hidden void xlreaper__helper_finish(xlreaper__helper_vm *vm);
/* Returned by xlreaper__helper_start (and run_helper) when clone or fork
 * failed with EAGAIN: no task can be created (pids or threads are
 * exhausted).  Never returned by a public function. */
#define XLREAPER__ERROR_NO_TASK -100
/* The caller's dumpable flag, saved by the first holder and put back by
 * the last: a change of euid on any task sharing the memory clears it. */
_hidden void xlreaper__dumpable_hold(void);
_hidden void xlreaper__dumpable_release(void);
/* Child side, raw: exit_group(status). */
_hidden void xlreaper__child_exit(int status) __attribute__((noreturn));
/* Child side, raw: close_range, or one by one.  0 or -errno. */
_hidden int xlreaper__close_from_raw(unsigned lo, unsigned hi);
/* Child side, raw: as xlreaper__caps_none, 0 or -errno. */
_hidden int xlreaper__caps_none_raw(bool permitted_too);

/* waitpid, looping on EINTR; a stop is answered with SIGKILL.  For a
 * child already killed, or one that cannot be stopped.  0 and
 * *status_r, or _FAIL. */
_hidden int xlreaper__wait_child(xlreaper_ctx *ctx, pid_t pid, int *status_r);

/* Raw system calls: per-thread, no glibc setxid broadcast. */
_hidden int xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s);
_hidden int xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s);
_hidden int xlreaper__sys_setgroups0(void);
/* 0 when the calling task has no effective (and, if permitted_too, no
 * permitted) capability, else -1 with errno (EPERM when it has some). */
_hidden int xlreaper__caps_none(bool permitted_too);
/* 1 if capability cap is in this task's effective set, 0 if not, -1 with
 * errno if capget failed. */
_hidden int xlreaper__cap_effective(int cap);

/* ---------- what helpers run (xlreaper_helper_raw.c) ---------- */

/* The killer (xlreaper_helper_raw.c): its steps, as it reports them,
 * and what it is given. */
enum {
    KILLER_GROUPS = 1,
    KILLER_PET_COUNT,
    KILLER_PET_BUSY,
    KILLER_SETRESUID,
    KILLER_IDS,
    KILLER_CAPS,
    KILLER_COUNT,
};

typedef struct {
    uid_t pet, target;
    bool settle; /* look again while the count is not 0 (first round) */
} xlreaper__killer_args;

/* After its kill the killer looks again, 50 us apart and then twice as
 * far each time, about 1.6 ms in all, while the count is not yet 0:
 * killed tasks take that long to exit on a loaded host, and a look is
 * some tens of microseconds where a second round (a scan of /proc and
 * another fork) is milliseconds (bench_lock, 64 racers).  Zombies of a
 * slow init stay past it, and the scan then says so. */
#define KILLER_SETTLE_LOOKS 5
#define KILLER_SETTLE_NS 50000

/* The count probe: its steps, and what it is given. */
enum {
    PROBE_GROUPS = 1,
    PROBE_COUNT,
};

typedef struct {
    uid_t uid;
    unsigned long max;
} xlreaper__probe_args;

/*
 * The kill (xlreaper_helper_raw.c says why its ids are (pet, target,
 * 0)), raw system calls only, made by the killer and by a caller's
 * thread when no task can be created.  The calling task must be (0, 0,
 * 0); parent is a helper's parent (each change of ids re-arms its
 * PDEATHSIG), or 0 in a task that is no helper.  kill_as_pet: 0 when
 * the kill is made and the task is (pet, target, 0), else the step
 * that failed (KILLER_*) with *rep, and no kill.  kill_count, after it:
 * target's other tasks as the kernel counts them, looked at again
 * while not 0 if settle, or -errno; the task is left (target, target,
 * 0).
 */
_hidden int xlreaper__kill_as_pet(pid_t parent, uid_t pet, uid_t target,
                                  xlreaper__child_report *rep);
_hidden long xlreaper__kill_count(pid_t parent, uid_t target, bool settle);

/* Helper entry points, raw system calls only: the killer, the count
 * probe, and the clone start that runs the prelude and then one of
 * them (its argument an xlreaper__helper_vm). */
_hidden void xlreaper__killer_child(int wfd, void *arg)
    __attribute__((noreturn));
_hidden void xlreaper__probe_child(int wfd, void *arg)
    __attribute__((noreturn));
_hidden int xlreaper__helper_main(void *opaque);

/* A forked child that becomes path (xlreaper_qemu_args.c's QEMU
 * -help): in_fd, out_fd and err_fd (all above 2) as its stdio, nothing
 * else open, execve; exit 127 if it cannot. */
typedef struct {
    const char *path;
    char *const *argv;
    char *const *envp;
    int in_fd, out_fd, err_fd;
} xlreaper__exec_args;

_hidden void xlreaper__exec_child(const xlreaper__exec_args *a)
    __attribute__((noreturn));

/* The kernel census's probe (xlreaper_census.c): asks about uids first
 * to first + num - 1. */
typedef struct {
    uid_t first;
    uint32_t num;
} xlreaper__census_args;

_hidden void xlreaper__census_child(int wfd, void *arg)
    __attribute__((noreturn));

/* ---------- the kernel count ---------- */

/*
 * Child side, raw system calls only (xlreaper_count.c).  The calling
 * task, which must have saved uid 0, becomes (uid, uid, 0) without
 * effective capabilities and returns how many other tasks the kernel
 * charges to uid (at most max), or -errno.  No task is created.  parent:
 * a helper's parent (each change of ids re-arms its PDEATHSIG), or 0 in
 * a task that is no helper.
 */
_hidden long xlreaper__nproc_others(pid_t parent, uid_t uid,
                                    unsigned long max);

/* The largest count xlreaper__nproc_others is asked for. */
#define XLREAPER__NPROC_MAX (1ul << 23)

/* The deadline for a helper that enters a DM uid, from now. */
_hidden uint64_t xlreaper__helper_deadline(const xlreaper_ctx *ctx);

/* ---------- scheduling a reap (xlreaper_sched.c) ---------- */

typedef struct {
    int nice;
    bool niced;
} xlreaper__sched_saved;

/* The calling thread to nice -20 if it runs SCHED_OTHER and may;
 * restore undoes it. */
_hidden void xlreaper__sched_boost(xlreaper__sched_saved *saved);
_hidden void xlreaper__sched_restore(const xlreaper__sched_saved *saved);
/* Child side: the calling task to SCHED_FIFO 1, if it may. */
_hidden void xlreaper__sched_killer_rt(void);
/* Parent side, right after the clone: pid to SCHED_FIFO 1 if fn is the
 * killer (xlreaper__killer_child), if it may. */
_hidden void xlreaper__sched_killer_started(void (*fn)(int wfd, void *arg),
                                            pid_t pid);
/* nice -20 for every task whose real uid is uid (after its kill). */
_hidden void xlreaper__sched_hurry_dying(uid_t uid);

/* ---------- /proc ---------- */

/* /proc opened twice: *procfd_r for openat, *dir_r to list it.  The
 * caller closes both.  0 or _FAIL (logged). */
_hidden int xlreaper__proc_open(xlreaper_ctx *ctx, int *procfd_r, DIR **dir_r);
/* The value after "Key:" on its own line of /proc/<pid>/status text,
 * blanks skipped, or NULL; *eol_r (if not NULL) is its line's end. */
_hidden const char *xlreaper__status_field(const char *text, const char *end,
                                           const char *key,
                                           const char **eol_r);
/* n unsigned numbers (base 10 or 16) separated by blanks, read within
 * [p, end) only.  0, or -1 when one is missing or overflows. */
_hidden int xlreaper__parse_numbers(const char *p, const char *end, int base,
                                    unsigned long long *out, unsigned n);
/* Parses the text of /proc/<pid>[/task/<tid>]/status into t, and the
 * thread group's size into *threads_r.  0, or _INVAL when a field is
 * missing or malformed. */
_hidden int xlreaper__parse_status(const char *text, size_t len,
                                   xlreaper_task *t, unsigned *threads_r);

/*
 * The most of /proc/<pid>/status read: a task shows about 1.4 KiB
 * (1397 bytes in 59 lines on Linux 6.18); what makes it longer is a
 * Groups: line of many supplementary groups or a Cpus_allowed: mask of
 * thousands of CPUs, neither of which a DM can give itself (setgroups
 * needs CAP_SETGID over the host's gids).  A status that does not fit is an
 * error, never a cut text: cut, it loses Threads: and SigPnd: (so a
 * multi-threaded process would pass for its leader), or at a smaller
 * size the Uid: line that says whose the task is.
 */
#define XLREAPER__STATUS_MAX 8192
#define XLREAPER__ERROR_TOO_LONG -101

/* One task's status, read and parsed. */
typedef struct {
    char text[XLREAPER__STATUS_MAX + 1]; /* NUL-terminated */
    size_t len;
    xlreaper_task t;
    unsigned threads; /* the thread group's size */
} xlreaper__proc_status;

/* Reads and parses dirfd/rel/status: 1 if it parsed; 0 if the task is
 * gone or its text does not parse; XLREAPER__ERROR_TOO_LONG if it is
 * longer than XLREAPER__STATUS_MAX. */
_hidden int xlreaper__proc_read_status(int dirfd, const char *rel,
                                       xlreaper__proc_status *st);

/*
 * Where a task sleeps, the kernel's name for it, printable, into buf:
 * dirfd/rel/wchan, or "" when it cannot be read or the kernel names
 * none ("0").  Only wchan: reading it takes no lock the task can hold,
 * where /proc/PID/stack takes the task's exec_update_lock (a task held
 * in an execve holds it: the read would wait on the task) and needs
 * CAP_SYS_ADMIN, and cmdline takes its mmap lock.
 */
_hidden void xlreaper__read_wchan(int dirfd, const char *rel, char *buf,
                                  size_t size);

/* Returned by a visit to end the walk early, without an error. */
#define XLREAPER__PROC_STOP 1

/* What a walk over /proc does with each task. */
typedef struct xlreaper__proc_walker xlreaper__proc_walker;
struct xlreaper__proc_walker {
    /* If not NULL: true to pass over /proc/<pid> before reading it. */
    bool (*skip_pid)(void *arg, int procfd, const char *pid);
    /* A task read: rel is "<pid>" (a single-threaded process) or
     * "<pid>/task/<tid>", relative to procfd.  0 to go on. */
    int (*visit)(void *arg, int procfd, const char *rel,
                 const xlreaper__proc_status *st);
    void *arg;
};

/* Visits every task in /proc (d and procfd from xlreaper__proc_open)
 * that can be read: the leader of a single-threaded process, each
 * thread of a multi-threaded one.  0; the first error a visit returns;
 * or _FAIL (logged) for a status too long to be read whole. */
_hidden int xlreaper__proc_walk(xlreaper_ctx *ctx, int procfd, DIR *d,
                                xlreaper__proc_walker *wk);

_hidden int xlreaper__task_list_add(xlreaper_task_list *list,
                                    const xlreaper_task *t);

/* xlreaper_scan_uid for two uids in one pass over /proc: each one's tasks
 * are appended to its own list (a task with both goes to both). */
_hidden int xlreaper__scan_uids(xlreaper_ctx *ctx, uid_t uid,
                                xlreaper_task_list *list, uid_t uid2,
                                xlreaper_task_list *list2);

/*
 * The tasks of uid after a kill, when the kernel counts expect of them
 * (by real uid).  First only processes whose /proc/PID is owned by uid
 * (the leader's euid: a cheap prefilter), stopping once expect tasks of
 * real uid uid are found.  If that falls short: *short_r and nothing
 * listed, unless full_if_short, and then every task on the host,
 * checked against the kernel's own total: *sound_r is false when /proc
 * shows fewer tasks than the kernel has (hidepid, another pid
 * namespace), and then an empty list proves nothing.  Appends to list.
 * 0, _NOMEM or _FAIL.
 */
_hidden int xlreaper__scan_after_kill(xlreaper_ctx *ctx, uid_t uid,
                                      unsigned long expect, bool full_if_short,
                                      xlreaper_task_list *list, bool *sound_r,
                                      bool *short_r);

/* ---------- small helpers ---------- */

/* A growing string (xlreaper_strbuf.c); oom set on ENOMEM, and then
 * every later printf is a no-op.  Zero-initialise; dispose frees. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} xlreaper__sb;

_hidden void xlreaper__sb_printf(xlreaper__sb *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
_hidden void xlreaper__sb_dispose(xlreaper__sb *sb);

/*
 * The growable array (xlreaper_array.c): room for element num of an
 * array of *cap elements of size bytes.  When num reaches *cap the array
 * is realloc'd to twice *cap (first when empty) and *cap updated.
 * Returns the array to store back, or NULL when out of memory or when
 * the size would overflow; then the old array is still whole and *cap
 * unchanged.
 *
 *     n = xlreaper__grow(l->tasks, l->num, &l->cap, sizeof(*n), 16);
 *     if (!n)
 *         return XLREAPER_ERROR_NOMEM;
 *     l->tasks = n;
 *     l->tasks[l->num++] = *t;
 */
_hidden void *xlreaper__grow(void *items, unsigned num, unsigned *cap,
                             size_t size, unsigned first);

_hidden uint64_t xlreaper__now_us(void);
_hidden void xlreaper__sleep_us(uint64_t us);
/* Strict decimal (no sign, no space, no leading zero) up to max.
 * 0 or -1. */
_hidden int xlreaper__parse_ulong(const char *s, size_t len, unsigned long max,
                                  unsigned long *v_r);
/* us microseconds as a timespec: a point of xlreaper__now_us's clock
 * (CLOCK_MONOTONIC, for pthread_cond_timedwait) or a span. */
_hidden struct timespec xlreaper__timespec_us(uint64_t us);
/* read(2) until EOF or max bytes; loops on EINTR.  Bytes read, or -1. */
_hidden ssize_t xlreaper__read_all(int fd, char *buf, size_t max);
/* write(2) everything, looping on EINTR and short writes.  0 or -1. */
_hidden int xlreaper__write_all(int fd, const void *buf, size_t len);
/* close(2) keeping errno. */
_hidden void xlreaper__close_keep_errno(int fd);

/* ---------- the runas window (xlreaper_dmpid.c) ---------- */

/* Field 22 (starttime) of /proc/PID/stat text, read within len bytes
 * (not NUL-terminated).  0, or -1 when it is malformed. */
_hidden int xlreaper__parse_stat_starttime(const char *text, size_t len,
                                           unsigned long long *start_r);
/* /proc/PID/stat into buf, NUL-terminated: its length, or -1. */
_hidden ssize_t xlreaper__proc_stat(pid_t pid, char *buf, size_t size);
/* Field 22 of /proc/<pid>/stat, the start time in clock ticks.  0 or -1
 * with errno. */
_hidden int xlreaper__proc_starttime(pid_t pid, unsigned long long *start_r);
/* Under the lock: records pid as domid's DM.  0, _NOMEM or _FAIL
 * (logged). */
_hidden int xlreaper__dmpid_record(xlreaper_ctx *ctx, uint32_t domid,
                                   pid_t pid);
/* Under the lock: kills domid's recorded DM if it is still the process
 * recorded, and removes the record.  *killed_r its pid, or 0.  0,
 * _NOMEM or _FAIL (the signal failed; the record stays). */
_hidden int xlreaper__dmpid_kill(xlreaper_ctx *ctx, uint32_t domid,
                                 pid_t *killed_r);

/* ---------- root's record of a DM (xlreaper_dmrec.c) ---------- */

typedef struct {
    uint32_t domid;
    pid_t pid;
    unsigned long long start;
    bool runas; /* uid_switch "runas": QEMU takes the uid itself */
    uid_t uid;
    gid_t gid;
    char *root; /* the root it chrooted to or was asked to; NULL none */
    unsigned num_rl;
    struct {
        int resource;
        uint64_t limit;
    } rl[XLREAPER_MAX_RLIMITS + 1];
    bool nnp, unshare_ns, unshare_net;
    bool seccomp_setid; /* the set-id filter was installed */
    char *path;         /* what it exec'd */
    char *argv;         /* its arguments, NUL-separated, as /proc shows */
    size_t argv_len;
} xlreaper__dmrec;

_hidden void xlreaper__dmrec_dispose(xlreaper__dmrec *r);
/* <dir of lock_file>/xl-reaper-dm-<domid>.record, malloc'd, or NULL. */
_hidden char *xlreaper__dmrec_path(const xlreaper_config *cfg, uint32_t domid);
/* Parses a record's text.  0 or _INVAL. */
_hidden int xlreaper__dmrec_parse(const char *text, size_t len,
                                  xlreaper__dmrec *r);
/* Reads domid's record.  1 and *r, 0 when there is none, or _INVAL
 * (not a file only root may read and write, or not a record: *why
 * says which). */
_hidden int xlreaper__dmrec_read(xlreaper_ctx *ctx, uint32_t domid,
                                 xlreaper__dmrec *r, char *why, size_t whylen);
/* Writes r as domid's record, 0600, atomically.  0, _NOMEM or _FAIL
 * (logged). */
_hidden int xlreaper__dmrec_write(xlreaper_ctx *ctx, const xlreaper__dmrec *r);
/* After a reap of domid: removes its record once the process it names
 * is gone. */
_hidden void xlreaper__dmrec_reaped(xlreaper_ctx *ctx, uint32_t domid);

/* ---------- reap: tasks stuck on FUSE (xlreaper_fuse.c) ---------- */

/* Aborts every FUSE connection owned by uid (fusectl, mounted in a
 * helper's private mount namespace); *aborted_r how many.  0 (also
 * when the host has no FUSE), _FAIL (logged) or _NOMEM. */
_hidden int xlreaper__fuse_abort_uid(xlreaper_ctx *ctx, uint32_t domid,
                                     uid_t uid, uint64_t deadline_us,
                                     unsigned *aborted_r);

#define FUSECTL_DIR "/sys/fs/fuse/connections"
/* fusectl's f_type (FUSE_CTL_SUPER_MAGIC, fs/fuse/control.c; not in the
 * uapi headers). */
#define FUSECTL_SUPER_MAGIC 0x65735543

/* Its helper (xlreaper_helper_raw.c): the steps it reports, and what it
 * is given.  It reports (0, 0, n): n connections of uid aborted; or
 * (0, errno, 0) when fusectl cannot be mounted (no FUSE). */
enum {
    FUSE_UNSHARE = 1,
    FUSE_PRIVATE,
    FUSE_MOUNT,
    FUSE_OPEN,
    FUSE_READDIR,
};

typedef struct {
    uid_t uid;
} xlreaper__fuse_args;

_hidden void xlreaper__fuse_abort_child(int wfd, void *arg)
    __attribute__((noreturn));

/* ---------- descriptors, the lock, the DM's cgroup ---------- */

/* fd moved to a number above 2 (close-on-exec), so that it cannot pass
 * for a standard descriptor in a child; fd itself if it already is.  The
 * new fd, or -1 with errno (fd is closed then). */
_hidden int xlreaper__fd_above_stdio(int fd);

/* The lock's descriptor (above 2, close-on-exec), for a spawn in place
 * that must hold the lock until execve. */
_hidden int xlreaper__lock_fd(const xlreaper_lock *lock);

/* Lets go of the flock, keeping the object (and its wait_us); the ctx no
 * longer holds it.  Retake takes it again, waiting until deadline
 * (xlreaper__now_us's clock): 0, _LOCK_TIMEOUT (logged unless quiet)
 * or _FAIL; 0 at once when it is held. */
_hidden void xlreaper__lock_drop(xlreaper_lock *lock);
_hidden int xlreaper__lock_retake(xlreaper_lock *lock, uint64_t deadline,
                                  bool quiet);
/* A reap's mark on uid, held from its first round to its verdict
 * (xlreaper_lock.c says why): *fd_r keeps it; unmark closes it. */
_hidden int xlreaper__reaping_mark(xlreaper_ctx *ctx, uid_t uid, int *fd_r);
_hidden void xlreaper__reaping_unmark(int fd);
/* Under lock: whether any reap has uid marked.  0 or _FAIL. */
_hidden int xlreaper__reaping_marked(xlreaper_ctx *ctx,
                                     const xlreaper_lock *lock, uid_t uid,
                                     bool *marked_r);
/* Asked of the lock file fd has open (its own locks not counted), from
 * the locks of that one inode alone (xlreaper_lock.c says how): whether
 * a waiter of ours says it waits; the pid of the holder if one of ours
 * holds the lock, 0 if none does, -1 if that cannot be asked. */
_hidden bool xlreaper__lock_waiter_seen(int fd);
_hidden long xlreaper__lock_holder(int fd);
/* The lock held (taken, or *lock_r retaken), with no reap of uid under
 * way: what starts a task in uid calls this.  Waits at most
 * lock_timeout_ms for both.  0, _BUSY (still being reaped: logged),
 * _LOCK_TIMEOUT, _FAIL, _NOMEM; on failure *lock_r may be set and not
 * held: release it. */
_hidden int xlreaper__lock_acquire_unmarked(xlreaper_ctx *ctx, uid_t uid,
                                            xlreaper_lock **lock_r);

/* 0 when path is a directory on a cgroup2 file system, else _INVAL. */
_hidden int xlreaper__cgroup_check(xlreaper_ctx *ctx, uint32_t domid,
                                   const char *path);
/*
 * Makes parent/dm-<domid> (refusing one that still has tasks: _BUSY),
 * bounds it when memory_max is not 0 (memory.max, memory.swap.max 0;
 * the memory controller added to parent's cgroup.subtree_control when
 * its cgroup.controllers offers it, else _INVAL) and opens its
 * cgroup.procs for writing.  *dir_r is malloc'd.  0, _BUSY, _INVAL,
 * _FAIL, _NOMEM; a refusal removes the directory it made.
 */
_hidden int xlreaper__cgroup_prepare(xlreaper_ctx *ctx, uint32_t domid,
                                     const char *parent, uint64_t memory_max,
                                     char **dir_r, int *procs_fd_r);
/*
 * The belt before a uid kill: "1" into parent/dm-<domid>/cgroup.kill,
 * when that cgroup exists.  Never the guarantee, so a failure is logged
 * and nothing more.
 */
_hidden void xlreaper__cgroup_kill(xlreaper_ctx *ctx, uint32_t domid,
                                   const char *parent);
/* After a uid reaped empty: removes parent/dm-<domid>, unless tasks
 * outside the uid still populate it (logged; the next spawn refuses). */
_hidden void xlreaper__cgroup_remove(xlreaper_ctx *ctx, uint32_t domid,
                                     const char *parent);

#endif /* XLREAPER_INTERNAL_H */
