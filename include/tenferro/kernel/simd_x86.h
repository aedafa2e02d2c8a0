/* tenferro/kernel/simd_x86.h — the vector micro-kernels of the kernel room: register
 * transposes (8x8 blocks of 8-byte elements, 16x8 of 4-byte, 4x4 of 16-byte), the f64 ops
 * fused into them, streamed copies and columns, and vector gathers; for x86 with gcc or
 * clang, AVX-512 or AVX2 (under a target pragma in baseline builds). Elsewhere only the
 * portable entry points exist (tfe__ksfence, tfe__kstream, tfe__kgather8), and the callers
 * run their scalar loops (TFE__KHAVE_TR8 is 0, tfe__ksimd() is 0).
 *
 * Bodies only: <immintrin.h> and the vector types are parsed only where bodies are (never in
 * TFE_HEADER units). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_SIMD_X86_H
#define TENFERRO_KERNEL_SIMD_X86_H
#include <tenferro/kernel/math.h>
#endif
#elif !defined(TENFERRO_KERNEL_SIMD_X86_BODY) /* bodies */
#define TENFERRO_KERNEL_SIMD_X86_BODY
#include <string.h>

/* Register transpose blocks by element size: rows (source rows, destination-contiguous) and
 * columns per block; 0 rows: no register kernel for that size (portable loops). */
TFE_INTERNAL int64_t tfe__krb(size_t es) {
  return es == 8 ? 8 : es == 4 ? 16 : es == 16 ? 4 : es == 2 ? 32 : es == 1 ? 64 : 0;
}
TFE_INTERNAL int64_t tfe__kcb(size_t es) { return es == 16 ? 4 : es < 4 ? 64 / (int64_t)es : 8; }

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TFE__KHAVE_TR8 1
/* ---- transpose micro-kernels ---------------------------------------------------------------
 * An 8x8 block of 8-byte elements: column j of the destination (8 consecutive elements at
 * dcol[j]) receives element j of each source row (8 consecutive elements at srow[i]).
 * Every source and destination line is used whole while in registers, so large power-of-two
 * strides (which map all rows to one cache set) cost nothing extra. Kinds of other sizes
 * use the portable loops of the templates. `nt`: stream the stores past the cache (the
 * caller checked 64-byte alignment and issues tfe__ksfence afterwards).
 *
 * Eight doubles (one 64-byte line) are one tfe__kv8: an AVX-512 register, or two AVX2
 * registers. Everything below the tfe__kv8_* primitives is written once for both; a build
 * without AVX2 (-march lacking it) runs the portable loops.
 *
 * Which micro-kernels run. Built with -march covering AVX-512 or AVX2, they are inlined and
 * always used. Built for baseline x86-64 (no -march: the common way to compile a program
 * that includes this header), the AVX2 set is compiled for AVX2 all the same (a target
 * pragma) and used when the CPU has it (tfe__ksimd(), checked per tile): a program built
 * once runs the vector transposes wherever they exist. The tuning field kernel_portable = 1
 * forces the portable loops (tests). */
#if defined(__AVX512F__) || defined(__AVX2__)
#define tfe__ksimd() (!tfe__st.tune.kernel_portable)
#else
#define TFE__KSIMD_PRAGMA 1
TFE_INTERNAL bool tfe__ksimd(void) { return !tfe__st.tune.kernel_portable && __builtin_cpu_supports("avx2"); }
#endif
#if defined(__AVX512F__)
typedef __m512d tfe__kv8;
#define tfe__kv8_ld(p) _mm512_loadu_pd(p)
#define tfe__kv8_st(p, v) _mm512_storeu_pd(p, v)
#define tfe__kv8_nt(p, v) _mm512_stream_pd(p, v)
#define tfe__kv8_set1(x) _mm512_set1_pd(x)
#define tfe__kv8_add(x, y) _mm512_add_pd(x, y)
#define tfe__kv8_sub(x, y) _mm512_sub_pd(x, y)
#define tfe__kv8_mul(x, y) _mm512_mul_pd(x, y)
#define tfe__kv8_div(x, y) _mm512_div_pd(x, y)
#define tfe__kv8_neg(x) _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MIN)))
#else /* AVX2: a line is two 256-bit halves */
typedef struct { __m256d lo, hi; } tfe__kv8;
#define TFE__KV8_BIN(name, f) \
  TFE_INTERNAL tfe__kv8 tfe__kv8_##name(tfe__kv8 x, tfe__kv8 y) { tfe__kv8 v = {f(x.lo, y.lo), f(x.hi, y.hi)}; return v; }
#endif
/* Fixed-count loops over register arrays fully unrolled also at -O2, where gcc does not peel
 * them by itself and kept the arrays in memory (8-byte transposes ran 1.6-2x slower at -O2 than
 * at -O3: docs/bench-kernel.md, session 31). */
#if defined(__clang__)
#define TFE__KUNROLL _Pragma("unroll")
#else
#define TFE__KUNROLL _Pragma("GCC unroll 32")
#endif
/* Register-array helpers that must be inlined: called through a pointer to their array, gcc
 * may keep them out of line and the array in memory (a u8 block 2.2x slower that way). */
#define TFE__KINLINE static inline __attribute__((always_inline))
/* Whole-block kernels kept out of line: inlined into every tile loop they made those loops'
 * other paths slower (u16 tiles of 11 rows 1.05-1.1x). */
