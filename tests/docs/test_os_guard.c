/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_os_guard.c - the build refuses, with a clear message, the systems
 * where the kill cannot be made safe or that are not ported
 * (tools/libxl-reaper/core/xlreaper_os.h; docs/qemu-deprivilege.pandoc,
 * Portability).  No NetBSD or FreeBSD compiler is at hand, so the
 * library's internal header is compiled here with that system's macro in
 * place of Linux's: the guard must stop it, with its own message, and
 * the same file must compile for Linux (so that a failure is the
 * guard's, not the harness's).  Touches no process or uid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlr_test.h"

static char *dir;

static int setup(void **state)
{
    (void)state;
    dir = xlrt_tmpdir();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    xlrt_tmpdir_remove(dir);
    return 0;
}

/* Compiles a file that includes xlreaper_internal.h, with the macros of
 * another system when os is not NULL.  The wait status; *err_r is what
 * the compiler said. */
static int compile(const char *os, char **err_r)
{
    char *src = xlrt_write_file(dir, "guard.c",
                                "#include \"xlreaper_internal.h\"\n"
                                "int main(void) { return 0; }\n");
    char *argv[16];
    int n = 0, status;

    argv[n++] = "/usr/bin/cc";
    argv[n++] = "-fsyntax-only";
    argv[n++] = "-std=gnu11";
    argv[n++] = "-D_GNU_SOURCE";
    argv[n++] = "-Itools/libxl-reaper/include";
    argv[n++] = "-Itools/libxl-reaper/core";
    if (os) {
        argv[n++] = "-U__linux__";
        argv[n++] = "-U__linux";
        argv[n++] = "-Ulinux";
        argv[n++] = "-U__gnu_linux__";
        if (*os)
            argv[n++] = (char *)os;
    }
    argv[n++] = src;
    argv[n] = NULL;
    status = xlrt_run(argv, NULL, err_r);
    free(src);
    return status;
}

static void assert_refused(const char *os, const char *message)
{
    char *err = NULL, *first;
    int status = compile(os, &err);

    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        fail_msg("with %s the library's header compiled: no guard",
                 *os ? os : "no system's macro");
    if (!strstr(err, "xlreaper_os.h") || !strstr(err, message))
        fail_msg("with %s the compiler did not stop at the guard with "
                 "\"%s\"; it said:\n%s",
                 *os ? os : "no system's macro", message, err);
    /* The guard comes first: the compiler's first error is its own. */
    first = strstr(err, ": error: ");
    if (!first || strncmp(first + strlen(": error: "), "#error", 6))
        fail_msg("with %s another error came before the guard's:\n%s",
                 *os ? os : "no system's macro", err);
    free(err);
}

static void test_linux_compiles(void **state)
{
    char *err = NULL;
    int status = compile(NULL, &err);

    (void)state;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the header does not compile for Linux: %s", err);
    free(err);
}

static void test_netbsd_refused(void **state)
{
    (void)state;
    assert_refused("-D__NetBSD__", "NetBSD has no setresuid(2)");
}

static void test_freebsd_refused(void **state)
{
    (void)state;
    assert_refused("-D__FreeBSD__", "not ported to FreeBSD");
}

static void test_other_refused(void **state)
{
    (void)state;
    assert_refused("", "only Linux is supported");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linux_compiles),
        cmocka_unit_test(test_netbsd_refused),
        cmocka_unit_test(test_freebsd_refused),
        cmocka_unit_test(test_other_refused),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
