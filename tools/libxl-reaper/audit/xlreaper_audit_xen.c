/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_xen.c - what the audit asks of Xen: which domains are
 * live, which pid xenstore says is each one's DM, and whether a DM's
 * open Xen descriptors are restricted.
 *
 * Restriction, seen from outside.  Xen up to 4.20 shipped a checker
 * (tools/tests/depriv/depriv-fd-checker.c, removed in 4.21) that was
 * handed a DM's descriptor (stolen with fishdescriptor) and tried a real
 * operation on it: privcmd had to refuse a sysctl hypercall, evtchn to
 * bind an unbound port and to bind and signal an interdomain channel,
 * gntdev a grant copy.  Those operations do things: they bind ports on
 * the DM's own evtchn instance and send it a spurious event, and they
 * need a hypervisor; and the checker is gone from current Xen.
 *
 * Restriction is not visible in /proc: fdinfo of privcmd and evtchn
 * shows only pos, flags, mnt_id and ino.  What the audit does instead:
 * it takes a copy of the open file with pidfd_getfd(2) (Linux 5.6; root
 * passes its ptrace check) and asks the driver in a way that cannot
 * change anything, relying on the order of its checks (Linux
 * drivers/xen/privcmd.c and evtchn.c, since 4.11):
 *
 *   privcmd  IOCTL_PRIVCMD_HYPERCALL with a NULL argument: a restricted
 *            file answers EPERM before reading the argument, an
 *            unrestricted one EFAULT on reading it; no hypercall is made
 *            either way.  After EPERM, IOCTL_PRIVCMD_RESTRICT(domid)
 *            answers 0 when the file is restricted to the DM's own
 *            domid and EINVAL for another one; on a restricted file it
 *            only compares, so this too changes nothing.
 *   evtchn   IOCTL_EVTCHN_BIND_VIRQ with a NULL argument: EACCES when
 *            restricted, EFAULT when not; nothing is bound.  To which
 *            domid it is restricted cannot be learnt without binding.
 *   xenbus   (/dev/xen/xenbus, /proc/xen/xenbus): xenstore has no
 *            restriction; a restricted QEMU dup2()s /dev/null over its
 *            xenstore descriptor (xentoolcore__restrict_by_dup2_null), so
 *            any open one is a violation.
 *   gntdev, gntalloc, hypercall: Linux has no restriction for these;
 *            they are reported, not judged.
 *
 * A descriptor on a node that answers otherwise (ENOTTY: not Xen's
 * driver) is "not shown to be restricted": a violation, since the
 * audit's burden is to show each one restricted.  What stays out of
 * reach: a xenstore connection over the unix socket (a socket, not a
 * Xen node; its peer needs sock_diag), grant mappings a DM already
 * holds, and the memory it mapped while unrestricted.
 *
 * A node is recognised by what it is, not by its name: the device
 * numbers of each character node under /dev/xen (and the device and
 * inode of the xenfs files under /proc/xen), stat()ed at audit time,
 * compared with what each descriptor of a DM points at.  So a node
 * opened before a chroot, or through another path, is still found.
 * Tests point the directories elsewhere through the internal hooks.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* xen.h needs <stdint.h> first, and privcmd.h needs domid_t. */
#include <xen/xen.h>
#include <xen/sys/evtchn.h>
#include <xen/sys/privcmd.h>

#include <libxl.h>
#include <xenstore.h>

#include "xlreaper_audit_internal.h"

#define XEN_DEV_DIR "/dev/xen"
#define XENFS_DIR "/proc/xen"

/* ---------- the device table ---------- */

static const struct {
    const char *name;
    xlreaper__xendev_kind kind;
    bool xenfs; /* under /proc/xen rather than /dev/xen */
} known_nodes[] = {
    { "privcmd", XLREAPER__XENDEV_PRIVCMD, false },
    { "evtchn", XLREAPER__XENDEV_EVTCHN, false },
    { "xenbus", XLREAPER__XENDEV_XENBUS, false },
    { "xenbus_backend", XLREAPER__XENDEV_XENBUS_BACKEND, false },
    { "gntdev", XLREAPER__XENDEV_GNTDEV, false },
    { "gntalloc", XLREAPER__XENDEV_GNTALLOC, false },
    { "hypercall", XLREAPER__XENDEV_HYPERCALL, false },
    { "privcmd", XLREAPER__XENDEV_PRIVCMD, true },
    { "xenbus", XLREAPER__XENDEV_XENBUS, true },
    { "xenbus_backend", XLREAPER__XENDEV_XENBUS_BACKEND, true },
};

