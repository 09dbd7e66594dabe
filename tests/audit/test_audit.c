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
#include <poll.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/shm.h>
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
    long qd_pid;    /* qdisk_pid hook's answer for xs_domid, if not 0 */
    uint64_t forks; /* forks hook: constant, or counting */
    bool forks_move;
    pid_t procs[40]; /* ours to kill and wait for */
    unsigned nprocs;
    const char *setid_roots[2]; /* the setid walk: this fixture's dir */
    pid_t locker_dm;            /* mmap_locker's DM, our orphan to reap */
    char *locker_mnt;           /* its FUSE mount, to detach */
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

static int hook_qdisk_pid(void *opaque, uint32_t domid, long *pid_r)
{
    fx *f = opaque;

    if (domid != f->xs_domid || !f->qd_pid)
        return 0;
    *pid_r = f->qd_pid;
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
                         /* Room for the fake DMs' memfds of locks. */
                         "nofile_limit = 4096\n"
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

/* mmap_locker's server, its DM (ours once orphaned: we are their
 * subreaper) and its mount, also after a failed assertion: a DM left
 * in uid BASE + LIVE would be a stranger in every later test. */
static void stop_locker(fx *f)
{
    if (!f->locker_mnt)
        return;
    stop_procs(f); /* the server: the connection aborts, the DM wakes */
    if (f->locker_dm) {
        kill(f->locker_dm, SIGKILL);
        for (int i = 0; i < 1000; i++) {
            pid_t w = waitpid(f->locker_dm, NULL, WNOHANG | __WALL);
            if (w == f->locker_dm || (w < 0 && errno == ECHILD))
                break;
            usleep(5000);
        }
    }
    while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
        ;
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    umount2(f->locker_mnt, MNT_DETACH);
    free(f->locker_mnt);
    f->locker_mnt = NULL;
    f->locker_dm = 0;
}

static int teardown(void **state)
{
    fx *f = *state;

    stop_locker(f);

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
    bool share_ns;        /* keep the mount and IPC namespaces (libxl
                           * unshares them for every restricted DM) */
    const char *extra[8]; /* more arguments, after -xen-domid */
    unsigned file_locks;  /* one-byte read locks it holds on memfds */
    const char *oom_adj;  /* its oom_score_adj; NULL: 1000, as spawned */
    bool epoll_lock;      /* and one on an epoll descriptor */
} dm_spec;

static void child_fail(int wfd)
{
    int e = errno;
    ssize_t r = write(wfd, &e, sizeof(e));
    (void)r;
    _exit(127);
}

/* n one-byte POSIX read locks on memfds, 100 a file (the kernel walks
 * an inode's whole list for each new lock), held across execve. */
static int take_file_locks(unsigned n)
{
    for (unsigned done = 0; done < n;) {
        int fd = memfd_create("locks", 0);

        if (fd < 0)
            return -1;
        for (unsigned i = 0; i < 100 && done < n; i++, done++) {
            struct flock fl = { .l_type = F_RDLCK,
                                .l_whence = SEEK_SET,
                                .l_start = 2 * (off_t)(100 - i),
                                .l_len = 1 };
            if (fcntl(fd, F_SETLK, &fl) < 0)
                return -1;
        }
    }
    return 0;
}

/* A lock on an epoll descriptor: the kernel takes one on any file. */
static int lock_epoll(void)
{
    struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1 };
    int ep = epoll_create(1);

    return ep < 0 ? -1 : fcntl(ep, F_SETLK, &fl);
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
        /* Nothing of the test's (nor its runner's: flock(1) passes its
         * locked descriptor down) reaches the DM but what s asks. */
        if (syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
            child_fail(p[1]);
        if (s->open_path && open(s->open_path, O_RDONLY | O_NOCTTY) < 0)
            child_fail(p[1]);
        {
            /* As the spawn sets it (dm_oom_score_adj, default 1000). */
            const char *adj = s->oom_adj ? s->oom_adj : "1000";
            int ofd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

            if (ofd < 0 || write(ofd, adj, strlen(adj)) < 0)
                child_fail(p[1]);
            close(ofd);
        }
        if (!s->share_ns && unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
            child_fail(p[1]);
        if (s->chroot_dir && (chroot(s->chroot_dir) < 0 || chdir("/") < 0))
            child_fail(p[1]);
        /* Every limit the config asks a spawn to set (its *_limit keys), as the
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
        /* As the DM uid, under its limits, as a DM would. */
        if ((s->file_locks && take_file_locks(s->file_locks) < 0) ||
            (s->epoll_lock && lock_epoll() < 0))
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
    siginfo_t si;
    pid_t pid;

    if (!zombie) {
        pid = xlrt_bystander_start(uid);
        f->procs[f->nprocs++] = pid;
        return pid;
    }
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(xlrt_become(uid, uid) < 0);
    f->procs[f->nprocs++] = pid;
    /* Wait until it is a zombie, without reaping it. */
    assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
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

/* Runs the audit: check fails for domid, saying why, and no other check
 * fails.  The result. */
static const xlreaper_audit_result *fails_only(fx *f, const char *check,
                                               uint32_t domid, const char *why)
{
    const char *const fails[] = { check, NULL };
    const xlreaper_audit_result *res = run(f, 0);

    expect(res, check, domid, FAIL, why);
    expect_only_failures(res, fails);
    return res;
}

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
    /* No record of root's: the DM's own line is not read. */
    expect(res, "record", LIVE, SKIP, "no record of root's");
    expect(res, "cmdline", LIVE, SKIP, "not read");
    expect(res, "seccomp", LIVE, SKIP, "no record of root's");
    expect(res, "namespaces", LIVE, PASS, "its own mount, IPC namespaces");
    expect(res, "userns", LIVE, PASS, "in the host's user namespace");
    expect(res, "deadline", D, PASS, "every check made within");
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
    /* The file table, for the one live domain's DM, as check says it. */
    expect(res, "file_pool", D, PASS,
           "one DM may hold nproc_limit x nofile_limit = 64 x 4096 = 262144 "
           "files (");
    expect(res, "file_pool", D, PASS, "live domains now 1; ");
    expect(res, "file_pool", D, PASS, " files in use");
    assert_int_equal(res->dms, 1);
}

/* ---------- one violation at a time ---------- */

static void test_wrong_gid(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    start_dm(f, &(dm_spec){ .domid = LIVE, .gid = BASE + LIVE + 1 });
    res = fails_only(f, "ids", LIVE,
                     "gids 6000004 6000004 6000004 6000004 (real, effective, "
                     "saved, fs); want uid 6000003, gid 6000003");
    assert_int_equal(xlreaper_audit_verdict(res), FAIL);
}

static void test_supplementary_group(void **state)
{
    fx *f = *state;

    start_dm(f, &(dm_spec){ .domid = LIVE, .group = 27 });
    fails_only(f, "groups", LIVE, "has 1 supplementary group: 27");
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

    start_dm(f, &(dm_spec){ .domid = LIVE, .no_nnp = true });
    fails_only(f, "no_new_privs", LIVE, "NoNewPrivs is 0");
}

/* A DM in a user namespace of its own is root there: it could mount
 * FUSE and make its own tasks unkillable. */
static void test_user_namespace(void **state)
{
    fx *f = *state;
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
    fails_only(f, "userns", LIVE, "not the host's");
}

static void test_capability_kept(void **state)
{
    fx *f = *state;

    start_dm(f, &(dm_spec){ .domid = LIVE, .ambient_cap = true });
    /* CAP_NET_BIND_SERVICE is bit 10: 0x400. */
    fails_only(f, "caps", LIVE,
               "holds capabilities: permitted 0x400, effective 0x400, ambient "
               "0x400");
}

static void test_nproc_unlimited(void **state)
{
    fx *f = *state;
    struct rlimit host;
    char want[128];

    /* The host's own limit, as a DM started without one inherits it;
     * (raising it to infinity needs CAP_SYS_RESOURCE, which test hosts
     * may lack; "unlimited" is parsed in test_audit_parse). */
    assert_int_equal(getrlimit(RLIMIT_NPROC, &host), 0);
    assert_true(host.rlim_max > 64);
    start_dm(f, &(dm_spec){ .domid = LIVE, .nproc = host.rlim_max });
    if (host.rlim_max == RLIM_INFINITY)
        snprintf(want, sizeof(want),
                 "NPROC soft unlimited hard unlimited "
                 "(want at most 64, nproc_limit)");
    else
        snprintf(want, sizeof(want),
                 "NPROC soft %llu hard %llu (want at most 64, nproc_limit)",
                 (unsigned long long)host.rlim_max,
                 (unsigned long long)host.rlim_max);
    fails_only(f, "rlimits", LIVE, want);
}

/* A limit the config carries (the spawn helper fills rlimits[]). */
static void test_configured_limit(void **state)
{
    fx *f = *state;
    xlreaper_config *cfg = f->ctx->cfg;
    const xlreaper_audit_result *res;

    cfg->rlimits[0] = (xlreaper_rlimit){ RLIMIT_NOFILE, "nofile_limit", 64 };
    cfg->num_rlimits = 1;
    start_dm(f, &(dm_spec){ .domid = LIVE, .nofile = 64 });
    res = run(f, 0);
    expect(res, "rlimits", LIVE, PASS, "NOFILE 64/64");
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE, .nofile = 1024 });
    fails_only(f, "rlimits", LIVE,
               "NOFILE soft 1024 hard 1024 (want at most 64, nofile_limit)");
}

