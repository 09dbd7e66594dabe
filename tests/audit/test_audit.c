/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_audit.c - `xl-reaper audit` against real processes: each test
 * starts fake device models (tests/progs/fake_dm) under uids of our own
 * block with one part of the jail missing, and checks that the audit
 * names exactly that, with the right reason; a clean setup must pass.
 *
 * There is no Xen here: the live domains come from the audit's internal
 * hook (a test-only xenstored, tests/progs/fake_xenstored.c in another
 * branch, could later serve the xenstore side), and the Xen devices are
 * stand-in nodes under a test directory, recognised as the real ones
 * are: by their device numbers (character nodes made with /dev/full's
 * and /dev/urandom's numbers) or by device and inode (a plain file for
 * /proc/xen/xenbus).  The Xen devices themselves are checked for real
 * in the end-to-end tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "xlr_test.h"
#include "xlreaper_audit_internal.h"

/* Our uid block is 6000000-6499999; the range takes 32752 of it. */
#define BASE 6000000u
#define LIVE 3u      /* a live domain, with a DM */
#define LIVE2 4u     /* another live one */
#define DEAD 7u      /* a domain that is gone */
#define SWEEP_MAX 64 /* domids the tests let a sweep probe */

typedef struct {
    char *dir;
    xlreaper_ctx *ctx;
    xlreaper__audit_hooks h;
    uint32_t live[4];
    unsigned nlive;
    uint32_t born; /* live from the second listing on, if not 0 */
    unsigned listings;
    bool live_fails;
    uint32_t xs_domid; /* dm_pid hook answers for this one */
    long xs_pid;
    uint64_t forks; /* forks hook: constant, or counting */
    bool forks_move;
    pid_t procs[8]; /* ours to kill and wait for */
    unsigned nprocs;
    const char *setid_roots[2]; /* the setid walk: this fixture's dir */
    pid_t nursery;       /* ours to stop, after reaping... */
    uint32_t reap_domid; /* ...this domid's uid, if not 0 */
    xlreaper_audit_result res;
} fx;

static int hook_live(void *opaque, uint32_t **domids_r, unsigned *num_r)
{
    fx *f = opaque;

    if (f->live_fails)
        return XLREAPER_ERROR_FAIL;
    *domids_r = calloc(f->nlive + 2, sizeof(uint32_t));
    if (!*domids_r)
        return XLREAPER_ERROR_NOMEM;
    memcpy(*domids_r, f->live, f->nlive * sizeof(uint32_t));
    *num_r = f->nlive;
    if (f->born && f->listings++)
        (*domids_r)[(*num_r)++] = f->born;
    return 0;
}

static int hook_dm_pid(void *opaque, uint32_t domid, long *pid_r)
{
    fx *f = opaque;

    if (domid != f->xs_domid)
        return 0;
    *pid_r = f->xs_pid;
    return 1;
}

static int hook_forks(void *opaque, uint64_t *forks_r)
{
    fx *f = opaque;

    *forks_r = f->forks_move ? f->forks++ : f->forks;
    return 0;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    char *conf, *nowhere;

    assert_non_null(f);
    f->dir = xlrt_tmpdir();
    assert_true(asprintf(&conf,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "reap_timeout_ms = 5000\nnproc_limit = 64\n"
                         "lock_timeout_ms = 300\n"
                         "chroot_base = \"%s\"\n",
                         BASE, f->dir, f->dir) > 0);
    f->ctx = xlrt_ctx(f->dir, conf);
    free(conf);
    /* No xenstore: libxenstore connects to XENSTORED_PATH first. */
    assert_true(asprintf(&nowhere, "%s/no-xenstored", f->dir) > 0);
    setenv("XENSTORED_PATH", nowhere, 1);
    free(nowhere);

    f->h.live_domids = hook_live;
    /* Passes are quiet unless a test says otherwise: on a shared host
     * something forks during most passes, and every audit would probe
     * the whole (test-bounded) range.  Tests that need the host's own
     * count set h.forks = NULL. */
    f->h.forks = hook_forks;
    f->h.opaque = f;
    f->h.sweep_max_domid = SWEEP_MAX;
    /* The setid walk of the whole host (test_audit_setid.c) takes
     * seconds; here it walks the fixture only. */
    f->setid_roots[0] = f->dir;
    f->h.setid_roots = f->setid_roots;
    f->live[f->nlive++] = LIVE;
    xlreaper_audit_result_init(&f->res);
    *state = f;
    return 0;
}

static void stop_procs(fx *f)
{
    for (unsigned i = 0; i < f->nprocs; i++) {
        int status;
        /* Our own unreaped children: their pids cannot be reused. */
        kill(f->procs[i], SIGKILL);
        while (waitpid(f->procs[i], &status, 0) < 0 && errno == EINTR)
            ;
    }
    f->nprocs = 0;
}

static int teardown(void **state)
{
    fx *f = *state;

    /* Also after a failed assertion: a fork racer left behind would
     * fill the host with zombies of init's. */
    if (f->reap_domid) {
        xlreaper_reap_result rr;
        xlreaper_reap_result_init(&rr);
        if (xlreaper_reap(f->ctx, NULL, f->reap_domid, &rr))
            fprintf(stderr, "teardown: reaping domid %u failed\n",
                    f->reap_domid);
        xlreaper_reap_result_dispose(&rr);
    }
    if (f->nursery)
        xlrt_nursery_stop(f->nursery);
    stop_procs(f);
    xlreaper_audit_result_dispose(&f->res);
    xlreaper_ctx_free(f->ctx);
    xlrt_tmpdir_remove(f->dir);
    free(f);
    return 0;
}

/* ---------- fake DMs ---------- */

typedef struct {
    uint32_t domid;
    uid_t ruid, euid, suid; /* 0: the DM uid */
    gid_t gid;              /* 0: the DM gid (= its uid) */
    gid_t group;            /* a supplementary group, or 0 */
    bool no_nnp;
    rlim_t nproc;          /* 0: 64, the configured limit */
    rlim_t nofile;         /* 0: leave it */
    const char *open_path; /* kept open across execve */
    const char *chroot_dir;
    const char *argv_domid; /* -xen-domid's value; NULL: domid */
    bool no_domid_arg;
    bool ambient_cap;     /* keep CAP_NET_BIND_SERVICE across execve */
    bool userns;          /* a user namespace of its own (unmapped) */
    const char *extra[8]; /* more arguments, after -xen-domid */
} dm_spec;

static void child_fail(int wfd)
{
    int e = errno;
    ssize_t r = write(wfd, &e, sizeof(e));
    (void)r;
    _exit(127);
}

