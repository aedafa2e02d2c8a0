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
  int64_t n = 1; /* keep cases small: at most about 2500 elements */
  for (int i = 0; i < *rank; i++) n *= dims[i];
  for (int i = 0; n > 2500; i = (i + 1) % *rank)
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

static bool tk_cl(double x, double y, double tol) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (x == y) return true;
  return fabs(x - y) <= tol * (1 + fabs(x));
}

/* Mode 1 plans every tensor and threads from 64 elements on; mode 0 restores defaults.
 * Modes 2 and 3 also shrink the transpose tiles to a few elements (clipped tiles and 8x8
 * rims everywhere), stream every result past the cache (unaligned heads and tails), and
 * drive map/zip transpose tiles through whole-tile heap buffers (2) or narrow stack strips
 * of 1 to 2 columns (3). Mode 2 gathers with vector gathers; mode 3 plans gather tiles for every
 * transpose that starts with a tiny dim and caps their column caches. */
/* One tuning field set (tfe_tuning_set checks the value). */
#define TK_TUNE(field, value) \
  do { \
    tfe_tuning tk_t_ = tfe_tuning_get(); \
    tk_t_.field = (value); \
    assert_int_equal(tfe_tuning_set(&tk_t_), TFE_OK); \
  } while (0)

static void tk_paths(int mode) {
  tfe_tuning t = tfe_tuning_get();
  t.kernel_small_elems = mode ? 0 : 1024;
  t.kernel_parallel_min = mode ? 64 : 32768;
  t.copy_tile_bytes = mode >= 2 ? 64 : mode == 1 ? 256 : 512; /* 512: the default */
  t.elementwise_tile_bytes = mode >= 2 ? 96 : 2048;
  t.elementwise_run_bytes = mode >= 2 ? 128 : 2048;
  t.elementwise_fused_map_tile_bytes = mode >= 2 ? 96 : 512;
  t.elementwise_gather_bytes = mode >= 2 ? 128 : 2048;
  t.kernel_stream_min_bytes = mode >= 2 ? 0 : (int64_t)16 << 20;
  t.elementwise_tile_buffers = mode != 3;
  t.elementwise_strip_elems = mode >= 2 ? 24 : (int64_t)1 << 30;
  t.kernel_vector_gather = mode == 2 ? 1 : mode == 3 ? -1 : 0; /* vector gathers: always, never, auto */
  t.kernel_gather_all = mode == 3;  /* gather tiles for every transpose starting with a tiny dim */
  t.kernel_tiny_dim = mode == 3 ? 16 : 8;
  t.elementwise_column_cache_elems = mode == 3 ? 64 : 16384; /* small caches: some inputs skip them */
  /* f64 ops fused into the 8x8 transpose: the CPU's default (0), never (1), maps and zips
   * (2); copy tiles buffered: default, when unaligned, always, never; mode 3 runs the
   * portable loops instead of the vector micro-kernels */
  t.elementwise_fuse = mode == 0 ? -1 : mode == 1 ? 0 : 2;
  t.copy_buffered_tiles = mode == 0 ? -1 : mode == 1 ? 1 : mode == 2 ? 2 : 0;
  t.kernel_stream_edge_lines = mode == 0 ? -1 : mode == 2 ? 1 : 0; /* streamed run edges: auto, on, off */
  t.copy_lone_edge_bytes = mode == 2 ? 256 : 0; /* (lone columns under 256 bytes: edges cached; else streamed) */
  t.copy_fresh_in_order = mode == 0 ? -1 : mode == 1 ? 0 : 1; /* fresh in-order transposes via cache */
  t.copy_fresh_min_bytes = mode == 0 ? (int64_t)4 << 20 : 0;  /* (their small tensors count as fresh) */
  t.kernel_portable = mode == 3;
  t.copy_narrow_records = mode == 1 ? 0 : 1; /* (records.h takes narrow records; mode 1 their tile plans) */
  assert_int_equal(tfe_tuning_set(&t), TFE_OK);
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
  for (int mode = 0; mode < 8; mode++) { /* threads 1, 2; path modes 0-3 (tk_paths) */
    int nt = 1 + mode % 2;
    tfe_set_num_threads(nt);
    tk_paths(mode / 2);
    TK_TESTS(TK_RUN_COPY)
  }
  tk_paths(0);
  tfe_set_num_threads(0);
}

#define TK_MODES(body)                                                   \
  for (int mode = 0; mode < 8; mode++) {                                 \
    int nt = 1 + mode % 2;                                               \
    tfe_set_num_threads(nt);                                             \
    tk_paths(mode / 2);                                                  \
    body                                                                 \
  }                                                                      \
  tk_paths(0);                                                           \
  tfe_set_num_threads(0);

#define TK_RUN_MAP(s) tk_map_random_##s(&r, nt);
#define TK_RUN_ZIP(s) tk_zip_random_##s(&r, nt);
#define TK_RUN_BLAS1(s) tk_blas1_random_##s(&r, nt);
#define TK_RUN_RED(s) tk_reduce_random_##s(&r, nt);
static void test_map_random(void **st) { (void)st; tu_rng r = {777}; TK_MODES(TK_TESTS(TK_RUN_MAP)) }
static void test_zip_random(void **st) { (void)st; tu_rng r = {4242}; TK_MODES(TK_TESTS(TK_RUN_ZIP)) }
static void test_blas1_random(void **st) { (void)st; tu_rng r = {99}; TK_MODES(TK_TESTS(TK_RUN_BLAS1)) }
static void test_reduce_random(void **st) { (void)st; tu_rng r = {31337}; TK_MODES(TK_TESTS(TK_RUN_RED)) }

/* Tensors whose dims are all tiny (2, 3, 4), as tensor-network intermediates: zips of two
 * inputs broadcast over the labels they lack (outer products), maps and copies of permuted
 * sources. These plan gather tiles (and column caches for inputs reused across a tile);
 * the counters prove those paths ran. */
#define TK_RUN_SMALL(s) tk_small_random_##s(&r, nt);
static void test_small_dims(void **st) {
  (void)st;
  tu_rng r = {2026};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  TK_MODES(TK_TESTS(TK_RUN_SMALL))
  tfe__st.kernel_stat_on = 1;
  assert_true(tfe__st.kernel_stat[0] > 0); /* map/zip gather tiles */
  assert_true(tfe__st.kernel_stat[1] > 0); /* with column caches */
  assert_true(tfe__st.kernel_stat[2] > 0); /* copy gather tiles */
  /* tn_light's permutation at rank 14: runs of 16 from a table of the other dims */
  enum { R = 14 };
  int perm[R] = {0, 1, 2, 3, 12, 4, 13, 5, 6, 7, 8, 9, 10, 11};
  int64_t n = 1 << R, dims[R];
  double *src = malloc(sizeof(double) * (size_t)n), *dst = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) src[i] = (double)i;
  tfe_view_f64 sv = {src, {R, 0, {0}, {0}}, false}, dv = {dst, {R, 0, {0}, {0}}, false};
  for (int i = 0; i < R; i++) {
    dims[i] = 2;
    sv.lay.dims[i] = dv.lay.dims[i] = 2;
    sv.lay.strides[i] = (int64_t)1 << perm[i];
    dv.lay.strides[i] = (int64_t)1 << i;
  }
  TK_TUNE(copy_unit_flips, 0); /* (on: this plain copy of runs of 16 through a table runs as units) */
  for (int pass = 0; pass < 4; pass++) {
    tfe_set_num_threads(1 + pass % 2);
    tk_paths(pass / 2);
    int64_t before = tfe__st.kernel_stat[3];
    assert_int_equal(tfe_copy_f64(&dv, &sv), TFE_OK);
    assert_true(tfe__st.kernel_stat[3] > before);
    int64_t idx[R] = {0};
    do {
      int64_t so = 0, dof = 0;
      for (int i = 0; i < R; i++) { so += idx[i] * sv.lay.strides[i]; dof += idx[i] * dv.lay.strides[i]; }
      if (dst[dof] != src[so]) fail_msg("run copy mismatch pass %d", pass);
    } while (tk_next(R, dims, idx));
  }
  TK_TUNE(copy_unit_flips, 1);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
  free(src); free(dst);
}

/* Round-4 paths on f64: ops fused into the 8x8 register transpose (a transposed input, the
 * other read in place, destination written straight: any sizes, rims, negative strides,
 * in-place on the other input) and plain blocks of large outputs streamed through an L1
 * buffer (kernel_stream_min_bytes = 0 makes every output "large"). Naive loops give the reference;
 * the counters prove the paths ran. */
static double tk_fu_ref(int op, bool zip, double x, double y) {
  if (!zip) return op == TFE_UN_NEG ? -x : op == TFE_UN_SQUARE ? x * x : op == TFE_UN_ABS ? fabs(x) : x;
  return op == TFE_BIN_ADD ? x + y : op == TFE_BIN_SUB ? x - y : op == TFE_BIN_MUL ? x * y : x / y;
}
static void test_fused_paths(void **st) {
  (void)st;
  tu_rng r = {404};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  const int unops[] = {TFE_UN_NEG, TFE_UN_SQUARE, TFE_UN_CONJ, TFE_UN_REAL, TFE_UN_ABS}; /* abs: not fused */
  const int binops[] = {TFE_BIN_ADD, TFE_BIN_SUB, TFE_BIN_MUL, TFE_BIN_DIV};
  for (int mode = 0; mode < 8; mode++) {
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(mode / 2);
    TK_TUNE(kernel_stream_min_bytes, mode / 2 == 1 ? (int64_t)16 << 20 : 0); /* streamed, except mode 1 */
    for (int c = 0; c < tu_cases(40); c++) {
      int64_t m = tu_int(&r, 1, 70), n = tu_int(&r, 1, 70), mn = m * n;
      double *a = malloc(sizeof(double) * (size_t)mn), *b = malloc(sizeof(double) * (size_t)mn);
      double *d = malloc(sizeof(double) * (size_t)mn), *b0 = malloc(sizeof(double) * (size_t)mn);
      for (int64_t i = 0; i < mn; i++) { a[i] = tu_unif(&r) - 0.5; b0[i] = b[i] = tu_unif(&r) + 0.5; d[i] = 0; }
      bool zip = c % 2, tfirst = tu_int(&r, 0, 1), inplace = zip && tu_int(&r, 0, 3) == 0;
      int op = zip ? binops[tu_int(&r, 0, 3)] : unops[tu_int(&r, 0, 4)];
      bool arev = tu_int(&r, 0, 2) == 0, brev = tu_int(&r, 0, 2) == 0, drev = tu_int(&r, 0, 2) == 0;
      /* dst m x n column-major (columns maybe reversed); a: the transpose of a row-major
       * buffer (rows maybe reversed); b: column-major like dst */
      tfe_view_f64 dv = {inplace ? b : d, {2, drev ? (n - 1) * m : 0, {m, n}, {1, drev ? -m : m}}, false};
      tfe_view_f64 av = {a, {2, arev ? (m - 1) * n : 0, {m, n}, {arev ? -n : n, 1}}, false};
      if (c % 4 == 2) av = (tfe_view_f64){a, {2, arev ? (n - 1) * m : 0, {m, n}, {1, arev ? -m : m}}, false}; /* plain */
      tfe_view_f64 bv = {b, {2, brev ? (n - 1) * m : 0, {m, n}, {1, brev ? -m : m}}, false};
      if (inplace) bv = dv;
      if (c % 8 == 3 && !inplace) { /* an outer product: a[i] * b[j] through stride-0 views, plain blocks */
        av = (tfe_view_f64){a, {2, 0, {m, n}, {1, 0}}, false};
        bv = (tfe_view_f64){b, {2, brev ? n - 1 : 0, {m, n}, {0, brev ? -1 : 1}}, false};
      }
      tfe_status rc = zip ? tfe_zip_f64(&dv, tfirst ? &av : &bv, tfirst ? &bv : &av, (tfe_binop)op)
                          : tfe_map_f64(&dv, &av, (tfe_unop)op, 0.0);
      assert_int_equal(rc, TFE_OK);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double x = a[av.lay.offset + i * av.lay.strides[0] + j * av.lay.strides[1]];
          double y = inplace ? b0[dv.lay.offset + i + j * dv.lay.strides[1]] : b[bv.lay.offset + i * bv.lay.strides[0] + j * bv.lay.strides[1]];
          double want = tfirst || !zip ? tk_fu_ref(op, zip, x, y) : tk_fu_ref(op, zip, y, x);
          double got = dv.data[dv.lay.offset + i + j * dv.lay.strides[1]];
          if (memcmp(&want, &got, sizeof got))
            fail_msg("mode %d op %d zip %d (%lld, %lld): %g != %g", mode, op, zip, (long long)i, (long long)j, got, want);
        }
      free(a); free(b); free(d); free(b0);
    }
  }
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
#if TFE__KHAVE_TR8
  assert_true(tfe__st.kernel_stat[4] > 0); /* fused transpose tiles */
#endif
  assert_true(tfe__st.kernel_stat[5] > 0); /* streamed plain blocks (a map with a contiguous source) */
#if TFE__KHAVE_TR8
  assert_true(tfe__st.kernel_stat[6] > 0); /* one-pass fused rows (contiguous maps, outer products) */
#endif
}

/* Reversals of 2s and 3s (f64 and c128, 1 and 2 threads, path modes 0-3): table tiles
 * stepped along the source, and in the streamed modes tile buffers for the 3s' unaligned
 * destination columns; offsets and views shifted so that no run starts aligned. */
static void test_table_tiles(void **st) {
  (void)st;
  TK_TUNE(copy_shared_keep, 0); /* (reversals this small keep their shared-dim plans by default) */
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 8; mode++) {
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(mode / 2);
    for (int c = 0; c < 4; c++) {
      int b = c % 2 ? 3 : 2, R = b == 2 ? 13 : 8, shift = c / 2;
      int64_t n = 1, dims[16];
      for (int i = 0; i < R; i++) { dims[i] = b; n *= b; }
      double *src = malloc(sizeof(double) * (size_t)(n + 1)), *dst = malloc(sizeof(double) * (size_t)(n + 1));
      double complex *zs = malloc(sizeof(double complex) * (size_t)n), *zd = malloc(sizeof(double complex) * (size_t)n);
      for (int64_t i = 0; i <= n; i++) { src[i] = (double)i; dst[i] = -1; }
      for (int64_t i = 0; i < n; i++) { zs[i] = (double)i - (double)i * I; zd[i] = 0; }
      tfe_view_f64 sv = {src + shift, {R, 0, {0}, {0}}, false}, dv = {dst + shift, {R, 0, {0}, {0}}, false};
      tfe_view_c128 zsv = {zs, {R, 0, {0}, {0}}, false}, zdv = {zd, {R, 0, {0}, {0}}, false};
      int64_t st_ = 1;
      for (int i = 0; i < R; i++) {
        sv.lay.dims[i] = dv.lay.dims[i] = zsv.lay.dims[i] = zdv.lay.dims[i] = b;
        dv.lay.strides[i] = zdv.lay.strides[i] = st_;
        sv.lay.strides[R - 1 - i] = zsv.lay.strides[R - 1 - i] = st_;
        st_ *= b;
      }
      assert_int_equal(tfe_copy_f64(&dv, &sv), TFE_OK);
      assert_int_equal(tfe_copy_c128(&zdv, &zsv), TFE_OK);
      int64_t idx[16] = {0};
      do {
        int64_t so = 0, dof = 0;
        for (int i = 0; i < R; i++) { so += idx[i] * sv.lay.strides[i]; dof += idx[i] * dv.lay.strides[i]; }
        if (dv.data[dof] != sv.data[so]) fail_msg("f64 reversal of %ds mode %d at %lld", b, mode, (long long)dof);
        if (zd[dof] != zs[so]) fail_msg("c128 reversal of %ds mode %d at %lld", b, mode, (long long)dof);
      } while (tk_next(R, dims, idx));
      if (shift && dst[0] != -1) fail_msg("wrote before the view");
      free(src); free(dst); free(zs); free(zd);
    }
  }
  tk_paths(0);
  tfe_set_num_threads(0);
  TK_TUNE(copy_shared_keep, 1);
  tfe__st.kernel_stat_on = 0;
  assert_true(tfe__st.kernel_stat[8] > 0); /* table tiles */
#if TFE__KHAVE_TR8
  assert_true(tfe__st.kernel_stat[7] > 0); /* buffered transpose tiles */
#endif
}

/* Transposes of 4- and 16-byte kinds (f32, i32, c128, max-plus f32): the register blocks of
 * 16 x 8 (4 bytes) and 4 x 4 (16 bytes) elements, through strided tiles, table tiles, runs
 * of tables (k_copy_runs_), short common runs tiled as transposes, and (streamed modes)
 * tile buffers. Ranks 2-4, dims 1-90, a random permutation with reversed
 * dims, source and destination shifted by 0-3 elements so that lines start anywhere; both
 * tfe_copy and tfe_contiguous, checked element by element; the counter proves the blocks ran. */
/* The permuted copy of src (dims, column-major strides st) into dst, dimension k of both views
 * being perm[k], a source label reversed where REV: tfe_copy into dv and tfe_contiguous into t,
 * each checked element by element; TAG and ARG name the case in a failure. Declares sv, dv, t. */
#define TK_PERM_COPY_CHECK(S, T, REV, TAG, ARG)                                                 \
  tfe_view_##S sv = {src + sh, {rank, 0, {0}, {0}}, false}, dv = {dst + dh, {rank, 0, {0}, {0}}, false}; \
  int64_t ds = 1;                                                                               \
  for (int k = 0; k < rank; k++) {                                                              \
    int64_t a = perm[k];                                                                        \
    bool rev = (REV);                                                                           \
    sv.lay.dims[k] = dv.lay.dims[k] = dims[a];                                                  \
    sv.lay.strides[k] = rev ? -st[a] : st[a];                                                   \
    if (rev) sv.lay.offset += (dims[a] - 1) * st[a];                                            \
    dv.lay.strides[k] = ds;                                                                     \
    ds *= dims[a];                                                                              \
  }                                                                                             \
  assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                             \
  tfe_tensor_##S t = {0};                                                                       \
  assert_int_equal(tfe_contiguous_##S(&sv, TFE_COLMAJOR, &t), TFE_OK);                          \
  int64_t idx[TFE_MAX_RANK] = {0};                                                              \
  do {                                                                                          \
    int64_t so = sv.lay.offset, dof = 0;                                                        \
    for (int k = 0; k < rank; k++) { so += idx[k] * sv.lay.strides[k]; dof += idx[k] * dv.lay.strides[k]; } \
    if (memcmp(&dv.data[dof], &sv.data[so], sizeof(T)) || memcmp(&t.v.data[dof], &sv.data[so], sizeof(T))) \
      fail_msg(#S " " TAG " %d rank %d at %lld", ARG, rank, (long long)dof);                     \
  } while (tk_next(rank, sv.lay.dims, idx));
#define TK_BLOCKS(S, T, VAL)                                                                     \
  static void tk_blocks_##S(tu_rng *r, int mode) {                                             \
    int rank = (int)tu_int(r, 2, 4);                                                           \
    int64_t dims[4], n = 1;                                                                     \
    for (int k = 0; k < rank; k++) {                                                           \
      dims[k] = tu_int(r, 0, 2) ? tu_int(r, 16, 90) : tu_int(r, 1, 20);                        \
      if (rank > 2) dims[k] = (dims[k] + 1) / 2;                                              \
      n *= dims[k];                                                                            \
    }                                                                                          \
    int64_t sh = tu_int(r, 0, 3), dh = tu_int(r, 0, 3), perm[4], st[4], s = 1;                 \
    T *src = malloc(sizeof(T) * (size_t)(n + 4)), *dst = malloc(sizeof(T) * (size_t)(n + 4));   \
    for (int64_t i = 0; i < n + 4; i++) { src[i] = VAL(i); dst[i] = VAL(-1); }                \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                   \
    for (int k = rank - 1; k > 0; k--) {                                                       \
      int j = (int)tu_int(r, 0, k);                                                            \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                     \
    }                                                                                          \
    if (rank == 4 && tu_int(r, 0, 1)) { /* a short common run continued far away (k_copy_tile_) */ \
      perm[0] = 0; perm[1] = 2; perm[2] = 3; perm[3] = 1;                                      \
    }                                                                                          \
    TK_PERM_COPY_CHECK(S, T, tu_int(r, 0, 3) == 0, "transpose mode", mode)                 \
    T none = VAL(-1);                                                                          \
    if (dh && memcmp(&dst[dh - 1], &none, sizeof(T))) fail_msg(#S " wrote before the view");   \
    if (memcmp(&dst[dh + n], &none, sizeof(T))) fail_msg(#S " wrote past the view");           \
    tfe_tensor_release_##S(&t);                                                                \
    free(src); free(dst);                                                                      \
  }
#define TK_VAL(i) (i)
#define TK_CVAL(i) ((double)(i) - 0.5 * (double)(i) * I)
#define TK_MPVAL(i) ((tfe_maxplus_f32){(float)(i)})
TK_BLOCKS(f32, float, TK_VAL)
TK_BLOCKS(i32, int32_t, TK_VAL)
TK_BLOCKS(c128, double complex, TK_CVAL)
TK_BLOCKS(maxplus_f32, tfe_maxplus_f32, TK_MPVAL)

/* 1- and 2-byte user kinds (tenferro ships none): their register blocks are 64 x 64 bytes
 * (tfe__ktr12), and 16 x 16 bytes or 8 x 8 16-bit elements on the rims and on tile sides
 * under 64 bytes (tfe__ktr12x16, the last block shifted back to end at the edge). Values hash the index (a byte repeats every 256
 * elements; the hash keeps a misplaced element from landing on an equal one nearby). */
typedef struct tk_u8 { uint8_t v; } tk_u8;
typedef struct tk_u16 { uint16_t v; } tk_u16;
#define TK_SR_INT(S, T, W)                                                                       \
  static inline S tfe_sr_zero_##W(void) { S r = {0}; return r; }                                \
  static inline S tfe_sr_one_##W(void) { S r = {1}; return r; }                                 \
  static inline S tfe_sr_add_##W(S a, S b) { S r = {(T)(a.v + b.v)}; return r; }                \
  static inline S tfe_sr_mul_##W(S a, S b) { S r = {(T)(a.v * b.v)}; return r; }                \
  static inline S tfe_sr_conj_##W(S a) { return a; }                                            \
  static inline bool tfe_sr_eq_##W(S a, S b) { return a.v == b.v; }                             \
  static inline S tfe_sr_from_f64_##W(double x) { S r = {(T)(int64_t)x}; return r; }            \
  static inline double tfe_sr_dist_##W(S a, S b) { return a.v == b.v ? 0 : 1; }
TK_SR_INT(tk_u8, uint8_t, u8)
TK_SR_INT(tk_u16, uint16_t, u16)
#define TFE_S u8
#define TFE_T tk_u8
#define TFE_R tk_u8
#define TFE_ALG TFE_ALG_CUSTOM
#define TFE_CPLX 0
#define TFE_FLOAT 0
#define TFE_DT TFE_DT_CUSTOM
#include <tenferro/tensor/tensor_tpl.h>
#include <tenferro/kernel/kernel_tpl.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 1
#include <tenferro/tensor/tensor_tpl.h>
#include <tenferro/kernel/kernel_tpl.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#undef TFE_S
#undef TFE_T
#undef TFE_R
#define TFE_S u16
#define TFE_T tk_u16
#define TFE_R tk_u16
#include <tenferro/tensor/tensor_tpl.h>
#include <tenferro/kernel/kernel_tpl.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 1
#include <tenferro/tensor/tensor_tpl.h>
#include <tenferro/kernel/kernel_tpl.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#undef TFE_S
#undef TFE_T
#undef TFE_R
#undef TFE_ALG
#undef TFE_CPLX
#undef TFE_FLOAT
#undef TFE_DT
#define TK_U8VAL(i) ((tk_u8){(uint8_t)((i) * 37 + ((i) >> 8) * 101)})
#define TK_U16VAL(i) ((tk_u16){(uint16_t)((i) * 7919 + ((i) >> 16) * 101)})
TK_BLOCKS(u8, tk_u8, TK_U8VAL)
TK_BLOCKS(u16, tk_u16, TK_U16VAL)
static void test_block_sizes(void **st) {
  (void)st;
  tu_rng r = {2026};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 8; mode++) {
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(mode / 2);
    TK_TUNE(copy_shifted_rims, mode % 4 != 3); /* (rims in scalar loops in modes 3 and 7) */
    for (int c = 0; c < tu_cases(30); c++) {
      tk_blocks_f32(&r, mode); tk_blocks_i32(&r, mode); tk_blocks_c128(&r, mode); tk_blocks_maxplus_f32(&r, mode);
    }
  }
  TK_TUNE(copy_shifted_rims, 1);
  tk_paths(0);
  tfe_set_num_threads(0);
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[9] > 0); /* register blocks of 4- and 16-byte kinds */
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[13] > 0); /* rims as shifted register blocks */
  assert_true(tfe__st.kernel_stat[11] > 0); /* tiles of a reversed source dim: buffered or runs */
#endif
  assert_true(tfe__st.kernel_stat[10] > 0); /* short common runs tiled as transposes */
  /* the same for 1- and 2-byte kinds: taller dims, so that tiles hold whole 64- and 32-row blocks */
  assert_true(tfe_sr_dist_u8(tfe_sr_from_f64_u8(257), tfe_sr_one_u8()) == 0); /* (they wrap) */
  assert_true(tfe_sr_dist_u16(tfe_sr_from_f64_u16(65537), tfe_sr_one_u16()) == 0);
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 8; mode++) {
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(mode / 2);
    TK_TUNE(copy_narrow_source_tiles, mode % 4 >= 2); /* (G1 in f64's elements in modes 2, 3, 6, 7) */
    TK_TUNE(copy_flip_source_dims, 1); /* (a reversed first G1 dim stays reversed: counter 11) */
    TK_TUNE(copy_small_wide, mode % 4 == 1 ? 0 : mode % 4 == 2 ? 2 : 1); /* (one at a time in modes 1, 5) */
    for (int c = 0; c < tu_cases(20); c++) { tk_blocks_u8(&r, mode); tk_blocks_u16(&r, mode); }
  }
  TK_TUNE(copy_narrow_source_tiles, 0);
  TK_TUNE(copy_flip_source_dims, 4);
  TK_TUNE(copy_small_wide, 1);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[9] > 0); /* register blocks of 1- and 2-byte kinds */
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[12] > 0); /* their 16-byte blocks: rims, short sides */
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[55] > 0); /* ... two or four side by side */
  assert_true(tfe__st.kernel_stat[11] > 0);
#endif
}

/* Transposes whose destination columns are cut into tiles (a long destination dim) and start
 * anywhere in a line (an offset destination): k_copy_skew_'s lines joined across blocks (AVX-512)
 * or the tile buffer, with partial last rows and columns of blocks and a reversed source dim;
 * every element checked, nothing written outside the view. */
#define TK_SKEW(N, S, T, VAL, D1)                                                                \
  static void tk_skew_##N(tu_rng *r) {                                                          \
    int64_t d0 = tu_int(r, 1, 700 * 150 / D1), d1 = tu_int(r, 1, D1), b = tu_int(r, 1, 3), n = d0 * d1 * b; \
    int64_t sh = tu_int(r, 0, 3), dh = tu_int(r, 0, 70);                                        \
    T *src = malloc(sizeof(T) * (size_t)(n + 4)), *dst = malloc(sizeof(T) * (size_t)(n + 72)), none = VAL(-1); \
    for (int64_t i = 0; i < n + 4; i++) src[i] = VAL(i);                                       \
    for (int64_t i = 0; i < n + 72; i++) dst[i] = none;                                        \
    tfe_view_##S sv = {src + sh, {3, 0, {d0, d1, b}, {d1, 1, d0 * d1}}, false};                 \
    tfe_view_##S dv = {dst + dh, {3, 0, {d0, d1, b}, {1, d0, d0 * d1}}, false};                 \
    if (tu_int(r, 0, 3) == 0) { sv.lay.strides[1] = -1; sv.lay.offset = d1 - 1; }              \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                          \
    for (int64_t k = 0; k < b; k++)                                                            \
      for (int64_t j = 0; j < d1; j++)                                                         \
        for (int64_t i = 0; i < d0; i++) {                                                     \
          int64_t so = sv.lay.offset + i * sv.lay.strides[0] + j * sv.lay.strides[1] + k * sv.lay.strides[2]; \
          if (memcmp(&dv.data[i + j * d0 + k * d0 * d1], &sv.data[so], sizeof(T)))             \
            fail_msg(#S " skewed transpose [%lld %lld %lld] at (%lld %lld %lld)", (long long)d0, (long long)d1, \
                     (long long)b, (long long)i, (long long)j, (long long)k);                  \
        }                                                                                      \
    for (int64_t i = 0; i < dh; i++) if (memcmp(&dst[i], &none, sizeof(T))) fail_msg(#S " wrote before the view"); \
    for (int64_t i = dh + n; i < n + 72; i++) if (memcmp(&dst[i], &none, sizeof(T))) fail_msg(#S " wrote past the view"); \
    free(src); free(dst);                                                                      \
  }
TK_SKEW(u8, u8, tk_u8, TK_U8VAL, 150)
TK_SKEW(u16, u16, tk_u16, TK_U16VAL, 150)
TK_SKEW(wu8, u8, tk_u8, TK_U8VAL, 1100)
TK_SKEW(wu16, u16, tk_u16, TK_U16VAL, 1100)
TK_SKEW(wf32, f32, float, TK_VAL, 1100)
TK_SKEW(f32, f32, float, TK_VAL, 150)
TK_SKEW(f64, f64, double, TK_VAL, 150)
TK_SKEW(c128, c128, double complex, TK_CVAL, 150)
static void test_skew_lines(void **st) {
  (void)st;
  tu_rng r = {7};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 8; mode++) { /* threads 1, 2; skewed lines on, off; tiles of 64 and 512 bytes */
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(0);
    TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_buffered_tiles, 2);
    TK_TUNE(copy_skew_lines, mode / 2 % 2 == 0);
    TK_TUNE(copy_tile_pad, mode / 2 % 2 == 0);
    TK_TUNE(copy_tile_bytes, mode < 4 ? 64 : 512);
    TK_TUNE(copy_block_prefetch, mode % 4 < 2 ? 2 : 0);
    TK_TUNE(kernel_prefetch_strips, mode % 3 ? 2 : 0);
    TK_TUNE(copy_edge_stores, mode % 2 == 0 || mode == 7);
    TK_TUNE(copy_block_prefetch_spread, mode % 4 != 3);
    TK_TUNE(kernel_prefetch_l2, mode % 3 - 1); /* (prefetcht0 or t1: a hint, same results) */
    for (int c = 0; c < tu_cases(10); c++) { tk_skew_u8(&r); tk_skew_u16(&r); tk_skew_f32(&r); tk_skew_f64(&r); tk_skew_c128(&r); }
  }
  TK_TUNE(copy_block_prefetch, 2);
  TK_TUNE(kernel_prefetch_strips, 2);
  TK_TUNE(copy_edge_stores, 1);
  TK_TUNE(copy_block_prefetch_spread, 1);
  TK_TUNE(kernel_prefetch_l2, -1);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
#if TFE__KHAVE_TR8 && defined(__AVX512F__)
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[15] > 0);
#endif
  assert_true(tfe__st.kernel_stat[7] > 0); /* the buffered plans (skewed lines run in their tiles) */
}

/* Session 28: copy_skew_lines 2, the skewed form for 1-, 2- and 4-byte kinds (k_copy_skew12_,
 * counter 44 on AVX-512BW hosts, bytes with VBMI): the transposes of test_skew_lines with up to 1100
 * source columns (the form takes tiles of 8 blocks' columns and more) and source runs of 512 to
 * 2048 bytes a tile (copy_skew_run_bytes), so that tiles end inside columns, rims and thin edge
 * tiles (written unbuffered) occur; narrower ones that it declines; 1 and 2 threads, the reversed source dim in one case of
 * four; whole columns under the break-even skewed or buffered (copy_skew_short_cols, session 36,
 * counter 59); every element checked and the destination's margins untouched. */
