/* Core room: status names, messages, allocation hooks, dtype table, semiring traits. */
#include "testutil.h"

static void test_status_names(void **s) {
  (void)s;
  assert_string_equal(tfe_status_name(TFE_OK), "ok");
  assert_string_equal(tfe_status_name(TFE_ERR_SHAPE), "shape mismatch");
  assert_string_equal(tfe_status_name((tfe_status)999), "unknown status");
}

static void test_error_message(void **s) {
  (void)s;
  tfe_tensor_f64 t = {0};
  TU_EXPECT_ERR(tfe_zeros_f64(&t, TFE_MAX_RANK + 1, NULL, TFE_COLMAJOR), TFE_ERR_RANK, "rank 65");
  TU_EXPECT_ERR(tfe_zeros_f64(&t, 2, (int64_t[]){3, -1}, TFE_COLMAJOR), TFE_ERR_INVALID, "negative");
  TU_EXPECT_ERR(tfe_zeros_f64(&t, 2, NULL, TFE_COLMAJOR), TFE_ERR_NULL, "dims");
  TU_EXPECT_ERR(tfe_zeros_f64(NULL, 1, (int64_t[]){3}, TFE_COLMAJOR), TFE_ERR_NULL, "out");
  int64_t big[3] = {INT64_C(1) << 30, INT64_C(1) << 30, INT64_C(1) << 30};
  TU_EXPECT_ERR(tfe_zeros_f64(&t, 3, big, TFE_COLMAJOR), TFE_ERR_OVERFLOW, "overflow");
  assert_int_equal(tfe_last_status(), TFE_ERR_OVERFLOW);
}

static void test_alloc_failure(void **s) {
  (void)s;
  tfe_tensor_c128 t = {0};
  for (long k = 0; k < 2; k++) { /* storage header, then the buffer */
    tu_fail_after(k);
    TU_EXPECT_ERR(tfe_zeros_c128(&t, 1, (int64_t[]){5}, TFE_COLMAJOR), TFE_ERR_ALLOC, "allocation");
    assert_int_equal(tu_live_allocs, 0);
    tu_alloc_restore();
  }
  assert_int_equal(tfe_zeros_c128(&t, 1, (int64_t[]){5}, TFE_COLMAJOR), TFE_OK);
  tfe_tensor_release_c128(&t);
}

static void test_dtype_table(void **s) {
  (void)s;
  assert_string_equal(tfe_dtype_name(TFE_DT_C128), "c128");
  assert_int_equal(tfe_dtype_get(TFE_DT_C64)->size, 8);
  assert_int_equal(tfe_dtype_get(TFE_DT_C64)->real, TFE_DT_F32);
  assert_true(tfe_dtype_get(TFE_DT_C64)->is_complex);
  assert_int_equal(tfe_dtype_get(TFE_DT_MAXPLUS_F64)->algebra, TFE_ALGEBRA_MAXPLUS);
  assert_int_equal(tfe_dtype_from_name("minplus_f32"), TFE_DT_MINPLUS_F32);
  assert_int_equal(tfe_dtype_from_name("nope"), TFE_DT_COUNT);
  assert_null(tfe_dtype_get(TFE_DT_COUNT));
}

static void test_semirings(void **s) {
  (void)s;
  tfe_maxplus_f64 z = tfe_sr_zero_maxplus_f64(), a = {2}, b = {3};
  assert_true(isinf(z.v) && z.v < 0); /* -inf, not the most negative finite value */
  assert_true(tfe_sr_add_maxplus_f64(a, b).v == 3);
  assert_true(tfe_sr_mul_maxplus_f64(a, b).v == 5);
  assert_true(tfe_sr_eq_maxplus_f64(tfe_sr_add_maxplus_f64(z, a), a));
  tfe_minplus_f32 mz = tfe_sr_zero_minplus_f32(), ma = {2}, mb = {3};
  assert_true(isinf(mz.v) && mz.v > 0);
  assert_true(tfe_sr_add_minplus_f32(ma, mb).v == 2);
  tfe_maxtimes_f64 ta = {2}, tb = {3};
  assert_true(tfe_sr_mul_maxtimes_f64(ta, tb).v == 6 && tfe_sr_add_maxtimes_f64(ta, tb).v == 3);
  double _Complex c = 1.0 + 2.0 * I;
  assert_true(cimag(tfe_sr_conj_c128(c)) == -2.0);
  /* zeros of a max-plus tensor are -inf */
  tfe_tensor_maxplus_f64 t = {0};
  assert_int_equal(tfe_zeros_maxplus_f64(&t, 1, (int64_t[]){4}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 4; i++) assert_true(isinf(t.v.data[i].v) && t.v.data[i].v < 0);
  tfe_tensor_release_maxplus_f64(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_names), cmocka_unit_test(test_error_message),
      cmocka_unit_test(test_alloc_failure), cmocka_unit_test(test_dtype_table),
      cmocka_unit_test(test_semirings),
  };
  return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
