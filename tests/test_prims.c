/* tests/test_prims.c — semiring GEMM (every micro-kernel this CPU runs) and argmax against
 * naive loops with ties; the backend protocol; describe/plan/execute misuse. */
#include "testutil.h"
/* Sets one tuning field (core/tuning.h), checked. */
#define TUNE(field, value)                                   \
  do {                                                       \
    tfe_tuning t_ = tfe_tuning_get();                        \
    t_.field = (value);                                      \
    assert_int_equal(tfe_tuning_set(&t_), TFE_OK);           \
  } while (0)
#include <pthread.h> /* not C11 threads: ThreadSanitizer intercepts pthread_create only */

/* Naive tropical/integer reference: C = alpha * sum_k A*B + beta*C, semiring ops. */
#define TP_REF(S, T)                                                                                       \
  static void tp_ref_##S(int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t rsa, int64_t csa,   \
                         const T *b, int64_t rsb, int64_t csb, T beta, T *c, int64_t rsc, int64_t csc) {   \
    for (int64_t i = 0; i < m; i++)                                                                        \
      for (int64_t j = 0; j < n; j++) {                                                                    \
        T acc = tfe_sr_zero_##S();                                                                         \
        for (int64_t p = 0; p < k; p++)                                                                    \
          acc = tfe_sr_add_##S(acc, tfe_sr_mul_##S(a[i * rsa + p * csa], b[p * rsb + j * csb]));          \
        T *cp = &c[i * rsc + j * csc];                                                                     \
        T r = tfe_sr_mul_##S(alpha, acc);                                                                  \
        *cp = tfe_sr_eq_##S(beta, tfe_sr_zero_##S()) ? r : tfe_sr_add_##S(r, tfe_sr_mul_##S(beta, *cp));   \
      }                                                                                                    \
  }
TP_REF(maxplus_f64, tfe_maxplus_f64)
TP_REF(maxplus_f32, tfe_maxplus_f32)
TP_REF(minplus_f64, tfe_minplus_f64)
TP_REF(minplus_f32, tfe_minplus_f32)
TP_REF(maxtimes_f64, tfe_maxtimes_f64)
TP_REF(maxtimes_f32, tfe_maxtimes_f32)
TP_REF(i32, int32_t)
TP_REF(i64, int64_t)

static int64_t tp_stride_layout(tu_rng *r, int64_t rows, int64_t cols, int64_t *rs, int64_t *cs) {
  /* column-major, row-major, or padded; returns the element count to allocate */
  int64_t pad = tu_int(r, 0, 3);
  if (tu_int(r, 0, 1)) { *rs = 1; *cs = rows + pad; return (rows + pad) * cols + 1; }
  *cs = 1; *rs = cols + pad;
  return (cols + pad) * rows + 1;
}

/* Random m, n, k crossing the MC/KC block sizes, random layouts, alpha/beta, values with ties. */
#define TP_GEMM_TEST(S, T, GEN)                                                                           \
  static void tp_gemm_##S(tu_rng *r, int cases) {                                                         \
    for (int cs_ = 0; cs_ < cases; cs_++) {                                                               \
      int64_t m = tu_int(r, 0, 140), n = tu_int(r, 0, 40), k = tu_int(r, 0, 300);                         \
      if (tu_int(r, 0, 3) == 0) { m = tu_int(r, 0, 5); n = tu_int(r, 0, 5); k = tu_int(r, 0, 5); }        \
      int64_t rsa, csa, rsb, csb, rsc, csc;                                                               \
      int64_t na = tp_stride_layout(r, m, k, &rsa, &csa), nb = tp_stride_layout(r, k, n, &rsb, &csb);     \
      int64_t nc = tp_stride_layout(r, m, n, &rsc, &csc);                                                 \
      T *a = malloc(sizeof(T) * na), *b = malloc(sizeof(T) * nb), *c = malloc(sizeof(T) * nc),            \
        *w = malloc(sizeof(T) * nc);                                                                      \
      for (int64_t i = 0; i < na; i++) a[i] = GEN;                                                        \
      for (int64_t i = 0; i < nb; i++) b[i] = GEN;                                                        \
      for (int64_t i = 0; i < nc; i++) w[i] = c[i] = GEN;                                                 \
      T alpha = tu_int(r, 0, 1) ? tfe_sr_one_##S() : GEN;                                                 \
      T beta = tu_int(r, 0, 2) == 0 ? tfe_sr_zero_##S() : GEN;                                            \
      assert_int_equal(tfe_semiring_gemm_##S(m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc, \
                                             (int)tu_int(r, 1, 2)), TFE_OK);                              \
      tp_ref_##S(m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, w, rsc, csc);                            \
      for (int64_t i = 0; i < nc; i++)                                                                    \
        if (tfe_sr_dist_##S(c[i], w[i]) != 0)                                                             \
          fail_msg(#S " m=%lld n=%lld k=%lld: element %lld differs", (long long)m, (long long)n,          \
                   (long long)k, (long long)i);                                                           \
      free(a); free(b); free(c); free(w);                                                                 \
    }                                                                                                     \
  }