static void test_skew12_lines(void **st) {
  (void)st;
  tu_rng r = {2829};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 8; mode++) {
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(0);
    TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_buffered_tiles, 2);
    TK_TUNE(copy_skew_lines, mode < 6 ? 2 + mode / 2 % 2 : 1); /* (3: bytes too) */
    TK_TUNE(copy_skew_run_bytes, 512 << (mode % 3));
    TK_TUNE(copy_skew_short_cols, mode % 4 < 2); /* (0: short whole columns skewed too) */
    for (int c = 0; c < tu_cases(16); c++) { tk_skew_wu8(&r); tk_skew_wu16(&r); tk_skew_wf32(&r); tk_skew_u8(&r); }
  }
  TK_TUNE(copy_skew_lines, 1);
  TK_TUNE(copy_skew_run_bytes, 4096);
  TK_TUNE(copy_skew_short_cols, 1);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
#if defined(__AVX512BW__)
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[44] > 0);
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[59] > 0); /* short whole columns kept buffered */
#endif
}

/* copy_buffered_tiles 3 (session 22): streamed transposes into 64-byte aligned destination
 * columns go through the tile buffer only when the columns fall in few lines of a 4 KiB page.
 * [d0, d1] from a row-major source into columns ld apart (ld >= d0: the gaps must stay
 * untouched), ld * es an odd multiple of 64 bytes (spread: written in place, counter 7 still)
 * or a multiple of 512 (unspread: buffered, counter 7 counts it); a reversed source dim in
 * one case of four; every element checked. Mode 1 (never for aligned columns) and 2 (always)
 * on the same copies must count the same way, and mode 4 (session 27) as mode 1 (these tiles'
 * G0 is one dim). */
#define TK_SPREAD(S, T, VAL)                                                                     \
  static void tk_spread_##S(tu_rng *r, int mode) {                                              \
    const int64_t L = 64 / (int64_t)sizeof(T); /* elements of a line */                          \
    bool spread = tu_int(r, 0, 1) == 1;                                                         \
    int64_t d0 = L * tu_int(r, 8, 24), d1 = tu_int(r, 64, 200);                                 \
    int64_t ld = spread ? d0 + L * (1 - (d0 / L) % 2) + 2 * L * tu_int(r, 0, 2)                 \
                        : (d0 + 8 * L - 1) / (8 * L) * (8 * L) + 8 * L * tu_int(r, 0, 1);        \
    int64_t n = d0 * d1, m = ld * d1;                                                           \
    T *src = malloc(sizeof(T) * (size_t)n), *dst = aligned_alloc(64, sizeof(T) * (size_t)m), none = VAL(-1); \
    for (int64_t i = 0; i < n; i++) src[i] = VAL(i);                                            \
    for (int64_t i = 0; i < m; i++) dst[i] = none;                                              \
    tfe_view_##S sv = {src, {2, 0, {d0, d1}, {d1, 1}}, false};                                  \
    tfe_view_##S dv = {dst, {2, 0, {d0, d1}, {1, ld}}, false};                                  \
    if (tu_int(r, 0, 3) == 0) { sv.lay.strides[1] = -1; sv.lay.offset = d1 - 1; }               \
    int64_t before = tfe__st.kernel_stat[7];                                                    \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                           \
    bool buffered = tfe__st.kernel_stat[7] > before;                                            \
    if (buffered != (mode == 2 || (mode == 3 && !spread)))                                      \
      fail_msg(#S " [%lld %lld] ld %lld mode %d: buffered %d", (long long)d0, (long long)d1,   \
               (long long)ld, mode, (int)buffered);                                             \
    for (int64_t j = 0; j < d1; j++)                                                            \
      for (int64_t i = 0; i < ld; i++) {                                                        \
        const T *want = i < d0 ? &src[sv.lay.offset + i * d1 + j * sv.lay.strides[1]] : &none; \
        if (memcmp(&dst[i + j * ld], want, sizeof(T)))                                          \
          fail_msg(#S " [%lld %lld] ld %lld mode %d at (%lld %lld)", (long long)d0, (long long)d1, \
                   (long long)ld, mode, (long long)i, (long long)j);                            \
      }                                                                                         \
    free(src); free(dst);                                                                       \
  }
TK_SPREAD(u8, tk_u8, TK_U8VAL)
TK_SPREAD(u16, tk_u16, TK_U16VAL)
TK_SPREAD(f32, float, TK_VAL)
TK_SPREAD(f64, double, TK_VAL)
TK_SPREAD(c128, double complex, TK_CVAL)
static void test_buffer_spread(void **st) {
  (void)st;
  tu_rng r = {22};
  tfe__st.kernel_stat_on = 1;
  for (int k = 0; k < 8; k++) { /* modes 3, 1, 2, 4; threads 1, 2 */
    int mode = k / 2 == 0 ? 3 : k / 2 == 1 ? 1 : k / 2 == 2 ? 2 : 4;
    tfe_set_num_threads(1 + k % 2);
    tk_paths(0);
    TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_buffered_tiles, mode);
    TK_TUNE(copy_buf_rim_pct, 0); /* (session 41 buffers 1- and 2-byte tiles with wide rims) */
    for (int c = 0; c < tu_cases(8); c++) {
      tk_spread_u8(&r, mode); tk_spread_u16(&r, mode); tk_spread_f32(&r, mode); tk_spread_f64(&r, mode);
      tk_spread_c128(&r, mode);
    }
  }
  TK_TUNE(copy_buf_rim_pct, 25);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
}

/* Session 29: copy_long_row_bytes, transposes written in place into streamed outputs re-planned
 * as tiles of 16 long source rows (k_copy_long_rows_, counter 45). A [d0, d1a, d1b] source
 * (d1a x d1b one contiguous run of up to 3000 elements, so that tiles end inside rows and rows
 * inside tiles) into 64-byte aligned columns of d0 = 16..88 elements (row rims past 16) ld
 * apart (margins must stay untouched); the source run reversed in one case of four (declined:
 * its rows run backwards) and the row bytes 1024..8192; 4-, 8- and 16-byte kinds, 1 and 2
 * threads; every element checked. Off (0), counter 45 stays put. */
#define TK_LONGROWS(S, T, VAL)                                                                    \
  static void tk_longrows_##S(tu_rng *r, bool on) {                                              \
    const int64_t L = 64 / (int64_t)sizeof(T);                                                   \
    int64_t d0 = 8 * tu_int(r, 2, 11), d1a = tu_int(r, 1, 60), d1b = tu_int(r, 1, 50);           \
    if (d0 % L) d0 += L - d0 % L;                                                                \
    int64_t d1 = d1a * d1b, ld = d0 + L * tu_int(r, 0, 2), n = d0 * d1, m = ld * d1;             \
    T *src = malloc(sizeof(T) * (size_t)n), *dst = aligned_alloc(64, sizeof(T) * (size_t)m), none = VAL(-1); \
    for (int64_t i = 0; i < n; i++) src[i] = VAL(i);                                             \
    for (int64_t i = 0; i < m; i++) dst[i] = none;                                               \
    tfe_view_##S sv = {src, {3, 0, {d0, d1a, d1b}, {d1, d1b, 1}}, false};                        \
    tfe_view_##S dv = {dst, {3, 0, {d0, d1a, d1b}, {1, ld * d1b, ld}}, false};                   \
    if (tu_int(r, 0, 3) == 0) { sv.lay.strides[2] = -1; sv.lay.offset = d1b - 1; }              \
    int64_t before = tfe__st.kernel_stat[45];                                                    \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                            \
    if (!on) assert_int_equal(tfe__st.kernel_stat[45], before);                                  \
    for (int64_t a = 0; a < d1a; a++)                                                            \
      for (int64_t b = 0; b < d1b; b++)                                                          \
        for (int64_t i = 0; i < ld; i++) {                                                       \
          const T *want = i < d0 ? &src[sv.lay.offset + i * d1 + a * d1b + b * sv.lay.strides[2]] : &none; \
          if (memcmp(&dst[i + (a * d1b + b) * ld], want, sizeof(T)))                             \
            fail_msg(#S " [%lld %lld %lld] ld %lld at (%lld %lld %lld)", (long long)d0, (long long)d1a, \
                     (long long)d1b, (long long)ld, (long long)i, (long long)a, (long long)b);   \
        }                                                                                        \
    free(src); free(dst);                                                                        \
  }
TK_LONGROWS(f32, float, TK_VAL)
TK_LONGROWS(f64, double, TK_VAL)
TK_LONGROWS(c128, double complex, TK_CVAL)
static void test_long_rows(void **st) {
  (void)st;
  tu_rng r = {2929};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 8; mode++) {
    const bool on = mode < 6;
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(0);
    TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_buffered_tiles, 1); /* (aligned columns written in place) */
    TK_TUNE(copy_long_row_bytes, on ? 1024 << (mode % 4) : 0);
    for (int c = 0; c < tu_cases(16); c++) { tk_longrows_f32(&r, on); tk_longrows_f64(&r, on); tk_longrows_c128(&r, on); }
  }
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
  if (tfe__krb(8)) assert_true(tfe__st.kernel_stat[45] > 0);
}

/* Session 30: copy_block_segments. Batches of transposes [A, B0, B1] of 8-byte kinds from a
 * source whose B0 x B1 is one contiguous run (A outermost) into a destination where A is the
 * contiguous run and B1 does not continue B0 (a gap of 1-9 elements): G1 = B0 x B1, a table
 * whose first dim B0 is a segment of columns ldA apart (or G1 = B0 alone, a step, when B0 fills
 * the tile). A = 8..40 rows (16-row pairs, an 8-row rest, row rims), B0 = 8..48 columns, in one
 * case of four not a multiple of 8 (declined), ldA = A + 1 (unaligned: normal stores) or A
 * rounded up to a line (aligned: streamed, kernel_stream_min_bytes 0); modes 0, 1 and 2; 1 and
 * 2 threads; every element checked, the padding untouched. Counter 46 stays put with 0. */
#define TK_SEGS(S, T, VAL)                                                                        \
  static void tk_segs_##S(tu_rng *r, int mode) {                                                 \
    const int64_t L = 64 / (int64_t)sizeof(T);                                                   \
    int64_t A = tu_int(r, 8, 40), B0 = 8 * tu_int(r, 1, 6), B1 = tu_int(r, 1, 6);               \
    if (tu_int(r, 0, 3) == 0) B0 += tu_int(r, 1, 7);                                             \
    int64_t ldA = tu_int(r, 0, 2) == 0 ? A + 1 : (A + L - 1) / L * L + L * tu_int(r, 0, 1);     \
    int64_t ldB = ldA * B0 + tu_int(r, 1, 9), n = A * B0 * B1, m = (ldB * B1 + L - 1) / L * L;  \
    T *src = malloc(sizeof(T) * (size_t)n), *dst = aligned_alloc(64, sizeof(T) * (size_t)m), none = VAL(-1); \
    for (int64_t i = 0; i < n; i++) src[i] = VAL(i);                                             \
    for (int64_t i = 0; i < m; i++) dst[i] = none;                                               \
    tfe_view_##S sv = {src, {3, 0, {A, B0, B1}, {B0 * B1, 1, B0}}, false};                       \
    tfe_view_##S dv = {dst, {3, 0, {A, B0, B1}, {1, ldA, ldB}}, false};                          \
    int64_t before = tfe__st.kernel_stat[46];                                                    \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                            \
    if (!mode) assert_int_equal(tfe__st.kernel_stat[46], before);                                \
    for (int64_t e = 0; e < m; e++) {                                                            \
      int64_t b1 = e / ldB, b0 = e % ldB / ldA, i = e % ldB % ldA;                               \
      bool in = b1 < B1 && b0 < B0 && i < A;                                                     \
      const T *want = in ? &src[i * B0 * B1 + b0 + b1 * B0] : &none;                             \
      if (memcmp(&dst[e], want, sizeof(T)))                                                      \
        fail_msg(#S " A %lld B0 %lld B1 %lld ldA %lld mode %d at %lld", (long long)A, (long long)B0, \
                 (long long)B1, (long long)ldA, mode, (long long)e);                             \
    }                                                                                            \
    free(src); free(dst);                                                                        \
  }
TK_SEGS(f64, double, TK_VAL)
TK_SEGS(c64, float complex, TK_CVAL)
static void test_block_segments(void **st) {
  (void)st;
  tu_rng r = {3030};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int round = 0; round < 12; round++) {
    const int mode = round % 3;
    tfe_set_num_threads(1 + round / 3 % 2);
    tk_paths(0);
    TK_TUNE(kernel_stream_min_bytes, round < 6 ? 0 : (int64_t)16 << 20);
    TK_TUNE(copy_buffered_tiles, 0); /* (unaligned columns written in place too) */
    TK_TUNE(copy_block_segments, mode);
    TK_TUNE(copy_tile_bytes, round % 2 ? 1024 : 512); /* (G1 of 128-256 columns: tables of segments) */
    for (int c = 0; c < tu_cases(24); c++) { tk_segs_f64(&r, mode); tk_segs_c64(&r, mode); }
  }
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
  if (tfe__krb(8)) assert_true(tfe__st.kernel_stat[46] > 0);
}

/* Session 27: copy_interleave_rows. Batches of transposes [R, C, B] from a [C, R, B] source, a
 * 1- or 2-byte kind with R under a 16-byte block's rows: the destination's columns of R
 * elements follow one another (records interleaved from R rows). Counter 42 stays put when
 * off; every element checked against direct indexing, the element past the end untouched. */
#define TK_INTERLEAVE(S, T, VAL)                                                                  \
  static void tk_interleave_##S(tu_rng *r, bool on) {                                           \
    const int64_t nb = 16 / (int64_t)sizeof(T);                                                 \
    int64_t R = tu_int(r, 2, (int)nb - 1), C = tu_int(r, 1, 300), B = tu_int(r, 1, 5);         \
    int64_t n = R * C * B;                                                                      \
    T *src = malloc(sizeof(T) * (size_t)n), *dst = malloc(sizeof(T) * (size_t)(n + 1)), none = VAL(-1); \
    for (int64_t i = 0; i < n; i++) src[i] = VAL(i);                                            \
    dst[n] = none;                                                                              \
    tfe_view_##S sv = {src, {3, 0, {R, C, B}, {C, 1, R * C}}, false};                           \
    tfe_view_##S dv = {dst, {3, 0, {R, C, B}, {1, R, R * C}}, false};                           \
    int64_t before = tfe__st.kernel_stat[42];                                                   \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                           \
    if (!on) assert_int_equal(tfe__st.kernel_stat[42], before);                                 \
    for (int64_t b = 0; b < B; b++)                                                             \
      for (int64_t j = 0; j < C; j++)                                                           \
        for (int64_t i = 0; i < R; i++)                                                         \
          if (memcmp(&dst[i + j * R + b * R * C], &src[j + i * C + b * R * C], sizeof(T)))     \
            fail_msg(#S " [%lld %lld %lld] at (%lld %lld %lld)", (long long)R, (long long)C,   \
                     (long long)B, (long long)i, (long long)j, (long long)b);                   \
    if (memcmp(&dst[n], &none, sizeof(T))) fail_msg(#S " [%lld %lld %lld]: wrote past the end", \
                                                    (long long)R, (long long)C, (long long)B); \
    free(src); free(dst);                                                                       \
  }
TK_INTERLEAVE(u8, tk_u8, TK_U8VAL)
TK_INTERLEAVE(u16, tk_u16, TK_U16VAL)
/* Session 32: copy_short_rows. The same batches with the destination's columns g = 1-3 elements
 * apart (padding between them): each column's R elements stored by two overlapping stores.
 * Counter 51 stays put when off; every element checked, every padding cell and the element past
 * the end untouched (a 16-byte store would write the padding). */
#define TK_SHORTROWS(S, T, VAL)                                                                   \
  static void tk_shortrows_##S(tu_rng *r, bool on) {                                            \
    const int64_t nb = 16 / (int64_t)sizeof(T);                                                 \
    int64_t R = tu_int(r, 2, (int)nb - 1), C = tu_int(r, nb, 300), B = tu_int(r, 1, 5), g = tu_int(r, 1, 3); \
    int64_t n = R * C * B, ld = R + g, m = ld * C * B;                                          \
    T *src = malloc(sizeof(T) * (size_t)n), *dst = malloc(sizeof(T) * (size_t)(m + 1)), none = VAL(-1); \
    for (int64_t i = 0; i < n; i++) src[i] = VAL(i);                                            \
    for (int64_t i = 0; i <= m; i++) dst[i] = none;                                             \
    tfe_view_##S sv = {src, {3, 0, {R, C, B}, {C, 1, R * C}}, false};                           \
    tfe_view_##S dv = {dst, {3, 0, {R, C, B}, {1, ld, ld * C}}, false};                         \
    int64_t before = tfe__st.kernel_stat[51];                                                   \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                           \
    if (!on) assert_int_equal(tfe__st.kernel_stat[51], before);                                 \
    for (int64_t b = 0; b < B; b++)                                                             \
      for (int64_t j = 0; j < C; j++)                                                           \
        for (int64_t i = 0; i < ld; i++) {                                                      \
          const T *want = i < R ? &src[j + i * C + b * R * C] : &none;                          \
          if (memcmp(&dst[i + j * ld + b * ld * C], want, sizeof(T)))                            \
            fail_msg(#S " short rows [%lld %lld %lld] gap %lld at (%lld %lld %lld)", (long long)R, \
                     (long long)C, (long long)B, (long long)g, (long long)i, (long long)j, (long long)b); \
        }                                                                                       \
    if (memcmp(&dst[m], &none, sizeof(T))) fail_msg(#S " short rows: wrote past the end");       \
    free(src); free(dst);                                                                       \
  }
TK_SHORTROWS(u8, tk_u8, TK_U8VAL)
TK_SHORTROWS(u16, tk_u16, TK_U16VAL)
static void test_interleave_rows(void **st) {
  (void)st;
  tu_rng r = {2727};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int k = 0; k < 8; k++) { /* on, off; threads 1, 2; streamed outputs or not */
    bool on = k % 2 == 0;
    tk_paths(0);
    tfe_set_num_threads(1 + (k / 2) % 2);
    TK_TUNE(kernel_small_elems, 0);
    TK_TUNE(kernel_parallel_min, 64);
    TK_TUNE(kernel_tiny_dim, 2); /* (rows of 2-7 transposed, not gathered) */
    TK_TUNE(copy_tile_bytes, 64 << (k % 3));
    if (k >= 4) TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_interleave_rows, on ? 1 : 0);
    TK_TUNE(copy_short_rows, on ? 1 : 0);
    for (int c = 0; c < tu_cases(40); c++) {
      tk_interleave_u8(&r, on); tk_interleave_u16(&r, on);
      tk_shortrows_u8(&r, on); tk_shortrows_u16(&r, on);
    }
  }
  TK_TUNE(copy_interleave_rows, 1);
  TK_TUNE(copy_short_rows, 1);
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[42] > 0);
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[51] > 0);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
}

/* Session 28: copy_deinterleave_rows. Records of C < 16 bytes (C elements, 2 <= C < 16 / es)
 * spread over C destination rows: [R1, R2, C, B] from a source whose records lie at row stride
 * C + gap (gap 0: records adjacent) with the R2 groups a further 0-5 elements apart (a table
 * G0 when not 0); the source's last record ends the allocation, so a 16-byte read past it
 * would show under the address sanitizer. Counter 43 stays put when off; every element checked,
 * the element past the destination's end untouched. */
#define TK_DEINTERLEAVE(S, T, VAL)                                                                \
  static void tk_deinterleave_##S(tu_rng *r, bool on) {                                         \
    const int64_t nb = 16 / (int64_t)sizeof(T);                                                 \
    int64_t C = tu_int(r, 2, (int)nb - 1), R1 = tu_int(r, 1, 300), R2 = tu_int(r, 1, 4);       \
    int64_t B = tu_int(r, 1, 3), gap = tu_int(r, 0, 2) == 0 ? tu_int(r, 1, 9) : 0;              \
    int64_t hop = tu_int(r, 0, 1) ? tu_int(r, 1, 5) : 0, rs = C + gap, gs = R1 * rs + hop;      \
    int64_t n = R1 * R2 * C * B, ns = (B - 1) * R2 * gs + (R2 - 1) * gs + (R1 - 1) * rs + C;    \
    T *src = malloc(sizeof(T) * (size_t)ns), *dst = malloc(sizeof(T) * (size_t)(n + 1)), none = VAL(-1); \
    for (int64_t i = 0; i < ns; i++) src[i] = VAL(i);                                           \
    dst[n] = none;                                                                              \
    tfe_view_##S sv = {src, {4, 0, {R1, R2, C, B}, {rs, gs, 1, R2 * gs}}, false};               \
    tfe_view_##S dv = {dst, {4, 0, {R1, R2, C, B}, {1, R1, R1 * R2, R1 * R2 * C}}, false};     \
    int64_t before = tfe__st.kernel_stat[43];                                                   \
    assert_int_equal(tfe_copy_##S(&dv, &sv), TFE_OK);                                           \
    if (!on) assert_int_equal(tfe__st.kernel_stat[43], before);                                 \
    int64_t idx[4] = {0}, dims[4] = {R1, R2, C, B};                                             \
    do {                                                                                        \
      int64_t so = idx[0] * rs + idx[1] * gs + idx[2] + idx[3] * R2 * gs;                       \
      int64_t dof = idx[0] + idx[1] * R1 + idx[2] * R1 * R2 + idx[3] * R1 * R2 * C;             \
      if (memcmp(&dst[dof], &src[so], sizeof(T)))                                               \
        fail_msg(#S " [%lld %lld %lld %lld] gap %lld hop %lld at %lld", (long long)R1,          \
                 (long long)R2, (long long)C, (long long)B, (long long)gap, (long long)hop, (long long)dof); \
    } while (tk_next(4, dims, idx));                                                            \
    if (memcmp(&dst[n], &none, sizeof(T))) fail_msg(#S ": wrote past the end");                 \
    free(src); free(dst);                                                                       \
  }
TK_DEINTERLEAVE(u8, tk_u8, TK_U8VAL)
TK_DEINTERLEAVE(u16, tk_u16, TK_U16VAL)
static void test_deinterleave_rows(void **st) {
  (void)st;
  tu_rng r = {2828};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int k = 0; k < 12; k++) { /* off, normal stores, streamed; threads 1, 2; streamed outputs or not */
    int mode = k % 3;
    tk_paths(0);
    tfe_set_num_threads(1 + (k / 3) % 2);
    TK_TUNE(kernel_small_elems, 0);
    TK_TUNE(kernel_parallel_min, 64);
    TK_TUNE(kernel_tiny_dim, 2); /* (records of 2-7 transposed, not gathered) */
    TK_TUNE(copy_tile_bytes, 64 << (k % 4));
    if (k >= 6) TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_deinterleave_rows, mode);
    for (int c = 0; c < tu_cases(40); c++) { tk_deinterleave_u8(&r, mode != 0); tk_deinterleave_u16(&r, mode != 0); }
  }
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[43] > 0);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
}

/* tfe_copy_f64 of sv into dv and tfe_contiguous_c128 of zsv (the same layout over zs), every
 * element of both checked against the sources (test_far_runs, test_table_input_runs). */
static void tk_copy_check_both(const char *what, int c, int R, const int64_t *dims, const tfe_view_f64 *dv,
                               const tfe_view_f64 *sv, const double *src, const tfe_view_c128 *zsv,
                               const double complex *zs) {
  assert_int_equal(tfe_copy_f64(dv, sv), TFE_OK);
  tfe_tensor_c128 zt = {0};
  assert_int_equal(tfe_contiguous_c128(zsv, TFE_COLMAJOR, &zt), TFE_OK);
  int64_t idx[TFE_MAX_RANK] = {0};
  do {
    int64_t so = sv->lay.offset, dof = 0;
    for (int k = 0; k < R; k++) { so += idx[k] * sv->lay.strides[k]; dof += idx[k] * dv->lay.strides[k]; }
    if (dv->data[dof] != src[so]) fail_msg("f64 %s case %d at %lld", what, c, (long long)dof);
    if (zt.v.data[dof] != zs[so]) fail_msg("c128 %s case %d at %lld", what, c, (long long)dof);
  } while (tk_next(R, dims, idx));
  tfe_tensor_release_c128(&zt);
}

/* Common runs of 320 bytes (40 doubles) whose continuation is the destination's outermost dim,
 * 1.1 MiB of output away (copy_run_split_far_bytes): the copy is tiled as a transpose of runs
 * (counter 10); without the rule the plain blocks would take it. [40, 3, 3500] -> [40, 3500, 3],
 * a source dim reversed or not, f64 and c128 (runs of 640 bytes), 1 and 2 threads, into an
 * existing and a fresh destination; the rule off (and copy_run_tile_bytes, which takes such
 * runs otherwise) must leave counter 10 at zero. */
static void test_far_runs(void **st) {
  (void)st;
  const int64_t d0 = 40, d1 = 3, d2 = 3500, n = d0 * d1 * d2;
  double *src = malloc(sizeof(double) * (size_t)n), *dst = malloc(sizeof(double) * (size_t)(n + 1));
  double complex *zs = malloc(sizeof(double complex) * (size_t)n), *zd = malloc(sizeof(double complex) * (size_t)n);
  for (int64_t i = 0; i < n; i++) { src[i] = (double)i; zs[i] = (double)i - 0.5 * (double)i * I; }
  tfe__st.kernel_stat_on = 1;
  for (int c = 0; c < 8; c++) {
    int rev = c % 4; /* 0: none, 1: the run, 2: its continuation, 3: the outer dim reversed */
    bool off = c >= 4 && c % 2; /* the rule off (c 5, 7) */
    tfe_tuning t = tfe_tuning_get(), t0 = t;
    if (off) t.copy_run_split_far_bytes = t.copy_run_tile_bytes = 0; /* (session 20's rule would */
    assert_int_equal(tfe_tuning_set(&t), TFE_OK);                    /* tile these runs too) */
    tfe_set_num_threads(1 + c % 2);
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    const int64_t dims[3] = {d0, d2, d1}, sst[3] = {1, d0 * d1, d0};
    tfe_view_f64 sv = {src, {3, 0, {0}, {0}}, false}, dv = {dst + 1, {3, 0, {d0, d2, d1}, {1, d0, d0 * d2}}, false};
    tfe_view_c128 zsv = {zs, {3, 0, {0}, {0}}, false};
    for (int k = 0; k < 3; k++) {
      bool r = rev == k + 1;
      sv.lay.dims[k] = zsv.lay.dims[k] = dims[k];
      sv.lay.strides[k] = zsv.lay.strides[k] = r ? -sst[k] : sst[k];
      if (r) sv.lay.offset = zsv.lay.offset = sv.lay.offset + (dims[k] - 1) * sst[k];
    }
    dst[0] = -7;
    tk_copy_check_both("far runs", c, 3, dims, &dv, &sv, src, &zsv, zs);
    if (dst[0] != -7) fail_msg("wrote before the view");
    if (off) assert_int_equal(tfe__st.kernel_stat[10], 0);
    else assert_true(tfe__st.kernel_stat[10] >= 2); /* (both copies) */
    assert_int_equal(tfe_tuning_set(&t0), TFE_OK);
  }
  tfe__st.kernel_stat_on = 0;
  tfe_set_num_threads(0);
  free(src); free(dst); free(zs); free(zd);
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
  /* no memory for a loop plan (session 23: plans on the heap): a planned transpose runs plain
   * loops instead, same result, nothing leaked */
  enum { R = 40, C = 50 };
  double *x = malloc(sizeof(double) * R * C), *y = malloc(sizeof(double) * R * C);
  for (int i = 0; i < R * C; i++) { x[i] = i; y[i] = -1; }
  tfe_view_f64 xv = {x, {2, 0, {R, C}, {C, 1}}, false}, yv = {y, {2, 0, {R, C}, {1, R}}, false};
  tu_fail_after(0);
  assert_int_equal(tfe_copy_f64(&yv, &xv), TFE_OK);
  assert_int_equal(tu_live_allocs, 0);
  tu_alloc_restore();
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) assert_true(y[i + j * R] == x[i * C + j]);
  free(x); free(y);
}


static void test_op_errors(void **st) {
  (void)st;
  double a[64] = {0}, b[64] = {0};
  tfe_view_f64 d = {a, {2, 0, {2, 3}, {1, 2}}, false};
  tfe_view_f64 x4 = {b, {1, 0, {4}, {1}}, false};
  TU_EXPECT_ERR(tfe_map_f64(&d, &x4, TFE_UN_NEG, 0), TFE_ERR_SHAPE, "cannot broadcast first input dim 0 (size 4) to size 3");
  tfe_view_f64 x3 = {b, {3, 0, {1, 2, 3}, {1, 1, 2}}, false};
  TU_EXPECT_ERR(tfe_zip_f64(&d, &d, &x3, TFE_BIN_ADD), TFE_ERR_SHAPE, "second input of rank 3 to rank 2");
  TU_EXPECT_ERR(tfe_map_f64(&d, &d, (tfe_unop)99, 0), TFE_ERR_INVALID, "unknown unary op 99");
  TU_EXPECT_ERR(tfe_zip_f64(&d, &d, &d, (tfe_binop)-1), TFE_ERR_INVALID, "unknown binary op");
  int32_t ia[8] = {0};
  tfe_view_i32 iv = {ia, {1, 0, {8}, {1}}, false};
  TU_EXPECT_ERR(tfe_map_i32(&iv, &iv, TFE_UN_SQRT, 0), TFE_ERR_UNSUPPORTED, "'sqrt'");
  tfe_view_c128 cv = {(double _Complex *)b, {1, 0, {4}, {1}}, false};
  TU_EXPECT_ERR(tfe_zip_c128(&cv, &cv, &cv, TFE_BIN_MAX), TFE_ERR_UNSUPPORTED, "'max'");
  tfe_view_maxplus_f64 mv = {(tfe_maxplus_f64 *)b, {1, 0, {4}, {1}}, false};
  TU_EXPECT_ERR(tfe_zip_maxplus_f64(&mv, &mv, &mv, TFE_BIN_SUB), TFE_ERR_UNSUPPORTED, "'sub'");
  /* destination overlapping a broadcast input: a[0..5] = a[0] + ... would read written data */
  tfe_view_f64 bc = {a, {1, 0, {3}, {0}}, false};
  TU_EXPECT_ERR(tfe_zip_f64(&d, &d, &bc, TFE_BIN_ADD), TFE_ERR_OVERLAP, "overlaps the second input");
  TU_EXPECT_ERR(tfe_fill_f64(&bc, 1.0), TFE_ERR_OVERLAP, "destination elements overlap");
  TU_EXPECT_ERR(tfe_map_fn_f64(&d, &d, NULL, NULL), TFE_ERR_NULL, "fn");
  TU_EXPECT_ERR(tfe_axpby_f64(&d, 1.0, NULL, 1.0), TFE_ERR_NULL, "first input");
  for (int i = 0; i < 6; i++) a[i] = i;
  assert_int_equal(tfe_zip_f64(&d, &d, &d, TFE_BIN_MUL), TFE_OK); /* in place is fine */
  assert_true(a[5] == 25.0);
}

