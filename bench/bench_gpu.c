/* bench/bench_gpu.c — GEMM-shaped contraction on the GPU backend against cuBLAS called directly
 * (the same handle and stream), and a permutation against the device-to-device copy.
 *
 *   build/bench/bench_gpu [n] [reps]        (n = 4096, reps = 10)
 *
 * Times exclude transfers: operands are uploaded once; each figure is the median of `reps`
 * timed runs (after 2 warm-ups) between cuEvents on the device's stream. One unit: it includes
 * the companion itself (default mode), so it reaches the loaded cuBLAS table. Without a GPU it
 * says so and exits 0. bench/bench_gpu_peer.py times torch.einsum and CuPy in the same run. */
#include <tenferro/gpu/tenferro_gpu.c>
#include <math.h>
#include <stdlib.h>

#include "bench_gpu_common.h"

typedef struct gemm_ctx {
  tfe_dyn a, b, c;
  tfe_dtype dt;
  tfe__gpu_dev *D;
  int n;
} gemm_ctx;

static const int32_t LA[2] = {'i', 'j'}, LB[2] = {'j', 'k'}, LC[2] = {'i', 'k'};
static tfe_status run_contract(void *p) {
  gemm_ctx *g = (gemm_ctx *)p;
  double one[2] = {1, 0}, zero[2] = {0, 0};
  return tfe_contract_dyn(one, &g->a, LA, &g->b, LB, zero, &g->c, LC);
}
static tfe_status run_einsum(void *p) {
  gemm_ctx *g = (gemm_ctx *)p;
  tfe_dyn ops[2] = {g->a, g->b};
  return tfe_einsum_into_dyn(&g->c, "ij,jk->ik", 2, ops, NULL);
}
static tfe_status run_cublas(void *p) {
  gemm_ctx *g = (gemm_ctx *)p;
  double one[2] = {1, 0}, zero[2] = {0, 0};
  tfe__blas_status s;
  tfe_status st = tfe__gpu_enter(g->D, "cublas");
  if (st != TFE_OK) return st;
  s = (g->dt == TFE_DT_F64 ? tfe__gpu.blas.dgemm : tfe__gpu.blas.zgemm)(
      g->D->blas, TFE__BLAS_OP_N, TFE__BLAS_OP_N, g->n, g->n, g->n, one, g->a.data, g->n, g->b.data, g->n, zero,
      g->c.data, g->n);
  tfe__gpu_leave(g->D);
  return s ? TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, "cublas", "status %d", s) : TFE_OK;
}