static pid_t start_dm(fx *f, const dm_spec *s)
{
    uid_t uid = BASE + s->domid;
    gid_t gid = s->gid ? s->gid : uid;
    char prog[512], dom[16];
    char *argv[16] = { "fake_dm", NULL };
    int p[2], e = 0, n = 1;
    pid_t pid;
    ssize_t r;

    snprintf(prog, sizeof(prog), "%s/fake_dm", xlrt_progs_dir());
    snprintf(dom, sizeof(dom), "%u", s->domid);
    if (!s->no_domid_arg) {
        argv[n++] = "-xen-domid";
        argv[n++] = s->argv_domid ? (char *)s->argv_domid : dom;
    }
    for (int i = 0; i < 8 && s->extra[i]; i++)
        argv[n++] = (char *)s->extra[i];
    argv[n] = NULL;
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit nproc = { s->nproc ? s->nproc : 64,
                                s->nproc ? s->nproc : 64 };
        struct rlimit core = { 0, 0 }, nofile = { s->nofile, s->nofile };
        gid_t groups[1] = { s->group };
        int exe = open(prog, O_PATH | O_CLOEXEC);

        if (exe < 0)
            child_fail(p[1]);
        if (s->open_path && open(s->open_path, O_RDONLY | O_NOCTTY) < 0)
            child_fail(p[1]);
        if (s->chroot_dir && (chroot(s->chroot_dir) < 0 || chdir("/") < 0))
            child_fail(p[1]);
        /* Every limit the config asks a spawn to set (issue 4), as the
         * library's spawn would; s->nofile stands in for NOFILE's. */
        for (unsigned i = 0; i < f->ctx->cfg->num_rlimits; i++) {
            const xlreaper_rlimit *l = &f->ctx->cfg->rlimits[i];
            struct rlimit rl = { l->limit, l->limit };
            if (l->resource == RLIMIT_NOFILE && s->nofile)
                continue;
            if (setrlimit(l->resource, &rl) < 0)
                child_fail(p[1]);
        }
        if (syscall(SYS_setgroups, s->group ? 1 : 0, groups) < 0 ||
            syscall(SYS_setresgid, gid, gid, gid) < 0 ||
            setrlimit(RLIMIT_NPROC, &nproc) < 0 ||
            setrlimit(RLIMIT_CORE, &core) < 0 ||
            (s->nofile && setrlimit(RLIMIT_NOFILE, &nofile) < 0) ||
            (s->ambient_cap && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) ||
            syscall(SYS_setresuid, s->ruid ? s->ruid : uid,
                    s->euid ? s->euid : uid, s->suid ? s->suid : uid) < 0)
            child_fail(p[1]);
        if (s->ambient_cap) {
            /* Permitted and inheritable kept over the uid change, then
             * ambient: the way a DM could keep a capability. */
            struct __user_cap_header_struct hdr = {
                _LINUX_CAPABILITY_VERSION_3, 0
            };
            struct __user_cap_data_struct data[2] = { { 0 } };
            uint32_t bit = 1u << CAP_NET_BIND_SERVICE;

            data[0].effective = data[0].permitted = bit;
            data[0].inheritable = bit;
            if (syscall(SYS_capset, &hdr, data) < 0 ||
                prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE,
                      CAP_NET_BIND_SERVICE, 0, 0) < 0)
                child_fail(p[1]);
        }
        /* Cleared by the change of ids: set it now. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (!s->no_nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            child_fail(p[1]);
        if (s->userns && unshare(CLONE_NEWUSER) < 0)
            child_fail(p[1]);
        syscall(SYS_execveat, exe, "", argv, (char *[]){ NULL },
                AT_EMPTY_PATH);
        child_fail(p[1]);
    }
    close(p[1]);
    /* EOF: the execve happened (the pipe is close-on-exec). */
    r = read(p[0], &e, sizeof(e));
    close(p[0]);
    if (r > 0)
        fail_msg("fake DM setup failed: %s", strerror(e));
    f->procs[f->nprocs++] = pid;
    return pid;
}

/* A child under uid that sleeps (all ids uid), or exits at once and is
 * left a zombie until the fixture waits for it. */
static pid_t start_task(fx *f, uid_t uid, bool zombie)
{
    int p[2];
    char ok = 0;
    pid_t pid;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        if (syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, uid, uid, uid) ||
            syscall(SYS_setresuid, uid, uid, uid))
            _exit(1);
        if (zombie)
            _exit(0);
        /* After setresuid, which clears it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Only now is it a task of uid: an audit started before this
         * would see it change uid under its feet. */
        if (write(p[1], "k", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    f->procs[f->nprocs++] = pid;
    if (!zombie) {
        assert_int_equal(read(p[0], &ok, 1), 1);
        assert_int_equal(ok, 'k');
    }
    close(p[0]);
    if (zombie) {
        siginfo_t si;
        /* Wait until it is a zombie, without reaping it. */
        assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
    }
    return pid;
}

/* ---------- running the audit and reading it ---------- */

static xlreaper_audit_result *run(fx *f, unsigned flags)
{
    xlreaper_audit_opts o;
    int rc;

    xlreaper_audit_opts_init(&o);
    o.flags = flags;
    o.xenstore_timeout_ms = 500;
    xlreaper_audit_result_dispose(&f->res);
    rc = xlreaper__audit_run(f->ctx, &o, &f->h, &f->res);
    assert_int_equal(rc, 0);
    if (getenv("XLR_TEST_LOG"))
        fprintf(stderr, "audit: %.1f ms, %u passes, %u probes\n",
                (double)f->res.duration_us / 1000, f->res.passes,
                f->res.probes);
    return &f->res;
}

static void dump(const xlreaper_audit_result *res)
{
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        fprintf(stderr, "  %-13s domid %-5d pid %-7ld %-7s %s\n", c->name,
                c->domid == XLREAPER_AUDIT_NO_DOMID ? -1 : (int)c->domid,
                (long)c->pid, xlreaper_audit_status_name(c->status),
                c->reason);
    }
}

/* The first check called name about domid (or any, with NO_DOMID). */
static const xlreaper_audit_check *find(const xlreaper_audit_result *res,
                                        const char *name, uint32_t domid)
{
    for (unsigned i = 0; i < res->num; i++)
        if (!strcmp(res->checks[i].name, name) &&
            (domid == XLREAPER_AUDIT_NO_DOMID ||
             res->checks[i].domid == domid))
            return &res->checks[i];
    dump(res);
    fail_msg("no check %s for domid %d", name, (int)domid);
    return NULL;
}

