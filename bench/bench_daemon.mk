# SPDX-License-Identifier: LGPL-2.1-only
# bench-daemon: xl-reaperd's death-to-verified latency over 1,000 deaths
# (XLR_BENCH_DEATHS to change).  Included by bench/bench.mk; `make bench`
# runs it after the others.
BENCH_DAEMON := $(BUILD)/bench/bench_daemon

$(BENCH_DAEMON): $(call obj,bench/bench_daemon.c tests/lib/xlrt_daemon.c) \
		$(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

.PHONY: bench-daemon
bench-daemon: $(BENCH_DAEMON) $(XLRD_BIN) $(TEST_PROGS)
	XLR_BUILD=$(BUILD) $(BENCH_DAEMON)
BENCH_EXTRA_BINS += $(BENCH_DAEMON) $(XLRD_BIN) $(TEST_PROGS)
