/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_util.c - system call wrappers that loop on EINTR and keep
 * errno, the clock, a strict decimal parser, and keeping our own
 * descriptors off 0-2.
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "xlreaper_internal.h"

uint64_t xlreaper__now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct timespec xlreaper__timespec_us(uint64_t us)
{
    return (struct timespec){ .tv_sec = (time_t)(us / 1000000u),
                              .tv_nsec = (long)(us % 1000000u) * 1000 };
}

uint64_t xlreaper_now_us(void)
{
    return xlreaper__now_us();
}

void xlreaper__sleep_us(uint64_t us)
{
    struct timespec ts = xlreaper__timespec_us(us);

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

ssize_t xlreaper__read_all(int fd, char *buf, size_t max)
{
    size_t got = 0;

    while (got < max) {
        ssize_t r = read(fd, buf + got, max - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int xlreaper__write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len) {
        ssize_t r = write(fd, p, len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

void xlreaper__close_keep_errno(int fd)
{
    int esave = errno;

    if (fd >= 0)
        close(fd);
    errno = esave;
}

int xlreaper__parse_ulong(const char *s, size_t len, unsigned long max,
                          unsigned long *v_r)
{
    unsigned long v = 0;

    if (!len || len > 20 || (s[0] == '0' && len > 1))
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned d;
        if (s[i] < '0' || s[i] > '9')
            return -1;
        d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *v_r = v;
    return 0;
}

int xlreaper__fd_above_stdio(int fd)
{
    int nfd;

    if (fd > 2)
        return fd;
    nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    xlreaper__close_keep_errno(fd);
    return nfd;
}
