/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_fuse.c - fuse_holder started and stopped (see xlrt_fuse.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xlrt_fuse.h"

#define MAX_UIDS 256u /* fuse_holder's own limit */

int xlrt_fuse_holder_start(xlrt_fuse_holder *h, const char *prog,
                           const uid_t *uids, unsigned n, char *line,
                           size_t len)
{
    char args[MAX_UIDS][16], first[128];
    char *argv[MAX_UIDS + 2];
    int in[2], out[2];
    size_t got = 0;
    ssize_t r;

    h->pid = -1;
    h->in = -1;
    if (line && len)
        line[0] = '\0';
    if (n > MAX_UIDS)
        return -1;
    argv[0] = (char *)prog;
    for (unsigned i = 0; i < n; i++) {
        snprintf(args[i], sizeof(args[i]), "%lu", (unsigned long)uids[i]);
        argv[1 + i] = args[i];
    }
    argv[1 + n] = NULL;
    if (pipe2(in, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    h->pid = fork();
    if (h->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execv(prog, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    h->in = in[1];
    while (h->pid > 0 && got < sizeof(first) - 1) {
        r = read(out[0], first + got, sizeof(first) - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(first, '\n', got))
            break;
    }
    close(out[0]);
    first[got] = '\0';
    if (line && len)
        snprintf(line, len, "%s", first);
    if (h->pid < 0 || strncmp(first, "ready", 5)) {
        xlrt_fuse_holder_stop(h);
        return -1;
    }
    return 0;
}

void xlrt_fuse_holder_stop(xlrt_fuse_holder *h)
{
    if (h->in >= 0)
        close(h->in);
    h->in = -1;
    if (h->pid > 0)
        while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    h->pid = -1;
}
