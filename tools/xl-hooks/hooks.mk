# SPDX-License-Identifier: LGPL-2.1-only
# Where libxl-reaper meets xl and other toolstacks: one folder per program
# (xl-reaper/, xl-reaperd/, qemu-dm-restrict/, osstest/), and common/ for
# what two of them share (the metrics writer, the libxlutil link shim).
# Each program's rules are in its folder's fragment.

HOOKS := tools/xl-hooks
CFLAGS_ALL += -I$(HOOKS)/common

# What a start costs (issue 13; bench_start, bench/results/start.md).
# Linked against every library in PKGS, xl-reaper mapped 20 shared
# objects: libxenlight and its libxenctrl, libxenguest, libz, liblzma,
# libzstd, ...  That took about 3 ms of each start on this VM, as much
# as the whole bare exec'd kill it verifies.  Only destroy, audit and
# the daemon call libxenlight.  So:
# - xl-reaper (uid, spawn, kill, status, check) and qemu-dm-restrict are
#   linked without libxenlight and libxenstore.  They must parse the
#   config with libxlutil, and Debian's libxlutil.so NEEDs libxenlight:
#   a dynamic libxlutil maps all of it whatever is called, so splitting
#   the commands or our library alone gains nothing (measured: 8.80 ms
#   against 8.85 ms).  libxlutil alone is linked statically
#   (-l:libxlutil.a: the linker takes only its parser, libxlu_cfg*.o),
#   with the one libxenlight function that parser refers to
#   (xlu_cfg_static.c).  libxentoollog and libyajl stay shared: static
#   too saved 0.3 ms of 5.9, within the noise, and each static copy is
#   one more library a Debian security update would not reach.  -z now
#   against lazy binding, and -O1, made no difference (5.93 / 5.95 ms).
#   --as-needed drops what the archive objects taken do not use.
# - destroy and audit live in xl-reaper-xen (libexec/xl-reaper/), linked
#   as before (all of PKGS, shared); xl-reaper execs it for those two
#   commands before it loads anything (xl_reaper_xen_handoff.c): one
#   exec more on paths that then set up libxl anyway.
# Result, same run: `xl-reaper uid` 8.98 -> 6.08 ms, `kill` on an empty
# uid 12.89 -> 9.65 ms, against 3.01 ms for the bare exec'd killer.
# Debian: static linking of libxlutil.a is frowned on; the package would
# need Built-Using: xen and a rebuild on each libxlutil fix.  The clean
# way is a libxlutil whose parser does not NEED libxenlight (it calls one
# trivial function of it): upstream's to do, and then these two lines
# become -lxlutil again.

# Libraries of the programs that must not load libxenlight, and the
# check that they do not (xlu_cfg_static.c's definition of a libxenlight
# function would otherwise interpose libxenlight's own).
CORE_LIBS = -Wl,--as-needed $(call obj,$(HOOKS)/common/xlu_cfg_static.c) \
	-l:libxlutil.a -lxentoollog -lyajl -lpthread
core_check = @if readelf -d $(1) | grep -Eq 'NEEDED.*lib(xenlight|xlutil|xenctrl)'; \
	then echo "$(1): loads libxenlight (see hooks.mk)" >&2; rm -f $(1); exit 1; fi

include $(HOOKS)/xl-reaper/xl-reaper.mk
include $(HOOKS)/xl-reaperd/xl-reaperd.mk
include $(HOOKS)/qemu-dm-restrict/qemu-dm-restrict.mk
