/* tenferro/linalg_ops_tpl.h — solvers, inverses, determinants, norms, expm and polar of one
 * float kind; re-included per kind by linalg.h (no include guard). */
#if !TFE__BODY_PHASE
#if TFE_FLOAT

#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

/* ---- solvers -------------------------------------------------------------------------------- */
/* X = A^-1 B for square A (n, n, batch...) and B (n, r, batch...) or (n, batch...). Singular A:
 * TFE_ERR_SINGULAR. */
TFE_API tfe_status TFE_FN(solve)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X);

/* X = T^-1 B for triangular T (only the lower or upper triangle of A is read; unit_diag: the
 * diagonal is taken as ones). A is passed to LAPACK without a copy when its columns are
 * unit-stride and not lazily conjugated. A zero on the diagonal: TFE_ERR_SINGULAR. */
TFE_API tfe_status TFE_FN(trisolve)(const TFE_TY(view) *A, const TFE_TY(view) *B, bool lower, bool unit_diag,
                                    TFE_TY(tensor) *X);

/* Least squares: X (n, r, batch...) minimizes |A X - B| for A (m, n, batch...), B (m, r, batch...)
 * or (m, batch...); rank-deficient A gets the minimum-norm solution (gelsd, rcond = eps). */
TFE_API tfe_status TFE_FN(lstsq)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X);

/* ---- inverse, determinant ------------------------------------------------------------------- */
/* X = A^-1 (n, n, batch...). Singular A: TFE_ERR_SINGULAR. */
TFE_API tfe_status TFE_FN(inv)(const TFE_TY(view) *A, TFE_TY(tensor) *X);

/* det(A) for each batch item: a tensor of the batch shape (rank 0 for one matrix). */
TFE_API tfe_status TFE_FN(det)(const TFE_TY(view) *A, TFE_TY(tensor) *D);

/* det(A) = sign * exp(logabs): sign has |sign| = 1 (0 when A is singular, then logabs = -inf). */
TFE_API tfe_status TFE_FN(slogdet)(const TFE_TY(view) *A, TFE_TY(tensor) *sign, TFE__RT *logabs);

/* ---- pseudo-inverse and polar --------------------------------------------------------------- */
/* X = A^+ (n, m, batch...) from the SVD; singular values <= rcond * s_max count as zero
 * (rcond < 0: max(m, n) * eps). */
TFE_API tfe_status TFE_FN(pinv)(const TFE_TY(view) *A, double rcond, TFE_TY(tensor) *X);

/* Polar decomposition A = Up P: Up (m, n, batch...) with orthonormal columns (rows when m < n),
 * P (n, n, batch...) Hermitian positive semidefinite; from the SVD (Up = U Vh, P = V S V^H). */
TFE_API tfe_status TFE_FN(polar)(const TFE_TY(view) *A, TFE_TY(tensor) *Up, TFE_TY(tensor) *P);

/* Matrix norm of each batch item into a real tensor of the batch shape. */
TFE_API tfe_status TFE_FN(norm)(const TFE_TY(view) *A, tfe_norm_kind kind, TFE__RT *out);

/* X = exp(A) for square A (n, n, batch...). */
TFE_API tfe_status TFE_FN(expm)(const TFE_TY(view) *A, TFE_TY(tensor) *X);

#undef TFE__LP
#undef TFE__RS
#undef TFE__RT
#endif /* TFE_FLOAT */
#else /* bodies */
#if TFE_FLOAT
#define TFE__LP(name) TFE_CAT(TFE_CAT(LAPACKE_, TFE_CAT(TFE__LPFX_, TFE_S)), name)
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_S)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)

/* The right-hand side of a batched solve: B (rows, r, batch...) with A's batch shape, or a
 * vector B (rows, batch...) when its rank is one less than A's. */
TFE_INTERNAL tfe_status TFE_FN(la_rhs_)(const TFE_TY(view) *A, int64_t rows, const TFE_TY(view) *B, tfe__mat *MB,
                                        bool *vec, const char *fn) {
  if (!B) return tfe__fail(TFE_ERR_NULL, fn, "argument 'B' is NULL");
  TFE_TRY(TFE_FN(la_check_view_)(B, fn));
  int ra = A->lay.rank, rb = B->lay.rank;
  if (rb != ra && rb != ra - 1)
    return tfe__fail(TFE_ERR_RANK, fn, "B has rank %d; expected %d (matrix) or %d (vector)", rb, ra, ra - 1);
  *vec = rb == ra - 1;
  TFE_TRY(tfe__mat_same_batch(&A->lay, 2, &B->lay, *vec ? 1 : 2, fn));
  if (B->lay.dims[0] != rows)
    return tfe__fail(TFE_ERR_SHAPE, fn, "B has %lld rows, A needs %lld", (long long)B->lay.dims[0], (long long)rows);
  if (!*vec) return tfe__mat_batched(MB, &B->lay, fn);
  int r = 0, b[TFE_MAX_RANK];
  for (int i = 1; i < rb; i++) b[i - 1] = i;
  return tfe__mat_init(MB, &B->lay, 1, &r, 0, NULL, rb - 1, b, fn);
}

