/* tenferro/ad/dev_rules_tpl.h — device forms of the forward and reverse rules of svd, qr, eigh and
 * cholesky, and of every rule of trisolve and inv, for one float kind (lu and eig: dev_rules3_tpl.h): the same
 * formulas as linalg_rules_tpl.h, eig_rules_tpl.h, solve_rules_tpl.h and more_rules_tpl.h,
 * written as batched contractions (the backend's contraction), elementwise work (its elementwise
 * slot: zip, map, fill, scale on dense, strided, broadcast and negative-stride views) and solves
 * (the linalg room's tfe_trisolve_S and tfe_solve_S, which reach the backend's linalg slot:
 * cuBLAS's batched trsm, cuSOLVER). They run only while tfe__ts.ad_backend is set (values outside host memory);
 * host tapes keep the per-matrix LAPACK code. Bodies only, re-included per kind by ad.h after
 * rules_tpl.h. docs/ad.md ("Device tensors") lists what they replace.
 *
 * Device pieces that have no elementwise op of their own:
 *   triangular masks  a buffer b of r + c - 1 values seen as the r x c Toeplitz view
 *                     M[i, j] = b[c - 1 + i - j] (strides 1, -1; stride 0 over the batch); square
 *                     (k x k): b = [0.. (k-1), 1.. (k)] is tril, [0.. (k), 1.. (k-1)] strict tril, ...
 *   triangular solve  tfe_trisolve_S of the triangle (the backend's trsm; a conjugate-transposed
 *                     view of a triangle is read in place with the other fill mode)
 *   broadening        eps^2 = (eta * max(|v_0|, |v_k-1|))^2 + tiny per batch item (the values are
 *                     sorted: the largest magnitude is at an end); tiny (the smallest normal
 *                     number) keeps 0 / 0 out where all values are 0 (the CPU's 0 there) */
#if TFE__BODY_PHASE && TFE_FLOAT

TFE_INTERNAL void TFE_FN(ad_rel_)(TFE_TY(tensor) *t, int n) {
  for (int i = 0; i < n; i++) TFE_FN(tensor_release)(&t[i]);
}
/* v with dims 0 and 1 swapped; conjugated when ct (complex kinds). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_tv_)(const TFE_TY(view) *v, bool ct) {
  TFE_TY(view) t = *v;
  t.lay.dims[0] = v->lay.dims[1], t.lay.dims[1] = v->lay.dims[0];
  t.lay.strides[0] = v->lay.strides[1], t.lay.strides[1] = v->lay.strides[0];
  if (TFE_CPLX && ct) t.conj = !t.conj;
  return t;
}
/* Rows [r0, r0 + nr) and columns [c0, c0 + nc) of every matrix of v. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_blk_)(const TFE_TY(view) *v, int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
  TFE_TY(view) t = *v;
  t.lay.offset += r0 * v->lay.strides[0] + c0 * v->lay.strides[1];
  t.lay.dims[0] = nr, t.lay.dims[1] = nc;
  return t;
}
/* A new dense (r, c, batch...) tensor with the batch dims of the matrix batch like. */
TFE_INTERNAL tfe_status TFE_FN(ad_dmat_)(int64_t r, int64_t c, const TFE_TY(view) *like, bool zero, TFE_TY(tensor) *t) {
  int64_t d[TFE_MAX_RANK];
  for (int i = 2; i < like->lay.rank; i++) d[i] = like->lay.dims[i];
  d[0] = r, d[1] = c;
  TFE_TRY(TFE_FN(ad_empty_)(like->lay.rank, d, t));
  tfe_status st = zero ? TFE_FN(ad_fill_)(&t->v, (TFE_T)0) : TFE_OK;
  if (st) TFE_FN(tensor_release)(t);
  return st;
}
/* A vector batch v (k, batch...) as a matrix batch: v_i along dim 0 (cols false: (k, c, ...)) or
 * v_j along dim 1 (cols true: (c, k, ...)), stride 0 along the other. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_vbc_)(const TFE_TY(view) *v, int64_t c, bool cols) {
  TFE_TY(view) t = *v;
  t.lay.rank = v->lay.rank + 1;
  for (int i = 1; i < v->lay.rank; i++) t.lay.dims[i + 1] = v->lay.dims[i], t.lay.strides[i + 1] = v->lay.strides[i];
  int a = cols ? 1 : 0;
  t.lay.dims[a] = v->lay.dims[0], t.lay.strides[a] = v->lay.strides[0];
  t.lay.dims[1 - a] = c, t.lay.strides[1 - a] = 0;
  return t;
}
/* The diagonal of every matrix of v: (min(rows, cols), batch...). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_diagv_)(const TFE_TY(view) *v) {
  TFE_TY(view) t = *v;
  t.lay.rank = v->lay.rank - 1;
  t.lay.dims[0] = v->lay.dims[0] < v->lay.dims[1] ? v->lay.dims[0] : v->lay.dims[1];
  t.lay.strides[0] = v->lay.strides[0] + v->lay.strides[1];
  for (int i = 1; i < t.lay.rank; i++) t.lay.dims[i] = v->lay.dims[i + 1], t.lay.strides[i] = v->lay.strides[i + 1];
  return t;
}
/* Element i of the dense tensor C seen with the dims of like (every stride 0). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_cbc_)(const TFE_TY(tensor) *C, int64_t i, const TFE_TY(view) *like) {
  TFE_TY(view) t = C->v;
  t.lay = like->lay;
  t.lay.offset = C->v.lay.offset + i;
  for (int d = 0; d < t.lay.rank; d++) t.lay.strides[d] = 0;
  t.conj = false;
  return t;
}
/* C = alpha op(A) op(B) + beta C for every batch item; op 'N', 'T' or 'C' (conjugate transpose). */
TFE_INTERNAL tfe_status TFE_FN(ad_bmm_)(TFE_T alpha, char ta, const TFE_TY(view) *A, char tb, const TFE_TY(view) *B,
                                       TFE_T beta, const TFE_TY(view) *C) {
  TFE_TY(view) a = ta == 'N' ? *A : TFE_FN(ad_tv_)(A, ta == 'C'), b = tb == 'N' ? *B : TFE_FN(ad_tv_)(B, tb == 'C');
  int32_t la[TFE_MAX_RANK], lb[TFE_MAX_RANK], lc[TFE_MAX_RANK];
  la[0] = 0, la[1] = 1, lb[0] = 1, lb[1] = 2, lc[0] = 0, lc[1] = 2;
  for (int i = 2; i < C->lay.rank; i++) la[i] = lb[i] = lc[i] = 1 + i;
  return TFE_FN(ad_contract_)(alpha, &a, la, &b, lb, beta, C, lc);
}
/* X = T^-1 B for the lower (or upper) triangle T of A, unit: ones on its diagonal (the backend's
 * triangular solve through the linalg slot). */
