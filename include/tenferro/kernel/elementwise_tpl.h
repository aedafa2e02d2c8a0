/* tenferro/kernel/elementwise_tpl.h — the elementwise engine of one kind, under map, zip,
 * fill, scale, axpby and the final combine of reductions: dst[idx] = body(in0[idx], in1[idx])
 * with up to two inputs broadcast to dst's dims, run over the tiles of a plan (plain blocks,
 * transpose tiles, gather tiles). Re-included per kind through kernel_tpl.h, after
 * copy_tpl.h (whose k_prefetch_rows_ and k_gather_col_ it uses); no include guard. */
#if !TFE__BODY_PHASE
/* (no public declarations: the engine is internal; its types come with the bodies) */
#else /* bodies */
/* ==== the elementwise engine ==============================================================
 * dst[idx] = body(in0[idx], in1[idx]) over contiguous runs: inputs that are not unit-stride
 * (or need conjugation) are gathered into buffers, the body runs on contiguous arrays (so it
 * vectorizes), and a non-unit or conjugated destination is scattered back. */
typedef void (*TFE_TY(kbody_))(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b);

typedef struct TFE_TY(kew_) {
  TFE_T *d;
  const TFE_T *in[2];
  bool cj_in[2], cj_out;
  int nin;
  TFE_TY(kbody_) body;
  void *bctx;
  bool nt; /* stream transpose-tile results past the cache (large outputs) */
  TFE_T *scratch;       /* transpose tiles: whole-tile buffers, per thread and input */
  int64_t tile_elems;   /* elements of one such buffer (0: no scratch, strips on the stack) */
  int64_t *last;        /* gather tiles: per thread (8 slots) the tile each column cache holds */
  int fop;              /* TFE__KFU_*: the body as an op the 8x8 transpose can apply (f64) */
} TFE_TY(kew_);

/* Elements per operand buffer of the engine (8 KiB, at least 64); of a transpose strip on
 * the stack (8 columns of up to TFE__KCOL elements); and of a column buffer (the longest G0
 * block of an elementwise tile). */
#define TFE__KBUF (8192 / sizeof(TFE_T) < 64 ? 64 : 8192 / sizeof(TFE_T))
#define TFE__KSTRIP (16384 / sizeof(TFE_T) < 128 ? 128 : 16384 / sizeof(TFE_T))
#define TFE__KCOL (4096 / sizeof(TFE_T) < 64 ? 64 : 4096 / sizeof(TFE_T))

/* Gather rows [i0, i1) x columns [j0 + c0, j0 + c1) of input op's part of a transpose tile
 * into buf (entry (i, c) at i + c*n0, c counted from j0) in 8x8 blocks, so the strided
 * reads use whole lines (see k_copy_blocks_). Any group layout. */
TFE_INTERNAL void TFE_FN(k_gather_blocks_)(const tfe__kplan *p, int op, const TFE_T *s, bool cj, TFE_T *buf,
                                           int64_t n0, int64_t j0, int64_t i0, int64_t i1,
                                           int64_t c0, int64_t c1) {
  bool fast = TFE__KHAVE_TR8 && tfe__ksimd() && sizeof(TFE_T) == 8 && !cj && p->g[1].arith[op] && p->g[1].step[op] == 1;
  (void)fast;
  for (int64_t ib = i0; ib < i1; ib += 8) {
    int bi = i1 - ib < 8 ? (int)(i1 - ib) : 8;
    const TFE_T *srow[8];
    for (int i = 0; i < bi; i++) srow[i] = s + TFE__KOFF(p, 0, op, ib + i);
    for (int64_t jb = c0; jb < c1; jb += 8) {
      int bj = c1 - jb < 8 ? (int)(c1 - jb) : 8;
#if TFE__KHAVE_TR8
      if (fast && bi == 8 && bj == 8) {
        void *dcol[8];
        const void *sr[8];
        for (int j = 0; j < 8; j++) dcol[j] = buf + (jb + j) * n0 + ib;
        for (int i = 0; i < 8; i++) sr[i] = srow[i] + j0 + jb;
        tfe__ktr8(dcol, sr, false);
        continue;
      }
#endif
      for (int j = 0; j < bj; j++) {
        TFE_T *dj = buf + (jb + j) * n0 + ib;
        int64_t so = TFE__KOFF(p, 1, op, j0 + jb + j);
        for (int i = 0; i < bi; i++) dj[i] = cj ? TFE_FN(sr_conj)(srow[i][so]) : srow[i][so];
      }
    }
  }
}

