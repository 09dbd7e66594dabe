/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_qemu_help.c - the `qemu -help` text the wrapper reads to learn
 * which uid-switch and chroot options the installed QEMU takes
 * (xlreaper__qemu_help_features).  The text is the binary's output:
 * any bytes, not NUL-terminated.  Properties: no crash, leak or UB, only
 * known feature bits, and a text with no "-runas", "-chroot" or
 * "-run-with" in it offers nothing.
 */
#include <string.h>

#include "fuzz.h"

#define ALL_FEATURES                                                          \
    (XLREAPER__QEMU_HAS_RUNAS | XLREAPER__QEMU_HAS_RUN_WITH_USER |            \
     XLREAPER__QEMU_HAS_CHROOT | XLREAPER__QEMU_HAS_RUN_WITH_CHROOT)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_copy(data, size);
    unsigned f = xlreaper__qemu_help_features(text, size);

    FZ_ASSERT(!(f & ~ALL_FEATURES));
    if (!memmem(text, size, "-run", 4) && !memmem(text, size, "-chroot", 7))
        FZ_ASSERT(f == 0);
    if (!memmem(text, size, "-run-with", 9))
        FZ_ASSERT(!(f & (XLREAPER__QEMU_HAS_RUN_WITH_USER |
                         XLREAPER__QEMU_HAS_RUN_WITH_CHROOT)));
    fz_copy_free(text, size);
    return 0;
}
