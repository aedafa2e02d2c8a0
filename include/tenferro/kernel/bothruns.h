/* tenferro/kernel/bothruns.h — copies whose destination run and source run are both short and
 * share dims (permutations of many small dims: qubit and qutrit networks' dims of 2-4), run as
 * tiles of whole runs on both sides.
 *
 * Why: such a copy's destination run (D, its leading dims in the destination's order) soon
 * takes a dim of the source's run (S), so a transpose tile, whose groups must be disjoint,
 * stops its G0 at the dims before it: u8 [2,3,2,2,2,2,2,2,3,3,2,4,3,2,2,3,4,3,4,3] perm
 * [14,7,19,0,17,5,...] had G0 12 bytes, so every tile wrote 192 pieces of 12-24 bytes far apart
 * and each destination line was read for ownership and written in three pieces by three tiles
 * (13x the streamed copy). Here the tile is D and S together (dims of both runs, whole): the
 * source's runs are read whole, moved into an L1 buffer laid out as the destination's runs, and
 * those go out whole; the next tile's runs are asked into L2 meanwhile.
 *
 * The tile: its rows are D's dims outside S (each row a run of S in the source); the buffer
 * holds one destination run of pd elements per value of S's dims outside D. 1- and 2-byte rows
 * are read in blocks of 16 / es rows and transposed in registers; a column's rows land in the
 * buffer in pieces, one masked store each (rows one after another in the buffer: the
 * destination's dims before the first dim of S; AVX-512BW/VL builds), or, for tiny buffered
 * tiles whose rows do not lie together there, element by element (`elem`). 4-, 8- and 16-byte rows
 * move in 4x4 register blocks where rows come in fours one after another in the buffer, else
 * element by element (any build). Before the runs grow, a run common to both sides may become
 * the element (tfe__kbr_unit) and a dim may be split (tfe__kbr_split_best); a source run read
 * backwards is first walked the other way (tfe__kbr_flip). Chosen in place of
 * the tile plans by k_copy_both_runs_
 * (copy_tpl.h, docs/kernel.md step 4d). Kind-independent (bytes); bodies only. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_BOTHRUNS_H
#define TENFERRO_KERNEL_BOTHRUNS_H
#include <tenferro/config.h>
#endif
#elif !defined(TENFERRO_KERNEL_BOTHRUNS_BODY) /* bodies */
#define TENFERRO_KERNEL_BOTHRUNS_BODY
#include <string.h>

enum { TFE__KBR_MAXB = 32768 }; /* (the largest tile, bytes: a stack buffer a thread) */

/* A block of 16 / es rows (the last shifted back to end at the last row): its first row and
 * the pieces its columns are stored in (tfe__ktr12_pieces: rows one after another in the
 * buffer make one piece). */
typedef struct tfe__kbr_rows {
  int64_t r0, off[16];
  uint16_t mask[16];
  int ng;
} tfe__kbr_rows;

/* A plan of such tiles: offsets in elements unless said; tables in one allocation (tab). */
typedef struct tfe__kbr {
  int64_t es, nr, ps, pd, nc;        /* nr rows (D's dims outside S) of ps columns (S); nc runs of pd */
  int64_t *rsrc;                     /* [nr]: a row's source offset (D's dims outside S, the destination's order) */
  int64_t *cbuf;                     /* [ps]: a column's buffer offset, bytes (S in the source's order) */
  int64_t *cdst;                     /* [nc]: a buffer run's destination offset */
  int64_t *rbuf;                     /* [nr]: a row's buffer offset */
  tfe__kbr_rows *rb;                 /* [nrb] */
  int nrb, no;                       /* row blocks; the outer dims (the destination's order): */
  int rq;                            /* 4-16 bytes: 4 when rows come in fours one after another in the buffer */
  bool elem;                         /* 1- and 2-byte rows moved element by element */
  int64_t od[TFE_MAX_RANK], os[2][TFE_MAX_RANK], ntiles;
  int64_t base[2], numel;            /* the fused plan's offsets of the first elements; elements */
  void *tab;
} tfe__kbr;