/* A new tensor shaped like B with its row count replaced. */
TFE_INTERNAL tfe_status TFE_FN(la_like_rows_)(const TFE_TY(view) *B, int64_t rows, TFE_TY(tensor) *X) {
  tfe_layout L = B->lay;
  L.dims[0] = rows;
  return TFE_FN(empty)(X, L.rank, L.dims, TFE_COLMAJOR);
}
TFE_INTERNAL tfe_status TFE_FN(solve_cpu_)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X) {
  TFE__LA_CHECK_NULL(X, TFE__LA_WHERE(solve));
  tfe__mat MA, MB;
  TFE_TRY(TFE_FN(la_square_)(A, &MA, TFE__LA_WHERE(solve)));
  bool vec = false;
  tfe_status st = TFE_FN(la_rhs_)(A, MA.n, B, &MB, &vec, TFE__LA_WHERE(solve));
  if (st) { tfe__mat_free(&MA); return st; }
  int64_t n = MA.n, r = MB.n;
  TFE_TY(tensor) x = {0};
  TFE_T *work = NULL;
  lapack_int *ipiv = NULL;
  st = TFE_FN(la_like_rows_)(B, n, &x);
  if (!st) {
    work = (TFE_T *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_T));
    ipiv = (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
    if (!work || !ipiv) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < MA.nbatch && n > 0; b++) {
    TFE_T *xb = x.v.data + b * n * r;
    TFE_FN(la_pack_)(A, &MA, b, work, n);
    TFE_FN(la_pack_)(B, &MB, b, xb, n);
    int info = (int)TFE__LP(gesv)(LAPACK_COL_MAJOR, (int)n, (int)r, work, (int)n, ipiv, xb, (int)n);
    st = tfe__lapack_info(info, "gesv", TFE__LA_WHERE(solve));
    if (!st && info > 0)
      st = TFE_FAIL_AT(TFE_ERR_SINGULAR, TFE__LA_WHERE(solve), "batch item %lld is singular (U(%d,%d) = 0)", (long long)b, info - 1, info - 1);
  }
  tfe__free(work);
  tfe__free(ipiv);
  tfe__mat_free(&MA);
  tfe__mat_free(&MB);
  if (st) { TFE_FN(tensor_release)(&x); return st; }
  *X = x;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(trisolve_cpu_)(const TFE_TY(view) *A, const TFE_TY(view) *B, bool lower, bool unit_diag,
                                    TFE_TY(tensor) *X) {
  TFE__LA_CHECK_NULL(X, TFE__LA_WHERE(trisolve));
  tfe__mat MA, MB;
  TFE_TRY(TFE_FN(la_square_)(A, &MA, TFE__LA_WHERE(trisolve)));
  bool vec = false;
  tfe_status st = TFE_FN(la_rhs_)(A, MA.n, B, &MB, &vec, TFE__LA_WHERE(trisolve));
  if (st) { tfe__mat_free(&MA); return st; }
  int64_t n = MA.n, r = MB.n;
  bool direct = n > 0 && A->lay.strides[0] == 1 && A->lay.strides[1] >= n && A->lay.strides[1] <= INT_MAX &&
                !(TFE_CPLX && A->conj);
  TFE_TY(tensor) x = {0};
  TFE_T *work = NULL;
  st = TFE_FN(la_like_rows_)(B, n, &x);
  if (!st && !direct) {
    work = (TFE_T *)tfe__calloc((size_t)(n * n + 1), sizeof(TFE_T));
    if (!work) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < MA.nbatch && n > 0; b++) {
    TFE_T *xb = x.v.data + b * n * r;
    const TFE_T *ab = work;
    int64_t lda = n;
    if (direct) { ab = A->data + MA.boff[b]; lda = A->lay.strides[1]; }
    else TFE_FN(la_pack_)(A, &MA, b, work, n);
    TFE_FN(la_pack_)(B, &MB, b, xb, n);
    int info = (int)TFE__LP(trtrs)(LAPACK_COL_MAJOR, lower ? 'L' : 'U', 'N', unit_diag ? 'U' : 'N', (int)n, (int)r,
                                   ab, (int)lda, xb, (int)n);
    st = tfe__lapack_info(info, "trtrs", TFE__LA_WHERE(trisolve));
    if (!st && info > 0)
      st = TFE_FAIL_AT(TFE_ERR_SINGULAR, TFE__LA_WHERE(trisolve), "batch item %lld: zero on the diagonal at %d", (long long)b, info - 1);
  }
  tfe__free(work);
  tfe__mat_free(&MA);
  tfe__mat_free(&MB);
  if (st) { TFE_FN(tensor_release)(&x); return st; }
  *X = x;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(lstsq_cpu_)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(lstsq)));
  TFE__LA_CHECK_NULL(X, TFE__LA_WHERE(lstsq));
  tfe__mat MA, MB;
  TFE_TRY(tfe__mat_batched(&MA, &A->lay, TFE__LA_WHERE(lstsq)));
  bool vec = false;
  tfe_status st = TFE_FN(la_rhs_)(A, MA.m, B, &MB, &vec, TFE__LA_WHERE(lstsq));
  if (st) { tfe__mat_free(&MA); return st; }
  int64_t m = MA.m, n = MA.n, r = MB.n, ld = m > n ? m : n, k = m < n ? m : n;
  TFE_TY(tensor) x = {0};
  TFE_T *work = NULL;
  TFE_R *sv = NULL;
  st = TFE_FN(la_like_rows_)(B, n, &x);
  if (!st) {
    work = (TFE_T *)tfe__calloc((size_t)(m * n + ld * r + 1), sizeof(TFE_T));
    sv = (TFE_R *)tfe__calloc((size_t)(k + 1), sizeof(TFE_R));
    if (!work || !sv) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < MA.nbatch; b++) {
    TFE_T *bw = work + m * n, *xb = x.v.data + b * n * r;
    if (k == 0 || r == 0) { for (int64_t i = 0; i < n * r; i++) xb[i] = 0; continue; } /* gelsd wants nrhs >= 1 */
    TFE_FN(la_pack_)(A, &MA, b, work, m);
    for (int64_t i = 0; i < ld * r; i++) bw[i] = 0;
    TFE_FN(la_pack_)(B, &MB, b, bw, ld);
    lapack_int rank = 0;
    int info = (int)TFE__LP(gelsd)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)r, work, (int)m, bw, (int)ld, sv,
                                   (TFE_R)-1, &rank);
    st = tfe__lapack_info(info, "gelsd", TFE__LA_WHERE(lstsq));
    if (!st && info > 0) st = TFE_FAIL_AT(TFE_ERR_NOCONV, TFE__LA_WHERE(lstsq), "SVD in gelsd did not converge (info %d)", info);
    for (int64_t j = 0; !st && j < r; j++)
      for (int64_t i = 0; i < n; i++) xb[i + j * n] = bw[i + j * ld];
  }
  tfe__free(work);
  tfe__free(sv);
  tfe__mat_free(&MA);
  tfe__mat_free(&MB);
  if (st) { TFE_FN(tensor_release)(&x); return st; }
  *X = x;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(inv_cpu_)(const TFE_TY(view) *A, TFE_TY(tensor) *X) {
  TFE__LA_CHECK_NULL(X, TFE__LA_WHERE(inv));
  tfe__mat M;
  TFE_TRY(TFE_FN(la_square_)(A, &M, TFE__LA_WHERE(inv)));
  int64_t n = M.n;
  TFE_TY(tensor) x = {0};
  lapack_int *ipiv = NULL;
  TFE_TY(la_shape_) sx = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 2, n, n, &sx, TFE__LA_WHERE(inv));
  if (!st) st = TFE_FN(empty)(&x, sx.rank, sx.dims, TFE_COLMAJOR);
  if (!st) {
    ipiv = (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
    if (!ipiv) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M.nbatch && n > 0; b++) {
    TFE_T *xb = x.v.data + b * n * n;
    TFE_FN(la_pack_)(A, &M, b, xb, n);
    int info = (int)TFE__LP(getrf)(LAPACK_COL_MAJOR, (int)n, (int)n, xb, (int)n, ipiv);
    st = tfe__lapack_info(info, "getrf", TFE__LA_WHERE(inv));
    if (!st && info > 0)
      st = TFE_FAIL_AT(TFE_ERR_SINGULAR, TFE__LA_WHERE(inv), "batch item %lld is singular (U(%d,%d) = 0)", (long long)b, info - 1, info - 1);
    if (!st) st = tfe__lapack_info((int)TFE__LP(getri)(LAPACK_COL_MAJOR, (int)n, xb, (int)n, ipiv), "getri", TFE__LA_WHERE(inv));
  }
  tfe__free(ipiv);
  tfe__mat_free(&M);
  if (st) { TFE_FN(tensor_release)(&x); return st; }
  *X = x;
  return TFE_OK;
}