#define NUM_KNOWN (sizeof(known_nodes) / sizeof(known_nodes[0]))

const char *xlreaper__xendev_name(xlreaper__xendev_kind k)
{
    switch (k) {
    case XLREAPER__XENDEV_PRIVCMD: return "privcmd";
    case XLREAPER__XENDEV_EVTCHN: return "evtchn";
    case XLREAPER__XENDEV_XENBUS: return "xenbus";
    case XLREAPER__XENDEV_XENBUS_BACKEND: return "xenbus_backend";
    case XLREAPER__XENDEV_GNTDEV: return "gntdev";
    case XLREAPER__XENDEV_GNTALLOC: return "gntalloc";
    case XLREAPER__XENDEV_HYPERCALL: return "hypercall";
    }
    return "?";
}

void xlreaper__xendevs_load(const char *dev_dir, const char *xenfs_dir,
                            xlreaper__xendevs *d)
{
    d->num = 0;
    for (size_t i = 0; i < NUM_KNOWN && d->num < XLREAPER__XENDEV_MAX; i++) {
        xlreaper__xendev_node *n = &d->nodes[d->num];
        struct stat st;

        snprintf(n->path, sizeof(n->path), "%s/%s",
                 known_nodes[i].xenfs ? xenfs_dir : dev_dir,
                 known_nodes[i].name);
        if (stat(n->path, &st) < 0)
            continue;
        n->kind = known_nodes[i].kind;
        n->chr = S_ISCHR(st.st_mode);
        n->rdev = st.st_rdev;
        n->dev = st.st_dev;
        n->ino = st.st_ino;
        d->num++;
    }
}

static bool node_matches(const xlreaper__xendev_node *n, const struct stat *st)
{
    return n->chr ? S_ISCHR(st->st_mode) && st->st_rdev == n->rdev
                  : st->st_dev == n->dev && st->st_ino == n->ino;
}

const xlreaper__xendev_node *
xlreaper__xendevs_match(const xlreaper__xendevs *d, const struct stat *st)
{
    for (unsigned i = 0; i < d->num; i++)
        if (node_matches(&d->nodes[i], st))
            return &d->nodes[i];
    return NULL;
}

/* ---------- restriction ---------- */

xlreaper_audit_status xlreaper__xenfd_verdict(xlreaper__xendev_kind kind,
                                              int probe_err, int confirm_err,
                                              uint32_t domid, char *why,
                                              size_t whylen)
{
    switch (kind) {
    case XLREAPER__XENDEV_PRIVCMD:
        if (probe_err == EPERM && confirm_err == 0) {
            snprintf(why, whylen, "restricted to domid %u", domid);
            return XLREAPER_AUDIT_PASS;
        }
        if (probe_err == EPERM && confirm_err == EINVAL) {
            snprintf(why, whylen, "restricted, but to another domid than %u",
                     domid);
            return XLREAPER_AUDIT_FAIL;
        }
        if (probe_err == EPERM) {
            snprintf(why, whylen, "restricted; checking the domid failed (%s)",
                     strerror(confirm_err));
            return XLREAPER_AUDIT_UNKNOWN;
        }
        if (probe_err == EFAULT) {
            snprintf(why, whylen,
                     "NOT restricted: it would make any hypercall");
            return XLREAPER_AUDIT_FAIL;
        }
        break;
    case XLREAPER__XENDEV_EVTCHN:
        if (probe_err == EACCES) {
            snprintf(why, whylen,
                     "restricted (to which domid is not visible from "
                     "outside)");
            return XLREAPER_AUDIT_PASS;
        }
        if (probe_err == EFAULT) {
            snprintf(why, whylen,
                     "NOT restricted: it would bind any event channel");
            return XLREAPER_AUDIT_FAIL;
        }
        break;
    case XLREAPER__XENDEV_XENBUS:
    case XLREAPER__XENDEV_XENBUS_BACKEND:
        snprintf(why, whylen,
                 "an open xenstore device: a restricted DM replaces it "
                 "with /dev/null, as xenstore has no restriction");
        return XLREAPER_AUDIT_FAIL;
    case XLREAPER__XENDEV_GNTDEV:
    case XLREAPER__XENDEV_GNTALLOC:
    case XLREAPER__XENDEV_HYPERCALL:
        snprintf(why, whylen,
                 "open; Linux has no restriction for it (reported, not "
                 "judged)");
        return XLREAPER_AUDIT_SKIP;
    }
    snprintf(why, whylen,
             "not shown to be restricted: the node does not answer as "
             "Xen's %s driver (%s)",
             xlreaper__xendev_name(kind),
             probe_err ? strerror(probe_err) : "the probe succeeded");
    return XLREAPER_AUDIT_FAIL;
}

