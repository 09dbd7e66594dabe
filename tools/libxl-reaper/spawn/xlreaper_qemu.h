/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_qemu.h - what a QEMU command line says that the
 * restriction depends on (xlreaper_qemu_args.c), for the spawn and the
 * audit, which judges a running DM's line by the same rules.  Private
 * to the library.
 */
#ifndef XLREAPER_QEMU_H
#define XLREAPER_QEMU_H

#include "xlreaper_internal.h"

/* ---------- spawn: the QEMU command line (xlreaper_qemu_args.c) ---------- */

/* Descriptors a command line may name for the DM to inherit. */
#define XLREAPER__MAX_KEEP_FDS 64

/* How QEMU is told to switch uid, or to chroot, itself. */
typedef enum {
    XLREAPER__QEMU_FORM_NONE = 0,
    XLREAPER__QEMU_FORM_OPTION,   /* -runas uid:gid, -chroot dir */
    XLREAPER__QEMU_FORM_RUN_WITH, /* -run-with user=uid:gid / chroot=dir */
} xlreaper__qemu_form;

/* What an argument of a QEMU command line is, as far as we read it. */
typedef enum {
    XLREAPER__QOPT_NONE = 0,  /* no option: a value or an image */
    XLREAPER__QOPT_FLAG,      /* an option known to take no value */
    XLREAPER__QOPT_UNKNOWN,   /* an option that may take the next one */
    XLREAPER__QOPT_XEN_DOMID, /* these take the next one as value: */
    XLREAPER__QOPT_RUNAS,
    XLREAPER__QOPT_RUN_WITH,
    XLREAPER__QOPT_CHROOT,
    XLREAPER__QOPT_INCOMING,
    XLREAPER__QOPT_FDS, /* -chardev, -netdev, ...: may name fds */
} xlreaper__qemu_opt;

/* Which one arg (len bytes, -opt or --opt) is (xlreaper_qemu_args.c
 * says why a read option after an _UNKNOWN one is refused). */
_hidden xlreaper__qemu_opt xlreaper__qemu_opt_kind(const char *arg,
                                                   size_t len);

/* Distinct -run-with keys a line may give (QEMU 10.1 knows 4). */
#define XLREAPER__MAX_RUN_WITH_KEYS 8

/* What the command line says, found by xlreaper__qemu_cmdline_parse. */
typedef struct {
    int keep[XLREAPER__MAX_KEEP_FDS]; /* > 2, sorted, unique */
    unsigned num_keep;
    xlreaper__qemu_form runas_form;
    const char *runas; /* "uid:gid" as given (from argv or runas_buf),
                         * or NULL */
    char runas_buf[64];
    xlreaper__qemu_form chroot_form;
    const char *chroot; /* its directory, or NULL; for the run-with form
                         * a pointer into chroot_buf */
    char chroot_buf[4096];
    unsigned num_run_with; /* -run-with options (libxl 4.20+: up to 2) */
    char run_with_keys[XLREAPER__MAX_RUN_WITH_KEYS][32]; /* seen so far */
    unsigned num_run_with_keys;
    bool domid_restrict;      /* -xen-domid-restrict where QEMU reads
                               * it as the flag, not as a value */
    int incoming_fd;          /* -incoming fd:N's N (> 2), or 0 */
    const char *last_unknown; /* the last argument, if an option that may
                               * take a value: what is appended after it
                               * could become its value */
} xlreaper__qemu_cmdline;

/*
 * Parses what the restriction needs from a QEMU command line (argv[0]
 * is the program): the descriptors it names (fd=N, fds=N:M, vhostfd=N,
 * vhostfds=, addr.type=fd + addr.str=N in -chardev, -netdev, -net,
 * -device, -object and -add-fd; -incoming fd:N), its -runas /
 * -run-with user= and -chroot / -run-with chroot=, its
 * -xen-domid-restrict and whether it ends with an option that may take
 * a value.  A malformed or
 * ambiguous one (a descriptor that is not a plain number, two uid
 * switches, -run-with more than twice or a key of it twice, user or
 * chroot without a value, an option read here right after an option
 * that may take it as its value) is refused: 0, or _INVAL logged with domid.
 */
_hidden int xlreaper__qemu_cmdline_parse(xlreaper_ctx *ctx, uint32_t domid,
                                         char *const argv[],
                                         xlreaper__qemu_cmdline *cl);

/* "uid:gid" with decimal ids, as QEMU's -runas takes them.  0 or -1. */
_hidden int xlreaper__qemu_parse_ids(const char *s, uid_t *uid_r,
                                     gid_t *gid_r);

#define XLREAPER__QEMU_HAS_RUNAS 1u           /* -runas */
#define XLREAPER__QEMU_HAS_RUN_WITH_USER 2u   /* -run-with user= (9.1+) */
#define XLREAPER__QEMU_HAS_CHROOT 4u          /* -chroot (up to 8.2) */
#define XLREAPER__QEMU_HAS_RUN_WITH_CHROOT 8u /* -run-with chroot= (8.1+) */

/* The XLREAPER__QEMU_HAS_* that a `qemu -help` text lists. */
_hidden unsigned xlreaper__qemu_help_features(const char *text, size_t len);

/* Runs `path -help` and returns its features.  0, _INVAL or _FAIL. */
_hidden int xlreaper__qemu_probe(xlreaper_ctx *ctx, uint32_t domid,
                                 const char *path, unsigned *features_r);

#endif /* XLREAPER_QEMU_H */
