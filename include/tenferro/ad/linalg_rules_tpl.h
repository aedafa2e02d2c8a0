/* tenferro/ad_linalg_tpl.h — primal, forward and reverse rules of the linear algebra
 * operations for one float kind; re-included per kind by ad.h. Operands are dense column-major
 * batches (m, n, batch...); formulas are per matrix (derivations in docs/ad.md). */
#if !TFE__BODY_PHASE
#if TFE_FLOAT

#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

#undef TFE__LP
#undef TFE__RS
#undef TFE__RT
#endif /* TFE_FLOAT */
#else /* bodies */
#if TFE_FLOAT
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
  return TFE_FN(ad_qrlq_rrule_)(false, x, y, dy, dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lq_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  return TFE_FN(ad_qrlq_rrule_)(true, x, y, dy, dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_qr_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  return TFE_FN(ad_qrlq_frule_)(false, x, dx, y, dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lq_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  return TFE_FN(ad_qrlq_frule_)(true, x, dx, y, dy);
}

/* ---- Hermitian eigendecomposition ---------------------------------------------------------- */
TFE_INTERNAL void TFE_FN(ad_eigh_f_)(const TFE_T *w, int64_t n, double eta, TFE_R *F) {
  double scale = 0;
  for (int64_t i = 0; i < n; i++) if (fabs((double)TFE_FN(ad_re_)(w[i])) > scale) scale = fabs((double)TFE_FN(ad_re_)(w[i]));
  double e2 = (eta * (scale > 0 ? scale : 1)) * (eta * (scale > 0 ? scale : 1));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      F[i + j * n] = i == j ? 0 : TFE_FN(ad_lor_)((double)TFE_FN(ad_re_)(w[j]) - (double)TFE_FN(ad_re_)(w[i]), e2);
}
TFE_INTERNAL void TFE_FN(ad_herm_)(TFE_T *A, int64_t n) { /* A = (A + A^H) / 2 in place */
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i <= j; i++) {
      TFE_T h = (A[i + j * n] + TFE_FN(la_conj_)(A[j + i * n])) / 2;
      A[i + j * n] = h;
      A[j + i * n] = TFE_FN(la_conj_)(h);
    }
}
TFE_INTERNAL tfe_status TFE_FN(ad_eigh_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  TFE__RT w = {0};
  TFE_TRY(TFE_FN(eigh)(x[0], &w, &y[1]));
  tfe_status st = TFE_FN(ad_from_real_)(&w, &y[0]);
  if (st) TFE_FN(tensor_release)(&y[1]);
  return st;
}
/* gA = herm(V (diag(Re gw) + F o (V^H gV)) V^H). */
TFE_INTERNAL tfe_status TFE_FN(ad_eigh_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)nin;
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_rrule(eigh)"));
  TFE_TRY(TFE_FN(ad_like_)(x[0], true, dx));
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(2 * n * n + 1), sizeof(TFE_T));
  TFE_R *F = (TFE_R *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_R));
  if (!w || !F) { tfe__free(w); tfe__free(F); TFE_FN(tensor_release)(dx); return TFE_ERR_ALLOC; }
  TFE_T *Y = w, *T = w + n * n;
  for (int64_t b = 0; b < nb; b++) {
    const TFE_T *ev = TFE_FN(ad_ptr_)(y[0]) + b * n, *V = TFE_FN(ad_ptr_)(y[1]) + b * n * n;
    const TFE_T *gw = TFE_FN(ad_ptr_)(dy[0]) + b * n, *gV = TFE_FN(ad_ptr_)(dy[1]) + b * n * n;
    TFE_FN(ad_eigh_f_)(ev, n, TFE_FN(ad_eta_)(p), F);
    TFE_FN(ad_mm_)('C', 'N', n, n, n, 1, V, gV, 0, Y);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) Y[i + j * n] = i == j ? (TFE_T)TFE_FN(ad_re_)(gw[i]) : F[i + j * n] * Y[i + j * n];
    TFE_FN(ad_mm_)('N', 'N', n, n, n, 1, V, Y, 0, T);
    TFE_FN(ad_mm_)('N', 'C', n, n, n, 1, T, V, 0, dx->v.data + b * n * n);
    TFE_FN(ad_herm_)(dx->v.data + b * n * n, n);
  }
  tfe__free(w);
  tfe__free(F);
  return TFE_OK;
}
/* P = V^H herm(dA) V; dw = Re diag(P); dV = V (F o P). */
TFE_INTERNAL tfe_status TFE_FN(ad_eigh_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)nin;
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_frule(eigh)"));
  tfe_status st = TFE_FN(ad_like_)(y[0], true, &dy[0]);
  if (!st) st = TFE_FN(ad_like_)(y[1], true, &dy[1]);
  if (st) { TFE_FN(ad_release_n_)(dy, 2); return st; }
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(3 * n * n + 1), sizeof(TFE_T));
  TFE_R *F = (TFE_R *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_R));
  if (!w || !F) { tfe__free(w); tfe__free(F); TFE_FN(ad_release_n_)(dy, 2); return TFE_ERR_ALLOC; }
  TFE_T *H = w, *T = w + n * n, *P = T + n * n;
  for (int64_t b = 0; b < nb; b++) {
    const TFE_T *ev = TFE_FN(ad_ptr_)(y[0]) + b * n, *V = TFE_FN(ad_ptr_)(y[1]) + b * n * n;
    memcpy(H, TFE_FN(ad_ptr_)(dx[0]) + b * n * n, (size_t)(n * n) * sizeof(TFE_T));
    TFE_FN(ad_herm_)(H, n);
    TFE_FN(ad_eigh_f_)(ev, n, TFE_FN(ad_eta_)(p), F);
    TFE_FN(ad_mm_)('C', 'N', n, n, n, 1, V, H, 0, T);
    TFE_FN(ad_mm_)('N', 'N', n, n, n, 1, T, V, 0, P);
    for (int64_t j = 0; j < n; j++) {
      dy[0].v.data[b * n + j] = TFE_FN(ad_re_)(P[j + j * n]);
      for (int64_t i = 0; i < n; i++) P[i + j * n] *= F[i + j * n];
    }
    TFE_FN(ad_mm_)('N', 'N', n, n, n, 1, V, P, 0, dy[1].v.data + b * n * n);
  }
  tfe__free(w);
  tfe__free(F);
  return TFE_OK;
}

