/* bench_kernels — unary map, binary zip and a reduction over 16M float64 elements
 * (4096 x 4096), contiguous and transposed operands, against memcpy of the same buffers.
 *   --set outer: outer products into an existing output vs memset / streaming writes.
 *
 *   bench_kernels [--reps N] [--threads T] [--set all|transpose|small|threads|outer|reversed]
 *   --set reversed: copy, map and zip of a source read backwards along its rows (run_reversed).
 *
 * Outputs exist and were touched before timing (no allocation inside the timed region).
 * Bandwidth counts the bytes an operation must move: map reads 8 and writes 8 bytes per
 * element, zip reads 16 and writes 8, sum reads 8; memcpy moves 8 + 8. The fraction is the
 * operation's bandwidth over memcpy's, measured in the same run: every round times each
 * case once (memcpy included), so load from other processes hits all cases alike. Median
 * of --reps rounds (7). copy_transposed (tfe_copy of the transpose) is the reference for
 * what a transposed map/zip can reach.
 *
 * Second set (--set small; default: both): operands whose dims are all tiny (2, 3, 4), as
 * the intermediates of tensor networks over small bonds (gm_queen5_5_3: 3^17 outputs). The
 * limit is the bytes the op must move (output written once, each distinct input element
 * read once) at the memcpy bandwidth of the same round; ratio = time / that limit. */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) in bench_common.h */
#include <tenferro.h>
#include <unistd.h>

#include "bench_common.h"

/* Set one tuning field (docs/kernel.md, "Tuning"); a value out of range stops the run. */
#define BK_TUNE(field, value) \
  do { \
    tfe_tuning bk_t_ = tfe_tuning_get(); \
    bk_t_.field = (value); \
    if (tfe_tuning_set(&bk_t_) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); } \
  } while (0)

enum { OP_MEMCPY, OP_COPY, OP_NEG, OP_SQUARE, OP_ADD, OP_MUL, OP_SUM };

/* ---- the small-dims set ------------------------------------------------------------------ */
/* Step 136 of gm_queen5_5_3 (1 thread, f64), in the trace format of the einsum room:
 * label:dim/stride, C is the fresh output, A and B are viewed in C's label order with
 * stride 0 on the labels they lack. */
static const char *const queen136 =
    "A[16:3/1 19:3/3 18:3/9 23:3/27 10:3/81 17:3/243 22:3/729 4:3/2187 0:3/6561 14:3/19683 1:3/59049 7:3/177147 12:3/531441 ] "
    "B[3:3/1 20:3/3 8:3/9 6:3/27 10:3/81 17:3/243 22:3/729 4:3/2187 0:3/6561 14:3/19683 1:3/59049 7:3/177147 12:3/531441 ] "
    "C[10:3/1 16:3/3 17:3/9 22:3/27 4:3/81 0:3/243 14:3/729 19:3/2187 1:3/6561 3:3/19683 7:3/59049 20:3/177147 18:3/531441 12:3/1594323 23:3/4782969 8:3/14348907 6:3/43046721 ]";

typedef struct sm_op { int n, lab[64]; int64_t dim[64], str[64]; } sm_op;

/* Parse "X[label:dim/stride ...]" for operand X. */
static void sm_parse(const char *txt, char x, sm_op *o) {
  char key[3] = {x, '[', 0};
  const char *p = strstr(txt, key) + 2;
  o->n = 0;
  int l, used;
  long long d, s;
  while (sscanf(p, " %d:%lld/%lld%n", &l, &d, &s, &used) == 3) {
    o->lab[o->n] = l; o->dim[o->n] = d; o->str[o->n++] = s;
    p += used;
  }
}

