/* tenferro/ad/linalg_rules_tpl.h — primal, forward and reverse rules of the linear algebra
 * operations for one float kind, part 1: dense matrix helpers (used by all three parts), SVD,
 * QR and LQ. Part 2 (eig_rules_tpl.h): eigendecompositions, LU, Cholesky; part 3
 * (solve_rules_tpl.h): solve, inv, det, slogdet, pinv, norms, expm, polar. Re-included per kind
 * by ad.h, bodies only (the rules are reached through the tape's dispatch table). Operands are
 * dense column-major batches (m, n, batch...); formulas are per matrix (derivations in
 * docs/ad.md). */
#if TFE__BODY_PHASE && TFE_FLOAT
#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

/* ---- dense matrix helpers ---------------------------------------------------------------- */
/* C (m x n) = alpha op(A) op(B) + beta C with packed leading dimensions. */
TFE_INTERNAL void TFE_FN(ad_mm_)(char ta, char tb, int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *A,
                                 const TFE_T *B, TFE_T beta, TFE_T *C) {
  TFE_FN(la_gemm_)(ta, tb, m, n, k, alpha, A, ta == 'N' ? m : k, B, tb == 'N' ? k : n, beta, C, m);
}
/* out (n x m) = A^H for A (m x n). */
TFE_INTERNAL void TFE_FN(ad_ct_)(const TFE_T *A, int64_t m, int64_t n, TFE_T *out) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) out[j + i * n] = TFE_FN(la_conj_)(A[i + j * m]);
}
/* Triangular solve op(T) X = B in place (B n x r). */
TFE_INTERNAL tfe_status TFE_FN(ad_trs_)(char uplo, char trans, char diag, int64_t n, const TFE_T *T, int64_t r, TFE_T *B,
                                        const char *fn) {
  if (n == 0 || r == 0) return TFE_OK;
  int info = (int)TFE__LP(trtrs)(LAPACK_COL_MAJOR, uplo, trans, diag, (int)n, (int)r, T, (int)n, B, (int)n);
  TFE_TRY(tfe__lapack_info(info, "trtrs", fn));
  if (info > 0) return tfe__fail(TFE_ERR_SINGULAR, fn, "triangular factor is singular (zero at %d)", info - 1);
  return TFE_OK;
}
/* op(A) X = B in place for square A (copied into w, n x n; ipiv n). trans 'N' or 'C'. */
TFE_INTERNAL tfe_status TFE_FN(ad_gesv_)(char trans, int64_t n, const TFE_T *A, int64_t r, TFE_T *B, TFE_T *w,
                                         lapack_int *ipiv, const char *fn) {
  if (n == 0 || r == 0) return TFE_OK;
  if (trans == 'N') memcpy(w, A, (size_t)(n * n) * sizeof(TFE_T));
  else TFE_FN(ad_ct_)(A, n, n, w);
  int info = (int)TFE__LP(gesv)(LAPACK_COL_MAJOR, (int)n, (int)r, w, (int)n, ipiv, B, (int)n);
  TFE_TRY(tfe__lapack_info(info, "gesv", fn));
  if (info > 0) return tfe__fail(TFE_ERR_SINGULAR, fn, "matrix is singular: the rule needs its inverse");
  return TFE_OK;
}
/* Matrix dims of a batched operand. */
TFE_INTERNAL tfe_status TFE_FN(ad_mdims_)(const TFE_TY(view) *A, int64_t *m, int64_t *n, int64_t *nb, const char *fn) {
  if (A->lay.rank < 2) return tfe__fail(TFE_ERR_RANK, fn, "needs a matrix (rank >= 2), got rank %d", A->lay.rank);
  *m = A->lay.dims[0]; *n = A->lay.dims[1];
  *nb = *m * *n > 0 ? TFE_FN(ad_numel_)(A) / (*m * *n) : 0;
  return TFE_OK;
}
TFE_INTERNAL const TFE_T *TFE_FN(ad_ptr_)(const TFE_TY(view) *v) { return v->data + v->lay.offset; }

