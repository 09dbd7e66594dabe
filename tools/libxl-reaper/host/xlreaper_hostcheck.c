/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_hostcheck.c - can a device model start with the config in
 * force?  What `xl-reaper check` asks before it says "ok".
 *
 * The load (xlreaper_config.c) has settled the uid range against passwd
 * and refused a passwd user inside it; what it does not look at is the
 * host around the config: the group database (a DM's gid is a group of
 * the host too), the QEMU it execs, the cgroup it joins and the lock it
 * takes.  Each of these is a refusal the wrapper or the daemon would
 * otherwise meet only when a guest starts.  Each check is answered by
 * the same call the wrapper makes, or by the nearest one that changes
 * nothing; the one exception is cgroup_parent, where only making a
 * cgroup shows that one can be made (under ProtectControlGroups the
 * directory is there and looks writable, but the mount is read-only), so
 * one is made and removed at once.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/magic.h>

#include "xlreaper_host.h"

#define DETAIL_MAX 1024
/* Collisions named in one line; the rest are counted. */
#define NAMED_MAX 4

typedef struct {
    xlreaper_check_fn *fn;
    void *arg;
    unsigned failed;
} report;

static void say(report *r, const char *name, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(report *r, const char *name, bool ok, const char *fmt, ...)
{
    char detail[DETAIL_MAX];
    va_list al;

    va_start(al, fmt);
    vsnprintf(detail, sizeof(detail), fmt, al);
    va_end(al);
    r->failed += !ok;
    r->fn(r->arg, name, ok, detail);
}

/* ---------- the gids against the group database ---------- */

typedef struct {
    const xlreaper_config *cfg;
    unsigned found;
    char named[DETAIL_MAX];
    size_t len;
} group_walk;

static void name_one(group_walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void name_one(group_walk *w, const char *fmt, ...)
{
    va_list al;
    int n;

    if (w->found++ >= NAMED_MAX || w->len >= sizeof(w->named))
        return;
    va_start(al, fmt);
    n = vsnprintf(w->named + w->len, sizeof(w->named) - w->len, fmt, al);
    va_end(al);
    if (n > 0)
        w->len += (size_t)n;
}

static int group_walk_one(void *arg, const char *name, gid_t gid,
                          char *const *members)
{
    group_walk *w = arg;
    const xlreaper_config *cfg = w->cfg;
    const char *sep = w->found ? "; " : "";

    if (cfg->dm_gid_mode == XLREAPER_GID_PER_DOMAIN) {
        /* Domid d's DM runs with gid base + d: a group there hands
         * whatever its files and members hold to that DM, and the DM's
         * files to its members. */
        if (gid > cfg->dm_uid_base &&
            gid - cfg->dm_uid_base <= xlreaper_max_domid())
            name_one(w, "%sgroup %s (gid %lu) is domid %lu's DM gid", sep,
                     name, (unsigned long)gid,
                     (unsigned long)(gid - cfg->dm_uid_base));
        return 0;
    }
    /* range-base: one gid for every DM, the range base user's group;
     * any other group of that gid, or a member, shares it with them. */
    if (gid != cfg->range_base_gid)
        return 0;
    if (strcmp(name, XLREAPER_USER_RANGE_BASE))
        name_one(w,
                 "%sgroup %s (gid %lu) is every DM's gid "
                 "(dm_gid_mode \"range-base\")",
                 sep, name, (unsigned long)gid);
    else if (members && members[0])
        name_one(w,
                 "%sgroup %s (gid %lu), every DM's gid, lists member "
                 "%s%s",
                 sep, name, (unsigned long)gid, members[0],
                 members[1] ? " and more" : "");
    return 0;
}

static int check_groups(xlreaper_ctx *ctx, report *r)
{
    const xlreaper_config *cfg = ctx->cfg;
    unsigned long lo = (unsigned long)cfg->dm_uid_base + 1,
                  hi = (unsigned long)cfg->dm_uid_base + xlreaper_max_domid();
    group_walk *w = calloc(1, sizeof(*w));
    int rc;

    if (!w)
        return XLREAPER_ERROR_NOMEM;
    w->cfg = cfg;
    rc = ctx->pw->each_group(ctx->pw_opaque, group_walk_one, w);
    if (rc) {
        LOGE(ERROR, "walking the group database");
        free(w);
        return rc;
    }
    if (w->found)
        say(r, "group_range", false, "%s%s%s", w->named,
            w->found > NAMED_MAX ? "; and more: " : "",
            w->found > NAMED_MAX ? "see getent group" : "");
    else if (cfg->dm_gid_mode == XLREAPER_GID_PER_DOMAIN)
        say(r, "group_range", true,
            "no group in gids %lu..%lu (per-domain: each DM's gid is its "
            "uid)",
            lo, hi);
    else
        say(r, "group_range", true,
            "gid %lu (range-base, every DM's) is no other group's and "
            "lists no member",
            (unsigned long)cfg->range_base_gid);
    free(w);
    return 0;
}

int xlreaper__dm_gid_check(xlreaper_ctx *ctx, uint32_t domid, gid_t gid)
{
    const xlreaper_config *cfg = ctx->cfg;
    bool found = false, members = false;
    char name[256];
    int rc;

    rc = ctx->pw->group_by_gid(ctx->pw_opaque, gid, name, sizeof(name),
                               &members, &found);
    if (rc) {
        LOGED(ERROR, domid, "looking up group %lu", (unsigned long)gid);
        return rc;
    }
    if (!found)
        return 0;
    /* As group_walk_one: in range-base mode the gid is meant to be the
     * range base user's own group, with no member. */
    if (cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE &&
        !strcmp(name, XLREAPER_USER_RANGE_BASE) && !members)
        return 0;
    LOGD(ERROR, domid,
         "its DM gid %lu is group %s%s of this host: its files and members "
         "would be the DM's (xl-reaper check names every such group)",
         (unsigned long)gid, name, members ? ", which lists members," : "");
    return XLREAPER_ERROR_INVAL;
}

/* ---------- what the wrapper execs ---------- */

static void check_qemu(report *r, const char *path)
{
    struct stat st;
    char *real;

    char why[PATH_MAX + 128];
    int rc;

    if (stat(path, &st) < 0) {
        say(r, "qemu_path", false,
            "%s: %s (the wrapper execs it for every "
            "DM)",
            path, strerror(errno));
        return;
    }
    if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
        say(r, "qemu_path", false, "%s is not an executable file", path);
        return;
    }
    /* The wrapper execs it as root. */
    rc = xlreaper_path_trust(path, 0, NULL, why, sizeof(why));
    if (rc) {
        say(r, "qemu_path", false, "%s: %s: the wrapper runs it as root", path,
            rc == 1 ? "absent" : why);
        return;
    }
    /* The wrapper refuses to exec itself: it would start again, until
     * the lock or the busy uid stopped it. */
    real = realpath(path, NULL);
    if (real && !strcmp(basename(real), "qemu-dm-restrict")) {
        say(r, "qemu_path", false,
            "%s is the wrapper qemu-dm-restrict: set "
            "qemu_path to QEMU",
            path);
        free(real);
        return;
    }
    if (real && strcmp(real, path))
        say(r, "qemu_path", true, "%s (%s) is an executable file", path, real);
    else
        say(r, "qemu_path", true, "%s is an executable file", path);
    free(real);
}

/* ---------- the cgroup each DM joins ---------- */

/*
 * Whether parent offers the memory controller that dm_memory_max needs
 * (the spawn adds it to the parent's cgroup.subtree_control, and refuses
 * a DM when it cannot: xlreaper_cgroup.c).  true, or false with the
 * controllers it offers in buf.
 */
static bool offers_memory(const char *parent, char *buf, size_t size)
{
    char path[PATH_MAX + 32];
    ssize_t n = -1;
    int fd;

    snprintf(path, sizeof(path), "%s/cgroup.controllers", parent);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = xlreaper__read_all(fd, buf, size - 1);
        close(fd);
    }
    if (n < 0) {
        snprintf(buf, size, "unreadable: %s", strerror(errno));
        return false;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    for (char *p = buf; (p = strstr(p, "memory")); p += 6)
        if ((p == buf || p[-1] == ' ') && (p[6] == ' ' || !p[6]))
            return true;
    return false;
}

static void check_cgroup(report *r, const char *parent, uint64_t memory_max)
{
    char probe[PATH_MAX + 64], kill_file[PATH_MAX + 80], ctl[256];
    struct statfs sfs;
    struct stat st;
    bool has_kill;

    if (!parent) {
        say(r, "cgroup_parent", true,
            "not set: no cgroup of its own for a "
            "DM");
        return;
    }
    if (stat(parent, &st) < 0 || statfs(parent, &sfs) < 0) {
        say(r, "cgroup_parent", false, "%s: %s", parent, strerror(errno));
        return;
    }
    if (!S_ISDIR(st.st_mode) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
        say(r, "cgroup_parent", false,
            "%s is not a directory of a cgroup2 file system", parent);
        return;
    }
    if (memory_max && !offers_memory(parent, ctl, sizeof(ctl))) {
        say(r, "cgroup_parent", false,
            "%s has no memory controller (cgroup.controllers: \"%s\"), "
            "so dm_memory_max cannot bound a DM and none would start: "
            "enable memory in the cgroup.subtree_control above it, or set "
            "dm_memory_max = 0",
            parent, ctl);
        return;
    }
    /* What the wrapper does for every DM, <parent>/dm-<domid>, under a
     * name no DM has. */
    snprintf(probe, sizeof(probe), "%s/xl-reaper-check.%ld", parent,
             (long)getpid());
    if (mkdir(probe, 0755) < 0) {
        say(r, "cgroup_parent", false,
            "cannot make a cgroup in %s: %s (the wrapper makes "
            "%s/dm-DOMID for each DM)",
            parent, strerror(errno), parent);
        return;
    }
    snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", probe);
    has_kill = access(kill_file, W_OK) == 0;
    if (rmdir(probe) < 0) {
        say(r, "cgroup_parent", false, "made %s but cannot remove it: %s",
            probe, strerror(errno));
        return;
    }
    if (memory_max)
        snprintf(ctl, sizeof(ctl), "; each DM's memory.max %llu",
                 (unsigned long long)memory_max);
    else
        snprintf(ctl, sizeof(ctl), "; no memory.max (dm_memory_max = 0)");
    say(r, "cgroup_parent", true,
        "%s: a cgroup2 directory; a cgroup was made in it and removed%s%s",
        parent,
        has_kill ? "" : " (no cgroup.kill, Linux < 5.14: the uid kill alone)",
        ctl);
}

/* ---------- the lock ---------- */

/* An absent lock file is made (0600) in its directory, and that
 * directory (0700) in the one above, but no higher. */
static void check_lock_dir(report *r, const char *lock)
{
    char *copy = strdup(lock), *dir, *updir = NULL;
    struct stat st;

    if (!copy) {
        say(r, "lock_file", false, "%s: out of memory", lock);
        return;
    }
    dir = dirname(copy);
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            say(r, "lock_file", false, "%s: %s is not a directory", lock, dir);
        else
            say(r, "lock_file", true, "%s will be made (0600) in %s", lock,
                dir);
        goto out;
    }
    updir = strdup(dir);
    if (!updir) {
        say(r, "lock_file", false, "%s: out of memory", lock);
        goto out;
    }
    if (stat(dirname(updir), &st) < 0 || !S_ISDIR(st.st_mode))
        say(r, "lock_file", false,
            "%s: neither %s nor a writable directory %s to make it in", lock,
            dir, updir);
    else
        say(r, "lock_file", true,
            "%s will be made (0600) in %s, made (0700) in %s", lock, dir,
            updir);

out:
    free(updir);
    free(copy);
}

