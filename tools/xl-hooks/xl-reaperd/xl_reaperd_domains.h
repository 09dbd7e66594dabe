/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_domains.h - which domains live, and what their xenstore
 * says of their DM's uid (xl_reaperd_domains.c).
 */
#ifndef XL_REAPERD_DOMAINS_H
#define XL_REAPERD_DOMAINS_H

#include <libxl.h>

#include "xl_reaperd.h"
#include "xl_reaperd_xs.h"

typedef enum {
    XLRD_LIST_XENSTORE = 0, /* no hypervisor: /local/domain/ is all */
    XLRD_LIST_LIBXL,        /* the hypervisor's list, through libxl */
} xlrd_list_mode;

typedef struct {
    const xlreaper_ctx *ctx;
    xlrd_xs *xs; /* reads through its handle (borrowed) */
    xlrd_list_mode mode;
    libxl_ctx *lctx;    /* XLRD_LIST_LIBXL only */
    uint32_t *kill_uid; /* by domid: device-model-kill-uid as last read,
                         * 0: none */
} xlrd_domains;

/* Whether this host runs on Xen (a privcmd device is there). */
bool xlrd_hypervisor_present(void);
/* libxl when there is a hypervisor, xenstore otherwise.  0, or an
 * XLRD_EXIT_* code. */
int xlrd_domains_init(xlrd_domains *dm, const xlreaper_ctx *ctx,
                      xentoollog_logger *lg, xlrd_xs *xs, bool hypervisor);
void xlrd_domains_dispose(xlrd_domains *dm);
/* Whether a list can be read now: without xenstore a xenstore list
 * cannot. */
bool xlrd_domains_can_list(const xlrd_domains *dm);
/* Fills alive[domid] from the authoritative list.  0, or -1 when the
 * list could not be read (then alive[] means nothing). */
int xlrd_domains_list(xlrd_domains *dm, bool *alive);
/* Asks about one domid, right before a kill: 1 alive, 0 dead, -1 when
 * it cannot be told (then nothing is killed). */
int xlrd_domain_alive(xlrd_domains *dm, uint32_t domid);
/* Reads domid's device-model-kill-uid from xenstore, checked against
 * the configured range. */
void xlrd_read_kill_uid(xlrd_domains *dm, uint32_t domid);
/* What it said (0: nothing believed), and forgetting it. */
uint32_t xlrd_domains_kill_uid(const xlrd_domains *dm, uint32_t domid);
void xlrd_domains_forget_kill_uid(xlrd_domains *dm, uint32_t domid);

#endif /* XL_REAPERD_DOMAINS_H */