/* Offsets of the mixed-radix walk over dims ks[0..n) (first fastest): out[i] = sum idx_k * m[k]. */
TFE_INTERNAL void tfe__kbr_walk(const int64_t *dims, const int *ks, int n, const int64_t *m, int64_t *out) {
  out[0] = 0;
  int64_t len = 1;
  for (int q = 0; q < n; q++) {
    const int64_t c = dims[ks[q]];
    for (int64_t v = 1; v < c; v++)
      for (int64_t e = 0; e < len; e++) out[v * len + e] = out[e] + v * m[q];
    len *= c;
  }
}

/* The runs: D = the destination's dims 0..a-1 (p's order), S = the source's so[0..b-1]; grown
 * one dim at a time on the side with fewer bytes (a dim already in the other side's run is free)
 * while the tile (D and S together, whole dims) stays within maxb bytes, until both runs hold
 * maxb / 32 bytes. False where the runs stay under a line or the source's run is the
 * destination's. */
TFE_INTERNAL bool tfe__kbr_runs(const tfe__kplan *p, int64_t maxb, int *so, int *pa, int *pb, bool *inD, bool *inS) {
  const int64_t es = p->es, want = maxb / 32 > 64 ? maxb / 32 : 64;
  const int r = p->rank;
  int nd = 0, ns = 0; /* the lengths of the contiguous prefixes */
  for (int64_t m = 1; nd < r && tfe__kabs(p->str[0][nd]) == m; nd++) m *= p->dims[nd]; /* (< 0: tfe__kbr_flip) */
  int n = 0;
  for (int k = 0; k < r; k++) if (p->str[1][k] > 0) so[n++] = k;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && p->str[1][so[j]] < p->str[1][so[j - 1]]; j--) { int t = so[j]; so[j] = so[j - 1]; so[j - 1] = t; }
  for (int64_t m = 1; ns < n && p->str[1][so[ns]] == m; ns++) m *= p->dims[so[ns]];
  if (nd == 0 || ns == 0 || so[0] == 0) return false;
  int a = 1, b = 1, lead = so[0]; /* (lead: S's first dim in the destination's order) */
  int64_t pd = p->dims[0], ps = p->dims[so[0]], tile = pd * ps;
  if (tile * es > maxb) return false;
  memset(inD, 0, (size_t)r * sizeof *inD);
  memset(inS, 0, (size_t)r * sizeof *inS);
  inD[0] = inS[so[0]] = true;
  for (;;) {
    const bool gd = a < nd && (inS[a] || tile * p->dims[a] * es <= maxb);
    /* (S takes a dim before lead, which cuts the rows' records, only to reach a line) */
    const bool gs = b < ns && (so[b] > lead || ps * es < 64) && (inD[so[b]] || tile * p->dims[so[b]] * es <= maxb);
    const bool free_d = gd && inS[a], free_s = gs && inD[so[b]];
    const bool done = pd * es >= want && ps * es >= want;
    if (free_d || (!free_s && gd && !done && (pd <= ps || !gs))) {
      if (!inS[a]) tile *= p->dims[a];
      inD[a] = true; pd *= p->dims[a++];
    } else if (free_s || (gs && !done)) {
      if (!inD[so[b]]) tile *= p->dims[so[b]];
      inS[so[b]] = true; ps *= p->dims[so[b]];
      lead = so[b] < lead ? so[b] : lead;
      b++;
    } else break;
  }
  *pa = a; *pb = b;
  return pd * es >= 64 && ps * es >= 64;
}

/* The row blocks of rows with buffer offsets rbuf[0..nr) (elements; nr >= 1): blocks of n rows,
 * the last shifted back (fewer than n rows: one block whose extra rows repeat row 0 and are
 * stored nowhere); a piece is a run of rows one after another in the buffer. */
