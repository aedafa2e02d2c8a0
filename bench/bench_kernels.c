/* bench_kernels — unary map, binary zip and a reduction over 16M float64 elements
 * (4096 x 4096), contiguous and transposed operands, against memcpy of the same buffers.
 *
 *   bench_kernels [--reps N] [--threads T]
 *
 * Outputs exist and were touched before timing (no allocation inside the timed region).
 * Bandwidth counts the bytes an operation must move: map reads 8 and writes 8 bytes per
 * element, zip reads 16 and writes 8, sum reads 8; memcpy moves 8 + 8. The fraction is the
 * operation's bandwidth over memcpy's, measured in the same run: every round times each
 * case once (memcpy included), so load from other processes hits all cases alike. Median
 * of --reps rounds (7). copy_transposed (tfe_copy of the transpose) is the reference for
 * what a transposed map/zip can reach. */
#include <tenferro.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { OP_MEMCPY, OP_COPY, OP_NEG, OP_SQUARE, OP_ADD, OP_MUL, OP_SUM };

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

int main(int argc, char **argv) {
  int reps = 7, threads = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc) tfe__ktile_bytes = atoi(argv[++i]); /* tuning */
    else if (!strcmp(argv[i], "--ew-tile") && i + 1 < argc) tfe__kew_tile_bytes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ew-run") && i + 1 < argc) tfe__kew_run_bytes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--pf") && i + 1 < argc) tfe__kpf = atoi(argv[++i]);
  }
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  tfe_set_num_threads(threads);
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
  struct { const char *name; int op; tfe_view_f64 *a, *b; double moved; } cases[] = {
      {"memcpy", OP_MEMCPY, &A.v, NULL, 2},
      {"copy_transposed", OP_COPY, &at, NULL, 2},
      {"map_neg_contiguous", OP_NEG, &A.v, NULL, 2},   {"map_neg_transposed", OP_NEG, &at, NULL, 2},
      {"map_square_contiguous", OP_SQUARE, &A.v, NULL, 2}, {"map_square_transposed", OP_SQUARE, &at, NULL, 2},
      {"zip_add_contiguous", OP_ADD, &A.v, &B.v, 3},   {"zip_add_transposed", OP_ADD, &at, &B.v, 3},
      {"zip_mul_contiguous", OP_MUL, &A.v, &B.v, 3},   {"zip_mul_transposed", OP_MUL, &A.v, &at, 3},
      {"sum_contiguous", OP_SUM, &A.v, NULL, 1},       {"sum_transposed", OP_SUM, &at, NULL, 1},
  };
  enum { NC = sizeof cases / sizeof cases[0] };
  /* rounds interleave the cases (one call each, memcpy included) so that a busy machine
   * slows every case alike; one warm-up round */
  static double t[NC][64];
  for (int r = -1; r < reps; r++)
    for (int k = 0; k < NC; k++) {
      double ms = once(cases[k].op, &D.v, cases[k].a, cases[k].b);
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
