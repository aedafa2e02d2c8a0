/* tenferro/tensor.h — the tensor room: layouts, reference-counted storage, typed views and
 * owning tensors (stamped per kind from tensor_tpl.h), and the dtype-tagged handle.
 *
 * A view is {data, layout, conj}: element (i0, ..., ik) lives at
 *   data[layout.offset + i0*strides[0] + ... + ik*strides[k]]
 * Strides are signed element counts: 0 broadcasts, negative reverses. A tensor is a view plus
 * a counted reference to the storage that owns the memory. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_TENSOR_H
#define TENFERRO_TENSOR_H

#include <tenferro/core/kinds.h>
#include <stdatomic.h>
#include <tenferro/gen/generic.h>

typedef struct tfe_layout {
  int rank;
  int64_t offset;
  int64_t dims[TFE_MAX_RANK];
  int64_t strides[TFE_MAX_RANK];
} tfe_layout;

typedef enum tfe_order { TFE_COLMAJOR = 0, TFE_ROWMAJOR = 1 } tfe_order;

/* ---- memory spaces and storage ---------------------------------------------------------------- */
typedef enum tfe_memkind { TFE_MEM_HOST = 0, TFE_MEM_GPU = 1 } tfe_memkind;
typedef struct tfe_memspace { tfe_memkind kind; int device; } tfe_memspace;
#define TFE_HOST ((tfe_memspace){TFE_MEM_HOST, 0})

typedef struct tfe_storage {
  atomic_long refcount;
  void *ptr;                 /* first byte of the allocation (host or device address) */
  size_t bytes;
  tfe_memspace space;
  int compute_device;        /* -1: none set (inferred from the memory space) */
  void *event;               /* completion event of pending async work; NULL when ready */
  /* Who frees ptr: NULL for a wrapped user buffer (never freed by tenferro). */
  void (*free_fn)(void *ctx, void *ptr);
  void *free_ctx;
} tfe_storage;

/* A new host storage of `bytes` from the allocation hook, refcount 1. */
TFE_API tfe_status tfe_storage_new(size_t bytes, tfe_storage **out);
/* Wrap memory the caller owns (not freed by tenferro; free_fn may be given to hand it over). */
TFE_API tfe_status tfe_storage_wrap(void *ptr, size_t bytes, tfe_memspace space,
                                    void (*free_fn)(void *, void *), void *free_ctx,
                                    tfe_storage **out);
TFE_API void tfe_storage_retain(tfe_storage *s);
TFE_API void tfe_storage_release(tfe_storage *s);

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

/* ---- overlap analysis ------------------------------------------------------------------------- */
typedef enum tfe_overlap {
  TFE_DISJOINT = 0,     /* proven: no element address is shared */
  TFE_OVERLAPS = 1,     /* proven: some address is shared (two indices alias) */
  TFE_MAYBE_OVERLAPS = 2 /* the search budget ran out: treat as overlapping (conservative) */
} tfe_overlap;

/* Nodes the exact search may visit before answering TFE_MAYBE_OVERLAPS. */
#ifndef TFE_OVERLAP_BUDGET
#define TFE_OVERLAP_BUDGET 100000
#endif

/* Bounded linear Diophantine problem: is there x with 0 <= x[m] <= u[m] and sum c[m] x[m] = R?
 * Terms are sorted by c descending with distinct c; depth-first search with interval and gcd
 * pruning. Returns 1 (solution), 0 (none) or -1 (budget exhausted). */
typedef struct tfe__term { int64_t c, u; } tfe__term;
typedef struct tfe__dioph {
  tfe__term t[2 * TFE_MAX_RANK + 1];
  int64_t sum[2 * TFE_MAX_RANK + 2]; /* sum[m] = max of sum over terms m.. */
  int64_t gcd[2 * TFE_MAX_RANK + 2];
  int n;
  int64_t work;
} tfe__dioph;

/* Do layouts a and b share an address, b's base lying `shift` elements after a's? Exact unless
 * the search budget runs out (then TFE_MAYBE_OVERLAPS). Layouts are not validated here. */
TFE_API tfe_overlap tfe_layout_overlap(const tfe_layout *a, const tfe_layout *b, int64_t shift);

