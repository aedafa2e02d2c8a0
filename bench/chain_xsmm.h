/* bench/chain_xsmm.h — `bench_chain --xsmm` (issue 18): the chain's two middle GEMMs on libxsmm,
 * the field's specialist JIT library for small GEMMs (Debian libxsmm-dev 1.17), against the own
 * small engine in the same process. Included by bench_chain.c only when TFE_BENCH_XSMM is
 * defined (`make bench-xsmm` builds build/bench/bench_chain_xsmm); nothing else needs libxsmm.
 *
 * The middle steps' layouts, as the executor chose them (column-major, ld = leading dim):
 *   E.A  T (D x dD, ld D) = E (D x D, ld D) . A_i (D x dD, ld D)                       NN
 *   T.B  E (D x D, ld D)  = B_i^T . T,  B_i (dD x D, ld dD), T (dD x D, ld dD)          TN
 * (T.B's result has B_i's open bond first, so the transposed operand is the input B_i.) libxsmm
 * 1.17 JIT-compiles NN and NT kernels only (a TN request dispatches nothing: reported at start),
 * so T.B runs on libxsmm two ways: "otrans+NN" (libxsmm_otrans of B_i into a D x dD scratch,
 * then the NN kernel: the engine's own operands and result) and "NN on B^T" (B_i stored
 * transposed beforehand, a layout the caller could choose for its inputs: the kernel alone).
 * Kernels are dispatched without prefetch arguments (LIBXSMM_GEMM_PREFETCH_NONE), beta = 0.
 *
 * Hot: each variant called `inner` times on the same operands (L1-resident), the variants
 * alternated within every repetition, median per call. Chain: the middle steps i = 1..N-2 in a
 * row on the chain's own fresh operands (A_i, B_i), E and T reused (as the engine's held steps
 * do), time per step. libxsmm's results are checked against the engine's: exit 1 beyond rounding. */
#include <float.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <libxsmm.h>
#pragma GCC diagnostic pop

typedef struct xs_step {
  const tfe_contract_plan *P;
  double *ws;                     /* the engine's workspace */
  libxsmm_dmmfunction nn;         /* the NN kernel of this shape (T.B: on B^T) */
  int64_t m, n, k;
} xs_step;

static libxsmm_dmmfunction xs_dispatch(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, int flags) {
  libxsmm_blasint M = (libxsmm_blasint)m, N = (libxsmm_blasint)n, K = (libxsmm_blasint)k;
  libxsmm_blasint la = (libxsmm_blasint)lda, lb = (libxsmm_blasint)ldb, lc = (libxsmm_blasint)ldc;
  double al = 1, be = 0;
  int pf = LIBXSMM_GEMM_PREFETCH_NONE;
  return libxsmm_dmmdispatch(M, N, K, &la, &lb, &lc, &al, &be, &flags, &pf);
}

/* The layouts the executor chose must be the ones above (dense column-major, no offsets):
 * otherwise the kernels below would read other elements than the engine. */
static bool xs_layouts_ok(const micro_cap *m, const tfe_contract_plan *P1, const tfe_contract_plan *P2) {
  for (int w = 0; w < 2; w++)
    for (int o = 0; o < 3; o++) {
      const tfe_layout *L = &m->lay[w][o];
      int64_t s = 1;
      if (L->offset) return false;
      for (int i = 0; i < L->rank; s *= L->dims[i], i++)
        if (L->strides[i] != s) return false;
    }
  for (int o = 0; o < 3; o++)
    if (P1->off[o] || P2->off[o]) return false;
  return P1->engine == TFE__PR_ENG_SMALL && P2->engine == TFE__PR_ENG_SMALL;
}

static void xs_engine(const xs_step *s, const double *a, const double *b, double *c) {
  tfe_ps_run__f64(s->P, 1.0, a, false, b, false, 0.0, c, 1, s->ws);
}
/* B (dD x D, ld dD) into bt (D x dD, ld D). */
static void xs_trans(const xs_step *s, const double *b, double *bt) {
  libxsmm_otrans(bt, b, sizeof(double), (libxsmm_blasint)s->k, (libxsmm_blasint)s->m, (libxsmm_blasint)s->k,
                 (libxsmm_blasint)s->m);
}
/* T.B on libxsmm with the engine's operands: B transposed into bt, then NN. */
static void xs_tb(const xs_step *s, const double *t, const double *b, double *c, double *bt) {
  xs_trans(s, b, bt);
  s->nn(bt, t, c);
}