/* ---- general eigendecomposition (complex kinds) -------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               TFE_TY(tensor) *y) {
  (void)p; (void)nin;
#if TFE_CPLX
  return TFE_FN(eig)(x[0], &y[0], &y[1]);
#else
  (void)x; (void)y;
  return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_ad_eig", "eig of a real kind has complex results: use the complex kind");
#endif
}
#if TFE_CPLX
/* F_ij ~ 1 / (w_j - w_i), broadened: conj(d) / (|d|^2 + eps^2). */
TFE_INTERNAL void TFE_FN(ad_eig_f_)(const TFE_T *ev, int64_t n, double eta, TFE_T *F) {
  double scale = 0;
  for (int64_t i = 0; i < n; i++) if ((double)TFE_CABS(ev[i]) > scale) scale = (double)TFE_CABS(ev[i]);
  double e2 = (eta * (scale > 0 ? scale : 1)) * (eta * (scale > 0 ? scale : 1));
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      TFE_T d = ev[j] - ev[i];
      double a = (double)TFE_CABS(d);
      F[i + j * n] = i == j ? (TFE_T)0 : TFE_CONJ(d) / (TFE_T)(a * a + e2);
    }
}
#endif
/* gA = V^-H (diag(gw) + conj(F) o (Y - V^H V diag(Re diag Y))) V^H, Y = V^H gV. */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)nin;
#if TFE_CPLX
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_rrule(eig)"));
  TFE_TRY(TFE_FN(ad_like_)(x[0], true, dx));
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(5 * n * n + 1), sizeof(TFE_T));
  lapack_int *ipiv = (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
  if (!w || !ipiv) { tfe__free(w); tfe__free(ipiv); TFE_FN(tensor_release)(dx); return TFE_ERR_ALLOC; }
  TFE_T *F = w, *Y = F + n * n, *VV = Y + n * n, *T = VV + n * n, *ws = T + n * n;
  tfe_status st = TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *ev = TFE_FN(ad_ptr_)(y[0]) + b * n, *V = TFE_FN(ad_ptr_)(y[1]) + b * n * n;
    const TFE_T *gw = TFE_FN(ad_ptr_)(dy[0]) + b * n, *gV = TFE_FN(ad_ptr_)(dy[1]) + b * n * n;
    TFE_T *gA = dx->v.data + b * n * n;
    TFE_FN(ad_eig_f_)(ev, n, TFE_FN(ad_eta_)(p), F);
    TFE_FN(ad_mm_)('C', 'N', n, n, n, 1, V, gV, 0, Y);
    TFE_FN(ad_mm_)('C', 'N', n, n, n, 1, V, V, 0, VV);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++)
        T[i + j * n] = i == j ? gw[i] : TFE_CONJ(F[i + j * n]) * (Y[i + j * n] - VV[i + j * n] * TFE__CREAL(Y[j + j * n]));
    TFE_FN(ad_mm_)('N', 'C', n, n, n, 1, T, V, 0, gA); /* then solve V^H gA = T V^H */
    st = TFE_FN(ad_gesv_)('C', n, V, n, gA, ws, ipiv, "tfe_rrule(eig)");
  }
  tfe__free(w);
  tfe__free(ipiv);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
