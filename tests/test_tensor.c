/* Tensor room: constructors (row/column-major), user buffers wrapped or copied, get/set, the
 * dtype-tagged layer, reference counting, allocation failure at every site, bad inputs. */
#include "test_views_common.h"

/* Every constructor honours the order flag: element (i, j, k) lands where dense strides say. */
static void test_constructors_order(void **st) {
  (void)st;
  int64_t dims[3] = {2, 3, 4};
  for (int o = 0; o < 2; o++) {
    tfe_order order = o ? TFE_ROWMAJOR : TFE_COLMAJOR;
    int64_t want[3] = {o ? 12 : 1, o ? 4 : 2, o ? 1 : 6};
    tfe_tensor_i64 e = {0}, z = {0}, n = {0}, f = {0}, c = {0};
    assert_int_equal(tfe_empty_i64(&e, 3, dims, order), TFE_OK);
    assert_int_equal(tfe_zeros_i64(&z, 3, dims, order), TFE_OK);
    assert_int_equal(tfe_ones_i64(&n, 3, dims, order), TFE_OK);
    assert_int_equal(tfe_full_i64(&f, 3, dims, order, 7), TFE_OK);
    int64_t buf[24];
    for (int i = 0; i < 24; i++) buf[i] = i;
    assert_int_equal(tfe_from_buffer_i64(&c, buf, 24, 3, dims, NULL, 0, order), TFE_OK);
    tfe_view_i64 w;
    assert_int_equal(tfe_wrap_i64(&w, buf, 24, 3, dims, NULL, 0, order), TFE_OK);
    for (int k = 0; k < 3; k++) {
      assert_int_equal(e.v.lay.strides[k], want[k]);
      assert_int_equal(z.v.lay.strides[k], want[k]);
      assert_int_equal(n.v.lay.strides[k], want[k]);
      assert_int_equal(f.v.lay.strides[k], want[k]);
      assert_int_equal(c.v.lay.strides[k], want[k]);
      assert_int_equal(w.lay.strides[k], want[k]);
    }
    for (int i = 0; i < 24; i++) assert_true(z.v.data[i] == 0 && n.v.data[i] == 1 && f.v.data[i] == 7 && c.v.data[i] == i);
    int64_t x = -1;
    assert_int_equal(tfe_get_i64(&w, (int64_t[]){1, 2, 3}, &x), TFE_OK);
    assert_int_equal(x, o ? 23 : 1 + 2 * 2 + 3 * 6);
    tfe_tensor_release_i64(&e); tfe_tensor_release_i64(&z); tfe_tensor_release_i64(&n);
    tfe_tensor_release_i64(&f); tfe_tensor_release_i64(&c);
  }
}

/* Copying from a strided buffer equals element-wise reads through the wrapped view (random
 * layouts, negative and zero strides), in both orders. */
static void test_from_buffer_random(void **st) {
  (void)st;
  tu_rng r = {99};
  for (int t = 0; t < tu_cases(2000); t++) {
    tfe_layout L;
    int64_t len;
    tv_rand_layout(&r, &L, &len, 6);
    double *buf = malloc((size_t)len * sizeof *buf);
    for (int64_t a = 0; a < len; a++) buf[a] = (double)a;
    tfe_order order = tu_int(&r, 0, 1) ? TFE_ROWMAJOR : TFE_COLMAJOR;
    tfe_tensor_f64 c = {0};
    assert_int_equal(tfe_from_buffer_f64(&c, buf, len, L.rank, L.dims, L.strides, L.offset, order), TFE_OK);
    assert_true(tfe_layout_is_dense(&c.v.lay, order));
    int64_t idx[TFE_MAX_RANK] = {0}, n = tfe_layout_numel(&L);
    for (int64_t e = 0; e < n; e++) {
      double x = -1;
      assert_int_equal(tfe_get_f64(&c.v, idx, &x), TFE_OK);
      assert_true(x == buf[tv_addr(&L, idx)]);
      tv_odometer(L.rank, L.dims, idx);
    }
    tfe_tensor_release_f64(&c);
    free(buf);
  }
}

static void test_wrap_tensor(void **st) {
  (void)st;
  float buf[6] = {1, 2, 3, 4, 5, 6};
  tfe_tensor_f32 t = {0}, u = {0};
  assert_int_equal(tfe_tensor_wrap_f32(&t, buf, 6, 2, (int64_t[]){2, 3}, NULL, 0, TFE_ROWMAJOR), TFE_OK);
  assert_int_equal(tfe_tensor_retain_f32(&t, &u), TFE_OK);
  assert_int_equal(atomic_load(&t.st->refcount), 2);
  assert_int_equal(tfe_set_f32(&u.v, (int64_t[]){1, 0}, 9.0f), TFE_OK);
  assert_true(buf[3] == 9.0f); /* no copy */
  tfe_tensor_release_f32(&u);
  tfe_tensor_release_f32(&t); /* never frees buf */
  assert_true(buf[5] == 6.0f);
}

