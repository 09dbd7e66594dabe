/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_result.c - the audit's result: its checks, their
 * verdict, and the result as JSON (yajl).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_audit_internal.h"
#include "xlreaper_json.h"

void xlreaper_audit_opts_init(xlreaper_audit_opts *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->xenstore_timeout_ms = 2000;
    opts->setid_timeout_ms = 120000;
    opts->dm_timeout_ms = 3000;
}

void xlreaper_audit_result_init(xlreaper_audit_result *res)
{
    memset(res, 0, sizeof(*res));
}

void xlreaper_audit_result_dispose(xlreaper_audit_result *res)
{
    for (unsigned i = 0; i < res->num; i++)
        free(res->checks[i].reason);
    free(res->checks);
    free(res->live);
    xlreaper_audit_result_init(res);
}

const char *xlreaper_audit_status_name(xlreaper_audit_status s)
{
    switch (s) {
    case XLREAPER_AUDIT_PASS: return "pass";
    case XLREAPER_AUDIT_SKIP: return "skip";
    case XLREAPER_AUDIT_UNKNOWN: return "unknown";
    case XLREAPER_AUDIT_FAIL: return "fail";
    }
    return "?";
}

xlreaper_audit_status xlreaper_audit_verdict(const xlreaper_audit_result *res)
{
    xlreaper_audit_status worst = XLREAPER_AUDIT_PASS;

    if (!res->num)
        return XLREAPER_AUDIT_UNKNOWN;
    for (unsigned i = 0; i < res->num; i++)
        if (res->checks[i].status > worst)
            worst = res->checks[i].status;
    return worst == XLREAPER_AUDIT_SKIP ? XLREAPER_AUDIT_PASS : worst;
}

/* Longest reason kept; a DM's fd paths could make one long. */
#define REASON_MAX 2048

int xlreaper__audit_add(xlreaper_audit_result *res, const char *name,
                        uint32_t domid, uid_t uid, pid_t pid,
                        xlreaper_audit_status status, const char *fmt, ...)
{
    xlreaper_audit_check *c;
    va_list al;
    char *reason;
    int n;

    c = xlreaper__grow(res->checks, res->num, &res->cap, sizeof(*c), 32);
    if (!c)
        return XLREAPER_ERROR_NOMEM;
    res->checks = c;
    reason = malloc(REASON_MAX);
    if (!reason)
        return XLREAPER_ERROR_NOMEM;
    va_start(al, fmt);
    n = vsnprintf(reason, REASON_MAX, fmt, al);
    va_end(al);
    if (n < 0)
        reason[0] = '\0';
    else if (n >= REASON_MAX)
        memcpy(reason + REASON_MAX - 4, "...", 4);
    /* What DMs chose (names, paths, arguments) must not reach a
     * terminal, a TAP parser or a log as control characters. */
    for (char *p = reason; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';

    c = &res->checks[res->num++];
    c->name = name;
    c->domid = domid;
    c->uid = uid;
    c->pid = pid;
    c->status = status;
    c->fixed = false;
    c->tasks = 0;
    c->reason = reason;
    return 0;
}

/* ---------- JSON ---------- */

int xlreaper_audit_result_json(const xlreaper_audit_result *res, char **json_r)
{
    yajl_gen g = yajl_gen_alloc(NULL);

    if (!g)
        return XLREAPER_ERROR_NOMEM;
    yajl_gen_map_open(g);
    xlreaper_json_str(g, "event", "audit");
    xlreaper_json_str(g, "verdict",
                      xlreaper_audit_status_name(xlreaper_audit_verdict(res)));
    xlreaper_json_str(g, "live_source", res->live_source);
    xlreaper_json_key(g, "live");
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < res->num_live; i++)
        xlreaper_json_int(g, NULL, res->live[i]);
    yajl_gen_array_close(g);
    xlreaper_json_bool(g, "xenstore_reachable", res->xenstore_reachable);
    xlreaper_json_int(g, "passes", res->passes);
    xlreaper_json_bool(g, "quiet", res->quiet);
    xlreaper_json_int(g, "probes", res->probes);
    xlreaper_json_int(g, "dms", res->dms);
    xlreaper_json_int(g, "duration_us", (long long)res->duration_us);
    xlreaper_json_int(g, "deadline_ms", res->deadline_ms);
    xlreaper_json_bool(g, "deadline_passed", res->deadline_passed);
    {
        unsigned unknown = 0;
        for (unsigned i = 0; i < res->num; i++)
            unknown += res->checks[i].status == XLREAPER_AUDIT_UNKNOWN;
        xlreaper_json_int(g, "could_not_check", unknown);
    }
    xlreaper_json_key(g, "checks");
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];

        yajl_gen_map_open(g);
        xlreaper_json_str(g, "check", c->name);
        xlreaper_json_int_or_null(
            g, "domid", c->domid != XLREAPER_AUDIT_NO_DOMID, c->domid);
        xlreaper_json_int_or_null(g, "uid", c->uid != XLREAPER_AUDIT_NO_UID,
                                  c->uid);
        xlreaper_json_int_or_null(g, "pid", c->pid, c->pid);
        xlreaper_json_str(g, "status", xlreaper_audit_status_name(c->status));
        xlreaper_json_bool(g, "fixed", c->fixed);
        xlreaper_json_str(g, "reason", c->reason);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    return xlreaper_json_done(g, json_r);
}
