/* tenferro/linalg/factor_tpl.h — matrix helpers and factorizations of one float kind; re-included
 * per kind by linalg.h (no include guard). Only IEEE kinds (TFE_FLOAT) have a body.
 * Size: ~690 lines, over the 600-line guide: the SVD, QR/LQ, eigen, LU and Cholesky bodies share
 * the dense helpers and LAPACKE macros defined here; the split into a square-matrix template
 * (eig, LU, Cholesky and the entry points) is the next step, not yet done. */
#if !TFE__BODY_PHASE
#if TFE_FLOAT

#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__CS TFE_CAT(TFE__CSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)
#define TFE__CT TFE_CAT(tfe_tensor_, TFE__CS)
#define TFE__CTY TFE_CAT(TFE__CTYPE_, TFE_S)

/* Shapes of one matrix-valued result: rank and dims. */
typedef struct TFE_TY(la_shape_) { int rank; int64_t dims[TFE_MAX_RANK]; } TFE_TY(la_shape_);

/* Batched SVD: A (m, n, batch...) = U (m, k, batch...) diag(S (k, batch...)) Vh (k, n, batch...). */
TFE_API tfe_status TFE_FN(svd)(const TFE_TY(view) *A, tfe_svd_mode mode, TFE_TY(tensor) *U, TFE__RT *S,
                               TFE_TY(tensor) *Vh);

/* N-D SVD: rows = the named axes; U (row dims..., k), S (k), Vh (k, column dims...). */
TFE_API tfe_status TFE_FN(svd_nd)(const TFE_TY(view) *A, int nrow, const int *row_axes, tfe_svd_mode mode,
                                  TFE_TY(tensor) *U, TFE__RT *S, TFE_TY(tensor) *Vh);

/* Truncated N-D SVD: like tfe_svd_nd (thin) but keeping the rank the rule allows; info (may be
 * NULL) reports the kept rank and the discarded weight. */
TFE_API tfe_status TFE_FN(svd_trunc)(const TFE_TY(view) *A, int nrow, const int *row_axes, const tfe_trunc *tr,
                                     TFE_TY(tensor) *U, TFE__RT *S, TFE_TY(tensor) *Vh, tfe_trunc_info *info);

/* Batched QR: A (m, n, batch...) = Q (m, kq, batch...) R (kq, n, batch...), R upper with a
 * real non-negative diagonal; kq = min(m, n) (thin) or m (full). */
TFE_API tfe_status TFE_FN(qr)(const TFE_TY(view) *A, bool full, TFE_TY(tensor) *Q, TFE_TY(tensor) *R);

/* N-D QR: Q (row dims..., kq), R (kq, column dims...). */
TFE_API tfe_status TFE_FN(qr_nd)(const TFE_TY(view) *A, int nrow, const int *row_axes, bool full, TFE_TY(tensor) *Q,
                                 TFE_TY(tensor) *R);

/* Batched LQ: A = L (m, kq, batch...) Q (kq, n, batch...), L lower with a real non-negative
 * diagonal, Q with orthonormal rows; kq = min(m, n) (thin) or n (full). */
TFE_API tfe_status TFE_FN(lq)(const TFE_TY(view) *A, bool full, TFE_TY(tensor) *L, TFE_TY(tensor) *Q);

/* N-D LQ: L (row dims..., kq), Q (kq, column dims...). */
TFE_API tfe_status TFE_FN(lq_nd)(const TFE_TY(view) *A, int nrow, const int *row_axes, bool full, TFE_TY(tensor) *L,
                                 TFE_TY(tensor) *Q);

/* ---- eigendecompositions -------------------------------------------------------------------- */
/* Hermitian (real symmetric) eigendecomposition A = V diag(W) V^H, eigenvalues ascending.
 * Only the lower triangle of A is read. V may be NULL for eigenvalues only. */
TFE_API tfe_status TFE_FN(eigh)(const TFE_TY(view) *A, TFE__RT *W, TFE_TY(tensor) *V);

/* General eigendecomposition A V = V diag(W) with complex W (n, batch...) and right
 * eigenvectors V (n, n, batch...) of unit 2-norm (LAPACK's geev normalization). V may be NULL. */
TFE_API tfe_status TFE_FN(eig)(const TFE_TY(view) *A, TFE__CT *W, TFE__CT *V);

/* ---- LU and Cholesky ------------------------------------------------------------------------ */
/* LU with partial pivoting: A[perm[i], :] = (L U)[i, :]; perm (m, batch...) as int64, L
 * (m, k, batch...) unit lower, U (k, n, batch...) upper, k = min(m, n). A singular A is not an
 * error here (its U has a zero on the diagonal). */
TFE_API tfe_status TFE_FN(lu)(const TFE_TY(view) *A, tfe_tensor_i64 *perm, TFE_TY(tensor) *L, TFE_TY(tensor) *U);

/* Cholesky A = L L^H of a Hermitian positive definite A (lower triangle read); L (n, n, batch...)
 * lower. Not positive definite: TFE_ERR_SINGULAR. */
TFE_API tfe_status TFE_FN(cholesky)(const TFE_TY(view) *A, TFE_TY(tensor) *L);

#undef TFE__LP
#undef TFE__RS
#undef TFE__CS
#undef TFE__RT
#undef TFE__CT
#undef TFE__CTY
#endif /* TFE_FLOAT */
#else /* bodies */
#if TFE_FLOAT
#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__CS TFE_CAT(TFE__CSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)
#define TFE__CT TFE_CAT(tfe_tensor_, TFE__CS)
#define TFE__CTY TFE_CAT(TFE__CTYPE_, TFE_S)
/* The CPU backend's linalg slot for this kind (ops_tpl.h), enrolled by TFE__LA_DISPATCH. */
TFE_INTERNAL tfe_status TFE_FN(la_cpu_call_)(const tfe_linalg_call *c);

/* ---- scalar helpers ----------------------------------------------------------------------- */
TFE_INTERNAL TFE_R TFE_FN(la_abs_)(TFE_T x) {
#if TFE_CPLX
  return TFE_CABS(x);
#else
  return x < 0 ? -x : x;
#endif
}
TFE_INTERNAL TFE_T TFE_FN(la_conj_)(TFE_T x) {
#if TFE_CPLX
  return TFE_CONJ(x);
#else
  return x;
#endif
}
/* x / |x|, and 1 for 0: the gauge factor that makes a diagonal entry real and positive. */
TFE_INTERNAL TFE_T TFE_FN(la_phase_)(TFE_T x) {
  TFE_R a = TFE_FN(la_abs_)(x);
  return a > 0 ? x / a : (TFE_T)1;
}
TFE_INTERNAL TFE_R TFE_FN(la_eps_)(void) { return sizeof(TFE_R) == sizeof(float) ? FLT_EPSILON : DBL_EPSILON; }

