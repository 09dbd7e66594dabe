/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_helper_orphans.c - a helper never outlives its caller.  The
 * kernel clears PDEATHSIG when a task's euid changes, which every
 * helper's first step into a DM uid does; with a DM that stops whatever
 * enters its uid, a caller SIGKILLed while its helper sat stopped left
 * the helper stopped for good, under init, with saved uid 0.  Here
 * `xl-reaper status DOMID` (a count probe) is SIGKILLed at every step,
 * 100 us apart, with such a DM ("stopper"), and nothing it started may
 * be left but a dead task.
 *
 * This process is the child subreaper of what it starts, so an orphan
 * comes to it, not to init: whatever has this process as its parent
 * and is not one of its own children is a helper that outlived its
 * caller.
 *
 * uid block of this suite: 5400000 (base and pet) .. 5432751.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xlrt_rsuite.h"

#define BASE 5400000u
#define DOMID 9u

static struct {
    xlrt_rsuite r;
    pid_t dm;
} S = { .dm = -1 };

static int suite_setup(void **state)
{
    (void)state;
    xlrt_rsuite_setup(&S.r, BASE,
                      "reap_timeout_ms = 500\nlock_timeout_ms = 2000\n");
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    return 0;
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_rsuite_teardown(&S.r);
    return 0;
}

static int test_teardown(void **state)
{
    xlreaper_reap_result res;

    (void)state;
    xlreaper_reap_result_init(&res);
    xlreaper_reap(S.r.ctx, NULL, DOMID, &res);
    xlreaper_reap_result_dispose(&res);
    if (S.dm > 0)
        xlrt_bystander_stop(S.dm);
    S.dm = -1;
    xlrt_capture_reset();
    return 0;
}

/* Field 3 (state) and 4 (ppid) of /proc/pid/stat; false if gone. */
static bool stat_of(pid_t pid, char *state, pid_t *ppid)
{
    char path[64], buf[512], *p;
    ssize_t r;
    int fd, pp;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return false;
    buf[r] = '\0';
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%c %d", state, &pp) != 2)
        return false;
    *ppid = pp;
    return true;
}

/*
 * Orphans that came to us, other than the DM: each must be dead (a
 * zombie, which we reap) or die within a second.  Returns how many were
 * still alive (stopped or not) after that; they are killed.
 */
static unsigned orphans_left(void)
{
    unsigned alive = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;

    assert_non_null(d);
    while ((de = readdir(d))) {
        pid_t pid = (pid_t)atoi(de->d_name), ppid;
        char st;

        if (pid <= 0 || pid == S.dm || !stat_of(pid, &st, &ppid) ||
            ppid != getpid())
            continue;
        for (int t = 0; t < 100 && st != 'Z'; t++) {
            usleep(10000);
            if (!stat_of(pid, &st, &ppid))
                break;
        }
        if (st != 'Z') {
            fprintf(stderr, "orphan %d left in state %c\n", (int)pid, st);
            alive++;
            kill(pid, SIGKILL); /* came to us: ours to end */
        }
        waitpid(pid, NULL, __WALL);
    }
    closedir(d);
    return alive;
}

/* Tasks other than the DM whose real uid is uid. */
static unsigned others_in_uid(uid_t uid)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    unsigned n = 0;

    assert_non_null(d);
    while ((de = readdir(d))) {
        char path[300], buf[4096], *p;
        pid_t pid = (pid_t)atoi(de->d_name);
        unsigned long ruid;
        ssize_t r;
        int fd;

        if (pid <= 0 || pid == S.dm)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        r = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        p = strstr(buf, "\nUid:");
        if (p && sscanf(p + 5, "%lu", &ruid) == 1 && ruid == uid) {
            fprintf(stderr, "task %d of uid %lu left\n", (int)pid, ruid);
            n++;
        }
    }
    closedir(d);
    return n;
}

static void kill_at_every_step(const char *cmd)
{
    unsigned rounds = xlrt_rounds(50) * 4, left = 0;
    char dom[16];

    snprintf(dom, sizeof(dom), "%u", DOMID);
    S.dm = xlrt_adversary_as_child(S.r.ctx, DOMID, "stopper");
    for (unsigned i = 0; i < rounds; i++) {
        struct timespec ts = { 0, (long)(i % 200) * 100000 };
        pid_t p = fork();
        int status;

        assert_true(p >= 0);
        if (p == 0) {
            int null = open("/dev/null", O_RDWR);

            dup2(null, 1);
            dup2(null, 2);
            execl(S.r.cli, S.r.cli, "--config", S.r.config, cmd, dom,
                  (char *)NULL);
            _exit(127);
        }
        nanosleep(&ts, NULL);
        kill(p, SIGKILL);
        assert_int_equal(waitpid(p, &status, 0), p);
        left += orphans_left();
    }
    if (left)
        fail_msg("%u helper(s) of a SIGKILLed `xl-reaper %s` outlived it",
                 left, cmd);
    /* Nothing of ours is left in the uid: only the DM (asked of /proc:
     * a count probe would enter the uid, and the DM would stop it). */
    assert_int_equal(others_in_uid(BASE + DOMID), 0);
}

