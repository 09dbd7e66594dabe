/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_os.h - the operating systems the library builds for, and a
 * clear refusal everywhere else.
 *
 * The uid kill needs a killer whose ids are (real pet, effective dm,
 * saved not dm): then it may signal the DM's tasks and they may not
 * signal it back.  Only setresuid(2) can make that tuple; setreuid(),
 * all POSIX has, sets the saved uid to the new effective uid whenever
 * the real uid changes.  So where setresuid is missing no safe killer
 * exists, and a build that fell back on setreuid would be unsafe in
 * silence.  Upstream libxl picks its per-OS files at build time and, for
 * NetBSD, compiles a setresuid that only asserts.  Included first by
 * xlreaper_internal.h, so that the message comes before any other error.
 * tests/docs/test_os_guard.c checks each message.
 */
#ifndef XLREAPER_OS_H
#define XLREAPER_OS_H

#if defined(__NetBSD__)
#error libxl-reaper: NetBSD has no setresuid(2), without which the uid \
kill cannot be made safe (the device model could kill its killer): not \
supported, as upstream libxl does not support dm_restrict there; see \
docs/qemu-deprivilege.pandoc, Portability
#elif defined(__FreeBSD__)
#error libxl-reaper: not ported to FreeBSD: setresuid(2) is there, but \
the verification reads the /proc of Linux and the spawn uses prctl(2): a \
port needs sysctl(KERN_PROC_RUID) and procctl(2); see \
docs/qemu-deprivilege.pandoc, Portability
#elif !defined(__linux__)
#error libxl-reaper: only Linux is supported: the kill needs setresuid(2) \
and the verification the /proc of Linux; see \
docs/qemu-deprivilege.pandoc, Portability
#endif

#endif /* XLREAPER_OS_H */