static void test_constructor_errors(void **st) {
  (void)st;
  double buf[8] = {0};
  tfe_view_f64 v, keep;
  memset(&v, 0x3C, sizeof v);
  keep = v;
  TU_EXPECT_ERR(tfe_wrap_f64(NULL, buf, 8, 1, (int64_t[]){8}, NULL, 0, TFE_COLMAJOR), TFE_ERR_NULL, "'out'");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, NULL, 8, 1, (int64_t[]){8}, NULL, 0, TFE_COLMAJOR), TFE_ERR_NULL, "buffer is NULL");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, -1, 1, (int64_t[]){8}, NULL, 0, TFE_COLMAJOR), TFE_ERR_INVALID, "buflen is negative");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 1, (int64_t[]){9}, NULL, 0, TFE_COLMAJOR), TFE_ERR_BOUNDS,
                "the view reaches elements 0..8, outside the buffer [0, 8)");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 1, (int64_t[]){4}, (int64_t[]){-1}, 2, TFE_COLMAJOR), TFE_ERR_BOUNDS,
                "elements -1..2");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 1, (int64_t[]){-4}, NULL, 0, TFE_COLMAJOR), TFE_ERR_INVALID, "dim 0 is negative");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, TFE_MAX_RANK + 1, (int64_t[]){1}, NULL, 0, TFE_COLMAJOR), TFE_ERR_RANK, "rank 65");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 1, NULL, NULL, 0, TFE_COLMAJOR), TFE_ERR_NULL, "'dims'");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 1, (int64_t[]){4}, NULL, 0, (tfe_order)3), TFE_ERR_INVALID, "order 3");
  int64_t big[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 2};
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 3, big, NULL, 0, TFE_COLMAJOR), TFE_ERR_OVERFLOW, "overflows");
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, 8, 1, (int64_t[]){3}, (int64_t[]){INT64_MAX}, 0, TFE_COLMAJOR), TFE_ERR_OVERFLOW,
                "addresses overflow");
  assert_memory_equal(&v, &keep, sizeof v);
  /* an empty view of any buffer is fine */
  assert_int_equal(tfe_wrap_f64(&v, NULL, 0, 2, (int64_t[]){0, 5}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  tfe_tensor_f64 t = {0}, tkeep;
  memset(&t, 0x3C, sizeof t);
  tkeep = t;
  TU_EXPECT_ERR(tfe_from_buffer_f64(&t, buf, 8, 2, (int64_t[]){3, 3}, NULL, 0, TFE_COLMAJOR), TFE_ERR_BOUNDS, "outside the buffer");
  TU_EXPECT_ERR(tfe_tensor_wrap_f64(&t, buf, 8, 2, (int64_t[]){3, 3}, NULL, 0, TFE_COLMAJOR), TFE_ERR_BOUNDS, "outside");
  TU_EXPECT_ERR(tfe_full_f64(&t, 1, (int64_t[]){-1}, TFE_COLMAJOR, 1.0), TFE_ERR_INVALID, "negative");
  assert_memory_equal(&t, &tkeep, sizeof t);
  /* get/set on a view without data */
  tfe_view_f64 nul = {0};
  nul.lay.rank = 1; nul.lay.dims[0] = 2; nul.lay.strides[0] = 1;
  double x = 0;
  TU_EXPECT_ERR(tfe_get_f64(&nul, (int64_t[]){0}, &x), TFE_ERR_NULL, "data pointer is NULL");
  TU_EXPECT_ERR(tfe_set_f64(&nul, (int64_t[]){0}, 1.0), TFE_ERR_NULL, "data pointer is NULL");
}

/* Fail each allocation in turn until the call succeeds: every failure is TFE_ERR_ALLOC, leaves
 * the output untouched and leaks nothing. */
#define ALLOC_SWEEP(setup, call, cleanup)                                       \
  do {                                                                          \
    for (long k_ = 0;; k_++) {                                                  \
      setup;                                                                    \
      tu_fail_after(k_);                                                        \
      tfe_status s_ = (call);                                                   \
      tu_fail_countdown = -1;                                                   \
      if (s_ == TFE_OK) { cleanup; tu_alloc_restore(); assert_int_equal(tu_live_allocs, 0); break; } \
      assert_int_equal(s_, TFE_ERR_ALLOC);                                      \
      assert_non_null(strstr(tfe_last_error(), "allocation of"));               \
      tu_alloc_restore();                                                       \
      assert_int_equal(tu_live_allocs, 0);                                      \
      assert_true(k_ < 10);                                                     \
    }                                                                           \
  } while (0)

static void test_alloc_failures(void **st) {
  (void)st;
  double buf[12] = {0};
  tfe_tensor_f64 t = {0};
  tfe_dyn d = {0};
  int64_t dims[2] = {3, 4};
  ALLOC_SWEEP(memset(&t, 0, sizeof t), tfe_empty_f64(&t, 2, dims, TFE_ROWMAJOR), tfe_tensor_release_f64(&t));
  ALLOC_SWEEP(memset(&t, 0, sizeof t), tfe_ones_f64(&t, 2, dims, TFE_COLMAJOR), tfe_tensor_release_f64(&t));
  ALLOC_SWEEP(memset(&t, 0, sizeof t), tfe_tensor_wrap_f64(&t, buf, 12, 2, dims, NULL, 0, TFE_COLMAJOR),
              tfe_tensor_release_f64(&t));
  ALLOC_SWEEP(memset(&t, 0, sizeof t), tfe_from_buffer_f64(&t, buf, 12, 2, dims, (int64_t[]){4, 1}, 0, TFE_COLMAJOR),
              tfe_tensor_release_f64(&t));
  ALLOC_SWEEP(memset(&d, 0, sizeof d), tfe_dyn_zeros(&d, TFE_DT_C64, 2, dims, TFE_COLMAJOR), tfe_dyn_release(&d));
  ALLOC_SWEEP(memset(&d, 0, sizeof d), tfe_dyn_empty(&d, TFE_DT_MAXPLUS_F32, 2, dims, TFE_ROWMAJOR), tfe_dyn_release(&d));
  /* view ops and splits of tensors allocate nothing: they cannot fail for lack of memory */
  assert_int_equal(tfe_zeros_f64(&t, 2, dims, TFE_COLMAJOR), TFE_OK);
  tfe_tensor_f64 parts[2];
  tu_fail_after(0);
  assert_int_equal(tfe_tensor_split_f64(&t, 1, 2, (int64_t[]){1, 3}, parts), TFE_OK);
  assert_int_equal(tfe_tensor_permute_f64(&t, (int[]){1, 0}, &t), TFE_OK);
  tu_alloc_restore();
  tfe_tensor_release_f64(&parts[0]);
  tfe_tensor_release_f64(&parts[1]);
  tfe_tensor_release_f64(&t);
}

/* ---- the dtype-tagged layer ------------------------------------------------------------------ */
static void test_dyn(void **st) {
  (void)st;
  int64_t dims[3] = {2, 3, 4};
  /* every shipped dtype: zeros are the semiring zero, set/get round-trip, view ops */
  for (int dt = 0; dt < (int)TFE_DT_COUNT; dt++) {
    tfe_dyn z = {0}, o = {0}, s = {0};
    assert_int_equal(tfe_dyn_zeros(&z, (tfe_dtype)dt, 3, dims, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_dyn_ones(&o, (tfe_dtype)dt, 3, dims, TFE_ROWMAJOR), TFE_OK);
    assert_int_equal(z.dtype, dt);
    size_t es = tfe_dtype_get((tfe_dtype)dt)->size;
    unsigned char one[16], got[16];
    assert_int_equal(tfe_dyn_get(&o, (int64_t[]){1, 2, 3}, one), TFE_OK);
    assert_int_equal(tfe_dyn_set(&z, (int64_t[]){1, 2, 3}, one), TFE_OK);
    /* the element moved through a permute + select + slice chain */
    assert_int_equal(tfe_dyn_permute(&z, (int[]){2, 0, 1}, &s), TFE_OK); /* (3, 1, 2) */
    assert_int_equal(tfe_dyn_select(&s, 0, 3, &s), TFE_OK);
    assert_int_equal(tfe_dyn_slice_axis(&s, 1, 2, -1, -1, &s), TFE_OK);   /* reversed: index 0 is 2 */
    assert_int_equal(tfe_dyn_get(&s, (int64_t[]){1, 0}, got), TFE_OK);
    assert_memory_equal(got, one, es);
    assert_int_equal(atomic_load(&z.st->refcount), 2);
    tfe_dyn_release(&s);
    tfe_dyn_release(&o);
    tfe_dyn_release(&z);
  }
  /* conversions */
  tfe_tensor_c128 t = {0};
  assert_int_equal(tfe_zeros_c128(&t, 3, dims, TFE_COLMAJOR), TFE_OK);
  tfe_dyn d = {0}, e = {0};
  assert_int_equal(tfe_tensor_to_dyn_c128(&t, &d), TFE_OK);
  assert_int_equal(d.dtype, TFE_DT_C128);
  tfe_tensor_c128 back = {0};
  assert_int_equal(tfe_dyn_as_tensor_c128(&d, &back), TFE_OK);
  assert_int_equal(atomic_load(&t.st->refcount), 3);
  tfe_view_c64 wrong, wkeep;
  memset(&wrong, 0x11, sizeof wrong);
  wkeep = wrong;
  TU_EXPECT_ERR(tfe_dyn_as_view_c64(&d, &wrong), TFE_ERR_DTYPE, "tfe_dyn_as_view_c64: the handle holds c128 elements, not c64");
  tfe_tensor_f32 wt = {0};
  TU_EXPECT_ERR(tfe_dyn_as_tensor_f32(&d, &wt), TFE_ERR_DTYPE, "not f32");
  assert_memory_equal(&wrong, &wkeep, sizeof wrong);
  /* lazy conj through the dyn layer */
  assert_int_equal(tfe_set_c128(&t.v, (int64_t[]){0, 0, 0}, 1.0 + 2.0 * I), TFE_OK);
  assert_int_equal(tfe_dyn_conj(&d, &e), TFE_OK);
  double _Complex c = 0;
  assert_int_equal(tfe_dyn_get(&e, (int64_t[]){0, 0, 0}, &c), TFE_OK);
  assert_true(cimag(c) == -2.0);
  tfe_dyn_release(&e);
  /* split, broadcast, diagonal, squeeze/unsqueeze, reshape */
  tfe_dyn parts[2];
  assert_int_equal(tfe_dyn_split(&d, 2, 2, (int64_t[]){1, 3}, parts), TFE_OK);
  assert_int_equal(parts[1].lay.offset, 6);
  tfe_dyn_release(&parts[0]);
  tfe_dyn_release(&parts[1]);
  assert_int_equal(tfe_dyn_reshape(&d, 2, (int64_t[]){6, 4}, TFE_COLMAJOR, &e), TFE_OK);
  assert_int_equal(tfe_dyn_unsqueeze(&e, 0, &e), TFE_OK);
  assert_int_equal(tfe_dyn_squeeze(&e, 0, &e), TFE_OK);
  assert_int_equal(tfe_dyn_diagonal(&e, 0, 1, &e) == TFE_ERR_SHAPE, 1);
  assert_int_equal(tfe_dyn_broadcast(&e, 3, (int64_t[]){2, 6, 4}, &e), TFE_OK);
  TU_EXPECT_ERR(tfe_dyn_check_writable(&e), TFE_ERR_OVERLAP, "stride 0");
  int map[3] = {0, 1, 1};
  TU_EXPECT_ERR(tfe_dyn_diagonal_map(&e, map, 2, &e), TFE_ERR_SHAPE, "merged");
  tfe_dyn_release(&e);
  /* non-owning handle from a view */
  tfe_dyn vd = {0};
  assert_int_equal(tfe_view_to_dyn_c128(&t.v, &vd), TFE_OK);
  assert_null(vd.st);
  assert_int_equal(tfe_dyn_slice(&vd, (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1}, NULL, &vd), TFE_OK);
  tfe_dyn_release(&vd); /* borrowed: no effect on the storage */
  tfe_dyn_release(&d);
  tfe_tensor_release_c128(&back);
  assert_int_equal(atomic_load(&t.st->refcount), 1);
  tfe_tensor_release_c128(&t);
  /* errors */
  tfe_dyn x = {0};
  TU_EXPECT_ERR(tfe_dyn_zeros(&x, (tfe_dtype)77, 1, dims, TFE_COLMAJOR), TFE_ERR_DTYPE, "unknown dtype 77");
  TU_EXPECT_ERR(tfe_dyn_zeros(&x, TFE_DT_CUSTOM, 1, dims, TFE_COLMAJOR), TFE_ERR_DTYPE, "user-kind");
  TU_EXPECT_ERR(tfe_dyn_zeros(NULL, TFE_DT_F64, 1, dims, TFE_COLMAJOR), TFE_ERR_NULL, "'out'");
  TU_EXPECT_ERR(tfe_dyn_zeros(&x, TFE_DT_F64, 1, (int64_t[]){-3}, TFE_COLMAJOR), TFE_ERR_INVALID, "negative");
  TU_EXPECT_ERR(tfe_dyn_permute(NULL, (int[]){0}, &x), TFE_ERR_NULL, "'in'");
  TU_EXPECT_ERR(tfe_dyn_get(NULL, (int64_t[]){0}, &c), TFE_ERR_NULL, "'d'");
  assert_null(x.st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_constructors_order), cmocka_unit_test(test_from_buffer_random),
      cmocka_unit_test(test_wrap_tensor),        cmocka_unit_test(test_constructor_errors),
      cmocka_unit_test(test_alloc_failures),     cmocka_unit_test(test_dyn),
  };
  return cmocka_run_group_tests_name("tensor", tests, NULL, NULL);
}