static double xs_maxdiff(const double *x, const double *y, int64_t n, double *scale) {
  double d = 0, s = 0;
  for (int64_t i = 0; i < n; i++) { d = fmax(d, fabs(x[i] - y[i])); s = fmax(s, fabs(y[i])); }
  *scale = s;
  return d;
}
/* Beyond rounding: more than a few ulps of the largest element per term of the dot products. */
static bool xs_differs(const char *what, int D, const double *x, const double *y, int64_t n, int64_t k) {
  double s, d = xs_maxdiff(x, y, n, &s);
  bool bad = !(d <= 4 * DBL_EPSILON * (double)k * (s > 0 ? s : 1));
  printf("# D=%d %s: max |libxsmm - engine| %.3g (largest |element| %.3g)%s\n", D, what, d, s, bad ? "  ** DIFFERS **" : "");
  return bad;
}

/* Variants of the hot loop: 0 engine, 1 execute (held plan, checks), 2 libxsmm (E.A: NN;
 * T.B: otrans+NN), 3 (T.B only) libxsmm NN on B^T. */
static double xs_hot_once(int v, const xs_step *s, tfe_view_f64 *va, tfe_view_f64 *vb, tfe_view_f64 *vc, const double *bt,
                          double *tt, bool tb, int inner) {
  double t0 = now();
  for (int i = 0; i < inner; i++) {
    if (v == 0) xs_engine(s, va->data, vb->data, vc->data);
    else if (v == 1) tfe_contract_execute_f64(s->P, 1.0, va, vb, 0.0, vc);
    else if (v == 2 && tb) xs_tb(s, va->data, vb->data, vc->data, tt);
    else if (v == 3) s->nn(bt, va->data, vc->data);
    else s->nn(va->data, vb->data, vc->data);
  }
  return (now() - t0) / inner;
}

static double *xs_rand(int64_t n) {
  double *p = aligned_alloc(64, (size_t)(n * 8 + 63) / 64 * 64);
  for (int64_t i = 0; i < n; i++) p[i] = rnd();
  return p;
}

/* One step hot: engine, execute and libxsmm alternated; results compared first. */
static int xs_hot(int D, int w, const xs_step *s, const micro_cap *mc, int reps, double big) {
  int64_t na = s->m * s->k, nb = s->k * s->n, nc = s->m * s->n;
  bool tb = w == 1;
  double *a = xs_rand(na), *b = xs_rand(nb), *c0 = xs_rand(nc), *c1 = xs_rand(nc), *tt = xs_rand(nb), *bt = xs_rand(nb);
  tfe_view_f64 va = {a, mc->lay[w][0], false}, vb = {b, mc->lay[w][1], false}, vc = {c0, mc->lay[w][2], false};
  if (tb) xs_trans(s, b, bt);
  xs_engine(s, a, b, c0);
  int bad = 0;
  if (tb) { xs_tb(s, a, b, c1, tt); bad |= xs_differs("T.B otrans+NN", D, c1, c0, nc, s->k); }
  if (tb) s->nn(bt, a, c1);
  else s->nn(a, b, c1);
  bad |= xs_differs(tb ? "T.B NN on B^T" : "E.A NN", D, c1, c0, nc, s->k);
  int nv = tb ? 4 : 3, inner = (int)(2e6 / ((double)(s->m * s->n * s->k) + 2000)) + 20;
  double *t[4];
  for (int v = 0; v < nv; v++) t[v] = malloc(sizeof(double) * (size_t)reps);
  for (int r = 0; r < reps; r++)
    for (int j = 0; j < nv; j++) { /* a different variant first in each repetition */
      int v = (j + r) % nv;
      t[v][r] = xs_hot_once(v, s, &va, &vb, &vc, bt, tt, tb, inner);
    }
  double f = 2.0 * (double)(s->m * s->n * s->k) / 1e9 / big * 100, med[4] = {NAN, NAN, NAN, NAN};
  for (int v = 0; v < nv; v++) { med[v] = median(t[v], reps); free(t[v]); }
  printf("| %d | %s | %lld,%lld,%lld | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.0f%%) | ", D, tb ? "T.B (TN)" : "E.A (NN)",
         (long long)s->m, (long long)s->n, (long long)s->k, 1e6 * med[0], f / med[0], 1e6 * med[1], f / med[1], 1e6 * med[2],
         f / med[2]);
  if (tb) printf("%.3f (%.0f%%) |\n", 1e6 * med[3], f / med[3]);
  else printf("(= NN) |\n");
  free(a); free(b); free(c0); free(c1); free(tt); free(bt);
  return bad;
}

