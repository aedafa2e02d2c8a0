/* tenferro/kernel/copy_tpl.h — copy, conj_copy and contiguous of one kind: the planned
 * strided copy (plain blocks, transpose tiles through register blocks, gather tiles, run
 * copies, buffered tiles for streamed outputs). Re-included per kind through kernel_tpl.h (no
 * include guard). Parameters: TFE_S, TFE_T, TFE_R, TFE_ALG, TFE_CPLX, TFE_FLOAT. Generic code
 * uses only the tfe_sr_* semiring functions so that a user kind (TFE_ALG_CUSTOM) stamps too. */
#if !TFE__BODY_PHASE

/* Copy src into dst (same dims). src may have any strides; the result read through dst
 * (honouring dst->conj) equals src read through src->conj. */
TFE_API tfe_status TFE_FN(copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src);

/* Copy with conjugation: reading dst gives conj(src). */
TFE_API tfe_status TFE_FN(conj_copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src);

/* A new dense tensor (column- or row-major) holding the values of src, conjugation applied
 * (the result has conj = false). *out is written only on success. */
TFE_API tfe_status TFE_FN(contiguous)(const TFE_TY(view) *src, tfe_order order, TFE_TY(tensor) *out);
#else /* bodies */
typedef struct TFE_TY(kcopy_) {
  TFE_T *d;
  const TFE_T *s;
  bool cj, nt;
  TFE_T *buf;       /* per-thread tile buffers (tile_elems each) of k_copy_buffered_, or NULL */
  int64_t tile_elems;
  const TFE_T *s_end; /* one past the last source element the view reaches (NULL: unknown) */
  bool skew12;        /* buf holds k_copy_skew12_'s column registers (tiles it declines: unbuffered) */
  int64_t chain;      /* buffered tiles: G1 column step m > 1 after which a destination column
                       * follows the previous one (k_chain_step_; 0: none) */
  int rrw;            /* columns of records read backwards: rrix's register width (0: none) */
  _Alignas(64) uint8_t rrix[64]; /* (tfe__krev_recs_prep's permute) */
} TFE_TY(kcopy_);

/* One past the last element view v reaches (its data plus the largest offset of its layout). */
TFE_INTERNAL const TFE_T *TFE_FN(k_view_end_)(const TFE_TY(view) *v) {
  int64_t hi = v->lay.offset;
  for (int k = 0; k < v->lay.rank; k++)
    if (v->lay.strides[k] > 0) hi += (v->lay.dims[k] - 1) * v->lay.strides[k];
  return v->data + hi + 1;
}

/* Whether reading src and writing dst needs a conjugation (the conj flags differ). */
TFE_INTERNAL bool TFE_FN(k_conj_)(bool dst_conj, bool src_conj) {
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_CPLX
  (void)dst_conj; (void)src_conj;
  return false;
#else
  return dst_conj != src_conj;
#endif
}

/* ==== copy ================================================================================ */

/* Plain odometer copy: the short path for tiny tensors. */
TFE_INTERNAL void TFE_FN(k_copy_odo_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, bool cj) {
  int r = dst->lay.rank;
  int64_t idx[TFE_MAX_RANK] = {0};
  TFE_T *d = dst->data + dst->lay.offset;
  const TFE_T *s = src->data + src->lay.offset;
  for (;;) {
    *d = cj ? TFE_FN(sr_conj)(*s) : *s;
    int k = 0;
    for (; k < r; k++) {
      if (++idx[k] < dst->lay.dims[k]) { d += dst->lay.strides[k]; s += src->lay.strides[k]; break; }
      d -= (dst->lay.dims[k] - 1) * dst->lay.strides[k];
      s -= (src->lay.dims[k] - 1) * src->lay.strides[k];
      idx[k] = 0;
    }
    if (k == r) return;
  }
}

/* Strided tile rows miss every cache level and no hardware prefetcher follows them: ask for
 * the `rows` rows starting at `row` (kernel_prefetch_strips ahead of use; 0: off) along G1 in
 * advance. k_prefetch_run_rows_: the same without the checks, for callers whose rows are
 * runs of n1 ascending from s (the buffered and skewed tiles, reversed runs read ascending). */
TFE_INTERNAL void TFE_FN(k_prefetch_run_rows_)(const tfe__kplan *p, int op, const TFE_T *s, int64_t row,
                                               int64_t rows, int64_t n0, int64_t n1) {
  int64_t line = 64 / (int64_t)sizeof(TFE_T) > 0 ? 64 / (int64_t)sizeof(TFE_T) : 1;
  for (int64_t i = row; i < row + rows && i < n0; i++) {
    const TFE_T *r = s + TFE__KOFF(p, 0, op, i);
    for (int64_t j = 0; j < n1; j += line) tfe__kpf(r + j);
  }
}
/* The next tile's source (one odometer step on from s, or nxo where a chain of tiles ends:
 * k_chain_next_) whose rows a transpose tile asks for while it works (copy_next_prefetch), or
 * NULL. */
TFE_INTERNAL const TFE_T *TFE_FN(k_buf_next_src_)(const tfe__kplan *p, const TFE_T *s, int64_t n1, int64_t nxo) {
  const bool next = tfe__st.tune.copy_next_prefetch && p->no > 0 && p->ocount[0] >= 2 && (!p->nchain || nxo) && n1 >= 8;
  return next ? s + (p->nchain ? nxo : p->ostep[1][0]) : NULL; /* (ostep unset without an odometer) */
}
/* Ask for rows [i0, i1) of the next tile's source (ns; rows of n1 at G0's source offsets, or
 * i * lds apart without a plan: k_copy_st_) into L2. Two loops: one with the plan-or-stride
 * test inside ran the asks at half the effect (a 1.4x slower u16 batch, session 49). */
TFE_INTERNAL void TFE_FN(k_ask_next_rows_)(const tfe__kplan *p, const TFE_T *ns, int64_t i0, int64_t i1, int64_t n1) {
  const int64_t line = 64 / (int64_t)sizeof(TFE_T);
  for (int64_t i = i0; i < i1; i++) {
    const TFE_T *r = ns + TFE__KOFF(p, 0, 1, i);
    for (int64_t j = 0; j < n1; j += line) __builtin_prefetch(r + j, 0, 2);
  }
}
TFE_INTERNAL void TFE_FN(k_ask_next_st_)(const TFE_T *ns, int64_t lds, int64_t i0, int64_t i1, int64_t n1) {
  const int64_t line = 64 / (int64_t)sizeof(TFE_T);
  for (int64_t i = i0; i < i1; i++)
    for (int64_t j = 0; j < n1; j += line) __builtin_prefetch(ns + i * lds + j, 0, 2);
}
/* The next share of ns's n0 rows (copy_next_spread): call *call + 1 of calls asks rows [*asked,
 * n0 * (*call + 1) / calls), so that the last call has asked them all; p NULL: rows lds apart. */
TFE_INTERNAL void TFE_FN(k_ask_share_)(const tfe__kplan *p, const TFE_T *ns, int64_t lds, int64_t n0, int64_t n1,
                                       int64_t *call, int64_t calls, int64_t *asked, bool buffered) {
  if (!ns || *call >= calls) return;
  if (++*call == 1) tfe__kstat_add(buffered ? 87 : 88);
  const int64_t to = n0 * *call / calls;
  if (p) TFE_FN(k_ask_next_rows_)(p, ns, *asked, to, n1);
  else TFE_FN(k_ask_next_st_)(ns, lds, *asked, to, n1);
  *asked = to;
}
/* k_buf_next_src_ for transpose tiles of register blocks that ask a share of it before each
 * block (1- and 2-byte kinds) or row of blocks (the others), or NULL (copy_next_spread: 1
 * buffered tiles, 2 unbuffered ones too). Asked during the stream-out alone, the next tile's
 * first blocks still met their lines at memory latency: the blocks take several times the
 * stream-out's time. Only source rows under 1 KiB (along longer ones the hardware prefetchers
 * ramp up: 0.75-1.01 there), of 8-byte kinds 128 bytes or more (0.75-1.09 under), not buffered
 * 16-byte tiles (0.85-1.14). By default on AMD only: a Xeon ran the taken cases 0.80-1.52
 * (docs/bench-kernel.md, session 49). */
TFE_INTERNAL const TFE_T *TFE_FN(k_spread_next_)(const tfe__kplan *p, const TFE_T *s, int64_t n1, int64_t nxo, bool buffered) {
  const int64_t es = (int64_t)sizeof(TFE_T);
  if (tfe__knext_spread() < 2 - buffered || !tfe__krb(sizeof(TFE_T)) || n1 * es >= 1024 ||
      (es == 8 && n1 * es < 128) || (buffered && es == 16) || !TFE__KHAVE_TR8 || !tfe__ksimd())
    return NULL;
  return TFE_FN(k_buf_next_src_)(p, s, n1, nxo);
}

/* 1- and 2-byte register-block rows prefetch their blocks copy_block_prefetch blocks ahead
 * (tfe__ktrx_row); the strip prefetch then covers only the next strip's first such blocks (the
 * whole strip, 32-64 rows, would outgrow the L1 before use). Elements along the row; 0: the
 * strip prefetch as for other kinds. */
TFE_INTERNAL int64_t TFE_FN(k_block_prefetch_)(int64_t n1) {
  const int64_t es = (int64_t)sizeof(TFE_T), pa = tfe__st.tune.copy_block_prefetch * (64 / es);
  if (es > 2 || !pa || !tfe__st.tune.kernel_prefetch_strips) return 0;
  return pa < n1 ? pa : n1;
}
TFE_INTERNAL void TFE_FN(k_prefetch_rows_)(const tfe__kplan *p, int op, const TFE_T *s, int64_t row,
                                           int64_t rows, int64_t n0, int64_t n1) {
  if (!tfe__st.tune.kernel_prefetch_strips || !(p->g[1].arith[op] && p->g[1].step[op] == 1)) return;
  TFE_FN(k_prefetch_run_rows_)(p, op, s, row, rows, n0, n1);
}

/* The prefetch distance (elements) for a transpose tile t of a 1- or 2-byte kind whose rows
 * hold fewer bytes than a 64-byte register block: the tile about copy_short_row_prefetch
 * bytes of source on along the odometer's first dim (whole tiles, at least one), or else the
 * thread's next tile; 0 for other tiles and tiles of rows of 2 KiB or more. Such tiles read
 * 16-63 rows of a few lines each, or short rows one after another, which the hardware
 * prefetchers do not follow well (more streams than they track, strides), and
 * their blocks met each line at memory latency (u8 [9,2047,45,201] [2,1,0,3]: 4.5 GB/s against
 * 13 for plain reads of the same 45 rows; docs/bench-kernel.md, session 37). */
TFE_INTERNAL int64_t TFE_FN(k_short_rows_pf_)(const tfe__kplan *p, const tfe__ktile *t) {
  const int64_t es = (int64_t)sizeof(TFE_T), bytes = tfe__st.tune.copy_short_row_prefetch;
  /* (rows of 2 KiB a tile or more: the prefetchers ramp up along each, and asking as well
   * cost time: u16 [998,30,16r,167] [2,0,1,3], 16 rows of 4 KiB, 1.10x) */
  if (es > 2 || !bytes || t->n0 * es >= 64 || t->n0 * es < 16 || t->n1 * es >= 2048 || p->gather || p->g[1].nd == 0)
    return 0;
  int64_t pfo = t->nx[1];
  if (p->no > 0 && p->ostep[1][0]) {
    const int64_t step = tfe__kabs(p->ostep[1][0]) * es, k = bytes > step ? bytes / step : 1;
    if (t->i0 + k < p->ocount[0]) pfo = k * p->ostep[1][0];
  }
  if (pfo) tfe__kstat_add(63);
  return pfo;
}

/* The source offset of the thread's next tile where tile t ends a chain of one odometer dim
 * (p->nchain 1: tiles along it read on in the same source rows) and the next tile starts
 * another: k_copy_buf_out_next_ asks for its rows during the stream-out, as for tiles without
 * chains. Batches of small transposes whose dense blocks span two tiles (u8 [10,11,3,77,14,3,
 * 154] [3,0,2,5,1,6,4]: 77 x 330-byte blocks as 77 x 220 and 77 x 110 tiles) met every block
 * at memory latency (copy_chain_next_prefetch, counter 77; docs/bench-kernel.md, session 43).
 * 0: none. */
TFE_INTERNAL int64_t TFE_FN(k_chain_next_)(const tfe__kplan *p, const tfe__ktile *t) {
  if (!tfe__st.tune.copy_chain_next_prefetch || p->nchain != 1 || p->no < 2 || t->i0 != p->ocount[0] - 1) return 0;
  return t->nx[1];
}

/* Rows [i0, i1) x columns [j0, j1) of a transposing tile of a 1- or 2-byte kind in n x n
 * register blocks (n = 16 / es, tfe__ktr12x16): source row i at s + (rtab ? rtab[i] : i*lds),
 * its elements along j contiguous; destination column j at d + (ctab ? ctab[j] : j*ldd), its
 * elements along i contiguous. A block that would cross i1 (j1) is shifted back to end there,
 * rewriting a few elements already written with the same values (the rows and columns below
 * i0 and j0 belong to the same tile). pfo (elements, 0: none): each block first asks for its
 * rows' line pfo on (k_short_rows_pf_). Returns false (nothing done) for other kinds, without
 * the vector kernels, or when i1 or j1 is under n. */
TFE_INTERNAL bool TFE_FN(k_copy_small12_)(TFE_T *d, const TFE_T *s, const int64_t *rtab, int64_t lds,
                                          const int64_t *ctab, int64_t ldd, int64_t i0, int64_t i1,
                                          int64_t j0, int64_t j1, int64_t pfo) {
#if TFE__KHAVE_TR8
  const int64_t es = (int64_t)sizeof(TFE_T), n = 16 / es;
  if (es > 2 || i1 < n || j1 < n || !tfe__ksimd()) return false;
  if (i0 >= i1 || j0 >= j1) return true;
  tfe__kstat_add(12);
  const void *sr[16];
  void *dc[16 * TFE__KWIDE12];
  const int64_t wide = es <= tfe__st.tune.copy_small_wide ? TFE__KWIDE12 : 1; /* (blocks side by side) */
  if (wide > 1 && j1 - j0 >= 2 * n) tfe__kstat_add(55);
  for (int64_t ib = i0;; ib += n) {
    if (ib > i1 - n) ib = i1 - n;
    for (int64_t jb = j0;;) {
      if (jb > j1 - n) jb = j1 - n;
      const int64_t w = jb + wide * n <= j1 ? wide * n : jb + 2 * n <= j1 && wide > 1 ? 2 * n : n;
      for (int64_t i = 0; i < n; i++) sr[i] = s + (rtab ? rtab[ib + i] : (ib + i) * lds) + jb;
      if (pfo) for (int64_t i = 0; i < n; i++) tfe__kpf((const TFE_T *)sr[i] + pfo);
      for (int64_t j = 0; j < w; j++) dc[j] = d + (ctab ? ctab[jb + j] : (jb + j) * ldd) + ib;
#if defined(__AVX512BW__)
      if (w == 4 * n) tfe__ktr12x64((size_t)es, dc, sr); else
#endif
      if (w == 2 * n) tfe__ktr12x32((size_t)es, dc, sr);
      else tfe__ktr12x16((size_t)es, dc, sr);
      if (jb + w == j1) break;
      jb += w;
    }
    if (ib == i1 - n) break;
  }
  return true;
#else
  (void)d; (void)s; (void)rtab; (void)lds; (void)ctab; (void)ldd; (void)i0; (void)i1; (void)j0; (void)j1; (void)pfo;
  return false;
#endif
}

/* Rows [i0, i1) x columns [j0, j1) of a transposing tile of a 1- or 2-byte kind whose source
 * rows are short, 8 / es < j1 - j0 < 64 / es (9-63 bytes), addressed as in k_copy_small12_, in
 * blocks of 64 / es rows (tfe__ktr12_wide), the last shifted back to end at i1: each column gets
 * 64 bytes a block. Rows are read 16, 32 or 64 bytes wide: those that would pass the source's end
 * (c->s_end) are copied to the stack first. In 16-byte blocks of 16 / es rows (k_copy_small12_,
 * k_deint_) such tiles took two or more shifted blocks where a row passed 16 bytes and ran 3-5x
 * the streamed copy. copy_wide_rows 2 first asks for the next block's rows: a block's 64 loads
 * come before 300 instructions of shuffles, and without the prefetch the next block's misses
 * waited for them (u8 small-dim permutations 1.35x slower than the 16-byte blocks; counter 76,
 * docs/bench-kernel.md, session 43). False (nothing done) where it does not apply. */
