/* examples/einsum_basics.c — N-ary einsum: a one-call contraction, an explicit plan reused on
 * new data, accumulation into a strided output, and the cost of the chosen path. */
#include <tenferro.h>
#include <stdio.h>

int main(void) {
  /* A (2x3), B (3x4), C (4x2), all row-major as a C programmer writes them. */
  double a[6] = {1, 2, 3, 4, 5, 6}, b[12], c[8];
  for (int i = 0; i < 12; i++) b[i] = 0.5 * i;
  for (int i = 0; i < 8; i++) c[i] = i % 3 - 1;
  int64_t da[2] = {2, 3}, db[2] = {3, 4}, dc[2] = {4, 2};
  tfe_view_f64 ops[3] = {{a, {0}, false}, {b, {0}, false}, {c, {0}, false}};
  tfe_layout_dense(2, da, TFE_ROWMAJOR, &ops[0].lay);
  tfe_layout_dense(2, db, TFE_ROWMAJOR, &ops[1].lay);
  tfe_layout_dense(2, dc, TFE_ROWMAJOR, &ops[2].lay);

  /* 1. one call: trace of A*B*C (the plan is cached for the next call) */
  tfe_tensor_f64 tr = {0};
  if (tfe_einsum(&tr, "ij,jk,ki->", 3, ops) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }
  printf("trace(ABC) = %g\n", tr.v.data[0]);
  tfe_tensor_release_f64(&tr);

  /* 2. an explicit plan: optimizer choice, path, cost; executed on the same layouts */
  const tfe_layout *lay[3] = {&ops[0].lay, &ops[1].lay, &ops[2].lay};
  tfe_einsum_opts o = {0};
  o.algo = TFE_PATH_DP;
  tfe_einsum_plan *plan = NULL;
  if (tfe_einsum_plan_new(&plan, TFE_DT_F64, "ij,jk,kl->il", 3, lay, &o) != TFE_OK) return 1;
  const int *pairs;
  int ns = tfe_einsum_plan_path(plan, &pairs);
  printf("path:");
  for (int s = 0; s < ns; s++) printf(" (%d,%d)", pairs[2 * s], pairs[2 * s + 1]);
  printf("  flops=%g\n", tfe_einsum_plan_cost(plan).flops);

  /* 3. accumulate into a strided (transposed) output: out = 2 * ABC + 1 * out */
  double out[4] = {1, 1, 1, 1};
  tfe_view_f64 ov = {out, {0}, false};
  int64_t d22[2] = {2, 2};
  tfe_layout_dense(2, d22, TFE_ROWMAJOR, &ov.lay);
  if (tfe_einsum_execute(plan, 2.0, ops, 1.0, &ov) != TFE_OK) return 1;
  printf("2*ABC + 1 = [[%g, %g], [%g, %g]]\n", out[0], out[1], out[2], out[3]);
  tfe_einsum_plan_release(plan);
  tfe_einsum_cache_clear();
  return 0;
}
