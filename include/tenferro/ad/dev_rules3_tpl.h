/* tenferro/ad/dev_rules3_tpl.h — device forms of the forward and reverse rules of lu (any shape)
 * and eig (complex kinds), for one float kind: the CPU rules' formulas (eig_rules_tpl.h) written
 * with the pieces of dev_rules_tpl.h and dev_rules2_tpl.h (batched contractions, the backend's
 * elementwise slot, Toeplitz masks, the linalg room's typed calls on the backend's linalg slot).
 * They run only while tfe__ts.ad_backend is set; host tapes keep the CPU code. Bodies only,
 * re-included per kind by ad.h right after dev_rules2_tpl.h. docs/ad.md ("Device tensors").
 *
 * Pieces added here:
 *   LU permutation    P (m x m, P A = L U, P[i, j] = [perm_i == j]) from the i64 perm that the
 *                     backend's LU leaves in device memory, nothing read back: perm read as the
 *                     real kind (the subnormals k 2^-1074, or k 2^-149 in the low words for f32,
 *                     as the det rule's sign), scaled to the integers k exactly by two powers of
 *                     two, minus the column index j (the column sums of a strict-upper mask), and
 *                     P = clamp(1 - |p_i - j|, 0, 1): exact 0 / 1 (f32 kinds: m <= 2^23)
 *   padded factors    non-square LU: Lp = [L, (0; I)] (m x m), Up = [U; (0, I)] (n x n): zeros, the
 *                     factor copied in, ones on the identity block's diagonal view
 *   eig broadening    F_ij = 1 / (w_j - w_i) broadened: conj(F)_ij = d / (|d|^2 + eps^2), d = w_j -
 *                     w_i complex, eps^2 = (eta max_i |w_i|)^2 + tiny per batch item (the slot's MAX
 *                     reduction: geev's eigenvalues are not sorted) */
#if TFE__BODY_PHASE && TFE_FLOAT

/* ==== LU (any shape): L m x k unit lower, U k x n upper, k = min(m, n) ========================== */
/* P (a new dense (m, m, batch...) tensor of the matrix batch A, imaginary parts zero) from the row
 * permutation perm (m, batch...) of A's LU: P[i, j] = [perm_i == j] (the head comment says how). */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_pmat_)(const tfe_tensor_i64 *perm, const TFE_TY(view) *A, const char *fn,
                                           TFE_TY(tensor) *P) {
  int64_t m = A->lay.dims[0];
  int q = sizeof(TFE_R) == 4 ? 2 : 1; /* f32: the low word of each i64 */
  memset(P, 0, sizeof *P);
  if (sizeof(TFE_R) == 4 && m > ((int64_t)1 << 23))
    return tfe__fail(TFE_ERR_UNSUPPORTED, fn, "the device's LU permutation of f32 kinds needs m <= 2^23, got %lld",
                     (long long)m);
  TFE_TY(tensor) K = {0}, J = {0}, mb = {0};
  TFE_TY(view) M;
  tfe_status st = TFE_FN(ad_dmat_)(m, m, A, false, P);
  TFE__ADT(TFE_FN(ad_consts_)(&K));
  TFE__ADT(TFE_FN(ad_empty_)(1, &m, &J));
  if (!st) {
    TFE_TY(view) sq = P->v; /* one m x m matrix: the mask's shape */
    sq.lay.rank = 2;
    st = TFE_FN(ad_mask_)(4, &sq, &mb, &M); /* [i < j] */
  }
  if (!st) {
    tfe_dyn pi, r = TFE_FN(ad_part_)(&P->v, 0), jr = TFE_FN(ad_part_)(&J.v, 0), mr = TFE_FN(ad_part_)(&M, 0);
    memset(&pi, 0, sizeof pi);
    pi.dtype = sizeof(TFE_R) == 4 ? TFE_DT_F32 : TFE_DT_F64, pi.data = perm->v.data, pi.lay = P->v.lay;
    pi.lay.offset = perm->v.lay.offset * q;
    pi.lay.strides[0] = perm->v.lay.strides[0] * q, pi.lay.strides[1] = 0; /* p_i along j */
    for (int i = 2; i < P->v.lay.rank; i++) pi.lay.strides[i] = perm->v.lay.strides[i - 1] * q;
    TFE_TY(view) jb = J.v; /* j along i and the batch */
    jb.lay = P->v.lay, jb.lay.offset = J.v.lay.offset;
    for (int i = 0; i < jb.lay.rank; i++) jb.lay.strides[i] = i == 1;
    tfe_dyn jd = TFE_FN(ad_part_)(&jb, 0), one = TFE_FN(ad_kd_)(&K, 1, &r), zero = TFE_FN(ad_kd_)(&K, 0, &r);
    TFE_R s1 = (TFE_R)ldexp(1.0, sizeof(TFE_R) == 4 ? 75 : 537), s2 = (TFE_R)ldexp(1.0, sizeof(TFE_R) == 4 ? 74 : 537),
          m1 = -1, par = 0;
    st = TFE_FN(ad_redd_)(TFE_RED_SUM, &jr, &mr, 1, (const int[]){0}); /* j = sum_i [i < j] */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_COPY, 0, &r, &pi, NULL, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &r, NULL, NULL, &s1)); /* k 2^-1074 -> k, exactly */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &r, NULL, NULL, &s2));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &r, &r, &jd, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_MAP, TFE_UN_ABS, &r, &r, NULL, &par));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &r, NULL, NULL, &m1));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_ADD, &r, &r, &one, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, &r, &r, &zero, NULL)); /* [p_i == j] */
