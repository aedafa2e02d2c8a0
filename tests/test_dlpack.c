/* tests/test_dlpack.c — DLPack import/export: round trips, the deleter contract both ways,
 * strides and offsets, dtypes, devices, read-only flags and bad input. */
#include "testutil.h"

/* ---- a fake producer: a managed tensor over a caller array, counting deleter calls ---------- */
static int deleted_v, deleted_l;
static void count_v(tfe_dl_managed_tensor_versioned *m) { (void)m; deleted_v++; }
static void count_l(tfe_dl_managed_tensor *m) { (void)m; deleted_l++; }

typedef struct producer {
  tfe_dl_managed_tensor_versioned v;
  tfe_dl_managed_tensor l;
  int64_t shape[TFE_MAX_RANK + 2], strides[TFE_MAX_RANK + 2];
} producer;

static void producer_init(producer *p, void *data, int ndim, const int64_t *shape, const int64_t *strides,
                          uint8_t code, uint8_t bits) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < ndim; i++) { p->shape[i] = shape[i]; p->strides[i] = strides ? strides[i] : 0; }
  tfe_dl_tensor t = {data, {TFE_DL_CPU, 0}, ndim, {code, bits, 1}, p->shape, strides ? p->strides : NULL, 0};
  p->v.version.major = 1; p->v.version.minor = 0;
  p->v.deleter = count_v; p->v.dl_tensor = t;
  p->l.deleter = count_l; p->l.dl_tensor = t;
  deleted_v = deleted_l = 0;
}

static double at2(const tfe_dyn *d, int64_t i, int64_t j) {
  int64_t idx[2] = {i, j};
  double x = 0;
  assert_int_equal(tfe_dyn_get(d, idx, &x), TFE_OK);
  return x;
}

/* NULL strides: compact row-major; the storage calls the deleter once, at the last release. */
static void test_import_rowmajor(void **s) {
  (void)s;
  double a[6] = {0, 1, 2, 3, 4, 5};
  producer p;
  producer_init(&p, a, 2, (int64_t[]){2, 3}, NULL, TFE_DL_FLOAT, 64);
  tfe_dyn d = {0}, e = {0};
  bool ro = true;
  assert_int_equal(tfe_dlpack_import_versioned(&p.v, TFE_DT_COUNT, &d, &ro), TFE_OK);
  assert_false(ro);
  assert_int_equal(d.dtype, TFE_DT_F64);
  assert_true(at2(&d, 1, 2) == 5.0 && at2(&d, 0, 1) == 1.0);
  assert_int_equal(tfe_dyn_retain(&d, &e), TFE_OK);
  tfe_dyn_release(&d);
  assert_int_equal(deleted_v, 0);
  int64_t idx[2] = {1, 0};
  double nine = 9;
  assert_int_equal(tfe_dyn_set(&e, idx, &nine), TFE_OK); /* zero-copy: writes reach the producer */
  assert_true(a[3] == 9.0);
  tfe_dyn_release(&e);
  assert_int_equal(deleted_v, 1);
}

/* Explicit, negative strides and a byte offset: the storage covers the elements touched. */
static void test_import_strides_offset(void **s) {
  (void)s;
  double a[12];
  for (int i = 0; i < 12; i++) a[i] = i;
  producer p;
  /* a 2x3 view: rows reversed (stride -6), every other column (stride 2), from element 7 */
  producer_init(&p, a, 2, (int64_t[]){2, 3}, (int64_t[]){-6, 2}, TFE_DL_FLOAT, 64);
  p.l.dl_tensor.byte_offset = 7 * sizeof(double);
  tfe_dyn d = {0};
  assert_int_equal(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_OK);
  assert_true(at2(&d, 0, 0) == 7.0 && at2(&d, 0, 2) == 11.0 && at2(&d, 1, 0) == 1.0 && at2(&d, 1, 2) == 5.0);
  assert_true(d.st->ptr == (void *)&a[1] && d.st->bytes == 11 * sizeof(double));
  tfe_dyn_release(&d);
  assert_int_equal(deleted_l, 1);
  assert_int_equal(deleted_v, 0);
}