TFE_INTERNAL void tfe__kbr_blocks(tfe__kbr *t, const int64_t *rbuf, int64_t n) {
  const int64_t es = t->es;
  t->nrb = 0;
  for (int64_t ib = 0;; ib += n) {
    if (t->nr >= n && ib > t->nr - n) ib = t->nr - n;
    tfe__kbr_rows *b = &t->rb[t->nrb++];
    const int64_t e = ib + n < t->nr ? ib + n : t->nr;
    b->r0 = ib; b->ng = 0;
    for (int64_t r = ib; r < e; r++) {
      if (r == ib || rbuf[r] != rbuf[r - 1] + 1) { b->off[b->ng] = (rbuf[r] - (r - ib)) * es; b->mask[b->ng++] = 0; }
      b->mask[b->ng - 1] |= (uint16_t)(1u << (r - ib));
    }
    if (e == t->nr) break;
  }
}

/* Plans p (fused, op 0 written) as such tiles into *t (its tables allocated); false where it
 * does not apply (tfe__kbr_runs; a tile under 1 KiB, a copy of fewer than 4 tiles; 1- and 2-byte
 * kinds: builds without the masked stores, pieces of under 2.5 rows on average unless elem, which
 * then moves the rows element by element). */
TFE_INTERNAL bool tfe__kbr_plan(const tfe__kplan *p, int64_t maxb, tfe__kbr *t, bool elem) {
  const int64_t es = p->es, n = es <= 2 ? 16 / es : 1;
  int so[TFE_MAX_RANK], a, b;
  bool inD[TFE_MAX_RANK], inS[TFE_MAX_RANK];
  if ((es <= 2 && !TFE__KHAVE_PIECES12) || p->rank < 3 || p->str[0][0] != 1 || !tfe__kbr_runs(p, maxb, so, &a, &b, inD, inS)) return false;
  int kr[TFE_MAX_RANK], kc[TFE_MAX_RANK], nkr = 0, nkc = 0;
  int64_t nr = 1, pd = 1, ps = 1, nc = 1;
  for (int k = 0; k < a; k++) {
    pd *= p->dims[k];
    if (!inS[k]) { kr[nkr++] = k; nr *= p->dims[k]; }
  }
  for (int q = 0; q < b; q++) {
    ps *= p->dims[so[q]];
    if (!inD[so[q]]) { kc[nkc++] = so[q]; nc *= p->dims[so[q]]; }
  }
  if (ps < n || pd * nc * es < 1024 || p->numel < 4 * pd * nc) return false;
  t->no = 0; t->ntiles = 1;
  for (int k = 0; k < p->rank; k++)
    if (!inD[k] && !inS[k]) {
      t->od[t->no] = p->dims[k]; t->os[0][t->no] = p->str[0][k]; t->os[1][t->no] = p->str[1][k];
      t->ntiles *= p->dims[k];
      t->no++;
    }
  const int64_t nrb = es <= 2 ? (nr + n - 1) / n + 1 : 0;
  t->tab = tfe__alloc((size_t)(2 * nr + ps + nc) * sizeof(int64_t) + (size_t)nrb * sizeof(tfe__kbr_rows));
  if (!t->tab) return false;
  t->es = es; t->nr = nr; t->ps = ps; t->pd = pd; t->nc = nc;
  t->rb = (tfe__kbr_rows *)t->tab;
  t->rsrc = (int64_t *)(t->rb + nrb); t->cbuf = t->rsrc + nr; t->cdst = t->cbuf + ps;
  int64_t *rbuf = t->rbuf = t->cdst + nc, m[TFE_MAX_RANK] = {0};
  for (int q = 0; q < nkr; q++) m[q] = p->str[1][kr[q]];
  tfe__kbr_walk(p->dims, kr, nkr, m, t->rsrc);
  for (int q = 0; q < nkr; q++) m[q] = p->str[0][kr[q]];
  tfe__kbr_walk(p->dims, kr, nkr, m, rbuf);
  /* (D's dims that the destination walks backwards, tfe__kbr_flip: the buffer holds the run in
   * address order, from its lowest element, dlo before the tile's first) */
  int64_t dlo = 0;
  for (int k = 0; k < a; k++) if (p->str[0][k] < 0) dlo -= (p->dims[k] - 1) * p->str[0][k];
  for (int64_t r = 0; r < nr; r++) rbuf[r] += dlo;
  t->rq = 0; t->elem = false;
  if ((es == 4 || es == 8 || es == 16) && nr % 4 == 0 && ps >= 4) {
    t->rq = 4;
    for (int64_t r = 0; r < nr && t->rq; r++) if (r % 4 && rbuf[r] != rbuf[r - 1] + 1) t->rq = 0;
  }
  if (es <= 2) {
    tfe__kbr_blocks(t, rbuf, n);
    int64_t pieces = 0; /* (pieces of 2 rows or fewer on average: a store every element or two, slower
                          * than the tile plans: u8 pieces of 2, 0.86-0.9 of their time; of 2.7, 1.43x faster) */
    for (int q = 0; q < t->nrb; q++) pieces += t->rb[q].ng;
    t->elem = pieces * 5 > 2 * t->nrb * (nr < n ? nr : n);
    if (t->elem && !elem) { tfe__free(t->tab); return false; }
  }
  /* (C's dims that the destination walks backwards (tfe__kbr_flip) take their places in the
   * buffer backwards, so that the runs go out upwards) */
  int64_t c0 = 0, b0 = 0;
  for (int q = 0; q < nkc; q++) {
    m[q] = tfe__kabs(p->str[0][kc[q]]);
    if (p->str[0][kc[q]] < 0) c0 += (p->dims[kc[q]] - 1) * p->str[0][kc[q]];
  }
  tfe__kbr_walk(p->dims, kc, nkc, m, t->cdst);
  for (int64_t c = 0; c < nc; c++) t->cdst[c] += c0 - dlo;
  /* a column (S's dims in the source's order): D's dims at their destination offsets, C's at pd
   * times their place among C's */
  int64_t cm = pd;
  for (int q = 0, c = 0; q < b; q++) {
    const int k = so[q];
    if (inD[k]) m[q] = p->str[0][k];
    else {
      const int64_t n = p->dims[kc[c++]];
      m[q] = cm;
      if (p->str[0][k] < 0) { m[q] = -cm; b0 += (n - 1) * cm; }
      cm *= n;
    }
  }
  tfe__kbr_walk(p->dims, so, b, m, t->cbuf);
  for (int64_t j = 0; j < ps; j++) t->cbuf[j] = (t->cbuf[j] + b0) * es;
  return true;
}