/* Gather columns [j0, j0 + nj) of a transposed input (all n0 rows) into buf. When both
 * groups are one arithmetic step with a unit step along G1 (the usual transpose), the
 * multiple-of-8 part runs strided 8x8 register blocks, row block by row block (the copy's
 * order: each source row is read along its lines before moving on); rims and other layouts
 * go through k_gather_blocks_. */
TFE_INTERNAL void TFE_FN(k_gather_tile_)(const tfe__kplan *p, int op, const TFE_T *s, bool cj,
                                         TFE_T *buf, int64_t n0, int64_t j0, int64_t nj) {
  int64_t m0 = 0, m1 = 0;
#if TFE__KHAVE_TR8
  if (tfe__ksimd() && sizeof(TFE_T) == 8 && !cj && p->g[0].arith[op] && p->g[1].arith[op] && p->g[1].step[op] == 1) {
    int64_t lds = p->g[0].step[op];
    const double *ss = (const double *)(const void *)(s + j0);
    double *bb = (double *)(void *)buf;
    m0 = n0 & ~(int64_t)7; m1 = nj & ~(int64_t)7;
    const int pf = tfe__st.tune.kernel_prefetch_strips;
    for (int64_t ib = 0; ib < m0; ib += 8) {
      TFE_FN(k_prefetch_rows_)(p, op, s + j0, ib + 8 * pf, 8, n0, nj);
      tfe__ktr8s_row(bb + ib, n0, ss + ib * lds, lds, m1, false);
    }
  }
#endif
  if (m1 < nj) TFE_FN(k_gather_blocks_)(p, op, s, cj, buf, n0, j0, 0, m0, m1, nj);
  if (m0 < n0) TFE_FN(k_gather_blocks_)(p, op, s, cj, buf, n0, j0, m0, n0, 0, nj);
}

/* While column c of a transpose tile runs, prefetch column c + 2 of the inputs read in
 * place (the next tile's first columns near the end). Their runs are only n0 elements
 * long, spread over many columns, too short for the hardware prefetcher to ramp up; a
 * short distance keeps the prefetched lines from being evicted by the other columns (with
 * power-of-two strides they all map to the same cache sets). */
TFE_INTERNAL void TFE_FN(k_ew_prefetch_)(const TFE_TY(kew_) *e, const tfe__kplan *p, const TFE_T *const *s,
                                         const int *mode, int64_t c, int64_t n0, int64_t n1) {
  if (!tfe__st.tune.kernel_prefetch_strips) return;
  int64_t line = 64 / (int64_t)sizeof(TFE_T) > 0 ? 64 / (int64_t)sizeof(TFE_T) : 1, j = c + 2;
  bool next = j >= n1;
  if (next && (p->no == 0 || p->oclip[0] != 1)) return;
  if (next) j -= n1;
  for (int k = 0; k < e->nin; k++) {
    if (mode[k] != 0) continue;
    const TFE_T *q = s[k] + (next ? p->ostep[k + 1][0] : 0) + TFE__KOFF(p, 1, k + 1, j);
    for (int64_t i = 0; i < n0; i += line) __builtin_prefetch(q + i, 0, 3);
  }
}

#if TFE__KHAVE_TR8
/* Rims of a fused tile (rows [i0, n0) of columns [j0, j1)): the transposed input's elements
 * gathered into a column buffer, the body on that and the other input in place, written
 * straight to the destination. */