/* ---- dense column-major helpers ------------------------------------------------------------ */
/* Pack batch item b of the matrix view into buf (leading dimension ld), applying a lazy conj. */
TFE_INTERNAL void TFE_FN(la_pack_)(const TFE_TY(view) *A, const tfe__mat *M, int64_t b, TFE_T *buf, int64_t ld) {
  const TFE_T *base = A->data + M->boff[b];
  for (int64_t j = 0; j < M->n; j++) {
    const TFE_T *col = base + M->coff[j];
    TFE_T *out = buf + j * ld;
    if (A->conj)
      for (int64_t i = 0; i < M->m; i++) out[i] = TFE_FN(la_conj_)(col[M->roff[i]]);
    else
      for (int64_t i = 0; i < M->m; i++) out[i] = col[M->roff[i]];
  }
}

/* C = alpha op(A) op(B) + beta C on column-major buffers; ops 'N', 'T', 'C'. */
TFE_INTERNAL void TFE_FN(la_gemm_)(char ta, char tb, int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *A,
                                   int64_t lda, const TFE_T *B, int64_t ldb, TFE_T beta, TFE_T *C, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) { /* BLAS would be fine, but keep beta = 0 from reading garbage */
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) C[i + j * ldc] = beta == (TFE_T)0 ? (TFE_T)0 : beta * C[i + j * ldc];
    return;
  }
  int oa = TFE__CBLAS_OP(ta), ob = TFE__CBLAS_OP(tb);
#if TFE_CPLX
  TFE_CAT(TFE_CAT(tfe__cblas_, TFE_CAT(TFE__LPFX_, TFE_S)), gemm)
  (TFE__CBLAS_COL, oa, ob, (int)m, (int)n, (int)k, &alpha, A, (int)(lda > 0 ? lda : 1), B,
   (int)(ldb > 0 ? ldb : 1), &beta, C, (int)(ldc > 0 ? ldc : 1));
#else
  TFE_CAT(TFE_CAT(tfe__cblas_, TFE_CAT(TFE__LPFX_, TFE_S)), gemm)
  (TFE__CBLAS_COL, oa, ob, (int)m, (int)n, (int)k, alpha, A, (int)(lda > 0 ? lda : 1), B, (int)(ldb > 0 ? ldb : 1),
   beta, C, (int)(ldc > 0 ? ldc : 1));
#endif
}

TFE_INTERNAL void TFE_FN(la_eye_)(TFE_T *buf, int64_t m, int64_t n) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) buf[i + j * m] = i == j ? (TFE_T)1 : (TFE_T)0;
}

/* Dims of an _nd result: the dims of M's row axes then k (rows_first), or k then the column dims. */
TFE_INTERNAL int TFE_FN(la_nd_dims_)(const tfe_layout *L, const tfe__mat *M, bool rows_first, int64_t k, int64_t *dims) {
  int r = 0;
  if (rows_first) {
    for (int i = 0; i < M->nr; i++) dims[r++] = L->dims[M->r[i]];
    dims[r++] = k;
  } else {
    dims[r++] = k;
    for (int i = 0; i < M->nc; i++) dims[r++] = L->dims[M->c[i]];
  }
  return r;
}

/* Whether x (every real part of it) is finite. */
TFE_INTERNAL bool TFE_FN(la_finite_)(TFE_T x) {
  TFE_R part[sizeof(TFE_T) / sizeof(TFE_R)];
  memcpy(part, &x, sizeof x);
  for (size_t q = 0; q < sizeof part / sizeof part[0]; q++)
    if (!isfinite(part[q])) return false;
  return true;
}
/* The one check of every linalg input: a NaN or an infinity is an error at every entry point
 * (LAPACK would return NaNs or loop); names the first such element. n: the element count. */
