/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_docs.c - the documentation says what the build does.
 *
 *  - every program the build makes ($XLR_BUILD/{bin,sbin,libexec}) has a
 *    page docs/man/NAME.8.md, and every such page a program;
 *  - what `PROG --help` lists, options and commands, is in the OPTIONS
 *    and COMMANDS of PROG's page, and nothing else is; a program whose
 *    --help does not exit 0 has neither section;
 *  - every key the config parser accepts is in the KEYS of
 *    xl-reaper.conf(5) and in the key table of
 *    docs/qemu-deprivilege.pandoc, and no other is; the two give the same
 *    defaults, and `xl-reaper check --json` reports the documented ones;
 *  - the settings the shipped config/xl-reaper.conf makes are those the
 *    EXAMPLES of xl-reaper.conf(5) show it making;
 *  - every page renders with pandoc, `man --warnings=w` (every groff
 *    warning) and lexgrog without a word, and every document converts to
 *    HTML without a warning;
 *  - every example in a ```{.shell-session} block runs and prints what it
 *    shows (the convention is written out above run_examples()).
 *
 * docs/pending-merge lists what the docs describe ahead of the build
 * (other branches not merged yet): those things may be missing from the
 * build, but whatever the build has is checked in full, and a line the
 * build already satisfies is named in the log as one to delete.
 *
 * uid block of this suite: 8000000 (base and pet) .. 8000063, the domids
 * the examples may use.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlreaper_audit_internal.h"

#define EX_BASE 8000000u
#define EX_MAX_DOMID 63u
#define EX_LOCK "/tmp/xl-reaper-docs-examples.lock"
#define EX_DEADLINE_S 120
/* After the last example: how long what it started may take to end. */
#define EX_GRACE_S 10
#define CONF_PAGE "docs/man/xl-reaper.conf.5.md"
#define FEATURE_DOC "docs/qemu-deprivilege.pandoc"
#define PENDING "docs/pending-merge"
#define SHIPPED_CONF "config/xl-reaper.conf"

/* ---------- strings ---------- */

typedef struct {
    char **v;
    size_t n, cap;
} strv;

static void strv_add(strv *s, const char *x)
{
    if (s->n + 1 >= s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = realloc(s->v, s->cap * sizeof(char *));
        assert_non_null(s->v);
    }
    s->v[s->n] = strdup(x);
    /* gcc 12's -fanalyzer loses what is stored at s->n of the realloc'd
     * s->v, reads NULL back and calls the strdup leaked: false. */
#ifndef __clang__ /* gcc's analyzer only */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
    assert_non_null(s->v[s->n]);
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
    s->n++;
    s->v[s->n] = NULL;
}

static bool strv_has(const strv *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x))
            return true;
    return false;
}

static void strv_add_unique(strv *s, const char *x)
{
    if (!strv_has(s, x))
        strv_add(s, x);
}

static void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* Problems found by a test, reported all at once. */
typedef struct {
    char *text;
    size_t len;
    unsigned num;
} problems;

static void problem(problems *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(problems *p, const char *fmt, ...)
{
    char *buf;
    va_list al;
    int n;

    va_start(al, fmt);
    n = vasprintf(&buf, fmt, al);
    va_end(al);
    assert_true(n >= 0);
    p->text = realloc(p->text, p->len + (size_t)n + 4);
    assert_non_null(p->text);
    p->len += (size_t)sprintf(p->text + p->len, "  %s\n", buf);
    p->num++;
    free(buf);
}

static void problems_check(problems *p)
{
    if (p->num) {
        char *t = p->text;
        p->text = NULL;
        fail_msg("%u problem%s:\n%s", p->num, p->num == 1 ? "" : "s", t);
    }
}

static char *slurp(const char *path)
{
    struct stat st;
    char *buf;
    ssize_t got;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return NULL;
    assert_int_equal(fstat(fd, &st), 0);
    buf = malloc((size_t)st.st_size + 1);
    assert_non_null(buf);
    got = read(fd, buf, (size_t)st.st_size);
    close(fd);
    assert_true(got == st.st_size);
    buf[got] = '\0';
    return buf;
}

/* The lines of a file, without their newlines. */
static bool read_lines(const char *path, strv *l)
{
    char *text = slurp(path), *p, *nl;

    if (!text)
        return false;
    for (p = text; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl) {
            strv_add(l, p);
            break;
        }
        *nl = '\0';
        strv_add(l, p);
    }
    free(text);
    return true;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static bool blank(const char *s)
{
    return !*skip_space(s);
}

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* ---------- running programs ---------- */

/*
 * Runs argv (looked up in PATH) with envp (NULL: ours), stdin on
 * /dev/null, collecting stdout and stderr (either pointer may be NULL).
 * Returns the wait status.
 */
static int run(char *const argv[], char *const envp[], char **out_r,
               char **err_r)
{
    int po[2], pe[2], status;
    char *buf[2] = { NULL, NULL };
    size_t len[2] = { 0, 0 };
    struct pollfd pfd[2];
    pid_t pid;

    assert_int_equal(pipe2(po, O_CLOEXEC), 0);
    assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        dup2(null, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        if (envp)
            execvpe(argv[0], argv, envp);
        else
            execvp(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    pfd[0] = (struct pollfd){ .fd = po[0], .events = POLLIN };
    pfd[1] = (struct pollfd){ .fd = pe[0], .events = POLLIN };
    while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
        if (poll(pfd, 2, -1) < 0) {
            assert_int_equal(errno, EINTR);
            continue;
        }
        for (int i = 0; i < 2; i++) {
            char chunk[4096];
            ssize_t n;

            if (pfd[i].fd < 0 || !pfd[i].revents)
                continue;
            n = read(pfd[i].fd, chunk, sizeof(chunk));
            if (n <= 0) {
                close(pfd[i].fd);
                pfd[i].fd = -1;
                continue;
            }
            buf[i] = realloc(buf[i], len[i] + (size_t)n + 1);
            assert_non_null(buf[i]);
            memcpy(buf[i] + len[i], chunk, (size_t)n);
            len[i] += (size_t)n;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!buf[i])
            buf[i] = calloc(1, 1);
        assert_non_null(buf[i]);
        buf[i][len[i]] = '\0';
    }
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    if (out_r)
        *out_r = buf[0];
    else
        free(buf[0]);
    if (err_r)
        *err_r = buf[1];
    else
        free(buf[1]);
    return status;
}

static bool exited_0(int status)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---------- the suite's state ---------- */

typedef struct {
    char kind[16], a[80], b[80];
    unsigned line;
    bool noted, missing_noted;
} pending;

static struct {
    char build[4096]; /* absolute */
    char *tmp;
    pending pend[128];
    unsigned num_pend;
} S;

static char *build_path(const char *rel)
{
    char *p;

    assert_true(asprintf(&p, "%s/%s", S.build, rel) > 0);
    return p;
}

static const pending *pending_find(const char *kind, const char *a,
                                   const char *b)
{
    for (unsigned i = 0; i < S.num_pend; i++) {
        const pending *p = &S.pend[i];
        if (!strcmp(p->kind, kind) && !strcmp(p->a, a) &&
            !strcmp(p->b, b ? b : ""))
            return p;
    }
    return NULL;
}

/* The build does what a pending line announced: say it may go. */
static void pending_satisfied(const pending *cp)
{
    pending *p = &S.pend[cp - S.pend];

    if (p->noted)
        return;
    p->noted = true;
    print_message("note: " PENDING ":%u: \"%s %s%s%s\" is in the build "
                  "now: delete the line\n",
                  p->line, p->kind, p->a, p->b[0] ? " " : "", p->b);
}

static void pending_missing(const pending *cp, const char *what)
{
    pending *p = &S.pend[cp - S.pend];

    if (p->missing_noted)
        return;
    p->missing_noted = true;
    print_message("note: %s: not in this build yet (" PENDING ":%u)\n", what,
                  p->line);
}

static int load_pending(void)
{
    strv l = { 0 };

    if (!read_lines(PENDING, &l))
        return 0; /* none: nothing is pending */
    for (size_t i = 0; i < l.n; i++) {
        pending *p;
        char extra[8];
        int n;
        char *hash = strchr(l.v[i], '#');

        if (hash) /* a comment, to the end of the line */
            *hash = '\0';
        if (blank(l.v[i]))
            continue;
        if (S.num_pend == sizeof(S.pend) / sizeof(S.pend[0])) {
            fprintf(stderr, PENDING ": too many lines\n");
            return -1;
        }
        p = &S.pend[S.num_pend];
        memset(p, 0, sizeof(*p));
        n = sscanf(l.v[i], "%15s %79s %79s %7s", p->kind, p->a, p->b, extra);
        p->line = (unsigned)i + 1;
        if (n < 2 || n > 3) {
            fprintf(stderr, PENDING ":%u: cannot read \"%s\"\n", p->line,
                    l.v[i]);
            return -1;
        }
        S.num_pend++;
    }
    strv_free(&l);
    return 0;
}

static int suite_setup(void **state)
{
    const char *b = xlrt_build_dir();

    (void)state;
    if (!realpath(b, S.build)) {
        fprintf(stderr, "test_docs: build directory %s: %s\n", b,
                strerror(errno));
        return -1;
    }
    S.tmp = xlrt_tmpdir();
    chmod(S.tmp, 0755);
    return load_pending();
}

static int suite_teardown(void **state)
{
    (void)state;
    xlrt_tmpdir_remove(S.tmp);
    return 0;
}

/* ---------- man pages in pandoc markdown ---------- */

/* A fence line, ``` or ~~~ with an optional info string. */
static bool is_fence(const char *l)
{
    return starts(l, "```") || starts(l, "~~~");
}