#define TFE__KOUTLINE static __attribute__((noinline, unused))
#if defined(TFE__KSIMD_PRAGMA)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
#endif
#if defined(__AVX512F__)
/* Registers r[i] (source rows) to c[j] (destination columns). */
TFE_INTERNAL void tfe__ktr8_regs(const __m512d *r, __m512d *c) {
  __m512d a[8], b[8];
  TFE__KUNROLL for (int i = 0; i < 8; i += 2) {
    a[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);     /* r_i[0] r_i+1[0] r_i[2] r_i+1[2] ... */
    a[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
  }
  const __m512i p1 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i p2 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  TFE__KUNROLL for (int h = 0; h < 8; h += 4) { /* rows h..h+3: b holds 4-row groups of columns */
    b[h + 0] = _mm512_permutex2var_pd(a[h + 0], p1, a[h + 2]);
    b[h + 1] = _mm512_permutex2var_pd(a[h + 1], p1, a[h + 3]);
    b[h + 2] = _mm512_permutex2var_pd(a[h + 0], p2, a[h + 2]);
    b[h + 3] = _mm512_permutex2var_pd(a[h + 1], p2, a[h + 3]);
  }
  const __m512i q1 = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
  const __m512i q2 = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  TFE__KUNROLL for (int k = 0; k < 4; k++) {
    c[k] = _mm512_permutex2var_pd(b[k], q1, b[k + 4]);
    c[k + 4] = _mm512_permutex2var_pd(b[k], q2, b[k + 4]);
  }
}
/* Transposed 8x8 blocks of 8-byte elements (4x4 of 16-byte) into destination columns whose lines do not start
 * at a block boundary: column j's first element lies a_j = (address / 8) % 8 elements into
 * its line. Each block's column c (rows ib .. ib+7) is joined with the same column's register
 * from the block above (car, rows ib-8 .. ib-1) into the whole line of rows ib-a_j ..
 * ib-a_j+7, which is streamed; the first row of blocks stores only its lanes from a_j on
 * (rows before the tile belong to another tile), and tfe__kskew_tail the rest of the last.
 * No tile buffer: every line in the middle of a column is written once, whole. */
TFE_INTERNAL __m512i tfe__kskew_idx(int a) { /* lane l: prev lane 8-a+l (l < a), else cur lane l-a */
  return _mm512_add_epi64(_mm512_set_epi64(15, 14, 13, 12, 11, 10, 9, 8), _mm512_set1_epi64(-a));
}
/* A 4x4 block of 16-byte elements (128-bit lanes): rows r[i] to columns c[j]. */
TFE_INTERNAL void tfe__ktr16_regs(const __m512d *r, __m512d *c) {
  __m512d t0 = _mm512_shuffle_f64x2(r[0], r[1], 0x44), t1 = _mm512_shuffle_f64x2(r[0], r[1], 0xEE);
  __m512d t2 = _mm512_shuffle_f64x2(r[2], r[3], 0x44), t3 = _mm512_shuffle_f64x2(r[2], r[3], 0xEE);
  c[0] = _mm512_shuffle_f64x2(t0, t2, 0x88); c[1] = _mm512_shuffle_f64x2(t0, t2, 0xDD);
  c[2] = _mm512_shuffle_f64x2(t1, t3, 0x88); c[3] = _mm512_shuffle_f64x2(t1, t3, 0xDD);
}
/* One row of blocks of es-byte elements (8: 8x8 blocks; 16: 4x4): source row i at srow[i],
 * columns 0 .. m1 (a multiple of the block) to destination columns dcol[j] (8-byte aligned)
 * from row ib on, car[j] the column's register from the row above. Lanes and a_j count
 * doubles. */
TFE_INTERNAL void tfe__kskew_row(size_t es, double *const *dcol, int64_t ib, const double *const *srow, int64_t m1,
                                 __m512d *car) {
  const int n = es == 8 ? 8 : 4, w = es == 8 ? 1 : 2; /* elements a side, doubles an element */
  __m512d r[8], c[8];
  for (int64_t jb = 0; jb < m1; jb += n) {
    for (int i = 0; i < n; i++) r[i] = _mm512_loadu_pd(srow[i] + w * jb);
    if (n == 8) tfe__ktr8_regs(r, c); else tfe__ktr16_regs(r, c);
    for (int j = 0; j < n; j++) {
      double *dj = dcol[jb + j] + w * ib;
      int a = (int)(((uintptr_t)dj >> 3) & 7);
      __m512d line = _mm512_permutex2var_pd(car[jb + j], tfe__kskew_idx(a), c[j]);
      if (ib == 0 && a) _mm512_mask_storeu_pd(dj - a, (__mmask8)(0xFF << a), line);
      else _mm512_stream_pd(dj - a, line);
      car[jb + j] = c[j];
    }
  }
}
/* The rows m0 - a_j .. m0 - 1 of each column left in car after the last row of blocks. */
TFE_INTERNAL void tfe__kskew_tail(size_t es, double *const *dcol, int64_t m0, int64_t m1, const __m512d *car) {
  for (int64_t j = 0; j < m1; j++) {
    double *dj = dcol[j] + (int64_t)(es / 8) * m0;
    int a = (int)(((uintptr_t)dj >> 3) & 7);
    if (a) _mm512_mask_storeu_pd(dj - a, (__mmask8)((1u << a) - 1), _mm512_permutex2var_pd(car[j], tfe__kskew_idx(a), car[j]));
  }
}
/* 8 gathered elements s[tab[0..7]] (AVX-512 gather). */
TFE_INTERNAL tfe__kv8 tfe__kv8_gather(const double *s, const int64_t *tab) {
  return _mm512_i64gather_pd(_mm512_loadu_si512((const void *)tab), s, 8);
}
#else /* AVX2: a line is two 256-bit halves */
TFE_INTERNAL tfe__kv8 tfe__kv8_ld(const double *p) { tfe__kv8 v = {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; return v; }
TFE_INTERNAL void tfe__kv8_st(double *p, tfe__kv8 v) { _mm256_storeu_pd(p, v.lo); _mm256_storeu_pd(p + 4, v.hi); }
TFE_INTERNAL void tfe__kv8_nt(double *p, tfe__kv8 v) { _mm256_stream_pd(p, v.lo); _mm256_stream_pd(p + 4, v.hi); }
TFE_INTERNAL tfe__kv8 tfe__kv8_set1(double x) { tfe__kv8 v = {_mm256_set1_pd(x), _mm256_set1_pd(x)}; return v; }
TFE__KV8_BIN(add, _mm256_add_pd)
TFE__KV8_BIN(sub, _mm256_sub_pd)
TFE__KV8_BIN(mul, _mm256_mul_pd)
TFE__KV8_BIN(div, _mm256_div_pd)
TFE__KV8_BIN(xor, _mm256_xor_pd)
#undef TFE__KV8_BIN
TFE_INTERNAL tfe__kv8 tfe__kv8_neg(tfe__kv8 x) { return tfe__kv8_xor(x, tfe__kv8_set1(-0.0)); }
/* One 4x4 block: rows r0..r3 to columns c[0..3]. */
TFE_INTERNAL void tfe__ktr4_regs(__m256d r0, __m256d r1, __m256d r2, __m256d r3, __m256d *c) {
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1); /* r0[0] r1[0] r0[2] r1[2] */
  __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  c[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  c[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  c[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  c[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
/* Registers r[i] (source rows) to c[j] (destination columns): four 4x4 blocks; column j < 4
 * takes its top half from rows 0-3 and its bottom half from rows 4-7. */
TFE_INTERNAL void tfe__ktr8_regs(const tfe__kv8 *r, tfe__kv8 *c) {
  __m256d q[4][4];
  tfe__ktr4_regs(r[0].lo, r[1].lo, r[2].lo, r[3].lo, q[0]); /* rows 0-3, cols 0-3 */
  tfe__ktr4_regs(r[4].lo, r[5].lo, r[6].lo, r[7].lo, q[1]); /* rows 4-7, cols 0-3 */
  tfe__ktr4_regs(r[0].hi, r[1].hi, r[2].hi, r[3].hi, q[2]); /* rows 0-3, cols 4-7 */
  tfe__ktr4_regs(r[4].hi, r[5].hi, r[6].hi, r[7].hi, q[3]); /* rows 4-7, cols 4-7 */
  TFE__KUNROLL for (int j = 0; j < 4; j++) {
    c[j].lo = q[0][j]; c[j].hi = q[1][j];
    c[j + 4].lo = q[2][j]; c[j + 4].hi = q[3][j];
  }
}
/* 8 gathered elements s[tab[0..7]] (two AVX2 gathers of 4). */
TFE_INTERNAL tfe__kv8 tfe__kv8_gather(const double *s, const int64_t *tab) {
  tfe__kv8 v = {_mm256_i64gather_pd(s, _mm256_loadu_si256((const __m256i *)(const void *)tab), 8),
                _mm256_i64gather_pd(s, _mm256_loadu_si256((const __m256i *)(const void *)(tab + 4)), 8)};
  return v;
}
#endif
/* Rows of 8x8 blocks over columns in segments: nr = 8 or 16 source rows at srow[i] + jb (jb =
 * 0, 8, .. < m1); the columns run in segments of seg (a multiple of 8) at stride ldd, segment
 * k's first column at d + tab[k * seg] (tab NULL: one segment at d); rows 8-15 go 8 elements
 * further down the columns. With 16 rows, both rows of blocks block by block (twice the source
 * rows in flight). Not inlined: inside the large tile functions the compiler spilled its
 * pointers (a 2 GiB f64 rotation ran 1.1-1.2x longer: docs/bench-kernel.md, session 30). */
__attribute__((noinline, unused)) static void tfe__ktr8p_seg(double *d, const int64_t *tab, int64_t seg, int64_t ldd,
                                                           const double *const *srow, int nr, int64_t m1, bool nt) {
  for (int64_t js = 0; js < m1; js += seg) {
    double *q0 = d + (tab ? tab[js] : 0);
    const int64_t e = js + seg < m1 ? js + seg : m1;
    for (int64_t jb = js; jb < e; jb += 8)
      for (int h = 0; h < nr; h += 8) {
        tfe__kv8 r[8], c[8];
        TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = tfe__kv8_ld(srow[h + i] + jb);
        tfe__ktr8_regs(r, c);
        double *q = q0 + (jb - js) * ldd + h;
        if (nt) { TFE__KUNROLL for (int j = 0; j < 8; j++) tfe__kv8_nt(q + j * ldd, c[j]); }
        else { TFE__KUNROLL for (int j = 0; j < 8; j++) tfe__kv8_st(q + j * ldd, c[j]); }
      }
  }
}
/* A row of blocks: jb = 0, 8, .. < m1, source row i at srow[i] + jb, destination column j
 * at d + j*ldd: one segment of tfe__ktr8p_seg (as a leaf call the 2-D transposes ran as fast as
 * inlined, session 30). */
TFE_INTERNAL void tfe__ktr8p_row(double *d, int64_t ldd, const double *const *srow, int64_t m1, bool nt) {
  tfe__ktr8p_seg(d, NULL, m1, ldd, srow, 8, m1, nt);
}
/* Strided form: source row i at s + i*lds. */
TFE_INTERNAL void tfe__ktr8s_row(double *d, int64_t ldd, const double *s, int64_t lds, int64_t m1, bool nt) {
  const double *srow[8];
  TFE__KUNROLL for (int i = 0; i < 8; i++) srow[i] = s + i * lds;
  tfe__ktr8p_row(d, ldd, srow, m1, nt);
}
/* Pointer form: one pointer per source row and destination column (any layout). */
TFE_INTERNAL void tfe__ktr8(void *const *dcol, const void *const *srow, bool nt) {
  tfe__kv8 r[8], c[8];
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = tfe__kv8_ld((const double *)srow[i]);
  tfe__ktr8_regs(r, c);
  if (nt) { TFE__KUNROLL for (int j = 0; j < 8; j++) tfe__kv8_nt((double *)dcol[j], c[j]); }
  else { TFE__KUNROLL for (int j = 0; j < 8; j++) tfe__kv8_st((double *)dcol[j], c[j]); }
}
/* 4-byte kinds (f32 i32, 4-byte tropical): a block is 16 source rows x 8 columns, so that
 * each destination column is one whole 64-byte line (two AVX2 halves, stored together: a
 * streamed line is never left half written; they replaced the slower portable loops,
 * docs/bench-kernel.md). AVX2 also in AVX-512 builds. */
TFE_INTERNAL void tfe__ktr8x4_regs(const __m256 *r, __m256 *c) { /* an 8x8 block of floats */
  __m256 t[8], u[8];
  TFE__KUNROLL for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]); /* r_i[0] r_i+1[0] r_i[1] r_i+1[1] | [4] [5] */
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  TFE__KUNROLL for (int h = 0; h < 8; h += 4) { /* u[h+k]: column k (low lane) and k+4 (high) of rows h..h+3 */
    u[h + 0] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44);
    u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
  }
  TFE__KUNROLL for (int k = 0; k < 4; k++) {
    c[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    c[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}
/* One 16x8 block: source row i at srow[i], destination column j at dcol[j]. */
TFE_INTERNAL void tfe__ktr4(float *const *dcol, const float *const *srow, bool nt) {
  __m256 r[8], lo[8], hi[8];
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(srow[i]);
  tfe__ktr8x4_regs(r, lo);
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(srow[8 + i]);
  tfe__ktr8x4_regs(r, hi);
  TFE__KUNROLL for (int j = 0; j < 8; j++) {
    if (nt) { _mm256_stream_ps(dcol[j], lo[j]); _mm256_stream_ps(dcol[j] + 8, hi[j]); }
    else { _mm256_storeu_ps(dcol[j], lo[j]); _mm256_storeu_ps(dcol[j] + 8, hi[j]); }
  }
}
/* The last 8 rows of a 4-byte tile with fewer than 16 left (a destination run of 15): 8x8
 * blocks, half-line columns with normal stores. Strided rows, columns jb < m1 (m1 % 8 == 0). */
TFE_INTERNAL void tfe__ktr4h_row(float *d, int64_t ldd, const float *s, int64_t lds, int64_t m1) {
  for (int64_t jb = 0; jb < m1; jb += 8) {
    __m256 r[8], c[8];
    TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + i * lds + jb);
    tfe__ktr8x4_regs(r, c);
    TFE__KUNROLL for (int j = 0; j < 8; j++) _mm256_storeu_ps(d + (jb + j) * ldd, c[j]);
  }
}
/* One 4x4 block of 8- or 4-byte elements by pointers (a tile of 4-7 rows: a destination run of 4
 * doubles or floats; quarter- or sixteenth-line columns, normal stores; nt: 8-byte ones streamed). */
TFE_INTERNAL void tfe__ktrq(size_t es, void *const *dcol, const void *const *srow, bool nt) {
  if (es == 8) { /* (nt: streaming stores, each dcol[j] 32-byte aligned; the caller fences) */
    __m256d r0 = _mm256_loadu_pd((const double *)srow[0]), r1 = _mm256_loadu_pd((const double *)srow[1]);
    __m256d r2 = _mm256_loadu_pd((const double *)srow[2]), r3 = _mm256_loadu_pd((const double *)srow[3]);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1); /* r0[0] r1[0] r0[2] r1[2] */
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    __m256d c[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                    _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
    if (nt) for (int j = 0; j < 4; j++) _mm256_stream_pd((double *)dcol[j], c[j]);
    else for (int j = 0; j < 4; j++) _mm256_storeu_pd((double *)dcol[j], c[j]);
    return;
  }
  __m128 r0 = _mm_loadu_ps((const float *)srow[0]), r1 = _mm_loadu_ps((const float *)srow[1]);
  __m128 r2 = _mm_loadu_ps((const float *)srow[2]), r3 = _mm_loadu_ps((const float *)srow[3]);
  __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpackhi_ps(r0, r1); /* r0[0] r1[0] r0[1] r1[1] */
  __m128 t2 = _mm_unpacklo_ps(r2, r3), t3 = _mm_unpackhi_ps(r2, r3);
  _mm_storeu_ps((float *)dcol[0], _mm_movelh_ps(t0, t2));
  _mm_storeu_ps((float *)dcol[1], _mm_movehl_ps(t2, t0));
  _mm_storeu_ps((float *)dcol[2], _mm_movelh_ps(t1, t3));
  _mm_storeu_ps((float *)dcol[3], _mm_movehl_ps(t3, t1));
}
/* One 8x8 block of floats by pointers (a tile of 8-15 rows: half-line columns, normal stores). */
TFE_INTERNAL void tfe__ktr4h(float *const *dcol, const float *const *srow) {
  __m256 r[8], c[8];
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(srow[i]);
  tfe__ktr8x4_regs(r, c);
  TFE__KUNROLL for (int j = 0; j < 8; j++) _mm256_storeu_ps(dcol[j], c[j]);
}
/* 16-byte kinds (c128): a block is 4 rows x 4 columns of 16-byte elements, each row and
 * column one 64-byte line; an element is a 128-bit lane. Row i in r[2i] (elements 0-1) and
 * r[2i+1] (2-3); column j goes to c[2j] (rows 0-1) and c[2j+1] (rows 2-3). */
TFE_INTERNAL void tfe__ktr16(double *const *dcol, const double *const *srow, bool nt) {
  __m256d r[8], c[8];
  TFE__KUNROLL for (int i = 0; i < 4; i++) { r[2 * i] = _mm256_loadu_pd(srow[i]); r[2 * i + 1] = _mm256_loadu_pd(srow[i] + 4); }
  TFE__KUNROLL for (int h = 0; h < 2; h++) { /* columns 2h and 2h+1 come from the h-th half of each row */
    c[4 * h + 0] = _mm256_permute2f128_pd(r[h], r[2 + h], 0x20);
    c[4 * h + 1] = _mm256_permute2f128_pd(r[4 + h], r[6 + h], 0x20);
    c[4 * h + 2] = _mm256_permute2f128_pd(r[h], r[2 + h], 0x31);
    c[4 * h + 3] = _mm256_permute2f128_pd(r[4 + h], r[6 + h], 0x31);
  }
  TFE__KUNROLL for (int j = 0; j < 4; j++) {
    if (nt) { _mm256_stream_pd(dcol[j], c[2 * j]); _mm256_stream_pd(dcol[j] + 4, c[2 * j + 1]); }
    else { _mm256_storeu_pd(dcol[j], c[2 * j]); _mm256_storeu_pd(dcol[j] + 4, c[2 * j + 1]); }
  }
}
/* 1- and 2-byte kinds (user kinds: bytes, 16-bit integers or halves): a block is 64 x 64
 * bytes, 64/es source rows of one whole 64-byte line each, to 64/es destination columns of one
 * whole line each, built from 16x16 byte (8x8 16-bit) transposes of SSE2 registers: log2(n)
 * rounds of unpack lo/hi that pair register i with i + n/2, each rotating the (register,
 * position) bits of an element's index by one, n of them moving the row bits to the position
 * and the column bits to the register. Whole source lines: blocks of half or quarter lines
 * left each line to be found again by the next block, and 32 or 64 rows a power of two apart
 * share one L1 set (measured 3-4x memcpy that way). Streamed columns are assembled in a 4 KiB
 * stack block (L1) and stored one whole line at a time, so a streamed line is never left
 * partly written; others take each register's 32-byte half-column straight.
 * The rounds run in place: round k pairs registers i and i + n/2^(k+1), the unpack's low half
 * staying in i, which turns the same bits of the index (register j ends with column j). One
 * pair is live at a time: the form that unpacked into a second array needed 32 registers and
 * spilled at -O2 (session 19: 1.1-1.35 us a u8 block in L1, now 0.42-0.47). */
#define TFE__KPAIR(T, lo, hi, a, b) do { T t_ = lo(r[a], r[b]); r[b] = hi(r[a], r[b]); r[a] = t_; } while (0)
#define TFE__KPAIRS8(P, o, s) P(o, o + s); P(o + 1, o + 1 + s); P(o + 2, o + 2 + s); P(o + 3, o + 3 + s)
#define TFE__KTR16(P) /* 16 registers: rounds of strides 8, 4, 2, 1 */ \
  TFE__KPAIRS8(P, 0, 8); TFE__KPAIRS8(P, 4, 8);                            \
  TFE__KPAIRS8(P, 0, 4); TFE__KPAIRS8(P, 8, 4);                            \
  P(0, 2); P(1, 3); P(4, 6); P(5, 7); P(8, 10); P(9, 11); P(12, 14); P(13, 15); \
  P(0, 1); P(2, 3); P(4, 5); P(6, 7); P(8, 9); P(10, 11); P(12, 13); P(14, 15)
#define TFE__KTR8(P) /* 8 registers: rounds of strides 4, 2, 1 */ \
  TFE__KPAIRS8(P, 0, 4);                                                 \
  P(0, 2); P(1, 3); P(4, 6); P(5, 7);                                    \
  P(0, 1); P(2, 3); P(4, 5); P(6, 7)
#define TFE__KP1S(a, b) TFE__KPAIR(__m128i, _mm_unpacklo_epi8, _mm_unpackhi_epi8, a, b)
#define TFE__KP2S(a, b) TFE__KPAIR(__m128i, _mm_unpacklo_epi16, _mm_unpackhi_epi16, a, b)
TFE_INTERNAL void tfe__ktr16x1_regs(__m128i *r) { TFE__KTR16(TFE__KP1S); }
TFE_INTERNAL void tfe__ktr8x2_regs(__m128i *r) { TFE__KTR8(TFE__KP2S); }
/* The same on AVX2 registers: the unpacks work within each 128-bit lane, so one register
 * carries two row groups (lane 0 rows g*n.., lane 1 rows (g+1)*n..) and each round does the
 * work of two SSE rounds (half the instructions of the SSE form per block). */
#define TFE__KP1Y(a, b) TFE__KPAIR(__m256i, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8, a, b)
#define TFE__KP2Y(a, b) TFE__KPAIR(__m256i, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16, a, b)
TFE_INTERNAL void tfe__ktr16x1y_regs(__m256i *r) { TFE__KTR16(TFE__KP1Y); }
TFE_INTERNAL void tfe__ktr8x2y_regs(__m256i *r) { TFE__KTR8(TFE__KP2Y); }
#if defined(__AVX512BW__) /* (and on AVX-512 registers: four row groups, or blocks side by side) */
#define TFE__KP1Z(a, b) TFE__KPAIR(__m512i, _mm512_unpacklo_epi8, _mm512_unpackhi_epi8, a, b)
#define TFE__KP2Z(a, b) TFE__KPAIR(__m512i, _mm512_unpacklo_epi16, _mm512_unpackhi_epi16, a, b)
TFE__KINLINE void tfe__ktr16x1z_regs(__m512i *r) { TFE__KTR16(TFE__KP1Z); }
TFE__KINLINE void tfe__ktr8x2z_regs(__m512i *r) { TFE__KTR8(TFE__KP2Z); }
#undef TFE__KP1Z
#undef TFE__KP2Z
#endif
#undef TFE__KP1S
#undef TFE__KP2S
#undef TFE__KP1Y
#undef TFE__KP2Y
#undef TFE__KTR16
#undef TFE__KTR8
#undef TFE__KPAIRS8
#undef TFE__KPAIR
#if defined(__AVX512BW__)
TFE_INTERNAL void tfe__kz_store(void *const *dcol, const __m512i *r, int n, bool nt) {
  if (nt) { TFE__KUNROLL for (int j = 0; j < n; j++) _mm512_stream_si512(dcol[j], r[j]); }
  else { TFE__KUNROLL for (int j = 0; j < n; j++) _mm512_storeu_si512(dcol[j], r[j]); }
}
/* AVX-512BW: the 64-byte blocks a quarter at a time (16 bytes of every row: 16 byte or 8
 * 16-bit columns, n = 16 / es). Rows i, i + n, i + 2n, i + 3n are loaded whole and their
 * 128-bit lanes transposed (register k: quarter k of the four rows); the in-lane unpack
 * transposes above then turn every lane of a quarter's n registers at once: register j ends
 * with column j of all 4n rows, lane L holding rows Ln .. Ln + n-1. Quarters 1-3 wait in an
 * L1 buffer while quarter 0 is transposed and stored, so that every source line is read once
 * (rows 4 KiB apart share one L1 set: reading a line per quarter, or the two 32-byte halves
 * of the swap form this replaced, fetched it again from L2). A u8 block: 128 lane shuffles
 * and 256 in-lane unpacks; u16: 64 and 96. On a Zen 4 1.4-2x the speed of the swap form, in L1
 * and with rows 8 KiB apart (docs/bench-kernel.md, session 38). */
TFE__KINLINE void tfe__kquarters(__m512i *q, const void *const *srow, int n, int i, int64_t off) {
#define TFE__KZL(k) _mm512_loadu_si512((const char *)srow[k] + off)
  const __m512i a = TFE__KZL(i), b = TFE__KZL(i + n), c = TFE__KZL(i + 2 * n), d = TFE__KZL(i + 3 * n);
#undef TFE__KZL
  const __m512i ab02 = _mm512_shuffle_i64x2(a, b, 0x88), ab13 = _mm512_shuffle_i64x2(a, b, 0xdd); /* a0 a2 b0 b2, a1 a3 b1 b3 */
  const __m512i cd02 = _mm512_shuffle_i64x2(c, d, 0x88), cd13 = _mm512_shuffle_i64x2(c, d, 0xdd);
  q[0] = _mm512_shuffle_i64x2(ab02, cd02, 0x88); /* a0 b0 c0 d0 */
  q[1] = _mm512_shuffle_i64x2(ab13, cd13, 0x88);
  q[2] = _mm512_shuffle_i64x2(ab02, cd02, 0xdd);
  q[3] = _mm512_shuffle_i64x2(ab13, cd13, 0xdd);
}
/* A whole block (64 / es rows at srow[i]): column j to dcol[j]. */
TFE__KINLINE void tfe__ktr12z_blk(size_t es, void *const *dcol, const void *const *srow, bool nt) {
  const int n = 16 / (int)es;
  __m512i r[16] = {0}, qb[3][16]; /* (r zeroed: both kinds' branches are compiled) */
  TFE__KUNROLL for (int i = 0; i < n; i++) {
    __m512i q[4];
    tfe__kquarters(q, srow, n, i, 0);
    r[i] = q[0];
    qb[0][i] = q[1];
    qb[1][i] = q[2];
    qb[2][i] = q[3];
  }
  for (int k = 0; k < 4; k++) {
    if (k) TFE__KUNROLL for (int i = 0; i < n; i++) r[i] = qb[k - 1][i];
    if (es == 1) tfe__ktr16x1z_regs(r);
    else tfe__ktr8x2z_regs(r);
    tfe__kz_store(dcol + n * k, r, n, nt);
  }
}
/* Skewed columns of 1- and 2-byte kinds (tfe__kskew_row's scheme for 8-byte ones): column j's
 * register (64 bytes: rows ib .. ib + n-1, n = 64 / es) joined with the same column's register
 * from the block above (car[j]) into the whole line that starts a_j elements before it (a_j:
 * the column's offset in its line; idx[j] = tfe__kz_join_idx(a_j)), which is streamed; the first
 * row of blocks stores only its lanes from a_j on, tfe__kz_skew_tail the rest of the last. The
 * join is one two-source permute: 16-bit lanes on AVX-512BW, bytes need VBMI
 * (TFE__KHAVE_SKEW1). */
#if defined(__AVX512VBMI__)
#define TFE__KHAVE_SKEW1 1
#else
#define TFE__KHAVE_SKEW1 0
#endif
TFE_INTERNAL __m512i tfe__kz_join_idx(size_t es, int a) {
  if (es == 4)
    return _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(16 - a));
  if (es == 2)
    return _mm512_add_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,
                                             11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                            _mm512_set1_epi16((short)(32 - a)));
  return _mm512_add_epi8(_mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
                                         42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22,
                                         21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                         _mm512_set1_epi8((char)(64 - a)));
}
TFE_INTERNAL __m512i tfe__kz_join(size_t es, __m512i prev, __m512i idx, __m512i cur) {
  if (es == 4) return _mm512_permutex2var_epi32(prev, idx, cur);
  if (es == 2) return _mm512_permutex2var_epi16(prev, idx, cur);
#if TFE__KHAVE_SKEW1
  return _mm512_permutex2var_epi8(prev, idx, cur);
#else
  (void)prev; (void)idx;
  return cur; /* (not reached: k_copy_skew12_plans_ leaves bytes without VBMI to the buffer) */
#endif
}
/* Lanes [lo, hi) of v stored at p (lanes of es bytes). */
TFE_INTERNAL void tfe__kz_store_lanes(size_t es, void *p, __m512i v, int lo, int hi) {
  if (es == 4) {
    _mm512_mask_storeu_epi32(p, (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1)), v);
  } else if (es == 2) {
    __mmask32 m = (__mmask32)((hi >= 32 ? 0xFFFFFFFFu : (1u << hi) - 1) & ~((1u << lo) - 1));
    _mm512_mask_storeu_epi16(p, m, v);
  } else {
    __mmask64 m = (hi >= 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);
    _mm512_mask_storeu_epi8(p, m, v);
  }
}
/* nc columns: v[j] to dcol[j] (row ib of the column; first: ib is the tile's first row). */
TFE_INTERNAL void tfe__kz_skew_cols(size_t es, void *const *dcol, const __m512i *v, __m512i *car, const __m512i *idx,
                                    bool first, int nc) {
  const int n = (int)(64 / es);
  for (int j = 0; j < nc; j++) {
    char *dj = (char *)dcol[j];
    const int a = (int)(((uintptr_t)dj & 63) / es);
    char *line = dj - a * (int)es;
    if (!a) _mm512_stream_si512((void *)line, v[j]);
    else if (first) tfe__kz_store_lanes(es, line, tfe__kz_join(es, v[j], idx[j], v[j]), a, n); /* (lanes < a: none) */
    else _mm512_stream_si512((void *)line, tfe__kz_join(es, car[j], idx[j], v[j]));
    car[j] = v[j];
  }
}
/* After the last whole row of blocks (dcol[j] at row m0): each of nc columns' lanes before m0,
 * and the r < n rows from m0 on in v (r = 0: none): the join with the block above gives
 * the line from m0 - a_j, stored up to row m0 + r (all of it streamed when whole), the rest of
 * v (rows past that line's end) in the next line. */
TFE_INTERNAL void tfe__kz_skew_end(size_t es, void *const *dcol, const __m512i *car, const __m512i *idx, const __m512i *v,
                                   int r, int nc) {
  const int n = (int)(64 / es);
  for (int j = 0; j < nc; j++) {
    char *dj = (char *)dcol[j];
    const int a = (int)(((uintptr_t)dj & 63) / es);
    char *line = dj - a * (int)es;
    if (!r) {
      if (a) tfe__kz_store_lanes(es, line, tfe__kz_join(es, car[j], idx[j], car[j]), 0, a);
      continue;
    }
    const __m512i l = tfe__kz_join(es, car[j], idx[j], v[j]);
    if (a + r < n) { tfe__kz_store_lanes(es, line, l, 0, a + r); continue; }
    _mm512_stream_si512((void *)line, l);
    if (a + r > n) tfe__kz_store_lanes(es, line + 64, tfe__kz_join(es, v[j], idx[j], v[j]), 0, a + r - n);
  }
}
/* 16 rows x 8 columns of 4-byte elements (two 8 x 8 blocks of tfe__ktr8x4_regs): row i at
 * srow[i] + off bytes, v[j] = column j (16 rows, one line). */
TFE_INTERNAL void tfe__ktr4z(__m512i *v, const void *const *srow, int64_t off) {
  __m256 r[8], lo[8], hi[8];
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(const void *)((const char *)srow[i] + off));
  tfe__ktr8x4_regs(r, lo);
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(const void *)((const char *)srow[8 + i] + off));
  tfe__ktr8x4_regs(r, hi);
  TFE__KUNROLL for (int j = 0; j < 8; j++)
    v[j] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(lo[j])), _mm256_castps_si256(hi[j]), 1);
}
/* 32 x 32 2-byte elements by unpacks (16-, 32-, 64-bit, then 128-bit lanes across four row
 * groups; on Intel cheaper than the two-source permutes of tfe__ktr2z): row k at srow[k] + off
 * bytes, out[c] = column c. */
