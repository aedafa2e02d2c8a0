/* bench/sim/naive_kinds.c — held-plan `ij,jk->ik` n x n x n (n = 2..8) for f64, i64, max-plus f64,
 * f32, c128 with contract_naive_work 128 and 0: ns a call, best of 5 x 3e5 (docs/bench-prims.md,
 * session 18: the reference loops against the planned engines by kind). Build: gcc -std=c11 -O3
 * -march=native -fopenmp -Iinclude bench/sim/naive_kinds.c -lblis -llapacke -lm */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include <tenferro.h>
static double now(void) { struct timespec t; timespec_get(&t, TIME_UTC); return t.tv_sec + 1e-9 * t.tv_nsec; }
#define BENCH(S, T, ONE, ZERO, INIT)                                                                   \
  static double bench_##S(int n, int64_t w) {                                                        \
    tfe_tuning t = tfe_tuning_get(); t.contract_naive_work = w; tfe_tuning_set(&t);                \
    T a[64], b[64], c[64];                                                                           \
    for (int i = 0; i < 64; i++) { a[i] = INIT(i); b[i] = INIT(i + 3); c[i] = INIT(0); }            \
    tfe_view_##S A = {a, {2, 0, {n, n}, {1, n}}, false}, B = {b, {2, 0, {n, n}, {1, n}}, false};    \
    tfe_view_##S C = {c, {2, 0, {n, n}, {1, n}}, false};                                             \
    int32_t la[] = {0, 1}, lb[] = {1, 2}, lc[] = {0, 2};                                             \
    tfe_contract_desc d; tfe_contract_plan *P = NULL;                                                \
    tfe_contract_describe_##S(&d, &A, la, &B, lb, &C, lc);                                           \
    if (tfe_contract_plan_create(&d, &P) != TFE_OK) { puts(tfe_last_error()); exit(1); }             \
    int it = 300000; double best = 1e9;                                                              \
    for (int r = 0; r < 5; r++) {                                                                    \
      double t0 = now();                                                                             \
      for (int i = 0; i < it; i++) tfe_contract_execute_##S(P, ONE, &A, &B, ZERO, &C);              \
      double dt = (now() - t0) / it * 1e9; if (dt < best) best = dt;                                 \
    }                                                                                                \
    tfe_contract_plan_release(P);                                                                    \
    return best;                                                                                     \
  }
#define IF(i) ((double)((i) % 7))
#define II(i) ((int64_t)((i) % 7))
#define IS(i) ((float)((i) % 7))
#define IZ(i) ((tfe_c128)((double)((i) % 7)))
#define IM(i) ((tfe_maxplus_f64){(double)((i) % 7)})
BENCH(f64, double, 1.0, 0.0, IF)
BENCH(i64, int64_t, 1, 0, II)
BENCH(f32, float, 1.0f, 0.0f, IS)
BENCH(c128, tfe_c128, 1.0, 0.0, IZ)
BENCH(maxplus_f64, tfe_maxplus_f64, ((tfe_maxplus_f64){0.0}), ((tfe_maxplus_f64){-INFINITY}), IM)
int main(void) {
  int ns[] = {2, 3, 4, 5, 6, 8};
  printf("n work | f64 W128 W0 | i64 W128 W0 | maxplus W128 W0 | f32 W128 W0 | c128 W128 W0 (ns per held-plan call, best of 5)\n");
  for (int k = 0; k < 6; k++) {
    int n = ns[k];
    printf("%d %d | %.0f %.0f | %.0f %.0f | %.0f %.0f | %.0f %.0f | %.0f %.0f\n", n, n * n * n, bench_f64(n, 128), bench_f64(n, 0), bench_i64(n, 128),
           bench_i64(n, 0), bench_maxplus_f64(n, 128), bench_maxplus_f64(n, 0), bench_f32(n, 128), bench_f32(n, 0), bench_c128(n, 128), bench_c128(n, 0));
  }
  return 0;
}
