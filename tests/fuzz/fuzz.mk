# SPDX-License-Identifier: LGPL-2.1-only
# Fuzzing (tests/fuzz/README.md).
#
#   make fuzz [FUZZ_SECONDS=30] [FUZZ_TARGETS="config json"]
#       builds each target with libFuzzer (clang, ASan, UBSan) and runs
#       it FUZZ_SECONDS on its corpus; a crash, leak, UB or failed
#       property fails, and its input is kept in tests/fuzz/regress/.
#   make check
#       replays every corpus and regression through the same targets
#       built without libFuzzer (replay.c), with ASan and UBSan
#       (test_fuzz_replay, one suite of run-suites).
#
# The library is compiled a second time, by clang, with coverage for
# libFuzzer, in build/fuzz (a make of its own: the same rules as the
# real build, another compiler and flags).  libxlutil is Debian's
# archive, not instrumented: ASan sees its heap misuse and leaks, not
# every stray read.
FUZZ_ALL := config qemu_cmdline qemu_help proc_status proc_limits dmrec \
	xenstore json
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_SECONDS ?= 30
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_LIB := $(FUZZ_BUILD)/lib/libxlreaper.a
# The daemon's xenstore parsers (xl_reaperd_parse.c) live outside the
# library.
FUZZ_EXTRA := $(FUZZ_BUILD)/obj/tools/xl-hooks/xl-reaperd/xl_reaperd_parse.o
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O1 -g $(WARN) \
	-Itools/libxl-reaper/include $(LIB_INCS) -Itools/xl-hooks/common \
	-Itools/xl-hooks/xl-reaperd \
	-Itests/fuzz $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_COMMON := tests/fuzz/fuzz_common.c tests/fuzz/fuzz.h

.PHONY: fuzz fuzz-build FORCE
FORCE:

# One make of the library by clang; its own rules decide what is stale.
# (Inside it LIB_A is FUZZ_LIB: this rule is for the outer make only.)
ifndef FUZZ_SUBMAKE
$(FUZZ_LIB) $(FUZZ_EXTRA): FORCE | $(DEPS_STAMP)
	$(MAKE) --no-print-directory FUZZ_SUBMAKE=1 BUILD=$(FUZZ_BUILD) \
		CC=$(FUZZ_CC) SANITIZE=0 OPT="-O1 -g" \
		CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" \
		$(FUZZ_LIB) $(FUZZ_EXTRA)
endif

# With libFuzzer, for make fuzz.
$(FUZZ_BUILD)/bin/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_COMMON) $(FUZZ_LIB) \
		$(FUZZ_EXTRA)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		tests/fuzz/fuzz_common.c $(FUZZ_EXTRA) $(FUZZ_LIB) \
		$(PKG_LIBS) -lpthread

# Without, for make check: the same target code under replay.c's main.
$(FUZZ_BUILD)/bin/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c \
		$(FUZZ_COMMON) $(FUZZ_LIB) $(FUZZ_EXTRA)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< tests/fuzz/replay.c \
		tests/fuzz/fuzz_common.c $(FUZZ_EXTRA) $(FUZZ_LIB) \
		$(PKG_LIBS) -lpthread

fuzz-build: $(patsubst %,$(FUZZ_BUILD)/bin/fuzz_%,$(FUZZ_TARGETS))

# Each target FUZZ_SECONDS; tests/fuzz/run keeps what fails.
fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The replay, as one suite of make check.
FUZZ_REPLAYS := $(patsubst %,$(FUZZ_BUILD)/bin/replay_%,$(FUZZ_ALL))
$(BUILD)/tests/test_fuzz_replay: tests/fuzz/replay-suite $(FUZZ_REPLAYS)
	@mkdir -p $(@D)
	sed 's|@TOP@|$(CURDIR)|; s|@FUZZ_BUILD@|$(FUZZ_BUILD)|; s|@TARGETS@|$(FUZZ_ALL)|' \
		tests/fuzz/replay-suite > $@
	chmod 755 $@
tests: $(BUILD)/tests/test_fuzz_replay
TEST_SUITES += $(BUILD)/tests/test_fuzz_replay
