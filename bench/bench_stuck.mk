# SPDX-License-Identifier: LGPL-2.1-only
# bench-stuck: while 1, 12 and 64 DM uids are stuck (a task
# in D state on a FUSE request never answered) and reaped over and over,
# another domain's `xl-reaper kill` keeps its p99 within 2x of the quiet
# host's, with no lock timeout.  BENCH_STUCK_REPS kills per level (200).
# Included by bench/bench.mk; `make bench` runs it after the others.
BENCH_STUCK := $(BUILD)/bench/bench_stuck

$(BENCH_STUCK): $(call obj,bench/bench_stuck.c tests/lib/xlrt_fuse.c) \
		$(BENCH_LIB_OBJS) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread -lm

.PHONY: bench-stuck
bench-stuck: $(BENCH_STUCK) $(XLR_BIN) $(BENCH_PROGS) $(BUILD)/tests/progs/fuse_holder
	mkdir -p $(BENCH_RESULTS)
	BENCH_BUILD=$(BUILD) BENCH_RESULTS=$(BENCH_RESULTS) $(BENCH_STUCK)
BENCH_EXTRA_BINS += $(BENCH_STUCK) $(XLR_BIN) $(BUILD)/tests/progs/fuse_holder
