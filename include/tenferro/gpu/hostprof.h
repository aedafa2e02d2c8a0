/* tenferro/gpu/hostprof.h — gpu room, companion only: where the host's time goes while a plan's
 * steps are queued (TFE_GPU_HOSTPROF=1 at registration; for measurements, docs/benchmarks.md).
 *
 * With the variable set, the device's vtable slots and the driver and cuBLAS entries the slots
 * call are wrapped by timers (timespec_get; one thread: the counters are not atomic), and at
 * exit one line per item goes to stderr: calls, total seconds, microseconds per call. "steps"
 * is the executor's loop over a plan's steps (from the seq slot's BEGIN to its END: the einsum
 * room's and the prims engine's host work plus the slots), "slot" the backend's slots
 * themselves, "enter" the device lock and cuCtxSetCurrent, then the driver's launches and
 * copies and cuBLAS's GEMMs. Without the variable nothing is wrapped.
 * TFE_GPU_DEVPROF=1 (which implies the wrappers, and turns CUDA graphs off) also times every
 * launch, device copy and GEMM on the device: an event before and after it on the queue, then
 * a wait for the second (so each is timed alone, on an idle queue: the sum is the device's busy
 * time without the gaps between launches); at exit one line per call of the plan's runs (the
 * calls' positions within a run from the seq slot's BEGIN, averaged over the runs): the step
 * (the slot call it belongs to), what ran (kernel and grid, or the GEMM's ops and sizes, or the
 * copy's bytes) and its mean microseconds; then the sums per kind of call. Parsed only inside
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
  /* TFE_GPU_DEVPROF: device times per call position within a run */
  int dp;
  tfe__gpu_dev *dev; /* the device of the slot call in progress */
  tfe__cu_event e0, e1;
  int runs, call, step, inrun;
  struct tfe__hp_rec { int step, n; double us, min; char what[120]; } *rec;
  int nrec, caprec;
  char stepdesc[160];
} tfe__hp = {.on = -1};
/* Times one call on the queue of the slot call in progress (DEVPROF): the call, between two
 * events, then a wait. */
