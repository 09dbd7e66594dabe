/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_spawn_plan.c - a spawn's plan: the config, the program and its
 * command line in, a plan out (xlreaper_spawn_internal.h says where the
 * other parts are).  Everything that can fail for an ordinary reason is
 * found here, before any fork: the program, the chroot, the ids the
 * command line gives QEMU, the descriptors to keep, the limits, the
 * set-id filter.  It reads the file system and the config; it starts,
 * joins or changes nothing.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>

#include "xlreaper_spawn_internal.h"

extern char **environ;

/* clang-format off: a table reads better one case a line. */
const char *xlreaper__spawn_rlimit_name(int resource)
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
    free(plan->record_root);
    free(plan->make_chroot);
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

/* Up to 5 arguments runas mode adds: -runas/-run-with, -chroot/...,
 * -xen-domid-restrict. */
typedef struct {
    char *arg[5];
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

static int extra_flag(extra_args *x, const char *opt)
{
    x->arg[x->num] = strdup(opt);
    if (!x->arg[x->num])
        return XLREAPER_ERROR_NOMEM;
    x->num++;
    return 0;
}

/*
 * add_dm_restrict: the chroot libxl makes for dm_restrict, made by the
 * spawn (prepare) when the line names none and it is absent: a
 * toolstack that asked no restriction (libvirt) makes none.  Only the
 * directory it is in is checked here; the spawn makes it root's, mode
 * 0000, and fails if it appeared meanwhile.
 */
static int plan_make_chroot(xlreaper_ctx *ctx, const xlreaper_config *cfg,
                            xlreaper_spawn_plan *plan, char **dir_r)
{
    struct stat st;

    if (lstat(cfg->chroot_base, &st) < 0) {
        LOGED(ERROR, plan->domid, "chroot_base %s", cfg->chroot_base);
        return XLREAPER_ERROR_INVAL;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
        LOGD(ERROR, plan->domid,
             "chroot_base %s is not a directory owned and only writable "
             "by root: not making a chroot in it",
             cfg->chroot_base);
        return XLREAPER_ERROR_INVAL;
    }
    if (asprintf(dir_r, "%s/qemu-root-%u", cfg->chroot_base, plan->domid) <
        0) {
        *dir_r = NULL;
        return XLREAPER_ERROR_NOMEM;
    }
    plan->make_chroot = strdup(*dir_r);
    return plan->make_chroot ? 0 : XLREAPER_ERROR_NOMEM;
}

/* The one line that says what was added to a command line. */
static void log_added(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                      const xlreaper_config *cfg,
                      const xlreaper__qemu_cmdline *cl, const extra_args *x)
{
    char added[8192];
    size_t n = 0;

    added[0] = '\0';
    for (unsigned i = 0; i < x->num && n < sizeof(added); i++)
        n += (size_t)snprintf(added + n, sizeof(added) - n, " %s", x->arg[i]);
    LOGD(NOTICE, plan->domid,
         "the command line lacked what the restriction needs; added:%s%s%s",
         added, plan->make_chroot ? " (chroot made)" : "",
         !cfg->add_dm_restrict && !cl->domid_restrict
             ? "; not -xen-domid-restrict (add_dm_restrict = 0)"
             : "");
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
static int plan_uid_chroot(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                           const xlreaper__qemu_cmdline *cl,
                           const char *chroot_dir, extra_args *x)
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

static int plan_runas(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                      const xlreaper__qemu_cmdline *cl, const char *chroot_dir,
                      extra_args *x)
{
    int rc = plan_uid_chroot(ctx, plan, cl, chroot_dir, x);

    /* Where the line lacks it (libvirt's: libxl without dm_restrict),
     * and the config asks for it.  QEMU restricts its Xen handles to
     * the domain once it has set up, before it drops root. */
    if (!rc && ctx->cfg->add_dm_restrict && !cl->domid_restrict) {
        rc = extra_flag(x, "-xen-domid-restrict");
        plan->drop_vkbd = true;
        plan->incoming_fd = cl->incoming_fd;
    }
    if (!rc && x->num && cl->last_unknown) {
        LOGD(ERROR, plan->domid,
             "the command line ends with %.64s, which may take what "
             "would be added as its value; refusing it",
             cl->last_unknown);
        rc = XLREAPER_ERROR_INVAL;
    }
    return rc;
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
        /* gcc 12's -fanalyzer loses each copy once it is stored in the
     * calloc'd plan->argv (freed, NULL-terminated, by
     * xlreaper_spawn_plan_free) and calls it a leak here: a false
     * positive, as in xlreaper_audit.c's merge_live (first reported
     * once the plan had a file of its own). */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    for (size_t i = 0; i < argc; i++)
        if (!(plan->argv[n++] = strdup(argv[i])))
            return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < x->num; i++)
        if (!(plan->argv[n++] = strdup(x->arg[i])))
            return XLREAPER_ERROR_NOMEM;
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
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
             xlreaper__spawn_rlimit_name(plan->rl[i].resource),
             (unsigned long long)cur.rlim_max,
             can_raise == 0 ? "lacks" : "may lack (capget failed)",
             (unsigned long long)cur.rlim_max);
        plan->rl[i].limit = cur.rlim_max;
    }
}

