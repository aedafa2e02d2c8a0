/* Second unit of tests/test_onetu.c, in TFE_EXTERN mode. */
#define TFE_EXTERN
#include <complex.h>
#include <tenferro.h>

typedef tfe_status (*zeros_fn)(tfe_tensor_f64 *, int, const int64_t *, tfe_order);
zeros_fn onetu_b_zeros_addr(void);
typedef tfe_status (*reshape_fn)(const tfe_layout *, int, const int64_t *, tfe_order, tfe_layout *);
reshape_fn onetu_b_view_op_addr(void);
tfe_status onetu_b_work(tfe_tensor_c128 *t);
const char *onetu_b_error(void);

zeros_fn onetu_b_zeros_addr(void) { return &tfe_zeros_f64; }
reshape_fn onetu_b_view_op_addr(void) { return &tfe_layout_reshape; }
/* 3x3 with diagonal (i + 1) + 2i, made and permuted here */
tfe_status onetu_b_work(tfe_tensor_c128 *t) {
  TFE_TRY(tfe_zeros_c128(t, 2, (int64_t[]){3, 3}, TFE_ROWMAJOR));
  for (int64_t i = 0; i < 3; i++) TFE_TRY(tfe_set_c128(&t->v, (int64_t[]){i, i}, (double)(i + 1) + 2.0 * I));
  return tfe_tensor_permute_c128(t, (int[]){1, 0}, t);
}
const char *onetu_b_error(void) {
  tfe_view_c128 v = {0}, o;
  (void)tfe_reshape_c128(&v, 1, (int64_t[]){2}, TFE_COLMAJOR, &o);
  return tfe_last_error();
}
