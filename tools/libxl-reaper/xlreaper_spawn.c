/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_spawn.c - starting a device model already inside its uid.
 *
 * Plan in the parent, apply in the child: everything that can fail for
 * an ordinary reason (config, paths, ids, the descriptors to keep, the
 * QEMU command line) is computed into a plan first; between fork and
 * execve the child only applies it, with async-signal-safe calls on
 * memory prepared before (the caller may be threaded: libxl callers run
 * several ctxs at once), checking each step and reporting a failure as
 * (step, errno) through a CLOEXEC pipe.  EOF on the pipe means execve
 * succeeded.
 *
 * The steps, in order (apply_plan):
 *   signals      empty mask, default dispositions (SIG_IGN survives exec)
 *   descriptors  close all but 0-2 and those the command line names;
 *                /dev/null for a closed 0-2; clear CLOEXEC on the kept
 *   setgroups(0), setresgid(gid, gid, gid)
 *   rlimits      NPROC, NOFILE, FSIZE, CORE, MSGQUEUE, LOCKS, MEMLOCK
 *   unshare      CLONE_NEWNS|CLONE_NEWIPC and CLONE_NEWNET, if configured
 *   chroot       <chroot_base>/qemu-root-<domid>, exec mode only
 *   cgroup       <cgroup_parent>/dm-<domid>, if configured
 *   setresuid(uid, uid, uid) and the checks that it took, exec mode only
 *                (in a forked spawn by way of (uid, uid, 0) and the check
 *                that the uid has no other task: see uid_check below)
 *   PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE
 *   seccomp      the set-id filter: no call may make a set-uid or
 *                set-gid file (xlreaper_setid.c says why), both modes
 *   execve
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
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "xlreaper_internal.h"

extern char **environ;

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
    char *chroot_dir; /* we chroot here (exec mode), or NULL */
    int exe_fd;       /* O_PATH to path, for execveat in the chroot */
    char *cgroup_parent;
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
} spawn_run;

/* The steps, in the order they are applied. */
enum {
    STEP_SIGNALS = 1,
    STEP_CLOSE_FDS,
    STEP_STDIO,
    STEP_KEEP_FD,
    STEP_SETGROUPS,
    STEP_SETRESGID,
    STEP_RLIMIT,
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

/* clang-format off: a table reads better one case a line. */
static const char *step_name(int step)
{
    switch (step) {
    case STEP_SIGNALS: return "resetting signals";
    case STEP_CLOSE_FDS: return "close_range";
    case STEP_STDIO: return "opening /dev/null as a standard descriptor";
    case STEP_KEEP_FD: return "keeping descriptor";
    case STEP_SETGROUPS: return "setgroups";
    case STEP_SETRESGID: return "setresgid";
    case STEP_RLIMIT: return "setrlimit";
    case STEP_UNSHARE_NS: return "unshare(CLONE_NEWNS|CLONE_NEWIPC)";
    case STEP_UNSHARE_NET: return "unshare(CLONE_NEWNET)";
    case STEP_CHROOT: return "chroot";
    case STEP_CHDIR: return "chdir(/) in the chroot";
    case STEP_CGROUP: return "joining the cgroup";
    case STEP_SETRESUID: return "setresuid";
    case STEP_UID_BUSY: return "checking the uid has no other task";
    case STEP_RLIMIT_RAISE: return "setrlimit(RLIMIT_NPROC) after the check";
    case STEP_CHECK_IDS: return "checking the ids set";
    case STEP_CHECK_CAPS: return "checking no capability is left";
    case STEP_NO_NEW_PRIVS: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case STEP_DUMPABLE: return "prctl(PR_SET_DUMPABLE)";
    case STEP_SETID_FILTER: return "installing the set-id seccomp filter";
    case STEP_EXECVE: return "execve";
    default: return "unknown step";
    }
}
/* clang-format on */

/* clang-format off: a table reads better one case a line. */
static const char *rlimit_name(int resource)
{
    switch (resource) {
    case RLIMIT_NPROC: return "RLIMIT_NPROC";
    case RLIMIT_NOFILE: return "RLIMIT_NOFILE";
    case RLIMIT_FSIZE: return "RLIMIT_FSIZE";
    case RLIMIT_CORE: return "RLIMIT_CORE";
    case RLIMIT_MSGQUEUE: return "RLIMIT_MSGQUEUE";
    case RLIMIT_LOCKS: return "RLIMIT_LOCKS";
    case RLIMIT_MEMLOCK: return "RLIMIT_MEMLOCK";
    default: return "RLIMIT_?";
    }
}
/* clang-format on */

/* ---------- the plan ---------- */

/* prog with a '/' as it is, else the first executable in PATH. */
static char *resolve_prog(const char *prog)
{
    const char *path = getenv("PATH");
    char *dirs, *save = NULL, *out = NULL;

    if (strchr(prog, '/'))
        return strdup(prog);
    dirs = strdup(path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    if (!dirs)
        return NULL;
    for (char *d = strtok_r(dirs, ":", &save); d && !out;
         d = strtok_r(NULL, ":", &save)) {
        char *cand;
        if (asprintf(&cand, "%s/%s", d, prog) < 0)
            break;
        if (access(cand, X_OK) == 0)
            out = cand;
        else
            free(cand);
    }
    free(dirs);
    return out ? out : strdup(prog);
}

static int check_executable(xlreaper_ctx *ctx, uint32_t domid,
                            const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0) {
        LOGED(ERROR, domid, "%s", path);
        return XLREAPER_ERROR_INVAL;
    }
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0 ||
        !(st.st_mode & 0111)) {
        LOGD(ERROR, domid, "%s is not an executable file", path);
        return XLREAPER_ERROR_INVAL;
    }
    return 0;
}