/* A real-kind tensor as a tensor of this kind (imaginary parts zero); r is released. */
TFE_INTERNAL tfe_status TFE_FN(ad_from_real_)(TFE__RT *r, TFE_TY(tensor) *out) {
  if (TFE__AD_BE) { /* in the backend's memory: zeros, then r into the real parts */
    tfe_status st = TFE_FN(ad_zeros_)(r->v.lay.rank, r->v.lay.dims, out);
    if (!st) {
      tfe_dyn re = TFE_FN(ad_part_)(&out->v, 0), src;
      st = TFE_CAT(tfe_view_to_dyn_, TFE__RS)(&r->v, &src);
      tfe_ew_desc d = {TFE_EW_COPY, 0, &re, &src, NULL, NULL, NULL, 0, NULL, 0, NULL, 0};
      if (!st) st = TFE__AD_BE->elementwise(TFE__AD_BE, &d);
      if (st) TFE_FN(tensor_release)(out);
    }
    TFE_CAT(tfe_tensor_release_, TFE__RS)(r);
    return st;
  }
  tfe_status st = TFE_FN(empty)(out, r->v.lay.rank, r->v.lay.dims, TFE_COLMAJOR);
  if (!st) {
    int64_t n = tfe_layout_numel(&r->v.lay);
    for (int64_t i = 0; i < n; i++) out->v.data[i] = (TFE_T)r->v.data[i];
  }
  TFE_CAT(tfe_tensor_release_, TFE__RS)(r);
  return st;
}

/* Broadening of 1 / (a_j - a_i) and 1 / s: x / (x^2 + (eta scale)^2), eta default sqrt(eps). */
TFE_INTERNAL double TFE_FN(ad_eta_)(const tfe_ad_params *p) {
  return p->eta > 0 ? p->eta : sqrt((double)TFE_FN(la_eps_)());
}
TFE_INTERNAL TFE_R TFE_FN(ad_lor_)(double x, double eps2) { return (TFE_R)(x / (x * x + eps2)); }

/* ---- SVD ------------------------------------------------------------------------------------ */
/* Broadened 1 / (s_j - s_i) in Fm, 1 / (s_j + s_i) in Fp (diagonals zero) and 1 / s_i in sinv:
 * x / (x^2 + (eta s_max)^2). Splitting 1 / (s_j^2 - s_i^2) this way broadens only the
 * differences, so the part of a gradient carried by 1 / (s_j + s_i) stays exact in degenerate
 * blocks. */
TFE_INTERNAL void TFE_FN(ad_svd_f_)(const TFE_T *s, int64_t k, double eta, TFE_R *Fm, TFE_R *Fp, TFE_R *sinv) {
  double smax = 0;
  for (int64_t i = 0; i < k; i++) if (fabs((double)TFE_FN(ad_re_)(s[i])) > smax) smax = fabs((double)TFE_FN(ad_re_)(s[i]));
  double e2 = (eta * smax) * (eta * smax);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) {
      double si = TFE_FN(ad_re_)(s[i]), sj = TFE_FN(ad_re_)(s[j]);
      bool z = i == j || smax == 0;
      Fm[i + j * k] = z ? 0 : TFE_FN(ad_lor_)(sj - si, e2);
      Fp[i + j * k] = z ? 0 : TFE_FN(ad_lor_)(sj + si, e2);
    }
  for (int64_t i = 0; i < k; i++) sinv[i] = smax == 0 ? 0 : TFE_FN(ad_lor_)((double)TFE_FN(ad_re_)(s[i]), e2);
}

