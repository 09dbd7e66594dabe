/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_dm.c - the audit's scope of live domains: every
 * process under a live domain's uid, which one is its DM, and whether
 * each is jailed as it should be.
 *
 * Expected values come from root, facts from the kernel.  What a DM is
 * expected to be comes from root's record of its start (the spawn
 * writes it: xlreaper_dmrec.c), or, for a DM libxl started without the
 * wrapper, from the config and libxl's conventions (the range uid,
 * <chroot_base>/qemu-root-<domid>, the mount and IPC namespaces libxl
 * unshares); the "record" line says which.  What it is comes from the
 * kernel: task/N/status, stat, limits, the root, exe and ns links and
 * the fd links, read by a child with a deadline
 * (xlreaper_audit_facts.c).  Its cmdline, environ and memory are never
 * read: a DM can rewrite them, and can make reading them block.
 *
 * Which process is the DM: the recorded one (the pid and its start time
 * match), else xenstore's device-model-pid when it runs under the uid,
 * else the only process of the uid that is not a known tenant.  Every
 * other process of the uid must be a known tenant: restricted pygrub
 * (Xen 4.17.3+, 4.18+, XSA-443's bootloader_restrict), which libxl runs
 * as range base + domid while it builds a PV domain, before its DM.  It
 * is known by kernel facts (RLIMIT_NPROC 0, its own namespaces, a
 * chroot) and by libxl's xenstore state (no device-model-pid yet), not
 * by its argv; anything else is a stranger, a violation.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "xlreaper_audit_internal.h"

#define NO_DOMID XLREAPER_AUDIT_NO_DOMID
#define NO_UID XLREAPER_AUDIT_NO_UID
#define ADD XLREAPER__AUDIT_ADD

typedef xlreaper__audit audit;
typedef xlreaper__audit_dm dm_proc;

#define CONVENTIONS "the config and libxl's conventions"

/* ---------- what could not be read ---------- */

/* A line "could not check" for name: the facts it needs did not come. */
static int not_read(audit *a, const dm_proc *p, const char *name,
                    const char *what)
{
    const xlreaper__facts *fc = &p->facts;

    if (fc->timed_out)
        return ADD(a, name, p->domid, p->uid, p->pid, XLREAPER_AUDIT_UNKNOWN,
                   "%s not read: its /proc did not answer within %.0f ms "
                   "(the reader, killed, was reading %s)",
                   what, (double)fc->elapsed_us / 1000.0,
                   xlreaper__facts_section_name(fc->section));
    return ADD(a, name, p->domid, p->uid, p->pid, XLREAPER_AUDIT_UNKNOWN,
               "%s not read: the reader ended early", what);
}

/* ---------- ids, capabilities, groups, no_new_privs, seccomp ---------- */

int xlreaper__audit_dm_ids(audit *a, dm_proc *p)
{
    const xlreaper_task_list *th = &p->facts.threads;

    for (unsigned i = 0; i < th->num; i++) {
        const xlreaper_task *at = &th->tasks[i];
        const xlreaper_task *t = at;

        if (t->ruid != p->uid || t->euid != p->uid || t->suid != p->uid ||
            t->fsuid != p->uid || at->audit.rgid != p->gid ||
            at->audit.egid != p->gid || at->audit.sgid != p->gid ||
            at->audit.fsgid != p->gid)
            return ADD(
                a, "ids", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                "thread %ld: uids %lu %lu %lu %lu, gids %lu %lu %lu "
                "%lu (real, effective, saved, fs); want uid %lu, "
                "gid %lu",
                (long)t->tid, (unsigned long)t->ruid, (unsigned long)t->euid,
                (unsigned long)t->suid, (unsigned long)t->fsuid,
                (unsigned long)at->audit.rgid, (unsigned long)at->audit.egid,
                (unsigned long)at->audit.sgid, (unsigned long)at->audit.fsgid,
                (unsigned long)p->uid, (unsigned long)p->gid);
    }
    if (!p->facts.threads_done)
        return not_read(a, p, "ids", "the status of every thread");
    return ADD(a, "ids", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "real, effective, saved and fs uids %lu, gids %lu (%s), in "
               "%u thread%s",
               (unsigned long)p->uid, (unsigned long)p->gid,
               a->cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE ? "range-base"
                                                              : "per-domain",
               th->num, th->num == 1 ? "" : "s");
}

int xlreaper__audit_dm_caps(audit *a, dm_proc *p)
{
    const xlreaper_task_list *th = &p->facts.threads;

    for (unsigned i = 0; i < th->num; i++) {
        const xlreaper_task *at = &th->tasks[i];

        if (at->audit.caps_known &&
            (at->audit.cap_prm || at->audit.cap_eff || at->audit.cap_amb))
            return ADD(a, "caps", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_FAIL,
                       "thread %ld holds capabilities: permitted %#llx, "
                       "effective %#llx, ambient %#llx",
                       (long)at->tid, (unsigned long long)at->audit.cap_prm,
                       (unsigned long long)at->audit.cap_eff,
                       (unsigned long long)at->audit.cap_amb);
    }
    for (unsigned i = 0; i < th->num; i++)
        if (!th->tasks[i].audit.caps_known)
            return ADD(a, "caps", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_UNKNOWN,
                       "thread %ld: no CapPrm/CapEff in its status",
                       (long)th->tasks[i].tid);
    if (!p->facts.threads_done)
        return not_read(a, p, "caps", "the status of every thread");
    return ADD(a, "caps", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "no permitted, effective or ambient capability");
}

/*
 * No supplementary group, or exactly the DM's own gid: QEMU's -runas
 * calls setgroups(1, &gid) (os_setup_post), and a group the DM already
 * holds as its gid grants it nothing more.  Anything else fails.
 */
int xlreaper__audit_dm_groups(audit *a, dm_proc *p)
{
    const xlreaper_task_list *th = &p->facts.threads;
    bool own = false;

    for (unsigned i = 0; i < th->num; i++) {
        const xlreaper_task *at = &th->tasks[i];
        xlreaper__sb sb = { 0 };
        unsigned kept;
        int rc;

        if (!at->audit.ngroups)
            continue;
        if (at->audit.ngroups == 1 && at->audit.groups[0] == p->gid) {
            own = true;
            continue;
        }
        kept = at->audit.ngroups < XLREAPER_TASK_GROUPS_KEPT
                   ? at->audit.ngroups
                   : XLREAPER_TASK_GROUPS_KEPT;
        for (unsigned g = 0; g < kept; g++)
            xlreaper__sb_printf(&sb, " %lu",
                                (unsigned long)at->audit.groups[g]);
        rc = ADD(a, "groups", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                 "thread %ld has %u supplementary group%s:%s%s", (long)at->tid,
                 at->audit.ngroups, at->audit.ngroups == 1 ? "" : "s",
                 sb.buf ? sb.buf : "", at->audit.ngroups > kept ? " ..." : "");
        xlreaper__sb_dispose(&sb);
        return rc;
    }
    if (!p->facts.threads_done)
        return not_read(a, p, "groups", "the status of every thread");
    if (own)
        return ADD(a, "groups", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "no supplementary group but its own gid %lu (as "
                   "QEMU's -runas leaves it)",
                   (unsigned long)p->gid);
    return ADD(a, "groups", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "no supplementary group");
}

int xlreaper__audit_dm_nnp(audit *a, dm_proc *p)
{
    const xlreaper_task_list *th = &p->facts.threads;

    for (unsigned i = 0; i < th->num; i++)
        if (!th->tasks[i].audit.nnp)
            return ADD(a, "no_new_privs", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_FAIL,
                       "thread %ld: NoNewPrivs is 0: an execve of a setuid "
                       "binary would gain privilege",
                       (long)th->tasks[i].tid);
    for (unsigned i = 0; i < th->num; i++)
        if (th->tasks[i].audit.nnp < 0)
            return ADD(a, "no_new_privs", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_UNKNOWN,
                       "thread %ld: the kernel shows no NoNewPrivs field",
                       (long)th->tasks[i].tid);
    if (!p->facts.threads_done)
        return not_read(a, p, "no_new_privs", "the status of every thread");
    return ADD(a, "no_new_privs", p->domid, p->uid, p->pid,
               XLREAPER_AUDIT_PASS, "NoNewPrivs set");
}

int xlreaper__audit_dm_seccomp(audit *a, dm_proc *p)
{
    const xlreaper_task_list *th = &p->facts.threads;

    if (!p->exp->rec)
        return ADD(a, "seccomp", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                   "no record of root's: libxl starts a DM without the "
                   "spawn's set-id filter");
    if (!p->exp->rec->seccomp_setid)
        return ADD(a, "seccomp", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                   "root's record says no filter was installed");
    for (unsigned i = 0; i < th->num; i++)
        if (th->tasks[i].audit.seccomp != 2)
            return ADD(a, "seccomp", p->domid, p->uid, p->pid,
                       th->tasks[i].audit.seccomp < 0 ? XLREAPER_AUDIT_UNKNOWN
                                                      : XLREAPER_AUDIT_FAIL,
                       "thread %ld: Seccomp %d, but root's record says the "
                       "set-id filter was installed (mode 2)",
                       (long)th->tasks[i].tid, th->tasks[i].audit.seccomp);
    if (!p->facts.threads_done)
        return not_read(a, p, "seccomp", "the status of every thread");
    return ADD(a, "seccomp", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "a seccomp filter in every thread (root's record: the "
               "set-id filter)");
}

/* ---------- the command line root exec'd ---------- */

int xlreaper__audit_dm_cmdline(audit *a, dm_proc *p)
{
    const xlreaper__dmrec *rec = p->exp->rec;
    xlreaper__audit_cmdline *cl;
    const char *opt;
    uid_t u;
    gid_t g;
    int rc;

    /* What a DM says of itself is not evidence, and reading its
     * cmdline can block on its own mmap lock: only root's record. */
    if (!rec)
        return ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                   "no record of root's; a DM's own command line is not "
                   "read (it can rewrite it, and make reading it block)");
    cl = malloc(sizeof(*cl));
    if (!cl)
        return XLREAPER_ERROR_NOMEM;
    xlreaper__audit_parse_cmdline(rec->argv, rec->argv_len, cl);
    opt = cl->user_run_with ? "-run-with user=" : "-runas ";
    if (!cl->ndomid || cl->domid_bad || cl->domid_conflict ||
        cl->domid != p->domid)
        rc = ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                 "root's record of what it exec'd has %u -xen-domid "
                 "option%s (the last says %u), not exactly domid %u",
                 cl->ndomid, cl->ndomid == 1 ? "" : "s", cl->domid, p->domid);
    else if (cl->user && (cl->nuser > 1 ||
                          (xlreaper__qemu_parse_ids(cl->user, &u, &g) == 0 &&
                           u != p->uid)))
        rc = ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                 "root's record of what it exec'd has %u uid switch%s, the "
                 "last %s%s; domid %u's uid is %lu",
                 cl->nuser, cl->nuser == 1 ? "" : "es", opt, cl->user,
                 p->domid, (unsigned long)p->uid);
    else
        rc = ADD(a, "cmdline", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                 "-xen-domid %u%s%s%s%s (root's record of what it exec'd)",
                 cl->domid, cl->restrict_opt ? ", -xen-domid-restrict" : "",
                 cl->user ? "; " : "", cl->user ? opt : "",
                 cl->user ? cl->user : "");
    free(cl);
    return rc;
}