/* Tile u's destination and source offsets. */
TFE_INTERNAL void tfe__kbr_at(const tfe__kbr *t, int64_t u, int64_t *doff, int64_t *soff) {
  *doff = *soff = 0;
  for (int k = 0; k < t->no; k++) {
    const int64_t c = u % t->od[k];
    u /= t->od[k];
    *doff += c * t->os[0][k];
    *soff += c * t->os[1][k];
  }
}

/* Asks for the next tile's row r (at ns) while this tile's rows move: into L2, not L1 (the
 * next tile's rows, this tile's and the buffer overflow a 32-48 KiB L1: asked into L1 they
 * evicted the lines being moved, 2-3x slower on the Zen 4; docs/bench-kernel.md session 48). */
TFE_INTERNAL void tfe__kbr_ask(const tfe__kbr *t, const char *ns, int64_t r) {
  const uintptr_t a = (uintptr_t)(ns + t->rsrc[r] * t->es), e = a + (uintptr_t)(t->ps * t->es);
  if (tfe__st.tune.copy_both_run_ask == 2)
    for (uintptr_t l = a & ~(uintptr_t)63; l < e; l += 64) __builtin_prefetch((const void *)l, 0, 2);
  else
    for (uintptr_t l = a & ~(uintptr_t)63; l < e; l += 64) __builtin_prefetch((const void *)l, 0, 3);
}

