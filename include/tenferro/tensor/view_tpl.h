/* tenferro/view_tpl.h — zero-copy view operations of one kind; re-included per kind.
 *
 * Each op exists twice:
 *   tfe_OP_S(const tfe_view_S *in, ..., tfe_view_S *out)            non-owning view
 *   tfe_tensor_OP_S(const tfe_tensor_S *in, ..., tfe_tensor_S *out)  owning: out holds its own
 *       reference to the storage (release both), except when out == in, where the handle is
 *       transformed in place and keeps its one reference.
 * The work is done on the layout by tfe_layout_OP (tensor.h); see docs/tensor.md. Every op
 * returns a tfe_status and writes out only on success; out may equal in. */

/* ---- helpers ---------------------------------------------------------------------------------- */
#if !TFE__BODY_PHASE
#define TFE__VIEW_ARGS_OK(in, out) \
  do { TFE_CHECK_NULL(in); TFE_CHECK_NULL(out); } while (0)

/* ---- permute ---------------------------------------------------------------------------------- */
/* out axis k is in axis perm[k]. */
TFE_API tfe_status TFE_FN(permute)(const TFE_TY(view) *in, const int *perm, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_permute)(const TFE_TY(tensor) *in, const int *perm, TFE_TY(tensor) *out);

/* ---- reshape ---------------------------------------------------------------------------------- */
/* Same elements, new shape; the index is read in `order` (TFE_COLMAJOR by default). Zero-copy
 * only: TFE_ERR_STRIDES names the axes that would need a copy. */
TFE_API tfe_status TFE_FN(reshape)(const TFE_TY(view) *in, int rank, const int64_t *dims, tfe_order order,
                                   TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_reshape)(const TFE_TY(tensor) *in, int rank, const int64_t *dims, tfe_order order,
                                          TFE_TY(tensor) *out);

/* ---- broadcast -------------------------------------------------------------------------------- */
/* numpy rules (trailing axes aligned, size 1 stretches with stride 0). The result is read-only
 * in the sense that writes through it are refused (TFE_ERR_OVERLAP). */
TFE_API tfe_status TFE_FN(broadcast)(const TFE_TY(view) *in, int rank, const int64_t *dims, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_broadcast)(const TFE_TY(tensor) *in, int rank, const int64_t *dims,
                                            TFE_TY(tensor) *out);

/* ---- diagonal --------------------------------------------------------------------------------- */
/* Axes a1, a2 (equal sizes) become one axis at min(a1, a2) with stride s1 + s2. */
TFE_API tfe_status TFE_FN(diagonal)(const TFE_TY(view) *in, int a1, int a2, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_diagonal)(const TFE_TY(tensor) *in, int a1, int a2, TFE_TY(tensor) *out);
/* General merge: input axis k goes to output axis map[k] ("iijkj" -> map {0,0,1,2,1}). */
TFE_API tfe_status TFE_FN(diagonal_map)(const TFE_TY(view) *in, const int *map, int out_rank, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_diagonal_map)(const TFE_TY(tensor) *in, const int *map, int out_rank,
                                               TFE_TY(tensor) *out);

/* ---- slice ------------------------------------------------------------------------------------ */
/* start[k]:stop[k]:step[k] on every axis (step NULL: all 1). No clamping, no wrap-around:
 * out of range is TFE_ERR_BOUNDS (rules in tensor.h, tfe__slice1). */
TFE_API tfe_status TFE_FN(slice)(const TFE_TY(view) *in, const int64_t *start, const int64_t *stop,
                                 const int64_t *step, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_slice)(const TFE_TY(tensor) *in, const int64_t *start, const int64_t *stop,
                                        const int64_t *step, TFE_TY(tensor) *out);
/* One axis: start:stop:step. */
TFE_API tfe_status TFE_FN(slice_axis)(const TFE_TY(view) *in, int axis, int64_t start, int64_t stop, int64_t step,
                                      TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_slice_axis)(const TFE_TY(tensor) *in, int axis, int64_t start, int64_t stop,
                                             int64_t step, TFE_TY(tensor) *out);

/* ---- select ----------------------------------------------------------------------------------- */
/* Fix axis at index, dropping the axis. */
TFE_API tfe_status TFE_FN(select)(const TFE_TY(view) *in, int axis, int64_t index, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_select)(const TFE_TY(tensor) *in, int axis, int64_t index, TFE_TY(tensor) *out);

/* ---- squeeze / unsqueeze ---------------------------------------------------------------------- */
/* Drop a size-1 axis (TFE_ALL_AXES: every size-1 axis). */
TFE_API tfe_status TFE_FN(squeeze)(const TFE_TY(view) *in, int axis, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_squeeze)(const TFE_TY(tensor) *in, int axis, TFE_TY(tensor) *out);
/* Insert a size-1 axis before position axis (0..rank). */
TFE_API tfe_status TFE_FN(unsqueeze)(const TFE_TY(view) *in, int axis, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_unsqueeze)(const TFE_TY(tensor) *in, int axis, TFE_TY(tensor) *out);

