/* tenferro/ad/dev_rules2_tpl.h — device forms of the primal, forward and reverse rules of det,
 * slogdet, slogdet_sign, lq, pinv, polar, norm, lstsq, svd_trunc and expm, for one float kind:
 * the CPU rules' formulas (solve_rules_tpl.h, linalg_rules_tpl.h, more_rules_tpl.h) written with the pieces of
 * dev_rules_tpl.h (batched contractions, the backend's elementwise slot, Toeplitz masks, the
 * linalg room's typed calls on the backend's linalg slot) and the device SVD / QR rules. They run
 * only while tfe__ts.ad_backend is set; host tapes keep the CPU code. Bodies only, re-included
 * per kind by ad.h right after dev_rules_tpl.h. docs/ad.md ("Device tensors") lists them.
 *
 * Pieces added here:
 *   reductions        the elementwise slot's REDUCE (prod of diag(U), sums of logs, norms)
 *   exact 0 / 1 steps [x > 0] by scaling past every nonzero magnitude and clamping to [0, 1]
 *                     three times (subnormals included); with the phases z / max(|z|, tiny) and
 *                     their constants in rules_tpl.h (ad_step_, ad_phase1_, ad_consts_), which
 *                     the max / min and abs rules share
 *   permutation sign  of the LU's row permutation (i64 on the device; the elementwise slot has
 *                     no integer kinds): the values k < 2^23 read as the real kind are the
 *                     subnormals k 2^-1074 (f64) or, in the low words, k 2^-149 (f32) (little
 *                     endian; the device keeps subnormals: NVRTC's default -ftz=false), whose
 *                     differences are exact; sign = prod over i < j of (1 - 2 [p_i > p_j])
 *   read back         only where a host loop or an output shape depends on the values: expm's
 *                     1-norms (its squarings' count), svd_trunc's kept rank under a cutoff */
#if TFE__BODY_PHASE && TFE_FLOAT

/* A CPU rules' helper defined later in ad.h's order (linalg_rules_tpl.h): the thin SVD [U, S, Vh]
 * with S of this kind (on the backend's linalg slot here). */
TFE_INTERNAL tfe_status TFE_FN(ad_svd_full_)(const TFE_TY(view) *A, TFE_TY(tensor) *f);
/* (more_rules_tpl.h) the reduced axes first, then the kept ones, with the checks of the axes. */
TFE_INTERNAL tfe_status TFE_FN(ad_red_perm_)(const tfe_ad_params *p, const tfe_layout *L, int *perm, int64_t *count,
                                             int64_t *nout);

/* dst = code(a over axes[0..naxes)) on dyn views (the slot's REDUCE; real parts: ad_part_). */
TFE_INTERNAL tfe_status TFE_FN(ad_redd_)(int code, const tfe_dyn *dst, const tfe_dyn *a, int naxes, const int *axes) {
  tfe_ew_desc e = {TFE_EW_REDUCE, code, dst, a, NULL, NULL, NULL, naxes, axes, 0, NULL, 0};
  return TFE__AD_BE->elementwise(TFE__AD_BE, &e);
}
TFE_INTERNAL tfe_status TFE_FN(ad_red_)(int code, const TFE_TY(view) *dst, const TFE_TY(view) *a, int naxes,
                                       const int *axes) {
  tfe_dyn d, s;
  TFE_TRY(TFE_FN(view_to_dyn)(dst, &d));
  TFE_TRY(TFE_FN(view_to_dyn)(a, &s));
  return TFE_FN(ad_redd_)(code, &d, &s, naxes, axes);
}
/* A new (batch...) tensor for the matrix batch A (dims 2...), zeros when zero. */
TFE_INTERNAL tfe_status TFE_FN(ad_bvec_)(const TFE_TY(view) *A, bool zero, TFE_TY(tensor) *t) {
  TFE_TRY(TFE_FN(ad_empty_)(A->lay.rank - 2, A->lay.dims + 2, t));
  tfe_status st = zero ? TFE_FN(ad_fill_)(&t->v, (TFE_T)0) : TFE_OK;
  if (st) TFE_FN(tensor_release)(t);
  return st;
}
/* A (batch...) vector v broadcast over the matrices of like (r, c, batch...): strides 0, 0, v's. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_bbc_)(const TFE_TY(view) *v, const TFE_TY(view) *like) {
  TFE_TY(view) t = *v;
  t.lay = like->lay;
  t.lay.offset = v->lay.offset;
  t.lay.strides[0] = t.lay.strides[1] = 0;
  for (int i = 2; i < like->lay.rank; i++) t.lay.strides[i] = v->lay.strides[i - 2];
  return t;
}
/* The phase z / |z| of each element (0 at 0; a new tensor): twice z / max(|z|, tiny), so that a
 * subnormal z is first scaled to a normal number (the CPU: z / |z|). */
TFE_INTERNAL tfe_status TFE_FN(ad_phase_)(const TFE_TY(view) *z, const TFE_TY(tensor) *K, TFE_TY(tensor) *ph) {
  TFE_TY(tensor) t = {0};
  TFE_TRY(TFE_FN(ad_like_)(z, false, &t));
  tfe_status st = TFE_FN(ad_phase1_)(z, K, &t.v);
  TFE__ADT(TFE_FN(ad_like_)(z, false, ph));
  TFE__ADT(TFE_FN(ad_phase1_)(&t.v, K, &ph->v));
  TFE_FN(tensor_release)(&t);
  return st;
}

/* ==== det, slogdet, slogdet_sign =============================================================== */
/* The sign of the row permutation perm (n, batch...) of the LU of A into sp (batch...), imaginary
 * parts zero: prod over i < j of (1 - 2 [p_i > p_j]) (the head comment says how the i64 values
 * are read). */
TFE_INTERNAL tfe_status TFE_FN(ad_psign_)(const tfe_tensor_i64 *perm, const TFE_TY(view) *A, const TFE_TY(tensor) *K,
                                         TFE_TY(tensor) *sp) {
  int64_t n = A->lay.dims[0];
  int q = sizeof(TFE_R) == 4 ? 2 : 1; /* f32: the low word of each i64 */
  if (sizeof(TFE_R) == 4 && n > ((int64_t)1 << 23))
    return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_det", "the device's permutation sign of f32 kinds needs n <= 2^23");
  tfe_dyn p;
  memset(&p, 0, sizeof p);
  p.dtype = sizeof(TFE_R) == 4 ? TFE_DT_F32 : TFE_DT_F64, p.data = perm->v.data, p.lay = A->lay;
  p.lay.offset = perm->v.lay.offset * q;
  for (int i = 2; i < A->lay.rank; i++) p.lay.strides[i] = perm->v.lay.strides[i - 1] * q;
  tfe_dyn pi = p, pj = p;
  pi.lay.strides[0] = pj.lay.strides[1] = perm->v.lay.strides[0] * q, pi.lay.strides[1] = pj.lay.strides[0] = 0;
  TFE_TY(tensor) W = {0}, mb = {0};
  TFE_TY(view) M;
  TFE_R m2 = -2;
  tfe_status st = TFE_FN(ad_dmat_)(n, n, A, false, &W);
  TFE__ADT(TFE_FN(ad_mask_)(4, A, &mb, &M)); /* i < j */
  TFE__ADT(TFE_FN(ad_bvec_)(A, true, sp));
  if (!st) {
    tfe_dyn w = TFE_FN(ad_part_)(&W.v, 0), mr = TFE_FN(ad_part_)(&M, 0), one = TFE_FN(ad_kd_)(K, 1, &w),
            s = TFE_FN(ad_part_)(&sp->v, 0);
    st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &w, &pi, &pj, NULL);
    TFE__ADT(TFE_FN(ad_step_)(&w, K)); /* [p_i > p_j] */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &w, &w, &mr, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &w, NULL, NULL, &m2));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_ADD, &w, &w, &one, NULL));
    TFE__ADT(TFE_FN(ad_redd_)(TFE_RED_PROD, &s, &w, 2, (const int[]){0, 1}));
    if (st) TFE_FN(tensor_release)(sp);
  }
  TFE_FN(tensor_release)(&W), TFE_FN(tensor_release)(&mb);
  return st;
}
/* log|u| summed over the diagonal du (n, batch...) into the new (batch...) tensor la (real). */
TFE_INTERNAL tfe_status TFE_FN(ad_logabs_)(const TFE_TY(view) *du, const TFE_TY(view) *A, TFE_TY(tensor) *la) {
  TFE_TY(tensor) t = {0};
  TFE_TRY(TFE_FN(ad_like_)(du, false, &t));
  tfe_dyn r = TFE_FN(ad_part_)(&t.v, 0), o;
  tfe_status st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, &t.v, du, NULL, NULL, NULL);
  TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_MAP, TFE_UN_LOG, &r, &r, NULL, NULL));
  TFE__ADT(TFE_FN(ad_bvec_)(A, true, la));
  if (!st) {
    o = TFE_FN(ad_part_)(&la->v, 0);
    st = TFE_FN(ad_redd_)(TFE_RED_SUM, &o, &r, 1, (const int[]){0});
    if (st) TFE_FN(tensor_release)(la);
  }
  TFE_FN(tensor_release)(&t);
  return st;
}
/* sp times the product of f(du) over axis 0 into the new (batch...) tensor d (f: the phase when
 * phase, else the identity). */
TFE_INTERNAL tfe_status TFE_FN(ad_dprod_)(const TFE_TY(view) *du, const TFE_TY(view) *A, const TFE_TY(tensor) *K,
                                         const TFE_TY(tensor) *sp, bool phase, TFE_TY(tensor) *d) {
  TFE_TY(tensor) ph = {0};
  tfe_status st = phase ? TFE_FN(ad_phase_)(du, K, &ph) : TFE_OK;
  TFE__ADT(TFE_FN(ad_bvec_)(A, false, d));
  TFE__ADT(TFE_FN(ad_red_)(TFE_RED_PROD, &d->v, phase ? &ph.v : du, 1, (const int[]){0}));
  TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &d->v, &d->v, &sp->v));
  TFE_FN(tensor_release)(&ph);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_dev_square_)(const TFE_TY(view) *A, const char *fn) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, fn));
  if (A->lay.dims[0] != A->lay.dims[1])
    return tfe__fail(TFE_ERR_SHAPE, fn, "needs square matrices, got %lld x %lld", (long long)A->lay.dims[0],
                     (long long)A->lay.dims[1]);
  return TFE_OK;
}
/* mode 0: [det A]; 1: [log|det A|]; 2: [sign, log|det A|]: the backend's LU (tfe_lu_S), the
 * product of diag(U) (of its phases for the sign) times the permutation's sign; log|det| sums
 * log|u_ii|. A 0 x 0 matrix: det 1, log|det| 0 (the CPU's). */
