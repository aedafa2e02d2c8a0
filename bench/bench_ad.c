/* bench_ad: the gradient of a contraction by reverse mode against the forward contraction, in
 * one run (median of REPS runs each).
 *   forward   tfe_contract_f64: C[a,d] = sum_{b,c} A[a,b,c] B[c,b,d] into an existing C
 *   rrule     tfe_rrule_f64 (stateless): dA and dB from dC (two contractions + layout)
 *   backward  tape: backward pass of a recorded einsum (rrule + gradient accumulation)
 *   tape      everything: leaves (retained references to A and B, tfe_ad_var_ref: no copy),
 *             recorded forward, backward
 *   tape+copy the same with copied leaves (tfe_ad_var), for comparison
 * Target (issue 6): the gradient costs at most 3x the forward contraction.
 * Usage: bench_ad [n] [reps]  (default n = 96: A, B are n^3, C n^2; 5 reps). */
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
#define MAXREPS 32

static void check(tfe_status st) {
  if (st) { fprintf(stderr, "error: %s\n", tfe_last_error()); exit(1); }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 96, reps = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 1 || reps < 1 || reps > MAXREPS) { fprintf(stderr, "usage: bench_ad [n] [reps <= %d]\n", MAXREPS); return 2; }
  int64_t d3[3] = {n, n, n}, d2[2] = {n, n};
  tfe_tensor_f64 A = {0}, B = {0}, C = {0}, dC = {0};
  check(tfe_empty_f64(&A, 3, d3, TFE_COLMAJOR));
  check(tfe_empty_f64(&B, 3, d3, TFE_COLMAJOR));
  check(tfe_zeros_f64(&C, 2, d2, TFE_COLMAJOR));
  check(tfe_full_f64(&dC, 2, d2, TFE_COLMAJOR, 1.0));
  srand(3);
  for (int64_t i = 0; i < (int64_t)n * n * n; i++) {
    A.v.data[i] = rand() / (double)RAND_MAX;
    B.v.data[i] = rand() / (double)RAND_MAX;
  }
  const int32_t la[3] = {0, 1, 2}, lb[3] = {2, 1, 3}, lc[2] = {0, 3};
  tfe_ad_params p = tfe_ad_einsum_params(3, la, 3, lb, 2, lc);
  double t[5][MAXREPS];
  check(tfe_contract_f64(1, &A.v, la, &B.v, lb, 0, &C.v, lc)); /* warm-up: plans, workspace */
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    check(tfe_contract_f64(1, &A.v, la, &B.v, lb, 0, &C.v, lc));
    t[0][r] = now() - t0;

    const tfe_view_f64 *x[2] = {&A.v, &B.v}, *y[1] = {&C.v}, *dy[1] = {&dC.v};
    tfe_tensor_f64 dx[2] = {{{0}, 0}, {{0}, 0}};
    t0 = now();
    check(tfe_rrule_f64(TFE_AD_EINSUM, &p, 2, x, y, dy, dx));
    t[1][r] = now() - t0;
    tfe_tensor_release_f64(&dx[0]);
    tfe_tensor_release_f64(&dx[1]);

    tfe_tape_f64 tape = {0};
    int ia, ib, ic;
    double t1 = now();
    check(tfe_ad_var_ref_f64(&tape, &A, NULL, &ia));
    check(tfe_ad_var_ref_f64(&tape, &B, NULL, &ib));
    check(tfe_ad_einsum_f64(&tape, ia, la, ib, lb, 2, lc, &ic));
    double t2 = now();
    check(tfe_ad_backward_f64(&tape, ic, &dC.v));
    double t3 = now();
    t[2][r] = t3 - t2;
    t[3][r] = t3 - t1;
    tfe_tape_free_f64(&tape);

    tfe_tape_f64 tc = {0};
    t1 = now();
    check(tfe_ad_var_f64(&tc, &A.v, NULL, &ia));
    check(tfe_ad_var_f64(&tc, &B.v, NULL, &ib));
    check(tfe_ad_einsum_f64(&tc, ia, la, ib, lb, 2, lc, &ic));
    check(tfe_ad_backward_f64(&tc, ic, &dC.v));
    t[4][r] = now() - t1;
    tfe_tape_free_f64(&tc);
  }
  const char *names[5] = {"forward contraction", "stateless rrule (dA, dB)", "tape backward pass",
                          "tape: leaves by reference + forward + backward",
                          "tape: copied leaves + forward + backward"};
  for (int k = 0; k < 5; k++) qsort(t[k], (size_t)reps, sizeof(double), cmp);
  double f = t[0][reps / 2];
  printf("C[a,d] = sum A[a,b,c] B[c,b,d], n = %d (f64), threads %d\n", n, tfe_get_num_threads());
  printf("| step | ms | x forward |\n|---|---|---|\n");
  for (int k = 0; k < 5; k++) printf("| %s | %.2f | %.2f |\n", names[k], 1e3 * t[k][reps / 2], t[k][reps / 2] / f);
  tfe_tensor_release_f64(&A); tfe_tensor_release_f64(&B); tfe_tensor_release_f64(&C); tfe_tensor_release_f64(&dC);
  return 0;
}
