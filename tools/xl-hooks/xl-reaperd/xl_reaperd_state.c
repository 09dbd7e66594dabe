/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xl_reaperd_state.c - what the daemon keeps on disk besides its
 * events: the run directory's pid lock, and the intent journal.
 *
 * One daemon.  Two daemons on one host would both reap every death and
 * write every event twice, and take turns at the metrics file.  The
 * first takes a POSIX write lock on <run dir>/xl-reaperd.pid and keeps
 * it while it lives (the kernel drops it when the process dies, however
 * it dies); a second finds it held and refuses to start, naming the
 * holder's pid as the kernel reports it (F_GETLK).
 *
 * Exactly once.  Before a sweep's reap the daemon appends to
 * <state dir>/intents a record "B id domid trigger cand" and makes it
 * durable (fdatasync; the directory is fsync'd when the journal is
 * created or replaced).  A death's reap has its record already: "A id
 * domid", written and made durable when the domain was learnt alive
 * (so that no fdatasync, a few ms and at times tens on a busy disk,
 * stands between a death and its kill).  Once the reap's event is
 * written and durable the daemon appends "E id".  The event carries the id ("intent":id).  At start,
 * every B without its E is an unfinished reap: if the events file
 * already has a line with its id (the crash came between the event and
 * the E), it is done; otherwise the domid is reaped again, as the
 * record says, and its event written, marked "recovered".  An A without
 * its E is a domain the earlier run knew alive: if the first list says
 * it is dead, it died while no daemon (or a killed one) watched, and
 * its death's reap is done and reported, "recovered"; if alive, the
 * record stays its own.  So a
 * SIGKILL anywhere from the record to the E gives one event, not none
 * and not two.  A record that could not be written (a full disk) does
 * not stop the reap: the kill is the guarantee, the event its account.
 * The journal is rewritten (by a rename) at start with the open records
 * only, and so again whenever it has grown past 1 MiB and no event
 * waits in the queue (the open records are then the domains').
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xl_reaperd_log.h"
#include "xl_reaperd_state.h"

#define PID_FILE "xl-reaperd.pid"
#define JOURNAL "intents"
#define JOURNAL_NEW "intents.new"
#define JOURNAL_MAX_READ (16u << 20)
#define JOURNAL_COMPACT (1u << 20)
/* How far back in the events file an intent's line is looked for. */
#define INTENT_LOOKBACK (4u << 20)

/* ---------- one daemon ---------- */

static int make_dir(const char *path, mode_t mode)
{
    struct stat st;

    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return -1;
    if (lstat(path, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
        errno = EPERM; /* not a directory of root's that only root
                        * may write: not ours to trust */
        return -1;
    }
    return 0;
}

int xlrd_run_lock(xlrd_state *st)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    char path[PATH_MAX], pid[32];
    int fd, n;

    if (make_dir(st->run_dir, 0755) < 0) {
        XLRD_LOGE(ERROR, "run directory %s", st->run_dir);
        return XLRD_EXIT_USAGE;
    }
    snprintf(path, sizeof(path), "%s/" PID_FILE, st->run_dir);
    fd =
        open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
    if (fd < 0) {
        XLRD_LOGE(ERROR, "opening %s", path);
        return XLRD_EXIT_FAIL;
    }
    if (fcntl(fd, F_SETLK, &fl) < 0) {
        int e = errno;

        if (e == EAGAIN || e == EACCES) {
            struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

            if (fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK)
                XLRD_LOG(ERROR,
                         "another xl-reaperd (pid %ld) runs on the run "
                         "directory %s (it holds %s); not starting a "
                         "second one",
                         (long)q.l_pid, st->run_dir, path);
            else
                XLRD_LOG(ERROR,
                         "another xl-reaperd runs on the run directory %s "
                         "(it holds %s); not starting a second one",
                         st->run_dir, path);
        } else {
            errno = e;
            XLRD_LOGE(ERROR, "locking %s", path);
        }
        close(fd);
        return e == EAGAIN || e == EACCES ? XLRD_EXIT_USAGE : XLRD_EXIT_FAIL;
    }
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        XLRD_LOGE(WARN, "writing %s", path); /* the lock is what counts */
    st->run_fd = fd;
    return 0;
}

/* ---------- intents ---------- */

static int fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

    if (fd < 0)
        return -1;
    r = fsync(fd);
    close(fd);
    return r;
}