TFE_INTERNAL void tfe__ktr2u(__m512i *out, const void *const *srow, int64_t off) {
  __m512i g[4][8];
  TFE__KUNROLL for (int q = 0; q < 4; q++) {
    __m512i r[8], t[8], u[8];
    TFE__KUNROLL for (int k = 0; k < 8; k++) r[k] = _mm512_loadu_si512((const char *)srow[q * 8 + k] + off);
    TFE__KUNROLL for (int k = 0; k < 4; k++) {
      t[2 * k] = _mm512_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm512_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
    }
    TFE__KUNROLL for (int k = 0; k < 2; k++)
      TFE__KUNROLL for (int h = 0; h < 2; h++) {
        u[4 * k + 2 * h] = _mm512_unpacklo_epi32(t[4 * k + h], t[4 * k + h + 2]);
        u[4 * k + 2 * h + 1] = _mm512_unpackhi_epi32(t[4 * k + h], t[4 * k + h + 2]);
      }
    TFE__KUNROLL for (int k = 0; k < 4; k++) {
      g[q][2 * k] = _mm512_unpacklo_epi64(u[k], u[k + 4]);
      g[q][2 * k + 1] = _mm512_unpackhi_epi64(u[k], u[k + 4]);
    }
  }
  TFE__KUNROLL for (int c = 0; c < 8; c++) { /* g[q][c] lane L: column 8L + c of rows 8q .. 8q + 7 */
    __m512i a0 = _mm512_shuffle_i64x2(g[0][c], g[1][c], 0x44), a1 = _mm512_shuffle_i64x2(g[0][c], g[1][c], 0xee);
    __m512i b0 = _mm512_shuffle_i64x2(g[2][c], g[3][c], 0x44), b1 = _mm512_shuffle_i64x2(g[2][c], g[3][c], 0xee);
    out[c] = _mm512_shuffle_i64x2(a0, b0, 0x88);
    out[8 + c] = _mm512_shuffle_i64x2(a0, b0, 0xdd);
    out[16 + c] = _mm512_shuffle_i64x2(a1, b1, 0x88);
    out[24 + c] = _mm512_shuffle_i64x2(a1, b1, 0xdd);
  }
}
/* 32 bytes at srow[k] + off of rows k = i, i + n, i + 2n, i + 3n (i < n) as lanes: r[i] their
 * first 16 bytes, r[n + i] their second 16 (the lane L of each: row i + Ln). */
