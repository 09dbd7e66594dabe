/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * xlreaper_array.c - the growable array every list of the library is
 * (xlreaper__grow in xlreaper_internal.h): doubled when full, so that n
 * additions cost O(n) copies in all.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "xlreaper_internal.h"

void *xlreaper__grow(void *items, unsigned num, unsigned *cap, size_t size,
                     unsigned first)
{
    unsigned ncap;
    void *n;

    if (num < *cap)
        return items;
    if (!*cap)
        ncap = first ? first : 1;
    else if (*cap > UINT_MAX / 2)
        return NULL;
    else
        ncap = *cap * 2;
    if (!size || ncap > SIZE_MAX / size)
        return NULL;
    n = realloc(items, (size_t)ncap * size);
    if (!n)
        return NULL;
    *cap = ncap;
    return n;
}