#if TFE__KHAVE_PIECES12
/* 1- and 2-byte rows: read in blocks of 16 / es rows, transposed in registers, each column's
 * rows stored in pieces. */
TFE_INTERNAL void tfe__kbr_move12(const tfe__kbr *t, const char *s, const char *ns, char *buf) {
  const int64_t es = t->es, n = 16 / es, ps = t->ps;
  const char *rp[16];
  for (int q = 0; q < t->nrb; q++) {
    const tfe__kbr_rows *b = &t->rb[q];
    const int64_t e = b->r0 + n < t->nr ? b->r0 + n : t->nr;
    for (int64_t i = 0; i < n; i++) rp[i] = s + t->rsrc[b->r0 + i < e ? b->r0 + i : b->r0] * es;
    if (ns)
      for (int64_t r = b->r0; r < e; r++) tfe__kbr_ask(t, ns, r);
    for (int64_t jb = 0;;) { /* (blocks of 64, 32 or 16 bytes of columns; the last shifted back) */
      int64_t w = 64;
      while (w > 16 && jb + w / es > ps) w /= 2;
      if (jb > ps - w / es) jb = ps - w / es;
      tfe__ktr12_pieces((size_t)es, (int)w, buf, t->cbuf + jb, rp, jb * es, b->off, b->mask, b->ng);
      if ((jb += w / es) == ps) break;
    }
  }
}
#endif

/* A row element by element, each to its column's place (a vector of a row's elements would
 * scatter: their places lie a destination run apart). */
#define TFE__KBR_MOVE(ES)                                                                          \
  for (int64_t r = 0; r < t->nr; r++) {                                                           \
    const char *sr = s + t->rsrc[r] * ES;                                                         \
    char *br = buf + t->rbuf[r] * ES;                                                             \
    if (ns) tfe__kbr_ask(t, ns, r);                                                               \
    for (int64_t j = 0; j < t->ps; j++) memcpy(br + t->cbuf[j], sr + j * ES, ES);                 \
  }
#if TFE__KHAVE_TR8
/* Rows in fours one after another in the buffer (the destination's first dim outside the source's
 * run): 4x4 register blocks, each column's four rows stored together. */
TFE_INTERNAL void tfe__kbr_move4(const tfe__kbr *t, const char *s, const char *ns, char *buf) {
  const int64_t es = t->es, ps = t->ps;
  for (int64_t r0 = 0; r0 < t->nr; r0 += 4) {
    const char *sr[4];
    for (int i = 0; i < 4; i++) {
      sr[i] = s + t->rsrc[r0 + i] * es;
      if (ns) tfe__kbr_ask(t, ns, r0 + i);
    }
    char *b0 = buf + t->rbuf[r0] * es;
    for (int64_t j = 0;;) { /* (the last block shifted back) */
      if (j > ps - 4) j = ps - 4;
      if (es == 16) {
        double *dc[4];
        const double *sp[4];
        for (int c = 0; c < 4; c++) { dc[c] = (double *)(void *)(b0 + t->cbuf[j + c]); sp[c] = (const double *)(const void *)(sr[c] + j * es); }
        tfe__ktr16(dc, sp, false);
      } else {
        void *dc[4];
        const void *sp[4];
        for (int c = 0; c < 4; c++) { dc[c] = b0 + t->cbuf[j + c]; sp[c] = sr[c] + j * es; }
        tfe__ktrq((size_t)es, dc, sp, false);
      }
      if ((j += 4) >= ps) break;
    }
  }
}
#endif
/* 4-, 8- and 16-byte rows: in 4x4 blocks where rows come in fours, else element by element. */
TFE_INTERNAL void tfe__kbr_move_wide(const tfe__kbr *t, const char *s, const char *ns, char *buf) {
#if TFE__KHAVE_TR8
  if (t->rq == 4 && tfe__ksimd()) { tfe__kbr_move4(t, s, ns, buf); return; }
#endif
  switch (t->es) {
  case 1: TFE__KBR_MOVE(1) break;
  case 2: TFE__KBR_MOVE(2) break;
  case 4: TFE__KBR_MOVE(4) break;
  case 8: TFE__KBR_MOVE(8) break;
  case 16: TFE__KBR_MOVE(16) break;
  default: /* (units of common runs, user kinds of other sizes) */
    if (t->es % 8 == 0) {
      for (int64_t r = 0; r < t->nr; r++) {
        const char *sr = s + t->rsrc[r] * t->es;
        char *br = buf + t->rbuf[r] * t->es;
        if (ns) tfe__kbr_ask(t, ns, r);
        for (int64_t j = 0; j < t->ps; j++)
          for (int64_t w = 0; w < t->es; w += 8) memcpy(br + t->cbuf[j] + w, sr + j * t->es + w, 8);
      }
    } else { const int64_t es = t->es; TFE__KBR_MOVE(es) }
    break;
  }
}
#undef TFE__KBR_MOVE

