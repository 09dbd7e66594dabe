/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_qemu_args.c - what a QEMU command line says that the
 * restriction depends on: the descriptors QEMU is to inherit, and how it
 * switches uid and chroots itself.
 *
 * The command line is built by libxl, plus whatever xl.cfg's
 * device_model_args add, so it is read as hostile input: every value is
 * bounded and a descriptor must be a plain decimal number.  Parsing
 * errs towards keeping too little: a descriptor we fail to see is closed
 * and QEMU fails to start (safe); one we wrongly kept would leak.  That
 * is why only the options that take descriptors are read (a guest's
 * -name cannot smuggle "fd=5" in), and why JSON values are not parsed.
 *
 * The forms libxl 4.17 uses (tools/libs/light/libxl_dm.c):
 *   -chardev socket,id=libxl-cmd,fd=N,server=on,wait=off  (QMP, pre-opened
 *                                                         when dm_restrict)
 *   -incoming fd:N                                        (restore)
 *   -runas uid:gid        (uid = range base + domid, gid = range base's)
 *   -chroot /var/run/xen/qemu-root-<domid>
 * libxl 4.20+ asks QEMU first (its probe, xlreaper_libxl_probe.c) and,
 * when QEMU takes them, gives "-run-with chroot=<dir>" and, later on the
 * line and as an option of its own, "-run-with user=uid:gid" instead.
 * QEMU applies each -run-with as it comes, so two combine; a key given
 * twice would be decided by order, which is refused here, as is a third
 * -run-with (libxl gives two at most).  QEMU itself also takes fd= in
 * -netdev tap/socket, fds=/vhostfd=/vhostfds= (colon-separated) in
 * -netdev, addr.type=fd in -netdev stream/dgram, fd= in -device (vfio)
 * and -add-fd fd=N.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper_spawn_internal.h"

#define SEG_MAX 4096

/* Options whose value is a QemuOpts list that may name descriptors. */
static const char *const fd_options[] = {
    "chardev", "netdev", "net", "device", "object", "add-fd", NULL,
};

/*
 * QEMU's options that take no argument (DEF(..., 0, ...) in
 * qemu-options.hx, 7.2 to 10.1).  QEMU gives every other option the
 * next argument as its value, whatever it looks like: in "-name -runas
 * 1:2" the name is "-runas" and no uid switch happens.  So an option we
 * read is believed only where the argument before it cannot be taking
 * it: argv[0], a known flag, a value we stepped over, or an argument
 * that is no option.  Where it follows an option we do not know, which
 * may take it, the line is refused as ambiguous.
 */
static const char *const flag_options[] = {
    "S",
    "s",
    "h",
    "help",
    "version",
    "snapshot",
    "nodefaults",
    "no-user-config",
    "nographic",
    "no-shutdown",
    "no-reboot",
    "daemonize",
    "enable-kvm",
    "xen-attach",
    "xen-domid-restrict",
    "full-screen",
    "no-acpi",
    "no-hpet",
    "no-fd-bootchk",
    "mem-prealloc",
    "portrait",
    "singlestep",
    "usb",
    "win2k-hack",
    "only-migratable",
    "preconfig",
    "audio-help",
    "enable-sync-profile",
    "no-quit",
    "alt-grab",
    "ctrl-grab",
    "semihosting",
    "old-param",
    NULL,
};

/* arg (len bytes) is -name or --name (QEMU accepts both). */
static bool is_option_n(const char *arg, size_t len, const char *name)
{
    size_t skip, nl = strlen(name);

    if (!len || arg[0] != '-')
        return false;
    skip = len > 1 && arg[1] == '-' ? 2 : 1;
    return len - skip == nl && !memcmp(arg + skip, name, nl);
}

xlreaper__qemu_opt xlreaper__qemu_opt_kind(const char *arg, size_t len)
{
    static const struct {
        const char *name;
        xlreaper__qemu_opt kind;
    } known[] = {
        { "xen-domid", XLREAPER__QOPT_XEN_DOMID },
        { "runas", XLREAPER__QOPT_RUNAS },
        { "run-with", XLREAPER__QOPT_RUN_WITH },
        { "chroot", XLREAPER__QOPT_CHROOT },
        { "incoming", XLREAPER__QOPT_INCOMING },
    };

    if (!len || arg[0] != '-')
        return XLREAPER__QOPT_NONE;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (is_option_n(arg, len, known[i].name))
            return known[i].kind;
    for (size_t i = 0; fd_options[i]; i++)
        if (is_option_n(arg, len, fd_options[i]))
            return XLREAPER__QOPT_FDS;
    for (size_t i = 0; flag_options[i]; i++)
        if (is_option_n(arg, len, flag_options[i]))
            return XLREAPER__QOPT_FLAG;
    return XLREAPER__QOPT_UNKNOWN;
}

/*
 * The next ','-separated element of a QemuOpts value, with ",," read as
 * a literal comma as QEMU does, into buf.  False at the end; *long_r set
 * when the element did not fit (it is then no descriptor of ours).
 */
static bool next_segment(const char **p, char *buf, bool *long_r)
{
    const char *s = *p;
    size_t n = 0;

    if (!s)
        return false;
    *long_r = false;
    for (;;) {
        char c = *s;
        if (c == ',' && s[1] == ',') {
            s += 2;
        } else if (c == ',' || c == '\0') {
            *p = c ? s + 1 : NULL;
            break;
        } else {
            s++;
        }
        if (n < SEG_MAX - 1)
            buf[n++] = c;
        else
            *long_r = true;
    }
    buf[n] = '\0';
    return true;
}

/*
 * A descriptor number: decimal digits only, at most INT_MAX, no leading
 * 0.  QEMU reads -add-fd's fd= as a QemuOpts number, base 0 ("010" is 8
 * to it): we would keep 10 for a QEMU that uses 8.
 */
static int parse_fd(const char *s, int *fd_r)
{
    long v = 0;

    if (!*s || (s[0] == '0' && s[1]))
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > INT_MAX)
            return -1;
    }
    *fd_r = (int)v;
    return 0;
}

