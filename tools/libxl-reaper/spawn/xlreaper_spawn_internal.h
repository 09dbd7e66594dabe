/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_spawn_internal.h - starting a device model already inside its
 * uid: what the three parts of a spawn share, and nothing else uses.
 *
 * Plan in the parent, apply in the child: everything that can fail for
 * an ordinary reason (config, paths, ids, the descriptors to keep, the
 * QEMU command line) is computed into a plan first; between fork and
 * execve the child only applies it, with async-signal-safe calls on
 * memory prepared before (the caller may be threaded: libxl callers run
 * several ctxs at once), checking each step and reporting a failure as
 * (step, errno) through a CLOEXEC pipe.  EOF on the pipe means execve
 * succeeded.  Three files, one part each:
 *
 *   xlreaper_spawn_plan.c   the plan: config and command line in, a plan
 *                           out; it starts, joins or changes nothing
 *   xlreaper_spawn_apply.c  the child's half, between fork and execve:
 *                           async-signal-safe calls only; the build
 *                           checks every symbol it leaves undefined
 *                           against xlreaper_spawn_apply.allow (lib.mk)
 *   xlreaper_spawn.c        the parent's run: the lock, the uid check,
 *                           the cgroup, the fork, the bounded wait, and
 *                           what a failed step is logged as
 *
 * Two ways to take the DM uid (uid_switch):
 *   "exec"   we switch before execve: the DM never runs as root.  For a
 *            program that needs no root.
 *   "runas"  QEMU with -xen-domid-restrict must open Xen's devices before
 *            it drops root, so upstream passes -runas uid:gid and lets QEMU
 *            switch itself (then it chroots with -chroot, which is why we
 *            do not: an empty chroot holds neither QEMU's libraries nor
 *            /dev/xen).  We set everything else, stay root, and make the
 *            command line carry exactly this domain's ids.  Until QEMU's
 *            setuid the DM is outside its uid: the spawn records its pid
 *            under the lock, and every reap of the domid kills it first
 *            (xlreaper_dmpid.c).
 *
 * RLIMIT_NPROC is a process's own limit checked against the count of its
 * real uid.  In exec mode that is the DM uid from the start.  In runas
 * mode the real uid is root's until QEMU switches, and root is exempt
 * (CAP_SYS_RESOURCE); once QEMU has called setuid every one of its
 * threads counts against the DM uid and the limit binds.  It bounds no
 * other process: one outside the DM that takes the uid keeps its own.
 *
 * PR_SET_DUMPABLE: the kernel recomputes dumpability at execve
 * (begin_new_exec): a program the new uid may read becomes dumpable
 * again, one it may not read (mode 0711) stays not.  So "dumpable = 0"
 * covers the window up to execve; for the DM itself, make its binary
 * unreadable to the DM uid, or use runas mode, where QEMU's own setuid
 * makes it non-dumpable (fs.suid_dumpable = 0).
 */
#ifndef XLREAPER_SPAWN_INTERNAL_H
#define XLREAPER_SPAWN_INTERNAL_H

#include <sys/resource.h>

#include "xlreaper_internal.h"
#include "xlreaper_host.h"
#include "xlreaper_qemu.h"
#include "xlreaper_xen.h"

/* ---------- spawn: no set-id file (xlreaper_setid.c) ---------- */

#define XLREAPER__SETID_FILTER_MAX 48

/* The seccomp program that fails every call that could make a set-uid
 * or set-gid file, or a user namespace (the arguments are in
 * xlreaper_setid.c). */
typedef struct {
    struct sock_filter insn[XLREAPER__SETID_FILTER_MAX];
    unsigned short len;
} xlreaper__setid_filter;

/* Builds the program into f, at plan time.  0, or _INVAL (logged) on an
 * architecture it has no system call table for. */
_hidden int xlreaper__setid_filter_plan(xlreaper_ctx *ctx, uint32_t domid,
                                        xlreaper__setid_filter *f);
/* Child side, after PR_SET_NO_NEW_PRIVS: installs f.  0 or -1 with
 * errno; async-signal-safe. */
_hidden int xlreaper__setid_filter_install(const xlreaper__setid_filter *f);