TFE_INTERNAL bool TFE_FN(k_copy_wide12_)(const TFE_TY(kcopy_) *c, TFE_T *d, const TFE_T *s, const int64_t *rtab,
                                         int64_t lds, const int64_t *ctab, int64_t ldd, int64_t i0, int64_t i1,
                                         int64_t j0, int64_t j1) {
#if TFE__KHAVE_TR8 && defined(__AVX512BW__)
  const int64_t es = (int64_t)sizeof(TFE_T), rb = 64 / es, nc = j1 - j0;
  if (es > 2 || c->cj || !c->s_end || !tfe__st.tune.copy_wide_rows || !tfe__ksimd() || nc * es <= 8 || nc >= rb ||
      i1 - i0 < rb)
    return false;
  tfe__kstat_add(76);
  const int64_t w = nc * es <= 16 ? 16 : nc * es <= 32 ? 32 : 64; /* (bytes read a row) */
  TFE_T pad[64][64 / sizeof(TFE_T)];
  const void *sr[64];
  void *dc[64];
  for (int64_t ib = i0;; ib += rb) {
    if (ib > i1 - rb) ib = i1 - rb;
    for (int64_t i = 0; i < rb; i++) {
      const TFE_T *r = s + (rtab ? rtab[ib + i] : (ib + i) * lds) + j0;
      if ((const char *)r + w > (const char *)c->s_end) { memcpy(pad[i], r, (size_t)(nc * es)); r = pad[i]; }
      sr[i] = r;
    }
    for (int64_t j = 0; j < nc; j++) dc[j] = d + (ctab ? ctab[j0 + j] : (j0 + j) * ldd) + ib;
    if (tfe__st.tune.copy_wide_rows > 1)
      for (int64_t i = ib + rb, e = i + rb < i1 ? i + rb : i1; i < e; i++) {
        const char *r = (const char *)(s + (rtab ? rtab[i] : i * lds) + j0);
        tfe__kpf(r);
        if (w > 64 - (int64_t)((uintptr_t)r & 63)) tfe__kpf(r + w - 1);
      }
    tfe__ktr12_wide((size_t)es, dc, sr, (int)nc);
    if (ib == i1 - rb) return true;
  }
#else
  (void)c; (void)d; (void)s; (void)rtab; (void)lds; (void)ctab; (void)ldd; (void)i0; (void)i1; (void)j0; (void)j1;
  return false;
#endif
}

/* Whether the whole 8x8 blocks of a transpose tile of an 8-byte kind (columns [j0 = 0, n1),
 * 16 blocks or more) have destination columns in segments at one stride: G1's first dim whole
 * and a multiple of 8 long, or all of G1 one step. Then k_copy_segs_ runs them
 * (copy_block_segments; tiles of 35 columns had run 1.13-1.17x slower with the kernel call). */
TFE_INTERNAL bool TFE_FN(k_copy_seg_ok_)(const tfe__kplan *p, int64_t j0, int64_t n1) {
  const tfe__kgroup *g1 = &p->g[1];
  return TFE__KHAVE_TR8 && sizeof(TFE_T) == 8 && tfe__st.tune.copy_block_segments && j0 == 0 && n1 >= 128 &&
         (g1->arith[0] || (g1->nd > 1 && p->dims[p->g[0].nd] % 8 == 0));
}
/* Rows srow[0 .. sb) (sb = 8 or 16: one or two rows of blocks; doff: their destination
 * offsets, ascending by 1) of such a tile over its whole blocks of columns: one kernel call
 * rather than a pointer per column and block, streamed (nt) where every column is 64-byte
 * aligned. Returns the first column left (the last partial block). */
TFE_INTERNAL int64_t TFE_FN(k_copy_segs_)(const tfe__kplan *p, TFE_T *d, const TFE_T *const *srow, const int64_t *doff,
                                          int64_t sb, int64_t n1, bool nt) {
  const int64_t m = n1 / 8 * 8;
#if TFE__KHAVE_TR8
  const tfe__kgroup *g1 = &p->g[1];
  const int at = p->g[0].nd;
  const int64_t seg = g1->arith[0] ? m : p->dims[at], ldd = g1->arith[0] ? g1->step[0] : p->str[0][at];
  const int64_t *tab = g1->arith[0] ? NULL : g1->tab[0];
  TFE_T *d0 = d + doff[0];
  bool al = nt && !((ldd * 8) & 63);
  for (int64_t js = 0; al && js < m; js += seg) al = ((uintptr_t)(d0 + (tab ? tab[js] : 0)) & 63) == 0;
  const double *sp[16];
  for (int i = 0; i < sb; i++) sp[i] = (const double *)(const void *)srow[i];
  if (m > 0) {
    tfe__ktr8p_seg((double *)(void *)d0, tab, seg, ldd, sp, (int)sb, m, al);
    tfe__kstat_add(46);
  }
#else
  (void)p; (void)d; (void)srow; (void)doff; (void)sb; (void)nt;
#endif
  return m;
}

/* Rows [i0, n0) x columns [j0, n1) of a transposing copy tile, in 8x8 blocks: block
 * (ib, jb) reads 8 source rows (G0 entries) of 8 elements along G1 and writes 8 destination
 * columns (G1 entries) of 8 elements along G0, so every line touched is used whole before
 * it can be evicted. Any group layout (tables included). */
TFE_INTERNAL void TFE_FN(k_copy_blocks_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                         const TFE_T *s, int64_t i0, int64_t n0, int64_t j0, int64_t n1, int64_t pfo,
                                         const TFE_T *ns) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  int64_t rb = tfe__krb(sizeof(TFE_T)), cb = tfe__kcb(sizeof(TFE_T));
  bool fast = TFE__KHAVE_TR8 && tfe__ksimd() && rb && !c->cj && g0->arith[0] && g0->step[0] == 1 &&
              g1->arith[1] && g1->step[1] == 1;
  (void)fast;
  if (!fast) rb = cb = 8; /* (scalar loops: 8x8 blocks, fewer setups per element) */
  /* 1- and 2-byte kinds: partial blocks (rims, or all of a tile under 64 bytes a side) in
   * 16-byte register blocks after the whole ones */
  const int64_t nb = 16 / (int64_t)sizeof(TFE_T);
  const bool small = fast && sizeof(TFE_T) <= 2 && n0 >= nb && n1 >= nb;
  const int pf = tfe__st.tune.kernel_prefetch_strips;
  const int64_t pb = fast ? TFE_FN(k_block_prefetch_)(n1) : 0, pa = pb ? tfe__st.tune.copy_block_prefetch * cb : 0;
  /* (8-byte kinds with columns in segments: whole blocks by k_copy_segs_, 16 rows a call with
   * copy_block_segments 2; their columns' alignment checked once) */
  const bool segs = fast && TFE_FN(k_copy_seg_ok_)(p, j0, n1);
  const int64_t sr_max = segs && tfe__st.tune.copy_block_segments == 2 ? 2 * rb : rb;
  const int64_t calls = ((n0 - i0) / rb) * ((n1 - j0) / cb); /* (ns: a share of its rows a whole block) */
  int64_t asked = 0, call = 0;
  for (int64_t ib = i0, sb; ib < n0; ib += sb) {
    sb = n0 - ib >= sr_max ? sr_max : rb;
    int bi = n0 - ib < sb ? (int)(n0 - ib) : (int)sb;
    const TFE_T *srow[64];
    int64_t doff[64];
    if (pb) TFE_FN(k_prefetch_rows_)(p, 1, s, ib + rb, rb, n0, pb);
    else TFE_FN(k_prefetch_rows_)(p, 1, s, ib + rb * pf, sb, n0, n1);
    for (int i = 0; i < bi; i++) {
      srow[i] = s + TFE__KOFF(p, 0, 1, ib + i);
      doff[i] = TFE__KOFF(p, 0, 0, ib + i);
    }
    const int64_t jf = segs && bi == sb ? TFE_FN(k_copy_segs_)(p, d, srow, doff, sb, n1, c->nt) : j0;
    for (int64_t jb = jf; jb < n1; jb += cb) {
      int bj = n1 - jb < cb ? (int)(n1 - jb) : (int)cb;
#if TFE__KHAVE_TR8
      if (fast && bi == rb && bj == cb) {
        void *dcol[64];
        const void *sr[64];
        bool al = c->nt;
        for (int j = 0; j < cb; j++) {
          dcol[j] = d + TFE__KOFF(p, 1, 0, jb + j) + doff[0];
          al = al && ((uintptr_t)dcol[j] & 63) == 0;
        }
        for (int i = 0; i < rb; i++) sr[i] = srow[i] + jb;
        if (pa && jb + pa < n1) /* (as tfe__ktrx_row; the rims too) */
          for (int i = 0; i < rb; i++) tfe__kpf(srow[i] + jb + pa);
        TFE_FN(k_ask_share_)(p, ns, 0, n0, n1, &call, calls, &asked, false);
        tfe__ktrx(sizeof(TFE_T), dcol, sr, al);
        if (sizeof(TFE_T) != 8 && ib == i0 && jb == j0) tfe__kstat_add(9);
        continue;
      }
#endif
#if TFE__KHAVE_TR8 /* (the x86 register blocks) */
      /* 4-byte kinds, 8-15 rows (a tile of a 12-float destination run): one 8x8 block on the
       * first 8 rows and one shifted to end at the last (copy_half_blocks; else scalar loops) */
      if (fast && sizeof(TFE_T) == 4 && bi >= 8 && bi < rb && bj == cb && tfe__st.tune.copy_half_blocks) {
        for (int i0 = 0;; i0 = bi - 8) {
          float *dc[8];
          const float *sr[8];
          for (int j = 0; j < 8; j++) dc[j] = (float *)(void *)(d + TFE__KOFF(p, 1, 0, jb + j) + doff[i0]);
          for (int i = 0; i < 8; i++) sr[i] = (const float *)(const void *)(srow[i0 + i] + jb);
          tfe__ktr4h(dc, sr);
          if (i0 == bi - 8) break;
        }
        if (jb == j0) tfe__kstat_add(25);
        continue;
      }
      /* 8- and 4-byte kinds, 4-7 rows (a destination run of 4: session 20's copy_quarter_blocks
       * plans such tiles as transposes): 4x4 blocks, the last row and column blocks shifted back
       * to end at the edge */
      if (fast && (sizeof(TFE_T) == 8 || sizeof(TFE_T) == 4) && bi >= 4 && bi < 8 && bj >= 4 && tfe__st.tune.copy_quarter_blocks) {
        for (int i0 = 0;; i0 = i0 + 4 > bi - 4 ? bi - 4 : i0 + 4) {
          for (int q0 = 0;; q0 = q0 + 4 > bj - 4 ? bj - 4 : q0 + 4) {
            void *dc[4];
            const void *sr[4];
            for (int j = 0; j < 4; j++) dc[j] = d + TFE__KOFF(p, 1, 0, jb + q0 + j) + doff[i0];
            for (int i = 0; i < 4; i++) sr[i] = srow[i0 + i] + jb + q0;
            tfe__ktrq(sizeof(TFE_T), dc, sr, false);
            if (q0 == bj - 4) break;
          }
          if (i0 == bi - 4) break;
        }
        if (jb == j0) tfe__kstat_add(28);
        continue;
      }
#endif
      if (small) continue; /* (below) */
      for (int j = 0; j < bj; j++) {
        TFE_T *dj = d + TFE__KOFF(p, 1, 0, jb + j);
        int64_t so = TFE__KOFF(p, 1, 1, jb + j);
        if (c->cj) for (int i = 0; i < bi; i++) dj[doff[i]] = TFE_FN(sr_conj)(srow[i][so]);
        else for (int i = 0; i < bi; i++) dj[doff[i]] = srow[i][so];
      }
    }
  }
  if (small) {
    const int64_t m0 = i0 + (n0 - i0) / rb * rb, m1 = j0 + (n1 - j0) / cb * cb;
    const int64_t *rt = g0->arith[1] ? NULL : g0->tab[1], *ct = g1->arith[0] ? NULL : g1->tab[0];
    if (m1 > j0 || !TFE_FN(k_copy_wide12_)(c, d, s, rt, g0->step[1], ct, g1->step[0], i0, n0, j0, n1))
      TFE_FN(k_copy_small12_)(d, s, rt, g0->step[1], ct, g1->step[0], i0, n0, m1, n1, pfo);
    if (m1 > j0) TFE_FN(k_copy_small12_)(d, s, rt, g0->step[1], ct, g1->step[0], m0, n0, j0, m1, pfo);
  }
}

/* d[i + j*ldd] = s[i*lds + j] for i < n0, j < n1: a strided transpose (rows contiguous in
 * the destination, columns in the source). The part in whole register blocks (4, 8 and
 * 16-byte kinds) runs register transposes addressed by strides (8-byte kinds: no per-block
 * pointer arrays); rims and conjugating copies run scalar loops. */
