/* tests/hdf5/test_hdf5.c — tenferro/io/hdf5.h (make test-hdf5; links libhdf5).
 *   test_hdf5              the cmocka suite (round trips, paths, bad files)
 *   test_hdf5 write FILE   writes FILE for tests/hdf5/crosscheck.py (h5py) to check
 *   test_hdf5 read FILE    reads the file crosscheck.py wrote to the spec and checks its values */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "testutil.h"
#include <tenferro/io/hdf5.h>
#include <stdio.h>

static char dir[256];
/* A call that must succeed; the failure shows tenferro's message. */
#define OK(x) do { tfe_status s_ = (x); if (s_ != TFE_OK) fail_msg("%s: %s", #x, tfe_last_error()); } while (0)

/* Element k of a test tensor of kind dt, written as that kind's bytes (value k + 0.5, complex
 * part -k; integers k). */
static void elem(tfe_dtype dt, int64_t k, unsigned char *out) {
  const tfe_dtype_info *i = tfe_dtype_get(dt);
  bool flt = i->is_float || i->algebra != TFE_ALGEBRA_STANDARD;
  size_t part = i->is_complex ? i->size / 2 : i->size;
  for (int c = 0; c < (i->is_complex ? 2 : 1); c++) {
    double v = c ? (double)(-k) : (double)k + (flt ? 0.5 : 0); /* -k: no negative zero */
    if (flt && part == 4) { float f = (float)v; memcpy(out + c * part, &f, 4); }
    else if (flt) memcpy(out + c * part, &v, 8);
    else if (part == 4) { int32_t x = (int32_t)k; memcpy(out, &x, 4); }
    else { int64_t x = k; memcpy(out, &x, 8); }
  }
}

/* A dims[0] x dims[1] x dims[2] tensor whose element (a, b, c) is elem(a*100 + b*10 + c). */
static void make(tfe_dtype dt, tfe_order order, const int64_t *dims, tfe_dyn *d) {
  assert_int_equal(tfe_dyn_empty(d, dt, 3, dims, order), TFE_OK);
  unsigned char e[16];
  for (int64_t a = 0; a < dims[0]; a++)
    for (int64_t b = 0; b < dims[1]; b++)
      for (int64_t c = 0; c < dims[2]; c++) {
        elem(dt, a * 100 + b * 10 + c, e);
        assert_int_equal(tfe_dyn_set(d, (int64_t[]){a, b, c}, e), TFE_OK);
      }
}
static void expect(const tfe_dyn *d, tfe_dtype dt, const int64_t *dims) {
  assert_int_equal(d->dtype, dt);
  assert_int_equal(d->lay.rank, 3);
  unsigned char e[16], g[16];
  size_t sz = tfe_dtype_get(dt)->size;
  for (int i = 0; i < 3; i++) assert_int_equal(d->lay.dims[i], dims[i]);
  for (int64_t a = 0; a < dims[0]; a++)
    for (int64_t b = 0; b < dims[1]; b++)
      for (int64_t c = 0; c < dims[2]; c++) {
        elem(dt, a * 100 + b * 10 + c, e);
        assert_int_equal(tfe_dyn_get(d, (int64_t[]){a, b, c}, g), TFE_OK);
        assert_memory_equal(e, g, sz);
      }
}
static const char *file(const char *name) {
  static char buf[512];
  snprintf(buf, sizeof buf, "%s/%s", dir, name);
  return buf;
}

/* Every kind in both orders: the same logical tensor and order come back. */
static void test_roundtrip_all(void **s) {
  (void)s;
  const int64_t dims[3] = {2, 3, 4};
  char f[512];
  snprintf(f, sizeof f, "%s", file("all.h5"));
  remove(f);
  for (int k = 0; k < (int)TFE_DT_COUNT; k++)
    for (int o = 0; o < 2; o++) {
      tfe_dyn d, r;
      char path[64];
      snprintf(path, sizeof path, "/%s/%s", tfe_dtype_name((tfe_dtype)k), o ? "row" : "col");
      make((tfe_dtype)k, (tfe_order)o, dims, &d);
      OK(tfe_hdf5_write(f, path, &d, 0));
      OK(tfe_hdf5_read(f, path, &r));
      expect(&r, (tfe_dtype)k, dims);
      assert_true(tfe_layout_is_dense(&r.lay, (tfe_order)o));
      tfe_dyn_release(&r);
      tfe_dyn_release(&d);
    }
}