/* ---------- limits ---------- */

typedef struct {
    int resource;
    uint64_t want;
    const char *from;
} want_limit;

static unsigned wanted_limits(const audit *a, const dm_proc *p, want_limit *w,
                              unsigned max)
{
    const xlreaper_config *cfg = a->cfg;
    const xlreaper__dmrec *rec = p->exp->rec;
    unsigned n = 0;
    bool core = false;

    if (rec) {
        for (unsigned i = 0; i < rec->num_rl && n < max; i++) {
            core |= rec->rl[i].resource == RLIMIT_CORE;
            w[n++] = (want_limit){ rec->rl[i].resource, rec->rl[i].limit,
                                   "root's record" };
        }
    } else {
        w[n++] = (want_limit){ RLIMIT_NPROC, cfg->nproc_limit, "nproc_limit" };
        for (unsigned i = 0; i < cfg->num_rlimits && n < max; i++) {
            if (cfg->rlimits[i].resource == RLIMIT_NPROC)
                continue;
            core |= cfg->rlimits[i].resource == RLIMIT_CORE;
            w[n++] =
                (want_limit){ cfg->rlimits[i].resource, cfg->rlimits[i].limit,
                              cfg->rlimits[i].key ? cfg->rlimits[i].key
                                                  : "config" };
        }
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

int xlreaper__audit_dm_limits(audit *a, dm_proc *p)
{
    want_limit want[XLREAPER_MAX_RLIMITS + 3];
    unsigned nwant = wanted_limits(a, p, want, XLREAPER_MAX_RLIMITS + 3);
    xlreaper__sb ok = { 0 }, bad = { 0 };
    xlreaper_audit_status st = XLREAPER_AUDIT_PASS;
    const char *text = p->facts.limits;
    int rc;

    if (!p->facts.have_limits)
        return not_read(a, p, "rlimits", "its limits");
    if (!text)
        return ADD(a, "rlimits", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "reading its limits: %s",
                   strerror(p->facts.limits_err));
    for (unsigned i = 0; i < nwant; i++) {
        const char *name = xlreaper__audit_rlimit_name(want[i].resource);
        uint64_t soft, hard;

        if (xlreaper__audit_parse_limit(text, p->facts.limits_len,
                                        want[i].resource, &soft, &hard)) {
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
        xlreaper__sb_printf(&bad, " (want at most ");
        fmt_limit(&bad, want[i].want);
        xlreaper__sb_printf(&bad, ", %s)", want[i].from);
    }
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

/* ---------- namespaces ---------- */

static const char *const ns_names[XLREAPER__LINKS] = {
    [XLREAPER__LINK_MNT] = "mount",
    [XLREAPER__LINK_IPC] = "IPC",
    [XLREAPER__LINK_NET] = "network",
    [XLREAPER__LINK_USER] = "user",
};

int xlreaper__audit_dm_ns(audit *a, dm_proc *p)
{
    const xlreaper__dmrec *rec = p->exp->rec;
    /* libxl's preexec unshares the mount and IPC namespaces of every
     * restricted DM; the network one only our spawn does, if asked. */
    bool want[XLREAPER__LINKS] = {
        [XLREAPER__LINK_MNT] = rec ? rec->unshare_ns : true,
        [XLREAPER__LINK_IPC] = rec ? rec->unshare_ns : true,
        [XLREAPER__LINK_NET] = rec ? rec->unshare_net : false,
    };
    xlreaper__sb own = { 0 };
    int rc;

    for (int l = XLREAPER__LINK_MNT; l <= XLREAPER__LINK_NET; l++) {
        if (!want[l])
            continue;
        if (!p->facts.link[l].have)
            return not_read(a, p, "namespaces", "its ns links");
        if (p->facts.link[l].err || !a->own_ns[l].have)
            return ADD(a, "namespaces", p->domid, p->uid, p->pid,
                       XLREAPER_AUDIT_UNKNOWN,
                       "its %s namespace could not be compared: %s",
                       ns_names[l],
                       strerror(p->facts.link[l].err ? p->facts.link[l].err
                                                     : ENOENT));
        if (p->facts.link[l].ino == a->own_ns[l].ino)
            return ADD(
                a, "namespaces", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                "it shares the audit's %s namespace, which %s "
                "unshares",
                ns_names[l], rec ? "root's record says its spawn" : "libxl");
        xlreaper__sb_printf(&own, "%s%s", own.len ? ", " : "", ns_names[l]);
    }
    if (own.oom)
        return XLREAPER_ERROR_NOMEM;
    if (!own.len)
        rc =
            ADD(a, "namespaces", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                "none asked (%s)", rec ? "root's record" : CONVENTIONS);
    else
        rc = ADD(a, "namespaces", p->domid, p->uid, p->pid,
                 XLREAPER_AUDIT_PASS, "its own %s namespace%s (%s)", own.buf,
                 strchr(own.buf, ',') ? "s" : "",
                 rec ? "root's record" : CONVENTIONS);
    xlreaper__sb_dispose(&own);
    return rc;
}

/* ---------- the user namespace ---------- */

/* 0 when the process lives in the audit's (root's: the host's) user
 * namespace, 1 when in another, -1 when it cannot be told. */
static int foreign_userns(const audit *a, const xlreaper__facts *fc)
{
    const int l = XLREAPER__LINK_USER;

    if (!fc->link[l].have || fc->link[l].err || !a->own_ns[l].have)
        return -1;
    return fc->link[l].dev != a->own_ns[l].dev ||
           fc->link[l].ino != a->own_ns[l].ino;
}

/*
 * A DM in a user namespace of its own is root there: it can mount FUSE
 * and make one of its own tasks unkillable (a request it reads and
 * never answers, xlreaper_fuse.c), and mount over what it sees.  The
 * spawn's filter refuses a DM every way in (xlreaper_setid.c); one
 * found in one was started elsewhere, or before the filter.  The kernel
 * names a namespace by the device and inode of /proc/PID/ns/user, read
 * by the facts reader like the other ns links.
 */
int xlreaper__audit_dm_userns(audit *a, dm_proc *p)
{
    const xlreaper__facts *fc = &p->facts;
    const int l = XLREAPER__LINK_USER;

    if (!fc->link[l].have)
        return not_read(a, p, "userns", "its ns links");
    switch (foreign_userns(a, fc)) {
    case 0:
        return ADD(a, "userns", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "in the host's user namespace");
    case 1:
        return ADD(a, "userns", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "lives in user namespace %lu, not the host's (%lu): it "
                   "is root there, and can mount FUSE and make its own "
                   "tasks unkillable",
                   (unsigned long)fc->link[l].ino,
                   (unsigned long)a->own_ns[l].ino);
    }
    return ADD(a, "userns", p->domid, p->uid, p->pid, XLREAPER_AUDIT_UNKNOWN,
               "its user namespace cannot be compared (/proc/%ld/ns/user: "
               "%s)",
               (long)p->pid,
               strerror(fc->link[l].err ? fc->link[l].err : ENOENT));
}

/* ---------- chroot ---------- */

int xlreaper__audit_dm_chroot(audit *a, dm_proc *p)
{
    const xlreaper__audit_expect *e = p->exp;
    const xlreaper__facts *fc = &p->facts;
    struct stat ws;

    if (!e->root[0])
        return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_SKIP,
                   "none asked (%s)", e->root_from);
    if (stat(e->root, &ws) < 0)
        return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "%s (from %s): %s", e->root, e->root_from, strerror(errno));
    if (!fc->link[XLREAPER__LINK_ROOT].have)
        return not_read(a, p, "chroot", "its root link");
    if (fc->link[XLREAPER__LINK_ROOT].err)
        return ADD(a, "chroot", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "/proc/%ld/root: %s", (long)p->pid,
                   strerror(fc->link[XLREAPER__LINK_ROOT].err));
    /* By identity, not by name: a name can be replaced, and the DM's
     * argv says what it likes. */
    if (fc->link[XLREAPER__LINK_ROOT].dev == ws.st_dev &&
        fc->link[XLREAPER__LINK_ROOT].ino == ws.st_ino)
        return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
                   "root is %s (from %s)", e->root, e->root_from);
    return ADD(a, "chroot", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
               "root is %s, not %s (from %s)",
               a->own_ns[XLREAPER__LINK_ROOT].have &&
                       fc->link[XLREAPER__LINK_ROOT].ino ==
                           a->own_ns[XLREAPER__LINK_ROOT].ino
                   ? "/"
                   : "another directory",
               e->root, e->root_from);
}

/* ---------- Xen descriptors ---------- */

int xlreaper__audit_dm_xen_fds(audit *a, dm_proc *p)
{
    const xlreaper__facts *fc = &p->facts;
    int rc = 0;

    for (unsigned i = 0; !rc && i < fc->nxen; i++) {
        const xlreaper__facts_fd *f = &fc->xenfds[i];
        const xlreaper__xendev_node *node =
            xlreaper__xendevs_match(&a->xd, &f->st);
        xlreaper_audit_status st;
        char why[200];
        int perr, cerr, e;

        if (!node)
            continue;
        e = xlreaper__xenfd_probe(p->pid, f->fd, node, p->domid, &perr, &cerr);
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
                 "fd %d: %s %s (node %s): %s", f->fd,
                 xlreaper__xendev_name(node->kind),
                 f->target[0] ? f->target : "?", node->path, why);
    }
    if (rc)
        return rc;
    if (!fc->fds_done)
        return not_read(a, p, "xen_fds", "every descriptor");
    if (fc->fds_err)
        return ADD(a, "xen_fds", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "/proc/%ld/fd: %s", (long)p->pid,
                   strerror(fc->fds_err));
    if (fc->nxen)
        return 0;
    return ADD(a, "xen_fds", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "none of its %u descriptors is open to a Xen device (%u Xen "
               "node%s on this host)",
               fc->nfds, a->xd.num, a->xd.num == 1 ? "" : "s");
}