TFE__KINLINE void tfe__kz_rows4(__m512i *r, const void *const *srow, int n, int64_t off) {
#define TFE__KYL(k) _mm256_loadu_si256((const __m256i *)(const void *)((const char *)srow[k] + off))
  TFE__KUNROLL for (int i = 0; i < n; i++) {
    const __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(TFE__KYL(i)), TFE__KYL(i + n), 1);
    const __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(TFE__KYL(i + 2 * n)), TFE__KYL(i + 3 * n), 1);
    r[i] = _mm512_shuffle_i64x2(x, y, 0x88);
    r[n + i] = _mm512_shuffle_i64x2(x, y, 0xdd);
  }
#undef TFE__KYL
}
/* Columns 32h .. 32h + 31 of the 64 x 64 bytes at srow[i] + off into v[j] = column 32h + j:
 * the two quarters from 32-byte loads of the rows (each line read once a half). */
TFE__KOUTLINE void tfe__ktr1z_half(__m512i *v, const void *const *srow, int64_t off, int h) {
  __m512i r[32];
  tfe__kz_rows4(r, srow, 16, off + 32 * h);
  tfe__ktr16x1z_regs(r);
  tfe__ktr16x1z_regs(r + 16);
  TFE__KUNROLL for (int j = 0; j < 32; j++) v[j] = r[j];
}
/* Short source rows (session 43): 64 / es rows x nc columns, 8 / es < nc < 64 / es (bytes: 9-63,
 * 2-byte kinds 5-31): row i at srow[i], read 16, 32 or 64 bytes wide (the caller makes those
 * reads safe); column j's 64 bytes to dcol[j], j < nc, normal stores. Columns past
 * nc are transposed and dropped: for 23 columns one wide block took a third of the instructions
 * of the two shifted 16 x 16 blocks it replaces. */
TFE__KOUTLINE void tfe__ktr12_wide(size_t es, void *const *dcol, const void *const *srow, int nc) {
  __m512i v[32];
  if (nc * (int)es <= 16) { /* (from 16-byte rows: rows i, i+n, i+2n, i+3n in one register's lanes, n = 16 / es) */
    const int n = 16 / (int)es;
#define TFE__KXL(k) _mm_loadu_si128((const __m128i *)(const void *)srow[k])
    TFE__KUNROLL for (int i = 0; i < n; i++) {
      const __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(TFE__KXL(i)), TFE__KXL(i + n), 1);
      const __m256i y = _mm256_inserti128_si256(_mm256_castsi128_si256(TFE__KXL(i + 2 * n)), TFE__KXL(i + 3 * n), 1);
      v[i] = _mm512_inserti64x4(_mm512_castsi256_si512(x), y, 1);
    }
#undef TFE__KXL
    if (es == 1) tfe__ktr16x1z_regs(v);
    else tfe__ktr8x2z_regs(v);
    for (int j = 0; j < nc; j++) _mm512_storeu_si512(dcol[j], v[j]);
    return;
  }
  if (es == 2 && nc <= 16) { /* (32 x 16 from 32-byte rows) */
    tfe__kz_rows4(v, srow, 8, 0);
    tfe__ktr8x2z_regs(v);
    tfe__ktr8x2z_regs(v + 8);
    for (int j = 0; j < nc; j++) _mm512_storeu_si512(dcol[j], v[j]);
    return;
  }
  if (es == 2) {
    tfe__ktr2u(v, srow, 0);
    for (int j = 0; j < nc; j++) _mm512_storeu_si512(dcol[j], v[j]);
    return;
  }
  for (int h = 0; h < 2 && 32 * h < nc; h++) {
    tfe__ktr1z_half(v, srow, 0, h);
    for (int j = 32 * h; j < nc && j < 32 * h + 32; j++) _mm512_storeu_si512(dcol[j], v[j - 32 * h]);
  }
}
TFE__KOUTLINE void tfe__ktr1z(void *const *dcol, const void *const *srow, bool nt) {
  tfe__ktr12z_blk(1, dcol, srow, nt);
}
TFE__KOUTLINE void tfe__ktr2z(void *const *dcol, const void *const *srow, bool nt) {
  tfe__ktr12z_blk(2, dcol, srow, nt);
}
#endif
/* One block of es (1 or 2) byte elements: 64/es source rows at srow[i], 64/es destination
 * columns at dcol[j] (64 bytes of each). pf (AVX2; bytes, 0: none): each of the block's eight
 * steps first prefetches an eighth of the rows pf bytes on (copy_block_prefetch_spread: 64
 * prefetches at once waited for the L1's miss buffers, and the block's loads then waited for
 * them). */
TFE_INTERNAL void tfe__ktr12p(size_t es, void *const *dcol, const void *const *srow, bool nt, int64_t pf) {
#if defined(__AVX512BW__)
  (void)pf;
  if (es == 2) tfe__ktr2z(dcol, srow, nt);
  else tfe__ktr1z(dcol, srow, nt);
#else
  const int n = es == 1 ? 16 : 8; /* n x n register transposes: 4 x 4 of them */
  __m128i blk[64][4];             /* blk[j][g]: column j, rows g*n .. g*n + n-1 (streamed stores) */
#if defined(__AVX2__) || defined(TFE__KSIMD_PRAGMA)
  __m256i y[16];                  /* (row groups g and g + 1 in one register's two lanes) */
  TFE__KUNROLL for (int g = 0; g < 4; g += 2)
    TFE__KUNROLL for (int h = 0; h < 4; h++) {
      if (pf)
        for (int i = (2 * h + 4 * g) * n / 4, e = i + n / 2; i < e; i++) tfe__kpf((const char *)srow[i] + pf);
      for (int i = 0; i < n; i++)
        y[i] = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)((const char *)srow[g * n + i] + 16 * h))),
            _mm_loadu_si128((const __m128i *)((const char *)srow[(g + 1) * n + i] + 16 * h)), 1);
      if (es == 1) tfe__ktr16x1y_regs(y); else tfe__ktr8x2y_regs(y);
      if (nt) for (int j = 0; j < n; j++) _mm256_storeu_si256((__m256i *)(void *)&blk[h * n + j][g], y[j]);
      else for (int j = 0; j < n; j++) _mm256_storeu_si256((__m256i *)(void *)((char *)dcol[h * n + j] + 16 * g), y[j]);
    }
  if (!nt) return;
#else
  (void)pf;
  __m128i r[16];
  TFE__KUNROLL for (int g = 0; g < 4; g++)
    TFE__KUNROLL for (int h = 0; h < 4; h++) { /* columns h*n .. h*n + n-1: bytes 16h .. 16h + 15 of the rows */
      for (int i = 0; i < n; i++) r[i] = _mm_loadu_si128((const __m128i *)((const char *)srow[g * n + i] + 16 * h));
      if (es == 1) tfe__ktr16x1_regs(r); else tfe__ktr8x2_regs(r);
      for (int j = 0; j < n; j++) blk[h * n + j][g] = r[j];
    }