TFE_INTERNAL tfe_status TFE_FN(ad_det_pr_dev_)(int mode, const TFE_TY(view) *A, TFE_TY(tensor) *y) {
  TFE_TRY(TFE_FN(ad_dev_square_)(A, mode == 0 ? "tfe_det" : "tfe_slogdet"));
  TFE_TY(tensor) L = {0}, U = {0}, K = {0}, sp = {0};
  tfe_tensor_i64 perm = {0};
  int nd = mode == 2 ? 2 : 1;
  memset(y, 0, (size_t)nd * sizeof *y);
  tfe_status st = TFE_FN(ad_consts_)(&K);
  if (!st && A->lay.dims[0] == 0) { /* empty products and sums */
    TFE__ADT(TFE_FN(ad_bvec_)(A, true, &y[0]));
    if (mode != 1) TFE__ADT(TFE_FN(ad_fill_)(&y[0].v, (TFE_T)1));
    if (mode == 2) TFE__ADT(TFE_FN(ad_bvec_)(A, true, &y[1]));
  } else if (!st) {
    st = TFE_FN(lu)(A, &perm, &L, &U);
    TFE_TY(view) du = TFE_FN(ad_diagv_)(&U.v);
    if (mode != 1) TFE__ADT(TFE_FN(ad_psign_)(&perm, A, &K, &sp));
    if (mode != 1) TFE__ADT(TFE_FN(ad_dprod_)(&du, A, &K, &sp, mode == 2, &y[0]));
    if (mode != 0) TFE__ADT(TFE_FN(ad_logabs_)(&du, A, &y[nd - 1]));
  }
  TFE_FN(tensor_release)(&L), TFE_FN(tensor_release)(&U), TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&sp);
  tfe_tensor_release_i64(&perm);
  if (st) TFE_FN(ad_rel_)(y, nd);
  return st;
}
/* c (a new (batch...) tensor) = Re g, plus, for slogdet_sign, - i Im(conj(gs) s). */
TFE_INTERNAL tfe_status TFE_FN(ad_det_re_)(const TFE_TY(view) *A, const TFE_TY(view) *g, const TFE_TY(view) *gs,
                                          const TFE_TY(view) *s, TFE_TY(tensor) *c) {
  TFE_TRY(TFE_FN(ad_bvec_)(A, true, c));
  tfe_status st = TFE_FN(ad_re_copy_)(&c->v, g);
#if TFE_CPLX
  TFE_TY(tensor) t = {0};
  if (gs) {
    TFE_TY(view) gc = *gs;
    gc.conj = !gc.conj;
    TFE_R m1 = -1;
    TFE__ADT(TFE_FN(ad_bvec_)(A, false, &t));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t.v, &gc, s));
    tfe_dyn ci = TFE_FN(ad_part_)(&c->v, 1), ti = TFE_FN(ad_part_)(&t.v, 1);
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_COPY, 0, &ci, &ti, NULL, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, &ci, NULL, NULL, &m1));
  }
  TFE_FN(tensor_release)(&t);
#else
  (void)gs; (void)s;
#endif
  if (st) TFE_FN(tensor_release)(c);
  return st;
}
/* Reverse: gA = c A^-H with c = gd conj(d) (det), Re gl (slogdet), Re gl - i Im(conj(gs) s)
 * (slogdet_sign); A^-1 by a solve against I (ad_inv_pr_dev_). */
TFE_INTERNAL tfe_status TFE_FN(ad_det_rr_dev_)(int mode, const TFE_TY(view) *A, const TFE_TY(view) *const *y,
                                              const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  TFE_TRY(TFE_FN(ad_dev_square_)(A, "tfe_rrule(det)"));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  TFE_TY(tensor) Ai = {0}, c = {0};
  memset(dx, 0, sizeof *dx);
  tfe_status st = TFE_FN(ad_inv_pr_dev_)(A, &Ai);
  if (mode == 0) {
    TFE_TY(view) dc = *y[0];
    dc.conj = TFE_CPLX ? !dc.conj : false;
    TFE__ADT(TFE_FN(ad_bvec_)(A, false, &c));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &c.v, dy[0], &dc));
  } else {
    TFE__ADT(TFE_FN(ad_det_re_)(A, dy[mode - 1], mode == 2 ? dy[0] : NULL, y[0], &c));
  }
  TFE__ADT(TFE_FN(ad_like_)(A, false, dx));
  if (!st) {
    TFE_TY(view) ah = TFE_FN(ad_tv_)(&Ai.v, true), cb = TFE_FN(ad_bbc_)(&c.v, A);
    st = TFE__ADZIP(TFE_BIN_MUL, &dx->v, &ah, &cb);
  }
  TFE_FN(tensor_release)(&Ai), TFE_FN(tensor_release)(&c);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}
/* Forward, t = tr(A^-1 dA) (one contraction): dd = d t (det), Re t (slogdet); slogdet_sign:
 * [i Im(t) s (0 for real kinds), Re t]. */
TFE_INTERNAL tfe_status TFE_FN(ad_det_fr_dev_)(int mode, const TFE_TY(view) *A, const TFE_TY(view) *dA,
                                              const TFE_TY(view) *const *y, TFE_TY(tensor) *dy) {
  TFE_TRY(TFE_FN(ad_dev_square_)(A, "tfe_frule(det)"));
  int nd = mode == 2 ? 2 : 1;
  memset(dy, 0, (size_t)nd * sizeof *dy);
  TFE_TY(tensor) Ai = {0}, t = {0};
  tfe_status st = TFE_FN(ad_bvec_)(A, true, &t);
  if (!st && TFE_FN(ad_numel_)(A) > 0) {
    int32_t la[TFE_MAX_RANK], lb[TFE_MAX_RANK], lc[TFE_MAX_RANK];
    la[0] = lb[1] = 1, la[1] = lb[0] = 0;
    for (int i = 2; i < A->lay.rank; i++) la[i] = lb[i] = lc[i - 2] = i;
    st = TFE_FN(ad_inv_pr_dev_)(A, &Ai);
    TFE__ADT(TFE_FN(ad_contract_)(1, &Ai.v, la, dA, lb, 0, &t.v, lc));
  }
  if (mode == 0) {
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t.v, &t.v, y[0]));
    if (!st) dy[0] = t, t = (TFE_TY(tensor)){0};
  }
  for (int i = 0; mode > 0 && i < nd; i++) TFE__ADT(TFE_FN(ad_bvec_)(A, true, &dy[i]));
  if (mode > 0) TFE__ADT(TFE_FN(ad_re_copy_)(&dy[nd - 1].v, &t.v));
#if TFE_CPLX
  if (mode == 2 && !st) { /* i Im(t) s */
    tfe_dyn oi = TFE_FN(ad_part_)(&dy[0].v, 1), ti = TFE_FN(ad_part_)(&t.v, 1);
    st = TFE_FN(ad_ewd_)(TFE_EW_COPY, 0, &oi, &ti, NULL, NULL);
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &dy[0].v, &dy[0].v, y[0]));
  }
#endif
  TFE_FN(tensor_release)(&Ai), TFE_FN(tensor_release)(&t);
  if (st) TFE_FN(ad_rel_)(dy, nd);
  return st;
}

/* ==== lq: the QR of A^H (A^H = Qq R: L = R^H, Q = Qq^H) and the device QR rules on it ========== */
/* A dense copy of v^H. */
TFE_INTERNAL tfe_status TFE_FN(ad_ctd_)(const TFE_TY(view) *v, TFE_TY(tensor) *t) {
  TFE_TY(view) h = TFE_FN(ad_tv_)(v, true);
  return TFE_FN(ad_dense_copy_)(&h, t);
}
TFE_INTERNAL tfe_status TFE_FN(ad_lq_pr_dev_)(const TFE_TY(view) *A, TFE_TY(tensor) *y) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_lq"));
  TFE_TY(tensor) t[3];
  memset(t, 0, sizeof t);
  memset(y, 0, 2 * sizeof *y);
  tfe_status st = TFE_FN(ad_ctd_)(A, &t[0]);
  TFE__ADT(TFE_FN(qr)(&t[0].v, false, &t[1], &t[2]));
  TFE__ADT(TFE_FN(ad_ctd_)(&t[2].v, &y[0]));
  TFE__ADT(TFE_FN(ad_ctd_)(&t[1].v, &y[1]));
  TFE_FN(ad_rel_)(t, 3);
  if (st) TFE_FN(ad_rel_)(y, 2);
  return st;
}
/* Reverse (d: [gL, gQ]): gA = (the QR rule of A^H with cotangents gQ^H, gL^H)^H. Forward (d: [dA]):
 * [dL, dQ] = [dR^H, dQq^H] of the QR rule of A^H with dA^H. */
TFE_INTERNAL tfe_status TFE_FN(ad_lq_dev_)(bool rev, const TFE_TY(view) *const *x, const TFE_TY(view) *const *d,
                                          const TFE_TY(view) *const *y, TFE_TY(tensor) *out) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(x[0], rev ? "tfe_rrule(lq)" : "tfe_frule(lq)"));
  enum { AH, QH, LH, D0, D1, R0, R1, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  memset(out, 0, (rev ? 1 : 2) * sizeof *out);
  tfe_status st = TFE_FN(ad_ctd_)(x[0], &t[AH]);
  TFE__ADT(TFE_FN(ad_ctd_)(y[1], &t[QH]));
  TFE__ADT(TFE_FN(ad_ctd_)(y[0], &t[LH]));
  TFE__ADT(TFE_FN(ad_ctd_)(d[rev ? 1 : 0], &t[D0]));
  if (rev) TFE__ADT(TFE_FN(ad_ctd_)(d[0], &t[D1]));
  const TFE_TY(view) *xq[1] = {&t[AH].v}, *yq[2] = {&t[QH].v, &t[LH].v}, *dq[2] = {&t[D0].v, &t[D1].v};
  if (rev) {
    TFE__ADT(TFE_FN(ad_qr_rr_dev_)(xq, yq, dq, &t[R0]));
    TFE__ADT(TFE_FN(ad_ctd_)(&t[R0].v, &out[0]));
  } else {
    TFE__ADT(TFE_FN(ad_qr_fr_dev_)(xq, dq, yq, &t[R0]));
    TFE__ADT(TFE_FN(ad_ctd_)(&t[R1].v, &out[0]));
    TFE__ADT(TFE_FN(ad_ctd_)(&t[R0].v, &out[1]));
  }
  TFE_FN(ad_rel_)(t, NT);
  if (st) TFE_FN(ad_rel_)(out, rev ? 1 : 2);
  return st;
}

