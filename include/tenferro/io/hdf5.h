/* tenferro/io/hdf5.h — tensors in HDF5 files, to docs/formats/hdf5.md. Opt-in: include it after
 * <tenferro.h> in a unit compiled in the default (or the implementation) mode and link Debian's
 * libhdf5 (`pkg-config --cflags --libs hdf5`, or -I/usr/include/hdf5/serial -lhdf5_serial).
 * libtenferro does not contain it, so that only programs that use HDF5 link it.
 *
 *   tfe_hdf5_write(file, path, &dyn, flags)   one dataset (groups on the path are created)
 *   tfe_hdf5_read(file, path, &dyn)           a new tensor, dense in the file's memory_order
 *
 * The dataset has the tensor's logical shape (HDF5's row-major element order, what h5py and
 * h5dump show); attributes format_version (1), dtype (the kind's name) and memory_order
 * ("row_major" / "column_major": the order the writer held and the reader restores). Complex
 * kinds are compounds {r, i} (read: {real, imag} too); tropical kinds are their float carrier. */
#ifndef TENFERRO_H
#error "include <tenferro.h> before <tenferro/io/hdf5.h>"
#endif
#ifndef TENFERRO_IO_HDF5_H
#define TENFERRO_IO_HDF5_H
#include <hdf5.h>

#define TFE_HDF5_FORMAT_VERSION 1
#define TFE_HDF5_OVERWRITE 1u /* flags: replace a dataset already at the path */

TFE_API tfe_status tfe_hdf5_write(const char *file, const char *path, const tfe_dyn *d, unsigned flags);
TFE_API tfe_status tfe_hdf5_read(const char *file, const char *path, tfe_dyn *out);

#if TFE__IMPL
#include <stdio.h>
#include <unistd.h>

#define TFE__H5_FAIL(st, ...) tfe__fail((st), "tfe_hdf5", __VA_ARGS__)

/* HDF5 prints its error stack on stderr: silenced while tenferro calls it (its own message
 * says what failed), then put back as the program had it. */
