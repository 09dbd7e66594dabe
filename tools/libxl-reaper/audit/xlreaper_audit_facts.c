/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_audit_facts.c - what the kernel says about one process of a
 * DM uid, read by a child with a deadline.
 *
 * A DM can make some reads of its /proc directory block: a thread that
 * holds its own mmap lock (it maps a direct-I/O FUSE file of its own
 * while a page of that file is locked by a read it never answers)
 * blocks every reader of its cmdline, environ and smaps*; a stat that
 * follows one of its fd links to a file of a FUSE server that never
 * answers would block too.  The audit reads none of those files, and
 * stats open files with AT_STATX_DONT_SYNC (cached attributes, no
 * request to the file system).  What it reads (task/N/status, stat,
 * limits, the root, exe and ns links, the fd links) answers without the
 * mmap lock.  Still, a kernel can change, so every read of a DM's /proc
 * happens here, in a forked child that streams what it read to the
 * audit through a socket, section by section.  One child reads every
 * process of an audit, one after the other, each when the audit asks
 * and each with its own deadline: the audit waits for the process's
 * last frame until then; a child that misses it is killed, what it had
 * not sent yet is "could not check", naming the section it was in, and
 * a new child reads the next process.  (A fork per process cost some
 * 7 ms each, 0.5 s for 64 DMs, with spikes near 1 s.)
 *
 * The child only makes system calls (open, read, getdents64, statx,
 * readlinkat, write) on its stack: the audit may have a xenstore thread
 * of its own blocked in libxenstore (xlreaper_audit_xen.c), whose locks
 * a forked child must not touch.
 *
 * A DM's file locks are counted last, from the "lock:" lines of each
 * /proc/PID/fdinfo/N: the kernel bounds them nowhere else (docs/facts.md
 * F18), and /proc/locks, the host's table of every lock, is never read
 * (any DM can grow it).  What a DM can and cannot do to that read
 * (fs/proc/fd.c seq_show, fs/locks.c show_fd_locks, Linux 6.1 to 6.18):
 * the kernel takes only spinlocks for the lock lines (task_lock, the fd
 * table's file_lock, the inode's flc_lock), held by the DM's own calls
 * for a list walk at most, so no DM can put the reader to sleep there.
 * It can make a read slow: each fdinfo read walks every lock on that
 * file's inode, whoever took it through whichever open file, and builds
 * the whole text before the first byte comes (a seq_file that doubles
 * its buffer until the text fits); many descriptors of one heavily
 * locked inode make each of those reads walk the whole list.  And after
 * the lock lines the file's own show_fdinfo runs: eventpoll's takes the
 * epoll's mutex, which a DM holds for as long as it likes (an epoll_ctl
 * that polls a FUSE file of its own that never answers, docs/facts.md
 * F12), and a DM may lock an epoll descriptor too.  So the descriptors
 * are read in two turns, the epoll ones last; the count is sent after
 * each descriptor that has locks, so a reader cut off by its deadline
 * still says "at least N"; reading stops as soon as the count passes the
 * config's limit (the verdict cannot change) or LOCKS_BYTES_MAX have
 * been read; and only up to the first line that is not a lock line.
 * Locks on a file the DM holds no descriptor of are not seen: an OFD or
 * flock lock on a file it sent into a socket of its own and closed
 * stays, and no per-process table of the kernel shows it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "xlreaper_audit_internal.h"

enum {
    K_SECTION = 1, /* a = the section now being read */
    K_STAT,        /* text of /proc/PID/stat */
    K_THREAD,      /* a = tid, text of task/tid/status */
    K_THREADS_END, /* a = threads listed */
    K_LIMITS,      /* text */
    K_LINK,        /* a = which link, err, x = dev, y = ino */
    K_FD,          /* a = fd, x = rdev, y = ino, z = dev, b = mode;
                    * text: the link */
    K_FDS_END,     /* a = descriptors listed */
    K_LOCKS,       /* a = the fd just read, x = locks counted so far */
    K_LOCKS_END,   /* a = descriptors read, x = locks, b = cut, err */
    K_OOM,         /* text of /proc/PID/oom_score_adj */
    K_END,
};

