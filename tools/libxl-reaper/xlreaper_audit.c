/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit.c - proving a host safe: every running DM jailed, every
 * dead domain's uid empty.  Read-only, except that XLREAPER_AUDIT_FIX
 * reaps leftover uids through xlreaper_reap.
 *
 * Which domains are live: libxenlight when there is a hypervisor, else
 * xenstore, else the audit says it could not tell (and then judges no
 * uid a leftover, but still checks the jail of every DM it finds).
 *
 * The uid range, cheaply.  One pass over /proc buckets every task by
 * the watched uid it carries (the range, the pet, the shared user).  A
 * pass can miss a fork racer: each generation lives shorter than the
 * pass takes to reach it (docs/facts.md F2).  But a task is missed only if it
 * came into being during the pass: readdir of /proc lists every pid
 * that exists for the whole of it, and a task of the range cannot
 * change to another uid of the range without privilege.  The kernel
 * counts every task it ever created in "processes" of /proc/stat
 * (total_forks, threads included, in every pid namespace).  So a pass
 * during which that count did not move ("quiet"), made from the initial
 * pid namespace, saw every task of the host, and a uid it saw nothing of
 * has no task: no probe is needed for it.  Passes are retried a few
 * times to get a quiet one; on a host where something forks all the
 * time (a fork racer, for one) none may be, and then every dead uid is
 * probed with the kernel's own count (xlreaper_uid_empty), which no
 * racer can hide from, at about a fork and a wait per uid.
 *
 * Probes are always made where a pass cannot be the last word: the pet
 * (one probe: if it ran anything, every reap would kill it and it could
 * kill the reaper), the uid of domid 0 when it is not the pet, and the
 * shared user's uid; and for every dead uid a pass saw tasks of, the
 * count, zombies included, for the report.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"

#define DEFAULT_MAX_PASSES 5
#define CMDLINE_MAX (128u * 1024)
#define LIMITS_MAX 4096
#define NO_DOMID XLREAPER_AUDIT_NO_DOMID
#define NO_UID XLREAPER_AUDIT_NO_UID

typedef struct {
    xlreaper_ctx *ctx;
    const xlreaper_config *cfg;
    const xlreaper_audit_opts *opts;
    const xlreaper__audit_hooks *h;
    xlreaper_audit_result *res;
    xlreaper__audit_watch w;
    bool live_known;
    xlreaper__audit_tasks tasks;   /* the last (quiet, if any) pass */
    xlreaper__audit_dmpids dmpids; /* per res->live[i] */
    xlreaper__xendevs xd;
} audit;

#define ADD(a, name, d, u, p, st, ...)                                        \
    xlreaper__audit_add((a)->res, (name), (d), (u), (p), (st), __VA_ARGS__)

