/* tenferro/ad/wrappers_tpl.h — the typed wrappers that record one operation each on a tape
 * (tfe_ad_einsum_S, tfe_ad_unary_S, tfe_ad_reduce_S, the linalg ones, ...) for one float kind;
 * re-included per kind by ad.h after tape_tpl.h. */
#if !TFE__BODY_PHASE
#if TFE_FLOAT
/* ---- convenience wrappers ---------------------------------------------------------------------- */
/* C[lc] = sum A[la] B[lb] (b < 0: unary, lb ignored); integer labels, repeats allowed. */
TFE_API tfe_status TFE_FN(ad_einsum)(TFE_TY(tape) *t, int a, const int32_t *la, int b, const int32_t *lb, int nc,
                                     const int32_t *lc, int *out);
/* The einsum room's string notation ("ij,jk->ik", "ii->", "ij->ji"; b < 0: one operand):
 * parsed by the einsum parser into code-point labels, then recorded as tfe_ad_einsum_S.
 * Without "->" the output is numpy's: labels written once, in increasing code point order.
 * No ellipsis. */
TFE_API tfe_status TFE_FN(ad_einsum_str)(TFE_TY(tape) *t, const char *expr, int a, int b, int *out);
TFE_API tfe_status TFE_FN(ad_unary)(TFE_TY(tape) *t, int a, tfe_unop op, TFE_T param, int *out);
TFE_API tfe_status TFE_FN(ad_binary)(TFE_TY(tape) *t, int a, int b, tfe_binop op, int *out);
TFE_API tfe_status TFE_FN(ad_scale)(TFE_TY(tape) *t, int a, TFE_T alpha, int *out);
/* Sum over axes[0..naxes) (naxes < 0: everything, a rank-0 result). */
TFE_API tfe_status TFE_FN(ad_sum)(TFE_TY(tape) *t, int a, int naxes, const int *axes, int *out);
TFE_API tfe_status TFE_FN(ad_permute)(TFE_TY(tape) *t, int a, const int *perm, int *out);
/* Column-major reshape. */
TFE_API tfe_status TFE_FN(ad_reshape)(TFE_TY(tape) *t, int a, int rank, const int64_t *dims, int *out);
/* start:stop:step on every axis (step NULL: 1). */
TFE_API tfe_status TFE_FN(ad_slice)(TFE_TY(tape) *t, int a, const int64_t *start, const int64_t *stop,
                                    const int64_t *step, int *out);
/* numpy broadcast to (rank, dims). */
TFE_API tfe_status TFE_FN(ad_broadcast)(TFE_TY(tape) *t, int a, int rank, const int64_t *dims, int *out);
TFE_API tfe_status TFE_FN(ad_diagonal)(TFE_TY(tape) *t, int a, int a1, int a2, int *out);
/* A one-input linear algebra op (svd, qr, lq, eigh, eig, lu, cholesky, inv, det, slogdet,
 * slogdet_sign, pinv, expm, polar): out receives tfe_ad_op_nout(op) ids. */