/* tenferro -> DLPack -> tenferro: same elements, the storage lives until the deleter runs. */
static void test_export_roundtrip(void **s) {
  (void)s;
  tfe_dyn d = {0}, t = {0}, back = {0};
  assert_int_equal(tfe_dyn_zeros(&d, TFE_DT_F64, 2, (int64_t[]){3, 4}, TFE_COLMAJOR), TFE_OK);
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 4; j++) assert_int_equal(tfe_dyn_set(&d, (int64_t[]){i, j}, &(double){(double)(10 * i + j)}), TFE_OK);
  assert_int_equal(tfe_dyn_permute(&d, (int[]){1, 0}, &t), TFE_OK); /* a transposed view */
  tfe_dl_managed_tensor_versioned *m = NULL;
  assert_int_equal(tfe_dlpack_export_versioned(&t, TFE_DL_FLAG_READ_ONLY, &m), TFE_OK);
  assert_int_equal(atomic_load(&d.st->refcount), 3);
  assert_int_equal(m->version.major, 1);
  assert_true(m->flags == TFE_DL_FLAG_READ_ONLY);
  assert_int_equal(m->dl_tensor.ndim, 2);
  assert_true(m->dl_tensor.shape[0] == 4 && m->dl_tensor.shape[1] == 3);
  assert_true(m->dl_tensor.strides[0] == 3 && m->dl_tensor.strides[1] == 1);
  assert_true(m->dl_tensor.dtype.code == TFE_DL_FLOAT && m->dl_tensor.dtype.bits == 64 && m->dl_tensor.dtype.lanes == 1);
  assert_int_equal(m->dl_tensor.device.device_type, TFE_DL_CPU);
  tfe_dyn_release(&t);
  tfe_dyn_release(&d); /* the managed tensor keeps the storage */
  TU_EXPECT_ERR(tfe_dlpack_import_versioned(m, TFE_DT_COUNT, &back, NULL), TFE_ERR_INVALID, "read-only");
  bool ro = false;
  assert_int_equal(tfe_dlpack_import_versioned(m, TFE_DT_COUNT, &back, &ro), TFE_OK);
  assert_true(ro);
  assert_true(at2(&back, 3, 2) == 23.0 && at2(&back, 1, 2) == 21.0);
  tfe_dyn_release(&back); /* calls m->deleter, which releases the last reference */
}

/* The legacy struct: the consumer calls the deleter itself. */
static void test_export_legacy(void **s) {
  (void)s;
  tfe_dyn d = {0};
  assert_int_equal(tfe_dyn_ones(&d, TFE_DT_I32, 1, (int64_t[]){5}, TFE_ROWMAJOR), TFE_OK);
  tfe_dl_managed_tensor *m = NULL;
  assert_int_equal(tfe_dlpack_export(&d, &m), TFE_OK);
  assert_int_equal(atomic_load(&d.st->refcount), 2);
  assert_true(m->dl_tensor.dtype.code == TFE_DL_INT && m->dl_tensor.dtype.bits == 32);
  assert_int_equal(((int32_t *)m->dl_tensor.data)[4], 1);
  m->deleter(m);
  assert_int_equal(atomic_load(&d.st->refcount), 1);
  tfe_dyn_release(&d);
}

/* Every kind: its DLPack dtype, and a round trip that keeps it (tropical ones through `as`). */
static void test_dtypes(void **s) {
  (void)s;
  for (int k = 0; k < (int)TFE_DT_COUNT; k++) {
    const tfe_dtype_info *info = tfe_dtype_get((tfe_dtype)k);
    tfe_dl_dtype t;
    assert_int_equal(tfe_dlpack_dtype((tfe_dtype)k, &t), TFE_OK);
    assert_int_equal(t.bits, info->size * 8);
    tfe_dyn d = {0}, back = {0};
    assert_int_equal(tfe_dyn_ones(&d, (tfe_dtype)k, 2, (int64_t[]){2, 2}, TFE_ROWMAJOR), TFE_OK);
    tfe_dl_managed_tensor_versioned *m = NULL;
    assert_int_equal(tfe_dlpack_export_versioned(&d, 0, &m), TFE_OK);
    bool trop = info->algebra != TFE_ALGEBRA_STANDARD;
    assert_int_equal(tfe_dlpack_import_versioned(m, trop ? (tfe_dtype)k : TFE_DT_COUNT, &back, NULL), TFE_OK);
    assert_int_equal(back.dtype, k);
    assert_true(back.data == d.data);
    tfe_dyn_release(&back);
    if (trop) { /* the natural kind of a tropical export is its carrier */
      assert_int_equal(t.code, TFE_DL_FLOAT);
      assert_int_equal(tfe_dlpack_export_versioned(&d, 0, &m), TFE_OK);
      assert_int_equal(tfe_dlpack_import_versioned(m, TFE_DT_COUNT, &back, NULL), TFE_OK);
      assert_int_equal(back.dtype, info->size == 4 ? TFE_DT_F32 : TFE_DT_F64);
      tfe_dyn_release(&back);
    }
    tfe_dyn_release(&d);
  }
  tfe_dl_dtype c;
  assert_int_equal(tfe_dlpack_dtype(TFE_DT_C64, &c), TFE_OK);
  assert_true(c.code == TFE_DL_COMPLEX && c.bits == 64);
  TU_EXPECT_ERR(tfe_dlpack_dtype(TFE_DT_CUSTOM, &c), TFE_ERR_DTYPE, "no DLPack code");
}