/* ---------- device nodes a DM without a chroot can reach ---------- */

/* What any process may open and a DM may have: nothing a DM can turn
 * against the host with it (kmsg's reading is kernel.dmesg_restrict's
 * to allow). */
static bool harmless_node(const char *name)
{
    static const char *const ok[] = { "null",   "zero",    "full",
                                      "random", "urandom", "tty",
                                      "ptmx",   "kmsg",    NULL };

    for (unsigned i = 0; ok[i]; i++)
        if (!strcmp(name, ok[i]))
            return true;
    return false;
}

/* May a DM uid (not the owner, perhaps of the group) open it at all? */
static bool dm_may_open(const xlreaper_config *cfg, const struct stat *st)
{
    bool dm_group =
        cfg->dm_gid_mode == XLREAPER_GID_RANGE_BASE
            ? st->st_gid == cfg->range_base_gid
            : st->st_gid > cfg->dm_uid_base &&
                  st->st_gid <= cfg->dm_uid_base + xlreaper_max_domid();

    return (st->st_mode & 006) || (dm_group && (st->st_mode & 060));
}

/*
 * /dev/fuse, and any other device node that a DM living in the host's
 * root (one without a chroot of its own: exec mode without
 * <chroot_base>/qemu-root-<domid>) may open.  With /dev/fuse and a user
 * namespace a DM can make its own tasks unkillable (xlreaper_setid.c):
 * the spawn's filter leaves it no user namespace, and no_new_privs
 * keeps fusermount's set-uid bit from it, so this is said, not
 * refused; a DM started elsewhere has neither.  Other nodes are listed
 * for the admin to judge (udev makes some 0666: kvm, vhost-*).
 */