/* [from, to) of the lines of section "# name", skipping code blocks;
 * false if the page has no such section. */
static bool section(const strv *l, const char *name, size_t *from, size_t *to)
{
    bool in_code = false, found = false;

    for (size_t i = 0; i < l->n; i++) {
        const char *s = l->v[i];

        if (is_fence(s)) {
            in_code = !in_code;
            continue;
        }
        if (in_code || !starts(s, "# "))
            continue;
        if (found) {
            *to = i;
            return true;
        }
        if (!strcmp(s + 2, name)) {
            found = true;
            *from = i + 1;
        }
    }
    *to = l->n;
    return found;
}

/* Is line i of [.., to) a definition-list term?  The next non-blank line
 * starts with ':'. */
static bool is_term(const strv *l, size_t i, size_t to)
{
    const char *s = l->v[i];
    size_t j;

    if (blank(s) || strchr(" \t:#|>`~", s[0]))
        return false;
    for (j = i + 1; j < to && blank(l->v[j]); j++)
        ;
    return j < to && l->v[j][0] == ':' && j - i <= 2;
}

/* The first bold word of a term: "**uid --pet**" gives "uid". */
static bool term_name(const char *term, char *buf, size_t sz)
{
    size_t n = 0;

    if (!starts(term, "**"))
        return false;
    for (term += 2; *term && *term != '*' && *term != ' ' && n + 1 < sz;
         term++)
        buf[n++] = *term;
    buf[n] = '\0';
    return n > 0;
}

/*
 * Option tokens of a text: "-c", "--config", "--reap-stale": a '-' that
 * does not follow a letter, digit, '-' or '_', an optional second '-',
 * a letter, then letters, digits and '-'.  A lone "--" is not one.
 */
static void option_tokens(const char *s, strv *out)
{
    for (size_t i = 0; s[i]; i++) {
        char tok[64];
        size_t j = i, n = 0;

        if (s[i] != '-')
            continue;
        if (i && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '-' ||
                  s[i - 1] == '_'))
            continue;
        j++;
        if (s[j] == '-')
            j++;
        if (!isalpha((unsigned char)s[j]))
            continue;
        while (isalnum((unsigned char)s[j]) || s[j] == '-')
            j++;
        n = j - i;
        if (n >= sizeof(tok))
            continue;
        memcpy(tok, s + i, n);
        tok[n] = '\0';
        strv_add_unique(out, tok);
        i = j - 1;
    }
}

/* Options of the program itself, commands, and the commands' options. */
typedef struct {
    strv opts, cmds, cmd_opts;
    bool has_options, has_commands;
} page_surface;

static void page_surface_free(page_surface *ps)
{
    strv_free(&ps->opts);
    strv_free(&ps->cmds);
    strv_free(&ps->cmd_opts);
}

/* What a page documents: the terms of OPTIONS and COMMANDS. */
static void page_read_surface(const strv *l, page_surface *ps)
{
    size_t from, to;

    memset(ps, 0, sizeof(*ps));
    ps->has_options = section(l, "OPTIONS", &from, &to);
    if (ps->has_options)
        for (size_t i = from; i < to; i++)
            if (is_term(l, i, to))
                option_tokens(l->v[i], &ps->opts);
    ps->has_commands = section(l, "COMMANDS", &from, &to);
    if (ps->has_commands) {
        for (size_t i = from; i < to; i++) {
            char name[64];

            if (!is_term(l, i, to))
                continue;
            option_tokens(l->v[i], &ps->cmd_opts);
            if (term_name(l->v[i], name, sizeof(name)))
                strv_add_unique(&ps->cmds, name);
        }
    }
}

/* What --help lists: the commands are the lines under "commands:"
 * indented by exactly two spaces, and the options in them the commands';
 * every other option token is the program's own. */
static void help_read_surface(const char *help, page_surface *hs)
{
    strv l = { 0 };
    bool in_cmds = false;
    char *copy = strdup(help), *save = NULL;

    assert_non_null(copy);
    memset(hs, 0, sizeof(*hs));
    for (char *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        strv_add(&l, line);
    free(copy);
    /* strtok_r drops blank lines: a command block ends at a line that is
     * neither a command nor its indented summary. */
    for (size_t i = 0; i < l.n; i++) {
        const char *s = l.v[i];

        if (!strcmp(s, "commands:")) {
            in_cmds = hs->has_commands = true;
            continue;
        }
        if (!in_cmds) {
            option_tokens(s, &hs->opts);
            continue;
        }
        if (starts(s, "  ") && isalpha((unsigned char)s[2])) {
            char name[64];
            size_t n = 0;

            for (s += 2; *s && *s != ' ' && n + 1 < sizeof(name); s++)
                name[n++] = *s;
            name[n] = '\0';
            strv_add_unique(&hs->cmds, name);
            option_tokens(s, &hs->cmd_opts);
        } else if (!starts(s, "    ")) {
            in_cmds = false;
            option_tokens(s, &hs->opts);
        }
    }
    strv_free(&l);
}

/* ---------- programs and pages ---------- */

static void built_programs(strv *names)
{
    static const char *const dirs[] = { "bin", "sbin", "libexec" };

    for (unsigned d = 0; d < 3; d++) {
        char *dir = build_path(dirs[d]);
        DIR *dh = opendir(dir);
        struct dirent *de;

        while (dh && (de = readdir(dh))) {
            struct stat st;
            char *p;

            if (de->d_name[0] == '.')
                continue;
            assert_true(asprintf(&p, "%s/%s", dir, de->d_name) > 0);
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
                (st.st_mode & S_IXUSR))
                strv_add_unique(names, de->d_name);
            free(p);
        }
        if (dh)
            closedir(dh);
        free(dir);
    }
}