#endif
  for (int j = 0; j < 4 * n; j++) {
#if defined(__AVX2__) || defined(TFE__KSIMD_PRAGMA)
    __m256i *q = (__m256i *)dcol[j], a = _mm256_loadu_si256((const __m256i *)(void *)&blk[j][0]),
            b = _mm256_loadu_si256((const __m256i *)(void *)&blk[j][2]);
    _mm256_stream_si256(q, a); /* (nt: 64-byte aligned) */
    _mm256_stream_si256(q + 1, b);
#else
    __m128i *q = (__m128i *)dcol[j];
    if (nt) { TFE__KUNROLL for (int g = 0; g < 4; g++) _mm_stream_si128(q + g, blk[j][g]); }
    else { TFE__KUNROLL for (int g = 0; g < 4; g++) _mm_storeu_si128(q + g, blk[j][g]); }
#endif
  }
#endif
}
TFE_INTERNAL void tfe__ktr12(size_t es, void *const *dcol, const void *const *srow, bool nt) {
  tfe__ktr12p(es, dcol, srow, nt, 0);
}
/* One n x n block of 1- or 2-byte elements, n = 16 / es (one SSE register per row): source
 * row i at srow[i], destination column j at dcol[j], 16 bytes of each, normal stores. The
 * rims of the 64-byte blocks and tiles narrower than them (a destination run of 59 bytes),
 * which ran element by element before (k_copy_small12_). */
TFE_INTERNAL void tfe__ktr12x16(size_t es, void *const *dcol, const void *const *srow) {
  __m128i r[16];
  const int n = es == 1 ? 16 : 8;
  for (int i = 0; i < n; i++) r[i] = _mm_loadu_si128((const __m128i *)srow[i]);
  if (es == 1) tfe__ktr16x1_regs(r); else tfe__ktr8x2_regs(r);
  for (int j = 0; j < n; j++) _mm_storeu_si128((__m128i *)dcol[j], r[j]);
}
/* Two (AVX2) or four (AVX-512BW) such blocks side by side, one per 128-bit lane: rows of
 * 32 or 64 bytes at srow[i], columns j of lane q to dcol[q * n + j]. The same unpacks move two
 * or four times the bytes (tiles of 32-63 columns, or of fewer than 64 rows, ran a 16-byte
 * block at a time). */
TFE_INTERNAL void tfe__ktr12x32(size_t es, void *const *dcol, const void *const *srow) {
  __m256i y[16];
  const int n = es == 1 ? 16 : 8;
  for (int i = 0; i < n; i++) y[i] = _mm256_loadu_si256((const __m256i *)srow[i]);
  if (es == 1) tfe__ktr16x1y_regs(y); else tfe__ktr8x2y_regs(y);
  for (int j = 0; j < n; j++) {
    _mm_storeu_si128((__m128i *)dcol[j], _mm256_castsi256_si128(y[j]));
    _mm_storeu_si128((__m128i *)dcol[n + j], _mm256_extracti128_si256(y[j], 1));
  }
}
#if defined(__AVX512BW__)
TFE_INTERNAL void tfe__ktr12x64(size_t es, void *const *dcol, const void *const *srow) {
  __m512i z[16];
  const int n = es == 1 ? 16 : 8;
  for (int i = 0; i < n; i++) z[i] = _mm512_loadu_si512(srow[i]);
  if (es == 1) tfe__ktr16x1z_regs(z); else tfe__ktr8x2z_regs(z);
  for (int j = 0; j < n; j++) {
    _mm_storeu_si128((__m128i *)dcol[j], _mm512_castsi512_si128(z[j]));
    _mm_storeu_si128((__m128i *)dcol[n + j], _mm512_extracti32x4_epi32(z[j], 1));
    _mm_storeu_si128((__m128i *)dcol[2 * n + j], _mm512_extracti32x4_epi32(z[j], 2));
    _mm_storeu_si128((__m128i *)dcol[3 * n + j], _mm512_extracti32x4_epi32(z[j], 3));
  }
}
#define TFE__KWIDE12 4 /* (blocks side by side the widest kernel takes) */
#else
#define TFE__KWIDE12 2
#endif
/* The same block with only its first ncols columns stored (the rest computed and dropped),
 * streamed when nt (each dcol[j] 16-byte aligned; the caller issues tfe__ksfence). */
TFE_INTERNAL void tfe__ktr12x16_cols(size_t es, void *const *dcol, const void *const *srow, int ncols, bool nt) {
  __m128i r[16];
  const int n = es == 1 ? 16 : 8;
  for (int i = 0; i < n; i++) r[i] = _mm_loadu_si128((const __m128i *)srow[i]);
  if (es == 1) tfe__ktr16x1_regs(r); else tfe__ktr8x2_regs(r);
  if (nt) for (int j = 0; j < ncols; j++) _mm_stream_si128((__m128i *)dcol[j], r[j]);
  else for (int j = 0; j < ncols; j++) _mm_storeu_si128((__m128i *)dcol[j], r[j]);
}
/* The first b bytes (2 <= b <= 16) of register v at p, by two overlapping stores of 8, 4 or 2
 * bytes (sh: bytes o .. o + 15 of v moved down, o = b - 8, b - 4 or b - 2): nothing past p + b
 * is written. */
TFE_INTERNAL void tfe__kstore_head(void *p, __m128i v, int b, __m128i sh) {
  char *q = (char *)p;
  const __m128i w = _mm_shuffle_epi8(v, sh);
  if (b >= 8) { _mm_storel_epi64((__m128i *)(void *)q, v); _mm_storel_epi64((__m128i *)(void *)(q + b - 8), w); return; }
  int32_t x = _mm_cvtsi128_si32(v), y = _mm_cvtsi128_si32(w);
  if (b >= 4) { memcpy(q, &x, 4); memcpy(q + b - 4, &y, 4); return; }
  memcpy(q, &x, 2);
  memcpy(q + b - 2, &y, 2);
}
/* The shuffle of tfe__kstore_head for heads of b bytes. */
TFE_INTERNAL __m128i tfe__kstore_head_sh(int b) {
  const int o = b >= 8 ? b - 8 : b >= 4 ? b - 4 : b - 2;
  return _mm_add_epi8(_mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm_set1_epi8((char)o));
}
/* An n x n block of 1- or 2-byte elements (tfe__ktr12x16) of which only the first b bytes of each
 * of its ncols columns are stored (rows past the valid ones: the caller repeats a valid row). */
TFE_INTERNAL void tfe__ktr12x16_head(size_t es, void *const *dcol, const void *const *srow, int ncols, int b, __m128i sh) {
  __m128i r[16];
  const int n = es == 1 ? 16 : 8;
  for (int i = 0; i < n; i++) r[i] = _mm_loadu_si128((const __m128i *)srow[i]);
  if (es == 1) tfe__ktr16x1_regs(r); else tfe__ktr8x2_regs(r);
  for (int j = 0; j < ncols; j++) tfe__kstore_head(dcol[j], r[j], b, sh);
}
#if defined(__AVX512BW__) && defined(__AVX512VL__)
/* Pieces of a transposed column: register v's elements as mask m says, at p (element i of v at
 * p + i * es; masked stores write nothing else and do not fault on the rest). */
TFE_INTERNAL void tfe__kmask_col(size_t es, char *p, __m128i v, const int64_t *off, const uint16_t *m, int ng) {
  for (int g = 0; g < ng; g++) {
    if (es == 1) _mm_mask_storeu_epi8(p + off[g], (__mmask16)m[g], v);
    else _mm_mask_storeu_epi16(p + off[g], (__mmask8)m[g], v);
  }
}
/* A block of n = 16 / es rows (row i at srow[i] + so bytes) by w = 16, 32 or 64 bytes of
 * columns, transposed (tfe__ktr12x16 and its two- and four-lane forms); column c's elements go
 * to d + coff[c] in ng pieces (piece g: offset off[g] bytes, the elements of mask m[g]), so a
 * column's rows may land in several places (kernel/bothruns.h: rows of several destination
 * records, each piece one masked store). */
TFE_INTERNAL void tfe__ktr12_pieces(size_t es, int w, char *d, const int64_t *coff, const char *const *srow, int64_t so,
                                    const int64_t *off, const uint16_t *m, int ng) {
  const int n = es == 1 ? 16 : 8;
  if (w == 64) {
    __m512i z[16];
    for (int i = 0; i < n; i++) z[i] = _mm512_loadu_si512(srow[i] + so);
    if (es == 1) tfe__ktr16x1z_regs(z); else tfe__ktr8x2z_regs(z);
    for (int j = 0; j < n; j++) {
      tfe__kmask_col(es, d + coff[j], _mm512_castsi512_si128(z[j]), off, m, ng);
      tfe__kmask_col(es, d + coff[n + j], _mm512_extracti32x4_epi32(z[j], 1), off, m, ng);
      tfe__kmask_col(es, d + coff[2 * n + j], _mm512_extracti32x4_epi32(z[j], 2), off, m, ng);
      tfe__kmask_col(es, d + coff[3 * n + j], _mm512_extracti32x4_epi32(z[j], 3), off, m, ng);
    }
  } else if (w == 32) {
    __m256i y[16];
    for (int i = 0; i < n; i++) y[i] = _mm256_loadu_si256((const __m256i *)(const void *)(srow[i] + so));
    if (es == 1) tfe__ktr16x1y_regs(y); else tfe__ktr8x2y_regs(y);
    for (int j = 0; j < n; j++) {
      tfe__kmask_col(es, d + coff[j], _mm256_castsi256_si128(y[j]), off, m, ng);
      tfe__kmask_col(es, d + coff[n + j], _mm256_extracti128_si256(y[j], 1), off, m, ng);
    }
  } else {
    __m128i r[16];
    for (int i = 0; i < n; i++) r[i] = _mm_loadu_si128((const __m128i *)(const void *)(srow[i] + so));
    if (es == 1) tfe__ktr16x1_regs(r); else tfe__ktr8x2_regs(r);
    for (int j = 0; j < n; j++) tfe__kmask_col(es, d + coff[j], r[j], off, m, ng);
  }
}
#define TFE__KHAVE_PIECES12 1
#else
#define TFE__KHAVE_PIECES12 0
#endif
/* Records of at most 8 bytes, 4n of them (n = 16 / es): record i at srow[i] (8 bytes readable
 * there), its first ncols elements (ncols <= n / 2) spread over destination columns dcol[j],
 * which receive 64 bytes each (element i of column j: element j of record i), streamed when nt
 * (32-byte aligned; whole lines where 64-byte aligned), else stored normally. Two
 * records share a 16-byte row (i and i + n in its halves) and the AVX2 lanes carry two row
 * groups, so one n x n transpose of 256-bit registers moves 4n records: four times the records
 * of tfe__ktr12x16_cols for the same shuffles. */
TFE_INTERNAL void tfe__ktr12_recs8(size_t es, void *const *dcol, const void *const *srow, int ncols, int nt) {
  const int n = es == 1 ? 16 : 8, h = n / 2;
  __m256i y[16];
  if (ncols > h) ncols = h;
  for (int i = 0; i < n; i++) {
    __m128d lo = _mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)srow[i]));
    __m128d hi = _mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)srow[2 * n + i]));
    lo = _mm_loadh_pd(lo, (const double *)srow[n + i]);
    hi = _mm_loadh_pd(hi, (const double *)srow[3 * n + i]);
    y[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_castpd_si128(lo)), _mm_castpd_si128(hi), 1);
  }
  if (es == 1) tfe__ktr16x1y_regs(y); else tfe__ktr8x2y_regs(y);
  /* y[j] lanes: column j of records 0..n-1 and 2n..3n-1; y[h + j]: of n..2n-1 and 3n..4n-1 */
  for (int j = 0; j < ncols; j++) {
    __m256i a = _mm256_permute2x128_si256(y[j], y[h + j], 0x20), b = _mm256_permute2x128_si256(y[j], y[h + j], 0x31);
    __m256i *q = (__m256i *)dcol[j];
    if (nt) { _mm256_stream_si256(q, a); _mm256_stream_si256(q + 1, b); }
    else { _mm256_storeu_si256(q, a); _mm256_storeu_si256(q + 1, b); }
  }
}
/* Any size with register blocks (tfe__krb): one block, pointers per source row (tfe__krb of
 * them) and destination column (tfe__kcb). */
