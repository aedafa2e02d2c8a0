/* tenferro/gpu/hostprof.h — gpu room, companion only: where the host's time goes while a plan's
 * steps are queued (TFE_GPU_HOSTPROF=1 at registration; for measurements, docs/benchmarks.md).
 *
 * With the variable set, the device's vtable slots and the driver and cuBLAS entries the slots
 * call are wrapped by timers (timespec_get; one thread: the counters are not atomic), and at
 * exit one line per item goes to stderr: calls, total seconds, microseconds per call. "steps"
 * is the executor's loop over a plan's steps (from the seq slot's BEGIN to its END: the einsum
 * room's and the prims engine's host work plus the slots), "slot" the backend's slots
 * themselves, "enter" the device lock and cuCtxSetCurrent, then the driver's launches and
 * copies and cuBLAS's GEMMs. Without the variable nothing is wrapped. Parsed only inside
 * tenferro_gpu.c (TFE__GPU_COMPANION), after graph.h. */
#ifndef TENFERRO_GPU_HOSTPROF_H
#define TENFERRO_GPU_HOSTPROF_H
#ifdef TFE__GPU_COMPANION
#include <time.h>

enum { TFE__HP_STEPS, TFE__HP_SLOT, TFE__HP_EW, TFE__HP_MEM, TFE__HP_CTX, TFE__HP_LAUNCH, TFE__HP_COPY, TFE__HP_GEMM,
       TFE__HP_GRAPH, TFE__HP_N };
static struct {
  int on; /* -1: not read */
  int64_t n[TFE__HP_N];
  double s[TFE__HP_N];
  double t_steps;
  tfe__cu_api cu;
  tfe__cublas_api blas;
  tfe_prims_backend vt[TFE__GPU_MAX_DEV];
} tfe__hp = {.on = -1};
static double tfe__hp_now(void) {
  struct timespec ts; /* C11's clock (the library mode has no POSIX clock_gettime declared) */
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#define TFE__HP_TIME(k, call)                   \
  do {                                          \
    double t0_ = tfe__hp_now();                 \
    call;                                       \
    tfe__hp.s[k] += tfe__hp_now() - t0_;        \
    tfe__hp.n[k]++;                             \
  } while (0)

static tfe__cu_result tfe__hp_launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  tfe__cu_result r;
  TFE__HP_TIME(TFE__HP_LAUNCH, r = tfe__hp.cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, args, extra));
  return r;
}
static tfe__cu_result tfe__hp_dtod(tfe__cu_ptr d, tfe__cu_ptr a, size_t n, tfe__cu_stream s) {
  tfe__cu_result r;
  TFE__HP_TIME(TFE__HP_COPY, r = tfe__hp.cu.cuMemcpyDtoDAsync(d, a, n, s));
  return r;
}
static tfe__cu_result tfe__hp_ctx(tfe__cu_ctx c) {
  tfe__cu_result r;
  TFE__HP_TIME(TFE__HP_CTX, r = tfe__hp.cu.cuCtxSetCurrent(c));
  return r;
}
static tfe__cu_result tfe__hp_glaunch(tfe__cu_graph_exec x, tfe__cu_stream s) {
  tfe__cu_result r;
  TFE__HP_TIME(TFE__HP_GRAPH, r = tfe__hp.cu.cuGraphLaunch(x, s));
  return r;
}
#define TFE__HP_GEMM_FN(name)                                                                                     \
  static tfe__blas_status tfe__hp_##name(tfe__blas_handle h, int ta, int tb, int m, int n, int k, const void *al,  \
                                         const void *A, int lda, long long sa, const void *B, int ldb, long long sb, \
                                         const void *be, void *C, int ldc, long long sc, int batch) {              \
    tfe__blas_status r;                                                                                         \
    TFE__HP_TIME(TFE__HP_GEMM, r = tfe__hp.blas.name(h, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch)); \
    return r;                                                                                                   \
  }
TFE__HP_GEMM_FN(sgemm_sb)
TFE__HP_GEMM_FN(dgemm_sb)
TFE__HP_GEMM_FN(cgemm_sb)
TFE__HP_GEMM_FN(zgemm_sb)