/* Reverse rule of one thin SVD (U m x k, s k, Vh k x n); gA (m x n) is written. */
TFE_INTERNAL tfe_status TFE_FN(ad_svd_rr1_)(int64_t m, int64_t n, int64_t k, const TFE_T *U, const TFE_T *s, const TFE_T *Vh,
                                            const TFE_T *gU, const TFE_T *gs, const TFE_T *gVh, double eta, TFE_T *gA) {
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(3 * k * k + k * n + m * k + 1), sizeof(TFE_T));
  TFE_R *F = (TFE_R *)tfe__calloc((size_t)(2 * k * k + k + 1), sizeof(TFE_R));
  if (!w || !F) { tfe__free(w); tfe__free(F); return TFE_ERR_ALLOC; }
  TFE_T *J = w, *K = J + k * k, *X = K + k * k, *T1 = X + k * k, *W2 = T1 + k * n;
  TFE_R *Fp = F + k * k, *sinv = Fp + k * k;
  TFE_FN(ad_svd_f_)(s, k, eta, F, Fp, sinv);
  TFE_FN(ad_mm_)('C', 'N', k, k, m, 1, U, gU, 0, J);
  TFE_FN(ad_mm_)('N', 'C', k, k, n, 1, Vh, gVh, 0, K);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) {
      /* X_ij = (Ja + Ka)_ij / (s_j - s_i) + (Ja - Ka)_ij / (s_j + s_i), Ja, Ka: skew parts */
      TFE_T ja = (J[i + j * k] - TFE_FN(la_conj_)(J[j + i * k])) / 2, ka = (K[i + j * k] - TFE_FN(la_conj_)(K[j + i * k])) / 2;
      if (i != j)
        X[i + j * k] = (ja + ka) * F[i + j * k] + (ja - ka) * Fp[i + j * k];
      else
#if TFE_CPLX
        X[i + i * k] = TFE_FN(ad_re_)(gs[i]) + (TFE_T)I * TFE_FN(ad_im_)(J[i + i * k]) * sinv[i];
#else
        X[i + i * k] = gs[i];
#endif
    }
  /* T1 = X Vh + diag(sinv) (gVh - K^H Vh) */
  memcpy(T1, gVh, (size_t)(k * n) * sizeof(TFE_T));
  TFE_FN(ad_mm_)('C', 'N', k, n, k, -1, K, Vh, 1, T1);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < k; i++) T1[i + j * k] *= sinv[i];
  TFE_FN(ad_mm_)('N', 'N', k, n, k, 1, X, Vh, 1, T1);
  TFE_FN(ad_mm_)('N', 'N', m, n, k, 1, U, T1, 0, gA);
  /* gA += (gU - U J) diag(sinv) Vh */
  memcpy(W2, gU, (size_t)(m * k) * sizeof(TFE_T));
  TFE_FN(ad_mm_)('N', 'N', m, k, k, -1, U, J, 1, W2);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < m; i++) W2[i + j * m] *= sinv[j];
  TFE_FN(ad_mm_)('N', 'N', m, n, k, 1, W2, Vh, 1, gA);
  tfe__free(w);
  tfe__free(F);
  return TFE_OK;
}

