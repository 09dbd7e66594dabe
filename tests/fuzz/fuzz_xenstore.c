/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_xenstore.c - the xenstore values the daemon and the audit read:
 * /local/domain's entries as domids (xlreaper_domid_parse), a domain's
 * image/device-model-kill-uid (xlrd_kill_uid_parse, checked against the
 * uid table), image/device-model-pid (xlreaper__parse_ulong), and
 * the token a watch event comes back with (xlrd_token_parse).  Values
 * are byte strings of a length (xs_read), entries and tokens strings.
 *
 * Properties: no crash, leak or UB; whatever is accepted is the one
 * canonical decimal spelling of what it was read as (so no two
 * spellings name one domain or uid), and a kill uid is believed only as
 * the uid the table gives its domid.
 */
#include <string.h>

#include "fuzz.h"
#include "xl_reaperd_parse.h"
#include "xlreaper_audit_internal.h"

static void assert_decimal(const void *data, size_t size, unsigned long long v)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%llu", v);

    FZ_ASSERT(n > 0 && (size_t)n == size && !memcmp(buf, data, size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xlreaper_ctx *ctx = fz_ctx();
    char *raw = fz_copy(data, size), *str = fz_strdup(data, size);
    uint32_t domid, uid, other, mine;
    unsigned long v;

    if (!xlreaper_domid_parse(str, &domid)) {
        FZ_ASSERT(domid >= 1 && domid <= xlreaper_max_domid());
        /* An entry of xs_directory is a C string. */
        assert_decimal(str, strlen(str), domid);
    }

    if (!xlreaper__parse_ulong(raw, size, INT32_MAX, &v)) {
        FZ_ASSERT(v <= INT32_MAX);
        assert_decimal(data, size, v);
    }

    mine = size ? (uint32_t)data[0] % 64 + 1 : 1;
    switch (
        xlrd_kill_uid_parse(ctx, mine, raw, (unsigned)size, &uid, &other)) {
    case XLRD_KILL_UID_BAD: break;
    case XLRD_KILL_UID_MINE:
        FZ_ASSERT(uid == FZ_BASE_UID + mine);
        assert_decimal(data, size, uid);
        break;
    case XLRD_KILL_UID_OTHER:
        FZ_ASSERT(other != mine && other >= 1 &&
                  other <= xlreaper_max_domid());
        FZ_ASSERT(uid == FZ_BASE_UID + other);
        assert_decimal(data, size, uid);
        break;
    case XLRD_KILL_UID_OUTSIDE:
        FZ_ASSERT(uid <= FZ_BASE_UID ||
                  uid > FZ_BASE_UID + xlreaper_max_domid());
        assert_decimal(data, size, uid);
        break;
    default: FZ_ASSERT(!"no such verdict");
    }

    switch (xlrd_token_parse(str, &domid)) {
    case XLRD_TOKEN_IS_RELEASE:
        FZ_ASSERT(!strcmp(str, XLRD_TOKEN_RELEASE));
        break;
    case XLRD_TOKEN_IS_INTRODUCE:
        FZ_ASSERT(!strcmp(str, XLRD_TOKEN_INTRODUCE));
        break;
    case XLRD_TOKEN_IS_KILL_UID: {
        char want[64];
        snprintf(want, sizeof(want), XLRD_TOKEN_KILL_UID "%u", domid);
        FZ_ASSERT(!strcmp(str, want));
        FZ_ASSERT(domid >= 1 && domid <= xlreaper_max_domid());
        break;
    }
    default: break;
    }
    fz_copy_free(raw, size);
    free(str);
    return 0;
}