/* LU of each batch item: sign (or phase) and log|det| (or the product when logs is false). */
TFE_INTERNAL tfe_status TFE_FN(la_detcore_)(const TFE_TY(view) *A, bool logs, TFE_TY(tensor) *D, TFE__RT *LA,
                                            const char *fn) {
  tfe__mat M;
  TFE_TRY(TFE_FN(la_square_)(A, &M, fn));
  int64_t n = M.n;
  TFE_TY(tensor) d = {0};
  TFE__RT la = {0};
  TFE_T *work = NULL;
  lapack_int *ipiv = NULL;
  TFE_TY(la_shape_) sd = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 0, 0, 0, &sd, fn);
  if (!st) st = TFE_FN(empty)(&d, sd.rank, sd.dims, TFE_COLMAJOR);
  if (!st && logs) st = TFE_CAT(tfe_empty_, TFE__RS)(&la, sd.rank, sd.dims, TFE_COLMAJOR);
  if (!st) {
    work = (TFE_T *)tfe__calloc_at((size_t)(n * n + 1), sizeof(TFE_T), fn);
    ipiv = (lapack_int *)tfe__calloc_at((size_t)(n + 1), sizeof(lapack_int), fn);
    if (!work || !ipiv) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M.nbatch; b++) {
    TFE_T sign = 1, prod = 1;
    double lg = 0;
    if (n > 0) {
      TFE_FN(la_pack_)(A, &M, b, work, n);
      int info = (int)TFE__LP(getrf)(LAPACK_COL_MAJOR, (int)n, (int)n, work, (int)n, ipiv);
      st = tfe__lapack_info(info, "getrf", fn);
      if (st) break;
    }
    for (int64_t i = 0; i < n; i++) {
      TFE_T u = work[i + i * n];
      if (ipiv[i] != i + 1) { sign = -sign; prod = -prod; }
      prod *= u;
      TFE_R a = TFE_FN(la_abs_)(u);
      sign *= a > 0 ? u / a : (TFE_T)0; /* a singular matrix has sign 0 and log|det| = -inf */
      lg += log((double)a);
    }
    d.v.data[b] = logs ? sign : prod;
    if (logs) la.v.data[b] = (TFE_R)lg;
  }
  tfe__free(work);
  tfe__free(ipiv);
  tfe__mat_free(&M);
  if (st) { TFE_FN(tensor_release)(&d); TFE_CAT(tfe_tensor_release_, TFE__RS)(&la); return st; }
  *D = d;
  if (logs) *LA = la;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(det_cpu_)(const TFE_TY(view) *A, TFE_TY(tensor) *D) {
  TFE__LA_CHECK_NULL(D, TFE__LA_WHERE(det));
  return TFE_FN(la_detcore_)(A, false, D, NULL, TFE__LA_WHERE(det));
}
TFE_INTERNAL tfe_status TFE_FN(slogdet_cpu_)(const TFE_TY(view) *A, TFE_TY(tensor) *sign, TFE__RT *logabs) {
  TFE__LA_CHECK_NULL(sign, TFE__LA_WHERE(slogdet));
  TFE__LA_CHECK_NULL(logabs, TFE__LA_WHERE(slogdet));
  return TFE_FN(la_detcore_)(A, true, sign, logabs, TFE__LA_WHERE(slogdet));
}
TFE_INTERNAL tfe_status TFE_FN(pinv_cpu_)(const TFE_TY(view) *A, double rcond, TFE_TY(tensor) *X) {
  TFE__LA_CHECK_NULL(X, TFE__LA_WHERE(pinv));
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(pinv))); /* errors under pinv's name, not svd's */
  TFE_TY(tensor) u = {0}, v = {0}, x = {0};
  TFE__RT s = {0};
  TFE_TRY(TFE_FN(svd)(A, TFE_SVD_THIN, &u, &s, &v));
  int64_t m = u.v.lay.dims[0], k = s.v.lay.dims[0], n = v.v.lay.dims[1], nb = tfe_layout_numel(&s.v.lay) / (k > 0 ? k : 1);
  if (k == 0) nb = tfe_layout_numel(&A->lay) == 0 ? 0 : 1;
  if (rcond < 0) rcond = (double)(m > n ? m : n) * (double)TFE_FN(la_eps_)();
  tfe_layout L = A->lay;
  L.dims[0] = n; L.dims[1] = m;
  tfe_status st = TFE_FN(zeros)(&x, L.rank, L.dims, TFE_COLMAJOR);
  TFE_T *w = NULL;
  if (!st) {
    w = (TFE_T *)tfe__calloc((size_t)(n * k + 1), sizeof(TFE_T));
    if (!w) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < nb && k > 0; b++) {
    const TFE_R *sb = s.v.data + b * k;
    const TFE_T *ub = u.v.data + b * m * k, *vb = v.v.data + b * k * n;
    for (int64_t i = 0; i < k; i++) { /* w = Vh^H diag(1/s) with small values zeroed */
      TFE_R inv = sb[i] > rcond * sb[0] ? 1 / sb[i] : 0;
      for (int64_t j = 0; j < n; j++) w[j + i * n] = TFE_FN(la_conj_)(vb[i + j * k]) * inv;
    }
    TFE_FN(la_gemm_)('N', 'C', n, m, k, 1, w, n, ub, m, 0, x.v.data + b * n * m, n);
  }
  tfe__free(w);
  TFE_FN(tensor_release)(&u); TFE_FN(tensor_release)(&v); TFE_CAT(tfe_tensor_release_, TFE__RS)(&s);
  if (st) { TFE_FN(tensor_release)(&x); return st; }
  *X = x;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(polar_cpu_)(const TFE_TY(view) *A, TFE_TY(tensor) *Up, TFE_TY(tensor) *P) {
  TFE__LA_CHECK_NULL(Up, TFE__LA_WHERE(polar));
  TFE__LA_CHECK_NULL(P, TFE__LA_WHERE(polar));
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(polar)));
  TFE_TY(tensor) u = {0}, v = {0}, up = {0}, p = {0};
  TFE__RT s = {0};
  TFE_TRY(TFE_FN(svd)(A, TFE_SVD_THIN, &u, &s, &v));
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n, nb = tfe_layout_numel(&A->lay) / (m * n > 0 ? m * n : 1);
  if (m * n == 0) nb = 0;
  tfe_layout L = A->lay;
  tfe_status st = TFE_FN(zeros)(&up, L.rank, L.dims, TFE_COLMAJOR);
  L.dims[0] = n;
  if (!st) st = TFE_FN(zeros)(&p, L.rank, L.dims, TFE_COLMAJOR);
  TFE_T *w = NULL;
  if (!st) {
    w = (TFE_T *)tfe__calloc((size_t)(k * n + 1), sizeof(TFE_T));
    if (!w) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < nb; b++) {
    const TFE_T *ub = u.v.data + b * m * k, *vb = v.v.data + b * k * n;
    TFE_FN(la_gemm_)('N', 'N', m, n, k, 1, ub, m, vb, k, 0, up.v.data + b * m * n, m);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < k; i++) w[i + j * k] = s.v.data[b * k + i] * vb[i + j * k];
    TFE_FN(la_gemm_)('C', 'N', n, n, k, 1, vb, k, w, k, 0, p.v.data + b * n * n, n);
  }
  tfe__free(w);
  TFE_FN(tensor_release)(&u); TFE_FN(tensor_release)(&v); TFE_CAT(tfe_tensor_release_, TFE__RS)(&s);
  if (st) { TFE_FN(tensor_release)(&up); TFE_FN(tensor_release)(&p); return st; }
  *Up = up; *P = p;
  return TFE_OK;
}

