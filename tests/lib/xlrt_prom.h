/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_prom.h - checking metrics in Prometheus' text format, as
 * node_exporter's textfile collector will read them: by promtool
 * itself (Debian's prometheus package; scripts/install-deps installs
 * it), and by what promtool lets through.
 */
#ifndef XLRT_PROM_H
#define XLRT_PROM_H

#include <stdbool.h>

/*
 * Fails the test unless text passes `promtool check metrics` with no
 * complaint (lint included), and every series appears once, each
 * family's samples together after its TYPE line.  A missing promtool
 * fails: it is a dependency of the suite, not an option.
 */
void xlrt_prom_check(const char *text);

/* The value of the series "name{labels}" exactly as written (labels in
 * the order the writer puts them), or fails the test when it is not
 * there. */
double xlrt_prom_value(const char *text, const char *series);

/* Whether that series is there. */
bool xlrt_prom_has(const char *text, const char *series);

#endif /* XLRT_PROM_H */
