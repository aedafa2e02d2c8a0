/* tests/test_adversarial.c — the standing adversarial suite (issue 19): bad arguments to every
 * public entry of einsum and prims, absurd options, non-finite linalg input, tropical NaN and
 * infinity semantics against an order-free reference, integer wrapping, overlap, failed writes.
 * Each case asserts the status, a precise message that names the public function, and that
 * outputs are untouched. The tool's edges: tests/test_adversarial.tool__part.c. Runs under
 * ASan/UBSan with leak detection in `make test-sanitize`. */
#include "testutil.h"
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>

void adv_test_tool(void **state); /* tests/test_adversarial.tool__part.c */
void adv_test_tool_args(void **state);
void adv_test_tool_terminal(void **state);

/* An error whose message names `fn` (the public function), names no helper, and holds `needle`. */
#define ADV_ERR(expr, code, fn, needle)                                                          \
  do {                                                                                           \
    TU_EXPECT_ERR(expr, code, needle);                                                           \
    if (strncmp(tfe_last_error(), fn, strlen(fn)) != 0 || strstr(tfe_last_error(), "tfe__"))     \
      fail_msg("message '%s' does not start with '%s' or names a helper", tfe_last_error(), fn); \
  } while (0)

/* ---- 1. every argument checked before any is used ------------------------------------------------ */
static void test_einsum_labels_args(void **s) {
  (void)s;
  double a[6] = {1, 2, 3, 4, 5, 6};
  tfe_view_f64 v[2];
  int64_t d[2] = {2, 3};
  assert_int_equal(tfe_wrap_f64(&v[0], a, 6, 2, d, NULL, 0, TFE_COLMAJOR), TFE_OK);
  v[1] = v[0];
  int32_t l0[2] = {0, 1}, l1[2] = {0, 2}, lo[2] = {1, 2};
  const int32_t *labs[2] = {l0, l1}, *nolab[2] = {l0, NULL};
  tfe_tensor_f64 out = {0};
  const char *fn = "tfe_einsum_labels_f64";
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, v, labs, lo, -1, NULL), TFE_ERR_RANK, fn, "output rank -1");
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, v, labs, lo, INT32_MIN, NULL), TFE_ERR_RANK, fn, "output rank -2147483648");
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, v, labs, lo, 1 << 30, NULL), TFE_ERR_RANK, fn, "outside [0, 64]");
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, v, NULL, lo, 2, NULL), TFE_ERR_NULL, fn, "'labels' is NULL");
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, v, nolab, lo, 2, NULL), TFE_ERR_NULL, fn, "labels of operand 1 are NULL");
  ADV_ERR(tfe_einsum_labels_f64(&out, -5, v, labs, lo, 2, NULL), TFE_ERR_INVALID, fn, "at least one operand (got -5)");
  ADV_ERR(tfe_einsum_labels_f64(&out, 0, v, labs, lo, 2, NULL), TFE_ERR_INVALID, fn, "(got 0)");
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, NULL, labs, lo, 2, NULL), TFE_ERR_NULL, fn, "'ops' is NULL");
  ADV_ERR(tfe_einsum_labels_f64(NULL, 2, v, labs, lo, 2, NULL), TFE_ERR_NULL, fn, "'out' is NULL");
  tfe_view_f64 bad[2] = {v[0], v[1]};
  bad[1].lay.rank = -3;
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, bad, labs, lo, 2, NULL), TFE_ERR_RANK, fn, "operand 1 has rank -3");
  bad[1].lay.rank = 1000;
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, bad, labs, lo, 2, NULL), TFE_ERR_RANK, fn, "operand 1 has rank 1000");
  bad[1] = v[1];
  bad[1].lay.dims[0] = -2;
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, bad, labs, lo, 2, NULL), TFE_ERR_INVALID, fn, "operand 1: ");
  int32_t big[2] = {0, 1};
  const int32_t *blabs[2] = {l0, big}; /* label 1 has sizes 3 and 3, 0 has 2 and 2: fine; then a clash */
  bad[1] = v[1];
  bad[1].lay.dims[1] = 2;
  bad[1].lay.dims[0] = 3;
  ADV_ERR(tfe_einsum_labels_f64(&out, 2, bad, blabs, NULL, 0, NULL), TFE_ERR_SHAPE, "tfe_einsum", "label 0 has size 3 in operand 1");
  /* the plan constructor: the same checks, its own name */
  const tfe_layout *lay[2] = {&v[0].lay, &v[1].lay};
  tfe_einsum_plan *p = NULL;
  const char *pn = "tfe_einsum_plan_new_labels";
  ADV_ERR(tfe_einsum_plan_new_labels(&p, TFE_DT_F64, 2, lay, labs, lo, -7, NULL), TFE_ERR_RANK, pn, "output rank -7");
  ADV_ERR(tfe_einsum_plan_new_labels(&p, TFE_DT_F64, 2, NULL, labs, lo, 2, NULL), TFE_ERR_NULL, pn, "'layouts' is NULL");
  ADV_ERR(tfe_einsum_plan_new_labels(&p, (tfe_dtype)999, 2, lay, labs, lo, 2, NULL), TFE_ERR_DTYPE, pn, "unknown dtype 999");
  ADV_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, NULL, 2, lay, NULL), TFE_ERR_NULL, "tfe_einsum_plan_new", "'expr' is NULL");
  ADV_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,ik->jk", -1, lay, NULL), TFE_ERR_INVALID, "tfe_einsum_plan_new",
          "(got -1)");
  assert_null(p);
  assert_null(out.st);
  assert_null(out.v.data);
}

