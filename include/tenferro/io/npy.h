/* tenferro/io_npy.h — the .npy format (numpy's NEP 1 / format.py, versions 1.0, 2.0, 3.0).
 *
 *   tfe_npy_parse_header(buf, len, &info)   header only (dtype, order, shape, data offset)
 *   tfe_npy_load_mem(buf, len, &dyn)        one allocation holding the data as stored
 *   tfe_npy_load(path, &dyn)                the same from a file
 *   tfe_npy_save(path, &dyn)                any strides; dense views are written as they lie
 *
 * Loading never transposes: C-order files become row-major views, Fortran-order files
 * column-major views of the same bytes. Big-endian files are byte-swapped in place.
 * Supported dtypes: <f4 <f8 <c8 <c16 <i4 <i8 (and their big-endian forms). Tropical kinds are
 * saved as their real type (numpy has no tropical dtype). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_IO_NPY_H
#define TENFERRO_IO_NPY_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/io/file.h>

typedef struct tfe_npy_info {
  tfe_dtype dtype;
  bool fortran;           /* fortran_order */
  bool big_endian;
  int rank;
  int64_t dims[TFE_MAX_RANK];
  size_t data_offset;     /* bytes before the data */
  int64_t numel;
} tfe_npy_info;

#define TFE__NPY_FAIL(...) tfe__fail(TFE_ERR_PARSE, "tfe_npy", __VA_ARGS__)

/* Parses the header of a .npy image of len bytes. */
TFE_API tfe_status tfe_npy_parse_header(const void *buf, size_t len, tfe_npy_info *info);

/* Loads a .npy image from memory (copied once into a new storage). */
TFE_API tfe_status tfe_npy_load_mem(const void *buf, size_t len, tfe_dyn *out);

/* Loads a .npy file: one read into one allocation, the view wraps the data where it lies. */
TFE_API tfe_status tfe_npy_load(const char *path, tfe_dyn *out);

/* Saves a run-time typed view. Dense column-major and row-major views are written directly;
 * other strides (and lazily conjugated views) are gathered in column-major order. */
TFE_API tfe_status tfe_npy_save(const char *path, const tfe_dyn *t);

#endif
#elif !defined(TENFERRO_IO_NPY_BODY) /* bodies */
#define TENFERRO_IO_NPY_BODY
#include <tenferro/tensor/tensor.h>
#include <tenferro/io/file.h>
#include <errno.h>

