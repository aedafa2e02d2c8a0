/* bench/bench_chain.c — chains of small contractions (issue 18): the inner product of two
 * matrix-product states, <A|B> = sum over every index of A_0 B_0 A_1 B_1 ... A_{N-1} B_{N-1},
 * along the natural path (the boundary E absorbs A_i, then B_i: 2N-1 pairwise steps), for
 * bond dimensions D and physical dimension d. A middle step is one GEMM:
 *   E(b,e) A_i(b,s,c) -> T(e,s,c)   m = D, n = d*D, k = D
 *   T(e,s,c) B_i(e,s,f) -> E(c,f)   m = D, n = D,   k = d*D
 * Every column is the same chain on the same data, f64, 1 thread unless --threads:
 *   einsum    tfe_einsum_execute_f64 of one plan made with the path given (TFE_PATH_GIVEN, SSA):
 *             the own executor along the same path
 *   contract  tfe_contract_f64 per step into buffers allocated once (the binary contraction
 *             with its plan cache: what a hand-written loop over the steps calls)
 *   dgemm     the same steps as raw BLIS calls with the strides above (tfe__blas_gemm_f64;
 *             no planning, no checks: the kernel floor of BLIS on these shapes)
 *   torch, jax (--peers): bench/peer_chain.py in this run — torch eager einsum per step, and
 *             jax.jit of the whole pairwise program (one XLA computation of 2N-1 einsums)
 * Per step: microseconds per step (the chain's time / (2N-1)) and GFLOP/s (2 flops per
 * multiply-add). The large-GEMM rate (ij,jk->ik at n=1024 on BLIS) is measured first; the
 * fixed cost per step is the chain's time less the multiply-adds at the rate of each step's
 * own GEMM on BLIS when called without tenferro (einsum - dgemm), and the intercept of a
 * least-squares line time = t0 + flops / rate over the dims.
 *
 *   bench_chain [--sites N] [--d d] [--dims 2,4,...] [--reps R] [--threads T] [--peers] [--python PY] [--steps] [--micro]
 *               [--xsmm]
 * --tune FIELD V: sets that tuning field first (contract_naive_work, contract_small_mnk, small_row_regs,
 *   small_dot_depth, contract_small_orient, contract_small_mode, small_wide_cols, small_tn_pack_rows).
 * --steps: the middle steps' own times (einsum's step hook) and engines against BLIS alone.
 * --micro: each middle step alone in a hot loop (plan held; the small engine alone; BLIS alone).
 * --xsmm (only in build/bench/bench_chain_xsmm, `make bench-xsmm`, which needs libxsmm-dev): the
 *   two middle steps on libxsmm's JIT kernels against the small engine, hot and along a chain of
 *   fresh operands (bench/chain_xsmm.h).
 * Defaults: N = 100, d = 2, dims 2,4,8,10,16,24,32,40,48,60,64,96,128, R = 21. Each repetition
 * times the three own columns alternately (einsum, contract, dgemm), so load slows them alike;
 * the peers run after, then the own columns a second time (both passes' median are printed:
 * own1, own2). Results are checked against each other. */
#include <tenferro.h>
#include <math.h>
#include <time.h>

/* Wall time; TFE_BENCH_CPU=1: the process's CPU time (1-thread runs on a loaded machine: the
 * time it spends descheduled is left out; the peer script then counts CPU time too). */
static double now(void) {
  struct timespec t;
  static int cpu = -1;
  if (cpu < 0) cpu = getenv("TFE_BENCH_CPU") && atoi(getenv("TFE_BENCH_CPU")) > 0;
  clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmpd);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