void xlreaper_spawn_plan_free(xlreaper_spawn_plan *plan)
{
    if (!plan)
        return;
    if (plan->argv)
        for (char **a = plan->argv; *a; a++)
            free(*a);
    free(plan->argv);
    free(plan->path);
    free(plan->chroot_dir);
    free(plan->cgroup_parent);
    xlreaper__close_keep_errno(plan->exe_fd);
    free(plan);
}

/* 1 when dir has no entry but . and .., 0 when it has one, or -1. */
static int dir_empty(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct dirent *de;
    DIR *d;
    int r = 1;

    if (fd < 0)
        return -1;
    d = fdopendir(fd);
    if (!d) {
        xlreaper__close_keep_errno(fd);
        return -1;
    }
    errno = 0;
    while (r == 1 && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            r = 0;
    if (r == 1 && errno)
        r = -1;
    closedir(d);
    return r;
}

/*
 * A chroot: no one but root may write to it (a DM uid that could would
 * furnish its own jail), nor to the directory it is in, where it could
 * be swapped for another.
 *
 * libxl_made (runas mode): it is QEMU's whole world once QEMU has
 * dropped root, and must be exactly what libxl makes
 * (libxl__build_device_model_args_new rmdirs it and mkdirs it mode 0000,
 * 4.17 to 4.20 alike, for -chroot and -run-with chroot=): root's, mode 0
 * and empty.  Then the DM, as its uid, can neither list, enter nor write
 * anything of its view of the file system, and finds nothing planted
 * there by whoever could write to it before: no library, no set-id
 * file, no device node.  Anything else is refused, not mended: who made
 * it so is not known.  Exec mode's chroot is the admin's own and may
 * hold the program's files, so there only writability counts.
 */
static int check_chroot(xlreaper_ctx *ctx, uint32_t domid, const char *dir,
                        bool libxl_made)
{
    struct stat st, up;
    char *parent = NULL, *slash;
    int rc = XLREAPER_ERROR_INVAL, r;

    if (lstat(dir, &st) < 0) {
        LOGED(ERROR, domid, "chroot %s", dir);
        goto out;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
        LOGD(ERROR, domid,
             "chroot %s is not a directory owned and only "
             "writable by root",
             dir);
        goto out;
    }
    parent = strdup(dir);
    if (!parent) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    slash = strrchr(parent, '/');
    if (slash)
        slash[slash == parent] = '\0'; /* "/x" -> "/", "/a/x" -> "/a" */
    if (stat(slash ? parent : ".", &up) < 0 || up.st_uid != 0 ||
        (up.st_mode & 022)) {
        LOGD(ERROR, domid,
             "%s is not owned and only writable by root: whoever may "
             "write there may swap the chroot %s",
             slash ? parent : ".", dir);
        goto out;
    }
    if (libxl_made) {
        if (st.st_mode & 07777) {
            LOGD(ERROR, domid,
                 "chroot %s is mode %04o, not 0000 as libxl makes it: "
                 "refusing to start QEMU in it",
                 dir, (unsigned)(st.st_mode & 07777));
            goto out;
        }
        r = dir_empty(dir);
        if (r < 0) {
            LOGED(ERROR, domid, "reading chroot %s", dir);
            goto out;
        }
        if (!r) {
            LOGD(ERROR, domid,
                 "chroot %s is not empty as libxl makes it: refusing to "
                 "start QEMU in it (what is there was not put there by "
                 "libxl)",
                 dir);
            goto out;
        }
    }
    rc = 0;

out:
    free(parent);
    return rc;
}

/* <chroot_base>/qemu-root-<domid>, checked, if it exists; else *dir_r
 * is NULL: no chroot. */
static int find_chroot(xlreaper_ctx *ctx, const xlreaper_config *cfg,
                       uint32_t domid, xlreaper_uid_switch mode, char **dir_r)
{
    struct stat st;
    char *dir;
    int rc;

    *dir_r = NULL;
    if (!cfg->chroot_base)
        return 0;
    if (asprintf(&dir, "%s/qemu-root-%u", cfg->chroot_base, domid) < 0)
        return XLREAPER_ERROR_NOMEM;
    if (lstat(dir, &st) < 0 && errno == ENOENT) {
        LOGD(DEBUG, domid, "no %s: no chroot", dir);
        free(dir);
        return 0;
    }
    rc = check_chroot(ctx, domid, dir, mode == XLREAPER_UID_SWITCH_RUNAS);
    if (rc) {
        free(dir);
        return rc;
    }
    *dir_r = dir;
    return 0;
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* A -run-with value names dir with its commas doubled, as QemuOpts
 * reads them. */
static char *run_with_escape(const char *key, const char *val)
{
    size_t n = strlen(key) + 2 * strlen(val) + 1;
    char *out = malloc(n), *o = out;

    if (!out)
        return NULL;
    o = stpcpy(o, key);
    for (const char *v = val; *v; v++) {
        *o++ = *v;
        if (*v == ',')
            *o++ = ',';
    }
    *o = '\0';
    return out;
}

/* Up to 4 arguments runas mode adds: -runas/-run-with, -chroot/... */
typedef struct {
    char *arg[4];
    unsigned num;
} extra_args;

static void extra_args_dispose(extra_args *x)
{
    for (unsigned i = 0; i < x->num; i++)
        free(x->arg[i]);
    x->num = 0;
}

static int extra_add(extra_args *x, const char *opt, char *val)
{
    if (!val)
        return XLREAPER_ERROR_NOMEM;
    x->arg[x->num] = strdup(opt);
    if (!x->arg[x->num]) {
        free(val);
        return XLREAPER_ERROR_NOMEM;
    }
    x->arg[x->num + 1] = val;
    x->num += 2;
    return 0;
}

/*
 * Runas mode: the command line must make QEMU switch to exactly our ids
 * and, when libxl's chroot exists, chroot there; what is missing is
 * added in a form the installed QEMU takes.  A user name is refused as
 * well as wrong ids: QEMU would call initgroups() for it, handing the DM
 * that user's supplementary groups.
 *
 * The form follows libxl's choice first: a line that already uses
 * -run-with (libxl 4.20+, whose QMP probe found QEMU takes it) only
 * ever gets -run-with added, never -runas or -chroot, which QEMU 10.0
 * and 9.0 removed; if -help then lists no such key, refused.
 */
static int plan_runas(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                      const xlreaper__qemu_cmdline *cl, const char *chroot_dir,
                      extra_args *x)
{
    uint32_t domid = plan->domid;
    unsigned features = 0;
    bool probed = false;
    char *val;
    uid_t u;
    gid_t g;
    int rc;

    if (cl->runas) {
        if (xlreaper__qemu_parse_ids(cl->runas, &u, &g) < 0) {
            LOGD(ERROR, domid,
                 "QEMU's command line runs it as \"%s\", not as uid:gid; "
                 "refusing it (expected %lu:%lu)",
                 cl->runas, (unsigned long)plan->uid,
                 (unsigned long)plan->gid);
            return XLREAPER_ERROR_INVAL;
        }
        if (u != plan->uid || g != plan->gid) {
            LOGD(ERROR, domid,
                 "QEMU's command line runs it as %lu:%lu, but this "
                 "domain's device model ids are %lu:%lu (check "
                 "dm_uid_base and dm_gid_mode; libxl passes the range "
                 "base's gid, i.e. dm_gid_mode = \"range-base\"); refusing "
                 "it",
                 (unsigned long)u, (unsigned long)g, (unsigned long)plan->uid,
                 (unsigned long)plan->gid);
            return XLREAPER_ERROR_INVAL;
        }
    } else {
        rc = xlreaper__qemu_probe(ctx, domid, plan->path, &features);
        if (rc)
            return rc;
        probed = true;
        /* -runas is deprecated from QEMU 9.1: prefer -run-with, as
         * upstream libxl does once it has probed. */
        if (features & XLREAPER__QEMU_HAS_RUN_WITH_USER) {
            if (asprintf(&val, "user=%lu:%lu", (unsigned long)plan->uid,
                         (unsigned long)plan->gid) < 0)
                val = NULL;
            rc = extra_add(x, "-run-with", val);
        } else if (cl->num_run_with) {
            LOGD(ERROR, domid,
                 "the command line uses -run-with but %s -help lists no "
                 "-run-with user=; not adding -runas to it",
                 plan->path);
            return XLREAPER_ERROR_INVAL;
        } else if (features & XLREAPER__QEMU_HAS_RUNAS) {
            if (asprintf(&val, "%lu:%lu", (unsigned long)plan->uid,
                         (unsigned long)plan->gid) < 0)
                val = NULL;
            rc = extra_add(x, "-runas", val);
        } else {
            LOGD(ERROR, domid,
                 "%s offers neither -runas nor -run-with "
                 "user=; cannot make it switch uid",
                 plan->path);
            return XLREAPER_ERROR_INVAL;
        }
        if (rc)
            return rc;
    }

    /* A chroot the line names elsewhere than chroot_base says is still
     * QEMU's world: it must be as libxl makes it too. */
    if (!chroot_dir)
        return cl->chroot ? check_chroot(ctx, domid, cl->chroot, true) : 0;
    if (cl->chroot) {
        if (!same_file(cl->chroot, chroot_dir)) {
            LOGD(ERROR, domid,
                 "QEMU's command line chroots it to %s, not "
                 "to this domain's %s; refusing it",
                 cl->chroot, chroot_dir);
            return XLREAPER_ERROR_INVAL;
        }
        return 0;
    }
    if (!probed) {
        rc = xlreaper__qemu_probe(ctx, domid, plan->path, &features);
        if (rc)
            return rc;
    }
    /* -chroot is deprecated from 8.1 and gone in 9.0. */
    if (features & XLREAPER__QEMU_HAS_RUN_WITH_CHROOT)
        return extra_add(x, "-run-with",
                         run_with_escape("chroot=", chroot_dir));
    if (cl->num_run_with) {
        LOGD(ERROR, domid,
             "the command line uses -run-with but %s -help lists no "
             "-run-with chroot=; not adding -chroot to it",
             plan->path);
        return XLREAPER_ERROR_INVAL;
    }
    if (features & XLREAPER__QEMU_HAS_CHROOT)
        return extra_add(x, "-chroot", strdup(chroot_dir));
    LOGD(ERROR, domid,
         "%s offers neither -chroot nor -run-with chroot=; "
         "cannot make it chroot to %s",
         plan->path, chroot_dir);
    return XLREAPER_ERROR_INVAL;
}

static int plan_copy_argv(xlreaper_spawn_plan *plan, char *const argv[],
                          const extra_args *x)
{
    size_t argc = 0, n = 0;

    while (argv[argc])
        argc++;
    plan->argv = calloc(argc + x->num + 1, sizeof(char *));
    if (!plan->argv)
        return XLREAPER_ERROR_NOMEM;
    for (size_t i = 0; i < argc; i++)
        if (!(plan->argv[n++] = strdup(argv[i])))
            return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < x->num; i++)
        if (!(plan->argv[n++] = strdup(x->arg[i])))
            return XLREAPER_ERROR_NOMEM;
    return 0;
}

/*
 * Each limit is set as soft = hard between fork and execve.  A hard limit
 * above the one this task inherited can only be set with
 * CAP_SYS_RESOURCE: libxl's preexec (libxl_linux.c) has already set its
 * own limits as hard ones before it runs the wrapper (RLIMIT_FSIZE 256
 * KiB), and root lacks the capability in some containers.  Without it,
 * such a limit is clamped here, in the parent, to the inherited hard limit
 * (stricter than configured, never looser) and the clamp is logged,
 * rather than failing setrlimit in the child: QEMU 10, which needs 64 MiB
 * of RLIMIT_FSIZE for its display memfds, then dies of SIGXFSZ, and the
 * log line says why.
 */
static void plan_rlimits(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                         const xlreaper_config *cfg)
{
    int can_raise = xlreaper__cap_effective(CAP_SYS_RESOURCE);

    plan->rl[0].resource = RLIMIT_NPROC;
    plan->rl[0].limit = cfg->nproc_limit;
    plan->num_rl = 1;
    for (unsigned i = 0; i < cfg->num_rlimits && plan->num_rl < MAX_RL; i++) {
        plan->rl[plan->num_rl].resource = cfg->rlimits[i].resource;
        plan->rl[plan->num_rl].limit = (rlim_t)cfg->rlimits[i].limit;
        plan->num_rl++;
    }
    if (can_raise == 1)
        return;
    for (unsigned i = 0; i < plan->num_rl; i++) {
        struct rlimit cur;
        const char *key = "nproc_limit";

        if (getrlimit(plan->rl[i].resource, &cur) < 0 ||
            cur.rlim_max == RLIM_INFINITY || plan->rl[i].limit <= cur.rlim_max)
            continue;
        for (unsigned k = 0; k < cfg->num_rlimits; k++)
            if (cfg->rlimits[k].resource == plan->rl[i].resource)
                key = cfg->rlimits[k].key;
        LOGD(WARN, plan->domid,
             "%s = %llu is above the inherited hard %s of %llu, and "
             "raising it needs CAP_SYS_RESOURCE, which this process %s: "
             "%llu applies",
             key, (unsigned long long)plan->rl[i].limit,
             rlimit_name(plan->rl[i].resource),
             (unsigned long long)cur.rlim_max,
             can_raise == 0 ? "lacks" : "may lack (capget failed)",
             (unsigned long long)cur.rlim_max);
        plan->rl[i].limit = cur.rlim_max;
    }
}

int xlreaper_spawn_plan_new(xlreaper_ctx *ctx, uint32_t domid,
                            const char *prog, char *const argv[],
                            xlreaper_spawn_plan **plan_r)
{
    const xlreaper_config *cfg = ctx->cfg;
    xlreaper__qemu_cmdline *cl = NULL;
    extra_args x = { .num = 0 };
    xlreaper_spawn_plan *plan;
    char *chroot_dir = NULL;
    int rc;

    if (!cfg || !prog || !*prog || !argv || !argv[0]) {
        LOGD(ERROR, domid, "spawn: no program given");
        return XLREAPER_ERROR_INVAL;
    }
    plan = calloc(1, sizeof(*plan));
    if (!plan)
        return XLREAPER_ERROR_NOMEM;
    plan->exe_fd = -1;
    plan->domid = domid;
    plan->envp = environ;
    plan->mode = cfg->uid_switch;
    plan->unshare_ipc_mount = cfg->unshare_ipc_mount;
    plan->unshare_net = cfg->unshare_net;
    plan->dumpable = cfg->dumpable;
    plan_rlimits(ctx, plan, cfg);

    rc = xlreaper_dm_ids(ctx, domid, &plan->uid, &plan->gid);
    if (rc) {
        LOG(ERROR, "domid %u: not a domid with a device model uid", domid);
        goto fail;
    }
    /* The config refuses a range that wraps; a plan does not rely on it:
     * (uid_t)-1 would leave setresuid's ids unchanged, i.e. root. */
    if (plan->uid == (uid_t)-1 || plan->uid <= cfg->dm_uid_base ||
        plan->gid == (gid_t)-1 || plan->gid == 0) {
        LOGD(ERROR, domid,
             "device model ids %lu:%lu are out of range "
             "(uid range base %lu)",
             (unsigned long)plan->uid, (unsigned long)plan->gid,
             (unsigned long)cfg->dm_uid_base);
        rc = XLREAPER_ERROR_INVAL;
        goto fail;
    }
    /* A group of the host holding the DM's gid (issue 17) would hand it
     * that group's files, and the DM's files to the group's members. */
    rc = xlreaper__dm_gid_check(ctx, domid, plan->gid);
    if (rc)
        goto fail;

    rc = xlreaper__setid_filter_plan(ctx, domid, &plan->setid);
    if (rc)
        goto fail;

    rc = XLREAPER_ERROR_NOMEM;
    plan->path = resolve_prog(prog);
    if (!plan->path)
        goto fail;
    rc = check_executable(ctx, domid, plan->path);
    if (rc)
        goto fail;

    cl = malloc(sizeof(*cl));
    if (!cl) {
        rc = XLREAPER_ERROR_NOMEM;
        goto fail;
    }
    rc = xlreaper__qemu_cmdline_parse(ctx, domid, argv, cl);
    if (rc)
        goto fail;
    for (unsigned i = 0; i < cl->num_keep; i++) {
        if (fcntl(cl->keep[i], F_GETFD) < 0) {
            LOGED(ERROR, domid,
                  "the command line names descriptor %d, "
                  "which is not open",
                  cl->keep[i]);
            rc = XLREAPER_ERROR_INVAL;
            goto fail;
        }
    }
    memcpy(plan->keep, cl->keep, cl->num_keep * sizeof(cl->keep[0]));
    plan->num_keep = cl->num_keep;
    xlreaper__report_xen_fds(ctx, domid, plan->keep, plan->num_keep);

    rc = find_chroot(ctx, cfg, domid, plan->mode, &chroot_dir);
    if (rc)
        goto fail;

    if (plan->mode == XLREAPER_UID_SWITCH_RUNAS) {
        rc = plan_runas(ctx, plan, cl, chroot_dir, &x);
        if (rc)
            goto fail;
    } else {
        if (cl->runas || cl->chroot) {
            LOGD(ERROR, domid,
                 "the command line asks the program to %s itself, which "
                 "needs root, but uid_switch = \"exec\" starts it without: "
                 "use uid_switch = \"runas\"",
                 cl->runas ? "switch uid" : "chroot");
            rc = XLREAPER_ERROR_INVAL;
            goto fail;
        }
        if (chroot_dir) {
            /* The path means nothing inside the chroot: exec the file
             * checked here through a descriptor. */
            plan->exe_fd = open(plan->path, O_PATH | O_CLOEXEC);
            if (plan->exe_fd >= 0)
                plan->exe_fd = xlreaper__fd_above_stdio(plan->exe_fd);
            if (plan->exe_fd < 0) {
                LOGED(ERROR, domid, "%s", plan->path);
                rc = XLREAPER_ERROR_FAIL;
                goto fail;
            }
            plan->chroot_dir = chroot_dir;
            chroot_dir = NULL;
        }
    }

    if (cfg->cgroup_parent) {
        rc = xlreaper__cgroup_check(ctx, domid, cfg->cgroup_parent);
        if (rc)
            goto fail;
        plan->cgroup_parent = strdup(cfg->cgroup_parent);
        if (!plan->cgroup_parent) {
            rc = XLREAPER_ERROR_NOMEM;
            goto fail;
        }
    }

    rc = plan_copy_argv(plan, argv, &x);
    if (rc)
        goto fail;

    extra_args_dispose(&x);
    free(chroot_dir);
    free(cl);
    *plan_r = plan;
    return 0;

fail:
    extra_args_dispose(&x);
    free(chroot_dir);
    free(cl);
    xlreaper_spawn_plan_free(plan);
    return rc;
}

/* ---------- applying it: async-signal-safe from here ---------- */

static void fail_step(const spawn_run *run, int *step_r, int *err_r,
                      long *detail_r, int step, long detail)
{
    if (run->wfd >= 0)
        xlreaper__child_fail(run->wfd, step, errno, detail);
    *step_r = step;
    *err_r = errno;
    *detail_r = detail;
}

/*
 * uid_check: the spawn child itself asks the kernel whether the DM uid
 * has any other task, live or zombie (the kernel's per-user count, as in
 * xlreaper_count.c), at the moment it takes the uid, without a probe
 * process: a probe per spawn (a fork of the whole caller, or even a
 * vfork of the child) doubled the cost of a spawn (bench_spawn.c).
 *
 * The kernel rule (execve(2), EAGAIN, since Linux 3.1): set*uid() that
 * changes the real uid marks the task when the new uid's count is over
 * RLIMIT_NPROC, and the next execve fails with EAGAIN if the count is
 * still over the limit then; execve checks this before it looks at the
 * file.  The mark is computed before the task itself is counted, so
 *   soft limit 0, setresuid(uid, uid, 0): marked iff another task exists
 *   soft limit 1, execve("/"): EAGAIN iff marked and another task still
 *                exists; else the mark is cleared and "/" fails EACCES
 * and no other task is created.  Under the lock no task can join the
 * uid meanwhile.
 *
 * During the check the child is (uid, uid, 0): the saved uid 0 is the
 * asymmetry of xlreaper_reap.c's uid table: a task of the uid, which is there
 * exactly when the check fails, can neither prlimit() the child to raise
 * its limit and pass a busy uid as empty, nor ptrace it (both need all
 * three uids to match), whatever fs.suid_dumpable says.  It can kill it,
 * which only fails the spawn.  Then (uid, uid, uid), which drops the
 * permitted capabilities, and the soft limit goes up to nproc_limit.
 *
 * Used in forked spawns of exec mode.  In place the caller could not
 * undo the steps before to reap, and in runas mode the child stays root;
 * those ask a probe in the parent first (ensure_uid_empty).
 */
static int uid_check(const xlreaper_spawn_plan *plan)
{
    struct rlimit one = { .rlim_cur = 1, .rlim_max = plan->rl[0].limit };

    if (xlreaper__sys_setresuid(plan->uid, plan->uid, 0) < 0)
        return STEP_SETRESUID;
    if (setrlimit(RLIMIT_NPROC, &one) < 0)
        return STEP_RLIMIT_RAISE;
    execve("/", plan->argv, plan->envp);
    if (errno == EAGAIN)
        return STEP_UID_BUSY;
    return 0;
}

/*
 * Applies plan to the calling process and execs.  Returns only on
 * failure: with run->wfd >= 0 (a forked child) it reports and _exits;
 * in place it sets the step, errno and detail and returns.
 */
static void apply_plan(const spawn_run *run, int *step_r, int *err_r,
                       long *detail_r)
{
    const xlreaper_spawn_plan *plan = run->plan;
    /* The kernel's struct sigaction: glibc's sigaction() refuses its own
     * signals 32 and 33, which a caller may have ignored (SIG_IGN
     * survives execve). */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
    } dfl = { .handler = SIG_DFL };
    unsigned lo = 3;
    sigset_t none;
    uid_t r, e, s;
    gid_t gr, ge, gs;

#define FAIL(step, detail)                                                    \
    return fail_step(run, step_r, err_r, detail_r, (step), (long)(detail))

    /* A DM must not inherit the toolstack's mask or ignored signals. */
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        FAIL(STEP_SIGNALS, 0);
    for (int sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP &&
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask)) < 0)
            FAIL(STEP_SIGNALS, sig);

    /* Close every descriptor but 0-2, the kept ones and our own (which
     * are close-on-exec and go at execve): whatever another thread of
     * the caller opened, with or without close-on-exec, is gone. */
    for (unsigned i = 0; i < run->num_preserve; i++) {
        unsigned p = (unsigned)run->preserve[i];
        if (xlreaper__close_from(lo, p - 1) < 0)
            FAIL(STEP_CLOSE_FDS, lo);
        lo = p + 1;
    }
    if (xlreaper__close_from(lo, ~0u) < 0)
        FAIL(STEP_CLOSE_FDS, lo);
    /* A closed 0-2 would be taken by the DM's next open(): a log written
     * into a disk image. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        if (errno != EBADF)
            FAIL(STEP_STDIO, fd);
        if (open("/dev/null", O_RDWR) != fd) /* the lowest free one */
            FAIL(STEP_STDIO, fd);
    }
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_SETFD, 0) < 0)
            FAIL(STEP_KEEP_FD, fd);
    for (unsigned i = 0; i < plan->num_keep; i++)
        if (fcntl(plan->keep[i], F_SETFD, 0) < 0)
            FAIL(STEP_KEEP_FD, plan->keep[i]);

    if (xlreaper__sys_setgroups0() < 0)
        FAIL(STEP_SETGROUPS, 0);
    if (xlreaper__sys_setresgid(plan->gid, plan->gid, plan->gid) < 0)
        FAIL(STEP_SETRESGID, plan->gid);
    /* NPROC first; counted against the real uid, which is the DM's from
     * setresuid on (exec mode) or from QEMU's own setuid (runas). */
    for (unsigned i = 0; i < plan->num_rl; i++) {
        struct rlimit rl = { .rlim_cur = plan->rl[i].limit,
                             .rlim_max = plan->rl[i].limit };
        if (i == 0 && run->uid_check)
            rl.rlim_cur = 0; /* until the check (uid_check) */
        if (setrlimit(plan->rl[i].resource, &rl) < 0)
            FAIL(STEP_RLIMIT, i);
    }

    if (plan->unshare_ipc_mount && unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
        FAIL(STEP_UNSHARE_NS, 0);
    if (plan->unshare_net && unshare(CLONE_NEWNET) < 0)
        FAIL(STEP_UNSHARE_NET, 0);
    if (plan->chroot_dir) {
        if (chroot(plan->chroot_dir) < 0)
            FAIL(STEP_CHROOT, 0);
        if (chdir("/") < 0)
            FAIL(STEP_CHDIR, 0);
    }
    /* "0" is the writer itself: no pid to format, and right in any pid
     * namespace. */
    if (run->cgroup_fd >= 0 && write(run->cgroup_fd, "0", 1) != 1)
        FAIL(STEP_CGROUP, 0);

    if (plan->mode == XLREAPER_UID_SWITCH_EXEC) {
        if (run->uid_check) {
            struct rlimit rl = { .rlim_cur = plan->rl[0].limit,
                                 .rlim_max = plan->rl[0].limit };
            int step = uid_check(plan);

            if (step == STEP_SETRESUID)
                FAIL(STEP_SETRESUID, plan->uid);
            if (step)
                FAIL(step, 0); /* STEP_UID_BUSY with EAGAIN: not alone */
            if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) < 0)
                FAIL(STEP_SETRESUID, plan->uid);
            if (setrlimit(RLIMIT_NPROC, &rl) < 0)
                FAIL(STEP_RLIMIT_RAISE, 0);
        } else if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) <
                   0) {
            FAIL(STEP_SETRESUID, plan->uid);
        }
        if (getresuid(&r, &e, &s) < 0 || r != plan->uid || e != plan->uid ||
            s != plan->uid) {
            errno = EPERM;
            FAIL(STEP_CHECK_IDS, 0);
        }
        if (xlreaper__caps_none(true) < 0)
            FAIL(STEP_CHECK_CAPS, 0);
    }
    if (getresgid(&gr, &ge, &gs) < 0 || gr != plan->gid || ge != plan->gid ||
        gs != plan->gid) {
        errno = EPERM;
        FAIL(STEP_CHECK_IDS, 0);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        FAIL(STEP_NO_NEW_PRIVS, 0);
    if (prctl(PR_SET_DUMPABLE, plan->dumpable ? 1 : 0, 0, 0, 0) < 0)
        FAIL(STEP_DUMPABLE, 0);
    /* Last: nothing above makes a file, and the filter needs
     * no_new_privs.  It outlives execve and binds all the DM starts. */
    if (xlreaper__setid_filter_install(&plan->setid) < 0)
        FAIL(STEP_SETID_FILTER, 0);

    if (plan->exe_fd >= 0)
        syscall(SYS_execveat, plan->exe_fd, "", plan->argv, plan->envp,
                AT_EMPTY_PATH);
    else
        execve(plan->path, plan->argv, plan->envp);
    FAIL(STEP_EXECVE, 0);
#undef FAIL
}

