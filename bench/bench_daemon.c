/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_daemon - xl-reaperd's latency from a domain's death to its DM
 * uid verified empty, over many deaths (XLR_BENCH_DEATHS, default 1000).
 *
 * The real daemon against fake_xenstored.  For each death: a fork racer
 * runs under the domain's uid (in a nursery of ours that reaps its
 * zombies at once, as a healthy init would); the clock starts when the
 * fake has fired @releaseDomain (its "ok" to "del DOMID") and stops when
 * the daemon's event line for that domid is in its events file (woken by
 * inotify).  So it counts xenstore's delivery, the daemon's list, the
 * lock, the kill and the kernel's verdict.  The daemon's own event_us
 * (from its read of the watch event to the verdict) is reported beside.
 * Uses uids 5000100..5000149 of the daemon helper's block.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper.h"
#include "lib/bench_dfix.h"

#define BASE 5000000u
#define FIRST_DOMID 100u
#define NUM_DOMIDS 50u

static const char *build_dir(void)
{
    const char *b = getenv("XLR_BUILD");

    return b && *b ? b : "build";
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double pct(const uint64_t *v, unsigned n, double p)
{
    unsigned i = (unsigned)(p * (n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

/* Waits (inotify) for the event line of domid past *off in path. */
static char *wait_event(int ino, const char *path, size_t *off, uint32_t domid,
                        unsigned timeout_ms)
{
    uint64_t end = xlrt_now_us() + (uint64_t)timeout_ms * 1000u;
    static char buf[1 << 20];

    for (;;) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t r = 0;

        if (fd >= 0) {
            r = pread(fd, buf, sizeof(buf) - 1, (off_t)*off);
            close(fd);
        }
        if (r > 0) {
            char *p = buf, *nl;
            buf[r] = '\0';
            while ((nl = strchr(p, '\n'))) {
                *nl = '\0';
                *off += (size_t)(nl - p) + 1;
                if (xlrt_json_int(p, "domid") == (long long)domid)
                    return strdup(p);
                p = nl + 1;
            }
        }
        if (xlrt_now_us() > end)
            return NULL;
        {
            char ev[4096];
            struct timeval tv = { 0, 200000 };
            fd_set fds;
            FD_ZERO(&fds);
            FD_SET(ino, &fds);
            if (select(ino + 1, &fds, NULL, NULL, &tv) > 0)
                (void)!read(ino, ev, sizeof(ev));
        }
    }
}

int main(void)
{
    const char *s = getenv("XLR_BENCH_DEATHS");
    unsigned n = s && atoi(s) > 0 ? (unsigned)atoi(s) : 1000, done = 0;
    unsigned empty = 0, zombies = 0, other = 0, under_1s = 0;
    char prog[512], *dir;
    uint64_t *lat = calloc(n, sizeof(*lat)),
             *inner = calloc(n, sizeof(*inner));
    bench_dfix b;
    xlrt_daemon dm;
    size_t off = 0;
    int ino;

    bench_dfix_setup(&b, "bench_daemon", BASE);
    dir = b.dir;
    if (!lat || !inner)
        bench_dfix_die(&b, "out of memory");
    snprintf(prog, sizeof(prog), "%s/tests/progs/fork_racer", build_dir());
    if (xlrt_daemon_start(&dm, dir, b.config, b.sock) ||
        xlrt_daemon_wait_log(&dm, "ready:", 60000) ||
        xlrt_daemon_wait_log(&dm, "sweep (whole range", 300000))
        bench_dfix_die(&b, "could not start the daemon");
    /* The daemon ran with -v -v for the tests; the log is not timed. */
    ino = inotify_init1(IN_CLOEXEC);
    if (ino < 0 || inotify_add_watch(ino, dm.events, IN_MODIFY) < 0) {
        /* The file appears with the first event: watch the directory. */
        if (ino < 0 || inotify_add_watch(ino, dir, IN_MODIFY | IN_CREATE) < 0)
            bench_dfix_die(&b, "cannot watch the events file");
    }

    for (unsigned i = 0; i < n; i++) {
        uint32_t domid = FIRST_DOMID + i % NUM_DOMIDS;
        uid_t uid = BASE + domid;
        char *ev, buf[32];
        uint64_t t0;
        pid_t racer;

        if (xlrt_xs_cmd(&b.xs, NULL, 0, "add %u %u", domid, uid))
            break;
        /* A domain lives a while: the daemon knows it before it dies. */
        snprintf(buf, sizeof(buf), "domid %u: a new", domid);
        if (xlrt_daemon_wait_log(&dm, buf, 60000))
            break;
        racer = bench_dfix_task(uid, prog, false);
        if (racer < 0)
            bench_dfix_die(&b, "fork");
        while (!bench_dfix_uid_busy(&b, uid))
            usleep(200);
        t0 = xlrt_now_us();
        if (xlrt_xs_cmd(&b.xs, NULL, 0, "del %u", domid))
            break;
        ev = wait_event(ino, dm.events, &off, domid, 60000);
        if (!ev) {
            fprintf(stderr, "bench_daemon: no event for domid %u\n", domid);
            kill(racer, SIGKILL);
            break;
        }
        lat[done] = xlrt_now_us() - t0;
        xlrt_json_str(ev, "trigger", buf, sizeof(buf));
        if (strcmp(buf, "release")) {
            fprintf(stderr, "bench_daemon: domid %u reaped by %s\n", domid,
                    buf);
            free(ev);
            break;
        }
        inner[done] = (uint64_t)xlrt_json_int(ev, "event_us");
        under_1s += lat[done] < 1000000;
        xlrt_json_str(ev, "outcome", buf, sizeof(buf));
        empty += !strcmp(buf, "empty");
        zombies += !strcmp(buf, "zombies");
        other += strcmp(buf, "empty") && strcmp(buf, "zombies");
        free(ev);
        done++;
        /* The nursery ends once the uid is empty by the kernel's count
         * (zombies reaped), so that no orphan goes to init. */
        while (bench_dfix_uid_busy(&b, uid))
            usleep(500);
        kill(racer, SIGKILL);
        waitpid(racer, NULL, 0);
    }

    xlrt_daemon_stop(&dm);
    xlrt_xs_kill(&b.xs);
    if (!done)
        bench_dfix_die(&b, "no death was timed");
    qsort(lat, done, sizeof(*lat), cmp_u64);
    qsort(inner, done, sizeof(*inner), cmp_u64);
    printf("bench-daemon: %u domain deaths, each with a fork racer under "
           "its uid\n",
           done);
    printf("  release to verified (event line written): median %.2f ms, "
           "p99 %.2f ms, max %.2f ms\n",
           pct(lat, done, 0.5), pct(lat, done, 0.99),
           (double)lat[done - 1] / 1000.0);
    printf("  daemon's own event_us: median %.2f ms, p99 %.2f ms\n",
           pct(inner, done, 0.5), pct(inner, done, 0.99));
    printf("  outcomes: %u empty, %u zombies only, %u other; %u of %u "
           "within 1 s\n",
           empty, zombies, other, under_1s, done);
    xlrt_daemon_dispose(&dm);
    free(lat);
    free(inner);
    if (bench_dfix_dispose(&b))
        return 1;
    return done == n && !other ? 0 : 1;
}
