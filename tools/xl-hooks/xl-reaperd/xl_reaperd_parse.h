/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_parse.h - what the daemon believes of the values xenstore
 * hands it (xl_reaperd_parse.c): pure functions, no state, and what
 * tests/fuzz/ feeds arbitrary bytes to.
 */
#ifndef XL_REAPERD_PARSE_H
#define XL_REAPERD_PARSE_H

#include <stdint.h>

#include "xlreaper.h"

/* The tokens of our watches: they come back with every event. */
#define XLRD_TOKEN_RELEASE "xlrd:release"
#define XLRD_TOKEN_INTRODUCE "xlrd:introduce"
#define XLRD_TOKEN_KILL_UID "xlrd:kuid:" /* then the domid */

typedef enum {
    XLRD_KILL_UID_BAD = 0, /* not a uid: no digits, a sign, 0, ... */
    XLRD_KILL_UID_MINE,    /* this domain's DM uid */
    XLRD_KILL_UID_OTHER,   /* another domid's DM uid (*other_r) */
    XLRD_KILL_UID_OUTSIDE, /* outside the DM uid range */
} xlrd_kill_uid;

/* What a device-model-kill-uid value of domid (len bytes, as xs_read
 * gives them) says, against ctx's uid table; *uid_r unless _BAD. */
xlrd_kill_uid xlrd_kill_uid_parse(const xlreaper_ctx *ctx, uint32_t domid,
                                  const char *v, unsigned len, uint32_t *uid_r,
                                  uint32_t *other_r);

typedef enum {
    XLRD_TOKEN_IS_OTHER = 0,
    XLRD_TOKEN_IS_RELEASE,
    XLRD_TOKEN_IS_INTRODUCE,
    XLRD_TOKEN_IS_KILL_UID, /* *domid_r: whose node */
} xlrd_token;

/* Which of our watches a token names. */
xlrd_token xlrd_token_parse(const char *token, uint32_t *domid_r);

#endif /* XL_REAPERD_PARSE_H */
