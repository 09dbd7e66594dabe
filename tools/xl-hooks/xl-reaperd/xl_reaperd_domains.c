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

#include "xl_reaperd_domains.h"
#include "xl_reaperd_log.h"
#include "xl_reaperd_parse.h"
#include "xlr_domain.h"

bool xlrd_hypervisor_present(void)
{
    /* Where libxenctrl opens the privcmd driver. */
    return access("/dev/xen/privcmd", F_OK) == 0 ||
           access("/proc/xen/privcmd", F_OK) == 0;
}

int xlrd_domains_init(xlrd_domains *dm, const xlreaper_ctx *ctx,
                      xentoollog_logger *lg, xlrd_xs *xs, bool hypervisor)
{
    int rc;

    memset(dm, 0, sizeof(*dm));
    dm->ctx = ctx;
    dm->xs = xs;
    dm->kill_uid = calloc(xlreaper_max_domid() + 1, sizeof(*dm->kill_uid));
    if (!dm->kill_uid) {
        XLRD_LOG(ERROR, "out of memory");
        return XLRD_EXIT_FAIL;
    }
    if (!hypervisor) {
        dm->mode = XLRD_LIST_XENSTORE;
        XLRD_LOG(NOTICE,
                 "no hypervisor (no privcmd device): the live domains are "
                 "those listed under /local/domain in xenstore");
        return 0;
    }
    rc = libxl_ctx_alloc(&dm->lctx, LIBXL_VERSION, 0, lg);
    if (rc) {
        XLRD_LOG(ERROR,
                 "a hypervisor is there but libxl cannot talk to it "
                 "(libxl_ctx_alloc: %d); not guessing from xenstore alone "
                 "which domains live",
                 rc);
        return XLRD_EXIT_FAIL;
    }
    dm->mode = XLRD_LIST_LIBXL;
    XLRD_LOG(INFO, "the live domains are the hypervisor's, by libxl");
    return 0;
}

void xlrd_domains_dispose(xlrd_domains *dm)
{
    if (dm->lctx)
        libxl_ctx_free(dm->lctx);
    dm->lctx = NULL;
    free(dm->kill_uid);
    dm->kill_uid = NULL;
}

bool xlrd_domains_can_list(const xlrd_domains *dm)
{
    return xlrd_xs_handle(dm->xs) || dm->mode == XLRD_LIST_LIBXL;
}

static int list_libxl(xlrd_domains *dm, bool *alive)
{
    libxl_dominfo *l;
    int nb;

    l = libxl_list_domain(dm->lctx, &nb);
    if (!l) {
        XLRD_LOG(ERROR, "libxl_list_domain failed");
        return -1;
    }
    for (int i = 0; i < nb; i++)
        if (l[i].domid >= 1 && l[i].domid <= xlreaper_max_domid() &&
            xlr_dominfo_alive(&l[i]))
            alive[l[i].domid] = true;
    libxl_dominfo_list_free(l, nb);
    return 0;
}

static int list_xenstore(xlrd_domains *dm, bool *alive)
{
    struct xs_handle *h = xlrd_xs_handle(dm->xs);
    unsigned n;
    char **e;

    if (!h)
        return -1;
    e = xs_directory(h, XBT_NULL, "/local/domain", &n);
    if (!e) {
        XLRD_LOGE(ERROR, "xenstore: listing /local/domain");
        return -1;
    }
    /* Names from xenstore are checked as strictly as a DOMID argument;
     * dom0 has no DM uid, and anything else is not a domain. */
    for (unsigned i = 0; i < n; i++) {
        uint32_t domid;

        if (!xlreaper_domid_parse(e[i], &domid))
            alive[domid] = true;
        else if (strcmp(e[i], "0"))
            XLRD_LOG(DEBUG, "ignoring /local/domain/%.20s", e[i]);
    }
    free(e);
    return 0;
}

int xlrd_domains_list(xlrd_domains *dm, bool *alive)
{
    memset(alive, 0, (xlreaper_max_domid() + 1) * sizeof(*alive));
    return dm->mode == XLRD_LIST_LIBXL ? list_libxl(dm, alive)
                                       : list_xenstore(dm, alive);
}

int xlrd_domain_alive(xlrd_domains *dm, uint32_t domid)
{
    struct xs_handle *h = xlrd_xs_handle(dm->xs);
    char path[40];
    unsigned len;
    void *v;

    if (dm->mode == XLRD_LIST_LIBXL)
        return xlr_domain_alive(dm->lctx, domid);
    if (!h)
        return -1;
    snprintf(path, sizeof(path), "/local/domain/%u", domid);
    v = xs_read(h, XBT_NULL, path, &len);
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
void xlrd_read_kill_uid(xlrd_domains *dm, uint32_t domid)
{
    struct xs_handle *h = xlrd_xs_handle(dm->xs);
    uint32_t *kill_uid = &dm->kill_uid[domid];
    char path[80];
    unsigned len;
    uint32_t uid, other;
    uid_t mine = 0;
    char *v;

    if (!h)
        return;
    snprintf(path, sizeof(path),
             "/local/domain/%u/image/device-model-kill-uid", domid);
    v = xs_read(h, XBT_NULL, path, &len);
    if (!v) {
        /* Not yet written, or already removed: keep what we had. */
        XLRD_LOGE(DEBUG, "domid %u: reading %s", domid, path);
        return;
    }
    xlreaper_dm_ids(dm->ctx, domid, &mine, NULL);
    switch (xlrd_kill_uid_parse(dm->ctx, domid, v, len, &uid, &other)) {
    case XLRD_KILL_UID_BAD:
        if (!*kill_uid)
            XLRD_LOG(WARN, "domid %u: %s is not a uid; ignored", domid, path);
        break;
    case XLRD_KILL_UID_MINE:
        if (*kill_uid != uid)
            XLRD_LOG(DEBUG, "domid %u: its DM runs as uid %lu", domid,
                     (unsigned long)uid);
        *kill_uid = uid;
        break;
    case XLRD_KILL_UID_OTHER:
        XLRD_LOG(WARN,
                 "domid %u: device-model-kill-uid %lu is domid %u's uid, "
                 "not its own (%lu); ignored: killing it could kill "
                 "another domain's DM",
                 domid, (unsigned long)uid, other, (unsigned long)mine);
        break;
    case XLRD_KILL_UID_OUTSIDE:
        XLRD_LOG(WARN,
                 "domid %u: device-model-kill-uid %lu is outside the DM uid "
                 "range; ignored: this DM cannot be reaped by uid (is "
                 "device_model_user set in its xl.cfg?)",
                 domid, (unsigned long)uid);
        break;
    }
    free(v);
}

uint32_t xlrd_domains_kill_uid(const xlrd_domains *dm, uint32_t domid)
{
    return dm->kill_uid[domid];
}

void xlrd_domains_forget_kill_uid(xlrd_domains *dm, uint32_t domid)
{
    dm->kill_uid[domid] = 0;
}