/* Whether the events file has a line of intent id (in its last
 * megabytes: an unfinished record's line is at its end). */
static bool events_have(const char *events_path, uint64_t id)
{
    char needle[48], *buf;
    struct stat st;
    off_t from;
    ssize_t n;
    bool found;
    int fd;

    if (!events_path)
        return false;
    fd = open(events_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    if (fstat(fd, &st) < 0 || !(buf = malloc(INTENT_LOOKBACK + 1))) {
        close(fd);
        return false;
    }
    from = st.st_size > (off_t)INTENT_LOOKBACK
               ? st.st_size - (off_t)INTENT_LOOKBACK
               : 0;
    n = pread(fd, buf, INTENT_LOOKBACK, from);
    close(fd);
    snprintf(needle, sizeof(needle), "\"intent\":%llu,",
             (unsigned long long)id);
    found = n > 0 && memmem(buf, (size_t)n, needle, strlen(needle));
    free(buf);
    return found;
}

typedef struct {
    uint64_t id;
    uint32_t domid;
    unsigned trig, cand;
    bool open;
} record;

/* The records of text (len bytes); a last line without its newline was
 * never made durable: its reap never started. */
static record *parse(char *text, size_t len, unsigned *num_r)
{
    record *r = NULL;
    unsigned num = 0, cap = 0;
    char *p = text, *end = text + len;

    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        unsigned long long id;
        unsigned domid, trig, cand = 0;
        bool alive = false;

        if (!nl)
            break;
        *nl = '\0';
        if (sscanf(p, "A %llu %u", &id, &domid) == 2) {
            alive = true;
            trig = XLRD_TRIGGERS; /* none: a birth */
        }
        if ((alive ||
             (sscanf(p, "B %llu %u %u %u", &id, &domid, &trig, &cand) == 4 &&
              trig < XLRD_TRIGGERS)) &&
            domid >= 1 && domid <= xlreaper_max_domid()) {
            if (num == cap) {
                record *nr;
                cap = cap ? cap * 2 : 16;
                nr = realloc(r, cap * sizeof(*r));
                if (!nr)
                    break;
                r = nr;
            }
            r[num++] = (record){ .id = id,
                                 .domid = domid,
                                 .trig = trig,
                                 .cand = cand,
                                 .open = true };
        } else if (sscanf(p, "E %llu", &id) == 1) {
            for (unsigned i = 0; i < num; i++)
                if (r[i].id == id)
                    r[i].open = false;
        } else {
            XLRD_LOG(WARN, "intent journal: ignoring the line \"%.60s\"", p);
        }
        p = nl + 1;
    }
    *num_r = num;
    return r;
}

