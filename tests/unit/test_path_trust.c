/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_path_trust.c - xlreaper_path_trust, the one rule for every file
 * and directory a root part trusts: each way to fail, made for real in
 * a directory of the test's own (owners, modes, POSIX ACLs set as the
 * system.posix_acl_access xattr, sticky and non-sticky directories,
 * symlinks), and the ACL parser on values the kernel would not store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

#define NOBODY 65534

/* ACL tags and perms, as the kernel's posix_acl_xattr.h. */
enum { U_OBJ = 1, USR = 2, G_OBJ = 4, GRP = 8, MASK = 0x10, OTH = 0x20 };
#define NO_ID 0xffffffffu

typedef struct {
    unsigned short tag, perm;
    unsigned id;
} acl_entry;

/* The xattr value of entries (ended by tag 0), little-endian; its length. */
static size_t acl_blob(const acl_entry *e, unsigned char *buf)
{
    size_t n = 4;

    buf[0] = 2;
    buf[1] = buf[2] = buf[3] = 0;
    for (; e->tag; e++, n += 8) {
        buf[n] = e->tag & 0xff;
        buf[n + 1] = e->tag >> 8;
        buf[n + 2] = e->perm & 0xff;
        buf[n + 3] = e->perm >> 8;
        for (int i = 0; i < 4; i++)
            buf[n + 4 + i] = (e->id >> (8 * i)) & 0xff;
    }
    return n;
}

static void set_acl(const char *path, const acl_entry *e)
{
    unsigned char buf[256];
    size_t n = acl_blob(e, buf);

    if (setxattr(path, "system.posix_acl_access", buf, n, 0) < 0) {
        if (errno == ENOTSUP || errno == EOPNOTSUPP)
            skip(); /* a file system without ACLs: nothing to test */
        fail_msg("setxattr %s: %s", path, strerror(errno));
    }
}

static const acl_entry acl_user_nobody_rw[] = {
    { U_OBJ, 6, NO_ID }, { USR, 6, NOBODY }, { G_OBJ, 4, NO_ID },
    { MASK, 6, NO_ID },  { OTH, 4, NO_ID },  { 0, 0, 0 },
};
static const acl_entry acl_user_nobody_masked[] = {
    { U_OBJ, 6, NO_ID }, { USR, 6, NOBODY }, { G_OBJ, 4, NO_ID },
    { MASK, 4, NO_ID },  { OTH, 4, NO_ID },  { 0, 0, 0 },
};
static const acl_entry acl_group_nobody_rw[] = {
    { U_OBJ, 6, NO_ID }, { G_OBJ, 4, NO_ID }, { GRP, 6, NOBODY },
    { MASK, 6, NO_ID },  { OTH, 4, NO_ID },   { 0, 0, 0 },
};
static const acl_entry acl_user_root_rw[] = {
    { U_OBJ, 6, NO_ID }, { USR, 6, 0 },     { G_OBJ, 4, NO_ID },
    { MASK, 6, NO_ID },  { OTH, 4, NO_ID }, { 0, 0, 0 },
};
/* The owning group writes under the mask; the mode shows only the mask. */
static const acl_entry acl_group_obj_rw[] = {
    { U_OBJ, 6, NO_ID }, { G_OBJ, 6, NO_ID }, { GRP, 4, 0 },
    { MASK, 6, NO_ID },  { OTH, 4, NO_ID },   { 0, 0, 0 },
};

typedef enum {
    MAKE_FILE,      /* d/f */
    MAKE_FIFO,      /* d/f, a fifo */
    MAKE_NONE,      /* d/f absent */
    MAKE_LINK_TO_W, /* d/f -> d/w/f, w a 0777 directory */
    MAKE_LINK,      /* d/f -> d/t, a good file */
    MAKE_LINK_DIR,  /* d/f -> d/td, a good directory; judged: d/f/x */
} make_kind;

typedef struct {
    const char *name;
    make_kind make;
    mode_t mode;          /* of d/f (or the link's target) */
    uid_t uid;            /* of d/f */
    gid_t gid;            /* of d/f */
    const acl_entry *acl; /* on d/f */
    mode_t dir_mode;      /* of d, the directory above */
    uid_t dir_uid;
    const acl_entry *dir_acl;
    uid_t link_uid; /* of the symlink, MAKE_LINK */
    unsigned flags;
    int want;        /* 0, 1 or the error */
    const char *why; /* in why, for an error */
} trust_case;

