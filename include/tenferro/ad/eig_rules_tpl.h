/* tenferro/ad/eig_rules_tpl.h — AD rules of the linear algebra, part 2: Hermitian and general
 * eigendecompositions, LU, Cholesky (part 1, with the dense helpers, is linalg_rules_tpl.h).
 * Bodies only, re-included per float kind by ad.h after part 1. */
#if TFE__BODY_PHASE && TFE_FLOAT
#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

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
  if (TFE__AD_BE) return TFE_FN(ad_eigh_rr_dev_)(p, x, y, dy, dx);
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
  if (TFE__AD_BE) return TFE_FN(ad_eigh_fr_dev_)(p, x, dx, y, dy);
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
  if (TFE__AD_BE) return TFE_FN(ad_eig_rr_dev_)(p, x, y, dy, dx); /* dev_rules3_tpl.h */
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
  if (TFE__AD_BE) return TFE_FN(ad_eig_fr_dev_)(p, x, dx, y, dy); /* dev_rules3_tpl.h */
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
  if (TFE__AD_BE) return TFE_FN(ad_lu_rr_dev_)(x, y, dy, dx); /* dev_rules3_tpl.h */
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
  if (TFE__AD_BE) return TFE_FN(ad_lu_fr_dev_)(x, dx, y, dy); /* dev_rules3_tpl.h */
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
  if (TFE__AD_BE) return TFE_FN(ad_chol_rr_dev_)(x, y, dy, dx);
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
  if (TFE__AD_BE) return TFE_FN(ad_chol_fr_dev_)(x, dx, y, dy);
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
#undef TFE__LP
#undef TFE__RS
#undef TFE__RT
#endif
