/* tenferro/ad/solve_rules_tpl.h — AD rules of the linear algebra, part 3: solve, inv, det,
 * slogdet, pinv, norms, expm, polar (part 1, with the dense helpers, is linalg_rules_tpl.h).
 * Bodies only, re-included per float kind by ad.h after parts 1 and 2. */
#if TFE__BODY_PHASE && TFE_FLOAT
#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

/* ---- solve, inv, det, slogdet ------------------------------------------------------------------ */
TFE_INTERNAL int64_t TFE_FN(ad_rhs_cols_)(const TFE_TY(view) *B, int64_t n, int64_t nb) {
  return n * nb > 0 ? TFE_FN(ad_numel_)(B) / (n * nb) : 0;
}
TFE_INTERNAL tfe_status TFE_FN(ad_solve_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  return TFE_FN(solve)(x[0], x[1], y);
}
/* Device forms of the solve rules (values in a backend's memory): the backend's solve (cuSOLVER)
 * on A^H or A and one batched contraction; operands seen as (n, n, nb) and (n, r, nb) blocks. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_as3_)(const TFE_TY(view) *v, int64_t a, int64_t b, int64_t nb) {
  TFE_TY(view) w = *v;
  int64_t d[3] = {a, b, nb};
  (void)tfe_layout_dense(3, d, TFE_COLMAJOR, &w.lay);
  w.lay.offset = v->lay.offset;
  return w;
}
TFE_INTERNAL tfe_status TFE_FN(ad_solve_dev_)(bool rev, const TFE_TY(view) *A, const TFE_TY(view) *B,
                                             const TFE_TY(view) *X, const TFE_TY(view) *dA, const TFE_TY(view) *dB,
                                             TFE_TY(tensor) *out, const char *fn) {
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(A, &m, &n, &nb, fn));
  int64_t r = TFE_FN(ad_rhs_cols_)(B, n, nb);
  if (n == 0 || nb == 0 || r == 0) { /* nothing to solve: zeros */
    if (!rev) return TFE_FN(ad_like_)(B, true, out);
    TFE_TRY(TFE_FN(ad_like_)(A, true, &out[0]));
    tfe_status st = TFE_FN(ad_like_)(B, true, &out[1]);
    if (st) TFE_FN(tensor_release)(&out[0]);
    return st;
  }
  const int32_t ijb[3] = {0, 1, 3}, irb[3] = {0, 2, 3}, jrb[3] = {1, 2, 3};
  TFE_TY(view) A3 = TFE_FN(ad_as3_)(A, n, n, nb), X3 = TFE_FN(ad_as3_)(X, n, r, nb);
  TFE_TY(tensor) T = {0}, S = {0};
  tfe_status st = TFE_OK;
  if (rev) { /* dB here is gX: gB = solve(A^H, gX), gA = -gB X^H */
    TFE_TY(view) AH = A3, G3 = TFE_FN(ad_as3_)(dB, n, r, nb);
    AH.lay.strides[0] = A3.lay.strides[1], AH.lay.strides[1] = A3.lay.strides[0];
    AH.conj = TFE_CPLX ? true : false;
    TFE_TY(view) Xc = X3;
    Xc.conj = TFE_CPLX ? true : false;
    st = TFE_FN(solve)(&AH, &G3, &S);
    if (!st) st = TFE_FN(ad_like_)(A, false, &out[0]);
    if (!st) {
      TFE_TY(view) gA3 = TFE_FN(ad_as3_)(&out[0].v, n, n, nb), gB3 = TFE_FN(ad_as3_)(&S.v, n, r, nb);
      st = TFE_FN(ad_contract_)(-1, &gB3, irb, &Xc, jrb, 0, &gA3, ijb);
      if (st) TFE_FN(tensor_release)(&out[0]);
    }
    if (!st) { out[1] = S; (void)tfe_layout_dense(B->lay.rank, B->lay.dims, TFE_COLMAJOR, &out[1].v.lay); }
    else TFE_FN(tensor_release)(&S);
    return st;
  }
  /* dX = solve(A, dB - dA X) */
  TFE_TY(view) dA3 = TFE_FN(ad_as3_)(dA, n, n, nb);
  st = TFE_FN(ad_dense_copy_)(dB, &T);
  if (!st) {
    TFE_TY(view) T3 = TFE_FN(ad_as3_)(&T.v, n, r, nb);
    st = TFE_FN(ad_contract_)(-1, &dA3, ijb, &X3, jrb, 1, &T3, irb);
    if (!st) st = TFE_FN(solve)(&A3, &T3, &S);
  }
  TFE_FN(tensor_release)(&T);
  if (!st) { *out = S; (void)tfe_layout_dense(B->lay.rank, B->lay.dims, TFE_COLMAJOR, &out->v.lay); }
  return st;
}
/* gB = A^-H gX, gA = -gB X^H. */
TFE_INTERNAL tfe_status TFE_FN(ad_solve_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  const char *fn = "tfe_rrule(solve)";
  if (TFE__AD_BE) return TFE_FN(ad_solve_dev_)(true, x[0], x[1], y[0], NULL, dy[0], dx, fn);
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t r = TFE_FN(ad_rhs_cols_)(x[1], n, nb);
  tfe_status st = TFE_FN(ad_like_)(x[0], true, &dx[0]);
  if (!st) st = TFE_FN(ad_dense_copy_)(dy[0], &dx[1]);
  TFE_T *w = st ? NULL : (TFE_T *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_T));
  lapack_int *ipiv = st ? NULL : (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
  if (!st && (!w || !ipiv)) st = TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    TFE_T *gB = dx[1].v.data + b * n * r;
    st = TFE_FN(ad_gesv_)('C', n, TFE_FN(ad_ptr_)(x[0]) + b * n * n, r, gB, w, ipiv, fn);
    if (!st) TFE_FN(ad_mm_)('N', 'C', n, n, r, -1, gB, TFE_FN(ad_ptr_)(y[0]) + b * n * r, 0, dx[0].v.data + b * n * n);
  }
  tfe__free(w);
  tfe__free(ipiv);
  if (st) TFE_FN(ad_release_n_)(dx, 2);
  return st;
}
/* dX = A^-1 (dB - dA X). */
TFE_INTERNAL tfe_status TFE_FN(ad_solve_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  const char *fn = "tfe_frule(solve)";
  if (TFE__AD_BE) return TFE_FN(ad_solve_dev_)(false, x[0], x[1], y[0], dx[0], dx[1], dy, fn);
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t r = TFE_FN(ad_rhs_cols_)(x[1], n, nb);
  TFE_TRY(TFE_FN(ad_dense_copy_)(dx[1], dy));
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_T));
  lapack_int *ipiv = (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
  tfe_status st = !w || !ipiv ? TFE_ERR_ALLOC : TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++) {
    TFE_T *d = dy->v.data + b * n * r;
    TFE_FN(ad_mm_)('N', 'N', n, r, n, -1, TFE_FN(ad_ptr_)(dx[0]) + b * n * n, TFE_FN(ad_ptr_)(y[0]) + b * n * r, 1, d);
    st = TFE_FN(ad_gesv_)('N', n, TFE_FN(ad_ptr_)(x[0]) + b * n * n, r, d, w, ipiv, fn);
  }
  tfe__free(w);
  tfe__free(ipiv);
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_inv_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_inv_pr_dev_)(x[0], y); /* the device's solve against I */
  return TFE_FN(inv)(x[0], y);
}
/* Reverse: gA = -Y^H gY Y^H; forward: dY = -Y dA Y (Y = A^-1). The reverse form is the forward
 * one applied to gY with Y^H, so one helper serves both. */
