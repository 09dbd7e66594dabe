/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_audit_prom.c - `xl-reaper audit --prometheus`: the audit as
 * metrics for node_exporter's textfile collector (xlr_prom.h writes
 * them).  What each metric means is in xl-reaper(8); the names are an
 * interface: alert rules are written against them.
 *
 * An audit that could not run (not root, a config that does not load,
 * /proc unreadable) still writes a file, with xl_reaper_audit_up 0 and
 * the reason: a stale or missing file must not read as "all is well".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "xl_reaper.h"
#include "xlr_prom.h"

static const xlreaper_audit_status statuses[] = {
    XLREAPER_AUDIT_PASS,
    XLREAPER_AUDIT_SKIP,
    XLREAPER_AUDIT_UNKNOWN,
    XLREAPER_AUDIT_FAIL,
};
#define NUM_STATUSES (sizeof(statuses) / sizeof(statuses[0]))

static double wall_s(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)(tv.tv_usec / 1000) / 1000.0;
}

/* Per check name, in the order the audit made them: a count for every
 * status, zeros included, so that a series does not vanish when its
 * status changes. */
static void checks(xlr_prom *p, const xlreaper_audit_result *res)
{
    xlr_prom_family(p, "xl_reaper_audit_checks", "gauge",
                    "Checks the last audit made, by check name and "
                    "status (pass, skip, unknown: could not check, fail).");
    for (unsigned i = 0; i < res->num; i++) {
        const char *name = res->checks[i].name;
        unsigned n[NUM_STATUSES] = { 0 };
        bool seen = false;

        for (unsigned j = 0; j < i && !seen; j++)
            seen = !strcmp(res->checks[j].name, name);
        if (seen)
            continue;
        for (unsigned j = i; j < res->num; j++)
            if (!strcmp(res->checks[j].name, name))
                for (unsigned s = 0; s < NUM_STATUSES; s++)
                    n[s] += res->checks[j].status == statuses[s];
        for (unsigned s = 0; s < NUM_STATUSES; s++)
            xlr_prom_sample(
                p, "xl_reaper_audit_checks",
                XLR_PROM_LABELS("check", name, "status",
                                xlreaper_audit_status_name(statuses[s])),
                n[s]);
    }
}

/* What the last audit could not check, per check name, with a total: an
 * alert on "unknown" needs no knowledge of the names. */
static void could_not_check(xlr_prom *p, const xlreaper_audit_result *res)
{
    unsigned total = 0;

    for (unsigned i = 0; i < res->num; i++)
        total += res->checks[i].status == XLREAPER_AUDIT_UNKNOWN;
    xlr_prom_family(p, "xl_reaper_audit_could_not_check", "gauge",
                    "Checks the last audit could not make (a /proc that did "
                    "not answer in time, its deadline, a source that did "
                    "not answer).");
    xlr_prom_sample(p, "xl_reaper_audit_could_not_check", XLR_PROM_NO_LABELS,
                    total);
}

static void leftovers(xlr_prom *p, const xlreaper_audit_result *res)
{
    unsigned uids = 0;

    xlr_prom_family(p, "xl_reaper_audit_leftover_tasks", "gauge",
                    "Tasks found under the DM uid of a dead domain (a "
                    "failed cleanup), per domid, by the last audit.");
    for (unsigned i = 0; i < res->num; i++) {
        const xlreaper_audit_check *c = &res->checks[i];
        char d[16], u[16];

        if (strcmp(c->name, "leftover") || c->domid == XLREAPER_AUDIT_NO_DOMID)
            continue;
        snprintf(d, sizeof(d), "%u", c->domid);
        snprintf(u, sizeof(u), "%lu", (unsigned long)c->uid);
        xlr_prom_sample(p, "xl_reaper_audit_leftover_tasks",
                        XLR_PROM_LABELS("domid", d, "uid", u), c->tasks);
        uids++;
    }
    xlr_prom_family(p, "xl_reaper_audit_leftover_uids", "gauge",
                    "DM uids of dead domains found with tasks by the last "
                    "audit.");
    xlr_prom_sample(p, "xl_reaper_audit_leftover_uids", XLR_PROM_NO_LABELS,
                    uids);
}

