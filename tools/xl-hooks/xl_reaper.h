/*
 * xl_reaper.h - the admin CLI's shared pieces: its state, its commands
 * and its exit codes.  One file per command (xl_reaper_cmd_*.c).
 */
#ifndef XL_REAPER_H
#define XL_REAPER_H

#include <stdbool.h>
#include <stdint.h>

#include "xlreaper.h"

/* Exit codes: other tools and tests rely on them. */
#define XLR_EXIT_OK 0
#define XLR_EXIT_USAGE 1   /* bad input or configuration */
#define XLR_EXIT_LOCK 2    /* the reaper lock was not had in time */
#define XLR_EXIT_REMAIN 3  /* tasks remain under the uid */
#define XLR_EXIT_FAIL 4    /* a system call failed: no verdict */

/* `xl-reaper audit` has its own, as test harnesses expect them. */
#define XLR_AUDIT_EXIT_OK 0
#define XLR_AUDIT_EXIT_VIOLATION 1
#define XLR_AUDIT_EXIT_UNKNOWN 2 /* could not check; it says what */

typedef struct {
    xlreaper_ctx *ctx;
    xentoollog_logger *lg;
    bool json;
    const char *config_path; /* NULL: the default, absent means defaults */
} xlr_cli;

typedef struct {
    const char *name;
    const char *args;    /* what follows the name, for --help */
    const char *summary;
    int (*fn)(xlr_cli *cli, int argc, char **argv); /* returns exit code */
} xlr_command;

extern const xlr_command xlr_commands[];

int xlr_cmd_uid(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_spawn(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_kill(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_destroy(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_status(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_check(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_audit(xlr_cli *cli, int argc, char **argv);

/*
 * audit when it cannot run at all (the config did not load: why): with
 * --prometheus, the metrics say so (xl_reaper_audit_up 0).  argv as for
 * xlr_cmd_audit.  Returns the audit's exit 2.
 */
int xlr_audit_unchecked(int argc, char **argv, bool json, const char *why);

/*
 * The audit as metrics (xl_reaper_audit_prom.c): to path, replaced
 * atomically, or to stdout when path is NULL.  res NULL, or error set:
 * the audit could not run, error says why.  0, or -1 (said on stderr).
 */
int xlr_audit_prometheus(const xlreaper_audit_result *res, const char *error,
                         const char *path);

/*
 * Execs xl-reaper-xen with the whole command line argv, for a command
 * whose code this binary does not contain (xl_reaper_xen_handoff.c).
 * Returns only if it cannot, with fail, having said why.
 */
int xlr_xen_handoff(char **argv, int fail);

/* One line on stderr, "xl-reaper: ...", for the user's own mistakes. */
void xlr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses a DOMID argument, saying what is wrong with it.  0 or -1. */
int xlr_parse_domid(const char *arg, uint32_t *domid_r);

/* The exit code for a library return code. */
int xlr_exit_code(int rc);

/* Prints a reap result as a line, or as JSON with --json. */
void xlr_print_reap(const xlr_cli *cli, const xlreaper_reap_result *res);

#endif /* XL_REAPER_H */
