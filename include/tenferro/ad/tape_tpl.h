/* tenferro/ad/tape_tpl.h — the stateless rule entries (tfe_ad_primal_S, tfe_frule_S,
 * tfe_rrule_S) and the tape (reverse mode, with forward-mode tangents carried along) for one
 * float kind; plus the tropical matmul backward for the tropical kinds. Re-included per kind.
 * The typed wrappers that record one operation each (tfe_ad_einsum_S, ...) are in
 * wrappers_tpl.h. */
#if !TFE__BODY_PHASE
#if TFE_FLOAT

/* Work area of one rule call: up to 2 inputs, 3 outputs, their tangents or cotangents. */
typedef struct TFE_TY(ad_call_) {
  TFE_TY(tensor) tmp[10];
  TFE_TY(view) v[10];
  const TFE_TY(view) *x[2], *dx[2], *y[3], *dy[3];
} TFE_TY(ad_call_);

/* The primal of op: y[0..nout) are new dense tensors (the values the rules expect). */
TFE_API tfe_status TFE_FN(ad_primal)(tfe_ad_op op, const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                     TFE_TY(tensor) *y);

/* Forward rule: tangents dy[0..nout) of the outputs y (from tfe_ad_primal) for input tangents
 * dx (an entry may be NULL: zero). */
TFE_API tfe_status TFE_FN(frule)(tfe_ad_op op, const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                 const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy);

/* Reverse rule: cotangents dx[0..nin) of the inputs for output cotangents dy (an entry may be
 * NULL: zero). */
TFE_API tfe_status TFE_FN(rrule)(tfe_ad_op op, const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                 const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx);

/* ---- the tape ---------------------------------------------------------------------------------- */
typedef struct TFE_TY(ad_node) {
  tfe_ad_op op;
  tfe_ad_params p;
  int nin, nout, in[2], out[3];
} TFE_TY(ad_node);

/* Values, tangents and gradients by variable id; operations in recording order. Zero-initialize
 * (`tfe_tape_f64 t = {0};`), free with tfe_tape_free_S. Not thread-safe: one tape per thread. */
typedef struct TFE_TY(tape) {
  int nvars, capv, nnodes, capn;
  TFE_TY(tensor) *val, *tan, *grad; /* .st == NULL: absent */
  bool *leaf;
  TFE_TY(ad_node) *nodes;
} TFE_TY(tape);

TFE_API void TFE_FN(tape_free)(TFE_TY(tape) *t);

/* A leaf variable holding a dense copy of value; tangent (may be NULL) seeds forward mode. */
TFE_API tfe_status TFE_FN(ad_var)(TFE_TY(tape) *t, const TFE_TY(view) *value, const TFE_TY(view) *tangent, int *id);

/* A leaf holding a retained reference to value's storage (no copy) when value is dense
 * column-major and not lazily conjugated, else a dense copy (as tfe_ad_var_S). The caller must
 * not change value's elements while the tape lives: the rules read leaves during backward. */
TFE_API tfe_status TFE_FN(ad_var_ref)(TFE_TY(tape) *t, const TFE_TY(tensor) *value, const TFE_TY(view) *tangent, int *id);

/* Record op on variables in[0..nin); its outputs become variables out[0..nout). When an input
 * carries a tangent, the outputs get theirs from the forward rule. */
TFE_API tfe_status TFE_FN(ad_op)(TFE_TY(tape) *t, tfe_ad_op op, const tfe_ad_params *p, int nin, const int *in, int *out);

TFE_API const TFE_TY(view) *TFE_FN(ad_value)(const TFE_TY(tape) *t, int id);
/* Accumulated gradient of a leaf (NULL before any backward reached it). */
TFE_API const TFE_TY(view) *TFE_FN(ad_grad)(const TFE_TY(tape) *t, int id);
/* Forward-mode tangent (NULL when no input of its computation had one). */
TFE_API const TFE_TY(view) *TFE_FN(ad_tangent)(const TFE_TY(tape) *t, int id);
TFE_API void TFE_FN(ad_zero_grad)(TFE_TY(tape) *t);
/* The same as owning tensors of the tape (their storage says where they live: for values in
 * device memory, the handle to download through tfe_tensor_to_dyn_S + tfe_gpu_download). Owned
 * by the tape: do not release. */
TFE_API const TFE_TY(tensor) *TFE_FN(ad_value_tensor)(const TFE_TY(tape) *t, int id);
TFE_API const TFE_TY(tensor) *TFE_FN(ad_grad_tensor)(const TFE_TY(tape) *t, int id);
TFE_API const TFE_TY(tensor) *TFE_FN(ad_tangent_tensor)(const TFE_TY(tape) *t, int id);

/* Reverse pass from variable id with cotangent cot (NULL: id must hold one element, seeded with
 * 1). Gradients of leaves accumulate across calls (tfe_ad_zero_grad_S clears them); on error no
 * gradient changes. */
TFE_API tfe_status TFE_FN(ad_backward)(TFE_TY(tape) *t, int id, const TFE_TY(view) *cot);

#endif /* TFE_FLOAT */

/* ---- tropical matmul backward (max-plus, min-plus, max-times) ------------------------------ */
#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_R)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)
/* C = A B in the semiring for dense column-major A (m x k), B (k x n), keeping the winning k of
 * every C[i,j] in argmax (m x n, int64). */
TFE_API tfe_status TFE_FN(tropical_matmul)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *C,
                                           tfe_tensor_i64 *argmax);
/* Backward through the argmax: each C[i,j] depends on A[i,k*] and B[k*,j] only, so
 * gA[i,k*] += gC[i,j] dC/dA and gB[k*,j] += gC[i,j] dC/dB (1 for max-plus / min-plus,
 * B[k*,j] and A[i,k*] for max-times). Cotangents are of the real kind. */
TFE_API tfe_status TFE_FN(rrule_tropical_matmul)(const TFE_TY(view) *A, const TFE_TY(view) *B,
                                                 const tfe_view_i64 *argmax, const TFE_CAT(tfe_view_, TFE__RS) *gC,
                                                 TFE__RT *gA, TFE__RT *gB);