/* Nothing in the probes may change the file: see the top of the file. */
static void probe_file(int fd, xlreaper__xendev_kind kind, uint32_t domid,
                       int *probe_err_r, int *confirm_err_r)
{
    domid_t dom = (domid_t)domid;

    *probe_err_r = 0;
    *confirm_err_r = -1;
    switch (kind) {
    case XLREAPER__XENDEV_PRIVCMD:
        if (ioctl(fd, IOCTL_PRIVCMD_HYPERCALL, NULL) < 0)
            *probe_err_r = errno;
        /* Only on a restricted file: on an unrestricted one RESTRICT
         * would restrict it. */
        if (*probe_err_r == EPERM)
            *confirm_err_r =
                ioctl(fd, IOCTL_PRIVCMD_RESTRICT, &dom) < 0 ? errno : 0;
        break;
    case XLREAPER__XENDEV_EVTCHN:
        if (ioctl(fd, IOCTL_EVTCHN_BIND_VIRQ, NULL) < 0)
            *probe_err_r = errno;
        break;
    default: break;
    }
}

int xlreaper__xenfd_probe(pid_t pid, int fd, const xlreaper__xendev_node *node,
                          uint32_t domid, int *probe_err_r, int *confirm_err_r)
{
    struct statx sx;
    struct stat st;
    int pidfd, copy, err;

    *probe_err_r = 0;
    *confirm_err_r = -1;
    if (node->kind != XLREAPER__XENDEV_PRIVCMD &&
        node->kind != XLREAPER__XENDEV_EVTCHN)
        return 0; /* judged by kind alone */

    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return errno;
    copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    err = errno;
    close(pidfd);
    if (copy < 0)
        return err;
    /* The pid or the descriptor number may have been reused since the
     * fd directory was read: probe only the node it was.  Cached
     * attributes only: a FUSE file the DM serves would not answer. */
    if (statx(copy, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
              STATX_TYPE | STATX_INO, &sx) < 0) {
        close(copy);
        return ESTALE;
    }
    memset(&st, 0, sizeof(st));
    st.st_mode = sx.stx_mode;
    st.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
    st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    st.st_ino = sx.stx_ino;
    if (!node_matches(node, &st)) {
        close(copy);
        return ESTALE;
    }
    probe_file(copy, node->kind, domid, probe_err_r, confirm_err_r);
    close(copy);
    return 0;
}

/* ---------- xenstore, with a deadline ---------- */

/* What the reads are given and what they found; the audit waits for
 * them at most timeout_ms (xlreaper__xs_bounded). */
typedef struct {
    /* in */
    bool list;        /* list /local/domain too */
    uint32_t *domids; /* owned; with list, replaced by the list */
    unsigned num;
    /* out */
    int err;          /* errno of the step that failed, or 0 */
    const char *step; /* static */
    long *pids;
    long *qpids;
} xs_job;

