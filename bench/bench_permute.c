/* bench_permute — the permutation patterns of ../shared/bench/permutation_patterns.json,
 * allocation-inclusive, side by side with memcpy (and numpy when installed).
 *
 *   bench_permute [patterns.json] [--reps N] [--only ID] [--no-numpy] [--threads2] [--no-pool]
 *                 [--warm] [--no-4k]
 *
 * Per pattern, each timed call does what a user's "make this permuted view contiguous"
 * does, with a fresh destination every time:
 *   tfe:    tfe_contiguous_f64(&permuted_view, TFE_COLMAJOR, &out) + tfe_tensor_release_f64
 *           (allocation through tenferro's hook, page faults of the fresh pages, the copy, free)
 *   memcpy: p = tfe_get_allocator().alloc(bytes) + the same huge-page advice tfe_contiguous
 *           gives its fresh buffer (madvise MADV_HUGEPAGE) + memcpy(p, src, bytes) + free:
 *           the same allocator, the same bytes, the same fresh pages
 *           (with tenferro's pool on, the default, both tfe and memcpy get a kept buffer back
 *           from the previous call: pages written before, no faults; --no-pool gives both
 *           fresh pages every call)
 *   nt:     the same with a streamed copy (stores past the cache: bench_common.h), what a C
 *           library does only above its threshold (glibc: 3/4 of the L3 and more, 181 MiB on a
 *           480 MiB-L3 Xeon); memcpy_ms and ratio= take the faster of the two in each round
 *           (session 27; before, the library's memcpy alone, libc_ms)
 *   memcpy4k (--no-4k skips it): malloc + memcpy + free without the advice or the pool
 *           (its 4 KiB pages, given back just before the tfe call, can leave the system
 *           compacting memory for the next huge-page request: with the pool off, the 2 GiB
 *           rotation's tfe column measured 1.3-3.6x memcpy depending on that; fresh 4 KiB pages:
 *           page faults dominate)
 *   numpy:  np.asfortranarray(src.transpose(p)) (bench/peer_numpy_permute.py, same process
 *           pattern: fresh result each call).
 * Sources are filled with their linear index; like numpy's arrays (and tfe_contiguous's
 * results) they are backed by transparent huge pages where the kernel allows.
 * Median of --reps rounds (default 5) after one warm-up round; each round times every
 * column once (memcpy, memcpy4k, tfe, tfe2), so a busy machine slows them alike, and
 * each timed call starts from caches emptied of its data (an untimed read of three times
 * the last-level cache; --warm skips it: then a pattern that fits in the L3, as
 * transpose_2d_2048's 32 MiB, favours whichever column follows the one that left its
 * source cached);
 * best_ratio compares the fastest rounds. tfe runs on 1 thread; with --threads2 a column
 * tfe2_ms gives the time on 2 threads, and memcpy2_ms a 2-thread memcpy into a fresh buffer
 * (each thread its half): the scaling this machine allows in this process (on the 2-vCPU
 * VM it varies between processes, 1.3-1.8x). */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#include <tenferro.h>
#include <time.h>
#include <unistd.h>

#define MAXP 32

typedef struct {
  char id[128];
  int rank;
  int64_t shape[TFE_MAX_RANK], perm[TFE_MAX_RANK], strides[TFE_MAX_RANK];
  bool explicit_strides;
} pattern;


/* Parse the integer array following "key": between from and to; returns the count. */
static int int_array(const char *from, const char *to, const char *key, int64_t *out) {
  const char *k = strstr(from, key);
  if (!k || k > to) return -1;
  const char *p = strchr(k, '[');
  int n = 0;
  for (p++; *p && *p != ']' && n < TFE_MAX_RANK;) {
    char *e;
    long long v = strtoll(p, &e, 10);
    if (e == p) { p++; continue; }
    out[n++] = v;
    p = e;
  }
  return n;
}

static int parse(const char *json, pattern *pats) {
  int np = 0;
  const char *p = strstr(json, "\"patterns\"");
  while (p && np < MAXP && (p = strstr(p, "\"id\"")) != NULL) {
    const char *next = strstr(p + 4, "\"id\"");
    const char *end = next ? next : p + strlen(p);
    pattern *q = &pats[np];
    memset(q, 0, sizeof *q);
    sscanf(strchr(p + 4, '"') + 1, "%127[^\"]", q->id);
    q->rank = int_array(p, end, "\"shape\"", q->shape);
    if (int_array(p, end, "\"perm\"", q->perm) != q->rank) { fprintf(stderr, "bad pattern %s\n", q->id); exit(1); }
    const char *sl = strstr(p, "\"src_layout\"");
    if (sl && sl < end && strstr(sl, "explicit_strides") && strstr(sl, "explicit_strides") < end) {
      q->explicit_strides = true;
      if (int_array(sl, end, "\"strides\"", q->strides) != q->rank) { fprintf(stderr, "bad strides %s\n", q->id); exit(1); }
    }
    np++;
    p = end;
  }
  return np;
}