/* One tile: the source's rows (read at s) moved into the buffer buf, then its nc runs of pd
 * elements written to d, streamed when nt. ns: the next tile's source, whose rows are asked
 * for as these move (without: each tile's reads wait at memory latency). */
TFE_INTERNAL void tfe__kbr_tile(const tfe__kbr *t, char *d, const char *s, const char *ns, char *buf, bool nt) {
#if TFE__KHAVE_PIECES12
  if (t->es <= 2 && !t->elem) tfe__kbr_move12(t, s, ns, buf);
  else
#endif
    tfe__kbr_move_wide(t, s, ns, buf);
  /* (streamed: the runs' partial edge lines by normal stores; streamed too, they ran 3x slower on
   * a Xeon where runs were not whole lines, and measured the same on the Zen 4) */
  const size_t rb = (size_t)(t->pd * t->es);
  for (int64_t c = 0; c < t->nc; c++) {
    char *q = d + t->cdst[c] * t->es;
    const char *b = buf + (size_t)c * rb;
    if (nt) tfe__kstream_ex(q, b, rb, false);
    else memcpy(q, b, rb);
  }
}

/* The shorter of the two runs tfe__kbr_runs grows on p, bytes (0: none). */
TFE_INTERNAL int64_t tfe__kbr_short_run(const tfe__kplan *p, int64_t maxb) {
  int so[TFE_MAX_RANK], a, b;
  bool inD[TFE_MAX_RANK], inS[TFE_MAX_RANK];
  if (!tfe__kbr_runs(p, maxb, so, &a, &b, inD, inS)) return 0;
  int64_t pd = p->es, ps = p->es;
  for (int k = 0; k < a; k++) pd *= p->dims[k];
  for (int q = 0; q < b; q++) ps *= p->dims[so[q]];
  return pd < ps ? pd : ps;
}

/* Dim k of p becomes two, c (the faster) and dims[k] / c; undone by tfe__kbr_unsplit. */
TFE_INTERNAL void tfe__kbr_split(tfe__kplan *p, int k, int64_t c) {
  for (int j = p->rank; j > k + 1; j--) {
    p->dims[j] = p->dims[j - 1];
    for (int o = 0; o < 2; o++) p->str[o][j] = p->str[o][j - 1];
  }
  p->dims[k + 1] = p->dims[k] / c; p->dims[k] = c;
  for (int o = 0; o < 2; o++) p->str[o][k + 1] = p->str[o][k] * c;
  p->rank++;
}
TFE_INTERNAL void tfe__kbr_unsplit(tfe__kplan *p, int k) {
  p->dims[k] *= p->dims[k + 1];
  p->rank--;
  for (int j = k + 1; j < p->rank; j++) {
    p->dims[j] = p->dims[j + 1];
    for (int o = 0; o < 2; o++) p->str[o][j] = p->str[o][j + 1];
  }
}

