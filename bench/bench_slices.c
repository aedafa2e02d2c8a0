/* bench_slices.c — sliced contraction, slices one after another against slices in parallel
 * (docs/einsum.md "Parallel slices"), on a shared instance along its stored opt_flops path.
 *
 *   bench_slices INSTANCE.json MEMORY_MIB THREADS[,THREADS...] [REPS]
 *
 * Four runs of the same network (f64, seeded inputs), each the median of REPS timed executions
 * after a warm-up:
 *   serial-1   planned and run with 1 thread: slices for the whole memory limit, one at a time
 *   serial-T   the same plan run with T threads: one slice at a time, threaded kernels and BLIS
 *   sliceT-1   the plan made with T threads (slices for limit / T) run one slice at a time
 *              with T threads (its slice_workers set to 1): what the finer slicing costs
 *   parallel-T the plan made with T threads, T slices at once (single-threaded kernels)
 * and the largest difference of each result from serial-1 (parallel-T against sliceT-1 must be
 * 0: the same slices summed in the same order). */
#include <tenferro.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include "bench_common.h"

typedef struct inst {
  const char *expr;
  int n, npath;
  tfe_tensor_f64 *in;
  tfe_view_f64 *v;
  const tfe_layout **lay;
  int *path;
  tfe_json doc;
} inst;

static int load(const char *file, inst *N) {
  char *text = bench_slurp(file);
  if (!text || tfe_json_parse(text, strlen(text), &N->doc) != TFE_OK) return fprintf(stderr, "cannot read %s\n", file), 1;
  free(text);
  const tfe_json *j = &N->doc;
  int fs = tfe_json_get(j, 0, "format_string"), sh = tfe_json_get(j, 0, "shapes"), ps = tfe_json_get(j, 0, "paths");
  int of = ps >= 0 ? tfe_json_get(j, ps, "opt_flops") : -1, pa = of >= 0 ? tfe_json_get(j, of, "path") : -1;
  if (fs < 0 || sh < 0 || pa < 0) return fprintf(stderr, "%s: no format_string, shapes or paths.opt_flops.path\n", file), 1;
  N->expr = j->nodes[fs].str;
  N->n = j->nodes[sh].count;
  N->in = calloc((size_t)N->n, sizeof *N->in);
  N->v = calloc((size_t)N->n, sizeof *N->v);
  N->lay = calloc((size_t)N->n, sizeof *N->lay);
  N->npath = j->nodes[pa].count;
  N->path = calloc((size_t)(2 * N->npath + 2), sizeof(int));
  uint64_t rs = 0x9E3779B97F4A7C15ULL;
  int k = 0;
  for (int s = j->nodes[sh].first; s >= 0; s = j->nodes[s].next, k++) {
    int64_t dims[TFE_MAX_RANK];
    int r = 0;
    for (int d = j->nodes[s].first; d >= 0 && r < TFE_MAX_RANK; d = j->nodes[d].next) dims[r++] = (int64_t)j->nodes[d].num;
    if (tfe_empty_f64(&N->in[k], r, dims, TFE_ROWMAJOR) != TFE_OK) return fprintf(stderr, "%s\n", tfe_last_error()), 1;
    int64_t cnt = tfe_layout_numel(&N->in[k].v.lay);
    for (int64_t e = 0; e < cnt; e++) {
      rs ^= rs >> 12; rs ^= rs << 25; rs ^= rs >> 27;
      N->in[k].v.data[e] = (double)((rs * 2685821657736338717ULL) >> 11) * 0x1.0p-53 * 2 - 1;
    }
    N->v[k] = N->in[k].v;
    N->lay[k] = &N->in[k].v.lay;
  }
  k = 0;
  for (int p = j->nodes[pa].first; p >= 0; p = j->nodes[p].next)
    for (int q = j->nodes[p].first; q >= 0; q = j->nodes[q].next) N->path[k++] = (int)j->nodes[q].num;
  return 0;
}

static int plan(const inst *N, int64_t limit, int threads, tfe_einsum_plan **p) {
  tfe_set_num_threads(threads);
  tfe_einsum_opts o = {0};
  o.algo = TFE_PATH_GIVEN; o.path = N->path; o.path_nsteps = N->npath; o.path_format = TFE_PATH_LINEAR;
  o.memory_limit = limit; o.no_cache = true;
  if (tfe_einsum_plan_new(p, TFE_DT_F64, N->expr, N->n, N->lay, &o) != TFE_OK) return fprintf(stderr, "plan: %s\n", tfe_last_error()), 1;
  return 0;
}