static const trust_case cases[] = {
    { "root's 0644 file", MAKE_FILE, 0644, 0, 0, NULL, 0755, 0, NULL, 0, 0, 0,
      NULL },
    { "group 0 may write", MAKE_FILE, 0664, 0, 0, NULL, 0755, 0, NULL, 0, 0, 0,
      NULL },
    { "owned by nobody", MAKE_FILE, 0644, NOBODY, 0, NULL, 0755, 0, NULL, 0, 0,
      XLREAPER_ERROR_PERM, "is owned by uid 65534, not root" },
    { "world-writable", MAKE_FILE, 0666, 0, 0, NULL, 0755, 0, NULL, 0, 0,
      XLREAPER_ERROR_PERM, "is writable by everyone (mode 0666)" },
    { "group-writable, group nobody", MAKE_FILE, 0664, 0, NOBODY, NULL, 0755,
      0, NULL, 0, 0, XLREAPER_ERROR_PERM,
      "is writable by group 65534 (mode 0664)" },
    { "ACL user:nobody:rw", MAKE_FILE, 0644, 0, 0, acl_user_nobody_rw, 0755, 0,
      NULL, 0, 0, XLREAPER_ERROR_PERM,
      "is writable by uid 65534 (ACL user entry)" },
    { "ACL user:nobody:rw, mask r", MAKE_FILE, 0644, 0, 0,
      acl_user_nobody_masked, 0755, 0, NULL, 0, 0, 0, NULL },
    { "ACL group:nobody:rw", MAKE_FILE, 0644, 0, 0, acl_group_nobody_rw, 0755,
      0, NULL, 0, 0, XLREAPER_ERROR_PERM,
      "is writable by group 65534 (ACL group entry)" },
    { "ACL user:root:rw", MAKE_FILE, 0644, 0, 0, acl_user_root_rw, 0755, 0,
      NULL, 0, 0, 0, NULL },
    { "ACL owning group nobody rw", MAKE_FILE, 0644, 0, NOBODY,
      acl_group_obj_rw, 0755, 0, NULL, 0, 0, XLREAPER_ERROR_PERM,
      "is writable by group 65534 (ACL owning group under the mask)" },
    { "directory 0777, not sticky", MAKE_FILE, 0644, 0, 0, NULL, 0777, 0, NULL,
      0, 0, XLREAPER_ERROR_PERM,
      "is writable by everyone (mode 0777, not sticky)" },
    { "directory 1777, sticky", MAKE_FILE, 0644, 0, 0, NULL, 01777, 0, NULL, 0,
      0, 0, NULL },
    { "directory owned by nobody", MAKE_FILE, 0644, 0, 0, NULL, 0755, NOBODY,
      NULL, 0, 0, XLREAPER_ERROR_PERM, "is owned by uid 65534, not root" },
    { "directory with ACL user:nobody:rwx", MAKE_FILE, 0644, 0, 0, NULL, 0755,
      0, acl_user_nobody_rw, 0, 0, XLREAPER_ERROR_PERM,
      "is writable by uid 65534 (ACL user entry)" },
    { "symlink into a 0777 directory", MAKE_LINK_TO_W, 0644, 0, 0, NULL, 0755,
      0, NULL, 0, 0, XLREAPER_ERROR_PERM,
      "/w is writable by everyone (mode 0777, not sticky)" },
    { "symlink owned by nobody", MAKE_LINK, 0644, 0, 0, NULL, 01777, 0, NULL,
      NOBODY, 0, XLREAPER_ERROR_PERM, "is owned by uid 65534, not root" },
    { "root's symlink in a sticky directory", MAKE_LINK, 0644, 0, 0, NULL,
      01777, 0, NULL, 0, 0, 0, NULL },
    { "not a regular file", MAKE_FIFO, 0600, 0, 0, NULL, 0755, 0, NULL, 0, 0,
      XLREAPER_ERROR_PERM, "is not a regular file" },
    { "a file where a directory is wanted", MAKE_FILE, 0644, 0, 0, NULL, 0755,
      0, NULL, 0, XLREAPER_TRUST_DIR, XLREAPER_ERROR_PERM,
      "is not a directory" },
    { "absent", MAKE_NONE, 0, 0, 0, NULL, 0755, 0, NULL, 0, 0, 1, NULL },
    { "absent, to be made in a good directory", MAKE_NONE, 0, 0, 0, NULL, 0700,
      0, NULL, 0, XLREAPER_TRUST_ABSENT_OK, 1, NULL },
    /* Anyone could make it first in a sticky directory. */
    { "absent, to be made in a sticky directory", MAKE_NONE, 0, 0, 0, NULL,
      01777, 0, NULL, 0, XLREAPER_TRUST_ABSENT_OK, XLREAPER_ERROR_PERM,
      "is writable by everyone (mode 1777)" },
    /* d/f/x, d/f a symlink to a good directory (as /var/run is to /run). */
    { "absent, to be made under a symlink to a directory", MAKE_LINK_DIR, 0, 0,
      0, NULL, 0755, 0, NULL, 0, XLREAPER_TRUST_ABSENT_OK, 1, NULL },
    { "absent, to be made in a directory of nobody's", MAKE_NONE, 0, 0, 0,
      NULL, 0755, NOBODY, NULL, 0, XLREAPER_TRUST_ABSENT_OK,
      XLREAPER_ERROR_PERM, "is owned by uid 65534, not root" },
};