TFE_INTERNAL tfe_status TFE_FN(ad_dtri_)(const TFE_TY(view) *A, bool lower, bool unit, const TFE_TY(view) *B,
                                        TFE_TY(tensor) *X) {
  return TFE_FN(trisolve)(A, B, lower, unit, X);
}
/* Triangular 0 / 1 masks as a Toeplitz view of a r + c - 1 buffer (r, c >= 1), with the dims of
 * like (r, c, batch...; r x c matrices, square or not): kind 0 lower (i >= j), 1 strict lower
 * (i > j), 2 upper (i <= j), 3 the Cholesky rule's Phi (strict lower 1, diagonal 1/2), 4 strict
 * upper (i < j). M[i, j] = b[c - 1 + i - j]. */
TFE_INTERNAL tfe_status TFE_FN(ad_mask_)(int kind, const TFE_TY(view) *like, TFE_TY(tensor) *buf, TFE_TY(view) *M) {
  int64_t c = like->lay.dims[1] - 1, n = like->lay.dims[0] + c; /* c: the diagonal's place in b */
  TFE_TRY(TFE_FN(ad_empty_)(1, &n, buf));
  int64_t lo = kind == 1 ? c + 1 : kind == 2 || kind == 4 ? 0 : c, hi = kind == 2 ? c + 1 : kind == 4 ? c : n;
  TFE_TY(view) r = buf->v;
  tfe_status st = TFE_FN(ad_fill_)(&buf->v, (TFE_T)0);
  r.lay.offset = lo, r.lay.dims[0] = hi - lo;
  if (!st && hi > lo) st = TFE_FN(ad_fill_)(&r, (TFE_T)1);
  r.lay.offset = c, r.lay.dims[0] = 1;
  if (!st && kind == 3) st = TFE_FN(ad_fill_)(&r, (TFE_T)0.5);
  if (st) { TFE_FN(tensor_release)(buf); return st; }
  *M = buf->v;
  M->lay = like->lay;
  M->lay.offset = c;
  M->lay.strides[0] = 1, M->lay.strides[1] = -1;
  for (int i = 2; i < M->lay.rank; i++) M->lay.strides[i] = 0;
  M->conj = false;
  return TFE_OK;
}
/* X = X * M for a mask kind (above). */
TFE_INTERNAL tfe_status TFE_FN(ad_tri_)(int kind, const TFE_TY(view) *X) {
  if (X->lay.dims[0] == 0 || X->lay.dims[1] == 0) return TFE_OK;
  TFE_TY(tensor) b = {0};
  TFE_TY(view) M;
  TFE_TRY(TFE_FN(ad_mask_)(kind, X, &b, &M));
  tfe_status st = TFE__ADZIP(TFE_BIN_MUL, X, X, &M);
  TFE_FN(tensor_release)(&b);
  return st;
}
/* E (2, 1, batch...) of the matrix batch like: E[0] = (eta max(|re v_0|, |re v_k-1|))^2 + tiny for
 * sorted values v (k >= 1, batch...); E[1] scratch. */
