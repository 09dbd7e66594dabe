# SPDX-License-Identifier: LGPL-2.1-only
# Test builds of xl-reaper and xl-reaperd whose few libxl calls are
# answered by fake_xenstored's stand-in for the hypervisor
# (tests/daemon/fakexen_libxl.c), linked with -Wl,--wrap.  The real
# binaries are built without it and run on real Xen in the e2e tests.
comma := ,
FAKEXEN_OBJ := $(call obj,tests/daemon/fakexen_libxl.c)
FAKEXEN_WRAP := $(addprefix -Wl$(comma)--wrap=,libxl_ctx_alloc \
	libxl_ctx_free libxl_childproc_setmode libxl_domain_info \
	libxl_list_domain libxl_domain_destroy xlrd_hypervisor_present \
	xlreaper_census)

$(BUILD)/tests/xl-reaper-fakexen: $(call obj,$(XLR_SRCS)) $(FAKEXEN_OBJ) \
		$(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) $(FAKEXEN_WRAP) -o $@ $^ $(PKG_LIBS) -lpthread

$(BUILD)/tests/xl-reaperd-fakexen: $(call obj,$(XLRD_SRCS)) $(FAKEXEN_OBJ) \
		$(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) $(FAKEXEN_WRAP) -o $@ $^ $(PKG_LIBS) -lpthread

tests: $(BUILD)/tests/xl-reaper-fakexen $(BUILD)/tests/xl-reaperd-fakexen
