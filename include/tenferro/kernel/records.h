/* tenferro/kernel/records.h — copies between r-element records and r streams (array of
 * structures to structure of arrays and back): the destination's run reads the source in
 * records of r contiguous elements (split: xyzxyz.. -> xx.., yy.., zz..), or the source's run
 * fills destination records of r elements (join), r * es under 64 bytes and r at most 8.
 *
 * Why: planned as a transpose, such a copy is a tile of r rows or columns, under every register
 * block (u8 [3, 33e6] -> [33e6, 3] ran at 5-7x the streamed copy). Here a block of 64 / es
 * records is r 64-byte vectors on each side, and each output vector is one masked
 * two-vector permute per pair of input vectors (AVX-512: 32-bit lanes, 16-bit with BW, bytes with
 * VBMI), so every line is loaded and stored whole, in order, on every stream. Kind-independent
 * (bytes); bodies only. Without AVX-512 the copy keeps its tile plan. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_RECORDS_H
#define TENFERRO_KERNEL_RECORDS_H
#include <tenferro/config.h>
#endif
#elif !defined(TENFERRO_KERNEL_RECORDS_BODY) /* bodies */
#define TENFERRO_KERNEL_RECORDS_BODY
#include <string.h>

#if TFE__KHAVE_TR8 && defined(__AVX512F__)
/* (r over 8: the permutes, r^2 / 2 a block, outweigh what they save; docs/bench-kernel.md,
 * session 39) */
enum { TFE__KREC_MAXR = 8, TFE__KREC_NP = TFE__KREC_MAXR / 2 };

/* The permutes of one block: output vector w is the OR over pairs m (input vectors 2m, 2m+1)
 * of the permute by idx[w][m] with zeroes outside mask[w][m]. */
typedef struct tfe__krec {
  int r, np, lane; /* elements a record, pairs of input vectors, lane bytes (1, 2 or 4) */
  uint64_t mask[TFE__KREC_MAXR][TFE__KREC_NP];
  unsigned char idx[TFE__KREC_MAXR][TFE__KREC_NP][64];
} tfe__krec;

/* Lanes of u bytes (u = min(es, 4); q lanes an element, L a vector). A block is 64 / es records.
 * Split: inputs are the block's r consecutive source vectors, output w is stream w's vector.
 * Join: input k is stream k's vector, outputs are the block's r consecutive destination vectors. */
TFE_INTERNAL void tfe__krec_tables(tfe__krec *t, int r, int64_t es, bool join) {
  const int u = es >= 4 ? 4 : (int)es, L = 64 / u, q = (int)es / u;
  t->r = r;
  t->np = (r + 1) / 2;
  t->lane = u;
  for (int w = 0; w < r; w++) { /* (only what the blocks read) */
    memset(t->mask[w], 0, (size_t)t->np * sizeof t->mask[w][0]);
    memset(t->idx[w], 0, (size_t)t->np * sizeof t->idx[w][0]);
  }
  for (int w = 0; w < r; w++)
    for (int i = 0; i < L; i++) {
      int vec, lane;
      if (!join) {
        const int g = ((i / q) * r + w) * q + i % q; /* lane of the block's source */
        vec = g / L;
        lane = g % L;
      } else {
        const int tl = w * L + i; /* lane of the block's destination: record tl / (r q) */
        vec = tl / q % r;
        lane = tl / (r * q) * q + tl % q;
      }
      const int m = vec / 2, x = vec % 2 * L + lane;
      t->mask[w][m] |= (uint64_t)1 << i;
      if (u == 1) t->idx[w][m][i] = (unsigned char)x;
      else if (u == 2) { uint16_t v = (uint16_t)x; memcpy(&t->idx[w][m][2 * i], &v, 2); }
      else { uint32_t v = (uint32_t)x; memcpy(&t->idx[w][m][4 * i], &v, 4); }
    }
}

/* nb blocks: input vector a of block j at in[a] + j * is, output w at out[w] + j * os; nt:
 * streamed stores (outputs 64-byte aligned). Every output takes a permute from every pair of
 * inputs (a block's outputs each hold lanes of all r inputs). sh (split only; NULL: none):
 * out[w] is the aligned line below stream w's start, m_w bytes before it, and block j > 0
 * stores the line that ends m_w bytes into block j, joined from blocks j - 1 and j by the
 * permute sh[w] (lanes L - m_w / u + i of the two): every store whole and aligned, streamed
 * or not (block 0's first 64 - m_w bytes and the last block's last m_w are the caller's; the
 * cheapest of the forms measured, docs/bench-kernel.md session 39).
 * One body per lane width, made for each r (a constant: the inputs stay in registers; a loop
 * over a run-time r kept them on the stack, 2.4x slower). */
