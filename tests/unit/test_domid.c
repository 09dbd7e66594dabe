/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_domid.c - parsing a DOMID: table-driven, every kind of bad input.
 */
#include "xlr_test.h"

static void test_domid_table(void **state)
{
    static const struct {
        const char *in;
        int rc;
        uint32_t domid;
    } cases[] = {
        { "1", 0, 1 },
        { "5", 0, 5 },
        { "32751", 0, 32751 },
        { "32752", XLREAPER_ERROR_INVAL, 0 },   /* DOMID_FIRST_RESERVED */
        { "32767", XLREAPER_ERROR_INVAL, 0 },
        { "65535", XLREAPER_ERROR_INVAL, 0 },
        { "4294967297", XLREAPER_ERROR_INVAL, 0 },
        { "99999999999999999999", XLREAPER_ERROR_INVAL, 0 },
        { "0", XLREAPER_ERROR_INVAL, 0 },       /* dom0 */
        { "00", XLREAPER_ERROR_INVAL, 0 },
        { "07", XLREAPER_ERROR_INVAL, 0 },      /* octal or decimal? */
        { "-1", XLREAPER_ERROR_INVAL, 0 },
        { "+1", XLREAPER_ERROR_INVAL, 0 },
        { " 1", XLREAPER_ERROR_INVAL, 0 },
        { "1 ", XLREAPER_ERROR_INVAL, 0 },
        { "1x", XLREAPER_ERROR_INVAL, 0 },
        { "0x10", XLREAPER_ERROR_INVAL, 0 },
        { "abc", XLREAPER_ERROR_INVAL, 0 },
        { "", XLREAPER_ERROR_INVAL, 0 },
        { "1\n", XLREAPER_ERROR_INVAL, 0 },
        { "1.0", XLREAPER_ERROR_INVAL, 0 },
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t d = 12345;
        int rc = xlreaper_domid_parse(cases[i].in, &d);
        if (rc != cases[i].rc)
            fail_msg("domid '%s': rc %d, want %d", cases[i].in, rc,
                     cases[i].rc);
        if (!rc && d != cases[i].domid)
            fail_msg("domid '%s': %u, want %u", cases[i].in, d,
                     cases[i].domid);
        if (rc && d != 12345)
            fail_msg("domid '%s': output written on failure", cases[i].in);
    }
    assert_int_equal(xlreaper_domid_parse(NULL, NULL), XLREAPER_ERROR_INVAL);
}

static void test_max_domid_is_xen_s(void **state)
{
    (void)state;
    /* DOMID_FIRST_RESERVED is 0x7FF0 in Xen 4.17's public headers. */
    assert_int_equal(xlreaper_max_domid(), 0x7FF0 - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_domid_table),
        cmocka_unit_test(test_max_domid_is_xen_s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
