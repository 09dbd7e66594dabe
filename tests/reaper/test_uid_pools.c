/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_uid_pools.c - the pools a DM uid may fill without harming the
 * host, filled to their limits, and the uid still reaped: each test runs
 * a process as a DM uid that takes all its uid may have of one pool
 * (inotify instances, inotify watches, kernel keys), or one object of a
 * pool the host shares (a SysV shared memory segment, a POSIX message
 * queue under msgqueue_limit 0), then reaps the uid and checks the
 * verdict.  Only limits kept per uid are driven to their end here: the
 * host-wide ones (fs.file-max, kernel.pid_max, kernel.threads-max,
 * fs.mqueue.queues_max, kernel.shmmni) belong to the e2e's dom0.
 * Prints a "note:" line a pool with what was measured
 * (docs/qemu-deprivilege.pandoc, "The host's pools").
 *
 * uid block of this suite: base 9750000 (domids 1..9).
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/keyctl.h>

#include "xlrt_rsuite.h"

#define BASE 9750000u
#define DOMID_INO 1u
#define DOMID_WATCH 2u
#define DOMID_KEYS 3u
#define DOMID_SHM 4u
#define DOMID_MQ 5u
/* Files to watch: max_user_watches / max_user_instances of them at
 * least (192,540 / 128 = 1,505 by default). */
#define WATCH_FILES_MAX 8192u

static struct {
    xlrt_rsuite r;
    char watch_dir[600];
    unsigned watch_files;
} S;

typedef struct {
    long made; /* objects taken before the refusal */
    int err;   /* the refusal's errno, or 0 */
    long id;   /* a SysV id, when one was made */
} filled;

typedef struct {
    void (*fill)(filled *f);
    uid_t uid;
    int wfd;
} fill_job;

