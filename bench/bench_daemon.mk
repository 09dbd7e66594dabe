# SPDX-License-Identifier: LGPL-2.1-only
# bench-daemon: xl-reaperd's death-to-verified latency over 1,000 deaths
# (XLR_BENCH_DEATHS to change).  Included by bench/bench.mk; `make bench`
# runs it after the others.
BENCH_DAEMON := $(BUILD)/bench/bench_daemon

$(BENCH_DAEMON): $(call obj,bench/bench_daemon.c bench/lib/bench_dfix.c \
		tests/lib/xlrt_daemon.c tests/lib/xlrt_caps.c tests/lib/xlrt_tree.c) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

.PHONY: bench-daemon
bench-daemon: $(BENCH_DAEMON) $(XLRD_BIN) $(TEST_PROGS)
	XLR_BUILD=$(BUILD) $(BENCH_DAEMON)
BENCH_EXTRA_BINS += $(BENCH_DAEMON) $(XLRD_BIN) $(TEST_PROGS)

# bench-daemon-faults: 1,000 deaths with the daemon SIGKILLed at a random
# moment after each and started again (each death's event exactly once,
# every uid empty), then the start sweep with 64 leftovers
# (XLR_BENCH_CRASH_DEATHS to change).
BENCH_DAEMON_FAULTS := $(BUILD)/bench/bench_daemon_faults

$(BENCH_DAEMON_FAULTS): $(call obj,bench/bench_daemon_faults.c \
		bench/lib/bench_dfix.c tests/lib/xlrt_daemon.c tests/lib/xlrt_caps.c tests/lib/xlrt_tree.c) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

.PHONY: bench-daemon-faults
bench-daemon-faults: $(BENCH_DAEMON_FAULTS) $(XLRD_BIN) $(TEST_PROGS)
	XLR_BUILD=$(BUILD) $(BENCH_DAEMON_FAULTS)
BENCH_EXTRA_BINS += $(BENCH_DAEMON_FAULTS)