#undef TFE__RS
#undef TFE__RT
#endif
#else /* bodies */
#if TFE_FLOAT

/* ---- dispatch ----------------------------------------------------------------------------- */
TFE_INTERNAL bool TFE_FN(ad_lin_)(tfe_ad_op op) {
  return op == TFE_AD_PERMUTE || op == TFE_AD_RESHAPE || op == TFE_AD_SLICE || op == TFE_AD_BROADCAST ||
         op == TFE_AD_DIAGONAL;
}
TFE_INTERNAL TFE_TY(ad_primal_fn) TFE_FN(ad_primal_of_)(tfe_ad_op op) {
  switch (op) {
  case TFE_AD_EINSUM: return TFE_FN(ad_einsum_primal_);
  case TFE_AD_UNARY: return TFE_FN(ad_unary_primal_);
  case TFE_AD_BINARY: return TFE_FN(ad_binary_primal_);
  case TFE_AD_SCALE: return TFE_FN(ad_scale_primal_);
  case TFE_AD_SUM: return TFE_FN(ad_sum_primal_);
  case TFE_AD_PERMUTE: return TFE_FN(ad_permute_primal_);
  case TFE_AD_RESHAPE: return TFE_FN(ad_reshape_primal_);
  case TFE_AD_SLICE: return TFE_FN(ad_slice_primal_);
  case TFE_AD_BROADCAST: return TFE_FN(ad_broadcast_primal_);
  case TFE_AD_DIAGONAL: return TFE_FN(ad_diagonal_primal_);
  case TFE_AD_SVD: return TFE_FN(ad_svd_primal_);
  case TFE_AD_SVD_TRUNC: return TFE_FN(ad_svdt_primal_);
  case TFE_AD_QR: return TFE_FN(ad_qr_primal_);
  case TFE_AD_LQ: return TFE_FN(ad_lq_primal_);
  case TFE_AD_EIGH: return TFE_FN(ad_eigh_primal_);
  case TFE_AD_EIG: return TFE_FN(ad_eig_primal_);
  case TFE_AD_LU: return TFE_FN(ad_lu_primal_);
  case TFE_AD_CHOLESKY: return TFE_FN(ad_chol_primal_);
  case TFE_AD_SOLVE: return TFE_FN(ad_solve_primal_);
  case TFE_AD_INV: return TFE_FN(ad_inv_primal_);
  case TFE_AD_DET: return TFE_FN(ad_det_primal_);
  case TFE_AD_SLOGDET: return TFE_FN(ad_slogdet_primal_);
  case TFE_AD_PINV: return TFE_FN(ad_pinv_primal_);
  case TFE_AD_NORM: return TFE_FN(ad_norm_primal_);
  case TFE_AD_EXPM: return TFE_FN(ad_expm_primal_);
  case TFE_AD_POLAR: return TFE_FN(ad_polar_primal_);
  case TFE_AD_REDUCE: return TFE_FN(ad_reduce_primal_);
  case TFE_AD_LSTSQ: return TFE_FN(ad_lstsq_primal_);
  case TFE_AD_TRISOLVE: return TFE_FN(ad_trisolve_primal_);
  case TFE_AD_SLOGDET_SIGN: return TFE_FN(ad_slogdet_sign_primal_);
  default: return NULL;
  }
}
TFE_INTERNAL TFE_TY(ad_frule_fn) TFE_FN(ad_frule_of_)(tfe_ad_op op) {
  switch (op) {
  case TFE_AD_EINSUM: return TFE_FN(ad_einsum_frule_);
  case TFE_AD_UNARY: return TFE_FN(ad_unary_frule_);
  case TFE_AD_BINARY: return TFE_FN(ad_binary_frule_);
  case TFE_AD_SCALE: return TFE_FN(ad_scale_frule_);
  case TFE_AD_SUM: return TFE_FN(ad_sum_frule_);
  case TFE_AD_SVD: return TFE_FN(ad_svd_frule_);
  case TFE_AD_SVD_TRUNC: return TFE_FN(ad_svdt_frule_);
  case TFE_AD_QR: return TFE_FN(ad_qr_frule_);
  case TFE_AD_LQ: return TFE_FN(ad_lq_frule_);
  case TFE_AD_EIGH: return TFE_FN(ad_eigh_frule_);
  case TFE_AD_EIG: return TFE_FN(ad_eig_frule_);
  case TFE_AD_LU: return TFE_FN(ad_lu_frule_);
  case TFE_AD_CHOLESKY: return TFE_FN(ad_chol_frule_);
  case TFE_AD_SOLVE: return TFE_FN(ad_solve_frule_);
  case TFE_AD_INV: return TFE_FN(ad_inv_frule_);
  case TFE_AD_DET: return TFE_FN(ad_det_frule_);
  case TFE_AD_SLOGDET: return TFE_FN(ad_slogdet_frule_);
  case TFE_AD_PINV: return TFE_FN(ad_pinv_frule_);
  case TFE_AD_NORM: return TFE_FN(ad_norm_frule_);
  case TFE_AD_EXPM: return TFE_FN(ad_expm_frule_);
  case TFE_AD_POLAR: return TFE_FN(ad_polar_frule_);
  case TFE_AD_REDUCE: return TFE_FN(ad_reduce_frule_);
  case TFE_AD_LSTSQ: return TFE_FN(ad_lstsq_frule_);
  case TFE_AD_TRISOLVE: return TFE_FN(ad_trisolve_frule_);
  case TFE_AD_SLOGDET_SIGN: return TFE_FN(ad_slogdet_sign_frule_);
  default: return NULL;
  }
}
TFE_INTERNAL TFE_TY(ad_rrule_fn) TFE_FN(ad_rrule_of_)(tfe_ad_op op) {
  switch (op) {
  case TFE_AD_EINSUM: return TFE_FN(ad_einsum_rrule_);
  case TFE_AD_UNARY: return TFE_FN(ad_unary_rrule_);
  case TFE_AD_BINARY: return TFE_FN(ad_binary_rrule_);
  case TFE_AD_SCALE: return TFE_FN(ad_scale_rrule_);
  case TFE_AD_SUM: return TFE_FN(ad_sum_rrule_);
  case TFE_AD_SVD: return TFE_FN(ad_svd_rrule_);
  case TFE_AD_SVD_TRUNC: return TFE_FN(ad_svdt_rrule_);
  case TFE_AD_QR: return TFE_FN(ad_qr_rrule_);
  case TFE_AD_LQ: return TFE_FN(ad_lq_rrule_);
  case TFE_AD_EIGH: return TFE_FN(ad_eigh_rrule_);
  case TFE_AD_EIG: return TFE_FN(ad_eig_rrule_);
  case TFE_AD_LU: return TFE_FN(ad_lu_rrule_);
  case TFE_AD_CHOLESKY: return TFE_FN(ad_chol_rrule_);
  case TFE_AD_SOLVE: return TFE_FN(ad_solve_rrule_);
  case TFE_AD_INV: return TFE_FN(ad_inv_rrule_);
  case TFE_AD_DET: return TFE_FN(ad_det_rrule_);
  case TFE_AD_SLOGDET: return TFE_FN(ad_slogdet_rrule_);
  case TFE_AD_PINV: return TFE_FN(ad_pinv_rrule_);
  case TFE_AD_NORM: return TFE_FN(ad_norm_rrule_);
  case TFE_AD_EXPM: return TFE_FN(ad_expm_rrule_);
  case TFE_AD_POLAR: return TFE_FN(ad_polar_rrule_);
  case TFE_AD_REDUCE: return TFE_FN(ad_reduce_rrule_);
  case TFE_AD_LSTSQ: return TFE_FN(ad_lstsq_rrule_);
  case TFE_AD_TRISOLVE: return TFE_FN(ad_trisolve_rrule_);
  case TFE_AD_SLOGDET_SIGN: return TFE_FN(ad_slogdet_sign_rrule_);
  default: return NULL;
  }
}

