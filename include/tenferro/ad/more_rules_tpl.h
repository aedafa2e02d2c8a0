/* tenferro/ad_more_tpl.h — rules of the kernel room's reductions (prod, max, min, mean, sum of
 * squares, norms), binary max / min, lstsq, triangular solve and slogdet with its sign, for one
 * float kind; re-included per kind by ad.h after ad_linalg_tpl.h (it uses its matrix helpers).
 * Operands are dense column-major, as everywhere in the rules. */
#if !TFE__BODY_PHASE
#if TFE_FLOAT
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

#undef TFE__RS
#undef TFE__RT
#endif /* TFE_FLOAT */
#else /* bodies */
#if TFE_FLOAT
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

/* ---- reductions ------------------------------------------------------------------------------ */
/* The reduced axes first, then the kept ones: x permuted this way and copied densely holds one
 * contiguous block of `count` elements per output element, blocks in the output's order. */
TFE_INTERNAL tfe_status TFE_FN(ad_red_perm_)(const tfe_ad_params *p, const tfe_layout *L, int *perm, int64_t *count,
                                             int64_t *nout) {
  const char *fn = "tfe_ad_reduce";
  bool red[TFE_MAX_RANK] = {false};
  if (p->naxes > L->rank) return tfe__fail(TFE_ERR_INVALID, fn, "%d axes for a rank-%d input", p->naxes, L->rank);
  for (int k = 0; k < p->naxes; k++) {
    int a = p->axes[k];
    if (a < 0 || a >= L->rank) return tfe__fail(TFE_ERR_INVALID, fn, "axis %d outside [0, %d)", a, L->rank);
    if (red[a]) return tfe__fail(TFE_ERR_INVALID, fn, "axis %d named twice", a);
    red[a] = true;
  }
  if (p->naxes < 0) for (int i = 0; i < L->rank; i++) red[i] = true;
  int np = 0;
  *count = 1; *nout = 1;
  for (int i = 0; i < L->rank; i++) if (red[i]) { perm[np++] = i; *count *= L->dims[i]; }
  for (int i = 0; i < L->rank; i++) if (!red[i]) { perm[np++] = i; *nout *= L->dims[i]; }
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_reduce_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  TFE_TY(tensor) *y) {
  (void)nin;
  if (TFE__AD_BE && TFE_FN(ad_reduce_dev_ok_)(p)) return TFE_FN(ad_reduce_pr_dev_)(p, x[0], y); /* the slot's REDUCE */
  int perm[TFE_MAX_RANK];
  int64_t count = 0, nout = 0, dims[TFE_MAX_RANK];
  if (p->redop < 0 || p->redop >= (int)TFE_RED_COUNT_)
    return tfe__fail(TFE_ERR_INVALID, "tfe_ad_reduce", "unknown reduction %d", p->redop);
  TFE_TRY(TFE_FN(ad_red_perm_)(p, &x[0]->lay, perm, &count, &nout));
  int nr = p->naxes < 0 ? x[0]->lay.rank : p->naxes, ny = x[0]->lay.rank - nr;
  for (int i = 0; i < ny; i++) dims[i] = x[0]->lay.dims[perm[nr + i]];
  TFE_TRY(TFE_FN(empty)(y, ny, dims, TFE_COLMAJOR));
  tfe_status st = TFE_FN(reduce)(&y->v, x[0], (tfe_redop)p->redop, p->naxes < 0 ? -1 : p->naxes, p->axes,
                                 TFE_FN(sr_one)(), TFE_FN(sr_zero)());
  if (st) TFE_FN(tensor_release)(y);
  return st;
}
/* Real-valued reductions of complex input (sum of squares, norms): their tangent is
 * Re(conj(D) dx) and their cotangent Re(g) D; the others are holomorphic (D dx, conj(D) g). */