TFE_INTERNAL void TFE_FN(k_ew_fused_rim_)(const TFE_TY(kew_) *e, const TFE_T *src, int64_t lds,
                                          const TFE_T *oth, int64_t ldo, int tk, TFE_T *d,
                                          int64_t ldd, int64_t i0, int64_t n0, int64_t j0, int64_t j1) {
  TFE_T x[TFE__KCOL];
  for (int64_t j = j0; j < j1; j++) {
    for (int64_t i = i0; i < n0; i++) x[i - i0] = src[i * lds + j];
    const TFE_T *in[2] = {x, x};
    if (oth) in[1 - tk] = oth + j * ldo + i0;
    e->body(e->bctx, n0 - i0, d + j * ldd + i0, in[0], in[1]);
  }
}

/* A transpose tile of f64 whose body is a built-in op (e->fop), when the destination is
 * unit-stride along G0, exactly one input is transposed (arithmetic groups, unit step along
 * G1, not conjugated) and the other, if any, is read in place: each 8x8 block goes source
 * -> registers -> op (with the other input's 8 columns loaded next to it) -> destination,
 * with no tile buffer; rims run the body on gathered columns. False: not this tile. */
TFE_INTERNAL bool TFE_FN(k_ew_fused_)(const TFE_TY(kew_) *e, const tfe__kplan *p, const tfe__ktile *t,
                                      const TFE_T *const *s, const int *mode, TFE_T *d) {
  if (!e->fop || tfe__kfuse_mode() < e->nin % 2 + 1 || sizeof(TFE_T) != 8 || e->cj_out) return false;
  if (!p->g[0].arith[0] || p->g[0].step[0] != 1 || !p->g[1].arith[0]) return false;
  int tk = -1;
  for (int k = 0; k < e->nin; k++) {
    if (mode[k] == 1 && tk < 0) tk = k;
    else if (mode[k] != 0 || !p->g[1].arith[k + 1]) return false;
  }
  if (tk < 0 || e->cj_in[tk] || !p->g[0].arith[tk + 1] || !p->g[1].arith[tk + 1] || p->g[1].step[tk + 1] != 1)
    return false;
  int64_t n0 = t->n0, n1 = t->n1, m0 = n0 & ~(int64_t)7, m1 = n1 & ~(int64_t)7;
  int64_t lds = p->g[0].step[tk + 1], ldd = p->g[1].step[0];
  const TFE_T *oth = e->nin == 2 ? s[1 - tk] : NULL;
  int64_t ldo = e->nin == 2 ? p->g[1].step[1 - tk + 1] : 0;
  const double *ss = (const double *)(const void *)s[tk], *oo = (const double *)(const void *)oth;
  double *dd = (double *)(void *)d;
  const int pfs = tfe__st.tune.kernel_prefetch_strips;
  if (oth) { /* zip: block column by block column, the other input and the destination
               * walked down their columns (faster than row order: docs/bench-kernel.md) */
    /* software prefetch, kernel_prefetch_strips ahead down the column block: the transposed
     * input's 8 rows and the other input's 8 columns (neither is a stream the hardware
     * prefetchers follow) */
    int64_t pf = 8 * pfs;
    for (int64_t jb = 0; jb < m1; jb += 8)
      for (int64_t ib = 0; ib < m0; ib += 8) {
        if (pf && ib + pf < m0)
          for (int i = 0; i < 8; i++) __builtin_prefetch(ss + (ib + pf + i) * lds + jb, 0, 3);
        if (pf && ib + pf < m0)
          for (int j = 0; j < 8; j++) __builtin_prefetch(oo + (jb + j) * ldo + ib + pf, 0, 3);
        tfe__ktr8f(dd + jb * ldd + ib, ldd, ss + ib * lds + jb, lds, oo + jb * ldo + ib, ldo, e->fop, tk == 0, e->nt);
      }
  } else { /* map: row block by row block, source rows along their lines */
    for (int64_t ib = 0; ib < m0; ib += 8) {
      TFE_FN(k_prefetch_rows_)(p, tk + 1, s[tk], ib + 8 * pfs, 8, n0, n1);
      for (int64_t jb = 0; jb < m1; jb += 8)
        tfe__ktr8f(dd + jb * ldd + ib, ldd, ss + ib * lds + jb, lds, NULL, 0, e->fop, tk == 0, e->nt);
    }
  }
  if (m0 < n0) TFE_FN(k_ew_fused_rim_)(e, s[tk], lds, oth, ldo, tk, d, ldd, m0, n0, 0, m1);
  if (m1 < n1) TFE_FN(k_ew_fused_rim_)(e, s[tk], lds, oth, ldo, tk, d, ldd, 0, n0, m1, n1);
  if (m0 && m1) tfe__kstat_add(4);
  return true;
}
#endif

