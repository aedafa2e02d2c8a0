/* bench_transpose_orders — what the memory traffic of a large 2-D transpose's tile orders costs
 * on this host without any shuffle work, timed in the same rounds as tenferro's transpose and
 * the streamed copy (the limit the permutation ratios are taken against). A 2-D transpose cannot
 * read and write in order at once: tiles read the source in pieces of TW bytes from TR rows and
 * write the destination in pieces of TR elements; a band reads B = 64 / es rows in step and
 * writes one line's worth to each destination row. Each pattern reads every source line once
 * (64-byte loads, folded so that the compiler keeps them), then writes the tile's destination
 * pieces (whole aligned lines streamed, partial ones by masked stores), into a fresh buffer with
 * the allocator and huge-page advice of tfe_contiguous; caches emptied before each. Where even
 * the traffic alone takes well over the streamed copy's time, the gap to it is the memory
 * system's cost of the transpose's order, not the kernel's shuffles.
 *
 *   bench_transpose_orders [--reps R] ES:D0,D1 ...   (cases as bench_permute_sweep --case
 *                          ES:D0,D1:1,0: D0 contiguous in the source, D1 in the result)
 *
 * Prints per case the median of R rounds (default 5), ms: stream= (streamed copy), tfe=
 * (tfe_contiguous of the transposed view, allocation-inclusive as the copies), each pattern,
 * then the fastest pattern against the streamed copy and tenferro against the fastest. */
#define _GNU_SOURCE
#include <tenferro.h>
#include <immintrin.h>
#include <time.h>

#include "bench_common.h"
#include "bench_userkinds.h"

#if defined(__AVX512BW__)
typedef struct { int64_t tr, tw; } shape; /* tile rows (source rows) x tile width (source bytes); tw 0: a band */

/* Writes bytes [0, n) at q: whole aligned lines streamed, the partial lines at the ends by
 * masked normal stores. */
static inline void put_piece(char *q, int64_t n, __m512i v) {
  char *a = (char *)(((uintptr_t)q + 63) & ~(uintptr_t)63), *e = q + n;
  if (a > e) a = e;
  if (a > q) _mm512_mask_storeu_epi8(q, ~0ull >> (64 - (a - q)), v);
  for (; a + 64 <= e; a += 64) _mm512_stream_si512((void *)a, v);
  if (e > a) _mm512_mask_storeu_epi8(a, ~0ull >> (64 - (e - a)), v);
}

/* One tiled pattern: source R rows of C bytes, destination C / es rows of R * es bytes. */
static uint64_t run_tiles(char *d, const char *s, int64_t R, int64_t C, int64_t es, shape t) {
  __m512i acc = _mm512_setzero_si512();
  const int64_t tr = t.tr, tw = t.tw ? t.tw : C;
  for (int64_t jb = 0; jb < C; jb += tw)
    for (int64_t ib = 0; ib < R; ib += tr) {
      const int64_t nr = ib + tr <= R ? tr : R - ib, nw = jb + tw <= C ? tw : C - jb;
      for (int64_t i = 0; i < nr; i++) { /* (the pieces' tails under a line: one unaligned load) */
        const char *p = s + (ib + i) * C + jb;
        for (int64_t j = 0; j < nw; j += 64)
          acc = _mm512_xor_si512(acc, _mm512_loadu_si512(j + 64 <= nw ? p + j : p + nw - 64 >= s ? p + nw - 64 : p));
      }
      for (int64_t j = 0; j < nw / es; j++) put_piece(d + ((jb / es + j) * R + ib) * es, nr * es, acc);
    }
  _mm_sfence();
  uint64_t r[8];
  _mm512_storeu_si512(r, acc);
  return r[0];
}

/* A band of B = 64 / es source rows read in step, 64 bytes of each at a time (prefetched 16
 * lines ahead), each destination row's piece of the band written after every 64 source bytes. */
static uint64_t run_band(char *d, const char *s, int64_t R, int64_t C, int64_t es) {
  __m512i acc = _mm512_setzero_si512();
  const int64_t B = 64 / es;
  for (int64_t ib = 0; ib < R; ib += B) {
    const int64_t nr = ib + B <= R ? B : R - ib;
    for (int64_t j = 0; j < C; j += 64) {
      const int64_t nw = j + 64 <= C ? 64 : C - j;
      for (int64_t i = 0; i < nr; i++) {
        const char *p = s + (ib + i) * C + j;
        _mm_prefetch(p + 1024, _MM_HINT_T0);
        acc = _mm512_xor_si512(acc, _mm512_loadu_si512(nw == 64 ? p : p + nw - 64));
      }
      for (int64_t c = 0; c < nw / es; c++) put_piece(d + ((j / es + c) * R + ib) * es, nr * es, acc);
    }
  }
  _mm_sfence();
  uint64_t r[8];
  _mm512_storeu_si512(r, acc);
  return r[0];
}