TFE_INTERNAL void TFE_FN(k_copy_st_)(const TFE_TY(kcopy_) *c, TFE_T *d, const TFE_T *s, int64_t n0, int64_t n1,
                                     int64_t lds, int64_t ldd, const TFE_T *ns) {
  const int64_t es = (int64_t)sizeof(TFE_T);
  int64_t m0 = 0, m1 = 0;
#if TFE__KHAVE_TR8
  const int64_t rb = tfe__krb(sizeof(TFE_T)), cb = tfe__kcb(sizeof(TFE_T));
  if (rb && !c->cj && tfe__ksimd()) { m0 = n0 - n0 % rb; m1 = n1 - n1 % cb; }
  if (m1 == 0) m0 = 0;
  bool al = c->nt && ((uintptr_t)d & 63) == 0 && ((ldd * es) & 63) == 0;
  if (es != 8 && m0 > 0) tfe__kstat_add(9);
  const int pf = tfe__st.tune.kernel_prefetch_strips;
  const int64_t pb = m0 > 0 ? TFE_FN(k_block_prefetch_)(n1) : 0;
  /* ns: the next tile's rows, a share before each 1-byte block, else each row of blocks (per
   * block, the calls of small blocks cost more than the asks saved) */
  const int64_t ck = es <= 2 ? cb : m1, calls = m1 > 0 ? m0 / rb * ((m1 + ck - 1) / ck) : 0;
  int64_t asked = 0, call = 0;
  for (int64_t ib = 0; ib < m0; ib += rb) {
    /* strided rows miss every cache level and no hardware prefetcher follows them */
    for (int64_t i = ib + (pb ? rb : rb * pf); (pb || pf) && i < ib + (pb ? 2 * rb : rb * (pf + 1)) && i < n0; i++)
      for (int64_t j = 0; j < (pb ? pb : n1); j += 64 / es) tfe__kpf(s + i * lds + j);
    if (es == 8) {
      TFE_FN(k_ask_share_)(NULL, ns, lds, n0, n1, &call, calls, &asked, false);
      tfe__ktr8s_row((double *)(void *)(d + ib), ldd, (const double *)(const void *)(s + ib * lds), lds, m1, al);
      continue;
    }
    const void *srow[64];
    for (int i = 0; i < rb; i++) srow[i] = s + (ib + i) * lds;
    if (!ns) { tfe__ktrx_row(sizeof(TFE_T), d + ib, ldd, srow, m1, n1, al); continue; }
    for (int64_t jb = 0; jb < m1; jb += ck) {
      const void *sj[64];
      for (int i = 0; i < rb; i++) sj[i] = (const TFE_T *)srow[i] + jb;
      TFE_FN(k_ask_share_)(NULL, ns, lds, n0, n1, &call, calls, &asked, false);
      tfe__ktrx_row(sizeof(TFE_T), d + ib + jb * ldd, ldd, sj, ck, n1 - jb, al);
    }
  }
  /* 4-, 8- and 16-byte kinds, sides of a block or more: the rims in whole register blocks
   * shifted back to end at the edge (they rewrite a few elements with the same values, by
   * normal stores), instead of scalar loops: an 11 x 22 f64 tile has 114 of its 242 elements
   * on the rims (batches of them, [22,11,40000] perm [1,0,2]: 3.6-4.0 -> 1.05-1.2x memcpy) */
  if (es >= 4 && m0 > 0 && m1 > 0 && (m0 < n0 || m1 < n1) && tfe__st.tune.copy_shifted_rims) {
    const void *srow[64];
    void *dcol[64];
    if (m1 < n1 && n1 - m1 <= tfe__st.tune.copy_rim_scalar_cols) { /* (a few columns: scalar, each */
      for (int64_t j = m1; j < n1; j++)             /* written down its contiguous column; a shifted */
        for (int64_t i = 0; i < m0; i++) d[i + j * ldd] = s[i * lds + j]; /* block redoes most of one) */
      tfe__kstat_add(27);
    } else if (m1 < n1) /* the last columns, rows [0, m0) */
      for (int64_t ib = 0; ib < m0; ib += rb) {
        for (int i = 0; i < rb; i++) srow[i] = s + (ib + i) * lds + (n1 - cb);
        for (int j = 0; j < cb; j++) dcol[j] = d + ib + (n1 - cb + j) * ldd;
        tfe__ktrx(sizeof(TFE_T), dcol, srow, false);
      }
    if (m0 < n0) { /* the last rows, every column */
      for (int i = 0; i < rb; i++) srow[i] = s + (n0 - rb + i) * lds;
      tfe__ktrx_row(sizeof(TFE_T), d + (n0 - rb), ldd, srow, m1, n1, false);
      if (m1 < n1) {
        for (int i = 0; i < rb; i++) srow[i] = s + (n0 - rb + i) * lds + (n1 - cb);
        for (int j = 0; j < cb; j++) dcol[j] = d + (n0 - rb) + (n1 - cb + j) * ldd;
        tfe__ktrx(sizeof(TFE_T), dcol, srow, false);
      }
    }
    tfe__kstat_add(13);
    return;
  }
  /* 4- and 8-byte tiles of 4 rows up to a register block (a destination run of 4-7: f64
   * [49,4,8,8,51,4,8] [1,0,5,4,6,3,2], tiles of 4 x 49): 4x4 register blocks, the last row and
   * column blocks shifted back to end at the edge, instead of element-wise loops (copy_quarter_st) */
  if ((es == 8 || es == 4) && m0 == 0 && n0 >= 4 && n0 < rb && n1 >= 4 && !c->cj && tfe__ksimd() &&
      tfe__st.tune.copy_quarter_st) {
    /* (f64 tiles of 4 rows into one destination run, columns 32 bytes apart: streamed, each
     * block two whole lines; normal stores read each line first: 1.37x slower) */
    const bool qnt = es == 8 && c->nt && n0 == 4 && ldd == 4 && ((uintptr_t)d & 31) == 0 &&
                     tfe__st.tune.copy_quarter_st == 2;
    for (int64_t i0 = 0;; i0 = i0 + 4 > n0 - 4 ? n0 - 4 : i0 + 4) {
      for (int64_t q0 = 0;; q0 = q0 + 4 > n1 - 4 ? n1 - 4 : q0 + 4) {
        void *dc[4];
        const void *sr[4];
        for (int j = 0; j < 4; j++) dc[j] = d + i0 + (q0 + j) * ldd;
        for (int i = 0; i < 4; i++) sr[i] = s + (i0 + i) * lds + q0;
        tfe__ktrq(sizeof(TFE_T), dc, sr, qnt);
        if (q0 == n1 - 4) break;
      }
      if (i0 == n0 - 4) break;
    }
    tfe__kstat_add(65);
    return;
  }
  if (es == 4 && m1 > 0 && n0 - m0 >= 8) { /* 8 of the last rows */
    tfe__ktr4h_row((float *)(void *)(d + m0), ldd, (const float *)(const void *)(s + m0 * lds), lds, m1);
    m0 += 8;
  }
#endif
  /* rims (all of a tile narrower than a block, as the 3-wide de-interleave of a cyclic
   * shift): one destination column at a time, the source read with its stride; streamed
   * 8-byte outputs stream whole lines (copy_stream_narrow_columns: element-wise normal stores
   * read each line first) */
  const int colnt = tfe__st.tune.copy_stream_narrow_columns;
  if (es <= 2 && !m1 && TFE_FN(k_copy_wide12_)(c, d, s, NULL, lds, NULL, ldd, 0, n0, 0, n1)) return;
  if (es <= 2 && !c->cj && TFE_FN(k_copy_small12_)(d, s, NULL, lds, NULL, ldd, 0, n0, m1, n1, 0)) {
    if (m1 > 0) TFE_FN(k_copy_small12_)(d, s, NULL, lds, NULL, ldd, m0, n0, 0, m1, 0);
    return; /* (1- and 2-byte kinds: the rims in 16-byte blocks) */
  }
  for (int64_t j = m1; j < n1; j++) {
#if TFE__KHAVE_TR8
    if (es == 8 && c->nt && colnt && !c->cj && tfe__ksimd()) {
      tfe__kcol_simd((double *)(void *)(d + j * ldd), (const double *)(const void *)(s + j), lds, n0);
      continue;
    }
#endif
    if (c->cj) for (int64_t i = 0; i < n0; i++) d[i + j * ldd] = TFE_FN(sr_conj)(s[i * lds + j]);
    else for (int64_t i = 0; i < n0; i++) d[i + j * ldd] = s[i * lds + j];
  }
  for (int64_t j = 0; j < m1; j++)
    for (int64_t i = m0; i < n0; i++) d[i + j * ldd] = s[i * lds + j];
}

/* Whether k_copy_ar_ takes plan p's tiles: both groups arithmetic, G0 a destination run, G1
 * one of the source read either way. */
TFE_INTERNAL bool TFE_FN(k_ar_ok_)(const tfe__kplan *p) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  return g0->arith[0] && g0->arith[1] && g1->arith[0] && g1->arith[1] && g0->step[0] == 1 &&
         (g1->step[1] == 1 || g1->step[1] == -1);
}
/* The common transpose tile: each group one arithmetic step, unit stride along G0 in the
 * destination and along G1 in the source, or -1 there (a reversed source dim: the columns
 * are walked from the last, so the source is read ascending and the destination columns
 * descending, rather than scalar loops). Returns
 * false when the tile is not of that form. */
TFE_INTERNAL bool TFE_FN(k_copy_ar_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                     const TFE_T *s, int64_t n0, int64_t n1, const TFE_T *ns) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  if (!TFE_FN(k_ar_ok_)(p)) return false;
  if (g1->step[1] == 1) TFE_FN(k_copy_st_)(c, d, s, n0, n1, g0->step[1], g1->step[0], ns);
  else
    TFE_FN(k_copy_st_)(c, d + (n1 - 1) * g1->step[0], s - (n1 - 1), n0, n1, g0->step[1], -g1->step[0],
                       ns ? ns - (n1 - 1) : NULL);
  return true;
}

/* n0 short source records of n1 elements of a 1- or 2-byte kind (1 < n1 < 16 / es, n0 >= 16 / es)
 * spread over n1 destination columns, the mirror of k_copy_interleave_: record i at s + (rtab ?
 * rtab[i] : i * lds), column j at d + (ctab ? ctab[j] : j * ldd), element (i, j) to column j's
 * element i. Records of 8 bytes or less go 4 * 16 / es at a time, two to a 16-byte row
 * (tfe__ktr12_recs8: 64 bytes of each column), the others one block of 16 / es at a time
 * (tfe__ktr12x16_cols); the last block is shifted back to end at n0. Records are read 8 or 16
 * bytes wide: those within that of the source's end (c->s_end) are copied to the stack first,
 * so that no read passes it. copy_deinterleave_rows 2: the 64 bytes of each column that a block
 * of short records writes are streamed where they are a whole line (columns 64-byte aligned) of
 * a streamed output (16-byte pieces streamed had left lines partly written: u16 [6,50000,200]
 * [1,0,2] ran 10x slower). Without
 * it these transposes ran scalar loops (u8 [8,4,3,15,8,1,4500] perm [3,4,1,0,5,6,2]: records of 8
 * bytes, 8x the streamed copy). False where it does not apply. */
TFE_INTERNAL bool TFE_FN(k_deint_)(const TFE_TY(kcopy_) *c, TFE_T *d, const TFE_T *s, const int64_t *rtab, int64_t lds,
                                   const int64_t *ctab, int64_t ldd, int64_t n0, int64_t n1) {
#if TFE__KHAVE_TR8
  const int64_t es = (int64_t)sizeof(TFE_T), nb = 16 / es;
  const int mode = tfe__st.tune.copy_deinterleave_rows;
  if (es > 2 || c->cj || !c->s_end || !tfe__ksimd() || !mode || n1 < 2 || n1 >= nb || n0 < nb) return false;
  if (n1 * es > 8 && TFE_FN(k_copy_wide12_)(c, d, s, rtab, lds, ctab, ldd, 0, n0, 0, n1)) return true;
  tfe__kstat_add(43);
  TFE_T pad[64][16];
  const void *sr[64];
  void *dc[16];
  TFE_T *col[16];
  uintptr_t mis = 0; /* (the columns' address bits below 64) */
  for (int64_t j = 0; j < n1; j++) {
    col[j] = d + (ctab ? ctab[j] : j * ldd);
    mis |= (uintptr_t)col[j] & 63;
  }
  const bool nt = c->nt && mode == 2 && mis == 0;
  const int64_t wide = n1 * es <= 8 ? 4 * nb : nb, rb = wide == nb ? nb : 8 / es; /* (rows a block, bytes read a record) */
  for (int64_t ib = 0, w = wide;; ib += w) {
    w = wide;
    if (ib + w > n0) { /* the rest: blocks of nb, the last shifted back */
      w = nb;
      if (ib + w > n0) ib = n0 - w;
    }
    for (int64_t i = 0; i < w; i++) {
      const TFE_T *r = s + (rtab ? rtab[ib + i] : (ib + i) * lds);
      if (r + (w == nb ? nb : rb) > c->s_end) { memcpy(pad[i], r, (size_t)(n1 * es)); r = pad[i]; }
      sr[i] = r;
    }
    for (int64_t j = 0; j < n1; j++) dc[j] = col[j] + ib;
    if (w == nb) tfe__ktr12x16_cols((size_t)es, dc, sr, (int)n1, false);
    else tfe__ktr12_recs8((size_t)es, dc, sr, (int)n1, nt ? 32 : 0); /* (whole lines: ib a multiple of 4 * nb) */
    if (ib + w == n0) return true;
  }
#else
  (void)c; (void)d; (void)s; (void)rtab; (void)lds; (void)ctab; (void)ldd; (void)n0; (void)n1;
  return false;
#endif
}
/* A transpose tile whose groups are tables but whose first dims are runs: G0's first dim
 * unit-stride in the destination, G1's first dim in the source (a 59 x (9 x 28) tile: runs
 * of 9 along the source), or reversed there (step -1: a reversed source dim of 80 before a
 * dim of 203 makes G1 a table; its runs are read ascending and their destination columns
 * walked from the last, as k_copy_ar_ does, instead of scalar 8x8 loops: 3.9x memcpy on the
 * Xeon). Each pair of a G0 run and a G1 run is a strided transpose; 8x8 blocks over the
 * whole table would straddle the runs and fall back to scalar loops. Returns false when the
 * first dims are not such runs. */
TFE_INTERNAL bool TFE_FN(k_copy_runs_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                       const TFE_T *s, int64_t n0, int64_t n1) {
  int nd0 = p->g[0].nd;
  if (nd0 == 0 || p->str[0][0] != 1 || tfe__kabs(p->str[1][nd0]) != 1) return false;
  const bool rev = p->str[1][nd0] < 0;
  int64_t r0 = nd0 > 1 ? p->dims[0] : n0, r1 = p->g[1].nd > 1 ? p->dims[nd0] : n1;
  int64_t lds = p->str[1][0], ldd = p->str[0][nd0];
  if (rev) tfe__kstat_add(11);
  /* 1- and 2-byte kinds: G1's source run may span several of its dims (u16 [4,4,...]: dims of
   * 4 and 4 with source strides 1 and 4, destination strides 1116 and 183024): 16 elements
   * contiguous in the source, whose 16 destination columns the 16-byte register blocks
   * address through G1's table, instead of transposes of 4-wide runs in scalar loops */
  int64_t r1x = r1;
  if (!rev && sizeof(TFE_T) <= 2 && p->g[1].nd > 1 && !p->g[1].arith[0] && tfe__st.tune.copy_table_runs) {
    const tfe__kgroup *g1 = &p->g[1];
    for (int k = 1; k < g1->nd && p->str[1][nd0 + k] == r1x; k++)
      r1x *= k == g1->nd - 1 ? g1->last_b : p->dims[nd0 + k];
    if (r1x > n1) r1x = n1;
    if (n1 % r1x) r1x = r1; /* (whole runs only: a clipped tile ends mid-run) */
  }
  const int64_t nb = 16 / (int64_t)sizeof(TFE_T);
  if (r1x > r1 && r1x >= nb && (n0 < r0 ? n0 : r0) >= nb && (n0 % r0 == 0 || n0 % r0 >= nb) && !c->cj &&
      TFE__KHAVE_TR8 && tfe__ksimd()) {
    for (int64_t i0 = 0; i0 < n0; i0 += r0) {
      int64_t a = n0 - i0 < r0 ? n0 - i0 : r0;
      for (int64_t j0 = 0; j0 < n1; j0 += r1x)
        TFE_FN(k_copy_small12_)(d + TFE__KOFF(p, 0, 0, i0), s + TFE__KOFF(p, 0, 1, i0) + p->g[1].tab[1][j0], NULL, lds,
                                p->g[1].tab[0] + j0, 0, 0, a, 0, r1x, 0);
    }
    tfe__kstat_add(16);
    return true;
  }
  for (int64_t i0 = 0; i0 < n0; i0 += r0)
    for (int64_t j0 = 0; j0 < n1; j0 += r1) {
      int64_t a = n0 - i0 < r0 ? n0 - i0 : r0, b = n1 - j0 < r1 ? n1 - j0 : r1;
      TFE_T *dd = d + TFE__KOFF(p, 0, 0, i0) + TFE__KOFF(p, 1, 0, j0);
      const TFE_T *ss = s + TFE__KOFF(p, 0, 1, i0) + TFE__KOFF(p, 1, 1, j0);
      if (!rev && TFE_FN(k_deint_)(c, dd, ss, NULL, lds, NULL, ldd, a, b)) continue; /* (short records) */
      if (rev) TFE_FN(k_copy_st_)(c, dd + (b - 1) * ldd, ss - (b - 1), a, b, lds, -ldd, NULL);
      else TFE_FN(k_copy_st_)(c, dd, ss, a, b, lds, ldd, NULL);
    }
  return true;
}

/* out[i] = s[off(G0, i)] for input op over n entries of G0: one column of a gather tile
 * or a plain block. Tables of 8-byte kinds go through vector gathers (nt: stream out past
 * the cache where aligned). */
TFE_INTERNAL void TFE_FN(k_gather_col_)(const tfe__kplan *p, int op, const TFE_T *s, bool cj, TFE_T *out,
                                        int64_t n, bool nt, bool vec) {
  const tfe__kgroup *g = &p->g[0];
  if (cj) { for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_conj)(s[TFE__KOFF(p, 0, op, i)]); return; }
  if (g->arith[op]) {
    int64_t st = g->step[op];
#if TFE__KHAVE_TR8
    /* (a reversed run: map/zip inputs read backwards, 2.8-3.5x the forward time element by
     * element) */
    const size_t es = sizeof(TFE_T);
    if (st == -1 && n * (int64_t)es >= 32 && es <= 16 && !(es & (es - 1)) && tfe__st.tune.copy_reverse_runs && tfe__ksimd()) {
      tfe__kstat_add(56);
      /* (a whole run read upwards, so that runs after runs make one upward stream; a piece of
       * one downwards, as the next tile takes the piece below) */
      if (g->nd == 1 && n == p->dims[0]) tfe__kcopy_rev((char *)out, (const char *)s, (size_t)n, es, false);
      else tfe__kgather_rev((char *)out, (const char *)s, (size_t)n, es);
      return;
    }
#endif
    for (int64_t i = 0; i < n; i++) out[i] = s[i * st];
    return;
  }
  if (sizeof(TFE_T) == 8 && tfe__kgather8(out, s, g->tab[op], n, nt, vec)) return;
  for (int64_t i = 0; i < n; i++) out[i] = s[g->tab[op][i]];
}

/* d[i] = s[-i] for i < n (a run of a reversed source dim common to both operands) by the
 * vector kernel, streamed when nt (copy_reverse_runs, counter 56); false: the caller's loop. */
TFE_INTERNAL bool TFE_FN(k_copy_rev_)(const TFE_TY(kcopy_) *c, TFE_T *d, const TFE_T *s, int64_t n, bool nt) {
#if TFE__KHAVE_TR8
  const size_t es = sizeof(TFE_T);
  if (c->cj || !tfe__st.tune.copy_reverse_runs || es > 16 || (es & (es - 1)) || !tfe__ksimd()) return false;
  tfe__kstat_add(56);
  tfe__kcopy_rev((char *)d, (const char *)s, (size_t)n, es, nt);
  return true;
#else
  (void)c; (void)d; (void)s; (void)n; (void)nt;
  return false;
#endif
}

/* Whether plan p's columns are records read backwards (G0's first dim: the destination's run,
 * the source's reversed, of at most 64 bytes; the records of a column follow one another in the
 * destination): then c's permute for k_copy_rev_recs_ (copy_rev_records). */
