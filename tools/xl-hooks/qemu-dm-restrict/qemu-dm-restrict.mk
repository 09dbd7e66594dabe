# SPDX-License-Identifier: LGPL-2.1-only
# The device model xl runs (device_model_override): see qemu_dm_restrict.c beside this file.
QDR_BIN := $(BUILD)/libexec/qemu-dm-restrict

all: $(QDR_BIN)

# Linked as xl-reaper is, without libxenlight: it starts every DM.
$(QDR_BIN): $(call obj,$(HOOKS)/qemu-dm-restrict/qemu_dm_restrict.c) $(LIB_A) \
		$(call obj,$(HOOKS)/common/xlu_cfg_static.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $(call obj,$(HOOKS)/qemu-dm-restrict/qemu_dm_restrict.c) \
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