/* A dense operand over its labels in a random order (dims all d). */
static void sm_dense(sm_op *o, const int *labs, int n, int64_t d, unsigned *seed) {
  o->n = n;
  for (int i = 0; i < n; i++) o->lab[i] = labs[i];
  for (int i = n - 1; i > 0; i--) {
    *seed = *seed * 1103515245u + 12345u;
    int j = (int)((*seed >> 8) % (unsigned)(i + 1)), t = o->lab[i];
    o->lab[i] = o->lab[j]; o->lab[j] = t;
  }
  int64_t s = 1;
  for (int i = 0; i < n; i++) { o->dim[i] = d; o->str[i] = s; s *= d; }
}

/* A zip like step 136: C over shared + a-only + b-only labels, A over shared + a-only, B
 * over shared + b-only, each dense in its own random label order. */
static void sm_outer(int64_t d, int shared, int only, unsigned seed, sm_op *a, sm_op *b, sm_op *c) {
  int la[64], lb[64], lc[64], n = 0;
  for (int i = 0; i < shared; i++) { la[i] = lb[i] = lc[n++] = i; }
  for (int i = 0; i < only; i++) { la[shared + i] = lc[n++] = 100 + i; lb[shared + i] = lc[n++] = 200 + i; }
  sm_dense(a, la, shared + only, d, &seed);
  sm_dense(b, lb, shared + only, d, &seed);
  sm_dense(c, lc, n, d, &seed);
}

/* View of operand o in c's label order (stride 0 on labels o lacks). */
static tfe_view_f64 sm_view(double *data, const sm_op *o, const sm_op *c) {
  tfe_view_f64 v = {data, {c->n, 0, {0}, {0}}, false};
  for (int i = 0; i < c->n; i++) {
    v.lay.dims[i] = c->dim[i];
    for (int k = 0; k < o->n; k++) if (o->lab[k] == c->lab[i]) v.lay.strides[i] = o->str[k];
  }
  return v;
}

static int64_t sm_numel(const sm_op *o) {
  int64_t n = 1;
  for (int i = 0; i < o->n; i++) n *= o->dim[i];
  return n;
}

/* One timed call of op. */
static double once(int op, tfe_view_f64 *d, tfe_view_f64 *a, tfe_view_f64 *b) {
  size_t bytes = (size_t)tfe_layout_numel(&d->lay) * sizeof(double);
  double t0 = now_ms();
  tfe_status st = TFE_OK;
  double s = 0;
  switch (op) {
  case OP_MEMCPY: memcpy(d->data, a->data, bytes); break;
  case OP_COPY: st = tfe_copy_f64(d, a); break;
  case OP_NEG: st = tfe_map_f64(d, a, TFE_UN_NEG, 0); break;
  case OP_SQUARE: st = tfe_map_f64(d, a, TFE_UN_SQUARE, 0); break;
  case OP_ADD: st = tfe_zip_f64(d, a, b, TFE_BIN_ADD); break;
  case OP_MUL: st = tfe_zip_f64(d, a, b, TFE_BIN_MUL); break;
  case OP_SUM: st = tfe_reduce_all_f64(a, TFE_RED_SUM, &s); break;
  }
  __asm__ volatile("" : : "r"(d->data), "x"(s) : "memory");
  if (st) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); }
  return now_ms() - t0;
}

/* Fresh buffer of n doubles, huge-page advised, every element written (pages touched). */
static double *sm_buf(int64_t n, double v) {
  double *p = (double *)tfe__alloc((size_t)n * sizeof(double));
  if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
  tfe__kadvise_huge(p, (size_t)n * sizeof(double));
  for (int64_t i = 0; i < n; i++) p[i] = v + (double)(i % 7);
  return p;
}

