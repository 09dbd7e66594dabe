# SPDX-License-Identifier: LGPL-2.1-only
# bench-compare: the head against another commit, in the same run.
#   make bench-compare [BASE=REV]
# builds REV (default main) beside the head: its tree from git in
# build/bench-compare/<commit>/src, built there by its own Makefile
# (a commit from before the library moved into folders has the flat
# layout and its own rules), and the head's benchmark sources built
# against each library.  Then bench/compare runs bench_race,
# bench_spawn, bench_stuck, bench_lockflood and bench_lock for the two
# builds, interleaved, and prints for each figure the ratio head/base of each
# pair of runs: their median, and their spread (min-max).  Also in
# bench/results/compare-<base>-<head>.md.  A change to the lock, the
# reap, the spawn or a helper lands with that file in its commit.
# It starts tasks under uids and measures the machine: on a shared
# host, build first and run under the tests' lock, e.g.
#   make bench-compare-build BASE=main
#   flock /tmp/xlr-tests.lock make bench-compare BASE=main
# Knobs (environment): BENCH_COMPARE_PAIRS (3), BENCH_COMPARE_FLOOD_PAIRS
# (2), and each benchmark's own (bench/compare sets short runs unless
# they are set); BENCH_COMPARE_REREAD=DIR sums up an earlier compare's
# runs again without running anything.  main against itself took 7 min
# on the 2-core development host, with both builds slow under the flood
# (each flooded measurement stops after 20 s).

# $(call bench_rev_tree,REV,DIR,TARGETS): REV's tree from git in
# DIR/src and TARGETS built there by REV's own Makefile.
define bench_rev_tree
	rm -rf $(2) && mkdir -p $(2)/src
	git archive $(1) | tar -x -C $(2)/src
	+$(MAKE) -s -C $(2)/src NODEPS=1 $(3)
endef
# Compiler flags for a source of ours built against the library of
# such a tree: its headers first, from every folder of its library
# (the folders it has, or the one flat folder before the move).
bench_rev_cflags = -I$(1)/src/tools/libxl-reaper/include \
	$$(find $(1)/src/tools/libxl-reaper -type d -printf ' -I%p') \
	-Ibench/lib -Itests/lib $(CFLAGS_ALL)

BASE ?= main
BENCH_CMP_REV := $(shell git rev-parse --short=12 --verify -q '$(BASE)^{commit}' 2>/dev/null)
BENCH_CMP_DIR := $(BUILD)/bench-compare/$(BENCH_CMP_REV)
BENCH_CMP_BENCHES := race spawn stuck lockflood lock
BENCH_CMP_BINS := $(patsubst %,$(BENCH_CMP_DIR)/bench/bench_%,$(BENCH_CMP_BENCHES))
# What each benchmark runs, built by the tree's own Makefile.
BENCH_CMP_TARGETS := build/lib/libxlreaper.a build/bin/xl-reaper \
	build/bin/xl-reaperd build/tests/progs/fuse_holder \
	build/tests/progs/fake_xenstored build/tests/progs/spawn_probe \
	build/bench/progs/bench_tasks build/bench/progs/bench_racer \
	build/bench/progs/bench_barekill build/bench/progs/bench_true
BENCH_CMP_LIBSRCS := bench/lib/bench.c tests/lib/xlrt_kcount.c tests/lib/xlrt_tree.c \
	tests/lib/xlrt_daemon.c tests/lib/xlrt_caps.c tests/lib/xlrt_fuse.c

# The base's tree, once per commit (the directory is named after it).
$(BENCH_CMP_DIR)/.built:
	@test -n "$(BENCH_CMP_REV)" || { echo "bench-compare: BASE=$(BASE) is not a commit" >&2; exit 1; }
	$(call bench_rev_tree,$(BENCH_CMP_REV),$(BENCH_CMP_DIR),$(BENCH_CMP_TARGETS))
	echo $(BENCH_CMP_REV) >$@

# The head's benchmark sources against the base's library.
$(BENCH_CMP_DIR)/bench/bench_%: bench/bench_%.c $(BENCH_CMP_LIBSRCS) \
		bench/lib/bench.h $(BENCH_CMP_DIR)/.built
	@mkdir -p $(@D)
	$(CC) $(call bench_rev_cflags,$(BENCH_CMP_DIR)) -o $@ $< \
		$(BENCH_CMP_LIBSRCS) $(BENCH_CMP_DIR)/src/build/lib/libxlreaper.a \
		$(LDFLAGS_ALL) $(PKG_LIBS) -lpthread -lm

.PHONY: bench-compare bench-compare-build
bench-compare-build: $(patsubst %,$(BUILD)/bench/bench_%,$(BENCH_CMP_BENCHES)) \
		$(BENCH_LOCKFLOOD_NEEDS) $(BUILD)/tests/progs/fuse_holder \
		$(BUILD)/tests/progs/spawn_probe $(BENCH_CMP_BINS)

bench-compare: bench-compare-build
	mkdir -p $(BENCH_RESULTS)
	BENCH_RESULTS=$(BENCH_RESULTS) bench/compare \
		"$(BASE) ($(BENCH_CMP_REV))" $(BENCH_CMP_DIR)/src/build \
		$(BENCH_CMP_DIR)/bench \
		"head ($$(git rev-parse --short=12 HEAD)$$(git diff --quiet HEAD -- tools bench tests || echo +changes))" \
		$(BUILD) $(BUILD)/bench
