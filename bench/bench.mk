# Benchmarks (issue 9).  Never part of `make check`.
#   make bench        runs them one after another (never in parallel: they
#                     measure the machine), tables on stdout, CSV and
#                     summaries in bench/results/, a run log appended to
#                     bench/RESULTS.md.  ~15 min; BENCH_QUICK=1 for a
#                     short smoke run (results are then not appended).
#   make bench-plot   PNGs in bench/plots/ from bench/results/*.csv with
#                     gnuplot, installed on demand (optional extra).
# Knobs (environment): BENCH_TRIALS, BENCH_BUDGET_MS (bench_race),
# BENCH_REPS (bench_scale), BENCH_LOCK_REPS (bench_lock).

BENCH_MINE := parts race
BENCH_BINS := $(patsubst %,$(BUILD)/bench/bench_%,$(BENCH_MINE))
BENCH_LIB_OBJS := $(call obj,bench/lib/bench.c)
BENCH_PROG_SRCS := bench/progs/bench_tasks.c bench/progs/bench_racer.c \
	bench/progs/bench_barekill.c
BENCH_PROGS := $(patsubst bench/progs/%.c,$(BUILD)/bench/progs/%,$(BENCH_PROG_SRCS))
BENCH_RESULTS ?= bench/results

# The spawn and daemon helpers' benchmarks, when their fragments are in.
-include bench/bench_spawn.mk
-include bench/bench_daemon.mk
BENCH_EXTRA := $(if $(wildcard bench/bench_spawn.mk),bench-spawn) \
	$(if $(wildcard bench/bench_daemon.mk),bench-daemon)

$(BUILD)/obj/bench/%.o: CFLAGS_ALL += -Ibench/lib

$(BUILD)/bench/bench_%: $(BUILD)/obj/bench/bench_%.o $(BENCH_LIB_OBJS) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread -lm

# Static, like the test programs: the racer forks as fast as a small
# attacker would, not at the speed of a process with libxl mapped.
$(BUILD)/bench/progs/%: bench/progs/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) -static -pthread \
		-o $@ $< $(LDFLAGS)

.PHONY: bench bench-build bench-core bench-plot
bench-build: $(BENCH_BINS) $(BENCH_PROGS) $(XLR_BIN)

BENCH_RUN = BENCH_BUILD=$(BUILD) BENCH_RESULTS=$(BENCH_RESULTS) \
	bash -c 'set -o pipefail; "$$0" 2>&1 | tee $(BENCH_RESULTS)/$$1.txt'

bench-core: bench-build
	@mkdir -p $(BENCH_RESULTS)
	$(BENCH_RUN) $(BUILD)/bench/bench_parts parts
	$(BENCH_RUN) $(BUILD)/bench/bench_race race

# One after another, so that no benchmark runs beside another.
bench: bench-build
	$(MAKE) --no-print-directory bench-core
	$(foreach t,$(BENCH_EXTRA),$(MAKE) --no-print-directory $(t) &&) true
	BENCH_RESULTS=$(BENCH_RESULTS) bench/append-run bench/RESULTS.md

bench-plot:
	scripts/install-deps gnuplot-nox
	@mkdir -p bench/plots
	BENCH_RESULTS=$(BENCH_RESULTS) bench/plot