/* Do two different indices of L address the same element? Exact unless the search budget runs
 * out. Zero stride on an axis of size > 1 overlaps; otherwise, with axes sorted by |stride|, no
 * overlap when each |stride| exceeds the span of the smaller ones (the common case, decided at
 * once); else one bounded search per axis k for e with e_k in [1, d_k-1], e_j in
 * [-(d_j-1), d_j-1] below k, zero above, and sum e_j |s_j| = 0. */
TFE_API tfe_overlap tfe_layout_self_overlap(const tfe_layout *L);

/* TFE_OK when every element of L has its own address (a write through it is well defined);
 * TFE_ERR_OVERLAP with the reason otherwise (undecided cases are refused too). */
TFE_API tfe_status tfe_layout_check_writable(const tfe_layout *L);

/* ---- the dtype-tagged handle -------------------------------------------------------------------- */
typedef struct tfe_dyn {
  tfe_dtype dtype;
  void *data;
  tfe_layout lay;
  bool conj;
  tfe_storage *st; /* NULL for a non-owning view */
} tfe_dyn;

#define TFE_TEMPLATE <tenferro/tensor/tensor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/tensor/view_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- _Generic front ends ------------------------------------------------------------------------
 * tfe_zeros(&t, ...) is tfe_zeros_f64(&t, ...) for a tfe_tensor_f64 *t; view ops accept a view
 * or a tensor pointer (tfe_permute(&t, ...) on a tensor is tfe_tensor_permute_S). A pointer of
 * any other type is a compile error ("'_Generic' selector of type 'X *' is not compatible with
 * any association"). */
#define TFE__GVT(fn, x) _Generic((x), TFE_GCASES_ALL(fn, view), TFE_GCASES_ALL(tensor_##fn, tensor))
#define tfe_empty(out, rank, dims, order) _Generic((out), TFE_GCASES_ALL(empty, tensor))(out, rank, dims, order)
#define tfe_zeros(out, rank, dims, order) _Generic((out), TFE_GCASES_ALL(zeros, tensor))(out, rank, dims, order)
#define tfe_ones(out, rank, dims, order) _Generic((out), TFE_GCASES_ALL(ones, tensor))(out, rank, dims, order)
#define tfe_full(out, rank, dims, order, value) \
  _Generic((out), TFE_GCASES_ALL(full, tensor))(out, rank, dims, order, value)
#define tfe_release(t) _Generic((t), TFE_GCASES_ALL(tensor_release, tensor))(t)
#define tfe_retain(t, out) _Generic((t), TFE_GCASES_ALL(tensor_retain, tensor))(t, out)
#define tfe_wrap(out, buf, buflen, rank, dims, strides, offset, order) \
  _Generic((out), TFE_GCASES_ALL(wrap, view), TFE_GCASES_ALL(tensor_wrap, tensor))( \
      out, buf, buflen, rank, dims, strides, offset, order)
#define tfe_from_buffer(out, buf, buflen, rank, dims, strides, offset, order) \
  _Generic((out), TFE_GCASES_ALL(from_buffer, tensor))(out, buf, buflen, rank, dims, strides, offset, order)
#define tfe_get(v, idx, out) _Generic((v), TFE_GCASES_ALL(get, view))(v, idx, out)
#define tfe_set(v, idx, value) _Generic((v), TFE_GCASES_ALL(set, view))(v, idx, value)
#define tfe_permute(in, perm, out) TFE__GVT(permute, in)(in, perm, out)
#define tfe_reshape(in, rank, dims, order, out) TFE__GVT(reshape, in)(in, rank, dims, order, out)
#define tfe_broadcast(in, rank, dims, out) TFE__GVT(broadcast, in)(in, rank, dims, out)
#define tfe_diagonal(in, a1, a2, out) TFE__GVT(diagonal, in)(in, a1, a2, out)
#define tfe_diagonal_map(in, map, out_rank, out) TFE__GVT(diagonal_map, in)(in, map, out_rank, out)
#define tfe_slice(in, start, stop, step, out) TFE__GVT(slice, in)(in, start, stop, step, out)
#define tfe_slice_axis(in, axis, start, stop, step, out) TFE__GVT(slice_axis, in)(in, axis, start, stop, step, out)
#define tfe_select(in, axis, index, out) TFE__GVT(select, in)(in, axis, index, out)
#define tfe_squeeze(in, axis, out) TFE__GVT(squeeze, in)(in, axis, out)
#define tfe_unsqueeze(in, axis, out) TFE__GVT(unsqueeze, in)(in, axis, out)
#define tfe_conj(in, out) TFE__GVT(conj, in)(in, out)
#define tfe_split(in, axis, nparts, sizes, outs) TFE__GVT(split, in)(in, axis, nparts, sizes, outs)
#define tfe_views_overlap(a, b, res) _Generic((a), TFE_GCASES_ALL(views_overlap, view))(a, b, res)
#define tfe_self_overlap(v, res) _Generic((v), TFE_GCASES_ALL(self_overlap, view))(v, res)
#define tfe_check_writable(v) _Generic((v), TFE_GCASES_ALL(check_writable, view))(v)
#define tfe_dyn_as(d, out) _Generic((out), TFE_GCASES_ALL(dyn_as_view, view), TFE_GCASES_ALL(dyn_as_tensor, tensor))(d, out)
#define tfe_to_dyn(x, out) _Generic((x), TFE_GCASES_ALL(view_to_dyn, view), TFE_GCASES_ALL(tensor_to_dyn, tensor))(x, out)

#include <tenferro/tensor/dyn.h>

#endif
#elif !defined(TENFERRO_TENSOR_BODY) /* bodies */
#define TENFERRO_TENSOR_BODY
#include <tenferro/core/kinds.h>
#include <tenferro/gen/generic.h>

TFE_INTERNAL void tfe__storage_free_hook(void *ctx, void *p) { (void)ctx; tfe__free(p); }
TFE_API tfe_status tfe_storage_new(size_t bytes, tfe_storage **out) {
  TFE_CHECK_NULL(out);
  tfe_storage *s = (tfe_storage *)tfe__alloc(sizeof *s);
  if (!s) return TFE_ERR_ALLOC;
  void *p = tfe__alloc(bytes);
  if (!p) { tfe__free(s); return TFE_ERR_ALLOC; }
  atomic_init(&s->refcount, 1);
  s->ptr = p; s->bytes = bytes; s->space = TFE_HOST; s->compute_device = -1; s->event = NULL;
  s->free_fn = tfe__storage_free_hook; s->free_ctx = NULL;
  *out = s;
  return TFE_OK;
}
TFE_API tfe_status tfe_storage_wrap(void *ptr, size_t bytes, tfe_memspace space,
                                    void (*free_fn)(void *, void *), void *free_ctx,
                                    tfe_storage **out) {
  TFE_CHECK_NULL(out);
  if (!ptr && bytes) return TFE_FAIL(TFE_ERR_NULL, "buffer is NULL but %zu bytes were given", bytes);
  tfe_storage *s = (tfe_storage *)tfe__alloc(sizeof *s);
  if (!s) return TFE_ERR_ALLOC;
  atomic_init(&s->refcount, 1);
  s->ptr = ptr; s->bytes = bytes; s->space = space; s->compute_device = -1; s->event = NULL;
  s->free_fn = free_fn; s->free_ctx = free_ctx;
  *out = s;
  return TFE_OK;
}
TFE_API void tfe_storage_retain(tfe_storage *s) {
  if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}
TFE_API void tfe_storage_release(tfe_storage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) == 1) {
    if (s->free_fn) s->free_fn(s->free_ctx, s->ptr);
    tfe__free(s);
  }
}
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
                                           const int64_t *strides, int64_t offset, tfe_order order,
                                           tfe_layout *L, const char *where) {
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)order);
  if (buflen < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "buflen is negative (%lld)", (long long)buflen);
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