static void check_devices(report *r, const xlreaper_config *cfg)
{
    char named[DETAIL_MAX] = "";
    size_t len = 0;
    unsigned others = 0;
    const char *fuse;
    struct stat st;
    struct dirent *de;
    DIR *d;

    if (stat("/dev/fuse", &st) < 0)
        fuse = "no /dev/fuse";
    else if (!S_ISCHR(st.st_mode) || !dm_may_open(cfg, &st))
        fuse = "/dev/fuse is not open to a DM";
    else
        fuse = "/dev/fuse is open to a DM (a DM spawned here has no user "
               "namespace to mount it in; one started elsewhere could "
               "make its own tasks unkillable with it)";
    d = opendir("/dev");
    while (d && (de = readdir(d))) {
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) ||
            !strcmp(de->d_name, "fuse") || harmless_node(de->d_name) ||
            !dm_may_open(cfg, &st))
            continue;
        if (others++ < NAMED_MAX && len < sizeof(named)) {
            int n = snprintf(named + len, sizeof(named) - len,
                             "%s/dev/%s %04o", len ? ", " : "", de->d_name,
                             (unsigned)(st.st_mode & 07777));
            if (n > 0)
                len += (size_t)n;
        }
    }
    if (d)
        closedir(d);
    if (!others)
        say(r, "dm_devices", true,
            "from the host's root, where a DM without a chroot of its own "
            "lives: %s; no other device node but null, zero, full, "
            "random, urandom, tty, ptmx and kmsg",
            fuse);
    else
        say(r, "dm_devices", true,
            "from the host's root, where a DM without a chroot of its own "
            "lives: %s; %u other device node%s open to it: %s%s",
            fuse, others, others == 1 ? "" : "s", named,
            others > NAMED_MAX ? ", ..." : "");
}