/* String entries: bad labels, NULLs, and the parser's message under the public name. */
static void test_einsum_string_args(void **s) {
  (void)s;
  double a[6] = {1, 2, 3, 4, 5, 6}, c[4] = {7, 7, 7, 7};
  tfe_view_f64 v[2], o;
  int64_t d[2] = {2, 3}, dc[2] = {2, 2};
  assert_int_equal(tfe_wrap_f64(&v[0], a, 6, 2, d, NULL, 0, TFE_COLMAJOR), TFE_OK);
  v[1] = v[0];
  assert_int_equal(tfe_wrap_f64(&o, c, 4, 2, dc, NULL, 0, TFE_COLMAJOR), TFE_OK);
  tfe_tensor_f64 out = {0};
  ADV_ERR(tfe_einsum_f64(&out, "ij,kj->i-k", 2, v), TFE_ERR_PARSE, "tfe_einsum", "column");
  ADV_ERR(tfe_einsum_f64(&out, "ij,kj->ikq", 2, v), TFE_ERR_INVALID, "tfe_einsum", "q");
  ADV_ERR(tfe_einsum_f64(&out, NULL, 2, v), TFE_ERR_NULL, "tfe_einsum_with_f64", "'expr' is NULL");
  ADV_ERR(tfe_einsum_f64(&out, "ij,kj,jk->ik", 2, v), TFE_ERR_INVALID, "tfe_einsum", "");
  const char *fi = "tfe_einsum_into_with_f64";
  ADV_ERR(tfe_einsum_into_f64(&o, 1, 0, NULL, 2, v), TFE_ERR_NULL, fi, "'expr' is NULL");
  ADV_ERR(tfe_einsum_into_f64(&o, 1, 0, "ij,kj->ik", 2, NULL), TFE_ERR_NULL, fi, "'ops' is NULL");
  ADV_ERR(tfe_einsum_into_f64(NULL, 1, 0, "ij,kj->ik", 2, v), TFE_ERR_NULL, fi, "'out' is NULL");
  ADV_ERR(tfe_einsum_into_f64(&o, 1, 0, "ij,kj->ikk", 2, v), TFE_ERR_INVALID, "tfe_einsum", "");
  for (int i = 0; i < 4; i++) assert_true(c[i] == 7); /* untouched */
  ADV_ERR(tfe_einsum_execute_f64(NULL, 1, v, 0, &o), TFE_ERR_NULL, "tfe_einsum_execute_f64", "'p' is NULL");
  tfe_tensor_f64 ops[2];
  memset(ops, 0, sizeof ops);
  ADV_ERR(tfe_einsum_owned_f64(&out, "ij->", -1, ops, NULL), TFE_ERR_INVALID, "tfe_einsum_owned_f64", "n = -1");
  ADV_ERR(tfe_einsum_owned_f64(&out, "ij->", 1, NULL, NULL), TFE_ERR_NULL, "tfe_einsum_owned_f64", "n = 1");
  assert_null(out.st);
  /* the contraction entries: negative ranks and NULL labels */
  int32_t la[2] = {0, 1}, lc[2] = {0, 0};
  tfe_view_f64 badv = v[0];
  badv.lay.rank = -1;
  assert_int_not_equal(tfe_contract_f64(1, &badv, la, &v[1], la, 0, &o, lc), TFE_OK);
  assert_null(strstr(tfe_last_error(), "tfe__"));
  assert_int_not_equal(tfe_contract_f64(1, &v[0], NULL, &v[1], la, 0, &o, lc), TFE_OK);
  assert_null(strstr(tfe_last_error(), "tfe__"));
  ADV_ERR(tfe_semiring_gemm_f64(-1, 2, 2, 1, a, 1, 2, a, 1, 2, 0, c, 1, 2, 1), TFE_ERR_INVALID,
          "tfe_semiring_gemm_f64", "negative size (m -1");
  ADV_ERR(tfe_semiring_gemm_f64(2, 2, 2, 1, NULL, 1, 2, a, 1, 2, 0, c, 1, 2, 1), TFE_ERR_NULL,
          "tfe_semiring_gemm_f64", "NULL");
  /* a thread count of a million is capped: no million workspaces, a correct result */
  assert_int_equal(tfe_semiring_gemm_f64(2, 2, 3, 1, a, 1, 2, a, 2, 1, 0, c, 1, 2, 1000000), TFE_OK);
  assert_true(c[0] == 1 * 1 + 3 * 3 + 5 * 5);
}