TFE_INTERNAL void tfe__ktrx(size_t es, void *const *dcol, const void *const *srow, bool nt) {
  if (es == 8) { tfe__ktr8(dcol, srow, nt); return; }
  if (es < 4) { tfe__ktr12(es, dcol, srow, nt); return; }
  if (es == 4) {
    float *dc[8];
    const float *sr[16];
    TFE__KUNROLL for (int j = 0; j < 8; j++) dc[j] = (float *)dcol[j];
    TFE__KUNROLL for (int i = 0; i < 16; i++) sr[i] = (const float *)srow[i];
    tfe__ktr4(dc, sr, nt);
    return;
  }
  double *dc[4];
  const double *sr[4];
  TFE__KUNROLL for (int j = 0; j < 4; j++) { dc[j] = (double *)dcol[j]; sr[j] = (const double *)srow[j]; }
  tfe__ktr16(dc, sr, nt);
}
/* A row of blocks of es-byte elements: columns jb = 0, cb, .. < m1 (cb = tfe__kcb), source
 * row i at srow[i] + jb, destination column j at d + j*ldd (ldd in elements). One call per
 * row of blocks (see tfe__ktr8p_row). The rows hold n1 >= m1 elements (prefetched up to
 * there: the caller's rims follow). */
TFE_INTERNAL void tfe__ktrx_row(size_t es, void *d, int64_t ldd, const void *const *srow, int64_t m1, int64_t n1, bool nt) {
  if (es == 8) {
    const double *sr[8];
    TFE__KUNROLL for (int i = 0; i < 8; i++) sr[i] = (const double *)srow[i];
    tfe__ktr8p_row((double *)d, ldd, sr, m1, nt);
    return;
  }
  if (es < 4) {
    const int64_t rb = tfe__krb(es), cb = tfe__kcb(es), pa = tfe__st.tune.copy_block_prefetch * cb;
    const void *sr[64];
    void *dc[64];
#if defined(__AVX512BW__)
    const bool spread = false;
#else
    const bool spread = tfe__st.tune.copy_block_prefetch_spread;
#endif
    for (int64_t jb = 0; jb < m1; jb += cb) {
      /* a block reads 32 or 64 rows, a line of each: more misses than the hardware keeps in
       * flight, and a strip of them outgrows the L1 before the strip prefetch's lines are used */
      const int64_t pf = pa && jb + pa < n1 ? pa * (int64_t)es : 0;
      if (pf && !spread)
        for (int i = 0; i < rb; i++) tfe__kpf((const char *)srow[i] + jb * (int64_t)es + pf);
      for (int i = 0; i < rb; i++) sr[i] = (const char *)srow[i] + jb * (int64_t)es;
      for (int j = 0; j < cb; j++) dc[j] = (char *)d + (jb + j) * ldd * (int64_t)es;
      tfe__ktr12p(es, dc, sr, nt, spread ? pf : 0);
    }
    return;
  }
  if (es == 4) { /* typed pointers built once per block, straight into the kernel */
    const float *sr[16];
    float *dc[8];
    for (int64_t jb = 0; jb < m1; jb += 8) {
      TFE__KUNROLL for (int i = 0; i < 16; i++) sr[i] = (const float *)srow[i] + jb;
      TFE__KUNROLL for (int j = 0; j < 8; j++) dc[j] = (float *)d + (jb + j) * ldd;
      tfe__ktr4(dc, sr, nt);
    }
    return;
  }
  const double *sr[4];
  double *dc[4];
  for (int64_t jb = 0; jb < m1; jb += 4) { /* 16-byte elements: two doubles each */
    TFE__KUNROLL for (int i = 0; i < 4; i++) sr[i] = (const double *)srow[i] + 2 * jb;
    TFE__KUNROLL for (int j = 0; j < 4; j++) dc[j] = (double *)d + 2 * (jb + j) * ldd;
    tfe__ktr16(dc, sr, nt);
  }
}
TFE_INTERNAL tfe__kv8 tfe__kfu_apply(int op, tfe__kv8 x, tfe__kv8 y) {
  switch (op) {
  case TFE__KFU_NEG: return tfe__kv8_neg(x); /* flip the sign bit: -x exactly, -0 included */
  case TFE__KFU_SQUARE: return tfe__kv8_mul(x, x);
  case TFE__KFU_ADD: return tfe__kv8_add(x, y);
  case TFE__KFU_SUB: return tfe__kv8_sub(x, y);
  case TFE__KFU_MUL: return tfe__kv8_mul(x, y);
  case TFE__KFU_DIV: return tfe__kv8_div(x, y);
  default: return x;
  }
}
/* An 8x8 block of a transposed f64 input with the op fused: destination column j (8
 * elements at d + j*ldd) = op(column j of the transposed block, zip's other input at
 * o + j*ldo read in place; o NULL for a map). `tfirst`: the transposed input is the op's
 * first operand. Aligned columns are streamed past the cache when nt (the caller fences). */
TFE_INTERNAL void tfe__ktr8f(double *d, int64_t ldd, const double *s, int64_t lds, const double *o,
                             int64_t ldo, int op, bool tfirst, bool nt) {
  tfe__kv8 r[8], c[8];
  TFE__KUNROLL for (int i = 0; i < 8; i++) r[i] = tfe__kv8_ld(s + i * lds);
  tfe__ktr8_regs(r, c);
  TFE__KUNROLL for (int j = 0; j < 8; j++) {
    tfe__kv8 y = o ? tfe__kv8_ld(o + j * ldo) : c[j];
    tfe__kv8 v = tfirst ? tfe__kfu_apply(op, c[j], y) : tfe__kfu_apply(op, y, c[j]);
    double *q = d + j * ldd;
    if (nt && !((uintptr_t)q & 63)) tfe__kv8_nt(q, v);
    else tfe__kv8_st(q, v);
  }
}
/* One element of a fused op (the heads and tails of tfe__kfu_row). */
TFE_INTERNAL double tfe__kfu_apply1(int op, double x, double y) {
  switch (op) {
  case TFE__KFU_NEG: return -x;
  case TFE__KFU_SQUARE: return x * x;
  case TFE__KFU_ADD: return x + y;
  case TFE__KFU_SUB: return x - y;
  case TFE__KFU_MUL: return x * y;
  case TFE__KFU_DIV: return x / y;
  default: return x;
  }
}
/* d[i] = op(x[i], y[i]) for i < n, where an input with xb / yb set is one value broadcast
 * (stride 0: the operands of an outer product); the 64-byte-aligned middle of d is
 * streamed past the cache (the caller fences). One pass: no buffer, no read of d. */
TFE_INTERNAL void tfe__kfu_row(double *d, int64_t n, const double *x, bool xb, const double *y, bool yb, int op) {
  int64_t i = 0;
  for (; i < n && ((uintptr_t)(d + i) & 63); i++) d[i] = tfe__kfu_apply1(op, x[xb ? 0 : i], y[yb ? 0 : i]);
  tfe__kv8 bx = tfe__kv8_set1(x[0]), by = tfe__kv8_set1(y[0]);
  for (; i + 8 <= n; i += 8) {
    tfe__kv8 vx = xb ? bx : tfe__kv8_ld(x + i), vy = yb ? by : tfe__kv8_ld(y + i);
    tfe__kv8_nt(d + i, tfe__kfu_apply(op, vx, vy));
  }
  for (; i < n; i++) d[i] = tfe__kfu_apply1(op, x[xb ? 0 : i], y[yb ? 0 : i]);
}
/* The partial lines at the ends of a streamed run: 8-byte streaming stores where d and the
 * length allow (a normal store reads the line first, and the line's other part belongs to
 * another run), when nt (tfe__kstream: as kernel_stream_edge_lines says, 1: every CPU; -1: AMD
 * CPUs only; docs/bench-kernel.md). Else normal stores. */
TFE_INTERNAL void tfe__kstream_edge_nt(char *d, const char *s, size_t bytes, bool nt) {
  if (!nt || ((uintptr_t)d & 7) || (bytes & 7)) {
    /* copy_edge_stores: a memcpy of a variable size under 64 bytes compiles to rep movs, whose
     * start-up dominates columns of a few lines; overlapping pairs of loads and stores
     * instead (a masked AVX-512 store measured slower than either on a Zen 5) */
    if (bytes < 64 && tfe__st.tune.copy_edge_stores) {
      if (bytes >= 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s), b = _mm_loadu_si128((const __m128i *)(const void *)(s + bytes - 16));
        if (bytes > 32) {
          __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + 16)),
                  y = _mm_loadu_si128((const __m128i *)(const void *)(s + bytes - 32));
          _mm_storeu_si128((__m128i *)(void *)(d + 16), x);
          _mm_storeu_si128((__m128i *)(void *)(d + bytes - 32), y);
        }
        _mm_storeu_si128((__m128i *)(void *)d, a);
        _mm_storeu_si128((__m128i *)(void *)(d + bytes - 16), b);
      } else if (bytes >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8); memcpy(&b, s + bytes - 8, 8); memcpy(d, &a, 8); memcpy(d + bytes - 8, &b, 8);
      } else if (bytes >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4); memcpy(&b, s + bytes - 4, 4); memcpy(d, &a, 4); memcpy(d + bytes - 4, &b, 4);
      } else
        for (size_t i = 0; i < bytes; i++) d[i] = s[i];
      return;
    }
    memcpy(d, s, bytes);
    return;
  }
  for (size_t i = 0; i < bytes; i += 8) {
    long long x;
    memcpy(&x, s + i, 8);
    _mm_stream_si64((long long *)(void *)(d + i), x);
  }
}
TFE_INTERNAL void tfe__kstream_edge(char *d, const char *s, size_t bytes) {
  tfe__kstream_edge_nt(d, s, bytes, tfe__kon_amd(tfe__st.tune.kernel_stream_edge_lines));
}
/* memcpy of a short run (the runs of a table block: 44 bytes of u16 from each of 7 places)
 * without a call: 32-byte pieces, the last one and those of runs up to 64 bytes overlapping
 * (a per-element loop of a 1- or 2-byte user kind stays scalar: 40 ns a 44-byte run). */
TFE_INTERNAL void tfe__kcopy_short(char *d, const char *s, size_t bytes) {
  if (bytes < 4) { for (size_t i = 0; i < bytes; i++) d[i] = s[i]; return; }
  if (bytes > 64) { /* 32-byte pieces, the last one overlapping */
    size_t i = 0;
    for (; i + 32 < bytes; i += 32)
      _mm256_storeu_si256((__m256i *)(void *)(d + i), _mm256_loadu_si256((const __m256i *)(const void *)(s + i)));
    _mm256_storeu_si256((__m256i *)(void *)(d + bytes - 32), _mm256_loadu_si256((const __m256i *)(const void *)(s + bytes - 32)));
    return;
  }
  if (bytes >= 32) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s),
            b = _mm256_loadu_si256((const __m256i *)(const void *)(s + bytes - 32));
    _mm256_storeu_si256((__m256i *)(void *)d, a);
    _mm256_storeu_si256((__m256i *)(void *)(d + bytes - 32), b);
  } else if (bytes >= 16) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s), b = _mm_loadu_si128((const __m128i *)(const void *)(s + bytes - 16));
    _mm_storeu_si128((__m128i *)(void *)d, a);
    _mm_storeu_si128((__m128i *)(void *)(d + bytes - 16), b);
  } else if (bytes >= 8) {
    uint64_t a, b;
    memcpy(&a, s, 8); memcpy(&b, s + bytes - 8, 8); memcpy(d, &a, 8); memcpy(d + bytes - 8, &b, 8);
  } else {
    uint32_t a, b;
    memcpy(&a, s, 4); memcpy(&b, s + bytes - 4, 4); memcpy(d, &a, 4); memcpy(d + bytes - 4, &b, 4);
  }
}
/* n runs of rb bytes (4 <= rb <= 64), run k from s + tab[k * stride] * es to d + k * rb: a loop per
 * width class of two overlapping loads and stores each (one branch outside the loop, none per
 * run; normal stores): the runs of a table block of short common runs (copy_small_run_bytes). */
