/* tests/test_contract.c — binary and unary contraction against an independent reference.
 *
 * The file includes itself once per scalar kind (TC_KIND_PASS) to stamp the typed test body.
 * The reference never folds strides: it assigns a value to every label, indexes each operand
 * axis by axis through tfe_get_S (which applies lazy conjugation) and sums the products. */
#ifndef TC_KIND_PASS
#include "testutil.h"
/* Sets one tuning field (core/tuning.h), checked. */
#define TUNE(field, value)                                   \
  do {                                                       \
    tfe_tuning t_ = tfe_tuning_get();                        \
    t_.field = (value);                                      \
    assert_int_equal(tfe_tuning_set(&t_), TFE_OK);           \
  } while (0)
#include <math.h>

#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)
#define TC_MAXL 8        /* distinct labels per case */
#define TC_MAXR 10       /* rank per operand */

/* A random problem shape, kind-independent. */
typedef struct tc_case {
  int nl;
  int32_t lab[TC_MAXL];
  int64_t dim[TC_MAXL];
  int ra, rb, rc;
  int32_t la[TC_MAXR], lb[TC_MAXR], lc[TC_MAXR];
  bool unary;
} tc_case;

static int64_t tc_dim_of(const tc_case *k, int32_t l) {
  for (int i = 0; i < k->nl; i++)
    if (k->lab[i] == l) return k->dim[i];
  return -1;
}

static void tc_shuffle(tu_rng *r, int32_t *x, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)tu_int(r, 0, i);
    int32_t t = x[i]; x[i] = x[j]; x[j] = t;
  }
}

/* Classes: 0 batch (A,B,C), 1 left (A,C), 2 right (B,C), 3 contracted (A,B), 4 A only,
 * 5 B only. Repeats make diagonals (inputs) and embeddings (output). */
static void tc_random_case(tu_rng *r, tc_case *k, bool unary, int64_t max_space, bool big) {
  memset(k, 0, sizeof *k);
  k->unary = unary;
  for (;;) {
    k->nl = (int)tu_int(r, 0, 6);
    int64_t space = 1;
    for (int i = 0; i < k->nl; i++) {
      int32_t l;
      bool dup;
      do {
        l = (int32_t)tu_int(r, -50, 1000);
        dup = false;
        for (int j = 0; j < i; j++) dup = dup || k->lab[j] == l;
      } while (dup);
      k->lab[i] = l;
      int64_t u = tu_int(r, 0, 19);
      k->dim[i] = u == 0 ? 0 : u < 4 ? 1 : u < 10 ? 2 : u < 15 ? 3 : u < 18 ? 4 : 5;
      if (big) k->dim[i] = u == 0 ? 1 : tu_int(r, 2, 24);
      space *= k->dim[i] > 0 ? k->dim[i] : 1;
    }
    if (space <= max_space) break;
  }
  k->ra = k->rb = k->rc = 0;
  for (int i = 0; i < k->nl; i++) {
    int cls = unary ? (tu_int(r, 0, 1) ? 1 : 4) : (int)tu_int(r, 0, 5);
    bool inA = cls == 0 || cls == 1 || cls == 3 || cls == 4;
    bool inB = cls == 0 || cls == 2 || cls == 3 || cls == 5;
    bool inC = cls <= 2;
    int32_t l = k->lab[i];
    if (inA && k->ra < TC_MAXR) { k->la[k->ra++] = l; if (k->ra < TC_MAXR && tu_int(r, 0, 7) == 0) k->la[k->ra++] = l; }
    if (inB && k->rb < TC_MAXR) { k->lb[k->rb++] = l; if (k->rb < TC_MAXR && tu_int(r, 0, 7) == 0) k->lb[k->rb++] = l; }
    if (inC && k->rc < TC_MAXR) { k->lc[k->rc++] = l; if (k->rc < TC_MAXR && tu_int(r, 0, 9) == 0) k->lc[k->rc++] = l; }
  }
  if (big) { /* repeated labels square the operand: keep every operand small enough */
    const int32_t *ls[3] = {k->la, k->lb, k->lc};
    int rs[3] = {k->ra, k->rb, k->rc};
    for (int op = 0; op < 3; op++) {
      int64_t n = 1;
      for (int i = 0; i < rs[op]; i++) n *= tc_dim_of(k, ls[op][i]) > 0 ? tc_dim_of(k, ls[op][i]) : 1;
      if (n > 4 * max_space) { tc_random_case(r, k, unary, max_space, big); return; }
    }
  }
  tc_shuffle(r, k->la, k->ra);
  tc_shuffle(r, k->lb, k->rb);
  tc_shuffle(r, k->lc, k->rc);
}

/* A batched matrix product b,i,j x b,j,k -> b,i,k (labels and operand axis orders random) whose
 * i and k are multiples of 16: with a unit stride along i or k the small-GEMM path reads and
 * writes the operands in place (its direct modes). */
static void tc_direct_case(tu_rng *r, tc_case *k) {
  static const int64_t mult[] = {16, 32, 48, 64};
  memset(k, 0, sizeof *k);
  k->nl = 4;
  int32_t base = (int32_t)tu_int(r, 0, 500);
  for (int i = 0; i < 4; i++) k->lab[i] = base + i;
  k->dim[0] = tu_int(r, 1, 4);
  k->dim[1] = mult[tu_int(r, 0, 3)];
  k->dim[2] = tu_int(r, 1, 12);
  k->dim[3] = mult[tu_int(r, 0, 3)];
  if (tu_int(r, 0, 3) == 0) k->dim[1] = tu_int(r, 1, 40); /* some with a ragged i */
  int32_t b = k->lab[0], i = k->lab[1], j = k->lab[2], kk = k->lab[3];
  k->ra = k->rb = k->rc = 3;
  int32_t la[3] = {b, i, j}, lb[3] = {b, j, kk}, lc[3] = {b, i, kk};
  memcpy(k->la, la, sizeof la); memcpy(k->lb, lb, sizeof lb); memcpy(k->lc, lc, sizeof lc);
  tc_shuffle(r, k->la, 3);
  tc_shuffle(r, k->lb, 3);
  tc_shuffle(r, k->lc, 3);
}

/* Random strides for dims: random axis order, padding, reversal, and (inputs only)
 * zero-stride broadcast. Returns the buffer length needed; sets offset. */
