/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_domain.h - whether a domain lives, by the hypervisor (libxl), for
 * `xl-reaper destroy` and xl-reaperd alike.
 *
 * A dying domain (destroyed, its memory not yet freed) counts as dead:
 * its DM has no guest left to serve, and its domid cannot be reused
 * until it is gone.  A domain that has shut down but not been destroyed
 * (on_crash="preserve") lives, and so may its DM.
 *
 * In a header, inline: both programs include it, and neither's build
 * then needs one more object.
 */
#ifndef XLR_DOMAIN_H
#define XLR_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>

#include <libxl.h>

/* Whether a domain libxl lists or describes counts as alive. */
static inline bool xlr_dominfo_alive(const libxl_dominfo *info)
{
    return !info->dying;
}

/* 1 alive, 0 gone or dying, -1 when libxl cannot tell. */
static inline int xlr_domain_alive(libxl_ctx *lctx, uint32_t domid)
{
    libxl_dominfo info;
    int rc, alive = -1;

    libxl_dominfo_init(&info);
    rc = libxl_domain_info(lctx, &info, domid);
    if (!rc)
        alive = xlr_dominfo_alive(&info);
    else if (rc == ERROR_DOMAIN_NOTFOUND)
        alive = 0;
    libxl_dominfo_dispose(&info);
    return alive;
}

#endif
