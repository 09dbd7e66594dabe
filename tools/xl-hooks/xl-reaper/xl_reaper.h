/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaper.h - the admin CLI's shared pieces: its state, its commands
 * and its exit codes.  One file per command (xl_reaper_cmd_*.c).
 */
#ifndef XL_REAPER_H
#define XL_REAPER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xlreaper.h"

/* Exit codes: other tools and tests rely on them. */
#define XLR_EXIT_OK 0
#define XLR_EXIT_USAGE 1   /* bad input or configuration */
#define XLR_EXIT_LOCK 2    /* the reaper lock was not had in time */
#define XLR_EXIT_REMAIN 3  /* tasks remain under the uid */
#define XLR_EXIT_FAIL 4    /* a system call failed: no verdict */
#define XLR_EXIT_STUCK 5   /* killed tasks stay stuck in D state */

/* `xl-reaper audit` has its own, as test harnesses expect them. */
#define XLR_AUDIT_EXIT_OK 0
#define XLR_AUDIT_EXIT_VIOLATION 1
#define XLR_AUDIT_EXIT_UNKNOWN 2 /* could not check; it says what */

typedef struct {
    xlreaper_ctx *ctx;
    xentoollog_logger *lg;
    bool json;
    const char *config_path; /* NULL: the default, absent means defaults */
    unsigned config_flags;   /* for xlreaper_config_load */
} xlr_cli;

typedef struct {
    const char *name;
    const char *args;    /* what follows the name, for --help */
    const char *summary;
    int (*fn)(xlr_cli *cli, int argc, char **argv); /* returns exit code */
    const char *help; /* `COMMAND --help`: what the summary leaves out */
    int usage_exit;   /* the exit code of a usage error */
    bool needs_root;  /* refused at once, before anything, when not root */
} xlr_command;

extern const xlr_command xlr_commands[];

/* The command called name, or NULL. */
const xlr_command *xlr_find_command(const char *name);

int xlr_cmd_uid(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_spawn(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_kill(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_destroy(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_status(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_check(xlr_cli *cli, int argc, char **argv);
int xlr_cmd_audit(xlr_cli *cli, int argc, char **argv);

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

/* The name every line on stderr starts with, as the library's do. */
#define XLR_PROG "xl-reaper"

/* One line on stderr, "xl-reaper: error: ...", for the user's own
 * mistakes; the library's lines have the same "PROG: LEVEL: " form. */
void xlr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A usage error of command cmd: one line saying what was wrong, then
 * the command's usage, "xl-reaper: error: kill: missing DOMID (usage:
 * xl-reaper kill DOMID)".  Returns the command's usage exit code.
 */
int xlr_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What getopt (opterr = 0, optstring starting "+:") found wrong, as a
 * usage error of cmd: the unknown option, or the one missing its
 * value.  opt is what getopt returned ('?' or ':'). */
int xlr_option_error(const char *cmd, int opt, char **argv);

/* Parses a DOMID argument, saying what is wrong with it.  0 or -1. */
int xlr_parse_domid(const char *arg, uint32_t *domid_r);

/*
 * For the commands whose only argument is a DOMID (kill, status,
 * destroy): the number of arguments, an option where the DOMID should
 * be, and the DOMID itself, each refused with what was wrong.  0, or
 * the exit code of the refusal.
 */
int xlr_domid_only(const char *cmd, int argc, char **argv, uint32_t *domid_r);

/* "3200001..3232751 (domid 1..32751 = base 3200000 + domid)": the DM
 * uid range as check and audit print it, in buf. */
const char *xlr_range_text(const xlreaper_config *c, char *buf, size_t n);

/* Loads the config, once a command has parsed its arguments: 0, or the
 * exit code (the library has said why). */
int xlr_load_config(xlr_cli *cli);
/* For a command that reaps or spawns: xlr_load_config, then this process
 * (and so every helper of its reap) out of the OOM killer's reach,
 * where the kernel allows it, or a warning that says it is not
 * (xlreaper_oom_protect). */
int xlr_load_config_oom(xlr_cli *cli);

/* The exit code for a library return code. */
int xlr_exit_code(int rc);

/*
 * --json errors (xl_reaper_json_error.c).  xlr_json_begin makes stdout
 * count what it writes; xlr_json_error prints {"error":..., "command":
 * ..., "exit":...} when nothing was printed, with message or, when
 * NULL, the last error said (xlr_note_error, or the library's through
 * xlr_tee_logger, which wraps inner and destroys it with itself).
 */
void xlr_json_begin(void);
void xlr_json_error(const char *cmd, const char *message, int exit_code);
void xlr_note_error(const char *fmt, va_list al)
    __attribute__((format(printf, 1, 0)));
xentoollog_logger *xlr_tee_logger(xentoollog_logger *inner);

/* Prints a reap result as a line, or as JSON with --json. */
void xlr_print_reap(const xlr_cli *cli, const xlreaper_reap_result *res);

#endif /* XL_REAPER_H */