static int64_t tc_random_layout(tu_rng *r, tfe_layout *L, int rank, const int64_t *dims, bool input) {
  L->rank = rank;
  int perm[TC_MAXR];
  for (int i = 0; i < rank; i++) perm[i] = i;
  for (int i = rank - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  int64_t s = tu_int(r, 1, 2), lead = tu_int(r, 0, 3);
  bool empty = false;
  for (int q = 0; q < rank; q++) {
    int i = perm[q];
    L->dims[i] = dims[i];
    empty = empty || dims[i] == 0;
    if (input && dims[i] > 1 && tu_int(r, 0, 9) == 0) { L->strides[i] = 0; continue; }
    L->strides[i] = s;
    s *= (dims[i] > 0 ? dims[i] : 1);
    if (tu_int(r, 0, 4) == 0) s += tu_int(r, 1, 3);
  }
  int64_t off = lead;
  for (int i = 0; i < rank; i++)
    if (tu_int(r, 0, 3) == 0 && dims[i] > 0) {
      off += (dims[i] - 1) * L->strides[i];
      L->strides[i] = -L->strides[i];
    }
  L->offset = off;
  return s + off + lead + 1;
}

static void tc_dims(const tc_case *k, const int32_t *l, int r, int64_t *dims) {
  for (int i = 0; i < r; i++) dims[i] = tc_dim_of(k, l[i]);
}

/* Which engine paths the random plans took (so the tests prove they cover them). */
typedef struct tc_stats { long naive, gemm, red, copy_ab, copy_c, batch, plain, loop, loop2, small, small_swap, small_batch; } tc_stats;
/* Multi-label loop plans executed on two threads, over all kinds (checked by test_loop_two_labels,
 * which runs after the random tests). */
static long tc_loop2_threads2;
static void tc_count(tc_stats *s, const tfe_contract_plan *P) {
  if (P->engine == TFE__PR_ENG_NAIVE) { s->naive++; return; }
  s->gemm++;
  s->red += P->red[0] || P->red[1];
  s->copy_ab += P->copy[0] || P->copy[1];
  s->copy_c += P->copy[2];
  s->batch += P->nbatch > 1;
  s->plain += !P->copy[0] && !P->copy[1] && !P->copy[2];
  s->loop += P->loop;
  s->loop2 += P->nloop >= 2; /* several unfusable labels looped over */
  tc_loop2_threads2 += P->nloop >= 2 && tfe_get_num_threads() == 2;
  assert_true(P->loop == (P->nloop > 0) && P->nloop <= TFE__PR_MAXLOOP);
  s->small += P->engine == TFE__PR_ENG_SMALL;
  s->small_swap += P->engine == TFE__PR_ENG_SMALL && P->small_swap;
  s->small_batch += P->engine == TFE__PR_ENG_SMALL && P->nbatch > 1;
}

#define TC_KIND_PASS
#define TFE_TEMPLATE <test_contract.c>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#undef TC_KIND_PASS

/* Small-engine calls that read X / read Y / wrote C in place (with those that did all three
 * without buffers), the calls in place with a masked last row vector, the dot-kernel calls. */
static long tc_direct(int q) {
  return atomic_load(&tfe__st.prims.small_direct[q]) + atomic_load(&tfe__st.prims.small_nobuf[0]) +
         atomic_load(&tfe__st.prims.small_nobuf[1]) + atomic_load(&tfe__st.prims.small_nobuf[2]) +
         atomic_load(&tfe__st.prims.small_nobuf[3]);
}
static long tc_tails(void) { return atomic_load(&tfe__st.prims.small_tail) + atomic_load(&tfe__st.prims.small_nobuf[1]); }
static long tc_tn(void) { return atomic_load(&tfe__st.prims.small_tn) + atomic_load(&tfe__st.prims.small_nobuf[2]); }
#define TC_KIND_TESTS(s, T, R, alg, cplx, flt, DT)                                         \
  static void test_binary_##s(void **st) {                                                  \
    (void)st;                                                                               \
    tc_stats x = {0};                                                                       \
    tc_run_##s(tu_cases(10000), false, false, 0x1234 + DT, &x);                             \
    tc_run_##s(tu_cases(150), false, true, 0x4321 + DT, &x);                                \
    long dc[3] = {tc_direct(0), tc_direct(1), tc_direct(2)};                                \
    tc_run_##s(tu_cases(300), false, 2, 0x5151 + DT, &x);                                   \
    print_message("%s: small path in place: X %ld, Y %ld, C %ld calls\n", #s,                \
                  tc_direct(0) - dc[0], tc_direct(1) - dc[1], tc_direct(2) - dc[2]);                \
    if (DT == TFE_DT_F32 || DT == TFE_DT_F64)                                               \
      for (int q = 0; q < 3; q++) assert_true(tc_direct(q) > dc[q]);                        \
    print_message("%s: plans naive %ld gemm %ld (reduce %ld, copy A/B %ld, copy C %ld, batch %ld, no copy %ld, " \
                  "loop %ld, of several labels %ld)\n", #s, x.naive, x.gemm, x.red, x.copy_ab, x.copy_c, x.batch, x.plain, x.loop, x.loop2); \
    assert_true(x.gemm > 0 && x.red > 0 && x.copy_ab > 0 && x.copy_c > 0 && x.batch > 0 && x.plain > 0); \
    assert_true(x.loop > 0 && x.loop2 > 0);                                                 \
    print_message("%s: small-GEMM path %ld (transposed %ld, batched %ld)\n", #s, x.small, x.small_swap, \
                  x.small_batch);                                                           \
    if (DT == TFE_DT_F32 || DT == TFE_DT_F64 || DT == TFE_DT_C64 || DT == TFE_DT_C128)      \
      assert_true(x.small > 100 && x.small_swap > 0 && x.small_batch > 0);                  \
    else assert_true(x.small == 0);                                                         \
  }                                                                                         \
  static void test_unary_##s(void **st) {                                                   \
    (void)st;                                                                               \
    tc_stats x = {0};                                                                       \
    tc_run_##s(tu_cases(3000), true, false, 0x777 + DT, &x);                                \
    tc_run_##s(tu_cases(100), true, true, 0x778 + DT, &x);                                  \
  }
TFE_KINDS(TC_KIND_TESTS)

/* ---- hand-picked cases: the fusion bug class -------------------------------------------- */
/* jk,kj-> with a transposed operand: naive fusion of {j,k} would pair the wrong elements. */
static void test_trace_of_product_transposed(void **st) {
  (void)st;
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, c = -1;
  tfe_view_f64 A = {a, {2, 0, {2, 3}, {1, 2}}, false}; /* A[j,k] col-major */
  tfe_view_f64 B = {b, {2, 0, {3, 2}, {1, 3}}, false}; /* B[k,j] col-major */
  tfe_view_f64 C = {&c, {0, 0, {0}, {0}}, false};
  assert_int_equal(tfe_contract_f64(1.0, &A, (int32_t[]){'j', 'k'}, &B, (int32_t[]){'k', 'j'}, 0.0, &C, NULL), TFE_OK);
  double want = 0;
  for (int j = 0; j < 2; j++)
    for (int k = 0; k < 3; k++) want += a[j + 2 * k] * b[k + 3 * j];
  assert_true(fabs(c - want) < 1e-12);
}

/* ijk,kjl->il with the second operand stored transposed (l fastest). */
static void test_ijk_kjl_transposed(void **st) {
  (void)st;
  enum { NI = 3, NJ = 4, NK = 5, NL = 2 };
  double a[NI * NJ * NK], b[NK * NJ * NL], c[NI * NL], want[NI * NL];
  for (int x = 0; x < NI * NJ * NK; x++) a[x] = x % 7 - 3;
  for (int x = 0; x < NK * NJ * NL; x++) b[x] = x % 5 - 2;
  tfe_view_f64 A = {a, {3, 0, {NI, NJ, NK}, {1, NI, NI * NJ}}, false};
  tfe_view_f64 B = {b, {3, 0, {NK, NJ, NL}, {NJ * NL, NL, 1}}, false}; /* row-major */
  tfe_view_f64 C = {c, {2, 0, {NI, NL}, {1, NI}}, false};
  assert_int_equal(tfe_contract_f64(1.0, &A, (int32_t[]){0, 1, 2}, &B, (int32_t[]){2, 1, 3}, 0.0, &C, (int32_t[]){0, 3}), TFE_OK);
  for (int i = 0; i < NI; i++)
    for (int l = 0; l < NL; l++) {
      double s = 0;
      for (int j = 0; j < NJ; j++)
        for (int k = 0; k < NK; k++) s += a[i + NI * j + NI * NJ * k] * b[k * NJ * NL + j * NL + l];
      want[i + NI * l] = s;
    }
  for (int x = 0; x < NI * NL; x++) assert_true(fabs(c[x] - want[x]) < 1e-12);
}

/* The steps of a matrix-product-state chain (bench/bench_chain.c): E(b,e) A(b,s,c) -> T and
 * T B(e,s,f) -> E', with T and E' in the GEMM's natural order and transposed (as the einsum
 * executor stores them), bonds D that leave partial vectors and column blocks on every target
 * (the small engine's vector width and register blocks are the target's: plan_small.h), f64
 * and c128, each against the reference loops. The small engine is forced (contract_small_mode
 * 1) and, for f64, must take the plans; each plan runs twice (the second time on the set-up
 * kept in the plan, with alpha and beta). */