#include "bench_common.h"

/* Set one tuning field (docs/kernel.md, "Tuning"); a value out of range stops the run. */
#define BK_TUNE(field, value) \
  do { \
    tfe_tuning bk_t_ = tfe_tuning_get(); \
    bk_t_.field = (value); \
    if (tfe_tuning_set(&bk_t_) != TFE_OK) { fprintf(stderr, "%s\n", tfe_last_error()); exit(1); } \
  } while (0)

static double median(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmpd); return v[n / 2]; }

/* One timed tfe_contiguous (+ release) on `threads` threads; with `check`, compares a
 * sample of elements with direct indexing. */
static double once_tfe(const tfe_view_f64 *v, int threads, bool check) {
  tfe_set_num_threads(threads);
  tfe_tensor_f64 out = {0};
  evict();
  double t0 = now_ms();
  if (tfe_contiguous_f64(v, TFE_COLMAJOR, &out)) { fprintf(stderr, "tfe: %s\n", tfe_last_error()); exit(1); }
  double t1 = now_ms();
  if (check) {
    int64_t n = tfe_layout_numel(&out.v.lay), idx[TFE_MAX_RANK];
    for (int64_t s = 0; s < 4096; s++) {
      int64_t lin = (s * 2654435761LL) % n, rem = lin;
      for (int k = 0; k < v->lay.rank; k++) { idx[k] = rem % v->lay.dims[k]; rem /= v->lay.dims[k]; }
      double a = 0, b = 0;
      tfe_get_f64(v, idx, &a);
      tfe_get_f64(&out.v, idx, &b);
      if (a != b || out.v.data[lin] != b) { fprintf(stderr, "WRONG result at %lld\n", (long long)lin); exit(1); }
    }
  }
  double t2 = now_ms();
  tfe_tensor_release_f64(&out);
  return (t1 - t0) + (now_ms() - t2);
}

/* One timed allocate + advise + memcpy + free of the same bytes: through tenferro's
 * allocator (`huge`), or fresh 4 KiB pages straight from the C library. */
static double once_memcpy(const double *src, size_t bytes, bool huge, bool streamed) {
  tfe_allocator a = tfe_get_allocator();
  evict();
  double t0 = now_ms();
  void *p = huge ? a.alloc(a.ctx, bytes, TFE_ALIGN) : malloc(bytes);
  if (!p) { fprintf(stderr, "memcpy: out of memory\n"); exit(1); }
  if (huge && !tfe__ts.pool_recycled) tfe__kadvise_huge(p, bytes);
  bench_copy(p, src, bytes, streamed);
  __asm__ volatile("" : : "r"(p) : "memory");
  if (huge) a.free(a.ctx, p); else free(p);
  return now_ms() - t0;
}

/* The same on `threads` threads, each copying its share (the machine's scaling limit for
 * a fresh destination, timed next to the tfe columns). */
static double once_memcpy_par(const double *src, size_t bytes, int threads) {
  tfe_allocator a = tfe_get_allocator();
  evict();
  double t0 = now_ms();
  char *p = a.alloc(a.ctx, bytes, TFE_ALIGN);
  if (!p) { fprintf(stderr, "memcpy: out of memory\n"); exit(1); }
  tfe__kadvise_huge(p, bytes);
  TFE_OMP(parallel num_threads(threads))
  {
    size_t t = 0, m = 1;
#ifdef _OPENMP
    t = (size_t)omp_get_thread_num();
    m = (size_t)omp_get_num_threads();
#endif
    size_t lo = bytes / 64 * t / m * 64, hi = t + 1 == m ? bytes : bytes / 64 * (t + 1) / m * 64;
    memcpy(p + lo, (const char *)src + lo, hi - lo);
  }
  __asm__ volatile("" : : "r"(p) : "memory");
  a.free(a.ctx, p);
  return now_ms() - t0;
}

/* numpy times by pattern id from the peer script (NAN when numpy is missing). */
static int numpy_times(const char *json, int reps, const char *only, char ids[][128], double *ms) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "python3 bench/peer_numpy_permute.py '%s' %d %s 2>/dev/null", json, reps, only ? only : "");
  FILE *f = popen(cmd, "r");
  if (!f) return 0;
  int n = 0;
  while (n < MAXP && fscanf(f, "%127s %lf", ids[n], &ms[n]) == 2) n++;
  pclose(f);
  return n;
}