#define TP_TROP(S, T) ((T){(double)tu_int(r, -6, 6)})
#define TP_NONNEG(S, T) ((T){(double)tu_int(r, 0, 5)})
TP_GEMM_TEST(maxplus_f64, tfe_maxplus_f64, TP_TROP(maxplus_f64, tfe_maxplus_f64))
TP_GEMM_TEST(maxplus_f32, tfe_maxplus_f32, TP_TROP(maxplus_f32, tfe_maxplus_f32))
TP_GEMM_TEST(minplus_f64, tfe_minplus_f64, TP_TROP(minplus_f64, tfe_minplus_f64))
TP_GEMM_TEST(minplus_f32, tfe_minplus_f32, TP_TROP(minplus_f32, tfe_minplus_f32))
TP_GEMM_TEST(maxtimes_f64, tfe_maxtimes_f64, TP_NONNEG(maxtimes_f64, tfe_maxtimes_f64))
TP_GEMM_TEST(maxtimes_f32, tfe_maxtimes_f32, TP_NONNEG(maxtimes_f32, tfe_maxtimes_f32))
TP_GEMM_TEST(i32, int32_t, (int32_t)tu_int(r, -3, 3))
TP_GEMM_TEST(i64, int64_t, (int64_t)tu_int(r, -3, 3))

/* Every ISA this CPU supports: generic (0), AVX2 (1), AVX-512 (2). */
static void test_tropical_gemm_all_kernels(void **st) {
  (void)st;
  int isas[3] = {0, 0, 0};
  isas[0] = 1;
#if defined(TFE__SG_HAVE_SIMD)
  __builtin_cpu_init();
  isas[1] = __builtin_cpu_supports("avx2");
  isas[2] = __builtin_cpu_supports("avx512f");
#endif
  for (int isa = 0; isa < 3; isa++) {
    if (!isas[isa]) continue;
    TUNE(semiring_gemm_isa, isa + 1);
    tu_rng r = {0xabc + (uint64_t)isa};
    int n = tu_cases(120);
    tp_gemm_maxplus_f64(&r, n); tp_gemm_maxplus_f32(&r, n);
    tp_gemm_minplus_f64(&r, n); tp_gemm_minplus_f32(&r, n);
    tp_gemm_maxtimes_f64(&r, n); tp_gemm_maxtimes_f32(&r, n);
    print_message("kernel %s checked\n", tfe_semiring_gemm_kernel_maxplus_f64());
  }
  TUNE(semiring_gemm_isa, 0);
}

static void test_integer_gemm(void **st) {
  (void)st;
  tu_rng r = {0x515};
  tp_gemm_i32(&r, tu_cases(100));
  tp_gemm_i64(&r, tu_cases(100));
}

