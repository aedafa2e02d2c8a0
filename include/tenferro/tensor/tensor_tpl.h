/* tenferro/tensor_tpl.h — typed views and tensors of one kind; re-included per kind. */

/* Non-owning view. */
#if !TFE__BODY_PHASE
typedef struct TFE_TY(view) {
  TFE_T *data;
  tfe_layout lay;
  bool conj; /* lazily conjugated (complex kinds; ignored otherwise) */
} TFE_TY(view);

/* Owning tensor: a view plus one counted reference to its storage. Copying the struct does not
 * retain: use tfe_tensor_retain_S to share. */
typedef struct TFE_TY(tensor) {
  TFE_TY(view) v;
  tfe_storage *st;
} TFE_TY(tensor);

TFE_API void TFE_FN(tensor_release)(TFE_TY(tensor) *t);
/* A second owning handle to the same storage and view. */
TFE_API tfe_status TFE_FN(tensor_retain)(const TFE_TY(tensor) *t, TFE_TY(tensor) *out);

/* New uninitialized dense tensor. */
TFE_API tfe_status TFE_FN(empty)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order);

TFE_API tfe_status TFE_FN(full)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order, TFE_T value);
/* zeros/ones are the semiring's zero and one (max-plus zeros are -inf). */
TFE_API tfe_status TFE_FN(zeros)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order);
TFE_API tfe_status TFE_FN(ones)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order);
/* Element get/set by index with bounds checks; get applies the lazy conjugate. */
TFE_API tfe_status TFE_FN(get)(const TFE_TY(view) *v, const int64_t *idx, TFE_T *out);
/* set refuses a view whose elements overlap (a broadcast view, say): TFE_ERR_OVERLAP. */
TFE_API tfe_status TFE_FN(set)(const TFE_TY(view) *v, const int64_t *idx, TFE_T value);

/* ---- views of user buffers, contiguous copies ---------------------------------------------------- */
/* A view of buf (no copy): dims, strides (NULL: dense in order), offset, bounds-checked against
 * buflen elements. The caller keeps buf alive. */
TFE_API tfe_status TFE_FN(wrap)(TFE_TY(view) *out, TFE_T *buf, int64_t buflen, int rank, const int64_t *dims,
                                const int64_t *strides, int64_t offset, tfe_order order);
/* The same as an owning tensor whose storage never frees buf (it only counts references). */
TFE_API tfe_status TFE_FN(tensor_wrap)(TFE_TY(tensor) *out, TFE_T *buf, int64_t buflen, int rank,
                                       const int64_t *dims, const int64_t *strides, int64_t offset, tfe_order order);
/* A new dense tensor copied from a user buffer described as in tfe_wrap_S. */
TFE_API tfe_status TFE_FN(from_buffer)(TFE_TY(tensor) *out, const TFE_T *buf, int64_t buflen, int rank,
                                       const int64_t *dims, const int64_t *strides, int64_t offset, tfe_order order);

/* ---- typed <-> dtype-tagged --------------------------------------------------------------------- */
/* A non-owning dyn handle on v (st = NULL). */
TFE_API tfe_status TFE_FN(view_to_dyn)(const TFE_TY(view) *v, tfe_dyn *out);
/* An owning dyn handle: one new reference to t's storage (release both). */
TFE_API tfe_status TFE_FN(tensor_to_dyn)(const TFE_TY(tensor) *t, tfe_dyn *out);
/* The typed view of d (no reference taken); TFE_ERR_DTYPE when d holds another kind. */
TFE_API tfe_status TFE_FN(dyn_as_view)(const tfe_dyn *d, TFE_TY(view) *out);
/* The typed tensor of d with one new reference to its storage (st NULL stays NULL: borrowed). */
TFE_API tfe_status TFE_FN(dyn_as_tensor)(const tfe_dyn *d, TFE_TY(tensor) *out);
#else /* bodies */
TFE_API void TFE_FN(tensor_release)(TFE_TY(tensor) *t) {
  if (!t) return;
  tfe_storage_release(t->st);
  t->st = NULL;
  t->v.data = NULL;
  t->v.lay.rank = 0;
}
TFE_API tfe_status TFE_FN(tensor_retain)(const TFE_TY(tensor) *t, TFE_TY(tensor) *out) {
  TFE_CHECK_NULL(t);
  TFE_CHECK_NULL(out);
  tfe_storage_retain(t->st);
  *out = *t;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(empty)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order) {
  TFE_CHECK_NULL(out);
  tfe_layout L;
  TFE_TRY(tfe_layout_dense(rank, dims, order, &L));
  int64_t n = 0, bytes = 0;
  TFE_TRY(tfe_layout_check(&L, &n));
  if (!tfe__mul_ok(n, (int64_t)sizeof(TFE_T), &bytes))
    return TFE_FAIL(TFE_ERR_OVERFLOW, "%lld elements overflow the byte count", (long long)n);
  tfe_storage *st = NULL;
  TFE_TRY(tfe_storage_new((size_t)bytes, &st));
  out->st = st;
  out->v.data = (TFE_T *)st->ptr;
  out->v.lay = L;
  out->v.conj = false;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(full)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order, TFE_T value) {
  TFE_TRY(TFE_FN(empty)(out, rank, dims, order));
  int64_t n = tfe_layout_numel(&out->v.lay);
  for (int64_t i = 0; i < n; i++) out->v.data[i] = value;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(zeros)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order) {
  return TFE_FN(full)(out, rank, dims, order, TFE_FN(sr_zero)());
}
TFE_API tfe_status TFE_FN(ones)(TFE_TY(tensor) *out, int rank, const int64_t *dims, tfe_order order) {
  return TFE_FN(full)(out, rank, dims, order, TFE_FN(sr_one)());
}