static void test_reduce_errors(void **st) {
  (void)st;
  double a[64] = {0}, o[64] = {0};
  tfe_view_f64 s = {a, {3, 0, {2, 3, 4}, {1, 2, 6}}, false};
  tfe_view_f64 out = {o, {1, 0, {3}, {1}}, false};
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &s, TFE_RED_SUM, 2, (int[]){0, 3}, 1, 0), TFE_ERR_BOUNDS, "axis 3");
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &s, TFE_RED_SUM, 2, (int[]){2, 2}, 1, 0), TFE_ERR_INVALID, "twice");
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &s, TFE_RED_SUM, 2, (int[]){0, 1}, 1, 0), TFE_ERR_SHAPE, "output dim 0 is 3, expected 4");
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &s, TFE_RED_SUM, 1, (int[]){0}, 1, 0), TFE_ERR_SHAPE, "neither 2");
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &s, (tfe_redop)42, 1, (int[]){0}, 1, 0), TFE_ERR_INVALID, "unknown reduction");
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &s, TFE_RED_SUM, 1, NULL, 1, 0), TFE_ERR_NULL, "axes");
  TU_EXPECT_ERR(tfe_reduce_f64(NULL, &s, TFE_RED_SUM, 1, (int[]){0}, 1, 0), TFE_ERR_NULL, "out");
  tfe_view_f64 e = {a, {2, 0, {3, 0}, {1, 3}}, false}; /* 3 x 0 */
  TU_EXPECT_ERR(tfe_reduce_f64(&out, &e, TFE_RED_MAX, 1, (int[]){1}, 1, 0), TFE_ERR_INVALID, "zero elements");
  o[0] = 5;
  assert_int_equal(tfe_reduce_f64(&out, &e, TFE_RED_SUM, 1, (int[]){1}, 1, 0), TFE_OK);
  assert_true(o[0] == 0.0); /* empty sum */
  tfe_view_c128 cs = {(double _Complex *)a, {1, 0, {4}, {1}}, false};
  double _Complex r = 0;
  TU_EXPECT_ERR(tfe_reduce_all_c128(&cs, TFE_RED_MAX, &r), TFE_ERR_UNSUPPORTED, "'max'");
  tfe_view_f64 bo = {o, {1, 0, {4}, {0}}, false};
  tfe_view_f64 s1 = {a, {2, 0, {4, 3}, {1, 4}}, false};
  TU_EXPECT_ERR(tfe_reduce_f64(&bo, &s1, TFE_RED_SUM, 1, (int[]){1}, 1, 0), TFE_ERR_OVERLAP, "destination");
  /* out may alias the source: it is written after every read */
  for (int i = 0; i < 12; i++) a[i] = i;
  tfe_view_f64 alias = {a, {1, 0, {4}, {1}}, false};
  assert_int_equal(tfe_reduce_f64(&alias, &s1, TFE_RED_SUM, 1, (int[]){1}, 1, 0), TFE_OK);
  assert_true(a[0] == 0 + 4 + 8 && a[3] == 3 + 7 + 11);
  /* allocation failure of the accumulator: status, message, out untouched, no leak */
  for (int i = 0; i < 12; i++) a[i] = i;
  o[0] = o[1] = o[2] = o[3] = -1;
  tfe_view_f64 o4 = {o, {1, 0, {4}, {1}}, false};
  tu_fail_after(0);
  TU_EXPECT_ERR(tfe_reduce_f64(&o4, &s1, TFE_RED_SUM, 1, (int[]){1}, 1, 0), TFE_ERR_ALLOC, "allocation");
  tu_alloc_restore();
  assert_int_equal(tu_live_allocs, 0);
  assert_true(o[0] == -1 && o[3] == -1);
  /* each later allocation failing in turn (the loop plan's, session 23; a full reduction's
   * partials, then its plan): TFE_ERR_ALLOC, out untouched, no leak, or success once the
   * countdown passes every allocation */
  for (int full = 0; full < 2; full++)
    for (int k = 1; k < 6; k++) {
      o[0] = o[1] = o[2] = o[3] = -1;
      tfe_view_f64 o1 = {o, {0, 0, {0}, {0}}, false};
      tu_fail_after(full ? k - 1 : k);
      tfe_status e = full ? tfe_reduce_f64(&o1, &s1, TFE_RED_SUM, 2, (int[]){0, 1}, 1, 0)
                          : tfe_reduce_f64(&o4, &s1, TFE_RED_SUM, 1, (int[]){1}, 1, 0);
      tu_alloc_restore();
      assert_int_equal(tu_live_allocs, 0);
      if (e == TFE_OK) { assert_true(full ? o[0] == 66 : o[0] == 12 && o[3] == 21); continue; }
      assert_int_equal(e, TFE_ERR_ALLOC);
      assert_non_null(strstr(tfe_last_error(), "allocation"));
      assert_true(o[0] == -1 && o[3] == -1);
    }
}

static void test_dyn(void **st) {
  (void)st;
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0};
  double _Complex c[6] = {0};
  tfe_dyn da = {TFE_DT_F64, a, {2, 0, {2, 3}, {1, 2}}, false, NULL};
  tfe_dyn db = {TFE_DT_F64, b, {2, 0, {2, 3}, {3, 1}}, false, NULL};
  tfe_dyn dc = {TFE_DT_C128, c, {2, 0, {2, 3}, {1, 2}}, false, NULL};
  TU_EXPECT_ERR(tfe_copy_dyn(&dc, &da), TFE_ERR_DTYPE, "destination is c128 but source is f64");
  TU_EXPECT_ERR(tfe_zip_dyn(&db, &da, &dc, TFE_BIN_ADD), TFE_ERR_DTYPE, "second input is c128");
  TU_EXPECT_ERR(tfe_map_dyn(&db, NULL, TFE_UN_NEG, NULL), TFE_ERR_NULL, "source");
  assert_int_equal(tfe_copy_dyn(&db, &da), TFE_OK);
  assert_true(b[1] == 3 && b[3] == 2); /* row-major destination */
  double p = 2;
  assert_int_equal(tfe_map_dyn(&db, &db, TFE_UN_POW, &p), TFE_OK);
  assert_true(b[1] == 9);
  assert_int_equal(tfe_zip_dyn(&da, &da, &da, TFE_BIN_ADD), TFE_OK);
  assert_true(a[5] == 12);
}

/* Complex functions on branch cuts: the sign of a zero imaginary part picks the side, and a
 * lazily conjugated source flips it before the function sees the value. */
static void test_branch_cuts(void **st) {
  (void)st;
  double _Complex in[2], out[2];
  double parts[4] = {-1.0, 0.0, -1.0, -0.0}; /* no CMPLX: clang's glibc header lacks it */
  memcpy(in, parts, sizeof in);
  tfe_view_c128 s = {in, {1, 0, {2}, {1}}, false}, d = {out, {1, 0, {2}, {1}}, false};
  assert_int_equal(tfe_map(&d, &s, TFE_UN_SQRT, 0), TFE_OK);
  assert_true(cimag(out[0]) == 1.0 && cimag(out[1]) == -1.0);
  s.conj = true;
  assert_int_equal(tfe_map(&d, &s, TFE_UN_SQRT, 0), TFE_OK);
  assert_true(cimag(out[0]) == -1.0 && cimag(out[1]) == 1.0);
  assert_int_equal(tfe_map(&d, &s, TFE_UN_LOG, 0), TFE_OK);
  assert_true(fabs(cimag(out[0]) + 3.141592653589793) < 1e-15 && fabs(cimag(out[1]) - 3.141592653589793) < 1e-15);
  s.conj = false;
  assert_int_equal(tfe_map(&d, &s, TFE_UN_ABS, 0), TFE_OK);
  assert_true(out[0] == 1.0 && cimag(out[0]) == 0.0); /* abs stays complex, imag 0 */
  float fin[3] = {-4, 0, 4}, fout[3];
  tfe_view_f32 fs = {fin, {1, 0, {3}, {1}}, false}, fd = {fout, {1, 0, {3}, {1}}, false};
  assert_int_equal(tfe_map(&fd, &fs, TFE_UN_SQRT, 0), TFE_OK);
  assert_true(isnan(fout[0]) && fout[1] == 0 && fout[2] == 2);
  assert_int_equal(tfe_map(&fd, &fs, TFE_UN_RECIP, 0), TFE_OK);
  assert_true(isinf(fout[1]) && fout[2] == 0.25f);
}

/* ---- a user kind (integers mod 7) stamped through the templates ---- */
typedef struct tk_mod7 { int v; } tk_mod7;
static inline tk_mod7 tfe_sr_zero_mod7(void) { tk_mod7 r = {0}; return r; }
static inline tk_mod7 tfe_sr_one_mod7(void) { tk_mod7 r = {1}; return r; }
static inline tk_mod7 tfe_sr_add_mod7(tk_mod7 a, tk_mod7 b) { tk_mod7 r = {(a.v + b.v) % 7}; return r; }
static inline tk_mod7 tfe_sr_mul_mod7(tk_mod7 a, tk_mod7 b) { tk_mod7 r = {(a.v * b.v) % 7}; return r; }
static inline tk_mod7 tfe_sr_conj_mod7(tk_mod7 a) { return a; }
static inline bool tfe_sr_eq_mod7(tk_mod7 a, tk_mod7 b) { return a.v == b.v; }
static inline tk_mod7 tfe_sr_from_f64_mod7(double x) { tk_mod7 r = {((int)x % 7 + 7) % 7}; return r; }
static inline double tfe_sr_dist_mod7(tk_mod7 a, tk_mod7 b) { return a.v == b.v ? 0 : 1; }
#define TFE_S mod7
#define TFE_T tk_mod7
#define TFE_R int
#define TFE_ALG TFE_ALG_CUSTOM
#define TFE_CPLX 0
#define TFE_FLOAT 0
#define TFE_DT TFE_DT_CUSTOM
#include <tenferro/tensor/tensor_tpl.h> /* declarations */
#include <tenferro/kernel/kernel_tpl.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 1
#include <tenferro/tensor/tensor_tpl.h> /* bodies */
#include <tenferro/kernel/kernel_tpl.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#undef TFE_S
#undef TFE_T
#undef TFE_R
#undef TFE_ALG
#undef TFE_CPLX
#undef TFE_FLOAT
#undef TFE_DT

static void test_user_kind(void **st) {
  (void)st;
  enum { M = 37, N = 45 };
  tk_mod7 *a = malloc(sizeof(tk_mod7) * M * N), *b = malloc(sizeof(tk_mod7) * M * N);
  for (int i = 0; i < M * N; i++) a[i].v = (i * 5) % 7;
  tfe_view_mod7 src = {a, {2, 0, {M, N}, {N, 1}}, false}, dst = {b, {2, 0, {M, N}, {1, M}}, false};
  for (int pass = 0; pass < 2; pass++) { /* planned and tiny paths */
    TK_TUNE(kernel_small_elems, pass ? 0 : 1 << 20);
    assert_int_equal(tfe_copy_mod7(&dst, &src), TFE_OK);
    for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) assert_int_equal(b[i + j * M].v, a[i * N + j].v);
    assert_int_equal(tfe_zip_mod7(&dst, &dst, &src, TFE_BIN_MUL), TFE_OK);
    assert_int_equal(b[3 + 4 * M].v, (a[3 * N + 4].v * a[3 * N + 4].v) % 7);
    tk_mod7 sum = {0}, want = {0};
    for (int i = 0; i < M * N; i++) want.v = (want.v + b[i].v) % 7;
    assert_int_equal(tfe_reduce_all_mod7(&dst, TFE_RED_SUM, &sum), TFE_OK);
    assert_int_equal(sum.v, want.v);
  }
  TK_TUNE(kernel_small_elems, 1024);
  assert_true(tfe_sr_dist_mod7(tfe_sr_from_f64_mod7(-1), tfe_sr_from_f64_mod7(6)) == 0);
  TU_EXPECT_ERR(tfe_map_mod7(&dst, &src, TFE_UN_NEG, tfe_sr_one_mod7()), TFE_ERR_UNSUPPORTED, "'neg'");
  TU_EXPECT_ERR(tfe_zip_mod7(&dst, &dst, &src, TFE_BIN_MAX), TFE_ERR_UNSUPPORTED, "'max'");
  free(a);
  free(b);
}

/* The kernel's tuning fields: documented defaults, range checks (a refused set changes
 * nothing), and a set that the kernels read. */
/* Table tiles whose input group stops at the end of the input's run (kernel_table_input_runs):
 * [25,10,12,3,2,7,2] perm [1,4,5,0,3,2,6] (a small form of the sweep's f64 case at 6-7x
 * memcpy): the source run of 25 is followed, in the source's order, by a dim of 12 whose
 * strides are large in both operands; with the rule G1 is the run alone (counter 14), without
 * it 25 x 3. f64 and c128, a source dim reversed or not, 1 and 2 threads, tfe_copy into a
 * shifted destination and tfe_contiguous; every element checked. */
static void test_table_input_runs(void **st) {
  (void)st;
  const int R = 7;
  const int64_t sd[7] = {25, 10, 12, 3, 2, 7, 2}, perm[7] = {1, 4, 5, 0, 3, 2, 6};
  int64_t n = 1, sst[7], dims[7];
  for (int k = 0; k < R; k++) { sst[k] = n; n *= sd[k]; }
  for (int k = 0; k < R; k++) dims[k] = sd[perm[k]];
  double *src = malloc(sizeof(double) * (size_t)n), *dst = malloc(sizeof(double) * (size_t)(n + 1));
  double complex *zs = malloc(sizeof(double complex) * (size_t)n);
  for (int64_t i = 0; i < n; i++) { src[i] = (double)i; zs[i] = (double)i - 0.25 * (double)i * I; }
  tfe__st.kernel_stat_on = 1;
  for (int c = 0; c < 8; c++) {
    bool off = c >= 4, rev = c % 4 >= 2; /* rev: the source's run (dim 0) reversed */
    tfe_tuning t0 = tfe_tuning_get();
    TK_TUNE(kernel_table_input_runs, off ? 0 : 1);
    tfe_set_num_threads(1 + c % 2);
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    tfe_view_f64 sv = {src, {R, 0, {0}, {0}}, false}, dv = {dst + 1, {R, 0, {0}, {0}}, false};
    tfe_view_c128 zsv = {zs, {R, 0, {0}, {0}}, false};
    int64_t ds = 1;
    for (int k = 0; k < R; k++) {
      bool r = rev && perm[k] == 0;
      sv.lay.dims[k] = zsv.lay.dims[k] = dv.lay.dims[k] = dims[k];
      sv.lay.strides[k] = zsv.lay.strides[k] = r ? -sst[perm[k]] : sst[perm[k]];
      if (r) sv.lay.offset = zsv.lay.offset = (dims[k] - 1) * sst[perm[k]];
      dv.lay.strides[k] = ds;
      ds *= dims[k];
    }
    dst[0] = -7;
    tk_copy_check_both("table runs", c, R, dims, &dv, &sv, src, &zsv, zs);
    if (dst[0] != -7) fail_msg("wrote before the view");
    assert_true(tfe__st.kernel_stat[8] >= 2); /* table tiles, both copies */
    if (off) assert_int_equal(tfe__st.kernel_stat[14], 0);
    else assert_true(tfe__st.kernel_stat[14] >= 2);
    assert_int_equal(tfe_tuning_set(&t0), TFE_OK);
  }
  tfe__st.kernel_stat_on = 0;
  tfe_set_num_threads(0);
  free(src); free(dst); free(zs);
}
/* Session 27: a streamed copy whose table runs are whole lines (tn_light's runs of 16 f64 from
 * four places) writes them as streamed lines (copy_stream_line_runs, counter 41), aligned or
 * not, on 1 and 2 threads; and a large contiguous copy streams (no counter: checked by value). */
static void test_stream_line_runs(void **st) {
  (void)st;
  enum { R = 12 };
  int64_t dims[R], perm[R] = {0, 1, 2, 3, 10, 4, 11, 5, 6, 7, 8, 9}, sst[R], n = 1;
  for (int k = 0; k < R; k++) { sst[k] = n; n *= 2; }
  for (int k = 0; k < R; k++) dims[k] = 2;
  double *src = malloc(sizeof(double) * (size_t)n), *dbuf = aligned_alloc(64, sizeof(double) * (size_t)(n + 8));
  double complex *zs = malloc(sizeof(double complex) * (size_t)n);
  for (int64_t i = 0; i < n; i++) { src[i] = (double)i; zs[i] = (double)i - 0.5 * (double)i * I; }
  tfe__st.kernel_stat_on = 1;
  for (int c = 0; c < 8; c++) {
    bool off = c >= 4, shift = c % 4 >= 2; /* shift: the destination one element off its line */
    tfe_tuning t0 = tfe_tuning_get();
    TK_TUNE(kernel_stream_min_bytes, 0);
    TK_TUNE(copy_stream_line_runs, off ? 0 : 1);
    tfe_set_num_threads(1 + c % 2);
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    double *dst = dbuf + (shift ? 1 : 0);
    tfe_view_f64 sv = {src, {R, 0, {0}, {0}}, false}, dv = {dst, {R, 0, {0}, {0}}, false};
    tfe_view_c128 zsv = {zs, {R, 0, {0}, {0}}, false};
    int64_t ds = 1;
    for (int k = 0; k < R; k++) {
      sv.lay.dims[k] = zsv.lay.dims[k] = dv.lay.dims[k] = dims[k];
      sv.lay.strides[k] = zsv.lay.strides[k] = sst[perm[k]];
      dv.lay.strides[k] = ds;
      ds *= dims[k];
    }
    dst[n] = -7;
    tk_copy_check_both("stream line runs", c, R, dims, &dv, &sv, src, &zsv, zs);
    if (dst[n] != -7) fail_msg("wrote past the view");
    if (off) assert_int_equal(tfe__st.kernel_stat[41], 0);
    else if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[41] >= 1);
    /* a contiguous copy of the same bytes, streamed in one piece per thread */
    tfe_view_f64 cv = {src, {1, 0, {n}, {1}}, false}, cd = {dst, {1, 0, {n}, {1}}, false};
    assert_int_equal(tfe_copy_f64(&cd, &cv), TFE_OK);
    for (int64_t i = 0; i < n; i++) if (dst[i] != src[i]) fail_msg("contiguous copy: element %lld", (long long)i);
    if (dst[n] != -7) fail_msg("contiguous copy wrote past the view");
    assert_int_equal(tfe_tuning_set(&t0), TFE_OK);
  }
  tfe__st.kernel_stat_on = 0;
  tfe_set_num_threads(0);
  free(src); free(dbuf); free(zs);
}
/* Session 18's paths, on random permutations of every scalar size (u8, u16, f32, f64, c128):
 * (a) runs common to both sides copied by vector loads and stores (copy_short_runs: a first
 * dim of 2-40 kept first in the destination; session 19: 1- and 2-byte runs under 8 elements,
 * counter 19), (b) 1- and 2-byte table tiles whose source run
 * spans two small leading dims that the destination keeps apart (copy_table_runs, counter
 * 16), (c) tile odometers that follow the source's short pieces (copy_source_chain_bytes,
 * counter 17), (d) copy gather tiles whose destination run cuts the source's unit dim, left
 * without columns (form 3: a tiny source dim first in the destination, the unit dim next;
 * copy_gather_run_tiles, counter 20), (e) copies led by a tiny dim whose tiles read source runs
 * of 64 bytes or more kept as transposes (form 4; copy_tiny_source_runs, counter 21). Ranks 3-6, dims of 1 and 2-6 among larger ones, reversed dims, source and
 * destination shifted; tfe_copy and tfe_contiguous, every element checked and nothing
 * written outside the view, with the five on and off, 1 and 2 threads, large and tiny tiles. */
/* Stamps M(suffix, type, value maker) for the five kinds the copy tests draw (u8, u16, f32,
 * f64, c128). */
#define TK_FIVE_KINDS(M) \
  M(u8, tk_u8, TK_U8VAL) M(u16, tk_u16, TK_U16VAL) M(f32, float, TK_VAL) M(f64, double, TK_VAL) M(c128, double complex, TK_CVAL)
/* One permuted copy of n elements into a destination with guard elements on both sides: the copy
 * checked against the naive reference (TK_PERM_COPY_CHECK), then no write outside the view. */
#define TK_GUARDED_COPY(S, T, VAL, PRE, NAME, FORM)                                              \
    int64_t sh = tu_int(r, 0, 3), dh = tu_int(r, 0, 3);                                        \
    T *src = malloc(sizeof(T) * (size_t)(n + 4)), *dst = malloc(sizeof(T) * (size_t)(n + 8)), none = VAL(-1); \
    for (int64_t i = 0; i < n + 4; i++) src[i] = VAL(i);                                       \
    for (int64_t i = 0; i < n + 8; i++) dst[i] = none;                                         \
    TK_PERM_COPY_CHECK(S, T, PRE, NAME, FORM)                                                  \
    for (int64_t i = 0; i < dh; i++) if (memcmp(&dst[i], &none, sizeof(T))) fail_msg(#S " wrote before the view"); \
    for (int64_t i = dh + n; i < n + 8; i++) if (memcmp(&dst[i], &none, sizeof(T))) fail_msg(#S " wrote past the view"); \
    tfe_tensor_release_##S(&t);                                                                 \
    free(src); free(dst);
#define TK_S18(S, T, VAL)                                                                        \
  static void tk_s18_##S(tu_rng *r, bool fixed) {                                              \
    int rank = fixed ? 5 : (int)tu_int(r, 3, 6), form = fixed ? 1 : (int)tu_int(r, 0, 4);      \
    int64_t dims[6], n = 1, perm[6], st[6], s = 1;                                              \
    for (int k = 0; k < rank; k++)                                                              \
      dims[k] = tu_int(r, 0, 5) == 0 ? 1 : tu_int(r, 0, 1) ? tu_int(r, 2, 6) : tu_int(r, 8, 48); \
    if (form == 0) dims[0] = tu_int(r, 0, 1) ? tu_int(r, 2, 7) : tu_int(r, 5, 40); /* a common run */ \
    if (form == 1) { dims[0] = tu_int(r, 2, 5); dims[1] = tu_int(r, 4, 8); dims[2] = tu_int(r, 20, 70); } \
    if (form == 3) { dims[0] = tu_int(r, 130, 400); dims[1] = tu_int(r, 2, 7); }               \
    if (form == 4) { dims[0] = tu_int(r, 16, 64); dims[1] = tu_int(r, 3, 20); dims[2] = tu_int(r, 2, 7); } \
    if (fixed) { dims[0] = 4; dims[1] = 8; dims[2] = 60; dims[3] = 9; dims[4] = 7; } /* (G1 4 x 8 x 8 of 9) */ \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = rank - 1; n > 40000; k = k > 0 ? k - 1 : rank - 1)                             \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    for (int k = rank - 1; k > 0; k--) {                                                        \
      int j = (int)tu_int(r, 0, k);                                                             \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    if (form == 0) /* dim 0 first in the destination too */                                    \
      for (int k = 0; k < rank; k++) if (perm[k] == 0) { perm[k] = perm[0]; perm[0] = 0; }      \
    if (form == 1) { /* the source's two small dims apart in the destination, its third first */ \
      int64_t rest[6], m = 0;                                                                   \
      for (int k = 0; k < rank; k++) if (perm[k] > 2) rest[m++] = perm[k];                      \
      perm[0] = 2; perm[1] = 0; perm[rank - 1] = 1;                                             \
      for (int k = 2; k < rank - 1; k++) perm[k] = rest[k - 2];                                 \
    }                                                                                           \
    if (form == 4) { /* the destination led by the source's dims 2 (tiny) and 1, then its unit dim */ \
      int64_t rest[6], m = 0;                                                                   \
      for (int k = 0; k < rank; k++) if (perm[k] > 2) rest[m++] = perm[k];                      \
      perm[0] = 2; perm[1] = 1; perm[2] = 0;                                                    \
      for (int k = 3; k < rank; k++) perm[k] = rest[k - 3];                                     \
    }                                                                                           \
    for (int k = 0; form == 3 && k < rank; k++) /* the source's tiny dim 1 first in the */     \
      if (perm[k] == 1) { perm[k] = perm[0]; perm[0] = 1; } /* destination, its unit dim 0 next */ \
    for (int k = 1; form == 3 && k < rank; k++)                                                 \
      if (perm[k] == 0) { perm[k] = perm[1]; perm[1] = 0; }                                     \
    TK_GUARDED_COPY(S, T, VAL, !fixed && tu_int(r, 0, 4) == 0, "s18 form", form)               \
  }
TK_FIVE_KINDS(TK_S18)
static void test_s18_paths(void **st) {
  (void)st;
  tu_rng r = {1818};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int mode = 0; mode < 12; mode++) { /* threads 1, 2; the three on, off; tiles default, small, tiny and streamed */
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(mode / 4 == 2 ? 2 : mode / 4 == 1 ? 1 : 0);
    bool on = mode / 2 % 2 == 0;
    TK_TUNE(copy_narrow_records, 0); /* (records.h would take forms 3 and 4's tiny-led copies) */
    TK_TUNE(copy_short_runs, on);
    TK_TUNE(copy_table_runs, on);
    TK_TUNE(copy_source_chain_bytes, on ? 2048 : 0);
    TK_TUNE(copy_gather_run_tiles, on);
    TK_TUNE(copy_tiny_source_runs, on);
    TK_TUNE(copy_unit_run_bytes, mode % 4 == 0 ? 64 : 0); /* (units, step 4c, would take most of these runs) */
    tk_s18_u8(&r, true); /* (one fixed case per kind that takes the multi-dim runs, quick runs included) */
    tk_s18_u16(&r, true);
    for (int c = 0; c < tu_cases(25); c++) {
      tk_s18_u8(&r, false); tk_s18_u16(&r, false); tk_s18_f32(&r, false); tk_s18_f64(&r, false); tk_s18_c128(&r, false);
    }
  }
  TK_TUNE(copy_short_runs, 1);
  TK_TUNE(copy_table_runs, 1);
  TK_TUNE(copy_source_chain_bytes, 2048);
  TK_TUNE(copy_gather_run_tiles, -1);
  TK_TUNE(copy_tiny_source_runs, 1);
  TK_TUNE(copy_unit_run_bytes, 255);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[16] > 0); /* multi-dim source runs in 16-byte blocks */
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[18] > 0); /* runs by vector copies */
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[19] > 0); /* 1- and 2-byte runs under 8 */
#endif
  assert_true(tfe__st.kernel_stat[17] > 0); /* odometers along the source's pieces */
  assert_true(tfe__st.kernel_stat[20] > 0); /* gather plans without columns (form 3) */
  assert_true(tfe__st.kernel_stat[21] > 0); /* tiny-led copies kept as transposes (form 4) */
}
/* Session 20's paths, on random permutations of every scalar size (u8, u16, f32, f64, c128):
 * (a) a common leading run of 256 B to 1 KiB that a plain block reads alone, the source
 * continuing it along a later destination dim, tiled as a transpose of runs (form 0;
 * copy_run_tile_bytes, counter 26), (b) a dim that continues both the destination's run (a
 * line or more: the source's far dim 2 first) and the source's short innermost run (dim 0,
 * under a line, placed later in the destination) blocked with the source (form 1;
 * copy_shared_run_dim, counter 24), (c) 4-byte transpose tiles of 8-15 rows in 8x8 register
 * blocks (form 2: a destination led by a source dim of 8-15; copy_half_blocks, counter 25),
 * (d) column rims of 1-3 columns of strided transposes as scalar loops (form 3: a batch of
 * transposes of 9-27 x 16-60; copy_rim_scalar_cols, counter 27), (e) copies of 8- and 4-byte
 * kinds led by a destination run of 4-7 before the source's unit dim, planned as transposes in
 * 4x4 register blocks rather than gather tiles (form 4; copy_quarter_blocks, counter 28; c128
 * too since session 36, its own 4x4 blocks: counter 61).
 * Ranks 3-5, other dims of 1 and 2-12, reversed dims, source and destination shifted;
 * tfe_copy and tfe_contiguous, every element checked and nothing written outside the view,
 * with the three on and off, 1 and 2 threads, large and tiny tiles. */
#define TK_S20(S, T, VAL)                                                                        \
  static void tk_s20_##S(tu_rng *r, int form) {                                                \
    const int64_t es = (int64_t)sizeof(T), line = 64 / es;                                      \
    int rank = (int)tu_int(r, 3, 5);                                                            \
    int64_t dims[5], n = 1, perm[5], st[5], s = 1;                                              \
    for (int k = 0; k < rank; k++) dims[k] = tu_int(r, 0, 5) == 0 ? 1 : tu_int(r, 2, 12);      \
    if (form == 0) dims[0] = tu_int(r, 256 / es + 1, 1024 / es);                                \
    if (form == 1) { dims[0] = tu_int(r, 2, line - 1); dims[1] = tu_int(r, 3, 20); dims[2] = tu_int(r, line, 3 * line); } \
    if (form == 2) { dims[0] = tu_int(r, 8, 40); dims[1] = tu_int(r, 8, 15); }                 \
    if (form == 3) { dims[0] = 8 * tu_int(r, 1, 3) + tu_int(r, 1, 3); dims[1] = tu_int(r, 16, 60); } \
    if (form == 4) { dims[0] = tu_int(r, 4, 40); dims[1] = tu_int(r, 4, 7); }                 \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    int64_t lo[5] = {dims[0], form == 1 ? 3 : form >= 2 ? dims[1] : 2, form == 1 ? line : 2, 2, 2}; \
    for (int k = rank - 1, g = 0; n > 40000 && g < 100; k = k > 0 ? k - 1 : rank - 1, g++) /* (the */ \
      if (dims[k] / 2 >= lo[k]) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; } /* forms' dims kept) */ \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    for (int k = rank - 1; k > 0; k--) {                                                        \
      int j = (int)tu_int(r, 0, k);                                                             \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    if (form == 0) /* dim 0 first in the destination too, dim 1 later than another */         \
      for (int k = 0; k < rank; k++) if (perm[k] == 0) { perm[k] = perm[0]; perm[0] = 0; }      \
    if (form == 1) { /* destination: 2, 1, then the others, 0 among them */                    \
      int64_t rest[5], m = 0;                                                                   \
      for (int k = 0; k < rank; k++) if (perm[k] == 0 || perm[k] > 2) rest[m++] = perm[k];      \
      perm[0] = 2; perm[1] = 1;                                                                 \
      for (int k = 2; k < rank; k++) perm[k] = rest[k - 2];                                     \
    }                                                                                           \
    if (form == 2) /* destination led by the source's dim 1 (8-15) */                          \
      for (int k = 0; k < rank; k++) if (perm[k] == 1) { perm[k] = perm[0]; perm[0] = 1; }      \
    if (form >= 3) { /* a batch of transposes: 1, 0, then the others */                         \
      int64_t rest[5], m = 0;                                                                   \
      for (int k = 0; k < rank; k++) if (perm[k] > 1) rest[m++] = perm[k];                      \
      perm[0] = 1; perm[1] = 0;                                                                 \
      for (int k = 2; k < rank; k++) perm[k] = rest[k - 2];                                     \
    }                                                                                           \
    TK_GUARDED_COPY(S, T, VAL, tu_int(r, 0, 4) == 0 && (form != 0 || a != 0), "s20 form", form) \
  }
