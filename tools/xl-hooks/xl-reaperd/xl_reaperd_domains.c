/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_domains.c - which domains live, and who says so.
 *
 * With a hypervisor the hypervisor's own list (libxl_list_domain) is the
 * authority, and xenstore's /local/domain/ is not:
 *  - a domid is in use from xc_domain_create until the hypervisor frees
 *    it; libxl writes /local/domain/<domid> only after the create, and
 *    removes it before xc_domain_destroy, so xenstore calls a domain
 *    dead early and a new one alive late;
 *  - any dom0 xenstore client can write or remove /local/domain/<domid>,
 *    and a xenstored that restarts has lost it all: by xenstore alone,
 *    every domain would then look dead and every DM would be killed.
 *    The hypervisor's list cannot be faked from dom0 user space.
 * A dying domain counts as dead, as for `xl-reaper destroy`
 * (xlr_domain.h says why).
 *
 * Without a hypervisor (tests) xenstore is all there is; the daemon
 * says so when it starts.  With one, a libxl that cannot talk to it is
 * an error, not a reason to fall back on xenstore.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xl_reaperd.h"
#include "xlr_domain.h"

bool xlrd_hypervisor_present(void)
{
    /* Where libxenctrl opens the privcmd driver. */
    return access("/dev/xen/privcmd", F_OK) == 0 ||
           access("/proc/xen/privcmd", F_OK) == 0;
}

int xlrd_domains_init(xlrd *d, bool hypervisor)
{
    uint32_t n = xlreaper_max_domid() + 1;
    int rc;

    d->doms = calloc(n, sizeof(*d->doms));
    d->listed = calloc(n, sizeof(*d->listed));
    if (!d->doms || !d->listed) {
        XLRD_LOG(d, ERROR, "out of memory");
        return XLRD_EXIT_FAIL;
    }
    if (!hypervisor) {
        d->mode = XLRD_LIST_XENSTORE;
        XLRD_LOG(d, NOTICE,
                 "no hypervisor (no privcmd device): the live domains are "
                 "those listed under /local/domain in xenstore");
        return 0;
    }
    rc = libxl_ctx_alloc(&d->lctx, LIBXL_VERSION, 0, d->lg);
    if (rc) {
        XLRD_LOG(d, ERROR,
                 "a hypervisor is there but libxl cannot talk to it "
                 "(libxl_ctx_alloc: %d); not guessing from xenstore alone "
                 "which domains live",
                 rc);
        return XLRD_EXIT_FAIL;
    }
    d->mode = XLRD_LIST_LIBXL;
    XLRD_LOG(d, INFO, "the live domains are the hypervisor's, by libxl");
    return 0;
}

void xlrd_domains_dispose(xlrd *d)
{
    if (d->lctx)
        libxl_ctx_free(d->lctx);
    d->lctx = NULL;
    free(d->doms);
    free(d->listed);
    d->doms = NULL;
    d->listed = NULL;
}

static int list_libxl(xlrd *d, bool *alive)
{
    libxl_dominfo *l;
    int nb;

    l = libxl_list_domain(d->lctx, &nb);
    if (!l) {
        XLRD_LOG(d, ERROR, "libxl_list_domain failed");
        return -1;
    }
    for (int i = 0; i < nb; i++)
        if (l[i].domid >= 1 && l[i].domid <= xlreaper_max_domid() &&
            xlr_dominfo_alive(&l[i]))
            alive[l[i].domid] = true;
    libxl_dominfo_list_free(l, nb);
    return 0;
}

static int list_xenstore(xlrd *d, bool *alive)
{
    unsigned n;
    char **e;

    if (!d->xsh)
        return -1;
    e = xs_directory(d->xsh, XBT_NULL, "/local/domain", &n);
    if (!e) {
        XLRD_LOGE(d, ERROR, "xenstore: listing /local/domain");
        return -1;
    }
    /* Names from xenstore are checked as strictly as a DOMID argument;
     * dom0 has no DM uid, and anything else is not a domain. */
    for (unsigned i = 0; i < n; i++) {
        uint32_t domid;

        if (!xlreaper_domid_parse(e[i], &domid))
            alive[domid] = true;
        else if (strcmp(e[i], "0"))
            XLRD_LOG(d, DEBUG, "ignoring /local/domain/%.20s", e[i]);
    }
    free(e);
    return 0;
}

int xlrd_domains_list(xlrd *d, bool *alive)
{
    memset(alive, 0, (xlreaper_max_domid() + 1) * sizeof(*alive));
    return d->mode == XLRD_LIST_LIBXL ? list_libxl(d, alive)
                                      : list_xenstore(d, alive);
}

int xlrd_domain_alive(xlrd *d, uint32_t domid)
{
    char path[40];
    unsigned len;
    void *v;

    if (d->mode == XLRD_LIST_LIBXL)
        return xlr_domain_alive(d->lctx, domid);
    if (!d->xsh)
        return -1;
    snprintf(path, sizeof(path), "/local/domain/%u", domid);
    v = xs_read(d->xsh, XBT_NULL, path, &len);
    if (v) {
        free(v);
        return 1;
    }
    return errno == ENOENT ? 0 : -1;
}

/*
 * What libxl wrote is believed only where it agrees with the uid table:
 * the daemon reaps base + domid whatever the node says, and a value
 * outside the range, or another domid's uid, is reported and never
 * killed on this node's word.
 */
void xlrd_read_kill_uid(xlrd *d, uint32_t domid)
{
    xlrd_dom *dom = &d->doms[domid];
    char path[80];
    unsigned len;
    uint32_t uid, other;
    uid_t mine = 0;
    char *v;

    if (!d->xsh)
        return;
    snprintf(path, sizeof(path),
             "/local/domain/%u/image/device-model-kill-uid", domid);
    v = xs_read(d->xsh, XBT_NULL, path, &len);
    if (!v) {
        /* Not yet written, or already removed: keep what we had. */
        XLRD_LOGE(d, DEBUG, "domid %u: reading %s", domid, path);
        return;
    }
    xlreaper_dm_ids(d->ctx, domid, &mine, NULL);
    switch (xlrd_kill_uid_parse(d->ctx, domid, v, len, &uid, &other)) {
    case XLRD_KILL_UID_BAD:
        if (!dom->kill_uid)
            XLRD_LOG(d, WARN, "domid %u: %s is not a uid; ignored", domid,
                     path);
        break;
    case XLRD_KILL_UID_MINE:
        if (dom->kill_uid != uid)
            XLRD_LOG(d, DEBUG, "domid %u: its DM runs as uid %lu", domid,
                     (unsigned long)uid);
        dom->kill_uid = uid;
        break;
    case XLRD_KILL_UID_OTHER:
        XLRD_LOG(d, WARN,
                 "domid %u: device-model-kill-uid %lu is domid %u's uid, "
                 "not its own (%lu); ignored: killing it could kill "
                 "another domain's DM",
                 domid, (unsigned long)uid, other, (unsigned long)mine);
        break;
    case XLRD_KILL_UID_OUTSIDE:
        XLRD_LOG(d, WARN,
                 "domid %u: device-model-kill-uid %lu is outside the DM uid "
                 "range; ignored: this DM cannot be reaped by uid (is "
                 "device_model_user set in its xl.cfg?)",
                 domid, (unsigned long)uid);
        break;
    }
    free(v);
}