TFE_INTERNAL tfe_status TFE_FN(ad_dev_e2_)(const TFE_TY(view) *v, const TFE_TY(view) *like, double eta, TFE_TY(tensor) *E) {
  int64_t k = v->lay.dims[0];
  TFE_TRY(TFE_FN(ad_dmat_)(2, 1, like, true, E));
  TFE_TY(view) e0 = TFE_FN(ad_blk_)(&E->v, 0, 1, 0, 1), e1 = TFE_FN(ad_blk_)(&E->v, 1, 1, 0, 1);
  TFE_TY(view) vv = TFE_FN(ad_vbc_)(v, 1, false), v0 = TFE_FN(ad_blk_)(&vv, 0, 1, 0, 1),
               v1 = TFE_FN(ad_blk_)(&vv, k - 1, 1, 0, 1);
  tfe_dyn r0 = TFE_FN(ad_part_)(&e0, 0), r1 = TFE_FN(ad_part_)(&e1, 0), a0 = TFE_FN(ad_part_)(&v0, 0),
          a1 = TFE_FN(ad_part_)(&v1, 0);
  TFE_R par = 0;
  TFE_T et = (TFE_T)eta, tiny = (TFE_T)(sizeof(TFE_R) == 4 ? FLT_MIN : DBL_MIN);
  tfe_status st = TFE_FN(ad_ewd_)(TFE_EW_MAP, TFE_UN_ABS, &r0, &a0, NULL, &par);
  TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_MAP, TFE_UN_ABS, &r1, &a1, NULL, &par));
  TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, &r0, &r0, &r1, NULL));
  TFE__ADT(TFE_FN(ad_fill_)(&e1, tiny));
  TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, &e0, NULL, NULL, &et, NULL));
  TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &e0, &e0, &e0));
  TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, &e0, &e0, &e1));
  if (st) TFE_FN(tensor_release)(E);
  return st;
}
/* E[0] broadcast to (d0, d1, batch...) (lead 2) or (d0, batch...) (lead 1). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_ebc_)(const TFE_TY(tensor) *E, int lead, int64_t d0, int64_t d1) {
  TFE_TY(view) t = E->v;
  int nb = E->v.lay.rank - 2;
  t.lay.rank = lead + nb;
  for (int i = 0; i < nb; i++) t.lay.dims[lead + i] = E->v.lay.dims[2 + i], t.lay.strides[lead + i] = E->v.lay.strides[2 + i];
  t.lay.dims[0] = d0, t.lay.strides[0] = 0;
  if (lead == 2) t.lay.dims[1] = d1, t.lay.strides[1] = 0;
  return t;
}
/* X = X / (X^2 + eps^2) in place (tmp: a dense tensor shaped like X). */
TFE_INTERNAL tfe_status TFE_FN(ad_dev_lor_)(const TFE_TY(view) *X, const TFE_TY(view) *Eb, const TFE_TY(view) *tmp) {
  tfe_status st = TFE__ADZIP(TFE_BIN_MUL, tmp, X, X);
  TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, tmp, tmp, Eb));
  TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, X, X, tmp));
  return st;
}
/* F_ij = lor(v_j -+ v_i) (sub: minus), zero diagonal, into the dense (k, k, batch...) F. */
TFE_INTERNAL tfe_status TFE_FN(ad_dev_f_)(const TFE_TY(view) *v, bool sub, const TFE_TY(view) *Eb, const TFE_TY(view) *F,
                                         const TFE_TY(view) *tmp) {
  int64_t k = v->lay.dims[0];
  TFE_TY(view) vj = TFE_FN(ad_vbc_)(v, k, true), vi = TFE_FN(ad_vbc_)(v, k, false), d = TFE_FN(ad_diagv_)(F);
  tfe_status st = TFE__ADZIP(sub ? TFE_BIN_SUB : TFE_BIN_ADD, F, &vj, &vi);
  TFE__ADT(TFE_FN(ad_dev_lor_)(F, Eb, tmp));
  TFE__ADT(TFE_FN(ad_fill_)(&d, (TFE_T)0));
  return st;
}
/* The real part of v's elements into d (imaginary parts of d untouched); a copy for real kinds. */
TFE_INTERNAL tfe_status TFE_FN(ad_re_copy_)(const TFE_TY(view) *d, const TFE_TY(view) *v) {
  tfe_dyn rd = TFE_FN(ad_part_)(d, 0), rv = TFE_FN(ad_part_)(v, 0);
  return TFE_FN(ad_ewd_)(TFE_EW_COPY, 0, &rd, &rv, NULL, NULL);
}
TFE_INTERNAL tfe_status TFE_FN(ad_dev_rank_)(const TFE_TY(view) *A, const char *fn) {
  if (A->lay.rank < 2) return tfe__fail(TFE_ERR_RANK, fn, "needs a matrix (rank >= 2), got rank %d", A->lay.rank);
  return TFE_OK;
}
/* dy[0], dy[1]: zeros shaped like y[0], y[1] (the tangents of a two-output rule's empty input,
 * or the sums a forward rule accumulates into); on failure neither is kept. */
TFE_INTERNAL tfe_status TFE_FN(ad_zero2_)(const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  memset(dy, 0, 2 * sizeof *dy);
  tfe_status st = TFE_FN(ad_like_)(y[0], true, &dy[0]);
  TFE__ADT(TFE_FN(ad_like_)(y[1], true, &dy[1]));
  if (st) TFE_FN(ad_rel_)(dy, 2);
  return st;
}
/* dx = (G + G^H) / 2 (a new tensor). */
TFE_INTERNAL tfe_status TFE_FN(ad_dev_herm_)(const TFE_TY(view) *G, TFE_TY(tensor) *dx) {
  TFE_TRY(TFE_FN(ad_like_)(G, false, dx));
  TFE_TY(view) gh = TFE_FN(ad_tv_)(G, true);
  TFE_T half = (TFE_T)0.5;
  tfe_status st = TFE__ADZIP(TFE_BIN_ADD, &dx->v, G, &gh);
  TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, &dx->v, NULL, NULL, &half, NULL));
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}

