/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * test_file_pool.c - the arithmetic of the host's file table against
 * the DMs' limits (xlreaper_pools.c): one DM's share, the DMs that fill
 * it, saturation, and the line check and the audit print; then reading
 * the numbers from a /proc/sys of the test's own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "xlr_test.h"
#include "xlreaper_host.h"

typedef struct {
    const char *what;
    xlreaper__file_pool_in in;
    uint64_t per_dm, all, dms_to_fill;
    bool over_share, all_over;
} pool_case;

static void test_calc_table(void **state)
{
    static const pool_case cases[] = {
        /* The shipped limits on a 4 GiB dom0: within 1/8, but the
         * range's 32751 DMs together exceed it. */
        { "shipped, 4 GiB dom0",
          { 419000, 65530, 256, 192, 32751 },
          49152,
          49152ull * 32751,
          9,
          false,
          true },
        /* The old default: one DM alone takes 2.5 times all of it. */
        { "4096, 4 GiB dom0",
          { 419000, 65530, 256, 4096, 32751 },
          1048576,
          1048576ull * 32751,
          1,
          true,
          true },
        /* Exactly 1/8 is within; one more file is not. */
        { "at 1/8", { 8000, 0, 10, 100, 8 }, 1000, 8000, 8, false, false },
        { "past 1/8", { 7999, 0, 10, 100, 8 }, 1000, 8000, 8, true, true },
        /* All of them together exactly at file-max is not over it. */
        { "all at file-max",
          { 80000, 0, 10, 100, 80 },
          1000,
          80000,
          80,
          false,
          false },
        /* systemd's LONG_MAX: nothing the config allows reaches it. */
        { "LONG_MAX",
          { 9223372036854775807ull, 65530, 1u << 20, 1u << 20, 32751 },
          1ull << 40,
          (1ull << 40) * 32751,
          8388608,
          false,
          false },
        /* Saturation, never a wrap to a small number. */
        { "saturated",
          { 1000, 0, UINT64_MAX, 2, 2 },
          UINT64_MAX,
          UINT64_MAX,
          1,
          true,
          true },
        /* No DM counted (the audit with no live domain). */
        { "none live", { 1000, 0, 10, 10, 0 }, 100, 0, 10, false, false },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const pool_case *c = &cases[i];
        xlreaper__file_pool p;

        xlreaper__file_pool_calc(&c->in, &p);
        if (p.per_dm != c->per_dm || p.all != c->all ||
            p.dms_to_fill != c->dms_to_fill || p.over_share != c->over_share ||
            p.all_over != c->all_over)
            fail_msg("%s: per_dm %llu all %llu to_fill %llu over_share %d "
                     "all_over %d",
                     c->what, (unsigned long long)p.per_dm,
                     (unsigned long long)p.all,
                     (unsigned long long)p.dms_to_fill, p.over_share,
                     p.all_over);
    }
}

static void test_text(void **state)
{
    xlreaper__file_pool_in in = { 419000, 65530, 256, 4096, 32751 };
    xlreaper__file_pool p;
    char buf[1024];

    (void)state;
    xlreaper__file_pool_calc(&in, &p);
    assert_true(xlreaper__file_pool_text(&in, &p, "the range allows", buf,
                                         sizeof(buf)));
    if (!strstr(buf, "warning: fs.file-max 419000; one DM may hold "
                     "nproc_limit x nofile_limit = 256 x 4096 = 1048576 "
                     "files (250% of it; more than 1/8): a few DMs can take "
                     "every file of the host; 1 DM at its limits holds all") ||
        !strstr(buf, "the range allows 32751 (together they can exceed "
                     "it") ||
        !strstr(buf, "vm.max_map_count = 16775680 more"))
        fail_msg("%s", buf);

    in = (xlreaper__file_pool_in){ 419000, 65530, 256, 192, 1 };
    xlreaper__file_pool_calc(&in, &p);
    assert_false(
        xlreaper__file_pool_text(&in, &p, "live now are", buf, sizeof(buf)));
    if (strncmp(buf, "fs.file-max 419000; ", 20) ||
        !strstr(buf, "= 49152 files (11.7% of it; within 1/8); 9 DMs at "
                     "their limits hold all of it, live now are 1; "))
        fail_msg("%s", buf);
}

static void test_read(void **state)
{
    char *dir = xlrt_tmpdir(), sub[512], *a, *b, *c;
    xlreaper_ctx *ctx;
    xlreaper__file_pool_in in;

    (void)state;
    assert_int_equal(xlreaper_ctx_alloc(&ctx, xlrt_capture_logger()), 0);
    snprintf(sub, sizeof(sub), "%s/fs", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof(sub), "%s/vm", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    a = xlrt_write_file(dir, "fs/file-max", "9223372036854775807\n");
    b = xlrt_write_file(dir, "vm/max_map_count", "65530\n");
    /* No fs/nr_open yet: a value missing is a failure, not a zero. */
    {
        xlreaper_config cfg;

        xlreaper__config_init(&cfg);
        assert_int_equal(xlreaper__file_pool_read(dir, &cfg, 7, &in), -1);
        c = xlrt_write_file(dir, "fs/nr_open", "1048576\n");
        assert_int_equal(xlreaper__file_pool_read(dir, &cfg, 7, &in), 0);
        assert_true(in.file_max == 9223372036854775807ull);
        assert_int_equal(in.map_max, 65530);
        assert_int_equal(in.nproc, 256);
        assert_int_equal(in.nofile, 192);
        assert_int_equal(in.dms, 7);
        /* Malformed: refused, never read as a smaller number. */
        free(xlrt_write_file(dir, "fs/file-max", "12x\n"));
        assert_int_equal(xlreaper__file_pool_read(dir, &cfg, 7, &in), -1);
        free(xlrt_write_file(dir, "fs/file-max", "\n"));
        assert_int_equal(xlreaper__file_pool_read(dir, &cfg, 7, &in), -1);
        xlreaper__config_dispose(&cfg);
    }
    free(a);
    free(b);
    free(c);
    xlreaper_ctx_free(ctx);
    xlrt_tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calc_table),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_read),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
