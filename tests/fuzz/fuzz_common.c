/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_common.c - the logger, ctx and buffers every fuzz target uses.
 */
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static void fz_vmessage(xentoollog_logger *lg, xentoollog_level level,
                        int errnoval, const char *context, const char *fmt,
                        va_list al)
{
    char msg[4096];

    (void)lg;
    (void)level;
    (void)errnoval;
    (void)context;
    vsnprintf(msg, sizeof(msg), fmt, al);
    if (getenv("XLR_FUZZ_LOG"))
        fprintf(stderr, "log: %s\n", msg);
}

static void fz_destroy(xentoollog_logger *lg)
{
    (void)lg;
}

static xentoollog_logger fz_lg = {
    .vmessage = fz_vmessage,
    .destroy = fz_destroy,
};

xentoollog_logger *fz_logger(void)
{
    return &fz_lg;
}

static const struct {
    const char *name;
    uid_t uid;
    gid_t gid;
} users[] = {
    { "root", 0, 0 },
    { XLREAPER_USER_RANGE_BASE, FZ_BASE_UID, FZ_BASE_UID },
    { XLREAPER_USER_REAPER, FZ_PET_UID, FZ_PET_UID },
    { "nobody", 65534, 65534 },
};

static int by_name(void *opaque, const char *name, uid_t *uid_r, gid_t *gid_r,
                   bool *found_r)
{
    (void)opaque;
    *found_r = false;
    for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
        if (!strcmp(users[i].name, name)) {
            *uid_r = users[i].uid;
            *gid_r = users[i].gid;
            *found_r = true;
        }
    }
    return 0;
}

static int each(void *opaque,
                int (*fn)(void *arg, const char *name, uid_t uid), void *arg)
{
    (void)opaque;
    for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
        int rc = fn(arg, users[i].name, users[i].uid);
        if (rc)
            return rc;
    }
    return 0;
}

/* No group: the loader does not walk groups (check's host checks do). */
static int each_group(void *opaque,
                      int (*fn)(void *arg, const char *name, gid_t gid,
                                char *const *members),
                      void *arg)
{
    (void)opaque;
    (void)fn;
    (void)arg;
    return 0;
}

static const xlreaper__passwd_ops fz_passwd = {
    .by_name = by_name,
    .each = each,
    .each_group = each_group,
};

xlreaper_ctx *fz_ctx(void)
{
    static xlreaper_ctx *ctx;

    if (ctx)
        return ctx;
    if (xlreaper_ctx_alloc(&ctx, fz_logger()))
        abort();
    xlreaper__ctx_set_passwd(ctx, &fz_passwd, NULL);
    ctx->subuid_file = "/nonexistent/subuid";
    ctx->subgid_file = "/nonexistent/subgid";
    if (xlreaper__config_load_text(ctx, "(defaults)", NULL, 0))
        abort();
    return ctx;
}

/*
 * The copy ends where an inaccessible page begins.  ASan's redzone
 * catches an over-read by instrumented code, but not by libc functions
 * it does not intercept (strtoull read past a status buffer and only
 * libFuzzer's run happened to fault); the guard page faults every time.
 * One region, grown when an input does not fit: a mapping per input
 * cost most of the fuzzers' speed.
 */
static char *guarded;
static size_t guarded_span;

char *fz_copy(const uint8_t *data, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = (size + page - 1) / page * page + page;
    char *p;

    if (span > guarded_span) {
        if (guarded)
            munmap(guarded, guarded_span);
        guarded = mmap(NULL, span, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (guarded == MAP_FAILED ||
            mprotect(guarded + span - page, page, PROT_NONE))
            abort();
        guarded_span = span;
    }
    p = guarded + guarded_span - page - size;
    memcpy(p, data, size);
    return p;
}

void fz_copy_free(char *p, size_t size)
{
    /* The region is kept for the next input; scribble over this one so
     * that a pointer kept into it does not keep reading valid text. */
    memset(p, 0xa5, size);
}

char *fz_strdup(const uint8_t *data, size_t size)
{
    char *p = malloc(size + 1);

    if (!p)
        abort();
    memcpy(p, data, size);
    p[size] = '\0';
    return p;
}
