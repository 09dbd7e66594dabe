# SPDX-License-Identifier: LGPL-2.1-only
# The audit benchmark, included by bench/bench.mk:
#   make bench-audit   the audit of a host with 64 live DMs, before
#                      its one /proc reader per audit
#                      (BENCH_AUDIT_BASE: the tree that change was
#                      rebased on) and now, one after the
#                      other in the same run; BENCH_AUDIT_REPS audits each
#                      (default 100: a p99 of its own, not the max).
BENCH_AUDIT_BIN := $(BUILD)/bench/bench_audit
BENCH_AUDIT_BASE ?= b73c629
BENCH_AUDIT_OLD := $(BUILD)/bench-audit-base
BENCH_AUDIT_REPS ?= 100

$(BENCH_AUDIT_BIN): $(call obj,bench/bench_audit.c tests/lib/xlrt_tree.c) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

# The library as it was at BENCH_AUDIT_BASE (bench_compare.mk's
# bench_rev_tree), and the same benchmark source built against it.
$(BENCH_AUDIT_OLD)/bench_audit: bench/bench_audit.c tests/lib/xlrt_tree.c
	$(call bench_rev_tree,$(BENCH_AUDIT_BASE),$(BENCH_AUDIT_OLD),build/lib/libxlreaper.a)
	$(CC) $(call bench_rev_cflags,$(BENCH_AUDIT_OLD)) \
		-o $@ $^ $(BENCH_AUDIT_OLD)/src/build/lib/libxlreaper.a \
		$(LDFLAGS_ALL) $(PKG_LIBS) -lpthread

.PHONY: bench-audit
bench-audit: $(BENCH_AUDIT_BIN) $(BENCH_AUDIT_OLD)/bench_audit \
		$(BUILD)/tests/progs/fake_dm
	XLR_BUILD=$(BUILD) $(BENCH_AUDIT_OLD)/bench_audit \
		"before (BENCH_AUDIT_BASE $(BENCH_AUDIT_BASE))" $(BENCH_AUDIT_REPS)
	XLR_BUILD=$(BUILD) $(BENCH_AUDIT_BIN) now $(BENCH_AUDIT_REPS)
BENCH_EXTRA_BINS += $(BENCH_AUDIT_BIN) $(BENCH_AUDIT_OLD)/bench_audit \
	$(BUILD)/tests/progs/fake_dm