TFE_INTERNAL tfe_status TFE_FN(ad_inv_both_)(bool rev, const TFE_TY(view) *Y, const TFE_TY(view) *g, TFE_TY(tensor) *out) {
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(Y, &m, &n, &nb, rev ? "tfe_rrule(inv)" : "tfe_frule(inv)"));
  TFE_TRY(TFE_FN(ad_like_)(Y, true, out));
  TFE_T *T = (TFE_T *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_T));
  if (!T) { TFE_FN(tensor_release)(out); return TFE_ERR_ALLOC; }
  char op = rev ? 'C' : 'N';
  for (int64_t b = 0; b < nb; b++) {
    const TFE_T *y = TFE_FN(ad_ptr_)(Y) + b * n * n;
    TFE_FN(ad_mm_)(op, 'N', n, n, n, 1, y, TFE_FN(ad_ptr_)(g) + b * n * n, 0, T);
    TFE_FN(ad_mm_)('N', op, n, n, n, -1, T, y, 0, out->v.data + b * n * n);
  }
  tfe__free(T);
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_inv_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_inv_fr_dev_)(x, dy, y, dx, true);
  return TFE_FN(ad_inv_both_)(true, y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_inv_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_inv_fr_dev_)(x, dx, y, dy, false);
  return TFE_FN(ad_inv_both_)(false, y[0], dx[0], dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_det_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_pr_dev_)(0, x[0], y); /* the device's LU (dev_rules2_tpl.h) */
  return TFE_FN(det)(x[0], y);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                   TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_pr_dev_)(1, x[0], y);
  TFE_TY(tensor) sg = {0};
  TFE__RT la = {0};
  TFE_TRY(TFE_FN(slogdet)(x[0], &sg, &la));
  TFE_FN(tensor_release)(&sg);
  return TFE_FN(ad_from_real_)(&la, y);
}
/* det: gA = gd conj(d) A^-H, dd = d tr(A^-1 dA); slogdet: the same with d = 1 and real parts. */
TFE_INTERNAL tfe_status TFE_FN(ad_det_both_)(bool logs, bool rev, const TFE_TY(view) *A, const TFE_TY(view) *d,
                                             const TFE_TY(view) *g, TFE_TY(tensor) *out) {
  const char *fn = logs ? "tfe_rule(slogdet)" : "tfe_rule(det)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(A, &m, &n, &nb, fn));
  TFE_TY(tensor) Ai = {0};
  TFE_TRY(TFE_FN(inv)(A, &Ai));
  tfe_status st = rev ? TFE_FN(ad_like_)(A, true, out) : TFE_FN(ad_like_)(d, true, out);
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *ai = Ai.v.data + b * n * n, *gb = TFE_FN(ad_ptr_)(g) + (rev ? b : b * n * n);
    TFE_T db = logs ? (TFE_T)1 : TFE_FN(ad_ptr_)(d)[b];
    if (rev) {
      TFE_T c = logs ? (TFE_T)TFE_FN(ad_re_)(gb[0]) : gb[0] * TFE_FN(la_conj_)(db);
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) out->v.data[b * n * n + i + j * n] = c * TFE_FN(la_conj_)(ai[j + i * n]);
    } else {
      TFE_T tr = 0;
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) tr += ai[j + i * n] * gb[i + j * n];
      out->v.data[b] = logs ? (TFE_T)TFE_FN(ad_re_)(tr) : db * tr;
    }
  }
  TFE_FN(tensor_release)(&Ai);
  if (st) TFE_FN(tensor_release)(out);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_det_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_rr_dev_)(0, x[0], y, dy, dx);
  return TFE_FN(ad_det_both_)(false, true, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_det_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_fr_dev_)(0, x[0], dx[0], y, dy);
  return TFE_FN(ad_det_both_)(false, false, x[0], y[0], dx[0], dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_rr_dev_)(1, x[0], y, dy, dx);
  return TFE_FN(ad_det_both_)(true, true, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_det_fr_dev_)(1, x[0], dx[0], y, dy);
  return TFE_FN(ad_det_both_)(true, false, x[0], y[0], dx[0], dy);
}