#else
  (void)p; (void)x; (void)y; (void)dy; (void)dx;
  return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_rrule(eig)", "eig rules exist for complex kinds only");
#endif
}
/* P = V^-1 dA V; dw = diag(P); dV = V C with C = F o P off the diagonal and
 * c_i = -Re sum_k (V^H V)_ik C_ki (keeps |v_i| = 1). */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)nin;
#if TFE_CPLX
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, "tfe_frule(eig)"));
  tfe_status st = TFE_FN(ad_like_)(y[0], true, &dy[0]);
  if (!st) st = TFE_FN(ad_like_)(y[1], true, &dy[1]);
  if (st) { TFE_FN(ad_release_n_)(dy, 2); return st; }
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(4 * n * n + 1), sizeof(TFE_T));
  lapack_int *ipiv = (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
  if (!w || !ipiv) { tfe__free(w); tfe__free(ipiv); TFE_FN(ad_release_n_)(dy, 2); return TFE_ERR_ALLOC; }
  TFE_T *F = w, *P = F + n * n, *VV = P + n * n, *ws = VV + n * n;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *ev = TFE_FN(ad_ptr_)(y[0]) + b * n, *V = TFE_FN(ad_ptr_)(y[1]) + b * n * n;
    TFE_FN(ad_eig_f_)(ev, n, TFE_FN(ad_eta_)(p), F);
    TFE_FN(ad_mm_)('N', 'N', n, n, n, 1, TFE_FN(ad_ptr_)(dx[0]) + b * n * n, V, 0, P);
    st = TFE_FN(ad_gesv_)('N', n, V, n, P, ws, ipiv, "tfe_frule(eig)");
    if (st) break;
    TFE_FN(ad_mm_)('C', 'N', n, n, n, 1, V, V, 0, VV);
    for (int64_t i = 0; i < n; i++) dy[0].v.data[b * n + i] = P[i + i * n];
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) P[i + j * n] = i == j ? (TFE_T)0 : F[i + j * n] * P[i + j * n];
    for (int64_t i = 0; i < n; i++) {
      TFE_T s = 0;
      for (int64_t k = 0; k < n; k++) s += VV[i + k * n] * P[k + i * n];
      P[i + i * n] = -TFE__CREAL(s);
    }
    TFE_FN(ad_mm_)('N', 'N', n, n, n, 1, V, P, 0, dy[1].v.data + b * n * n);
  }
  tfe__free(w);
  tfe__free(ipiv);
  if (st) TFE_FN(ad_release_n_)(dy, 2);
  return st;
#else
  (void)p; (void)x; (void)dx; (void)y; (void)dy;
  return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_frule(eig)", "eig rules exist for complex kinds only");
#endif
}

/* ---- LU (any shape: L m x k unit lower, U k x n upper, k = min(m, n)) ------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  tfe_tensor_i64 perm = {0};
  TFE_TRY(TFE_FN(lu)(x[0], &perm, &y[0], &y[1]));
  tfe_tensor_release_i64(&perm);
  return TFE_OK;
}
/* The row permutation of A's LU (recomputed: the rules are stateless). */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_perm_)(const TFE_TY(view) *A, tfe_tensor_i64 *perm) {
  TFE_TY(tensor) L = {0}, U = {0};
  TFE_TRY(TFE_FN(lu)(A, perm, &L, &U));
  TFE_FN(tensor_release)(&L);
  TFE_FN(tensor_release)(&U);
  return TFE_OK;
}
/* Square padded factors: Lp = [L, (0; I)] (m x m, unit lower), Up = [U; (0, I)] (n x n, upper).
 * With them A[perm] = Lp Up restricted to the first k columns of Lp / rows of Up, and
 * X = Lp^-1 dA[perm] Up^-1 gives dL = (Lp tril_-1(X))[:, :k], dU = (triu(X) Up)[:k, :]. */
