# Where libxl-reaper meets xl: the admin CLI, the DM wrapper, the daemon.
#
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
XLR_XEN_CMD_SRCS := tools/xl-hooks/xl_reaper_cmd_destroy.c \
	tools/xl-hooks/xl_reaper_cmd_audit.c \
	tools/xl-hooks/xl_reaper_audit_prom.c tools/xl-hooks/xlr_prom.c
XLR_CORE_SRCS := $(filter-out $(XLR_XEN_CMD_SRCS), \
	$(wildcard tools/xl-hooks/xl_reaper_*.c))
# The whole CLI in one process (xl-reaper-xen, and the tests' fakexen).
XLR_SRCS := $(XLR_CORE_SRCS) $(XLR_XEN_CMD_SRCS)
XLR_BIN := $(BUILD)/bin/xl-reaper
XLR_XEN_BIN := $(BUILD)/libexec/xl-reaper/xl-reaper-xen

# Libraries of the programs that must not load libxenlight, and the
# check that they do not (xlu_cfg_static.c's definition of a libxenlight
# function would otherwise interpose libxenlight's own).
CORE_LIBS = -Wl,--as-needed $(call obj,tools/xl-hooks/xlu_cfg_static.c) \
	-l:libxlutil.a -lxentoollog -lyajl -lpthread
core_check = @if readelf -d $(1) | grep -Eq 'NEEDED.*lib(xenlight|xlutil|xenctrl)'; \
	then echo "$(1): loads libxenlight (see hooks.mk)" >&2; rm -f $(1); exit 1; fi

all: $(XLR_BIN) $(XLR_XEN_BIN)

$(XLR_BIN): $(call obj,$(XLR_CORE_SRCS)) $(LIB_A) \
		$(call obj,tools/xl-hooks/xlu_cfg_static.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $(call obj,$(XLR_CORE_SRCS)) $(LIB_A) \
		$(CORE_LIBS)
	$(call core_check,$@)

$(XLR_XEN_BIN): $(call obj,$(XLR_SRCS)) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

install: install-hooks
.PHONY: install-hooks
install-hooks: $(XLR_BIN) $(XLR_XEN_BIN)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/libexec/xl-reaper
	install -m 755 $(XLR_BIN) $(DESTDIR)$(PREFIX)/sbin/xl-reaper
	install -m 755 $(XLR_XEN_BIN) \
		$(DESTDIR)$(PREFIX)/libexec/xl-reaper/xl-reaper-xen

uninstall: uninstall-hooks
.PHONY: uninstall-hooks
uninstall-hooks:
	rm -f $(DESTDIR)$(PREFIX)/sbin/xl-reaper \
		$(DESTDIR)$(PREFIX)/libexec/xl-reaper/xl-reaper-xen

# The daemon: build/bin/xl-reaperd (its unit: config/config.mk).
XLRD_SRCS := $(wildcard tools/xl-hooks/xl_reaperd*.c) tools/xl-hooks/xlr_prom.c
XLRD_BIN := $(BUILD)/bin/xl-reaperd

all: $(XLRD_BIN)

$(XLRD_BIN): $(call obj,$(XLRD_SRCS)) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

install: install-daemon
.PHONY: install-daemon
install-daemon: $(XLRD_BIN)
	install -d $(DESTDIR)$(PREFIX)/sbin
	install -m 755 $(XLRD_BIN) $(DESTDIR)$(PREFIX)/sbin/xl-reaperd

uninstall: uninstall-daemon
.PHONY: uninstall-daemon
uninstall-daemon:
	rm -f $(DESTDIR)$(PREFIX)/sbin/xl-reaperd

# The device model xl runs (device_model_override): see qemu_dm_restrict.c.
QDR_BIN := $(BUILD)/libexec/qemu-dm-restrict

all: $(QDR_BIN)

# Linked as xl-reaper is, without libxenlight: it starts every DM.
$(QDR_BIN): $(call obj,tools/xl-hooks/qemu_dm_restrict.c) $(LIB_A) \
		$(call obj,tools/xl-hooks/xlu_cfg_static.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $(call obj,tools/xl-hooks/qemu_dm_restrict.c) \
		$(LIB_A) $(CORE_LIBS)
	$(call core_check,$@)

install: install-qemu-dm-restrict
.PHONY: install-qemu-dm-restrict
install-qemu-dm-restrict: $(QDR_BIN)
	install -d $(DESTDIR)$(PREFIX)/libexec/xl-reaper
	install -m 755 $(QDR_BIN) \
		$(DESTDIR)$(PREFIX)/libexec/xl-reaper/qemu-dm-restrict

# The directory goes last, and only if empty: nothing else of ours is left.
uninstall: uninstall-qemu-dm-restrict
.PHONY: uninstall-qemu-dm-restrict
uninstall-qemu-dm-restrict: uninstall-hooks
	rm -f $(DESTDIR)$(PREFIX)/libexec/xl-reaper/qemu-dm-restrict
	rmdir $(DESTDIR)$(PREFIX)/libexec/xl-reaper 2>/dev/null || true
