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
#include "xl_reaperd_domains.h"
#include "xl_reaperd_events.h"
#include "xl_reaperd_log.h"
#include "xl_reaperd_metrics.h"
#include "xl_reaperd_reap.h"
#include "xl_reaperd_state.h"
#include "xl_reaperd_sweep.h"
#include "xl_reaperd_xs.h"

/* How often the loop wakes when nothing happens: bounds how long a lost
 * xenstored goes unnoticed. */
#define TICK_MS 500

static char notify_socket[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* The loop's own state, and one of each module (xl_reaperd.h). */
typedef struct {
    xlreaper_ctx *ctx;
    xentoollog_logger *lg;
    const char *config_path; /* NULL: the default */
    unsigned config_flags;
    const char *events_path; /* NULL: no events file */
    const char *run_dir, *state_dir;
    int sfd; /* signalfd: TERM, INT, HUP */
    bool stop;
    bool reload;
    int exit_code; /* when stopped by a refusal: not XLRD_EXIT_OK */

    xlrd_metrics m;
    xlrd_state st;
    xlrd_events ev;
    xlrd_xs xs;
    xlrd_domains dm;
    xlrd_reaper rp;
    xlrd_sweeps sw;
} xlrd;

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
        XLRD_LOGE(ERROR, "sigprocmask");
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    d->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (d->sfd < 0) {
        XLRD_LOGE(ERROR, "signalfd");
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
            XLRD_LOG(NOTICE, "stopping on %s (from pid %u)",
                     strsignal((int)si.ssi_signo), si.ssi_pid);
            d->stop = true;
        }
    }
}