TFE_INTERNAL void TFE_FN(ad_lu_pad_)(int64_t m, int64_t n, const TFE_T *L, const TFE_T *U, TFE_T *Lp, TFE_T *Up) {
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < m; j++)
    for (int64_t i = 0; i < m; i++) Lp[i + j * m] = j < k ? L[i + j * m] : (TFE_T)(i == j);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) Up[i + j * n] = i < k ? U[i + j * k] : (TFE_T)(i == j);
}
/* Z (m x n) = Lp^-op Z Up^-op in place: rev uses the conjugate transposes. T is m x n scratch. */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_sandwich_)(bool rev, int64_t m, int64_t n, const TFE_T *Lp, const TFE_T *Up,
                                                TFE_T *Z, TFE_T *T, const char *fn) {
  TFE_TRY(TFE_FN(ad_trs_)('L', rev ? 'C' : 'N', 'U', m, Lp, n, Z, fn));
  TFE_FN(ad_ct_)(Z, m, n, T); /* (Z Up^-op)^H = Up^-op^H Z^H */
  TFE_TRY(TFE_FN(ad_trs_)('U', rev ? 'N' : 'C', 'N', n, Up, m, T, fn));
  TFE_FN(ad_ct_)(T, n, m, Z);
  return TFE_OK;
}
/* gA[perm] = Lp^-H (tril_-1(Lp^H gL) + triu(gU Up^H)) Up^-H, gL and gU zero-padded to m x n. */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  const char *fn = "tfe_rrule(lu)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t k = m < n ? m : n;
  tfe_tensor_i64 perm = {0};
  TFE_TRY(TFE_FN(ad_lu_perm_)(x[0], &perm));
  tfe_status st = TFE_FN(ad_like_)(x[0], true, dx);
  TFE_T *w = st ? NULL : (TFE_T *)tfe__calloc((size_t)(m * m + n * n + 4 * m * n + 1), sizeof(TFE_T));
  if (!st && !w) st = TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *L = TFE_FN(ad_ptr_)(y[0]) + b * m * k, *U = TFE_FN(ad_ptr_)(y[1]) + b * k * n;
    const TFE_T *gL = TFE_FN(ad_ptr_)(dy[0]) + b * m * k, *gU = TFE_FN(ad_ptr_)(dy[1]) + b * k * n;
    TFE_T *Lp = w, *Up = Lp + m * m, *G = Up + n * n, *T = G + m * n, *P1 = T + m * n, *P2 = P1 + m * n;
    TFE_FN(ad_lu_pad_)(m, n, L, U, Lp, Up);
    memset(P1, 0, (size_t)(2 * m * n) * sizeof(TFE_T));
    for (int64_t j = 0; j < k; j++) memcpy(P1 + j * m, gL + j * m, (size_t)m * sizeof(TFE_T)); /* [gL, 0] */
    for (int64_t j = 0; j < n; j++) memcpy(P2 + j * m, gU + j * k, (size_t)k * sizeof(TFE_T)); /* [gU; 0] */
    TFE_FN(ad_mm_)('C', 'N', m, n, m, 1, Lp, P1, 0, G);
    TFE_FN(ad_mm_)('N', 'C', m, n, n, 1, P2, Up, 0, T);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) G[i + j * m] = i > j ? G[i + j * m] : T[i + j * m];
    st = TFE_FN(ad_lu_sandwich_)(true, m, n, Lp, Up, G, T, fn);
    if (st) break;
    const int64_t *pb = perm.v.data + b * m; /* row i goes to row perm[i] */
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) dx->v.data[b * m * n + pb[i] + j * m] = G[i + j * m];
  }
  tfe__free(w);
  tfe_tensor_release_i64(&perm);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}