TK_S20(u8, tk_u8, TK_U8VAL)
TK_S20(u16, tk_u16, TK_U16VAL)
TK_S20(f32, float, TK_VAL)
TK_S20(f64, double, TK_VAL)
TK_S20(c128, double complex, TK_CVAL)
static void test_s20_paths(void **st) {
  (void)st;
  tu_rng r = {2020};
  int64_t seen[5] = {0, 0, 0, 0, 0}, seen16 = 0;
  tfe__st.kernel_stat_on = 1;
  for (int mode = 0; mode < 12; mode++) { /* threads 1, 2; the three on, off; tiles default, small, tiny and streamed */
    tfe_set_num_threads(1 + mode % 2);
    tk_paths(mode / 4 == 2 ? 2 : mode / 4 == 1 ? 1 : 0);
    bool on = mode / 2 % 2 == 0;
    TK_TUNE(copy_run_tile_bytes, on ? 4096 : 0);
    TK_TUNE(copy_shared_run_dim, on);
    TK_TUNE(copy_half_blocks, on);
    TK_TUNE(copy_rim_scalar_cols, on ? 3 : 0);
    TK_TUNE(copy_quarter_blocks, on ? 2 : 0);
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    for (int c = 0; c < tu_cases(12); c++)
      for (int form = 0; form < 5; form++) {
        tk_s20_u8(&r, form); tk_s20_u16(&r, form); tk_s20_f32(&r, form); tk_s20_f64(&r, form); tk_s20_c128(&r, form);
      }
    if (!on) { /* the paths stay off */
      assert_int_equal(tfe__st.kernel_stat[24], 0);
      assert_int_equal(tfe__st.kernel_stat[25], 0);
      assert_int_equal(tfe__st.kernel_stat[26], 0);
      assert_int_equal(tfe__st.kernel_stat[27], 0);
      assert_int_equal(tfe__st.kernel_stat[28], 0);
      assert_int_equal(tfe__st.kernel_stat[61], 0);
    }
    for (int k = 0; k < 5; k++) seen[k] += tfe__st.kernel_stat[24 + k];
    seen16 += tfe__st.kernel_stat[61];
  }
  TK_TUNE(copy_run_tile_bytes, tfe_tuning_default().copy_run_tile_bytes);
  TK_TUNE(copy_shared_run_dim, 2);
  TK_TUNE(copy_half_blocks, 1);
  TK_TUNE(copy_rim_scalar_cols, 3);
  TK_TUNE(copy_quarter_blocks, 2);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
  assert_true(seen[0] > 0); /* shared dims blocked with the source (form 1) */
  assert_true(seen16 > 0);  /* c128 runs of 4-7 as transposes (form 4, copy_quarter_blocks 2) */
#if TFE__KHAVE_TR8 && defined(__AVX__)
  if (tfe__ksimd()) assert_true(seen[1] > 0); /* 8-15-row f32 tiles in 8x8 blocks (form 2) */
  if (tfe__ksimd()) assert_true(seen[3] > 0); /* column rims of 1-3 as scalar loops (form 3) */
  if (tfe__ksimd()) assert_true(seen[4] > 0); /* 4-7-row f64 and f32 tiles in 4x4 blocks (form 4) */
#endif
  assert_true(seen[2] > 0); /* long common runs tiled as transposes (form 0) */
}

/* Session 31: copy_shared_keep and copy_next_prefetch 2 (session 32: copy_gather_blocks and
 * copy_short_rows, counters 49 and 51, u8). Random permutations of many small dims
 * (2s, 3s, a 4 now and then; ranks 7-10, at most 3^9 elements), where the destination's run
 * and the source's short innermost run share a dim (the 3^15 case of bench_kernels: kept plans,
 * counter 47) or the plan takes gather tiles, whose next tile's source is asked for (counter
 * 48); u16, f32, f64 and c128 (4-byte kinds kept only where moved as 8-byte units), each rule on
 * and off, reversed dims, 1 and 2 threads, default, small and tiny tiles; tfe_copy and
 * tfe_contiguous, every element checked and nothing written outside the view. Counters 47 and
 * 48 stay put when their rule is off, and are seen when on. */
#define TK_SMALLDIMS(S, T, VAL)                                                                  \
  static void tk_smalldims_##S(tu_rng *r, bool keep, bool pf) {                                 \
    int rank = (int)tu_int(r, 7, 10);                                                           \
    int64_t dims[10], n = 1, perm[10], st[10], s = 1;                                           \
    for (int k = 0; k < rank; k++) {                                                            \
      dims[k] = tu_int(r, 0, 6) == 0 ? 4 : tu_int(r, 2, 3);                                     \
      if (n * dims[k] > 19683) dims[k] = 1;                                                     \
      n *= dims[k];                                                                             \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    for (int k = rank - 1; k > 0; k--) {                                                        \
      int j = (int)tu_int(r, 0, k);                                                             \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    int64_t before47 = tfe__st.kernel_stat[47], before48 = tfe__st.kernel_stat[48];             \
    int64_t before49 = tfe__st.kernel_stat[49], before51 = tfe__st.kernel_stat[51];             \
    TK_GUARDED_COPY(S, T, VAL, tu_int(r, 0, 5) == 0, "small dims", (int)keep + 2 * (int)pf)     \
    if (!keep) assert_int_equal(tfe__st.kernel_stat[47], before47);                             \
    if (!pf || sizeof(T) > 8) assert_int_equal(tfe__st.kernel_stat[48], before48);              \
    if (!tfe__st.tune.copy_gather_blocks || sizeof(T) > 2)                                      \
      assert_int_equal(tfe__st.kernel_stat[49], before49);                                      \
    if (!tfe__st.tune.copy_short_rows || sizeof(T) > 2)                                         \
      assert_int_equal(tfe__st.kernel_stat[51], before51);                                      \
  }
TK_SMALLDIMS(u8, tk_u8, TK_U8VAL)
TK_SMALLDIMS(u16, tk_u16, TK_U16VAL)
TK_SMALLDIMS(f32, float, TK_VAL)
TK_SMALLDIMS(f64, double, TK_VAL)
TK_SMALLDIMS(c128, double complex, TK_CVAL)
static void test_small_dim_perms(void **st) {
  (void)st;
  tu_rng r = {3131};
  tfe__st.kernel_stat_on = 1;
  memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
  for (int round = 0; round < 12; round++) {
    const bool keep = round % 2 == 0, pf = round / 2 % 2 == 0;
    tfe_set_num_threads(1 + round / 4 % 2);
    tk_paths(round / 4);
    TK_TUNE(copy_shared_keep, keep);
    TK_TUNE(copy_next_prefetch, pf ? 2 : 1);
    TK_TUNE(copy_gather_blocks, round % 3 != 2);
    TK_TUNE(copy_short_rows, round % 4 != 3);
    TK_TUNE(copy_both_run_tile_bytes, pf ? 0 : 32768); /* (session 48: they take most gathers) */
    for (int c = 0; c < tu_cases(30); c++) {
      tk_smalldims_u8(&r, keep, pf); tk_smalldims_u16(&r, keep, pf); tk_smalldims_f32(&r, keep, pf);
      tk_smalldims_f64(&r, keep, pf); tk_smalldims_c128(&r, keep, pf);
    }
  }
  TK_TUNE(copy_shared_keep, 1);
  TK_TUNE(copy_next_prefetch, 2);
  TK_TUNE(copy_gather_blocks, 1);
  TK_TUNE(copy_short_rows, 1);
  TK_TUNE(copy_both_run_tile_bytes, 32768);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
  assert_true(tfe__st.kernel_stat[47] > 0);
  assert_true(tfe__st.kernel_stat[48] > 0);
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[49] > 0);
#endif
}
/* Session 21: copies whose leading run is common to both operands and short (r elements, 2-128,
 * r * es at most copy_unit_run_bytes, here 512 so that every kind and unit class takes it), copied as units of
 * r * es bytes over a plan of the other dims (units.h, counter 29). Every scalar size (u8,
 * u16, f32, f64, c128), ranks 3-6, other dims of 1, 2-12 and 13-40, the run first in both
 * operands and the others permuted at random, reversed dims (the run too: then the path does
 * not apply), source and destination shifted; tfe_copy and tfe_contiguous, every element
 * checked and nothing written outside the view, with the path on and off, 1 and 2 threads,
 * default and tiny unit tiles (clipped at every dim). Session 32: units of 4 bytes of u8 and u16
 * run as i32 copies (copy_unit_kinds, counter 50) except with the tiny tiles. */
#define TK_S21(S, T, VAL)                                                                        \
  static void tk_s21_##S(tu_rng *r) {                                                          \
    const int64_t es = (int64_t)sizeof(T), rmax = 512 / es < 128 ? 512 / es : 128;                 \
    int rank = (int)tu_int(r, 3, 6);                                                            \
    int64_t dims[6], n = 1, perm[6], st[6], s = 1;                                              \
    for (int k = 0; k < rank; k++)                                                              \
      dims[k] = tu_int(r, 0, 5) == 0 ? 1 : tu_int(r, 0, 1) ? tu_int(r, 2, 12) : tu_int(r, 13, 40); \
    dims[0] = tu_int(r, 2, rmax);                                                               \
    const int64_t ub = tu_int(r, 0, 1) ? 4 : (int64_t)4 << tu_int(r, 1, 2); /* (units of 4: i32) */ \
    if (tu_int(r, 0, 1) == 0 && ub / es >= 2) dims[0] = ub / es;                                \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = rank - 1; n > 40000; k = k > 1 ? k - 1 : rank - 1)                             \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    for (int k = rank - 1; k > 1; k--) { /* (dim 0 stays first) */                              \
      int j = (int)tu_int(r, 1, k);                                                             \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    TK_GUARDED_COPY(S, T, VAL, tu_int(r, 0, 3) == 0 && (a != 0 || tu_int(r, 0, 3) == 0), "s21 run", (int)dims[0]) \
  }
TK_FIVE_KINDS(TK_S21)
static void test_s21_units(void **st) {
  (void)st;
  tu_rng r = {2121};
  int64_t seen = 0, seen50 = 0;
  tfe__st.kernel_stat_on = 1;
  for (int mode = 0; mode < 12; mode++) { /* threads 1, 2; on, off; (a) default tiles, cached through */
    tfe_set_num_threads(1 + mode % 2);   /* buffers, (b) streamed through buffers, tiny tiles, (c) streamed in place */
    const bool on = mode / 2 % 2 == 0;
    const int form = mode / 4;
    tk_paths(form ? 2 : 0);
    TK_TUNE(copy_unit_run_bytes, on ? 512 : 0);
    TK_TUNE(copy_unit_tile_bytes, form == 1 ? 24 : 512);
    TK_TUNE(copy_unit_stream, form == 0 ? 2 : form == 1 ? 1 : 0);
    TK_TUNE(copy_unit_prefetch, form == 1 ? 2 : 1); /* (table rows prefetched too) */
    TK_TUNE(copy_unit_kinds, form != 1 ? 2 : 0); /* (session 32: units of 4 bytes as i32) */
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    for (int c = 0; c < tu_cases(30); c++) {
      tk_s21_u8(&r); tk_s21_u16(&r); tk_s21_f32(&r); tk_s21_f64(&r); tk_s21_c128(&r);
    }
    if (!on) assert_int_equal(tfe__st.kernel_stat[29], 0); /* the path stays off */
    else assert_true(tfe__st.kernel_stat[29] > 0);
    if (!on || form == 1) assert_int_equal(tfe__st.kernel_stat[50], 0);
    seen50 += tfe__st.kernel_stat[50];
    if (form == 2 || !on) assert_int_equal(tfe__st.kernel_stat[30], 0); /* buffers only where asked for */
#if TFE__KHAVE_TR8
    else if (tfe__ksimd()) assert_true(tfe__st.kernel_stat[30] > 0);
#endif
    seen += tfe__st.kernel_stat[29];
  }
  TK_TUNE(copy_unit_run_bytes, 255);
  TK_TUNE(copy_unit_tile_bytes, 512);
  TK_TUNE(copy_unit_stream, 1);
  TK_TUNE(copy_unit_prefetch, 1);
  TK_TUNE(copy_unit_kinds, 2);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
  assert_true(seen > 0);
  assert_true(seen50 > 0); /* (u8 and u16 units of 4 bytes as i32: aligned ones, 1 in 16 and 4) */
}
/* Session 23: shapes for three plan rules, drawn by form (source dims [u, v, a, b, rest...]
 * in the source's order, the destination led by two of them):
 * 0 (copy_wide_tables, counter 31): [u 16-300, a 3-40, b 20-300, ...], the destination mostly
 *   led by a then b, which the input reads with no unit stride: 1- and 2-byte transposes whose
 *   G0 is a table that may take up to 1 KiB of column (256 entries before);
 * 1 (copy_flip_source_dims, counters 32 and 37): the input's run u 8-90 (a third of them reversed:
 *   value 2 flips G1's first dim, session 24) continued by v 2-9 that it reads
 *   reversed, the destination led by a 2-9, b 20-200: G1 is u x v, v walked the other way in both
 *   operands (u16 [75,7r,7,8,65,...] of the random sweep);
 * 2 (copy_table_run_cut, counter 33): a run u 2-7 continued by v 4-20, the destination led by a
 *   9-40 read reversed and b 40-230: table tiles whose G0 may cut b although u alone is under 8
 *   (u8 [6,18,33r,227,...]);
 * 3 (copy_table_run_cut 2, counter 34; session 24): a run u 2-7 continued by v 4-20, w 3-12 and
 *   c 5-30, the destination led by a 20-60 read far, then c, w, v, u: G0 may cut c, as the run
 *   goes on through w and v, which G0 leaves to G1 (u16 [4,87,30r,13,10,40]).
 * Returns the rank; n gets the element count (shrunk to at most 150000, 60000, 80000, 120000). */
static int tk_s23_shape(tu_rng *r, int form, int64_t *dims, int64_t *perm, int64_t *st, int64_t *n) {
  if (form == 3) {
    static const int64_t lo3[5] = {2, 4, 3, 5, 20}, hi3[5] = {7, 20, 12, 30, 60};
    int rank = (int)tu_int(r, 5, 6);
    int64_t s = 1;
    *n = 1;
    for (int k = 0; k < rank; k++) { dims[k] = k < 5 ? tu_int(r, lo3[k], hi3[k]) : tu_int(r, 2, 4); *n *= dims[k]; }
    for (int k = 1; *n > 120000; k = k % (rank - 1) + 1)
      if (dims[k] > 2) { *n = *n / dims[k] * (dims[k] / 2); dims[k] /= 2; }
    for (int k = 0; k < rank; k++) { perm[k] = k < 5 ? 4 - k : k; st[k] = s; s *= dims[k]; }
    return rank;
  }
  int rank = form == 0 ? (int)tu_int(r, 3, 5) : (int)tu_int(r, 4, 6);
  static const int64_t lo[3][4] = {{16, 3, 20, 1}, {8, 2, 2, 20}, {2, 4, 9, 40}};
  static const int64_t hi[3][4] = {{300, 40, 300, 6}, {90, 9, 9, 200}, {7, 20, 40, 230}};
  static const int64_t cap[3] = {150000, 60000, 80000};
  *n = 1;
  for (int k = 0; k < rank; k++) {
    dims[k] = k < 4 ? tu_int(r, lo[form][k], hi[form][k]) : tu_int(r, form == 2 ? 2 : 1, form == 0 ? 6 : form == 1 ? 5 : 8);
    *n *= dims[k];
  }
  for (int k = form ? 3 : 0; *n > cap[form]; k = (k + 1) % rank) /* (form 2 keeps u) */
    if (dims[k] > 2 && !(form == 2 && k == 0)) { *n = *n / dims[k] * (dims[k] / 2); dims[k] /= 2; }
  int64_t s = 1, rest[6], m = 0;
  for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }
  for (int k = rank - 1; k > 0; k--) {
    int j = (int)tu_int(r, 0, k);
    int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;
  }
  const int64_t l0 = form ? 2 : 1, l1 = form ? 3 : 2; /* the destination's leading pair */
  if (form || tu_int(r, 0, 3)) {
    for (int k = 0; k < rank; k++) if (perm[k] != l0 && perm[k] != l1) rest[m++] = perm[k];
    perm[0] = l0; perm[1] = l1;
    for (int k = 2; k < rank; k++) perm[k] = rest[k - 2];
  }
  return rank;
}
/* One case of form `form` for kind S: tfe_copy and tfe_contiguous, every element checked and
 * nothing written outside the view; the reversed dims as the form wants, others at random. */
#define TK_S23(S, T, VAL)                                                                        \
  static void tk_s23_##S(tu_rng *r, int form) {                                                \
    int64_t dims[6], perm[6], st[6], n;                                                         \
    int rank = tk_s23_shape(r, form, dims, perm, st, &n);                                       \
    TK_GUARDED_COPY(S, T, VAL, (form == 1 && (a == 1 || (a == 0 && tu_int(r, 0, 2) == 0))) || (form == 2 && a == 2) || (form == 3 && a == 2 && tu_int(r, 0, 1)) || tu_int(r, 0, 7) == 0, \
                    "s23 form", form)                                                           \
  }
TK_FIVE_KINDS(TK_S23)
/* The four rules and the next-tile prefetch (copy_next_prefetch) on and off, 1 and 2 threads,
 * in place and streamed through tile buffers; each rule's counter must move when on (form 0 on
 * u8 and u16, forms 1-3 on every size) and stay at zero when off. */
static void test_s23_wide_tables(void **st) {
  (void)st;
  tu_rng r = {2323};
  int64_t seen[5] = {0, 0, 0, 0, 0};
  const int cases = tu_cases(24) < 6 ? 6 : tu_cases(24); /* (quick runs too: each rule met) */
  tfe__st.kernel_stat_on = 1;
  for (int mode = 0; mode < 8; mode++) { /* threads 1, 2; on, off; in place, streamed through buffers */
    tfe_set_num_threads(1 + mode % 2);
    const bool on = mode / 2 % 2 == 0, streamed = mode >= 4;
    tk_paths(0);
    TK_TUNE(copy_wide_tables, on);
    TK_TUNE(copy_flip_source_dims, on ? 2 : 0);
    TK_TUNE(copy_next_prefetch, on);
    TK_TUNE(copy_table_run_cut, on ? 2 : 0);
    TK_TUNE(copy_run_tile_col_bytes, on ? 3072 : 0); /* (session 41's run tiles: G0 tables over 256 too) */
    if (streamed) { TK_TUNE(kernel_stream_min_bytes, 0); TK_TUNE(copy_buffered_tiles, 2); }
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    for (int c = 0; c < cases; c++) {
      tk_s23_u8(&r, 0); tk_s23_u16(&r, 0);
      for (int form = 1; form <= 3; form++) {
        tk_s23_u8(&r, form); tk_s23_u16(&r, form); tk_s23_f32(&r, form); tk_s23_f64(&r, form); tk_s23_c128(&r, form);
      }
    }
    const int64_t *ks = tfe__st.kernel_stat;
    if (on) { for (int k = 0; k < 4; k++) seen[k] += ks[31 + k]; seen[4] += ks[37]; }
    else assert_true(ks[31] == 0 && ks[32] == 0 && ks[33] == 0 && ks[34] == 0 && ks[37] == 0); /* (as before) */
  }
  assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0 && seen[3] > 0 && seen[4] > 0); /* every rule taken when on */
  TK_TUNE(copy_wide_tables, 2);
  TK_TUNE(copy_flip_source_dims, 4);
  TK_TUNE(copy_next_prefetch, 2);
  TK_TUNE(copy_table_run_cut, 2);
  TK_TUNE(copy_run_tile_col_bytes, 3072);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
}
/* Session 24, two forms. 0 (copy_g1_run_bytes, counter 35): batches of small transposes, the
 * source [r, a, b, c...] read as [a, r, b, c...] (r the input's run, 2-70 elements, a 9-90, the
 * batch dims 2-30 in either order, some reversed): a transpose tile's G1 led by the run r and
 * continued by a batch dim keeps r alone when r is long enough. 1 (copy_tiny_g0_wide_g1,
 * counter 36): the source [r, c, m, t] read as [t, r, m, c] (t 2-4, the destination's run read
 * far; r 60-150 continued by c 2-8, often reversed; m 5-40): G0 of 32 bytes or less lets G1
 * take r x c beyond its target. Every kind, on and off, 1 and 2 threads, in place and streamed
 * through tile buffers; every element checked and nothing written outside the view; each
 * counter moves when on and stays at zero when off. */
#define TK_S24(S, T, VAL)                                                                        \
  static void tk_s24_##S(tu_rng *r, int form) {                                                \
    static const int64_t lo[2][4] = {{2, 9, 2, 2}, {60, 2, 5, 2}}, hi[2][4] = {{70, 90, 30, 30}, {150, 8, 40, 4}}; \
    int rank = form ? 4 : (int)tu_int(r, 3, 5);                                                 \
    int64_t dims[6], perm[6], st[6], n = 1, s = 1;                                              \
    for (int k = 0; k < rank; k++) { dims[k] = tu_int(r, lo[form][k < 3 ? k : 3], hi[form][k < 3 ? k : 3]); n *= dims[k]; } \
    for (int k = rank - 1; n > 120000; k = k > 2 ? k - 1 : rank - 1)                            \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    if (form) { perm[0] = 3; perm[1] = 0; perm[2] = 2; perm[3] = 1; }                           \
    else {                                                                                      \
      perm[0] = 1; perm[1] = 0;                                                                 \
      if (rank > 3 && tu_int(r, 0, 1)) { perm[2] = 3; perm[3] = 2; }                            \
    }                                                                                           \
    TK_GUARDED_COPY(S, T, VAL, form ? a == 1 && tu_int(r, 0, 1) : a >= 2 && tu_int(r, 0, 4) == 0, "s24 form", form) \
  }
TK_FIVE_KINDS(TK_S24)
/* The harness of the session tests: eight modes (threads 1, 2; rules on, off; in place,
 * streamed through tile buffers), `cases` rounds of run(r, form) for every form; seen[k] gets
 * counter ctr[k] when on, and each must stay at zero when off. set(on) sets the rules. */
static void tk_rule_modes(tu_rng *r, int forms, int cases, void (*set)(bool on), void (*run)(tu_rng *r, int form),
                          const int *ctr, int nctr, int64_t *seen) {
  tfe__st.kernel_stat_on = 1;
  for (int mode = 0; mode < 8; mode++) {
    tfe_set_num_threads(1 + mode % 2);
    const bool on = mode / 2 % 2 == 0;
    tk_paths(0);
    set(on);
    if (mode >= 4) { TK_TUNE(kernel_stream_min_bytes, 0); TK_TUNE(copy_buffered_tiles, 2); }
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    for (int c = 0; c < cases; c++)
      for (int form = 0; form < forms; form++) run(r, form);
    for (int k = 0; k < nctr; k++) {
      if (on) seen[k] += tfe__st.kernel_stat[ctr[k]];
      else assert_int_equal(tfe__st.kernel_stat[ctr[k]], 0);
    }
  }
  set(true);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
}
static void tk_s24_set(bool on) {
  TK_TUNE(copy_narrow_records, 0); /* (records.h would take some of these copies) */
  TK_TUNE(copy_g1_run_bytes, on ? 32 : 0);
  TK_TUNE(copy_tiny_g0_wide_g1, on);
}
static void tk_s24_run(tu_rng *r, int form) {
  tk_s24_u8(r, form); tk_s24_u16(r, form); tk_s24_f32(r, form); tk_s24_f64(r, form); tk_s24_c128(r, form);
}
static void test_s24_g1_runs(void **st) {
  (void)st;
  tu_rng r = {2424};
  int64_t seen[2] = {0, 0};
  const int ctr[2] = {35, 36};
  tk_rule_modes(&r, 2, tu_cases(30) < 8 ? 8 : tu_cases(30), tk_s24_set, tk_s24_run, ctr, 2, seen);
  assert_true(seen[0] > 0 && seen[1] > 0);
}
/* Session 25, three forms. 0 (copy_buf_narrow_bytes, counter 38): batches of transposes whose
 * input run r is narrower than a register block, the source [r, a, b, c...] read as
 * [a, r, c, b...] (r 8-63 elements, a 64-300, batch dims 2-12, some reversed): streamed 1- and
 * 2-byte tiles of r columns go through the tile buffer. 1 (copy_g1_run_dims, counter 39): the
 * source [u, v, a, b, c] read as [a, u, b, v, c] (u 2-6 and v 2-8 one run of the input that the
 * destination splits, a 40-200, b 3-30, c 2-6): G1 keeps the run u x v alone. 2
 * (copy_shared_run_dim 2, counter 40): the source [u, v, a, x, b, y] read as [a, b, v, u, x, y]
 * (u 4-12 the input's run, continued by v 16-80, which also continues the destination's run
 * a x b): 1- and 2-byte table tiles block v with the input. Every kind, on and off, 1 and 2
 * threads, in place and streamed; every element checked, nothing written outside the view;
 * each counter moves when on and stays at zero when off. */
#define TK_S25(S, T, VAL)                                                                        \
  static void tk_s25_##S(tu_rng *r, int form) {                                                \
    static const int64_t lo[3][6] = {{8, 64, 2, 2, 2, 2}, {2, 2, 40, 3, 2, 2}, {4, 16, 20, 2, 2, 2}}, \
                         hi[3][6] = {{63, 300, 12, 12, 4, 4}, {6, 8, 200, 30, 6, 6}, {12, 80, 70, 30, 4, 6}}; \
    int rank = form == 1 ? 5 : form == 2 ? (int)tu_int(r, 5, 6) : (int)tu_int(r, 3, 5);          \
    int64_t dims[6], perm[6], st[6], n = 1, s = 1;                                              \
    for (int k = 0; k < rank; k++) { dims[k] = tu_int(r, lo[form][k], hi[form][k]); n *= dims[k]; } \
    for (int k = rank - 1; n > 120000; k = k > (form ? 2 : 1) ? k - 1 : rank - 1) /* (form 0 shrinks a too) */ \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    if (form == 2) { perm[0] = 2; perm[1] = 4; perm[2] = 1; perm[3] = 0; perm[4] = 3; }          \
    else if (form) { perm[0] = 2; perm[1] = 0; perm[2] = 3; perm[3] = 1; }                      \
    else {                                                                                      \
      perm[0] = 1; perm[1] = 0;                                                                 \
      if (rank > 3) { perm[2] = 3; perm[3] = 2; }                                               \
    }                                                                                           \
    TK_GUARDED_COPY(S, T, VAL, a >= 2 && tu_int(r, 0, 3) == 0, "s25 form", form)                 \
  }
TK_FIVE_KINDS(TK_S25)
static void tk_s25_set(bool on) {
  TK_TUNE(copy_buf_narrow_bytes, on ? 16 : 0);
  TK_TUNE(copy_g1_run_dims, on);
  TK_TUNE(copy_shared_run_dim, on ? 2 : 1);
}
static void tk_s25_run(tu_rng *r, int form) {
  tk_s25_u8(r, form); tk_s25_u16(r, form); tk_s25_f32(r, form); tk_s25_f64(r, form); tk_s25_c128(r, form);
}
static void test_s25_narrow_runs(void **st) {
  (void)st;
  tu_rng r = {2525};
  int64_t seen[3] = {0, 0, 0};
  const int ctr[3] = {38, 39, 40};
  tk_rule_modes(&r, 3, tu_cases(30) < 8 ? 8 : tu_cases(30), tk_s25_set, tk_s25_run, ctr, 3, seen);
#if TFE__KHAVE_TR8
  assert_true(seen[0] > 0); /* (buffered tiles need the register blocks) */
#endif
  assert_true(seen[1] > 0 && seen[2] > 0);
}
/* Session 33 (copy_shared_g0_bytes, counter 40): 1- and 2-byte copies whose destination run a
 * (32-127 bytes) is continued by a dim s that also continues the source's run b (8-15 bytes):
 * the source [b, s, a, o] read as [a, s, b, o], and [b, s, c, a, o] read as [a, s, b, c, o]
 * (c continuing the source's run b x s), a source dim reversed now and then. With the knob on
 * (32) G1 takes s, with it at 128 (the old rule) the plan keeps s in G0 and counter 40 stays
 * at zero; every element checked, nothing written outside the view, 1 and 2 threads, in place
 * and streamed. */
#define TK_S33(S, T, VAL)                                                                         \
  static void tk_s33_##S(tu_rng *r, int form) {                                                 \
    const int64_t es = (int64_t)sizeof(T);                                                      \
    int rank = form ? 5 : 4;                                                                    \
    int64_t dims[5], perm[5], st[5], n = 1, s = 1;                                              \
    dims[0] = tu_int(r, (8 + es - 1) / es, 15 / es);                                            \
    dims[1] = tu_int(r, 2, 60);                                                                 \
    if (form) dims[2] = tu_int(r, 2, 8);                                                        \
    dims[rank - 2] = tu_int(r, 32 / es, 127 / es);                                              \
    dims[rank - 1] = tu_int(r, 1, 4);                                                           \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    if (form) { perm[0] = 3; perm[1] = 1; perm[2] = 0; perm[3] = 2; perm[4] = 4; }              \
    else { perm[0] = 2; perm[1] = 1; perm[2] = 0; perm[3] = 3; }                                \
    TK_GUARDED_COPY(S, T, VAL, a != perm[0] && a != 0 && tu_int(r, 0, 5) == 0, "s33 form", form) \
  }
TK_S33(u8, tk_u8, TK_U8VAL)
TK_S33(u16, tk_u16, TK_U16VAL)
static void tk_s33_set(bool on) {
  TK_TUNE(copy_shared_run_dim, 2);
  TK_TUNE(copy_shared_g0_bytes, on ? 32 : 128);
}
static void tk_s33_run(tu_rng *r, int form) { tk_s33_u8(r, form); tk_s33_u16(r, form); }
static void test_s33_shared_g0(void **st) {
  (void)st;
  tu_rng r = {3333};
  int64_t seen[1] = {0};
  const int ctr[1] = {40};
  tk_rule_modes(&r, 2, tu_cases(30) < 8 ? 8 : tu_cases(30), tk_s33_set, tk_s33_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 33, the stream-out of buffered tiles. 0 (copy_run_piece_edges, counter 52): batches
 * of small transposes whose tile is one run of destination columns shorter than
 * copy_lone_edge_bytes each, the source [b, s, a, o] read as [a, s, b, o] (b 8-15 columns, a x s
 * rows 9-72 elements, o 20-60): copy_next_prefetch's eight groups cut the run at columns, some
 * one column long. 1 (copy_chain_columns, counter 53): the same reading with b 2-7, s 8-40, a
 * 16-40, o 4-12: G1 b x s, the destination's columns following one another b apart in G1. Every
 * kind, the knobs on and off, streamed and in place; every element checked, nothing written
 * outside the view. */
#define TK_S33B(S, T, VAL)                                                                        \
  static void tk_s33b_##S(tu_rng *r, int form) {                                                \
    const int rank = 4;                                                                         \
    int64_t dims[4] = {tu_int(r, 8, 15), tu_int(r, 3, 9), tu_int(r, 3, 8), tu_int(r, 20, 60)};   \
    if (form) { dims[0] = tu_int(r, 2, 7); dims[1] = tu_int(r, 8, 40); dims[2] = tu_int(r, 16, 40); dims[3] = tu_int(r, 4, 12); } \
    int64_t perm[4] = {2, 1, 0, 3}, st[4], n = 1, s = 1;                                        \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; n *= dims[k]; }                   \
    TK_GUARDED_COPY(S, T, VAL, a == 3 && tu_int(r, 0, 7) == 0, "s33b form", form)              \
  }
TK_FIVE_KINDS(TK_S33B)
static void tk_s33b_set(bool on) { /* (lone columns and streamed edges as by default on AMD) */
  TK_TUNE(copy_run_piece_edges, on);
  TK_TUNE(copy_chain_columns, on);
  TK_TUNE(copy_lone_edge_bytes, 512);
  TK_TUNE(kernel_stream_edge_lines, 1);
}
static void tk_s33b_run(tu_rng *r, int form) {
  tk_s33b_u8(r, form); tk_s33b_u16(r, form); tk_s33b_f32(r, form); tk_s33b_f64(r, form); tk_s33b_c128(r, form);
}
static void test_s33_stream_out(void **st) {
  (void)st;
  tu_rng r = {3334};
  int64_t seen[2] = {0, 0};
  const int ctr[2] = {52, 53};
  tk_rule_modes(&r, 2, tu_cases(30) < 8 ? 8 : tu_cases(30), tk_s33b_set, tk_s33b_run, ctr, 2, seen);
#if TFE__KHAVE_TR8
  assert_true(seen[0] > 0 && seen[1] > 0); /* (buffered tiles need the register blocks) */
#endif
}
/* Session 34 (copy_gather_source_run, counter 54): random permutations of 2s and 3s (the
 * small-dim family that makes gather tiles) whose destination starts with source dims other
 * than the first, a line of destination or more of them (and under 256 elements), then the
 * source's unit-stride dim 0, then the rest in random order: with the knob on, 1-byte gather
 * tiles stop G0 at dim 0 or at an earlier dim that continues its run; a source dim reversed
 * now and then. Every kind, on and
 * off, 1 and 2 threads, in place and streamed; every element checked, nothing written outside
 * the view; counter 54 moves when on and stays at zero when off. */