/* The path of a built program, or NULL. */
static char *program_path(const char *name)
{
    static const char *const dirs[] = { "bin", "sbin", "libexec" };

    for (unsigned d = 0; d < 3; d++) {
        char *p;

        assert_true(asprintf(&p, "%s/%s/%s", S.build, dirs[d], name) > 0);
        if (access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

/* Files of dir whose names end in suffix, as "dir/name", sorted. */
static void files_ending(const char *dir, const char *suffix, strv *out)
{
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);

    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        size_t nl = strlen(name), sl = strlen(suffix);

        if (name[0] != '.' && nl > sl && !strcmp(name + nl - sl, suffix)) {
            char *p;
            assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
            strv_add(out, p);
            free(p);
        }
        free(list[i]);
    }
    if (n >= 0)
        free(list);
}

/* Programs with a section 8 page: "docs/man/xl-reaper.8.md" -> name. */
static void paged_programs(strv *names)
{
    strv pages = { 0 };

    files_ending("docs/man", ".8.md", &pages);
    for (size_t i = 0; i < pages.n; i++) {
        const char *base = strrchr(pages.v[i], '/') + 1;
        char name[256];

        snprintf(name, sizeof(name), "%.*s",
                 (int)(strlen(base) - strlen(".8.md")), base);
        strv_add(names, name);
    }
    strv_free(&pages);
}

static void test_programs_have_pages(void **state)
{
    strv built = { 0 }, paged = { 0 };
    problems p = { 0 };

    (void)state;
    built_programs(&built);
    paged_programs(&paged);
    if (!built.n)
        problem(&p, "no program in %s/{bin,sbin,libexec}: is it built?",
                S.build);
    for (size_t i = 0; i < built.n; i++)
        if (!strv_has(&paged, built.v[i]))
            problem(&p, "%s is built but has no docs/man/%s.8.md", built.v[i],
                    built.v[i]);
    for (size_t i = 0; i < paged.n; i++) {
        const pending *pd = pending_find("program", paged.v[i], NULL);
        bool is_built = strv_has(&built, paged.v[i]);

        if (pd && is_built)
            pending_satisfied(pd);
        else if (pd)
            pending_missing(pd, paged.v[i]);
        else if (!is_built)
            problem(&p,
                    "docs/man/%s.8.md documents a program the build "
                    "does not make (nor does " PENDING " list it)",
                    paged.v[i]);
    }
    strv_free(&built);
    strv_free(&paged);
    problems_check(&p);
}

/* want (what --help lists) and have (what the page documents) of one
 * kind: opts "option", cmds "command". */
static void compare_set(problems *p, const char *prog, const char *kind,
                        const char *where, const strv *help, const strv *page)
{
    for (size_t i = 0; i < help->n; i++)
        if (!strv_has(page, help->v[i]))
            problem(p,
                    "%s --help lists the %s %s; docs/man/%s.8.md does "
                    "not document it in %s",
                    prog, kind, help->v[i], prog, where);
    for (size_t i = 0; i < page->n; i++) {
        const char *o = page->v[i];
        const pending *pd = pending_find(kind, prog, o);

        if (strv_has(help, o)) {
            if (pd)
                pending_satisfied(pd);
        } else if (pd) {
            pending_missing(pd, o);
        } else {
            problem(p,
                    "docs/man/%s.8.md documents the %s %s in %s, which "
                    "%s --help does not list there",
                    prog, kind, o, where, prog);
        }
    }
}

static void compare_surfaces(problems *p, const char *prog,
                             const page_surface *help,
                             const page_surface *page)
{
    compare_set(p, prog, "option", "OPTIONS", &help->opts, &page->opts);
    compare_set(p, prog, "command", "COMMANDS", &help->cmds, &page->cmds);
    compare_set(p, prog, "option", "COMMANDS", &help->cmd_opts,
                &page->cmd_opts);
}

static void test_help_matches_pages(void **state)
{
    strv paged = { 0 };
    problems p = { 0 };
    unsigned compared = 0;

    (void)state;
    paged_programs(&paged);
    for (size_t i = 0; i < paged.n; i++) {
        const char *prog = paged.v[i];
        char *path = program_path(prog), *page_file, *out = NULL;
        page_surface hs, ps;
        strv l = { 0 };
        int status;

        if (!path)
            continue; /* test_programs_have_pages says why */
        assert_true(asprintf(&page_file, "docs/man/%s.8.md", prog) > 0);
        assert_true(read_lines(page_file, &l));
        page_read_surface(&l, &ps);
        status = run((char *[]){ path, "--help", NULL }, NULL, &out, NULL);
        if (exited_0(status)) {
            help_read_surface(out, &hs);
            if (!hs.opts.n)
                problem(&p, "%s --help lists no option at all", prog);
            compare_surfaces(&p, prog, &hs, &ps);
            page_surface_free(&hs);
            compared++;
        } else if (ps.has_options || ps.has_commands) {
            problem(&p,
                    "%s --help does not exit 0 (status %#x), yet %s "
                    "has an OPTIONS or COMMANDS section: document "
                    "options the program shows, or give it --help",
                    prog, status, page_file);
        }
        page_surface_free(&ps);
        strv_free(&l);
        free(page_file);
        free(out);
        free(path);
    }
    if (!compared)
        problem(&p, "no built program's --help was compared with its page");
    strv_free(&paged);
    problems_check(&p);
}

/* ---------- config keys ---------- */

typedef struct {
    char name[64];
    char *def;    /* the default's text, normalised */
    bool literal; /* given as `value` */
    bool has_type, has_range, has_default;
    size_t line;
} key_doc;

typedef struct {
    key_doc k[128];
    unsigned n;
} key_docs;

static void key_docs_free(key_docs *d)
{
    for (unsigned i = 0; i < d->n; i++)
        free(d->k[i].def);
    d->n = 0;
}

static key_doc *key_docs_find(key_docs *d, const char *name)
{
    for (unsigned i = 0; i < d->n; i++)
        if (!strcmp(d->k[i].name, name))
            return &d->k[i];
    return NULL;
}

/* "`"x"`. rest" -> x (literal); "the uid of ..." -> the sentence. */
static char *normalise_default(const char *s, bool *literal_r)
{
    const char *end;
    char *v;
    size_t n;

    s = skip_space(s);
    if (*s == '`') {
        s++;
        end = strchr(s, '`');
        if (!end)
            end = s + strlen(s);
        *literal_r = true;
    } else {
        end = strstr(s, ". ");
        if (!end)
            end = s + strlen(s);
        *literal_r = false;
    }
    n = (size_t)(end - s);
    while (n && (s[n - 1] == '.' || s[n - 1] == ' '))
        n--;
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s++;
        n -= 2;
    }
    v = strndup(s, n);
    assert_non_null(v);
    return v;
}