static void run_small(int reps, const char *only) {
  enum { NS = 8 };
  struct { const char *name; int op; sm_op a, b, c; double moved; } cs[NS];
  int nc = 0;
  unsigned seed = 2026;
  /* zips: C = A' * B' with A', B' broadcast over the labels they lack */
  cs[nc].name = "queen136_zip_mul_3^17"; cs[nc].op = OP_MUL;
  sm_parse(queen136, 'A', &cs[nc].a); sm_parse(queen136, 'B', &cs[nc].b); sm_parse(queen136, 'C', &cs[nc].c); nc++;
  cs[nc].name = "outer_zip_mul_2^24"; cs[nc].op = OP_MUL; sm_outer(2, 14, 5, seed++, &cs[nc].a, &cs[nc].b, &cs[nc].c); nc++;
  cs[nc].name = "outer_zip_mul_4^12"; cs[nc].op = OP_MUL; sm_outer(4, 6, 3, seed++, &cs[nc].a, &cs[nc].b, &cs[nc].c); nc++;
  cs[nc].name = "outer_zip_add_3^15"; cs[nc].op = OP_ADD; sm_outer(3, 9, 3, seed++, &cs[nc].a, &cs[nc].b, &cs[nc].c); nc++;
  /* permutations of one dense 3^15 / 2^24 source: copy and map */
  int labs[64];
  for (int i = 0; i < 64; i++) labs[i] = i;
  cs[nc].name = "permute_copy_3^15"; cs[nc].op = OP_COPY;
  sm_dense(&cs[nc].a, labs, 15, 3, &seed); sm_dense(&cs[nc].c, labs, 15, 3, &seed); nc++;
  cs[nc].name = "permute_map_neg_3^15"; cs[nc].op = OP_NEG;
  sm_dense(&cs[nc].a, labs, 15, 3, &seed); sm_dense(&cs[nc].c, labs, 15, 3, &seed); nc++;
  cs[nc].name = "permute_copy_2^24"; cs[nc].op = OP_COPY;
  sm_dense(&cs[nc].a, labs, 24, 2, &seed); sm_dense(&cs[nc].c, labs, 24, 2, &seed); nc++;
  if (only) { /* --only SUBSTRING: keep the matching cases */
    int m = 0;
    for (int k = 0; k < nc; k++) if (strstr(cs[k].name, only)) cs[m++] = cs[k];
    nc = m;
  }
  int64_t maxc = 0, maxa = 0;
  for (int k = 0; k < nc; k++) {
    int64_t nb = cs[k].op == OP_COPY || cs[k].op == OP_NEG ? 0 : sm_numel(&cs[k].b);
    if (sm_numel(&cs[k].c) > maxc) maxc = sm_numel(&cs[k].c);
    if (sm_numel(&cs[k].a) > maxa) maxa = sm_numel(&cs[k].a);
    cs[k].moved = (double)(sm_numel(&cs[k].c) + sm_numel(&cs[k].a) + nb) * 8;
  }
  const int64_t nm = (int64_t)16 << 20; /* memcpy reference: 128 MiB */
  double *C = sm_buf(maxc, 0), *A = sm_buf(maxa > nm ? maxa : nm, 1), *B = sm_buf(maxa, 2);
  double *M = sm_buf(nm, 0);
  static double t[NS + 1][64];
  for (int r = -1; r < reps; r++) {
    double t0 = now_ms();
    memcpy(M, A, (size_t)nm * 8);
    __asm__ volatile("" : : "r"(M) : "memory");
    if (r >= 0) t[0][r] = now_ms() - t0;
    for (int k = 0; k < nc; k++) {
      tfe_view_f64 c = sm_view(C, &cs[k].c, &cs[k].c), a = sm_view(A, &cs[k].a, &cs[k].c);
      tfe_view_f64 b = cs[k].op == OP_COPY || cs[k].op == OP_NEG ? a : sm_view(B, &cs[k].b, &cs[k].c);
      double ms = once(cs[k].op, &c, &a, &b);
      if (r >= 0) t[k + 1][r] = ms;
    }
  }
  for (int k = 0; k <= nc; k++) qsort(t[k], (size_t)reps, sizeof(double), cmpd);
  double bw = 2.0 * (double)nm * 8 / 1e6 / t[0][reps / 2]; /* GB/s, read + write */
  printf("# small dims, f64, median of %d interleaved rounds; memcpy 128 MiB %.2f ms = %.2f GB/s\n",
         reps, t[0][reps / 2], bw);
  for (int k = 0; k < nc; k++) {
    double lim = cs[k].moved / 1e6 / bw, med = t[k + 1][reps / 2];
    printf("%s rank=%d numel=%lld ms=%.2f limit_ms=%.2f ratio=%.2f best_ms=%.2f ns_per_elem=%.2f\n",
           cs[k].name, cs[k].c.n, (long long)sm_numel(&cs[k].c), med, lim, med / lim, t[k + 1][0],
           med * 1e6 / (double)sm_numel(&cs[k].c));
  }
  tfe__free(C); tfe__free(A); tfe__free(B); tfe__free(M);
}