static uint64_t rng = 88172645463325252ull;
static double rnd(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

typedef struct chain {
  int N, d, D, n;              /* sites, physical and bond dims, operands (2N) */
  double **data;               /* n operands */
  tfe_layout *lay;             /* n */
  int32_t **lab;               /* n */
  tfe_einsum_plan *plan;
  tfe_view_f64 *ops;           /* the operands as views (made once, as a caller would) */
  double *E, *T;               /* contract / dgemm buffers */
  double madds;                /* multiply-adds of the chain */
  int steps;
} chain;

/* Operand 2i: A_i (b_{i-1}, s_i, b_i); 2i+1: B_i (e_{i-1}, s_i, e_i); the boundary sites drop
 * their outer bond. Labels: s_i = i, b_i = N + i, e_i = 2N + i. */
static int chain_make(chain *c, int N, int d, int D) {
  if (N < 2 || N > 100000 || d < 1 || D < 1) return 1;
  c->N = N; c->d = d; c->D = D; c->n = 2 * N; c->steps = 2 * N - 1;
  rng = 88172645463325252ull + (uint64_t)D; /* the same data in both passes */
  c->data = calloc((size_t)c->n, sizeof *c->data);
  c->lay = calloc((size_t)c->n, sizeof *c->lay);
  c->lab = calloc((size_t)c->n, sizeof *c->lab);
  double scale = 1.0 / sqrt((double)d * D) * 2.0 * sqrt(3.0); /* keeps the boundary's norm about constant */
  for (int k = 0; k < c->n; k++) {
    int i = k / 2, r = 0;
    int32_t bond = (k % 2 ? 2 * N : N), *l = c->lab[k] = calloc(3, sizeof(int32_t));
    int64_t dims[3];
    if (i > 0) { dims[r] = D; l[r++] = bond + i - 1; }
    dims[r] = d; l[r++] = i;
    if (i < N - 1) { dims[r] = D; l[r++] = bond + i; }
    tfe_layout_dense(r, dims, TFE_COLMAJOR, &c->lay[k]);
    int64_t cnt = tfe_layout_numel(&c->lay[k]);
    c->data[k] = malloc(sizeof(double) * (size_t)cnt);
    for (int64_t j = 0; j < cnt; j++) c->data[k][j] = scale * rnd();
  }
  /* SSA path: (0,1) -> 2N, then (2N+k-1, k+1) -> 2N+k */
  int *path = malloc(sizeof(int) * 2 * (size_t)c->steps);
  path[0] = 0; path[1] = 1;
  for (int k = 1; k < c->steps; k++) { path[2 * k] = c->n + k - 1; path[2 * k + 1] = k + 1; }
  tfe_einsum_opts o = {0};
  o.algo = TFE_PATH_GIVEN; o.path = path; o.path_nsteps = c->steps; o.path_format = TFE_PATH_SSA;
  o.no_cache = true;
  const tfe_layout **lays = malloc(sizeof(*lays) * (size_t)c->n);
  for (int k = 0; k < c->n; k++) lays[k] = &c->lay[k];
  tfe_status st = tfe_einsum_plan_new_labels(&c->plan, TFE_DT_F64, c->n, lays, (const int32_t *const *)c->lab, NULL, 0, &o);
  free(lays); free(path);
  if (st != TFE_OK) { fprintf(stderr, "plan: %s\n", tfe_last_error()); return 1; }
  c->madds = tfe_einsum_plan_cost(c->plan).flops;
  c->ops = malloc(sizeof *c->ops * (size_t)c->n);
  for (int k = 0; k < c->n; k++) { c->ops[k].data = c->data[k]; c->ops[k].lay = c->lay[k]; c->ops[k].conj = false; }
  c->E = calloc((size_t)D * D + 1, sizeof(double));
  c->T = calloc((size_t)D * d * D + 1, sizeof(double));
  return 0;
}
static void chain_free(chain *c) {
  for (int k = 0; k < c->n; k++) { free(c->data[k]); free(c->lab[k]); }
  free(c->data); free(c->lay); free(c->lab); free(c->E); free(c->T); free(c->ops);
  tfe_einsum_plan_release(c->plan);
}

static double run_einsum(chain *c) {
  double out = 0;
  tfe_view_f64 o = {&out, {0}, false};
  if (tfe_einsum_execute_f64(c->plan, 1.0, c->ops, 0.0, &o) != TFE_OK) { fprintf(stderr, "einsum: %s\n", tfe_last_error()); exit(1); }
  return out;
}

/* The steps as tfe_contract_f64 calls: E (b, e) x A (b, s, c) -> T (e, s, c); T x B (e, s, f)
 * -> E (c, f). The boundary steps have no b (first) or no c/f (last). */
static double run_contract(chain *c) {
  int N = c->N, D = c->D, d = c->d;
  double out = 0;
  tfe_view_f64 E = {c->E, {0}, false}, T = {c->T, {0}, false}, S = {&out, {0}, false};
  int64_t dE[2] = {D, D}, dT[3] = {D, d, D};
  tfe_layout_dense(2, dE, TFE_COLMAJOR, &E.lay);
  for (int i = 0; i < N; i++) {
    tfe_view_f64 A = {c->data[2 * i], c->lay[2 * i], false}, B = {c->data[2 * i + 1], c->lay[2 * i + 1], false};
    int32_t b0 = N + i - 1, b1 = N + i, e0 = 2 * N + i - 1, e1 = 2 * N + i, s = i;
    tfe_status st;
    if (i == 0) {
      int32_t lE[2] = {b1, e1};
      st = tfe_contract_f64(1.0, &A, c->lab[0], &B, c->lab[1], 0.0, &E, lE);
    } else if (i < N - 1) {
      int32_t lE[2] = {b0, e0}, lT[3] = {e0, s, b1}, lE2[2] = {b1, e1};
      tfe_layout_dense(3, dT, TFE_COLMAJOR, &T.lay);
      st = tfe_contract_f64(1.0, &E, lE, &A, c->lab[2 * i], 0.0, &T, lT);
      if (st == TFE_OK) st = tfe_contract_f64(1.0, &T, lT, &B, c->lab[2 * i + 1], 0.0, &E, lE2);
    } else {
      int32_t lE[2] = {b0, e0}, lT[2] = {e0, s};
      int64_t dT2[2] = {D, d};
      tfe_layout_dense(2, dT2, TFE_COLMAJOR, &T.lay);
      st = tfe_contract_f64(1.0, &E, lE, &A, c->lab[2 * i], 0.0, &T, lT);
      if (st == TFE_OK) st = tfe_contract_f64(1.0, &T, lT, &B, c->lab[2 * i + 1], 0.0, &S, NULL);
    }
    if (st != TFE_OK) { fprintf(stderr, "contract: %s\n", tfe_last_error()); exit(1); }
  }
  return out;
}

/* The same steps as raw BLIS calls (strides as in the header comment). */
static double run_dgemm(chain *c) {
  int64_t N = c->N, D = c->D, d = c->d;
  double out = 0, *E = c->E, *T = c->T;
  tfe__blas_gemm_f64(0, 0, D, D, d, 1.0, c->data[0], d, 1, c->data[1], 1, d, 0.0, E, 1, D, 1);
  for (int64_t i = 1; i < N; i++) {
    const double *A = c->data[2 * i], *B = c->data[2 * i + 1];
    int64_t n = i < N - 1 ? d * D : d;
    tfe__blas_gemm_f64(0, 0, D, n, D, 1.0, E, D, 1, A, 1, D, 0.0, T, 1, D, 1);
    if (i < N - 1) tfe__blas_gemm_f64(0, 0, D, D, d * D, 1.0, T, d * D, 1, B, 1, d * D, 0.0, E, 1, D, 1);
    else tfe__blas_gemm_f64(0, 0, 1, 1, d * D, 1.0, T, d * D, 1, B, 1, d * D, 0.0, &out, 1, 1, 1);
  }
  return out;
}

static double large_gemm_rate(void) {
  int64_t n = 1024;
  double *a = malloc(8 * n * n), *b = malloc(8 * n * n), *c = malloc(8 * n * n), t[5];
  for (int64_t i = 0; i < n * n; i++) { a[i] = rnd(); b[i] = rnd(); c[i] = 0; }
  tfe__blas_gemm_f64(0, 0, n, n, n, 1.0, a, 1, n, b, 1, n, 0.0, c, 1, n, 1);
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    tfe__blas_gemm_f64(0, 0, n, n, n, 1.0, a, 1, n, b, 1, n, 0.0, c, 1, n, 1);
    t[r] = now() - t0;
  }
  free(a); free(b); free(c);
  return 2.0 * (double)(n * n * n) / median(t, 5) / 1e9;
}