static void job_free(void *data)
{
    xs_job *j = data;

    free(j->domids);
    free(j->pids);
    free(j->qpids);
    free(j);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* In the worker: /local/domain's entries that are domids of domUs. */
static int xs_list(struct xs_handle *h, xs_job *j)
{
    unsigned n = 0, k = 0;
    char **ents = xs_directory(h, XBT_NULL, "/local/domain", &n);

    if (!ents)
        return errno ? errno : EIO;
    free(j->domids);
    j->domids = calloc(n ? n : 1, sizeof(uint32_t));
    if (!j->domids) {
        free(ents);
        return ENOMEM;
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned long v;
        if (!xlreaper__parse_ulong(ents[i], strlen(ents[i]),
                                   xlreaper_max_domid(), &v) &&
            v != 0)
            j->domids[k++] = (uint32_t)v;
    }
    free(ents);
    qsort(j->domids, k, sizeof(uint32_t), cmp_u32);
    j->num = k;
    return 0;
}

/* In the worker: one pid root recorded (path's format takes the
 * domid); its value is xenstore's, which only dom0 can write, but is
 * parsed as strictly as anything else. */
static int xs_pid(struct xs_handle *h, const char *fmt, uint32_t domid,
                  long *pid_r)
{
    char path[64];
    unsigned len = 0;
    unsigned long v;
    char *val;

    snprintf(path, sizeof(path), fmt, domid);
    val = xs_read(h, XBT_NULL, path, &len);
    if (!val) {
        if (errno == ENOENT) {
            *pid_r = 0;
            return 0;
        }
        return errno ? errno : EIO;
    }
    *pid_r =
        xlreaper__parse_ulong(val, len, INT32_MAX, &v) || !v ? -1 : (long)v;
    free(val);
    return 0;
}

static void xs_reads(struct xs_handle *h, void *data)
{
    xs_job *j = data;
    int err = 0;

    if (!h) {
        err = errno;
        j->step = "connecting";
        goto out;
    }
    if (j->list) {
        if ((err = xs_list(h, j)))
            j->step = "listing /local/domain";
        goto out;
    }
    j->pids = calloc(j->num ? j->num : 1, sizeof(long));
    j->qpids = calloc(j->num ? j->num : 1, sizeof(long));
    if (!j->pids || !j->qpids) {
        err = ENOMEM;
        j->step = "allocating";
        goto out;
    }
    for (unsigned i = 0; i < j->num && !err; i++)
        if ((err = xs_pid(h, "/local/domain/%u/image/device-model-pid",
                          j->domids[i], &j->pids[i])))
            j->step = "reading device-model-pid";
    /* libxl_dm.c's libxl__spawn_qemu_xenpv_backend records it there. */
    for (unsigned i = 0; i < j->num && !err; i++)
        if ((err = xs_pid(h, "/libxl/%u/qdisk-backend-pid", j->domids[i],
                          &j->qpids[i])))
            j->step = "reading qdisk-backend-pid";

out:
    j->err = err;
}

/*
 * Runs the reads: 0 and *job_r (the caller frees it) when they finished
 * in time, whatever they found; 1 on timeout; or _NOMEM/_FAIL.
 */
static int xs_run(xlreaper_ctx *ctx, bool list, const uint32_t *domids,
                  unsigned num, unsigned timeout_ms, xs_job **job_r)
{
    xs_job *j;
    int rc;

    j = calloc(1, sizeof(*j));
    if (!j)
        return XLREAPER_ERROR_NOMEM;
    j->domids = calloc(num ? num : 1, sizeof(uint32_t));
    if (!j->domids) {
        free(j);
        return XLREAPER_ERROR_NOMEM;
    }
    if (num)
        memcpy(j->domids, domids, num * sizeof(uint32_t));
    j->num = num;
    j->list = list;

    rc = xlreaper__xs_bounded(XS_OPEN_READONLY, timeout_ms, xs_reads, j,
                              job_free);
    if (rc == -ETIMEDOUT)
        return 1; /* j is the worker's now */
    if (rc) {
        job_free(j);
        if (rc == -ENOMEM)
            return XLREAPER_ERROR_NOMEM;
        LOGEV(ERROR, -rc, "starting the xenstore reader");
        return XLREAPER_ERROR_FAIL;
    }
    *job_r = j;
    return 0;
}

int xlreaper__audit_dm_pids(xlreaper_ctx *ctx, const xlreaper__audit_hooks *h,
                            unsigned timeout_ms, const uint32_t *domids,
                            unsigned num, xlreaper__audit_dmpids *out)
{
    xs_job *j = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    out->pids = calloc(num ? num : 1, sizeof(long));
    out->qpids = calloc(num ? num : 1, sizeof(long));
    if (!out->pids || !out->qpids)
        return XLREAPER_ERROR_NOMEM;

    if (h && h->dm_pid) {
        out->reachable = true;
        for (unsigned i = 0; i < num; i++) {
            rc = h->dm_pid(h->opaque, domids[i], &out->pids[i]);
            if (rc >= 0 && h->qdisk_pid &&
                h->qdisk_pid(h->opaque, domids[i], &out->qpids[i]) <= 0)
                out->qpids[i] = 0;
            if (rc < 0) {
                out->reachable = false;
                snprintf(out->why, sizeof(out->why),
                         "the test hook says it is unreachable");
                break;
            }
            if (rc == 0)
                out->pids[i] = 0;
        }
        return 0;
    }

    rc = xs_run(ctx, false, domids, num, timeout_ms, &j);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        snprintf(out->why, sizeof(out->why),
                 "xenstore did not answer within %u ms", timeout_ms);
        return 0;
    }
    /* xs_run sets j whenever it returns 0; checked for gcc -fanalyzer. */
    if (!j)
        return XLREAPER_ERROR_FAIL;
    if (j->err) {
        snprintf(out->why, sizeof(out->why), "xenstore: %s: %s", j->step,
                 strerror(j->err));
    } else {
        out->reachable = true;
        memcpy(out->pids, j->pids, num * sizeof(long));
        memcpy(out->qpids, j->qpids, num * sizeof(long));
    }
    job_free(j);
    return 0;
}

