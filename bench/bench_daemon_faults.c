/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_daemon_faults - xl-reaperd under crashes, and its start sweep.
 *
 * Part 1: XLR_BENCH_CRASH_DEATHS (default 1000) domain deaths, each
 * with a task under its uid; after each death the daemon is SIGKILLed
 * at a random moment (0-30 ms after the @releaseDomain: waiting for the
 * lock, in the reap, between the kill and the event, after it) and
 * started again.  At the end: one event per death, none twice, no torn
 * line, every uid empty by the kernel's count.
 * Part 2: a full sweep of the whole range (the start sweep) with 64
 * dead-uid leftovers spread over it: how long it takes, as the daemon
 * logs it, and all 64 reaped.
 * The real daemon against fake_xenstored; uids 5400000 + domid.
 *
 * The benchmark stands in for the service manager: it is the daemon's
 * subreaper, and after each SIGKILL it kills and reaps what the daemon
 * left (helpers that were running: a probe under a DM uid, a killer
 * under the reaper uid) before it starts the daemon again, as systemd
 * does for xl-reaperd.service (KillMode=control-group, the default).
 * Without it, the helpers' zombies wait for this host's init, which
 * reaps orphans slowly, and the next run finds them: a "task" under a
 * dead domid's uid (reaped and reported again), or the reaper uid busy
 * (every reap refused until they are gone).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlreaper.h"
#include "lib/bench_dfix.h"

#define BASE 5400000u
#define FIRST_DOMID 200u
#define LEFTOVERS 64u

static bench_dfix b;

static void die(const char *why) __attribute__((noreturn));
static void die(const char *why)
{
    bench_dfix_die(&b, why);
}

/* Our own children: the fake xenstored and the tasks' subreapers.  Any
 * other child is something a killed daemon left (we are its
 * subreaper). */
static pid_t *own;
static unsigned num_own, cap_own;

static void own_add(pid_t pid)
{
    if (num_own == cap_own) {
        pid_t *n;
        cap_own = cap_own ? cap_own * 2 : 1024;
        n = realloc(own, cap_own * sizeof(*own));
        if (!n)
            die("out of memory");
        own = n;
    }
    own[num_own++] = pid;
}

static bool own_has(pid_t pid)
{
    for (unsigned i = 0; i < num_own; i++)
        if (own[i] == pid)
            return true;
    return false;
}

/* The whole of a /proc file (read to its end: a seq_file gives a page
 * a read), NUL-terminated; NULL if it cannot be read. */
