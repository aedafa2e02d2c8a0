/* bench_small_call: the fixed cost of one held-plan contraction, 2x2 `ij,jk->ik` f64
 * (tfe_contract_execute_f64 with a plan made once): 5 repeats of 2e6 calls, ns per call.
 * NAIVE0=1 forces the planned small engine instead of the reference loops (contract_naive_work 0). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tenferro.h>
static double now(void) { struct timespec t; timespec_get(&t, TIME_UTC); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void) {
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
  tfe_view_f64 A = {a, {2, 0, {2, 2}, {1, 2}}, false}, B = {b, {2, 0, {2, 2}, {1, 2}}, false};
  tfe_view_f64 C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  int32_t la[] = {0, 1}, lb[] = {1, 2}, lc[] = {0, 2};
  if (getenv("NAIVE0")) { tfe_tuning t = tfe_tuning_get(); t.contract_naive_work = 0; tfe_tuning_set(&t); }
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  tfe_contract_describe_f64(&d, &A, la, &B, lb, &C, lc);
  tfe_contract_plan_create(&d, &P);
  int iters = 2000000;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    for (int i = 0; i < iters; i++) tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &C);
    double t1 = now();
    printf("%.1f ns\n", 1e9 * (t1 - t0) / iters);
  }
  return 0;
}
