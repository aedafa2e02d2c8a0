/* bench/bench_small_shapes.c — the small engine's session-26 rules on single GEMMs (issue 18),
 * held plans, 1 thread, in process (the knob's two values alternate, the best of two medians of 7):
 *   --tn    C(r,q) = A(k,r) B(k,q) f64 (both inputs depth-contiguous): small_tn_pack_rows 0
 *           (dot kernel) against N (default 1: the rule's other conditions still apply), packed /
 *           dot time over rows 2-24, columns 4-20, depths 8/20/32
 *   --wide  C(r,q) = A(r,k) B(k,q) f64 and f32: small_wide_cols 0 against 1
 *   --kinds f64 and f32, NN (A(r,k)) and TN (A(k,r)), us per call at chain-like shapes
 *   bench_small_shapes --tn [N] | --wide | --kinds */
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
static void knobs(int64_t pack, int wide) {
  tfe_tuning t = tfe_tuning_get();
  t.small_tn_pack_rows = pack;
  t.small_wide_cols = wide;
  if (tfe_tuning_set(&t) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); exit(2); }
}
/* Median us per call of C(r,q) = A B over k (tn: A stored (k, r)), a plan made after the knobs. */
#define SB_RUN(S, T)                                                                              \
  static double run_##S(int tn, int64_t R, int64_t Q, int64_t K, T *a, T *b, T *c) {               \
    tfe_view_##S A = {a, {2, 0, {tn ? K : R, tn ? R : K}, {1, tn ? K : R}}, false};                 \
    tfe_view_##S B = {b, {2, 0, {K, Q}, {1, K}}, false}, C = {c, {2, 0, {R, Q}, {1, R}}, false};   \
    int32_t la[] = {tn ? 0 : 1, tn ? 1 : 0}, lb[] = {0, 2}, lc[] = {1, 2};                          \
    tfe_contract_desc d;                                                                          \
    tfe_contract_plan *P = NULL;                                                                  \
    if (tfe_contract_describe_##S(&d, &A, la, &B, lb, &C, lc) != TFE_OK || tfe_contract_plan_create(&d, &P) != TFE_OK) { \
      fprintf(stderr, "%s\n", tfe_last_error());                                                  \
      exit(1);                                                                                    \
    }                                                                                             \
    int iters = (int)(3e6 / (double)(R * Q * K + 500)) + 10;                                      \
    double ts[7];                                                                                 \
    for (int r = 0; r < 7; r++) {                                                                 \
      double t0 = now();                                                                          \
      for (int i = 0; i < iters; i++) tfe_contract_execute_##S(P, 1, &A, &B, 0, &C);              \
      ts[r] = (now() - t0) / iters;                                                               \
    }                                                                                             \
    tfe_contract_plan_release(P);                                                                 \
    qsort(ts, 7, sizeof *ts, cmpd);                                                               \
    return 1e6 * ts[3];                                                                           \
  }
SB_RUN(f64, double)
SB_RUN(f32, float)

int main(int argc, char **argv) {
  enum { N = 1 << 19 };
  double *a = malloc(8 * N), *b = malloc(8 * N), *c = calloc(N, 8);
  float *af = malloc(4 * N), *bf = malloc(4 * N), *cf = calloc(N, 4);
  if (!a || !b || !c || !af || !bf || !cf) return 1;
  for (int i = 0; i < N; i++) {
    a[i] = rand() / (double)RAND_MAX - 0.5; b[i] = rand() / (double)RAND_MAX - 0.5;
    af[i] = (float)a[i]; bf[i] = (float)b[i];
  }
  const char *mode = argc > 1 ? argv[1] : "--kinds";
  tfe_tuning def = tfe_tuning_default();
  if (!strcmp(mode, "--tn")) {
    int64_t kb = argc > 2 ? atoll(argv[2]) : 1;
    static const int64_t Rs[] = {2, 4, 5, 8, 10, 12, 16, 24}, Qs[] = {4, 6, 8, 10, 20}, Ks[] = {8, 20, 32};
    printf("| rows | cols | depth | dot us | packed us | packed / dot |\n|---|---|---|---|---|---|\n");
    for (int ri = 0; ri < 8; ri++)
      for (int qi = 0; qi < 5; qi++)
        for (int ki = 0; ki < 3; ki++) {
          double t[4];
          for (int r = 0; r < 4; r++) { knobs(r % 2 ? kb : 0, def.small_wide_cols); t[r] = run_f64(1, Rs[ri], Qs[qi], Ks[ki], a, b, c); }
          double x = t[0] < t[2] ? t[0] : t[2], y = t[1] < t[3] ? t[1] : t[3];
          printf("| %lld | %lld | %lld | %.3f | %.3f | %.2f |\n", (long long)Rs[ri], (long long)Qs[qi], (long long)Ks[ki], x, y, y / x);
        }
  } else if (!strcmp(mode, "--wide")) {
    static const int64_t sh[][3] = {{8, 16, 8}, {8, 40, 8}, {10, 20, 10}, {12, 24, 12}, {16, 32, 16}, {20, 40, 20}, {24, 48, 24},
                                    {32, 64, 32}, {40, 80, 40}, {48, 96, 48}, {5, 30, 20}, {16, 7, 16}, {16, 13, 16}, {17, 30, 9}};
    printf("| kind | r, q, k | 6 columns us | 12 columns us | B/A |\n|---|---|---|---|---|\n");
    for (int f = 0; f < 2; f++)
      for (int s = 0; s < 14; s++) {
        double t[4];
        for (int r = 0; r < 4; r++) {
          knobs(def.small_tn_pack_rows, r % 2);
          t[r] = f ? run_f32(0, sh[s][0], sh[s][1], sh[s][2], af, bf, cf) : run_f64(0, sh[s][0], sh[s][1], sh[s][2], a, b, c);
        }
        double x = t[0] < t[2] ? t[0] : t[2], y = t[1] < t[3] ? t[1] : t[3];
        printf("| %s | %lld, %lld, %lld | %.3f | %.3f | %.2f |\n", f ? "f32" : "f64", (long long)sh[s][0], (long long)sh[s][1],
               (long long)sh[s][2], x, y, y / x);
      }
  } else if (!strcmp(mode, "--kinds")) {
    static const int64_t sh[][3] = {{10, 10, 20}, {12, 12, 24}, {16, 16, 32}, {24, 24, 48}, {32, 32, 64}};
    printf("| r, q, k | f64 NN us | f64 TN | f32 NN | f32 TN |\n|---|---|---|---|---|\n");
    for (int s = 0; s < 5; s++) {
      int64_t R = sh[s][0], Q = sh[s][1], K = sh[s][2];
      printf("| %lld, %lld, %lld | %.3f | %.3f | %.3f | %.3f |\n", (long long)R, (long long)Q, (long long)K, run_f64(0, R, Q, K, a, b, c),
             run_f64(1, R, Q, K, a, b, c), run_f32(0, R, Q, K, af, bf, cf), run_f32(1, R, Q, K, af, bf, cf));
    }
  } else {
    fprintf(stderr, "usage: %s --tn [N] | --wide | --kinds\n", argv[0]);
    return 2;
  }
  free(a); free(b); free(c); free(af); free(bf); free(cf);
  return 0;
}