/* ---- pinv ---------------------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_pinv_pr_dev_)(x[0], y); /* the device's SVD (dev_rules2_tpl.h) */
  return TFE_FN(pinv)(x[0], -1, y);
}
/* Reverse: gA = -Y^H gY Y^H + (I - A Y) gY^H Y Y^H + Y^H Y gY^H (I - Y A).
 * Forward: dY = -Y dA Y + Y Y^H dA^H (I - A Y) + (I - Y A) dA^H Y^H Y. */
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_both_)(bool rev, const TFE_TY(view) *A, const TFE_TY(view) *Y, const TFE_TY(view) *g,
                                              TFE_TY(tensor) *out) {
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(A, &m, &n, &nb, rev ? "tfe_rrule(pinv)" : "tfe_frule(pinv)"));
  TFE_TRY(TFE_FN(ad_like_)(rev ? A : Y, true, out));
  int64_t big = m > n ? m : n;
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(3 * big * big + 1), sizeof(TFE_T));
  if (!w) { TFE_FN(tensor_release)(out); return TFE_ERR_ALLOC; }
  TFE_T *T1 = w, *T2 = w + big * big, *T3 = T2 + big * big;
  for (int64_t b = 0; b < nb; b++) {
    const TFE_T *a = TFE_FN(ad_ptr_)(A) + b * m * n, *y = TFE_FN(ad_ptr_)(Y) + b * n * m, *gg = TFE_FN(ad_ptr_)(g) + b * m * n;
    TFE_T *o = out->v.data + b * m * n;
    if (rev) {
      TFE_FN(ad_mm_)('C', 'N', m, m, n, 1, y, gg, 0, T1);      /* Y^H gY (m x m) */
      TFE_FN(ad_mm_)('N', 'C', m, n, m, -1, T1, y, 0, o);      /* -Y^H gY Y^H */
      TFE_FN(ad_mm_)('N', 'C', n, n, m, 1, y, y, 0, T1);       /* Y Y^H (n x n) */
      TFE_FN(ad_mm_)('C', 'N', m, n, n, 1, gg, T1, 0, T2);     /* P2 = gY^H Y Y^H (m x n) */
      TFE_FN(ad_mm_)('N', 'N', n, n, m, 1, y, T2, 0, T3);      /* Y P2 (n x n) */
      for (int64_t i = 0; i < m * n; i++) o[i] += T2[i];
      TFE_FN(ad_mm_)('N', 'N', m, n, n, -1, a, T3, 1, o);      /* - A Y P2 */
      TFE_FN(ad_mm_)('C', 'N', m, m, n, 1, y, y, 0, T1);       /* Y^H Y (m x m) */
      TFE_FN(ad_mm_)('N', 'C', m, n, m, 1, T1, gg, 0, T2);     /* P3 = Y^H Y gY^H (m x n) */
      TFE_FN(ad_mm_)('N', 'N', m, m, n, 1, T2, y, 0, T3);      /* P3 Y (m x m) */
      for (int64_t i = 0; i < m * n; i++) o[i] += T2[i];
      TFE_FN(ad_mm_)('N', 'N', m, n, m, -1, T3, a, 1, o);      /* - P3 Y A */
    } else {
      TFE_FN(ad_mm_)('N', 'N', m, m, n, 1, gg, y, 0, T1);      /* dA Y (m x m) */
      TFE_FN(ad_mm_)('N', 'N', n, m, m, -1, y, T1, 0, o);      /* -Y dA Y */
      TFE_FN(ad_mm_)('C', 'N', n, n, m, 1, gg, a, 0, T1);      /* dA^H A (n x n) */
      TFE_FN(ad_ct_)(gg, m, n, T2);                             /* dA^H (n x m) */
      TFE_FN(ad_mm_)('N', 'N', n, m, n, -1, T1, y, 1, T2);     /* dA^H (I - A Y) */
      TFE_FN(ad_mm_)('N', 'C', n, n, m, 1, y, y, 0, T1);       /* Y Y^H */
      TFE_FN(ad_mm_)('N', 'N', n, m, n, 1, T1, T2, 1, o);
      TFE_FN(ad_mm_)('C', 'N', m, m, n, 1, y, y, 0, T1);       /* Y^H Y (m x m) */
      TFE_FN(ad_mm_)('C', 'N', n, m, m, 1, gg, T1, 0, T2);     /* R = dA^H Y^H Y (n x m) */
      for (int64_t i = 0; i < m * n; i++) o[i] += T2[i];
      TFE_FN(ad_mm_)('N', 'N', m, m, n, 1, a, T2, 0, T3);      /* A R (m x m) */
      TFE_FN(ad_mm_)('N', 'N', n, m, m, -1, y, T3, 1, o);      /* - Y A R */
    }
  }
  tfe__free(w);
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_pinv_dev_)(true, x[0], y[0], dy[0], dx);
  return TFE_FN(ad_pinv_both_)(true, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_pinv_dev_)(false, x[0], y[0], dx[0], dy);
  return TFE_FN(ad_pinv_both_)(false, x[0], y[0], dx[0], dy);
}

