# SPDX-License-Identifier: LGPL-2.1-only
# Benchmarks.  Never part of `make check`.
#   make bench        runs them one after another (never in parallel: they
#                     measure the machine), tables on stdout, CSV and
#                     summaries in bench/results/ with the load average
#                     of each (load.txt), then writes bench/RESULTS.md
#                     from those files alone (bench/results-md) and
#                     draws the plots.  ~35 min; BENCH_QUICK=1 for a
#                     short smoke run (RESULTS.md is then left alone).
#   make bench-plot   PNGs in bench/plots/ from bench/results/*.csv with
#                     gnuplot, installed on demand (optional extra).
# Knobs (environment): BENCH_TRIALS, BENCH_BUDGET_MS, BENCH_METHODS,
# BENCH_SLOW_INIT (bench_race),
# BENCH_REPS (bench_scale), BENCH_LOCK_REPS (bench_lock),
# BENCH_START_REPS and BENCH_START_ALT (another xl-reaper, bench_start),
# BENCH_STUCK_REPS (bench_stuck), BENCH_FLOOD_LOCKS, BENCH_FLOOD_REPS,
# BENCH_FLOOD_CENSUS_REPS, BENCH_FLOOD_BUDGET_S and
# BENCH_FLOOD_AUDIT_DEADLINE_MS (bench_lockflood).

BENCH_MINE := scale parts race lock start
BENCH_BINS := $(patsubst %,$(BUILD)/bench/bench_%,$(BENCH_MINE))
BENCH_LIB_OBJS := $(call obj,bench/lib/bench.c tests/lib/xlrt_kcount.c \
	tests/lib/xlrt_tree.c)
BENCH_PROG_SRCS := bench/progs/bench_tasks.c bench/progs/bench_racer.c \
	bench/progs/bench_barekill.c bench/progs/bench_true.c
BENCH_PROGS := $(patsubst bench/progs/%.c,$(BUILD)/bench/progs/%,$(BENCH_PROG_SRCS)) \
	$(BUILD)/bench/progs/bench_true_dyn
BENCH_RESULTS ?= bench/results
# A short smoke run, kept out of bench/results and out of RESULTS.md.
ifeq ($(BENCH_QUICK),1)
BENCH_RESULTS := $(BUILD)/bench-quick
export BENCH_TRIALS ?= 10
export BENCH_BUDGET_MS ?= 200
export BENCH_REPS ?= 2
export BENCH_SCALE_MAX ?= 1000
export BENCH_BYST_MAX ?= 1000
export BENCH_LOCK_REPS ?= 1
export BENCH_PARTS_REPS ?= 30
export BENCH_START_REPS ?= 30
export BENCH_FLOOD_LOCKS ?= 20000
export BENCH_FLOOD_REPS ?= 10
export BENCH_FLOOD_CENSUS_REPS ?= 1
export BENCH_FLOOD_BUDGET_S ?= 20
endif

# The spawn and daemon helpers' benchmarks, when their fragments are in.
-include bench/bench_spawn.mk
-include bench/bench_daemon.mk
-include bench/bench_stuck.mk
-include bench/bench_audit.mk
-include bench/bench_lockflood.mk
-include bench/bench_compare.mk
BENCH_EXTRA := $(if $(wildcard bench/bench_spawn.mk),bench-spawn) \
	$(if $(wildcard bench/bench_daemon.mk),bench-daemon bench-daemon-faults) \
	$(if $(wildcard bench/bench_stuck.mk),bench-stuck) \
	$(if $(wildcard bench/bench_audit.mk),bench-audit) \
	$(if $(wildcard bench/bench_lockflood.mk),bench-lockflood)

$(BUILD)/obj/bench/%.o: CFLAGS_ALL += -Ibench/lib -Itests/lib
.SECONDARY: $(patsubst %,$(BUILD)/obj/bench/bench_%.o,$(BENCH_MINE))

$(BUILD)/bench/bench_%: $(BUILD)/obj/bench/bench_%.o $(BENCH_LIB_OBJS) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lpthread -lm

