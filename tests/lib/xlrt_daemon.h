/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_daemon.h - driving xl-reaperd and the fake xenstored from a test
 * or a benchmark: start and stop them (by their pids: they are our own
 * children), send the fake its control commands, and wait for what the
 * daemon writes to its log and its events file.  No cmocka here, so
 * that bench/ can link it too: functions return 0 or -1.
 */
#ifndef XLRT_DAEMON_H
#define XLRT_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;
    int ctl;    /* its stdin */
    int out;    /* its stdout */
    char *sock; /* the socket path, for XENSTORED_PATH */
} xlrt_xs;

/* Starts build/tests/progs/fake_xenstored on sock (the domains in
 * initial, "DOMID[:KILLUID]" each, NULL-terminated, exist before it
 * listens) and waits until it listens. */
int xlrt_xs_start(xlrt_xs *xs, const char *sock, const char *const *initial);
/* One control command (a line, without its newline); 0 when it answered
 * "ok".  The answer goes to reply when not NULL. */
int xlrt_xs_cmd(xlrt_xs *xs, char *reply, size_t sz, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Kills it (SIGKILL: as a crash would) and waits for it. */
void xlrt_xs_kill(xlrt_xs *xs);

typedef struct {
    pid_t pid;
    char *log;       /* its stderr */
    char *events;    /* its --events file */
    size_t log_seen;    /* how far log waits have read */
    size_t events_from; /* events before this offset are old */
    uint16_t *taken; /* per domid: events returned by waits */
} xlrt_daemon;

/* Starts build/bin/xl-reaperd --config config --events dir/events
 * --run-dir dir/run --state-dir dir/state -v -v with
 * XENSTORED_PATH=sock, its stderr in dir/daemon.log.  Does not wait. */
int xlrt_daemon_start(xlrt_daemon *dm, const char *dir, const char *config,
                      const char *sock);
/* The same with another build of the daemon: prog under the build dir,
 * e.g. "tests/xl-reaperd-fakexen". */
int xlrt_daemon_start_prog(xlrt_daemon *dm, const char *prog, const char *dir,
                           const char *config, const char *sock);
/* The same with the events file at events (NULL: dir/events). */
int xlrt_daemon_start_events(xlrt_daemon *dm, const char *prog,
                             const char *dir, const char *config,
                             const char *sock, const char *events);
/* Waits up to timeout_ms for needle in the log past what earlier waits
 * read; moves past it.  0 when found. */
int xlrt_daemon_wait_log(xlrt_daemon *dm, const char *needle,
                         unsigned timeout_ms);
/* Waits from now on look only at what is logged, and at the events
 * written, after this call. */
void xlrt_daemon_log_mark(xlrt_daemon *dm);
/* Waits for domid's next event: the first of its lines in the events
 * file that no earlier wait returned.  The line, malloc'd, in *line_r. */
int xlrt_daemon_wait_event(xlrt_daemon *dm, uint32_t domid,
                           unsigned timeout_ms, char **line_r);
/* Every event line so far for domid, counted. */
unsigned xlrt_daemon_count_events(xlrt_daemon *dm, uint32_t domid);
/* SIGTERM, wait; returns its wait status, or -1. */
int xlrt_daemon_stop(xlrt_daemon *dm);
/* SIGKILL, wait: a crash. */
void xlrt_daemon_kill(xlrt_daemon *dm);
/* SIGHUP. */
int xlrt_daemon_hup(xlrt_daemon *dm);
void xlrt_daemon_dispose(xlrt_daemon *dm);

/* A field of a one-line JSON object: an integer (-1 when absent), a
 * string (copied into buf; "" when absent), the length of an array (-1
 * when absent), or a boolean. */
long long xlrt_json_int(const char *json, const char *key);
const char *xlrt_json_str(const char *json, const char *key, char *buf,
                          size_t sz);
long xlrt_json_array_len(const char *json, const char *key);
bool xlrt_json_bool(const char *json, const char *key);

uint64_t xlrt_now_us(void);

#endif /* XLRT_DAEMON_H */
