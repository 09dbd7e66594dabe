/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_setid.c - a DM cannot make a set-uid or set-gid file, nor a
 * user namespace: the DM's seccomp filter.
 *
 * The way back into a reaped uid.  A DM runs as its uid, U, and gid, G.
 * If it can leave a file owned by U with S_ISUID (or with group G and
 * S_ISGID) somewhere another user can reach, then after the reap has
 * verified U empty anyone can exec that file and hold U again: signal
 * or ptrace the next DM of that domid, or keep U busy so the next
 * `xl create` is refused.  The kill and its verification stay exact;
 * the uid simply does not stay empty.  no_new_privs does not help: it
 * binds the DM and its descendants, not the outsider who runs the file.
 *
 * Measured (Linux 6.18, as an unprivileged U in a world-writable
 * directory): chmod(2) to 06755 works, and so do open(O_CREAT, 06755)
 * and mknod(S_IFREG | 06755): the kernel strips S_ISGID at creation
 * only when the creator is not in the file's group, and S_ISUID never.
 * mkdir(2) does strip both (vfs_mkdir), and a set-id directory is no
 * exec anyway.
 *
 * Why not a private mount namespace with every writable mount nosuid?
 * nosuid is a flag of a mount, not of a file: the bit S_ISUID lives in
 * the inode.  Remounting /tmp nosuid in the DM's own namespace changes
 * only how execs through the DM's view of /tmp behave; the host's
 * mount of the same file system, the one every other user goes
 * through, still honours the bit, so the outsider runs the file as
 * before.  To help, the DM would have to see no host file system it can
 * write at all, which is a chroot (runas mode has libxl's), not a
 * mount flag.
 *
 * So the DM may not make the bit, whatever it can write to: a seccomp
 * filter, installed between fork and execve right after no_new_privs
 * (which it needs, as an unprivileged task must) and inherited by
 * everything the DM starts, fails with EPERM every system call that
 * can set S_ISUID or S_ISGID on a file:
 *
 *   chmod, fchmod, fchmodat, fchmodat2    mode argument has 06000
 *   open, openat, creat                   mode argument has 06000
 *   mknod, mknodat                        mode argument has 06000
 *   openat2                               ENOSYS: its mode is in a
 *                                         struct seccomp cannot read
 *   io_uring_setup                        ENOSYS: an io_uring OPENAT
 *                                         request carries a mode the
 *                                         filter never sees
 *
 * glibc passes mode 0 to open and openat without O_CREAT or O_TMPFILE,
 * so only a raw call with junk in the register is refused for nothing.
 * Callers of openat2 and io_uring fall back to openat and to epoll
 * (QEMU's fdmon-io_uring does).  Every other way to a set-id file needs
 * a capability the DM lacks: chown (CAP_CHOWN), keeping the bit across
 * a write (the kernel clears it, file_remove_privs), a link to a file
 * of another owner (fs.protected_hardlinks).  The filter also refuses
 * every call of a foreign ABI (the 32-bit entry of x86-64, x32), whose
 * numbers it does not check.  mode is a umode_t: the kernel reads the
 * register's low 16 bits, and the filter looks at its low 32.
 *
 * No user namespace: the stuck-FUSE attack (docs/facts.md F12).  A DM
 * that is not chrooted (the kernel refuses a new user namespace to a
 * chrooted task, F16, so QEMU after libxl's -chroot cannot do this; a
 * DM spawned without a chroot can) may create a user namespace and a mount
 * namespace of its own, in which it is root, and mount FUSE there from
 * a world-openable /dev/fuse (udev makes it 0666).  One of its threads
 * serves the mount and reads a request; another thread waits for the
 * answer, which never comes.  After the reap's SIGKILL the server dies
 * but the waiter cannot: a FUSE request already read is waited out
 * uninterruptibly (request_wait_answer, D state, SIGKILL pending), and
 * the /dev/fuse descriptor that would abort the connection on its last
 * close sits in the dying process's own file table.  Nothing a kill can
 * do ends it; the uid stays occupied, and every later reap of it and
 * every spawn into it fail.  Only aborting the connection through
 * fusectl (/sys/fs/fuse/connections/N/abort) does: the reap does so
 * for the DM uid's connections (xlreaper_fuse.c), and this filter keeps
 * the DM from getting there at all:
 *
 *   clone, unshare                        EPERM when the flags (argument
 *                                         0) have CLONE_NEWUSER
 *   clone3                                ENOSYS: its flags are in a
 *                                         struct; glibc (pthread_create,
 *                                         posix_spawn, fork) then falls
 *                                         back to clone, whose flags the
 *                                         filter sees
 *   setns                                 EPERM when nstype has
 *                                         CLONE_NEWUSER, or is 0
 *
 * setns(fd, 0) joins whatever namespace fd names, and a filter cannot
 * see what an fd names: refusing 0 is the only way to refuse a user
 * namespace given as 0.  Nothing a DM runs passes 0 (QEMU calls no
 * setns at all); a caller that means a namespace of another type names
 * its type.  A pidfd names several at once through the same flags, so
 * the CLONE_NEWUSER bit covers it too.  Without a user namespace of its
 * own the DM has no capability to mount anything, FUSE included.
 *
 * The filter is installed in both uid_switch modes.  In runas mode QEMU
 * is still root when it execs; it chroots and drops to U itself, and
 * never sets a set-id bit.  A file a DM made before this filter existed
 * is what `xl-reaper audit` looks for (xlreaper_audit_setid.c).
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "xlreaper_spawn_internal.h"

#if defined(__x86_64__)
#define SETID_ARCH AUDIT_ARCH_X86_64
#define SETID_X32_BIT 0x40000000u /* __X32_SYSCALL_BIT */
#elif defined(__aarch64__)
#define SETID_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SETID_ARCH AUDIT_ARCH_I386
#elif defined(__arm__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SETID_ARCH AUDIT_ARCH_ARM
#endif

/* Older headers than the kernel: the numbers are the same on every
 * architecture with the generic table since 5.1 / 5.3 / 5.6 / 6.6. */
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

#ifdef SETID_ARCH

#define SETID_BITS (S_ISUID | S_ISGID)

/* The low 32 bits of argument n. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

/* The calls that take a mode, and which argument it is. */
static const struct {
    unsigned nr;
    unsigned arg;
} mode_calls[] = {
#ifdef __NR_chmod
    { __NR_chmod, 1 },
#endif
#ifdef __NR_creat
    { __NR_creat, 1 },
#endif
#ifdef __NR_mknod
    { __NR_mknod, 1 },
#endif
#ifdef __NR_open
    { __NR_open, 2 },
#endif
    { __NR_fchmod, 1 },  { __NR_fchmodat, 2 }, { __NR_fchmodat2, 2 },
    { __NR_mknodat, 2 }, { __NR_openat, 3 },
};

#define NUM_MODE_CALLS (sizeof(mode_calls) / sizeof(mode_calls[0]))
/* arch (3), nr, x32 (2), openat2, io_uring, clone3 (2 each), the mode
 * calls, clone, unshare, setns, allow, three mode checks of 2, the
 * CLONE_NEWUSER check (2), setns's (3), allow, EPERM. */
#define PROG_MAX (12 + NUM_MODE_CALLS + 3 + 1 + 6 + 2 + 3 + 2)
_Static_assert(PROG_MAX <= XLREAPER__SETID_FILTER_MAX,
               "xlreaper__setid_filter has room for the program");

#define STMT(c, k) ((struct sock_filter)BPF_STMT((c), (k)))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP((c), (k), (t), (f)))
#define LD(off) STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) STMT(BPF_RET | BPF_K, (v))
/* A jump from instruction at to instruction to. */
#define DIST(at, to) ((unsigned char)((to) - (at)-1))

static unsigned short setid_build(struct sock_filter *p)
{
    unsigned n = 0, calls, check[4], newuser, setns_chk, allow, eperm;

    p[n++] = LD(offsetof(struct seccomp_data, arch));
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SETID_ARCH, 1, 0);
    p[n++] = RET(SECCOMP_RET_ERRNO | ENOSYS);
    p[n++] = LD(offsetof(struct seccomp_data, nr));
#ifdef SETID_X32_BIT
    p[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, SETID_X32_BIT, 0, 1);
    p[n++] = RET(SECCOMP_RET_ERRNO | ENOSYS);
#endif
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1);
    p[n++] = RET(SECCOMP_RET_ERRNO | ENOSYS);
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1);
    p[n++] = RET(SECCOMP_RET_ERRNO | ENOSYS);
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
    p[n++] = RET(SECCOMP_RET_ERRNO | ENOSYS);
    calls = n;
    n += NUM_MODE_CALLS + 3; /* filled in below, once the checks are
                              * placed: the mode calls, clone, unshare
                              * and setns */
    p[n++] = RET(SECCOMP_RET_ALLOW);
    for (unsigned a = 1; a <= 3; a++) {
        check[a] = n;
        p[n++] = LD(ARG_LO(a));
        n++; /* its JSET */
    }
    /* clone and unshare: the flags are argument 0 on every architecture
     * above (the kernel reads their low 32 bits). */
    newuser = n;
    p[n++] = LD(ARG_LO(0));
    n++; /* its JSET */
    /* setns(fd, nstype): 0 takes whatever the fd names. */
    setns_chk = n;
    p[n++] = LD(ARG_LO(1));
    n += 2; /* JEQ 0, JSET */
    allow = n;
    p[n++] = RET(SECCOMP_RET_ALLOW);
    eperm = n;
    p[n++] = RET(SECCOMP_RET_ERRNO | EPERM);
    for (unsigned a = 1; a <= 3; a++) {
        unsigned at = check[a] + 1;
        p[at] = JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID_BITS, DIST(at, eperm),
                     DIST(at, allow));
    }
    p[newuser + 1] = JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER,
                          DIST(newuser + 1, eperm), DIST(newuser + 1, allow));
    p[setns_chk + 1] =
        JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, DIST(setns_chk + 1, eperm), 0);
    p[setns_chk + 2] =
        JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER,
             DIST(setns_chk + 2, eperm), DIST(setns_chk + 2, allow));
    for (unsigned i = 0; i < NUM_MODE_CALLS; i++) {
        unsigned at = calls + i;
        p[at] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, mode_calls[i].nr,
                     DIST(at, check[mode_calls[i].arg]), 0);
    }
    n = calls + NUM_MODE_CALLS; /* only to name the three below */
    p[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, DIST(n, newuser), 0);
    n++;
    p[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, DIST(n, newuser), 0);
    n++;
    p[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setns, DIST(n, setns_chk), 0);
    return (unsigned short)(eperm + 1);
}

int xlreaper__setid_filter_plan(xlreaper_ctx *ctx, uint32_t domid,
                                xlreaper__setid_filter *f)
{
    (void)ctx;
    (void)domid;
    f->len = setid_build(f->insn);
    return 0;
}

int xlreaper__setid_filter_install(const xlreaper__setid_filter *f)
{
    /* The kernel only reads the program. */
    struct sock_fprog prog = { .len = f->len,
                               .filter = (struct sock_filter *)f->insn };

    if (!f->len) {
        errno = EINVAL; /* not planned: never run without it */
        return -1;
    }
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#else /* !SETID_ARCH */

int xlreaper__setid_filter_plan(xlreaper_ctx *ctx, uint32_t domid,
                                xlreaper__setid_filter *f)
{
    f->len = 0;
    LOGD(ERROR, domid,
         "no set-id seccomp filter for this architecture: a device model "
         "could leave a set-uid file of its uid behind; refusing to "
         "start one (xlreaper_setid.c)");
    return XLREAPER_ERROR_INVAL;
}

int xlreaper__setid_filter_install(const xlreaper__setid_filter *f)
{
    (void)f;
    errno = ENOSYS;
    return -1;
}

#endif
