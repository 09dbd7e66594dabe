/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * bench_parts - what a verified kill is made of: each public step of
 * xlreaper_reap timed alone, in the same run as the bare kill, so that
 * the ratio of the whole to the kill can be explained (the profile
 * behind the goal of 1.5x a bare kill).  Steps run interleaved, reps
 * times each, on an empty DM uid: the cost of a scan or a probe hardly depends on
 * what the uid runs, but on how many tasks the system has.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define DOMID 4

enum {
    P_BARE,
    P_LOCK,
    P_SCAN,
    P_PROBE,
    P_REAP_EMPTY,
    P_REAP_TASK,
    P_CONFIG,
    NUM_PARTS
};

static const char *const part_name[NUM_PARTS] = {
    "bare kill(-1), forked",
    "lock acquire + release",
    "one /proc scan (xlreaper_scan_uid)",
    "one kernel-count probe (xlreaper_uid_empty)",
    "xlreaper_reap, uid already empty",
    "xlreaper_reap, one sleeping task",
    "ctx_alloc + config_load + ctx_free",
};

int main(void)
{
    bench_samples s[NUM_PARTS] = { 0 };
    unsigned reps;
    xlreaper_ctx *ctx;
    uid_t uid = bench_dm_uid(DOMID);
    FILE *csv;

    bench_init("bench_parts");
    reps = bench_env("PARTS_REPS", 200);
    ctx = bench_ctx();
    printf("# %ld tasks on the system; %u reps of each part, interleaved\n",
           bench_tasks_now(), reps);
    csv = bench_csv("parts", "part,rep,us");
    for (unsigned r = 0; r < reps; r++) {
        for (int p = 0; p < NUM_PARTS; p++) {
            uint64_t t0 = 0, t1;
            xlreaper_reap_result res;
            xlreaper_task_list l;
            xlreaper_lock *lock;
            bench_set set;
            bool empty;
            int rc = 0;

            if (p == P_REAP_TASK &&
                bench_set_start(&set, uid, BENCH_PROCS, 1, true, NULL))
                bench_die("cannot start a task");
            t0 = xlreaper__now_us();
            switch (p) {
            case P_BARE:
                rc = bench_barekill_fork(uid) < 0;
                break;
            case P_LOCK:
                rc = xlreaper_lock_acquire(ctx, &lock);
                if (!rc)
                    xlreaper_lock_release(lock);
                break;
            case P_SCAN:
                xlreaper_task_list_init(&l);
                rc = xlreaper_scan_uid(ctx, uid, &l);
                xlreaper_task_list_dispose(&l);
                break;
            case P_PROBE:
                rc = xlreaper_uid_empty(ctx, uid, &empty);
                break;
            case P_REAP_EMPTY:
            case P_REAP_TASK:
                xlreaper_reap_result_init(&res);
                rc = xlreaper_reap(ctx, NULL, DOMID, &res);
                xlreaper_reap_result_dispose(&res);
                break;
            case P_CONFIG: {
                xlreaper_ctx *c2;
                rc = xlreaper_ctx_alloc(&c2, bench_logger());
                if (!rc)
                    rc = xlreaper_config_load(c2, bench_config_path(),
                                              XLREAPER_CONFIG_MUST_EXIST);
                xlreaper_ctx_free(c2);
                break;
            }
            }
            t1 = xlreaper__now_us();
            if (rc)
                bench_die("%s failed (%d)", part_name[p], rc);
            if (p == P_REAP_TASK && bench_set_stop(&set, 10000000u))
                bench_die("uid %u did not empty", (unsigned)uid);
            bench_samples_add(&s[p], (double)(t1 - t0));
            fprintf(csv, "%d,%u,%llu\n", p, r, (unsigned long long)(t1 - t0));
        }
    }
    fclose(csv);
    csv = bench_csv("parts_summary", "part,name,median_us,p10_us,p90_us");
    for (int p = 0; p < NUM_PARTS; p++)
        fprintf(csv, "%d,\"%s\",%.0f,%.0f,%.0f\n", p, part_name[p],
                bench_median(&s[p]), bench_q(&s[p], 0.1), bench_q(&s[p], 0.9));
    fclose(csv);
    printf("\n%-44s %9s %9s %9s %7s\n", "part", "median", "p10", "p90",
           "x bare");
    for (int p = 0; p < NUM_PARTS; p++)
        printf("%-44s %7.0fus %7.0fus %7.0fus %7.2f\n", part_name[p],
               bench_median(&s[p]), bench_q(&s[p], 0.1), bench_q(&s[p], 0.9),
               bench_median(&s[p]) / bench_median(&s[P_BARE]));
    xlreaper_ctx_free(ctx);
    return 0;
}
