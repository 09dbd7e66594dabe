/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd.c - xl-reaperd [--config FILE] [--events FILE]
 *                            [--run-dir DIR] [--state-dir DIR] [-v]
 *
 * Runs in the foreground and logs to stderr (systemd's journal adds the
 * time).  One loop, one thread of ours: poll on a signalfd and on
 * libxenstore's watch fd, with a tick that notices a lost xenstored and
 * runs the sweeps.  Signals are blocked and read from the signalfd, so
 * no work is ever done in a handler: SIGTERM and SIGINT stop, SIGHUP
 * reloads the config (a bad one is refused and the old one kept) and
 * reopens the events file.
 *
 * The environment is not the daemon's to trust: it keeps only
 * XENSTORED_PATH and XENSTORED_RUNDIR (which libxenstore reads), once
 * checked, and NOTIFY_SOCKET for systemd, and clears the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "xl_reaperd.h"

/* How often the loop wakes when nothing happens: bounds how long a lost
 * xenstored goes unnoticed. */
#define TICK_MS 500

static char notify_socket[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* ---------- the environment ---------- */

/* An absolute path of printable characters, no "..", shorter than max. */
static bool sane_path(const char *p, size_t max)
{
    size_t n = strlen(p);

    if (p[0] != '/' || n >= max || strstr(p, "/../") ||
        (n >= 3 && !strcmp(p + n - 3, "/..")))
        return false;
    for (; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return false;
    return true;
}

static int sanitize_env(void)
{
    static const struct {
        const char *name;
        size_t max;
    } keep[] = {
        { "XENSTORED_PATH", sizeof(notify_socket) },
        { "XENSTORED_RUNDIR", PATH_MAX - 16 },
    };
    char *vals[2] = { NULL, NULL };
    const char *ns = getenv("NOTIFY_SOCKET");
    int rc = 0;

    for (unsigned i = 0; i < 2; i++) {
        const char *v = getenv(keep[i].name);
        if (!v)
            continue;
        if (!sane_path(v, keep[i].max)) {
            fprintf(stderr,
                    "xl-reaperd: error: %s is not a sane absolute path; "
                    "refusing to start\n",
                    keep[i].name);
            rc = XLRD_EXIT_USAGE;
        }
        vals[i] = strdup(v);
    }
    /* An abstract socket ("@name") or an absolute path, as systemd sets. */
    if (ns && strlen(ns) < sizeof(notify_socket) &&
        (ns[0] == '@' || sane_path(ns, sizeof(notify_socket))))
        snprintf(notify_socket, sizeof(notify_socket), "%s", ns);
    clearenv();
    setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
    for (unsigned i = 0; i < 2; i++) {
        if (vals[i] && !rc)
            setenv(keep[i].name, vals[i], 1);
        free(vals[i]);
    }
    return rc;
    /* gcc 12's -fanalyzer cannot tell that the loop above frees what
     * vals[i] = strdup() stored at a symbolic index, and reports a leak
     * at the closing brace: a false positive. */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

/* systemd's readiness protocol, by hand: one datagram. */
static void sd_notify_msg(const char *msg)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    socklen_t len;
    int fd;

    if (!notify_socket[0])
        return;
    memcpy(sa.sun_path, notify_socket, strlen(notify_socket));
    len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                      strlen(notify_socket));
    if (sa.sun_path[0] == '@')
        sa.sun_path[0] = '\0';
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    (void)!sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                  len);
    close(fd);
}

/* ---------- signals ---------- */

static int signals_init(xlrd *d)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    /* Blocked before libxenstore starts its thread, which inherits the
     * mask; they wait for the signalfd. */
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
        XLRD_LOGE(d, ERROR, "sigprocmask");
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (d->sfd < 0) {
        XLRD_LOGE(d, ERROR, "signalfd");
        return -1;
    }
    return 0;
}

/* Reads the signalfd without blocking: marks stop or reload. */
static void read_signals(xlrd *d)
{
    struct signalfd_siginfo si;

    while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
            d->reload = true;
        } else if (!d->stop) {
            XLRD_LOG(d, NOTICE, "stopping on %s (from pid %u)",
                     strsignal((int)si.ssi_signo), si.ssi_pid);
            d->stop = true;
        }
    }
}

