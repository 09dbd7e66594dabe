# SPDX-License-Identifier: LGPL-2.1-only
# The daemon: build/bin/xl-reaperd (its unit: config/config.mk).
XLRD_SRCS := $(wildcard $(HOOKS)/xl-reaperd/*.c) $(HOOKS)/common/xlr_prom.c
XLRD_BIN := $(BUILD)/bin/xl-reaperd

all: $(XLRD_BIN)

# The dispatcher is never re-entered from below (xl_reaperd.h): the
# daemon's own files call each other without a cycle, which nm shows;
# and its modules include each other's headers without one.  main
# (xl_reaperd.c) is left out: it is the root, which includes every
# module and which nothing calls; xl_reaperd.h, of its name, is the
# header every module shares, not main's own.
XLRD_INCLUDE_CHECKED := $(filter-out %/xl_reaperd.c,\
	$(wildcard $(HOOKS)/xl-reaperd/*.[ch]))
$(XLRD_BIN): $(call obj,$(XLRD_SRCS)) $(LIB_A) scripts/check-call-graph \
		scripts/check-include-cycle
	@mkdir -p $(@D)
	scripts/check-call-graph $(call obj,$(wildcard $(HOOKS)/xl-reaperd/*.c))
	scripts/check-include-cycle $(XLRD_INCLUDE_CHECKED)
	$(CC) $(LDFLAGS_ALL) -o $@ $(filter %.o %.a,$^) $(PKG_LIBS) -lpthread

install: install-daemon
.PHONY: install-daemon
install-daemon: $(XLRD_BIN)
	install -d $(DESTDIR)$(PREFIX)/sbin
	install -m 755 $(XLRD_BIN) $(DESTDIR)$(PREFIX)/sbin/xl-reaperd

uninstall: uninstall-daemon
.PHONY: uninstall-daemon
uninstall-daemon:
	rm -f $(DESTDIR)$(PREFIX)/sbin/xl-reaperd

