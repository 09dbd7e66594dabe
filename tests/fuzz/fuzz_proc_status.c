/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_proc_status.c - /proc/PID/status text, as the reap and census
 * read it (xlreaper__parse_status) and as the audit does
 * (xlreaper__audit_parse_status).  A DM chooses its own Name:, and the
 * buffer is the bytes read, not NUL-terminated.  Properties: no crash,
 * leak or UB; the two agree on the fields they share; a parsed name is
 * printable ASCII and NUL-terminated within comm.
 */
#include <string.h>

#include "fuzz.h"
#include "xlreaper_audit_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_copy(data, size);
    xlreaper_task at;
    xlreaper_task t;
    unsigned threads;
    int rc, arc;

    rc = xlreaper__parse_status(text, size, &t, &threads);
    arc = xlreaper__audit_parse_status(text, size, &at);
    if (!arc)
        FZ_ASSERT(!rc); /* the audit needs more fields, never fewer */
    if (!rc) {
        size_t n = strnlen(t.comm, sizeof(t.comm));
        FZ_ASSERT(n < sizeof(t.comm));
        for (size_t i = 0; i < n; i++)
            FZ_ASSERT(t.comm[i] >= 0x20 && t.comm[i] < 0x7f);
        FZ_ASSERT((t.state >= 'A' && t.state <= 'Z') ||
                  (t.state >= 'a' && t.state <= 'z'));
    }
    if (!arc) {
        FZ_ASSERT(at.ruid == t.ruid && at.euid == t.euid &&
                  at.suid == t.suid && at.fsuid == t.fsuid);
        FZ_ASSERT(at.tid == t.tid && at.tgid == t.tgid);
        FZ_ASSERT(at.audit.threads == threads);
        FZ_ASSERT(at.audit.nnp >= -1 && at.audit.nnp <= 1);
    }
    fz_copy_free(text, size);
    return 0;
}