/* ---------- file locks ---------- */

/*
 * Nothing in the kernel bounds the file locks a process holds
 * (RLIMIT_LOCKS is ignored) and, since Linux 6.3, none is charged to its
 * memory cgroup (docs/facts.md F18): a DM under every other limit can
 * take 100,000 locks on memfds in half a second, and each costs the
 * host slab memory and every reader of /proc/locks time.  Counted from
 * its fdinfo by the facts reader (xlreaper_audit_facts.c), which stops
 * once the count passes the limit: past it, "at least".
 */
int xlreaper__audit_dm_file_locks(audit *a, dm_proc *p)
{
    const xlreaper__facts *fc = &p->facts;
    unsigned max = a->cfg->dm_max_file_locks;
    bool exact = fc->locks_done && fc->locks_cut == XLREAPER__LOCKS_CUT_NONE;

    if (fc->locks > max)
        return ADD(
            a, "file_locks", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
            "%s%llu file locks on its open files (fdinfo), more than "
            "dm_max_file_locks %u: the kernel bounds them nowhere "
            "else, and charges their memory to no cgroup",
            exact ? "" : "at least ", (unsigned long long)fc->locks, max);
    if (!fc->locks_done) {
        if (!fc->timed_out || fc->section != XLREAPER__FACTS_LOCKS)
            return not_read(a, p, "file_locks", "its fdinfo");
        return ADD(a, "file_locks", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN,
                   "at least %llu file locks (at most %u allowed), but its "
                   "fdinfo did not answer within %.0f ms: the rest not "
                   "counted",
                   (unsigned long long)fc->locks, max,
                   (double)fc->elapsed_us / 1000.0);
    }
    if (fc->locks_err)
        return ADD(a, "file_locks", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "/proc/%ld/fdinfo: %s",
                   (long)p->pid, strerror(fc->locks_err));
    if (!exact)
        return ADD(a, "file_locks", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN,
                   "at least %llu file locks (at most %u allowed): the "
                   "count stopped at the reader's bound on bytes",
                   (unsigned long long)fc->locks, max);
    return ADD(a, "file_locks", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "%llu file lock%s on its %u open descriptor%s (at most "
               "dm_max_file_locks %u)",
               (unsigned long long)fc->locks, fc->locks == 1 ? "" : "s",
               fc->locks_fds, fc->locks_fds == 1 ? "" : "s", max);
}

