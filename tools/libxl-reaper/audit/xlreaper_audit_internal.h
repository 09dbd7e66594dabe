/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_internal.h - the audit's private pieces: its parsers
 * of /proc text (pure, for table-driven tests), its sources of live
 * domains and DM pids, the Xen device table, and the hooks through
 * which tests stand in for Xen.  Nothing here is public.
 */
#ifndef XLREAPER_AUDIT_INTERNAL_H
#define XLREAPER_AUDIT_INTERNAL_H

#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "xlreaper_internal.h"
#include "xlreaper_host.h"
#include "xlreaper_qemu.h"
#include "xlreaper_xen.h"

/* ---------- hooks: how tests stand in for Xen ---------- */

/*
 * Every field may be NULL or 0, meaning "the real thing".  Only tests
 * set them (there is no config key for any of this): a test host has
 * no hypervisor, no xenstore and no /dev/xen.  A test-only xenstored
 * (tests/progs/fake_xenstored.c, another branch) can later replace
 * dm_pid; live_domids stays, since libxl_list_domain needs Xen.
 */
typedef struct {
    /* Live domids, instead of libxenlight or xenstore: 0 and a
     * malloc'd array, or a negative code (logged) for "no source". */
    int (*live_domids)(void *opaque, uint32_t **domids_r, unsigned *num_r);
    /* xenstore's image/device-model-pid of domid, instead of xenstore:
     * 1 and *pid_r, 0 when absent, negative when unreachable. */
    int (*dm_pid)(void *opaque, uint32_t domid, long *pid_r);
    /* libxl's /libxl/<domid>/qdisk-backend-pid, the same way (only read
     * when dm_pid is set; NULL: absent for every domain). */
    int (*qdisk_pid)(void *opaque, uint32_t domid, long *pid_r);
    /* The host's count of tasks ever created, instead of /proc/stat. */
    int (*forks)(void *opaque, uint64_t *forks_r);
    void *opaque;
    const char *xen_dev_dir;        /* instead of /dev/xen */
    const char *xenfs_dir;          /* instead of /proc/xen */
    const char *chroot_base;        /* instead of the config's chroot_base */
    uint32_t sweep_max_domid;       /* probe domids 1..this only (0: all) */
    unsigned max_passes;            /* /proc passes before giving up on a
                               * quiet one (0: the default) */
    const char *const *setid_roots; /* walk these directories, NULL
                               * ended, instead of the host's writable
                               * file systems (the "setid" check) */
    const char *facts_first;        /* the reader of a DM's /proc reads this
                               * file of it first (a read that may
                               * block, to prove the deadline) */
} xlreaper__audit_hooks;

_hidden int xlreaper__audit_run(xlreaper_ctx *ctx,
                                const xlreaper_audit_opts *opts,
                                const xlreaper__audit_hooks *hooks,
                                xlreaper_audit_result *res);

/* The "setid" check (xlreaper_audit_setid.c): every writable file
 * system, or roots (NULL ended) when not NULL.  0, _NOMEM or _FAIL. */
_hidden int xlreaper__audit_setid(xlreaper_ctx *ctx,
                                  const xlreaper_audit_opts *opts,
                                  const char *const *roots,
                                  xlreaper_audit_result *res);

/* ---------- the result ---------- */

/* Appends a check; the reason is made printable ASCII (it quotes what
 * DMs chose: names, paths, arguments).  0 or _NOMEM. */
_hidden int xlreaper__audit_add(xlreaper_audit_result *res, const char *name,
                                uint32_t domid, uid_t uid, pid_t pid,
                                xlreaper_audit_status status, const char *fmt,
                                ...) __attribute__((format(printf, 7, 8)));

/* ---------- one task, as the audit reads it ---------- */

/* Parses /proc/<pid>[/task/<tid>]/status, at->audit too.  0, or _INVAL
 * when a field the audit needs is missing or malformed. */
_hidden int xlreaper__audit_parse_status(const char *text, size_t len,
                                         xlreaper_task *at);

/* ---------- the /proc pass ---------- */

/* Which uids a pass keeps tasks of: the range base .. base + max_domid,
 * the pet, and the shared user's uid if there is one. */