/* ---- norms ------------------------------------------------------------------------------------ */
/* Frobenius norm with scaling against overflow: max |a| times sqrt(sum (a / max)^2). */
TFE_INTERNAL TFE_R TFE_FN(la_fro_)(const TFE_TY(view) *A, const tfe__mat *M, int64_t b) {
  const TFE_T *base = A->data + M->boff[b];
  double mx = 0, ss = 0;
  for (int64_t j = 0; j < M->n; j++)
    for (int64_t i = 0; i < M->m; i++) {
      double a = (double)TFE_FN(la_abs_)(base[M->roff[i] + M->coff[j]]);
      if (a > mx) mx = a;
    }
  if (mx == 0 || isinf(mx)) return (TFE_R)mx;
  for (int64_t j = 0; j < M->n; j++)
    for (int64_t i = 0; i < M->m; i++) {
      double a = (double)TFE_FN(la_abs_)(base[M->roff[i] + M->coff[j]]) / mx;
      ss += a * a;
    }
  return (TFE_R)(mx * sqrt(ss));
}

/* Largest column sum (one) or row sum of |a_ij|. */
TFE_INTERNAL TFE_R TFE_FN(la_norm1_)(const TFE_TY(view) *A, const tfe__mat *M, int64_t b, bool rows) {
  const TFE_T *base = A->data + M->boff[b];
  double best = 0;
  int64_t no = rows ? M->m : M->n, ni = rows ? M->n : M->m;
  for (int64_t o = 0; o < no; o++) {
    double sum = 0;
    for (int64_t i = 0; i < ni; i++) {
      int64_t off = rows ? M->roff[o] + M->coff[i] : M->roff[i] + M->coff[o];
      sum += (double)TFE_FN(la_abs_)(base[off]);
    }
    if (sum > best || isnan(sum)) best = sum;
  }
  return (TFE_R)best;
}
TFE_INTERNAL tfe_status TFE_FN(norm_cpu_)(const TFE_TY(view) *A, tfe_norm_kind kind, TFE__RT *out) {
  TFE_TRY(TFE_FN(la_check_view_)(A, TFE__LA_WHERE(norm)));
  TFE__LA_CHECK_NULL(out, TFE__LA_WHERE(norm));
  if ((unsigned)kind > (unsigned)TFE_NORM_INF) return TFE_FAIL_AT(TFE_ERR_INVALID, TFE__LA_WHERE(norm), "unknown norm kind %d", (int)kind);
  tfe__mat M;
  TFE_TRY(tfe__mat_batched(&M, &A->lay, TFE__LA_WHERE(norm)));
  TFE__RT r = {0}, s = {0};
  TFE_TY(la_shape_) sr = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 0, 0, 0, &sr, TFE__LA_WHERE(norm));
  if (!st) st = TFE_CAT(tfe_empty_, TFE__RS)(&r, sr.rank, sr.dims, TFE_COLMAJOR);
  int64_t k = M.m < M.n ? M.m : M.n;
  if (!st && (kind == TFE_NORM_NUC || kind == TFE_NORM_2) && k > 0)
    st = TFE_FN(svd)(A, TFE_SVD_VALUES, NULL, &s, NULL);
  for (int64_t b = 0; !st && b < M.nbatch; b++) {
    TFE_R v = 0;
    if (kind == TFE_NORM_FRO) v = TFE_FN(la_fro_)(A, &M, b);
    else if (kind == TFE_NORM_1 || kind == TFE_NORM_INF) v = TFE_FN(la_norm1_)(A, &M, b, kind == TFE_NORM_INF);
    else if (k > 0 && kind == TFE_NORM_2) v = s.v.data[b * k];
    else for (int64_t i = 0; i < k; i++) v += s.v.data[b * k + i];
    r.v.data[b] = v;
  }
  TFE_CAT(tfe_tensor_release_, TFE__RS)(&s);
  tfe__mat_free(&M);
  if (st) { TFE_CAT(tfe_tensor_release_, TFE__RS)(&r); return st; }
  *out = r;
  return TFE_OK;
}

