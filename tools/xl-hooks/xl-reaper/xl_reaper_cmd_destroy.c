/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_cmd_destroy.c - `xl-reaper destroy DOMID`: destroy the
 * domain through libxl, then reap its DM uid and verify.  For operators
 * who run xl without xl-reaperd, and for tests.  Exit codes as `kill`.
 *
 * Order matters.  libxl_domain_destroy removes /local/domain/<domid>
 * (and with it image/device-model-kill-uid) before it destroys the
 * domain, so what xenstore says of the DM's uid is read first.  The
 * reap comes after: while the domain lives its DM may be restarted, and
 * libxl's own (pid or uid) kill runs inside the destroy.  Then, under the
 * reaper lock, the domid is asked about once more: if it is alive again
 * it has been reused, and a kill would take the new domain's DM.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxl.h>
#include <xenstore.h>

#include "xl_reaper.h"
#include "xlr_domain.h"

/* What xenstore says of domid's DM uid: 0 absent, or the uid; -1 when
 * it is not a uid.  Read while the domain lives. */
static long read_kill_uid(uint32_t domid)
{
    struct xs_handle *xsh = xs_open(XS_OPEN_READONLY);
    char path[80], *v, *end;
    unsigned len;
    long uid = 0;

    if (!xsh)
        return 0; /* then libxl cannot work either; it will say so */
    snprintf(path, sizeof(path),
             "/local/domain/%u/image/device-model-kill-uid", domid);
    v = xs_read(xsh, XBT_NULL, path, &len);
    if (v) {
        errno = 0;
        uid = strtol(v, &end, 10);
        if (!len || len > 10 || *end || errno || uid <= 0 || v[0] == '0')
            uid = -1;
        free(v);
    }
    xs_close(xsh);
    return uid;
}

/* Is what libxl wrote the uid we are about to reap?  true if so, or if
 * nothing was written (a DM started without a uid of its own). */
static bool kill_uid_agrees(xlr_cli *cli, uint32_t domid, long kuid, uid_t uid)
{
    uint32_t other;

    if (kuid == 0 || kuid == (long)uid)
        return true;
    if (kuid < 0)
        xlr_error("domid %u: its device-model-kill-uid is not a uid", domid);
    else if (!xlreaper_uid_domid(cli->ctx, (uid_t)kuid, &other))
        xlr_error("domid %u: libxl started its DM as uid %ld, which is "
                  "domid %u's: not killed",
                  domid, kuid, other);
    else
        xlr_error("domid %u: libxl started its DM as uid %ld, outside the "
                  "configured range: it cannot be reaped or verified by "
                  "uid (device_model_user in its xl.cfg?)",
                  domid, kuid);
    return false;
}

int xlr_cmd_destroy(xlr_cli *cli, int argc, char **argv)
{
    libxl_childproc_hooks hooks = {
        /* libxl reaps only its own children; ours are the library's. */
        .chldowner = libxl_sigchld_owner_libxl_always_selective_reap,
    };
    libxl_ctx *lctx = NULL;
    xlreaper_lock *lock = NULL;
    xlreaper_reap_result res;
    uint32_t domid;
    bool agrees;
    long kuid;
    uid_t uid;
    int rc, r, alive, ret;

    ret = xlr_domid_only("destroy", argc, argv, &domid);
    if (!ret)
        ret = xlr_load_config_oom(cli);
    if (ret)
        return ret;
    if (xlreaper_dm_ids(cli->ctx, domid, &uid, NULL))
        return XLR_EXIT_USAGE;
    xlreaper_reap_result_init(&res);

    r = libxl_ctx_alloc(&lctx, LIBXL_VERSION, 0, cli->lg);
    if (r) {
        xlr_error("cannot talk to Xen through libxl (libxl_ctx_alloc: %d): "
                  "is this dom0, with xenstored running?",
                  r);
        return XLR_EXIT_FAIL;
    }
    libxl_childproc_setmode(lctx, &hooks, NULL);

    alive = xlr_domain_alive(lctx, domid);
    if (alive <= 0) {
        if (alive == 0)
            xlr_error("domid %u: no such domain (to reap a dead domain's "
                      "uid, use xl-reaper kill %u)",
                      domid, domid);
        ret = alive == 0 ? XLR_EXIT_USAGE : XLR_EXIT_FAIL;
        goto out;
    }
    kuid = read_kill_uid(domid);
    agrees = kill_uid_agrees(cli, domid, kuid, uid);

    r = libxl_domain_destroy(lctx, domid, NULL);
    if (r) {
        /* libxl gives up when it cannot kill the DM; then the domain
         * stays, and so may a DM that still serves it. */
        if (xlr_domain_alive(lctx, domid) != 0) {
            xlr_error("domid %u: libxl_domain_destroy failed (%d) and the "
                      "domain still exists: its uid is not reaped",
                      domid, r);
            ret = XLR_EXIT_FAIL;
            goto out;
        }
        xlr_error("domid %u: libxl_domain_destroy failed (%d), but the "
                  "domain is gone: reaping its uid",
                  domid, r);
    }

    rc = xlreaper_lock_acquire(cli->ctx, &lock);
    if (rc) {
        ret = xlr_exit_code(rc);
        goto out;
    }
    alive = xlr_domain_alive(lctx, domid);
    if (alive != 0) {
        xlr_error(alive > 0 ? "domid %u: alive again (reused) before its "
                              "uid could be reaped: not killing it, the "
                              "new domain's DM would die"
                            : "domid %u: cannot tell whether it was "
                              "reused: not killing",
                  domid);
        ret = alive > 0 ? XLR_EXIT_REMAIN : XLR_EXIT_FAIL;
        goto out;
    }
    res.lock_wait_us = xlreaper_lock_wait_us(lock);
    /* The reap takes the lock over: it is let go between rounds, and
     * the reap's mark, taken in this same hold, keeps a new domain's DM
     * out of the uid until the verdict. */
    rc = xlreaper_reap_flags(cli->ctx, lock, domid, XLREAPER_REAP_LOCK_ROUNDS,
                             &res);
    if (res.outcome != XLREAPER_OUTCOME_NONE)
        xlr_print_reap(cli, &res);
    ret = xlr_exit_code(rc);
    /* A DM outside the range was not verified: the command did not do
     * what was asked, though the domain is gone. */
    if (ret == XLR_EXIT_OK && !agrees)
        ret = XLR_EXIT_USAGE;

out:
    xlreaper_lock_release(lock);
    xlreaper_reap_result_dispose(&res);
    libxl_ctx_free(lctx);
    return ret;
}
