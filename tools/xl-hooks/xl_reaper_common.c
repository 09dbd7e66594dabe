/*
 * xl_reaper_common.c - what the CLI's commands share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xl_reaper.h"

void xlr_error(const char *fmt, ...)
{
    va_list al;

    fputs("xl-reaper: ", stderr);
    va_start(al, fmt);
    vfprintf(stderr, fmt, al);
    va_end(al);
    fputc('\n', stderr);
}

int xlr_parse_domid(const char *arg, uint32_t *domid_r)
{
    if (!arg) {
        xlr_error("missing DOMID");
        return -1;
    }
    if (!strcmp(arg, "0")) {
        xlr_error("domid 0 is dom0: it has no device model uid (its uid "
                  "is the reaper's)");
        return -1;
    }
    if (xlreaper_domid_parse(arg, domid_r)) {
        xlr_error("invalid domid '%s': expected a decimal number from 1 "
                  "to %u",
                  arg, xlreaper_max_domid());
        return -1;
    }
    return 0;
}

int xlr_exit_code(int rc)
{
    switch (rc) {
    case 0:
        return XLR_EXIT_OK;
    case XLREAPER_ERROR_INVAL:
    case XLREAPER_ERROR_PERM:
        return XLR_EXIT_USAGE;
    case XLREAPER_ERROR_LOCK_TIMEOUT:
        return XLR_EXIT_LOCK;
    case XLREAPER_ERROR_REMAIN:
    case XLREAPER_ERROR_BUSY:
        return XLR_EXIT_REMAIN;
    default:
        return XLR_EXIT_FAIL;
    }
}

void xlr_print_reap(const xlr_cli *cli, const xlreaper_reap_result *res)
{
    char *s = NULL;

    if (cli->json) {
        if (!xlreaper_reap_result_json(res, &s))
            printf("%s\n", s);
    } else {
        s = xlreaper_reap_result_describe(res);
        if (s)
            printf("%s\n", s);
    }
    free(s);
    fflush(stdout);
}