/* Forward rule of one thin SVD: dU (m x k), ds (k), dVh (k x n) from dA. */
TFE_INTERNAL tfe_status TFE_FN(ad_svd_fr1_)(int64_t m, int64_t n, int64_t k, const TFE_T *U, const TFE_T *s, const TFE_T *Vh,
                                            const TFE_T *dA, double eta, TFE_T *dU, TFE_T *ds, TFE_T *dVh) {
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(3 * k * k + k * n + 1), sizeof(TFE_T));
  TFE_R *F = (TFE_R *)tfe__calloc((size_t)(2 * k * k + k + 1), sizeof(TFE_R));
  if (!w || !F) { tfe__free(w); tfe__free(F); return TFE_ERR_ALLOC; }
  TFE_T *dP = w, *dC = dP + k * k, *dD = dC + k * k, *T = dD + k * k;
  TFE_R *Fp = F + k * k, *sinv = Fp + k * k;
  TFE_FN(ad_svd_f_)(s, k, eta, F, Fp, sinv);
  TFE_FN(ad_mm_)('C', 'N', k, n, m, 1, U, dA, 0, T);   /* T = U^H dA */
  TFE_FN(ad_mm_)('N', 'C', k, k, n, 1, T, Vh, 0, dP);  /* dP = U^H dA V */
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) {
      /* dC = Ps / (s_j - s_i) + Pa / (s_j + s_i), dD = Ps / (s_j - s_i) - Pa / (s_j + s_i) */
      TFE_T p = dP[i + j * k], pt = TFE_FN(la_conj_)(dP[j + i * k]), ps = (p + pt) / 2, pa = (p - pt) / 2;
      dC[i + j * k] = i == j ? (TFE_T)0 : ps * F[i + j * k] + pa * Fp[i + j * k];
      dD[i + j * k] = i == j ? (TFE_T)0 : ps * F[i + j * k] - pa * Fp[i + j * k];
    }
  for (int64_t i = 0; i < k; i++) {
    ds[i] = TFE_FN(ad_re_)(dP[i + i * k]);
#if TFE_CPLX
    dC[i + i * k] = (TFE_T)I * TFE_FN(ad_im_)(dP[i + i * k]) * sinv[i];
#endif
  }
  /* dU = U dC + (dA V - U dP) diag(sinv) */
  TFE_FN(ad_mm_)('N', 'C', m, k, n, 1, dA, Vh, 0, dU);
  TFE_FN(ad_mm_)('N', 'N', m, k, k, -1, U, dP, 1, dU);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < m; i++) dU[i + j * m] *= sinv[j];
  TFE_FN(ad_mm_)('N', 'N', m, k, k, 1, U, dC, 1, dU);
  /* dVh = diag(sinv) (U^H dA - dP Vh) - dD Vh */
  TFE_FN(ad_mm_)('N', 'N', k, n, k, -1, dP, Vh, 1, T);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < k; i++) T[i + j * k] *= sinv[i];
  TFE_FN(ad_mm_)('N', 'N', k, n, k, -1, dD, Vh, 1, T);
  memcpy(dVh, T, (size_t)(k * n) * sizeof(TFE_T));
  tfe__free(w);
  tfe__free(F);
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(ad_svd_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               TFE_TY(tensor) *y) {
  (void)nin;
  (void)p;
  TFE__RT s = {0};
  TFE_TRY(TFE_FN(svd)(x[0], TFE_SVD_THIN, &y[0], &s, &y[2]));
  tfe_status st = TFE_FN(ad_from_real_)(&s, &y[1]);
  if (st) { TFE_FN(tensor_release)(&y[0]); TFE_FN(tensor_release)(&y[2]); }
  return st;
}

TFE_INTERNAL tfe_status TFE_FN(ad_svd_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                              TFE_TY(tensor) *dx) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_svd_rr_dev_)(p, x, y, dy, dx);
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_rrule(svd)"));
  int64_t k = m < n ? m : n;
  TFE_TRY(TFE_FN(ad_like_)(x[0], true, dx));
  tfe_status st = TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++)
    st = TFE_FN(ad_svd_rr1_)(m, n, k, TFE_FN(ad_ptr_)(y[0]) + b * m * k, TFE_FN(ad_ptr_)(y[1]) + b * k,
                             TFE_FN(ad_ptr_)(y[2]) + b * k * n, TFE_FN(ad_ptr_)(dy[0]) + b * m * k,
                             TFE_FN(ad_ptr_)(dy[1]) + b * k, TFE_FN(ad_ptr_)(dy[2]) + b * k * n, TFE_FN(ad_eta_)(p),
                             dx->v.data + b * m * n);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}

TFE_INTERNAL tfe_status TFE_FN(ad_svd_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                              TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_svd_fr_dev_)(p, x, dx, y, dy);
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_frule(svd)"));
  int64_t k = m < n ? m : n;
  tfe_status st = TFE_OK;
  for (int i = 0; i < 3 && !st; i++) st = TFE_FN(ad_like_)(y[i], true, &dy[i]);
  for (int64_t b = 0; !st && b < nb; b++)
    st = TFE_FN(ad_svd_fr1_)(m, n, k, TFE_FN(ad_ptr_)(y[0]) + b * m * k, TFE_FN(ad_ptr_)(y[1]) + b * k,
                             TFE_FN(ad_ptr_)(y[2]) + b * k * n, TFE_FN(ad_ptr_)(dx[0]) + b * m * n, TFE_FN(ad_eta_)(p),
                             dy[0].v.data + b * m * k, dy[1].v.data + b * k, dy[2].v.data + b * k * n);
  if (st) for (int i = 0; i < 3; i++) TFE_FN(tensor_release)(&dy[i]);
  return st;
}

