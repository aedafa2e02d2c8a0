/* tenferro/prims/semiring_gemm_simd.h — SIMD micro-kernels for the tropical GEMMs (max-plus,
 * min-plus, max-times in f32 and f64), AVX-512 and AVX2, chosen at run time.
 *
 * Each kernel reduces a packed MR x kc sliver of A (column p = MR contiguous values) against a
 * packed kc x NR sliver of B (row p = NR contiguous values) into an MR x NR tile (column
 * major, leading dimension MR), starting from the semiring zero. Shapes: two vector rows by
 * NR columns: AVX-512 f64 16x12, f32 32x12; AVX2 f64 8x6, f32 16x6. The functions carry
 * target attributes, so the rest of the program needs no -mavx flags; __builtin_cpu_supports
 * picks the widest one the CPU runs. vmaxpd(x, y) = x > y ? x : y matches tfe_sr_add
 * (x >= y ? x : y) on every value but signed zeros. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_SEMIRING_GEMM_SIMD_H
#define TENFERRO_SEMIRING_GEMM_SIMD_H
#include <tenferro/core/core.h>
/* A micro-kernel (internal; its type is named in the per-kind GEMM plans). */
typedef void (*tfe__sg_ukr)(int64_t kc, int mr, int nr, const void *a, const void *b, void *tile);
#endif
#elif !defined(TENFERRO_SEMIRING_GEMM_SIMD_BODY)
#define TENFERRO_SEMIRING_GEMM_SIMD_BODY

#include <tenferro/core/core.h>
#include <math.h>


/* 0 = generic, 1 = AVX2, 2 = AVX-512; the tuning field semiring_gemm_isa forces isa + 1 (tests). */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFE__SG_HAVE_SIMD 1
#include <immintrin.h>

TFE_INTERNAL int tfe__sg_isa(void) {
  if (tfe__st.tune.semiring_gemm_isa > 0) return (int)tfe__st.tune.semiring_gemm_isa - 1;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 2;
  if (__builtin_cpu_supports("avx2")) return 1;
  return 0;
}

#define TFE__SG_X6(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define TFE__SG_X12(M) TFE__SG_X6(M) M(6) M(7) M(8) M(9) M(10) M(11)
/* The per-column steps name the parameters TFE__SG_V (vector type), _W (lanes), _SET1,
 * _LOAD, _STORE, _MUL (semiring mul), _RED (semiring add): each instantiation below defines
 * them, expands TFE__SG_BODY and undefines them. */
#define TFE__SG_DECL(j) TFE__SG_V c0_##j = z, c1_##j = z;
#define TFE__SG_UPD(j)                                   \
  {                                                      \
    TFE__SG_V bj = TFE__SG_SET1(b[j]);                   \
    c0_##j = TFE__SG_RED(c0_##j, TFE__SG_MUL(a0, bj));   \
    c1_##j = TFE__SG_RED(c1_##j, TFE__SG_MUL(a1, bj));   \
  }