/* Which rules run in a backend's memory (docs/ad.md "Device tensors"): einsum, the elementwise
 * ops, scale, sum, the view ops, solve, trisolve and inv (all three rules); svd, qr, eigh and
 * cholesky (primal on the backend's linalg slot, forward and reverse in dev_rules_tpl.h); lu of
 * any shape and eig (primal on the linalg slot, forward and reverse in dev_rules3_tpl.h); det,
 * slogdet, slogdet_sign, lq, pinv, polar, lstsq, svd_trunc, expm, the norms and the reductions
 * (all three rules, dev_rules2_tpl.h).
 * which: 0 primal, 1 frule, 2 rrule. */
TFE_INTERNAL bool TFE_FN(ad_dev_native_)(tfe_ad_op op, const tfe_ad_params *p, int which, const TFE_TY(view) *x0) {
  (void)p, (void)which, (void)x0;
  switch (op) {
  case TFE_AD_EINSUM: case TFE_AD_UNARY: case TFE_AD_SCALE: case TFE_AD_SUM: case TFE_AD_PERMUTE:
  case TFE_AD_RESHAPE: case TFE_AD_SLICE: case TFE_AD_BROADCAST: case TFE_AD_DIAGONAL: return true;
  case TFE_AD_BINARY: return true;
  case TFE_AD_SOLVE: case TFE_AD_TRISOLVE: case TFE_AD_INV: return true;
  case TFE_AD_SVD: case TFE_AD_QR: case TFE_AD_EIGH: case TFE_AD_CHOLESKY: return true;
  case TFE_AD_DET: case TFE_AD_SLOGDET: case TFE_AD_SLOGDET_SIGN: return true; /* dev_rules2_tpl.h */
  case TFE_AD_LQ: case TFE_AD_PINV: case TFE_AD_POLAR: case TFE_AD_LSTSQ: case TFE_AD_SVD_TRUNC: return true;
  case TFE_AD_EXPM: return true; /* the squarings' count read back (dev_rules2_tpl.h) */
  case TFE_AD_REDUCE: return TFE_FN(ad_reduce_dev_ok_)(p);
  case TFE_AD_NORM: return TFE_FN(ad_norm_dev_ok_)(p); /* Frobenius, nuclear, spectral */
  case TFE_AD_LU: return true; /* any shape (dev_rules3_tpl.h: P from the device's perm) */
  case TFE_AD_EIG: return true; /* complex kinds (dev_rules3_tpl.h; real kinds are refused on both) */
  default: return false;
  }
}
/* Dense column-major and not lazily conjugated: the form every rule reads. */
TFE_INTERNAL bool TFE_FN(ad_is_dense_)(const TFE_TY(view) *v) {
  if (TFE_CPLX && v->conj) return false;
  int64_t s = 1;
  for (int i = 0; i < v->lay.rank; i++) {
    if (v->lay.dims[i] != 1 && v->lay.strides[i] != s) return false;
    s *= v->lay.dims[i];
  }
  return true;
}
/* Operands for the rules: the view itself when dense, else a dense copy held in tmp; NULL
 * (a zero tangent or cotangent) becomes zeros shaped like `like`. */
TFE_INTERNAL tfe_status TFE_FN(ad_prep_)(const TFE_TY(view) *v, const TFE_TY(view) *like, TFE_TY(tensor) *tmp,
                                         TFE_TY(view) *out) {
  if (!v) {
    TFE_TRY(TFE_FN(ad_like_)(like, true, tmp));
    *out = tmp->v;
    return TFE_OK;
  }
  int64_t n = 0;
  TFE_TRY(tfe_layout_check(&v->lay, &n));
  if (n > 0 && !v->data) return TFE_FAIL(TFE_ERR_NULL, "an operand view of %lld elements has NULL data", (long long)n);
  if (like) TFE_TRY(tfe__same_shape(&like->lay, &v->lay, "tfe_ad (tangent or cotangent)"));
  if (TFE_FN(ad_is_dense_)(v)) { *out = *v; return TFE_OK; }
  TFE_TRY(TFE_FN(ad_dense_copy_)(v, tmp));
  *out = tmp->v;
  return TFE_OK;
}
TFE_INTERNAL void TFE_FN(ad_call_free_)(TFE_TY(ad_call_) *c) { TFE_FN(ad_release_n_)(c->tmp, 10); }

