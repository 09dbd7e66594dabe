/*
 * xlreaper_spawn.c - starting a device model already inside its uid.
 *
 * Plan in the parent, apply in the child: everything that can fail for
 * an ordinary reason (config, paths, ids) is computed into a plan first;
 * between fork and execve the child only applies it, with
 * async-signal-safe calls on memory prepared before, checking each step
 * and reporting a failure as (step, errno) through a CLOEXEC pipe.  EOF
 * on the pipe means execve succeeded.
 */
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xlreaper_internal.h"

extern char **environ;

struct xlreaper_spawn_plan {
    uint32_t domid;
    uid_t uid;
    gid_t gid;
    char *path;
    char **argv;
    char **envp; /* borrowed: the environment at plan time */
    unsigned nproc;
};

/* The steps, in the order they are applied. */
enum {
    STEP_SIGNALS = 1,
    STEP_CLOSE_FDS,
    STEP_SETGROUPS,
    STEP_SETRESGID,
    STEP_RLIMIT_NPROC,
    STEP_SETRESUID,
    STEP_CHECK_IDS,
    STEP_CHECK_CAPS,
    STEP_NO_NEW_PRIVS,
    STEP_EXECVE,
};

static const char *step_name(int step)
{
    switch (step) {
    case STEP_SIGNALS: return "resetting signals";
    case STEP_CLOSE_FDS: return "close_range";
    case STEP_SETGROUPS: return "setgroups";
    case STEP_SETRESGID: return "setresgid";
    case STEP_RLIMIT_NPROC: return "setrlimit(RLIMIT_NPROC)";
    case STEP_SETRESUID: return "setresuid";
    case STEP_CHECK_IDS: return "checking the ids set";
    case STEP_CHECK_CAPS: return "checking no capability is left";
    case STEP_NO_NEW_PRIVS: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case STEP_EXECVE: return "execve";
    default: return "unknown step";
    }
}

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
    free(plan);
}

int xlreaper_spawn_plan_new(xlreaper_ctx *ctx, uint32_t domid,
                            const char *prog, char *const argv[],
                            xlreaper_spawn_plan **plan_r)
{
    xlreaper_spawn_plan *plan;
    size_t argc = 0;
    int rc;

    if (!ctx->cfg || !prog || !*prog || !argv || !argv[0]) {
        LOGD(ERROR, domid, "spawn: no program given");
        return XLREAPER_ERROR_INVAL;
    }
    plan = calloc(1, sizeof(*plan));
    if (!plan)
        return XLREAPER_ERROR_NOMEM;
    plan->domid = domid;
    plan->envp = environ;
    plan->nproc = ctx->cfg->nproc_limit;
    rc = xlreaper_dm_ids(ctx, domid, &plan->uid, &plan->gid);
    if (rc) {
        LOG(ERROR, "domid %u: not a domid with a device model uid", domid);
        goto fail;
    }

    rc = XLREAPER_ERROR_NOMEM;
    plan->path = resolve_prog(prog);
    if (!plan->path)
        goto fail;
    rc = check_executable(ctx, domid, plan->path);
    if (rc)
        goto fail;

    while (argv[argc])
        argc++;
    rc = XLREAPER_ERROR_NOMEM;
    plan->argv = calloc(argc + 1, sizeof(char *));
    if (!plan->argv)
        goto fail;
    for (size_t i = 0; i < argc; i++)
        if (!(plan->argv[i] = strdup(argv[i])))
            goto fail;

    *plan_r = plan;
    return 0;

fail:
    xlreaper_spawn_plan_free(plan);
    return rc;
}

/* ---------- applying it: async-signal-safe from here ---------- */

static void fail_step(int wfd, int *step_r, int *err_r, int step)
{
    if (wfd >= 0)
        xlreaper__child_fail(wfd, step, errno, 0);
    *step_r = step;
    *err_r = errno;
}

/*
 * Applies plan to the calling process and execs.  Returns only on
 * failure: with wfd >= 0 (a forked child) it reports and _exits; with
 * wfd < 0 (in place) it sets *step_r and *err_r and returns.
 */
static void apply_plan(const xlreaper_spawn_plan *plan, int wfd,
                       int *step_r, int *err_r)
{
    struct rlimit rl = { .rlim_cur = plan->nproc, .rlim_max = plan->nproc };
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigset_t none;
    uid_t r, e, s;
    gid_t gr, ge, gs;

    /* A DM must not inherit the toolstack's mask or handlers. */
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        return fail_step(wfd, step_r, err_r, STEP_SIGNALS);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL); /* EINVAL for glibc's own: fine */

    /* Everything above stderr closes at execve; the report pipe must stay
     * usable until then, so mark rather than close. */
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
        return fail_step(wfd, step_r, err_r, STEP_CLOSE_FDS);

    if (xlreaper__sys_setgroups0() < 0)
        return fail_step(wfd, step_r, err_r, STEP_SETGROUPS);
    if (xlreaper__sys_setresgid(plan->gid, plan->gid, plan->gid) < 0)
        return fail_step(wfd, step_r, err_r, STEP_SETRESGID);
    /* Counted against the real uid, which is about to be the DM's. */
    if (setrlimit(RLIMIT_NPROC, &rl) < 0)
        return fail_step(wfd, step_r, err_r, STEP_RLIMIT_NPROC);
    if (xlreaper__sys_setresuid(plan->uid, plan->uid, plan->uid) < 0)
        return fail_step(wfd, step_r, err_r, STEP_SETRESUID);
    if (getresuid(&r, &e, &s) < 0 || getresgid(&gr, &ge, &gs) < 0 ||
        r != plan->uid || e != plan->uid || s != plan->uid ||
        gr != plan->gid || ge != plan->gid || gs != plan->gid) {
        errno = EPERM;
        return fail_step(wfd, step_r, err_r, STEP_CHECK_IDS);
    }
    if (xlreaper__caps_none(true) < 0)
        return fail_step(wfd, step_r, err_r, STEP_CHECK_CAPS);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return fail_step(wfd, step_r, err_r, STEP_NO_NEW_PRIVS);

    execve(plan->path, plan->argv, plan->envp);
    fail_step(wfd, step_r, err_r, STEP_EXECVE);
}