/* ---- norms ------------------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_norm_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)nin;
  if (TFE__AD_BE && TFE_FN(ad_norm_dev_ok_)(p)) return TFE_FN(ad_norm_pr_dev_)(p, x[0], y); /* Frobenius, nuclear, spectral */
  TFE__RT r = {0};
  TFE_TRY(TFE_FN(norm)(x[0], (tfe_norm_kind)p->norm, &r));
  return TFE_FN(ad_from_real_)(&r, y);
}
/* The derivative direction D of each norm (norm' = Re<D, dA>): A/|A| (Frobenius), U Vh
 * (nuclear), u1 v1^H (spectral), sign(a) on the largest column / row (1 / inf). */
TFE_INTERNAL tfe_status TFE_FN(ad_norm_dir_)(const tfe_ad_params *p, const TFE_TY(view) *A, const TFE_TY(view) *y,
                                             TFE_TY(tensor) *D) {
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(A, &m, &n, &nb, "tfe_rule(norm)"));
  int64_t k = m < n ? m : n;
  TFE_TRY(TFE_FN(ad_like_)(A, true, D));
  TFE_TY(tensor) f[3];
  memset(f, 0, sizeof f);
  tfe_status st = TFE_OK;
  if ((p->norm == TFE_NORM_NUC || p->norm == TFE_NORM_2) && nb > 0) st = TFE_FN(ad_svd_full_)(A, f);
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *a = TFE_FN(ad_ptr_)(A) + b * m * n;
    TFE_T *d = D->v.data + b * m * n;
    TFE_R nv = TFE_FN(ad_re_)(TFE_FN(ad_ptr_)(y)[b]);
    if (p->norm == TFE_NORM_FRO) {
      for (int64_t i = 0; i < m * n; i++) d[i] = nv > 0 ? a[i] / nv : (TFE_T)0;
    } else if (p->norm == TFE_NORM_NUC) {
      TFE_FN(ad_mm_)('N', 'N', m, n, k, 1, f[0].v.data + b * m * k, f[2].v.data + b * k * n, 0, d);
    } else if (p->norm == TFE_NORM_2) {
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) d[i + j * m] = f[0].v.data[b * m * k + i] * f[2].v.data[b * k * n + j * k];
    } else {
      bool rows = p->norm == TFE_NORM_INF;
      int64_t no = rows ? m : n, ni = rows ? n : m, best = 0;
      double bv = -1;
      for (int64_t o = 0; o < no; o++) {
        double s = 0;
        for (int64_t i = 0; i < ni; i++) s += (double)TFE__MABS(a[rows ? o + i * m : i + o * m]);
        if (s > bv) { bv = s; best = o; }
      }
      for (int64_t i = 0; i < ni; i++) {
        int64_t off = rows ? best + i * m : i + best * m;
        d[off] = TFE_FN(ad_sign_)(a[off]);
      }
    }
  }
  TFE_FN(ad_release_n_)(f, 3);
  if (st) TFE_FN(tensor_release)(D);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_norm_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)nin;
  if (TFE__AD_BE && TFE_FN(ad_norm_dev_ok_)(p)) return TFE_FN(ad_norm_dev_)(true, p, x[0], y[0], dy[0], dx);
  TFE_TRY(TFE_FN(ad_norm_dir_)(p, x[0], y[0], dx));
  int64_t mn = x[0]->lay.dims[0] * x[0]->lay.dims[1], nb = mn > 0 ? TFE_FN(ad_numel_)(x[0]) / mn : 0;
  for (int64_t b = 0; b < nb; b++) {
    TFE_R g = TFE_FN(ad_re_)(TFE_FN(ad_ptr_)(dy[0])[b]);
    for (int64_t i = 0; i < mn; i++) dx->v.data[b * mn + i] *= g;
  }
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_norm_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE && TFE_FN(ad_norm_dev_ok_)(p)) return TFE_FN(ad_norm_dev_)(false, p, x[0], y[0], dx[0], dy);
  TFE_TY(tensor) D = {0};
  TFE_TRY(TFE_FN(ad_norm_dir_)(p, x[0], y[0], &D));
  tfe_status st = TFE_FN(ad_like_)(y[0], true, dy);
  int64_t mn = x[0]->lay.dims[0] * x[0]->lay.dims[1], nb = mn > 0 ? TFE_FN(ad_numel_)(x[0]) / mn : 0;
  for (int64_t b = 0; !st && b < nb; b++) {
    double s = 0;
    for (int64_t i = 0; i < mn; i++)
      s += (double)TFE_FN(ad_re_)(TFE_FN(la_conj_)(D.v.data[b * mn + i]) * TFE_FN(ad_ptr_)(dx[0])[b * mn + i]);
    dy->v.data[b] = (TFE_T)s;
  }
  TFE_FN(tensor_release)(&D);
  return st;
}