static void describe_config(xlrd *d, const char *what)
{
    const xlreaper_config *c = xlreaper_config_get(d->ctx);

    XLRD_LOG(NOTICE,
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
        XLRD_LOGE(ERROR,
                  "%s: cgroup_parent %s is not writable here, so no reap "
                  "can write cgroup.kill there (the uid kill goes on); "
                  "under xl-reaperd.service it must exist before the "
                  "daemon starts and be named in ReadWritePaths= (the "
                  "shipped unit names /sys/fs/cgroup/xen-dm)",
                  what, c->cgroup_parent);
}

/* The metrics file, with what the modules' counters do not say. */
static void write_metrics(xlrd *d, bool running)
{
    const char *path = xlreaper_config_get(d->ctx)->metrics_file;
    xlrd_metrics_gauges g = {
        .xenstore_connected = xlrd_xs_handle(&d->xs) != NULL,
        .events_queued = xlrd_events_queued(&d->ev),
    };

    if (path)
        xlrd_reaper_counts(&d->rp, &g.uids_pending_retry, &g.uids_backed_off);
    xlrd_metrics_write(&d->m, path, &g, running);
}

static void reload(xlrd *d)
{
    int rc;

    d->reload = false;
    rc = xlreaper_config_load(d->ctx, d->config_path, d->config_flags);
    if (rc) {
        XLRD_LOG(ERROR,
                 "SIGHUP: the config was refused (%s); the settings in "
                 "force are kept",
                 xlreaper_strerror(rc));
        return;
    }
    describe_config(d, "SIGHUP: reloaded");
    write_metrics(d, true);
    xlrd_sweeps_reschedule(&d->sw);
    xlrd_events_open(&d->ev);
}

/* ---------- the loop ---------- */

/* Each piece of work: one bounded piece of its kind, if there is any;
 * false when there was none. */

static bool work_list(xlrd *d, uint64_t now)
{
    (void)now;
    return xlrd_reconcile(&d->rp);
}

static bool work_reap(xlrd *d, uint64_t now)
{
    (void)now;
    return xlrd_domains_can_list(&d->dm) && xlrd_reap_next(&d->rp);
}

/* What a domain's event will say of its DM's uid.  After the deaths:
 * removing a dead domain's directory fires its kill-uid watch just
 * before @releaseDomain, and that node, gone, is not read at all. */
static bool work_kill_uids(xlrd *d, uint64_t now)
{
    (void)now;
    return xlrd_reaper_kill_uids(&d->rp);
}

static bool work_reload(xlrd *d, uint64_t now)
{
    (void)now;
    if (!d->reload)
        return false;
    reload(d);
    return true;
}

/* Whatever xenstored does: the metrics say so within a period. */
static bool work_metrics(xlrd *d, uint64_t now)
{
    if (now < xlrd_metrics_next_us(&d->m))
        return false;
    write_metrics(d, true);
    return true;
}

static bool work_events(xlrd *d, uint64_t now)
{
    uint64_t when = xlrd_events_next_flush_us(&d->ev);

    if (!when || now < when)
        return false;
    xlrd_events_flush(&d->ev);
    return true;
}

static bool work_census(xlrd *d, uint64_t now)
{
    (void)now;
    if (xlrd_sweeps_step_census(&d->sw))
        return true;
    if (!xlrd_domains_can_list(&d->dm) || !xlrd_xs_take_census(&d->xs))
        return false;
    xlrd_sweeps_begin_census(&d->sw);
    return true;
}

static bool work_sweep(xlrd *d, uint64_t now)
{
    if (xlrd_sweeps_step_periodic(&d->sw))
        return true;
    if (!xlrd_sweeps_periodic_due(&d->sw, now))
        return false;
    /* Without xenstore a xenstore list cannot be read. */
    if (xlrd_domains_can_list(&d->dm)) {
        xlrd_sweeps_begin_periodic(&d->sw);
        return true;
    }
    xlrd_sweeps_postpone(&d->sw, now + TICK_MS * 1000u);
    return false;
}

/*
 * The dispatcher's table, most urgent first: the loop does the first
 * piece of work there is, then looks at its descriptors again.
 *
 * Deaths before housekeeping.  The list a watch event asked for and
 * then each death's reap come before the reads of changed kill-uid
 * nodes, a reload, the metrics rewrite and a retry of the events
 * queue: a dead domain's DM does not run on while xenstore is asked
 * about another or the metrics are rewritten (a reap marks them due,
 * and they are written once, after the deaths pending).  Housekeeping waits at most
 * for those deaths: as many as the domains that were known alive, each
 * reap bounded by lock_timeout_ms and reap_timeout_ms.  The sweeps come
 * last: they look for what no event told, and every step of theirs lets
 * a death that came meanwhile go first.
 */
/* clang-format off */
static bool (*const work[])(xlrd *d, uint64_t now) = {
    work_list,      /* deaths */
    work_reap,
    work_kill_uids, /* housekeeping */
    work_reload,
    work_metrics,
    work_events,
    work_census,    /* sweeps */
    work_sweep,
};
/* clang-format on */

/* One bounded piece of the pending work; true when there was something
 * to do (the loop then polls without waiting, and comes back). */
static bool dispatch(xlrd *d)
{
    uint64_t now = xlreaper_now_us();

    for (size_t i = 0; i < sizeof(work) / sizeof(work[0]); i++)
        if (work[i](d, now))
            return true;
    return false;
}

/* When the loop must wake if nothing happens. */
static uint64_t next_wake(const xlrd *d, uint64_t now)
{
    uint64_t wake = now + TICK_MS * 1000u, t;

    t = xlrd_sweeps_next_us(&d->sw);
    if (t < wake)
        wake = t;
    t = xlrd_metrics_next_us(&d->m);
    if (t < wake)
        wake = t;
    t = xlrd_events_next_flush_us(&d->ev);
    if (t && t < wake)
        wake = t;
    t = xlrd_xs_next_connect_us(&d->xs);
    if (!xlrd_xs_handle(&d->xs) && t < wake)
        wake = t;
    return wake;
}

static void run(xlrd *d)
{
    bool ready = false, busy = false;

    while (!d->stop) {
        struct pollfd pfd[2] = {
            { .fd = d->sfd, .events = POLLIN },
            { .fd = xlrd_xs_fd(&d->xs), .events = POLLIN },
        };
        uint64_t now = xlreaper_now_us(), wake;
        int timeout;

        if (!xlrd_xs_handle(&d->xs) &&
            now >= xlrd_xs_next_connect_us(&d->xs) &&
            xlrd_xs_connect(&d->xs) && !ready) {
            XLRD_LOG(NOTICE, "ready: watching @releaseDomain");
            sd_notify_msg("READY=1");
            ready = true;
            write_metrics(d, true);
        }
        if (xlrd_xs_refused(&d->xs)) {
            d->stop = true;
            d->exit_code = XLRD_EXIT_USAGE;
        }
        wake = next_wake(d, now);
        timeout = busy ? 0 : wake > now ? (int)((wake - now + 999) / 1000) : 0;
        if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR) {
            XLRD_LOGE(ERROR, "poll");
            break;
        }
        /* Every turn: signals, watch events, and a connection that died
         * silently.  They only mark work; dispatch does it. */
        read_signals(d);
        xlrd_xs_events(&d->xs);
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

/* The options, into d and *level: -1 to go on, or the exit code. */
static int parse_options(xlrd *d, int argc, char **argv,
                         xentoollog_level *level)
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
    int opt;

    opterr = 0; /* one line of our own, "xl-reaperd: error: ..." */
    while ((opt = getopt_long(argc, argv, "+:c:e:r:s:vhV", opts, NULL)) !=
           -1) {
        switch (opt) {
        case 'c':
            d->config_path = optarg;
            d->config_flags |= XLREAPER_CONFIG_MUST_EXIST;
            break;
        case 'e': d->events_path = optarg; break;
        case 'r': d->run_dir = optarg; break;
        case 's': d->state_dir = optarg; break;
        case 'v': *level = *level == XTL_NOTICE ? XTL_INFO : XTL_DEBUG; break;
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
    return -1;
}

/* What must hold before anything starts: -1 to go on, or the exit
 * code. */
static int check_start(const xlrd *d)
{
    if (geteuid() != 0) {
        fprintf(stderr, "xl-reaperd: error: must run as root\n");
        return XLRD_EXIT_USAGE;
    }
    if (d->events_path && d->events_path[0] != '/') {
        fprintf(stderr, "xl-reaperd: error: --events needs an absolute "
                        "path (the file is reopened on SIGHUP)\n");
        return XLRD_EXIT_USAGE;
    }
    /* getopt gives a required argument, never NULL; said for the
     * analyzers, which cannot know it. */
    if (!d->run_dir || !d->state_dir || d->run_dir[0] != '/' ||
        d->state_dir[0] != '/') {
        fprintf(stderr, "xl-reaperd: error: --run-dir and --state-dir "
                        "need absolute paths\n");
        return XLRD_EXIT_USAGE;
    }
    return -1;
}

/* Everything up to the loop: 0, or the exit code (what was said is
 * said).  Whatever it did, stop_all() undoes. */
static int start(xlrd *d)
{
    int rc;

    /* First, what holds nothing, so that stop_all() can undo any part
     * of the rest. */
    xlrd_metrics_init(&d->m);
    rc = xlrd_state_init(&d->st, d->run_dir, d->state_dir);
    rc |= xlrd_events_init(&d->ev, d->events_path, &d->st, &d->m);
    rc |= xlrd_xs_init(&d->xs);
    if (rc || xlreaper_ctx_alloc(&d->ctx, d->lg))
        return XLRD_EXIT_FAIL;
    xlreaper_ctx_set_progname(d->ctx, "xl-reaperd");
    xlrd_log_init(d->ctx);
    /* Then: a second daemon must not touch anything of the first's. */
    rc = xlrd_run_lock(&d->st);
    if (rc)
        return rc;
    rc = xlreaper_config_load(d->ctx, d->config_path, d->config_flags);
    if (rc)
        return rc == XLREAPER_ERROR_INVAL ? XLRD_EXIT_USAGE : XLRD_EXIT_FAIL;
    /* The unit's OOMScoreAdjust=-1000 has set it before the capability
     * was dropped, so this write is allowed; started another way
     * without CAP_SYS_RESOURCE, the warning says the daemon is exposed.
     * Its helpers inherit it (xlreaper_oom.c). */
    if (xlreaper_oom_protect(d->ctx) == XLREAPER_ERROR_PERM)
        XLRD_LOG(WARN,
                 "oom_score_adj is not -1000 and cannot be made so without "
                 "CAP_SYS_RESOURCE: under memory pressure the OOM killer may "
                 "choose this daemon, or a helper of its reaps, before a "
                 "device model (OOMScoreAdjust=-1000 in its unit sets it)");
    if (xlrd_events_open(&d->ev) < 0)
        return XLRD_EXIT_USAGE;
    if (signals_init(d) < 0)
        return XLRD_EXIT_FAIL;
    rc = xlrd_domains_init(&d->dm, d->ctx, d->lg, &d->xs,
                           xlrd_hypervisor_present());
    if (rc)
        return rc;
    if (xlrd_reaper_init(&d->rp, d->ctx, &d->dm, &d->xs, &d->ev, &d->st,
                         &d->m) < 0 ||
        xlrd_sweeps_init(&d->sw, d->ctx, &d->rp, &d->dm, &d->m) < 0) {
        XLRD_LOG(ERROR, "out of memory");
        return XLRD_EXIT_FAIL;
    }
    describe_config(d, "starting");
    /* Unfinished reaps of an earlier run are found before anything
     * else is reaped; the loop redoes them first. */
    if (xlrd_intents_open(&d->st, d->events_path) < 0)
        return XLRD_EXIT_FAIL;
    xlrd_reaper_recovered(&d->rp);
    /* From the first second, connected to xenstored or not. */
    write_metrics(d, true);
    xlrd_wait_reaper_uid(&d->rp);
    return 0;
}

static void stop_all(xlrd *d)
{
    xlrd_sweeps_dispose(&d->sw);
    xlrd_reaper_dispose(&d->rp);
    xlrd_domains_dispose(&d->dm);
    xlrd_xs_dispose(&d->xs);
    xlrd_events_dispose(&d->ev);
    xlrd_state_dispose(&d->st);
    if (d->sfd >= 0)
        close(d->sfd);
    xlrd_log_init(NULL);
    xlreaper_ctx_free(d->ctx);
    xtl_logger_destroy(d->lg);
}

int main(int argc, char **argv)
{
    xlrd d = { .sfd = -1,
               .run_dir = XLRD_DEFAULT_RUN_DIR,
               .state_dir = XLRD_DEFAULT_STATE_DIR };
    xentoollog_level level = XTL_NOTICE;
    int ret;

    ret = parse_options(&d, argc, argv, &level);
    if (ret < 0)
        ret = check_start(&d);
    if (ret >= 0)
        return ret;
    ret = sanitize_env();
    if (ret)
        return ret;
    /* The daemon runs at the priority it was started with, not at nice
     * -20: its census and sweeps take the reaper lock over a hundred
     * times in a row, and a holder at nice -20 is preferred to a waiter
     * woken by its release, libxl's reaper among them (docs/facts.md
     * F17).  Each reap raises its own thread for the reap's length,
     * and its killer is real-time (xlreaper_sched.c): the kill, which
     * must be quick, is not at the mercy of the racers either way. */

    d.lg = (xentoollog_logger *)xtl_createlogger_stdiostream(
        stderr, level, XTL_STDIOSTREAM_HIDE_PROGRESS);
    if (!d.lg)
        return XLRD_EXIT_FAIL;
    ret = start(&d);
    if (!ret) {
        run(&d);
        sd_notify_msg("STOPPING=1");
        /* Said, not left to a stale file: the daemon is gone. */
        write_metrics(&d, false);
        XLRD_LOG(NOTICE, "stopped");
        ret = d.exit_code ? d.exit_code : XLRD_EXIT_OK;
    }
    stop_all(&d);
    return ret;
}
