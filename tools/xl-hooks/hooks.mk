# Where libxl-reaper meets xl: the admin CLI, the DM wrapper, the daemon.
XLR_SRCS := $(wildcard tools/xl-hooks/xl_reaper_*.c)
XLR_BIN := $(BUILD)/bin/xl-reaper

all: $(XLR_BIN)

$(XLR_BIN): $(call obj,$(XLR_SRCS)) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

install: install-hooks
.PHONY: install-hooks
install-hooks: $(XLR_BIN)
	install -d $(DESTDIR)$(PREFIX)/sbin
	install -m 755 $(XLR_BIN) $(DESTDIR)$(PREFIX)/sbin/xl-reaper

# The daemon: build/bin/xl-reaperd, and its systemd unit.
XLRD_SRCS := $(wildcard tools/xl-hooks/xl_reaperd*.c)
XLRD_BIN := $(BUILD)/bin/xl-reaperd

all: $(XLRD_BIN)

$(XLRD_BIN): $(call obj,$(XLRD_SRCS)) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

install: install-daemon
.PHONY: install-daemon
install-daemon: $(XLRD_BIN)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)/lib/systemd/system
	install -m 755 $(XLRD_BIN) $(DESTDIR)$(PREFIX)/sbin/xl-reaperd
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' config/xl-reaperd.service \
		> $(DESTDIR)/lib/systemd/system/xl-reaperd.service

# The device model xl runs (device_model_override): see qemu_dm_restrict.c.
QDR_BIN := $(BUILD)/libexec/qemu-dm-restrict

all: $(QDR_BIN)

$(QDR_BIN): $(call obj,tools/xl-hooks/qemu_dm_restrict.c) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

install: install-qemu-dm-restrict
.PHONY: install-qemu-dm-restrict
install-qemu-dm-restrict: $(QDR_BIN)
	install -d $(DESTDIR)$(PREFIX)/libexec/xl-reaper
	install -m 755 $(QDR_BIN) \
		$(DESTDIR)$(PREFIX)/libexec/xl-reaper/qemu-dm-restrict