/* argmax: first winner on ties, against a loop written the obvious way. */
static void test_argmax_ties(void **st) {
  (void)st;
  tu_rng r = {0x99};
  for (int cs = 0; cs < tu_cases(300); cs++) {
    int64_t m = tu_int(&r, 0, 9), n = tu_int(&r, 0, 9), k = tu_int(&r, 0, 12);
    tfe_maxplus_f64 a[120], b[120], c[100], alpha = {(double)tu_int(&r, -2, 2)};
    int64_t arg[100];
    for (int i = 0; i < 120; i++) a[i].v = (double)tu_int(&r, -2, 2); /* m*k <= 108 */
    for (int i = 0; i < 120; i++) b[i].v = (double)tu_int(&r, -2, 2);
    if (tu_int(&r, 0, 4) == 0) a[0].v = -INFINITY;
    assert_int_equal(tfe_semiring_gemm_argmax_maxplus_f64(m, n, k, alpha, a, 1, m, b, n, 1, c, 1, m, arg, n, 1), TFE_OK);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double best = -INFINITY;
        int64_t w = -1;
        for (int64_t p = 0; p < k; p++) {
          double v = a[i + p * m].v + b[p * n + j].v;
          if (w < 0 || v > best) { best = v; w = p; }
        }
        assert_int_equal(arg[i * n + j], w);
        assert_true(c[i + j * m].v == (k ? alpha.v + best : -INFINITY) || (k && best == -INFINITY));
      }
  }
  /* min-plus: first minimum */
  tfe_minplus_f32 a[3] = {{1}, {0}, {0}}, b[3] = {{0}, {1}, {1}}, c[1], one = {0};
  int64_t arg = 7;
  assert_int_equal(tfe_semiring_gemm_argmax_minplus_f32(1, 1, 3, one, a, 1, 1, b, 1, 1, c, 1, 1, &arg, 1, 1), TFE_OK);
  assert_int_equal(arg, 0); /* 1+0, 0+1, 0+1 all tie at 1: the first wins */
  assert_true(c[0].v == 1);
}

/* argmax differential test for every tropical kind: sizes crossing the MC / KC blocks, random
 * layouts, alpha, small integer values (many ties), reference = first strictly better k. */
#define TP_ARGMAX_TEST(S, T, GEN)                                                                        \
  static void tp_argmax_##S(tu_rng *r, int cases) {                                                      \
    for (int cs_ = 0; cs_ < cases; cs_++) {                                                              \
      int64_t m = tu_int(r, 0, 150), n = tu_int(r, 0, 20), k = tu_int(r, 0, 300);                        \
      if (tu_int(r, 0, 2) == 0) { m = tu_int(r, 0, 6); n = tu_int(r, 0, 6); k = tu_int(r, 0, 6); }       \
      int64_t rsa, csa, rsb, csb, rsc, csc, rsi, csi;                                                    \
      int64_t na = tp_stride_layout(r, m, k, &rsa, &csa), nb = tp_stride_layout(r, k, n, &rsb, &csb);    \
      int64_t nc = tp_stride_layout(r, m, n, &rsc, &csc), ni = tp_stride_layout(r, m, n, &rsi, &csi);    \
      T *a = malloc(sizeof(T) * na), *b = malloc(sizeof(T) * nb), *c = malloc(sizeof(T) * nc);           \
      int64_t *arg = malloc(sizeof(int64_t) * ni);                                                       \
      for (int64_t i = 0; i < na; i++) a[i] = GEN;                                                       \
      for (int64_t i = 0; i < nb; i++) b[i] = GEN;                                                       \
      T alpha = tu_int(r, 0, 1) ? tfe_sr_one_##S() : GEN;                                                \
      assert_int_equal(tfe_semiring_gemm_argmax_##S(m, n, k, alpha, a, rsa, csa, b, rsb, csb, c, rsc, csc, \
                                                    arg, rsi, csi), TFE_OK);                             \
      for (int64_t i = 0; i < m; i++)                                                                    \
        for (int64_t j = 0; j < n; j++) {                                                                \
          T best = tfe_sr_zero_##S();                                                                    \
          int64_t w = -1;                                                                                \
          for (int64_t p = 0; p < k; p++) {                                                              \
            T v = tfe_sr_mul_##S(a[i * rsa + p * csa], b[p * rsb + j * csb]);                            \
            if (w < 0 || !tfe_sr_eq_##S(tfe_sr_add_##S(best, v), best)) { best = v; w = p; }             \
          }                                                                                              \
          if (arg[i * rsi + j * csi] != w || tfe_sr_dist_##S(c[i * rsc + j * csc], tfe_sr_mul_##S(alpha, best)) != 0) \
            fail_msg(#S " m=%lld n=%lld k=%lld at (%lld,%lld): argmax %lld, want %lld", (long long)m,     \
                     (long long)n, (long long)k, (long long)i, (long long)j, (long long)arg[i * rsi + j * csi], \
                     (long long)w);                                                                      \
        }                                                                                                \
      free(a); free(b); free(c); free(arg);                                                              \
    }                                                                                                    \
  }
