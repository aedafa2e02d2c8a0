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

/* The buffer pool: a freed large buffer comes back to the next request of its size class
 * (not to a much smaller one), the limit bounds what is kept, trim and a zero limit give
 * everything back, small buffers enter too, and tfe_contiguous's results are the same from
 * kept buffers as from fresh ones. */
static void test_pool(void **s) {
  (void)s;
  const size_t MiB = (size_t)1 << 20;
  tfe_allocator a = tfe_get_allocator();
  tfe_pool_set_limit(64 * MiB);
  tfe_pool_trim(); /* small blocks earlier tests gave back */
  assert_int_equal(tfe_pool_limit(), 64 * MiB);
  void *p = a.alloc(a.ctx, 8 * MiB, 64);
  assert_non_null(p);
  assert_false(tfe__ts.pool_recycled);
  assert_int_equal((uintptr_t)p % (2 * MiB), 0);
  memset(p, 1, 8 * MiB);
  a.free(a.ctx, p);
  assert_int_equal(tfe_pool_kept_bytes(), 8 * MiB);
  void *small = a.alloc(a.ctx, 5 * MiB, 64); /* 8 MiB is more than 1/8 above 5 MiB: not given */
  assert_false(tfe__ts.pool_recycled);
  assert_ptr_not_equal(small, p);
  void *q = a.alloc(a.ctx, 8 * MiB - 100, 64); /* rounds to the kept size */
  assert_true(tfe__ts.pool_recycled);
  assert_ptr_equal(q, p);
  assert_int_equal(tfe_pool_kept_bytes(), 0);
  a.free(a.ctx, q);
  a.free(a.ctx, small); /* 5 MiB, 2 MiB aligned: its class is 6 MiB */
  assert_int_equal(tfe_pool_kept_bytes(), 14 * MiB);
  void *big = a.alloc(a.ctx, 60 * MiB, 64); /* keeping it drops the older two */
  a.free(a.ctx, big);
  assert_int_equal(tfe_pool_kept_bytes(), 60 * MiB);
  void *huge = a.alloc(a.ctx, 80 * MiB, 64); /* over the limit: not kept */
  a.free(a.ctx, huge);
  assert_int_equal(tfe_pool_kept_bytes(), 60 * MiB);
  tfe_pool_trim();
  assert_int_equal(tfe_pool_kept_bytes(), 0);
  assert_int_equal(tfe_pool_limit(), 64 * MiB);
  void *tiny = a.alloc(a.ctx, 4096, 64); /* small buffers are pooled too, in size classes */
  a.free(a.ctx, tiny);
  assert_int_equal(tfe_pool_kept_bytes(), 4096);
  assert_ptr_equal(a.alloc(a.ctx, 4000, 64), tiny);
  a.free(a.ctx, tiny);
  tfe_pool_trim();
  /* many buffers: all kept under the limit (tests/test_runtime_pool.c covers the rest) */
  void *many[36];
  for (int i = 0; i < 36; i++) many[i] = a.alloc(a.ctx, 4 * MiB, 64);
  tfe_pool_set_limit((size_t)1 << 30);
  for (int i = 0; i < 36; i++) a.free(a.ctx, many[i]);
  assert_int_equal(tfe_pool_kept_bytes(), (size_t)36 * 4 * MiB);
  /* the same permutation from fresh and from kept buffers, 1 and 2 threads */
  tfe_tensor_f64 src = {0}, r1 = {0}, r2 = {0};
  int64_t dims[3] = {64, 128, 160}; /* 10 MiB */
  assert_int_equal(tfe_empty_f64(&src, 3, dims, TFE_COLMAJOR), TFE_OK);
  for (int64_t i = 0; i < 64 * 128 * 160; i++) src.v.data[i] = (double)i;
  tfe_view_f64 pv;
  assert_int_equal(tfe_permute_f64(&src.v, (int[]){2, 0, 1}, &pv), TFE_OK);
  tfe_pool_set_limit(0);
  assert_int_equal(tfe_pool_kept_bytes(), 0);
  assert_int_equal(tfe_contiguous_f64(&pv, TFE_COLMAJOR, &r1), TFE_OK);
  tfe_pool_set_limit(64 * MiB);
  for (int nt = 1; nt <= 2; nt++) {
    tfe_set_num_threads(nt);
    for (int k = 0; k < 3; k++) {
      assert_int_equal(tfe_contiguous_f64(&pv, TFE_COLMAJOR, &r2), TFE_OK);
      assert_memory_equal(r1.v.data, r2.v.data, sizeof(double) * 64 * 128 * 160);
      memset(r2.v.data, 0xff, sizeof(double) * 64 * 128 * 160); /* stale bytes for the next one */
      tfe_tensor_release_f64(&r2);
      assert_true(tfe_pool_kept_bytes() >= 10 * MiB && tfe_pool_kept_bytes() < 11 * MiB); /* + small blocks */
    }
  }
  tfe_set_num_threads(0);
  tfe_tensor_release_f64(&r1);
  tfe_tensor_release_f64(&src);
  /* two threads taking and giving at once */
  TFE_OMP(parallel num_threads(2))
  for (int i = 0; i < 200; i++) {
    void *b = a.alloc(a.ctx, (size_t)(4 + i % 3) * MiB, 64);
    if (b) { ((volatile char *)b)[0] = 1; a.free(a.ctx, b); }
  }
  assert_true(tfe_pool_kept_bytes() <= 64 * MiB);
  tfe_pool_set_limit(0);
  assert_int_equal(tfe_pool_kept_bytes(), 0);
}

/* TFE_POOL_BYTES, read at first use: a number sets the limit; anything else (not a
 * number, negative, out of range, empty) leaves the default. */
static void test_pool_env(void **s) {
  (void)s;
  size_t before = tfe_pool_limit();
  const char *bad[] = {"abc", "-5", "", "99999999999999999999", "x12"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("TFE_POOL_BYTES", bad[i], 1);
    tfe__st.pool.max = -1;
    assert_int_equal(tfe_pool_limit(), (size_t)TFE__POOL_DEFAULT);
  }
  setenv("TFE_POOL_BYTES", "12345", 1);
  tfe__st.pool.max = -1;
  assert_int_equal(tfe_pool_limit(), 12345);
  setenv("TFE_POOL_BYTES", "0", 1);
  tfe__st.pool.max = -1;
  assert_int_equal(tfe_pool_limit(), 0);
  tfe_pool_set_limit(before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_names), cmocka_unit_test(test_error_message),
      cmocka_unit_test(test_alloc_failure), cmocka_unit_test(test_dtype_table),
      cmocka_unit_test(test_semirings), cmocka_unit_test(test_pool), cmocka_unit_test(test_pool_env),
  };
  return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
