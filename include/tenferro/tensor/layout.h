/* tenferro/tensor/layout.h — layouts: dims, strides, offset, and the zero-copy view operations on them.
 * Element (i0, ..., ik) of a layout lives at offset + i0*strides[0] + ... + ik*strides[k];
 * strides are signed element counts (0 broadcasts, negative reverses). Every operation here
 * checks its arguments and leaves its output untouched on error. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_TENSOR_LAYOUT_H
#define TENFERRO_TENSOR_LAYOUT_H
#include <tenferro/core/core.h>
typedef struct tfe_layout {
  int rank;
  int64_t offset;
  int64_t dims[TFE_MAX_RANK];
  int64_t strides[TFE_MAX_RANK];
} tfe_layout;

typedef enum tfe_order { TFE_COLMAJOR = 0, TFE_ROWMAJOR = 1 } tfe_order;

/* ---- layout helpers (kind-independent) --------------------------------------------------------- */
/* Number of elements; fails on negative dims, rank out of range or overflow. */
TFE_API tfe_status tfe_layout_check(const tfe_layout *L, int64_t *count);
TFE_API int64_t tfe_layout_numel(const tfe_layout *L);
/* Smallest and largest element offset touched (relative to data); false when empty. */
TFE_API bool tfe_layout_extent(const tfe_layout *L, int64_t *lo, int64_t *hi);
/* Dense strides in column- or row-major order (fails on overflow). */
TFE_API tfe_status tfe_layout_dense(int rank, const int64_t *dims, tfe_order order, tfe_layout *L);

/* A layout is dense in `order` when its strides are those tfe_layout_dense would give
 * (dims of size 1 may carry any stride; the offset is free). */
TFE_API bool tfe_layout_is_dense(const tfe_layout *L, tfe_order order);

/* ================================================================================================
 * Zero-copy layout operations. The typed view ops (view_tpl.h) and the dtype-tagged ones (dyn.h)
 * are thin wrappers around these: a view op never touches the data, only the layout. Each
 * validates its input layout (rank, dims, element count and every address fit in int64), writes
 * *out only on success, and allows out == in.
 * ============================================================================================== */

/* Pass to squeeze to drop every axis of size 1. */
#define TFE_ALL_AXES (-1)

/* out axis k is input axis perm[k]. */
TFE_API tfe_status tfe_layout_permute(const tfe_layout *in, const int *perm, tfe_layout *out);

/* New shape with the same elements, reading the index in column-major order (TFE_ROWMAJOR:
 * row-major, as numpy's default). Zero-copy only: TFE_ERR_STRIDES when the strides need a copy. */
TFE_API tfe_status tfe_layout_reshape(const tfe_layout *in, int rank, const int64_t *dims, tfe_order order,
                                      tfe_layout *out);

/* numpy rules: align trailing axes; an input axis of size 1 or a missing leading axis gets
 * stride 0 and the target size; any other axis must match. */
TFE_API tfe_status tfe_layout_broadcast(const tfe_layout *in, int rank, const int64_t *dims, tfe_layout *out);

/* Merge axes: input axis k becomes output axis map[k] (0 <= map[k] < out_rank, every output axis
 * hit). Merged axes must have equal sizes; the merged stride is the sum: "iij->ij" is the
 * diagonal of the first two axes. */
TFE_API tfe_status tfe_layout_diagonal_map(const tfe_layout *in, const int *map, int out_rank, tfe_layout *out);
/* Diagonal of axes a1 and a2 (equal sizes): one axis at position min(a1, a2), stride s1 + s2. */
TFE_API tfe_status tfe_layout_diagonal(const tfe_layout *in, int a1, int a2, tfe_layout *out);
TFE_API tfe_status tfe_layout_slice_axis(const tfe_layout *in, int axis, int64_t start, int64_t stop, int64_t step,
                                         tfe_layout *out);
/* Every axis at once: start[k]:stop[k]:step[k]; step NULL means all 1. */
TFE_API tfe_status tfe_layout_slice(const tfe_layout *in, const int64_t *start, const int64_t *stop,
                                    const int64_t *step, tfe_layout *out);