typedef struct {
    uid_t base;
    uid_t pet;
    uid_t shared; /* XLREAPER_AUDIT_NO_UID if none */
} xlreaper__audit_watch;

_hidden bool xlreaper__audit_watched(const xlreaper__audit_watch *w,
                                     uid_t uid);

/*
 * One pass over /proc: every task (thread) any of whose four uids is
 * watched, appended to out.  0, _NOMEM or _FAIL.
 */
_hidden int xlreaper__audit_pass(xlreaper_ctx *ctx,
                                 const xlreaper__audit_watch *w,
                                 xlreaper_task_list *out);

/* "processes N" of /proc/stat: 1 and *forks_r for that line, else 0. */
_hidden int xlreaper__audit_parse_forks_line(const char *line,
                                             uint64_t *forks_r);
/* Reads it.  0 or _FAIL. */
_hidden int xlreaper__audit_read_forks(xlreaper_ctx *ctx, uint64_t *forks_r);

/* True when the caller is in the initial pid namespace, whose /proc
 * shows every task of the host. */
_hidden bool xlreaper__audit_init_pidns(void);

/* ---------- what a process shows of itself ---------- */

#define XLREAPER__RLIM_INF UINT64_MAX

/* The soft and hard values of resource in /proc/<pid>/limits text.
 * 0, or _INVAL (unknown resource, line missing or malformed). */
_hidden int xlreaper__audit_parse_limit(const char *text, size_t len,
                                        int resource, uint64_t *soft_r,
                                        uint64_t *hard_r);
/* "NPROC", "CORE", ... or "?" */
_hidden const char *xlreaper__audit_rlimit_name(int resource);

/* What a DM's command line says.  Pointers are into the parsed text. */
typedef struct {
    unsigned ndomid;     /* -xen-domid options seen */
    bool domid_bad;      /* one had no value or not a domid */
    bool domid_conflict; /* they disagree */
    uint32_t domid;      /* the last one (QEMU's choice) */
    bool restrict_opt;   /* -xen-domid-restrict */
    const char *chroot;  /* -chroot DIR or -run-with chroot=DIR (then in
                          * chroot_buf, ",," read as ",") */
    size_t chroot_len;
    bool chroot_run_with;
    char chroot_buf[4096];
    const char *user; /* -runas USER or -run-with user=USER (4.20+),
                          * in user_buf; the last one, as QEMU takes */
    bool user_run_with;
    unsigned nuser; /* uid switches seen */
    char user_buf[64];
    bool libxl_probe; /* exactly libxl 4.20's QEMU option probe */
    bool ambiguous;   /* an option read here follows one that may take
                       * it as its value (xlreaper_qemu_args.c) */
} xlreaper__audit_cmdline;

/* Parses NUL-separated argv text (len bytes, need not end in NUL), the
 * way QEMU would read it: libxl 4.17's -chroot/-runas and 4.20's
 * -run-with chroot=/user= alike; argv[0] is the program, and an option
 * read takes the next argument as its value, whatever it is.  Always succeeds; what it could not
 * read is flagged in out. */
_hidden void xlreaper__audit_parse_cmdline(const char *text, size_t len,
                                           xlreaper__audit_cmdline *out);

/* ---------- Xen devices ---------- */

typedef enum {
    XLREAPER__XENDEV_PRIVCMD = 0,
    XLREAPER__XENDEV_EVTCHN,
    XLREAPER__XENDEV_XENBUS,
    XLREAPER__XENDEV_XENBUS_BACKEND,
    XLREAPER__XENDEV_GNTDEV,
    XLREAPER__XENDEV_GNTALLOC,
    XLREAPER__XENDEV_HYPERCALL,
} xlreaper__xendev_kind;

typedef struct {
    xlreaper__xendev_kind kind;
    char path[PATH_MAX];
    bool chr; /* a character device: matched by st_rdev */
    dev_t rdev;
    dev_t dev; /* otherwise (xenfs files): by st_dev and st_ino */
    ino_t ino;
} xlreaper__xendev_node;

#define XLREAPER__XENDEV_MAX 16

typedef struct {
    xlreaper__xendev_node nodes[XLREAPER__XENDEV_MAX];
    unsigned num;
} xlreaper__xendevs;