#define TFE__KREC_BLK(SUF, PERM, JOIN)                                                            \
  TFE__KINLINE __m512i tfe__krec_out_##SUF(const tfe__krec *t, const __m512i *v, int w, const int r) { \
    __m512i acc = PERM(t->mask[w][0], v[0], _mm512_loadu_si512((const void *)t->idx[w][0]), v[1]); \
    TFE__KUNROLL for (int m = 1; m < (r + 1) / 2; m++)                                            \
      acc = _mm512_or_si512(acc, PERM(t->mask[w][m], v[2 * m], _mm512_loadu_si512((const void *)t->idx[w][m]), v[2 * m + 1])); \
    return acc;                                                                                   \
  }                                                                                               \
  TFE__KINLINE void tfe__krec_st_##SUF(char *o, __m512i acc, bool nt) {                           \
    if (nt) _mm512_stream_si512((void *)o, acc);                                                  \
    else _mm512_storeu_si512((void *)o, acc);                                                     \
  }                                                                                               \
  TFE__KINLINE void tfe__krec_run_##SUF(const tfe__krec *t, const char *const *in, int64_t is,      \
                                        char *const *out, int64_t os, int64_t nb, bool nt,        \
                                        const unsigned char (*sh)[64], const int r) {             \
    __m512i v[TFE__KREC_MAXR + 1], pv[TFE__KREC_MAXR];                                            \
    for (int64_t j = 0; j < nb; j++) {                                                            \
      TFE__KUNROLL for (int a = 0; a < r; a++) v[a] = _mm512_loadu_si512((const void *)(in[a] + j * is)); \
      v[r] = v[r - 1]; /* (the odd r's last pair) */                                              \
      TFE__KUNROLL for (int w = 0; w < r; w++) {                                                  \
        __m512i acc = tfe__krec_out_##SUF(t, v, w, r);                                            \
        if (sh) {                                                                                 \
          __m512i line = JOIN(j ? pv[w] : acc, _mm512_loadu_si512((const void *)sh[w]), acc);     \
          pv[w] = acc;                                                                            \
          if (j == 0) continue;                                                                   \
          acc = line;                                                                             \
        }                                                                                         \
        tfe__krec_st_##SUF(out[w] + j * os, acc, nt);                                             \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  TFE__KOUTLINE void tfe__krec_blk_##SUF(const tfe__krec *t, const char *const *in, int64_t is,     \
                                         char *const *out, int64_t os, int64_t nb, bool nt,       \
                                         const unsigned char (*sh)[64]) {                         \
    switch (t->r) {                                                                               \
    case 2: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 2); break;                        \
    case 3: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 3); break;                        \
    case 4: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 4); break;                        \
    case 5: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 5); break;                        \
    case 6: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 6); break;                        \
    case 7: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 7); break;                        \
    default: tfe__krec_run_##SUF(t, in, is, out, os, nb, nt, sh, 8); break;                       \
    }                                                                                             \
  }
#define TFE__KREC_P32(k, a, i, b) _mm512_maskz_permutex2var_epi32((__mmask16)(k), a, i, b)
TFE__KREC_BLK(32, TFE__KREC_P32, _mm512_permutex2var_epi32)
#if defined(__AVX512BW__)
#define TFE__KREC_P16(k, a, i, b) _mm512_maskz_permutex2var_epi16((__mmask32)(k), a, i, b)
TFE__KREC_BLK(16, TFE__KREC_P16, _mm512_permutex2var_epi16)
#endif
#if defined(__AVX512VBMI__)
#define TFE__KREC_P8(k, a, i, b) _mm512_maskz_permutex2var_epi8((__mmask64)(k), a, i, b)
TFE__KREC_BLK(8, TFE__KREC_P8, _mm512_permutex2var_epi8)
#endif

/* Whether this build has the permutes for es-byte elements. */
TFE_INTERNAL bool tfe__krec_kind(int64_t es) {
#if defined(__AVX512VBMI__)
  if (es == 1) return true;
#endif
#if defined(__AVX512BW__)
  if (es == 2) return true;
#endif
  return es == 4 || es == 8 || es == 16;
}

