/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench.c - what the benchmarks share (see bench.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "xlrt_kcount.h"
#include "xlrt_tree.h"

extern char **environ;

static char tmpdir[64];
static char config_path[128];
static char machine[512];
static char cgroup_dir[256];
static long pid_max_saved = -1;
static char bench_name[32];

/* ---------- the clean-up registry ---------- */

#define MAX_SETS 256
static bench_set *volatile active[MAX_SETS];

static int register_set(bench_set *s)
{
    for (int i = 0; i < MAX_SETS; i++) {
        if (!active[i]) {
            active[i] = s;
            return i;
        }
    }
    return -1;
}

/* ---------- the kernel's count ---------- */

/* Our own kernel count (tests/lib/xlrt_kcount.c), so that a benchmark's
 * verdict does not rest on the code it measures.  A probe killed by a
 * task of uid means uid is busy. */
int bench_uid_empty(uid_t uid)
{
    int f = xlrt_probe_fits(uid, 2);

    return f == XLRT_PROBE_KILLED ? 0 : f;
}

long bench_kernel_count(uid_t uid)
{
    long c = xlrt_kernel_count(uid);

    return c < 0 ? -1 : c;
}

int64_t bench_wait_empty(uid_t uid, uint64_t timeout_us, uint64_t poll_us)
{
    uint64_t start = xlreaper__now_us();

    for (;;) {
        int e = bench_uid_empty(uid);
        uint64_t now = xlreaper__now_us();
        if (e == 1)
            return (int64_t)(now - start);
        if (e < 0 || now - start >= timeout_us)
            return -1;
        xlreaper__sleep_us(poll_us);
    }
}

/* ---------- kills ---------- */

int64_t bench_barekill_fork(uid_t uid)
{
    uint64_t t0 = xlreaper__now_us();
    pid_t pid = fork();
    int status;

    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (syscall(SYS_setresuid, BENCH_PET, uid, 0))
            _exit(1);
        kill(-1, SIGKILL);
        _exit(0);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return (int64_t)(xlreaper__now_us() - t0);
}

int64_t bench_run(char *const argv[], char *out, size_t outlen,
                  int *status_r)
{
    int p[2] = { -1, -1 }, devnull = -1, status;
    size_t got = 0;
    uint64_t t0;
    pid_t pid;

    if (out) {
        if (pipe2(p, O_CLOEXEC) < 0)
            return -1;
    } else {
        devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (devnull < 0)
            return -1;
    }
    t0 = xlreaper__now_us();
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out ? p[1] : devnull, 1);
        execve(argv[0], argv, environ);
        _exit(127);
    }
    if (out) {
        close(p[1]);
        for (;;) {
            char sink[512];
            ssize_t r;
            if (got + 1 < outlen)
                r = read(p[0], out + got, outlen - 1 - got);
            else
                r = read(p[0], sink, sizeof(sink));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            if (got + 1 < outlen)
                got += (size_t)r;
        }
        out[got] = '\0';
        close(p[0]);
    } else {
        close(devnull);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (status_r)
        *status_r = status;
    return (int64_t)(xlreaper__now_us() - t0);
}

/* ---------- task sets ---------- */

static volatile sig_atomic_t nursery_stop;

static void nursery_on_term(int sig)
{
    (void)sig;
    nursery_stop = 1;
}

/* In the grandchild: place, take the ids, exec.  Async-signal-safe
 * calls on memory prepared before the fork only. */
