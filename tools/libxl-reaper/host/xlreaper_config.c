/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_config.c - the config file: xl.cfg syntax, read by libxlutil.
 *
 * libxlutil checks the syntax and converts values; the ranges, the key
 * names and the uid range against passwd are checked here, because
 * libxlutil accepts 0, huge numbers and unknown keys without a word
 * (docs/facts.md F7).  Every key is in keys[] below, once.
 */
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxlutil.h>

#include "xlreaper_host.h"

#define CONFIG_MAX_BYTES (1u << 20)
#define MAX_KEYS_SEEN 128

typedef enum {
    KEY_UNSIGNED, /* unsigned field, min..max */
    KEY_UID,      /* a uid, settled against passwd later */
    KEY_PATH,     /* absolute path, owned string field */
    KEY_ENUM,     /* string from choices[], stored as its index */
    KEY_BOOL,     /* 0 or 1 */
    KEY_U64,      /* uint64_t field, min..max (rlimits) */
    KEY_PROM,     /* a textfile-collector file: absolute, *.prom; ""
                   * for none (NULL) */
} key_type;

typedef struct {
    const char *key;
    key_type type;
    size_t offset; /* into xlreaper_config */
    long min, max;
    const char *const *choices;
} key_spec;

static const char *const gid_modes[] = { "per-domain", "range-base", NULL };
/* In the order of xlreaper_uid_switch. */
static const char *const uid_switches[] = { "exec", "runas", NULL };

/* Where each rlimit sits in cfg->rlimits[]; see config_init. */
enum {
    RL_NOFILE,
    RL_FSIZE,
    RL_CORE,
    RL_MSGQUEUE,
    RL_LOCKS,
    RL_MEMLOCK,
    RL_NUM
};
_Static_assert(RL_NUM <= XLREAPER_MAX_RLIMITS, "rlimits[] too small");

#define F(field) offsetof(xlreaper_config, field)
#define UNSIGNED(k, field, lo, hi)                                            \
    {                                                                         \
        k, KEY_UNSIGNED, F(field), lo, hi, NULL                               \
    }
#define PATH(k, field)                                                        \
    {                                                                         \
        k, KEY_PATH, F(field), 0, 0, NULL                                     \
    }
#define PROM(k, field)                                                        \
    {                                                                         \
        k, KEY_PROM, F(field), 0, 0, NULL                                     \
    }
#define ENUM(k, field, ch)                                                    \
    {                                                                         \
        k, KEY_ENUM, F(field), 0, 0, ch                                       \
    }
#define BOOL(k, field)                                                        \
    {                                                                         \
        k, KEY_BOOL, F(field), 0, 1, NULL                                     \
    }
#define U64(k, field, lo, hi)                                                 \
    {                                                                         \
        k, KEY_U64, F(field), lo, hi, NULL                                    \
    }
#define RLIM(k, i, lo, hi) U64(k, rlimits[i].limit, lo, hi)

static const key_spec keys[] = {
    { "dm_uid_base", KEY_UID, 0, 1, (long)UINT32_MAX, NULL },
    { "reaper_uid", KEY_UID, 0, 1, (long)UINT32_MAX - 1, NULL },
    ENUM("dm_gid_mode", dm_gid_mode, gid_modes),
    PATH("lock_file", lock_file),
    UNSIGNED("lock_timeout_ms", lock_timeout_ms, 0, 3600000),
    UNSIGNED("reap_timeout_ms", reap_timeout_ms, 10, 3600000),
    UNSIGNED("nproc_limit", nproc_limit, 1, 1 << 20),
    /* Spawn: the limits a DM starts with.  Byte limits stop at 1 TiB,
     * "unlimited" enough; nofile at the kernel's default fs.nr_open,
     * above which setrlimit fails. */
    RLIM("nofile_limit", RL_NOFILE, 16, 1 << 20),
    RLIM("fsize_limit", RL_FSIZE, 0, 1L << 40),
    RLIM("core_limit", RL_CORE, 0, 1L << 40),
    RLIM("msgqueue_limit", RL_MSGQUEUE, 0, 1L << 30),
    RLIM("locks_limit", RL_LOCKS, 0, 1 << 20),
    RLIM("memlock_limit", RL_MEMLOCK, 0, 1L << 40),
    ENUM("uid_switch", uid_switch, uid_switches),
    BOOL("reap_stale", reap_stale),
    BOOL("unshare_ipc_mount", unshare_ipc_mount),
    BOOL("unshare_net", unshare_net),
    BOOL("dumpable", dumpable),
    PATH("chroot_base", chroot_base),
    BOOL("add_dm_restrict", add_dm_restrict),
    PATH("cgroup_parent", cgroup_parent),
    /* Bytes; 0: none written.  Up to 1 TiB, as the byte rlimits. */
    U64("dm_memory_max", dm_memory_max, 0, 1L << 40),
    /* xl.cfg syntax has no negative number; a DM is never protected. */
    UNSIGNED("dm_oom_score_adj", dm_oom_score_adj, 0, 1000),
    PATH("qemu_path", qemu_path),
    /* Up to where the audit's count of a DM's locks stays within its
     * byte bound (xlreaper_audit_facts.c). */
    UNSIGNED("dm_max_file_locks", dm_max_file_locks, 1, 1 << 18),
    UNSIGNED("sweep_interval_s", sweep_interval_s, 1, 86400),
    PROM("metrics_file", metrics_file),
};