static void tc_mps_fill(double *p, int64_t n, int salt) {
  for (int64_t i = 0; i < n; i++) p[i] = (double)((i * 7919 + salt * 104729) % 23) / 23.0 - 0.5;
}
static void test_mps_chain_steps(void **st) {
  (void)st;
  const int64_t Ds[] = {5, 10, 14, 33, 60}, d = 2;
  enum { LB = 1, LE, LS, LC, LF };
  for (int di = 0; di < 5; di++) {
    int64_t D = Ds[di], nE = D * D, nA = D * d * D;
    for (int cplx = 0; cplx < 2; cplx++) {
      int w = cplx ? 2 : 1; /* doubles per element */
      double *E = tfe__alloc(sizeof(double) * (size_t)(w * nE)), *A = tfe__alloc(sizeof(double) * (size_t)(w * nA));
      double *B = tfe__alloc(sizeof(double) * (size_t)(w * nA)), *T = tfe__alloc(sizeof(double) * (size_t)(w * nA));
      double *R = tfe__alloc(sizeof(double) * (size_t)(w * nA));
      assert_non_null(E); assert_non_null(A); assert_non_null(B); assert_non_null(T); assert_non_null(R);
      tc_mps_fill(E, w * nE, 1); tc_mps_fill(A, w * nA, 2); tc_mps_fill(B, w * nA, 3);
      tfe_layout lE, lA;
      int64_t dE[2] = {D, D}, dA[3] = {D, d, D};
      tfe_layout_dense(2, dE, TFE_COLMAJOR, &lE);
      tfe_layout_dense(3, dA, TFE_COLMAJOR, &lA);
      for (int step = 0; step < 2; step++)
        for (int tr = 0; tr < 2; tr++) {
          /* step 0: E(b,e) A(b,s,c) -> T(e,s,c) or T(c,e,s); step 1: T(e,s,c) B(e,s,f) -> E'(c,f) or E'(f,c) */
          int32_t la0[2] = {LB, LE}, lb0[3] = {LB, LS, LC}, lc0[2][3] = {{LE, LS, LC}, {LC, LE, LS}};
          int32_t la1[3] = {LE, LS, LC}, lb1[3] = {LE, LS, LF}, lc1[2][2] = {{LC, LF}, {LF, LC}};
          const int32_t *la = step ? la1 : la0, *lb = step ? lb1 : lb0, *lc = step ? lc1[tr] : lc0[tr];
          tfe_layout LX = step ? lA : lE, LC_;
          if (step) tfe_layout_dense(2, dE, TFE_COLMAJOR, &LC_);
          else tfe_layout_dense(3, (int64_t[]){tr ? D : D, tr ? D : d, tr ? d : D}, TFE_COLMAJOR, &LC_);
          const double *x = step ? A : E; /* step 1 reads A's data as T (same shape) */
          int64_t nc = tfe_layout_numel(&LC_);
          tfe_contract_plan *P = NULL;
          for (int run = 0; run < 3; run++) { /* 0: reference loops, 1: the small engine forced, 2: its plan
                                               * again (the kept set-up), 0.5 * product + 2 * C */
            double *out = run ? T : R;
            double al = run == 2 ? 0.5 : 1.0, be = run == 2 ? 2.0 : 0.0;
            TUNE(contract_naive_work, run ? 0 : INT64_MAX);
            TUNE(contract_small_mode, run ? 1 : 0);
            tfe_contract_desc ds;
            tfe_status s2;
            if (cplx) {
              tfe_view_c128 X = {(tfe_c128 *)(void *)x, LX, false}, Y = {(tfe_c128 *)(void *)(step ? B : A), lA, false};
              tfe_view_c128 Z = {(tfe_c128 *)(void *)out, LC_, false};
              if (run < 2) {
                assert_int_equal(tfe_contract_describe_c128(&ds, &X, la, &Y, lb, &Z, lc), TFE_OK);
                assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
              }
              s2 = tfe_contract_execute_c128(P, al, &X, &Y, be, &Z);
            } else {
              tfe_view_f64 X = {(double *)x, LX, false}, Y = {step ? B : A, lA, false}, Z = {out, LC_, false};
              if (run < 2) {
                assert_int_equal(tfe_contract_describe_f64(&ds, &X, la, &Y, lb, &Z, lc), TFE_OK);
                assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
              }
              s2 = tfe_contract_execute_f64(P, al, &X, &Y, be, &Z);
            }
            assert_int_equal(s2, TFE_OK);
            if (run == 0) assert_true(P->engine == TFE__PR_ENG_NAIVE);
            if (run >= 1 && !cplx) assert_true(P->engine == TFE__PR_ENG_SMALL);
            if (run != 1) tfe_contract_plan_release(P);
          }
          TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
          TUNE(contract_small_mode, 0);
          double k = (double)(step ? d * D : D);
          for (int64_t i = 0; i < w * nc; i++) R[i] *= 2.5; /* run 2: 0.5 * R + 2 * R */
          for (int64_t i = 0; i < w * nc; i++)
            if (!(fabs(T[i] - R[i]) <= 1e-13 * k * (1 + fabs(R[i]))))
              fail_msg("D=%lld %s step %d transposed %d: element %lld is %.17g, the reference %.17g", (long long)D,
                       cplx ? "c128" : "f64", step, tr, (long long)i, T[i], R[i]);
        }
      tfe__free(E); tfe__free(A); tfe__free(B); tfe__free(T); tfe__free(R);
    }
  }
}

/* Batched GEMMs whose rows are not whole vectors (small_gemm_tpl.h: the last row vector's
 * loads and stores masked): A(i,j,b) B(j,k,b) -> C(i,k,b), dense, so that X is read and C
 * written in place with i from 1 to 21 (every remainder of 2-, 4- and 8-lane vectors, 1 to 6
 * vectors, and the blocks of 3 vectors of a 16-register target with 4 to 13 columns); against the reference
 * loops, with alpha and beta, f64 and f32. Also i, k transposed in C, and A transposed
 * (A(j,i,b): both inputs depth-contiguous, the dot-product kernel ps_tn_ for f64 on AVX2,
 * with depths j of 7 and 12: a masked depth tail or none, else X packed transposed (ps_pack_xt_;
 * f32, and f64 with depths 37 and 38); columns k of 4 and 5: an odd last
 * column pair on one of the two; i % 4 of 1-3: its last rows in a block of 4 or of 2 rows x 4
 * columns). Beta is 0 for every third i (C never read). */
static void test_small_tails(void **st) {
  (void)st;
  enum { LI = 1, LJ, LK, LBT };
  long tails = tc_tails(), tns = tc_tn();
  for (int64_t i = 1; i <= 21; i++)
    for (int ct = 0; ct < 2; ct++)
      for (int f32 = 0; f32 < 2; f32++)
      for (int ta = 0; ta < 2; ta++) {
        /* f64, A plain: columns k of 4, 5, 6, 13 (the column blocks of 4 of the 3-vector block
         * over a plan's column block of 5 or 6, with remainders of 1 and 2) */
        static const int64_t ks[4] = {4, 5, 6, 13};
        /* A transposed: depths j of 7 and 12, and for every third i 37 or 38 (f64: past the dot
         * kernel's depths, so X is packed by the 4 x 4 transposes with every remainder) */
        int64_t j = ta && i % 3 == 0 ? 36 + 1 + (i % 2 == 0) : ta && i % 2 ? 12 : 7;
        int64_t k = f32 ? 6 : ta ? 4 + i % 2 : ks[i % 4], b = 5;
        int64_t dA[3] = {ta ? j : i, ta ? i : j, b}, dB[3] = {j, k, b}, dC[3] = {ct ? k : i, ct ? i : k, b};
        int32_t la[3] = {ta ? LJ : LI, ta ? LI : LJ, LBT}, lb[3] = {LJ, LK, LBT}, lc[3] = {ct ? LK : LI, ct ? LI : LK, LBT};
        tfe_layout LA, LB_, LC_;
        tfe_layout_dense(3, dA, TFE_COLMAJOR, &LA);
        tfe_layout_dense(3, dB, TFE_COLMAJOR, &LB_);
        tfe_layout_dense(3, dC, TFE_COLMAJOR, &LC_);
        int64_t nA = i * j * b, nB = j * k * b, nC = i * k * b;
        double *A = tfe__alloc(sizeof(double) * (size_t)nA), *B = tfe__alloc(sizeof(double) * (size_t)nB);
        double *R = tfe__alloc(sizeof(double) * (size_t)nC), *T = tfe__alloc(sizeof(double) * (size_t)nC);
        float *Af = tfe__alloc(sizeof(float) * (size_t)nA), *Bf = tfe__alloc(sizeof(float) * (size_t)nB);
        float *Tf = tfe__alloc(sizeof(float) * (size_t)nC);
        assert_true(A && B && R && T && Af && Bf && Tf);
        tc_mps_fill(A, nA, 4); tc_mps_fill(B, nB, 5); tc_mps_fill(R, nC, 6);
        for (int64_t q = 0; q < nA; q++) Af[q] = (float)A[q];
        for (int64_t q = 0; q < nB; q++) Bf[q] = (float)B[q];
        for (int64_t q = 0; q < nC; q++) { T[q] = R[q]; Tf[q] = (float)R[q]; }
        for (int run = 0; run < 2; run++) { /* 0: reference loops into R, 1: the small engine into T */
          TUNE(contract_naive_work, run ? 0 : INT64_MAX);
          TUNE(contract_small_mode, run ? 1 : 0);
          tfe_contract_cache_clear(); /* (the cache keeps run 0's plan of the reference loops otherwise) */
          for (int rep = 0; rep < 2; rep++) { /* twice: the second on the kept set-up (a cached plan) */
            if (f32 && run) {
              tfe_view_f32 X = {Af, LA, false}, Y = {Bf, LB_, false}, Z = {Tf, LC_, false};
              assert_int_equal(tfe_contract_f32(i % 2 ? 1.0f : 0.5f, &X, la, &Y, lb, i % 3 ? -1.5f : 0.0f, &Z, lc), TFE_OK);
            } else { /* (beta 0 for every third row count: C never read; alpha 1 for odd ones: the
                      * stores without a product) */
              tfe_view_f64 X = {A, LA, false}, Y = {B, LB_, false}, Z = {run ? T : R, LC_, false};
              assert_int_equal(tfe_contract_f64(i % 2 ? 1.0 : 0.5, &X, la, &Y, lb, i % 3 ? -1.5 : 0.0, &Z, lc), TFE_OK);
            }
          }
        }
        TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
        TUNE(contract_small_mode, 0);
        for (int64_t q = 0; q < nC; q++) {
          double got = f32 ? (double)Tf[q] : T[q], tol = f32 ? 1e-4 : 1e-12;
          if (!(fabs(got - R[q]) <= tol * (1 + fabs(R[q]))))
            fail_msg("i=%lld %s C transposed %d A transposed %d: element %lld is %.17g, the reference %.17g",
                     (long long)i, f32 ? "f32" : "f64", ct, ta, (long long)q, got, R[q]);
        }
        tfe__free(A); tfe__free(B); tfe__free(R); tfe__free(T); tfe__free(Af); tfe__free(Bf); tfe__free(Tf);
      }
#if defined(__GNUC__) || defined(__clang__) /* (the small engine's vectors) */
  print_message("small engine calls in place with a masked last row vector: %ld\n", tc_tails() - tails);
  assert_true(tc_tails() > tails);
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX2__) && defined(__FMA__) && defined(__x86_64__)
  print_message("small engine calls on the dot-product kernel: %ld\n", tc_tn() - tns);
  assert_true(tc_tn() > tns);