/* ---------- live domains ---------- */

static bool hypervisor_interface(void)
{
    return access(XEN_DEV_DIR "/privcmd", F_OK) == 0 ||
           access(XENFS_DIR "/privcmd", F_OK) == 0;
}

/*
 * A dying domain is not live: libxl kills the DM before it asks Xen to
 * destroy the domain, and a DM that still runs is just what keeps a
 * dying domain's memory pinned.  A shut-down but not destroyed domain
 * (on_poweroff=preserve) is live: its DM may stay.
 */
static int from_libxl(xlreaper_ctx *ctx, xlreaper__audit_live *live)
{
    libxl_ctx *lctx = NULL;
    libxl_dominfo *info;
    int n = 0, r;

    r = libxl_ctx_alloc(&lctx, LIBXL_VERSION, 0, ctx->lg);
    if (r) {
        snprintf(live->why, sizeof(live->why),
                 "libxenlight: libxl_ctx_alloc failed (%d)", r);
        return 1;
    }
    info = libxl_list_domain(lctx, &n);
    if (!info) {
        snprintf(live->why, sizeof(live->why),
                 "libxenlight: libxl_list_domain failed");
        libxl_ctx_free(lctx);
        return 1;
    }
    live->domids = calloc(n ? (size_t)n : 1, sizeof(uint32_t));
    if (!live->domids) {
        libxl_dominfo_list_free(info, n);
        libxl_ctx_free(lctx);
        return XLREAPER_ERROR_NOMEM;
    }
    for (int i = 0; i < n; i++)
        if (info[i].domid != 0 && info[i].domid <= xlreaper_max_domid() &&
            !info[i].dying)
            live->domids[live->num++] = info[i].domid;
    libxl_dominfo_list_free(info, n);
    libxl_ctx_free(lctx);
    live->source = "libxenlight";
    return 0;
}

int xlreaper__audit_live_domains(xlreaper_ctx *ctx,
                                 const xlreaper__audit_hooks *h,
                                 unsigned timeout_ms,
                                 xlreaper__audit_live *live)
{
    char tried[256] = "";
    xs_job *j = NULL;
    int rc;

    memset(live, 0, sizeof(*live));
    if (h && h->live_domids) {
        rc = h->live_domids(h->opaque, &live->domids, &live->num);
        if (rc) {
            snprintf(live->why, sizeof(live->why),
                     "the test hook gave no live domains");
            return 0;
        }
        live->source = "hook";
        goto sort;
    }

    if (hypervisor_interface()) {
        rc = from_libxl(ctx, live);
        if (rc <= 0) {
            if (rc < 0)
                return rc;
            goto sort;
        }
        snprintf(tried, sizeof(tried), "%.200s; ", live->why);
    } else {
        snprintf(tried, sizeof(tried),
                 "no hypervisor interface (%s/privcmd, %s/privcmd); ",
                 XEN_DEV_DIR, XENFS_DIR);
    }

    /* xenstore lists what the toolstack wrote; without a hypervisor to
     * ask, it is the best there is (a destroyed domain's directory is
     * removed by libxl). */
    rc = xs_run(ctx, true, NULL, 0, timeout_ms, &j);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        snprintf(live->why, sizeof(live->why),
                 "%sxenstore did not answer within %u ms", tried, timeout_ms);
        return 0;
    }
    if (!j) /* as in xlreaper__audit_dm_pids */
        return XLREAPER_ERROR_FAIL;
    if (j->err) {
        snprintf(live->why, sizeof(live->why), "%sxenstore: %s: %s", tried,
                 j->step, strerror(j->err));
        job_free(j);
        return 0;
    }
    live->domids = j->domids;
    live->num = j->num;
    j->domids = NULL;
    job_free(j);
    live->source = "xenstore";

sort:
    qsort(live->domids, live->num, sizeof(uint32_t), cmp_u32);
    return 0;
}
