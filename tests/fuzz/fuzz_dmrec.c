/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_dmrec.c - root's record of a DM (xlreaper__dmrec_parse), which
 * the audit reads from the run directory.  Only root writes it, but the
 * parser must still hold for any text: not NUL-terminated.  Properties:
 * no crash, leak or UB; a record accepted has a domid, a pid, a uid
 * and gid line, a root that is absolute or none, and at least one
 * argument, each NUL-terminated inside argv_len.
 */
#include <string.h>

#include "fuzz.h"
#include "xlreaper_audit_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_copy(data, size);
    xlreaper__dmrec r;
    int rc = xlreaper__dmrec_parse(text, size, &r);

    FZ_ASSERT(rc == 0 || rc == XLREAPER_ERROR_INVAL);
    if (!rc) {
        FZ_ASSERT(r.domid >= 1 && r.pid > 0);
        FZ_ASSERT(!r.root || r.root[0] == '/');
        FZ_ASSERT(r.argv && r.argv_len && !r.argv[r.argv_len - 1]);
        FZ_ASSERT(r.num_rl <= XLREAPER_MAX_RLIMITS + 1);
        xlreaper__dmrec_dispose(&r);
    }
    fz_copy_free(text, size);
    return 0;
}
