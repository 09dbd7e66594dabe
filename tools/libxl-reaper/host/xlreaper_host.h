/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_host.h - the host's files, as the library reads them: the
 * config and its keys, passwd and group, subordinate ids.  Private to
 * the library (tools/libxl-reaper/README.md says who may include it).
 */
#ifndef XLREAPER_HOST_H
#define XLREAPER_HOST_H

#include "xlreaper_internal.h"

/* ---------- passwd and group ---------- */

_hidden extern const xlreaper__passwd_ops xlreaper__passwd_system;
/* /etc/passwd alone (opaque: another file's path, or NULL). */
_hidden extern const xlreaper__passwd_ops xlreaper__passwd_files;
/* Both databases at once (a test's table serves as either). */
_hidden void xlreaper__ctx_set_passwd(xlreaper_ctx *ctx,
                                      const xlreaper__passwd_ops *ops,
                                      void *opaque);
/* The local one alone: what XLREAPER_CONFIG_QUICK reads. */
_hidden void xlreaper__ctx_set_passwd_local(xlreaper_ctx *ctx,
                                            const xlreaper__passwd_ops *ops,
                                            void *opaque);

/* ---------- configuration ---------- */

_hidden void xlreaper__config_init(xlreaper_config *cfg);
_hidden void xlreaper__config_dispose(xlreaper_config *cfg);

/*
 * xlreaper_config_load after the file is read: text (len bytes, need
 * not end in NUL) as the file at path says it, or NULL for an absent
 * file (the defaults).  Also the fuzzers' way in (tests/fuzz/).
 */
_hidden int xlreaper__config_load_text(xlreaper_ctx *ctx, const char *path,
                                       const char *text, size_t len);

/*
 * Refuses (_INVAL, logged) a DM gid that a group of the host also holds
 * (xlreaper_hostcheck.c): one lookup, for a spawn; `xl-reaper check`
 * walks every group.
 */
_hidden int xlreaper__dm_gid_check(xlreaper_ctx *ctx, uint32_t domid,
                                   gid_t gid);

/* Sets cfg->subid_overlap from /etc/subuid and /etc/subgid.  0. */
_hidden int xlreaper__subid_check(xlreaper_ctx *ctx, xlreaper_config *cfg);

/*
 * Every `key =` of a config text the way libxlutil reads it (comments,
 * quoting, lists spanning lines), for unknown and repeated keys, which
 * libxlutil's interface cannot list.  The text has already been
 * accepted by libxlutil.  Calls fn(arg, key, line); stops and returns
 * what fn returns if non-zero.
 */
_hidden int xlreaper__cfg_each_key(const char *text, size_t len,
                                   int (*fn)(void *arg, const char *key,
                                             unsigned line),
                                   void *arg);
/* The same, with each value as written (value_len bytes at value, not
 * NUL-terminated: a bare token, a quoted string with its quotes, or a
 * list with its brackets), so that a number can be judged as written:
 * libxlutil reads "0500000" as octal and "\"5\"" as 5. */
_hidden int
xlreaper__cfg_each_value(const char *text, size_t len,
                         int (*fn)(void *arg, const char *key, unsigned line,
                                   const char *value, size_t value_len),
                         void *arg);

/* ---------- the host's file table (xlreaper_pools.c) ---------- */

/* One DM's limits may reach at most 1/this of fs.file-max unwarned. */
#define XLREAPER__FILE_SHARE_DIV 8u

typedef struct {
    uint64_t file_max; /* fs.file-max */
    uint64_t map_max;  /* vm.max_map_count */
    uint64_t nproc;    /* a DM's RLIMIT_NPROC: its processes */
    uint64_t nofile;   /* RLIMIT_NOFILE: each process's descriptors */
    uint64_t dms;      /* the DMs counted together */
} xlreaper__file_pool_in;

typedef struct {
    uint64_t per_dm;      /* nproc x nofile, saturated */
    uint64_t mapped;      /* nproc x map_max: held by mappings */
    uint64_t all;         /* per_dm x dms, saturated */
    uint64_t dms_to_fill; /* DMs at their limits holding file_max */
    bool over_share;      /* per_dm > file_max / FILE_SHARE_DIV */
    bool all_over;        /* all > file_max */
} xlreaper__file_pool;

/* The arithmetic alone. */
_hidden void xlreaper__file_pool_calc(const xlreaper__file_pool_in *in,
                                      xlreaper__file_pool *out);
/* Fills in from <procsys> (/proc/sys) and cfg's limits, with dms DMs.
 * 0, or -1 when a value could not be read. */
_hidden int xlreaper__file_pool_read(const char *procsys,
                                     const xlreaper_config *cfg, uint64_t dms,
                                     xlreaper__file_pool_in *in);
/* One line for check and the audit, the numbers in it; dms_are says
 * what in->dms counts.  Returns whether it is a warning (its text then
 * starts "warning: "). */
_hidden bool xlreaper__file_pool_text(const xlreaper__file_pool_in *in,
                                      const xlreaper__file_pool *p,
                                      const char *dms_are, char *buf,
                                      size_t size);

#endif /* XLREAPER_HOST_H */