/* ---- 4. absurd options ------------------------------------------------------------------------------ */
static void test_options(void **s) {
  (void)s;
  double a[4] = {1, 2, 3, 4};
  tfe_view_f64 v[3];
  int64_t d[2] = {2, 2};
  assert_int_equal(tfe_wrap_f64(&v[0], a, 4, 2, d, NULL, 0, TFE_COLMAJOR), TFE_OK);
  v[1] = v[2] = v[0];
  tfe_tensor_f64 out = {0};
  const char *fn = "tfe_einsum_with_f64", *e = "ij,jk,kl->il";
  struct { tfe_einsum_opts o; tfe_status st; const char *msg; } cs[16];
  int n = 0;
#define OPT(field, value, code, text) \
  do { memset(&cs[n].o, 0, sizeof cs[n].o); cs[n].o.field = value; cs[n].st = code; cs[n].msg = text; n++; } while (0)
  OPT(time_budget, INFINITY, TFE_ERR_INVALID, "time_budget must be a finite number (got inf)");
  OPT(time_budget, NAN, TFE_ERR_INVALID, "time_budget must be a finite number (got nan)");
  OPT(time_budget, -1, TFE_ERR_INVALID, "time_budget is -1 s, outside [0, 86400]");
  OPT(time_budget, 1e12, TFE_ERR_INVALID, "outside [0, 86400]");
  OPT(greedy_alpha, -INFINITY, TFE_ERR_INVALID, "greedy_alpha must be a finite number");
  OPT(greedy_temp, NAN, TFE_ERR_INVALID, "greedy_temp must be a finite number");
  OPT(write_weight, INFINITY, TFE_ERR_INVALID, "write_weight must be a finite number");
  OPT(greedy_trials, -3, TFE_ERR_INVALID, "greedy_trials is -3");
  OPT(greedy_trials, INT32_MAX, TFE_ERR_INVALID, "greedy_trials is 2147483647, outside [0, 1000000]");
  OPT(dp_max, -1, TFE_ERR_INVALID, "dp_max is -1");
  OPT(memory_limit, -4096, TFE_ERR_INVALID, "memory_limit is -4096 bytes, negative");
  OPT(path_format, (tfe_path_format)7, TFE_ERR_INVALID, "unknown path format 7");
  OPT(algo, (tfe_path_algo)-2, TFE_ERR_INVALID, "unknown path algorithm -2");
  OPT(out_order, (tfe_order)5, TFE_ERR_INVALID, "out_order 5");
  OPT(algo, TFE_PATH_GIVEN, TFE_ERR_NULL, "TFE_PATH_GIVEN needs option path");
#undef OPT
  for (int i = 0; i < n; i++) {
    ADV_ERR(tfe_einsum_with_f64(&out, e, 3, v, &cs[i].o), cs[i].st, fn, cs[i].msg);
    cs[i].o.no_cache = true; /* the uncached path checks as much */
    ADV_ERR(tfe_einsum_with_f64(&out, e, 3, v, &cs[i].o), cs[i].st, fn, cs[i].msg);
    const tfe_layout *lay[3] = {&v[0].lay, &v[1].lay, &v[2].lay};
    tfe_einsum_plan *p = NULL;
    ADV_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, e, 3, lay, &cs[i].o), cs[i].st, "tfe_einsum_plan_new", cs[i].msg);
  }
  /* a given path whose step count lies: refused before the cache key reads 2 * path_nsteps ints */
  int path[2] = {0, 1};
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.algo = TFE_PATH_GIVEN; o.path = path; o.path_nsteps = 1 << 28;
  ADV_ERR(tfe_einsum_with_f64(&out, e, 3, v, &o), TFE_ERR_INVALID, fn, "the path has 268435456 steps but 3 operands need 2");
  o.path_nsteps = -1;
  ADV_ERR(tfe_einsum_with_f64(&out, e, 3, v, &o), TFE_ERR_INVALID, fn, "path_nsteps is -1");
  assert_null(out.st);
  /* tuning: non-finite refused, nothing changes */
  tfe_tuning t = tfe_tuning_get(), t0 = t;
  t.einsum_write_weight = NAN;
  TU_EXPECT_ERR(tfe_tuning_set(&t), TFE_ERR_INVALID, "einsum_write_weight must be finite");
  t.einsum_write_weight = INFINITY;
  TU_EXPECT_ERR(tfe_tuning_set(&t), TFE_ERR_INVALID, "einsum_write_weight must be finite");
  assert_true(tfe_tuning_get().einsum_write_weight == t0.einsum_write_weight);
  /* thread counts far above the processors are capped, not obeyed */
  int before = tfe_get_num_threads();
  tfe_set_num_threads(1 << 30);
  assert_true(tfe_get_num_threads() < (1 << 20));
  tfe_set_num_threads(before);
  tfe_blas_set_num_threads(1 << 30);
  assert_true(tfe_blas_get_num_threads() < (1 << 20));
  tfe_blas_set_num_threads(1);
}

