/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_raw.h - system calls that touch no libc state, for helpers
 * that share the caller's memory.
 *
 * A helper started with CLONE_VM (xlreaper_clone.c) runs on its own
 * stack but in the caller's address space, beside the caller's threads,
 * and with the calling thread's TLS: glibc's wrappers would write the
 * caller's errno under it.  So the code a helper runs makes its system
 * calls through these, which return -errno as the kernel does, and
 * writes nothing but its own stack.  The stubs are those of the
 * kernel's own nolibc (tools/include/nolibc/arch-*.h).  Elsewhere the
 * helpers are forked (XLREAPER__RAW_SYSCALLS 0) and syscall(2) is safe.
 */
#ifndef XLREAPER_RAW_H
#define XLREAPER_RAW_H

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define XLREAPER__RAW_SYSCALLS 1
static inline long xlreaper__raw6(long n, long a, long b, long c, long d,
                                  long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;

    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
                       "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
#define XLREAPER__RAW_SYSCALLS 1
static inline long xlreaper__raw6(long n, long a, long b, long c, long d,
                                  long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;

    __asm__ volatile("svc #0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory", "cc");
    return x0;
}
#else
#define XLREAPER__RAW_SYSCALLS 0
/* Only ever called in a forked helper, whose errno is its own. */
static inline long xlreaper__raw6(long n, long a, long b, long c, long d,
                                  long e, long f)
{
    long r = syscall(n, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#endif

#define xlreaper__raw(n, a, b, c)                                             \
    xlreaper__raw6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

#endif /* XLREAPER_RAW_H */