/* The SVD rules' broadened factors of the singular values s (k of them per item of the matrix
 * batch A): E (ad_dev_e2_), Fm = lor(s_j - s_i), Fp = lor(s_j + s_i) (k x k, zero diagonals) and
 * sinv = lor(s) (new tensors; tk a k x k scratch, ts one like s). */
TFE_INTERNAL tfe_status TFE_FN(ad_svd_fdev_)(const tfe_ad_params *p, const TFE_TY(view) *s, const TFE_TY(view) *A,
                                            int64_t k, TFE_TY(tensor) *E, TFE_TY(tensor) *Fm, TFE_TY(tensor) *Fp,
                                            TFE_TY(tensor) *tk, TFE_TY(tensor) *sinv, TFE_TY(tensor) *ts) {
  tfe_status st = TFE_FN(ad_dev_e2_)(s, A, (p->eta > 0 ? p->eta : sqrt((double)TFE_FN(la_eps_)())), E);
  TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, Fm));
  TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, Fp));
  TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, tk));
  TFE__ADT(TFE_FN(ad_dense_copy_)(s, sinv));
  TFE__ADT(TFE_FN(ad_like_)(s, false, ts));
  if (!st) {
    TFE_TY(view) Eb2 = TFE_FN(ad_ebc_)(E, 2, k, k), Eb1 = TFE_FN(ad_ebc_)(E, 1, k, 0);
    st = TFE_FN(ad_dev_f_)(s, true, &Eb2, &Fm->v, &tk->v);
    TFE__ADT(TFE_FN(ad_dev_f_)(s, false, &Eb2, &Fp->v, &tk->v));
    TFE__ADT(TFE_FN(ad_dev_lor_)(&sinv->v, &Eb1, &ts->v));
  }
  return st;
}

/* ---- SVD: U [X Vh + S^-1 (gVh - K^H Vh)] + (gU - U J) S^-1 Vh (linalg_rules_tpl.h) ------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_svd_rr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                              TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *U = y[0], *s = y[1], *Vh = y[2], *gU = dy[0], *gs = dy[1], *gVh = dy[2];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(svd)"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  enum { E_, FM, FP, TK, SI, TS, J_, K_, JA, X_, T1, W2, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  memset(dx, 0, sizeof *dx);
  tfe_status st = TFE_FN(ad_svd_fdev_)(p, s, A, k, &t[E_], &t[FM], &t[FP], &t[TK], &t[SI], &t[TS]);
  for (int i = J_; i <= X_; i++) TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, &t[i]));
  if (!st) {
    const TFE_TY(view) *Fm = &t[FM].v, *Fp = &t[FP].v, *Tk = &t[TK].v, *sinv = &t[SI].v, *J = &t[J_].v, *K = &t[K_].v,
                       *Ja = &t[JA].v, *X = &t[X_].v;
    TFE_TY(view) Jh = TFE_FN(ad_tv_)(J, true), Kh = TFE_FN(ad_tv_)(K, true), Xd = TFE_FN(ad_diagv_)(X);
    TFE_T half = (TFE_T)0.5;
    st = TFE_FN(ad_bmm_)(1, 'C', U, 'N', gU, 0, J);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Vh, 'C', gVh, 0, K));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, Ja, J, &Jh)); /* 2 Ja */
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, Tk, K, &Kh)); /* 2 Ka */
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, X, Ja, Tk));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, X, X, Fm));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, Ja, Ja, Tk));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, Ja, Ja, Fp));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, X, X, Ja));
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, X, NULL, NULL, &half, NULL));
    /* X_ii = Re gs_i (+ i Im J_ii / s_i) */
    TFE__ADT(TFE_FN(ad_re_copy_)(&Xd, gs));
#if TFE_CPLX
    if (!st) {
      TFE_TY(view) Jd = TFE_FN(ad_diagv_)(J);
      tfe_dyn xi = TFE_FN(ad_part_)(&Xd, 1), ji = TFE_FN(ad_part_)(&Jd, 1), sr = TFE_FN(ad_part_)(sinv, 0);
      st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &xi, &ji, &sr, NULL);
    }
#endif
    /* T1 = X Vh + diag(sinv) (gVh - K^H Vh); gA = U T1 */
    TFE__ADT(TFE_FN(ad_dense_copy_)(gVh, &t[T1]));
    if (!st) {
      TFE_TY(view) sr = TFE_FN(ad_vbc_)(sinv, n, false);
      st = TFE_FN(ad_bmm_)(-1, 'C', K, 'N', Vh, 1, &t[T1].v);
      TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t[T1].v, &t[T1].v, &sr));
      TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', X, 'N', Vh, 1, &t[T1].v));
    }
    TFE__ADT(TFE_FN(ad_like_)(A, false, dx));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', U, 'N', &t[T1].v, 0, &dx->v));
    /* gA += (gU - U J) diag(sinv) Vh */
    TFE__ADT(TFE_FN(ad_dense_copy_)(gU, &t[W2]));
    if (!st) {
      TFE_TY(view) sc = TFE_FN(ad_vbc_)(sinv, m, true);
      st = TFE_FN(ad_bmm_)(-1, 'N', U, 'N', J, 1, &t[W2].v);
      TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t[W2].v, &t[W2].v, &sc));
      TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &t[W2].v, 'N', Vh, 1, &dx->v));
    }
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}