/* ==== pinv: Y = V diag(inv) U^H from the device's SVD ============================================= */
/* M = S - c s_0 (rel) or S - c (new tensor; S: k singular values of this kind per item): the
 * thresholds of pinv and svd_trunc, whose signs the steps read. */
TFE_INTERNAL tfe_status TFE_FN(ad_thr_diff_)(const TFE_TY(view) *S, double c, bool rel, TFE_TY(tensor) *M) {
  TFE_TY(view) s0 = *S;
  s0.lay.strides[0] = 0; /* s_0 of each item along the k axis */
  TFE_T mc = (TFE_T)-c;
  tfe_status st = rel ? TFE_FN(ad_dense_copy_)(&s0, M) : TFE_FN(ad_like_)(S, false, M);
  if (!rel) TFE__ADT(TFE_FN(ad_fill_)(&M->v, (TFE_T)1));
  TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, &M->v, NULL, NULL, &mc, NULL));
  TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, &M->v, &M->v, S));
  if (st && M->st) TFE_FN(tensor_release)(M);
  return st;
}
/* inv_i = m_i / (s_i + 1 - m_i), m_i = [s_i > rcond s_0] (exact steps; 0 where m_i is 0, 1 / s_i
 * where it is 1), rcond = max(m, n) eps: the CPU's threshold. S of this kind (k, batch...). */
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_inv_)(const TFE_TY(view) *S, double rcond, TFE_TY(tensor) *inv) {
  TFE_TY(tensor) M = {0}, K = {0};
  tfe_status st = TFE_FN(ad_consts_)(&K);
  TFE__ADT(TFE_FN(ad_thr_diff_)(S, rcond, true, &M));
  TFE__ADT(TFE_FN(ad_like_)(S, false, inv));
  if (!st) {
    tfe_dyn mre = TFE_FN(ad_part_)(&M.v, 0), ire = TFE_FN(ad_part_)(&inv->v, 0), one = TFE_FN(ad_kd_)(&K, 1, &ire);
    st = TFE_FN(ad_step_)(&mre, &K);
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, &inv->v, S, &M.v));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_ADD, &ire, &ire, &one, NULL));
    TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, &inv->v, &M.v, &inv->v));
    if (st) TFE_FN(tensor_release)(inv);
  }
  TFE_FN(tensor_release)(&M), TFE_FN(tensor_release)(&K);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_pr_dev_)(const TFE_TY(view) *A, TFE_TY(tensor) *Y) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_pinv"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1];
  TFE_TRY(TFE_FN(ad_dmat_)(n, m, A, true, Y));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_OK;
  TFE_TY(tensor) f[3], inv = {0}, W = {0};
  memset(f, 0, sizeof f);
  tfe_status st = TFE_FN(ad_svd_full_)(A, f);
  TFE__ADT(TFE_FN(ad_pinv_inv_)(&f[1].v, (double)(m > n ? m : n) * (double)TFE_FN(la_eps_)(), &inv));
  if (!st) { /* W = Vh^H diag(inv), Y = W U^H */
    TFE_TY(view) V = TFE_FN(ad_tv_)(&f[2].v, true), ib = TFE_FN(ad_vbc_)(&inv.v, n, true);
    st = TFE_FN(ad_dense_copy_)(&V, &W);
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &W.v, &W.v, &ib));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &W.v, 'C', &f[0].v, 0, &Y->v));
  }
  TFE_FN(ad_rel_)(f, 3), TFE_FN(tensor_release)(&inv), TFE_FN(tensor_release)(&W);
  if (st) TFE_FN(tensor_release)(Y);
  return st;
}
/* Reverse (g = gY): gA = -Y^H gY Y^H + P2 - A Y P2 + P3 - P3 Y A, P2 = gY^H Y Y^H, P3 = Y^H Y gY^H.
 * Forward (g = dA): dY = -Y dA Y + Y Y^H R2 + R3 - Y A R3, R2 = dA^H - dA^H A Y, R3 = dA^H Y^H Y. */
TFE_INTERNAL tfe_status TFE_FN(ad_pinv_dev_)(bool rev, const TFE_TY(view) *A, const TFE_TY(view) *Y,
                                            const TFE_TY(view) *g, TFE_TY(tensor) *out) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, rev ? "tfe_rrule(pinv)" : "tfe_frule(pinv)"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1];
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(rev ? A : Y, true, out);
  TFE_TY(tensor) t[3];
  memset(t, 0, sizeof t);
  memset(out, 0, sizeof *out);
  const TFE_TY(view) *Tm = &t[0].v, *Tn = &t[1].v, *P = &t[2].v, *o = &out->v;
  tfe_status st = TFE_FN(ad_dmat_)(m, m, A, false, &t[0]);
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, false, &t[1]));
  TFE__ADT(TFE_FN(ad_like_)(rev ? A : Y, false, out));
  if (rev) {
    TFE__ADT(TFE_FN(ad_dmat_)(m, n, A, false, &t[2]));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', Y, 'N', g, 0, Tm));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Tm, 'C', Y, 0, o));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Y, 'C', Y, 0, Tn));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', g, 'N', Tn, 0, P)); /* P2 */
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Y, 'N', P, 0, Tn));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, o, o, P));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', A, 'N', Tn, 1, o));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', Y, 'N', Y, 0, Tm));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Tm, 'C', g, 0, P)); /* P3 */
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', P, 'N', Y, 0, Tm));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, o, o, P));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Tm, 'N', A, 1, o));
  } else {
    TFE__ADT(TFE_FN(ad_ctd_)(g, &t[2])); /* dA^H, then R2 */
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', g, 'N', Y, 0, Tm));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Y, 'N', Tm, 0, o));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', g, 'N', A, 0, Tn));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Tn, 'N', Y, 1, P));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Y, 'C', Y, 0, Tn));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', Tn, 'N', P, 1, o));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', Y, 'N', Y, 0, Tm));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', g, 'N', Tm, 0, P)); /* R3 */
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, o, o, P));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', A, 'N', P, 0, Tm));
    TFE__ADT(TFE_FN(ad_bmm_)(-1, 'N', Y, 'N', Tm, 1, o));
  }
  TFE_FN(ad_rel_)(t, 3);
  if (st) TFE_FN(tensor_release)(out);
  return st;
}

/* ==== lstsq: X = A^+ B (the device's pinv), rules through the pinv rules ===================== */
TFE_INTERNAL tfe_status TFE_FN(ad_lstsq_pr_dev_)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_lstsq"));
  TFE_TY(tensor) Y = {0};
  int64_t dims[TFE_MAX_RANK];
  memcpy(dims, B->lay.dims, sizeof dims);
  dims[0] = A->lay.dims[1];
  tfe_status st = TFE_FN(ad_pinv_pr_dev_)(A, &Y);
  TFE__ADT(TFE_FN(ad_zeros_)(B->lay.rank, dims, X)); /* zeros: a product over m = 0 terms writes nothing */
  if (!st) {
    TFE_TY(view) Bm = TFE_FN(ad_rmat_)(B, A), Xm = TFE_FN(ad_rmat_)(&X->v, A);
    st = TFE_FN(ad_bmm_)(1, 'N', &Y.v, 'N', &Bm, 0, &Xm);
    if (st) TFE_FN(tensor_release)(X);
  }
  TFE_FN(tensor_release)(&Y);
  return st;
}
/* Reverse (d: [gX]): gB = Y^H gX, gA = pinv rule(gX B^H). Forward (d: [dA, dB]): dX = dY B + Y dB,
 * dY the pinv rule of dA. */
TFE_INTERNAL tfe_status TFE_FN(ad_lstsq_dev_)(bool rev, const TFE_TY(view) *const *x, const TFE_TY(view) *const *d,
                                             TFE_TY(tensor) *out) {
  const TFE_TY(view) *A = x[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, rev ? "tfe_rrule(lstsq)" : "tfe_frule(lstsq)"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], dims[TFE_MAX_RANK];
  memcpy(dims, x[1]->lay.dims, sizeof dims);
  dims[0] = n;
  TFE_TY(tensor) Y = {0}, G = {0};
  memset(out, 0, (rev ? 2 : 1) * sizeof *out);
  TFE_TY(view) Bm = TFE_FN(ad_rmat_)(x[1], A), Dm = TFE_FN(ad_rmat_)(d[rev ? 0 : 1], A);
  tfe_status st = TFE_FN(ad_pinv_pr_dev_)(A, &Y);
  TFE__ADT(TFE_FN(ad_dmat_)(n, m, A, true, &G)); /* zeros: sums over n or m = 0 terms write nothing */
  if (rev) {
    TFE__ADT(TFE_FN(ad_like_)(x[1], true, &out[1]));
    if (!st) {
      TFE_TY(view) gBm = TFE_FN(ad_rmat_)(&out[1].v, A);
      st = TFE_FN(ad_bmm_)(1, 'C', &Y.v, 'N', &Dm, 0, &gBm);
    }
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &Dm, 'C', &Bm, 0, &G.v));
    TFE__ADT(TFE_FN(ad_pinv_dev_)(true, A, &Y.v, &G.v, &out[0]));
  } else {
    TFE_TY(tensor) dY = {0};
    TFE__ADT(TFE_FN(ad_pinv_dev_)(false, A, &Y.v, d[0], &dY));
    TFE__ADT(TFE_FN(ad_zeros_)(x[1]->lay.rank, dims, out));
    if (!st) {
      TFE_TY(view) Xm = TFE_FN(ad_rmat_)(&out->v, A);
      st = TFE_FN(ad_bmm_)(1, 'N', &dY.v, 'N', &Bm, 0, &Xm);
      TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &Y.v, 'N', &Dm, 1, &Xm));
    }
    TFE_FN(tensor_release)(&dY);
  }
  TFE_FN(tensor_release)(&Y), TFE_FN(tensor_release)(&G);
  if (st) TFE_FN(ad_rel_)(out, rev ? 2 : 1);
  return st;
}

