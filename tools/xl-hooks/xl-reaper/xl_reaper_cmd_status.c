/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper_cmd_status.c - `xl-reaper status DOMID`: what runs under a
 * DM uid, by /proc and by the kernel's own count.  Changes nothing, and
 * never makes a concurrent spawn fail: the count probe runs under the
 * global lock (bounded by lock_timeout_ms) and within reap_timeout_ms.
 * Exit 0 when the kernel counts no task of the uid, 3 otherwise (also
 * when a task of the uid stopped the probe), 2 when the lock was not
 * had.
 */
#include <stdio.h>

#include "xl_reaper.h"

int xlr_cmd_status(xlr_cli *cli, int argc, char **argv)
{
    xlreaper_task_list l;
    unsigned count, zombies = 0, stuck = 0;
    uint32_t domid;
    uid_t uid;
    int rc;

    rc = xlr_domid_only("status", argc, argv, &domid);
    if (!rc)
        rc = xlr_load_config_oom(cli);
    if (rc)
        return rc;
    if (xlreaper_dm_ids(cli->ctx, domid, &uid, NULL))
        return XLR_EXIT_USAGE;

    xlreaper_task_list_init(&l);
    rc = xlreaper_uid_count(cli->ctx, uid, &count);
    if (rc == XLREAPER_ERROR_BUSY) {
        /* A task of the uid stopped or killed the probe: it is busy. */
        xlreaper_scan_uid(cli->ctx, uid, &l);
        if (cli->json)
            printf("{\"domid\":%u,\"uid\":%lu,\"kernel_count\":null,"
                   "\"visible\":%u,\"probe\":\"stopped\"}\n",
                   domid, (unsigned long)uid, l.num);
        else
            printf("domid %u (uid %lu): busy: a task of the uid stopped "
                   "or killed the kernel-count probe; /proc shows %u "
                   "task%s\n",
                   domid, (unsigned long)uid, l.num, l.num == 1 ? "" : "s");
        xlreaper_task_list_dispose(&l);
        return XLR_EXIT_REMAIN;
    }
    if (!rc)
        rc = xlreaper_scan_uid(cli->ctx, uid, &l);
    if (rc) {
        xlreaper_task_list_dispose(&l);
        return xlr_exit_code(rc);
    }
    for (unsigned i = 0; i < l.num; i++) {
        zombies += l.tasks[i].state == 'Z' || l.tasks[i].state == 'X';
        stuck += l.tasks[i].state == 'D';
    }
    if (cli->json)
        printf("{\"domid\":%u,\"uid\":%lu,\"kernel_count\":%u,"
               "\"visible\":%u,\"zombies\":%u,\"stuck\":%u}\n",
               domid, (unsigned long)uid, count, l.num, zombies, stuck);
    else
        printf("domid %u (uid %lu): the kernel counts %u task%s; /proc "
               "shows %u (%u zombie, %u in D state)\n",
               domid, (unsigned long)uid, count, count == 1 ? "" : "s",
               l.num, zombies, stuck);
    xlreaper_task_list_dispose(&l);
    return count ? XLR_EXIT_REMAIN : XLR_EXIT_OK;
}