/* CUDA pointers are accepted into a GPU memory space (never dereferenced here) and go back out. */
static void test_cuda_device(void **s) {
  (void)s;
  producer p;
  producer_init(&p, (void *)(uintptr_t)0x7f0000001000u, 1, (int64_t[]){16}, NULL, TFE_DL_FLOAT, 32);
  p.v.dl_tensor.device.device_type = TFE_DL_CUDA;
  p.v.dl_tensor.device.device_id = 3;
  tfe_dyn d = {0};
  assert_int_equal(tfe_dlpack_import_versioned(&p.v, TFE_DT_COUNT, &d, NULL), TFE_OK);
  assert_int_equal(d.st->space.kind, TFE_MEM_GPU);
  assert_int_equal(d.st->space.device, 3);
  assert_int_equal(d.st->bytes, 64);
  tfe_dl_managed_tensor *m = NULL;
  assert_int_equal(tfe_dlpack_export(&d, &m), TFE_OK);
  assert_int_equal(m->dl_tensor.device.device_type, TFE_DL_CUDA);
  assert_int_equal(m->dl_tensor.device.device_id, 3);
  tfe_dyn_release(&d);
  assert_int_equal(deleted_v, 0); /* the export still holds the storage */
  m->deleter(m);
  assert_int_equal(deleted_v, 1);
}

/* Empty tensors may have NULL data; the deleter still runs. 0-d tensors need no shape. */
static void test_empty_and_scalar(void **s) {
  (void)s;
  producer p;
  producer_init(&p, NULL, 2, (int64_t[]){0, 4}, NULL, TFE_DL_FLOAT, 64);
  tfe_dyn d = {0};
  assert_int_equal(tfe_dlpack_import_versioned(&p.v, TFE_DT_COUNT, &d, NULL), TFE_OK);
  assert_int_equal(tfe_layout_numel(&d.lay), 0);
  tfe_dyn_release(&d);
  assert_int_equal(deleted_v, 1);
  double x = 2.5;
  producer_init(&p, &x, 0, NULL, NULL, TFE_DL_FLOAT, 64);
  p.l.dl_tensor.shape = NULL;
  assert_int_equal(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_OK);
  double y = 0;
  assert_int_equal(tfe_dyn_get(&d, NULL, &y), TFE_OK);
  assert_true(y == 2.5);
  tfe_dyn_release(&d);
  assert_int_equal(deleted_l, 1);
}