/* Truncated SVD of one matrix. Both rules work on the full thin SVD of A (recomputed: the
 * discarded singular vectors enter the derivative of the kept ones). */
TFE_INTERNAL tfe_status TFE_FN(ad_svdt_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_svdt_pr_dev_)(p, x[0], y); /* the device's SVD (dev_rules2_tpl.h) */
  if (x[0]->lay.rank != 2) return tfe__fail(TFE_ERR_RANK, "tfe_ad_svd_trunc", "needs one matrix, got rank %d", x[0]->lay.rank);
  TFE__RT s = {0};
  TFE_TRY(TFE_FN(svd_trunc)(x[0], 1, (const int[]){0}, &p->trunc, &y[0], &s, &y[2], NULL));
  tfe_status st = TFE_FN(ad_from_real_)(&s, &y[1]);
  if (st) { TFE_FN(tensor_release)(&y[0]); TFE_FN(tensor_release)(&y[2]); }
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_svd_full_)(const TFE_TY(view) *A, TFE_TY(tensor) *f) {
  tfe_ad_params q;
  memset(&q, 0, sizeof q);
  return TFE_FN(ad_svd_primal_)(&q, 1, &A, f);
}
TFE_INTERNAL void TFE_FN(ad_release_n_)(TFE_TY(tensor) *t, int n) {
  for (int i = 0; i < n; i++) TFE_FN(tensor_release)(&t[i]);
}
TFE_INTERNAL tfe_status TFE_FN(ad_svdt_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                               TFE_TY(tensor) *dx) {
  (void)nin; (void)y;
  if (TFE__AD_BE) return TFE_FN(ad_svdt_dev_)(true, p, x, dy, y, dx);
  TFE_TY(tensor) f[3], g[3];
  memset(f, 0, sizeof f);
  memset(g, 0, sizeof g);
  TFE_TRY(TFE_FN(ad_svd_full_)(x[0], f));
  int64_t m = x[0]->lay.dims[0], n = x[0]->lay.dims[1], k = m < n ? m : n, r = dy[1]->lay.dims[0];
  tfe_status st = TFE_OK;
  for (int i = 0; i < 3 && !st; i++) st = TFE_FN(ad_like_)(&f[i].v, true, &g[i]);
  if (!st) { /* zero-padded cotangents of the kept part */
    memcpy(g[0].v.data, TFE_FN(ad_ptr_)(dy[0]), (size_t)(m * r) * sizeof(TFE_T));
    memcpy(g[1].v.data, TFE_FN(ad_ptr_)(dy[1]), (size_t)r * sizeof(TFE_T));
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < r; i++) g[2].v.data[i + j * k] = TFE_FN(ad_ptr_)(dy[2])[i + j * r];
    const TFE_TY(view) *fy[3] = {&f[0].v, &f[1].v, &f[2].v}, *gy[3] = {&g[0].v, &g[1].v, &g[2].v};
    st = TFE_FN(ad_svd_rrule_)(p, 1, x, fy, gy, dx);
  }
  TFE_FN(ad_release_n_)(f, 3);
  TFE_FN(ad_release_n_)(g, 3);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_svdt_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                               TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_svdt_dev_)(false, p, x, dx, y, dy);
  TFE_TY(tensor) f[3], t[3];
  memset(f, 0, sizeof f);
  memset(t, 0, sizeof t);
  TFE_TRY(TFE_FN(ad_svd_full_)(x[0], f));
  int64_t m = x[0]->lay.dims[0], n = x[0]->lay.dims[1], k = m < n ? m : n, r = y[1]->lay.dims[0];
  const TFE_TY(view) *fy[3] = {&f[0].v, &f[1].v, &f[2].v};
  tfe_status st = TFE_FN(ad_svd_frule_)(p, 1, x, dx, fy, t);
  for (int i = 0; i < 3 && !st; i++) st = TFE_FN(ad_like_)(y[i], false, &dy[i]);
  if (!st) {
    memcpy(dy[0].v.data, t[0].v.data, (size_t)(m * r) * sizeof(TFE_T));
    memcpy(dy[1].v.data, t[1].v.data, (size_t)r * sizeof(TFE_T));
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < r; i++) dy[2].v.data[i + j * r] = t[2].v.data[i + j * k];
  } else {
    TFE_FN(ad_release_n_)(dy, 3);
  }
  TFE_FN(ad_release_n_)(f, 3);
  TFE_FN(ad_release_n_)(t, 3);
  return st;
}