static void describe_config(xlrd *d, const char *what)
{
    const xlreaper_config *c = xlreaper_config_get(d->ctx);

    XLRD_LOG(d, NOTICE,
             "%s: config %s, DM uids %lu..%lu, reaper uid %lu, lock %s, "
             "sweep every %u s, metrics file %s",
             what, c->path ? c->path : "none (defaults)",
             (unsigned long)c->dm_uid_base + 1,
             (unsigned long)c->dm_uid_base + xlreaper_max_domid(),
             (unsigned long)c->reaper_uid, c->lock_file, c->sweep_interval_s,
             c->metrics_file ? c->metrics_file : "none");
    /* Each reap writes <cgroup_parent>/dm-<domid>/cgroup.kill and
     * removes the directory.  Under the shipped unit cgroupfs is
     * read-only (ProtectControlGroups=) but for the one subtree
     * ReadWritePaths= names, and only if it existed when the unit
     * started ("-" skips a missing one): then every cgroup.kill fails
     * with EROFS.  The uid kill does not need it; say so once, here. */
    if (c->cgroup_parent && access(c->cgroup_parent, W_OK) < 0)
        XLRD_LOGE(d, ERROR,
                  "%s: cgroup_parent %s is not writable here, so no reap "
                  "can write cgroup.kill there (the uid kill goes on); "
                  "under xl-reaperd.service it must exist before the "
                  "daemon starts and be named in ReadWritePaths= (the "
                  "shipped unit names /sys/fs/cgroup/xen-dm)",
                  what, c->cgroup_parent);
}

static void reload(xlrd *d)
{
    int rc;

    d->reload = false;
    rc = xlreaper_config_load(d->ctx, d->config_path, d->config_flags);
    if (rc) {
        XLRD_LOG(d, ERROR,
                 "SIGHUP: the config was refused (%s); the settings in "
                 "force are kept",
                 xlreaper_strerror(rc));
        return;
    }
    describe_config(d, "SIGHUP: reloaded");
    xlrd_metrics_write(d, true);
    d->next_sweep_us =
        xlrd_now_us() +
        (uint64_t)xlreaper_config_get(d->ctx)->sweep_interval_s * 1000000u;
    xlrd_events_open(d);
}

/* ---------- the loop ---------- */

/* Whether a sweep may start: without xenstore a xenstore list cannot be
 * read. */
static bool can_list(const xlrd *d)
{
    return d->xsh || d->mode == XLRD_LIST_LIBXL;
}

/*
 * One bounded piece of the pending work, most urgent first: the list
 * after a watch event, one death's reap, the census after a release, a
 * step of the periodic sweep.  true when there was something to do (the
 * loop then polls without waiting, and comes back).
 */
static bool dispatch(xlrd *d)
{
    uint64_t now = xlrd_now_us();

    if (d->reload) {
        reload(d);
        return true;
    }
    /* Whatever xenstored does: the metrics say so within a period. */
    if (now >= d->next_metrics_us) {
        xlrd_metrics_write(d, true);
        return true;
    }
    if (d->next_flush_us && now >= d->next_flush_us) {
        xlrd_events_flush(d);
        return true;
    }
    if (d->reconcile_pending && can_list(d)) {
        xlrd_reconcile(d);
        return true;
    }
    if (can_list(d) && xlrd_reap_next(d))
        return true;
    if (d->census.phase != XLRD_SWEEP_IDLE)
        return xlrd_sweep_step(d, &d->census) || true;
    if (d->census_pending && can_list(d)) {
        d->census_pending = false;
        xlrd_sweep_begin(d, &d->census, XLRD_SWEEP_CENSUS);
        return true;
    }
    if (d->periodic.phase != XLRD_SWEEP_IDLE)
        return xlrd_sweep_step(d, &d->periodic) || true;
    if (d->full_sweep_pending || now >= d->next_sweep_us) {
        if (can_list(d)) {
            xlrd_sweep_begin(d, &d->periodic,
                             d->full_sweep_pending ? XLRD_SWEEP_FULL
                                                   : XLRD_SWEEP_WINDOW);
            return true;
        }
        d->next_sweep_us = now + TICK_MS * 1000u;
    }
    return false;
}