static bool is_live(const audit *a, uint32_t domid)
{
    const xlreaper_audit_result *res = a->res;
    unsigned lo = 0, hi = res->num_live;

    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (res->live[mid] == domid)
            return true;
        if (res->live[mid] < domid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The domid whose DM uid this is, or NO_DOMID (base + 0 is no DM's). */
static uint32_t uid_domid(const audit *a, uid_t uid)
{
    uint32_t d;

    return xlreaper_uid_domid(a->ctx, uid, &d) ? NO_DOMID : d;
}

/* The domain a task belongs to: that of its real uid, else of the first
 * other uid in the range. */
static uint32_t task_domid(const audit *a, const xlreaper_task *t)
{
    uid_t ids[4] = { t->ruid, t->euid, t->suid, t->fsuid };

    for (int i = 0; i < 4; i++) {
        uint32_t d = uid_domid(a, ids[i]);
        if (d != NO_DOMID)
            return d;
    }
    return NO_DOMID;
}

static bool task_has_uid(const xlreaper_task *t, uid_t uid)
{
    return t->ruid == uid || t->euid == uid || t->suid == uid ||
           t->fsuid == uid;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ---------- live domains and xenstore ---------- */

/* Adds the domids of l not yet in res->live, keeping it sorted: a
 * domain created between two listings is live, not a leftover. */
static int merge_live(audit *a, const xlreaper__audit_live *l)
{
    xlreaper_audit_result *res = a->res;
    uint32_t *n;

    n = realloc(res->live, (res->num_live + l->num + 1) * sizeof(*n));
    if (!n)
        return XLREAPER_ERROR_NOMEM;
    res->live = n;
    /* gcc 12's -fanalyzer loses the realloc'd array once it is stored in
     * a->res->live (freed by xlreaper_audit_result_dispose) and calls it
     * a leak here and where list_live calls this: a false positive. */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    for (unsigned i = 0; i < l->num; i++)
        if (!is_live(a, l->domids[i])) {
            res->live[res->num_live++] = l->domids[i];
            qsort(res->live, res->num_live, sizeof(uint32_t), cmp_u32);
        }
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
    return 0;
}

static int list_live(audit *a)
{
    xlreaper_ctx *ctx = a->ctx;
    xlreaper__audit_live l;
    xlreaper__sb sb = { 0 };
    int rc;

    rc = xlreaper__audit_live_domains(ctx, a->h, a->opts->xenstore_timeout_ms,
                                      &l);
    if (rc)
        return rc;
    if (!l.source) {
        LOG(WARN, "audit: could not tell which domains are live: %s", l.why);
        free(l.domids);
        return ADD(a, "live_domains", NO_DOMID, NO_UID, 0,
                   XLREAPER_AUDIT_UNKNOWN,
                   "could not tell which domains are live (%s): no uid "
                   "can be judged a leftover",
                   l.why);
    }
    a->live_known = true;
    a->res->live_source = l.source;
#ifndef __clang__ /* merge_live's false leak, above */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    rc = merge_live(a, &l);
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
    free(l.domids);
    if (rc)
        return rc;
    for (unsigned i = 0; i < a->res->num_live; i++)
        xlreaper__sb_printf(&sb, "%s%u", i ? " " : "", a->res->live[i]);
    rc = ADD(a, "live_domains", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
             "%u live domain%s from %s%s%s", a->res->num_live,
             a->res->num_live == 1 ? "" : "s", l.source,
             a->res->num_live ? ": " : "",
             sb.oom   ? "(out of memory)"
             : sb.buf ? sb.buf
                      : "");
    xlreaper__sb_dispose(&sb);
    return rc;
}

/* After the passes: a domain created meanwhile must count as live. */
static int relist_live(audit *a)
{
    xlreaper__audit_live l;
    int rc;

    if (!a->live_known)
        return 0;
    rc = xlreaper__audit_live_domains(a->ctx, a->h,
                                      a->opts->xenstore_timeout_ms, &l);
    if (!rc && l.source)
        rc = merge_live(a, &l);
    free(l.domids);
    return rc;
}

static int read_dm_pids(audit *a)
{
    xlreaper_audit_result *res = a->res;
    int rc;

    rc = xlreaper__audit_dm_pids(a->ctx, a->h, a->opts->xenstore_timeout_ms,
                                 res->live, res->num_live, &a->dmpids);
    if (rc)
        return rc;
    res->xenstore_reachable = a->dmpids.reachable;
    if (!a->dmpids.reachable)
        return ADD(a, "xenstore", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_SKIP,
                   "not reachable (%s): DM pids not cross-checked",
                   a->dmpids.why);
    return ADD(a, "xenstore", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "reachable: DM pids cross-checked with "
               "/local/domain/<domid>/image/device-model-pid");
}

/* ---------- passwd ---------- */

typedef struct {
    uid_t base, pet;
    unsigned clashes;
    char first[64];
    uid_t first_uid;
} pw_walk;

static int pw_one(void *arg, const char *name, uid_t uid)
{
    pw_walk *w = arg;

    if (uid < w->base || uid - w->base > xlreaper_max_domid())
        return 0;
    /* The range base and the pet are the users that name the range. */
    if (uid == w->base && (!strcmp(name, XLREAPER_USER_RANGE_BASE) ||
                           !strcmp(name, XLREAPER_USER_REAPER)))
        return 0;
    if (!w->clashes++) {
        snprintf(w->first, sizeof(w->first), "%s", name);
        w->first_uid = uid;
    }
    return 0;
}

/* Walked again, though config_load did it: a long-lived ctx (the
 * daemon) may have loaded the config before a user was added. */
static int check_passwd(audit *a)
{
    xlreaper_ctx *ctx = a->ctx;
    pw_walk w = { .base = a->w.base, .pet = a->w.pet };
    int rc;

    rc = ctx->pw->each(ctx->pw_opaque, pw_one, &w);
    if (rc < 0)
        return ADD(a, "passwd_range", NO_DOMID, NO_UID, 0,
                   XLREAPER_AUDIT_UNKNOWN, "walking passwd failed: %s",
                   xlreaper_strerror(rc));
    if (w.clashes)
        return ADD(
            a, "passwd_range", NO_DOMID, w.first_uid, 0, XLREAPER_AUDIT_FAIL,
            "%u passwd user%s inside the uid range %lu..%lu, first "
            "%s (uid %lu, domid %lu's)",
            w.clashes, w.clashes == 1 ? "" : "s", (unsigned long)a->w.base,
            (unsigned long)(a->w.base + xlreaper_max_domid()), w.first,
            (unsigned long)w.first_uid,
            (unsigned long)(w.first_uid - a->w.base));
    return ADD(a, "passwd_range", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "no other passwd user inside the uid range %lu..%lu "
               "(validated at config load, and again now)",
               (unsigned long)a->w.base,
               (unsigned long)(a->w.base + xlreaper_max_domid()));
}

static uid_t shared_user_uid(audit *a)
{
    xlreaper_ctx *ctx = a->ctx;
    uid_t uid;
    gid_t gid;
    bool found = false;

    if (ctx->pw->by_name(ctx->pw_opaque, XLREAPER_USER_SHARED, &uid, &gid,
                         &found) ||
        !found || uid == 0)
        return NO_UID;
    return uid;
}

/* ---------- the passes ---------- */

static int read_forks(audit *a, uint64_t *v)
{
    if (a->h && a->h->forks)
        return a->h->forks(a->h->opaque, v);
    return xlreaper__audit_read_forks(a->ctx, v);
}

static int passes(audit *a)
{
    unsigned max =
        a->h && a->h->max_passes ? a->h->max_passes : DEFAULT_MAX_PASSES;
    uint64_t f0, f1;
    int rc;

    for (unsigned i = 0; i < max; i++) {
        xlreaper__audit_tasks_dispose(&a->tasks);
        rc = read_forks(a, &f0);
        if (!rc)
            rc = xlreaper__audit_pass(a->ctx, &a->w, &a->tasks);
        if (!rc)
            rc = read_forks(a, &f1);
        if (rc)
            return rc;
        a->res->passes++;
        if (f1 == f0) {
            a->res->quiet = true;
            break;
        }
        /* Something forked; a little later the host may be still. */
        xlreaper__sleep_us(1000u << i);
    }
    return 0;
}

/* ---------- one DM process ---------- */

typedef struct {
    pid_t pid;
    uint32_t domid;
    uid_t uid;
    gid_t gid;
    xlreaper__audit_tasks threads;
    char comm[17];
} dm_proc;

/* Every thread of pid, watched or not: a root thread inside a DM (or
 * the other way round) is exactly what the ids check is for. */
static int read_threads(pid_t pid, xlreaper__audit_tasks *out)
{
    char path[64];
    struct dirent *de;
    DIR *d;
    int rc = 0;

    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    d = opendir(path);
    if (!d)
        return XLREAPER_ERROR_FAIL;
    while ((de = readdir(d))) {
        xlreaper__audit_task at;
        char rel[300], *buf = NULL;
        ssize_t r;

        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(rel, sizeof(rel), "task/%s/status", de->d_name);
        r = xlreaper__audit_read_proc(pid, rel, 8192, &buf);
        if (r > 0 && !xlreaper__audit_parse_status(buf, (size_t)r, &at)) {
            if (out->num == out->cap) {
                unsigned ncap = out->cap ? out->cap * 2 : 16;
                xlreaper__audit_task *n =
                    realloc(out->tasks, ncap * sizeof(*n));
                if (!n) {
                    free(buf);
                    rc = XLREAPER_ERROR_NOMEM;
                    break;
                }
                out->tasks = n;
                out->cap = ncap;
            }
            out->tasks[out->num++] = at;
        }
        free(buf);
    }
    closedir(d);
    return rc;
}

static int check_ids(audit *a, const dm_proc *p)
{
    unsigned n = p->threads.num;

    for (unsigned i = 0; i < n; i++) {
        const xlreaper__audit_task *at = &p->threads.tasks[i];
        const xlreaper_task *t = &at->t;

        if (t->ruid != p->uid || t->euid != p->uid || t->suid != p->uid ||
            t->fsuid != p->uid || at->rgid != p->gid || at->egid != p->gid ||
            at->sgid != p->gid || at->fsgid != p->gid)
            return ADD(a, "ids", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                       "thread %ld: uids %lu %lu %lu %lu, gids %lu %lu %lu "
                       "%lu (real, effective, saved, fs); want uid %lu, "
                       "gid %lu",
                       (long)t->tid, (unsigned long)t->ruid,
                       (unsigned long)t->euid, (unsigned long)t->suid,
                       (unsigned long)t->fsuid, (unsigned long)at->rgid,
                       (unsigned long)at->egid, (unsigned long)at->sgid,
                       (unsigned long)at->fsgid, (unsigned long)p->uid,
                       (unsigned long)p->gid);
    }
    return ADD(a, "ids", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "real, effective, saved and fs uids %lu, gids %lu (%s), in "
               "%u thread%s",
               (unsigned long)p->uid, (unsigned long)p->gid,
               a->cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE ? "range-base"
                                                              : "per-domain",
               n, n == 1 ? "" : "s");
}

static int check_caps(audit *a, const dm_proc *p)
{
    for (unsigned i = 0; i < p->threads.num; i++) {
        const xlreaper__audit_task *at = &p->threads.tasks[i];

        if (!at->caps_known)
            return ADD(
                a, "caps", p->domid, p->uid, p->pid, XLREAPER_AUDIT_UNKNOWN,
                "thread %ld: no CapPrm/CapEff in its status", (long)at->t.tid);
        if (at->cap_prm || at->cap_eff || at->cap_amb)
            return ADD(a, "caps", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_FAIL,
                       "thread %ld holds capabilities: permitted %#llx, "
                       "effective %#llx, ambient %#llx",
                       (long)at->t.tid, (unsigned long long)at->cap_prm,
                       (unsigned long long)at->cap_eff,
                       (unsigned long long)at->cap_amb);
    }
    return ADD(a, "caps", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "no permitted, effective or ambient capability");
}

/*
 * No supplementary group, or exactly the DM's own gid: QEMU's -runas
 * calls setgroups(1, &gid) (os_setup_post), and a group the DM already
 * holds as its gid grants it nothing more.  Anything else fails.
 */
static int check_groups(audit *a, const dm_proc *p)
{
    bool own = false;

    for (unsigned i = 0; i < p->threads.num; i++) {
        const xlreaper__audit_task *at = &p->threads.tasks[i];
        xlreaper__sb sb = { 0 };
        unsigned kept;
        int rc;

        if (!at->ngroups)
            continue;
        if (at->ngroups == 1 && at->groups[0] == p->gid) {
            own = true;
            continue;
        }
        kept = at->ngroups < XLREAPER__AUDIT_GROUPS_KEPT
                   ? at->ngroups
                   : XLREAPER__AUDIT_GROUPS_KEPT;
        for (unsigned g = 0; g < kept; g++)
            xlreaper__sb_printf(&sb, " %lu", (unsigned long)at->groups[g]);
        rc = ADD(a, "groups", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                 "thread %ld has %u supplementary group%s:%s%s",
                 (long)at->t.tid, at->ngroups, at->ngroups == 1 ? "" : "s",
                 sb.buf ? sb.buf : "", at->ngroups > kept ? " ..." : "");
        xlreaper__sb_dispose(&sb);
        return rc;
    }
    if (own)
        return ADD(a, "groups", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "no supplementary group but its own gid %lu (as "
                   "QEMU's -runas leaves it)",
                   (unsigned long)p->gid);
    return ADD(a, "groups", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "no supplementary group");
}

static int check_nnp(audit *a, const dm_proc *p)
{
    for (unsigned i = 0; i < p->threads.num; i++) {
        const xlreaper__audit_task *at = &p->threads.tasks[i];

        if (at->nnp < 0)
            return ADD(a, "no_new_privs", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_UNKNOWN,
                       "thread %ld: the kernel shows no NoNewPrivs field",
                       (long)at->t.tid);
        if (!at->nnp)
            return ADD(a, "no_new_privs", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_FAIL,
                       "thread %ld: NoNewPrivs is 0: an execve of a setuid "
                       "binary would gain privilege",
                       (long)at->t.tid);
    }
    return ADD(a, "no_new_privs", p->domid, p->uid, p->pid,
               XLREAPER_AUDIT_PASS, "NoNewPrivs set");
}

/*
 * The uid switch the line asks of QEMU: libxl 4.17's -runas UID:GID or
 * 4.20's -run-with user=UID:GID (none when the wrapper switched before
 * exec).  Numeric ids must be the domain's: QEMU took that uid, and ids
 * does not see a line that names another (it would be the uid of
 * another domain, or a user's).  A name (device_model_user) is not
 * looked up; said as it is.
 */
static int check_cmdline_user(audit *a, const dm_proc *p,
                              const xlreaper__audit_cmdline *cl)
{
    const char *opt = cl->user_run_with ? "-run-with user=" : "-runas ";
    const char *restr = cl->restrict_opt ? "; -xen-domid-restrict" : "";
    uid_t u;
    gid_t g;

    if (!cl->user)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "-xen-domid %u matches the uid%s; no uid switch on "
                   "its command line",
                   cl->domid, restr);
    if (cl->nuser > 1)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "%u uid switches on its command line (-runas, -run-with "
                   "user=); the last says %s",
                   cl->nuser, cl->user);
    if (xlreaper__qemu_parse_ids(cl->user, &u, &g) < 0)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "-xen-domid %u matches the uid%s; %s%s is a name, not "
                   "checked here (ids is)",
                   cl->domid, restr, opt, cl->user);
    if (u != p->uid)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "%s%s on its command line, but domid %u's uid is %lu", opt,
                   cl->user, p->domid, (unsigned long)p->uid);
    return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "-xen-domid %u matches the uid%s; %s%s", cl->domid, restr, opt,
               cl->user);
}