TP_ARGMAX_TEST(maxplus_f64, tfe_maxplus_f64, TP_TROP(maxplus_f64, tfe_maxplus_f64))
TP_ARGMAX_TEST(maxplus_f32, tfe_maxplus_f32, TP_TROP(maxplus_f32, tfe_maxplus_f32))
TP_ARGMAX_TEST(minplus_f64, tfe_minplus_f64, TP_TROP(minplus_f64, tfe_minplus_f64))
TP_ARGMAX_TEST(minplus_f32, tfe_minplus_f32, TP_TROP(minplus_f32, tfe_minplus_f32))
TP_ARGMAX_TEST(maxtimes_f64, tfe_maxtimes_f64, TP_NONNEG(maxtimes_f64, tfe_maxtimes_f64))
TP_ARGMAX_TEST(maxtimes_f32, tfe_maxtimes_f32, TP_NONNEG(maxtimes_f32, tfe_maxtimes_f32))

/* Generic and AVX-512 argmax kernels, one and two threads (parallel threshold at its minimum). */
static void test_argmax_blocked(void **st) {
  (void)st;
  for (int isa = 0; isa < 3; isa++) {
#if defined(TFE__SG_HAVE_SIMD)
    __builtin_cpu_init();
    if ((isa == 1 && !__builtin_cpu_supports("avx2")) || (isa == 2 && !__builtin_cpu_supports("avx512f"))) continue;
#else
    if (isa > 0) continue;
#endif
    TUNE(semiring_gemm_isa, isa + 1);
    for (int th = 1; th <= 2; th++) {
      tfe_set_num_threads(th);
      TUNE(contract_par_grain, th == 2 ? 1 : (int64_t)1 << 20);
      tu_rng r = {0x5eed + (uint64_t)(isa * 2 + th)};
      int n = tu_cases(40);
      tp_argmax_maxplus_f64(&r, n); tp_argmax_maxplus_f32(&r, n);
      tp_argmax_minplus_f64(&r, n); tp_argmax_minplus_f32(&r, n);
      tp_argmax_maxtimes_f64(&r, n); tp_argmax_maxtimes_f32(&r, n);
    }
  }
  TUNE(semiring_gemm_isa, 0);
  tfe_set_num_threads(0);
  TUNE(contract_par_grain, (int64_t)1 << 20);
}

/* ---- the backend protocol ------------------------------------------------------------------- */
static tfe_dyn tp_dyn(double *p, int rank, const int64_t *dims) {
  tfe_dyn d;
  memset(&d, 0, sizeof d);
  d.dtype = TFE_DT_F64;
  d.data = p;
  tfe_layout_dense(rank, dims, TFE_COLMAJOR, &d.lay);
  return d;
}

