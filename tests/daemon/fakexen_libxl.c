/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fakexen_libxl.c - the few libxl calls xl-reaper destroy and xl-reaperd
 * make, answered from fake_xenstored's stand-in for the hypervisor's
 * domain list (/fakexen/domain/<domid>), for test builds linked with
 * -Wl,--wrap (tests/daemon/daemon.mk).  The real binaries never contain
 * it; on real Xen the e2e tests run them.
 *
 * libxl_domain_destroy does what libxl does, in its order: it removes
 * /local/domain/<domid> (and so image/device-model-kill-uid), then the
 * domain, then xenstored fires @releaseDomain.  It kills no DM: libxl's
 * own kill by pid or uid is what the reaper does not rely on.  A node
 * /fakexen/destroy-fails/<domid> makes it fail, leaving the domain.
 *
 * The daemon's /proc census (xlreaper_census) is wrapped too: a node
 * /fakexen/census-misses/<domid> makes it miss that domid's uid, as a
 * census can miss a task (a fork racer's generation, a task born after
 * the pass), so that a test can count on a task that only the kernel's
 * count finds.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxl.h>
#include <xenstore.h>

#include "xlreaper.h"

static struct xs_handle *xsh;
static char fake_ctx;

bool __wrap_xlrd_hypervisor_present(void);
int __wrap_libxl_ctx_alloc(libxl_ctx **pctx, int version, unsigned flags,
                           xentoollog_logger *lg);
int __wrap_libxl_ctx_free(libxl_ctx *ctx);
int __wrap_libxl_childproc_setmode(libxl_ctx *ctx,
                                   const libxl_childproc_hooks *hooks,
                                   void *user);
int __wrap_libxl_domain_info(libxl_ctx *ctx, libxl_dominfo *info_r,
                             uint32_t domid);
libxl_dominfo *__wrap_libxl_list_domain(libxl_ctx *ctx, int *nb_r);
int __wrap_libxl_domain_destroy(libxl_ctx *ctx, uint32_t domid,
                                const libxl_asyncop_how *ao_how);
int __real_xlreaper_census(xlreaper_ctx *ctx, xlreaper_census_entry *counts,
                           unsigned *tasks_r);
int __wrap_xlreaper_census(xlreaper_ctx *ctx, xlreaper_census_entry *counts,
                           unsigned *tasks_r);

bool __wrap_xlrd_hypervisor_present(void)
{
    return true;
}

int __wrap_libxl_ctx_alloc(libxl_ctx **pctx, int version, unsigned flags,
                           xentoollog_logger *lg)
{
    (void)version;
    (void)flags;
    (void)lg;
    xsh = xs_open(0);
    if (!xsh)
        return ERROR_FAIL;
    *pctx = (libxl_ctx *)&fake_ctx;
    return 0;
}

int __wrap_libxl_ctx_free(libxl_ctx *ctx)
{
    if (ctx && xsh) {
        xs_close(xsh);
        xsh = NULL;
    }
    return 0;
}

int __wrap_libxl_childproc_setmode(libxl_ctx *ctx,
                                   const libxl_childproc_hooks *hooks,
                                   void *user)
{
    (void)ctx;
    (void)hooks;
    (void)user;
    return 0;
}

static bool node_exists(const char *fmt, uint32_t domid)
{
    char path[80];
    unsigned len;
    void *v;

    snprintf(path, sizeof(path), fmt, domid);
    v = xs_read(xsh, XBT_NULL, path, &len);
    free(v);
    return v != NULL;
}

int __wrap_libxl_domain_info(libxl_ctx *ctx, libxl_dominfo *info_r,
                             uint32_t domid)
{
    (void)ctx;
    if (!xsh)
        return ERROR_FAIL;
    if (!node_exists("/fakexen/domain/%u", domid))
        return errno == ENOENT ? ERROR_DOMAIN_NOTFOUND : ERROR_FAIL;
    if (info_r) {
        info_r->domid = domid;
        info_r->dying = false;
    }
    return 0;
}

libxl_dominfo *__wrap_libxl_list_domain(libxl_ctx *ctx, int *nb_r)
{
    libxl_dominfo *l;
    unsigned n;
    char **e;

    (void)ctx;
    e = xsh ? xs_directory(xsh, XBT_NULL, "/fakexen/domain", &n) : NULL;
    if (!e)
        return NULL;
    l = calloc(n + 1, sizeof(*l));
    if (!l) {
        free(e);
        return NULL;
    }
    for (unsigned i = 0; i < n; i++) {
        libxl_dominfo_init(&l[i]);
        l[i].domid = (uint32_t)strtoul(e[i], NULL, 10);
    }
    /* dom0, as the hypervisor lists it. */
    libxl_dominfo_init(&l[n]);
    l[n].domid = 0;
    free(e);
    *nb_r = (int)n + 1;
    return l;
}

int __wrap_libxl_domain_destroy(libxl_ctx *ctx, uint32_t domid,
                                const libxl_asyncop_how *ao_how)
{
    char path[80];

    (void)ctx;
    (void)ao_how;
    if (!xsh)
        return ERROR_FAIL;
    if (node_exists("/fakexen/destroy-fails/%u", domid))
        return ERROR_FAIL;
    snprintf(path, sizeof(path), "/local/domain/%u", domid);
    xs_rm(xsh, XBT_NULL, path);
    snprintf(path, sizeof(path), "/fakexen/domain/%u", domid);
    if (!xs_rm(xsh, XBT_NULL, path))
        return ERROR_FAIL;
    xs_release_domain(xsh, domid);
    return 0;
}

int __wrap_xlreaper_census(xlreaper_ctx *ctx, xlreaper_census_entry *counts,
                           unsigned *tasks_r)
{
    int rc = __real_xlreaper_census(ctx, counts, tasks_r);
    unsigned n;
    char **e;

    if (rc || !xsh)
        return rc;
    e = xs_directory(xsh, XBT_NULL, "/fakexen/census-misses", &n);
    for (unsigned i = 0; e && i < n; i++) {
        unsigned long domid = strtoul(e[i], NULL, 10);

        if (domid >= 1 && domid <= xlreaper_max_domid())
            counts[domid].live = counts[domid].zombies = 0;
    }
    free(e);
    return 0;
}