/* --set outer: C[i,j] = a[i]*b[j] (4096^2, f64 and c128) into an existing dense C, as
 * einsum's bin_outer_product_4096 (tfe_zip with stride-0 broadcast inputs), with streaming
 * stores on (elementwise_stream_blocks = 1) and off, against memset and a pure streaming write of the
 * same bytes, interleaved rounds. What the op must move is the write of C. */
static void stream_write(double *d, int64_t n) {
  static double ones[512];
  if (ones[0] != 1.0) for (int i = 0; i < 512; i++) ones[i] = 1.0;
  for (int64_t i = 0; i < n; i += 512) tfe__kstream(d + i, ones, (size_t)(n - i < 512 ? n - i : 512) * sizeof(double));
  tfe__ksfence();
}
static void run_outer(int reps) {
  const int64_t side = 4096, n = side * side;
  double *c = sm_buf(2 * n, 0), *a = sm_buf(2 * side, 1), *b = sm_buf(2 * side, 2);
  tfe_view_f64 cv = {c, {2, 0, {side, side}, {side, 1}}, false};
  tfe_view_f64 av = {a, {2, 0, {side, side}, {1, 0}}, false}, bv = {b, {2, 0, {side, side}, {0, 1}}, false};
  tfe_view_c128 cz = {(double _Complex *)(void *)c, {2, 0, {side, side}, {side, 1}}, false};
  tfe_view_c128 az = {(double _Complex *)(void *)a, {2, 0, {side, side}, {1, 0}}, false};
  tfe_view_c128 bz = {(double _Complex *)(void *)b, {2, 0, {side, side}, {0, 1}}, false};
  const char *names[] = {"memset_f64", "stream_write_f64", "outer_mul_f64_nt", "outer_mul_f64_plain",
                         "memset_c128", "stream_write_c128", "outer_mul_c128_nt", "outer_mul_c128_plain"};
  enum { NO = 8 };
  static double t[NO][64];
  for (int r = -1; r < reps; r++)
    for (int k = 0; k < NO; k++) {
      int64_t m = k < 4 ? n : 2 * n;
      BK_TUNE(elementwise_stream_blocks, k % 4 == 2);
      double t0 = now_ms();
      tfe_status st = TFE_OK;
      switch (k % 4) {
      case 0: memset(c, 0, (size_t)m * 8); break;
      case 1: stream_write(c, m); break;
      default: st = k < 4 ? tfe_zip_f64(&cv, &av, &bv, TFE_BIN_MUL) : tfe_zip_c128(&cz, &az, &bz, TFE_BIN_MUL);
      }
      __asm__ volatile("" : : "r"(c) : "memory");
      if (st) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); }
      if (r >= 0) t[k][r] = now_ms() - t0;
    }
  BK_TUNE(elementwise_stream_blocks, 1);
  printf("# outer product 4096^2 into an existing C, %d thread(s), median of %d interleaved rounds\n",
         tfe_get_num_threads(), reps);
  for (int k = 0; k < NO; k++) {
    qsort(t[k], (size_t)reps, sizeof(double), cmpd);
    double mb = (double)(k < 4 ? n : 2 * n) * 8 / 1e6, lim = t[k < 4 ? 1 : 5][reps / 2];
    printf("%s ms=%.2f write_GBps=%.2f vs_stream_write=%.2f best_ms=%.2f\n", names[k], t[k][reps / 2],
           mb / t[k][reps / 2], t[k][reps / 2] / lim, t[k][0]);
  }
  tfe__free(c); tfe__free(a); tfe__free(b);
}

