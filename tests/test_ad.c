/* AD room: every rule is checked on random inputs of every float kind by recording a graph on
 * a tape that ends in a real scalar loss L = Re<W, f(x)> and comparing three numbers:
 *   the reverse-mode gradient contracted with a random direction v   Re<grad, v>
 *   the forward-mode tangent of L for tangent v (jvp)                 dL
 *   a central finite difference (L(x + hv) - L(x - hv)) / 2h
 * (jvp . v against vjp . u and finite differences in one). Gauge-dependent outputs (singular
 * and eigen vectors) enter the loss through gauge-invariant |.|^2. The per-kind body is this
 * file re-included with TA_BODY defined. */
#ifndef TA_BODY
#include "testutil.h"

typedef double _Complex cd;

#define TA_CAT_(a, b) a##_##b
#define TA_CAT(a, b) TA_CAT_(a, b)
#define TA(name) TA_CAT(name, TS)
#define TFN(name) TA_CAT(tfe_##name, TS)

#define TA_BODY
#define TS f32
#define TT float
#define TCPLX 0
#define TH 1e-2
#define TTOL 4e-2
#include "test_ad.c"
#undef TS
#undef TT
#undef TCPLX
#undef TH
#undef TTOL
#define TS f64
#define TT double
#define TCPLX 0
#define TH 1e-6
#define TTOL 2e-6
#include "test_ad.c"
#undef TS
#undef TT
#undef TCPLX
#undef TH
#undef TTOL
#define TS c64
#define TT float _Complex
#define TCPLX 1
#define TH 1e-2
#define TTOL 4e-2
#include "test_ad.c"
#undef TS
#undef TT
#undef TCPLX
#undef TH
#undef TTOL
#define TS c128
#define TT double _Complex
#define TCPLX 1
#define TH 1e-6
#define TTOL 2e-6
#include "test_ad.c"
#undef TS
#undef TT
#undef TCPLX
#undef TH
#undef TTOL

/* Complex convention (PyTorch): for L = |z|^2 the gradient is 2 z; for L = Re(z) it is 1, for
 * L = Im(z) it is i; abs, conj, real and imag are non-holomorphic. */
static void test_complex_convention(void **s) {
  (void)s;
  tfe_tape_c128 t = {0};
  tfe_tensor_c128 z = {0};
  assert_int_equal(tfe_full_c128(&z, 0, NULL, TFE_COLMAJOR, 3.0 + 4.0 * I), TFE_OK);
  int x = -1, a = -1, re = -1, im = -1, c = -1, l1 = -1, l2 = -1;
  assert_int_equal(tfe_ad_var_c128(&t, &z.v, NULL, &x), TFE_OK);
  assert_int_equal(tfe_ad_unary_c128(&t, x, TFE_UN_ABS, 0, &a), TFE_OK);     /* |z| = 5 */
  assert_int_equal(tfe_ad_backward_c128(&t, a, NULL), TFE_OK);
  cd g = tfe_ad_grad_c128(&t, x)->data[0];
  assert_true(cabs(g - (0.6 + 0.8 * I)) < 1e-14);                             /* z / |z| */
  tfe_ad_zero_grad_c128(&t);
  assert_int_equal(tfe_ad_unary_c128(&t, x, TFE_UN_IMAG, 0, &im), TFE_OK);
  assert_int_equal(tfe_ad_backward_c128(&t, im, NULL), TFE_OK);
  assert_true(cabs(tfe_ad_grad_c128(&t, x)->data[0] - I) < 1e-14);
  tfe_ad_zero_grad_c128(&t);
  assert_int_equal(tfe_ad_unary_c128(&t, x, TFE_UN_REAL, 0, &re), TFE_OK);
  assert_int_equal(tfe_ad_backward_c128(&t, re, NULL), TFE_OK);
  assert_true(cabs(tfe_ad_grad_c128(&t, x)->data[0] - 1) < 1e-14);
  tfe_ad_zero_grad_c128(&t);
  /* L = Re(conj(z) * z) = |z|^2: gradient 2 z */
  assert_int_equal(tfe_ad_unary_c128(&t, x, TFE_UN_CONJ, 0, &c), TFE_OK);
  assert_int_equal(tfe_ad_binary_c128(&t, c, x, TFE_BIN_MUL, &l1), TFE_OK);
  assert_int_equal(tfe_ad_unary_c128(&t, l1, TFE_UN_REAL, 0, &l2), TFE_OK);
  assert_int_equal(tfe_ad_backward_c128(&t, l2, NULL), TFE_OK);
  assert_true(cabs(tfe_ad_grad_c128(&t, x)->data[0] - 2 * (3.0 + 4.0 * I)) < 1e-13);
  /* gradients accumulate across backward calls */
  assert_int_equal(tfe_ad_backward_c128(&t, l2, NULL), TFE_OK);
  assert_true(cabs(tfe_ad_grad_c128(&t, x)->data[0] - 4 * (3.0 + 4.0 * I)) < 1e-13);
  tfe_tape_free_c128(&t);
  tfe_tensor_release_c128(&z);
}