#define TK_S34(S, T, VAL)                                                                         \
  static void tk_s34_##S(tu_rng *r, int form) {                                                 \
    const int64_t es = (int64_t)sizeof(T);                                                      \
    const int rank = 10;                                                                        \
    int64_t dims[10], perm[10], st[10], n = 1, s = 1, pre = 1;                                  \
    for (int k = 0; k < rank; k++) { dims[k] = tu_int(r, 2, 3); n *= dims[k]; st[k] = s; s *= dims[k]; } \
    int64_t rest[10];                                                                           \
    int nr = 0, np = 0;                                                                         \
    for (int k = form ? 4 : 1; k < rank; k++) rest[nr++] = k;                                   \
    for (int k = nr - 1; k > 0; k--) { int j = (int)tu_int(r, 0, k); int64_t t = rest[k]; rest[k] = rest[j]; rest[j] = t; } \
    int q = 0;                                                                                  \
    for (; q < nr && pre * es < 64; q++) { perm[np++] = rest[q]; pre *= dims[rest[q]]; }        \
    if (form) { /* (then dim 1, which continues 0, before 0, 2, 3 and the rest shuffled) */     \
      int64_t tail[10] = {0, 2, 3};                                                             \
      int nt = 3;                                                                               \
      for (; q < nr; q++) tail[nt++] = rest[q];                                                 \
      for (int k = nt - 1; k > 0; k--) { int j = (int)tu_int(r, 0, k); int64_t t = tail[k]; tail[k] = tail[j]; tail[j] = t; } \
      perm[np++] = 1;                                                                           \
      for (int k = 0; k < nt; k++) perm[np++] = tail[k];                                        \
    } else perm[np++] = 0;                                                                      \
    for (; q < nr; q++) perm[np++] = rest[q];                                                   \
    TK_GUARDED_COPY(S, T, VAL, a != 0 && tu_int(r, 0, 7) == 0, "s34 form", form)               \
  }
TK_FIVE_KINDS(TK_S34)
static void tk_s34_set(bool on) { TK_TUNE(copy_gather_source_run, on); }
static void tk_s34_run(tu_rng *r, int form) {
  tk_s34_u8(r, form); tk_s34_u16(r, form); tk_s34_f32(r, form); tk_s34_f64(r, form); tk_s34_c128(r, form);
}
static void test_s34_gather_source_run(void **st) {
  (void)st;
  tu_rng r = {3434};
  int64_t seen[1] = {0};
  const int ctr[1] = {54};
  tk_rule_modes(&r, 2, tu_cases(20) < 6 ? 6 : tu_cases(20), tk_s34_set, tk_s34_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 35 (copy_reverse_runs, counters 56 and 58; copy_run_stream_bytes; copy_flip_source_dims
 * 3, counter 57). Form 0: a run common to both operands that the source reads backwards (its
 * dim 0 reversed and first in the destination too), of 1-7, 8-40, 41-300 or 1100-1400
 * elements (units reversed in place, pieces under 32 bytes, overlapping last pieces, the L1
 * buffer of runs up to 4 KiB, runs written downwards), the other dims shuffled, some reversed. Form 1: a forward common
 * run of 1-300 elements whose next dim in the destination the source reads reversed (the
 * odometer walks it the other way), the rest shuffled. Every kind, rules on and off, 1 and 2
 * threads, in place and streamed (modes 4-7: every output streamed); every element checked,
 * nothing written outside the view; the counters move when on and stay at zero when off. */
#define TK_S35(S, T, VAL)                                                                         \
  static void tk_s35_##S(tu_rng *r, int form) {                                                 \
    const int rank = (int)tu_int(r, 2, 5);                                                      \
    int64_t dims[5] = {1, 1, 1, 1, 1}, perm[5] = {0, 1, 2, 3, 4}, st[5] = {0}, n = 1, s = 1;     \
    const int64_t lo[4] = {1, 8, 41, 1100}, hi[4] = {7, 40, 300, 1400};                          \
    const int w = form ? (int)tu_int(r, 0, 2) : (int)tu_int(r, 0, 3);                           \
    dims[0] = tu_int(r, lo[w], hi[w]);                                                           \
    for (int k = 1; k < rank; k++) dims[k] = tu_int(r, 1, 6) == 1 ? 1 : tu_int(r, 2, 9);       \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                 \
    for (int k = rank - 1; k > 1; k--) { int j = (int)tu_int(r, 1, k); int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t; } \
    const int64_t flip = perm[1];                                                               \
    TK_GUARDED_COPY(S, T, VAL, a == (form ? flip : 0) || (a != 0 && tu_int(r, 0, 3) == 0), "s35 form", form) \
  }
TK_FIVE_KINDS(TK_S35)
static void tk_s35_set(bool on) {
  TK_TUNE(copy_reverse_runs, on);
  TK_TUNE(copy_run_stream_bytes, on ? 1024 : 0);
  TK_TUNE(copy_flip_source_dims, on ? 3 : 2);
}
static void tk_s35_run(tu_rng *r, int form) {
  tk_s35_u8(r, form); tk_s35_u16(r, form); tk_s35_f32(r, form); tk_s35_f64(r, form); tk_s35_c128(r, form);
}
/* Map and zip inputs read backwards along the destination's run (copy_reverse_runs also
 * gathers them by tfe__kcopy_rev, or tfe__kgather_rev for pieces of runs longer than a tile,
 * counter 56): f32 and f64 views [r, c] whose first input runs reversed (and the second
 * forward), r 5-300 (c 2-40) or 1100-3000 (c 2-6), on and off; each element checked. */
#define TK_S35_EW(S, T)                                                                           \
  static void tk_s35_ew_##S(tu_rng *r) {                                                       \
    const bool lng = tu_int(r, 0, 2) == 0; /* (runs longer than a tile: read in pieces) */         \
    const int64_t R = lng ? tu_int(r, 1100, 3000) : tu_int(r, 5, 300), C = lng ? tu_int(r, 2, 6) : tu_int(r, 2, 40), n = R * C; \
    T *a = malloc(sizeof(T) * (size_t)n), *b = malloc(sizeof(T) * (size_t)n), *o = malloc(sizeof(T) * (size_t)n); \
    for (int64_t i = 0; i < n; i++) { a[i] = (T)(i % 97) - 40; b[i] = (T)(i % 13); }           \
    tfe_view_##S d = {o, {2, 0, {R, C}, {1, R}}, false}, x = {a, {2, R - 1, {R, C}, {-1, R}}, false}, \
                 y = {b, {2, 0, {R, C}, {1, R}}, false};                                        \
    assert_int_equal(tfe_map_##S(&d, &x, TFE_UN_SQUARE, 0), TFE_OK);                            \
    for (int64_t j = 0; j < C; j++)                                                             \
      for (int64_t i = 0; i < R; i++) {                                                         \
        T v = a[j * R + R - 1 - i];                                                             \
        if (o[j * R + i] != v * v) fail_msg(#S " s35 map %lld x %lld at %lld", (long long)R, (long long)C, (long long)(j * R + i)); \
      }                                                                                         \
    assert_int_equal(tfe_zip_##S(&d, &x, &y, TFE_BIN_SUB), TFE_OK);                             \
    for (int64_t j = 0; j < C; j++)                                                             \
      for (int64_t i = 0; i < R; i++)                                                           \
        if (o[j * R + i] != a[j * R + R - 1 - i] - b[j * R + i]) fail_msg(#S " s35 zip %lld x %lld", (long long)R, (long long)C); \
    free(a); free(b); free(o);                                                                  \
  }
TK_S35_EW(f32, float)
TK_S35_EW(f64, double)
static void test_s35_reversed_runs(void **st) {
  (void)st;
  tu_rng r = {3535};
  int64_t seen[3] = {0, 0, 0};
  const int ctr[3] = {56, 57, 58};
  tk_rule_modes(&r, 2, tu_cases(30) < 8 ? 8 : tu_cases(30), tk_s35_set, tk_s35_run, ctr, 3, seen);
  assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
  tfe__st.kernel_stat_on = 1;
  for (int on = 0; on < 2; on++) {
    TK_TUNE(copy_reverse_runs, on);
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    for (int c = 0; c < tu_cases(20); c++) { tk_s35_ew_f32(&r); tk_s35_ew_f64(&r); }
    if (on) assert_true(tfe__st.kernel_stat[56] > 0);
    else assert_int_equal(tfe__st.kernel_stat[56], 0);
  }
  tfe__st.kernel_stat_on = 0;
}
/* Session 36 (copy_tile_slack, counter 60): transposes whose source-contiguous dim lies around
 * G1's target of 1 KiB (just under it, or up to 30 % over: taken whole where 25 % allows), or
 * is a shorter run that the next dim continues (G1 takes 2 or more of it), behind a first
 * destination dim from the far end (form 2: batches of short transposes whose destination dim
 * lies around G0's target of 2 KiB); every kind, the rule on and off, 1 and 2 threads, in place
 * and streamed; every element checked, nothing written outside the view; the counter moves
 * when on and stays at zero when off. */
#define TK_S36(S, T, VAL)                                                                         \
  static void tk_s36_##S(tu_rng *r, int form) {                                                 \
    const int64_t tg = 1024 / (int64_t)sizeof(T);                                               \
    const int rank = (int)tu_int(r, 3, 4);                                                      \
    int64_t dims[4] = {1, 1, 1, 1}, perm[4] = {2, 0, 1, 3}, st[4] = {0}, n = 1, s = 1;          \
    dims[0] = form == 1 ? tu_int(r, tg / 4, tg * 3 / 4) : form ? tu_int(r, 3, 20) : tu_int(r, tg - 4, tg * 13 / 10); \
    dims[1] = tu_int(r, 1, 5);                                                                  \
    dims[2] = form == 2 ? tu_int(r, 2 * tg - 8, 2 * tg * 13 / 10) : tu_int(r, 9, 40);           \
    if (rank > 3) dims[3] = tu_int(r, 2, 3);                                                    \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                 \
    TK_GUARDED_COPY(S, T, VAL, a == 2 && tu_int(r, 0, 3) == 0, "s36 form", form)               \
  }
TK_FIVE_KINDS(TK_S36)
static void tk_s36_set(bool on) { TK_TUNE(copy_tile_slack, on ? 25 : 0); }
static void tk_s36_run(tu_rng *r, int form) {
  tk_s36_u8(r, form); tk_s36_u16(r, form); tk_s36_f32(r, form); tk_s36_f64(r, form); tk_s36_c128(r, form);
}
static void test_s36_tile_slack(void **st) {
  (void)st;
  tu_rng r = {3636};
  int64_t seen[1] = {0};
  const int ctr[1] = {60};
  tk_rule_modes(&r, 3, tu_cases(20) < 6 ? 6 : tu_cases(20), tk_s36_set, tk_s36_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 37 (copy_buf_short_rows, counter 62; copy_short_row_prefetch, counter 63): 1- and
 * 2-byte transposes whose destination-contiguous dim holds 16-63 bytes (fewer than a 64-byte
 * register block), form 0 its columns adjacent (the source's unit dim right after it in the
 * destination: buffered and streamed out as one run), form 1 chains of columns (a small
 * source dim between, u8 [9,2047,45,..] [2,1,0,3]'s layout: in place), form 2 as 0 with the
 * source's long dim read backwards, form 3 transposes of short source records (under 256
 * bytes) into 40-300 rows (4- to 16-byte kinds take neither rule: their prefetch moved no
 * case, docs/bench-kernel.md session 37); every kind, the
 * rules on and off, 1 and 2 threads, in place and streamed; every element checked, nothing
 * written outside the view; the counters move when on and stay at zero when off. */
#define TK_S37(S, T, VAL)                                                                         \
  static void tk_s37_##S(tu_rng *r, int form) {                                                 \
    const int64_t es = (int64_t)sizeof(T), lo = 16 / es < 2 ? 2 : 16 / es, hi = 63 / es < 3 ? 3 : 63 / es; \
    const int rank = form == 1 ? 4 : 3;                                                          \
    int64_t dims[4] = {1, 1, 1, 1}, perm[4] = {1, 0, 2, 3}, st[4] = {0}, n = 1, s = 1;          \
    if (form == 1) { dims[0] = tu_int(r, 2, 12); dims[1] = tu_int(r, 40, 300); dims[2] = tu_int(r, lo, hi); \
                     dims[3] = tu_int(r, 1, 3); perm[0] = 2; perm[1] = 1; perm[2] = 0; }         \
    else if (form == 3) { dims[0] = tu_int(r, 3, 240 / es < 4 ? 4 : 240 / es); dims[1] = tu_int(r, 40, 300); \
                          dims[2] = tu_int(r, 2, 40); }                                          \
    else { dims[0] = tu_int(r, 60, 700); dims[1] = tu_int(r, lo, hi); dims[2] = tu_int(r, 2, 9); } \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                 \
    TK_GUARDED_COPY(S, T, VAL, form == 2 && a == 0, "s37 form", form)                           \
  }
TK_FIVE_KINDS(TK_S37)
static void tk_s37_set(bool on) {
  TK_TUNE(copy_buf_short_rows, on ? 128 : 0);
  TK_TUNE(copy_short_row_prefetch, on ? 1024 : 0);
}
static void tk_s37_run(tu_rng *r, int form) {
  tk_s37_u8(r, form); tk_s37_u16(r, form); tk_s37_f32(r, form); tk_s37_f64(r, form); tk_s37_c128(r, form);
}
static void test_s37_short_rows(void **st) {
  (void)st;
  tu_rng r = {3737};
  int64_t seen[2] = {0, 0};
  const int ctr[2] = {62, 63};
  tk_rule_modes(&r, 4, tu_cases(20) < 6 ? 6 : tu_cases(20), tk_s37_set, tk_s37_run, ctr, 2, seen);
  assert_true(seen[0] > 0);
  assert_true(seen[1] > 0);
}
/* Session 37 (copy_skew_rim_pct, counter 64): transposes of every kind into unaligned
 * destination columns apart (a small dim between them) whose tiles are narrow enough that the
 * rims past the 8x8 (4x4) blocks are a large share (9-15 source-contiguous columns, as f64
 * [14,326,4422] [1,0,2]: form 0; the same with that dim read backwards: form 1; 16-40
 * columns, mostly whole blocks: form 2); the
 * rule on and off, 1 and 2 threads, in place and streamed; every element checked, nothing
 * written outside the view; the counter moves when on and stays at zero when off. */
#define TK_S37R(S, T, VAL)                                                                        \
  static void tk_s37r_##S(tu_rng *r, int form) {                                                \
    const int rank = 3;                                                                         \
    int64_t dims[3], perm[3] = {1, 2, 0}, st[3] = {0}, n = 1, s = 1;                            \
    dims[0] = form == 2 ? tu_int(r, 16, 40) : tu_int(r, 9, 15);                                 \
    dims[1] = tu_int(r, 170, 330) | 1; /* (over G0's 128 + 25 %: tiles cut, columns apart) */  \
    dims[2] = tu_int(r, 2, 6);                                                                  \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                 \
    TK_GUARDED_COPY(S, T, VAL, form == 1 && a == 0 && tu_int(r, 0, 1), "s37r form", form)       \
  }
TK_FIVE_KINDS(TK_S37R)
static void tk_s37r_set(bool on) {
  TK_TUNE(copy_skew_lines, 2); /* (the default; earlier tests leave other values) */
  TK_TUNE(copy_skew_rim_pct, on ? 30 : 100);
  TK_TUNE(copy_skew_min_row_bytes, 0); /* (the skewed tiles of these short rows kept: session 40) */
}
static void tk_s37r_run(tu_rng *r, int form) {
  tk_s37r_u8(r, form); tk_s37r_u16(r, form); tk_s37r_f32(r, form); tk_s37r_f64(r, form); tk_s37r_c128(r, form);
}
static void test_s37_skew_rims(void **st) {
  (void)st;
  tu_rng r = {3738};
  int64_t seen[1] = {0};
  const int ctr[1] = {64};
  tk_rule_modes(&r, 3, tu_cases(20) < 6 ? 6 : tu_cases(20), tk_s37r_set, tk_s37r_run, ctr, 1, seen);
#if TFE__KHAVE_TR8 && defined(__AVX512F__)
  assert_true(seen[0] > 0); /* (the skewed lines exist only in AVX-512 builds) */
#endif
}
/* Session 37 (copy_quarter_st, counter 65): transposes whose destination run is 4-7 elements
 * (f32: up to 15) with the source's unit dim right after it (f64 [49,4,8,8,51,4,8]
 * [1,0,5,4,6,3,2]'s 4 x 49 tiles: form 0) or behind a third dim (form 1), source columns 4-60
 * (shifted last blocks; f64 runs of 4 into a streamed output take streaming stores where the
 * destination is 32-byte aligned); every kind, the rule on and off, 1 and 2 threads, in place
 * and streamed; every element checked, nothing written outside the view; the counter moves when
 * on and stays at zero when off. */
#define TK_S37Q(S, T, VAL)                                                                        \
  static void tk_s37q_##S(tu_rng *r, int form) {                                                \
    const int rank = 3;                                                                         \
    int64_t dims[3], perm[3] = {1, 0, 2}, st[3] = {0}, n = 1, s = 1;                            \
    dims[0] = tu_int(r, 4, 60);                                                                 \
    dims[1] = tu_int(r, 4, sizeof(T) == 4 ? 15 : 7);                                            \
    dims[2] = tu_int(r, 2, 30);                                                                 \
    if (form == 1) { perm[1] = 2; perm[2] = 0; }                                                \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                 \
    TK_GUARDED_COPY(S, T, VAL, a == 2 && tu_int(r, 0, 3) == 0, "s37q form", form)               \
  }
TK_FIVE_KINDS(TK_S37Q)
static void tk_s37q_set(bool on) { TK_TUNE(copy_quarter_st, on ? 2 : 0); }
static void tk_s37q_run(tu_rng *r, int form) {
  tk_s37q_u8(r, form); tk_s37q_u16(r, form); tk_s37q_f32(r, form); tk_s37q_f64(r, form); tk_s37q_c128(r, form);
}
static void test_s37_quarter_st(void **st) {
  (void)st;
  tu_rng r = {3739};
  int64_t seen[1] = {0};
  const int ctr[1] = {65};
  tk_rule_modes(&r, 2, tu_cases(20) < 6 ? 6 : tu_cases(20), tk_s37q_set, tk_s37q_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 38 (copy_skew_buf_src_bytes, counter 66): 2-D transposes of 2-byte kinds into streamed
 * outputs whose source runs hold 1000-8000 bytes (the rule, at 512 as AMD's per-CPU default since
 * session 45, takes them to the tile buffer instead of copy_skew_lines' skewed form), and of
 * 4-byte kinds with the same dims (never taken); a reversed source run in one case of four; the rule on and off, 1 and 2
 * threads, in place and streamed; every element checked, nothing written outside the view; the
 * counter moves when on and stays at zero when off. */
#define TK_S38(S, T, VAL)                                                                         \
  static void tk_s38_##S(tu_rng *r, int form) {                                                 \
    const int rank = 2;                                                                         \
    int64_t dims[2], perm[2] = {1, 0}, st[2] = {0}, n = 1, s = 1;                               \
    dims[0] = tu_int(r, 500, 4000);                                                             \
    dims[1] = tu_int(r, 1100, 1300);                                                            \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                 \
    TK_GUARDED_COPY(S, T, VAL, a == 0 && tu_int(r, 0, 3) == 0, "s38 form", form)               \
  }
TK_S38(u16, tk_u16, TK_U16VAL)
TK_S38(f32, float, TK_VAL)
static void tk_s38_set(bool on) {
  TK_TUNE(copy_skew_buf_src_bytes, on ? 512 : 0);
  TK_TUNE(copy_skew_lines, 2); /* (the defaults; earlier tests leave other values) */
  TK_TUNE(copy_skew_run_bytes, 8192);
}
static void tk_s38_run(tu_rng *r, int form) { tk_s38_u16(r, form); tk_s38_f32(r, form); }
static void test_s38_skew_long_src(void **st) {
  (void)st;
  tu_rng r = {3803};
  int64_t seen[1] = {0};
  const int ctr[1] = {66};
  tk_rule_modes(&r, 1, 2, tk_s38_set, tk_s38_run, ctr, 1, seen);
#if defined(__AVX512BW__)
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#endif
}
/* Session 39 (copy_narrow_records, counter 67): copies between records of r elements (r * es
 * under 64 bytes) and r streams. Forms 0 and 2 split (the destination's run reads whole source
 * records), 1 and 3 join (the source's run fills whole destination records); forms 2 and 3 make
 * the record of two dims, in any order on the other side. Runs of 1-3000 records (heads and
 * tails under a block, runs too short for the rule), 0-2 outer dims (one reversed in one case
 * of four, the records' dim in one of eight), every scalar size; the rule on and off, 1 and 2
 * threads, in place and streamed; every element checked, nothing written outside the view; the
 * counter moves when on and stays at zero when off; the outer dims walked in the source's order
 * (copy_records_src_order 1, session 40) and in the destination's. */
#define TK_S39(S, T, VAL)                                                                         \
  static void tk_s39_##S(tu_rng *r, int form) {                                                 \
    const int64_t es = (int64_t)sizeof(T), maxr = 63 / es < 16 ? 63 / es : 16;                  \
    const bool two = form >= 2 && maxr >= 4, join = form % 2 == 1;                              \
    const int nrec = two ? 2 : 1, nout = (int)tu_int(r, 0, 2), rank = nrec + 1 + nout;          \
    int64_t dims[6] = {0}, perm[6] = {0}, st[6] = {0}, n = 1, s = 1, rec = 1, outer = 1;          \
    const int ni = join ? 0 : nrec; /* the source's dim of records */                          \
    for (int k = 0; k < nrec; k++) {                                                            \
      dims[join ? 1 + k : k] = two ? tu_int(r, 2, maxr / 2) : tu_int(r, 2, maxr);               \
      rec *= dims[join ? 1 + k : k];                                                            \
    }                                                                                           \
    if (rec > maxr) { dims[join ? 2 : 1] = 2; rec = dims[join ? 1 : 0] * 2; }                   \
    for (int k = nrec + 1; k < rank; k++) { dims[k] = tu_int(r, 1, 5); outer *= dims[k]; }      \
    dims[ni] = tu_int(r, 1, 60000 / (rec * outer) < 3000 ? 60000 / (rec * outer) : 3000);      \
    for (int k = 0; k < rank; k++) { n *= dims[k]; st[k] = s; s *= dims[k]; }                   \
    int m = 0, left[6], nl = 0;                                                                 \
    if (join) { /* the record's dims first, in either order, then the records' dim */           \
      const bool swap = two && tu_int(r, 0, 1);                                                 \
      for (int k = 0; k < nrec; k++) perm[m++] = 1 + (swap ? nrec - 1 - k : k);                 \
    }                                                                                           \
    perm[m++] = ni;                                                                             \
    for (int k = 0; k < rank; k++) {                                                            \
      bool taken = false;                                                                       \
      for (int j = 0; j < m; j++) taken |= perm[j] == k;                                        \
      if (!taken) left[nl++] = k;                                                               \
    }                                                                                           \
    for (int k = nl - 1; k > 0; k--) { int j = (int)tu_int(r, 0, k), t_ = left[k]; left[k] = left[j]; left[j] = t_; } \
    for (int k = 0; k < nl; k++) perm[m++] = left[k];                                           \
    TK_GUARDED_COPY(S, T, VAL, (a > nrec && tu_int(r, 0, 3) == 0) || (a == ni && tu_int(r, 0, 7) == 0), "s39 form", form) \
  }
TK_FIVE_KINDS(TK_S39)
static void tk_s39_set(bool on) { TK_TUNE(copy_narrow_records, on ? 1 : 0); }
static void tk_s39_run(tu_rng *r, int form) {
  tk_s39_u8(r, form); tk_s39_u16(r, form); tk_s39_f32(r, form); tk_s39_f64(r, form); tk_s39_c128(r, form);
}
static void test_s39_records(void **st) {
  (void)st;
  tu_rng r = {3907};
  int64_t seen[1] = {0};
  const int ctr[1] = {67};
  tk_rule_modes(&r, 4, tu_cases(6) < 2 ? 2 : tu_cases(6), tk_s39_set, tk_s39_run, ctr, 1, seen);
  TK_TUNE(copy_records_src_order, 0); /* (outer dims in the destination's order, as before session 40) */
  tk_rule_modes(&r, 4, tu_cases(3) < 2 ? 2 : tu_cases(3), tk_s39_set, tk_s39_run, ctr, 1, seen);
  TK_TUNE(copy_records_src_order, 1);
#if defined(__AVX512F__)
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#endif
}
/* Session 40 (copy_col_stream_bytes, counter 68; copy_run_stream_bytes 256; copy_run_tile_cols
 * 128): transposes of a common leading run of 8-2000 bytes (form 0: the source [r, b, c] read as
 * [r, c, b]; form 1: rank 4-5, the outer dims shuffled, one perhaps reversed), the views shifted
 * 0-3 elements so that columns start and end anywhere in a line; every kind, the rule on and
 * off, 1 and 2 threads, every output streamed (buffered tiles by the CPU's default and always);
 * every element checked, nothing written outside the view; the counter moves when on and stays
 * at zero when off or when nothing streams. */
#define TK_S40(S, T, VAL)                                                                         \
  static void tk_s40_##S(tu_rng *r, int form) {                                                 \
    const int64_t es = (int64_t)sizeof(T), rb = tu_int(r, 0, 2) ? tu_int(r, 8, 600) : tu_int(r, 600, 2000); \
    const int rank = form ? (int)tu_int(r, 4, 5) : 3;                                            \
    int64_t dims[5] = {1, 1, 1, 1, 1}, perm[5] = {0, 2, 1, 3, 4}, st[5] = {0}, n = 1, s = 1;     \
    dims[0] = rb / es < 1 ? 1 : rb / es;                                                         \
    for (int k = 1; k < rank; k++) dims[k] = form ? tu_int(r, 2, 9) : tu_int(r, 2, 40);         \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                 \
    for (int k = rank - 1; n > 60000; k = k > 1 ? k - 1 : rank - 1)                               \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                        \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    for (int k = rank - 1; form && k > 1; k--) { int j = (int)tu_int(r, 1, k); int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t; } \
    if (form && perm[1] == 1) { perm[1] = perm[2]; perm[2] = 1; } /* (a transpose: dim 1 not next) */ \
    TK_GUARDED_COPY(S, T, VAL, a != 0 && form && tu_int(r, 0, 4) == 0, "s40 form", form)       \
  }
TK_FIVE_KINDS(TK_S40)
static void test_s40_col_stream(void **st) {
  (void)st;
  tu_rng r = {4040};
  int64_t seen = 0;
  const int cases = tu_cases(12) < 4 ? 4 : tu_cases(12);
  tfe__st.kernel_stat_on = 1;
  for (int mode = 0; mode < 12; mode++) { /* threads 1, 2; on, off; streamed (default, always buffered), in place */
    tfe_set_num_threads(1 + mode % 2);
    const bool on = mode / 2 % 2 == 0, streamed = mode < 8;
    tk_paths(0);
    TK_TUNE(copy_col_stream_bytes, on ? 512 : 0);
    if (streamed) TK_TUNE(kernel_stream_min_bytes, 0);
    if (mode >= 4 && mode < 8) TK_TUNE(copy_buffered_tiles, 2);
    memset(tfe__st.kernel_stat, 0, sizeof tfe__st.kernel_stat);
    for (int c = 0; c < cases; c++)
      for (int form = 0; form < 2; form++) {
        tk_s40_u8(&r, form); tk_s40_u16(&r, form); tk_s40_f32(&r, form); tk_s40_f64(&r, form); tk_s40_c128(&r, form);
      }
    if (on && streamed) seen += tfe__st.kernel_stat[68];
    else assert_int_equal(tfe__st.kernel_stat[68], 0);
  }
  TK_TUNE(copy_col_stream_bytes, 512);
  tk_paths(0);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(seen > 0);
#endif
}
/* Session 40 (copy_skew_min_row_bytes, counter 69): session 37's transposes into unaligned
 * columns apart, whose source rows (G1, the input's whole run of 9-40 elements) hold fewer
 * than 512 bytes in the 8- and 16-byte kinds: the tile buffer instead of skewed lines (rims
 * left to the skewed form: copy_skew_rim_pct 100); every kind, on and off, 1 and 2 threads,
 * in place and streamed; every element checked; the counter moves only when on. */
static void tk_s40s_set(bool on) {
  TK_TUNE(copy_skew_lines, 2);
  TK_TUNE(copy_skew_rim_pct, 100);
  TK_TUNE(copy_skew_min_row_bytes, on ? 512 : 0);
}
static void test_s40_skew_short_rows(void **st) {
  (void)st;
  tu_rng r = {4041};
  int64_t seen[1] = {0};
  const int ctr[1] = {69};
  tk_rule_modes(&r, 3, tu_cases(8) < 3 ? 3 : tu_cases(8), tk_s40s_set, tk_s37r_run, ctr, 1, seen);
  TK_TUNE(copy_skew_rim_pct, 30);
#if TFE__KHAVE_TR8 && defined(__AVX512F__)
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#endif
}
/* Session 41 (copy_run_tile_col_bytes, counter 70): session 40's transposes of a common leading
 * run (8-2000 bytes; runs under 768 bytes take G0s of more than 4 runs, up to 1024 table
 * entries), every kind, the rule on and off, 1 and 2 threads, in place and streamed; every
 * element checked, nothing written outside the view; the counter moves only when on. */
static void tk_s41_set(bool on) { TK_TUNE(copy_run_tile_col_bytes, on ? 3072 : 0); }
static void tk_s41_run(tu_rng *r, int form) {
  tk_s40_u8(r, form); tk_s40_u16(r, form); tk_s40_f32(r, form); tk_s40_f64(r, form); tk_s40_c128(r, form);
}
static void test_s41_run_tile_cols(void **st) {
  (void)st;
  tu_rng r = {4141};
  int64_t seen[1] = {0};
  const int ctr[1] = {70};
  tk_rule_modes(&r, 2, tu_cases(12) < 4 ? 4 : tu_cases(12), tk_s41_set, tk_s41_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 41 (copy_buf_rim_pct, counter 71): 1- and 2-byte table transposes into 64-byte aligned
 * destinations (the source [a, b, c, d, e, f] read as [d, b, f, e, a, c], the destination's
 * column a multiple of a line; a 18-120 elements, so that G1 leaves rims of any width), most
 * views aligned, some shifted 1-3 elements; streamed, buffered by mode 4 (by the CPU) and 2; the
 * rule on and off, 1 and 2 threads; every element checked, nothing written outside the view;
 * the counter moves only when on. */
#define TK_S41R(S, T, VAL)                                                                        \
  static void tk_s41r_##S(tu_rng *r, int form) {                                                \
    const int rank = 6, line = 64 / (int)sizeof(T);                                             \
    int64_t dims[6] = {tu_int(r, 18, 120), tu_int(r, 2, 4), tu_int(r, 2, 3), tu_int(r, 2, 4), tu_int(r, 2, 5), tu_int(r, 2, 40)}; \
    while (dims[1] * dims[3] * dims[5] % line) dims[5]++; /* (destination columns of whole lines) */ \
    int64_t perm[6] = {3, 1, 5, 4, 0, 2}, st[6], n = 1, s = 1;                                  \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = 4; n > 300000; k = k > 0 ? k - 2 : 4) /* (a, c, e: the columns stay whole lines) */ \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    const int64_t sh = tu_int(r, 0, 3), dh = tu_int(r, 0, 3) == 0 ? tu_int(r, 1, 3) : 0;         \
    T *src = malloc(sizeof(T) * (size_t)(n + 4)), none = VAL(-1);                               \
    T *dst = aligned_alloc(64, ((sizeof(T) * (size_t)(n + 8) + 63) / 64) * 64);                 \
    for (int64_t i = 0; i < n + 4; i++) src[i] = VAL(i);                                       \
    for (int64_t i = 0; i < n + 8; i++) dst[i] = none;                                         \
    TK_PERM_COPY_CHECK(S, T, form && a == 5, "s41r form", form)                                 \
    for (int64_t i = 0; i < dh; i++) if (memcmp(&dst[i], &none, sizeof(T))) fail_msg(#S " wrote before the view"); \
    for (int64_t i = dh + n; i < n + 8; i++) if (memcmp(&dst[i], &none, sizeof(T))) fail_msg(#S " wrote past the view"); \
    tfe_tensor_release_##S(&t);                                                                 \
    free(src); free(dst);                                                                       \
  }
TK_S41R(u8, tk_u8, TK_U8VAL)
TK_S41R(u16, tk_u16, TK_U16VAL)
static void tk_s41r_set(bool on) {
  TK_TUNE(copy_buf_rim_pct, on ? 25 : 0);
  TK_TUNE(kernel_stream_min_bytes, 0);
  TK_TUNE(copy_buffered_tiles, 4);
}
static void tk_s41r_run(tu_rng *r, int form) { tk_s41r_u8(r, form); tk_s41r_u16(r, form); }
static void test_s41_rim_buf(void **st) {
  (void)st;
  tu_rng r = {4142};
  int64_t seen[1] = {0};
  const int ctr[1] = {71};
  tk_rule_modes(&r, 2, tu_cases(10) < 4 ? 4 : tu_cases(10), tk_s41r_set, tk_s41r_run, ctr, 1, seen);
#if TFE__KHAVE_TR8
  assert_true(seen[0] > 0);
#endif
}
/* Session 41 (copy_skew_tile_bytes, counter 72): 2-D transposes of 8- and 16-byte kinds into
 * unaligned columns (form 0: [d0, d1] read as [d1, d0], d1 not a multiple of a line; form 1:
 * [a, b, c] read as [c, a, b]; form 2: form 0 with the source's rows read backwards, session
 * 44), a reversed source dim in one case of four, views shifted 0-3
 * elements; streamed, 1 and 2 threads, the rule on (1024) and off; every element checked,
 * nothing written outside the view; the counter moves only when on (AVX-512 builds). */
#define TK_S41S(S, T, VAL)                                                                        \
  static void tk_s41s_##S(tu_rng *r, int form) {                                                \
    const int64_t line = 64 / (int64_t)sizeof(T);                                               \
    int64_t dims[3] = {tu_int(r, 100, 700), tu_int(r, 100, 700), tu_int(r, 2, 6)}, perm[3] = {1, 0, 2}, st[3], n = 1, s = 1; \
    if (dims[1] % line == 0) dims[1]++;                                                         \
    int rank = 2;                                                                               \
    if (form == 1) {                                                                            \
      rank = 3; dims[0] = tu_int(r, 20, 90); dims[1] = tu_int(r, 10, 40); dims[2] = tu_int(r, 100, 500); \
      dims[2] += dims[2] % line == 0; perm[0] = 2; perm[1] = 0; perm[2] = 1;                    \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; n *= dims[k]; }                   \
    TK_GUARDED_COPY(S, T, VAL, (form == 2 || tu_int(r, 0, 3) == 0) && a == perm[rank - 1], "s41s form", form) \
  }
TK_S41S(f64, double, TK_VAL)
TK_S41S(c128, double complex, TK_CVAL)
static void tk_s41s_set(bool on) {
  TK_TUNE(copy_skew_tile_bytes, on ? 1024 : 0);
  TK_TUNE(kernel_stream_min_bytes, 0);
}
static void tk_s41s_run(tu_rng *r, int form) { tk_s41s_f64(r, form); tk_s41s_c128(r, form); }
static void tk_s41s_rev(tu_rng *r, int form) { (void)form; tk_s41s_run(r, 2); }
static void test_s41_skew_tiles(void **st) {
  (void)st;
  tu_rng r = {4143};
  int64_t seen[1] = {0}, rev[1] = {0};
  const int ctr[1] = {72};
  tk_rule_modes(&r, 2, tu_cases(6) < 3 ? 3 : tu_cases(6), tk_s41s_set, tk_s41s_run, ctr, 1, seen);
  /* (session 44: form 2, form 0 whose source rows are read backwards, takes the rule too) */
  tk_rule_modes(&r, 1, tu_cases(4) < 2 ? 2 : tu_cases(4), tk_s41s_set, tk_s41s_rev, ctr, 1, rev);
  TK_TUNE(copy_skew_tile_bytes, 1024);
#if TFE__KHAVE_TR8 && defined(__AVX512F__)
  if (tfe__ksimd()) { assert_true(seen[0] > 0); assert_true(rev[0] > 0); }
#endif
}
/* Session 41 (copy_buf_short_cols, counter 73): batches of small dense 1- and 2-byte transposes
 * whose source rows are under a register block (form 0: [r, c, b] read as [c, r, b]; form 1:
 * [r, c, b1, b2] with the batch dims swapped, the next tile elsewhere in the destination: left
 * buffered), r 2-63 bytes, c 16-90 bytes, a reversed batch dim in one case of four, views
 * shifted 0-3 elements; streamed, 1 and 2 threads, the rule on and off; every element checked,
 * nothing written outside the view; the counter moves only when on. */
#define TK_S41B(S, T, VAL)                                                                        \
  static void tk_s41b_##S(tu_rng *r, int form) {                                                \
    const int64_t es = (int64_t)sizeof(T);                                                      \
    const int rank = form ? 4 : 3;                                                              \
    int64_t dims[4] = {tu_int(r, 2, 63) / es + 1, tu_int(r, 16, 90) / es, tu_int(r, 20, 400), tu_int(r, 2, 9)}; \
    int64_t perm[4] = {1, 0, 2, 3}, st[4], n = 1, s = 1;                                        \
    if (form) { perm[2] = 3; perm[3] = 2; }                                                     \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    TK_GUARDED_COPY(S, T, VAL, a >= 2 && tu_int(r, 0, 3) == 0, "s41b form", form)               \
  }
TK_S41B(u8, tk_u8, TK_U8VAL)
TK_S41B(u16, tk_u16, TK_U16VAL)
static void tk_s41b_set(bool on) {
  TK_TUNE(copy_buf_short_cols, on);
  TK_TUNE(kernel_stream_min_bytes, 0);
}
static void tk_s41b_run(tu_rng *r, int form) { tk_s41b_u8(r, form); tk_s41b_u16(r, form); }
static void test_s41_short_batches(void **st) {
  (void)st;
  tu_rng r = {4144};
  int64_t seen[1] = {0};
  const int ctr[1] = {73};
  tk_rule_modes(&r, 2, tu_cases(8) < 3 ? 3 : tu_cases(8), tk_s41b_set, tk_s41b_run, ctr, 1, seen);
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#endif
}
/* Session 42 (copy_run_table_entries, counter 74; copy_small_run_bytes, counter 75): copies of
 * short common runs (dim 0 first in both, 1-40 elements of at most 128 bytes) followed by a dim
 * the source reads reversed (form 0) or one that is not the run's continuation there (form 1:
 * the source's dims 1 and 2 swapped), the outer dims permuted; every kind, views shifted 0-3
 * elements, 1 and 2 threads, the rules on and off; every element checked, nothing written
 * outside the view; the counters move only when on. */
#define TK_S42(S, T, VAL)                                                                        \
  static void tk_s42_##S(tu_rng *r, int form) {                                                 \
    const int rank = (int)tu_int(r, 3, 5);                                                      \
    int64_t dims[5], perm[5], st[5], n = 1, s = 1;                                              \
    dims[0] = tu_int(r, 1, 128 / (int64_t)sizeof(T) < 40 ? 128 / (int64_t)sizeof(T) : 40);     \
    dims[1] = tu_int(r, 2, 12);                                                                 \
    for (int k = 2; k < rank; k++) dims[k] = tu_int(r, 2, 30);                                  \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    if (form) { perm[1] = 2; perm[2] = 1; }                                                     \
    if (tu_int(r, 0, 1) && rank > 3) { int64_t t = perm[rank - 1]; perm[rank - 1] = perm[3]; perm[3] = t; } \
    TK_GUARDED_COPY(S, T, VAL, (form == 0 && a == 1) || (a > 2 && tu_int(r, 0, 5) == 0), "s42 form", form) \
  }
TK_FIVE_KINDS(TK_S42)
static void tk_s42_set(bool on) {
  TK_TUNE(copy_unit_flips, 0); /* (these runs' tables, not units: test_s46_units) */
  TK_TUNE(copy_run_table_entries, on ? 1024 : 256);
  TK_TUNE(copy_small_run_bytes, on ? 64 : 0);
}
static void tk_s42_run(tu_rng *r, int form) {
  tk_s42_u8(r, form); tk_s42_u16(r, form); tk_s42_f32(r, form); tk_s42_f64(r, form); tk_s42_c128(r, form);
}
static void test_s42_run_tables(void **st) {
  (void)st;
  tu_rng r = {4242};
  int64_t seen[2] = {0};
  const int ctr[2] = {74, 75};
  tk_rule_modes(&r, 2, tu_cases(6) < 3 ? 3 : tu_cases(6), tk_s42_set, tk_s42_run, ctr, 2, seen);
  TK_TUNE(copy_unit_flips, 1);
  assert_true(seen[0] > 0);
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(seen[1] > 0);
#endif
}
/* Session 43 (copy_wide_rows, counter 76; copy_chain_next_prefetch, counter 77): transposes of
 * 1- and 2-byte kinds whose source rows hold 9-63 bytes (dim 0 of the source, 9-63 bytes long,
 * not first in the destination): form 0 a long dim next in the source led the destination
 * (records split into streams), form 1 any permutation of 4-5 dims; form 2 the same as form 0
 * with source rows of 300-900 elements (tiles in chains along them: counter 77 at each
 * chain's end when buffered); dim 0 or another dim read reversed in some; views shifted 0-3
 * elements, 1 and 2 threads, buffered and unbuffered tiles, the rule in both modes and off;
 * every element checked against the naive reference, nothing written outside the view, the
 * counter moves only when on. The wide blocks read rows 16-64 bytes wide: rows near the end of
 * the source (here its last element is the allocation's, but for 4 guard elements) go through
 * the stack copy (ASan sees any read past it). */
#define TK_S43(S, T, VAL)                                                                        \
  static void tk_s43_##S(tu_rng *r, int form) {                                                 \
    const int rank = form == 1 ? (int)tu_int(r, 4, 5) : form == 2 ? 4 : 3;                     \
    int64_t dims[5], perm[5], st[5], n = 1, s = 1;                                              \
    dims[0] = form == 2 ? tu_int(r, 300, 900) : tu_int(r, 9 / (int64_t)sizeof(T) + 1, 63 / (int64_t)sizeof(T)); \
    dims[1] = form == 1 ? tu_int(r, 2, 40) : form == 2 ? tu_int(r, 40, 100) : tu_int(r, 64, 300); \
    for (int k = 2; k < rank; k++) dims[k] = tu_int(r, 2, form == 1 ? 12 : 6);                 \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    for (int k = rank - 1; form == 1 && k > 0; k--) {                                           \
      int j = (int)tu_int(r, 0, k);                                                             \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    if (form != 1) { perm[0] = 1; perm[1] = tu_int(r, 0, 1) ? 0 : 2; perm[2] = 2 - perm[1]; }  \
    if (perm[0] == 0) { perm[0] = perm[1]; perm[1] = 0; }                                       \
    const int64_t rv = tu_int(r, -1, rank - 1); /* (-1: none) */                                \
    TK_GUARDED_COPY(S, T, VAL, a == rv, "s43 form", form)                                      \
  }
TK_S43(u8, tk_u8, TK_U8VAL)
TK_S43(u16, tk_u16, TK_U16VAL)
static void tk_s43_set(bool on) {
  TK_TUNE(copy_wide_rows, on ? 2 : 0);
  TK_TUNE(copy_chain_next_prefetch, on);
}
static void tk_s43_set1(bool on) { TK_TUNE(copy_wide_rows, on ? 1 : 0); }
static void tk_s43_run(tu_rng *r, int form) { tk_s43_u8(r, form); tk_s43_u16(r, form); }
static void test_s43_wide_rows(void **st) {
  (void)st;
  tu_rng r = {4343};
  int64_t seen[2] = {0};
  const int ctr[2] = {76, 77};
  tk_rule_modes(&r, 3, tu_cases(8) < 3 ? 3 : tu_cases(8), tk_s43_set, tk_s43_run, ctr, 2, seen);
  tk_rule_modes(&r, 2, tu_cases(4) < 2 ? 2 : tu_cases(4), tk_s43_set1, tk_s43_run, ctr, 1, seen);
  assert_true(seen[1] > 0);
#if TFE__KHAVE_TR8 && defined(__AVX512BW__)
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#else
  assert_int_equal(seen[0], 0); /* (no wide blocks without AVX-512BW) */
#endif
}
/* Session 44 (copy_flip_source_dims 4, counter 78): transposes whose G1 is one dim that the
 * source reads reversed and that is not its run (form 0: [u, v, w] read as [u, w, v], u a run
 * of 1-90 elements, v 20-300 reversed; form 1: [u, v, w, x] read as [u, w, v, x]; form 2: a
 * random permutation of 3-5 dims, any of them reversed), every kind, views shifted 0-3
 * elements; in place and streamed, 1 and 2 threads, 4 against 3; every element checked,
 * nothing written outside the view; the counter moves only at 4. */
#define TK_S44(S, T, VAL)                                                                        \
  static void tk_s44_##S(tu_rng *r, int form) {                                                \
    const int rank = form == 0 ? 3 : form == 1 ? 4 : (int)tu_int(r, 3, 5);                     \
    int64_t dims[5], perm[5] = {0, 2, 1, 3, 4}, st[5], n = 1, s = 1;                            \
    dims[0] = tu_int(r, 1, 90); dims[1] = tu_int(r, 20, 300); dims[2] = tu_int(r, 20, 300);    \
    dims[3] = tu_int(r, 2, 5); dims[4] = tu_int(r, 2, 40);                                      \
    if (form == 2) {                                                                            \
      for (int k = 0; k < rank; k++) dims[k] = tu_int(r, 0, 1) ? tu_int(r, 2, 9) : tu_int(r, 10, 200); \
      for (int k = rank - 1; k > 0; k--) {                                                      \
        int j = (int)tu_int(r, 0, k);                                                           \
        int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                    \
      }                                                                                         \
    }                                                                                           \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = rank - 1; n > 200000; k = k > 1 ? k - 1 : rank - 1)                            \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    TK_GUARDED_COPY(S, T, VAL, form < 2 ? a == 1 : tu_int(r, 0, 2) == 0, "s44 form", form)     \
  }