#define TFE__KRUNS_PAIRS(T)                                                                       \
  for (int64_t k = 0; k < n; k++, d += rb) {                                                      \
    const char *q = s + tab[k * stride] * es;                                                     \
    T a_, b_;                                                                                     \
    memcpy(&a_, q, sizeof(T)); memcpy(&b_, q + rb - sizeof(T), sizeof(T));                        \
    memcpy(d, &a_, sizeof(T)); memcpy(d + rb - sizeof(T), &b_, sizeof(T));                        \
  }
TFE_INTERNAL void tfe__kcopy_runs_small(char *d, const char *s, const int64_t *tab, int64_t stride, int64_t es, size_t rb,
                                        int64_t n) {
  if (rb >= 32) TFE__KRUNS_PAIRS(__m256i)
  else if (rb >= 16) TFE__KRUNS_PAIRS(__m128i)
  else if (rb >= 8) TFE__KRUNS_PAIRS(uint64_t)
  else TFE__KRUNS_PAIRS(uint32_t)
}
#undef TFE__KRUNS_PAIRS
/* memcpy that streams dst past the cache: the 64-byte-aligned middle in whole lines, the
 * edges through tfe__kstream_edge (the caller issues tfe__ksfence when done). */
TFE_INTERNAL void tfe__kstream_simd(char *d, const char *s, size_t bytes, bool edges_nt) {
  size_t head = (size_t)(-(uintptr_t)d & 63);
  if (head > bytes) head = bytes;
  tfe__kstream_edge_nt(d, s, head, edges_nt);
  d += head; s += head; bytes -= head;
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64)
    tfe__kv8_nt((double *)(void *)d, tfe__kv8_ld((const double *)(const void *)s));
  tfe__kstream_edge_nt(d, s, bytes, edges_nt);
}
/* The byte shuffle that reverses the es-byte elements of each 16-byte lane (es 1, 2, 4, 8;
 * 16: the identity). */
TFE_INTERNAL __m256i tfe__krev_mask(size_t es) {
  static const char m[5][16] = {{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
                                {14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1},
                                {12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3},
                                {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7},
                                {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};
  const int k = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : es == 8 ? 3 : 4;
  return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)m[k]));
}
/* The 32 bytes of a reversed run that go to destination bytes [b, b + 32): read below t (one
 * past the run's highest byte), elements reversed in each lane, then the lanes swapped. */
TFE_INTERNAL __m256i tfe__krev32(const char *t, size_t b, __m256i m) {
  __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(t - b - 32));
  return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(x, m), 0x4E);
}
/* Destination bytes [b, b + k) of a reversed run, element by element into e (sizes fixed at
 * compile time: a memcpy of a variable size was a call per element). */
TFE_INTERNAL void tfe__krev_part(char *e, const char *t, size_t b, size_t k, size_t es) {
#define TFE__KREV_PART(W) for (size_t i = 0; i < k; i += W) memcpy(e + i, t - b - i - W, W)
  switch (es) {
  case 1: TFE__KREV_PART(1); break;
  case 2: TFE__KREV_PART(2); break;
  case 4: TFE__KREV_PART(4); break;
  case 8: TFE__KREV_PART(8); break;
  default: TFE__KREV_PART(16); break;
  }
#undef TFE__KREV_PART
}
/* A reversed run of under 32 bytes: two overlapping pieces of 16, 8 or 4 bytes, each read
 * within the run and reversed by a byte shuffle (m: tfe__krev_mask's lane shuffle, which also
 * reverses each 8- and 4-byte half of a lane where es fits it), element by element under 4. */
TFE_INTERNAL void tfe__krev_small(char *d, const char *t, size_t bytes, size_t es, __m128i m) {
  static const char m8[4][16] = {{7, 6, 5, 4, 3, 2, 1, 0}, {6, 7, 4, 5, 2, 3, 0, 1}, {4, 5, 6, 7, 0, 1, 2, 3},
                                 {0, 1, 2, 3, 4, 5, 6, 7}};
  static const char m4[3][16] = {{3, 2, 1, 0}, {2, 3, 0, 1}, {0, 1, 2, 3}};
  const int k = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
  if (bytes >= 16) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(t - 16)), z = _mm_loadu_si128((const __m128i *)(const void *)(t - bytes));
    _mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(a, m));
    _mm_storeu_si128((__m128i *)(void *)(d + bytes - 16), _mm_shuffle_epi8(z, m));
  } else if (bytes >= 8 && es <= 8) {
    const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)m8[k]);
    __m128i a = _mm_loadl_epi64((const __m128i *)(const void *)(t - 8)), z = _mm_loadl_epi64((const __m128i *)(const void *)(t - bytes));
    _mm_storel_epi64((__m128i *)(void *)d, _mm_shuffle_epi8(a, q));
    _mm_storel_epi64((__m128i *)(void *)(d + bytes - 8), _mm_shuffle_epi8(z, q));
  } else if (bytes >= 4 && es <= 4) {
    const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)m4[k]);
    int32_t a, z;
    memcpy(&a, t - 4, 4); memcpy(&z, t - bytes, 4);
    a = _mm_cvtsi128_si32(_mm_shuffle_epi8(_mm_cvtsi32_si128(a), q));
    z = _mm_cvtsi128_si32(_mm_shuffle_epi8(_mm_cvtsi32_si128(z), q));
    memcpy(d, &a, 4); memcpy(d + bytes - 4, &z, 4);
  } else
    tfe__krev_part(d, t, 0, bytes, es);
}
/* Destination bytes [0, bytes) of a reversed run (bytes >= 32), written downwards so that the
 * source is read upwards; the last piece overlaps. */
TFE_INTERNAL void tfe__krev_down(char *d, const char *t, size_t bytes, __m256i m) {
  size_t b = bytes;
  for (; b >= 32; b -= 32) _mm256_storeu_si256((__m256i *)(void *)(d + b - 32), tfe__krev32(t, b - 32, m));
  if (b) _mm256_storeu_si256((__m256i *)(void *)d, tfe__krev32(t, 0, m));
}
#define TFE__KREV_BUF 4096
/* d[i] = s[-i] for n elements of es bytes (1, 2, 4, 8 or 16): a run read backwards, the copy of
 * a reversed dim common to both operands, in 32-byte pieces reversed in registers. The source
 * is read upwards: read downwards, run after run upwards, it lost the hardware prefetchers (a
 * Zen 4 read such runs of 628 bytes in 2.7x the time of an upward read). A run of up to 4 KiB
 * is reversed into an L1 buffer and copied out upwards, so that both streams go up; a longer
 * one is written downwards, its lines streamed when nt (d element-aligned; the partial edge
 * lines through tfe__kstream_edge, the caller fences). */
TFE_INTERNAL void tfe__kcopy_rev(char *d, const char *s, size_t n, size_t es, bool nt) {
  const size_t bytes = n * es;
  const char *t = s + es; /* (one past the run's highest source byte) */
  const __m256i m = tfe__krev_mask(es);
  if (bytes < 32) { tfe__krev_small(d, t, bytes, es, _mm256_castsi256_si128(m)); return; }
  if (bytes > 128 && bytes <= TFE__KREV_BUF) {
    _Alignas(64) char buf[TFE__KREV_BUF];
    tfe__krev_down(buf, t, bytes, m);
    if (nt) tfe__kstream_simd(d, buf, bytes, tfe__kon_amd(tfe__st.tune.kernel_stream_edge_lines));
    else tfe__kcopy_short(d, buf, bytes);
    return;
  }
  if (!nt || bytes <= TFE__KREV_BUF || ((uintptr_t)d % es)) { tfe__krev_down(d, t, bytes, m); return; }
  char e[64];
  size_t head = (size_t)(-(uintptr_t)d & 63), end = head + (bytes - head) / 64 * 64;
  tfe__krev_part(e, t, end, bytes - end, es);
  tfe__kstream_edge(d + end, e, bytes - end);
  for (size_t b = end; b > head; b -= 64) {
    _mm256_stream_si256((__m256i *)(void *)(d + b - 32), tfe__krev32(t, b - 32, m));
    _mm256_stream_si256((__m256i *)(void *)(d + b - 64), tfe__krev32(t, b - 64, m));
  }
  tfe__krev_part(e, t, 0, head, es);
  tfe__kstream_edge(d, e, head);
}
/* d[i] = s[-i] for n elements of es bytes read downwards (d written upwards, normal stores):
 * the pieces of a long reversed run that a map or zip input's consecutive tiles (G0 at most
 * 8 KiB) take downwards, so that the run is one downward stream, which the hardware
 * prefetchers follow (each piece read upwards, a reversed f64 4096^2 map ran no faster than
 * element by element, 18.9 against 18.3 ms; downwards 14.2). */
TFE_INTERNAL void tfe__kgather_rev(char *d, const char *s, size_t n, size_t es) {
  const size_t bytes = n * es;
  const char *t = s + es;
  const __m256i m = tfe__krev_mask(es);
  if (bytes < 32) { tfe__krev_small(d, t, bytes, es, _mm256_castsi256_si128(m)); return; }
  size_t b = 0;
  for (; b + 32 <= bytes; b += 32) _mm256_storeu_si256((__m256i *)(void *)(d + b), tfe__krev32(t, b, m));
  if (b < bytes) _mm256_storeu_si256((__m256i *)(void *)(d + bytes - 32), tfe__krev32(t, bytes - 32, m));
}
/* Reverse the es-byte elements of each of n units of ub bytes in place, unit i at p + (tab ?
 * tab[i] * es : i * step): a unit plan (units.h) of runs the source reads backwards copies its
 * units as they lie and then turns them round while they are in L1. */
TFE_INTERNAL void tfe__krev_units(char *p, const int64_t *tab, int64_t step, int64_t n, int64_t es, int64_t ub) {
  const __m256i m = tfe__krev_mask((size_t)es);
  const size_t b = (size_t)ub;
  char tmp[256]; /* (ub <= 256: tfe__kplan_units) */
  for (int64_t i = 0; i < n; i++) {
    char *q = p + (tab ? tab[i] * es : i * step);
    if (b < 4) { /* (2 or 3 bytes: 1-byte kinds swap the ends) */
      if (es == 1) { char c = q[0]; q[0] = q[b - 1]; q[b - 1] = c; }
    } else if (b < 32) tfe__krev_small(q, q + b, b, (size_t)es, _mm256_castsi256_si128(m)); /* (loads before stores) */
    else if (b <= 64) {
      __m256i x = tfe__krev32(q + b, 0, m), y = tfe__krev32(q + b, b - 32, m);
      _mm256_storeu_si256((__m256i *)(void *)q, x);
      _mm256_storeu_si256((__m256i *)(void *)(q + b - 32), y);
    } else {
      tfe__kcopy_short(tmp, q, b);
      tfe__krev_down(q, tmp + b, b, m);
    }
  }
}