static void tfe__hp_dp_begin(void) {
  if (!tfe__hp.dp || !tfe__hp.dev) return;
  if (!tfe__hp.e0) {
    if (tfe__hp.cu.cuEventCreate(&tfe__hp.e0, 0) != 0 || tfe__hp.cu.cuEventCreate(&tfe__hp.e1, 0) != 0) {
      tfe__hp.dp = 0;
      return;
    }
  }
  tfe__hp.cu.cuEventRecord(tfe__hp.e0, tfe__hp.dev->stream);
}
static void tfe__hp_dp_end(const char *what) {
  if (!tfe__hp.dp || !tfe__hp.dev || !tfe__hp.e0) return;
  float ms = 0;
  tfe__hp.cu.cuEventRecord(tfe__hp.e1, tfe__hp.dev->stream);
  if (tfe__hp.cu.cuEventSynchronize(tfe__hp.e1) != 0 || tfe__hp.cu.cuEventElapsedTime(&ms, tfe__hp.e0, tfe__hp.e1) != 0)
    return;
  if (!tfe__hp.inrun) return;
  int i = tfe__hp.call++;
  if (i >= tfe__hp.caprec) {
    int nc = tfe__hp.caprec ? 2 * tfe__hp.caprec : 256;
    void *r = realloc(tfe__hp.rec, (size_t)nc * sizeof *tfe__hp.rec);
    if (!r) return;
    tfe__hp.rec = (struct tfe__hp_rec *)r, tfe__hp.caprec = nc;
  }
  if (i >= tfe__hp.nrec) {
    memset(&tfe__hp.rec[i], 0, sizeof tfe__hp.rec[i]);
    tfe__hp.rec[i].step = tfe__hp.step;
    snprintf(tfe__hp.rec[i].what, sizeof tfe__hp.rec[i].what, "%s", what);
    tfe__hp.nrec = i + 1;
  }
  tfe__hp.rec[i].us += 1e3 * (double)ms;
  if (!tfe__hp.rec[i].n || 1e3 * (double)ms < tfe__hp.rec[i].min) tfe__hp.rec[i].min = 1e3 * (double)ms;
  tfe__hp.rec[i].n++;
}
static const char *tfe__hp_kname(tfe__cu_function f) {
  tfe__gpu_dev *D = tfe__hp.dev;
  if (!D) return "kernel";
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    if (f == D->f_perm[g] || f == D->f_perm_w[g] || f == D->f_perm_b[g]) return "perm2d";
    if (f == D->f_unary[g]) return "unary";
    if (f == D->f_scale[g]) return "scale";
    if (f == D->f_ew[g]) return "ew";
    if (f == D->f_ewred[g]) return "ewred";
    if (f == D->f_ewn[g]) return "ewn";
    if (f == D->f_gsmall[g]) return "gsmall";
  }
  return "kernel";
}
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
  tfe__hp_dp_begin();
  TFE__HP_TIME(TFE__HP_LAUNCH, r = tfe__hp.cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, args, extra));
  if (tfe__hp.dp) {
    char w[120];
    const char *kn = tfe__hp_kname(f);
    if (!strcmp(kn, "perm2d") && args && args[2] && args[3]) {
      const tfe__gpu_kparams *p = (const tfe__gpu_kparams *)args[2];
      const tfe__gperm_q *q = (const tfe__gperm_q *)args[3];
      snprintf(w, sizeof w, "perm2d grid %ux%u x%u mode %d tile %dx%d n %lld nout %d", gx, gy, bx, q->mode, q->TX, q->TY,
               (long long)p->total, p->nout);
    } else if (!strcmp(kn, "unary") && args && args[2]) {
      const tfe__gpu_kparams *p = (const tfe__gpu_kparams *)args[2];
      snprintf(w, sizeof w, "unary grid %u x%u n %lld nout %d nsum %d (%lld)", gx, bx, (long long)p->total, p->nout, p->nsum,
               (long long)p->nsum_total);
    } else
      snprintf(w, sizeof w, "%s grid %ux%u x%u shm %u", kn, gx, gy, bx, shm);
    tfe__hp_dp_end(w);
  }
  return r;
}
static tfe__cu_result tfe__hp_dtod(tfe__cu_ptr d, tfe__cu_ptr a, size_t n, tfe__cu_stream s) {
  tfe__cu_result r;
  tfe__hp_dp_begin();
  TFE__HP_TIME(TFE__HP_COPY, r = tfe__hp.cu.cuMemcpyDtoDAsync(d, a, n, s));
  if (tfe__hp.dp) {
    char w[64];
    snprintf(w, sizeof w, "memcpy dtod %zu bytes", n);
    tfe__hp_dp_end(w);
  }
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
    tfe__hp_dp_begin();                                                                                         \
    TFE__HP_TIME(TFE__HP_GEMM, r = tfe__hp.blas.name(h, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch)); \
    if (tfe__hp.dp) {                                                                                           \
      char w_[120];                                                                                             \
      snprintf(w_, sizeof w_, #name " %c%c m %d n %d k %d lda %d ldb %d ldc %d batch %d", "NTC"[ta % 3], "NTC"[tb % 3], m, n, \
               k, lda, ldb, ldc, batch);                                                                        \
      tfe__hp_dp_end(w_);                                                                                       \
    }                                                                                                           \
    return r;                                                                                                   \
  }
TFE__HP_GEMM_FN(sgemm_sb)
TFE__HP_GEMM_FN(dgemm_sb)
TFE__HP_GEMM_FN(cgemm_sb)
TFE__HP_GEMM_FN(zgemm_sb)