TK_FIVE_KINDS(TK_S44)
static void tk_s44_set(bool on) { TK_TUNE(copy_flip_source_dims, on ? 4 : 3); }
static void tk_s44_run(tu_rng *r, int form) {
  tk_s44_u8(r, form); tk_s44_u16(r, form); tk_s44_f32(r, form); tk_s44_f64(r, form); tk_s44_c128(r, form);
}
static void test_s44_flip_lone_g1(void **st) {
  (void)st;
  tu_rng r = {4444};
  int64_t seen[1] = {0};
  const int ctr[1] = {78};
  tk_rule_modes(&r, 3, tu_cases(8) < 3 ? 3 : tu_cases(8), tk_s44_set, tk_s44_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 45 (copy_run_tile_bytes 1 MiB, copy_run_tile_max_bytes, counters 26 and 81): common
 * leading runs of 4-68 KiB that a plain block reads alone, the source continuing them along a
 * later destination dim, tiled as a transpose of runs (form 0: [u, v, w] read as [u, w, v];
 * form 1: [u, v, w, x] read as [u, x, v, w]; form 2: 3-5 dims, u first, the others in a random
 * order), any dim reversed, every kind, views shifted 0-3 elements; in place and streamed, 1
 * and 2 threads, against session 20's 4096 bytes without the cap; every element checked,
 * nothing written outside the view; the counters move only with the rule. */
#define TK_S45(S, T, VAL)                                                                        \
  static void tk_s45_##S(tu_rng *r, int form) {                                                \
    const int64_t es = (int64_t)sizeof(T);                                                      \
    const int rank = form == 0 ? 3 : form == 1 ? 4 : (int)tu_int(r, 3, 5);                     \
    int64_t dims[5], perm[5] = {0, 2, 1, 3, 4}, st[5], n = 1, s = 1;                            \
    dims[0] = tu_int(r, 4096 / es, 70000 / es);                                                 \
    for (int k = 1; k < 5; k++) dims[k] = tu_int(r, 0, 3) ? tu_int(r, 2, 9) : 1;                \
    if (form == 1) { perm[1] = 3; perm[2] = 1; perm[3] = 2; }                                   \
    if (form == 2)                                                                              \
      for (int k = rank - 1; k > 1; k--) {                                                      \
        int j = (int)tu_int(r, 1, k);                                                           \
        int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                    \
      }                                                                                         \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = rank - 1; n * es > 600000; k = k > 1 ? k - 1 : rank - 1) /* (dims 2 may go to 1) */ \
      if (dims[k] > 1) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    TK_GUARDED_COPY(S, T, VAL, tu_int(r, 0, 3) == 0, "s45 form", form)                          \
  }
TK_FIVE_KINDS(TK_S45)
static void tk_s45_set(bool on) {
  TK_TUNE(copy_run_tile_bytes, on ? (int64_t)1 << 20 : 4096);
  TK_TUNE(copy_run_tile_max_bytes, on ? 262144 : 0);
}
static void tk_s45_run(tu_rng *r, int form) {
  tk_s45_u8(r, form); tk_s45_u16(r, form); tk_s45_f32(r, form); tk_s45_f64(r, form); tk_s45_c128(r, form);
}
static void test_s45_long_run_tiles(void **st) {
  (void)st;
  tu_rng r = {4545};
  int64_t seen[2] = {0};
  const int ctr[2] = {26, 81};
  tk_rule_modes(&r, 3, tu_cases(6) < 3 ? 3 : tu_cases(6), tk_s45_set, tk_s45_run, ctr, 2, seen);
  assert_true(seen[0] > 0 && seen[1] > 0); /* (run tiles; of them those whose G1 the cap cut) */
}
/* Session 44 (copy_rev_records, counter 79): records that the source reads backwards, one after
 * another in both (form 0: [r, a, b] read as [r reversed, a, b], numpy's x[..., ::-1], r 1-70
 * elements, so that records of 1-64 bytes and longer ones meet; form 1: [r, a, b, c] read as
 * [r reversed, a, c reversed, b]; form 2: [r, a, b] read as [r reversed, b, a]: records apart
 * in the source), every kind, views shifted 0-3 elements; in place and streamed, 1 and 2
 * threads, the rule on and off; every element checked, nothing written outside the view; the
 * counters (79: columns of tiles, 80: blocks of r x a, k_copy_rev_blocks_) move only when on. */
#define TK_S44R(S, T, VAL)                                                                       \
  static void tk_s44r_##S(tu_rng *r, int form) {                                               \
    const int rank = form == 1 ? 4 : 3;                                                         \
    int64_t dims[4] = {tu_int(r, 0, 2) ? tu_int(r, 1, 64 / (int64_t)sizeof(T)) : tu_int(r, 1, 70), \
                       tu_int(r, 2, 300), tu_int(r, 2, 200), tu_int(r, 2, 9)};                  \
    int64_t perm[4] = {0, 1, 2, 3}, st[4], n = 1, s = 1;                                        \
    if (form == 1) { perm[2] = 3; perm[3] = 2; }                                                \
    if (form == 2) { perm[1] = 2; perm[2] = 1; }                                                \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    for (int k = rank - 1; n > 200000; k = k > 1 ? k - 1 : rank - 1)                            \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    TK_GUARDED_COPY(S, T, VAL, a == 0 || (form == 1 && a == 3), "s44r form", form)             \
  }
TK_FIVE_KINDS(TK_S44R)
static void tk_s44r_set(bool on) { TK_TUNE(copy_rev_records, on); }
static void tk_s44r_run(tu_rng *r, int form) {
  tk_s44r_u8(r, form); tk_s44r_u16(r, form); tk_s44r_f32(r, form); tk_s44r_f64(r, form); tk_s44r_c128(r, form);
}
static void test_s44_rev_records(void **st) {
  (void)st;
  tu_rng r = {4445};
  int64_t seen[2] = {0};
  const int ctr[2] = {79, 80};
  tk_rule_modes(&r, 3, tu_cases(10) < 4 ? 4 : tu_cases(10), tk_s44r_set, tk_s44r_run, ctr, 2, seen);
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(seen[0] > 0 && seen[1] > 0); /* (columns of tiles; blocks) */
#else
  assert_true(seen[0] == 0 && seen[1] == 0);
#endif
}
/* Session 46 (units.h): copies whose leading run is common to both and short, planned as units.
 * Form 0: [r, a, b, c] with r read backwards and kept first in the destination, the rest
 * permuted (u8 r = 4, u16 r = 2: units of 4 bytes copied as i32 and turned round in one pass
 * where the destination is dense, copy_unit_kinds 2, counter 82; other kinds r 2-4); form 1:
 * the same with runs of 2-64 bytes (units turned round in unit tiles a register at a time);
 * form 2: [r, u, a, b, c] read as [r, a, c, b, u] (u16 [3,7,31,47,14,6,25] perm
 * [0,2,6,3,5,4,1]): G0 the destination's a x c units, far apart in the source, a table of up
 * to 1024 units (copy_wide_tables 2, counter 83), r reversed in one case of three; form 3:
 * [r, m, a, b] read as [r, m reversed, a, b] or [r, m reversed, b, a], r reversed in one case
 * of three (numpy's flips: a plain copy of runs through a table, as units, copy_unit_flips,
 * counter 84). Every kind,
 * views shifted 0-3 elements; in place and streamed, 1 and 2 threads, the rules on and off;
 * every element checked, nothing written outside the view; the counters move only when on. */
#define TK_S46(S, T, VAL)                                                                        \
  static void tk_s46_##S(tu_rng *r, int form) {                                                \
    const int64_t es = (int64_t)sizeof(T);                                                      \
    const int rank = form == 2 ? 5 : 4;                                                         \
    int64_t dims[5], perm[5] = {0, 1, 2, 3, 4}, st[5], n = 1, s = 1;                            \
    if (form == 3) { /* (a flip: runs in reverse order, the outer dims in order or swapped) */  \
      const int64_t d3[4] = {tu_int(r, 2, 255 / es < 40 ? 255 / es : 40), tu_int(r, 2, 40), tu_int(r, 2, 200), tu_int(r, 2, 5)}; \
      memcpy(dims, d3, sizeof d3);                                                              \
      if (tu_int(r, 0, 1)) { perm[2] = 3; perm[3] = 2; }                                        \
    } else if (form == 2) {                                                                     \
      const int64_t d2[5] = {tu_int(r, 2, 7), tu_int(r, 3, 8), tu_int(r, 10, 40), tu_int(r, 2, 4), tu_int(r, 10, 40)}; \
      memcpy(dims, d2, sizeof d2);                                                              \
      perm[1] = 2; perm[2] = 4; perm[3] = 3; perm[4] = 1;                                       \
    } else {                                                                                    \
      dims[0] = form == 1 ? tu_int(r, 2, 64 / es) : es <= 2 ? 4 / es : tu_int(r, 2, 4);        \
      for (int k = 1; k < 4; k++) dims[k] = tu_int(r, 2, k == 3 ? 40 : 60);                    \
      do                                                                                        \
        for (int k = 3; k > 1; k--) {                                                           \
          int j = (int)tu_int(r, 1, k);                                                         \
          int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                  \
        }                                                                                       \
      while (perm[1] == 1 && perm[2] == 2);                                                     \
    }                                                                                           \
    for (int k = 0; k < rank; k++) n *= dims[k];                                                \
    static const int order[4] = {3, 1, 4, 2};                                                   \
    for (int q = 0; n > 150000; q = (q + 1) % 4) {                                              \
      const int k = order[q] < rank ? order[q] : 1;                                             \
      if (dims[k] > 2) { n = n / dims[k] * (dims[k] / 2); dims[k] /= 2; }                      \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    TK_GUARDED_COPY(S, T, VAL, form == 3 ? a == 1 || (a == 0 && tu_int(r, 0, 2) == 0) : a == 0 && (form < 2 || tu_int(r, 0, 2) == 0), \
                    "s46 form", form)                                                           \
  }
TK_FIVE_KINDS(TK_S46)
static void tk_s46_set(bool on) {
  TK_TUNE(copy_unit_kinds, on ? 2 : 1);
  TK_TUNE(copy_wide_tables, on ? 2 : 1);
  TK_TUNE(copy_rev_records, on); /* (off: units turned round one by one) */
  TK_TUNE(copy_unit_flips, on);
}
static void tk_s46_run(tu_rng *r, int form) {
  tk_s46_u8(r, form); tk_s46_u16(r, form); tk_s46_f32(r, form); tk_s46_f64(r, form); tk_s46_c128(r, form);
}
static void test_s46_units(void **st) {
  (void)st;
  tu_rng r = {4646};
  int64_t seen[3] = {0};
  const int ctr[3] = {82, 83, 84};
  tk_rule_modes(&r, 4, tu_cases(10) < 4 ? 4 : tu_cases(10), tk_s46_set, tk_s46_run, ctr, 3, seen);
  assert_true(seen[1] > 0 && seen[2] > 0); /* (wide unit tables; flips as units) */
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(seen[0] > 0); /* (reversed 4-byte units as i32) */
#else
  assert_int_equal(seen[0], 0);
#endif
}
/* Session 47 (bothruns.h): copies of 1- and 2-byte kinds whose destination and source runs are
 * short and share dims, run as tiles of whole runs on both sides (counter 85). Random
 * permutations of many small dims (2-4; form 0: ranks 8-11, at most 60 000 elements, tiles of at
 * most 4 KiB; form 1: ranks 12-15, at most 520 000 elements, the default 32 KiB tiles),
 * a dim read backwards in one case of four; every kind (4-16 bytes: counter 86, session 48), views shifted
 * 0-3 elements; in place and streamed, 1 and 2 threads, the rule on and off; every element
 * checked, nothing written outside the view; the counter moves only when on. */
