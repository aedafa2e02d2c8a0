/* One-TU implementation mode: this unit defines TFE_IMPLEMENTATION (it emits the one external
 * definition of every tenferro function), tests/test_onetu.b__part.c defines TFE_EXTERN (it
 * sees C99 inline definitions and calls the external ones). Both units must then agree on the
 * address of every function, and share state as in the default mode. */
#define TFE_IMPLEMENTATION
#include "testutil.h"

typedef tfe_status (*zeros_fn)(tfe_tensor_f64 *, int, const int64_t *, tfe_order);
zeros_fn onetu_b_zeros_addr(void);
typedef tfe_status (*reshape_fn)(const tfe_layout *, int, const int64_t *, tfe_order, tfe_layout *);
reshape_fn onetu_b_view_op_addr(void);
tfe_status onetu_b_work(tfe_tensor_c128 *t);
const char *onetu_b_error(void);

static void test_one_definition(void **st) {
  (void)st;
  /* a single external definition: the same address from both units */
  assert_true(onetu_b_zeros_addr() == &tfe_zeros_f64);
  assert_true(onetu_b_view_op_addr() == &tfe_layout_reshape);
  tfe_tensor_c128 t = {0};
  assert_int_equal(onetu_b_work(&t), TFE_OK);
  tfe_view_c128 d = {0};
  assert_int_equal(tfe_diagonal_c128(&t.v, 0, 1, &d), TFE_OK);
  double _Complex x = 0;
  assert_int_equal(tfe_get_c128(&d, (int64_t[]){2}, &x), TFE_OK);
  assert_true(creal(x) == 3.0 && cimag(x) == 2.0);
  tfe_tensor_release_c128(&t);
  /* the thread-local message written by the other unit is this unit's message */
  const char *msg = onetu_b_error();
  assert_ptr_equal(msg, tfe_last_error());
  assert_non_null(strstr(msg, "tfe_layout_reshape: cannot reshape [] (1 elements) to [2] (2 elements)"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_one_definition)};
  return cmocka_run_group_tests_name("onetu", tests, NULL, NULL);
}
