/* SPDX-License-Identifier: LGPL-2.1-only */
/* xlrt_caps.h - xl-reaperd's unit's capabilities, for tests (xlrt_caps.c). */
#ifndef XLRT_CAPS_H
#define XLRT_CAPS_H

#include <stdint.h>

/* config/xl-reaperd.service's CapabilityBoundingSet= as a mask (bit n is
 * capability n), read from the unit itself in the source tree (the
 * suites run at its top); 0 when it cannot be read. */
uint64_t xlrt_unit_caps(void);

/* This task with only the capabilities in keep: the bounding set, and
 * the permitted and effective sets, which is what a root process gets
 * under the unit.  0, or -1 with errno. */
int xlrt_caps_only(uint64_t keep);

#endif