/* The KEYS of xl-reaper.conf(5): each term, and its definition's
 * "Type:", "Range:" and "Default:". */
static void read_conf_keys(key_docs *d, problems *p)
{
    strv l = { 0 };
    size_t from, to;

    memset(d, 0, sizeof(*d));
    if (!read_lines(CONF_PAGE, &l)) {
        problem(p, "%s: %s", CONF_PAGE, strerror(errno));
        return;
    }
    if (!section(&l, "KEYS", &from, &to)) {
        problem(p, "%s has no KEYS section", CONF_PAGE);
        strv_free(&l);
        return;
    }
    for (size_t i = from; i < to; i++) {
        char *def = NULL, *t;
        size_t len = 0, j;
        key_doc k = { .line = i + 1 };

        if (!is_term(&l, i, to))
            continue;
        if (d->n == sizeof(d->k) / sizeof(d->k[0]))
            break;
        if (!term_name(l.v[i], k.name, sizeof(k.name))) {
            problem(p, "%s:%zu: a key must start with **name**", CONF_PAGE,
                    i + 1);
            continue;
        }
        if (key_docs_find(d, k.name)) {
            problem(p, "%s:%zu: %s is documented twice", CONF_PAGE, i + 1,
                    k.name);
            continue;
        }
        /* The definition, as one line, up to the next term or heading. */
        for (j = i + 1; j < to && !is_term(&l, j, to) && !starts(l.v[j], "#");
             j++) {
            const char *s = skip_space(l.v[j][0] == ':' ? l.v[j] + 1 : l.v[j]);
            char *grown = realloc(def, len + strlen(s) + 2);

            assert_non_null(grown);
            def = grown;
            len += (size_t)sprintf(def + len, "%s%s", len ? " " : "", s);
        }
        if (def) {
            k.has_type = strstr(def, "Type: ") != NULL;
            k.has_range = strstr(def, "Range: ") != NULL;
            t = strstr(def, "Default: ");
            if (t) {
                k.has_default = true;
                k.def = normalise_default(t + strlen("Default: "), &k.literal);
            }
        }
        free(def);
        d->k[d->n++] = k;
    }
    strv_free(&l);
}

/* The rows of the table "| Key | Type | Default | Range |". */
static void read_table_keys(key_docs *d, problems *p)
{
    strv l = { 0 };
    bool in_table = false;

    memset(d, 0, sizeof(*d));
    if (!read_lines(FEATURE_DOC, &l)) {
        problem(p, "%s: %s", FEATURE_DOC, strerror(errno));
        return;
    }
    for (size_t i = 0; i < l.n; i++) {
        char *row, *save = NULL, *cells[4];
        unsigned nc = 0;
        key_doc *k;

        if (starts(l.v[i], "| Key | Type | Default | Range |")) {
            in_table = true;
            continue;
        }
        if (!in_table)
            continue;
        if (l.v[i][0] != '|')
            break;
        if (starts(l.v[i], "|:") || starts(l.v[i], "|-"))
            continue;
        row = strdup(l.v[i]);
        assert_non_null(row);
        for (char *c = strtok_r(row, "|", &save); c && nc < 4;
             c = strtok_r(NULL, "|", &save))
            cells[nc++] = c;
        if (nc < 4 || d->n == sizeof(d->k) / sizeof(d->k[0])) {
            problem(p, "%s:%zu: a key row needs four cells", FEATURE_DOC,
                    i + 1);
            free(row);
            continue;
        }
        k = &d->k[d->n];
        memset(k, 0, sizeof(*k));
        k->line = i + 1;
        {
            bool lit;
            char *name = normalise_default(cells[0], &lit);
            snprintf(k->name, sizeof(k->name), "%s", name);
            free(name);
            if (!lit)
                problem(p, "%s:%zu: the key must be in backquotes",
                        FEATURE_DOC, i + 1);
        }
        k->has_type = k->has_range = k->has_default = true;
        k->def = normalise_default(cells[2], &k->literal);
        if (key_docs_find(d, k->name))
            problem(p, "%s:%zu: %s is in the table twice", FEATURE_DOC, i + 1,
                    k->name);
        else
            d->n++;
        free(row);
    }
    if (!in_table)
        problem(p, "%s has no table \"| Key | Type | Default | Range |\"",
                FEATURE_DOC);
    strv_free(&l);
}

static void parser_keys(strv *keys)
{
    const char *k;

    for (unsigned i = 0; (k = xlreaper_config_key_name(i)); i++)
        strv_add(keys, k);
}

static void compare_keys(problems *p, const strv *parser, key_docs *d,
                         const char *where)
{
    for (size_t i = 0; i < parser->n; i++)
        if (!key_docs_find(d, parser->v[i]))
            problem(p, "the parser accepts %s; %s does not document it",
                    parser->v[i], where);
    for (unsigned i = 0; i < d->n; i++) {
        const char *k = d->k[i].name;
        const pending *pd = pending_find("key", k, NULL);

        if (strv_has(parser, k)) {
            if (pd)
                pending_satisfied(pd);
        } else if (pd) {
            pending_missing(pd, k);
        } else {
            problem(p,
                    "%s:%zu documents %s, which the parser does not "
                    "accept",
                    where, d->k[i].line, k);
        }
    }
}

static void test_config_keys_documented(void **state)
{
    strv parser = { 0 };
    key_docs conf, table;
    problems p = { 0 };

    (void)state;
    parser_keys(&parser);
    if (!parser.n)
        problem(&p, "xlreaper_config_key_name(0) is NULL: no keys at all?");
    read_conf_keys(&conf, &p);
    read_table_keys(&table, &p);
    compare_keys(&p, &parser, &conf, CONF_PAGE);
    compare_keys(&p, &parser, &table, FEATURE_DOC);
    for (unsigned i = 0; i < conf.n; i++) {
        key_doc *k = &conf.k[i];

        if (!k->has_type || !k->has_range || !k->has_default)
            problem(&p,
                    "%s:%zu: %s must say \"Type: \", \"Range: \" and "
                    "\"Default: \"",
                    CONF_PAGE, k->line, k->name);
    }
    key_docs_free(&conf);
    key_docs_free(&table);
    strv_free(&parser);
    problems_check(&p);
}

/* ---------- the audit's checks ---------- */

#define OSSTEST_DOC "docs/osstest.md"
#define REAPER_PAGE "docs/man/xl-reaper.8.md"

/* The check names of osstest.md's tables: "| `name` | ..." rows under
 * "## The checks", up to the next "## ". */
static void osstest_check_names(strv *names, problems *p)
{
    strv l = { 0 };
    bool in = false;

    if (!read_lines(OSSTEST_DOC, &l)) {
        problem(p, "%s: unreadable", OSSTEST_DOC);
        return;
    }
    for (size_t i = 0; i < l.n; i++) {
        const char *s = l.v[i], *e;
        char name[64];

        if (starts(s, "## "))
            in = !strcmp(s, "## The checks");
        if (!in || !starts(s, "| `"))
            continue;
        s += 3;
        e = strchr(s, '`');
        if (!e || (size_t)(e - s) >= sizeof(name))
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(e - s), s);
        strv_add_unique(names, name);
    }
    strv_free(&l);
}