#else
  (void)tns;
#endif
}

/* The small engine's row vectors held in registers and its half-full last row vector loaded by
 * a 128-bit load (small_row_regs, session 21), against the reference loops: random
 * C(i,k) = A(i,j) B(j,k) (or A(j,i): the dot kernel and packed transposes; or C(k,i)) with
 * i, j, k of 1-64 (half the cases i of 9-12 or 17-20: the 3-vector blocks, with every tail), leading
 * dimensions padded by 0-3, every kind the engine serves, alpha and beta, the knob off and on,
 * and small_dot_depth 32, -1 or 0 (the dot kernel or the packed transpose for A transposed): all
 * must equal the reference (the knobs change no result beyond rounding). */
#define TC_RR_KIND(s, T, tol)                                                                    \
  static void tc_rr_##s(int64_t i, int64_t j, int64_t k, int pa, int pb, int pc, int ta, int ct, uint64_t seed) { \
    enum { LI = 1, LJ, LK };                                                                     \
    int64_t lda = (ta ? j : i) + pa, ldb = j + pb, ldc = (ct ? k : i) + pc;                     \
    int64_t nA = lda * (ta ? i : j), nB = ldb * k, nC = ldc * (ct ? i : k);                     \
    T *A = tfe__alloc(sizeof(T) * (size_t)nA), *B = tfe__alloc(sizeof(T) * (size_t)nB);          \
    T *R = tfe__alloc(sizeof(T) * (size_t)nC), *C = tfe__alloc(sizeof(T) * (size_t)nC);          \
    assert_true(A && B && R && C);                                                               \
    uint64_t x = seed * 2654435761u + 1;                                                         \
    for (int64_t q = 0; q < nA; q++) { x = x * 6364136223846793005ull + 1442695040888963407ull; A[q] = (T)((double)(x >> 40) / 16777216.0 - 0.5); } \
    for (int64_t q = 0; q < nB; q++) { x = x * 6364136223846793005ull + 1442695040888963407ull; B[q] = (T)((double)(x >> 40) / 16777216.0 - 0.5); } \
    for (int64_t q = 0; q < nC; q++) { x = x * 6364136223846793005ull + 1442695040888963407ull; R[q] = (T)((double)(x >> 40) / 16777216.0 - 0.5); } \
    tfe_layout LA = {2, 0, {ta ? j : i, ta ? i : j}, {1, lda}}, LB_ = {2, 0, {j, k}, {1, ldb}};   \
    tfe_layout LC_ = {2, 0, {ct ? k : i, ct ? i : k}, {1, ldc}};                                  \
    int32_t la[2] = {ta ? LJ : LI, ta ? LI : LJ}, lb[2] = {LJ, LK}, lc[2] = {ct ? LK : LI, ct ? LI : LK}; \
    T al = (T)(seed % 2 ? 1.0 : 0.75), be = (T)(seed % 3 ? -1.25 : 0.0);                          \
    double scale = 0;                                                                            \
    for (int run = 0; run < 3; run++) { /* 0: reference loops into R; 1, 2: the engine, knob off / on */ \
      T *out = run ? C : R;                                                                      \
      TUNE(contract_naive_work, run ? 0 : INT64_MAX);                                            \
      TUNE(contract_small_mode, run ? 1 : 0);                                                    \
      if (tc_rr_s29) { /* session 29: run 1 a masked 512-bit last row vector, run 2 a 256-bit one */ \
        TUNE(small_half_tail, run == 2);                                                         \
      } else if (tc_rr_s26) { /* session 26: run 1 both knobs off, run 2 on (pack from 1 or 5 rows) */  \
        TUNE(small_row_regs, 1);                                                                 \
        TUNE(small_dot_depth, -1);                                                               \
        TUNE(small_wide_cols, run == 2);                                                         \
        TUNE(small_tn_pack_rows, run == 2 ? 1 + 4 * (int64_t)(seed % 2) : 0);                    \
      } else {                                                                                   \
        TUNE(small_row_regs, run == 2);                                                          \
        TUNE(small_dot_depth, run == 1 ? 32 : seed % 2 ? -1 : 0); /* the dot kernel or packing */  \
      }                                                                                          \
      tfe_contract_cache_clear();                                                                \
      tfe_view_##s X = {A, LA, false}, Y = {B, LB_, false}, Z = {out, LC_, false};               \
      if (run) memcpy(C, tc_rr_c0_##s, sizeof(T) * (size_t)nC);                                 \
      else memcpy(tc_rr_c0_##s, R, sizeof(T) * (size_t)nC);                                     \
      assert_int_equal(tfe_contract_##s(al, &X, la, &Y, lb, be, &Z, lc), TFE_OK);               \
      if (!run) { for (int64_t q = 0; q < nC; q++) scale = fmax(scale, cabs((double _Complex)R[q])); continue; } \
      for (int64_t q = 0; q < nC; q++)                                                           \
        if (!(cabs((double _Complex)(C[q] - R[q])) <= (tol) * (double)j * (1 + scale)))          \
          fail_msg(#s " i=%lld j=%lld k=%lld pads %d,%d,%d A transposed %d C transposed %d knob %d: element %lld off by %g", \
                   (long long)i, (long long)j, (long long)k, pa, pb, pc, ta, ct, run - 1, (long long)q, \
                   cabs((double _Complex)(C[q] - R[q])));                                        \
    }                                                                                            \
    tfe__free(A); tfe__free(B); tfe__free(R); tfe__free(C);                                      \
  }
static int tc_rr_s26; /* test_small_tn_pack: runs 1 and 2 set session 26's knobs instead */
static int tc_rr_s29; /* test_small_half_tail: runs 1 and 2 set small_half_tail 0 and 1 instead */
static float tc_rr_c0_f32[64 * 67];
static double tc_rr_c0_f64[64 * 67];
static tfe_c64 tc_rr_c0_c64[64 * 67];
static tfe_c128 tc_rr_c0_c128[64 * 67];
TC_RR_KIND(f32, float, 2e-6)
TC_RR_KIND(f64, double, 1e-14)
TC_RR_KIND(c64, tfe_c64, 2e-6)
TC_RR_KIND(c128, tfe_c128, 1e-14)
static void test_small_row_regs(void **st) {
  (void)st;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  long tails = tc_tails();
  for (int c = 0; c < 240; c++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    static const int64_t tri[8] = {9, 10, 11, 12, 17, 18, 19, 20};
    int64_t i = c % 2 ? tri[(x >> 3) % 8] : 1 + (int64_t)((x >> 9) % 64), j = 1 + (int64_t)((x >> 17) % 64);
    int64_t k = 1 + (int64_t)((x >> 25) % 64);
    int pa = (int)((x >> 33) % 4), pb = (int)((x >> 35) % 4), pc = (int)((x >> 37) % 4);
    int ta = (int)((x >> 39) % 4 == 0), ct = (int)((x >> 41) % 4 == 0);
    switch (c % 4) {
    case 0: tc_rr_f64(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    case 1: tc_rr_f32(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    case 2: tc_rr_c128(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    default: tc_rr_c64(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    }
  }
  TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
  TUNE(contract_small_mode, 0);
  TUNE(small_row_regs, tfe_tuning_default().small_row_regs);
  TUNE(small_dot_depth, tfe_tuning_default().small_dot_depth);
#if defined(__GNUC__) || defined(__clang__)
  assert_true(tc_tails() > tails); /* (some of them in place with a partial last row vector) */
#else
  (void)tails;
#endif
}

/* Session 29: small_half_tail against the reference loops. Random C(i,k) = A(i,j) B(j,k) (or
 * A(j,i), or C(k,i)) with row counts whose last row vector has half the lanes or fewer (f64:
 * 8m + 1..4, f32: 16m + 1..8, up to 2 vectors) and some that do not, depths and columns of
 * 1-64, leading dimensions padded by 0-3, real kinds (the path's) and complex (not taken),
 * alpha and beta; run 1 with the masked 512-bit vector, run 2 with the 256-bit one: both must
 * equal the reference. On AVX-512 builds the half path must have run. */
static void test_small_half_tail(void **st) {
  (void)st;
  uint64_t x = 0x51a7f00dull;
  long halves = atomic_load(&tfe__st.prims.small_half);
  tc_rr_s29 = 1;
  for (int c = 0; c < 300; c++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    const bool f64 = c % 3 != 1;
    const int64_t w = f64 ? 8 : 16;
    int64_t i = c % 5 == 4 ? 1 + (int64_t)((x >> 3) % 40) : w * (int64_t)((x >> 3) % 2) + 1 + (int64_t)((x >> 5) % (uint64_t)(w / 2));
    int64_t j = 1 + (int64_t)((x >> 17) % 64), k = 1 + (int64_t)((x >> 25) % 64);
    int pa = (int)((x >> 33) % 4), pb = (int)((x >> 35) % 4), pc = (int)((x >> 37) % 4);
    int ta = (int)((x >> 39) % 4 == 0), ct = (int)((x >> 41) % 4 == 0);
    if (c % 3 == 2) tc_rr_c128(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c);
    else if (f64) tc_rr_f64(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c);
    else tc_rr_f32(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c);
  }
  tc_rr_s29 = 0;
  TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
  TUNE(contract_small_mode, 0);
  TUNE(small_half_tail, tfe_tuning_default().small_half_tail);
  long got = atomic_load(&tfe__st.prims.small_half) - halves;
  print_message("small engine calls with a half-width last row vector: %ld\n", got);
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX512F__) && defined(__AVX512VL__) && defined(__x86_64__)
  assert_true(got > 0);
#else
  assert_true(got == 0); /* (AVX-512 only) */
#endif
}

/* Session 26's knobs against the reference loops: the transposed input packed on the stack by
 * 8 x 8 (and 2-row) register transposes for the vector kernel (small_tn_pack_rows: from 1 or 5
 * rows, against 0: the dot kernel or the workspace's 4 x 4 transposes) and column blocks of up
 * to 12 (small_wide_cols). Random C(i,k) = A(j,i) B(j,k) (three cases in four; else A(i,j)) or
 * C(k,i) (tn 2: the kernel's rows are k), i and k of 1-64, depths j of 1-80 (past the dot
 * kernel's 32 and past the 16 KiB stack buffer), leading dimensions padded by 0-3, every kind,
 * alpha and beta. On AVX-512 builds the packed path must have run. */
static void test_small_tn_pack(void **st) {
  (void)st;
  uint64_t x = 0x2545f4914f6cdd1dull;
  long packed = atomic_load(&tfe__st.prims.small_nobuf[3]);
  tc_rr_s26 = 1;
  for (int c = 0; c < 400; c++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    int64_t i = 1 + (int64_t)((x >> 9) % 64), j = 1 + (int64_t)((x >> 17) % 80), k = 1 + (int64_t)((x >> 25) % 64);
    int pa = (int)((x >> 33) % 4), pb = (int)((x >> 35) % 4), pc = (int)((x >> 37) % 4);
    int ta = (int)((x >> 39) % 4 != 0), ct = (int)((x >> 41) % 2);
    switch (c % 5) {
    case 0: case 1: tc_rr_f64(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    case 2: tc_rr_f32(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    case 3: tc_rr_c128(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    default: tc_rr_c64(i, j, k, pa, pb, pc, ta, ct, (uint64_t)c); break;
    }
  }
  tc_rr_s26 = 0;
  TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
  TUNE(contract_small_mode, 0);
  TUNE(small_row_regs, tfe_tuning_default().small_row_regs);
  TUNE(small_dot_depth, tfe_tuning_default().small_dot_depth);
  TUNE(small_wide_cols, tfe_tuning_default().small_wide_cols);
  TUNE(small_tn_pack_rows, tfe_tuning_default().small_tn_pack_rows);
  long got = atomic_load(&tfe__st.prims.small_nobuf[3]) - packed;
  print_message("small engine calls with the transposed input packed on the stack: %ld\n", got);
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX512F__) && defined(__x86_64__)
  assert_true(got > 0);
#else
  assert_true(got == 0); /* (AVX-512 f64 only) */
#endif
}

/* ---- bad input ------------------------------------------------------------------------------ */
static void test_bad_inputs(void **st) {
  (void)st;
  double a[12] = {0}, b[12] = {0}, c[12] = {0};
  tfe_view_f64 A = {a, {2, 0, {3, 4}, {1, 3}}, false};
  tfe_view_f64 B = {b, {2, 0, {4, 3}, {1, 4}}, false};
  tfe_view_f64 C = {c, {2, 0, {3, 3}, {1, 3}}, false};
  int32_t lA[] = {0, 1}, lB[] = {1, 2}, lC[] = {0, 2};
  /* label/shape mismatch: label 1 is 4 in A, 3 in B when B's labels are {2, 1} */
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, lA, &B, (int32_t[]){2, 1}, 0, &C, lC), TFE_ERR_SHAPE, "label 1 has size 3");
  /* output label in no input */
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, lA, &B, lB, 0, &C, (int32_t[]){0, 9}), TFE_ERR_INVALID, "output label 9");
  /* output aliasing an input */
  tfe_view_f64 Cal = {a, {2, 0, {3, 3}, {1, 3}}, false};
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, lA, &B, lB, 0, &Cal, lC), TFE_ERR_OVERLAP, "overlaps input A");
  tfe_view_f64 Cbl = {b + 2, {2, 0, {3, 3}, {1, 3}}, false};
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, lA, &B, lB, 0, &Cbl, lC), TFE_ERR_OVERLAP, "overlaps input B");
  /* self-overlapping output (zero stride) */
  tfe_view_f64 Cz = {c, {2, 0, {3, 3}, {0, 3}}, false};
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, lA, &B, lB, 0, &Cz, lC), TFE_ERR_OVERLAP, "overlapping elements");
  /* NULLs */
  TU_EXPECT_ERR(tfe_contract_f64(1, NULL, lA, &B, lB, 0, &C, lC), TFE_ERR_NULL, "view A is NULL");
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, NULL, &B, lB, 0, &C, lC), TFE_ERR_NULL, "labels of A");
  tfe_view_f64 An = A; An.data = NULL;
  TU_EXPECT_ERR(tfe_contract_f64(1, &An, lA, &B, lB, 0, &C, lC), TFE_ERR_NULL, "data of A");
  /* bad rank and negative dim */
  tfe_view_f64 Ar = A; Ar.lay.rank = TFE_MAX_RANK + 1;
  TU_EXPECT_ERR(tfe_contract_f64(1, &Ar, lA, &B, lB, 0, &C, lC), TFE_ERR_RANK, "operand A");
  tfe_view_f64 Ad = A; Ad.lay.dims[0] = -2;
  TU_EXPECT_ERR(tfe_contract_f64(1, &Ad, lA, &B, lB, 0, &C, lC), TFE_ERR_INVALID, "negative");
  /* unary: label mismatch */
  TU_EXPECT_ERR(tfe_contract_unary_f64(1, &A, (int32_t[]){5, 5}, 0, &C, (int32_t[]){5, 5}), TFE_ERR_SHAPE, "label 5");
  /* C untouched after every failure */
  for (int x = 0; x < 12; x++) assert_true(c[x] == 0);
}