/* Where a whole dim does not fit the tile, a part of it may: the runs stop short when the next
 * dim of one side would overflow the tile (u16 [10,112,15,7,21,4,6] perm [5,0,4,2,3,1,6]:
 * destination runs of 80 bytes, as the source's run took its dim of 112 whole). Where both runs
 * exist unsplit and the shorter is under below bytes, splits the dim (at an exact divisor) whose
 * split lengthens the shorter run most; returns the split dim (-1: none). */
TFE_INTERNAL int tfe__kbr_split_best(tfe__kplan *p, int64_t maxb, int64_t below) {
  const int64_t base = tfe__kbr_short_run(p, maxb);
  int64_t best = base, bc = 0;
  int bk = -1;
  if (base == 0 || base >= below || p->rank >= TFE_MAX_RANK) return -1;
  for (int k = 0; k < p->rank; k++)
    for (int64_t c = 2; c * c <= p->dims[k]; c++) {
      if (p->dims[k] % c) continue;
      for (int h = 0; h < 2; h++) { /* (c and its cofactor) */
        const int64_t f = h ? p->dims[k] / c : c;
        if (h && f == c) break;
        tfe__kbr_split(p, k, f);
        const int64_t run = tfe__kbr_short_run(p, maxb);
        tfe__kbr_unsplit(p, k);
        if (run > best) { best = run; bk = k; bc = f; }
      }
    }
  if (bk >= 0) tfe__kbr_split(p, bk, bc);
  return bk;
}

/* A run common to both sides (the first dim, unit-stride in both) stops the runs at once
 * (tfe__kbr_runs); moved as one unit of dims[0] * es bytes (at most maxu), the dims after it
 * make the runs: f64 [7,3,27,4,5,167,8] perm [0,4,2,5,3,6,1], 56-byte runs that a gather tile
 * read from 12 places, ran 2.3x faster so. Folds dim 0 into p's element where the unit is whole
 * 8-byte words (units of 12 and 17 bytes, moved by memcpy calls, ran 0.45-0.59 of the tile
 * plans' speed) and every stride and the origins are whole units; false: p unchanged. */
TFE_INTERNAL bool tfe__kbr_unit(tfe__kplan *p, int64_t maxu) {
  const int64_t u = p->dims[0];
  if (p->rank < 3 || u < 2 || u * p->es > maxu || u * p->es % 8 || p->str[0][0] != 1 || p->str[1][0] != 1 || p->base[0] % u || p->base[1] % u)
    return false;
  for (int k = 1; k < p->rank; k++)
    if (p->str[0][k] % u || p->str[1][k] % u) return false;
  for (int k = 1; k < p->rank; k++) {
    p->dims[k - 1] = p->dims[k];
    for (int o = 0; o < 2; o++) p->str[o][k - 1] = p->str[o][k] / u;
  }
  p->rank--; p->es *= u; p->numel /= u;
  for (int o = 0; o < 2; o++) p->base[o] /= u;
  return true;
}

/* A source run read backwards (its unit-stride dim reversed) walked the other way in both
 * operands, with the reversed dims that continue it by |stride| (copy_both_run_flips), so that
 * tfe__kbr_runs finds it (it takes none, else): f64 [53r,14,28r,9,4,26] perm [1,0,2,3,4,5],
 * tiles of 14 x 53 whose source run of 53 goes down, had gone to the tile plans' reversed-run
 * path (4.9x the streamed copy; 1.6x so). The destination then walks those dims backwards: its
 * run may still take them (the buffer holds it in address order, tfe__kbr_plan), and C's runs
 * go out upwards. Not where the run starts at the destination's first dim (a reversed run
 * common to both sides). Returns the dims flipped. */
TFE_INTERNAL int tfe__kbr_flip(tfe__kplan *p) {
  int nf = 0;
  for (int64_t m = 1;;) {
    int k = 0;
    while (k < p->rank && tfe__kabs(p->str[1][k]) != m) k++;
    if (k == p->rank || k == 0 || (m == 1 && p->str[1][k] > 0)) return nf;
    if (p->str[1][k] < 0) {
      for (int o = 0; o < 2; o++) { p->base[o] += (p->dims[k] - 1) * p->str[o][k]; p->str[o][k] = -p->str[o][k]; }
      nf++;
    }
    m *= p->dims[k];
  }
}

