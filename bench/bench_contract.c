/* bench/bench_contract.c — prims targets, side by side in one run (median of R runs):
 *   1. ij,jk->ik f64 n=1024, one thread   vs raw bli_dgemm with the kernels tenferro picks
 *   2. abcd,ebfc->aefd at 48/dim f64, c128 vs a GEMM of the same flops (2304 x 2304 x 2304... )
 *   3. max-plus GEMM f64 n=1024, one thread vs dgemm (2 ops per (max,+) pair)
 *   4. per-call time of a 2x2 contraction with a cached plan (and the convenience call)
 *   5. loop over an unfusable label vs copying (aid,ij->ajd; abcd,ebfc->aefd), same run
 * Usage: bench_contract [threads] (default 1)
 *        bench_contract mera24 [threads]   the last step of str_nw_mera_open_26 (loop vs copy vs dgemm)
 *        bench_contract scaling   1 vs 2 threads, alternating, on the cases of docs/bench-prims.md */
#include <tenferro.h>
/* Sets one tuning field (core/tuning.h). */
#define BC_TUNE(field, value)                 \
  do {                                        \
    tfe_tuning t_ = tfe_tuning_get();         \
    t_.field = (value);                       \
    (void)tfe_tuning_set(&t_);                \
  } while (0)
#include <time.h>

/* Wall time; TFE_BENCH_CPU=1 counts process CPU time instead (1-thread runs on a shared machine:
 * time the process spends descheduled is left out). */
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
#define R 7
static double median(double *t) { qsort(t, R, sizeof *t, cmpd); return t[R / 2]; }

static void fill(double *p, int64_t n) { for (int64_t i = 0; i < n; i++) p[i] = (double)((i * 7919) % 17) / 17.0 - 0.5; }

static void bench_gemm(int threads) {
  int64_t n = 1024;
  double *a = malloc(8 * n * n), *b = malloc(8 * n * n), *c = malloc(8 * n * n);
  fill(a, n * n); fill(b, n * n); fill(c, n * n);
  double tb[R], tt[R], flops = 2.0 * n * n * n;
  tfe_view_f64 A = {a, {2, 0, {n, n}, {1, n}}, false}, B = {b, {2, 0, {n, n}, {1, n}}, false};
  tfe_view_f64 C = {c, {2, 0, {n, n}, {1, n}}, false};
  int32_t la[] = {'i', 'j'}, lb[] = {'j', 'k'}, lc[] = {'i', 'k'};
  tfe__blas_gemm_f64(0, 0, n, n, n, 1.0, a, 1, n, b, 1, n, 0.0, c, 1, n, threads); /* warm up */
  tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
  for (int r = 0; r < R; r++) {
    double t0 = now();
    tfe__blas_gemm_f64(0, 0, n, n, n, 1.0, a, 1, n, b, 1, n, 0.0, c, 1, n, threads);
    double t1 = now();
    tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
    double t2 = now();
    tb[r] = t1 - t0; tt[r] = t2 - t1;
  }
  double gb = flops / median(tb) / 1e9, gt = flops / median(tt) / 1e9;
  printf("| ij,jk->ik f64 n=1024 | %.1f GFLOP/s | bli_dgemm %.1f GFLOP/s | %.1f%% |\n", gt, gb, 100 * gt / gb);
  free(a); free(b); free(c);
}

/* abcd,ebfc->aefd: every operand needs a transpose for a GEMM (K = {b, c} is not
 * contiguous in A's first position, ...). Compared with an m=n=k=48^2 GEMM (same flops). */
static void bench_transposed_f64(int threads) {
  int64_t d = 48, d2 = d * d, d4 = d2 * d2;
  double *a = malloc(8 * d4), *b = malloc(8 * d4), *c = malloc(8 * d4);
  fill(a, d4); fill(b, d4); fill(c, d4);
  tfe_view_f64 A = {a, {4, 0, {d, d, d, d}, {1, d, d2, d2 * d}}, false};
  tfe_view_f64 B = {b, {4, 0, {d, d, d, d}, {1, d, d2, d2 * d}}, false};
  tfe_view_f64 C = {c, {4, 0, {d, d, d, d}, {1, d, d2, d2 * d}}, false};
  int32_t la[] = {'a', 'b', 'c', 'd'}, lb[] = {'e', 'b', 'f', 'c'}, lc[] = {'a', 'e', 'f', 'd'};
  double tg[R], tt[R];
  tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
  for (int r = 0; r < R; r++) {
    double t0 = now();
    tfe__blas_gemm_f64(0, 0, d2, d2, d2, 1.0, a, 1, d2, b, 1, d2, 0.0, c, 1, d2, threads);
    double t1 = now();
    tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
    double t2 = now();
    tg[r] = t1 - t0; tt[r] = t2 - t1;
  }
  double g = median(tg), t = median(tt);
  printf("| abcd,ebfc->aefd f64 48/dim | %.2f ms | GEMM 2304^3 %.2f ms | %.2fx |\n", 1e3 * t, 1e3 * g, t / g);
  free(a); free(b); free(c);
}