/* Root's record of domid's DM pid: argv (NULL ended), its root. */
static void record(fx *f, uint32_t domid, pid_t pid, const char *root,
                   const char *const *argv)
{
    xlreaper__dmrec r = {
        .domid = domid, .pid = pid, .nnp = true, .unshare_ns = true
    };
    xlreaper__sb sb = { 0 };

    r.uid = BASE + domid;
    r.gid = BASE + domid;
    r.root = (char *)root;
    r.path = "/usr/bin/qemu-system-i386";
    r.rl[0].resource = RLIMIT_NPROC;
    r.rl[0].limit = 64;
    r.num_rl = 1;
    assert_int_equal(xlreaper__proc_starttime(pid, &r.start), 0);
    for (; *argv; argv++) {
        xlreaper__sb_printf(&sb, "%s", *argv);
        xlreaper__sb_printf(&sb, "%c", 1);
        sb.buf[sb.len - 1] = '\0';
    }
    assert_false(sb.oom);
    r.argv = sb.buf;
    r.argv_len = sb.len;
    assert_int_equal(xlreaper__dmrec_write(f->ctx, &r), 0);
    xlreaper__sb_dispose(&sb);
}

/* What the DM says of itself is not read: a DM that names another
 * domain in its argv is judged by root's record, and without one its
 * line is not evidence either way. */