/* The bold words of xl-reaper(8)'s audit paragraph that are check names
 * (lower case, digits, underscores), between its term and the next. */
static void page_check_names(strv *names, problems *p)
{
    char *text = slurp(REAPER_PAGE), *s, *end;

    if (!text) {
        problem(p, "%s: unreadable", REAPER_PAGE);
        return;
    }
    s = strstr(text, "\n**audit**");
    end = s ? strstr(s + 1, "\n    **--tap**") : NULL;
    if (!s || !end) {
        problem(p, "%s: no audit paragraph", REAPER_PAGE);
        free(text);
        return;
    }
    for (s = strstr(s + 11, "**"); s && s < end; s = strstr(s, "**")) {
        char *e = strstr(s + 2, "**");
        size_t n;
        bool word = true;

        if (!e || e > end)
            break;
        n = (size_t)(e - s - 2);
        for (size_t i = 0; i < n; i++)
            word &= islower((unsigned char)s[2 + i]) ||
                    isdigit((unsigned char)s[2 + i]) || s[2 + i] == '_';
        if (word && n && n < 64) {
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)n, s + 2);
            /* Command names in the paragraph are not checks. */
            if (strcmp(name, "spawn") && strcmp(name, "audit"))
                strv_add_unique(names, name);
        }
        s = e + 2;
    }
    free(text);
}

/* Every row of the audit's table of checks is in osstest.md's tables
 * and in xl-reaper(8), and neither names a check the table lacks. */
static void test_audit_checks_documented(void **state)
{
    unsigned n;
    const xlreaper__audit_check_def *rows = xlreaper__audit_checks(&n);
    strv table = { 0 }, doc = { 0 }, page = { 0 };
    problems p = { 0 };

    (void)state;
    for (unsigned i = 0; i < n; i++) {
        if (strv_has(&table, rows[i].name))
            problem(&p, "the audit's table has %s twice", rows[i].name);
        strv_add_unique(&table, rows[i].name);
        if (!rows[i].summary || !*rows[i].summary)
            problem(&p, "check %s has no summary", rows[i].name);
    }
    osstest_check_names(&doc, &p);
    page_check_names(&page, &p);
    for (size_t i = 0; i < table.n; i++) {
        if (!strv_has(&doc, table.v[i]))
            problem(&p, "%s: check %s is not in \"## The checks\"",
                    OSSTEST_DOC, table.v[i]);
        if (!strv_has(&page, table.v[i]))
            problem(&p, "%s: check **%s** is not in the audit paragraph",
                    REAPER_PAGE, table.v[i]);
    }
    for (size_t i = 0; i < doc.n; i++)
        if (!strv_has(&table, doc.v[i]))
            problem(&p, "%s documents a check %s the audit has not",
                    OSSTEST_DOC, doc.v[i]);
    for (size_t i = 0; i < page.n; i++)
        if (!strv_has(&table, page.v[i]))
            problem(&p, "%s documents a check **%s** the audit has not",
                    REAPER_PAGE, page.v[i]);
    strv_free(&table);
    strv_free(&doc);
    strv_free(&page);
    problems_check(&p);
}

/* ---------- defaults ---------- */

/* The value of "key": in a flat JSON object, unquoted; NULL if absent. */
static char *json_value(const char *json, const char *key)
{
    char pat[96];
    const char *s, *e;

    snprintf(pat, sizeof(pat), "\"%s\":", key);
    s = strstr(json, pat);
    if (!s)
        return NULL;
    s += strlen(pat);
    if (*s == '"') {
        s++;
        e = strchr(s, '"');
    } else {
        e = s + strcspn(s, ",}");
    }
    return e ? strndup(s, (size_t)(e - s)) : NULL;
}

static void test_documented_defaults(void **state)
{
    key_docs conf, table;
    problems p = { 0 };
    struct passwd *pw = getpwnam(XLREAPER_USER_RANGE_BASE);
    char text[128], *conf_file, *cli, *out = NULL, *err = NULL;
    unsigned compared = 0;
    int status;

    (void)state;
    read_conf_keys(&conf, &p);
    read_table_keys(&table, &p);
    for (unsigned i = 0; i < conf.n; i++) {
        key_doc *c = &conf.k[i], *t = key_docs_find(&table, c->name);

        if (!t || !c->def || !t->def)
            continue;
        if (c->literal != t->literal || (c->literal && strcmp(c->def, t->def)))
            problem(&p, "default of %s: %s:%zu says \"%s\", %s:%zu \"%s\"",
                    c->name, CONF_PAGE, c->line, c->def, FEATURE_DOC, t->line,
                    t->def);
    }

    /* What the build uses when the file sets only the range (the host's
     * own, if it has one: a disagreeing dm_uid_base is refused). */
    snprintf(text, sizeof(text), "dm_uid_base = %lu\n",
             pw ? (unsigned long)pw->pw_uid : (unsigned long)EX_BASE);
    conf_file = xlrt_write_file(S.tmp, "defaults.conf", text);
    cli = build_path("bin/xl-reaper");
    status =
        run((char *[]){ cli, "--config", conf_file, "--json", "check", NULL },
            NULL, &out, &err);
    /* check exits 1 when a DM could not start here (no QEMU at the
     * default qemu_path, ...), and still reports every setting. */
    if (!exited_0(status) &&
        !(WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
          strstr(out, "\"settings\":{"))) {
        problem(&p, "xl-reaper check --json: status %#x: %s", status, err);
    } else {
        for (unsigned i = 0; i < conf.n; i++) {
            key_doc *c = &conf.k[i];
            char *v;

            if (!c->literal || !strcmp(c->name, "dm_uid_base") ||
                !strcmp(c->name, "reaper_uid"))
                continue;
            v = json_value(out, c->name);
            if (!v)
                continue;
            compared++;
            if (strcmp(v, c->def)) {
                const pending *pd = pending_find("default", c->name, NULL);
                if (pd)
                    pending_missing(pd, c->name);
                else
                    problem(&p,
                            "default of %s: %s:%zu says \"%s\", the "
                            "build uses \"%s\"",
                            c->name, CONF_PAGE, c->line, c->def, v);
            } else {
                const pending *pd = pending_find("default", c->name, NULL);
                if (pd)
                    pending_satisfied(pd);
            }
            free(v);
        }
        if (!compared)
            problem(&p,
                    "xl-reaper check --json reported no documented "
                    "key: nothing compared (%s)",
                    out);
    }
    free(out);
    free(err);
    free(cli);
    free(conf_file);
    key_docs_free(&conf);
    key_docs_free(&table);
    problems_check(&p);
}

/* ---------- the shipped config file ---------- */

/* A line with its leading and trailing blanks removed, in buf. */
static const char *trimmed(const char *l, char *buf, size_t sz)
{
    size_t n;

    l = skip_space(l);
    n = strlen(l);
    while (n && (l[n - 1] == ' ' || l[n - 1] == '\t'))
        n--;
    snprintf(buf, sz, "%.*s", (int)n, l);
    return buf;
}