int main(int argc, char **argv) {
  const char *path = "../shared/bench/permutation_patterns.json", *only = NULL;
  int reps = 5;
  bool use_numpy = true, two = false, no4k = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--no-numpy")) use_numpy = false;
    else if (!strcmp(argv[i], "--threads2")) two = true;
    else if (!strcmp(argv[i], "--warm")) evict_on = false;
    else if (!strcmp(argv[i], "--no-4k")) no4k = true;
    else if (!strcmp(argv[i], "--no-pool")) tfe_pool_set_limit(0); /* fresh pages every call */
    else if (!strcmp(argv[i], "--tile") && i + 1 < argc) BK_TUNE(copy_tile_bytes, atoi(argv[++i])); /* tuning */
    else if (!strcmp(argv[i], "--gather-all") && i + 1 < argc) BK_TUNE(kernel_gather_all, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--vg") && i + 1 < argc) BK_TUNE(kernel_vector_gather, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--run-pf") && i + 1 < argc) BK_TUNE(copy_run_prefetch_bytes, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--nt-min") && i + 1 < argc) BK_TUNE(kernel_stream_min_bytes, atoll(argv[++i]));  /* tuning */
    else if (!strcmp(argv[i], "--buf") && i + 1 < argc) BK_TUNE(copy_buffered_tiles, atoi(argv[++i]));
    else path = argv[i];
  }
  if (reps < 1) reps = 1;
  if (reps > 64) reps = 64;
  char *json = bench_slurp(path);
  if (!json) { fprintf(stderr, "cannot read %s\n", path); return 1; }
  pattern pats[MAXP];
  int np = parse(json, pats);
  char nid[MAXP][128];
  double nms[MAXP];
  int nn = use_numpy ? numpy_times(path, reps, only, nid, nms) : 0;
  printf("# %s, f64, allocation-inclusive, median of %d, tfe on 1 thread%s\n", path, reps,
         two ? " (tfe2: 2 threads)" : "");
  for (int k = 0; k < np; k++) {
    pattern *q = &pats[k];
    if (only && strcmp(only, q->id)) continue;
    tfe_tensor_f64 src = {0};
    if (tfe_empty_f64(&src, q->rank, q->shape, TFE_COLMAJOR)) { fprintf(stderr, "%s\n", tfe_last_error()); return 1; }
    int64_t n = tfe_layout_numel(&src.v.lay);
    /* the source is what tfe_contiguous would have made (huge pages, like numpy's arrays) */
    tfe__kadvise_huge(src.v.data, (size_t)n * sizeof(double));
    TFE_OMP(parallel for schedule(static))
    for (int64_t i = 0; i < n; i++) src.v.data[i] = (double)i;
    tfe_layout sl = src.v.lay;
    if (q->explicit_strides) for (int i = 0; i < q->rank; i++) sl.strides[i] = q->strides[i];
    tfe_view_f64 v = {src.v.data, {q->rank, 0, {0}, {0}}, false}; /* out[i] = src[i_perm] */
    for (int i = 0; i < q->rank; i++) { v.lay.dims[i] = sl.dims[q->perm[i]]; v.lay.strides[i] = sl.strides[q->perm[i]]; }
    size_t bytes = (size_t)n * sizeof(double);
    /* rounds interleave the columns (one call each) so that load from other processes hits
     * them alike; one warm-up round, which also checks the result */
    double tv[7][64];
    for (int r = -1; r < reps; r++) {
      double x[6] = {once_memcpy(src.v.data, bytes, true, false), no4k ? NAN : once_memcpy(src.v.data, bytes, false, false),
                     once_tfe(&v, 1, r < 0), two ? once_tfe(&v, 2, false) : 0,
                     two ? once_memcpy_par(src.v.data, bytes, 2) : 0, once_memcpy(src.v.data, bytes, true, true)};
      if (r >= 0) for (int c = 0; c < 6; c++) tv[c][r] = x[c];
      if (r >= 0) tv[6][r] = x[0] < x[5] ? x[0] : x[5]; /* the copy limit: the faster of the two */
    }
    double tl = median(tv[0], reps), tn = median(tv[5], reps), t4k = median(tv[1], reps), t1 = median(tv[2], reps);
    double tm = median(tv[6], reps);
    double best = tv[2][0] / tv[6][0]; /* sorted by median(): fastest round of each column */
    printf("%s tfe_ms=%.2f memcpy_ms=%.2f ratio=%.2f libc_ms=%.2f nt_ms=%.2f", q->id, t1, tm, t1 / tm, tl, tn);
    for (int j = 0; j < nn; j++) if (!strcmp(nid[j], q->id)) printf(" numpy_ms=%.2f", nms[j]);
    if (two) {
      double t2 = median(tv[3], reps);
      double m2 = median(tv[4], reps);
      printf(" tfe2_ms=%.2f speedup2=%.2f memcpy2_ms=%.2f memcpy_speedup2=%.2f", t2, t1 / t2, m2, tl / m2);
    }
    printf(" best_ratio=%.2f", best);
    printf(" memcpy4k_ms=%.2f MiB=%.0f\n", t4k, bytes / 1048576.0);
    fflush(stdout);
    tfe_tensor_release_f64(&src);
  }
  free(json);
  return 0;
}