/* A transpose tile (n0 x n1: G0 runs along the destination, G1 along a transposed input),
 * done in strips of as many columns as a strip buffer holds (the whole tile for the usual
 * shapes). A transposed input is brought into the strip buffer through 8x8 blocks, row
 * block by row block (whole cache lines, the copy's order); then the body runs column by column on
 * contiguous arrays: inputs that are unit-stride along G0 are read in place, others
 * (broadcast, conjugated, strided) go through a column buffer. The result goes straight to
 * a unit-stride destination, or through a column buffer (streamed past the cache for large
 * outputs, conjugated or scattered where needed). */
TFE_INTERNAL void TFE_FN(k_ew_tile2_)(const TFE_TY(kew_) *e, const tfe__kplan *p, const tfe__ktile *t) {
  TFE_T stack[2][TFE__KSTRIP], col[3][TFE__KCOL], *strip[2] = {stack[0], stack[1]};
  int64_t n0 = t->n0, n1 = t->n1, strip_max = tfe__st.tune.elementwise_strip_elems;
  int64_t cap = strip_max < (int64_t)TFE__KSTRIP ? strip_max : (int64_t)TFE__KSTRIP;
  int64_t sw = cap / n0 >= 8 ? cap / n0 / 8 * 8 : cap / n0; /* strip width: whole 8x8 blocks */
  if (sw < 1) sw = 1;
  if (e->tile_elems) { /* the whole tile at once, gathered row block by row block */
    for (int k = 0; k < e->nin; k++) strip[k] = e->scratch + (t->tid * 2 + k) * e->tile_elems;
    sw = n1;
  }
  const TFE_T *s[2] = {NULL, NULL};
  int mode[2] = {0, 0}; /* 0: in place, 1: transposed (strip), 2: column buffer */
  for (int k = 0; k < e->nin; k++) {
    s[k] = e->in[k] + t->off[k + 1];
    bool ar = p->g[0].arith[k + 1];
    int64_t st = p->g[0].step[k + 1];
    mode[k] = !(ar && (st == 0 || st == 1)) ? 1 : (st == 1 && !e->cj_in[k]) ? 0 : 2;
  }
  TFE_T *d = e->d + t->off[0];
#if TFE__KHAVE_TR8
  if (tfe__ksimd() && TFE_FN(k_ew_fused_)(e, p, t, s, mode, d)) return;
#endif
  bool direct = !e->cj_out && p->g[0].arith[0] && p->g[0].step[0] == 1 && !e->nt;
  for (int64_t jb = 0; jb < n1; jb += sw) {
    int64_t nj = n1 - jb < sw ? n1 - jb : sw;
    for (int k = 0; k < e->nin; k++)
      if (mode[k] == 1) TFE_FN(k_gather_tile_)(p, k + 1, s[k], e->cj_in[k], strip[k], n0, jb, nj);
    for (int64_t c = 0; c < nj; c++) {
      int64_t j = jb + c;
      const TFE_T *in[2] = {NULL, NULL};
      TFE_FN(k_ew_prefetch_)(e, p, s, mode, j, n0, n1);
      for (int k = 0; k < e->nin; k++) {
        const TFE_T *sj = s[k] + TFE__KOFF(p, 1, k + 1, j);
        if (mode[k] == 0) { in[k] = sj; continue; }
        if (mode[k] == 1) { in[k] = strip[k] + c * n0; continue; }
        int64_t st = p->g[0].step[k + 1]; /* 0 or 1 */
        for (int64_t i = 0; i < n0; i++) col[k + 1][i] = e->cj_in[k] ? TFE_FN(sr_conj)(sj[i * st]) : sj[i * st];
        in[k] = col[k + 1];
      }
      TFE_T *dj = d + TFE__KOFF(p, 1, 0, j);
      e->body(e->bctx, n0, direct ? dj : col[0], in[0], in[1]);
      if (direct) continue;
      if (!e->cj_out && p->g[0].arith[0] && p->g[0].step[0] == 1) {
        tfe__kstream(dj, col[0], (size_t)n0 * sizeof(TFE_T));
        continue;
      }
      for (int64_t i = 0; i < n0; i++)
        dj[TFE__KOFF(p, 0, 0, i)] = e->cj_out ? TFE_FN(sr_conj)(col[0][i]) : col[0][i];
    }
  }
}

