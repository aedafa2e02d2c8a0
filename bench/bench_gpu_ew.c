/* bench/bench_gpu_ew.c — the GPU backend's generated kernels (issue 16): first use of the NVRTC
 * kernels (compiled, or read from the on-disk cache), the elementwise slot against the
 * device-to-device copy, max-plus / min-plus / max-times GEMMs against cuBLAS's DGEMM, and a
 * unary contraction with repeats on both sides (iij -> jj, split into TRACE + ANTI_DIAG).
 *
 *   build/bench/bench_gpu_ew [n] [reps]     (n = 4096: the GEMMs; reps = 10)
 *
 * Run it twice with the same XDG_CACHE_HOME: the first run compiles (and stores) the kernels,
 * the second reads them (the "first use" line says which). Times exclude transfers; median of
 * reps runs after 2 warm-ups, between cuEvents on the device's stream. */
#include <tenferro/gpu/tenferro_gpu.c>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench_gpu_common.h"
static double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void dev_random(tfe_dtype dt, tfe_dtype fill_as, int rank, const int64_t *dims, tfe_dyn *out) {
  tfe_dyn h;
  if (tfe_dyn_empty(&h, fill_as, rank, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
  size_t m = (size_t)tfe_layout_numel(&h.lay) * (fill_as == TFE_DT_C128 ? 2 : 1);
  double *x = (double *)h.data;
  for (size_t i = 0; i < m; i++) x[i] = rand() / (double)RAND_MAX + 0.25;
  h.dtype = dt;
  if (tfe_gpu_upload(out, 0, &h) != TFE_OK) {
    fprintf(stderr, "upload: %s\n", tfe_last_error());
    exit(1);
  }
  tfe_dyn_release(&h);
}

/* ---- elementwise ------------------------------------------------------------------------------ */
typedef struct ew_ctx {
  tfe_dyn a, b, c, r;
  tfe__gpu_dev *D;
  size_t bytes;
  int which;
} ew_ctx;
static tfe_status run_ew(void *p) {
  ew_ctx *q = (ew_ctx *)p;
  double half = 0.5;
  int ax0 = 0;
  switch (q->which) {
  case 0: return tfe_zip_dyn(&q->c, &q->a, &q->b, TFE_BIN_ADD);
  case 1: return tfe_map_dyn(&q->c, &q->a, TFE_UN_EXP, NULL);
  case 2: return tfe_map_dyn(&q->c, &q->a, TFE_UN_POW, &half);
  case 3: return tfe_reduce_dyn(&q->r, &q->a, TFE_RED_SUM, -1, NULL, NULL, NULL);
  case 4: return tfe_reduce_dyn(&q->r, &q->a, TFE_RED_SUM, 1, &ax0, NULL, NULL);
  default: {
    TFE_TRY(tfe__gpu_enter(q->D, "copy"));
    tfe__gpu.cu.cuMemcpyDtoDAsync((tfe__cu_ptr)(uintptr_t)q->c.data, (tfe__cu_ptr)(uintptr_t)q->a.data, q->bytes,
                                  q->D->stream);
    tfe__gpu_leave(q->D);
    return TFE_OK;
  }
  }
}
static void bench_ew(tfe_dtype dt, int reps) {
  ew_ctx q;
  int64_t n = 8192, dims[2] = {n, n};
  q.D = &tfe__gpu.dev[0];
  tfe_dtype fill = dt == TFE_DT_C128 ? TFE_DT_C128 : TFE_DT_F64;
  dev_random(dt, fill, 2, dims, &q.a), dev_random(dt, fill, 2, dims, &q.b);
  if (tfe_gpu_alloc_dyn(&q.c, 0, dt, 2, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
  q.bytes = (size_t)(n * n) * tfe_dtype_get(dt)->size;
  q.which = 5;
  double tcopy = time_ms(q.D, run_ew, &q, reps), gbs = 2 * q.bytes / tcopy / 1e6;
  printf("ew %s %lldx%lld: D2D copy %.3f ms (%.0f GB/s r+w)\n", tfe_dtype_name(dt), (long long)n, (long long)n, tcopy, gbs);
  static const char *const names[] = {"zip add", "map exp", "map pow 0.5", "reduce sum all", "reduce sum axis 0"};
  for (int w = 0; w < 5; w++) {
    q.which = w;
    int64_t rd[1] = {n};
    if (w == 3 && tfe_gpu_alloc_dyn(&q.r, 0, dt, 0, rd, TFE_COLMAJOR) != TFE_OK) exit(1);
    if (w == 4 && tfe_gpu_alloc_dyn(&q.r, 0, dt, 1, rd, TFE_COLMAJOR) != TFE_OK) exit(1);
    double t = time_ms(q.D, run_ew, &q, reps);
    double moved = w == 0 ? 3.0 * q.bytes : w <= 2 ? 2.0 * q.bytes : (double)q.bytes;
    printf("ew %s %s: %.3f ms (%.0f GB/s moved; %.2f of the copy's rate)\n", tfe_dtype_name(dt), names[w], t,
           moved / t / 1e6, moved / t / 1e6 / gbs);
    if (w >= 3) tfe_dyn_release(&q.r);
  }
  tfe_dyn_release(&q.a), tfe_dyn_release(&q.b), tfe_dyn_release(&q.c);
}

/* ---- tropical GEMMs against cuBLAS's DGEMM ------------------------------------------------------ */
typedef struct tg_ctx {
  tfe_dyn a, b, c, i;
  tfe__gpu_dev *D;
  int n, mode; /* 0 tropical_matmul, 1 with argmax, 2 tfe_contract_dyn, 3 cuBLAS dgemm */
  tfe_dtype dt;
} tg_ctx;
static tfe_status run_tg(void *p) {
  tg_ctx *g = (tg_ctx *)p;
  if (g->mode == 0) return tfe_gpu_tropical_matmul(&g->a, &g->b, &g->c, NULL);
  if (g->mode == 1) return tfe_gpu_tropical_matmul(&g->a, &g->b, &g->c, &g->i);
  if (g->mode == 2) {
    static const int32_t la[2] = {'i', 'j'}, lb[2] = {'j', 'k'}, lc[2] = {'i', 'k'};
    double one = g->dt == TFE_DT_MAXTIMES_F64 ? 1 : 0, zero = g->dt == TFE_DT_MAXPLUS_F64 ? -INFINITY : g->dt == TFE_DT_MINPLUS_F64 ? INFINITY : 0;
    return tfe_contract_dyn(&one, &g->a, la, &g->b, lb, &zero, &g->c, lc);
  }
  double one = 1, zero = 0;
  TFE_TRY(tfe__gpu_enter(g->D, "cublas"));
  tfe__blas_status s = tfe__gpu.blas.dgemm(g->D->blas, TFE__BLAS_OP_N, TFE__BLAS_OP_N, g->n, g->n, g->n, &one, g->a.data,
                                           g->n, g->b.data, g->n, &zero, g->c.data, g->n);
  tfe__gpu_leave(g->D);
  return s ? TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, "cublas", "status %d", s) : TFE_OK;
}
static void bench_tropical(int n, int reps) {
  static const tfe_dtype kinds[] = {TFE_DT_MAXPLUS_F64, TFE_DT_MINPLUS_F64, TFE_DT_MAXTIMES_F64, TFE_DT_MAXPLUS_F32};
  int64_t dims[2] = {n, n};
  double flop = 2.0 * n * (double)n * n, tb = 0;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    tg_ctx g;
    g.D = &tfe__gpu.dev[0], g.n = n, g.dt = kinds[k];
    tfe_dtype fill = kinds[k] == TFE_DT_MAXPLUS_F32 ? TFE_DT_F32 : TFE_DT_F64;
    if (fill == TFE_DT_F32) { /* f32 values from doubles: fill as f64 of half the count is wrong; fill per element */
      tfe_dyn h;
      if (tfe_dyn_empty(&h, TFE_DT_F32, 2, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
      float *x = (float *)h.data;
      for (int64_t i = 0; i < (int64_t)n * n; i++) x[i] = (float)(rand() / (double)RAND_MAX);
      h.dtype = kinds[k];
      if (tfe_gpu_upload(&g.a, 0, &h) != TFE_OK || tfe_gpu_upload(&g.b, 0, &h) != TFE_OK) exit(1);
      tfe_dyn_release(&h);
    } else
      dev_random(kinds[k], TFE_DT_F64, 2, dims, &g.a), dev_random(kinds[k], TFE_DT_F64, 2, dims, &g.b);
    if (tfe_gpu_alloc_dyn(&g.c, 0, kinds[k], 2, dims, TFE_COLMAJOR) != TFE_OK ||
        tfe_gpu_alloc_dyn(&g.i, 0, TFE_DT_I64, 2, dims, TFE_COLMAJOR) != TFE_OK)
      exit(1);
    if (k == 0) {
      g.mode = 3;
      tb = time_ms(g.D, run_tg, &g, reps);
      printf("cuBLAS dgemm n=%d: %.3f ms (%.2f TFLOP/s)\n", n, tb, flop / tb / 1e9);
    }
    static const char *const modes[] = {"tfe_gpu_tropical_matmul", "tfe_gpu_tropical_matmul + argmax", "tfe_contract_dyn"};
    for (int m = 0; m < 3; m++) {
      g.mode = m;
      double t = time_ms(g.D, run_tg, &g, reps);
      printf("%s n=%d %s: %.3f ms (%.2f T ops/s counting 2 n^3), %.3f of cuBLAS dgemm's rate\n",
             tfe_dtype_name(kinds[k]), n, modes[m], t, flop / t / 1e9, tb / t);
    }
    tfe_dyn_release(&g.a), tfe_dyn_release(&g.b), tfe_dyn_release(&g.c), tfe_dyn_release(&g.i);
  }
}

/* ---- iij -> jj on device operands ------------------------------------------------------------- */
typedef struct ij_ctx { tfe_dyn a, c; } ij_ctx;
static tfe_status run_ij(void *p) {
  ij_ctx *q = (ij_ctx *)p;
  static const int32_t la[3] = {'i', 'i', 'j'}, lc[2] = {'j', 'j'};
  double one = 1, zero = 0;
  return tfe_contract_dyn(&one, &q->a, la, NULL, NULL, &zero, &q->c, lc);
}
static void bench_iij(int reps) {
  ij_ctx q;
  int64_t da[3] = {1024, 1024, 256}, dc[2] = {256, 256};
  dev_random(TFE_DT_F64, TFE_DT_F64, 3, da, &q.a);
  if (tfe_gpu_alloc_dyn(&q.c, 0, TFE_DT_F64, 2, dc, TFE_COLMAJOR) != TFE_OK) exit(1);
  double t = time_ms(&tfe__gpu.dev[0], run_ij, &q, reps);
  printf("iij->jj f64 (1024, 1024, 256) -> (256, 256) on the device: %.3f ms\n", t);
  tfe_dyn_release(&q.a), tfe_dyn_release(&q.c);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096, reps = argc > 2 ? atoi(argv[2]) : 10;
  double t0 = now_s();
  if (tfe_gpu_init() != TFE_OK) {
    printf("bench_gpu_ew: %s\n", tfe_last_error());
    return 0;
  }
  double t1 = now_s();
  tfe_gpu_device_info info;
  tfe_gpu_device_get(0, &info);
  printf("device: %s (sm_%d%d), CUDA driver %d; init %.3f s\n", info.name, info.cc_major, info.cc_minor,
         tfe__gpu.driver_version, t1 - t0);
  /* first use of every kind's kernels: compiled by NVRTC or read from the disk cache */
  tfe__gpu_dev *D = &tfe__gpu.dev[0];
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    double a = now_s();
    if (tfe__gpu_enter(D, "bench") != TFE_OK || tfe__gpu_kernels(D, g, "bench") != TFE_OK) {
      printf("kernels: %s\n", tfe_gpu_last_error());
      return 1;
    }
    tfe__gpu_leave(D);
    printf("first use of kind %d's kernels: %.3f s\n", g, now_s() - a);
  }
  char dir[TFE__GPU_PATH_MAX];
  printf("kernel modules: %d compiled by NVRTC, %d read from the disk cache (%s)\n", D->kernels_compiled,
         D->kernels_from_disk, tfe__gpu_cache_dir(dir, sizeof dir) ? dir : "cache off");
  srand(1);
  bench_ew(TFE_DT_F64, reps);
  bench_ew(TFE_DT_C128, reps);
  bench_iij(reps);
  bench_tropical(n, reps);
  return 0;
}
