# SPDX-License-Identifier: LGPL-2.1-only
# The spawn benchmark, included by bench/bench.mk:
#   make bench-spawn    restricted spawn vs bare fork+execve, one ratio
# BENCH_SPAWN_ROUNDS spawns of each kind (default 2000).
BENCH_SPAWN_BIN := $(BUILD)/bench/bench_spawn

$(BENCH_SPAWN_BIN): $(call obj,bench/bench_spawn.c tests/lib/xlrt_tree.c) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread

.PHONY: bench-spawn
bench-spawn: $(BENCH_SPAWN_BIN) $(BUILD)/tests/progs/spawn_probe
	XLR_BUILD=$(BUILD) $(BENCH_SPAWN_BIN) $(BENCH_SPAWN_ROUNDS)
BENCH_EXTRA_BINS += $(BENCH_SPAWN_BIN) $(BUILD)/tests/progs/spawn_probe