static void expect(const xlreaper_audit_result *res, const char *name,
                   uint32_t domid, xlreaper_audit_status st,
                   const char *reason_part)
{
    const xlreaper_audit_check *c = find(res, name, domid);

    if (c->status != st || (reason_part && !strstr(c->reason, reason_part))) {
        dump(res);
        fail_msg("%s (domid %d): %s \"%s\", want %s with \"%s\"", name,
                 (int)domid, xlreaper_audit_status_name(c->status), c->reason,
                 xlreaper_audit_status_name(st),
                 reason_part ? reason_part : "");
    }
}

/* Exactly these checks failed, nothing else (and nothing unknown). */
static void expect_only_failures(const xlreaper_audit_result *res,
                                 const char *const *names)
{
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        bool want = false;

        for (const char *const *n = names; *n; n++)
            want |= !strcmp(*n, c->name);
        if ((c->status == XLREAPER_AUDIT_FAIL) != want ||
            c->status == XLREAPER_AUDIT_UNKNOWN) {
            dump(res);
            fail_msg("check %s is %s", c->name,
                     xlreaper_audit_status_name(c->status));
        }
    }
}

#define D XLREAPER_AUDIT_NO_DOMID
#define PASS XLREAPER_AUDIT_PASS
#define FAIL XLREAPER_AUDIT_FAIL
#define SKIP XLREAPER_AUDIT_SKIP
#define UNKNOWN XLREAPER_AUDIT_UNKNOWN

/* ---------- a clean host ---------- */

static void test_clean_passes(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    static const char *const none[] = { NULL };

    /* The host's own fork count, quiet or not. */
    f->h.forks = NULL;
    f->h.max_passes = 2;
    start_dm(f, &(dm_spec){ .domid = LIVE });
    res = run(f, 0);
    expect_only_failures(res, none);
    assert_int_equal(xlreaper_audit_verdict(res), PASS);
    expect(res, "live_domains", D, PASS, "1 live domain from hook: 3");
    expect(res, "dm", LIVE, PASS, "1 process under its uid");
    expect(res, "ids", LIVE, PASS, "uids 6000003, gids 6000003");
    expect(res, "caps", LIVE, PASS, NULL);
    expect(res, "groups", LIVE, PASS, "no supplementary group");
    expect(res, "no_new_privs", LIVE, PASS, NULL);
    expect(res, "userns", LIVE, PASS, "in the host's user namespace");
    expect(res, "cmdline", LIVE, PASS, "-xen-domid 3 matches");
    expect(res, "rlimits", LIVE, PASS,
           "NPROC 64/64, NOFILE 4096/4096, FSIZE 262144/262144, CORE 0/0, "
           "MSGQUEUE 0/0, LOCKS 0/0, MEMLOCK 0/0");
    expect(res, "chroot", LIVE, SKIP, "none asked");
    expect(res, "xen_fds", LIVE, PASS, "none of its");
    expect(res, "xenstore", D, SKIP, "not reachable");
    expect(res, "reaper_idle", D, PASS, "runs nothing (kernel count 0)");
    expect(res, "passwd_range", D, PASS, NULL);
    expect(res, "uid_shared", D, PASS, NULL);
    expect(res, "dead_uids", D, PASS, "none of the");
    assert_int_equal(res->dms, 1);
}

/* ---------- one violation at a time ---------- */

static void test_wrong_gid(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "ids", NULL };
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .gid = BASE + LIVE + 1 });
    res = run(f, 0);
    expect(res, "ids", LIVE, FAIL,
           "gids 6000004 6000004 6000004 6000004 (real, effective, saved, "
           "fs); want uid 6000003, gid 6000003");
    expect_only_failures(res, fails);
    assert_int_equal(xlreaper_audit_verdict(res), FAIL);
}

static void test_supplementary_group(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "groups", NULL };
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .group = 27 });
    res = run(f, 0);
    expect(res, "groups", LIVE, FAIL, "has 1 supplementary group: 27");
    expect_only_failures(res, fails);
}

/* QEMU's -runas leaves the DM its own gid as its one group: a pass.
 * Its gid plus another is not. */
static void test_own_gid_as_group(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .group = BASE + LIVE });
    res = run(f, 0);
    expect(res, "groups", LIVE, PASS, "but its own gid 6000003");
    assert_int_equal(xlreaper_audit_verdict(res), PASS);
}

static void test_no_new_privs(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "no_new_privs", NULL };
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .no_nnp = true });
    res = run(f, 0);
    expect(res, "no_new_privs", LIVE, FAIL, "NoNewPrivs is 0");
    expect_only_failures(res, fails);
}

/* A DM in a user namespace of its own is root there: it could mount
 * FUSE and make its own tasks unkillable. */
static void test_user_namespace(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "userns", NULL };
    const xlreaper_audit_result *res;
    pid_t pid = fork();
    int status;

    /* Can the uid make one here at all? */
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(syscall(SYS_setresuid, BASE + LIVE, BASE + LIVE, BASE + LIVE) ||
              unshare(CLONE_NEWUSER));
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        print_message("[  SKIPPED ] the host refuses the uid a user "
                      "namespace: no DM can live in one here\n");
        skip();
    }
    start_dm(f, &(dm_spec){ .domid = LIVE, .userns = true });
    res = run(f, 0);
    expect(res, "userns", LIVE, FAIL, "not the host's");
    expect_only_failures(res, fails);
}

static void test_capability_kept(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "caps", NULL };
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .ambient_cap = true });
    res = run(f, 0);
    /* CAP_NET_BIND_SERVICE is bit 10: 0x400. */
    expect(res, "caps", LIVE, FAIL,
           "holds capabilities: permitted 0x400, effective 0x400, ambient "
           "0x400");
    expect_only_failures(res, fails);
}

static void test_nproc_unlimited(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "rlimits", NULL };
    const xlreaper_audit_result *res;

    struct rlimit host;
    char want[128];

    /* The host's own limit, as a DM started without one inherits it;
     * (raising it to infinity needs CAP_SYS_RESOURCE, which test hosts
     * may lack; "unlimited" is parsed in test_audit_parse). */
    assert_int_equal(getrlimit(RLIMIT_NPROC, &host), 0);
    assert_true(host.rlim_max > 64);
    start_dm(f, &(dm_spec){ .domid = LIVE, .nproc = host.rlim_max });
    res = run(f, 0);
    if (host.rlim_max == RLIM_INFINITY)
        snprintf(want, sizeof(want),
                 "NPROC soft unlimited hard unlimited "
                 "(want at most 64, nproc_limit)");
    else
        snprintf(want, sizeof(want),
                 "NPROC soft %llu hard %llu (want at most 64, nproc_limit)",
                 (unsigned long long)host.rlim_max,
                 (unsigned long long)host.rlim_max);
    expect(res, "rlimits", LIVE, FAIL, want);
    expect_only_failures(res, fails);
}