/*
 * The settings of config/xl-reaper.conf (its lines that are neither blank
 * nor comments) against the first indented block of the EXAMPLES of
 * xl-reaper.conf(5), which says what the file that `make install` puts in
 * /etc/xen sets: the same lines, in any order.
 */
static void test_shipped_config_described(void **state)
{
    strv page = { 0 }, file = { 0 }, shown = { 0 }, set = { 0 };
    problems p = { 0 };
    size_t from = 0, to = 0, i;
    char buf[512];

    (void)state;
    if (!read_lines(SHIPPED_CONF, &file))
        problem(&p, "%s: %s", SHIPPED_CONF, strerror(errno));
    if (!read_lines(CONF_PAGE, &page) ||
        !section(&page, "EXAMPLES", &from, &to))
        problem(&p, "%s has no EXAMPLES", CONF_PAGE);
    problems_check(&p);

    for (i = from; i < to && !starts(page.v[i], "    "); i++)
        ;
    for (; i < to && (starts(page.v[i], "    ") || blank(page.v[i])); i++)
        if (!blank(page.v[i]) && skip_space(page.v[i])[0] != '#')
            strv_add(&shown, trimmed(page.v[i], buf, sizeof(buf)));
    for (i = 0; i < file.n; i++)
        if (!blank(file.v[i]) && skip_space(file.v[i])[0] != '#')
            strv_add(&set, trimmed(file.v[i], buf, sizeof(buf)));
    if (!shown.n)
        problem(&p, "%s: no indented block in EXAMPLES", CONF_PAGE);
    for (i = 0; i < set.n; i++)
        if (!strv_has(&shown, set.v[i]))
            problem(&p,
                    "%s sets \"%s\"; the EXAMPLES of %s do not show "
                    "it among the settings of the shipped file",
                    SHIPPED_CONF, set.v[i], CONF_PAGE);
    for (i = 0; i < shown.n; i++)
        if (!strv_has(&set, shown.v[i]))
            problem(&p,
                    "the EXAMPLES of %s show the shipped file setting "
                    "\"%s\"; %s does not",
                    CONF_PAGE, shown.v[i], SHIPPED_CONF);
    strv_free(&page);
    strv_free(&file);
    strv_free(&shown);
    strv_free(&set);
    problems_check(&p);
}

/* ---------- rendering ---------- */

static void all_documents(strv *docs)
{
    files_ending("docs", ".pandoc", docs);
    files_ending("docs", ".md", docs);
    files_ending("docs/man", ".md", docs);
}

static void test_pages_render(void **state)
{
    char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                          "LC_ALL=C.UTF-8", "MANWIDTH=80", NULL };
    strv pages = { 0 };
    problems p = { 0 };

    (void)state;
    files_ending("docs/man", ".md", &pages);
    if (pages.n < 4)
        problem(&p, "only %zu man pages in docs/man", pages.n);
    for (size_t i = 0; i < pages.n; i++) {
        const char *src = pages.v[i], *base = strrchr(src, '/') + 1;
        char *out_file, *out = NULL, *err = NULL;
        int status;

        assert_true(asprintf(&out_file, "%s/%.*s", S.tmp,
                             (int)(strlen(base) - 3), base) > 0);
        status = run(
            (char *[]){ "docs/render", "man", (char *)src, out_file, NULL },
            env, NULL, &err);
        if (!exited_0(status) || *err) {
            problem(&p, "docs/render man %s: status %#x: %s", src, status,
                    err);
            goto next;
        }
        free(err);
        err = NULL;
        status = run((char *[]){ "man", "--warnings=w", "-l", out_file, NULL },
                     env, &out, &err);
        if (!exited_0(status) || *err)
            problem(&p, "man --warnings=w -l %s (from %s): status %#x: %s",
                    out_file, src, status, err);
        else if (!strstr(out, "NAME"))
            problem(&p, "man -l %s shows no NAME", out_file);
        free(out);
        free(err);
        out = err = NULL;
        status = run((char *[]){ "lexgrog", out_file, NULL }, env, &out, &err);
        if (!exited_0(status))
            problem(&p, "lexgrog %s (from %s): status %#x: %s%s", out_file,
                    src, status, out, err);
    next:
        free(out);
        free(err);
        free(out_file);
    }
    strv_free(&pages);
    problems_check(&p);
}

static void test_documents_convert(void **state)
{
    strv docs = { 0 };
    problems p = { 0 };

    (void)state;
    all_documents(&docs);
    if (!strv_has(&docs, FEATURE_DOC))
        problem(&p, "%s is missing", FEATURE_DOC);
    for (size_t i = 0; i < docs.n; i++) {
        char *out_file, *err = NULL;
        int status;

        assert_true(asprintf(&out_file, "%s/doc%zu.html", S.tmp, i) > 0);
        status =
            run((char *[]){ "docs/render", "html", docs.v[i], out_file, NULL },
                NULL, NULL, &err);
        if (!exited_0(status) || *err)
            problem(&p, "docs/render html %s: status %#x: %s", docs.v[i],
                    status, err);
        free(err);
        free(out_file);
    }
    strv_free(&docs);
    problems_check(&p);
}

/* ---------- the pending file itself ---------- */

static void test_pending_file_is_sane(void **state)
{
    problems p = { 0 };
    key_docs conf;

    (void)state;
    read_conf_keys(&conf, &p);
    for (unsigned i = 0; i < S.num_pend; i++) {
        const pending *pd = &S.pend[i];
        char *page;
        strv l = { 0 };
        page_surface ps;

        if (!strcmp(pd->kind, "key") || !strcmp(pd->kind, "default")) {
            if (pd->b[0] || !key_docs_find(&conf, pd->a))
                problem(&p, PENDING ":%u: %s %s: no such key in %s", pd->line,
                        pd->kind, pd->a, CONF_PAGE);
            continue;
        }
        if (strcmp(pd->kind, "program") && strcmp(pd->kind, "command") &&
            strcmp(pd->kind, "option")) {
            problem(&p, PENDING ":%u: unknown kind \"%s\"", pd->line,
                    pd->kind);
            continue;
        }
        assert_true(asprintf(&page, "docs/man/%s.8.md", pd->a) > 0);
        if (!read_lines(page, &l)) {
            problem(&p, PENDING ":%u: %s has no page %s", pd->line, pd->a,
                    page);
        } else if (!strcmp(pd->kind, "program")) {
            if (pd->b[0])
                problem(&p, PENDING ":%u: program takes one name", pd->line);
        } else {
            page_read_surface(&l, &ps);
            if (!strcmp(pd->kind, "command")
                    ? !strv_has(&ps.cmds, pd->b)
                    : !strv_has(&ps.opts, pd->b) &&
                          !strv_has(&ps.cmd_opts, pd->b))
                problem(&p, PENDING ":%u: %s does not document %s %s",
                        pd->line, page, pd->kind, pd->b);
            page_surface_free(&ps);
        }
        strv_free(&l);
        free(page);
    }
    key_docs_free(&conf);
    problems_check(&p);
}

/* ---------- the examples ---------- */

typedef struct {
    char *cmd;   /* continuation lines joined with '\n' */
    strv expect; /* the output lines shown */
    size_t line; /* of the "$ " in the document */
} example;

typedef struct {
    example *v;
    size_t n;
} examples;

