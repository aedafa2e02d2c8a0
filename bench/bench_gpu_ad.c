/* bench_gpu_ad.c — reverse mode on device tensors against the same tape on the host:
 * L = <W, tanh(A B)> for n x n f64 (and c128) matrices, one step = record the two operations
 * on a fresh tape, backward from W, and (device) a download of both gradients (the wait).
 * Median wall milliseconds of REPS steps after 2 warm-ups. One unit: it includes the companion.
 *   bench_gpu_ad [n] [reps]   (docs/benchmarks.md)
 * With a third argument (svd, qr, eigh, cholesky, lu): one n x n f64 decomposition recorded on a
 * device tape, then backward from its first output with a random cotangent and a download of the
 * gradient; median milliseconds of the backward (+ download) and of the whole step. Built against
 * two trees, it compares their reverse rules on device tensors (docs/benchmarks.md, session 12).
 * The op name with ":fwd" (svd:fwd, ..., also inv) times the forward rule instead: the leaf gets a
 * random tangent, and the recording (primal + forward rule) plus a download of output 0's tangent
 * is timed (session 13). */
#define _POSIX_C_SOURCE 200809L
#include <tenferro/gpu/tenferro_gpu.c>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <complex.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
#define CK(x) do { tfe_status s_ = (x); if (s_) { fprintf(stderr, "%s: %s\n", #x, tfe_last_error()); exit(1); } } while (0)

