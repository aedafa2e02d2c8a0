/* User-defined scalar kinds stamped through the whole stack with tenferro/stamp.h: integers
 * modulo the prime 1000003 and the log-sum-exp semiring. They go through the same templates as
 * the shipped kinds, including the differential view-op tests (tests/test_views_tpl.h). Later
 * rooms extend this file with their own operations on these kinds. */
#include "test_views_common.h"

/* ---- integers mod p ---------------------------------------------------------------------------- */
#define MODP 1000003u
typedef struct modp { uint32_t v; } modp;
static inline modp tfe_sr_zero_modp(void) { modp r = {0}; return r; }
static inline modp tfe_sr_one_modp(void) { modp r = {1}; return r; }
static inline modp tfe_sr_add_modp(modp a, modp b) { modp r = {(a.v + b.v) % MODP}; return r; }
static inline modp tfe_sr_mul_modp(modp a, modp b) { modp r = {(uint32_t)((uint64_t)a.v * b.v % MODP)}; return r; }
static inline modp tfe_sr_conj_modp(modp a) { return a; }
static inline bool tfe_sr_eq_modp(modp a, modp b) { return a.v == b.v; }
static inline modp tfe_sr_from_f64_modp(double x) {
  int64_t i = (int64_t)x % (int64_t)MODP;
  modp r = {(uint32_t)(i < 0 ? i + MODP : i)};
  return r;
}
static inline double tfe_sr_dist_modp(modp a, modp b) { return a.v == b.v ? 0.0 : 1.0; }

#define TFE_S modp
#define TFE_T modp
#define TFE_R modp
#define TFE_ALG TFE_ALG_CUSTOM
#define TFE_CPLX 0
#define TFE_FLOAT 0
#define TFE_DT TFE_DT_CUSTOM
#include <tenferro/stamp.h>

/* ---- log-sum-exp: add = log(e^a + e^b), mul = a + b, zero = -inf, one = 0 --------------------- */
typedef struct lse { double v; } lse;
static inline lse tfe_sr_zero_lse(void) { lse r = {-INFINITY}; return r; }
static inline lse tfe_sr_one_lse(void) { lse r = {0.0}; return r; }
static inline lse tfe_sr_add_lse(lse a, lse b) {
  double m = a.v > b.v ? a.v : b.v;
  if (isinf(m) && m < 0) return a;
  lse r = {m + log(exp(a.v - m) + exp(b.v - m))};
  return r;
}
static inline lse tfe_sr_mul_lse(lse a, lse b) { lse r = {a.v + b.v}; return r; }
static inline lse tfe_sr_conj_lse(lse a) { return a; }
static inline bool tfe_sr_eq_lse(lse a, lse b) { return a.v == b.v; }
static inline lse tfe_sr_from_f64_lse(double x) { lse r = {x}; return r; }
static inline double tfe_sr_dist_lse(lse a, lse b) { return a.v == b.v ? 0.0 : fabs(a.v - b.v); }

#define TFE_S lse
#define TFE_T lse
#define TFE_R lse
#define TFE_ALG TFE_ALG_CUSTOM
#define TFE_CPLX 0
#define TFE_FLOAT 0
#define TFE_DT TFE_DT_CUSTOM
#include <tenferro/stamp.h>

/* The differential view-op tests, stamped for both user kinds. */
#define TFE_S modp
#define TFE_T modp
#include "test_views_tpl.h"
#undef TFE_S
#undef TFE_T
#define TFE_S lse
#define TFE_T lse
#include "test_views_tpl.h"
#undef TFE_S
#undef TFE_T

static void test_userkind_view_ops(void **st) {
  (void)st;
  tu_rng r = {4242};
  tv_all_modp(&r, tu_cases(300));
  tv_all_lse(&r, tu_cases(300));
}