/* Fix axis to index and drop it. */
TFE_API tfe_status tfe_layout_select(const tfe_layout *in, int axis, int64_t index, tfe_layout *out);

/* Drop axis (it must have size 1), or every size-1 axis for TFE_ALL_AXES. */
TFE_API tfe_status tfe_layout_squeeze(const tfe_layout *in, int axis, tfe_layout *out);
/* Insert a size-1 axis before position axis (0..rank). Its stride is the one a dense layout
 * would give it, so dense stays dense. */
TFE_API tfe_status tfe_layout_unsqueeze(const tfe_layout *in, int axis, tfe_layout *out);
TFE_API tfe_status tfe_layout_split(const tfe_layout *in, int axis, int nparts, const int64_t *sizes, tfe_layout *outs);

#endif
#elif !defined(TENFERRO_TENSOR_LAYOUT_BODY) /* bodies */
#define TENFERRO_TENSOR_LAYOUT_BODY
TFE_API tfe_status tfe_layout_check(const tfe_layout *L, int64_t *count) {
  TFE_CHECK_NULL(L);
  if (L->rank < 0 || L->rank > TFE_MAX_RANK)
    return TFE_FAIL(TFE_ERR_RANK, "rank %d outside [0, %d]", L->rank, TFE_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] < 0) return TFE_FAIL(TFE_ERR_INVALID, "dim %d is negative (%lld)", i, (long long)L->dims[i]);
    if (!tfe__mul_ok(n, L->dims[i], &n))
      return TFE_FAIL(TFE_ERR_OVERFLOW, "element count overflows at dim %d", i);
  }
  if (count) *count = n;
  return TFE_OK;
}
TFE_API int64_t tfe_layout_numel(const tfe_layout *L) {
  int64_t n = 1;
  for (int i = 0; i < L->rank; i++) n *= L->dims[i];
  return n;
}
TFE_API bool tfe_layout_extent(const tfe_layout *L, int64_t *lo, int64_t *hi) {
  int64_t a = L->offset, b = L->offset;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] == 0) return false;
    int64_t span = (L->dims[i] - 1) * L->strides[i];
    if (span < 0) a += span; else b += span;
  }
  *lo = a; *hi = b;
  return true;
}
TFE_API tfe_status tfe_layout_dense(int rank, const int64_t *dims, tfe_order order, tfe_layout *L) {
  TFE_CHECK_NULL(L);
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR)
    return TFE_FAIL(TFE_ERR_INVALID, "order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)order);
  if (rank < 0 || rank > TFE_MAX_RANK)
    return TFE_FAIL(TFE_ERR_RANK, "rank %d outside [0, %d]", rank, TFE_MAX_RANK);
  if (rank > 0 && !dims) return TFE_FAIL(TFE_ERR_NULL, "argument 'dims' is NULL");
  tfe_layout t;
  t.rank = rank; t.offset = 0;
  int64_t s = 1;
  for (int k = 0; k < rank; k++) {
    int i = order == TFE_ROWMAJOR ? rank - 1 - k : k;
    if (dims[i] < 0) return TFE_FAIL(TFE_ERR_INVALID, "dim %d is negative (%lld)", i, (long long)dims[i]);
    t.dims[i] = dims[i];
    t.strides[i] = s;
    if (!tfe__mul_ok(s, dims[i] > 0 ? dims[i] : 1, &s))
      return TFE_FAIL(TFE_ERR_OVERFLOW, "element count overflows at dim %d", i);
  }
  *L = t;
  return TFE_OK;
}
TFE_API bool tfe_layout_is_dense(const tfe_layout *L, tfe_order order) {
  int64_t s = 1;
  for (int k = 0; k < L->rank; k++) {
    int i = order == TFE_ROWMAJOR ? L->rank - 1 - k : k;
    if (L->dims[i] == 0) return true; /* an empty tensor is trivially dense */
    if (L->dims[i] != 1 && L->strides[i] != s) return false;
    s *= L->dims[i];
  }
  return true;
}