static void bench_transposed_c128(int threads) {
  int64_t d = 48, d2 = d * d, d4 = d2 * d2;
  double _Complex *a = malloc(16 * d4), *b = malloc(16 * d4), *c = malloc(16 * d4);
  for (int64_t i = 0; i < d4; i++) { a[i] = (double)(i % 13) - 6 + I; b[i] = 1 - I * (double)(i % 5); c[i] = 0; }
  tfe_view_c128 A = {a, {4, 0, {d, d, d, d}, {1, d, d2, d2 * d}}, false};
  tfe_view_c128 B = {b, {4, 0, {d, d, d, d}, {1, d, d2, d2 * d}}, false};
  tfe_view_c128 C = {c, {4, 0, {d, d, d, d}, {1, d, d2, d2 * d}}, false};
  int32_t la[] = {'a', 'b', 'c', 'd'}, lb[] = {'e', 'b', 'f', 'c'}, lc[] = {'a', 'e', 'f', 'd'};
  double tg[R], tt[R];
  tfe_contract_c128(1.0, &A, la, &B, lb, 0.0, &C, lc);
  for (int r = 0; r < R; r++) {
    double t0 = now();
    tfe__blas_gemm_c128(0, 0, d2, d2, d2, 1.0, a, 1, d2, b, 1, d2, 0.0, c, 1, d2, threads);
    double t1 = now();
    tfe_contract_c128(1.0, &A, la, &B, lb, 0.0, &C, lc);
    double t2 = now();
    tg[r] = t1 - t0; tt[r] = t2 - t1;
  }
  double g = median(tg), t = median(tt);
  printf("| abcd,ebfc->aefd c128 48/dim | %.2f ms | GEMM 2304^3 %.2f ms | %.2fx |\n", 1e3 * t, 1e3 * g, t / g);
  free(a); free(b); free(c);
}

static void bench_maxplus(int threads) {
  int64_t n = 1024;
  double *a = malloc(8 * n * n), *b = malloc(8 * n * n), *c = malloc(8 * n * n);
  fill(a, n * n); fill(b, n * n);
  tfe_view_maxplus_f64 A = {(tfe_maxplus_f64 *)a, {2, 0, {n, n}, {1, n}}, false};
  tfe_view_maxplus_f64 B = {(tfe_maxplus_f64 *)b, {2, 0, {n, n}, {1, n}}, false};
  tfe_view_maxplus_f64 C = {(tfe_maxplus_f64 *)c, {2, 0, {n, n}, {1, n}}, false};
  int32_t la[] = {0, 1}, lb[] = {1, 2}, lc[] = {0, 2};
  tfe_maxplus_f64 one = {0}, zero = {-INFINITY};
  double tb[R], tt[R], ops = 2.0 * n * n * n;
  tfe_contract_maxplus_f64(one, &A, la, &B, lb, zero, &C, lc);
  for (int r = 0; r < R; r++) {
    double t0 = now();
    tfe__blas_gemm_f64(0, 0, n, n, n, 1.0, a, 1, n, b, 1, n, 0.0, c, 1, n, threads);
    double t1 = now();
    tfe_contract_maxplus_f64(one, &A, la, &B, lb, zero, &C, lc);
    double t2 = now();
    tb[r] = t1 - t0; tt[r] = t2 - t1;
  }
  double gb = ops / median(tb) / 1e9, gt = ops / median(tt) / 1e9;
  printf("| max-plus GEMM f64 n=1024 (%s kernel) | %.1f Gop/s | dgemm %.1f GFLOP/s | %.2f of dgemm |\n",
         tfe_semiring_gemm_kernel_maxplus_f64(), gt, gb, gt / gb);
  /* with argmax (the tropical backward pass needs it) vs the plain max-plus GEMM */
  int64_t *arg = malloc(8 * n * n);
  const tfe_maxplus_f64 *ma = (const tfe_maxplus_f64 *)a, *mb = (const tfe_maxplus_f64 *)b;
  tfe_maxplus_f64 *mc = (tfe_maxplus_f64 *)c;
  double ta[R];
  for (int r = 0; r < R; r++) {
    double t0 = now();
    tfe_semiring_gemm_argmax_maxplus_f64(n, n, n, one, ma, 1, n, mb, 1, n, mc, 1, n, arg, 1, n);
    double t1 = now();
    tfe_semiring_gemm_maxplus_f64(n, n, n, one, ma, 1, n, mb, 1, n, zero, mc, 1, n, threads);
    double t2 = now();
    ta[r] = t1 - t0; tt[r] = t2 - t1;
  }
  double ga = ops / median(ta) / 1e9, gp = ops / median(tt) / 1e9;
  printf("| max-plus GEMM + argmax f64 n=1024 | %.1f Gop/s | max-plus GEMM %.1f Gop/s | %.2f |\n", ga, gp, ga / gp);
  free(arg);
  free(a); free(b); free(c);
}

