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
static double bench_tropical(int n, int reps) {
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
  return tb;
}

/* ---- the hardware's max-plus rate and the tropical GEMM's kernels, side by side ---------------
 * A kernel of 32 independent accumulators per thread, acc[j] = max(acc[j], x + b[j]) on
 * registers (x += d before each 32: one more add per 32 elements, every sum new, so none is
 * shared between steps), no memory traffic: the most max-plus
 * elements per second the device runs, in each form of the max (compare and select, fmax),
 * with the argmax's bookkeeping, and plain adds (the FP64 / FP32 pipe's rate). Then the tropical
 * GEMM kernel launched directly at n x n x n (bench_tgemm_kernels). */
static const char *const bench_peak_src =
    "typedef TFE_R R;\n"
    "#define BODY(UPD)                                                                 \\\n"
    "  R acc[32], bv[32], x = (R)(threadIdx.x * 1e-3);                                 \\\n"
    "  int arg[32];                                                                    \\\n"
    "  for (int j = 0; j < 32; j++) acc[j] = (R)-1e30, arg[j] = -1, bv[j] = (R)(0.5 * j); \\\n"
    "  for (int it = 0; it < iters; it++) {                                            \\\n"
    "    x += d;                                                                       \\\n"
    "    _Pragma(\"unroll\") for (int j = 0; j < 32; j++) {                            \\\n"
    "      R v = x + bv[j];                                                            \\\n"
    "      R &a = acc[j];                                                              \\\n"
    "      UPD;                                                                        \\\n"
    "    }                                                                             \\\n"
    "  }                                                                               \\\n"
    "  R s = acc[0];                                                                   \\\n"
    "  int w = arg[0];                                                                 \\\n"
    "  for (int j = 1; j < 32; j++) s = s > acc[j] ? s : acc[j], w += arg[j];          \\\n"
    "  out[blockIdx.x * blockDim.x + threadIdx.x] = s + (R)w;\n"
    "extern \"C\" __global__ void peak_sel(R *out, R d, int iters) { BODY(a = v > a ? v : a) }\n"
    "extern \"C\" __global__ void peak_fmax(R *out, R d, int iters) { BODY(a = fmax(a, v)) }\n"
    "extern \"C\" __global__ void peak_arg(R *out, R d, int iters) { BODY(if (v > a) { a = v; arg[j] = it; }) }\n"
    "extern \"C\" __global__ void peak_add(R *out, R d, int iters) { BODY(a = a + v) }\n";