/* ---------- the OOM killer's choice ---------- */

/*
 * A DM at least dm_oom_score_adj, as the spawn sets it: one below it
 * (started without the wrapper, by libvirt or a stock libxl, or one
 * that lowered it where the spawn lacked CAP_SYS_RESOURCE) may outlive
 * xenstored or the reaper under memory pressure.  Higher is fine: a DM
 * may only raise its own.
 */
int xlreaper__audit_dm_oom(audit *a, dm_proc *p)
{
    const xlreaper__facts *fc = &p->facts;
    int want = (int)a->cfg->dm_oom_score_adj;

    if (!fc->have_oom)
        return not_read(a, p, "oom_score_adj", "its oom_score_adj");
    if (fc->oom_err)
        return ADD(a, "oom_score_adj", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN, "reading its oom_score_adj: %s",
                   strerror(fc->oom_err));
    if (fc->oom_adj < want)
        return ADD(a, "oom_score_adj", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_FAIL,
                   "oom_score_adj %d, below dm_oom_score_adj %d: under "
                   "memory pressure the OOM killer may choose another "
                   "process before it",
                   fc->oom_adj, want);
    return ADD(
        a, "oom_score_adj", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
        "oom_score_adj %d (at least dm_oom_score_adj %d)", fc->oom_adj, want);
}

/* ---------- one process ---------- */

static uint64_t process_deadline(const audit *a)
{
    uint64_t d = xlreaper__now_us() + (uint64_t)a->opts->dm_timeout_ms * 1000;

    return a->deadline_us && a->deadline_us < d ? a->deadline_us : d;
}

static int read_facts(audit *a, dm_proc *p)
{
    return xlreaper__facts_read(a->ctx, &a->reader, p->pid, &a->xd,
                                a->h ? a->h->facts_first : NULL,
                                process_deadline(a), &p->facts);
}

static int check_dm_proc(audit *a, dm_proc *p)
{
    unsigned n;
    const xlreaper__audit_check_def *rows = xlreaper__audit_checks(&n);
    int rc = 0;

    a->res->dms++;
    for (unsigned i = 0; !rc && i < n; i++) {
        if (rows[i].scope != XLREAPER__SCOPE_DM || !rows[i].fn)
            continue;
        rc = rows[i].fn(a, p);
    }
    return rc;
}

/* ---------- tenants: restricted pygrub ---------- */