TFE_INTERNAL int64_t tfe__lay_gcd(int64_t a, int64_t b) {
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}
TFE_INTERNAL int tfe__dioph_search(tfe__dioph *P, int m, int64_t R) {
  if (m == P->n) return R == 0;
  if (R < 0 || R > P->sum[m]) return 0;
  if (P->gcd[m] > 1 && R % P->gcd[m] != 0) return 0;
  if (--P->work < 0) return -1;
  int64_t c = P->t[m].c, rest = P->sum[m + 1];
  int64_t lo = R - rest <= 0 ? 0 : (R - rest + c - 1) / c;
  int64_t hi = R / c < P->t[m].u ? R / c : P->t[m].u;
  for (int64_t x = hi; x >= lo; x--) {
    int r = tfe__dioph_search(P, m + 1, R - x * c);
    if (r != 0) return r;
  }
  return 0;
}
/* Add the term q*x, x in [0, u], to the problem with right-hand side *R (negative q is folded
 * into a positive one by x -> u - x). False on overflow. */
TFE_INTERNAL bool tfe__dioph_add(tfe__dioph *P, int64_t q, int64_t u, int64_t *R) {
  if (q == 0 || u == 0) return true;
  if (q < 0) {
    int64_t qu;
    if (q == INT64_MIN || !tfe__mul_ok(q, u, &qu) || !tfe__add_ok(*R, -qu, R)) return false;
    q = -q;
  }
  for (int i = 0; i < P->n; i++) /* equal coefficients: x1 + x2 takes every value in [0, u1+u2] */
    if (P->t[i].c == q) return tfe__add_ok(P->t[i].u, u, &P->t[i].u);
  P->t[P->n].c = q; P->t[P->n].u = u; P->n++;
  return true;
}
/* Sort, build suffix sums and gcds, search. -1 also on overflow. */
TFE_INTERNAL int tfe__dioph_solve(tfe__dioph *P, int64_t R) {
  for (int i = 1; i < P->n; i++) /* insertion sort, c descending */
    for (int j = i; j > 0 && P->t[j].c > P->t[j - 1].c; j--) { tfe__term x = P->t[j]; P->t[j] = P->t[j - 1]; P->t[j - 1] = x; }
  P->sum[P->n] = 0; P->gcd[P->n] = 0;
  for (int m = P->n - 1; m >= 0; m--) {
    int64_t cu;
    if (!tfe__mul_ok(P->t[m].c, P->t[m].u, &cu) || !tfe__add_ok(P->sum[m + 1], cu, &P->sum[m])) return -1;
    P->gcd[m] = tfe__lay_gcd(P->t[m].c, P->gcd[m + 1]);
  }
  P->work = TFE_OVERLAP_BUDGET;
  return tfe__dioph_search(P, 0, R);
}