/* --steps: per-step times of the middle steps by the einsum hook (E.A steps: odd k, T.B: even
 * k > 0), with each step's engine, against the same two GEMMs on BLIS alone. */
typedef struct hook_acc { double *t[2]; int n[2], cap; } hook_acc;
static void hook_fn(void *ctx, const tfe_einsum_step_info *info) {
  hook_acc *h = ctx;
  if (info->step <= 0 || info->step >= info->nsteps - 2) return;
  if (getenv("CHAIN_SHOW") && h->n[info->step % 2 ? 0 : 1] == 0) { /* the layouts the executor chose */
    const tfe_layout *L[3] = {info->lay_a, info->lay_b, info->lay_c};
    const int32_t *lb[3] = {info->lab_a, info->lab_b, info->lab_c};
    printf("step %d:", info->step);
    for (int o = 0; o < 3; o++) {
      printf(" %c(", "abc"[o]);
      for (int i = 0; i < L[o]->rank; i++) printf("%s%d:%lld/%lld", i ? "," : "", lb[o][i], (long long)L[o]->dims[i], (long long)L[o]->strides[i]);
      printf(")");
    }
    printf("\n");
  }
  int w = info->step % 2 ? 0 : 1;
  if (h->n[w] < h->cap) h->t[w][h->n[w]++] = info->seconds;
}
static const char *engine_name(int e) {
  static const char *nm[] = {"naive", "small", "loops", "blis", "semiring", "backend"};
  return e >= 0 && e < 6 ? nm[e] : "?";
}
static void steps_breakdown(int N, int d, int D, int reps) {
  chain c;
  if (chain_make(&c, N, d, D)) exit(1);
  hook_acc h = {{NULL, NULL}, {0, 0}, reps * N};
  h.t[0] = malloc(sizeof(double) * (size_t)h.cap); h.t[1] = malloc(sizeof(double) * (size_t)h.cap);
  run_einsum(&c);
  tfe_einsum_set_step_hook(hook_fn, &h);
  for (int r = 0; r < reps; r++) run_einsum(&c);
  tfe_einsum_set_step_hook(NULL, NULL);
  double *g[2] = {malloc(sizeof(double) * (size_t)reps * 20), malloc(sizeof(double) * (size_t)reps * 20)};
  for (int r = 0; r < reps * 20; r++) {
    double t0 = now();
    tfe__blas_gemm_f64(0, 0, D, (int64_t)d * D, D, 1.0, c.E, D, 1, c.data[2], 1, D, 0.0, c.T, 1, D, 1);
    double t1 = now();
    tfe__blas_gemm_f64(0, 0, D, D, (int64_t)d * D, 1.0, c.T, (int64_t)d * D, 1, c.data[3], 1, (int64_t)d * D, 0.0, c.E, 1, D, 1);
    double t2 = now();
    g[0][r] = t1 - t0; g[1][r] = t2 - t1;
  }
  const tfe_contract_plan *P1 = c.plan->cplan[c.plan->npre + 1], *P2 = c.plan->cplan[c.plan->npre + 2];
  double madds = (double)D * D * d * D;
  printf("D=%d  E.A: einsum %.2f us (%s, m=%lld n=%lld k=%lld batch=%lld) dgemm %.2f us | T.B: einsum %.2f us (%s, m=%lld n=%lld k=%lld batch=%lld) dgemm %.2f us | %.0f madds each\n",
         D, 1e6 * median(h.t[0], h.n[0]), P1 ? engine_name(P1->engine) : "-", (long long)(P1 ? P1->m : 0),
         (long long)(P1 ? P1->n : 0), (long long)(P1 ? P1->k : 0), (long long)(P1 ? P1->nbatch : 0), 1e6 * median(g[0], reps * 20),
         1e6 * median(h.t[1], h.n[1]), P2 ? engine_name(P2->engine) : "-", (long long)(P2 ? P2->m : 0),
         (long long)(P2 ? P2->n : 0), (long long)(P2 ? P2->k : 0), (long long)(P2 ? P2->nbatch : 0), 1e6 * median(g[1], reps * 20), madds);
  free(h.t[0]); free(h.t[1]); free(g[0]); free(g[1]);
  chain_free(&c);
}