/* ---- matrix exponential --------------------------------------------------------------------- */
/* exp of one n x n matrix in a (overwritten by the result) by scaling and squaring with the
 * degree-13 Pade approximant (Higham 2005, theta_13 = 5.37); w holds 7 n^2 scratch values. */
TFE_INTERNAL tfe_status TFE_FN(la_expm1_)(TFE_T *a, int64_t n, TFE_T *w, lapack_int *ipiv, const char *fn) {
  int64_t nn = n * n;
  TFE_T *a2 = w, *a4 = w + nn, *a6 = w + 2 * nn, *t = w + 3 * nn, *u = w + 4 * nn, *v = w + 5 * nn, *x = w + 6 * nn;
  double norm1 = 0, c[14];
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)TFE_FN(la_abs_)(a[i + j * n]);
    if (s > norm1) norm1 = s;
  }
  if (isnan(norm1) || isinf(norm1)) return tfe__fail(TFE_ERR_INVALID, fn, "matrix has a NaN or Inf entry");
  int sq = norm1 > 5.371920351148152 ? (int)ceil(log2(norm1 / 5.371920351148152)) : 0;
  TFE_T scale = (TFE_T)ldexp(1.0, -sq);
  for (int64_t i = 0; i < nn; i++) a[i] *= scale;
  c[0] = 1; /* Pade coefficients p_j = (26-j)! 13! / (26! j! (13-j)!) via their ratios */
  for (int j = 0; j < 13; j++) c[j + 1] = c[j] * (13 - j) / ((26.0 - j) * (j + 1));
  TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a, n, a, n, 0, a2, n);
  TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a2, n, a2, n, 0, a4, n);
  TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a4, n, a2, n, 0, a6, n);
  for (int64_t i = 0; i < nn; i++) t[i] = (TFE_T)c[13] * a6[i] + (TFE_T)c[11] * a4[i] + (TFE_T)c[9] * a2[i];
  for (int64_t i = 0; i < nn; i++) x[i] = (TFE_T)c[7] * a6[i] + (TFE_T)c[5] * a4[i] + (TFE_T)c[3] * a2[i];
  for (int64_t i = 0; i < n; i++) x[i + i * n] += (TFE_T)c[1];
  TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a6, n, t, n, 1, x, n);  /* x = A6 t + ... */
  TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a, n, x, n, 0, u, n);   /* U = A x */
  for (int64_t i = 0; i < nn; i++) t[i] = (TFE_T)c[12] * a6[i] + (TFE_T)c[10] * a4[i] + (TFE_T)c[8] * a2[i];
  for (int64_t i = 0; i < nn; i++) v[i] = (TFE_T)c[6] * a6[i] + (TFE_T)c[4] * a4[i] + (TFE_T)c[2] * a2[i];
  for (int64_t i = 0; i < n; i++) v[i + i * n] += (TFE_T)c[0];
  TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a6, n, t, n, 1, v, n);  /* V */
  for (int64_t i = 0; i < nn; i++) { TFE_T p = v[i] + u[i]; v[i] -= u[i]; a[i] = p; } /* a = V+U, v = V-U */
  int info = (int)TFE__LP(gesv)(LAPACK_COL_MAJOR, (int)n, (int)n, v, (int)n, ipiv, a, (int)n);
  TFE_TRY(tfe__lapack_info(info, "gesv", fn));
  if (info > 0) return tfe__fail(TFE_ERR_SINGULAR, fn, "Pade denominator is singular");
  for (int s = 0; s < sq; s++) {
    TFE_FN(la_gemm_)('N', 'N', n, n, n, 1, a, n, a, n, 0, x, n);
    memcpy(a, x, (size_t)nn * sizeof(TFE_T));
  }
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(expm_cpu_)(const TFE_TY(view) *A, TFE_TY(tensor) *X) {
  TFE__LA_CHECK_NULL(X, TFE__LA_WHERE(expm));
  tfe__mat M;
  TFE_TRY(TFE_FN(la_square_)(A, &M, TFE__LA_WHERE(expm)));
  int64_t n = M.n;
  TFE_TY(tensor) x = {0};
  TFE_T *w = NULL;
  lapack_int *ipiv = NULL;
  TFE_TY(la_shape_) sx = {0};
  tfe_status st = TFE_FN(la_bshape_)(&M, &A->lay, 2, n, n, &sx, TFE__LA_WHERE(expm));
  if (!st) st = TFE_FN(empty)(&x, sx.rank, sx.dims, TFE_COLMAJOR);
  if (!st) {
    w = (TFE_T *)tfe__calloc((size_t)(7 * n * n + 1), sizeof(TFE_T));
    ipiv = (lapack_int *)tfe__calloc((size_t)(n + 1), sizeof(lapack_int));
    if (!w || !ipiv) st = TFE_ERR_ALLOC;
  }
  for (int64_t b = 0; !st && b < M.nbatch && n > 0; b++) {
    TFE_T *xb = x.v.data + b * n * n;
    TFE_FN(la_pack_)(A, &M, b, xb, n);
    st = TFE_FN(la_expm1_)(xb, n, w, ipiv, TFE__LA_WHERE(expm));
  }
  tfe__free(w);
  tfe__free(ipiv);
  tfe__mat_free(&M);
  if (st) { TFE_FN(tensor_release)(&x); return st; }
  *X = x;
  return TFE_OK;
}
/* ---- the entry points: the backend chosen for the call runs them ------------------------------ */
/* Each runs on the backend chosen for its operands (prims/registry.h; views: host memory): the
 * CPU backend's linalg slot is the LAPACKE code above, any other backend's slot gets the call. */