static long sysctl_num(const char *path)
{
    FILE *f = fopen(path, "re");
    long v = -1;

    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static void fill_inotify_instances(filled *f)
{
    for (;;) {
        if (inotify_init1(IN_CLOEXEC) < 0) {
            f->err = errno;
            return;
        }
        f->made++;
    }
}

static void fill_inotify_watches(filled *f)
{
    char path[700];

    for (;;) {
        int ino = inotify_init1(IN_CLOEXEC);

        if (ino < 0) {
            f->err = errno;
            return;
        }
        for (unsigned i = 0; i < S.watch_files; i++) {
            snprintf(path, sizeof(path), "%s/%u", S.watch_dir, i);
            if (inotify_add_watch(ino, path, IN_MODIFY) < 0) {
                f->err = errno;
                return;
            }
            f->made++;
        }
    }
}

static long add_key(const char *desc)
{
    return syscall(SYS_add_key, "user", desc, "x", 1, KEY_SPEC_USER_KEYRING);
}

static void fill_keys(filled *f)
{
    char desc[32];

    for (;;) {
        snprintf(desc, sizeof(desc), "xlrt-pools-%ld", f->made);
        if (add_key(desc) < 0) {
            f->err = errno;
            return;
        }
        f->made++;
    }
}

static void fill_shm(filled *f)
{
    f->id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    f->made = f->id >= 0;
    f->err = f->id < 0 ? errno : 0;
}

/* msgqueue_limit's 0, as the spawn sets it. */
static void fill_mq(filled *f)
{
    mqd_t q = mq_open("/xlrt-pools", O_CREAT | O_RDWR | O_CLOEXEC, 0600, NULL);

    if (q == (mqd_t)-1) {
        f->err = errno;
        return;
    }
    f->made = 1;
    mq_unlink("/xlrt-pools");
}

static void fill_main(void *arg)
{
    const fill_job *j = arg;
    struct rlimit none = { 0, 0 };
    filled f = { 0, 0, -1 };

    if (j->fill == fill_mq)
        setrlimit(RLIMIT_MSGQUEUE, &none);
    if (xlrt_become(j->uid, j->uid) < 0)
        f.err = -1;
    else
        j->fill(&f);
    if (write(j->wfd, &f, sizeof(f)) != sizeof(f))
        _exit(1);
    close(j->wfd);
    /* Holding what it took, until the reap. */
    for (;;)
        pause();
}

/* Fills a pool as domid's uid, in a nursery (returned in *nursery_r),
 * and returns what was measured; the filler lives on. */
static filled fill_as(uint32_t domid, void (*fill)(filled *f),
                      pid_t *nursery_r)
{
    int p[2];
    fill_job j = { fill, BASE + domid, -1 };
    filled f;

    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    j.wfd = p[1];
    *nursery_r = xlrt_nursery_start(fill_main, &j);
    close(p[1]);
    if (read(p[0], &f, sizeof(f)) != sizeof(f))
        fail_msg("the filler of domid %u said nothing", domid);
    close(p[0]);
    if (f.err == -1)
        fail_msg("the filler could not become uid %u", BASE + domid);
    return f;
}

/* The reap of domid after its pool was filled: no live task left.  A
 * zombie the nursery has not yet collected is allowed: the filler of
 * watches takes seconds to die (its marks are freed in its exit), and
 * its parent may see it only after the verdict. */
static void reap_verified(uint32_t domid, pid_t nursery)
{
    xlreaper_reap_result res;
    int rc;

    xlreaper_reap_result_init(&res);
    rc = xlreaper_reap(S.r.ctx, NULL, domid, &res);
    if (rc || (res.outcome != XLREAPER_OUTCOME_EMPTY &&
               res.outcome != XLREAPER_OUTCOME_ZOMBIES)) {
        char *d = xlreaper_reap_result_describe(&res);

        fail_msg("reap of domid %u: rc %d: %s\n%s", domid, rc,
                 d ? d : "(no description)", xlrt_captured());
    }
    fprintf(stderr, "note: domid %u reaped, no live task, in %.1f ms%s\n",
            domid, (double)res.duration_us / 1000.0,
            res.kernel_empty ? "" : " (a zombie left for its parent)");
    xlreaper_reap_result_dispose(&res);
    xlrt_nursery_stop(nursery);
}

static int suite_setup(void **state)
{
    (void)state;
    xlrt_rsuite_setup(&S.r, BASE, "reap_timeout_ms = 5000\n");
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_rsuite_teardown(&S.r);
    return 0;
}

static void test_inotify_instances(void **state)
{
    long max = sysctl_num("/proc/sys/fs/inotify/max_user_instances");
    pid_t nursery;
    filled f;

    (void)state;
    assert_true(max > 0);
    f = fill_as(DOMID_INO, fill_inotify_instances, &nursery);
    fprintf(stderr,
            "note: inotify instances: %ld made as uid %u, then %s "
            "(fs.inotify.max_user_instances %ld)\n",
            f.made, BASE + DOMID_INO, strerror(f.err), max);
    /* The uid's own limit, and nothing less: no other uid's count. */
    assert_int_equal(f.err, EMFILE);
    assert_int_equal(f.made, max);
    /* The reaper's own instances are root's: a lock waiter still gets
     * one (and without one it waits by the clock). */
    {
        int ino = inotify_init1(IN_CLOEXEC);

        assert_true(ino >= 0);
        close(ino);
    }
    reap_verified(DOMID_INO, nursery);
}

static void test_inotify_watches(void **state)
{
    long max = sysctl_num("/proc/sys/fs/inotify/max_user_watches"),
         inst = sysctl_num("/proc/sys/fs/inotify/max_user_instances");
    char path[700];
    pid_t nursery;
    filled f;

    (void)state;
    assert_true(max > 0 && inst > 0);
    if (max / inst + 1 > WATCH_FILES_MAX) {
        fprintf(stderr,
                "skip: max_user_watches %ld needs more than %u "
                "files\n",
                max, WATCH_FILES_MAX);
        skip();
    }
    S.watch_files = (unsigned)(max / inst + 1);
    snprintf(S.watch_dir, sizeof(S.watch_dir), "%s/watch", S.r.dir);
    assert_int_equal(mkdir(S.watch_dir, 0755), 0);
    for (unsigned i = 0; i < S.watch_files; i++) {
        int fd;

        snprintf(path, sizeof(path), "%s/%u", S.watch_dir, i);
        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    assert_int_equal(chmod(S.r.dir, 0755), 0);
    f = fill_as(DOMID_WATCH, fill_inotify_watches, &nursery);
    fprintf(stderr,
            "note: inotify watches: %ld made as uid %u, then %s "
            "(fs.inotify.max_user_watches %ld)\n",
            f.made, BASE + DOMID_WATCH, strerror(f.err), max);
    assert_int_equal(f.err, ENOSPC);
    assert_int_equal(f.made, max);
    reap_verified(DOMID_WATCH, nursery);
}

/* The uid's line of /proc/key-users: its keys, or 0 without a line. */
static long uid_keys(uid_t uid)
{
    FILE *f = fopen("/proc/key-users", "re");
    char line[256];
    long n = 0;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        unsigned long u;
        long usage, nkeys;

        if (sscanf(line, " %lu: %ld %ld", &u, &usage, &nkeys) == 3 && u == uid)
            n = nkeys;
    }
    fclose(f);
    return n;
}

/* As uid, empties its user keyring (what the filler left in it). */
static void clear_user_keyring(uid_t uid)
{
    pid_t c = fork();
    int status;

    assert_true(c >= 0);
    if (c == 0)
        _exit(xlrt_become(uid, uid) < 0 ||
              syscall(SYS_keyctl, KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING) < 0);
    assert_int_equal(waitpid(c, &status, 0), c);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_keys(void **state)
{
    long max = sysctl_num("/proc/sys/kernel/keys/maxkeys");
    uid_t uid = BASE + DOMID_KEYS;
    pid_t nursery;
    filled f;
    long left;

    (void)state;
    /* An earlier run's keys: cleared, and collected by the kernel's
     * key garbage collector, which runs apart (bounded wait). */
    clear_user_keyring(uid);
    for (int i = 0; i < 200 && uid_keys(uid) > 2; i++)
        usleep(10000);
    f = fill_as(DOMID_KEYS, fill_keys, &nursery);
    fprintf(stderr,
            "note: keys: %ld made as uid %u, then %s "
            "(kernel.keys.maxkeys %ld, maxbytes %ld)\n",
            f.made, uid, strerror(f.err), max,
            sysctl_num("/proc/sys/kernel/keys/maxbytes"));
    assert_int_equal(f.err, EDQUOT);
    assert_true(f.made > 0 && f.made <= max);
    reap_verified(DOMID_KEYS, nursery);
    /* The user keyring is the uid's, not a process's: what it holds
     * outlives every task of the uid, for the next DM of that domid. */
    left = uid_keys(uid);
    fprintf(stderr, "note: keys: uid %u holds %ld keys after the reap\n", uid,
            left);
    clear_user_keyring(uid);
    assert_true(left >= f.made);
}

static void test_sysv_shm(void **state)
{
    uid_t uid = BASE + DOMID_SHM;
    struct shmid_ds ds;
    pid_t nursery;
    filled f;
    int r;

    (void)state;
    f = fill_as(DOMID_SHM, fill_shm, &nursery);
    if (f.id < 0)
        fail_msg("shmget as uid %u: %s", uid, strerror(f.err));
    reap_verified(DOMID_SHM, nursery);
    /* In the host's IPC namespace (unshare_ipc_mount 0, the default,
     * and no spawn here) the segment outlives the uid's tasks. */
    r = shmctl((int)f.id, IPC_STAT, &ds);
    fprintf(stderr,
            "note: SysV shm: segment %ld of uid %u %s after the reap "
            "(kernel.shmmni %ld, host-wide)\n",
            f.id, uid, r == 0 ? "still exists" : "is gone",
            sysctl_num("/proc/sys/kernel/shmmni"));
    assert_int_equal(r, 0);
    assert_int_equal(ds.shm_perm.uid, uid);
    assert_int_equal(shmctl((int)f.id, IPC_RMID, NULL), 0);
}

static void test_mqueue_limit(void **state)
{
    pid_t nursery;
    filled f;

    (void)state;
    f = fill_as(DOMID_MQ, fill_mq, &nursery);
    fprintf(stderr,
            "note: POSIX mqueue: RLIMIT_MSGQUEUE 0, mq_open %s "
            "(fs.mqueue.queues_max %ld, per IPC namespace)\n",
            f.made ? "succeeded" : strerror(f.err),
            sysctl_num("/proc/sys/fs/mqueue/queues_max"));
    /* msgqueue_limit 0 leaves a DM no queue: the namespace's
     * queues_max is out of its reach. */
    assert_int_equal(f.made, 0);
    assert_int_equal(f.err, EMFILE);
    reap_verified(DOMID_MQ, nursery);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inotify_instances),
        cmocka_unit_test(test_inotify_watches),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_sysv_shm),
        cmocka_unit_test(test_mqueue_limit),
    };

    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