TFE_INTERNAL tfe_status TFE_FN(la_check_finite_)(const TFE_TY(view) *A, int64_t n, const char *fn) {
  const tfe_layout *L = &A->lay;
  int64_t idx[TFE_MAX_RANK] = {0}, off = L->offset;
  for (int64_t e = 0; e < n; e++) {
    if (!TFE_FN(la_finite_)(A->data[off])) {
      char at[TFE_MAX_RANK * 21 + 4];
      size_t w = 0;
      for (int i = 0; i < L->rank; i++)
        w += (size_t)snprintf(at + w, sizeof at - w, "%s%lld", i ? ", " : "", (long long)idx[i]);
      return tfe__fail(TFE_ERR_INVALID, fn, "input holds a NaN or an infinity at (%s): non-finite input is refused",
                       L->rank ? at : "");
    }
    for (int i = 0; i < L->rank; i++) { /* odometer, first axis fastest */
      off += L->strides[i];
      if (++idx[i] < L->dims[i]) break;
      off -= idx[i] * L->strides[i];
      idx[i] = 0;
    }
  }
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(la_check_view_)(const TFE_TY(view) *A, const char *fn) {
  if (!A) return tfe__fail(TFE_ERR_NULL, fn, "argument 'A' is NULL");
  int64_t n = 0;
  TFE_TRY(tfe_layout_check(&A->lay, &n));
  if (n > 0 && !A->data) return tfe__fail(TFE_ERR_NULL, fn, "view of %lld elements has NULL data", (long long)n);
  return TFE_FN(la_check_finite_)(A, n, fn);
}

/* Batched result shape (lead dims + batch dims of M). */
TFE_INTERNAL tfe_status TFE_FN(la_bshape_)(const tfe__mat *M, const tfe_layout *L, int nl, int64_t d0, int64_t d1,
                                           TFE_TY(la_shape_) *sh, const char *fn) {
  int64_t lead[2] = {d0, d1};
  return tfe__mat_shape(M, L, nl, lead, sh->dims, &sh->rank, fn);
}

/* ---- SVD ------------------------------------------------------------------------------------ */
/* The SVD of every batch item of M into new tensors of the given shapes (U, Vh skipped in
 * values mode). ku, kv: the column count of U and the row count of Vh. */
TFE_INTERNAL tfe_status TFE_FN(svd_core_)(const TFE_TY(view) *A, const tfe__mat *M, tfe_svd_mode mode,
                                          const TFE_TY(la_shape_) *shU, const TFE_TY(la_shape_) *shS,
                                          const TFE_TY(la_shape_) *shV, TFE_TY(tensor) *U, TFE__RT *S,
                                          TFE_TY(tensor) *Vh, const char *fn) {
  int64_t m = M->m, n = M->n, k = m < n ? m : n;
  int64_t ku = mode == TFE_SVD_FULL ? m : k, kv = mode == TFE_SVD_FULL ? n : k;
  bool vecs = mode != TFE_SVD_VALUES;
  TFE_TY(tensor) u = {0}, v = {0};
  TFE__RT s = {0};
  tfe_status st = TFE_CAT(tfe_empty_, TFE__RS)(&s, shS->rank, shS->dims, TFE_COLMAJOR);
  if (!st && vecs) st = TFE_FN(empty)(&u, shU->rank, shU->dims, TFE_COLMAJOR);
  if (!st && vecs) st = TFE_FN(empty)(&v, shV->rank, shV->dims, TFE_COLMAJOR);
  TFE_T *work = NULL;
  if (!st) {
    /* not zeroed: the pack writes all of it (zeroing would cost a pass over fresh pages) */
    work = (TFE_T *)tfe__alloc_at((size_t)(m * n > 0 ? m * n : 1) * sizeof(TFE_T), fn);
    if (!work) st = TFE_ERR_ALLOC;
  }
  TFE_T dummy[1] = {0};
  for (int64_t b = 0; !st && b < M->nbatch; b++) {
    TFE_T *ub = vecs ? u.v.data + b * m * ku : dummy, *vb = vecs ? v.v.data + b * kv * n : dummy;
    if (k == 0) { /* nothing for LAPACK; full factors are identities */
      if (vecs) { TFE_FN(la_eye_)(ub, m, ku); TFE_FN(la_eye_)(vb, kv, n); }
      continue;
    }
    TFE_FN(la_pack_)(A, M, b, work, m);
    int info = (int)TFE__LP(gesdd)(LAPACK_COL_MAJOR, vecs ? (mode == TFE_SVD_FULL ? 'A' : 'S') : 'N', (int)m,
                                   (int)n, work, (int)m, s.v.data + b * k, ub, vecs ? (int)m : 1, vb,
                                   vecs ? (int)kv : 1);
    st = tfe__lapack_info(info, "gesdd", fn);
    if (!st && info > 0)
      st = tfe__fail(TFE_ERR_NOCONV, fn, "SVD of batch item %lld did not converge (gesdd info %d)", (long long)b, info);
  }
  tfe__free(work);
  if (st) {
    TFE_FN(tensor_release)(&u); TFE_FN(tensor_release)(&v); TFE_CAT(tfe_tensor_release_, TFE__RS)(&s);
    return st;
  }
  if (vecs) { *U = u; *Vh = v; }
  *S = s;
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(svd_args_)(const TFE_TY(view) *A, tfe_svd_mode mode, const void *U, const void *S,
                                          const void *Vh, const char *fn) {
  TFE_TRY(TFE_FN(la_check_view_)(A, fn));
  if (mode != TFE_SVD_THIN && mode != TFE_SVD_FULL && mode != TFE_SVD_VALUES)
    return tfe__fail(TFE_ERR_INVALID, fn, "unknown SVD mode %d", (int)mode);
  if (!S) return tfe__fail(TFE_ERR_NULL, fn, "argument 'S' is NULL");
  if (mode != TFE_SVD_VALUES && (!U || !Vh)) return tfe__fail(TFE_ERR_NULL, fn, "argument 'U' or 'Vh' is NULL");
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(svd_cpu_)(const TFE_TY(view) *A, tfe_svd_mode mode, TFE_TY(tensor) *U, TFE__RT *S,
                               TFE_TY(tensor) *Vh) {
  TFE_TRY(TFE_FN(svd_args_)(A, mode, U, S, Vh, TFE__LA_WHERE(svd)));
  tfe__mat M;
  TFE_TRY(tfe__mat_batched(&M, &A->lay, TFE__LA_WHERE(svd)));
  int64_t m = M.m, n = M.n, k = m < n ? m : n;
  bool full = mode == TFE_SVD_FULL;
  TFE_TY(la_shape_) su = {0}, ss = {0}, sv = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 2, m, full ? m : k, &su, TFE__LA_WHERE(svd));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 1, k, 0, &ss, TFE__LA_WHERE(svd));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, full ? n : k, n, &sv, TFE__LA_WHERE(svd));
  if (!st) st = TFE_FN(svd_core_)(A, &M, mode, &su, &ss, &sv, U, S, Vh, TFE__LA_WHERE(svd));
  tfe__mat_free(&M);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(svd_nd_cpu_)(const TFE_TY(view) *A, int nrow, const int *row_axes, tfe_svd_mode mode,
                                  TFE_TY(tensor) *U, TFE__RT *S, TFE_TY(tensor) *Vh) {
  TFE_TRY(TFE_FN(svd_args_)(A, mode, U, S, Vh, TFE__LA_WHERE(svd_nd)));
  tfe__mat M;
  TFE_TRY(tfe__mat_nd(&M, &A->lay, nrow, row_axes, TFE__LA_WHERE(svd_nd)));
  int64_t m = M.m, n = M.n, k = m < n ? m : n;
  bool full = mode == TFE_SVD_FULL;
  TFE_TY(la_shape_) su = {0}, ss = {0}, sv = {0};
  tfe_status st = TFE_OK;
  if (M.nr + 1 > TFE_MAX_RANK || M.nc + 1 > TFE_MAX_RANK)
    st = tfe__fail(TFE_ERR_RANK, TFE__LA_WHERE(svd_nd), "a factor would have rank %d", TFE_MAX_RANK + 1);
  if (!st) {
    su.rank = TFE_FN(la_nd_dims_)(&A->lay, &M, true, full ? m : k, su.dims);
    sv.rank = TFE_FN(la_nd_dims_)(&A->lay, &M, false, full ? n : k, sv.dims);
    ss.rank = 1; ss.dims[0] = k;
    st = TFE_FN(svd_core_)(A, &M, mode, &su, &ss, &sv, U, S, Vh, TFE__LA_WHERE(svd_nd));
  }
  tfe__mat_free(&M);
  return st;
}

/* Rank kept by a truncation rule for singular values s[0..k) (descending). */
TFE_INTERNAL int64_t TFE_FN(la_trunc_rank_)(const TFE_R *s, int64_t k, const tfe_trunc *tr) {
  int64_t r = k;
  if (tr->max_rank > 0 && tr->max_rank < r) r = tr->max_rank;
  if (tr->cutoff > 0 && k > 0) {
    double thr = tr->relative ? tr->cutoff * (double)s[0] : tr->cutoff;
    while (r > 0 && (double)s[r - 1] <= thr) r--;
  }
  return r == 0 && k > 0 ? 1 : r;
}
TFE_INTERNAL tfe_status TFE_FN(svd_trunc_cpu_)(const TFE_TY(view) *A, int nrow, const int *row_axes, const tfe_trunc *tr,
                                     TFE_TY(tensor) *U, TFE__RT *S, TFE_TY(tensor) *Vh, tfe_trunc_info *info) {
  TFE__LA_CHECK_NULL(tr, TFE__LA_WHERE(svd_trunc));
  if (tr->max_rank < 0 || !(tr->cutoff >= 0))
    return TFE_FAIL_AT(TFE_ERR_INVALID, TFE__LA_WHERE(svd_trunc), "max_rank %lld and cutoff %g must be >= 0", (long long)tr->max_rank, tr->cutoff);
  TFE_TY(tensor) u = {0}, v = {0};
  TFE__RT s = {0};
  TFE_TRY(TFE_FN(svd_args_)(A, TFE_SVD_THIN, U, S, Vh, TFE__LA_WHERE(svd_trunc)));
  TFE_TRY(TFE_FN(svd_nd)(A, nrow, row_axes, TFE_SVD_THIN, &u, &s, &v));
  int64_t k = s.v.lay.dims[0];
  int64_t r = TFE_FN(la_trunc_rank_)(s.v.data, k, tr);
  TFE_TY(tensor) u2 = {0}, v2 = {0};
  TFE__RT s2 = {0};
  tfe_layout lu = u.v.lay, lv = v.v.lay;
  lu.dims[lu.rank - 1] = r;
  lv.dims[0] = r;
  tfe_status st = TFE_FN(empty)(&u2, lu.rank, lu.dims, TFE_COLMAJOR);
  if (!st) st = TFE_FN(empty)(&v2, lv.rank, lv.dims, TFE_COLMAJOR);
  if (!st) st = TFE_CAT(tfe_empty_, TFE__RS)(&s2, 1, &r, TFE_COLMAJOR);
  if (!st) {
    int64_t nu = tfe_layout_numel(&u2.v.lay), nn = r > 0 ? tfe_layout_numel(&v2.v.lay) / r : 0;
    memcpy(u2.v.data, u.v.data, (size_t)nu * sizeof(TFE_T)); /* first r columns are a prefix */
    for (int64_t j = 0; j < nn; j++)
      for (int64_t i = 0; i < r; i++) v2.v.data[i + j * r] = v.v.data[i + j * k];
    double tot = 0, dis = 0;
    for (int64_t i = 0; i < k; i++) {
      double w = (double)s.v.data[i] * (double)s.v.data[i];
      tot += w;
      if (i >= r) dis += w;
      else s2.v.data[i] = s.v.data[i];
    }
    if (info) {
      info->rank = r; info->full_rank = k; info->discarded = dis;
      info->discarded_rel = tot > 0 ? dis / tot : 0;
    }
  }
  TFE_FN(tensor_release)(&u); TFE_FN(tensor_release)(&v); TFE_CAT(tfe_tensor_release_, TFE__RS)(&s);
  if (st) {
    TFE_FN(tensor_release)(&u2); TFE_FN(tensor_release)(&v2); TFE_CAT(tfe_tensor_release_, TFE__RS)(&s2);
    return st;
  }
  *U = u2; *S = s2; *Vh = v2;
  return TFE_OK;
}

/* ---- QR and LQ ---------------------------------------------------------------------------- */
/* QR of each batch item: Q (m x kq), R (kq x n), kq = m (full) or k; diag(R) real and >= 0.
 * When A fits in Q (kq >= n, the usual tall case) it is packed straight into Q's buffer and
 * factored there, so the only copy is the pack. */
TFE_INTERNAL tfe_status TFE_FN(qr_core_)(const TFE_TY(view) *A, const tfe__mat *M, bool full,
                                         const TFE_TY(la_shape_) *shQ, const TFE_TY(la_shape_) *shR,
                                         TFE_TY(tensor) *Q, TFE_TY(tensor) *R, const char *fn) {
  int64_t m = M->m, n = M->n, k = m < n ? m : n, kq = full ? m : k;
  bool inq = kq >= n;
  TFE_TY(tensor) q = {0}, r = {0};
  tfe_status st = TFE_FN(empty)(&q, shQ->rank, shQ->dims, TFE_COLMAJOR);
  if (!st) st = TFE_FN(empty)(&r, shR->rank, shR->dims, TFE_COLMAJOR);
  TFE_T *work = NULL;
  if (!st) {
    work = (TFE_T *)tfe__alloc_at((size_t)((inq ? 0 : m * n) + k + 1) * sizeof(TFE_T), fn);
    if (!work) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M->nbatch; b++) {
    TFE_T *qb = q.v.data + b * m * kq, *rb = r.v.data + b * kq * n, *tau = work + (inq ? 0 : m * n);
    TFE_T *a = inq ? qb : work;
    TFE_FN(la_pack_)(A, M, b, a, m);
    if (k > 0) st = tfe__lapack_info((int)TFE__LP(geqrf)(LAPACK_COL_MAJOR, (int)m, (int)n, a, (int)m, tau), "geqrf", fn);
    if (st) break;
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < kq; i++) rb[i + j * kq] = i <= j ? a[i + j * m] : (TFE_T)0;
    if (k == 0) { TFE_FN(la_eye_)(qb, m, kq); continue; }
    if (!inq) memcpy(qb, work, (size_t)(m * k) * sizeof(TFE_T));
    for (int64_t i = m * k; i < m * kq; i++) qb[i] = 0; /* LAPACKE NaN-checks all of Q */
#if TFE_CPLX
    st = tfe__lapack_info((int)TFE__LP(ungqr)(LAPACK_COL_MAJOR, (int)m, (int)kq, (int)k, qb, (int)m, tau), "ungqr", fn);
#else
    st = tfe__lapack_info((int)TFE__LP(orgqr)(LAPACK_COL_MAJOR, (int)m, (int)kq, (int)k, qb, (int)m, tau), "orgqr", fn);
#endif
    if (st) break;
    /* gauge: Q diag(p) diag(conj p) R with p = phase(R_jj); tau is free again and holds p */
    for (int64_t j = 0; j < k; j++) tau[j] = TFE_FN(la_phase_)(rb[j + j * kq]);
    for (int64_t j = 0; j < k; j++)
      for (int64_t i = 0; i < m; i++) qb[i + j * m] *= tau[j];
    for (int64_t c = 0; c < n; c++)
      for (int64_t j = 0; j < k && j <= c; j++) rb[j + c * kq] *= TFE_FN(la_conj_)(tau[j]);
    for (int64_t j = 0; j < k; j++) rb[j + j * kq] = TFE_FN(la_abs_)(rb[j + j * kq]); /* exactly real */
  }
  tfe__free(work);
  if (st) { TFE_FN(tensor_release)(&q); TFE_FN(tensor_release)(&r); return st; }
  *Q = q; *R = r;
  return TFE_OK;
}

