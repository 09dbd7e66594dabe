/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * fuzz_config.c - the config file, through the loader the programs use
 * (xlreaper_config_load after the read): libxlutil's parser, our key
 * walk (xlreaper_cfgkeys.c), the range checks and the passwd settle.
 *
 * Properties: a text either loads or is refused, without a crash, a
 * leak or UB, in libxlutil too; and what loads prints back (as
 * `xl-reaper check` prints it, xlreaper_config_key_value) as a config
 * that loads to the same values.
 */
#include <string.h>

#include "fuzz.h"

#define VALUE_MAX 4200

/* Every key = value the config says, as `check` prints them. */
static char *format_all(const xlreaper_config *c, size_t *len_r)
{
    char *out = NULL, value[VALUE_MAX];
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);

    FZ_ASSERT(m);
    for (unsigned i = 0; xlreaper_config_key_name(i); i++) {
        int r = xlreaper_config_key_value(c, i, value, sizeof(value));

        FZ_ASSERT(r == 0 || r == 1);
        if (!r)
            fprintf(m, "%s = %s\n", xlreaper_config_key_name(i), value);
    }
    fclose(m);
    *len_r = len;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xlreaper_ctx *ctx = fz_ctx();
    char *text = fz_copy(data, size), *first, *second;
    size_t first_len, second_len;
    int rc;

    rc = xlreaper__config_load_text(ctx, "fuzz.conf", text, size);
    fz_copy_free(text, size);
    if (rc) {
        FZ_ASSERT(rc == XLREAPER_ERROR_INVAL || rc == XLREAPER_ERROR_NOMEM);
        return 0;
    }
    first = format_all(xlreaper_config_get(ctx), &first_len);
    rc = xlreaper__config_load_text(ctx, "printed.conf", first, first_len);
    if (rc) {
        fprintf(stderr, "printed config refused:\n%s", first);
        FZ_ASSERT(rc == 0);
    }
    second = format_all(xlreaper_config_get(ctx), &second_len);
    if (first_len != second_len || memcmp(first, second, first_len)) {
        fprintf(stderr, "printed:\n%s\nreloaded:\n%s", first, second);
        FZ_ASSERT(!"the printed config loads to other values");
    }
    free(first);
    free(second);
    return 0;
}