static int check_cmdline(audit *a, const dm_proc *p,
                         xlreaper__audit_cmdline *cl, char **text_r)
{
    ssize_t n;

    /* Read by check_chroot whatever happens here: a cmdline that cannot
     * be read leaves it empty, not stack garbage (found by scan-build). */
    memset(cl, 0, sizeof(*cl));
    n = xlreaper__audit_read_proc(p->pid, "cmdline", CMDLINE_MAX, text_r);
    if (n < 0)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "reading its cmdline: %s",
                   strerror(errno));
    xlreaper__audit_parse_cmdline(*text_r, (size_t)n, cl);
    if (!n)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "empty command line: no -xen-domid to match the uid");
    if (cl->ambiguous)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "an option of its command line follows an option that "
                   "may take it as its value: what QEMU took cannot be "
                   "told (the wrapper refuses such a line)");
    if (!cl->ndomid)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "no -xen-domid on its command line: a process under "
                   "domid %u's uid that is not its DM",
                   p->domid);
    if (cl->domid_bad || cl->domid_conflict)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "%u -xen-domid options%s%s (the last says %u)", cl->ndomid,
                   cl->domid_bad ? ", not all valid domids" : "",
                   cl->domid_conflict ? ", disagreeing" : "", cl->domid);
    if (cl->domid != p->domid)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "-xen-domid %u, but it runs under domid %u's uid %lu: "
                   "one uid would serve two domains",
                   cl->domid, p->domid, (unsigned long)p->uid);
    return check_cmdline_user(a, p, cl);
}

/* ---------- limits ---------- */

typedef struct {
    int resource;
    uint64_t want;
    const char *from;
} want_limit;