/* Strided views (a permutation) are written by their logical shape; groups nest; overwrite. */
static void test_paths_and_views(void **s) {
  (void)s;
  const char *f = file("paths.h5");
  remove(f);
  const int64_t dims[3] = {4, 3, 2}, pdims[3] = {2, 3, 4};
  tfe_dyn d, p, r;
  make(TFE_DT_F64, TFE_ROWMAJOR, pdims, &d);
  assert_int_equal(tfe_dyn_permute(&d, (int[]){2, 1, 0}, &p), TFE_OK); /* element (c,b,a) = d(a,b,c) */
  OK(tfe_hdf5_write(f, "/a/b/c/t", &p, 0));
  OK(tfe_hdf5_write(f, "/a/t2", &d, 0));
  OK(tfe_hdf5_write(f, "top", &d, 0));
  OK(tfe_hdf5_read(f, "/a/b/c/t", &r));
  assert_int_equal(r.lay.dims[0], dims[0]);
  double x = 0;
  assert_int_equal(tfe_dyn_get(&r, (int64_t[]){3, 2, 1}, &x), TFE_OK);
  assert_true(x == 123.5);
  tfe_dyn_release(&r);
  TU_EXPECT_ERR(tfe_hdf5_write(f, "/a/t2", &d, 0), TFE_ERR_IO, "TFE_HDF5_OVERWRITE");
  OK(tfe_hdf5_write(f, "/a/t2", &p, TFE_HDF5_OVERWRITE));
  OK(tfe_hdf5_read(f, "/a/t2", &r));
  assert_int_equal(r.lay.dims[0], 4);
  tfe_dyn_release(&r);
  OK(tfe_hdf5_read(f, "top", &r));
  expect(&r, TFE_DT_F64, pdims);
  tfe_dyn_release(&r);
  TU_EXPECT_ERR(tfe_hdf5_write(f, "/a/t2/under", &d, 0), TFE_ERR_IO, "cannot create dataset");
  tfe_dyn_release(&p);
  tfe_dyn_release(&d);
}

/* Rank 0 (HDF5 scalar dataspace) and a zero-size dimension. */
static void test_scalar_and_empty(void **s) {
  (void)s;
  const char *f = file("small.h5");
  remove(f);
  tfe_dyn d, r;
  assert_int_equal(tfe_dyn_ones(&d, TFE_DT_C64, 0, NULL, TFE_ROWMAJOR), TFE_OK);
  OK(tfe_hdf5_write(f, "scalar", &d, 0));
  tfe_dyn_release(&d);
  OK(tfe_hdf5_read(f, "scalar", &r));
  assert_int_equal(r.lay.rank, 0);
  tfe_c64 z = 0;
  assert_int_equal(tfe_dyn_get(&r, NULL, &z), TFE_OK);
  assert_true(z == 1.0f);
  tfe_dyn_release(&r);
  assert_int_equal(tfe_dyn_zeros(&d, TFE_DT_I64, 2, (int64_t[]){0, 5}, TFE_COLMAJOR), TFE_OK);
  OK(tfe_hdf5_write(f, "empty", &d, 0));
  tfe_dyn_release(&d);
  OK(tfe_hdf5_read(f, "empty", &r));
  assert_true(r.lay.rank == 2 && r.lay.dims[0] == 0 && r.lay.dims[1] == 5);
  tfe_dyn_release(&r);
}

