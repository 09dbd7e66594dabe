/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_start - what the CLI costs as a whole process before and
 * around its work (its goal: 2x the bare killer): fork + exec + wait
 * of a do-nothing program, of the bare exec'd killer (bench_barekill), and
 * of `xl-reaper uid`, `kill` and `status` on an empty DM uid, all
 * interleaved in the same run so that each ratio to the bare killer is
 * taken pair by pair.  $BENCH_START_ALT names a second xl-reaper (an
 * older build) timed in the same rounds: a same-run before/after.
 * Also the dynamic loader's own figures for each xl-reaper (objects
 * mapped, relocations, ld.so cycles, from LD_DEBUG=statistics).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define DOMID 6

enum {
    M_TRUE,
    M_TRUE_DYN,
    M_BARE,
    M_UID,
    M_KILL,
    M_STATUS,
    M_ALT_UID,
    M_ALT_KILL,
    NUM_METHODS
};

static const char *const method_name[NUM_METHODS] = {
    "do-nothing program, static",       "do-nothing program, dynamic (libc)",
    "bench_barekill PET UID (static)",  "xl-reaper uid DOMID",
    "xl-reaper kill DOMID (empty uid)", "xl-reaper status DOMID (empty uid)",
    "ALT xl-reaper uid DOMID",          "ALT xl-reaper kill DOMID (empty uid)",
};

static char *cli, *alt, *prog_true, *prog_true_dyn, *prog_bare;
static char pet[16], uidstr[16], domid[16];

static int run_method(int m, int64_t *us_r)
{
    char *argv[8] = { 0 };
    int st;

    switch (m) {
    case M_TRUE: argv[0] = prog_true; break;
    case M_TRUE_DYN: argv[0] = prog_true_dyn; break;
    case M_BARE:
        argv[0] = prog_bare;
        argv[1] = pet;
        argv[2] = uidstr;
        break;
    default:
        argv[0] = m >= M_ALT_UID ? alt : cli;
        argv[1] = "--config";
        argv[2] = (char *)bench_config_path();
        argv[3] = m == M_UID || m == M_ALT_UID ? "uid"
                  : m == M_STATUS              ? "status"
                                               : "kill";
        argv[4] = domid;
        break;
    }
    *us_r = bench_run(argv, NULL, 0, &st);
    if (*us_r < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "bench_start: %s failed (status %#x)\n",
                method_name[m], st);
        return -1;
    }
    return 0;
}

/* ---------- the dynamic loader's figures ---------- */

typedef struct {
    long objects, relocs;
    bench_samples cycles;
} ld_stats;

