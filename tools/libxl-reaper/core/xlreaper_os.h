/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_os.h - the operating systems the library builds for, and a
 * clear refusal everywhere else.
 *
 * The uid kill needs a killer whose ids are (real pet, effective dm,
 * saved not dm) on a kernel that compares the sender's real and
 * effective uids with the receiver's real and saved uids: then it may
 * signal the DM's tasks and they may not signal it back.  Only
 * setresuid(2) can make that tuple; setreuid(), all POSIX has, sets the
 * saved uid to the new effective uid whenever the real uid changes, and
 * a build that fell back on it would be unsafe in silence.
 *
 * NetBSD has no setresuid, and would not be helped by one: its signal
 * check (kauth_cred_uidmatch) compares real and effective uids on both
 * sides, never the saved uid, so a killer that may signal the DM is
 * always open to it in return.  Upstream libxl picks its per-OS files at
 * build time and, for NetBSD, compiles a setresuid that only asserts.
 *
 * FreeBSD has setresuid and the same comparison as Linux, but more is
 * missing than Linux's /proc and prctl: with security.bsd.see_other_uids
 * (or see_other_gids) at 0 a killer of another real uid cannot see the
 * DM and kill(-1) misses it; kill(-1) skips a process still being forked
 * (PRS_NEW), so one pass is not shown complete against a fork racer; and
 * RLIMIT_NPROC is checked at fork only, so the count probe of
 * xlreaper_count.c has no equivalent.  docs/qemu-deprivilege.pandoc,
 * Portability, says what a port would need.
 *
 * Included first by xlreaper_internal.h, so that the message comes before
 * any other error.  tests/docs/test_os_guard.c checks each message.
 */
#ifndef XLREAPER_OS_H
#define XLREAPER_OS_H

#if defined(__NetBSD__)
#error libxl-reaper: NetBSD has no setresuid(2), and its signal check \
never looks at the saved uid, so the uid kill cannot be made safe (the \
device model could kill its killer): not supported, as upstream libxl \
does not support dm_restrict there; see \
docs/qemu-deprivilege.pandoc, Portability
#elif defined(__FreeBSD__)
#error libxl-reaper: not ported to FreeBSD: setresuid(2) is there, but \
kill(-1) misses the device model under security.bsd.see_other_uids=0 \
and skips processes being forked, RLIMIT_NPROC gives no count, and the \
verification reads the /proc of Linux and the spawn uses prctl(2); see \
docs/qemu-deprivilege.pandoc, Portability
#elif !defined(__linux__)
#error libxl-reaper: only Linux is supported: the kill needs setresuid(2) \
and the verification the /proc of Linux; see \
docs/qemu-deprivilege.pandoc, Portability
#endif

#endif /* XLREAPER_OS_H */