/* ==== polar: Up = U Vh, P = Vh^H S Vh from the device's SVD; rules through the SVD rules ======== */
/* diag(s) Vh into the new tensor SV (s: k values of this kind per item). */
TFE_INTERNAL tfe_status TFE_FN(ad_svh_)(const TFE_TY(view) *s, const TFE_TY(view) *Vh, TFE_TY(tensor) *SV) {
  TFE_TY(view) sb = TFE_FN(ad_vbc_)(s, Vh->lay.dims[1], false);
  TFE_TRY(TFE_FN(ad_like_)(Vh, false, SV));
  tfe_status st = TFE__ADZIP(TFE_BIN_MUL, &SV->v, Vh, &sb);
  if (st) TFE_FN(tensor_release)(SV);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_polar_pr_dev_)(const TFE_TY(view) *A, TFE_TY(tensor) *y) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_polar"));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1];
  TFE_TY(tensor) f[3], SV = {0};
  memset(f, 0, sizeof f);
  memset(y, 0, 2 * sizeof *y);
  tfe_status st = TFE_FN(ad_dmat_)(m, n, A, true, &y[0]);
  TFE__ADT(TFE_FN(ad_dmat_)(n, n, A, true, &y[1]));
  if (!st && TFE_FN(ad_numel_)(A) > 0) {
    st = TFE_FN(ad_svd_full_)(A, f);
    TFE__ADT(TFE_FN(ad_svh_)(&f[1].v, &f[2].v, &SV));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &f[0].v, 'N', &f[2].v, 0, &y[0].v));
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', &f[2].v, 'N', &SV.v, 0, &y[1].v));
  }
  TFE_FN(ad_rel_)(f, 3), TFE_FN(tensor_release)(&SV);
  if (st) TFE_FN(ad_rel_)(y, 2);
  return st;
}
/* Re sum_j X_ij conj(Y_ij) (k, batch...) into the zeroed real parts of d (X, Y: k x n batches). */
TFE_INTERNAL tfe_status TFE_FN(ad_rowdot_)(const TFE_TY(view) *X, const TFE_TY(view) *Y, const TFE_TY(view) *d) {
  int32_t la[TFE_MAX_RANK], lc[TFE_MAX_RANK];
  la[0] = lc[0] = 0, la[1] = 1;
  for (int i = 2; i < X->lay.rank; i++) la[i] = lc[i - 1] = i;
  TFE_TY(view) yc = *Y;
  yc.conj = TFE_CPLX ? !Y->conj : false;
  TFE_TY(tensor) t = {0};
  tfe_status st = TFE_FN(ad_like_)(d, false, &t);
  TFE__ADT(TFE_FN(ad_contract_)(1, X, la, &yc, la, 0, &t.v, lc));
  TFE__ADT(TFE_FN(ad_re_copy_)(d, &t.v));
  TFE_FN(tensor_release)(&t);
  return st;
}
/* Reverse: gU = gUp Vh^H, gVh = U^H gUp + S Vh (gP + gP^H), gS = Re diag(Vh gP Vh^H), then the
 * device SVD rule (ad_svd_rr_dev_). */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_rr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dy, TFE_TY(tensor) *dx) {
  const TFE_TY(view) *A = x[0], *gUp = dy[0], *gP = dy[1];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_rrule(polar)"));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, dx);
  enum { U_, S_, V_, GU, GS, GV, H_, SV, T_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  memset(dx, 0, sizeof *dx);
  tfe_status st = TFE_FN(ad_svd_full_)(A, t);
  TFE__ADT(TFE_FN(ad_like_)(&t[U_].v, false, &t[GU]));
  TFE__ADT(TFE_FN(ad_like_)(&t[S_].v, true, &t[GS]));
  TFE__ADT(TFE_FN(ad_like_)(&t[V_].v, false, &t[GV]));
  TFE__ADT(TFE_FN(ad_dev_herm_)(gP, &t[H_])); /* (gP + gP^H) / 2 */
  TFE__ADT(TFE_FN(ad_svh_)(&t[S_].v, &t[V_].v, &t[SV]));
  TFE__ADT(TFE_FN(ad_like_)(&t[V_].v, false, &t[T_]));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', gUp, 'C', &t[V_].v, 0, &t[GU].v));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', &t[U_].v, 'N', gUp, 0, &t[GV].v));
  TFE__ADT(TFE_FN(ad_bmm_)(2, 'N', &t[SV].v, 'N', &t[H_].v, 1, &t[GV].v));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &t[V_].v, 'N', gP, 0, &t[T_].v));
  TFE__ADT(TFE_FN(ad_rowdot_)(&t[T_].v, &t[V_].v, &t[GS].v));
  if (!st) {
    const TFE_TY(view) *fy[3] = {&t[U_].v, &t[S_].v, &t[V_].v}, *gy[3] = {&t[GU].v, &t[GS].v, &t[GV].v};
    st = TFE_FN(ad_svd_rr_dev_)(p, x, fy, gy, dx);
  }
  TFE_FN(ad_rel_)(t, NT);
  return st;
}
/* Forward: the device SVD rule's dU, dS, dVh, then dUp = dU Vh + U dVh, dP = dVh^H S Vh + (S Vh)^H dVh
 * + Vh^H dS Vh. */
TFE_INTERNAL tfe_status TFE_FN(ad_polar_fr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                TFE_TY(tensor) *dy) {
  const TFE_TY(view) *A = x[0];
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_frule(polar)"));
  TFE_TRY(TFE_FN(ad_zero2_)(y, dy));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_OK;
  tfe_status st = TFE_OK;
  TFE_TY(tensor) f[3], d[3], SV = {0}, DV = {0};
  memset(f, 0, sizeof f);
  memset(d, 0, sizeof d);
  st = TFE_FN(ad_svd_full_)(A, f);
  if (!st) {
    const TFE_TY(view) *fy[3] = {&f[0].v, &f[1].v, &f[2].v};
    st = TFE_FN(ad_svd_fr_dev_)(p, x, dx, fy, d);
  }
  TFE__ADT(TFE_FN(ad_svh_)(&f[1].v, &f[2].v, &SV));
  TFE__ADT(TFE_FN(ad_svh_)(&d[1].v, &f[2].v, &DV));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &d[0].v, 'N', &f[2].v, 0, &dy[0].v));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &f[0].v, 'N', &d[2].v, 1, &dy[0].v));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', &d[2].v, 'N', &SV.v, 0, &dy[1].v));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', &SV.v, 'N', &d[2].v, 1, &dy[1].v));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'C', &f[2].v, 'N', &DV.v, 1, &dy[1].v));
  TFE_FN(ad_rel_)(f, 3), TFE_FN(ad_rel_)(d, 3), TFE_FN(tensor_release)(&SV), TFE_FN(tensor_release)(&DV);
  if (st) TFE_FN(ad_rel_)(dy, 2);
  return st;
}

/* ==== norms: Frobenius, nuclear, spectral, 1, inf ============================================= */
TFE_INTERNAL bool TFE_FN(ad_norm_dev_ok_)(const tfe_ad_params *p) {
  return p->norm >= TFE_NORM_FRO && p->norm <= TFE_NORM_INF;
}
/* The column (norm 1) or row (inf: rows) sums of |a_ij| into the real parts of the new (l, batch...)
 * tensor c, and their largest into the real part of the new zeroed (batch...) tensor mx (the slot
 * has no MAX of complex kinds: real parts). */
TFE_INTERNAL tfe_status TFE_FN(ad_absums_)(const TFE_TY(view) *A, bool rows, TFE_TY(tensor) *c, TFE_TY(tensor) *mx) {
  int64_t d[TFE_MAX_RANK];
  d[0] = A->lay.dims[rows ? 0 : 1];
  for (int i = 2; i < A->lay.rank; i++) d[i - 1] = A->lay.dims[i];
  TFE_TRY(TFE_FN(ad_empty_)(A->lay.rank - 1, d, c));
  tfe_status st = TFE_FN(ad_red_)(TFE_RED_NORM1, &c->v, A, 1, (const int[]){rows ? 1 : 0});
  TFE__ADT(TFE_FN(ad_bvec_)(A, true, mx));
  if (!st) {
    tfe_dyn cr = TFE_FN(ad_part_)(&c->v, 0), mr = TFE_FN(ad_part_)(&mx->v, 0);
    st = TFE_FN(ad_redd_)(TFE_RED_MAX, &mr, &cr, 1, (const int[]){0});
    if (st) TFE_FN(tensor_release)(mx);
  }
  if (st) TFE_FN(tensor_release)(c);
  return st;
}
/* The (batch...) view v seen as (l, batch...) (stride 0 along the new axis 0). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_lead_)(const TFE_TY(view) *v, int64_t l) {
  TFE_TY(view) t = *v;
  t.lay.rank = v->lay.rank + 1;
  t.lay.dims[0] = l, t.lay.strides[0] = 0;
  for (int i = 0; i < v->lay.rank; i++) t.lay.dims[i + 1] = v->lay.dims[i], t.lay.strides[i + 1] = v->lay.strides[i];
  return t;
}
/* f_j = w_j [no w_l = 1 before j], w_j = [c_j >= max c] (exact steps): the first largest column (or
 * row), the CPU's tie rule; into the real parts of the new zeroed (l, batch...) tensor F. */
TFE_INTERNAL tfe_status TFE_FN(ad_first_max_)(const TFE_TY(tensor) *c, const TFE_TY(tensor) *mx,
                                             const TFE_TY(tensor) *K, TFE_TY(tensor) *F) {
  int64_t l = c->v.lay.dims[0];
  TFE_TY(tensor) W = {0}, E = {0}, mb = {0};
  TFE_TY(view) mv = TFE_FN(ad_lead_)(&mx->v, l), M = c->v;
  tfe_status st = TFE_FN(ad_like_)(&c->v, false, &W);
  TFE__ADT(TFE_FN(ad_like_)(&c->v, true, F));
  if (!st) {
    TFE_TY(view) wl = TFE_FN(ad_vbc_)(&W.v, l, true); /* w_l' along dim 1 */
    st = TFE_FN(ad_like_)(&wl, false, &E);
    TFE__ADT(TFE_FN(ad_mask_)(1, &E.v, &mb, &M)); /* l' < j */
    tfe_dyn w = TFE_FN(ad_part_)(&W.v, 0), cr = TFE_FN(ad_part_)(&c->v, 0), m = TFE_FN(ad_part_)(&mv, 0),
            one = TFE_FN(ad_kd_)(K, 1, &w), er = TFE_FN(ad_part_)(&E.v, 0), mr = TFE_FN(ad_part_)(&M, 0),
            f = TFE_FN(ad_part_)(&F->v, 0), wb = TFE_FN(ad_part_)(&wl, 0);
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &w, &m, &cr, NULL));
    TFE__ADT(TFE_FN(ad_step_)(&w, K)); /* [c_j < max] */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &w, &one, &w, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &er, &wb, &mr, NULL));
    TFE__ADT(TFE_FN(ad_redd_)(TFE_RED_SUM, &f, &er, 1, (const int[]){1})); /* winners before j */
    TFE__ADT(TFE_FN(ad_step_)(&f, K));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &f, &one, &f, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &f, &f, &w, NULL));
  }
  TFE_FN(tensor_release)(&W), TFE_FN(tensor_release)(&E), TFE_FN(tensor_release)(&mb);
  if (st) TFE_FN(tensor_release)(F);
  return st;
}
/* Frobenius: the slot's NORM2 over both matrix axes; nuclear: the sum of the device's singular
 * values; spectral: the first (largest) one; 0 where the matrices are empty. */
