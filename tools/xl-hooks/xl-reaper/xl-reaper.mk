# SPDX-License-Identifier: LGPL-2.1-only
# The admin CLI: build/bin/xl-reaper, and xl-reaper-xen for the two
# commands that call libxenlight (hooks.mk says why they are apart).
XLR_XEN_CMD_SRCS := $(HOOKS)/xl-reaper/xl_reaper_cmd_destroy.c \
	$(HOOKS)/xl-reaper/xl_reaper_cmd_audit.c \
	$(HOOKS)/xl-reaper/xl_reaper_audit_prom.c $(HOOKS)/common/xlr_prom.c
XLR_CORE_SRCS := $(filter-out $(XLR_XEN_CMD_SRCS), \
	$(wildcard $(HOOKS)/xl-reaper/*.c))
# The whole CLI in one process (xl-reaper-xen, and the tests' fakexen).
XLR_SRCS := $(XLR_CORE_SRCS) $(XLR_XEN_CMD_SRCS)
XLR_BIN := $(BUILD)/bin/xl-reaper
XLR_XEN_BIN := $(BUILD)/libexec/xl-reaper/xl-reaper-xen

all: $(XLR_BIN) $(XLR_XEN_BIN)

$(XLR_BIN): $(call obj,$(XLR_CORE_SRCS)) $(LIB_A) \
		$(call obj,$(HOOKS)/common/xlu_cfg_static.c)
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