typedef struct {
    uint32_t kind, len;
    int32_t a, err;
    uint32_t b, pad;
    uint64_t x, y, z;
} frame;

#define TEXT_MAX 8192

/* What one audit may read of a DM's fdinfo files: the lock lines of
 * dm_max_file_locks (at most 2^18, some 100 bytes each), plus a chunk
 * of what follows them on each of its descriptors. */
#define LOCKS_BYTES_MAX (64u << 20)
#define LOCKS_CHUNK 4096

/* ---------- the child: system calls on its stack only ---------- */

static void put(int wfd, const frame *f, const void *text)
{
    struct iovec iov[2] = { { (void *)f, sizeof(*f) },
                            { (void *)text, f->len } };
    size_t want = sizeof(*f) + f->len, done = 0;

    /* A short write into a pipe only happens for large texts; the
     * frame's parts are then written out in order. */
    while (done < want) {
        ssize_t r;

        if (done < sizeof(*f)) {
            iov[0].iov_base = (char *)f + done;
            iov[0].iov_len = sizeof(*f) - done;
            r = writev(wfd, iov, f->len ? 2 : 1);
        } else {
            r = write(wfd, (const char *)text + (done - sizeof(*f)),
                      want - done);
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            _exit(3); /* the audit went away */
        done += (size_t)r;
    }
}

static void section(int wfd, int s)
{
    frame f = { .kind = K_SECTION, .a = s };
    put(wfd, &f, NULL);
}

/* "/proc/PID/" + rel into buf: no snprintf in the child. */
static void proc_path(char *buf, size_t size, const char *pid, const char *rel)
{
    size_t n = 0;

    for (const char *s = "/proc/"; *s && n + 1 < size; s++)
        buf[n++] = *s;
    for (const char *s = pid; *s && n + 1 < size; s++)
        buf[n++] = *s;
    if (n + 1 < size)
        buf[n++] = '/';
    for (const char *s = rel; *s && n + 1 < size; s++)
        buf[n++] = *s;
    buf[n] = '\0';
}

static ssize_t read_text(const char *path, char *buf, size_t size)
{
    size_t n = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return -1;
    while (n < size) {
        ssize_t r = read(fd, buf + n, size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    return (ssize_t)n;
}

static void send_text(int wfd, int kind, int a, const char *path)
{
    char buf[TEXT_MAX];
    ssize_t n = read_text(path, buf, sizeof(buf));
    frame f = { .kind = (uint32_t)kind, .a = a };

    if (n < 0) {
        f.err = errno;
        n = 0;
    }
    f.len = (uint32_t)n;
    put(wfd, &f, buf);
}

/* statx of a link's target from cached attributes only. */
static int stat_cached(int dirfd, const char *name, struct statx *sx)
{
    return (int)syscall(SYS_statx, dirfd, name, AT_STATX_DONT_SYNC,
                        STATX_TYPE | STATX_MODE | STATX_INO, sx);
}

/* The links of /proc/PID sent, by their XLREAPER__LINK_* number. */
static const char *const link_names[XLREAPER__LINKS] = {
    [XLREAPER__LINK_ROOT] = "root",  [XLREAPER__LINK_EXE] = "exe",
    [XLREAPER__LINK_MNT] = "ns/mnt", [XLREAPER__LINK_IPC] = "ns/ipc",
    [XLREAPER__LINK_NET] = "ns/net", [XLREAPER__LINK_USER] = "ns/user",
};

static void send_link(int wfd, int which, const char *path)
{
    struct statx sx;
    frame f = { .kind = K_LINK, .a = which };

    if (stat_cached(AT_FDCWD, path, &sx) < 0) {
        f.err = errno;
    } else {
        f.x = makedev(sx.stx_dev_major, sx.stx_dev_minor);
        f.y = sx.stx_ino;
    }
    put(wfd, &f, NULL);
}

static long to_long(const char *s)
{
    long v = 0;

    if (*s < '0' || *s > '9')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Calls fn for every numeric entry of the directory at path. */
static unsigned each_entry(const char *path,
                           void (*fn)(void *arg, int dfd, const char *name,
                                      long n),
                           void *arg, int *err_r)
{
    char buf[4096];
    unsigned count = 0;
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    *err_r = 0;
    if (dfd < 0) {
        *err_r = errno;
        return 0;
    }
    for (;;) {
        long r = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            *err_r = errno;
        if (r <= 0)
            break;
        for (long off = 0; off < r;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *de = (void *)(buf + off);
            long n = to_long(de->name);

            off += de->reclen;
            if (n < 0)
                continue;
            count++;
            fn(arg, dfd, de->name, n);
        }
    }
    close(dfd);
    return count;
}

typedef struct {
    int wfd;
    const char *pid;
    const xlreaper__xendevs *xd;
} child_arg;

static void one_thread(void *arg, int dfd, const char *name, long tid)
{
    child_arg *c = arg;
    char rel[64], path[96];
    size_t n = 0;

    (void)dfd;
    for (const char *s = "task/"; *s; s++)
        rel[n++] = *s;
    for (const char *s = name; *s && n < 40; s++)
        rel[n++] = *s;
    for (const char *s = "/status"; *s; s++)
        rel[n++] = *s;
    rel[n] = '\0';
    proc_path(path, sizeof(path), c->pid, rel);
    send_text(c->wfd, K_THREAD, (int)tid, path);
}

static void one_fd(void *arg, int dfd, const char *name, long fd)
{
    child_arg *c = arg;
    char target[PATH_MAX];
    struct statx sx;
    struct stat st;
    frame f = { .kind = K_FD, .a = (int32_t)fd };
    ssize_t n;

    if (stat_cached(dfd, name, &sx) < 0)
        return; /* closed since the listing */
    memset(&st, 0, sizeof(st));
    st.st_mode = sx.stx_mode;
    st.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
    st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    st.st_ino = sx.stx_ino;
    /* Only Xen's nodes are sent: the rest are counted. */
    if (!xlreaper__xendevs_match(c->xd, &st))
        return;
    n = readlinkat(dfd, name, target, sizeof(target) - 1);
    f.len = n > 0 ? (uint32_t)n : 0;
    f.b = st.st_mode;
    f.x = st.st_rdev;
    f.y = st.st_ino;
    f.z = st.st_dev;
    put(c->wfd, &f, target);
}

typedef struct {
    int wfd;
    int infodir;     /* /proc/PID/fdinfo */
    uint32_t max;    /* stop once the count passes it (0: never) */
    bool epoll_turn; /* this turn reads the epoll descriptors only */
    uint64_t count, bytes;
    unsigned fds;
    int cut; /* XLREAPER__LOCKS_CUT_* */
} locks_arg;

/* The "lock:" lines of one fdinfo file, counted into c->count. */
static void count_fd_locks(locks_arg *c, const char *name)
{
    char buf[LOCKS_CHUNK], head[5];
    unsigned line = 0;
    size_t col = 0;
    int fd = openat(c->infodir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return; /* closed since the listing */
    for (;;) {
        ssize_t r = read(fd, buf, sizeof(buf));

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        c->bytes += (uint64_t)r;
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] != '\n') {
                if (col < sizeof(head))
                    head[col] = buf[i];
                col++;
                continue;
            }
            if (col >= sizeof(head) && !memcmp(head, "lock:", 5)) {
                c->count++;
            } else if (line >= 4) {
                /* pos, flags, mnt_id, ino, the locks: what follows is
                 * the file's own and not needed. */
                goto out;
            }
            line++;
            col = 0;
            if (c->max && c->count > c->max) {
                c->cut = XLREAPER__LOCKS_CUT_LIMIT;
                goto out;
            }
        }
        if (c->bytes >= LOCKS_BYTES_MAX) {
            c->cut = XLREAPER__LOCKS_CUT_BYTES;
            break;
        }
    }
out:
    close(fd);
}

static void one_fd_locks(void *arg, int dfd, const char *name, long fd)
{
    static const char epoll[] = "anon_inode:[eventpoll]";
    locks_arg *c = arg;
    char target[sizeof(epoll) + 1];
    ssize_t n;
    uint64_t before = c->count;
    frame f = { .kind = K_LOCKS, .a = (int32_t)fd };

    if (c->cut)
        return;
    n = readlinkat(dfd, name, target, sizeof(target));
    if ((n == (ssize_t)sizeof(epoll) - 1 &&
         !memcmp(target, epoll, sizeof(epoll) - 1)) != c->epoll_turn)
        return;
    c->fds++;
    count_fd_locks(c, name);
    if (c->count == before)
        return;
    f.x = c->count;
    put(c->wfd, &f, NULL);
}

static void send_locks(int wfd, const char *pid, uint32_t max)
{
    char path[96];
    locks_arg c = { .wfd = wfd, .max = max };
    frame f = { .kind = K_LOCKS_END };
    int err = 0;

    proc_path(path, sizeof(path), pid, "fdinfo");
    c.infodir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (c.infodir < 0) {
        f.err = errno;
    } else {
        proc_path(path, sizeof(path), pid, "fd");
        for (int turn = 0; turn < 2 && !err; turn++) {
            c.epoll_turn = turn;
            (void)each_entry(path, one_fd_locks, &c, &err);
        }
        close(c.infodir);
        f.err = err;
    }
    f.a = (int32_t)c.fds;
    f.x = c.count;
    f.b = (uint32_t)c.cut;
    put(wfd, &f, NULL);
}

/* One process, its frames on wfd, ended by K_END (a = pid). */
static void read_one(int wfd, pid_t pid, const char *first, uint32_t max_locks,
                     const xlreaper__xendevs *xd)
{
    char spid[24], path[96];
    child_arg c = { .wfd = wfd, .pid = spid, .xd = xd };
    frame f;
    int i = (int)sizeof(spid) - 1, err;
    unsigned long v = (unsigned long)pid;

    spid[i] = '\0';
    do {
        spid[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    memmove(spid, spid + i, sizeof(spid) - (size_t)i);

    if (first) {
        /* Tests only: a read that may block, to prove the deadline. */
        char buf[256];
        section(wfd, XLREAPER__FACTS_HOOK);
        proc_path(path, sizeof(path), spid, first);
        (void)read_text(path, buf, sizeof(buf));
    }
    section(wfd, XLREAPER__FACTS_STAT);
    proc_path(path, sizeof(path), spid, "stat");
    send_text(wfd, K_STAT, 0, path);

    section(wfd, XLREAPER__FACTS_THREADS);
    proc_path(path, sizeof(path), spid, "task");
    f = (frame){ .kind = K_THREADS_END };
    f.a = (int32_t)each_entry(path, one_thread, &c, &err);
    f.err = err;
    put(wfd, &f, NULL);

    section(wfd, XLREAPER__FACTS_LIMITS);
    proc_path(path, sizeof(path), spid, "limits");
    send_text(wfd, K_LIMITS, 0, path);

    /* A value the kernel keeps in the process's signal struct: its
     * read takes no lock a DM can hold (oom_score_adj_read). */
    section(wfd, XLREAPER__FACTS_OOM);
    proc_path(path, sizeof(path), spid, "oom_score_adj");
    send_text(wfd, K_OOM, 0, path);

    section(wfd, XLREAPER__FACTS_LINKS);
    for (int w = 0; w < XLREAPER__LINKS; w++) {
        proc_path(path, sizeof(path), spid, link_names[w]);
        send_link(wfd, w, path);
    }

    section(wfd, XLREAPER__FACTS_FDS);
    proc_path(path, sizeof(path), spid, "fd");
    f = (frame){ .kind = K_FDS_END };
    f.a = (int32_t)each_entry(path, one_fd, &c, &err);
    f.err = err;
    put(wfd, &f, NULL);

    section(wfd, XLREAPER__FACTS_LOCKS);
    send_locks(wfd, spid, max_locks);

    f = (frame){ .kind = K_END, .a = (int32_t)pid };
    put(wfd, &f, NULL);
}

/* What the audit asks of the reader: a process, and a test's extra
 * file to read first ("" none). */
typedef struct {
    int32_t pid;
    uint32_t max_locks; /* dm_max_file_locks */
    char first[60];
} request;

/* The child's loop: a request, its frames; until the audit closes its
 * end (or dies: PDEATHSIG). */
static void serve(int fd, const xlreaper__xendevs *xd)
{
    for (;;) {
        request q = { 0 };
        size_t got = 0;

        while (got < sizeof(q)) {
            ssize_t r = read(fd, (char *)&q + got, sizeof(q) - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                _exit(0);
            got += (size_t)r;
        }
        q.first[sizeof(q.first) - 1] = '\0';
        if (q.pid <= 0)
            _exit(2); /* not the audit's */
        read_one(fd, (pid_t)q.pid, q.first[0] ? q.first : NULL, q.max_locks,
                 xd);
    }
}

/* ---------- the audit's side ---------- */

const char *xlreaper__facts_section_name(int s)
{
    switch (s) {
    case XLREAPER__FACTS_HOOK: return "a test's extra read";
    case XLREAPER__FACTS_STAT: return "its stat";
    case XLREAPER__FACTS_THREADS: return "its threads' status";
    case XLREAPER__FACTS_LIMITS: return "its limits";
    case XLREAPER__FACTS_LINKS: return "its root, exe and ns links";
    case XLREAPER__FACTS_FDS: return "its fd directory";
    case XLREAPER__FACTS_LOCKS: return "its fdinfo (file locks)";
    case XLREAPER__FACTS_OOM: return "its oom_score_adj";
    }
    return "nothing yet (the reader did not start)";
}

void xlreaper__facts_dispose(xlreaper__facts *fc)
{
    xlreaper_task_list_dispose(&fc->threads);
    free(fc->limits);
    free(fc->xenfds);
    memset(fc, 0, sizeof(*fc));
}

static int take(xlreaper__facts *fc, const frame *f, const char *text)
{
    switch (f->kind) {
    case K_SECTION: fc->section = f->a; break;
    case K_STAT:
        if (!f->err &&
            !xlreaper__parse_stat_starttime(text, f->len, &fc->start))
            fc->have_start = true;
        break;
    case K_THREAD: {
        xlreaper_task at;

        /* A thread that ended since the listing has no status. */
        if (f->err || xlreaper__audit_parse_status(text, f->len, &at))
            break;
        return xlreaper__task_list_add(&fc->threads, &at);
    }
    case K_THREADS_END:
        fc->threads_err = f->err;
        fc->threads_done = true;
        break;
    case K_LIMITS:
        if (f->err) {
            fc->limits_err = f->err;
        } else {
            fc->limits = malloc((size_t)f->len + 1);
            if (!fc->limits)
                return XLREAPER_ERROR_NOMEM;
            memcpy(fc->limits, text, f->len);
            fc->limits[f->len] = '\0';
            fc->limits_len = f->len;
        }
        fc->have_limits = true;
        break;
    case K_OOM: {
        char v[16], *end;
        long n;

        fc->have_oom = true;
        fc->oom_err = f->err;
        if (f->err)
            break;
        /* The kernel prints -1000..1000 and a newline; anything else is
         * not taken for a value. */
        if (!f->len || f->len >= sizeof(v)) {
            fc->oom_err = EINVAL;
            break;
        }
        memcpy(v, text, f->len);
        v[f->len] = '\0';
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno || end == v || (*end && strcmp(end, "\n")) || n < -1000 ||
            n > 1000)
            fc->oom_err = EINVAL;
        else
            fc->oom_adj = (int)n;
        break;
    }
    case K_LINK:
        if (f->a < 0 || f->a >= XLREAPER__LINKS)
            break;
        fc->link[f->a].have = true;
        fc->link[f->a].err = f->err;
        fc->link[f->a].dev = (dev_t)f->x;
        fc->link[f->a].ino = (ino_t)f->y;
        break;
    case K_FD: {
        xlreaper__facts_fd *n =
            xlreaper__grow(fc->xenfds, fc->nxen, &fc->xencap, sizeof(*n), 4);
        xlreaper__facts_fd *d;

        if (!n)
            return XLREAPER_ERROR_NOMEM;
        fc->xenfds = n;
        d = &n[fc->nxen++];
        memset(d, 0, sizeof(*d));
        d->fd = f->a;
        d->st.st_mode = f->b;
        d->st.st_rdev = (dev_t)f->x;
        d->st.st_ino = (ino_t)f->y;
        d->st.st_dev = (dev_t)f->z;
        memcpy(d->target, text,
               f->len < sizeof(d->target) ? f->len : sizeof(d->target) - 1);
        break;
    }
    case K_FDS_END:
        fc->nfds = (unsigned)f->a;
        fc->fds_err = f->err;
        fc->fds_done = true;
        break;
    case K_LOCKS:
        fc->locks = f->x;
        fc->locks_fd = f->a;
        break;
    case K_LOCKS_END:
        fc->locks = f->x;
        fc->locks_fds = (unsigned)f->a;
        fc->locks_cut = (int)f->b;
        fc->locks_err = f->err;
        fc->locks_done = true;
        break;
    case K_END:
        fc->done = true;
        fc->end_pid = f->a;
        break;
    }
    return 0;
}

/* What is left in buf after the whole frames in it are taken. */
static int take_all(xlreaper__facts *fc, char *buf, size_t *len)
{
    size_t off = 0;
    int rc = 0;

    while (!rc && *len - off >= sizeof(frame)) {
        frame f;

        memcpy(&f, buf + off, sizeof(f));
        if (f.len > TEXT_MAX + PATH_MAX)
            return XLREAPER_ERROR_FAIL; /* not our child's */
        if (*len - off < sizeof(f) + f.len)
            break;
        rc = take(fc, &f, buf + off + sizeof(f));
        off += sizeof(f) + f.len;
    }
    memmove(buf, buf + off, *len - off);
    *len -= off;
    return rc;
}

/* Kills the reader and reaps it.  Killed, it ends at once unless a
 * read holds it in an uninterruptible sleep; then it is left, not
 * waited on (PDEATHSIG ends it with us). */
void xlreaper__facts_reader_stop(xlreaper_ctx *ctx, xlreaper__facts_reader *r)
{
    xlreaper__wait w = { .mode = XLREAPER__WAIT_KILL,
                         .pid = r->pid,
                         .rfd = -1,
                         .deadline_us = xlreaper__now_us() + 200 * 1000 };

    if (r->pid <= 0)
        return;
    close(r->fd);
    xlreaper__wait_bounded(ctx, &w);
    r->pid = 0;
    r->fd = -1;
    r->xd = NULL;
}

static int reader_start(xlreaper_ctx *ctx, xlreaper__facts_reader *r,
                        const xlreaper__xendevs *xd)
{
    pid_t child, parent = getpid();
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        LOGE(ERROR, "audit: socket for the /proc reader");
        return XLREAPER_ERROR_FAIL;
    }
    child = fork();
    if (child < 0) {
        LOGE(ERROR, "audit: fork for the /proc reader");
        close(sv[0]);
        close(sv[1]);
        return XLREAPER_ERROR_FAIL;
    }
    if (child == 0) {
        xlreaper__helper_prelude(sv[1], parent);
        serve(sv[1], xd);
    }
    close(sv[1]);
    r->pid = child;
    r->fd = sv[0];
    r->xd = xd;
    return 0;
}

/* Asks the reader (started if need be) for pid.  0, 1 when the reader
 * is gone (EPIPE: start another), or _FAIL. */
static int reader_ask(xlreaper_ctx *ctx, xlreaper__facts_reader *r, pid_t pid,
                      const char *first, const xlreaper__xendevs *xd)
{
    request q = { .pid = (int32_t)pid, .max_locks = r->max_locks };
    size_t done = 0;
    int rc;

    if (r->pid > 0 && r->xd != xd)
        xlreaper__facts_reader_stop(ctx, r);
    if (r->pid <= 0) {
        rc = reader_start(ctx, r, xd);
        if (rc)
            return rc;
    }
    if (first)
        snprintf(q.first, sizeof(q.first), "%s", first);
    /* Tiny, and the reader takes each request before the next one is
     * sent: this never waits on it.  MSG_NOSIGNAL: a dead reader is
     * EPIPE, not our death. */
    while (done < sizeof(q)) {
        ssize_t n =
            send(r->fd, (char *)&q + done, sizeof(q) - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            return 1;
        if (n <= 0) {
            LOGE(ERROR, "audit: asking the /proc reader for pid %ld",
                 (long)pid);
            return XLREAPER_ERROR_FAIL;
        }
        done += (size_t)n;
    }
    return 0;
}

int xlreaper__facts_read(xlreaper_ctx *ctx, xlreaper__facts_reader *rd,
                         pid_t pid, const xlreaper__xendevs *xd,
                         const char *first, uint64_t deadline_us,
                         xlreaper__facts *fc)
{
    size_t cap = 2 * (sizeof(frame) + TEXT_MAX + PATH_MAX), len = 0;
    uint64_t t0 = xlreaper__now_us();
    char *buf = NULL;
    int rc;

    memset(fc, 0, sizeof(*fc));
    fc->read = true;
    fc->section = -1;
    buf = malloc(cap);
    if (!buf)
        return XLREAPER_ERROR_NOMEM;
    rc = reader_ask(ctx, rd, pid, first, xd);
    if (rc == 1) {
        /* It died since its last answer: once more, with a new one. */
        xlreaper__facts_reader_stop(ctx, rd);
        rc = reader_ask(ctx, rd, pid, first, xd);
    }
    if (rc) {
        free(buf);
        return rc < 0 ? rc : XLREAPER_ERROR_FAIL;
    }
    while (!fc->done) {
        uint64_t now = xlreaper__now_us();
        struct pollfd pfd = { .fd = rd->fd, .events = POLLIN };
        ssize_t r;
        int pr;

        if (now >= deadline_us) {
            fc->timed_out = true;
            break;
        }
        pr = poll(&pfd, 1, (int)((deadline_us - now + 999) / 1000));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0) {
            LOGE(ERROR, "audit: poll for the reader of pid %ld", (long)pid);
            rc = XLREAPER_ERROR_FAIL;
            break;
        }
        if (pr == 0)
            continue;
        r = read(rd->fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* it ended */
        len += (size_t)r;
        rc = take_all(fc, buf, &len);
        if (rc)
            break;
    }
    free(buf);
    fc->elapsed_us = xlreaper__now_us() - t0;
    /* A reader that did not finish (late, dead, or out of step: bytes
     * after its last frame) reads nothing more: the next process gets
     * a new one. */
    if (!fc->done || len || fc->end_pid != pid)
        xlreaper__facts_reader_stop(ctx, rd);
    return rc;
}