/* ---------- before the fork: the lock and leftovers ---------- */

/* The uid of the plan is not empty and will not be reaped: say so. */
static void log_busy(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan)
{
    xlreaper_task_list l;

    xlreaper_task_list_init(&l);
    xlreaper_scan_uid(ctx, plan->uid, &l);
    if (l.num)
        LOGD(ERROR, plan->domid,
             "uid %lu still has tasks (%u visible, first pid %ld): a "
             "previous domain's device model lives on; reap it with "
             "`xl-reaper kill %u`, or set reap_stale = 1 (`xl-reaper "
             "spawn --reap-stale`)",
             (unsigned long)plan->uid, l.num, (long)l.tasks[0].tid,
             plan->domid);
    else
        LOGD(ERROR, plan->domid,
             "uid %lu still has tasks (the kernel counts them, /proc "
             "shows none: a fork racer?): a previous domain's device "
             "model lives on; reap it with `xl-reaper kill %u`, or set "
             "reap_stale = 1 (`xl-reaper spawn --reap-stale`)",
             (unsigned long)plan->uid, plan->domid);
    xlreaper_task_list_dispose(&l);
}

/* With the lock held: reaps the stale tasks of the plan's uid.  0 only
 * when the kernel then counts none. */
static int reap_stale(xlreaper_ctx *ctx, xlreaper_lock *lock,
                      const xlreaper_spawn_plan *plan)
{
    xlreaper_reap_result res;
    char *what;
    int rc;

    LOGD(WARN, plan->domid,
         "uid %lu still has tasks of a previous domain; reaping them "
         "before the new device model starts",
         (unsigned long)plan->uid);
    xlreaper_reap_result_init(&res);
    /* The new DM is counted against the same uid: wait for "empty".
     * The reap lets the lock go between its rounds, so that a uid that
     * stays stuck does not hold up the host; it is taken again after,
     * and the caller checks the uid anew under it. */
    rc = xlreaper_reap_flags(ctx, lock, plan->domid,
                             XLREAPER_REAP_WAIT_EMPTY |
                                 XLREAPER_REAP_LOCK_ROUNDS,
                             &res);
    what = xlreaper_reap_result_describe(&res);
    if (!rc && res.outcome != XLREAPER_OUTCOME_EMPTY)
        rc = XLREAPER_ERROR_BUSY; /* zombies would still count */
    if (rc)
        LOGD(ERROR, plan->domid, "stale tasks: %s",
             what ? what : "(out of memory)");
    else
        LOGD(WARN, plan->domid, "stale tasks: %s",
             what ? what : "(out of memory)");
    free(what);
    xlreaper_reap_result_dispose(&res);
    if (!rc)
        rc = xlreaper__lock_acquire_unmarked(ctx, plan->uid, &lock);
    return rc;
}