static void test_backend_ops(void **st) {
  (void)st;
  tfe_prims_backend be = tfe_prims_cpu();
  double one = 1, zero = 0, a[9], b[9], c[9];
  for (int i = 0; i < 9; i++) { a[i] = i + 1; b[i] = 2 * i - 3; c[i] = -1; }
  int64_t d33[2] = {3, 3}, d3[1] = {3};
  tfe_dyn A = tp_dyn(a, 2, d33), B = tp_dyn(b, 2, d33), C = tp_dyn(c, 2, d33), v = tp_dyn(c, 1, d3), s = tp_dyn(c, 0, NULL);
  int32_t ij[2] = {0, 1}, ji[2] = {1, 0}, ii[2] = {0, 0}, jk[2] = {1, 2}, ik[2] = {0, 2}, i0[1] = {0};
  /* trace */
  tfe_prim_desc d = {TFE_PRIM_TRACE, &A, NULL, &s, ii, NULL, NULL, &one, &zero};
  assert_int_equal(tfe_prims_execute(&be, &d, NULL), TFE_OK);
  assert_true(c[0] == 1 + 5 + 9);
  /* permute */
  d = (tfe_prim_desc){TFE_PRIM_PERMUTE, &A, NULL, &C, ij, NULL, ji, &one, &zero};
  assert_int_equal(tfe_prims_execute(&be, &d, NULL), TFE_OK);
  assert_true(c[1] == a[3] && c[3] == a[1]);
  /* reduce: row sums */
  d = (tfe_prim_desc){TFE_PRIM_REDUCE, &A, NULL, &v, ij, NULL, i0, &one, &zero};
  assert_int_equal(tfe_prims_execute(&be, &d, NULL), TFE_OK);
  assert_true(c[0] == 1 + 4 + 7 && c[2] == 3 + 6 + 9);
  /* anti_diag: vector onto a diagonal, off-diagonal beta*C = 0 */
  double vec[3] = {7, 8, 9};
  tfe_dyn V = tp_dyn(vec, 1, d3);
  d = (tfe_prim_desc){TFE_PRIM_ANTI_DIAG, &V, NULL, &C, i0, NULL, ii, &one, &zero};
  assert_int_equal(tfe_prims_execute(&be, &d, NULL), TFE_OK);
  assert_true(c[0] == 7 && c[4] == 8 && c[8] == 9 && c[1] == 0 && c[5] == 0);
  /* batched_gemm (no batch label here) */
  d = (tfe_prim_desc){TFE_PRIM_BATCHED_GEMM, &A, &B, &C, ij, jk, ik, &one, &zero};
  assert_int_equal(tfe_prims_execute(&be, &d, NULL), TFE_OK);
  double want = a[0] * b[0] + a[3] * b[1] + a[6] * b[2];
  assert_true(c[0] == want);
  /* wrong label shape for the named operation */
  d = (tfe_prim_desc){TFE_PRIM_TRACE, &A, NULL, &s, ij, NULL, NULL, &one, &zero};
  TU_EXPECT_ERR(tfe_prims_execute(&be, &d, NULL), TFE_ERR_INVALID, "trace: A needs a repeated label");
  d = (tfe_prim_desc){TFE_PRIM_BATCHED_GEMM, &A, &B, &C, ii, jk, ik, &one, &zero};
  TU_EXPECT_ERR(tfe_prims_execute(&be, &d, NULL), TFE_ERR_INVALID, "not a batch, M, N or K label");
  /* unsupported: a backend without the contract extension */
  tfe_prims_backend lean = be;
  lean.name = "lean";
  lean.exec[TFE_PRIM_CONTRACT] = NULL;
  assert_false(tfe_prims_supports(&lean, TFE_PRIM_CONTRACT));
  assert_true(tfe_prims_supports(&lean, TFE_PRIM_TRACE));
  d = (tfe_prim_desc){TFE_PRIM_CONTRACT, &A, &B, &C, ij, jk, ik, &one, &zero};
  TU_EXPECT_ERR(tfe_prims_execute(&lean, &d, NULL), TFE_ERR_UNSUPPORTED, "backend 'lean' does not provide contract");
  void *plan = (void *)&plan;
  TU_EXPECT_ERR(tfe_prims_plan(&lean, &d, &plan), TFE_ERR_UNSUPPORTED, "does not provide contract");
  assert_null(plan);
  /* dtype mismatch through the dtype-tagged layer */
  float f[9] = {0};
  tfe_dyn F = A;
  F.dtype = TFE_DT_F32;
  F.data = f;
  d = (tfe_prim_desc){TFE_PRIM_CONTRACT, &A, &F, &C, ij, jk, ik, &one, &zero};
  TU_EXPECT_ERR(tfe_prims_execute(&be, &d, NULL), TFE_ERR_DTYPE, "A is f64, B is f32");
}

