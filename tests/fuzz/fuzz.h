/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz.h - what every fuzz target shares (tests/fuzz/README.md).
 *
 * A target is one LLVMFuzzerTestOneInput, built twice: with libFuzzer
 * for `make fuzz`, and with replay.c's main for `make check`, which runs
 * it on every file of its corpus and of its regressions.  Both builds
 * have ASan and UBSan, and a target aborts (FZ_ASSERT) when a property
 * of the parser it drives does not hold, so a wrong answer fails like a
 * crash does.
 */
#ifndef XLR_FUZZ_H
#define XLR_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xlreaper_internal.h"
#include "xlreaper_host.h"
#include "xlreaper_qemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts, naming the property, when cond is false. */
#define FZ_ASSERT(cond)                                                       \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                         \
            abort();                                                          \
        }                                                                     \
    } while (0)

/* A logger that formats every message (so a bad format argument is
 * caught) and drops it; XLR_FUZZ_LOG=1 prints them. */
xentoollog_logger *fz_logger(void);

/* A ctx with a passwd table of its own (the range base at 131072, the
 * pet at 130000) and no subordinate ids, its config loaded from the
 * defaults.  One per process, never freed. */
xlreaper_ctx *fz_ctx(void);

/* data as an exact-size copy, not NUL-terminated, that ends at an
 * inaccessible page: any read past size faults.  One at a time: the
 * next call reuses the memory.  Given back by fz_copy_free with the
 * same size. */
char *fz_copy(const uint8_t *data, size_t size);
void fz_copy_free(char *p, size_t size);
/* data as a NUL-terminated heap string (NULs inside stay). */
char *fz_strdup(const uint8_t *data, size_t size);

#define FZ_BASE_UID 131072u
#define FZ_PET_UID 130000u

#endif /* XLR_FUZZ_H */