/* With the lock held: fails unless domid's uid is empty, or is made so. */
static int ensure_uid_empty(xlreaper_ctx *ctx, xlreaper_lock *lock,
                            const xlreaper_spawn_plan *plan, bool reap)
{
    bool empty;
    int rc;

    rc = xlreaper_uid_empty(ctx, plan->uid, &empty);
    if (rc || empty)
        return rc;
    if (reap) {
        /* The lock was let go and taken again: the uid is asked anew,
         * in the hold that starts the DM. */
        rc = reap_stale(ctx, lock, plan);
        if (!rc)
            rc = xlreaper_uid_empty(ctx, plan->uid, &empty);
        if (rc || empty)
            return rc;
    }
    log_busy(ctx, plan);
    return XLREAPER_ERROR_BUSY;
}

static void preserve_add(spawn_run *run, int fd)
{
    unsigned i;

    if (fd <= 2)
        return;
    for (i = 0; i < run->num_preserve && run->preserve[i] < fd; i++)
        ;
    if (i < run->num_preserve && run->preserve[i] == fd)
        return;
    memmove(&run->preserve[i + 1], &run->preserve[i],
            (run->num_preserve - i) * sizeof(run->preserve[0]));
    run->preserve[i] = fd;
    run->num_preserve++;
}