static int tfe__hp_dev(const tfe_prims_backend *be) { return ((tfe__gpu_dev *)be->ctx)->info.index; }
static tfe_status tfe__hp_exec(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  tfe_status st;
  tfe__hp.dev = (tfe__gpu_dev *)be->ctx;
  if (tfe__hp.dp && tfe__hp.inrun && tfe__hp.runs == 1) { /* the step's shapes, printed with the first run's calls */
    int n = snprintf(tfe__hp.stepdesc, sizeof tfe__hp.stepdesc, "step %d %s", tfe__hp.step, tfe_prim_op_name(d->op));
    const tfe_dyn *v[3] = {d->a, d->b, d->c};
    for (int x = 0; x < 3 && n < (int)sizeof tfe__hp.stepdesc - 24; x++) {
      if (!v[x]) continue;
      n += snprintf(tfe__hp.stepdesc + n, sizeof tfe__hp.stepdesc - (size_t)n, " %c[", "ABC"[x]);
      for (int i = 0; i < v[x]->lay.rank && n < (int)sizeof tfe__hp.stepdesc - 24; i++)
        n += snprintf(tfe__hp.stepdesc + n, sizeof tfe__hp.stepdesc - (size_t)n, "%s%lld:%lld", i ? "," : "",
                      (long long)v[x]->lay.dims[i], (long long)v[x]->lay.strides[i]);
      n += snprintf(tfe__hp.stepdesc + n, sizeof tfe__hp.stepdesc - (size_t)n, "]");
    }
    fprintf(stderr, "devprof %s\n", tfe__hp.stepdesc);
  }
  TFE__HP_TIME(TFE__HP_SLOT, st = tfe__hp.vt[tfe__hp_dev(be)].exec[d->op](be, d, plan));
  if (tfe__hp.inrun) tfe__hp.step++;
  return st;
}
static tfe_status tfe__hp_ew(const tfe_prims_backend *be, const tfe_ew_desc *d) {
  tfe_status st;
  tfe__hp.dev = (tfe__gpu_dev *)be->ctx;
  TFE__HP_TIME(TFE__HP_EW, st = tfe__hp.vt[tfe__hp_dev(be)].elementwise(be, d));
  if (tfe__hp.inrun) tfe__hp.step++;
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
  if (d->op == TFE_SEQ_END) tfe__hp.inrun = 0;
  tfe_status st = tfe__hp.vt[tfe__hp_dev(be)].seq(be, d);
  if (d->op == TFE_SEQ_BEGIN && d->action == TFE_SEQ_RUN) {
    tfe__hp.t_steps = tfe__hp_now();
    tfe__hp.inrun = 1, tfe__hp.runs++, tfe__hp.call = 0, tfe__hp.step = 0;
  }
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
  if (!tfe__hp.dp && !tfe__hp.nrec) return;
  /* the device times per call position (the plan's runs; a position every run reached) */
  static const char *kinds[] = {"perm2d", "unary", "scale", "ewred", "ew", "gsmall", "memcpy", "sgemm", "dgemm", "cgemm", "zgemm",
                                "kernel"};
  enum { NK = sizeof kinds / sizeof *kinds };
  double ks[NK] = {0}, tot = 0;
  int kn[NK] = {0};
  fprintf(stderr, "# tfe gpu device profile (TFE_GPU_DEVPROF): %d runs, %d calls a run: call step min_us mean_us what "
          "(the mean includes the first run's lazy module loads; the sums below add the minima)\n", tfe__hp.runs, tfe__hp.nrec);
  for (int i = 0; i < tfe__hp.nrec; i++) {
    const struct tfe__hp_rec *r = &tfe__hp.rec[i];
    double us = r->min;
    fprintf(stderr, "devprof %4d %4d %9.2f %9.2f %s\n", i, r->step, us, r->n ? r->us / r->n : 0, r->what);
    for (int k = 0; k < NK; k++)
      if (!strncmp(r->what, kinds[k], strlen(kinds[k])) || k == NK - 1) {
        ks[k] += us, kn[k]++;
        break;
      }
    tot += us;
  }
  for (int k = 0; k < NK; k++)
    if (kn[k]) fprintf(stderr, "devprof sum %-8s %5d calls %10.2f us\n", kinds[k], kn[k], ks[k]);
  fprintf(stderr, "devprof sum total    %5d calls %10.2f us a run\n", tfe__hp.nrec, tot);
}
/* At registration (tfe__gpu_register): wraps D's slots, and once the driver's and cuBLAS's
 * entries, when TFE_GPU_HOSTPROF=1. */
static void tfe__gpu_hp_install(tfe__gpu_dev *D) {
  if (tfe__hp.on < 0) {
    const char *e = getenv("TFE_GPU_HOSTPROF"), *e2 = getenv("TFE_GPU_DEVPROF");
    tfe__hp.dp = e2 && e2[0] == '1';
    tfe__hp.on = (e && e[0] == '1') || tfe__hp.dp;
    if (tfe__hp.dp) tfe_gpu_graphs_enable(false); /* the waits cannot run while a graph is captured */
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