/* A limit the config carries (the spawn helper fills rlimits[]). */
static void test_configured_limit(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "rlimits", NULL };
    xlreaper_config *cfg = f->ctx->cfg;
    const xlreaper_audit_result *res;

    cfg->rlimits[0] = (xlreaper_rlimit){ RLIMIT_NOFILE, "nofile_limit", 64 };
    cfg->num_rlimits = 1;
    start_dm(f, &(dm_spec){ .domid = LIVE, .nofile = 64 });
    res = run(f, 0);
    expect(res, "rlimits", LIVE, PASS, "NOFILE 64/64");
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE, .nofile = 1024 });
    res = run(f, 0);
    expect(res, "rlimits", LIVE, FAIL,
           "NOFILE soft 1024 hard 1024 (want at most 64, nofile_limit)");
    expect_only_failures(res, fails);
}

static void test_cmdline_domid(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "cmdline", NULL };
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .argv_domid = "4" });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, FAIL,
           "-xen-domid 4, but it runs under domid 3's uid 6000003");
    expect_only_failures(res, fails);
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE, .no_domid_arg = true });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, FAIL, "no -xen-domid on its command line");
}

/* Stand-in Xen nodes: the audit knows them by device numbers (or
 * device and inode), not by the name the DM opened. */
static void make_nodes(fx *f, char **devdir_r, char **xenfs_r)
{
    char *p;

    assert_true(asprintf(devdir_r, "%s/dev-xen", f->dir) > 0);
    assert_true(asprintf(xenfs_r, "%s/proc-xen", f->dir) > 0);
    assert_int_equal(mkdir(*devdir_r, 0755), 0);
    assert_int_equal(mkdir(*xenfs_r, 0755), 0);
    assert_true(asprintf(&p, "%s/privcmd", *devdir_r) > 0);
    assert_int_equal(mknod(p, S_IFCHR | 0666, makedev(1, 7)), 0);
    free(p);
    assert_true(asprintf(&p, "%s/evtchn", *devdir_r) > 0);
    assert_int_equal(mknod(p, S_IFCHR | 0666, makedev(1, 9)), 0);
    free(p);
    free(xlrt_write_file(*xenfs_r, "xenbus", ""));
    f->h.xen_dev_dir = *devdir_r;
    f->h.xenfs_dir = *xenfs_r;
}

static void test_xen_descriptors(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "xen_fd", NULL };
    const xlreaper_audit_result *res;
    char *devdir, *xenfs, *privcmd, *evtchn, *xenbus;
    pid_t dm;

    make_nodes(f, &devdir, &xenfs);
    assert_true(asprintf(&privcmd, "%s/privcmd", devdir) > 0);
    assert_true(asprintf(&evtchn, "%s/evtchn", devdir) > 0);
    assert_true(asprintf(&xenbus, "%s/xenbus", xenfs) > 0);

    /* privcmd, opened by its own name. */
    dm = start_dm(f, &(dm_spec){ .domid = LIVE, .open_path = privcmd });
    res = run(f, 0);
    expect(res, "xen_fd", LIVE, FAIL, "privcmd");
    expect(res, "xen_fd", LIVE, FAIL, privcmd);
    expect(res, "xen_fd", LIVE, FAIL,
           "not shown to be restricted: the node does not answer as Xen's "
           "privcmd driver");
    assert_int_equal(find(res, "xen_fd", LIVE)->pid, dm);
    expect_only_failures(res, fails);
    stop_procs(f);

    /* The same device through another name: /dev/full has privcmd's
     * stand-in numbers. */
    start_dm(f, &(dm_spec){ .domid = LIVE, .open_path = "/dev/full" });
    res = run(f, 0);
    expect(res, "xen_fd", LIVE, FAIL, "privcmd /dev/full (node ");
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE, .open_path = evtchn });
    res = run(f, 0);
    expect(res, "xen_fd", LIVE, FAIL, "evtchn");
    expect(res, "xen_fd", LIVE, FAIL, "as Xen's evtchn driver");
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE, .open_path = xenbus });
    res = run(f, 0);
    expect(res, "xen_fd", LIVE, FAIL, "xenbus ");
    expect(res, "xen_fd", LIVE, FAIL, "an open xenstore device");
    stop_procs(f);

    /* An ordinary file is nothing of the kind. */
    start_dm(f, &(dm_spec){ .domid = LIVE, .open_path = "/etc/passwd" });
    res = run(f, 0);
    expect(res, "xen_fds", LIVE, PASS, "3 Xen nodes on this host");

    free(privcmd);
    free(evtchn);
    free(xenbus);
    free(devdir);
    free(xenfs);
}

static void test_chroot(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "chroot", NULL };
    const xlreaper_audit_result *res;
    char *root;

    assert_true(asprintf(&root, "%s/qemu-root-%u", f->dir, LIVE) > 0);
    assert_int_equal(mkdir(root, 0755), 0);
    f->h.chroot_base = f->dir;

    start_dm(f, &(dm_spec){ .domid = LIVE, .chroot_dir = root });
    res = run(f, 0);
    expect(res, "chroot", LIVE, PASS, "root is ");
    expect(res, "chroot", LIVE, PASS, "qemu-root-3 (from chroot_base)");
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE });
    res = run(f, 0);
    expect(res, "chroot", LIVE, FAIL, "root is /, not ");
    expect_only_failures(res, fails);
    free(root);
}

/* libxl 4.20's DM line: -run-with chroot= and user=, read as 4.17's
 * -chroot and -runas are. */
static void test_libxl420_cmdline(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "cmdline", NULL };
    const xlreaper_audit_result *res;
    char *root, *chroot;

    assert_true(asprintf(&root, "%s/qemu-root-%u", f->dir, LIVE) > 0);
    assert_int_equal(mkdir(root, 0755), 0);
    assert_true(asprintf(&chroot, "chroot=%s", root) > 0);

    start_dm(f,
             &(dm_spec){ .domid = LIVE,
                         .chroot_dir = root,
                         .extra = { "-xen-domid-restrict", "-run-with", chroot,
                                    "-run-with", "user=6000003:6000003" } });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, PASS,
           "-xen-domid 3 matches the uid; -xen-domid-restrict; -run-with "
           "user=6000003:6000003");
    expect(res, "chroot", LIVE, PASS, "(from its -run-with chroot=)");
    stop_procs(f);

    /* 4.17's spelling, the same verdicts. */
    start_dm(f, &(dm_spec){ .domid = LIVE,
                            .chroot_dir = root,
                            .extra = { "-chroot", root, "-runas",
                                       "6000003:6000000" } });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, PASS, "; -runas 6000003:6000000");
    expect(res, "chroot", LIVE, PASS, "(from its -chroot)");
    stop_procs(f);

    /* A line naming another domain's uid, under this one's. */
    start_dm(f,
             &(dm_spec){ .domid = LIVE,
                         .chroot_dir = root,
                         .extra = { "-run-with", "user=6000004:6000004" } });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, FAIL,
           "-run-with user=6000004:6000004 on its command line, but domid "
           "3's uid is 6000003");
    expect_only_failures(res, fails);
    free(chroot);
    free(root);
}