/* The oom_score_adj of the first child of parent seen, read while it
 * lives, into buf: true, or false after about 1 s. */
static bool child_oom_adj(pid_t parent, char *buf, size_t size)
{
    char path[96], kids[256], adj[96];
    uint64_t until = xlreaper_now_us() + 1000000;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent,
             (int)parent);
    while (xlreaper_now_us() < until) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), afd;
        ssize_t r = fd < 0 ? -1 : read(fd, kids, sizeof(kids) - 1);

        if (fd >= 0)
            close(fd);
        if (r <= 0)
            continue;
        kids[r] = '\0';
        snprintf(adj, sizeof(adj), "/proc/%d/oom_score_adj", atoi(kids));
        afd = open(adj, O_RDONLY | O_CLOEXEC);
        if (afd < 0)
            continue; /* gone meanwhile */
        r = read(afd, buf, size - 1);
        close(afd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return true;
    }
    return false;
}

/* /proc/pid/oom_score_adj, without its newline, into buf. */
static void oom_adj_of(pid_t pid, char *buf, size_t size)
{
    char path[64];
    ssize_t r;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    r = read(fd, buf, size - 1);
    close(fd);
    assert_true(r > 0);
    buf[r] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

/*
 * A helper runs at its caller's oom_score_adj, and the CLI puts itself
 * at -1000 (xlreaper_oom_protect): read from the count probe of
 * `xl-reaper status` while it lives (a DM that stops it keeps it so a
 * little longer).  Where the kernel
 * refuses -1000 (no CAP_SYS_RESOURCE: root in a container, as on the
 * machines this suite runs on) the CLI and its helper keep this
 * process's value, and the CLI says so on stderr (with -v: `check`
 * says it without).
 */
static void test_helper_oom_score_adj(void **state)
{
    char dom[16], errpath[] = "/tmp/xlr-oom-err-XXXXXX", mine[16];
    char cli_adj[16], helper_adj[16], err[4096] = "";
    bool capable;
    pid_t p;
    int efd, status;
    ssize_t r;

    (void)state;
    oom_adj_of(getpid(), mine, sizeof(mine));
    /* Whether this process may lower its own: asked of a child, which
     * tries, so that this process keeps its value. */
    p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        int fd = open("/proc/self/oom_score_adj", O_WRONLY);

        _exit(fd >= 0 && write(fd, "-1000", 5) == 5 ? 0 : 1);
    }
    assert_int_equal(waitpid(p, &status, 0), p);
    capable = WIFEXITED(status) && WEXITSTATUS(status) == 0;

    snprintf(dom, sizeof(dom), "%u", DOMID);
    S.dm = xlrt_adversary_as_child(S.r.ctx, DOMID, "stopper");
    efd = mkstemp(errpath);
    assert_true(efd >= 0);
    unlink(errpath); /* read through efd: nothing left if a check fails */
    /* The helper lives a few milliseconds: asked again until one is
     * seen (at most 20 runs). */
    for (int run = 0;; run++) {
        bool seen;

        p = fork();
        assert_true(p >= 0);
        if (p == 0) {
            int null = open("/dev/null", O_RDWR);

            dup2(null, 1);
            dup2(efd, 2);
            execl(S.r.cli, S.r.cli, "--config", S.r.config, "-v", "status",
                  dom, (char *)NULL);
            _exit(127);
        }
        seen = child_oom_adj(p, helper_adj, sizeof(helper_adj));
        if (seen)
            break;
        kill(p, SIGKILL);
        waitpid(p, &status, 0);
        assert_int_equal(orphans_left(), 0);
        if (run == 19)
            fail_msg("no helper of `xl-reaper status` was seen in 20 runs");
    }
    oom_adj_of(p, cli_adj, sizeof(cli_adj));
    kill(p, SIGKILL); /* the helper dies with it (PDEATHSIG) */
    assert_int_equal(waitpid(p, &status, 0), p);
    assert_int_equal(orphans_left(), 0);
    r = pread(efd, err, sizeof(err) - 1, 0);
    close(efd);
    err[r > 0 ? r : 0] = '\0';
    assert_string_equal(helper_adj, cli_adj);
    if (capable) {
        assert_string_equal(cli_adj, "-1000");
    } else {
        char want[128];

        assert_string_equal(cli_adj, mine);
        snprintf(want, sizeof(want),
                 "oom_score_adj stays %s, not -1000: lowering it needs "
                 "CAP_SYS_RESOURCE",
                 mine);
        if (!strstr(err, want))
            fail_msg("want '%s' on stderr, got:\n%s", want, err);
    }
}

static void test_status_killed_at_every_step(void **state)
{
    (void)state;
    kill_at_every_step("status");
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_helper_oom_score_adj),
        T(test_status_killed_at_every_step),
    };
#undef T
    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
