# SPDX-License-Identifier: LGPL-2.1-only
# Tests.  Every tests/<dir>/test_*.c is one cmocka suite, linked with the
# test helpers in tests/lib and the library's static archive (so suites
# may reach internal functions).  Every tests/progs/*.c is a helper
# program (adversaries, fakes) in build/tests/progs.

# Unit suites first: they are quick and say the most when they fail.
TEST_SUITE_SRCS := $(sort $(wildcard tests/unit/test_*.c)) \
	$(filter-out tests/unit/%,$(sort $(wildcard tests/*/test_*.c)))
TEST_SUITES := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(TEST_SUITE_SRCS)))
TEST_LIB_SRCS := $(wildcard tests/lib/*.c)
TEST_PROG_SRCS := $(wildcard tests/progs/*.c)
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(TEST_PROG_SRCS))
# The CLI among them, for the suites that run it as another uid: a clone
# may sit in a 0700 directory those uids cannot search (tests/run-suites
# stages the programs where they can).
TEST_PROGS += $(BUILD)/tests/progs/xl-reaper

TEST_CFLAGS = -Itests/lib $(CMOCKA_CFLAGS)
$(BUILD)/obj/tests/%.o: CFLAGS_ALL += $(TEST_CFLAGS)

define test_suite_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(call obj,$(1)) \
		$(call obj,$(TEST_LIB_SRCS)) $(LIB_A)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$^ $$(PKG_LIBS) $$(CMOCKA_LIBS) -lpthread
endef
$(foreach s,$(TEST_SUITE_SRCS),$(eval $(call test_suite_rule,$(s))))

# Test programs are static where they stand in for a DM, so that they run
# the same in a chroot; they need nothing but libc.
$(BUILD)/tests/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h) \
		| $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) -static -pthread \
		-o $@ $< $(LDFLAGS)

$(BUILD)/tests/progs/xl-reaper: $(BUILD)/bin/xl-reaper
	@mkdir -p $(@D)
	cp -p $< $@

.PHONY: tests
tests: all $(TEST_SUITES) $(TEST_PROGS)

# Rounds per adversary: at least 50 in check, 10,000 in soak.
check: tests
	XLR_BUILD=$(BUILD) XLR_ROUNDS=$${XLR_ROUNDS:-50} \
		tests/run-suites $(TEST_SUITES)

soak: tests
	XLR_BUILD=$(BUILD) XLR_ROUNDS=10000 \
		tests/run-suites $(BUILD)/tests/test_adversary

# Fragments of test directories with builds of their own.
-include $(filter-out tests/e2e/e2e.mk,$(wildcard tests/*/*.mk))