static int add_keep(xlreaper_ctx *ctx, uint32_t domid,
                    xlreaper__qemu_cmdline *cl, const char *opt,
                    const char *num)
{
    unsigned i;
    int fd;

    if (parse_fd(num, &fd) < 0) {
        LOGD(ERROR, domid,
             "QEMU argument %s: descriptor \"%.64s\" is not a plain "
             "number; refusing the command line",
             opt, num);
        return XLREAPER_ERROR_INVAL;
    }
    if (fd <= 2)
        return 0; /* always kept */
    for (i = 0; i < cl->num_keep && cl->keep[i] < fd; i++)
        ;
    if (i < cl->num_keep && cl->keep[i] == fd)
        return 0;
    if (cl->num_keep == XLREAPER__MAX_KEEP_FDS) {
        LOGD(ERROR, domid,
             "the QEMU command line names more than %u "
             "descriptors",
             XLREAPER__MAX_KEEP_FDS);
        return XLREAPER_ERROR_INVAL;
    }
    memmove(&cl->keep[i + 1], &cl->keep[i],
            (cl->num_keep - i) * sizeof(cl->keep[0]));
    cl->keep[i] = fd;
    cl->num_keep++;
    return 0;
}

/* A colon-separated list, as fds= and vhostfds= take. */
static int add_keep_list(xlreaper_ctx *ctx, uint32_t domid,
                         xlreaper__qemu_cmdline *cl, const char *opt,
                         char *list)
{
    char *save = NULL, *tok;
    int rc;

    if (!*list || strstr(list, "::") || list[0] == ':' ||
        list[strlen(list) - 1] == ':')
        return add_keep(ctx, domid, cl, opt, ""); /* refused, logged */
    for (tok = strtok_r(list, ":", &save); tok;
         tok = strtok_r(NULL, ":", &save)) {
        rc = add_keep(ctx, domid, cl, opt, tok);
        if (rc)
            return rc;
    }
    return 0;
}

/* The socket-address prefixes QEMU 7.2 takes as type=fd + str=N. */
static const char *const addr_prefixes[] = { "addr", "local", "remote", NULL };

