/* tenferro/ad/dev_rules2_tpl.h — device forms of the primal, forward and reverse rules of det,
 * slogdet, slogdet_sign, lq, pinv, polar and the norms, for one float kind: the CPU rules'
 * formulas (solve_rules_tpl.h, linalg_rules_tpl.h, more_rules_tpl.h) written with the pieces of
 * dev_rules_tpl.h (batched contractions, the backend's elementwise slot, Toeplitz masks, the
 * linalg room's typed calls on the backend's linalg slot) and the device SVD / QR rules. They run
 * only while tfe__ts.ad_backend is set; host tapes keep the CPU code. Bodies only, re-included
 * per kind by ad.h right after dev_rules_tpl.h. docs/ad.md ("Device tensors") lists them.
 *
 * Pieces added here:
 *   reductions        the elementwise slot's REDUCE (prod of diag(U), sums of logs, norms)
 *   exact 0 / 1 steps [x > 0] by scaling past every nonzero magnitude and clamping to [0, 1]
 *                     three times (ad_bwin_'s trick; subnormals included)
 *   permutation sign  of the LU's row permutation (i64 on the device; the elementwise slot has
 *                     no integer kinds): the values k < 2^23 read as the real kind are the
 *                     subnormals k 2^-1074 (f64) or, in the low words, k 2^-149 (f32) (little
 *                     endian; the device keeps subnormals: NVRTC's default -ftz=false), whose
 *                     differences are exact; sign = prod over i < j of (1 - 2 [p_i > p_j]) */
#if TFE__BODY_PHASE && TFE_FLOAT
#define TFE__ADT(call)                                                                                    \
  do {                                                                                                    \
    if (!st) st = (call);                                                                                 \
  } while (0)
#define TFE__ADZIP(op, d, a, b) TFE_FN(ad_ew_)(TFE_EW_ZIP, (op), (d), (a), (b), NULL, NULL)
#define TFE__RS2 TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT2 TFE_CAT(tfe_tensor_, TFE__RS2)

/* The CPU rules' helpers defined later in ad.h's order (linalg_rules_tpl.h). */
TFE_INTERNAL tfe_status TFE_FN(ad_from_real_)(TFE__RT2 *r, TFE_TY(tensor) *out);

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
/* The constants the steps need: K = [0, 1, tiny] (tiny: the smallest normal number). */
TFE_INTERNAL tfe_status TFE_FN(ad_consts_)(TFE_TY(tensor) *K) {
  int64_t three = 3;
  TFE_TRY(TFE_FN(ad_empty_)(1, &three, K));
  const TFE_T v[3] = {0, 1, (TFE_T)(sizeof(TFE_R) == 4 ? FLT_MIN : DBL_MIN)};
  tfe_status st = TFE_OK;
  for (int i = 0; i < 3; i++) {
    TFE_TY(view) e = K->v;
    e.lay.dims[0] = 1, e.lay.offset = i;
    TFE__ADT(TFE_FN(ad_fill_)(&e, v[i]));
  }
  if (st) TFE_FN(tensor_release)(K);
  return st;
}
/* The real part of constant i of K broadcast to the dyn view like (every stride 0). */
TFE_INTERNAL tfe_dyn TFE_FN(ad_kd_)(const TFE_TY(tensor) *K, int i, const tfe_dyn *like) {
  tfe_dyn d = TFE_FN(ad_part_)(&K->v, 0);
  d.lay = like->lay;
  d.lay.offset = i * (TFE_CPLX ? 2 : 1);
  for (int k = 0; k < d.lay.rank; k++) d.lay.strides[k] = 0;
  return d;
}
/* x = [x > 0] exactly on a real dyn view: scaled by 2^64 (f32) or 2^512 (f64) and clamped to
 * [0, 1], three times, so that the smallest positive subnormal reaches 1 (ad_bwin_). */
TFE_INTERNAL tfe_status TFE_FN(ad_step_)(const tfe_dyn *x, const TFE_TY(tensor) *K) {
  TFE_R big = (TFE_R)ldexp(1.0, sizeof(TFE_R) == 4 ? 64 : 512);
  tfe_dyn z = TFE_FN(ad_kd_)(K, 0, x), o = TFE_FN(ad_kd_)(K, 1, x);
  tfe_status st = TFE_OK;
  for (int r = 0; r < 3; r++) {
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, x, NULL, NULL, &big));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, x, x, &z, NULL));
    TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MIN, x, x, &o, NULL));
  }
  return st;
}
/* z / max(|z|, tiny) into ph (a dense tensor shaped like z; 0 at 0). */
TFE_INTERNAL tfe_status TFE_FN(ad_phase1_)(const TFE_TY(view) *z, const TFE_TY(tensor) *K, const TFE_TY(view) *ph) {
  tfe_status st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, ph, z, NULL, NULL, NULL);
  tfe_dyn a = TFE_FN(ad_part_)(ph, 0), t = TFE_FN(ad_kd_)(K, 2, &a);
  TFE__ADT(TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, &a, &a, &t, NULL));
  TFE__ADT(TFE__ADZIP(TFE_BIN_DIV, ph, z, ph));
  return st;
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
#undef TFE__ADT
#undef TFE__ADZIP
#undef TFE__RS2
#undef TFE__RT2
#endif
