/* bench_permute_ab — A/B timing of one permutation under two settings of the kernel room's
 * tuning fields, alternating in one process next to a memcpy of the same bytes (the method
 * of docs/bench-kernel.md, round 5: single bench_permute runs vary by +-0.1 on the 2-vCPU VM).
 *
 *   A="tile=128" B="tile=256" bench_permute_ab 2048 2048 -- 1 0
 *   PRE=1 ... (copy into an existing, written destination instead of a fresh tfe_contiguous)
 *   R=15 ...  (rounds, default 9; medians printed)
 *   T=2 ...   (threads for the tenferro calls, default 1)
 *   WARM=1 ... (no untimed read of 64 MiB before each timed call: the source stays cached
 *              from the call before when it fits in the last-level cache)
 * Keys: tile, table, kpf, runpf, buf, prefault, ntmin, edge, colnt, forder, rims, far (the tfe_tuning
 * fields copy_tile_bytes, kernel_table_tile_bytes, kernel_prefetch_strips,
 * copy_run_prefetch_bytes, copy_buffered_tiles, copy_fresh_prefault, kernel_stream_min_bytes,
 * kernel_stream_edge_lines, copy_stream_narrow_columns, copy_fresh_in_order, copy_shifted_rims,
 * copy_run_split_far_bytes), skew, pad (copy_skew_lines, copy_tile_pad).
 * Source col-major of SHAPE, out[i] = src[i_perm]. */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#include <tenferro.h>
#include <unistd.h>

#include "bench_common.h"

/* Set one tuning field (docs/kernel.md, "Tuning"); a value out of range stops the run. */
#define BK_TUNE(field, value) \
  do { \
    tfe_tuning bk_t_ = tfe_tuning_get(); \
    bk_t_.field = (value); \
    if (tfe_tuning_set(&bk_t_) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); } \
  } while (0)

/* Defaults first, then "key=value,..." from the environment variable `var`. */
static void setcfg(const char *var) {
  tfe_tuning d = tfe_tuning_default();
  tfe_tuning_set(&d);
  const char *c = getenv(var);
  if (!c) return;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", c);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    char k[64];
    long long v;
    if (sscanf(t, "%63[^=]=%lld", k, &v) != 2) { fprintf(stderr, "bad setting %s\n", t); exit(2); }
    if (!strcmp(k, "tile")) BK_TUNE(copy_tile_bytes, v);
    else if (!strcmp(k, "table")) BK_TUNE(kernel_table_tile_bytes, v);
    else if (!strcmp(k, "kpf")) BK_TUNE(kernel_prefetch_strips, (int)v);
    else if (!strcmp(k, "runpf")) BK_TUNE(copy_run_prefetch_bytes, v);
    else if (!strcmp(k, "buf")) BK_TUNE(copy_buffered_tiles, (int)v);
    else if (!strcmp(k, "prefault")) BK_TUNE(copy_fresh_prefault, (int)v);
    else if (!strcmp(k, "ntmin")) BK_TUNE(kernel_stream_min_bytes, v);
    else if (!strcmp(k, "edge")) BK_TUNE(kernel_stream_edge_lines, (int)v);
    else if (!strcmp(k, "colnt")) BK_TUNE(copy_stream_narrow_columns, (int)v);
    else if (!strcmp(k, "forder")) BK_TUNE(copy_fresh_in_order, (int)v);
    else if (!strcmp(k, "rims")) BK_TUNE(copy_shifted_rims, (int)v);
    else if (!strcmp(k, "far")) BK_TUNE(copy_run_split_far_bytes, v);
    else if (!strcmp(k, "skew")) BK_TUNE(copy_skew_lines, (int)v);
    else if (!strcmp(k, "pad")) BK_TUNE(copy_tile_pad, (int)v);
    else { fprintf(stderr, "unknown key %s\n", k); exit(2); }
  }
}