/* ---------- the uid range ---------- */

/* One of root's helpers in passing: ids (uid, uid, 0) for 40 ms, as a
 * killer or a kernel-census probe holds them, then gone. */
static void passing_helper(void *arg)
{
    uid_t u = (uid_t)(uintptr_t)arg;

    if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, u, u, 0) ||
        syscall(SYS_setresuid, u, u, 0))
        _exit(1);
    usleep(40000);
    _exit(0);
}

/* Seen by the pass, gone when looked at again: no leftover. */
static void test_helper_in_passing(void **state)
{
    fx *f = *state;
    static const char *const none[] = { NULL };
    const xlreaper_audit_result *res;
    pid_t n =
        xlrt_nursery_start(passing_helper, (void *)(uintptr_t)(BASE + DEAD));

    for (unsigned i = 0; xlrt_kernel_count(BASE + DEAD) < 1; i++) {
        assert_true(i < 10000); /* it never took the uid */
        usleep(500);
    }
    res = run(f, 0);
    xlrt_nursery_stop(n);
    expect(res, "dead_uids", D, PASS, NULL);
    expect_only_failures(res, none);
}

/* One of root's helpers that outstays every look (a probe the host is
 * too slow to finish), while the kernel cannot be asked (the lock is
 * held elsewhere): the audit cannot tell, which is no failed cleanup. */
static void test_helper_while_kernel_untold(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    char *lockf;
    int fd;
    pid_t h = fork();

    assert_true(h >= 0);
    if (h == 0) {
        uid_t u = BASE + DEAD;
        if (syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, u, u, 0) || syscall(SYS_setresuid, u, u, 0))
            _exit(1);
        for (;;)
            pause();
    }
    f->procs[f->nprocs++] = h;
    for (unsigned i = 0; xlrt_kernel_count(BASE + DEAD) < 1; i++) {
        assert_true(i < 10000); /* it never took the uid */
        usleep(500);
    }
    assert_true(asprintf(&lockf, "%s/lock", f->dir) > 0);
    fd = open(lockf, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    res = run(f, 0);
    close(fd);
    free(lockf);
    expect(res, "leftover", DEAD, UNKNOWN,
           "showed only root's helpers (saved uid 0) in /proc, and the "
           "kernel could not be asked");
    for (unsigned i = 0; i < res->num; i++)
        assert_int_not_equal(res->checks[i].status, XLREAPER_AUDIT_FAIL);
}

static void test_leftover_under_dead_uid(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "leftover", "dead_uids", NULL };
    const xlreaper_audit_result *res;
    pid_t t;

    t = start_task(f, BASE + DEAD, false);
    res = run(f, 0);
    expect(res, "leftover", DEAD, FAIL,
           "domid 7 is not live, but its uid 6000007 has 1 task in /proc "
           "(0 zombies; kernel count 1)");
    assert_int_equal(find(res, "leftover", DEAD)->pid, t);
    expect(res, "dead_uids", D, FAIL, "1 of the");
    expect_only_failures(res, fails);
    assert_true(xlrt_alive(t)); /* the audit changed nothing */
}

/* A domain created while the audit ran: its new DM is no leftover. */
static void test_domain_born_during_audit(void **state)
{
    fx *f = *state;
    static const char *const none[] = { NULL };
    const xlreaper_audit_result *res;

    f->born = DEAD;
    start_dm(f, &(dm_spec){ .domid = DEAD });
    res = run(f, 0);
    expect(res, "live_domains", D, PASS, "from hook: 3");
    expect(res, "dm", DEAD, PASS, "1 process under its uid");
    expect_only_failures(res, none);
}

static void test_zombie_leftover(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    start_task(f, BASE + DEAD, true);
    res = run(f, 0);
    expect(res, "leftover", DEAD, FAIL, "(1 zombie; kernel count 1)");
    expect(res, "leftover", DEAD, FAIL, "state Z");
}

/* Until the kernel counts n tasks of uid (or at least n); a child that
 * failed to take the uid would never get there. */
static void wait_count(uid_t uid, long n, bool exact)
{
    for (int i = 0; i < 10000; i++) {
        long c = xlrt_kernel_count(uid);
        if (exact ? c == n : c >= n)
            return;
        usleep(1000);
    }
    fail_msg("uid %lu never had %ld task(s)", (unsigned long)uid, n);
}

static void sleeper(void *arg)
{
    uid_t uid = *(uid_t *)arg;

    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, uid, uid, uid) ||
        syscall(SYS_setresuid, uid, uid, uid))
        _exit(1);
    for (;;)
        pause();
}

static void test_fix_reaps(void **state)
{
    fx *f = *state;
    uid_t uid = BASE + DEAD;
    const xlreaper_audit_check *c;
    const xlreaper_audit_result *res;

    /* In a nursery, so that the killed task is reaped at once. */
    f->nursery = xlrt_nursery_start(sleeper, &uid);
    f->reap_domid = DEAD;
    wait_count(uid, 1, true);

    res = run(f, 0);
    expect(res, "leftover", DEAD, FAIL, "has 1 task");
    assert_int_equal(xlrt_kernel_count(uid), 1); /* plain audit: no change */

    res = run(f, XLREAPER_AUDIT_FIX);
    c = find(res, "leftover", DEAD);
    if (!c->fixed || !strstr(c->reason, "--fix reaped it: domid 7"))
        fail_msg("leftover after --fix: %s", c->reason);
    /* Killed; the nursery reaps it soon, but maybe not before the
     * reaper's verdict, which then says a zombie still counts. */
    if ((c->status == PASS) == !!strstr(c->reason, "still count"))
        fail_msg("leftover after --fix: %s %s",
                 xlreaper_audit_status_name(c->status), c->reason);
    expect(res, "dead_uids", D, FAIL, "1 of the"); /* it was found */
    wait_count(uid, 0, true);

    res = run(f, 0);
    expect(res, "dead_uids", D, PASS, NULL);
}

