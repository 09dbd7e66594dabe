/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_reap_json.c - a reap result as a JSON event, through yajl.
 */
#include <stdlib.h>
#include <string.h>

#include "xlreaper_internal.h"
#include "xlreaper_json.h"

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

static void gen_tasks(yajl_gen g, const char *key, const xlreaper_task_list *l)
{
    xlreaper_json_key(g, key);
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < l->num; i++) {
        const xlreaper_task *t = &l->tasks[i];
        char state[2] = { t->state, '\0' };

        if (state[0] < 0x20 || state[0] >= 0x7f)
            state[0] = '?';

        yajl_gen_map_open(g);
        xlreaper_json_int(g, "pid", t->tid);
        xlreaper_json_int(g, "ppid", t->ppid);
        xlreaper_json_str(g, "state", state);
        xlreaper_json_key(g, "comm");
        gen_printable(g, t->comm, sizeof(t->comm));
        xlreaper_json_key(g, "uids");
        yajl_gen_array_open(g);
        xlreaper_json_int(g, NULL, t->ruid);
        xlreaper_json_int(g, NULL, t->euid);
        xlreaper_json_int(g, NULL, t->suid);
        xlreaper_json_int(g, NULL, t->fsuid);
        yajl_gen_array_close(g);
        if (t->wchan[0]) {
            xlreaper_json_key(g, "wchan");
            gen_printable(g, t->wchan, sizeof(t->wchan));
        }
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

int xlreaper_reap_result_json(const xlreaper_reap_result *res, char **json_r)
{
    yajl_gen g = yajl_gen_alloc(NULL);

    if (!g)
        return XLREAPER_ERROR_NOMEM;
    yajl_gen_map_open(g);
    xlreaper_json_str(g, "event", "reap");
    xlreaper_json_int(g, "domid", res->domid);
    xlreaper_json_int(g, "uid", res->uid);
    xlreaper_json_str(g, "outcome", outcome_name(res->outcome));
    xlreaper_json_bool(g, "was_empty", res->was_empty);
    xlreaper_json_int(g, "tasks_seen", res->tasks_seen);
    xlreaper_json_int(g, "rounds", res->rounds);
    xlreaper_json_int(g, "duration_us", (long long)res->duration_us);
    xlreaper_json_int(g, "lock_wait_us", (long long)res->lock_wait_us);
    xlreaper_json_bool(g, "kernel_empty", res->kernel_empty);
    xlreaper_json_int_or_null(g, "kernel_left", res->kernel_left >= 0,
                              res->kernel_left);
    xlreaper_json_bool(g, "proc_sound", res->proc_sound);
    xlreaper_json_int_or_null(g, "recorded_dm", res->recorded_dm > 0,
                              res->recorded_dm);
    xlreaper_json_int(g, "fuse_aborted", res->fuse_aborted);
    gen_tasks(g, "zombies", &res->zombies);
    gen_tasks(g, "stuck", &res->stuck);
    gen_tasks(g, "live", &res->live);
    yajl_gen_map_close(g);
    return xlreaper_json_done(g, json_r);
}
