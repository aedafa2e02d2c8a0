/* bench/bench_gpu_linalg.c — the GPU backend's linalg slot (gpu/solver.h) against cuSOLVER called
 * directly on the same handle and stream: SVD (thin), QR (thin, with Q) and eigh (with vectors)
 * of an n x n f64 matrix.
 *
 *   build/bench/bench_gpu_linalg [n] [reps]        (n = 4096, reps = 3)
 *
 * Each figure is the median of `reps` timed runs after one warm-up, between cuEvents on the
 * device's stream (host work inside the call, such as result allocation and the info readback,
 * counts: the stream waits meanwhile); transfers of the input are excluded, result buffers are
 * released after the second event. The direct calls do what a caller of cuSOLVER must do to keep
 * A: a device-to-device copy of A, then cusolverDnXgesvd ('S', 'S'), cusolverDnXgeqrf +
 * {D}orgqr, cusolverDnXsyevd (vectors, lower) into buffers allocated once; no info check, no
 * gauge. tenferro: tfe_svd_dyn / tfe_qr_dyn / tfe_eigh_dyn on the device tensor (the NaN check,
 * packing, results allocated per call, info codes read back, the QR gauge). One unit: it includes
 * the companion (default mode) to reach the loaded cuSOLVER table. Without a GPU it says so and
 * exits 0. bench/bench_gpu_linalg_peer.py times torch.linalg in the same run. */
#include <tenferro/gpu/tenferro_gpu.c>
#include <math.h>
#include <stdlib.h>

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct la_ctx {
  tfe__gpu_dev *D;
  tfe_dyn a, out[3];
  int n;
  /* the direct path's buffers */
  tfe__cu_ptr w, s, u, vt, tau, work, info;
  size_t dbytes, hbytes;
  void *host;
  int lwork;
} la_ctx;
typedef tfe_status (*la_fn)(la_ctx *c);

static void die(const char *what) {
  fprintf(stderr, "bench_gpu_linalg: %s: %s\n", what, tfe_last_error());
  exit(1);
}
static void release_out(la_ctx *c) {
  for (int i = 0; i < 3; i++) tfe_dyn_release(&c->out[i]);
}
/* Median ms of fn over reps runs (one warm-up), between two events on D's stream. */
static double time_ms(la_ctx *c, la_fn fn, int reps) {
  double t[32];
  tfe__cu_event e0, e1;
  tfe__gpu_enter(c->D, "bench");
  tfe__gpu.cu.cuEventCreate(&e0, 0), tfe__gpu.cu.cuEventCreate(&e1, 0);
  tfe__gpu_leave(c->D);
  if (reps > 32) reps = 32;
  for (int i = -1; i < reps; i++) {
    tfe__gpu_enter(c->D, "bench");
    tfe__gpu.cu.cuStreamSynchronize(c->D->stream);
    tfe__gpu.cu.cuEventRecord(e0, c->D->stream);
    tfe__gpu_leave(c->D);
    if (fn(c) != TFE_OK) die("call");
    tfe__gpu_enter(c->D, "bench");
    tfe__gpu.cu.cuEventRecord(e1, c->D->stream);
    tfe__gpu.cu.cuEventSynchronize(e1);
    float ms = 0;
    tfe__gpu.cu.cuEventElapsedTime(&ms, e0, e1);
    tfe__gpu_leave(c->D);
    release_out(c);
    if (i >= 0) t[i] = ms;
  }
  tfe__gpu_enter(c->D, "bench");
  tfe__gpu.cu.cuEventDestroy(e0), tfe__gpu.cu.cuEventDestroy(e1);
  tfe__gpu_leave(c->D);
  qsort(t, (size_t)reps, sizeof *t, cmp_d);
  return t[reps / 2];
}

static tfe_status t_svd(la_ctx *c) { return tfe_svd_dyn(&c->a, TFE_SVD_THIN, &c->out[0], &c->out[1], &c->out[2]); }
static tfe_status t_qr(la_ctx *c) { return tfe_qr_dyn(&c->a, false, &c->out[0], &c->out[1]); }
static tfe_status t_eigh(la_ctx *c) { return tfe_eigh_dyn(&c->a, &c->out[0], &c->out[1]); }