static unsigned wanted_limits(const audit *a, want_limit *w, unsigned max)
{
    const xlreaper_config *cfg = a->cfg;
    unsigned n = 0;
    bool core = false;

    w[n++] = (want_limit){ RLIMIT_NPROC, cfg->nproc_limit, "nproc_limit" };
    for (unsigned i = 0; i < cfg->num_rlimits && n < max; i++) {
        if (cfg->rlimits[i].resource == RLIMIT_NPROC)
            continue;
        core |= cfg->rlimits[i].resource == RLIMIT_CORE;
        w[n++] = (want_limit){ cfg->rlimits[i].resource, cfg->rlimits[i].limit,
                               cfg->rlimits[i].key ? cfg->rlimits[i].key
                                                   : "config" };
    }
    /* A DM's core file holds its guest's memory: none, unless the
     * config asked for dumpable DMs. */
    if (!core && !cfg->dumpable && n < max)
        w[n++] = (want_limit){ RLIMIT_CORE, 0,
                               "default: a core holds guest memory" };
    return n;
}

static void fmt_limit(xlreaper__sb *sb, uint64_t v)
{
    if (v == XLREAPER__RLIM_INF)
        xlreaper__sb_printf(sb, "unlimited");
    else
        xlreaper__sb_printf(sb, "%llu", (unsigned long long)v);
}

static int check_limits(audit *a, const dm_proc *p)
{
    want_limit want[XLREAPER_MAX_RLIMITS + 2];
    unsigned nwant = wanted_limits(a, want, XLREAPER_MAX_RLIMITS + 2);
    xlreaper__sb ok = { 0 }, bad = { 0 };
    xlreaper_audit_status st = XLREAPER_AUDIT_PASS;
    char *text = NULL;
    ssize_t n;
    int rc;

    n = xlreaper__audit_read_proc(p->pid, "limits", LIMITS_MAX, &text);
    if (n < 0)
        return ADD(a, "rlimits", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "reading its limits: %s",
                   strerror(errno));
    for (unsigned i = 0; i < nwant; i++) {
        const char *name = xlreaper__audit_rlimit_name(want[i].resource);
        uint64_t soft, hard;

        if (xlreaper__audit_parse_limit(text, (size_t)n, want[i].resource,
                                        &soft, &hard)) {
            xlreaper__sb_printf(&bad, "%s%s: unreadable", bad.len ? "; " : "",
                                name);
            if (st < XLREAPER_AUDIT_UNKNOWN)
                st = XLREAPER_AUDIT_UNKNOWN;
            continue;
        }
        /* Lower is fine: a DM may only lower its own limits. */
        if (soft <= want[i].want && hard <= want[i].want) {
            xlreaper__sb_printf(&ok, "%s%s ", ok.len ? ", " : "", name);
            fmt_limit(&ok, soft);
            xlreaper__sb_printf(&ok, "/");
            fmt_limit(&ok, hard);
            continue;
        }
        st = XLREAPER_AUDIT_FAIL;
        xlreaper__sb_printf(&bad, "%s%s soft ", bad.len ? "; " : "", name);
        fmt_limit(&bad, soft);
        xlreaper__sb_printf(&bad, " hard ");
        fmt_limit(&bad, hard);
        xlreaper__sb_printf(&bad, " (want at most %llu, %s)",
                            (unsigned long long)want[i].want, want[i].from);
    }
    free(text);
    if (ok.oom || bad.oom)
        rc = XLREAPER_ERROR_NOMEM;
    else if (st == XLREAPER_AUDIT_PASS)
        rc = ADD(a, "rlimits", p->domid, p->uid, p->pid, st,
                 "in force (soft/hard): %s", ok.buf ? ok.buf : "");
    else
        rc = ADD(a, "rlimits", p->domid, p->uid, p->pid, st, "%s",
                 bad.buf ? bad.buf : "");
    xlreaper__sb_dispose(&ok);
    xlreaper__sb_dispose(&bad);
    return rc;
}

/* ---------- chroot ---------- */

static int check_chroot(audit *a, const dm_proc *p,
                        const xlreaper__audit_cmdline *cl)
{
    const char *base =
        a->h && a->h->chroot_base ? a->h->chroot_base : a->cfg->chroot_base;
    char want[PATH_MAX], got[PATH_MAX], root[64];
    const char *from;
    struct stat ws, rs;
    ssize_t n;

    if (cl->chroot) {
        from = cl->chroot_run_with ? "its -run-with chroot=" : "its -chroot";
        if (cl->chroot_len >= sizeof(want) || cl->chroot[0] != '/')
            return ADD(a, "chroot", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_UNKNOWN, "%s is not an absolute path",
                       from);
        memcpy(want, cl->chroot, cl->chroot_len);
        want[cl->chroot_len] = '\0';
    } else if (base) {
        snprintf(want, sizeof(want), "%s/qemu-root-%u", base, p->domid);
        from = "chroot_base";
    } else {
        return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                   "none asked: no -chroot and no chroot_base");
    }
    if (stat(want, &ws) < 0) {
        if (!cl->chroot && errno == ENOENT)
            return ADD(a, "chroot", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_SKIP, "none asked: no %s", want);
        return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "%s (from %s): %s", want, from, strerror(errno));
    }
    snprintf(root, sizeof(root), "/proc/%ld/root", (long)p->pid);
    if (stat(root, &rs) < 0)
        return ADD(a, "chroot", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "%s: %s", root, strerror(errno));
    /* By identity, not by name: readlink shows the path from our root,
     * and a name can be replaced. */
    if (rs.st_dev == ws.st_dev && rs.st_ino == ws.st_ino)
        return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "root is %s (from %s)", want, from);
    n = readlink(root, got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
               "root is %s, not %s (from %s)", n > 0 ? got : "unreadable",
               want, from);
}

/* ---------- Xen descriptors ---------- */

static int check_xen_fds(audit *a, const dm_proc *p)
{
    char path[64];
    unsigned nfd = 0, nxen = 0;
    struct dirent *de;
    int dfd, rc = 0;
    DIR *d;

    snprintf(path, sizeof(path), "/proc/%ld/fd", (long)p->pid);
    dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        xlreaper__close_keep_errno(dfd);
        return ADD(a, "xen_fds", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "%s: %s", path, strerror(errno));
    }
    while (!rc && (de = readdir(d))) {
        const xlreaper__xendev_node *node;
        unsigned long fd;
        char target[PATH_MAX], why[200];
        xlreaper_audit_status st;
        int perr, cerr, e;
        struct stat sb;
        ssize_t n;

        if (xlreaper__audit_parse_ulong(de->d_name, strlen(de->d_name),
                                        INT32_MAX, &fd))
            continue;
        nfd++;
        /* stat follows the magic link to the open file itself. */
        if (fstatat(dfd, de->d_name, &sb, 0) < 0)
            continue;
        node = xlreaper__xendevs_match(&a->xd, &sb);
        if (!node)
            continue;
        nxen++;
        n = readlinkat(dfd, de->d_name, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
        e = xlreaper__xenfd_probe(p->pid, (int)fd, node, p->domid, &perr,
                                  &cerr);
        if (e) {
            snprintf(why, sizeof(why),
                     "could not take a copy to probe (pidfd_getfd: %s)",
                     strerror(e));
            st = XLREAPER_AUDIT_UNKNOWN;
        } else {
            st = xlreaper__xenfd_verdict(node->kind, perr, cerr, p->domid, why,
                                         sizeof(why));
        }
        rc = ADD(a, "xen_fd", p->domid, p->uid, p->pid, st,
                 "fd %lu: %s %s (node %s): %s", fd,
                 xlreaper__xendev_name(node->kind), n > 0 ? target : "?",
                 node->path, why);
    }
    closedir(d);
    if (rc || nxen)
        return rc;
    return ADD(a, "xen_fds", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "none of its %u descriptors is open to a Xen device (%u Xen "
               "node%s on this host)",
               nfd, a->xd.num, a->xd.num == 1 ? "" : "s");
}