typedef struct tfe__h5_quiet { H5E_auto2_t fn; void *data; } tfe__h5_quiet;
TFE_INTERNAL void tfe__h5_hush(tfe__h5_quiet *q) {
  H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
TFE_INTERNAL void tfe__h5_unhush(const tfe__h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

/* The memory type of a kind: its float/int, or the compound {re, im} of its real type. */
TFE_INTERNAL hid_t tfe__h5_memtype(tfe_dtype dt, const char *re, const char *im) {
  const tfe_dtype_info *i = tfe_dtype_get(dt);
  if (i->is_complex) {
    size_t h = i->size / 2;
    hid_t t = H5Tcreate(H5T_COMPOUND, i->size);
    if (t < 0) return t;
    hid_t part = h == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (H5Tinsert(t, re, 0, part) < 0 || H5Tinsert(t, im, h, part) < 0) { H5Tclose(t); return -1; }
    return t;
  }
  hid_t base = (i->is_float || i->algebra != TFE_ALGEBRA_STANDARD) ? (i->size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE)
                                                                  : (i->size == 4 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64);
  return H5Tcopy(base);
}

TFE_INTERNAL herr_t tfe__h5_attr_str(hid_t obj, const char *name, const char *value) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = -1;
  herr_t r = -1;
  if (t >= 0 && sp >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0 &&
      (a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
    r = H5Awrite(a, t, &value);
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  return r;
}
TFE_INTERNAL herr_t tfe__h5_attr_int(hid_t obj, const char *name, int value) {
  hid_t sp = H5Screate(H5S_SCALAR), a = -1;
  herr_t r = -1;
  if (sp >= 0 && (a = H5Acreate2(obj, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
    r = H5Awrite(a, H5T_NATIVE_INT, &value);
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return r;
}

/* Does the link at path exist (every group on the way too)? */
TFE_INTERNAL bool tfe__h5_exists(hid_t f, const char *path) {
  char buf[1024];
  size_t n = strlen(path);
  if (n >= sizeof buf) return false;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char c = buf[i];
    buf[i] = 0;
    bool ok = H5Lexists(f, buf, H5P_DEFAULT) > 0;
    buf[i] = c;
    if (!ok) return false;
  }
  return true;
}

/* The elements of d, dense row-major (d itself when it is already, else a copy in *tmp). */
TFE_INTERNAL tfe_status tfe__h5_rowmajor(const tfe_dyn *d, tfe_dyn *tmp, const void **buf) {
  if (!d->conj && tfe_layout_is_dense(&d->lay, TFE_ROWMAJOR)) {
    *buf = d->data ? (const char *)d->data + d->lay.offset * (int64_t)tfe_dtype_get(d->dtype)->size : NULL;
    return TFE_OK;
  }
  TFE_TRY(tfe_dyn_empty(tmp, d->dtype, d->lay.rank, d->lay.dims, TFE_ROWMAJOR));
  tfe_status st = tfe_copy_dyn(tmp, d);
  if (st) { tfe_dyn_release(tmp); return st; }
  *buf = tmp->data;
  return TFE_OK;
}

/* Creates (or replaces) the dataset and writes buf with its attributes; hid_t handles closed. */
TFE_INTERNAL tfe_status tfe__h5_put(hid_t f, const char *file, const char *path, const tfe_dyn *d, const void *buf,
                                    const char *order, unsigned flags) {
  if (tfe__h5_exists(f, path)) {
    if (!(flags & TFE_HDF5_OVERWRITE))
      return TFE__H5_FAIL(TFE_ERR_IO, "'%s' already holds '%s' (pass TFE_HDF5_OVERWRITE to replace it)", file, path);
    if (H5Ldelete(f, path, H5P_DEFAULT) < 0) return TFE__H5_FAIL(TFE_ERR_IO, "cannot remove '%s' from '%s'", path, file);
  }
  hsize_t dims[TFE_MAX_RANK > 0 ? TFE_MAX_RANK : 1];
  for (int i = 0; i < d->lay.rank; i++) dims[i] = (hsize_t)d->lay.dims[i];
  hid_t sp = d->lay.rank ? H5Screate_simple(d->lay.rank, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t mt = tfe__h5_memtype(d->dtype, "r", "i");
  hid_t lc = H5Pcreate(H5P_LINK_CREATE), ds = -1;
  tfe_status st = TFE_ERR_IO;
  if (sp < 0 || mt < 0 || lc < 0 || H5Pset_create_intermediate_group(lc, 1) < 0 ||
      (ds = H5Dcreate2(f, path, mt, sp, lc, H5P_DEFAULT, H5P_DEFAULT)) < 0)
    TFE__H5_FAIL(TFE_ERR_IO, "cannot create dataset '%s' in '%s' (is a part of the path a dataset?)", path, file);
  else if (tfe_layout_numel(&d->lay) > 0 && H5Dwrite(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    TFE__H5_FAIL(TFE_ERR_IO, "writing '%s' in '%s' failed", path, file);
  else if (tfe__h5_attr_int(ds, "format_version", TFE_HDF5_FORMAT_VERSION) < 0 ||
           tfe__h5_attr_str(ds, "dtype", tfe_dtype_name(d->dtype)) < 0 || tfe__h5_attr_str(ds, "memory_order", order) < 0)
    TFE__H5_FAIL(TFE_ERR_IO, "writing the attributes of '%s' in '%s' failed", path, file);
  else
    st = TFE_OK;
  if (ds >= 0) H5Dclose(ds);
  if (lc >= 0) H5Pclose(lc);
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  return st;
}

TFE_API tfe_status tfe_hdf5_write(const char *file, const char *path, const tfe_dyn *d, unsigned flags) {
  TFE_CHECK_NULL(file);
  TFE_CHECK_NULL(path);
  TFE_CHECK_NULL(d);
  if ((unsigned)d->dtype >= (unsigned)TFE_DT_COUNT)
    return TFE_FAIL(TFE_ERR_DTYPE, "dtype %d has no HDF5 form (user kinds are not stored)", (int)d->dtype);
  if (d->st && d->st->space.kind != TFE_MEM_HOST)
    return TFE_FAIL(TFE_ERR_DEVICE, "the tensor lives in device memory: copy it to the host first");
  if (flags & ~TFE_HDF5_OVERWRITE) return TFE_FAIL(TFE_ERR_INVALID, "unknown flags 0x%x", flags);
  int64_t n;
  TFE_TRY(tfe_layout_check(&d->lay, &n));
  bool colmajor = !tfe_layout_is_dense(&d->lay, TFE_ROWMAJOR) && tfe_layout_is_dense(&d->lay, TFE_COLMAJOR);
  tfe_dyn tmp = {0};
  const void *buf;
  TFE_TRY(tfe__h5_rowmajor(d, &tmp, &buf));
  tfe__h5_quiet q;
  tfe__h5_hush(&q);
  hid_t f = access(file, F_OK) == 0 ? H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT)
                                    : H5Fcreate(file, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  tfe_status st = f < 0 ? TFE__H5_FAIL(TFE_ERR_IO, "cannot open or create '%s' as an HDF5 file", file)
                        : tfe__h5_put(f, file, path, d, buf, colmajor ? "column_major" : "row_major", flags);
  if (f >= 0 && H5Fclose(f) < 0 && st == TFE_OK) st = TFE__H5_FAIL(TFE_ERR_IO, "closing '%s' failed", file);
  tfe__h5_unhush(&q);
  tfe_dyn_release(&tmp);
  return st;
}

/* ---- reading --------------------------------------------------------------------------------- */
/* A string attribute (fixed or variable length) into buf; false when absent. */
TFE_INTERNAL tfe_status tfe__h5_get_str(hid_t ds, const char *name, char *buf, size_t cap, bool *found) {
  *found = false;
  buf[0] = 0;
  if (H5Aexists(ds, name) <= 0) return TFE_OK;
  hid_t a = H5Aopen(ds, name, H5P_DEFAULT), ft = a >= 0 ? H5Aget_type(a) : -1, mt = -1;
  tfe_status st = TFE_OK;
  if (ft < 0 || H5Tget_class(ft) != H5T_STRING) {
    st = TFE__H5_FAIL(TFE_ERR_PARSE, "attribute '%s' is not a string", name);
  } else if (H5Tis_variable_str(ft) > 0) {
    char *s = NULL;
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5Tget_cset(ft)); /* HDF5 converts no string between character sets */
    if (H5Aread(a, mt, &s) < 0 || !s) st = TFE__H5_FAIL(TFE_ERR_IO, "cannot read attribute '%s'", name);
    else { snprintf(buf, cap, "%s", s); H5free_memory(s); }
  } else {
    size_t n = H5Tget_size(ft);
    char *s = (char *)tfe__alloc(n + 1);
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, n);
    H5Tset_cset(mt, H5Tget_cset(ft));
    if (!s) st = TFE_ERR_ALLOC;
    else if (H5Aread(a, mt, s) < 0) st = TFE__H5_FAIL(TFE_ERR_IO, "cannot read attribute '%s'", name);
    else { s[n] = 0; snprintf(buf, cap, "%s", s); }
    tfe__free(s);
  }
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  *found = st == TFE_OK;
  return st;
}

/* The kind of a dataset's file type, and the member names of a complex compound. */
TFE_INTERNAL tfe_status tfe__h5_kind(hid_t ft, tfe_dtype *dt, char *re, char *im) {
  H5T_class_t c = H5Tget_class(ft);
  size_t sz = H5Tget_size(ft);
  if (c == H5T_FLOAT && (sz == 4 || sz == 8)) { *dt = sz == 4 ? TFE_DT_F32 : TFE_DT_F64; return TFE_OK; }
  if (c == H5T_INTEGER && (sz == 4 || sz == 8) && H5Tget_sign(ft) == H5T_SGN_2) {
    *dt = sz == 4 ? TFE_DT_I32 : TFE_DT_I64;
    return TFE_OK;
  }
  if (c == H5T_COMPOUND && H5Tget_nmembers(ft) == 2) {
    char *n0 = H5Tget_member_name(ft, 0), *n1 = H5Tget_member_name(ft, 1);
    hid_t m0 = H5Tget_member_type(ft, 0), m1 = H5Tget_member_type(ft, 1);
    bool names = n0 && n1 && ((!strcmp(n0, "r") && !strcmp(n1, "i")) || (!strcmp(n0, "real") && !strcmp(n1, "imag")));
    bool parts = m0 >= 0 && m1 >= 0 && H5Tget_class(m0) == H5T_FLOAT && H5Tget_class(m1) == H5T_FLOAT &&
                 H5Tget_size(m0) == sz / 2 && H5Tget_size(m1) == sz / 2 && (sz == 8 || sz == 16);
    if (names) { snprintf(re, 8, "%s", n0); snprintf(im, 8, "%s", n1); }
    if (n0) H5free_memory(n0);
    if (n1) H5free_memory(n1);
    if (m0 >= 0) H5Tclose(m0);
    if (m1 >= 0) H5Tclose(m1);
    if (names && parts) { *dt = sz == 8 ? TFE_DT_C64 : TFE_DT_C128; return TFE_OK; }
    return TFE__H5_FAIL(TFE_ERR_DTYPE, "a compound type is read only as a complex number: two floats of one size "
                                       "named r, i (or real, imag)");
  }
  return TFE__H5_FAIL(TFE_ERR_DTYPE, "HDF5 type class %d of %zu bytes has no tenferro kind "
                                     "(float 4/8, signed integer 4/8, complex compound 8/16)", (int)c, sz);
}

/* The attributes against the file type: the kind to return and the memory order. */
TFE_INTERNAL tfe_status tfe__h5_attrs(hid_t ds, tfe_dtype *dt, tfe_order *order) {
  char s[64];
  bool found;
  if (H5Aexists(ds, "format_version") > 0) {
    long long v = 0;
    hid_t a = H5Aopen(ds, "format_version", H5P_DEFAULT);
    herr_t r = a >= 0 ? H5Aread(a, H5T_NATIVE_LLONG, &v) : -1;
    if (a >= 0) H5Aclose(a);
    if (r < 0) return TFE__H5_FAIL(TFE_ERR_PARSE, "attribute 'format_version' is not an integer");
    if (v < 1 || v > TFE_HDF5_FORMAT_VERSION)
      return TFE__H5_FAIL(TFE_ERR_UNSUPPORTED, "format_version %lld (this tenferro reads 1 to %d)", v,
                          TFE_HDF5_FORMAT_VERSION);
  }
  TFE_TRY(tfe__h5_get_str(ds, "dtype", s, sizeof s, &found));
  if (found) {
    tfe_dtype want = tfe_dtype_from_name(s);
    if (want == TFE_DT_COUNT) return TFE__H5_FAIL(TFE_ERR_DTYPE, "attribute dtype '%s' names no tenferro kind", s);
    const tfe_dtype_info *w = tfe_dtype_get(want), *h = tfe_dtype_get(*dt);
    bool carrier = w->algebra != TFE_ALGEBRA_STANDARD && h->is_float && !h->is_complex && h->size == w->size;
    if (want != *dt && !carrier)
      return TFE__H5_FAIL(TFE_ERR_DTYPE, "attribute dtype '%s' does not match the stored type (%s)", s, h->name);
    *dt = want;
  }
  TFE_TRY(tfe__h5_get_str(ds, "memory_order", s, sizeof s, &found));
  *order = TFE_ROWMAJOR;
  if (found && !strcmp(s, "column_major")) *order = TFE_COLMAJOR;
  else if (found && strcmp(s, "row_major"))
    return TFE__H5_FAIL(TFE_ERR_PARSE, "attribute memory_order '%s' is neither row_major nor column_major", s);
  return TFE_OK;
}

/* Reads the open dataset into out (row-major, then reordered when the file says column_major). */
TFE_INTERNAL tfe_status tfe__h5_get(hid_t ds, const char *path, tfe_dyn *out) {
  hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds), mt = -1;
  tfe_status st = TFE_OK;
  tfe_dtype dt = TFE_DT_COUNT;
  tfe_order order = TFE_ROWMAJOR;
  char re[8] = "r", im[8] = "i";
  int64_t dims[TFE_MAX_RANK > 0 ? TFE_MAX_RANK : 1];
  int rank = 0;
  tfe_dyn rm = {0}, cm = {0};
  if (ft < 0 || sp < 0) { st = TFE__H5_FAIL(TFE_ERR_IO, "cannot read the type or shape of '%s'", path); goto done; }
  H5S_class_t sc = H5Sget_simple_extent_type(sp);
  if (sc == H5S_SIMPLE) {
    rank = H5Sget_simple_extent_ndims(sp);
    if (rank < 0 || rank > TFE_MAX_RANK) {
      st = TFE__H5_FAIL(TFE_ERR_RANK, "'%s' has rank %d, above TFE_MAX_RANK (%d)", path, rank, TFE_MAX_RANK);
      goto done;
    }
    hsize_t hd[TFE_MAX_RANK > 0 ? TFE_MAX_RANK : 1];
    H5Sget_simple_extent_dims(sp, hd, NULL);
    for (int i = 0; i < rank; i++) dims[i] = (int64_t)hd[i];
  } else if (sc != H5S_SCALAR) {
    st = TFE__H5_FAIL(TFE_ERR_PARSE, "'%s' has an empty (null) dataspace", path);
    goto done;
  }
  if ((st = tfe__h5_kind(ft, &dt, re, im)) || (st = tfe__h5_attrs(ds, &dt, &order))) goto done;
  if ((st = tfe_dyn_empty(&rm, dt, rank, dims, TFE_ROWMAJOR))) goto done;
  mt = tfe__h5_memtype(dt, re, im);
  if (mt < 0 || (tfe_layout_numel(&rm.lay) > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rm.data) < 0)) {
    st = TFE__H5_FAIL(TFE_ERR_IO, "reading the elements of '%s' failed", path);
    goto done;
  }
  if (order == TFE_COLMAJOR && rank > 1) {
    if ((st = tfe_dyn_empty(&cm, dt, rank, dims, TFE_COLMAJOR)) || (st = tfe_copy_dyn(&cm, &rm))) goto done;
    *out = cm;
    cm.st = NULL;
  } else {
    *out = rm;
    rm.st = NULL;
  }
done:
  tfe_dyn_release(&rm);
  tfe_dyn_release(&cm);
  if (mt >= 0) H5Tclose(mt);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  return st;
}

TFE_API tfe_status tfe_hdf5_read(const char *file, const char *path, tfe_dyn *out) {
  TFE_CHECK_NULL(file);
  TFE_CHECK_NULL(path);
  TFE_CHECK_NULL(out);
  tfe__h5_quiet q;
  tfe__h5_hush(&q);
  tfe_status st;
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), obj = -1;
  if (f < 0)
    st = TFE__H5_FAIL(TFE_ERR_IO, access(file, R_OK) ? "cannot read '%s'" : "'%s' is not an HDF5 file", file);
  else if (!tfe__h5_exists(f, path) || (obj = H5Oopen(f, path, H5P_DEFAULT)) < 0)
    st = TFE__H5_FAIL(TFE_ERR_IO, "'%s' has no object at '%s'", file, path);
  else if (H5Iget_type(obj) != H5I_DATASET)
    st = TFE__H5_FAIL(TFE_ERR_PARSE, "'%s' in '%s' is not a dataset (a group? structured tensors are not in format 1)",
                      path, file);
  else
    st = tfe__h5_get(obj, path, out);
  if (obj >= 0) H5Oclose(obj);
  if (f >= 0) H5Fclose(f);
  tfe__h5_unhush(&q);
  return st;
}
#undef TFE__H5_FAIL
#endif /* TFE__IMPL */
#endif