/* Bad input: a clear error, and the caller keeps the managed tensor (no deleter call). */
static void test_bad_input(void **s) {
  (void)s;
  double a[4] = {0};
  int64_t big[TFE_MAX_RANK + 1];
  for (int i = 0; i < TFE_MAX_RANK + 1; i++) big[i] = 1;
  producer p;
  tfe_dyn d = {0};
  producer_init(&p, a, TFE_MAX_RANK + 1, big, NULL, TFE_DL_FLOAT, 64);
  TU_EXPECT_ERR(tfe_dlpack_import_versioned(&p.v, TFE_DT_COUNT, &d, NULL), TFE_ERR_RANK, "TFE_MAX_RANK");
  producer_init(&p, a, -1, big, NULL, TFE_DL_FLOAT, 64);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_RANK, "ndim -1");
  producer_init(&p, a, 1, (int64_t[]){4}, NULL, TFE_DL_BFLOAT, 16);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_DTYPE, "code 4, bits 16");
  producer_init(&p, a, 1, (int64_t[]){4}, NULL, 77, 64);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_DTYPE, "code 77");
  producer_init(&p, a, 1, (int64_t[]){2}, NULL, TFE_DL_FLOAT, 64);
  p.l.dl_tensor.dtype.lanes = 2;
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_DTYPE, "lanes 2");
  producer_init(&p, NULL, 1, (int64_t[]){4}, NULL, TFE_DL_FLOAT, 64);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_NULL, "data is NULL for 4 elements");
  producer_init(&p, a, 2, (int64_t[]){2, -2}, NULL, TFE_DL_FLOAT, 64);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_INVALID, "shape[1] is negative");
  producer_init(&p, a, 2, (int64_t[]){2, 2}, NULL, TFE_DL_FLOAT, 64);
  p.l.dl_tensor.shape = NULL;
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_NULL, "shape is NULL");
  producer_init(&p, a, 1, (int64_t[]){4}, NULL, TFE_DL_FLOAT, 64);
  p.v.version.major = 2;
  TU_EXPECT_ERR(tfe_dlpack_import_versioned(&p.v, TFE_DT_COUNT, &d, NULL), TFE_ERR_UNSUPPORTED, "major version 2");
  producer_init(&p, a, 1, (int64_t[]){4}, NULL, TFE_DL_FLOAT, 64);
  p.l.dl_tensor.device.device_type = 4; /* OpenCL */
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_DEVICE, "device type 4");
  producer_init(&p, a, 1, (int64_t[]){3}, NULL, TFE_DL_FLOAT, 64);
  p.l.dl_tensor.byte_offset = 4; /* half a double */
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_INVALID, "not aligned");
  producer_init(&p, a, 1, (int64_t[]){4}, NULL, TFE_DL_FLOAT, 64);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_C128, &d), TFE_ERR_DTYPE, "as c128");
  producer_init(&p, a, 2, (int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40}, NULL, TFE_DL_FLOAT, 64);
  TU_EXPECT_ERR(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &d), TFE_ERR_OVERFLOW, "");
  assert_int_equal(deleted_v + deleted_l, 0);
  TU_EXPECT_ERR(tfe_dlpack_import(NULL, TFE_DT_COUNT, &d), TFE_ERR_NULL, "'m'");
}

static void test_export_refusals(void **s) {
  (void)s;
  tfe_dyn d = {0}, c = {0};
  assert_int_equal(tfe_dyn_ones(&d, TFE_DT_C128, 1, (int64_t[]){3}, TFE_ROWMAJOR), TFE_OK);
  assert_int_equal(tfe_dyn_conj(&d, &c), TFE_OK);
  tfe_dl_managed_tensor *m = NULL;
  tfe_dl_managed_tensor_versioned *mv = NULL;
  TU_EXPECT_ERR(tfe_dlpack_export(&c, &m), TFE_ERR_UNSUPPORTED, "conjugated");
  TU_EXPECT_ERR(tfe_dlpack_export_versioned(&d, TFE_DL_FLAG_IS_COPIED, &mv), TFE_ERR_INVALID, "flags 0x2");
  TU_EXPECT_ERR(tfe_dlpack_export(NULL, &m), TFE_ERR_NULL, "'d'");
  assert_int_equal(atomic_load(&d.st->refcount), 2);
  tfe_dyn_release(&c);
  tfe_dyn_release(&d);
}

/* Allocation failures: nothing leaks, nothing is consumed. */
static void test_alloc_failure(void **s) {
  (void)s;
  tfe_dyn d = {0}, e = {0};
  assert_int_equal(tfe_dyn_ones(&d, TFE_DT_F32, 1, (int64_t[]){4}, TFE_ROWMAJOR), TFE_OK);
  tfe_dl_managed_tensor *m = NULL;
  tu_fail_after(0);
  assert_int_equal(tfe_dlpack_export(&d, &m), TFE_ERR_ALLOC);
  tu_alloc_restore();
  assert_int_equal(atomic_load(&d.st->refcount), 1);
  float a[2] = {1, 2};
  producer p;
  producer_init(&p, a, 1, (int64_t[]){2}, NULL, TFE_DL_FLOAT, 32);
  tu_fail_after(0);
  assert_int_equal(tfe_dlpack_import(&p.l, TFE_DT_COUNT, &e), TFE_ERR_ALLOC);
  tu_alloc_restore();
  assert_int_equal(deleted_l, 0);
  tfe_dyn_release(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_import_rowmajor), cmocka_unit_test(test_import_strides_offset),
      cmocka_unit_test(test_export_roundtrip), cmocka_unit_test(test_export_legacy),
      cmocka_unit_test(test_dtypes), cmocka_unit_test(test_cuda_device),
      cmocka_unit_test(test_empty_and_scalar), cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_export_refusals), cmocka_unit_test(test_alloc_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