static void bench_small(void) {
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
  tfe_view_f64 A = {a, {2, 0, {2, 2}, {1, 2}}, false}, B = {b, {2, 0, {2, 2}, {1, 2}}, false};
  tfe_view_f64 C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  int32_t la[] = {0, 1}, lb[] = {1, 2}, lc[] = {0, 2};
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  tfe_contract_describe_f64(&d, &A, la, &B, lb, &C, lc);
  tfe_contract_plan_create(&d, &P);
  int iters = 200000;
  double tp[R], tc[R];
  for (int r = 0; r < R; r++) {
    double t0 = now();
    for (int i = 0; i < iters; i++) tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &C);
    double t1 = now();
    for (int i = 0; i < iters; i++) tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
    double t2 = now();
    tp[r] = (t1 - t0) / iters; tc[r] = (t2 - t1) / iters;
  }
  printf("| 2x2 ij,jk->ik f64, plan held | %.0f ns/call | cache lookup + execute | %.0f ns/call |\n",
         1e9 * median(tp), 1e9 * median(tc));
  tfe_contract_plan_release(P);
}

/* ---- loop over an unfusable label vs copy (contract_loop_mode -1 = always copy) -------------- */
static double time_contract(tfe_view_f64 *A, const int32_t *la, tfe_view_f64 *B, const int32_t *lb, tfe_view_f64 *C,
                            const int32_t *lc, int mode, bool *looped) {
  BC_TUNE(contract_loop_mode, mode);
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  tfe_contract_describe_f64(&d, A, la, B, lb, C, lc);
  tfe_contract_plan_create(&d, &P);
  *looped = P->loop;
  tfe_contract_execute_f64(P, 1.0, A, B, 0.0, C);
  double t0 = now();
  tfe_contract_execute_f64(P, 1.0, A, B, 0.0, C);
  double t = now() - t0;
  tfe_contract_plan_release(P);
  BC_TUNE(contract_loop_mode, 0);
  return t;
}
static void bench_loop_case(const char *name, tfe_view_f64 *A, const int32_t *la, tfe_view_f64 *B, const int32_t *lb,
                            tfe_view_f64 *C, const int32_t *lc) {
  double tl[R], tc[R];
  bool looped = false, dummy;
  for (int r = 0; r < R; r++) {
    tl[r] = time_contract(A, la, B, lb, C, lc, 0, &looped);
    tc[r] = time_contract(A, la, B, lb, C, lc, -1, &dummy);
  }
  double l = median(tl), c = median(tc);
  printf("| %s | planner (%s) %.2f ms | always copy %.2f ms | %.2fx |\n", name, looped ? "loop" : "copy", 1e3 * l,
         1e3 * c, c / l);
}
/* aid,ij->ajd: a matrix applied to the middle index of a 3-tensor (tensor-network sweeps). */
static void bench_loop_mid(int64_t a, int64_t i, int64_t d) {
  int64_t n3 = a * i * d;
  double *x = malloc(8 * n3), *y = malloc(8 * i * i), *z = malloc(8 * n3);
  fill(x, n3); fill(y, i * i);
  tfe_view_f64 A = {x, {3, 0, {a, i, d}, {1, a, a * i}}, false}, B = {y, {2, 0, {i, i}, {1, i}}, false};
  tfe_view_f64 C = {z, {3, 0, {a, i, d}, {1, a, a * i}}, false};
  char name[64];
  snprintf(name, sizeof name, "aid,ij->ajd f64 %lldx%lldx%lld", (long long)a, (long long)i, (long long)d);
  bench_loop_case(name, &A, (int32_t[]){'a', 'i', 'd'}, &B, (int32_t[]){'i', 'j'}, &C, (int32_t[]){'a', 'j', 'd'});
  free(x); free(y); free(z);
}
static void bench_loop(void) {
  bench_loop_mid(256, 64, 256);
  bench_loop_mid(128, 256, 128);
  bench_loop_mid(32, 32, 1024);
  double *x, *y, *z;
  int64_t e = 48, e2 = e * e, e4 = e2 * e2;
  x = malloc(8 * e4); y = malloc(8 * e4); z = malloc(8 * e4);
  fill(x, e4); fill(y, e4);
  tfe_view_f64 A4 = {x, {4, 0, {e, e, e, e}, {1, e, e2, e2 * e}}, false};
  tfe_view_f64 B4 = {y, {4, 0, {e, e, e, e}, {1, e, e2, e2 * e}}, false};
  tfe_view_f64 C4 = {z, {4, 0, {e, e, e, e}, {1, e, e2, e2 * e}}, false};
  bench_loop_case("abcd,ebfc->aefd f64 48/dim", &A4, (int32_t[]){'a', 'b', 'c', 'd'}, &B4, (int32_t[]){'e', 'b', 'f', 'c'},
                  &C4, (int32_t[]){'a', 'e', 'f', 'd'});
  free(x); free(y); free(z);
}