TFE_INTERNAL tfe_status TFE_FN(ad_check_op_)(tfe_ad_op op, const tfe_ad_params *p, int nin, const char *fn) {
  if ((unsigned)op >= (unsigned)TFE_AD_OP_COUNT_) return tfe__fail(TFE_ERR_INVALID, fn, "unknown op %d", (int)op);
  if (!p) return tfe__fail(TFE_ERR_NULL, fn, "argument 'params' is NULL");
  int want = tfe_ad_op_nin(op);
  if (want < 0 ? (nin != 1 && nin != 2) : nin != want)
    return tfe__fail(TFE_ERR_INVALID, fn, "%s takes %s input(s), got %d", tfe_ad_op_name(op),
                     want < 0 ? "1 or 2" : want == 1 ? "1" : "2", nin);
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_prep_in_)(TFE_TY(ad_call_) *c, int nin, const TFE_TY(view) *const *x, const char *fn) {
  if (!x) return tfe__fail(TFE_ERR_NULL, fn, "argument 'x' is NULL");
  for (int i = 0; i < nin; i++) {
    if (!x[i]) return tfe__fail(TFE_ERR_NULL, fn, "input %d is NULL", i);
    TFE_TRY(TFE_FN(ad_prep_)(x[i], NULL, &c->tmp[i], &c->v[i]));
    c->x[i] = &c->v[i];
  }
  return TFE_OK;
}
/* A rule with no device form, for values in a backend's memory: its operands are copied to host
 * memory, the CPU rule runs there, and its results are copied back (explicit transfers through
 * the backend's mem_copy slot; docs/ad.md lists the rules that take this path). */