static long field(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* One run of `BIN --config C kill DOMID` with LD_DEBUG=statistics,
 * its report read back from LD_DEBUG_OUTPUT's file (BASE.PID). */
static void ld_sample(const char *bin, ld_stats *ld)
{
    char base[300], text[8192] = "";
    char *argv[] = { (char *)bin, "--config", (char *)bench_config_path(),
                     "kill",      domid,      NULL };
    struct dirent *de;
    DIR *d;
    int st;

    snprintf(base, sizeof(base), "%s/ld", bench_tmpdir());
    setenv("LD_DEBUG", "statistics", 1);
    setenv("LD_DEBUG_OUTPUT", base, 1);
    bench_run(argv, NULL, 0, &st);
    unsetenv("LD_DEBUG");
    unsetenv("LD_DEBUG_OUTPUT");
    d = opendir(bench_tmpdir());
    if (!d)
        return;
    while ((de = readdir(d))) {
        char path[600];
        FILE *f;
        size_t n;

        if (strncmp(de->d_name, "ld.", 3))
            continue;
        snprintf(path, sizeof(path), "%s/%s", bench_tmpdir(), de->d_name);
        f = fopen(path, "r");
        if (f) {
            n = fread(text, 1, sizeof(text) - 1, f);
            text[n] = '\0';
            fclose(f);
        }
        unlink(path);
    }
    closedir(d);
    if (field(text, "total startup time in dynamic loader: ") >= 0)
        bench_samples_add(&ld->cycles,
                          (double)field(text, "total startup time in "
                                              "dynamic loader: "));
    ld->relocs = field(text, "final number of relocations: ");
}

/* The number of objects ld.so maps for bin (ldd's list, vdso aside). */
static long ld_objects(const char *bin)
{
    char out[8192];
    char *argv[] = { (char *)bin, NULL };
    long n = 0;
    int st;

    setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
    bench_run(argv, out, sizeof(out), &st);
    unsetenv("LD_TRACE_LOADED_OBJECTS");
    for (char *p = out; (p = strchr(p, '\n')); p++)
        n++;
    return strstr(out, "linux-vdso") ? n - 1 : n;
}

static void ld_report(const char *label, const char *bin, FILE *sum)
{
    ld_stats ld = { 0 };

    for (int i = 0; i < 21; i++)
        ld_sample(bin, &ld);
    ld.objects = ld_objects(bin);
    printf("# %s: %ld objects mapped, %ld relocations, ld.so startup "
           "median %.0f cycles\n",
           label, ld.objects, ld.relocs, bench_median(&ld.cycles));
    fprintf(sum, "| %s | %ld | %ld | %.0f |\n", label, ld.objects, ld.relocs,
            bench_median(&ld.cycles));
    bench_samples_free(&ld.cycles);
}

int main(void)
{
    bench_samples s[NUM_METHODS] = { 0 }, ratio[NUM_METHODS] = { 0 };
    unsigned reps;
    int nm;
    FILE *csv, *sum;

    bench_init("bench_start");
    reps = bench_env("START_REPS", 300);
    cli = strdup(bench_cli());
    prog_true = strdup(bench_prog("bench_true"));
    prog_true_dyn = strdup(bench_prog("bench_true_dyn"));
    prog_bare = strdup(bench_prog("bench_barekill"));
    alt = getenv("BENCH_START_ALT");
    if (alt && access(alt, X_OK))
        bench_die("BENCH_START_ALT=%s is not executable", alt);
    nm = alt ? NUM_METHODS : M_ALT_UID;
    snprintf(pet, sizeof(pet), "%u", BENCH_PET);
    snprintf(uidstr, sizeof(uidstr), "%u", (unsigned)bench_dm_uid(DOMID));
    snprintf(domid, sizeof(domid), "%d", DOMID);
    printf("# %ld tasks on the system; %u rounds, each method once a "
           "round, the order rotated\n",
           bench_tasks_now(), reps);
    if (alt)
        printf("# ALT = %s\n", alt);
    csv = bench_csv("start", "method,rep,us");
    for (unsigned r = 0; r < reps; r++) {
        int64_t us[NUM_METHODS];

        for (int i = 0; i < nm; i++) {
            int m = (int)((i + r) % (unsigned)nm);
            if (run_method(m, &us[m]))
                bench_die("a run failed");
        }
        for (int m = 0; m < nm; m++) {
            bench_samples_add(&s[m], (double)us[m]);
            bench_samples_add(&ratio[m], (double)us[m] / (double)us[M_BARE]);
            fprintf(csv, "%d,%u,%lld\n", m, r, (long long)us[m]);
        }
    }
    fclose(csv);

    sum = bench_results_file("start.summary.md");
    fprintf(sum,
            "# bench_start: %s\n\n%u rounds, %ld tasks on the "
            "system; whole processes, fork to wait\n\n",
            bench_machine(), reps, bench_tasks_now());
    if (alt)
        fprintf(sum, "ALT = `%s`\n\n", alt);
    fprintf(sum, "| what | median | p10 | p90 | / bare killer "
                 "(paired median) |\n|---|---|---|---|---|\n");
    printf("%-40s %8s %8s %8s %8s\n", "method", "median", "p10", "p90",
           "/bare");
    for (int m = 0; m < nm; m++) {
        printf("%-40s %6.0fus %6.0fus %6.0fus %7.2fx\n", method_name[m],
               bench_median(&s[m]), bench_q(&s[m], 0.1), bench_q(&s[m], 0.9),
               bench_median(&ratio[m]));
        fprintf(sum, "| %s | %.0f us | %.0f us | %.0f us | %.2fx |\n",
                method_name[m], bench_median(&s[m]), bench_q(&s[m], 0.1),
                bench_q(&s[m], 0.9), bench_median(&ratio[m]));
        bench_samples_free(&s[m]);
        bench_samples_free(&ratio[m]);
    }
    fprintf(sum, "\n| binary | objects mapped | relocations | ld.so "
                 "startup, median cycles |\n|---|---|---|---|\n");
    ld_report("xl-reaper", cli, sum);
    if (alt)
        ld_report("ALT xl-reaper", alt, sum);
    fclose(sum);
    return 0;
}