/* Fast sufficient test that no two indices of L address one element: sorted by |stride|, each
 * stride reaches past everything the smaller ones span (the common, "nested" case). Interleaved
 * but disjoint layouts fail it: tfe_layout_self_overlap decides those exactly. Empty: true. */
TFE_INTERNAL bool tfe__layout_nested(const tfe_layout *L) {
  int64_t st[TFE_MAX_RANK], dm[TFE_MAX_RANK];
  int n = 0;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] == 0) return true;
    if (L->dims[i] == 1) continue;
    int64_t s = L->strides[i] < 0 ? -L->strides[i] : L->strides[i];
    int k = n++; /* insertion sort by |stride| */
    while (k > 0 && st[k - 1] > s) { st[k] = st[k - 1]; dm[k] = dm[k - 1]; k--; }
    st[k] = s; dm[k] = L->dims[i];
  }
  int64_t span = 0; /* largest offset reachable with the smaller strides */
  for (int k = 0; k < n; k++) {
    if (st[k] <= span) return false;
    span += st[k] * (dm[k] - 1);
  }
  return true;
}

/* Whether the byte ranges [first, last element] of two views intersect (a cheap aliasing test). */
TFE_INTERNAL bool tfe__ranges_meet(const void *pa, const tfe_layout *La, const void *pb, const tfe_layout *Lb,
                                   size_t elem) {
  int64_t alo, ahi, blo, bhi;
  if (!pa || !pb || !tfe_layout_extent(La, &alo, &ahi) || !tfe_layout_extent(Lb, &blo, &bhi)) return false;
  const char *a0 = (const char *)pa + alo * (int64_t)elem, *a1 = (const char *)pa + (ahi + 1) * (int64_t)elem;
  const char *b0 = (const char *)pb + blo * (int64_t)elem, *b1 = (const char *)pb + (bhi + 1) * (int64_t)elem;
  return a0 < b1 && b0 < a1;
}
TFE_API tfe_overlap tfe_layout_overlap(const tfe_layout *a, const tfe_layout *b, int64_t shift) {
  int64_t alo, ahi, blo, bhi, D;
  if (!tfe_layout_extent(a, &alo, &ahi) || !tfe_layout_extent(b, &blo, &bhi)) return TFE_DISJOINT;
  if (!tfe__add_ok(blo, shift, &blo) || !tfe__add_ok(bhi, shift, &bhi)) return TFE_MAYBE_OVERLAPS;
  if (bhi < alo || ahi < blo) return TFE_DISJOINT;
  /* sum i_k sa_k - sum j_k sb_k = b.offset + shift - a.offset */
  if (!tfe__add_ok(b->offset, shift, &D) || !tfe__add_ok(D, -a->offset, &D)) return TFE_MAYBE_OVERLAPS;
  tfe__dioph P;
  P.n = 0;
  for (int k = 0; k < a->rank; k++)
    if (!tfe__dioph_add(&P, a->strides[k], a->dims[k] - 1, &D)) return TFE_MAYBE_OVERLAPS;
  for (int k = 0; k < b->rank; k++)
    if (b->strides[k] == INT64_MIN || !tfe__dioph_add(&P, -b->strides[k], b->dims[k] - 1, &D)) return TFE_MAYBE_OVERLAPS;
  int r = tfe__dioph_solve(&P, D);
  return r > 0 ? TFE_OVERLAPS : r == 0 ? TFE_DISJOINT : TFE_MAYBE_OVERLAPS;
}
TFE_API tfe_overlap tfe_layout_self_overlap(const tfe_layout *L) {
  int64_t d[TFE_MAX_RANK], s[TFE_MAX_RANK];
  int n = 0;
  if (tfe_layout_numel(L) == 0) return TFE_DISJOINT;
  for (int k = 0; k < L->rank; k++) {
    if (L->dims[k] == 1) continue;
    if (L->strides[k] == 0) return TFE_OVERLAPS;
    if (L->strides[k] == INT64_MIN) return TFE_MAYBE_OVERLAPS;
    d[n] = L->dims[k]; s[n++] = L->strides[k] < 0 ? -L->strides[k] : L->strides[k];
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
      int64_t t = s[j]; s[j] = s[j - 1]; s[j - 1] = t;
      t = d[j]; d[j] = d[j - 1]; d[j - 1] = t;
    }
  bool nested = true;
  int64_t span = 0; /* sum over smaller axes of |s|(d-1): fits, it is an address difference */
  for (int k = 0; k < n && nested; k++) {
    if (s[k] <= span) nested = false;
    span += s[k] * (d[k] - 1);
  }
  if (nested) return TFE_DISJOINT;
  tfe_overlap res = TFE_DISJOINT;
  for (int k = 1; k < n; k++) {
    /* g|s_k| + sum_j f_j |s_j| = sum_j (d_j-1)|s_j| - |s_k|, g in [0, d_k-2], f_j in [0, 2d_j-2] */
    tfe__dioph P;
    P.n = 0;
    int64_t R = -s[k];
    bool ok = tfe__dioph_add(&P, s[k], d[k] - 2, &R);
    for (int j = 0; j < k && ok; j++) {
      int64_t sd;
      ok = tfe__mul_ok(s[j], d[j] - 1, &sd) && tfe__add_ok(R, sd, &R) && tfe__dioph_add(&P, s[j], 2 * (d[j] - 1), &R);
    }
    int r = ok ? tfe__dioph_solve(&P, R) : -1;
    if (r > 0) return TFE_OVERLAPS;
    if (r < 0) res = TFE_MAYBE_OVERLAPS;
  }
  return res;
}
TFE_API tfe_status tfe_layout_check_writable(const tfe_layout *L) {
  TFE_TRY(tfe__lay_ok(L, __func__, "L"));
  for (int k = 0; k < L->rank; k++)
    if (L->strides[k] == 0 && L->dims[k] > 1 && tfe_layout_numel(L) > 0)
      return TFE_FAIL(TFE_ERR_OVERLAP, "cannot write: axis %d has stride 0 and size %lld (a broadcast view)", k,
                      (long long)L->dims[k]);
  switch (tfe_layout_self_overlap(L)) {
  case TFE_DISJOINT: return TFE_OK;
  case TFE_OVERLAPS: return TFE_FAIL(TFE_ERR_OVERLAP, "cannot write: two indices of the view address the same element");
  default: return TFE_FAIL(TFE_ERR_OVERLAP, "cannot write: could not prove the view free of self-overlap "
                                             "(search budget TFE_OVERLAP_BUDGET exhausted)");
  }
}
#define TFE_TEMPLATE <tenferro/tensor/tensor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/tensor/view_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#include <tenferro/tensor/dyn.h>
#endif
