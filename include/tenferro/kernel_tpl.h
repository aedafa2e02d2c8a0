/* tenferro/kernel_tpl.h — kernels of one kind; re-included per kind (no include guard).
 * Parameters: TFE_S, TFE_T, TFE_R, TFE_ALG, TFE_CPLX, TFE_FLOAT. Generic code uses only the
 * tfe_sr_* semiring functions so that a user kind (TFE_ALG_CUSTOM) stamps too. */

/* Whether reading src and writing dst needs a conjugation (the conj flags differ). */
TFE_INTERNAL bool TFE_FN(k_conj_)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_CPLX
  (void)dst; (void)src;
  return false;
#else
  return dst->conj != src->conj;
#endif
}

/* Plain odometer copy: the reference path for tiny tensors. */
TFE_INTERNAL void TFE_FN(k_copy_odo_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, bool cj) {
  int r = dst->lay.rank;
  int64_t idx[TFE_MAX_RANK] = {0};
  TFE_T *d = dst->data + dst->lay.offset;
  const TFE_T *s = src->data + src->lay.offset;
  for (;;) {
    *d = cj ? TFE_FN(sr_conj)(*s) : *s;
    int k = 0;
    for (; k < r; k++) {
      if (++idx[k] < dst->lay.dims[k]) { d += dst->lay.strides[k]; s += src->lay.strides[k]; break; }
      d -= (dst->lay.dims[k] - 1) * dst->lay.strides[k];
      s -= (src->lay.dims[k] - 1) * src->lay.strides[k];
      idx[k] = 0;
    }
    if (k == r) return;
  }
}

/* Copy src into dst (same dims). src may have any strides; the result read through dst
 * (honouring dst->conj) equals src read through src->conj. */
TFE_API tfe_status TFE_FN(copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
  TFE_CHECK_NULL(dst);
  TFE_CHECK_NULL(src);
  int64_t n = 0;
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", NULL));
  TFE_TRY(tfe__same_shape(&dst->lay, &src->lay, __func__));
  TFE_TRY(tfe__check_dst(&dst->lay, dst->data, __func__, &n));
  if (n == 0) return TFE_OK;
  if (tfe__views_conflict(dst->data, &dst->lay, src->data, &src->lay, sizeof(TFE_T)))
    return TFE_FAIL(TFE_ERR_OVERLAP, "destination overlaps the source");
  TFE_FN(k_copy_odo_)(dst, src, TFE_FN(k_conj_)(dst, src));
  return TFE_OK;
}

/* A new dense tensor (column- or row-major) holding the values of src, conjugation applied
 * (the result has conj = false). *out is written only on success. */
TFE_API tfe_status TFE_FN(contiguous)(const TFE_TY(view) *src, tfe_order order, TFE_TY(tensor) *out) {
  TFE_CHECK_NULL(src);
  TFE_CHECK_NULL(out);
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR)
    return TFE_FAIL(TFE_ERR_INVALID, "order %d is neither TFE_COLMAJOR nor TFE_ROWMAJOR", (int)order);
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", NULL));
  TFE_TY(tensor) t = {0};
  TFE_TRY(TFE_FN(empty)(&t, src->lay.rank, src->lay.dims, order));
  tfe_status st = TFE_FN(copy)(&t.v, src);
  if (st) { TFE_FN(tensor_release)(&t); return st; }
  *out = t;
  return TFE_OK;
}