TFE_INTERNAL const char *tfe__npy_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}
/* A Python string literal '...' or "..." (no escapes needed for the keys and descr). */
TFE_INTERNAL const char *tfe__npy_str(const char *p, const char *e, const char **s, size_t *n) {
  if (p >= e || (*p != '\'' && *p != '"')) return NULL;
  char q = *p++;
  const char *b = p;
  while (p < e && *p != q) { if (*p == '\\') return NULL; p++; }
  if (p >= e) return NULL;
  *s = b; *n = (size_t)(p - b);
  return p + 1;
}
TFE_INTERNAL bool tfe__npy_descr(const char *s, size_t n, tfe_npy_info *info) {
  if (n < 3 || n > 4) return false;
  char end = s[0];
  if (end != '<' && end != '>' && end != '|' && end != '=') return false;
  info->big_endian = end == '>';
  static const struct { const char *code; tfe_dtype dt; } map[] = {
      {"f4", TFE_DT_F32}, {"f8", TFE_DT_F64}, {"c8", TFE_DT_C64}, {"c16", TFE_DT_C128}, {"i4", TFE_DT_I32}, {"i8", TFE_DT_I64}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strlen(map[i].code) == n - 1 && memcmp(map[i].code, s + 1, n - 1) == 0) { info->dtype = map[i].dt; return true; }
  return false;
}
TFE_API tfe_status tfe_npy_parse_header(const void *buf, size_t len, tfe_npy_info *info) {
  TFE_CHECK_NULL(info);
  if (!buf && len) return TFE_FAIL(TFE_ERR_NULL, "argument 'buf' is NULL");
  const unsigned char *b = (const unsigned char *)buf;
  memset(info, 0, sizeof *info);
  if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) return TFE__NPY_FAIL("not a .npy file (bad magic)");
  int major = b[6];
  size_t hl, pre;
  if (major == 1) { hl = (size_t)b[8] | (size_t)b[9] << 8; pre = 10; }
  else if (major == 2 || major == 3) {
    if (len < 12) return TFE__NPY_FAIL("truncated header");
    hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24; pre = 12;
  } else return TFE__NPY_FAIL("unsupported format version %d.%d", major, b[7]);
  if (hl > len - pre) return TFE__NPY_FAIL("header of %zu bytes runs past the end of the file (%zu bytes)", hl, len);
  const char *p = (const char *)b + pre, *e = p + hl;
  bool have_d = false, have_f = false, have_s = false;
  p = tfe__npy_ws(p, e);
  if (p >= e || *p++ != '{') return TFE__NPY_FAIL("header is not a dictionary");
  for (;;) {
    p = tfe__npy_ws(p, e);
    if (p < e && *p == '}') break;
    const char *key; size_t kn;
    if (!(p = tfe__npy_str(p, e, &key, &kn))) return TFE__NPY_FAIL("bad key in header");
    p = tfe__npy_ws(p, e);
    if (p >= e || *p++ != ':') return TFE__NPY_FAIL("missing ':' in header");
    p = tfe__npy_ws(p, e);
    /* A repeated key would, for 'shape', append dims to the first tuple's: refuse them all. */
    if ((kn == 5 && memcmp(key, "descr", 5) == 0 && have_d) || (kn == 5 && memcmp(key, "shape", 5) == 0 && have_s) ||
        (kn == 13 && memcmp(key, "fortran_order", 13) == 0 && have_f))
      return TFE__NPY_FAIL("header repeats the key '%.*s'", (int)kn, key);
    if (kn == 5 && memcmp(key, "descr", 5) == 0) {
      const char *s; size_t sn;
      if (!(p = tfe__npy_str(p, e, &s, &sn))) return TFE__NPY_FAIL("descr is not a simple dtype string (structured arrays are not supported)");
      if (!tfe__npy_descr(s, sn, info))
        return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_npy", "unsupported dtype '%.*s' (f4 f8 c8 c16 i4 i8 are)", (int)(sn < 16 ? sn : 16), s);
      have_d = true;
    } else if (kn == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (e - p >= 4 && memcmp(p, "True", 4) == 0) { info->fortran = true; p += 4; }
      else if (e - p >= 5 && memcmp(p, "False", 5) == 0) { info->fortran = false; p += 5; }
      else return TFE__NPY_FAIL("fortran_order is not True or False");
      have_f = true;
    } else if (kn == 5 && memcmp(key, "shape", 5) == 0) {
      if (p >= e || *p++ != '(') return TFE__NPY_FAIL("shape is not a tuple");
      int64_t n = 1;
      for (;;) {
        p = tfe__npy_ws(p, e);
        if (p < e && *p == ')') { p++; break; }
        if (p >= e || *p < '0' || *p > '9') return TFE__NPY_FAIL("bad dimension in shape");
        int64_t d = 0;
        while (p < e && *p >= '0' && *p <= '9') {
          if (d > (INT64_MAX - 9) / 10) return tfe__fail(TFE_ERR_OVERFLOW, "tfe_npy", "dimension too large");
          d = d * 10 + (*p++ - '0');
        }
        if (p < e && *p == 'L') p++; /* Python 2 long */
        if (info->rank == TFE_MAX_RANK) return tfe__fail(TFE_ERR_RANK, "tfe_npy", "rank above %d", TFE_MAX_RANK);
        info->dims[info->rank++] = d;
        if (!tfe__mul_ok(n, d, &n)) return tfe__fail(TFE_ERR_OVERFLOW, "tfe_npy", "element count overflows");
        p = tfe__npy_ws(p, e);
        if (p < e && *p == ',') p++;
        else if (p < e && *p == ')') { p++; break; }
        else return TFE__NPY_FAIL("bad separator in shape");
      }
      info->numel = n;
      have_s = true;
    } else return TFE__NPY_FAIL("unknown header key '%.*s'", (int)(kn < 32 ? kn : 32), key);
    p = tfe__npy_ws(p, e);
    if (p < e && *p == ',') { p++; continue; }
    if (p < e && *p == '}') break;
    return TFE__NPY_FAIL("bad separator in header");
  }
  if (!have_d || !have_f || !have_s) return TFE__NPY_FAIL("header lacks '%s'", !have_d ? "descr" : !have_f ? "fortran_order" : "shape");
  info->data_offset = pre + hl;
  int64_t bytes;
  if (!tfe__mul_ok(info->numel, (int64_t)tfe_dtype_get(info->dtype)->size, &bytes))
    return tfe__fail(TFE_ERR_OVERFLOW, "tfe_npy", "data size overflows");
  if ((uint64_t)bytes > (uint64_t)(len - info->data_offset))
    return tfe__fail(TFE_ERR_IO, "tfe_npy", "file holds %zu data bytes, the header needs %lld (truncated?)",
                     len - info->data_offset, (long long)bytes);
  return TFE_OK;
}

TFE_INTERNAL void tfe__npy_bswap(unsigned char *d, int64_t n, size_t part) {
  for (int64_t i = 0; i < n; i++, d += part)
    for (size_t a = 0, b = part - 1; a < b; a++, b--) { unsigned char t = d[a]; d[a] = d[b]; d[b] = t; }
}

