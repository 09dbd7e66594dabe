/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_xen.h - where the library talks to Xen's own pieces:
 * xenstore with a deadline, and what add_dm_restrict does there.
 * Private to the library.
 */
#ifndef XLREAPER_XEN_H
#define XLREAPER_XEN_H

#include "xlreaper_internal.h"

/* ---------- xenstore, with a deadline ---------- */

struct xs_handle;

/* Runs in the worker with a handle xs_open(open_flags) gave, or NULL
 * (errno set) when it failed; the handle is closed when it returns. */
typedef void xlreaper__xs_fn(struct xs_handle *h, void *data);

/*
 * Runs fn(h, data) in a thread of its own and waits for it at most
 * timeout_ms (xlreaper_xs_bounded.c).  0: fn returned, the caller owns
 * data.  -ETIMEDOUT: data now belongs to the worker, which calls
 * release(data) (if not NULL) once fn returns.  Another -errno: fn never
 * ran, the caller owns data.
 */
_hidden int xlreaper__xs_bounded(unsigned long open_flags, unsigned timeout_ms,
                                 xlreaper__xs_fn *fn, void *data,
                                 void (*release)(void *data));

/*
 * add_dm_restrict: removes from xenstore the vkbd libxl gave domid,
 * which QEMU under -xen-domid-restrict cannot serve
 * (xlreaper_vkbd.c).  Bounded; says what it did; never fails.
 */
_hidden void xlreaper__drop_vkbd(xlreaper_ctx *ctx, uint32_t domid);

/*
 * add_dm_restrict, a DM exec'd in place: forks a watcher that writes
 * "running" to device-model/<domid>/state once this process (QEMU by
 * then) runs under uid, for a libxl that waits for it and a QEMU that
 * does not write it restricted (xlreaper_dm_ready.c).  incoming_fd:
 * a restore's -incoming fd:N, whose close by QEMU is waited for too;
 * or 0.  Never fails.
 */
_hidden void xlreaper__dm_ready_later(xlreaper_ctx *ctx, uint32_t domid,
                                      uid_t uid, int incoming_fd);

/* Closes every descriptor but 0-2 and keep (every one above 2 when keep
 * is below 3), for a root QEMU a toolstack's probe runs
 * (xlreaper_libxl_probe.c).  0, or -1 with errno. */
_hidden int xlreaper__close_all_but(int keep);

#endif /* XLREAPER_XEN_H */