static void test_cmdline_from_record(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "cmdline", NULL };
    const xlreaper_audit_result *res;
    pid_t dm;

    dm = start_dm(f, &(dm_spec){ .domid = LIVE, .argv_domid = "4" });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, SKIP, "not read");
    assert_int_equal(xlreaper_audit_verdict(res), PASS);

    record(f, LIVE, dm, NULL,
           (const char *const[]){ "qemu", "-xen-domid", "4", NULL });
    res = run(f, 0);
    expect(res, "record", LIVE, PASS, "expected values from root's record");
    expect(res, "cmdline", LIVE, FAIL,
           "root's record of what it exec'd has 1 -xen-domid option (the "
           "last says 4), not exactly domid 3");
    expect_only_failures(res, fails);

    record(f, LIVE, dm, NULL,
           (const char *const[]){ "qemu", "-xen-domid", "3", "-run-with",
                                  "user=6000004:6000004", NULL });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, FAIL,
           "the last -run-with user=6000004:6000004; domid 3's uid is "
           "6000003");

    record(f, LIVE, dm, NULL,
           (const char *const[]){ "qemu", "-xen-domid", "3",
                                  "-xen-domid-restrict", "-runas",
                                  "6000003:6000000", NULL });
    res = run(f, 0);
    expect(res, "cmdline", LIVE, PASS,
           "-xen-domid 3, -xen-domid-restrict; -runas 6000003:6000000 "
           "(root's record");
    expect(res, "seccomp", LIVE, SKIP, "says no filter was installed");
    expect(res, "chroot", LIVE, SKIP, "none asked (root's record)");
    assert_int_equal(xlreaper_audit_verdict(res), PASS);
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
    const xlreaper_audit_result *res;
    char *root;

    assert_true(asprintf(&root, "%s/qemu-root-%u", f->dir, LIVE) > 0);
    assert_int_equal(mkdir(root, 0755), 0);
    f->h.chroot_base = f->dir;

    start_dm(f, &(dm_spec){ .domid = LIVE, .chroot_dir = root });
    res = run(f, 0);
    expect(res, "chroot", LIVE, PASS, "root is ");
    expect(res, "chroot", LIVE, PASS,
           "qemu-root-3 (from chroot_base, libxl's convention)");
    stop_procs(f);

    start_dm(f, &(dm_spec){ .domid = LIVE });
    fails_only(f, "chroot", LIVE, "root is /, not ");
    free(root);
}

/* The spawn writes root's record (0600, root's), the audit takes its
 * expected values from it, and the reap removes it. */