/* ---- QR and LQ -------------------------------------------------------------------------------- */
/* Omega of the QR rule: strict lower part of X, minus its conjugate transpose above, i Im on the
 * diagonal (skew-Hermitian). */
TFE_INTERNAL void TFE_FN(ad_qr_omega_)(const TFE_T *X, int64_t n, TFE_T *O) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      if (i > j) O[i + j * n] = X[i + j * n];
      else if (i < j) O[i + j * n] = -TFE_FN(la_conj_)(X[j + i * n]);
#if TFE_CPLX
      else O[i + i * n] = (TFE_T)I * TFE_FN(ad_im_)(X[i + i * n]);
#else
      else O[i + i * n] = 0;
#endif
    }
}

/* QR reverse rule, A m x n = Q R; m >= n: Q m x n, R n x n; m < n: Q m x m, R m x n and the
 * trailing columns Y of A enter as gQ += Y gR2^H, gY = Q gR2. */
TFE_INTERNAL tfe_status TFE_FN(ad_qr_rr1_)(int64_t m, int64_t n, const TFE_T *A, const TFE_T *Q, const TFE_T *R,
                                           const TFE_T *gQ, const TFE_T *gR, TFE_T *gA, const char *fn) {
  int64_t k = m < n ? m : n;
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(4 * k * k + 2 * m * k + 1), sizeof(TFE_T));
  if (!w) return TFE_ERR_ALLOC;
  TFE_T *QgQ = w, *N = QgQ + k * k, *G = N + k * k, *R1 = G + k * k, *B = R1 + k * k, *C = B + m * k;
  TFE_T *gQe = C; /* reuse: effective gQ, then C = B^H */
  memcpy(gQe, gQ, (size_t)(m * k) * sizeof(TFE_T));
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) R1[i + j * k] = R[i + j * k];
  if (n > m) { /* wide: gQ += Y gR2^H; gY = Q gR2 */
    TFE_FN(ad_mm_)('N', 'C', m, m, n - m, 1, A + m * m, gR + m * m, 1, gQe);
    TFE_FN(ad_mm_)('N', 'N', m, n - m, m, 1, Q, gR + m * m, 0, gA + m * m);
  }
  TFE_FN(ad_mm_)('C', 'N', k, k, m, 1, Q, gQe, 0, QgQ);
  TFE_FN(ad_mm_)('N', 'C', k, k, k, 1, gR, R1, 0, G); /* gR1 R1^H (gR's first k columns) */
  for (int64_t i = 0; i < k * k; i++) N[i] = QgQ[i] - G[i];
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) {
      if (i > j) G[i + j * k] += N[i + j * k] - TFE_FN(la_conj_)(N[j + i * k]);
#if TFE_CPLX
      if (i == j) G[i + i * k] += (TFE_T)I * TFE_FN(ad_im_)(N[i + i * k]);
#endif
    }
  for (int64_t i = 0; i < k * k; i++) G[i] -= QgQ[i];
  memcpy(B, gQe, (size_t)(m * k) * sizeof(TFE_T));
  TFE_FN(ad_mm_)('N', 'N', m, k, k, 1, Q, G, 1, B); /* B = gQ + Q (G - Q^H gQ) */
  TFE_FN(ad_ct_)(B, m, k, C);                       /* C = B^H, then R1^-1 B^H */
  tfe_status st = TFE_FN(ad_trs_)('U', 'N', 'N', k, R1, m, C, fn);
  if (!st) TFE_FN(ad_ct_)(C, k, m, gA); /* gA[:, :k] = B R1^-H */
  tfe__free(w);
  return st;
}