TFE_INTERNAL void TFE_FN(k_rev_recs_prep_)(const tfe__kplan *p, TFE_TY(kcopy_) *c) {
  c->rrw = 0;
#if TFE__KHAVE_TR8
  const tfe__kgroup *g0 = &p->g[0];
  const int64_t es = (int64_t)sizeof(TFE_T);
  if (tfe__st.tune.copy_rev_records && !c->cj && g0->nd >= 2 && g0->arith[0] && g0->step[0] == 1 && p->str[1][0] == -1 &&
      p->dims[0] * es <= 64 && !(es & (es - 1)) && es <= 16 && tfe__ksimd())
    c->rrw = tfe__krev_recs_prep(c->rrix, p->dims[0], (size_t)es);
#else
  (void)p;
#endif
}
/* Such a column, as stretches of records that follow one another in the source too, a register
 * of records at a time (counter 79: u8 [3r,4000,4000], BGR to RGB, went element by element,
 * u8 [13r,110,...] a call a record). */
TFE_INTERNAL bool TFE_FN(k_copy_rev_recs_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d, const TFE_T *s,
                                           int64_t n0) {
#if TFE__KHAVE_TR8
  const int64_t run = p->dims[0], *tab = p->g[0].tab[1], es = (int64_t)sizeof(TFE_T);
  if (!c->rrw || n0 % run) return false;
  /* (records of whole lines of a streamed output go out streamed, as the run copies did: with
   * normal stores f64 [8r,16,103904] ran 1.2x slower than they; shorter records keep normal
   * stores: streamed through an L1 buffer, columns of 250-4000 bytes ran 1.05-1.5x slower) */
  const bool nt = c->nt && run * es == 64 && !((uintptr_t)d & 63);
  for (int64_t e = 0; e < n0;) {
    int64_t m = 1;
    while (e + m * run < n0 && tab[e + m * run] == tab[e] + m * run) m++;
    tfe__kcopy_rev_recs((char *)(d + e), (const char *)(s + tab[e] - (run - 1)), run, m, (size_t)es, c->rrix, c->rrw, nt);
    e += m * run;
  }
  tfe__kstat_add(79);
  return true;
#else
  (void)c; (void)p; (void)d; (void)s; (void)n0;
  return false;
#endif
}

/* One G0 run of a plain copy block or gather tile column. */
TFE_INTERNAL void TFE_FN(k_copy_col_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                      const TFE_T *s, int64_t n0) {
  const tfe__kgroup *g0 = &p->g[0];
  if (c->cj) {
    for (int64_t i = 0; i < n0; i++) d[TFE__KOFF(p, 0, 0, i)] = TFE_FN(sr_conj)(s[TFE__KOFF(p, 0, 1, i)]);
    return;
  }
  if (g0->arith[0] && g0->arith[1]) {
    int64_t ds = g0->step[0], ss = g0->step[1];
    /* (a run of a streamed output streamed where its two partial lines are a small part of it) */
    const int64_t rsb = tfe__st.tune.copy_run_stream_bytes;
    const bool st = c->nt && rsb > 0 && n0 * (int64_t)sizeof(TFE_T) >= rsb;
    if (ds == 1 && ss == 1) {
      if (st) tfe__kstream(d, s, (size_t)n0 * sizeof(TFE_T));
      else memcpy(d, s, (size_t)n0 * sizeof(TFE_T));
    } else if (ds == 1 && ss == -1 && TFE_FN(k_copy_rev_)(c, d, s, n0, st)) return;
    else if (ds == 1) for (int64_t i = 0; i < n0; i++) d[i] = s[i * ss];
    else for (int64_t i = 0; i < n0; i++) d[i * ds] = s[i * ss];
    return;
  }
  int64_t run = p->dims[0];
  if (TFE_FN(k_copy_rev_recs_)(c, p, d, s, n0)) return;
  /* (runs of 4-14 bytes of 1- and 2-byte kinds too, the destination's tiny dim of a gather
   * tile: a 7-byte run took 7 loads and stores element by element, 4 as two overlapping pairs) */
  const bool short12 = sizeof(TFE_T) <= 2 && run * (int64_t)sizeof(TFE_T) >= 4 && tfe__st.tune.copy_short_runs;
  /* (runs of 4-64 bytes read forwards in plain tiles, copy_small_run_bytes: below. Not gather
   * tiles, whose scattered runs want each one's continuation prefetched: f64 runs of 5 there
   * ran 1.85x slower without) */
  const int64_t rb = run * (int64_t)sizeof(TFE_T);
  const bool small = rb >= 4 && rb <= tfe__st.tune.copy_small_run_bytes && p->str[1][0] == 1 && !p->gather;
  if (g0->arith[0] && g0->step[0] == 1 && g0->nd > 1 && (run >= 8 || short12 || small) && tfe__kabs(p->str[1][0]) == 1) {
    /* the table's first dim is unit-stride in both (tn_light: runs of 16 from 16 places):
     * copy run by run, vectorized, instead of element by element. Large outputs also
     * prefetch each run's continuation in the source (the same stream's next run, read a few
     * tiles later: 16 streams are more than the hardware prefetchers follow). Normal
     * stores: streamed ones measured slower with the prefetch (docs/bench-kernel.md). */
    const int64_t rpf = tfe__st.tune.copy_run_prefetch_bytes;
#if TFE__KHAVE_TR8
    const bool vs = tfe__st.tune.copy_short_runs && tfe__ksimd();
    if (vs) tfe__kstat_add(run < 8 ? 19 : 18);
    /* runs of whole lines of a streamed output go out as whole streamed lines */
    const bool lines = vs && c->nt && tfe__st.tune.copy_stream_line_runs && run * (int64_t)sizeof(TFE_T) % 64 == 0;
    if (lines) tfe__kstat_add(41);
    /* runs of 4-64 bytes read forwards: a loop of overlapping pairs, normal stores, no prefetch
     * (u8 [13,17r,500,600], 17 runs of 13 bytes a block read in reverse: 0.24 of the time of the
     * streamed column; the tile's runs are whole, n0 a multiple of run) */
    if (vs && small) {
      tfe__kstat_add(75);
      tfe__kcopy_runs_small((char *)d, (const char *)s, g0->tab[1], run, (int64_t)sizeof(TFE_T), (size_t)rb, n0 / run);
      return;
    }
#else
    const bool lines = false;
#endif
    /* a column of a streamed output (runs adjacent there) long enough: whole streamed lines
     * through an L1 buffer (copy_col_stream_bytes) */
    const int64_t csb = tfe__st.tune.copy_col_stream_bytes;
    if (c->nt && csb > 0 && p->str[1][0] > 0 && n0 % run == 0 && n0 * (int64_t)sizeof(TFE_T) >= csb &&
        !(lines && !((uintptr_t)d & 63))) {
      tfe__kstat_add(68);
      tfe__kstream_runs((char *)d, (const char *)s, g0->tab[1], run, (int64_t)sizeof(TFE_T),
                        (size_t)run * sizeof(TFE_T), n0 / run, rpf);
      return;
    }
    for (int64_t e = 0; e < n0; e += run) {
      const TFE_T *q = s + g0->tab[1][e];
      TFE_T *o = d + e;
      if (p->str[1][0] < 0) { /* (a reversed run) */
        const int64_t rsb = tfe__st.tune.copy_run_stream_bytes;
        const bool whole = c->nt && tfe__st.tune.copy_stream_line_runs && ((rb % 64 == 0 && !((uintptr_t)o & 63)) || (rsb && rb >= rsb));
        if (!TFE_FN(k_copy_rev_)(c, o, q, run, whole)) for (int64_t i = 0; i < run; i++) o[i] = q[-i];
        continue;
      }
      if (c->nt)
        for (int64_t b = 0; b < run * (int64_t)sizeof(TFE_T); b += 64) tfe__kpf((const char *)q + rpf + b);
#if TFE__KHAVE_TR8
      if (lines && !((uintptr_t)o & 63)) { tfe__kstream_simd((char *)o, (const char *)q, (size_t)run * sizeof(TFE_T), false); continue; }
      if (vs) { tfe__kcopy_short((char *)o, (const char *)q, (size_t)run * sizeof(TFE_T)); continue; }
#endif
      for (int64_t i = 0; i < run; i++) o[i] = q[i];
    }
    return;
  }
  if (g0->arith[0] && g0->step[0] == 1) TFE_FN(k_gather_col_)(p, 1, s, false, d, n0, c->nt && p->gather, p->gather);
  else for (int64_t i = 0; i < n0; i++) d[TFE__KOFF(p, 0, 0, i)] = s[TFE__KOFF(p, 0, 1, i)];
}

/* Whether a tile's destination columns follow one another (G0 a whole dim of it, or G1's first
 * dim right after G0 there), so that they go out as one run; never for a reversed G1. */
TFE_INTERNAL bool TFE_FN(k_cols_adjacent_)(const tfe__kplan *p, int64_t n0, int64_t n1, bool rev) {
  return !rev && n1 > 1 && TFE__KOFF(p, 1, 0, 1) == TFE__KOFF(p, 1, 0, 0) + n0;
}

/* Buffer columns [q, e) of a buffered tile out to the destination (buffer column q to
 * destination column n1-1-q when rev), columns adjacent in the destination as one run (runs:
 * G0 a whole dim of it, or G1's first dim right after G0 there; then lb == n0), so that only
 * a run's ends can be partial lines (streamed partial lines are written to memory piecewise). */
TFE_INTERNAL void TFE_FN(k_copy_buf_out_)(const tfe__kplan *p, TFE_T *d, const TFE_T *b, int64_t n0, int64_t n1,
                                          int64_t lb, bool rev, bool runs, int64_t q, int64_t e) {
  /* a short column going out alone: the rest of its edge lines comes from another tile much
   * later, and streamed partial lines leave the write-combining buffers piecewise, so its
   * edges take normal stores (copy_lone_edge_bytes) */
  const bool edges_nt = tfe__kon_amd(tfe__st.tune.kernel_stream_edge_lines);
  const int64_t lone = tfe__st.tune.copy_lone_edge_bytes;
  for (int64_t k; q < e; q = k) {
    const int64_t dj = TFE__KOFF(p, 1, 0, rev ? n1 - 1 - q : q);
    for (k = q + 1; runs && k < e && TFE__KOFF(p, 1, 0, k) == dj + (k - q) * n0;) k++;
    const size_t bytes = (size_t)((k - q) * n0) * sizeof(TFE_T);
    /* (a piece of a longer run, the run cut by k_copy_buf_out_next_'s groups, is not alone: its
     * neighbours' shares stream the rest of its edge lines right before or after it) */
    const bool cut = runs && k - q == 1 && (int64_t)bytes < lone && tfe__st.tune.copy_run_piece_edges &&
                     ((q > 0 && TFE__KOFF(p, 1, 0, q - 1) + n0 == dj) || (k < n1 && TFE__KOFF(p, 1, 0, k) == dj + n0));
    if (cut && edges_nt) tfe__kstat_add(52);
    tfe__kstream_ex(d + dj, b + q * lb, bytes, edges_nt && (k - q > 1 || cut || (int64_t)bytes >= lone));
  }
}

/* The G1 column step m (2-64) after which destination columns follow one another (G1's first
 * dim not adjacent in the destination, a later one is: f32 [5,33,36,o] read as [36,33,5,o], G1
 * 5 x 33, column j + 5 right after column j), or 0 (copy_chain_columns). */
TFE_INTERNAL int64_t TFE_FN(k_chain_step_)(const tfe__kplan *p) {
  const int64_t n0 = p->g[0].len, n1 = p->g[1].len, bytes = n0 * (int64_t)sizeof(TFE_T);
  if (!tfe__st.tune.copy_chain_columns || p->g[1].nd < 2 || TFE__KOFF(p, 1, 0, 1) == n0 || bytes % 8 || bytes < 64)
    return 0; /* (edges that 8-byte streaming stores can write; columns of a line or more) */
  for (int64_t m = 2; m < n1 && m <= 64; m++)
    if (TFE__KOFF(p, 1, 0, m) == TFE__KOFF(p, 1, 0, 0) + n0) return m;
  return 0;
}

/* k_copy_buf_out_next_ for a tile whose columns follow one another m apart in G1 (chain): out
 * in destination order, columns q0, q0 + m, q0 + 2m, ... for each q0 < m, a column whose
 * neighbour there is written right before or after it streaming its edge lines (the two
 * halves of each shared line then leave the write-combining buffer as one); ns: the next
 * tile's source for copy_next_prefetch's shares (one per eighth of the chains), or NULL.
 * Column by column in G1 order, each column's edges were cached stores (copy_lone_edge_bytes)
 * next to streamed middles, its neighbour m columns later. */
TFE_INTERNAL void TFE_FN(k_copy_chains_out_)(const tfe__kplan *p, TFE_T *d, const TFE_T *b, const TFE_T *ns,
                                             int64_t n0, int64_t n1, int64_t lb, int64_t m) {
  const bool edges_nt = tfe__kon_amd(tfe__st.tune.kernel_stream_edge_lines);
  const int64_t groups = ns ? 8 : 1, line = 64 / (int64_t)sizeof(TFE_T);
  tfe__kstat_add(53);
  for (int64_t g = 0; g < groups; g++) {
    for (int64_t q0 = m * g / groups; q0 < m * (g + 1) / groups; q0++)
      for (int64_t q = q0; q < n1; q += m) {
        const int64_t dq = TFE__KOFF(p, 1, 0, q);
        const bool joined = (q >= m && TFE__KOFF(p, 1, 0, q - m) + n0 == dq) ||
                            (q + m < n1 && TFE__KOFF(p, 1, 0, q + m) == dq + n0);
        tfe__kstream_ex(d + dq, b + q * lb, (size_t)n0 * sizeof(TFE_T), edges_nt && joined);
      }
    if (ns)
      for (int64_t i = n0 * g / groups; i < n0 * (g + 1) / groups; i++) {
        const TFE_T *r = ns + TFE__KOFF(p, 0, 1, i);
        for (int64_t j = 0; j < n1; j += line) __builtin_prefetch(r + j, 0, 2);
      }
  }
}

/* Whether k_copy_buf_out_next_ streams the tile out along its chains of columns. */
TFE_INTERNAL bool TFE_FN(k_buf_chains_)(const tfe__kplan *p, int64_t n0, int64_t n1, bool rev, bool runs, int64_t chain) {
  return chain && !runs && !rev && n0 == p->g[0].len && chain < n1; /* (a clipped G0 breaks the chains) */
}
/* The buffer out (k_copy_buf_out_), and meanwhile the next tile's source rows (one odometer
 * step on from s) asked into L2, a share after each group of columns (copy_next_prefetch): the
 * stream-out alone leaves the memory without reads, and the next tile's reads then find none
 * of their lines on the way (both phases in turn rather than overlapped, as a memcpy's are).
 * Not where the next tile reads on in this tile's rows (a chain, p->nchain: already cached),
 * but at a chain's end (nxo: the offset of the thread's next tile, which starts another chain;
 * copy_chain_next_prefetch; 0: none). asked: rows the tile's blocks asked already
 * (copy_next_spread); the groups share the rest. */
TFE_INTERNAL void TFE_FN(k_copy_buf_out_next_)(const tfe__kplan *p, TFE_T *d, const TFE_T *b, const TFE_T *s,
                                               int64_t n0, int64_t n1, int64_t lb, bool rev, bool runs, int64_t chain,
                                               int64_t nxo, int64_t asked) {
  const int64_t groups = 8;
  const TFE_T *ns = TFE_FN(k_buf_next_src_)(p, s, n1, nxo);
  if (ns && p->nchain) tfe__kstat_add(77);
  if (TFE_FN(k_buf_chains_)(p, n0, n1, rev, runs, chain)) {
    TFE_FN(k_copy_chains_out_)(p, d, b, ns, n0, n1, lb, chain);
    return;
  }
  if (!ns || asked >= n0) {
    TFE_FN(k_copy_buf_out_)(p, d, b, n0, n1, lb, rev, runs, 0, n1);
    return;
  }
  for (int64_t g = 0; g < groups; g++) {
    TFE_FN(k_copy_buf_out_)(p, d, b, n0, n1, lb, rev, runs, n1 * g / groups, n1 * (g + 1) / groups);
    TFE_FN(k_ask_next_rows_)(p, ns, asked + (n0 - asked) * g / groups, asked + (n0 - asked) * (g + 1) / groups, n1);
  }
}