/* A DM in a user namespace of its own is root there (see
 * xlreaper_audit_userns.c). */
static int check_userns(audit *a, const dm_proc *p)
{
    unsigned long ino = 0, host = 0;
    int r = xlreaper__audit_userns(p->pid, &ino, &host);

    if (r < 0)
        return ADD(a, "userns", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN,
                   "its user namespace cannot be read (/proc/%ld/ns/user)",
                   (long)p->pid);
    if (r)
        return ADD(a, "userns", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "lives in user namespace %lu, not the host's (%lu): it "
                   "is root there, and can mount FUSE and make its own "
                   "tasks unkillable",
                   ino, host);
    return ADD(a, "userns", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "in the host's user namespace");
}

static int check_dm_proc(audit *a, dm_proc *p)
{
    xlreaper__audit_cmdline cl;
    char *cmdline = NULL;
    int rc;

    rc = read_threads(p->pid, &p->threads);
    if (rc == XLREAPER_ERROR_NOMEM)
        return rc;
    if (rc || !p->threads.num)
        return ADD(a, "dm", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                   "pid %ld exited during the audit", (long)p->pid);
    a->res->dms++;
    if ((rc = check_ids(a, p)) || (rc = check_caps(a, p)) ||
        (rc = check_groups(a, p)) || (rc = check_nnp(a, p)) ||
        (rc = check_userns(a, p)) ||
        (rc = check_cmdline(a, p, &cl, &cmdline)) ||
        (rc = check_limits(a, p)) || (rc = check_chroot(a, p, &cl)) ||
        (rc = check_xen_fds(a, p)))
        goto out;
out:
    free(cmdline);
    return rc;
}

/* ---------- per live domain ---------- */

/* The distinct processes (tgids) of domid in the pass, sorted. */
static unsigned dm_pids_of(const audit *a, uint32_t domid, pid_t *out,
                           unsigned max)
{
    unsigned n = 0;

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i].t;
        bool seen = false;

        if (task_domid(a, t) != domid)
            continue;
        for (unsigned j = 0; j < n; j++)
            seen |= out[j] == t->tgid;
        if (!seen && n < max)
            out[n++] = t->tgid;
    }
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
            pid_t x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

#define MAX_DM_PROCS 16

static bool is_root(const xlreaper_task *t)
{
    return !t->ruid && !t->euid && !t->suid && !t->fsuid;
}

/* Whether pid's command line is exactly libxl 4.20's option probe. */
static bool is_libxl_probe(pid_t pid)
{
    xlreaper__audit_cmdline *cl = malloc(sizeof(*cl));
    char *text = NULL;
    bool yes = false;
    ssize_t n;

    if (!cl)
        return false;
    n = xlreaper__audit_read_proc(pid, "cmdline", 4096, &text);
    if (n > 0) {
        xlreaper__audit_parse_cmdline(text, (size_t)n, cl);
        yes = cl->libxl_probe;
    }
    free(text);
    free(cl);
    return yes;
}

static int check_xs_pid(audit *a, uint32_t domid, uid_t uid, long xspid,
                        const pid_t *pids, unsigned npids)
{
    xlreaper__audit_task at;
    char *buf = NULL;
    ssize_t n;
    int rc;

    if (!a->dmpids.reachable)
        return 0;
    if (xspid == 0)
        return npids ? ADD(a, "xenstore_pid", domid, uid, pids[0],
                           XLREAPER_AUDIT_SKIP,
                           "xenstore has no image/device-model-pid")
                     : 0;
    if (xspid < 0)
        return ADD(a, "xenstore_pid", domid, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "xenstore's image/device-model-pid is not a pid");
    n = xlreaper__audit_read_proc((pid_t)xspid, "status", 8192, &buf);
    if (n <= 0 || xlreaper__audit_parse_status(buf, (size_t)n, &at)) {
        free(buf);
        return ADD(a, "xenstore_pid", domid, uid, (pid_t)xspid,
                   XLREAPER_AUDIT_SKIP,
                   "xenstore's device-model-pid %ld does not exist", xspid);
    }
    free(buf);
    /* What libxl kills on destroy when it finds no uid: it must be
     * jailed like the rest. */
    if (at.t.ruid == uid && at.t.euid == uid && at.t.suid == uid &&
        at.t.fsuid == uid)
        rc = ADD(
            a, "xenstore_pid", domid, uid, (pid_t)xspid, XLREAPER_AUDIT_PASS,
            "xenstore's device-model-pid %ld runs under the DM uid", xspid);
    else if (is_root(&at.t) && is_libxl_probe((pid_t)xspid))
        /* libxl 4.20+ records its option probe's pid there until the DM
         * starts: root by libxl's design, no -xen-domid, no guest. */
        rc = ADD(a, "xenstore_pid", domid, uid, (pid_t)xspid,
                 XLREAPER_AUDIT_SKIP,
                 "xenstore's device-model-pid %ld is libxl's QEMU option "
                 "probe (root, -machine none, no -xen-domid), not a DM: "
                 "libxl kills it before the DM starts",
                 xspid);
    else
        rc = ADD(a, "xenstore_pid", domid, uid, (pid_t)xspid,
                 XLREAPER_AUDIT_FAIL,
                 "xenstore's device-model-pid %ld (%s) runs as uids %lu %lu "
                 "%lu %lu, not under domid %u's uid %lu: not jailed",
                 xspid, at.t.comm, (unsigned long)at.t.ruid,
                 (unsigned long)at.t.euid, (unsigned long)at.t.suid,
                 (unsigned long)at.t.fsuid, domid, (unsigned long)uid);
    return rc;
}