TFE_INTERNAL tfe_status TFE_FN(ad_norm_pr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *A, TFE_TY(tensor) *y) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, "tfe_norm"));
  TFE_TRY(TFE_FN(ad_bvec_)(A, true, y));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_OK;
  if (p->norm == TFE_NORM_1 || p->norm == TFE_NORM_INF) {
    TFE_TY(tensor) c = {0};
    TFE_FN(tensor_release)(y);
    tfe_status st = TFE_FN(ad_absums_)(A, p->norm == TFE_NORM_INF, &c, y);
    TFE_FN(tensor_release)(&c);
    return st;
  }
  if (p->norm == TFE_NORM_FRO) {
    tfe_status st = TFE_FN(ad_red_)(TFE_RED_NORM2, &y->v, A, 2, (const int[]){0, 1});
    if (st) TFE_FN(tensor_release)(y);
    return st;
  }
  TFE_TY(tensor) f[3];
  memset(f, 0, sizeof f);
  tfe_status st = TFE_FN(ad_svd_full_)(A, f);
  if (!st && p->norm == TFE_NORM_NUC) st = TFE_FN(ad_red_)(TFE_RED_SUM, &y->v, &f[1].v, 1, (const int[]){0});
  if (!st && p->norm == TFE_NORM_2) {
    TFE_TY(view) s0 = f[1].v; /* s_0 of each item: the batch axes of S */
    s0.lay.rank = f[1].v.lay.rank - 1;
    for (int i = 0; i < s0.lay.rank; i++)
      s0.lay.dims[i] = f[1].v.lay.dims[i + 1], s0.lay.strides[i] = f[1].v.lay.strides[i + 1];
    st = TFE_FN(ad_copy_)(&y->v, &s0);
  }
  TFE_FN(ad_rel_)(f, 3);
  if (st) TFE_FN(tensor_release)(y);
  return st;
}
/* sign(a) (the phase; ad_phase_) on the first largest column (norm 1) or row (inf), zero elsewhere. */
TFE_INTERNAL tfe_status TFE_FN(ad_norm1_dir_)(const TFE_TY(view) *A, bool rows, TFE_TY(tensor) *D) {
  TFE_TY(tensor) K = {0}, c = {0}, mx = {0}, F = {0};
  memset(D, 0, sizeof *D);
  tfe_status st = TFE_FN(ad_consts_)(&K);
  TFE__ADT(TFE_FN(ad_absums_)(A, rows, &c, &mx));
  TFE__ADT(TFE_FN(ad_first_max_)(&c, &mx, &K, &F));
  TFE__ADT(TFE_FN(ad_phase_)(A, &K, D));
  if (!st) {
    TFE_TY(view) fb = TFE_FN(ad_vbc_)(&F.v, A->lay.dims[rows ? 1 : 0], !rows);
    st = TFE__ADZIP(TFE_BIN_MUL, &D->v, &D->v, &fb);
    if (st) TFE_FN(tensor_release)(D);
  }
  TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&c), TFE_FN(tensor_release)(&mx), TFE_FN(tensor_release)(&F);
  return st;
}
/* The direction D (norm' = Re<D, dA>): A / max(|A|, tiny) (0 for a zero matrix, as the CPU's),
 * U Vh (nuclear), u_1 v_1^H (spectral), ad_norm1_dir_ (1, inf). */
TFE_INTERNAL tfe_status TFE_FN(ad_norm_dir_dev_)(const tfe_ad_params *p, const TFE_TY(view) *A, const TFE_TY(view) *y,
                                                TFE_TY(tensor) *D) {
  int64_t m = A->lay.dims[0], n = A->lay.dims[1];
  if (p->norm == TFE_NORM_1 || p->norm == TFE_NORM_INF) return TFE_FN(ad_norm1_dir_)(A, p->norm == TFE_NORM_INF, D);
  TFE_TRY(TFE_FN(ad_like_)(A, false, D));
  TFE_TY(tensor) f[3], K = {0}, nv = {0};
  memset(f, 0, sizeof f);
  tfe_status st = TFE_OK;
  if (p->norm == TFE_NORM_FRO) {
    st = TFE_FN(ad_consts_)(&K);
    TFE__ADT(TFE_FN(ad_dense_copy_)(y, &nv));
    if (!st) {
      tfe_dyn r = TFE_FN(ad_part_)(&nv.v, 0), t = TFE_FN(ad_kd_)(&K, 2, &r);
      TFE_TY(view) nb = TFE_FN(ad_bbc_)(&nv.v, A);
      st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, &r, &r, &t, NULL);
      TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, &D->v, A, &nb));
    }
  } else {
    st = TFE_FN(ad_svd_full_)(A, f);
    TFE_TY(view) U = f[0].v, Vh = f[2].v;
    if (p->norm == TFE_NORM_2) U = TFE_FN(ad_blk_)(&f[0].v, 0, m, 0, 1), Vh = TFE_FN(ad_blk_)(&f[2].v, 0, 1, 0, n);
    TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', &U, 'N', &Vh, 0, &D->v));
  }
  TFE_FN(ad_rel_)(f, 3), TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&nv);
  if (st) TFE_FN(tensor_release)(D);
  return st;
}
/* Reverse: gA = Re(g) D; forward: dy = Re<D, dA> per item. Empty matrices: zeros. */
TFE_INTERNAL tfe_status TFE_FN(ad_norm_dev_)(bool rev, const tfe_ad_params *p, const TFE_TY(view) *A,
                                            const TFE_TY(view) *y, const TFE_TY(view) *g, TFE_TY(tensor) *out) {
  TFE_TRY(TFE_FN(ad_dev_rank_)(A, rev ? "tfe_rrule(norm)" : "tfe_frule(norm)"));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(rev ? A : y, true, out);
  TFE_TY(tensor) D = {0}, c = {0};
  memset(out, 0, sizeof *out);
  tfe_status st = TFE_FN(ad_norm_dir_dev_)(p, A, y, &D);
  if (rev) {
    TFE__ADT(TFE_FN(ad_det_re_)(A, g, NULL, NULL, &c));
    TFE__ADT(TFE_FN(ad_like_)(A, false, out));
    if (!st) {
      TFE_TY(view) cb = TFE_FN(ad_bbc_)(&c.v, A);
      st = TFE__ADZIP(TFE_BIN_MUL, &out->v, &D.v, &cb);
    }
  } else {
    int32_t la[TFE_MAX_RANK], lc[TFE_MAX_RANK];
    for (int i = 0; i < A->lay.rank; i++) la[i] = i;
    for (int i = 2; i < A->lay.rank; i++) lc[i - 2] = i;
    TFE_TY(view) dc = D.v;
    dc.conj = TFE_CPLX ? true : false;
    TFE__ADT(TFE_FN(ad_bvec_)(A, false, &c));
    TFE__ADT(TFE_FN(ad_contract_)(1, &dc, la, g, la, 0, &c.v, lc));
    TFE__ADT(TFE_FN(ad_det_re_)(A, &c.v, NULL, NULL, out));
  }
  TFE_FN(tensor_release)(&D), TFE_FN(tensor_release)(&c);
  if (st) TFE_FN(tensor_release)(out);
  return st;
}

/* ==== svd_trunc (one matrix): the device's thin SVD cut to rank r; the rules pad to the full thin
 * SVD (the discarded vectors enter the kept ones' derivative) and run the device SVD rules ====== */
/* The kept rank: min(k, max_rank) without a cutoff (known without reading the values); with a
 * cutoff, the count of s_i > thr (s descending: a prefix) computed on the device and read back,
 * one number (the outputs' shapes depend on it); at least 1 (the CPU's la_trunc_rank_). */
TFE_INTERNAL tfe_status TFE_FN(ad_trunc_rank_)(const tfe_trunc *tr, const TFE_TY(view) *S, int64_t *r) {
  int64_t k = S->lay.dims[0];
  *r = tr->max_rank > 0 && tr->max_rank < k ? tr->max_rank : k;
  if (tr->cutoff > 0 && k > 0) {
    TFE_TY(tensor) M = {0}, K = {0}, c = {0};
    TFE_T cnt = 0;
    int64_t one = 1;
    tfe_status st = TFE_FN(ad_consts_)(&K);
    TFE__ADT(TFE_FN(ad_thr_diff_)(S, tr->cutoff, tr->relative, &M));
    TFE__ADT(TFE_FN(ad_empty_)(1, &one, &c));
    if (!st) {
      tfe_dyn mr = TFE_FN(ad_part_)(&M.v, 0), cr = TFE_FN(ad_part_)(&c.v, 0);
      cr.lay.rank = 0;
      st = TFE_FN(ad_step_)(&mr, &K); /* [s_i > thr] */
      TFE__ADT(TFE_FN(ad_redd_)(TFE_RED_SUM, &cr, &mr, -1, NULL));
      TFE__ADT(TFE__AD_BE->mem_copy(TFE__AD_BE, &cnt, TFE_HOST, c.v.data, TFE__AD_BE->space, sizeof(TFE_R)));
    }
    TFE_FN(tensor_release)(&M), TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&c);
    TFE_TRY(st);
    int64_t n = (int64_t)TFE_FN(ad_re_)(cnt);
    if (n < *r) *r = n;
  }
  if (*r == 0 && k > 0) *r = 1;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_svdt_pr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *A, TFE_TY(tensor) *y) {
  if (A->lay.rank != 2)
    return tfe__fail(TFE_ERR_RANK, "tfe_ad_svd_trunc", "needs one matrix, got rank %d", A->lay.rank);
  if (p->trunc.max_rank < 0 || !(p->trunc.cutoff >= 0))
    return tfe__fail(TFE_ERR_INVALID, "tfe_svd_trunc", "max_rank %lld and cutoff %g must be >= 0",
                     (long long)p->trunc.max_rank, p->trunc.cutoff);
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], r = 0;
  TFE_TY(tensor) f[3];
  memset(f, 0, sizeof f);
  memset(y, 0, 3 * sizeof *y);
  tfe_status st = TFE_FN(ad_svd_full_)(A, f);
  TFE__ADT(TFE_FN(ad_trunc_rank_)(&p->trunc, &f[1].v, &r));
  if (!st) {
    TFE_TY(view) u = TFE_FN(ad_blk_)(&f[0].v, 0, m, 0, r), v = TFE_FN(ad_blk_)(&f[2].v, 0, r, 0, n), s = f[1].v;
    s.lay.dims[0] = r;
    st = TFE_FN(ad_dense_copy_)(&u, &y[0]);
    TFE__ADT(TFE_FN(ad_dense_copy_)(&s, &y[1]));
    TFE__ADT(TFE_FN(ad_dense_copy_)(&v, &y[2]));
  }
  TFE_FN(ad_rel_)(f, 3);
  if (st) TFE_FN(ad_rel_)(y, 3);
  return st;
}
/* Reverse: the cotangents of the kept part zero-padded to the full thin SVD's shapes, then the
 * device SVD rule. Forward: the device SVD rule's tangents cut to the kept part. */