/* A transpose tile whose destination columns are not 64-byte aligned (runs of 243 in a
 * reversal of 3s): the 8x8 blocks would store partial lines with normal stores (each line
 * read before it is written), so the tile goes through a buffer in L2 (columns of n0
 * contiguous), then each column is streamed out whole (its partial edge lines as
 * tfe__kstream_edge stores them). Kinds with register blocks (1, 2, 4, 8, 16 bytes) without
 * conjugation, G0 contiguous in the destination and G1 in the source, ascending or reversed
 * (step -1, a reversed source dim: the buffer is filled from the rows read ascending and its
 * columns are streamed out to the destination's in reverse). */
TFE_INTERNAL void TFE_FN(k_copy_buffered_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                           const TFE_T *s, int64_t n0, int64_t n1, int tid, int64_t pfo, int64_t nxo) {
  TFE_T *b = c->buf + (int64_t)tid * c->tile_elems;
  const bool rev = p->g[1].step[1] < 0;
  if (rev) { s -= n1 - 1; tfe__kstat_add(11); }
  const int64_t rb = tfe__krb(sizeof(TFE_T)), cb = tfe__kcb(sizeof(TFE_T)); /* (rb > 0: see k_copy_wants_buf_) */
  const int64_t m0 = n0 - n0 % rb, m1 = n1 - n1 % cb, line = 64 / (int64_t)sizeof(TFE_T);
  /* buffer columns one line further apart than n0 unless they go out as one run: n0 of a
   * power of two put every column in the same few L1 sets */
  const bool runs = TFE_FN(k_cols_adjacent_)(p, n0, n1, rev);
  const int64_t lb = runs || !tfe__st.tune.copy_tile_pad ? n0 : n0 + line;
  const tfe__kgroup *g0 = &p->g[0];
  const int64_t *rt = g0->arith[1] ? NULL : g0->tab[1];
  const int pf = tfe__st.tune.kernel_prefetch_strips;
  const int64_t pb = TFE_FN(k_block_prefetch_)(n1);
  bool simd = tfe__ksimd();
  (void)simd;
  /* rims as whole register blocks shifted back to end at the edge (copy_shifted_rims), rewriting
   * a few of the buffer's elements with the same values, where both sides hold a block */
  const bool shift = TFE__KHAVE_TR8 && simd && tfe__st.tune.copy_shifted_rims && n0 >= rb && n1 >= cb;
  /* the next tile's rows asked a share before each register block (k_spread_next_) */
  const TFE_T *ns = TFE_FN(k_buf_chains_)(p, n0, n1, rev, runs, c->chain) ? NULL : TFE_FN(k_spread_next_)(p, s, n1, nxo, true);
  const int64_t ck = sizeof(TFE_T) <= 2 || m1 == 0 ? cb : m1; /* (columns a call: 1- and 2-byte blocks one by one) */
  const int64_t calls = ((shift ? n0 + rb - 1 : m0) / rb) * ((m1 + ck - 1) / ck + (shift && m1 < n1));
  int64_t asked = 0, call = 0;
  for (int64_t ib = 0; ib < m0 || (shift && ib < n0); ib += rb) {
    if (ib >= m0) ib = n0 - rb; /* (the shifted last row of blocks) */
    const void *srow[64];
    if (pb) TFE_FN(k_prefetch_run_rows_)(p, 1, s, ib + rb, rb, n0, pb);
    else if (pf) TFE_FN(k_prefetch_run_rows_)(p, 1, s, ib + rb * pf, rb, n0, n1);
    for (int i = 0; i < rb; i++) srow[i] = s + TFE__KOFF(p, 0, 1, ib + i);
#if TFE__KHAVE_TR8
    if (simd) { /* one call per row of blocks */
      if (sizeof(TFE_T) != 8 && ib == 0 && m1 > 0) tfe__kstat_add(9);
      if (ns) /* (ck columns a call, a share before each) */
        for (int64_t jb = 0; jb < m1; jb += ck) {
          const void *sj[64];
          for (int i = 0; i < rb; i++) sj[i] = (const TFE_T *)srow[i] + jb;
          TFE_FN(k_ask_share_)(p, ns, 0, n0, n1, &call, calls, &asked, true);
          tfe__ktrx_row(sizeof(TFE_T), b + ib + jb * lb, lb, sj, ck, n1 - jb, false);
        }
      else tfe__ktrx_row(sizeof(TFE_T), b + ib, lb, srow, m1, n1, false);
      if (shift && m1 < n1) { /* the shifted last column of blocks */
        TFE_FN(k_ask_share_)(p, ns, 0, n0, n1, &call, calls, &asked, true);
        const void *sr[64];
        void *dc[64];
        for (int i = 0; i < rb; i++) sr[i] = (const TFE_T *)srow[i] + (n1 - cb);
        for (int j = 0; j < cb; j++) dc[j] = b + (n1 - cb + j) * lb + ib;
        tfe__ktrx(sizeof(TFE_T), dc, sr, false);
      }
      continue;
    }
#endif
    for (int64_t jb = 0; jb < m1; jb++)
      for (int i = 0; i < rb; i++) b[jb * lb + ib + i] = ((const TFE_T *)srow[i])[jb];
  }
  if (shift) {
    if (m0 < n0 || m1 < n1) tfe__kstat_add(13);
  } else if (!m1 && TFE_FN(k_copy_wide12_)(c, b, s, rt, g0->step[1], NULL, lb, 0, n0, 0, n1)) {
    /* (a tile of short source rows, whole, in wide blocks) */
  } else if (TFE_FN(k_copy_small12_)(b, s, rt, g0->step[1], NULL, lb, 0, n0, m1, n1, pfo)) {
    /* rims: the rows below the whole blocks, the columns past them (1- and 2-byte kinds in
     * 16-byte register blocks where they fit; else loops) */
    if (m1 > 0) TFE_FN(k_copy_small12_)(b, s, rt, g0->step[1], NULL, lb, m0, n0, 0, m1, pfo);
  } else
    for (int64_t j = 0; j < n1; j++)
      for (int64_t i = j < m1 ? m0 : 0; i < n0; i++) b[j * lb + i] = s[TFE__KOFF(p, 0, 1, i) + j];
  TFE_FN(k_copy_buf_out_next_)(p, d, b, s, n0, n1, lb, rev, runs, c->chain, nxo, ns ? asked : 0);
}

/* One register block of k_copy_skew12_: columns jb + hc*h .. of the rows at srow[] into v (2-byte
 * kinds 32 x 32, bytes 64 rows x 32 columns (h: which half), 4-byte kinds 16 x 8). */
TFE_INTERNAL void TFE_FN(k_skew_block_)(void *v, const void *const *srow, int64_t jb, int h) {
#if defined(__AVX512BW__)
  const int64_t es = (int64_t)sizeof(TFE_T);
  if (es == 2) tfe__ktr2u((__m512i *)v, srow, jb * es);
  else if (es == 1) tfe__ktr1z_half((__m512i *)v, srow, jb, h);
  else tfe__ktr4z((__m512i *)v, srow, (jb + 8 * h) * es);
#else
  (void)v; (void)srow; (void)jb; (void)h;
#endif
}
/* k_copy_skew_ for 1-, 2- and 4-byte kinds (AVX-512BW; bytes also VBMI and copy_skew_lines 3): blocks
 * of n = 64 / es rows transposed in registers (k_skew_block_: 32 or 8 columns a block), each
 * column joined with its register from the block above into the whole line that starts a_j
 * elements before it, streamed (tfe__kz_skew_cols); the tile buffer (128 bytes a column,
 * k_copy_plan_) holds each column's register and join index. Rows are walked outermost so that each source row is
 * read along the tile's whole width: the plan gives these tiles long source runs
 * (copy_skew_run_bytes; k_copy_skew12_plans_). Rims in loops. False for tiles under a block a
 * side (the caller writes them unbuffered). */
TFE_INTERNAL bool TFE_FN(k_copy_skew12_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d, const TFE_T *s,
                                         int64_t n0, int64_t n1, int tid) {
#if defined(__AVX512BW__)
  const int64_t es = (int64_t)sizeof(TFE_T), n = 64 / es;
  if (es > 4 || !c->skew12 || n0 < n || n1 < n) return false;
  const int64_t hc = es == 2 ? 32 : es == 1 ? 32 : 8, nh = n / hc; /* (columns a register block: hc, nh of them) */
  const bool rev = p->g[1].step[1] < 0;
  if (rev) s -= n1 - 1;
  tfe__kstat_add(44);
  const int64_t m0 = n0 - n0 % n, m1 = n1 - n1 % n;
  __m512i *car = (__m512i *)(void *)(c->buf + (int64_t)tid * c->tile_elems), *idx = car + m1;
  const void *srow[64];
  void *dc[64];
  const tfe__kgroup *g1 = &p->g[1];
  const bool ar = g1->arith[0];
#define TFE__KDCOL(q) (d + (ar ? (rev ? n1 - 1 - (q) : (q)) * g1->step[0] : TFE__KOFF(p, 1, 0, rev ? n1 - 1 - (q) : (q))))
  for (int64_t q = 0; q < m1; q++) idx[q] = tfe__kz_join_idx((size_t)es, (int)(((uintptr_t)TFE__KDCOL(q) & 63) / (uintptr_t)es));
  for (int64_t ib = 0; ib < m0; ib += n) {
    for (int64_t i = 0; i < n; i++) srow[i] = s + TFE__KOFF(p, 0, 1, ib + i);
    for (int64_t jb = 0; jb < m1; jb += n) {
      for (int64_t j = 0; j < n; j++) dc[j] = TFE__KDCOL(jb + j) + ib;
      for (int h = 0; h < nh; h++) {
        __m512i v[32];
        TFE_FN(k_skew_block_)(v, srow, jb, h);
        tfe__kz_skew_cols((size_t)es, dc + hc * h, v, car + jb + hc * h, idx + jb + hc * h, ib == 0, (int)hc);
      }
    }
  }
  /* the rows from m0 on: one more row of blocks, its rows past n0 repeating the last */
  const int r = (int)(n0 - m0);
  for (int64_t i = 0; i < n; i++) srow[i] = s + TFE__KOFF(p, 0, 1, r ? m0 + (i < r ? i : r - 1) : 0);
  for (int64_t jb = 0; jb < m1; jb += n) {
    for (int64_t j = 0; j < n; j++) dc[j] = TFE__KDCOL(jb + j) + m0;
    for (int h = 0; h < nh; h++) {
      __m512i v[32];
      if (r) TFE_FN(k_skew_block_)(v, srow, jb, h);
      tfe__kz_skew_end((size_t)es, dc + hc * h, car + jb + hc * h, idx + jb + hc * h, v, r, (int)hc);
    }
  }
  for (int64_t q = m1; q < n1; q++) { /* rim columns */
    TFE_T *dq = TFE__KDCOL(q);
    for (int64_t i = 0; i < n0; i++) dq[i] = s[TFE__KOFF(p, 0, 1, i) + q];
  }
#undef TFE__KDCOL
  return true;
#else
  (void)c; (void)p; (void)d; (void)s; (void)n0; (void)n1; (void)tid;
  return false;
#endif
}

/* A buffered tile of 8- or 16-byte elements on AVX-512 without the buffer: rows of register
 * blocks joined with the row above into whole destination lines (tfe__kskew_row), the buffer
 * holding only the last row's registers; rims in loops. The destination must be 8-byte
 * aligned. */
TFE_INTERNAL bool TFE_FN(k_copy_skew_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d, const TFE_T *s,
                                       int64_t n0, int64_t n1, int tid) {
#if TFE__KHAVE_TR8 && defined(__AVX512F__)
  const size_t es = sizeof(TFE_T);
  const int64_t n = 64 / (int64_t)es; /* block side: elements of a line */
  if ((es != 8 && es != 16) || !tfe__st.tune.copy_skew_lines || ((uintptr_t)d & 7) || !tfe__ksimd() || n0 < n ||
      n1 > TFE__KTAB_STD)
    return false;
  const bool rev = p->g[1].step[1] < 0;
  if (TFE_FN(k_cols_adjacent_)(p, n0, n1, rev))
    return false; /* the buffer streams them as one run */
  /* (rims over copy_skew_rim_pct of the tile: the buffer's shifted register blocks instead; f64
   * tiles of 14 columns, 6 of them rims, ran 2x slower skewed. Short source rows, a whole short
   * input run as G1: the buffer's columns went out 1.25-2x faster, docs/bench-kernel.md session 40) */
  const int why = tfe__kskew_declines(n0, n1, p->g[1].len, (int64_t)es);
  if (why) {
    tfe__kstat_add(why);
    return false;
  }
  const int64_t m0 = n0 - n0 % n, m1 = n1 - n1 % n;
  if (rev) s -= n1 - 1;
  tfe__kstat_add(15);
  const int pf = tfe__st.tune.kernel_prefetch_strips;
  __m512d *car = (__m512d *)(void *)(c->buf + (int64_t)tid * c->tile_elems); /* (n0 * n1 >= n * m1 elements) */
  double *dcol[TFE__KTAB_STD];
  for (int64_t q = 0; q < n1; q++) dcol[q] = (double *)(void *)(d + TFE__KOFF(p, 1, 0, rev ? n1 - 1 - q : q));
  for (int64_t ib = 0; ib < m0; ib += n) {
    const double *srow[8];
    if (pf) TFE_FN(k_prefetch_run_rows_)(p, 1, s, ib + n * pf, n, n0, n1);
    for (int64_t i = 0; i < n; i++) srow[i] = (const double *)(const void *)(s + TFE__KOFF(p, 0, 1, ib + i));
    tfe__kskew_row(es, dcol, ib, srow, m1, car);
  }
  tfe__kskew_tail(es, dcol, m0, m1, car);
  for (int64_t q = 0; q < n1; q++) { /* rims */
    TFE_T *dq = (TFE_T *)(void *)dcol[q];
    for (int64_t i = q < m1 ? m0 : 0; i < n0; i++) dq[i] = s[TFE__KOFF(p, 0, 1, i) + q];
  }
  return true;
#else
  (void)c; (void)p; (void)d; (void)s; (void)n0; (void)n1; (void)tid;
  return false;
#endif
}

/* Whether the destination columns of a tile spread over at least 16 of the 64 line slots of a
 * 4 KiB page (its first 64 columns looked at): column strides of a multiple of 512 bytes
 * (residues 0, 512, ..., 3584) put the columns in 8 slots or fewer. Written in place with
 * streaming stores, spread aligned columns ran faster than through the tile buffer (f32 [7280,
 * 5600] 0.6 of the time, f64 [5000,3000] 0.72), unspread ones slower (f64 [4000,4096] 1.3x:
 * docs/bench-kernel.md, session 22). */
TFE_INTERNAL bool TFE_FN(k_cols_spread_)(const tfe__kplan *p) {
  const tfe__kgroup *g1 = &p->g[1];
  uint64_t slots = 0;
  for (int64_t j = 0; j < g1->len && j < 64; j++) {
    int64_t b = TFE__KOFF(p, 1, 0, j) * (int64_t)sizeof(TFE_T) % 4096;
    slots |= (uint64_t)1 << ((b < 0 ? b + 4096 : b) / 64);
  }
  int n = 0;
  for (; slots; slots &= slots - 1) n++;
  return n >= 16;
}
/* Whether a copy plan's transpose tiles go through k_copy_buffered_: large outputs (streamed)
 * whose destination columns are not all 64-byte aligned; aligned ones (wider than 512 bytes)
 * too with tfe__kcopy_buf_mode() 2, and with mode 3 unless their columns spread over a page's
 * lines (k_cols_spread_) (copy_buffered_tiles; the choices measured best on each CPU family
 * are in docs/bench-kernel.md). */
