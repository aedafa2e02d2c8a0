/* tenferro/prims/small_gemm_tpl.h — the small-GEMM engine of the contraction (engine.h: SMALL)
 * for the float kinds (f32 f64 c64 c128); re-included per kind, empty for every other kind.
 *
 * Many contractions of tensor networks are a huge batch of tiny GEMMs (gm_queen5_5_3: 531441
 * batches of 9x9x27). A BLIS call costs microseconds of fixed work and the planner's copies
 * of scattered operands cost whole passes over memory, so such plans (engine SMALL, chosen in
 * plan_small.h by a measured crossover) run this instead:
 *   - every GEMM dimension is addressed through a table of element offsets built once per
 *     call from its labels, so no label group has to fuse and no operand is copied;
 *   - per batch, the operand whose row dimension is vectorized ("X": A, or B when the
 *     transposed product pads less) is packed p-major into an L1 buffer with the rows padded
 *     to the vector width (zero pads), the other one ("Y") into scalars, real and imaginary
 *     parts in separate planes (lazy conjugation negates the imaginary plane); real kinds read
 *     X and Y and write C in place where their tables are affine, for any row count (the last
 *     row vector's loads and stores masked), and f64 with two depth-contiguous inputs runs dot
 *     products along the depth (ps_tn_); such plans need no buffers at all;
 *   - a tile of columns is accumulated in registers (vector over rows, broadcast over
 *     columns) into a dense local tile, and C is written once: alpha * tile (+ beta * C;
 *     beta == 0 never reads C);
 *   - batches run in an odometer (no divisions after the first) over the batch labels sorted
 *     by stride (the planner's order), split into contiguous ranges over OpenMP threads. */
#if !TFE__BODY_PHASE
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD && defined(TFE__PS_HAVE_VEC)

#define TFE__PS_W ((int64_t)(TFE__PS_VB / sizeof(TFE_R))) /* lanes of one vector (plan_small.h) */
#define TFE__PS_PL (TFE_CPLX ? 2 : 1)             /* planes: real (and imaginary) */
typedef TFE_R TFE_FN(ps_vec_) __attribute__((vector_size(TFE__PS_VB)));
/* The same vector at element alignment, for loads and stores straight from the operands. */
typedef TFE_R TFE_FN(ps_vecu_) __attribute__((vector_size(TFE__PS_VB), aligned(sizeof(TFE_R)), may_alias));

/* One row block of the kernel (ps_tile_): rows [rb, re) in blocks of nv row vectors, the last
 * vector masked to its first mrem lanes when mrem > 0; columns in blocks of nq, qf of them in
 * whole blocks (the rest one block). Made once per plan (ps_segs_). */
typedef struct TFE_FN(ps_seg_) { int64_t rb, re, mrem, nq, qf; int nv; } TFE_FN(ps_seg_);

/* One call of the small path: operands as seen by the kernel after the optional swap. */
typedef struct TFE_FN(ps_call_) {
  int64_t R, Q, K, RP;       /* rows (vectorized), columns, depth, rows padded to the vector */
  int64_t QP, NQ;            /* columns padded to a multiple of NQ (the column block, 1-4) */
  const int64_t *xr, *xp;    /* X offsets: row r, depth p */
  const int64_t *yp, *yq;    /* Y offsets: depth p, column q */
  const int64_t *cr, *cq;    /* C offsets: row r, column q */
  bool xunit;                /* xr[r] == r: rows of X contiguous */
  bool xtr;                  /* real kinds: X is depth-contiguous (xp[p] == p) with rows at r * xrs
                              * (a transposed operand): packed row by row, reading along p */
  int64_t xrs;
  /* real kinds, whole vectors: X read in place (row vectors at x + p * xs), Y read in place
   * (element (p, q) at y + p * ysp + q * ysq), C written in place (column q at c + q * csq) */
  bool xdir, ydir, cdir;
  int64_t xs, ysp, ysq, csq;
  /* real kinds, rows not whole vectors (mrem = R % W lanes in the last one): X read in place
   * and C written in place with masked loads and stores of that last vector (AVX / AVX-512
   * mask moves, lane loops elsewhere); mrem 0: whole vectors */
  int64_t mrem;
  /* tn (f64 on AVX): X and Y are both depth-contiguous (a transposed times a plain operand,
   * read in place), C in place: dot products along the depth (ps_tn_), no packing. tn 2: the
   * same with X and Y exchanged (C's columns are its contiguous dimension). */
  int tn;
  /* nothing to pack: X, Y and C in place (or tn); such plans need no workspace when their
   * batches run without prefetching (ps_nobuf_) */
  bool nobuf;
  /* tnp (f64 on AVX-512, with tn): the transposed input packed on the stack by 8 x 8 register
   * transposes, then the vector kernel with Y read and C written in place (ps_tnp_run_); R, Q
   * and the row blocks are the kernel's (tn 2: X and Y exchanged) */
  bool tnp;
  bool nbrun;                /* ps_nobuf_: nobuf, and batches that need no prefetching */
  bool held;                 /* nbrun, and a plan that needs nothing else (pr_held_) */
  int nbk;                   /* its counter of calls without buffers (ps_count_nobuf_) */
  int nseg;                  /* the kernel's row blocks (ps_tile_) */
  TFE_FN(ps_seg_) seg[3];
  bool cx, cy;               /* conjugate X / Y */
  const TFE_T *x, *y;
  TFE_T *c;
  TFE_T alpha, beta;
  int64_t xlo, xhi, ylo, yhi; /* element range one batch of X / Y spans (for prefetching) */
  bool pf;                   /* both ranges are compact: prefetch the batch PD ahead */
  int nb;                    /* batch labels (odometer order) */
  int64_t bd[TFE__PR_MAXL], bx[TFE__PR_MAXL], by[TFE__PR_MAXL], bc[TFE__PR_MAXL];
} TFE_FN(ps_call_);

/* T[q * RP + r] = sum_p X[p * RP + r] * Y[q * K + p] over the whole padded tile (RP x QP), in
 * blocks of NV row vectors x NQ columns: NV * NQ accumulators (twice that for complex) stay in
 * registers for the whole depth, enough independent FMA chains to hide their latency. Buffers
 * are 64-byte aligned and RP is a multiple of the vector width: every row vector is an aligned
 * load. The accumulators are named by macros (not arrays) so that -O2 keeps them in registers. */