/* LQ of each batch item: L (m x kq), Q (kq x n), kq = n (full) or k; diag(L) real and >= 0. */
TFE_INTERNAL tfe_status TFE_FN(lq_core_)(const TFE_TY(view) *A, const tfe__mat *M, bool full,
                                         const TFE_TY(la_shape_) *shL, const TFE_TY(la_shape_) *shQ,
                                         TFE_TY(tensor) *L, TFE_TY(tensor) *Q, const char *fn) {
  int64_t m = M->m, n = M->n, k = m < n ? m : n, kq = full ? n : k;
  TFE_TY(tensor) l = {0}, q = {0};
  tfe_status st = TFE_FN(empty)(&l, shL->rank, shL->dims, TFE_COLMAJOR);
  if (!st) st = TFE_FN(empty)(&q, shQ->rank, shQ->dims, TFE_COLMAJOR);
  TFE_T *work = NULL;
  if (!st) {
    work = (TFE_T *)tfe__calloc_at((size_t)(m * n + k + 1), sizeof(TFE_T), fn);
    if (!work) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M->nbatch; b++) {
    TFE_T *lb = l.v.data + b * m * kq, *qb = q.v.data + b * kq * n, *tau = work + m * n;
    TFE_FN(la_pack_)(A, M, b, work, m);
    if (k > 0) st = tfe__lapack_info((int)TFE__LP(gelqf)(LAPACK_COL_MAJOR, (int)m, (int)n, work, (int)m, tau), "gelqf", fn);
    if (st) break;
    for (int64_t j = 0; j < kq; j++)
      for (int64_t i = 0; i < m; i++) lb[i + j * m] = i >= j && j < n ? work[i + j * m] : (TFE_T)0;
    if (k == 0) { TFE_FN(la_eye_)(qb, kq, n); continue; }
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < kq; i++) qb[i + j * kq] = i < k ? work[i + j * m] : (TFE_T)0;
#if TFE_CPLX
    st = tfe__lapack_info((int)TFE__LP(unglq)(LAPACK_COL_MAJOR, (int)kq, (int)n, (int)k, qb, (int)kq, tau), "unglq", fn);
#else
    st = tfe__lapack_info((int)TFE__LP(orglq)(LAPACK_COL_MAJOR, (int)kq, (int)n, (int)k, qb, (int)kq, tau), "orglq", fn);
#endif
    for (int64_t j = 0; !st && j < k; j++) { /* gauge: L diag(conj p) diag(p) Q with p = phase(L_jj) */
      TFE_T p = TFE_FN(la_phase_)(lb[j + j * m]), pc = TFE_FN(la_conj_)(p);
      for (int64_t i = 0; i < m; i++) lb[i + j * m] *= pc;
      for (int64_t c = 0; c < n; c++) qb[j + c * kq] *= p;
      lb[j + j * m] = TFE_FN(la_abs_)(lb[j + j * m]);
    }
  }
  tfe__free(work);
  if (st) { TFE_FN(tensor_release)(&l); TFE_FN(tensor_release)(&q); return st; }
  *L = l; *Q = q;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(qr_cpu_)(const TFE_TY(view) *A, bool full, TFE_TY(tensor) *Q, TFE_TY(tensor) *R) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(qr)));
  TFE__LA_CHECK_NULL(Q, TFE__LA_WHERE(qr));
  TFE__LA_CHECK_NULL(R, TFE__LA_WHERE(qr));
  tfe__mat M;
  TFE_TRY(tfe__mat_batched(&M, &A->lay, TFE__LA_WHERE(qr)));
  int64_t k = M.m < M.n ? M.m : M.n, kq = full ? M.m : k;
  TFE_TY(la_shape_) sq = {0}, sr = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 2, M.m, kq, &sq, TFE__LA_WHERE(qr));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, kq, M.n, &sr, TFE__LA_WHERE(qr));
  if (!st) st = TFE_FN(qr_core_)(A, &M, full, &sq, &sr, Q, R, TFE__LA_WHERE(qr));
  tfe__mat_free(&M);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(qr_nd_cpu_)(const TFE_TY(view) *A, int nrow, const int *row_axes, bool full, TFE_TY(tensor) *Q,
                                 TFE_TY(tensor) *R) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(qr_nd)));
  TFE__LA_CHECK_NULL(Q, TFE__LA_WHERE(qr_nd));
  TFE__LA_CHECK_NULL(R, TFE__LA_WHERE(qr_nd));
  tfe__mat M;
  TFE_TRY(tfe__mat_nd(&M, &A->lay, nrow, row_axes, TFE__LA_WHERE(qr_nd)));
  int64_t k = M.m < M.n ? M.m : M.n, kq = full ? M.m : k;
  TFE_TY(la_shape_) sq = {0}, sr = {0};
  tfe_status st = TFE_OK;
  if (M.nr + 1 > TFE_MAX_RANK || M.nc + 1 > TFE_MAX_RANK)
    st = TFE_FAIL_AT(TFE_ERR_RANK, TFE__LA_WHERE(qr_nd), "a factor would have rank %d", TFE_MAX_RANK + 1);
  if (!st) {
    sq.rank = TFE_FN(la_nd_dims_)(&A->lay, &M, true, kq, sq.dims);
    sr.rank = TFE_FN(la_nd_dims_)(&A->lay, &M, false, kq, sr.dims);
    st = TFE_FN(qr_core_)(A, &M, full, &sq, &sr, Q, R, TFE__LA_WHERE(qr_nd));
  }
  tfe__mat_free(&M);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(lq_cpu_)(const TFE_TY(view) *A, bool full, TFE_TY(tensor) *L, TFE_TY(tensor) *Q) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(lq)));
  TFE__LA_CHECK_NULL(L, TFE__LA_WHERE(lq));
  TFE__LA_CHECK_NULL(Q, TFE__LA_WHERE(lq));
  tfe__mat M;
  TFE_TRY(tfe__mat_batched(&M, &A->lay, TFE__LA_WHERE(lq)));
  int64_t k = M.m < M.n ? M.m : M.n, kq = full ? M.n : k;
  TFE_TY(la_shape_) sl = {0}, sq = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 2, M.m, kq, &sl, TFE__LA_WHERE(lq));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, kq, M.n, &sq, TFE__LA_WHERE(lq));
  if (!st) st = TFE_FN(lq_core_)(A, &M, full, &sl, &sq, L, Q, TFE__LA_WHERE(lq));
  tfe__mat_free(&M);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(lq_nd_cpu_)(const TFE_TY(view) *A, int nrow, const int *row_axes, bool full, TFE_TY(tensor) *L,
                                 TFE_TY(tensor) *Q) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(lq_nd)));
  TFE__LA_CHECK_NULL(L, TFE__LA_WHERE(lq_nd));
  TFE__LA_CHECK_NULL(Q, TFE__LA_WHERE(lq_nd));
  tfe__mat M;
  TFE_TRY(tfe__mat_nd(&M, &A->lay, nrow, row_axes, TFE__LA_WHERE(lq_nd)));
  int64_t k = M.m < M.n ? M.m : M.n, kq = full ? M.n : k;
  TFE_TY(la_shape_) sl = {0}, sq = {0};
  tfe_status st = TFE_OK;
  if (M.nr + 1 > TFE_MAX_RANK || M.nc + 1 > TFE_MAX_RANK)
    st = TFE_FAIL_AT(TFE_ERR_RANK, TFE__LA_WHERE(lq_nd), "a factor would have rank %d", TFE_MAX_RANK + 1);
  if (!st) {
    sl.rank = TFE_FN(la_nd_dims_)(&A->lay, &M, true, kq, sl.dims);
    sq.rank = TFE_FN(la_nd_dims_)(&A->lay, &M, false, kq, sq.dims);
    st = TFE_FN(lq_core_)(A, &M, full, &sl, &sq, L, Q, TFE__LA_WHERE(lq_nd));
  }
  tfe__mat_free(&M);
  return st;
}

