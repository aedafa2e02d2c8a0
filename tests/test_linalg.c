/* Linalg room: every factorization reconstructs its input, every solver solves, on random
 * inputs of every float kind with random strides (negative, padded, permuted), lazy conjugation,
 * batches, N-D row groupings and size-0/1 dims; references are naive complex-double loops.
 * The per-kind body is this same file re-included with TL_BODY defined. */
#ifndef TL_BODY
#include "testutil.h"

typedef double _Complex cd;

/* C (m x n) = op(A) op(B), ops 'N' or 'C', all column-major, naive reference. */
static void tl_mm(cd *C, const cd *A, char oa, const cd *B, char ob, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      cd s = 0;
      for (int64_t l = 0; l < k; l++) {
        cd a = oa == 'N' ? A[i + l * m] : conj(A[l + i * k]);
        cd b = ob == 'N' ? B[l + j * k] : conj(B[j + l * n]);
        s += a * b;
      }
      C[i + j * m] = s;
    }
}
static double tl_diff(const cd *a, const cd *b, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) if (cabs(a[i] - b[i]) > d || isnan(cabs(a[i] - b[i]))) d = cabs(a[i] - b[i]);
  return d;
}
static double tl_maxabs(const cd *a, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) if (cabs(a[i]) > d) d = cabs(a[i]);
  return d;
}
/* max |Q^H Q - I| for Q m x k (orthonormal columns). */
static double tl_orth_cols(const cd *Q, int64_t m, int64_t k) {
  double d = 0;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = 0; j < k; j++) {
      cd s = 0;
      for (int64_t l = 0; l < m; l++) s += conj(Q[l + i * m]) * Q[l + j * m];
      s -= i == j;
      if (cabs(s) > d) d = cabs(s);
    }
  return d;
}
/* max |Q Q^H - I| for Q k x n (orthonormal rows). */
static double tl_orth_rows(const cd *Q, int64_t k, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = 0; j < k; j++) {
      cd s = 0;
      for (int64_t l = 0; l < n; l++) s += Q[i + l * k] * conj(Q[j + l * k]);
      s -= i == j;
      if (cabs(s) > d) d = cabs(s);
    }
  return d;
}
/* det by Laplace expansion (n <= 6): an independent reference. */
static cd tl_det(const cd *A, int64_t n, int64_t ld) {
  if (n == 0) return 1;
  if (n == 1) return A[0];
  cd sub[36], d = 0;
  for (int64_t c = 0; c < n; c++) {
    for (int64_t j = 0, jj = 0; j < n; j++) {
      if (j == c) continue;
      for (int64_t i = 1; i < n; i++) sub[(i - 1) + jj * (n - 1)] = A[i + j * ld];
      jj++;
    }
    d += (c % 2 ? -1.0 : 1.0) * A[c * ld] * tl_det(sub, n - 1, n - 1);
  }
  return d;
}
/* exp(A) by scaling, 40 Taylor terms and squaring: independent of the Pade code. */
static void tl_expm(cd *X, const cd *A, int64_t n) {
  double nrm = tl_maxabs(A, n * n) * (double)n;
  int s = 0;
  while (nrm > 0.25) { nrm /= 2; s++; }
  cd *a = calloc((size_t)(n * n + 1), sizeof(cd)), *t = calloc((size_t)(n * n + 1), sizeof(cd)),
     *u = calloc((size_t)(n * n + 1), sizeof(cd));
  for (int64_t i = 0; i < n * n; i++) a[i] = ldexp(1.0, -s) * A[i];
  for (int64_t i = 0; i < n * n; i++) { X[i] = (i % (n + 1)) == 0; t[i] = X[i]; }
  for (int k = 1; k <= 40; k++) {
    tl_mm(u, t, 'N', a, 'N', n, n, n);
    for (int64_t i = 0; i < n * n; i++) { t[i] = u[i] / k; X[i] += t[i]; }
  }
  for (int k = 0; k < s; k++) {
    tl_mm(u, X, 'N', X, 'N', n, n, n);
    memcpy(X, u, (size_t)(n * n) * sizeof(cd));
  }
  free(a); free(t); free(u);
}

#define TL_CAT_(a, b) a##_##b
#define TL_CAT(a, b) TL_CAT_(a, b)
#define TL(name) TL_CAT(name, TS)
#define TFN(name) TL_CAT(tfe_##name, TS)
#define TTY(name) TL_CAT(tfe_##name, TS)

#define TL_BODY
#define TS f32
#define TT float
#define RS f32
#define CS c64
#define TCPLX 0
#define TTOL 2e-4
#include "test_linalg.c"
#undef TS
#undef TT
#undef RS
#undef CS
#undef TCPLX
#undef TTOL
#define TS f64
#define TT double
#define RS f64
#define CS c128
#define TCPLX 0
#define TTOL 1e-11
#include "test_linalg.c"
#undef TS
#undef TT
#undef RS
#undef CS
#undef TCPLX
#undef TTOL
#define TS c64
#define TT float _Complex
#define RS f32
#define CS c64
#define TCPLX 1
#define TTOL 2e-4
#include "test_linalg.c"
#undef TS
#undef TT
#undef RS
#undef CS
#undef TCPLX
#undef TTOL
#define TS c128
#define TT double _Complex
#define RS f64
#define CS c128
#define TCPLX 1
#define TTOL 1e-11
#include "test_linalg.c"
#undef TS
#undef TT
#undef RS
#undef CS
#undef TCPLX
#undef TTOL