static void __attribute__((noreturn))
launch_leader(const char *cgprocs, int fd3, uid_t uid, char *const argv[])
{
    struct rlimit rl;

    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (cgprocs) {
        int fd = open(cgprocs, O_WRONLY | O_CLOEXEC);
        /* "0" is the writing process itself. */
        if (fd < 0 || write(fd, "0", 1) != 1)
            _exit(126);
        close(fd);
    }
    /* Up to the hard limit (raising it needs CAP_SYS_RESOURCE, which
     * root lacks on this machine): the tasks then fork under uid as far
     * as root's own limit goes, ~96,000 here. */
    if (getrlimit(RLIMIT_NPROC, &rl))
        _exit(125);
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NPROC, &rl) || syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, uid, uid, uid) ||
        syscall(SYS_setresuid, uid, uid, uid))
        _exit(125);
    if (dup2(fd3, 3) < 0)
        _exit(124);
    execve(argv[0], argv, environ);
    _exit(127);
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int bench_set_start(bench_set *s, uid_t uid, bench_kind kind, unsigned n,
                    bool nursery, const char *cgroup)
{
    bool racer = kind == BENCH_RACER || kind == BENCH_RACER_PGID;
    char nbuf[16], cgprocs[300], *argv[4];
    int info[2], memfd = -1, fd3;
    uint64_t *births = NULL;
    pid_t np;
    char ready;

    memset(s, 0, sizeof(*s));
    s->uid = uid;
    s->kind = kind;
    s->slot = -1;
    snprintf(nbuf, sizeof(nbuf), "%u", n);
    if (cgroup)
        snprintf(cgprocs, sizeof(cgprocs), "%s/cgroup.procs", cgroup);
    if (racer) {
        argv[0] = (char *)bench_prog("bench_racer");
        argv[1] = kind == BENCH_RACER_PGID ? "pgid" : "plain";
        argv[2] = NULL;
    } else {
        argv[0] = (char *)bench_prog("bench_tasks");
        argv[1] = kind == BENCH_THREADS ? "threads" : "procs";
        argv[2] = nbuf;
        argv[3] = NULL;
    }
    if (pipe2(info, O_CLOEXEC) < 0) {
        perror("bench: pipe2");
        return -1;
    }
    if (racer) {
        memfd = (int)syscall(SYS_memfd_create, "births", MFD_CLOEXEC);
        if (memfd < 0 || ftruncate(memfd, 4096) < 0) {
            perror("bench: memfd");
            return -1;
        }
        births = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd,
                      0);
        if (births == MAP_FAILED) {
            perror("bench: mmap");
            return -1;
        }
    }
    fd3 = racer ? memfd : info[1];

    np = fork();
    if (np < 0) {
        perror("bench: fork");
        return -1;
    }
    if (np == 0) {
        struct sigaction sa = { .sa_handler = nursery_on_term };
        pid_t l;

        /* The nursery keeps reaping while the benchmark cleans up on a
         * ^C, and dies with it. */
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        sigaction(SIGTERM, &sa, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (nursery && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
            _exit(1);
        l = fork();
        if (l < 0)
            _exit(1);
        if (l == 0)
            launch_leader(cgroup ? cgprocs : NULL, fd3, uid, argv);
        if (write(info[1], &l, sizeof(l)) != sizeof(l))
            _exit(1);
        close(info[1]);
        if (!nursery)
            _exit(0); /* the leader is an orphan now */
        while (!nursery_stop)
            if (waitpid(-1, NULL, __WALL) < 0 && errno == ECHILD)
                usleep(500);
        while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
            ;
        _exit(0);
    }
    close(info[1]);
    if (memfd >= 0)
        close(memfd);
    s->nursery = nursery ? np : 0;
    s->births = births;
    s->slot = register_set(s);
    if (read_full(info[0], &s->leader, sizeof(s->leader)) !=
        sizeof(s->leader)) {
        fprintf(stderr, "bench: the nursery did not start a leader\n");
        goto fail;
    }
    if (!nursery) {
        int st;
        while (waitpid(np, &st, 0) < 0 && errno == EINTR)
            ;
    }
    if (racer) {
        uint64_t t0 = xlreaper__now_us();
        while (__atomic_load_n(births, __ATOMIC_RELAXED) < 50) {
            if (xlreaper__now_us() - t0 > 30000000u) {
                fprintf(stderr, "bench: the racer of uid %u does not "
                                "race\n", (unsigned)uid);
                goto fail;
            }
            xlreaper__sleep_us(200);
        }
    } else if (read_full(info[0], &ready, 1) != 1) {
        fprintf(stderr, "bench: %u %s under uid %u did not start\n", n,
                argv[1], (unsigned)uid);
        goto fail;
    }
    close(info[0]);
    return 0;

fail:
    close(info[0]);
    bench_set_stop(s, 10000000u);
    return -1;
}

int bench_set_stop(bench_set *s, uint64_t timeout_us)
{
    uint64_t t0 = xlreaper__now_us();
    int status;

    for (;;) {
        if (bench_uid_empty(s->uid) == 1)
            break;
        bench_barekill_fork(s->uid);
        if (bench_wait_empty(s->uid, 200000u, 1000u) >= 0)
            break;
        if (xlreaper__now_us() - t0 > timeout_us) {
            fprintf(stderr,
                    "bench: uid %u still has %ld task(s) after %.1f s\n",
                    (unsigned)s->uid, bench_kernel_count(s->uid),
                    (double)(xlreaper__now_us() - t0) / 1e6);
            return -1;
        }
    }
    if (s->nursery > 0) {
        kill(s->nursery, SIGTERM);
        while (waitpid(s->nursery, &status, 0) < 0 && errno == EINTR)
            ;
        s->nursery = 0;
    }
    if (s->births) {
        munmap((void *)s->births, 4096);
        s->births = NULL;
    }
    if (s->slot >= 0)
        active[s->slot] = NULL;
    s->slot = -1;
    return 0;
}

/* ---------- the system ---------- */

static long read_long_file(const char *path)
{
    char buf[64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t r;

    if (fd < 0)
        return -1;
    r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    return strtol(buf, NULL, 10);
}

static int write_long_file(const char *path, long v)
{
    char buf[32];
    int fd = open(path, O_WRONLY | O_CLOEXEC), len;
    ssize_t r;

    if (fd < 0)
        return -1;
    len = snprintf(buf, sizeof(buf), "%ld\n", v);
    r = write(fd, buf, (size_t)len);
    close(fd);
    return r == len ? 0 : -1;
}

long bench_tasks_now(void)
{
    char buf[128], *slash;
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    ssize_t r;

    if (fd < 0)
        return -1;
    r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    slash = strchr(buf, '/');
    return slash ? strtol(slash + 1, NULL, 10) : -1;
}

long bench_pid_max(void)
{
    return read_long_file("/proc/sys/kernel/pid_max");
}

/* Pids below 300 are not reused after a wrap (RESERVED_PIDS); the
 * margin leaves room for the other users of this machine. */
#define PID_RESERVED 300
#define PID_MARGIN 4096
#define PID_MAX_LIMIT (4L * 1024 * 1024)

int bench_pids_reserve(unsigned need, char *why, size_t whylen)
{
    long max = bench_pid_max(), now = bench_tasks_now(), want;

    if (max < 0 || now < 0) {
        snprintf(why, whylen, "cannot read pid_max or the task count");
        return -1;
    }
    want = now + (long)need + PID_RESERVED + PID_MARGIN;
    if (want <= max)
        return 0;
    want = (want + 4095) / 4096 * 4096;
    if (want > PID_MAX_LIMIT ||
        write_long_file("/proc/sys/kernel/pid_max", want) < 0) {
        snprintf(why, whylen,
                 "needs %u pids with %ld tasks on the system and a margin "
                 "of %d: pid_max %ld is too low and could not be raised "
                 "to %ld (%s)",
                 need, now, PID_MARGIN, max, want, strerror(errno));
        return -1;
    }
    if (pid_max_saved < 0)
        pid_max_saved = max;
    printf("# kernel.pid_max raised from %ld to %ld for this size "
           "(%u tasks needed, %ld on the system)\n",
           max, want, need, now);
    return 0;
}

void bench_pids_restore(void)
{
    if (pid_max_saved < 0)
        return;
    if (write_long_file("/proc/sys/kernel/pid_max", pid_max_saved) == 0)
        printf("# kernel.pid_max restored to %ld\n", pid_max_saved);
    else
        fprintf(stderr, "bench: could not restore kernel.pid_max to %ld\n",
                pid_max_saved);
    pid_max_saved = -1;
}

/* ---------- cgroup v2 ---------- */

const char *bench_cgroup(void)
{
    static const char *const roots[] = { "/sys/fs/cgroup/unified",
                                         "/sys/fs/cgroup" };
    char probe[300];

    if (cgroup_dir[0])
        return cgroup_dir;
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        snprintf(probe, sizeof(probe), "%s/cgroup.subtree_control",
                 roots[i]);
        if (access(probe, F_OK))
            continue; /* not a v2 hierarchy */
        snprintf(cgroup_dir, sizeof(cgroup_dir), "%s/xlr-bench-%ld",
                 roots[i], (long)getpid());
        if (mkdir(cgroup_dir, 0755) < 0) {
            cgroup_dir[0] = '\0';
            continue;
        }
        snprintf(probe, sizeof(probe), "%s/cgroup.kill", cgroup_dir);
        if (!access(probe, W_OK))
            return cgroup_dir;
        rmdir(cgroup_dir);
        cgroup_dir[0] = '\0';
    }
    return NULL;
}

/* ---------- set-up and clean-up ---------- */

/* Called at exit and from the signal handler: only async-signal-safe
 * calls besides the bare kills (fork, setresuid, kill, waitpid). */
static void cleanup(void)
{
    static volatile sig_atomic_t done;

    if (done)
        return;
    done = 1;
    for (int i = 0; i < MAX_SETS; i++) {
        bench_set *s = active[i];
        if (!s)
            continue;
        for (int tries = 0; tries < 200; tries++) {
            if (bench_uid_empty(s->uid) == 1)
                break;
            bench_barekill_fork(s->uid);
            usleep(10000);
        }
        if (s->nursery > 0)
            kill(s->nursery, SIGTERM);
        active[i] = NULL;
    }
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    if (cgroup_dir[0]) {
        for (int tries = 0; tries < 100 && rmdir(cgroup_dir) < 0 &&
                            errno == EBUSY;
             tries++)
            usleep(10000);
    }
    if (pid_max_saved >= 0)
        write_long_file("/proc/sys/kernel/pid_max", pid_max_saved);
    if (tmpdir[0])
        xlrt_tree_remove(tmpdir);
}

static void on_signal(int sig)
{
    cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

void bench_die(const char *fmt, ...)
{
    va_list al;

    fprintf(stderr, "%s: ", bench_name);
    va_start(al, fmt);
    vfprintf(stderr, fmt, al);
    va_end(al);
    fputc('\n', stderr);
    exit(1);
}

static void read_cpu_model(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[256];

    snprintf(buf, len, "unknown cpu");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *c = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && c) {
            c += 2;
            c[strcspn(c, "\n")] = '\0';
            snprintf(buf, len, "%s", c);
            break;
        }
    }
    fclose(f);
}