#define TFE__PS_J1(M) M(0)
#define TFE__PS_J2(M) M(0) M(1)
#define TFE__PS_J3(M) M(0) M(1) M(2)
#define TFE__PS_J4(M) M(0) M(1) M(2) M(3)
#define TFE__PS_J5(M) M(0) M(1) M(2) M(3) M(4)
#define TFE__PS_J6(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define TFE__PS_DECL(j) V a0_##j = zero, a1_##j = zero, a2_##j = zero, a3_##j = zero, i0_##j = zero, i1_##j = zero;
#define TFE__PS_UPD(j)                                                                         \
  {                                                                                            \
    TFE_R yr = yy[j * ysq];                                                                    \
    a0_##j += x0 * yr;                                                                         \
    if (NV >= 2) a1_##j += x1 * yr;                                                            \
    if (NV >= 4) { a2_##j += x2 * yr; a3_##j += x3 * yr; }                                     \
    if (TFE_CPLX) {                                                                            \
      TFE_R yi = yy[j * ysq + s->QP * K];                                                      \
      a0_##j -= xi0 * yi;                                                                      \
      i0_##j += x0 * yi + xi0 * yr;                                                            \
      if (NV >= 2) { a1_##j -= xi1 * yi; i1_##j += x1 * yi + xi1 * yr; }                      \
    }                                                                                          \
  }
#define TFE__PS_PUT(j)                                                                         \
  {                                                                                            \
    TFE_R *tq = t + (q0 + j) * tsq + r0;                                                       \
    if (cdir) { /* straight into C: alpha * acc (+ beta * C) */                                \
      Vu *cv = (Vu *)tq;                                                                       \
      V v = a0_##j * alpha;                                                                    \
      if (!bzero) v += cv[0] * beta;                                                           \
      cv[0] = v;                                                                               \
      if (NV >= 2) { v = a1_##j * alpha; if (!bzero) v += cv[1] * beta; cv[1] = v; }           \
      if (NV >= 4) {                                                                           \
        v = a2_##j * alpha; if (!bzero) v += cv[2] * beta; cv[2] = v;                          \
        v = a3_##j * alpha; if (!bzero) v += cv[3] * beta; cv[3] = v;                          \
      }                                                                                        \
    } else {                                                                                   \
      *(V *)tq = a0_##j;                                                                       \
      if (NV >= 2) *(V *)(tq + TFE__PS_W) = a1_##j;                                            \
      if (NV >= 4) { *(V *)(tq + 2 * TFE__PS_W) = a2_##j; *(V *)(tq + 3 * TFE__PS_W) = a3_##j; } \
      if (TFE_CPLX) {                                                                          \
        *(V *)(tq + s->RP * s->QP) = i0_##j;                                                   \
        if (NV >= 2) *(V *)(tq + s->RP * s->QP + TFE__PS_W) = i1_##j;                          \
      }                                                                                        \
    }                                                                                          \
  }
#define TFE__PS_BODY(NV, J)                                                                    \
  for (int64_t q0 = 0; q0 < s->QP; q0 += s->NQ)                                                \
    for (int64_t r0 = r_begin; r0 + NV * TFE__PS_W <= r_end; r0 += NV * TFE__PS_W) {           \
      J(TFE__PS_DECL)                                                                          \
      for (int64_t p = 0; p < K; p++) {                                                        \
        const TFE_R *xx = xp + p * xsp + r0, *yy = yp + q0 * ysq + p * ysp;                    \
        V x0 = *(const Vu *)xx, x1 = zero, x2 = zero, x3 = zero, xi0 = zero, xi1 = zero;       \
        if (NV >= 2) x1 = *(const Vu *)(xx + TFE__PS_W);                                       \
        if (NV >= 4) { x2 = *(const Vu *)(xx + 2 * TFE__PS_W); x3 = *(const Vu *)(xx + 3 * TFE__PS_W); } \
        if (TFE_CPLX) {                                                                        \
          xi0 = *(const V *)(xx + s->RP * K);                                                  \
          if (NV >= 2) xi1 = *(const V *)(xx + s->RP * K + TFE__PS_W);                         \
        }                                                                                      \
        J(TFE__PS_UPD)                                                                         \
      }                                                                                        \
      J(TFE__PS_PUT)                                                                           \
    }
#define TFE__PS_BY_NQ(NV)                                                                      \
  switch (s->NQ) {                                                                             \
  case 6: TFE__PS_BODY(NV, TFE__PS_J6) break;                                                  \
  case 5: TFE__PS_BODY(NV, TFE__PS_J5) break;                                                  \
  case 4: TFE__PS_BODY(NV, TFE__PS_J4) break;                                                  \
  case 3: TFE__PS_BODY(NV, TFE__PS_J3) break;                                                  \
  case 2: TFE__PS_BODY(NV, TFE__PS_J2) break;                                                  \
  default: TFE__PS_BODY(NV, TFE__PS_J1) break;                                                 \
  }
#undef TFE__PS_BY_NQ
#undef TFE__PS_BODY
#undef TFE__PS_PUT
#undef TFE__PS_UPD
#undef TFE__PS_DECL
#undef TFE__PS_J1
#undef TFE__PS_J2
#undef TFE__PS_J3
#undef TFE__PS_J4
#undef TFE__PS_J5
#undef TFE__PS_J6

/* Batches ahead of the current one whose X and Y blocks are prefetched: the packing loops are
 * too short for out-of-order execution to reach the next batch's loads by itself, so without
 * this the batch loop streams A and B at memory latency (about a third of the bandwidth). */
#define TFE__PS_PD 4

#undef TFE__PS_W
#undef TFE__PS_PD
#undef TFE__PS_PL
#endif
#else /* bodies */
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD && defined(TFE__PS_HAVE_VEC)
#if (defined(__x86_64__) || defined(__i386__)) && defined(__AVX__)
#include <immintrin.h>
#endif
#define TFE__PS_W ((int64_t)(TFE__PS_VB / sizeof(TFE_R))) /* lanes of one vector (plan_small.h) */
#define TFE__PS_PL (TFE_CPLX ? 2 : 1)             /* planes: real (and imaginary) */
#define TFE__PS_TNP_MAX ((int64_t)(16384 / sizeof(TFE_R))) /* reals of ps_tn_one_'s stack buffer (16 KiB) */

/* Real elements of Y's planes, rounded to whole vectors so that the tile after them stays
 * 64-byte aligned. */
TFE_INTERNAL int64_t TFE_FN(ps_ylen_)(int64_t Q, int64_t K) { return (Q * K + TFE__PS_W - 1) / TFE__PS_W * TFE__PS_W; }

/* Tiles kept per run of consecutive batches (up to 8, at most 262144 reals): C is then written
 * in runs along the first batch label instead of one scattered element per batch, each a
 * possible cache and TLB miss (measured: docs/bench-prims.md, "Why the code does it"). */
TFE_INTERNAL int64_t TFE_FN(ps_run_len_)(int64_t RP, int64_t Q) {
  int64_t u = (int64_t)262144 / (TFE__PS_PL * RP * Q);
  return u < 1 ? 1 : u > 8 ? 8 : u;
}
/* Real elements one thread's buffers take (X planes, Y planes, tiles), plus a vector of slack
 * for alignment. */
TFE_INTERNAL int64_t TFE_FN(ps_buf_elems_)(int64_t RP, int64_t Q /* padded */, int64_t K) {
  return TFE__PS_PL * (RP * K + TFE_FN(ps_ylen_)(Q, K) + TFE_FN(ps_run_len_)(RP, Q) * RP * Q) + TFE__PS_W;
}

#if !TFE_CPLX
/* Transposed X (row r at x + r * xrs, contiguous along the depth) into the buffer: element
 * (r, p) to xp[p * RP + r]. With AVX, blocks of 4 rows x 4 depths are transposed in registers
 * (four loads, four stores); one element at a time, the loop's strided stores took a fifth to a
 * third of a 24 x 24 x 48 step, and its speed hung on where the loop happened to be placed
 * (docs/benchmarks.md, session 18). The edges go one element at a time. */
#if TFE__PS_VB == 64 && defined(__AVX512F__)
/* The 8 x 8 transposes' common steps (named registers, no arrays or loops: at -O2 gcc kept
 * arrays of vectors on the stack). Rows: s0..s6, e (rows past R read row R - 1: the buffer's
 * pad rows, never stored to C); loads: v0..v7 of depths [p0, p0 + kb) under mask m; the first
 * step: row pairs interleaved into t0..t7; stores: depth j's vector F(v_j, v_j+4, A) for j < 4,
 * F(v_j-4, v_j, B) for j >= 4, kb of them. */
#define TFE__PS_TR_ROWS(T)                                                                     \
  int64_t n = R - r0 < 8 ? R - r0 : 8;                                                         \
  const T *s0 = x + r0 * xrs + p0, *e = s0 + (n - 1) * xrs;                                    \
  const T *s1 = n > 1 ? s0 + xrs : e, *s2 = n > 2 ? s0 + 2 * xrs : e, *s3 = n > 3 ? s0 + 3 * xrs : e; \
  const T *s4 = n > 4 ? s0 + 4 * xrs : e, *s5 = n > 5 ? s0 + 5 * xrs : e, *s6 = n > 6 ? s0 + 6 * xrs : e;
#define TFE__PS_TR_LOAD(V, LD)                                                                 \
  V v0 = LD(m, s0), v1 = LD(m, s1), v2 = LD(m, s2), v3 = LD(m, s3);                            \
  V v4 = LD(m, s4), v5 = LD(m, s5), v6 = LD(m, s6), v7 = LD(m, e);                             \
  V t0 = LO(v0, v1), t1 = HI(v0, v1), t2 = LO(v2, v3), t3 = HI(v2, v3);                        \
  V t4 = LO(v4, v5), t5 = HI(v4, v5), t6 = LO(v6, v7), t7 = HI(v6, v7);
#define TFE__PS_TR_STORE(ST, F, A, B)                                                          \
  ST(d, F(v0, v4, A));                                                                         \
  if (kb > 1) ST(d + RP, F(v1, v5, A));                                                        \
  if (kb > 2) ST(d + 2 * RP, F(v2, v6, A));                                                    \
  if (kb > 3) ST(d + 3 * RP, F(v3, v7, A));                                                    \
  if (kb > 4) ST(d + 4 * RP, F(v0, v4, B));                                                    \
  if (kb > 5) ST(d + 5 * RP, F(v1, v5, B));                                                    \
  if (kb > 6) ST(d + 6 * RP, F(v2, v6, B));                                                    \
  if (kb > 7) ST(d + 7 * RP, F(v3, v7, B));
/* f64: rows [r0, r0 + 8), depths [p0, p0 + kb) (kb <= 8; masked loads read nothing past it)
 * into xp[p * RP + r0 ..]: eight loads, 24 shuffles, kb stores. */
TFE_INTERNAL void TFE_FN(ps_tr8_)(const double *x, int64_t xrs, int64_t R, int64_t r0, int64_t p0, int64_t kb, double *xp,
                                  int64_t RP) {
  __mmask8 m = (__mmask8)((1u << kb) - 1u);
  TFE__PS_TR_ROWS(double)
#define LO _mm512_unpacklo_pd
#define HI _mm512_unpackhi_pd
  TFE__PS_TR_LOAD(__m512d, _mm512_maskz_loadu_pd) /* [r0 p0, r1 p0 | r0 p2, r1 p2 | ...], odd depths */
#undef LO
#undef HI
  /* [rows 0-3 at depth d | rows 0-3 at d + 4] for d = 0..3, then rows 4-7 */
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  v0 = _mm512_permutex2var_pd(t0, lo, t2); v1 = _mm512_permutex2var_pd(t1, lo, t3);
  v2 = _mm512_permutex2var_pd(t0, hi, t2); v3 = _mm512_permutex2var_pd(t1, hi, t3);
  v4 = _mm512_permutex2var_pd(t4, lo, t6); v5 = _mm512_permutex2var_pd(t5, lo, t7);
  v6 = _mm512_permutex2var_pd(t4, hi, t6); v7 = _mm512_permutex2var_pd(t5, hi, t7);
  double *d = xp + p0 * RP + r0;
  TFE__PS_TR_STORE(_mm512_storeu_pd, _mm512_shuffle_f64x2, 0x44, 0xee)
}
/* The same for 1-2 rows (r0, r0 + 1; one row: the pair's second is the first again): the two
 * rows interleaved, each depth's pair stored from its 128-bit lane (8 shuffles, not 24 for 6
 * pad rows). */
/* 128-bit lane i of v (AVX-512F's extract: the f64x2 one is AVX-512DQ's) */
#define TFE__PS_LANE2(v, i) _mm_castps_pd(_mm512_extractf32x4_ps(_mm512_castpd_ps(v), i))
TFE_INTERNAL void TFE_FN(ps_tr2_)(const double *x, int64_t xrs, int64_t R, int64_t r0, int64_t p0, int64_t kb, double *xp,
                                  int64_t RP) {
  __mmask8 m = (__mmask8)((1u << kb) - 1u);
  const double *s0 = x + r0 * xrs + p0, *s1 = R - r0 > 1 ? s0 + xrs : s0;
  __m512d v0 = _mm512_maskz_loadu_pd(m, s0), v1 = _mm512_maskz_loadu_pd(m, s1);
  __m512d ev = _mm512_unpacklo_pd(v0, v1), od = _mm512_unpackhi_pd(v0, v1); /* depths 0 2 4 6, 1 3 5 7 */
  double *d = xp + p0 * RP + r0;
  _mm_storeu_pd(d, _mm512_castpd512_pd128(ev));
  if (kb > 1) _mm_storeu_pd(d + RP, _mm512_castpd512_pd128(od));
  if (kb > 2) _mm_storeu_pd(d + 2 * RP, TFE__PS_LANE2(ev, 1));
  if (kb > 3) _mm_storeu_pd(d + 3 * RP, TFE__PS_LANE2(od, 1));
  if (kb > 4) _mm_storeu_pd(d + 4 * RP, TFE__PS_LANE2(ev, 2));
  if (kb > 5) _mm_storeu_pd(d + 5 * RP, TFE__PS_LANE2(od, 2));
  if (kb > 6) _mm_storeu_pd(d + 6 * RP, TFE__PS_LANE2(ev, 3));
  if (kb > 7) _mm_storeu_pd(d + 7 * RP, TFE__PS_LANE2(od, 3));
}
#undef TFE__PS_LANE2
/* f32 (AVX-512VL): the same by one 8 x 8 transpose of 256-bit vectors (two 8-row blocks fill a
 * 16-lane row vector): eight masked loads, 24 shuffles, kb stores. */
#if defined(__AVX512VL__)
TFE_INTERNAL void TFE_FN(ps_tr8f_)(const float *x, int64_t xrs, int64_t R, int64_t r0, int64_t p0, int64_t kb, float *xp,
                                   int64_t RP) {
  __mmask8 m = (__mmask8)((1u << kb) - 1u);
  TFE__PS_TR_ROWS(float)
#define LO _mm256_unpacklo_ps
#define HI _mm256_unpackhi_ps
  TFE__PS_TR_LOAD(__m256, _mm256_maskz_loadu_ps) /* [r0 d0, r1 d0, r0 d1, r1 d1 | d4, d5], d2-3 / d6-7 */
#undef LO
#undef HI
  /* rows 0-3 (4-7) at depth d | at depth d + 4, for d = 0..3 */
  v0 = _mm256_shuffle_ps(t0, t2, 0x44); v1 = _mm256_shuffle_ps(t0, t2, 0xee);
  v2 = _mm256_shuffle_ps(t1, t3, 0x44); v3 = _mm256_shuffle_ps(t1, t3, 0xee);
  v4 = _mm256_shuffle_ps(t4, t6, 0x44); v5 = _mm256_shuffle_ps(t4, t6, 0xee);
  v6 = _mm256_shuffle_ps(t5, t7, 0x44); v7 = _mm256_shuffle_ps(t5, t7, 0xee);
  float *d = xp + p0 * RP + r0;
  TFE__PS_TR_STORE(_mm256_storeu_ps, _mm256_permute2f128_ps, 0x20, 0x31)
}
#endif
#undef TFE__PS_TR_ROWS
#undef TFE__PS_TR_LOAD
#undef TFE__PS_TR_STORE
#endif
TFE_INTERNAL void TFE_FN(ps_pack_xt_)(const TFE_T *x, int64_t xrs, int64_t R, int64_t K, TFE_R *xp, int64_t RP) {
  int64_t r = 0;
#if TFE__PS_VB == 64 && defined(__AVX512F__)
  if (sizeof(TFE_R) == 8 && tfe__st.tune.small_tn_pack_rows) { /* every row: the last block's pad rows repeat row R - 1 */
    for (; r < R; r += 8)
      for (int64_t p = 0; p < K; p += 8) {
        const double *xd = (const double *)(const void *)x;
        int64_t kb = K - p < 8 ? K - p : 8;
        if (R - r <= 2) TFE_FN(ps_tr2_)(xd, xrs, R, r, p, kb, (double *)(void *)xp, RP);
        else TFE_FN(ps_tr8_)(xd, xrs, R, r, p, kb, (double *)(void *)xp, RP);
      }
    return;
  }
#if defined(__AVX512VL__)
  if (sizeof(TFE_R) == 4 && tfe__st.tune.small_tn_pack_rows) { /* (as above, 8 rows a block) */
    for (; r < R; r += 8)
      for (int64_t p = 0; p < K; p += 8)
        TFE_FN(ps_tr8f_)((const float *)(const void *)x, xrs, R, r, p, K - p < 8 ? K - p : 8, (float *)(void *)xp, RP);
    return;
  }
#endif
#endif
#if (defined(__x86_64__) || defined(__i386__)) && defined(__AVX__)
  int64_t K4 = K / 4 * 4;
  for (; r + 4 <= R; r += 4) {
    const TFE_R *s0 = (const TFE_R *)x + r * xrs, *s1 = s0 + xrs, *s2 = s1 + xrs, *s3 = s2 + xrs;
    int64_t p = 0;
    for (; p < K4; p += 4) {
      TFE_R *d = xp + p * RP + r;
      if (sizeof(TFE_R) == 8) {
        __m256d a = _mm256_loadu_pd((const double *)(const void *)(s0 + p));
        __m256d b = _mm256_loadu_pd((const double *)(const void *)(s1 + p));
        __m256d c = _mm256_loadu_pd((const double *)(const void *)(s2 + p));
        __m256d e = _mm256_loadu_pd((const double *)(const void *)(s3 + p));
        __m256d t0 = _mm256_unpacklo_pd(a, b), t1 = _mm256_unpackhi_pd(a, b); /* [a0 b0 a2 b2], [a1 b1 a3 b3] */
        __m256d t2 = _mm256_unpacklo_pd(c, e), t3 = _mm256_unpackhi_pd(c, e);
        _mm256_storeu_pd((double *)(void *)d, _mm256_permute2f128_pd(t0, t2, 0x20));
        _mm256_storeu_pd((double *)(void *)(d + RP), _mm256_permute2f128_pd(t1, t3, 0x20));
        _mm256_storeu_pd((double *)(void *)(d + 2 * RP), _mm256_permute2f128_pd(t0, t2, 0x31));
        _mm256_storeu_pd((double *)(void *)(d + 3 * RP), _mm256_permute2f128_pd(t1, t3, 0x31));
      } else {
        __m128 a = _mm_loadu_ps((const float *)(const void *)(s0 + p)), b = _mm_loadu_ps((const float *)(const void *)(s1 + p));
        __m128 c = _mm_loadu_ps((const float *)(const void *)(s2 + p)), e = _mm_loadu_ps((const float *)(const void *)(s3 + p));
        _MM_TRANSPOSE4_PS(a, b, c, e);
        _mm_storeu_ps((float *)(void *)d, a);
        _mm_storeu_ps((float *)(void *)(d + RP), b);
        _mm_storeu_ps((float *)(void *)(d + 2 * RP), c);
        _mm_storeu_ps((float *)(void *)(d + 3 * RP), e);
      }
    }
    for (; p < K; p++) {
      TFE_R *d = xp + p * RP + r;
      d[0] = s0[p]; d[1] = s1[p]; d[2] = s2[p]; d[3] = s3[p];
    }
  }
#endif
  for (; r < R; r++) {
    const TFE_T *src = x + r * xrs;
    for (int64_t p = 0; p < K; p++) xp[p * RP + r] = src[p];
  }
}
#endif
/* Packs X of one batch: plane pl of Xp holds element (r, p) at p * RP + r. */
TFE_INTERNAL void TFE_FN(ps_pack_x_)(const TFE_FN(ps_call_) *s, const TFE_T *x, TFE_R *xp) {
  for (int64_t p = 0; p < s->K; p++) {
    const TFE_T *src = x + s->xp[p];
    TFE_R *dr = xp + p * s->RP;
#if TFE_CPLX
    TFE_R *di = dr + s->RP * s->K, sg = s->cx ? (TFE_R)-1 : (TFE_R)1;
    const TFE_R *sr = (const TFE_R *)src;
    if (s->xunit) {
      for (int64_t r = 0; r < s->R; r++) { dr[r] = sr[2 * r]; di[r] = sg * sr[2 * r + 1]; }
    } else {
      for (int64_t r = 0; r < s->R; r++) { dr[r] = sr[2 * s->xr[r]]; di[r] = sg * sr[2 * s->xr[r] + 1]; }
    }
#else
    if (s->xtr) break; /* below */
    if (s->xunit) {
      for (int64_t r = 0; r < s->R; r++) dr[r] = src[r];
    } else {
      for (int64_t r = 0; r < s->R; r++) dr[r] = src[s->xr[r]];
    }
#endif
  }
#if !TFE_CPLX
  /* transposed X: the reads run along contiguous depth, the writes (into the L1 buffer) stride
   * RP; gathering column by column instead would touch a new cache line per element */
  if (s->xtr) TFE_FN(ps_pack_xt_)(x, s->xrs, s->R, s->K, xp, s->RP);
#endif
}

/* Packs Y of one batch: plane pl holds element (p, q) at q * K + p. */
TFE_INTERNAL void TFE_FN(ps_pack_y_)(const TFE_FN(ps_call_) *s, const TFE_T *y, TFE_R *yp) {
  for (int64_t q = 0; q < s->Q; q++) {
    const TFE_T *src = y + s->yq[q];
    TFE_R *dr = yp + q * s->K;
#if TFE_CPLX
    TFE_R *di = dr + s->QP * s->K, sg = s->cy ? (TFE_R)-1 : (TFE_R)1;
    for (int64_t p = 0; p < s->K; p++) {
      const TFE_R *e = (const TFE_R *)(src + s->yp[p]);
      dr[p] = e[0];
      di[p] = sg * e[1];
    }
#else
    for (int64_t p = 0; p < s->K; p++) dr[p] = src[s->yp[p]];
#endif
  }
}
/* ---- the last, partial row vector: masked loads and stores ------------------------------------
 * A GEMM whose rows are not whole vectors (10 rows on 4 lanes) reads X and writes C in place
 * all the same: the last vector's loads and stores are masked to its mrem lanes (vmaskmov loads
 * on AVX/AVX2, k-masks on AVX-512; lane loops elsewhere). Masked lanes are never read, so
 * nothing past the view is touched, and they load as zeros. AVX/AVX2 stores the lanes in
 * pieces (half vector, pair, one) instead of vmaskmov: a vmaskmov store is microcoded on AMD
 * (about a dozen cycles each: a 10 x 20 x 10 step stores 20 of them) and on Intel cannot
 * forward to the loads that read C next (a chain's next step). */
#if TFE__PS_VB == 64 && defined(__AVX512F__)
typedef __mmask16 TFE_FN(ps_mask_);
#elif TFE__PS_VB == 32 && defined(__AVX__)
typedef struct { __m256i m; int64_t rem; } TFE_FN(ps_mask_);
#else
typedef int64_t TFE_FN(ps_mask_);
#endif
/* The mask of the first rem lanes (0 < rem < W). */
TFE_INTERNAL TFE_FN(ps_mask_) TFE_FN(ps_mk_)(int64_t rem) {
#if TFE__PS_VB == 64 && defined(__AVX512F__)
  return (__mmask16)((1u << rem) - 1u);
#elif TFE__PS_VB == 32 && defined(__AVX__)
  static const int32_t m32[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  TFE_FN(ps_mask_) m = {_mm256_loadu_si256((const __m256i *)(const void *)(m32 + 8 - rem * (int64_t)(sizeof(TFE_R) / 4))), rem};
  return m;
#else
  return rem;
#endif
}
TFE_INTERNAL TFE_FN(ps_vec_) TFE_FN(ps_mload_)(const TFE_R *p, TFE_FN(ps_mask_) m) {
  typedef TFE_FN(ps_vec_) V;
#if TFE__PS_VB == 64 && defined(__AVX512F__)
  if (sizeof(TFE_R) == 8) return (V)_mm512_maskz_loadu_pd((__mmask8)m, (const void *)p);
  return (V)_mm512_maskz_loadu_ps(m, (const void *)p);
#elif TFE__PS_VB == 32 && defined(__AVX__)
  if (sizeof(TFE_R) == 8) return (V)_mm256_maskload_pd((const double *)(const void *)p, m.m);
  return (V)_mm256_maskload_ps((const float *)(const void *)p, m.m);
#else
  V v = {0};
  for (int64_t l = 0; l < m; l++) v[l] = p[l];
  return v;
#endif
}
/* Whether the kernel holds its row vectors in registers (TFE__PS_PIN) and loads a half-full
 * last one by ps_hload_: on AVX (16 registers of 256 bits) with small_row_regs on. The 128-bit
 * load zero-extends, so that block needs no mask register: with 3 row vectors x 4 columns (E.A
 * at D = 10) the 12 accumulators, 3 row vectors and a broadcast then fit the 16 registers
 * (docs/bench-prims.md, session 21). */
TFE_INTERNAL bool TFE_FN(ps_regs_)(void) {
#if TFE__PS_VB == 32 && defined(__AVX__)
  return tfe__st.tune.small_row_regs != 0;
#else
  return false;
#endif
}
/* The first W / 2 lanes at p, the others zero (only where ps_regs_ said so). */
TFE_INTERNAL TFE_FN(ps_vec_) TFE_FN(ps_hload_)(const TFE_R *p) {
  typedef TFE_FN(ps_vec_) V;
#if TFE__PS_VB == 32 && defined(__AVX__)
  if (sizeof(TFE_R) == 8) return (V)_mm256_zextpd128_pd256(_mm_loadu_pd((const double *)(const void *)p));
  return (V)_mm256_zextps128_ps256(_mm_loadu_ps((const float *)(const void *)p));
#else
  V v = {0};
  for (int64_t l = 0; l < TFE__PS_W / 2; l++) v[l] = p[l];
  return v;
#endif
}
TFE_INTERNAL void TFE_FN(ps_mstore_)(TFE_R *p, TFE_FN(ps_mask_) m, TFE_FN(ps_vec_) v) {
#if TFE__PS_VB == 64 && defined(__AVX512F__)
  if (sizeof(TFE_R) == 8) _mm512_mask_storeu_pd((void *)p, (__mmask8)m, (__m512d)v);
  else _mm512_mask_storeu_ps((void *)p, m, (__m512)v);
#elif TFE__PS_VB == 32 && defined(__AVX__)
  int64_t r = m.rem;
  if (sizeof(TFE_R) == 8) { /* 1-3 lanes: a pair, then one */
    double *d = (double *)(void *)p;
    __m128d lo = _mm256_castpd256_pd128((__m256d)v);
    if (r >= 2) {
      _mm_storeu_pd(d, lo);
      if (r == 2) return;
      d += 2;
      lo = _mm256_extractf128_pd((__m256d)v, 1);
    }
    _mm_store_sd(d, lo);
  } else { /* 1-7 lanes: four, two, one */
    float *f = (float *)(void *)p;
    __m128 lo = _mm256_castps256_ps128((__m256)v);
    if (r >= 4) { _mm_storeu_ps(f, lo); f += 4; r -= 4; lo = _mm256_extractf128_ps((__m256)v, 1); }
    if (r >= 2) { /* (a 64-bit store at float alignment: the unaligned form) */
      _mm_storel_epi64((__m128i_u *)(void *)f, _mm_castps_si128(lo));
      f += 2; r -= 2; lo = _mm_movehl_ps(lo, lo);
    }
    if (r) _mm_store_ss(f, lo);
  }
#else
  for (int64_t l = 0; l < m; l++) p[l] = v[l];
#endif
}

/* ---- a half-width last row vector (MK & 8) -----------------------------------------------------
 * On AVX-512 a masked last vector of W / 2 lanes or fewer (f64: 10 rows as 8 + 2, 12 as 8 + 4)
 * can run in a 256-bit register: a Zen 4 executes each 512-bit FMA as two 256-bit halves, so
 * the tail's FMAs take half the slots a masked 512-bit one does (small_half_tail). Elsewhere
 * the half type is the full one and the path is never taken. */
#if TFE__PS_VB == 64 && defined(__AVX512F__) && defined(__AVX512VL__)
typedef TFE_R TFE_FN(ps_vech_) __attribute__((vector_size(TFE__PS_VB / 2)));
TFE_INTERNAL TFE_FN(ps_vech_) TFE_FN(ps_hmload_)(const TFE_R *p, TFE_FN(ps_mask_) m) {
  typedef TFE_FN(ps_vech_) H;
  if (sizeof(TFE_R) == 8) return (H)_mm256_maskz_loadu_pd((__mmask8)m, (const void *)p);
  return (H)_mm256_maskz_loadu_ps((__mmask8)m, (const void *)p);
}
TFE_INTERNAL void TFE_FN(ps_hmstore_)(TFE_R *p, TFE_FN(ps_mask_) m, TFE_FN(ps_vech_) v) {
  if (sizeof(TFE_R) == 8) _mm256_mask_storeu_pd((void *)p, (__mmask8)m, (__m256d)v);
  else _mm256_mask_storeu_ps((void *)p, (__mmask8)m, (__m256)v);
}
TFE_INTERNAL bool TFE_FN(ps_half_)(int64_t mrem) {
  return 2 * mrem <= TFE__PS_W && tfe__kon_amd(tfe__st.tune.small_half_tail);
}
#else
typedef TFE_FN(ps_vec_) TFE_FN(ps_vech_);
TFE_INTERNAL TFE_FN(ps_vech_) TFE_FN(ps_hmload_)(const TFE_R *p, TFE_FN(ps_mask_) m) { return TFE_FN(ps_mload_)(p, m); }
TFE_INTERNAL void TFE_FN(ps_hmstore_)(TFE_R *p, TFE_FN(ps_mask_) m, TFE_FN(ps_vech_) v) { TFE_FN(ps_mstore_)(p, m, v); }
TFE_INTERNAL bool TFE_FN(ps_half_)(int64_t mrem) { (void)mrem; return false; }
#endif

#define TFE__PS_J1(M) M(0)
#define TFE__PS_J2(M) M(0) M(1)
#define TFE__PS_J3(M) M(0) M(1) M(2)
#define TFE__PS_J4(M) M(0) M(1) M(2) M(3)
#define TFE__PS_J5(M) M(0) M(1) M(2) M(3) M(4)
#define TFE__PS_J6(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define TFE__PS_J7(M) TFE__PS_J6(M) M(6)
#define TFE__PS_J8(M) TFE__PS_J7(M) M(7)
#define TFE__PS_J9(M) TFE__PS_J8(M) M(8)
#define TFE__PS_J10(M) TFE__PS_J9(M) M(9)
#define TFE__PS_J11(M) TFE__PS_J10(M) M(10)
#define TFE__PS_J12(M) TFE__PS_J11(M) M(11)
#define TFE__PS_DECL(j) V a0_##j = zero, a1_##j = zero, a2_##j = zero, a3_##j = zero, i0_##j = zero, i1_##j = zero; \
  H h_##j = hzero;
#define TFE__PS_UPD(j)                                                                         \
  {                                                                                            \
    TFE_R yr = yy[j * ysq];                                                                    \
    if (!((MKE & 8) && NV == 1)) a0_##j += x0 * yr;                                            \
    if (NV >= 2 && !((MKE & 8) && NV == 2)) a1_##j += x1 * yr;                                 \
    if (MKE & 8) h_##j += xh * yr;                                                             \
    if (NV >= 3) a2_##j += x2 * yr;                                                            \
    if (NV >= 4) a3_##j += x3 * yr;                                                            \
    if (TFE_CPLX) {                                                                            \
      TFE_R yi = yy[j * ysq + s->QP * K];                                                      \
      a0_##j -= xi0 * yi;                                                                      \
      i0_##j += x0 * yi + xi0 * yr;                                                            \
      if (NV >= 2) { a1_##j -= xi1 * yi; i1_##j += x1 * yi + xi1 * yr; }                      \
    }                                                                                          \
  }
/* Row vector i of the block into C: acc (MODE 0), alpha * acc (1), alpha * acc + beta * C (2);
 * the block's last one masked under MK & 3. MODE is a constant: the block tests beta == 0 and
 * alpha == 1 once, not once per vector (a chain step at D = 10 stores 60 vectors). */
#define TFE__PS_CV(i, acc, MODE)                                                               \
  {                                                                                            \
    V v = (acc);                                                                               \
    if (MODE >= 1) v *= alpha;                                                                 \
    if ((MKE & 3) && i == NV - 1) {                                                            \
      if (MODE == 2) v += TFE_FN(ps_mload_)(tq + i * TFE__PS_W, mk) * beta;                   \
      TFE_FN(ps_mstore_)(tq + i * TFE__PS_W, mk, v);                                          \
    } else {                                                                                   \
      if (MODE == 2) v += cv[i] * beta;                                                        \
      cv[i] = v;                                                                               \
    }                                                                                          \
  }
/* The next column of the block's output (tc_: the block's first, then one column on): walked
 * one column at a time, the empty asm keeping gcc from making every column's address an
 * induction variable of the row and column loops (12 of them kept on the stack, updated per
 * block: a 10 x 20 x 10 step ran 1.13x faster so; docs/bench-prims.md, session 26). */
#if defined(__GNUC__)
#define TFE__PS_NEXTQ(tq) TFE_R *tq = tc_; tc_ += tsq; __asm__("" : "+r"(tc_));
#else
#define TFE__PS_NEXTQ(tq) TFE_R *tq = tc_; tc_ += tsq;
#endif
/* Column j of the block straight into C (real kinds), in mode MODE of TFE__PS_CV. */
#define TFE__PS_PUTC(j, MODE)                                                                  \
  {                                                                                            \
    TFE__PS_NEXTQ(tq)                                                                          \
    Vu *cv = (Vu *)tq;                                                                         \
    if (MKE & 8) { /* (1 or 2 vectors: the half one last) */                                   \
      if (NV == 2) TFE__PS_CV(0, a0_##j, MODE)                                                 \
      H v = h_##j;                                                                             \
      if (MODE >= 1) v *= alpha;                                                               \
      if (MODE == 2) v += TFE_FN(ps_hmload_)(tq + (NV - 1) * TFE__PS_W, mk) * beta;           \
      TFE_FN(ps_hmstore_)(tq + (NV - 1) * TFE__PS_W, mk, v);                                  \
    } else {                                                                                   \
    TFE__PS_CV(0, a0_##j, MODE)                                                                \
    if (NV >= 2) TFE__PS_CV(1, a1_##j, MODE)                                                   \
    if (NV >= 3) TFE__PS_CV(2, a2_##j, MODE)                                                   \
    if (NV >= 4) TFE__PS_CV(3, a3_##j, MODE)                                                   \
    }                                                                                          \
  }
#define TFE__PS_PUTC0(j) TFE__PS_PUTC(j, 0)
#define TFE__PS_PUTC1(j) TFE__PS_PUTC(j, 1)
#define TFE__PS_PUTC2(j) TFE__PS_PUTC(j, 2)
/* Column j of the block into the tile. */
#define TFE__PS_PUTT(j)                                                                        \
  {                                                                                            \
    TFE__PS_NEXTQ(tq)                                                                          \
    *(V *)tq = a0_##j;                                                                         \
    if (NV >= 2) *(V *)(tq + TFE__PS_W) = a1_##j;                                              \
    if (MKE & 8) { /* (the half vector, the rest of the tile's vector zero) */                 \
      *(H *)(tq + (NV - 1) * TFE__PS_W) = h_##j;                                               \
      *(H *)(tq + (NV - 1) * TFE__PS_W + TFE__PS_W / 2) = hzero;                               \
    }                                                                                          \
    if (NV >= 3) *(V *)(tq + 2 * TFE__PS_W) = a2_##j;                                          \
    if (NV >= 4) *(V *)(tq + 3 * TFE__PS_W) = a3_##j;                                          \
    if (TFE_CPLX) {                                                                            \
      *(V *)(tq + s->RP * s->QP) = i0_##j;                                                     \
      if (NV >= 2) *(V *)(tq + s->RP * s->QP + TFE__PS_W) = i1_##j;                            \
    }                                                                                          \
  }
/* Row vector i of X at depth p; the block's last one by a masked load under MK & 1, by a
 * half load (ps_hload_) under MK & 2. */
#define TFE__PS_XL(i)                                                                          \
  (((MKE & 8) && i == NV - 1)   ? zero /* (xh) */                                              \
   : ((MKE & 2) && i == NV - 1) ? TFE_FN(ps_hload_)(xx + i * TFE__PS_W)                         \
   : ((MKE & 1) && i == NV - 1) ? TFE_FN(ps_mload_)(xx + i * TFE__PS_W, mk)                     \
                                : (V) * (const Vu *)(xx + i * TFE__PS_W))
/* MK & 4: the row vectors held in registers. gcc otherwise folds their loads into every FMA
 * that uses them (with 4 columns: 4 loads of each per depth, 13 loads per 12 FMAs at D = 10),
 * though the registers are there; a 3-vector block with a masked tail has none to spare (its
 * mask takes the sixteenth), so it never gets MK & 4. */
#if TFE__PS_VB == 32 && defined(__AVX__) && defined(__GNUC__)
#define TFE__PS_PIN(x) __asm__("" : "+x"(x))
#else
#define TFE__PS_PIN(x) (void)(x)
#endif
#define TFE__PS_PINS                                                                           \
  if (MKE & 4) {                                                                               \
    TFE__PS_PIN(x0);                                                                           \
    if (NV >= 2) TFE__PS_PIN(x1);                                                              \
    if (NV >= 3) TFE__PS_PIN(x2);                                                              \
    if (NV >= 4) TFE__PS_PIN(x3);                                                              \
  }
#define TFE__PS_BODY(NV, J, NC, MK)                                                            \
  { enum { MKE = MK };                                                                         \
  TFE_FN(ps_mask_) mk = TFE_FN(ps_mk_)(MKE & 3 ? mrem : 0); /* (MK & 2: its lane count alone) */\
  for (int64_t q0 = q_begin; q0 + NC <= q_end; q0 += NC)                                       \
    for (int64_t r0 = rb; r0 + NV * TFE__PS_W <= re; r0 += NV * TFE__PS_W) {                   \
      J(TFE__PS_DECL)                                                                          \
      for (int64_t p = 0; p < K; p++) {                                                        \
        const TFE_R *xx = xp + p * xsp + r0, *yy = yp + q0 * ysq + p * ysp;                    \
        V x0 = TFE__PS_XL(0), x1 = zero, x2 = zero, x3 = zero, xi0 = zero, xi1 = zero;         \
        if (NV >= 2) x1 = TFE__PS_XL(1);                                                       \
        if (NV >= 3) x2 = TFE__PS_XL(2);                                                       \
        if (NV >= 4) x3 = TFE__PS_XL(3);                                                       \
        H xh = hzero;                                                                          \
        if (MKE & 8) xh = TFE_FN(ps_hmload_)(xx + (NV - 1) * TFE__PS_W, mk);                  \
        TFE__PS_PINS                                                                           \
        if (TFE_CPLX) {                                                                        \
          xi0 = *(const V *)(xx + s->RP * K);                                                  \
          if (NV >= 2) xi1 = *(const V *)(xx + s->RP * K + TFE__PS_W);                         \
        }                                                                                      \
        J(TFE__PS_UPD)                                                                         \
      }                                                                                        \
      TFE_R *tc_ = t + q0 * tsq + r0;                                                          \
      if (!cdir) { J(TFE__PS_PUTT) }                                                           \
      else if (!bzero) { J(TFE__PS_PUTC2) }                                                    \
      else if (aone) { J(TFE__PS_PUTC0) }                                                      \
      else { J(TFE__PS_PUTC1) }                                                                \
    } }
/* Columns [q_begin, q_end) in blocks of nc (the last block of a range: its remainder); 7-12
 * only in the 1- and 2-vector blocks of 32-register builds (ps_nqw_). */
#if TFE__PS_NREG >= 32 && !TFE_CPLX
#define TFE__PS_BY_NQ_WIDE(NV, MK)                                                             \
  case 12: TFE__PS_BODY(NV, TFE__PS_J12, 12, MK) break;                                        \
  case 11: TFE__PS_BODY(NV, TFE__PS_J11, 11, MK) break;                                        \
  case 10: TFE__PS_BODY(NV, TFE__PS_J10, 10, MK) break;                                        \
  case 9: TFE__PS_BODY(NV, TFE__PS_J9, 9, MK) break;                                           \
  case 8: TFE__PS_BODY(NV, TFE__PS_J8, 8, MK) break;                                           \
  case 7: TFE__PS_BODY(NV, TFE__PS_J7, 7, MK) break;
#else
#define TFE__PS_BY_NQ_WIDE(NV, MK)
#endif
#define TFE__PS_CASES4(NV, MK)                                                                 \
  case 4: TFE__PS_BODY(NV, TFE__PS_J4, 4, MK) break;                                           \
  case 3: TFE__PS_BODY(NV, TFE__PS_J3, 3, MK) break;                                           \
  case 2: TFE__PS_BODY(NV, TFE__PS_J2, 2, MK) break;                                           \
  default: TFE__PS_BODY(NV, TFE__PS_J1, 1, MK) break;
#define TFE__PS_CASES6(NV, MK)                                                                 \
  case 6: TFE__PS_BODY(NV, TFE__PS_J6, 6, MK) break;                                           \
  case 5: TFE__PS_BODY(NV, TFE__PS_J5, 5, MK) break;                                           \
  TFE__PS_CASES4(NV, MK)
#define TFE__PS_BY_NQW(NV, MK) switch (nc) { TFE__PS_BY_NQ_WIDE(NV, MK) TFE__PS_CASES6(NV, MK) }
#define TFE__PS_BY_NQ(NV, MK) switch (nc) { TFE__PS_CASES6(NV, MK) }
/* (3 row vectors: at most 4 columns, 12 accumulators of 16 registers) */
#define TFE__PS_BY_NQ4(NV, MK) switch (nc) { TFE__PS_CASES4(NV, MK) }
/* 1 or 2 row vectors a block: the unmasked rows, then the masked block */
#define TFE__PS_BY_NV_SMALL(NVC)                                                               \
  enum { NV = NVC };                                                                           \
  if (unm) {                                                                                   \
    if (pin && !TFE_CPLX) TFE__PS_BY_NQ(NV, 4)                                                 \
    else TFE__PS_BY_NQW(NV, 0)                                                                 \
  }                                                                                            \
  if (mkl && !TFE_CPLX) {                                                                      \
    rb = rm; re = r_end;                                                                       \
    if (pin) TFE__PS_BY_NQ(NV, 5)                                                              \
    else if (hal) TFE__PS_BY_NQW(NV, 9)                                                        \
    else TFE__PS_BY_NQW(NV, 1)                                                                 \
  }
/* Rows [r_begin, r_end) (whole vectors; with mrem > 0 the last one has only its first mrem lanes)
 * with NV row vectors per block, columns in blocks of nq (the last one the remainder). X row vector of depth p at
 * xp + p * xsp; Y element (p, q) at yp + p * ysp + q * ysq (packed: xsp = RP, ysp = 1,
 * ysq = K; real kinds may point them at the operands themselves). alpha and beta: only when
 * cdir (real kinds). */
TFE_INTERNAL TFE__PS_CONTRACT void TFE_FN(ps_tile_nv_)(const TFE_FN(ps_call_) *s, const TFE_R *xp, int64_t xsp,
                                                       const TFE_R *yp, int64_t ysp, int64_t ysq, TFE_R *t,
                                                       int64_t tsq, bool cdir, bool bzero,
                                                       const TFE_FN(ps_seg_) *g, TFE_R alpha, TFE_R beta) {
  typedef TFE_FN(ps_vec_) V;
  typedef TFE_FN(ps_vecu_) Vu;
  typedef TFE_FN(ps_vech_) H;
  const V zero = {0};
  const H hzero = {0};
  int64_t r_begin = g->rb, r_end = g->re, mrem = g->mrem, nq = g->nq, qf = g->qf;
  int nv = g->nv;
  int64_t K = s->K;
  bool aone = alpha == (TFE_R)1; /* (x * 1 == x exactly: the product is skipped) */
  /* the rows without the masked block (none when the masked block is all: 9-12 rows on 4
   * lanes, 9-16 on 8), then that block */
  bool pin = TFE_FN(ps_regs_)(), mkl = mrem > 0, half = pin && 2 * mrem == TFE__PS_W;
  const bool hal = mkl && !pin && TFE_FN(ps_half_)(mrem); /* (MK & 8: 1 or 2 vectors a block) */
  int64_t rm = mkl ? r_end - nv * TFE__PS_W : r_end, rb, re;
  bool unm = rm > r_begin;
  /* whole column blocks, then the Q % NQ last columns as one block (never the pad columns:
   * Y read and C written in place need no whole blocks) */
  for (int seg = 0; seg < 2; seg++) {
    int64_t q_begin = seg ? qf : 0, q_end = seg ? s->Q : qf, nc = seg ? s->Q - qf : nq;
    if (q_end <= q_begin) continue;
    rb = r_begin; re = rm;
    if (nv == 4 && !TFE_CPLX) {
      enum { NV = 4 };
      TFE__PS_BY_NQ(NV, 0)
    } else if (nv == 3 && !TFE_CPLX) {
      enum { NV = 3 };
      if (unm) {
        if (pin) TFE__PS_BY_NQ4(NV, 4)
        else TFE__PS_BY_NQ4(NV, 0)
      }
      if (mkl) {
        rb = rm; re = r_end;
        if (half) TFE__PS_BY_NQ4(NV, 6)
        else TFE__PS_BY_NQ4(NV, 1)
      }
    } else if (nv >= 2) {
      TFE__PS_BY_NV_SMALL(2)
    } else {
      TFE__PS_BY_NV_SMALL(1)
    }
  }
}
#undef TFE__PS_BY_NV_SMALL
#undef TFE__PS_BY_NQ
#undef TFE__PS_BY_NQ4
#undef TFE__PS_BY_NQW
#undef TFE__PS_BY_NQ_WIDE
#undef TFE__PS_CASES4
#undef TFE__PS_CASES6
#undef TFE__PS_BODY
#undef TFE__PS_XL
#undef TFE__PS_PIN
#undef TFE__PS_PINS
#undef TFE__PS_PUTT
#undef TFE__PS_PUTC
#undef TFE__PS_PUTC0
#undef TFE__PS_PUTC1
#undef TFE__PS_PUTC2
#undef TFE__PS_NEXTQ
#undef TFE__PS_CV
#undef TFE__PS_UPD
#undef TFE__PS_DECL
#undef TFE__PS_J1
#undef TFE__PS_J2
#undef TFE__PS_J3
#undef TFE__PS_J4
#undef TFE__PS_J5
#undef TFE__PS_J6
#undef TFE__PS_J7
#undef TFE__PS_J8
#undef TFE__PS_J9
#undef TFE__PS_J10
#undef TFE__PS_J11
#undef TFE__PS_J12
/* The column block of the 1- and 2-vector row blocks: with 32 registers (real kinds,
 * small_wide_cols) up to 12 columns, Q split into equal blocks (20 columns: 2 x 10), so that
 * each row vector is loaded once per 12 columns rather than per 6 (24 accumulators, 2 row
 * vectors and a broadcast of 32 registers; a chain's 10 x 20 x 10 step ran 1.1x faster in
 * blocks of 10 than of 5: docs/bench-prims.md, session 26); else the plan's NQ. */
TFE_INTERNAL int64_t TFE_FN(ps_nqw_)(int64_t Q, int64_t nq) {
  if (TFE_CPLX || TFE__PS_NREG < 32 || !tfe__st.tune.small_wide_cols || Q <= nq) return nq;
  int64_t nb = (Q + 11) / 12;
  return (Q + nb - 1) / nb;
}
/* The row blocks for `rows` rows (into g, at most 3; returns how many): blocks of 4 vectors
 * (real kinds: 4 x 6 accumulators fit 32 registers; with 16, 2 x 6 do), then 2, then 1; with
 * 16 registers, an odd count of vectors ends in a block of 3 rather than a block of 2 and a
 * pass of 1 that reads all of Y again and broadcasts every element again for one vector:
 * always with 3 vectors (9-12 rows of 4 lanes, chain steps at D = 10-12), with 5 or more only
 * when the plan's column block is at most 4 (with 5 columns, 20 rows ran slower so:
 * docs/bench-prims.md, session 18). rows need not be whole vectors (real kinds): the last
 * vector is then masked (X loads, C stores; a tile takes the whole vector), never in a block
 * of 4. Made at the plan's set-up: a chain step's call starts at its blocks. */
TFE_INTERNAL int TFE_FN(ps_segs_)(const TFE_FN(ps_call_) *s, int64_t rows, TFE_FN(ps_seg_) *g) {
  int64_t w = TFE__PS_W, nvec = (rows + w - 1) / w, full = rows / w, v = 0;
  int64_t mr = rows - full * w; /* lanes of the last vector when it is partial, else 0 */
  int64_t nqw = TFE_FN(ps_nqw_)(s->Q, s->NQ);
  int n = 0;
#define TFE__PS_SEG(b, e, NV, MR, NQ) \
  { TFE_FN(ps_seg_) x_ = {(b) * w, (e) * w, MR, NQ, s->Q / (NQ) * (NQ), NV}; g[n++] = x_; }
  if (!TFE_CPLX && TFE__PS_NREG >= 32 && full >= 4) {
    v = full / 4 * 4;
    TFE__PS_SEG(0, v, 4, 0, s->NQ)
  }
  int64_t left = nvec - v;
  if (!TFE_CPLX && TFE__PS_NREG < 32 && left >= 3 && left % 2 == 1 && (s->NQ <= 4 || nvec == 3)) {
    int64_t e = nvec - 3;
    if (e > v) TFE__PS_SEG(v, e, 2, 0, s->NQ)
    TFE__PS_SEG(e, nvec, 3, mr, s->NQ < 4 ? s->NQ : 4)
    return n;
  }
  if (left >= 2) {
    int64_t e = v + left / 2 * 2;
    TFE__PS_SEG(v, e, 2, e == nvec ? mr : 0, nqw)
    v = e;
  }
  if (v < nvec) TFE__PS_SEG(v, nvec, 1, mr, nqw)
#undef TFE__PS_SEG
  return n;
}
/* The GEMM of one batch on the plan's row blocks (s->seg: its rows are R when X is read or C
 * written in place, else the padded RP). The tile is t (column q at t + q * tsq), or C itself
 * when cdir. */
TFE_INTERNAL void TFE_FN(ps_tile_)(const TFE_FN(ps_call_) *s, const TFE_R *xp, int64_t xsp, const TFE_R *yp,
                                   int64_t ysp, int64_t ysq, TFE_R *t, int64_t tsq, bool cdir, bool bzero, TFE_R alpha,
                                   TFE_R beta) {
  for (int i = 0; i < s->nseg; i++)
    TFE_FN(ps_tile_nv_)(s, xp, xsp, yp, ysp, ysq, t, tsq, cdir, bzero, &s->seg[i], alpha, beta);
}

#if !TFE_CPLX && defined(__AVX2__) && defined(__FMA__) && (defined(__x86_64__) || defined(__i386__)) && !defined(TFE__PS_NO_TN)
#define TFE__PS_HAVE_TN 1
/* C(r, q) = alpha * sum_p X(p, r) Y(p, q) (+ beta * C) with X and Y depth-contiguous (X row r
 * at x + r * xrs, Y column q at y + q * ysq) and C's rows contiguous (column q at c + q * csq):
 * the transposed-times-plain GEMM of a chain's second step (T(e,s,c) B(e,s,f) -> E'(f,c)).
 * Blocks of 4 rows x 2 columns: 8 accumulators of 4 depths each, 6 loads per 8 FMAs, summed at
 * the end into one 4-row vector per column (two hadds, two lane swaps). The last R % 4 rows:
 * 3 in a block of 4 (the last row read twice), 2 or 1 in blocks of 2 rows x 4 columns (the same
 * 8 accumulators, summed into 2-row halves), not in a block of 4 half empty (10 rows were 3
 * blocks of 4). The depth's last K % 4 elements by masked loads, the last column of an odd
 * count by repeating the one before (in bounds). C is stored in whole vectors, halves and
 * scalars, never with masked stores: a masked store cannot forward to the loads that read it
 * next (the chain's next step reads this output at once). f64 only (the 4-lane sums are AVX's);
 * no packing, no workspace. */
#define TFE__PS_TN_FMA(LD)                                                                     \
  {                                                                                            \
    __m256d u0 = LD(y0 + p), u1 = LD(y1 + p), u2, u3, v;                                       \
    if (PTN) { TFE__PS_TN_PIN(u0); TFE__PS_TN_PIN(u1); }                                        \
    if (NCB == 2) {                                                                            \
      v = LD(x0 + p); a00 = _mm256_fmadd_pd(v, u0, a00); a01 = _mm256_fmadd_pd(v, u1, a01);    \
      v = LD(x1 + p); a10 = _mm256_fmadd_pd(v, u0, a10); a11 = _mm256_fmadd_pd(v, u1, a11);    \
      v = LD(x2 + p); a20 = _mm256_fmadd_pd(v, u0, a20); a21 = _mm256_fmadd_pd(v, u1, a21);    \
      v = LD(x3 + p); a30 = _mm256_fmadd_pd(v, u0, a30); a31 = _mm256_fmadd_pd(v, u1, a31);    \
    } else { /* 2 rows (x0, x1) x 4 columns: a00 a01 a20 a21 row 0, a10 a11 a30 a31 row 1 */   \
      u2 = LD(y2 + p); u3 = LD(y3 + p);                                                        \
      if (PTN) { TFE__PS_TN_PIN(u2); TFE__PS_TN_PIN(u3); }                                      \
      v = LD(x0 + p);                                                                          \
      a00 = _mm256_fmadd_pd(v, u0, a00); a01 = _mm256_fmadd_pd(v, u1, a01);                    \
      a20 = _mm256_fmadd_pd(v, u2, a20); a21 = _mm256_fmadd_pd(v, u3, a21);                    \
      v = LD(x1 + p);                                                                          \
      a10 = _mm256_fmadd_pd(v, u0, a10); a11 = _mm256_fmadd_pd(v, u1, a11);                    \
      a30 = _mm256_fmadd_pd(v, u2, a30); a31 = _mm256_fmadd_pd(v, u3, a31);                    \
    }                                                                                          \
  }
/* PTN (small_row_regs): the column vectors u held in registers, as the vector kernel's rows
 * (TFE__PS_PIN): gcc otherwise folds their loads into every FMA, 12 loads per 8 FMAs. */
#define TFE__PS_TN_PIN(u) __asm__("" : "+x"(u))
#define TFE__PS_TN_LDU(p) _mm256_loadu_pd(p)
#define TFE__PS_TN_LDM(p) _mm256_maskload_pd(p, km)
/* nr (1..4) elements of v into C at cj (plus beta times what is there): vector, half, scalar */
TFE_INTERNAL void TFE_FN(ps_tn_put_)(double *cj, __m256d v, int64_t nr, __m256d vb, bool bzero) {
  if (nr == 4) {
    if (!bzero) v = _mm256_fmadd_pd(_mm256_loadu_pd(cj), vb, v);
    _mm256_storeu_pd(cj, v);
    return;
  }
  __m128d lo = _mm256_castpd256_pd128(v);
  if (nr >= 2) {
    if (!bzero) lo = _mm_fmadd_pd(_mm_loadu_pd(cj), _mm256_castpd256_pd128(vb), lo);
    _mm_storeu_pd(cj, lo);
    if (nr == 2) return;
    cj += 2;
    lo = _mm256_extractf128_pd(v, 1);
  }
  double e = _mm_cvtsd_f64(lo);
  if (!bzero) e += cj[0] * _mm256_cvtsd_f64(vb);
  cj[0] = e;
}
#define TFE__PS_TN_COLS(NCBV)                                                                  \
  { enum { NCB = NCBV };                                                                       \
    for (int64_t q0 = 0; q0 < Q; q0 += NCB) {                                                  \
      const double *y0 = (const double *)y + q0 * ysq, *y1 = q0 + 1 < Q ? y0 + ysq : y0;       \
      const double *y2 = q0 + 2 < Q ? y0 + 2 * ysq : y1, *y3 = q0 + 3 < Q ? y0 + 3 * ysq : y2; \
      __m256d a00 = _mm256_setzero_pd(), a10 = a00, a20 = a00, a30 = a00, a01 = a00, a11 = a00, a21 = a00, a31 = a00;\
      int64_t p = 0;                                                                           \
      for (; p < Kf; p += 4) TFE__PS_TN_FMA(TFE__PS_TN_LDU)                                    \
      if (p < K) TFE__PS_TN_FMA(TFE__PS_TN_LDM)                                                \
      double *c0 = (double *)c + r0 + q0 * csq;                                                \
      if (NCB == 2) { /* [sum a0j, sum a1j, sum a2j, sum a3j] per column j */                  \
        __m256d h0 = _mm256_hadd_pd(a00, a10), h1 = _mm256_hadd_pd(a20, a30);                  \
        __m256d s0 = _mm256_add_pd(_mm256_permute2f128_pd(h0, h1, 0x20), _mm256_permute2f128_pd(h0, h1, 0x31));\
        h0 = _mm256_hadd_pd(a01, a11); h1 = _mm256_hadd_pd(a21, a31);                          \
        __m256d s1 = _mm256_add_pd(_mm256_permute2f128_pd(h0, h1, 0x20), _mm256_permute2f128_pd(h0, h1, 0x31));\
        TFE_FN(ps_tn_put_)(c0, _mm256_mul_pd(s0, va), nr, vb, bzero);                          \
        if (q0 + 1 < Q) TFE_FN(ps_tn_put_)(c0 + csq, _mm256_mul_pd(s1, va), nr, vb, bzero);    \
      } else { /* [row 0, row 1] of columns j and j + 1 per vector: (0, 1) from a*0 / a*1, (2, 3) from a2* / a3* */\
        __m256d h0 = _mm256_hadd_pd(a00, a10), h1 = _mm256_hadd_pd(a01, a11);                  \
        __m256d s01 = _mm256_add_pd(_mm256_permute2f128_pd(h0, h1, 0x20), _mm256_permute2f128_pd(h0, h1, 0x31));\
        h0 = _mm256_hadd_pd(a20, a30); h1 = _mm256_hadd_pd(a21, a31);                          \
        __m256d s23 = _mm256_add_pd(_mm256_permute2f128_pd(h0, h1, 0x20), _mm256_permute2f128_pd(h0, h1, 0x31));\
        s01 = _mm256_mul_pd(s01, va); s23 = _mm256_mul_pd(s23, va);                            \
        TFE_FN(ps_tn_put_)(c0, s01, nr, vb, bzero);                                            \
        if (q0 + 1 < Q) TFE_FN(ps_tn_put_)(c0 + csq, _mm256_permute2f128_pd(s01, s01, 0x01), nr, vb, bzero);\
        if (q0 + 2 < Q) TFE_FN(ps_tn_put_)(c0 + 2 * csq, s23, nr, vb, bzero);                  \
        if (q0 + 3 < Q) TFE_FN(ps_tn_put_)(c0 + 3 * csq, _mm256_permute2f128_pd(s23, s23, 0x01), nr, vb, bzero);\
      }                                                                                        \
    }                                                                                          \
  }
#if defined(__AVX512F__)
/* AVX-512: the same dot products on 8-lane vectors along the depth (the 4-lane kernel reaches
 * at most half of an 8-lane FMA's rate). Blocks of 4 rows x 4 columns: 16 accumulators (of 32
 * registers), 8 loads per 16 FMAs; the last 1-2 rows in blocks of 2 rows x 8 columns (3 rows:
 * a block of 4, the last row read twice); the depth's last K % 8 elements by k-masked loads
 * (masked lanes read nothing). ps_tn_red_ sums four accumulators into one 4-lane vector. */
TFE_INTERNAL __m256d TFE_FN(ps_tn_red_)(__m512d a0, __m512d a1, __m512d a2, __m512d a3) {
  /* per 128-bit lane i: [a0 depths 2i + 2i+1, a1 the same], then [a2, a3] */
  __m512d u01 = _mm512_add_pd(_mm512_unpacklo_pd(a0, a1), _mm512_unpackhi_pd(a0, a1));
  __m512d u23 = _mm512_add_pd(_mm512_unpacklo_pd(a2, a3), _mm512_unpackhi_pd(a2, a3));
  /* [(a0, a1) depths 0-3, (a0, a1) 4-7, (a2, a3) 0-3, (a2, a3) 4-7] */
  __m512d w = _mm512_add_pd(_mm512_shuffle_f64x2(u01, u23, 0x88), _mm512_shuffle_f64x2(u01, u23, 0xdd));
  __m256d lo = _mm512_castpd512_pd256(w), hi = _mm512_extractf64x4_pd(w, 1);
  return _mm256_add_pd(_mm256_permute2f128_pd(lo, hi, 0x20), _mm256_permute2f128_pd(lo, hi, 0x31));
}
/* One row block over all columns: 4 rows (x0..x3) in blocks of 4 columns, or 2 rows (x0, x1) in
 * blocks of 8; accumulator a<r><j>: row r, column j of the block. */
#define TFE__PS_TN8_ARGS                                                                       \
  const double *x0, const double *x1, const double *x2, const double *x3, const TFE_R *y, int64_t ysq, double *c0, \
  int64_t csq, int64_t nr, int64_t Q, int64_t K, __mmask8 km, __m256d va, __m256d vb, bool bzero
#define TFE__PS_TN8_Y(j) const double *yq##j = q0 + j < Q ? y0 + j * ysq : y0 + (Q - 1 - q0) * ysq;
#define TFE__PS_TN8_PUT(j, v)                                                                  \
  if (q0 + (j) < Q) TFE_FN(ps_tn_put_)(cq + (j) * csq, _mm256_mul_pd(v, va), nr, vb, bzero);
#define TFE__PS_TN8_PUT2(j, v) /* v: rows 0-1 of columns j and j + 1 */                       \
  { __m256d w_ = v; TFE__PS_TN8_PUT(j, w_) TFE__PS_TN8_PUT(j + 1, _mm256_permute2f128_pd(w_, w_, 0x01)) }
#define TFE__PS_TN8_LDU(q) _mm512_loadu_pd(q)
#define TFE__PS_TN8_LDM(q) _mm512_maskz_loadu_pd(km, q)
#define TFE__PS_TN8_X4(L) __m512d v0 = L(x0 + p), v1 = L(x1 + p), v2 = L(x2 + p), v3 = L(x3 + p);
#define TFE__PS_TN8_X2(L) __m512d v0 = L(x0 + p), v1 = L(x1 + p);
#define TFE__PS_TN8_D4(j) __m512d a0##j = _mm512_setzero_pd(), a1##j = a0##j, a2##j = a0##j, a3##j = a0##j;
#define TFE__PS_TN8_U4_(j, L)                                                                  \
  { __m512d u = L(yq##j + p);                                                                  \
    a0##j = _mm512_fmadd_pd(v0, u, a0##j); a1##j = _mm512_fmadd_pd(v1, u, a1##j);             \
    a2##j = _mm512_fmadd_pd(v2, u, a2##j); a3##j = _mm512_fmadd_pd(v3, u, a3##j); }
#define TFE__PS_TN8_U4U(j) TFE__PS_TN8_U4_(j, TFE__PS_TN8_LDU)
#define TFE__PS_TN8_U4M(j) TFE__PS_TN8_U4_(j, TFE__PS_TN8_LDM)
#define TFE__PS_TN8_D2(j) __m512d a0##j = _mm512_setzero_pd(), a1##j = a0##j;
#define TFE__PS_TN8_U2_(j, L)                                                                  \
  { __m512d u = L(yq##j + p);                                                                  \
    a0##j = _mm512_fmadd_pd(v0, u, a0##j); a1##j = _mm512_fmadd_pd(v1, u, a1##j); }
#define TFE__PS_TN8_U2U(j) TFE__PS_TN8_U2_(j, TFE__PS_TN8_LDU)
#define TFE__PS_TN8_U2M(j) TFE__PS_TN8_U2_(j, TFE__PS_TN8_LDM)
#define TFE__PS_TN8_J4(M) M(0) M(1) M(2) M(3)
#define TFE__PS_TN8_J8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
/* 4 rows: column j's four accumulators summed into its 4-row vector */
#define TFE__PS_TN8_PUTS4                                                                      \
  TFE__PS_TN8_PUT(0, TFE_FN(ps_tn_red_)(a00, a10, a20, a30))                                   \
  TFE__PS_TN8_PUT(1, TFE_FN(ps_tn_red_)(a01, a11, a21, a31))                                   \
  TFE__PS_TN8_PUT(2, TFE_FN(ps_tn_red_)(a02, a12, a22, a32))                                   \
  TFE__PS_TN8_PUT(3, TFE_FN(ps_tn_red_)(a03, a13, a23, a33))
/* 2 rows: columns j and j + 1 in one vector */
#define TFE__PS_TN8_PUTS2                                                                      \
  TFE__PS_TN8_PUT2(0, TFE_FN(ps_tn_red_)(a00, a10, a01, a11))                                  \
  TFE__PS_TN8_PUT2(2, TFE_FN(ps_tn_red_)(a02, a12, a03, a13))                                  \
  TFE__PS_TN8_PUT2(4, TFE_FN(ps_tn_red_)(a04, a14, a05, a15))                                  \
  TFE__PS_TN8_PUT2(6, TFE_FN(ps_tn_red_)(a06, a16, a07, a17))
/* The row block's function: NCB columns per block (J: their list), accumulators D, row
 * vectors X, updates UU / UM (plain / k-masked loads), stores PUTS. */
#define TFE__PS_TN8_ROWS(NAME, NCB, J, D, X, UU, UM, PUTS)                                     \
  TFE_INTERNAL TFE__PS_CONTRACT void TFE_FN(NAME)(TFE__PS_TN8_ARGS) {                          \
    int64_t Kf = K / 8 * 8;                                                                    \
    (void)x2; (void)x3;                                                                        \
    for (int64_t q0 = 0; q0 < Q; q0 += NCB) {                                                  \
      const double *y0 = (const double *)y + q0 * ysq;                                         \
      J(TFE__PS_TN8_Y)                                                                         \
      J(D)                                                                                     \
      int64_t p = 0;                                                                           \
      for (; p < Kf; p += 8) { X(TFE__PS_TN8_LDU) J(UU) }                                      \
      if (p < K) { X(TFE__PS_TN8_LDM) J(UM) }                                                  \
      double *cq = c0 + q0 * csq;                                                              \
      PUTS                                                                                     \
    }                                                                                          \
  }
TFE__PS_TN8_ROWS(ps_tn8_rows4_, 4, TFE__PS_TN8_J4, TFE__PS_TN8_D4, TFE__PS_TN8_X4, TFE__PS_TN8_U4U, TFE__PS_TN8_U4M,
                 TFE__PS_TN8_PUTS4)
TFE__PS_TN8_ROWS(ps_tn8_rows2_, 8, TFE__PS_TN8_J8, TFE__PS_TN8_D2, TFE__PS_TN8_X2, TFE__PS_TN8_U2U, TFE__PS_TN8_U2M,
                 TFE__PS_TN8_PUTS2)
#undef TFE__PS_TN8_ARGS
#undef TFE__PS_TN8_Y
#undef TFE__PS_TN8_PUT
#undef TFE__PS_TN8_PUT2
#undef TFE__PS_TN8_LDU
#undef TFE__PS_TN8_LDM
#undef TFE__PS_TN8_X4
#undef TFE__PS_TN8_X2
#undef TFE__PS_TN8_D4
#undef TFE__PS_TN8_U4_
#undef TFE__PS_TN8_U4U
#undef TFE__PS_TN8_U4M
#undef TFE__PS_TN8_D2
#undef TFE__PS_TN8_U2_
#undef TFE__PS_TN8_U2U
#undef TFE__PS_TN8_U2M
#undef TFE__PS_TN8_J4
#undef TFE__PS_TN8_J8
#undef TFE__PS_TN8_PUTS4
#undef TFE__PS_TN8_PUTS2
#undef TFE__PS_TN8_ROWS
#endif
TFE_INTERNAL TFE__PS_CONTRACT void TFE_FN(ps_tn_)(const TFE_R *x, int64_t xrs, const TFE_R *y, int64_t ysq, TFE_R *c,
                                                  int64_t csq, int64_t R, int64_t Q, int64_t K, TFE_R alpha,
                                                  TFE_R beta, bool bzero) {
  static const int64_t mt[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
  int64_t Kf = K & ~(int64_t)3;
  __m256i km = _mm256_loadu_si256((const __m256i *)(const void *)(mt + 4 - (K - Kf)));
  __m256d va = _mm256_set1_pd((double)alpha), vb = _mm256_set1_pd((double)beta);
#if defined(__AVX512F__)
  if (K >= 8) { /* 8-lane vectors along the depth */
    __mmask8 k8 = (__mmask8)((1u << (K % 8)) - 1u);
    for (int64_t r0 = 0; r0 < R; r0 += 4) {
      int64_t nr = R - r0 < 4 ? R - r0 : 4;
      const double *x0 = (const double *)x + r0 * xrs;
      const double *x1 = nr > 1 ? x0 + xrs : x0, *x2 = nr > 2 ? x0 + 2 * xrs : x1, *x3 = nr > 3 ? x0 + 3 * xrs : x2;
      if (nr >= 3) TFE_FN(ps_tn8_rows4_)(x0, x1, x2, x3, y, ysq, (double *)c + r0, csq, nr, Q, K, k8, va, vb, bzero);
      else TFE_FN(ps_tn8_rows2_)(x0, x1, x2, x3, y, ysq, (double *)c + r0, csq, nr, Q, K, k8, va, vb, bzero);
    }
    return;
  }
#endif
  /* whole blocks of 4 rows x 2 columns, nr a constant there (the stores whole vectors, no
   * branches on the row count); then 3 rows left: one more such block, its last row repeated;
   * 1-2 rows: blocks of 2 rows x 4 columns */
#define TFE__PS_TN_ALL(PTNV)                                                                   \
  { enum { PTN = PTNV };                                                                       \
    int64_t R4 = R & ~(int64_t)3, r0 = 0;                                                      \
    for (; r0 < R4; r0 += 4) {                                                                 \
      const int64_t nr = 4;                                                                    \
      const double *x0 = (const double *)x + r0 * xrs, *x1 = x0 + xrs, *x2 = x1 + xrs, *x3 = x2 + xrs;\
      TFE__PS_TN_COLS(2)                                                                       \
    }                                                                                          \
    if (r0 < R) {                                                                              \
      int64_t nr = R - r0;                                                                     \
      const double *x0 = (const double *)x + r0 * xrs;                                         \
      const double *x1 = nr > 1 ? x0 + xrs : x0, *x2 = nr > 2 ? x0 + 2 * xrs : x1, *x3 = x2;   \
      if (nr == 3) TFE__PS_TN_COLS(2) else TFE__PS_TN_COLS(4)                                  \
    }                                                                                          \
  }
  if (tfe__st.tune.small_row_regs) TFE__PS_TN_ALL(1)
  else TFE__PS_TN_ALL(0)
}
#undef TFE__PS_TN_ALL
#undef TFE__PS_TN_PIN
#undef TFE__PS_TN_FMA
#undef TFE__PS_TN_COLS
#undef TFE__PS_TN_LDU
#undef TFE__PS_TN_LDM
/* One GEMM of a tn plan (s: its set-up): x, y, c its operands as the plan saw them. tnp: the
 * transposed input packed into a stack buffer (ps_pack_xt_), then the vector kernel with the
 * other input read and C written in place; else the dot kernel. */
TFE_INTERNAL void TFE_FN(ps_tn_one_)(const TFE_FN(ps_call_) *s, const TFE_R *x, const TFE_R *y, TFE_R *c, TFE_R alpha,
                                     TFE_R beta, bool bzero) {
  if (s->tnp) {
    _Alignas(64) TFE_R buf[TFE__PS_TNP_MAX];
    TFE_FN(ps_pack_xt_)(s->tn == 1 ? x : y, s->xrs, s->R, s->K, buf, s->RP);
    TFE_FN(ps_tile_)(s, buf, s->RP, s->tn == 1 ? y : x, 1, s->ysq, c, s->csq, true, bzero, alpha, beta);
    return;
  }
  TFE_FN(ps_tn_)(s->tn == 1 ? x : y, s->xrs, s->tn == 1 ? y : x, s->ysq, c, s->csq, s->tn == 1 ? s->R : s->Q,
                 s->tn == 1 ? s->Q : s->R, s->K, alpha, beta, bzero);
}
#else
#define TFE__PS_HAVE_TN 0
#endif

/* C := alpha * T_u (+ beta * C) for the tiles u < run of consecutive batches: element (r, q)
 * of tile u at c + cr[r] + cq[q] + u * cs (cs: C's stride of the first batch label). */
TFE_INTERNAL void TFE_FN(ps_store_)(const TFE_FN(ps_call_) *s, const TFE_R *t, int64_t run, int64_t cs, TFE_T *c,
                                    bool bzero) {
  int64_t ts = TFE__PS_PL * s->RP * s->QP; /* reals per tile */
#if TFE_CPLX
  const TFE_R *al = (const TFE_R *)&s->alpha, *be = (const TFE_R *)&s->beta; /* C11: {re, im} */
  TFE_R ar = al[0], ai = al[1], br = be[0], bi = be[1];
  for (int64_t q = 0; q < s->Q; q++)
    for (int64_t r = 0; r < s->R; r++) {
      const TFE_R *tr = t + q * s->RP + r, *ti = tr + s->RP * s->QP;
      TFE_R *e = (TFE_R *)(c + s->cr[r] + s->cq[q]);
      for (int64_t u = 0; u < run; u++, e += 2 * cs) {
        TFE_R xr = tr[u * ts], xi = ti[u * ts];
        TFE_R vr = ar * xr - ai * xi, vi = ar * xi + ai * xr;
        if (!bzero) {
          TFE_R er = e[0], ei = e[1];
          vr += br * er - bi * ei;
          vi += br * ei + bi * er;
        }
        e[0] = vr;
        e[1] = vi;
      }
    }
#else
  TFE_R alpha = s->alpha, beta = s->beta;
  for (int64_t q = 0; q < s->Q; q++)
    for (int64_t r = 0; r < s->R; r++) {
      const TFE_R *tr = t + q * s->RP + r;
      TFE_T *e = c + s->cr[r] + s->cq[q];
      if (bzero) {
        for (int64_t u = 0; u < run; u++) e[u * cs] = alpha * tr[u * ts];
      } else {
        for (int64_t u = 0; u < run; u++) e[u * cs] = alpha * tr[u * ts] + beta * e[u * cs];
      }
    }
#endif
}
#define TFE__PS_PD 4

/* Odometer: batch index digits idx and offsets o[3] of batch number b. */
TFE_INTERNAL void TFE_FN(ps_seek_)(const TFE_FN(ps_call_) *s, int64_t b, int64_t *idx, int64_t *o) {
  o[0] = o[1] = o[2] = 0;
  for (int q = 0; q < s->nb; q++) {
    idx[q] = b % s->bd[q];
    b /= s->bd[q];
    o[0] += idx[q] * s->bx[q]; o[1] += idx[q] * s->by[q]; o[2] += idx[q] * s->bc[q];
  }
}
TFE_INTERNAL void TFE_FN(ps_step_)(const TFE_FN(ps_call_) *s, int64_t *idx, int64_t *o) {
  for (int q = 0; q < s->nb; q++) {
    o[0] += s->bx[q]; o[1] += s->by[q]; o[2] += s->bc[q];
    if (++idx[q] < s->bd[q]) return;
    o[0] -= s->bx[q] * s->bd[q]; o[1] -= s->by[q] * s->bd[q]; o[2] -= s->bc[q] * s->bd[q];
    idx[q] = 0;
  }
}
/* Prefetches the cache lines of elements [lo, hi] after base. */
TFE_INTERNAL void TFE_FN(ps_prefetch_)(const TFE_T *base, int64_t lo, int64_t hi) {
  const char *p = (const char *)(base + lo), *e = (const char *)(base + hi);
  for (; p <= e; p += 64) __builtin_prefetch(p, 0, 3);
  __builtin_prefetch(e, 0, 3);
}


/* Batches [b0, b1) on one thread; buf holds ps_buf_elems_ real elements (unused by nobuf
 * plans). */
TFE_INTERNAL void TFE_FN(ps_range_)(const TFE_FN(ps_call_) *s, int64_t b0, int64_t b1, TFE_R *buf) {
  TFE_R *xp = (TFE_R *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
  TFE_R *yp = xp + TFE__PS_PL * s->RP * s->K, *t = yp + TFE__PS_PL * TFE_FN(ps_ylen_)(s->QP, s->K);
  /* the pads (rows of X past R, columns of Y past Q) stay zero: their tile rows and columns
   * are never stored, but zeros keep stray NaNs and denormals out of the accumulators; only
   * the pads are cleared (the whole buffers were as many bytes as a 32^3 step reads) */
  if (!s->xdir && !s->tn)
    for (int pl = 0; pl < TFE__PS_PL && s->RP > s->R; pl++)
      for (int64_t p = 0; p < s->K; p++)
        for (int64_t r = s->R; r < s->RP; r++) xp[pl * s->RP * s->K + p * s->RP + r] = 0;
  if (!s->ydir && !s->tn)
    for (int pl = 0; pl < TFE__PS_PL && s->QP > s->Q; pl++) /* plane pl at pl * QP * K */
      memset(yp + pl * s->QP * s->K + s->Q * s->K, 0, sizeof(TFE_R) * (size_t)((s->QP - s->Q) * s->K));
  int64_t idx[TFE__PR_MAXL], o[3], ida[TFE__PR_MAXL], oa[3];
  TFE_FN(ps_seek_)(s, b0, idx, o); /* the only divisions: where this range starts */
  TFE_FN(ps_seek_)(s, b0 + TFE__PS_PD < b1 ? b0 + TFE__PS_PD : b0, ida, oa);
  bool bzero = TFE_FN(pr_is_zero_)(s->beta);
  int64_t U = TFE_FN(ps_run_len_)(s->RP, s->QP), ts = TFE__PS_PL * s->RP * s->QP;
  int64_t d0 = s->nb ? s->bd[0] : 1, cs = s->nb ? s->bc[0] : 0;
  TFE_R alpha = 1, beta = 0; /* (C in place: real kinds) */
#if !TFE_CPLX
  alpha = s->alpha;
  beta = s->beta;
#endif
  if (cs < -8 || cs > 8 || s->cdir || s->tn) U = 1; /* runs only help where consecutive batches share C's lines */
  for (int64_t bi = b0; bi < b1;) {
    /* a run: consecutive batches along the first batch label, stored together */
    int64_t run = s->nb ? d0 - idx[0] : 1;
    run = run < U ? run : U;
    run = run < b1 - bi ? run : b1 - bi;
    int64_t oc = o[2];
    for (int64_t u = 0; u < run; u++, bi++) {
      if (s->pf && bi + TFE__PS_PD < b1) {
        TFE_FN(ps_prefetch_)(s->x + oa[0], s->xlo, s->xhi);
        TFE_FN(ps_prefetch_)(s->y + oa[1], s->ylo, s->yhi);
        TFE_FN(ps_step_)(s, ida, oa);
      }
#if TFE__PS_HAVE_TN
      if (s->tn) {
        TFE_FN(ps_tn_one_)(s, (const TFE_R *)(s->x + o[0]), (const TFE_R *)(s->y + o[1]), (TFE_R *)(s->c + o[2]), alpha, beta, bzero);
        TFE_FN(ps_step_)(s, idx, o);
        continue;
      }
#endif
      const TFE_R *xa = xp, *ya = yp;
      int64_t xsp = s->RP, ysp = 1, ysq = s->K;
      if (s->ydir) { ya = (const TFE_R *)(s->y + o[1]); ysp = s->ysp; ysq = s->ysq; } else TFE_FN(ps_pack_y_)(s, s->y + o[1], yp);
      if (s->xdir) { xa = (const TFE_R *)(s->x + o[0]); xsp = s->xs; } else TFE_FN(ps_pack_x_)(s, s->x + o[0], xp);
      /* rows: R when X is read or C written in place (the last vector masked), else the padded
       * rows of the packed X into the tile */
      if (s->cdir)
        TFE_FN(ps_tile_)(s, xa, xsp, ya, ysp, ysq, (TFE_R *)(s->c + o[2]), s->csq, true, bzero, alpha, beta);
      else
        TFE_FN(ps_tile_)(s, xa, xsp, ya, ysp, ysq, t + u * ts, s->RP, false, bzero, alpha, beta);
      TFE_FN(ps_step_)(s, idx, o);
    }
    if (!s->cdir && !s->tn) TFE_FN(ps_store_)(s, t, run, cs, s->c + oc, bzero);
  }
}

/* The element range [lo, hi] that r[0..nr) + p[0..np) spans. */
TFE_INTERNAL void TFE_FN(ps_span_)(const int64_t *r, int64_t nr, const int64_t *p, int64_t np, int64_t *lo, int64_t *hi) {
  int64_t a = r[0], b = r[0], c = p[0], d = p[0];
  for (int64_t i = 1; i < nr; i++) { a = r[i] < a ? r[i] : a; b = r[i] > b ? r[i] : b; }
  for (int64_t i = 1; i < np; i++) { c = p[i] < c ? p[i] : c; d = p[i] > d ? p[i] : d; }
  *lo = a + c;
  *hi = b + d;
}

/* Offsets of the labels g[0..n) in operand op (odometer order, first label fastest). */
TFE_INTERNAL void TFE_FN(ps_table_)(const tfe_contract_plan *P, const int16_t *g, int n, int op, int64_t *tab) {
  int64_t cnt = 1;
  tab[0] = 0;
  for (int i = 0; i < n; i++) {
    const tfe__pr_plab *l = &P->lab[g[i]];
    for (int64_t v = 1; v < l->dim; v++)
      for (int64_t e = 0; e < cnt; e++) tab[v * cnt + e] = tab[e] + v * l->sf[op];
    cnt *= l->dim;
  }
}

/* The column block: Q itself up to the largest block (6 real, 4 complex, 2 complex with 16
 * registers: the accumulators must fit the registers), else the block that pads Q least, the larger one on ties (12 -> 6,
 * 9 -> 3, 81 -> 3, 64 -> 4). */
TFE_INTERNAL int64_t TFE_FN(ps_nq_)(int64_t Q) {
  /* (16 registers: 2 row vectors x 6 columns real, x 2 complex) */
  int64_t top = TFE_CPLX ? (TFE__PS_NREG >= 32 ? 4 : 2) : 6;
  if (Q <= top) return Q < 1 ? 1 : Q;
  int64_t best = top, bq = (Q + top - 1) / top * top;
  for (int64_t nq = top - 1; nq >= 3; nq--) { /* (top 2: Q in blocks of 2) */
    int64_t qp = (Q + nq - 1) / nq * nq;
    if (qp < bq) { best = nq; bq = qp; }
  }
  return best;
}

/* Whether tab[i] == i * tab[1] for all i < n (an affine table); *step gets tab[1]. */
TFE_INTERNAL bool TFE_FN(ps_affine_)(const int64_t *tab, int64_t n, int64_t *step) {
  *step = n > 1 ? tab[1] : 0;
  for (int64_t i = 0; i < n; i++)
    if (tab[i] != i * *step) return false;
  return true;
}
/* The deepest GEMM of two depth-contiguous f64 inputs that runs the dot kernel (ps_tn_);
 * deeper ones pack the transposed input (ps_pack_xt_) for the vector kernel. With 16 registers
 * and the row vectors held in registers (ps_regs_), depth 32 (a chain's T.B at D = 16) ran 10%
 * faster packed in the chain, depths 20-28 slower (docs/bench-prims.md, session 21); not
 * measured with 32 registers, which keep 32. */
TFE_INTERNAL int64_t TFE_FN(ps_dot_depth_)(void) {
  int64_t d = tfe__st.tune.small_dot_depth;
  return d >= 0 ? d : TFE__PS_NREG < 32 && TFE_FN(ps_regs_)() ? 31 : 32;
}
/* Whether a GEMM with both inputs depth-contiguous packs the transposed one (rows of C's
 * contiguous dimension, cols the other, depth K) by 8 x 8 register transposes into a stack
 * buffer for the vector kernel (ps_tn_one_): AVX-512 with at least small_tn_pack_rows rows,
 * the buffer at most TFE__PS_TNP_MAX reals. f32 has no dot kernel: packed wherever it fits
 * (else into the workspace, per batch). For f64 the choice is against the dot kernel. The dot
 * kernel's horizontal sums (nine shuffles per four dot products) share the port of half the
 * FMAs there; the packing costs a pass over the transposed input, repaid from 6 columns at
 * depths up to 24, at depths 25-32 (whole 8-lane dot vectors) only from 160 rows x columns
 * (a 10 x 10 x 20 chain step 0.75 of the dot kernel's time, 4 x 10 x 20 1.18, 10 x 10 x 32
 * 1.06: docs/bench-prims.md, session 26); deeper ones have no dot kernel. */
TFE_INTERNAL bool TFE_FN(ps_tnp_ok_)(int64_t rows, int64_t cols, int64_t K) {
#if TFE__PS_VB == 64 && defined(__AVX512F__) && defined(__AVX512VL__)
  int64_t min = tfe__st.tune.small_tn_pack_rows;
  if (min <= 0 || rows < min || (rows + TFE__PS_W - 1) / TFE__PS_W * TFE__PS_W * K > TFE__PS_TNP_MAX) return false;
  if (sizeof(TFE_R) == 4) return true; /* (f32: no dot kernel; the other way packs into the workspace) */
  return K > TFE_FN(ps_dot_depth_)() || (cols >= 6 && (K <= 24 || rows * cols >= 160));
#else
  (void)rows; (void)cols; (void)K;
  return false;
#endif
}
/* Real kinds read X, Y and write C in place when their tables are affine: no packing, no
 * tile (bij,bjk->bik with 64^3 GEMMs). Any column count (the last column block is the
 * remainder), any row count (the last row vector masked). With both inputs depth-contiguous
 * and C in place, f64 on AVX2 takes the dot-product kernel (ps_tn_) instead of packing the
 * transposed one. */
TFE_INTERNAL void TFE_FN(ps_direct_)(TFE_FN(ps_call_) *s) {
  s->xdir = s->ydir = s->cdir = false;
  s->tn = 0;
  s->tnp = false;
  s->mrem = 0;
  int64_t unit, u2;
  if (TFE_CPLX) return;
  s->mrem = s->R % TFE__PS_W;
  /* Y is read as scalars: in place whenever its tables are affine */
  bool ys = TFE_FN(ps_affine_)(s->yp, s->K, &s->ysp) && TFE_FN(ps_affine_)(s->yq, s->Q, &s->ysq);
  s->ydir = ys;
  /* X in place only when its depth stride is not a multiple of 256 bytes: with such strides
   * (64^3 column-major f64: 512 bytes) the row vectors of successive p fall into a few L1 sets
   * and conflict; packing them contiguously is faster (docs/bench-prims.md) */
  s->xdir = s->xunit && TFE_FN(ps_affine_)(s->xp, s->K, &s->xs) && (s->xs * (int64_t)sizeof(TFE_R)) % 256 != 0;
  bool cr = TFE_FN(ps_affine_)(s->cr, s->R, &unit), cq = TFE_FN(ps_affine_)(s->cq, s->Q, &u2);
  s->cdir = cr && unit == 1 && cq;
  if (s->cdir) s->csq = u2;
#if TFE__PS_HAVE_TN
  /* both inputs depth-contiguous (neither is read in place by the vector kernel then) */
  int64_t xrs, ysq, xps, yps;
  if (!s->xdir && s->K >= 4 && TFE_FN(ps_affine_)(s->xp, s->K, &xps) && xps == 1 &&
      TFE_FN(ps_affine_)(s->yp, s->K, &yps) && yps == 1 && TFE_FN(ps_affine_)(s->xr, s->R, &xrs) &&
      TFE_FN(ps_affine_)(s->yq, s->Q, &ysq) && cr && cq) {
    int tn = unit == 1 ? 1 : u2 == 1 ? 2 : 0;
    s->tnp = tn && TFE_FN(ps_tnp_ok_)(tn == 1 ? s->R : s->Q, tn == 1 ? s->Q : s->R, s->K);
    if (tn && (s->tnp || (sizeof(TFE_R) == 8 && s->K <= TFE_FN(ps_dot_depth_)()))) {
      s->tn = tn;
      s->csq = tn == 1 ? u2 : unit;
      s->xrs = tn == 1 ? xrs : ysq; s->ysq = tn == 1 ? ysq : xrs; s->ydir = false; s->cdir = false;
    }
    if (s->tnp) { /* the kernel's rows: C's contiguous dimension (tn 2: Y's columns) */
      if (tn == 2) { int64_t r = s->R; s->R = s->Q; s->Q = r; }
      s->RP = (s->R + TFE__PS_W - 1) / TFE__PS_W * TFE__PS_W;
      s->NQ = TFE_FN(ps_nq_)(s->Q);
      s->QP = (s->Q + s->NQ - 1) / s->NQ * s->NQ;
      s->mrem = s->R % TFE__PS_W;
      s->ysp = 1; s->ydir = true; s->cdir = true;
    }
  }
#endif
  s->nobuf = s->tn || (s->xdir && s->ydir && s->cdir);
}

/* Whether a call of P (set-up h) runs without buffers: nothing to pack, and batches that
 * need no prefetching (few, or not compact). */
TFE_INTERNAL bool TFE_FN(ps_nobuf_)(const tfe_contract_plan *P, const TFE_FN(ps_call_) *h) {
  (void)P; /* (decided at the set-up: ps_prep_) */
  return h->nbrun;
}

/* Table elements (int64) and per-thread real elements the small path of P needs. */
TFE_INTERNAL void TFE_FN(ps_sizes_)(const tfe_contract_plan *P, int64_t *tab, int64_t *per) {
  int64_t R = P->small_swap ? P->n : P->m, Q = P->small_swap ? P->m : P->n;
  int64_t RP = (R + TFE__PS_W - 1) / TFE__PS_W * TFE__PS_W, nq = TFE_FN(ps_nq_)(Q);
  *tab = 2 * (P->m + P->n + P->k);
  *per = TFE_FN(ps_buf_elems_)(RP, (Q + nq - 1) / nq * nq, P->k);
}
TFE_INTERNAL const TFE_FN(ps_call_) *TFE_FN(ps_prep_get_)(const tfe_contract_plan *P);
/* TFE_T elements of workspace the small path needs with `threads` threads: none when the
 * plan's kept set-up says it packs nothing (ps_nobuf_). */
TFE_INTERNAL int64_t TFE_FN(ps_ws_elems_)(const tfe_contract_plan *P, int threads) {
  const TFE_FN(ps_call_) *h = TFE_FN(ps_prep_get_)(P);
  if (h && TFE_FN(ps_nobuf_)(P, h)) return 0;
  int64_t tab, per;
  TFE_FN(ps_sizes_)(P, &tab, &per);
  int64_t bytes = tab * 8 + (int64_t)threads * (per * (int64_t)sizeof(TFE_R) + 64) + 64;
  return bytes / (int64_t)sizeof(TFE_T) + 1;
}

/* The per-plan part of a call (everything but the data pointers, alpha, beta and the
 * conjugations) into *s, its offset tables into tab (2 (m + n + k) elements). */
TFE_INTERNAL void TFE_FN(ps_prep_)(const tfe_contract_plan *P, TFE_FN(ps_call_) *s_, int64_t *tab) {
  int64_t m = P->m, n = P->n, k = P->k;
  const int16_t *gm = P->gl, *gn = gm + P->ng[0], *gk = gn + P->ng[1];
  int64_t *am = tab, *ak = am + m, *bk = ak + k, *bn = bk + k, *cm = bn + n, *cn = cm + m;
  TFE_FN(ps_table_)(P, gm, P->ng[0], 0, am);
  TFE_FN(ps_table_)(P, gk, P->ng[2], 0, ak);
  TFE_FN(ps_table_)(P, gk, P->ng[2], 1, bk);
  TFE_FN(ps_table_)(P, gn, P->ng[1], 1, bn);
  TFE_FN(ps_table_)(P, gm, P->ng[0], 2, cm);
  TFE_FN(ps_table_)(P, gn, P->ng[1], 2, cn);
  TFE_FN(ps_call_) s;
  memset(&s, 0, sizeof s);
  bool sw = P->small_swap; /* C^T = B^T A^T: B's columns become the vectorized rows */
  s.R = sw ? n : m; s.Q = sw ? m : n; s.K = k;
  s.RP = (s.R + TFE__PS_W - 1) / TFE__PS_W * TFE__PS_W;
  s.NQ = TFE_FN(ps_nq_)(s.Q);
  s.QP = (s.Q + s.NQ - 1) / s.NQ * s.NQ;
  s.xr = sw ? bn : am; s.xp = sw ? bk : ak; s.yp = sw ? ak : bk; s.yq = sw ? am : bn;
  s.cr = sw ? cn : cm; s.cq = sw ? cm : cn;
  s.x = s.y = NULL; s.c = NULL; s.cx = s.cy = false;
  s.xunit = true;
  for (int64_t r = 0; r < s.R; r++) s.xunit = s.xunit && s.xr[r] == r;
  int64_t ustep;
  s.xtr = !TFE_CPLX && !s.xunit && s.K > 1 && TFE_FN(ps_affine_)(s.xp, s.K, &ustep) && ustep == 1 &&
          TFE_FN(ps_affine_)(s.xr, s.R, &s.xrs);
  TFE_FN(ps_span_)(s.xr, s.R, s.xp, s.K, &s.xlo, &s.xhi);
  TFE_FN(ps_span_)(s.yq, s.Q, s.yp, s.K, &s.ylo, &s.yhi);
  /* prefetch only blocks that are dense enough: at most twice their elements, 16 KiB */
  int64_t lim = 16384 / (int64_t)sizeof(TFE_T);
  s.pf = s.xhi - s.xlo < 2 * s.R * s.K && s.xhi - s.xlo < lim && s.yhi - s.ylo < 2 * s.Q * s.K && s.yhi - s.ylo < lim;
  TFE_FN(ps_direct_)(&s);
  s.nbrun = s.nobuf && (!s.pf || P->nbatch <= TFE__PS_PD);
  s.nbk = s.tnp ? 3 : s.tn ? 2 : s.mrem ? 1 : 0;
  s.nseg = TFE_FN(ps_segs_)(&s, s.xdir || s.cdir ? s.R : s.RP, s.seg);
  for (int g = 0; g < s.nseg && !TFE_CPLX; g++) /* (the kernel's rule for MK & 8: ps_tile_nv_) */
    if (s.seg[g].mrem && s.seg[g].nv <= 2 && !TFE_FN(ps_regs_)() && TFE_FN(ps_half_)(s.seg[g].mrem)) {
      tfe__count(&tfe__st.prims.small_half);
      break;
    }
  s.held = s.nbrun && !P->unary && !P->red[0] && !P->red[1] && !P->copy[0] && !P->copy[1] && !P->copy[2] &&
           !P->c_embed && P->ws[TFE__PR_WS_N] == 0;
  s.nb = 0;
  for (int q = 0; q < P->nb; q++) { /* fuse labels whose strides continue in all three operands */
    const tfe__pr_plab *l = &P->lab[P->bl[q]];
    int64_t x = l->sf[sw ? 1 : 0], y = l->sf[sw ? 0 : 1], z = l->sf[2];
    int j = s.nb - 1;
    if (j >= 0 && x == s.bx[j] * s.bd[j] && y == s.by[j] * s.bd[j] && z == s.bc[j] * s.bd[j]) {
      s.bd[j] *= l->dim;
      continue;
    }
    s.bd[++j] = l->dim;
    s.bx[j] = x; s.by[j] = y; s.bc[j] = z;
    s.nb = j + 1;
  }
  /* the batch arrays (TFE__PR_MAXL each) are copied only up to nb */
  memcpy(s_, &s, offsetof(TFE_FN(ps_call_), bd));
  s_->alpha = TFE_FN(sr_zero)(); s_->beta = TFE_FN(sr_zero)();
  for (int q = 0; q < s.nb; q++) { s_->bd[q] = s.bd[q]; s_->bx[q] = s.bx[q]; s_->by[q] = s.by[q]; s_->bc[q] = s.bc[q]; }
}
/* The plan's set-up: made at its first run and kept in the plan (P->small_prep, one
 * allocation: the call, then its tables), so that a step run again (the steps of a chain, a
 * plan from the cache) builds no tables and repeats no checks; the set-up of a 10 x 20 x 10
 * step took as long as its multiply-adds (docs/bench-prims.md). NULL when out of memory (the
 * caller then builds it in its workspace). Threads racing on the first run each build one;
 * one is kept. */
TFE_INTERNAL const TFE_FN(ps_call_) *TFE_FN(ps_prep_get_)(const tfe_contract_plan *P) {
  void *h = atomic_load_explicit(&((tfe_contract_plan *)(uintptr_t)P)->small_prep, memory_order_acquire);
  if (h) return (const TFE_FN(ps_call_) *)h;
  size_t head = (sizeof(TFE_FN(ps_call_)) + 63) / 64 * 64;
  tfe_status e0 = tfe__ts.errcode;
  char *mem = (char *)tfe__alloc(head + (size_t)(2 * (P->m + P->n + P->k)) * sizeof(int64_t));
  if (!mem) { tfe__ts.errcode = e0; return NULL; } /* (not an error: the call goes on without it) */
  TFE_FN(ps_prep_)(P, (TFE_FN(ps_call_) *)(void *)mem, (int64_t *)(void *)(mem + head));
  void *no = NULL;
  if (atomic_compare_exchange_strong_explicit(&((tfe_contract_plan *)(uintptr_t)P)->small_prep, &no, (void *)mem,
                                              memory_order_acq_rel, memory_order_acquire))
    return (const TFE_FN(ps_call_) *)(void *)mem;
  tfe__free(mem);
  return (const TFE_FN(ps_call_) *)no;
}

#if !TFE_CPLX
/* One GEMM of a nobuf plan (set-up h) on the kernels, in place. */
TFE_INTERNAL void TFE_FN(ps_nobuf_one_)(const TFE_FN(ps_call_) *h, const TFE_T *x, const TFE_T *y, TFE_T *c,
                                        TFE_T alpha, TFE_T beta, bool bzero) {
  const TFE_R *xa = (const TFE_R *)x, *ya = (const TFE_R *)y;
  TFE_R *ca = (TFE_R *)c;
#if TFE__PS_HAVE_TN
  if (h->tn) {
    TFE_FN(ps_tn_one_)(h, xa, ya, ca, alpha, beta, bzero);
    return;
  }
#endif
  TFE_FN(ps_tile_)(h, xa, h->xs, ya, h->ysp, h->ysq, ca, h->csq, true, bzero, alpha, beta);
}
#endif
/* Batches [b0, b1) of a nobuf plan (set-up h, read as kept: no copy) on one thread. */
TFE_INTERNAL void TFE_FN(ps_nobuf_range_)(const TFE_FN(ps_call_) *h, const TFE_T *x, const TFE_T *y, TFE_T *c,
                                          TFE_T alpha, TFE_T beta, int64_t b0, int64_t b1) {
#if TFE_CPLX
  (void)h; (void)x; (void)y; (void)c; (void)alpha; (void)beta; (void)b0; (void)b1; /* (never nobuf) */
#else
  int64_t idx[TFE__PR_MAXL], o[3];
  TFE_FN(ps_seek_)(h, b0, idx, o);
  bool bzero = TFE_FN(pr_is_zero_)(beta);
  for (int64_t bi = b0; bi < b1; bi++) {
    TFE_FN(ps_nobuf_one_)(h, x + o[0], y + o[1], c + o[2], alpha, beta, bzero);
    if (bi + 1 < b1) TFE_FN(ps_step_)(h, idx, o);
  }
#endif
}

/* The kept set-up of P when a run needs nothing else (nobuf: no packing, no workspace), else
 * NULL: what a held run (contract_tpl.h, pr_held_) calls the kernels with directly. */
TFE_INTERNAL const TFE_FN(ps_call_) *TFE_FN(ps_held_)(const tfe_contract_plan *P) {
  const TFE_FN(ps_call_) *h = TFE_FN(ps_prep_get_)(P);
  return h && h->held ? h : NULL;
}
/* Counts a call without buffers (one counter per kind: in place, the last row vector masked,
 * the dot kernel). */
TFE_INTERNAL void TFE_FN(ps_count_nobuf_)(const TFE_FN(ps_call_) *h) {
  tfe__count(&tfe__st.prims.small_nobuf[h->nbk]);
}
/* A nobuf plan (ps_held_ gave h) on one thread: a, b, c already offset. One GEMM (a chain's
 * step) goes straight to the kernel. */
TFE_INTERNAL void TFE_FN(ps_run_held_)(const tfe_contract_plan *P, const TFE_FN(ps_call_) *h, TFE_T alpha, const TFE_T *a,
                                       const TFE_T *b, TFE_T beta, TFE_T *c) {
  TFE_FN(ps_count_nobuf_)(h);
  bool sw = P->small_swap;
#if !TFE_CPLX
  if (P->nbatch == 1) {
    TFE_FN(ps_nobuf_one_)(h, sw ? b : a, sw ? a : b, c, alpha, beta, TFE_FN(pr_is_zero_)(beta));
    return;
  }
#endif
  TFE_FN(ps_nobuf_range_)(h, sw ? b : a, sw ? a : b, c, alpha, beta, 0, P->nbatch);
}
/* Runs a small plan: a, b, c already offset; ws has ps_ws_elems_(P, threads) elements (none
 * for a nobuf plan: ws may be NULL then). */
TFE_INTERNAL void TFE_FN(ps_run_)(const tfe_contract_plan *P, TFE_T alpha, const TFE_T *a, bool ca, const TFE_T *b,
                                  bool cb, TFE_T beta, TFE_T *c, int threads, TFE_T *ws) {
  const TFE_FN(ps_call_) *h = TFE_FN(ps_prep_get_)(P);
  bool sw = P->small_swap;
  int64_t nbatch = P->nbatch;
  int nt = nbatch < threads ? (int)nbatch : threads;
  if (h && TFE_FN(ps_nobuf_)(P, h)) {
    if (nt <= 1) {
      TFE_FN(ps_run_held_)(P, h, alpha, a, b, beta, c);
      return;
    }
    TFE_FN(ps_count_nobuf_)(h);
    const TFE_T *x = sw ? b : a, *y = sw ? a : b;
    TFE_OMP(parallel num_threads(nt))
    {
      int64_t b0, b1;
      tfe__kshare(nbatch, &b0, &b1);
      TFE_FN(ps_nobuf_range_)(h, x, y, c, alpha, beta, b0, b1);
    }
    return;
  }
  int64_t ntab, per;
  TFE_FN(ps_sizes_)(P, &ntab, &per);
  int64_t *tab = (int64_t *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
  TFE_FN(ps_call_) s;
  if (!h) { /* no memory for the kept set-up: built here, in the workspace */
    TFE_FN(ps_prep_)(P, &s, tab);
    h = &s;
  }
  if (h != &s) {
    memcpy(&s, h, offsetof(TFE_FN(ps_call_), bd));
    for (int q = 0; q < h->nb; q++) { s.bd[q] = h->bd[q]; s.bx[q] = h->bx[q]; s.by[q] = h->by[q]; s.bc[q] = h->bc[q]; }
  }
  s.x = sw ? b : a; s.y = sw ? a : b; s.cx = sw ? cb : ca; s.cy = sw ? ca : cb;
  s.c = c; s.alpha = alpha; s.beta = beta;
  if (s.xdir || s.tn) tfe__count(&tfe__st.prims.small_direct[0]);
  if (s.ydir || s.tn) tfe__count(&tfe__st.prims.small_direct[1]);
  if (s.cdir || s.tn) tfe__count(&tfe__st.prims.small_direct[2]);
  if (s.mrem && (s.xdir || s.cdir)) tfe__count(&tfe__st.prims.small_tail);
  if (s.tn) tfe__count(&tfe__st.prims.small_tn);
  char *bufs = (char *)(tab + ntab);
  size_t stride = (size_t)per * sizeof(TFE_R) + 64;
  if (nt <= 1) {
    TFE_FN(ps_range_)(&s, 0, nbatch, (TFE_R *)(void *)bufs);
    return;
  }
  TFE_OMP(parallel num_threads(nt))
  {
    int64_t b0, b1;
    tfe__kshare(nbatch, &b0, &b1);
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    TFE_FN(ps_range_)(&s, b0, b1, (TFE_R *)(void *)(bufs + (size_t)tid * stride));
  }
}
#undef TFE__PS_W
#undef TFE__PS_PD
#undef TFE__PS_PL
#undef TFE__PS_TNP_MAX
#undef TFE__PS_HAVE_TN
#endif
#endif
