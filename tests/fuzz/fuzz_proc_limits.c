/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_proc_limits.c - the rest of the /proc text the audit reads:
 * /proc/PID/limits (xlreaper__audit_parse_limit, every resource),
 * /proc/stat's "processes" line (xlreaper__audit_parse_forks_line), and
 * the start time in /proc/PID/stat that the runas window's record holds
 * (xlreaper__parse_stat_starttime: a DM names itself, ')' included).
 * Not NUL-terminated for the first and the last; a line for the second,
 * as getline gives it.  Properties: no crash, leak or UB, only known
 * resources parse, a forks count only from a "processes " line, and a
 * start time only from text with a ')'.
 */
#include <string.h>
#include <sys/resource.h>

#include "fuzz.h"
#include "xlreaper_audit_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_copy(data, size), *line = fz_strdup(data, size);
    uint64_t soft, hard, forks;
    unsigned long long start;

    for (int r = -1; r <= RLIM_NLIMITS; r++) {
        int rc = xlreaper__audit_parse_limit(text, size, r, &soft, &hard);
        FZ_ASSERT(rc == 0 || rc == XLREAPER_ERROR_INVAL);
        if (!rc)
            FZ_ASSERT(r >= 0 && r < RLIM_NLIMITS);
    }
    FZ_ASSERT(strcmp(xlreaper__audit_rlimit_name(-1), "?") == 0);
    if (xlreaper__audit_parse_forks_line(line, &forks))
        FZ_ASSERT(!strncmp(line, "processes ", 10));
    if (!xlreaper__parse_stat_starttime(text, size, &start))
        FZ_ASSERT(memchr(text, ')', size));
    fz_copy_free(text, size);
    free(line);
    return 0;
}
