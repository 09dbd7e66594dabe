/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_daemon.c - driving xl-reaperd and the fake xenstored (see the
 * header).  Waits poll files with a bound that only a hang reaches: a
 * test asserts what happened, never how fast.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "xlrt_caps.h"
#include "xlrt_daemon.h"

#define MAX_DOMID 0x7FEF

uint64_t xlrt_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static const char *build_dir(void)
{
    const char *b = getenv("XLR_BUILD");

    return b && *b ? b : "build";
}

static void wait_pid(pid_t pid, int *status)
{
    int st;

    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (status)
        *status = st;
}

/* ---------- the fake xenstored ---------- */

/* One line from fd into buf (without the newline).  0, or -1 on EOF. */
static int read_line(int fd, char *buf, size_t sz)
{
    size_t n = 0;

    while (n + 1 < sz) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (c == '\n')
            break;
        buf[n++] = c;
    }
    buf[n] = '\0';
    return 0;
}

int xlrt_xs_start(xlrt_xs *xs, const char *sock, const char *const *initial)
{
    char prog[512], line[64], *argv[64];
    int in[2], out[2];
    unsigned argc = 0;

    snprintf(prog, sizeof(prog), "%s/tests/progs/fake_xenstored", build_dir());
    argv[argc++] = prog;
    argv[argc++] = (char *)sock;
    for (unsigned i = 0; initial && initial[i] && argc < 63; i++)
        argv[argc++] = (char *)initial[i];
    argv[argc] = NULL;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        return -1;
    xs->pid = fork();
    if (xs->pid < 0)
        return -1;
    if (xs->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execv(prog, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    xs->ctl = in[1];
    xs->out = out[0];
    xs->sock = strdup(sock);
    if (read_line(xs->out, line, sizeof(line)) < 0 || strcmp(line, "ready")) {
        xlrt_xs_kill(xs);
        return -1;
    }
    return 0;
}

int xlrt_xs_cmd(xlrt_xs *xs, char *reply, size_t sz, const char *fmt, ...)
{
    char line[8192], ans[256];
    va_list al;
    int n;

    va_start(al, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, al);
    va_end(al);
    if (n < 0 || (size_t)n >= sizeof(line) - 1)
        return -1;
    line[n++] = '\n';
    if (write(xs->ctl, line, (size_t)n) != n)
        return -1;
    if (read_line(xs->out, ans, sizeof(ans)) < 0)
        return -1;
    if (reply)
        snprintf(reply, sz, "%s", ans);
    return strncmp(ans, "ok", 2) ? -1 : 0;
}

void xlrt_xs_kill(xlrt_xs *xs)
{
    if (xs->pid > 0) {
        kill(xs->pid, SIGKILL); /* our own unreaped child */
        wait_pid(xs->pid, NULL);
    }
    xs->pid = -1;
    if (xs->ctl >= 0)
        close(xs->ctl);
    if (xs->out >= 0)
        close(xs->out);
    xs->ctl = xs->out = -1;
    free(xs->sock);
    xs->sock = NULL;
}

/* ---------- the daemon ---------- */

int xlrt_daemon_start(xlrt_daemon *dm, const char *dir, const char *config,
                      const char *sock)
{
    return xlrt_daemon_start_prog(dm, "bin/xl-reaperd", dir, config, sock);
}

int xlrt_daemon_start_prog(xlrt_daemon *dm, const char *which, const char *dir,
                           const char *config, const char *sock)
{
    return xlrt_daemon_start_events(dm, which, dir, config, sock, NULL);
}

int xlrt_daemon_start_events(xlrt_daemon *dm, const char *which,
                             const char *dir, const char *config,
                             const char *sock, const char *events)
{
    char prog[512], env[600];
    int fd;

    memset(dm, 0, sizeof(*dm));
    snprintf(prog, sizeof(prog), "%s/%s", build_dir(), which);
    if (asprintf(&dm->log, "%s/daemon.log", dir) < 0)
        return -1;
    dm->events = events ? strdup(events) : NULL;
    if (!events && asprintf(&dm->events, "%s/events", dir) < 0)
        return -1;
    if (!dm->events)
        return -1;
    dm->taken = calloc(MAX_DOMID + 1, sizeof(*dm->taken));
    if (!dm->taken)
        return -1;
    fd = open(dm->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    /* Appended to: what an earlier run logged is not waited for. */
    dm->log_seen = (size_t)lseek(fd, 0, SEEK_END);
    {
        struct stat st;
        dm->events_from = stat(dm->events, &st) == 0 ? (size_t)st.st_size : 0;
    }
    snprintf(env, sizeof(env), "XENSTORED_PATH=%s", sock);
    dm->pid = fork();
    if (dm->pid < 0) {
        close(fd);
        return -1;
    }
    if (dm->pid == 0) {
        char run[600], state[600];
        char *argv[] = { prog,       "--config",    (char *)config,
                         "--events", dm->events,    "--run-dir",
                         run,        "--state-dir", state,
                         "-v",       "-v",          NULL };

        /* The suite's own, so that daemons of two suites never meet. */
        snprintf(run, sizeof(run), "%s/run", dir);
        snprintf(state, sizeof(state), "%s/state", dir);
        char *envp[] = { env, NULL };
        uint64_t keep = xlrt_unit_caps();

        dup2(fd, 2);
        /* As under config/xl-reaperd.service: its capabilities only, and
         * NoNewPrivileges=; so every reap path the daemon suites take
         * runs with the set the unit ships. */
        if (!keep || xlrt_caps_only(keep) < 0 ||
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
            dprintf(2,
                    "xlrt_daemon: cannot take the unit's capabilities "
                    "(%#llx)\n",
                    (unsigned long long)keep);
            _exit(126);
        }
        execve(prog, argv, envp);
        _exit(127);
    }
    close(fd);
    return 0;
}

/* The whole of path, NUL-terminated, or NULL. */
static char *slurp(const char *path, size_t *len_r)
{
    FILE *f = fopen(path, "re");
    char *buf = NULL;
    size_t len = 0;

    if (!f)
        return NULL;
    for (;;) {
        char *nb = realloc(buf, len + 65536 + 1);
        size_t r;
        if (!nb) {
            free(buf);
            fclose(f);
            return NULL;
        }
        buf = nb;
        r = fread(buf + len, 1, 65536, f);
        len += r;
        if (r < 65536)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    if (len_r)
        *len_r = len;
    return buf;
}

static bool daemon_gone(xlrt_daemon *dm)
{
    int st;

    if (dm->pid <= 0)
        return true;
    if (waitpid(dm->pid, &st, WNOHANG) == dm->pid) {
        dm->pid = -1;
        return true;
    }
    return false;
}

/* What the daemon said last: a failed wait shows it, so that a CI log
 * explains the failure without the temporary directory. */
static void log_tail(xlrt_daemon *dm)
{
    size_t len = 0, from;
    char *text = slurp(dm->log, &len);
    unsigned lines = 0;

    if (!text)
        return;
    for (from = len; from > 0 && lines <= 30; from--)
        if (text[from - 1] == '\n')
            lines++;
    fprintf(stderr, "---- the daemon's log, last lines ----\n%s----\n",
            text + from + (from ? 1 : 0));
    free(text);
}

int xlrt_daemon_wait_log(xlrt_daemon *dm, const char *needle,
                         unsigned timeout_ms)
{
    uint64_t end = xlrt_now_us() + (uint64_t)timeout_ms * 1000u;

    for (;;) {
        size_t len = 0;
        char *text = slurp(dm->log, &len), *hit = NULL;
        bool gone;

        if (text && len > dm->log_seen)
            hit = strstr(text + dm->log_seen, needle);
        if (hit) {
            dm->log_seen = (size_t)(hit - text) + strlen(needle);
            free(text);
            return 0;
        }
        free(text);
        gone = daemon_gone(dm);
        if (gone || xlrt_now_us() > end) {
            fprintf(stderr, "xlrt: %s waiting for \"%s\" in %s\n",
                    gone ? "the daemon exited" : "timed out", needle, dm->log);
            log_tail(dm);
            return -1;
        }
        usleep(5000);
    }
}

void xlrt_daemon_log_mark(xlrt_daemon *dm)
{
    size_t len = 0;
    char *text = slurp(dm->log, &len);

    if (text)
        dm->log_seen = len;
    free(text);
    text = slurp(dm->events, &len);
    dm->events_from = text ? len : 0;
    free(text);
    memset(dm->taken, 0, (MAX_DOMID + 1) * sizeof(*dm->taken));
}

/* The k-th (from 0) line of text whose "domid" is domid, or NULL. */
static char *nth_event(const char *text, uint32_t domid, unsigned k)
{
    const char *p = text;

    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line;

        if (!nl)
            break; /* a line being written */
        line = strndup(p, n);
        if (line && xlrt_json_int(line, "domid") == (long long)domid) {
            if (!k--)
                return line;
        }
        free(line);
        p = nl + 1;
    }
    return NULL;
}

int xlrt_daemon_wait_event(xlrt_daemon *dm, uint32_t domid,
                           unsigned timeout_ms, char **line_r)
{
    uint64_t end = xlrt_now_us() + (uint64_t)timeout_ms * 1000u;

    if (domid > MAX_DOMID)
        return -1;
    for (;;) {
        char *text = slurp(dm->events, NULL), *line = NULL;

        if (text && strlen(text) >= dm->events_from)
            line = nth_event(text + dm->events_from, domid, dm->taken[domid]);
        free(text);
        if (line) {
            dm->taken[domid]++;
            if (line_r)
                *line_r = line;
            else
                free(line);
            return 0;
        }
        if (daemon_gone(dm) || xlrt_now_us() > end) {
            fprintf(stderr, "xlrt: no event for domid %u in %s\n", domid,
                    dm->events);
            log_tail(dm);
            return -1;
        }
        usleep(2000);
    }
}

unsigned xlrt_daemon_count_events(xlrt_daemon *dm, uint32_t domid)
{
    char *text = slurp(dm->events, NULL), *line;
    unsigned n = 0;

    while (text && strlen(text) >= dm->events_from &&
           (line = nth_event(text + dm->events_from, domid, n))) {
        free(line);
        n++;
    }
    free(text);
    return n;
}

int xlrt_daemon_stop(xlrt_daemon *dm)
{
    int st;

    if (dm->pid <= 0)
        return -1;
    kill(dm->pid, SIGTERM); /* our own child */
    wait_pid(dm->pid, &st);
    dm->pid = -1;
    return st;
}

void xlrt_daemon_kill(xlrt_daemon *dm)
{
    if (dm->pid <= 0)
        return;
    kill(dm->pid, SIGKILL);
    wait_pid(dm->pid, NULL);
    dm->pid = -1;
}

int xlrt_daemon_hup(xlrt_daemon *dm)
{
    return dm->pid > 0 ? kill(dm->pid, SIGHUP) : -1;
}

void xlrt_daemon_dispose(xlrt_daemon *dm)
{
    xlrt_daemon_kill(dm);
    free(dm->log);
    free(dm->events);
    free(dm->taken);
    dm->log = dm->events = NULL;
    dm->taken = NULL;
}

/* ---------- JSON ---------- */

static yajl_val field(const char *json, const char *key, yajl_val *tree)
{
    const char *path[] = { key, NULL };

    *tree = yajl_tree_parse(json, NULL, 0);
    return *tree ? yajl_tree_get(*tree, path, yajl_t_any) : NULL;
}

long long xlrt_json_int(const char *json, const char *key)
{
    yajl_val tree, v = field(json, key, &tree);
    long long r = v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;

    yajl_tree_free(tree);
    return r;
}

const char *xlrt_json_str(const char *json, const char *key, char *buf,
                          size_t sz)
{
    yajl_val tree, v = field(json, key, &tree);

    snprintf(buf, sz, "%s", v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "");
    yajl_tree_free(tree);
    return buf;
}

long xlrt_json_array_len(const char *json, const char *key)
{
    yajl_val tree, v = field(json, key, &tree);
    long r = v && YAJL_IS_ARRAY(v) ? (long)v->u.array.len : -1;

    yajl_tree_free(tree);
    return r;
}

bool xlrt_json_bool(const char *json, const char *key)
{
    yajl_val tree, v = field(json, key, &tree);
    bool r = v && YAJL_IS_TRUE(v);

    yajl_tree_free(tree);
    return r;
}