/* ---- gm_queen5_5_3: tiny per-batch GEMMs, huge batch (layouts from the einsum trace) -------- */
/* "label:dim/stride ..." of one operand, as printed by the lead's trace of gm_queen5_5_3 */
static int parse_op(const char *s, int32_t *lab, tfe_layout *L) {
  int r = 0;
  long long l, d, st;
  int used = 0;
  while (sscanf(s, "%lld:%lld/%lld%n", &l, &d, &st, &used) == 3) {
    lab[r] = (int32_t)l; L->dims[r] = d; L->strides[r] = st; r++;
    s += used;
  }
  L->rank = r; L->offset = 0;
  return r;
}
static tfe_view_f64 queen_view(const char *s, int32_t *lab) {
  tfe_view_f64 v = {0};
  parse_op(s, lab, &v.lay);
  int64_t n = tfe_layout_numel(&v.lay); /* the traced views are dense */
  v.data = malloc(8 * (size_t)n);
  fill(v.data, n);
  return v;
}
/* memcpy bandwidth (read + write bytes per second) on a 256 MiB block, median of R */
static double memcpy_bw(void) {
  size_t n = (size_t)1 << 28;
  char *x = malloc(n), *y = malloc(n);
  memset(x, 1, n); memset(y, 2, n);
  double t[R];
  for (int r = 0; r < R; r++) { double t0 = now(); memcpy(y, x, n); t[r] = now() - t0; }
  double bw = 2.0 * (double)n / median(t);
  free(x); free(y);
  return bw;
}
static const char *queen_steps[][4] = {
  {"step 94",
   "17:3/1 19:3/3 3:3/9 18:3/27 5:3/81 11:3/243 16:3/729 0:3/2187 20:3/6561 21:3/19683 10:3/59049 7:3/177147",
   "5:3/1 6:3/3 9:3/9 1:3/27 23:3/81 8:3/243 11:3/729 16:3/2187 0:3/6561 20:3/19683 21:3/59049 10:3/177147 7:3/531441",
   "11:3/1 16:3/3 0:3/9 20:3/27 6:3/81 9:3/243 21:3/729 10:3/2187 17:3/6561 19:3/19683 1:3/59049 3:3/177147 7:3/531441 18:3/1594323 23:3/4782969 8:3/14348907"},
  {"step 138",
   "0:3/1 14:3/3 19:3/9 20:3/27 18:3/81 12:3/243 23:3/729 22:3/2187 8:3/6561 4:3/19683 9:3/59049 21:3/177147 6:3/531441",
   "0:3/1 14:3/3 19:3/9 1:3/27 3:3/81 7:3/243 20:3/729 18:3/2187 12:3/6561 23:3/19683 22:3/59049 8:3/177147 4:3/531441 9:3/1594323 21:3/4782969 6:3/14348907",
   "20:3/1 18:3/3 12:3/9 23:3/27 22:3/81 8:3/243 1:3/729 4:3/2187 9:3/6561 21:3/19683 3:3/59049 7:3/177147 6:3/531441"},
  {"step 137",
   "9:3/1 21:3/3 10:3/9 16:3/27 17:3/81 0:3/243 14:3/729 19:3/2187 1:3/6561 3:3/19683 7:3/59049 20:3/177147 18:3/531441 12:3/1594323 23:3/4782969 8:3/14348907 6:3/43046721",
   "10:3/1 16:3/3 17:3/9 22:3/27 4:3/81 0:3/243 14:3/729 19:3/2187 1:3/6561 3:3/19683 7:3/59049 20:3/177147 18:3/531441 12:3/1594323 23:3/4782969 8:3/14348907 6:3/43046721",
   "0:3/1 14:3/3 19:3/9 1:3/27 3:3/81 7:3/243 20:3/729 18:3/2187 12:3/6561 23:3/19683 22:3/59049 8:3/177147 4:3/531441 9:3/1594323 21:3/4782969 6:3/14348907"},
  {"step 95",
   "14:3/1 12:3/3 11:3/9 9:3/27 21:3/81 10:3/243 17:3/729 19:3/2187 1:3/6561 3:3/19683 7:3/59049 18:3/177147 23:3/531441 8:3/1594323",
   "11:3/1 16:3/3 0:3/9 20:3/27 6:3/81 9:3/243 21:3/729 10:3/2187 17:3/6561 19:3/19683 1:3/59049 3:3/177147 7:3/531441 18:3/1594323 23:3/4782969 8:3/14348907",
   "9:3/1 21:3/3 10:3/9 16:3/27 17:3/81 0:3/243 14:3/729 19:3/2187 1:3/6561 3:3/19683 7:3/59049 20:3/177147 18:3/531441 12:3/1594323 23:3/4782969 8:3/14348907 6:3/43046721"},
};
/* tfe_contract_f64(1, A, B, 0, C) on the exact views of the trace, next to the time the bytes of
 * A, B and C take at memcpy speed (C counted once: written). */
