# SPDX-License-Identifier: LGPL-2.1-only
# Where libxl-reaper meets xl and other toolstacks: one folder per program
# (xl-reaper/, xl-reaperd/, qemu-dm-restrict/, osstest/), and common/ for
# what two of them share (the metrics writer, the libxlutil link shim).
# Each program's rules are in its folder's fragment.

HOOKS := tools/xl-hooks
CFLAGS_ALL += -I$(HOOKS)/common

# What a start costs (bench_start; the figures are in
# bench/results/start.md and bench/RESULTS.md, "Measurements behind the
# design").  Linked against every library in PKGS, xl-reaper mapped 20
# shared objects: libxenlight and its libxenctrl, libxenguest and their
# compression libraries, which cost as much of each start as the whole
# bare exec'd kill it verifies.  Only destroy, audit and the daemon call
# libxenlight.  So:
# - xl-reaper (uid, spawn, kill, status, check) and qemu-dm-restrict are
#   linked without libxenlight.  libxenstore (and its libxentoolcore),
#   small, they link for add_dm_restrict, whose spawn edits xenstore
#   (xlreaper_vkbd.c, xlreaper_dm_ready.c).  They must parse the
#   config with libxlutil, and Debian's libxlutil.so NEEDs libxenlight:
#   a dynamic libxlutil maps all of it whatever is called, so splitting
#   the commands or our library alone gains nothing.  libxlutil alone is
#   linked statically (-l:libxlutil.a: the linker takes only its parser,
#   libxlu_cfg*.o), with the one libxenlight function that parser refers
#   to (xlu_cfg_static.c).  libxentoollog and libyajl stay shared:
#   static too saved nothing outside the noise, and each static copy is
#   one more library a Debian security update would not reach.  -z now
#   against lazy binding, and -O1, made no difference.  --as-needed
#   drops what the archive objects taken do not use.
# - destroy and audit live in xl-reaper-xen (libexec/xl-reaper/), linked
#   as before (all of PKGS, shared); xl-reaper execs it for those two
#   commands before it loads anything (xl_reaper_xen_handoff.c): one
#   exec more on paths that then set up libxl anyway.
# Debian: static linking of libxlutil.a is frowned on; the package would
# need Built-Using: xen and a rebuild on each libxlutil fix.  The clean
# way is a libxlutil whose parser does not NEED libxenlight (it calls one
# trivial function of it): upstream's to do, and then these two lines
# become -lxlutil again.

# Libraries of the programs that must not load libxenlight, and the
# check that they do not (xlu_cfg_static.c's definition of a libxenlight
# function would otherwise interpose libxenlight's own).
CORE_LIBS = -Wl,--as-needed $(call obj,$(HOOKS)/common/xlu_cfg_static.c) \
	-l:libxlutil.a -lxentoollog -lxenstore -lyajl -lpthread
core_check = @if readelf -d $(1) | grep -Eq 'NEEDED.*lib(xenlight|xlutil|xenctrl)'; \
	then echo "$(1): loads libxenlight (see hooks.mk)" >&2; rm -f $(1); exit 1; fi

include $(HOOKS)/xl-reaper/xl-reaper.mk
include $(HOOKS)/xl-reaperd/xl-reaperd.mk
include $(HOOKS)/qemu-dm-restrict/qemu-dm-restrict.mk