TFE_INTERNAL tfe_status TFE_FN(ad_host_)(int which, tfe_ad_op op, const tfe_ad_params *p, int nin,
                                         const TFE_TY(ad_call_) *c, TFE_TY(tensor) *out) {
  const tfe_prims_backend *be = TFE__AD_BE;
  tfe__ts.ad_host_rules[which]++;
  int nout = tfe_ad_op_nout(op), nres = which == 2 ? nin : nout, k = 0;
  TFE_TY(tensor) h[10], r[3];
  memset(h, 0, sizeof h);
  memset(r, 0, sizeof r);
  const TFE_TY(view) *hx[2] = {NULL, NULL}, *hdx[2] = {NULL, NULL}, *hy[3] = {NULL, NULL, NULL},
                     *hdy[3] = {NULL, NULL, NULL};
  tfe_status st = TFE_OK;
  for (int i = 0; !st && i < nin; i++) { st = TFE_FN(ad_down_)(be, c->x[i], &h[k]); hx[i] = &h[k++].v; }
  for (int i = 0; !st && which == 1 && i < nin; i++) { st = TFE_FN(ad_down_)(be, c->dx[i], &h[k]); hdx[i] = &h[k++].v; }
  for (int i = 0; !st && which >= 1 && i < nout; i++) { st = TFE_FN(ad_down_)(be, c->y[i], &h[k]); hy[i] = &h[k++].v; }
  for (int i = 0; !st && which == 2 && i < nout; i++) { st = TFE_FN(ad_down_)(be, c->dy[i], &h[k]); hdy[i] = &h[k++].v; }
  if (!st) {
    tfe__ad_saved sv = tfe__ad_enter(NULL);
    if (which == 0) st = TFE_FN(ad_primal_of_)(op)(p, nin, hx, r);
    else if (which == 1) st = TFE_FN(ad_lin_)(op) ? TFE_FN(ad_linear_frule_)(op, p, hdx[0], r)
                                                 : TFE_FN(ad_frule_of_)(op)(p, nin, hx, hdx, hy, r);
    else st = TFE_FN(ad_lin_)(op) ? TFE_FN(ad_view_rrule_)(op, p, hx[0], hdy[0], r)
                                  : TFE_FN(ad_rrule_of_)(op)(p, nin, hx, hy, hdy, r);
    tfe__ad_leave(sv);
  }
  TFE_FN(ad_release_n_)(h, 10);
  if (st) return st;
  int done = 0;
  for (; !st && done < nres; done++) {
    if (!r[done].st) { memset(&out[done], 0, sizeof out[done]); continue; }
    st = TFE_FN(ad_up_)(be, &r[done], &out[done]);
  }
  if (st) {
    TFE_FN(ad_release_n_)(r, 3);
    for (int i = 0; i < done - 1; i++) TFE_FN(tensor_release)(&out[i]);
  }
  return st;
}
TFE_API tfe_status TFE_FN(ad_primal)(tfe_ad_op op, const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                     TFE_TY(tensor) *y) {
  TFE_TRY(TFE_FN(ad_check_op_)(op, p, nin, __func__));
  TFE_CHECK_NULL(y);
  TFE_TY(ad_call_) c;
  memset(&c, 0, sizeof c);
  tfe_status st = TFE_FN(ad_prep_in_)(&c, nin, x, __func__);
  if (!st) st = TFE__AD_BE && !TFE_FN(ad_dev_native_)(op, p, 0, c.x[0]) ? TFE_FN(ad_host_)(0, op, p, nin, &c, y)
                                                                 : TFE_FN(ad_primal_of_)(op)(p, nin, c.x, y);
  /* eig on a backend without a general eigensolver (cuSOLVER before 12.6, hipSOLVER: its linalg
   * slot answers TFE_ERR_UNSUPPORTED): that primal runs on the host (counted); its rules do not need one */
  if (st == TFE_ERR_UNSUPPORTED && TFE_CPLX && op == TFE_AD_EIG && TFE__AD_BE) {
    tfe_clear_error();
    st = TFE_FN(ad_host_)(0, op, p, nin, &c, y);
  }
  TFE_FN(ad_call_free_)(&c);
  return st;
}
TFE_API tfe_status TFE_FN(frule)(tfe_ad_op op, const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                 const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  TFE_TRY(TFE_FN(ad_check_op_)(op, p, nin, __func__));
  TFE_CHECK_NULL(y);
  TFE_CHECK_NULL(dy);
  int nout = tfe_ad_op_nout(op);
  TFE_TY(ad_call_) c;
  memset(&c, 0, sizeof c);
  tfe_status st = TFE_FN(ad_prep_in_)(&c, nin, x, __func__);
  for (int i = 0; !st && i < nin; i++) {
    st = TFE_FN(ad_prep_)(dx ? dx[i] : NULL, c.x[i], &c.tmp[2 + i], &c.v[2 + i]);
    c.dx[i] = &c.v[2 + i];
  }
  for (int i = 0; !st && i < nout; i++) {
    if (!y[i]) st = TFE_FAIL(TFE_ERR_NULL, "output %d is NULL", i);
    else st = TFE_FN(ad_prep_)(y[i], NULL, &c.tmp[4 + i], &c.v[4 + i]);
    c.y[i] = &c.v[4 + i];
  }
  if (!st && TFE__AD_BE && !TFE_FN(ad_dev_native_)(op, p, 1, c.x[0])) st = TFE_FN(ad_host_)(1, op, p, nin, &c, dy);
  else if (!st) st = TFE_FN(ad_lin_)(op) ? TFE_FN(ad_linear_frule_)(op, p, c.dx[0], dy)
                                         : TFE_FN(ad_frule_of_)(op)(p, nin, c.x, c.dx, c.y, dy);
  TFE_FN(ad_call_free_)(&c);
  return st;
}
TFE_API tfe_status TFE_FN(rrule)(tfe_ad_op op, const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                 const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  TFE_TRY(TFE_FN(ad_check_op_)(op, p, nin, __func__));
  TFE_CHECK_NULL(y);
  TFE_CHECK_NULL(dx);
  int nout = tfe_ad_op_nout(op);
  TFE_TY(ad_call_) c;
  memset(&c, 0, sizeof c);
  tfe_status st = TFE_FN(ad_prep_in_)(&c, nin, x, __func__);
  for (int i = 0; !st && i < nout; i++) {
    if (!y[i]) { st = TFE_FAIL(TFE_ERR_NULL, "output %d is NULL", i); break; }
    st = TFE_FN(ad_prep_)(y[i], NULL, &c.tmp[2 + i], &c.v[2 + i]);
    c.y[i] = &c.v[2 + i];
    if (!st) st = TFE_FN(ad_prep_)(dy ? dy[i] : NULL, c.y[i], &c.tmp[5 + i], &c.v[5 + i]);
    c.dy[i] = &c.v[5 + i];
  }
  if (!st && TFE__AD_BE && !TFE_FN(ad_dev_native_)(op, p, 2, c.x[0])) st = TFE_FN(ad_host_)(2, op, p, nin, &c, dx);
  else if (!st) st = TFE_FN(ad_lin_)(op) ? TFE_FN(ad_view_rrule_)(op, p, c.x[0], c.dy[0], dx)
                                         : TFE_FN(ad_rrule_of_)(op)(p, nin, c.x, c.y, c.dy, dx);
  TFE_FN(ad_call_free_)(&c);
  return st;
}
TFE_API void TFE_FN(tape_free)(TFE_TY(tape) *t) {
  if (!t) return;
  for (int i = 0; i < t->nvars; i++) {
    TFE_FN(tensor_release)(&t->val[i]);
    TFE_FN(tensor_release)(&t->tan[i]);
    TFE_FN(tensor_release)(&t->grad[i]);
  }
  tfe__free(t->val); tfe__free(t->tan); tfe__free(t->grad); tfe__free(t->leaf); tfe__free(t->nodes);
  memset(t, 0, sizeof *t);
}