static void preserve_remove(spawn_run *run, int fd)
{
    for (unsigned i = 0; i < run->num_preserve; i++) {
        if (run->preserve[i] == fd) {
            memmove(&run->preserve[i], &run->preserve[i + 1],
                    (run->num_preserve - i - 1) * sizeof(run->preserve[0]));
            run->num_preserve--;
            return;
        }
    }
}

/*
 * Takes the lock, checks the uid, makes the cgroup, and fills run with
 * the descriptors the child must not close.  On failure nothing is left
 * held.
 */
static bool want_reap(const xlreaper_ctx *ctx, unsigned flags)
{
    return (flags & XLREAPER_SPAWN_REAP_STALE) || ctx->cfg->reap_stale;
}

static int prepare(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                   unsigned flags, bool forked, xlreaper_lock **lock_r,
                   spawn_run *run)
{
    char *cgdir = NULL;
    int rc;

    run->plan = plan;
    run->wfd = -1;
    run->cgroup_fd = -1;
    run->num_preserve = 0;
    run->uid_check = forked && plan->mode == XLREAPER_UID_SWITCH_EXEC &&
                     plan->rl[0].limit >= 2;
    *lock_r = NULL;

    if (geteuid() != 0) {
        LOGD(ERROR, plan->domid, "spawning a device model needs root");
        return XLREAPER_ERROR_PERM;
    }
    /* Not while a reap of the uid is between its rounds: the DM would
     * die in its next one (xlreaper_lock.c). */
    rc = xlreaper__lock_acquire_unmarked(ctx, plan->uid, lock_r);
    if (rc)
        goto fail;
    if (!run->uid_check) {
        rc = ensure_uid_empty(ctx, *lock_r, plan, want_reap(ctx, flags));
        if (rc)
            goto fail;
    }
    if (plan->cgroup_parent) {
        rc = xlreaper__cgroup_prepare(ctx, plan->domid, plan->cgroup_parent,
                                      &cgdir, &run->cgroup_fd);
        if (rc)
            goto fail;
        LOGD(DEBUG, plan->domid, "cgroup %s", cgdir);
        free(cgdir);
    }
    for (unsigned i = 0; i < plan->num_keep; i++)
        preserve_add(run, plan->keep[i]);
    preserve_add(run, run->cgroup_fd);
    preserve_add(run, plan->exe_fd);
    return 0;

fail:
    xlreaper_lock_release(*lock_r);
    *lock_r = NULL;
    return rc;
}