/* ---- QR: [Q G + gQ - Q Q^H gQ] R^-H, wide: gQ += Y gR2^H, gY = Q gR2 ------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_qr_rr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *y,
                                             const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *Q = y[0], *R = y[1], *gQ = dy[0], *gR = dy[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(qr)"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  enum { GQ, QG, G_, N_, M_, XH, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  memset(dx, 0, sizeof *dx);
  tfe_status st = TFE_FN(ad_dense_copy_)(gQ, &t[GQ]);
  for (int i = QG; i <= M_; i++) TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, &t[i]));
  TFE__ADT(TFE_FN(ad_like_)(A, false, dx));
  if (!st && n > m) {
    TFE_TY(view) Y = TFE_FN(ad_blk_)(A, 0, m, m, n - m), gR2 = TFE_FN(ad_blk_)(gR, 0, k, m, n - m),
                 gY = TFE_FN(ad_blk_)(&dx->v, 0, m, m, n - m);
    st = TFE_FN(ad_bmm_)(1, 'N', &Y, 'C', &gR2, 1, &t[GQ].v);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Q, 'N', &gR2, 0, &gY));
  }
  if (!st) {
    TFE_TY(view) R1 = TFE_FN(ad_blk_)(R, 0, k, 0, k), gR1 = TFE_FN(ad_blk_)(gR, 0, k, 0, k);
    const TFE_TY(view) *gQe = &t[GQ].v, *QgQ = &t[QG].v, *G = &t[G_].v, *N = &t[N_].v, *M = &t[M_].v;
    TFE_TY(view) Nh = TFE_FN(ad_tv_)(N, true);
    st = TFE_FN(ad_bmm_)(1, 'C', Q, 'N', gQe, 0, QgQ);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &gR1, 'C', &R1, 0, G));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, N, QgQ, G));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, M, N, &Nh));
    TFE__ADT(TFE_FN(ad_tri_)(1, M));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, G, G, M));
#if TFE_CPLX
    if (!st) { /* i Im diag N */
      TFE_TY(view) Gd = TFE_FN(ad_diagv_)(G), Nd = TFE_FN(ad_diagv_)(N);
      tfe_dyn gi = TFE_FN(ad_part_)(&Gd, 1), ni = TFE_FN(ad_part_)(&Nd, 1);
      st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_ADD, &gi, &gi, &ni, NULL);
    }
#endif
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, G, G, QgQ));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Q, 'N', G, 1, gQe)); /* B = gQ + Q (G - Q^H gQ) */
    if (!st) {
      TFE_TY(view) Bh = TFE_FN(ad_tv_)(gQe, true);
      st = TFE_FN(ad_dtri_)(&R1, false, false, &Bh, &t[XH]); /* R1^-1 B^H */
    }
    if (!st) {
      TFE_TY(view) d1 = TFE_FN(ad_blk_)(&dx->v, 0, m, 0, k), xh = TFE_FN(ad_tv_)(&t[XH].v, true);
      st = TFE_FN(ad_copy_)(&d1, &xh);
    }
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}

/* ---- eigh: herm(V (diag Re gw + F o V^H gV) V^H) --------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_eigh_rr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                               TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *w = y[0], *V = y[1], *gw = dy[0], *gV = dy[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(eigh)"));
  int64_t n = A->lay.dims[0];
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  enum { E_, F_, TK, Y_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  memset(dx, 0, sizeof *dx);
  tfe_status st = TFE_FN(ad_dev_e2_)(w, A, (p->eta > 0 ? p->eta : sqrt((double)TFE_FN(la_eps_)())), &t[E_]);
  for (int i = F_; i <= Y_; i++) TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[i]));
  if (!st) {
    TFE_TY(view) Eb2 = TFE_FN(ad_ebc_)(&t[E_], 2, n, n), Yd = TFE_FN(ad_diagv_)(&t[Y_].v);
    st = TFE_FN(ad_dev_f_)(w, true, &Eb2, &t[F_].v, &t[TK].v);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', V, 'N', gV, 0, &t[Y_].v));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t[Y_].v, &t[Y_].v, &t[F_].v)); /* zero diagonal */
    TFE__ADT(TFE_FN(ad_re_copy_)(&Yd, gw));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', V, 'N', &t[Y_].v, 0, &t[TK].v));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &t[TK].v, 'C', V, 0, &t[F_].v));
    TFE__ADT(TFE_FN(ad_dev_herm_)(&t[F_].v, dx));
  }
  TFE_FN(ad_rel_)(t, NT);
  return st;
}

/* ---- Cholesky: herm(L^-H Phi(L^H gL) L^-1) --------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_chol_rr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *y,
                                               const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *L = y[0], *gL = dy[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(cholesky)"));
  int64_t n = A->lay.dims[0];
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  TFE_TY(tensor) t[3];
  memset(t, 0, sizeof t);
  memset(dx, 0, sizeof *dx);
  TFE_TY(view) Lh = TFE_FN(ad_tv_)(L, true);
  tfe_status st = TFE_FN(ad_dmat_)(n, n, A, false, &t[0]);
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', L, 'N', gL, 0, &t[0].v));
  TFE__ADT(TFE_FN(ad_tri_)(3, &t[0].v));
  TFE__ADT(TFE_FN(ad_dtri_)(&Lh, false, false, &t[0].v, &t[1])); /* Z = L^-H Phi */
  if (!st) {
    TFE_TY(view) Zh = TFE_FN(ad_tv_)(&t[1].v, true);
    st = TFE_FN(ad_dtri_)(&Lh, false, false, &Zh, &t[2]); /* (Z L^-1)^H */
  }
  TFE__ADT(TFE_FN(ad_dev_herm_)(&t[2].v, dx));
  TFE_FN(ad_rel_)(t, 3);
  return st;
}

