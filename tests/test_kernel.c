/* Kernel room: differential tests of copy/permute against a naive odometer reference, for
 * every kind, random ranks, permutations, negative and zero strides, thread counts 1 and 2.
 * The per-kind part is this same file re-included with TK_KIND defined (see the bottom). */
#ifndef TK_KIND
#include "testutil.h"

/* Random layout over `dims`: dense in a random dim order with random gaps, random signs and
 * (when allow_zero) some broadcast dims; offset chosen so every element is >= 0. Returns the
 * number of elements the buffer must hold. */
static int64_t tk_layout(tu_rng *r, int rank, const int64_t *dims, bool allow_zero, tfe_layout *L) {
  int perm[TFE_MAX_RANK];
  for (int i = 0; i < rank; i++) perm[i] = i;
  for (int i = rank - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  L->rank = rank;
  int64_t s = 1;
  for (int k = 0; k < rank; k++) {
    int i = perm[k];
    L->dims[i] = dims[i];
    if (tu_int(r, 0, 3) == 0) s += tu_int(r, 0, 2); /* a gap */
    L->strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
  int64_t off = 0, hi = 0;
  for (int i = 0; i < rank; i++) {
    if (allow_zero && tu_int(r, 0, 5) == 0) L->strides[i] = 0;
    if (tu_int(r, 0, 2) == 0) L->strides[i] = -L->strides[i];
    int64_t span = (dims[i] > 0 ? dims[i] - 1 : 0) * L->strides[i];
    if (span < 0) off -= span; else hi += span;
  }
  L->offset = off + tu_int(r, 0, 2);
  return L->offset + hi + 1;
}

static void tk_dims(tu_rng *r, int *rank, int64_t *dims, int maxrank, int64_t maxdim) {
  *rank = (int)tu_int(r, 0, maxrank);
  for (int i = 0; i < *rank; i++) dims[i] = tu_int(r, tu_int(r, 0, 9) == 0 ? 0 : 1, maxdim);
  int64_t n = 1; /* keep cases small: at most about 6000 elements */
  for (int i = 0; i < *rank; i++) n *= dims[i];
  for (int i = 0; n > 6000; i = (i + 1) % *rank)
    if (dims[i] > 2) { n = n / dims[i] * (dims[i] - 2); dims[i] -= 2; }
}

/* Odometer over dims: returns false after the last index. */
static bool tk_next(int rank, const int64_t *dims, int64_t *idx) {
  for (int k = 0; k < rank; k++) {
    if (++idx[k] < dims[k]) return true;
    idx[k] = 0;
  }
  return false;
}

/* Mode 1 plans every tensor and threads from 64 elements on; mode 0 restores defaults. */
static void tk_paths(int mode) {
  tfe__ktiny = mode ? 0 : 1024;
  tfe__kpar_min = mode ? 64 : 32768;
}

#define TK_KIND
#define TFE_TEMPLATE "test_kernel.c"
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

#define TK_TESTS(X) \
  X(f32) X(f64) X(c64) X(c128) X(i32) X(i64) X(maxplus_f32) X(maxplus_f64) X(minplus_f32) \
  X(minplus_f64) X(maxtimes_f32) X(maxtimes_f64)

#define TK_RUN_COPY(s) tk_copy_random_##s(&r, nt);
static void test_copy_random(void **st) {
  (void)st;
  tu_rng r = {12345};
  for (int mode = 0; mode < 4; mode++) { /* threads 1, 2; default or no tiny path */
    int nt = 1 + mode % 2;
    tfe_set_num_threads(nt);
    tk_paths(mode / 2);
    TK_TESTS(TK_RUN_COPY)
  }
  tk_paths(0);
  tfe_set_num_threads(0);
}

static void test_copy_errors(void **st) {
  (void)st;
  double a[16] = {0}, b[16] = {0};
  tfe_view_f64 d = {a, {2, 0, {2, 3}, {1, 2}}, false};
  tfe_view_f64 s = {b, {2, 0, {3, 2}, {1, 3}}, false};
  TU_EXPECT_ERR(tfe_copy_f64(&d, &s), TFE_ERR_SHAPE, "dim 0 is 3, expected 2");
  s.lay.rank = 1;
  TU_EXPECT_ERR(tfe_copy_f64(&d, &s), TFE_ERR_SHAPE, "rank");
  tfe_view_f64 z = {a, {2, 0, {2, 3}, {1, 0}}, false}; /* broadcast destination */
  s = (tfe_view_f64){b, {2, 0, {2, 3}, {1, 2}}, false};
  TU_EXPECT_ERR(tfe_copy_f64(&z, &s), TFE_ERR_OVERLAP, "destination elements overlap");
  tfe_view_f64 s2 = {a, {2, 1, {2, 3}, {1, 2}}, false}; /* shifted by one: reads what was written */
  TU_EXPECT_ERR(tfe_copy_f64(&d, &s2), TFE_ERR_OVERLAP, "overlaps the source");
  tfe_view_f64 s3 = {a, {2, 0, {2, 3}, {3, 1}}, false}; /* transpose in place */
  TU_EXPECT_ERR(tfe_copy_f64(&d, &s3), TFE_ERR_OVERLAP, "overlaps the source");
  assert_int_equal(tfe_copy_f64(&d, &d), TFE_OK); /* identical: allowed */
  tfe_view_f64 odd = {a, {1, 1, {4}, {2}}, false}, even = {a, {1, 0, {4}, {2}}, false};
  assert_int_equal(tfe_copy_f64(&odd, &even), TFE_OK); /* interleaved: disjoint elements */
  TU_EXPECT_ERR(tfe_copy_f64(NULL, &s), TFE_ERR_NULL, "dst");
  tfe_view_f64 nul = {NULL, {1, 0, {3}, {1}}, false};
  TU_EXPECT_ERR(tfe_copy_f64(&nul, &nul), TFE_ERR_NULL, "data is NULL");
  tfe_view_f64 neg = {a, {1, 0, {-1}, {1}}, false};
  TU_EXPECT_ERR(tfe_copy_f64(&neg, &neg), TFE_ERR_INVALID, "negative");
  tfe_tensor_f64 t = {0};
  TU_EXPECT_ERR(tfe_contiguous_f64(&s, (tfe_order)7, &t), TFE_ERR_INVALID, "order");
  assert_null(t.st);
  tu_fail_after(0);
  TU_EXPECT_ERR(tfe_contiguous_f64(&s, TFE_COLMAJOR, &t), TFE_ERR_ALLOC, "allocation");
  assert_int_equal(tu_live_allocs, 0);
  tu_alloc_restore();
  assert_null(t.st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_random),
      cmocka_unit_test(test_copy_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* ---- per-kind part: TFE_S, TFE_T, ... defined by foreach_kind.h ------------------- */

#define TK_FN(name) TFE_CAT3(tk_, name, TFE_CAT(_, TFE_S))
#define TK_STR_(x) #x
#define TK_STR(x) TK_STR_(x)

static TFE_T TK_FN(rand)(tu_rng *r) {
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, -9, 9));
#if TFE_CPLX
  x += (TFE_R)tu_int(r, -9, 9) * I;
#endif
  return x;
}

/* A random view over dims in a fresh buffer (freed by the caller). */
static TFE_TY(view) TK_FN(view)(tu_rng *r, int rank, const int64_t *dims, bool allow_zero) {
  TFE_TY(view) v;
  int64_t n = tk_layout(r, rank, dims, allow_zero, &v.lay);
  v.data = (TFE_T *)malloc((size_t)n * sizeof(TFE_T));
  for (int64_t i = 0; i < n; i++) v.data[i] = TK_FN(rand)(r);
  v.conj = tu_int(r, 0, 1) == 1;
  return v;
}

static TFE_T TK_FN(at)(const TFE_TY(view) *v, const int64_t *idx) {
  TFE_T x = TFE_FN(sr_zero)();
  assert_int_equal(TFE_FN(get)(v, idx, &x), TFE_OK);
  return x;
}

static void TK_FN(copy_random)(tu_rng *r, int nt) {
  int cases = tu_cases(400);
  for (int c = 0; c < cases; c++) {
    int rank;
    int64_t dims[TFE_MAX_RANK];
    bool big = c % 50 == 0;
    tk_dims(r, &rank, dims, 8, 7);
    if (big) { /* high rank, about 2^11 elements */
      rank = (int)tu_int(r, 20, 24);
      for (int i = 0; i < rank; i++) dims[i] = tu_int(r, 1, 2);
    }
    if (c % 97 == 1) { rank = 2; dims[0] = tu_int(r, 30, 200); dims[1] = tu_int(r, 30, 200); }
    TFE_TY(view) src = TK_FN(view)(r, rank, dims, true);
    TFE_TY(view) dst = TK_FN(view)(r, rank, dims, false);
    int64_t idx[TFE_MAX_RANK] = {0};
    assert_int_equal(TFE_FN(copy)(&dst, &src), TFE_OK);
    if (tfe_layout_numel(&src.lay) > 0) do {
      TFE_T want = TK_FN(at)(&src, idx), got = TK_FN(at)(&dst, idx);
      if (!TFE_FN(sr_eq)(want, got)) fail_msg("copy %s case %d threads %d: mismatch", TK_STR(TFE_S), c, nt);
    } while (tk_next(rank, dims, idx));
    /* contiguous(): dense result, same values */
    TFE_TY(tensor) t = {0};
    tfe_order ord = c % 2 ? TFE_ROWMAJOR : TFE_COLMAJOR;
    assert_int_equal(TFE_FN(contiguous)(&src, ord, &t), TFE_OK);
    memset(idx, 0, sizeof idx);
    if (tfe_layout_numel(&src.lay) > 0) do {
      if (!TFE_FN(sr_eq)(TK_FN(at)(&src, idx), TK_FN(at)(&t.v, idx))) fail_msg("contiguous mismatch case %d", c);
    } while (tk_next(rank, dims, idx));
    TFE_FN(tensor_release)(&t);
    free(src.data);
    free(dst.data);
  }
}

#undef TK_FN
#undef TK_STR
#undef TK_STR_
#endif