static void test_task_under_pet(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "reaper_idle", NULL };
    const xlreaper_audit_result *res;
    pid_t t;

    t = start_task(f, BASE, false);
    res = run(f, 0);
    expect(res, "reaper_idle", D, FAIL,
           "the reaper (pet) uid 6000000 runs 1 task (kernel count 1");
    assert_int_equal(find(res, "reaper_idle", D)->pid, t);
    expect_only_failures(res, fails);
}

static void test_two_domains_uids(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    f->live[f->nlive++] = LIVE2;
    /* Real and saved uid of domid 3, effective of domid 4. */
    start_dm(f, &(dm_spec){ .domid = LIVE, .euid = BASE + LIVE2 });
    res = run(f, 0);
    expect(res, "uid_shared", D, FAIL, "carries the uids of domids 3 and 4");
    /* execve copies the effective uid into the saved one. */
    expect(res, "ids", LIVE, FAIL, "uids 6000003 6000004 6000004 6000004");
}

/* xenstore's DM pid must be the jailed DM: here it is a root task. */
static void test_xenstore_pid_not_jailed(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    pid_t dm, root;

    f->h.dm_pid = hook_dm_pid;
    f->xs_domid = LIVE;
    dm = start_dm(f, &(dm_spec){ .domid = LIVE });
    f->xs_pid = dm;
    res = run(f, 0);
    expect(res, "xenstore", D, PASS, "reachable");
    expect(res, "xenstore_pid", LIVE, PASS, "runs under the DM uid");

    root = fork();
    assert_true(root >= 0);
    if (root == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    f->procs[f->nprocs++] = root;
    f->xs_pid = root;
    res = run(f, 0);
    expect(res, "xenstore_pid", LIVE, FAIL,
           "runs as uids 0 0 0 0, not under domid 3's uid 6000003: not "
           "jailed");
    assert_int_equal(find(res, "xenstore_pid", LIVE)->pid, root);
}

/*
 * libxl 4.20 records its QEMU option probe's pid at device-model-pid
 * until the DM starts: root, no -xen-domid, by design.  Said as such,
 * not failed; the same line with one argument more is failed.
 */
static void test_xenstore_pid_probe(void **state)
{
    static const char *const probe_args[] = {
        "qemu-system-i386",
        "-S",
        "-no-user-config",
        "-nodefaults",
        "-nographic",
        "-machine",
        "none,accel=xen",
        "-chardev",
        "socket,id=libxl-cmd,fd=9,server=on,wait=off",
        "-mon",
        "chardev=libxl-cmd,mode=control",
        NULL, /* room for one more */
        NULL,
    };
    fx *f = *state;
    const xlreaper_audit_result *res;
    char prog[512];

    snprintf(prog, sizeof(prog), "%s/fake_dm", xlrt_progs_dir());
    f->h.dm_pid = hook_dm_pid;
    f->xs_domid = LIVE;
    start_dm(f, &(dm_spec){ .domid = LIVE }); /* the domain has its DM */
    for (int more = 0; more < 2; more++) {
        char *argv[13];
        pid_t probe;

        memcpy(argv, probe_args, sizeof(argv));
        if (more)
            argv[11] = "-name";
        probe = fork();
        assert_true(probe >= 0);
        if (probe == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            execv(prog, argv);
            _exit(127);
        }
        f->procs[f->nprocs++] = probe;
        f->xs_pid = probe;
        /* Until it has exec'd, its cmdline is ours. */
        for (int i = 0;; i++) {
            char *text = NULL;
            ssize_t n =
                xlreaper__audit_read_proc(probe, "cmdline", 4096, &text);
            bool done = n > 0 && !strcmp(text, "qemu-system-i386");
            free(text);
            if (done)
                break;
            assert_true(i < 10000);
            usleep(500);
        }
        res = run(f, 0);
        if (!more)
            expect(res, "xenstore_pid", LIVE, SKIP,
                   "is libxl's QEMU option probe (root, -machine none, no "
                   "-xen-domid), not a DM");
        else
            expect(res, "xenstore_pid", LIVE, FAIL, "not jailed");
        assert_int_equal(find(res, "xenstore_pid", LIVE)->pid, probe);
    }
}

/* libxenstore has no timeout; the audit's own must hold. */
static void test_xenstore_that_never_answers(void **state)
{
    fx *f = *state;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    const xlreaper_audit_result *res;
    xlreaper_audit_opts o;
    int s;

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/xs.sock", f->dir);
    s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(s, 8), 0);
    setenv("XENSTORED_PATH", sa.sun_path, 1);

    /* Live domains from the hook, DM pids from the silent xenstored. */
    res = run(f, 0);
    expect(res, "xenstore", D, SKIP, "did not answer within 500 ms");

    /* No hook at all: no hypervisor here, and xenstore is silent. */
    f->h.live_domids = NULL;
    xlreaper_audit_opts_init(&o);
    o.xenstore_timeout_ms = 200;
    xlreaper_audit_result_dispose(&f->res);
    assert_int_equal(xlreaper__audit_run(f->ctx, &o, &f->h, &f->res), 0);
    expect(&f->res, "live_domains", D, UNKNOWN,
           "xenstore did not answer within 200 ms");
    assert_int_equal(xlreaper_audit_verdict(&f->res), UNKNOWN);
    /* The readers left blocked see the end of their connections now. */
    close(s);
}

static void test_live_unknown(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    f->live_fails = true;
    start_dm(f, &(dm_spec){ .domid = LIVE, .group = 27 });
    start_task(f, BASE + DEAD, false);
    res = run(f, 0);
    expect(res, "live_domains", D, UNKNOWN, "could not tell");
    expect(res, "dead_uids", D, UNKNOWN, "no uid can be judged a leftover");
    /* Still: every DM found has its jail checked, a live one or not. */
    expect(res, "groups", LIVE, FAIL, "27");
    expect(res, "groups", DEAD, PASS, NULL);
    assert_int_equal(xlreaper_audit_verdict(res), FAIL);
}

/* ---------- when to probe ---------- */

/* A quiet pass is enough: only the uids that must be idle are probed. */
static void test_quiet_pass_probes_little(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    res = run(f, 0);
    assert_true(res->quiet);
    assert_int_equal(res->passes, 1);
    assert_int_equal(res->probes, 1); /* the pet */
    expect(res, "dead_uids", D, PASS,
           "a /proc pass during which the host created no task saw none");
}

