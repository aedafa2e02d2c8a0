/* bench/sim/bytes_tr.c — where a u8 2-D transpose's time goes on one core: a standalone copy of
 * the library's buffered tile (64x64-byte AVX2 register blocks into a per-thread buffer, columns
 * streamed out), with the tile shape, the prefetch distance, the tile order and the write-out
 * varied on the real buffers (docs/bench-kernel.md, session 19).
 * Build: gcc -std=c11 -O2 -march=native bench/sim/bytes_tr.c -o /tmp/bytes_tr
 * Run:   taskset -c 1 /tmp/bytes_tr R C  TR TC PF ORDER OUT [REPS]
 *   source: R rows of C contiguous bytes (row i at i*C); destination column j (of R bytes) at
 *   j*R; tiles TR rows x TC bytes; PF: prefetch each row PF blocks ahead (0: off); ORDER 0: tiles
 *   along the source (same rows, next TC bytes) first, 1: along the destination; OUT 0: buffer
 *   then streamed columns, 1: buffer then normal stores, 2: read-only (source in tile order),
 *   3: into the buffer only (no write-out), 4: each block into one 4 KiB scratch (L1) only.
 *   Environment: OLDTR=1 the transposes through a second array (the library's form before
 *   session 19), SPREAD=1 the prefetches spread over the block's eight steps, NOEVICT=1 no
 *   cache emptying before each timed call. Tiles need both sides >= 64. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static void *big(size_t n) {
  void *p = aligned_alloc(1 << 21, (n + (1 << 21) - 1) & ~(size_t)((1 << 21) - 1));
  madvise(p, n, MADV_HUGEPAGE);
  memset(p, 1, n);
  return p;
}
/* 16x16 bytes per 128-bit lane, in place: round k pairs registers i and i + (8 >> k), the low
 * half of the unpack staying in i; after four rounds register j holds column j (see
 * docs/bench-kernel.md, session 19: at most 18 live registers, no spills at -O2). */
static int64_t R, C, TR, TC, PF, ORDER, OUT, OLDTR, SPREAD;
#define TR_PAIR(a, b) do { __m256i lo_ = _mm256_unpacklo_epi8(r[a], r[b]); r[b] = _mm256_unpackhi_epi8(r[a], r[b]); r[a] = lo_; } while (0)
static inline __attribute__((always_inline)) void tr16(__m256i *r) {
  if (OLDTR) {
  __m256i t[16];
  for (int round = 1; round < 16; round *= 2) {
    for (int i = 0; i < 8; i++) {
      t[2 * i] = _mm256_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm256_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
  }
  return;
  }
  TR_PAIR(0, 8); TR_PAIR(1, 9); TR_PAIR(2, 10); TR_PAIR(3, 11); TR_PAIR(4, 12); TR_PAIR(5, 13); TR_PAIR(6, 14); TR_PAIR(7, 15);
  TR_PAIR(0, 4); TR_PAIR(1, 5); TR_PAIR(2, 6); TR_PAIR(3, 7); TR_PAIR(8, 12); TR_PAIR(9, 13); TR_PAIR(10, 14); TR_PAIR(11, 15);
  TR_PAIR(0, 2); TR_PAIR(1, 3); TR_PAIR(4, 6); TR_PAIR(5, 7); TR_PAIR(8, 10); TR_PAIR(9, 11); TR_PAIR(12, 14); TR_PAIR(13, 15);
  TR_PAIR(0, 1); TR_PAIR(2, 3); TR_PAIR(4, 5); TR_PAIR(6, 7); TR_PAIR(8, 9); TR_PAIR(10, 11); TR_PAIR(12, 13); TR_PAIR(14, 15);
}
/* 64x64 block: rows sr[0..63] (64 bytes each) -> buffer columns b + j*lb (64 bytes each) */
__attribute__((noinline)) static void blk(uint8_t *b, int64_t lb, const uint8_t *const *sr, int64_t pf) {
  __m256i y[16];
  for (int g = 0; g < 4; g += 2)
    for (int h = 0; h < 4; h++) {
      if (pf) for (int i = 0; i < 8; i++) __builtin_prefetch(sr[(g * 4 + h * 2) * 4 + i] + pf);
      for (int i = 0; i < 16; i++)
        y[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(sr[g * 16 + i] + 16 * h))),
                                       _mm_loadu_si128((const __m128i *)(sr[(g + 1) * 16 + i] + 16 * h)), 1);
      tr16(y);
      for (int j = 0; j < 16; j++) _mm256_storeu_si256((__m256i *)(b + (16 * h + j) * lb + 16 * g), y[j]);
    }
}