/* Our own block and lock file: other helpers' tests run fork bombs on
 * this machine under their blocks, with their own locks. */
static void write_config(void)
{
    FILE *f;

    mkdir(tmpdir, 0700);
    f = fopen(config_path, "we");
    if (!f)
        bench_die("%s: %s", config_path, strerror(errno));
    fprintf(f,
            "# written by bench_init\n"
            "dm_uid_base = %u\n"
            "lock_file = \"%s/dm-reaper-lock\"\n"
            "lock_timeout_ms = 120000\n",
            BENCH_UID_BASE, tmpdir);
    if (fclose(f))
        bench_die("%s: %s", config_path, strerror(errno));
}

void bench_init(const char *name)
{
    struct sigaction sa = { .sa_handler = on_signal };
    char cpu[128], date[64], hostname[64];
    struct utsname u;
    time_t t = time(NULL);
    struct tm tm;

    snprintf(bench_name, sizeof(bench_name), "%s", name);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (geteuid() != 0)
        bench_die("must run as root (it starts tasks under other uids)");
    if (access(bench_prog("bench_tasks"), X_OK) ||
        access(bench_prog("bench_racer"), X_OK) || access(bench_cli(), X_OK))
        bench_die("programs missing in %s: run make first",
                  getenv("BENCH_BUILD") ? getenv("BENCH_BUILD") : "build");

    snprintf(tmpdir, sizeof(tmpdir), "/tmp/xlr-bench.XXXXXX");
    if (!mkdtemp(tmpdir))
        bench_die("mkdtemp: %s", strerror(errno));
    atexit(cleanup);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    snprintf(config_path, sizeof(config_path), "%s/xl-reaper.conf", tmpdir);
    write_config();

    uname(&u);
    gethostname(hostname, sizeof(hostname));
    hostname[sizeof(hostname) - 1] = '\0';
    read_cpu_model(cpu, sizeof(cpu));
    gmtime_r(&t, &tm);
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm);
    snprintf(machine, sizeof(machine),
             "%s; Linux %s %s; %s, %ld cpus, %ld MB; pid_max %ld; "
             "%ld tasks on the system",
             date, u.release, u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN),
             (long)((double)sysconf(_SC_PHYS_PAGES) *
                    (double)sysconf(_SC_PAGESIZE) / 1048576.0),
             bench_pid_max(), bench_tasks_now());
    printf("# %s: %s\n", name, machine);
}