/* ---------- the descriptors around a spawn (xlreaper_fds.c) ---------- */

/*
 * Logs every descriptor open to /dev/xen/ or /proc/xen/ (the toolstack
 * leak the upstream deprivilege mail worries about): as a warning when
 * it lacks close-on-exec and so would have reached the DM had the spawn
 * not closed it, or is kept for it.  Returns how many it found.
 */
_hidden unsigned xlreaper__report_xen_fds(xlreaper_ctx *ctx, uint32_t domid,
                                          const int *keep, unsigned num_keep);

#define MAX_RL (1 + XLREAPER_MAX_RLIMITS)
#define MAX_PRESERVE (XLREAPER__MAX_KEEP_FDS + 4)

struct xlreaper_spawn_plan {
    uint32_t domid;
    uid_t uid;
    gid_t gid;
    xlreaper_uid_switch mode;
    char *path;
    char **argv;
    char **envp; /* borrowed: the environment at plan time */
    int keep[XLREAPER__MAX_KEEP_FDS]; /* > 2, sorted */
    unsigned num_keep;
    struct {
        int resource;
        rlim_t limit;
    } rl[MAX_RL];
    unsigned num_rl;
    bool unshare_ipc_mount, unshare_net, dumpable;
    char *chroot_dir;  /* we chroot here (exec mode), or NULL */
    char *record_root; /* the root the DM ends up in, for its record */
    int exe_fd;        /* O_PATH to path, for execveat in the chroot */
    char *make_chroot; /* runas: QEMU's chroot, made by the spawn
                        * (add_dm_restrict), or NULL */
    bool drop_vkbd;    /* -xen-domid-restrict added: the spawn takes
                        * out the domain's vkbd (xlreaper_vkbd.c) */
    int incoming_fd;   /* -incoming fd:N's N, a restore; or 0 */
    char *cgroup_parent;
    uint64_t memory_max; /* dm_memory_max, with cgroup_parent; 0: none */
    char oom_adj[8];     /* dm_oom_score_adj as written, e.g. "1000" */
    unsigned oom_adj_len;
    xlreaper__setid_filter setid; /* built here, installed by the child */
};

/* One spawn of a plan: the descriptors that exist only for it. */
typedef struct {
    const xlreaper_spawn_plan *plan;
    int wfd;        /* report pipe (fork mode), or -1 */
    int cgroup_fd;  /* cgroup.procs, or -1 */
    bool uid_check; /* the child checks the uid is empty (uid_check) */
    int preserve[MAX_PRESERVE]; /* sorted, > 2: kept + our own */
    unsigned num_preserve;
} xlreaper__spawn_run;

/* The steps, in the order they are applied. */
enum {
    STEP_SIGNALS = 1,
    STEP_CLOSE_FDS,
    STEP_STDIO,
    STEP_KEEP_FD,
    STEP_SETGROUPS,
    STEP_SETRESGID,
    STEP_RLIMIT,
    STEP_OOM_SCORE_ADJ,
    STEP_UNSHARE_NS,
    STEP_UNSHARE_NET,
    STEP_CHROOT,
    STEP_CHDIR,
    STEP_CGROUP,
    STEP_SETRESUID,
    STEP_UID_BUSY,
    STEP_RLIMIT_RAISE,
    STEP_CHECK_IDS,
    STEP_CHECK_CAPS,
    STEP_NO_NEW_PRIVS,
    STEP_DUMPABLE,
    STEP_SETID_FILTER,
    STEP_EXECVE,
};

/* "RLIMIT_NOFILE" for RLIMIT_NOFILE, for the log (xlreaper_spawn_plan.c). */
_hidden const char *xlreaper__spawn_rlimit_name(int resource);

/*
 * Applies run's plan to the calling process and execs.  Returns only on
 * failure: with run->wfd >= 0 (a forked child) it reports (step, errno,
 * detail) on wfd and _exits; in place it sets *step_r, *err_r and
 * *detail_r and returns.  Async-signal-safe (xlreaper_spawn_apply.c).
 */
_hidden void xlreaper__spawn_apply(const xlreaper__spawn_run *run, int *step_r,
                                   int *err_r, long *detail_r);

#endif /* XLREAPER_SPAWN_INTERNAL_H */