/* ---- describe / plan / execute misuse ------------------------------------------------------- */
static void test_plan_misuse(void **st) {
  (void)st;
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {0};
  tfe_view_f64 A = {a, {2, 0, {2, 3}, {1, 2}}, false}, B = {b, {2, 0, {3, 2}, {1, 3}}, false};
  tfe_view_f64 C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  int32_t la[] = {0, 1}, lb[] = {1, 2}, lc[] = {0, 2};
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  assert_int_equal(tfe_contract_describe_f64(&d, &A, la, &B, lb, &C, lc), TFE_OK);
  assert_int_equal(tfe_contract_plan_create(&d, &P), TFE_OK);
  assert_int_equal(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &C), TFE_OK);
  assert_true(c[0] == 1 && c[3] == 2 + 4 + 6);
  /* the same plan on views of another kind */
  float fa[6] = {0}, fb[6] = {0}, fc[4] = {0};
  tfe_view_f32 FA = {fa, A.lay, false}, FB = {fb, B.lay, false}, FC = {fc, C.lay, false};
  TU_EXPECT_ERR(tfe_contract_execute_f32(P, 1.0f, &FA, &FB, 0.0f, &FC), TFE_ERR_DTYPE, "plan was made for f64, called with f32");
  /* views with other strides */
  tfe_view_f64 At = A;
  At.lay.strides[0] = 3; At.lay.strides[1] = 1;
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &At, &B, 0.0, &C), TFE_ERR_SHAPE, "plan expects");
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, NULL, 0.0, &C), TFE_ERR_INVALID, "plan is binary");
  tfe_view_f64 Cal = {a, C.lay, false};
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &Cal), TFE_ERR_OVERLAP, "overlaps input A");
  tfe_contract_plan_release(P);
  /* describe rejects bad ranks and NULL labels; plan_create reports label errors */
  tfe_view_f64 Ar = A;
  Ar.lay.rank = -1;
  TU_EXPECT_ERR(tfe_contract_describe_f64(&d, &Ar, la, &B, lb, &C, lc), TFE_ERR_RANK, "rank -1");
  TU_EXPECT_ERR(tfe_contract_describe_f64(&d, &A, NULL, &B, lb, &C, lc), TFE_ERR_NULL, "labels of A");
  assert_int_equal(tfe_contract_describe_f64(&d, &A, la, &B, (int32_t[]){1, 5}, &C, lc), TFE_OK);
  TU_EXPECT_ERR(tfe_contract_plan_create(&d, &P), TFE_ERR_INVALID, "output label 2");
  /* semiring GEMM argument checks */
  tfe_maxplus_f64 z = {0};
  TU_EXPECT_ERR(tfe_semiring_gemm_maxplus_f64(-1, 1, 1, z, &z, 1, 1, &z, 1, 1, z, &z, 1, 1, 1), TFE_ERR_INVALID, "negative size");
  TU_EXPECT_ERR(tfe_semiring_gemm_argmax_maxplus_f64(1, 1, 1, z, &z, 1, 1, &z, 1, 1, &z, 1, 1, NULL, 1, 1), TFE_ERR_NULL, "NULL");
  /* allocation failure leaves C untouched */
  double big_a[64 * 64], big_b[64 * 64], big_c[64 * 64];
  for (int i = 0; i < 64 * 64; i++) { big_a[i] = 1; big_b[i] = 1; big_c[i] = 5; }
  tfe_view_f64 GA = {big_a, {2, 0, {64, 64}, {64, 1}}, false}, GB = {big_b, {2, 0, {64, 64}, {1, 64}}, false};
  tfe_view_f64 GC = {big_c, {2, 0, {64, 64}, {64, 1}}, false};
  tfe_contract_cache_clear();
  tfe_contract_workspace_release();
  for (long n = 0; n < 4; n++) {
    tu_fail_after(n);
    tfe_status s = tfe_contract_f64(1.0, &GA, la, &GB, lb, 1.0, &GC, (int32_t[]){2, 0});
    tu_alloc_restore();
    if (s == TFE_OK) break;
    assert_int_equal(s, TFE_ERR_ALLOC);
    for (int i = 0; i < 64 * 64; i++) assert_true(big_c[i] == 5);
  }
  tu_fail_after(-1); /* the cached plan came from the counting allocator: free it through it */
  tfe_contract_cache_clear();
  assert_int_equal(tu_live_allocs, 0);
  tu_alloc_restore();
}

/* ---- the plan cache: LRU eviction and concurrent use ----------------------------------------- */
/* ij,jk->ik with A = 1 (2 x d), B = 1 (d x 2): every C element is d. Each d is a distinct key. */
static tfe_status pc_call(int64_t d, double *a, double *b, double *c) {
  tfe_view_f64 A = {a, {2, 0, {2, d}, {1, 2}}, false}, B = {b, {2, 0, {d, 2}, {1, d}}, false};
  tfe_view_f64 C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  return tfe_contract_f64(1.0, &A, (int32_t[]){0, 1}, &B, (int32_t[]){1, 2}, 0.0, &C, (int32_t[]){0, 2});
}
#define PC_MAXD (256 + 64) /* the default capacity (contract_plan_cache_size) + 64 */
static bool pc_hit(int64_t d, double *a, double *b, double *c) {
  long h0, h1;
  tfe_contract_cache_stats(&h0, NULL);
  assert_int_equal(pc_call(d, a, b, c), TFE_OK);
  tfe_contract_cache_stats(&h1, NULL);
  assert_true(c[0] == (double)d && c[3] == (double)d);
  return h1 == h0 + 1;
}
static void test_plan_cache_lru(void **st) {
  (void)st;
  static double a[2 * PC_MAXD], b[2 * PC_MAXD], c[4];
  for (int i = 0; i < 2 * PC_MAXD; i++) a[i] = b[i] = 1;
  tfe_contract_cache_clear();
  long n, cap, ev0, ev1;
  tfe_contract_cache_info(&n, &cap, &ev0);
  assert_int_equal(n, 0);
  assert_int_equal(cap, tfe_tuning_default().contract_plan_cache_size);
  for (int64_t d = 1; d <= cap + 10; d++) assert_false(pc_hit(d, a, b, c)); /* all new keys */
  tfe_contract_cache_info(&n, NULL, &ev1);
  assert_int_equal(n, cap);
  assert_int_equal(ev1 - ev0, 10);             /* d = 1..10 were the least recently used */
  assert_true(pc_hit(cap + 10, a, b, c));      /* recent keys stay */
  assert_true(pc_hit(20, a, b, c));            /* touch d = 20: now most recent */
  assert_false(pc_hit(cap + 11, a, b, c));     /* evicts d = 11, the least recently used */
  assert_true(pc_hit(20, a, b, c));
  assert_true(pc_hit(12, a, b, c));
  assert_false(pc_hit(11, a, b, c));           /* was evicted (and now evicts d = 13) */
  assert_false(pc_hit(13, a, b, c));
  tfe_contract_cache_clear();
  tfe_contract_cache_info(&n, NULL, NULL);
  assert_int_equal(n, 0);
  assert_false(pc_hit(20, a, b, c));           /* cleared */
  tfe_contract_cache_clear();
}