TFE_INTERNAL bool TFE_FN(k_copy_wants_buf_)(const tfe__kplan *p, const TFE_T *d, bool nt, bool cj) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  int mode = tfe__kcopy_buf_mode();
  const int64_t es = (int64_t)sizeof(TFE_T);
  /* 1- and 2-byte tiles narrower than a block: the rims' 16-byte blocks write partial lines
   * (u8 [56,273,412,23] [1,0,3,2] 2.3 -> 1.24x memcpy buffered, copy_buf_narrow_bytes) */
  const int64_t narrow = tfe__st.tune.copy_buf_narrow_bytes, g1b = g1->len * es;
  const bool thin = g1->len < tfe__kcb(sizeof(TFE_T)) && !(es <= 2 && narrow && g1b >= narrow);
  /* 1- and 2-byte tiles of 16-63 bytes of rows whose destination columns follow one another
   * for copy_buf_short_rows bytes or more (runs out of the buffer): the 16-byte blocks' stores
   * there were partial lines, each read before written (columns apart, chains of them, ran
   * slower buffered: u8 [9,2047,45,201] [2,1,0,3] 1.09x; runs of 2-3 columns 1.4x) */
  int64_t adj = 1;
  if (es <= 2 && tfe__st.tune.copy_buf_short_rows && g0->len * es >= 16)
    while (adj < g1->len && TFE__KOFF(p, 1, 0, adj) == TFE__KOFF(p, 1, 0, 0) + adj * g0->len) adj++;
  /* (not batches of small dense transposes under a register block's columns, each tile one
   * block of both operands, the next one right after it in both (copy_buf_short_cols): u8
   * [33,37,5,341,41] [1,0,2,3,4], u16 [30,25,100000] [1,0,2] ran at 0.48-0.58 of their buffered
   * time in place; G1 of 64-90 columns 1.5-1.7x slower in place, and so were tiles whose next
   * one lies elsewhere in the destination (u8 [32,38,2,9,15,28,11] [1,0,4,2,6,3,5] 1.47x)) */
  const int64_t tile = g0->len * g1->len;
  const bool batch = tfe__st.tune.copy_buf_short_cols && g1->len < tfe__kcb(sizeof(TFE_T)) && p->no > 0 &&
                     p->ocount[0] > 1 && p->ostep[0][0] == tile && p->ostep[1][0] == tile;
  const bool long_run = adj > 1 && adj * g0->len * es >= tfe__st.tune.copy_buf_short_rows;
  if (long_run && batch && nt) tfe__kstat_add(73);
  const bool short_rows = long_run && !batch;
  if (!nt || cj || !mode || !tfe__krb(sizeof(TFE_T)) || g1->nd == 0 || p->gather || !g0->arith[0] ||
      g0->step[0] != 1 || !g1->arith[1] || tfe__kabs(g1->step[1]) != 1 || thin ||
      (g0->len < tfe__krb(sizeof(TFE_T)) && !short_rows))
    return false; /* (other tiles narrower or shorter than a block have no blocks: a cyclic shift
                   * of 3s; f32 columns of 15, which ran slower buffered than written in place) */
  /* (modes 2 and 3 leave columns under 512 B unbuffered: streaming them one by one costs more
   * than the buffer saves) */
  /* (mode 4: as 3 for table tiles, G0 over several dims; a plain G0's aligned columns unbuffered) */
  const bool wide = mode >= 2 && g0->len * es >= 512 && (mode != 4 || g0->nd > 1);
  if (wide && mode == 2) return true;
  if (((uintptr_t)(d + p->base[0]) & 63) != 0) return true;
  for (int64_t j = 0; j < g1->len; j++)
    if ((TFE__KOFF(p, 1, 0, j) * es) & 63) return true;
  for (int q = 0; q < p->no; q++)
    if ((p->ostep[0][q] * es) & 63) return true;
  /* (1- and 2-byte tiles whose rims hold copy_buf_rim_pct of the tile or more: in place they
   * run as 16-byte blocks, buffered as shifted register blocks; u16 [56,4,54,3,46,40r] perm
   * [3,1,5,4,0,2], aligned 480 x 56 tiles, 24 of the 56 columns past the block: 0.43 of the time) */
  const int64_t rim = tfe__st.tune.copy_buf_rim_pct, n0 = g0->len, n1 = g1->len;
  const int64_t m0 = n0 - n0 % tfe__krb(sizeof(TFE_T)), m1 = n1 - n1 % tfe__kcb(sizeof(TFE_T));
  if (es <= 2 && mode >= 2 && rim > 0 && ((m0 > 0 && m1 > 0) || g0->nd > 1) && (n0 * n1 - m0 * m1) * 100 >= rim * n0 * n1) {
    tfe__kstat_add(71);
    return true;
  }
  return wide && !TFE_FN(k_cols_spread_)(p);
}

/* A transpose tile of a 1- or 2-byte kind with fewer rows than a 16-byte register block
 * (1 < n0 < 16 / es): each block of 16 / es source-contiguous columns is one 16-byte transpose
 * whose rows past n0 repeat the first; the last block is shifted back to end at n1. Destination
 * columns that follow one another (n0 apart: records of n0 elements interleaved from n0 source
 * rows) are stored in ascending order 16 bytes each, every store's tail overwritten by the next
 * columns, blocks whose last tail would run past the tile through a stack buffer
 * (copy_interleave_rows; scalar loops before: 4.7x the streamed copy for a batch of 11 x 18840
 * byte transposes). Columns apart (a table) get their n0 elements by two overlapping stores
 * each (tfe__kstore_head), nothing past them written (copy_short_rows; a u8 small-dim
 * permutation of 12 x 192 tiles: 24x the streamed copy as scalar loops, docs/bench-kernel.md
 * session 32). False where it does not apply. */
TFE_INTERNAL bool TFE_FN(k_copy_interleave_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d, const TFE_T *s,
                                             int64_t n0, int64_t n1) {
#if TFE__KHAVE_TR8
  const int64_t es = (int64_t)sizeof(TFE_T), nb = 16 / es;
  const tfe__kgroup *g1 = &p->g[1];
  const bool adj = g1->arith[0] && g1->step[0] == n0;
  if (es > 2 || c->cj || !tfe__ksimd() || n0 < 2 || n0 >= nb || n1 < nb ||
      !(adj ? tfe__st.tune.copy_interleave_rows : tfe__st.tune.copy_short_rows))
    return false;
  tfe__kstat_add(adj ? 42 : 51);
  TFE_T buf[16 * 16 + 16];
  const __m128i sh = tfe__kstore_head_sh((int)(n0 * es));
  const TFE_T *row[16];
  const void *sr[16];
  void *dc[16];
  for (int64_t i = 0; i < nb; i++) row[i] = s + TFE__KOFF(p, 0, 1, i < n0 ? i : 0);
  for (int64_t jb = 0;; jb += nb) {
    if (jb + nb > n1) jb = n1 - nb;
    for (int64_t i = 0; i < nb; i++) sr[i] = row[i] + jb;
    if (!adj) {
      for (int64_t j = 0; j < nb; j++) dc[j] = d + TFE__KOFF(p, 1, 0, jb + j);
      tfe__ktr12x16_head((size_t)es, dc, sr, (int)nb, (int)(n0 * es), sh);
    } else {
      const bool direct = (jb + nb) * n0 + nb - n0 <= n1 * n0; /* (its last store's tail in the tile) */
      TFE_T *o = direct ? d + jb * n0 : buf;
      for (int64_t j = 0; j < nb; j++) dc[j] = o + j * n0;
      tfe__ktr12x16((size_t)es, dc, sr);
      if (!direct) memcpy(d + jb * n0, buf, (size_t)(nb * n0 * es));
    }
    if (jb + nb == n1) return true;
  }
#else
  (void)c; (void)p; (void)d; (void)s; (void)n0; (void)n1;
  return false;
#endif
}

/* Columns [j0, j1) of n1's share of the next gather tile's source lines (lines of them, lr a
 * run: tfe__kplan_footprint), asked into L2 (copy_next_prefetch 2: see k_copy_tile_). */
TFE_INTERNAL void TFE_FN(k_next_share_)(const tfe__kplan *p, const TFE_T *ns, int64_t lines, int64_t lr, int64_t j0,
                                        int64_t j1, int64_t n1) {
  for (int64_t l = lines * j0 / n1, e = lines * j1 / n1; l < e; l++)
    __builtin_prefetch((const char *)(ns + p->pf_off[l / lr]) + l % lr * 64, 0, 2);
}

/* A gather tile of a 1- or 2-byte kind (G0 unit-stride in the destination, read through its
 * source table) whose G1 starts with a source run (G1's leading dims contiguous there, r
 * columns): each run of columns is an n0 x r transpose of rows read through G0's table, run as
 * register blocks (k_copy_small12_ for r >= 16 / es, k_deint_ for shorter runs) instead of a
 * byte or pair at a time (u8 random small-dim permutations ran 8-42x the streamed copy, docs/
 * bench-kernel.md session 32). The next tile's source is asked for a share per run (ns: see
 * k_copy_tile_). False where it does not apply (copy_gather_blocks 0). */
/* The source run that leads G1 of gather plan p, in columns, where its tiles run register blocks
 * (k_copy_gather12_); 0 where they do not (whole tiles: n0 = G0's length, n1 = G1's). */
TFE_INTERNAL int64_t TFE_FN(k_gather12_run_)(const tfe__kplan *p, bool cj, int64_t n0, int64_t n1) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  const int nd0 = g0->nd, nb = 16 / (int)sizeof(TFE_T);
  if (sizeof(TFE_T) > 2 || !tfe__st.tune.copy_gather_blocks || cj || !TFE__KHAVE_TR8 || !tfe__ksimd() || n0 < nb ||
      n1 < 2 || nd0 == 0 || g1->nd == 0 || !g0->arith[0] || g0->step[0] != 1 || p->str[1][nd0] != 1)
    return 0;
  int64_t r = g1->nd == 1 ? g1->last_b : p->dims[nd0];
  for (int k = 1; k < g1->nd && p->str[1][nd0 + k] == r; k++) r *= k == g1->nd - 1 ? g1->last_b : p->dims[nd0 + k];
  return r < 3 ? 0 : r; /* (u16 runs of 2: 0.72 and 1.21 of the time) */
}
TFE_INTERNAL bool TFE_FN(k_copy_gather12_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d, const TFE_T *s,
                                          int64_t n0, int64_t n1, const TFE_T *ns, int64_t lines, int64_t lr) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  const int64_t nb = 16 / (int64_t)sizeof(TFE_T), r = TFE_FN(k_gather12_run_)(p, c->cj, n0, n1);
  if (r == 0) return false;
  const int64_t *rtab = g0->arith[1] ? NULL : g0->tab[1], lds = g0->arith[1] ? g0->step[1] : 0;
  const int64_t *ctab = g1->arith[0] ? NULL : g1->tab[0], ldd = g1->arith[0] ? g1->step[0] : 0;
  tfe__kstat_add(49);
  for (int64_t j0 = 0; j0 < n1; j0 += r) {
    const int64_t w = n1 - j0 < r ? n1 - j0 : r;
    if (ns) TFE_FN(k_next_share_)(p, ns, lines, lr, j0, j0 + w, n1);
    TFE_T *dj = ctab ? d : d + j0 * ldd;
    const int64_t *cj = ctab ? ctab + j0 : NULL;
    const TFE_T *sj = s + TFE__KOFF(p, 1, 1, j0);
    if (TFE_FN(k_copy_wide12_)(c, dj, sj, rtab, lds, cj, ldd, 0, n0, 0, w)) continue;
    if (w >= nb) TFE_FN(k_copy_small12_)(dj, sj, rtab, lds, cj, ldd, 0, n0, 0, w, 0);
    else if (w < 2 || !TFE_FN(k_deint_)(c, dj, sj, rtab, lds, cj, ldd, n0, w))
      for (int64_t j = j0; j < j0 + w; j++) TFE_FN(k_copy_col_)(c, p, d + TFE__KOFF(p, 1, 0, j), s + TFE__KOFF(p, 1, 1, j), n0);
  }
  return true;
}

/* A transpose tile of fewer columns than a 16-byte register block (short records): k_deint_
 * through the plan's groups. */
TFE_INTERNAL bool TFE_FN(k_copy_deinterleave_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d, const TFE_T *s,
                                               int64_t n0, int64_t n1) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  return TFE_FN(k_deint_)(c, d, s, g0->arith[1] ? NULL : g0->tab[1], g0->step[1], g1->arith[0] ? NULL : g1->tab[0],
                          g1->step[0], n0, n1);
}

TFE_INTERNAL void TFE_FN(k_copy_tile_)(void *ctx, const tfe__kplan *p, const tfe__ktile *t) {
  const TFE_TY(kcopy_) *c = (const TFE_TY(kcopy_) *)ctx;
  TFE_T *d = c->d + t->off[0];
  const TFE_T *s = c->s + t->off[1];
  int64_t n0 = t->n0, n1 = t->n1;
  if (c->skew12 && TFE_FN(k_copy_skew12_)(c, p, d, s, n0, n1, t->tid)) return;
  if (c->buf && !c->skew12) {
    if (!TFE_FN(k_copy_skew_)(c, p, d, s, n0, n1, t->tid))
      TFE_FN(k_copy_buffered_)(c, p, d, s, n0, n1, t->tid, TFE_FN(k_short_rows_pf_)(p, t), TFE_FN(k_chain_next_)(p, t));
    return;
  }
  if (p->g[1].nd > 0 && !p->gather) { /* a transpose tile */
    const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
    /* tables: register blocks by pointers where both groups are unit steps on their sides,
     * else strided transposes run by run where the groups' first dims are runs */
    bool blocks = g0->arith[0] && g0->step[0] == 1 && g1->arith[1] && g1->step[1] == 1;
    if (blocks && (TFE_FN(k_copy_interleave_)(c, p, d, s, n0, n1) || TFE_FN(k_copy_deinterleave_)(c, p, d, s, n0, n1)))
      return;
    const TFE_T *ns = blocks || TFE_FN(k_ar_ok_)(p) ? TFE_FN(k_spread_next_)(p, s, n1, TFE_FN(k_chain_next_)(p, t), false) : NULL;
    if (TFE_FN(k_copy_ar_)(c, p, d, s, n0, n1, ns)) return;
    if (!blocks && TFE_FN(k_copy_runs_)(c, p, d, s, n0, n1)) return;
    if (!blocks && p->str[0][0] == 1 && tfe__kabs(p->str[1][0]) == 1) { /* a transpose of short runs */
      for (int64_t j = 0; j < n1; j++)
        TFE_FN(k_copy_col_)(c, p, d + TFE__KOFF(p, 1, 0, j), s + TFE__KOFF(p, 1, 1, j), n0);
      return;
    }
    const int64_t pfo = TFE_FN(k_short_rows_pf_)(p, t); /* (tiles that ask a later tile already) */
    TFE_FN(k_copy_blocks_)(c, p, d, s, 0, n0, 0, n1, pfo, blocks && !pfo ? ns : NULL);
    return;
  }
  /* a gather tile: the next tile's source (one odometer step on, as runs: tfe__kplan_footprint)
   * asked into L2 a share per column (copy_next_prefetch 2): its gathers otherwise meet each
   * line at memory latency, in an order no hardware prefetcher follows (small-dim permutations:
   * 0.61-0.99 of the time on 30 of 35 such sweep cases, docs/bench-kernel.md session 31) */
  const TFE_T *ns = NULL;
  int64_t lr = 0, lines = 0;
  if (p->pf_run && n1 > 1 && p->no > 0 && p->ocount[0] > 1 && tfe__st.tune.copy_next_prefetch > 1) {
    ns = s + p->ostep[1][0];
    lr = (p->pf_run * (int64_t)sizeof(TFE_T) + 63) / 64 + 1; /* (lines of a run, one more for its start's offset) */
    lines = lr * p->pf_nrun;
    tfe__kstat_add(48);
  }
  if (p->gather && TFE_FN(k_copy_gather12_)(c, p, d, s, n0, n1, ns, lines, lr)) return;
  for (int64_t j = 0; j < n1; j++) { /* a gather tile's columns, or one plain block (n1 = 1) */
    if (ns) TFE_FN(k_next_share_)(p, ns, lines, lr, j, j + 1, n1);
    TFE_FN(k_copy_col_)(c, p, d + TFE__KOFF(p, 1, 0, j), s + TFE__KOFF(p, 1, 1, j), n0);
  }
}

/* A unit plan's tile (units.h); c->buf: per-thread buffers of tile_elems elements. */
TFE_INTERNAL void TFE_FN(k_copy_unit_tile_)(void *ctx, const tfe__kplan *p, const tfe__ktile *t) {
  const TFE_TY(kcopy_) *c = (const TFE_TY(kcopy_) *)ctx;
  char *b = c->buf ? (char *)(void *)(c->buf + (int64_t)t->tid * c->tile_elems) : NULL;
  tfe__kunit_run_tile(p, (char *)(void *)c->d, (const char *)(const void *)c->s, t, (int64_t)sizeof(TFE_T), b, c->nt, c->rrix,
                      c->rrw);
}
/* The views of plan p's operand o over its dims but the first (a run common to both, r
 * elements), as units of r elements: strides divided by r (tfe__kplan_units checked that they
 * are multiples), the origin moved to the lowest unit. NULL where that unit is not aligned to
 * al bytes. */
TFE_INTERNAL char *TFE_FN(k_units_view_)(const TFE_TY(view) *v, const tfe__kplan *p, int o, int64_t al, tfe_layout *lay) {
  const int64_t r = p->dims[0];
  int64_t lo = 0;
  lay->rank = p->rank - 1;
  for (int d = 1; d < p->rank; d++) {
    lay->dims[d - 1] = p->dims[d];
    lay->strides[d - 1] = p->str[o][d] / r;
    if (p->str[o][d] < 0) lo += (p->dims[d] - 1) * (p->str[o][d] / r);
  }
  lay->offset = -lo;
  char *b = (char *)(void *)(v->data + p->base[o]) + lo * r * (int64_t)sizeof(TFE_T);
  if (p->str[o][0] < 0) b -= (r - 1) * (int64_t)sizeof(TFE_T); /* (a run read backwards: from its lowest element) */
  return (uintptr_t)b % (uintptr_t)al ? NULL : b;
}
/* Turn round the r elements of each of the n units of r * es bytes that lie one after another
 * from d, on nt threads (k_copy_unit_kind_'s units of a reversed source run). */