/*
 * The DM's oom_score_adj, written by the child while it is root: the
 * kernel lets any process raise its own, but lowering it below its
 * oom_score_adj_min needs CAP_SYS_RESOURCE, and a write made with that
 * capability sets the minimum too (__set_oom_adj, fs/proc/base.c).  So
 * written by the spawn, the value is the DM's floor; written without
 * the capability (root in some containers), the DM may lower it again
 * to what it inherited, which is said here, once, rather than trusted.
 */
static void plan_oom(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                     const xlreaper_config *cfg)
{
    int n = snprintf(plan->oom_adj, sizeof(plan->oom_adj), "%u",
                     cfg->dm_oom_score_adj);

    plan->oom_adj_len = n > 0 && (size_t)n < sizeof(plan->oom_adj) ? n : 0;
    /* INFO: a host property, said by `xl-reaper check` too; the audit
     * fails a DM that then lowers it. */
    if (xlreaper__cap_effective(CAP_SYS_RESOURCE) != 1)
        LOGD(INFO, plan->domid,
             "this process lacks CAP_SYS_RESOURCE: the device model's "
             "oom_score_adj is raised to %u (dm_oom_score_adj) but is not "
             "its floor, and it may lower it again to the value it "
             "inherited",
             cfg->dm_oom_score_adj);
}

/* The DM's uid and gid, checked, and the set-id filter that keeps it
 * to them.  0 or an error. */
static int plan_ids(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                    const xlreaper_config *cfg)
{
    uint32_t domid = plan->domid;
    int rc;

    rc = xlreaper_dm_ids(ctx, domid, &plan->uid, &plan->gid);
    if (rc) {
        LOG(ERROR, "domid %u: not a domid with a device model uid", domid);
        return rc;
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
        return XLREAPER_ERROR_INVAL;
    }
    /* A group of the host holding the DM's gid would hand it that
     * group's files, and the DM's files to the group's members. */
    rc = xlreaper__dm_gid_check(ctx, domid, plan->gid);
    if (rc)
        return rc;
    return xlreaper__setid_filter_plan(ctx, domid, &plan->setid);
}

/* The descriptors the command line hands QEMU: each must be open.  0
 * or _INVAL. */
static int plan_keep(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                     const xlreaper__qemu_cmdline *cl)
{
    for (unsigned i = 0; i < cl->num_keep; i++) {
        if (fcntl(cl->keep[i], F_GETFD) < 0) {
            LOGED(ERROR, plan->domid,
                  "the command line names descriptor %d, "
                  "which is not open",
                  cl->keep[i]);
            return XLREAPER_ERROR_INVAL;
        }
    }
    memcpy(plan->keep, cl->keep, cl->num_keep * sizeof(cl->keep[0]));
    plan->num_keep = cl->num_keep;
    xlreaper__report_xen_fds(ctx, plan->domid, plan->keep, plan->num_keep);
    return 0;
}

/* Exec mode: the program is started without root, so it can neither
 * switch uid nor chroot itself; the chroot is ours (*chroot_dir moves
 * into the plan).  0 or an error. */