/* Plans the copy (p fused by tfe__kplan_fuse, op 0 written; a dim of it may be split) as tiles
 * of both runs into *t where tfe__kbr_plan says so (copy_both_run_tile_bytes: the tile's most
 * bytes, 0: off); then the caller runs it (tfe__kbr_run) or not, and frees t->tab
 * (tfe__kbr_drop). False: no plan. */
TFE_INTERNAL bool tfe__kbr_make(tfe__kplan *p, tfe__kbr *t, bool elem) {
  const int64_t maxb0 = tfe__st.tune.copy_both_run_tile_bytes, maxb = maxb0 < TFE__KBR_MAXB ? maxb0 : TFE__KBR_MAXB;
  if (maxb <= 0 || (p->es <= 2 && !tfe__ksimd()) || p->nops != 2 || p->key != 0) return false;
  if (tfe__st.tune.copy_both_run_flips && tfe__kbr_flip(p)) TFE__KSTAT(94);
  const bool unit = tfe__kbr_unit(p, tfe__st.tune.copy_both_run_unit_bytes);
  const int k = tfe__kbr_split_best(p, maxb, tfe__st.tune.copy_both_run_split_bytes);
  bool split = k >= 0 && tfe__kbr_plan(p, maxb, t, elem);
  if (k >= 0 && !split) tfe__kbr_unsplit(p, k); /* (the split's tiles fail a test the whole dims' pass) */
  if (!split && !tfe__kbr_plan(p, maxb, t, elem)) return false;
  if (split) TFE__KSTAT(89);
  if (unit) TFE__KSTAT(90);
  if (t->elem) TFE__KSTAT(91);
  t->base[0] = p->base[0]; t->base[1] = p->base[1]; t->numel = p->numel;
  return true;
}
TFE_INTERNAL void tfe__kbr_drop(tfe__kbr *t) { tfe__free(t->tab); }
/* The most pieces a 1- or 2-byte row block's column is stored in (t's rows in register blocks). */
TFE_INTERNAL int tfe__kbr_pieces(const tfe__kbr *t) {
  int ng = 0;
  for (int i = 0; i < t->nrb; i++) ng = t->rb[i].ng > ng ? t->rb[i].ng : ng;
  return ng;
}

/* Runs plan t of a copy into d from s (the views' data) on nt threads, streamed stores when
 * stream, a fresh destination faulted in first as the tile plans do. */
TFE_INTERNAL void tfe__kbr_run(const tfe__kbr *t, char *d, const char *s, int nt, bool stream, bool fresh) {
  const int64_t es = t->es;
  TFE__KSTAT(es <= 2 ? 85 : 86);
  if (fresh && t->numel * es >= tfe__st.tune.copy_fresh_min_bytes) tfe__kprefault(d, (size_t)(t->numel * es), nt);
  char *d0 = d + t->base[0] * es;
  const char *s0 = s + t->base[1] * es;
  if (t->ntiles < nt) nt = (int)t->ntiles;
  const bool ask = tfe__st.tune.copy_both_run_ask > 0;
  TFE_OMP(parallel num_threads(nt) if (nt > 1))
  {
    _Alignas(64) char buf[TFE__KBR_MAXB];
    int64_t lo, hi;
    tfe__kshare(t->ntiles, &lo, &hi);
    int64_t doff, soff, ndoff = 0, nsoff = 0;
    tfe__kbr_at(t, lo, &doff, &soff);
    for (int64_t u = lo; u < hi; u++) {
      if (u + 1 < hi) tfe__kbr_at(t, u + 1, &ndoff, &nsoff);
      tfe__kbr_tile(t, d0 + doff * es, s0 + soff * es, u + 1 < hi && ask ? s0 + nsoff * es : NULL, buf, stream);
      doff = ndoff; soff = nsoff;
    }
    if (stream) tfe__ksfence();
  }
}
#endif