/* ---------- before the fork: the lock and leftovers ---------- */

/* With the lock held: fails unless domid's uid is empty, or is made so. */
static int ensure_uid_empty(xlreaper_ctx *ctx, xlreaper_lock *lock,
                            const xlreaper_spawn_plan *plan, bool reap)
{
    xlreaper_reap_result res;
    xlreaper_task_list l;
    bool empty;
    char *what;
    int rc;

    rc = xlreaper_uid_empty(ctx, plan->uid, &empty);
    if (rc || empty)
        return rc;

    if (!reap) {
        xlreaper_task_list_init(&l);
        xlreaper_scan_uid(ctx, plan->uid, &l);
        LOGD(ERROR, plan->domid,
             "uid %lu still has tasks (%u visible%s%ld): a previous "
             "domain's device model lives on; reap it with `xl-reaper "
             "kill %u` or spawn with --reap-stale",
             (unsigned long)plan->uid, l.num, l.num ? ", first pid " : "",
             l.num ? (long)l.tasks[0].tid : 0L, plan->domid);
        xlreaper_task_list_dispose(&l);
        return XLREAPER_ERROR_BUSY;
    }

    LOGD(WARN, plan->domid,
         "uid %lu still has tasks of a previous domain; reaping them "
         "before the new device model starts",
         (unsigned long)plan->uid);
    xlreaper_reap_result_init(&res);
    rc = xlreaper_reap(ctx, lock, plan->domid, &res);
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
    return rc;
}

static int prepare(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                   unsigned flags, xlreaper_lock **lock_r)
{
    int rc;

    if (geteuid() != 0) {
        LOGD(ERROR, plan->domid, "spawning a device model needs root");
        return XLREAPER_ERROR_PERM;
    }
    rc = xlreaper_lock_acquire(ctx, lock_r);
    if (rc)
        return rc;
    rc = ensure_uid_empty(ctx, *lock_r, plan,
                          (flags & XLREAPER_SPAWN_REAP_STALE) ||
                              ctx->cfg->reap_stale);
    if (rc) {
        xlreaper_lock_release(*lock_r);
        *lock_r = NULL;
    }
    return rc;
}

static void log_step(xlreaper_ctx *ctx, const xlreaper_spawn_plan *plan,
                     int step, int err)
{
    if (step == STEP_SETRESUID || step == STEP_SETRESGID ||
        step == STEP_RLIMIT_NPROC)
        LOGEV(ERROR, err, "spawn domid %u: %s(%lu)", plan->domid,
              step_name(step),
              (unsigned long)(step == STEP_SETRESGID ? plan->gid
                              : step == STEP_RLIMIT_NPROC ? plan->nproc
                                                          : plan->uid));
    else if (step == STEP_EXECVE)
        LOGEV(ERROR, err, "spawn domid %u: execve %s", plan->domid,
              plan->path);
    else
        LOGEV(ERROR, err, "spawn domid %u: %s", plan->domid,
              step_name(step));
}

int xlreaper_spawn_exec(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                        unsigned flags)
{
    xlreaper_lock *lock = NULL;
    int rc, step = 0, err = 0;

    rc = prepare(ctx, plan, flags, &lock);
    if (rc)
        return rc;
    /* The lock's descriptor is O_CLOEXEC: it is dropped by the execve
     * that makes the DM, not before. */
    apply_plan(plan, -1, &step, &err);
    log_step(ctx, plan, step, err);
    xlreaper_lock_release(lock);
    return XLREAPER_ERROR_FAIL;
}

int xlreaper_spawn(xlreaper_ctx *ctx, xlreaper_spawn_plan *plan,
                   unsigned flags, pid_t *pid_r, int *pidfd_r)
{
    xlreaper_lock *lock = NULL;
    xlreaper__report_pipe p = { -1, -1 };
    xlreaper__child_report rep;
    pid_t pid;
    int rc, status, pidfd = -1;

    rc = prepare(ctx, plan, flags, &lock);
    if (rc)
        return rc;
    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        goto out;
    pid = fork();
    if (pid < 0) {
        LOGED(ERROR, plan->domid, "fork for the device model");
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (pid == 0) {
        int step, err;
        apply_plan(plan, p.wfd, &step, &err);
        _exit(127); /* not reached: apply_plan reports and exits */
    }
    close(p.wfd);
    p.wfd = -1;

    /* Our unreaped child: its pid cannot be reused under us. */
    if (pidfd_r) {
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
            LOGED(WARN, plan->domid, "pidfd_open %ld", (long)pid);
    }
    rc = xlreaper__report_read(ctx, p.rfd, &rep);
    if (rc != 0) {
        if (rc == 1)
            log_step(ctx, plan, rep.step, rep.err);
        xlreaper__wait_child(ctx, pid, &status);
        xlreaper__close_keep_errno(pidfd);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    *pid_r = pid;
    if (pidfd_r)
        *pidfd_r = pidfd;
    rc = 0;

out:
    xlreaper__report_pipe_close(&p);
    xlreaper_lock_release(lock);
    return rc;
}