/* Median ms of reps executions of p with `threads` threads into out (after one warm-up). */
static double run(const inst *N, const tfe_einsum_plan *p, int threads, int reps, tfe_tensor_f64 *out) {
  tfe_set_num_threads(threads);
  double t[64];
  if (reps > 64) reps = 64;
  for (int r = -1; r < reps; r++) {
    double t0 = now_ms();
    if (tfe_einsum_execute_f64(p, 1.0, N->v, 0.0, &out->v) != TFE_OK) return fprintf(stderr, "run: %s\n", tfe_last_error()), -1;
    if (r >= 0) t[r] = now_ms() - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), cmpd);
  return t[reps / 2];
}

static double maxdiff(const tfe_tensor_f64 *a, const tfe_tensor_f64 *b) {
  int64_t cnt = tfe_layout_numel(&a->v.lay);
  double m = 0;
  for (int64_t e = 0; e < cnt; e++) {
    double d = fabs(a->v.data[e] - b->v.data[e]);
    if (d > m || d != d) m = d;
  }
  return m;
}

/* One row of the table. */
static void row(const char *name, int threads, const tfe_einsum_plan *p, double ms, double ms1, const tfe_tensor_f64 *o,
                const tfe_tensor_f64 *o1) {
  printf("| %s | %d | %d | %.1f | %.2f | %.3g |\n", name, threads, (int)tfe_einsum_plan_cost(p).slices, ms, ms1 / ms,
         maxdiff(o, o1));
}

int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: %s INSTANCE.json MEMORY_MIB THREADS[,THREADS...] [REPS]\n", argv[0]), 2;
  int64_t limit = (int64_t)(atof(argv[2]) * 1048576.0);
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  if (reps < 1) return fprintf(stderr, "REPS must be >= 1\n"), 2;
  inst net;
  memset(&net, 0, sizeof net);
  if (load(argv[1], &net)) return 1;
  tfe_einsum_plan *p1;
  if (plan(&net, limit, 1, &p1)) return 1;
  tfe_einsum_cost c1 = tfe_einsum_plan_cost(p1);
  printf("instance %s, f64, memory limit %.0f MiB, median of %d\n", argv[1], atof(argv[2]), reps);
  printf("plan 1 thread: %d slices, log10 flops %.3f, largest intermediate 2^%.2f\n", (int)c1.slices, c1.log10_flops, c1.log2_inter);
  int64_t od[TFE_MAX_RANK];
  int orank = p1->out_lay.rank;
  for (int d = 0; d < orank; d++) od[d] = p1->out_lay.dims[d];
  tfe_tensor_f64 o[4];
  for (int k = 0; k < 4; k++)
    if (tfe_empty_f64(&o[k], orank, od, TFE_COLMAJOR) != TFE_OK) return 1;
  double ms1 = run(&net, p1, 1, reps, &o[0]);
  printf("| run | threads | slices | median ms | speed-up vs serial-1 | max diff vs serial-1 |\n|---|---|---|---|---|---|\n");
  row("serial-1", 1, p1, ms1, ms1, &o[0], &o[0]);
  for (char *s = argv[3]; *s;) {
    int T = (int)strtol(s, &s, 10);
    if (*s == ',') s++;
    if (T < 2) continue;
    tfe_einsum_plan *pT;
    if (plan(&net, limit, T, &pT)) return 1;
    int workers = pT->slice_workers;
    row("serial-T", T, p1, run(&net, p1, T, reps, &o[1]), ms1, &o[1], &o[0]);
    pT->slice_workers = 1; /* the same slices, one at a time */
    row("sliceT-1", T, pT, run(&net, pT, T, reps, &o[2]), ms1, &o[2], &o[0]);
    pT->slice_workers = workers;
    row("parallel-T", T, pT, run(&net, pT, T, reps, &o[3]), ms1, &o[3], &o[0]);
    printf("| (T = %d: slice workers %d; parallel-T vs sliceT-1, the same slices: max diff %.3g) | | | | | |\n", T, workers,
           maxdiff(&o[3], &o[2]));
    tfe_einsum_plan_release(pT);
  }
  tfe_einsum_plan_release(p1);
  for (int k = 0; k < 4; k++) tfe_tensor_release_f64(&o[k]);
  for (int k = 0; k < net.n; k++) tfe_tensor_release_f64(&net.in[k]);
  free(net.in); free(net.v); free(net.lay); free(net.path); tfe_json_free(&net.doc);
  return 0;
}