#undef F
#undef UNSIGNED
#undef PATH
#undef PROM
#undef ENUM
#undef BOOL
#undef U64
#undef RLIM

#define NUM_KEYS (sizeof(keys) / sizeof(keys[0]))

const char *xlreaper_config_key_name(unsigned i)
{
    return i < NUM_KEYS ? keys[i].key : NULL;
}

int xlreaper_config_key_value(const xlreaper_config *cfg, unsigned i,
                              char *buf, size_t size)
{
    const key_spec *k;
    const char *field;
    int n;

    if (i >= NUM_KEYS)
        return XLREAPER_ERROR_INVAL;
    k = &keys[i];
    field = (const char *)cfg + k->offset;
    switch (k->type) {
    case KEY_UID:
        n = snprintf(buf, size, "%lu",
                     (unsigned long)(strcmp(k->key, "reaper_uid")
                                         ? cfg->dm_uid_base
                                         : cfg->reaper_uid));
        break;
    case KEY_UNSIGNED:
        n = snprintf(buf, size, "%u", *(const unsigned *)field);
        break;
    case KEY_U64:
        n = snprintf(buf, size, "%llu",
                     (unsigned long long)*(const uint64_t *)field);
        break;
    case KEY_BOOL:
        n = snprintf(buf, size, "%d", *(const bool *)field ? 1 : 0);
        break;
    case KEY_ENUM:
        n = snprintf(buf, size, "\"%s\"", k->choices[*(const int *)field]);
        break;
    case KEY_PATH:
    case KEY_PROM: {
        const char *v = *(const char *const *)field;
        if (!v) {
            if (size)
                buf[0] = '\0';
            return 1;
        }
        n = snprintf(buf, size, "\"%s\"", v);
        break;
    }
    default: return XLREAPER_ERROR_INVAL;
    }
    return n < 0 || (size_t)n >= size ? XLREAPER_ERROR_INVAL : 0;
}

/* Defaults. */
#define DEFAULT_LOCK_TIMEOUT_MS 10000
#define DEFAULT_REAP_TIMEOUT_MS 5000
/*
 * RLIMIT_NPROC counts every thread of the DM uid.  QEMU 7.2 measured here
 * (qemu-system-i386 -machine pc with -qtest, whose dummy vCPU threads are
 * the model Xen's accelerator uses, plus a disk and VNC) runs 4 threads
 * plus one per vCPU when idle; under disk load its block thread pool adds
 * up to THREAD_POOL_MAX_THREADS_DEFAULT = 64 workers per AioContext, and
 * a failed thread creation aborts QEMU.  An HVM guest may have 128 vCPUs:
 * 4 + 128 + 64 = 196, so 256 leaves margin and still bounds a fork bomb.
 */
#define DEFAULT_NPROC_LIMIT 256
/*
 * A DM may hold nproc_limit x nofile_limit open files, and the host
 * refuses a new one to all but CAP_SYS_ADMIN past fs.file-max
 * (docs/facts.md F40): 256 x 192 = 49,152 keeps one DM within 1/8 of a
 * 4 GiB dom0's file-max (about 400,000: a tenth of its memory in KiB,
 * less a reserve), where 4096 let one DM take 2.5 times all of it.
 * QEMU 7.2 measured here (-machine pc, 4 vCPUs, four IDE disks, a NIC,
 * VNC, two QMP sockets, a serial pty) holds 22 descriptors; Xen's
 * backends add a few a device (an event channel and a grant handle
 * each) and one a VNC client: 192 leaves several times that.
 */
