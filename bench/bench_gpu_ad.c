/* bench_gpu_ad.c — reverse mode on device tensors against the same tape on the host:
 * L = <W, tanh(A B)> for n x n f64 (and c128) matrices, one step = record the two operations
 * on a fresh tape, backward from W, and (device) a download of both gradients (the wait).
 * Median wall milliseconds of REPS steps after 2 warm-ups. One unit: it includes the companion.
 *   bench_gpu_ad [n] [reps]   (docs/benchmarks.md) */
#define _POSIX_C_SOURCE 200809L
#include <tenferro/gpu/tenferro_gpu.c>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 2048;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (tfe_gpu_init() != TFE_OK) { printf("bench_gpu_ad: no GPU: %s\n", tfe_last_error()); return 0; }
  printf("# %s\n# threads (host tape) %d\n", tfe_gpu_status(), tfe_get_num_threads());
  for (int64_t m = 256; m <= n; m *= 2) run_f64(m, reps), run_c128(m, reps);
  tfe_gpu_shutdown();
  return 0;
}