TFE_API tfe_status TFE_FN(ad_linalg)(TFE_TY(tape) *t, tfe_ad_op op, int a, int *out);
TFE_API tfe_status TFE_FN(ad_svd_trunc)(TFE_TY(tape) *t, int a, const tfe_trunc *tr, int *out);
TFE_API tfe_status TFE_FN(ad_solve)(TFE_TY(tape) *t, int a, int b, int *out);
TFE_API tfe_status TFE_FN(ad_norm)(TFE_TY(tape) *t, int a, tfe_norm_kind kind, int *out);
/* X = A^+ B (minimum-norm least squares). */
TFE_API tfe_status TFE_FN(ad_lstsq)(TFE_TY(tape) *t, int a, int b, int *out);
/* X = T^-1 B with T the lower (or upper) triangle of A, unit diagonal when unit_diag. */
TFE_API tfe_status TFE_FN(ad_trisolve)(TFE_TY(tape) *t, int a, int b, bool lower, bool unit_diag, int *out);
/* A kernel-room reduction (tfe_redop) over axes[0..naxes) (naxes < 0: all, rank-0 result). */
TFE_API tfe_status TFE_FN(ad_reduce)(TFE_TY(tape) *t, int a, tfe_redop op, int naxes, const int *axes, int *out);
#endif /* TFE_FLOAT */
#else /* bodies */
#if TFE_FLOAT
TFE_API tfe_status TFE_FN(ad_einsum)(TFE_TY(tape) *t, int a, const int32_t *la, int b, const int32_t *lb, int nc,
                                     const int32_t *lc, int *out) {
  TFE_TRY(TFE_FN(tape_id_)(t, a, __func__));
  if (b >= 0) TFE_TRY(TFE_FN(tape_id_)(t, b, __func__));
  int na = t->val[a].v.lay.rank, nb = b >= 0 ? t->val[b].v.lay.rank : 0;
  if ((na && !la) || (nb && !lb) || (nc && !lc)) return TFE_FAIL(TFE_ERR_NULL, "a label array is NULL");
  if (nc < 0 || nc > TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "output has %d labels", nc);
  tfe_ad_params p = tfe_ad_einsum_params(na, la, nb, lb, nc, lc);
  int in[2] = {a, b};
  return TFE_FN(ad_op)(t, TFE_AD_EINSUM, &p, b >= 0 ? 2 : 1, in, out);
}
/* Output labels of the implicit form (no "->"): labels seen exactly once, ascending. */
TFE_INTERNAL int TFE_FN(ad_implicit_out_)(const tfe__ein_expr *e, int32_t *lc) {
  int nc = 0;
  for (int k = 0; k < e->n; k++)
    for (int i = 0; i < e->t[k].nlab; i++) {
      int32_t l = e->t[k].lab[i], cnt = 0;
      for (int q = 0; q < e->n; q++)
        for (int j = 0; j < e->t[q].nlab; j++) cnt += e->t[q].lab[j] == l;
      if (cnt != 1) continue;
      int at = nc; /* insertion sort */
      while (at > 0 && lc[at - 1] > l) { lc[at] = lc[at - 1]; at--; }
      lc[at] = l;
      if (++nc == TFE_MAX_RANK) return nc;
    }
  return nc;
}
TFE_API tfe_status TFE_FN(ad_einsum_str)(TFE_TY(tape) *t, const char *expr, int a, int b, int *out) {
  TFE_TRY(TFE_FN(tape_id_)(t, a, __func__));
  if (b >= 0) TFE_TRY(TFE_FN(tape_id_)(t, b, __func__));
  TFE_CHECK_NULL(out);
  tfe__ein_expr e;
  TFE_TRY(tfe__ein_parse(expr, &e));
  int nin = b >= 0 ? 2 : 1;
  tfe_status st = TFE_OK;
  if (e.n != nin) st = TFE_FAIL(TFE_ERR_INVALID, "'%s' has %d operand(s), %d given", expr, e.n, nin);
  for (int k = 0; !st && k < e.n; k++) {
    const tfe__ein_term *tm = &e.t[k];
    int r = t->val[k ? b : a].v.lay.rank;
    if (tm->ell >= 0) st = TFE_FAIL(TFE_ERR_UNSUPPORTED, "'%s': no ellipsis on the tape (operand %d)", expr, k);
    else if (tm->nlab != r)
      st = TFE_FAIL(TFE_ERR_RANK, "'%s': operand %d has %d labels but rank %d", expr, k, tm->nlab, r);
  }
  if (!st && e.has_out && e.out.ell >= 0) st = TFE_FAIL(TFE_ERR_UNSUPPORTED, "'%s': no ellipsis on the tape", expr);
  if (!st && e.has_out && e.out.nlab > TFE_MAX_RANK) st = TFE_FAIL(TFE_ERR_RANK, "'%s': output has %d labels", expr, e.out.nlab);
  if (!st) {
    int32_t lc[TFE_MAX_RANK];
    int nc = e.has_out ? e.out.nlab : TFE_FN(ad_implicit_out_)(&e, lc);
    if (e.has_out) for (int i = 0; i < nc; i++) lc[i] = e.out.lab[i];
    st = TFE_FN(ad_einsum)(t, a, e.t[0].lab, b, nin == 2 ? e.t[1].lab : NULL, nc, lc, out);
  }
  tfe__ein_expr_free(&e);
  return st;
}
TFE_API tfe_status TFE_FN(ad_unary)(TFE_TY(tape) *t, int a, tfe_unop op, TFE_T param, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.unop = (int)op;
  p.scalar_re = (double)TFE_FN(ad_re_)(param);
  p.scalar_im = (double)TFE_FN(ad_im_)(param);
  return TFE_FN(ad_op)(t, TFE_AD_UNARY, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_binary)(TFE_TY(tape) *t, int a, int b, tfe_binop op, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.binop = (int)op;
  int in[2] = {a, b};
  return TFE_FN(ad_op)(t, TFE_AD_BINARY, &p, 2, in, out);
}
TFE_API tfe_status TFE_FN(ad_scale)(TFE_TY(tape) *t, int a, TFE_T alpha, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.scalar_re = (double)TFE_FN(ad_re_)(alpha);
  p.scalar_im = (double)TFE_FN(ad_im_)(alpha);
  return TFE_FN(ad_op)(t, TFE_AD_SCALE, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_sum)(TFE_TY(tape) *t, int a, int naxes, const int *axes, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  if (naxes > TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "%d axes", naxes);
  if (naxes > 0 && !axes) return TFE_FAIL(TFE_ERR_NULL, "argument 'axes' is NULL");
  p.naxes = naxes < 0 ? -1 : naxes;
  for (int i = 0; i < naxes; i++) p.axes[i] = axes[i];
  return TFE_FN(ad_op)(t, TFE_AD_SUM, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_permute)(TFE_TY(tape) *t, int a, const int *perm, int *out) {
  TFE_TRY(TFE_FN(tape_id_)(t, a, __func__));
  TFE_CHECK_NULL(perm);
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.naxes = t->val[a].v.lay.rank;
  for (int i = 0; i < p.naxes; i++) p.axes[i] = perm[i];
  return TFE_FN(ad_op)(t, TFE_AD_PERMUTE, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_reshape)(TFE_TY(tape) *t, int a, int rank, const int64_t *dims, int *out) {
  if (rank < 0 || rank > TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "rank %d outside [0, %d]", rank, TFE_MAX_RANK);
  if (rank > 0 && !dims) return TFE_FAIL(TFE_ERR_NULL, "argument 'dims' is NULL");
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.rank = rank;
  for (int i = 0; i < rank; i++) p.dims[i] = dims[i];
  return TFE_FN(ad_op)(t, TFE_AD_RESHAPE, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_slice)(TFE_TY(tape) *t, int a, const int64_t *start, const int64_t *stop,
                                    const int64_t *step, int *out) {
  TFE_TRY(TFE_FN(tape_id_)(t, a, __func__));
  int r = t->val[a].v.lay.rank;
  if (r > 0 && (!start || !stop)) return TFE_FAIL(TFE_ERR_NULL, "argument 'start' or 'stop' is NULL");
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.rank = r;
  for (int i = 0; i < r; i++) { p.start[i] = start[i]; p.stop[i] = stop[i]; p.step[i] = step ? step[i] : 1; }
  return TFE_FN(ad_op)(t, TFE_AD_SLICE, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_broadcast)(TFE_TY(tape) *t, int a, int rank, const int64_t *dims, int *out) {
  if (rank < 0 || rank > TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "rank %d outside [0, %d]", rank, TFE_MAX_RANK);
  if (rank > 0 && !dims) return TFE_FAIL(TFE_ERR_NULL, "argument 'dims' is NULL");
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.rank = rank;
  for (int i = 0; i < rank; i++) p.dims[i] = dims[i];
  return TFE_FN(ad_op)(t, TFE_AD_BROADCAST, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_diagonal)(TFE_TY(tape) *t, int a, int a1, int a2, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.naxes = 2; p.axes[0] = a1; p.axes[1] = a2;
  return TFE_FN(ad_op)(t, TFE_AD_DIAGONAL, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_linalg)(TFE_TY(tape) *t, tfe_ad_op op, int a, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  if (op < TFE_AD_SVD || op == TFE_AD_SVD_TRUNC || op == TFE_AD_SOLVE || op == TFE_AD_NORM || op == TFE_AD_REDUCE ||
      op == TFE_AD_LSTSQ || op == TFE_AD_TRISOLVE || op >= TFE_AD_OP_COUNT_)
    return TFE_FAIL(TFE_ERR_INVALID, "'%s' is not a one-input linear algebra op without parameters", tfe_ad_op_name(op));
  return TFE_FN(ad_op)(t, op, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_svd_trunc)(TFE_TY(tape) *t, int a, const tfe_trunc *tr, int *out) {
  TFE_CHECK_NULL(tr);
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.trunc = *tr;
  return TFE_FN(ad_op)(t, TFE_AD_SVD_TRUNC, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_solve)(TFE_TY(tape) *t, int a, int b, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  int in[2] = {a, b};
  return TFE_FN(ad_op)(t, TFE_AD_SOLVE, &p, 2, in, out);
}
TFE_API tfe_status TFE_FN(ad_norm)(TFE_TY(tape) *t, int a, tfe_norm_kind kind, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.norm = (int)kind;
  return TFE_FN(ad_op)(t, TFE_AD_NORM, &p, 1, &a, out);
}
TFE_API tfe_status TFE_FN(ad_lstsq)(TFE_TY(tape) *t, int a, int b, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  int in[2] = {a, b};
  return TFE_FN(ad_op)(t, TFE_AD_LSTSQ, &p, 2, in, out);
}
TFE_API tfe_status TFE_FN(ad_trisolve)(TFE_TY(tape) *t, int a, int b, bool lower, bool unit_diag, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.lower = lower; p.unit_diag = unit_diag;
  int in[2] = {a, b};
  return TFE_FN(ad_op)(t, TFE_AD_TRISOLVE, &p, 2, in, out);
}
TFE_API tfe_status TFE_FN(ad_reduce)(TFE_TY(tape) *t, int a, tfe_redop op, int naxes, const int *axes, int *out) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  if (naxes > TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "%d axes", naxes);
  if (naxes > 0 && !axes) return TFE_FAIL(TFE_ERR_NULL, "argument 'axes' is NULL");
  p.redop = (int)op;
  p.naxes = naxes < 0 ? -1 : naxes;
  for (int i = 0; i < naxes; i++) p.axes[i] = axes[i];
  return TFE_FN(ad_op)(t, TFE_AD_REDUCE, &p, 1, &a, out);
}
#endif /* TFE_FLOAT */
#endif