/* The geometry of one copy: record i is r contiguous elements at i * r (of the source when
 * split, of the destination when join); element k of record i is element i of stream k, at
 * off[k] + i on the other side. */
typedef struct tfe__krecg {
  int64_t es, r;
  bool join;
  int64_t off[TFE__KREC_MAXR];
} tfe__krecg;

/* The shift index of lane width u for an output m bytes past its aligned line: lane i of
 * the line is lane L - m / u + i of (previous block, this block). */
TFE_INTERNAL void tfe__krec_shift(unsigned char *ix, int u, int64_t m) {
  const int L = 64 / u;
  for (int i = 0; i < L; i++) {
    const int x = L - (int)(m / u) + i;
    if (u == 1) ix[i] = (unsigned char)x;
    else if (u == 2) { uint16_t v = (uint16_t)x; memcpy(ix + 2 * i, &v, 2); }
    else { uint32_t v = (uint32_t)x; memcpy(ix + 4 * i, &v, 4); }
  }
}

/* Lanes [a, b) of a vector (a <= b <= 64). */
TFE__KINLINE uint64_t tfe__krec_lanes(int64_t a, int64_t b) {
  if (a >= b) return 0; /* (also a = 64: an empty range past the vector) */
  return (b >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << b) - 1) & ~(((uint64_t)1 << a) - 1);
}
/* A masked load, store and permute of lanes of u bytes (masked lanes neither read nor written). */
TFE__KINLINE __m512i tfe__krec_ldm(const char *p, int u, uint64_t k) {
#if defined(__AVX512BW__)
  if (u == 1) return _mm512_maskz_loadu_epi8((__mmask64)k, p);
  if (u == 2) return _mm512_maskz_loadu_epi16((__mmask32)k, p);
#endif
  return _mm512_maskz_loadu_epi32((__mmask16)k, p);
}
TFE__KINLINE void tfe__krec_stm(char *p, int u, uint64_t k, __m512i v) {
#if defined(__AVX512BW__)
  if (u == 1) { _mm512_mask_storeu_epi8(p, (__mmask64)k, v); return; }
  if (u == 2) { _mm512_mask_storeu_epi16(p, (__mmask32)k, v); return; }
#endif
  _mm512_mask_storeu_epi32(p, (__mmask16)k, v);
}
TFE__KINLINE __m512i tfe__krec_perm(int u, uint64_t k, __m512i a, __m512i i, __m512i b) {
#if defined(__AVX512VBMI__)
  if (u == 1) return _mm512_maskz_permutex2var_epi8((__mmask64)k, a, i, b);
#endif
#if defined(__AVX512BW__)
  if (u == 2) return _mm512_maskz_permutex2var_epi16((__mmask32)k, a, i, b);
#endif
  return _mm512_maskz_permutex2var_epi32((__mmask16)k, a, i, b);
}

/* The records [i0, i0 + n) of one slice (n <= 64 / es) by one block of masked loads, the
 * permutes and masked stores: heads, tails and the partial lines of shifted split streams, which
 * element loops had taken (short streams: 2000-byte u8 splits spent a quarter of their bytes
 * there). Split: stream w gets only its elements [e0[w], e1[w]) of the block (NULL: all n). */
TFE_INTERNAL void tfe__krec_edge(const tfe__krec *t, const tfe__krecg *g, char *d, const char *s, int64_t i0, int64_t n,
                                 const int64_t *e0, const int64_t *e1) {
  const int u = t->lane, r = t->r;
  const int64_t es = g->es, q = es / u, nb = n * r * es; /* lanes an element; bytes of the block's records */
  __m512i v[TFE__KREC_MAXR + 1];
  for (int a = 0; a < r; a++) {
    if (!g->join) {
      const int64_t lo = nb - 64 * a; /* (the block's source bytes in vector a) */
      v[a] = tfe__krec_ldm(s + (i0 * r * es + 64 * a), u, tfe__krec_lanes(0, lo <= 0 ? 0 : lo >= 64 ? 64 / u : lo / u));
    } else v[a] = tfe__krec_ldm(s + (g->off[a] + i0) * es, u, tfe__krec_lanes(0, n * q));
  }
  v[r] = v[r - 1];
  for (int w = 0; w < r; w++) {
    __m512i acc = _mm512_setzero_si512();
    for (int m = 0; m < t->np; m++)
      acc = _mm512_or_si512(acc, tfe__krec_perm(u, t->mask[w][m], v[2 * m], _mm512_loadu_si512((const void *)t->idx[w][m]), v[2 * m + 1]));
    if (!g->join)
      tfe__krec_stm(d + (g->off[w] + i0) * es, u, tfe__krec_lanes((e0 ? e0[w] : 0) * q, (e1 ? e1[w] : n) * q), acc);
    else {
      const int64_t lo = nb - 64 * w;
      tfe__krec_stm(d + i0 * r * es + 64 * w, u, tfe__krec_lanes(0, lo <= 0 ? 0 : lo >= 64 ? 64 / u : lo / u), acc);
    }
  }
}