/* --micro: each middle step alone, called many times in a row (hot caches), to resolve the
 * D <= 16 steps that the hook's clock cannot: per call, (1) the stored plan through
 * tfe_contract_execute_f64 (plan held; the layout match and view checks included), (2) the
 * small engine's own run (tables, packing, kernel, store: tfe_ps_run__f64 with the workspace
 * given), (3) the same GEMM on BLIS alone. Layouts are the ones the executor chose (captured
 * from the hook). */
typedef struct micro_cap { tfe_layout lay[2][3]; int got[2]; } micro_cap;
static void micro_hook(void *ctx, const tfe_einsum_step_info *info) {
  micro_cap *m = ctx;
  if (info->step < 1 || info->step > 2) return;
  int w = info->step - 1;
  m->lay[w][0] = *info->lay_a; m->lay[w][1] = *info->lay_b; m->lay[w][2] = *info->lay_c;
  m->got[w] = 1;
}
static double micro_time(int inner, int reps, int which, const tfe_contract_plan *P, tfe_view_f64 *A, tfe_view_f64 *B,
                         tfe_view_f64 *C, double *ws, int w, chain *c) {
  double *t = malloc(sizeof(double) * (size_t)reps), r;
  int64_t D = c->D, d = c->d;
  for (int q = 0; q < reps; q++) {
    double t0 = now();
    for (int i = 0; i < inner; i++) {
      if (which == 0) {
        if (tfe_contract_execute_f64(P, 1.0, A, B, 0.0, C) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); }
      } else if (which == 1) {
        tfe_ps_run__f64(P, 1.0, A->data + A->lay.offset + P->off[0], false, B->data + B->lay.offset + P->off[1], false, 0.0,
                        C->data + C->lay.offset + P->off[2], 1, ws);
      } else if (w == 0) {
        tfe__blas_gemm_f64(0, 0, D, d * D, D, 1.0, c->E, D, 1, c->data[2], 1, D, 0.0, c->T, 1, D, 1);
      } else {
        tfe__blas_gemm_f64(0, 0, D, D, d * D, 1.0, c->T, d * D, 1, c->data[3], 1, d * D, 0.0, c->E, 1, D, 1);
      }
    }
    t[q] = (now() - t0) / inner;
  }
  r = median(t, reps);
  free(t);
  return r;
}
static void micro(int N, int d, int D, int reps, double big) {
  chain c;
  if (chain_make(&c, N, d, D)) exit(1);
  micro_cap m;
  memset(&m, 0, sizeof m);
  tfe_einsum_set_step_hook(micro_hook, &m);
  run_einsum(&c);
  tfe_einsum_set_step_hook(NULL, NULL);
  double madds = (double)D * D * d * D;
  int inner = (int)(2e6 / (madds + 2000)) + 20;
  printf("| %d |", D);
  for (int w = 0; w < 2; w++) {
    const tfe_contract_plan *P = c.plan->cplan[c.plan->npre + 1 + w];
    double *buf[3], *ws = NULL;
    tfe_view_f64 v[3];
    for (int o = 0; o < 3; o++) {
      int64_t n = 1;
      for (int i = 0; i < m.lay[w][o].rank; i++) n += (m.lay[w][o].dims[i] - 1) * m.lay[w][o].strides[i];
      buf[o] = malloc(sizeof(double) * (size_t)(n + m.lay[w][o].offset + 8));
      for (int64_t i = 0; i < n + m.lay[w][o].offset + 8; i++) buf[o][i] = rnd();
      v[o].data = buf[o]; v[o].lay = m.lay[w][o]; v[o].conj = false;
    }
    bool small = P->engine == TFE__PR_ENG_SMALL;
    if (small) ws = aligned_alloc(64, (size_t)(tfe_ps_ws_elems__f64(P, 1) * 8 + 64) / 64 * 64);
    /* CHAIN_MICRO_ONLY=0|1|2: time only that column (for perf), the others print nan */
    int only = getenv("CHAIN_MICRO_ONLY") ? atoi(getenv("CHAIN_MICRO_ONLY")) : -1;
    /* CHAIN_MICRO_STEP=0|1: time only the E.A (0) or the T.B (1) step (per-step instruction counts) */
    if (getenv("CHAIN_MICRO_STEP") && atoi(getenv("CHAIN_MICRO_STEP")) != w) only = 3;
    double te = only < 0 || only == 0 ? micro_time(inner, reps, 0, P, &v[0], &v[1], &v[2], ws, w, &c) : NAN;
    double tk = small && (only < 0 || only == 1) ? micro_time(inner, reps, 1, P, &v[0], &v[1], &v[2], ws, w, &c) : NAN;
    double tb = only < 0 || only == 2 ? micro_time(inner, reps, 2, P, &v[0], &v[1], &v[2], ws, w, &c) : NAN;
    printf(" %lld,%lld,%lld %s | %.3f | %.3f | %.0f%% | %.3f |", (long long)P->m, (long long)P->n, (long long)P->k,
           engine_name(P->engine), 1e6 * te, 1e6 * tk, 100 * 2 * madds / te / 1e9 / big, 1e6 * tb);
    for (int o = 0; o < 3; o++) free(buf[o]);
    free(ws);
  }
  printf("\n");
  fflush(stdout);
  chain_free(&c);
}