/* ---- square-matrix helpers ------------------------------------------------------------------ */
/* Batched matrix of a square-only operation. */
TFE_INTERNAL tfe_status TFE_FN(la_square_)(const TFE_TY(view) *A, tfe__mat *M, const char *fn) {
  TFE_TRY(TFE_FN(la_check_view_)(A, fn));
  TFE_TRY(tfe__mat_batched(M, &A->lay, fn));
  if (M->m != M->n) {
    tfe__mat_free(M);
    return tfe__fail(TFE_ERR_SHAPE, fn, "needs a square matrix, got %lld x %lld", (long long)M->m, (long long)M->n);
  }
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(eigh_cpu_)(const TFE_TY(view) *A, TFE__RT *W, TFE_TY(tensor) *V) {
  TFE__LA_CHECK_NULL(W, TFE__LA_WHERE(eigh));
  tfe__mat M;
  TFE_TRY(TFE_FN(la_square_)(A, &M, TFE__LA_WHERE(eigh)));
  int64_t n = M.n;
  TFE_TY(la_shape_) sw = {0}, sv = {0};
  TFE_TY(tensor) v = {0};
  TFE__RT w = {0};
  TFE_T *work = NULL;
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 1, n, 0, &sw, TFE__LA_WHERE(eigh));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, n, n, &sv, TFE__LA_WHERE(eigh));
  if (!st) st = TFE_CAT(tfe_empty_, TFE__RS)(&w, sw.rank, sw.dims, TFE_COLMAJOR);
  if (!st && V) st = TFE_FN(empty)(&v, sv.rank, sv.dims, TFE_COLMAJOR);
  if (!st && !V) {
    work = (TFE_T *)tfe__calloc(n * n > 0 ? (size_t)(n * n) : 1, sizeof(TFE_T));
    if (!work) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M.nbatch && n > 0; b++) {
    TFE_T *buf = V ? v.v.data + b * n * n : work;
    TFE_FN(la_pack_)(A, &M, b, buf, n);
#if TFE_CPLX
    int info = (int)TFE__LP(heevd)(LAPACK_COL_MAJOR, V ? 'V' : 'N', 'L', (int)n, buf, (int)n, w.v.data + b * n);
    st = tfe__lapack_info(info, "heevd", TFE__LA_WHERE(eigh));
#else
    int info = (int)TFE__LP(syevd)(LAPACK_COL_MAJOR, V ? 'V' : 'N', 'L', (int)n, buf, (int)n, w.v.data + b * n);
    st = tfe__lapack_info(info, "syevd", TFE__LA_WHERE(eigh));
#endif
    if (!st && info > 0)
      st = TFE_FAIL_AT(TFE_ERR_NOCONV, TFE__LA_WHERE(eigh), "eigensolver did not converge on batch item %lld (info %d)", (long long)b, info);
  }
  tfe__free(work);
  tfe__mat_free(&M);
  if (st) { TFE_FN(tensor_release)(&v); TFE_CAT(tfe_tensor_release_, TFE__RS)(&w); return st; }
  *W = w;
  if (V) *V = v;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(eig_cpu_)(const TFE_TY(view) *A, TFE__CT *W, TFE__CT *V) {
  TFE__LA_CHECK_NULL(W, TFE__LA_WHERE(eig));
  tfe__mat M;
  TFE_TRY(TFE_FN(la_square_)(A, &M, TFE__LA_WHERE(eig)));
  int64_t n = M.n;
  TFE_TY(la_shape_) sw = {0}, sv = {0};
  TFE__CT w = {0}, v = {0};
  TFE_T *work = NULL;
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 1, n, 0, &sw, TFE__LA_WHERE(eig));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, n, n, &sv, TFE__LA_WHERE(eig));
  if (!st) st = TFE_CAT(tfe_empty_, TFE__CS)(&w, sw.rank, sw.dims, TFE_COLMAJOR);
  if (!st && V) st = TFE_CAT(tfe_empty_, TFE__CS)(&v, sv.rank, sv.dims, TFE_COLMAJOR);
  if (!st) { /* A copy, plus (real kinds) wr, wi and the packed real eigenvectors */
    work = (TFE_T *)tfe__calloc((size_t)(2 * n * n + 2 * n + 1), sizeof(TFE_T));
    if (!work) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M.nbatch && n > 0; b++) {
    TFE_FN(la_pack_)(A, &M, b, work, n);
    TFE__CTY *wb = w.v.data + b * n, *vb = V ? v.v.data + b * n * n : NULL;
#if TFE_CPLX
    TFE_T dummy[1] = {0};
    int info = (int)TFE__LP(geev)(LAPACK_COL_MAJOR, 'N', V ? 'V' : 'N', (int)n, work, (int)n, wb, dummy, 1,
                                  V ? vb : dummy, V ? (int)n : 1);
#else
    TFE_T *wr = work + n * n, *wi = wr + n, *vr = wi + n, dummy[1] = {0};
    int info = (int)TFE__LP(geev)(LAPACK_COL_MAJOR, 'N', V ? 'V' : 'N', (int)n, work, (int)n, wr, wi, dummy, 1,
                                  V ? vr : dummy, V ? (int)n : 1);
    for (int64_t j = 0; info == 0 && j < n; j++) { /* unpack conjugate pairs (wi > 0 first) */
      wb[j] = wr[j] + (TFE__CTY)I * wi[j];
      if (!V) continue;
      if (wi[j] == 0) {
        for (int64_t i = 0; i < n; i++) vb[i + j * n] = vr[i + j * n];
      } else if (wi[j] > 0 && j + 1 < n) {
        for (int64_t i = 0; i < n; i++) {
          vb[i + j * n] = vr[i + j * n] + (TFE__CTY)I * vr[i + (j + 1) * n];
          vb[i + (j + 1) * n] = vr[i + j * n] - (TFE__CTY)I * vr[i + (j + 1) * n];
        }
      }
    }
#endif
    st = tfe__lapack_info(info, "geev", TFE__LA_WHERE(eig));
    if (!st && info > 0)
      st = TFE_FAIL_AT(TFE_ERR_NOCONV, TFE__LA_WHERE(eig), "QR algorithm did not converge on batch item %lld (info %d)", (long long)b, info);
  }
  tfe__free(work);
  tfe__mat_free(&M);
  if (st) { TFE_CAT(tfe_tensor_release_, TFE__CS)(&w); TFE_CAT(tfe_tensor_release_, TFE__CS)(&v); return st; }
  *W = w;
  if (V) *V = v;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(lu_cpu_)(const TFE_TY(view) *A, tfe_tensor_i64 *perm, TFE_TY(tensor) *L, TFE_TY(tensor) *U) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(lu)));
  TFE__LA_CHECK_NULL(perm, TFE__LA_WHERE(lu));
  TFE__LA_CHECK_NULL(L, TFE__LA_WHERE(lu));
  TFE__LA_CHECK_NULL(U, TFE__LA_WHERE(lu));
  tfe__mat M;
  TFE_TRY(tfe__mat_batched(&M, &A->lay, TFE__LA_WHERE(lu)));
  int64_t m = M.m, n = M.n, k = m < n ? m : n;
  TFE_TY(la_shape_) sp = {0}, sl = {0}, su = {0};
  TFE_TY(tensor) l = {0}, u = {0};
  tfe_tensor_i64 p = {0};
  TFE_T *work = NULL;
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 1, m, 0, &sp, TFE__LA_WHERE(lu));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, m, k, &sl, TFE__LA_WHERE(lu));
  if (!st) st = TFE_FN(la_bshape_)(&M, &A->lay, 2, k, n, &su, TFE__LA_WHERE(lu));
  if (!st) st = tfe_empty_i64(&p, sp.rank, sp.dims, TFE_COLMAJOR);
  if (!st) st = TFE_FN(empty)(&l, sl.rank, sl.dims, TFE_COLMAJOR);
  if (!st) st = TFE_FN(empty)(&u, su.rank, su.dims, TFE_COLMAJOR);
  lapack_int *ipiv = NULL;
  if (!st) {
    work = (TFE_T *)tfe__calloc((size_t)(m * n + 1), sizeof(TFE_T));
    ipiv = (lapack_int *)tfe__calloc((size_t)(k + 1), sizeof(lapack_int));
    if (!work || !ipiv) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M.nbatch; b++) {
    TFE_FN(la_pack_)(A, &M, b, work, m);
    if (k > 0) st = tfe__lapack_info((int)TFE__LP(getrf)(LAPACK_COL_MAJOR, (int)m, (int)n, work, (int)m, ipiv), "getrf", TFE__LA_WHERE(lu));
    if (st) break;
    int64_t *pb = p.v.data + b * m;
    TFE_T *lb = l.v.data + b * m * k, *ub = u.v.data + b * k * n;
    for (int64_t i = 0; i < m; i++) pb[i] = i;
    for (int64_t i = 0; i < k; i++) { /* ipiv: row i was swapped with row ipiv[i] - 1 */
      int64_t t = pb[i], o = ipiv[i] - 1;
      pb[i] = pb[o]; pb[o] = t;
    }
    for (int64_t j = 0; j < k; j++)
      for (int64_t i = 0; i < m; i++) lb[i + j * m] = i > j ? work[i + j * m] : (i == j ? (TFE_T)1 : (TFE_T)0);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < k; i++) ub[i + j * k] = i <= j ? work[i + j * m] : (TFE_T)0;
  }
  tfe__free(work);
  tfe__free(ipiv);
  tfe__mat_free(&M);
  if (st) { tfe_tensor_release_i64(&p); TFE_FN(tensor_release)(&l); TFE_FN(tensor_release)(&u); return st; }
  *perm = p; *L = l; *U = u;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(cholesky_cpu_)(const TFE_TY(view) *A, TFE_TY(tensor) *L) {
  TFE__LA_CHECK_NULL(L, TFE__LA_WHERE(cholesky));
  tfe__mat M;
  TFE_TRY(TFE_FN(la_square_)(A, &M, TFE__LA_WHERE(cholesky)));
  int64_t n = M.n;
  TFE_TY(la_shape_) sl = {0};
  TFE_TY(tensor) l = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 2, n, n, &sl, TFE__LA_WHERE(cholesky));
  if (!st) st = TFE_FN(empty)(&l, sl.rank, sl.dims, TFE_COLMAJOR);
  for (int64_t b = 0; !st && b < M.nbatch && n > 0; b++) {
    TFE_T *lb = l.v.data + b * n * n;
    TFE_FN(la_pack_)(A, &M, b, lb, n);
    int info = (int)TFE__LP(potrf)(LAPACK_COL_MAJOR, 'L', (int)n, lb, (int)n);
    st = tfe__lapack_info(info, "potrf", TFE__LA_WHERE(cholesky));
    if (!st && info > 0)
      st = TFE_FAIL_AT(TFE_ERR_SINGULAR, TFE__LA_WHERE(cholesky), "batch item %lld is not positive definite (leading minor %d)", (long long)b, info);
    for (int64_t j = 1; !st && j < n; j++)
      for (int64_t i = 0; i < j; i++) lb[i + j * n] = 0;
  }
  tfe__mat_free(&M);
  if (st) { TFE_FN(tensor_release)(&l); return st; }
  *L = l;
  return TFE_OK;
}
/* ---- the entry points: the backend chosen for the call runs them ------------------------------ */
/* Each runs on the backend chosen for its operands (prims/registry.h; views: host memory): the
 * CPU backend's linalg slot is the LAPACKE code above, any other backend's slot gets the call. */