#define TFE__SG_ST(j)                                     \
  TFE__SG_STORE(t + (j) * (2 * TFE__SG_W), c0_##j);       \
  TFE__SG_STORE(t + (j) * (2 * TFE__SG_W) + TFE__SG_W, c1_##j);

#define TFE__SG_BODY(NAME, TGT, R_, NR_, XN, ZERO)                                                  \
  TFE_INTERNAL __attribute__((target(TGT))) void NAME(int64_t kc, int mr, int nr, const void *av,  \
                                                      const void *bv, void *tv) {                   \
    (void)mr; (void)nr;                                                                             \
    const R_ *a = (const R_ *)av, *b = (const R_ *)bv;                                              \
    R_ *t = (R_ *)tv;                                                                               \
    TFE__SG_V z = TFE__SG_SET1((R_)(ZERO)), one_ = TFE__SG_SET1((R_)1);                              \
    (void)one_;                                                                                     \
    XN(TFE__SG_DECL)                                                                                \
    for (int64_t p = 0; p < kc; p++) {                                                              \
      TFE__SG_V a0 = TFE__SG_LOAD(a), a1 = TFE__SG_LOAD(a + TFE__SG_W);                             \
      XN(TFE__SG_UPD)                                                                               \
      a += 2 * TFE__SG_W;                                                                           \
      b += NR_;                                                                                     \
    }                                                                                               \
    XN(TFE__SG_ST)                                                                                  \
  }

/* ---- AVX-512 ---- */
#define TFE__SG_W 8
#define TFE__SG_V __m512d
#define TFE__SG_SET1 _mm512_set1_pd
#define TFE__SG_LOAD _mm512_loadu_pd
#define TFE__SG_STORE _mm512_storeu_pd
/* x + y as fma(x, 1, y): bit-identical (x*1 is exact, one rounding), and it runs on the FMA
 * pipes, so the adds and the maxes issue on different pipes (with plain adds both compete for
 * the add pipes that also do max/min: docs/bench-prims.md). */
#define TFE__SG_MUL(x, y) _mm512_fmadd_pd(x, one_, y)
#define TFE__SG_RED _mm512_max_pd
TFE__SG_BODY(tfe__sg_maxplus_f64_avx512, "avx512f", double, 12, TFE__SG_X12, -INFINITY)
#undef TFE__SG_RED
#define TFE__SG_RED _mm512_min_pd
TFE__SG_BODY(tfe__sg_minplus_f64_avx512, "avx512f", double, 12, TFE__SG_X12, INFINITY)
#undef TFE__SG_RED
#undef TFE__SG_MUL
#define TFE__SG_MUL _mm512_mul_pd
#define TFE__SG_RED _mm512_max_pd
TFE__SG_BODY(tfe__sg_maxtimes_f64_avx512, "avx512f", double, 12, TFE__SG_X12, 0)
#undef TFE__SG_W
#undef TFE__SG_V
#undef TFE__SG_SET1
#undef TFE__SG_LOAD
#undef TFE__SG_STORE
#undef TFE__SG_MUL
#undef TFE__SG_RED

#define TFE__SG_W 16
#define TFE__SG_V __m512
#define TFE__SG_SET1 _mm512_set1_ps
#define TFE__SG_LOAD _mm512_loadu_ps
#define TFE__SG_STORE _mm512_storeu_ps
#define TFE__SG_MUL(x, y) _mm512_fmadd_ps(x, one_, y)
#define TFE__SG_RED _mm512_max_ps
TFE__SG_BODY(tfe__sg_maxplus_f32_avx512, "avx512f", float, 12, TFE__SG_X12, -INFINITY)
#undef TFE__SG_RED
#define TFE__SG_RED _mm512_min_ps
TFE__SG_BODY(tfe__sg_minplus_f32_avx512, "avx512f", float, 12, TFE__SG_X12, INFINITY)
#undef TFE__SG_RED
#undef TFE__SG_MUL
#define TFE__SG_MUL _mm512_mul_ps
#define TFE__SG_RED _mm512_max_ps
TFE__SG_BODY(tfe__sg_maxtimes_f32_avx512, "avx512f", float, 12, TFE__SG_X12, 0)
#undef TFE__SG_W
#undef TFE__SG_V
#undef TFE__SG_SET1
#undef TFE__SG_LOAD
#undef TFE__SG_STORE
#undef TFE__SG_MUL
#undef TFE__SG_RED

/* ---- AVX2 ---- */
#define TFE__SG_W 4
#define TFE__SG_V __m256d
#define TFE__SG_SET1 _mm256_set1_pd
#define TFE__SG_LOAD _mm256_loadu_pd
#define TFE__SG_STORE _mm256_storeu_pd
#define TFE__SG_MUL _mm256_add_pd
#define TFE__SG_RED _mm256_max_pd
TFE__SG_BODY(tfe__sg_maxplus_f64_avx2, "avx2", double, 6, TFE__SG_X6, -INFINITY)
#undef TFE__SG_RED
#define TFE__SG_RED _mm256_min_pd
TFE__SG_BODY(tfe__sg_minplus_f64_avx2, "avx2", double, 6, TFE__SG_X6, INFINITY)
#undef TFE__SG_RED
#undef TFE__SG_MUL
#define TFE__SG_MUL _mm256_mul_pd
#define TFE__SG_RED _mm256_max_pd
TFE__SG_BODY(tfe__sg_maxtimes_f64_avx2, "avx2", double, 6, TFE__SG_X6, 0)
#undef TFE__SG_W
#undef TFE__SG_V
#undef TFE__SG_SET1
#undef TFE__SG_LOAD
#undef TFE__SG_STORE
#undef TFE__SG_MUL
#undef TFE__SG_RED

#define TFE__SG_W 8
#define TFE__SG_V __m256
#define TFE__SG_SET1 _mm256_set1_ps
#define TFE__SG_LOAD _mm256_loadu_ps
#define TFE__SG_STORE _mm256_storeu_ps
#define TFE__SG_MUL _mm256_add_ps
#define TFE__SG_RED _mm256_max_ps
TFE__SG_BODY(tfe__sg_maxplus_f32_avx2, "avx2", float, 6, TFE__SG_X6, -INFINITY)
#undef TFE__SG_RED
#define TFE__SG_RED _mm256_min_ps
TFE__SG_BODY(tfe__sg_minplus_f32_avx2, "avx2", float, 6, TFE__SG_X6, INFINITY)
#undef TFE__SG_RED
#undef TFE__SG_MUL
#define TFE__SG_MUL _mm256_mul_ps
#define TFE__SG_RED _mm256_max_ps
TFE__SG_BODY(tfe__sg_maxtimes_f32_avx2, "avx2", float, 6, TFE__SG_X6, 0)
#undef TFE__SG_W
#undef TFE__SG_V
#undef TFE__SG_SET1
#undef TFE__SG_LOAD
#undef TFE__SG_STORE
#undef TFE__SG_MUL
#undef TFE__SG_RED

/* ---- argmax kernels (AVX-512): MR = 2 vectors, NR = 4 ----------------------------------------
 * Same packed operands; the tile starts from the product at p = 0 (index p0, as the naive
 * loop's first candidate) and a later product replaces it only when strictly better (CMP), so
 * the first winner stays on ties. Indices are kept per lane and stored as int64. */
typedef void (*tfe__sg_aukr)(int64_t kc, int64_t p0, const void *a, const void *b, void *tile, int64_t *itile);
#define TFE__SG_X4(M) M(0) M(1) M(2) M(3)
#define TFE__SGA_DECL(j)                                                 \
  TFE__SG_V bj##j = TFE__SG_SET1(b[j]);                                  \
  TFE__SG_V c0_##j = TFE__SG_MUL(a0, bj##j), c1_##j = TFE__SG_MUL(a1, bj##j); \
  __m512i i0_##j = pv, i1_##j = pv;
#define TFE__SGA_UPD(j)                                                  \
  {                                                                      \
    TFE__SG_V bj = TFE__SG_SET1(b[j]);                                   \
    TFE__SG_V v0 = TFE__SG_MUL(a0, bj), v1 = TFE__SG_MUL(a1, bj);        \
    TFE__SG_M m0 = TFE__SG_CMP(v0, c0_##j), m1 = TFE__SG_CMP(v1, c1_##j); \
    c0_##j = TFE__SG_BLEND(m0, c0_##j, v0);                              \
    c1_##j = TFE__SG_BLEND(m1, c1_##j, v1);                              \
    i0_##j = TFE__SG_IBLEND(m0, i0_##j, pv);                             \
    i1_##j = TFE__SG_IBLEND(m1, i1_##j, pv);                             \
  }
#define TFE__SGA_ST(j)                                                   \
  TFE__SG_STORE(t + (j) * (2 * TFE__SG_W), c0_##j);                      \
  TFE__SG_STORE(t + (j) * (2 * TFE__SG_W) + TFE__SG_W, c1_##j);          \
  TFE__SG_ISTORE(it + (j) * (2 * TFE__SG_W), i0_##j);                    \
  TFE__SG_ISTORE(it + (j) * (2 * TFE__SG_W) + TFE__SG_W, i1_##j);

#define TFE__SGA_BODY(NAME, R_)                                                                       \
  TFE_INTERNAL __attribute__((target("avx512f"))) void NAME(int64_t kc, int64_t p0, const void *av,  \
                                                            const void *bv, void *tv, int64_t *it) {  \
    const R_ *a = (const R_ *)av, *b = (const R_ *)bv;                                                \
    R_ *t = (R_ *)tv;                                                                                 \
    __m512i pv = TFE__SG_ISET1(p0);                                                                   \
    TFE__SG_V one_ = TFE__SG_SET1((R_)1);                                                             \
    (void)one_;                                                                                       \
    TFE__SG_V a0 = TFE__SG_LOAD(a), a1 = TFE__SG_LOAD(a + TFE__SG_W);                                 \
    TFE__SG_X4(TFE__SGA_DECL)                                                                         \
    for (int64_t p = 1; p < kc; p++) {                                                                \
      a += 2 * TFE__SG_W;                                                                             \
      b += 4;                                                                                         \
      pv = TFE__SG_ISET1(p0 + p);                                                                     \
      a0 = TFE__SG_LOAD(a);                                                                           \
      a1 = TFE__SG_LOAD(a + TFE__SG_W);                                                               \
      TFE__SG_X4(TFE__SGA_UPD)                                                                        \
    }                                                                                                 \
    TFE__SG_X4(TFE__SGA_ST)                                                                           \
  }

TFE_INTERNAL __attribute__((target("avx512f"))) void tfe__sga_store_i32(int64_t *dst, __m512i x) {
  _mm512_storeu_si512((void *)dst, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(x)));
  _mm512_storeu_si512((void *)(dst + 8), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(x, 1)));
}

#define TFE__SG_W 8
#define TFE__SG_V __m512d
#define TFE__SG_M __mmask8
#define TFE__SG_SET1 _mm512_set1_pd
#define TFE__SG_LOAD _mm512_loadu_pd
#define TFE__SG_STORE _mm512_storeu_pd
#define TFE__SG_BLEND _mm512_mask_blend_pd
#define TFE__SG_ISET1(x) _mm512_set1_epi64((long long)(x))
#define TFE__SG_IBLEND _mm512_mask_blend_epi64
#define TFE__SG_ISTORE(p, x) _mm512_storeu_si512((void *)(p), x)
#define TFE__SG_MUL(x, y) _mm512_fmadd_pd(x, one_, y)
#define TFE__SG_CMP(x, y) _mm512_cmp_pd_mask(x, y, _CMP_GT_OQ)
TFE__SGA_BODY(tfe__sga_maxplus_f64_avx512, double)
#undef TFE__SG_CMP
#define TFE__SG_CMP(x, y) _mm512_cmp_pd_mask(x, y, _CMP_LT_OQ)
TFE__SGA_BODY(tfe__sga_minplus_f64_avx512, double)
#undef TFE__SG_CMP
#undef TFE__SG_MUL
#define TFE__SG_MUL _mm512_mul_pd
#define TFE__SG_CMP(x, y) _mm512_cmp_pd_mask(x, y, _CMP_GT_OQ)
TFE__SGA_BODY(tfe__sga_maxtimes_f64_avx512, double)
#undef TFE__SG_CMP
#undef TFE__SG_MUL
#undef TFE__SG_W
#undef TFE__SG_V
#undef TFE__SG_M
#undef TFE__SG_SET1
#undef TFE__SG_LOAD
#undef TFE__SG_STORE
#undef TFE__SG_BLEND
#undef TFE__SG_ISET1
#undef TFE__SG_IBLEND
#undef TFE__SG_ISTORE

#define TFE__SG_W 16
#define TFE__SG_V __m512
#define TFE__SG_M __mmask16
#define TFE__SG_SET1 _mm512_set1_ps
#define TFE__SG_LOAD _mm512_loadu_ps
#define TFE__SG_STORE _mm512_storeu_ps
#define TFE__SG_BLEND _mm512_mask_blend_ps
#define TFE__SG_ISET1(x) _mm512_set1_epi32((int)(x))
#define TFE__SG_IBLEND _mm512_mask_blend_epi32
#define TFE__SG_ISTORE(p, x) tfe__sga_store_i32(p, x)
#define TFE__SG_MUL(x, y) _mm512_fmadd_ps(x, one_, y)
#define TFE__SG_CMP(x, y) _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ)
TFE__SGA_BODY(tfe__sga_maxplus_f32_avx512, float)
#undef TFE__SG_CMP
#define TFE__SG_CMP(x, y) _mm512_cmp_ps_mask(x, y, _CMP_LT_OQ)
TFE__SGA_BODY(tfe__sga_minplus_f32_avx512, float)
#undef TFE__SG_CMP
#undef TFE__SG_MUL
#define TFE__SG_MUL _mm512_mul_ps
#define TFE__SG_CMP(x, y) _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ)
TFE__SGA_BODY(tfe__sga_maxtimes_f32_avx512, float)
#undef TFE__SG_CMP
#undef TFE__SG_MUL
#undef TFE__SG_W
#undef TFE__SG_V
#undef TFE__SG_M
#undef TFE__SG_SET1
#undef TFE__SG_LOAD
#undef TFE__SG_STORE
#undef TFE__SG_BLEND
#undef TFE__SG_ISET1
#undef TFE__SG_IBLEND
#undef TFE__SG_ISTORE

/* [double?][maxplus, minplus, maxtimes]; AVX-512 only (other CPUs use the generic kernel). */
TFE_INTERNAL tfe__sg_aukr tfe__sga_kernel(int dbl, int op) {
  static const tfe__sg_aukr k[2][3] = {
      {tfe__sga_maxplus_f32_avx512, tfe__sga_minplus_f32_avx512, tfe__sga_maxtimes_f32_avx512},
      {tfe__sga_maxplus_f64_avx512, tfe__sga_minplus_f64_avx512, tfe__sga_maxtimes_f64_avx512}};
  return k[dbl][op];
}

/* [double?][maxplus, minplus, maxtimes] */
TFE_INTERNAL tfe__sg_ukr tfe__sg_kernel(int isa, int dbl, int op) {
  static const tfe__sg_ukr k512[2][3] = {
      {tfe__sg_maxplus_f32_avx512, tfe__sg_minplus_f32_avx512, tfe__sg_maxtimes_f32_avx512},
      {tfe__sg_maxplus_f64_avx512, tfe__sg_minplus_f64_avx512, tfe__sg_maxtimes_f64_avx512}};
  static const tfe__sg_ukr k2[2][3] = {
      {tfe__sg_maxplus_f32_avx2, tfe__sg_minplus_f32_avx2, tfe__sg_maxtimes_f32_avx2},
      {tfe__sg_maxplus_f64_avx2, tfe__sg_minplus_f64_avx2, tfe__sg_maxtimes_f64_avx2}};
  return isa == 2 ? k512[dbl][op] : k2[dbl][op];
}

#endif /* x86-64 */
#endif