/* A held plan (the small engine in place, its set-up kept: a chain's E.A step at D = 10) run
 * again through tfe_contract_execute_f64 still gets every check: views that no longer match
 * the plan, an output overlapping an input with the plan's own layouts, NULL data; C untouched
 * each time. Views whose byte ranges meet but whose elements do not (A on the even elements of
 * a buffer, C on the odd ones) pass the exact test and give the reference's numbers. */
static void test_held_checks(void **st) {
  (void)st;
  enum { D = 10, N = 2 * D * D };
  int32_t la[2] = {'b', 'e'}, lb[3] = {'b', 's', 'c'}, lc[3] = {'e', 's', 'c'};
  static double buf[3 * 2 * N], ref[N], keep[3 * 2 * N];
  tc_mps_fill(buf, 3 * 2 * N, 7);
  tfe_view_f64 A = {buf, {2, 0, {D, D}, {1, D}}, false}, B = {buf + 2 * N, {3, 0, {D, 2, D}, {1, D, 2 * D}}, false};
  tfe_view_f64 C = {buf + 4 * N, {3, 0, {D, 2, D}, {1, D, 2 * D}}, false};
  tfe_contract_desc ds;
  tfe_contract_plan *P = NULL;
  assert_int_equal(tfe_contract_describe_f64(&ds, &A, la, &B, lb, &C, lc), TFE_OK);
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  assert_int_equal(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &C), TFE_OK);
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
  assert_int_equal(P->engine, TFE__PR_ENG_SMALL);