static int check_domain(audit *a, uint32_t domid, long xspid)
{
    pid_t pids[MAX_DM_PROCS];
    unsigned n = dm_pids_of(a, domid, pids, MAX_DM_PROCS);
    xlreaper__sb sb = { 0 };
    uid_t uid;
    gid_t gid;
    int rc;

    xlreaper_dm_ids(a->ctx, domid, &uid, &gid);
    for (unsigned i = 0; i < n; i++)
        xlreaper__sb_printf(&sb, "%s%ld", i ? " " : "", (long)pids[i]);
    if (n)
        rc = ADD(a, "dm", domid, uid, pids[0], XLREAPER_AUDIT_PASS,
                 "%u process%s under its uid: pid %s", n, n == 1 ? "" : "es",
                 sb.buf ? sb.buf : "");
    else
        rc = ADD(a, "dm", domid, uid, 0, XLREAPER_AUDIT_SKIP,
                 "no process under uid %lu (no DM, a PV guest, or a stub "
                 "domain)",
                 (unsigned long)uid);
    xlreaper__sb_dispose(&sb);
    if (rc)
        return rc;
    rc = check_xs_pid(a, domid, uid, xspid, pids, n);
    for (unsigned i = 0; !rc && i < n; i++) {
        dm_proc p = { .pid = pids[i], .domid = domid, .uid = uid, .gid = gid };
        rc = check_dm_proc(a, &p);
        xlreaper__audit_tasks_dispose(&p.threads);
    }
    return rc;
}

/* Domains to check the jail of: the live ones, or, when liveness is
 * unknown, every domain with a task in the range. */
static int check_domains(audit *a)
{
    const xlreaper_audit_result *res = a->res;
    uint32_t *ds = NULL;
    unsigned nd = 0;
    int rc = 0;

    if (a->live_known) {
        for (unsigned i = 0; !rc && i < res->num_live; i++)
            rc = check_domain(a, res->live[i],
                              a->dmpids.pids ? a->dmpids.pids[i] : 0);
        return rc;
    }
    ds = calloc(a->tasks.num + 1, sizeof(*ds));
    if (!ds)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < a->tasks.num; i++) {
        uint32_t d = task_domid(a, &a->tasks.tasks[i].t);
        bool seen = false;
        for (unsigned j = 0; j < nd; j++)
            seen |= ds[j] == d;
        if (d != NO_DOMID && !seen)
            ds[nd++] = d;
    }
    qsort(ds, nd, sizeof(*ds), cmp_u32);
    for (unsigned i = 0; !rc && i < nd; i++)
        rc = check_domain(a, ds[i], 0);
    free(ds);
    return rc;
}

/* ---------- uids that must run nothing ---------- */

typedef struct {
    unsigned tasks, zombies;
    const xlreaper_task *first;
} bucket;

static bucket bucket_of(const audit *a, uid_t uid)
{
    bucket b = { 0 };

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i].t;
        if (!task_has_uid(t, uid))
            continue;
        if (!b.first)
            b.first = t;
        b.tasks++;
        b.zombies += t->state == 'Z' || t->state == 'X';
    }
    return b;
}

static int probe_empty(audit *a, uid_t uid, bool *empty_r)
{
    a->res->probes++;
    return xlreaper_uid_empty(a->ctx, uid, empty_r);
}

static int probe_count(audit *a, uid_t uid, unsigned *count_r)
{
    a->res->probes++;
    return xlreaper_uid_count(a->ctx, uid, count_r);
}

/*
 * Root's own helpers pass through these uids: a killer runs with real
 * uid pet, a kernel-census probe (ours, or xl-reaperd's sweeping at the
 * same time) with each dead uid in turn, a spawn's child holds the DM
 * uid before its execve; each for a millisecond or so, and always with
 * saved uid 0, which no DM task can have.  So a uid that a pass or the
 * kernel saw busy is looked at again: busy when a task of it without
 * saved uid 0 shows in /proc, or when the kernel still counts tasks of
 * it at every look (a fork racer hides from /proc, never from that);
 * settled empty as soon as the kernel counts none.  *busy_r is set.
 */
#define SETTLE_LOOKS 5
#define SETTLE_PAUSE_US 20000

static int settle(audit *a, uid_t uid, bool *busy_r)
{
    for (unsigned look = 0; look < SETTLE_LOOKS; look++) {
        xlreaper_task_list l;
        bool empty, real = false;
        int rc;

        if (look)
            xlreaper__sleep_us(SETTLE_PAUSE_US);
        xlreaper_task_list_init(&l);
        rc = xlreaper_scan_uid(a->ctx, uid, &l);
        for (unsigned i = 0; !rc && i < l.num; i++)
            real |= l.tasks[i].suid != 0;
        xlreaper_task_list_dispose(&l);
        if (rc)
            return rc;
        if (real) {
            *busy_r = true;
            return 0;
        }
        rc = probe_empty(a, uid, &empty);
        if (rc)
            return rc;
        if (empty) {
            *busy_r = false;
            return 0;
        }
    }
    *busy_r = true;
    return 0;
}

/* The pet, the uid of domid 0 and the shared user must never run
 * anything: a pass and the kernel count both say so. */
static int check_idle_uid(audit *a, const char *name, uid_t uid,
                          const char *what)
{
    bucket b = bucket_of(a, uid);
    unsigned count = 0;
    bool empty, busy;
    int rc;

    if (b.tasks) {
        rc = settle(a, uid, &busy);
        if (rc == XLREAPER_ERROR_NOMEM)
            return rc;
        if (!rc && !busy)
            return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_PASS,
                       "%s uid %lu runs nothing (kernel count 0; pid %ld, "
                       "seen in passing, was gone when looked at again)",
                       what, (unsigned long)uid, (long)b.first->tid);
    }
    if (b.tasks) {
        rc = probe_count(a, uid, &count);
        if (rc == XLREAPER_ERROR_NOMEM)
            return rc;
        return ADD(a, name, NO_DOMID, uid, b.first->tid, XLREAPER_AUDIT_FAIL,
                   "%s uid %lu runs %u task%s (kernel count %s%u, %u "
                   "zombie%s), first pid %ld (%s, state %c): it must run "
                   "nothing",
                   what, (unsigned long)uid, b.tasks, b.tasks == 1 ? "" : "s",
                   rc ? "unknown, " : "", count, b.zombies,
                   b.zombies == 1 ? "" : "s", (long)b.first->tid,
                   b.first->comm, b.first->state);
    }
    rc = probe_empty(a, uid, &empty);
    if (rc == XLREAPER_ERROR_NOMEM)
        return rc;
    if (rc)
        return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "%s uid %lu: the kernel-count probe failed", what,
                   (unsigned long)uid);
    if (!empty) {
        rc = settle(a, uid, &busy);
        if (rc == XLREAPER_ERROR_NOMEM)
            return rc;
        empty = !rc && !busy;
    }
    if (!empty)
        return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_FAIL,
                   "%s uid %lu: the kernel counts tasks that /proc did not "
                   "show (racing it?): it must run nothing",
                   what, (unsigned long)uid);
    return ADD(a, name, NO_DOMID, uid, 0, XLREAPER_AUDIT_PASS,
               "%s uid %lu runs nothing (kernel count 0)", what,
               (unsigned long)uid);
}