static void bench_queen(int threads) {
  double bw = memcpy_bw();
  printf("memcpy bandwidth %.1f GB/s (read + write), %d thread(s)\n\n", bw / 1e9, threads);
  printf("| case | m n k batch | plan | tenferro | small path off | memory-traffic limit | tenferro / limit |\n"
         "|---|---|---|---|---|---|---|\n");
  for (int q = 0; q < (int)(sizeof queen_steps / sizeof queen_steps[0]); q++) {
    int32_t la[64], lb[64], lc[64];
    tfe_view_f64 A = queen_view(queen_steps[q][1], la), B = queen_view(queen_steps[q][2], lb);
    tfe_view_f64 C = queen_view(queen_steps[q][3], lc);
    double bytes = 8.0 * (double)(tfe_layout_numel(&A.lay) + tfe_layout_numel(&B.lay) + tfe_layout_numel(&C.lay));
    tfe_contract_desc d;
    tfe_contract_plan *P = NULL;
    tfe_contract_describe_f64(&d, &A, la, &B, lb, &C, lc);
    tfe_contract_plan_create(&d, &P);
    char plan[96];
    snprintf(plan, sizeof plan, "%s%s copy %d%d%d loop %d", P->engine == TFE__PR_ENG_SMALL ? "small" : "gemm", P->small_swap ? " T" : "", P->copy[0], P->copy[1],
             P->copy[2], P->loop);
    /* the same call with the small path turned off (the planner as it was before it: BLIS per
     * batch), alternating with the default */
    double t[R], toff[R];
    if (getenv("TFE_ORIENT")) { /* measure one small-path orientation (1 plain, 2 transposed) */
      BC_TUNE(contract_small_orient, atoi(getenv("TFE_ORIENT")));
      tfe_contract_plan_release(P);
      tfe_contract_plan_create(&d, &P);
      tfe_contract_cache_clear();
    }
    tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
    for (int r = 0; r < R; r++) {
      double t0 = now();
      tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
      t[r] = now() - t0;
      if (r >= 3) { toff[r] = toff[r - 3]; continue; } /* 3 runs of the slow path are enough */
      BC_TUNE(contract_small_mode, -1);
      tfe_contract_desc d2;
      tfe_contract_plan *P2 = NULL;
      tfe_contract_describe_f64(&d2, &A, la, &B, lb, &C, lc);
      tfe_contract_plan_create(&d2, &P2);
      t0 = now();
      tfe_contract_execute_f64(P2, 1.0, &A, &B, 0.0, &C);
      toff[r] = now() - t0;
      tfe_contract_plan_release(P2);
      BC_TUNE(contract_small_mode, 0);
    }
    double tm = median(t), lim = bytes / bw, to = median(toff);
    printf("| gm_queen %s | %lld %lld %lld %lld | %s | %.1f ms | %.1f ms | %.1f ms (%.2f GB) | %.2fx |\n",
           queen_steps[q][0], (long long)P->m, (long long)P->n, (long long)P->k, (long long)P->nbatch, plan, 1e3 * tm,
           1e3 * to, 1e3 * lim, bytes / 1e9, tm / lim);
    tfe_contract_plan_release(P);
    free(A.data); free(B.data); free(C.data);
  }
  BC_TUNE(contract_small_buf, 32768);
}


static tfe_view_f64 dense(int rank, const int64_t *dims);
/* ---- crossover: small-GEMM path vs BLIS per batch (contract_small_mode 1 / -1) ----------------- */
static double time_mode(int mode, tfe_view_f64 *A, tfe_view_f64 *B, tfe_view_f64 *C, bool *small) {
  int32_t la[] = {'i', 'p', 'b'}, lb[] = {'p', 'j', 'b'}, lc[] = {'i', 'j', 'b'};
  BC_TUNE(contract_small_mode, mode);
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  tfe_contract_describe_f64(&d, A, la, B, lb, C, lc);
  tfe_contract_plan_create(&d, &P);
  *small = P->engine == TFE__PR_ENG_SMALL;
  tfe_contract_execute_f64(P, 1.0, A, B, 0.0, C);
  double t[R];
  for (int r = 0; r < R; r++) {
    double t0 = now();
    tfe_contract_execute_f64(P, 1.0, A, B, 0.0, C);
    t[r] = now() - t0;
  }
  tfe_contract_plan_release(P);
  BC_TUNE(contract_small_mode, 0);
  return median(t);
}
/* ip b, pj b -> ij b, column-major, batch last; about 2e7 multiply-adds per case. */
static void bench_crossover(void) {
  static const int64_t shapes[][3] = {{4, 4, 4}, {8, 8, 8}, {9, 9, 27}, {9, 81, 3}, {12, 12, 12}, {16, 16, 16},
                                      {20, 20, 20}, {24, 24, 24}, {28, 28, 28}, {32, 32, 32}, {40, 40, 40},
                                      {48, 48, 48}, {56, 56, 56}, {64, 64, 64}, {80, 80, 80}, {8, 8, 256},
                                      {64, 64, 4}, {16, 128, 16}, {96, 8, 8}, {128, 128, 8}, {32, 32, 256},
                                      {96, 96, 96}, {112, 112, 112}, {128, 128, 128}, {60, 60, 60}, {100, 100, 100}};
  BC_TUNE(contract_small_buf, 1 << 17); /* let the forced small path take the big shapes too */
  printf("| m n k | m*n*k | batch | small path | BLIS per batch | BLIS / small |\n|---|---|---|---|---|---|\n");
  for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
    int64_t m = shapes[q][0], n = shapes[q][1], k = shapes[q][2], mnk = m * n * k;
    int64_t nb = 20000000 / mnk + 1;
    tfe_view_f64 A = dense(3, (int64_t[]){m, k, nb}), B = dense(3, (int64_t[]){k, n, nb});
    tfe_view_f64 C = dense(3, (int64_t[]){m, n, nb});
    bool s1, s2;
    double ts = time_mode(1, &A, &B, &C, &s1), tb = time_mode(-1, &A, &B, &C, &s2);
    printf("| %lld %lld %lld | %lld | %lld | %s%.2f ms | %.2f ms | %.2f |\n", (long long)m, (long long)n, (long long)k,
           (long long)mnk, (long long)nb, s1 ? "" : "(not small) ", 1e3 * ts, 1e3 * tb, tb / ts);
    free(A.data); free(B.data); free(C.data);
  }
}