static char *read_all(int fd, size_t *len_r)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;

    for (;;) {
        ssize_t n;

        if (len == cap) {
            char *nb;
            if (cap >= JOURNAL_MAX_READ)
                break;
            cap = cap ? cap * 2 : 65536;
            nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (!buf)
        buf = calloc(1, 1);
    *len_r = len;
    return buf;
}

/* The journal replaced by one that holds the open records only. */
static int rewrite(const xlrd_state *st, const record *r, unsigned num)
{
    char path[PATH_MAX], tmp[PATH_MAX], line[96];
    int fd, rc = -1;

    snprintf(path, sizeof(path), "%s/" JOURNAL, st->state_dir);
    snprintf(tmp, sizeof(tmp), "%s/" JOURNAL_NEW, st->state_dir);
    fd =
        open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    for (unsigned i = 0; i < num; i++) {
        int n;

        if (!r[i].open)
            continue;
        if (r[i].trig == XLRD_TRIGGERS)
            n = snprintf(line, sizeof(line), "A %" PRIu64 " %u\n", r[i].id,
                         r[i].domid);
        else
            n = snprintf(line, sizeof(line), "B %" PRIu64 " %u %u %u\n",
                         r[i].id, r[i].domid, r[i].trig, r[i].cand);
        if (xlrd_write_line(fd, line, (size_t)n, false))
            goto out;
    }
    if (fdatasync(fd) < 0 || rename(tmp, path) < 0 ||
        fsync_dir(st->state_dir) < 0)
        goto out;
    rc = 0;
out:
    close(fd);
    if (rc)
        unlink(tmp);
    return rc;
}

int xlrd_intents_open(xlrd_state *st, const char *events_path)
{
    char path[PATH_MAX], *text;
    record *r = NULL;
    unsigned num = 0, opened = 0;
    size_t len = 0;
    int fd;

    if (make_dir(st->state_dir, 0700) < 0) {
        XLRD_LOGE(ERROR, "state directory %s", st->state_dir);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/" JOURNAL, st->state_dir);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        text = read_all(fd, &len);
        close(fd);
        if (!text) {
            XLRD_LOGE(ERROR, "reading %s", path);
            return -1;
        }
        r = parse(text, len, &num);
        free(text);
    } else if (errno != ENOENT) {
        XLRD_LOGE(ERROR, "opening %s", path);
        return -1;
    }
    for (unsigned i = 0; i < num; i++) {
        xlrd_intent *dom = &st->rec[r[i].domid];

        if (r[i].id > st->last_intent)
            st->last_intent = r[i].id;
        if (!r[i].open)
            continue;
        if (events_have(events_path, r[i].id)) {
            /* Killed after its event, before its end. */
            r[i].open = false;
            continue;
        }
        if (dom->id) {
            /* Two of one domid: the later one stands for both. */
            for (unsigned j = 0; j < i; j++)
                if (r[j].id == dom->id)
                    r[j].open = false;
        } else {
            opened++;
        }
        dom->id = r[i].id;
        dom->recovered = true;
        if (r[i].trig == XLRD_TRIGGERS) {
            /* A birth: the first list says whether it died meanwhile. */
            dom->adopt = true;
            dom->trigger = XLRD_TRIGGER_RELEASE;
            dom->cand = 0;
            continue;
        }
        dom->adopt = false;
        dom->redo = true;
        dom->trigger = (uint8_t)r[i].trig;
        dom->cand = (uint8_t)r[i].cand;
        XLRD_LOG(NOTICE,
                 "domid %u: a reap of an earlier run did not finish (intent "
                 "%" PRIu64 "): reaping it again",
                 r[i].domid, r[i].id);
    }
    st->intents_open = opened;
    if (rewrite(st, r, num) < 0) {
        XLRD_LOGE(ERROR, "rewriting %s", path);
        free(r);
        return -1;
    }
    free(r);
    st->intent_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (st->intent_fd < 0) {
        XLRD_LOGE(ERROR, "opening %s", path);
        return -1;
    }
    return 0;
}

int xlrd_state_init(xlrd_state *st, const char *run_dir, const char *state_dir)
{
    memset(st, 0, sizeof(*st));
    st->run_dir = run_dir;
    st->state_dir = state_dir;
    st->run_fd = st->intent_fd = -1;
    st->rec = calloc(xlreaper_max_domid() + 1, sizeof(*st->rec));
    return st->rec ? 0 : -1;
}

void xlrd_state_dispose(xlrd_state *st)
{
    if (st->intent_fd >= 0)
        close(st->intent_fd);
    st->intent_fd = -1;
    if (st->run_fd >= 0)
        close(st->run_fd);
    st->run_fd = -1;
    free(st->rec);
    st->rec = NULL;
}

uint64_t xlrd_intent_begin(xlrd_state *st, uint32_t domid, xlrd_trigger trig,
                           unsigned cand)
{
    uint64_t id = xlrd_wall_us();
    char line[96];
    int n, e;

    if (st->intent_fd < 0)
        return 0;
    if (id <= st->last_intent)
        id = st->last_intent + 1;
    n = snprintf(line, sizeof(line), "B %" PRIu64 " %u %u %u\n", id, domid,
                 (unsigned)trig, cand);
    e = xlrd_write_line(st->intent_fd, line, (size_t)n, true);
    if (e) {
        errno = e;
        XLRD_LOGE(ERROR,
                  "domid %u: its intent record could not be written; "
                  "reaping all the same (a crash before its event would "
                  "lose the event, not the reap)",
                  domid);
        return 0;
    }
    st->last_intent = id;
    st->intents_open++;
    return id;
}

static uint64_t intent_alive(xlrd_state *st, uint32_t domid)
{
    uint64_t id = xlrd_wall_us();
    char line[64];
    int n, e;

    if (st->intent_fd < 0)
        return 0;
    if (id <= st->last_intent)
        id = st->last_intent + 1;
    n = snprintf(line, sizeof(line), "A %" PRIu64 " %u\n", id, domid);
    e = xlrd_write_line(st->intent_fd, line, (size_t)n, true);
    if (e) {
        errno = e;
        XLRD_LOGE(ERROR,
                  "domid %u: its intent record could not be written; its "
                  "death is reaped all the same (a crash would lose its "
                  "event, not its reap)",
                  domid);
        return 0;
    }
    st->last_intent = id;
    st->intents_open++;
    return id;
}

/* The journal rewritten from what is open: the domains' records. */
static void compact(xlrd_state *st)
{
    uint32_t max = xlreaper_max_domid();
    unsigned num = 0;
    record *r = calloc(max + 1, sizeof(*r));
    char path[PATH_MAX];
    int fd;

    if (!r)
        return;
    for (uint32_t i = 1; i <= max; i++) {
        const xlrd_intent *dom = &st->rec[i];
        bool b = dom->recovered && !dom->adopt;

        if (!dom->id)
            continue;
        r[num++] = (record){ .id = dom->id,
                             .domid = i,
                             .trig = b ? dom->trigger : XLRD_TRIGGERS,
                             .cand = b ? dom->cand : 0,
                             .open = true };
    }
    snprintf(path, sizeof(path), "%s/" JOURNAL, st->state_dir);
    if (rewrite(st, r, num) == 0) {
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
            close(st->intent_fd);
            st->intent_fd = fd;
            st->intents_open = num;
        }
    }
    free(r);
}