#if defined(__AVX512VBMI__)
#define TFE__KVBMI 1
#define TFE__KPERMB(i, x) _mm512_permutexvar_epi8(i, x)
#else
#define TFE__KVBMI 0
#define TFE__KPERMB(i, x) (x)
#endif
/* Records read backwards (numpy's x[..., ::-1] of a short last axis: BGR to RGB is r = 3):
 * the permute that turns round as many whole records of r elements of es bytes as fit a
 * register, into ix (64 bytes; on AVX-512 in lanes of min(es, 8) bytes, vpermw, vpermd or
 * vpermq: a byte-lane permute of 8-byte records measured slower than the old path on a
 * Zen 4). Returns the register's
 * width in bytes, 64 or 16, or 0 where a record does not fit one (or bytes on AVX-512 without
 * VBMI take the 16-byte form). Made once per copy: the index costs more than a column. */
TFE_INTERNAL int tfe__krev_recs_prep(uint8_t *ix, int64_t r, size_t es) {
  const int64_t rb = r * (int64_t)es, e1 = (int64_t)es - 1;
  int w = 16;
#if defined(__AVX512BW__)
  if (rb <= 64 && (es > 1 || TFE__KVBMI)) w = 64;
#endif
  if (rb > w) return 0;
  const int64_t k = w / rb;
  for (int64_t b = 0, q = 0, o = 0; b < w; b++) {
    ix[b] = (uint8_t)(q < k ? q * rb + (r - 1 - o / (int64_t)es) * (int64_t)es + (o & e1) : b);
    if (++o == rb) { o = 0; q++; }
  }
  if (w == 64 && es > 1) { /* (lanes of min(es, 8) bytes) */
    const int l = es > 8 ? 8 : (int)es;
    uint8_t ln[64];
    for (int i = 0; i < 64 / l; i++) {
      const uint64_t v = ix[i * l] / l;
      memcpy(ln + i * l, &v, (size_t)l); /* (little-endian lanes) */
    }
    memcpy(ix, ln, 64);
  }
  return w;
}
/* d[i*r + j] = s[i*r + r-1-j] for m records of r elements of es bytes lying one after another
 * in both, s the lowest byte of record 0; ix and w from tfe__krev_recs_prep. Each register of
 * whole records is read by a masked load and stored whole (the next one rewrites its rest), the
 * last through a mask; in the 16-byte form the records after the last whole piece element by
 * element. nt: records of 64 bytes, d line-aligned, streamed past the cache (the caller fences).
 * In place where d == s (the 16-byte form's stores past the last whole record put back what
 * they read). */
TFE_INTERNAL void tfe__kcopy_rev_recs(char *d, const char *s, int64_t r, int64_t m, size_t es, const uint8_t *ix, int w,
                                      bool nt) {
  const int64_t rb = r * (int64_t)es, k = w / rb, cb = k * rb, total = m * rb;
#if defined(__AVX512BW__)
  if (w == 64) {
    const __m512i idx = _mm512_loadu_si512((const void *)ix);
    const __mmask64 full = cb == 64 ? ~(__mmask64)0 : (((__mmask64)1 << cb) - 1);
    int64_t i = 0;
#define TFE__KRR_PERM(x) (es == 1 ? TFE__KPERMB(idx, x) : es == 2 ? _mm512_permutexvar_epi16(idx, x) \
                          : es == 4 ? _mm512_permutexvar_epi32(idx, x) : _mm512_permutexvar_epi64(idx, x))
    if (nt && cb == 64) {
      for (; i < m; i++) _mm512_stream_si512((void *)(d + i * 64), TFE__KRR_PERM(_mm512_loadu_si512((const void *)(s + i * 64))));
      return;
    }
    if (d == s) /* (in place: the next register's records are read after this store) */
      for (; i + k < m; i += k) {
        __m512i x = _mm512_maskz_loadu_epi8(full, s + i * rb);
        _mm512_mask_storeu_epi8(d + i * rb, full, TFE__KRR_PERM(x));
      }
    for (; i + k < m; i += k) {
      __m512i x = _mm512_maskz_loadu_epi8(full, s + i * rb);
      _mm512_storeu_si512((void *)(d + i * rb), TFE__KRR_PERM(x));
    }
    const int64_t lb = (m - i) * rb;
    const __mmask64 last = lb == 64 ? ~(__mmask64)0 : (((__mmask64)1 << lb) - 1);
    __m512i x = _mm512_maskz_loadu_epi8(last, s + i * rb);
    _mm512_mask_storeu_epi8(d + i * rb, last, TFE__KRR_PERM(x));
#undef TFE__KRR_PERM
    return;
  }
#endif
  (void)nt;
  const __m128i idx = _mm_loadu_si128((const __m128i *)(const void *)ix);
  int64_t o = 0;
  for (; o + 16 <= total; o += cb)
    _mm_storeu_si128((__m128i *)(void *)(d + o), _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + o)), idx));
  for (; o < total; o += rb) { /* (turned round where it lies: d may be s) */
    if (d != s) memcpy(d + o, s + o, (size_t)rb);
    tfe__krev_units(d + o, NULL, rb, 1, (int64_t)es, rb);
  }
}
/* d[i] = s[i*lds] for i < n, streamed: the 64-byte-aligned middle of d in whole lines
 * gathered 8 at a time, the partial lines at its ends through tfe__kstream_edge (the
 * caller fences). The destination columns of a tile narrower than 8 (the 3-way
 * de-interleave of a cyclic shift of 3s), which element-wise normal stores read before
 * writing. */
TFE_INTERNAL void tfe__kcol_simd(double *d, const double *s, int64_t lds, int64_t n) {
  int64_t i = 0;
  double e[8];
  if ((uintptr_t)d & 7) { /* not element-aligned (a packed struct's field): no whole lines */
    for (; i < n; i++) d[i] = s[i * lds];
    return;
  }
  int64_t h = (int64_t)((-(uintptr_t)d & 63) / sizeof(double));
  for (; i < h && i < n; i++) e[i] = s[i * lds];
  tfe__kstream_edge((char *)d, (const char *)e, (size_t)i * sizeof(double));
  for (; i + 8 <= n; i += 8) {
    /* each line built in registers from pairs of scalar loads (AVX2 gathers measured slower);
     * through an array its 64-byte load waited on eight 8-byte stores it could not forward
     * from (a cyclic shift of 3s: 1.6 -> 1.2x the streamed copy) */
    const double *q = s + i * lds;
    __m128d p0 = _mm_loadh_pd(_mm_load_sd(q), q + lds), p1 = _mm_loadh_pd(_mm_load_sd(q + 2 * lds), q + 3 * lds);
    __m128d p2 = _mm_loadh_pd(_mm_load_sd(q + 4 * lds), q + 5 * lds), p3 = _mm_loadh_pd(_mm_load_sd(q + 6 * lds), q + 7 * lds);
    __m256d lo = _mm256_insertf128_pd(_mm256_castpd128_pd256(p0), p1, 1), hi = _mm256_insertf128_pd(_mm256_castpd128_pd256(p2), p3, 1);
#if defined(__AVX512F__)
    _mm512_stream_pd(d + i, _mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1));
#else
    _mm256_stream_pd(d + i, lo);
    _mm256_stream_pd(d + i + 4, hi);
#endif
  }
  int64_t t = i;
  for (; i < n; i++) e[i - t] = s[i * lds];
  tfe__kstream_edge((char *)(d + t), (const char *)e, (size_t)(n - t) * sizeof(double));
}
/* d[i] = s[tab[i]] for i < n through vector gathers (see tfe__kgather8). */
TFE_INTERNAL void tfe__kgather8_simd(double *d, const double *s, const int64_t *tab, int64_t n, bool nt) {
  int64_t i = 0;
  if (nt) for (; i < n && ((uintptr_t)(d + i) & 63); i++) d[i] = s[tab[i]];
  for (; i + 8 <= n; i += 8) {
    tfe__kv8 v = tfe__kv8_gather(s, tab + i);
    if (nt) tfe__kv8_nt(d + i, v); else tfe__kv8_st(d + i, v);
  }
  for (; i < n; i++) d[i] = s[tab[i]];
}
#if defined(TFE__KSIMD_PRAGMA)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
TFE_INTERNAL void tfe__ksfence(void) { _mm_sfence(); }
#else /* not x86 with gcc or clang: the portable loops */
#define TFE__KHAVE_TR8 0
#define tfe__ksimd() 0
TFE_INTERNAL void tfe__ksfence(void) {}
#endif

/* memcpy that streams the 64-byte-aligned middle of dst past the cache, its partial edge lines
 * too when edges_nt (the caller issues tfe__ksfence when done). Without the vector kernels:
 * plain memcpy. */
TFE_INTERNAL void tfe__kstream_ex(void *dst, const void *src, size_t bytes, bool edges_nt) {
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) { tfe__kstream_simd((char *)dst, (const char *)src, bytes, edges_nt); return; }
#endif
  (void)edges_nt;
  memcpy(dst, src, bytes);
}
TFE_INTERNAL void tfe__kstream(void *dst, const void *src, size_t bytes) {
  tfe__kstream_ex(dst, src, bytes, tfe__kon_amd(tfe__st.tune.kernel_stream_edge_lines));
}

/* A destination column of n runs of rb bytes each, run k read from s + tab[k * stride] * es
 * (element offsets), written to d one after another and streamed past the cache: the runs are
 * assembled in an L1 buffer in d's line phase and leave it as whole streamed lines, so only
 * the column's two ends are partial lines (a run written by normal stores reads each of its
 * lines first; streamed run by run, every run boundary is two partial lines). Each run's
 * continuation pf bytes on in the source is asked for (0: none). */
TFE_INTERNAL void tfe__kstream_runs(char *d, const char *s, const int64_t *tab, int64_t stride, int64_t es,
                                    size_t rb, int64_t n, int64_t pf) {
  enum { CAP = 2048 }; /* (a multiple of 64: each flush ends on a line boundary of d) */
  _Alignas(64) char buf[CAP];
  size_t ph = (size_t)((uintptr_t)d & 63), fill = 0;
  for (int64_t k = 0; k < n; k++) {
    const char *q = s + tab[k * stride] * es;
    const uintptr_t a = (uintptr_t)q + (uintptr_t)pf; /* (an address only: perhaps past the source) */
    if (pf) for (size_t b = 0; b < rb; b += 64) __builtin_prefetch((const void *)(a + b), 0, 3);
    for (size_t done = 0; done < rb;) {
      size_t take = rb - done, room = CAP - ph - fill;
      if (take > room) take = room;
#if TFE__KHAVE_TR8
      if (tfe__ksimd()) tfe__kcopy_short(buf + ph + fill, q + done, take);
      else
#endif
        memcpy(buf + ph + fill, q + done, take);
      fill += take;
      done += take;
      if (ph + fill == CAP) {
        tfe__kstream(d, buf + ph, fill);
        d += fill;
        ph = fill = 0;
      }
    }
  }
  if (fill) tfe__kstream(d, buf + ph, fill);
}

/* d[i] = s[tab[i]] for i < n, 8-byte elements moved as bits: vector gathers of 8, stores
 * streamed past the cache where d is 64-byte aligned when nt (the caller fences). Returns
 * false without the vector kernels (the caller runs its scalar loop), and as
 * kernel_vector_gather says: 0 (default) gathers only where the caller passes `vec` (copies
 * through gather tiles, where they measured faster; scalar loads won for map/zip column
 * caches and table blocks), 1 always, -1 never. */
TFE_INTERNAL bool tfe__kgather8(void *dst, const void *src, const int64_t *tab, int64_t n, bool nt, bool vec) {
#if TFE__KHAVE_TR8
  int vg = tfe__st.tune.kernel_vector_gather;
  if (vg < 0 || (vg == 0 && !vec) || !tfe__ksimd()) return false;
  tfe__kgather8_simd((double *)dst, (const double *)src, tab, n, nt);
  return true;
#else
  (void)dst; (void)src; (void)tab; (void)n; (void)nt; (void)vec;
  return false;
#endif
}
#endif