#if TFE_CPLX
    if (!st) {
      tfe_dyn im = TFE_FN(ad_part_)(&P->v, 1);
      TFE_R z = 0;
      st = TFE_FN(ad_ewd_)(TFE_EW_FILL, 0, &im, NULL, NULL, &z);
    }
#endif
  }
  TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&J), TFE_FN(tensor_release)(&mb);
  if (st) TFE_FN(tensor_release)(P);
  return st;
}
/* The rules' factors: P (ad_lu_pmat_, from A's LU recomputed on the backend: the rules are
 * stateless, as the CPU's) and, for a non-square A, the padded Lp = [L, (0; I)] (m x m) and
 * Up = [U; (0, I)] (n x n) in t[1], t[2]; *lp, *up: Lp and Up (L and U themselves when square). */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_facs_)(const TFE_TY(view) *A, const TFE_TY(view) *L, const TFE_TY(view) *U,
                                           const char *fn, TFE_TY(tensor) *t, TFE_TY(view) *lp, TFE_TY(view) *up) {
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  tfe_tensor_i64 perm = {0};
  TFE_TY(tensor) l2 = {0}, u2 = {0};
  memset(t, 0, 3 * sizeof *t);
  *lp = *L, *up = *U;
  tfe_status st = TFE_FN(lu)(A, &perm, &l2, &u2);
  TFE__ADT(TFE_FN(ad_lu_pmat_)(&perm, A, fn, &t[0]));
  TFE_FN(tensor_release)(&l2), TFE_FN(tensor_release)(&u2);
  tfe_tensor_release_i64(&perm);
  if (m != n) {
    TFE__ADT(TFE_FN(ad_dmat_)(m, m, A, true, &t[1]));
    TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, true, &t[2]));
    if (!st) {
      TFE_TY(view) lk = TFE_FN(ad_blk_)(&t[1].v, 0, m, 0, k), uk = TFE_FN(ad_blk_)(&t[2].v, 0, k, 0, n);
      TFE_TY(view) li = TFE_FN(ad_blk_)(&t[1].v, k, m - k, k, m - k), ui = TFE_FN(ad_blk_)(&t[2].v, k, n - k, k, n - k);
      TFE_TY(view) ld = TFE_FN(ad_diagv_)(&li), ud = TFE_FN(ad_diagv_)(&ui);
      st = TFE_FN(ad_copy_)(&lk, L);
      TFE__ADT(TFE_FN(ad_copy_)(&uk, U));
      if (m > k) TFE__ADT(TFE_FN(ad_fill_)(&ld, (TFE_T)1));
      if (n > k) TFE__ADT(TFE_FN(ad_fill_)(&ud, (TFE_T)1));
    }
    *lp = t[1].v, *up = t[2].v;
  }
  if (st) TFE_FN(ad_rel_)(t, 3);
  return st;
}
/* gA = P^T Lp^-H (tril_-1(Lp^H [gL, 0]) + triu([gU; 0] Up^H)) Up^-H (m x n masks). */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_rr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *y,
                                             const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *L = y[0], *U = y[1], *gL = dy[0], *gU = dy[1];
  const char *fn = "tfe_rrule(lu)";
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, fn));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  enum { PM, LP, UP, G_, T_, Z1, Z2, NT };
  TFE_TY(tensor) t[NT];
  TFE_TY(view) Lp, Up;
  memset(t, 0, sizeof t);
  memset(dx, 0, sizeof *dx);
  tfe_status st = TFE_FN(ad_lu_facs_)(A, L, U, fn, t, &Lp, &Up);
  TFE__ADT(TFE_FN(ad_dmat_)(m, n, A, n > k, &t[G_])); /* Lp^H [gL, 0] = [Lp^H gL, 0] */
  TFE__ADT(TFE_FN(ad_dmat_)(m, n, A, m > k, &t[T_])); /* [gU; 0] Up^H = [gU Up^H; 0] */
  if (!st) {
    TFE_TY(view) gk = TFE_FN(ad_blk_)(&t[G_].v, 0, m, 0, k), tk = TFE_FN(ad_blk_)(&t[T_].v, 0, k, 0, n),
                 Lh = TFE_FN(ad_tv_)(&Lp, true);
    st = TFE_FN(ad_bmm_)(1, 'C', &Lp, 'N', gL, 0, &gk);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', gU, 'C', &Up, 0, &tk));
    TFE__ADT(TFE_FN(ad_tri_)(1, &t[G_].v));
    TFE__ADT(TFE_FN(ad_tri_)(2, &t[T_].v));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, &t[G_].v, &t[G_].v, &t[T_].v));
    TFE__ADT(TFE_FN(ad_dtri_)(&Lh, false, true, &t[G_].v, &t[Z1])); /* Lp^-H G */
  }
  if (!st) {
    TFE_TY(view) z1h = TFE_FN(ad_tv_)(&t[Z1].v, true);
    st = TFE_FN(ad_dtri_)(&Up, false, false, &z1h, &t[Z2]); /* (Lp^-H G Up^-H)^H */
  }
  TFE__ADT(TFE_FN(ad_like_)(A, false, dx));
  if (!st) {
    TFE_TY(view) z = TFE_FN(ad_tv_)(&t[Z2].v, true);
    st = TFE_FN(ad_bmm_)(1, 'T', &t[PM].v, 'N', &z, 0, &dx->v);
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}
/* X = Lp^-1 P dA Up^-1; dL = (Lp tril_-1(X))[:, :k], dU = (triu(X) Up)[:k, :]. */
TFE_INTERNAL tfe_status TFE_FN(ad_lu_fr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *dx,
                                             const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0], *dA = dx[0], *L = y[0], *U = y[1];
  const char *fn = "tfe_frule(lu)";
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, fn));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  memset(dy, 0, 2 * sizeof *dy);
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_zero2_)(y, dy);
  enum { PM, LP, UP, X0, Z_, XH, P1, P2, NT };
  TFE_TY(tensor) t[NT];
  TFE_TY(view) Lp, Up;
  memset(t, 0, sizeof t);
  tfe_status st = TFE_FN(ad_lu_facs_)(A, L, U, fn, t, &Lp, &Up);
  TFE__ADT(TFE_FN(ad_dmat_)(m, n, A, false, &t[X0]));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &t[PM].v, 'N', dA, 0, &t[X0].v)); /* P dA */
  TFE__ADT(TFE_FN(ad_dtri_)(&Lp, true, true, &t[X0].v, &t[Z_]));     /* Lp^-1 P dA */
  if (!st) {
    TFE_TY(view) zh = TFE_FN(ad_tv_)(&t[Z_].v, true), Uh = TFE_FN(ad_tv_)(&Up, true);
    st = TFE_FN(ad_dtri_)(&Uh, true, false, &zh, &t[XH]); /* X^H = Up^-H Z^H */
  }
  if (!st) {
    TFE_TY(view) X = TFE_FN(ad_tv_)(&t[XH].v, true);
    st = TFE_FN(ad_dense_copy_)(&X, &t[P1]);
    TFE__ADT(TFE_FN(ad_dense_copy_)(&X, &t[P2]));
  }
  TFE__ADT(TFE_FN(ad_tri_)(1, &t[P1].v));
  TFE__ADT(TFE_FN(ad_tri_)(2, &t[P2].v));
  TFE__ADT(TFE_FN(ad_like_)(L, false, &dy[0]));
  TFE__ADT(TFE_FN(ad_like_)(U, false, &dy[1]));
  if (!st) {
    TFE_TY(view) p1 = TFE_FN(ad_blk_)(&t[P1].v, 0, m, 0, k), p2 = TFE_FN(ad_blk_)(&t[P2].v, 0, k, 0, n);
    st = TFE_FN(ad_bmm_)(1, 'N', &Lp, 'N', &p1, 0, &dy[0].v);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &p2, 'N', &Up, 0, &dy[1].v));
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(ad_rel_)(dy, 2);
  return st;
}