_hidden const char *xlreaper__xendev_name(xlreaper__xendev_kind k);

/* Stats every Xen node under dev_dir (/dev/xen) and xenfs_dir
 * (/proc/xen) that exists; absent ones are left out. */
_hidden void xlreaper__xendevs_load(const char *dev_dir, const char *xenfs_dir,
                                    xlreaper__xendevs *d);
/* The node an open file is, or NULL. */
_hidden const xlreaper__xendev_node *
xlreaper__xendevs_match(const xlreaper__xendevs *d, const struct stat *st);

/*
 * The verdict on an open Xen descriptor of a DM of domid, from what the
 * restriction probes said (xlreaper_audit_xen.c explains them):
 * probe_err is the errno of the first ioctl, confirm_err that of
 * privcmd's IOCTL_PRIVCMD_RESTRICT(domid) or -1 when not tried.  Writes
 * the reason into why.
 */
_hidden xlreaper_audit_status xlreaper__xenfd_verdict(
    xlreaper__xendev_kind kind, int probe_err, int confirm_err, uint32_t domid,
    char *why, size_t whylen);

/*
 * Takes a copy of pid's descriptor fd (pidfd_getfd), checks it is still
 * node, and runs the restriction probes on it.  Fills *probe_err_r and
 * *confirm_err_r for xlreaper__xenfd_verdict.  0, or a positive errno
 * when no copy could be had (then the verdict is "could not check").
 */
_hidden int xlreaper__xenfd_probe(pid_t pid, int fd,
                                  const xlreaper__xendev_node *node,
                                  uint32_t domid, int *probe_err_r,
                                  int *confirm_err_r);

/* ---------- live domains and xenstore ---------- */

typedef struct {
    const char *source; /* "libxenlight", "xenstore", "hook" or NULL */
    uint32_t *domids;   /* malloc'd, sorted, no dom0 */
    unsigned num;
    char why[512]; /* when source is NULL: what was tried */
} xlreaper__audit_live;

/* Fills live from hooks, else libxenlight when a hypervisor interface
 * exists, else xenstore (with timeout_ms).  0 (source may be NULL) or
 * _NOMEM. */
_hidden int xlreaper__audit_live_domains(xlreaper_ctx *ctx,
                                         const xlreaper__audit_hooks *h,
                                         unsigned timeout_ms,
                                         xlreaper__audit_live *live);

typedef struct {
    bool reachable;
    char why[256]; /* when not */
    long *pids;    /* per domid asked: pid, 0 absent, -1 bad */
    long *qpids;   /* the same of libxl's qdisk backend */
} xlreaper__audit_dmpids;

/* Reads image/device-model-pid and libxl's qdisk-backend-pid of each
 * domid, in a thread given timeout_ms to answer.  0 or _NOMEM. */
_hidden int xlreaper__audit_dm_pids(xlreaper_ctx *ctx,
                                    const xlreaper__audit_hooks *h,
                                    unsigned timeout_ms,
                                    const uint32_t *domids, unsigned num,
                                    xlreaper__audit_dmpids *out);

/* ---------- what the kernel says of one process (audit_facts.c) ---------- */

enum {
    XLREAPER__FACTS_HOOK = 0,
    XLREAPER__FACTS_STAT,
    XLREAPER__FACTS_THREADS,
    XLREAPER__FACTS_LIMITS,
    XLREAPER__FACTS_LINKS,
    XLREAPER__FACTS_FDS,
    XLREAPER__FACTS_LOCKS,
    XLREAPER__FACTS_OOM,
};

/* Why the count of a DM's file locks stopped short of its end. */
enum {
    XLREAPER__LOCKS_CUT_NONE = 0,
    XLREAPER__LOCKS_CUT_LIMIT, /* it passed dm_max_file_locks */
    XLREAPER__LOCKS_CUT_BYTES, /* the reader's byte bound */
};

enum {
    XLREAPER__LINK_ROOT = 0,
    XLREAPER__LINK_EXE,
    XLREAPER__LINK_MNT,
    XLREAPER__LINK_IPC,
    XLREAPER__LINK_NET,
    XLREAPER__LINK_USER,
    XLREAPER__LINKS,
};