/* Records [c0, c1) of one slice. Join: a head of records up to an aligned output (where one
 * exists) and the tail by masked blocks (tfe__krec_edge), the blocks between by the permutes.
 * Split: the blocks from c0 on, each stream's lines shifted to its own alignment
 * (tfe__krec_blk's sh) where any stream starts inside a line; the elements around them by
 * masked blocks. */
TFE_INTERNAL void tfe__krec_seg(const tfe__krec *t, const tfe__krecg *g, char *d, const char *s, int64_t c0, int64_t c1,
                                bool stream) {
  const int64_t es = g->es, r = g->r, E = 64 / es;
  int64_t h = 0, m[TFE__KREC_MAXR] = {0}; /* head records; split: each stream's bytes into its line */
  bool nt = stream, shifted = false;
  if (g->join) {
    nt = false;
    for (int64_t k = 0; k < E && stream && !nt; k++)
      if ((uintptr_t)(d + (c0 + k) * r * es) % 64 == 0) { h = k; nt = true; }
    if (h > c1 - c0) h = c1 - c0;
  } else {
    bool lanes = true; /* (a kind aligned below its lane width: unshifted, unstreamed stores) */
    for (int64_t k = 0; k < r; k++) {
      m[k] = (int64_t)((uintptr_t)(d + (g->off[k] + c0) * es) & 63);
      shifted |= m[k] != 0;
      lanes &= m[k] % t->lane == 0;
    }
    if (!lanes) {
      shifted = nt = false;
      for (int64_t k = 0; k < r; k++) m[k] = 0;
    }
  }
  const int64_t nb = (c1 - c0 - h) / E, b0 = c0 + h, b1 = b0 + nb * E;
  if (b0 > c0) tfe__krec_edge(t, g, d, s, c0, b0 - c0, NULL, NULL); /* (fewer than E records each) */
  if (c1 > b1) tfe__krec_edge(t, g, d, s, b1, c1 - b1, NULL, NULL);
  if (shifted && nb > 0) { /* block 0's first 64 - m bytes, the last block's last m (elements that straddle: whole) */
    int64_t e0[TFE__KREC_MAXR] = {0}, e1[TFE__KREC_MAXR] = {0};
    for (int64_t k = 0; k < r; k++) { e0[k] = 0; e1[k] = (64 - m[k] + es - 1) / es; }
    tfe__krec_edge(t, g, d, s, b0, E, e0, e1);
    for (int64_t k = 0; k < r; k++) { e0[k] = E - (m[k] + es - 1) / es; e1[k] = E; }
    tfe__krec_edge(t, g, d, s, b1 - E, E, e0, e1);
  }
  if (nb == 0) return;
  const char *in[TFE__KREC_MAXR];
  char *out[TFE__KREC_MAXR];
  unsigned char sh[TFE__KREC_MAXR][64];
  for (int64_t k = 0; k < r; k++) {
    if (!g->join) {
      in[k] = s + b0 * r * es + k * 64;
      out[k] = d + (b0 + g->off[k]) * es - m[k];
      if (shifted) tfe__krec_shift(sh[k], t->lane, m[k]);
    } else {
      in[k] = s + (b0 + g->off[k]) * es;
      out[k] = d + b0 * r * es + k * 64;
    }
  }
  const int64_t is = g->join ? 64 : 64 * r, os = g->join ? 64 * r : 64;
  const unsigned char(*shp)[64] = shifted ? (const unsigned char(*)[64])sh : NULL;
  if (t->lane == 4) tfe__krec_blk_32(t, in, is, out, os, nb, nt, shp);
#if defined(__AVX512BW__)
  else if (t->lane == 2) tfe__krec_blk_16(t, in, is, out, os, nb, nt, shp);
#endif
#if defined(__AVX512VBMI__)
  else tfe__krec_blk_8(t, in, is, out, os, nb, nt, shp);
#endif
}