/* ==== eig (complex kinds): W (n, batch...), V (n, n, batch...) of the backend's geev ============== */
#if TFE_CPLX
/* eps^2 = (eta max_i |w_i|)^2 + tiny per item, in the real parts of the new (batch...) tensor E of
 * the matrix batch A (imaginary parts zero). */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_e2_)(const tfe_ad_params *p, const TFE_TY(view) *w, const TFE_TY(view) *A,
                                          const TFE_TY(tensor) *K, TFE_TY(tensor) *E) {
  TFE_TY(tensor) t = {0};
  TFE_TRY(TFE_FN(ad_like_)(w, false, &t));
  TFE_R et = (TFE_R)(p->eta > 0 ? p->eta : sqrt((double)TFE_FN(la_eps_)()));
  tfe_status st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, &t.v, w, NULL, NULL, NULL);
  TFE__ADT(TFE_FN(ad_bvec_)(A, true, E));
  if (!st) {
    tfe_dyn tr = TFE_FN(ad_part_)(&t.v, 0), er = TFE_FN(ad_part_)(&E->v, 0), tiny = TFE_FN(ad_kd_)(K, 2, &er);
    st = TFE_FN(ad_redd_)(TFE_RED_MAX, &er, &tr, 1, (const int[]){0});
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &er, NULL, NULL, &et));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &er, &er, &er, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_ADD, &er, &er, &tiny, NULL));
    if (st) TFE_FN(tensor_release)(E);
  }
  TFE_FN(tensor_release)(&t);
  return st;
}
/* Fc = conj(F) (a new (n, n, batch...) tensor): d / (|d|^2 + eps^2), d_ij = w_j - w_i, zero diagonal
 * (the CPU's ad_eig_f_ conjugated). */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_fc_)(const tfe_ad_params *p, const TFE_TY(view) *w, const TFE_TY(view) *A,
                                          TFE_TY(tensor) *Fc) {
  int64_t n = A->lay.dims[0];
  TFE_TY(tensor) K = {0}, E = {0}, T = {0};
  memset(Fc, 0, sizeof *Fc);
  tfe_status st = TFE_FN(ad_consts_)(&K);
  TFE__ADT(TFE_FN(ad_eig_e2_)(p, w, A, &K, &E));
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, Fc));
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &T));
  if (!st) {
    TFE_TY(view) wj = TFE_FN(ad_vbc_)(w, n, true), wi = TFE_FN(ad_vbc_)(w, n, false), d = TFE_FN(ad_diagv_)(&Fc->v),
                 eb = TFE_FN(ad_bbc_)(&E.v, A);
    tfe_dyn tr = TFE_FN(ad_part_)(&T.v, 0), ti = TFE_FN(ad_part_)(&T.v, 1), er = TFE_FN(ad_part_)(&eb, 0);
    TFE_R z = 0;
    st = TFE__ADZIP(TFE_BIN_SUB, &Fc->v, &wj, &wi);
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, &T.v, &Fc->v, NULL, NULL, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &tr, &tr, &tr, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_ADD, &tr, &tr, &er, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_FILL, 0, &ti, NULL, NULL, &z));
    TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, &Fc->v, &Fc->v, &T.v));
    TFE__ADT(TFE_FN(ad_fill_)(&d, (TFE_T)0));
  }
  TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&E), TFE_FN(tensor_release)(&T);
  if (st) TFE_FN(tensor_release)(Fc);
  return st;
}
/* gA = V^-H (diag(gw) + conj(F) o (Y - V^H V diag(Re diag Y))) V^H, Y = V^H gV (one solve with V^H). */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_rr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                              TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *w = y[0], *V = y[1], *gw = dy[0], *gV = dy[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(eig)"));
  int64_t n = A->lay.dims[0];
  memset(dx, 0, sizeof *dx);
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  enum { FC, Y_, VV, RY, T_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  tfe_status st = TFE_FN(ad_eig_fc_)(p, w, A, &t[FC]);
  for (int i = Y_; i <= VV; i++) TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[i]));
  TFE__ADT(TFE_FN(ad_like_)(w, true, &t[RY]));
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[T_]));
  if (!st) {
    const TFE_TY(view) *Y = &t[Y_].v, *T = &t[T_].v;
    TFE_TY(view) Yd = TFE_FN(ad_diagv_)(Y), Td = TFE_FN(ad_diagv_)(T), rb = TFE_FN(ad_vbc_)(&t[RY].v, n, true),
                 Vh = TFE_FN(ad_tv_)(V, true);
    st = TFE_FN(ad_bmm_)(1, 'C', V, 'N', gV, 0, Y);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', V, 'N', V, 0, &t[VV].v));
    TFE__ADT(TFE_FN(ad_re_copy_)(&t[RY].v, &Yd));                /* Re Y_jj */
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, T, &t[VV].v, &rb));          /* V^H V diag(Re diag Y) */
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, T, Y, T));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, T, T, &t[FC].v));            /* conj(F) o (...): zero diagonal */
    TFE__ADT(TFE_FN(ad_copy_)(&Td, gw));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', T, 'C', V, 0, Y));           /* (...) V^H */
    TFE__ADT(TFE_FN(solve)(&Vh, Y, dx));                          /* V^-H (...) V^H */
  }
  TFE_FN(ad_rel_)(t, NT);
  return st;
}
/* P = V^-1 dA V; dw = diag P; dV = V C with C = F o P (zero diagonal) and
 * C_ii = -Re sum_k (V^H V)_ik C_ki (keeps |v_i| = 1; the CPU's ad_eig_frule_). */