/* Kernel facts of XSA-443's restricted pygrub (bootloader_restrict):
 * the uid range base + domid in all four ids, RLIMIT_NPROC 0/0, a
 * bounded RLIMIT_AS, its own mount, IPC and network namespaces, and a
 * chroot.  RLIMIT_NPROC 0 is its mark (a DM's nproc_limit is at least
 * 1); the rest is what it must also have.  *lacks says what is missing
 * ("" when nothing). */
static bool pygrub_shaped(const audit *a, const dm_proc *p, char *lacks,
                          size_t len)
{
    const xlreaper__facts *fc = &p->facts;
    uint64_t soft, hard, as_soft, as_hard;
    xlreaper__sb sb = { 0 };

    lacks[0] = '\0';
    if (!fc->limits ||
        xlreaper__audit_parse_limit(fc->limits, fc->limits_len, RLIMIT_NPROC,
                                    &soft, &hard) ||
        soft != 0 || hard != 0)
        return false;
    for (unsigned i = 0; i < fc->threads.num; i++) {
        const xlreaper_task *t = &fc->threads.tasks[i];
        if (t->ruid != p->uid || t->euid != p->uid || t->suid != p->uid ||
            t->fsuid != p->uid) {
            xlreaper__sb_printf(&sb, "%sthe uid %lu in all four ids",
                                sb.len ? ", " : "", (unsigned long)p->uid);
            break;
        }
        if (t->audit.caps_known && (t->audit.cap_prm || t->audit.cap_eff)) {
            xlreaper__sb_printf(&sb, "%sno capability", sb.len ? ", " : "");
            break;
        }
    }
    if (xlreaper__audit_parse_limit(fc->limits, fc->limits_len, RLIMIT_AS,
                                    &as_soft, &as_hard) ||
        as_hard == XLREAPER__RLIM_INF)
        xlreaper__sb_printf(&sb, "%sa bounded RLIMIT_AS", sb.len ? ", " : "");
    for (int l = XLREAPER__LINK_MNT; l <= XLREAPER__LINK_NET; l++)
        if (!fc->link[l].have || fc->link[l].err || !a->own_ns[l].have ||
            fc->link[l].ino == a->own_ns[l].ino)
            xlreaper__sb_printf(&sb, "%sits own %s namespace",
                                sb.len ? ", " : "", ns_names[l]);
    if (!fc->link[XLREAPER__LINK_ROOT].have ||
        fc->link[XLREAPER__LINK_ROOT].err ||
        (a->own_ns[XLREAPER__LINK_ROOT].have &&
         fc->link[XLREAPER__LINK_ROOT].ino ==
             a->own_ns[XLREAPER__LINK_ROOT].ino))
        xlreaper__sb_printf(&sb, "%sa chroot", sb.len ? ", " : "");
    /* libxl makes it in the host's user namespace: in one of its own it
     * would be root there. */
    if (foreign_userns(a, fc))
        xlreaper__sb_printf(&sb, "%sthe host's user namespace",
                            sb.len ? ", " : "");
    if (!fc->done)
        xlreaper__sb_printf(&sb, "%sa /proc that answers in time",
                            sb.len ? ", " : "");
    if (sb.buf)
        snprintf(lacks, len, "%s", sb.buf);
    else if (sb.oom)
        snprintf(lacks, len, "(out of memory)");
    xlreaper__sb_dispose(&sb);
    return true;
}

/*
 * A process of the uid that is not the DM.  Restricted pygrub passes
 * while libxl's xenstore state says the domain is being built: its DM
 * has not started (no device-model-pid, no record of root's); anything
 * else fails.
 */
static int check_tenant(audit *a, dm_proc *p, long xspid, bool dm_started)
{
    char lacks[256];

    if (!pygrub_shaped(a, p, lacks, sizeof(lacks))) {
        if (!p->facts.have_limits)
            return not_read(a, p, "tenant", "its limits");
        return ADD(a, "tenant", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "pid %ld runs under domid %u's uid but is neither its "
                   "DM nor a known tenant (restricted pygrub has "
                   "RLIMIT_NPROC 0): a stranger",
                   (long)p->pid, p->domid);
    }
    if (lacks[0])
        return ADD(a, "tenant", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "pid %ld has restricted pygrub's RLIMIT_NPROC 0 but lacks "
                   "%s",
                   (long)p->pid, lacks);
    if (!a->dmpids.reachable)
        return ADD(a, "tenant", p->domid, p->uid, p->pid,
                   XLREAPER_AUDIT_UNKNOWN,
                   "pid %ld is jailed as restricted pygrub is, but xenstore "
                   "could not say whether domid %u is still being built",
                   (long)p->pid, p->domid);
    if (dm_started || xspid > 0)
        return ADD(a, "tenant", p->domid, p->uid, p->pid, XLREAPER_AUDIT_FAIL,
                   "pid %ld is jailed as restricted pygrub is, but domid "
                   "%u's DM has started (libxl runs the bootloader before "
                   "it): a leftover",
                   (long)p->pid, p->domid);
    return ADD(a, "tenant", p->domid, p->uid, p->pid, XLREAPER_AUDIT_PASS,
               "pid %ld is restricted pygrub (bootloader_restrict): uid "
               "%lu, RLIMIT_NPROC 0/0, a bounded RLIMIT_AS, its own mount, "
               "IPC and network namespaces, the host's user namespace, a "
               "chroot; xenstore: domid %u "
               "has no DM yet",
               (long)p->pid, (unsigned long)p->uid, p->domid);
}

/* ---------- xenstore's device-model-pid ---------- */

/* All four uids of t are uid. */
static bool runs_as(const xlreaper_task *t, uid_t uid)
{
    return t->ruid == uid && t->euid == uid && t->suid == uid &&
           t->fsuid == uid;
}

/* libxl 4.20+ records its QEMU option probe's pid there until the DM
 * starts: root by libxl's design, running qemu_path, no guest, hence
 * no Xen descriptor.  Known by those kernel facts, not by its argv. */
static bool is_libxl_probe(const audit *a, const xlreaper__facts *fc)
{
    struct stat q;

    if (!fc->done || !fc->threads.num || !runs_as(&fc->threads.tasks[0], 0) ||
        fc->nxen || fc->link[XLREAPER__LINK_EXE].err ||
        stat(a->cfg->qemu_path, &q) < 0)
        return false;
    return fc->link[XLREAPER__LINK_EXE].dev == q.st_dev &&
           fc->link[XLREAPER__LINK_EXE].ino == q.st_ino;
}