#define DEFAULT_NOFILE_LIMIT 192
/* Upstream libxl's value.  QEMU 10 backs each display surface with a
 * memfd, which counts against RLIMIT_FSIZE: under 256 KiB a QEMU 10 DM
 * dies of SIGXFSZ at start (measured on Debian 13 in the e2e image; 8
 * MiB was enough).  Not raised here: libxl's preexec has already set
 * 256 KiB as the hard limit before the wrapper runs, and raising it
 * needs CAP_SYS_RESOURCE, which root lacks in some containers (the spawn
 * then clamps to the inherited limit: plan_rlimits); a Debian 13 host
 * sets fsize_limit itself, and the package built there ships it set
 * (debian/rules; xl-reaper.conf(5)). */
#define DEFAULT_FSIZE_LIMIT (256 * 1024)
#define DEFAULT_CHROOT_BASE "/var/run/xen"
#define DEFAULT_QEMU_PATH "/usr/libexec/xen-qemu-system-i386"
#define DEFAULT_SWEEP_INTERVAL_S 60
/*
 * The kernel bounds no process's file locks (RLIMIT_LOCKS is ignored) and
 * no longer charges them to a memory cgroup (docs/facts.md F18): the
 * audit's count is the only bound.  QEMU's image locking (OFD locks,
 * block/file-posix.c) takes one byte at 100 + i for each of the five
 * permissions it holds and one at 200 + i for each it does not share:
 * at most ten an image.  1024 leaves room for a hundred images.
 */
#define DEFAULT_DM_MAX_FILE_LOCKS 1024
/*
 * The OOM killer ranks a process by its pages plus oom_score_adj
 * thousandths of the host's memory (oom_badness, mm/oom_kill.c): at
 * 1000 every DM ranks above every process at 0 or below whatever their
 * sizes (xenstored, xl, libvirtd, the daemon at -1000), and among DMs,
 * all at 1000, the largest goes first: the one that allocates.  Set by
 * root between fork and execve, it is also the DM's floor: lowering it
 * needs CAP_SYS_RESOURCE, which a DM has not (docs/facts.md F30).
 */
#define DEFAULT_DM_OOM_SCORE_ADJ 1000
/*
 * memory.max of <cgroup_parent>/dm-<domid>.  The guest's RAM is not the
 * DM's: QEMU maps it from Xen (privcmd, VM_PFNMAP), charged to no
 * cgroup (docs/facts.md F31).  What is charged is QEMU's own memory:
 * QEMU 7.2 running SeaBIOS with a disk, two vCPUs and VNC held 18-20
 * MiB anonymous (RssAnon; 41-44 MiB resident with its libraries), and
 * upstream libxl gives the same QEMU a whole Linux stubdomain of 128
 * MiB (LIBXL_LINUX_STUBDOM_MEM), kernel included.  256 MiB is twice
 * that, room for a disk's page cache (reclaimed, not OOM-killed, at
 * the bound) and QEMU 10's display memfds.
 */
#define DEFAULT_DM_MEMORY_MAX (256ull << 20)
#define DM_MEMORY_MIN (1u << 20)
/* Where Debian's prometheus-node-exporter reads textfiles
 * (--collector.textfile.directory in /etc/default/prometheus-node-exporter). */
#define DEFAULT_METRICS_FILE "/var/lib/prometheus/node-exporter/xl-reaper.prom"

void xlreaper__config_init(xlreaper_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->dm_gid_mode = XLREAPER_GID_PER_DOMAIN;
    cfg->lock_timeout_ms = DEFAULT_LOCK_TIMEOUT_MS;
    cfg->reap_timeout_ms = DEFAULT_REAP_TIMEOUT_MS;
    cfg->nproc_limit = DEFAULT_NPROC_LIMIT;
    cfg->rlimits[RL_NOFILE] = (xlreaper_rlimit){ RLIMIT_NOFILE, "nofile_limit",
                                                 DEFAULT_NOFILE_LIMIT };
    cfg->rlimits[RL_FSIZE] =
        (xlreaper_rlimit){ RLIMIT_FSIZE, "fsize_limit", DEFAULT_FSIZE_LIMIT };
    cfg->rlimits[RL_CORE] = (xlreaper_rlimit){ RLIMIT_CORE, "core_limit", 0 };
    cfg->rlimits[RL_MSGQUEUE] =
        (xlreaper_rlimit){ RLIMIT_MSGQUEUE, "msgqueue_limit", 0 };
    /* Linux has ignored RLIMIT_LOCKS since 2.4.25; set as upstream does. */
    cfg->rlimits[RL_LOCKS] =
        (xlreaper_rlimit){ RLIMIT_LOCKS, "locks_limit", 0 };
    cfg->rlimits[RL_MEMLOCK] =
        (xlreaper_rlimit){ RLIMIT_MEMLOCK, "memlock_limit", 0 };
    cfg->num_rlimits = RL_NUM;
    cfg->uid_switch = XLREAPER_UID_SWITCH_EXEC;
    cfg->dm_max_file_locks = DEFAULT_DM_MAX_FILE_LOCKS;
    cfg->dm_oom_score_adj = DEFAULT_DM_OOM_SCORE_ADJ;
    cfg->dm_memory_max = DEFAULT_DM_MEMORY_MAX;
    cfg->sweep_interval_s = DEFAULT_SWEEP_INTERVAL_S;
}