TFE_INTERNAL tfe_status TFE_FN(ad_eig_fr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                              TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0], *dA = dx[0], *w = y[0], *V = y[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(eig)"));
  int64_t n = A->lay.dims[0];
  memset(dy, 0, 2 * sizeof *dy);
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_zero2_)(y, dy);
  enum { FC, T_, P_, VV, Q_, S_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  tfe_status st = TFE_FN(ad_eig_fc_)(p, w, A, &t[FC]);
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[T_]));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', dA, 'N', V, 0, &t[T_].v));
  TFE__ADT(TFE_FN(solve)(V, &t[T_].v, &t[P_]));                   /* P = V^-1 dA V */
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[VV]));
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[Q_]));
  TFE__ADT(TFE_FN(ad_like_)(w, false, &t[S_]));
  TFE__ADT(TFE_FN(ad_like_)(w, false, &dy[0]));
  TFE__ADT(TFE_FN(ad_like_)(V, false, &dy[1]));
  if (!st) {
    const TFE_TY(view) *P = &t[P_].v;
    TFE_TY(view) Pd = TFE_FN(ad_diagv_)(P), F = t[FC].v, Ct = TFE_FN(ad_tv_)(P, false);
    F.conj = !F.conj;
    tfe_dyn pr = TFE_FN(ad_part_)(&Pd, 0), sr = TFE_FN(ad_part_)(&t[S_].v, 0);
    TFE_R m1 = -1;
    st = TFE_FN(ad_copy_)(&dy[0].v, &Pd);                           /* dw = diag P */
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, P, P, &F));                    /* C = F o P, zero diagonal */
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', V, 'N', V, 0, &t[VV].v));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t[Q_].v, &t[VV].v, &Ct));     /* (V^H V)_ik C_ki */
    TFE__ADT(TFE_FN(ad_red_)(TFE_RED_SUM, &t[S_].v, &t[Q_].v, 1, (const int[]){1}));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_COPY, 0, &pr, &sr, NULL, NULL)); /* C_ii = -Re s_i (imaginary part 0) */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &pr, NULL, NULL, &m1));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', V, 'N', P, 0, &dy[1].v));
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(ad_rel_)(dy, 2);
  return st;
}
#endif

#endif