#if defined(__AVX__) /* (16-byte vectors, the baseline x86-64 build, buffer this step: not held) */
  assert_non_null(tfe_pr_held__f64(P)); /* (the path under test) */
#endif
#endif
  memcpy(keep, buf, sizeof buf);
  tfe_view_f64 X = C;
  X.lay.strides[2] = 2 * D + 1; /* a layout the plan was not made for */
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &X), TFE_ERR_SHAPE, "C axis 2");
  X = C;
  X.data = buf + 5; /* C on A's elements, with the plan's layout */
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &X), TFE_ERR_OVERLAP, "overlaps input A");
  X.data = buf + 2 * N + N - 3; /* C from B's last elements on */
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &X), TFE_ERR_OVERLAP, "overlaps input B");
  X = C;
  X.lay.offset = -4 * N + 2 * N; /* the same overlap through the offset */
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &X), TFE_ERR_OVERLAP, "overlaps input B");
  X = C;
  X.data = NULL;
  TU_EXPECT_ERR(tfe_contract_execute_f64(P, 1.0, &A, &B, 0.0, &X), TFE_ERR_NULL, "data of C");
  assert_memory_equal(keep, buf, sizeof buf);
  tfe_contract_plan_release(P);
  /* interleaved: A on the even elements, C on the odd ones of one buffer (ranges meet) */
  tfe_view_f64 Ai = {buf, {2, 0, {D, D}, {2, 2 * D}}, false}, Ci = {buf + 1, {3, 0, {D, 2, D}, {2, 2 * D, 4 * D}}, false};
  assert_int_equal(tfe_contract_describe_f64(&ds, &Ai, la, &B, lb, &Ci, lc), TFE_OK);
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  for (int rep = 0; rep < 2; rep++) {
    tc_mps_fill(buf, 3 * 2 * N, 7);
    for (int64_t e = 0; e < D; e++)
      for (int64_t sc = 0; sc < 2 * D; sc++) {
        double t = 0;
        for (int64_t b = 0; b < D; b++) t += buf[2 * (b + D * e)] * B.data[b + D * sc];
        ref[e + D * sc] = 0.5 * t + (rep ? 2.0 * buf[1 + 2 * (e + D * sc)] : 0.0);
      }
    assert_int_equal(tfe_contract_execute_f64(P, 0.5, &Ai, &B, rep ? 2.0 : 0.0, &Ci), TFE_OK);
    for (int64_t q = 0; q < N; q++) assert_true(fabs(buf[1 + 2 * q] - ref[q]) <= 1e-13 * (1 + fabs(ref[q])));
  }
  tfe_contract_plan_release(P);
}

/* The planner loops over an unfusable label when that beats copying: aid,ij->ajd loops over d
 * (A and C read in place, unit strides), not over a (which would leave strides 1024 and 32 and
 * is slower than copying), and keeps the copies where the GEMMs would be too small. */
static tfe_contract_plan *tc_plan_mid(int64_t a, int64_t i, int64_t d) {
  static double dummy;
  tfe_view_f64 A = {&dummy, {3, 0, {a, i, d}, {1, a, a * i}}, false}, B = {&dummy, {2, 0, {i, i}, {1, i}}, false};
  tfe_view_f64 C = {&dummy, {3, 0, {a, i, d}, {1, a, a * i}}, false};
  tfe_contract_desc ds;
  tfe_contract_plan *P = NULL;
  assert_int_equal(tfe_contract_describe_f64(&ds, &A, (int32_t[]){'a', 'i', 'd'}, &B, (int32_t[]){'i', 'j'}, &C,
                                             (int32_t[]){'a', 'j', 'd'}), TFE_OK);
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  return P;
}
static void test_loop_choice(void **st) {
  (void)st;
  tfe_contract_plan *P = tc_plan_mid(256, 64, 256);
  assert_true(P->loop && !P->copy[0] && !P->copy[1] && !P->copy[2]);
  assert_int_equal(P->nbatch, 256);
  assert_true(P->rs[0] == 1 && P->rs[2] == 1); /* looped over d: a stays the unit-stride row */
  assert_int_equal(tfe_contract_plan_workspace(P), 0);
  tfe_contract_plan_release(P);
  P = tc_plan_mid(32, 32, 1024);
  assert_true(!P->loop && P->copy[0] && P->copy[2]);
  tfe_contract_plan_release(P);
}

/* A scaled-down copy of that step (same label structure, C row-major) forced to loop over two
 * labels, checked element by element against the reference engine, with beta != 0 and a
 * reversed (negative-stride) axis in C. */
/* The loops' threshold by kind (prims/plan.h): f64 runs them only up to contract_naive_work / 16
 * label combinations, then the small engine where it takes the problem; i64 (no small engine) up
 * to contract_naive_work; INT64_MAX forces them for every kind. */
static tfe__pr_engine tc_engine_of(tfe_dtype dt, int64_t n) {
  static double fa[64], fb[64], fc[64];
  static int64_t ia[64], ib[64], ic[64];
  tfe_layout L;
  tfe_layout_dense(2, (int64_t[]){n, n}, TFE_COLMAJOR, &L);
  int32_t la[] = {0, 1}, lb[] = {1, 2}, lc[] = {0, 2};
  tfe_contract_desc d;
  tfe_contract_plan *P = NULL;
  if (dt == TFE_DT_F64) {
    tfe_view_f64 A = {fa, L, false}, B = {fb, L, false}, C = {fc, L, false};
    assert_int_equal(tfe_contract_describe_f64(&d, &A, la, &B, lb, &C, lc), TFE_OK);
  } else {
    tfe_view_i64 A = {ia, L, false}, B = {ib, L, false}, C = {ic, L, false};
    assert_int_equal(tfe_contract_describe_i64(&d, &A, la, &B, lb, &C, lc), TFE_OK);
  }
  assert_int_equal(tfe_contract_plan_create(&d, &P), TFE_OK);
  tfe__pr_engine e = P->engine;
  tfe_contract_plan_release(P);
  return e;
}
static void test_naive_threshold_kinds(void **st) {
  (void)st;
  assert_int_equal(tfe_tuning_default().contract_naive_work, 128);
  assert_true(tc_engine_of(TFE_DT_F64, 2) == TFE__PR_ENG_NAIVE); /* 8 combinations: the loops */
  assert_true(tc_engine_of(TFE_DT_I64, 4) == TFE__PR_ENG_NAIVE); /* 64: the loops (no small engine) */
#ifdef TFE__PS_HAVE_VEC
  assert_true(tc_engine_of(TFE_DT_F64, 4) == TFE__PR_ENG_SMALL); /* 64: the small engine */
#endif
  TUNE(contract_naive_work, INT64_MAX);
  assert_true(tc_engine_of(TFE_DT_F64, 4) == TFE__PR_ENG_NAIVE && tc_engine_of(TFE_DT_F64, 8) == TFE__PR_ENG_NAIVE);
  TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
}
static void test_loop_two_labels_values(void **st) {
  (void)st;
  enum { NA = 4 * 4 * 3 * 2 * 3, NB = 2 * 3 * 4 * 4 * 3, NC = 3 * 3 * 4 * 4 * 4 * 4 };
  double *a = tfe__alloc(sizeof(double) * NA), *b = tfe__alloc(sizeof(double) * NB);
  double *c = tfe__alloc(sizeof(double) * NC), *r = tfe__alloc(sizeof(double) * NC);
  assert_non_null(a); assert_non_null(b); assert_non_null(c); assert_non_null(r);
  for (int i = 0; i < NA; i++) a[i] = (double)((i * 37) % 11) - 5;
  for (int i = 0; i < NB; i++) b[i] = (double)((i * 13) % 7) - 3;
  for (int i = 0; i < NC; i++) c[i] = r[i] = (double)((i * 5) % 9) - 4;
  tfe_view_f64 A = {a, {5, 0, {4, 4, 3, 2, 3}, {1, 4, 16, 48, 96}}, false};
  tfe_view_f64 B = {b, {5, 0, {2, 3, 4, 4, 3}, {1, 2, 6, 24, 96}}, false};
  /* C[10 11 41 42 43 44], row-major, the loop label 10 reversed (a reversed 42 would make B's
   * N group unfusable: B would be copied) */
  tfe_view_f64 C = {c, {6, 2 * 768, {3, 3, 4, 4, 4, 4}, {-768, 256, 64, 16, 4, 1}}, false};
  tfe_view_f64 Cr = C;
  Cr.data = r;
  int32_t la[] = {44, 43, 11, 6, 17}, lb[] = {6, 17, 42, 41, 10}, lc[] = {10, 11, 41, 42, 43, 44};
  tfe_contract_desc ds;
  tfe_contract_plan *P = NULL;
  assert_int_equal(tfe_contract_describe_f64(&ds, &A, la, &B, lb, &C, lc), TFE_OK);
  TUNE(contract_loop_mode, 1);
  TUNE(contract_small_mode, -1); /* the small path (tiny GEMMs) would take it, without loops */
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  TUNE(contract_loop_mode, 0);
  TUNE(contract_small_mode, 0);
  assert_true(P->nloop == 2 && !P->copy[0] && !P->copy[1] && !P->copy[2] && P->nbatch == 9);
  assert_int_equal(tfe_contract_execute_f64(P, 0.5, &A, &B, 2.0, &C), TFE_OK);
  tfe_contract_plan_release(P);
  int64_t keep = tfe_tuning_get().contract_naive_work;
  TUNE(contract_naive_work, INT64_MAX); /* the reference engine */
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  TUNE(contract_naive_work, keep);
  assert_true(P->engine == TFE__PR_ENG_NAIVE);
  assert_int_equal(tfe_contract_execute_f64(P, 0.5, &A, &B, 2.0, &Cr), TFE_OK);
  tfe_contract_plan_release(P);
  for (int i = 0; i < NC; i++) assert_true(fabs(c[i] - r[i]) <= 1e-12 * (1 + fabs(r[i])));
  tfe__free(a); tfe__free(b); tfe__free(c); tfe__free(r);
}