void xlrd_intent_end(xlrd_state *st, uint64_t id, bool may_compact)
{
    char line[48];
    struct stat sb;
    int n;

    if (!id || st->intent_fd < 0)
        return;
    n = snprintf(line, sizeof(line), "E %" PRIu64 "\n", id);
    /* Not synced: lost, the record is redone and finds its event. */
    (void)xlrd_write_line(st->intent_fd, line, (size_t)n, false);
    if (st->intents_open)
        st->intents_open--;
    if (may_compact && fstat(st->intent_fd, &sb) == 0 &&
        sb.st_size > (off_t)JOURNAL_COMPACT)
        compact(st);
}

void xlrd_intent_learn(xlrd_state *st, uint32_t domid)
{
    /* Its death's intent record, durable before it is said known. */
    if (!st->rec[domid].id)
        st->rec[domid].id = intent_alive(st, domid);
    st->rec[domid].recovered = false;
}

xlrd_intent xlrd_intent_take(xlrd_state *st, uint32_t domid)
{
    xlrd_intent r = st->rec[domid];

    st->rec[domid].id = 0;
    st->rec[domid].recovered = false;
    return r;
}

void xlrd_intent_adopted(xlrd_state *st, uint32_t domid)
{
    st->rec[domid].adopt = false;
}

bool xlrd_intent_take_redo(xlrd_state *st, uint32_t domid)
{
    bool redo = st->rec[domid].redo;

    st->rec[domid].redo = false;
    return redo;
}