typedef struct {
    int fd;
    struct stat st; /* mode, rdev, dev, ino only */
    char target[256];
} xlreaper__facts_fd;

typedef struct {
    bool read;       /* a reader was run */
    bool done;       /* the reader read everything */
    int32_t end_pid; /* the pid its last frame named */
    bool timed_out;  /* it missed its deadline and was killed */
    int section;     /* the section it was in last (-1: none) */
    uint64_t elapsed_us;
    bool have_start;
    unsigned long long start; /* field 22 of stat */
    xlreaper_task_list threads;
    bool threads_done; /* every thread listed was sent */
    int threads_err;
    bool have_limits;
    int limits_err;
    char *limits;
    size_t limits_len;
    bool have_oom; /* oom_score_adj read (or oom_err) */
    int oom_err;
    int oom_adj;
    struct {
        bool have;
        int err;
        dev_t dev;
        ino_t ino;
    } link[XLREAPER__LINKS];
    xlreaper__facts_fd *xenfds; /* descriptors open to a Xen node */
    unsigned nxen, xencap;
    unsigned nfds; /* descriptors listed */
    bool fds_done;
    int fds_err;
    uint64_t locks;     /* "lock:" lines of its fdinfo counted so far */
    int32_t locks_fd;   /* the last descriptor found with locks */
    unsigned locks_fds; /* descriptors read */
    int locks_cut;      /* XLREAPER__LOCKS_CUT_* */
    int locks_err;
    bool locks_done; /* the count came to an end (see locks_cut) */
} xlreaper__facts;

/* The forked child that reads /proc for an audit; all zero: none yet. */
typedef struct {
    pid_t pid;                   /* the child, or 0 */
    int fd;                      /* our end of its socket (pid > 0) */
    const xlreaper__xendevs *xd; /* the Xen nodes it was started with */
    uint32_t max_locks; /* count a DM's file locks until they pass this
                         * (0: to the byte bound); the caller sets it */
} xlreaper__facts_reader;

/*
 * Reads what the kernel says of pid through the reader (started if
 * need be), until deadline_us (first: a test's extra file to read
 * before, or NULL).  What arrived in time is in *fc
 * (xlreaper__facts_dispose).  A reader that missed the deadline is
 * killed; the next call starts another.  0 (even on a timeout: see
 * fc->timed_out), _NOMEM or _FAIL.
 */
_hidden int xlreaper__facts_read(xlreaper_ctx *ctx, xlreaper__facts_reader *rd,
                                 pid_t pid, const xlreaper__xendevs *xd,
                                 const char *first, uint64_t deadline_us,
                                 xlreaper__facts *fc);
/* Ends the reader, if any (idempotent). */
_hidden void xlreaper__facts_reader_stop(xlreaper_ctx *ctx,
                                         xlreaper__facts_reader *rd);
_hidden void xlreaper__facts_dispose(xlreaper__facts *fc);
_hidden const char *xlreaper__facts_section_name(int section);

/* ---------- one audit run, shared by its scopes ---------- */

typedef struct {
    xlreaper_ctx *ctx;
    const xlreaper_config *cfg;
    const xlreaper_audit_opts *opts;
    const xlreaper__audit_hooks *h;
    xlreaper_audit_result *res;
    unsigned live_cap; /* room in res->live */
    xlreaper__audit_watch w;
    bool live_known;
    xlreaper_task_list tasks;      /* the last (quiet, if any) pass */
    xlreaper__audit_dmpids dmpids; /* per res->live[i] */
    xlreaper__xendevs xd;
    xlreaper__facts_reader reader; /* reads every DM's /proc */
    struct {
        bool have;
        dev_t dev;
        ino_t ino;
    } own_ns[XLREAPER__LINKS]; /* the audit's own root, mnt, ipc, net,
                                * user (root's: the host's) */
    uint64_t deadline_us;      /* the whole audit's */
    unsigned deadline_ms;
} xlreaper__audit;

#define XLREAPER__AUDIT_ADD(a, name, d, u, p, st, ...)                        \
    xlreaper__audit_add((a)->res, (name), (d), (u), (p), (st), __VA_ARGS__)