/* Takes ownership of a tfe__alloc'ed image buf[len] and wraps its data in out. */
TFE_INTERNAL tfe_status tfe__npy_wrap(unsigned char *buf, size_t len, tfe_dyn *out) {
  tfe_npy_info info;
  tfe_status st = tfe_npy_parse_header(buf, len, &info);
  if (st != TFE_OK) { tfe__free(buf); return st; }
  const tfe_dtype_info *di = tfe_dtype_get(info.dtype);
  size_t bytes = (size_t)info.numel * di->size;
  unsigned char *data = buf + info.data_offset;
  if (info.data_offset % 16 != 0) { memmove(buf, data, bytes); data = buf; } /* keep elements aligned */
  if (info.big_endian) tfe__npy_bswap(data, info.numel * (di->is_complex ? 2 : 1), di->is_complex ? di->size / 2 : di->size);
  tfe_storage *s = NULL;
  st = tfe_storage_wrap(buf, len, TFE_HOST, tfe__storage_free_hook, NULL, &s);
  if (st != TFE_OK) { tfe__free(buf); return st; }
  tfe_layout L;
  st = tfe_layout_dense(info.rank, info.dims, info.fortran ? TFE_COLMAJOR : TFE_ROWMAJOR, &L);
  if (st != TFE_OK) { tfe_storage_release(s); return st; }
  out->dtype = info.dtype; out->data = data; out->lay = L; out->conj = false; out->st = s;
  return TFE_OK;
}
TFE_API tfe_status tfe_npy_load_mem(const void *buf, size_t len, tfe_dyn *out) {
  TFE_CHECK_NULL(out);
  if (!buf && len) return TFE_FAIL(TFE_ERR_NULL, "argument 'buf' is NULL");
  unsigned char *b = (unsigned char *)tfe__alloc(len ? len : 1);
  if (!b) return TFE_ERR_ALLOC;
  if (len) memcpy(b, buf, len);
  return tfe__npy_wrap(b, len, out);
}
/* The whole of an open file into a tfe__alloc'ed buffer, read until its end (no seeking: a
 * directory or a pipe has no usable size). */
TFE_INTERNAL tfe_status tfe__npy_read_all(FILE *f, const char *path, unsigned char **out, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = (unsigned char *)tfe__alloc(cap);
  if (!b) return TFE_ERR_ALLOC;
  for (;;) {
    errno = 0;
    n += fread(b + n, 1, cap - n, f);
    if (ferror(f)) {
      int e = errno;
      tfe__free(b);
      return tfe__fail(TFE_ERR_IO, "tfe_npy_load", "cannot read '%s' (%s)", path, e ? strerror(e) : "read error");
    }
    if (n < cap) break; /* end of file */
    if (cap > SIZE_MAX / 2) { tfe__free(b); return tfe__fail(TFE_ERR_OVERFLOW, "tfe_npy_load", "'%s' is too large", path); }
    unsigned char *nb = (unsigned char *)tfe__alloc(cap * 2);
    if (!nb) { tfe__free(b); return TFE_ERR_ALLOC; }
    memcpy(nb, b, n);
    tfe__free(b);
    b = nb; cap *= 2;
  }
  *out = b; *len = n;
  return TFE_OK;
}
TFE_API tfe_status tfe_npy_load(const char *path, tfe_dyn *out) {
  TFE_CHECK_NULL(path);
  TFE_CHECK_NULL(out);
  errno = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return TFE_FAIL(TFE_ERR_IO, "cannot open '%s' for reading (%s)", path, errno ? strerror(errno) : "unknown");
  unsigned char *b = NULL;
  size_t sz = 0;
  tfe_status rd = tfe__npy_read_all(f, path, &b, &sz);
  fclose(f);
  if (rd != TFE_OK) return rd;
  tfe_status st = tfe__npy_wrap(b, sz, out);
  if (st != TFE_OK) {
    char msg[TFE_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "%s", tfe_last_error());
    return tfe__fail(st, "tfe_npy_load", "%s: %s", path, msg);
  }
  return TFE_OK;
}

/* numpy descr of a dtype ('<f8' etc.; tropical kinds as their real type). */
TFE_INTERNAL const char *tfe__npy_code(tfe_dtype dt) {
  switch (dt) {
    case TFE_DT_F32: case TFE_DT_MAXPLUS_F32: case TFE_DT_MINPLUS_F32: case TFE_DT_MAXTIMES_F32: return "<f4";
    case TFE_DT_F64: case TFE_DT_MAXPLUS_F64: case TFE_DT_MINPLUS_F64: case TFE_DT_MAXTIMES_F64: return "<f8";
    case TFE_DT_C64: return "<c8";
    case TFE_DT_C128: return "<c16";
    case TFE_DT_I32: return "<i4";
    case TFE_DT_I64: return "<i8";
    default: return NULL;
  }
}