/* Pointer to element idx (no checks: internal fast path). */
TFE_INTERNAL TFE_T *TFE_FN(view_ptr_)(const TFE_TY(view) *v, const int64_t *idx) {
  int64_t o = v->lay.offset;
  for (int i = 0; i < v->lay.rank; i++) o += idx[i] * v->lay.strides[i];
  return v->data + o;
}
TFE_API tfe_status TFE_FN(get)(const TFE_TY(view) *v, const int64_t *idx, TFE_T *out) {
  TFE_CHECK_NULL(v);
  TFE_CHECK_NULL(out);
  if (v->lay.rank > 0 && !idx) return TFE_FAIL(TFE_ERR_NULL, "argument 'idx' is NULL");
  if (v->lay.rank < 0 || v->lay.rank > TFE_MAX_RANK)
    return TFE_FAIL(TFE_ERR_RANK, "rank %d outside [0, %d]", v->lay.rank, TFE_MAX_RANK);
  if (!v->data) return TFE_FAIL(TFE_ERR_NULL, "the view's data pointer is NULL");
  for (int i = 0; i < v->lay.rank; i++)
    if (idx[i] < 0 || idx[i] >= v->lay.dims[i])
      return TFE_FAIL(TFE_ERR_BOUNDS, "index %lld outside [0, %lld) on axis %d",
                      (long long)idx[i], (long long)v->lay.dims[i], i);
  TFE_T x = *TFE_FN(view_ptr_)(v, idx);
  *out = v->conj ? TFE_FN(sr_conj)(x) : x;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(set)(const TFE_TY(view) *v, const int64_t *idx, TFE_T value) {
  TFE_CHECK_NULL(v);
  if (v->lay.rank > 0 && !idx) return TFE_FAIL(TFE_ERR_NULL, "argument 'idx' is NULL");
  if (v->lay.rank < 0 || v->lay.rank > TFE_MAX_RANK)
    return TFE_FAIL(TFE_ERR_RANK, "rank %d outside [0, %d]", v->lay.rank, TFE_MAX_RANK);
  if (!v->data) return TFE_FAIL(TFE_ERR_NULL, "the view's data pointer is NULL");
  for (int i = 0; i < v->lay.rank; i++)
    if (idx[i] < 0 || idx[i] >= v->lay.dims[i])
      return TFE_FAIL(TFE_ERR_BOUNDS, "index %lld outside [0, %lld) on axis %d",
                      (long long)idx[i], (long long)v->lay.dims[i], i);
  TFE_TRY(tfe_layout_check_writable(&v->lay));
  *TFE_FN(view_ptr_)(v, idx) = v->conj ? TFE_FN(sr_conj)(value) : value;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(wrap)(TFE_TY(view) *out, TFE_T *buf, int64_t buflen, int rank, const int64_t *dims,
                                const int64_t *strides, int64_t offset, tfe_order order) {
  TFE_CHECK_NULL(out);
  tfe_layout L;
  TFE_TRY(tfe__buffer_layout(buf, buflen, rank, dims, strides, offset, order, sizeof(TFE_T), &L, __func__));
  out->data = buf;
  out->lay = L;
  out->conj = false;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(tensor_wrap)(TFE_TY(tensor) *out, TFE_T *buf, int64_t buflen, int rank,
                                       const int64_t *dims, const int64_t *strides, int64_t offset, tfe_order order) {
  TFE_CHECK_NULL(out);
  tfe_layout L;
  TFE_TRY(tfe__buffer_layout(buf, buflen, rank, dims, strides, offset, order, sizeof(TFE_T), &L, __func__));
  tfe_storage *st = NULL;
  TFE_TRY(tfe_storage_wrap(buf, (size_t)buflen * sizeof(TFE_T), TFE_HOST, NULL, NULL, &st));
  out->st = st;
  out->v.data = buf;
  out->v.lay = L;
  out->v.conj = false;
  return TFE_OK;
}

/* Copy the elements of src into dst, dense in `order` (memcpy when src is already dense in
 * that order). Raw copy: the lazy-conjugate flag is not applied. */
TFE_INTERNAL void TFE_FN(copy_dense_)(const TFE_TY(view) *src, TFE_T *dst, tfe_order order) {
  const tfe_layout *L = &src->lay;
  int64_t n = tfe_layout_numel(L);
  if (n == 0) return;
  if (tfe_layout_is_dense(L, order)) {
    memcpy(dst, src->data + L->offset, (size_t)n * sizeof(TFE_T));
    return;
  }
  int64_t idx[TFE_MAX_RANK] = {0}, off = L->offset;
  for (int64_t i = 0; i < n; i++) {
    dst[i] = src->data[off];
    for (int k = 0; k < L->rank; k++) { /* odometer, fastest axis first */
      int a = order == TFE_ROWMAJOR ? L->rank - 1 - k : k;
      if (++idx[a] < L->dims[a]) { off += L->strides[a]; break; }
      off -= (L->dims[a] - 1) * L->strides[a];
      idx[a] = 0;
    }
  }
}
/* A new dense tensor (column- or row-major) holding a raw copy of src's elements (src's
 * lazy-conjugate flag is kept). The public, fast and conj-applying version is the kernel room's
 * tfe_contiguous_S; this one serves the constructors of this room. */
TFE_INTERNAL tfe_status TFE_FN(dense_copy_)(TFE_TY(tensor) *out, const TFE_TY(view) *src, tfe_order order) {
  TFE_TY(tensor) t = {0};
  TFE_TRY(TFE_FN(empty)(&t, src->lay.rank, src->lay.dims, order));
  TFE_FN(copy_dense_)(src, t.v.data, order);
  t.v.conj = src->conj;
  *out = t; /* out may be the owner of src: written only now */
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(from_buffer)(TFE_TY(tensor) *out, const TFE_T *buf, int64_t buflen, int rank,
                                       const int64_t *dims, const int64_t *strides, int64_t offset, tfe_order order) {
  TFE_CHECK_NULL(out);
  TFE_TY(view) v;
  TFE_TRY(tfe__buffer_layout(buf, buflen, rank, dims, strides, offset, order, sizeof(TFE_T), &v.lay, __func__));
  v.data = (TFE_T *)buf; /* only read */
  v.conj = false;
  return TFE_FN(dense_copy_)(out, &v, order);
}
TFE_API tfe_status TFE_FN(view_to_dyn)(const TFE_TY(view) *v, tfe_dyn *out) {
  TFE_CHECK_NULL(v);
  TFE_CHECK_NULL(out);
  out->dtype = TFE_DT; out->data = v->data; out->lay = v->lay; out->conj = v->conj; out->st = NULL;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(tensor_to_dyn)(const TFE_TY(tensor) *t, tfe_dyn *out) {
  TFE_CHECK_NULL(t);
  TFE_CHECK_NULL(out);
  tfe_storage_retain(t->st);
  out->dtype = TFE_DT; out->data = t->v.data; out->lay = t->v.lay; out->conj = t->v.conj; out->st = t->st;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(dyn_check_)(const tfe_dyn *d, const char *where) {
  if (d->dtype != TFE_DT)
    return TFE_FAIL_AT(TFE_ERR_DTYPE, where, "the handle holds %s elements, not " TFE_STR(TFE_S),
                     d->dtype == TFE_DT_CUSTOM ? "user-kind" : tfe_dtype_name(d->dtype));
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(dyn_as_view)(const tfe_dyn *d, TFE_TY(view) *out) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(out);
  TFE_TRY(TFE_FN(dyn_check_)(d, __func__));
  out->data = (TFE_T *)d->data; out->lay = d->lay; out->conj = d->conj;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(dyn_as_tensor)(const tfe_dyn *d, TFE_TY(tensor) *out) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(out);
  TFE_TRY(TFE_FN(dyn_check_)(d, __func__));
  tfe_storage_retain(d->st);
  out->v.data = (TFE_T *)d->data; out->v.lay = d->lay; out->v.conj = d->conj; out->st = d->st;
  return TFE_OK;
}
/* Element access for the dtype-tagged layer (dyn.h dispatches here by dtype). */
TFE_INTERNAL tfe_status TFE_FN(dyn_get_)(const tfe_dyn *d, const int64_t *idx, void *out) {
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(dyn_as_view)(d, &v));
  TFE_T x = TFE_FN(sr_zero)();
  TFE_TRY(TFE_FN(get)(&v, idx, &x));
  memcpy(out, &x, sizeof x);
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(dyn_set_)(const tfe_dyn *d, const int64_t *idx, const void *value) {
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(dyn_as_view)(d, &v));
  TFE_T x;
  memcpy(&x, value, sizeof x);
  return TFE_FN(set)(&v, idx, x);
}
/* Move a freshly made tensor into a dyn handle (its reference moves too). */
TFE_INTERNAL void TFE_FN(dyn_adopt_)(TFE_TY(tensor) *t, tfe_dyn *out) {
  out->dtype = TFE_DT; out->data = t->v.data; out->lay = t->v.lay; out->conj = t->v.conj; out->st = t->st;
}
#endif
