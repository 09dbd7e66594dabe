/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_describe.c - a reap result in one line for people.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_internal.h"

/* Tasks listed in full; the rest are counted. */
#define DESCRIBE_MAX_TASKS 8

static void describe_task(xlreaper__sb *sb, const xlreaper_task *t, uid_t uid)
{
    xlreaper__sb_printf(sb, "pid %ld (%s)", (long)t->tid, t->comm);
    if (t->state == 'Z' || t->state == 'X')
        xlreaper__sb_printf(sb, " waits for its parent pid %ld",
                            (long)t->ppid);
    else if (t->state == 'D')
        xlreaper__sb_printf(sb, " in D state at %s with SIGKILL %s",
                            t->wchan[0] ? t->wchan : "?",
                            t->kill_pending ? "pending" : "not yet seen");
    else if (t->ruid != uid && t->suid != uid)
        xlreaper__sb_printf(
            sb,
            " has the uid only as effective or filesystem uid "
            "(real %lu, saved %lu), which the uid kill cannot signal",
            (unsigned long)t->ruid, (unsigned long)t->suid);
    else if (t->tid != t->tgid)
        xlreaper__sb_printf(sb,
                            " state %c, still alive: a thread of pid %ld "
                            "with ids of its own, and kill(-1) checks only "
                            "its leader's",
                            t->state, (long)t->tgid);
    else
        xlreaper__sb_printf(sb, " state %c, still alive", t->state);
}

static void describe_list(xlreaper__sb *sb, const char *what,
                          const xlreaper_task_list *l, uid_t uid)
{
    if (!l->num)
        return;
    xlreaper__sb_printf(sb, "; %u %s: ", l->num, what);
    for (unsigned i = 0; i < l->num && i < DESCRIBE_MAX_TASKS; i++) {
        if (i)
            xlreaper__sb_printf(sb, ", ");
        describe_task(sb, &l->tasks[i], uid);
    }
    if (l->num > DESCRIBE_MAX_TASKS)
        xlreaper__sb_printf(sb, ", and %u more", l->num - DESCRIBE_MAX_TASKS);
}

char *xlreaper_reap_result_describe(const xlreaper_reap_result *res)
{
    xlreaper__sb sb = { 0 };
    double ms = (double)res->duration_us / 1000.0;

    xlreaper__sb_printf(&sb, "domid %u (uid %lu): ", res->domid,
                        (unsigned long)res->uid);
    switch (res->outcome) {
    case XLREAPER_OUTCOME_EMPTY:
        /* The kill comes before any look, so a count of 0 right after
         * it cannot tell "nothing was there" from "what was there died
         * and was reaped at once". */
        if (res->was_empty)
            xlreaper__sb_printf(&sb,
                                "killed in %.1f ms, verified empty (the "
                                "kernel counted no task right after the "
                                "kill)",
                                ms);
        else
            xlreaper__sb_printf(
                &sb,
                "killed in %.1f ms (%u round%s, %u task%s seen), "
                "verified empty",
                ms, res->rounds, res->rounds == 1 ? "" : "s", res->tasks_seen,
                res->tasks_seen == 1 ? "" : "s");
        break;
    case XLREAPER_OUTCOME_ZOMBIES:
        xlreaper__sb_printf(&sb,
                            "killed in %.1f ms (%u task%s seen); no live task "
                            "remains",
                            ms, res->tasks_seen,
                            res->tasks_seen == 1 ? "" : "s");
        describe_list(&sb, "zombie(s) still count against the uid",
                      &res->zombies, res->uid);
        break;
    case XLREAPER_OUTCOME_REMAIN:
        xlreaper__sb_printf(&sb, "tasks remain after %.1f ms and %u round%s",
                            ms, res->rounds, res->rounds == 1 ? "" : "s");
        describe_list(&sb, "stuck", &res->stuck, res->uid);
        describe_list(&sb, "live", &res->live, res->uid);
        describe_list(&sb, "zombie(s)", &res->zombies, res->uid);
        if (res->kernel_left < 0)
            xlreaper__sb_printf(
                &sb, "; the killer was stopped or killed after its kill: "
                     "a task of the uid is outside the kill's reach");
        if (!res->proc_sound)
            xlreaper__sb_printf(
                &sb, "; /proc hides tasks here (hidepid? another pid "
                     "namespace?), so it cannot show what remains");
        else if (!res->stuck.num && !res->live.num && !res->zombies.num)
            xlreaper__sb_printf(
                &sb, "; the kernel still counts tasks of the uid but "
                     "/proc shows none");
        break;
    case XLREAPER_OUTCOME_STUCK:
        xlreaper__sb_printf(&sb,
                            "killed, but tasks are stuck after %.1f ms and "
                            "%u round%s: nothing the reap can do ends "
                            "their wait",
                            ms, res->rounds, res->rounds == 1 ? "" : "s");
        describe_list(&sb, "stuck", &res->stuck, res->uid);
        describe_list(&sb, "zombie(s)", &res->zombies, res->uid);
        break;
    default: xlreaper__sb_printf(&sb, "not reaped"); break;
    }
    if (res->fuse_aborted)
        xlreaper__sb_printf(&sb,
                            "; aborted %u FUSE connection(s) of the uid, "
                            "on which killed tasks were stuck",
                            res->fuse_aborted);
    if (res->recorded_dm > 0)
        xlreaper__sb_printf(&sb,
                            "; also killed device model pid %ld, recorded at "
                            "its start, outside the uid (runas mode, before "
                            "QEMU's own setuid)",
                            (long)res->recorded_dm);
    if (sb.oom) {
        free(sb.buf);
        return NULL;
    }
    return sb.buf;
}