/* The kernel's facts of pid, which root recorded for domid as what:
 * 0 with *fc holding its threads; 1 once name's line says it could not
 * be read in time, or is gone; or an error. */
static int read_recorded(audit *a, const char *name, uint32_t domid, uid_t uid,
                         long pid, const char *what, xlreaper__facts *fc)
{
    int rc = xlreaper__facts_read(a->ctx, &a->reader, (pid_t)pid, &a->xd, NULL,
                                  process_deadline(a), fc);

    if (rc || fc->threads.num)
        return rc;
    rc = fc->timed_out
             ? ADD(a, name, domid, uid, (pid_t)pid, XLREAPER_AUDIT_UNKNOWN,
                   "%s %ld: its /proc did not answer in time", what, pid)
             : ADD(a, name, domid, uid, (pid_t)pid, XLREAPER_AUDIT_SKIP,
                   "%s %ld does not exist", what, pid);
    xlreaper__facts_dispose(fc);
    return rc ? rc : 1;
}

static int check_xs_pid(audit *a, uint32_t domid, uid_t uid, long xspid,
                        unsigned nprocs, pid_t first)
{
    xlreaper__facts fc;
    const xlreaper_task *t;
    int rc;

    if (!a->dmpids.reachable)
        return 0;
    if (xspid == 0)
        return nprocs ? ADD(a, "xenstore_pid", domid, uid, first,
                            XLREAPER_AUDIT_SKIP,
                            "xenstore has no image/device-model-pid")
                      : 0;
    if (xspid < 0)
        return ADD(a, "xenstore_pid", domid, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "xenstore's image/device-model-pid is not a pid");
    rc = read_recorded(a, "xenstore_pid", domid, uid, xspid,
                       "xenstore's device-model-pid", &fc);
    if (rc)
        return rc < 0 ? rc : 0;
    t = &fc.threads.tasks[0];
    /* What libxl kills on destroy when it finds no uid: it must be
     * jailed like the rest. */
    if (runs_as(t, uid))
        rc = ADD(
            a, "xenstore_pid", domid, uid, (pid_t)xspid, XLREAPER_AUDIT_PASS,
            "xenstore's device-model-pid %ld runs under the DM uid", xspid);
    else if (is_libxl_probe(a, &fc))
        rc = ADD(a, "xenstore_pid", domid, uid, (pid_t)xspid,
                 XLREAPER_AUDIT_SKIP,
                 "xenstore's device-model-pid %ld is libxl's QEMU option "
                 "probe (by kernel facts: root, running qemu_path %s, no "
                 "Xen descriptor), not a DM: libxl kills it before the DM "
                 "starts",
                 xspid, a->cfg->qemu_path);
    else
        rc = ADD(a, "xenstore_pid", domid, uid, (pid_t)xspid,
                 XLREAPER_AUDIT_FAIL,
                 "xenstore's device-model-pid %ld (%s) runs as uids %lu %lu "
                 "%lu %lu, not under domid %u's uid %lu: not jailed",
                 xspid, t->comm, (unsigned long)t->ruid,
                 (unsigned long)t->euid, (unsigned long)t->suid,
                 (unsigned long)t->fsuid, domid, (unsigned long)uid);
    xlreaper__facts_dispose(&fc);
    return rc;
}

/*
 * libxl's qdisk backend: the second QEMU libxl starts for a PV or PVH
 * guest whose disk blkback cannot serve (qcow2, backendtype=qdisk), a
 * 9pfs share or PV USB: always the built-in QEMU, never the domain's
 * device model (so never the wrapper), unrestricted, as root
 * (libxl__spawn_qemu_xenpv_backend).  A guest that exploits QEMU's
 * PV block backend is root in dom0: said, with its role, so that
 * osstest sees it.  No line when the domain has none.
 */
static int check_qdisk_pid(audit *a, uint32_t domid, uid_t uid, long qpid)
{
    xlreaper__facts fc;
    const xlreaper_task *t;
    int rc;

    if (!a->dmpids.reachable || qpid == 0)
        return 0;
    if (qpid < 0)
        return ADD(a, "qdisk_backend", domid, uid, 0, XLREAPER_AUDIT_UNKNOWN,
                   "libxl's qdisk-backend-pid is not a pid");
    rc = read_recorded(a, "qdisk_backend", domid, uid, qpid,
                       "libxl's qdisk-backend-pid", &fc);
    if (rc)
        return rc < 0 ? rc : 0;
    t = &fc.threads.tasks[0];
    if (runs_as(t, uid))
        rc = ADD(
            a, "qdisk_backend", domid, uid, (pid_t)qpid, XLREAPER_AUDIT_PASS,
            "libxl's qdisk backend, pid %ld, runs under the DM uid", qpid);
    else
        rc = ADD(a, "qdisk_backend", domid, uid, (pid_t)qpid,
                 XLREAPER_AUDIT_FAIL,
                 "libxl's qdisk backend for domid %u, pid %ld (%s), runs as "
                 "uids %lu %lu %lu %lu, not under its uid %lu: QEMU's PV "
                 "disk backend, unrestricted, serving the guest",
                 domid, qpid, t->comm, (unsigned long)t->ruid,
                 (unsigned long)t->euid, (unsigned long)t->suid,
                 (unsigned long)t->fsuid, (unsigned long)uid);
    xlreaper__facts_dispose(&fc);
    return rc;
}

/* ---------- per live domain ---------- */

/* Every process (tgid) of domid the pass saw, sorted, malloc'd: no
 * bound, every one is checked. */
static int procs_of(const audit *a, uint32_t domid, pid_t **out, unsigned *n)
{
    pid_t *v = calloc(a->tasks.num + 1, sizeof(*v));
    unsigned k = 0;

    if (!v)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < a->tasks.num; i++) {
        const xlreaper_task *t = &a->tasks.tasks[i];
        bool seen = false;

        if (xlreaper__audit_task_domid(a, t) != domid)
            continue;
        for (unsigned j = 0; j < k && !seen; j++)
            seen = v[j] == t->tgid;
        if (!seen)
            v[k++] = t->tgid;
    }
    qsort(v, k, sizeof(*v), xlreaper__audit_cmp_u32);
    *out = v;
    *n = k;
    return 0;
}