int main(int argc, char **argv) {
  int r = 0, i = 1;
  evict_on = !(getenv("WARM") && strcmp(getenv("WARM"), "0")); /* WARM=1: no cache emptying */
  int64_t shape[TFE_MAX_RANK], perm[TFE_MAX_RANK];
  for (; i < argc && strcmp(argv[i], "--") && r < TFE_MAX_RANK; i++) shape[r++] = atoll(argv[i]);
  if (r == 0 || i + r >= argc + 1 || argc - i - 1 != r) {
    fprintf(stderr, "usage: bench_permute_ab SHAPE... -- PERM...\n");
    return 2;
  }
  for (int k = 0; k < r; k++) perm[k] = atoll(argv[i + 1 + k]);
  int64_t sst[TFE_MAX_RANK], n = 1;
  for (int k = 0; k < r; k++) { sst[k] = n; n *= shape[k]; }
  size_t bytes = (size_t)n * sizeof(double);
  tfe_allocator a = tfe_get_allocator();
  double *src = a.alloc(a.ctx, bytes, TFE_ALIGN), *pm = a.alloc(a.ctx, bytes, TFE_ALIGN);
  double *pd = a.alloc(a.ctx, bytes, TFE_ALIGN);
  if (!src || !pm || !pd) { fprintf(stderr, "out of memory\n"); return 1; }
  tfe__kadvise_huge(src, bytes); tfe__kadvise_huge(pm, bytes); tfe__kadvise_huge(pd, bytes);
  for (int64_t q = 0; q < n; q++) { src[q] = (double)q; pm[q] = pd[q] = 0; }
  tfe_view_f64 v = {src, {r, 0, {0}, {0}}, false}, dv = {pd, {r, 0, {0}, {0}}, false};
  int64_t ds = 1;
  for (int k = 0; k < r; k++) {
    v.lay.dims[k] = dv.lay.dims[k] = shape[perm[k]];
    v.lay.strides[k] = sst[perm[k]];
    dv.lay.strides[k] = ds;
    ds *= shape[perm[k]];
  }
  const char *pe = getenv("PRE");
  bool pre = pe && *pe && strcmp(pe, "0");
  tfe_set_num_threads(getenv("T") ? atoi(getenv("T")) : 1);
  int R = getenv("R") ? atoi(getenv("R")) : 9;
  if (R < 1 || R > 64) R = 9;
  double t[3][64];
  for (int k = -1; k < R; k++) {
    evict();
    double t0 = now_ms(), m;
    if (pre) {
      memcpy(pm, src, bytes);
      __asm__ volatile("" : : "r"(pm) : "memory");
      m = now_ms() - t0;
    } else {
      m = memcpy_fresh_ms(src, bytes);
      if (m < 0) { fprintf(stderr, "out of memory\n"); return 1; }
    }
    if (k >= 0) t[0][k] = m;
    for (int c = 0; c < 2; c++) {
      setcfg(c ? "B" : "A");
      tfe_tensor_f64 o = {0};
      tfe_status st;
      evict();
      t0 = now_ms();
      if (pre) st = tfe_copy_f64(&dv, &v);
      else st = tfe_contiguous_f64(&v, TFE_COLMAJOR, &o);
      double tt = now_ms() - t0;
      if (st) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }
      if (!pre) tfe_tensor_release_f64(&o);
      if (k >= 0) t[c + 1][k] = tt;
    }
  }
  for (int c = 0; c < 3; c++) qsort(t[c], (size_t)R, sizeof(double), cmpd);
  double m = t[0][R / 2];
  printf("%s memcpy %.2f ms  A %.2f ms (%.2fx)  B %.2f ms (%.2fx)\n", pre ? "existing" : "fresh", m,
         t[1][R / 2], t[1][R / 2] / m, t[2][R / 2], t[2][R / 2] / m);
  a.free(a.ctx, src); a.free(a.ctx, pm); a.free(a.ctx, pd);
  return 0;
}