static void run_case(const trust_case *c)
{
    char *top = xlrt_tmpdir(), *d, *f, *t, *w, *wf;
    char why[PATH_MAX + 256] = "";
    int rc;

    assert_true(asprintf(&d, "%s/d", top) > 0);
    assert_true(asprintf(&f, "%s/f", d) > 0);
    assert_true(asprintf(&t, "%s/t", d) > 0);
    assert_true(asprintf(&w, "%s/w", d) > 0);
    assert_true(asprintf(&wf, "%s/w/f", d) > 0);
    assert_int_equal(mkdir(d, 0700), 0);
    switch (c->make) {
    case MAKE_FILE: free(xlrt_write_file(d, "f", "x\n")); break;
    case MAKE_FIFO: assert_int_equal(mkfifo(f, 0600), 0); break;
    case MAKE_NONE: break;
    case MAKE_LINK_TO_W:
        assert_int_equal(mkdir(w, 0777), 0);
        assert_int_equal(chmod(w, 0777), 0);
        free(xlrt_write_file(w, "f", "x\n"));
        assert_int_equal(symlink(wf, f), 0);
        break;
    case MAKE_LINK:
        free(xlrt_write_file(d, "t", "x\n"));
        assert_int_equal(symlink(t, f), 0);
        assert_int_equal(lchown(f, c->link_uid, 0), 0);
        break;
    case MAKE_LINK_DIR:
        assert_int_equal(mkdir(t, 0755), 0);
        assert_int_equal(symlink(t, f), 0);
        break;
    }
    if (c->make == MAKE_FILE || c->make == MAKE_FIFO) {
        assert_int_equal(chown(f, c->uid, c->gid), 0);
        assert_int_equal(chmod(f, c->mode), 0);
        if (c->acl)
            set_acl(f, c->acl);
    }
    assert_int_equal(chown(d, c->dir_uid, 0), 0);
    assert_int_equal(chmod(d, c->dir_mode), 0);
    if (c->dir_acl)
        set_acl(d, c->dir_acl);

    if (c->make == MAKE_LINK_DIR) {
        char *x;

        assert_true(asprintf(&x, "%s/x", f) > 0);
        rc = xlreaper_path_trust(x, c->flags, NULL, why, sizeof(why));
        free(x);
    } else {
        rc = xlreaper_path_trust(f, c->flags, NULL, why, sizeof(why));
    }
    if (rc != c->want)
        fail_msg("%s: rc %d, want %d (%s)", c->name, rc, c->want, why);
    if (c->why && !strstr(why, c->why))
        fail_msg("%s: why \"%s\" lacks \"%s\"", c->name, why, c->why);

    xlrt_tmpdir_remove(top);
    free(d);
    free(f);
    free(t);
    free(w);
    free(wf);
}

static void test_each_way_to_fail(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

/* Values the kernel refuses to store, which a parser must still judge:
 * not trusted, never read past the end. */
static void test_acl_malformed(void **state)
{
    static const unsigned char bad_version[] = { 1, 0, 0, 0 };
    static const unsigned char short_entry[] = { 2, 0, 0, 0, 1, 0, 6, 0 };
    static const unsigned char bad_tag[] = { 2, 0, 0, 0, 0x40, 0,
                                             6, 0, 0, 0, 0,    0 };
    char why[160];

    (void)state;
    assert_int_equal(
        xlreaper__acl_others_write(bad_version, 4, 0, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "cannot be read"));
    assert_int_equal(
        xlreaper__acl_others_write(short_entry, 8, 0, why, sizeof(why)), -1);
    assert_int_equal(
        xlreaper__acl_others_write(bad_tag, 12, 0, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "unknown tag"));
    assert_int_equal(
        xlreaper__acl_others_write(bad_version, 2, 0, why, sizeof(why)), -1);
}

/* The mask applies to named entries only when it is there; a named
 * group 0 may write. */
static void test_acl_mask(void **state)
{
    static const acl_entry group_root_rw[] = {
        { U_OBJ, 6, NO_ID }, { G_OBJ, 4, NO_ID }, { GRP, 6, 0 },
        { MASK, 6, NO_ID },  { OTH, 4, NO_ID },   { 0, 0, 0 },
    };
    unsigned char buf[256];
    char why[160];
    size_t n;

    (void)state;
    n = acl_blob(acl_user_nobody_masked, buf);
    assert_int_equal(xlreaper__acl_others_write(buf, n, 0, why, sizeof(why)),
                     0);
    n = acl_blob(acl_user_nobody_rw, buf);
    assert_int_equal(xlreaper__acl_others_write(buf, n, 0, why, sizeof(why)),
                     1);
    n = acl_blob(group_root_rw, buf);
    assert_int_equal(xlreaper__acl_others_write(buf, n, 0, why, sizeof(why)),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_way_to_fail),
        cmocka_unit_test(test_acl_malformed),
        cmocka_unit_test(test_acl_mask),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
