/* examples/readme.c — the README's example, compiled and run by `make test`. */
#include <stdio.h>
#include <tenferro.h>

int main(void) {
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}; /* row-major 2x3 and 3x2 */
  tfe_view_f64 ops[2];
  tfe_wrap_f64(&ops[0], a, 6, 2, (int64_t[]){2, 3}, NULL, 0, TFE_ROWMAJOR); /* no copy */
  tfe_wrap_f64(&ops[1], b, 6, 2, (int64_t[]){3, 2}, NULL, 0, TFE_ROWMAJOR);

  tfe_tensor_f64 c = {0};
  if (tfe_einsum(&c, "ij,jk->ik", 2, ops) != TFE_OK) { /* plan cached, BLIS underneath */
    fprintf(stderr, "%s\n", tfe_last_error());
    return 1;
  }
  double c10 = 0;
  tfe_get(&c.v, ((int64_t[]){1, 0}), &c10);
  printf("C[1,0] = %g\n", c10); /* 4*1 + 5*0 + 6*1 = 10 */

  tfe_view_f64 ct;                                   /* zero-copy transpose */
  double ct01 = 0;
  tfe_permute(&c.v, ((int[]){1, 0}), &ct);
  tfe_get(&ct, ((int64_t[]){0, 1}), &ct01);
  printf("C^T[0,1] = %g\n", ct01);
  if (tfe_einsum(&c, "ij,jk->ik", 1, ops) != TFE_OK) /* wrong operand count: a clear error */
    fprintf(stderr, "expected error: %s\n", tfe_last_error());
  tfe_release(&c);
  return c10 == 10.0 && ct01 == c10 ? 0 : 1;
}