TFE_INTERNAL bool TFE_FN(ad_red_realval_)(int op) {
  return op == TFE_RED_SUMSQ || op == TFE_RED_NORM1 || op == TFE_RED_NORM2 || op == TFE_RED_NORMINF;
}
/* D_i = dy / dx_i on one block x[0..n) with result y (max / min / norminf: the first winner). */
TFE_INTERNAL void TFE_FN(ad_red_dir_)(int op, const TFE_T *x, int64_t n, TFE_T y, TFE_T *D) {
  int64_t win = 0;
  switch (op) {
  case TFE_RED_PROD: { /* product of the others, by prefix and suffix products (zeros are fine) */
    TFE_T acc = 1;
    for (int64_t i = 0; i < n; i++) { D[i] = acc; acc *= x[i]; }
    acc = 1;
    for (int64_t i = n - 1; i >= 0; i--) { D[i] *= acc; acc *= x[i]; }
    return;
  }
  case TFE_RED_MEAN: for (int64_t i = 0; i < n; i++) D[i] = (TFE_T)(1.0 / (double)n); return;
  case TFE_RED_SUMSQ: for (int64_t i = 0; i < n; i++) D[i] = 2 * x[i]; return;
  case TFE_RED_NORM1: for (int64_t i = 0; i < n; i++) D[i] = TFE_FN(ad_sign_)(x[i]); return;
  case TFE_RED_NORM2: {
    TFE_R yr = TFE_FN(ad_re_)(y);
    for (int64_t i = 0; i < n; i++) D[i] = yr > 0 ? x[i] / yr : (TFE_T)0;
    return;
  }
  case TFE_RED_MAX: case TFE_RED_MIN: case TFE_RED_NORMINF:
    for (int64_t i = 1; i < n; i++) {
#if TFE_CPLX
      if ((TFE_R)TFE__MABS(x[i]) > (TFE_R)TFE__MABS(x[win])) win = i; /* only norminf reaches here */
#else
      if (op == TFE_RED_MAX ? x[i] > x[win] : op == TFE_RED_MIN ? x[i] < x[win] : fabs((double)x[i]) > fabs((double)x[win]))
        win = i;
#endif
    }
    for (int64_t i = 0; i < n; i++) D[i] = 0;
    if (n > 0) D[win] = op == TFE_RED_NORMINF ? TFE_FN(ad_sign_)(x[win]) : (TFE_T)1;
    return;
  default: for (int64_t i = 0; i < n; i++) D[i] = 1; return; /* sum */
  }
}
/* Shared body: rev: dx (x's shape) from the cotangent g (y's shape); else dy from dx. */
TFE_INTERNAL tfe_status TFE_FN(ad_red_both_)(bool rev, const tfe_ad_params *p, const TFE_TY(view) *x, const TFE_TY(view) *y,
                                             const TFE_TY(view) *d, TFE_TY(tensor) *out) {
  int perm[TFE_MAX_RANK];
  int64_t count = 0, nout = 0;
  TFE_TRY(TFE_FN(ad_red_perm_)(p, &x->lay, perm, &count, &nout));
  TFE_TY(tensor) xb = {0}, db = {0}, Db = {0};
  TFE_TY(view) pv;
  tfe_status st = TFE_FN(permute)(x, perm, &pv);
  if (!st) st = TFE_FN(ad_dense_copy_)(&pv, &xb);
  if (!st) st = TFE_FN(ad_like_)(&xb.v, false, &Db);
  if (!st && !rev) { /* the input tangent in block order */
    st = TFE_FN(permute)(d, perm, &pv);
    if (!st) st = TFE_FN(ad_dense_copy_)(&pv, &db);
  }
  if (!st) st = rev ? TFE_FN(ad_like_)(x, false, out) : TFE_FN(ad_like_)(y, false, out);
  if (st) { TFE_FN(tensor_release)(&xb); TFE_FN(tensor_release)(&db); TFE_FN(tensor_release)(&Db); return st; }
  bool rv = TFE_FN(ad_red_realval_)(p->redop);
  const TFE_T *yp = y->data + y->lay.offset, *dp = d->data + d->lay.offset;
  for (int64_t b = 0; b < nout; b++) {
    TFE_T *D = Db.v.data + b * count;
    const TFE_T *xv = xb.v.data + b * count;
    TFE_FN(ad_red_dir_)(p->redop, xv, count, yp[b], D);
    if (rev) {
      TFE_T g = dp[b];
      for (int64_t i = 0; i < count; i++)
        D[i] = rv ? (TFE_T)TFE_FN(ad_re_)(g) * D[i] : TFE_FN(la_conj_)(D[i]) * g;
    } else {
      TFE_T s = 0;
      const TFE_T *dv = db.v.data + b * count;
      for (int64_t i = 0; i < count; i++) s += rv ? (TFE_T)TFE_FN(ad_re_)(TFE_FN(la_conj_)(D[i]) * dv[i]) : D[i] * dv[i];
      out->v.data[b] = s;
    }
  }
  if (rev) { /* scatter the blocks back to x's axis order */
    st = TFE_FN(permute)(&out->v, perm, &pv);
    if (!st) st = TFE_FN(copy)(&pv, &Db.v);
    if (st) TFE_FN(tensor_release)(out);
  }
  TFE_FN(tensor_release)(&xb); TFE_FN(tensor_release)(&db); TFE_FN(tensor_release)(&Db);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_reduce_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                 TFE_TY(tensor) *dx) {
  (void)nin;
  if (TFE__AD_BE && TFE_FN(ad_reduce_dev_ok_)(p)) return TFE_FN(ad_reduce_dev_)(true, p, x[0], y[0], dy[0], dx);
  return TFE_FN(ad_red_both_)(true, p, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_reduce_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                 TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE && TFE_FN(ad_reduce_dev_ok_)(p)) return TFE_FN(ad_reduce_dev_)(false, p, x[0], y[0], dx[0], dy);
  return TFE_FN(ad_red_both_)(false, p, x[0], y[0], dx[0], dy);
}