#define SOL(call)                                                                          \
  do {                                                                                     \
    tfe__sol_status s_ = (call);                                                           \
    if (s_ != 0) {                                                                         \
      tfe__gpu_leave(c->D);                                                                \
      return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, "direct", "%s: status %d", #call, s_);      \
    }                                                                                      \
  } while (0)
static tfe_status copy_a(la_ctx *c) {
  return tfe__gpu.cu.cuMemcpyDtoDAsync(c->w, (tfe__cu_ptr)(uintptr_t)c->a.data, (size_t)c->n * c->n * 8, c->D->stream)
             ? TFE_ERR_DEVICE
             : TFE_OK;
}
static tfe_status direct_svd(la_ctx *c) {
  int64_t n = c->n;
  TFE_TRY(tfe__gpu_enter(c->D, "direct"));
  copy_a(c);
  SOL(tfe__gpu.sol.gesvd(c->D->sol, c->D->solp, 'S', 'S', n, n, TFE__CUDA_R_64F, (void *)(uintptr_t)c->w, n,
                         TFE__CUDA_R_64F, (void *)(uintptr_t)c->s, TFE__CUDA_R_64F, (void *)(uintptr_t)c->u, n,
                         TFE__CUDA_R_64F, (void *)(uintptr_t)c->vt, n, TFE__CUDA_R_64F, (void *)(uintptr_t)c->work,
                         c->dbytes, c->host, c->hbytes, (int *)(uintptr_t)c->info));
  tfe__gpu_leave(c->D);
  return TFE_OK;
}
static tfe_status direct_qr(la_ctx *c) {
  int64_t n = c->n;
  TFE_TRY(tfe__gpu_enter(c->D, "direct"));
  copy_a(c);
  SOL(tfe__gpu.sol.geqrf(c->D->sol, c->D->solp, n, n, TFE__CUDA_R_64F, (void *)(uintptr_t)c->w, n, TFE__CUDA_R_64F,
                         (void *)(uintptr_t)c->tau, TFE__CUDA_R_64F, (void *)(uintptr_t)c->work, c->dbytes, c->host,
                         c->hbytes, (int *)(uintptr_t)c->info));
  SOL(tfe__gpu.sol.dorgqr(c->D->sol, (int)n, (int)n, (int)n, (void *)(uintptr_t)c->w, (int)n,
                          (const void *)(uintptr_t)c->tau, (void *)(uintptr_t)c->work, c->lwork, (int *)(uintptr_t)c->info));
  tfe__gpu_leave(c->D);
  return TFE_OK;
}
static tfe_status direct_eigh(la_ctx *c) {
  int64_t n = c->n;
  TFE_TRY(tfe__gpu_enter(c->D, "direct"));
  copy_a(c);
  SOL(tfe__gpu.sol.syevd(c->D->sol, c->D->solp, TFE__SOL_EIG_VECTOR, TFE__BLAS_FILL_LOWER, n, TFE__CUDA_R_64F,
                         (void *)(uintptr_t)c->w, n, TFE__CUDA_R_64F, (void *)(uintptr_t)c->s, TFE__CUDA_R_64F,
                         (void *)(uintptr_t)c->work, c->dbytes, c->host, c->hbytes, (int *)(uintptr_t)c->info));
  tfe__gpu_leave(c->D);
  return TFE_OK;
}