/* QR forward rule: dQ, dR from dA. */
TFE_INTERNAL tfe_status TFE_FN(ad_qr_fr1_)(int64_t m, int64_t n, const TFE_T *A, const TFE_T *Q, const TFE_T *R,
                                           const TFE_T *dA, TFE_T *dQ, TFE_T *dR, const char *fn) {
  int64_t k = m < n ? m : n;
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(3 * k * k + 2 * m * k + 1), sizeof(TFE_T));
  if (!w) return TFE_ERR_ALLOC;
  TFE_T *R1 = w, *X = R1 + k * k, *O = X + k * k, *Z = O + k * k, *Zh = Z + m * k;
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) R1[i + j * k] = R[i + j * k];
  TFE_FN(ad_ct_)(dA, m, k, Zh); /* Z = dA1 R1^-1 via R1^-H Z^H = dA1^H */
  tfe_status st = TFE_FN(ad_trs_)('U', 'C', 'N', k, R1, m, Zh, fn);
  if (st) { tfe__free(w); return st; }
  TFE_FN(ad_ct_)(Zh, k, m, Z);
  TFE_FN(ad_mm_)('C', 'N', k, k, m, 1, Q, Z, 0, X);
  TFE_FN(ad_qr_omega_)(X, k, O);
  memcpy(dQ, Z, (size_t)(m * k) * sizeof(TFE_T)); /* dQ = Q O + Z - Q X */
  for (int64_t i = 0; i < k * k; i++) X[i] -= O[i];
  TFE_FN(ad_mm_)('N', 'N', m, k, k, -1, Q, X, 1, dQ); /* - Q (X - O) */
  TFE_FN(ad_mm_)('N', 'N', k, k, k, 1, X, R1, 0, dR); /* dR1 = (X - O) R1, leading dim k */
  if (n > m) { /* dR2 = dQ^H Y + Q^H dY */
    TFE_FN(ad_mm_)('C', 'N', m, n - m, m, 1, dQ, A + m * m, 0, dR + m * m);
    TFE_FN(ad_mm_)('C', 'N', m, n - m, m, 1, Q, dA + m * m, 1, dR + m * m);
  }
  tfe__free(w);
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(ad_qr_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  return TFE_FN(qr)(x[0], false, &y[0], &y[1]);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lq_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_lq_pr_dev_)(x[0], y); /* the device's QR of A^H */
  return TFE_FN(lq)(x[0], false, &y[0], &y[1]);
}