TFE_INTERNAL void TFE_FN(k_rev_dense_units_)(char *d, int64_t r, int64_t n, int nt) {
#if TFE__KHAVE_TR8
  _Alignas(64) uint8_t ix[64];
  const int w = tfe__krev_recs_prep(ix, r, sizeof(TFE_T));
  const int64_t ub = r * (int64_t)sizeof(TFE_T);
  (void)nt; /* (without OpenMP) */
  TFE_OMP(parallel num_threads(nt) if (nt > 1))
  {
    int64_t lo, hi;
    tfe__kshare(n, &lo, &hi);
    if (w) tfe__kcopy_rev_recs(d + lo * ub, d + lo * ub, r, hi - lo, sizeof(TFE_T), ix, w, false);
    else tfe__krev_units(d + lo * ub, NULL, ub, hi - lo, (int64_t)sizeof(TFE_T), ub);
  }
#else
  (void)d; (void)r; (void)n; (void)nt;
#endif
}
/* A copy of units of 4 bytes (plan p's common leading run: see k_copy_units_; runs of 4 u8
 * or 2 u16) run as a copy of i32 over the same unit views (bits moved, never computed on), so
 * that its tiles take 4-byte register transposes and gathers instead of unit-by-unit moves
 * (u16 runs of 2 in a small-dim permutation: 43.7 ms as units, 17.2 as i32; units of 8 and 16
 * bytes as i64 and c128 measured mixed, 0.41-2.58: docs/bench-kernel.md session 32). Both
 * operands' units 4-byte aligned; i32 compiled in this unit (TFE__KON_i32). copy_unit_kinds 0:
 * never. False where it does not apply. */
TFE_INTERNAL bool TFE_FN(k_copy_unit_kind_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, const tfe__kplan *p) {
#if TFE__KON_i32
  if (!tfe__st.tune.copy_unit_kinds || sizeof(TFE_T) > 2 || p->dims[0] * (int64_t)sizeof(TFE_T) != 4) return false;
  /* Units the source reads backwards (u8 [4r,64,273,38,58] perm [0,4,3,2,1]) take the same
   * copy where the destination's units are dense, then one pass turns them round (copy_unit_kinds
   * 2): 0.XX of the time of unit tiles, each unit moved on its own (counter 82) */
  const bool rev = p->str[1][0] == -1;
  if (p->str[1][0] != 1 && !(rev && tfe__st.tune.copy_unit_kinds > 1 && TFE__KHAVE_TR8 && tfe__ksimd())) return false;
  tfe_layout ld, ls;
  char *d = TFE_FN(k_units_view_)(dst, p, 0, 4, &ld), *s = TFE_FN(k_units_view_)(src, p, 1, 4, &ls);
  if (!d || !s || (rev && (ld.offset != 0 || !tfe__kdense_any(&ld)))) return false;
  tfe_view_i32 vd = {(int32_t *)(void *)d, ld, false}, vs = {(int32_t *)(void *)s, ls, false};
  if (tfe_copy_i32(&vd, &vs) != TFE_OK) return false;
  TFE__KSTAT(50);
  if (rev) {
    const int64_t n = tfe_layout_numel(&ld);
    TFE_FN(k_rev_dense_units_)(d, p->dims[0], n, tfe__kthreads(n * 4 / (int64_t)sizeof(TFE_T)));
    TFE__KSTAT(82);
  }
  return true;
#else
  (void)dst; (void)src; (void)p;
  return false;
#endif
}

/* Copy as units when plan p's leading dim is a short run common to both (copy_unit_run_bytes,
 * units.h); false: p runs as planned. Streamed outputs whose tiles write runs of units go
 * through per-thread tile buffers (copy_unit_stream); without them (no memory) in place. */
TFE_INTERNAL bool TFE_FN(k_copy_units_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, const tfe__kplan *p, int nt,
                                        bool nt_out) {
  tfe__kplan *up = (tfe__kplan *)tfe__alloc(sizeof *up); /* (plans are some 50 KB: not on the stack) */
  if (!up) return false;
  if (!tfe__kplan_units(up, p, tfe__st.tune.copy_unit_tile_bytes)) { tfe__free(up); return false; }
  if (TFE_FN(k_copy_unit_kind_)(dst, src, p)) { tfe__free(up); return true; }
  const tfe__kplan *u = up;
  TFE__KSTAT(29);
  if (u->urev) TFE__KSTAT(58);
  TFE_TY(kcopy_) c = {dst->data, src->data, false, nt_out, NULL, 0, NULL, false, 0, 0, {0}};
#if TFE__KHAVE_TR8
  if (u->urev && tfe__st.tune.copy_rev_records) c.rrw = tfe__krev_recs_prep(c.rrix, u->unit, sizeof(TFE_T));
#endif
  tfe_allocator a = tfe_get_allocator();
  const int mode = tfe__st.tune.copy_unit_stream; /* (2: cached outputs through the buffers too) */
  if (((nt_out && mode) || mode == 2) && u->g[0].arith[0] && u->g[0].step[0] == u->unit && TFE__KHAVE_TR8 && tfe__ksimd()) {
    const int64_t es = (int64_t)sizeof(TFE_T);
    c.tile_elems = (tfe__kunit_buf_bytes(u, es) + 63) / 64 * (64 / es); /* (whole lines) */
    c.buf = (TFE_T *)a.alloc(a.ctx, (size_t)nt * (size_t)c.tile_elems * sizeof(TFE_T), TFE_ALIGN);
    if (c.buf) TFE__KSTAT(30);
  }
  tfe__kplan_run(u, TFE_FN(k_copy_unit_tile_), &c, nt);
  if (c.buf) a.free(a.ctx, c.buf);
  tfe__free(up);
  return true;
}

/* A second plan of the copy dst <- src, G0 and G1 targets t0 and t1 (tables of tg entries), on
 * the heap (some 50 KB), or NULL without memory: the re-planning rules below keep it (copied
 * into the plan in use) or drop it, and free it. */
TFE_INTERNAL tfe__kplan *TFE_FN(k_copy_replan_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, int64_t t0, int64_t t1,
                                               int64_t tg) {
  const int64_t *str[2] = {dst->lay.strides, src->lay.strides};
  int64_t off[2] = {dst->lay.offset, src->lay.offset};
  const int64_t es = (int64_t)sizeof(TFE_T);
  tfe__kplan *q = (tfe__kplan *)tfe__alloc(sizeof *q);
  if (q) tfe__kplan_make(q, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, t0, t1, tg, false, es, true);
  return q;
}

/* Whether the transpose tiles of plan p (which k_copy_wants_buf_ sends to the buffer) go
 * through k_copy_skew12_ instead: 1- and 2-byte kinds on AVX-512BW (bytes also VBMI),
 * copy_skew_lines 2. p is then made again with tiles whose source runs span
 * copy_skew_run_bytes and whose destination columns half as many (the skewed form reads each
 * row along the whole tile: u16 [3072,20480] into columns 21 elements longer took 26.5 ms with
 * runs of 1 KiB, 18.2 with 4 KiB); kept as it was when that plan would not be buffered. */
TFE_INTERNAL bool TFE_FN(k_copy_skew12_plans_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe__kplan *p,
                                              int64_t tg) {
#if defined(__AVX512BW__)
  const int64_t es = (int64_t)sizeof(TFE_T), run = tfe__st.tune.copy_skew_run_bytes / es;
  const int mode = tfe__st.tune.copy_skew_lines;
  if (es > 4 || es == 3 || mode < 2 || (es == 1 && (mode < 3 || !TFE__KHAVE_SKEW1)) || !tfe__ksimd() || p->along_src ||
      p->g[0].nd != 1 || p->g[1].nd != 1)
    return false;
  tfe__kplan *q = TFE_FN(k_copy_replan_)(dst, src, run / 2 < 64 ? 64 : run / 2, run < 64 ? 64 : run, tg);
  if (!q) return false;
  /* (columns of 32 lines a tile or more, or whole columns one after another: the partial lines
   * at a column's ends, stored normally, few or shared with the next column; whole columns
   * shorter than the break-even, where every line is such a partial one, take the buffer:
   * copy_skew_short_cols) */
  const bool whole = q->g[0].len == q->dims[0] && q->g[1].arith[0] && q->g[1].step[0] == q->dims[0];
  const bool shortcol = whole && tfe__st.tune.copy_skew_short_cols && q->g[0].len * es < (es == 2 ? 896 : 168);
  const bool fits = q->g[0].nd == 1 && q->g[1].nd == 1 && q->g[1].len >= 8 * (64 / es) &&
                    (q->g[0].len * es >= 2048 || whole) && TFE_FN(k_copy_wants_buf_)(q, dst->data, true, false);
  /* (2-byte tiles: on a Zen 4 the buffer's register blocks move them faster, those of long
   * source runs since session 38's block kernel, all since session 43's prefetches of the next
   * tile (session 45: source runs of 512 B - 5 KB 0.60-0.69 of the skewed time); on a Xeon
   * (session 38) the skewed lines did; copy_skew_buf_src_bytes) */
  const int64_t lsrc = tfe__st.tune.copy_skew_buf_src_bytes < 0 ? (tfe__kcpu_amd() ? 512 : 0)
                                                                 : tfe__st.tune.copy_skew_buf_src_bytes;
  const bool longsrc = es == 2 && lsrc > 0 && q->g[1].len * es >= lsrc;
  const bool ok = fits && !shortcol && !longsrc;
  if (fits && shortcol) TFE__KSTAT(59);
  else if (fits && longsrc) TFE__KSTAT(66);
  return tfe__kreplan_keep(p, q, ok, -1);
#else
  (void)dst; (void)src; (void)p; (void)tg;
  return false;
#endif
}

/* Whether plan p, a plain transpose whose tiles k_copy_wants_buf_ writes in place into a
 * streamed output, is made again with tiles of 16 source rows of copy_long_row_bytes each
 * (tfe__klong_row_bytes: AVX-512 builds by default); kept as it was when the new plan would
 * not be such a transpose or its rows would not be one source run of 2 KiB or more. Few long source rows are few streams that the prefetchers follow,
 * where the usual tiles read 128-256 rows of 1 KiB: f64 256^3 [2,0,1] 0.83 of its time on a
 * Zen 4, 0.70 on a Xeon, f32 4096^2 0.91 and 0.79 (docs/bench-kernel.md, session 29).
 * 1- and 2-byte kinds keep their own tiles (16 rows are not a register block of theirs). */
TFE_INTERNAL bool TFE_FN(k_copy_long_rows_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe__kplan *p,
                                           int64_t tg) {
  const int64_t es = (int64_t)sizeof(TFE_T), bytes = tfe__klong_row_bytes();
  if (es < 4 || bytes < 64 * es || p->gather || p->along_src || p->unit || p->runtile || p->shared || p->g[1].nd == 0)
    return false;
  tfe__kplan *q = TFE_FN(k_copy_replan_)(dst, src, 16, bytes / es, tg);
  if (!q) return false;
  /* (rows one contiguous source run of 2 KiB or more (or the whole knob's length): f64 256^3
   * [1,0,2], rows of 2 KiB, 0.87 of its time; c128 [24,24,17,33,3,7] [1,2,4,0,3,5], rows of
   * 384 bytes, 1.12x) */
  const bool ok = !q->gather && !q->along_src && !q->unit && !q->runtile && !q->shared && q->g[1].nd > 0 &&
                  q->g[1].arith[1] && q->g[1].step[1] == 1 && q->g[1].len * es >= (bytes < 2048 ? bytes : 2048) && q->g[0].len >= 16 &&
                  !TFE_FN(k_copy_wants_buf_)(q, dst->data, true, false);
  return tfe__kreplan_keep(p, q, ok, 45);
}

/* Whether plan p, a 2-D transpose of an 8- or 16-byte kind whose buffered tiles go out as skewed
 * lines (unaligned destination columns: k_copy_skew_), is made again with tiles
 * copy_skew_tile_bytes / copy_tile_bytes times as long each way (1024: on a Zen 4 and a Xeon;
 * G1 may then take a second dim); kept as it was when the new plan's G0 would not be one
 * dim or its tiles not buffered. The skewed
 * form's per-tile cost (each column's carried register, joined at the tile's end) over more
 * rows and columns: f64 [8837,1697] [1,0] 0.85 of its time on a Zen 4, c128 [4435,1150] 0.86,
 * f64 [86,63,2945] [2,1,0] 0.72 (docs/bench-kernel.md, session 41). */
TFE_INTERNAL bool TFE_FN(k_copy_skew_tiles_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe__kplan *p,
                                            int64_t tg) {
#if TFE__KHAVE_TR8 && defined(__AVX512F__)
  const int64_t es = (int64_t)sizeof(TFE_T), kb = tfe__st.tune.copy_skew_tile_bytes, tb = tfe__st.tune.copy_tile_bytes;
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  if ((es != 8 && es != 16) || !tfe__st.tune.copy_skew_lines || kb <= tb || tb <= 0 || p->gather || p->along_src ||
      p->unit || p->runtile || p->shared || g0->nd != 1 || g1->nd != 1 || !g1->arith[1] || tfe__kabs(g1->step[1]) != 1 ||
      !((TFE__KOFF(p, 1, 0, 1) * es) & 63))
    return false;
  tfe__kplan *q = TFE_FN(k_copy_replan_)(dst, src, g0->len * kb / tb, g1->len * kb / tb, tg);
  if (!q) return false;
  /* (tiles that k_copy_skew_ would leave to the buffer, for short source rows or wide rims, keep
   * their size: f64 [54,2073,171] [1,2,0], rows of 432 bytes, ran 1.12x slower with larger ones) */
  const int64_t n1 = q->g[1].len;
  const bool skewed = !tfe__kskew_declines(q->g[0].len, n1, n1, es);
  const bool ok = !q->gather && !q->along_src && !q->unit && !q->runtile && !q->shared && q->g[0].nd == 1 &&
                  q->g[1].nd > 0 && n1 <= TFE__KTAB_STD && skewed && TFE_FN(k_copy_wants_buf_)(q, dst->data, true, false);
  return tfe__kreplan_keep(p, q, ok, 72);
#else
  (void)dst; (void)src; (void)p; (void)tg;
  return false;
#endif
}

/* A copy whose plan (fused dims) starts with records read backwards continued by a dim that
 * follows them in both operands (numpy's x[..., ::-1] of a short last axis over an image or a
 * batch: BGR to RGB is [3r, W * H]): blocks of dims[0] x dims[1] elements that are one run in
 * both, each moved by tfe__kcopy_rev_recs; the other dims an odometer over the blocks, split
 * among the threads. Blocks of 4 KiB or more of a streamed output go through an L1 buffer
 * and out as streamed lines. Records of 65-256 bytes go one by one through tfe__kcopy_rev
 * (normal stores). Tiled, such copies ran a table column of ~250 entries per tile (u8
 * [3r,4000,4000] 5.3x the streamed copy; [13r,110,33r,...] 9x), longer records a tile of runs
 * each (f32 [24r,28,38,855] [0,1,3,2] 1.6x slower than block by block). Longer records stay
 * tiled: on a Xeon records of 320-2240 bytes ran 0.68-0.91 of the tiles' (streamed) speed
 * block by block. Needs copy_rev_records and blocks of at least 512 bytes. */