/* A module of src for kind g (f32 or f64) with extra options (a space-separated list; NULL: none). */
static tfe__cu_module bench_module(tfe__gpu_dev *D, const char *src, int g, const char *opt) {
  char arch[48], ob[256];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", D->info.cc_major, D->info.cc_minor);
  const char *opts[12] = {arch, tfe__gpu_kdefs[g][0], tfe__gpu_kdefs[g][1], "--std=c++14"};
  int no = 4;
  snprintf(ob, sizeof ob, "%s", opt ? opt : "");
  for (char *t = strtok(ob, " "); t && no < 12; t = strtok(NULL, " ")) opts[no++] = t;
  tfe__rtc_prog p = NULL;
  tfe__cu_module m = NULL;
  if (tfe__gpu.rtc.create(&p, src, "bench.cu", 0, NULL, NULL) != 0) return NULL;
  tfe__rtc_result r = tfe__gpu.rtc.compile(p, no, opts);
  size_t n = 0;
  char *img = NULL;
  if (r == 0 && tfe__gpu.rtc.cubin_size(p, &n) == 0 && (img = malloc(n)) && tfe__gpu.rtc.cubin(p, img) == 0) {
    tfe__gpu_enter(D, "bench");
    if (tfe__gpu.cu.cuModuleLoadData(&m, img) != 0) m = NULL;
    tfe__gpu_leave(D);
  } else if (r != 0) {
    size_t ln = 0;
    tfe__gpu.rtc.log_size(p, &ln);
    char *log = malloc(ln + 1);
    if (log && tfe__gpu.rtc.log(p, log) == 0) fprintf(stderr, "bench module: %.2000s\n", log);
    free(log);
  }
  free(img);
  tfe__gpu.rtc.destroy(&p);
  return m;
}
typedef struct raw_ctx {
  tfe__gpu_dev *D;
  tfe__cu_function f;
  unsigned gx, gy;
  void **args;
} raw_ctx;
static tfe_status run_raw(void *p) {
  raw_ctx *q = (raw_ctx *)p;
  tfe__gpu_enter(q->D, "bench");
  tfe__cu_result r = tfe__gpu.cu.cuLaunchKernel(q->f, q->gx, q->gy, 1, 256, 1, 1, 0, q->D->stream, q->args, NULL);
  tfe__gpu_leave(q->D);
  return r ? TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, "bench", "launch: %s", tfe__cu_errstr(r)) : TFE_OK;
}
/* Peak element rates; *peak gets the best max-plus form's (elements per second). */
static void bench_peak(tfe__gpu_dev *D, int g, int reps, double elem_dgemm, double *peak) {
  tfe__cu_module m = bench_module(D, bench_peak_src, g, NULL);
  if (!m) { printf("peak kernels: no module\n"); return; }
  static const char *const nm[] = {"peak_sel", "peak_fmax", "peak_arg", "peak_add"};
  static const char *const what[] = {"add + compare/select", "add + fmax", "add + compare/select + argmax", "add + add (the pipe's rate)"};
  unsigned blocks = 132 * 8;
  int iters = g == TFE__GK_F64 ? 8192 : 16384;
  tfe__cu_ptr out = 0;
  tfe__gpu_enter(D, "bench");
  tfe__gpu.cu.cuMemAlloc(&out, (size_t)blocks * 256 * 8);
  tfe__gpu_leave(D);
  double dd = 1e-9;
  float df = 1e-9f;
  void *args[] = {&out, g == TFE__GK_F64 ? (void *)&dd : (void *)&df, &iters};
  *peak = 0;
  for (int k = 0; k < 4; k++) {
    raw_ctx q = {D, NULL, blocks, 1, args};
    if (tfe__gpu.cu.cuModuleGetFunction(&q.f, m, nm[k]) != 0) continue;
    double t = time_ms(D, run_raw, &q, reps), el = (double)blocks * 256 * iters * 32;
    double rate = el / t * 1e3;
    if (k < 2 && rate > *peak) *peak = rate;
    printf("peak %s %s: %.3f ms, %.2f T elements/s (%.2f T ops/s counting 2 per element)%s", g == TFE__GK_F64 ? "f64" : "f32",
           what[k], t, rate / 1e12, 2 * rate / 1e12, elem_dgemm > 0 ? "" : "\n");
    if (elem_dgemm > 0) printf(", %.3f of cuBLAS dgemm's element rate\n", rate / elem_dgemm);
  }
  tfe__gpu_enter(D, "bench");
  tfe__gpu.cu.cuMemFree(out), tfe__gpu.cu.cuModuleUnload(m);
  tfe__gpu_leave(D);
}
/* The tropical GEMM kernel (max-plus) on n x n column-major operands of kind g: the library's
 * (as loaded, with argmax too), then shapes of kernels.h's own source (its typedefs piece and
 * the tropical pieces, compiled with -DTG_BENCH: max-plus only) under -D options: elements per
 * thread (TG_TM x TG_TN), K step (TG_TK), launch bound (TG_MINB), the max's form (TG_FMAX).
 * TFE_BENCH_TG="TM/TN/TK/MINB/FMAX,..." replaces the list. */