/* ---- lstsq: X = A^+ B, through the pinv rules (A of locally constant rank) ---------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_lstsq_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_lstsq_pr_dev_)(x[0], x[1], y); /* A^+ B by the device's SVD */
  return TFE_FN(lstsq)(x[0], x[1], y);
}
/* Reverse: gB = Y^H gX, gY = gX B^H, gA = pinv rule(gY). Forward: dX = dY B + Y dB. */
TFE_INTERNAL tfe_status TFE_FN(ad_lstsq_both_)(bool rev, const TFE_TY(view) *const *x, const TFE_TY(view) *const *d,
                                               TFE_TY(tensor) *out) {
  const char *fn = rev ? "tfe_rrule(lstsq)" : "tfe_frule(lstsq)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t r = m * nb > 0 ? TFE_FN(ad_numel_)(x[1]) / (m * nb) : 0;
  TFE_TY(tensor) Y = {0}, G = {0};
  TFE_TRY(TFE_FN(pinv)(x[0], -1, &Y));
  tfe_status st = TFE_OK;
  const TFE_T *B = TFE_FN(ad_ptr_)(x[1]), *Yp = Y.v.data;
  if (rev) { /* d[0] = gX (n, r, batch) */
    st = TFE_FN(ad_like_)(&Y.v, false, &G);
    if (!st) st = TFE_FN(ad_like_)(x[1], true, &out[1]); /* zeros: A of 0 columns has no batch item */
    for (int64_t b = 0; !st && b < nb; b++) {
      const TFE_T *gX = TFE_FN(ad_ptr_)(d[0]) + b * n * r;
      TFE_FN(ad_mm_)('C', 'N', m, r, n, 1, Yp + b * n * m, gX, 0, out[1].v.data + b * m * r);
      TFE_FN(ad_mm_)('N', 'C', n, m, r, 1, gX, B + b * m * r, 0, G.v.data + b * n * m);
    }
    if (!st) st = TFE_FN(ad_pinv_both_)(true, x[0], &Y.v, &G.v, &out[0]);
    if (st) TFE_FN(tensor_release)(&out[1]);
  } else { /* d[0] = dA, d[1] = dB; out = dX */
    st = TFE_FN(ad_pinv_both_)(false, x[0], &Y.v, d[0], &G);
    if (!st) {
      int64_t dims[TFE_MAX_RANK];
      memcpy(dims, x[1]->lay.dims, sizeof dims);
      dims[0] = n;
      st = TFE_FN(empty)(out, x[1]->lay.rank, dims, TFE_COLMAJOR);
    }
    for (int64_t b = 0; !st && b < nb; b++) {
      TFE_T *dX = out->v.data + b * n * r;
      TFE_FN(ad_mm_)('N', 'N', n, r, m, 1, G.v.data + b * n * m, B + b * m * r, 0, dX);
      TFE_FN(ad_mm_)('N', 'N', n, r, m, 1, Yp + b * n * m, TFE_FN(ad_ptr_)(d[1]) + b * m * r, 1, dX);
    }
  }
  TFE_FN(tensor_release)(&Y);
  TFE_FN(tensor_release)(&G);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_lstsq_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                TFE_TY(tensor) *dx) {
  (void)p; (void)nin; (void)y;
  if (TFE__AD_BE) return TFE_FN(ad_lstsq_dev_)(true, x, dy, dx);
  return TFE_FN(ad_lstsq_both_)(true, x, dy, dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lstsq_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                TFE_TY(tensor) *dy) {
  (void)p; (void)nin; (void)y;
  if (TFE__AD_BE) return TFE_FN(ad_lstsq_dev_)(false, x, dx, dy);
  return TFE_FN(ad_lstsq_both_)(false, x, dx, dy);
}

/* ---- triangular solve: X = T^-1 B, T the chosen triangle of A (unit diagonal optional) ------ */
TFE_INTERNAL tfe_status TFE_FN(ad_trisolve_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                    TFE_TY(tensor) *y) {
  (void)nin;
  return TFE_FN(trisolve)(x[0], x[1], p->lower != 0, p->unit_diag != 0, y);
}
/* Zero what lies outside the triangle (and the diagonal when it is a unit one). */
TFE_INTERNAL void TFE_FN(ad_tri_mask_)(const tfe_ad_params *p, TFE_T *M, int64_t n) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      bool in = p->lower ? i > j : i < j;
      if (!in && !(i == j && !p->unit_diag)) M[i + j * n] = 0;
    }
}
/* gB = T^-H gX, gA = tri(-gB X^H). */
TFE_INTERNAL tfe_status TFE_FN(ad_trisolve_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                   const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                   TFE_TY(tensor) *dx) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_trisolve_rr_dev_)(p, x, y, dy, dx);
  const char *fn = "tfe_rrule(trisolve)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t r = TFE_FN(ad_rhs_cols_)(x[1], n, nb);
  char uplo = p->lower ? 'L' : 'U', diag = p->unit_diag ? 'U' : 'N';
  tfe_status st = TFE_FN(ad_like_)(x[0], false, &dx[0]);
  if (!st) st = TFE_FN(ad_dense_copy_)(dy[0], &dx[1]);
  for (int64_t b = 0; !st && b < nb; b++) {
    TFE_T *gB = dx[1].v.data + b * n * r, *gA = dx[0].v.data + b * n * n;
    st = TFE_FN(ad_trs_)(uplo, 'C', diag, n, TFE_FN(ad_ptr_)(x[0]) + b * n * n, r, gB, fn);
    if (st) break;
    TFE_FN(ad_mm_)('N', 'C', n, n, r, -1, gB, TFE_FN(ad_ptr_)(y[0]) + b * n * r, 0, gA);
    TFE_FN(ad_tri_mask_)(p, gA, n);
  }
  if (st) TFE_FN(ad_release_n_)(dx, 2);
  return st;
}
/* dX = T^-1 (dB - tri(dA) X). */
TFE_INTERNAL tfe_status TFE_FN(ad_trisolve_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                   const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                   TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_trisolve_fr_dev_)(p, x, dx, y, dy);
  const char *fn = "tfe_frule(trisolve)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t r = TFE_FN(ad_rhs_cols_)(x[1], n, nb);
  char uplo = p->lower ? 'L' : 'U', diag = p->unit_diag ? 'U' : 'N';
  TFE_TRY(TFE_FN(ad_dense_copy_)(dx[1], dy));
  TFE_T *T = (TFE_T *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_T));
  tfe_status st = T ? TFE_OK : TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    TFE_T *d = dy->v.data + b * n * r;
    memcpy(T, TFE_FN(ad_ptr_)(dx[0]) + b * n * n, (size_t)(n * n) * sizeof(TFE_T));
    TFE_FN(ad_tri_mask_)(p, T, n);
    TFE_FN(ad_mm_)('N', 'N', n, r, n, -1, T, TFE_FN(ad_ptr_)(y[0]) + b * n * r, 1, d);
    st = TFE_FN(ad_trs_)(uplo, 'N', diag, n, TFE_FN(ad_ptr_)(x[0]) + b * n * n, r, d, fn);
  }
  tfe__free(T);
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}