TFE_INTERNAL bool TFE_FN(k_copy_rev_blocks_)(TFE_T *dd, const TFE_T *ss, const tfe__kplan *p, int nt, bool stream) {
#if TFE__KHAVE_TR8
  const int64_t es = (int64_t)sizeof(TFE_T), r = p->dims[0];
  if (!tfe__st.tune.copy_rev_records || p->rank < 2 || p->str[0][0] != 1 || p->str[1][0] != -1 || r < 2 ||
      p->str[0][1] != r || p->str[1][1] != r || r * p->dims[1] * es < 512 || (es & (es - 1)) || es > 16 || !tfe__ksimd())
    return false;
  _Alignas(64) uint8_t ix[64];
  const int w = r * es <= 64 ? tfe__krev_recs_prep(ix, r, (size_t)es) : 0; /* (0: longer records one by one) */
  if (!w && (r * es <= 64 || r * es > 256)) return false;
  (void)nt; /* (without OpenMP) */
  int64_t nb = 1;
  for (int k = 2; k < p->rank; k++) nb *= p->dims[k];
  const int64_t m = p->dims[1], bb = r * m * es;
  /* (chunks of whole records and whole lines, so that a line-aligned block streams whole lines) */
  const int64_t chunk = 4096 / (r * es * 64) * 64; /* (records: groups of 64, r * es lines each) */
  const bool buffered = stream && bb >= 4096 && chunk > 0, edges = tfe__kon_amd(tfe__st.tune.kernel_stream_edge_lines);
  tfe__kstat_add(80);
  TFE_OMP(parallel num_threads(nt) if (nt > 1 && nb > 1))
  {
    int64_t lo, hi, idx[TFE_MAX_RANK] = {0};
    tfe__kshare(nb, &lo, &hi);
    int64_t rest = lo;
    int64_t od = p->base[0], os = p->base[1];
    for (int k = 2; k < p->rank; k++) {
      idx[k] = rest % p->dims[k];
      rest /= p->dims[k];
      od += idx[k] * p->str[0][k];
      os += idx[k] * p->str[1][k];
    }
    _Alignas(64) char buf[4096];
    for (int64_t b = lo; b < hi; b++) {
      char *d = (char *)(dd + od);
      const char *sp = (const char *)(ss + os - (r - 1));
      if (!w)
        for (int64_t i = 0; i < m; i++) tfe__kcopy_rev(d + i * r * es, sp + i * r * es + (r - 1) * es, (size_t)r, (size_t)es, false);
      else if (buffered)
        for (int64_t i = 0; i < m; i += chunk) {
          const int64_t c = m - i < chunk ? m - i : chunk;
          tfe__kcopy_rev_recs(buf, sp + i * r * es, r, c, (size_t)es, ix, w, false);
          tfe__kstream_simd(d + i * r * es, buf, (size_t)(c * r * es), edges);
        }
      else
        tfe__kcopy_rev_recs(d, sp, r, m, (size_t)es, ix, w, false);
      for (int k = 2; k < p->rank; k++) { /* (the odometer over the blocks) */
        od += p->str[0][k];
        os += p->str[1][k];
        if (++idx[k] < p->dims[k]) break;
        od -= p->dims[k] * p->str[0][k];
        os -= p->dims[k] * p->str[1][k];
        idx[k] = 0;
      }
    }
    if (buffered) tfe__ksfence();
  }
  return true;
#else
  (void)dd; (void)ss; (void)p; (void)nt; (void)stream;
  return false;
#endif
}

/* Planned copy of validated views (dims equal, numel > 0); `fresh`: dst is a new dense
 * buffer of n elements whose pages were never written: a transpose faults it in first
 * (tfe__kprefault) and then runs the tiles for written pages; other fresh copies take the
 * smaller tiles. Plain and run copies take their faults in order, as a memcpy does (faulted
 * first they measured slower).
 * Transpose tiles (copy_tile_bytes): G1 spans this many bytes along the source, G0 twice as
 * many. A copy into an existing destination takes tiles twice as large: a fresh one is
 * faulted in by the tiles' own stores (the system zeroes each 2 MiB page as a tile first
 * touches it) and favours small tiles, while written-before pages favour larger ones
 * (docs/bench-kernel.md has the measurements behind both sizes). p: the plan's memory. */
/* Tiles of both runs (bothruns.h) in place of plan p's tiles where p reads or writes short
 * pieces: gather tiles (1- and 2-byte kinds with register blocks too, copy_both_run_gathers 2,
 * but not u8 wide rows of 9-63 bytes nor u8 blocks of runs of at most 8 bytes whose columns
 * would be stored in more than 32 / run pieces: runs of 8 in 6 pieces ran 2.2x slower so);
 * transpose tiles whose G1 spans under a line (4-16-byte kinds, copy_both_run_wide: on AMD also
 * any tile under 8 KiB and 8-byte gathers that do not ask for their footprint, or ask for one
 * read backwards (session 52: f64 [57r,5,9,3,35,66] ran 1.45x slower as such a gather): a Xeon
 * ran them 0.61-0.73 of the time, those that ask 0.77-1.29 here; 1- and 2-byte kinds unbuffered,
 * copy_both_run_gathers) or, 1- and 2-byte kinds, unbuffered ones whose G0 spans under
 * copy_both_run_rho_bytes, and buffered ones under copy_both_run_tiny_bytes. Left as planned (as
 * fast or faster, or mixed): other buffered 1- and 2-byte tiles, 4-16-byte tiles of 8 KiB+ with G1s of a line or more (docs/bench-kernel.md, sessions
 * 47-48 and 51). True: the copy is done. */
TFE_INTERNAL bool TFE_FN(k_copy_both_runs_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, const tfe__kplan *p,
                                          int64_t n, int nt, bool stream, bool fresh) {
  const tfe_tuning *tu = &tfe__st.tune;
  const int64_t es = (int64_t)sizeof(TFE_T);
  if (tu->copy_both_run_tile_bytes <= 0 || p->uplan || p->g[1].nd == 0 || n * es < 4096) return false;
  const bool short_g1 = p->g[1].len * es < 64;
  bool tiny = false, blocks = false;
  int64_t run = 0;
  /* (rho -1: 64 where unbuffered tiles ask for the next tile's rows, whose blocks then ran dense
   * batches of 64-byte G0s 1.55-1.89x faster than these tiles; else 128) */
  const int64_t rho = tu->copy_both_run_rho_bytes >= 0 ? tu->copy_both_run_rho_bytes : tfe__knext_spread() == 2 ? 64 : 128;
  if (es > 2) {
    const bool amd = tfe__kon_amd(tu->copy_both_run_wide); /* (elsewhere: no 8-byte gathers, no small-tile rule) */
    if (!tu->copy_both_run_wide ||
        !(short_g1 || (p->gather && (es != 8 || (amd && (p->pf_nrun == 0 || p->pf_rev)))) || (amd && p->g[0].len * p->g[1].len * es < 8192)))
      return false;
  } else if (tu->copy_both_run_gathers) {
    run = p->gather ? TFE_FN(k_gather12_run_)(p, false, p->g[0].len, p->g[1].len) * es : 0;
    /* (buffered tiles of under copy_both_run_tiny_bytes: u16 [5,24,67,12,8,2,51] perm
     * [1,6,4,3,0,5,2] had 656 064 tiles of 24 x 5, 18x the streamed copy) */
    tiny = !p->gather && p->g[0].len * p->g[1].len * es < tu->copy_both_run_tiny_bytes;
    const bool wide = run > 8 && run < 64; /* (k_copy_wide12_'s rows: u8 ones ran 1.7x slower here) */
    blocks = p->gather && run > 0 && (es == 1 ? !wide : wide);
    if (p->gather ? run > 0 && ((es == 1 && wide) || (blocks && tu->copy_both_run_gathers < 2))
                  : (!tiny && TFE_FN(k_copy_wants_buf_)(p, dst->data, stream, false)) || (!short_g1 && p->g[0].len * es >= rho))
      return false;
  } else if (p->gather ? es > 1 || TFE_FN(k_gather12_run_)(p, false, p->g[0].len, p->g[1].len)
                       : p->g[0].len * es >= rho || TFE_FN(k_copy_wants_buf_)(p, dst->data, stream, false))
    return false;
  tfe__kplan *f = (tfe__kplan *)tfe__alloc(sizeof *f); /* (the plan's dims fused again: p holds its groups now) */
  tfe__kbr br;
  const int64_t *str[2] = {dst->lay.strides, src->lay.strides}, off[2] = {dst->lay.offset, src->lay.offset};
  bool done = false;
  if (f && tfe__kplan_fuse(f, 2, 0, dst->lay.rank, dst->lay.dims, str, off)) {
    f->es = es;
    if (tfe__kbr_make(f, &br, tiny)) {
      done = !blocks || es > 1 || run > 8 || tfe__kbr_pieces(&br) * run <= 32;
      if (done) {
        if (blocks) TFE__KSTAT(92);
        tfe__kbr_run(&br, (char *)dst->data, (const char *)src->data, nt, stream, fresh);
      }
      tfe__kbr_drop(&br);
    }
  }
  tfe__free(f);
  return done;
}
TFE_INTERNAL void TFE_FN(k_copy_plan_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, int64_t n, bool fresh,
                                       bool cj, tfe__kplan *p) {
  const tfe_tuning *tu = &tfe__st.tune;
  const int64_t *str[2] = {dst->lay.strides, src->lay.strides};
  int64_t off[2] = {dst->lay.offset, src->lay.offset};
  int64_t es = (int64_t)sizeof(TFE_T);
  int64_t tt = tu->copy_tile_bytes / es < 8 ? 8 : tu->copy_tile_bytes / es;
  int64_t tg = 8 * tt < TFE__KTAB_STD ? 8 * tt : TFE__KTAB_STD, tw = fresh ? tt : 2 * tt;
  int nt = tfe__kthreads(n);
  bool cached = false; /* fresh pages written in order through the cache (copy_fresh_in_order) */
  const bool stream = n * es >= tu->kernel_stream_min_bytes;
  if (!cj && tfe__kplan_fuse(p, 2, 0, dst->lay.rank, dst->lay.dims, str, off)) {
    p->es = es;
    if (tfe__kcopy_records(p, (char *)dst->data, (const char *)src->data, es, nt, stream, fresh)) return;
  }
  tfe__kplan_make(p, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, 2 * tw, tfe__kcopy_g1(tw, es), tg, false, es, true);
  if (!cj && TFE_FN(k_copy_both_runs_)(dst, src, p, n, nt, stream, fresh)) return;
  if (fresh && n * es >= tu->copy_fresh_min_bytes && p->g[1].nd > 0 && !p->gather && !p->along_src) {
    /* the tiles for written pages, then: in order, or faulted in first, or else as they were */
    tfe__kplan_make(p, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, 4 * tt, tfe__kcopy_g1(2 * tt, es), tg, false, es, true);
    cached = tfe__kon_amd(tu->copy_fresh_in_order) && tfe__kplan_in_order(p, ((int64_t)2 << 20) / es);
    if (!cached && !tfe__kprefault(dst->data, (size_t)n * sizeof(TFE_T), nt))
      tfe__kplan_make(p, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, 2 * tw, tfe__kcopy_g1(tw, es), tg, false, es, true);
  }
  if (!cj && TFE_FN(k_copy_rev_blocks_)(dst->data, src->data, p, nt, !cached && n * es >= tu->kernel_stream_min_bytes)) return;
  if (!cj && TFE_FN(k_copy_units_)(dst, src, p, nt, !cached && n * es >= tu->kernel_stream_min_bytes)) return;
  if (p->gather) TFE__KSTAT(2);
  if (!p->gather && p->g[1].nd == 0 && p->g[0].nd > 1 && p->dims[0] >= 8 && p->str[1][0] == 1)
    TFE__KSTAT(3); /* runs of a table block */
  if (p->rank == 1 && p->str[0][0] == 1 && p->str[1][0] == 1 && !cj) {
    /* one contiguous run in both: each thread copies its whole share in one piece (64 KiB
     * blocks took the cached path and scaled worse on 2 threads), large outputs streamed past
     * the cache: the C library streams only copies larger than its threshold (3/4 of the L3
     * and more: 181 MiB on a 480 MiB-L3 Xeon, whose 128 MiB memcpy then ran at 0.56 of the
     * streamed speed) */
    TFE_T *d0 = dst->data + p->base[0];
    const TFE_T *s0 = src->data + p->base[1];
    const bool stream = n * es >= tu->kernel_stream_min_bytes;
    TFE_OMP(parallel num_threads(nt) if (nt > 1))
    {
      int64_t lo, hi;
      tfe__kshare(n, &lo, &hi);
      if (stream) {
        tfe__kstream(d0 + lo, s0 + lo, (size_t)(hi - lo) * sizeof(TFE_T));
        tfe__ksfence();
      } else
        memcpy(d0 + lo, s0 + lo, (size_t)(hi - lo) * sizeof(TFE_T));
    }
    return;
  }
  TFE_TY(kcopy_) c = {dst->data, src->data, cj, !cached && n * (int64_t)sizeof(TFE_T) >= tu->kernel_stream_min_bytes, NULL, 0,
                      TFE_FN(k_view_end_)(src), false, 0, 0, {0}};
  /* (a plan made again below is kept only when it takes the same buffer decision) */
  const bool buf = TFE_FN(k_copy_wants_buf_)(p, dst->data, c.nt, cj);
  if (c.nt && !cj && !buf) TFE_FN(k_copy_long_rows_)(dst, src, p, tg);
  if (buf && c.nt && !cj) TFE_FN(k_copy_skew_tiles_)(dst, src, p, tg);
  if (buf && TFE_FN(k_copy_skew12_plans_)(dst, src, p, tg)) {
    /* (per thread: each column's register and join index) */
    c.tile_elems = 128 * p->g[1].len / es;
    tfe_allocator a = tfe_get_allocator();
    c.buf = (TFE_T *)a.alloc(a.ctx, (size_t)nt * (size_t)c.tile_elems * sizeof(TFE_T), TFE_ALIGN);
    c.skew12 = c.buf != NULL; /* (without: unbuffered tiles) */
  } else if (buf) {
    /* (without the buffers the tiles run unbuffered: slower, same result) */
    const int64_t line = 64 / (int64_t)sizeof(TFE_T); /* (each thread's buffer 64-byte aligned: k_copy_skew_) */
    c.tile_elems = ((p->g[0].len + line) * p->g[1].len + line - 1) / line * line;
    tfe_allocator a = tfe_get_allocator();
    c.buf = (TFE_T *)a.alloc(a.ctx, (size_t)nt * (size_t)c.tile_elems * sizeof(TFE_T), TFE_ALIGN);
    if (c.buf) TFE__KSTAT(7);
    if (c.buf && p->g[0].len < tfe__krb(sizeof(TFE_T))) TFE__KSTAT(62);
    c.chain = TFE_FN(k_chain_step_)(p);
    if (c.buf && p->g[1].len < tfe__kcb(sizeof(TFE_T))) TFE__KSTAT(38);
  }
  TFE_FN(k_rev_recs_prep_)(p, &c);
  tfe__kplan_run(p, TFE_FN(k_copy_tile_), &c, nt);
  if (c.buf) { tfe_allocator a = tfe_get_allocator(); a.free(a.ctx, c.buf); }
}

TFE_INTERNAL void TFE_FN(k_copy_run_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, int64_t n, bool fresh) {
  bool cj = TFE_FN(k_conj_)(dst->conj, src->conj);
  tfe__kplan *p = n > tfe__st.tune.kernel_small_elems ? (tfe__kplan *)tfe__alloc(sizeof *p) : NULL;
  if (!p) { TFE_FN(k_copy_odo_)(dst, src, cj); return; } /* (small, or no memory for a plan: plain loops) */
  TFE_FN(k_copy_plan_)(dst, src, n, fresh, cj, p);
  tfe__free(p);
}

/* copy on the CPU (the public tfe_copy_S routes through the backend: route_tpl.h) */
TFE_INTERNAL tfe_status TFE_FN(k_copy_cpu_)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
  TFE_CHECK_NULL(dst);
  TFE_CHECK_NULL(src);
  int64_t n = 0;
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", NULL));
  TFE_TRY(tfe__same_shape(&dst->lay, &src->lay, __func__));
  TFE_TRY(tfe__check_dst(&dst->lay, dst->data, __func__, &n));
  if (n == 0) return TFE_OK;
  if (tfe__views_conflict(dst->data, &dst->lay, src->data, &src->lay, sizeof(TFE_T)))
    return TFE_FAIL(TFE_ERR_OVERLAP, "destination overlaps the source");
  TFE_FN(k_copy_run_)(dst, src, n, false);
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(contiguous)(const TFE_TY(view) *src, tfe_order order, TFE_TY(tensor) *out) {
  TFE_CHECK_NULL(src);
  TFE_CHECK_NULL(out);
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR)
    return TFE_FAIL(TFE_ERR_INVALID, "order %d is neither TFE_COLMAJOR nor TFE_ROWMAJOR", (int)order);
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", NULL));
  TFE_TY(tensor) t = {0};
  tfe__ts.pool_recycled = false;
  TFE_TRY(TFE_FN(empty)(&t, src->lay.rank, src->lay.dims, order));
  bool fresh = !tfe__ts.pool_recycled; /* a kept buffer's pages are written already */
  int64_t n = tfe_layout_numel(&t.v.lay);
  if (fresh) tfe__kadvise_huge(t.v.data, (size_t)n * sizeof(TFE_T));
  if (n > 0) TFE_FN(k_copy_run_)(&t.v, src, n, fresh);
  *out = t;
  return TFE_OK;
}
#endif