/* --set threads: what a second core adds to plain memory traffic on this machine. memcpy
 * of 128 MiB (touched, huge-page buffers, no allocation timed) on one thread and split in
 * two halves over two OpenMP threads (each thread copies one contiguous half), interleaved
 * rounds; the same for tfe_copy of a 2-D transpose. The ratio bounds what any kernel can
 * gain from a second thread here. */
/* --set reversed: copy, map (neg) and zip (add, second input forward) of a 4096 x 4096 f64
 * source read along its rows backwards (numpy's x[:, ::-1]) into an existing output, next to
 * the same ops read forwards and memcpy, and with copy_reverse_runs 0 (element by element);
 * interleaved rounds, medians. */
static void run_reversed(int reps) {
  const int64_t side = 4096, n = side * side;
  double *c = sm_buf(n, 0), *a = sm_buf(n, 1), *b = sm_buf(n, 2);
  tfe_view_f64 cv = {c, {2, 0, {side, side}, {side, 1}}, false}, bv = {b, {2, 0, {side, side}, {side, 1}}, false};
  tfe_view_f64 fw = {a, {2, 0, {side, side}, {side, 1}}, false}, rv = {a, {2, side - 1, {side, side}, {side, -1}}, false};
  const char *names[] = {"memcpy", "copy_fwd", "copy_rev", "copy_rev_old", "map_neg_fwd", "map_neg_rev",
                         "map_neg_rev_old", "zip_add_fwd", "zip_add_rev", "zip_add_rev_old"};
  const int ops[] = {OP_MEMCPY, OP_COPY, OP_COPY, OP_COPY, OP_NEG, OP_NEG, OP_NEG, OP_ADD, OP_ADD, OP_ADD};
  enum { NO = 10 };
  static double t[NO][64];
  for (int r = -1; r < reps; r++)
    for (int k = 0; k < NO; k++) {
      const bool rev = k > 0 && (k - 1) % 3 > 0, old = k > 0 && (k - 1) % 3 == 2;
      BK_TUNE(copy_reverse_runs, !old);
      double ms = once(ops[k], &cv, rev ? &rv : &fw, &bv);
      if (r >= 0) t[k][r] = ms;
    }
  BK_TUNE(copy_reverse_runs, 1);
  printf("# 4096^2 f64 read forwards / backwards along its rows into an existing output, %d thread(s), median of %d interleaved rounds (_old: copy_reverse_runs 0)\n",
         tfe_get_num_threads(), reps);
  for (int k = 0; k < NO; k++) {
    qsort(t[k], (size_t)reps, sizeof(double), cmpd);
    printf("%s ms=%.2f\n", names[k], t[k][reps / 2]);
  }
  tfe__free(c); tfe__free(a); tfe__free(b);
}