TFE_API tfe_status TFE_FN(solve)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X) {
  TFE__LA_DISPATCH(TFE_LA_SOLVE, TFE_FN(solve_cpu_)(A, B, X), (void *)&A, (void *)&B, (void *)&X);
}
TFE_API tfe_status TFE_FN(trisolve)(const TFE_TY(view) *A, const TFE_TY(view) *B, bool lower, bool unit_diag,
                                    TFE_TY(tensor) *X) {
  TFE__LA_DISPATCH(TFE_LA_TRISOLVE, TFE_FN(trisolve_cpu_)(A, B, lower, unit_diag, X), (void *)&A, (void *)&B, (void *)&lower, (void *)&unit_diag, (void *)&X);
}
TFE_API tfe_status TFE_FN(lstsq)(const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_TY(tensor) *X) {
  TFE__LA_DISPATCH(TFE_LA_LSTSQ, TFE_FN(lstsq_cpu_)(A, B, X), (void *)&A, (void *)&B, (void *)&X);
}
TFE_API tfe_status TFE_FN(inv)(const TFE_TY(view) *A, TFE_TY(tensor) *X) {
  TFE__LA_DISPATCH(TFE_LA_INV, TFE_FN(inv_cpu_)(A, X), (void *)&A, (void *)&X);
}
TFE_API tfe_status TFE_FN(det)(const TFE_TY(view) *A, TFE_TY(tensor) *D) {
  TFE__LA_DISPATCH(TFE_LA_DET, TFE_FN(det_cpu_)(A, D), (void *)&A, (void *)&D);
}
TFE_API tfe_status TFE_FN(slogdet)(const TFE_TY(view) *A, TFE_TY(tensor) *sign, TFE__RT *logabs) {
  TFE__LA_DISPATCH(TFE_LA_SLOGDET, TFE_FN(slogdet_cpu_)(A, sign, logabs), (void *)&A, (void *)&sign, (void *)&logabs);
}
TFE_API tfe_status TFE_FN(pinv)(const TFE_TY(view) *A, double rcond, TFE_TY(tensor) *X) {
  TFE__LA_DISPATCH(TFE_LA_PINV, TFE_FN(pinv_cpu_)(A, rcond, X), (void *)&A, (void *)&rcond, (void *)&X);
}
TFE_API tfe_status TFE_FN(polar)(const TFE_TY(view) *A, TFE_TY(tensor) *Up, TFE_TY(tensor) *P) {
  TFE__LA_DISPATCH(TFE_LA_POLAR, TFE_FN(polar_cpu_)(A, Up, P), (void *)&A, (void *)&Up, (void *)&P);
}
TFE_API tfe_status TFE_FN(norm)(const TFE_TY(view) *A, tfe_norm_kind kind, TFE__RT *out) {
  TFE__LA_DISPATCH(TFE_LA_NORM, TFE_FN(norm_cpu_)(A, kind, out), (void *)&A, (void *)&kind, (void *)&out);
}
TFE_API tfe_status TFE_FN(expm)(const TFE_TY(view) *A, TFE_TY(tensor) *X) {
  TFE__LA_DISPATCH(TFE_LA_EXPM, TFE_FN(expm_cpu_)(A, X), (void *)&A, (void *)&X);
}
/* The CPU backend's linalg slot for this kind: the LAPACKE code of the call's function. */
#define TFE__CT TFE_CAT(tfe_tensor_, TFE_CAT(TFE__CSUF_, TFE_S))
TFE_INTERNAL tfe_status TFE_FN(la_cpu_call_)(const tfe_linalg_call *c) {
  switch ((tfe_linalg_op)c->op) {
  case TFE_LA_SVD:
    if (c->nargs != 5) break;
    return TFE_FN(svd_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(tfe_svd_mode *)c->args[1], *(TFE_TY(tensor) * *)c->args[2], *(TFE__RT * *)c->args[3], *(TFE_TY(tensor) * *)c->args[4]);
  case TFE_LA_SVD_ND:
    if (c->nargs != 7) break;
    return TFE_FN(svd_nd_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(int *)c->args[1], *(const int * *)c->args[2], *(tfe_svd_mode *)c->args[3], *(TFE_TY(tensor) * *)c->args[4], *(TFE__RT * *)c->args[5], *(TFE_TY(tensor) * *)c->args[6]);
  case TFE_LA_SVD_TRUNC:
    if (c->nargs != 8) break;
    return TFE_FN(svd_trunc_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(int *)c->args[1], *(const int * *)c->args[2], *(const tfe_trunc * *)c->args[3], *(TFE_TY(tensor) * *)c->args[4], *(TFE__RT * *)c->args[5], *(TFE_TY(tensor) * *)c->args[6], *(tfe_trunc_info * *)c->args[7]);
  case TFE_LA_QR:
    if (c->nargs != 4) break;
    return TFE_FN(qr_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(bool *)c->args[1], *(TFE_TY(tensor) * *)c->args[2], *(TFE_TY(tensor) * *)c->args[3]);
  case TFE_LA_QR_ND:
    if (c->nargs != 6) break;
    return TFE_FN(qr_nd_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(int *)c->args[1], *(const int * *)c->args[2], *(bool *)c->args[3], *(TFE_TY(tensor) * *)c->args[4], *(TFE_TY(tensor) * *)c->args[5]);
  case TFE_LA_LQ:
    if (c->nargs != 4) break;
    return TFE_FN(lq_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(bool *)c->args[1], *(TFE_TY(tensor) * *)c->args[2], *(TFE_TY(tensor) * *)c->args[3]);
  case TFE_LA_LQ_ND:
    if (c->nargs != 6) break;
    return TFE_FN(lq_nd_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(int *)c->args[1], *(const int * *)c->args[2], *(bool *)c->args[3], *(TFE_TY(tensor) * *)c->args[4], *(TFE_TY(tensor) * *)c->args[5]);
  case TFE_LA_EIGH:
    if (c->nargs != 3) break;
    return TFE_FN(eigh_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE__RT * *)c->args[1], *(TFE_TY(tensor) * *)c->args[2]);
  case TFE_LA_EIG:
    if (c->nargs != 3) break;
    return TFE_FN(eig_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE__CT * *)c->args[1], *(TFE__CT * *)c->args[2]);
  case TFE_LA_LU:
    if (c->nargs != 4) break;
    return TFE_FN(lu_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(tfe_tensor_i64 * *)c->args[1], *(TFE_TY(tensor) * *)c->args[2], *(TFE_TY(tensor) * *)c->args[3]);
  case TFE_LA_CHOLESKY:
    if (c->nargs != 2) break;
    return TFE_FN(cholesky_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE_TY(tensor) * *)c->args[1]);
  case TFE_LA_SOLVE:
    if (c->nargs != 3) break;
    return TFE_FN(solve_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(const TFE_TY(view) * *)c->args[1], *(TFE_TY(tensor) * *)c->args[2]);
  case TFE_LA_TRISOLVE:
    if (c->nargs != 5) break;
    return TFE_FN(trisolve_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(const TFE_TY(view) * *)c->args[1], *(bool *)c->args[2], *(bool *)c->args[3], *(TFE_TY(tensor) * *)c->args[4]);
  case TFE_LA_LSTSQ:
    if (c->nargs != 3) break;
    return TFE_FN(lstsq_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(const TFE_TY(view) * *)c->args[1], *(TFE_TY(tensor) * *)c->args[2]);
  case TFE_LA_INV:
    if (c->nargs != 2) break;
    return TFE_FN(inv_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE_TY(tensor) * *)c->args[1]);
  case TFE_LA_DET:
    if (c->nargs != 2) break;
    return TFE_FN(det_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE_TY(tensor) * *)c->args[1]);
  case TFE_LA_SLOGDET:
    if (c->nargs != 3) break;
    return TFE_FN(slogdet_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE_TY(tensor) * *)c->args[1], *(TFE__RT * *)c->args[2]);
  case TFE_LA_PINV:
    if (c->nargs != 3) break;
    return TFE_FN(pinv_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(double *)c->args[1], *(TFE_TY(tensor) * *)c->args[2]);
  case TFE_LA_POLAR:
    if (c->nargs != 3) break;
    return TFE_FN(polar_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE_TY(tensor) * *)c->args[1], *(TFE_TY(tensor) * *)c->args[2]);
  case TFE_LA_NORM:
    if (c->nargs != 3) break;
    return TFE_FN(norm_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(tfe_norm_kind *)c->args[1], *(TFE__RT * *)c->args[2]);
  case TFE_LA_EXPM:
    if (c->nargs != 2) break;
    return TFE_FN(expm_cpu_)(*(const TFE_TY(view) * *)c->args[0], *(TFE_TY(tensor) * *)c->args[1]);
  default:
    break;
  }
  return TFE_FAIL_AT(TFE_ERR_INVALID, "tfe_linalg", "linalg call %d with %d arguments is not one of tenferro's", c->op,
                     c->nargs);
}
#undef TFE__CT
#undef TFE__LP
#undef TFE__RS
#undef TFE__RT
#endif /* TFE_FLOAT */
#endif