typedef struct pc_job { uint64_t seed; int iters; int bad; } pc_job;
static void *pc_worker(void *arg) {
  pc_job *j = (pc_job *)arg;
  double *a = malloc(sizeof(double) * 2 * PC_MAXD), *b = malloc(sizeof(double) * 2 * PC_MAXD), c[4];
  for (int i = 0; i < 2 * PC_MAXD; i++) a[i] = b[i] = 1;
  tu_rng r = {j->seed};
  for (int it = 0; it < j->iters; it++) {
    /* a working set larger than the cache, so that both threads evict while the other looks up */
    int64_t d = tu_int(&r, 1, PC_MAXD - 1);
    c[0] = c[3] = -1;
    if (pc_call(d, a, b, c) != TFE_OK || c[0] != (double)d || c[3] != (double)d) j->bad++;
  }
  free(a); free(b);
  return NULL;
}
static void test_plan_cache_threads(void **st) {
  (void)st;
  tfe_contract_cache_clear();
  pc_job jobs[2] = {{11, tu_cases(20000), 0}, {12, tu_cases(20000), 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&t[i], NULL, pc_worker, &jobs[i]), 0);
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
  assert_int_equal(jobs[0].bad + jobs[1].bad, 0);
  long n, cap, ev, hits, misses;
  tfe_contract_cache_info(&n, &cap, &ev);
  tfe_contract_cache_stats(&hits, &misses);
  print_message("cache after 2 threads: %ld entries, %ld evictions, %ld hits, %ld misses\n", n, ev, hits, misses);
  assert_true(n == cap && ev > 0 && hits > 0);
  tfe_contract_cache_clear(); /* LeakSanitizer: every evicted or cleared plan was freed */
}

/* tfe_tuning_set refuses a bad prims or einsum field, names it, and changes nothing. */
static void test_tuning_prims_bad(void **st) {
  (void)st;
  tfe_tuning keep = tfe_tuning_get(), bad = keep;
  bad.contract_small_mode = 5;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "contract_small_mode");
  bad = keep; bad.contract_plan_cache_size = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "contract_plan_cache_size");
  bad = keep; bad.semiring_gemm_isa = 4;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "semiring_gemm_isa");
  bad = keep; bad.einsum_write_weight = NAN;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "einsum_write_weight");
  bad = keep; bad.einsum_plan_cache_size = -3;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "einsum_plan_cache_size");
  tfe_tuning now = tfe_tuning_get();
  assert_memory_equal(&now, &keep, sizeof now);
  tfe_tuning d = tfe_tuning_default();
  assert_int_equal(d.contract_plan_cache_size, 256);
  assert_int_equal(d.einsum_plan_cache_size, 64);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tropical_gemm_all_kernels),
      cmocka_unit_test(test_integer_gemm),
      cmocka_unit_test(test_argmax_ties),
      cmocka_unit_test(test_argmax_blocked),
      cmocka_unit_test(test_backend_ops),
      cmocka_unit_test(test_plan_misuse),
      cmocka_unit_test(test_plan_cache_lru),
      cmocka_unit_test(test_plan_cache_threads),
      cmocka_unit_test(test_tuning_prims_bad),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