/* The middle steps along the chain, on its own operands. v: 0 engine, 1 execute, 2 libxsmm
 * (otrans+NN), 3 libxsmm kernels alone on the B_i stored transposed beforehand (bts). */
static void xs_chain_once(int v, const chain *c, const xs_step *s, const micro_cap *mc, double *E, double *T, double *tt,
                          double *const *bts) {
  tfe_view_f64 ve = {E, mc->lay[0][0], false}, vt = {T, mc->lay[0][2], false}, vt2 = {T, mc->lay[1][0], false},
               ve2 = {E, mc->lay[1][2], false};
  for (int i = 1; i < c->N - 1; i++) {
    double *A = c->data[2 * i], *B = c->data[2 * i + 1];
    if (v == 0) { xs_engine(&s[0], E, A, T); xs_engine(&s[1], T, B, E); }
    else if (v == 1) {
      tfe_view_f64 va = {A, mc->lay[0][1], false}, vb = {B, mc->lay[1][1], false};
      tfe_contract_execute_f64(s[0].P, 1.0, &ve, &va, 0.0, &vt);
      tfe_contract_execute_f64(s[1].P, 1.0, &vt2, &vb, 0.0, &ve2);
    } else if (v == 2) { s[0].nn(E, A, T); xs_tb(&s[1], T, B, E, tt); }
    else { s[0].nn(E, A, T); s[1].nn(bts[i], T, E); }
  }
}

static void xs_seed_e(double *E, int64_t n) {
  for (int64_t i = 0; i < n; i++) E[i] = 0.3 * sin((double)i + 1);
}

static int xs_chain(const chain *c, const xs_step *s, const micro_cap *mc, int reps, double big) {
  int64_t D = c->D, d = c->d, ne = D * D;
  double *E[2] = {xs_rand(ne), xs_rand(ne)}, *T = xs_rand(D * d * D), *tt = xs_rand(D * d * D);
  double **bts = calloc((size_t)c->N, sizeof *bts);
  for (int i = 1; i < c->N - 1; i++) { bts[i] = xs_rand(D * d * D); xs_trans(&s[1], c->data[2 * i + 1], bts[i]); }
  xs_seed_e(E[0], ne); xs_chain_once(0, c, s, mc, E[0], T, tt, bts);
  xs_seed_e(E[1], ne); xs_chain_once(2, c, s, mc, E[1], T, tt, bts);
  int bad = xs_differs("chain (E after the middle steps) otrans+NN", (int)D, E[1], E[0], ne, d * D * (c->N - 2));
  xs_seed_e(E[1], ne); xs_chain_once(3, c, s, mc, E[1], T, tt, bts);
  bad |= xs_differs("chain (E after the middle steps) NN on B^T", (int)D, E[1], E[0], ne, d * D * (c->N - 2));
  int steps = 2 * (c->N - 2), inner = (int)(4e6 / (steps * ((double)D * D * d * D + 2000))) + 1;
  double *t[5];
  for (int v = 0; v < 5; v++) t[v] = malloc(sizeof(double) * (size_t)reps);
  for (int r = 0; r < reps; r++)
    for (int j = 0; j < 5; j++) {
      int v = (j + r) % 5;
      double t0 = now();
      for (int q = 0; q < inner; q++) {
        if (v == 4) run_einsum((chain *)c);
        else { xs_seed_e(E[0], ne); xs_chain_once(v, c, s, mc, E[0], T, tt, bts); }
      }
      t[v][r] = (now() - t0) / inner / (v == 4 ? c->steps : steps);
    }
  double f = 2.0 * (double)(D * D * d * D) / 1e9 / big * 100, med[5];
  for (int v = 0; v < 5; v++) { med[v] = median(t[v], reps); free(t[v]); }
  printf("| %lld | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.0f%%) |\n", (long long)D,
         1e6 * med[4], f / med[4], 1e6 * med[1], f / med[1], 1e6 * med[0], f / med[0], 1e6 * med[2], f / med[2],
         1e6 * med[3], f / med[3]);
  for (int i = 1; i < c->N - 1; i++) free(bts[i]);
  free(bts); free(E[0]); free(E[1]); free(T); free(tt);
  return bad;
}