static volatile uint64_t sink;
static void stream_col(uint8_t *d, const uint8_t *s, int64_t n) {
  int64_t h = (int64_t)(-(uintptr_t)d & 63);
  if (h > n) h = n;
  memcpy(d, s, (size_t)h);
  d += h; s += h; n -= h;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    _mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
    _mm256_stream_si256((__m256i *)(d + 32), _mm256_loadu_si256((const __m256i *)(s + 32)));
  }
  memcpy(d, s, (size_t)n);
}
__attribute__((noinline)) static void tile(uint8_t *dst, const uint8_t *src, uint8_t *buf, int64_t i0, int64_t n0, int64_t j0, int64_t n1) {
  const int64_t lb = n0 + 64;
  const uint8_t *sr[64];
  if (OUT == 2) {
    __m256i acc = _mm256_setzero_si256();
    for (int64_t ib = 0; ib < n0; ib += 64)
      for (int64_t jb = 0; jb < n1; jb += 64)
        for (int i = 0; i < 64 && ib + i < n0; i++) {
          const uint8_t *r = src + (i0 + ib + i) * C + j0 + jb;
          if (PF && jb + 64 * PF < n1) __builtin_prefetch(r + 64 * PF);
          acc = _mm256_xor_si256(acc, _mm256_loadu_si256((const __m256i *)r));
        }
    sink += (uint64_t)_mm256_extract_epi64(acc, 0);
    return;
  }
  for (int64_t ib = 0;; ib += 64) {
    if (ib > n0 - 64) ib = n0 - 64;
    for (int i = 0; i < 64; i++) sr[i] = src + (i0 + ib + i) * C + j0;
    for (int64_t jb = 0;; jb += 64) {
      if (jb > n1 - 64) jb = n1 - 64;
      int64_t pf = PF && (ORDER == 0 ? j0 + jb + 64 * PF < C : jb + 64 * PF < n1) ? 64 * PF : 0;
      if (pf && !SPREAD)
        for (int i = 0; i < 64; i++) __builtin_prefetch(sr[i] + jb + pf);
      const uint8_t *s2[64];
      for (int i = 0; i < 64; i++) s2[i] = sr[i] + jb;
      if (OUT == 4) blk(buf + (jb & 64), 64, s2, SPREAD ? pf : 0); else blk(buf + jb * lb + ib, lb, s2, SPREAD ? pf : 0);
      if (jb == n1 - 64) break;
    }
    if (ib == n0 - 64) break;
  }
  for (int64_t j = 0; j < n1; j++) {
    uint8_t *d = dst + (j0 + j) * R + i0;
    if (OUT >= 3) break;
    if (OUT == 0) stream_col(d, buf + j * lb, n0);
    else memcpy(d, buf + j * lb, (size_t)n0);
  }
}
static void run(uint8_t *dst, const uint8_t *src, uint8_t *buf) {
  int64_t ni = (R + TR - 1) / TR, nj = (C + TC - 1) / TC;
  for (int64_t a = 0; a < ni * nj; a++) {
    int64_t ti = ORDER ? a % ni : a / nj, tj = ORDER ? a / ni : a % nj;
    int64_t i0 = ti * TR, j0 = tj * TC;
    tile(dst, src, buf, i0, i0 + TR <= R ? TR : R - i0, j0, j0 + TC <= C ? TC : C - j0);
  }
  _mm_sfence();
}
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
int main(int argc, char **argv) {
  if (argc < 8) { fprintf(stderr, "usage: R C TR TC PF ORDER OUT [REPS]\n"); return 1; }
  OLDTR = getenv("OLDTR") != NULL;
  SPREAD = getenv("SPREAD") != NULL;
  R = atoll(argv[1]); C = atoll(argv[2]); TR = atoll(argv[3]); TC = atoll(argv[4]);
  PF = atoll(argv[5]); ORDER = atoll(argv[6]); OUT = atoll(argv[7]);
  int reps = argc > 8 ? atoi(argv[8]) : 7;
  size_t n = (size_t)(R * C), ev = 96u << 20;
  uint8_t *src = big(n), *dst = big(n), *e = big(ev), *buf = big((size_t)(TR + 64) * TC + 4096);
  for (size_t k = 0; k < n; k++) src[k] = (uint8_t)(k * 7 + k / 251);
  double tt[64], tm[64];
  for (int r = 0; r <= reps && r < 64; r++) {
    uint64_t x = 0;
    for (size_t k = 0; k < ev; k += 64) x += e[k];
    sink += x;
    double t0 = now();
    memcpy(dst, src, n);
    tm[r] = now() - t0;
    if (!getenv("NOEVICT")) for (size_t k = 0; k < ev; k += 64) x += e[k];
    sink += x;
    t0 = now();
    run(dst, src, buf);
    tt[r] = now() - t0;
  }
  if (OUT < 2 && TR >= 64 && TC >= 64) /* check */
    for (int k = 0; k < 100000; k++) {
      int64_t i = rand() % R, j = rand() % C;
      if (dst[j * R + i] != src[i * C + j]) { printf("WRONG at %ld %ld\n", (long)i, (long)j); return 1; }
    }
  qsort(tt + 1, (size_t)reps, sizeof(double), cmp);
  qsort(tm + 1, (size_t)reps, sizeof(double), cmp);
  printf("R %ld C %ld TR %ld TC %ld PF %ld ORDER %ld OUT %ld: tr %.2f ms memcpy %.2f ms ratio %.2f (best %.2f/%.2f)\n", (long)R, (long)C,
         (long)TR, (long)TC, (long)PF, (long)ORDER, (long)OUT, 1e3 * tt[1 + reps / 2], 1e3 * tm[1 + reps / 2],
         tt[1 + reps / 2] / tm[1 + reps / 2], 1e3 * tt[1], 1e3 * tm[1]);
  return 0;
}