/* No quiet pass: every dead uid (up to the test bound) is probed. */
static void test_no_quiet_pass_sweeps(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    f->forks_move = true;
    f->h.max_passes = 2;
    start_task(f, BASE + DEAD, true);
    res = run(f, 0);
    assert_false(res->quiet);
    assert_int_equal(res->passes, 2);
    /* pet 1, DEAD's count, and the 62 other dead domids of 1..64 */
    assert_true(res->probes >= 1 + 1 + SWEEP_MAX - 2);
    expect(res, "leftover", DEAD, FAIL, "1 zombie");
    stop_procs(f);

    res = run(f, XLREAPER_AUDIT_PROBE_ALL);
    expect(res, "dead_uids", D, PASS, "the kernel counts none for each");
}

/* A fork racer under a dead uid: whether a pass sees it or not, the
 * audit must report it (a racer makes every pass unquiet, so the
 * kernel count is asked). */
static void racer(void *arg)
{
    uid_t uid = *(uid_t *)arg;
    char prog[512];

    snprintf(prog, sizeof(prog), "%s/fork_racer", xlrt_progs_dir());
    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, uid, uid, uid) ||
        syscall(SYS_setresuid, uid, uid, uid))
        _exit(1);
    execl(prog, "fork_racer", (char *)NULL);
    _exit(127);
}

static void test_fork_racer_found(void **state)
{
    fx *f = *state;
    uid_t uid = BASE + 9;
    const xlreaper_audit_result *res;

    f->h.forks = NULL; /* the racer's forks must show */
    f->h.max_passes = 2;
    (void)xlrt_progs_dir(); /* checked here, not in the racer's child */
    f->nursery = xlrt_nursery_start(racer, &uid);
    f->reap_domid = 9; /* teardown reaps it, then stops the nursery */
    wait_count(uid, 1, false);
    res = run(f, 0);
    expect(res, "leftover", 9, FAIL, "domid 9 is not live, but ");
}

/* A dead uid's task that stops whatever enters its uid: the audit's
 * probes and census answer "busy" within seconds, never hang, and the
 * uid is reported. */
typedef struct {
    uid_t uid;
    int ready_fd;
} stopper_args;

static void stopper(void *arg)
{
    const stopper_args *a = arg;

    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, a->uid, a->uid, a->uid) ||
        syscall(SYS_setresuid, a->uid, a->uid, a->uid))
        _exit(1);
    (void)!write(a->ready_fd, "R", 1);
    for (;;)
        kill(-1, SIGSTOP);
}

