/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_array.c - the library's growable array (xlreaper__grow): it
 * doubles from its first size, keeps what it held, and refuses a size
 * that would overflow instead of allocating a short array.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "xlr_test.h"
#include "xlreaper_internal.h"

static void test_grows_and_keeps(void **state)
{
    unsigned num = 0, cap = 0, want_cap = 0;
    unsigned *v = NULL;
    (void)state;

    for (unsigned i = 0; i < 1000; i++) {
        unsigned *n = xlreaper__grow(v, num, &cap, sizeof(*n), 16);

        assert_non_null(n);
        v = n;
        if (num == want_cap)
            want_cap = want_cap ? want_cap * 2 : 16;
        assert_int_equal(cap, want_cap);
        v[num++] = i * 7;
    }
    assert_int_equal(cap, 1024);
    for (unsigned i = 0; i < num; i++)
        assert_int_equal(v[i], i * 7);
    free(v);
}

static void test_room_left_is_not_realloc(void **state)
{
    unsigned cap = 4;
    char buf[4];
    (void)state;

    /* Not heap memory: a realloc here would crash. */
    assert_ptr_equal(xlreaper__grow(buf, 3, &cap, 1, 16), buf);
    assert_int_equal(cap, 4);
}

/*
 * Sizes whose doubling wraps to a small number: a helper without the
 * checks would realloc p to a few bytes and hand it back as room for
 * an element far beyond them.
 */
static void test_refuses_overflow(void **state)
{
    unsigned cap = UINT_MAX / 2 + 2;
    void *p = malloc(1);
    (void)state;

    assert_non_null(p);
    /* Twice cap is not an unsigned: refused, nothing touched. */
    assert_null(xlreaper__grow(p, cap, &cap, 1, 16));
    assert_int_equal(cap, UINT_MAX / 2 + 2);
    /* Twice cap elements of this size are not a size_t. */
    cap = 16;
    assert_null(xlreaper__grow(p, 16, &cap, SIZE_MAX / 32 + 2, 16));
    assert_int_equal(cap, 16);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_and_keeps),
        cmocka_unit_test(test_room_left_is_not_realloc),
        cmocka_unit_test(test_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