/* The direct path's workspace for all three (the largest of their sizes). */
static void direct_setup(la_ctx *c) {
  int64_t n = c->n;
  size_t d = 0, h = 0, dd, hh;
  tfe__gpu_enter(c->D, "setup");
  if (tfe__gpu.sol.gesvd_bs(c->D->sol, c->D->solp, 'S', 'S', n, n, TFE__CUDA_R_64F, NULL, n, TFE__CUDA_R_64F, NULL,
                            TFE__CUDA_R_64F, NULL, n, TFE__CUDA_R_64F, NULL, n, TFE__CUDA_R_64F, &dd, &hh) == 0)
    d = dd > d ? dd : d, h = hh > h ? hh : h;
  if (tfe__gpu.sol.geqrf_bs(c->D->sol, c->D->solp, n, n, TFE__CUDA_R_64F, NULL, n, TFE__CUDA_R_64F, NULL,
                            TFE__CUDA_R_64F, &dd, &hh) == 0)
    d = dd > d ? dd : d, h = hh > h ? hh : h;
  if (tfe__gpu.sol.syevd_bs(c->D->sol, c->D->solp, TFE__SOL_EIG_VECTOR, TFE__BLAS_FILL_LOWER, n, TFE__CUDA_R_64F, NULL,
                            n, TFE__CUDA_R_64F, NULL, TFE__CUDA_R_64F, &dd, &hh) == 0)
    d = dd > d ? dd : d, h = hh > h ? hh : h;
  tfe__gpu.sol.dorgqr_bs(c->D->sol, (int)n, (int)n, (int)n, NULL, (int)n, NULL, &c->lwork);
  if ((size_t)c->lwork * 8 > d) d = (size_t)c->lwork * 8;
  size_t mat = (size_t)n * n * 8;
  tfe__gpu.cu.cuMemAlloc(&c->w, mat), tfe__gpu.cu.cuMemAlloc(&c->u, mat), tfe__gpu.cu.cuMemAlloc(&c->vt, mat);
  tfe__gpu.cu.cuMemAlloc(&c->s, (size_t)n * 8), tfe__gpu.cu.cuMemAlloc(&c->tau, (size_t)n * 8);
  tfe__gpu.cu.cuMemAlloc(&c->work, d ? d : 1), tfe__gpu.cu.cuMemAlloc(&c->info, 64);
  c->dbytes = d, c->hbytes = h, c->host = h ? malloc(h) : NULL;
  tfe__gpu_leave(c->D);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096, reps = argc > 2 ? atoi(argv[2]) : 3;
  if (tfe_gpu_init() != TFE_OK) {
    printf("bench_gpu_linalg: %s\n", tfe_last_error());
    return 0;
  }
  tfe_gpu_device_info info;
  tfe_gpu_device_get(0, &info);
  printf("device: %s (sm_%d%d, %zu MiB), CUDA driver %d; %s\n", info.name, info.cc_major, info.cc_minor,
         info.total_mem >> 20, tfe__gpu.driver_version, tfe_gpu_status());
  la_ctx c;
  memset(&c, 0, sizeof c);
  c.D = &tfe__gpu.dev[0], c.n = n;
  tfe_dyn h;
  int64_t dims[2] = {n, n};
  if (tfe_dyn_empty(&h, TFE_DT_F64, 2, dims, TFE_COLMAJOR) != TFE_OK) die("host matrix");
  double *x = (double *)h.data;
  srand(1);
  for (int64_t j = 0; j < n; j++) /* symmetric (eigh reads the lower triangle; the others any) */
    for (int64_t i = j; i < n; i++) x[i + j * n] = x[j + i * n] = rand() / (double)RAND_MAX - 0.5;
  if (tfe_gpu_upload(&c.a, 0, &h) != TFE_OK) die("upload");
  tfe_dyn_release(&h);
  /* one call first: the kernels, the cuSOLVER handle */
  if (t_qr(&c) != TFE_OK) die("tfe_qr_dyn");
  release_out(&c);
  direct_setup(&c);
  struct { const char *name; la_fn t, d; int reps; } cases[] = {
      {"qr (thin, Q R)", t_qr, direct_qr, 2 * reps + 1},
      {"eigh (W, V)", t_eigh, direct_eigh, reps},
      {"svd (thin, U S Vh)", t_svd, direct_svd, reps},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double td = time_ms(&c, cases[i].d, cases[i].reps), tt = time_ms(&c, cases[i].t, cases[i].reps);
    double td2 = td > 1500 ? td : time_ms(&c, cases[i].d, cases[i].reps); /* long ones: once */
    printf("%-20s f64 n=%d: tenferro %.2f ms, cuSOLVER direct %.2f / %.2f ms (before / after), ratio %.3f (median of %d)\n",
           cases[i].name, n, tt, td, td2, tt / (td < td2 ? td : td2), cases[i].reps);
    fflush(stdout);
  }
  tfe__gpu_enter(c.D, "bench");
  tfe__gpu.cu.cuStreamSynchronize(c.D->stream);
  tfe__cu_ptr bufs[] = {c.w, c.u, c.vt, c.s, c.tau, c.work, c.info};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) tfe__gpu.cu.cuMemFree(bufs[i]);
  tfe__gpu_leave(c.D);
  free(c.host);
  tfe_dyn_release(&c.a);
  return 0;
}