static void test_stopper_found(void **state)
{
    fx *f = *state;
    stopper_args a = { .uid = BASE + 10 };
    const xlreaper_audit_result *res;
    struct timespec t0, t1;
    int fds[2];
    char c;

    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    a.ready_fd = fds[1];
    f->nursery = xlrt_nursery_start(stopper, &a);
    f->reap_domid = 10; /* teardown reaps it, then stops the nursery */
    close(fds[1]);
    /* Not by the kernel count: its probe would be stopped too. */
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    res = run(f, XLREAPER_AUDIT_PROBE_ALL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    expect(res, "leftover", 10, FAIL, "domid 10 is not live, but ");
    assert_true(t1.tv_sec - t0.tv_sec < 10);
}

/* ---------- the CLI ---------- */

static int cli(fx *f, const char *const *args, char **out_r)
{
    char bin[512], conf[512];
    char *argv[14];
    int n = 0, status;

    snprintf(bin, sizeof(bin), "%s/bin/xl-reaper", xlrt_build_dir());
    snprintf(conf, sizeof(conf), "%s/xl-reaper.conf", f->dir);
    argv[n++] = bin;
    argv[n++] = "-c";
    argv[n++] = conf;
    for (; *args && n < 11; args++) {
        argv[n++] = (char *)*args;
        /* The set-id walk of the host takes seconds a run: it has a
         * suite of its own (test_audit_setid). */
        if (n == 4 && !strcmp(*args, "audit")) {
            argv[n++] = "--setid-timeout";
            argv[n++] = "0";
        }
    }
    argv[n] = NULL;
    status = xlrt_run(argv, out_r, NULL);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_cli_exit_codes_and_formats(void **state)
{
    fx *f = *state;
    char *out, *conf;
    yajl_val js, v;
    char err[128];

    /* No Xen on this host: could not check (2), and says so. */
    assert_int_equal(cli(f, (const char *[]){ "audit", "--tap", NULL }, &out),
                     2);
    assert_non_null(strstr(out, "TAP version 13\n1.."));
    assert_non_null(strstr(out, "not ok 1 - live_domains: could not "
                                "check: "));
    assert_non_null(strstr(out, "  ---\n  check: live_domains\n"
                                "  status: unknown\n"));
    assert_non_null(strstr(out, " reaper_idle: "));
    free(out);

    assert_int_equal(cli(f, (const char *[]){ "audit", "--json", NULL }, &out),
                     2);
    js = yajl_tree_parse(out, err, sizeof(err));
    assert_non_null(js);
    v = yajl_tree_get(js, (const char *[]){ "verdict", NULL }, yajl_t_string);
    assert_string_equal(YAJL_GET_STRING(v), "unknown");
    v = yajl_tree_get(js, (const char *[]){ "checks", NULL }, yajl_t_array);
    assert_true(YAJL_IS_ARRAY(v) && v->u.array.len > 3);
    yajl_tree_free(js);
    free(out);

    /* A violation wins over "could not check": 1. */
    start_task(f, BASE, false);
    assert_int_equal(cli(f, (const char *[]){ "audit", NULL }, &out), 1);
    assert_non_null(strstr(out, "DOMID  UID"));
    assert_non_null(strstr(out, "reaper_idle    \u2717 the reaper"));
    assert_non_null(strstr(out, "audit: FAIL: 1 violation"));
    free(out);
    stop_procs(f);

    /* Bad usage and a config that does not load: could not check. */
    assert_int_equal(
        cli(f, (const char *[]){ "audit", "--bogus", NULL }, NULL), 2);
    assert_int_equal(
        cli(f, (const char *[]){ "audit", "--tap", "--json", NULL }, NULL), 2);
    conf = xlrt_write_file(f->dir, "xl-reaper.conf", "no_such_key = 1\n");
    free(conf);
    assert_int_equal(cli(f, (const char *[]){ "audit", NULL }, NULL), 2);
}

/* ---------- the osstest step ---------- */

/*
 * tools/xl-hooks/osstest/ts-xl-reaper-audit, a Perl step on Osstest.pm, run
 * against the stub Osstest tree in tests/osstest/stub: the same calls,
 * but target_cmd_output_root runs its command here instead of over
 * ssh, so the step audits this machine for real.  Its exit status
 * (osstest only looks at zero or not) and its log are checked.
 */
static int ts(fx *f, const char *xl_reaper, const char *timeout,
              char **out_r)
{
    char *env[4], *argv[] = { "/usr/bin/perl", "-Itests/osstest/stub",
                              "tools/xl-hooks/osstest/ts-xl-reaper-audit",
                              "host=localhost", "after-start", NULL };
    int status;

    assert_true(asprintf(&env[0], "OSSTEST_STUB_RUNVAR_xlreaper_command=%s",
                         xl_reaper) > 0);
    assert_true(asprintf(&env[1], "OSSTEST_STUB_STASH=%s", f->dir) > 0);
    assert_true(asprintf(&env[2],
                         "OSSTEST_STUB_RUNVAR_xlreaper_audit_timeout=%s",
                         timeout ? timeout : "600") > 0);
    env[3] = NULL;
    for (int i = 0; env[i]; i++)
        putenv(env[i]);
    /* The log is on stderr, as osstest's logm writes it. */
    status = xlrt_run(argv, NULL, out_r);
    unsetenv("OSSTEST_STUB_RUNVAR_xlreaper_command");
    unsetenv("OSSTEST_STUB_STASH");
    unsetenv("OSSTEST_STUB_RUNVAR_xlreaper_audit_timeout");
    for (int i = 0; env[i]; i++)
        free(env[i]);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_ts_compiles(void **state)
{
    char *argv[] = { "/usr/bin/perl", "-c", "-Itests/osstest/stub",
                     "tools/xl-hooks/osstest/ts-xl-reaper-audit", NULL };
    char *err;
    int status;

    (void)state;
    status = xlrt_run(argv, NULL, &err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        !strstr(err, "syntax OK"))
        fail_msg("perl -c: status %d: %s", status, err);
    free(err);
}

static void test_ts_script(void **state)
{
    fx *f = *state;
    char cmd[1200], *out, *fake, *tap;

    snprintf(cmd, sizeof(cmd), "%s/bin/xl-reaper -c %s/xl-reaper.conf",
             xlrt_build_dir(), f->dir);
    /* No Xen here: the audit could not check, and the step fails. */
    assert_int_not_equal(ts(f, cmd, NULL, &out), 0);
    assert_non_null(strstr(out, "audit on localhost (after-start) exited 2"));
    assert_non_null(strstr(out, "Z audit: not ok 1 - live_domains"));
    assert_non_null(strstr(out, "FAILURE: localhost (after-start): the "
                                "audit could not check everything"));
    assert_null(strstr(out, "BROKEN"));
    free(out);
    assert_true(asprintf(&tap,
                         "%s/localhost--xl-reaper-audit-after-start"
                         ".tap",
                         f->dir) > 0);
    assert_int_equal(access(tap, R_OK), 0);

    /* A violation; the TAP of the first run is kept, not overwritten. */
    start_task(f, BASE, false);
    assert_int_not_equal(ts(f, cmd, NULL, &out), 0);
    assert_non_null(strstr(out, "the audit found violations"));
    assert_non_null(strstr(out, "reaper_idle"));
    free(out);
    stop_procs(f);
    free(tap);
    assert_true(asprintf(&tap,
                         "%s/localhost--xl-reaper-audit-after-start"
                         ".tap+",
                         f->dir) > 0);
    assert_int_equal(access(tap, R_OK), 0);
    free(tap);

    /* What a host that passes says, and a TAP cut short. */
    fake = xlrt_write_file(f->dir, "pass.sh",
                           "echo 'TAP version 13'; echo 1..2;"
                           "echo 'ok 1 - a'; echo 'ok 2 - b';"
                           "echo '# audit: PASS: 0 violations'; exit 0\n");
    snprintf(cmd, sizeof(cmd), "/bin/sh %s", fake);
    assert_int_equal(ts(f, cmd, NULL, &out), 0);
    assert_non_null(strstr(out, "localhost (after-start): every DM jailed"));
    assert_non_null(strstr(out, "(after-start): PASS: 0 violations"));
    free(out);
    free(fake);
    fake = xlrt_write_file(f->dir, "cut.sh",
                           "echo 'TAP version 13'; echo 1..3;"
                           "echo 'ok 1 - a'; exit 0\n");
    snprintf(cmd, sizeof(cmd), "/bin/sh %s", fake);
    assert_int_not_equal(ts(f, cmd, NULL, &out), 0);
    assert_non_null(strstr(out, "TAP plan 1..3 but 1 test lines"));
    free(out);
    free(fake);

    /* Not the audit's verdict, but a host or a command that does not
     * answer: broken, not failed. */
    fake = xlrt_write_file(f->dir, "odd.sh", "echo 'TAP version 13'; exit 7\n");
    snprintf(cmd, sizeof(cmd), "/bin/sh %s", fake);
    assert_int_not_equal(ts(f, cmd, NULL, &out), 0);
    assert_non_null(strstr(out, "BROKEN: localhost (after-start): "
                                "unexpected exit 7"));
    free(out);
    free(fake);
    fake = xlrt_write_file(f->dir, "slow.sh", "exec sleep 30\n");
    snprintf(cmd, sizeof(cmd), "/bin/sh %s", fake);
    assert_int_not_equal(ts(f, cmd, "1", &out), 0);
    assert_non_null(strstr(out, "BROKEN: localhost (after-start): could not "
                                "run the audit: status (timed out)"));
    free(out);
    free(fake);

    /* The command goes into a shell on the host: nothing else does. */
    assert_int_not_equal(ts(f, "xl-reaper; rm -rf /", NULL, &out), 0);
    assert_non_null(strstr(out, "unsafe characters"));
    free(out);
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_clean_passes),
        T(test_wrong_gid),
        T(test_supplementary_group),
        T(test_own_gid_as_group),
        T(test_no_new_privs),
        T(test_user_namespace),
        T(test_capability_kept),
        T(test_nproc_unlimited),
        T(test_configured_limit),
        T(test_cmdline_domid),
        T(test_xen_descriptors),
        T(test_chroot),
        T(test_leftover_under_dead_uid),
        T(test_helper_while_kernel_untold),
        T(test_domain_born_during_audit),
        T(test_zombie_leftover),
        T(test_fix_reaps),
        T(test_task_under_pet),
        T(test_helper_in_passing),
        T(test_two_domains_uids),
        T(test_xenstore_pid_not_jailed),
        T(test_xenstore_pid_probe),
        T(test_libxl420_cmdline),
        T(test_xenstore_that_never_answers),
        T(test_live_unknown),
        T(test_quiet_pass_probes_little),
        T(test_no_quiet_pass_sweeps),
        T(test_fork_racer_found),
        T(test_stopper_found),
        T(test_cli_exit_codes_and_formats),
        cmocka_unit_test(test_ts_compiles),
        T(test_ts_script),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