/* ==== forward rules ============================================================================ */
/* ---- SVD: dP = U^H dA V, ds = Re diag dP, dU = U dC + (dA V - U dP) S^-1,
 *      dVh = S^-1 (U^H dA - dP Vh) - dD Vh (linalg_rules_tpl.h, ad_svd_fr1_) ---------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_svd_fr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                              TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0], *dA = dx[0], *U = y[0], *s = y[1], *Vh = y[2];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(svd)"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  memset(dy, 0, 3 * sizeof *dy);
  tfe_status st = TFE_OK;
  if (TFE_FN(ad_numel_)(A) == 0) {
    for (int i = 0; i < 3; i++) TFE__ADT(TFE_FN(ad_like_)(y[i], true, &dy[i]));
    if (st) TFE_FN(ad_rel_)(dy, 3);
    return st;
  }
  enum { E_, FM, FP, TK, DP, DC, DD, SI, TS, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  st = TFE_FN(ad_svd_fdev_)(p, s, A, k, &t[E_], &t[FM], &t[FP], &t[TK], &t[SI], &t[TS]);
  for (int i = DP; i <= DD; i++) TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, &t[i]));
  TFE__ADT(TFE_FN(ad_dmat_)(k, n, A, false, &dy[2])); /* T = U^H dA, then dVh */
  TFE__ADT(TFE_FN(ad_dmat_)(m, k, A, false, &dy[0]));
  TFE__ADT(TFE_FN(ad_like_)(s, true, &dy[1]));
  if (!st) {
    const TFE_TY(view) *Fm = &t[FM].v, *Fp = &t[FP].v, *Tk = &t[TK].v, *dP = &t[DP].v, *dC = &t[DC].v, *dD = &t[DD].v,
                       *sinv = &t[SI].v, *T = &dy[2].v;
    TFE_TY(view) dPh = TFE_FN(ad_tv_)(dP, true), dPd = TFE_FN(ad_diagv_)(dP);
    TFE_T half = (TFE_T)0.5;
    st = TFE_FN(ad_bmm_)(1, 'C', U, 'N', dA, 0, T);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', T, 'C', Vh, 0, dP));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, dC, dP, &dPh)); /* 2 Ps */
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, dD, dP, &dPh)); /* 2 Pa */
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, dC, dC, Fm));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, dD, dD, Fp));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, Tk, dC, dD));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, dC, dC, dD));
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, dC, NULL, NULL, &half, NULL));
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, Tk, NULL, NULL, &half, NULL)); /* dD */
    TFE__ADT(TFE_FN(ad_re_copy_)(&dy[1].v, &dPd));
#if TFE_CPLX
    if (!st) { /* dC_ii = i Im dP_ii / s_i */
      TFE_TY(view) dCd = TFE_FN(ad_diagv_)(dC);
      tfe_dyn ci = TFE_FN(ad_part_)(&dCd, 1), pi = TFE_FN(ad_part_)(&dPd, 1), sr = TFE_FN(ad_part_)(sinv, 0);
      st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &ci, &pi, &sr, NULL);
    }
#endif
    /* dU = U dC + (dA V - U dP) diag(sinv) */
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', dA, 'C', Vh, 0, &dy[0].v));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', U, 'N', dP, 1, &dy[0].v));
    if (!st) {
      TFE_TY(view) sc = TFE_FN(ad_vbc_)(sinv, m, true);
      st = TFE__ADZIP(TFE_BIN_MUL, &dy[0].v, &dy[0].v, &sc);
    }
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', U, 'N', dC, 1, &dy[0].v));
    /* dVh = diag(sinv) (U^H dA - dP Vh) - dD Vh */
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', dP, 'N', Vh, 1, T));
    if (!st) {
      TFE_TY(view) sr = TFE_FN(ad_vbc_)(sinv, n, false);
      st = TFE__ADZIP(TFE_BIN_MUL, T, T, &sr);
    }
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Tk, 'N', Vh, 1, T));
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(ad_rel_)(dy, 3);
  return st;
}

/* ---- QR: Z = dA1 R1^-1, X = Q^H Z, dQ = Z - Q (X - O), dR1 = (X - O) R1, wide: dR2 = dQ^H Y + Q^H dY,
 *      O the skew-Hermitian part of X built from its strict lower triangle (ad_qr_omega_) ----------- */
