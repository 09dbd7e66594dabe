/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_libvirt_probe.c - libvirt's look at the emulator: "-help"
 * (and "-version"), answered by QEMU itself.
 *
 * libvirt's libxl driver (src/libxl/libxl_conf.c) maps a domain's
 * <emulator> to libxl's b_info->device_model and, before that, runs
 *
 *     <emulator> -help
 *
 * as root (libxlDomainGetEmulatorType), reading the text for
 * "Options specific to the Xen version:" to tell qemu-traditional from
 * qemu-xen.  When the command fails it logs an error and guesses
 * qemu-xen.  With the wrapper as <emulator> that line must be answered
 * by the QEMU the wrapper would start, or libvirt learns nothing true.
 *
 * It is for no domain: there is no -xen-domid, no guest and no DM uid.
 * QEMU runs as root, as libvirt would have run it without the wrapper;
 * only 0-2 stay open, so nothing of the caller's leaks to it.  The line
 * is matched exactly: one argument, "-help" or "-version".
 */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "xlreaper_xen.h"

static bool libvirt_arg(const char *a)
{
    return !strcmp(a, "-help") || !strcmp(a, "-version");
}

int xlreaper_libvirt_probe_line(char *const argv[])
{
    return argv && argv[0] && argv[1] && !argv[2] && libvirt_arg(argv[1]);
}

int xlreaper_libvirt_probe_exec(xlreaper_ctx *ctx, const char *path,
                                char *const argv[])
{
    char *qargv[3];

    if (!path || !xlreaper_libvirt_probe_line(argv)) {
        LOG(ERROR, "not libvirt's -help or -version line");
        return XLREAPER_ERROR_INVAL;
    }
    qargv[0] = (char *)path;
    qargv[1] = argv[1];
    qargv[2] = NULL;
    if (xlreaper__close_all_but(-1) < 0) {
        LOGE(ERROR, "%s: closing descriptors", argv[1]);
        return XLREAPER_ERROR_FAIL;
    }
    execv(path, qargv);
    LOGE(ERROR, "%s: execve %s", argv[1], path);
    return XLREAPER_ERROR_FAIL;
}