/* ---- bij,bjk->bik (C-order, the einsum grid's bin_batched_matmul): tenferro vs raw dgemm ------ */
static void bench_bmm(int64_t b, int64_t n, int threads) {
  /* C order: the last label has stride 1 */
  double *a = malloc(8 * (size_t)(b * n * n)), *bb = malloc(8 * (size_t)(b * n * n)), *c = malloc(8 * (size_t)(b * n * n));
  fill(a, b * n * n); fill(bb, b * n * n); fill(c, b * n * n);
  tfe_view_f64 A = {a, {3, 0, {b, n, n}, {n * n, n, 1}}, false};
  tfe_view_f64 B = {bb, {3, 0, {b, n, n}, {n * n, n, 1}}, false};
  tfe_view_f64 C = {c, {3, 0, {b, n, n}, {n * n, n, 1}}, false};
  int32_t la[] = {'b', 'i', 'j'}, lb[] = {'b', 'j', 'k'}, lc[] = {'b', 'i', 'k'};
  double tt[R], tr[R], tsm[R], tbl[R];
  bool sm2 = false, bl2 = false;
  for (int r = 0; r < R; r++) {
    tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
    double t0 = now();
    for (int it = 0; it < 20; it++) tfe_contract_f64(1.0, &A, la, &B, lb, 0.0, &C, lc);
    double t1 = now();
    for (int it = 0; it < 20; it++)
      for (int64_t q = 0; q < b; q++) /* row-major GEMMs: rs = n, cs = 1 */
        tfe__blas_gemm_f64(0, 0, n, n, n, 1.0, a + q * n * n, n, 1, bb + q * n * n, n, 1, 0.0, c + q * n * n, n, 1,
                           threads);
    double t2 = now();
    tt[r] = (t1 - t0) / 20; tr[r] = (t2 - t1) / 20;
  }
  int32_t *L[3] = {la, lb, lc};
  for (int mode = 1; mode >= -1; mode -= 2) {
    BC_TUNE(contract_small_mode, mode);
    tfe_contract_desc d;
    tfe_contract_plan *P = NULL;
    tfe_contract_describe_f64(&d, &A, L[0], &B, L[1], &C, L[2]);
    tfe_contract_plan_create(&d, &P);
    if (mode == 1) sm2 = P->engine == TFE__PR_ENG_SMALL; else bl2 = P->engine != TFE__PR_ENG_SMALL;
    double *dst = mode == 1 ? tsm : tbl;
    for (int r = 0; r < R; r++) {
      double t0 = now();
      for (int it = 0; it < 20; it++) tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &C);
      dst[r] = (now() - t0) / 20;
    }
    tfe_contract_plan_release(P);
    BC_TUNE(contract_small_mode, 0);
  }
  printf("| bij,bjk->bik b=%lld n=%lld | tenferro %.3f ms | raw bli_dgemm loop %.3f ms | small path%s %.3f ms | BLIS path%s %.3f ms |\n",
         (long long)b, (long long)n, 1e3 * median(tt), 1e3 * median(tr), sm2 ? "" : " (not taken)", 1e3 * median(tsm),
         bl2 ? "" : " (not taken)", 1e3 * median(tbl));
  free(a); free(bb); free(c);
}