static void verdict(xlr_prom *p, const char *v)
{
    static const char *const all[] = { "pass", "fail", "unknown" };

    xlr_prom_family(p, "xl_reaper_audit_verdict", "gauge",
                    "1 for the last audit's verdict (pass, fail, unknown: "
                    "could not check), 0 for the others.");
    for (unsigned i = 0; i < 3; i++)
        xlr_prom_sample(p, "xl_reaper_audit_verdict",
                        XLR_PROM_LABELS("verdict", all[i]),
                        !strcmp(v, all[i]));
}

static void gauge(xlr_prom *p, const char *name, const char *help, double v)
{
    xlr_prom_family(p, name, "gauge", help);
    xlr_prom_sample(p, name, XLR_PROM_NO_LABELS, v);
}

int xlr_audit_prometheus(const xlreaper_audit_result *res, const char *error,
                         const char *path)
{
    xlr_prom p;
    const char *text, *what;
    size_t len;
    int ret = -1;

    if (xlr_prom_init(&p) < 0) {
        xlr_error("audit --prometheus: out of memory");
        return -1;
    }
    gauge(&p, "xl_reaper_audit_up",
          "1 when the audit ran to its end, 0 when it could not run at "
          "all (see xl_reaper_audit_error).",
          !error);
    if (error) {
        xlr_prom_family(&p, "xl_reaper_audit_error", "gauge",
                        "Why the audit could not run (1, the reason in a "
                        "label).");
        xlr_prom_sample(&p, "xl_reaper_audit_error",
                        XLR_PROM_LABELS("reason", error), 1);
    }
    verdict(&p, error || !res
                    ? "unknown"
                    : xlreaper_audit_status_name(xlreaper_audit_verdict(res)));
    if (res && !error) {
        checks(&p, res);
        leftovers(&p, res);
        gauge(&p, "xl_reaper_audit_dms",
              "DM processes the last audit checked.", res->dms);
        if (res->live_source)
            gauge(&p, "xl_reaper_audit_live_domains",
                  "Live domains (dom0 not counted) the last audit found.",
                  res->num_live);
        gauge(&p, "xl_reaper_audit_proc_passes",
              "/proc passes the last audit made.", res->passes);
        gauge(&p, "xl_reaper_audit_quiet_pass",
              "1 when a /proc pass of the last audit saw no task created "
              "(then it saw every task).",
              res->quiet);
        gauge(&p, "xl_reaper_audit_kernel_probes",
              "Kernel task-count probes the last audit ran.", res->probes);
        gauge(&p, "xl_reaper_audit_duration_seconds",
              "How long the last audit took.", (double)res->duration_us / 1e6);
        could_not_check(&p, res);
        gauge(&p, "xl_reaper_audit_deadline_seconds",
              "The deadline the last audit ran under (the set-id walk "
              "aside).",
              (double)res->deadline_ms / 1e3);
        gauge(&p, "xl_reaper_audit_deadline_passed",
              "1 when the last audit's deadline passed before every check "
              "was made (those say could not check).",
              res->deadline_passed);
    }
    gauge(&p, "xl_reaper_audit_timestamp_seconds",
          "When the last audit ended (Unix time): alert when it is old.",
          wall_s());
    if (xlr_prom_finish(&p, &text, &len) < 0) {
        xlr_error("audit --prometheus: the metrics could not be formatted "
                  "(out of memory?)");
        goto out;
    }
    if (!path) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
            xlr_error("audit --prometheus: writing to stdout: %s",
                      strerror(errno));
            goto out;
        }
    } else if (xlr_prom_write_file(path, text, len, &what) < 0) {
        xlr_error("audit --prometheus-file %s: %s: %s", path, what,
                  strerror(errno));
        goto out;
    }
    ret = 0;

out:
    xlr_prom_dispose(&p);
    return ret;
}