/* What a DM process is expected to be, and where that came from. */
typedef struct {
    const char *source;   /* "root's record", or "the config and libxl's
                          * conventions" */
    xlreaper__dmrec *rec; /* NULL without a (live, trusted) record */
    char root[PATH_MAX];  /* "" none asked */
    const char *root_from;
} xlreaper__audit_expect;

/* One process of a live domain's uid, being checked. */
typedef struct {
    pid_t pid;
    uint32_t domid;
    uid_t uid;
    gid_t gid;
    xlreaper__facts facts;
    const xlreaper__audit_expect *exp;
} xlreaper__audit_dm;

typedef enum {
    XLREAPER__SCOPE_HOST = 0, /* once per audit */
    XLREAPER__SCOPE_DOMAIN,   /* per live domain */
    XLREAPER__SCOPE_DM,       /* per DM process of a live domain */
    XLREAPER__SCOPE_DEAD,     /* the dead domains' uids */
} xlreaper__audit_scope;

/* A row of the table of checks (xlreaper_audit.c): what a line of the
 * result is called, where it applies, what makes it, and what it
 * proves.  fn is NULL for lines another row makes. */
typedef struct {
    const char *name;
    xlreaper__audit_scope scope;
    int (*fn)(xlreaper__audit *a, xlreaper__audit_dm *d);
    const char *summary;
} xlreaper__audit_check_def;

_hidden const xlreaper__audit_check_def *xlreaper__audit_checks(unsigned *n);
_hidden const char *xlreaper__audit_scope_name(xlreaper__audit_scope s);

/* True once the whole audit's deadline has passed; the caller then adds
 * a line "could not check" for what it skips. */
_hidden bool xlreaper__audit_late(const xlreaper__audit *a);

/* The live DMs' scope (xlreaper_audit_dm.c): every process of every
 * live domain's uid. */
_hidden int xlreaper__audit_domains(xlreaper__audit *a,
                                    xlreaper__audit_dm *unused);
/* Per DM process, the rows of scope DM. */
_hidden int xlreaper__audit_dm_ids(xlreaper__audit *a, xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_caps(xlreaper__audit *a, xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_groups(xlreaper__audit *a,
                                      xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_nnp(xlreaper__audit *a, xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_seccomp(xlreaper__audit *a,
                                       xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_cmdline(xlreaper__audit *a,
                                       xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_limits(xlreaper__audit *a,
                                      xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_ns(xlreaper__audit *a, xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_userns(xlreaper__audit *a,
                                      xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_chroot(xlreaper__audit *a,
                                      xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_xen_fds(xlreaper__audit *a,
                                       xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_file_locks(xlreaper__audit *a,
                                          xlreaper__audit_dm *d);
_hidden int xlreaper__audit_dm_oom(xlreaper__audit *a, xlreaper__audit_dm *d);

/* The dead uids' scope (xlreaper_audit_dead.c). */
_hidden int xlreaper__audit_idle_pet(xlreaper__audit *a,
                                     xlreaper__audit_dm *unused);
_hidden int xlreaper__audit_idle_base(xlreaper__audit *a,
                                      xlreaper__audit_dm *unused);
_hidden int xlreaper__audit_idle_shared(xlreaper__audit *a,
                                        xlreaper__audit_dm *unused);
_hidden int xlreaper__audit_dead_uids(xlreaper__audit *a,
                                      xlreaper__audit_dm *unused);
/* Keys and SysV IPC objects of dead domains' uids
 * (xlreaper_audit_objects.c). */
_hidden int xlreaper__audit_dead_objects(xlreaper__audit *a,
                                         xlreaper__audit_dm *unused);

/* Helpers both scopes use (xlreaper_audit.c). */
_hidden bool xlreaper__audit_is_live(const xlreaper__audit *a, uint32_t domid);
_hidden uint32_t xlreaper__audit_uid_domid(const xlreaper__audit *a,
                                           uid_t uid);
_hidden uint32_t xlreaper__audit_task_domid(const xlreaper__audit *a,
                                            const xlreaper_task *t);
_hidden bool xlreaper__audit_task_has_uid(const xlreaper_task *t, uid_t uid);
_hidden int xlreaper__audit_cmp_u32(const void *a, const void *b);

#endif /* XLREAPER_AUDIT_INTERNAL_H */