/* Plans, layouts and kernels of one D; 1 if they are not the ones this comparison assumes. */
static int xs_setup(chain *c, micro_cap *mc, xs_step *s) {
  memset(mc, 0, sizeof *mc);
  tfe_einsum_set_step_hook(micro_hook, mc);
  run_einsum(c);
  tfe_einsum_set_step_hook(NULL, NULL);
  int64_t D = c->D, dD = (int64_t)c->d * D;
  for (int w = 0; w < 2; w++) {
    s[w].P = c->plan->cplan[c->plan->npre + 1 + w];
    s[w].m = s[w].P->m; s[w].n = s[w].P->n; s[w].k = s[w].P->k;
  }
  if (!xs_layouts_ok(mc, s[0].P, s[1].P) || s[0].m != D || s[0].n != dD || s[0].k != D || s[1].m != D || s[1].n != D ||
      s[1].k != dD) {
    fprintf(stderr, "--xsmm: D=%lld: the steps' layouts or engines are not the ones assumed (bench/chain_xsmm.h)\n", (long long)D);
    return 1;
  }
  s[0].nn = xs_dispatch(D, dD, D, D, D, D, LIBXSMM_GEMM_FLAG_NONE);
  s[1].nn = xs_dispatch(D, D, dD, D, dD, D, LIBXSMM_GEMM_FLAG_NONE); /* B^T (ld D) . T (ld dD) */
  if (!s[0].nn || !s[1].nn) { fprintf(stderr, "--xsmm: D=%lld: libxsmm dispatched no kernel\n", (long long)D); return 1; }
  for (int w = 0; w < 2; w++) s[w].ws = aligned_alloc(64, (size_t)(tfe_ps_ws_elems__f64(s[w].P, 1) * 8 + 64) / 64 * 64);
  return 0;
}

static int xsmm_main(int N, int d, const int *dims, int nd, int reps, double big) {
  libxsmm_init();
  for (int r = 0; r < 2; r++) { /* the quietest of three: on a shared host one can halve it */
    double b = large_gemm_rate();
    if (b > big) big = b;
  }
  printf("# --xsmm: libxsmm %s (target %s) against the small engine; f64, 1 thread, %s time, median of %d; "
         "large GEMM (n=1024, BLIS %s; the best of 3) %.1f GFLOP/s\n", LIBXSMM_VERSION, libxsmm_get_target_arch(),
         getenv("TFE_BENCH_CPU") && atoi(getenv("TFE_BENCH_CPU")) > 0 ? "CPU" : "wall", reps, tfe_blas_arch(), big);
  printf("# T.B as a TN kernel: libxsmm dispatches %s at D = 10\n",
         xs_dispatch(10, 10, 20, 20, 20, 10, LIBXSMM_GEMM_FLAG_TRANS_A) ? "one" : "none (unsupported in this version)");
  int bad = 0;
  chain *cs = calloc((size_t)nd, sizeof *cs);
  xs_step (*st)[2] = calloc((size_t)nd, sizeof *st);
  micro_cap *mc = calloc((size_t)nd, sizeof *mc);
  for (int q = 0; q < nd; q++)
    if (chain_make(&cs[q], N, d, dims[q]) || xs_setup(&cs[q], &mc[q], st[q])) return 1;
  printf("# hot: each step alone on the same operands, us per call (%% of the large GEMM)\n"
         "| D | step | m,n,k | engine | execute (held plan) | libxsmm (T.B: otrans+NN) | libxsmm NN on B^T |\n"
         "|---|---|---|---|---|---|---|\n");
  for (int q = 0; q < nd; q++)
    for (int w = 0; w < 2; w++) bad |= xs_hot(dims[q], w, &st[q][w], &mc[q], reps, big);
  printf("# chain: the middle steps on the chain's operands (%d sites), us per step (%% of the large GEMM)\n"
         "| D | einsum (whole chain) | execute (held plans) | engine | libxsmm (otrans+NN) | libxsmm NN on B_i^T |\n"
         "|---|---|---|---|---|---|\n", N);
  for (int q = 0; q < nd; q++) bad |= xs_chain(&cs[q], st[q], &mc[q], reps, big);
  for (int q = 0; q < nd; q++) { free(st[q][0].ws); free(st[q][1].ws); chain_free(&cs[q]); }
  free(cs); free(st); free(mc);
  libxsmm_finalize();
  if (bad) fprintf(stderr, "--xsmm: libxsmm's results differ from the engine's beyond rounding\n");
  return bad ? 1 : 0;
}