/* ---- the smaller API edges: memory order, wrapped byte sizes, exact aliasing --------------------- */
static void test_alloc_and_overlap(void **s) {
  (void)s;
  tfe_tensor_f64 t = {0};
  int64_t d[2] = {2, 2};
  TU_EXPECT_ERR(tfe_empty_f64(&t, 2, d, (tfe_order)9), TFE_ERR_INVALID, "order 9 is not TFE_COLMAJOR or TFE_ROWMAJOR");
  TU_EXPECT_ERR(tfe_zeros_f64(&t, 2, d, (tfe_order)-1), TFE_ERR_INVALID, "order -1");
  assert_null(t.st);
  double buf[8];
  tfe_view_f64 v;
  int64_t d1[1] = {1};
  TU_EXPECT_ERR(tfe_wrap_f64(&v, buf, INT64_MAX / 4, 1, d1, NULL, 0, TFE_COLMAJOR), TFE_ERR_OVERFLOW,
                "overflows the byte count");
  TU_EXPECT_ERR(tfe_tensor_wrap_f64(&t, buf, INT64_MAX / 2, 1, d1, NULL, 0, TFE_COLMAJOR), TFE_ERR_OVERFLOW,
                "overflows the byte count");
  assert_null(t.st);
  /* out = even elements, input = odd elements of one buffer: disjoint, accepted and right */
  for (int i = 0; i < 8; i++) buf[i] = i;
  int64_t d4[1] = {4}, s2[1] = {2};
  tfe_view_f64 ev, od;
  assert_int_equal(tfe_wrap_f64(&ev, buf, 8, 1, d4, s2, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_wrap_f64(&od, buf, 8, 1, d4, s2, 1, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_einsum_into_f64(&ev, 2, 0, "i->i", 1, &od), TFE_OK);
  for (int i = 0; i < 4; i++) assert_true(buf[2 * i] == 2.0 * (2 * i + 1) && buf[2 * i + 1] == 2 * i + 1);
  /* the same buffer read where it is written: refused, untouched */
  TU_EXPECT_ERR(tfe_einsum_into_f64(&ev, 2, 0, "i->i", 1, &ev), TFE_ERR_OVERLAP, "output overlaps operand 0");
  assert_true(buf[0] == 2);
  /* an interleaved but distinct output: dims (2, 2), strides (3, 2) -> 0, 3, 2, 5 */
  double src[4] = {1, 2, 3, 4}, dst[6] = {0};
  int64_t dd[2] = {2, 2}, ds[2] = {3, 2};
  tfe_view_f64 sv, dv;
  assert_int_equal(tfe_wrap_f64(&sv, src, 4, 2, dd, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_wrap_f64(&dv, dst, 6, 2, dd, ds, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_einsum_into_f64(&dv, 1, 0, "ij->ij", 1, &sv), TFE_OK);
  assert_true(dst[0] == 1 && dst[3] == 2 && dst[2] == 3 && dst[5] == 4);
}

/* ---- 6. linalg: NaN and infinity refused at every entry point ------------------------------------ */
static void eye3(tfe_tensor_f64 *t) {
  assert_int_equal(tfe_zeros_f64(t, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
  for (int i = 0; i < 3; i++) t->v.data[4 * i] = 1;
}
#define LA_CASE(call, name)                                                                       \
  do {                                                                                            \
    tfe_status st_ = (call);                                                                      \
    if (st_ != TFE_ERR_INVALID || !strstr(tfe_last_error(), "NaN or an infinity") ||             \
        !strstr(tfe_last_error(), name))                                                          \
      fail_msg("%s with %g: status %d, '%s'", name, bad, (int)st_, tfe_last_error());            \
  } while (0)
static void test_linalg_nonfinite(void **s) {
  (void)s;
  const double bads[3] = {INFINITY, -INFINITY, NAN};
  int64_t d[2] = {3, 3}, d3[3] = {3, 3, 2};
  int rows[1] = {0};
  for (int q = 0; q < 3; q++) {
    double bad = bads[q];
    tfe_tensor_f64 A = {0}, A3 = {0}, B = {0}, good = {0};
    eye3(&A);
    eye3(&good);
    assert_int_equal(tfe_full_f64(&A3, 3, d3, TFE_COLMAJOR, 1.0), TFE_OK);
    assert_int_equal(tfe_full_f64(&B, 2, d, TFE_COLMAJOR, 1.0), TFE_OK);
    A.v.data[4] = bad;
    A3.v.data[13] = bad;
    tfe_tensor_f64 U = {0}, S = {0}, V = {0}, X = {0}, Y = {0};
    tfe_tensor_c128 W = {0}, Z = {0};
    tfe_tensor_i64 P = {0};
    tfe_trunc tr = {2, 0, false};
    tfe_trunc_info ti;
    LA_CASE(tfe_svd_f64(&A.v, TFE_SVD_THIN, &U, &S, &V), "tfe_svd");
    LA_CASE(tfe_svd_f64(&A.v, TFE_SVD_VALUES, NULL, &S, NULL), "tfe_svd");
    LA_CASE(tfe_svd_nd_f64(&A3.v, 1, rows, TFE_SVD_THIN, &U, &S, &V), "tfe_svd_nd");
    LA_CASE(tfe_svd_trunc_f64(&A3.v, 1, rows, &tr, &U, &S, &V, &ti), "tfe_svd_trunc");
    LA_CASE(tfe_qr_f64(&A.v, false, &X, &Y), "tfe_qr");
    LA_CASE(tfe_qr_nd_f64(&A3.v, 1, rows, false, &X, &Y), "tfe_qr_nd");
    LA_CASE(tfe_lq_f64(&A.v, false, &X, &Y), "tfe_lq");
    LA_CASE(tfe_lq_nd_f64(&A3.v, 1, rows, false, &X, &Y), "tfe_lq_nd");
    LA_CASE(tfe_eigh_f64(&A.v, &S, &V), "tfe_eigh");
    LA_CASE(tfe_eig_f64(&A.v, &W, &Z), "tfe_eig");
    LA_CASE(tfe_lu_f64(&A.v, &P, &X, &Y), "tfe_lu");
    LA_CASE(tfe_cholesky_f64(&A.v, &X), "tfe_cholesky");
    LA_CASE(tfe_solve_f64(&A.v, &B.v, &X), "tfe_solve");
    LA_CASE(tfe_trisolve_f64(&A.v, &B.v, true, false, &X), "tfe_trisolve");
    LA_CASE(tfe_lstsq_f64(&A.v, &B.v, &X), "tfe_lstsq");
    LA_CASE(tfe_inv_f64(&A.v, &X), "tfe_inv");
    LA_CASE(tfe_det_f64(&A.v, &X), "tfe_det");
    LA_CASE(tfe_slogdet_f64(&A.v, &X, &Y), "tfe_slogdet");
    LA_CASE(tfe_pinv_f64(&A.v, 1e-12, &X), "tfe_pinv");
    LA_CASE(tfe_polar_f64(&A.v, &X, &Y), "tfe_polar");
    LA_CASE(tfe_norm_f64(&A.v, TFE_NORM_FRO, &X), "tfe_norm");
    LA_CASE(tfe_norm_f64(&A.v, TFE_NORM_2, &X), "tfe_norm");
    LA_CASE(tfe_expm_f64(&A.v, &X), "tfe_expm");
    /* the right-hand side is checked as well */
    B.v.data[1] = bad;
    LA_CASE(tfe_solve_f64(&good.v, &B.v, &X), "tfe_solve");
    LA_CASE(tfe_trisolve_f64(&good.v, &B.v, true, false, &X), "tfe_trisolve");
    LA_CASE(tfe_lstsq_f64(&good.v, &B.v, &X), "tfe_lstsq");
    /* the dtype-tagged layer and a complex kind */
    tfe_dyn da = {TFE_DT_F64, A.v.data, A.v.lay, false, NULL}, o1 = {0}, o2 = {0}, o3 = {0};
    LA_CASE(tfe_svd_dyn(&da, TFE_SVD_THIN, &o1, &o2, &o3), "tfe_svd");
    LA_CASE(tfe_eigh_dyn(&da, &o1, &o2), "tfe_eigh");
    LA_CASE(tfe_inv_dyn(&da, &o1), "tfe_inv");
    tfe_tensor_c128 C = {0}, CQ = {0}, CR = {0};
    assert_int_equal(tfe_zeros_c128(&C, 2, (int64_t[]){3, 3}, TFE_COLMAJOR), TFE_OK);
    for (int i = 0; i < 3; i++) C.v.data[4 * i] = 1;
    double parts[2] = {1.0, bad}; /* the imaginary part alone (no CMPLX: clang's glibc header lacks it) */
    memcpy(&C.v.data[8], parts, sizeof parts);
    LA_CASE(tfe_qr_c128(&C.v, false, &CQ, &CR), "tfe_qr");
    LA_CASE(tfe_eig_c128(&C.v, &W, &Z), "tfe_eig");
    /* outputs untouched */
    assert_null(U.st); assert_null(S.st); assert_null(X.st); assert_null(W.st); assert_null(P.st);
    assert_null(o1.st); assert_null(CQ.st);
    tfe_tensor_release_f64(&A); tfe_tensor_release_f64(&A3); tfe_tensor_release_f64(&B);
    tfe_tensor_release_f64(&good); tfe_tensor_release_c128(&C);
  }
}

/* ---- 7. tropical NaN and infinities ----------------------------------------------------------------- */
/* The rule, written without any order: a product is the zero when a factor is; else NaN when
 * a factor is NaN; else the plain sum (product). The sum of terms is NaN when a term is; else
 * their max (min). Checked for the scalar ops both ways round, the semiring GEMM on every
 * micro-kernel this CPU runs, and einsum (GEMM step, zip step, reduction). */
#define TROP(K, R, ISMAX, TIMES)                                                                    \
  static R ref_mul_##K(R a, R b) {                                                                  \
    R z = tfe_sr_zero_##K().v;                                                                       \
    if (a == z || b == z) return z;                                                                 \
    return TIMES ? a * b : a + b;                                                                   \
  }                                                                                                 \
  static R ref_sum_##K(const R *t, int64_t n) {                                                     \
    R r = tfe_sr_zero_##K().v;                                                                       \
    for (int64_t i = 0; i < n; i++) if (isnan(t[i])) return t[i];                                    \
    for (int64_t i = 0; i < n; i++) if (ISMAX ? t[i] > r : t[i] < r) r = t[i];                       \
    return r;                                                                                       \
  }                                                                                                 \
  static R pick_##K(tu_rng *g, int dens) {                                                          \
    int64_t u = tu_int(g, 0, 99);                                                                   \
    if (u < dens) {                                                                                 \
      const R sp[4] = {(R)NAN, (R)INFINITY, (R)-INFINITY, tfe_sr_zero_##K().v};                       \
      return sp[tu_int(g, 0, 3)];                                                                   \
    }                                                                                               \
    return TIMES ? (R)tu_unif(g) * 4 : (R)(tu_unif(g) * 8 - 4);                                     \
  }                                                                                                 \
  static void check_##K(tu_rng *g, int dens, int isa) {                                             \
    int64_t m = tu_int(g, 1, 40), n = tu_int(g, 1, 30), k = tu_int(g, 0, 300);                      \
    tfe_##K *a = calloc((size_t)(m * k + 1), sizeof *a), *b = calloc((size_t)(k * n + 1), sizeof *b); \
    tfe_##K *c = calloc((size_t)(m * n + 1), sizeof *c), *c2 = calloc((size_t)(m * n + 1), sizeof *c2); \
    R *t = calloc((size_t)k + 1, sizeof *t);                                                        \
    for (int64_t i = 0; i < m * k; i++) a[i].v = pick_##K(g, dens);                                 \
    for (int64_t i = 0; i < k * n; i++) b[i].v = pick_##K(g, dens);                                 \
    tfe_##K one = tfe_sr_one_##K(), zero = tfe_sr_zero_##K();                                       \
    assert_int_equal(tfe_semiring_gemm_##K(m, n, k, one, a, 1, m, b, 1, k, zero, c, 1, m, 1), TFE_OK); \
    /* the k order reversed (negative strides): the same answer */                                 \
    assert_int_equal(tfe_semiring_gemm_##K(m, n, k, one, k ? a + (k - 1) * m : a, 1, -m, k ? b + k - 1 : b, -1, k, \
                                            zero, c2, 1, m, 1), TFE_OK);                              \
    for (int64_t i = 0; i < m; i++)                                                                 \
      for (int64_t j = 0; j < n; j++) {                                                             \
        tfe_##K fw = zero, bw = zero;                                                               \
        for (int64_t p = 0; p < k; p++) {                                                           \
          t[p] = ref_mul_##K(a[i + p * m].v, b[p + j * k].v);                                       \
          fw = tfe_sr_add_##K(fw, tfe_sr_mul_##K(a[i + p * m], b[p + j * k]));                      \
          bw = tfe_sr_add_##K(tfe_sr_mul_##K(b[p + j * k], a[i + p * m]), bw);                      \
        }                                                                                           \
        tfe_##K want = {ref_sum_##K(t, k)};                                                         \
        if (!tfe_sr_eq_##K(want, fw) || !tfe_sr_eq_##K(want, bw) || !tfe_sr_eq_##K(want, c[i + j * m]) || \
            !tfe_sr_eq_##K(want, c2[i + j * m]))                                                    \
          fail_msg(#K " isa %d %lldx%lldx%lld (%lld,%lld): want %g, scalar %g/%g, gemm %g, reversed %g", isa, \
                   (long long)m, (long long)n, (long long)k, (long long)i, (long long)j, (double)want.v, \
                   (double)fw.v, (double)bw.v, (double)c[i + j * m].v, (double)c2[i + j * m].v);      \
      }                                                                                             \
    free(a); free(b); free(c); free(c2); free(t);                                                   \
  }                                                                                                 \
  static void test_trop_##K(void **s) {                                                             \
    (void)s;                                                                                        \
    tu_rng g = {0x77 + sizeof(R) + 3 * ISMAX + 5 * TIMES};                                          \
    const int dens[4] = {0, 1, 5, 30};                                                              \
    for (int isa = 0; isa < 3; isa++) {                                                             \
      if ((isa == 1 && !__builtin_cpu_supports("avx2")) || (isa == 2 && !__builtin_cpu_supports("avx512f"))) continue; \
      tfe_tuning tu = tfe_tuning_get();                                                             \
      tu.semiring_gemm_isa = isa + 1;                                                               \
      assert_int_equal(tfe_tuning_set(&tu), TFE_OK);                                                \
      for (int cs = 0; cs < tu_cases(60); cs++) check_##K(&g, dens[cs % 4], isa);                   \
    }                                                                                               \
    tfe_tuning tu = tfe_tuning_get();                                                               \
    tu.semiring_gemm_isa = 0;                                                                       \
    assert_int_equal(tfe_tuning_set(&tu), TFE_OK);                                                  \
  }
TROP(maxplus_f64, double, 1, 0)
TROP(maxplus_f32, float, 1, 0)
TROP(minplus_f64, double, 0, 0)
TROP(minplus_f32, float, 0, 0)
TROP(maxtimes_f64, double, 1, 1)
TROP(maxtimes_f32, float, 1, 1)

/* The scalar rules spelled out, and einsum's steps (contraction, zip, reduction) on max-plus. */
static void test_trop_rules_einsum(void **s) {
  (void)s;
  tfe_maxplus_f64 nan_ = {NAN}, pinf = {INFINITY}, z = tfe_sr_zero_maxplus_f64(), x = {2};
  assert_true(isnan(tfe_sr_add_maxplus_f64(nan_, x).v) && isnan(tfe_sr_add_maxplus_f64(x, nan_).v));
  assert_true(isnan(tfe_sr_add_maxplus_f64(nan_, pinf).v) && isnan(tfe_sr_add_maxplus_f64(pinf, nan_).v));
  assert_true(tfe_sr_mul_maxplus_f64(z, pinf).v == -INFINITY && tfe_sr_mul_maxplus_f64(pinf, z).v == -INFINITY);
  assert_true(tfe_sr_mul_maxplus_f64(z, nan_).v == -INFINITY && tfe_sr_mul_maxplus_f64(nan_, z).v == -INFINITY);
  assert_true(isnan(tfe_sr_mul_maxplus_f64(nan_, x).v));
  tfe_minplus_f64 mz = tfe_sr_zero_minplus_f64(), minf = {-INFINITY};
  assert_true(tfe_sr_mul_minplus_f64(mz, minf).v == INFINITY);
  tfe_maxtimes_f64 tz = tfe_sr_zero_maxtimes_f64(), tinf = {INFINITY};
  assert_true(tfe_sr_mul_maxtimes_f64(tz, tinf).v == 0 && tfe_sr_mul_maxtimes_f64(tinf, tz).v == 0);
  assert_true(tfe_sr_eq_maxplus_f64(nan_, nan_) && tfe_sr_dist_maxplus_f64(nan_, nan_) == 0);
  assert_true(isinf(tfe_sr_dist_maxplus_f64(nan_, x)));
  /* einsum over random specials, against the order-free rule */
  tu_rng g = {991};
  for (int cs = 0; cs < tu_cases(40); cs++) {
    int64_t m = tu_int(&g, 1, 12), k = tu_int(&g, 1, 40), n = tu_int(&g, 1, 12);
    tfe_tensor_maxplus_f64 A = {0}, B = {0}, C = {0}, Z = {0}, Rd = {0};
    assert_int_equal(tfe_empty_maxplus_f64(&A, 2, (int64_t[]){m, k}, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_empty_maxplus_f64(&B, 2, (int64_t[]){k, n}, TFE_COLMAJOR), TFE_OK);
    for (int64_t i = 0; i < m * k; i++) A.v.data[i].v = pick_maxplus_f64(&g, 20);
    for (int64_t i = 0; i < k * n; i++) B.v.data[i].v = pick_maxplus_f64(&g, 20);
    tfe_view_maxplus_f64 ops[2] = {A.v, B.v};
    assert_int_equal(tfe_einsum_maxplus_f64(&C, "ik,kj->ij", 2, ops), TFE_OK);
    assert_int_equal(tfe_einsum_maxplus_f64(&Rd, "ik->i", 1, ops), TFE_OK);
    tfe_view_maxplus_f64 same[2] = {A.v, A.v};
    assert_int_equal(tfe_einsum_maxplus_f64(&Z, "ik,ik->ik", 2, same), TFE_OK);
    double t[64];
    for (int64_t i = 0; i < m; i++) {
      for (int64_t j = 0; j < n; j++) {
        for (int64_t p = 0; p < k; p++) t[p] = ref_mul_maxplus_f64(A.v.data[i + p * m].v, B.v.data[p + j * k].v);
        tfe_maxplus_f64 want = {ref_sum_maxplus_f64(t, k)};
        if (!tfe_sr_eq_maxplus_f64(want, C.v.data[i + j * m]))
          fail_msg("einsum ik,kj->ij (%lld,%lld): want %g got %g", (long long)i, (long long)j, want.v, C.v.data[i + j * m].v);
      }
      for (int64_t p = 0; p < k; p++) t[p] = A.v.data[i + p * m].v;
      tfe_maxplus_f64 want = {ref_sum_maxplus_f64(t, k)};
      if (!tfe_sr_eq_maxplus_f64(want, Rd.v.data[i])) fail_msg("einsum ik->i (%lld): want %g got %g", (long long)i, want.v, Rd.v.data[i].v);
      for (int64_t p = 0; p < k; p++) {
        tfe_maxplus_f64 w = {ref_mul_maxplus_f64(A.v.data[i + p * m].v, A.v.data[i + p * m].v)};
        assert_true(tfe_sr_eq_maxplus_f64(w, Z.v.data[i + p * m]));
      }
    }
    tfe_tensor_release_maxplus_f64(&A); tfe_tensor_release_maxplus_f64(&B); tfe_tensor_release_maxplus_f64(&C);
    tfe_tensor_release_maxplus_f64(&Z); tfe_tensor_release_maxplus_f64(&Rd);
  }
}

/* Integer kinds wrap modulo 2^bits without undefined behaviour (UBSan runs this). */
static void test_int_wrap(void **s) {
  (void)s;
  assert_true(tfe_sr_add_i32(INT32_MAX, 1) == INT32_MIN);
  assert_true(tfe_sr_mul_i64(INT64_MAX, 2) == -2);
  assert_true(tfe_sr_mul_i32(INT32_MIN, -1) == INT32_MIN);
  int32_t a[4] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX}, c[4];
  tfe_view_i32 v[2], o;
  int64_t d[2] = {2, 2};
  assert_int_equal(tfe_wrap_i32(&v[0], a, 4, 2, d, NULL, 0, TFE_COLMAJOR), TFE_OK);
  v[1] = v[0];
  assert_int_equal(tfe_wrap_i32(&o, c, 4, 2, d, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_einsum_into_i32(&o, 1, 0, "ij,jk->ik", 2, v), TFE_OK);
  uint32_t want = (uint32_t)INT32_MAX * (uint32_t)INT32_MAX * 2u;
  for (int i = 0; i < 4; i++) assert_true((uint32_t)c[i] == want);
}

/* ---- 5. a failed write leaves no file behind and the old one as it was --------------------------- */
static int count_tmp(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += !strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".tfe-tmp-");
  if (d) closedir(d);
  return n;
}
static void test_failed_write(void **s) {
  (void)s;
  static double big[4096];
  tfe_dyn t = {TFE_DT_F64, big, {0}, false, NULL};
  int64_t d[1] = {4096};
  tfe_layout_dense(1, d, TFE_COLMAJOR, &t.lay);
  FILE *f = fopen("build/adv_keep.npy", "wb");
  assert_non_null(f);
  fputs("OLD", f);
  fclose(f);
  /* a file size limit makes the write fail half-way (EFBIG; SIGXFSZ ignored) */
  struct rlimit old, lim;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = 4096;
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  tfe_status st = tfe_npy_save("build/adv_keep.npy", &t);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
  assert_int_equal(st, TFE_ERR_IO);
  if (!strstr(tfe_last_error(), "tfe_npy_save: write to 'build/adv_keep.npy' failed") ||
      !strstr(tfe_last_error(), "left as it was"))
    fail_msg("message '%s'", tfe_last_error());
  f = fopen("build/adv_keep.npy", "rb");
  char got[8] = {0};
  assert_non_null(f);
  assert_int_equal(fread(got, 1, sizeof got, f), 3);
  fclose(f);
  assert_string_equal(got, "OLD");
  assert_int_equal(count_tmp("build", "adv_keep.npy"), 0);
  /* a folder that does not exist: nothing created, a clear message */
  TU_EXPECT_ERR(tfe_npy_save("build/no_such_dir/x.npy", &t), TFE_ERR_IO, "creating a temporary file next to it failed");
  /* success replaces the old file whole */
  assert_int_equal(tfe_npy_save("build/adv_keep.npy", &t), TFE_OK);
  tfe_dyn back;
  assert_int_equal(tfe_npy_load("build/adv_keep.npy", &back), TFE_OK);
  assert_int_equal(tfe_layout_numel(&back.lay), 4096);
  tfe_storage_release(back.st);
  assert_int_equal(count_tmp("build", "adv_keep.npy"), 0);
  /* a directory given as a file to read: says so */
  TU_EXPECT_ERR(tfe_npy_load("build", &back), TFE_ERR_IO, "Is a directory");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_einsum_labels_args), cmocka_unit_test(test_einsum_string_args),
      cmocka_unit_test(test_options),            cmocka_unit_test(test_alloc_and_overlap),
      cmocka_unit_test(test_linalg_nonfinite),   cmocka_unit_test(test_trop_maxplus_f64),
      cmocka_unit_test(test_trop_maxplus_f32),   cmocka_unit_test(test_trop_minplus_f64),
      cmocka_unit_test(test_trop_minplus_f32),   cmocka_unit_test(test_trop_maxtimes_f64),
      cmocka_unit_test(test_trop_maxtimes_f32),  cmocka_unit_test(test_trop_rules_einsum),
      cmocka_unit_test(test_int_wrap),           cmocka_unit_test(test_failed_write),
      cmocka_unit_test(adv_test_tool), cmocka_unit_test(adv_test_tool_args), cmocka_unit_test(adv_test_tool_terminal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
