# SPDX-License-Identifier: LGPL-2.1-only
# make analyze: gcc -fanalyzer, scan-build and cppcheck over the whole
# tree; fails on any finding (tests/fuzz/analyze says how a false
# positive is silenced).
ANALYZE_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g \
	$(filter-out -Werror,$(WARN)) \
	-Itools/libxl-reaper/include $(LIB_INCS) -Itools/xl-hooks/common \
	-Itools/xl-hooks/xl-reaperd \
	-Itests/lib -Itests/fuzz -Ibench/lib $(PKG_CFLAGS) $(CMOCKA_CFLAGS)

ANALYZE_PATHS ?= all

.PHONY: analyze
analyze: | $(DEPS_STAMP)
	ANALYZE_CFLAGS="$(ANALYZE_CFLAGS)" LIB_INCS="$(LIB_INCS)" ANALYZE_OUT=build/analyze \
		ANALYZE_PATHS="$(ANALYZE_PATHS)" \
		tests/fuzz/analyze
