/* tenferro/tensor_tpl.h — typed views and tensors of one kind; re-included per kind. */

/* Non-owning view. */
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

TFE_API void TFE_FN(tensor_release)(TFE_TY(tensor) *t) {
  if (!t) return;
  tfe_storage_release(t->st);
  t->st = NULL;
  t->v.data = NULL;
  t->v.lay.rank = 0;
}
/* A second owning handle to the same storage and view. */
TFE_API tfe_status TFE_FN(tensor_retain)(const TFE_TY(tensor) *t, TFE_TY(tensor) *out) {
  TFE_CHECK_NULL(t);
  TFE_CHECK_NULL(out);
  tfe_storage_retain(t->st);
  *out = *t;
  return TFE_OK;
}

/* New uninitialized dense tensor. */
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
/* zeros/ones are the semiring's zero and one (max-plus zeros are -inf). */
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
/* Element get/set by index with bounds checks; get applies the lazy conjugate. */
TFE_API tfe_status TFE_FN(get)(const TFE_TY(view) *v, const int64_t *idx, TFE_T *out) {
  TFE_CHECK_NULL(v);
  TFE_CHECK_NULL(out);
  if (v->lay.rank > 0 && !idx) return TFE_FAIL(TFE_ERR_NULL, "argument 'idx' is NULL");
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
  for (int i = 0; i < v->lay.rank; i++)
    if (idx[i] < 0 || idx[i] >= v->lay.dims[i])
      return TFE_FAIL(TFE_ERR_BOUNDS, "index %lld outside [0, %lld) on axis %d",
                      (long long)idx[i], (long long)v->lay.dims[i], i);
  *TFE_FN(view_ptr_)(v, idx) = v->conj ? TFE_FN(sr_conj)(value) : value;
  return TFE_OK;
}