static int tfe__hp_dev(const tfe_prims_backend *be) { return ((tfe__gpu_dev *)be->ctx)->info.index; }
static tfe_status tfe__hp_exec(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  tfe_status st;
  TFE__HP_TIME(TFE__HP_SLOT, st = tfe__hp.vt[tfe__hp_dev(be)].exec[d->op](be, d, plan));
  return st;
}
static tfe_status tfe__hp_ew(const tfe_prims_backend *be, const tfe_ew_desc *d) {
  tfe_status st;
  TFE__HP_TIME(TFE__HP_EW, st = tfe__hp.vt[tfe__hp_dev(be)].elementwise(be, d));
  return st;
}
static tfe_status tfe__hp_alloc(const tfe_prims_backend *be, size_t bytes, void **out) {
  tfe_status st;
  TFE__HP_TIME(TFE__HP_MEM, st = tfe__hp.vt[tfe__hp_dev(be)].mem_alloc(be, bytes, out));
  return st;
}
static void tfe__hp_free(const tfe_prims_backend *be, void *p) { TFE__HP_TIME(TFE__HP_MEM, tfe__hp.vt[tfe__hp_dev(be)].mem_free(be, p)); }
static tfe_status tfe__hp_seq(const tfe_prims_backend *be, tfe_seq_desc *d) {
  if (d->op == TFE_SEQ_END && d->token) tfe__hp.s[TFE__HP_STEPS] += tfe__hp_now() - tfe__hp.t_steps, tfe__hp.n[TFE__HP_STEPS]++;
  tfe_status st = tfe__hp.vt[tfe__hp_dev(be)].seq(be, d);
  if (d->op == TFE_SEQ_BEGIN && d->action == TFE_SEQ_RUN) tfe__hp.t_steps = tfe__hp_now();
  return st;
}
static void tfe__hp_report(void) {
  static const char *nm[TFE__HP_N] = {"steps (executor loop)", "slot: contract/unary", "slot: elementwise",
                                      "mem_alloc/free", "enter: cuCtxSetCurrent", "cuLaunchKernel", "cuMemcpyDtoDAsync",
                                      "cuBLAS gemm_sb", "cuGraphLaunch"};
  fprintf(stderr, "# tfe gpu host profile (TFE_GPU_HOSTPROF): item calls seconds us_per_call\n");
  for (int k = 0; k < TFE__HP_N; k++)
    fprintf(stderr, "hostprof %-24s %10lld %10.6f %8.2f\n", nm[k], (long long)tfe__hp.n[k], tfe__hp.s[k],
            tfe__hp.n[k] ? 1e6 * tfe__hp.s[k] / (double)tfe__hp.n[k] : 0.0);
}
/* At registration (tfe__gpu_register): wraps D's slots, and once the driver's and cuBLAS's
 * entries, when TFE_GPU_HOSTPROF=1. */
static void tfe__gpu_hp_install(tfe__gpu_dev *D) {
  if (tfe__hp.on < 0) {
    const char *e = getenv("TFE_GPU_HOSTPROF");
    tfe__hp.on = e && e[0] == '1';
    if (tfe__hp.on) {
      tfe__hp.cu = tfe__gpu.cu, tfe__hp.blas = tfe__gpu.blas;
      if (tfe__gpu.cu.cuLaunchKernel) tfe__gpu.cu.cuLaunchKernel = tfe__hp_launch;
      if (tfe__gpu.cu.cuMemcpyDtoDAsync) tfe__gpu.cu.cuMemcpyDtoDAsync = tfe__hp_dtod;
      if (tfe__gpu.cu.cuCtxSetCurrent) tfe__gpu.cu.cuCtxSetCurrent = tfe__hp_ctx;
      if (tfe__gpu.cu.cuGraphLaunch) tfe__gpu.cu.cuGraphLaunch = tfe__hp_glaunch;
      if (tfe__gpu.blas.dgemm_sb) {
        tfe__gpu.blas.sgemm_sb = tfe__hp_sgemm_sb, tfe__gpu.blas.dgemm_sb = tfe__hp_dgemm_sb;
        tfe__gpu.blas.cgemm_sb = tfe__hp_cgemm_sb, tfe__gpu.blas.zgemm_sb = tfe__hp_zgemm_sb;
      }
      atexit(tfe__hp_report);
    }
  }
  if (!tfe__hp.on || D->info.index >= TFE__GPU_MAX_DEV) return;
  tfe__hp.vt[D->info.index] = D->vt;
  for (int op = 0; op < TFE_PRIM_COUNT; op++)
    if (D->vt.exec[op]) D->vt.exec[op] = tfe__hp_exec;
  D->vt.elementwise = tfe__hp_ew, D->vt.mem_alloc = tfe__hp_alloc, D->vt.mem_free = tfe__hp_free, D->vt.seq = tfe__hp_seq;
}

#endif /* TFE__GPU_COMPANION */
#endif