/* The LQ rules are the QR rules of A^H (A^H = Q^H L^H); lq selects that path. */
TFE_INTERNAL tfe_status TFE_FN(ad_qrlq_rrule_)(bool lq, const TFE_TY(view) *const *x, const TFE_TY(view) *const *y,
                                               const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  const char *fn = lq ? "tfe_rrule(lq)" : "tfe_rrule(qr)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t k = m < n ? m : n, M = lq ? n : m, N = lq ? m : n;
  TFE_TRY(TFE_FN(ad_like_)(x[0], true, dx));
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(2 * m * n + 4 * M * k + 2 * k * N + 1), sizeof(TFE_T));
  if (!w) { TFE_FN(tensor_release)(dx); return TFE_ERR_ALLOC; }
  TFE_T *Ah = w, *gAh = Ah + m * n, *Qh = gAh + m * n, *gQh = Qh + M * k, *Rh = gQh + M * k, *gRh = Rh + k * N;
  tfe_status st = TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *A = TFE_FN(ad_ptr_)(x[0]) + b * m * n;
    if (!lq) {
      st = TFE_FN(ad_qr_rr1_)(m, n, A, TFE_FN(ad_ptr_)(y[0]) + b * m * k, TFE_FN(ad_ptr_)(y[1]) + b * k * n,
                              TFE_FN(ad_ptr_)(dy[0]) + b * m * k, TFE_FN(ad_ptr_)(dy[1]) + b * k * n,
                              dx->v.data + b * m * n, fn);
      continue;
    }
    /* LQ: L (m x k) = R^H, Q (k x n) = Qq^H */
    TFE_FN(ad_ct_)(A, m, n, Ah);
    TFE_FN(ad_ct_)(TFE_FN(ad_ptr_)(y[1]) + b * k * n, k, n, Qh);
    TFE_FN(ad_ct_)(TFE_FN(ad_ptr_)(dy[1]) + b * k * n, k, n, gQh);
    TFE_FN(ad_ct_)(TFE_FN(ad_ptr_)(y[0]) + b * m * k, m, k, Rh);
    TFE_FN(ad_ct_)(TFE_FN(ad_ptr_)(dy[0]) + b * m * k, m, k, gRh);
    st = TFE_FN(ad_qr_rr1_)(n, m, Ah, Qh, Rh, gQh, gRh, gAh, fn);
    if (!st) TFE_FN(ad_ct_)(gAh, n, m, dx->v.data + b * m * n);
  }
  tfe__free(w);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_qrlq_frule_)(bool lq, const TFE_TY(view) *const *x, const TFE_TY(view) *const *dx,
                                               const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  const char *fn = lq ? "tfe_frule(lq)" : "tfe_frule(qr)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t k = m < n ? m : n, M = lq ? n : m, N = lq ? m : n;
  tfe_status st = TFE_FN(ad_like_)(y[0], true, &dy[0]);
  if (!st) st = TFE_FN(ad_like_)(y[1], true, &dy[1]);
  TFE_T *w = st ? NULL : (TFE_T *)tfe__calloc((size_t)(2 * m * n + 4 * M * k + 2 * k * N + 1), sizeof(TFE_T));
  if (!st && !w) st = TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *A = TFE_FN(ad_ptr_)(x[0]) + b * m * n, *dA = TFE_FN(ad_ptr_)(dx[0]) + b * m * n;
    if (!lq) {
      st = TFE_FN(ad_qr_fr1_)(m, n, A, TFE_FN(ad_ptr_)(y[0]) + b * m * k, TFE_FN(ad_ptr_)(y[1]) + b * k * n, dA,
                              dy[0].v.data + b * m * k, dy[1].v.data + b * k * n, fn);
      continue;
    }
    TFE_T *Ah = w, *dAh = Ah + m * n, *Qh = dAh + m * n, *dQh = Qh + M * k, *Rh = dQh + M * k, *dRh = Rh + k * N;
    TFE_FN(ad_ct_)(A, m, n, Ah);
    TFE_FN(ad_ct_)(dA, m, n, dAh);
    TFE_FN(ad_ct_)(TFE_FN(ad_ptr_)(y[1]) + b * k * n, k, n, Qh);
    TFE_FN(ad_ct_)(TFE_FN(ad_ptr_)(y[0]) + b * m * k, m, k, Rh);
    st = TFE_FN(ad_qr_fr1_)(n, m, Ah, Qh, Rh, dAh, dQh, dRh, fn);
    if (!st) {
      TFE_FN(ad_ct_)(dQh, n, k, dy[1].v.data + b * k * n);
      TFE_FN(ad_ct_)(dRh, k, m, dy[0].v.data + b * m * k);
    }
  }
  tfe__free(w);
  if (st) TFE_FN(ad_release_n_)(dy, 2);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_qr_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_qr_rr_dev_)(x, y, dy, dx);
  return TFE_FN(ad_qrlq_rrule_)(false, x, y, dy, dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lq_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_lq_dev_)(true, x, dy, y, dx);
  return TFE_FN(ad_qrlq_rrule_)(true, x, y, dy, dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_qr_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_qr_fr_dev_)(x, dx, y, dy);
  return TFE_FN(ad_qrlq_frule_)(false, x, dx, y, dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lq_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_lq_dev_)(false, x, dx, y, dy);
  return TFE_FN(ad_qrlq_frule_)(true, x, dx, y, dy);
}
#undef TFE__LP
#undef TFE__RS
#undef TFE__RT
#endif
