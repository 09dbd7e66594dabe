/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_vkbd.c - add_dm_restrict: take out the PV keyboard (vkbd)
 * libxl gave the domain, which a QEMU under -xen-domid-restrict cannot
 * serve, before that QEMU starts.
 *
 * QEMU serves vkbd as a legacy PV backend, through xenstore.
 * -xen-domid-restrict makes QEMU call xentoolcore_restrict_all() once
 * its machine is set up, and libxenstore "restricts" a handle by
 * dup2()ing /dev/null over its socket: from then on QEMU has no
 * xenstore.  The backend QEMU found at start (libxl writes it before it
 * starts the DM) then reads nothing on the next watch event and is
 * deleted; QEMU 10 cannot unplug it (a legacy backend became a dynamic
 * sysbus device, which is not hotpluggable), its ID stays, and the next
 * queued event creates it again: "Duplicate device ID 'xen-vkbd-0'",
 * QEMU exits and the domain is not created.  QEMU 7.2 unplugs it and
 * goes on with a vkbd that never connects.  Either way the device is
 * dead.  xl users say vkb_device = 0; libvirt sets no vkb_device (libxl
 * defaults it on for HVM), so a toolstack that asked no restriction
 * gets it, and only here, after libxl wrote it and before QEMU reads
 * it, can it go.
 *
 * What is removed is what libxl writes for vkb_device = 1 and not for
 * 0, per device QEMU would find under backend/vkbd/<domid> (the path it
 * scans, relative to our domain): the backend, the frontend it names
 * if that is exactly /local/domain/<domid>/device/vkbd/<devid>, and
 * libxl's /libxl/<domid>/device/vkbd/<devid>, in one transaction.  A
 * device whose frontend is anything else is left alone.  libxl then
 * sees no vkbd (its saved configuration keeps only the devices
 * xenstore has), as with vkb_device = 0.
 *
 * Not a security boundary, and never fatal: xenstore answers within
 * XS_TIMEOUT_MS (xlreaper__xs_bounded) or the DM is started without
 * the change (QEMU, which needs xenstored too, then says what is wrong).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "xlreaper_xen.h"

#define XS_TIMEOUT_MS 5000
#define XS_TRIES 5

typedef struct {
    uint32_t domid;
    int err;           /* errno of the step that failed, or 0 */
    const char *step;  /* static */
    char removed[128]; /* the devids removed, " 0 1" */
    char kept[128];    /* the devids left, with another frontend */
} vkbd_job;

static void note(char *buf, size_t size, const char *devid)
{
    size_t n = strlen(buf);

    snprintf(buf + n, size - n, " %s", devid);
}

/* One device, in transaction t: 1 removed, 0 left alone, or -1. */
static int drop_one(struct xs_handle *h, xs_transaction_t t, uint32_t domid,
                    const char *be, const char *devid)
{
    char path[256], want[128];
    unsigned len = 0;
    char *fe;
    bool ours;

    snprintf(path, sizeof(path), "%s/%s/frontend", be, devid);
    snprintf(want, sizeof(want), "/local/domain/%u/device/vkbd/%s", domid,
             devid);
    fe = xs_read(h, t, path, &len);
    if (!fe && errno != ENOENT)
        return -1;
    ours = fe && len == strlen(want) && !memcmp(fe, want, len);
    free(fe);
    if (!ours)
        return 0;
    snprintf(path, sizeof(path), "/libxl/%u/device/vkbd/%s", domid, devid);
    if (!xs_rm(h, t, want) || !xs_rm(h, t, path))
        return -1;
    snprintf(path, sizeof(path), "%s/%s", be, devid);
    return xs_rm(h, t, path) ? 1 : -1;
}

/* One transaction: 0, EAGAIN to try again, or an errno. */
static int drop_all(struct xs_handle *h, vkbd_job *j)
{
    char be[64];
    unsigned n = 0;
    xs_transaction_t t;
    char **devs;
    int err = 0;

    j->removed[0] = j->kept[0] = '\0';
    snprintf(be, sizeof(be), "backend/vkbd/%u", j->domid);
    t = xs_transaction_start(h);
    if (t == XBT_NULL) {
        j->step = "starting a transaction";
        return errno ? errno : EIO;
    }
    devs = xs_directory(h, t, be, &n);
    if (!devs && errno != ENOENT) {
        err = errno ? errno : EIO;
        j->step = "listing backend/vkbd";
    }
    for (unsigned i = 0; devs && i < n && !err; i++) {
        int r = drop_one(h, t, j->domid, be, devs[i]);
        if (r < 0) {
            err = errno ? errno : EIO;
            j->step = "removing a vkbd";
        } else {
            note(r ? j->removed : j->kept,
                 r ? sizeof(j->removed) : sizeof(j->kept), devs[i]);
        }
    }
    free(devs);
    if (!xs_transaction_end(h, t, err != 0) && !err) {
        err = errno ? errno : EIO;
        j->step = "committing";
    }
    return err;
}

/* In the worker. */
static void drop_in_xs(struct xs_handle *h, void *data)
{
    vkbd_job *j = data;

    if (!h) {
        j->err = errno;
        j->step = "connecting";
        return;
    }
    j->err = EAGAIN;
    for (int i = 0; i < XS_TRIES && j->err == EAGAIN; i++)
        j->err = drop_all(h, j);
}

void xlreaper__drop_vkbd(xlreaper_ctx *ctx, uint32_t domid)
{
    vkbd_job *j;
    int rc;

    j = calloc(1, sizeof(*j));
    if (!j) {
        LOGD(WARN, domid, "no memory to look for a vkbd");
        return;
    }
    j->domid = domid;
    rc = xlreaper__xs_bounded(0, XS_TIMEOUT_MS, drop_in_xs, j, free);
    if (rc == -ETIMEDOUT) {
        /* j is the worker's now: it frees it if fn returns. */
        LOGD(WARN, domid,
             "xenstore did not answer within %d ms: a vkbd, if the "
             "domain has one, is left (QEMU under -xen-domid-restrict "
             "cannot serve it)",
             XS_TIMEOUT_MS);
        return;
    }
    if (rc) {
        LOGEV(WARN, -rc, "domid %u: starting the xenstore writer", domid);
        goto out;
    }
    if (j->err)
        LOGEV(WARN, j->err,
              "domid %u: xenstore, %s: a vkbd, if the domain has one, is "
              "left (QEMU under -xen-domid-restrict cannot serve it)",
              domid, j->step);
    else if (j->removed[0])
        LOGD(NOTICE, domid,
             "removed the domain's vkbd%s (backend, frontend, libxl's "
             "entry), as vkb_device = 0 would: QEMU under "
             "-xen-domid-restrict has no xenstore to serve it with",
             j->removed);
    if (!j->err && j->kept[0])
        LOGD(NOTICE, domid,
             "left vkbd%s, whose frontend is not this domain's vkbd", j->kept);

out:
    free(j);
}