/* The expected values of domid's DM, and the "record" line. */
static int expectations(audit *a, uint32_t domid, uid_t uid, gid_t gid,
                        xlreaper__dmrec *rec, bool *have_r,
                        xlreaper__facts *recfacts, xlreaper__audit_expect *e)
{
    const char *base =
        a->h && a->h->chroot_base ? a->h->chroot_base : a->cfg->chroot_base;
    char why[512], *path = xlreaper__dmrec_path(a->cfg, domid);
    struct stat st;
    int r, rc;

    memset(e, 0, sizeof(*e));
    *have_r = false;
    if (!path)
        return XLREAPER_ERROR_NOMEM;
    r = xlreaper__dmrec_read(a->ctx, domid, rec, why, sizeof(why));
    if (r == XLREAPER_ERROR_NOMEM) {
        free(path);
        return r;
    }
    if (r == 1) {
        rc = xlreaper__facts_read(a->ctx, &a->reader, rec->pid, &a->xd,
                                  a->h ? a->h->facts_first : NULL,
                                  process_deadline(a), recfacts);
        if (rc) {
            free(path);
            return rc;
        }
        if (recfacts->have_start && recfacts->start == rec->start) {
            *have_r = true;
        } else if (!recfacts->have_start && recfacts->timed_out) {
            rc = ADD(a, "record", domid, uid, rec->pid, XLREAPER_AUDIT_UNKNOWN,
                     "%s names pid %ld, whose /proc did not answer in time: "
                     "expected values from " CONVENTIONS,
                     path, (long)rec->pid);
            r = 2;
        } else {
            rc = ADD(a, "record", domid, uid, 0, XLREAPER_AUDIT_SKIP,
                     "%s names pid %ld (start %llu), which is gone: expected "
                     "values from " CONVENTIONS,
                     path, (long)rec->pid, rec->start);
            r = 2;
        }
        if (r == 2) {
            xlreaper__dmrec_dispose(rec);
            xlreaper__facts_dispose(recfacts);
            if (rc) {
                free(path);
                return rc;
            }
        }
    }
    if (*have_r) {
        e->rec = rec;
        e->source = "root's record";
        if (rec->uid != uid || rec->gid != gid)
            rc = ADD(a, "record", domid, uid, rec->pid, XLREAPER_AUDIT_FAIL,
                     "%s says ids %lu:%lu, but domid %u's are %lu:%lu", path,
                     (unsigned long)rec->uid, (unsigned long)rec->gid, domid,
                     (unsigned long)uid, (unsigned long)gid);
        else
            rc = ADD(a, "record", domid, uid, rec->pid, XLREAPER_AUDIT_PASS,
                     "expected values from root's record %s: pid %ld (start "
                     "%llu), %s mode, exec'd %s",
                     path, (long)rec->pid, rec->start,
                     rec->runas ? "runas" : "exec", rec->path);
        if (rec->root)
            snprintf(e->root, sizeof(e->root), "%s", rec->root);
        e->root_from = "root's record";
    } else {
        e->source = CONVENTIONS;
        if (r == 0)
            rc = ADD(a, "record", domid, uid, 0, XLREAPER_AUDIT_SKIP,
                     "no record of root's (a DM libxl started without the "
                     "wrapper): expected values from " CONVENTIONS
                     " (uid %lu, chroot_base's qemu-root-%u)",
                     (unsigned long)uid, domid);
        else if (r < 0)
            rc = ADD(a, "record", domid, uid, 0, XLREAPER_AUDIT_FAIL, "%s",
                     why);
        else
            rc = 0;
        e->root_from = "chroot_base, libxl's convention";
        if (base) {
            snprintf(e->root, sizeof(e->root), "%s/qemu-root-%u", base, domid);
            if (stat(e->root, &st) < 0 && errno == ENOENT) {
                e->root[0] = '\0';
                e->root_from = "no qemu-root under chroot_base";
            }
        } else {
            e->root_from = "no chroot_base";
        }
    }
    free(path);
    return rc;
}

/* One domain's check: the processes of its uid, and which is its DM. */
typedef struct {
    uint32_t domid;
    uid_t uid;
    gid_t gid;
    long xspid;  /* xenstore's device-model-pid, or 0 */
    long qpid;   /* libxl's qdisk-backend-pid, or 0 */
    pid_t *pids; /* the processes of the uid */
    unsigned n;
    dm_proc *ps; /* those, and the recorded DM even outside the uid */
    unsigned np;
    pid_t dm; /* the DM, or 0 while none is told apart */
    const char *dm_from;
    unsigned candidates; /* not shaped like pygrub, while no DM is known */
    bool have_rec;
} dom_check;

/* c->ps: every process of the uid, and the recorded DM (rec, its facts
 * read with it into *recfacts, which move into c->ps) even outside it;
 * the DM, if root's record or xenstore names it.  0 or _NOMEM. */
static int gather_procs(dom_check *c, const xlreaper__dmrec *rec,
                        xlreaper__facts *recfacts,
                        const xlreaper__audit_expect *exp)
{
    c->ps = calloc(c->n + 1, sizeof(*c->ps));
    if (!c->ps)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < c->n; i++)
        c->ps[c->np++] = (dm_proc){ .pid = c->pids[i] };
    if (c->have_rec) {
        unsigned i;
        for (i = 0; i < c->np && c->ps[i].pid != rec->pid; i++)
            ;
        if (i == c->np)
            c->ps[c->np++] = (dm_proc){ .pid = rec->pid };
        c->ps[i].facts = *recfacts;
        memset(recfacts, 0, sizeof(*recfacts));
        c->dm = rec->pid;
        c->dm_from = "root's record";
    }
    for (unsigned i = 0; i < c->np; i++) {
        c->ps[i].domid = c->domid;
        c->ps[i].uid = c->uid;
        c->ps[i].gid = c->gid;
        c->ps[i].exp = exp;
    }
    if (!c->dm && c->xspid > 0)
        for (unsigned i = 0; i < c->np; i++)
            if (c->ps[i].pid == (pid_t)c->xspid) {
                c->dm = c->ps[i].pid;
                c->dm_from = "xenstore's device-model-pid";
            }
    return 0;
}

/* The facts of each process, within its deadline and the audit's (one
 * not read has its pid set to 0); with no DM named, the only process
 * not shaped like pygrub is taken for it.  0 or an error. */
