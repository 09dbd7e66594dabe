/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_json.h - the project's JSON writer: yajl, with the few steps
 * every writer of an event or a report takes (as libxl_json.h is
 * libxl's and xl's).  The library's results and the programs' reports
 * use it, so that a string, a null and the final copy are written one
 * way.
 *
 *     yajl_gen g = yajl_gen_alloc(NULL);    NULL: out of memory
 *     yajl_gen_map_open(g);
 *     xlreaper_json_str(g, "event", "reap");
 *     xlreaper_json_int(g, "domid", 5);
 *     xlreaper_json_key(g, "live");  then any yajl_gen_* value
 *     yajl_gen_map_close(g);
 *     rc = xlreaper_json_done(g, &json);    frees g; caller frees json
 *
 * A NULL key writes the value alone (an element of an array).  The
 * status of each write is not checked: a writer writes a fixed shape,
 * which a misplaced key would break in every event (the tests parse
 * them).
 */
#ifndef XLREAPER_JSON_H
#define XLREAPER_JSON_H

#include <stdbool.h>

#include <yajl/yajl_gen.h>

#include "xlreaper.h"

/* A key of the open map. */
void xlreaper_json_key(yajl_gen g, const char *key);

/* key: s, or null when s is NULL. */
void xlreaper_json_str(yajl_gen g, const char *key, const char *s);

/* key: v. */
void xlreaper_json_int(yajl_gen g, const char *key, long long v);

/* key: v when known, else null (no domid, no pid, not counted). */
void xlreaper_json_int_or_null(yajl_gen g, const char *key, bool known,
                               long long v);

/* key: true or false. */
void xlreaper_json_bool(yajl_gen g, const char *key, bool v);

/*
 * The whole text, NUL-terminated, into *json_r (malloc'd, the caller
 * frees); g is freed in every case.  0, or XLREAPER_ERROR_NOMEM.
 */
int xlreaper_json_done(yajl_gen g, char **json_r);

#endif