TFE_INTERNAL tfe_status TFE_FN(ad_svdt_dev_)(bool rev, const tfe_ad_params *p, const TFE_TY(view) *const *x,
                                            const TFE_TY(view) *const *d, const TFE_TY(view) *const *y,
                                            TFE_TY(tensor) *out) {
  const TFE_TY(view) *A = x[0];
  if (A->lay.rank != 2)
    return tfe__fail(TFE_ERR_RANK, "tfe_ad_svd_trunc", "needs one matrix, got rank %d", A->lay.rank);
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], r = y[1]->lay.dims[0];
  TFE_TY(tensor) f[3], g[3];
  memset(f, 0, sizeof f);
  memset(g, 0, sizeof g);
  memset(out, 0, (rev ? 1 : 3) * sizeof *out);
  tfe_status st = TFE_FN(ad_svd_full_)(A, f);
  const TFE_TY(view) *fy[3] = {&f[0].v, &f[1].v, &f[2].v}, *gy[3] = {&g[0].v, &g[1].v, &g[2].v};
  TFE_TY(view) part[3]; /* the kept blocks of the full factors' shapes, in g */
  for (int i = 0; i < 3; i++) TFE__ADT(rev ? TFE_FN(ad_like_)(fy[i], true, &g[i]) : TFE_OK);
  if (!st && !rev) st = TFE_FN(ad_svd_fr_dev_)(p, x, d, fy, g);
  if (!st) {
    part[0] = TFE_FN(ad_blk_)(&g[0].v, 0, m, 0, r), part[2] = TFE_FN(ad_blk_)(&g[2].v, 0, r, 0, n), part[1] = g[1].v;
    part[1].lay.dims[0] = r;
  }
  for (int i = 0; i < 3; i++)
    TFE__ADT(rev ? TFE_FN(ad_copy_)(&part[i], d[i]) : TFE_FN(ad_dense_copy_)(&part[i], &out[i]));
  if (rev) TFE__ADT(TFE_FN(ad_svd_rr_dev_)(p, x, fy, gy, out));
  TFE_FN(ad_rel_)(f, 3), TFE_FN(ad_rel_)(g, 3);
  if (st) TFE_FN(ad_rel_)(out, rev ? 1 : 3);
  return st;
}

/* ==== expm: scaling and squaring with the degree-13 Pade approximant (la_expm1_), batched =========
 * The number of squarings of each item, sq = ceil(log2(|A|_1 / theta_13)), decides a loop count on
 * the host: the 1-norms (nb numbers) are read back, and the scales 2^-sq and the 0 / 1 masks of the
 * squarings each item takes ([sq > s] and 1 - it) go up in one transfer. An item with fewer
 * squarings than the batch's most keeps its value through the others: X = m X^2 + (1 - m) X
 * (exact: one term is zero). The rules: the top-right block of the exp of [[M, E], [0, M]]. */
/* d = c[0] P + c[1] Q + c[2] R + c[3] I (the slot's AXPBY; the identity: K's one on the diagonal). */
TFE_INTERNAL tfe_status TFE_FN(ad_pade_lin_)(const TFE_TY(view) *d, const double *c, const TFE_TY(view) *P,
                                            const TFE_TY(view) *Q, const TFE_TY(view) *R, const TFE_TY(tensor) *K) {
  TFE_T a[4] = {(TFE_T)c[0], (TFE_T)c[1], (TFE_T)c[2], (TFE_T)c[3]}, one = 1, zero = 0;
  TFE_TY(view) dg = TFE_FN(ad_diagv_)(d), ones = TFE_FN(ad_cbc_)(K, 1, &dg);
  tfe_status st = TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, d, P, NULL, &a[0], &zero);
  TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, d, Q, NULL, &a[1], &one));
  TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, d, R, NULL, &a[2], &one));
  if (c[3] != 0) TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &dg, &ones, NULL, &a[3], &one));
  return st;
}
/* The squarings of each item (the CPU's rule, from its 1-norm read back) into the host tensor h of
 * nb (1 + 2 smax) values: the scales 2^-sq, then per squaring s the masks [sq > s] and 1 - [sq > s]. */
TFE_INTERNAL tfe_status TFE_FN(ad_expm_plan_)(const TFE_TY(view) *A, TFE_TY(tensor) *h, int *smax) {
  TFE_TY(tensor) c = {0}, mx = {0}, hm = {0};
  tfe_status st = TFE_FN(ad_absums_)(A, false, &c, &mx);
  TFE__ADT(TFE_FN(ad_down_)(TFE__AD_BE, &mx.v, &hm));
  int64_t nb = TFE_FN(ad_numel_)(&mx.v);
  int sq[1024], *sqp = nb <= 1024 ? sq : (int *)tfe__calloc((size_t)nb, sizeof(int));
  if (!st && !sqp) st = TFE_ERR_ALLOC;
  *smax = 0;
  for (int64_t b = 0; !st && b < nb; b++) {
    double norm1 = (double)TFE_FN(ad_re_)(hm.v.data[b]), th = 5.371920351148152;
    if (isnan(norm1) || isinf(norm1)) st = tfe__fail(TFE_ERR_INVALID, "tfe_expm", "matrix has a NaN or Inf entry");
    sqp[b] = norm1 > th ? (int)ceil(log2(norm1 / th)) : 0;
    if (sqp[b] > *smax) *smax = sqp[b];
  }
  int64_t len = nb * (1 + 2 * (int64_t)*smax);
  TFE__ADT(TFE_FN(empty)(h, 1, &len, TFE_COLMAJOR)); /* host memory */
  for (int64_t b = 0; !st && b < nb; b++) {
    h->v.data[b] = (TFE_T)ldexp(1.0, -sqp[b]);
    for (int s = 0; s < *smax; s++) {
      h->v.data[nb * (1 + 2 * s) + b] = (TFE_T)(sqp[b] > s);
      h->v.data[nb * (2 + 2 * s) + b] = (TFE_T)(sqp[b] <= s);
    }
  }
  if (sqp != sq) tfe__free(sqp);
  TFE_FN(tensor_release)(&c), TFE_FN(tensor_release)(&mx), TFE_FN(tensor_release)(&hm);
  return st;
}
/* Element block i of the uploaded plan P as a (batch...) vector of the matrix batch A. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_plan_at_)(const TFE_TY(tensor) *P, int64_t i, const TFE_TY(view) *A) {
  TFE_TY(view) v = P->v;
  (void)tfe_layout_dense(A->lay.rank - 2, A->lay.dims + 2, TFE_COLMAJOR, &v.lay);
  v.lay.offset = P->v.lay.offset + i * TFE_FN(ad_numel_)(&v);
  return TFE_FN(ad_bbc_)(&v, A);
}
/* The Pade step: V^-1 U-part (la_expm1_'s formulas) of the scaled a into the new tensor X. */
TFE_INTERNAL tfe_status TFE_FN(ad_pade13_)(const TFE_TY(view) *a, const TFE_TY(tensor) *K, TFE_TY(tensor) *X) {
  int64_t n = a->lay.dims[0];
  double c[14];
  c[0] = 1;
  for (int j = 0; j < 13; j++) c[j + 1] = c[j] * (13 - j) / ((26.0 - j) * (j + 1));
  enum { A2, A4, A6, T_, X_, U_, V_, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  tfe_status st = TFE_OK;
  for (int i = 0; i < NT; i++) TFE__ADT(TFE_FN(ad_dmat_)(n, n, a, false, &t[i]));
  const TFE_TY(view) *a2 = &t[A2].v, *a4 = &t[A4].v, *a6 = &t[A6].v, *tt = &t[T_].v, *x = &t[X_].v, *u = &t[U_].v,
                     *v = &t[V_].v;
  const double cx[4] = {c[7], c[5], c[3], c[1]}, ct[4] = {c[13], c[11], c[9], 0}, cv[4] = {c[6], c[4], c[2], c[0]},
               cu[4] = {c[12], c[10], c[8], 0};
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', a, 'N', a, 0, a2));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', a2, 'N', a2, 0, a4));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', a4, 'N', a2, 0, a6));
  TFE__ADT(TFE_FN(ad_pade_lin_)(tt, ct, a6, a4, a2, K));
  TFE__ADT(TFE_FN(ad_pade_lin_)(x, cx, a6, a4, a2, K));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', a6, 'N', tt, 1, x));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', a, 'N', x, 0, u)); /* U */
  TFE__ADT(TFE_FN(ad_pade_lin_)(tt, cu, a6, a4, a2, K));
  TFE__ADT(TFE_FN(ad_pade_lin_)(v, cv, a6, a4, a2, K));
  TFE__ADT(TFE_FN(ad_bmm_)(1, 'N', a6, 'N', tt, 1, v)); /* V */
  TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, x, v, u));
  TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, v, v, u));
  TFE__ADT(TFE_FN(solve)(v, x, X)); /* (V - U)^-1 (V + U) */
  TFE_FN(ad_rel_)(t, NT);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_expm_pr_dev_)(const TFE_TY(view) *A, TFE_TY(tensor) *X) {
  TFE_TRY(TFE_FN(ad_dev_square_)(A, "tfe_expm"));
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, X);
  TFE_TY(tensor) K = {0}, h = {0}, P = {0}, a = {0}, X2 = {0};
  int smax = 0;
  memset(X, 0, sizeof *X);
  tfe_status st = TFE_FN(ad_consts_)(&K);
  TFE__ADT(TFE_FN(ad_expm_plan_)(A, &h, &smax));
  TFE__ADT(TFE_FN(ad_up_)(TFE__AD_BE, &h, &P)); /* h released */
  TFE__ADT(TFE_FN(ad_like_)(A, false, &a));
  if (!st) {
    TFE_TY(view) sc = TFE_FN(ad_plan_at_)(&P, 0, A);
    st = TFE__ADZIP(TFE_BIN_MUL, &a.v, A, &sc);
  }
  TFE__ADT(TFE_FN(ad_pade13_)(&a.v, &K, X));
  TFE__ADT(TFE_FN(ad_like_)(A, false, &X2));
  for (int s = 0; !st && s < smax; s++) { /* X = m X^2 + (1 - m) X */
    TFE_TY(view) m = TFE_FN(ad_plan_at_)(&P, 1 + 2 * s, A), mn = TFE_FN(ad_plan_at_)(&P, 2 + 2 * s, A);
    st = TFE_FN(ad_bmm_)(1, 'N', &X->v, 'N', &X->v, 0, &X2.v);
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &X2.v, &X2.v, &m));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &X->v, &X->v, &mn));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, &X->v, &X->v, &X2.v));
  }
  TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&h), TFE_FN(tensor_release)(&P), TFE_FN(tensor_release)(&a),
      TFE_FN(tensor_release)(&X2);
  if (st) TFE_FN(tensor_release)(X);
  return st;
}
/* L(M, E), the top-right block of exp([[M, E], [0, M]]): forward M = A, E = dA; reverse M = A^H,
 * E = gX (solve_rules_tpl.h, ad_expm_both_). */
