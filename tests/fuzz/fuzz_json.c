/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_json.c - the JSON the library emits, through yajl: a reap event
 * (xlreaper_reap_result_json: what the daemon writes to its events
 * file, and `kill --json`) and an audit result
 * (xlreaper_audit_result_json), with task names, wait channels and
 * reasons made of arbitrary bytes.  A DM chooses its own name and much
 * of what a reason quotes.
 *
 * Property: yajl's own parser (which checks UTF-8) takes every output
 * as one JSON object; no crash, leak or UB.
 */
#include <string.h>

#include <yajl/yajl_tree.h>

#include "fuzz.h"
#include "xlreaper_audit_internal.h"

typedef struct {
    const uint8_t *p, *end;
} reader;

static unsigned byte(reader *r)
{
    return r->p < r->end ? *r->p++ : 0;
}

/* Up to max bytes, as a NUL-terminated string of at most max chars
 * (a NUL in the input ends it early, as it would in a C string). */
static void chunk(reader *r, char *out, size_t max)
{
    size_t n = byte(r) % (max + 1), i;

    for (i = 0; i < n && r->p < r->end; i++)
        out[i] = (char)*r->p++;
    out[i] = '\0';
}

static void fill_tasks(reader *r, xlreaper_task_list *l)
{
    unsigned n = byte(r) % 4;

    for (unsigned i = 0; i < n; i++) {
        xlreaper_task t;

        memset(&t, 0, sizeof(t));
        chunk(r, t.comm, sizeof(t.comm) - 1);
        t.state = (char)byte(r);
        chunk(r, t.wchan, sizeof(t.wchan) - 1);
        t.tid = (pid_t)(byte(r) << 8 | byte(r));
        t.ppid = (pid_t)byte(r);
        t.ruid = t.euid = t.suid = t.fsuid = FZ_BASE_UID + byte(r);
        FZ_ASSERT(!xlreaper__task_list_add(l, &t));
    }
}

static void assert_json_object(const char *json, const char *key,
                               const char *want)
{
    char err[256];
    const char *path[] = { key, NULL };
    yajl_val v = yajl_tree_parse(json, err, sizeof(err));
    yajl_val k;

    if (!v) {
        fprintf(stderr, "not JSON (%s):\n%s\n", err, json);
        FZ_ASSERT(!"the output is not JSON");
    }
    FZ_ASSERT(YAJL_IS_OBJECT(v));
    k = yajl_tree_get(v, path, yajl_t_string);
    FZ_ASSERT(!want || (YAJL_IS_STRING(k) && !strcmp(k->u.string, want)));
    yajl_tree_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = { data, data + size };
    xlreaper_reap_result res;
    xlreaper_audit_result ares;
    char *json = NULL, reason[256];
    unsigned n;

    xlreaper_reap_result_init(&res);
    res.domid = byte(&r);
    res.uid = FZ_BASE_UID + res.domid;
    res.outcome = (xlreaper_outcome)(byte(&r) % 4);
    res.kernel_left = (long)byte(&r) - 1;
    fill_tasks(&r, &res.zombies);
    fill_tasks(&r, &res.stuck);
    fill_tasks(&r, &res.live);
    FZ_ASSERT(!xlreaper_reap_result_json(&res, &json));
    assert_json_object(json, "event", "reap");
    free(json);
    xlreaper_reap_result_dispose(&res);

    xlreaper_audit_result_init(&ares);
    n = byte(&r) % 4;
    for (unsigned i = 0; i < n; i++) {
        chunk(&r, reason, sizeof(reason) - 1);
        FZ_ASSERT(!xlreaper__audit_add(
            &ares, "fuzz", byte(&r), FZ_BASE_UID + byte(&r), (pid_t)byte(&r),
            (xlreaper_audit_status)(byte(&r) % 4), "quoted \"%s\"", reason));
    }
    json = NULL;
    FZ_ASSERT(!xlreaper_audit_result_json(&ares, &json));
    assert_json_object(json, "checks", NULL);
    free(json);
    xlreaper_audit_result_dispose(&ares);
    return 0;
}
