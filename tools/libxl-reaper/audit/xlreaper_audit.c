/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit.c - proving a host safe: every running DM jailed, every
 * dead domain's uid empty.  Read-only, except that XLREAPER_AUDIT_FIX
 * reaps leftover uids through xlreaper_reap.
 *
 * The checks are a table (checks[] below): each row names a line of the
 * result, its scope (the host, a live domain, a DM process, the dead
 * uids), the function that makes it and what it proves.  The run walks
 * the table; the live DMs' scope is xlreaper_audit_dm.c, the dead
 * uids' xlreaper_audit_dead.c.  docs/osstest.md and xl-reaper(8) list
 * the same names (tests/docs checks them against this table).
 *
 * A DM is judged by what the kernel says of it and by what root wrote
 * when it started it, never by what it says of itself: its cmdline,
 * environ and memory are not read (xlreaper_audit_facts.c).  The audit
 * has a deadline (xlreaper_audit_opts.deadline_ms): what is left when it
 * passes is "could not check", named.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"

#define DEFAULT_MAX_PASSES 5
#define NO_DOMID XLREAPER_AUDIT_NO_DOMID
#define NO_UID XLREAPER_AUDIT_NO_UID
#define ADD XLREAPER__AUDIT_ADD

typedef xlreaper__audit audit;

bool xlreaper__audit_is_live(const audit *a, uint32_t domid)
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
uint32_t xlreaper__audit_uid_domid(const audit *a, uid_t uid)
{
    uint32_t d;

    return xlreaper_uid_domid(a->ctx, uid, &d) ? NO_DOMID : d;
}

/* The domain a task belongs to: that of its real uid, else of the first
 * other uid in the range. */
uint32_t xlreaper__audit_task_domid(const audit *a, const xlreaper_task *t)
{
    uid_t ids[4] = { t->ruid, t->euid, t->suid, t->fsuid };

    for (int i = 0; i < 4; i++) {
        uint32_t d = xlreaper__audit_uid_domid(a, ids[i]);
        if (d != NO_DOMID)
            return d;
    }
    return NO_DOMID;
}

bool xlreaper__audit_task_has_uid(const xlreaper_task *t, uid_t uid)
{
    return t->ruid == uid || t->euid == uid || t->suid == uid ||
           t->fsuid == uid;
}

int xlreaper__audit_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

#define is_live xlreaper__audit_is_live
#define uid_domid xlreaper__audit_uid_domid
#define cmp_u32 xlreaper__audit_cmp_u32

bool xlreaper__audit_late(const audit *a)
{
    return a->deadline_us && xlreaper__now_us() >= a->deadline_us;
}

/* ---------- live domains and xenstore ---------- */

/* Adds the domids of l not yet in res->live, keeping it sorted: a
 * domain created between two listings is live, not a leftover. */