/* X = Lp^-1 dA[perm] Up^-1; dL = (Lp tril_-1(X))[:, :k], dU = (triu(X) Up)[:k, :]. */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                             const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  const char *fn = "tfe_frule(lu)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  int64_t k = m < n ? m : n;
  tfe_tensor_i64 perm = {0};
  TFE_TRY(TFE_FN(ad_lu_perm_)(x[0], &perm));
  tfe_status st = TFE_FN(ad_like_)(y[0], true, &dy[0]);
  if (!st) st = TFE_FN(ad_like_)(y[1], true, &dy[1]);
  TFE_T *w = st ? NULL : (TFE_T *)tfe__calloc((size_t)(m * m + n * n + 4 * m * n + 1), sizeof(TFE_T));
  if (!st && !w) st = TFE_ERR_ALLOC;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *L = TFE_FN(ad_ptr_)(y[0]) + b * m * k, *U = TFE_FN(ad_ptr_)(y[1]) + b * k * n;
    const TFE_T *dA = TFE_FN(ad_ptr_)(dx[0]) + b * m * n;
    const int64_t *pb = perm.v.data + b * m;
    TFE_T *Lp = w, *Up = Lp + m * m, *X = Up + n * n, *T = X + m * n, *P1 = T + m * n, *P2 = P1 + m * n;
    TFE_FN(ad_lu_pad_)(m, n, L, U, Lp, Up);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) X[i + j * m] = dA[pb[i] + j * m];
    st = TFE_FN(ad_lu_sandwich_)(false, m, n, Lp, Up, X, T, fn);
    if (st) break;
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) { /* P1 = tril_-1(X), P2 = triu(X) */
        P1[i + j * m] = i > j ? X[i + j * m] : (TFE_T)0;
        P2[i + j * m] = i <= j ? X[i + j * m] : (TFE_T)0;
      }
    TFE_FN(ad_mm_)('N', 'N', m, n, m, 1, Lp, P1, 0, X); /* Lp tril_-1(X): keep the first k columns */
    TFE_FN(ad_mm_)('N', 'N', m, n, n, 1, P2, Up, 0, T); /* triu(X) Up: keep the first k rows */
    TFE_T *dL = dy[0].v.data + b * m * k, *dU = dy[1].v.data + b * k * n;
    memcpy(dL, X, (size_t)(m * k) * sizeof(TFE_T));
    for (int64_t j = 0; j < n; j++) memcpy(dU + j * k, T + j * m, (size_t)k * sizeof(TFE_T));
  }
  tfe__free(w);
  tfe_tensor_release_i64(&perm);
  if (st) TFE_FN(ad_release_n_)(dy, 2);
  return st;
}

/* ---- Cholesky ------------------------------------------------------------------------------ */
/* Phi: lower triangle with the diagonal halved. */
TFE_INTERNAL void TFE_FN(ad_phi_)(TFE_T *X, int64_t n) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) X[i + j * n] = i > j ? X[i + j * n] : i == j ? X[i + j * n] / 2 : (TFE_T)0;
}
TFE_INTERNAL tfe_status TFE_FN(ad_chol_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  return TFE_FN(cholesky)(x[0], y);
}
/* gA = herm(L^-H Phi(L^H gL) L^-1). */
TFE_INTERNAL tfe_status TFE_FN(ad_chol_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  const char *fn = "tfe_rrule(cholesky)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  TFE_TRY(TFE_FN(ad_like_)(x[0], true, dx));
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(2 * n * n + 1), sizeof(TFE_T));
  if (!w) { TFE_FN(tensor_release)(dx); return TFE_ERR_ALLOC; }
  tfe_status st = TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *L = TFE_FN(ad_ptr_)(y[0]) + b * n * n;
    TFE_T *T = w, *Z = w + n * n, *gA = dx->v.data + b * n * n;
    TFE_FN(ad_mm_)('C', 'N', n, n, n, 1, L, TFE_FN(ad_ptr_)(dy[0]) + b * n * n, 0, T);
    TFE_FN(ad_phi_)(T, n);
    st = TFE_FN(ad_trs_)('L', 'C', 'N', n, L, n, T, fn); /* T = L^-H Phi */
    if (!st) { TFE_FN(ad_ct_)(T, n, n, Z); st = TFE_FN(ad_trs_)('L', 'C', 'N', n, L, n, Z, fn); } /* (T L^-1)^H */
    if (!st) { TFE_FN(ad_ct_)(Z, n, n, gA); TFE_FN(ad_herm_)(gA, n); }
  }
  tfe__free(w);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}
