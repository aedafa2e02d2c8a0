/* _Generic front ends of the tensor room: the same calls on different kinds select the typed
 * functions. A pointer of a kind-less type (say `int *`) in these calls does not compile: see
 * docs/tensor.md. */
#include "testutil.h"

static void test_generic_calls(void **st) {
  (void)st;
  int64_t dims[2] = {3, 4};
  tfe_tensor_f64 a = {0}, b = {0};
  tfe_tensor_c64 c = {0};
  tfe_tensor_maxplus_f32 m = {0};
  assert_int_equal(tfe_zeros(&a, 2, dims, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_full(&c, 2, dims, TFE_ROWMAJOR, 1.0f + 2.0f * I), TFE_OK);
  assert_int_equal(tfe_ones(&m, 2, dims, TFE_COLMAJOR), TFE_OK);
  assert_true(m.v.data[0].v == 0.0f); /* max-plus one */
  /* view ops on tensors (owning) and on views */
  assert_int_equal(tfe_permute(&a, ((int[]){1, 0}), &b), TFE_OK);
  assert_int_equal(b.v.lay.strides[0], 3);
  tfe_view_f64 v;
  assert_int_equal(tfe_slice_axis(&a.v, 1, 3, -1, -1, &v), TFE_OK);
  assert_int_equal(tfe_set(&v, ((int64_t[]){2, 0}), 5.0), TFE_OK); /* a[2, 3] */
  double x = 0;
  assert_int_equal(tfe_get(&b.v, ((int64_t[]){3, 2}), &x), TFE_OK);
  assert_true(x == 5.0);
  tfe_view_c64 cv, cc;
  assert_int_equal(tfe_select(&c.v, 0, 1, &cv), TFE_OK);
  assert_int_equal(tfe_conj(&cv, &cc), TFE_OK);
  float _Complex z = 0;
  assert_int_equal(tfe_get(&cc, ((int64_t[]){2}), &z), TFE_OK);
  assert_true(cimagf(z) == -2.0f);
  tfe_view_maxplus_f32 mv;
  assert_int_equal(tfe_reshape(&m.v, 1, ((int64_t[]){12}), TFE_COLMAJOR, &mv), TFE_OK);
  assert_int_equal(tfe_unsqueeze(&mv, 1, &mv), TFE_OK);
  assert_int_equal(tfe_squeeze(&mv, 1, &mv), TFE_OK);
  assert_int_equal(tfe_broadcast(&mv, 2, ((int64_t[]){2, 12}), &mv), TFE_OK);
  TU_EXPECT_ERR(tfe_check_writable(&mv), TFE_ERR_OVERLAP, "stride 0");
  tfe_view_f64 parts[2], d;
  assert_int_equal(tfe_split(&a.v, 1, 2, ((int64_t[]){2, 2}), parts), TFE_OK);
  tfe_overlap o = TFE_MAYBE_OVERLAPS;
  assert_int_equal(tfe_views_overlap(&parts[0], &parts[1], &o), TFE_OK);
  assert_int_equal(o, TFE_DISJOINT);
  assert_int_equal(tfe_self_overlap(&parts[0], &o), TFE_OK);
  assert_int_equal(o, TFE_DISJOINT);
  assert_int_equal(tfe_diagonal(&parts[1], 0, 1, &d) == TFE_ERR_SHAPE, 1);
  assert_int_equal(tfe_diagonal_map(&a.v, ((int[]){0, 1}), 2, &d), TFE_OK);
  assert_int_equal(tfe_slice(&a.v, ((int64_t[]){0, 0}), ((int64_t[]){3, 4}), NULL, &d), TFE_OK);
  /* buffers and dyn */
  double buf[6] = {1, 2, 3, 4, 5, 6};
  tfe_view_f64 w;
  tfe_tensor_f64 fb = {0};
  assert_int_equal(tfe_wrap(&w, buf, 6, 2, ((int64_t[]){2, 3}), NULL, 0, TFE_ROWMAJOR), TFE_OK);
  assert_int_equal(tfe_from_buffer(&fb, buf, 6, 2, ((int64_t[]){2, 3}), NULL, 0, TFE_ROWMAJOR), TFE_OK);
  tfe_dyn h = {0};
  assert_int_equal(tfe_to_dyn(&fb, &h), TFE_OK);
  tfe_view_f64 hv;
  assert_int_equal(tfe_dyn_as(&h, &hv), TFE_OK);
  assert_int_equal(tfe_get(&hv, ((int64_t[]){1, 2}), &x), TFE_OK);
  assert_true(x == 6.0);
  tfe_tensor_f64 r = {0};
  assert_int_equal(tfe_retain(&fb, &r), TFE_OK);
  tfe_release(&r);
  tfe_dyn_release(&h);
  tfe_release(&fb);
  tfe_release(&a);
  tfe_release(&b);
  tfe_release(&c);
  tfe_release(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_generic_calls)};
  return cmocka_run_group_tests_name("generic", tests, NULL, NULL);
}