static int read_procs(audit *a, dom_check *c)
{
    char lacks[256];
    int rc;

    for (unsigned i = 0; i < c->np; i++) {
        dm_proc *p = &c->ps[i];

        if (p->facts.read)
            continue; /* read with the record */
        if (xlreaper__audit_late(a)) {
            rc = ADD(a, "dm", c->domid, c->uid, p->pid, XLREAPER_AUDIT_UNKNOWN,
                     "pid %ld not checked: the audit's deadline of %u ms "
                     "had passed",
                     (long)p->pid, a->deadline_ms);
            p->pid = 0;
            if (rc)
                return rc;
            continue;
        }
        rc = read_facts(a, p);
        if (rc)
            return rc;
        if (!c->dm && !pygrub_shaped(a, p, lacks, sizeof(lacks)))
            c->candidates++;
    }
    if (!c->dm && c->candidates == 1)
        for (unsigned i = 0; i < c->np && !c->dm; i++)
            if (c->ps[i].pid &&
                !pygrub_shaped(a, &c->ps[i], lacks, sizeof(lacks))) {
                c->dm = c->ps[i].pid;
                c->dm_from = "the only process of its uid";
            }
    return 0;
}

/* The "dm" line: the uid's processes and which is the DM; then
 * xenstore's pid against them.  0 or an error. */
static int say_dm(audit *a, const dom_check *c)
{
    xlreaper__sb sb = { 0 };
    unsigned n = c->n;
    int rc;

    for (unsigned i = 0; i < n; i++)
        xlreaper__sb_printf(&sb, "%s%ld", i ? " " : "", (long)c->pids[i]);
    if (sb.oom) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    if (c->dm)
        rc = ADD(a, "dm", c->domid, c->uid, c->dm, XLREAPER_AUDIT_PASS,
                 "%u process%s under its uid%s%s; its DM: pid %ld (from %s)",
                 n, n == 1 ? "" : "es", n ? ": pid " : "",
                 sb.buf ? sb.buf : "", (long)c->dm, c->dm_from);
    else if (n)
        rc = ADD(a, "dm", c->domid, c->uid, c->pids[0], XLREAPER_AUDIT_PASS,
                 "%u process%s under its uid: pid %s; its DM: none told "
                 "apart (no record of root's, no xenstore pid)",
                 n, n == 1 ? "" : "es", sb.buf ? sb.buf : "");
    else
        rc = ADD(a, "dm", c->domid, c->uid, 0, XLREAPER_AUDIT_SKIP,
                 "no process under uid %lu (no DM, a PV guest, or a stub "
                 "domain)",
                 (unsigned long)c->uid);
    if (!rc)
        rc =
            check_xs_pid(a, c->domid, c->uid, c->xspid, n, n ? c->pids[0] : 0);
    if (!rc)
        rc = check_qdisk_pid(a, c->domid, c->uid, c->qpid);
out:
    xlreaper__sb_dispose(&sb);
    return rc;
}

/* Each process judged: the DM held to a DM's jail, the others to a
 * tenant's (all to a DM's when which is the DM cannot be told).  0 or
 * an error. */
static int judge_procs(audit *a, const dom_check *c)
{
    int rc = 0;

    for (unsigned i = 0; !rc && i < c->np; i++) {
        dm_proc *p = &c->ps[i];
        char lacks[256];

        if (!p->pid)
            continue;
        if (!p->facts.have_start && !p->facts.threads.num &&
            !p->facts.timed_out) {
            rc = ADD(a, "dm", c->domid, c->uid, p->pid, XLREAPER_AUDIT_SKIP,
                     "pid %ld exited during the audit", (long)p->pid);
            continue;
        }
        if (p->pid == c->dm) {
            rc = check_dm_proc(a, p);
            continue;
        }
        if (!c->dm && c->candidates > 1 &&
            !pygrub_shaped(a, p, lacks, sizeof(lacks))) {
            /* Which is the DM cannot be told: each is held to a DM's
             * jail, and there are too many. */
            rc =
                ADD(a, "tenant", c->domid, c->uid, p->pid, XLREAPER_AUDIT_FAIL,
                    "pid %ld is one of %u processes of domid %u's uid "
                    "that are not known tenants, and nothing (no record "
                    "of root's, no xenstore pid) says which is its DM",
                    (long)p->pid, c->candidates, c->domid);
            if (!rc)
                rc = check_dm_proc(a, p);
            continue;
        }
        rc = check_tenant(a, p, c->xspid, c->have_rec);
    }
    return rc;
}

static int check_domain(audit *a, uint32_t domid, long xspid, long qpid)
{
    dom_check c = { .domid = domid, .xspid = xspid, .qpid = qpid };
    xlreaper__dmrec rec = { 0 };
    xlreaper__facts recfacts = { 0 };
    xlreaper__audit_expect exp;
    int rc;

    xlreaper_dm_ids(a->ctx, domid, &c.uid, &c.gid);
    rc = procs_of(a, domid, &c.pids, &c.n);
    if (rc)
        return rc;
    rc = expectations(a, domid, c.uid, c.gid, &rec, &c.have_rec, &recfacts,
                      &exp);
    if (!rc)
        rc = gather_procs(&c, &rec, &recfacts, &exp);
    if (!rc)
        rc = read_procs(a, &c);
    if (!rc)
        rc = say_dm(a, &c);
    if (!rc)
        rc = judge_procs(a, &c);

    if (c.ps)
        for (unsigned i = 0; i < c.np; i++)
            xlreaper__facts_dispose(&c.ps[i].facts);
    free(c.ps);
    free(c.pids);
    xlreaper__facts_dispose(&recfacts);
    xlreaper__dmrec_dispose(&rec);
    return rc;
}

/* Domains to check the jail of: the live ones, or, when liveness is
 * unknown, every domain with a task in the range. */
int xlreaper__audit_domains(audit *a, xlreaper__audit_dm *unused)
{
    const xlreaper_audit_result *res = a->res;
    uint32_t *ds = NULL;
    unsigned nd = 0;
    int rc = 0;

    (void)unused;
    if (a->live_known) {
        for (unsigned i = 0; !rc && i < res->num_live; i++)
            rc = check_domain(a, res->live[i],
                              a->dmpids.pids ? a->dmpids.pids[i] : 0,
                              a->dmpids.qpids ? a->dmpids.qpids[i] : 0);
        return rc;
    }
    ds = calloc(a->tasks.num + 1, sizeof(*ds));
    if (!ds)
        return XLREAPER_ERROR_NOMEM;
    for (unsigned i = 0; i < a->tasks.num; i++) {
        uint32_t d = xlreaper__audit_task_domid(a, &a->tasks.tasks[i]);
        bool seen = false;
        for (unsigned j = 0; j < nd; j++)
            seen |= ds[j] == d;
        if (d != NO_DOMID && !seen)
            ds[nd++] = d;
    }
    qsort(ds, nd, sizeof(*ds), xlreaper__audit_cmp_u32);
    for (unsigned i = 0; !rc && i < nd; i++)
        rc = check_domain(a, ds[i], 0, 0);
    free(ds);
    return rc;
}
