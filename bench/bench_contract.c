/* bench/bench_contract.c — prims targets, side by side in one run (median of R runs):
 *   1. ij,jk->ik f64 n=1024, one thread   vs raw bli_dgemm with the kernels tenferro picks
 *   2. abcd,ebfc->aefd at 48/dim f64, c128 vs a GEMM of the same flops (2304 x 2304 x 2304... )
 *   3. max-plus GEMM f64 n=1024, one thread vs dgemm (2 ops per (max,+) pair)
 *   4. per-call time of a 2x2 contraction with a cached plan (and the convenience call)
 * Usage: bench_contract [threads] (default 1). */
#include <tenferro.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
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

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  tfe_set_num_threads(threads);
  printf("BLIS %s, kernels '%s', %d thread(s)\n\n", tfe_blas_version(), tfe_blas_arch(), threads);
  printf("| case | tenferro | peer / limit | ratio |\n|---|---|---|---|\n");
  bench_gemm(threads);
  bench_transposed_f64(threads);
  bench_transposed_c128(threads);
  bench_maxplus(threads);
  bench_small();
  return 0;
}