TFE_INTERNAL tfe_status TFE_FN(ad_expm_dev_)(bool rev, const TFE_TY(view) *A, const TFE_TY(view) *E,
                                             TFE_TY(tensor) *out) {
  TFE_TRY(TFE_FN(ad_dev_square_)(A, rev ? "tfe_rrule(expm)" : "tfe_frule(expm)"));
  int64_t n = A->lay.dims[0];
  if (TFE_FN(ad_numel_)(A) == 0) return TFE_FN(ad_like_)(A, true, out);
  TFE_TY(tensor) B = {0}, X = {0};
  TFE_TY(view) M = rev ? TFE_FN(ad_tv_)(A, true) : *A;
  memset(out, 0, sizeof *out);
  tfe_status st = TFE_FN(ad_dmat_)(2 * n, 2 * n, A, true, &B);
  if (!st) {
    TFE_TY(view) b00 = TFE_FN(ad_blk_)(&B.v, 0, n, 0, n), b11 = TFE_FN(ad_blk_)(&B.v, n, n, n, n),
                 b01 = TFE_FN(ad_blk_)(&B.v, 0, n, n, n);
    st = TFE_FN(ad_copy_)(&b00, &M);
    TFE__ADT(TFE_FN(ad_copy_)(&b11, &M));
    TFE__ADT(TFE_FN(ad_copy_)(&b01, E));
  }
  TFE__ADT(TFE_FN(ad_expm_pr_dev_)(&B.v, &X));
  if (!st) {
    TFE_TY(view) x01 = TFE_FN(ad_blk_)(&X.v, 0, n, n, n);
    st = TFE_FN(ad_dense_copy_)(&x01, out);
  }
  TFE_FN(tensor_release)(&B), TFE_FN(tensor_release)(&X);
  return st;
}

/* ==== reduce (the kernel room's reductions over params.axes) ====================================
 * The direction D of each element (dy = sum D dx per output, more_rules_tpl.h's ad_red_dir_) is
 * built in x's own layout, y broadcast back over the reduced axes; max, min and norminf take the
 * first winner in the CPU's order (column-major over the reduced axes): the smallest index among
 * the elements equal to the result, with the index tensor Ix built on the device. */
TFE_INTERNAL bool TFE_FN(ad_reduce_dev_ok_)(const tfe_ad_params *p) {
  return p->redop >= 0 && p->redop < (int)TFE_RED_COUNT_;
}
/* y (the kept dims) broadcast to x's dims: stride 0 along the reduced axes perm[0..nr). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ad_ybc_)(const TFE_TY(view) *y, const TFE_TY(view) *x, const int *perm, int nr) {
  TFE_TY(view) t = *y;
  t.lay = x->lay;
  t.lay.offset = y->lay.offset;
  for (int i = 0; i < x->lay.rank; i++) t.lay.strides[i] = 0;
  for (int k = 0; k < x->lay.rank - nr; k++) t.lay.strides[perm[nr + k]] = y->lay.strides[k];
  return t;
}
/* Ix (a new tensor shaped like x, real parts) = each element's index in its block: sum over the
 * reduced axes a = perm[k] of i_a s_k, s_0 = 1, s_k+1 = s_k dims[a]; from one vector 0, 1, ...
 * built by doubling (copy, then add the length). */
TFE_INTERNAL tfe_status TFE_FN(ad_red_index_)(const TFE_TY(view) *x, const int *perm, int nr, const TFE_TY(tensor) *K,
                                             TFE_TY(tensor) *Ix) {
  int64_t L = 1;
  for (int k = 0; k < nr; k++) L = x->lay.dims[perm[k]] > L ? x->lay.dims[perm[k]] : L;
  TFE_TY(tensor) io = {0};
  TFE_T one = 1;
  tfe_status st = TFE_FN(ad_empty_)(1, &L, &io);
  TFE__ADT(TFE_FN(ad_like_)(x, true, Ix));
  if (!st) {
    TFE_TY(view) h = io.v, ones;
    h.lay.dims[0] = 1;
    st = TFE_FN(ad_fill_)(&h, (TFE_T)0);
    for (int64_t len = 1; !st && len < L; len *= 2) {
      TFE_TY(view) src = io.v, dst = io.v;
      src.lay.dims[0] = dst.lay.dims[0] = len < L - len ? len : L - len;
      dst.lay.offset = len;
      ones = TFE_FN(ad_cbc_)(K, 1, &dst);
      TFE_T lv = (TFE_T)len;
      st = TFE_FN(ad_copy_)(&dst, &src);
      TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &dst, &ones, NULL, &lv, &one));
    }
  }
  double s = 1;
  for (int k = 0; !st && k < nr; k++) {
    TFE_TY(view) ib = io.v;
    ib.lay = x->lay, ib.lay.offset = io.v.lay.offset;
    for (int i = 0; i < x->lay.rank; i++) ib.lay.strides[i] = i == perm[k] ? 1 : 0;
    TFE_T sv = (TFE_T)s;
    st = TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &Ix->v, &ib, NULL, &sv, &one);
    s *= (double)x->lay.dims[perm[k]];
  }
  TFE_FN(tensor_release)(&io);
  if (st) TFE_FN(tensor_release)(Ix);
  return st;
}
/* f = [the element is its block's first winner] (real parts of the new tensor F), w = [x wins]
 * (real parts of W, 0 / 1): the smallest index among the winners by a MIN reduction of
 * w Ix + (1 - w) count, then f = 1 - [|Ix - that| > 0]. */
TFE_INTERNAL tfe_status TFE_FN(ad_red_first_)(const TFE_TY(view) *x, const TFE_TY(tensor) *W, const int *perm, int nr,
                                             int64_t count, const TFE_TY(tensor) *K, TFE_TY(tensor) *F) {
  TFE_TY(tensor) Ix = {0}, m = {0};
  TFE_T c = (TFE_T)count, mc = -c, one = 1;
  tfe_status st = TFE_FN(ad_red_index_)(x, perm, nr, K, &Ix);
  TFE__ADT(TFE_FN(ad_like_)(x, false, F));
  int64_t dy[TFE_MAX_RANK];
  for (int k = 0; k < x->lay.rank - nr; k++) dy[k] = x->lay.dims[perm[nr + k]];
  TFE__ADT(TFE_FN(ad_zeros_)(x->lay.rank - nr, dy, &m));
  if (!st) {
    TFE_TY(view) ones = TFE_FN(ad_cbc_)(K, 1, x), mb = TFE_FN(ad_ybc_)(&m.v, x, perm, nr);
    tfe_dyn f = TFE_FN(ad_part_)(&F->v, 0), mr = TFE_FN(ad_part_)(&m.v, 0), w = TFE_FN(ad_part_)(&W->v, 0),
            on = TFE_FN(ad_kd_)(K, 1, &f);
    st = TFE_FN(ad_copy_)(&F->v, &Ix.v);
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &F->v, &ones, NULL, &mc, &one)); /* Ix - count */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MUL, &f, &f, &w, NULL));
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &F->v, &ones, NULL, &c, &one));
    TFE__ADT(TFE_FN(ad_redd_)(TFE_RED_MIN, &mr, &f, nr, perm));
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, &F->v, &Ix.v, &mb));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_MAP, TFE_UN_ABS, &f, &f, NULL, NULL));
    TFE__ADT(TFE_FN(ad_step_)(&f, K));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &f, &on, &f, NULL));
    if (st) TFE_FN(tensor_release)(F);
  }
  TFE_FN(tensor_release)(&Ix), TFE_FN(tensor_release)(&m);
  return st;
}
/* The winners of max, min, norminf: w = 1 - [y - x > 0] (max), 1 - [x - y > 0] (min), with |x| for
 * norminf (real parts of the new tensor W; imaginary parts zero). */
TFE_INTERNAL tfe_status TFE_FN(ad_red_win_)(int op, const TFE_TY(view) *x, const TFE_TY(view) *yb,
                                           const TFE_TY(tensor) *K, TFE_TY(tensor) *W) {
  TFE_TRY(TFE_FN(ad_like_)(x, true, W));
  tfe_dyn w = TFE_FN(ad_part_)(&W->v, 0), y = TFE_FN(ad_part_)(yb, 0), xr = TFE_FN(ad_part_)(x, 0),
          on = TFE_FN(ad_kd_)(K, 1, &w);
  tfe_status st = TFE_OK;
  if (op == TFE_RED_NORMINF) {
    st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, &W->v, x, NULL, NULL, NULL);
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &w, &y, &w, NULL));
  } else {
    st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &w, op == TFE_RED_MAX ? &y : &xr, op == TFE_RED_MAX ? &xr : &y, NULL);
  }
  TFE__ADT(TFE_FN(ad_step_)(&w, K));
  TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &w, &on, &w, NULL));
  if (st) TFE_FN(tensor_release)(W);
  return st;
}
/* prod's D_i = the product of the others: with z the count of zeros in the block, P the product of
 * its nonzero elements, D_i = P / x_i where z = 0, P at the zero where z = 1, else 0 (the CPU
 * forms prefix and suffix products; equal to rounding). nz = [x != 0] by a step of |x|. */