static void test_spawn_record(void **state)
{
    fx *f = *state;
    xlreaper_spawn_plan *plan = NULL;
    const xlreaper_audit_result *res;
    char prog[512], *path;
    char *argv[] = { "fake_dm", "-xen-domid", "3", NULL };
    xlreaper_reap_result rr;
    struct stat st;
    pid_t pid;

    snprintf(prog, sizeof(prog), "%s/fake_dm", xlrt_progs_dir());
    assert_int_equal(xlreaper_spawn_plan_new(f->ctx, LIVE, prog, argv, &plan),
                     0);
    assert_int_equal(xlreaper_spawn(f->ctx, plan, 0, &pid, NULL), 0);
    xlreaper_spawn_plan_free(plan);
    f->procs[f->nprocs++] = pid;
    path = xlreaper__dmrec_path(f->ctx->cfg, LIVE);
    assert_non_null(path);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    res = run(f, 0);
    expect(res, "record", LIVE, PASS, "expected values from root's record");
    expect(res, "dm", LIVE, PASS, "(from root's record)");
    expect(res, "cmdline", LIVE, PASS, "-xen-domid 3 (root's record");
    expect(res, "seccomp", LIVE, PASS, "a seccomp filter in every thread");
    expect(res, "rlimits", LIVE, PASS, "NPROC 64/64");
    assert_int_equal(xlreaper_audit_verdict(res), PASS);

    xlreaper_reap_result_init(&rr);
    assert_int_equal(xlreaper_reap(f->ctx, NULL, LIVE, &rr), 0);
    xlreaper_reap_result_dispose(&rr);
    assert_int_equal(lstat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    free(path);
}

/* A DM not in its chroot that rewrote its argv to say "-chroot /":
 * the expected root comes from root's record, else from chroot_base,
 * never from the DM. */
static void test_lying_chroot(void **state)
{
    fx *f = *state;
    static const char *const fails[] = { "chroot", NULL };
    const xlreaper_audit_result *res;
    char *root;
    pid_t dm;

    assert_true(asprintf(&root, "%s/qemu-root-%u", f->dir, LIVE) > 0);
    assert_int_equal(mkdir(root, 0755), 0);
    f->h.chroot_base = f->dir;

    dm = start_dm(f, &(dm_spec){ .domid = LIVE,
                                 .extra = { "-chroot", "/", "-runas",
                                            "6000003:6000000" } });
    res = run(f, 0);
    expect(res, "chroot", LIVE, FAIL, "root is /, not ");
    expect(res, "chroot", LIVE, FAIL,
           "qemu-root-3 (from chroot_base, libxl's convention)");
    expect_only_failures(res, fails);

    /* Root's record names the root libxl asked for. */
    record(f, LIVE, dm, root,
           (const char *const[]){ "qemu", "-xen-domid", "3", "-chroot", root,
                                  NULL });
    res = run(f, 0);
    expect(res, "chroot", LIVE, FAIL, "(from root's record)");
    expect_only_failures(res, fails);
    stop_procs(f);

    /* In it, and recorded: a pass. */
    dm = start_dm(f, &(dm_spec){ .domid = LIVE, .chroot_dir = root });
    record(f, LIVE, dm, root,
           (const char *const[]){ "qemu", "-xen-domid", "3", "-run-with",
                                  "chroot=/elsewhere", NULL });
    res = run(f, 0);
    expect(res, "chroot", LIVE, PASS, "qemu-root-3 (from root's record)");
    free(root);
}

/* ---------- a DM that holds its own mmap lock ---------- */

typedef struct {
    bool finished;
    int status; /* of the first check about pid, -1 none */
    char name[32];
    char reason[512];
    uint64_t duration_us;
    unsigned live2_lines; /* lines about a process of domid LIVE2 */
    int live2_worst;      /* the worst status among them, -1 none */
} bounded_run;

/* The audit in a child of ours, waited for at most wait_ms: a hang
 * fails the test rather than hanging it.  What it said of pid comes
 * back, the worst line first. */
static void run_bounded(fx *f, unsigned deadline_ms, unsigned dm_timeout_ms,
                        pid_t pid, unsigned wait_ms, bounded_run *out)
{
    int p[2];
    pid_t child;
    uint64_t end;

    memset(out, 0, sizeof(*out));
    out->status = -1;
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        xlreaper_audit_opts o;
        xlreaper_audit_result res;
        bounded_run r = { .finished = true, .status = -1, .live2_worst = -1 };

        close(p[0]);
        xlreaper_audit_opts_init(&o);
        o.xenstore_timeout_ms = 500;
        o.deadline_ms = deadline_ms;
        o.dm_timeout_ms = dm_timeout_ms;
        xlreaper_audit_result_init(&res);
        if (xlreaper__audit_run(f->ctx, &o, &f->h, &res))
            _exit(1);
        for (unsigned i = 0; i < res.num; i++) {
            const xlreaper_audit_check *c = &res.checks[i];
            if (c->pid && c->domid == LIVE2) {
                r.live2_lines++;
                if ((int)c->status > r.live2_worst)
                    r.live2_worst = (int)c->status;
            }
            if (c->pid != pid || (int)c->status <= r.status ||
                c->status < XLREAPER_AUDIT_UNKNOWN)
                continue;
            r.status = (int)c->status;
            snprintf(r.name, sizeof(r.name), "%s", c->name);
            snprintf(r.reason, sizeof(r.reason), "%s", c->reason);
        }
        r.duration_us = res.duration_us;
        if (getenv("XLR_TEST_LOG"))
            dump(&res);
        _exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
    }
    close(p[1]);
    end = xlreaper__now_us() + (uint64_t)wait_ms * 1000;
    for (;;) {
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        uint64_t now = xlreaper__now_us();
        int pr;

        if (now >= end)
            break;
        pr = poll(&pfd, 1, (int)((end - now) / 1000 + 1));
        if (pr > 0) {
            if (read(p[0], out, sizeof(*out)) != sizeof(*out))
                memset(out, 0, sizeof(*out));
            break;
        }
    }
    close(p[0]);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

/*
 * A DM holding its own mmap lock (docs/facts.md F13): a DM thread maps
 * a direct-I/O FUSE file of its own while a page of it is locked by a
 * read the DM never answers, so it holds its own mmap lock and every
 * read of its cmdline blocks.
 * The audit used to read cmdline and hung for good; it must now judge
 * that DM within its deadline.  And a read that does block (one forced
 * into the reader through a test hook) is "could not check" within the
 * per-process deadline, for that process only: the reader it held is
 * killed, and a new one reads the next DM, which passes.
 */
static void test_mmap_locked_dm(void **state)
{
    fx *f = *state;
    char *fusedev, *mnt, prog[512], uid[16], line[64] = "";
    bounded_run r;
    int out[2];
    pid_t server, dm, reader;
    ssize_t n = 0;

    assert_true(asprintf(&fusedev, "%s/fuse", f->dir) > 0);
    assert_true(asprintf(&mnt, "%s/mnt", f->dir) > 0);
    /* Our own node: the host's /dev/fuse may be root's alone. */
    if (mknod(fusedev, S_IFCHR | 0666, makedev(10, 229)) < 0) {
        fprintf(stderr, "skip: no /dev/fuse node can be made here: %s\n",
                strerror(errno));
        free(fusedev);
        free(mnt);
        skip();
    }
    assert_int_equal(mkdir(mnt, 0755), 0);
    f->locker_mnt = mnt;
    /* Its DM is orphaned when the server goes: reaped by us, not by a
     * slow init, so that no zombie of the uid outlives the test. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    snprintf(prog, sizeof(prog), "%s/mmap_locker", xlrt_progs_dir());
    snprintf(uid, sizeof(uid), "%u", BASE + LIVE);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    server = fork();
    assert_true(server >= 0);
    if (server == 0) {
        dup2(out[1], 1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl(prog, prog, fusedev, mnt, uid, uid, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    f->procs[f->nprocs++] = server;
    {
        struct pollfd pfd = { .fd = out[0], .events = POLLIN };
        if (poll(&pfd, 1, 5000) == 1)
            n = read(out[0], line, sizeof(line) - 1);
    }
    close(out[0]);
    if (n <= 0 || sscanf(line, "pid %d", &dm) != 1) {
        fprintf(stderr, "skip: mmap_locker could not make the attack "
                        "(no FUSE mount here?)\n");
        free(fusedev);
        skip(); /* teardown stops it */
    }
    f->locker_dm = dm;

    /* The attack holds: its cmdline does not answer. */
    reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) {
        char path[64], buf[64];
        int fd;
        snprintf(path, sizeof(path), "/proc/%d/cmdline", dm);
        fd = open(path, O_RDONLY);
        _exit(fd >= 0 && read(fd, buf, sizeof(buf)) >= 0 ? 0 : 1);
    }
    usleep(500000);
    if (waitpid(reader, NULL, WNOHANG) == reader) {
        fprintf(stderr, "skip: the kernel answered the mmap-locked DM's "
                        "cmdline: no attack to defend against here\n");
        free(fusedev);
        skip();
    }
    kill(reader, SIGKILL); /* the wait is killable */
    waitpid(reader, NULL, 0);

    /* Judged (no_new_privs: the locker sets none) within its deadline. */
    run_bounded(f, 4000, 2000, dm, 15000, &r);
    if (!r.finished)
        fail_msg("the audit of an mmap-locked DM did not finish in 15 s");
    assert_true(r.duration_us < 4000 * 1000);
    if (r.status < (int)UNKNOWN)
        fail_msg("the mmap-locked DM (pid %d) was not reported", dm);

    /* A read that blocks, put into the reader: could not check.  A clean
     * DM of a later domain is read by the next reader. */
    f->live[f->nlive++] = LIVE2;
    start_dm(f, &(dm_spec){ .domid = LIVE2 });
    f->h.facts_first = "cmdline";
    run_bounded(f, 6000, 1000, dm, 15000, &r);
    f->h.facts_first = NULL;
    if (!r.finished)
        fail_msg("the audit did not finish in 15 s");
    assert_true(r.duration_us < 6000 * 1000);
    assert_true(r.status >= (int)UNKNOWN);
    if (!strstr(r.reason, "did not answer within") ||
        !strstr(r.reason, "a test's extra read"))
        fail_msg("pid %d: %s: \"%s\", want its /proc not answering", dm,
                 r.name, r.reason);
    if (r.live2_lines < 10 || r.live2_worst >= (int)UNKNOWN)
        fail_msg("the clean DM of domid %u after it: %u lines, worst status "
                 "%d: not read by a new reader",
                 LIVE2, r.live2_lines, r.live2_worst);

    stop_locker(f);
    free(fusedev);
}

