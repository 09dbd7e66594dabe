/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * replay.c - a fuzz target without libFuzzer: runs it once on every file
 * named, or in a directory named, so that `make check` replays each
 * corpus and every kept regression (tests/fuzz/README.md).  Built with
 * ASan and UBSan: an input that crashes, leaks or hits UB fails check.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned runs;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;

    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (;;) {
        size_t n;
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        n = fread(buf + len, 1, cap - len, f);
        if (!n)
            break;
        len += n;
    }
    if (ferror(f)) {
        fprintf(stderr, "replay: %s: read error\n", path);
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    if (getenv("XLR_FUZZ_VERBOSE"))
        fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    /* An exact-size copy: reading past the input is caught as it is
     * under libFuzzer. */
    {
        uint8_t *in = malloc(len ? len : 1);
        if (!in)
            abort();
        memcpy(in, buf, len);
        free(buf);
        LLVMFuzzerTestOneInput(in, len);
        free(in);
    }
    runs++;
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
    struct stat st;
    struct dirent *de;
    char **names = NULL, **grown;
    size_t n = 0;
    int rc = 0;
    DIR *d;

    if (stat(path, &st) < 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return run_file(path);
    d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        grown = realloc(names, (n + 1) * sizeof(*names));
        if (!grown)
            abort();
        names = grown;
        if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0)
            abort();
        n++;
    }
    closedir(d);
    if (n) /* names is NULL in an empty directory: not for qsort */
        qsort(names, n, sizeof(*names), cmp);
    for (size_t i = 0; i < n; i++) {
        if (run_file(names[i]) < 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;

    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i]) < 0)
            rc = 1;
    printf("replay %s: %u inputs, %s\n", argv[0], runs,
           rc ? "FAILED (unreadable input)" : "no crash, leak or UB");
    return rc;
}