# Static, like the test programs: the racer forks as fast as a small
# attacker would, not at the speed of a process with libxl mapped.
$(BUILD)/bench/progs/%: bench/progs/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) -static -pthread \
		-o $@ $< $(LDFLAGS)

# The same do-nothing program linked against libc alone, dynamically:
# the floor of a dynamic executable's start (bench_start).
$(BUILD)/bench/progs/bench_true_dyn: bench/progs/bench_true.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) -o $@ $< $(LDFLAGS)

.PHONY: bench bench-build bench-core bench-plot
bench-build: $(BENCH_BINS) $(BENCH_PROGS) $(XLR_BIN)

# Each benchmark's start and end, with the load average then, go to
# load.txt: the machine is shared, and RESULTS.md says how busy it was.
BENCH_RUN = BENCH_BUILD=$(BUILD) BENCH_RESULTS=$(BENCH_RESULTS) \
	bash -c 'set -o pipefail; \
	echo "$$1 start $$(date -u "+%Y-%m-%d %H:%M:%S") $$(cut -d" " -f1-4 /proc/loadavg)" >>$(BENCH_RESULTS)/load.txt; \
	"$$0" 2>&1 | tee $(BENCH_RESULTS)/$$1.txt; r=$$?; \
	echo "$$1 end $$(date -u "+%Y-%m-%d %H:%M:%S") $$(cut -d" " -f1-4 /proc/loadavg)" >>$(BENCH_RESULTS)/load.txt; \
	exit $$r'

bench-core: bench-build
	@mkdir -p $(BENCH_RESULTS)
	@rm -f $(BENCH_RESULTS)/load.txt
	$(BENCH_RUN) $(BUILD)/bench/bench_parts parts
	$(BENCH_RUN) $(BUILD)/bench/bench_race race
	$(BENCH_RUN) $(BUILD)/bench/bench_scale scale
	$(BENCH_RUN) $(BUILD)/bench/bench_lock lock
	$(BENCH_RUN) $(BUILD)/bench/bench_start start

# One after another, so that no benchmark runs beside another.
# The extras are built first, so that their .txt holds what they print
# and no compiler lines.  RESULTS.md is then written from the results
# of this run alone (bench/results-md), and the plots drawn from them.
bench: bench-build $(BENCH_EXTRA_BINS)
	$(MAKE) --no-print-directory bench-core
	$(foreach t,$(BENCH_EXTRA),bash -c 'set -o pipefail; \
		echo "$(t) start $$(date -u "+%Y-%m-%d %H:%M:%S") $$(cut -d" " -f1-4 /proc/loadavg)" >>$(BENCH_RESULTS)/load.txt; \
		$(MAKE) -s --no-print-directory $(t) 2>&1 | tee $(BENCH_RESULTS)/$(t).txt; r=$$?; \
		echo "$(t) end $$(date -u "+%Y-%m-%d %H:%M:%S") $$(cut -d" " -f1-4 /proc/loadavg)" >>$(BENCH_RESULTS)/load.txt; \
		exit $$r' &&) true
	$(if $(filter 1,$(BENCH_QUICK)),@echo "bench: quick run: results in $(BENCH_RESULTS); RESULTS.md untouched", \
		BENCH_RESULTS=$(BENCH_RESULTS) bench/results-md >bench/RESULTS.md.new && \
		mv bench/RESULTS.md.new bench/RESULTS.md && $(MAKE) --no-print-directory bench-plot)

# RESULTS.md again from what bench/results holds (after editing the
# script's prose, say), without running anything.
.PHONY: bench-results
bench-results:
	bench/results-md >bench/RESULTS.md.new && mv bench/RESULTS.md.new bench/RESULTS.md

# gnuplot is an optional extra: installed here, never for make check.
bench-plot:
	scripts/install-deps gnuplot-nox
	BENCH_RESULTS=$(BENCH_RESULTS) \
		BENCH_PLOTS=$(if $(filter 1,$(BENCH_QUICK)),$(BENCH_RESULTS)/plots,bench/plots) \
		bench/plot