TFE_INTERNAL tfe_status TFE_FN(ad_qr_fr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *dx,
                                             const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0], *dA = dx[0], *Q = y[0], *R = y[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(qr)"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n;
  memset(dy, 0, 2 * sizeof *dy);
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_zero2_)(y, dy);
  tfe_status st = TFE_OK;
  enum { ZH, X_, O_, N_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  TFE_TY(view) R1 = TFE_FN(ad_blk_)(R, 0, k, 0, k), R1h = TFE_FN(ad_tv_)(&R1, true), dA1 = TFE_FN(ad_blk_)(dA, 0, m, 0, k),
               dA1h = TFE_FN(ad_tv_)(&dA1, true);
  st = TFE_FN(ad_dtri_)(&R1h, true, false, &dA1h, &t[ZH]); /* Z^H = R1^-H dA1^H */
  for (int i = X_; i <= N_; i++) TFE__ADT(TFE_FN(ad_dmat_)(k, k, A, false, &t[i]));
  TFE__ADT(TFE_FN(ad_like_)(R, true, &dy[1]));
  if (!st) {
    TFE_TY(view) Z = TFE_FN(ad_tv_)(&t[ZH].v, true), Oh = TFE_FN(ad_tv_)(&t[O_].v, true);
    const TFE_TY(view) *X = &t[X_].v, *O = &t[O_].v, *N = &t[N_].v;
    st = TFE_FN(ad_bmm_)(1, 'C', Q, 'N', &Z, 0, X);
    TFE__ADT(TFE_FN(ad_copy_)(O, X));
    TFE__ADT(TFE_FN(ad_tri_)(1, O));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, N, O, &Oh)); /* O - O^H: zero diagonal */
#if TFE_CPLX
    if (!st) { /* i Im diag X */
      TFE_TY(view) Nd = TFE_FN(ad_diagv_)(N), Xd = TFE_FN(ad_diagv_)(X);
      tfe_dyn ni = TFE_FN(ad_part_)(&Nd, 1), xi = TFE_FN(ad_part_)(&Xd, 1);
      st = TFE_FN(ad_ewd_)(TFE_EW_COPY, 0, &ni, &xi, NULL, NULL);
    }
#endif
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, X, X, N)); /* X - O */
    TFE__ADT(TFE_FN(ad_dense_copy_)(&Z, &dy[0]));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Q, 'N', X, 1, &dy[0].v));
    if (!st) {
      TFE_TY(view) dR1 = TFE_FN(ad_blk_)(&dy[1].v, 0, k, 0, k);
      st = TFE_FN(ad_bmm_)(1, 'N', X, 'N', &R1, 0, &dR1);
    }
    if (!st && n > m) {
      TFE_TY(view) Y = TFE_FN(ad_blk_)(A, 0, m, m, n - m), dY = TFE_FN(ad_blk_)(dA, 0, m, m, n - m),
                   dR2 = TFE_FN(ad_blk_)(&dy[1].v, 0, k, m, n - m);
      st = TFE_FN(ad_bmm_)(1, 'C', &dy[0].v, 'N', &Y, 0, &dR2);
      TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', Q, 'N', &dY, 1, &dR2));
    }
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(ad_rel_)(dy, 2);
  return st;
}

/* ---- eigh: P = V^H herm(dA) V, dw = Re diag P, dV = V (F o P) ---------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_eigh_fr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                               const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                               TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0], *dA = dx[0], *w = y[0], *V = y[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(eigh)"));
  int64_t n = A->lay.dims[0];
  memset(dy, 0, 2 * sizeof *dy);
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_zero2_)(y, dy);
  tfe_status st = TFE_OK;
  enum { E_, F_, TK, P_, H_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  st = TFE_FN(ad_dev_e2_)(w, A, (p->eta > 0 ? p->eta : sqrt((double)TFE_FN(la_eps_)())), &t[E_]);
  for (int i = F_; i <= P_; i++) TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[i]));
  TFE__ADT(TFE_FN(ad_dev_herm_)(dA, &t[H_]));
  TFE__ADT(TFE_FN(ad_like_)(w, true, &dy[0]));
  TFE__ADT(TFE_FN(ad_like_)(V, false, &dy[1]));
  if (!st) {
    TFE_TY(view) Eb2 = TFE_FN(ad_ebc_)(&t[E_], 2, n, n), Pd = TFE_FN(ad_diagv_)(&t[P_].v);
    st = TFE_FN(ad_dev_f_)(w, true, &Eb2, &t[F_].v, &t[TK].v);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', V, 'N', &t[H_].v, 0, &t[TK].v));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &t[TK].v, 'N', V, 0, &t[P_].v));
    TFE__ADT(TFE_FN(ad_re_copy_)(&dy[0].v, &Pd));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t[P_].v, &t[P_].v, &t[F_].v));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', V, 'N', &t[P_].v, 0, &dy[1].v));
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(ad_rel_)(dy, 2);
  return st;
}

/* ---- Cholesky: dL = L Phi(L^-1 herm(dA) L^-H) ---------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_chol_fr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *dx,
                                               const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0], *dA = dx[0], *L = y[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(cholesky)"));
  memset(dy, 0, sizeof *dy);
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(L, true, dy);
  TFE_TY(tensor) t[3];
  memset(t, 0, sizeof t);
  tfe_status st = TFE_FN(ad_dev_herm_)(dA, &t[0]);
  TFE__ADT(TFE_FN(ad_dtri_)(L, true, false, &t[0].v, &t[1])); /* L^-1 H */
  if (!st) {
    TFE_TY(view) zh = TFE_FN(ad_tv_)(&t[1].v, true);
    st = TFE_FN(ad_dtri_)(L, true, false, &zh, &t[2]); /* L^-1 H L^-H (Hermitian) */
  }
  TFE__ADT(TFE_FN(ad_tri_)(3, &t[2].v));
  TFE__ADT(TFE_FN(ad_like_)(L, false, dy));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', L, 'N', &t[2].v, 0, &dy->v));
  TFE_FN(ad_rel_)(t, 3);
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}

