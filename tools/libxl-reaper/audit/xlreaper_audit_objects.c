/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_objects.c - what a dead domain's uid still holds when
 * it has no task: kernel keys and SysV IPC objects.
 *
 * A reap leaves the uid without a task, not without state.  The keys in
 * a uid's user keyring are the uid's, not a process's (docs/facts.md
 * F42), and a SysV segment, queue or semaphore set lives in its IPC
 * namespace until removed (F44): a DM in the host's IPC namespace
 * (unshare_ipc_mount off, the default) leaves them there.  The next DM
 * of that domid runs as the same uid and finds them: a channel between
 * two guests, and for keys a quota already full.  The kernel lists both
 * for every uid: /proc/key-users (a uid's keys, its own two keyrings
 * among them) and /proc/sysvipc/{shm,msg,sem} (the audit's own IPC
 * namespace: the host's).  Neither list is one a DM can make long: keys
 * are at most maxkeys a uid, and SysV ids at most the namespace's
 * shmmni, msgmni and semmni.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlreaper_audit_internal.h"

#define ADD XLREAPER__AUDIT_ADD
#define NO_DOMID XLREAPER_AUDIT_NO_DOMID
#define NO_UID XLREAPER_AUDIT_NO_UID

/* A uid's user keyring and user session keyring are keys too. */
#define OWN_KEYRINGS 2

typedef struct {
    unsigned found;
    uint32_t first_domid;
    uid_t first_uid;
    char first[160];
} objects;

static void found(xlreaper__audit *a, objects *o, uid_t uid, const char *what,
                  long id, long n)
{
    uint32_t d = xlreaper__audit_uid_domid(a, uid);

    if (d == NO_DOMID || xlreaper__audit_is_live(a, d))
        return;
    if (!o->found++) {
        o->first_domid = d;
        o->first_uid = uid;
        if (id >= 0)
            snprintf(o->first, sizeof(o->first), "SysV %s id %ld of uid %lu",
                     what, id, (unsigned long)uid);
        else
            snprintf(o->first, sizeof(o->first),
                     "%ld kernel key%s of uid %lu beyond its keyrings", n,
                     n == 1 ? "" : "s", (unsigned long)uid);
    }
}

static int read_keys(xlreaper__audit *a, objects *o)
{
    FILE *f = fopen("/proc/key-users", "re");
    char line[256];

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long uid;
        long usage, nkeys;

        if (sscanf(line, " %lu: %ld %ld", &uid, &usage, &nkeys) == 3 &&
            nkeys > OWN_KEYRINGS)
            found(a, o, (uid_t)uid, "keys", -1, nkeys - OWN_KEYRINGS);
    }
    fclose(f);
    return 0;
}

/* One /proc/sysvipc file: the id in column 2, the owner's uid in
 * column uid_col and the creator's two after it (1-based). */
static int read_ipc(xlreaper__audit *a, objects *o, const char *what,
                    unsigned uid_col)
{
    char path[64], line[512];
    FILE *f;
    bool header = true;

    snprintf(path, sizeof(path), "/proc/sysvipc/%s", what);
    f = fopen(path, "re");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long col[16];
        unsigned n = 0;
        char *save = NULL;

        if (header) { /* the column names */
            header = false;
            continue;
        }
        for (char *t = strtok_r(line, " \t\n", &save); t && n < 16;
             t = strtok_r(NULL, " \t\n", &save))
            col[n++] = strtoul(t, NULL, 0);
        if (n < uid_col + 2)
            continue;
        found(a, o, (uid_t)col[uid_col - 1], what, (long)col[1], 1);
        if (col[uid_col + 1] != col[uid_col - 1]) /* its creator */
            found(a, o, (uid_t)col[uid_col + 1], what, (long)col[1], 1);
    }
    fclose(f);
    return 0;
}

int xlreaper__audit_dead_objects(xlreaper__audit *a,
                                 xlreaper__audit_dm *unused)
{
    objects o = { 0, NO_DOMID, NO_UID, "" };

    (void)unused;
    if (!a->res->live_source)
        return ADD(a, "dead_objects", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_SKIP,
                   "the live domains are unknown: no uid is judged dead");
    /* Columns: shm "key shmid perms size cpid lpid nattch uid gid cuid",
     * msg "key msqid perms cbytes qnum lspid lrpid uid gid cuid", sem
     * "key semid perms nsems uid gid cuid". */
    if (read_keys(a, &o) < 0 || read_ipc(a, &o, "shm", 8) < 0 ||
        read_ipc(a, &o, "msg", 8) < 0 || read_ipc(a, &o, "sem", 5) < 0)
        return ADD(a, "dead_objects", NO_DOMID, NO_UID, 0,
                   XLREAPER_AUDIT_UNKNOWN,
                   "could not read /proc/key-users or /proc/sysvipc: %s",
                   strerror(errno));
    if (o.found)
        return ADD(a, "dead_objects", o.first_domid, o.first_uid, 0,
                   XLREAPER_AUDIT_FAIL,
                   "%u kernel object%s of dead domains' uids outlive their "
                   "tasks, for the next DM of the domid; first %s (domid "
                   "%lu's): remove SysV objects with ipcrm, keys with "
                   "keyctl clear @u as the uid",
                   o.found, o.found == 1 ? "" : "s", o.first,
                   (unsigned long)o.first_domid);
    return ADD(a, "dead_objects", NO_DOMID, NO_UID, 0, XLREAPER_AUDIT_PASS,
               "no dead domain's uid holds a kernel key or a SysV IPC "
               "object (/proc/key-users, /proc/sysvipc)");
}
