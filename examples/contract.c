/* contract: a matrix product, a transposed tensor contraction, a trace and a max-plus
 * (shortest-path style) product with the same call. */
#include <stdio.h>
#include <tenferro.h>

int main(void) {
  /* C[i,k] = sum_j A[i,j] B[j,k], B given row-major: no copy is made */
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 2, 3, 4, 5, 6}, c[4];
  tfe_view_f64 A = {a, {2, 0, {2, 3}, {1, 2}}, false};  /* 2 x 3 column-major */
  tfe_view_f64 B = {b, {2, 0, {3, 2}, {2, 1}}, false};  /* 3 x 2 row-major */
  tfe_view_f64 C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  if (tfe_contract(1.0, &A, (int32_t[]){'i', 'j'}, &B, (int32_t[]){'j', 'k'}, 0.0, &C, (int32_t[]){'i', 'k'})) {
    fprintf(stderr, "%s\n", tfe_last_error());
    return 1;
  }
  printf("A.B = [[%g %g] [%g %g]]\n", c[0], c[2], c[1], c[3]);

  /* trace of A.B through the unary form: t = sum_i C[i,i] */
  double t = 0;
  tfe_view_f64 T = {&t, {0, 0, {0}, {0}}, false};
  tfe_contract_unary(1.0, &C, (int32_t[]){0, 0}, 0.0, &T, NULL);
  printf("trace = %g\n", t);

  /* max-plus: the best two-step path weight between nodes */
  tfe_maxplus_f64 w[4] = {{0}, {1}, {-INFINITY}, {0}}, p[4];
  tfe_view_maxplus_f64 W = {w, {2, 0, {2, 2}, {1, 2}}, false}, P = {p, {2, 0, {2, 2}, {1, 2}}, false};
  tfe_maxplus_f64 one = {0}, zero = {-INFINITY};
  tfe_contract(one, &W, (int32_t[]){0, 1}, &W, (int32_t[]){1, 2}, zero, &P, (int32_t[]){0, 2});
  printf("max-plus W.W = [[%g %g] [%g %g]]  (BLIS kernels: %s)\n", p[0].v, p[2].v, p[1].v, p[3].v, tfe_blas_arch());
  return (c[0] == 35 && t == c[0] + c[3] && p[1].v == 1) ? 0 : 1;
}
