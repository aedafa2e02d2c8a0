/* Tensor room: zero-copy view ops, differential against explicit index arithmetic for every
 * shipped kind (tests/test_views_tpl.h stamped per kind), overlap checks against brute force,
 * and every bad input with its status and message. */
#include "test_views_common.h"

#define TFE_TEMPLATE "test_views_tpl.h"
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

#define TV_RUN(s, T, R, alg, cplx, flt, DT) tv_all_##s(&r, n);
static void test_view_ops_all_kinds(void **st) {
  (void)st;
  tu_rng r = {0x5eed1234abcdULL};
  int n = tu_cases(300);
  TFE_KINDS(TV_RUN)
}

/* ---- overlap analysis against brute force --------------------------------------------------- */
static int tv_addrs(const tfe_layout *L, int64_t shift, int64_t *out) {
  int64_t n = tfe_layout_numel(L), idx[TFE_MAX_RANK] = {0};
  for (int64_t e = 0; e < n; e++) { out[e] = tv_addr(L, idx) + shift; tv_odometer(L->rank, L->dims, idx); }
  return (int)n;
}
static void tv_small_layout(tu_rng *r, tfe_layout *L) {
  int64_t len;
  do tv_rand_layout(r, L, &len, 4); while (tfe_layout_numel(L) > 300);
  for (int k = 0; k < L->rank; k++) /* wider strides than the view tests: more interleavings */
    if (tu_int(r, 0, 1)) L->strides[k] = tu_int(r, -13, 13);
  tv_fit_offset(L);
}
static void test_overlap_brute(void **st) {
  (void)st;
  tu_rng r = {77};
  static int64_t A[4096], B[4096];
  int counts[3] = {0, 0, 0};
  for (int t = 0; t < tu_cases(20000); t++) {
    tfe_layout a, b;
    tv_small_layout(&r, &a);
    if (tu_int(&r, 0, 1)) tv_small_layout(&r, &b);
    else { /* a sibling: a slice of a */
      tv_slice_ctx p;
      int64_t n;
      b = a;
      for (int k = 0; k < a.rank; k++) tv_rand_range(&r, a.dims[k], &p.start[k], &p.stop[k], &p.step[k], &n);
      assert_int_equal(tfe_layout_slice(&a, p.start, p.stop, p.step, &b), TFE_OK);
    }
    int64_t shift = tu_int(&r, -20, 20);
    int na = tv_addrs(&a, 0, A), nb = tv_addrs(&b, shift, B);
    bool hit = false;
    for (int i = 0; i < na && !hit; i++)
      for (int j = 0; j < nb && !hit; j++) hit = A[i] == B[j];
    tfe_overlap o = tfe_layout_overlap(&a, &b, shift);
    counts[o]++;
    if (o != TFE_MAYBE_OVERLAPS) assert_int_equal(o, hit ? TFE_OVERLAPS : TFE_DISJOINT);
    /* self overlap */
    bool dup = false;
    for (int i = 0; i < na && !dup; i++)
      for (int j = i + 1; j < na && !dup; j++) dup = A[i] == A[j];
    tfe_overlap so = tfe_layout_self_overlap(&a);
    counts[so]++;
    if (so != TFE_MAYBE_OVERLAPS) assert_int_equal(so, dup ? TFE_OVERLAPS : TFE_DISJOINT);
    assert_int_equal(tfe_layout_check_writable(&a), dup ? TFE_ERR_OVERLAP : TFE_OK);
  }
  assert_int_equal(counts[TFE_MAYBE_OVERLAPS], 0); /* small cases are always decided */
  assert_true(counts[TFE_DISJOINT] > 100 && counts[TFE_OVERLAPS] > 100);
}
/* Large split siblings are decided exactly and fast (no budget exhaustion). */
static void test_overlap_large(void **st) {
  (void)st;
  int64_t dims[3] = {1000, 1000, 1000};
  tfe_layout L, parts[3], s1, s2;
  assert_int_equal(tfe_layout_dense(3, dims, TFE_COLMAJOR, &L), TFE_OK);
  int64_t sizes[3] = {300, 1, 699};
  for (int ax = 0; ax < 3; ax++) {
    assert_int_equal(tfe_layout_split(&L, ax, 3, sizes, parts), TFE_OK);
    assert_int_equal(tfe_layout_overlap(&parts[0], &parts[1], 0), TFE_DISJOINT);
    assert_int_equal(tfe_layout_overlap(&parts[2], &parts[0], 0), TFE_DISJOINT);
    assert_int_equal(tfe_layout_overlap(&parts[2], &L, 0), TFE_OVERLAPS);
  }
  /* even and odd columns interleave without sharing */
  assert_int_equal(tfe_layout_slice_axis(&L, 1, 0, 1000, 2, &s1), TFE_OK);
  assert_int_equal(tfe_layout_slice_axis(&L, 1, 999, -1, -2, &s2), TFE_OK);
  assert_int_equal(tfe_layout_overlap(&s1, &s2, 0), TFE_DISJOINT);
  assert_int_equal(tfe_layout_self_overlap(&L), TFE_DISJOINT);
  /* a transposed view of the same memory overlaps */
  int perm[3] = {2, 1, 0};
  assert_int_equal(tfe_layout_permute(&L, perm, &s1), TFE_OK);
  assert_int_equal(tfe_layout_overlap(&s1, &L, 0), TFE_OVERLAPS);
  /* an overlapping "sliding window" view: dims (3, 998) strides (1, 1) */
  tfe_layout w = {2, 0, {3, 998}, {1, 1}};
  assert_int_equal(tfe_layout_self_overlap(&w), TFE_OVERLAPS);
  /* typed: views into different buffers are disjoint, into the same one compared by address */
  double buf1[8], buf2[8];
  tfe_view_f64 a, b;
  assert_int_equal(tfe_wrap_f64(&a, buf1, 8, 1, (int64_t[]){8}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_wrap_f64(&b, buf2, 8, 1, (int64_t[]){8}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  tfe_overlap o = TFE_MAYBE_OVERLAPS;
  assert_int_equal(tfe_views_overlap_f64(&a, &b, &o), TFE_OK);
  assert_int_equal(o, TFE_DISJOINT);
  assert_int_equal(tfe_wrap_f64(&b, buf1 + 3, 5, 1, (int64_t[]){2}, (int64_t[]){2}, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_views_overlap_f64(&a, &b, &o), TFE_OK);
  assert_int_equal(o, TFE_OVERLAPS);
  assert_int_equal(tfe_views_overlap_f64(&b, &a, &o), TFE_OK);
  assert_int_equal(o, TFE_OVERLAPS);
}

/* ---- bad inputs: status, message, output untouched ------------------------------------------- */
#define EXPECT_UNTOUCHED(o, keep) assert_memory_equal(&(o), &(keep), sizeof(o))

static void test_view_errors(void **st) {
  (void)st;
  double buf[64];
  for (int i = 0; i < 64; i++) buf[i] = i;
  tfe_view_f64 v, o, keep;
  assert_int_equal(tfe_wrap_f64(&v, buf, 64, 3, (int64_t[]){2, 3, 4}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  memset(&o, 0x5A, sizeof o);
  keep = o;
  /* NULL arguments */
  TU_EXPECT_ERR(tfe_permute_f64(NULL, (int[]){0, 1, 2}, &o), TFE_ERR_NULL, "'in'");
  TU_EXPECT_ERR(tfe_permute_f64(&v, (int[]){0, 1, 2}, NULL), TFE_ERR_NULL, "'out'");
  TU_EXPECT_ERR(tfe_permute_f64(&v, NULL, &o), TFE_ERR_NULL, "'perm'");
  TU_EXPECT_ERR(tfe_reshape_f64(&v, 2, NULL, TFE_COLMAJOR, &o), TFE_ERR_NULL, "'dims'");
  TU_EXPECT_ERR(tfe_slice_f64(&v, NULL, (int64_t[]){1, 1, 1}, NULL, &o), TFE_ERR_NULL, "'start'");
  TU_EXPECT_ERR(tfe_slice_f64(&v, (int64_t[]){1, 1, 1}, NULL, NULL, &o), TFE_ERR_NULL, "'stop'");
  TU_EXPECT_ERR(tfe_split_f64(&v, 0, 2, NULL, &o), TFE_ERR_NULL, "'sizes'");
  TU_EXPECT_ERR(tfe_split_f64(&v, 0, 2, (int64_t[]){1, 1}, NULL), TFE_ERR_NULL, "'outs'");
  TU_EXPECT_ERR(tfe_diagonal_map_f64(&v, NULL, 2, &o), TFE_ERR_NULL, "'map'");
  EXPECT_UNTOUCHED(o, keep);
  /* bad input layouts */
  tfe_view_f64 bad = v;
  bad.lay.rank = TFE_MAX_RANK + 1;
  TU_EXPECT_ERR(tfe_permute_f64(&bad, (int[]){0}, &o), TFE_ERR_RANK, "rank 65 outside");
  bad = v; bad.lay.dims[1] = -2;
  TU_EXPECT_ERR(tfe_squeeze_f64(&bad, TFE_ALL_AXES, &o), TFE_ERR_INVALID, "dim 1 is negative");
  bad = v; bad.lay.dims[0] = bad.lay.dims[1] = bad.lay.dims[2] = INT64_C(1) << 22;
  TU_EXPECT_ERR(tfe_conj_f64(&bad, &o) == TFE_OK ? tfe_unsqueeze_f64(&bad, 0, &o) : TFE_OK, TFE_ERR_OVERFLOW,
                "element count overflows");
  bad = v; bad.lay.strides[2] = INT64_MAX / 2;
  TU_EXPECT_ERR(tfe_select_f64(&bad, 0, 0, &o), TFE_ERR_OVERFLOW, "addresses overflow");
  o = keep;
  /* permute */
  TU_EXPECT_ERR(tfe_permute_f64(&v, (int[]){0, 3, 1}, &o), TFE_ERR_INVALID, "perm[1] = 3 is not an axis");
  TU_EXPECT_ERR(tfe_permute_f64(&v, (int[]){0, 1, 0}, &o), TFE_ERR_INVALID, "not a permutation");
  /* reshape */
  TU_EXPECT_ERR(tfe_reshape_f64(&v, 2, (int64_t[]){5, 5}, TFE_COLMAJOR, &o), TFE_ERR_SHAPE,
                "cannot reshape [2, 3, 4] (24 elements) to [5, 5] (25 elements)");
  TU_EXPECT_ERR(tfe_reshape_f64(&v, 2, (int64_t[]){-6, -4}, TFE_COLMAJOR, &o), TFE_ERR_INVALID, "negative");
  TU_EXPECT_ERR(tfe_reshape_f64(&v, TFE_MAX_RANK + 1, (int64_t[]){24}, TFE_COLMAJOR, &o), TFE_ERR_RANK, "rank 65");
  TU_EXPECT_ERR(tfe_reshape_f64(&v, 1, (int64_t[]){24}, (tfe_order)7, &o), TFE_ERR_INVALID, "order 7");
  tfe_view_f64 tr;
  assert_int_equal(tfe_permute_f64(&v, (int[]){1, 0, 2}, &tr), TFE_OK);
  TU_EXPECT_ERR(tfe_reshape_f64(&tr, 1, (int64_t[]){24}, TFE_COLMAJOR, &o), TFE_ERR_STRIDES,
                "reshape of [3, 2, 4] with strides [2, 1, 6] to [24] needs a copy: axes 0 and 1");
  TU_EXPECT_ERR(tfe_reshape_f64(&v, 1, (int64_t[]){24}, TFE_ROWMAJOR, &o), TFE_ERR_STRIDES, "row-major order");
  /* the same reshape works where strides allow */
  assert_int_equal(tfe_reshape_f64(&tr, 2, (int64_t[]){6, 4}, TFE_COLMAJOR, &o), TFE_ERR_STRIDES);
  assert_int_equal(tfe_reshape_f64(&tr, 3, (int64_t[]){3, 2, 4}, TFE_COLMAJOR, &o), TFE_OK);
  o = keep;
  /* broadcast */
  TU_EXPECT_ERR(tfe_broadcast_f64(&v, 3, (int64_t[]){2, 5, 4}, &o), TFE_ERR_SHAPE,
                "input axis 1 of size 3 cannot broadcast to size 5");
  TU_EXPECT_ERR(tfe_broadcast_f64(&v, 2, (int64_t[]){3, 4}, &o), TFE_ERR_RANK, "lower rank 2");
  /* diagonal */
  TU_EXPECT_ERR(tfe_diagonal_f64(&v, 1, 1, &o), TFE_ERR_INVALID, "the same");
  TU_EXPECT_ERR(tfe_diagonal_f64(&v, 0, 1, &o), TFE_ERR_SHAPE, "sizes 2 and 3");
  TU_EXPECT_ERR(tfe_diagonal_f64(&v, 0, 3, &o), TFE_ERR_INVALID, "axis 3 is not an axis of a rank-3");
  TU_EXPECT_ERR(tfe_diagonal_map_f64(&v, (int[]){0, 1, 1}, 3, &o), TFE_ERR_SHAPE, "merged into output axis 1");
  TU_EXPECT_ERR(tfe_diagonal_map_f64(&v, (int[]){0, 2, 2}, 3, &o), TFE_ERR_SHAPE, "merged");
  TU_EXPECT_ERR(tfe_diagonal_map_f64(&v, (int[]){0, 1, 3}, 3, &o), TFE_ERR_INVALID, "map[2] = 3 outside");
  TU_EXPECT_ERR(tfe_diagonal_map_f64(&v, (int[]){0, 1, 2}, 4, &o), TFE_ERR_RANK, "out_rank 4");
  TU_EXPECT_ERR(tfe_diagonal_map_f64(&v, (int[]){0, 0, 0}, 2, &o), TFE_ERR_SHAPE, "merged");
  /* slice: no clamping, no wrap-around */
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, 1, 0, 4, 1, &o), TFE_ERR_BOUNDS, "axis 1: slice 0:4:1 out of bounds for size 3");
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, 1, -1, 2, 1, &o), TFE_ERR_BOUNDS, "out of bounds");
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, 1, 2, 1, 1, &o), TFE_ERR_BOUNDS, "start <= stop");
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, 1, 3, 0, -1, &o), TFE_ERR_BOUNDS, "stop <= start <= size-1");
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, 1, 0, -2, -1, &o), TFE_ERR_BOUNDS, "out of bounds");
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, 1, 0, 3, 0, &o), TFE_ERR_INVALID, "step is 0");
  TU_EXPECT_ERR(tfe_slice_axis_f64(&v, -1, 0, 3, 1, &o), TFE_ERR_INVALID, "axis -1 is not an axis");
  TU_EXPECT_ERR(tfe_slice_f64(&v, (int64_t[]){0, 0, 0}, (int64_t[]){2, 3, 5}, NULL, &o), TFE_ERR_BOUNDS, "axis 2");
  /* select */
  TU_EXPECT_ERR(tfe_select_f64(&v, 2, 4, &o), TFE_ERR_BOUNDS, "index 4 outside [0, 4) on axis 2");
  TU_EXPECT_ERR(tfe_select_f64(&v, 2, -1, &o), TFE_ERR_BOUNDS, "index -1");
  TU_EXPECT_ERR(tfe_select_f64(&v, 3, 0, &o), TFE_ERR_INVALID, "axis 3");
  /* squeeze / unsqueeze */
  TU_EXPECT_ERR(tfe_squeeze_f64(&v, 1, &o), TFE_ERR_SHAPE, "axis 1 has size 3, not 1");
  TU_EXPECT_ERR(tfe_unsqueeze_f64(&v, 4, &o), TFE_ERR_INVALID, "axis 4 outside [0, 3]");
  tfe_view_f64 full = v;
  full.lay.rank = TFE_MAX_RANK;
  for (int k = 3; k < TFE_MAX_RANK; k++) { full.lay.dims[k] = 1; full.lay.strides[k] = 0; }
  TU_EXPECT_ERR(tfe_unsqueeze_f64(&full, 0, &o), TFE_ERR_RANK, "already the maximum");
  /* split */
  tfe_view_f64 parts[3];
  memset(parts, 0x5A, sizeof parts);
  tfe_view_f64 pkeep[3];
  memcpy(pkeep, parts, sizeof parts);
  TU_EXPECT_ERR(tfe_split_f64(&v, 2, 2, (int64_t[]){1, 2}, parts), TFE_ERR_SHAPE, "do not add up to axis 2's size 4");
  TU_EXPECT_ERR(tfe_split_f64(&v, 2, 2, (int64_t[]){5, -1}, parts), TFE_ERR_INVALID, "sizes[1] is negative");
  TU_EXPECT_ERR(tfe_split_f64(&v, 2, 2, (int64_t[]){INT64_MAX, INT64_MAX}, parts), TFE_ERR_SHAPE, "do not add up");
  TU_EXPECT_ERR(tfe_split_f64(&v, 2, 0, (int64_t[]){4}, parts), TFE_ERR_INVALID, "nparts is 0");
  assert_memory_equal(parts, pkeep, sizeof parts);
  EXPECT_UNTOUCHED(o, keep);
  /* get/set */
  double x = 0;
  TU_EXPECT_ERR(tfe_get_f64(&v, (int64_t[]){1, 3, 0}, &x), TFE_ERR_BOUNDS, "index 3 outside [0, 3) on axis 1");
  TU_EXPECT_ERR(tfe_set_f64(&v, (int64_t[]){2, 0, 0}, 1.0), TFE_ERR_BOUNDS, "index 2 outside [0, 2) on axis 0");
  TU_EXPECT_ERR(tfe_get_f64(&v, NULL, &x), TFE_ERR_NULL, "'idx'");
  assert_true(x == 0);
}