static void run_dispose(spawn_run *run)
{
    xlreaper__close_keep_errno(run->cgroup_fd);
    run->cgroup_fd = -1;
}

static void log_step(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                     int step, int err, long detail)
{
    uint32_t d = plan->domid;

    switch (step) {
    case STEP_SETRESUID:
    case STEP_SETRESGID:
        LOGEV(ERROR, err, "spawn domid %u: %s(%ld)", d, step_name(step),
              detail);
        break;
    case STEP_KEEP_FD:
    case STEP_STDIO:
        LOGEV(ERROR, err, "spawn domid %u: %s %ld", d, step_name(step),
              detail);
        break;
    case STEP_RLIMIT:
        if (detail >= 0 && (unsigned long)detail < plan->num_rl)
            LOGEV(ERROR, err, "spawn domid %u: setrlimit(%s, %llu)", d,
                  rlimit_name(plan->rl[detail].resource),
                  (unsigned long long)plan->rl[detail].limit);
        else
            LOGEV(ERROR, err, "spawn domid %u: setrlimit", d);
        break;
    case STEP_CHROOT:
        LOGEV(ERROR, err, "spawn domid %u: chroot(%s)", d, plan->chroot_dir);
        break;
    case STEP_CGROUP:
        LOGEV(ERROR, err, "spawn domid %u: joining cgroup %s/dm-%u", d,
              plan->cgroup_parent, d);
        break;
    case STEP_EXECVE:
        LOGEV(ERROR, err, "spawn domid %u: execve(%s)", d, plan->path);
        break;
    default: LOGEV(ERROR, err, "spawn domid %u: %s", d, step_name(step));
    }
}