/* "[2, 3, 4]" into buf (truncated to size). Used in messages. */
TFE_INTERNAL const char *tfe__fmt_dims(char *buf, size_t size, int n, const int64_t *a) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k + 1 < size; i++) {
    int w = snprintf(buf + k, size - k, "%s%lld", i ? ", " : "[", (long long)a[i]);
    if (w < 0) break;
    k += (size_t)w;
  }
  if (k + 1 < size) snprintf(buf + k, size - k, "%s", n ? "]" : "[]");
  return buf;
}

/* Validate an input layout on behalf of `where`: rank, dims, count and addresses in range. */
TFE_INTERNAL tfe_status tfe__lay_ok(const tfe_layout *L, const char *where, const char *what) {
  if (!L) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument '%s' is NULL", what);
  if (L->rank < 0 || L->rank > TFE_MAX_RANK)
    return TFE_FAIL_AT(TFE_ERR_RANK, where, "%s: rank %d outside [0, %d]", what, L->rank, TFE_MAX_RANK);
  int64_t n = 1, lo = L->offset, hi = L->offset;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] < 0)
      return TFE_FAIL_AT(TFE_ERR_INVALID, where, "%s: dim %d is negative (%lld)", what, i, (long long)L->dims[i]);
    if (!tfe__mul_ok(n, L->dims[i], &n))
      return TFE_FAIL_AT(TFE_ERR_OVERFLOW, where, "%s: element count overflows at dim %d", what, i);
  }
  for (int i = 0; n > 0 && i < L->rank; i++) {
    int64_t span;
    bool ok = tfe__mul_ok(L->dims[i] - 1, L->strides[i], &span) &&
              (span < 0 ? tfe__add_ok(lo, span, &lo) : tfe__add_ok(hi, span, &hi));
    if (!ok) return TFE_FAIL_AT(TFE_ERR_OVERFLOW, where, "%s: element addresses overflow at dim %d", what, i);
  }
  return TFE_OK;
}
/* Validate a target shape (rank, dims, element count) and copy it into L->dims. */
TFE_INTERNAL tfe_status tfe__dims_ok(int rank, const int64_t *dims, const char *where, tfe_layout *L) {
  if (rank < 0 || rank > TFE_MAX_RANK)
    return TFE_FAIL_AT(TFE_ERR_RANK, where, "rank %d outside [0, %d]", rank, TFE_MAX_RANK);
  if (rank > 0 && !dims) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'dims' is NULL");
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "dim %d is negative (%lld)", i, (long long)dims[i]);
    if (!tfe__mul_ok(n, dims[i], &n)) return TFE_FAIL_AT(TFE_ERR_OVERFLOW, where, "element count overflows at dim %d", i);
    L->dims[i] = dims[i];
  }
  L->rank = rank;
  return TFE_OK;
}
TFE_INTERNAL tfe_status tfe__axis_ok(int axis, int rank, const char *where, const char *what) {
  if (axis < 0 || axis >= rank)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "%s %d is not an axis of a rank-%d tensor", what, axis, rank);
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_permute(const tfe_layout *in, const int *perm, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  if (in->rank > 0 && !perm) return TFE_FAIL(TFE_ERR_NULL, "argument 'perm' is NULL");
  bool seen[TFE_MAX_RANK] = {false};
  tfe_layout r = *in;
  for (int k = 0; k < in->rank; k++) {
    int p = perm[k];
    if (p < 0 || p >= in->rank)
      return TFE_FAIL(TFE_ERR_INVALID, "perm[%d] = %d is not an axis of a rank-%d tensor", k, p, in->rank);
    if (seen[p]) return TFE_FAIL(TFE_ERR_INVALID, "perm[%d] = %d repeats an axis: not a permutation", k, p);
    seen[p] = true;
    r.dims[k] = in->dims[p];
    r.strides[k] = in->strides[p];
  }
  *out = r;
  return TFE_OK;
}

/* Column-major reshape core on a non-empty layout. On failure returns false and the two input
 * axes (a, a2) whose strides cannot be merged. */