/* As xlreaper_lock.c opens it: the one rule (xlreaper_path_trust), then
 * a regular file of mode 0600 with one link. */
static void check_lock(report *r, const char *lock)
{
    char why[PATH_MAX + 128];
    struct stat st;
    int rc;

    /* Opened O_NOFOLLOW: a link is refused whatever it names. */
    if (lstat(lock, &st) == 0 && S_ISLNK(st.st_mode)) {
        say(r, "lock_file", false,
            "%s is a symbolic link: every lock attempt refuses it", lock);
        return;
    }
    rc = xlreaper_path_trust(lock, XLREAPER_TRUST_ABSENT_OK, &st, why,
                             sizeof(why));
    if (rc < 0)
        say(r, "lock_file", false,
            "%s: %s: anyone who could make or replace it could stall "
            "every reap",
            lock, why);
    else if (rc == 1)
        check_lock_dir(r, lock);
    else if (st.st_nlink != 1 || (st.st_mode & 07777) != 0600)
        say(r, "lock_file", false,
            "%s is mode %04o with %lu links, not 0600 with one: every "
            "lock attempt refuses it (remove it: the next lock makes it "
            "0600)",
            lock, (unsigned)(st.st_mode & 07777), (unsigned long)st.st_nlink);
    else
        say(r, "lock_file", true, "%s exists, a root-owned file, 0600", lock);
}

/* ---------- the host's file table ---------- */

/* Said, never refused: the remedy (fs.file-max, the DMs' memory) is
 * the host's, not the config's (xlreaper_pools.c). */
