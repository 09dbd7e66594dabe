/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_result.c - the audit's result: its checks, their
 * verdict, and the result as JSON (yajl).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "xlreaper_audit_internal.h"

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

    if (res->num == res->cap) {
        unsigned ncap = res->cap ? res->cap * 2 : 32;
        xlreaper_audit_check *nc = realloc(res->checks, ncap * sizeof(*nc));
        if (!nc)
            return XLREAPER_ERROR_NOMEM;
        res->checks = nc;
        res->cap = ncap;
    }
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

#define STR(g, s) yajl_gen_string((g), (const unsigned char *)(s), strlen(s))

int xlreaper_audit_result_json(const xlreaper_audit_result *res, char **json_r)
{
    const unsigned char *buf;
    size_t len;
    yajl_gen g = yajl_gen_alloc(NULL);
    int rc = XLREAPER_ERROR_NOMEM;

    if (!g)
        return rc;
    yajl_gen_map_open(g);
    STR(g, "event");
    STR(g, "audit");
    STR(g, "verdict");
    STR(g, xlreaper_audit_status_name(xlreaper_audit_verdict(res)));
    STR(g, "live_source");
    if (res->live_source)
        STR(g, res->live_source);
    else
        yajl_gen_null(g);
    STR(g, "live");
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < res->num_live; i++)
        yajl_gen_integer(g, res->live[i]);
    yajl_gen_array_close(g);
    STR(g, "xenstore_reachable");
    yajl_gen_bool(g, res->xenstore_reachable);
    STR(g, "passes");
    yajl_gen_integer(g, res->passes);
    STR(g, "quiet");
    yajl_gen_bool(g, res->quiet);
    STR(g, "probes");
    yajl_gen_integer(g, res->probes);
    STR(g, "dms");
    yajl_gen_integer(g, res->dms);
    STR(g, "duration_us");
    yajl_gen_integer(g, (long long)res->duration_us);
    STR(g, "deadline_ms");
    yajl_gen_integer(g, res->deadline_ms);
    STR(g, "deadline_passed");
    yajl_gen_bool(g, res->deadline_passed);
    STR(g, "could_not_check");
    {
        unsigned unknown = 0;
        for (unsigned i = 0; i < res->num; i++)
            unknown += res->checks[i].status == XLREAPER_AUDIT_UNKNOWN;
        yajl_gen_integer(g, unknown);
    }
    STR(g, "checks");
    yajl_gen_array_open(g);
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];

        yajl_gen_map_open(g);
        STR(g, "check");
        STR(g, c->name);
        STR(g, "domid");
        if (c->domid == XLREAPER_AUDIT_NO_DOMID)
            yajl_gen_null(g);
        else
            yajl_gen_integer(g, c->domid);
        STR(g, "uid");
        if (c->uid == XLREAPER_AUDIT_NO_UID)
            yajl_gen_null(g);
        else
            yajl_gen_integer(g, c->uid);
        STR(g, "pid");
        if (!c->pid)
            yajl_gen_null(g);
        else
            yajl_gen_integer(g, c->pid);
        STR(g, "status");
        STR(g, xlreaper_audit_status_name(c->status));
        STR(g, "fixed");
        yajl_gen_bool(g, c->fixed);
        STR(g, "reason");
        STR(g, c->reason);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
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