#define BENCH_KIND(S, T, ABS)                                                                                              \
  static double step_##S(const tfe_tensor_##S *A, const tfe_tensor_##S *B, const tfe_tensor_##S *W, bool dev,          \
                         tfe_tensor_##S *gA, tfe_tensor_##S *gB) {                                                     \
    double t0 = now_ms();                                                                                              \
    tfe_tape_##S t = {0};                                                                                              \
    int a, b, c, y;                                                                                                    \
    const int32_t ij[2] = {0, 1}, jk[2] = {1, 2}, ik[2] = {0, 2};                                                      \
    CK(tfe_ad_var_ref_##S(&t, A, NULL, &a));                                                                           \
    CK(tfe_ad_var_ref_##S(&t, B, NULL, &b));                                                                           \
    CK(tfe_ad_einsum_##S(&t, a, ij, b, jk, 2, ik, &c));                                                                \
    CK(tfe_ad_unary_##S(&t, c, TFE_UN_TANH, 0, &y));                                                                   \
    CK(tfe_ad_backward_##S(&t, y, &W->v));                                                                             \
    if (dev) {                                                                                                         \
      tfe_dyn d, h;                                                                                                    \
      CK(tfe_tensor_to_dyn_##S(tfe_ad_grad_tensor_##S(&t, a), &d)); CK(tfe_view_to_dyn_##S(&gA->v, &h));               \
      CK(tfe_gpu_download(&d, &h)); tfe_dyn_release(&d);                                                               \
      CK(tfe_tensor_to_dyn_##S(tfe_ad_grad_tensor_##S(&t, b), &d)); CK(tfe_view_to_dyn_##S(&gB->v, &h));               \
      CK(tfe_gpu_download(&d, &h)); tfe_dyn_release(&d);                                                               \
    } else {                                                                                                           \
      CK(tfe_copy_##S(&gA->v, tfe_ad_grad_##S(&t, a))); CK(tfe_copy_##S(&gB->v, tfe_ad_grad_##S(&t, b)));             \
    }                                                                                                                  \
    tfe_tape_free_##S(&t);                                                                                             \
    return now_ms() - t0;                                                                                              \
  }                                                                                                                    \
  static void up_##S(const tfe_tensor_##S *h, tfe_tensor_##S *d) {                                                    \
    tfe_dyn hd, dd;                                                                                                    \
    CK(tfe_view_to_dyn_##S(&h->v, &hd)); CK(tfe_gpu_upload(&dd, 0, &hd)); CK(tfe_dyn_as_tensor_##S(&dd, d));           \
    tfe_dyn_release(&dd);                                                                                              \
  }                                                                                                                    \
  static void run_##S(int64_t n, int reps) {                                                                           \
    int64_t d[2] = {n, n};                                                                                             \
    tfe_tensor_##S H[3], D[3], g[4];                                                                                   \
    for (int k = 0; k < 3; k++) {                                                                                      \
      CK(tfe_empty_##S(&H[k], 2, d, TFE_COLMAJOR));                                                                    \
      for (int64_t i = 0; i < n * n; i++) H[k].v.data[i] = (T)((double)rand() / RAND_MAX - 0.5) / (T)sqrt((double)n); \
      up_##S(&H[k], &D[k]);                                                                                            \
    }                                                                                                                  \
    for (int k = 0; k < 4; k++) CK(tfe_empty_##S(&g[k], 2, d, TFE_COLMAJOR));                                          \
    double th[64], td[64], err = 0, sc = 0;                                                                            \
    if (reps > 64) reps = 64;                                                                                          \
    for (int i = -2; i < reps; i++) {                                                                                  \
      double a = step_##S(&H[0], &H[1], &H[2], false, &g[0], &g[1]);                                                   \
      double b = step_##S(&D[0], &D[1], &D[2], true, &g[2], &g[3]);                                                    \
      if (i >= 0) th[i] = a, td[i] = b;                                                                                \
    }                                                                                                                  \
    for (int64_t i = 0; i < n * n; i++) {                                                                              \
      err = fmax(err, fmax(ABS(g[0].v.data[i] - g[2].v.data[i]), ABS(g[1].v.data[i] - g[3].v.data[i])));            \
      sc = fmax(sc, ABS(g[0].v.data[i]));                                                                             \
    }                                                                                                                  \
    qsort(th, (size_t)reps, sizeof *th, cmp_d), qsort(td, (size_t)reps, sizeof *td, cmp_d);                            \
    printf("%-5s n=%-5lld host_tape_ms=%9.2f device_tape_ms=%9.2f speedup=%6.1f max_rel_diff=%.2e\n", #S, (long long)n, \
           th[reps / 2], td[reps / 2], th[reps / 2] / td[reps / 2], err / (sc > 0 ? sc : 1));                          \
    for (int k = 0; k < 3; k++) tfe_tensor_release_##S(&H[k]), tfe_tensor_release_##S(&D[k]);                         \
    for (int k = 0; k < 4; k++) tfe_tensor_release_##S(&g[k]);                                                         \
  }
#include <complex.h>
BENCH_KIND(f64, double, fabs)
BENCH_KIND(c128, double complex, cabs)

/* The linalg mode: op on the device tape, backward from output 0 (cotangent W0 of its shape). */
static void run_linalg(const char *name, int64_t n, int reps) {
  static const struct { const char *s; tfe_ad_op op; } ops[] = {
      {"svd", TFE_AD_SVD}, {"qr", TFE_AD_QR}, {"eigh", TFE_AD_EIGH}, {"cholesky", TFE_AD_CHOLESKY}, {"lu", TFE_AD_LU},
      {"inv", TFE_AD_INV}};
  int which = -1;
  size_t nl = strcspn(name, ":");
  bool fwd = !strcmp(name + nl, ":fwd");
  for (int i = 0; i < 6; i++) if (strlen(ops[i].s) == nl && !strncmp(name, ops[i].s, nl)) which = i;
  if (which < 0) { printf("bench_gpu_ad: unknown op %s\n", name); return; }
  tfe_ad_op op = ops[which].op;
  int64_t d[2] = {n, n};
  tfe_tensor_f64 H = {0}, D = {0}, W = {0}, DW = {0}, G = {0};
  CK(tfe_empty_f64(&H, 2, d, TFE_COLMAJOR));
  for (int64_t i = 0; i < n * n; i++) H.v.data[i] = ((double)rand() / RAND_MAX - 0.5) / sqrt((double)n);
  if (op == TFE_AD_EIGH || op == TFE_AD_CHOLESKY) /* symmetric positive definite: B B^T / n + I */
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i <= j; i++) {
        double v = H.v.data[i + j * n] + H.v.data[j + i * n] + (i == j ? 4.0 : 0.0);
        H.v.data[i + j * n] = H.v.data[j + i * n] = v;
      }
  if (op == TFE_AD_LU || op == TFE_AD_INV) for (int64_t i = 0; i < n; i++) H.v.data[i + i * n] += 2.0;
  up_f64(&H, &D);
  tfe_tensor_f64 V = {0}, DV = {0}; /* the tangent of the forward mode: a symmetric direction */
  if (fwd) {
    CK(tfe_empty_f64(&V, 2, d, TFE_COLMAJOR));
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i <= j; i++) V.v.data[i + j * n] = V.v.data[j + i * n] = (double)rand() / RAND_MAX - 0.5;
    up_f64(&V, &DV);
  }
  CK(tfe_empty_f64(&G, 2, d, TFE_COLMAJOR));
  double tb[64], ts[64];
  if (reps > 64) reps = 64;
  for (int r = -1; r < reps; r++) {
    double t0 = now_ms();
    tfe_tape_f64 t = {0};
    int a, o[3];
    CK(tfe_ad_var_ref_f64(&t, &D, fwd ? &DV.v : NULL, &a));
    CK(tfe_ad_linalg_f64(&t, op, a, o));
    if (fwd) { /* the recording ran the forward rule: wait for output 0's tangent */
      const tfe_tensor_f64 *ty = tfe_ad_tangent_tensor_f64(&t, o[0]);
      if (!W.st) CK(tfe_empty_f64(&W, ty->v.lay.rank, ty->v.lay.dims, TFE_COLMAJOR));
      tfe_dyn dd, hd;
      CK(tfe_tensor_to_dyn_f64(ty, &dd)); CK(tfe_view_to_dyn_f64(&W.v, &hd));
      CK(tfe_gpu_download(&dd, &hd)); tfe_dyn_release(&dd);
      double t1 = now_ms();
      tfe_tape_free_f64(&t);
      if (r >= 0) tb[r] = ts[r] = t1 - t0;
      continue;
    }
    if (!W.st) { /* the cotangent of output 0, once */
      const tfe_view_f64 *y = tfe_ad_value_f64(&t, o[0]);
      CK(tfe_empty_f64(&W, y->lay.rank, y->lay.dims, TFE_COLMAJOR));
      for (int64_t i = 0; i < tfe_layout_numel(&W.v.lay); i++) W.v.data[i] = (double)rand() / RAND_MAX - 0.5;
      up_f64(&W, &DW);
    }
    CK(tfe_gpu_synchronize(0));
    double t1 = now_ms();
    CK(tfe_ad_backward_f64(&t, o[0], &DW.v));
    tfe_dyn dd, hd;
    CK(tfe_tensor_to_dyn_f64(tfe_ad_grad_tensor_f64(&t, a), &dd)); CK(tfe_view_to_dyn_f64(&G.v, &hd));
    CK(tfe_gpu_download(&dd, &hd)); tfe_dyn_release(&dd);
    double t2 = now_ms();
    tfe_tape_free_f64(&t);
    if (r >= 0) tb[r] = t2 - t1, ts[r] = t2 - t0;
  }
  double gs = 0;
  qsort(tb, (size_t)reps, sizeof *tb, cmp_d), qsort(ts, (size_t)reps, sizeof *ts, cmp_d);
  if (fwd) {
    for (int64_t i = 0; i < tfe_layout_numel(&W.v.lay); i++) gs += W.v.data[i] * W.v.data[i];
    printf("%-12s f64 n=%-5lld forward_step_ms=%9.2f |tangent|=%.6e\n", name, (long long)n, ts[reps / 2], sqrt(gs));
    tfe_tensor_release_f64(&H), tfe_tensor_release_f64(&D), tfe_tensor_release_f64(&W), tfe_tensor_release_f64(&V);
    tfe_tensor_release_f64(&DV), tfe_tensor_release_f64(&G);
    return;
  }
  for (int64_t i = 0; i < n * n; i++) gs += G.v.data[i] * G.v.data[i];
  printf("%-8s f64 n=%-5lld backward_ms=%9.2f step_ms=%9.2f |grad|=%.6e\n", name, (long long)n, tb[reps / 2], ts[reps / 2],
         sqrt(gs));
  tfe_tensor_release_f64(&H), tfe_tensor_release_f64(&D), tfe_tensor_release_f64(&W), tfe_tensor_release_f64(&DW);
  tfe_tensor_release_f64(&G);
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 2048;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (tfe_gpu_init() != TFE_OK) { printf("bench_gpu_ad: no GPU: %s\n", tfe_last_error()); return 0; }
  if (argc > 3) {
    srand(7);
    for (int i = 3; i < argc; i++) run_linalg(argv[i], n, reps);
    tfe_gpu_shutdown();
    return 0;
  }
  printf("# %s\n# threads (host tape) %d\n", tfe_gpu_status(), tfe_get_num_threads());
  for (int64_t m = 256; m <= n; m *= 2) run_f64(m, reps), run_c128(m, reps);
  tfe_gpu_shutdown();
  return 0;
}