static void check_file_pool(report *r, const xlreaper_config *cfg)
{
    xlreaper__file_pool_in in;
    xlreaper__file_pool p;
    char detail[DETAIL_MAX];

    if (xlreaper__file_pool_read("/proc/sys", cfg, xlreaper_max_domid(),
                                 &in)) {
        say(r, "file_pool", true,
            "warning: could not read fs.file-max, vm.max_map_count or "
            "fs.nr_open in /proc/sys: %s",
            strerror(errno));
        return;
    }
    xlreaper__file_pool_calc(&in, &p);
    xlreaper__file_pool_text(&in, &p, "the range allows", detail,
                             sizeof(detail));
    say(r, "file_pool", true, "%s", detail);
}

typedef struct {
    uid_t uid;
    char name[64];
} owner_walk;

static int owner_one(void *arg, const char *name, uid_t uid)
{
    owner_walk *o = arg;

    if (uid != o->uid)
        return 0;
    snprintf(o->name, sizeof(o->name), "%s", name);
    return 1;
}

int xlreaper_host_check(xlreaper_ctx *ctx, xlreaper_check_fn *fn, void *arg)
{
    const xlreaper_config *cfg = ctx->cfg;
    report r = { fn, arg, 0 };
    owner_walk owner = { 0, "" };
    int rc;

    if (!cfg || !fn)
        return XLREAPER_ERROR_INVAL;
    if (geteuid() == 0)
        say(&r, "root", true,
            "running as root, as the wrapper and the "
            "daemon do");
    else
        say(&r, "root", false,
            "running as uid %lu: the wrapper and the daemon run as root, "
            "and what they may do is checked as root only",
            (unsigned long)geteuid());
    /* Said here, once, rather than by every command a hook runs: the
     * reaper at -1000 and each DM's floor need CAP_SYS_RESOURCE
     * (xlreaper_oom.c).  A DM still starts without it: not a refusal. */
    if (xlreaper__cap_effective(CAP_SYS_RESOURCE) == 1)
        say(&r, "oom_score_adj", true,
            "CAP_SYS_RESOURCE held: xl-reaper and the wrapper run at -1000, "
            "each DM at dm_oom_score_adj %u, which it cannot lower",
            cfg->dm_oom_score_adj);
    else
        say(&r, "oom_score_adj", true,
            "this process lacks CAP_SYS_RESOURCE: xl-reaper and the wrapper "
            "keep the oom_score_adj they inherit, not -1000, and each DM is "
            "raised to dm_oom_score_adj %u but may lower it again (the "
            "audit's oom_score_adj check fails it then)",
            cfg->dm_oom_score_adj);
    /* The load refused any clash; said again, so that "ok" shows it,
     * with the pet's owner when passwd has one (xen-qemuuser-reaper, or
     * the range base user when the pet is the base). */
    owner.uid = cfg->reaper_uid;
    rc = ctx->pw->each(ctx->pw_opaque, owner_one, &owner);
    if (rc < 0) {
        LOGE(ERROR, "walking the passwd database");
        return rc;
    }
    if (owner.name[0])
        say(&r, "passwd_range", true,
            "no passwd user in uids %lu..%lu; the pet uid %lu is passwd "
            "user %s's (%s)",
            (unsigned long)cfg->dm_uid_base + 1,
            (unsigned long)cfg->dm_uid_base + xlreaper_max_domid(),
            (unsigned long)cfg->reaper_uid, owner.name, cfg->reaper_uid_from);
    else
        say(&r, "passwd_range", true,
            "no passwd user in uids %lu..%lu; the pet uid %lu is no user's",
            (unsigned long)cfg->dm_uid_base + 1,
            (unsigned long)cfg->dm_uid_base + xlreaper_max_domid(),
            (unsigned long)cfg->reaper_uid);
    rc = check_groups(ctx, &r);
    if (rc)
        return rc;
    /* The kill's verification rests on the kernel count, which misses
     * tasks of the range inside user namespaces mapped from these. */
    if (cfg->subid_overlap)
        say(&r, "subordinate_ids", false,
            "%s: subordinate ids overlap the DM range: a task of a DM uid "
            "inside a user namespace would escape the kernel count; move "
            "the range or the subordinate ids",
            cfg->subid_overlap);
    else
        say(&r, "subordinate_ids", true,
            "no subordinate id of the range is handed out");
    check_qemu(&r, cfg->qemu_path);
    check_cgroup(&r, cfg->cgroup_parent, cfg->dm_memory_max);
    check_lock(&r, cfg->lock_file);
    check_devices(&r, cfg);
    check_file_pool(&r, cfg);
    return r.failed ? XLREAPER_ERROR_INVAL : 0;
}