/* The last step of str_nw_mera_open_26 (exact views): label 11 (M) and label 10 (N) break the
 * fusion of both groups in C; the planner loops over both (9 GEMMs of 81 x 59049 x 50 writing
 * C in place) instead of copying C. */
static void test_loop_two_labels(void **st) {
  (void)st;
  print_message("multi-label loop plans run on 2 threads (all kinds): %ld\n", tc_loop2_threads2);
#ifdef _OPENMP /* without OpenMP there is one thread */
  assert_true(tc_loop2_threads2 > 0);
#endif
  static double dummy;
  tfe_view_f64 A = {&dummy, {5, 0, {9, 9, 3, 5, 10}, {1, 9, 81, 243, 1215}}, false};
  tfe_view_f64 B = {&dummy, {8, 0, {5, 10, 9, 9, 9, 9, 9, 3}, {1, 5, 50, 450, 4050, 36450, 328050, 2952450}}, false};
  tfe_view_f64 C = {&dummy, {9, 0, {3, 3, 9, 9, 9, 9, 9, 9, 9},
                             {14348907, 4782969, 531441, 59049, 6561, 729, 81, 9, 1}}, false};
  int32_t la[] = {44, 43, 11, 6, 17}, lb[] = {6, 17, 42, 41, 40, 39, 38, 10}, lc[] = {10, 11, 38, 39, 40, 41, 42, 43, 44};
  tfe_contract_desc ds;
  tfe_contract_plan *P = NULL;
  assert_int_equal(tfe_contract_describe_f64(&ds, &A, la, &B, lb, &C, lc), TFE_OK);
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  assert_true(P->loop && P->nloop == 2 && !P->copy[0] && !P->copy[1] && !P->copy[2]);
  assert_true(P->m == 81 && P->n == 59049 && P->k == 50 && P->nbatch == 9);
  assert_true(P->rs[2] == 1 && P->cs[2] == 81);
  assert_int_equal(tfe_contract_plan_workspace(P), 0);
  tfe_contract_plan_release(P);
  /* never looping: C copied */
  TUNE(contract_loop_mode, -1);
  assert_int_equal(tfe_contract_plan_create(&ds, &P), TFE_OK);
  TUNE(contract_loop_mode, 0);
  assert_true(!P->loop && P->nloop == 0 && P->copy[2]);
  tfe_contract_plan_release(P);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define TC_KIND_ENTRIES(s, T, R, alg, cplx, flt, DT) cmocka_unit_test(test_binary_##s), cmocka_unit_test(test_unary_##s),
      TFE_KINDS(TC_KIND_ENTRIES)
      cmocka_unit_test(test_trace_of_product_transposed),
      cmocka_unit_test(test_ijk_kjl_transposed),
      cmocka_unit_test(test_mps_chain_steps),
      cmocka_unit_test(test_small_tails),
      cmocka_unit_test(test_small_row_regs),
      cmocka_unit_test(test_small_tn_pack), cmocka_unit_test(test_small_half_tail),
      cmocka_unit_test(test_held_checks),
      cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_loop_choice),
      cmocka_unit_test(test_loop_two_labels),
      cmocka_unit_test(test_loop_two_labels_values),
      cmocka_unit_test(test_naive_threshold_kinds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* ---- per-kind body (TC_KIND_PASS) ---------------------------------------------------- */

/* A random value of the kind: small integers so that tropical ties happen. */
static TFE_T TFE_CAT(tc_rand_, TFE_S)(tu_rng *r) {
#if TFE_ALG == TFE_ALG_MAXTIMES
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, 0, 4));
#elif TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, -3, 3));
#else
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, -4, 4) * 0.5);
#endif
#if TFE_CPLX
  x += (TFE_T)((double)tu_int(r, -4, 4) * 0.5) * (TFE_T)I;
#endif
  return x;
}

static TFE_T TFE_CAT(tc_garbage_, TFE_S)(void) {
#if TFE_FLOAT
  return TFE_FN(sr_from_f64)(NAN);
#else
  return TFE_FN(sr_from_f64)(77);
#endif
}

static TFE_T TFE_CAT(tc_get_, TFE_S)(const TFE_TY(view) *v, const int64_t *idx) {
  TFE_T x = TFE_FN(sr_zero)();
  assert_int_equal(TFE_FN(get)(v, idx, &x), TFE_OK);
  return x;
}

/* Index of operand axes from a label assignment. */
static void TFE_CAT(tc_index_, TFE_S)(const int32_t *lbl, int r, const tc_case *k, const int64_t *val, int64_t *idx) {
  for (int i = 0; i < r; i++)
    for (int j = 0; j < k->nl; j++)
      if (k->lab[j] == lbl[i]) idx[i] = val[j];
}

/* Reference value of logical C at index ci; mag: sum of |terms| for the tolerance. */
static TFE_T TFE_CAT(tc_ref_, TFE_S)(const tc_case *k, TFE_T alpha, const TFE_TY(view) *A,
                                      const TFE_TY(view) *B, TFE_T beta, TFE_T cold,
                                      const int64_t *ci, double *mag) {
  int64_t val[TC_MAXL];
  bool set[TC_MAXL] = {false}, diag = true;
  for (int i = 0; i < k->rc; i++)
    for (int j = 0; j < k->nl; j++)
      if (k->lab[j] == k->lc[i]) {
        if (set[j] && val[j] != ci[i]) diag = false;
        val[j] = ci[i]; set[j] = true;
      }
  bool bzero = TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)());
  TFE_T bc = bzero ? TFE_FN(sr_zero)() : TFE_FN(sr_mul)(beta, cold);
  *mag = TFE_FN(sr_dist)(bc, TFE_FN(sr_zero)());
  if (!diag) return bc;
  int fr[TC_MAXL], nf = 0;
  for (int j = 0; j < k->nl; j++) if (!set[j]) { fr[nf++] = j; val[j] = 0; }
  TFE_T acc = TFE_FN(sr_zero)();
  bool empty = false;
  for (int f = 0; f < nf; f++) empty = empty || k->dim[fr[f]] == 0;
  while (!empty) {
    int64_t ia[TC_MAXR], ib[TC_MAXR];
    TFE_CAT(tc_index_, TFE_S)(k->la, k->ra, k, val, ia);
    TFE_T t = TFE_CAT(tc_get_, TFE_S)(A, ia);
    if (!k->unary) {
      TFE_CAT(tc_index_, TFE_S)(k->lb, k->rb, k, val, ib);
      t = TFE_FN(sr_mul)(t, TFE_CAT(tc_get_, TFE_S)(B, ib));
    }
    *mag += TFE_FN(sr_dist)(t, TFE_FN(sr_zero)()) * TFE_FN(sr_dist)(alpha, TFE_FN(sr_zero)());
    acc = TFE_FN(sr_add)(acc, t);
    int f = 0;
    for (; f < nf; f++) {
      if (++val[fr[f]] < k->dim[fr[f]]) break;
      val[fr[f]] = 0;
    }
    if (f == nf) break;
  }
  TFE_T r = TFE_FN(sr_mul)(alpha, acc);
  return bzero ? r : TFE_FN(sr_add)(r, bc);
}