/* Prefetch every line the distinct columns of input op read in a gather tile: the lines
 * come from far caches or memory and the gathers that follow would otherwise wait for them
 * a few at a time. */
TFE_INTERNAL void TFE_FN(k_prefetch_cols_)(const tfe__kplan *p, int op, const TFE_T *s, int64_t n0, int64_t n1) {
  const tfe__kgroup *g1 = &p->g[1];
  bool done[TFE__KTAB_STD] = {false};
  for (int64_t j = 0; j < n1; j++) {
    int c = g1->cid[op][j];
    if (done[c]) continue;
    done[c] = true;
    const TFE_T *q = s + TFE__KOFF(p, 1, op, j);
    for (int64_t i = 0; i < n0; i++) __builtin_prefetch(q + TFE__KOFF(p, 0, op, i), 0, 3);
  }
}

/* Whether input k of a gather tile goes through a column cache: it is not read in place,
 * it repeats across G1 (fewer distinct columns than columns) and its columns fit. */
TFE_INTERNAL bool TFE_FN(k_ew_cached_)(const TFE_TY(kew_) *e, const tfe__kplan *p, int k) {
  int64_t m = p->g[1].ncid[k + 1];
  if (!e->tile_elems || m <= 0 || m >= p->g[1].len || m * p->g[0].len > e->tile_elems) return false;
  return e->cj_in[k] || !p->g[0].arith[k + 1] || p->g[0].step[k + 1] != 1;
}

#if TFE__KHAVE_TR8
/* A plain block of a large f64 output whose body is a fusable op and whose inputs are
 * unit-stride or broadcast (stride 0) along G0, not conjugated: computed and streamed in
 * one pass per column (tfe__kfu_row). False: not this block. */
TFE_INTERNAL bool TFE_FN(k_ew_row_)(const TFE_TY(kew_) *e, const tfe__kplan *p, const tfe__ktile *t) {
  if (!e->fop || sizeof(TFE_T) != 8 || e->nin < 1) return false;
  for (int k = 0; k < e->nin; k++)
    if (e->cj_in[k] || !p->g[0].arith[k + 1] || (p->g[0].step[k + 1] != 0 && p->g[0].step[k + 1] != 1)) return false;
  int k1 = e->nin - 1;
  for (int64_t j = 0; j < t->n1; j++) {
    const double *x = (const double *)(const void *)(e->in[0] + t->off[1] + TFE__KOFF(p, 1, 1, j));
    const double *y = (const double *)(const void *)(e->in[k1] + t->off[k1 + 1] + TFE__KOFF(p, 1, k1 + 1, j));
    double *d = (double *)(void *)(e->d + t->off[0] + TFE__KOFF(p, 1, 0, j));
    tfe__kfu_row(d, t->n0, x, p->g[0].step[1] == 0, y, p->g[0].step[k1 + 1] == 0, e->fop);
  }
  tfe__kstat_add(6);
  return true;
}
#endif

/* A plain block (n1 = 1) or a gather tile, column by column: inputs unit-stride along G0
 * are read in place, the others gathered through their G0 tables into column buffers; the
 * body runs on contiguous arrays and writes a unit-stride destination directly (a gather
 * tile of a large output: through a buffer streamed past the cache). */