/* Constructors, element access and a semiring computation through views. */
static void test_modp_tensors(void **st) {
  (void)st;
  tfe_tensor_modp a = {0}, z = {0}, o = {0};
  int64_t dims[2] = {3, 3};
  assert_int_equal(tfe_zeros_modp(&z, 2, dims, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_ones_modp(&o, 2, dims, TFE_ROWMAJOR), TFE_OK);
  assert_int_equal(o.v.lay.strides[0], 3); /* the row-major flag */
  assert_true(z.v.data[4].v == 0 && o.v.data[8].v == 1);
  /* a = [[0, 1, 2], [3, 4, 5], [6, 7, 8]] * 333334 mod p, copied from a row-major buffer */
  modp buf[9];
  for (int i = 0; i < 9; i++) buf[i] = tfe_sr_mul_modp(tfe_sr_from_f64_modp(i), tfe_sr_from_f64_modp(333334));
  assert_int_equal(tfe_from_buffer_modp(&a, buf, 9, 2, dims, NULL, 0, TFE_ROWMAJOR), TFE_OK);
  /* trace over the diagonal view: (0 + 4 + 8) * 333334 mod p */
  tfe_view_modp d = {0};
  assert_int_equal(tfe_diagonal_modp(&a.v, 0, 1, &d), TFE_OK);
  modp tr = tfe_sr_zero_modp(), x = tfe_sr_zero_modp();
  for (int64_t i = 0; i < 3; i++) {
    assert_int_equal(tfe_get_modp(&d, &i, &x), TFE_OK);
    tr = tfe_sr_add_modp(tr, x);
  }
  assert_int_equal(tr.v, (uint32_t)((12ull * 333334ull) % MODP));
  assert_true(tfe_sr_dist_modp(tr, tfe_sr_from_f64_modp((12.0 * 333334.0))) == 0.0);
  /* write through a transposed view, read back through the original */
  tfe_view_modp t = {0};
  assert_int_equal(tfe_permute_modp(&a.v, (int[]){1, 0}, &t), TFE_OK);
  assert_int_equal(tfe_set_modp(&t, (int64_t[]){2, 0}, tfe_sr_from_f64_modp(-1)), TFE_OK);
  assert_int_equal(tfe_get_modp(&a.v, (int64_t[]){0, 2}, &x), TFE_OK);
  assert_int_equal(x.v, MODP - 1);
  /* dtype-tagged handle: the kind is TFE_DT_CUSTOM, converts back, refuses shipped kinds */
  tfe_dyn h = {0};
  assert_int_equal(tfe_tensor_to_dyn_modp(&a, &h), TFE_OK);
  assert_int_equal(h.dtype, TFE_DT_CUSTOM);
  tfe_dyn h2 = {0};
  assert_int_equal(tfe_dyn_select(&h, 0, 2, &h2), TFE_OK);
  tfe_view_modp back = {0};
  assert_int_equal(tfe_dyn_as_view_modp(&h2, &back), TFE_OK);
  assert_int_equal(tfe_get_modp(&back, (int64_t[]){2}, &x), TFE_OK);
  assert_int_equal(x.v, (uint32_t)((8ull * 333334ull) % MODP));
  tfe_view_f64 wrong = {0};
  TU_EXPECT_ERR(tfe_dyn_as_view_f64(&h, &wrong), TFE_ERR_DTYPE, "holds user-kind elements, not f64");
  unsigned char scratch[16]; /* room for any shipped kind: the switch cannot know it is unused */
  TU_EXPECT_ERR(tfe_dyn_get(&h, (int64_t[]){0, 0}, scratch), TFE_ERR_DTYPE, "TFE_DT_CUSTOM");
  tfe_dyn_release(&h2);
  tfe_dyn_release(&h);
  tfe_tensor_release_modp(&a);
  tfe_tensor_release_modp(&z);
  tfe_tensor_release_modp(&o);
}

static void test_lse_tensors(void **st) {
  (void)st;
  tfe_tensor_lse z = {0};
  int64_t dims[1] = {4};
  assert_int_equal(tfe_zeros_lse(&z, 1, dims, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 4; i++) assert_true(isinf(z.v.data[i].v) && z.v.data[i].v < 0);
  /* log-sum-exp of log(1), log(2), log(3), log(4) over a reversed slice is log(10) */
  for (int64_t i = 0; i < 4; i++) assert_int_equal(tfe_set_lse(&z.v, &i, tfe_sr_from_f64_lse(log((double)(i + 1)))), TFE_OK);
  tfe_view_lse rv = {0};
  assert_int_equal(tfe_slice_axis_lse(&z.v, 0, 3, -1, -1, &rv), TFE_OK);
  lse acc = tfe_sr_zero_lse(), x = tfe_sr_zero_lse();
  for (int64_t i = 0; i < 4; i++) {
    assert_int_equal(tfe_get_lse(&rv, &i, &x), TFE_OK);
    acc = tfe_sr_add_lse(acc, x);
  }
  assert_true(tfe_sr_dist_lse(acc, tfe_sr_from_f64_lse(log(10.0))) < 1e-12);
  /* a broadcast view cannot be written */
  tfe_view_lse b = {0};
  assert_int_equal(tfe_broadcast_lse(&z.v, 2, (int64_t[]){2, 4}, &b), TFE_OK);
  TU_EXPECT_ERR(tfe_set_lse(&b, (int64_t[]){0, 0}, x), TFE_ERR_OVERLAP, "stride 0");
  tfe_tensor_release_lse(&z);
}


/* The contraction and einsum rooms on a user kind: random chains A(i,j) B(j,k) C(k,l) mod p,
 * through tfe_contract (binary, with a transposed operand) and tfe_einsum (three operands),
 * against a naive loop. */
static modp um_rand(tu_rng *r) { modp x = {(uint32_t)(tu_next(r) % MODP)}; return x; }
static void test_modp_contract_einsum(void **st) {
  (void)st;
  tu_rng r = {777};
  for (int it = 0; it < tu_cases(200); it++) {
    int64_t ni = tu_int(&r, 1, 6), nj = tu_int(&r, 1, 6), nk = tu_int(&r, 1, 6), nl = tu_int(&r, 1, 6);
    tfe_tensor_modp A = {0}, B = {0}, C = {0}, AB = {0}, ABC = {0};
    assert_int_equal(tfe_empty_modp(&A, 2, (int64_t[]){ni, nj}, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_empty_modp(&B, 2, (int64_t[]){nk, nj}, TFE_ROWMAJOR), TFE_OK); /* B^T stored */
    assert_int_equal(tfe_empty_modp(&C, 2, (int64_t[]){nk, nl}, TFE_COLMAJOR), TFE_OK);
    for (int64_t q = 0; q < ni * nj; q++) A.v.data[q] = um_rand(&r);
    for (int64_t q = 0; q < nk * nj; q++) B.v.data[q] = um_rand(&r);
    for (int64_t q = 0; q < nk * nl; q++) C.v.data[q] = um_rand(&r);
    tfe_view_modp Bt; /* (j, k) view of the row-major (k, j) buffer: a transposed operand */
    assert_int_equal(tfe_permute_modp(&B.v, (int[]){1, 0}, &Bt), TFE_OK);
    assert_int_equal(tfe_zeros_modp(&AB, 2, (int64_t[]){ni, nk}, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_contract_modp(tfe_sr_one_modp(), &A.v, (int32_t[]){0, 1}, &Bt, (int32_t[]){1, 2},
                                       tfe_sr_zero_modp(), &AB.v, (int32_t[]){0, 2}), TFE_OK);
    tfe_view_modp ops[3] = {A.v, Bt, C.v};
    if (tfe_einsum_modp(&ABC, "ij,jk,kl->il", 3, ops) != TFE_OK) fail_msg("%s", tfe_last_error());
    for (int64_t i = 0; i < ni; i++)
      for (int64_t l = 0; l < nl; l++) {
        modp want = tfe_sr_zero_modp();
        for (int64_t k = 0; k < nk; k++) {
          modp ab = tfe_sr_zero_modp();
          for (int64_t j = 0; j < nj; j++) {
            modp a = A.v.data[i + j * ni], b = B.v.data[k * nj + j];
            ab = tfe_sr_add_modp(ab, tfe_sr_mul_modp(a, b));
          }
          if (l == 0) assert_int_equal(AB.v.data[i + k * ni].v, ab.v);
          want = tfe_sr_add_modp(want, tfe_sr_mul_modp(ab, C.v.data[k + l * nk]));
        }
        modp got = {0};
        assert_int_equal(tfe_get_modp(&ABC.v, (int64_t[]){i, l}, &got), TFE_OK);
        assert_int_equal(got.v, want.v);
      }
    tfe_tensor_release_modp(&A); tfe_tensor_release_modp(&B); tfe_tensor_release_modp(&C);
    tfe_tensor_release_modp(&AB); tfe_tensor_release_modp(&ABC);
  }
  tfe_einsum_cache_clear();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_userkind_view_ops),
      cmocka_unit_test(test_modp_tensors),
      cmocka_unit_test(test_lse_tensors),
      cmocka_unit_test(test_modp_contract_einsum),
  };
  return cmocka_run_group_tests_name("userkind", tests, NULL, NULL);
}