/* ---- bad input (f64 and c128; the checks are the same code for every kind) ---------------- */
static void test_bad_input(void **s) {
  (void)s;
  tfe_tensor_f64 A = {0}, B = {0}, X = {0}, U = {0}, V = {0}, S = {0};
  assert_int_equal(tfe_zeros_f64(&A, 2, (int64_t[]){2, 3}, TFE_COLMAJOR), TFE_OK);
  TU_EXPECT_ERR(tfe_inv_f64(&A.v, &X), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_det_f64(&A.v, &X), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_cholesky_f64(&A.v, &X), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_eigh_f64(&A.v, &S, &V), TFE_ERR_SHAPE, "2 x 3");
  TU_EXPECT_ERR(tfe_svd_nd_f64(&A.v, 1, (int[]){2}, TFE_SVD_THIN, &U, &S, &V), TFE_ERR_INVALID, "outside");
  TU_EXPECT_ERR(tfe_svd_nd_f64(&A.v, 2, (int[]){1, 1}, TFE_SVD_THIN, &U, &S, &V), TFE_ERR_INVALID, "twice");
  TU_EXPECT_ERR(tfe_qr_nd_f64(&A.v, 3, (int[]){0, 1, 0}, false, &U, &V), TFE_ERR_INVALID, "3 row axes");
  TU_EXPECT_ERR(tfe_svd_f64(&A.v, (tfe_svd_mode)7, &U, &S, &V), TFE_ERR_INVALID, "mode");
  TU_EXPECT_ERR(tfe_svd_f64(&A.v, TFE_SVD_THIN, NULL, &S, &V), TFE_ERR_NULL, "'U'");
  TU_EXPECT_ERR(tfe_norm_f64(&A.v, (tfe_norm_kind)9, &S), TFE_ERR_INVALID, "norm kind");
  tfe_trunc bad = {-1, 0, false};
  TU_EXPECT_ERR(tfe_svd_trunc_f64(&A.v, 1, (int[]){0}, &bad, &U, &S, &V, NULL), TFE_ERR_INVALID, "max_rank");
  tfe_view_f64 vec = A.v;
  vec.lay.rank = 1;
  TU_EXPECT_ERR(tfe_qr_f64(&vec, false, &U, &V), TFE_ERR_RANK, "rank >= 2");
  TU_EXPECT_ERR(tfe_qr_f64(NULL, false, &U, &V), TFE_ERR_NULL, "'A'");
  tfe_tensor_release_f64(&A);

  /* singular and not positive definite inputs: a status, never NaNs */
  assert_int_equal(tfe_zeros_f64(&A, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_f64(&B, 2, (int64_t[]){3, 2}, TFE_COLMAJOR), TFE_OK);
  X.v.data = (double *)&X; /* sentinel: untouched on error */
  TU_EXPECT_ERR(tfe_solve_f64(&A.v, &B.v, &X), TFE_ERR_SINGULAR, "singular");
  TU_EXPECT_ERR(tfe_inv_f64(&A.v, &X), TFE_ERR_SINGULAR, "singular");
  TU_EXPECT_ERR(tfe_cholesky_f64(&A.v, &X), TFE_ERR_SINGULAR, "positive definite");
  TU_EXPECT_ERR(tfe_trisolve_f64(&A.v, &B.v, true, false, &X), TFE_ERR_SINGULAR, "zero on the diagonal");
  assert_ptr_equal(X.v.data, (double *)&X);
  X.v.data = NULL;
  /* det of a singular matrix is 0, slogdet gives sign 0 and -inf: no error */
  assert_int_equal(tfe_det_f64(&A.v, &X), TFE_OK);
  assert_true(X.v.data[0] == 0);
  tfe_tensor_release_f64(&X);
  tfe_tensor_f64 sg = {0};
  assert_int_equal(tfe_slogdet_f64(&A.v, &sg, &S), TFE_OK);
  assert_true(sg.v.data[0] == 0 && isinf(S.v.data[0]) && S.v.data[0] < 0);
  tfe_tensor_release_f64(&sg);
  tfe_tensor_release_f64(&S);
  /* shape and rank mismatches of a right-hand side */
  tfe_tensor_f64 B2 = {0};
  assert_int_equal(tfe_ones_f64(&B2, 2, (int64_t[]){4, 2}, TFE_COLMAJOR), TFE_OK);
  TU_EXPECT_ERR(tfe_solve_f64(&A.v, &B2.v, &X), TFE_ERR_SHAPE, "4 rows");
  tfe_tensor_release_f64(&B2);
  assert_int_equal(tfe_ones_f64(&B2, 4, (int64_t[]){3, 2, 2, 2}, TFE_COLMAJOR), TFE_OK);
  TU_EXPECT_ERR(tfe_solve_f64(&A.v, &B2.v, &X), TFE_ERR_RANK, "rank 4");
  tfe_tensor_release_f64(&B2);
  assert_int_equal(tfe_ones_f64(&B2, 3, (int64_t[]){3, 2, 2}, TFE_COLMAJOR), TFE_OK);
  tfe_tensor_f64 A3 = {0};
  assert_int_equal(tfe_ones_f64(&A3, 3, (int64_t[]){3, 3, 4}, TFE_COLMAJOR), TFE_OK);
  TU_EXPECT_ERR(tfe_solve_f64(&A3.v, &B2.v, &X), TFE_ERR_SHAPE, "batch axis 0");
  tfe_tensor_release_f64(&A3);
  tfe_tensor_release_f64(&B2);
  /* NaN input: LAPACKE refuses it, reported as invalid input */
  A.v.data[0] = NAN;
  TU_EXPECT_ERR(tfe_svd_f64(&A.v, TFE_SVD_THIN, &U, &S, &V), TFE_ERR_INVALID, "NaN");
  TU_EXPECT_ERR(tfe_expm_f64(&A.v, &X), TFE_ERR_INVALID, "NaN");
  tfe_tensor_release_f64(&A);
  tfe_tensor_release_f64(&B);
  /* a non-positive-definite complex matrix */
  tfe_tensor_c128 C = {0}, L = {0};
  assert_int_equal(tfe_full_c128(&C, 2, (int64_t[]){2, 2}, TFE_COLMAJOR, -1.0), TFE_OK);
  TU_EXPECT_ERR(tfe_cholesky_c128(&C.v, &L), TFE_ERR_SINGULAR, "leading minor 1");
  tfe_tensor_release_c128(&C);
}

/* Bad inputs of the remaining functions: non-square, wrong axes, right-hand sides. */
static void test_bad_input_more(void **s) {
  (void)s;
  tfe_tensor_f64 A = {0}, B = {0}, X = {0}, S = {0}, U = {0}, V = {0};
  tfe_tensor_c128 W = {0}, Vc = {0};
  tfe_trunc tr = {2, 0, false};
  assert_int_equal(tfe_ones_f64(&A, 2, (int64_t[]){2, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_f64(&B, 2, (int64_t[]){2, 2}, TFE_COLMAJOR), TFE_OK);
  X.v.data = (double *)&X; /* sentinel: untouched on error */
  TU_EXPECT_ERR(tfe_eig_f64(&A.v, &W, &Vc), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_expm_f64(&A.v, &X), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_slogdet_f64(&A.v, &X, &S), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_trisolve_f64(&A.v, &B.v, true, false, &X), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_solve_f64(&A.v, &B.v, &X), TFE_ERR_SHAPE, "square");
  assert_ptr_equal(X.v.data, (double *)&X);
  tfe_tensor_release_f64(&A);
  assert_int_equal(tfe_ones_f64(&A, 2, (int64_t[]){3, 2}, TFE_COLMAJOR), TFE_OK);
  TU_EXPECT_ERR(tfe_lstsq_f64(&A.v, &B.v, &X), TFE_ERR_SHAPE, "B has 2 rows, A needs 3");
  TU_EXPECT_ERR(tfe_svd_trunc_f64(&A.v, 1, (int[]){5}, &tr, &U, &S, &V, NULL), TFE_ERR_INVALID, "row axis 5");
  TU_EXPECT_ERR(tfe_lq_nd_f64(&A.v, 1, (int[]){-1}, false, &U, &V), TFE_ERR_INVALID, "row axis -1");
  TU_EXPECT_ERR(tfe_qr_nd_f64(&A.v, -1, (int[]){0}, false, &U, &V), TFE_ERR_INVALID, "-1 row axes");
  tfe_view_f64 vec = A.v;
  vec.lay.rank = 1;
  TU_EXPECT_ERR(tfe_pinv_f64(&vec, -1, &X), TFE_ERR_RANK, "rank >= 2");
  tfe_tensor_i64 pm = {0};
  TU_EXPECT_ERR(tfe_lu_f64(&vec, &pm, &U, &V), TFE_ERR_RANK, "rank >= 2");
  assert_ptr_equal(X.v.data, (double *)&X);
  X.v.data = NULL;
  tfe_tensor_release_f64(&A);
  tfe_tensor_release_f64(&B);
}

/* The dtype-tagged entries agree with the typed ones and refuse other kinds with a message. */
static void test_dyn(void **s) {
  (void)s;
  tu_rng r = {78};
  tfe_tensor_f64 A = {0}, B = {0}, S = {0}, Q = {0}, R = {0}, X = {0};
  assert_int_equal(tfe_empty_f64(&A, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_empty_f64(&B, 2, (int64_t[]){3, 2}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 9; i++) A.v.data[i] = tu_unif(&r) + (i % 4 == 0 ? 3 : 0);
  for (int i = 0; i < 6; i++) B.v.data[i] = tu_unif(&r);
  tfe_dyn a = {0}, b = {0}, u = {0}, sv = {0}, vh = {0}, q = {0}, rr = {0}, w = {0}, v = {0}, x = {0}, d = {0};
  assert_int_equal(tfe_view_to_dyn_f64(&A.v, &a), TFE_OK);
  assert_int_equal(tfe_view_to_dyn_f64(&B.v, &b), TFE_OK);
  assert_int_equal(tfe_svd_dyn(&a, TFE_SVD_THIN, &u, &sv, &vh), TFE_OK);
  assert_int_equal(tfe_svd_f64(&A.v, TFE_SVD_VALUES, NULL, &S, NULL), TFE_OK);
  assert_int_equal(sv.dtype, TFE_DT_F64);
  for (int i = 0; i < 3; i++) assert_true(fabs(((double *)sv.data)[i] - S.v.data[i]) < 1e-12);
  assert_int_equal(tfe_qr_dyn(&a, false, &q, &rr), TFE_OK);
  assert_int_equal(tfe_qr_f64(&A.v, false, &Q, &R), TFE_OK);
  for (int i = 0; i < 9; i++) assert_true(fabs(((double *)rr.data)[i] - R.v.data[i]) < 1e-12);
  assert_int_equal(tfe_eigh_dyn(&a, &w, &v), TFE_OK);
  assert_int_equal(w.dtype, TFE_DT_F64);
  { /* eig: W, V of the complex kind, the typed call's values */
    tfe_dyn we = {0}, ve = {0};
    tfe_tensor_c128 We = {0}, Ve = {0};
    assert_int_equal(tfe_eig_dyn(&a, &we, &ve), TFE_OK);
    assert_int_equal(tfe_eig_f64(&A.v, &We, &Ve), TFE_OK);
    assert_int_equal(we.dtype, TFE_DT_C128), assert_int_equal(ve.dtype, TFE_DT_C128);
    for (int i = 0; i < 3; i++) assert_true(cabs(((double _Complex *)we.data)[i] - We.v.data[i]) < 1e-12);
    for (int i = 0; i < 9; i++) assert_true(cabs(((double _Complex *)ve.data)[i] - Ve.v.data[i]) < 1e-12);
    tfe_dyn_release(&we), tfe_dyn_release(&ve), tfe_tensor_release_c128(&We), tfe_tensor_release_c128(&Ve);
  }
  assert_int_equal(tfe_solve_dyn(&a, &b, &x), TFE_OK);
  assert_int_equal(tfe_solve_f64(&A.v, &B.v, &X), TFE_OK);
  for (int i = 0; i < 6; i++) assert_true(fabs(((double *)x.data)[i] - X.v.data[i]) < 1e-12);
  tfe_dyn_release(&x);
  assert_int_equal(tfe_inv_dyn(&a, &x), TFE_OK);
  assert_int_equal(tfe_det_dyn(&a, &d), TFE_OK);
  assert_int_equal(d.lay.rank, 0);
  /* cholesky and lu: the typed results (A A^T + 3 I is positive definite) */
  tfe_tensor_f64 P = {0}, Lt = {0}, Ut = {0}, Lc = {0};
  tfe_tensor_i64 Pm = {0};
  tfe_dyn p = {0}, l = {0}, uu = {0}, lc = {0}, pd = {0};
  assert_int_equal(tfe_empty_f64(&P, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double t = i == j ? 3 : 0;
      for (int k = 0; k < 3; k++) t += A.v.data[i + 3 * k] * A.v.data[j + 3 * k];
      P.v.data[i + 3 * j] = t;
    }
  assert_int_equal(tfe_view_to_dyn_f64(&P.v, &pd), TFE_OK);
  assert_int_equal(tfe_cholesky_dyn(&pd, &lc), TFE_OK);
  assert_int_equal(tfe_cholesky_f64(&P.v, &Lc), TFE_OK);
  for (int i = 0; i < 9; i++) assert_true(fabs(((double *)lc.data)[i] - Lc.v.data[i]) < 1e-12);
  assert_int_equal(tfe_lu_dyn(&a, &p, &l, &uu), TFE_OK);
  assert_int_equal(tfe_lu_f64(&A.v, &Pm, &Lt, &Ut), TFE_OK);
  assert_int_equal(p.dtype, TFE_DT_I64);
  for (int i = 0; i < 3; i++) assert_int_equal(((int64_t *)p.data)[i], Pm.v.data[i]);
  for (int i = 0; i < 9; i++) assert_true(fabs(((double *)uu.data)[i] - Ut.v.data[i]) < 1e-12 && fabs(((double *)l.data)[i] - Lt.v.data[i]) < 1e-12);
  TU_EXPECT_ERR(tfe_cholesky_dyn(&b, &lc), TFE_ERR_SHAPE, "tfe_cholesky_f64: needs a square matrix");
  tfe_dyn_release(&p), tfe_dyn_release(&l), tfe_dyn_release(&uu), tfe_dyn_release(&lc);
  tfe_tensor_release_f64(&P), tfe_tensor_release_f64(&Lt), tfe_tensor_release_f64(&Ut), tfe_tensor_release_f64(&Lc);
  tfe_tensor_release_i64(&Pm);
  /* wrong kinds: integers, mixed kinds */
  tfe_tensor_i32 Ii = {0};
  tfe_tensor_f32 F = {0};
  tfe_dyn di = {0}, df = {0}, none = {0};
  assert_int_equal(tfe_ones_i32(&Ii, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_f32(&F, 2, (int64_t[]){3, 2}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_view_to_dyn_i32(&Ii.v, &di), TFE_OK);
  assert_int_equal(tfe_view_to_dyn_f32(&F.v, &df), TFE_OK);
  TU_EXPECT_ERR(tfe_svd_dyn(&di, TFE_SVD_THIN, &none, &none, &none), TFE_ERR_DTYPE, "tfe_svd_dyn: needs a float kind");
  TU_EXPECT_ERR(tfe_qr_dyn(&di, false, &none, &none), TFE_ERR_DTYPE, "got i32");
  TU_EXPECT_ERR(tfe_eigh_dyn(&di, &none, NULL), TFE_ERR_DTYPE, "got i32");
  TU_EXPECT_ERR(tfe_eig_dyn(&di, &none, NULL), TFE_ERR_DTYPE, "tfe_eig_dyn: needs a float kind");
  TU_EXPECT_ERR(tfe_eig_dyn(&a, NULL, NULL), TFE_ERR_NULL, "'W'");
  TU_EXPECT_ERR(tfe_eig_dyn(&b, &none, NULL), TFE_ERR_SHAPE, "square");
  assert_null(none.st);
  TU_EXPECT_ERR(tfe_inv_dyn(&di, &none), TFE_ERR_DTYPE, "tfe_inv_dyn");
  TU_EXPECT_ERR(tfe_cholesky_dyn(&di, &none), TFE_ERR_DTYPE, "tfe_cholesky_dyn: needs a float kind");
  TU_EXPECT_ERR(tfe_lu_dyn(&di, &none, &none, &none), TFE_ERR_DTYPE, "tfe_lu_dyn: needs a float kind");
  TU_EXPECT_ERR(tfe_lu_dyn(&a, NULL, &none, &none), TFE_ERR_NULL, "'perm'");
  TU_EXPECT_ERR(tfe_solve_dyn(&a, &df, &none), TFE_ERR_DTYPE, "A holds f64 elements but B holds f32");
  TU_EXPECT_ERR(tfe_solve_dyn(&a, NULL, &none), TFE_ERR_NULL, "'B'");
  TU_EXPECT_ERR(tfe_det_dyn(&df, &none), TFE_ERR_SHAPE, "square"); /* the typed checks still apply */
  assert_null(none.data);
  tfe_dyn *own[] = {&u, &sv, &vh, &q, &rr, &w, &v, &x, &d};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) tfe_dyn_release(own[i]);
  tfe_tensor_release_f64(&A); tfe_tensor_release_f64(&B); tfe_tensor_release_f64(&S); tfe_tensor_release_f64(&Q);
  tfe_tensor_release_f64(&R); tfe_tensor_release_f64(&X); tfe_tensor_release_i32(&Ii); tfe_tensor_release_f32(&F);
}

/* Every allocation failure is reported and nothing leaks. */
static void test_alloc_failures(void **s) {
  (void)s;
  tu_rng r = {77};
  tfe_tensor_c128 A = {0}, U = {0}, Vh = {0}, X = {0};
  tfe_tensor_f64 S = {0};
  assert_int_equal(tfe_empty_c128(&A, 3, (int64_t[]){4, 3, 2}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 24; i++) A.v.data[i] = tu_unif(&r) + 4.0 * (i % 13 == 0) + I * tu_unif(&r);
  for (long k = 0; k < 8; k++) {
    tu_fail_after(k);
    long live = tu_live_allocs;
    tfe_status st = tfe_svd_c128(&A.v, TFE_SVD_THIN, &U, &S, &Vh);
    if (st == TFE_OK) {
      tfe_tensor_release_c128(&U); tfe_tensor_release_c128(&Vh); tfe_tensor_release_f64(&S);
    } else {
      assert_int_equal(st, TFE_ERR_ALLOC);
      assert_non_null(strstr(tfe_last_error(), "allocation"));
    }
    assert_int_equal(tu_live_allocs, live);
    tu_fail_after(k);
    st = tfe_pinv_c128(&A.v, -1, &X);
    if (st == TFE_OK) tfe_tensor_release_c128(&X);
    else assert_int_equal(st, TFE_ERR_ALLOC);
    assert_int_equal(tu_live_allocs, live);
    tu_alloc_restore();
  }
  tfe_tensor_release_c128(&A);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define TL_TESTS(S)                                                                                \
  cmocka_unit_test(test_svd_##S), cmocka_unit_test(test_svd_nd_##S),                               \
      cmocka_unit_test(test_trunc_##S), cmocka_unit_test(test_qr_lq_##S),                          \
      cmocka_unit_test(test_eig_##S), cmocka_unit_test(test_lu_chol_##S),                          \
      cmocka_unit_test(test_solvers_##S), cmocka_unit_test(test_det_inv_##S),                      \
      cmocka_unit_test(test_pinv_polar_norm_##S), cmocka_unit_test(test_expm_##S)
      TL_TESTS(f32), TL_TESTS(f64), TL_TESTS(c64), TL_TESTS(c128),
      cmocka_unit_test(test_bad_input), cmocka_unit_test(test_bad_input_more), cmocka_unit_test(test_dyn),
      cmocka_unit_test(test_alloc_failures),
  };
  return cmocka_run_group_tests_name("linalg", tests, NULL, NULL);
}

#else /* ---- per-kind body: TS suffix, TT type, RS real suffix, TCPLX, TTOL -------------------- */

static TT TL(rand)(tu_rng *r) {
#if TCPLX
  return (TT)(2 * tu_unif(r) - 1) + (TT)I * (TT)(2 * tu_unif(r) - 1);
#else
  return (TT)(2 * tu_unif(r) - 1);
#endif
}

/* A random strided view of the given dims: permuted axis order, padding, negative strides and
 * (complex) a lazy conjugate; *store owns the memory. */
static void TL(rand_view)(tu_rng *r, int rank, const int64_t *dims, TTY(tensor) *store, TTY(view) *v) {
  int perm[TFE_MAX_RANK];
  for (int i = 0; i < rank; i++) perm[i] = i;
  for (int i = rank - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  int64_t st = tu_int(r, 1, 2), total = 1;
  memset(v, 0, sizeof *v);
  v->lay.rank = rank;
  for (int k = 0; k < rank; k++) {
    int a = perm[k];
    v->lay.dims[a] = dims[a];
    v->lay.strides[a] = st;
    st *= (dims[a] > 0 ? dims[a] : 1) + tu_int(r, 0, 1);
  }
  total = st + 2;
  assert_int_equal(TFN(empty)(store, 1, &total, TFE_COLMAJOR), TFE_OK);
  for (int64_t i = 0; i < total; i++) store->v.data[i] = TL(rand)(r);
  v->data = store->v.data;
  v->lay.offset = 1;
  for (int a = 0; a < rank; a++)
    if (tu_int(r, 0, 2) == 0 && dims[a] > 0) { /* reverse this axis */
      v->lay.offset += (dims[a] - 1) * v->lay.strides[a];
      v->lay.strides[a] = -v->lay.strides[a];
    }
  v->conj = TCPLX && tu_int(r, 0, 1);
}

/* Dense column-major complex-double copy of a view (all axes). */
static cd *TL(to_cd)(const TTY(view) *v) {
  int64_t n = tfe_layout_numel(&v->lay), idx[TFE_MAX_RANK] = {0};
  cd *out = calloc((size_t)(n + 1), sizeof(cd));
  for (int64_t t = 0; t < n; t++) {
    TT x = 0;
    assert_int_equal(TFN(get)(v, idx, &x), TFE_OK);
    out[t] = (cd)x;
    for (int a = 0; a < v->lay.rank; a++) { if (++idx[a] < v->lay.dims[a]) break; idx[a] = 0; }
  }
  return out;
}
static cd *TL(real_to_cd)(const TL_CAT(tfe_tensor, RS) *t) {
  int64_t n = tfe_layout_numel(&t->v.lay);
  cd *out = calloc((size_t)(n + 1), sizeof(cd));
  for (int64_t i = 0; i < n; i++) out[i] = t->v.data[i];
  return out;
}

/* Random shape of a batched matrix: (m, n, batch...) with small dims including 0 and 1. */
static int TL(rand_shape)(tu_rng *r, int64_t *dims, bool square, int64_t maxd) {
  int rank = 2 + (int)tu_int(r, 0, 2);
  dims[0] = tu_int(r, 0, maxd);
  dims[1] = square ? dims[0] : tu_int(r, 0, maxd);
  if (tu_int(r, 0, 6) > 0 && dims[0] == 0) dims[0] = 1 + tu_int(r, 0, maxd - 1); /* keep 0 rare */
  if (square) dims[1] = dims[0];
  else if (tu_int(r, 0, 6) > 0 && dims[1] == 0) dims[1] = 1 + tu_int(r, 0, maxd - 1);
  for (int a = 2; a < rank; a++) dims[a] = tu_int(r, 1, 3);
  return rank;
}

static double TL(tol)(double scale) { return TTOL * (scale > 1 ? scale : 1) * 10; }

static void TL(check_svd)(const cd *a, int64_t m, int64_t n, const cd *u, const cd *s, const cd *vh, int64_t ku, int64_t kv) {
  int64_t k = m < n ? m : n;
  cd *us = calloc((size_t)(m * k + 1), sizeof(cd)), *rec = calloc((size_t)(m * n + 1), sizeof(cd)),
     *vk = calloc((size_t)(k * n + 1), sizeof(cd));
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < m; i++) us[i + j * m] = u[i + j * m] * s[j];
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < k; i++) vk[i + j * k] = vh[i + j * kv];
  tl_mm(rec, us, 'N', vk, 'N', m, k, n);
  double sc = tl_maxabs(a, m * n) * (double)(m + n);
  assert_true(tl_diff(rec, a, m * n) <= TL(tol)(sc));
  assert_true(tl_orth_cols(u, m, ku) <= TL(tol)((double)m));
  assert_true(tl_orth_rows(vh, kv, n) <= TL(tol)((double)n));
  for (int64_t i = 0; i < k; i++) {
    assert_true(creal(s[i]) >= 0 && cimag(s[i]) == 0);
    if (i > 0) assert_true(creal(s[i]) <= creal(s[i - 1]));
  }
  free(us); free(rec); free(vk);
}

static void TL(test_svd)(void **state) {
  (void)state;
  tu_rng r = {11};
  for (int c = 0; c < tu_cases(200); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, false, 6);
    TTY(tensor) store = {0}, U = {0}, Vh = {0};
    TL_CAT(tfe_tensor, RS) S = {0}, S2 = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    tfe_svd_mode mode = (tfe_svd_mode)tu_int(&r, 0, 1);
    assert_int_equal(tfe_svd(&A, mode, &U, &S, &Vh), TFE_OK);
    assert_int_equal(tfe_svd(&A, TFE_SVD_VALUES, NULL, &S2, NULL), TFE_OK);
    int64_t m = dims[0], n = dims[1], k = m < n ? m : n, ku = mode ? m : k, kv = mode ? n : k;
    assert_int_equal(U.v.lay.rank, rank);
    assert_int_equal(U.v.lay.dims[1], ku);
    assert_int_equal(Vh.v.lay.dims[0], kv);
    cd *a = TL(to_cd)(&A), *u = TL(to_cd)(&U.v), *vh = TL(to_cd)(&Vh.v), *s = TL(real_to_cd)(&S),
       *s2 = TL(real_to_cd)(&S2);
    int64_t nb = tfe_layout_numel(&A.lay) / (m * n > 0 ? m * n : 1);
    for (int64_t b = 0; b < nb && m * n > 0; b++)
      TL(check_svd)(a + b * m * n, m, n, u + b * m * ku, s + b * k, vh + b * kv * n, ku, kv);
    assert_true(tl_diff(s, s2, tfe_layout_numel(&S.v.lay)) <= TL(tol)(tl_maxabs(s, tfe_layout_numel(&S.v.lay)) * 10));
    free(a); free(u); free(vh); free(s); free(s2);
    TFN(tensor_release)(&store); TFN(tensor_release)(&U); TFN(tensor_release)(&Vh);
    TL_CAT(tfe_tensor_release, RS)(&S); TL_CAT(tfe_tensor_release, RS)(&S2);
  }
}

/* Matricize a dense column-major copy of an N-D tensor by a row-axis list (reference). */
static cd *TL(matricize)(const cd *a, const tfe_layout *L, int nr, const int *rows, int64_t *m_out, int64_t *n_out) {
  bool isrow[TFE_MAX_RANK] = {false};
  for (int i = 0; i < nr; i++) isrow[rows[i]] = true;
  int64_t m = 1, n = 1, tot = tfe_layout_numel(L), idx[TFE_MAX_RANK] = {0};
  for (int i = 0; i < nr; i++) m *= L->dims[rows[i]];
  for (int a2 = 0; a2 < L->rank; a2++) if (!isrow[a2]) n *= L->dims[a2];
  cd *out = calloc((size_t)(tot + 1), sizeof(cd));
  for (int64_t t = 0; t < tot; t++) {
    int64_t ri = 0, rs = 1, ci = 0, cs = 1;
    for (int i = 0; i < nr; i++) { ri += idx[rows[i]] * rs; rs *= L->dims[rows[i]]; }
    for (int a2 = 0; a2 < L->rank; a2++) if (!isrow[a2]) { ci += idx[a2] * cs; cs *= L->dims[a2]; }
    out[ri + ci * m] = a[t];
    for (int a2 = 0; a2 < L->rank; a2++) { if (++idx[a2] < L->dims[a2]) break; idx[a2] = 0; }
  }
  *m_out = m; *n_out = n;
  return out;
}

static int TL(rand_rows)(tu_rng *r, int rank, int *rows) {
  int nr = (int)tu_int(r, 0, rank), perm[TFE_MAX_RANK];
  for (int i = 0; i < rank; i++) perm[i] = i;
  for (int i = rank - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  for (int i = 0; i < nr; i++) rows[i] = perm[i];
  return nr;
}

static void TL(test_svd_nd)(void **state) {
  (void)state;
  tu_rng r = {12};
  for (int c = 0; c < tu_cases(150); c++) {
    int rank = (int)tu_int(&r, 1, 4), rows[4];
    int64_t dims[4];
    for (int a = 0; a < rank; a++) dims[a] = tu_int(&r, 1, 3);
    int nr = TL(rand_rows)(&r, rank, rows);
    TTY(tensor) store = {0}, U = {0}, Vh = {0};
    TL_CAT(tfe_tensor, RS) S = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_svd_nd(&A, nr, rows, TFE_SVD_THIN, &U, &S, &Vh), TFE_OK);
    int64_t m, n;
    cd *ad = TL(to_cd)(&A), *a = TL(matricize)(ad, &A.lay, nr, rows, &m, &n);
    int64_t k = m < n ? m : n;
    assert_int_equal(U.v.lay.rank, nr + 1);
    for (int i = 0; i < nr; i++) assert_int_equal(U.v.lay.dims[i], dims[rows[i]]);
    assert_int_equal(Vh.v.lay.rank, rank - nr + 1);
    cd *u = TL(to_cd)(&U.v), *vh = TL(to_cd)(&Vh.v), *s = TL(real_to_cd)(&S);
    TL(check_svd)(a, m, n, u, s, vh, k, k);
    free(ad); free(a); free(u); free(vh); free(s);
    TFN(tensor_release)(&U); TFN(tensor_release)(&Vh); TL_CAT(tfe_tensor_release, RS)(&S);
    /* QR and LQ of the same grouping */
    assert_int_equal(tfe_qr_nd(&A, nr, rows, false, &U, &Vh), TFE_OK);
    u = TL(to_cd)(&U.v); vh = TL(to_cd)(&Vh.v);
    ad = TL(to_cd)(&A); a = TL(matricize)(ad, &A.lay, nr, rows, &m, &n);
    cd *rec = calloc((size_t)(m * n + 1), sizeof(cd));
    tl_mm(rec, u, 'N', vh, 'N', m, k, n);
    assert_true(tl_diff(rec, a, m * n) <= TL(tol)((double)(m + n)));
    TFN(tensor_release)(&U); TFN(tensor_release)(&Vh); free(u); free(vh);
    assert_int_equal(tfe_lq_nd(&A, nr, rows, false, &U, &Vh), TFE_OK);
    u = TL(to_cd)(&U.v); vh = TL(to_cd)(&Vh.v);
    tl_mm(rec, u, 'N', vh, 'N', m, k, n);
    assert_true(tl_diff(rec, a, m * n) <= TL(tol)((double)(m + n)));
    assert_true(tl_orth_rows(vh, k, n) <= TL(tol)((double)n));
    TFN(tensor_release)(&U); TFN(tensor_release)(&Vh); free(u); free(vh);
    free(ad); free(a); free(rec);
    TFN(tensor_release)(&store);
  }
}

static void TL(test_trunc)(void **state) {
  (void)state;
  tu_rng r = {13};
  for (int c = 0; c < tu_cases(150); c++) {
    int rank = (int)tu_int(&r, 2, 3), rows[3];
    int64_t dims[3];
    for (int a = 0; a < rank; a++) dims[a] = tu_int(&r, 1, 4);
    int nr = TL(rand_rows)(&r, rank, rows);
    TTY(tensor) store = {0}, U = {0}, Vh = {0}, U0 = {0}, V0 = {0};
    TL_CAT(tfe_tensor, RS) S = {0}, S0 = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    tfe_trunc tr = {tu_int(&r, 0, 3), tu_int(&r, 0, 1) ? tu_unif(&r) * 0.8 : 0, tu_int(&r, 0, 1) != 0};
    tfe_trunc_info info = {0};
    assert_int_equal(tfe_svd_trunc(&A, nr, rows, &tr, &U, &S, &Vh, &info), TFE_OK);
    assert_int_equal(tfe_svd_nd(&A, nr, rows, TFE_SVD_THIN, &U0, &S0, &V0), TFE_OK);
    int64_t k = S0.v.lay.dims[0], rk = info.rank;
    assert_int_equal(info.full_rank, k);
    assert_int_equal(S.v.lay.dims[0], rk);
    assert_true(rk >= 1 && rk <= k);
    if (tr.max_rank > 0) assert_true(rk <= tr.max_rank);
    double thr = tr.relative ? tr.cutoff * S0.v.data[0] : tr.cutoff, dis = 0, tot = 0;
    for (int64_t i = 0; i < k; i++) {
      double sv = S0.v.data[i];
      tot += sv * sv;
      if (i < rk) { assert_true(i == 0 || sv > thr); assert_true(S.v.data[i] == S0.v.data[i]); }
      else dis += sv * sv;
    }
    if (rk < k && (tr.max_rank == 0 || rk < tr.max_rank)) assert_true(S0.v.data[rk] <= thr);
    assert_true(fabs(info.discarded - dis) <= TL(tol)(tot));
    /* |A - U S Vh|_F^2 equals the discarded weight */
    int64_t m, n;
    cd *ad = TL(to_cd)(&A), *a = TL(matricize)(ad, &A.lay, nr, rows, &m, &n);
    cd *u = TL(to_cd)(&U.v), *vh = TL(to_cd)(&Vh.v), *rec = calloc((size_t)(m * n + 1), sizeof(cd));
    for (int64_t j = 0; j < rk; j++)
      for (int64_t i = 0; i < m; i++) u[i + j * m] *= S.v.data[j];
    tl_mm(rec, u, 'N', vh, 'N', m, rk, n);
    double err2 = 0;
    for (int64_t i = 0; i < m * n; i++) err2 += pow(cabs(rec[i] - a[i]), 2);
    assert_true(fabs(err2 - info.discarded) <= TL(tol)(tot) * 10);
    free(ad); free(a); free(u); free(vh); free(rec);
    TFN(tensor_release)(&store); TFN(tensor_release)(&U); TFN(tensor_release)(&Vh);
    TFN(tensor_release)(&U0); TFN(tensor_release)(&V0);
    TL_CAT(tfe_tensor_release, RS)(&S); TL_CAT(tfe_tensor_release, RS)(&S0);
  }
}

static void TL(test_qr_lq)(void **state) {
  (void)state;
  tu_rng r = {14};
  for (int c = 0; c < tu_cases(200); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, false, 6);
    bool full = tu_int(&r, 0, 1);
    TTY(tensor) store = {0}, Q = {0}, R = {0}, L = {0}, Q2 = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_qr(&A, full, &Q, &R), TFE_OK);
    assert_int_equal(tfe_lq(&A, full, &L, &Q2), TFE_OK);
    int64_t m = dims[0], n = dims[1], k = m < n ? m : n, kq = full ? m : k, kl = full ? n : k;
    int64_t nb = tfe_layout_numel(&A.lay) / (m * n > 0 ? m * n : 1);
    cd *a = TL(to_cd)(&A), *q = TL(to_cd)(&Q.v), *rr = TL(to_cd)(&R.v), *l = TL(to_cd)(&L.v), *q2 = TL(to_cd)(&Q2.v);
    cd *rec = calloc((size_t)(m * n + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && m * n > 0; b++) {
      const cd *qb = q + b * m * kq, *rb = rr + b * kq * n, *lb = l + b * m * kl, *q2b = q2 + b * kl * n;
      tl_mm(rec, qb, 'N', rb, 'N', m, kq, n);
      assert_true(tl_diff(rec, a + b * m * n, m * n) <= TL(tol)((double)(m + n)));
      assert_true(tl_orth_cols(qb, m, kq) <= TL(tol)((double)m));
      tl_mm(rec, lb, 'N', q2b, 'N', m, kl, n);
      assert_true(tl_diff(rec, a + b * m * n, m * n) <= TL(tol)((double)(m + n)));
      assert_true(tl_orth_rows(q2b, kl, n) <= TL(tol)((double)n));
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < kq; i++) {
          if (i > j) assert_true(rb[i + j * kq] == 0);
          if (i == j) assert_true(creal(rb[i + j * kq]) >= 0 && cimag(rb[i + j * kq]) == 0);
        }
      for (int64_t j = 0; j < kl; j++)
        for (int64_t i = 0; i < m; i++) {
          if (i < j) assert_true(lb[i + j * m] == 0);
          if (i == j) assert_true(creal(lb[i + j * m]) >= 0 && cimag(lb[i + j * m]) == 0);
        }
    }
    free(a); free(q); free(rr); free(l); free(q2); free(rec);
    TFN(tensor_release)(&store); TFN(tensor_release)(&Q); TFN(tensor_release)(&R);
    TFN(tensor_release)(&L); TFN(tensor_release)(&Q2);
  }
}

/* A random Hermitian matrix batch as a strided view (both triangles set). */
static void TL(rand_herm)(tu_rng *r, int rank, const int64_t *dims, bool posdef, TTY(tensor) *store, TTY(view) *A) {
  TL(rand_view)(r, rank, dims, store, A);
  int64_t n = dims[0], nb = tfe_layout_numel(&A->lay) / (n * n > 0 ? n * n : 1), idx[TFE_MAX_RANK] = {0};
  cd *x = TL(to_cd)(A);
  for (int64_t b = 0; b < nb && n > 0; b++) {
    cd *xb = x + b * n * n, h[64];
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        cd s = 0;
        if (posdef) for (int64_t l = 0; l < n; l++) s += xb[i + l * n] * conj(xb[j + l * n]);
        else s = xb[i + j * n] + conj(xb[j + i * n]);
        h[i + j * n] = s + (posdef && i == j ? 0.5 : 0);
      }
    int64_t bb = b;
    for (int a = 2; a < rank; a++) { idx[a] = bb % dims[a]; bb /= dims[a]; }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        idx[0] = i; idx[1] = j;
        assert_int_equal(TFN(set)(A, idx, (TT)h[i + j * n]), TFE_OK);
      }
  }
  free(x);
}

static void TL(test_eig)(void **state) {
  (void)state;
  tu_rng r = {15};
  for (int c = 0; c < tu_cases(150); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, true, 6);
    int64_t n = dims[0];
    TTY(tensor) store = {0}, V = {0};
    TL_CAT(tfe_tensor, RS) W = {0};
    TTY(view) A;
    TL(rand_herm)(&r, rank, dims, false, &store, &A);
    assert_int_equal(tfe_eigh(&A, &W, &V), TFE_OK);
    int64_t nb = tfe_layout_numel(&A.lay) / (n * n > 0 ? n * n : 1);
    cd *a = TL(to_cd)(&A), *v = TL(to_cd)(&V.v), *w = TL(real_to_cd)(&W), *t = calloc((size_t)(n * n + 1), sizeof(cd)),
       *t2 = calloc((size_t)(n * n + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && n > 0; b++) {
      cd *vb = v + b * n * n;
      tl_mm(t, a + b * n * n, 'N', vb, 'N', n, n, n);
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) t2[i + j * n] = vb[i + j * n] * w[b * n + j];
      assert_true(tl_diff(t, t2, n * n) <= TL(tol)(4.0 * (double)n));
      assert_true(tl_orth_cols(vb, n, n) <= TL(tol)((double)n));
      for (int64_t j = 1; j < n; j++) assert_true(creal(w[b * n + j]) >= creal(w[b * n + j - 1]));
    }
    free(a); free(v); free(w);
    TFN(tensor_release)(&store); TFN(tensor_release)(&V); TL_CAT(tfe_tensor_release, RS)(&W);
    /* general eig of a non-symmetric matrix */
    TL_CAT(tfe_tensor, CS) Wc = {0}, Vc = {0};
    TL(rand_view)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_eig(&A, &Wc, &Vc), TFE_OK);
    a = TL(to_cd)(&A);
    for (int64_t b = 0; b < nb && n > 0; b++) {
      cd *vb = calloc((size_t)(n * n), sizeof(cd));
      for (int64_t i = 0; i < n * n; i++) vb[i] = Vc.v.data[b * n * n + i];
      tl_mm(t, a + b * n * n, 'N', vb, 'N', n, n, n);
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) t2[i + j * n] = vb[i + j * n] * Wc.v.data[b * n + j];
      assert_true(tl_diff(t, t2, n * n) <= TL(tol)(4.0 * (double)n));
      for (int64_t j = 0; j < n; j++) { /* unit columns */
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += pow(cabs(vb[i + j * n]), 2);
        assert_true(fabs(s - 1) <= TL(tol)((double)n));
      }
      free(vb);
    }
    free(a); free(t); free(t2);
    TFN(tensor_release)(&store);
    TL_CAT(tfe_tensor_release, CS)(&Wc); TL_CAT(tfe_tensor_release, CS)(&Vc);
  }
}

static void TL(test_lu_chol)(void **state) {
  (void)state;
  tu_rng r = {16};
  for (int c = 0; c < tu_cases(150); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, false, 6);
    TTY(tensor) store = {0}, L = {0}, U = {0};
    tfe_tensor_i64 P = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_lu(&A, &P, &L, &U), TFE_OK);
    int64_t m = dims[0], n = dims[1], k = m < n ? m : n, nb = tfe_layout_numel(&A.lay) / (m * n > 0 ? m * n : 1);
    cd *a = TL(to_cd)(&A), *l = TL(to_cd)(&L.v), *u = TL(to_cd)(&U.v), *rec = calloc((size_t)(m * n + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && m * n > 0; b++) {
      tl_mm(rec, l + b * m * k, 'N', u + b * k * n, 'N', m, k, n);
      const int64_t *p = P.v.data + b * m;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
          assert_true(cabs(rec[i + j * m] - a[b * m * n + p[i] + j * m]) <= TL(tol)((double)(m + n)));
      for (int64_t i = 0; i < m; i++) /* unit lower L with |l_ij| <= 1 (partial pivoting) */
        for (int64_t j = 0; j < k; j++) {
          cd x = l[b * m * k + i + j * m];
          if (i == j) assert_true(x == 1);
          if (i < j) assert_true(x == 0);
          assert_true(cabs(x) <= (TCPLX ? sqrt(2.0) : 1.0) + 1e-5); /* complex pivots use |re| + |im| */
        }
    }
    free(a); free(l); free(u); free(rec);
    TFN(tensor_release)(&store); TFN(tensor_release)(&L); TFN(tensor_release)(&U); tfe_tensor_release_i64(&P);
    /* Cholesky of a Hermitian positive definite batch */
    dims[1] = dims[0];
    int64_t nn = dims[0];
    nb = 1;
    for (int i = 2; i < rank; i++) nb *= dims[i];
    TL(rand_herm)(&r, rank, dims, true, &store, &A);
    assert_int_equal(tfe_cholesky(&A, &L), TFE_OK);
    a = TL(to_cd)(&A); l = TL(to_cd)(&L.v);
    rec = calloc((size_t)(nn * nn + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && nn > 0; b++) {
      tl_mm(rec, l + b * nn * nn, 'N', l + b * nn * nn, 'C', nn, nn, nn);
      assert_true(tl_diff(rec, a + b * nn * nn, nn * nn) <= TL(tol)(4.0 * (double)nn * (double)nn));
      for (int64_t i = 0; i < nn; i++)
        for (int64_t j = i + 1; j < nn; j++) assert_true(l[b * nn * nn + i + j * nn] == 0);
    }
    free(a); free(l); free(rec);
    TFN(tensor_release)(&store); TFN(tensor_release)(&L);
  }
}

/* A well-conditioned random square batch: random entries plus n on the diagonal. */
static void TL(rand_wellcond)(tu_rng *r, int rank, const int64_t *dims, TTY(tensor) *store, TTY(view) *A) {
  TL(rand_view)(r, rank, dims, store, A);
  int64_t n = dims[0], nb = tfe_layout_numel(&A->lay) / (n * n > 0 ? n * n : 1), idx[TFE_MAX_RANK] = {0};
  for (int64_t b = 0; b < nb; b++) {
    int64_t bb = b;
    for (int a = 2; a < rank; a++) { idx[a] = bb % dims[a]; bb /= dims[a]; }
    for (int64_t i = 0; i < n; i++) {
      TT x = 0;
      idx[0] = idx[1] = i;
      TFN(get)(A, idx, &x);
      TFN(set)(A, idx, x + (TT)(double)(n + 1));
    }
  }
}

static void TL(test_solvers)(void **state) {
  (void)state;
  tu_rng r = {17};
  for (int c = 0; c < tu_cases(150); c++) {
    int64_t dims[4], bd[4];
    int rank = TL(rand_shape)(&r, dims, true, 6);
    int64_t n = dims[0], nrhs = tu_int(&r, 0, 3);
    bool vec = tu_int(&r, 0, 3) == 0;
    int brank = vec ? rank - 1 : rank;
    bd[0] = n;
    if (vec) for (int a = 2; a < rank; a++) bd[a - 1] = dims[a];
    else { bd[1] = nrhs; for (int a = 2; a < rank; a++) bd[a] = dims[a]; }
    if (vec) nrhs = 1;
    TTY(tensor) sa = {0}, sb = {0}, X = {0}, X2 = {0};
    TTY(view) A, B;
    TL(rand_wellcond)(&r, rank, dims, &sa, &A);
    TL(rand_view)(&r, brank, bd, &sb, &B);
    int64_t nb = 1;
    for (int a = 2; a < rank; a++) nb *= dims[a];
    cd *a = TL(to_cd)(&A), *bb = TL(to_cd)(&B), *rec = calloc((size_t)(n * nrhs + 1), sizeof(cd));
    /* solve */
    assert_int_equal(tfe_solve(&A, &B, &X), TFE_OK);
    assert_int_equal(X.v.lay.rank, brank);
    cd *x = TL(to_cd)(&X.v);
    for (int64_t b = 0; b < nb && n > 0; b++) {
      tl_mm(rec, a + b * n * n, 'N', x + b * n * nrhs, 'N', n, n, nrhs);
      assert_true(tl_diff(rec, bb + b * n * nrhs, n * nrhs) <= TL(tol)(4.0 * (double)n));
    }
    free(x); TFN(tensor_release)(&X);
    /* triangular solve (lower/upper, unit or not) against the dense triangle */
    bool lower = tu_int(&r, 0, 1), unit = tu_int(&r, 0, 1);
    assert_int_equal(tfe_trisolve(&A, &B, lower, unit, &X), TFE_OK);
    x = TL(to_cd)(&X.v);
    cd *t = calloc((size_t)(n * n + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && n > 0; b++) {
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
          t[i + j * n] = i == j ? (unit ? 1 : a[b * n * n + i + j * n]) : ((lower ? i > j : i < j) ? a[b * n * n + i + j * n] : 0);
      tl_mm(rec, t, 'N', x + b * n * nrhs, 'N', n, n, nrhs);
      assert_true(tl_diff(rec, bb + b * n * nrhs, n * nrhs) <= TL(tol)(pow(4.0, (double)n)));
    }
    free(x); free(t); TFN(tensor_release)(&X);
    /* least squares on a tall stack [A; A/2]: the normal equations hold */
    int64_t m = 2 * n;
    int64_t td[4] = {m, n, 0, 0}, tb[4];
    for (int a2 = 2; a2 < rank; a2++) td[a2] = dims[a2];
    memcpy(tb, bd, sizeof tb);
    tb[0] = m;
    TTY(tensor) st = {0}, stb = {0};
    TTY(view) T, TB;
    TL(rand_view)(&r, rank, td, &st, &T);
    TL(rand_view)(&r, brank, tb, &stb, &TB);
    assert_int_equal(tfe_lstsq(&T, &TB, &X2), TFE_OK);
    assert_int_equal(X2.v.lay.dims[0], n);
    cd *tt = TL(to_cd)(&T), *tbb = TL(to_cd)(&TB), *x2 = TL(to_cd)(&X2.v), *res = calloc((size_t)(m * nrhs + 1), sizeof(cd)),
       *ne = calloc((size_t)(n * nrhs + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && n > 0; b++) {
      tl_mm(res, tt + b * m * n, 'N', x2 + b * n * nrhs, 'N', m, n, nrhs);
      for (int64_t i = 0; i < m * nrhs; i++) res[i] -= tbb[b * m * nrhs + i];
      tl_mm(ne, tt + b * m * n, 'C', res, 'N', n, m, nrhs);
      double cond_scale = 1 + tl_maxabs(x2 + b * n * nrhs, n * nrhs);
      assert_true(tl_maxabs(ne, n * nrhs) <= TL(tol)(40.0 * (double)m * cond_scale));
    }
    free(tt); free(tbb); free(x2); free(res); free(ne);
    TFN(tensor_release)(&st); TFN(tensor_release)(&stb); TFN(tensor_release)(&X2);
    free(a); free(bb); free(rec);
    TFN(tensor_release)(&sa); TFN(tensor_release)(&sb);
  }
  /* the no-copy path of trisolve: a dense column-major A */
  TTY(tensor) A = {0}, B = {0}, X = {0};
  assert_int_equal(TFN(zeros)(&A, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(TFN(ones)(&B, 1, (int64_t[]){3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 3; i++) for (int j = 0; j <= i; j++) A.v.data[i + 3 * j] = (TT)(double)(i + j + 1);
  assert_int_equal(tfe_trisolve(&A.v, &B.v, true, false, &X), TFE_OK);
  /* forward substitution by hand */
  double x0 = 1.0 / 1, x1 = (1 - 2 * x0) / 3, x2 = (1 - 3 * x0 - 4 * x1) / 5;
  assert_true(fabs((double)creal((cd)X.v.data[2]) - x2) < TL(tol)(1));
  TFN(tensor_release)(&A); TFN(tensor_release)(&B); TFN(tensor_release)(&X);
}

static void TL(test_det_inv)(void **state) {
  (void)state;
  tu_rng r = {18};
  for (int c = 0; c < tu_cases(150); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, true, 5);
    int64_t n = dims[0], nb = 1;
    for (int a = 2; a < rank; a++) nb *= dims[a];
    TTY(tensor) store = {0}, D = {0}, Sg = {0}, X = {0};
    TL_CAT(tfe_tensor, RS) LA = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_det(&A, &D), TFE_OK);
    assert_int_equal(tfe_slogdet(&A, &Sg, &LA), TFE_OK);
    assert_int_equal(D.v.lay.rank, rank - 2);
    cd *a = TL(to_cd)(&A);
    for (int64_t b = 0; b < nb; b++) {
      cd ref = tl_det(a + b * n * n, n, n);
      assert_true(cabs((cd)D.v.data[b] - ref) <= TL(tol)(10.0 * (1 + cabs(ref))));
      cd viasl = (cd)Sg.v.data[b] * exp((double)LA.v.data[b]);
      assert_true(cabs(viasl - ref) <= TL(tol)(10.0 * (1 + cabs(ref))));
    }
    free(a);
    TFN(tensor_release)(&store); TFN(tensor_release)(&D); TFN(tensor_release)(&Sg); TL_CAT(tfe_tensor_release, RS)(&LA);
    TL(rand_wellcond)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_inv(&A, &X), TFE_OK);
    a = TL(to_cd)(&A);
    cd *x = TL(to_cd)(&X.v), *p = calloc((size_t)(n * n + 1), sizeof(cd)), *eye = calloc((size_t)(n * n + 1), sizeof(cd));
    for (int64_t i = 0; i < n; i++) eye[i + i * n] = 1;
    for (int64_t b = 0; b < nb && n > 0; b++) {
      tl_mm(p, a + b * n * n, 'N', x + b * n * n, 'N', n, n, n);
      assert_true(tl_diff(p, eye, n * n) <= TL(tol)(4.0 * (double)n));
    }
    free(a); free(x); free(p); free(eye);
    TFN(tensor_release)(&store); TFN(tensor_release)(&X);
  }
}

static void TL(test_pinv_polar_norm)(void **state) {
  (void)state;
  tu_rng r = {19};
  for (int c = 0; c < tu_cases(120); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, false, 5);
    int64_t m = dims[0], n = dims[1], nb = 1, k = m < n ? m : n;
    for (int a = 2; a < rank; a++) nb *= dims[a];
    TTY(tensor) store = {0}, X = {0}, Up = {0}, P = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    assert_int_equal(tfe_pinv(&A, -1, &X), TFE_OK);
    assert_int_equal(tfe_polar(&A, &Up, &P), TFE_OK);
    cd *a = TL(to_cd)(&A), *x = TL(to_cd)(&X.v), *up = TL(to_cd)(&Up.v), *p = TL(to_cd)(&P.v);
    cd *t1 = calloc((size_t)(m * m + n * n + 1), sizeof(cd)), *t2 = calloc((size_t)(m * n + 1), sizeof(cd)),
       *t3 = calloc((size_t)(m * n + 1), sizeof(cd));
    double tol = TL(tol)(100.0 * (double)(m + n));
    for (int64_t b = 0; b < nb && m * n > 0; b++) {
      const cd *ab = a + b * m * n, *xb = x + b * n * m;
      tl_mm(t1, ab, 'N', xb, 'N', m, n, m); /* AX, Hermitian; AXA = A */
      for (int64_t i = 0; i < m; i++) for (int64_t j = 0; j < m; j++) assert_true(cabs(t1[i + j * m] - conj(t1[j + i * m])) <= tol);
      tl_mm(t2, t1, 'N', ab, 'N', m, m, n);
      assert_true(tl_diff(t2, ab, m * n) <= tol);
      tl_mm(t1, xb, 'N', ab, 'N', n, m, n); /* XA Hermitian; XAX = X */
      for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < n; j++) assert_true(cabs(t1[i + j * n] - conj(t1[j + i * n])) <= tol);
      tl_mm(t3, t1, 'N', xb, 'N', n, n, m);
      assert_true(tl_diff(t3, xb, n * m) <= tol * (1 + tl_maxabs(xb, n * m)));
      /* polar: Up P = A, P Hermitian, Up with orthonormal columns (rows when m < n) */
      const cd *ub = up + b * m * n, *pb = p + b * n * n;
      tl_mm(t2, ub, 'N', pb, 'N', m, n, n);
      assert_true(tl_diff(t2, ab, m * n) <= tol);
      for (int64_t i = 0; i < n; i++) for (int64_t j = 0; j < n; j++) assert_true(cabs(pb[i + j * n] - conj(pb[j + i * n])) <= tol);
      if (m >= n) assert_true(tl_orth_cols(ub, m, n) <= tol);
      else assert_true(tl_orth_rows(ub, m, n) <= tol);
    }
    (void)k;
    /* norms: Frobenius, 1 and inf by direct sums; spectral and nuclear against sum s^2 = fro^2 */
    TL_CAT(tfe_tensor, RS) nf = {0}, nn = {0}, n2 = {0}, n1 = {0}, ni = {0};
    assert_int_equal(tfe_norm(&A, TFE_NORM_FRO, &nf), TFE_OK);
    assert_int_equal(tfe_norm(&A, TFE_NORM_NUC, &nn), TFE_OK);
    assert_int_equal(tfe_norm(&A, TFE_NORM_2, &n2), TFE_OK);
    assert_int_equal(tfe_norm(&A, TFE_NORM_1, &n1), TFE_OK);
    assert_int_equal(tfe_norm(&A, TFE_NORM_INF, &ni), TFE_OK);
    TL_CAT(tfe_tensor, RS) S = {0};
    if (m * n > 0) assert_int_equal(tfe_svd(&A, TFE_SVD_VALUES, NULL, &S, NULL), TFE_OK);
    for (int64_t b = 0; b < nb; b++) {
      const cd *ab = a + b * m * n;
      double fro = 0, c1 = 0, ci = 0, ss = 0, sn = 0;
      for (int64_t i = 0; i < m * n; i++) fro += pow(cabs(ab[i]), 2);
      for (int64_t j = 0; j < n; j++) { double s = 0; for (int64_t i = 0; i < m; i++) s += cabs(ab[i + j * m]); if (s > c1) c1 = s; }
      for (int64_t i = 0; i < m; i++) { double s = 0; for (int64_t j = 0; j < n; j++) s += cabs(ab[i + j * m]); if (s > ci) ci = s; }
      for (int64_t i = 0; m * n > 0 && i < k; i++) { ss += pow(S.v.data[b * k + i], 2); sn += S.v.data[b * k + i]; }
      double t = TL(tol)(10.0 * (double)(m + n));
      assert_true(fabs(nf.v.data[b] - sqrt(fro)) <= t);
      assert_true(fabs(n1.v.data[b] - c1) <= t && fabs(ni.v.data[b] - ci) <= t);
      assert_true(fabs(ss - fro) <= t * (1 + fro));
      assert_true(fabs(nn.v.data[b] - sn) <= t);
      assert_true(fabs(n2.v.data[b] - (k > 0 ? S.v.data[b * k] : 0)) <= t);
      assert_true(n2.v.data[b] <= nf.v.data[b] * (1 + t) && nf.v.data[b] <= nn.v.data[b] * (1 + t));
    }
    TL_CAT(tfe_tensor_release, RS)(&nf); TL_CAT(tfe_tensor_release, RS)(&nn); TL_CAT(tfe_tensor_release, RS)(&n2);
    TL_CAT(tfe_tensor_release, RS)(&n1); TL_CAT(tfe_tensor_release, RS)(&ni); TL_CAT(tfe_tensor_release, RS)(&S);
    free(a); free(x); free(up); free(p); free(t1); free(t2); free(t3);
    TFN(tensor_release)(&store); TFN(tensor_release)(&X); TFN(tensor_release)(&Up); TFN(tensor_release)(&P);
  }
}

static void TL(test_expm)(void **state) {
  (void)state;
  tu_rng r = {20};
  for (int c = 0; c < tu_cases(100); c++) {
    int64_t dims[4];
    int rank = TL(rand_shape)(&r, dims, true, 5);
    int64_t n = dims[0], nb = 1;
    for (int a = 2; a < rank; a++) nb *= dims[a];
    TTY(tensor) store = {0}, X = {0};
    TTY(view) A;
    TL(rand_view)(&r, rank, dims, &store, &A);
    double scale = c % 3 == 0 ? 8.0 : 1.0; /* some inputs need squaring steps */
    int64_t tot = store.v.lay.dims[0];
    for (int64_t i = 0; i < tot; i++) store.v.data[i] *= (TT)scale;
    assert_int_equal(tfe_expm(&A, &X), TFE_OK);
    cd *a = TL(to_cd)(&A), *x = TL(to_cd)(&X.v), *ref = calloc((size_t)(n * n + 1), sizeof(cd));
    for (int64_t b = 0; b < nb && n > 0; b++) {
      tl_expm(ref, a + b * n * n, n);
      double mag = tl_maxabs(ref, n * n);
      assert_true(tl_diff(x + b * n * n, ref, n * n) <= TL(tol)(100.0 * (1 + mag)));
    }
    free(a); free(x); free(ref);
    TFN(tensor_release)(&store); TFN(tensor_release)(&X);
  }
}

#endif