TFE_INTERNAL void TFE_FN(k_ew_tile_)(void *ctx, const tfe__kplan *p, const tfe__ktile *t) {
  const TFE_TY(kew_) *e = (const TFE_TY(kew_) *)ctx;
  if (p->g[1].nd > 0 && !p->gather) { TFE_FN(k_ew_tile2_)(e, p, t); return; }
  TFE_T buf[3][TFE__KBUF], *cache[2] = {NULL, NULL};
  int64_t n0 = t->n0;
  bool unit = !e->cj_out && p->g[0].arith[0] && p->g[0].step[0] == 1;
  /* large outputs: through an L1 buffer streamed past the cache (a normal store would read
   * each line first) */
  bool direct = unit && !(e->nt && (p->gather || tfe__st.tune.elementwise_stream_blocks));
#if TFE__KHAVE_TR8
  if (unit && !direct && !p->gather && tfe__ksimd() && TFE_FN(k_ew_row_)(e, p, t)) return;
#endif
  if (unit && !direct && !p->gather) tfe__kstat_add(5);
  const tfe__kgroup *g1 = &p->g[1];
  for (int k = 0; k < e->nin && p->gather; k++) { /* inputs reused across columns: gather once */
    if (!TFE_FN(k_ew_cached_)(e, p, k)) continue;
    bool done[TFE__KTAB_STD] = {false};
    cache[k] = e->scratch + (t->tid * 2 + k) * e->tile_elems;
    /* consecutive tiles that differ only along dims where this input does not move (the
     * odometer runs those first) find its columns already there */
    int64_t *last = e->last ? e->last + t->tid * 8 + k * 3 : NULL;
    if (last && last[0] == t->off[k + 1] && last[1] == n0 && last[2] == t->n1) continue;
    if (last) { last[0] = t->off[k + 1]; last[1] = n0; last[2] = t->n1; }
    if (tfe__st.tune.kernel_prefetch_strips) TFE_FN(k_prefetch_cols_)(p, k + 1, e->in[k] + t->off[k + 1], n0, t->n1);
    for (int64_t j = 0; j < t->n1; j++) {
      int c = g1->cid[k + 1][j];
      if (done[c]) continue;
      done[c] = true;
      TFE_FN(k_gather_col_)(p, k + 1, e->in[k] + t->off[k + 1] + TFE__KOFF(p, 1, k + 1, j), e->cj_in[k],
                            cache[k] + c * n0, n0, false, false);
    }
  }
  for (int64_t j = 0; j < t->n1; j++) {
    const TFE_T *in[2] = {NULL, NULL};
    for (int k = 0; k < e->nin; k++) {
      if (cache[k]) { in[k] = cache[k] + g1->cid[k + 1][j] * n0; continue; }
      const TFE_T *s = e->in[k] + t->off[k + 1] + TFE__KOFF(p, 1, k + 1, j);
      if (!e->cj_in[k] && p->g[0].arith[k + 1] && p->g[0].step[k + 1] == 1) { in[k] = s; continue; }
      TFE_FN(k_gather_col_)(p, k + 1, s, e->cj_in[k], buf[k + 1], n0, false, false);
      in[k] = buf[k + 1];
    }
    TFE_T *d = e->d + t->off[0] + TFE__KOFF(p, 1, 0, j);
    e->body(e->bctx, n0, direct ? d : buf[0], in[0], in[1]);
    if (direct) continue;
    if (unit) { tfe__kstream(d, buf[0], (size_t)n0 * sizeof(TFE_T)); continue; }
    for (int64_t i = 0; i < n0; i++)
      d[TFE__KOFF(p, 0, 0, i)] = e->cj_out ? TFE_FN(sr_conj)(buf[0][i]) : buf[0][i];
  }
}

