/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_spawn.c - helpers for the spawn suites.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_spawn.h"

/* ---------- ctx and programs ---------- */

char *xlrt_spawn_conf(const char *tmpdir, unsigned long base,
                      const char *extra)
{
    char *text, *path;

    assert_true(asprintf(&text,
                         "dm_uid_base = %lu\n"
                         "lock_file = \"%s/lock\"\n"
                         "chroot_base = \"%s\"\n"
                         "%s",
                         base, tmpdir, tmpdir, extra ? extra : "") > 0);
    path = xlrt_write_file(tmpdir, "xl-reaper.conf", text);
    free(text);
    return path;
}

xlreaper_ctx *xlrt_spawn_ctx(const char *tmpdir, unsigned long base,
                             const char *extra)
{
    xlreaper_ctx *ctx;
    char *path = xlrt_spawn_conf(tmpdir, base, extra);

    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_capture_logger()), 0);
    assert_int_equal(
        xlreaper_config_load(ctx, path, XLREAPER_CONFIG_MUST_EXIST), 0);
    free(path);
    return ctx;
}

void xlrt_sfix_setup(xlrt_sfix *f)
{
    f->dir = xlrt_tmpdir();
    f->conf = NULL;
    f->bystander = 0;
    xlrt_capture_reset();
}

void xlrt_sfix_conf(xlrt_sfix *f, unsigned long base, const char *qemu,
                    const char *extra)
{
    char *lines;

    assert_true(asprintf(&lines, "qemu_path = \"%s\"\n%s", qemu,
                         extra ? extra : "") > 0);
    free(f->conf);
    f->conf = xlrt_spawn_conf(f->dir, base, lines);
    free(lines);
}

void xlrt_sfix_teardown(xlrt_sfix *f)
{
    if (f->bystander > 0)
        xlrt_bystander_stop(f->bystander);
    f->bystander = 0;
    xlrt_probe_cleanup();
    xlrt_tmpdir_remove(f->dir);
    free(f->conf);
    f->dir = f->conf = NULL;
}

int xlrt_sfix_new(void **state)
{
    xlrt_sfix *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    xlrt_sfix_setup(f);
    *state = f;
    return 0;
}

int xlrt_sfix_free(void **state)
{
    xlrt_sfix *f = *state;

    xlrt_sfix_teardown(f);
    free(f);
    return 0;
}

char *xlrt_prog(const char *name)
{
    char *p, *abs;

    assert_true(asprintf(&p, "%s/%s", xlrt_progs_dir(), name) > 0);
    abs = realpath(p, NULL);
    assert_non_null(abs);
    free(p);
    return abs;
}

/* ---------- the probe ---------- */

#define MAX_LIVE 64
static pid_t live[MAX_LIVE];

static void live_add(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = pid;
            return;
        }
}

static void live_remove(pid_t pid)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == pid)
            live[i] = 0;
}

void xlrt_probe_cleanup(void)
{
    int status;

    for (int i = 0; i < MAX_LIVE; i++) {
        if (!live[i])
            continue;
        /* Our own unreaped child: the pid cannot have been reused. */
        kill(live[i], SIGKILL);
        while (waitpid(live[i], &status, 0) < 0 && errno == EINTR)
            ;
        live[i] = 0;
    }
}