/* ---- conj ------------------------------------------------------------------------------------- */
/* Toggle the lazy-conjugate flag (tfe_get_S and the kernels apply it when reading). For real
 * kinds sr_conj is the identity, so the flag changes nothing observable. */
TFE_API tfe_status TFE_FN(conj)(const TFE_TY(view) *in, TFE_TY(view) *out);
TFE_API tfe_status TFE_FN(tensor_conj)(const TFE_TY(tensor) *in, TFE_TY(tensor) *out);

/* ---- split ------------------------------------------------------------------------------------ */
/* Cut axis into nparts consecutive sub-views of sizes[0..nparts-1] (summing to its size). The
 * parts are pairwise disjoint when in does not overlap itself. outs has nparts entries. */
TFE_API tfe_status TFE_FN(split)(const TFE_TY(view) *in, int axis, int nparts, const int64_t *sizes,
                                 TFE_TY(view) *outs);
TFE_API tfe_status TFE_FN(tensor_split)(const TFE_TY(tensor) *in, int axis, int nparts, const int64_t *sizes,
                                        TFE_TY(tensor) *outs);

/* ---- overlap checks --------------------------------------------------------------------------- */
/* Do a and b share an element address? *res: TFE_DISJOINT / TFE_OVERLAPS (both exact) or
 * TFE_MAYBE_OVERLAPS (search budget exhausted: treat as overlapping). Views into different
 * buffers are compared by address. */
TFE_API tfe_status TFE_FN(views_overlap)(const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_overlap *res);
/* Do two indices of v address the same element? (exact unless the budget runs out) */
TFE_API tfe_status TFE_FN(self_overlap)(const TFE_TY(view) *v, tfe_overlap *res);
/* TFE_OK when v may be written (every element has its own address), else TFE_ERR_OVERLAP. */
TFE_API tfe_status TFE_FN(check_writable)(const TFE_TY(view) *v);

#undef TFE__VIEW_ARGS_OK
#else /* bodies */
TFE_INTERNAL tfe_status TFE_FN(view_put_)(const TFE_TY(view) *in, const tfe_layout *L, TFE_TY(view) *out) {
  TFE_TY(view) r;
  r.data = in->data;
  r.lay = *L;
  r.conj = in->conj;
  *out = r;
  return TFE_OK;
}
/* out becomes an owning handle on in's storage with view v (one new reference unless out == in). */
TFE_INTERNAL tfe_status TFE_FN(tensor_put_)(const TFE_TY(tensor) *in, const TFE_TY(view) *v, TFE_TY(tensor) *out) {
  tfe_storage *st = in->st;
  if (out != in) tfe_storage_retain(st);
  out->v = *v;
  out->st = st;
  return TFE_OK;
}
#define TFE__VIEW_ARGS_OK(in, out) \
  do { TFE_CHECK_NULL(in); TFE_CHECK_NULL(out); } while (0)