static int check_idle_uids(audit *a)
{
    int rc;

    rc = check_idle_uid(a, "reaper_idle", a->w.pet, "the reaper (pet)");
    if (!rc && a->w.pet != a->w.base)
        rc = check_idle_uid(a, "domid0_uid", a->w.base,
                            "the range base (domid 0's)");
    if (!rc && a->w.shared != NO_UID)
        rc = check_idle_uid(a, "shared_user", a->w.shared,
                            "the shared DM user " XLREAPER_USER_SHARED "'s");
    return rc;
}

/* ---------- no uid serves two domains ---------- */

static int check_shared(audit *a)
{
    const xlreaper_audit_result *res = a->res;

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i].t;
        uid_t ids[4] = { t->ruid, t->euid, t->suid, t->fsuid };
        uint32_t first = NO_DOMID;

        for (int k = 0; k < 4; k++) {
            uint32_t d = uid_domid(a, ids[k]);
            if (d == NO_DOMID)
                continue;
            if (first == NO_DOMID)
                first = d;
            else if (d != first)
                return ADD(a, "uid_shared", first, t->ruid, t->tid,
                           XLREAPER_AUDIT_FAIL,
                           "task %ld (%s) carries the uids of domids %u and "
                           "%u: uids %lu %lu %lu %lu",
                           (long)t->tid, t->comm, first, d,
                           (unsigned long)t->ruid, (unsigned long)t->euid,
                           (unsigned long)t->suid, (unsigned long)t->fsuid);
        }
    }
    for (unsigned i = 0; a->dmpids.reachable && i < res->num_live; i++)
        for (unsigned j = i + 1; j < res->num_live; j++)
            if (a->dmpids.pids[i] > 0 &&
                a->dmpids.pids[i] == a->dmpids.pids[j])
                return ADD(a, "uid_shared", res->live[i], NO_UID,
                           (pid_t)a->dmpids.pids[i], XLREAPER_AUDIT_FAIL,
                           "xenstore names pid %ld the DM of domids %u and "
                           "%u",
                           a->dmpids.pids[i], res->live[i], res->live[j]);
    return ADD(a, "uid_shared", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "no task carries two domains' uids; no DM pid serves two "
               "domains%s",
               a->cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE
                   ? " (gids are shared by design: dm_gid_mode range-base)"
                   : "");
}

/* ---------- leftovers ---------- */

static int fix_uid(audit *a, uint32_t domid, xlreaper_audit_check *c)
{
    xlreaper_reap_result rr;
    char *what, *reason;
    int rc;

    xlreaper_reap_result_init(&rr);
    rc = xlreaper_reap(a->ctx, NULL, domid, &rr);
    what = rr.outcome != XLREAPER_OUTCOME_NONE
               ? xlreaper_reap_result_describe(&rr)
               : NULL;
    c->fixed = true;
    if (!rc && rr.outcome == XLREAPER_OUTCOME_EMPTY)
        c->status = XLREAPER_AUDIT_PASS;
    if (asprintf(&reason, "%s; --fix reaped it: %s", c->reason,
                 what ? what : xlreaper_strerror(rc)) >= 0) {
        for (char *p = reason; *p; p++)
            if (*p < 0x20 || *p > 0x7e)
                *p = '?';
        free(c->reason);
        c->reason = reason;
    }
    free(what);
    xlreaper_reap_result_dispose(&rr);
    return 0;
}

/* Whether a pass saw a task of uid that is not one of root's helpers. */
static bool bucket_has_real(const audit *a, uid_t uid)
{
    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i].t;
        if (task_has_uid(t, uid) && t->suid != 0)
            return true;
    }
    return false;
}

/*
 * A task of a dead domain's uid in D state with SIGKILL pending has
 * been killed and cannot exit until what it waits on answers: a reap
 * says "stuck" of it (or, on a FUSE connection of the DM's own, aborts
 * it).  Said apart from the leftover, with where it waits.
 */
static int check_stuck(audit *a, uint32_t domid, uid_t uid)
{
    unsigned n = 0;
    const xlreaper_task *first = NULL;
    char *wchan = NULL;
    ssize_t len;
    int rc;

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i].t;

        if (task_has_uid(t, uid) && t->state == 'D' && t->kill_pending) {
            first = first ? first : t;
            n++;
        }
    }
    if (!first)
        return 0;
    len = xlreaper__audit_read_proc(first->tid, "wchan", 64, &wchan);
    if (len > 0)
        for (char *p = wchan; *p; p++)
            if (*p < 0x20 || *p > 0x7e)
                *p = '?';
    rc = ADD(a, "stuck", domid, uid, first->tid, XLREAPER_AUDIT_FAIL,
             "domid %u is not live, and %u task%s of its uid %lu %s in D "
             "state with SIGKILL pending, first pid %ld (%s) at %s: killed, "
             "it cannot exit until what it waits on answers "
             "(`xl-reaper kill %u` aborts the uid's own FUSE connections)",
             domid, n, n == 1 ? "" : "s", (unsigned long)uid,
             n == 1 ? "is" : "are", (long)first->tid, first->comm,
             len > 0 ? wchan : "?", domid);
    free(wchan);
    return rc;
}

static int leftover(audit *a, uint32_t domid, uid_t uid, const bucket *b,
                    unsigned *found)
{
    unsigned count = 0;
    bool busy;
    int rc, prc;

    /* Seen busy, by a pass or the kernel: a helper of root's in passing
     * is not a leftover (see settle). */
    prc = settle(a, uid, &busy);
    if (prc == XLREAPER_ERROR_NOMEM)
        return prc;
    if (!prc && !busy)
        return 0;
    /* The kernel could not be asked (the lock not had in time, a probe
     * that failed), and /proc showed only root's helpers, which no DM
     * task can be (saved uid 0): nothing here proves a failed cleanup,
     * nor that there is none.  A real task seen stays a violation. */
    if (prc && !bucket_has_real(a, uid))
        return ADD(a, "leftover", domid, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "domid %u is not live; its uid %lu showed only root's "
                   "helpers (saved uid 0) in /proc, and the kernel could "
                   "not be asked for its count: %s",
                   domid, (unsigned long)uid, xlreaper_strerror(prc));
    prc = probe_count(a, uid, &count);
    if (prc == XLREAPER_ERROR_NOMEM)
        return prc;
    if (b->tasks)
        rc = ADD(a, "leftover", domid, uid, b->first->tid, XLREAPER_AUDIT_FAIL,
                 "domid %u is not live, but its uid %lu has %u task%s in "
                 "/proc (%u zombie%s; kernel count %s%u), first pid %ld "
                 "(%s, state %c, ppid %ld): a failed cleanup",
                 domid, (unsigned long)uid, b->tasks, b->tasks == 1 ? "" : "s",
                 b->zombies, b->zombies == 1 ? "" : "s",
                 prc ? "unknown, " : "", count, (long)b->first->tid,
                 b->first->comm, b->first->state, (long)b->first->ppid);
    else
        rc = ADD(a, "leftover", domid, uid, 0, XLREAPER_AUDIT_FAIL,
                 "domid %u is not live, but the kernel counts %u task%s "
                 "of its uid %lu that /proc did not show: a task racing "
                 "/proc (a fork racer?)",
                 domid, count, count == 1 ? "" : "s", (unsigned long)uid);
    if (rc)
        return rc;
    /* For the metrics: how many tasks a dead domain left. */
    a->res->checks[a->res->num - 1].tasks =
        !prc && count > b->tasks ? count : b->tasks;
    (*found)++;
    /* The fix's reap says "stuck" itself, or frees them. */
    if (a->opts->flags & XLREAPER_AUDIT_FIX)
        return fix_uid(a, domid, &a->res->checks[a->res->num - 1]);
    return check_stuck(a, domid, uid);
}