/* The same for c128 (BLIS runs complex GEMM through its 1m method). */
static void bench_crossover_c128(void) {
  static const int64_t shapes[][3] = {{9, 9, 27}, {16, 16, 16}, {32, 32, 32}, {48, 48, 48}, {64, 64, 64}, {80, 80, 80}};
  printf("\n| c128 m n k | m*n*k | batch | small path | BLIS per batch | BLIS / small |\n|---|---|---|---|---|---|\n");
  int32_t la[] = {'i', 'p', 'b'}, lb[] = {'p', 'j', 'b'}, lc[] = {'i', 'j', 'b'};
  for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
    int64_t m = shapes[q][0], n = shapes[q][1], k = shapes[q][2], mnk = m * n * k, nb = 5000000 / mnk + 1;
    double _Complex *a = malloc(16 * (size_t)(m * k * nb)), *b = malloc(16 * (size_t)(k * n * nb));
    double _Complex *c = malloc(16 * (size_t)(m * n * nb));
    for (int64_t i = 0; i < m * k * nb; i++) a[i] = (double)(i % 7) - 3 + I * (double)(i % 5);
    for (int64_t i = 0; i < k * n * nb; i++) b[i] = 1 - I * (double)(i % 3);
    tfe_view_c128 A = {a, {3, 0, {m, k, nb}, {1, m, m * k}}, false}, B = {b, {3, 0, {k, n, nb}, {1, k, k * n}}, false};
    tfe_view_c128 C = {c, {3, 0, {m, n, nb}, {1, m, m * n}}, false};
    double tm[2];
    bool sm[2];
    for (int mode = 0; mode < 2; mode++) {
      BC_TUNE(contract_small_mode, mode == 0 ? 1 : -1);
      tfe_contract_desc d;
      tfe_contract_plan *P = NULL;
      tfe_contract_describe_c128(&d, &A, la, &B, lb, &C, lc);
      tfe_contract_plan_create(&d, &P);
      sm[mode] = P->engine == TFE__PR_ENG_SMALL;
      tfe_contract_execute_c128(P, 1.0, &A, &B, 0.0, &C);
      double t[R];
      for (int r = 0; r < R; r++) {
        double t0 = now();
        tfe_contract_execute_c128(P, 1.0, &A, &B, 0.0, &C);
        t[r] = now() - t0;
      }
      tm[mode] = median(t);
      tfe_contract_plan_release(P);
      BC_TUNE(contract_small_mode, 0);
    }
    printf("| %lld %lld %lld | %lld | %lld | %s%.2f ms | %.2f ms | %.2f |\n", (long long)m, (long long)n, (long long)k,
           (long long)mnk, (long long)nb, sm[0] ? "" : "(not small) ", 1e3 * tm[0], 1e3 * tm[1], tm[1] / tm[0]);
    free(a); free(b); free(c);
  }
}

/* ---- 1 vs 2 threads, alternating in one run ------------------------------------------------ */
static void scaling_case(const char *name, tfe_view_f64 *A, const int32_t *la, tfe_view_f64 *B, const int32_t *lb,
                         tfe_view_f64 *C, const int32_t *lc, int iters) {
  double t[2][R];
  for (int th = 1; th <= 2; th++) { tfe_set_num_threads(th); tfe_contract_f64(1.0, A, la, B, lb, 0.0, C, lc); }
  for (int r = 0; r < R; r++)
    for (int th = 1; th <= 2; th++) {
      tfe_set_num_threads(th);
      double t0 = now();
      for (int it = 0; it < iters; it++) tfe_contract_f64(1.0, A, la, B, lb, 0.0, C, lc);
      t[th - 1][r] = (now() - t0) / iters;
    }
  double t1 = median(t[0]), t2 = median(t[1]);
  printf("| %s | %.3f ms | %.3f ms | %.2fx |\n", name, 1e3 * t1, 1e3 * t2, t1 / t2);
}
static tfe_view_f64 dense(int rank, const int64_t *dims) {
  tfe_view_f64 v = {0};
  v.lay.rank = rank;
  int64_t s = 1;
  for (int i = 0; i < rank; i++) { v.lay.dims[i] = dims[i]; v.lay.strides[i] = s; s *= dims[i]; }
  v.data = malloc(8 * (size_t)s);
  fill(v.data, s);
  return v;
}
static void bench_scaling(void) {
  printf("| case | 1 thread | 2 threads | speed-up |\n|---|---|---|---|\n");
  {
    int64_t n = 1024;
    tfe_view_f64 A = dense(2, (int64_t[]){n, n}), B = dense(2, (int64_t[]){n, n}), C = dense(2, (int64_t[]){n, n});
    scaling_case("ij,jk->ik f64 n=1024", &A, (int32_t[]){'i', 'j'}, &B, (int32_t[]){'j', 'k'}, &C, (int32_t[]){'i', 'k'}, 1);
    free(A.data); free(B.data); free(C.data);
  }
  {
    int64_t b = 32, n = 128;
    tfe_view_f64 A = dense(3, (int64_t[]){b, n, n}), B = dense(3, (int64_t[]){b, n, n}), C = dense(3, (int64_t[]){b, n, n});
    scaling_case("bij,bjk->bik f64 b=32 n=128", &A, (int32_t[]){'b', 'i', 'j'}, &B, (int32_t[]){'b', 'j', 'k'}, &C,
                 (int32_t[]){'b', 'i', 'k'}, 3);
    free(A.data); free(B.data); free(C.data);
  }
  {
    int64_t e = 48;
    tfe_view_f64 A = dense(4, (int64_t[]){e, e, e, e}), B = dense(4, (int64_t[]){e, e, e, e}), C = dense(4, (int64_t[]){e, e, e, e});
    scaling_case("abcd,ebfc->aefd f64 48/dim", &A, (int32_t[]){'a', 'b', 'c', 'd'}, &B, (int32_t[]){'e', 'b', 'f', 'c'}, &C,
                 (int32_t[]){'a', 'e', 'f', 'd'}, 1);
    free(A.data); free(B.data); free(C.data);
  }
  int64_t ds[] = {8, 16, 32, 64, 128};
  for (int q = 0; q < 5; q++) {
    int64_t d = ds[q];
    tfe_view_f64 A = dense(3, (int64_t[]){d, d, d}), B = dense(3, (int64_t[]){d, d, d}), C = dense(2, (int64_t[]){d, d});
    char name[64];
    snprintf(name, sizeof name, "abc,cbd->ad f64 %lld/dim", (long long)d);
    int iters = (int)(20000000 / (d * d * d * d) + 1);
    scaling_case(name, &A, (int32_t[]){'a', 'b', 'c'}, &B, (int32_t[]){'c', 'b', 'd'}, &C, (int32_t[]){'a', 'd'}, iters);
    free(A.data); free(B.data); free(C.data);
  }
}