#define TK_S47(S, T, VAL)                                                                        \
  static void tk_s47_##S(tu_rng *r, int form) {                                                \
    const int rank = form == 0 ? (int)tu_int(r, 8, 11) : (int)tu_int(r, 12, 15);               \
    const int64_t cap = form == 0 ? 60000 : 520000;                                             \
    int64_t dims[15], perm[15], st[15], n = 1, s = 1;                                           \
    for (int k = 0; k < rank; k++) {                                                            \
      dims[k] = tu_int(r, 0, 5) == 0 ? 4 : tu_int(r, 2, 3);                                     \
      if (n * dims[k] > cap) dims[k] = 1;                                                       \
      n *= dims[k];                                                                             \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    for (int k = rank - 1; k > 0; k--) {                                                        \
      int j = (int)tu_int(r, 0, k);                                                             \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    const int64_t flip = tu_int(r, 0, 3) == 0 ? tu_int(r, 0, rank - 1) : -1;                    \
    TK_TUNE(copy_both_run_tile_bytes, tfe__st.tune.copy_both_run_tile_bytes ? (form == 0 ? 4096 : 32768) : 0); \
    TK_GUARDED_COPY(S, T, VAL, a == flip, "s47 form", form)                                     \
  }
TK_FIVE_KINDS(TK_S47)
static void tk_s47_set(bool on) { TK_TUNE(copy_both_run_tile_bytes, on ? 32768 : 0); }
static void tk_s47_run(tu_rng *r, int form) {
  tk_s47_u8(r, form); tk_s47_u16(r, form);
  if (form == 0) { tk_s47_f32(r, form); tk_s47_f64(r, form); tk_s47_c128(r, form); }
}
static void test_s47_both_runs(void **st) {
  (void)st;
  tu_rng r = {4747};
  int64_t seen[1] = {0};
  const int ctr[1] = {85};
  tk_rule_modes(&r, 2, tu_cases(12) < 8 ? 8 : tu_cases(12), tk_s47_set, tk_s47_run, ctr, 1, seen);
#if TFE__KHAVE_PIECES12
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#else
  assert_int_equal(seen[0], 0);
#endif
}
/* Session 48: tiles of both runs for 4-, 8- and 16-byte kinds (counter 86) and for 1- and 2-byte
 * gathers and short G1s (copy_both_run_gathers), on session 47's random permutations of many small
 * dims (both forms, every kind): every element checked, nothing written outside the view; counter
 * 86 moves only when on. */
static void tk_s48_set(bool on) {
  TK_TUNE(copy_both_run_wide, on);
  TK_TUNE(copy_both_run_gathers, on ? 2 : 0);
}
static void tk_s48_run(tu_rng *r, int form) {
  tk_s47_u8(r, form); tk_s47_u16(r, form); tk_s47_f32(r, form); tk_s47_f64(r, form); tk_s47_c128(r, form);
}
static void test_s48_wide_both_runs(void **st) {
  (void)st;
  tu_rng r = {4848};
  int64_t seen[1] = {0};
  const int ctr[1] = {86};
  tk_rule_modes(&r, 2, tu_cases(12) < 8 ? 8 : tu_cases(12), tk_s48_set, tk_s48_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 49 (copy_next_spread, counters 87 and 88): transpose tiles ask for the next tile's
 * source a share before each register block. Form 0: batches of small transposes, the source
 * [a, b, c, d] read as [b, a, c, d] (a, b 10-150, c 2-40, d 1-8: dense tiles one after another);
 * form 1: random permutations of 3-5 dims of 6-90; a dim read backwards in one case of three;
 * every kind, views shifted 0-3 elements, in place and streamed (buffered tiles), 1 and 2
 * threads, the rule on and off; every element checked, nothing written outside the view. */
#define TK_S49(S, T, VAL)                                                                        \
  static void tk_s49_##S(tu_rng *r, int form) {                                                \
    const int rank = form == 0 ? 4 : (int)tu_int(r, 3, 5);                                     \
    int64_t dims[5], perm[5], st[5], n = 1, s = 1;                                              \
    for (int k = 0; k < rank; k++) {                                                            \
      dims[k] = form == 0 ? (k < 2 ? tu_int(r, 10, 150) : k == 2 ? tu_int(r, 2, 40) : tu_int(r, 1, 8)) \
                          : tu_int(r, 6, 90);                                                   \
      if (n * dims[k] > 400000) dims[k] = 400000 / n > 1 ? 400000 / n : 1;                      \
      n *= dims[k];                                                                             \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { perm[k] = k; st[k] = s; s *= dims[k]; }                    \
    if (form == 0) { perm[0] = 1; perm[1] = 0; }                                                \
    else                                                                                        \
      for (int k = rank - 1; k > 0; k--) {                                                      \
        int j = (int)tu_int(r, 0, k);                                                           \
        int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                    \
      }                                                                                         \
    const int64_t flip = tu_int(r, 0, 2) == 0 ? tu_int(r, 0, rank - 1) : -1;                    \
    TK_GUARDED_COPY(S, T, VAL, a == flip, "s49 form", form)                                     \
  }
TK_FIVE_KINDS(TK_S49)
static void tk_s49_set(bool on) {
  TK_TUNE(copy_next_spread, on ? 2 : 0);
  TK_TUNE(copy_both_run_tile_bytes, 0); /* (bothruns.h would take some of these tiles) */
}
static void tk_s49_run(tu_rng *r, int form) {
  tk_s49_u8(r, form); tk_s49_u16(r, form); tk_s49_f32(r, form); tk_s49_f64(r, form); tk_s49_c128(r, form);
}
static void test_s49_next_spread(void **st) {
  (void)st;
  tu_rng r = {4949};
  int64_t seen[2] = {0, 0};
  const int ctr[2] = {87, 88};
  tk_rule_modes(&r, 2, tu_cases(10) < 6 ? 6 : tu_cases(10), tk_s49_set, tk_s49_run, ctr, 2, seen);
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) assert_true(seen[0] > 0 && seen[1] > 0);
#else
  assert_true(seen[0] == 0 && seen[1] == 0);
#endif
}
/* Session 50 (copy_both_run_split_bytes, counter 89): tiles of both runs split a dim where a
 * whole one would not fit. Form 0: the source [a, b, c, d, e, f] read as [e, a, d, c, b, f] (a
 * 2-12, b 40-120 with divisors, c 2-8, d 6-25, e 2-6, f 1-3: the destination's run e x a under a
 * few lines, the source's a x b; u16 [10,112,15,7,21,4,6] of the sweep in small); form 1: random
 * permutations of 5-7 dims, small (2-6) and mid-sized (20-120) mixed; tiles of 8 or 32 KiB, a
 * dim read backwards in one case of four; every kind, views shifted 0-3 elements, in place and
 * streamed, 1 and 2 threads, the rule on and off; every element checked, nothing written outside
 * the view; the counter moves only when on. */
#define TK_S50(S, T, VAL)                                                                        \
  static void tk_s50_##S(tu_rng *r, int form) {                                                \
    static const int64_t bs[8] = {40, 48, 56, 60, 72, 84, 96, 112};                            \
    const int rank = form == 0 ? 6 : (int)tu_int(r, 5, 7);                                     \
    int64_t dims[7], perm[7] = {4, 0, 3, 2, 1, 5, 6}, st[7], n = 1, s = 1;                      \
    for (int k = 0; k < rank; k++) {                                                            \
      if (form == 0) {                                                                          \
        static const int64_t lo[6] = {2, 0, 2, 6, 2, 1}, hi[6] = {12, 7, 8, 25, 6, 3};         \
        dims[k] = tu_int(r, lo[k], hi[k]);                                                      \
        if (k == 1) dims[k] = bs[dims[k]];                                                      \
      } else dims[k] = tu_int(r, 0, 2) ? tu_int(r, 2, 6) : tu_int(r, 20, 120);                  \
      if (n * dims[k] > 300000) dims[k] = 300000 / n > 1 ? 300000 / n : 1;                      \
      n *= dims[k];                                                                             \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    for (int k = rank - 1; form == 1 && k >= 0; k--) {                                          \
      perm[k] = k;                                                                              \
      int j = (int)tu_int(r, k, rank - 1);                                                      \
      int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                      \
    }                                                                                           \
    const int64_t flip = tu_int(r, 0, 3) == 0 ? tu_int(r, 0, rank - 1) : -1;                    \
    TK_TUNE(copy_both_run_tile_bytes, tu_int(r, 0, 1) ? 8192 : 32768);                          \
    TK_GUARDED_COPY(S, T, VAL, a == flip, "s50 form", form)                                     \
  }
TK_FIVE_KINDS(TK_S50)
static void tk_s50_set(bool on) {
  TK_TUNE(copy_both_run_split_bytes, on ? 256 : 0);
  TK_TUNE(copy_both_run_wide, 1); /* (4-16-byte kinds take these tiles on every CPU) */
}
static void tk_s50_run(tu_rng *r, int form) {
  tk_s50_u8(r, form); tk_s50_u16(r, form); tk_s50_f32(r, form); tk_s50_f64(r, form); tk_s50_c128(r, form);
}
static void test_s50_split_runs(void **st) {
  (void)st;
  tu_rng r = {5050};
  int64_t seen[1] = {0};
  const int ctr[1] = {89};
  tk_rule_modes(&r, 2, tu_cases(8) < 4 ? 4 : tu_cases(8), tk_s50_set, tk_s50_run, ctr, 1, seen);
  TK_TUNE(copy_both_run_tile_bytes, 32768);
  TK_TUNE(copy_both_run_wide, -1);
  assert_true(seen[0] > 0);
}
/* Session 50, two forms. 0 (copy_both_run_unit_bytes, counter 90): a run common to both sides
 * as the element of tiles of both runs: the source [u, a, b, c, d, e, f] read with u first and
 * the others shuffled (u: 8 to 128 bytes, whole 8-byte words; f64 [7,3,27,4,5,167,8] perm
 * [0,4,2,5,3,6,1] of the sweep in small). 1 (copy_both_run_tiny_bytes, counter 91): the source
 * [a, b, c, d, e, f] read as [b, f, e, d, a, c] (a 3-7, b 12-40: buffered transpose tiles of b x a
 * under 1 KiB; u16 [5,24,67,12,8,2,51] of the sweep in small). A dim read backwards in one case
 * of four; every kind, views shifted 0-3 elements, in place and streamed, 1 and 2 threads, the
 * rules on and off; every element checked, nothing written outside the view; the counters move
 * only when on. */
#define TK_S50U(S, T, VAL)                                                                       \
  static void tk_s50u_##S(tu_rng *r, int form) {                                               \
    const int64_t es = (int64_t)sizeof(T), w = es >= 8 ? 1 : 8 / es;                            \
    const int rank = form == 0 ? 7 : 6;                                                         \
    int64_t dims[7], perm[7] = {1, 5, 4, 3, 0, 2, 6}, st[7], n = 1, s = 1;                      \
    for (int k = 0; k < rank; k++) {                                                            \
      static const int64_t lo[2][7] = {{1, 2, 10, 2, 2, 20, 2}, {3, 12, 20, 5, 2, 10, 1}};       \
      static const int64_t hi[2][7] = {{16, 6, 40, 6, 8, 80, 8}, {7, 40, 90, 20, 10, 50, 1}};   \
      dims[k] = tu_int(r, lo[form][k], hi[form][k]);                                            \
      if (form == 0 && k == 0) { dims[0] *= w; while (dims[0] * es > 128) dims[0] -= w; }       \
      if (dims[0] < 2) dims[0] = 2;                                                             \
      if (n * dims[k] > 300000) dims[k] = 300000 / n > 1 ? 300000 / n : 1;                      \
      n *= dims[k];                                                                             \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; }                                 \
    if (form == 0) {                                                                            \
      for (int k = 0; k < rank; k++) perm[k] = k;                                               \
      for (int k = rank - 1; k > 1; k--) {                                                      \
        int j = (int)tu_int(r, 1, k);                                                           \
        int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                    \
      }                                                                                         \
    }                                                                                           \
    const int64_t flip = tu_int(r, 0, 3) == 0 ? tu_int(r, 1, rank - 1) : -1;                    \
    TK_GUARDED_COPY(S, T, VAL, a == flip, "s50u form", form)                                    \
  }
TK_FIVE_KINDS(TK_S50U)
static void tk_s50u_set(bool on) {
  TK_TUNE(copy_both_run_unit_bytes, on ? 128 : 0);
  TK_TUNE(copy_both_run_tiny_bytes, on ? 1024 : 0);
  TK_TUNE(copy_both_run_wide, 1); /* (4-16-byte kinds take these tiles on every CPU) */
}
static void tk_s50u_run(tu_rng *r, int form) {
  tk_s50u_u8(r, form); tk_s50u_u16(r, form);
  if (form == 0) { tk_s50u_f32(r, form); tk_s50u_f64(r, form); tk_s50u_c128(r, form); }
}
static void test_s50_units_tiny(void **st) {
  (void)st;
  tu_rng r = {5052};
  int64_t seen[2] = {0, 0};
  const int ctr[2] = {90, 91};
  tk_rule_modes(&r, 2, tu_cases(8) < 4 ? 4 : tu_cases(8), tk_s50u_set, tk_s50u_run, ctr, 2, seen);
  TK_TUNE(copy_both_run_wide, -1);
  assert_true(seen[0] > 0);
#if TFE__KHAVE_PIECES12
  if (tfe__ksimd()) assert_true(seen[1] > 0);
#else
  assert_int_equal(seen[1], 0);
#endif
}
/* Session 51 (copy_both_run_gathers 2, counter 92): 1- and 2-byte gathers of register blocks run
 * as tiles of both runs, on session 47's random permutations of many small dims (both forms, u8
 * and u16; a dim read backwards in one case of four, views shifted 0-3, in place and streamed, 1
 * and 2 threads): every element checked, nothing written outside the view; the counter moves only
 * when on (off: session 48's rule, value 1). */
static void tk_s51_set(bool on) { TK_TUNE(copy_both_run_gathers, on ? 2 : 1); }
static void tk_s51_run(tu_rng *r, int form) { tk_s47_u8(r, form); tk_s47_u16(r, form); }
static void test_s51_gather_blocks(void **st) {
  (void)st;
  tu_rng r = {5151};
  int64_t seen[1] = {0};
  const int ctr[1] = {92};
  tk_rule_modes(&r, 2, tu_cases(12) < 8 ? 8 : tu_cases(12), tk_s51_set, tk_s51_run, ctr, 1, seen);
#if TFE__KHAVE_PIECES12
  if (tfe__ksimd()) assert_true(seen[0] > 0);
#else
  assert_int_equal(seen[0], 0);
#endif
}
/* Session 52 (copy_run_g1_table, counter 93): transposes whose G1 starts with two dims that make
 * one source run the plan cannot fuse. The source [a, b, c, d] (a 130-300 elements, b 3-9, c
 * 20-100, d 1-3) read as [c, a, b, d] with b backwards (form 0: u8 [152,201r,2176] perm [2,0,1]
 * of the sweep in small) or as [c, b, a, d] (form 1: the two apart in the destination); another
 * dim backwards in one case of four; every kind (the rule on for all of them), views shifted
 * 0-3 elements, in place and streamed, 1 and 2 threads; every element checked, nothing written
 * outside the view; the counter moves only when on. */
#define TK_S52(S, T, VAL)                                                                        \
  static void tk_s52_##S(tu_rng *r, int form) {                                                 \
    const int rank = 4;                                                                         \
    int64_t dims[4] = {tu_int(r, 130, 300), tu_int(r, 3, 9), tu_int(r, 20, 100), tu_int(r, 1, 3)}; \
    int64_t perm[4] = {2, 0, 1, 3}, st[4], n = 1, s = 1;                                        \
    if (form == 1) { perm[1] = 1; perm[2] = 0; }                                                \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; n *= dims[k]; }                   \
    const int64_t other = tu_int(r, 0, 3) == 0 ? (tu_int(r, 0, 1) ? 2 : 3) : -1;               \
    TK_GUARDED_COPY(S, T, VAL, (form == 0 && a == 1) || a == other, "s52 form", form)           \
  }
TK_FIVE_KINDS(TK_S52)
static void tk_s52_set(bool on) { TK_TUNE(copy_run_g1_table, on ? 16 : 0); }
static void tk_s52_run(tu_rng *r, int form) {
  tk_s52_u8(r, form); tk_s52_u16(r, form); tk_s52_f32(r, form); tk_s52_f64(r, form); tk_s52_c128(r, form);
}
static void test_s52_run_g1_tables(void **st) {
  (void)st;
  tu_rng r = {5252};
  int64_t seen[1] = {0};
  const int ctr[1] = {93};
  tk_rule_modes(&r, 2, tu_cases(6) < 3 ? 3 : tu_cases(6), tk_s52_set, tk_s52_run, ctr, 1, seen);
  TK_TUNE(copy_run_g1_table, 2);
  assert_true(seen[0] > 0);
}
/* Session 52 (copy_both_run_flips, counter 94): copies for tiles of both runs whose source run
 * is read backwards. The source [a, b, c, d, e] (a 3-40, b 2-12, c 2-20, d 4-24, e 1-4) with a
 * read backwards, read in a random order that does not start with a (form 0; f64 [53r,14,28r,
 * 9,4,26] perm [1,0,2,3,4,5] of the sweep in small) or as [b, a, c, d, e] with c backwards too
 * (form 1: a run continued by a second reversed dim); every kind, views shifted 0-3 elements, in
 * place and streamed, 1 and 2 threads; every element checked, nothing written outside the view;
 * the counter moves only when on. */
#define TK_S52F(S, T, VAL)                                                                       \
  static void tk_s52f_##S(tu_rng *r, int form) {                                                \
    const int rank = 5;                                                                         \
    int64_t dims[5] = {tu_int(r, 3, 40), tu_int(r, 2, 12), tu_int(r, 2, 20), tu_int(r, 4, 24), tu_int(r, 1, 4)}; \
    int64_t perm[5] = {1, 0, 2, 3, 4}, st[5], n = 1, s = 1;                                     \
    if (form == 0) {                                                                            \
      for (int k = rank - 1; k > 0; k--) {                                                      \
        int j = (int)tu_int(r, 0, k);                                                           \
        int64_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;                                    \
      }                                                                                         \
      if (perm[0] == 0) { perm[0] = perm[1]; perm[1] = 0; }                                     \
    }                                                                                           \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; n *= dims[k]; }                   \
    TK_GUARDED_COPY(S, T, VAL, a == 0 || (form == 1 && a == 2), "s52f form", form)              \
  }
TK_FIVE_KINDS(TK_S52F)
static void tk_s52f_set(bool on) {
  TK_TUNE(copy_both_run_flips, on);
  TK_TUNE(copy_both_run_wide, 1); /* (4-16-byte kinds take these tiles on every CPU) */
}
static void tk_s52f_run(tu_rng *r, int form) {
  tk_s52f_u8(r, form); tk_s52f_u16(r, form); tk_s52f_f32(r, form); tk_s52f_f64(r, form); tk_s52f_c128(r, form);
}
static void test_s52_both_run_flips(void **st) {
  (void)st;
  tu_rng r = {5253};
  int64_t seen[1] = {0};
  const int ctr[1] = {94};
  tk_rule_modes(&r, 2, tu_cases(8) < 4 ? 4 : tu_cases(8), tk_s52f_set, tk_s52f_run, ctr, 1, seen);
  TK_TUNE(copy_both_run_wide, -1);
  if (tfe__ksimd()) assert_true(seen[0] > 0);
}
/* Session 52 (copy_footprint_reversed, counter 95): gather tiles whose source has dims read
 * backwards ask for the next tile's runs too. The source [a, b, c, d, e, f, g] (a 3-8, b 4-10,
 * c 3-8, d 10-30, e 4-12, f, g 2-3) read as [a, d, b, f, e, c, g] with a and c backwards (form 0:
 * f64 [6r,8,6r,42,93,3,4] of the sweep in small; records of a read backwards) or with b
 * backwards (form 1); every kind, views shifted 0-3 elements, in place and streamed, 1 and 2
 * threads; every element checked, nothing written outside the view; the counter moves only
 * when on. */
#define TK_S52P(S, T, VAL)                                                                       \
  static void tk_s52p_##S(tu_rng *r, int form) {                                                \
    const int rank = 7;                                                                         \
    int64_t dims[7] = {tu_int(r, 3, 8), tu_int(r, 4, 10), tu_int(r, 3, 8), tu_int(r, 10, 30),   \
                       tu_int(r, 4, 12), tu_int(r, 2, 3), tu_int(r, 2, 3)};                     \
    int64_t perm[7] = {0, 3, 1, 5, 4, 2, 6}, st[7], n = 1, s = 1;                               \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; n *= dims[k]; }                   \
    TK_GUARDED_COPY(S, T, VAL, form == 0 ? a == 0 || a == 2 : a == 1, "s52p form", form)        \
  }
TK_FIVE_KINDS(TK_S52P)
static void tk_s52p_set(bool on) { TK_TUNE(copy_footprint_reversed, on); }
static void tk_s52p_run(tu_rng *r, int form) {
  tk_s52p_u8(r, form); tk_s52p_u16(r, form); tk_s52p_f32(r, form); tk_s52p_f64(r, form); tk_s52p_c128(r, form);
}
static void test_s52_reversed_footprints(void **st) {
  (void)st;
  tu_rng r = {5254};
  int64_t seen[1] = {0};
  const int ctr[1] = {95};
  tk_rule_modes(&r, 2, tu_cases(6) < 3 ? 3 : tu_cases(6), tk_s52p_set, tk_s52p_run, ctr, 1, seen);
  assert_true(seen[0] > 0);
}
/* Session 50 (copy_records_edge_bytes): copies between records and streams of 4-16-byte kinds
 * whose slices write partial lines go to the tile plans below 2 KiB streams (joins 1 KiB). Fixed
 * f64 and f32 copies through tfe_contiguous (a fresh 64-byte aligned result): splits of 4-element
 * records into streams of 44 (partial lines) and 48 elements (whole lines), a join of 3 streams
 * of 40; each checked element by element; with the rule on only the whole-line copy runs as
 * records (counter 67), with it off all three. Then session 39's random record copies with the
 * rule on (every element checked, nothing written outside the view). */
#define TK_S50R(S, T, VAL)                                                                        \
  static int64_t tk_s50r_##S(const int64_t *dims, const int64_t *perm, int rank) {               \
    int64_t n = 1, st[6], s = 1;                                                                  \
    for (int k = 0; k < rank; k++) { st[k] = s; s *= dims[k]; n *= dims[k]; }                    \
    T *src = malloc(sizeof(T) * (size_t)n);                                                       \
    for (int64_t i = 0; i < n; i++) src[i] = VAL(i);                                              \
    tfe_view_##S sv = {src, {rank, 0, {0}, {0}}, false};                                          \
    for (int k = 0; k < rank; k++) { sv.lay.dims[k] = dims[perm[k]]; sv.lay.strides[k] = st[perm[k]]; } \
    const int64_t before = tfe__st.kernel_stat[67];                                               \
    tfe_tensor_##S t = {0};                                                                       \
    assert_int_equal(tfe_contiguous_##S(&sv, TFE_COLMAJOR, &t), TFE_OK);                          \
    const int64_t took = tfe__st.kernel_stat[67] - before;                                        \
    int64_t idx[TFE_MAX_RANK] = {0}, dof = 0;                                                     \
    do {                                                                                          \
      int64_t so = 0;                                                                             \
      for (int k = 0; k < rank; k++) so += idx[k] * sv.lay.strides[k];                            \
      if (memcmp(&t.v.data[dof++], &src[so], sizeof(T))) fail_msg(#S " s50 records at %lld", (long long)dof - 1); \
    } while (tk_next(rank, sv.lay.dims, idx));                                                    \
    tfe_tensor_release_##S(&t);                                                                   \
    free(src);                                                                                    \
    return took;                                                                                  \
  }
TK_S50R(f64, double, TK_VAL)
TK_S50R(f32, float, TK_VAL)
static void test_s50_record_edges(void **st) {
  (void)st;
  static const int64_t split44[5] = {4, 44, 5, 30, 3}, split48[5] = {4, 48, 5, 30, 3}, sp[5] = {1, 4, 0, 2, 3};
  static const int64_t join40[5] = {40, 9, 5, 3, 6}, jp[5] = {3, 0, 2, 1, 4};
  tfe__st.kernel_stat_on = 1;
  tfe_set_num_threads(1);
  for (int on = 1; on >= 0; on--) {
    TK_TUNE(copy_records_edge_bytes, on ? 2048 : 0);
    const int64_t a = tk_s50r_f64(split44, sp, 5), b = tk_s50r_f64(split48, sp, 5), c = tk_s50r_f32(join40, jp, 5);
#if TFE__KHAVE_REC
    if (tfe__ksimd()) {
      assert_int_equal(a, !on);
      assert_int_equal(b, 1);
      assert_int_equal(c, !on);
    }
#else
    assert_true(a == 0 && b == 0 && c == 0);
#endif
  }
  TK_TUNE(copy_records_edge_bytes, 2048);
  tu_rng r = {5051};
  int64_t seen[1] = {0};
  const int ctr[1] = {67};
  tk_rule_modes(&r, 4, tu_cases(4) < 2 ? 2 : tu_cases(4), tk_s39_set, tk_s39_run, ctr, 1, seen);
  tfe_set_num_threads(0);
  tfe__st.kernel_stat_on = 0;
}
static void test_tuning_kernel(void **st) {
  (void)st;
  tfe_tuning d = tfe_tuning_default(), t = tfe_tuning_get();
  assert_int_equal(d.kernel_small_elems, 1024);
  assert_int_equal(d.kernel_parallel_min, 32768);
  assert_int_equal(d.copy_tile_bytes, 512);
  assert_int_equal(d.kernel_stream_min_bytes, (int64_t)16 << 20);
  assert_int_equal(d.copy_fresh_min_bytes, (int64_t)4 << 20);
  assert_int_equal(d.elementwise_fuse, -1);
  assert_int_equal(d.elementwise_column_cache_elems, 16384);
  assert_int_equal(d.copy_run_split_far_bytes, 2048);
  assert_int_equal(d.copy_shifted_rims, 1);
  assert_int_equal(d.kernel_table_input_runs, 1);
  assert_int_equal(d.copy_narrow_source_tiles, 0);
  assert_int_equal(d.copy_tile_pad, 1);
  assert_int_equal(d.copy_skew_lines, 2);
  assert_int_equal(d.copy_skew_run_bytes, 8192);
  assert_int_equal(d.copy_deinterleave_rows, 2);
  assert_int_equal(d.copy_long_row_bytes, -1);
  assert_int_equal(d.copy_block_segments, 2);
  assert_int_equal(d.copy_shared_keep, 1);
  assert_int_equal(d.copy_gather_blocks, 1);
  assert_int_equal(d.copy_unit_kinds, 2);
  assert_int_equal(d.copy_short_rows, 1);
  assert_int_equal(d.copy_shared_g0_bytes, 32);
  assert_int_equal(d.copy_run_piece_edges, 1);
  assert_int_equal(d.copy_chain_columns, 1);
  assert_int_equal(d.kernel_prefetch_l2, -1);
  assert_int_equal(d.copy_gather_source_run, 1);
  assert_int_equal(d.copy_small_wide, 1);
  assert_int_equal(d.copy_reverse_runs, 1);
  assert_int_equal(d.copy_run_stream_bytes, 256);
  assert_int_equal(d.copy_skew_short_cols, 1);
  assert_int_equal(d.copy_tile_slack, 25);
  assert_int_equal(d.copy_buf_short_rows, 128);
  assert_int_equal(d.copy_short_row_prefetch, 1024);
  assert_int_equal(d.copy_skew_rim_pct, 30);
  assert_int_equal(d.copy_quarter_st, 2);
  assert_int_equal(d.copy_skew_buf_src_bytes, -1);
  assert_int_equal(d.copy_narrow_records, 1);
  assert_int_equal(d.copy_col_stream_bytes, 512);
  assert_int_equal(d.copy_skew_min_row_bytes, 512);
  assert_int_equal(d.copy_records_src_order, 1);
  assert_int_equal(d.copy_run_tile_col_bytes, 3072);
  assert_int_equal(d.copy_buf_rim_pct, 25);
  assert_int_equal(d.copy_skew_tile_bytes, 1024);
  assert_int_equal(d.copy_buf_short_cols, 1);
  assert_int_equal(d.copy_run_table_entries, 1024);
  assert_int_equal(d.copy_small_run_bytes, 64);
  assert_int_equal(d.copy_wide_rows, 2);
  assert_int_equal(d.copy_chain_next_prefetch, 1);
  assert_int_equal(d.copy_rev_records, 1);
  assert_int_equal(d.copy_run_tile_max_bytes, 262144);
  assert_int_equal(d.copy_unit_flips, 1);
  assert_int_equal(d.copy_both_run_tile_bytes, 32768);
  assert_int_equal(d.copy_both_run_rho_bytes, -1);
  assert_int_equal(d.copy_both_run_wide, -1);
  assert_int_equal(d.copy_both_run_gathers, 2);
  assert_int_equal(d.copy_run_g1_table, 2);
  assert_int_equal(d.copy_both_run_flips, 1);
  assert_int_equal(d.copy_footprint_reversed, 1);
  assert_int_equal(d.copy_both_run_ask, 2);
  assert_int_equal(d.copy_next_spread, -1);
  assert_int_equal(d.copy_both_run_split_bytes, 256);
  assert_int_equal(d.copy_records_edge_bytes, 2048);
  assert_int_equal(d.copy_both_run_unit_bytes, 128);
  assert_int_equal(d.copy_both_run_tiny_bytes, 1024);
  assert_int_equal(d.kernel_table_tile_bytes, -1);
  assert_int_equal(d.copy_block_prefetch, 2);
  assert_int_equal(d.copy_edge_stores, 1);
  assert_int_equal(d.copy_block_prefetch_spread, 1);
  assert_int_equal(d.copy_short_runs, 1);
  assert_int_equal(d.copy_table_runs, 1);
  assert_int_equal(d.copy_source_chain_bytes, 2048);
  assert_int_equal(d.copy_gather_run_tiles, -1);
  assert_int_equal(d.copy_tiny_source_runs, 1);
  assert_int_equal(d.copy_run_tile_bytes, 1048576);
  assert_int_equal(d.copy_run_tile_cols, 128);
  assert_int_equal(d.copy_shared_run_dim, 2);
  assert_int_equal(d.copy_half_blocks, 1);
  assert_int_equal(d.copy_rim_scalar_cols, 3);
  assert_int_equal(d.copy_quarter_blocks, 2);
  assert_int_equal(d.copy_unit_run_bytes, 255);
  assert_int_equal(d.copy_unit_tile_bytes, 512);
  assert_int_equal(d.copy_unit_stream, 1);
  assert_int_equal(d.copy_unit_prefetch, 1);
  assert_int_equal(d.copy_lone_edge_bytes, 512);
  assert_int_equal(d.copy_wide_tables, 2);
  assert_int_equal(d.copy_next_prefetch, 2);
  assert_int_equal(d.copy_flip_source_dims, 4);
  assert_int_equal(d.copy_table_run_cut, 2);
  assert_int_equal(d.copy_g1_run_bytes, 32);
  assert_int_equal(d.copy_tiny_g0_wide_g1, 1);
  assert_int_equal(d.copy_buf_narrow_bytes, 16);
  assert_int_equal(d.copy_g1_run_dims, 1);
  assert_int_equal(d.kernel_stream_edge_lines, 1); /* (session 20: every CPU, -1 = AMD only) */
  assert_int_equal(t.copy_tile_bytes, d.copy_tile_bytes);
  tfe_tuning bad = t;
  bad.copy_tile_bytes = 0;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_tile_bytes");
  bad = t;
  bad.elementwise_fuse = 3;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "elementwise_fuse");
  bad = t;
  bad.copy_shifted_rims = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_shifted_rims");
  bad = t;
  bad.copy_run_tile_cols = 0;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_run_tile_cols");
  bad = t;
  bad.copy_rim_scalar_cols = 65;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_rim_scalar_cols");
  bad = t;
  bad.copy_unit_run_bytes = 4097;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_unit_run_bytes");
  bad = t;
  bad.copy_lone_edge_bytes = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_lone_edge_bytes");
  bad = t;
  bad.copy_buffered_tiles = 4; /* (sessions 22 and 27: 3 and 4 are modes; 5 and -2 are not) */
  assert_int_equal(tfe_tuning_set(&bad), TFE_OK);
  bad.copy_buffered_tiles = 5;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_buffered_tiles");
  bad.copy_buffered_tiles = -2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_buffered_tiles");
  /* one knob out of its range: TFE_ERR_INVALID, the knob named in the message */
#define TK_REJECT(knob, v) do { bad = t; bad.knob = (v); TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, #knob); } while (0)
  TK_REJECT(copy_wide_tables, 3);
  TK_REJECT(copy_next_prefetch, -1);
  TK_REJECT(copy_next_prefetch, 3);
  TK_REJECT(copy_flip_source_dims, 5);
  TK_REJECT(copy_table_run_cut, 3);
  TK_REJECT(copy_g1_run_bytes, -1);
  TK_REJECT(copy_tiny_g0_wide_g1, 2);
  TK_REJECT(copy_buf_narrow_bytes, 65);
  TK_REJECT(copy_g1_run_dims, -1);
  TK_REJECT(copy_shared_run_dim, 3);
  TK_REJECT(copy_stream_line_runs, 2);
  TK_REJECT(copy_interleave_rows, -1);
  TK_REJECT(copy_deinterleave_rows, 3);
  TK_REJECT(copy_skew_lines, 4);
  TK_REJECT(copy_skew_run_bytes, 32);
  TK_REJECT(copy_long_row_bytes, -2);
  TK_REJECT(copy_block_segments, 3);
  TK_REJECT(copy_block_segments, -1);
  TK_REJECT(copy_shared_keep, 2);
  TK_REJECT(copy_shared_keep, -1);
  TK_REJECT(copy_gather_blocks, 2);
  TK_REJECT(copy_gather_blocks, -1);
  TK_REJECT(copy_unit_kinds, 3);
  TK_REJECT(copy_unit_kinds, -1);
  TK_REJECT(copy_short_rows, 2);
  TK_REJECT(copy_short_rows, -1);
  TK_REJECT(copy_shared_g0_bytes, 0);
  TK_REJECT(copy_shared_g0_bytes, 65537);
  TK_REJECT(copy_run_piece_edges, 2);
  TK_REJECT(copy_run_piece_edges, -1);
  TK_REJECT(copy_chain_columns, 2);
  TK_REJECT(kernel_prefetch_l2, 2);
  TK_REJECT(kernel_prefetch_l2, -2);
  TK_REJECT(copy_gather_source_run, 2);
  TK_REJECT(copy_gather_source_run, -1);
  TK_REJECT(copy_small_wide, 3);
  TK_REJECT(copy_small_wide, -1);
  TK_REJECT(copy_reverse_runs, 2);
  TK_REJECT(copy_reverse_runs, -1);
  TK_REJECT(copy_run_stream_bytes, -1);
  TK_REJECT(copy_run_stream_bytes, ((int64_t)1 << 24) + 1);
  TK_REJECT(copy_skew_short_cols, 2);
  TK_REJECT(copy_skew_short_cols, -1);
  TK_REJECT(copy_quarter_blocks, -1);
  TK_REJECT(copy_tile_slack, 101);
  TK_REJECT(copy_tile_slack, -1);
  TK_REJECT(copy_buf_short_rows, (1 << 20) + 1);
  TK_REJECT(copy_buf_short_rows, -1);
  TK_REJECT(copy_short_row_prefetch, 65537);
  TK_REJECT(copy_short_row_prefetch, -1);
  TK_REJECT(copy_skew_rim_pct, 101);
  TK_REJECT(copy_skew_rim_pct, -1);
  TK_REJECT(copy_quarter_st, 3);
  TK_REJECT(copy_quarter_st, -1);
  TK_REJECT(copy_skew_buf_src_bytes, ((int64_t)1 << 20) + 1);
  TK_REJECT(copy_skew_buf_src_bytes, -2);
  TK_REJECT(copy_narrow_records, -1);
  TK_REJECT(copy_narrow_records, ((int64_t)1 << 40) + 1);
  TK_REJECT(copy_col_stream_bytes, -1);
  TK_REJECT(copy_col_stream_bytes, ((int64_t)1 << 24) + 1);
  TK_REJECT(copy_skew_min_row_bytes, -1);
  TK_REJECT(copy_skew_min_row_bytes, ((int64_t)1 << 24) + 1);
  TK_REJECT(copy_records_src_order, -1);
  TK_REJECT(copy_records_src_order, 2);
  TK_REJECT(copy_run_tile_col_bytes, -1);
  TK_REJECT(copy_run_tile_col_bytes, ((int64_t)1 << 20) + 1);
  TK_REJECT(copy_buf_rim_pct, -1);
  TK_REJECT(copy_buf_rim_pct, 101);
  TK_REJECT(copy_skew_tile_bytes, -1);
  TK_REJECT(copy_skew_tile_bytes, ((int64_t)1 << 24) + 1);
  TK_REJECT(copy_buf_short_cols, -1);
  TK_REJECT(copy_buf_short_cols, 2);
  TK_REJECT(copy_run_table_entries, 255);
  TK_REJECT(copy_run_table_entries, 1025);
  TK_REJECT(copy_small_run_bytes, -1);
  TK_REJECT(copy_small_run_bytes, 65);
  TK_REJECT(copy_wide_rows, -1);
  TK_REJECT(copy_wide_rows, 3);
  TK_REJECT(copy_chain_next_prefetch, -1);
  TK_REJECT(copy_chain_next_prefetch, 2);
  TK_REJECT(copy_rev_records, 2);
  TK_REJECT(copy_rev_records, -1);
  TK_REJECT(copy_run_tile_max_bytes, -1);
  TK_REJECT(copy_run_tile_max_bytes, ((int64_t)1 << 24) + 1);
  TK_REJECT(copy_unit_flips, 2);
  TK_REJECT(copy_both_run_tile_bytes, -1);
  TK_REJECT(copy_both_run_tile_bytes, 32769);
  TK_REJECT(copy_both_run_rho_bytes, -2);
  TK_REJECT(copy_both_run_wide, 2);
  TK_REJECT(copy_both_run_wide, -2);
  TK_REJECT(copy_both_run_ask, 3);
  TK_REJECT(copy_next_spread, 3);
  TK_REJECT(copy_next_spread, -2);
  TK_REJECT(copy_both_run_split_bytes, -1);
  TK_REJECT(copy_both_run_split_bytes, 32769);
  TK_REJECT(copy_records_edge_bytes, -1);
  TK_REJECT(copy_both_run_unit_bytes, -1);
  TK_REJECT(copy_both_run_unit_bytes, 4097);
  TK_REJECT(copy_both_run_tiny_bytes, -1);
  TK_REJECT(copy_both_run_gathers, -1);
  TK_REJECT(copy_both_run_gathers, 3);
  TK_REJECT(copy_run_g1_table, -1);
  TK_REJECT(copy_run_g1_table, 17);
  TK_REJECT(copy_both_run_flips, -1);
  TK_REJECT(copy_both_run_flips, 2);
  TK_REJECT(copy_footprint_reversed, -1);
  TK_REJECT(copy_footprint_reversed, 2);
  TK_REJECT(copy_quarter_blocks, 3);
  TK_REJECT(kernel_table_tile_bytes, 0);
  TK_REJECT(kernel_table_tile_bytes, -2);
#undef TK_REJECT
  assert_int_equal(tfe_tuning_set(&t), TFE_OK);
  bad = t;
  bad.copy_unit_stream = 3;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_unit_stream");
  bad = t;
  bad.small_row_regs = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "small_row_regs");
  bad = t;
  bad.small_dot_depth = 33;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "small_dot_depth");
  bad = t;
  bad.small_wide_cols = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "small_wide_cols");
  bad = t;
  bad.small_tn_pack_rows = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "small_tn_pack_rows");
  assert_int_equal(tfe_tuning_default().small_wide_cols, 1);
  assert_int_equal(tfe_tuning_default().small_tn_pack_rows, 5);
  bad = t;
  bad.small_half_tail = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "small_half_tail");
  bad.small_half_tail = -2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "small_half_tail");
  assert_int_equal(tfe_tuning_default().small_half_tail, -1);
  bad = t;
  bad.kernel_table_input_runs = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "kernel_table_input_runs");
  bad = t;
  bad.copy_narrow_source_tiles = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_narrow_source_tiles");
  bad = t;
  bad.copy_tile_pad = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_tile_pad is 2, outside [0, 1]");
  bad = t;
  bad.copy_skew_lines = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_skew_lines is -1, outside [0, 3]");
  bad = t;
  bad.copy_block_prefetch = 65;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_block_prefetch is 65, outside [0, 64]");
  bad = t;
  bad.copy_edge_stores = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_edge_stores is 2, outside [0, 1]");
  bad = t;
  bad.copy_block_prefetch_spread = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_block_prefetch_spread is 2, outside [0, 1]");
  bad = t;
  bad.copy_short_runs = 2;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_short_runs is 2, outside [0, 1]");
  bad = t;
  bad.copy_table_runs = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_table_runs is -1, outside [0, 1]");
  bad = t;
  bad.copy_source_chain_bytes = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_source_chain_bytes");
  bad = t;
  bad.copy_run_split_far_bytes = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "copy_run_split_far_bytes");
  bad = t;
  bad.kernel_small_elems = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&bad), TFE_ERR_INVALID, "kernel_small_elems");
  assert_int_equal(tfe_tuning_get().kernel_small_elems, t.kernel_small_elems); /* unchanged */
  TU_EXPECT_ERR(tfe_tuning_set(NULL), TFE_ERR_NULL, "");
  /* the kernels read what was set: with the plain loops off a small copy still copies */
  TK_TUNE(kernel_small_elems, 0);
  assert_int_equal(tfe__st.tune.kernel_small_elems, 0);
  double a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {0};
  tfe_view_f64 av = {a, {2, 0, {2, 4}, {4, 1}}, false}, bv = {b, {2, 0, {2, 4}, {1, 2}}, false};
  assert_int_equal(tfe_copy_f64(&bv, &av), TFE_OK);
  for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) assert_true(b[i + 2 * j] == a[4 * i + j]);
  assert_int_equal(tfe_tuning_set(&d), TFE_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tuning_kernel),
      cmocka_unit_test(test_copy_random),
      cmocka_unit_test(test_table_tiles), cmocka_unit_test(test_block_sizes), cmocka_unit_test(test_far_runs), cmocka_unit_test(test_table_input_runs),
      cmocka_unit_test(test_stream_line_runs), cmocka_unit_test(test_interleave_rows), cmocka_unit_test(test_deinterleave_rows), cmocka_unit_test(test_skew12_lines), cmocka_unit_test(test_long_rows), cmocka_unit_test(test_block_segments),
      cmocka_unit_test(test_small_dim_perms), cmocka_unit_test(test_s18_paths), cmocka_unit_test(test_s20_paths), cmocka_unit_test(test_skew_lines), cmocka_unit_test(test_buffer_spread), cmocka_unit_test(test_copy_errors),
      cmocka_unit_test(test_small_dims),
      cmocka_unit_test(test_fused_paths),
      cmocka_unit_test(test_map_random),
      cmocka_unit_test(test_zip_random),
      cmocka_unit_test(test_blas1_random),
      cmocka_unit_test(test_reduce_random),
      cmocka_unit_test(test_op_errors),
      cmocka_unit_test(test_reduce_errors),
      cmocka_unit_test(test_dyn),
      cmocka_unit_test(test_branch_cuts),
      cmocka_unit_test(test_user_kind),
      cmocka_unit_test(test_s21_units),
      cmocka_unit_test(test_s46_units),
      cmocka_unit_test(test_s47_both_runs),
      cmocka_unit_test(test_s48_wide_both_runs),
      cmocka_unit_test(test_s49_next_spread),
      cmocka_unit_test(test_s50_split_runs),
      cmocka_unit_test(test_s50_units_tiny),
      cmocka_unit_test(test_s51_gather_blocks),
      cmocka_unit_test(test_s52_run_g1_tables),
      cmocka_unit_test(test_s52_both_run_flips),
      cmocka_unit_test(test_s52_reversed_footprints),
      cmocka_unit_test(test_s50_record_edges),
      cmocka_unit_test(test_s23_wide_tables),
      cmocka_unit_test(test_s24_g1_runs),
      cmocka_unit_test(test_s25_narrow_runs),
      cmocka_unit_test(test_s33_shared_g0),
      cmocka_unit_test(test_s34_gather_source_run),
      cmocka_unit_test(test_s35_reversed_runs),
      cmocka_unit_test(test_s36_tile_slack),
      cmocka_unit_test(test_s37_short_rows),
      cmocka_unit_test(test_s37_skew_rims),
      cmocka_unit_test(test_s37_quarter_st),
      cmocka_unit_test(test_s38_skew_long_src),
      cmocka_unit_test(test_s39_records),
      cmocka_unit_test(test_s40_col_stream),
      cmocka_unit_test(test_s40_skew_short_rows),
      cmocka_unit_test(test_s41_run_tile_cols),
      cmocka_unit_test(test_s41_rim_buf),
      cmocka_unit_test(test_s41_skew_tiles),
      cmocka_unit_test(test_s41_short_batches),
      cmocka_unit_test(test_s42_run_tables),
      cmocka_unit_test(test_s43_wide_rows),
      cmocka_unit_test(test_s44_flip_lone_g1),
      cmocka_unit_test(test_s44_rev_records),
      cmocka_unit_test(test_s45_long_run_tiles),
      cmocka_unit_test(test_s33_stream_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* ---- per-kind part: TFE_S, TFE_T, ... defined by foreach_kind.h ------------------- */

#define TK_FN(name) TFE_CAT3(tk_, name, TFE_CAT(_, TFE_S))
#define TK_STR_(x) #x
#define TK_STR(x) TK_STR_(x)

static TFE_T TK_FN(rand)(tu_rng *r) {
#if TFE_ALG == TFE_ALG_MAXTIMES /* its domain: non-negative reals */
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, 0, 9));
#else
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, -9, 9));
#endif
#if TFE_CPLX
  x += (TFE_R)tu_int(r, -9, 9) * I;