/* Tiny path: one element at a time in odometer order. */
TFE_INTERNAL void TFE_FN(k_ew_odo_)(const TFE_TY(kew_) *e, const tfe_layout *dl,
                                    const tfe_layout *const *il) {
  int r = dl->rank;
  int64_t idx[TFE_MAX_RANK] = {0};
  TFE_T *d = e->d + dl->offset;
  const TFE_T *s[2] = {NULL, NULL};
  for (int k = 0; k < e->nin; k++) s[k] = e->in[k] + il[k]->offset;
  for (;;) {
    TFE_T x[2], y;
    for (int k = 0; k < e->nin; k++) x[k] = e->cj_in[k] ? TFE_FN(sr_conj)(*s[k]) : *s[k];
    e->body(e->bctx, 1, &y, x, x + 1);
    *d = e->cj_out ? TFE_FN(sr_conj)(y) : y;
    int k = 0;
    for (; k < r; k++) {
      if (++idx[k] < dl->dims[k]) {
        d += dl->strides[k];
        for (int m = 0; m < e->nin; m++) s[m] += il[m]->strides[k];
        break;
      }
      d -= (dl->dims[k] - 1) * dl->strides[k];
      for (int m = 0; m < e->nin; m++) s[m] -= (dl->dims[k] - 1) * il[m]->strides[k];
      idx[k] = 0;
    }
    if (k == r) return;
  }
}