/* dL = L Phi(L^-1 herm(dA) L^-H). */
TFE_INTERNAL tfe_status TFE_FN(ad_chol_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  const char *fn = "tfe_frule(cholesky)";
  int64_t m = 0, n = 0, nb = 0;
  TFE_TRY(TFE_FN(ad_mdims_)(x[0], &m, &n, &nb, fn));
  TFE_TRY(TFE_FN(ad_like_)(y[0], true, dy));
  TFE_T *w = (TFE_T *)tfe__calloc((size_t)(2 * n * n + 1), sizeof(TFE_T));
  if (!w) { TFE_FN(tensor_release)(dy); return TFE_ERR_ALLOC; }
  tfe_status st = TFE_OK;
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *L = TFE_FN(ad_ptr_)(y[0]) + b * n * n;
    TFE_T *Z = w, *Zh = w + n * n;
    memcpy(Z, TFE_FN(ad_ptr_)(dx[0]) + b * n * n, (size_t)(n * n) * sizeof(TFE_T));
    TFE_FN(ad_herm_)(Z, n);
    st = TFE_FN(ad_trs_)('L', 'N', 'N', n, L, n, Z, fn);
    if (!st) { TFE_FN(ad_ct_)(Z, n, n, Zh); st = TFE_FN(ad_trs_)('L', 'N', 'N', n, L, n, Zh, fn); }
    if (st) break;
    TFE_FN(ad_ct_)(Zh, n, n, Z);
    TFE_FN(ad_phi_)(Z, n);
    TFE_FN(ad_mm_)('N', 'N', n, n, n, 1, L, Z, 0, dy->v.data + b * n * n);
  }
  tfe__free(w);
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}

/* ---- solve, inv, det, slogdet ------------------------------------------------------------------ */
TFE_INTERNAL int64_t TFE_FN(ad_rhs_cols_)(const TFE_TY(view) *B, int64_t n, int64_t nb) {
  return n * nb > 0 ? TFE_FN(ad_numel_)(B) / (n * nb) : 0;
}
TFE_INTERNAL tfe_status TFE_FN(ad_solve_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  return TFE_FN(solve)(x[0], x[1], y);
}
/* gB = A^-H gX, gA = -gB X^H. */
TFE_INTERNAL tfe_status TFE_FN(ad_solve_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  const char *fn = "tfe_rrule(solve)";
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
  (void)p; (void)nin; (void)x;
  return TFE_FN(ad_inv_both_)(true, y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_inv_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin; (void)x;
  return TFE_FN(ad_inv_both_)(false, y[0], dx[0], dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_det_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  return TFE_FN(det)(x[0], y);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                   TFE_TY(tensor) *y) {
  (void)p; (void)nin;
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
  return TFE_FN(ad_det_both_)(false, true, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_det_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  return TFE_FN(ad_det_both_)(false, false, x[0], y[0], dx[0], dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)p; (void)nin;
  return TFE_FN(ad_det_both_)(true, true, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_slogdet_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  return TFE_FN(ad_det_both_)(true, false, x[0], y[0], dx[0], dy);
}

/* ---- pinv ---------------------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)p; (void)nin;
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
  return TFE_FN(ad_pinv_both_)(true, x[0], y[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin;
  return TFE_FN(ad_pinv_both_)(false, x[0], y[0], dx[0], dy);
}

/* ---- norms ------------------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_norm_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                TFE_TY(tensor) *y) {
  (void)nin;
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
  return TFE_FN(ad_expm_both_)(true, x[0], dy[0], dx);
}
TFE_INTERNAL tfe_status TFE_FN(ad_expm_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  (void)p; (void)nin; (void)y;
  return TFE_FN(ad_expm_both_)(false, x[0], dx[0], dy);
}

/* ---- polar (through the SVD rules) ------------------------------------------------------------ */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)p; (void)nin;
  return TFE_FN(polar)(x[0], &y[0], &y[1]);
}
/* Up = U Vh, P = Vh^H S Vh: gU = gUp Vh^H, gVh = U^H gUp + S Vh (gP + gP^H),
 * gS = Re diag(Vh gP Vh^H); then the SVD rule. */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  (void)nin; (void)y;
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
#endif /* TFE_FLOAT */
#endif