/*
 * File locks: the kernel bounds no process's (RLIMIT_LOCKS is ignored)
 * and charges them to no memory cgroup (docs/facts.md F18).  A DM that
 * holds 20,000 on memfds is flagged, within the audit's deadline and with
 * every other check answered; one that holds a few, one of them on an
 * epoll descriptor (read last: its fdinfo takes the epoll's mutex),
 * passes with its exact count; and the limit is the config's.
 */
static void test_file_locks(void **state)
{
    fx *f = *state;
    static const char *const none[] = { NULL };
    const xlreaper_audit_result *res;
    xlreaper_audit_opts o;
    char *conf, *path;

    f->live[f->nlive++] = LIVE2;
    start_dm(f, &(dm_spec){ .domid = LIVE, .file_locks = 20000 });
    start_dm(
        f, &(dm_spec){ .domid = LIVE2, .file_locks = 10, .epoll_lock = true });
    xlreaper_audit_opts_init(&o);
    o.xenstore_timeout_ms = 500;
    o.deadline_ms = 5000;
    xlreaper_audit_result_dispose(&f->res);
    assert_int_equal(xlreaper__audit_run(f->ctx, &o, &f->h, &f->res), 0);
    res = &f->res;
    if (getenv("XLR_TEST_LOG"))
        fprintf(stderr, "audit of the flood: %.1f ms\n",
                (double)res->duration_us / 1000);
    /* Every check answered; the flood's DM the only failure. */
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        bool flood = !strcmp(c->name, "file_locks") && c->domid == LIVE;

        if (c->status == UNKNOWN || (c->status == FAIL) != flood) {
            dump(res);
            fail_msg("check %s of domid %d is %s", c->name, (int)c->domid,
                     xlreaper_audit_status_name(c->status));
        }
    }
    expect(res, "file_locks", LIVE, FAIL,
           "at least 1025 file locks on its open files (fdinfo), more "
           "than dm_max_file_locks 1024");
    expect(res, "file_locks", LIVE2, PASS,
           "11 file locks on its 5 open descriptors");
    expect(res, "deadline", D, PASS, "within the audit's deadline of 5000");
    assert_true(res->duration_us < 5000 * 1000);
    assert_int_equal(res->dms, 2);

    /* The config's limit, counted to the end: exact. */
    assert_true(asprintf(&conf,
                         "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
                         "reap_timeout_ms = 5000\nnproc_limit = 64\n"
                         "nofile_limit = 4096\n"
                         "lock_timeout_ms = 300\nchroot_base = \"%s\"\n"
                         "dm_max_file_locks = 20000\n",
                         BASE, f->dir, f->dir) > 0);
    path = xlrt_write_file(f->dir, "xl-reaper.conf", conf);
    assert_int_equal(
        xlreaper_config_load(f->ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
    free(conf);
    res = run(f, 0);
    expect_only_failures(res, none);
    expect(res, "file_locks", LIVE, PASS, "20000 file locks on its");
    expect(res, "file_locks", LIVE, PASS, "(at most dm_max_file_locks 20000)");
}

/* A DM below dm_oom_score_adj (started without the spawn, or lowered
 * where the spawn had no CAP_SYS_RESOURCE) is flagged, and only that
 * check of it; one at the configured value passes. */
static void test_oom_score_adj(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;

    f->live[f->nlive++] = LIVE2;
    start_dm(f, &(dm_spec){ .domid = LIVE, .oom_adj = "999" });
    start_dm(f, &(dm_spec){ .domid = LIVE2 });
    res = run(f, 0);
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        bool low = !strcmp(c->name, "oom_score_adj") && c->domid == LIVE;

        if (c->status == UNKNOWN || (c->status == FAIL) != low) {
            dump(res);
            fail_msg("check %s of domid %d is %s", c->name, (int)c->domid,
                     xlreaper_audit_status_name(c->status));
        }
    }
    expect(res, "oom_score_adj", LIVE, FAIL,
           "oom_score_adj 999, below dm_oom_score_adj 1000");
    expect(res, "oom_score_adj", LIVE2, PASS,
           "oom_score_adj 1000 (at least dm_oom_score_adj 1000)");
}