/* The record of plan p whose records' dim is nk and whose record side is op rs (0: the
 * destination, join; 1: the source, split): the other dims whose strides on side rs lie in
 * (0, q), q = that side's stride of nk, sorted, must fill [0, q) densely; r = q. Fills g->off
 * with the other side's offsets of the record's elements and marks the record's dims in used;
 * false if they do not, or q is not a record this kernel takes. */
TFE_INTERNAL bool tfe__krec_record(const tfe__kplan *p, int nk, int rs, int64_t maxr, tfe__krecg *g, bool *used) {
  const int64_t q = p->str[rs][nk];
  if (q < 2 || q > maxr) return false;
  int rd[TFE_MAX_RANK], nr = 0;
  for (int k = 0; k < p->rank; k++)
    if (k != nk && p->str[rs][k] > 0 && p->str[rs][k] < q) {
      int j = nr++; /* insertion by stride */
      for (; j > 0 && p->str[rs][rd[j - 1]] > p->str[rs][k]; j--) rd[j] = rd[j - 1];
      rd[j] = k;
    }
  int64_t span = 1;
  for (int j = 0; j < nr; j++) {
    if (p->str[rs][rd[j]] != span) return false;
    span *= p->dims[rd[j]];
  }
  if (span != q) return false;
  g->r = q;
  for (int64_t e = 0; e < q; e++) { /* element e of the record: its index along each record dim */
    int64_t o = 0, x = e;
    for (int j = 0; j < nr; j++) { o += x % p->dims[rd[j]] * p->str[1 - rs][rd[j]]; x /= p->dims[rd[j]]; }
    g->off[e] = o;
  }
  for (int j = 0; j < nr; j++) used[rd[j]] = true;
  return true;
}

/* Whether some slice of n records writes a partial line: a split's stream or a join's slice
 * (n records of r) starting or ending inside a line (d0: the destination's first element; the
 * no outer dims' counts od and destination strides ds). */
TFE_INTERNAL bool tfe__krec_partial(const tfe__krecg *g, const char *d0, int64_t n, const int64_t *od, const int64_t *ds,
                                    int64_t no) {
  const int64_t es = g->es;
  if ((uintptr_t)d0 % 64 || (g->join ? n * g->r : n) * es % 64) return true;
  for (int64_t k = 0; k < no; k++)
    if (od[k] > 1 && ds[k] * es % 64) return true;
  for (int64_t w = 0; w < g->r && !g->join; w++)
    if (g->off[w] * es % 64) return true;
  return false;
}
#define TFE__KHAVE_REC 1
#else
#define TFE__KHAVE_REC 0
#endif

/* A copy of plan p (op 0 the destination d, op 1 the source s, es-byte elements, fused dims)
 * between records and streams as above, on nt threads, streamed when stream, into a fresh
 * (unwritten, dense from d) destination when fresh: true when done
 * here, false (nothing written) when p is not such a copy, the kind or the CPU lacks the
 * permutes, or it holds fewer than copy_narrow_records bytes (0: never). The slices over the
 * other dims and pieces of 32 KiB of records along them are shared among the threads. */