TFE_API tfe_status TFE_FN(svd)(const TFE_TY(view) *A, tfe_svd_mode mode, TFE_TY(tensor) *U, TFE__RT *S,
                               TFE_TY(tensor) *Vh) {
  TFE__LA_DISPATCH(TFE_LA_SVD, TFE_FN(svd_cpu_)(A, mode, U, S, Vh), (void *)&A, (void *)&mode, (void *)&U, (void *)&S, (void *)&Vh);
}
TFE_API tfe_status TFE_FN(svd_nd)(const TFE_TY(view) *A, int nrow, const int *row_axes, tfe_svd_mode mode,
                                  TFE_TY(tensor) *U, TFE__RT *S, TFE_TY(tensor) *Vh) {
  TFE__LA_DISPATCH(TFE_LA_SVD_ND, TFE_FN(svd_nd_cpu_)(A, nrow, row_axes, mode, U, S, Vh), (void *)&A, (void *)&nrow, (void *)&row_axes, (void *)&mode, (void *)&U, (void *)&S, (void *)&Vh);
}
TFE_API tfe_status TFE_FN(svd_trunc)(const TFE_TY(view) *A, int nrow, const int *row_axes, const tfe_trunc *tr,
                                     TFE_TY(tensor) *U, TFE__RT *S, TFE_TY(tensor) *Vh, tfe_trunc_info *info) {
  TFE__LA_DISPATCH(TFE_LA_SVD_TRUNC, TFE_FN(svd_trunc_cpu_)(A, nrow, row_axes, tr, U, S, Vh, info), (void *)&A, (void *)&nrow, (void *)&row_axes, (void *)&tr, (void *)&U, (void *)&S, (void *)&Vh, (void *)&info);
}
TFE_API tfe_status TFE_FN(qr)(const TFE_TY(view) *A, bool full, TFE_TY(tensor) *Q, TFE_TY(tensor) *R) {
  TFE__LA_DISPATCH(TFE_LA_QR, TFE_FN(qr_cpu_)(A, full, Q, R), (void *)&A, (void *)&full, (void *)&Q, (void *)&R);
}
TFE_API tfe_status TFE_FN(qr_nd)(const TFE_TY(view) *A, int nrow, const int *row_axes, bool full, TFE_TY(tensor) *Q,
                                 TFE_TY(tensor) *R) {
  TFE__LA_DISPATCH(TFE_LA_QR_ND, TFE_FN(qr_nd_cpu_)(A, nrow, row_axes, full, Q, R), (void *)&A, (void *)&nrow, (void *)&row_axes, (void *)&full, (void *)&Q, (void *)&R);
}
TFE_API tfe_status TFE_FN(lq)(const TFE_TY(view) *A, bool full, TFE_TY(tensor) *L, TFE_TY(tensor) *Q) {
  TFE__LA_DISPATCH(TFE_LA_LQ, TFE_FN(lq_cpu_)(A, full, L, Q), (void *)&A, (void *)&full, (void *)&L, (void *)&Q);
}
TFE_API tfe_status TFE_FN(lq_nd)(const TFE_TY(view) *A, int nrow, const int *row_axes, bool full, TFE_TY(tensor) *L,
                                 TFE_TY(tensor) *Q) {
  TFE__LA_DISPATCH(TFE_LA_LQ_ND, TFE_FN(lq_nd_cpu_)(A, nrow, row_axes, full, L, Q), (void *)&A, (void *)&nrow, (void *)&row_axes, (void *)&full, (void *)&L, (void *)&Q);
}
TFE_API tfe_status TFE_FN(eigh)(const TFE_TY(view) *A, TFE__RT *W, TFE_TY(tensor) *V) {
  TFE__LA_DISPATCH(TFE_LA_EIGH, TFE_FN(eigh_cpu_)(A, W, V), (void *)&A, (void *)&W, (void *)&V);
}
TFE_API tfe_status TFE_FN(eig)(const TFE_TY(view) *A, TFE__CT *W, TFE__CT *V) {
  TFE__LA_DISPATCH(TFE_LA_EIG, TFE_FN(eig_cpu_)(A, W, V), (void *)&A, (void *)&W, (void *)&V);
}
TFE_API tfe_status TFE_FN(lu)(const TFE_TY(view) *A, tfe_tensor_i64 *perm, TFE_TY(tensor) *L, TFE_TY(tensor) *U) {
  TFE__LA_DISPATCH(TFE_LA_LU, TFE_FN(lu_cpu_)(A, perm, L, U), (void *)&A, (void *)&perm, (void *)&L, (void *)&U);
}
TFE_API tfe_status TFE_FN(cholesky)(const TFE_TY(view) *A, TFE_TY(tensor) *L) {
  TFE__LA_DISPATCH(TFE_LA_CHOLESKY, TFE_FN(cholesky_cpu_)(A, L), (void *)&A, (void *)&L);
}
#undef TFE__LP
#undef TFE__RS
#undef TFE__CS
#undef TFE__RT
#undef TFE__CT
#undef TFE__CTY
#endif /* TFE_FLOAT */
#endif