int xlreaper_spawn_exec(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                        unsigned flags)
{
    xlreaper_lock *lock = NULL;
    spawn_run run;
    int rc, step = 0, err = 0;
    long detail = 0;

    rc = prepare(ctx, plan, flags, false, &lock, &run);
    if (rc)
        return rc;
    /* Runas mode: this process becomes QEMU, root until its setuid.
     * Recorded under the lock, so that no reap after the lock is let go
     * misses it (xlreaper_dmpid.c). */
    if (plan->mode == XLREAPER_UID_SWITCH_RUNAS) {
        rc = xlreaper__dmpid_record(ctx, plan->domid, getpid());
        if (rc) {
            run_dispose(&run);
            xlreaper_lock_release(lock);
            return rc;
        }
    }
    /* The lock is held until the execve that makes the DM closes its
     * close-on-exec descriptor: no reaper can kill the uid between our
     * check that it is empty and the DM's birth. */
    preserve_add(&run, xlreaper__lock_fd(lock));
    apply_plan(&run, &step, &err, &detail);
    log_step(ctx, plan, step, err, detail);
    run_dispose(&run);
    xlreaper_lock_release(lock);
    return XLREAPER_ERROR_FAIL;
}

/*
 * One fork of run.  0: the child reached execve, *pid_r set.  1: it
 * reported a failing step in *rep, and was reaped.  Or an error.
 */