static double pattern_ms(const char *s, int64_t R, int64_t C, int64_t es, shape t) {
  tfe_allocator a = tfe_get_allocator();
  const size_t bytes = (size_t)(R * C);
  double t0 = now_ms();
  char *p = a.alloc(a.ctx, bytes, TFE_ALIGN);
  if (!p) return -1;
  tfe__kadvise_huge(p, bytes);
  uint64_t x = t.tr ? run_tiles(p, s, R, C, es, t) : run_band(p, s, R, C, es);
  __asm__ volatile("" : : "r"(x), "r"(p) : "memory");
  a.free(a.ctx, p);
  return now_ms() - t0;
}

/* tenferro: tfe_contiguous of the source read transposed, as bench_permute_sweep times it. */
#define TFE_MS(S, T)                                                                             \
  static tfe_status contig_##S(const char *s, tfe_layout lay) {                                \
    tfe_view_##S v = {(T *)(void *)s, lay, false};                                              \
    tfe_tensor_##S o = {0};                                                                     \
    tfe_status e = tfe_contiguous_##S(&v, TFE_COLMAJOR, &o);                                    \
    tfe_tensor_release_##S(&o);                                                                 \
    return e;                                                                                   \
  }
TFE_MS(u8k, u8k)
TFE_MS(u16k, u16k)
TFE_MS(f32, float)
TFE_MS(f64, double)
TFE_MS(c128, tfe_c128)
static double tfe_ms(const char *s, int64_t R, int64_t C, int64_t es) {
  const tfe_layout lay = {2, 0, {R, C / es}, {C / es, 1}}; /* (source dims [C / es, R] read as [R, C / es]) */
  double t0 = now_ms();
  const tfe_status e = es == 1 ? contig_u8k(s, lay) : es == 2 ? contig_u16k(s, lay) : es == 4 ? contig_f32(s, lay)
                     : es == 8 ? contig_f64(s, lay) : contig_c128(s, lay);
  return e == TFE_OK ? now_ms() - t0 : -1;
}

static double median(double *x, int n) { qsort(x, (size_t)n, sizeof *x, cmpd); return x[n / 2]; }

int main(int argc, char **argv) {
  int reps = 5;
  const shape shapes[] = {{64, 1024}, {256, 1024}, {1024, 1024}, {2048, 1024}, {4096, 1024}, {4096, 256}, {8192, 256}, {256, 4096}, {1024, 4096}, {64, 16384}, {0, 0}};
  const int ns = (int)(sizeof shapes / sizeof shapes[0]);
  printf("# 2-D transposes: the memory traffic of tile orders without shuffles (patterns TRxTW: tiles of TR source rows x TW bytes; band: 64/es rows in step), 1 thread, median of R rounds, ms\n");
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) { reps = atoi(argv[++i]); continue; }
    long long es, d0, d1;
    if (sscanf(argv[i], "%lld:%lld,%lld", &es, &d0, &d1) != 3 || (es != 1 && es != 2 && es != 4 && es != 8 && es != 16) || d0 < 64 || d1 < 64 || reps < 1 || reps > 99) {
      fprintf(stderr, "usage: bench_transpose_orders [--reps R] ES:D0,D1 ... (ES 1, 2, 4, 8 or 16; D0, D1 >= 64)\n");
      return 2;
    }
    const int64_t C = d0 * es, R = d1; /* source rows of C bytes */
    const size_t bytes = (size_t)(R * C);
    char *s = aligned_alloc(64, bytes);
    if (!s) { fprintf(stderr, "out of memory\n"); return 1; }
    for (size_t k = 0; k < bytes; k++) s[k] = (char)(k * 7 + k / 4093);
    double ts[99], tt[99], tp[16][99];
    for (int r = -1; r < reps; r++) { /* (round -1: warm-up) */
      evict(); const double a = memcpy_fresh_ms_ex(s, bytes, true);
      evict(); const double b = tfe_ms(s, R, C, es);
      if (a < 0 || b < 0) { fprintf(stderr, "out of memory\n"); return 1; }
      for (int k = 0; k < ns; k++) {
        evict();
        const double x = pattern_ms(s, R, C, es, shapes[k]);
        if (x < 0) { fprintf(stderr, "out of memory\n"); return 1; }
        if (r >= 0) tp[k][r] = x;
      }
      if (r >= 0) { ts[r] = a; tt[r] = b; }
    }
    const double ms = median(ts, reps), mt = median(tt, reps);
    double best = 1e30;
    printf("case %lld:%lld,%lld:1,0 MiB=%.0f stream=%.2f tfe=%.2f |", es, d0, d1, bytes / 1048576.0, ms, mt);
    for (int k = 0; k < ns; k++) {
      const double m = median(tp[k], reps);
      if (m < best) best = m;
      if (shapes[k].tr) printf(" %lldx%lld=%.2f", (long long)shapes[k].tr, (long long)shapes[k].tw, m);
      else printf(" band=%.2f", m);
    }
    printf(" | best/stream=%.2f tfe/stream=%.2f tfe/best=%.2f\n", best / ms, mt / ms, mt / best);
    free(s);
  }
  return 0;
}
#else
int main(void) { printf("bench_transpose_orders: needs AVX-512 (not built for this CPU)\n"); return 0; }
#endif