static void bench_tgemm_kernels(tfe__gpu_dev *D, int g, int n, int reps, double elem_dgemm, double peak) {
  int64_t dims[2] = {n, n};
  tfe_dyn a, b, c, ix;
  tfe_dtype dt = g == TFE__GK_F64 ? TFE_DT_MAXPLUS_F64 : TFE_DT_MAXPLUS_F32;
  if (g == TFE__GK_F64) dev_random(dt, TFE_DT_F64, 2, dims, &a), dev_random(dt, TFE_DT_F64, 2, dims, &b);
  else {
    tfe_dyn h;
    if (tfe_dyn_empty(&h, TFE_DT_F32, 2, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
    for (int64_t i = 0; i < (int64_t)n * n; i++) ((float *)h.data)[i] = (float)(rand() / (double)RAND_MAX);
    h.dtype = dt;
    if (tfe_gpu_upload(&a, 0, &h) != TFE_OK || tfe_gpu_upload(&b, 0, &h) != TFE_OK) exit(1);
    tfe_dyn_release(&h);
  }
  if (tfe_gpu_alloc_dyn(&c, 0, dt, 2, dims, TFE_COLMAJOR) != TFE_OK || tfe_gpu_alloc_dyn(&ix, 0, TFE_DT_I64, 2, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
  size_t ns = strlen(tfe__gpu_ksrc[0]) + 1;
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc_trop / sizeof *tfe__gpu_ksrc_trop; i++) ns += strlen(tfe__gpu_ksrc_trop[i]);
  char *src = calloc(ns, 1);
  strcat(src, tfe__gpu_ksrc[0]);
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc_trop / sizeof *tfe__gpu_ksrc_trop; i++) strcat(src, tfe__gpu_ksrc_trop[i]);
  tfe__gpu_gparams p;
  memset(&p, 0, sizeof p);
  p.m = p.n = p.k = n, p.ars = 1, p.acs = n, p.brs = 1, p.bcs = n, p.crs = 1, p.ccs = n, p.irs = 1, p.ics = n;
  p.alpha = 0, p.beta = -INFINITY, p.beta_zero = 1;
  tfe__cu_ptr pc = (tfe__cu_ptr)(uintptr_t)c.data, pa = (tfe__cu_ptr)(uintptr_t)a.data, pb = (tfe__cu_ptr)(uintptr_t)b.data,
              pi = (tfe__cu_ptr)(uintptr_t)ix.data;
  void *args[] = {&pc, &pa, &pb, &pi, &p};
  double el = (double)n * n * n;
  const char *gname = g == TFE__GK_F64 ? "f64" : "f32";
  int tm = g == TFE__GK_F64 ? TFE__TG_TM64 : TFE__TG_TM32, tn = g == TFE__GK_F64 ? TFE__TG_TN64 : TFE__TG_TN32;
  tfe_dyn ref, out; /* the library kernel's C, each variant's C: equal bit for bit (a max of the same sums) */
  if (tfe_dyn_empty(&ref, dt, 2, dims, TFE_COLMAJOR) != TFE_OK || tfe_dyn_empty(&out, dt, 2, dims, TFE_COLMAJOR) != TFE_OK) exit(1);
  for (int arg = 1; arg >= 0; arg--) { /* the library's kernels (the plain one last: its C is the reference) */
    raw_ctx q = {D, D->f_tgemm[g][0][arg], (unsigned)((n + (arg ? 128 : 16 * tm) - 1) / (arg ? 128 : 16 * tm)),
                 (unsigned)((n + (arg ? 128 : 16 * tn) - 1) / (arg ? 128 : 16 * tn)), args};
    double t = time_ms(D, run_raw, &q, reps), rate = el / t * 1e3;
    printf("max-plus %s n=%d the library's kernel%s (%d x %d a thread): %.3f ms, %.2f T elements/s, %.3f of cuBLAS dgemm's rate, "
           "%.3f of the measured peak\n", gname, n, arg ? " + argmax" : "", arg ? 8 : tm, arg ? 8 : tn, t, rate / 1e12,
           rate / elem_dgemm, peak > 0 ? rate / peak : 0);
  }
  if (tfe_gpu_download(&c, &ref) != TFE_OK) exit(1);
  size_t nbytes = (size_t)n * (size_t)n * (g == TFE__GK_F64 ? 8 : 4);
  const char *list = getenv("TFE_BENCH_TG");
  if (!list) list = g == TFE__GK_F64 ? "8/8/8/1/0,8/4/8/1/0,8/4/8/2/0,4/8/8/2/0,4/4/8/2/0,4/4/8/3/0,8/4/16/2/0,4/4/16/2/0,4/4/8/2/1"
                                     : "8/8/8/1/1,8/4/8/2/1,4/4/8/2/1";
  for (const char *v = list; *v;) {
    int TM = 0, TN = 0, TK = 0, MB = 0, FM = 0;
    if (sscanf(v, "%d/%d/%d/%d/%d", &TM, &TN, &TK, &MB, &FM) != 5) break;
    while (*v && *v != ',') v++;
    if (*v == ',') v++;
    char opt[160];
    snprintf(opt, sizeof opt, "-DTG_BENCH=1 -DTG_TM=%d -DTG_TN=%d -DTG_TK=%d -DTG_MINB=%d -DTG_FMAX=%d", TM, TN, TK, MB, FM);
    double t0 = now_s();
    tfe__cu_module m = bench_module(D, src, g, opt);
    double tc = now_s() - t0;
    raw_ctx q = {D, NULL, (unsigned)((n + 16 * TM - 1) / (16 * TM)), (unsigned)((n + 16 * TN - 1) / (16 * TN)), args};
    if (!m || tfe__gpu.cu.cuModuleGetFunction(&q.f, m, "tfe_tgemm_1") != 0) { printf("tgemm %s %s: no module\n", gname, opt); continue; }
    tfe__gpu_enter(D, "bench"); /* C = A first: a variant that leaves C alone cannot pass */
    tfe__gpu.cu.cuMemcpyDtoDAsync(pc, pa, nbytes, D->stream);
    tfe__gpu_leave(D);
    double t = time_ms(D, run_raw, &q, reps), rate = el / t * 1e3;
    bool same = tfe_gpu_download(&c, &out) == TFE_OK && !memcmp(out.data, ref.data, nbytes);
    printf("max-plus %s n=%d TM %d TN %d TK %d minblocks %d %s: %.3f ms, %.2f T elements/s, %.3f of cuBLAS dgemm's rate, "
           "%.3f of the measured peak (compiled in %.1f s), C %s\n", gname, n, TM, TN, TK, MB, FM ? "fmax" : "compare/select", t,
           rate / 1e12, rate / elem_dgemm, peak > 0 ? rate / peak : 0, tc, same ? "equal to the library's" : "DIFFERS");
    tfe__gpu_enter(D, "bench");
    tfe__gpu.cu.cuModuleUnload(m);
    tfe__gpu_leave(D);
  }
  free(src);
  tfe_dyn_release(&ref), tfe_dyn_release(&out);
  tfe_dyn_release(&a), tfe_dyn_release(&b), tfe_dyn_release(&c), tfe_dyn_release(&ix);
}

/* ---- tropical einsum steps other than GEMMs, against the same steps in f64 -------------------- */
typedef struct ts_ctx { tfe_dyn a, b, c; const int32_t *la, *lb, *lc; double one, zero; } ts_ctx;
static tfe_status run_ts(void *p) {
  ts_ctx *q = (ts_ctx *)p;
  return tfe_contract_dyn(&q->one, &q->a, q->la, q->lb ? &q->b : NULL, q->lb, &q->zero, &q->c, q->lc);
}
static void bench_trop_steps(int reps) {
  static const int32_t ijk[3] = {'i', 'j', 'k'}, kji[3] = {'k', 'j', 'i'}, ij[2] = {'i', 'j'}, i1[1] = {'i'};
  struct { const char *name; int ra, rc; int64_t da[3], dc[3]; const int32_t *la, *lb, *lc; } st[3] = {
      {"permutation ijk->kji 256^3", 3, 3, {256, 256, 256}, {256, 256, 256}, ijk, NULL, kji},
      {"reduction ij->i 4096^2", 2, 1, {4096, 4096}, {4096}, ij, NULL, i1},
      {"elementwise product ij,ij->ij 4096^2", 2, 2, {4096, 4096}, {4096, 4096}, ij, ij, ij}};
  for (int s = 0; s < 3; s++)
    for (int k = 0; k < 2; k++) {
      tfe_dtype dt = k ? TFE_DT_MAXPLUS_F64 : TFE_DT_F64;
      ts_ctx q;
      memset(&q, 0, sizeof q);
      q.la = st[s].la, q.lb = st[s].lb, q.lc = st[s].lc, q.one = k ? 0 : 1, q.zero = k ? -INFINITY : 0;
      dev_random(dt, TFE_DT_F64, st[s].ra, st[s].da, &q.a);
      if (q.lb) dev_random(dt, TFE_DT_F64, st[s].ra, st[s].da, &q.b);
      if (tfe_gpu_alloc_dyn(&q.c, 0, dt, st[s].rc, st[s].dc, TFE_COLMAJOR) != TFE_OK) exit(1);
      double t = time_ms(&tfe__gpu.dev[0], run_ts, &q, reps);
      printf("%s %s on the device: %.3f ms\n", st[s].name, tfe_dtype_name(dt), t);
      tfe_dyn_release(&q.a), tfe_dyn_release(&q.c);
      if (q.lb) tfe_dyn_release(&q.b);
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
  const char *ot0 = getenv("TFE_BENCH_ONLY_TROP");
  for (int g = 0; g < (ot0 && *ot0 == '1' ? 2 : TFE__GK_COUNT); g++) {
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
  const char *ot = getenv("TFE_BENCH_ONLY_TROP"); /* 1: the tropical GEMMs and the peak only */
  if (!(ot && *ot == '1')) {
    bench_ew(TFE_DT_F64, reps);
    bench_ew(TFE_DT_C128, reps);
    bench_iij(reps);
    bench_trop_steps(reps);
  }
  double tb = bench_tropical(n, reps), elem_dgemm = (double)n * n * n / tb * 1e3, peak = 0;
  for (int g = TFE__GK_F64; g >= TFE__GK_F32; g--) {
    bench_peak(D, g, reps, elem_dgemm, &peak);
    bench_tgemm_kernels(D, g, n, reps, elem_dgemm, peak);
  }
  return 0;
}