static void examples_free(examples *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].cmd);
        strv_free(&e->v[i].expect);
    }
    free(e->v);
    memset(e, 0, sizeof(*e));
}

static bool is_session_fence(const char *l)
{
    return starts(l, "```") && strstr(l, "shell-session");
}

/* Every example of every {.shell-session} block of doc, in order. */
static void read_examples(const char *doc, examples *e)
{
    strv l = { 0 };
    bool in = false;
    example *cur = NULL;

    memset(e, 0, sizeof(*e));
    assert_true(read_lines(doc, &l));
    for (size_t i = 0; i < l.n; i++) {
        const char *s = l.v[i];

        if (!in) {
            in = is_session_fence(s);
            cur = NULL;
            continue;
        }
        if (is_fence(s)) {
            in = false;
            continue;
        }
        if (starts(s, "$ ")) {
            e->v = realloc(e->v, (e->n + 1) * sizeof(*e->v));
            assert_non_null(e->v);
            cur = &e->v[e->n++];
            memset(cur, 0, sizeof(*cur));
            cur->cmd = strdup(s + 2);
            assert_non_null(cur->cmd);
            cur->line = i + 1;
        } else if (cur && starts(s, "> ") && !cur->expect.n) {
            size_t n = strlen(cur->cmd);
            cur->cmd = realloc(cur->cmd, n + strlen(s) + 1);
            assert_non_null(cur->cmd);
            sprintf(cur->cmd + n, "\n%s", s + 2);
        } else if (cur) {
            strv_add(&cur->expect, s);
        }
    }
    strv_free(&l);
}

/* "..." in an expected line matches any text. */
static bool line_match(const char *pat, const char *text)
{
    const char *dots = strstr(pat, "...");
    size_t n;

    if (!dots)
        return !strcmp(pat, text);
    n = (size_t)(dots - pat);
    if (strncmp(pat, text, n))
        return false;
    for (const char *t = text + n;; t++) {
        if (line_match(dots + 3, t))
            return true;
        if (!*t)
            return false;
    }
}

/* A line "..." matches any number of lines. */
static bool lines_match(char **pat, size_t np, char **text, size_t nt)
{
    if (!np)
        return !nt;
    if (!strcmp(pat[0], "...")) {
        for (size_t k = 0; k <= nt; k++)
            if (lines_match(pat + 1, np - 1, text + k, nt - k))
                return true;
        return false;
    }
    return nt && line_match(pat[0], text[0]) &&
           lines_match(pat + 1, np - 1, text + 1, nt - 1);
}

/* Refuses a session that could touch anything but the suite's uids. */
static void lint_session(problems *p, const char *doc, const examples *e)
{
    for (size_t i = 0; i < e->n; i++) {
        const char *c = e->v[i].cmd, *b = c;

        while ((b = strstr(b, "dm_uid_base"))) {
            const char *eq = skip_space(b + strlen("dm_uid_base"));
            if (*eq == '=' && strtoul(skip_space(eq + 1), NULL, 10) != EX_BASE)
                problem(p, "%s:%zu: examples must use dm_uid_base = %u", doc,
                        e->v[i].line, EX_BASE);
            b++;
        }
        if (strstr(c, "xl-reaper ") && !strstr(c, "--config "))
            problem(p,
                    "%s:%zu: an example must give xl-reaper a --config "
                    "of its own",
                    doc, e->v[i].line);
    }
}

static xlreaper_ctx *example_ctx(const char *dir)
{
    char text[256];

    snprintf(text, sizeof(text),
             "dm_uid_base = %u\nlock_file = \"%s/lock\"\n"
             "reap_timeout_ms = 20000\n",
             EX_BASE, dir);
    return xlrt_ctx(dir, text);
}

/* The domids of the block that have tasks, reaped; what was found is
 * added to p (with what=NULL: reaped quietly, for leftovers). */
static void sweep_block(xlreaper_ctx *ctx, problems *p, const char *what)
{
    long pet = xlrt_kernel_count(EX_BASE);

    if (pet != 0 && p)
        problem(p, "%s: the pet uid %u has tasks (count %ld)", what, EX_BASE,
                pet);
    for (uint32_t d = 1; d <= EX_MAX_DOMID; d++) {
        long n = xlrt_kernel_count(EX_BASE + d);
        xlreaper_reap_result res;

        if (n == 0)
            continue;
        if (p && what)
            problem(p, "%s left %ld task(s) under uid %u (domid %u)", what, n,
                    EX_BASE + d, d);
        else
            print_message("note: leftover tasks under uid %u: reaping\n",
                          EX_BASE + d);
        xlreaper_reap_result_init(&res);
        xlreaper_reap(ctx, NULL, d, &res);
        xlreaper_reap_result_dispose(&res);
        n = xlrt_kernel_count(EX_BASE + d);
        if (n != 0 && p)
            problem(p,
                    "uid %u still has tasks (count %ld) after a reap: "
                    "kill them by hand",
                    EX_BASE + d, n);
    }
}

#define MARK "@@XLR-DOCS-"

static char *session_script(const examples *e)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);

    assert_non_null(f);
    fprintf(f, "exec 2>&1\nprintf '%%s\\n' '" MARK "0@@'\n");
    /* Between two examples $? is kept, for an example "echo $?". */
    for (size_t i = 0; i < e->n; i++)
        fprintf(f,
                "%s\n__xlr_rc=$?; printf '\\n%%s\\n' '" MARK "%zu@@'; "
                "(exit $__xlr_rc)\n",
                e->v[i].cmd, i + 1);
    fclose(f);
    return s;
}

/*
 * Runs the script on a terminal of its own, under the nursery (a child
 * subreaper that reaps orphans at once), in its own process group.
 * Returns what the terminal showed; *timed_out when the session did not
 * end in time (or what it started did not end EX_GRACE_S after the last
 * mark) and was killed.
 */