static void run_threads(int reps) {
  const int64_t n = (int64_t)16 << 20, side = 4096;
  double *a = sm_buf(n, 1), *b = sm_buf(n, 0);
  tfe_view_f64 d = {b, {2, 0, {side, side}, {1, side}}, false}, s = {a, {2, 0, {side, side}, {side, 1}}, false};
  static double t[4][64];
  for (int r = -1; r < reps; r++)
    for (int k = 0; k < 4; k++) {
      int nt = 1 + k % 2;
      double t0 = now_ms();
      if (k < 2) {
        TFE_OMP(parallel num_threads(nt))
        {
          int id = 0, m = 1;
#ifdef _OPENMP
          id = omp_get_thread_num(); m = omp_get_num_threads();
#endif
          int64_t lo = n * id / m, hi = n * (id + 1) / m;
          memcpy(b + lo, a + lo, (size_t)(hi - lo) * sizeof(double));
        }
      } else {
        tfe_set_num_threads(nt);
        if (tfe_copy_f64(&d, &s)) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); }
        tfe_set_num_threads(1);
      }
      __asm__ volatile("" : : "r"(b) : "memory");
      if (r >= 0) t[k][r] = now_ms() - t0;
    }
  for (int k = 0; k < 4; k++) qsort(t[k], (size_t)reps, sizeof(double), cmpd);
  double gb = 2.0 * (double)n * 8 / 1e6;
  printf("# two threads vs one, 128 MiB f64, median of %d interleaved rounds\n", reps);
  printf("memcpy_1thr ms=%.2f GBps=%.2f best_ms=%.2f\n", t[0][reps / 2], gb / t[0][reps / 2], t[0][0]);
  printf("memcpy_2thr ms=%.2f GBps=%.2f best_ms=%.2f speedup=%.2f best_speedup=%.2f\n", t[1][reps / 2],
         gb / t[1][reps / 2], t[1][0], t[0][reps / 2] / t[1][reps / 2], t[0][0] / t[1][0]);
  printf("transpose_1thr ms=%.2f best_ms=%.2f\n", t[2][reps / 2], t[2][0]);
  printf("transpose_2thr ms=%.2f best_ms=%.2f speedup=%.2f best_speedup=%.2f\n", t[3][reps / 2], t[3][0],
         t[2][reps / 2] / t[3][reps / 2], t[2][0] / t[3][0]);
  tfe__free(a); tfe__free(b);
}

