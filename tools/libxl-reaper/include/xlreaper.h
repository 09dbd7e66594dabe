/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper.h - make a Xen guest's device model unable to outlive its domain.
 *
 * Every device model (DM) runs under its own uid, base + domid.  To kill
 * one, a forked child takes the global lock, calls
 * setresuid(pet, dm_uid, 0) and kill(-1, SIGKILL): the kernel signals
 * every task it may in one pass under the tasklist lock, so a fork racer
 * cannot slip through, and the target cannot signal back.  Then the uid
 * is verified empty.  The argument is written out beside the kill
 * (xlreaper_helper_raw.c) and the verification (xlreaper_reap.c).
 *
 * Order of calls:
 *
 *     xentoollog_logger *lg = ...;          (caller's, e.g. stdiostream)
 *     xlreaper_ctx *ctx;
 *     xlreaper_ctx_alloc(&ctx, lg);
 *     xlreaper_config_load(ctx, path, flags);    validates the uid range
 *
 *     xlreaper_domid_parse("5", &domid);
 *     xlreaper_dm_ids(ctx, domid, &uid, &gid);
 *
 *     xlreaper_reap_result res;
 *     xlreaper_reap_result_init(&res);
 *     rc = xlreaper_reap(ctx, NULL, domid, &res);   lock, kill, verify
 *     xlreaper_reap_result_dispose(&res);
 *
 *     xlreaper_spawn_plan *plan;
 *     xlreaper_spawn_plan_new(ctx, domid, prog, argv, &plan);
 *     xlreaper_spawn_exec(ctx, plan, flags);   returns only on failure
 *     xlreaper_spawn_plan_free(plan);
 *
 *     xlreaper_ctx_free(ctx);
 *
 * Conventions: functions return 0 or a negative XLREAPER_ERROR_*; they
 * never exit and never print, they log through the caller's logger.
 * Out-parameters end in _r.  Structs have _init and an idempotent
 * _dispose.  A ctx is not safe for concurrent use from two threads; use
 * one ctx per thread.  All of it needs root.
 */
#ifndef XLREAPER_H
#define XLREAPER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <xentoollog.h>

/* ---------- errors ---------- */

#define XLREAPER_ERROR_FAIL -1  /* a system call failed; logged */
#define XLREAPER_ERROR_INVAL -2 /* bad input or configuration */
#define XLREAPER_ERROR_NOMEM -3
#define XLREAPER_ERROR_LOCK_TIMEOUT -4 /* the global lock was not had */
#define XLREAPER_ERROR_REMAIN -5       /* live tasks remain: see result */
#define XLREAPER_ERROR_BUSY -6         /* the DM uid still has tasks */
#define XLREAPER_ERROR_PERM -7         /* needs root */
#define XLREAPER_ERROR_STUCK                                                  \
    -8 /* tasks stuck in D state with
                                         * SIGKILL pending remain, and
                                         * nothing could end them: see
                                         * result */

/* A static string naming rc; never NULL. */
const char *xlreaper_strerror(int rc);

/* ---------- context ---------- */

typedef struct xlreaper_ctx xlreaper_ctx;

/*
 * lg is borrowed: it must outlive the ctx, and xlreaper_ctx_free does not
 * destroy it.  Returns 0, XLREAPER_ERROR_INVAL (lg NULL) or _NOMEM.
 */
int xlreaper_ctx_alloc(xlreaper_ctx **ctx_r, xentoollog_logger *lg);
void xlreaper_ctx_free(xlreaper_ctx *ctx); /* NULL is fine */

/*
 * The name the library's log lines carry as xentoollog's context, so
 * that a program's own lines and the library's start alike ("xl-reaperd:
 * error: ..."); the default is the program's invocation name.  name is
 * borrowed: a string literal, or one that outlives the ctx.
 */
void xlreaper_ctx_set_progname(xlreaper_ctx *ctx, const char *name);

/*
 * A program's own line, as the library's are: on the ctx's logger,
 * under its progname, errno kept; errnoval as xtl_log's (-1: none).
 * So that the programs need no log wrapper of their own.
 */
void xlreaper_log(const xlreaper_ctx *ctx, xentoollog_level level,
                  int errnoval, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with a va_list (as xtl_logv is xtl_log's), for a program's
 * own variadic wrapper. */
void xlreaper_vlog(const xlreaper_ctx *ctx, xentoollog_level level,
                   int errnoval, const char *fmt, va_list al)
    __attribute__((format(printf, 4, 0)));

/* CLOCK_MONOTONIC in microseconds: the clock of every time the library
 * reports (start_us) and of its deadlines, for a program to measure
 * against (and to use, rather than a copy of it). */
uint64_t xlreaper_now_us(void);

/* ---------- configuration ---------- */

#define XLREAPER_DEFAULT_CONFIG "/etc/xen/xl-reaper.conf"
#define XLREAPER_DEFAULT_LOCK_FILE "/var/run/xen/dm-reaper-lock"

/* The passwd users that upstream libxl 4.17 uses; we agree with them. */
#define XLREAPER_USER_RANGE_BASE "xen-qemuuser-range-base"
#define XLREAPER_USER_REAPER "xen-qemuuser-reaper"
#define XLREAPER_USER_SHARED "xen-qemuuser-shared"

/* How a DM's gid is chosen. */
typedef enum {
    XLREAPER_GID_PER_DOMAIN = 0, /* gid = the DM's uid (default) */
    XLREAPER_GID_RANGE_BASE,     /* every DM: the range base's gid
                                  * (upstream libxl's behaviour) */
} xlreaper_gid_mode;

/* How the DM's uid is taken on at spawn. */
typedef enum {
    XLREAPER_UID_SWITCH_EXEC = 0, /* we switch before execve */
    XLREAPER_UID_SWITCH_RUNAS,    /* QEMU switches itself (-runas) */
} xlreaper_uid_switch;

/* One resource limit applied between fork and execve. */
typedef struct {
    int resource;    /* RLIMIT_* */
    const char *key; /* its config key, e.g. "fsize_limit" */
    uint64_t limit;  /* soft = hard = limit */
} xlreaper_rlimit;

#define XLREAPER_MAX_RLIMITS 8

/*
 * The settings in force, read-only to callers, filled by
 * xlreaper_config_load and valid until the next load or ctx_free.  The
 * *_from strings say where a value came from, for `xl-reaper check`.
 */
typedef struct {
    const char *path; /* file read, or NULL: defaults only */

    uid_t dm_uid_base; /* uid of domid 0 */
    const char *dm_uid_base_from;
    uid_t reaper_uid; /* the pet: never runs anything */
    const char *reaper_uid_from;
    xlreaper_gid_mode dm_gid_mode;
    gid_t range_base_gid; /* for XLREAPER_GID_RANGE_BASE */

    const char *lock_file;
    unsigned lock_timeout_ms;
    unsigned reap_timeout_ms; /* deadline for kill + verification */

    /* Spawn. */
    unsigned nproc_limit; /* RLIMIT_NPROC: counts threads too */
    xlreaper_rlimit rlimits[XLREAPER_MAX_RLIMITS]; /* NPROC excluded */
    unsigned num_rlimits;
    xlreaper_uid_switch uid_switch;
    bool reap_stale;           /* reap a busy DM uid before spawn */
    bool unshare_ipc_mount;    /* unshare(CLONE_NEWNS|CLONE_NEWIPC) */
    bool unshare_net;          /* unshare(CLONE_NEWNET) */
    bool dumpable;             /* PR_SET_DUMPABLE after the switch */
    const char *chroot_base;   /* chroot to <base>/qemu-root-<domid>
                                  * when that directory exists */
    bool add_dm_restrict;      /* runas: add -xen-domid-restrict and
                                  * the chroot to a line without them */
    const char *cgroup_parent; /* cgroup v2 dir; NULL: no cgroup.
                                  * The DM joins <it>/dm-<domid> */
    uint64_t dm_memory_max;    /* memory.max of <cgroup_parent>/dm-<domid>
                                  * in bytes (memory.swap.max 0 with
                                  * it); 0: none written */
    unsigned dm_oom_score_adj; /* the DM's oom_score_adj, 0..1000, set
                                  * between fork and execve */
    const char *qemu_path;     /* for qemu-dm-restrict */

    /* Audit. */
    unsigned dm_max_file_locks; /* more file locks than this on a DM's
                                 * open files is a violation */

    /* Daemon. */
    unsigned sweep_interval_s;
    const char *metrics_file; /* xl-reaperd's metrics (node_exporter's
                                  * textfile format), or NULL: none */

    /* Not a key: where /etc/subuid or /etc/subgid overlaps the DM
     * range ("file:line (user: lo..hi)"), or NULL.  Then the kernel
     * count misses tasks in user namespaces (xlreaper_subid.c); `check`
     * refuses such a config. */
    char *subid_overlap;
} xlreaper_config;

#define XLREAPER_CONFIG_MUST_EXIST 1u /* a missing file is an error */
/*
 * For a kill, uid or status: the uid range is checked against
 * /etc/passwd alone, without loading NSS modules (their first call
 * costs more than a kill).  A name the config leaves to passwd is still
 * asked of NSS when /etc/passwd lacks it.  What this skips (a user of
 * another NSS source inside the range, or disagreeing with dm_uid_base
 * or reaper_uid) is refused by every full load: `check`, `audit`,
 * `spawn`, the wrapper and the daemon.
 */
#define XLREAPER_CONFIG_QUICK 2u

/*
 * Reads path (NULL: XLREAPER_DEFAULT_CONFIG) with libxlutil and checks
 * every key and the whole uid range.  Without XLREAPER_CONFIG_MUST_EXIST
 * a missing file means "defaults".  On failure the previous settings stay
 * in force (so a daemon can refuse a bad reload) and the reason is
 * logged, with file:line where there is one.  Returns 0, _INVAL, _NOMEM
 * or _FAIL.
 */
int xlreaper_config_load(xlreaper_ctx *ctx, const char *path, unsigned flags);

/* NULL until a load succeeded.  Owned by ctx. */
const xlreaper_config *xlreaper_config_get(const xlreaper_ctx *ctx);

/* The i-th config key the parser accepts, or NULL past the last. */
const char *xlreaper_config_key_name(unsigned i);

/*
 * The value in force of the i-th key, as it would be written in the
 * config file (a string quoted), into buf.  Returns 0; 1 for a path
 * that is not set (buf then ""); _INVAL when i is past the last key or
 * buf is too small.
 */
int xlreaper_config_key_value(const xlreaper_config *cfg, unsigned i,
                              char *buf, size_t size);

/* ---------- can a device model start? (xl-reaper check) ---------- */

/*
 * With a config loaded, checks what the wrapper and the daemon will
 * need: root; the uid range against passwd (as the load did) and the
 * DMs' gids against the group database; the subordinate ids; qemu_path
 * (an executable file, not the wrapper); cgroup_parent (a cgroup2
 * directory in which a cgroup can be made: one is made and removed at
 * once); the lock file (or the directory it will be made in); and, said
 * but never refused, the device nodes of /dev (/dev/fuse first) that a
 * DM without a chroot of its own may open, and the host's file table
 * against the DMs' limits (xlreaper_pools.c).  Nothing else is changed.
 * Calls fn once a check with its name, whether it passed, and what was
 * found (one line); a passed check whose line starts "warning: " is a
 * warning, said and never refused.  Returns 0 when every check
 * passed, _INVAL when one did not (said only through fn), or _NOMEM /
 * _FAIL when it could not check (logged).
 */
typedef void xlreaper_check_fn(void *arg, const char *name, bool ok,
                               const char *detail);
int xlreaper_host_check(xlreaper_ctx *ctx, xlreaper_check_fn *fn, void *arg);

/*
 * May a root process trust path?  One rule for every file and directory
 * a root part reads or writes (config, lock file, QEMU, run, events and
 * metrics directories): it and every directory above it, symlinks
 * resolved, owned by root (or by the caller's euid when that is not
 * root), and writable by nobody else, by mode or by POSIX ACL; a
 * directory above it may be writable by others only if sticky.  A
 * symlink at path is judged too (its owner, its directories).
 *
 * flags: XLREAPER_TRUST_DIR path must be a directory (else a regular
 * file, or any type with XLREAPER_TRUST_ANY_TYPE); XLREAPER_TRUST_ABSENT_OK
 * path may be absent: it will be made, so the nearest directory above
 * it that exists is judged, as the one it will be made in.
 *
 * Returns 0 trusted (*st_r, if st_r, the stat of what path names), 1
 * absent (with ABSENT_OK, where it would be made is trusted),
 * XLREAPER_ERROR_PERM not trusted, XLREAPER_ERROR_FAIL could not look,
 * XLREAPER_ERROR_INVAL not an absolute path.  On an error, why (if
 * not NULL) holds one line: what on the path, and why.
 */
#define XLREAPER_TRUST_DIR 1u
#define XLREAPER_TRUST_ABSENT_OK 2u
#define XLREAPER_TRUST_ANY_TYPE 4u
struct stat;
int xlreaper_path_trust(const char *path, unsigned flags, struct stat *st_r,
                        char *why, size_t why_size);

/* ---------- uids ---------- */

/* Highest domid of an ordinary domain: DOMID_FIRST_RESERVED - 1. */
uint32_t xlreaper_max_domid(void);

/*
 * Parses a domid of an ordinary domain other than dom0: decimal digits
 * only, 1 <= domid <= xlreaper_max_domid().  Returns 0 or _INVAL (with
 * nothing logged: the caller says what was wrong with its input).
 */
int xlreaper_domid_parse(const char *s, uint32_t *domid_r);

/* The uid and gid domid's DM runs under.  0 or _INVAL. */
int xlreaper_dm_ids(const xlreaper_ctx *ctx, uint32_t domid, uid_t *uid_r,
                    gid_t *gid_r);

/*
 * The domid whose DM uid is uid.  0, or _INVAL when uid is not a DM uid
 * (outside base+1 .. base+max_domid).
 */
int xlreaper_uid_domid(const xlreaper_ctx *ctx, uid_t uid, uint32_t *domid_r);

/* ---------- tasks of a uid ---------- */

#define XLREAPER_TASK_GROUPS_KEPT 8

/* What xlreaper_audit reads of a task as well (its /proc status); all 0
 * in any other list. */
typedef struct {
    gid_t rgid, egid, sgid, fsgid;
    unsigned ngroups; /* supplementary groups, all counted */
    gid_t groups[XLREAPER_TASK_GROUPS_KEPT]; /* the first ones */
    int nnp; /* NoNewPrivs: 0, 1, or -1 if absent */
    bool caps_known;
    uint64_t cap_prm, cap_eff, cap_amb;
    int seccomp;      /* Seccomp: 0, 1, 2, or -1 if absent */
    unsigned threads; /* the thread group's size */
} xlreaper_task_audit;

/* One task (thread) that a /proc scan found. */
typedef struct {
    pid_t tid, tgid, ppid;
    char state; /* as in /proc: R S D Z T t X I ... */
    uid_t ruid, euid, suid, fsuid;
    bool kill_pending; /* SIGKILL pending, or already exiting */
    char comm[17];
    char wchan[48]; /* where a D-state task sleeps, or "" */
    xlreaper_task_audit audit;
} xlreaper_task;

typedef struct {
    xlreaper_task *tasks;
    unsigned num, cap;
} xlreaper_task_list;

void xlreaper_task_list_init(xlreaper_task_list *list);
void xlreaper_task_list_dispose(xlreaper_task_list *list);

/*
 * Every task any of whose real, effective, saved or filesystem uids is
 * uid.  Note that a scan cannot prove a uid is empty while its tasks can
 * still fork: a fork racer's generations live shorter than a scan.
 * Appends to list; 0, _NOMEM or _FAIL.
 */
int xlreaper_scan_uid(xlreaper_ctx *ctx, uid_t uid, xlreaper_task_list *list);

/*
 * Asks the kernel whether uid has any task at all, live or zombie: a
 * bounded probe child takes uid as its real uid and asks the kernel's
 * per-user count (xlreaper_count.c).  Under the global lock (taken here
 * unless the ctx holds it).  A probe that a task of uid stopped or
 * killed says "not empty".  *empty_r is set on success.  0, _FAIL,
 * _INVAL, _PERM or _LOCK_TIMEOUT.
 */
int xlreaper_uid_empty(xlreaper_ctx *ctx, uid_t uid, bool *empty_r);

/*
 * The kernel's count of the tasks of uid, by the same probe.  Exact
 * while the count is still; for a fork racer it is a snapshot.  0,
 * _BUSY (the probe was stopped or killed by a task of uid: busy, count
 * unknown), _FAIL, _INVAL, _PERM or _LOCK_TIMEOUT.
 */
int xlreaper_uid_count(xlreaper_ctx *ctx, uid_t uid, unsigned *count_r);

/* ---------- a census of the DM uid range, for sweeps ---------- */

typedef struct {
    uint32_t live;    /* sightings of tasks alive (any state but zombie) */
    uint32_t zombies; /* of zombies: nothing left to kill */
} xlreaper_census_entry;

/*
 * One pass over /proc that counts every task (thread) against each DM
 * uid among its real, effective, saved and filesystem uids, then a few
 * samples of the newest pids, where a fork racer is most likely to be
 * (so one task may be sighted more than once).  counts has
 * xlreaper_max_domid() + 1 entries, indexed by domid; the call zeroes it
 * first.  *tasks_r (may be NULL) is the number of tasks the pass read.
 * A hint,
 * not a verdict: a fork racer can escape a pass, so a uid counted empty
 * may not be; confirm a busy one with xlreaper_reap, which asks the
 * kernel.  0, _INVAL (no config) or _FAIL.
 */
int xlreaper_census(xlreaper_ctx *ctx, xlreaper_census_entry *counts,
                    unsigned *tasks_r);

/*
 * The kernel's own answer for the DM uids of domids first ..
 * first + num - 1: busy_r[i] is set when that uid has any task, live or
 * zombie.  Exact, as xlreaper_uid_empty is, at a few system calls per
 * uid in one probe child (about 0.04 ms), and a fork racer cannot
 * escape it; a probe stopped by a uid's task marks that uid busy.  Runs
 * of uids are asked under the global lock (taken and let go per run
 * unless the ctx holds it).  Kills nothing.  0, _INVAL, _PERM,
 * _LOCK_TIMEOUT or _FAIL.
 */
int xlreaper_census_kernel(xlreaper_ctx *ctx, uint32_t first, uint32_t num,
                           bool *busy_r);

/* ---------- the global lock ---------- */

typedef struct xlreaper_lock xlreaper_lock;

/*
 * flock(LOCK_EX) on the configured lock_file, waiting at most
 * lock_timeout_ms.  The descriptor is O_CLOEXEC, so a DM never inherits
 * it.  0, _LOCK_TIMEOUT, _FAIL or _NOMEM.
 */
int xlreaper_lock_acquire(xlreaper_ctx *ctx, xlreaper_lock **lock_r);
/* While a lock is held, the calls on its ctx that need it (reap, the
 * kernel counts and census, spawn) use it instead of taking their own;
 * the ctx must outlive it. */
void xlreaper_lock_release(xlreaper_lock *lock); /* NULL is fine */
/* How long acquire waited, in microseconds. */
uint64_t xlreaper_lock_wait_us(const xlreaper_lock *lock);

/* ---------- memory pressure ---------- */

/*
 * Makes the calling process the OOM killer's last choice: oom_score_adj
 * -1000, which every helper of a reap then inherits.  Process-wide, and
 * for good where the caller holds CAP_SYS_RESOURCE (it also becomes the
 * floor), so a program's main calls it, once; the library never does
 * on its own (xlreaper_oom.c says why).  Returns 0 when the process is
 * at -1000; _PERM when the kernel refused because CAP_SYS_RESOURCE is
 * lacking (logged at INFO with the value that stays in force: the
 * caller says it as loudly as it should), _FAIL on another failure
 * (logged as a warning).
 */
int xlreaper_oom_protect(xlreaper_ctx *ctx);

/* ---------- reaping ---------- */

typedef enum {
    XLREAPER_OUTCOME_NONE = 0, /* not reaped (an error before) */
    XLREAPER_OUTCOME_EMPTY,    /* the kernel counts no task of uid */
    XLREAPER_OUTCOME_ZOMBIES,  /* no live task; zombies wait for a
                                  * parent outside the uid */
    XLREAPER_OUTCOME_REMAIN,   /* live tasks remain (or /proc cannot
                                  * show what the kernel counts) */
    XLREAPER_OUTCOME_STUCK,    /* tasks in D state with SIGKILL
                                  * pending remain (in stuck, with
                                  * their wchan), and nothing else but
                                  * zombies: killed, they cannot exit
                                  * until what they wait on answers,
                                  * which the reap could not make
                                  * happen (a FUSE connection of
                                  * another owner, a hung NFS server
                                  * or disk) */
} xlreaper_outcome;

typedef struct {
    uint32_t domid;
    uid_t uid;
    xlreaper_outcome outcome;
    bool was_empty;   /* the kernel counted no task right
                                  * after the first kill: nothing was
                                  * left, which is not "nothing was
                                  * there" (what was killed may have
                                  * been reaped that fast) */
    long kernel_left; /* that count (zombies, dying tasks),
                                  * or -1 when the killer was stopped */
    /* Distinct tasks the scans after the kill saw (0 when the count
     * was 0: then no scan is made). */
    unsigned tasks_seen;
    unsigned rounds;      /* kill(-1) calls made */
    uint64_t duration_us; /* from the call to the verdict */
    uint64_t lock_wait_us;
    xlreaper_task_list zombies; /* left waiting for their parent */
    xlreaper_task_list stuck;   /* D state: SIGKILL pending; wchan
                                  * says where each waits */
    xlreaper_task_list live;    /* live, and why in unreachable */
    unsigned unreachable;       /* of live: uid only as euid/fsuid, which
                                  * kill(-1) as the pet cannot signal */
    bool kernel_empty;          /* the kernel count was zero */
    bool proc_sound;            /* the last scan saw every task on the
                                  * host (no hidepid, same pid ns) */
    pid_t recorded_dm;          /* the DM pid its spawn recorded (runas
                                  * mode), killed by this reap before the
                                  * uid kill because it was still that
                                  * process (perhaps root, before its own
                                  * setuid: xlreaper_dmpid.c), or 0 */
    unsigned fuse_aborted;      /* FUSE connections of the uid this
                                  * reap aborted, because tasks of the
                                  * uid were stuck after the kill
                                  * (xlreaper_fuse.c) */
} xlreaper_reap_result;

void xlreaper_reap_result_init(xlreaper_reap_result *res);
void xlreaper_reap_result_dispose(xlreaper_reap_result *res);

/*
 * Kills every task of domid's DM uid and verifies, in rounds until no
 * live task is left (the kernel counts none, or only zombies remain,
 * which are listed) or reap_timeout_ms passes.  held: the global lock if
 * the caller holds it, or NULL: then the reap holds its own for each
 * round's kill and count only, not while it waits between rounds.  res
 * is filled whenever the kill was tried.  Tasks left in D state with
 * SIGKILL pending after a kill make it abort the uid's FUSE connections
 * (the DM's own: xlreaper_fuse.c) and kill again.  Returns 0 (outcome
 * EMPTY or ZOMBIES), _REMAIN, _STUCK (outcome STUCK), _LOCK_TIMEOUT,
 * _INVAL (also when the pet uid runs tasks: they would be killed, and
 * could kill the reaper) or _FAIL.
 */
int xlreaper_reap(xlreaper_ctx *ctx, xlreaper_lock *held, uint32_t domid,
                  xlreaper_reap_result *res);

/* Wait for "empty": zombies are waited for too, until reap_timeout_ms
 * (outcome ZOMBIES then).  For a caller that reuses the uid at once: a
 * spawn, or a daemon that reports the domid free. */
#define XLREAPER_REAP_WAIT_EMPTY 1u

/* held is handed over: the reap lets it go after its first round's
 * kill and takes it again for each later round, so that a uid that
 * stays stuck does not hold up the host (xlreaper_lock.c says why this
 * is safe).  On return it is not held; xlreaper_lock_release it as
 * usual.  Without held, the reap does so with its own lock anyway. */
#define XLREAPER_REAP_LOCK_ROUNDS 2u

/* xlreaper_reap with XLREAPER_REAP_* flags. */
int xlreaper_reap_flags(xlreaper_ctx *ctx, xlreaper_lock *held, uint32_t domid,
                        unsigned flags, xlreaper_reap_result *res);

/*
 * One line for people: "domid 5 (uid 131077): killed in 2.1 ms (1 round,
 * 3 tasks seen), verified empty", or what remains and why.  Returns a malloc'd string
 * the caller frees, or NULL on ENOMEM.
 */
char *xlreaper_reap_result_describe(const xlreaper_reap_result *res);

/*
 * The result as one JSON object (yajl): event, domid, uid, outcome,
 * was_empty, tasks_seen, rounds, duration_us, lock_wait_us,
 * kernel_empty, kernel_left, proc_sound, recorded_dm (a pid or null),
 * fuse_aborted, zombies, stuck, live.  *json_r is malloc'd, caller frees.  0 or _NOMEM.
 */
int xlreaper_reap_result_json(const xlreaper_reap_result *res, char **json_r);

/* ---------- spawning a device model ---------- */

typedef struct xlreaper_spawn_plan xlreaper_spawn_plan;

/*
 * Computes everything a restricted start of prog under domid's DM ids
 * needs, so that the child only applies it.  prog without a '/' is looked
 * up in PATH.  argv is copied.  Touches no process.  0, _INVAL, _NOMEM.
 *
 * argv is read as a QEMU command line: the descriptors it names (fd=N in
 * -chardev/-netdev/-device/-object/-add-fd, -incoming fd:N, ...) are the
 * only ones above 2 the DM keeps, and must be open now; any descriptor
 * open to /dev/xen or /proc/xen is logged.  With uid_switch "runas" the
 * line must carry -runas / -run-with user= with exactly this domain's
 * uid:gid (and, when <chroot_base>/qemu-root-<domid> exists, -chroot
 * or -run-with chroot= there); what is missing is added in the form
 * `prog -help` offers, and only as -run-with to a line that uses
 * -run-with (libxl 4.20's).  -run-with more than twice, or a key of it
 * twice, is refused.  With add_dm_restrict, -xen-domid-restrict is added
 * when missing, and a chroot the line lacks is made (at spawn) and
 * added.  What was added is logged in one line; a line that ends with
 * an option that could take the addition as its value is refused.
 */
int xlreaper_spawn_plan_new(xlreaper_ctx *ctx, uint32_t domid,
                            const char *prog, char *const argv[],
                            xlreaper_spawn_plan **plan_r);
void xlreaper_spawn_plan_free(xlreaper_spawn_plan *plan); /* NULL fine */

#define XLREAPER_SPAWN_REAP_STALE 1u /* reap a busy DM uid first */

/*
 * Takes the lock, refuses (_BUSY) if the DM uid still has tasks unless
 * XLREAPER_SPAWN_REAP_STALE or reap_stale is set, applies the plan to
 * this process and execve()s.  Returns only on failure, having logged the
 * step that failed and its errno; this process may then be half
 * restricted and should exit.  _INVAL, _BUSY, _LOCK_TIMEOUT, _REMAIN,
 * _FAIL.
 */
int xlreaper_spawn_exec(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                        unsigned flags);

/*
 * As xlreaper_spawn_exec, but in a forked child; the parent learns of
 * any failing step through a CLOEXEC pipe and reports it.  In exec mode
 * the child itself checks, as it takes the uid, that the uid has no
 * other task (no probe process; see xlreaper_spawn_apply.c).  Safe to call
 * from a threaded caller (one ctx per thread).  On success
 * *pid_r is the DM's pid and, if pidfd_r is not NULL, *pidfd_r a pidfd
 * for it (O_CLOEXEC; the caller closes it).  The caller reaps the child.
 */
int xlreaper_spawn(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                   unsigned flags, pid_t *pid_r, int *pidfd_r);

/* ---------- libxl 4.20's QEMU option probe ---------- */

/*
 * libxl 4.20 and later (libxl__spawn_local_dm) first run the device
 * model binary, device_model_override when set, as root and for no
 * domain, with exactly
 *
 *     -S -no-user-config -nodefaults -nographic -machine none,accel=xen
 *     -chardev socket,id=libxl-cmd,fd=N,server=on,wait=off
 *     -mon chardev=libxl-cmd,mode=control
 *
 * to ask it over QMP (query-command-line-options) whether it takes
 * -run-with chroot= and user=; then "quit", then SIGHUP.  N is a
 * listening socket libxl leaves inheritable.
 *
 * xlreaper_libxl_probe_line: whether argv (argv[0] the program, NULL
 * terminated) is that line and nothing else, in libxl's order and
 * spelling, with N a plain decimal above 2.  1 and *fd_r = N if so,
 * else 0 (*fd_r untouched).
 */
int xlreaper_libxl_probe_line(char *const argv[], int *fd_r);

/*
 * Execs path in this process with argv[1..] of a probe line unchanged
 * (argv[0] becomes path), as root, with 0-2 and N the only descriptors
 * left open (N as it is: libxl's comes without close-on-exec).  No uid,
 * chroot or limit: the probe runs no guest.  It runs in a mount
 * namespace of its own with an empty tmpfs over the directory of N's
 * socket path, so that QEMU's unlink of that path at exit cannot remove
 * the DM's socket libxl binds there next (xlreaper_libxl_probe.c); if
 * that namespace cannot be made it says so and runs without.  Returns
 * only on failure: _INVAL (not a probe line, N not open), _FAIL
 * (closing, execve), logged.
 */
int xlreaper_libxl_probe_exec(xlreaper_ctx *ctx, const char *path,
                              char *const argv[]);

/*
 * libvirt's libxl driver runs the <emulator> it is given, as root and
 * before it calls libxl, as "<emulator> -help" (libxlDomainGetEmulatorType:
 * the text tells it qemu-xen from qemu-traditional); a later libvirt may
 * ask "-version" too.  Neither is for a domain.
 *
 * xlreaper_libvirt_probe_line: 1 if argv (argv[0] the program, NULL
 * terminated) is exactly one of those, else 0.
 *
 * xlreaper_libvirt_probe_exec: execs path in this process with that one
 * argument (argv[0] becomes path), as root as libvirt would have run
 * QEMU itself, with only descriptors 0-2 left open: QEMU prints its text
 * and exits, running no guest and nothing under a DM uid.  Returns only
 * on failure: _INVAL (not such a line), _FAIL (closing, execve), logged.
 */
int xlreaper_libvirt_probe_line(char *const argv[]);
int xlreaper_libvirt_probe_exec(xlreaper_ctx *ctx, const char *path,
                                char *const argv[]);

/* ---------- audit ---------- */

/*
 * xlreaper_audit checks, changing nothing, that every running DM is
 * jailed and that no dead domain's uid runs anything:
 *
 *     xlreaper_audit_opts opts;
 *     xlreaper_audit_result res;
 *     xlreaper_audit_opts_init(&opts);
 *     xlreaper_audit_result_init(&res);
 *     rc = xlreaper_audit(ctx, &opts, &res);
 *     if (!rc) verdict = xlreaper_audit_verdict(&res);  PASS, FAIL, UNKNOWN
 *     xlreaper_audit_result_dispose(&res);
 *
 * Each check is one line of the result: what was checked (name), of
 * which domain, uid and process, and the verdict with its reason.  The
 * checks and what can and cannot be seen from outside a DM are written
 * out in xlreaper_audit.c and docs/osstest.md.
 */
typedef enum {
    XLREAPER_AUDIT_PASS = 0,
    XLREAPER_AUDIT_SKIP,    /* does not apply here, or an optional
                             * source (xenstore) is absent: no
                             * violation, said in the reason */
    XLREAPER_AUDIT_UNKNOWN, /* could not check: the reason says what */
    XLREAPER_AUDIT_FAIL,    /* a violation */
} xlreaper_audit_status;

#define XLREAPER_AUDIT_NO_DOMID UINT32_MAX
#define XLREAPER_AUDIT_NO_UID ((uid_t)-1)

typedef struct {
    const char *name; /* static, e.g. "ids", "leftover" */
    uint32_t domid;   /* or XLREAPER_AUDIT_NO_DOMID */
    uid_t uid;        /* or XLREAPER_AUDIT_NO_UID */
    pid_t pid;        /* or 0 */
    xlreaper_audit_status status;
    bool fixed;     /* --fix reaped this uid (status says how
                             * that ended) */
    unsigned tasks; /* leftover: the tasks of the uid, by the
                             * kernel's count (or /proc's when that is
                             * unknown or larger); else 0 */
    char *reason;   /* malloc'd, printable ASCII; never NULL */
} xlreaper_audit_check;

typedef struct {
    xlreaper_audit_check *checks;
    unsigned num, cap;
    const char *live_source; /* "libxenlight", "xenstore", "hook",
                                  * or NULL: live domains unknown */
    uint32_t *live;          /* live domids (not dom0), sorted */
    unsigned num_live;
    bool xenstore_reachable;
    unsigned passes;   /* /proc passes made */
    bool quiet;        /* a pass saw no task created */
    unsigned probes;   /* kernel-count probes run */
    unsigned dms;      /* DM processes checked */
    uint64_t start_us; /* when it began (monotonic clock) */
    uint64_t duration_us;
    unsigned deadline_ms; /* the deadline it ran under */
    bool deadline_passed; /* something was not checked in time */
} xlreaper_audit_result;

#define XLREAPER_AUDIT_FIX                                                    \
    1u /* reap leftover uids and clear the
                                     * set-id bits of files of the range,
                                     * and say so */
#define XLREAPER_AUDIT_PROBE_ALL                                              \
    2u /* kernel-count every dead uid, even
                                     * after a quiet /proc pass */

typedef struct {
    unsigned flags;               /* XLREAPER_AUDIT_* */
    unsigned xenstore_timeout_ms; /* default 2000 */
    unsigned setid_timeout_ms;    /* the "setid" walk's deadline, default
                                  * 120000; 0: not walked (a skip) */
    unsigned dm_timeout_ms;       /* how long the /proc of one process of
                                  * a live domain's uid may take to read,
                                  * default 3000 */
    unsigned deadline_ms;         /* the whole audit's (the setid walk
                                  * aside); 0, the default: 5000 plus
                                  * dm_timeout_ms per such process */
} xlreaper_audit_opts;

#define XLREAPER_AUDIT_DEADLINE_BASE_MS 5000u

void xlreaper_audit_opts_init(xlreaper_audit_opts *opts);
void xlreaper_audit_result_init(xlreaper_audit_result *res);
void xlreaper_audit_result_dispose(xlreaper_audit_result *res);

/*
 * Runs every check into res (which must be freshly initialised).
 * Returns 0 when the audit ran, whatever it found (see the verdict),
 * or _NOMEM, _PERM (needs root) or _FAIL (/proc unreadable); res then
 * holds what was checked so far.  Only XLREAPER_AUDIT_FIX changes
 * anything, through xlreaper_reap.
 */
int xlreaper_audit(xlreaper_ctx *ctx, const xlreaper_audit_opts *opts,
                   xlreaper_audit_result *res);

/* The worst status in res: FAIL over UNKNOWN over PASS (SKIP counts as
 * PASS).  An empty result is UNKNOWN. */
xlreaper_audit_status xlreaper_audit_verdict(const xlreaper_audit_result *res);

/* "pass", "skip", "unknown" or "fail". */
const char *xlreaper_audit_status_name(xlreaper_audit_status s);

/*
 * The result as one JSON object (yajl): event "audit", verdict,
 * live_source, live, xenstore_reachable, passes, quiet, probes, dms,
 * duration_us, deadline_ms, deadline_passed, could_not_check (the
 * count of "unknown" checks), checks [{check, domid, uid, pid, status, fixed,
 * reason}], with null for an absent domid, uid or pid.  *json_r is
 * malloc'd, caller frees.  0 or _NOMEM.
 */
int xlreaper_audit_result_json(const xlreaper_audit_result *res,
                               char **json_r);

#endif /* XLREAPER_H */