/* ---- slogdet with its sign: [sign, log|det|] ------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_sign_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                        TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_pr_dev_)(2, x[0], y);
  TFE__RT la = {0};
  TFE_TRY(TFE_FN(slogdet)(x[0], &y[0], &la));
  tfe_status st = TFE_FN(ad_from_real_)(&la, &y[1]);
  if (st) TFE_FN(tensor_release)(&y[0]);
  return st;
}
/* With t = tr(A^-1 dA): d log|det| = Re t, d sign = i Im(t) sign (0 for real kinds). Reverse:
 * gA = (Re gl - i Im(conj(gs) sign)) A^-H. */
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_sign_both_)(bool rev, const TFE_TY(view) *A, const TFE_TY(view) *sg,
                                                      const TFE_TY(view) *const *d, TFE_TY(tensor) *out) {
  const char *fn = rev ? "tfe_rrule(slogdet_sign)" : "tfe_frule(slogdet_sign)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(A, &m, &n, &nb, fn));
  TFE_TY(tensor) Ai = {0};
  TFE_TRY(TFE_FN(inv)(A, &Ai));
  tfe_status st = rev ? TFE_FN(ad_like_)(A, false, out) : TFE_FN(ad_like_)(sg, true, &out[0]);
  if (!st && !rev) { /* zeros: a 0 x 0 matrix has no batch item to write */
    st = TFE_FN(ad_like_)(sg, true, &out[1]);
    if (st) TFE_FN(tensor_release)(&out[0]);
  }
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *ai = Ai.v.data + b * n * n;
    TFE_T s = TFE_FN(ad_ptr_)(sg)[b];
    if (rev) {
      TFE_T gs = TFE_FN(ad_ptr_)(d[0])[b], gl = TFE_FN(ad_ptr_)(d[1])[b];
      TFE_T c = (TFE_T)TFE_FN(ad_re_)(gl);
#if TFE_CPLX
      c -= (TFE_T)I * TFE_FN(ad_im_)(TFE_FN(la_conj_)(gs) * s);
#else
      (void)gs; (void)s;
#endif
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) out->v.data[b * n * n + i + j * n] = c * TFE_FN(la_conj_)(ai[j + i * n]);
    } else {
      TFE_T tr = 0;
      const TFE_T *dA = TFE_FN(ad_ptr_)(d[0]) + b * n * n;
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) tr += ai[j + i * n] * dA[i + j * n];
#if TFE_CPLX
      out[0].v.data[b] = (TFE_T)I * TFE_FN(ad_im_)(tr) * s;
#else
      out[0].v.data[b] = 0;
#endif
      out[1].v.data[b] = (TFE_T)TFE_FN(ad_re_)(tr);
    }
  }
  TFE_FN(tensor_release)(&Ai);
  if (st) return st;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_sign_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                       const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                       TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_rr_dev_)(2, x[0], y, dy, dx);
  return TFE_FN(ad_slogdet_sign_both_)(true, x[0], y[0], dy, dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_sign_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                       const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                       TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_fr_dev_)(2, x[0], dx[0], y, dy);
  return TFE_FN(ad_slogdet_sign_both_)(false, x[0], y[0], dx, dy);
}
#undef TFE__RS
#undef TFE__RT
#endif /* TFE_FLOAT */
#endif