int main(int argc, char **argv) {
  int reps = 7, threads = 1, fuse = tfe__kfuse_mode();
  const char *set = "all", *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc) BK_TUNE(copy_tile_bytes, atoi(argv[++i])); /* tuning */
    else if (!strcmp(argv[i], "--gather-all") && i + 1 < argc) BK_TUNE(kernel_gather_all, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--vg") && i + 1 < argc) BK_TUNE(kernel_vector_gather, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--ew-tile") && i + 1 < argc) BK_TUNE(elementwise_tile_bytes, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--ew-run") && i + 1 < argc) BK_TUNE(elementwise_run_bytes, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--ew-gather") && i + 1 < argc) BK_TUNE(elementwise_gather_bytes, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--ew-cache") && i + 1 < argc) BK_TUNE(elementwise_column_cache_elems, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--tiny-dim") && i + 1 < argc) BK_TUNE(kernel_tiny_dim, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--pf") && i + 1 < argc) BK_TUNE(kernel_prefetch_strips, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--vgather") && i + 1 < argc) BK_TUNE(kernel_vector_gather, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--nt-min") && i + 1 < argc) BK_TUNE(kernel_stream_min_bytes, atoll(argv[++i]));
    else if (!strcmp(argv[i], "--fuse") && i + 1 < argc) fuse = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--set") && i + 1 < argc) set = argv[++i]; /* all, transpose, small */
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i]; /* small cases by name */
  }
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  tfe_set_num_threads(threads);
  if (!strcmp(set, "threads")) { run_threads(reps); return 0; }
  if (!strcmp(set, "outer")) { run_outer(reps); return 0; }
  if (!strcmp(set, "reversed")) { run_reversed(reps); return 0; }
  if (strcmp(set, "transpose")) run_small(reps, only);
  if (!strcmp(set, "small")) return 0;
  const int64_t n = 4096, dims[2] = {n, n};
  tfe_tensor_f64 A = {0}, B = {0}, D = {0};
  if (tfe_empty_f64(&A, 2, dims, TFE_COLMAJOR) || tfe_empty_f64(&B, 2, dims, TFE_COLMAJOR) ||
      tfe_empty_f64(&D, 2, dims, TFE_COLMAJOR)) { fprintf(stderr, "out of memory\n"); return 1; }
  tfe__kadvise_huge(A.v.data, (size_t)(n * n) * 8); /* huge pages, as numpy's arrays */
  tfe__kadvise_huge(B.v.data, (size_t)(n * n) * 8);
  tfe__kadvise_huge(D.v.data, (size_t)(n * n) * 8);
  for (int64_t i = 0; i < n * n; i++) { A.v.data[i] = (double)(i % 1000); B.v.data[i] = 1.0; D.v.data[i] = 0; }
  tfe_view_f64 at = A.v; /* the transpose of A: strides (n, 1) */
  at.lay.strides[0] = n; at.lay.strides[1] = 1;
  double mb = (double)(n * n) * 8 / 1e6;
  /* "_old" rows: the same call with the round-4 paths off (elementwise_fuse: op fused into
   * the register transpose; elementwise_stream_blocks: streamed contiguous blocks), interleaved with the new */
  struct { const char *name; int op; tfe_view_f64 *a, *b; double moved; int old; } cases[] = {
      {"memcpy", OP_MEMCPY, &A.v, NULL, 2, 0},
      {"copy_transposed", OP_COPY, &at, NULL, 2, 0},
      {"map_neg_contiguous", OP_NEG, &A.v, NULL, 2, 0},   {"map_neg_transposed", OP_NEG, &at, NULL, 2, 0},
      {"map_square_contiguous", OP_SQUARE, &A.v, NULL, 2, 0}, {"map_square_transposed", OP_SQUARE, &at, NULL, 2, 0},
      {"zip_add_contiguous", OP_ADD, &A.v, &B.v, 3, 0},   {"zip_add_transposed", OP_ADD, &at, &B.v, 3, 0},
      {"zip_mul_contiguous", OP_MUL, &A.v, &B.v, 3, 0},   {"zip_mul_transposed", OP_MUL, &A.v, &at, 3, 0},
      {"sum_contiguous", OP_SUM, &A.v, NULL, 1, 0},    {"sum_transposed", OP_SUM, &at, NULL, 1, 0},
      {"map_neg_transposed_old", OP_NEG, &at, NULL, 2, 1}, {"zip_add_transposed_old", OP_ADD, &at, &B.v, 3, 1},
      {"zip_mul_transposed_old", OP_MUL, &A.v, &at, 3, 1}, {"map_neg_contiguous_old", OP_NEG, &A.v, NULL, 2, 1},
      {"zip_add_contiguous_old", OP_ADD, &A.v, &B.v, 3, 1},
  };
  enum { NC = sizeof cases / sizeof cases[0] };
  /* rounds interleave the cases (one call each, memcpy included) so that a busy machine
   * slows every case alike; one warm-up round */
  static double t[NC][64];
  for (int r = -1; r < reps; r++)
    for (int k = 0; k < NC; k++) {
      BK_TUNE(elementwise_fuse, cases[k].old ? 0 : fuse);
      BK_TUNE(elementwise_stream_blocks, !cases[k].old);
      double ms = once(cases[k].op, &D.v, cases[k].a, cases[k].b);
      BK_TUNE(elementwise_fuse, fuse);
      BK_TUNE(elementwise_stream_blocks, 1);
      if (r >= 0) t[k][r] = ms;
    }
  double med[NC];
  for (int k = 0; k < NC; k++) { qsort(t[k], (size_t)reps, sizeof(double), cmpd); med[k] = t[k][reps / 2]; }
  double bwm = 2 * mb / med[0];
  printf("# 16M f64 (4096^2), %d thread(s), median of %d interleaved rounds; memcpy %.2f ms = %.2f GB/s"
         " (best %.2f ms)\n", threads, reps, med[0], bwm, t[0][0]);
  /* fraction: medians; best_fraction: fastest rounds (on a shared machine the least disturbed) */
  for (int k = 1; k < NC; k++) {
    double bw = cases[k].moved * mb / med[k];
    printf("%s ms=%.2f GBps=%.2f memcpy_GBps=%.2f fraction=%.2f best_ms=%.2f best_fraction=%.2f\n",
           cases[k].name, med[k], bw, bwm, bw / bwm, t[k][0],
           cases[k].moved / 2 * t[0][0] / t[k][0]);
  }
  tfe_tensor_release_f64(&A);
  tfe_tensor_release_f64(&B);
  tfe_tensor_release_f64(&D);
  return 0;
}
