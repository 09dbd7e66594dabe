# SPDX-License-Identifier: LGPL-2.1-only
# libxl-reaper.  `make`, `make check`, `make demo`, `make install`, ...
# Each part of the tree adds its rules in its own fragment (*.mk).

BUILD := build
PREFIX ?= /usr/local
DESTDIR ?=
SANITIZE ?= 0

# The version has one home, debian/changelog's first line; every binary's
# --version and the package take it from there.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)

# Evaluated when used, i.e. after `deps` has installed pkg-config's data.
PKGS = xenlight xlutil xenstore xentoolcore xentoollog yajl
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))
CMOCKA_CFLAGS = $(shell pkg-config --cflags cmocka)
CMOCKA_LIBS = $(shell pkg-config --libs cmocka)

CC ?= cc
OPT ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wno-missing-field-initializers
CFLAGS_ALL = -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC \
	-DXLREAPER_VERSION='"$(VERSION)"' $(CPPFLAGS) \
	-Itools/libxl-reaper/include $(LIB_INCS) $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(LDFLAGS)
ifeq ($(SANITIZE),1)
CFLAGS_ALL += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS_ALL += -fsanitize=address,undefined
BUILD := build/sanitize
endif

# NODEPS=1: the Debian packages are someone else's business (debian/rules:
# dpkg-buildpackage has checked the Build-Depends), so nothing is installed.
NODEPS ?= 0
ifeq ($(NODEPS),1)
DEPS_STAMP :=
else
DEPS_STAMP := build/.deps-ok
endif

.PHONY: all deps check demo soak bench install uninstall docs clean
all:

deps: $(DEPS_STAMP)
ifneq ($(NODEPS),1)
$(DEPS_STAMP): scripts/install-deps
	scripts/install-deps
	@mkdir -p $(@D) && touch $@
endif

# Objects: build/obj/<path>.o, with header dependencies.
$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

include tools/libxl-reaper/lib.mk
include tools/xl-hooks/hooks.mk
include config/config.mk
include tests/tests.mk
include tests/e2e/e2e.mk
-include bench/bench.mk
-include docs/docs.mk
include docs/libxl-patches/patches.mk
include debian/deb.mk

# The code style (.clang-format) on what changed since the style last
# changed (scripts/format-check says why not the whole tree); .ci/run
# calls it.  FORMAT_BASE=<commit> checks what changed since another.
FORMAT_BASE ?= $(shell git log -1 --format=%H -- .clang-format 2>/dev/null)
.PHONY: format-check
format-check:
	scripts/install-deps clang-format
	scripts/format-check $(FORMAT_BASE)

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

demo: all $(BUILD)/tests/progs/fork_racer $(BUILD)/tests/progs/nursery
	XLR_BUILD=$(BUILD) scripts/demo