static char *run_session(const char *work, const char *script_file,
                         const char *last_mark, bool *timed_out)
{
    char path_env[4 * 4096 + 64], home_env[4096 + 8], cfg_env[4096 + 32];
    char *nursery = build_path("tests/progs/nursery");
    char *argv[] = { nursery,  "/bin/bash",         "--noprofile",
                     "--norc", (char *)script_file, NULL };
    char *envp[] = { path_env,    home_env,          cfg_env, "LC_ALL=C",
                     "TERM=dumb", "SHELL=/bin/bash", NULL };
    struct winsize ws = { .ws_row = 24, .ws_col = 80 };
    struct termios tio;
    char *buf = NULL;
    size_t len = 0;
    time_t deadline = time(NULL) + EX_DEADLINE_S;
    int master, slave, status;
    pid_t pid;

    assert_int_equal(access(nursery, X_OK), 0);
    snprintf(path_env, sizeof(path_env),
             "PATH=%s/bin:%s/libexec:%s:/usr/sbin:/usr/bin:/sbin:/bin",
             S.build, S.build, xlrt_progs_dir());
    snprintf(home_env, sizeof(home_env), "HOME=%s", work);
    /* A spawn wrapper that reads it must never fall back on /etc/xen. */
    snprintf(cfg_env, sizeof(cfg_env), "XL_REAPER_CONFIG=%s/none.conf", work);

    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    assert_true(slave >= 0);
    assert_int_equal(tcgetattr(slave, &tio), 0);
    cfmakeraw(&tio); /* no "\r\n", no echo: the output as written */
    assert_int_equal(tcsetattr(slave, TCSANOW, &tio), 0);
    ioctl(slave, TIOCSWINSZ, &ws);

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        setpgid(0, 0);
        if (chdir(work) < 0)
            _exit(126);
        umask(022);
        dup2(null, 0);
        dup2(slave, 1);
        dup2(slave, 2);
        execve(nursery, argv, envp);
        _exit(127);
    }
    setpgid(pid, pid);
    close(slave);

    *timed_out = false;
    for (;;) {
        struct pollfd pfd = { .fd = master, .events = POLLIN };
        char chunk[4096], *grown;
        ssize_t n;
        int r;

        if (time(NULL) >= deadline) {
            *timed_out = true;
            break;
        }
        r = poll(&pfd, 1, 1000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        n = read(master, chunk, sizeof(chunk));
        if (n <= 0) /* EIO: every writer is gone */
            break;
        grown = realloc(buf, len + (size_t)n + 1);
        assert_non_null(grown);
        buf = grown;
        memcpy(buf + len, chunk, (size_t)n);
        len += (size_t)n;
        buf[len] = '\0';
        /* The script is done; a task it left (a racer that was not
         * killed) keeps the terminal open: do not wait for it long. */
        if (strstr(buf, last_mark) && deadline > time(NULL) + EX_GRACE_S)
            deadline = time(NULL) + EX_GRACE_S;
    }
    if (*timed_out)
        kill(-pid, SIGKILL); /* our own group: nursery, bash and theirs */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(master);
    free(nursery);
    if (!buf)
        buf = calloc(1, 1);
    assert_non_null(buf);
    buf[len] = '\0';
    return buf;
}

/* Compares what each example printed with what it shows. */
static void check_outputs(problems *p, const char *doc, const examples *e,
                          const char *out)
{
    char mark[64];
    const char *at;

    snprintf(mark, sizeof(mark), MARK "0@@\n");
    at = strstr(out, mark);
    if (!at) {
        problem(p, "%s: the session printed nothing we expected:\n%s", doc,
                out);
        return;
    }
    at += strlen(mark);
    for (size_t i = 0; i < e->n; i++) {
        const example *x = &e->v[i];
        const char *end;
        strv got = { 0 };
        char *text, *nl;
        size_t n;

        snprintf(mark, sizeof(mark), "\n" MARK "%zu@@\n", i + 1);
        end = strstr(at, mark);
        if (!end) {
            problem(p, "%s:%zu: the session ended in `%s`; it printed:\n%s",
                    doc, x->line, x->cmd, at);
            return;
        }
        n = (size_t)(end - at);
        text = strndup(at, n);
        assert_non_null(text);
        for (char *l = text; l && *l; l = nl) {
            nl = strchr(l, '\n');
            if (nl)
                *nl++ = '\0';
            strv_add(&got, l);
        }
        if (!lines_match(x->expect.v, x->expect.n, got.v, got.n)) {
            char *exp = NULL, *act = NULL;
            size_t el = 0, al = 0;
            FILE *fe = open_memstream(&exp, &el),
                 *fa = open_memstream(&act, &al);

            for (size_t k = 0; k < x->expect.n; k++)
                fprintf(fe, "      | %s\n", x->expect.v[k]);
            for (size_t k = 0; k < got.n; k++)
                fprintf(fa, "      | %s\n", got.v[k]);
            fclose(fe);
            fclose(fa);
            problem(p, "%s:%zu: `%s`\n    shows:\n%s    printed:\n%s", doc,
                    x->line, x->cmd, exp, act);
            free(exp);
            free(act);
        }
        strv_free(&got);
        free(text);
        at = end + strlen(mark);
    }
}

/*
 * The examples.  A fenced block whose info string has the class
 * shell-session (```{.shell-session}) is run; no other block is.  In it
 * a line "$ command" is a command, lines "> ..." right after it continue
 * it (a here-document, say), and the lines up to the next "$ " are its
 * output, standard output and error as a terminal shows them.  In the
 * output, "..." matches any text within a line, and a line "..." any
 * number of lines.  All the examples of one document run in order in
 * one bash, in a fresh directory, as root, with the build's bin, libexec
 * and tests/progs first on PATH, under a subreaper, on a terminal.  They
 * may use only dm_uid_base = 8000000 and domids up to 63, must give
 * xl-reaper a --config of their own, and must leave the uids empty.
 */
static void test_shell_examples(void **state)
{
    strv docs = { 0 };
    problems p = { 0 };
    size_t total = 0, in_feature_doc = 0;
    xlreaper_ctx *ctx;
    char *aux = xlrt_tmpdir();
    int lock;

    (void)state;
    ctx = example_ctx(aux);
    /* Two runs of this suite at once would share the uids. */
    lock = open(EX_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    assert_true(lock >= 0);
    assert_int_equal(flock(lock, LOCK_EX), 0);
    sweep_block(ctx, NULL, NULL);

    all_documents(&docs);
    for (size_t i = 0; i < docs.n; i++) {
        examples e;
        problems lint = { 0 };
        char *work, *script, *script_file, *out, last_mark[64];
        bool timed_out;

        read_examples(docs.v[i], &e);
        if (!e.n) {
            examples_free(&e);
            continue;
        }
        total += e.n;
        if (!strcmp(docs.v[i], FEATURE_DOC))
            in_feature_doc = e.n;
        lint_session(&lint, docs.v[i], &e);
        if (lint.num) {
            problem(&p, "%s: not run:\n%s", docs.v[i], lint.text);
            free(lint.text);
            examples_free(&e);
            continue;
        }
        work = xlrt_tmpdir();
        chmod(work, 0755);
        script = session_script(&e);
        script_file = xlrt_write_file(aux, "session.sh", script);
        snprintf(last_mark, sizeof(last_mark), "\n" MARK "%zu@@\n", e.n);
        out = run_session(work, script_file, last_mark, &timed_out);
        if (timed_out)
            problem(&p,
                    "%s: the examples, or what they started, did not "
                    "end in time (killed)",
                    docs.v[i]);
        check_outputs(&p, docs.v[i], &e, out);
        sweep_block(ctx, &p, docs.v[i]);
        free(out);
        free(script);
        free(script_file);
        xlrt_tmpdir_remove(work);
        examples_free(&e);
    }
    if (!in_feature_doc)
        problem(&p, "%s has no {.shell-session} example", FEATURE_DOC);
    print_message("note: %zu examples run\n", total);
    flock(lock, LOCK_UN);
    close(lock);
    xlreaper_ctx_free(ctx);
    xlrt_tmpdir_remove(aux);
    strv_free(&docs);
    problems_check(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_programs_have_pages),
        cmocka_unit_test(test_help_matches_pages),
        cmocka_unit_test(test_config_keys_documented),
        cmocka_unit_test(test_audit_checks_documented),
        cmocka_unit_test(test_documented_defaults),
        cmocka_unit_test(test_pending_file_is_sane),
        cmocka_unit_test(test_shipped_config_described),
        cmocka_unit_test(test_pages_render),
        cmocka_unit_test(test_documents_convert),
        cmocka_unit_test(test_shell_examples),
    };

    return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