/* ==== trisolve: X = T^-1 B (more_rules_tpl.h) ===================================================== */
/* A right-hand side (n, r, batch...) or a vector batch (n, batch...) of the matrix batch A, as a
 * matrix batch (a vector gets a column axis of size 1). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_rmat_)(const TFE_TY(view) *B, const TFE_TY(view) *A) {
  if (B->lay.rank != A->lay.rank - 1) return *B;
  TFE_TY(view) t = *B;
  t.lay.rank = B->lay.rank + 1;
  for (int i = B->lay.rank; i >= 2; i--) t.lay.dims[i] = B->lay.dims[i - 1], t.lay.strides[i] = B->lay.strides[i - 1];
  t.lay.dims[1] = 1, t.lay.strides[1] = B->lay.dims[0] * B->lay.strides[0];
  return t;
}
/* The triangle the rule reads: its mask kind (a unit diagonal is not part of it). */
TFE_INTERNAL int TFE_FN(ad_trimask_)(const tfe_ad_params *p) {
  return p->lower ? (p->unit_diag ? 1 : 0) : (p->unit_diag ? 4 : 2);
}
/* dX = T^-1 (dB - tri(dA) X). */
TFE_INTERNAL tfe_status TFE_FN(ad_trisolve_fr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                                   const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                   TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(trisolve)"));
  memset(dy, 0, sizeof *dy);
  TFE_TY(tensor) t[2];
  memset(t, 0, sizeof t);
  tfe_status st = TFE_FN(ad_dense_copy_)(dx[0], &t[0]);
  TFE__ADT(TFE_FN(ad_dense_copy_)(dx[1], &t[1]));
  if (!st && A->lay.dims[0] > 0) {
    TFE_TY(view) Xm = TFE_FN(ad_rmat_)(y[0], A), Rm = TFE_FN(ad_rmat_)(&t[1].v, A);
    st = TFE_FN(ad_tri_)(TFE_FN(ad_trimask_)(p), &t[0].v);
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', &t[0].v, 'N', &Xm, 1, &Rm));
  }
  TFE__ADT(TFE_FN(ad_dtri_)(A, p->lower != 0, p->unit_diag != 0, &t[1].v, dy));
  TFE_FN(ad_rel_)(t, 2);
  return st;
}
/* gB = T^-H gX, gA = tri(-gB X^H). */
TFE_INTERNAL tfe_status TFE_FN(ad_trisolve_rr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                                   const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                   TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(trisolve)"));
  memset(dx, 0, 2 * sizeof *dx);
  TFE_TY(view) Ah = TFE_FN(ad_tv_)(A, true);
  tfe_status st = TFE_FN(ad_dtri_)(&Ah, p->lower == 0, p->unit_diag != 0, dy[0], &dx[1]);
  TFE__ADT(TFE_FN(ad_like_)(A, true, &dx[0]));
  if (!st && A->lay.dims[0] > 0) {
    TFE_TY(view) gBm = TFE_FN(ad_rmat_)(&dx[1].v, A), Xm = TFE_FN(ad_rmat_)(y[0], A);
    st = TFE_FN(ad_bmm_)(-1, 'N', &gBm, 'C', &Xm, 0, &dx[0].v);
    TFE__ADT(TFE_FN(ad_tri_)(TFE_FN(ad_trimask_)(p), &dx[0].v));
  }
  if (st) TFE_FN(ad_rel_)(dx, 2);
  return st;
}

/* ==== inv: X = A^-1 by a solve against the identity; dX = -X dA X, gA = -X^H gX X^H ============= */
TFE_INTERNAL tfe_status TFE_FN(ad_inv_pr_dev_)(const TFE_TY(view) *A, TFE_TY(tensor) *X) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_inv"));
  int64_t n = A->lay.dims[0];
  TFE_TY(tensor) id = {0}, b = {0};
  tfe_status st = TFE_FN(ad_dmat_)(n, n, A, true, &id);
  if (!st && n > 0) { /* ones on the diagonal of every item: the lower-and-upper mask */
    TFE_TY(view) M;
    st = TFE_FN(ad_mask_)(0, &id.v, &b, &M);
    TFE_TY(view) Mu = M;
    Mu.lay.strides[0] = -1, Mu.lay.strides[1] = 1; /* upper: M transposed */
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &id.v, &M, &Mu));
  }
  TFE__ADT(TFE_FN(solve)(A, &id.v, X));
  TFE_FN(tensor_release)(&id), TFE_FN(tensor_release)(&b);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_inv_fr_dev_)(const TFE_TY(view) *const *x, const TFE_TY(view) *const *dx,
                                              const TFE_TY(view) *const *y, TFE_TY(tensor) *dy, bool rev) {
  const TFE_TY(view) *A = x[0], *X = y[0], *d = dx[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, rev ? "tfe_rrule(inv)" : "tfe_frule(inv)"));
  int64_t n = A->lay.dims[0];
  TFE_TY(tensor) T = {0};
  memset(dy, 0, sizeof *dy);
  char o = rev ? 'C' : 'N';
  tfe_status st = TFE_FN(ad_dmat_)(n, n, A, false, &T);
  TFE__ADT(TFE_FN(ad_like_)(A, false, dy));
  TFE__ADT(TFE_FN(ad_bmm_)(1, o, X, 'N', d, 0, &T.v));
  TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', &T.v, o, X, 0, &dy->v));
  TFE_FN(tensor_release)(&T);
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}
#endif
