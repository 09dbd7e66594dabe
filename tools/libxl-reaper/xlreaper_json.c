/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_json.c - a reap result as a JSON event, through yajl.
 */
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "xlreaper_internal.h"

static const char *outcome_name(xlreaper_outcome o)
{
    switch (o) {
    case XLREAPER_OUTCOME_EMPTY: return "empty";
    case XLREAPER_OUTCOME_ZOMBIES: return "zombies";
    case XLREAPER_OUTCOME_REMAIN: return "remain";
    case XLREAPER_OUTCOME_STUCK: return "stuck";
    default: return "none";
    }
}

#define STR(g, s) yajl_gen_string((g), (const unsigned char *)(s), strlen(s))

/*
 * A string a task chose (its name) or that came with it: yajl escapes
 * control characters but copies other bytes as they are, and a byte
 * above 0x7f that is not UTF-8 makes the event invalid JSON (found by
 * tests/fuzz).  Printable ASCII only, '?' for the rest, as the reap's
 * messages show names.
 */
static void gen_printable(yajl_gen g, const char *s, size_t max)
{
    char buf[64];
    size_t n = strnlen(s, max < sizeof(buf) ? max : sizeof(buf));

    for (size_t i = 0; i < n; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    yajl_gen_string(g, (const unsigned char *)buf, n);
}

static void gen_tasks(yajl_gen g, const char *key,
                      const xlreaper_task_list *l)
{
    STR(g, key);
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < l->num; i++) {
        const xlreaper_task *t = &l->tasks[i];
        char state[2] = { t->state, '\0' };

        if (state[0] < 0x20 || state[0] >= 0x7f)
            state[0] = '?';

        yajl_gen_map_open(g);
        STR(g, "pid");
        yajl_gen_integer(g, t->tid);
        STR(g, "ppid");
        yajl_gen_integer(g, t->ppid);
        STR(g, "state");
        STR(g, state);
        STR(g, "comm");
        gen_printable(g, t->comm, sizeof(t->comm));
        STR(g, "uids");
        yajl_gen_array_open(g);
        yajl_gen_integer(g, t->ruid);
        yajl_gen_integer(g, t->euid);
        yajl_gen_integer(g, t->suid);
        yajl_gen_integer(g, t->fsuid);
        yajl_gen_array_close(g);
        if (t->wchan[0]) {
            STR(g, "wchan");
            gen_printable(g, t->wchan, sizeof(t->wchan));
        }
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

int xlreaper_reap_result_json(const xlreaper_reap_result *res, char **json_r)
{
    const unsigned char *buf;
    size_t len;
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = XLREAPER_ERROR_NOMEM;

    if (!g)
        return rc;
    yajl_gen_map_open(g);
    STR(g, "event");
    STR(g, "reap");
    STR(g, "domid");
    yajl_gen_integer(g, res->domid);
    STR(g, "uid");
    yajl_gen_integer(g, res->uid);
    STR(g, "outcome");
    STR(g, outcome_name(res->outcome));
    STR(g, "was_empty");
    yajl_gen_bool(g, res->was_empty);
    STR(g, "tasks_seen");
    yajl_gen_integer(g, res->tasks_seen);
    STR(g, "rounds");
    yajl_gen_integer(g, res->rounds);
    STR(g, "duration_us");
    yajl_gen_integer(g, (long long)res->duration_us);
    STR(g, "lock_wait_us");
    yajl_gen_integer(g, (long long)res->lock_wait_us);
    STR(g, "kernel_empty");
    yajl_gen_bool(g, res->kernel_empty);
    STR(g, "kernel_left");
    if (res->kernel_left < 0)
        yajl_gen_null(g);
    else
        yajl_gen_integer(g, res->kernel_left);
    STR(g, "proc_sound");
    yajl_gen_bool(g, res->proc_sound);
    STR(g, "recorded_dm");
    if (res->recorded_dm > 0)
        yajl_gen_integer(g, res->recorded_dm);
    else
        yajl_gen_null(g);
    STR(g, "fuse_aborted");
    yajl_gen_integer(g, res->fuse_aborted);
    gen_tasks(g, "zombies", &res->zombies);
    gen_tasks(g, "stuck", &res->stuck);
    gen_tasks(g, "live", &res->live);
    yajl_gen_map_close(g);

    if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok) {
        char *out = malloc(len + 1);
        if (out) {
            memcpy(out, buf, len);
            out[len] = '\0';
            *json_r = out;
            rc = 0;
        }
    }
    yajl_gen_free(g);
    return rc;
}
