/* kernels.c — the kernel room in a few lines: permute a view into a dense tensor, map, zip
 * with broadcasting, reduce along an axis. */
#include <tenferro.h>

int main(void) {
  /* a 3 x 4 column-major matrix holding 0..11 */
  tfe_tensor_f64 a = {0}, t = {0}, c = {0}, r = {0};
  if (tfe_empty_f64(&a, 2, (int64_t[]){3, 4}, TFE_COLMAJOR)) return 1;
  for (int i = 0; i < 12; i++) a.v.data[i] = i;

  /* the transpose as a view (no copy), then made contiguous: t is 4 x 3, column-major */
  tfe_view_f64 at = {a.v.data, {2, 0, {4, 3}, {3, 1}}, false};
  if (tfe_contiguous(&at, TFE_COLMAJOR, &t)) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }

  /* square every element in place, then add a row vector broadcast over the rows */
  tfe_map(&t.v, &t.v, TFE_UN_SQUARE, 0.0);
  double row[3] = {100, 200, 300};
  tfe_view_f64 rv = {row, {1, 0, {3}, {1}}, false}; /* dims {3}: broadcast over t's first dim */
  if (tfe_empty_f64(&c, 2, (int64_t[]){4, 3}, TFE_COLMAJOR)) return 1;
  tfe_zip(&c.v, &t.v, &rv, TFE_BIN_ADD);

  /* column sums: reduce axis 0 into a 3-vector */
  if (tfe_zeros_f64(&r, 1, (int64_t[]){3}, TFE_COLMAJOR)) return 1;
  tfe_status st = tfe_reduce(&r.v, &c.v, TFE_RED_SUM, 1, (int[]){0}, 1.0, 0.0);
  double total = 0;
  tfe_reduce_all(&c.v, TFE_RED_SUM, &total);
  printf("column sums: %g %g %g (total %g)\n", r.v.data[0], r.v.data[1], r.v.data[2], total);

  /* expected: t[j, i] = a[i, j]^2 = (i + 3j)^2; column i of c sums over j plus 4 * row[i] */
  int ok = st == TFE_OK;
  for (int i = 0; i < 3; i++) {
    double want = 4 * row[i];
    for (int j = 0; j < 4; j++) want += (double)(i + 3 * j) * (i + 3 * j);
    ok = ok && r.v.data[i] == want;
  }
  tfe_tensor_release_f64(&a);
  tfe_tensor_release_f64(&t);
  tfe_tensor_release_f64(&c);
  tfe_tensor_release_f64(&r);
  printf(ok ? "ok\n" : "WRONG\n");
  return ok ? 0 : 1;
}