/* A hand-made dataset: type, attributes as given (NULL: absent). */
static void raw(const char *f, const char *path, hid_t type, const void *data, const char *dtype, int version,
                const char *order) {
  hid_t h = access(f, F_OK) == 0 ? H5Fopen(f, H5F_ACC_RDWR, H5P_DEFAULT) : H5Fcreate(f, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t n = 2;
  hid_t sp = H5Screate_simple(1, &n, NULL), ds = H5Dcreate2(h, path, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(ds >= 0);
  assert_true(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  if (dtype) assert_true(tfe__h5_attr_str(ds, "dtype", dtype) >= 0);
  if (version) assert_true(tfe__h5_attr_int(ds, "format_version", version) >= 0);
  if (order) assert_true(tfe__h5_attr_str(ds, "memory_order", order) >= 0);
  H5Dclose(ds);
  H5Sclose(sp);
  H5Fclose(h);
}

static void test_bad_files(void **s) {
  (void)s;
  const char *f = file("bad.h5");
  char txt[512];
  snprintf(txt, sizeof txt, "%s", file("not_hdf5.txt"));
  remove(f);
  FILE *fp = fopen(txt, "w");
  assert_non_null(fp);
  fputs("plain text, not HDF5\n", fp);
  fclose(fp);
  tfe_dyn r;
  TU_EXPECT_ERR(tfe_hdf5_read(file("missing.h5"), "x", &r), TFE_ERR_IO, "cannot read");
  TU_EXPECT_ERR(tfe_hdf5_read(txt, "x", &r), TFE_ERR_IO, "is not an HDF5 file");
  double v[2] = {1, 2};
  uint8_t u[2] = {1, 2};
  raw(f, "plain", H5T_NATIVE_DOUBLE, v, NULL, 0, NULL); /* another writer: no attributes */
  OK(tfe_hdf5_read(f, "plain", &r));
  assert_int_equal(r.dtype, TFE_DT_F64);
  tfe_dyn_release(&r);
  raw(f, "maxplus", H5T_NATIVE_DOUBLE, v, "maxplus_f64", 1, "row_major");
  OK(tfe_hdf5_read(f, "maxplus", &r));
  assert_int_equal(r.dtype, TFE_DT_MAXPLUS_F64);
  tfe_dyn_release(&r);
  raw(f, "mismatch", H5T_NATIVE_DOUBLE, v, "i32", 1, NULL);
  TU_EXPECT_ERR(tfe_hdf5_read(f, "mismatch", &r), TFE_ERR_DTYPE, "does not match");
  raw(f, "unknown", H5T_NATIVE_DOUBLE, v, "f16", 1, NULL);
  TU_EXPECT_ERR(tfe_hdf5_read(f, "unknown", &r), TFE_ERR_DTYPE, "names no tenferro kind");
  raw(f, "future", H5T_NATIVE_DOUBLE, v, "f64", 2, NULL);
  TU_EXPECT_ERR(tfe_hdf5_read(f, "future", &r), TFE_ERR_UNSUPPORTED, "format_version 2");
  raw(f, "order", H5T_NATIVE_DOUBLE, v, "f64", 1, "diagonal");
  TU_EXPECT_ERR(tfe_hdf5_read(f, "order", &r), TFE_ERR_PARSE, "neither row_major");
  raw(f, "bytes", H5T_NATIVE_UINT8, u, NULL, 0, NULL);
  TU_EXPECT_ERR(tfe_hdf5_read(f, "bytes", &r), TFE_ERR_DTYPE, "no tenferro kind");
  TU_EXPECT_ERR(tfe_hdf5_read(f, "nothing/here", &r), TFE_ERR_IO, "has no object");
  tfe_dyn d;
  assert_int_equal(tfe_dyn_ones(&d, TFE_DT_F32, 1, (int64_t[]){3}, TFE_ROWMAJOR), TFE_OK);
  OK(tfe_hdf5_write(f, "g/t", &d, 0));
  TU_EXPECT_ERR(tfe_hdf5_read(f, "g", &r), TFE_ERR_PARSE, "not a dataset");
  TU_EXPECT_ERR(tfe_hdf5_write(txt, "t", &d, 0), TFE_ERR_IO, "cannot open or create");
  TU_EXPECT_ERR(tfe_hdf5_write(f, "t", &d, 8), TFE_ERR_INVALID, "unknown flags");
  tfe_dyn_release(&d);
  remove(txt);
}

/* ---- the h5py cross-check (tests/hdf5/crosscheck.py) ------------------------------------------ */
static int write_set(const char *f) {
  const int64_t dims[3] = {2, 3, 4};
  remove(f);
  for (int k = 0; k < (int)TFE_DT_COUNT; k++)
    for (int o = 0; o < 2; o++) {
      tfe_dyn d;
      char path[64];
      snprintf(path, sizeof path, "/%s/%s", tfe_dtype_name((tfe_dtype)k), o ? "row" : "col");
      make((tfe_dtype)k, (tfe_order)o, dims, &d);
      if (tfe_hdf5_write(f, path, &d, 0)) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }
      tfe_dyn_release(&d);
    }
  printf("test_hdf5: wrote %d datasets to %s\n", 2 * (int)TFE_DT_COUNT, f);
  return 0;
}
/* h5py wrote /KIND/{row,col} (2x3x4, element (a,b,c) = elem(a*100+b*10+c)) for the standard
 * kinds, and /c128_realimag with fields real, imag. */
static int read_set(const char *f) {
  const int64_t dims[3] = {2, 3, 4};
  const char *names[] = {"f32/row", "f32/col", "f64/row", "f64/col", "c64/row", "c128/col", "i32/row", "i64/col",
                         "maxplus_f64/row", "c128_realimag"};
  const tfe_dtype kinds[] = {TFE_DT_F32, TFE_DT_F32, TFE_DT_F64, TFE_DT_F64, TFE_DT_C64, TFE_DT_C128,
                             TFE_DT_I32, TFE_DT_I64, TFE_DT_MAXPLUS_F64, TFE_DT_C128};
  for (int i = 0; i < 10; i++) {
    tfe_dyn d;
    if (tfe_hdf5_read(f, names[i], &d)) { fprintf(stderr, "%s: %s\n", names[i], tfe_last_error()); return 1; }
    if (d.dtype != kinds[i]) { fprintf(stderr, "%s: kind %s\n", names[i], tfe_dtype_name(d.dtype)); return 1; }
    unsigned char e[16], g[16];
    for (int64_t a = 0; a < dims[0]; a++)
      for (int64_t b = 0; b < dims[1]; b++)
        for (int64_t c = 0; c < dims[2]; c++) {
          elem(d.dtype, a * 100 + b * 10 + c, e);
          tfe_dyn_get(&d, (int64_t[]){a, b, c}, g);
          if (memcmp(e, g, tfe_dtype_get(d.dtype)->size)) { fprintf(stderr, "%s: value differs\n", names[i]); return 1; }
        }
    bool col = strstr(names[i], "col") != NULL;
    if (!tfe_layout_is_dense(&d.lay, col ? TFE_COLMAJOR : TFE_ROWMAJOR)) {
      fprintf(stderr, "%s: not in the memory_order the file names\n", names[i]);
      return 1;
    }
    tfe_dyn_release(&d);
  }
  printf("test_hdf5: read the 10 datasets h5py wrote to %s\n", f);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "write")) return write_set(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "read")) return read_set(argv[2]);
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/tfe_hdf5_XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_all), cmocka_unit_test(test_paths_and_views),
      cmocka_unit_test(test_scalar_and_empty), cmocka_unit_test(test_bad_files),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  const char *names[] = {"all.h5", "paths.h5", "small.h5", "bad.h5"};
  for (int i = 0; i < 4; i++) remove(file(names[i]));
  rmdir(dir);
  return rc;
}
