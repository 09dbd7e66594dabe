/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_spawn.h - helpers for the spawn suites (tests/spawn): a ctx in
 * the suite's own uid block (logging to xlrt_capture_logger), the probe
 * program's report, and /proc readers.  Like xlr_test.h they read
 * the kernel directly, never through the library under test.
 */
#ifndef XLRT_SPAWN_H
#define XLRT_SPAWN_H

#include "xlr_test.h"

/*
 * A ctx with the capture logger, whose config puts the DM uids at base
 * (the pet is the base too), the lock in tmpdir, chroots under tmpdir,
 * followed by the lines in extra (may be NULL).
 */
xlreaper_ctx *xlrt_spawn_ctx(const char *tmpdir, unsigned long base,
                             const char *extra);
/* That config, written to tmpdir/xl-reaper.conf; the malloc'd path. */
char *xlrt_spawn_conf(const char *tmpdir, unsigned long base,
                      const char *extra);

/* A spawn suite's fixture, each test's own. */
typedef struct {
    char *dir;       /* a fresh directory: the lock, the chroots */
    char *conf;      /* dir/xl-reaper.conf, once xlrt_sfix_conf wrote it */
    pid_t bystander; /* stopped by teardown if a check failed first */
} xlrt_sfix;

/* A fresh dir; the capture logger emptied. */
void xlrt_sfix_setup(xlrt_sfix *f);
/* (Re)writes f->conf: xlrt_spawn_ctx's config at base, with
 * qemu_path = qemu, then extra (may be NULL). */
void xlrt_sfix_conf(xlrt_sfix *f, unsigned long base, const char *qemu,
                    const char *extra);
/* Stops the bystander (its parent death signal went with its
 * setresuid) and any probe a failed assertion left running; removes
 * dir. */
void xlrt_sfix_teardown(xlrt_sfix *f);
/* cmocka's setup and teardown for a suite whose fixture is an xlrt_sfix
 * alone: *state is the calloc'd xlrt_sfix. */
int xlrt_sfix_new(void **state);
int xlrt_sfix_free(void **state);

/* Path of a program in build/tests/progs (malloc'd). */
char *xlrt_prog(const char *name);

/* A started probe: its pid and the report it wrote. */
typedef struct {
    pid_t pid;
    char *report; /* malloc'd; "" if it wrote nothing */
} xlrt_probe;

/*
 * Spawns build/tests/progs/spawn_probe MODE ("wait" or "exit") with
 * -add-fd fd=N,set=1 (N the write end of a fresh pipe) and the extra
 * arguments, through xlreaper_spawn.  Returns the spawn's rc; on 0 the
 * report is read to its end.  Stop a "wait" probe with
 * xlrt_probe_stop; an "exit" one is reaped here.
 */
int xlrt_probe_spawn(xlreaper_ctx *ctx, uint32_t domid, const char *mode,
                     const char *const *extra, xlrt_probe *p);
void xlrt_probe_stop(xlrt_probe *p);
/* Stops every probe still running (a test's teardown: an assertion that
 * failed skipped its xlrt_probe_stop). */
void xlrt_probe_cleanup(void);

/* /proc/<pid>/<file> as a string (malloc'd), or NULL. */
char *xlrt_proc_read(pid_t pid, const char *file);
/* The value of "Field:" in a status text, trimmed (malloc'd), or NULL. */
char *xlrt_status_field(const char *status, const char *field);
/* Soft and hard limit of the /proc/<pid>/limits line starting with
 * name ("Max processes"); "unlimited" reads as UINT64_MAX.  0 or -1. */
int xlrt_limit(pid_t pid, const char *name, uint64_t *soft, uint64_t *hard);

/* 1 when text has a line equal to line. */
bool xlrt_has_line(const char *text, const char *line);

/* ---------- a DM program that reports what it tried ---------- */

/* One line "name=want" (an errno name, or "0") of such a report. */
typedef struct {
    const char *name, *want;
} xlrt_attempt;

/* Fails unless out has each of the n attempts' lines. */
void xlrt_expect_attempts(const char *out, const xlrt_attempt *a, size_t n);

/* `xl-reaper --config f->conf spawn DOMID -- prog`, exec mode: fails
 * unless it exits 0; its stdout, the DM's report (malloc'd). */
char *xlrt_spawn_cli_report(const xlrt_sfix *f, unsigned domid,
                            const char *prog);

/*
 * qemu-dm-restrict -xen-domid DOMID -runas U:U (U = base + domid) and
 * then extra (may be NULL), in runas mode (f->conf rewritten so, with
 * qemu_path = qemu).  Its exit code; its stdout and stderr (malloc'd)
 * in *out_r and *err_r (each may be NULL: then freed here).
 */
int xlrt_runas_wrapper(xlrt_sfix *f, unsigned long base, const char *qemu,
                       unsigned domid, const char *const *extra, char **out_r,
                       char **err_r);
/* That, with no extra: fails unless it exits 0; its stdout. */
char *xlrt_runas_report(xlrt_sfix *f, unsigned long base, const char *qemu,
                        unsigned domid);

#endif /* XLRT_SPAWN_H */