static int merge_live(audit *a, const xlreaper__audit_live *l)
{
    xlreaper_audit_result *res = a->res;

    /* gcc 12's -fanalyzer loses the grown array once it is stored in
     * a->res->live (freed by xlreaper_audit_result_dispose) and calls it
     * a leak here and where list_live calls this: a false positive. */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    for (unsigned i = 0; i < l->num; i++) {
        uint32_t *n;

        if (is_live(a, l->domids[i]))
            continue;
        n = xlreaper__grow(res->live, res->num_live, &a->live_cap, sizeof(*n),
                           16);
        if (!n)
            return XLREAPER_ERROR_NOMEM;
        res->live = n;
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
static int check_passwd(audit *a, xlreaper__audit_dm *unused)
{
    xlreaper_ctx *ctx = a->ctx;
    pw_walk w = { .base = a->w.base, .pet = a->w.pet };
    int rc;

    (void)unused;
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
        xlreaper_task_list_dispose(&a->tasks);
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

/* ---------- no uid serves two domains ---------- */

static int check_shared(audit *a, xlreaper__audit_dm *unused)
{
    const xlreaper_audit_result *res = a->res;

    (void)unused;

    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i];
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

/* ---------- the host's file table ---------- */

/*
 * xlreaper_pools.c's line, as check says it, for the DMs of the domains
 * live now (the whole range when they are unknown), with the files in
 * use.  Said, never a violation: what fills the table may be any
 * process's, and the remedy (fs.file-max, the DMs' memory, the kill
 * path opening nothing new) is the host's, not the audit's to judge.
 */
static int check_file_pool(audit *a, xlreaper__audit_dm *unused)
{
    const xlreaper_audit_result *res = a->res;
    uint64_t dms = res->live_source ? res->num_live : xlreaper_max_domid();
    xlreaper__file_pool_in in;
    xlreaper__file_pool p;
    char line[1024], nr[64] = "";
    FILE *f;

    (void)unused;
    if (xlreaper__file_pool_read("/proc/sys", a->cfg, dms, &in))
        return ADD(a, "file_pool", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_UNKNOWN,
                   "could not read fs.file-max, vm.max_map_count or "
                   "fs.nr_open in /proc/sys: %s",
                   strerror(errno));
    xlreaper__file_pool_calc(&in, &p);
    xlreaper__file_pool_text(&in, &p,
                             res->live_source ? "live domains now"
                                              : "live domains unknown, the "
                                                "range allows",
                             line, sizeof(line));
    f = fopen("/proc/sys/fs/file-nr", "re");
    if (f) {
        unsigned long long used;

        if (fscanf(f, "%llu", &used) == 1)
            snprintf(nr, sizeof(nr), "; %llu files in use", used);
        fclose(f);
    }
    return ADD(a, "file_pool", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "%s%s", line, nr);
}

/* ---------- the host's files ---------- */

static int check_setid(audit *a, xlreaper__audit_dm *unused)
{
    (void)unused;
    return xlreaper__audit_setid(a->ctx, a->opts,
                                 a->h ? a->h->setid_roots : NULL, a->res);
}

/* ---------- the deadline ---------- */

static int check_deadline(audit *a, xlreaper__audit_dm *unused)
{
    unsigned late = 0;

    (void)unused;
    for (unsigned i = 0; i < a->res->num; i++)
        late += a->res->checks[i].status == XLREAPER_AUDIT_UNKNOWN &&
                strstr(a->res->checks[i].reason, "deadline");
    a->res->deadline_ms = a->deadline_ms;
    a->res->deadline_passed = late > 0 || xlreaper__audit_late(a);
    if (a->res->deadline_passed)
        return ADD(a, "deadline", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_UNKNOWN,
                   "the audit's deadline of %u ms passed: %u check%s or "
                   "process%s could not be made (said in each line)",
                   a->deadline_ms, late, late == 1 ? "" : "s",
                   late == 1 ? "" : "es");
    return ADD(a, "deadline", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "every check made within the audit's deadline of %u ms "
               "(%.1f ms; each process's /proc given %u ms)",
               a->deadline_ms,
               (double)(xlreaper__now_us() - a->res->start_us) / 1000.0,
               a->opts->dm_timeout_ms);
}

/* ---------- the table ---------- */

#define HOST XLREAPER__SCOPE_HOST
#define DOMAIN XLREAPER__SCOPE_DOMAIN
#define DM XLREAPER__SCOPE_DM
#define DEAD XLREAPER__SCOPE_DEAD

static const xlreaper__audit_check_def checks[] = {
    { "root", HOST, NULL, "the audit runs as root (else nothing is checked)" },
    { "live_domains", HOST, NULL,
      "the live domains could be listed (libxenlight, else xenstore)" },
    { "xenstore", HOST, NULL,
      "xenstore answered: DM pids are cross-checked with it" },
    { "passwd_range", HOST, check_passwd,
      "no passwd user but the range's own inside the uid range" },
    { "dm", DOMAIN, xlreaper__audit_domains,
      "the processes under a live domain's uid, and which is its DM" },
    { "record", DOMAIN, NULL,
      "where a DM's expected values come from: root's record of its "
      "start, else the config and libxl's conventions" },
    { "xenstore_pid", DOMAIN, NULL,
      "xenstore's device-model-pid runs under the DM uid, or is libxl's "
      "QEMU option probe (known by kernel facts)" },
    { "qdisk_backend", DOMAIN, NULL,
      "libxl's qdisk backend QEMU of a PV or PVH guest, if it has one, "
      "runs under the DM uid, not as root" },
    { "tenant", DOMAIN, NULL,
      "every other process of a live domain's uid is restricted pygrub, "
      "jailed as it should be, while the domain is built" },
    { "ids", DM, xlreaper__audit_dm_ids,
      "four uids and four gids are the domain's, in every thread" },
    { "caps", DM, xlreaper__audit_dm_caps,
      "no permitted, effective or ambient capability, in every thread" },
    { "groups", DM, xlreaper__audit_dm_groups,
      "no supplementary group but its own gid, in every thread" },
    { "no_new_privs", DM, xlreaper__audit_dm_nnp,
      "NoNewPrivs in every thread" },
    { "seccomp", DM, xlreaper__audit_dm_seccomp,
      "the seccomp filter root's record says it was given, in every "
      "thread" },
    { "cmdline", DM, xlreaper__audit_dm_cmdline,
      "root's record of the line it exec'd names the domain and its uid "
      "(the DM's own cmdline is never read)" },
    { "rlimits", DM, xlreaper__audit_dm_limits,
      "the kernel's limits are at most root's record's (or the config's)" },
    { "namespaces", DM, xlreaper__audit_dm_ns,
      "its own mount and IPC (and network, if asked) namespaces" },
    { "userns", DM, xlreaper__audit_dm_userns,
      "it lives in the host's user namespace (in one of its own it is "
      "root there, and can make its own tasks unkillable)" },
    { "chroot", DM, xlreaper__audit_dm_chroot,
      "its root is the recorded one (or chroot_base's qemu-root-DOMID), "
      "by device and inode" },
    { "xen_fds", DM, xlreaper__audit_dm_xen_fds,
      "no descriptor open to a Xen device, or each one restricted" },
    { "xen_fd", DM, NULL, "one descriptor open to a Xen device, probed" },
    { "file_locks", DM, xlreaper__audit_dm_file_locks,
      "at most dm_max_file_locks file locks on its open files, counted "
      "from its fdinfo (the kernel bounds them nowhere else)" },
    { "oom_score_adj", DM, xlreaper__audit_dm_oom,
      "its oom_score_adj is at least dm_oom_score_adj: the OOM killer's "
      "choice before xenstored and the reaper" },
    { "reaper_idle", HOST, xlreaper__audit_idle_pet,
      "the pet uid runs nothing" },
    { "domid0_uid", HOST, xlreaper__audit_idle_base,
      "the range base (domid 0's uid) runs nothing" },
    { "shared_user", HOST, xlreaper__audit_idle_shared,
      "the shared DM user runs nothing" },
    { "file_pool", HOST, check_file_pool,
      "said, never a violation: one DM's nproc_limit x nofile_limit "
      "files against fs.file-max, and the live domains' DMs together "
      "(\"warning:\" past 1/8, or past all of it)" },
    { "uid_shared", HOST, check_shared,
      "no task carries two domains' uids; no DM pid serves two domains" },
    { "dead_uids", DEAD, xlreaper__audit_dead_uids,
      "no dead domain's uid has a task, and how that was established" },
    { "leftover", DEAD, NULL, "one dead domain's uid with tasks" },
    { "dead_objects", HOST, xlreaper__audit_dead_objects,
      "no dead domain's uid holds kernel keys or SysV IPC objects, which "
      "outlive its tasks and the next DM of that domid would find" },
    { "stuck", DEAD, NULL,
      "a leftover uid's tasks in D state with SIGKILL pending, named with "
      "where the first waits" },
    { "deadline", HOST, check_deadline,
      "every check was made within the audit's deadline" },
    /* Its own deadline (setid_timeout_ms), not the audit's. */
    { "setid", HOST, check_setid,
      "no file set-uid or set-gid to an id of the range" },
};

const xlreaper__audit_check_def *xlreaper__audit_checks(unsigned *n)
{
    *n = sizeof(checks) / sizeof(checks[0]);
    return checks;
}

const char *xlreaper__audit_scope_name(xlreaper__audit_scope s)
{
    switch (s) {
    case XLREAPER__SCOPE_HOST: return "host";
    case XLREAPER__SCOPE_DOMAIN: return "live domain";
    case XLREAPER__SCOPE_DM: return "DM process";
    case XLREAPER__SCOPE_DEAD: return "dead uids";
    }
    return "?";
}

/* ---------- the whole audit ---------- */

static void own_namespaces(audit *a)
{
    static const char *const paths[XLREAPER__LINKS] = {
        [XLREAPER__LINK_ROOT] = "/",
        [XLREAPER__LINK_MNT] = "/proc/self/ns/mnt",
        [XLREAPER__LINK_IPC] = "/proc/self/ns/ipc",
        [XLREAPER__LINK_NET] = "/proc/self/ns/net",
        [XLREAPER__LINK_USER] = "/proc/self/ns/user",
    };
    struct stat st;

    for (int l = 0; l < XLREAPER__LINKS; l++)
        if (paths[l] && stat(paths[l], &st) == 0) {
            a->own_ns[l].have = true;
            a->own_ns[l].dev = st.st_dev;
            a->own_ns[l].ino = st.st_ino;
        }
}

/* The default deadline: a few seconds for the host-wide work, and each
 * process of a live domain's uid its own read's time. */
static void set_deadline(audit *a)
{
    unsigned procs = 0;

    if (a->opts->deadline_ms) {
        a->deadline_ms = a->opts->deadline_ms;
    } else {
        for (unsigned i = 0; i < a->tasks.num; i++) {
            const xlreaper_task *t = &a->tasks.tasks[i];
            uint32_t d = xlreaper__audit_task_domid(a, t);
            procs += t->tid == t->tgid && d != NO_DOMID &&
                     (!a->live_known || is_live(a, d));
        }
        /* The recorded DMs may not be in their uid yet. */
        procs += a->res->num_live;
        a->deadline_ms =
            XLREAPER_AUDIT_DEADLINE_BASE_MS + a->opts->dm_timeout_ms * procs;
    }
    a->deadline_us = a->res->start_us + (uint64_t)a->deadline_ms * 1000;
}

int xlreaper__audit_run(xlreaper_ctx *ctx, const xlreaper_audit_opts *opts,
                        const xlreaper__audit_hooks *h,
                        xlreaper_audit_result *res)
{
    audit a = {
        .ctx = ctx,
        .cfg = ctx->cfg,
        .opts = opts,
        .h = h,
        .res = res,
        /* What res->live holds is room enough to start with. */
        .live_cap = res->num_live,
    };
    unsigned n = sizeof(checks) / sizeof(checks[0]);
    int rc;

    res->start_us = xlreaper__now_us();
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
    own_namespaces(&a);
    a.reader.max_locks = a.cfg->dm_max_file_locks;
    xlreaper__xendevs_load(h && h->xen_dev_dir ? h->xen_dev_dir : "/dev/xen",
                           h && h->xenfs_dir ? h->xenfs_dir : "/proc/xen",
                           &a.xd);

    /* What the checks stand on: the live domains, a /proc pass, and
     * xenstore's DM pids, read once the live list is final. */
    rc = list_live(&a);
    if (!rc)
        rc = passes(&a);
    if (!rc)
        rc = relist_live(&a);
    if (!rc)
        rc = read_dm_pids(&a);
    if (rc)
        goto out;
    set_deadline(&a);

    /* The table, in order; a DM row is run by the "dm" row for each
     * DM process. */
    for (unsigned i = 0; i < n; i++) {
        const xlreaper__audit_check_def *c = &checks[i];

        if (!c->fn || c->scope == XLREAPER__SCOPE_DM)
            continue;
        if (xlreaper__audit_late(&a) && c->fn != check_deadline &&
            c->fn != check_setid) {
            rc = ADD(&a, c->name, NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_UNKNOWN,
                     "not checked: the audit's deadline of %u ms had passed",
                     a.deadline_ms);
        } else {
            rc = c->fn(&a, NULL);
        }
        if (rc)
            goto out;
    }

out:
    xlreaper__facts_reader_stop(ctx, &a.reader);
    res->duration_us = xlreaper__now_us() - res->start_us;
    xlreaper_task_list_dispose(&a.tasks);
    free(a.dmpids.pids);
    free(a.dmpids.qpids);
    return rc;
}

int xlreaper_audit(xlreaper_ctx *ctx, const xlreaper_audit_opts *opts,
                   xlreaper_audit_result *res)
{
    return xlreaper__audit_run(ctx, opts, NULL, res);
}