/* Tropical: max-plus matmul backward goes through the argmax only. */
static void test_tropical(void **s) {
  (void)s;
  tfe_tensor_maxplus_f64 A = {0}, B = {0}, C = {0};
  tfe_tensor_i64 am = {0};
  tfe_tensor_f64 gC = {0}, gA = {0}, gB = {0};
  assert_int_equal(tfe_empty_maxplus_f64(&A, 2, (int64_t[]){2, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_empty_maxplus_f64(&B, 2, (int64_t[]){3, 2}, TFE_COLMAJOR), TFE_OK);
  double av[6] = {1, 5, 2, 0, 3, 1}, bv[6] = {0, 1, 9, 4, 0, 0};
  for (int i = 0; i < 6; i++) { A.v.data[i].v = av[i]; B.v.data[i].v = bv[i]; }
  assert_int_equal(tfe_tropical_matmul_maxplus_f64(&A.v, &B.v, &C, &am), TFE_OK);
  assert_int_equal(tfe_full_f64(&gC, 2, (int64_t[]){2, 2}, TFE_COLMAJOR, 1.0), TFE_OK);
  assert_int_equal(tfe_rrule_tropical_matmul_maxplus_f64(&A.v, &B.v, &am.v, &gC.v, &gA, &gB), TFE_OK);
  /* reference: recount the winners by brute force */
  double ra[6] = {0}, rb[6] = {0};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      int best = 0;
      for (int k = 1; k < 3; k++)
        if (av[i + 2 * k] + bv[k + 3 * j] > av[i + 2 * best] + bv[best + 3 * j]) best = k;
      assert_true(C.v.data[i + 2 * j].v == av[i + 2 * best] + bv[best + 3 * j]);
      ra[i + 2 * best] += 1; rb[best + 3 * j] += 1;
    }
  for (int i = 0; i < 6; i++) { assert_true(gA.v.data[i] == ra[i]); assert_true(gB.v.data[i] == rb[i]); }
  am.v.data[0] = 7;
  tfe_tensor_release_f64(&gA); tfe_tensor_release_f64(&gB);
  TU_EXPECT_ERR(tfe_rrule_tropical_matmul_maxplus_f64(&A.v, &B.v, &am.v, &gC.v, &gA, &gB), TFE_ERR_BOUNDS, "argmax 7");
  tfe_tensor_release_maxplus_f64(&A); tfe_tensor_release_maxplus_f64(&B); tfe_tensor_release_maxplus_f64(&C);
  tfe_tensor_release_i64(&am); tfe_tensor_release_f64(&gC);
}

/* ---- general tropical einsum backward: against a brute-force winner search and finite
 * differences of a naive forward (random label sets with traces, batch labels, embeddings) ---- */
#define TROP_TEST(K, R, ALG)                                                                                     \
  static double trop_val_##K(const tfe_tensor_##K *A, const int32_t *la, const tfe_tensor_##K *B,               \
                             const int32_t *lb, const int32_t *lab, const int64_t *idx, int nl,                 \
                             const R##_t *VA, const R##_t *VB, double hh) {                                      \
    int64_t oa = 0, ob = 0;                                                                                      \
    for (int i = 0; i < A->v.lay.rank; i++)                                                                      \
      for (int j = 0; j < nl; j++) if (lab[j] == la[i]) oa += idx[j] * A->v.lay.strides[i];                      \
    for (int i = 0; B && i < B->v.lay.rank; i++)                                                                 \
      for (int j = 0; j < nl; j++) if (lab[j] == lb[i]) ob += idx[j] * B->v.lay.strides[i];                      \
    /* perturbed in double: the finite difference does not suffer the kind's rounding */                      \
    double a = (double)A->v.data[oa].v + hh * (double)VA[oa];                                                    \
    double b = B ? (double)B->v.data[ob].v + hh * (double)VB[ob] : (ALG == 2 ? 1 : 0);                          \
    return ALG == 2 ? a * b : a + b;                                                                             \
  }                                                                                                              \
  /* L = sum over finite C elements of W * C (C by brute force over every label assignment) */                  \
  static double trop_loss_##K(const tfe_tensor_##K *A, const int32_t *la, const tfe_tensor_##K *B,              \
                              const int32_t *lb, int nc, const int32_t *lc, const int32_t *lab,                 \
                              const int64_t *dim, int nl, const double *W, const R##_t *VA,                    \
                              const R##_t *VB, double hh) {                                                     \
    int64_t nout = 1, idx[12] = {0};                                                                             \
    for (int c = 0; c < nc; c++) nout *= 3;                                                                      \
    double C[81];                                                                                                \
    for (int64_t i = 0; i < nout; i++) C[i] = NAN;                                                               \
    for (;;) {                                                                                                   \
      int64_t o = 0, st = 1;                                                                                     \
      for (int c = 0; c < nc; c++, st *= 3)                                                                      \
        for (int j = 0; j < nl; j++) if (lab[j] == lc[c]) o += idx[j] * st;                                      \
      double v = trop_val_##K(A, la, B, lb, lab, idx, nl, VA, VB, hh);                                           \
      if (isnan(C[o]) || (ALG == 1 ? v < C[o] : v > C[o])) C[o] = v;                                            \
      int j = 0;                                                                                                 \
      while (j < nl && ++idx[j] == dim[j]) idx[j++] = 0;                                                         \
      if (j == nl) break;                                                                                        \
    }                                                                                                            \
    double L = 0; /* output elements with unequal repeated labels stay NaN: not in the loss */                  \
    for (int64_t i = 0; i < nout; i++) if (!isnan(C[i])) L += W[i] * C[i];                                       \
    return L;                                                                                                    \
  }                                                                                                              \
  static void test_trop_##K(void **s) {                                                                         \
    (void)s;                                                                                                     \
    tu_rng r = {40 + ALG};                                                                                       \
    for (int cs = 0; cs < tu_cases(300); cs++) {                                                                 \
      int na = (int)tu_int(&r, 1, 3), nb = (int)tu_int(&r, -1, 3), nc = 0;                                       \
      int32_t la[3], lb[3], lc[4], lab[6];                                                                       \
      int64_t dim[6], da[3], db[3], gd[4];                                                                       \
      bool seen[4] = {false};                                                                                    \
      for (int i = 0; i < na; i++) { la[i] = (int32_t)tu_int(&r, 0, 3); seen[la[i]] = true; da[i] = 3; }        \
      for (int i = 0; i < nb; i++) { lb[i] = (int32_t)tu_int(&r, 0, 3); seen[lb[i]] = true; db[i] = 3; }        \
      int nl = 0;                                                                                                \
      for (int l = 0; l < 4; l++) {                                                                              \
        if (!seen[l]) continue;                                                                                  \
        lab[nl] = l; dim[nl++] = 3;                                                                              \
        if (tu_int(&r, 0, 1) && nc < 4) { lc[nc] = l; gd[nc++] = 3; }                                           \
        if (nc > 0 && nc < 4 && lc[nc - 1] == l && tu_int(&r, 0, 9) == 0) { lc[nc] = l; gd[nc++] = 3; }          \
      }                                                                                                          \
      tfe_tensor_##K A = {0}, B = {0};                                                                           \
      tfe_tensor_##R gC = {0}, gA = {0}, gB = {0}, VA = {0}, VB = {0};                                           \
      assert_int_equal(tfe_empty_##K(&A, na, da, TFE_COLMAJOR), TFE_OK);                                         \
      if (nb >= 0) assert_int_equal(tfe_empty_##K(&B, nb, db, TFE_COLMAJOR), TFE_OK);                           \
      assert_int_equal(tfe_empty_##R(&gC, nc, gd, TFE_COLMAJOR), TFE_OK);                                        \
      assert_int_equal(tfe_empty_##R(&VA, na, da, TFE_COLMAJOR), TFE_OK);                                        \
      if (nb >= 0) assert_int_equal(tfe_empty_##R(&VB, nb, db, TFE_COLMAJOR), TFE_OK);                          \
      int64_t nA = tfe_layout_numel(&A.v.lay), nB = nb >= 0 ? tfe_layout_numel(&B.v.lay) : 0;                   \
      for (int64_t i = 0; i < nA; i++) { A.v.data[i].v = (R##_t)(0.5 + tu_unif(&r)); VA.v.data[i] = (R##_t)(2 * tu_unif(&r) - 1); } \
      for (int64_t i = 0; i < nB; i++) { B.v.data[i].v = (R##_t)(0.5 + tu_unif(&r)); VB.v.data[i] = (R##_t)(2 * tu_unif(&r) - 1); } \
      int64_t ng = tfe_layout_numel(&gC.v.lay);                                                                  \
      double W[81];                                                                                              \
      for (int64_t i = 0; i < ng; i++) { W[i] = 2 * tu_unif(&r) - 1; gC.v.data[i] = (R##_t)W[i]; }               \
      tfe_status st = tfe_rrule_tropical_einsum_##K(&A.v, la, nb >= 0 ? &B.v : NULL, lb, nc, lc, &gC.v, &gA,    \
                                                     nb >= 0 ? &gB : NULL);                                      \
      assert_int_equal(st, TFE_OK);                                                                              \
      double gv = 0, h = 1e-7;                                                       \
      for (int64_t i = 0; i < nA; i++) gv += (double)gA.v.data[i] * (double)VA.v.data[i];                        \
      for (int64_t i = 0; i < nB; i++) gv += (double)gB.v.data[i] * (double)VB.v.data[i];                        \
      double L[2];                                                                                               \
      for (int sg = 0; sg < 2; sg++) {                                                                           \
        double hh = sg ? -h : h;                                                                                 \
        L[sg] = trop_loss_##K(&A, la, nb >= 0 ? &B : NULL, lb, nc, lc, lab, dim, nl, W, VA.v.data, VB.v.data, hh); \
      }                                                                                                          \
      double fd = (L[0] - L[1]) / (2 * h);                                                                       \
      if (!(fabs(fd - gv) <= 1e-6 * (1 + fabs(gv))))                                                           \
        fail_msg(#K " case %d: gradient . v = %.9g, finite difference %.9g", cs, gv, fd);                        \
      tfe_tensor_release_##K(&A); tfe_tensor_release_##K(&B);                                                    \
      tfe_tensor_release_##R(&gC); tfe_tensor_release_##R(&gA); tfe_tensor_release_##R(&gB);                    \
      tfe_tensor_release_##R(&VA); tfe_tensor_release_##R(&VB);                                                 \
    }                                                                                                            \
  }
typedef float f32_t;
typedef double f64_t;
TROP_TEST(maxplus_f64, f64, 0)
TROP_TEST(minplus_f64, f64, 1)
TROP_TEST(maxtimes_f64, f64, 2)
TROP_TEST(maxplus_f32, f32, 0)
TROP_TEST(maxtimes_f32, f32, 2)
#undef TROP_TEST

/* The general rule agrees with the matmul-through-argmax rule, and reports bad input. */
static void test_trop_matmul_agree(void **s) {
  (void)s;
  tu_rng r = {45};
  tfe_tensor_maxplus_f64 A = {0}, B = {0}, C = {0};
  tfe_tensor_i64 am = {0};
  tfe_tensor_f64 gC = {0}, gA = {0}, gB = {0}, hA = {0}, hB = {0};
  assert_int_equal(tfe_empty_maxplus_f64(&A, 2, (int64_t[]){4, 5}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_empty_maxplus_f64(&B, 2, (int64_t[]){5, 3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 20; i++) A.v.data[i].v = (double)tu_int(&r, 0, 3); /* integers: many ties */
  for (int i = 0; i < 15; i++) B.v.data[i].v = (double)tu_int(&r, 0, 3);
  assert_int_equal(tfe_full_f64(&gC, 2, (int64_t[]){4, 3}, TFE_COLMAJOR, 1.0), TFE_OK);
  assert_int_equal(tfe_tropical_matmul_maxplus_f64(&A.v, &B.v, &C, &am), TFE_OK);
  assert_int_equal(tfe_rrule_tropical_matmul_maxplus_f64(&A.v, &B.v, &am.v, &gC.v, &gA, &gB), TFE_OK);
  const int32_t la[2] = {0, 1}, lb[2] = {1, 2}, lc[2] = {0, 2};
  assert_int_equal(tfe_rrule_tropical_einsum_maxplus_f64(&A.v, la, &B.v, lb, 2, lc, &gC.v, &hA, &hB), TFE_OK);
  for (int i = 0; i < 20; i++) assert_true(gA.v.data[i] == hA.v.data[i]); /* same first winner on ties */
  for (int i = 0; i < 15; i++) assert_true(gB.v.data[i] == hB.v.data[i]);
  tfe_tensor_release_f64(&hA); tfe_tensor_release_f64(&hB);
  TU_EXPECT_ERR(tfe_rrule_tropical_einsum_maxplus_f64(&A.v, la, &B.v, (int32_t[]){0, 2}, 2, lc, &gC.v, &hA, &hB),
                TFE_ERR_SHAPE, "label 0 has sizes 4 and 5");
  TU_EXPECT_ERR(tfe_rrule_tropical_einsum_maxplus_f64(&A.v, la, &B.v, lb, 2, (int32_t[]){0, 7}, &gC.v, &hA, &hB),
                TFE_ERR_INVALID, "output label 7 appears in no input");
  TU_EXPECT_ERR(tfe_rrule_tropical_einsum_maxplus_f64(&A.v, la, &B.v, lb, 1, lc, &gC.v, &hA, &hB), TFE_ERR_RANK,
                "gC has rank 2");
  TU_EXPECT_ERR(tfe_rrule_tropical_einsum_maxplus_f64(&A.v, la, &B.v, lb, 2, (int32_t[]){2, 0}, &gC.v, &hA, &hB),
                TFE_ERR_SHAPE, "gC dim 0 is 4");
  TU_EXPECT_ERR(tfe_rrule_tropical_einsum_maxplus_f64(&A.v, NULL, &B.v, lb, 2, lc, &gC.v, &hA, &hB), TFE_ERR_NULL,
                "label array");
  assert_null(hA.v.data);
  tfe_tensor_release_maxplus_f64(&A); tfe_tensor_release_maxplus_f64(&B); tfe_tensor_release_maxplus_f64(&C);
  tfe_tensor_release_i64(&am); tfe_tensor_release_f64(&gC); tfe_tensor_release_f64(&gA); tfe_tensor_release_f64(&gB);
}

/* eig of a real matrix: the stateless real rules against the complex tape on the promoted
 * matrix (real part of its gradient) and a finite difference in a real direction. */
static double eig_real_loss(const tfe_tensor_f64 *A, const tfe_tensor_c128 *Wt) {
  tfe_tensor_c128 W = {0}, V = {0};
  assert_int_equal(tfe_eig_f64(&A->v, &W, &V), TFE_OK);
  double L = 0; /* sum Re(conj(Wt) w) + sum |V|^2 weighted (gauge invariant) */
  for (int i = 0; i < 3; i++) L += creal(conj(Wt->v.data[i]) * W.v.data[i]);
  for (int i = 0; i < 9; i++) L += cabs(V.v.data[i]) * cabs(V.v.data[i]) * (double)(i % 4);
  tfe_tensor_release_c128(&W); tfe_tensor_release_c128(&V);
  return L;
}
static void test_eig_real(void **s) {
  (void)s;
  tu_rng r = {46};
  for (int cs = 0; cs < tu_cases(10); cs++) {
    tfe_tensor_f64 A = {0}, D = {0}, gA = {0};
    tfe_tensor_c128 W = {0}, V = {0}, gW = {0}, gV = {0}, dW = {0}, dV = {0};
    assert_int_equal(tfe_empty_f64(&A, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_empty_f64(&D, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
    for (int i = 0; i < 9; i++) { A.v.data[i] = 2 * tu_unif(&r) - 1 + (i % 4 == 0 ? (double)i : 0); D.v.data[i] = 2 * tu_unif(&r) - 1; }
    assert_int_equal(tfe_eig_f64(&A.v, &W, &V), TFE_OK);
    assert_int_equal(tfe_empty_c128(&gW, 1, (int64_t[]){3}, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_empty_c128(&gV, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
    for (int i = 0; i < 3; i++) gW.v.data[i] = (2 * tu_unif(&r) - 1) + I * (2 * tu_unif(&r) - 1);
    for (int i = 0; i < 9; i++) gV.v.data[i] = 2.0 * V.v.data[i] * (double)(i % 4); /* d|V|^2 weighted */
    assert_int_equal(tfe_rrule_eig_real_f64(&A.v, &W.v, &V.v, &gW.v, &gV.v, &gA), TFE_OK);
    assert_int_equal(tfe_frule_eig_real_f64(&A.v, &D.v, &W.v, &V.v, &dW, &dV), TFE_OK);
    double gv = 0, jv = 0, h = 1e-6;
    for (int i = 0; i < 9; i++) gv += gA.v.data[i] * D.v.data[i];
    for (int i = 0; i < 3; i++) jv += creal(conj(gW.v.data[i]) * dW.v.data[i]);
    for (int i = 0; i < 9; i++) jv += creal(conj(gV.v.data[i]) * dV.v.data[i]);
    for (int i = 0; i < 9; i++) A.v.data[i] += h * D.v.data[i];
    double lp = eig_real_loss(&A, &gW);
    for (int i = 0; i < 9; i++) A.v.data[i] -= 2 * h * D.v.data[i];
    double lm = eig_real_loss(&A, &gW), fd = (lp - lm) / (2 * h);
    if (!(fabs(fd - gv) < 1e-5 * (1 + fabs(gv)) && fabs(jv - gv) < 1e-9 * (1 + fabs(gv))))
      fail_msg("eig real case %d: vjp %.10g, jvp %.10g, finite difference %.10g", cs, gv, jv, fd);
    tfe_tensor_release_f64(&A); tfe_tensor_release_f64(&D); tfe_tensor_release_f64(&gA);
    tfe_tensor_release_c128(&W); tfe_tensor_release_c128(&V); tfe_tensor_release_c128(&gW);
    tfe_tensor_release_c128(&gV); tfe_tensor_release_c128(&dW); tfe_tensor_release_c128(&dV);
  }
}

/* Leaves by reference: no copy for dense tensors, same gradients as copied leaves. */
static void test_var_ref(void **s) {
  (void)s;
  tu_rng r = {47};
  tfe_tensor_f64 A = {0}, B = {0};
  assert_int_equal(tfe_empty_f64(&A, 2, (int64_t[]){3, 4}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_empty_f64(&B, 2, (int64_t[]){4, 2}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 12; i++) A.v.data[i] = tu_unif(&r);
  for (int i = 0; i < 8; i++) B.v.data[i] = tu_unif(&r);
  tfe_tape_f64 t1 = {0}, t2 = {0};
  int a1 = -1, b1 = -1, c1 = -1, l1 = -1, a2 = -1, b2 = -1, c2 = -1, l2 = -1;
  assert_int_equal(tfe_ad_var_ref_f64(&t1, &A, NULL, &a1), TFE_OK);
  assert_ptr_equal(tfe_ad_value_f64(&t1, a1)->data, A.v.data); /* shared, not copied */
  assert_int_equal(tfe_ad_var_ref_f64(&t1, &B, NULL, &b1), TFE_OK);
  assert_int_equal(tfe_ad_var_f64(&t2, &A.v, NULL, &a2), TFE_OK);
  assert_int_equal(tfe_ad_var_f64(&t2, &B.v, NULL, &b2), TFE_OK);
  assert_int_equal(tfe_ad_einsum_str_f64(&t1, "ij,jk->ik", a1, b1, &c1), TFE_OK);
  assert_int_equal(tfe_ad_einsum_f64(&t2, a2, (int32_t[]){0, 1}, b2, (int32_t[]){1, 2}, 2, (int32_t[]){0, 2}, &c2), TFE_OK);
  assert_int_equal(tfe_ad_reduce_f64(&t1, c1, TFE_RED_SUMSQ, -1, NULL, &l1), TFE_OK);
  assert_int_equal(tfe_ad_reduce_f64(&t2, c2, TFE_RED_SUMSQ, -1, NULL, &l2), TFE_OK);
  tfe_tensor_release_f64(&A); /* the tape keeps its reference */
  assert_int_equal(tfe_ad_backward_f64(&t1, l1, NULL), TFE_OK);
  assert_int_equal(tfe_ad_backward_f64(&t2, l2, NULL), TFE_OK);
  for (int i = 0; i < 12; i++) assert_true(tfe_ad_grad_f64(&t1, a1)->data[i] == tfe_ad_grad_f64(&t2, a2)->data[i]);
  /* a strided (transposed) tensor is copied */
  tfe_tensor_f64 Bt = {0};
  assert_int_equal(tfe_tensor_retain_f64(&B, &Bt), TFE_OK);
  assert_int_equal(tfe_permute_f64(&B.v, (int[]){1, 0}, &Bt.v), TFE_OK);
  int bt = -1;
  assert_int_equal(tfe_ad_var_ref_f64(&t1, &Bt, NULL, &bt), TFE_OK);
  assert_true(tfe_ad_value_f64(&t1, bt)->data != B.v.data);
  tfe_tape_free_f64(&t1); tfe_tape_free_f64(&t2);
  tfe_tensor_release_f64(&B); tfe_tensor_release_f64(&Bt);
}

/* Bad input of the later rules. */
static void test_bad_input_more(void **s) {
  (void)s;
  tfe_tape_f64 t = {0};
  tfe_tape_c128 tc = {0};
  tfe_tensor_f64 a = {0}, b = {0};
  tfe_tensor_c128 z = {0};
  int x = -1, y = -1, q = -1, o[3];
  assert_int_equal(tfe_ones_f64(&a, 2, (int64_t[]){2, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_zeros_f64(&b, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_c128(&z, 1, (int64_t[]){3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ad_var_f64(&t, &a.v, NULL, &x), TFE_OK);
  assert_int_equal(tfe_ad_var_f64(&t, &b.v, NULL, &y), TFE_OK);
  assert_int_equal(tfe_ad_var_c128(&tc, &z.v, NULL, &q), TFE_OK);
  TU_EXPECT_ERR(tfe_ad_binary_c128(&tc, q, q, TFE_BIN_MAX, o), TFE_ERR_UNSUPPORTED, "no order");
  TU_EXPECT_ERR(tfe_ad_reduce_c128(&tc, q, TFE_RED_MIN, -1, NULL, o), TFE_ERR_UNSUPPORTED, "not defined");
  TU_EXPECT_ERR(tfe_ad_reduce_f64(&t, x, TFE_RED_PROD, 1, (int[]){2}, o), TFE_ERR_INVALID, "axis 2 outside");
  TU_EXPECT_ERR(tfe_ad_reduce_f64(&t, x, TFE_RED_PROD, 2, (int[]){1, 1}, o), TFE_ERR_INVALID, "named twice");
  TU_EXPECT_ERR(tfe_ad_reduce_f64(&t, x, (tfe_redop)42, -1, NULL, o), TFE_ERR_INVALID, "unknown reduction 42");
  TU_EXPECT_ERR(tfe_ad_trisolve_f64(&t, x, y, true, false, o), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_ad_trisolve_f64(&t, y, y, true, false, o), TFE_ERR_SINGULAR, "zero on the diagonal");
  TU_EXPECT_ERR(tfe_ad_lstsq_f64(&t, x, y, o), TFE_ERR_SHAPE, "B has 3 rows, A needs 2");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_SLOGDET_SIGN, x, o), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_REDUCE, x, o), TFE_ERR_INVALID, "not a one-input");
  TU_EXPECT_ERR(tfe_ad_einsum_str_f64(&t, "ij,jk->ik", x, -1, o), TFE_ERR_INVALID, "2 operand(s), 1 given");
  TU_EXPECT_ERR(tfe_ad_einsum_str_f64(&t, "ijk->i", x, -1, o), TFE_ERR_RANK, "3 labels but rank 2");
  TU_EXPECT_ERR(tfe_ad_einsum_str_f64(&t, "...j->j", x, -1, o), TFE_ERR_UNSUPPORTED, "ellipsis");
  TU_EXPECT_ERR(tfe_ad_einsum_str_f64(&t, "ij-k", x, -1, o), TFE_ERR_PARSE, "'-' not followed by '>'");
  TU_EXPECT_ERR(tfe_ad_einsum_str_f64(&t, "ij,jk->ik", x, x, o), TFE_ERR_SHAPE, "label 106 has size 2");
  TU_EXPECT_ERR(tfe_ad_var_ref_f64(&t, NULL, NULL, o), TFE_ERR_NULL, "'value'");
  assert_int_equal(t.nnodes, 0);
  /* backward through a singular matrix: the slogdet rule needs A^-1 */
  tfe_tensor_f64 e = {0};
  assert_int_equal(tfe_zeros_f64(&e, 2, (int64_t[]){2, 2}, TFE_COLMAJOR), TFE_OK);
  e.v.data[0] = 1; e.v.data[3] = 1; /* identity: fine forward; then the rrule on singular input */
  const tfe_view_f64 *xs[1] = {&b.v};
  tfe_tensor_f64 ys[2] = {{{0}, 0}, {{0}, 0}}, g = {0};
  assert_int_equal(tfe_ad_primal_f64(TFE_AD_SLOGDET_SIGN, &(tfe_ad_params){0}, 1, xs, ys), TFE_OK);
  const tfe_view_f64 *yv[2] = {&ys[0].v, &ys[1].v};
  TU_EXPECT_ERR(tfe_rrule_f64(TFE_AD_SLOGDET_SIGN, &(tfe_ad_params){0}, 1, xs, yv, NULL, &g), TFE_ERR_SINGULAR, "singular");
  tfe_tensor_release_f64(&ys[0]); tfe_tensor_release_f64(&ys[1]); tfe_tensor_release_f64(&e);
  tfe_tape_free_f64(&t); tfe_tape_free_c128(&tc);
  tfe_tensor_release_f64(&a); tfe_tensor_release_f64(&b); tfe_tensor_release_c128(&z);
}

/* Allocation failures in the later rules: an error code, nothing leaks. */
static void test_alloc_failures_more(void **s) {
  (void)s;
  tfe_tensor_f64 a = {0};
  tfe_tensor_maxplus_f64 m = {0};
  tfe_tensor_f64 g = {0};
  assert_int_equal(tfe_empty_f64(&a, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 9; i++) a.v.data[i] = (double)((i * 7) % 5) + (i % 4 == 0 ? 3 : 0);
  assert_int_equal(tfe_ones_maxplus_f64(&m, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_f64(&g, 1, (int64_t[]){3}, TFE_COLMAJOR), TFE_OK);
  bool done = false;
  for (long k = 0; k < 400 && !done; k++) {
    tfe_tape_f64 t = {0};
    int x = -1, o[3] = {-1, -1, -1}, l = -1, p = -1, q = -1;
    tu_fail_after(k);
    long live = tu_live_allocs;
    tfe_status st = tfe_ad_var_ref_f64(&t, &a, &a.v, &x);
    if (!st) st = tfe_ad_reduce_f64(&t, x, TFE_RED_PROD, 1, (int[]){0}, &p);
    if (!st) st = tfe_ad_trisolve_f64(&t, x, x, true, false, &q);
    if (!st) st = tfe_ad_lstsq_f64(&t, x, q, o);
    if (!st) st = tfe_ad_linalg_f64(&t, TFE_AD_LU, o[0], o + 1);
    if (!st) st = tfe_ad_reduce_f64(&t, o[1], TFE_RED_NORM2, -1, NULL, &l);
    if (!st) st = tfe_ad_backward_f64(&t, l, NULL);
    tfe_tensor_f64 ga = {0}, gb = {0};
    if (!st) st = tfe_rrule_tropical_einsum_maxplus_f64(&m.v, (int32_t[]){0, 1}, &m.v, (int32_t[]){1, 1}, 1,
                                                        (int32_t[]){0}, &g.v, &ga, &gb);
    if (st) assert_int_equal(st, TFE_ERR_ALLOC);
    done = st == TFE_OK;
    tfe_tensor_release_f64(&ga); tfe_tensor_release_f64(&gb);
    tfe_tape_free_f64(&t);
    assert_int_equal(tu_live_allocs, live);
    tu_alloc_restore();
  }
  assert_true(done); /* every failure point was visited */
  tfe_tensor_release_f64(&a); tfe_tensor_release_maxplus_f64(&m); tfe_tensor_release_f64(&g);
}

static void test_bad_input(void **s) {
  (void)s;
  tfe_tape_f64 t = {0};
  tfe_tensor_f64 a = {0}, b = {0};
  int x = -1, y = -1, z = -1, o[3];
  assert_int_equal(tfe_ones_f64(&a, 2, (int64_t[]){2, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_f64(&b, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ad_var_f64(&t, &a.v, NULL, &x), TFE_OK);
  assert_int_equal(tfe_ad_var_f64(&t, &b.v, NULL, &y), TFE_OK);
  TU_EXPECT_ERR(tfe_ad_var_f64(&t, &a.v, &b.v, &z), TFE_ERR_SHAPE, "dim 0");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_INV, x, o), TFE_ERR_SHAPE, "square");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_INV, y, o), TFE_ERR_SINGULAR, "singular");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_CHOLESKY, y, o), TFE_ERR_SINGULAR, "positive definite");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_EIG, y, o), TFE_ERR_UNSUPPORTED, "complex");
  TU_EXPECT_ERR(tfe_ad_linalg_f64(&t, TFE_AD_NORM, y, o), TFE_ERR_INVALID, "norm");
  TU_EXPECT_ERR(tfe_ad_binary_f64(&t, x, y, TFE_BIN_ADD, &z), TFE_ERR_SHAPE, "dim 0");
  TU_EXPECT_ERR(tfe_ad_binary_f64(&t, x, x, (tfe_binop)99, &z), TFE_ERR_INVALID, "unknown binary op 99");
  TU_EXPECT_ERR(tfe_ad_einsum_f64(&t, x, (int32_t[]){0, 1}, y, (int32_t[]){0, 2}, 1, (int32_t[]){2}, &z), TFE_ERR_SHAPE,
                "label 0");
  TU_EXPECT_ERR(tfe_ad_einsum_f64(&t, x, (int32_t[]){0, 1}, -1, NULL, 1, (int32_t[]){5}, &z), TFE_ERR_INVALID,
                "appears in no input");
  TU_EXPECT_ERR(tfe_ad_sum_f64(&t, x, 1, (int[]){4}, &z), TFE_ERR_INVALID, "axis 4");
  TU_EXPECT_ERR(tfe_ad_reshape_f64(&t, x, 1, (int64_t[]){5}, &z), TFE_ERR_SHAPE, "6 elements");
  TU_EXPECT_ERR(tfe_ad_backward_f64(&t, x, NULL), TFE_ERR_SHAPE, "pass a cotangent");
  TU_EXPECT_ERR(tfe_ad_backward_f64(&t, 99, NULL), TFE_ERR_BOUNDS, "variable 99");
  TU_EXPECT_ERR(tfe_ad_backward_f64(&t, x, &b.v), TFE_ERR_SHAPE, "dim 0");
  TU_EXPECT_ERR(tfe_ad_op_f64(&t, TFE_AD_SOLVE, &(tfe_ad_params){0}, 1, &x, o), TFE_ERR_INVALID, "takes 2");
  TU_EXPECT_ERR(tfe_rrule_f64((tfe_ad_op)99, &(tfe_ad_params){0}, 1, NULL, NULL, NULL, NULL), TFE_ERR_INVALID, "unknown op");
  assert_int_equal(t.nnodes, 0); /* failed ops record nothing */
  tfe_tape_free_f64(&t);
  tfe_tensor_release_f64(&a); tfe_tensor_release_f64(&b);
}

static void test_alloc_failures(void **s) {
  (void)s;
  tfe_tensor_f64 a = {0};
  assert_int_equal(tfe_empty_f64(&a, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 9; i++) a.v.data[i] = (double)((i * 7) % 5) + (i % 4 == 0 ? 3 : 0);
  for (long k = 0; k < 40; k++) {
    tfe_tape_f64 t = {0};
    int x = -1, o[3], l = -1;
    tu_fail_after(k);
    long live = tu_live_allocs;
    tfe_status st = tfe_ad_var_f64(&t, &a.v, &a.v, &x);
    if (!st) st = tfe_ad_linalg_f64(&t, TFE_AD_SVD, x, o);
    if (!st) st = tfe_ad_sum_f64(&t, o[1], -1, NULL, &l);
    if (!st) st = tfe_ad_backward_f64(&t, l, NULL);
    if (st) assert_int_equal(st, TFE_ERR_ALLOC);
    tfe_tape_free_f64(&t);
    assert_int_equal(tu_live_allocs, live);
    tu_alloc_restore();
  }
  tfe_tensor_release_f64(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define TA_TESTS(S)                                                                                   \
  cmocka_unit_test(test_einsum_##S), cmocka_unit_test(test_elementwise_##S),                          \
      cmocka_unit_test(test_views_##S), cmocka_unit_test(test_linalg_##S),                            \
      cmocka_unit_test(test_degenerate_##S), cmocka_unit_test(test_stateless_##S),                     \
      cmocka_unit_test(test_more_##S)
      TA_TESTS(f32), TA_TESTS(f64), TA_TESTS(c64), TA_TESTS(c128),
      cmocka_unit_test(test_complex_convention), cmocka_unit_test(test_tropical),
      cmocka_unit_test(test_bad_input), cmocka_unit_test(test_alloc_failures),
      cmocka_unit_test(test_trop_maxplus_f64), cmocka_unit_test(test_trop_minplus_f64),
      cmocka_unit_test(test_trop_maxtimes_f64), cmocka_unit_test(test_trop_maxplus_f32),
      cmocka_unit_test(test_trop_maxtimes_f32), cmocka_unit_test(test_trop_matmul_agree),
      cmocka_unit_test(test_eig_real), cmocka_unit_test(test_var_ref), cmocka_unit_test(test_bad_input_more),
      cmocka_unit_test(test_alloc_failures_more),
  };
  return cmocka_run_group_tests_name("ad", tests, NULL, NULL);
}

#else /* ---- per-kind body: TS, TT, TCPLX, TH (finite-difference step), TTOL ----------------- */

static TT TA(rand)(tu_rng *r) {
#if TCPLX
  return (TT)(2 * tu_unif(r) - 1) + (TT)I * (TT)(2 * tu_unif(r) - 1);
#else
  return (TT)(2 * tu_unif(r) - 1);
#endif
}
static TT TA(cj)(TT x) {
#if TCPLX
  return TFE_CONJ(x);
#else
  return x;
#endif
}
static void TA(fill)(tu_rng *r, TFN(tensor) *t, int rank, const int64_t *dims) {
  assert_int_equal(TFN(empty)(t, rank, dims, TFE_COLMAJOR), TFE_OK);
  int64_t n = tfe_layout_numel(&t->v.lay);
  for (int64_t i = 0; i < n; i++) t->v.data[i] = TA(rand)(r);
}
static double TA(re_dot)(const TFN(view) *a, const TFN(view) *b) { /* Re<a, b>, dense operands */
  int64_t n = tfe_layout_numel(&a->lay);
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += creal(conj((cd)a->data[a->lay.offset + i]) * (cd)b->data[b->lay.offset + i]);
  return s;
}

/* A graph: reads the leaf ids, returns the id of the value to be tested (any shape); the
 * harness closes it with Re<W, value>. */
typedef int (*TA(graph_fn))(TFN(tape) *t, const int *x, void *ctx);

/* Build the graph at x + h v with tangents v; returns the loss and (optionally) the gradients. */
static double TA(run)(TA(graph_fn) f, void *ctx, int nx, TFN(tensor) *xs, TFN(tensor) *vs, double h, tu_rng *wr,
                      double *dl, double *gv) {
  TFN(tape) t = {0};
  int ids[4];
  for (int i = 0; i < nx; i++) {
    TFN(tensor) p = {0};
    assert_int_equal(TFN(contiguous)(&xs[i].v, TFE_COLMAJOR, &p), TFE_OK);
    int64_t n = tfe_layout_numel(&p.v.lay);
    for (int64_t k = 0; k < n; k++) p.v.data[k] += (TT)h * vs[i].v.data[k];
    assert_int_equal(TFN(ad_var)(&t, &p.v, &vs[i].v, &ids[i]), TFE_OK);
    TFN(tensor_release)(&p);
  }
  int y = f(&t, ids, ctx);
  assert_true(y >= 0);
  /* loss = Re sum(conj(W) * y) with W from a fixed stream */
  const TFN(view) *yv = TFN(ad_value)(&t, y);
  TFN(tensor) W = {0};
  tu_rng w = *wr;
  TA(fill)(&w, &W, yv->lay.rank, yv->lay.dims);
  int64_t n = tfe_layout_numel(&W.v.lay);
  for (int64_t k = 0; k < n; k++) W.v.data[k] = TA(cj)(W.v.data[k]);
  int wid = -1, prod = -1, sum = -1, loss = -1;
  assert_int_equal(TFN(ad_var)(&t, &W.v, NULL, &wid), TFE_OK);
  assert_int_equal(TFN(ad_binary)(&t, wid, y, TFE_BIN_MUL, &prod), TFE_OK);
  assert_int_equal(TFN(ad_sum)(&t, prod, -1, NULL, &sum), TFE_OK);
  assert_int_equal(TFN(ad_unary)(&t, sum, TFE_UN_REAL, 0, &loss), TFE_OK);
  double L = creal((cd)TFN(ad_value)(&t, loss)->data[0]);
  if (dl) *dl = creal((cd)TFN(ad_tangent)(&t, loss)->data[0]);
  if (gv) {
    assert_int_equal(TFN(ad_backward)(&t, loss, NULL), TFE_OK);
    *gv = 0;
    for (int i = 0; i < nx; i++) *gv += TA(re_dot)(TFN(ad_grad)(&t, ids[i]), &vs[i].v);
  }
  TFN(tensor_release)(&W);
  TFN(tape_free)(&t);
  return L;
}

/* The three-way check for one graph at the points xs. */
static void TA(check)(const char *what, TA(graph_fn) f, void *ctx, int nx, TFN(tensor) *xs, tu_rng *r) {
  TFN(tensor) vs[4];
  memset(vs, 0, sizeof vs);
  for (int i = 0; i < nx; i++) TA(fill)(r, &vs[i], xs[i].v.lay.rank, xs[i].v.lay.dims);
  tu_rng wr = {tu_next(r) | 1};
  double dl = 0, gv = 0;
  TA(run)(f, ctx, nx, xs, vs, 0, &wr, &dl, &gv);
  double lp = TA(run)(f, ctx, nx, xs, vs, TH, &wr, NULL, NULL);
  double lm = TA(run)(f, ctx, nx, xs, vs, -TH, &wr, NULL, NULL);
  double fd = (lp - lm) / (2 * TH), scale = 1 + fabs(gv) + fabs(dl);
  if (!(fabs(dl - gv) <= TTOL * scale * 0.1 && fabs(fd - gv) <= TTOL * scale))
    fail_msg("%s: jvp %.10g, vjp %.10g, finite difference %.10g", what, dl, gv, fd);
  for (int i = 0; i < nx; i++) TFN(tensor_release)(&vs[i]);
}

/* ---- einsum: random label sets with repeats (traces, diagonals) and embeddings ------------- */
typedef struct { int na, nb, nc; int32_t la[4], lb[4], lc[4]; } TA(es);
static int TA(g_einsum)(TFN(tape) *t, const int *x, void *ctx) {
  TA(es) *e = (TA(es) *)ctx;
  int y = -1;
  assert_int_equal(TFN(ad_einsum)(t, x[0], e->la, e->nb >= 0 ? x[1] : -1, e->lb, e->nc, e->lc, &y), TFE_OK);
  return y;
}
static void TA(test_einsum)(void **state) {
  (void)state;
  tu_rng r = {31};
  const int64_t ldim[5] = {2, 3, 2, 1, 3};
  for (int c = 0; c < tu_cases(120); c++) {
    TA(es) e;
    memset(&e, 0, sizeof e);
    e.na = (int)tu_int(&r, 0, 3);
    e.nb = tu_int(&r, 0, 3) == 0 ? -1 : (int)tu_int(&r, 0, 3);
    bool seen[5] = {false};
    for (int i = 0; i < e.na; i++) { e.la[i] = (int32_t)tu_int(&r, 0, 4); seen[e.la[i]] = true; }
    for (int i = 0; i < e.nb; i++) { e.lb[i] = (int32_t)tu_int(&r, 0, 4); seen[e.lb[i]] = true; }
    for (int l = 0; l < 5; l++)
      if (seen[l] && tu_int(&r, 0, 1) && e.nc < 4) {
        e.lc[e.nc++] = l;
        if (tu_int(&r, 0, 7) == 0 && e.nc < 4) e.lc[e.nc++] = l; /* embedding */
      }
    TFN(tensor) xs[2];
    memset(xs, 0, sizeof xs);
    int64_t da[4], db[4];
    for (int i = 0; i < e.na; i++) da[i] = ldim[e.la[i]];
    for (int i = 0; i < e.nb; i++) db[i] = ldim[e.lb[i]];
    TA(fill)(&r, &xs[0], e.na, da);
    if (e.nb >= 0) TA(fill)(&r, &xs[1], e.nb, db);
    TA(check)("einsum", TA(g_einsum), &e, e.nb >= 0 ? 2 : 1, xs, &r);
    TFN(tensor_release)(&xs[0]);
    TFN(tensor_release)(&xs[1]);
  }
}

/* ---- elementwise --------------------------------------------------------------------------- */
typedef struct { int kind, op; TT param; } TA(ew);
static int TA(g_ew)(TFN(tape) *t, const int *x, void *ctx) {
  TA(ew) *e = (TA(ew) *)ctx;
  int y = -1;
  if (e->kind == 0) assert_int_equal(TFN(ad_unary)(t, x[0], (tfe_unop)e->op, e->param, &y), TFE_OK);
  else if (e->kind == 1) assert_int_equal(TFN(ad_binary)(t, x[0], x[1], (tfe_binop)e->op, &y), TFE_OK);
  else if (e->kind == 2) assert_int_equal(TFN(ad_scale)(t, x[0], e->param, &y), TFE_OK);
  else assert_int_equal(TFN(ad_sum)(t, x[0], 1, &e->op, &y), TFE_OK);
  return y;
}
static void TA(test_elementwise)(void **state) {
  (void)state;
  tu_rng r = {32};
  const int64_t dims[3] = {2, 3, 2};
  for (int c = 0; c < tu_cases(3); c++) {
    TFN(tensor) xs[2];
    memset(xs, 0, sizeof xs);
    TA(fill)(&r, &xs[0], 3, dims);
    TA(fill)(&r, &xs[1], 3, dims);
    for (int i = 0; i < 12; i++) { /* away from branch cuts and zeros: Re > 0.5 */
      xs[0].v.data[i] = (TT)1.0 + (TT)0.5 * xs[0].v.data[i];
      xs[1].v.data[i] = (TT)1.0 + (TT)0.5 * xs[1].v.data[i];
    }
    for (int op = 0; op < (int)TFE_UN_COUNT_; op++) {
      TA(ew) e = {0, op, (TT)1.7};
      TA(check)(tfe_unop_name((tfe_unop)op), TA(g_ew), &e, 1, xs, &r);
    }
    for (int op = TFE_BIN_ADD; op <= TFE_BIN_DIV; op++) {
      TA(ew) e = {1, op, 0};
      TA(check)(tfe_binop_name((tfe_binop)op), TA(g_ew), &e, 2, xs, &r);
    }
    TA(ew) sc = {2, 0, TA(rand)(&r)};
    TA(check)("scale", TA(g_ew), &sc, 1, xs, &r);
    for (int ax = 0; ax < 3; ax++) {
      TA(ew) su = {3, ax, 0};
      TA(check)("sum", TA(g_ew), &su, 1, xs, &r);
    }
    TFN(tensor_release)(&xs[0]);
    TFN(tensor_release)(&xs[1]);
  }
}

/* ---- view operations ------------------------------------------------------------------------ */
static int TA(g_views)(TFN(tape) *t, const int *x, void *ctx) {
  (void)ctx;
  int a = -1, b = -1, c = -1, d = -1, e = -1, f = -1, g = -1;
  /* x: (2, 3, 2) -> permute (2, 2, 3) -> slice [0:2, 1:2, 0:3:2] (2, 1, 2) -> broadcast (3, 2, 4, 2)
   * -> diagonal (0, 2) ... keep shapes legal: */
  assert_int_equal(TFN(ad_permute)(t, x[0], (int[]){2, 0, 1}, &a), TFE_OK);
  assert_int_equal(TFN(ad_slice)(t, a, (int64_t[]){0, 0, 0}, (int64_t[]){2, 2, 3}, (int64_t[]){1, 1, 2}, &b), TFE_OK);
  assert_int_equal(TFN(ad_reshape)(t, b, 3, (int64_t[]){2, 1, 4}, &c), TFE_OK);
  assert_int_equal(TFN(ad_broadcast)(t, c, 4, (int64_t[]){2, 2, 3, 4}, &d), TFE_OK);
  assert_int_equal(TFN(ad_diagonal)(t, d, 0, 1, &e), TFE_OK);      /* (2, 3, 4) */
  assert_int_equal(TFN(ad_unary)(t, e, TFE_UN_SQUARE, 0, &f), TFE_OK); /* nonlinear so tangents matter */
  assert_int_equal(TFN(ad_einsum)(t, f, (int32_t[]){0, 1, 2}, x[0], (int32_t[]){0, 3, 0}, 2, (int32_t[]){2, 1}, &g), TFE_OK);
  return g;
}
static void TA(test_views)(void **state) {
  (void)state;
  tu_rng r = {33};
  for (int c = 0; c < tu_cases(20); c++) {
    TFN(tensor) x = {0};
    TA(fill)(&r, &x, 3, (int64_t[]){2, 3, 2});
    TA(check)("views", TA(g_views), NULL, 1, &x, &r);
    TFN(tensor_release)(&x);
  }
}

/* ---- linear algebra ---------------------------------------------------------------------------- */
typedef struct { tfe_ad_op op; int variant; } TA(lg);
/* |v|^2 elementwise: gauge invariant for singular / eigen vectors. */
static int TA(abs2)(TFN(tape) *t, int v) {
  int c = -1, p = -1;
  assert_int_equal(TFN(ad_unary)(t, v, TFE_UN_CONJ, 0, &c), TFE_OK);
  assert_int_equal(TFN(ad_binary)(t, c, v, TFE_BIN_MUL, &p), TFE_OK);
  return p;
}
/* Sum of several same-kind results as one vector: their sums stacked by adding scalars. */
static int TA(total)(TFN(tape) *t, const int *v, int n) {
  int acc = -1;
  for (int i = 0; i < n; i++) {
    int s = -1, w = -1;
    /* a fixed random-ish weighting per part keeps parts from cancelling */
    assert_int_equal(TFN(ad_unary)(t, v[i], TFE_UN_SIN, 0, &w), TFE_OK);
    assert_int_equal(TFN(ad_sum)(t, w, -1, NULL, &s), TFE_OK);
    if (acc < 0) acc = s;
    else assert_int_equal(TFN(ad_binary)(t, acc, s, TFE_BIN_ADD, &acc), TFE_OK);
  }
  return acc;
}
/* A Hermitian (variant 1: positive definite) matrix from the leaf: X + X^H or X X^H + n I. */
static int TA(herm)(TFN(tape) *t, int x, bool posdef) {
  int c = -1, h = -1;
  assert_int_equal(TFN(ad_unary)(t, x, TFE_UN_CONJ, 0, &c), TFE_OK);
  if (!posdef) {
    int ct = -1;
    assert_int_equal(TFN(ad_permute)(t, c, (int[]){1, 0}, &ct), TFE_OK);
    assert_int_equal(TFN(ad_binary)(t, x, ct, TFE_BIN_ADD, &h), TFE_OK);
    return h;
  }
  int64_t n = TFN(ad_value)(t, x)->lay.dims[0];
  TFN(tensor) eye = {0};
  assert_int_equal(TFN(zeros)(&eye, 2, (int64_t[]){n, n}, TFE_COLMAJOR), TFE_OK);
  for (int64_t i = 0; i < n; i++) eye.v.data[i + i * n] = (TT)(double)n;
  int e = -1, g = -1;
  assert_int_equal(TFN(ad_var)(t, &eye.v, NULL, &e), TFE_OK);
  TFN(tensor_release)(&eye);
  assert_int_equal(TFN(ad_einsum)(t, x, (int32_t[]){0, 2}, c, (int32_t[]){1, 2}, 2, (int32_t[]){0, 1}, &g), TFE_OK);
  assert_int_equal(TFN(ad_binary)(t, g, e, TFE_BIN_ADD, &h), TFE_OK);
  return h;
}
/* A well-conditioned square matrix: X + n I (leaf X). */
static int TA(wellcond)(TFN(tape) *t, int x) {
  const TFN(view) *v = TFN(ad_value)(t, x);
  TFN(tensor) eye = {0};
  assert_int_equal(TFN(zeros)(&eye, v->lay.rank, v->lay.dims, TFE_COLMAJOR), TFE_OK);
  int64_t n = v->lay.dims[0], nb = tfe_layout_numel(&v->lay) / (n * n);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t i = 0; i < n; i++) eye.v.data[b * n * n + i + i * n] = (TT)(double)(n + 1);
  int e = -1, s = -1;
  assert_int_equal(TFN(ad_var)(t, &eye.v, NULL, &e), TFE_OK);
  TFN(tensor_release)(&eye);
  assert_int_equal(TFN(ad_binary)(t, x, e, TFE_BIN_ADD, &s), TFE_OK);
  return s;
}
static int TA(g_linalg)(TFN(tape) *t, const int *x, void *ctx) {
  TA(lg) *g = (TA(lg) *)ctx;
  int o[3] = {-1, -1, -1}, a = x[0], parts[3];
  switch (g->op) {
  case TFE_AD_SVD:
  case TFE_AD_SVD_TRUNC:
    if (g->op == TFE_AD_SVD) assert_int_equal(TFN(ad_linalg)(t, TFE_AD_SVD, a, o), TFE_OK);
    else {
      tfe_trunc tr = {2, 0, false};
      assert_int_equal(TFN(ad_svd_trunc)(t, a, &tr, o), TFE_OK);
    }
    parts[0] = TA(abs2)(t, o[0]); parts[1] = o[1]; parts[2] = TA(abs2)(t, o[2]);
    return TA(total)(t, parts, 3);
  case TFE_AD_EIGH:
    assert_int_equal(TFN(ad_linalg)(t, TFE_AD_EIGH, TA(herm)(t, a, false), o), TFE_OK);
    parts[0] = o[0]; parts[1] = TA(abs2)(t, o[1]);
    return TA(total)(t, parts, 2);
  case TFE_AD_EIG:
    assert_int_equal(TFN(ad_linalg)(t, TFE_AD_EIG, a, o), TFE_OK);
    parts[0] = o[0]; parts[1] = TA(abs2)(t, o[1]);
    return TA(total)(t, parts, 2);
  case TFE_AD_CHOLESKY:
    assert_int_equal(TFN(ad_linalg)(t, TFE_AD_CHOLESKY, TA(herm)(t, a, true), o), TFE_OK);
    return o[0];
  case TFE_AD_SOLVE:
    assert_int_equal(TFN(ad_solve)(t, TA(wellcond)(t, a), x[1], o), TFE_OK);
    return o[0];
  case TFE_AD_NORM:
    assert_int_equal(TFN(ad_norm)(t, a, (tfe_norm_kind)g->variant, o), TFE_OK);
    return o[0];
  case TFE_AD_INV: case TFE_AD_DET: case TFE_AD_SLOGDET: case TFE_AD_LU:
    assert_int_equal(TFN(ad_linalg)(t, g->op, TA(wellcond)(t, a), o), TFE_OK);
    if (g->op == TFE_AD_LU) return TA(total)(t, o, 2);
    return o[0];
  default:
    assert_int_equal(TFN(ad_linalg)(t, g->op, a, o), TFE_OK);
    return tfe_ad_op_nout(g->op) == 1 ? o[0] : TA(total)(t, o, tfe_ad_op_nout(g->op));
  }
}
static void TA(test_linalg)(void **state) {
  (void)state;
  tu_rng r = {34};
  const tfe_ad_op ops[] = {TFE_AD_SVD, TFE_AD_SVD_TRUNC, TFE_AD_QR, TFE_AD_LQ, TFE_AD_EIGH, TFE_AD_EIG,
                           TFE_AD_LU, TFE_AD_CHOLESKY, TFE_AD_SOLVE, TFE_AD_INV, TFE_AD_DET, TFE_AD_SLOGDET,
                           TFE_AD_PINV, TFE_AD_NORM, TFE_AD_EXPM, TFE_AD_POLAR};
  for (int c = 0; c < tu_cases(4); c++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      tfe_ad_op op = ops[k];
      if (op == TFE_AD_EIG && !TCPLX) continue;
      bool square = op == TFE_AD_EIGH || op == TFE_AD_EIG || op == TFE_AD_LU || op == TFE_AD_CHOLESKY ||
                    op == TFE_AD_SOLVE || op == TFE_AD_INV || op == TFE_AD_DET || op == TFE_AD_SLOGDET ||
                    op == TFE_AD_EXPM;
      bool batch = op != TFE_AD_SVD_TRUNC && op != TFE_AD_EIGH && op != TFE_AD_CHOLESKY && c % 2 == 1;
      int64_t m = tu_int(&r, 2, 4), n = square ? m : tu_int(&r, 2, 4);
      if (op == TFE_AD_POLAR || op == TFE_AD_PINV) n = m - (c % 2); /* tall or square: full rank */
      if (op == TFE_AD_PINV && c % 4 == 2) { int64_t tmp = m; m = n; n = tmp; } /* wide */
      int64_t dims[3] = {m, n, 2};
      int nv = op == TFE_AD_NORM ? 5 : 1;
      for (int variant = 0; variant < nv; variant++) {
        TFN(tensor) xs[2];
        memset(xs, 0, sizeof xs);
        TA(fill)(&r, &xs[0], batch ? 3 : 2, dims);
        if (op == TFE_AD_SOLVE) {
          int64_t bd[3] = {m, 2, 2};
          TA(fill)(&r, &xs[1], batch ? 3 : 2, bd);
        }
        TA(lg) g = {op, variant};
        char what[64];
        snprintf(what, sizeof what, "%s/%d %lldx%lld%s", tfe_ad_op_name(op), variant, (long long)m, (long long)n,
                 batch ? " batched" : "");
        TA(check)(what, TA(g_linalg), &g, op == TFE_AD_SOLVE ? 2 : 1, xs, &r);
        TFN(tensor_release)(&xs[0]);
        TFN(tensor_release)(&xs[1]);
      }
    }
}

/* ---- rules added later: reductions, max / min, lstsq, trisolve, slogdet sign, LU any shape ---- */
typedef struct { int what, op, naxes, axes[3], lower, unit; } TA(mr);
/* Diagonally dominant (no pivoting, well conditioned) rectangular or square batch: X + (k+1) I. */
static int TA(domin)(TFN(tape) *t, int x) {
  const TFN(view) *v = TFN(ad_value)(t, x);
  TFN(tensor) eye = {0};
  assert_int_equal(TFN(zeros)(&eye, v->lay.rank, v->lay.dims, TFE_COLMAJOR), TFE_OK);
  int64_t m = v->lay.dims[0], n = v->lay.dims[1], k = m < n ? m : n, nb = m * n > 0 ? tfe_layout_numel(&v->lay) / (m * n) : 0;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t i = 0; i < k; i++) eye.v.data[b * m * n + i + i * m] = (TT)(double)(k + 2);
  int e = -1, s = -1;
  assert_int_equal(TFN(ad_var)(t, &eye.v, NULL, &e), TFE_OK);
  TFN(tensor_release)(&eye);
  assert_int_equal(TFN(ad_binary)(t, x, e, TFE_BIN_ADD, &s), TFE_OK);
  return s;
}
static int TA(g_more)(TFN(tape) *t, const int *x, void *ctx) {
  TA(mr) *g = (TA(mr) *)ctx;
  int o[3] = {-1, -1, -1};
  switch (g->what) {
  case 0: assert_int_equal(TFN(ad_reduce)(t, x[0], (tfe_redop)g->op, g->naxes, g->axes, o), TFE_OK); return o[0];
  case 1: assert_int_equal(TFN(ad_binary)(t, x[0], x[1], (tfe_binop)g->op, o), TFE_OK); return o[0];
  case 2: assert_int_equal(TFN(ad_lstsq)(t, x[0], x[1], o), TFE_OK); return o[0];
  case 3: assert_int_equal(TFN(ad_trisolve)(t, TA(domin)(t, x[0]), x[1], g->lower, g->unit, o), TFE_OK); return o[0];
  case 4: assert_int_equal(TFN(ad_linalg)(t, TFE_AD_SLOGDET_SIGN, TA(domin)(t, x[0]), o), TFE_OK); return TA(total)(t, o, 2);
  case 5: assert_int_equal(TFN(ad_linalg)(t, TFE_AD_LU, TA(domin)(t, x[0]), o), TFE_OK); return TA(total)(t, o, 2);
  default: /* the string notation: a trace-and-contract chain */
    assert_int_equal(TFN(ad_einsum_str)(t, "ijk,kjl->il", x[0], x[1], o), TFE_OK);
    assert_int_equal(TFN(ad_einsum_str)(t, "ii", o[0], -1, &o[1]), TFE_OK); /* implicit output: trace */
    return o[1];
  }
}
static void TA(check_more)(tu_rng *r, TA(mr) *g, int nx, int rank0, const int64_t *d0, int rank1, const int64_t *d1,
                           const char *what) {
  TFN(tensor) xs[2];
  memset(xs, 0, sizeof xs);
  TA(fill)(r, &xs[0], rank0, d0);
  if (nx == 2) TA(fill)(r, &xs[1], rank1, d1);
  int64_t n0 = tfe_layout_numel(&xs[0].v.lay);
  bool kink = (g->what == 0 && (g->op == TFE_RED_MAX || g->op == TFE_RED_MIN || g->op == TFE_RED_NORMINF)) || g->what == 1;
  for (int64_t i = 0; kink && i < n0; i++) { /* keep winners apart by more than the FD step */
    TT *x0 = &xs[0].v.data[i];
    if (g->what == 1) { xs[1].v.data[i] = *x0 + (TT)(i % 2 ? 0.4 : -0.4); continue; }
    double mag = (double)((i * 7) % n0) * 0.25 + 0.5, a = cabs((cd)*x0);
    *x0 = a > 0 ? *x0 * (TT)(mag / a) : (TT)mag;
  }
  TA(check)(what, TA(g_more), g, nx, xs, r);
  TFN(tensor_release)(&xs[0]);
  TFN(tensor_release)(&xs[1]);
}
static void TA(test_more)(void **state) {
  (void)state;
  tu_rng r = {37};
  const int64_t d3[3] = {2, 3, 2};
  char what[64];
  for (int c = 0; c < tu_cases(3); c++) {
    for (int op = 0; op < (int)TFE_RED_COUNT_; op++) {
      if (TCPLX && (op == TFE_RED_MAX || op == TFE_RED_MIN)) continue; /* no order on complex numbers */
      int na[4] = {-1, 1, 2, 0};
      for (int v = 0; v < 4; v++) {
        TA(mr) g = {0, op, na[v], {1, 0, 2}, 0, 0};
        snprintf(what, sizeof what, "reduce %s/%d", tfe_redop_name((tfe_redop)op), na[v]);
        TA(check_more)(&r, &g, 1, 3, d3, 0, NULL, what);
      }
    }
    for (int op = TFE_BIN_MAX; !TCPLX && op <= TFE_BIN_MIN; op++) {
      TA(mr) g = {1, op, 0, {0}, 0, 0};
      TA(check_more)(&r, &g, 2, 3, d3, 3, d3, tfe_binop_name((tfe_binop)op));
    }
    int64_t m = tu_int(&r, 2, 4), n = tu_int(&r, 1, 3), b = c % 2 ? 3 : 2;
    TA(mr) ls = {2, 0, 0, {0}, 0, 0};
    TA(check_more)(&r, &ls, 2, (int)b, (int64_t[]){m + 1, n, 2}, (int)b, (int64_t[]){m + 1, 2, 2}, "lstsq tall");
    TA(check_more)(&r, &ls, 2, (int)b, (int64_t[]){n, m + 1, 2}, (int)b - 1, (int64_t[]){n, 2}, "lstsq wide vector");
    for (int v = 0; v < 4; v++) {
      TA(mr) ts = {3, 0, 0, {0}, v & 1, v >> 1};
      snprintf(what, sizeof what, "trisolve lower %d unit %d", v & 1, v >> 1);
      TA(check_more)(&r, &ts, 2, (int)b, (int64_t[]){m, m, 2}, (int)b, (int64_t[]){m, 2, 2}, what);
    }
    TA(mr) sd = {4, 0, 0, {0}, 0, 0};
    TA(check_more)(&r, &sd, 1, (int)b, (int64_t[]){m, m, 2}, 0, NULL, "slogdet_sign");
    TA(mr) lu = {5, 0, 0, {0}, 0, 0};
    TA(check_more)(&r, &lu, 1, (int)b, (int64_t[]){m + 1, m, 2}, 0, NULL, "lu tall");
    TA(check_more)(&r, &lu, 1, (int)b, (int64_t[]){m, m + 2, 2}, 0, NULL, "lu wide");
    TA(check_more)(&r, &lu, 1, (int)b, (int64_t[]){m, m, 2}, 0, NULL, "lu square");
    TA(mr) es = {6, 0, 0, {0}, 0, 0};
    TA(check_more)(&r, &es, 2, 3, (int64_t[]){2, 3, 2}, 3, (int64_t[]){2, 3, 2}, "einsum_str");
  }
}

/* Degenerate singular values: the broadened rule stays finite and, for a gauge-invariant loss
 * (U S Vh reproduces A), gives the exact gradient W. */
static void TA(test_degenerate)(void **state) {
  (void)state;
  TFN(tape) t = {0};
  TFN(tensor) A = {0};
  assert_int_equal(TFN(zeros)(&A, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  A.v.data[0] = 2; A.v.data[4] = 2; A.v.data[8] = 1; /* s = 2, 2, 1 */
  int x = -1, o[3], us = -1, rec = -1;
  assert_int_equal(TFN(ad_var)(&t, &A.v, NULL, &x), TFE_OK);
  assert_int_equal(TFN(ad_linalg)(&t, TFE_AD_SVD, x, o), TFE_OK);
  assert_int_equal(TFN(ad_einsum)(&t, o[0], (int32_t[]){0, 1}, o[1], (int32_t[]){1}, 2, (int32_t[]){0, 1}, &us), TFE_OK);
  assert_int_equal(TFN(ad_einsum)(&t, us, (int32_t[]){0, 1}, o[2], (int32_t[]){1, 2}, 2, (int32_t[]){0, 2}, &rec), TFE_OK);
  TFN(tensor) W = {0};
  tu_rng r = {35};
  TA(fill)(&r, &W, 2, (int64_t[]){3, 3});
  assert_int_equal(TFN(ad_backward)(&t, rec, &W.v), TFE_OK);
  const TFN(view) *g = TFN(ad_grad)(&t, x);
  /* Expected (docs/ad.md): U X Vh with X = U^H W V, except that inside the degenerate block
   * (singular values 0 and 1 here) only the skew-Hermitian part of X survives. */
  const TFN(view) *U = TFN(ad_value)(&t, o[0]), *Vh = TFN(ad_value)(&t, o[2]);
  cd X[9], E[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      cd s = 0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) s += conj((cd)U->data[a + 3 * i]) * (cd)W.v.data[a + 3 * b] * conj((cd)Vh->data[j + 3 * b]);
      X[i + 3 * j] = s;
    }
  cd x01 = X[0 + 3], x10 = X[1];
  X[0 + 3] = (x01 - conj(x10)) / 2;
  X[1] = (x10 - conj(x01)) / 2;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      cd s = 0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) s += (cd)U->data[i + 3 * a] * X[a + 3 * b] * (cd)Vh->data[b + 3 * j];
      E[i + 3 * j] = s;
    }
  for (int i = 0; i < 9; i++) {
    assert_true(isfinite(cabs((cd)g->data[i])));
    assert_true(cabs((cd)g->data[i] - E[i]) < 10 * TTOL);
  }
  TFN(tensor_release)(&W);
  TFN(tensor_release)(&A);
  TFN(tape_free)(&t);
}

/* The stateless entries on strided input views agree with the tape. */
static void TA(test_stateless)(void **state) {
  (void)state;
  tu_rng r = {36};
  TFN(tensor) A = {0}, B = {0}, dC = {0}, dA = {0}, dB[2], C = {0};
  memset(dB, 0, sizeof dB);
  TA(fill)(&r, &A, 2, (int64_t[]){3, 4});
  TA(fill)(&r, &B, 2, (int64_t[]){4, 2});
  TA(fill)(&r, &dC, 2, (int64_t[]){2, 3}); /* C[k, i] = sum_j A[i, j] B[j, k] */
  tfe_ad_params p = tfe_ad_einsum_params(2, (int32_t[]){0, 1}, 2, (int32_t[]){1, 2}, 2, (int32_t[]){2, 0});
  TFN(view) At; /* A passed transposed-strided: permute of its transpose copy */
  TFN(tensor) Atc = {0};
  assert_int_equal(TFN(empty)(&Atc, 2, (int64_t[]){4, 3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) Atc.v.data[j + 4 * i] = A.v.data[i + 3 * j];
  assert_int_equal(TFN(permute)(&Atc.v, (int[]){1, 0}, &At), TFE_OK);
  const TFN(view) *x[2] = {&At, &B.v}, *dy[1] = {&dC.v};
  assert_int_equal(TFN(ad_primal)(TFE_AD_EINSUM, &p, 2, x, &C), TFE_OK);
  const TFN(view) *y[1] = {&C.v};
  assert_int_equal(TFN(rrule)(TFE_AD_EINSUM, &p, 2, x, y, dy, dB), TFE_OK);
  /* reference: dA[i, j] = sum_k dC[k, i] conj(B[j, k]) */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) {
      cd s = 0;
      for (int k = 0; k < 2; k++) s += (cd)dC.v.data[k + 2 * i] * conj((cd)B.v.data[j + 4 * k]);
      assert_true(cabs((cd)dB[0].v.data[i + 3 * j] - s) < 1e-4);
    }
  TFN(tensor_release)(&dB[0]); TFN(tensor_release)(&dB[1]);
  TFN(tensor_release)(&A); TFN(tensor_release)(&B); TFN(tensor_release)(&dC); TFN(tensor_release)(&dA);
  TFN(tensor_release)(&C); TFN(tensor_release)(&Atc);
}

#endif
