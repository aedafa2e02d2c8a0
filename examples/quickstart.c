/* quickstart: make a tensor, write and read elements. */
#include <stdio.h>
#include <tenferro.h>

int main(void) {
  tfe_tensor_f64 t = {0};
  int64_t dims[2] = {2, 3};
  if (tfe_zeros_f64(&t, 2, dims, TFE_COLMAJOR) != TFE_OK) {
    fprintf(stderr, "%s\n", tfe_last_error());
    return 1;
  }
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++) tfe_set_f64(&t.v, (int64_t[]){i, j}, (double)(10 * i + j));
  double x = 0;
  tfe_get_f64(&t.v, (int64_t[]){1, 2}, &x);
  printf("t[1,2] = %g (strides %lld, %lld)\n", x, (long long)t.v.lay.strides[0], (long long)t.v.lay.strides[1]);
  tfe_tensor_release_f64(&t);
  return x == 12.0 ? 0 : 1;
}
