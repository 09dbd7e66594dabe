/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * create-domid [--no-vkb] NAME DOMID [DM_OVERRIDE]: create and unpause the
 * issue's minimal dm_restrict HVM guest with a chosen domid, through
 * libxenlight. --no-vkb: without the vkbd libxl gives an HVM guest by
 * default, as xl.cfg's vkb_device = 0 (QEMU 10 with -xen-domid-restrict
 * refuses it: tests/e2e/images/4.20).
 *
 * Scenario 5 needs a domid used twice. xl 4.17 has no `domid` key in
 * xl.cfg and Xen hands out domids in sequence, so the harness asks libxl
 * directly (libxl_domain_create_info.domid, LIBXL_HAVE_CREATEINFO_DOMID).
 * The guest is the one tests/e2e/lib.sh's guest_cfg writes for xl.
 * Prints the domid. Exit 0 on success. E2E_XTL_DEBUG=1 in the environment:
 * libxl logs at debug level, as xl -vvv (the DM's command line, the spawn).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxl.h>
#include <libxl_utils.h>
#include <xentoollog.h>

int main(int argc, char **argv)
{
    xentoollog_logger_stdiostream *lg;
    libxl_ctx *ctx = NULL;
    libxl_domain_config dc;
    uint32_t domid;
    char *end;
    long want;
    int rc = 1, no_vkb = 0;

    if (argc > 1 && !strcmp(argv[1], "--no-vkb")) {
        no_vkb = 1;
        argv++;
        argc--;
    }
    if (argc < 3 || argc > 4) {
        fprintf(stderr,
                "usage: create-domid [--no-vkb] NAME DOMID [DM_OVERRIDE]\n");
        return 2;
    }
    want = strtol(argv[2], &end, 10);
    if (*end || end == argv[2] || !libxl_domid_valid_guest(want)) {
        fprintf(stderr, "create-domid: bad domid '%s'\n", argv[2]);
        return 2;
    }
    lg = xtl_createlogger_stdiostream(stderr,
                                      getenv("E2E_XTL_DEBUG") ? XTL_DEBUG
                                                              : XTL_PROGRESS,
                                      0);
    if (!lg ||
        libxl_ctx_alloc(&ctx, LIBXL_VERSION, 0, (xentoollog_logger *)lg)) {
        fprintf(stderr, "create-domid: cannot open libxl\n");
        return 1;
    }

    libxl_domain_config_init(&dc);
    dc.c_info.type = LIBXL_DOMAIN_TYPE_HVM;
    dc.c_info.name = strdup(argv[1]);
    dc.c_info.domid = (uint32_t)want;
    libxl_uuid_generate(&dc.c_info.uuid);
    libxl_domain_build_info_init_type(&dc.b_info, LIBXL_DOMAIN_TYPE_HVM);
    dc.b_info.max_memkb = dc.b_info.target_memkb = 32 * 1024;
    dc.b_info.device_model_version = LIBXL_DEVICE_MODEL_VERSION_QEMU_XEN;
    libxl_defbool_set(&dc.b_info.dm_restrict, true);
    libxl_defbool_set(&dc.b_info.u.hvm.vnc.enable, false);
    dc.b_info.u.hvm.serial = strdup("pty");
    if (no_vkb)
        libxl_defbool_set(&dc.b_info.u.hvm.vkb_device, false);
    if (argc == 4)
        dc.b_info.device_model = strdup(argv[3]);
    /* xl's defaults for what xl.cfg did not say. */
    dc.on_poweroff = LIBXL_ACTION_ON_SHUTDOWN_DESTROY;
    dc.on_reboot = LIBXL_ACTION_ON_SHUTDOWN_RESTART;
    dc.on_crash = LIBXL_ACTION_ON_SHUTDOWN_DESTROY;

    domid = INVALID_DOMID;
    if (libxl_domain_create_new(ctx, &dc, &domid, NULL, NULL)) {
        fprintf(stderr, "create-domid: libxl_domain_create_new failed\n");
        goto out;
    }
    if (libxl_domain_unpause(ctx, domid, NULL)) {
        fprintf(stderr, "create-domid: unpause of %u failed\n", domid);
        goto out;
    }
    printf("%u\n", domid);
    rc = 0;
out:
    libxl_domain_config_dispose(&dc);
    libxl_ctx_free(ctx);
    xtl_logger_destroy((xentoollog_logger *)lg);
    return rc;
}