/* The header for the given dtype, order and shape, padded to a multiple of 64 bytes. */
TFE_INTERNAL size_t tfe__npy_header(char *h, size_t cap, const char *code, bool fortran, int rank, const int64_t *dims) {
  char dict[TFE_MAX_RANK * 24 + 128];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (", code, fortran ? "True" : "False");
  for (int i = 0; i < rank; i++) n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s", (long long)dims[i], i + 1 < rank ? " " : "");
  n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  size_t pre = (size_t)n + 1 + 10 > 65535 ? 12 : 10;
  size_t total = (pre + (size_t)n + 1 + 63) / 64 * 64;
  if (total > cap) return 0;
  size_t hl = total - pre;
  memcpy(h, "\x93NUMPY", 6);
  h[6] = pre == 10 ? 1 : 2; h[7] = 0;
  h[8] = (char)(hl & 0xFF); h[9] = (char)((hl >> 8) & 0xFF);
  if (pre == 12) { h[10] = (char)((hl >> 16) & 0xFF); h[11] = (char)((hl >> 24) & 0xFF); }
  memcpy(h + pre, dict, (size_t)n);
  memset(h + pre + n, ' ', hl - (size_t)n - 1);
  h[total - 1] = '\n';
  return total;
}
TFE_API tfe_status tfe_npy_save(const char *path, const tfe_dyn *t) {
  TFE_CHECK_NULL(path);
  TFE_CHECK_NULL(t);
  const char *code = tfe__npy_code(t->dtype);
  if (!code) return TFE_FAIL(TFE_ERR_DTYPE, "dtype %d cannot be stored in .npy", (int)t->dtype);
  int64_t numel;
  TFE_TRY(tfe_layout_check(&t->lay, &numel));
  if (numel > 0 && !t->data) return TFE_FAIL(TFE_ERR_NULL, "data is NULL");
  const tfe_dtype_info *di = tfe_dtype_get(t->dtype);
  tfe_layout F, C;
  TFE_TRY(tfe_layout_dense(t->lay.rank, t->lay.dims, TFE_COLMAJOR, &F));
  TFE_TRY(tfe_layout_dense(t->lay.rank, t->lay.dims, TFE_ROWMAJOR, &C));
  bool conj = t->conj && di->is_complex, isF = true, isC = true;
  for (int i = 0; i < t->lay.rank; i++) {
    if (t->lay.dims[i] <= 1) continue;
    isF = isF && t->lay.strides[i] == F.strides[i];
    isC = isC && t->lay.strides[i] == C.strides[i];
  }
  bool fortran = isF || !isC;
  const unsigned char *src = (const unsigned char *)t->data + t->lay.offset * (int64_t)di->size;
  unsigned char *gather = NULL;
  if (numel > 0 && (conj || (!isF && !isC))) { /* gather in column-major order */
    gather = (unsigned char *)tfe__alloc((size_t)numel * di->size);
    if (!gather) return TFE_ERR_ALLOC;
    int64_t idx[TFE_MAX_RANK] = {0}, off = 0;
    const unsigned char *base = (const unsigned char *)t->data;
    for (int64_t e = 0; e < numel; e++) {
      memcpy(gather + (size_t)e * di->size, base + (t->lay.offset + off) * (int64_t)di->size, di->size);
      if (conj) {
        if (di->size == 16) { double *z = (double *)(gather + (size_t)e * 16); z[1] = -z[1]; }
        else { float *z = (float *)(gather + (size_t)e * 8); z[1] = -z[1]; }
      }
      for (int d = 0; d < t->lay.rank; d++) {
        off += t->lay.strides[d];
        if (++idx[d] < t->lay.dims[d]) break;
        off -= t->lay.strides[d] * t->lay.dims[d];
        idx[d] = 0;
      }
    }
    src = gather;
    fortran = true;
  }
  char h[TFE_MAX_RANK * 24 + 256];
  size_t hn = tfe__npy_header(h, sizeof h, code, fortran, t->lay.rank, t->lay.dims);
  tfe__afile af; /* whole or not at all: a failed write leaves the target as it was */
  tfe_status st = tfe__afile_open(&af, path, __func__);
  if (st != TFE_OK) { tfe__free(gather); return st; }
  bool ok = fwrite(h, 1, hn, af.f) == hn && (numel == 0 || fwrite(src, di->size, (size_t)numel, af.f) == (size_t)numel);
  tfe__free(gather);
  return tfe__afile_commit(&af, ok, __func__);
}
#endif