const char *bench_machine(void)
{
    return machine;
}

const char *bench_config_path(void)
{
    /* Once, in a long run on this shared machine, our temp dir vanished
     * under us (cause not found) and every CLI call then failed at
     * config load: put it back, and say so, rather than measure that. */
    if (access(config_path, R_OK)) {
        fprintf(stderr, "%s: %s vanished (%s); writing it again\n",
                bench_name, config_path, strerror(errno));
        write_config();
    }
    return config_path;
}

const char *bench_tmpdir(void)
{
    return tmpdir;
}

unsigned bench_env(const char *name, unsigned dflt)
{
    char key[64];
    const char *v;
    char *end;
    unsigned long n;

    snprintf(key, sizeof(key), "BENCH_%s", name);
    v = getenv(key);
    if (!v || !*v)
        return dflt;
    n = strtoul(v, &end, 10);
    return *end || !n ? dflt : (unsigned)n;
}

static const char *build_dir(void)
{
    const char *b = getenv("BENCH_BUILD");

    return b && *b ? b : "build";
}

const char *bench_prog(const char *name)
{
    static char paths[8][256];
    static int next;
    char *p = paths[next++ % 8];

    snprintf(p, sizeof(paths[0]), "%s/bench/progs/%s", build_dir(), name);
    return p;
}