static char *read_proc(const char *path)
{
    size_t len = 0, cap = 0;
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return NULL;
    for (;;) {
        ssize_t n;

        if (len + 4097 > cap) {
            char *nb;
            cap = cap ? cap * 2 : 16384;
            nb = realloc(buf, cap);
            if (!nb)
                die("out of memory");
            buf = nb;
        }
        n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

/* Kills and reaps every child of ours that is not our own: what a
 * killed daemon left.  How many. */
static unsigned kill_leftovers(void)
{
    unsigned killed = 0;
    uint64_t end = xlrt_now_us() + 10000000u;

    for (;;) {
        DIR *tasks = opendir("/proc/self/task");
        struct dirent *de;
        bool found = false;

        if (!tasks)
            die("cannot read /proc/self/task");
        while ((de = readdir(tasks))) {
            char path[320], *list;

            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "/proc/self/task/%s/children",
                     de->d_name);
            list = read_proc(path);
            for (char *p = list, *e; p && *p; p = e) {
                pid_t pid = (pid_t)strtol(p, &e, 10);

                if (e == p)
                    break;
                if (pid <= 0 || own_has(pid))
                    continue;
                kill(pid, SIGKILL);
                if (waitpid(pid, NULL, __WALL) == pid)
                    killed++;
                found = true;
            }
            free(list);
        }
        closedir(tasks);
        if (!found)
            return killed;
        if (xlrt_now_us() > end)
            die("a killed daemon's leftovers would not go");
    }
}

/* A subreaper whose child sleeps under uid; the subreaper exits once
 * its child is gone (killed by the daemon) and reaped. */
static pid_t task_start(uid_t uid)
{
    pid_t n = bench_dfix_task(uid, NULL, true);

    if (n < 0)
        die("fork");
    own_add(n);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf = NULL;
    size_t len = 0, cap = 0, r;

    if (!f)
        return NULL;
    do {
        if (len + 65536 + 1 > cap) {
            char *nb;
            cap = cap ? cap * 2 : 1u << 20;
            nb = realloc(buf, cap);
            if (!nb)
                die("out of memory");
            buf = nb;
        }
        r = fread(buf + len, 1, 65536, f);
        len += r;
    } while (r);
    fclose(f);
    buf[len] = '\0';
    return buf;
}

static void daemon_up(xlrt_daemon *dm, const char *dir, const char *config,
                      const char *sock)
{
    if (xlrt_daemon_start(dm, dir, config, sock) ||
        xlrt_daemon_wait_log(dm, "ready:", 60000))
        die("could not start the daemon");
}

int main(void)
{
    const char *s = getenv("XLR_BENCH_CRASH_DEATHS");
    unsigned n = s && atoi(s) > 0 ? (unsigned)atoi(s) : 1000;
    char *dir, *sock, *config, *text;
    unsigned *count, lines = 0, torn = 0, missing = 0, twice = 0, busy = 0;
    unsigned recovered = 0, swept_events = 0, leftovers = 0;
    pid_t *tasks, left[LEFTOVERS];
    unsigned seed = (unsigned)getpid();
    uint64_t t0, t_crash;
    xlrt_daemon dm;

    bench_dfix_setup(&b, "bench_daemon_faults", BASE);
    dir = b.dir;
    config = b.config;
    sock = b.sock;
    own_add(b.xs.pid);
    count = calloc(FIRST_DOMID + n + 1, sizeof(*count));
    tasks = calloc(n, sizeof(*tasks));
    if (!count || !tasks || FIRST_DOMID + n > 0x7FEF)
        die("out of memory, or too many deaths");
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        die("cannot be the daemon's subreaper");

    /* ---- part 1: a death, a SIGKILL at a random moment, a restart ---- */
    t0 = xlrt_now_us();
    for (unsigned i = 0; i < n; i++) {
        uint32_t domid = FIRST_DOMID + i;
        char want[48];

        daemon_up(&dm, dir, config, sock);
        if (xlrt_xs_cmd(&b.xs, NULL, 0, "add %u", domid))
            die("add");
        snprintf(want, sizeof(want), "domid %u: a new domain", domid);
        if (xlrt_daemon_wait_log(&dm, want, 60000))
            die("the daemon never learnt a domain");
        tasks[i] = task_start(BASE + domid);
        while (!bench_dfix_uid_busy(&b, BASE + domid))
            usleep(200);
        if (xlrt_xs_cmd(&b.xs, NULL, 0, "del %u", domid))
            die("del");
        usleep((useconds_t)(rand_r(&seed) % 30000));
        xlrt_daemon_kill(&dm);
        leftovers += kill_leftovers();
        xlrt_daemon_dispose(&dm);
    }
    /* The last start: it finishes what is left. */
    daemon_up(&dm, dir, config, sock);
    if (xlrt_daemon_wait_log(&dm, "sweep (whole range", 300000))
        die("the last start sweep never ended");
    for (unsigned i = 0; i < n; i++) {
        uint64_t end = xlrt_now_us() + 10000000u;

        while (bench_dfix_uid_busy(&b, BASE + FIRST_DOMID + i) &&
               xlrt_now_us() < end)
            usleep(1000);
        busy += bench_dfix_uid_busy(&b, BASE + FIRST_DOMID + i);
        waitpid(tasks[i], NULL, 0); /* its subreaper, ended with it */
    }
    t_crash = xlrt_now_us() - t0;
    xlrt_daemon_stop(&dm);
    text = slurp(dm.events);
    if (!text)
        die("no events file");
    if (*text && text[strlen(text) - 1] != '\n')
        torn++;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        long long d = xlrt_json_int(l, "domid");
        char trig[16];

        lines++;
        if (d < FIRST_DOMID || d >= FIRST_DOMID + n) {
            torn++;
            continue;
        }
        count[d]++;
        recovered += xlrt_json_bool(l, "recovered");
        swept_events +=
            !strcmp(xlrt_json_str(l, "trigger", trig, sizeof(trig)), "sweep");
    }
    free(text);
    for (unsigned i = 0; i < n; i++) {
        missing += count[FIRST_DOMID + i] == 0;
        twice += count[FIRST_DOMID + i] > 1;
    }
    xlrt_daemon_dispose(&dm);
    printf("bench-daemon-faults: %u domain deaths, each with a task under "
           "its uid, the daemon SIGKILLed 0-30 ms after each release and "
           "started again (%u kills)\n",
           n, n);
    printf("  events: %u lines, %u domids with none, %u with more than "
           "one, %u torn or foreign lines; %u recovered (finished by the "
           "next run), %u by a start sweep\n",
           lines, missing, twice, torn, recovered, swept_events);
    printf("  uids not empty at the end: %u of %u; %.1f s in all; %u "
           "helpers of killed daemons killed and reaped before a restart\n",
           busy, n, (double)t_crash / 1e6, leftovers);

    /* ---- part 2: the start sweep with 64 leftovers ---- */
    /* Counted from the daemon's own words (its log line for the start
     * sweep), and from the events: one per leftover, each by the start
     * sweep (a "census" event would be the census that xenstored's
     * first firing of @releaseDomain asks for, run before the sweep). */
    {
        unsigned max = xlreaper_max_domid(), reaped = 0, by_sweep = 0;
        unsigned by_census = 0;
        unsigned evs = 0, once = 0, still = 0;
        uint32_t domid[LEFTOVERS];
        unsigned cnt[LEFTOVERS] = { 0 };
        char events[600];
        struct stat st;
        off_t from;
        uint64_t t_start, t_empty = 0;
        char *log, *hit;
        double ms = -1;

        /* Part 1's events are not counted (two domids are in both). */
        snprintf(events, sizeof(events), "%s/events", dir);
        from = stat(events, &st) == 0 ? st.st_size : 0;
        for (unsigned k = 0; k < LEFTOVERS; k++) {
            domid[k] = 1 + k * (max / LEFTOVERS);
            left[k] = task_start(BASE + domid[k]);
        }
        for (unsigned k = 0; k < LEFTOVERS; k++)
            while (!bench_dfix_uid_busy(&b, BASE + domid[k]))
                usleep(200);
        t_start = xlrt_now_us();
        daemon_up(&dm, dir, config, sock);
        if (xlrt_daemon_wait_log(&dm, "sweep (whole range", 300000))
            die("the start sweep never ended");
        /* Each leftover's subreaper ends once its task was killed. */
        for (unsigned k = 0; k < LEFTOVERS; k++)
            waitpid(left[k], NULL, 0);
        t_empty = xlrt_now_us() - t_start;
        for (unsigned k = 0; k < LEFTOVERS; k++)
            still += bench_dfix_uid_busy(&b, BASE + domid[k]);
        log = slurp(dm.log);
        hit = log ? strstr(log + dm.log_seen - strlen("sweep (whole range"),
                           "sweep (whole range")
                  : NULL;
        if (hit)
            sscanf(strstr(hit, "done in ") ? strstr(hit, "done in ") : "",
                   "done in %lf ms", &ms);
        if (hit && strstr(hit, " reaped"))
            sscanf(strstr(hit, "uids of dead domids, ")
                       ? strstr(hit, "uids of dead domids, ")
                       : "",
                   "uids of dead domids, %u reaped", &reaped);
        free(log);
        xlrt_daemon_stop(&dm);
        text = slurp(dm.events);
        if (!text)
            die("no events file");
        for (char *save = NULL, *l = strtok_r(text + from, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
            long long d = xlrt_json_int(l, "domid");
            char trig[16];

            for (unsigned k = 0; k < LEFTOVERS; k++) {
                if (d != (long long)domid[k])
                    continue;
                cnt[k]++;
                evs++;
                xlrt_json_str(l, "trigger", trig, sizeof(trig));
                by_sweep += !strcmp(trig, "sweep");
                by_census += !strcmp(trig, "census");
            }
        }
        for (unsigned k = 0; k < LEFTOVERS; k++)
            once += cnt[k] == 1;
        free(text);
        printf("  start sweep of the whole range (%u uids) with %u "
               "dead-uid leftovers: %.1f ms by the daemon's log, %u "
               "reaped by it; %u events for them (%u by the first census, "
               "%u by the start sweep, "
               "%u leftovers with exactly one); all %u tasks dead %.1f ms "
               "after the daemon was started; %u uids not empty\n",
               max, LEFTOVERS, ms, reaped, evs, by_census, by_sweep, once,
               LEFTOVERS, (double)t_empty / 1000.0, still);
        xlrt_daemon_dispose(&dm);
        /* Reaped at the start, each once: by the census that
         * xenstored's first watch event asks for (what /proc shows), or
         * by the start sweep (what only the kernel's count finds). */
        if (ms < 0 || by_census + by_sweep != LEFTOVERS || once != LEFTOVERS ||
            still)
            busy++;
    }

    xlrt_xs_kill(&b.xs);
    free(count);
    free(tasks);
    /* XLR_BENCH_KEEP: the directory (events, logs, journal) is left
     * for a look. */
    if (bench_dfix_dispose(&b))
        return 1;
    return missing || twice || torn || busy ? 1 : 0;
}