/* 16 processes of the uid with lower pids and no_new_privs do not hide
 * a 17th without it: every process of the uid is checked, and without
 * a record or xenstore nothing says which is the DM. */
static void test_seventeenth_process(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    bool found = false;
    pid_t last;

    for (int i = 0; i < 16; i++)
        start_dm(f, &(dm_spec){ .domid = LIVE });
    last = start_dm(f, &(dm_spec){ .domid = LIVE, .no_nnp = true });
    res = run(f, 0);
    expect(res, "dm", LIVE, PASS, "17 processes under its uid");
    for (unsigned i = 0; i < res->num; i++)
        found |= !strcmp(res->checks[i].name, "no_new_privs") &&
                 res->checks[i].pid == last && res->checks[i].status == FAIL;
    if (!found) {
        dump(res);
        fail_msg("the 17th process (pid %ld) was not judged", (long)last);
    }
    expect(res, "tenant", LIVE, FAIL, "one of 17 processes");
    assert_int_equal(xlreaper_audit_verdict(res), FAIL);
}

/* A process jailed as XSA-443's restricted pygrub: the uid, RLIMIT_NPROC
 * 0, a bounded RLIMIT_AS, its own mount, IPC and network namespaces, a
 * chroot.  It does not exec: RLIMIT_NPROC 0 forbids it. */
