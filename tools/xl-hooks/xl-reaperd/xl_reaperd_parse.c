/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_parse.c - what the daemon believes of the values xenstore
 * hands it: a device-model-kill-uid node and a watch event's token.
 *
 * Pure functions on bytes, apart from the uid table of the ctx: the
 * values come from xenstored, which a guest cannot write here but which
 * is parsed as strictly as a command-line argument, and these are what
 * tests/fuzz/ feeds arbitrary bytes to.
 */
#include <string.h>

#include "xl_reaperd_parse.h"

/* A uid as a decimal string: digits only, no sign, no leading zero.
 * xenstore values are byte strings: a NUL inside is not a digit. */
static int parse_uid(const char *s, unsigned len, uint32_t *uid_r)
{
    uint64_t v = 0;

    if (!len || len > 10 || (s[0] == '0' && len > 1))
        return -1;
    for (unsigned i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v == 0 || v >= UINT32_MAX)
        return -1;
    *uid_r = (uint32_t)v;
    return 0;
}

xlrd_kill_uid xlrd_kill_uid_parse(const xlreaper_ctx *ctx, uint32_t domid,
                                  const char *v, unsigned len, uint32_t *uid_r,
                                  uint32_t *other_r)
{
    uid_t mine;
    uint32_t uid;

    if (parse_uid(v, len, &uid))
        return XLRD_KILL_UID_BAD;
    *uid_r = uid;
    if (!xlreaper_dm_ids(ctx, domid, &mine, NULL) && uid == mine)
        return XLRD_KILL_UID_MINE;
    if (!xlreaper_uid_domid(ctx, uid, other_r))
        return XLRD_KILL_UID_OTHER;
    return XLRD_KILL_UID_OUTSIDE;
}

xlrd_token xlrd_token_parse(const char *token, uint32_t *domid_r)
{
    size_t kl = strlen(XLRD_TOKEN_KILL_UID);

    if (!strcmp(token, XLRD_TOKEN_RELEASE))
        return XLRD_TOKEN_IS_RELEASE;
    if (!strcmp(token, XLRD_TOKEN_INTRODUCE))
        return XLRD_TOKEN_IS_INTRODUCE;
    if (!strncmp(token, XLRD_TOKEN_KILL_UID, kl) &&
        !xlreaper_domid_parse(token + kl, domid_r))
        return XLRD_TOKEN_IS_KILL_UID;
    return XLRD_TOKEN_IS_OTHER;
}