TFE_INTERNAL bool tfe__kcopy_records(const tfe__kplan *p, char *d, const char *s, int64_t es, int nt, bool stream,
                                     bool fresh) {
#if TFE__KHAVE_REC
  const int64_t minb = tfe__st.tune.copy_narrow_records;
  if (minb <= 0 || p->numel * es < minb || p->rank < 2 || !tfe__ksimd() || !tfe__krec_kind(es)) return false;
  int a = -1, b = -1; /* the destination's and the source's unit-stride dims */
  for (int k = 0; k < p->rank; k++) {
    if (p->str[0][k] == 1) a = k;
    if (p->str[1][k] == 1) b = k;
  }
  if (a < 0 || b < 0 || a == b) return false;
  /* (records of a whole line or more, and splits of f32 into more than 6 streams: the
   * register-block transposes measured faster) */
  const int64_t maxr = 63 / es < TFE__KREC_MAXR ? 63 / es : TFE__KREC_MAXR, maxs = es == 4 ? 6 : maxr;
  tfe__krecg g = {es, 0, false, {0}};
  bool used[TFE_MAX_RANK] = {false};
  int nk = a; /* split: the destination's run reads whole source records */
  if (!tfe__krec_record(p, a, 1, maxs, &g, used)) {
    nk = b; /* join: the source's run fills whole destination records */
    g.join = true;
    if (!tfe__krec_record(p, b, 0, maxr, &g, used)) return false;
  }
  used[nk] = true;
  const int64_t n = p->dims[nk], E = 64 / es;
  if (n < 2 * E || (g.join && es == 8 && g.r == 4)) return false; /* (f64 joins of 4: session 37's 4x4 blocks) */
  /* (2-D f64 splits into 5 or more streams, or 3 or more that start inside lines: the tile
   * plan's skewed 8 x 8 blocks were faster; with outer dims or records of several dims they are
   * not. The rules' measurements: docs/bench-kernel.md, session 39) */
  if (!g.join && es == 8 && p->rank == 2 && (g.r >= 5 || (g.r >= 3 && g.off[1] * es % 64))) return false;
  int64_t od[TFE_MAX_RANK], os_[2][TFE_MAX_RANK], no = 0, outer = 1; /* the other dims */
  for (int k = 0; k < p->rank; k++)
    if (!used[k]) { od[no] = p->dims[k]; os_[0][no] = p->str[0][k]; os_[1][no] = p->str[1][k]; outer *= od[no++]; }
  /* the outer dims walked in the source's order (copy_records_src_order): in the destination's,
   * a record block of a few KB was followed by one far away in the source, each read from a
   * cold start (u8 [3,25,32,12,284,17] [1,2,4,3,0,5]: 2.4 KB blocks 28.8 KB apart, 0.70 of
   * the time in the source's order; docs/bench-kernel.md session 40) */
  if (tfe__st.tune.copy_records_src_order)
    for (int64_t i = 1; i < no; i++)
      for (int64_t j = i; j > 0 && tfe__kabs(os_[1][j]) < tfe__kabs(os_[1][j - 1]); j--) {
        int64_t t = od[j]; od[j] = od[j - 1]; od[j - 1] = t;
        for (int o = 0; o < 2; o++) { t = os_[o][j]; os_[o][j] = os_[o][j - 1]; os_[o][j - 1] = t; }
      }
  char *d0 = d + p->base[0] * es;
  const char *s0 = s + p->base[1] * es;
  /* (4-16-byte kinds whose slices write partial lines — a stream or a slice not starting or ending
   * on a line — with streams under copy_records_edge_bytes, joins half: each partial line's
   * masked store waited on its line, 2-4x slower than the tile plans; docs/bench-kernel.md,
   * session 50) */
  const int64_t eb = tfe__st.tune.copy_records_edge_bytes;
  if (es >= 4 && n * es < (g.join ? eb / 2 : eb) && tfe__krec_partial(&g, d0, n, od, os_[0], no)) return false;
  tfe__krec t;
  tfe__krec_tables(&t, (int)g.r, es, g.join);
  /* unit u: the slice o = u / npc of the outer dims, its piece c = u % npc of about 32 KiB */
#define TFE__KREC_UNIT(u)                                                                          \
  do {                                                                                             \
    int64_t o = (u) / npc, c = (u) % npc, doff = 0, soff = 0;                                      \
    for (int64_t k = 0; k < no; k++) { doff += o % od[k] * os_[0][k]; soff += o % od[k] * os_[1][k]; o /= od[k]; } \
    tfe__krec_seg(&t, &g, d0 + doff * es, s0 + soff * es, c * piece, (c + 1) * piece < n ? (c + 1) * piece : n, stream); \
  } while (0)
  const int64_t piece = ((int64_t)32768 / (g.r * es) + E - 1) / E * E;
  const int64_t npc = (n + piece - 1) / piece, units = outer * npc;
  if (units < nt) nt = (int)units;
  TFE__KSTAT(67);
  if (fresh && p->numel * es >= tfe__st.tune.copy_fresh_min_bytes) /* (as the tile plans: faulted first) */
    tfe__kprefault(d, (size_t)(p->numel * es), nt);
  if (nt <= 1) { /* (no thread team: small copies pay about a microsecond for one) */
    for (int64_t u = 0; u < units; u++) TFE__KREC_UNIT(u);
    if (stream) tfe__ksfence();
    return true;
  }
  TFE_OMP(parallel num_threads(nt))
  {
    TFE_OMP(for schedule(static))
    for (int64_t u = 0; u < units; u++) TFE__KREC_UNIT(u);
    if (stream) tfe__ksfence();
  }
  return true;
#undef TFE__KREC_UNIT
#else
  (void)p; (void)d; (void)s; (void)es; (void)nt; (void)stream; (void)fresh;
  return false;
#endif
}
#endif