static pid_t start_pygrub(fx *f, uint32_t domid, const char *root, bool no_net)
{
    uid_t uid = BASE + domid;
    char ok = 0;
    int p[2];
    pid_t pid;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit zero = { 0, 0 }, as = { 1ul << 30, 1ul << 30 };

        close(p[0]);
        if (unshare(CLONE_NEWNS | CLONE_NEWIPC | (no_net ? 0 : CLONE_NEWNET)) <
                0 ||
            chroot(root) < 0 || chdir("/") < 0 ||
            setrlimit(RLIMIT_AS, &as) < 0 || syscall(SYS_setgroups, 0, NULL) ||
            syscall(SYS_setresgid, uid, uid, uid) ||
            setrlimit(RLIMIT_NPROC, &zero) < 0 ||
            syscall(SYS_setresuid, uid, uid, uid))
            _exit(1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (write(p[1], "k", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    f->procs[f->nprocs++] = pid;
    assert_int_equal(read(p[0], &ok, 1), 1);
    close(p[0]);
    return pid;
}

static void test_pygrub_tenant(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    char *root;
    pid_t dm, grub, other;

    assert_true(asprintf(&root, "%s/grub-root", f->dir) > 0);
    assert_int_equal(mkdir(root, 0700), 0);
    f->h.dm_pid = hook_dm_pid; /* xenstore reachable, no DM pid yet */

    /* While libxl builds the domain: pygrub alone. */
    grub = start_pygrub(f, LIVE, root, false);
    res = run(f, 0);
    expect(res, "tenant", LIVE, PASS, "is restricted pygrub");
    assert_int_equal(find(res, "tenant", LIVE)->pid, grub);
    assert_int_equal(xlreaper_audit_verdict(res), PASS);

    /* Once the DM runs (root's record), a pygrub left behind fails. */
    dm = start_dm(f, &(dm_spec){ .domid = LIVE });
    record(f, LIVE, dm, NULL,
           (const char *const[]){ "qemu", "-xen-domid", "3", NULL });
    res = run(f, 0);
    expect(res, "tenant", LIVE, FAIL, "DM has started");
    stop_procs(f);

    /* Shaped like it but in the host's network namespace. */
    start_pygrub(f, LIVE, root, true);
    res = run(f, 0);
    expect(res, "tenant", LIVE, FAIL, "lacks its own network namespace");
    stop_procs(f);

    /* A stranger beside the recorded DM. */
    dm = start_dm(f, &(dm_spec){ .domid = LIVE });
    record(f, LIVE, dm, NULL,
           (const char *const[]){ "qemu", "-xen-domid", "3", NULL });
    other = start_task(f, BASE + LIVE, false);
    res = run(f, 0);
    expect(res, "tenant", LIVE, FAIL, "a stranger");
    assert_int_equal(find(res, "tenant", LIVE)->pid, other);
    expect(res, "dm", LIVE, PASS, "(from root's record)");
    free(root);
}

/* ---------- the uid range ---------- */

/* One of root's helpers in passing: ids (uid, uid, 0) for 40 ms, as a
 * killer or a kernel-census probe holds them, then gone.  The 40 ms
 * start once the test has seen it (a byte on go), so that a loaded
 * host cannot make it come and go unseen. */
typedef struct {
    uid_t uid;
    int go; /* read end: one byte when the test has seen the uid */
} passing_args;

static void passing_helper(void *arg)
{
    const passing_args *a = arg;
    char b;

    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, a->uid, a->uid, 0) ||
        syscall(SYS_setresuid, a->uid, a->uid, 0))
        _exit(1);
    if (read(a->go, &b, 1) != 1)
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
    passing_args a = { .uid = BASE + DEAD };
    int go[2];
    pid_t n;

    assert_int_equal(pipe2(go, O_CLOEXEC), 0);
    a.go = go[0];
    n = xlrt_nursery_start(passing_helper, &a);
    close(go[0]);
    for (unsigned i = 0; xlrt_kernel_count(BASE + DEAD) < 1; i++) {
        assert_true(i < 10000); /* it never took the uid */
        usleep(500);
    }
    assert_int_equal(write(go[1], "g", 1), 1);
    close(go[1]);
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

/* In a child as uid: shmget a segment (its id returned), or add a key
 * to the user keyring (0), or clear that keyring (0); -1 on failure. */
enum { AS_SHM, AS_KEY, AS_CLEAR };
static long as_uid(uid_t uid, int what)
{
    int p[2];
    long v = -1;
    pid_t c;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        long r = -1;

        if (xlrt_become(uid, uid) == 0) {
            if (what == AS_SHM)
                r = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
            else if (what == AS_KEY)
                r = syscall(SYS_add_key, "user", "xlrt", "x", 1,
                            KEY_SPEC_USER_KEYRING) < 0
                        ? -1
                        : 0;
            else
                r = syscall(SYS_keyctl, KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING);
        }
        _exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
    }
    close(p[1]);
    if (read(p[0], &v, sizeof(v)) != sizeof(v))
        v = -1;
    close(p[0]);
    waitpid(c, NULL, 0);
    return v;
}

/* A dead domain's uid with no task, but a SysV segment, then a key: the
 * next DM of that domid would find them (docs/facts.md F42, F44). */
static void test_dead_objects(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    static const char *const objects[] = { "dead_objects", NULL };
    static const char *const none[] = { NULL };
    char want[128];
    long id;

    res = run(f, 0);
    expect(res, "dead_objects", D, PASS, "no dead domain's uid holds");

    id = as_uid(BASE + DEAD, AS_SHM);
    assert_true(id >= 0);
    res = run(f, 0);
    snprintf(want, sizeof(want), "first SysV shm id %ld of uid %u (domid %u",
             id, BASE + DEAD, DEAD);
    expect(res, "dead_objects", DEAD, FAIL, want);
    expect_only_failures(res, objects);
    assert_int_equal(shmctl((int)id, IPC_RMID, NULL), 0);

    assert_int_equal(as_uid(BASE + DEAD, AS_KEY), 0);
    res = run(f, 0);
    expect(res, "dead_objects", DEAD, FAIL,
           "first 1 kernel key of uid 6000007 beyond its keyrings");
    /* A live domain's own keys are its DM's business. */
    assert_int_equal(as_uid(BASE + DEAD, AS_CLEAR), 0);
    assert_int_equal(as_uid(BASE + LIVE, AS_KEY), 0);
    for (int i = 0; i < 200; i++) { /* the key collector runs apart */
        res = run(f, 0);
        if (find(res, "dead_objects", D)->status == PASS)
            break;
        usleep(10000);
    }
    expect_only_failures(res, none);
    assert_int_equal(as_uid(BASE + LIVE, AS_CLEAR), 0);
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

/* A root process that sleeps until the fixture kills it. */
static pid_t root_sleeper(fx *f)
{
    pid_t p = fork();

    assert_true(p >= 0);
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    f->procs[f->nprocs++] = p;
    return p;
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

    root = root_sleeper(f);
    f->xs_pid = root;
    res = run(f, 0);
    expect(res, "xenstore_pid", LIVE, FAIL,
           "runs as uids 0 0 0 0, not under domid 3's uid 6000003: not "
           "jailed");
    assert_int_equal(find(res, "xenstore_pid", LIVE)->pid, root);
}

/* libxl's qdisk backend of a PV guest: root, as libxl starts it, is
 * named with its role; under the DM uid it passes; absent, no line. */
static void test_qdisk_backend(void **state)
{
    fx *f = *state;
    const xlreaper_audit_result *res;
    pid_t dm, root;

    f->h.dm_pid = hook_dm_pid;
    f->h.qdisk_pid = hook_qdisk_pid;
    f->xs_domid = LIVE;
    dm = start_dm(f, &(dm_spec){ .domid = LIVE });
    f->xs_pid = dm;
    res = run(f, 0);
    for (unsigned i = 0; i < res->num; i++)
        assert_string_not_equal(res->checks[i].name, "qdisk_backend");

    f->qd_pid = dm;
    res = run(f, 0);
    expect(res, "qdisk_backend", LIVE, PASS, "runs under the DM uid");

    root = root_sleeper(f);
    f->qd_pid = root;
    res = run(f, 0);
    expect(res, "qdisk_backend", LIVE, FAIL,
           "runs as uids 0 0 0 0, not under its uid 6000003: QEMU's PV "
           "disk backend, unrestricted");
    assert_int_equal(find(res, "qdisk_backend", LIVE)->pid, root);
    assert_int_equal(xlreaper_audit_verdict(res), XLREAPER_AUDIT_FAIL);
}

/*
 * libxl 4.20 records its QEMU option probe's pid at device-model-pid
 * until the DM starts: root, by design.  Known by kernel facts (root,
 * running qemu_path, no Xen descriptor), never by its argv: the same
 * root process running another program is failed.
 */
static void test_xenstore_pid_probe(void **state)
{
    fx *f = *state;
    xlreaper_config *cfg = f->ctx->cfg;
    const xlreaper_audit_result *res;
    const char *saved = cfg->qemu_path;
    char prog[512];

    snprintf(prog, sizeof(prog), "%s/fake_dm", xlrt_progs_dir());
    f->h.dm_pid = hook_dm_pid;
    f->xs_domid = LIVE;
    start_dm(f, &(dm_spec){ .domid = LIVE }); /* the domain has its DM */
    for (int other = 0; other < 2; other++) {
        char *argv[] = { "qemu-system-i386", "-S", "-machine",
                         "none,accel=xen", NULL };
        struct stat want, got;
        pid_t probe;

        probe = fork();
        assert_true(probe >= 0);
        if (probe == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            execv(prog, argv);
            _exit(127);
        }
        f->procs[f->nprocs++] = probe;
        f->xs_pid = probe;
        /* Until it has exec'd, its exe is ours. */
        assert_int_equal(stat(prog, &want), 0);
        for (int i = 0;; i++) {
            char exe[64];
            snprintf(exe, sizeof(exe), "/proc/%ld/exe", (long)probe);
            if (stat(exe, &got) == 0 && got.st_ino == want.st_ino &&
                got.st_dev == want.st_dev)
                break;
            assert_true(i < 10000);
            usleep(500);
        }
        cfg->qemu_path = other ? "/bin/sh" : prog;
        res = run(f, 0);
        cfg->qemu_path = saved;
        if (!other)
            expect(res, "xenstore_pid", LIVE, SKIP,
                   "is libxl's QEMU option probe (by kernel facts: root, "
                   "running qemu_path");
        else
            expect(res, "xenstore_pid", LIVE, FAIL, "not jailed");
        assert_int_equal(find(res, "xenstore_pid", LIVE)->pid, probe);
    }
}

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

    /* What a host that passes says, its stderr kept apart from the
     * TAP, and a TAP cut short. */
    fake = xlrt_write_file(f->dir, "pass.sh",
                           "echo 'TAP version 13'; echo 1..2;"
                           "echo 'ok 1 - a'; echo 'a warning' >&2;"
                           "echo 'ok 2 - b';"
                           "echo '# audit: PASS: 0 violations'; exit 0\n");
    snprintf(cmd, sizeof(cmd), "/bin/sh %s", fake);
    assert_int_equal(ts(f, cmd, NULL, &out), 0);
    assert_non_null(strstr(out, "localhost (after-start): every DM jailed"));
    assert_non_null(strstr(out, "(after-start): PASS: 0 violations"));
    assert_non_null(strstr(out, "(after-start): stderr: a warning"));
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
        T(test_cmdline_from_record),
        T(test_spawn_record),
        T(test_lying_chroot),
        T(test_seventeenth_process),
        T(test_file_locks),
        T(test_oom_score_adj),
        T(test_mmap_locked_dm),
        T(test_pygrub_tenant),
        T(test_xen_descriptors),
        T(test_chroot),
        T(test_leftover_under_dead_uid),
        T(test_helper_while_kernel_untold),
        T(test_domain_born_during_audit),
        T(test_zombie_leftover),
        T(test_dead_objects),
        T(test_fix_reaps),
        T(test_task_under_pet),
        T(test_helper_in_passing),
        T(test_two_domains_uids),
        T(test_xenstore_pid_not_jailed),
        T(test_xenstore_pid_probe),
        T(test_qdisk_backend),
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