int xlrt_probe_spawn(xlreaper_ctx *ctx, uint32_t domid, const char *mode,
                     const char *const *extra, xlrt_probe *p)
{
    xlreaper_spawn_plan *plan = NULL;
    char *prog = xlrt_prog("spawn_probe");
    char *argv[64], fdarg[32];
    int fds[2], rc, n = 0, status;

    p->pid = -1;
    p->report = NULL;
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    /* Off 0-2, which a test may have closed on purpose. */
    for (int i = 0; i < 2; i++) {
        if (fds[i] <= 2) {
            int nfd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            assert_true(nfd > 2);
            close(fds[i]);
            fds[i] = nfd;
        }
    }
    snprintf(fdarg, sizeof(fdarg), "fd=%d,set=1", fds[1]);
    argv[n++] = prog;
    argv[n++] = (char *)mode;
    argv[n++] = (char *)"-add-fd";
    argv[n++] = fdarg;
    for (unsigned i = 0; extra && extra[i] && n < 63; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;

    rc = xlreaper_spawn_plan_new(ctx, domid, prog, argv, &plan);
    if (!rc)
        rc = xlreaper_spawn(ctx, plan, 0, &p->pid, NULL);
    xlreaper_spawn_plan_free(plan);
    close(fds[1]);
    if (!rc) {
        live_add(p->pid);
        p->report = xlrt_read_to_eof(fds[0]);
        if (!strcmp(mode, "exit")) {
            while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
                ;
            live_remove(p->pid);
            p->pid = -1;
        }
    }
    close(fds[0]);
    free(prog);
    return rc;
}

void xlrt_probe_stop(xlrt_probe *p)
{
    int status;

    if (p->pid > 0) {
        /* Our own unreaped child: the pid cannot have been reused. */
        kill(p->pid, SIGKILL);
        while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
            ;
        live_remove(p->pid);
    }
    p->pid = -1;
    free(p->report);
    p->report = NULL;
}

/* ---------- /proc ---------- */

char *xlrt_proc_read(pid_t pid, const char *file)
{
    char path[128];
    char *text;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    text = xlrt_read_to_eof(fd);
    close(fd);
    return text;
}

char *xlrt_status_field(const char *status, const char *field)
{
    size_t fl = strlen(field);
    const char *p = status;

    while (p && *p) {
        if (!strncmp(p, field, fl) && p[fl] == ':') {
            const char *v = p + fl + 1, *end = strchr(v, '\n');
            size_t n;
            while (*v == ' ' || *v == '\t')
                v++;
            n = end ? (size_t)(end - v) : strlen(v);
            while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
                n--;
            return strndup(v, n);
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return NULL;
}

static uint64_t limit_value(const char *s)
{
    return !strncmp(s, "unlimited", 9) ? UINT64_MAX : strtoull(s, NULL, 10);
}

int xlrt_limit(pid_t pid, const char *name, uint64_t *soft, uint64_t *hard)
{
    char *text = xlrt_proc_read(pid, "limits"), *p;
    size_t nl = strlen(name);
    int rc = -1;

    for (p = text; p && *p;) {
        if (!strncmp(p, name, nl) && p[nl] == ' ') {
            /* Columns: name (25 chars), soft, hard, units. */
            char *v = p + 26;
            *soft = limit_value(v);
            while (*v && *v != ' ')
                v++;
            while (*v == ' ')
                v++;
            *hard = limit_value(v);
            rc = 0;
            break;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    free(text);
    return rc;
}

bool xlrt_has_line(const char *text, const char *line)
{
    size_t l = strlen(line);

    for (const char *p = text; p && *p;) {
        if (!strncmp(p, line, l) && (p[l] == '\n' || p[l] == '\0'))
            return true;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return false;
}

void xlrt_expect_attempts(const char *out, const xlrt_attempt *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char line[96];

        snprintf(line, sizeof(line), "%s=%s", a[i].name, a[i].want);
        if (!xlrt_has_line(out, line))
            fail_msg("the DM's report lacks \"%s\"; it has:\n%s", line, out);
    }
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

char *xlrt_spawn_cli_report(const xlrt_sfix *f, unsigned domid,
                            const char *prog)
{
    char cli[4096], dom[16];
    char *out = NULL, *err = NULL;
    int status;

    snprintf(cli, sizeof(cli), "%s/bin/xl-reaper", xlrt_build_dir());
    snprintf(dom, sizeof(dom), "%u", domid);
    char *argv[] = { cli, "--config", f->conf,      "spawn",
                     dom, "--",       (char *)prog, NULL };
    status = xlrt_run(argv, &out, &err);
    if (exit_code(status) != 0)
        fail_msg("spawn exit %d; stderr:\n%s\nstdout:\n%s", exit_code(status),
                 err, out);
    free(err);
    return out;
}

int xlrt_runas_wrapper(xlrt_sfix *f, unsigned long base, const char *qemu,
                       unsigned domid, const char *const *extra, char **out_r,
                       char **err_r)
{
    char wrapper[4096], ids[64], dom[16];
    char *argv[16], *out = NULL, *err = NULL;
    int n = 0, status;

    xlrt_sfix_conf(f, base, qemu, "uid_switch = \"runas\"\n");
    snprintf(wrapper, sizeof(wrapper), "%s/libexec/qemu-dm-restrict",
             xlrt_build_dir());
    snprintf(dom, sizeof(dom), "%u", domid);
    snprintf(ids, sizeof(ids), "%lu:%lu", base + domid, base + domid);
    argv[n++] = wrapper;
    argv[n++] = "-xen-domid";
    argv[n++] = dom;
    argv[n++] = "-runas";
    argv[n++] = ids;
    for (; extra && *extra && n < 15; extra++)
        argv[n++] = (char *)*extra;
    argv[n] = NULL;
    assert_int_equal(setenv("XL_REAPER_CONFIG", f->conf, 1), 0);
    status = xlrt_run(argv, &out, &err);
    unsetenv("XL_REAPER_CONFIG");
    if (out_r)
        *out_r = out;
    else
        free(out);
    if (err_r)
        *err_r = err;
    else
        free(err);
    return exit_code(status);
}

char *xlrt_runas_report(xlrt_sfix *f, unsigned long base, const char *qemu,
                        unsigned domid)
{
    char *out = NULL, *err = NULL;
    int code = xlrt_runas_wrapper(f, base, qemu, domid, NULL, &out, &err);

    if (code != 0)
        fail_msg("wrapper exit %d; stderr:\n%s\nstdout:\n%s", code, err, out);
    free(err);
    return out;
}