#endif
  return x;
}

/* User functions for map_fn / zip_fn: x -> x*x + x (semiring), (x, y) -> x*y + x. */
static TFE_T TK_FN(user_un1)(TFE_T x) { return TFE_FN(sr_add)(TFE_FN(sr_mul)(x, x), x); }
static TFE_T TK_FN(user_bin1)(TFE_T x, TFE_T y) { return TFE_FN(sr_add)(TFE_FN(sr_mul)(x, y), x); }
static void TK_FN(user_un)(int64_t n, TFE_T *out, const TFE_T *in, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) out[i] = TK_FN(user_un1)(in[i]);
}
static void TK_FN(user_bin)(int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++) out[i] = TK_FN(user_bin1)(a[i], b[i]);
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


/* ---- reference scalar ops (written independently of the kernels' bodies) ---- */
static bool TK_FN(close)(TFE_T a, TFE_T b, double tol) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && TFE_CPLX
  return tk_cl(creal(a), creal(b), tol) && tk_cl(cimag(a), cimag(b), tol);
#elif TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  return tk_cl(a, b, tol);
#else
  (void)tol;
  return TFE_FN(sr_eq)(a, b);
#endif
}
static double TK_FN(tol)(void) { return sizeof(TFE_R) == 4 ? 2e-5 : 1e-11; }

#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
static TFE_T TK_FN(ref_un)(tfe_unop op, TFE_T x, TFE_T p) {
  switch (op) {
  case TFE_UN_NEG: return -x;
  case TFE_UN_CONJ: return TFE_FN(sr_conj)(x);
#if TFE_CPLX
  case TFE_UN_ABS: return (TFE_T)cabs(x);
  case TFE_UN_REAL: return (TFE_T)creal(x);
  case TFE_UN_IMAG: return (TFE_T)cimag(x);
  case TFE_UN_SQRT: return (TFE_T)csqrt(x);
  case TFE_UN_EXP: return (TFE_T)cexp(x);
  case TFE_UN_LOG: return (TFE_T)clog(x);
  case TFE_UN_SIN: return (TFE_T)csin(x);
  case TFE_UN_COS: return (TFE_T)ccos(x);
  case TFE_UN_TANH: return (TFE_T)ctanh(x);
  case TFE_UN_POW: return (TFE_T)cpow(x, p);
#else
  case TFE_UN_ABS: return (TFE_T)fabs(x);
  case TFE_UN_REAL: return x;
  case TFE_UN_IMAG: return 0;
  case TFE_UN_SQRT: return (TFE_T)sqrt(x);
  case TFE_UN_EXP: return (TFE_T)exp(x);
  case TFE_UN_LOG: return (TFE_T)log(x);
  case TFE_UN_SIN: return (TFE_T)sin(x);
  case TFE_UN_COS: return (TFE_T)cos(x);
  case TFE_UN_TANH: return (TFE_T)tanh(x);
  case TFE_UN_POW: return (TFE_T)pow(x, p);
#endif
  case TFE_UN_RECIP: return 1 / x;
  case TFE_UN_SQUARE: return x * x;
  default: return x;
  }
}
#elif TFE_ALG == TFE_ALG_STANDARD
static TFE_T TK_FN(ref_un)(tfe_unop op, TFE_T x, TFE_T p) {
  switch (op) {
  case TFE_UN_NEG: return -x;
  case TFE_UN_ABS: return x < 0 ? -x : x;
  case TFE_UN_IMAG: return 0;
  case TFE_UN_SQUARE: return x * x;
  case TFE_UN_RECIP: return x == 1 ? 1 : x == -1 ? -1 : 0;
  case TFE_UN_POW: {
    if (p < 0) return x == 1 ? 1 : x == -1 ? (p % 2 ? -1 : 1) : 0;
    TFE_T r = 1;
    for (TFE_T k = 0; k < p; k++) r *= x;
    return r;
  }
  default: return x; /* conj, real */
  }
}
#else
static TFE_T TK_FN(ref_un)(tfe_unop op, TFE_T x, TFE_T p) { (void)op; (void)p; return TFE_FN(sr_conj)(x); }
#endif

static TFE_T TK_FN(ref_bin)(tfe_binop op, TFE_T x, TFE_T y) {
#if TFE_ALG == TFE_ALG_STANDARD
  switch (op) {
  case TFE_BIN_ADD: return x + y;
  case TFE_BIN_SUB: return x - y;
  case TFE_BIN_MUL: return x * y;
#if TFE_FLOAT
  case TFE_BIN_DIV: return x / y;
#else
  case TFE_BIN_DIV: return y == 0 ? 0 : x / y;
#endif
#if TFE_FLOAT && !TFE_CPLX
  case TFE_BIN_MAX: return x > y || isnan(x) ? x : y;
  case TFE_BIN_MIN: return x < y || isnan(x) ? x : y;
#elif !TFE_CPLX
  case TFE_BIN_MAX: return x > y ? x : y;
  case TFE_BIN_MIN: return x < y ? x : y;
#endif
  default: return x;
  }
#else
  switch (op) {
  case TFE_BIN_ADD: return TFE_FN(sr_add)(x, y);
  case TFE_BIN_MUL: return TFE_FN(sr_mul)(x, y);
  case TFE_BIN_MAX: return x.v >= y.v ? x : y;
  case TFE_BIN_MIN: return x.v <= y.v ? x : y;
  default: return x;
  }
#endif
}

/* src broadcast to dst dims: index into src for dst index idx (numpy rule). */
static void TK_FN(bidx)(const TFE_TY(view) *src, int drank, const int64_t *idx, int64_t *out) {
  int lead = drank - src->lay.rank;
  for (int i = 0; i < src->lay.rank; i++) out[i] = src->lay.dims[i] == 1 ? 0 : idx[i + lead];
}

/* A source broadcastable to dims: some dims become 1, sometimes leading dims are dropped. */
static TFE_TY(view) TK_FN(bview)(tu_rng *r, int rank, const int64_t *dims, int *srank) {
  int64_t bd[TFE_MAX_RANK];
  int drop = rank > 0 && tu_int(r, 0, 3) == 0 ? (int)tu_int(r, 1, rank) : 0;
  *srank = rank - drop;
  for (int i = 0; i < *srank; i++) bd[i] = tu_int(r, 0, 4) == 0 ? 1 : dims[i + drop];
  return TK_FN(view)(r, *srank, bd, true);
}

static TFE_T TK_FN(param)(tu_rng *r) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  static const double ps[] = {2, 0.5, -1, 3, -0.5};
  return (TFE_T)ps[tu_int(r, 0, 4)];
#elif TFE_ALG == TFE_ALG_STANDARD
  return (TFE_T)tu_int(r, -2, 4);
#else
  return TK_FN(rand)(r);
#endif
}

static void TK_FN(map_random)(tu_rng *r, int nt) {
  int cases = tu_cases(45);
  for (int op = 0; op < TFE_UN_COUNT_ + 1; op++) { /* the last: a user function */
    for (int c = 0; c < cases; c++) {
      int rank, srank;
      int64_t dims[TFE_MAX_RANK];
      tk_dims(r, &rank, dims, 8, 7);
      if (c % 20 == 1) { rank = 2; dims[0] = tu_int(r, 20, 90); dims[1] = tu_int(r, 20, 90); }
      TFE_TY(view) dst = TK_FN(view)(r, rank, dims, false);
      bool inplace = c % 7 == 3;
      TFE_TY(view) src = inplace ? dst : TK_FN(bview)(r, rank, dims, &srank);
      TFE_TY(view) keep = src;
      if (inplace) { /* keep a copy of the source values */
        int64_t n = tk_layout(r, 0, dims, false, &keep.lay);
        (void)n;
        keep.lay = src.lay;
        int64_t lo = 0, hi = 0;
        tfe_layout_extent(&src.lay, &lo, &hi);
        keep.data = (TFE_T *)malloc((size_t)(hi + 1) * sizeof(TFE_T));
        if (hi >= 0 && tfe_layout_numel(&src.lay) > 0) memcpy(keep.data, src.data, (size_t)(hi + 1) * sizeof(TFE_T));
      }
      TFE_T p = TK_FN(param)(r);
      tfe_status st = op == TFE_UN_COUNT_ ? TFE_FN(map_fn)(&dst, &src, TK_FN(user_un), NULL)
                                          : TFE_FN(map)(&dst, &src, (tfe_unop)op, p);
      if (op < TFE_UN_COUNT_ && !TFE_FN(k_un_ok_)((tfe_unop)op)) {
        assert_int_equal(st, TFE_ERR_UNSUPPORTED);
        assert_non_null(strstr(tfe_last_error(), tfe_unop_name((tfe_unop)op)));
      } else {
        assert_int_equal(st, TFE_OK);
        int64_t idx[TFE_MAX_RANK] = {0}, si[TFE_MAX_RANK];
        if (tfe_layout_numel(&dst.lay) > 0) do {
          TK_FN(bidx)(&keep, rank, idx, si);
          TFE_T x = TK_FN(at)(&keep, si);
          TFE_T want = op == TFE_UN_COUNT_ ? TK_FN(user_un1)(x) : TK_FN(ref_un)((tfe_unop)op, x, p);
          if (!TK_FN(close)(want, TK_FN(at)(&dst, idx), TK_FN(tol)()))
            fail_msg("map %s op %d case %d threads %d: mismatch", TK_STR(TFE_S), op, c, nt);
        } while (tk_next(rank, dims, idx));
      }
      if (inplace) free(keep.data);
      else free(src.data);
      free(dst.data);
    }
  }
}

static void TK_FN(zip_random)(tu_rng *r, int nt) {
  int cases = tu_cases(60);
  for (int op = 0; op < TFE_BIN_COUNT_ + 1; op++) {
    for (int c = 0; c < cases; c++) {
      int rank, ra, rb;
      int64_t dims[TFE_MAX_RANK];
      tk_dims(r, &rank, dims, 8, 7);
      if (c % 25 == 1) { rank = 2; dims[0] = tu_int(r, 20, 90); dims[1] = tu_int(r, 20, 90); }
      TFE_TY(view) dst = TK_FN(view)(r, rank, dims, false);
      TFE_TY(view) a = TK_FN(bview)(r, rank, dims, &ra), b = TK_FN(bview)(r, rank, dims, &rb);
      tfe_status st = op == TFE_BIN_COUNT_ ? TFE_FN(zip_fn)(&dst, &a, &b, TK_FN(user_bin), NULL)
                                           : TFE_FN(zip)(&dst, &a, &b, (tfe_binop)op);
      if (op < TFE_BIN_COUNT_ && !TFE_FN(k_bin_ok_)((tfe_binop)op)) {
        assert_int_equal(st, TFE_ERR_UNSUPPORTED);
      } else {
        assert_int_equal(st, TFE_OK);
        int64_t idx[TFE_MAX_RANK] = {0}, ia[TFE_MAX_RANK], ib[TFE_MAX_RANK];
        if (tfe_layout_numel(&dst.lay) > 0) do {
          TK_FN(bidx)(&a, rank, idx, ia);
          TK_FN(bidx)(&b, rank, idx, ib);
          TFE_T x = TK_FN(at)(&a, ia), y = TK_FN(at)(&b, ib);
          TFE_T want = op == TFE_BIN_COUNT_ ? TK_FN(user_bin1)(x, y) : TK_FN(ref_bin)((tfe_binop)op, x, y);
          if (!TK_FN(close)(want, TK_FN(at)(&dst, idx), TK_FN(tol)()))
            fail_msg("zip %s op %d case %d threads %d: mismatch", TK_STR(TFE_S), op, c, nt);
        } while (tk_next(rank, dims, idx));
      }
      free(a.data); free(b.data); free(dst.data);
    }
  }
}

/* fill, scale, axpby, conj_copy */
static void TK_FN(blas1_random)(tu_rng *r, int nt) {
  int cases = tu_cases(60);
  for (int c = 0; c < cases; c++) {
    int rank, rx;
    int64_t dims[TFE_MAX_RANK];
    tk_dims(r, &rank, dims, 8, 7);
    TFE_TY(view) y = TK_FN(view)(r, rank, dims, false);
    TFE_TY(view) x = TK_FN(bview)(r, rank, dims, &rx);
    TFE_TY(view) y0 = TK_FN(view)(r, rank, dims, false);
    assert_int_equal(TFE_FN(copy)(&y0, &y), TFE_OK); /* old values */
    TFE_T a = TK_FN(rand)(r), b = c % 4 == 0 ? TFE_FN(sr_zero)() : TK_FN(rand)(r);
    int which = c % 4;
    tfe_status st = which == 0 ? TFE_FN(fill)(&y, a) : which == 1 ? TFE_FN(scale)(&y, a)
                  : which == 2 ? TFE_FN(axpby)(&y, a, &x, b) : TFE_FN(conj_copy)(&y, &y0);
    assert_int_equal(st, TFE_OK);
    int64_t idx[TFE_MAX_RANK] = {0}, ix[TFE_MAX_RANK];
    if (tfe_layout_numel(&y.lay) > 0) do {
      TFE_T old = TK_FN(at)(&y0, idx), want;
      TK_FN(bidx)(&x, rank, idx, ix);
      if (which == 0) want = a;
      else if (which == 1) want = TFE_FN(sr_mul)(a, old);
      else if (which == 2) want = TFE_FN(sr_add)(TFE_FN(sr_mul)(a, TK_FN(at)(&x, ix)), TFE_FN(sr_mul)(b, old));
      else want = TFE_FN(sr_conj)(old);
      if (!TK_FN(close)(want, TK_FN(at)(&y, idx), TK_FN(tol)()))
        fail_msg("blas1 %s kind %d case %d threads %d: mismatch", TK_STR(TFE_S), which, c, nt);
    } while (tk_next(rank, dims, idx));
    free(x.data); free(y.data); free(y0.data);
  }
}

/* Reference reduction of the src elements whose kept coordinates equal idx's. */
static TFE_T TK_FN(ref_red)(tfe_redop op, const TFE_TY(view) *src, const bool *red,
                            const int64_t *kidx, bool *empty) {
  int r = src->lay.rank;
  int64_t d[TFE_MAX_RANK], i[TFE_MAX_RANK] = {0}, full[TFE_MAX_RANK], count = 1;
  for (int k = 0; k < r; k++) { d[k] = red[k] ? src->lay.dims[k] : 1; count *= d[k]; }
  *empty = count == 0;
  bool first = true;
  TFE_T acc = op == TFE_RED_PROD ? TFE_FN(sr_one)() : TFE_FN(sr_zero)();
  if (count > 0) do {
    for (int k = 0; k < r; k++) full[k] = red[k] ? i[k] : kidx[k];
    TFE_T x = TK_FN(at)(src, full);
    switch (op) {
    case TFE_RED_PROD: acc = TFE_FN(sr_mul)(acc, x); break;
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_CPLX
    case TFE_RED_MAX: acc = first || x > acc ? x : acc; break;
    case TFE_RED_MIN: acc = first || x < acc ? x : acc; break;
    case TFE_RED_SUMSQ: acc += x * x; break;
#elif TFE_ALG != TFE_ALG_STANDARD
    case TFE_RED_MAX: acc = first || x.v > acc.v ? x : acc; break;
    case TFE_RED_MIN: acc = first || x.v < acc.v ? x : acc; break;
#endif
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && TFE_CPLX
    case TFE_RED_SUMSQ: case TFE_RED_NORM2: acc += creal(x) * creal(x) + cimag(x) * cimag(x); break;
    case TFE_RED_NORM1: acc += cabs(x); break;
    case TFE_RED_NORMINF: acc = first || cabs(x) > creal(acc) ? (TFE_T)cabs(x) : acc; break;
#elif TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
    case TFE_RED_NORM2: acc += x * x; break;
    case TFE_RED_NORM1: acc += fabs(x); break;
    case TFE_RED_NORMINF: acc = first || fabs(x) > acc ? (TFE_T)fabs(x) : acc; break;
#endif
    default: acc = TFE_FN(sr_add)(acc, x); break;
    }
    first = false;
  } while (tk_next(r, d, i));
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (op == TFE_RED_MEAN) acc = acc / (TFE_R)count;
  if (op == TFE_RED_NORM2) acc = (TFE_T)sqrt((double)creal(acc));
#endif
  return acc;
}

static void TK_FN(reduce_random)(tu_rng *r, int nt) {
  int cases = tu_cases(30);
  for (int op = 0; op < TFE_RED_COUNT_; op++) {
    for (int c = 0; c < cases; c++) {
      int rank;
      int64_t dims[TFE_MAX_RANK];
      tk_dims(r, &rank, dims, 6, 7);
      if (c % 15 == 1) { rank = 2; dims[0] = tu_int(r, 20, 90); dims[1] = tu_int(r, 20, 90); }
      TFE_TY(view) src = TK_FN(view)(r, rank, dims, true);
      if (op == TFE_RED_PROD) { /* magnitudes 1: exact in any order */
        int64_t lo = 0, hi = -1;
        tfe_layout_extent(&src.lay, &lo, &hi);
        for (int64_t k = 0; k <= hi; k++)
          src.data[k] = TFE_FN(sr_from_f64)(tu_int(r, 0, 1) || TFE_ALG == TFE_ALG_MAXTIMES ? 1.0 : -1.0);
      }
      bool red[TFE_MAX_RANK] = {false}, keepdims = tu_int(r, 0, 1);
      int axes[TFE_MAX_RANK], na = 0, mode = (int)tu_int(r, 0, 4);
      for (int i = 0; i < rank; i++)
        if (mode == 0 || (mode > 1 && tu_int(r, 0, 1))) { red[i] = true; axes[na++] = i; }
      for (int i = na - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i); int t = axes[i]; axes[i] = axes[j]; axes[j] = t; }
      int64_t od[TFE_MAX_RANK];
      int orank = 0;
      for (int i = 0; i < rank; i++) if (keepdims || !red[i]) od[orank++] = red[i] ? 1 : dims[i];
      TFE_TY(view) out = TK_FN(view)(r, orank, od, false), old = TK_FN(view)(r, orank, od, false);
      assert_int_equal(TFE_FN(copy)(&old, &out), TFE_OK);
      TFE_T alpha = TK_FN(rand)(r), beta = c % 3 == 0 ? TFE_FN(sr_zero)() : TK_FN(rand)(r);
      if (op == TFE_RED_PROD || op == TFE_RED_MAX || op == TFE_RED_MIN) alpha = TFE_FN(sr_one)();
      tfe_status st = TFE_FN(reduce)(&out, &src, (tfe_redop)op, mode == 0 && c % 2 ? -1 : na, axes, alpha, beta);
      if (!TFE_FN(k_red_ok_)((tfe_redop)op)) {
        assert_int_equal(st, TFE_ERR_UNSUPPORTED);
      } else {
        int64_t cnt = 1, nout = tfe_layout_numel(&out.lay);
        for (int i = 0; i < rank; i++) if (red[i]) cnt *= dims[i];
        if (cnt == 0 && nout > 0 && (op == TFE_RED_MAX || op == TFE_RED_MIN)) {
          assert_int_equal(st, TFE_ERR_INVALID);
        } else {
          assert_int_equal(st, TFE_OK);
          int64_t idx[TFE_MAX_RANK] = {0}, kidx[TFE_MAX_RANK], oidx[TFE_MAX_RANK];
          int64_t kd[TFE_MAX_RANK];
          for (int i = 0; i < rank; i++) kd[i] = red[i] ? 1 : dims[i];
          if (nout > 0) do {
            for (int i = 0, k = 0; i < rank; i++) {
              kidx[i] = idx[i];
              if (keepdims) oidx[i] = idx[i]; else if (!red[i]) oidx[k++] = idx[i];
            }
            bool empty;
            TFE_T v = TK_FN(ref_red)((tfe_redop)op, &src, red, kidx, &empty);
            TFE_T want = TFE_FN(sr_mul)(alpha, v);
            if (!TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)()))
              want = TFE_FN(sr_add)(want, TFE_FN(sr_mul)(beta, TK_FN(at)(&old, oidx)));
            if (!TK_FN(close)(want, TK_FN(at)(&out, oidx), TK_FN(tol)() * 100))
              fail_msg("reduce %s op %s case %d threads %d: mismatch", TK_STR(TFE_S), tfe_redop_name((tfe_redop)op), c, nt);
          } while (tk_next(rank, kd, idx));
        }
      }
      free(src.data); free(out.data); free(old.data);
    }
  }
}

/* Labels of a small-dims case: C has `n` dims of sizes 2..4; A and B each lack a random
 * subset (stride 0 there), and every operand is dense in its own random dim order with
 * random signs. */
static void TK_FN(small_view)(tu_rng *r, int n, const int64_t *dims, const bool *has, TFE_TY(view) *v) {
  int64_t d[TFE_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) d[i] = has[i] ? dims[i] : 1;
  *v = TK_FN(view)(r, n, d, false);
  for (int i = 0; i < n; i++) if (!has[i]) { v->lay.dims[i] = dims[i]; v->lay.strides[i] = 0; }
}

static void TK_FN(small_random)(tu_rng *r, int nt) {
  int cases = tu_cases(12) < 6 ? 6 : tu_cases(12); /* every kind of case, also when quick */
  for (int c = 0; c < cases; c++) {
    int n = (int)tu_int(r, 6, 11);
    int64_t dims[TFE_MAX_RANK], numel = 1;
    for (int i = 0; i < n; i++) {
      dims[i] = numel > 1500 ? 1 + (numel < 3000 && tu_int(r, 0, 2) == 0) : tu_int(r, 2, 4);
      numel *= dims[i];
    }
    bool ha[TFE_MAX_RANK], hb[TFE_MAX_RANK], all[TFE_MAX_RANK];
    for (int i = 0; i < n; i++) {
      int w = (int)tu_int(r, 0, 3); /* both, A only, B only, both */
      ha[i] = w != 2; hb[i] = w != 1; all[i] = true;
    }
    TFE_TY(view) dst = TK_FN(view)(r, n, dims, false), a, b;
    TK_FN(small_view)(r, n, dims, ha, &a);
    TK_FN(small_view)(r, n, dims, hb, &b);
    int which = c % 3; /* zip, map (a permuted, all labels), copy */
    if (which) { free(a.data); TK_FN(small_view)(r, n, dims, all, &a); }
    tfe_status st = which == 0 ? TFE_FN(zip)(&dst, &a, &b, TFE_BIN_MUL)
                  : which == 1 ? TFE_FN(map)(&dst, &a, TFE_UN_CONJ, TFE_FN(sr_one)())
                               : TFE_FN(copy)(&dst, &a);
    assert_int_equal(st, TFE_OK);
    int64_t idx[TFE_MAX_RANK] = {0};
    do {
      TFE_T x = TK_FN(at)(&a, idx), want = which == 1 ? TFE_FN(sr_conj)(x) : x;
      if (which == 0) want = TK_FN(ref_bin)(TFE_BIN_MUL, x, TK_FN(at)(&b, idx));
      if (!TK_FN(close)(want, TK_FN(at)(&dst, idx), TK_FN(tol)()))
        fail_msg("small dims %s kind %d case %d threads %d: mismatch", TK_STR(TFE_S), which, c, nt);
    } while (tk_next(n, dims, idx));
    free(a.data); free(b.data); free(dst.data);
  }
}

#undef TK_FN
#undef TK_STR
#undef TK_STR_
#endif