/* ---- expm ------------------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_expm_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_expm_pr_dev_)(x[0], y); /* the device's GEMMs and solve */
  return TFE_FN(expm)(x[0], y);
}
/* The Frechet derivative L(M, E) is the top-right block of exp([[M, E], [0, M]]); forward uses
 * M = A, E = dA; reverse M = A^H, E = gX. */
TFE_INTERNAL tfe_status TFE_FN(ad_expm_both_)(bool rev, const TFE_TY(view) *A, const TFE_TY(view) *E, TFE_TY(tensor) *out) {
  const char *fn = rev ? "tfe_rrule(expm)" : "tfe_frule(expm)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(A, &m, &n, &nb, fn));
  TFE_TRY(TFE_FN(ad_like_)(A, true, out));
  int64_t N = 2 * n;
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(8 * N * N + 1), sizeof(TFE_T));
  lapack_int *ipiv = (lapack_int *)tfe__calloc((size_t)(N + 1), sizeof(lapack_int));
  tfe_status st = !w || !ipiv ? TFE_ERR_ALLOC : TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *a = TFE_FN(ad_ptr_)(A) + b * n * n, *e = TFE_FN(ad_ptr_)(E) + b * n * n;
    TFE_T *blk = w;
    for (int64_t i = 0; i < N * N; i++) blk[i] = 0;
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) {
        TFE_T v = rev ? TFE_FN(la_conj_)(a[j + i * n]) : a[i + j * n];
        blk[i + j * N] = v;
        blk[(n + i) + (n + j) * N] = v;
        blk[i + (n + j) * N] = e[i + j * n];
      }
    st = TFE_FN(la_expm1_)(blk, N, w + N * N, ipiv, fn);
    for (int64_t j = 0; !st && j < n; j++)
      for (int64_t i = 0; i < n; i++) out->v.data[b * n * n + i + j * n] = blk[i + (n + j) * N];
  }
  tfe__free(w);
  tfe__free(ipiv);
  if (st) TFE_FN(tensor_release)(out);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_expm_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin; (void)y;
  if (TFE__AD_BE) return TFE_FN(ad_expm_dev_)(true, x[0], dy[0], dx);
  return TFE_FN(ad_expm_both_)(true, x[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_expm_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin; (void)y;
  if (TFE__AD_BE) return TFE_FN(ad_expm_dev_)(false, x[0], dx[0], dy);
  return TFE_FN(ad_expm_both_)(false, x[0], dx[0], dy);
}

/* ---- polar (through the SVD rules) ------------------------------------------------------------ */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_polar_pr_dev_)(x[0], y); /* the device's SVD */
  return TFE_FN(polar)(x[0], &y[0], &y[1]);
}
/* Up = U Vh, P = Vh^H S Vh: gU = gUp Vh^H, gVh = U^H gUp + S Vh (gP + gP^H),
 * gS = Re diag(Vh gP Vh^H); then the SVD rule. */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)nin; (void)y;
  if (TFE__AD_BE) return TFE_FN(ad_polar_rr_dev_)(p, x, dy, dx);
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_rrule(polar)"));
  int64_t k = m < n ? m : n;
  TFE_TY(tensor) f[3], g[3];
  memset(f, 0, sizeof f);
  memset(g, 0, sizeof g);
  TFE_TRY(TFE_FN(ad_svd_full_)(x[0], f));
  tfe_status st = TFE_OK;
  for (int i = 0; i < 3 && !st; i++) st = TFE_FN(ad_like_)(&f[i].v, true, &g[i]);
  TFE_T *w = st ? NULL : (TFE_T *)tfe__calloc((size_t)(n * n + k * n + 1), sizeof(TFE_T));
  if (!st && !w) st = TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *U = f[0].v.data + b * m * k, *s = f[1].v.data + b * k, *Vh = f[2].v.data + b * k * n;
    const TFE_T *gUp = TFE_FN(ad_ptr_)(dy[0]) + b * m * n, *gP = TFE_FN(ad_ptr_)(dy[1]) + b * n * n;
    TFE_T *gU = g[0].v.data + b * m * k, *gs = g[1].v.data + b * k, *gVh = g[2].v.data + b * k * n;
    TFE_T *H = w, *T = w + n * n;
    TFE_FN(ad_mm_)('N', 'C', m, k, n, 1, gUp, Vh, 0, gU);
    TFE_FN(ad_mm_)('C', 'N', k, n, m, 1, U, gUp, 0, gVh);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) H[i + j * n] = gP[i + j * n] + TFE_FN(la_conj_)(gP[j + i * n]);
    TFE_FN(ad_mm_)('N', 'N', k, n, n, 1, Vh, H, 0, T);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < k; i++) gVh[i + j * k] += s[i] * T[i + j * k];
    TFE_FN(ad_mm_)('N', 'N', k, n, n, 1, Vh, gP, 0, T);
    for (int64_t i = 0; i < k; i++) {
      TFE_T d = 0;
      for (int64_t j = 0; j < n; j++) d += T[i + j * k] * TFE_FN(la_conj_)(Vh[i + j * k]);
      gs[i] = TFE_FN(ad_re_)(d);
    }
  }
  if (!st) {
    const TFE_TY(view) *fy[3] = {&f[0].v, &f[1].v, &f[2].v}, *gy[3] = {&g[0].v, &g[1].v, &g[2].v};
    st = TFE_FN(ad_svd_rrule_)(p, 1, x, fy, gy, dx);
  }
  tfe__free(w);
  TFE_FN(ad_release_n_)(f, 3);
  TFE_FN(ad_release_n_)(g, 3);
  return st;
}
/* dUp = dU Vh + U dVh; dP = dVh^H S Vh + Vh^H dS Vh + Vh^H S dVh. */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_polar_fr_dev_)(p, x, dx, y, dy);
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_frule(polar)"));
  int64_t k = m < n ? m : n;
  TFE_TY(tensor) f[3], t[3];
  memset(f, 0, sizeof f);
  memset(t, 0, sizeof t);
  TFE_TRY(TFE_FN(ad_svd_full_)(x[0], f));
  const TFE_TY(view) *fy[3] = {&f[0].v, &f[1].v, &f[2].v};
  tfe_status st = TFE_FN(ad_svd_frule_)(p, 1, x, dx, fy, t);
  if (!st) st = TFE_FN(ad_like_)(y[0], true, &dy[0]);
  if (!st) st = TFE_FN(ad_like_)(y[1], true, &dy[1]);
  TFE_T *w = st ? NULL : (TFE_T *)tfe__calloc((size_t)(k * n + 1), sizeof(TFE_T));
  if (!st && !w) st = TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *U = f[0].v.data + b * m * k, *s = f[1].v.data + b * k, *Vh = f[2].v.data + b * k * n;
    const TFE_T *dU = t[0].v.data + b * m * k, *ds = t[1].v.data + b * k, *dVh = t[2].v.data + b * k * n;
    TFE_T *dUp = dy[0].v.data + b * m * n, *dP = dy[1].v.data + b * n * n, *SV = w;
    TFE_FN(ad_mm_)('N', 'N', m, n, k, 1, dU, Vh, 0, dUp);
    TFE_FN(ad_mm_)('N', 'N', m, n, k, 1, U, dVh, 1, dUp);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < k; i++) SV[i + j * k] = s[i] * Vh[i + j * k];
    TFE_FN(ad_mm_)('C', 'N', n, n, k, 1, dVh, SV, 0, dP);
    TFE_FN(ad_mm_)('C', 'N', n, n, k, 1, SV, dVh, 1, dP);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < k; i++) SV[i + j * k] = ds[i] * Vh[i + j * k];
    TFE_FN(ad_mm_)('C', 'N', n, n, k, 1, Vh, SV, 1, dP);
  }
  tfe__free(w);
  TFE_FN(ad_release_n_)(f, 3);
  TFE_FN(ad_release_n_)(t, 3);
  if (st) TFE_FN(ad_release_n_)(dy, 2);
  return st;
}
#undef TFE__LP
#undef TFE__RS
#undef TFE__RT
#endif