TFE_API tfe_status TFE_FN(permute)(const TFE_TY(view) *in, const int *perm, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_permute(&in->lay, perm, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_permute)(const TFE_TY(tensor) *in, const int *perm, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(permute)(&in->v, perm, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(reshape)(const TFE_TY(view) *in, int rank, const int64_t *dims, tfe_order order,
                                   TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_reshape(&in->lay, rank, dims, order, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_reshape)(const TFE_TY(tensor) *in, int rank, const int64_t *dims, tfe_order order,
                                          TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(reshape)(&in->v, rank, dims, order, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(broadcast)(const TFE_TY(view) *in, int rank, const int64_t *dims, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_broadcast(&in->lay, rank, dims, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_broadcast)(const TFE_TY(tensor) *in, int rank, const int64_t *dims,
                                            TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(broadcast)(&in->v, rank, dims, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(diagonal)(const TFE_TY(view) *in, int a1, int a2, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_diagonal(&in->lay, a1, a2, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_diagonal)(const TFE_TY(tensor) *in, int a1, int a2, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(diagonal)(&in->v, a1, a2, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(diagonal_map)(const TFE_TY(view) *in, const int *map, int out_rank, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_diagonal_map(&in->lay, map, out_rank, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_diagonal_map)(const TFE_TY(tensor) *in, const int *map, int out_rank,
                                               TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(diagonal_map)(&in->v, map, out_rank, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(slice)(const TFE_TY(view) *in, const int64_t *start, const int64_t *stop,
                                 const int64_t *step, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_slice(&in->lay, start, stop, step, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_slice)(const TFE_TY(tensor) *in, const int64_t *start, const int64_t *stop,
                                        const int64_t *step, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(slice)(&in->v, start, stop, step, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(slice_axis)(const TFE_TY(view) *in, int axis, int64_t start, int64_t stop, int64_t step,
                                      TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_slice_axis(&in->lay, axis, start, stop, step, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_slice_axis)(const TFE_TY(tensor) *in, int axis, int64_t start, int64_t stop,
                                             int64_t step, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(slice_axis)(&in->v, axis, start, stop, step, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(select)(const TFE_TY(view) *in, int axis, int64_t index, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_select(&in->lay, axis, index, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_select)(const TFE_TY(tensor) *in, int axis, int64_t index, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(select)(&in->v, axis, index, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(squeeze)(const TFE_TY(view) *in, int axis, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_squeeze(&in->lay, axis, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_squeeze)(const TFE_TY(tensor) *in, int axis, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(squeeze)(&in->v, axis, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(unsqueeze)(const TFE_TY(view) *in, int axis, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  tfe_layout L;
  TFE_TRY(tfe_layout_unsqueeze(&in->lay, axis, &L));
  return TFE_FN(view_put_)(in, &L, out);
}
TFE_API tfe_status TFE_FN(tensor_unsqueeze)(const TFE_TY(tensor) *in, int axis, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(unsqueeze)(&in->v, axis, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(conj)(const TFE_TY(view) *in, TFE_TY(view) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) r = *in;
  r.conj = !in->conj;
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(tensor_conj)(const TFE_TY(tensor) *in, TFE_TY(tensor) *out) {
  TFE__VIEW_ARGS_OK(in, out);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(conj)(&in->v, &v));
  return TFE_AS_API(TFE_FN(tensor_put_)(in, &v, out));
}
TFE_API tfe_status TFE_FN(split)(const TFE_TY(view) *in, int axis, int nparts, const int64_t *sizes,
                                 TFE_TY(view) *outs) {
  TFE_CHECK_NULL(in);
  TFE_TRY(tfe__split_ok(&in->lay, axis, nparts, sizes, outs, __func__));
  TFE_TY(view) base = *in; /* outs may alias in */
  int64_t at = 0;
  for (int p = 0; p < nparts; p++) {
    outs[p] = base;
    outs[p].lay = tfe__split_part(&base.lay, axis, sizes[p], &at);
  }
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(tensor_split)(const TFE_TY(tensor) *in, int axis, int nparts, const int64_t *sizes,
                                        TFE_TY(tensor) *outs) {
  TFE_CHECK_NULL(in);
  TFE_TRY(tfe__split_ok(&in->v.lay, axis, nparts, sizes, outs, __func__));
  TFE_TY(tensor) base = *in; /* outs may alias in: then that entry reuses in's reference */
  int64_t at = 0;
  for (int p = 0; p < nparts; p++) {
    if (&outs[p] != in) tfe_storage_retain(base.st);
    outs[p] = base;
    outs[p].v.lay = tfe__split_part(&base.v.lay, axis, sizes[p], &at);
  }
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(views_overlap)(const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_overlap *res) {
  TFE_CHECK_NULL(a);
  TFE_CHECK_NULL(b);
  TFE_CHECK_NULL(res);
  TFE_TRY(tfe__lay_ok(&a->lay, __func__, "a"));
  TFE_TRY(tfe__lay_ok(&b->lay, __func__, "b"));
  int64_t bytes = (int64_t)((intptr_t)b->data - (intptr_t)a->data);
  if (bytes % (int64_t)sizeof(TFE_T) == 0) {
    *res = tfe_layout_overlap(&a->lay, &b->lay, bytes / (int64_t)sizeof(TFE_T));
    return TFE_OK;
  }
  /* Misaligned bases: only the byte ranges can prove disjointness. */
  int64_t alo, ahi, blo, bhi, sz = (int64_t)sizeof(TFE_T);
  if (!tfe_layout_extent(&a->lay, &alo, &ahi) || !tfe_layout_extent(&b->lay, &blo, &bhi)) { *res = TFE_DISJOINT; return TFE_OK; }
  intptr_t pa = (intptr_t)a->data, pb = (intptr_t)b->data;
  bool apart = pa + (ahi + 1) * sz <= pb + blo * sz || pb + (bhi + 1) * sz <= pa + alo * sz;
  *res = apart ? TFE_DISJOINT : TFE_MAYBE_OVERLAPS;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(self_overlap)(const TFE_TY(view) *v, tfe_overlap *res) {
  TFE_CHECK_NULL(v);
  TFE_CHECK_NULL(res);
  TFE_TRY(tfe__lay_ok(&v->lay, __func__, "v"));
  *res = tfe_layout_self_overlap(&v->lay);
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(check_writable)(const TFE_TY(view) *v) {
  TFE_CHECK_NULL(v);
  return tfe_layout_check_writable(&v->lay);
}
#undef TFE__VIEW_ARGS_OK
#endif