static int check_dead_uids(audit *a)
{
    const xlreaper_audit_result *res = a->res;
    uint32_t max = a->h && a->h->sweep_max_domid ? a->h->sweep_max_domid
                                                 : xlreaper_max_domid();
    bool sweep = !res->quiet || !xlreaper__audit_init_pidns() ||
                 (a->opts->flags & XLREAPER_AUDIT_PROBE_ALL);
    uint64_t t0 = xlreaper__now_us();
    unsigned found = 0, probed = 0, dead = 0;
    uint32_t *seen;
    bool *busy = NULL;
    unsigned nseen = 0;
    int rc = 0;

    if (!a->live_known)
        return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_UNKNOWN,
                   "which domains are live is unknown, so no uid can be "
                   "judged a leftover");

    /* The dead domids a pass saw tasks of, each once. */
    seen = calloc(a->tasks.num + 1, sizeof(*seen));
    if (!seen)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i].t;
        uid_t ids[4] = { t->ruid, t->euid, t->suid, t->fsuid };
        for (int k = 0; k < 4; k++) {
            uint32_t d = uid_domid(a, ids[k]);
            bool dup = false;
            if (d == NO_DOMID || is_live(a, d))
                continue;
            for (unsigned j = 0; j < nseen; j++)
                dup |= seen[j] == d;
            if (!dup)
                seen[nseen++] = d;
        }
    }
    qsort(seen, nseen, sizeof(*seen), cmp_u32);
    for (unsigned i = 0; !rc && i < nseen; i++) {
        uid_t uid = a->w.base + seen[i];
        bucket b = bucket_of(a, uid);
        rc = leftover(a, seen[i], uid, &b, &found);
    }

    /* The kernel's answer for the whole range at once: one vfork per
     * uid in a single child, not two forks and a wait each, which on a
     * slow dom0 (or one where xl-reaperd sweeps meanwhile, so that no
     * pass is quiet) is the difference between seconds and many
     * minutes. */
    if (!rc && sweep) {
        busy = calloc(max + 1, sizeof(*busy));
        if (!busy) {
            free(seen);
            return XLREAPER_ERROR_NOMEM;
        }
        rc = xlreaper_census_kernel(a->ctx, 1, max, busy + 1);
        if (rc == XLREAPER_ERROR_NOMEM) {
            free(busy);
            free(seen);
            return rc;
        }
        if (rc) {
            free(busy);
            free(seen);
            return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0,
                       XLREAPER_AUDIT_UNKNOWN,
                       "the kernel census of the dead uids failed (%u "
                       "found with tasks before)",
                       found);
        }
    }

    for (uint32_t d = 1; !rc && d <= max; d++) {
        uid_t uid = a->w.base + d;
        bool dup = false;
        bucket none = { 0 };

        if (is_live(a, d))
            continue;
        dead++;
        if (!sweep)
            continue;
        for (unsigned j = 0; j < nseen; j++)
            dup |= seen[j] == d;
        if (dup)
            continue;
        probed++;
        a->res->probes++;
        if (busy[d])
            rc = leftover(a, d, uid, &none, &found);
    }
    free(busy);
    free(seen);
    if (rc)
        return rc;

    if (found)
        return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_FAIL,
                   "%u of the %u dead domids' uids ha%s tasks", found, dead,
                   found == 1 ? "s" : "ve");
    if (!sweep)
        return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
                   "none of the %u dead domids' uids has a task: a /proc "
                   "pass during which the host created no task saw none "
                   "(pass %u)",
                   dead, res->passes);
    return ADD(a, "dead_uids", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "none of the %u dead domids' uids has a task: the kernel "
               "counts none for each (%u probes in %.1f s, since %s)%s",
               dead, probed, (double)(xlreaper__now_us() - t0) / 1e6,
               (a->opts->flags & XLREAPER_AUDIT_PROBE_ALL)
                   ? "--probe-all asked"
               : !res->quiet ? "no /proc pass was quiet"
                             : "this is not the initial pid namespace",
               max < xlreaper_max_domid() ? "; domids beyond the test "
                                            "bound not checked"
                                          : "");
}

/* ---------- the whole audit ---------- */

int xlreaper__audit_run(xlreaper_ctx *ctx, const xlreaper_audit_opts *opts,
                        const xlreaper__audit_hooks *h,
                        xlreaper_audit_result *res)
{
    uint64_t start = xlreaper__now_us();
    audit a = {
        .ctx = ctx, .cfg = ctx->cfg, .opts = opts, .h = h, .res = res
    };
    int rc;

    if (!a.cfg)
        return XLREAPER_ERROR_INVAL;
    if (geteuid() != 0) {
        LOG(ERROR, "the audit needs root");
        ADD(&a, "root", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_UNKNOWN,
            "not run as root: /proc of other users and the kernel-count "
            "probes need it");
        return XLREAPER_ERROR_PERM;
    }
    a.w.base = a.cfg->dm_uid_base;
    a.w.pet = a.cfg->reaper_uid;
    a.w.shared = shared_user_uid(&a);
    xlreaper__xendevs_load(h && h->xen_dev_dir ? h->xen_dev_dir : "/dev/xen",
                           h && h->xenfs_dir ? h->xenfs_dir : "/proc/xen",
                           &a.xd);

    /* Xenstore is read after the passes, and once the live list is
     * final: its answers are kept per live domid. */
    if ((rc = list_live(&a)) || (rc = check_passwd(&a)) || (rc = passes(&a)) ||
        (rc = relist_live(&a)) || (rc = read_dm_pids(&a)) ||
        (rc = check_domains(&a)) || (rc = check_idle_uids(&a)) ||
        (rc = check_shared(&a)) || (rc = check_dead_uids(&a)) ||
        (rc = xlreaper__audit_setid(ctx, opts, h ? h->setid_roots : NULL,
                                    res)))
        goto out;
    rc = 0;

out:
    res->duration_us = xlreaper__now_us() - start;
    xlreaper__audit_tasks_dispose(&a.tasks);
    free(a.dmpids.pids);
    return rc;
}

int xlreaper_audit(xlreaper_ctx *ctx, const xlreaper_audit_opts *opts,
                   xlreaper_audit_result *res)
{
    return xlreaper__audit_run(ctx, opts, NULL, res);
}
