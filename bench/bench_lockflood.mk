# SPDX-License-Identifier: LGPL-2.1-only
# bench-lockflood: while one DM holds BENCH_FLOOD_LOCKS (100,000) file
# locks, another domain's `xl-reaper kill` and `spawn` p99, xl-reaperd's
# start census and the audit, each against its quiet figure in the same
# run (bench/bench_lockflood.c says what and why).  Included by
# bench/bench.mk; `make bench` runs it after the others.
BENCH_LOCKFLOOD := $(BUILD)/bench/bench_lockflood

$(BENCH_LOCKFLOOD): $(call obj,bench/bench_lockflood.c \
		tests/lib/xlrt_daemon.c tests/lib/xlrt_caps.c) $(BENCH_LIB_OBJS) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread -lm

BENCH_LOCKFLOOD_NEEDS := $(BENCH_LOCKFLOOD) $(XLR_BIN) $(XLRD_BIN) \
	$(BENCH_PROGS) $(BUILD)/tests/progs/fake_xenstored

.PHONY: bench-lockflood
bench-lockflood: $(BENCH_LOCKFLOOD_NEEDS)
	mkdir -p $(BENCH_RESULTS)
	BENCH_BUILD=$(BUILD) XLR_BUILD=$(BUILD) BENCH_RESULTS=$(BENCH_RESULTS) \
		$(BENCH_LOCKFLOOD)
BENCH_EXTRA_BINS += $(BENCH_LOCKFLOOD_NEEDS)