static int fork_once(xlreaper_ctx *ctx, spawn_run *run, pid_t *pid_r,
                     xlreaper__child_report *rep)
{
    const xlreaper_spawn_plan *plan = run->plan;
    xlreaper__report_pipe p = { -1, -1 };
    xlreaper__helper_end end;
    bool reported;
    pid_t pid;
    int rc, status;

    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        return rc;
    /* A caller with 0-2 closed would get the pipe there, and the child
     * would keep it as stdio: the parent would wait for the DM's end. */
    p.rfd = xlreaper__fd_above_stdio(p.rfd);
    p.wfd = xlreaper__fd_above_stdio(p.wfd);
    if (p.rfd < 0 || p.wfd < 0) {
        LOGED(ERROR, plan->domid, "moving the report pipe");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    run->wfd = p.wfd;
    preserve_add(run, p.wfd);
    pid = fork();
    if (pid < 0) {
        LOGED(ERROR, plan->domid, "fork for the device model");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (pid == 0) {
        int step, err;
        long detail;
        apply_plan(run, &step, &err, &detail);
        _exit(127); /* not reached: apply_plan reports and exits */
    }
    close(p.wfd);
    p.wfd = -1;
    /* Bounded: in a busy uid a task of the uid can stop the child while
     * it checks (uid_check), and we hold the lock. */
    rc = xlreaper__await_child(ctx, pid, p.rfd, xlreaper__helper_deadline(ctx),
                               false, rep, &reported, &status, &end);
    if (rc)
        goto out;
    if (end != XLREAPER__HELPER_DONE) {
        /* Killed and reaped: only a task of the uid can stop it. */
        *rep = (xlreaper__child_report){ .step = STEP_UID_BUSY,
                                         .err = EAGAIN };
        rc = 1;
        goto out;
    }
    if (reported) {
        /* It _exits at once after its report. */
        if (status == -1)
            xlreaper__wait_child(ctx, pid, &status);
        rc = 1;
        goto out;
    }
    *pid_r = pid;

out:
    preserve_remove(run, run->wfd);
    run->wfd = -1;
    xlreaper__report_pipe_close(&p);
    return rc;
}

int xlreaper_spawn(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                   unsigned flags, pid_t *pid_r, int *pidfd_r)
{
    xlreaper_lock *lock = NULL;
    /* fork_once fills it whenever it returns 1; zeroed so that no path
     * reads it unset (scan-build). */
    xlreaper__child_report rep = { 0 };
    spawn_run run;
    bool reaped = false;
    pid_t pid = -1;
    int rc;

    rc = prepare(ctx, plan, flags, true, &lock, &run);
    if (rc)
        return rc;
    for (;;) {
        rc = fork_once(ctx, &run, &pid, &rep);
        if (rc < 0)
            goto out;
        if (rc == 0)
            break;
        if (rep.step == STEP_UID_BUSY && rep.err == EAGAIN) {
            /* Found by the child itself (uid_check), under our lock. */
            if (want_reap(ctx, flags) && !reaped) {
                rc = reap_stale(ctx, lock, plan);
                if (rc)
                    goto out;
                reaped = true;
                continue;
            }
            log_busy(ctx, plan);
            rc = XLREAPER_ERROR_BUSY;
            goto out;
        }
        log_step(ctx, plan, rep.step, rep.err, rep.detail);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }

    /* Runas mode: the child is QEMU, root until its setuid; recorded
     * while we hold the lock (xlreaper_dmpid.c).  Without the record no
     * reap could reach it: it does not run. */
    if (plan->mode == XLREAPER_UID_SWITCH_RUNAS) {
        rc = xlreaper__dmpid_record(ctx, plan->domid, pid);
        if (rc) {
            int status;

            kill(pid, SIGKILL); /* our unreaped child: the pid is its */
            xlreaper__wait_child(ctx, pid, &status);
            goto out;
        }
    }

    /* Our unreaped child: its pid cannot be reused under us. */
    if (pidfd_r) {
        *pidfd_r = (int)syscall(SYS_pidfd_open, pid, 0);
        if (*pidfd_r < 0)
            LOGED(WARN, plan->domid, "pidfd_open %ld", (long)pid);
    }
    *pid_r = pid;
    rc = 0;

out:
    run_dispose(&run);
    xlreaper_lock_release(lock);
    return rc;
}
