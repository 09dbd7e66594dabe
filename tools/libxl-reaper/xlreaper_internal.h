/*
 * xlreaper_internal.h - declarations shared inside the library and with
 * its unit tests.  Nothing here is part of the public interface.
 */
#ifndef XLREAPER_INTERNAL_H
#define XLREAPER_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "xlreaper.h"

#define _hidden __attribute__((visibility("hidden")))

/* ---------- logging: the function name and errno are added ---------- */

_hidden void xlreaper__log(const xlreaper_ctx *ctx, xentoollog_level level,
                           int errnoval, const char *func, const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));

/* The macros use the `ctx` in scope, as libxl's use `gc`. */
#define LOG(l, f, ...)                                                    \
    xlreaper__log(ctx, XTL_##l, -1, __func__, f, ##__VA_ARGS__)
#define LOGE(l, f, ...)                                                   \
    xlreaper__log(ctx, XTL_##l, errno, __func__, f, ##__VA_ARGS__)
#define LOGEV(l, e, f, ...)                                               \
    xlreaper__log(ctx, XTL_##l, (e), __func__, f, ##__VA_ARGS__)
#define LOGD(l, d, f, ...)                                                \
    xlreaper__log(ctx, XTL_##l, -1, __func__, "domid %u: " f, (d),        \
                  ##__VA_ARGS__)
#define LOGED(l, d, f, ...)                                               \
    xlreaper__log(ctx, XTL_##l, errno, __func__, "domid %u: " f, (d),     \
                  ##__VA_ARGS__)

/* ---------- passwd lookups, injectable for tests ---------- */

typedef struct {
    /* 0 with *found_r; or a negative XLREAPER_ERROR_*. */
    int (*by_name)(void *opaque, const char *name, uid_t *uid_r,
                   gid_t *gid_r, bool *found_r);
    /* Calls each(arg, name, uid) for every user; stops early when it
     * returns non-zero and returns that.  Else 0 or an error. */
    int (*each)(void *opaque,
                int (*fn)(void *arg, const char *name, uid_t uid),
                void *arg);
} xlreaper__passwd_ops;

_hidden extern const xlreaper__passwd_ops xlreaper__passwd_system;
_hidden void xlreaper__ctx_set_passwd(xlreaper_ctx *ctx,
                                      const xlreaper__passwd_ops *ops,
                                      void *opaque);

/* ---------- the context ---------- */

struct xlreaper_ctx {
    xentoollog_logger *lg;
    const xlreaper__passwd_ops *pw;
    void *pw_opaque;
    xlreaper_config *cfg; /* NULL until a load succeeds */
};

/* ---------- configuration ---------- */

_hidden void xlreaper__config_init(xlreaper_config *cfg);
_hidden void xlreaper__config_dispose(xlreaper_config *cfg);

/*
 * Checks and completes cfg's uid settings (range, pet, gid) against the
 * passwd database.  want_* are what the file said, or -1 when absent.
 */
_hidden int xlreaper__uid_settle(xlreaper_ctx *ctx, xlreaper_config *cfg,
                                 long want_base, long want_reaper);

/*
 * Every `key =` of a config text the way libxlutil reads it (comments,
 * quoting, lists spanning lines), for unknown and repeated keys, which
 * libxlutil's interface cannot list.  The text has already been
 * accepted by libxlutil.  Calls fn(arg, key, line); stops and returns
 * what fn returns if non-zero.
 */
_hidden int xlreaper__cfg_each_key(const char *text, size_t len,
                                   int (*fn)(void *arg, const char *key,
                                             unsigned line),
                                   void *arg);

/* ---------- children that report (step, errno) to their parent ---------- */

/*
 * Used by every forked helper (killer, probe, spawn): between fork and
 * _exit or execve the child only calls async-signal-safe functions, and
 * a failing step writes one record to a CLOEXEC pipe.  EOF with no record
 * means the child reached its end (execve succeeded, or it _exited).
 */
typedef struct {
    int step;  /* caller's own step numbers, > 0 */
    int err;   /* errno */
    long detail;
} xlreaper__child_report;

typedef struct {
    int rfd, wfd;
} xlreaper__report_pipe;

_hidden int xlreaper__report_pipe_open(xlreaper_ctx *ctx,
                                       xlreaper__report_pipe *p);
_hidden void xlreaper__report_pipe_close(xlreaper__report_pipe *p);
/* Child side: writes the record and _exit(127)s. */
_hidden void xlreaper__child_fail(int wfd, int step, int err, long detail)
    __attribute__((noreturn));
/* Parent side, after closing wfd: 1 if a record came, 0 on EOF, or an
 * error. */
_hidden int xlreaper__report_read(xlreaper_ctx *ctx, int rfd,
                                  xlreaper__child_report *rep);

/*
 * Forks a child running fn(wfd, arg), which must _exit or
 * xlreaper__child_fail and never return, and waits for it.  0 with
 * *status_r and *reported_r (whether the child sent *rep), or an error.
 */
_hidden int xlreaper__run_child(xlreaper_ctx *ctx, const char *what,
                                void (*fn)(int wfd, void *arg), void *arg,
                                xlreaper__child_report *rep,
                                bool *reported_r, int *status_r);

/* waitpid, looping on EINTR.  0 and *status_r, or _FAIL. */
_hidden int xlreaper__wait_child(xlreaper_ctx *ctx, pid_t pid,
                                 int *status_r);

/* Raw system calls: per-thread, no glibc setxid broadcast. */
_hidden int xlreaper__sys_setresuid(uid_t r, uid_t e, uid_t s);
_hidden int xlreaper__sys_setresgid(gid_t r, gid_t e, gid_t s);
_hidden int xlreaper__sys_setgroups0(void);
/* 0 when the calling task has no effective (and, if permitted_too, no
 * permitted) capability, else -1 with errno (EPERM when it has some). */
_hidden int xlreaper__caps_none(bool permitted_too);

/* ---------- the kernel count ---------- */

/* Probe with RLIMIT_NPROC = limit: *fits_r says whether a fork fitted,
 * i.e. whether uid's other tasks number limit - 2 or fewer. */
_hidden int xlreaper__probe_nproc(xlreaper_ctx *ctx, uid_t uid, gid_t gid,
                                  unsigned limit, bool *fits_r);

/* ---------- /proc ---------- */

/* Parses the text of /proc/<pid>[/task/<tid>]/status into t, and the
 * thread group's size into *threads_r.  0, or _INVAL when a field is
 * missing or malformed. */
_hidden int xlreaper__parse_status(const char *text, size_t len,
                                   xlreaper_task *t, unsigned *threads_r);

_hidden int xlreaper__task_list_add(xlreaper_task_list *list,
                                    const xlreaper_task *t);

/* xlreaper_scan_uid for two uids in one pass over /proc: each one's tasks
 * are appended to its own list (a task with both goes to both). */
_hidden int xlreaper__scan_uids(xlreaper_ctx *ctx, uid_t uid,
                                xlreaper_task_list *list, uid_t uid2,
                                xlreaper_task_list *list2);

/* ---------- small helpers ---------- */

_hidden uint64_t xlreaper__now_us(void);
_hidden void xlreaper__sleep_us(uint64_t us);
/* read(2) until EOF or max bytes; loops on EINTR.  Bytes read, or -1. */
_hidden ssize_t xlreaper__read_all(int fd, char *buf, size_t max);
/* write(2) everything, looping on EINTR and short writes.  0 or -1. */
_hidden int xlreaper__write_all(int fd, const void *buf, size_t len);
/* close(2) keeping errno. */
_hidden void xlreaper__close_keep_errno(int fd);

#endif /* XLREAPER_INTERNAL_H */
