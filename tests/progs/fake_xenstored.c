/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fake_xenstored SOCKET [DOMID[:KILLUID]...] - a xenstored for tests on
 * hosts without Xen; the domains given exist before it listens (as after
 * a restart that kept them).
 *
 * Debian's xenstored cannot serve without a hypervisor (the C one
 * segfaults on the first request, oxenstored exits on setrlimit: see
 * docs/xl-integration.md), so the daemon's tests talk to this one.  It
 * speaks the real wire protocol of <xen/io/xs_wire.h> on a unix socket,
 * so clients use the real libxenstore, reached with XENSTORED_PATH:
 * READ, WRITE, MKDIR, RM, DIRECTORY, DIRECTORY_PART, WATCH (fired once
 * up front, as xenstored does), UNWATCH, RESET_WATCHES, GET_DOMAIN_PATH,
 * INTRODUCE and RELEASE (firing @introduceDomain and @releaseDomain),
 * IS_DOMAIN_INTRODUCED, GET_PERMS/SET_PERMS and transactions as no-ops.
 * It keeps no permissions: every client is dom0.
 *
 * A second tree, /fakexen/domain/<domid>, stands for the hypervisor's
 * domain list, for tests that link libxl's few calls to it.
 *
 * Control, one command a line on stdin, answered "ok[ N]" or "err WHY"
 * on stdout (EOF on stdin ends the server):
 *   add DOMID [KILLUID]  create the domain in the hypervisor and in
 *                        xenstore (/local/domain/DOMID, its kill uid),
 *                        fire @introduceDomain
 *   del DOMID...         remove each from xenstore and the hypervisor
 *                        (in libxl's order), then fire @releaseDomain once
 *   reuse DOMID [KILLUID]  del and add again, between two client requests
 *   hv-del DOMID         remove from the hypervisor only, fire release
 *   write PATH VALUE     rm PATH     fire watches as a client's would
 *   release | introduce  fire the special watch alone
 *   watches              "ok N": watches registered by all clients
 *   quit
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <xen/io/xs_wire.h>

#define MAX_CONNS 128
#define MAX_OUT (16u << 20) /* a client this far behind is dropped */
#define HDR sizeof(struct xsd_sockmsg)

/* ---------- the tree ---------- */

typedef struct {
    char *path;
    char *value;
    unsigned vlen;
} node;

static node *nodes;
static unsigned num_nodes, cap_nodes;
static uint64_t generation = 1;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("fake_xenstored: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static node *find_node(const char *path)
{
    for (unsigned i = 0; i < num_nodes; i++)
        if (!strcmp(nodes[i].path, path))
            return &nodes[i];
    return NULL;
}

static bool is_below(const char *path, const char *top)
{
    size_t n = strlen(top);

    if (!strcmp(top, "/"))
        return path[0] == '/' && path[1];
    return !strncmp(path, top, n) && path[n] == '/';
}

static node *add_one(const char *path)
{
    node *n;

    if (num_nodes == cap_nodes) {
        cap_nodes = cap_nodes ? cap_nodes * 2 : 256;
        n = realloc(nodes, cap_nodes * sizeof(*nodes));
        if (!n) {
            fputs("fake_xenstored: out of memory\n", stderr);
            exit(1);
        }
        nodes = n;
    }
    n = &nodes[num_nodes++];
    /* gcc 12's -fanalyzer loses what is stored in nodes[] at a variable
     * index and calls each string leaked at the next line: false. */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    n->path = xstrndup(path, strlen(path));
    n->value = xstrndup("", 0);
    n->vlen = 0;
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
    generation++;
    return n;
}

/* The node at path, created with its missing parents as xenstored does. */
static node *make_node(const char *path)
{
    node *n = find_node(path);
    char *copy;

    if (n)
        return n;
    copy = xstrndup(path, strlen(path));
    for (char *p = copy + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (!find_node(copy))
            add_one(copy);
        *p = '/';
    }
    free(copy);
    return add_one(path);
}

static void set_value(node *n, const char *v, unsigned len)
{
    free(n->value);
    n->value = xstrndup(v, len);
    n->vlen = len;
}

static void remove_tree(const char *path)
{
    unsigned j = 0;

    for (unsigned i = 0; i < num_nodes; i++) {
        if (!strcmp(nodes[i].path, path) || is_below(nodes[i].path, path)) {
            free(nodes[i].path);
            free(nodes[i].value);
            continue;
        }
        nodes[j++] = nodes[i];
    }
    if (j != num_nodes)
        generation++;
    num_nodes = j;
}

/* The names of path's children, each NUL-terminated, into a buffer. */
static char *children(const char *path, unsigned *len_r)
{
    size_t plen = strlen(path), len = 0, cap = 256;
    char *out = xmalloc(cap);

    for (unsigned i = 0; i < num_nodes; i++) {
        const char *p = nodes[i].path, *name;

        if (!is_below(p, path))
            continue;
        name = p + (strcmp(path, "/") ? plen + 1 : 1);
        if (strchr(name, '/'))
            continue;
        while (len + strlen(name) + 1 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            if (!out)
                exit(1);
        }
        memcpy(out + len, name, strlen(name) + 1);
        len += strlen(name) + 1;
    }
    *len_r = (unsigned)len;
    return out;
}

/* ---------- clients and watches ---------- */

typedef struct {
    int fd;
    char in[HDR + XENSTORE_PAYLOAD_MAX];
    size_t inlen;
    char *out;
    size_t outlen, outcap;
} conn;

typedef struct {
    conn *c;
    char *path, *token;
} watch;

static conn *conns[MAX_CONNS];
static watch *watches;
static unsigned num_watches, cap_watches;

static void queue(conn *c, uint32_t type, uint32_t req_id, uint32_t tx_id,
                  const void *body, unsigned len)
{
    struct xsd_sockmsg h = { type, req_id, tx_id, len };

    if (c->outlen + HDR + len > MAX_OUT) {
        c->outlen = 0; /* dropped at the next poll */
        shutdown(c->fd, SHUT_RDWR);
        return;
    }
    while (c->outlen + HDR + len > c->outcap) {
        c->outcap = c->outcap ? c->outcap * 2 : 8192;
        c->out = realloc(c->out, c->outcap);
        if (!c->out)
            exit(1);
    }
    memcpy(c->out + c->outlen, &h, HDR);
    memcpy(c->out + c->outlen + HDR, body, len);
    c->outlen += HDR + len;
}

static void send_event(conn *c, const char *path, const char *token)
{
    size_t pl = strlen(path) + 1, tl = strlen(token) + 1;
    char *b = xmalloc(pl + tl);

    memcpy(b, path, pl);
    memcpy(b + pl, token, tl);
    queue(c, XS_WATCH_EVENT, 0, 0, b, (unsigned)(pl + tl));
    free(b);
}

/* As xenstored: a change fires the watches on the node and above it; a
 * removal also fires those below it, with their own path. */
static void fire(const char *path, bool removed)
{
    for (unsigned i = 0; i < num_watches; i++) {
        watch *w = &watches[i];

        if (path[0] == '@' || w->path[0] == '@') {
            if (!strcmp(w->path, path))
                send_event(w->c, path, w->token);
        } else if (!strcmp(w->path, path) || is_below(path, w->path)) {
            send_event(w->c, path, w->token);
        } else if (removed && is_below(w->path, path)) {
            send_event(w->c, w->path, w->token);
        }
    }
}

static void drop_watches(conn *c)
{
    unsigned j = 0;

    for (unsigned i = 0; i < num_watches; i++) {
        if (watches[i].c == c) {
            free(watches[i].path);
            free(watches[i].token);
            continue;
        }
        watches[j++] = watches[i];
    }
    num_watches = j;
}

/* ---------- requests ---------- */

static void reply_error(conn *c, const struct xsd_sockmsg *h, const char *e)
{
    queue(c, XS_ERROR, h->req_id, h->tx_id, e, (unsigned)strlen(e) + 1);
}

static void reply(conn *c, const struct xsd_sockmsg *h, const void *b,
                  unsigned len)
{
    queue(c, h->type, h->req_id, h->tx_id, b, len);
}

static void reply_ok(conn *c, const struct xsd_sockmsg *h)
{
    reply(c, h, "OK", 3);
}

/* Absolute, or '@' for the special watches; relative ones are dom0's. */
static bool canon_path(const char *in, char *out, size_t outsz)
{
    size_t n;

    if (in[0] == '@') {
        if (strcmp(in, "@releaseDomain") && strcmp(in, "@introduceDomain"))
            return false;
        snprintf(out, outsz, "%s", in);
        return true;
    }
    if (in[0] == '/')
        n = (size_t)snprintf(out, outsz, "%s", in);
    else
        n = (size_t)snprintf(out, outsz, "/local/domain/0/%s", in);
    if (n >= outsz || n > XENSTORE_ABS_PATH_MAX || strstr(out, "//") ||
        (n > 1 && out[n - 1] == '/'))
        return false;
    for (const char *p = out; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            return false;
    return true;
}

/* The i-th NUL-terminated string of the payload, or NULL. */
static const char *arg(const char *body, unsigned len, unsigned i)
{
    unsigned off = 0;

    for (;;) {
        const char *nul = memchr(body + off, '\0', len - off);
        if (!nul)
            return NULL;
        if (!i--)
            return body + off;
        off = (unsigned)(nul - body) + 1;
        if (off >= len)
            return NULL;
    }
}

static void fake_introduce(unsigned domid)
{
    char p[64];

    snprintf(p, sizeof(p), "/fakexen/introduced/%u", domid);
    make_node(p);
    fire("@introduceDomain", false);
}

static void handle(conn *c, const struct xsd_sockmsg *h, const char *body)
{
    char path[XENSTORE_ABS_PATH_MAX + 64], buf[64];
    const char *a0 = arg(body, h->len, 0), *a1;
    node *n;

    switch (h->type) {
    case XS_READ:
    case XS_DIRECTORY:
    case XS_DIRECTORY_PART:
    case XS_WRITE:
    case XS_MKDIR:
    case XS_RM:
    case XS_WATCH:
    case XS_UNWATCH:
    case XS_GET_PERMS:
    case XS_SET_PERMS:
        if (!a0 || !canon_path(a0, path, sizeof(path)))
            return reply_error(c, h, "EINVAL");
        break;
    default:
        break;
    }

    switch (h->type) {
    case XS_READ:
        n = find_node(path);
        if (!n)
            return reply_error(c, h, "ENOENT");
        return reply(c, h, n->value, n->vlen);
    case XS_WRITE: {
        unsigned off = (unsigned)strlen(a0) + 1;
        n = make_node(path);
        set_value(n, body + off, h->len - off);
        fire(path, false);
        return reply_ok(c, h);
    }
    case XS_MKDIR:
        make_node(path);
        fire(path, false);
        return reply_ok(c, h);
    case XS_RM:
        if (!find_node(path))
            return reply_ok(c, h);
        remove_tree(path);
        fire(path, true);
        return reply_ok(c, h);
    case XS_DIRECTORY: {
        unsigned len;
        char *kids;
        if (!find_node(path))
            return reply_error(c, h, "ENOENT");
        kids = children(path, &len);
        if (len > XENSTORE_PAYLOAD_MAX)
            reply_error(c, h, "E2BIG");
        else
            reply(c, h, kids, len);
        free(kids);
        return;
    }
    case XS_DIRECTORY_PART: {
        /* As xenstored: "generation\0" then as many names as fit; the
         * last part ends with an empty name. */
        unsigned len, off, glen, take = 0;
        char *kids, *out;
        a1 = arg(body, h->len, 1);
        if (!a1)
            return reply_error(c, h, "EINVAL");
        if (!find_node(path))
            return reply_error(c, h, "ENOENT");
        off = (unsigned)strtoul(a1, NULL, 10);
        kids = children(path, &len);
        glen = (unsigned)snprintf(buf, sizeof(buf), "%llu",
                                  (unsigned long long)generation) +
               1;
        out = xmalloc(XENSTORE_PAYLOAD_MAX + 1);
        memcpy(out, buf, glen);
        if (off < len) {
            while (off + take < len) {
                unsigned l = (unsigned)strlen(kids + off + take) + 1;
                if (glen + take + l + 1 > XENSTORE_PAYLOAD_MAX)
                    break;
                take += l;
            }
            memcpy(out + glen, kids + off, take);
        }
        if (off + take >= len)
            out[glen + take++] = '\0';
        reply(c, h, out, glen + take);
        free(out);
        free(kids);
        return;
    }
    case XS_WATCH:
        a1 = arg(body, h->len, 1);
        if (!a1)
            return reply_error(c, h, "EINVAL");
        for (unsigned i = 0; i < num_watches; i++)
            if (watches[i].c == c && !strcmp(watches[i].path, path) &&
                !strcmp(watches[i].token, a1))
                return reply_error(c, h, "EEXIST");
        if (num_watches == cap_watches) {
            cap_watches = cap_watches ? cap_watches * 2 : 64;
            watches = realloc(watches, cap_watches * sizeof(*watches));
            if (!watches)
                exit(1);
        }
        watches[num_watches].c = c;
        watches[num_watches].path = xstrndup(path, strlen(path));
        watches[num_watches].token = xstrndup(a1, strlen(a1));
        num_watches++;
        reply_ok(c, h);
        /* xenstored fires every new watch once, up front. */
        send_event(c, path, a1);
        return;
    case XS_UNWATCH:
        a1 = arg(body, h->len, 1);
        for (unsigned i = 0; a1 && i < num_watches; i++) {
            if (watches[i].c == c && !strcmp(watches[i].path, path) &&
                !strcmp(watches[i].token, a1)) {
                free(watches[i].path);
                free(watches[i].token);
                watches[i] = watches[--num_watches];
                return reply_ok(c, h);
            }
        }
        return reply_error(c, h, "ENOENT");
    case XS_RESET_WATCHES:
        drop_watches(c);
        return reply_ok(c, h);
    case XS_GET_DOMAIN_PATH:
        if (!a0)
            return reply_error(c, h, "EINVAL");
        snprintf(path, sizeof(path), "/local/domain/%lu",
                 strtoul(a0, NULL, 10));
        return reply(c, h, path, (unsigned)strlen(path) + 1);
    case XS_INTRODUCE:
        if (!a0)
            return reply_error(c, h, "EINVAL");
        fake_introduce((unsigned)strtoul(a0, NULL, 10));
        return reply_ok(c, h);
    case XS_RELEASE:
        if (!a0)
            return reply_error(c, h, "EINVAL");
        snprintf(path, sizeof(path), "/fakexen/introduced/%lu",
                 strtoul(a0, NULL, 10));
        remove_tree(path);
        fire("@releaseDomain", false);
        return reply_ok(c, h);
    case XS_IS_DOMAIN_INTRODUCED:
        if (!a0)
            return reply_error(c, h, "EINVAL");
        snprintf(path, sizeof(path), "/fakexen/introduced/%lu",
                 strtoul(a0, NULL, 10));
        return reply(c, h, find_node(path) ? "T" : "F", 2);
    case XS_GET_PERMS:
        if (!find_node(path))
            return reply_error(c, h, "ENOENT");
        return reply(c, h, "n0", 3);
    case XS_SET_PERMS:
        return reply_ok(c, h);
    case XS_TRANSACTION_START:
        return reply(c, h, "1", 2);
    case XS_TRANSACTION_END:
        return reply_ok(c, h);
    default:
        return reply_error(c, h, "ENOSYS");
    }
}

/* Reads what is there; handles every whole message.  false: close. */
static bool conn_read(conn *c)
{
    ssize_t r = read(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen);

    if (r < 0)
        return errno == EINTR || errno == EAGAIN;
    if (r == 0)
        return false;
    c->inlen += (size_t)r;
    for (;;) {
        struct xsd_sockmsg h;
        size_t whole;

        if (c->inlen < HDR)
            return true;
        memcpy(&h, c->in, HDR);
        if (h.len > XENSTORE_PAYLOAD_MAX)
            return false; /* as xenstored: a protocol error */
        whole = HDR + h.len;
        if (c->inlen < whole)
            return true;
        {
            char body[XENSTORE_PAYLOAD_MAX + 1];
            memcpy(body, c->in + HDR, h.len);
            body[h.len] = '\0';
            handle(c, &h, body);
        }
        memmove(c->in, c->in + whole, c->inlen - whole);
        c->inlen -= whole;
    }
}

static bool conn_write(conn *c)
{
    ssize_t r = write(c->fd, c->out, c->outlen);

    if (r < 0)
        return errno == EINTR || errno == EAGAIN;
    memmove(c->out, c->out + r, c->outlen - (size_t)r);
    c->outlen -= (size_t)r;
    return true;
}

static void conn_close(int i)
{
    conn *c = conns[i];

    drop_watches(c);
    close(c->fd);
    free(c->out);
    free(c);
    conns[i] = NULL;
}

/* ---------- control ---------- */

static void dom_paths(unsigned domid, char *xs, char *hv, size_t sz)
{
    snprintf(xs, sz, "/local/domain/%u", domid);
    snprintf(hv, sz, "/fakexen/domain/%u", domid);
}

static void ctl_add(unsigned domid, const char *kill_uid)
{
    char xs[128], hv[128], p[192];

    dom_paths(domid, xs, hv, sizeof(xs));
    make_node(hv);
    make_node(xs);
    fire(xs, false);
    snprintf(p, sizeof(p), "%s/name", xs);
    snprintf(hv, sizeof(hv), "fake-%u", domid);
    set_value(make_node(p), hv, (unsigned)strlen(hv));
    fire(p, false);
    if (kill_uid) {
        snprintf(p, sizeof(p), "%s/image/device-model-kill-uid", xs);
        set_value(make_node(p), kill_uid, (unsigned)strlen(kill_uid));
        fire(p, false);
    }
    fake_introduce(domid);
}

/* libxl removes the xenstore directory, then destroys the domain; then
 * xenstored sees it gone and fires @releaseDomain. */
static void ctl_del(unsigned domid, bool xenstore_too)
{
    char xs[128], hv[128];

    dom_paths(domid, xs, hv, sizeof(xs));
    if (xenstore_too && find_node(xs)) {
        remove_tree(xs);
        fire(xs, true);
    }
    remove_tree(hv);
    snprintf(hv, sizeof(hv), "/fakexen/introduced/%u", domid);
    remove_tree(hv);
}

static bool parse_domid(const char *s, unsigned *d)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || v >= 0x7FF0)
        return false;
    *d = (unsigned)v;
    return true;
}

static void control(char *line)
{
    char *save = NULL, *cmd = strtok_r(line, " \t", &save), *a;
    unsigned d;

    if (!cmd) {
        puts("err empty");
    } else if (!strcmp(cmd, "add") || !strcmp(cmd, "reuse")) {
        a = strtok_r(NULL, " \t", &save);
        if (!a || !parse_domid(a, &d)) {
            puts("err domid");
        } else {
            if (!strcmp(cmd, "reuse")) {
                ctl_del(d, true);
                fire("@releaseDomain", false);
            }
            ctl_add(d, strtok_r(NULL, " \t", &save));
            puts("ok");
        }
    } else if (!strcmp(cmd, "del") || !strcmp(cmd, "hv-del")) {
        unsigned n = 0;
        while ((a = strtok_r(NULL, " \t", &save)) && parse_domid(a, &d)) {
            ctl_del(d, !strcmp(cmd, "del"));
            n++;
        }
        if (a || !n) {
            puts("err domid");
        } else {
            fire("@releaseDomain", false);
            puts("ok");
        }
    } else if (!strcmp(cmd, "write")) {
        char p[XENSTORE_ABS_PATH_MAX + 64];
        a = strtok_r(NULL, " \t", &save);
        if (!a || !canon_path(a, p, sizeof(p)) || p[0] == '@') {
            puts("err path");
        } else {
            a = save ? save : "";
            set_value(make_node(p), a, (unsigned)strlen(a));
            fire(p, false);
            puts("ok");
        }
    } else if (!strcmp(cmd, "rm")) {
        char p[XENSTORE_ABS_PATH_MAX + 64];
        a = strtok_r(NULL, " \t", &save);
        if (!a || !canon_path(a, p, sizeof(p)) || p[0] == '@') {
            puts("err path");
        } else {
            remove_tree(p);
            fire(p, true);
            puts("ok");
        }
    } else if (!strcmp(cmd, "release")) {
        fire("@releaseDomain", false);
        puts("ok");
    } else if (!strcmp(cmd, "introduce")) {
        fire("@introduceDomain", false);
        puts("ok");
    } else if (!strcmp(cmd, "watches")) {
        printf("ok %u\n", num_watches);
    } else if (!strcmp(cmd, "quit")) {
        puts("ok");
        exit(0);
    } else {
        puts("err unknown command");
    }
    fflush(stdout);
}

/* ---------- main ---------- */

int main(int argc, char **argv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    char line[8192];
    size_t linelen = 0;
    struct stat st;
    int lfd;

    if (argc < 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "usage: fake_xenstored SOCKET [DOMID[:KILLUID]...]\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    strcpy(sa.sun_path, argv[1]);
    if (lstat(argv[1], &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(argv[1]);
    lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        chmod(argv[1], 0600) < 0 || listen(lfd, 64) < 0) {
        perror("fake_xenstored: listen");
        return 1;
    }
    make_node("/local/domain/0");
    make_node("/fakexen/domain");
    make_node("/fakexen/introduced");
    for (int i = 2; i < argc; i++) {
        char *colon = strchr(argv[i], ':');
        unsigned d;
        if (colon)
            *colon = '\0';
        if (!parse_domid(argv[i], &d)) {
            fprintf(stderr, "fake_xenstored: bad domid %s\n", argv[i]);
            return 1;
        }
        ctl_add(d, colon ? colon + 1 : NULL);
    }
    puts("ready");
    fflush(stdout);

    for (;;) {
        struct pollfd pfd[MAX_CONNS + 2];
        int idx[MAX_CONNS + 2];
        unsigned n = 0;

        pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        idx[n++] = -1;
        pfd[n] = (struct pollfd){ .fd = 0, .events = POLLIN };
        idx[n++] = -2;
        for (int i = 0; i < MAX_CONNS; i++) {
            if (!conns[i])
                continue;
            pfd[n] =
                (struct pollfd){ .fd = conns[i]->fd,
                                 .events = POLLIN |
                                           (conns[i]->outlen ? POLLOUT : 0) };
            idx[n++] = i;
        }
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror("fake_xenstored: poll");
            return 1;
        }
        for (unsigned k = 0; k < n; k++) {
            if (!pfd[k].revents)
                continue;
            if (idx[k] == -1) {
                int fd =
                    accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                int i;
                if (fd < 0)
                    continue;
                for (i = 0; i < MAX_CONNS && conns[i]; i++)
                    ;
                if (i == MAX_CONNS) {
                    close(fd);
                    continue;
                }
                conns[i] = calloc(1, sizeof(conn));
                if (!conns[i])
                    exit(1);
                conns[i]->fd = fd;
            } else if (idx[k] == -2) {
                ssize_t r =
                    read(0, line + linelen, sizeof(line) - 1 - linelen);
                char *nl;
                if (r <= 0)
                    return 0; /* the test is gone */
                linelen += (size_t)r;
                while ((nl = memchr(line, '\n', linelen))) {
                    size_t used = (size_t)(nl - line) + 1;
                    *nl = '\0';
                    control(line);
                    memmove(line, line + used, linelen - used);
                    linelen -= used;
                }
                if (linelen == sizeof(line) - 1)
                    linelen = 0; /* an overlong line: dropped */
            } else {
                conn *c = conns[idx[k]];
                bool ok = true;
                if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
                    ok = conn_read(c);
                if (ok && c->outlen)
                    ok = conn_write(c);
                if (!ok)
                    conn_close(idx[k]);
            }
        }
    }
}