/* A random dense host matrix n x n uploaded to device 0. */
static void upload_random(tfe_dtype dt, int n, tfe_dyn *out) {
  tfe_dyn h;
  int64_t dims[2] = {n, n};
  if (tfe_dyn_empty(&h, dt, 2, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
  size_t m = (size_t)n * (size_t)n * (dt == TFE_DT_C128 ? 2 : 1);
  double *x = (double *)h.data;
  srand(1);
  for (size_t i = 0; i < m; i++) x[i] = rand() / (double)RAND_MAX - 0.5;
  if (tfe_gpu_upload(out, 0, &h) != TFE_OK) {
    fprintf(stderr, "upload: %s\n", tfe_last_error());
    exit(1);
  }
  tfe_dyn_release(&h);
}

static void bench_gemm(tfe_dtype dt, int n, int reps) {
  gemm_ctx g;
  g.dt = dt, g.n = n, g.D = &tfe__gpu.dev[0];
  upload_random(dt, n, &g.a), upload_random(dt, n, &g.b), upload_random(dt, n, &g.c);
  double flop = (dt == TFE_DT_C128 ? 8.0 : 2.0) * n * (double)n * n;
  double tc = time_ms(g.D, run_contract, &g, reps), tb = time_ms(g.D, run_cublas, &g, reps);
  printf("gemm %s n=%d: tfe_contract_dyn %.3f ms (%.2f TFLOP/s), cuBLAS direct %.3f ms (%.2f TFLOP/s), ratio %.3f\n",
         tfe_dtype_name(dt), n, tc, flop / tc / 1e9, tb, flop / tb / 1e9, tb / tc);
  tfe_dyn ops[2] = {g.a, g.b};
  tfe_status st = tfe_einsum_into_dyn(&g.c, "ij,jk->ik", 2, ops, NULL);
  if (st == TFE_OK) {
    double te = time_ms(g.D, run_einsum, &g, reps);
    printf("gemm %s n=%d: tfe_einsum_into_dyn %.3f ms (%.2f TFLOP/s), ratio to cuBLAS %.3f\n", tfe_dtype_name(dt), n, te,
           flop / te / 1e9, tb / te);
  } else
    printf("gemm %s n=%d: tfe_einsum_into_dyn on device operands: %s\n", tfe_dtype_name(dt), n, tfe_last_error());
  tfe_dyn_release(&g.a), tfe_dyn_release(&g.b), tfe_dyn_release(&g.c);
}

/* Permutation ijk -> kji of an n^3 f64 tensor against a device-to-device copy of the same bytes. */
typedef struct perm_ctx {
  tfe_dyn a, c;
  tfe__gpu_dev *D;
  size_t bytes;
} perm_ctx;
static const int32_t PA[3] = {0, 1, 2}, PC[3] = {2, 1, 0};
static tfe_status run_perm(void *p) {
  perm_ctx *q = (perm_ctx *)p;
  double one = 1, zero = 0;
  return tfe_contract_dyn(&one, &q->a, PA, NULL, NULL, &zero, &q->c, PC);
}
static tfe_status run_copy(void *p) {
  perm_ctx *q = (perm_ctx *)p;
  TFE_TRY(tfe__gpu_enter(q->D, "copy"));
  tfe__gpu.cu.cuMemcpyDtoDAsync((tfe__cu_ptr)(uintptr_t)q->c.data, (tfe__cu_ptr)(uintptr_t)q->a.data, q->bytes,
                                q->D->stream);
  tfe__gpu_leave(q->D);
  return TFE_OK;
}
static void bench_permute(int n, int reps) {
  perm_ctx q;
  int64_t dims[3] = {n, n, n};
  q.D = &tfe__gpu.dev[0];
  if (tfe_gpu_alloc_dyn(&q.a, 0, TFE_DT_F64, 3, dims, TFE_COLMAJOR) != TFE_OK ||
      tfe_gpu_alloc_dyn(&q.c, 0, TFE_DT_F64, 3, dims, TFE_COLMAJOR) != TFE_OK)
    exit(1);
  q.bytes = (size_t)n * n * n * 8;
  double tp = time_ms(q.D, run_perm, &q, reps), tcp = time_ms(q.D, run_copy, &q, reps);
  printf("permute ijk->kji f64 n=%d: %.3f ms (%.0f GB/s r+w), D2D copy %.3f ms (%.0f GB/s), ratio %.3f\n", n, tp,
         2 * q.bytes / tp / 1e6, tcp, 2 * q.bytes / tcp / 1e6, tcp / tp);
  tfe_dyn_release(&q.a), tfe_dyn_release(&q.c);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096, reps = argc > 2 ? atoi(argv[2]) : 10;
  if (tfe_gpu_init() != TFE_OK) {
    printf("bench_gpu: %s\n", tfe_last_error());
    return 0;
  }
  tfe_gpu_device_info info;
  tfe_gpu_device_get(0, &info);
  printf("device: %s (sm_%d%d, %zu MiB), CUDA driver %d; %s\n", info.name, info.cc_major, info.cc_minor,
         info.total_mem >> 20, tfe__gpu.driver_version, tfe_gpu_status());
  bench_gemm(TFE_DT_F64, n, reps);
  bench_gemm(TFE_DT_C128, n, reps);
  bench_permute(n >= 4096 ? 512 : 256, reps);
  return 0;
}
