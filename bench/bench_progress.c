/* bench/bench_progress.c — what the progress callback costs (issue 20): a held einsum plan of a
 * small contraction executed many times, with the callback off (the default) and on (a
 * callback that returns 0). "off" must not be slower than before the callback existed: build
 * this file in an older tree with -DBENCH_OLD (no progress API there) and compare in one run.
 *
 *   build/bench/bench_progress [N=8] [CALLS=200000] [REPS=7]
 * prints ns per execution (median of REPS runs of CALLS executions) for off and on, in the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time the scheduler gave other processes on a
 * loaded machine is not counted) and in wall time. */
#define _GNU_SOURCE /* clock_gettime */
#include <time.h>
#include <tenferro.h>
#include <stdio.h>

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifndef BENCH_OLD
static int cb(void *ctx, const tfe_einsum_progress_info *in) { (void)in; ++*(long *)ctx; return 0; }
#endif
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  long calls = argc > 2 ? atol(argv[2]) : 200000;
  int reps = argc > 3 ? atoi(argv[3]) : 7;
  if (n < 1 || n > 512 || calls < 1 || reps < 1 || reps > 99) { fprintf(stderr, "bad arguments\n"); return 2; }
  tfe_set_num_threads(1);
  tfe_blas_set_num_threads(1);
  double *a = calloc((size_t)(3 * n * n), sizeof(double));
  if (!a) return 1;
  for (int i = 0; i < 2 * n * n; i++) a[i] = (i % 7) - 3;
  int64_t d[2] = {n, n};
  tfe_view_f64 v[2], o;
  tfe_wrap(&v[0], a, n * n, 2, d, NULL, 0, TFE_ROWMAJOR);
  tfe_wrap(&v[1], a + n * n, n * n, 2, d, NULL, 0, TFE_ROWMAJOR);
  tfe_wrap(&o, a + 2 * n * n, n * n, 2, d, NULL, 0, TFE_ROWMAJOR);
  const tfe_layout *lp[2] = {&v[0].lay, &v[1].lay};
  tfe_einsum_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.out_order = TFE_ROWMAJOR;
  tfe_einsum_plan *p = NULL;
  if (tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk->ik", 2, lp, &opts) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }
  long seen = 0;
  (void)seen;
  for (int mode = 0; mode < 2; mode++) {
#ifdef BENCH_OLD
    if (mode) break;
#else
    tfe_einsum_set_progress(mode ? cb : NULL, &seen);
#endif
    double t[99], w[99];
    for (int r = 0; r < reps; r++) {
      double t0 = cpu_now(), w0 = tfe__now();
      for (long c = 0; c < calls; c++) tfe_einsum_execute_f64(p, 1, v, 0, &o);
      t[r] = (cpu_now() - t0) / (double)calls * 1e9;
      w[r] = (tfe__now() - w0) / (double)calls * 1e9;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    qsort(w, (size_t)reps, sizeof *w, cmp);
    printf("n=%d progress=%s cpu_ns_per_execution=%.1f (median of %d x %ld; min %.1f max %.1f) wall_ns=%.1f\n", n,
           mode ? "on" : "off", t[reps / 2], reps, calls, t[0], t[reps - 1], w[reps / 2]);
  }
  printf("callback calls: %ld\n", seen);
  tfe_einsum_plan_release(p);
  free(a);
  return 0;
}
