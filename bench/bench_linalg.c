/* bench_linalg: tenferro's SVD, QR and eigh against calling LAPACKE directly on the same data,
 * side by side in one run (median of REPS runs each).
 *
 * Both sides start from the same column-major n x n matrix and leave it intact: LAPACK
 * overwrites its input, so the direct side copies it into a work buffer first (what any caller
 * who keeps A must do); tenferro packs it (one copy) and allocates its result tensors.
 *   SVD:  LAPACKE_?gesdd('S')           vs tfe_svd_S(A, TFE_SVD_THIN, ...)
 *   QR:   LAPACKE_?geqrf + ?orgqr/?ungqr vs tfe_qr_S(A, false, ...) (which also fixes the gauge)
 *   eigh: LAPACKE_?syevd/?heevd('V')     vs tfe_eigh_S(A, W, V)
 * Usage: bench_linalg [n] [reps]  (default 512, 5). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tenferro.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  return t[n / 2];
}

#define MAXREPS 32
/* One kind's three comparisons: S suffix, T element type, RT / R real type and suffix, P the
 * LAPACK prefix. */
#define BENCH_KIND(S, T, RT, R, P, SYEV, ORGQR)                                                                   \
  static void bench_##S(int n, int reps) {                                                                         \
    tfe_tensor_##S A = {0};                                                                                         \
    int64_t d[2] = {n, n};                                                                                          \
    if (tfe_empty_##S(&A, 2, d, TFE_COLMAJOR)) exit(1);                                                             \
    size_t nn = (size_t)n * (size_t)n;                                                                              \
    srand(7);                                                                                                       \
    for (size_t i = 0; i < nn; i++) A.v.data[i] = (T)(rand() / (double)RAND_MAX - 0.5);                            \
    T *w = malloc(nn * sizeof(T)), *u = malloc(nn * sizeof(T)), *vt = malloc(nn * sizeof(T)), *tau = malloc((size_t)n * sizeof(T)); \
    RT *s = malloc((size_t)n * sizeof(RT));                                                                           \
    double td[3][MAXREPS], tt[3][MAXREPS];                                                                          \
    for (int r = 0; r < reps; r++) {                                                                                \
      double t0 = now();                                                                                            \
      memcpy(w, A.v.data, nn * sizeof(T));                                                                          \
      LAPACKE_##P##gesdd(LAPACK_COL_MAJOR, 'S', n, n, w, n, s, u, n, vt, n);                                        \
      td[0][r] = now() - t0;                                                                                        \
      tfe_tensor_##S U = {0}, Vh = {0};                                                                             \
      tfe_tensor_##R Sv = {0};                                                                                      \
      t0 = now();                                                                                                   \
      if (tfe_svd_##S(&A.v, TFE_SVD_THIN, &U, &Sv, &Vh)) exit(1);                                                   \
      tt[0][r] = now() - t0;                                                                                        \
      tfe_tensor_release_##S(&U); tfe_tensor_release_##S(&Vh); tfe_tensor_release_##R(&Sv);                         \
      t0 = now();                                                                                                   \
      memcpy(w, A.v.data, nn * sizeof(T));                                                                          \
      LAPACKE_##P##geqrf(LAPACK_COL_MAJOR, n, n, w, n, tau);                                                        \
      LAPACKE_##P##ORGQR(LAPACK_COL_MAJOR, n, n, n, w, n, tau);                                                     \
      td[1][r] = now() - t0;                                                                                        \
      tfe_tensor_##S Q = {0}, Rr = {0};                                                                             \
      t0 = now();                                                                                                   \
      if (tfe_qr_##S(&A.v, false, &Q, &Rr)) exit(1);                                                                \
      tt[1][r] = now() - t0;                                                                                        \
      tfe_tensor_release_##S(&Q); tfe_tensor_release_##S(&Rr);                                                      \
      t0 = now();                                                                                                   \
      memcpy(w, A.v.data, nn * sizeof(T));                                                                          \
      LAPACKE_##P##SYEV(LAPACK_COL_MAJOR, 'V', 'L', n, w, n, s);                                                    \
      td[2][r] = now() - t0;                                                                                        \
      tfe_tensor_##S V = {0};                                                                                       \
      tfe_tensor_##R W = {0};                                                                                       \
      t0 = now();                                                                                                   \
      if (tfe_eigh_##S(&A.v, &W, &V)) exit(1);                                                                      \
      tt[2][r] = now() - t0;                                                                                        \
      tfe_tensor_release_##S(&V); tfe_tensor_release_##R(&W);                                                       \
    }                                                                                                               \
    const char *names[3] = {"svd", "qr", "eigh"};                                                                   \
    for (int k = 0; k < 3; k++) {                                                                                   \
      double a = median(td[k], reps), b = median(tt[k], reps);                                                      \
      printf("| %-5s | %-4s | %4d | %9.2f | %9.2f | %5.3f |\n", names[k], #S, n, 1e3 * a, 1e3 * b, b / a);          \
    }                                                                                                               \
    free(w); free(u); free(vt); free(tau); free(s);                                                                 \
    tfe_tensor_release_##S(&A);                                                                                     \
  }

BENCH_KIND(f64, double, double, f64, d, syevd, orgqr)
BENCH_KIND(c128, double _Complex, double, f64, z, heevd, ungqr)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 512, reps = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 1 || reps < 1 || reps > MAXREPS) { fprintf(stderr, "usage: bench_linalg [n] [reps <= %d]\n", MAXREPS); return 2; }
  printf("| op    | kind | n    | LAPACKE ms | tenferro ms | ratio |\n|---|---|---|---|---|---|\n");
  bench_f64(n, reps);
  bench_c128(n, reps);
  return 0;
}