void xlreaper__config_dispose(xlreaper_config *cfg)
{
    for (size_t i = 0; i < NUM_KEYS; i++) {
        if (keys[i].type == KEY_PATH || keys[i].type == KEY_PROM) {
            char **p = (char **)((char *)cfg + keys[i].offset);
            free(*p);
            *p = NULL;
        }
    }
    free((char *)cfg->path);
    cfg->path = NULL;
    free(cfg->subid_overlap);
    cfg->subid_overlap = NULL;
}

static int set_default_strings(xlreaper_config *cfg)
{
    cfg->lock_file = strdup(XLREAPER_DEFAULT_LOCK_FILE);
    cfg->chroot_base = strdup(DEFAULT_CHROOT_BASE);
    cfg->qemu_path = strdup(DEFAULT_QEMU_PATH);
    cfg->metrics_file = strdup(DEFAULT_METRICS_FILE);
    return cfg->lock_file && cfg->chroot_base && cfg->qemu_path &&
                   cfg->metrics_file
               ? 0
               : XLREAPER_ERROR_NOMEM;
}

/* ---------- reading the file ---------- */

/* Reads path into *text_r; 1 if absent, 0 if read, or an error. */
static int read_config_text(xlreaper_ctx *ctx, const char *path, char **text_r,
                            size_t *len_r)
{
    struct stat st, trusted;
    char *text = NULL;
    ssize_t got;
    int fd, rc;

    /* Whoever can write this file, or a directory above it, chooses
     * which uids get killed. */
    rc = xlreaper__path_trust_log(ctx, "config file", path, 0, &trusted);
    if (rc == 1)
        return 1;
    if (rc)
        return XLREAPER_ERROR_INVAL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        LOGE(ERROR, "%s: cannot open config file", path);
        return XLREAPER_ERROR_INVAL;
    }
    if (fstat(fd, &st) < 0) {
        LOGE(ERROR, "%s: fstat", path);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        LOG(ERROR, "%s: not a regular file", path);
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    /* What was judged is what was opened: a path changed in between
     * (a symlink swapped) is not trusted. */
    if (st.st_dev != trusted.st_dev || st.st_ino != trusted.st_ino) {
        LOG(ERROR,
            "config file %s changed while it was checked; "
            "refusing it",
            path);
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    if (st.st_size > CONFIG_MAX_BYTES) {
        LOG(ERROR, "%s: larger than %u bytes", path, CONFIG_MAX_BYTES);
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    text = malloc((size_t)st.st_size + 1);
    if (!text) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    got = xlreaper__read_all(fd, text, (size_t)st.st_size + 1);
    if (got < 0) {
        LOGE(ERROR, "%s: read", path);
        rc = XLREAPER_ERROR_FAIL;
        goto out;
    }
    if (got > st.st_size) {
        LOG(ERROR, "%s: changed while being read", path);
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    text[got] = '\0';
    *text_r = text;
    *len_r = (size_t)got;
    text = NULL;
    rc = 0;

out:
    free(text);
    close(fd);
    return rc;
}

/* ---------- keys ---------- */

typedef struct {
    xlreaper_ctx *ctx;
    const char *path;
    unsigned num;
    struct {
        char key[65];
        unsigned line;
        const char *value; /* as written, value_len bytes */
        size_t value_len;
    } seen[MAX_KEYS_SEEN];
    unsigned bad;
} key_walk;

static const key_spec *find_key(const char *key)
{
    for (size_t i = 0; i < NUM_KEYS; i++)
        if (!strcmp(keys[i].key, key))
            return &keys[i];
    return NULL;
}

/*
 * Logs libxlutil's report (one message a line) as errors, less its guess
 * after a lexical error that the file "looks like it contains Python
 * code", three lines of it: this file never was Python, and the guess
 * buries the one line that says where the error is.
 */
/*
 * n bytes of s as a message can show them: printable ASCII as it is,
 * anything else as \\r, \\t or \\xNN, so that a byte of the file never
 * reaches a terminal raw; at most max bytes of s, then "...".  buf
 * holds max * 4 + 8.
 */
#define ESCAPED_MAX 64 /* of a value */
#define ESCAPED_SIZE (ESCAPED_MAX * 4 + 8)
#define REPORT_MAX 400 /* of one of libxlutil's lines */
static const char *escaped_n(const char *s, size_t n, size_t max, char *buf,
                             size_t size)
{
    size_t o = 0;

    for (size_t i = 0; i < n && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];

        if (i == max) {
            o += (size_t)snprintf(buf + o, size - o, "...");
            break;
        }
        if (c == '\r')
            o += (size_t)snprintf(buf + o, size - o, "\\r");
        else if (c == '\t')
            o += (size_t)snprintf(buf + o, size - o, "\\t");
        else if (c < 0x20 || c >= 0x7f)
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = '\0';
    return buf;
}
#define escaped(s, n, buf, size) escaped_n(s, n, ESCAPED_MAX, buf, size)

/*
 * libxlutil numbers the newline token that ends line N as line N - 1
 * (its lexer takes the newline's line after counting it, less one:
 * measured with 4.17, "x\n" alone is reported at :0:); a syntax error
 * "near <newline>" is said at its real line.  Every byte that is not
 * printable is escaped: its "near `...'" echoes the file.
 */
static void log_report(xlreaper_ctx *ctx, const char *path, char *report)
{
    char shown[REPORT_MAX * 4 + 8];
    char *save = NULL;
    size_t n = strlen(path);

    for (char *l = strtok_r(report, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        unsigned long line;
        char *rest;

        if (!strncmp(l, "warning:", 8) && strstr(l, "Python"))
            continue;
        if (!strncmp(l, path, n) && l[n] == ':' && l[n + 1] >= '0' &&
            l[n + 1] <= '9' &&
            (line = strtoul(l + n + 1, &rest, 10)) < UINT_MAX &&
            *rest == ':') {
            rest++;
            if (strstr(rest, "near <newline>"))
                line++;
            LOG(ERROR, "%s:%lu:%s", path, line,
                escaped_n(rest, strlen(rest), REPORT_MAX, shown,
                          sizeof(shown)));
            continue;
        }
        LOG(ERROR, "%s",
            escaped_n(l, strlen(l), REPORT_MAX, shown, sizeof(shown)));
    }
}

/* The line number in libxlutil's first message, "PATH:LINE: ...", or 0. */
static unsigned report_line(const char *report, const char *path)
{
    size_t n = strlen(path);
    char *end;
    unsigned long line;

    if (strncmp(report, path, n) || report[n] != ':')
        return 0;
    line = strtoul(report + n + 1, &end, 10);
    return *end == ':' && line <= UINT_MAX ? (unsigned)line : 0;
}

/*
 * xl.cfg syntax has no negative numbers: libxlutil's lexer calls
 * "key = -5" a lexical error.  When the line it refused is one, says
 * so, with the key's range: 1 if it did, 0 if the line is something
 * else.
 */
static int say_negative(xlreaper_ctx *ctx, const char *path, const char *text,
                        size_t len, unsigned line)
{
    const char *p = text, *end = text + len, *k, *v;
    const key_spec *spec;
    char key[65];
    size_t kn, vn;

    for (unsigned l = 1; l < line && p < end; p++)
        l += *p == '\n';
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    for (k = p; p < end && ((*p >= 'a' && *p <= 'z') || *p == '_' ||
                            *p == '.' || (p > k && *p >= '0' && *p <= '9'));
         p++)
        ;
    kn = (size_t)(p - k);
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (!kn || kn >= sizeof(key) || p >= end || *p++ != '=')
        return 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || (*p != '-' && *p != '+'))
        return 0;
    for (v = p++; p < end && (*p == ' ' || (*p >= '0' && *p <= '9')); p++)
        ;
    vn = (size_t)(p - v);
    while (vn > 1 && v[vn - 1] == ' ')
        vn--;
    if (vn < 2 || v[vn - 1] < '0' || v[vn - 1] > '9')
        return 0;
    memcpy(key, k, kn);
    key[kn] = '\0';
    /* What the same line would get once it parsed. */
    spec = find_key(key);
    if (!spec)
        LOG(ERROR, "%s:%u: unknown key %s", path, line, key);
    else if (spec->type == KEY_PATH || spec->type == KEY_ENUM)
        LOG(ERROR, "%s:%u: %s must be a quoted string", path, line, key);
    else
        LOG(ERROR,
            "%s:%u: %s = %.*s: %s; %s takes "
            "%ld..%ld",
            path, line, key, (int)vn, v,
            v[0] == '-' ? "a negative number"
                        : "a number is written without a sign",
            key, spec->min, spec->max);
    return 1;
}

static int key_walk_one(void *arg, const char *key, unsigned line,
                        const char *value, size_t value_len)
{
    key_walk *w = arg;
    xlreaper_ctx *ctx = w->ctx;

    for (unsigned i = 0; i < w->num; i++) {
        if (!strcmp(w->seen[i].key, key)) {
            LOG(ERROR, "%s:%u: %s is set again (first set at line %u)",
                w->path, line, key, w->seen[i].line);
            w->bad++;
            return 0;
        }
    }
    if (!find_key(key)) {
        LOG(ERROR, "%s:%u: unknown key %s", w->path, line, key);
        w->bad++;
    }
    if (w->num == MAX_KEYS_SEEN) {
        LOG(ERROR, "%s:%u: more than %u settings", w->path, line,
            MAX_KEYS_SEEN);
        w->bad++;
        return 1;
    }
    snprintf(w->seen[w->num].key, sizeof(w->seen[0].key), "%s", key);
    w->seen[w->num].line = line;
    w->seen[w->num].value = value;
    w->seen[w->num].value_len = value_len;
    w->num++;
    return 0;
}

static unsigned key_seen(const key_walk *w, const char *key)
{
    for (unsigned i = 0; i < w->num; i++)
        if (!strcmp(w->seen[i].key, key))
            return i;
    return 0;
}

/*
 * A number as written: decimal digits only, no sign, no leading zero
 * (other than 0 itself), no quotes.  libxlutil reads numbers with
 * strtol(..., 0): "0500000" would be octal 163840 and "0x20" hex, and
 * it takes a quoted "5" as 5; xl-reaper.conf(5) says numbers are
 * decimal.  0 and *v_r, or an error (logged: the key, the line and the
 * value as written).
 */
static int parse_decimal(xlreaper_ctx *ctx, const char *path,
                         const key_spec *k, unsigned line, const char *v,
                         size_t n, long *v_r)
{
    char shown[ESCAPED_SIZE];
    unsigned long long x = 0;
    const char *why = NULL;

    escaped(v, n, shown, sizeof(shown));
    if (!n || v[0] == '[') {
        LOG(ERROR, "%s:%u: %s must be a number", path, line, k->key);
        return XLREAPER_ERROR_INVAL;
    }
    if (v[0] == '"' || v[0] == '\'')
        why = "a number is written without quotes";
    else if (v[0] == '+' || v[0] == '-')
        why = "a number is written without a sign";
    else if (n > 1 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
        why = "hexadecimal is not taken; write it in decimal";
    if (!why)
        for (size_t i = 0; i < n && !why; i++)
            if (v[i] < '0' || v[i] > '9')
                why = "not a decimal number";
    if (!why && n > 1 && v[0] == '0')
        why = "a leading zero is not taken (libxlutil would read it as "
              "octal); write the number in decimal without it";
    if (why) {
        LOG(ERROR, "%s:%u: %s must be a number: %s = %s: %s", path, line,
            k->key, k->key, shown, why);
        return XLREAPER_ERROR_INVAL;
    }
    for (size_t i = 0; i < n; i++) {
        x = x * 10 + (unsigned)(v[i] - '0');
        if (x > (unsigned long long)k->max) {
            LOG(ERROR, "%s:%u: %s = %s is too large (at most %ld)", path, line,
                k->key, shown, k->max);
            return XLREAPER_ERROR_INVAL;
        }
    }
    if ((long)x < k->min) {
        LOG(ERROR, "%s:%u: %s = %s is out of range %ld..%ld", path, line,
            k->key, shown, k->min, k->max);
        return XLREAPER_ERROR_INVAL;
    }
    *v_r = (long)x;
    return 0;
}

/* NAME.prom, NAME not empty. */
static bool prom_name_ok(const char *s)
{
    const char *base = strrchr(s, '/') + 1;
    size_t n = strlen(base);

    return n > 5 && !strcmp(base + n - 5, ".prom");
}

/*
 * A string value `check` can print back as it was read: printable
 * ASCII, no quote, no backslash.  libxlutil takes backslash escapes
 * ("\"", "\n", ...) which `check` would print unescaped, and control
 * characters or bytes that are not UTF-8 would reach its JSON; no path
 * of ours needs them (found by tests/fuzz).
 */
static bool printable(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
            return false;
    return true;
}

/* Reads one key's value into cfg (or *want_* for uids). */
static int load_key(xlreaper_ctx *ctx, const XLU_Config *xlu,
                    const key_walk *w, const key_spec *k, xlreaper_config *cfg,
                    long *want_base, long *want_reaper)
{
    unsigned seen = key_seen(w, k->key), line = w->seen[seen].line;
    const char *s;
    long v;
    int e;

    switch (k->type) {
    case KEY_UNSIGNED:
    case KEY_UID:
    case KEY_BOOL:
    case KEY_U64:
        e = parse_decimal(ctx, w->path, k, line, w->seen[seen].value,
                          w->seen[seen].value_len, &v);
        if (e)
            return e;
        /* A bound no QEMU starts under is a typing error, not a
         * choice; 0 is the way to say "none". */
        if (!strcmp(k->key, "dm_memory_max") && v && v < DM_MEMORY_MIN) {
            LOG(ERROR,
                "%s:%u: dm_memory_max = %ld is below %u bytes (1 MiB), "
                "under which no device model starts; 0 writes no bound",
                w->path, line, v, DM_MEMORY_MIN);
            return XLREAPER_ERROR_INVAL;
        }
        if (k->type == KEY_UID)
            *(!strcmp(k->key, "dm_uid_base") ? want_base : want_reaper) = v;
        else if (k->type == KEY_BOOL)
            *(bool *)((char *)cfg + k->offset) = v != 0;
        else if (k->type == KEY_U64)
            *(uint64_t *)((char *)cfg + k->offset) = (uint64_t)v;
        else
            *(unsigned *)((char *)cfg + k->offset) = (unsigned)v;
        return 0;

    case KEY_PATH:
    case KEY_PROM:
    case KEY_ENUM:
        e = xlu_cfg_get_string(xlu, k->key, &s, 1);
        if (e) {
            LOG(ERROR, "%s:%u: %s must be a quoted string", w->path, line,
                k->key);
            return XLREAPER_ERROR_INVAL;
        }
        if (!printable(s)) {
            LOG(ERROR,
                "%s:%u: %s must be printable ASCII without quotes or "
                "backslashes",
                w->path, line, k->key);
            return XLREAPER_ERROR_INVAL;
        }
        if (k->type == KEY_ENUM) {
            for (int i = 0; k->choices[i]; i++) {
                if (!strcmp(s, k->choices[i])) {
                    *(int *)((char *)cfg + k->offset) = i;
                    return 0;
                }
            }
            LOG(ERROR, "%s:%u: %s = \"%s\" is not one of the choices", w->path,
                line, k->key, s);
            return XLREAPER_ERROR_INVAL;
        }
        if (k->type == KEY_PROM && !s[0]) {
            char **field = (char **)((char *)cfg + k->offset);
            free(*field);
            *field = NULL; /* "": none */
            return 0;
        }
        if (strlen(s) >= PATH_MAX) {
            LOG(ERROR, "%s:%u: %s is %zu bytes long: a path is at most %d",
                w->path, line, k->key, strlen(s), PATH_MAX - 1);
            return XLREAPER_ERROR_INVAL;
        }
        if (s[0] != '/') {
            LOG(ERROR, "%s:%u: %s must be an absolute path", w->path, line,
                k->key);
            return XLREAPER_ERROR_INVAL;
        }
        if (k->type == KEY_PROM && !prom_name_ok(s)) {
            LOG(ERROR,
                "%s:%u: %s = \"%s\": the file name must end in .prom "
                "(node_exporter's textfile collector reads no other), or "
                "be \"\" for no metrics file",
                w->path, line, k->key, s);
            return XLREAPER_ERROR_INVAL;
        } else {
            char **field = (char **)((char *)cfg + k->offset);
            char *copy = strdup(s);
            if (!copy)
                return XLREAPER_ERROR_NOMEM;
            free(*field);
            *field = copy;
        }
        return 0;
    }
    return XLREAPER_ERROR_INVAL;
}

static int parse_text(xlreaper_ctx *ctx, const char *path, const char *text,
                      size_t len, xlreaper_config *cfg, long *want_base,
                      long *want_reaper)
{
    XLU_Config *xlu = NULL;
    FILE *report = NULL;
    char *report_text = NULL;
    size_t report_len = 0;
    key_walk *w = NULL;
    const char *cr;
    int e, rc;

    if (memchr(text, '\0', len)) {
        LOG(ERROR, "%s: binary data, not a config file", path);
        return XLREAPER_ERROR_INVAL;
    }
    /* A CR is no byte of xl.cfg syntax: libxlutil would say "near `\r':
     * lexical error", the one clue invisible on a terminal. */
    if ((cr = memchr(text, '\r', len))) {
        unsigned line = 1;

        for (const char *p = text; p < cr; p++)
            line += *p == '\n';
        if (cr + 1 == text + len || cr[1] == '\n')
            LOG(ERROR,
                "%s:%u: the line ends in CR (\\r): a DOS line ending; "
                "xl.cfg syntax wants LF alone (sed -i 's/\\r$//' FILE)",
                path, line);
        else
            LOG(ERROR, "%s:%u: a CR byte (\\r) in the line", path, line);
        return XLREAPER_ERROR_INVAL;
    }
    report = open_memstream(&report_text, &report_len);
    if (!report)
        return XLREAPER_ERROR_NOMEM;
    xlu = xlu_cfg_init(report, path);
    if (!xlu) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    e = xlu_cfg_readdata(xlu, text, (int)len);
    if (e) {
        fflush(report);
        /* libxlutil has said file:line and why; say it only if not. */
        if (report_text && *report_text) {
            if (!say_negative(ctx, path, text, len,
                              report_line(report_text, path)))
                log_report(ctx, path, report_text);
        } else {
            LOG(ERROR, "%s: not a valid config file", path);
        }
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }

    w = calloc(1, sizeof(*w));
    if (!w) {
        rc = XLREAPER_ERROR_NOMEM;
        goto out;
    }
    w->ctx = ctx;
    w->path = path;
    xlreaper__cfg_each_value(text, len, key_walk_one, w);
    if (w->bad) {
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    if (!w->num) {
        LOG(ERROR,
            "%s: the file sets nothing (remove it to use the "
            "defaults)",
            path);
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }
    for (unsigned i = 0; i < w->num; i++) {
        const key_spec *k = find_key(w->seen[i].key);

        /* The walk has refused unknown keys (w->bad); said again here
         * so that nothing rests on it (gcc -fanalyzer). */
        if (!k) {
            rc = XLREAPER_ERROR_INVAL;
            goto out;
        }
        rc = load_key(ctx, xlu, w, k, cfg, want_base, want_reaper);
        if (rc)
            goto out;
    }
    rc = 0;

out:
    free(w);
    if (xlu)
        xlu_cfg_destroy(xlu);
    fclose(report);
    free(report_text);
    return rc;
}

static int load_text(xlreaper_ctx *ctx, const char *path, const char *text,
                     size_t len, bool quick)
{
    xlreaper_config *cfg;
    long want_base = -1, want_reaper = -1;
    int rc;

    cfg = malloc(sizeof(*cfg));
    if (!cfg)
        return XLREAPER_ERROR_NOMEM;
    xlreaper__config_init(cfg);
    rc = set_default_strings(cfg);
    if (rc)
        goto out;

    if (text) {
        cfg->path = strdup(path);
        if (!cfg->path) {
            rc = XLREAPER_ERROR_NOMEM;
            goto out;
        }
        rc = parse_text(ctx, path, text, len, cfg, &want_base, &want_reaper);
        if (rc)
            goto out;
    }
    /* -xen-domid-restrict needs QEMU to open Xen's devices as root and
     * switch uid itself: exec mode would start it without root. */
    if (cfg->add_dm_restrict && cfg->uid_switch != XLREAPER_UID_SWITCH_RUNAS) {
        LOG(ERROR, "%s: add_dm_restrict = 1 needs uid_switch = \"runas\"",
            path ? path : "defaults");
        rc = XLREAPER_ERROR_INVAL;
        goto out;
    }

    rc = xlreaper__uid_settle(ctx, cfg, want_base, want_reaper, quick);
    if (rc)
        goto out;
    rc = xlreaper__subid_check(ctx, cfg);
    if (rc)
        goto out;

    if (ctx->cfg) {
        xlreaper__config_dispose(ctx->cfg);
        free(ctx->cfg);
    }
    ctx->cfg = cfg;
    cfg = NULL;
    rc = 0;

out:
    if (cfg) {
        xlreaper__config_dispose(cfg);
        free(cfg);
    }
    return rc;
}

int xlreaper__config_load_text(xlreaper_ctx *ctx, const char *path,
                               const char *text, size_t len)
{
    return load_text(ctx, path, text, len, false);
}

int xlreaper_config_load(xlreaper_ctx *ctx, const char *path, unsigned flags)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    if (!path)
        path = XLREAPER_DEFAULT_CONFIG;
    rc = read_config_text(ctx, path, &text, &len);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        if (flags & XLREAPER_CONFIG_MUST_EXIST) {
            LOG(ERROR, "%s: config file does not exist", path);
            return XLREAPER_ERROR_INVAL;
        }
        LOG(DEBUG, "%s absent: using the defaults", path);
    }
    rc = load_text(ctx, path, text, len, flags & XLREAPER_CONFIG_QUICK);
    free(text);
    return rc;
}
