/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlr_test.h - helpers shared by the test suites.  They use the kernel
 * directly and never the library under test, so that a suite's verdict
 * does not rest on the code it checks.
 */
#ifndef XLR_TEST_H
#define XLR_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "xlreaper.h"
#include "xlrt_kcount.h"

/*
 * A failed check or a skip ends the test (cmocka longjmps to its
 * runner, or exits), but cmocka 1.1.5 does not say so: the analyzers of
 * make analyze then follow a test past a failed assert_non_null into
 * the NULL it just refused.  _fail and _skip are declared noreturn, as
 * later cmocka releases do, and the pointer and truth checks end in a
 * call that is too.
 */
void _fail(const char *const file, const int line) __attribute__((noreturn));
void _skip(const char *const file, const int line) __attribute__((noreturn));
void xlrt_assert_failed(const char *expr, const char *file, int line)
    __attribute__((noreturn));
#undef assert_true
#undef assert_false
#undef assert_non_null
#undef assert_null
#define XLRT_ASSERT(ok, text)                                                 \
    ((ok) ? (void)0 : xlrt_assert_failed(text, __FILE__, __LINE__))
#define assert_true(c) XLRT_ASSERT(c, #c)
#define assert_false(c) XLRT_ASSERT(!(c), #c)
#define assert_non_null(c) XLRT_ASSERT((c) != NULL, #c)
#define assert_null(c) XLRT_ASSERT((c) == NULL, #c)

/* How many rounds a repeated real-process test runs: $XLR_ROUNDS. */
unsigned xlrt_rounds(unsigned dflt);

/* A fresh directory under /tmp, removed by xlrt_tmpdir_remove. */
char *xlrt_tmpdir(void);
void xlrt_tmpdir_remove(char *dir);

/* Writes text to dir/name (mode 0644); returns the malloc'd path. */
char *xlrt_write_file(const char *dir, const char *name, const char *text);

/* A logger on stderr; level from $XLR_TEST_LOG (debug|info|warn), or
 * errors only. */
xentoollog_logger *xlrt_logger(void);

/* A ctx with config text loaded (it must load), in tmpdir. */
xlreaper_ctx *xlrt_ctx(const char *tmpdir, const char *config_text);

/* A root-owned "nursery": a child subreaper that runs fn(arg) in a child
 * of its own and reaps every orphan promptly, as a healthy init would.
 * Returns the nursery's pid. */
pid_t xlrt_nursery_start(void (*fn)(void *arg), void *arg);
/* Ends the nursery (our own child, so its pid is safe to signal) and
 * waits for it. */
void xlrt_nursery_stop(pid_t nursery);

/*
 * tests/progs/adversary MODE, started through the library's spawn under
 * domid's DM uid, once it reports that its trick is in place.  In a
 * nursery (returns the nursery's pid: stop it with xlrt_nursery_stop),
 * or as this process's own child (returns its pid, left unreaped).
 */
pid_t xlrt_adversary_in_nursery(xlreaper_ctx *ctx, uint32_t domid,
                                const char *mode);
pid_t xlrt_adversary_as_child(xlreaper_ctx *ctx, uint32_t domid,
                              const char *mode);

/* A root child with ids (0, uid, 0): uid only as its effective uid,
 * which kill(-1) as the pet cannot signal.  Stop it like a bystander. */
pid_t xlrt_euid_holder_start(uid_t uid);

/* A root process one of whose threads took all three ids of uid (a raw
 * setresuid): the kernel counts it against uid, but kill(-1) checks the
 * leader's ids and cannot signal it.  Stop it like a bystander. */
pid_t xlrt_thread_holder_start(uid_t uid);

/*
 * In a forked child: drops every supplementary group and takes gid and
 * uid as all three of its group and user ids, in that order (raw system
 * calls, for this task alone).  0, or -1 with errno set.
 */
int xlrt_become(uid_t uid, gid_t gid);
/* In a forked child: xlrt_become(uid, gid), then execv(argv[0], argv).
 * Never returns: exits 100 when the ids could not be taken, 101 when
 * execv failed. */
void xlrt_exec_as(uid_t uid, gid_t gid, char *const argv[])
    __attribute__((noreturn));

/* A task that sleeps under uid (all three ids) until stopped. */
pid_t xlrt_bystander_start(uid_t uid);
/* True when pid lives and is not a zombie. */
bool xlrt_alive(pid_t pid);
void xlrt_bystander_stop(pid_t pid);

/* Everything fd gives until EOF, malloc'd and NUL-terminated. */
char *xlrt_read_to_eof(int fd);

/* Runs argv (argv[0] a path) with stdout and stderr captured into
 * malloc'd strings (either may be NULL).  Returns the exit status as
 * from waitpid, or -1. */
int xlrt_run(char *const argv[], char **out_r, char **err_r);

/* The build directory: $XLR_BUILD or "build". */
const char *xlrt_build_dir(void);

/*
 * Where the test programs (tests/progs) are run from: $XLR_PROGS, where
 * tests/run-suites stages them in a world-traversable directory of its
 * own, or else <build>/tests/progs.  DM uids must be able to execute
 * them, so the directory and every directory above it must be
 * searchable by others; when one is not (a checkout under /root, or
 * under a 0700 mktemp -d), this fails the test at once and names it.
 */
const char *xlrt_progs_dir(void);

/* A logger that keeps every message, "level: message[: strerror]\n", so
 * that tests can assert the reason given and not just the code. */
xentoollog_logger *xlrt_capture_logger(void);
const char *xlrt_captured(void);
void xlrt_capture_reset(void);

/* Fails the test unless the captured log contains needle. */
#define assert_logged(needle)                                              \
    do {                                                                   \
        if (!strstr(xlrt_captured(), (needle)))                            \
            fail_msg("log lacks \"%s\"; it has:\n%s", (needle),            \
                     xlrt_captured());                                     \
    } while (0)

/* A passwd table of the test's own, in place of the host's, for ctx.
 * table ends with a NULL name and must outlive the loads. */
typedef struct {
    const char *name;
    uid_t uid;
    gid_t gid;
} xlrt_user;
void xlrt_fake_passwd(xlreaper_ctx *ctx, const xlrt_user *table);

/* The group database the fake passwd answers with (none until set):
 * each group's name, gid, and one member or NULL. */
typedef struct {
    const char *name;
    gid_t gid;
    const char *member;
} xlrt_group;
void xlrt_fake_groups(const xlrt_group *table);

#endif /* XLR_TEST_H */