TFE_INTERNAL bool tfe__reshape_col(const tfe_layout *in, tfe_layout *r, int *bad_a, int *bad_b) {
  int64_t od[TFE_MAX_RANK], os[TFE_MAX_RANK];
  int oax[TFE_MAX_RANK], no = 0;
  for (int i = 0; i < in->rank; i++) /* size-1 axes carry no structure */
    if (in->dims[i] != 1) { od[no] = in->dims[i]; os[no] = in->strides[i]; oax[no++] = i; }
  int oi = 0, ni = 0;
  int64_t last = 1; /* stride * dim of the last new axis, for trailing size-1 axes */
  while (ni < r->rank && oi < no) {
    /* Smallest groups of old and new axes with equal products: each group is one chunk. The
     * products are bounded by the element count, so they cannot overflow. */
    int64_t np = r->dims[ni], op = od[oi];
    int nj = ni + 1, oj = oi + 1;
    while (np != op) {
      if (np < op) np *= r->dims[nj++];
      else op *= od[oj++];
    }
    /* The old chunk must read as one arithmetic sequence in column-major order. */
    for (int k = oi; k + 1 < oj; k++) {
      int64_t want;
      if (!tfe__mul_ok(os[k], od[k], &want) || os[k + 1] != want) {
        *bad_a = oax[k]; *bad_b = oax[k + 1];
        return false;
      }
    }
    int64_t s = os[oi];
    for (int k = ni; k < nj; k++) {
      r->strides[k] = s;
      if (!tfe__mul_ok(s, r->dims[k], &s)) s = 0; /* only reached past the last address */
    }
    last = s;
    ni = nj; oi = oj;
  }
  for (; ni < r->rank; ni++) r->strides[ni] = last; /* size-1 axes left over */
  return true;
}
TFE_API tfe_status tfe_layout_reshape(const tfe_layout *in, int rank, const int64_t *dims, tfe_order order,
                                      tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR) return TFE_FAIL(TFE_ERR_INVALID, "order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)order);
  tfe_layout r;
  TFE_TRY(tfe__dims_ok(rank, dims, __func__, &r));
  r.offset = in->offset;
  int64_t nin = tfe_layout_numel(in), nout = tfe_layout_numel(&r);
  char b1[160], b2[160], b3[160];
  if (nin != nout)
    return TFE_FAIL(TFE_ERR_SHAPE, "cannot reshape %s (%lld elements) to %s (%lld elements)",
                    tfe__fmt_dims(b1, sizeof b1, in->rank, in->dims), (long long)nin,
                    tfe__fmt_dims(b2, sizeof b2, rank, dims), (long long)nout);
  if (nin == 0) { /* any strides address an empty tensor: pick dense ones */
    TFE_TRY(tfe_layout_dense(rank, dims, order, &r));
    r.offset = in->offset;
    *out = r;
    return TFE_OK;
  }
  /* Row-major reading is the column-major algorithm on reversed axes. */
  tfe_layout a = *in, t = r;
  if (order == TFE_ROWMAJOR) {
    for (int i = 0; i < in->rank; i++) { a.dims[i] = in->dims[in->rank - 1 - i]; a.strides[i] = in->strides[in->rank - 1 - i]; }
    for (int i = 0; i < rank; i++) t.dims[i] = r.dims[rank - 1 - i];
  }
  int ba = 0, bb = 0;
  if (!tfe__reshape_col(&a, &t, &ba, &bb)) {
    if (order == TFE_ROWMAJOR) { ba = in->rank - 1 - ba; bb = in->rank - 1 - bb; }
    return TFE_FAIL(TFE_ERR_STRIDES,
                    "reshape of %s with strides %s to %s needs a copy: axes %d and %d (strides %lld, %lld) "
                    "cannot be merged in %s order",
                    tfe__fmt_dims(b1, sizeof b1, in->rank, in->dims), tfe__fmt_dims(b2, sizeof b2, in->rank, in->strides),
                    tfe__fmt_dims(b3, sizeof b3, rank, dims), ba, bb, (long long)in->strides[ba],
                    (long long)in->strides[bb], order == TFE_ROWMAJOR ? "row-major" : "column-major");
  }
  for (int i = 0; i < rank; i++) r.strides[i] = order == TFE_ROWMAJOR ? t.strides[rank - 1 - i] : t.strides[i];
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_broadcast(const tfe_layout *in, int rank, const int64_t *dims, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  tfe_layout r;
  TFE_TRY(tfe__dims_ok(rank, dims, __func__, &r));
  if (rank < in->rank) return TFE_FAIL(TFE_ERR_RANK, "cannot broadcast rank %d to the lower rank %d", in->rank, rank);
  r.offset = in->offset;
  int lead = rank - in->rank;
  for (int k = 0; k < rank; k++) {
    int i = k - lead;
    if (i < 0 || (in->dims[i] == 1 && dims[k] != 1)) { r.strides[k] = 0; continue; }
    if (in->dims[i] != dims[k])
      return TFE_FAIL(TFE_ERR_SHAPE, "input axis %d of size %lld cannot broadcast to size %lld (target axis %d)",
                      i, (long long)in->dims[i], (long long)dims[k], k);
    r.strides[k] = in->strides[i];
  }
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_diagonal_map(const tfe_layout *in, const int *map, int out_rank, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  if (in->rank > 0 && !map) return TFE_FAIL(TFE_ERR_NULL, "argument 'map' is NULL");
  if (out_rank < 0 || out_rank > in->rank)
    return TFE_FAIL(TFE_ERR_RANK, "out_rank %d outside [0, %d] for a rank-%d input", out_rank, in->rank, in->rank);
  tfe_layout r = *in;
  bool hit[TFE_MAX_RANK] = {false};
  r.rank = out_rank;
  for (int k = 0; k < in->rank; k++) {
    int m = map[k];
    if (m < 0 || m >= out_rank)
      return TFE_FAIL(TFE_ERR_INVALID, "map[%d] = %d outside [0, %d)", k, m, out_rank);
    if (!hit[m]) { hit[m] = true; r.dims[m] = in->dims[k]; r.strides[m] = in->strides[k]; continue; }
    if (r.dims[m] != in->dims[k])
      return TFE_FAIL(TFE_ERR_SHAPE, "axis %d (size %lld) merged into output axis %d of size %lld",
                      k, (long long)in->dims[k], m, (long long)r.dims[m]);
    /* The sum cannot overflow for sizes >= 2 (its multiples are addresses); size 0/1: unused. */
    if (!tfe__add_ok(r.strides[m], in->strides[k], &r.strides[m])) r.strides[m] = 0;
  }
  for (int m = 0; m < out_rank; m++)
    if (!hit[m]) return TFE_FAIL(TFE_ERR_INVALID, "output axis %d receives no input axis", m);
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_diagonal(const tfe_layout *in, int a1, int a2, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_TRY(tfe__axis_ok(a1, in->rank, __func__, "axis"));
  TFE_TRY(tfe__axis_ok(a2, in->rank, __func__, "axis"));
  if (a1 == a2) return TFE_FAIL(TFE_ERR_INVALID, "the two axes are the same (%d)", a1);
  if (in->dims[a1] != in->dims[a2])
    return TFE_FAIL(TFE_ERR_SHAPE, "axes %d and %d have sizes %lld and %lld: a diagonal needs equal sizes", a1, a2,
                    (long long)in->dims[a1], (long long)in->dims[a2]);
  int map[TFE_MAX_RANK], hi = a1 > a2 ? a1 : a2, lo = a1 < a2 ? a1 : a2;
  for (int k = 0; k < in->rank; k++) map[k] = k == hi ? lo : (k > hi ? k - 1 : k);
  return tfe_layout_diagonal_map(in, map, in->rank - 1, out);
}

/* Range start:stop:step on one axis (python's meaning, without its wrap-around or clamping):
 * step > 0: 0 <= start <= stop <= size, elements start, start+step, ... < stop;
 * step < 0: -1 <= stop <= start <= size-1 (start = stop = -1 allowed for size 0), elements
 * start, start+step, ... > stop. Anything else is TFE_ERR_BOUNDS; step 0 is TFE_ERR_INVALID. */
TFE_INTERNAL tfe_status tfe__slice1(tfe_layout *r, int axis, int64_t start, int64_t stop, int64_t step,
                                    const char *where) {
  int64_t d = r->dims[axis], n;
  if (step == 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "axis %d: step is 0", axis);
  if (step > 0) {
    if (start < 0 || start > stop || stop > d)
      return TFE_FAIL_AT(TFE_ERR_BOUNDS, where, "axis %d: slice %lld:%lld:%lld out of bounds for size %lld "
                       "(step > 0 needs 0 <= start <= stop <= size)", axis, (long long)start, (long long)stop,
                       (long long)step, (long long)d);
    n = (stop - start) / step + ((stop - start) % step != 0);
  } else {
    if (stop < -1 || stop > start || start > (d > 0 ? d - 1 : -1))
      return TFE_FAIL_AT(TFE_ERR_BOUNDS, where, "axis %d: slice %lld:%lld:%lld out of bounds for size %lld "
                       "(step < 0 needs -1 <= stop <= start <= size-1)", axis, (long long)start, (long long)stop,
                       (long long)step, (long long)d);
    /* step == INT64_MIN cannot be negated; it takes at most one element */
    int64_t m = step == INT64_MIN ? INT64_MAX : -step;
    n = (start - stop) / m + ((start - stop) % m != 0);
  }
  if (n > 0) r->offset += start * r->strides[axis]; /* an address of the input: no overflow */
  int64_t s;
  if (n >= 2 && tfe__mul_ok(r->strides[axis], step, &s)) r->strides[axis] = s;
  r->dims[axis] = n;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_slice_axis(const tfe_layout *in, int axis, int64_t start, int64_t stop, int64_t step,
                                         tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  TFE_TRY(tfe__axis_ok(axis, in->rank, __func__, "axis"));
  tfe_layout r = *in;
  TFE_TRY(tfe__slice1(&r, axis, start, stop, step, __func__));
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_slice(const tfe_layout *in, const int64_t *start, const int64_t *stop,
                                    const int64_t *step, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  if (in->rank > 0 && (!start || !stop))
    return TFE_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", !start ? "start" : "stop");
  tfe_layout r = *in;
  for (int k = 0; k < in->rank; k++) TFE_TRY(tfe__slice1(&r, k, start[k], stop[k], step ? step[k] : 1, __func__));
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_select(const tfe_layout *in, int axis, int64_t index, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  TFE_TRY(tfe__axis_ok(axis, in->rank, __func__, "axis"));
  if (index < 0 || index >= in->dims[axis])
    return TFE_FAIL(TFE_ERR_BOUNDS, "index %lld outside [0, %lld) on axis %d", (long long)index,
                    (long long)in->dims[axis], axis);
  tfe_layout r = *in;
  r.offset += index * in->strides[axis];
  for (int k = axis; k + 1 < in->rank; k++) { r.dims[k] = in->dims[k + 1]; r.strides[k] = in->strides[k + 1]; }
  r.rank = in->rank - 1;
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_squeeze(const tfe_layout *in, int axis, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  if (axis != TFE_ALL_AXES) {
    TFE_TRY(tfe__axis_ok(axis, in->rank, __func__, "axis"));
    if (in->dims[axis] != 1)
      return TFE_FAIL(TFE_ERR_SHAPE, "axis %d has size %lld, not 1", axis, (long long)in->dims[axis]);
  }
  tfe_layout r = *in;
  int n = 0;
  for (int k = 0; k < in->rank; k++) {
    if (axis == TFE_ALL_AXES ? in->dims[k] == 1 : k == axis) continue;
    r.dims[n] = in->dims[k]; r.strides[n++] = in->strides[k];
  }
  r.rank = n;
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_layout_unsqueeze(const tfe_layout *in, int axis, tfe_layout *out) {
  TFE_TRY(tfe__lay_ok(in, __func__, "in"));
  TFE_CHECK_NULL(out);
  if (in->rank >= TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "rank %d is already the maximum", in->rank);
  if (axis < 0 || axis > in->rank)
    return TFE_FAIL(TFE_ERR_INVALID, "axis %d outside [0, %d]", axis, in->rank);
  tfe_layout r = *in;
  int64_t s = 1;
  if (axis < in->rank) s = in->strides[axis];
  else if (in->rank > 0 && !tfe__mul_ok(in->strides[in->rank - 1], in->dims[in->rank - 1], &s)) s = 0;
  for (int k = in->rank; k > axis; k--) { r.dims[k] = in->dims[k - 1]; r.strides[k] = in->strides[k - 1]; }
  r.dims[axis] = 1;
  r.strides[axis] = s;
  r.rank = in->rank + 1;
  *out = r;
  return TFE_OK;
}

/* Cut axis into nparts consecutive pieces of sizes[0..nparts-1] (summing to its size).
 * tfe__split_ok validates; tfe__split_part then cannot fail (used by the typed ops, which write
 * their parts straight into views). */
TFE_INTERNAL tfe_status tfe__split_ok(const tfe_layout *in, int axis, int nparts, const int64_t *sizes,
                                      const void *outs, const char *where) {
  TFE_TRY(tfe__lay_ok(in, where, "in"));
  if (!sizes) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'sizes' is NULL");
  if (!outs) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'outs' is NULL");
  TFE_TRY(tfe__axis_ok(axis, in->rank, where, "axis"));
  if (nparts < 1) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "nparts is %d, needs at least 1", nparts);
  for (int p = 0; p < nparts; p++)
    if (sizes[p] < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "sizes[%d] is negative (%lld)", p, (long long)sizes[p]);
  int64_t sum = 0;
  for (int p = 0; p < nparts; p++)
    if (!tfe__add_ok(sum, sizes[p], &sum) || sum > in->dims[axis]) { sum = -1; break; }
  if (sum != in->dims[axis])
    return TFE_FAIL_AT(TFE_ERR_SHAPE, where, "the %d sizes do not add up to axis %d's size %lld", nparts, axis,
                     (long long)in->dims[axis]);
  return TFE_OK;
}
/* Part p, starting at index *at of the axis (advanced past it). */
TFE_INTERNAL tfe_layout tfe__split_part(const tfe_layout *in, int axis, int64_t size, int64_t *at) {
  tfe_layout r = *in;
  if (size > 0) r.offset += *at * in->strides[axis]; /* an address of in: no overflow */
  r.dims[axis] = size;
  *at += size;
  return r;
}
TFE_API tfe_status tfe_layout_split(const tfe_layout *in, int axis, int nparts, const int64_t *sizes, tfe_layout *outs) {
  TFE_TRY(tfe__split_ok(in, axis, nparts, sizes, outs, __func__));
  tfe_layout base = *in; /* outs may alias in */
  int64_t at = 0;
  for (int p = 0; p < nparts; p++) outs[p] = tfe__split_part(&base, axis, sizes[p], &at);
  return TFE_OK;
}

/* The layout of a user buffer: strides NULL means dense in `order`; every element must lie in
 * buf[0 .. buflen). */
TFE_INTERNAL tfe_status tfe__buffer_layout(const void *buf, int64_t buflen, int rank, const int64_t *dims,
                                           const int64_t *strides, int64_t offset, tfe_order order, size_t elem,
                                           tfe_layout *L, const char *where) {
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)order);
  if (buflen < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "buflen is negative (%lld)", (long long)buflen);
  int64_t bytes; /* a buffer of buflen elements must be addressable: its byte size fits */
  if (!tfe__mul_ok(buflen, (int64_t)elem, &bytes))
    return TFE_FAIL_AT(TFE_ERR_OVERFLOW, where, "buflen of %lld elements of %zu bytes overflows the byte count",
                       (long long)buflen, elem);
  if (!buf && buflen > 0) return TFE_FAIL_AT(TFE_ERR_NULL, where, "buffer is NULL but buflen is %lld", (long long)buflen);
  tfe_layout t;
  TFE_TRY(tfe__dims_ok(rank, dims, where, &t));
  if (strides) {
    for (int i = 0; i < rank; i++) t.strides[i] = strides[i];
  } else {
    TFE_TRY(tfe_layout_dense(rank, dims, order, &t));
  }
  t.offset = offset;
  TFE_TRY(tfe__lay_ok(&t, where, "buffer layout"));
  int64_t lo, hi;
  if (tfe_layout_extent(&t, &lo, &hi) && (lo < 0 || hi >= buflen))
    return TFE_FAIL_AT(TFE_ERR_BOUNDS, where, "the view reaches elements %lld..%lld, outside the buffer [0, %lld)",
                     (long long)lo, (long long)hi, (long long)buflen);
  *L = t;
  return TFE_OK;
}
#endif
