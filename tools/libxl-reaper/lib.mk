# SPDX-License-Identifier: LGPL-2.1-only
# The library: build/lib/libxlreaper.a and libxlreaper.so.
# One library, not a core part and a xen part: the programs link the
# archive, from which the linker takes only the objects they use, so
# xl-reaper never pulls xlreaper_audit_xen.o's libxl calls (hooks.mk);
# and a separate core .so would still load libxenlight through Debian's
# libxlutil.so, which NEEDs it (no gain: bench/results/start.md).
# One folder per concern (tools/libxl-reaper/README.md says which holds
# what and which may include which).
LIB_DIRS := core spawn audit host xen
LIB_INCS := $(addprefix -Itools/libxl-reaper/,$(LIB_DIRS))
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard tools/libxl-reaper/$(d)/*.c))
LIB_OBJS := $(call obj,$(LIB_SRCS))
LIB_A := $(BUILD)/lib/libxlreaper.a
LIB_SO := $(BUILD)/lib/libxlreaper.so.0

all: $(LIB_A) $(LIB_SO)

# The spawn's child (xlreaper_spawn_apply.c) runs between fork and execve
# in a caller that may be threaded: it may call only what
# xlreaper_spawn_apply.allow lists.  Every symbol its object leaves
# undefined is checked against that list, as hooks.mk's core_check checks
# what a program loads; the sanitizers' own hooks are not calls of ours.
SPAWN_APPLY_O := $(call obj,tools/libxl-reaper/spawn/xlreaper_spawn_apply.c)
SPAWN_APPLY_ALLOW := tools/libxl-reaper/spawn/xlreaper_spawn_apply.allow
SPAWN_APPLY_OK := $(SPAWN_APPLY_O).allowed

$(SPAWN_APPLY_OK): $(SPAWN_APPLY_O) $(SPAWN_APPLY_ALLOW)
	@nm -u $< | awk '{ sub(/@.*/, "", $$NF); print $$NF }' | \
		grep -Ev '^__(asan|ubsan|sanitizer|lsan|msan|tsan|sancov)_|^__(start|stop)___sancov_' | \
		sort -u >$@.syms
	@grep -Ev '^(#|$$)' $(SPAWN_APPLY_ALLOW) | sort -u >$@.list
	@bad=$$(comm -23 $@.syms $@.list); rm -f $@.syms $@.list; \
	if [ -n "$$bad" ]; then \
		echo "$<: calls what a spawn child may not (not in" \
			"$(SPAWN_APPLY_ALLOW)):" $$bad >&2; exit 1; fi
	@touch $@

$(LIB_A): $(LIB_OBJS) | $(SPAWN_APPLY_OK)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS) | $(SPAWN_APPLY_OK)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libxlreaper.so.0 $(LDFLAGS_ALL) -o $@ $^ \
		$(PKG_LIBS) -lpthread
	ln -sf libxlreaper.so.0 $(@D)/libxlreaper.so

# The kill core uses nothing from the other folders (README.md here):
# its objects are compiled seeing only core/'s headers, and every
# library symbol they leave undefined must be one core/ defines.
CORE_OBJS := $(call obj,$(wildcard tools/libxl-reaper/core/*.c))
$(CORE_OBJS): LIB_INCS := -Itools/libxl-reaper/core
CORE_OK := $(BUILD)/lib/core-alone.checked
$(CORE_OK): $(CORE_OBJS)
	@mkdir -p $(@D)
	@nm --defined-only -g $^ | awk 'NF == 3 { print $$3 }' | \
		sort -u >$@.def
	@nm -u $^ | awk '$$1 == "U" { print $$2 }' | \
		grep -E '^xlreaper_' | sort -u >$@.und
	@bad=$$(comm -23 $@.und $@.def); rm -f $@.def $@.und; \
	if [ -n "$$bad" ]; then \
		echo "tools/libxl-reaper/core uses what other folders" \
			"define (core depends on none of them):" $$bad >&2; \
		exit 1; fi
	@touch $@
all: $(CORE_OK)

# Not part of `make install`: nothing installed links the shared library
# (the programs link the archive), and the Debian package ships neither.
.PHONY: install-lib uninstall-lib
install-lib: $(LIB_A) $(LIB_SO)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libxlreaper.so.0 $(DESTDIR)$(PREFIX)/lib/libxlreaper.so
	install -m 644 tools/libxl-reaper/include/xlreaper.h \
		tools/libxl-reaper/include/xlreaper_json.h \
		$(DESTDIR)$(PREFIX)/include/

uninstall-lib:
	rm -f $(DESTDIR)$(PREFIX)/lib/libxlreaper.a \
		$(DESTDIR)$(PREFIX)/lib/libxlreaper.so.0 \
		$(DESTDIR)$(PREFIX)/lib/libxlreaper.so \
		$(DESTDIR)$(PREFIX)/include/xlreaper.h \
		$(DESTDIR)$(PREFIX)/include/xlreaper_json.h

# "A helper makes raw system calls only" (xlreaper_helper_raw.c) is
# proved here: the object that holds every function a helper runs may
# need no symbol from outside itself.  A sanitizer's own hooks are the
# one exception (make analyze's and the sanitize build's).
HELPER_RAW_OBJ := $(call obj,tools/libxl-reaper/core/xlreaper_helper_raw.c)
# No stack protector there: its failure path is libc's __stack_chk_fail,
# and Debian's hardening flags (debian/rules, dpkg-buildflags) turn it on
# in CFLAGS; without this the package does not build.
$(HELPER_RAW_OBJ): CFLAGS_ALL += -fno-stack-protector
# A check's verdict: the rule fails, saying $(1) and then the shell's
# $$bad, when $$bad is not empty.
refuse_bad = if [ -n "$$bad" ]; then echo $(1) >&2; echo "$$bad" >&2; \
	exit 1; fi
$(BUILD)/lib/helper-raw.checked: $(HELPER_RAW_OBJ)
	@mkdir -p $(@D)
	@bad=$$(nm -u $< | grep -v ' U __\(asan\|ubsan\|sanitizer\|tsan\)_'); \
	$(call refuse_bad,"$<: a helper's code needs symbols from outside" \
		"its file (raw system calls only, xlreaper_helper_raw.c):")
	@touch $@
all: $(BUILD)/lib/helper-raw.checked

# "Every child the library and its programs wait for goes through here"
# (xlreaper_wait.c) is proved here: no other object of the library or of
# tools/xl-hooks may call a wait of libc's, nor system or pclose, which
# wait without a deadline inside.
WAIT_OBJ := $(call obj,tools/libxl-reaper/core/xlreaper_wait.c)
WAIT_OTHER_OBJS := $(filter-out $(WAIT_OBJ),$(LIB_OBJS)) \
	$(call obj,$(wildcard tools/xl-hooks/*/*.c))
WAIT_CALLS := wait waitpid waitid wait3 wait4 system pclose
$(BUILD)/lib/wait-one.checked: $(WAIT_OTHER_OBJS)
	@mkdir -p $(@D)
	@bad=$$(for o in $^; do nm -u $$o | \
		awk -v o=$$o '{ sub(/@.*/, "", $$NF); print o ": " $$NF }'; \
		done | grep -E ': ($(subst $() ,|,$(WAIT_CALLS)))$$'); \
	$(call refuse_bad,"a child waited for outside the one bounded" \
		"wait (xlreaper_wait.c):")
	@touch $@
all: $(BUILD)/lib/wait-one.checked