/* Fills a buffer of n elements with random values; returns it (test allocations use malloc). */
static TFE_T *TFE_CAT(tc_buf_, TFE_S)(tu_rng *r, int64_t n) {
  TFE_T *p = (TFE_T *)malloc((size_t)(n > 0 ? n : 1) * sizeof(TFE_T));
  for (int64_t i = 0; i < n; i++) p[i] = TFE_CAT(tc_rand_, TFE_S)(r);
  return p;
}

static TFE_T TFE_CAT(tc_scalar_, TFE_S)(tu_rng *r) {
  int64_t u = tu_int(r, 0, 5);
  if (u == 0) return TFE_FN(sr_zero)();
  if (u == 1) return TFE_FN(sr_one)();
  return TFE_CAT(tc_rand_, TFE_S)(r);
}

/* shape: 0 random small, 1 random big, 2 batched products for the small path's direct modes */
static void TFE_CAT(tc_run_, TFE_S)(int ncases, bool unary, int shape, uint64_t seed, tc_stats *stats) {
  bool big = shape == 1;
  tu_rng rng = {seed * 0x9E3779B97F4A7C15ULL + 1};
  tu_rng *r = &rng;
  double tol = 0;
#if TFE_FLOAT
  tol = sizeof(TFE_R) == 4 ? 1e-5 : 1e-12;
#endif
  for (int cs = 0; cs < ncases; cs++) {
    tc_case k;
    if (shape == 2) tc_direct_case(r, &k);
    else tc_random_case(r, &k, unary, big ? 40000 : 4096, big);
    int64_t da[TC_MAXR], db[TC_MAXR], dc[TC_MAXR];
    tc_dims(&k, k.la, k.ra, da);
    tc_dims(&k, k.lb, k.rb, db);
    tc_dims(&k, k.lc, k.rc, dc);
    TFE_TY(view) A = {0}, B = {0}, C = {0};
    int64_t na = tc_random_layout(r, &A.lay, k.ra, da, true);
    int64_t nb = tc_random_layout(r, &B.lay, k.rb, db, true);
    int64_t nc = tc_random_layout(r, &C.lay, k.rc, dc, false);
    A.data = TFE_CAT(tc_buf_, TFE_S)(r, na);
    B.data = TFE_CAT(tc_buf_, TFE_S)(r, nb);
    C.data = TFE_CAT(tc_buf_, TFE_S)(r, nc);
    A.conj = tu_int(r, 0, 1); B.conj = tu_int(r, 0, 1); C.conj = tu_int(r, 0, 1);
    TFE_T alpha = TFE_CAT(tc_scalar_, TFE_S)(r), beta = TFE_CAT(tc_scalar_, TFE_S)(r);
    if (TFE_FN(sr_eq)(alpha, TFE_FN(sr_zero)())) alpha = TFE_FN(sr_one)();
    bool bzero = TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)());
    /* The view's elements hold garbage when beta is zero (it must not leak); everything
     * outside the view is a sentinel that must survive. */
    TFE_T *old = TFE_CAT(tc_buf_, TFE_S)(r, nc);
    for (int64_t x = 0; x < nc; x++) { old[x] = TFE_CAT(tc_garbage_, TFE_S)(); C.data[x] = old[x]; }
    int64_t ci[TC_MAXR] = {0};
    int64_t numc = tfe_layout_numel(&C.lay);
    for (int64_t e = 0; e < numc; e++) {
      int64_t o = C.lay.offset;
      for (int i = 0; i < k.rc; i++) o += ci[i] * C.lay.strides[i];
      old[o] = bzero ? TFE_CAT(tc_garbage_, TFE_S)() : TFE_CAT(tc_rand_, TFE_S)(r);
      C.data[o] = old[o];
      for (int i = 0; i < k.rc && ++ci[i] == dc[i]; i++) ci[i] = 0;
    }
    tfe_status s;
    /* every third case runs on two threads with the parallel thresholds at their minimum, so
     * the parallel batch loop and multi-threaded GEMMs run on small tensors */
    TUNE(contract_par_grain, cs % 3 == 0 ? 1 : (int64_t)1 << 20);
    tfe_set_num_threads(cs % 3 == 0 ? 2 : 1);
    /* every fourth planned case loops over an unfusable label whenever that saves a copy */
    TUNE(contract_loop_mode, cs % 4 == 0 ? 1 : 0);
    /* the small-GEMM path: never (so the BLIS paths stay covered), forced whenever its buffers
     * fit, or by the crossover; every other case skips the reference engine for tiny shapes */
    TUNE(contract_small_mode, cs % 5 == 0 ? -1 : cs % 5 == 1 ? 1 : 0);
    TUNE(contract_naive_work, cs % 2 == 0 ? 0 : cs % 4 == 1 ? 512 : tfe_tuning_default().contract_naive_work);
    if (cs % 2) { /* the convenience front end (cached plans) */
      s = unary ? TFE_FN(contract_unary)(alpha, &A, k.la, beta, &C, k.lc)
                : TFE_FN(contract)(alpha, &A, k.la, &B, k.lb, beta, &C, k.lc);
    } else { /* describe -> plan -> execute, and count which paths the plans take */
      tfe_contract_desc d;
      tfe_contract_plan *P = NULL;
      assert_int_equal(TFE_FN(contract_describe)(&d, &A, k.la, unary ? NULL : &B, k.lb, &C, k.lc), TFE_OK);
      assert_int_equal(tfe_contract_plan_create(&d, &P), TFE_OK);
      s = TFE_FN(contract_execute)(P, alpha, &A, unary ? NULL : &B, beta, &C);
      tc_count(stats, P);
      tfe_contract_plan_release(P);
    }
    TUNE(contract_loop_mode, 0);
    TUNE(contract_small_mode, 0);
    TUNE(contract_naive_work, tfe_tuning_default().contract_naive_work);
    TUNE(contract_par_grain, (int64_t)1 << 20);
    tfe_set_num_threads(0);
    if (s != TFE_OK) fail_msg("case %d: status %d: %s", cs, (int)s, tfe_last_error());
    TFE_TY(view) Cold = C;
    Cold.data = old;
    memset(ci, 0, sizeof ci);
    int64_t touched = 0;
    for (int64_t e = 0; e < numc; e++) {
      double mag = 0;
      TFE_T want = TFE_CAT(tc_ref_, TFE_S)(&k, alpha, &A, &B, beta, TFE_CAT(tc_get_, TFE_S)(&Cold, ci), ci, &mag);
      TFE_T got = TFE_CAT(tc_get_, TFE_S)(&C, ci);
      double d = TFE_FN(sr_dist)(got, want);
      if (!(tol == 0 ? d == 0 : d <= tol * (mag + 1)))
        fail_msg("kind %s case %d (%s) element %lld: distance %g (mag %g) ra=%d rb=%d rc=%d",
                 TC_STR(TFE_S), cs, unary ? "unary" : "binary", (long long)e, d, mag, k.ra, k.rb, k.rc);
      int64_t o = C.lay.offset;
      for (int i = 0; i < k.rc; i++) o += ci[i] * C.lay.strides[i];
      old[o] = C.data[o]; /* mark as checked so the sentinel scan below skips it */
      touched++;
      for (int i = 0; i < k.rc && ++ci[i] == dc[i]; i++) ci[i] = 0;
    }
    for (int64_t x = 0; x < nc; x++)
      if (memcmp(&old[x], &C.data[x], sizeof(TFE_T)) != 0)
        fail_msg("kind %s case %d: element %lld outside the output view was written", TC_STR(TFE_S), cs, (long long)x);
    free(A.data); free(B.data); free(C.data); free(old);
  }
}

#endif
