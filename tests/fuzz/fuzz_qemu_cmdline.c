/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_qemu_cmdline.c - a QEMU command line, as the wrapper reads it
 * (xlreaper__qemu_cmdline_parse, the spawn's plan) and as the audit
 * reads a DM's /proc/PID/cmdline (xlreaper__audit_parse_cmdline), with
 * libxl 4.20's probe line and the uid:gid of -runas / -run-with user=.
 *
 * The input is the cmdline text: arguments separated by NUL, argv[0]
 * first, the last one not necessarily ended.  Properties: no crash,
 * leak or UB; the descriptors kept are sorted, unique and above 2; and
 * where the wrapper accepts a line, the audit reads from it the same
 * user and chroot QEMU will take, and the same probe verdict.
 */
#include <string.h>

#include "fuzz.h"
#include "xlreaper_audit_internal.h"

#define MAX_ARGS 512

/* QemuOpts-unescaped c (",," read as ","), for comparing chroots. */
static void check_same_chroot(const xlreaper__qemu_cmdline *cl,
                              const xlreaper__audit_cmdline *ac)
{
    if (!cl->chroot) {
        FZ_ASSERT(!ac->chroot);
        return;
    }
    FZ_ASSERT(ac->chroot);
    FZ_ASSERT(ac->chroot_len == strlen(cl->chroot));
    FZ_ASSERT(!memcmp(ac->chroot, cl->chroot, ac->chroot_len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xlreaper_ctx *ctx = fz_ctx();
    char *raw = fz_copy(data, size), *text = fz_strdup(data, size);
    char *argv[MAX_ARGS + 1];
    xlreaper__qemu_cmdline *cl = malloc(sizeof(*cl));
    xlreaper__audit_cmdline *ac = malloc(sizeof(*ac));
    size_t argc = 0;
    int rc, fd = -1, probe;

    FZ_ASSERT(cl && ac);
    /* The audit reads the bytes as they are, unterminated. */
    xlreaper__audit_parse_cmdline(raw, size, ac);
    FZ_ASSERT(!ac->chroot || ac->chroot_len <= sizeof(ac->chroot_buf));
    FZ_ASSERT(!ac->user || strlen(ac->user) < sizeof(ac->user_buf));
    if (ac->user) {
        uid_t u;
        gid_t g;
        (void)xlreaper__qemu_parse_ids(ac->user, &u, &g);
    }

    /* The wrapper gets them as argv. */
    for (char *p = text; p < text + size && argc < MAX_ARGS;
         p += strlen(p) + 1)
        argv[argc++] = p;
    if (!argc || argc == MAX_ARGS)
        goto out;
    argv[argc] = NULL;
    probe = xlreaper_libxl_probe_line(argv, &fd);
    FZ_ASSERT(probe == 0 || (probe == 1 && fd > 2));

    rc = xlreaper__qemu_cmdline_parse(ctx, 7, argv, cl);
    if (rc) {
        FZ_ASSERT(rc == XLREAPER_ERROR_INVAL);
        goto out;
    }
    FZ_ASSERT(cl->num_keep <= XLREAPER__MAX_KEEP_FDS);
    for (unsigned i = 0; i < cl->num_keep; i++) {
        FZ_ASSERT(cl->keep[i] > 2);
        FZ_ASSERT(!i || cl->keep[i - 1] < cl->keep[i]);
    }
    FZ_ASSERT(cl->num_run_with <= 2);
    if (cl->runas) {
        uid_t u;
        gid_t g;
        if (!xlreaper__qemu_parse_ids(cl->runas, &u, &g))
            FZ_ASSERT(u != (uid_t)-1 && g != (gid_t)-1);
    }

    /* The audit must see what the wrapper let through: the same ids,
     * chroot and probe verdict.  Only for whole arguments (the audit
     * reads a line cut short as it is) and only where the wrapper would
     * go on with the ids (a value it refuses anyway may read otherwise,
     * e.g. one too long for either). */
    if (size && data[size - 1] == '\0') {
        uid_t u, au;
        gid_t g, ag;

        FZ_ASSERT(ac->libxl_probe == (probe == 1));
        FZ_ASSERT(!cl->runas == !ac->user);
        if (cl->runas && !xlreaper__qemu_parse_ids(cl->runas, &u, &g)) {
            FZ_ASSERT(!xlreaper__qemu_parse_ids(ac->user, &au, &ag));
            FZ_ASSERT(u == au && g == ag);
        }
        check_same_chroot(cl, ac);
    }

out:
    free(cl);
    free(ac);
    fz_copy_free(raw, size);
    free(text);
    return 0;
}