/* ---- mera24: the last pairwise step of str_nw_mera_open_26 (the README's job) ------------- */
/* Two unfusable output labels (11 in M, 10 in N): the planner loops over both (9 copy-free
 * GEMMs of 81 x 59049 x 50 writing C in place) instead of a GEMM into a 344 MB temporary and
 * a permuting copy. Compared, alternating in one run, with the always-copy plan (the plan
 * before multi-label loops) and a raw bli_dgemm of the same m, n, k (column-major, dense). */
static void bench_mera24(int threads) {
  int32_t la[64], lb[64], lc[64];
  tfe_view_f64 A = queen_view("44:9/1 43:9/9 11:3/81 6:5/243 17:10/1215", la);
  tfe_view_f64 B = queen_view("6:5/1 17:10/5 42:9/50 41:9/450 40:9/4050 39:9/36450 38:9/328050 10:3/2952450", lb);
  tfe_view_f64 C = queen_view("10:3/14348907 11:3/4782969 38:9/531441 39:9/59049 40:9/6561 41:9/729 42:9/81 "
                              "43:9/9 44:9/1", lc);
  int64_t m = 243, n = 177147, k = 50;
  double *c2 = malloc(8 * (size_t)(m * n));
  fill(c2, m * n);
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  tfe_contract_describe_f64(&d, &A, la, &B, lb, &C, lc);
  tfe_contract_plan_create(&d, &P);
  printf("mera24 plan: m %lld n %lld k %lld batch %lld, copies %d%d%d, loop labels %d, workspace %zu bytes\n",
         (long long)P->m, (long long)P->n, (long long)P->k, (long long)P->nbatch, P->copy[0], P->copy[1], P->copy[2],
         P->nloop, tfe_contract_plan_workspace(P));
  tfe_contract_plan_release(P);
  double tl[R], tc[R], tb[R], flops = 2.0 * (double)m * (double)n * (double)k;
  bool looped = false, dummy;
  tfe__blas_gemm_f64(0, 0, m, n, k, 1.0, A.data, 1, m, B.data, 1, k, 0.0, c2, 1, m, threads); /* warm up */
  for (int r = 0; r < R; r++) {
    tl[r] = time_contract(&A, la, &B, lb, &C, lc, 0, &looped);
    tc[r] = time_contract(&A, la, &B, lb, &C, lc, -1, &dummy);
    double t0 = now();
    tfe__blas_gemm_f64(0, 0, m, n, k, 1.0, A.data, 1, m, B.data, 1, k, 0.0, c2, 1, m, threads);
    tb[r] = now() - t0;
  }
  double l = median(tl), c = median(tc), b = median(tb);
  printf("| mera24 %lldx%lldx%lld f64, %d thread(s) | planner (%s) %.1f ms = %.1f GFLOP/s | always copy %.1f ms = %.1f "
         "GFLOP/s | raw bli_dgemm %.1f ms = %.1f GFLOP/s |\n", (long long)m, (long long)n, (long long)k, threads,
         looped ? "loop" : "copy", 1e3 * l, flops / l / 1e9, 1e3 * c, flops / c / 1e9, 1e3 * b, flops / b / 1e9);
  free(A.data); free(B.data); free(C.data); free(c2);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "scaling") == 0) {
    printf("BLIS %s, kernels '%s', per-call threads %s\n\n", tfe_blas_version(), tfe_blas_arch(),
           tfe_blas_per_call_threads() ? "yes" : "no");
    bench_scaling();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "bmm") == 0) {
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    tfe_set_num_threads(threads);
    bench_bmm(32, 64, threads);
    bench_bmm(32, 128, threads);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "crossover") == 0) {
    tfe_set_num_threads(1);
    bench_crossover();
    bench_crossover_c128();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "mera24") == 0) {
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    tfe_set_num_threads(threads);
    bench_mera24(threads);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "queen") == 0) {
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    tfe_set_num_threads(threads);
    bench_queen(threads);
    return 0;
  }
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  tfe_set_num_threads(threads);
  printf("BLIS %s, kernels '%s', %d thread(s)\n\n", tfe_blas_version(), tfe_blas_arch(), threads);
  printf("| case | tenferro | peer / limit | ratio |\n|---|---|---|---|\n");
  bench_gemm(threads);
  bench_transposed_f64(threads);
  bench_transposed_c128(threads);
  bench_maxplus(threads);
  bench_small();
  printf("\n| case | planner | always copy | copy / planner |\n|---|---|---|---|\n");
  bench_loop();
  return 0;
}