static int parse_fd_value(xlreaper_ctx *ctx, uint32_t domid,
                          xlreaper__qemu_cmdline *cl, const char *opt,
                          const char *value, char *seg)
{
    bool is_fd_type[3] = { false, false, false };
    char str[3][16] = { "", "", "" };
    bool has_str[3] = { false, false, false };
    const char *p = value;
    bool too_long;
    int rc;

    if (value[0] == '{') {
        /* QEMU's JSON form: not read, so nothing in it is kept. */
        LOGD(INFO, domid,
             "QEMU argument %s takes JSON; descriptors named "
             "in it are not kept",
             opt);
        return 0;
    }
    while (next_segment(&p, seg, &too_long)) {
        char *eq = strchr(seg, '=');
        const char *key = seg, *val;

        if (!eq)
            continue;
        *eq = '\0';
        val = eq + 1;
        if (too_long) {
            /* No descriptor key takes 4 KiB; a truncated one would be
             * misread, so refuse rather than guess. */
            if (strstr(key, "fd")) {
                LOGD(ERROR, domid, "QEMU argument %s: %s= is too long", opt,
                     key);
                return XLREAPER_ERROR_INVAL;
            }
            continue;
        }
        if (!strcmp(key, "fd") || !strcmp(key, "vhostfd")) {
            rc = add_keep(ctx, domid, cl, opt, val);
            if (rc)
                return rc;
        } else if (!strcmp(key, "fds") || !strcmp(key, "vhostfds")) {
            rc = add_keep_list(ctx, domid, cl, opt, (char *)val);
            if (rc)
                return rc;
        } else {
            for (unsigned i = 0; addr_prefixes[i]; i++) {
                size_t l = strlen(addr_prefixes[i]);
                if (strncmp(key, addr_prefixes[i], l) || key[l] != '.')
                    continue;
                if (!strcmp(key + l + 1, "type"))
                    is_fd_type[i] = !strcmp(val, "fd");
                else if (!strcmp(key + l + 1, "str")) {
                    size_t vl = strlen(val);
                    /* Too long for a descriptor: "x", refused below. */
                    if (vl < sizeof(str[i]))
                        memcpy(str[i], val, vl + 1);
                    else
                        strcpy(str[i], "x");
                    has_str[i] = true;
                }
            }
        }
    }
    for (unsigned i = 0; addr_prefixes[i]; i++) {
        if (is_fd_type[i] && has_str[i]) {
            rc = add_keep(ctx, domid, cl, opt, str[i]);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/*
 * A -run-with key seen once more: refused.  QemuOpts reads "key" alone
 * as key=on and "nokey" as key=off, so both name key.
 */
static int run_with_key(xlreaper_ctx *ctx, uint32_t domid,
                        xlreaper__qemu_cmdline *cl, const char *seg)
{
    const char *eq = strchr(seg, '=');
    size_t n = eq ? (size_t)(eq - seg) : strlen(seg);
    char key[32];

    if (!eq && n > 2 && !strncmp(seg, "no", 2)) {
        seg += 2;
        n -= 2;
    }
    if (n >= sizeof(key)) {
        LOGD(ERROR, domid, "QEMU argument -run-with: a key is too long");
        return XLREAPER_ERROR_INVAL;
    }
    memcpy(key, seg, n);
    key[n] = '\0';
    if (!eq && (!strcmp(key, "user") || !strcmp(key, "chroot"))) {
        /* "user" is user=on to QEMU: a user named "on". */
        LOGD(ERROR, domid,
             "QEMU argument -run-with: %s without a value; refusing "
             "the command line",
             key);
        return XLREAPER_ERROR_INVAL;
    }
    for (unsigned i = 0; i < cl->num_run_with_keys; i++) {
        if (!strcmp(cl->run_with_keys[i], key)) {
            LOGD(ERROR, domid,
                 "the QEMU command line gives -run-with %s= twice; "
                 "refusing it",
                 key);
            return XLREAPER_ERROR_INVAL;
        }
    }
    if (cl->num_run_with_keys == XLREAPER__MAX_RUN_WITH_KEYS) {
        LOGD(ERROR, domid,
             "the QEMU command line gives too many -run-with "
             "keys");
        return XLREAPER_ERROR_INVAL;
    }
    memcpy(cl->run_with_keys[cl->num_run_with_keys++], key, n + 1);
    return 0;
}

/* -run-with's user= and chroot=, into cl; every key counted. */
static int parse_run_with(xlreaper_ctx *ctx, uint32_t domid,
                          xlreaper__qemu_cmdline *cl, const char *value,
                          char *seg)
{
    const char *p = value;
    bool too_long;
    int rc;

    if (++cl->num_run_with > 2) {
        LOGD(ERROR, domid,
             "-run-with given %u times: libxl gives it at most twice "
             "(chroot=, user=); refusing the command line",
             cl->num_run_with);
        return XLREAPER_ERROR_INVAL;
    }
    while (next_segment(&p, seg, &too_long)) {
        bool user = !strncmp(seg, "user=", 5);
        bool chroot = !strncmp(seg, "chroot=", 7);

        if (!*seg)
            continue; /* QemuOpts skips an empty element */
        if (too_long && !user && !chroot) {
            LOGD(ERROR, domid, "QEMU argument -run-with: a key is too long");
            return XLREAPER_ERROR_INVAL;
        }
        rc = run_with_key(ctx, domid, cl, seg);
        if (rc)
            return rc;
        if (!user && !chroot)
            continue;
        if (too_long) {
            LOGD(ERROR, domid,
                 "QEMU argument -run-with: a value is too "
                 "long");
            return XLREAPER_ERROR_INVAL;
        }
        if (user) {
            if (cl->runas) {
                LOGD(ERROR, domid,
                     "the QEMU command line names the user "
                     "to run as twice");
                return XLREAPER_ERROR_INVAL;
            }
            /* Too long for a uid:gid: kept empty, which no check
             * accepts. */
            if (strlen(seg + 5) < sizeof(cl->runas_buf))
                memcpy(cl->runas_buf, seg + 5, strlen(seg + 5) + 1);
            cl->runas = cl->runas_buf;
            cl->runas_form = XLREAPER__QEMU_FORM_RUN_WITH;
        } else {
            if (cl->chroot) {
                LOGD(ERROR, domid,
                     "the QEMU command line names a chroot "
                     "twice");
                return XLREAPER_ERROR_INVAL;
            }
            memcpy(cl->chroot_buf, seg + 7, strlen(seg + 7) + 1);
            cl->chroot = cl->chroot_buf;
            cl->chroot_form = XLREAPER__QEMU_FORM_RUN_WITH;
        }
    }
    return 0;
}

int xlreaper__qemu_cmdline_parse(xlreaper_ctx *ctx, uint32_t domid,
                                 char *const argv[],
                                 xlreaper__qemu_cmdline *cl)
{
    const char *unknown = NULL; /* the argument before, if an option we
                                 * know nothing of */
    char *seg;
    int rc = 0;

    memset(cl, 0, sizeof(*cl));
    seg = malloc(SEG_MAX);
    if (!seg)
        return XLREAPER_ERROR_NOMEM;

    for (size_t i = 1; argv[i]; i++) {
        const char *opt = argv[i], *val = argv[i + 1];
        xlreaper__qemu_opt kind = xlreaper__qemu_opt_kind(opt, strlen(opt));
        bool fd_opt = kind == XLREAPER__QOPT_FDS;
        bool incoming = kind == XLREAPER__QOPT_INCOMING;
        bool runas = kind == XLREAPER__QOPT_RUNAS;
        bool run_with = kind == XLREAPER__QOPT_RUN_WITH;

        if (kind == XLREAPER__QOPT_NONE || kind == XLREAPER__QOPT_FLAG ||
            kind == XLREAPER__QOPT_UNKNOWN) {
            /* After an option that may take it, it is that option's
             * value: not counted, and so added again (a harmless
             * repetition of a flag). */
            if (kind == XLREAPER__QOPT_FLAG && !unknown &&
                is_option_n(opt, strlen(opt), "xen-domid-restrict"))
                cl->domid_restrict = true;
            unknown = kind == XLREAPER__QOPT_UNKNOWN ? opt : NULL;
            continue;
        }
        if (unknown) {
            LOGD(ERROR, domid,
                 "QEMU argument %.64s follows %.64s, an option that may "
                 "take it as its value; refusing the ambiguous command "
                 "line",
                 opt, unknown);
            rc = XLREAPER_ERROR_INVAL;
            goto out;
        }
        if (kind == XLREAPER__QOPT_XEN_DOMID) {
            /* The wrapper reads the domid itself (find_domid); here its
             * value is only stepped over, as QEMU does. */
            if (val)
                i++;
            continue;
        }
        if (!val) {
            LOGD(ERROR, domid, "QEMU argument %s has no value", opt);
            rc = XLREAPER_ERROR_INVAL;
            goto out;
        }
        i++;
        if (fd_opt) {
            rc = parse_fd_value(ctx, domid, cl, opt, val, seg);
        } else if (incoming) {
            unsigned long n;

            if (!strncmp(val, "fd:", 3))
                rc = add_keep(ctx, domid, cl, opt, val + 3);
            /* add_keep took it as a descriptor above 2. */
            if (!strncmp(val, "fd:", 3) && !rc &&
                !xlreaper__parse_ulong(val + 3, strlen(val + 3), INT_MAX, &n))
                cl->incoming_fd = (int)n;
        } else if (runas) {
            if (cl->runas) {
                LOGD(ERROR, domid,
                     "the QEMU command line names the user "
                     "to run as twice");
                rc = XLREAPER_ERROR_INVAL;
            }
            cl->runas = val;
            cl->runas_form = XLREAPER__QEMU_FORM_OPTION;
        } else if (run_with) {
            rc = parse_run_with(ctx, domid, cl, val, seg);
        } else {
            if (cl->chroot) {
                LOGD(ERROR, domid,
                     "the QEMU command line names a chroot "
                     "twice");
                rc = XLREAPER_ERROR_INVAL;
            }
            cl->chroot = val;
            cl->chroot_form = XLREAPER__QEMU_FORM_OPTION;
        }
        if (rc)
            goto out;
    }
    cl->last_unknown = unknown;

out:
    free(seg);
    return rc;
}

/*
 * An id of a -runas uid:gid.  QEMU reads each with strtoul base 0, so
 * "010" is 8 to it and "0x10" 16: a leading 0 is refused, or a line we
 * read as this domain's uid could make QEMU take another.  (uid_t)-1
 * means "unchanged" to setresuid and is no id.
 */
static int parse_id(const char *s, size_t len, uint32_t *id_r)
{
    uint64_t v = 0;

    if (!len || len > 10 || (s[0] == '0' && len > 1))
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v >= UINT32_MAX)
        return -1;
    *id_r = (uint32_t)v;
    return 0;
}

int xlreaper__qemu_parse_ids(const char *s, uid_t *uid_r, gid_t *gid_r)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    uint32_t u, g;

    if (!colon || parse_id(s, (size_t)(colon - s), &u) < 0 ||
        parse_id(colon + 1, strlen(colon + 1), &g) < 0)
        return -1;
    *uid_r = u;
    *gid_r = g;
    return 0;
}

/* ---------- which forms the installed QEMU takes ---------- */

/*
 * Options are listed from column 0 as "-name args  help", continued on
 * lines that start with blanks.  -run-with's keys are read from its
 * whole entry: QEMU 9.1 to 10.0 list them on the first line
 * ("-run-with [async-teardown=on|off][,chroot=dir][user=username|
 * uid:gid]"), 10.1 moves user= to a continuation line.
 */
unsigned xlreaper__qemu_help_features(const char *text, size_t len)
{
    bool in_run_with = false;
    unsigned f = 0;
    size_t i = 0;

    while (i < len) {
        const char *line = text + i;
        const char *nl = memchr(line, '\n', len - i);
        size_t l = nl ? (size_t)(nl - line) : len - i;

        if (l && line[0] != ' ' && line[0] != '\t')
            in_run_with = l > 10 && !strncmp(line, "-run-with", 9) &&
                          (line[9] == ' ' || line[9] == '\t');
        if (l > 7 && !strncmp(line, "-runas", 6) &&
            (line[6] == ' ' || line[6] == '\t'))
            f |= XLREAPER__QEMU_HAS_RUNAS;
        else if (l > 8 && !strncmp(line, "-chroot", 7) &&
                 (line[7] == ' ' || line[7] == '\t'))
            f |= XLREAPER__QEMU_HAS_CHROOT;
        else if (in_run_with) {
            if (memmem(line, l, "user=", 5))
                f |= XLREAPER__QEMU_HAS_RUN_WITH_USER;
            if (memmem(line, l, "chroot=", 7))
                f |= XLREAPER__QEMU_HAS_RUN_WITH_CHROOT;
        }
        i += l + 1;
    }
    return f;
}

#define PROBE_OUTPUT_MAX (1u << 20)
#define PROBE_TIMEOUT_MS 10000

/*
 * Why -help and not the version: distributions backport (Debian's 7.2
 * is "7.2+dfsg-7+deb12u18") and a build may leave options out; the help
 * text lists what this binary parses.  Upstream libxl (4.20+) asks a
 * running QEMU over QMP (query-command-line-options) instead; that needs
 * a QEMU started with a QMP socket, while `-help` exits at once (35 ms
 * for Debian's 7.2) and is only run when the command line lacks the
 * option, which libxl's does not when dm_restrict is on.  The same text
 * serves 7.2 (-runas, -chroot) and 10.0 (-run-with only: 9.0 removed
 * -chroot and 10.0 -runas).
 */
int xlreaper__qemu_probe(xlreaper_ctx *ctx, uint32_t domid, const char *path,
                         unsigned *features_r)
{
    char *argv[] = { (char *)path, (char *)"-help", NULL };
    xlreaper__report_pipe p = { -1, -1 };
    xlreaper__exec_args a = { .path = path, .argv = argv, .envp = environ };
    xlreaper__wait w = {
        /* Root's child in our process group: only root or our terminal
         * (^Z) can stop it, and a stop is waited out as before. */
        .mode = XLREAPER__WAIT_PROGRAM,
        .rfd = -1,
        .size = PROBE_OUTPUT_MAX,
    };
    int rc, null = -1;

    w.buf = malloc(PROBE_OUTPUT_MAX);
    if (!w.buf)
        return XLREAPER_ERROR_NOMEM;
    rc = xlreaper__report_pipe_open(ctx, &p);
    if (rc)
        goto out;
    /* Above 2, so that no dup onto a standard descriptor in the child
     * can clobber another one it still needs (a caller with 0-2
     * closed). */
    p.wfd = xlreaper__fd_above_stdio(p.wfd);
    null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0)
        null = xlreaper__fd_above_stdio(null);
    if (p.wfd < 0 || null < 0) {
        LOGED(ERROR, domid, "/dev/null and a pipe for %s -help", path);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    a.in_fd = a.err_fd = null;
    a.out_fd = p.wfd;
    w.pid = fork();
    if (w.pid < 0) {
        LOGED(ERROR, domid, "fork for %s -help", path);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (w.pid == 0)
        xlreaper__exec_child(&a); /* raw calls only: we may be threaded */
    close(null);
    null = -1;
    close(p.wfd);
    p.wfd = -1;

    w.rfd = p.rfd;
    w.deadline_us = xlreaper__now_us() + PROBE_TIMEOUT_MS * 1000ull;
    rc = xlreaper__wait_bounded(ctx, &w);
    if (rc)
        goto out;
    if (w.end != XLREAPER__HELPER_DONE || !WIFEXITED(w.status) ||
        WEXITSTATUS(w.status) != 0) {
        LOGD(ERROR, domid,
             "%s -help %s; cannot tell which options it "
             "takes",
             path,
             w.end == XLREAPER__HELPER_OVERFLOW ? "said too much"
             : w.end != XLREAPER__HELPER_DONE   ? "did not finish"
                                                : "failed");
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    *features_r = xlreaper__qemu_help_features(w.buf, w.len);
    LOGD(DEBUG, domid, "%s -help: features %#x", path, *features_r);
    rc = 0;

out:
    xlreaper__close_keep_errno(null);
    xlreaper__report_pipe_close(&p);
    free(w.buf);
    return rc;
}