static int plan_exec_chroot(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                            const xlreaper__qemu_cmdline *cl,
                            char **chroot_dir)
{
    if (cl->runas || cl->chroot) {
        LOGD(ERROR, plan->domid,
             "the command line asks the program to %s itself, which "
             "needs root, but uid_switch = \"exec\" starts it without: "
             "use uid_switch = \"runas\"",
             cl->runas ? "switch uid" : "chroot");
        return XLREAPER_ERROR_INVAL;
    }
    if (!*chroot_dir)
        return 0;
    /* The path means nothing inside the chroot: exec the file checked
     * here through a descriptor. */
    plan->exe_fd = open(plan->path, O_PATH | O_CLOEXEC);
    if (plan->exe_fd >= 0)
        plan->exe_fd = xlreaper__fd_above_stdio(plan->exe_fd);
    if (plan->exe_fd < 0) {
        LOGED(ERROR, plan->domid, "%s", plan->path);
        return XLREAPER_ERROR_FAIL;
    }
    plan->chroot_dir = *chroot_dir;
    *chroot_dir = NULL;
    return 0;
}

/* What root's record and the cgroup take from the plan.  0 or an
 * error. */
static int plan_root_cgroup(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                            const xlreaper_config *cfg,
                            const xlreaper__qemu_cmdline *cl,
                            const char *chroot_dir)
{
    /* The root the DM ends up in: ours (exec mode), else the one the
     * line asks QEMU for (libxl's, or the one plan_make_chroot added). */
    const char *root = plan->chroot_dir ? plan->chroot_dir
                       : cl->chroot     ? cl->chroot
                       : plan->mode == XLREAPER_UID_SWITCH_RUNAS ? chroot_dir
                                                                 : NULL;
    int rc;

    if (root && !(plan->record_root = strdup(root)))
        return XLREAPER_ERROR_NOMEM;
    if (!cfg->cgroup_parent)
        return 0;
    rc = xlreaper__cgroup_check(ctx, plan->domid, cfg->cgroup_parent);
    if (rc)
        return rc;
    plan->memory_max = cfg->dm_memory_max;
    plan->cgroup_parent = strdup(cfg->cgroup_parent);
    return plan->cgroup_parent ? 0 : XLREAPER_ERROR_NOMEM;
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
    plan_oom(ctx, plan, cfg);

    rc = plan_ids(ctx, plan, cfg);
    if (rc)
        goto out;

    rc = XLREAPER_ERROR_NOMEM;
    plan->path = resolve_prog(prog);
    if (!plan->path)
        goto out;
    rc = check_executable(ctx, domid, plan->path);
    if (rc)
        goto out;

    cl = malloc(sizeof(*cl));
    if (!cl) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    rc = xlreaper__qemu_cmdline_parse(ctx, domid, argv, cl);
    if (rc)
        goto out;
    rc = plan_keep(ctx, plan, cl);
    if (rc)
        goto out;

    rc = find_chroot(ctx, cfg, domid, plan->mode, &chroot_dir);
    if (rc)
        goto out;

    if (plan->mode == XLREAPER_UID_SWITCH_RUNAS) {
        if (cfg->add_dm_restrict && !chroot_dir && !cl->chroot &&
            cfg->chroot_base) {
            rc = plan_make_chroot(ctx, cfg, plan, &chroot_dir);
            if (rc)
                goto out;
        }
        rc = plan_runas(ctx, plan, cl, chroot_dir, &x);
        if (rc)
            goto out;
        if (x.num)
            log_added(ctx, plan, cfg, cl, &x);
    } else {
        rc = plan_exec_chroot(ctx, plan, cl, &chroot_dir);
        if (rc)
            goto out;
    }

    rc = plan_root_cgroup(ctx, plan, cfg, cl, chroot_dir);
    if (rc)
        goto out;
    rc = plan_copy_argv(plan, argv, &x);
    if (rc)
        goto out;
    *plan_r = plan;
    plan = NULL;

out:
    extra_args_dispose(&x);
    free(chroot_dir);
    free(cl);
    xlreaper_spawn_plan_free(plan);
    return rc;
}