TFE_INTERNAL tfe_status TFE_FN(ad_red_prod_dir_)(const TFE_TY(view) *x, const int *perm, int nr, const TFE_TY(tensor) *K,
                                                const TFE_TY(view) *D) {
  enum { NZ, ZN, XP, P_, Z_, Z1, NT };
  TFE_TY(tensor) t[NT];
  memset(t, 0, sizeof t);
  int64_t dy[TFE_MAX_RANK];
  for (int k = 0; k < x->lay.rank - nr; k++) dy[k] = x->lay.dims[perm[nr + k]];
  tfe_status st = TFE_OK;
  for (int i = NZ; i <= XP; i++) TFE__ADT(TFE_FN(ad_like_)(x, true, &t[i]));
  for (int i = P_; i <= Z1; i++) TFE__ADT(TFE_FN(ad_zeros_)(x->lay.rank - nr, dy, &t[i]));
  if (!st) {
    TFE_TY(view) ones = TFE_FN(ad_cbc_)(K, 1, x), Pb = TFE_FN(ad_ybc_)(&t[P_].v, x, perm, nr),
                 zb = TFE_FN(ad_ybc_)(&t[Z_].v, x, perm, nr), z1b = TFE_FN(ad_ybc_)(&t[Z1].v, x, perm, nr);
    tfe_dyn nz = TFE_FN(ad_part_)(&t[NZ].v, 0), z = TFE_FN(ad_part_)(&t[Z_].v, 0), z1 = TFE_FN(ad_part_)(&t[Z1].v, 0),
            on = TFE_FN(ad_kd_)(K, 1, &z);
    TFE_T m1 = -1, one = 1;
    st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, &t[NZ].v, x, NULL, NULL, NULL);
    TFE__ADT(TFE_FN(ad_step_)(&nz, K));                                        /* nz */
    TFE__ADT(TFE__ADZIP(TFE_BIN_SUB, &t[ZN].v, &ones, &t[NZ].v));              /* 1 - nz */
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, &t[XP].v, &t[ZN].v, x));                  /* zeros as ones */
    TFE__ADT(TFE_FN(ad_red_)(TFE_RED_PROD, &t[P_].v, &t[XP].v, nr, perm));
    TFE__ADT(TFE_FN(ad_red_)(TFE_RED_SUM, &t[Z_].v, &t[ZN].v, nr, perm));     /* z */
    TFE__ADT(TFE_FN(ad_copy_)(&t[Z1].v, &t[Z_].v));
    TFE_TY(view) oy = TFE_FN(ad_cbc_)(K, 1, &t[Z1].v);
    TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &t[Z1].v, &oy, NULL, &m1, &one)); /* z - 1 */
    TFE__ADT(TFE_FN(ad_step_)(&z, K));                                         /* [z > 0] */
    TFE__ADT(TFE_FN(ad_step_)(&z1, K));                                        /* [z > 1] */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &z1, &z, &z1, NULL));    /* [z == 1] */
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &z, &on, &z, NULL));     /* [z == 0] */
    TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, D, &t[NZ].v, &t[XP].v));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, D, D, &zb));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t[ZN].v, &t[ZN].v, &z1b));
    TFE__ADT(TFE__ADZIP(TFE_BIN_ADD, D, D, &t[ZN].v));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, D, D, &Pb));
  }
  TFE_FN(ad_rel_)(t, NT);
  return st;
}
/* D (a new tensor shaped like x) of the reduction p->redop: 1, 1 / count, 2 x, the
 * phase (norm1), x / max(y, tiny) (norm2), the first winner (max, min; norminf: times the phase). */
TFE_INTERNAL tfe_status TFE_FN(ad_red_dir_dev_)(const tfe_ad_params *p, const TFE_TY(view) *x, const TFE_TY(view) *y,
                                               const int *perm, int nr, int64_t count, TFE_TY(tensor) *D) {
  int op = p->redop;
  TFE_TY(tensor) K = {0}, W = {0}, F = {0}, yc = {0};
  TFE_TY(view) yb = TFE_FN(ad_ybc_)(y, x, perm, nr);
  TFE_T two = 2;
  memset(D, 0, sizeof *D);
  tfe_status st = TFE_FN(ad_consts_)(&K);
  if (op == TFE_RED_NORM1 || op == TFE_RED_NORMINF) TFE__ADT(TFE_FN(ad_phase_)(x, &K, D));
  else TFE__ADT(TFE_FN(ad_like_)(x, false, D));
  if (op == TFE_RED_SUM || op == TFE_RED_MEAN) TFE__ADT(TFE_FN(ad_fill_)(&D->v, op == TFE_RED_SUM ? (TFE_T)1 : (TFE_T)(1.0 / (double)count)));
  if (op == TFE_RED_SUMSQ) TFE__ADT(TFE_FN(ad_ew_)(TFE_EW_AXPBY, 0, &D->v, x, NULL, &two, &(TFE_T){0}));
  if (op == TFE_RED_NORM2) { /* x / max(y, tiny): y >= tiny or all of the block is 0 */
    TFE__ADT(TFE_FN(ad_dense_copy_)(y, &yc));
    if (!st) {
      tfe_dyn r = TFE_FN(ad_part_)(&yc.v, 0), t = TFE_FN(ad_kd_)(&K, 2, &r);
      TFE_TY(view) ycb = TFE_FN(ad_ybc_)(&yc.v, x, perm, nr);
      st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, &r, &r, &t, NULL);
      TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, &D->v, x, &ycb));
    }
  }
  if (op == TFE_RED_MAX || op == TFE_RED_MIN || op == TFE_RED_NORMINF) {
    TFE__ADT(TFE_FN(ad_red_win_)(op, x, &yb, &K, &W));
    TFE__ADT(TFE_FN(ad_red_first_)(x, &W, perm, nr, count, &K, &F));
    if (op == TFE_RED_NORMINF) TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &D->v, &D->v, &F.v));
    else TFE__ADT(TFE_FN(ad_copy_)(&D->v, &F.v));
  }
  if (op == TFE_RED_PROD) TFE__ADT(TFE_FN(ad_red_prod_dir_)(x, perm, nr, &K, &D->v));
  TFE_FN(tensor_release)(&K), TFE_FN(tensor_release)(&W), TFE_FN(tensor_release)(&F), TFE_FN(tensor_release)(&yc);
  if (st) TFE_FN(tensor_release)(D);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_reduce_pr_dev_)(const tfe_ad_params *p, const TFE_TY(view) *x, TFE_TY(tensor) *y) {
  int perm[TFE_MAX_RANK];
  int64_t count = 0, nout = 0, dims[TFE_MAX_RANK];
  TFE_TRY(TFE_FN(ad_red_perm_)(p, &x->lay, perm, &count, &nout));
  int nr = p->naxes < 0 ? x->lay.rank : p->naxes, ny = x->lay.rank - nr;
  for (int i = 0; i < ny; i++) dims[i] = x->lay.dims[perm[nr + i]];
  TFE_TRY(TFE_FN(ad_empty_)(ny, dims, y));
  tfe_status st = TFE_FN(ad_red_)(p->redop, &y->v, x, nr, perm);
  if (st) TFE_FN(tensor_release)(y);
  return st;
}
/* Reverse: dx = Re(g) D (real-valued reductions of complex kinds: sumsq, norms) or conj(D) g;
 * forward: dy = the sum per block of Re(conj(D) dx), or of D dx. */
TFE_INTERNAL tfe_status TFE_FN(ad_reduce_dev_)(bool rev, const tfe_ad_params *p, const TFE_TY(view) *x,
                                              const TFE_TY(view) *y, const TFE_TY(view) *d, TFE_TY(tensor) *out) {
  int perm[TFE_MAX_RANK];
  int64_t count = 0, nout = 0;
  TFE_TRY(TFE_FN(ad_red_perm_)(p, &x->lay, perm, &count, &nout));
  int nr = p->naxes < 0 ? x->lay.rank : p->naxes;
  bool rv = TFE_CPLX && (p->redop == TFE_RED_SUMSQ || p->redop == TFE_RED_NORM1 || p->redop == TFE_RED_NORM2 ||
                         p->redop == TFE_RED_NORMINF);
  TFE_TY(tensor) D = {0}, g = {0}, t = {0};
  memset(out, 0, sizeof *out);
  tfe_status st = TFE_FN(ad_red_dir_dev_)(p, x, y, perm, nr, count, &D);
  TFE_TY(view) Dc = D.v;
  Dc.conj = TFE_CPLX && (rv || rev);
  if (rev) {
    TFE__ADT(rv ? TFE_FN(ad_like_)(d, true, &g) : TFE_FN(ad_dense_copy_)(d, &g));
    if (rv) TFE__ADT(TFE_FN(ad_re_copy_)(&g.v, d));
    TFE__ADT(TFE_FN(ad_like_)(x, false, out));
    if (!st) {
      TFE_TY(view) gb = TFE_FN(ad_ybc_)(&g.v, x, perm, nr);
      Dc.conj = TFE_CPLX && !rv;
      st = TFE__ADZIP(TFE_BIN_MUL, &out->v, &Dc, &gb);
    }
  } else {
    TFE__ADT(TFE_FN(ad_like_)(x, false, &t));
    TFE__ADT(TFE__ADZIP(TFE_BIN_MUL, &t.v, &Dc, d));
    TFE__ADT(TFE_FN(ad_like_)(y, true, &g));
    TFE__ADT(TFE_FN(ad_red_)(TFE_RED_SUM, &g.v, &t.v, nr, perm));
    TFE__ADT(rv ? TFE_FN(ad_like_)(y, true, out) : TFE_FN(ad_dense_copy_)(&g.v, out));
    if (rv) TFE__ADT(TFE_FN(ad_re_copy_)(&out->v, &g.v));
  }
  TFE_FN(tensor_release)(&D), TFE_FN(tensor_release)(&g), TFE_FN(tensor_release)(&t);
  if (st) TFE_FN(tensor_release)(out);
  return st;
}
#endif
