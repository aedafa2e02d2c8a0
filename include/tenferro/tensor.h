/* tenferro/tensor.h — the tensor room: layouts, reference-counted storage, typed views and
 * owning tensors (stamped per kind from tensor_tpl.h), and the dtype-tagged handle.
 *
 * A view is {data, layout, conj}: element (i0, ..., ik) lives at
 *   data[layout.offset + i0*strides[0] + ... + ik*strides[k]]
 * Strides are signed element counts: 0 broadcasts, negative reverses. A tensor is a view plus
 * a counted reference to the storage that owns the memory. */
#ifndef TENFERRO_TENSOR_H
#define TENFERRO_TENSOR_H

#include <tenferro/scalars.h>
#include <stdatomic.h>

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

TFE_INTERNAL void tfe__storage_free_hook(void *ctx, void *p) { (void)ctx; tfe__free(p); }

/* A new host storage of `bytes` from the allocation hook, refcount 1. */
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
/* Wrap memory the caller owns (not freed by tenferro; free_fn may be given to hand it over). */
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

/* ---- layout helpers (kind-independent) --------------------------------------------------------- */
/* Number of elements; fails on negative dims, rank out of range or overflow. */
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
/* Smallest and largest element offset touched (relative to data); false when empty. */
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
/* Dense strides in column- or row-major order (fails on overflow). */
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

/* ---- the dtype-tagged handle -------------------------------------------------------------------- */
typedef struct tfe_dyn {
  tfe_dtype dtype;
  void *data;
  tfe_layout lay;
  bool conj;
  tfe_storage *st; /* NULL for a non-owning view */
} tfe_dyn;

#define TFE_TEMPLATE <tenferro/tensor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

#endif
