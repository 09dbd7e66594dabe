/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_json.c - the JSON writer every result and report uses
 * (xlreaper_json.h).
 */
#include <stdlib.h>
#include <string.h>

#include "xlreaper_json.h"

void xlreaper_json_key(yajl_gen g, const char *key)
{
    if (key)
        yajl_gen_string(g, (const unsigned char *)key, strlen(key));
}

void xlreaper_json_str(yajl_gen g, const char *key, const char *s)
{
    xlreaper_json_key(g, key);
    if (s)
        yajl_gen_string(g, (const unsigned char *)s, strlen(s));
    else
        yajl_gen_null(g);
}

void xlreaper_json_int(yajl_gen g, const char *key, long long v)
{
    xlreaper_json_key(g, key);
    yajl_gen_integer(g, v);
}

void xlreaper_json_int_or_null(yajl_gen g, const char *key, bool known,
                               long long v)
{
    xlreaper_json_key(g, key);
    if (known)
        yajl_gen_integer(g, v);
    else
        yajl_gen_null(g);
}

void xlreaper_json_bool(yajl_gen g, const char *key, bool v)
{
    xlreaper_json_key(g, key);
    yajl_gen_bool(g, v);
}

int xlreaper_json_done(yajl_gen g, char **json_r)
{
    const unsigned char *buf;
    size_t len;
    char *out;
    int rc = XLREAPER_ERROR_NOMEM;

    if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        goto out;
    out = malloc(len + 1);
    if (!out)
        goto out;
    memcpy(out, buf, len);
    out[len] = '\0';
    *json_r = out;
    rc = 0;
out:
    yajl_gen_free(g);
    return rc;
}