const char *bench_cli(void)
{
    static char path[256];

    snprintf(path, sizeof(path), "%s/bin/xl-reaper", build_dir());
    return path;
}

xentoollog_logger *bench_logger(void)
{
    static xentoollog_logger_stdiostream *lg;

    if (!lg)
        lg = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
    if (!lg)
        bench_die("cannot create a logger");
    return (xentoollog_logger *)lg;
}

xlreaper_ctx *bench_ctx(void)
{
    xlreaper_ctx *ctx;
    int rc;

    rc = xlreaper_ctx_alloc(&ctx, bench_logger());
    if (rc)
        bench_die("xlreaper_ctx_alloc: %s", xlreaper_strerror(rc));
    rc = xlreaper_config_load(ctx, config_path, XLREAPER_CONFIG_MUST_EXIST);
    if (rc)
        bench_die("xlreaper_config_load %s: %s", config_path,
                  xlreaper_strerror(rc));
    return ctx;
}

/* ---------- statistics ---------- */

void bench_samples_add(bench_samples *s, double x)
{
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        double *n = realloc(s->v, ncap * sizeof(*n));
        if (!n)
            bench_die("out of memory");
        s->v = n;
        s->cap = ncap;
    }
    s->v[s->n++] = x;
}

void bench_samples_free(bench_samples *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_q(const bench_samples *s, double q)
{
    double *c, pos, r;
    size_t i;

    if (!s->n)
        return NAN;
    c = malloc(s->n * sizeof(*c));
    if (!c)
        bench_die("out of memory");
    memcpy(c, s->v, s->n * sizeof(*c));
    qsort(c, s->n, sizeof(*c), cmp_double);
    pos = q * (double)(s->n - 1);
    i = (size_t)pos;
    r = i + 1 < s->n ? c[i] + (pos - (double)i) * (c[i + 1] - c[i]) : c[i];
    free(c);
    return r;
}

/* ---------- results ---------- */

static const char *results_dir(void)
{
    const char *d = getenv("BENCH_RESULTS");

    return d && *d ? d : "bench/results";
}

FILE *bench_results_file(const char *name)
{
    char path[512];
    FILE *f;

    mkdir(results_dir(), 0755);
    snprintf(path, sizeof(path), "%s/%s", results_dir(), name);
    f = fopen(path, "we");
    if (!f)
        bench_die("%s: %s", path, strerror(errno));
    return f;
}

FILE *bench_csv(const char *name, const char *header)
{
    char file[128];
    FILE *f;

    snprintf(file, sizeof(file), "%s.csv", name);
    f = bench_results_file(file);
    fprintf(f, "# %s: %s\n%s\n", name, machine, header);
    return f;
}
