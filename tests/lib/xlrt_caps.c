/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlrt_caps.c - xl-reaperd's unit's capabilities, for tests: read from
 * config/xl-reaperd.service itself, so that the suites run the reap
 * under the set the unit ships and follow it when it changes.  No
 * cmocka: benchmarks may link it too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "xlrt_caps.h"

/* A capability's number, as <linux/capability.h> defines it; -1. */
static int cap_number(const char *name)
{
    FILE *h = fopen("/usr/include/linux/capability.h", "re");
    char line[256], want[64];
    int n = -1;

    if (!h)
        return -1;
    snprintf(want, sizeof(want), "#define %s ", name);
    while (n < 0 && fgets(line, sizeof(line), h))
        if (!strncmp(line, want, strlen(want)))
            n = atoi(line + strlen(want));
    fclose(h);
    return n;
}

uint64_t xlrt_unit_caps(void)
{
    FILE *u = fopen("config/xl-reaperd.service", "re");
    char line[512];
    uint64_t mask = 0;

    if (!u)
        return 0;
    while (fgets(line, sizeof(line), u)) {
        char *save = NULL;

        if (strncmp(line, "CapabilityBoundingSet=", 22))
            continue;
        for (char *t = strtok_r(line + 22, " \n", &save); t;
             t = strtok_r(NULL, " \n", &save)) {
            int c = cap_number(t);

            if (c < 0 || c > 63) {
                fclose(u);
                return 0;
            }
            mask |= 1ull << c;
        }
    }
    fclose(u);
    return mask;
}

int xlrt_caps_only(uint64_t keep)
{
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2] = { { 0 } };

    for (int c = 0; c <= CAP_LAST_CAP; c++)
        if (!(keep & (1ull << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 &&
            errno != EINVAL)
            return -1;
    data[0].effective = data[0].permitted = (uint32_t)keep;
    data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
    return (int)syscall(SYS_capset, &hdr, data);
}