/* Writing through views whose elements overlap is refused; everything else may be written. */
static void test_write_overlap(void **st) {
  (void)st;
  double buf[16] = {0};
  tfe_view_f64 v, b, w;
  assert_int_equal(tfe_wrap_f64(&v, buf, 16, 1, (int64_t[]){4}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_broadcast_f64(&v, 2, (int64_t[]){3, 4}, &b), TFE_OK);
  TU_EXPECT_ERR(tfe_set_f64(&b, (int64_t[]){0, 1}, 5.0), TFE_ERR_OVERLAP, "axis 0 has stride 0 and size 3");
  TU_EXPECT_ERR(tfe_check_writable_f64(&b), TFE_ERR_OVERLAP, "broadcast");
  /* sliding window: dims (3, 4), strides (1, 2): (2,0) and (0,1) share element 2 */
  assert_int_equal(tfe_wrap_f64(&w, buf, 16, 2, (int64_t[]){3, 4}, (int64_t[]){1, 2}, 0, TFE_COLMAJOR), TFE_OK);
  TU_EXPECT_ERR(tfe_set_f64(&w, (int64_t[]){0, 0}, 5.0), TFE_ERR_OVERLAP, "two indices of the view address the same element");
  for (int i = 0; i < 16; i++) assert_true(buf[i] == 0); /* nothing written */
  /* dims (2, 4), strides (1, 2) is exactly dense: writable */
  assert_int_equal(tfe_wrap_f64(&w, buf, 16, 2, (int64_t[]){2, 4}, (int64_t[]){1, 2}, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_check_writable_f64(&w), TFE_OK);
  assert_int_equal(tfe_set_f64(&w, (int64_t[]){1, 3}, 5.0), TFE_OK);
  assert_true(buf[7] == 5.0);
  /* a broadcast axis of size 1 is fine */
  assert_int_equal(tfe_broadcast_f64(&v, 2, (int64_t[]){1, 4}, &b), TFE_OK);
  assert_int_equal(tfe_set_f64(&b, (int64_t[]){0, 3}, 6.0), TFE_OK);
  assert_true(buf[3] == 6.0);
}

/* Hand-picked cases on top of the random ones. */
static void test_view_examples(void **st) {
  (void)st;
  double buf[12];
  for (int i = 0; i < 12; i++) buf[i] = i;
  tfe_view_f64 m, t, d;
  /* 3x4 row-major matrix */
  assert_int_equal(tfe_wrap_f64(&m, buf, 12, 2, (int64_t[]){3, 4}, NULL, 0, TFE_ROWMAJOR), TFE_OK);
  assert_int_equal(m.lay.strides[0], 4);
  assert_int_equal(tfe_reshape_f64(&m, 1, (int64_t[]){12}, TFE_ROWMAJOR, &t), TFE_OK);
  assert_int_equal(t.lay.strides[0], 1);
  assert_int_equal(tfe_reshape_f64(&m, 3, (int64_t[]){3, 2, 2}, TFE_ROWMAJOR, &t), TFE_OK);
  assert_int_equal(t.lay.strides[0], 4);
  assert_int_equal(t.lay.strides[1], 2);
  assert_int_equal(t.lay.strides[2], 1);
  /* diagonal of the leading 3x3 block: elements 0, 5, 10 */
  assert_int_equal(tfe_slice_axis_f64(&m, 1, 0, 3, 1, &t), TFE_OK);
  assert_int_equal(tfe_diagonal_f64(&t, 0, 1, &d), TFE_OK);
  assert_int_equal(d.lay.strides[0], 5);
  double x;
  assert_int_equal(tfe_get_f64(&d, (int64_t[]){2}, &x), TFE_OK);
  assert_true(x == 10);
  /* reversed rows 2, 0 */
  assert_int_equal(tfe_slice_axis_f64(&m, 0, 2, -1, -2, &t), TFE_OK);
  assert_int_equal(t.lay.dims[0], 2);
  assert_int_equal(tfe_get_f64(&t, (int64_t[]){1, 3}, &x), TFE_OK);
  assert_true(x == 3);
  /* empty slices and reshapes of empty tensors */
  assert_int_equal(tfe_slice_axis_f64(&m, 0, 3, 3, 1, &t), TFE_OK);
  assert_int_equal(t.lay.dims[0], 0);
  assert_int_equal(tfe_reshape_f64(&t, 3, (int64_t[]){0, 7, 5}, TFE_COLMAJOR, &d), TFE_OK);
  assert_int_equal(tfe_slice_axis_f64(&m, 0, -1, -1, -1, &t), TFE_OK);
  assert_int_equal(t.lay.dims[0], 0);
  /* rank 0 */
  tfe_view_f64 s;
  assert_int_equal(tfe_select_f64(&m, 0, 1, &t), TFE_OK);
  assert_int_equal(tfe_select_f64(&t, 0, 2, &s), TFE_OK);
  assert_int_equal(s.lay.rank, 0);
  assert_int_equal(tfe_get_f64(&s, NULL, &x), TFE_OK);
  assert_true(x == 6);
  assert_int_equal(tfe_reshape_f64(&s, 3, (int64_t[]){1, 1, 1}, TFE_COLMAJOR, &t), TFE_OK);
  assert_int_equal(tfe_broadcast_f64(&s, 2, (int64_t[]){2, 2}, &t), TFE_OK);
  assert_int_equal(tfe_get_f64(&t, (int64_t[]){1, 1}, &x), TFE_OK);
  assert_true(x == 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_ops_all_kinds), cmocka_unit_test(test_overlap_brute),
      cmocka_unit_test(test_overlap_large),      cmocka_unit_test(test_view_errors),
      cmocka_unit_test(test_write_overlap),      cmocka_unit_test(test_view_examples),
  };
  return cmocka_run_group_tests_name("views", tests, NULL, NULL);
}