/* Room for `more` variables and one node. */
TFE_INTERNAL tfe_status TFE_FN(tape_grow_)(TFE_TY(tape) *t, int more) {
  if (t->nvars + more > t->capv) {
    int cap = t->capv ? 2 * t->capv : 16;
    while (cap < t->nvars + more) cap *= 2;
    TFE_TY(tensor) *v = (TFE_TY(tensor) *)tfe__calloc((size_t)cap, sizeof *v);
    TFE_TY(tensor) *tn = (TFE_TY(tensor) *)tfe__calloc((size_t)cap, sizeof *tn);
    TFE_TY(tensor) *g = (TFE_TY(tensor) *)tfe__calloc((size_t)cap, sizeof *g);
    bool *l = (bool *)tfe__calloc((size_t)cap, sizeof *l);
    if (!v || !tn || !g || !l) { tfe__free(v); tfe__free(tn); tfe__free(g); tfe__free(l); return TFE_ERR_ALLOC; }
    if (t->nvars) {
      memcpy(v, t->val, (size_t)t->nvars * sizeof *v);
      memcpy(tn, t->tan, (size_t)t->nvars * sizeof *tn);
      memcpy(g, t->grad, (size_t)t->nvars * sizeof *g);
      memcpy(l, t->leaf, (size_t)t->nvars * sizeof *l);
    }
    tfe__free(t->val); tfe__free(t->tan); tfe__free(t->grad); tfe__free(t->leaf);
    t->val = v; t->tan = tn; t->grad = g; t->leaf = l; t->capv = cap;
  }
  if (t->nnodes + 1 > t->capn) {
    int cap = t->capn ? 2 * t->capn : 16;
    TFE_TY(ad_node) *n = (TFE_TY(ad_node) *)tfe__calloc((size_t)cap, sizeof *n);
    if (!n) return TFE_ERR_ALLOC;
    if (t->nnodes) memcpy(n, t->nodes, (size_t)t->nnodes * sizeof *n);
    tfe__free(t->nodes);
    t->nodes = n; t->capn = cap;
  }
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(tape_id_)(const TFE_TY(tape) *t, int id, const char *fn) {
  if (!t) return tfe__fail(TFE_ERR_NULL, fn, "argument 'tape' is NULL");
  if (id < 0 || id >= t->nvars) return tfe__fail(TFE_ERR_BOUNDS, fn, "variable %d does not exist (tape has %d)", id, t->nvars);
  return TFE_OK;
}
/* The backend of variables in[0..n) (NULL: host memory). */
TFE_INTERNAL tfe_status TFE_FN(tape_be_)(const TFE_TY(tape) *t, int n, const int *in, const tfe_prims_backend **be,
                                         const char *fn) {
  const tfe_storage *sts[2] = {NULL, NULL};
  for (int i = 0; i < n && i < 2; i++) sts[i] = t->val[in[i]].st;
  return tfe__ad_pick(n < 2 ? n : 2, sts, be, fn);
}
TFE_API tfe_status TFE_FN(ad_var)(TFE_TY(tape) *t, const TFE_TY(view) *value, const TFE_TY(view) *tangent, int *id) {
  TFE_CHECK_NULL(t);
  TFE_CHECK_NULL(value);
  TFE_CHECK_NULL(id);
  if (tangent) TFE_TRY(tfe__same_shape(&value->lay, &tangent->lay, __func__));
  TFE_TY(tensor) v = {0}, d = {0};
  TFE_TRY(TFE_FN(ad_dense_copy_)(value, &v));
  tfe_status st = tangent ? TFE_FN(ad_dense_copy_)(tangent, &d) : TFE_OK;
  if (!st) st = TFE_FN(tape_grow_)(t, 1);
  if (st) { TFE_FN(tensor_release)(&v); TFE_FN(tensor_release)(&d); return st; }
  int k = t->nvars++;
  t->val[k] = v; t->tan[k] = d; t->leaf[k] = true;
  *id = k;
  return TFE_OK;
}
/* A leaf of a tensor outside host memory: the value retained when dense (else a dense copy
 * there), the tangent (in the same memory) copied there. */
TFE_INTERNAL tfe_status TFE_FN(ad_var_dev_)(TFE_TY(tape) *t, const TFE_TY(tensor) *value, const TFE_TY(view) *tangent,
                                            int *id) {
  TFE_TY(tensor) v = {0}, d = {0};
  tfe_status st = TFE_OK;
  if (TFE_FN(ad_is_dense_)(&value->v)) st = TFE_FN(tensor_retain)(value, &v);
  else st = TFE_FN(ad_dense_copy_)(&value->v, &v);
  if (!st && tangent) st = TFE_FN(ad_dense_copy_)(tangent, &d);
  if (!st) st = TFE_FN(tape_grow_)(t, 1);
  if (st) { TFE_FN(tensor_release)(&v); TFE_FN(tensor_release)(&d); return st; }
  int k = t->nvars++;
  t->val[k] = v; t->tan[k] = d; t->leaf[k] = true;
  *id = k;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(ad_var_ref)(TFE_TY(tape) *t, const TFE_TY(tensor) *value, const TFE_TY(view) *tangent, int *id) {
  TFE_CHECK_NULL(value);
  const tfe_prims_backend *be = NULL;
  if (value->st) {
    const tfe_storage *sts[1] = {value->st};
    TFE_TRY(tfe__ad_pick(1, sts, &be, __func__));
  }
  if (be) {
    TFE_CHECK_NULL(t);
    TFE_CHECK_NULL(id);
    if (tangent) TFE_TRY(tfe__same_shape(&value->v.lay, &tangent->lay, __func__));
    tfe__ad_saved sv = tfe__ad_enter(be);
    tfe_status st = TFE_FN(ad_var_dev_)(t, value, tangent, id);
    tfe__ad_leave(sv);
    return st;
  }
  if (!value->st || !TFE_FN(ad_is_dense_)(&value->v)) return TFE_FN(ad_var)(t, &value->v, tangent, id);
  TFE_CHECK_NULL(t);
  TFE_CHECK_NULL(id);
  if (tangent) TFE_TRY(tfe__same_shape(&value->v.lay, &tangent->lay, __func__));
  TFE_TY(tensor) d = {0};
  tfe_status st = tangent ? TFE_FN(ad_dense_copy_)(tangent, &d) : TFE_OK;
  if (!st) st = TFE_FN(tape_grow_)(t, 1);
  if (st) { TFE_FN(tensor_release)(&d); return st; }
  int k = t->nvars++;
  TFE_FN(tensor_retain)(value, &t->val[k]);
  t->tan[k] = d; t->leaf[k] = true;
  *id = k;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(ad_op)(TFE_TY(tape) *t, tfe_ad_op op, const tfe_ad_params *p, int nin, const int *in, int *out) {
  TFE_TRY(TFE_FN(ad_check_op_)(op, p, nin, __func__));
  TFE_CHECK_NULL(in);
  TFE_CHECK_NULL(out);
  for (int i = 0; i < nin; i++) TFE_TRY(TFE_FN(tape_id_)(t, in[i], __func__));
  int nout = tfe_ad_op_nout(op);
  const TFE_TY(view) *x[2] = {NULL, NULL}, *dx[2] = {NULL, NULL}, *yv[3] = {NULL, NULL, NULL};
  bool tangents = false;
  for (int i = 0; i < nin; i++) {
    x[i] = &t->val[in[i]].v;
    if (t->tan[in[i]].st) { dx[i] = &t->tan[in[i]].v; tangents = true; }
  }
  TFE_TY(tensor) y[3], d[3];
  memset(y, 0, sizeof y);
  memset(d, 0, sizeof d);
  const tfe_prims_backend *be = NULL;
  TFE_TRY(TFE_FN(tape_be_)(t, nin, in, &be, __func__));
  tfe__ad_saved sv = {NULL, NULL};
  if (be) sv = tfe__ad_enter(be);
  tfe_status st = TFE_FN(ad_primal)(op, p, nin, x, y);
  for (int i = 0; i < nout; i++) yv[i] = &y[i].v;
  if (!st && tangents) st = TFE_FN(frule)(op, p, nin, x, dx, yv, d);
  if (be) tfe__ad_leave(sv);
  if (!st) st = TFE_FN(tape_grow_)(t, nout);
  if (st) { TFE_FN(ad_release_n_)(y, 3); TFE_FN(ad_release_n_)(d, 3); return st; }
  TFE_TY(ad_node) *nd = &t->nodes[t->nnodes++];
  nd->op = op; nd->p = *p; nd->nin = nin; nd->nout = nout;
  for (int i = 0; i < nin; i++) nd->in[i] = in[i];
  for (int i = 0; i < nout; i++) {
    int k = t->nvars++;
    t->val[k] = y[i]; t->tan[k] = d[i]; t->leaf[k] = false;
    nd->out[i] = out[i] = k;
  }
  return TFE_OK;
}
TFE_API const TFE_TY(view) *TFE_FN(ad_value)(const TFE_TY(tape) *t, int id) {
  return t && id >= 0 && id < t->nvars ? &t->val[id].v : NULL;
}
TFE_API const TFE_TY(view) *TFE_FN(ad_grad)(const TFE_TY(tape) *t, int id) {
  return t && id >= 0 && id < t->nvars && t->grad[id].st ? &t->grad[id].v : NULL;
}
TFE_API const TFE_TY(view) *TFE_FN(ad_tangent)(const TFE_TY(tape) *t, int id) {
  return t && id >= 0 && id < t->nvars && t->tan[id].st ? &t->tan[id].v : NULL;
}
/* The tensor accessors: NULL with an error (TFE_ERR_NULL / TFE_ERR_BOUNDS, tfe_last_status) for
 * no tape or an id the tape does not have; NULL without one where the variable has no gradient
 * (tangent) yet. */
TFE_API const TFE_TY(tensor) *TFE_FN(ad_value_tensor)(const TFE_TY(tape) *t, int id) {
  return TFE_FN(tape_id_)(t, id, __func__) ? NULL : &t->val[id];
}
TFE_API const TFE_TY(tensor) *TFE_FN(ad_grad_tensor)(const TFE_TY(tape) *t, int id) {
  return TFE_FN(tape_id_)(t, id, __func__) || !t->grad[id].st ? NULL : &t->grad[id];
}
TFE_API const TFE_TY(tensor) *TFE_FN(ad_tangent_tensor)(const TFE_TY(tape) *t, int id) {
  return TFE_FN(tape_id_)(t, id, __func__) || !t->tan[id].st ? NULL : &t->tan[id];
}
TFE_API void TFE_FN(ad_zero_grad)(TFE_TY(tape) *t) {
  for (int i = 0; t && i < t->nvars; i++) TFE_FN(tensor_release)(&t->grad[i]);
}

/* acc += g (taking g over when acc is empty). */
TFE_INTERNAL tfe_status TFE_FN(ad_acc_)(TFE_TY(tensor) *acc, TFE_TY(tensor) *g) {
  if (!acc->st) { *acc = *g; memset(g, 0, sizeof *g); return TFE_OK; }
  if (TFE__AD_BE) {
    tfe_status st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_ADD, &acc->v, &acc->v, &g->v, NULL, NULL);
    TFE_FN(tensor_release)(g);
    return st;
  }
  int64_t n = tfe_layout_numel(&acc->v.lay);
  for (int64_t i = 0; i < n; i++) acc->v.data[i] += g->v.data[i];
  TFE_FN(tensor_release)(g);
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(ad_backward)(TFE_TY(tape) *t, int id, const TFE_TY(view) *cot) {
  TFE_TRY(TFE_FN(tape_id_)(t, id, __func__));
  const TFE_TY(view) *yv = &t->val[id].v;
  if (!cot && tfe_layout_numel(&yv->lay) != 1)
    return TFE_FAIL(TFE_ERR_SHAPE, "variable %d has %lld elements, not 1: pass a cotangent", id,
                    (long long)tfe_layout_numel(&yv->lay));
  if (cot) TFE_TRY(tfe__same_shape(&yv->lay, &cot->lay, __func__));
  const tfe_prims_backend *be = NULL;
  TFE_TRY(TFE_FN(tape_be_)(t, 1, &id, &be, __func__));
  TFE_TY(tensor) *adj = (TFE_TY(tensor) *)tfe__calloc((size_t)t->nvars, sizeof *adj);
  if (!adj) return TFE_ERR_ALLOC;
  tfe_status st;
  if (!be) st = cot ? TFE_FN(ad_dense_copy_)(cot, &adj[id]) : TFE_FN(full)(&adj[id], yv->lay.rank, yv->lay.dims, TFE_COLMAJOR, 1);
  else { /* the seed in the memory of variable id (cot is there too) */
    tfe__ad_saved sv0 = tfe__ad_enter(be);
    if (cot) st = TFE_FN(ad_dense_copy_)(cot, &adj[id]);
    else {
      st = TFE_FN(ad_empty_)(yv->lay.rank, yv->lay.dims, &adj[id]);
      if (!st) st = TFE_FN(ad_fill_)(&adj[id].v, (TFE_T)1);
    }
    tfe__ad_leave(sv0);
  }
  for (int k = t->nnodes - 1; !st && k >= 0; k--) {
    const TFE_TY(ad_node) *nd = &t->nodes[k];
    bool any = false;
    for (int i = 0; i < nd->nout; i++) any |= adj[nd->out[i]].st != NULL;
    if (!any) continue;
    const TFE_TY(view) *x[2] = {NULL, NULL}, *y[3] = {NULL, NULL, NULL}, *dy[3] = {NULL, NULL, NULL};
    for (int i = 0; i < nd->nin; i++) x[i] = &t->val[nd->in[i]].v;
    for (int i = 0; i < nd->nout; i++) {
      y[i] = &t->val[nd->out[i]].v;
      if (adj[nd->out[i]].st) dy[i] = &adj[nd->out[i]].v;
    }
    TFE_TY(tensor) dx[2];
    memset(dx, 0, sizeof dx);
    st = TFE_FN(tape_be_)(t, nd->nin, nd->in, &be, __func__);
    if (st) break;
    tfe__ad_saved sv = {NULL, NULL};
    if (be) sv = tfe__ad_enter(be);
    st = TFE_FN(rrule)(nd->op, &nd->p, nd->nin, x, y, dy, dx);
    for (int i = 0; !st && i < nd->nin; i++) st = TFE_FN(ad_acc_)(&adj[nd->in[i]], &dx[i]);
    if (be) tfe__ad_leave(sv);
    TFE_FN(ad_release_n_)(dx, 2);
  }
  for (int i = 0; i < t->nvars; i++) {
    if (!st && t->leaf[i] && adj[i].st) {
      st = TFE_FN(tape_be_)(t, 1, &i, &be, __func__);
      tfe__ad_saved sv = {NULL, NULL};
      if (!st && be) sv = tfe__ad_enter(be);
      if (!st) st = TFE_FN(ad_acc_)(&t->grad[i], &adj[i]);
      if (!st && be) tfe__ad_leave(sv);
    }
    TFE_FN(tensor_release)(&adj[i]);
  }
  tfe__free(adj);
  return st;
}
#endif /* TFE_FLOAT */
#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_R)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)
TFE_API tfe_status TFE_FN(tropical_matmul)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *C,
                                           tfe_tensor_i64 *argmax) {
  TFE_CHECK_NULL(A); TFE_CHECK_NULL(B); TFE_CHECK_NULL(C); TFE_CHECK_NULL(argmax);
  if (A->lay.rank != 2 || B->lay.rank != 2) return TFE_FAIL(TFE_ERR_RANK, "needs two matrices");
  if (A->lay.dims[1] != B->lay.dims[0])
    return TFE_FAIL(TFE_ERR_SHAPE, "inner dims %lld and %lld differ", (long long)A->lay.dims[1], (long long)B->lay.dims[0]);
  int64_t m = A->lay.dims[0], k = A->lay.dims[1], n = B->lay.dims[1], d[2] = {m, n};
  TFE_TY(tensor) c = {0};
  tfe_tensor_i64 am = {0};
  TFE_TRY(TFE_FN(empty)(&c, 2, d, TFE_COLMAJOR));
  tfe_status st = tfe_empty_i64(&am, 2, d, TFE_COLMAJOR);
  if (!st)
    st = TFE_FN(semiring_gemm_argmax)(m, n, k, TFE_FN(sr_one)(), A->data + A->lay.offset, A->lay.strides[0],
                                      A->lay.strides[1], B->data + B->lay.offset, B->lay.strides[0], B->lay.strides[1],
                                      c.v.data, 1, m, am.v.data, 1, m);
  if (st) { TFE_FN(tensor_release)(&c); tfe_tensor_release_i64(&am); return st; }
  *C = c; *argmax = am;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(rrule_tropical_matmul)(const TFE_TY(view) *A, const TFE_TY(view) *B,
                                                 const tfe_view_i64 *argmax, const TFE_CAT(tfe_view_, TFE__RS) *gC,
                                                 TFE__RT *gA, TFE__RT *gB) {
  TFE_CHECK_NULL(A); TFE_CHECK_NULL(B); TFE_CHECK_NULL(argmax); TFE_CHECK_NULL(gC); TFE_CHECK_NULL(gA); TFE_CHECK_NULL(gB);
  if (A->lay.rank != 2 || B->lay.rank != 2 || argmax->lay.rank != 2 || gC->lay.rank != 2)
    return TFE_FAIL(TFE_ERR_RANK, "needs matrices");
  int64_t m = A->lay.dims[0], k = A->lay.dims[1], n = B->lay.dims[1];
  if (B->lay.dims[0] != k || argmax->lay.dims[0] != m || argmax->lay.dims[1] != n || gC->lay.dims[0] != m ||
      gC->lay.dims[1] != n)
    return TFE_FAIL(TFE_ERR_SHAPE, "A %lld x %lld, B %lld x %lld, argmax and gC must be %lld x %lld", (long long)m,
                    (long long)k, (long long)B->lay.dims[0], (long long)n, (long long)m, (long long)n);
  TFE__RT ga = {0}, gb = {0};
  TFE_TRY(TFE_CAT(tfe_zeros_, TFE__RS)(&ga, 2, A->lay.dims, TFE_COLMAJOR));
  tfe_status st = TFE_CAT(tfe_zeros_, TFE__RS)(&gb, 2, B->lay.dims, TFE_COLMAJOR);
  for (int64_t j = 0; !st && j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      int64_t p = argmax->data[argmax->lay.offset + i * argmax->lay.strides[0] + j * argmax->lay.strides[1]];
      if (p < 0) continue;
      if (p >= k) { st = TFE_FAIL(TFE_ERR_BOUNDS, "argmax %lld outside [0, %lld)", (long long)p, (long long)k); break; }
      TFE_R g = gC->data[gC->lay.offset + i * gC->lay.strides[0] + j * gC->lay.strides[1]];
#if TFE_ALG == TFE_ALG_MAXTIMES
      TFE_R a = A->data[A->lay.offset + i * A->lay.strides[0] + p * A->lay.strides[1]].v;
      TFE_R b = B->data[B->lay.offset + p * B->lay.strides[0] + j * B->lay.strides[1]].v;
      ga.v.data[i + p * m] += g * b;
      gb.v.data[p + j * k] += g * a;
#else
      ga.v.data[i + p * m] += g;
      gb.v.data[p + j * k] += g;
#endif
    }
  if (st) { TFE_CAT(tfe_tensor_release_, TFE__RS)(&ga); TFE_CAT(tfe_tensor_release_, TFE__RS)(&gb); return st; }
  *gA = ga; *gB = gb;
  return TFE_OK;
}
#undef TFE__RS
#undef TFE__RT
#endif
#endif