#ifdef TFE_BENCH_XSMM
#include "chain_xsmm.h"
#else
static int xsmm_main(int N, int d, const int *dims, int nd, int reps, double big) {
  (void)N; (void)d; (void)dims; (void)nd; (void)reps; (void)big;
  fprintf(stderr, "--xsmm: this build has no libxsmm (make bench-xsmm builds bench_chain_xsmm)\n");
  return 2;
}
#endif

#define MAXD 32
int main(int argc, char **argv) {
  int N = 100, d = 2, reps = 21, threads = 1, nd = 0, dims[MAXD];
  bool peers = false, steps = false, micro_mode = false, xsmm_mode = false;
  const char *py = getenv("PYTHON") ? getenv("PYTHON") : "python3";
  const char *dimstr = "2,4,8,10,16,24,32,40,48,60,64,96,128";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sites") && i + 1 < argc) N = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--d") && i + 1 < argc) d = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dims") && i + 1 < argc) dimstr = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--python") && i + 1 < argc) py = argv[++i];
    else if (!strcmp(argv[i], "--peers")) peers = true;
    else if (!strcmp(argv[i], "--steps")) steps = true;
    else if (!strcmp(argv[i], "--micro")) micro_mode = true;
    else if (!strcmp(argv[i], "--xsmm")) xsmm_mode = true;
    else if (!strcmp(argv[i], "--tune") && i + 2 < argc) { /* --tune contract_naive_work|contract_small_mnk|small_row_regs|small_dot_depth|contract_small_orient|contract_small_mode|small_wide_cols|small_tn_pack_rows|small_half_tail VALUE */
      tfe_tuning t = tfe_tuning_get();
      if (!strcmp(argv[i + 1], "contract_naive_work")) t.contract_naive_work = atoll(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "contract_small_mnk")) t.contract_small_mnk = atoll(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "small_row_regs")) t.small_row_regs = atoi(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "small_dot_depth")) t.small_dot_depth = atoll(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "contract_small_orient")) t.contract_small_orient = atoll(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "contract_small_mode")) t.contract_small_mode = atoll(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "small_wide_cols")) t.small_wide_cols = atoi(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "small_tn_pack_rows")) t.small_tn_pack_rows = atoll(argv[i + 2]);
      else if (!strcmp(argv[i + 1], "small_half_tail")) t.small_half_tail = atoi(argv[i + 2]);
      else { fprintf(stderr, "--tune: unknown field %s\n", argv[i + 1]); return 2; }
      if (tfe_tuning_set(&t) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); return 2; }
      i += 2;
    }
    else { fprintf(stderr, "usage: %s [--sites N] [--d d] [--dims a,b,..] [--reps R] [--threads T] [--peers] [--python PY] [--steps] [--micro] [--tune FIELD V]\n", argv[0]); return 2; }
  }
  for (const char *p = dimstr; *p && nd < MAXD; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p)) dims[nd++] = atoi(p);
  if (N < 2 || d < 1 || reps < 1) return 2;
  tfe_set_num_threads(threads);
  if (steps) {
    for (int q = 0; q < nd; q++) steps_breakdown(N, d, dims[q], reps);
    return 0;
  }
  double big = getenv("CHAIN_MICRO_ONLY") ? 30.0 : large_gemm_rate();
  if (xsmm_mode) return xsmm_main(N, d, dims, nd, reps, big);
  if (micro_mode) {
    printf("# --micro: each middle step alone, us per call (median of %d), f64, %d thread(s), %s time; large GEMM %.1f GFLOP/s\n"
           "| D | E.A m,n,k engine | execute us | engine us | execute %% of large GEMM | BLIS alone us | T.B m,n,k engine | execute us | engine us | execute %% of large GEMM | BLIS alone us |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|\n",
           reps, threads, getenv("TFE_BENCH_CPU") && atoi(getenv("TFE_BENCH_CPU")) > 0 ? "CPU" : "wall", big);
    for (int q = 0; q < nd; q++) micro(N, d, dims[q], reps, big);
    return 0;
  }
  double load[3] = {0};
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf) { if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1; fclose(lf); }
  printf("# MPS inner product, N=%d sites, d=%d, 2N-1=%d steps, f64, %d thread(s), median of %d, %s time; "
         "large GEMM (n=1024, BLIS %s) %.1f GFLOP/s; load %.2f %.2f %.2f\n",
         N, d, 2 * N - 1, threads, reps, getenv("TFE_BENCH_CPU") && atoi(getenv("TFE_BENCH_CPU")) > 0 ? "CPU" : "wall",
         tfe_blas_arch(), big, load[0], load[1], load[2]);
  int S = 2 * N - 1;
  double own[2][MAXD][3], res[MAXD][3], mad[MAXD], peer[MAXD][2];
  for (int q = 0; q < MAXD; q++) peer[q][0] = peer[q][1] = NAN;
  for (int pass = 0; pass < (peers ? 2 : 1); pass++) {
    for (int q = 0; q < nd; q++) {
      chain c;
      if (chain_make(&c, N, d, dims[q])) return 1;
      mad[q] = c.madds;
      double *t[3];
      for (int m = 0; m < 3; m++) t[m] = malloc(sizeof(double) * (size_t)reps);
      res[q][0] = run_einsum(&c); res[q][1] = run_contract(&c); res[q][2] = run_dgemm(&c); /* warm up */
      /* CHAIN_ONLY_EINSUM=1: the einsum column alone (for perf; the others print 0) */
      bool only = getenv("CHAIN_ONLY_EINSUM") && atoi(getenv("CHAIN_ONLY_EINSUM")) > 0;
      for (int r = 0; r < reps; r++) {
        double t0 = now();
        run_einsum(&c);
        double t1 = now();
        if (!only) run_contract(&c);
        double t2 = now();
        if (!only) run_dgemm(&c);
        double t3 = now();
        t[0][r] = t1 - t0; t[1][r] = t2 - t1; t[2][r] = t3 - t2;
      }
      for (int m = 0; m < 3; m++) { own[pass][q][m] = median(t[m], reps); free(t[m]); }
      double ref = fabs(res[q][2]) > 0 ? fabs(res[q][2]) : 1;
      if (fabs(res[q][0] - res[q][2]) > 1e-9 * ref * c.steps || fabs(res[q][1] - res[q][2]) > 1e-9 * ref * c.steps) {
        fprintf(stderr, "D=%d: results differ: einsum %.17g contract %.17g dgemm %.17g\n", dims[q], res[q][0], res[q][1], res[q][2]);
        return 1;
      }
      chain_free(&c);
    }
    if (pass == 0 && peers) {
      char cmd[1024];
      snprintf(cmd, sizeof cmd, "%s bench/peer_chain.py --sites %d --d %d --dims %s --reps %d --threads %d", py, N, d,
               dimstr, reps, threads);
      fflush(stdout);
      FILE *f = popen(cmd, "r");
      char line[512];
      while (f && fgets(line, sizeof line, f)) {
        /* "D torch_s jax_s torch_value jax_value" */
        int D;
        double ts, js, tv, jv;
        if (sscanf(line, "%d %lf %lf %lf %lf", &D, &ts, &js, &tv, &jv) != 5) continue;
        for (int q = 0; q < nd; q++)
          if (dims[q] == D) {
            peer[q][0] = ts; peer[q][1] = js;
            if (fabs(tv - jv) > 1e-9 * (fabs(tv) + 1e-300) * S) /* (their own data: checked against each other) */
              fprintf(stderr, "D=%d: peer values differ: torch %.17g jax %.17g\n", D, tv, jv);
          }
      }
      if (f) pclose(f);
    }
  }
  printf("| D | madds/step | einsum us/step | GFLOP/s | %% of large GEMM | contract us/step | dgemm us/step | "
         "einsum - dgemm us/step |%s\n", peers ? " torch us/step | jax jit us/step | einsum / best peer |" : "");
  printf("|---|---|---|---|---|---|---|---|%s\n", peers ? "---|---|---|" : "");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int q = 0; q < nd; q++) {
    double e = own[0][q][0], ct = own[0][q][1], g = own[0][q][2];
    if (peers) { /* both own passes: the smaller median (the quieter pass) */
      if (own[1][q][0] < e) e = own[1][q][0];
      if (own[1][q][1] < ct) ct = own[1][q][1];
      if (own[1][q][2] < g) g = own[1][q][2];
    }
    double per = mad[q] / S, gf = 2 * mad[q] / e / 1e9;
    printf("| %d | %.0f | %.2f | %.1f | %.0f%% | %.2f | %.2f | %.2f |", dims[q], per, 1e6 * e / S, gf, 100 * gf / big,
           1e6 * ct / S, 1e6 * g / S, 1e6 * (e - g) / S);
    if (peers) {
      double tt = peer[q][0], jt = peer[q][1], best = tt < jt || jt != jt ? tt : jt;
      printf(" %.2f | %.2f | %.2f |", 1e6 * tt / S, 1e6 * jt / S, e / best);
    }
    printf("\n");
    sx += per; sy += e / S; sxx += per * per; sxy += per * (e / S);
  }
  double slope = (nd * sxy - sx * sy) / (nd * sxx - sx * sx), icpt = (sy - slope * sx) / nd;
  printf("# least-squares fit over the dims: einsum time per step = %.2f us + madds / (%.1f G madds/s)\n", 1e6 * icpt,
         1 / slope / 1e9);
  return 0;
}