static void run(xlrd *d)
{
    bool ready = false, busy = false;

    while (!d->stop) {
        struct pollfd pfd[2] = { { .fd = d->sfd, .events = POLLIN },
                                 { .fd = xlrd_xs_fd(d), .events = POLLIN } };
        uint64_t now = xlrd_now_us(), wake = now + TICK_MS * 1000u;
        int timeout;

        if (!d->xsh && now >= d->next_connect_us && xlrd_xs_connect(d)) {
            /* Deaths while we were away are found by comparing lists. */
            d->reconcile_pending = true;
            if (!ready) {
                XLRD_LOG(d, NOTICE, "ready: watching @releaseDomain");
                sd_notify_msg("READY=1");
                ready = true;
                xlrd_metrics_write(d, true);
            }
        }
        if (d->next_sweep_us < wake)
            wake = d->next_sweep_us;
        if (d->next_metrics_us < wake)
            wake = d->next_metrics_us;
        if (d->next_flush_us && d->next_flush_us < wake)
            wake = d->next_flush_us;
        if (!d->xsh && d->next_connect_us < wake)
            wake = d->next_connect_us;
        timeout = busy ? 0 : wake > now ? (int)((wake - now + 999) / 1000) : 0;
        if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR) {
            XLRD_LOGE(d, ERROR, "poll");
            break;
        }
        /* Every turn: signals, watch events, and a connection that died
         * silently.  They only mark work; dispatch does it. */
        read_signals(d);
        xlrd_xs_events(d);
        if (d->stop)
            break;
        busy = dispatch(d);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xl-reaperd [--config FILE] [--events FILE] "
            "[--run-dir DIR]\n"
            "                  [--state-dir DIR] [-v]\n"
            "\n"
            "Reaps the device model uid of every domain that dies, and\n"
            "sweeps the uid range at start and every sweep_interval_s.\n"
            "\n"
            "  -c, --config FILE  config file (default %s;\n"
            "                     when that is absent, the defaults)\n"
            "  -e, --events FILE  append one JSON line per reap to FILE\n"
            "  -r, --run-dir DIR  its pid lock: one daemon per DIR\n"
            "                     (default %s)\n"
            "  -s, --state-dir DIR  its intent records (default %s)\n"
            "  -v, --verbose      more log output (twice: debug)\n"
            "  -V, --version      print the version\n"
            "  -h, --help         this text\n"
            "\n"
            "SIGHUP reloads the config and reopens FILE; SIGTERM stops.\n",
            XLREAPER_DEFAULT_CONFIG, XLRD_DEFAULT_RUN_DIR,
            XLRD_DEFAULT_STATE_DIR);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "events", required_argument, NULL, 'e' },
        { "run-dir", required_argument, NULL, 'r' },
        { "state-dir", required_argument, NULL, 's' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    xlrd d = { .events_fd = -1,
               .sfd = -1,
               .run_fd = -1,
               .intent_fd = -1,
               .run_dir = XLRD_DEFAULT_RUN_DIR,
               .state_dir = XLRD_DEFAULT_STATE_DIR,
               .full_sweep_pending = true };
    xentoollog_level level = XTL_NOTICE;
    int opt, ret = XLRD_EXIT_FAIL, rc;

    opterr = 0; /* one line of our own, "xl-reaperd: error: ..." */
    while ((opt = getopt_long(argc, argv, "+:c:e:r:s:vhV", opts, NULL)) !=
           -1) {
        switch (opt) {
        case 'c':
            d.config_path = optarg;
            d.config_flags |= XLREAPER_CONFIG_MUST_EXIST;
            break;
        case 'e':
            d.events_path = optarg;
            break;
        case 'r': d.run_dir = optarg; break;
        case 's': d.state_dir = optarg; break;
        case 'v':
            level = level == XTL_NOTICE ? XTL_INFO : XTL_DEBUG;
            break;
        case 'h':
            usage(stdout);
            return XLRD_EXIT_OK;
        case 'V':
            printf("xl-reaperd %s\n", XLREAPER_VERSION);
            return XLRD_EXIT_OK;
        case ':':
            fprintf(stderr,
                    "xl-reaperd: error: option '%s' needs a value "
                    "(see xl-reaperd --help)\n",
                    argv[optind - 1]);
            return XLRD_EXIT_USAGE;
        default:
            if (optopt && strncmp(argv[optind - 1], "--", 2))
                fprintf(stderr,
                        "xl-reaperd: error: unknown option '-%c' "
                        "(see xl-reaperd --help)\n",
                        optopt);
            else
                fprintf(stderr,
                        "xl-reaperd: error: unknown option '%s' "
                        "(see xl-reaperd --help)\n",
                        argv[optind - 1]);
            return XLRD_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr,
                "xl-reaperd: error: unexpected argument '%s' (it "
                "takes options only; see xl-reaperd --help)\n",
                argv[optind]);
        return XLRD_EXIT_USAGE;
    }
    if (geteuid() != 0) {
        fprintf(stderr, "xl-reaperd: error: must run as root\n");
        return XLRD_EXIT_USAGE;
    }
    if (d.events_path && d.events_path[0] != '/') {
        fprintf(stderr, "xl-reaperd: error: --events needs an absolute "
                        "path (the file is reopened on SIGHUP)\n");
        return XLRD_EXIT_USAGE;
    }
    /* getopt gives a required argument, never NULL; said for the
     * analyzers, which cannot know it. */
    if (!d.run_dir || !d.state_dir || d.run_dir[0] != '/' ||
        d.state_dir[0] != '/') {
        fprintf(stderr, "xl-reaperd: error: --run-dir and --state-dir "
                        "need absolute paths\n");
        return XLRD_EXIT_USAGE;
    }
    rc = sanitize_env();
    if (rc)
        return rc;
    /* A release waits for this process to wake on the watch event and
     * list the domains before the reap raises its own priority
     * (xlreaper_sched.c): on a host full of racers each of those steps
     * waited for a slice (bench-daemon).  nice -20, not real-time: the
     * census and sweeps read /proc, and must not starve the tasks they
     * wait for.  Without CAP_SYS_NICE nothing changes. */
    setpriority(PRIO_PROCESS, 0, -20);

    d.lg = (xentoollog_logger *)xtl_createlogger_stdiostream(
        stderr, level, XTL_STDIOSTREAM_HIDE_PROGRESS);
    if (!d.lg)
        return XLRD_EXIT_FAIL;
    /* First: a second daemon must not touch anything of the first's. */
    rc = xlrd_run_lock(&d);
    if (rc) {
        ret = rc;
        goto out;
    }
    if (xlreaper_ctx_alloc(&d.ctx, d.lg))
        goto out;
    xlreaper_ctx_set_progname(d.ctx, "xl-reaperd");
    rc = xlreaper_config_load(d.ctx, d.config_path, d.config_flags);
    if (rc) {
        ret = rc == XLREAPER_ERROR_INVAL ? XLRD_EXIT_USAGE : XLRD_EXIT_FAIL;
        goto out;
    }
    if (xlrd_events_init(&d) < 0)
        goto out;
    if (xlrd_events_open(&d) < 0) {
        ret = XLRD_EXIT_USAGE;
        goto out;
    }
    if (signals_init(&d) < 0)
        goto out;
    rc = xlrd_domains_init(&d, xlrd_hypervisor_present());
    if (rc) {
        ret = rc;
        goto out;
    }
    if (xlrd_sweep_alloc(&d.periodic) < 0 || xlrd_sweep_alloc(&d.census) < 0) {
        XLRD_LOG(&d, ERROR, "out of memory");
        goto out;
    }
    xlrd_metrics_init(&d);
    describe_config(&d, "starting");
    /* Unfinished reaps of an earlier run are found before anything
     * else is reaped; the loop redoes them first. */
    if (xlrd_intents_open(&d) < 0)
        goto out;
    /* From the first second, connected to xenstored or not. */
    xlrd_metrics_write(&d, true);
    d.next_metrics_us = xlrd_now_us() + XLRD_METRICS_PERIOD_S * 1000000u;
    xlrd_wait_reaper_uid(&d);

    run(&d);
    sd_notify_msg("STOPPING=1");
    /* Said, not left to a stale file: the daemon is gone. */
    xlrd_metrics_write(&d, false);
    XLRD_LOG(&d, NOTICE, "stopped");
    ret = d.exit_code ? d.exit_code : XLRD_EXIT_OK;

out:
    if (d.xsh)
        xs_close(d.xsh);
    xlrd_domains_dispose(&d);
    xlrd_sweep_dispose(&d.periodic);
    xlrd_sweep_dispose(&d.census);
    xlrd_events_dispose(&d);
    xlrd_intents_close(&d);
    if (d.sfd >= 0)
        close(d.sfd);
    xlreaper_ctx_free(d.ctx);
    xtl_logger_destroy(d.lg);
    return ret;
}