/* Validate dst and up to two inputs (broadcast to dst's dims), then run body. */
TFE_INTERNAL tfe_status TFE_FN(k_ew2_)(const char *where, const TFE_TY(view) *dst, int nin,
                                       const TFE_TY(view) *a, const TFE_TY(view) *b,
                                       TFE_TY(kbody_) body, void *bctx, int fop) {
  const TFE_TY(view) *in[2] = {a, b};
  const char *names[2] = {"first input", "second input"};
  tfe_layout bl[2];
  if (!dst) return tfe__fail(TFE_ERR_NULL, where, "argument 'dst' is NULL");
  for (int k = 0; k < nin; k++) {
    if (!in[k]) return tfe__fail(TFE_ERR_NULL, where, "%s is NULL", names[k]);
    TFE_TRY(tfe__check_layout(&in[k]->lay, in[k]->data, where, names[k], NULL));
  }
  int64_t n = 0;
  TFE_TRY(tfe__check_dst(&dst->lay, dst->data, where, &n));
  for (int k = 0; k < nin; k++) {
    TFE_TRY(tfe__broadcast(&in[k]->lay, &dst->lay, &bl[k], where, names[k]));
    if (n > 0 && tfe__views_conflict(dst->data, &dst->lay, in[k]->data, &bl[k], sizeof(TFE_T)))
      return tfe__fail(TFE_ERR_OVERLAP, where, "destination overlaps the %s", names[k]);
  }
  if (n == 0) return TFE_OK;
  TFE_TY(kew_) e = {dst->data, {NULL, NULL}, {false, false}, false, nin, body, bctx, false, NULL, 0, NULL, fop};
#if !(TFE_ALG == TFE_ALG_STANDARD && !TFE_CPLX)
  e.cj_out = dst->conj;
#endif
  for (int k = 0; k < nin; k++) {
    e.in[k] = in[k]->data;
#if !(TFE_ALG == TFE_ALG_STANDARD && !TFE_CPLX)
    e.cj_in[k] = in[k]->conj;
#endif
  }
  const tfe_tuning *tu = &tfe__st.tune;
  /* (plans are some 50 KB: not on the stack; no memory for one: plain loops, same result) */
  tfe__kplan *p = n > tu->kernel_small_elems ? (tfe__kplan *)tfe__alloc(sizeof *p) : NULL;
  if (!p) {
    const tfe_layout *il[2] = {&bl[0], &bl[1]};
    TFE_FN(k_ew_odo_)(&e, &dst->lay, il);
    return TFE_OK;
  }
  const int64_t *str[3] = {dst->lay.strides, bl[0].strides, bl[1].strides};
  int64_t off[3] = {dst->lay.offset, bl[0].offset, bl[1].offset};
  /* a transpose tile spans elementwise_tile_bytes along the transposed input (G1; 0: 2 KiB
   * where ops fuse, else 1 KiB, as measured best: docs/bench-kernel.md), or
   * elementwise_fused_map_tile_bytes for a fused map, and elementwise_run_bytes along the
   * destination (G0, at most a column buffer) */
  bool fmap = fop && nin == 1 && sizeof(TFE_T) == 8 && tfe__ksimd() && tfe__kfuse_mode() >= 2; /* a fused map (k_ew_fused_) */
  int64_t ewt = tu->elementwise_tile_bytes > 0 ? tu->elementwise_tile_bytes : tfe__kcpu_fuses() ? 2048 : 1024;
  int64_t kb = (int64_t)TFE__KBUF, t1 = (fmap ? tu->elementwise_fused_map_tile_bytes : ewt) / (int64_t)sizeof(TFE_T);
  int64_t t0 = tu->elementwise_run_bytes / (int64_t)sizeof(TFE_T);
  if (t1 < 8) t1 = 8;
  if (t0 < 8) t0 = 8;
  if (t0 > (int64_t)TFE__KCOL) t0 = (int64_t)TFE__KCOL;
  int64_t tg = tu->elementwise_gather_bytes / (int64_t)sizeof(TFE_T);
  tg = tg < 8 ? 8 : tg > (int64_t)TFE__KCOL ? (int64_t)TFE__KCOL : tg;
  tfe__kplan_make(p, nin + 1, 0, dst->lay.rank, dst->lay.dims, str, off, kb, t0, t1, tg, false, (int64_t)sizeof(TFE_T), false);
  e.nt = n * (int64_t)sizeof(TFE_T) >= tu->kernel_stream_min_bytes;
  int nt = tfe__kthreads(n);
  int64_t strip_max = tu->elementwise_strip_elems;
  int64_t cap = strip_max < (int64_t)TFE__KSTRIP ? strip_max : (int64_t)TFE__KSTRIP;
  if (p->gather && tu->elementwise_tile_buffers) { /* column caches of gather tiles (per thread and input) */
    for (int k = 0; k < nin; k++) {
      int64_t m = p->g[1].ncid[k + 1] * p->g[0].len;
      if (p->g[1].ncid[k + 1] < p->g[1].len && m <= tu->elementwise_column_cache_elems && m > e.tile_elems) e.tile_elems = m;
    }
    if (e.tile_elems) {
      e.scratch = (TFE_T *)tfe__alloc((size_t)(2 * nt) * (size_t)e.tile_elems * sizeof(TFE_T));
      e.last = (int64_t *)tfe__alloc((size_t)(8 * nt) * sizeof(int64_t));
      for (int64_t i = 0; e.last && i < 8 * nt; i++) e.last[i] = -1; /* n0 = -1: nothing held */
    }
    if (!e.scratch) e.tile_elems = 0;
  }
  if (p->gather) { TFE__KSTAT(0); if (e.tile_elems) TFE__KSTAT(1); }
  if (p->g[1].nd > 0 && !p->gather && tu->elementwise_tile_buffers && p->g[0].len * p->g[1].len > cap) {
    /* tiles above the stack strip: whole-tile buffers (without them, or when the
     * allocation fails, strips of the tile on the stack: slower, same result) */
    e.tile_elems = p->g[0].len * p->g[1].len;
    e.scratch = (TFE_T *)tfe__alloc((size_t)(2 * nt) * (size_t)e.tile_elems * sizeof(TFE_T));
    if (!e.scratch) e.tile_elems = 0;
  }
  tfe__kplan_run(p, TFE_FN(k_ew_tile_), &e, nt);
  tfe__free(e.scratch);
  tfe__free(e.last);
  tfe__free(p);
  return TFE_OK;
}
/* The same without a fusable op. */
TFE_INTERNAL tfe_status TFE_FN(k_ew_)(const char *where, const TFE_TY(view) *dst, int nin,
                                      const TFE_TY(view) *a, const TFE_TY(view) *b,
                                      TFE_TY(kbody_) body, void *bctx) {
  return TFE_FN(k_ew2_)(where, dst, nin, a, b, body, bctx, TFE__KFU_NONE);
}
#undef TFE__KBUF
#undef TFE__KSTRIP
#undef TFE__KCOL
#endif
