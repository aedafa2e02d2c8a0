/* tenferro/kernel_tpl.h — kernels of one kind; re-included per kind (no include guard).
 * Parameters: TFE_S, TFE_T, TFE_R, TFE_ALG, TFE_CPLX, TFE_FLOAT. Generic code uses only the
 * tfe_sr_* semiring functions so that a user kind (TFE_ALG_CUSTOM) stamps too; code that
 * needs arithmetic of the standard algebra is under #if. */

/* Elements per operand buffer of the elementwise engine (8 KiB, at least 64). */
#if !TFE__BODY_PHASE
#define TFE__KBUF (8192 / sizeof(TFE_T) < 64 ? 64 : 8192 / sizeof(TFE_T))

typedef struct TFE_TY(kcopy_) {
  TFE_T *d;
  const TFE_T *s;
  bool cj, nt;
  TFE_T *buf;       /* per-thread tile buffers (tile_elems each) of k_copy_buffered_, or NULL */
  int64_t tile_elems;
} TFE_TY(kcopy_);

/* Copy src into dst (same dims). src may have any strides; the result read through dst
 * (honouring dst->conj) equals src read through src->conj. */
TFE_API tfe_status TFE_FN(copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src);

/* Copy with conjugation: reading dst gives conj(src). */
TFE_API tfe_status TFE_FN(conj_copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src);

/* A new dense tensor (column- or row-major) holding the values of src, conjugation applied
 * (the result has conj = false). *out is written only on success. */
TFE_API tfe_status TFE_FN(contiguous)(const TFE_TY(view) *src, tfe_order order, TFE_TY(tensor) *out);

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

/* Elements per operand of a transpose strip on the stack (8 columns of up to TFE__KCOL
 * elements), and of a column buffer (the longest G0 block of an elementwise tile). */
#define TFE__KSTRIP (16384 / sizeof(TFE_T) < 128 ? 128 : 16384 / sizeof(TFE_T))
#define TFE__KCOL (4096 / sizeof(TFE_T) < 64 ? 64 : 4096 / sizeof(TFE_T))
/* Every element of dst becomes value (as read through dst->conj). */
TFE_API tfe_status TFE_FN(fill)(const TFE_TY(view) *dst, TFE_T value);

typedef struct TFE_TY(kab_) { TFE_T a, b; bool b_zero; } TFE_TY(kab_);
/* y = alpha * y (semiring product). */
TFE_API tfe_status TFE_FN(scale)(const TFE_TY(view) *y, TFE_T alpha);
/* y = a*x + b*y in the semiring (x broadcasts to y's dims). With b the semiring zero y is
 * not read (NaN in y does not leak, as in BLAS). */
TFE_API tfe_status TFE_FN(axpby)(const TFE_TY(view) *y, TFE_T a, const TFE_TY(view) *x, TFE_T b);

/* ==== unary map =========================================================================== */
typedef struct TFE_TY(kun_) { tfe_unop op; TFE_T param; } TFE_TY(kun_);

#if TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
/* Integer arithmetic wraps (two's complement, like numpy) instead of overflowing. */
#define TFE__WADD(a, b) ((TFE_T)((uint64_t)(a) + (uint64_t)(b)))
#define TFE__WSUB(a, b) ((TFE_T)((uint64_t)(a) - (uint64_t)(b)))
#define TFE__WMUL(a, b) ((TFE_T)((uint64_t)(a) * (uint64_t)(b)))
#define TFE__WNEG(a) ((TFE_T)(0 - (uint64_t)(a)))
#endif

#define TFE__KMAP(expr) do { for (int64_t i = 0; i < n; i++) { TFE_T x = a[i]; out[i] = (expr); } } while (0)
#undef TFE__KMAP

/* dst = op(src) elementwise (src broadcasts to dst's dims). param is the exponent of
 * TFE_UN_POW and ignored otherwise. abs/real/imag of a complex kind stay complex with a
 * zero imaginary part. Kinds without an op (integers: sqrt exp log sin cos tanh; tropical
 * and user kinds: all but conj) return TFE_ERR_UNSUPPORTED. */
TFE_API tfe_status TFE_FN(map)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe_unop op, TFE_T param);

/* User function over contiguous arrays: out[i] = f(in[i]) for i < n. */
typedef void (*TFE_TY(unary_fn))(int64_t n, TFE_T *out, const TFE_T *in, void *ctx);
typedef struct TFE_TY(kufn_) { TFE_TY(unary_fn) f; void *ctx; } TFE_TY(kufn_);
/* dst = fn(src): fn is called on contiguous runs (buffers or the tensors themselves), from
 * several threads at once when the tensor is large. */
TFE_API tfe_status TFE_FN(map_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *src,
                                  TFE_TY(unary_fn) fn, void *ctx);

#define TFE__KZIP(expr) do { for (int64_t i = 0; i < n; i++) { TFE_T x = a[i], y = b[i]; out[i] = (expr); } } while (0)
#undef TFE__KZIP

/* dst = a op b with numpy broadcasting of a and b to dst's dims. For tropical and user
 * kinds add and mul are the semiring's; complex kinds have no max/min. */
TFE_API tfe_status TFE_FN(zip)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_binop op);

typedef void (*TFE_TY(binary_fn))(int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b, void *ctx);
typedef struct TFE_TY(kzfn_) { TFE_TY(binary_fn) f; void *ctx; } TFE_TY(kzfn_);
/* dst = fn(a, b) over contiguous runs, with broadcasting (see tfe_map_fn). */
TFE_API tfe_status TFE_FN(zip_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b,
                                  TFE_TY(binary_fn) fn, void *ctx);



/* ==== reductions ==========================================================================
 * Accumulation runs into a dense scratch accumulator (kept dims only) that starts at the
 * fold's identity; the result is combined into out at the end as out = alpha*r + beta*out,
 * so out may even alias the source. A partial reduction splits only kept dims between
 * threads (each accumulator element is owned by one thread); a full reduction gives each
 * thread a padded partial and combines them in thread order. */

typedef struct TFE_TY(kred_) {
  int fold, pre;
  TFE_T *acc;            /* accumulator (partial reductions) */
  const TFE_T *src;
  bool cj;
  char *partials;        /* full reductions: one padded slot per thread */
  size_t slot;
} TFE_TY(kred_);

typedef struct TFE_TY(kfin_) { tfe_redop op; int64_t count; TFE_T alpha, beta; bool beta_zero; } TFE_TY(kfin_);

/* Reduce src over `axes` (naxes of them; naxes < 0: all axes) into out:
 *   out = alpha * reduce(src) + beta * out      (semiring operations; beta = zero: out is
 *                                                not read)
 * out has the kept dims in order, or src's rank with 1 on the reduced axes (keepdims).
 * SUM and PROD are the semiring's (max and + for max-plus); MAX/MIN for real and tropical
 * kinds; MEAN, NORM1, NORM2, NORMINF for float kinds; SUMSQ for the standard algebra. For
 * complex kinds the norms and sum of squares are real values stored with zero imaginary
 * part. MAX and MIN over zero elements are refused. */
TFE_API tfe_status TFE_FN(reduce)(const TFE_TY(view) *out, const TFE_TY(view) *src, tfe_redop op,
                                  int naxes, const int *axes, TFE_T alpha, TFE_T beta);

/* The reduction of every element of src into *result (see tfe_reduce_S). */
TFE_API tfe_status TFE_FN(reduce_all)(const TFE_TY(view) *src, tfe_redop op, TFE_T *result);
#undef TFE__KBUF
#undef TFE__KSTRIP
#undef TFE__KCOL
#else /* bodies */
#define TFE__KBUF (8192 / sizeof(TFE_T) < 64 ? 64 : 8192 / sizeof(TFE_T))

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
 * the `rows` rows starting at `row` (tfe__kpf strips ahead of use; 0: off) along G1 in
 * advance. */
TFE_INTERNAL void TFE_FN(k_prefetch_rows_)(const tfe__kplan *p, int op, const TFE_T *s, int64_t row,
                                           int64_t rows, int64_t n0, int64_t n1) {
  int64_t line = 64 / (int64_t)sizeof(TFE_T) > 0 ? 64 / (int64_t)sizeof(TFE_T) : 1;
  if (!tfe__kpf || !(p->g[1].arith[op] && p->g[1].step[op] == 1)) return;
  for (int64_t i = row; i < row + rows && i < n0; i++) {
    const TFE_T *r = s + TFE__KOFF(p, 0, op, i);
    for (int64_t j = 0; j < n1; j += line) __builtin_prefetch(r + j, 0, 3);
  }
}

/* Rows [i0, n0) x columns [j0, n1) of a transposing copy tile, in 8x8 blocks: block
 * (ib, jb) reads 8 source rows (G0 entries) of 8 elements along G1 and writes 8 destination
 * columns (G1 entries) of 8 elements along G0, so every line touched is used whole before
 * it can be evicted. Any group layout (tables included). */
TFE_INTERNAL void TFE_FN(k_copy_blocks_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                         const TFE_T *s, int64_t i0, int64_t n0, int64_t j0, int64_t n1) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  int64_t rb = tfe__krb(sizeof(TFE_T)), cb = tfe__kcb(sizeof(TFE_T));
  bool fast = TFE__KHAVE_TR8 && tfe__ksimd() && rb && !c->cj && g0->arith[0] && g0->step[0] == 1 &&
              g1->arith[1] && g1->step[1] == 1;
  (void)fast;
  if (!fast) rb = cb = 8; /* (scalar loops: 8x8 blocks, fewer setups per element) */
  for (int64_t ib = i0; ib < n0; ib += rb) {
    int bi = n0 - ib < rb ? (int)(n0 - ib) : (int)rb;
    const TFE_T *srow[16];
    int64_t doff[16];
    TFE_FN(k_prefetch_rows_)(p, 1, s, ib + rb * tfe__kpf, rb, n0, n1);
    for (int i = 0; i < bi; i++) {
      srow[i] = s + TFE__KOFF(p, 0, 1, ib + i);
      doff[i] = TFE__KOFF(p, 0, 0, ib + i);
    }
    for (int64_t jb = j0; jb < n1; jb += cb) {
      int bj = n1 - jb < cb ? (int)(n1 - jb) : (int)cb;
#if TFE__KHAVE_TR8
      if (fast && bi == rb && bj == cb) {
        void *dcol[8];
        const void *sr[16];
        bool al = c->nt;
        for (int j = 0; j < cb; j++) {
          dcol[j] = d + TFE__KOFF(p, 1, 0, jb + j) + doff[0];
          al = al && ((uintptr_t)dcol[j] & 63) == 0;
        }
        for (int i = 0; i < rb; i++) sr[i] = srow[i] + jb;
        tfe__ktrx(sizeof(TFE_T), dcol, sr, al);
        if (sizeof(TFE_T) != 8 && ib == i0 && jb == j0) tfe__kstat_add(9);
        continue;
      }
#endif
      for (int j = 0; j < bj; j++) {
        TFE_T *dj = d + TFE__KOFF(p, 1, 0, jb + j);
        int64_t so = TFE__KOFF(p, 1, 1, jb + j);
        if (c->cj) for (int i = 0; i < bi; i++) dj[doff[i]] = TFE_FN(sr_conj)(srow[i][so]);
        else for (int i = 0; i < bi; i++) dj[doff[i]] = srow[i][so];
      }
    }
  }
}

/* d[i + j*ldd] = s[i*lds + j] for i < n0, j < n1: a strided transpose (rows contiguous in
 * the destination, columns in the source). The part in whole register blocks (4, 8 and
 * 16-byte kinds) runs register transposes addressed by strides (8-byte kinds: no per-block
 * pointer arrays); rims and conjugating copies run scalar loops. */
TFE_INTERNAL void TFE_FN(k_copy_st_)(const TFE_TY(kcopy_) *c, TFE_T *d, const TFE_T *s, int64_t n0, int64_t n1,
                                     int64_t lds, int64_t ldd) {
  const int64_t es = (int64_t)sizeof(TFE_T);
  int64_t m0 = 0, m1 = 0;
#if TFE__KHAVE_TR8
  const int64_t rb = tfe__krb(sizeof(TFE_T)), cb = tfe__kcb(sizeof(TFE_T));
  if (rb && !c->cj && tfe__ksimd()) { m0 = n0 - n0 % rb; m1 = n1 - n1 % cb; }
  if (m1 == 0) m0 = 0;
  bool al = c->nt && ((uintptr_t)d & 63) == 0 && ((ldd * es) & 63) == 0;
  if (es != 8 && m0 > 0) tfe__kstat_add(9);
  for (int64_t ib = 0; ib < m0; ib += rb) {
    /* strided rows miss every cache level and no hardware prefetcher follows them */
    for (int64_t i = ib + rb * tfe__kpf; tfe__kpf && i < ib + rb * (tfe__kpf + 1) && i < n0; i++)
      for (int64_t j = 0; j < n1; j += 64 / es) __builtin_prefetch(s + i * lds + j, 0, 3);
    if (es == 8) { tfe__ktr8s_row((double *)(void *)(d + ib), ldd, (const double *)(const void *)(s + ib * lds), lds, m1, al); continue; }
    const void *srow[16];
    for (int i = 0; i < rb; i++) srow[i] = s + (ib + i) * lds;
    tfe__ktrx_row(sizeof(TFE_T), d + ib, ldd, srow, m1, al);
  }
  if (es == 4 && m1 > 0 && n0 - m0 >= 8) { /* 8 of the last rows */
    tfe__ktr4h_row((float *)(void *)(d + m0), ldd, (const float *)(const void *)(s + m0 * lds), lds, m1);
    m0 += 8;
  }
#endif
  /* rims (all of a tile narrower than a block, as the 3-wide de-interleave of a cyclic
   * shift): one destination column at a time, the source read with its stride; streamed
   * 8-byte outputs stream whole lines (Xeon: cyclic_15d_3 1.45-1.56x memcpy with normal
   * stores) */
  for (int64_t j = m1; j < n1; j++) {
#if TFE__KHAVE_TR8
    if (es == 8 && c->nt && tfe__kcol_nt && !c->cj && tfe__ksimd()) {
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

/* The common transpose tile: each group one arithmetic step, unit stride along G0 in the
 * destination and along G1 in the source, or -1 there (a reversed source dim: the columns
 * are walked from the last, so the source is read ascending and the destination columns
 * descending; c128 [335r,105,250] [2,1,0] ran scalar loops at 2.3-3.1x memcpy). Returns
 * false when the tile is not of that form. */
TFE_INTERNAL bool TFE_FN(k_copy_ar_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                     const TFE_T *s, int64_t n0, int64_t n1) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  if (!g0->arith[0] || !g0->arith[1] || !g1->arith[0] || !g1->arith[1] || g0->step[0] != 1 ||
      (g1->step[1] != 1 && g1->step[1] != -1))
    return false;
  if (g1->step[1] == 1) TFE_FN(k_copy_st_)(c, d, s, n0, n1, g0->step[1], g1->step[0]);
  else TFE_FN(k_copy_st_)(c, d + (n1 - 1) * g1->step[0], s - (n1 - 1), n0, n1, g0->step[1], -g1->step[0]);
  return true;
}

/* A transpose tile whose groups are tables but whose first dims are runs: G0's first dim
 * unit-stride in the destination, G1's first dim in the source (a 59 x (9 x 28) tile: runs
 * of 9 along the source). Each pair of a G0 run and a G1 run is a strided transpose; 8x8
 * blocks over the whole table would straddle the runs and fall back to scalar loops
 * (3x memcpy). Returns false when the first dims are not such runs. */
TFE_INTERNAL bool TFE_FN(k_copy_runs_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                       const TFE_T *s, int64_t n0, int64_t n1) {
  int nd0 = p->g[0].nd;
  if (nd0 == 0 || p->str[0][0] != 1 || p->str[1][nd0] != 1) return false;
  int64_t r0 = nd0 > 1 ? p->dims[0] : n0, r1 = p->g[1].nd > 1 ? p->dims[nd0] : n1;
  int64_t lds = p->str[1][0], ldd = p->str[0][nd0];
  for (int64_t i0 = 0; i0 < n0; i0 += r0)
    for (int64_t j0 = 0; j0 < n1; j0 += r1)
      TFE_FN(k_copy_st_)(c, d + TFE__KOFF(p, 0, 0, i0) + TFE__KOFF(p, 1, 0, j0),
                         s + TFE__KOFF(p, 0, 1, i0) + TFE__KOFF(p, 1, 1, j0), n0 - i0 < r0 ? n0 - i0 : r0,
                         n1 - j0 < r1 ? n1 - j0 : r1, lds, ldd);
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
    for (int64_t i = 0; i < n; i++) out[i] = s[i * st];
    return;
  }
  if (sizeof(TFE_T) == 8 && tfe__kgather8(out, s, g->tab[op], n, nt, vec)) return;
  for (int64_t i = 0; i < n; i++) out[i] = s[g->tab[op][i]];
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
    if (ds == 1 && ss == 1) memcpy(d, s, (size_t)n0 * sizeof(TFE_T));
    else if (ds == 1) for (int64_t i = 0; i < n0; i++) d[i] = s[i * ss];
    else for (int64_t i = 0; i < n0; i++) d[i * ds] = s[i * ss];
    return;
  }
  int64_t run = p->dims[0];
  if (g0->arith[0] && g0->step[0] == 1 && g0->nd > 1 && run >= 8 && tfe__kabs(p->str[1][0]) == 1) {
    /* the table's first dim is unit-stride in both (tn_light: runs of 16 from 16 places):
     * copy run by run, vectorized, instead of element by element. Large outputs also
     * prefetch each run's continuation in the source (the same stream's next run, read a few
     * tiles later: 16 streams are more than the hardware prefetchers follow; tn_light
     * scattered 1.28-1.31 -> 1.08-1.11x memcpy). Normal stores: streamed ones measured
     * 1.26-1.28x with the prefetch. */
    for (int64_t e = 0; e < n0; e += run) {
      const TFE_T *q = s + g0->tab[1][e];
      TFE_T *o = d + e;
      if (p->str[1][0] < 0) { for (int64_t i = 0; i < run; i++) o[i] = q[-i]; continue; } /* (a reversed run) */
      if (c->nt)
        for (int64_t b = 0; b < run * (int64_t)sizeof(TFE_T); b += 64) __builtin_prefetch((const char *)q + tfe__krun_pf + b, 0, 3);
      for (int64_t i = 0; i < run; i++) o[i] = q[i];
    }
    return;
  }
  if (g0->arith[0] && g0->step[0] == 1) TFE_FN(k_gather_col_)(p, 1, s, false, d, n0, c->nt && p->gather, p->gather);
  else for (int64_t i = 0; i < n0; i++) d[TFE__KOFF(p, 0, 0, i)] = s[TFE__KOFF(p, 0, 1, i)];
}

/* A transpose tile whose destination columns are not 64-byte aligned (runs of 243 in a
 * reversal of 3s): the 8x8 blocks would store partial lines with normal stores (each line
 * read before it is written), so the tile goes through a buffer in L2 (columns of n0
 * contiguous), then each column is streamed out whole (its partial edge lines as
 * tfe__kstream_edge stores them). Kinds with register blocks (4, 8, 16 bytes) without
 * conjugation, G0 contiguous in the destination and G1 in the source. */
TFE_INTERNAL void TFE_FN(k_copy_buffered_)(const TFE_TY(kcopy_) *c, const tfe__kplan *p, TFE_T *d,
                                           const TFE_T *s, int64_t n0, int64_t n1, int tid) {
  TFE_T *b = c->buf + (int64_t)tid * c->tile_elems;
  const int64_t rb = tfe__krb(sizeof(TFE_T)), cb = tfe__kcb(sizeof(TFE_T)); /* (rb > 0: see k_copy_wants_buf_) */
  int64_t m0 = n0 - n0 % rb, m1 = n1 - n1 % cb;
  bool simd = tfe__ksimd();
  (void)simd;
  for (int64_t ib = 0; ib < m0; ib += rb) {
    const void *srow[16];
    TFE_FN(k_prefetch_rows_)(p, 1, s, ib + rb * tfe__kpf, rb, n0, n1);
    for (int i = 0; i < rb; i++) srow[i] = s + TFE__KOFF(p, 0, 1, ib + i);
#if TFE__KHAVE_TR8
    if (simd) { /* the buffer's columns lie n0 apart: one call per row of blocks */
      if (sizeof(TFE_T) != 8 && ib == 0 && m1 > 0) tfe__kstat_add(9);
      tfe__ktrx_row(sizeof(TFE_T), b + ib, n0, srow, m1, false);
      continue;
    }
#endif
    for (int64_t jb = 0; jb < m1; jb++)
      for (int i = 0; i < rb; i++) b[jb * n0 + ib + i] = ((const TFE_T *)srow[i])[jb];
  }
  for (int64_t j = 0; j < n1; j++) /* rims */
    for (int64_t i = j < m1 ? m0 : 0; i < n0; i++) b[j * n0 + i] = s[TFE__KOFF(p, 0, 1, i) + j];
  for (int64_t j = 0; j < n1; j++) tfe__kstream(d + TFE__KOFF(p, 1, 0, j), b + j * n0, (size_t)n0 * sizeof(TFE_T));
}

/* Whether a copy plan's transpose tiles go through k_copy_buffered_: large outputs (streamed)
 * whose destination columns are not all 64-byte aligned, or (tfe__kcopy_buf_mode() 2) all
 * of them but narrow columns. */
TFE_INTERNAL bool TFE_FN(k_copy_wants_buf_)(const tfe__kplan *p, const TFE_T *d, bool nt, bool cj) {
  const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
  int mode = tfe__kcopy_buf_mode();
  const int64_t es = (int64_t)sizeof(TFE_T);
  if (!nt || cj || !mode || !tfe__krb(sizeof(TFE_T)) || g1->nd == 0 || p->gather || !g0->arith[0] ||
      g0->step[0] != 1 || !g1->arith[1] || g1->step[1] != 1 || g1->len < tfe__kcb(sizeof(TFE_T)) ||
      g0->len < tfe__krb(sizeof(TFE_T)))
    return false; /* (tiles narrower or shorter than a block have no blocks: a cyclic shift of
                   * 3s; f32 columns of 15, which buffered ran 7.4x memcpy on the Xeon, 3.1-3.6x
                   * written in place) */
  /* (always: but not for columns under 512 B, whose streaming per column costs more than
   * the buffer saves: the rotation's 128 B columns ran 1.36x fresh memcpy straight and
   * 1.49x buffered on the Zen 3) */
  if (mode == 2 && g0->len * es >= 512) return true;
  if (((uintptr_t)(d + p->base[0]) & 63) != 0) return true;
  for (int64_t j = 0; j < g1->len; j++)
    if ((TFE__KOFF(p, 1, 0, j) * es) & 63) return true;
  for (int q = 0; q < p->no; q++)
    if ((p->ostep[0][q] * es) & 63) return true;
  return false;
}

TFE_INTERNAL void TFE_FN(k_copy_tile_)(void *ctx, const tfe__kplan *p, const tfe__ktile *t) {
  const TFE_TY(kcopy_) *c = (const TFE_TY(kcopy_) *)ctx;
  TFE_T *d = c->d + t->off[0];
  const TFE_T *s = c->s + t->off[1];
  int64_t n0 = t->n0, n1 = t->n1;
  if (c->buf) { TFE_FN(k_copy_buffered_)(c, p, d, s, n0, n1, t->tid); return; }
  if (p->g[1].nd > 0 && !p->gather) { /* a transpose tile */
    const tfe__kgroup *g0 = &p->g[0], *g1 = &p->g[1];
    if (TFE_FN(k_copy_ar_)(c, p, d, s, n0, n1)) return;
    /* tables: register blocks by pointers where both groups are unit steps on their sides,
     * else strided transposes run by run where the groups' first dims are runs */
    bool blocks = g0->arith[0] && g0->step[0] == 1 && g1->arith[1] && g1->step[1] == 1;
    if (!blocks && TFE_FN(k_copy_runs_)(c, p, d, s, n0, n1)) return;
    if (!blocks && p->str[0][0] == 1 && tfe__kabs(p->str[1][0]) == 1) { /* a transpose of short runs */
      for (int64_t j = 0; j < n1; j++)
        TFE_FN(k_copy_col_)(c, p, d + TFE__KOFF(p, 1, 0, j), s + TFE__KOFF(p, 1, 1, j), n0);
      return;
    }
    TFE_FN(k_copy_blocks_)(c, p, d, s, 0, n0, 0, n1);
    return;
  }
  for (int64_t j = 0; j < n1; j++) /* a gather tile's columns, or one plain block (n1 = 1) */
    TFE_FN(k_copy_col_)(c, p, d + TFE__KOFF(p, 1, 0, j), s + TFE__KOFF(p, 1, 1, j), n0);
}

/* Planned copy of validated views (dims equal, numel > 0); `fresh`: dst is a new dense
 * buffer of n elements whose pages were never written: a transpose faults it in first
 * (tfe__kprefault) and then runs the tiles for written pages; other fresh copies take the
 * smaller tiles (see tfe__ktile_bytes). Plain and run copies take their faults in order, as
 * a memcpy does (faulted first they measured 1.16-1.26x memcpy instead of 0.97-1.10x). */
TFE_INTERNAL void TFE_FN(k_copy_run_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, int64_t n, bool fresh) {
  bool cj = TFE_FN(k_conj_)(dst->conj, src->conj);
  if (n <= tfe__ktiny) { TFE_FN(k_copy_odo_)(dst, src, cj); return; }
  tfe__kplan p;
  const int64_t *str[2] = {dst->lay.strides, src->lay.strides};
  int64_t off[2] = {dst->lay.offset, src->lay.offset};
  int64_t es = (int64_t)sizeof(TFE_T);
  int64_t tt = tfe__ktile_bytes / es < 8 ? 8 : tfe__ktile_bytes / es;
  int64_t tg = 8 * tt < TFE__KTAB ? 8 * tt : TFE__KTAB, tw = fresh ? tt : 2 * tt;
  int nt = tfe__kthreads(n);
  bool cached = false; /* fresh pages written in order through the cache (tfe__kfresh_order) */
  tfe__kplan_make(&p, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, 2 * tw, tw, tg, false, es, true);
  if (fresh && n * es >= tfe__kfresh_min && p.g[1].nd > 0 && !p.gather && !p.along_src) {
    /* the tiles for written pages, then: in order, or faulted in first, or else as they were */
    tfe__kplan_make(&p, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, 4 * tt, 2 * tt, tg, false, es, true);
    cached = tfe__kon_amd(tfe__kfresh_order) && tfe__kplan_in_order(&p, ((int64_t)2 << 20) / es);
    if (!cached && !tfe__kprefault(dst->data, (size_t)n * sizeof(TFE_T), nt))
      tfe__kplan_make(&p, 2, 0, dst->lay.rank, dst->lay.dims, str, off, 65536 / es + 1, 2 * tw, tw, tg, false, es, true);
  }
  if (tfe__kstat_on && p.gather) tfe__kstat[2]++;
  if (tfe__kstat_on && !p.gather && p.g[1].nd == 0 && p.g[0].nd > 1 && p.dims[0] >= 8 && p.str[1][0] == 1)
    tfe__kstat[3]++; /* runs of a table block */
  if (p.rank == 1 && p.str[0][0] == 1 && p.str[1][0] == 1 && !cj) {
    /* one contiguous run in both: each thread copies its whole share with one memcpy (the C
     * library streams large copies; 64 KiB blocks took the cached path and scaled 1.2-1.3x
     * on 2 threads instead of 1.8x) */
    TFE_T *d0 = dst->data + p.base[0];
    const TFE_T *s0 = src->data + p.base[1];
    TFE_OMP(parallel num_threads(nt) if (nt > 1))
    {
      int64_t t = 0, m = 1;
#ifdef _OPENMP
      t = omp_get_thread_num();
      m = omp_get_num_threads();
#endif
      int64_t lo = n * t / m, hi = n * (t + 1) / m;
      memcpy(d0 + lo, s0 + lo, (size_t)(hi - lo) * sizeof(TFE_T));
    }
    return;
  }
  TFE_TY(kcopy_) c = {dst->data, src->data, cj, !cached && n * (int64_t)sizeof(TFE_T) >= tfe__knt_min, NULL, 0};
  if (TFE_FN(k_copy_wants_buf_)(&p, dst->data, c.nt, cj)) {
    /* (without the buffers the tiles run unbuffered: slower, same result) */
    c.tile_elems = (p.g[0].len * p.g[1].len + 7) & ~(int64_t)7;
    tfe_allocator a = tfe_get_allocator();
    c.buf = (TFE_T *)a.alloc(a.ctx, (size_t)nt * (size_t)c.tile_elems * sizeof(TFE_T), TFE_ALIGN);
    if (tfe__kstat_on && c.buf) tfe__kstat[7]++;
  }
  tfe__kplan_run(&p, TFE_FN(k_copy_tile_), &c, nt);
  if (c.buf) { tfe_allocator a = tfe_get_allocator(); a.free(a.ctx, c.buf); }
}
TFE_API tfe_status TFE_FN(copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
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
TFE_API tfe_status TFE_FN(conj_copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
  TFE_CHECK_NULL(src);
  TFE_TY(view) s = *src;
  s.conj = !s.conj;
  return TFE_FN(copy)(dst, &s);
}
TFE_API tfe_status TFE_FN(contiguous)(const TFE_TY(view) *src, tfe_order order, TFE_TY(tensor) *out) {
  TFE_CHECK_NULL(src);
  TFE_CHECK_NULL(out);
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR)
    return TFE_FAIL(TFE_ERR_INVALID, "order %d is neither TFE_COLMAJOR nor TFE_ROWMAJOR", (int)order);
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", NULL));
  TFE_TY(tensor) t = {0};
  tfe__pool_recycled = false;
  TFE_TRY(TFE_FN(empty)(&t, src->lay.rank, src->lay.dims, order));
  bool fresh = !tfe__pool_recycled; /* a kept buffer's pages are written already */
  int64_t n = tfe_layout_numel(&t.v.lay);
  if (fresh) tfe__kadvise_huge(t.v.data, (size_t)n * sizeof(TFE_T));
  if (n > 0) TFE_FN(k_copy_run_)(&t.v, src, n, fresh);
  *out = t;
  return TFE_OK;
}

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
    for (int64_t ib = 0; ib < m0; ib += 8) {
      TFE_FN(k_prefetch_rows_)(p, op, s + j0, ib + 8 * tfe__kpf, 8, n0, nj);
      tfe__ktr8s_row(bb + ib, n0, ss + ib * lds, lds, m1, false);
    }
  }
#endif
  if (m1 < nj) TFE_FN(k_gather_blocks_)(p, op, s, cj, buf, n0, j0, 0, m0, m1, nj);
  if (m0 < n0) TFE_FN(k_gather_blocks_)(p, op, s, cj, buf, n0, j0, m0, n0, 0, nj);
}
#define TFE__KSTRIP (16384 / sizeof(TFE_T) < 128 ? 128 : 16384 / sizeof(TFE_T))
#define TFE__KCOL (4096 / sizeof(TFE_T) < 64 ? 64 : 4096 / sizeof(TFE_T))

/* While column c of a transpose tile runs, prefetch column c + 2 of the inputs read in
 * place (the next tile's first columns near the end). Their runs are only n0 elements
 * long, spread over many columns, too short for the hardware prefetcher to ramp up; a
 * short distance keeps the prefetched lines from being evicted by the other columns (with
 * power-of-two strides they all map to the same cache sets). */
TFE_INTERNAL void TFE_FN(k_ew_prefetch_)(const TFE_TY(kew_) *e, const tfe__kplan *p, const TFE_T *const *s,
                                         const int *mode, int64_t c, int64_t n0, int64_t n1) {
  if (!tfe__kpf) return;
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
  if (oth) { /* zip: block column by block column, the other input and the destination
               * walked down their columns (row order: 23 ms instead of 17 for 16M f64) */
    /* software prefetch, tfe__kpf strips ahead down the column block: the transposed
     * input's 8 rows and the other input's 8 columns (neither is a stream the hardware
     * prefetchers follow: 16M f64 17.5 -> 12.4 ms, 0.55 -> 0.78 of memcpy's bandwidth) */
    int64_t pf = 8 * tfe__kpf;
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
      TFE_FN(k_prefetch_rows_)(p, tk + 1, s[tk], ib + 8 * tfe__kpf, 8, n0, n1);
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
  int64_t n0 = t->n0, n1 = t->n1;
  int64_t cap = tfe__kew_strip < (int64_t)TFE__KSTRIP ? tfe__kew_strip : (int64_t)TFE__KSTRIP;
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
  bool done[TFE__KTAB] = {false};
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
  bool direct = unit && !(e->nt && (p->gather || tfe__kew_nt));
#if TFE__KHAVE_TR8
  if (unit && !direct && !p->gather && tfe__ksimd() && TFE_FN(k_ew_row_)(e, p, t)) return;
#endif
  if (unit && !direct && !p->gather) tfe__kstat_add(5);
  const tfe__kgroup *g1 = &p->g[1];
  for (int k = 0; k < e->nin && p->gather; k++) { /* inputs reused across columns: gather once */
    if (!TFE_FN(k_ew_cached_)(e, p, k)) continue;
    bool done[TFE__KTAB] = {false};
    cache[k] = e->scratch + (t->tid * 2 + k) * e->tile_elems;
    /* consecutive tiles that differ only along dims where this input does not move (the
     * odometer runs those first) find its columns already there */
    int64_t *last = e->last ? e->last + t->tid * 8 + k * 3 : NULL;
    if (last && last[0] == t->off[k + 1] && last[1] == n0 && last[2] == t->n1) continue;
    if (last) { last[0] = t->off[k + 1]; last[1] = n0; last[2] = t->n1; }
    if (tfe__kpf) TFE_FN(k_prefetch_cols_)(p, k + 1, e->in[k] + t->off[k + 1], n0, t->n1);
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
  if (n <= tfe__ktiny) {
    const tfe_layout *il[2] = {&bl[0], &bl[1]};
    TFE_FN(k_ew_odo_)(&e, &dst->lay, il);
    return TFE_OK;
  }
  tfe__kplan p;
  const int64_t *str[3] = {dst->lay.strides, bl[0].strides, bl[1].strides};
  int64_t off[3] = {dst->lay.offset, bl[0].offset, bl[1].offset};
  /* a transpose tile spans tfe__kew_tile_bytes along the transposed input (G1), twice as
   * many along the destination (G0, at most a column buffer) */
  bool fmap = fop && nin == 1 && sizeof(TFE_T) == 8 && tfe__ksimd() && tfe__kfuse_mode() >= 2; /* a fused map (k_ew_fused_) */
  int64_t ewt = tfe__kew_tile_bytes > 0 ? tfe__kew_tile_bytes : tfe__kcpu_fuses() ? 2048 : 1024;
  int64_t kb = (int64_t)TFE__KBUF, t1 = (fmap ? tfe__kew_map_tile_bytes : ewt) / (int64_t)sizeof(TFE_T);
  int64_t t0 = tfe__kew_run_bytes / (int64_t)sizeof(TFE_T);
  if (t1 < 8) t1 = 8;
  if (t0 < 8) t0 = 8;
  if (t0 > (int64_t)TFE__KCOL) t0 = (int64_t)TFE__KCOL;
  int64_t tg = tfe__kew_gather_bytes / (int64_t)sizeof(TFE_T);
  tg = tg < 8 ? 8 : tg > (int64_t)TFE__KCOL ? (int64_t)TFE__KCOL : tg;
  tfe__kplan_make(&p, nin + 1, 0, dst->lay.rank, dst->lay.dims, str, off, kb, t0, t1, tg, false, (int64_t)sizeof(TFE_T), false);
  e.nt = n * (int64_t)sizeof(TFE_T) >= tfe__knt_min;
  int nt = tfe__kthreads(n);
  int64_t cap = tfe__kew_strip < (int64_t)TFE__KSTRIP ? tfe__kew_strip : (int64_t)TFE__KSTRIP;
  if (p.gather && tfe__kew_scratch) { /* column caches of gather tiles (per thread and input) */
    for (int k = 0; k < nin; k++) {
      int64_t m = p.g[1].ncid[k + 1] * p.g[0].len;
      if (p.g[1].ncid[k + 1] < p.g[1].len && m <= tfe__kew_cache && m > e.tile_elems) e.tile_elems = m;
    }
    if (e.tile_elems) {
      e.scratch = (TFE_T *)tfe__alloc((size_t)(2 * nt) * (size_t)e.tile_elems * sizeof(TFE_T));
      e.last = (int64_t *)tfe__alloc((size_t)(8 * nt) * sizeof(int64_t));
      for (int64_t i = 0; e.last && i < 8 * nt; i++) e.last[i] = -1; /* n0 = -1: nothing held */
    }
    if (!e.scratch) e.tile_elems = 0;
  }
  if (tfe__kstat_on && p.gather) { tfe__kstat[0]++; if (e.tile_elems) tfe__kstat[1]++; }
  if (p.g[1].nd > 0 && !p.gather && tfe__kew_scratch && p.g[0].len * p.g[1].len > cap) {
    /* tiles above the stack strip: whole-tile buffers (without them, or when the
     * allocation fails, strips of the tile on the stack: slower, same result) */
    e.tile_elems = p.g[0].len * p.g[1].len;
    e.scratch = (TFE_T *)tfe__alloc((size_t)(2 * nt) * (size_t)e.tile_elems * sizeof(TFE_T));
    if (!e.scratch) e.tile_elems = 0;
  }
  tfe__kplan_run(&p, TFE_FN(k_ew_tile_), &e, nt);
  tfe__free(e.scratch);
  tfe__free(e.last);
  return TFE_OK;
}
/* The same without a fusable op. */
TFE_INTERNAL tfe_status TFE_FN(k_ew_)(const char *where, const TFE_TY(view) *dst, int nin,
                                      const TFE_TY(view) *a, const TFE_TY(view) *b,
                                      TFE_TY(kbody_) body, void *bctx) {
  return TFE_FN(k_ew2_)(where, dst, nin, a, b, body, bctx, TFE__KFU_NONE);
}

/* ==== fill, scale, axpby ================================================================== */
TFE_INTERNAL void TFE_FN(k_fill_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  (void)a; (void)b;
  TFE_T v = *(const TFE_T *)ctx;
  for (int64_t i = 0; i < n; i++) out[i] = v;
}
TFE_API tfe_status TFE_FN(fill)(const TFE_TY(view) *dst, TFE_T value) {
  return TFE_FN(k_ew_)(__func__, dst, 0, NULL, NULL, TFE_FN(k_fill_body_), &value);
}

TFE_INTERNAL void TFE_FN(k_scale_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *x, const TFE_T *b) {
  (void)b;
  TFE_T a = *(const TFE_T *)ctx;
  for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_mul)(a, x[i]);
}
TFE_API tfe_status TFE_FN(scale)(const TFE_TY(view) *y, TFE_T alpha) {
  return TFE_FN(k_ew_)(__func__, y, 1, y, NULL, TFE_FN(k_scale_body_), &alpha);
}

TFE_INTERNAL void TFE_FN(k_axpby_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *x, const TFE_T *y) {
  const TFE_TY(kab_) *c = (const TFE_TY(kab_) *)ctx;
  TFE_T a = c->a, b = c->b;
  if (c->b_zero) { for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_mul)(a, x[i]); return; }
  for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_add)(TFE_FN(sr_mul)(a, x[i]), TFE_FN(sr_mul)(b, y[i]));
}
TFE_API tfe_status TFE_FN(axpby)(const TFE_TY(view) *y, TFE_T a, const TFE_TY(view) *x, TFE_T b) {
  TFE_TY(kab_) c = {a, b, TFE_FN(sr_eq)(b, TFE_FN(sr_zero)())};
  if (c.b_zero) return TFE_FN(k_ew_)(__func__, y, 1, x, NULL, TFE_FN(k_axpby_body_), &c);
  return TFE_FN(k_ew_)(__func__, y, 2, x, y, TFE_FN(k_axpby_body_), &c);
}
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
#define TFE__WADD(a, b) ((TFE_T)((uint64_t)(a) + (uint64_t)(b)))
#define TFE__WSUB(a, b) ((TFE_T)((uint64_t)(a) - (uint64_t)(b)))
#define TFE__WMUL(a, b) ((TFE_T)((uint64_t)(a) * (uint64_t)(b)))
#define TFE__WNEG(a) ((TFE_T)(0 - (uint64_t)(a)))
/* Integer division: by zero gives 0, MIN / -1 wraps to MIN. */
TFE_INTERNAL TFE_T TFE_FN(k_idiv_)(TFE_T a, TFE_T b) {
  if (b == 0) return 0;
  if (b == -1) return TFE__WNEG(a);
  return a / b;
}
TFE_INTERNAL TFE_T TFE_FN(k_ipow_)(TFE_T a, TFE_T e) {
  if (e < 0) return TFE_FN(k_idiv_)(1, e % 2 == 0 ? TFE__WMUL(a, a) : a) ; /* |a| > 1 -> 0 */
  TFE_T r = 1;
  while (e) { if (e & 1) r = TFE__WMUL(r, a); a = TFE__WMUL(a, a); e /= 2; }
  return r;
}
#endif

/* Which built-in unary ops this kind provides. */
TFE_INTERNAL bool TFE_FN(k_un_ok_)(tfe_unop op) {
  if (op == TFE_UN_CONJ) return true;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  return (unsigned)op < (unsigned)TFE_UN_COUNT_;
#elif TFE_ALG == TFE_ALG_STANDARD
  return op == TFE_UN_NEG || op == TFE_UN_ABS || op == TFE_UN_REAL || op == TFE_UN_IMAG ||
         op == TFE_UN_POW || op == TFE_UN_RECIP || op == TFE_UN_SQUARE;
#else
  return false;
#endif
}
#define TFE__KMAP(expr) do { for (int64_t i = 0; i < n; i++) { TFE_T x = a[i]; out[i] = (expr); } } while (0)
TFE_INTERNAL void TFE_FN(k_un_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  (void)b;
  const TFE_TY(kun_) *u = (const TFE_TY(kun_) *)ctx;
  TFE_T p = u->param;
  (void)p;
  switch (u->op) {
  case TFE_UN_CONJ: TFE__KMAP(TFE_FN(sr_conj)(x)); break;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  case TFE_UN_NEG: TFE__KMAP(-x); break;
  case TFE_UN_SQRT: TFE__KMAP(TFE__M(sqrt, x)); break;
  case TFE_UN_EXP: TFE__KMAP(TFE__M(exp, x)); break;
  case TFE_UN_LOG: TFE__KMAP(TFE__M(log, x)); break;
  case TFE_UN_SIN: TFE__KMAP(TFE__M(sin, x)); break;
  case TFE_UN_COS: TFE__KMAP(TFE__M(cos, x)); break;
  case TFE_UN_TANH: TFE__KMAP(TFE__M(tanh, x)); break;
  case TFE_UN_POW: TFE__KMAP(TFE__MPOW(x, p)); break;
  case TFE_UN_RECIP: TFE__KMAP((TFE_T)1 / x); break;
  case TFE_UN_SQUARE: TFE__KMAP(x * x); break;
  case TFE_UN_ABS: TFE__KMAP((TFE_T)TFE__MABS(x)); break;
#if TFE_CPLX
  case TFE_UN_REAL: TFE__KMAP((TFE_T)TFE__CREAL(x)); break;
  case TFE_UN_IMAG: TFE__KMAP((TFE_T)TFE__CIMAG(x)); break;
#else
  case TFE_UN_REAL: TFE__KMAP(x); break;
  case TFE_UN_IMAG: for (int64_t i = 0; i < n; i++) out[i] = (TFE_T)0; break;
#endif
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE_UN_NEG: TFE__KMAP(TFE__WNEG(x)); break;
  case TFE_UN_ABS: TFE__KMAP(x < 0 ? TFE__WNEG(x) : x); break;
  case TFE_UN_REAL: TFE__KMAP(x); break;
  case TFE_UN_IMAG: for (int64_t i = 0; i < n; i++) out[i] = (TFE_T)0; break;
  case TFE_UN_POW: TFE__KMAP(TFE_FN(k_ipow_)(x, p)); break;
  case TFE_UN_RECIP: TFE__KMAP(TFE_FN(k_idiv_)(1, x)); break;
  case TFE_UN_SQUARE: TFE__KMAP(TFE__WMUL(x, x)); break;
#endif
  default: break;
  }
}
#undef TFE__KMAP
TFE_API tfe_status TFE_FN(map)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe_unop op, TFE_T param) {
  if ((unsigned)op >= (unsigned)TFE_UN_COUNT_)
    return TFE_FAIL(TFE_ERR_INVALID, "unknown unary op %d", (int)op);
  if (!TFE_FN(k_un_ok_)(op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "unary op '%s' is not defined for this kind", tfe_unop_name(op));
  TFE_TY(kun_) u = {op, param};
  int fop = TFE__KFU_NONE;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && !TFE_CPLX
  if (sizeof(TFE_T) == 8) /* f64: ops the register transpose can apply */
    fop = op == TFE_UN_NEG ? TFE__KFU_NEG : op == TFE_UN_SQUARE ? TFE__KFU_SQUARE
        : op == TFE_UN_CONJ || op == TFE_UN_REAL ? TFE__KFU_ID : TFE__KFU_NONE;
#endif
  return TFE_FN(k_ew2_)(__func__, dst, 1, src, NULL, TFE_FN(k_un_body_), &u, fop);
}
TFE_INTERNAL void TFE_FN(k_ufn_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  (void)b;
  const TFE_TY(kufn_) *u = (const TFE_TY(kufn_) *)ctx;
  u->f(n, out, a, u->ctx);
}
TFE_API tfe_status TFE_FN(map_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *src,
                                  TFE_TY(unary_fn) fn, void *ctx) {
  TFE_CHECK_NULL(fn);
  TFE_TY(kufn_) u = {fn, ctx};
  return TFE_FN(k_ew_)(__func__, dst, 1, src, NULL, TFE_FN(k_ufn_body_), &u);
}

/* ==== binary zip ========================================================================== */
TFE_INTERNAL bool TFE_FN(k_bin_ok_)(tfe_binop op) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_CPLX
  return op == TFE_BIN_ADD || op == TFE_BIN_SUB || op == TFE_BIN_MUL || op == TFE_BIN_DIV;
#elif TFE_ALG == TFE_ALG_STANDARD
  return (unsigned)op < (unsigned)TFE_BIN_COUNT_;
#elif TFE_ALG == TFE_ALG_CUSTOM
  return op == TFE_BIN_ADD || op == TFE_BIN_MUL;
#else
  return op == TFE_BIN_ADD || op == TFE_BIN_MUL || op == TFE_BIN_MAX || op == TFE_BIN_MIN;
#endif
}
#define TFE__KZIP(expr) do { for (int64_t i = 0; i < n; i++) { TFE_T x = a[i], y = b[i]; out[i] = (expr); } } while (0)
TFE_INTERNAL void TFE_FN(k_bin_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  switch (*(const tfe_binop *)ctx) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  case TFE_BIN_ADD: TFE__KZIP(x + y); break;
  case TFE_BIN_SUB: TFE__KZIP(x - y); break;
  case TFE_BIN_MUL: TFE__KZIP(x * y); break;
  case TFE_BIN_DIV: TFE__KZIP(x / y); break;
#if !TFE_CPLX /* NaN propagates, as numpy's maximum/minimum */
  case TFE_BIN_MAX: TFE__KZIP(x > y || x != x ? x : y); break;
  case TFE_BIN_MIN: TFE__KZIP(x < y || x != x ? x : y); break;
#endif
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE_BIN_ADD: TFE__KZIP(TFE__WADD(x, y)); break;
  case TFE_BIN_SUB: TFE__KZIP(TFE__WSUB(x, y)); break;
  case TFE_BIN_MUL: TFE__KZIP(TFE__WMUL(x, y)); break;
  case TFE_BIN_DIV: TFE__KZIP(TFE_FN(k_idiv_)(x, y)); break;
  case TFE_BIN_MAX: TFE__KZIP(x > y ? x : y); break;
  case TFE_BIN_MIN: TFE__KZIP(x < y ? x : y); break;
#else
  case TFE_BIN_ADD: TFE__KZIP(TFE_FN(sr_add)(x, y)); break;
  case TFE_BIN_MUL: TFE__KZIP(TFE_FN(sr_mul)(x, y)); break;
#if TFE_ALG != TFE_ALG_CUSTOM
  case TFE_BIN_MAX: TFE__KZIP(x.v > y.v || x.v != x.v ? x : y); break;
  case TFE_BIN_MIN: TFE__KZIP(x.v < y.v || x.v != x.v ? x : y); break;
#endif
#endif
  default: break;
  }
}
#undef TFE__KZIP
TFE_API tfe_status TFE_FN(zip)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_binop op) {
  if ((unsigned)op >= (unsigned)TFE_BIN_COUNT_)
    return TFE_FAIL(TFE_ERR_INVALID, "unknown binary op %d", (int)op);
  if (!TFE_FN(k_bin_ok_)(op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "binary op '%s' is not defined for this kind", tfe_binop_name(op));
  int fop = TFE__KFU_NONE;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && !TFE_CPLX
  if (sizeof(TFE_T) == 8)
    fop = op == TFE_BIN_ADD ? TFE__KFU_ADD : op == TFE_BIN_SUB ? TFE__KFU_SUB
        : op == TFE_BIN_MUL ? TFE__KFU_MUL : op == TFE_BIN_DIV ? TFE__KFU_DIV : TFE__KFU_NONE;
#endif
  return TFE_FN(k_ew2_)(__func__, dst, 2, a, b, TFE_FN(k_bin_body_), &op, fop);
}
TFE_INTERNAL void TFE_FN(k_zfn_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  const TFE_TY(kzfn_) *u = (const TFE_TY(kzfn_) *)ctx;
  u->f(n, out, a, b, u->ctx);
}
TFE_API tfe_status TFE_FN(zip_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b,
                                  TFE_TY(binary_fn) fn, void *ctx) {
  TFE_CHECK_NULL(fn);
  TFE_TY(kzfn_) u = {fn, ctx};
  return TFE_FN(k_ew_)(__func__, dst, 2, a, b, TFE_FN(k_zfn_body_), &u);
}

TFE_INTERNAL bool TFE_FN(k_red_ok_)(tfe_redop op) {
  if (op == TFE_RED_SUM || op == TFE_RED_PROD) return true;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (op == TFE_RED_MAX || op == TFE_RED_MIN) return !TFE_CPLX;
  return (unsigned)op < (unsigned)TFE_RED_COUNT_;
#elif TFE_ALG == TFE_ALG_STANDARD
  return op == TFE_RED_MAX || op == TFE_RED_MIN || op == TFE_RED_SUMSQ;
#elif TFE_ALG == TFE_ALG_CUSTOM
  return false;
#else
  return op == TFE_RED_MAX || op == TFE_RED_MIN;
#endif
}

TFE_INTERNAL TFE_T TFE_FN(k_red_identity_)(int fold) {
  switch (fold) {
  case TFE__KF_MUL: return TFE_FN(sr_one)();
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  case TFE__KF_MAX: return (TFE_T)-INFINITY;
  case TFE__KF_MIN: return (TFE_T)INFINITY;
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE__KF_MAX: return (TFE_T)(-(TFE_T)(((uint64_t)1 << (8 * sizeof(TFE_T) - 1)) - 1) - 1);
  case TFE__KF_MIN: return (TFE_T)(((uint64_t)1 << (8 * sizeof(TFE_T) - 1)) - 1);
#elif TFE_ALG != TFE_ALG_CUSTOM
  case TFE__KF_MAX: { TFE_T z = {(TFE_R)-INFINITY}; return z; }
  case TFE__KF_MIN: { TFE_T z = {(TFE_R)INFINITY}; return z; }
#endif
  default: return TFE_FN(sr_zero)();
  }
}

/* The transform applied before folding (|x| or |x|^2, kept in the kind). */
TFE_INTERNAL TFE_T TFE_FN(k_red_pre_)(int pre, TFE_T x) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (pre == TFE__KP_ABS) return (TFE_T)TFE__MABS(x);
#if TFE_CPLX
  if (pre == TFE__KP_ABS2) return (TFE_T)(TFE__CREAL(x) * TFE__CREAL(x) + TFE__CIMAG(x) * TFE__CIMAG(x));
#else
  if (pre == TFE__KP_ABS2) return x * x;
#endif
#elif TFE_ALG == TFE_ALG_STANDARD
  if (pre == TFE__KP_ABS2) return TFE__WMUL(x, x);
#endif
  (void)pre;
  return x;
}

/* Combine two accumulated values. */
TFE_INTERNAL TFE_T TFE_FN(k_red_comb_)(int fold, TFE_T a, TFE_T b) {
  switch (fold) {
  case TFE__KF_MUL: return TFE_FN(sr_mul)(a, b);
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && TFE_CPLX /* only norminf: real values */
  case TFE__KF_MAX: return TFE__CREAL(a) >= TFE__CREAL(b) ? a : b;
  case TFE__KF_MIN: return TFE__CREAL(a) <= TFE__CREAL(b) ? a : b;
#elif TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT /* NaN propagates */
  case TFE__KF_MAX: return a > b || a != a ? a : b;
  case TFE__KF_MIN: return a < b || a != a ? a : b;
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE__KF_MAX: return a > b ? a : b;
  case TFE__KF_MIN: return a < b ? a : b;
#elif TFE_ALG != TFE_ALG_CUSTOM
  case TFE__KF_MAX: return a.v > b.v || a.v != a.v ? a : b;
  case TFE__KF_MIN: return a.v < b.v || a.v != a.v ? a : b;
#endif
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
  case TFE__KF_ADD: return TFE__WADD(a, b);
#endif
  default: return TFE_FN(sr_add)(a, b);
  }
}

/* Fold a contiguous run into acc. Sums of the standard algebra use four partial sums so the
 * adds pipeline (and vectorize); other folds go left to right. */
TFE_INTERNAL TFE_T TFE_FN(k_red_fold_)(int fold, int pre, TFE_T acc, const TFE_T *x, int64_t n) {
  int64_t i = 0;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (fold == TFE__KF_ADD && n >= 8) {
    TFE_T s[4] = {0, 0, 0, 0};
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; k++) s[k] += TFE_FN(k_red_pre_)(pre, x[i + k]);
    acc += (s[0] + s[1]) + (s[2] + s[3]);
  }
#endif
  for (; i < n; i++) acc = TFE_FN(k_red_comb_)(fold, acc, TFE_FN(k_red_pre_)(pre, x[i]));
  return acc;
}

TFE_INTERNAL void TFE_FN(k_red_tile_)(void *ctx, const tfe__kplan *p, const tfe__ktile *t) {
  const TFE_TY(kred_) *r = (const TFE_TY(kred_) *)ctx;
  TFE_T buf[TFE__KBUF];
  TFE_T *part = r->partials ? (TFE_T *)(r->partials + (size_t)t->tid * r->slot) : NULL;
  for (int64_t j = 0; j < t->n1; j++) {
    const TFE_T *s = r->src + t->off[1] + TFE__KOFF(p, 1, 1, j);
    const TFE_T *x = s;
    if (r->cj || !p->g[0].arith[1] || p->g[0].step[1] != 1) {
      for (int64_t i = 0; i < t->n0; i++) {
        TFE_T v = s[TFE__KOFF(p, 0, 1, i)];
        buf[i] = r->cj ? TFE_FN(sr_conj)(v) : v;
      }
      x = buf;
    }
    if (part) { *part = TFE_FN(k_red_fold_)(r->fold, r->pre, *part, x, t->n0); continue; }
    TFE_T *a = r->acc + t->off[0] + TFE__KOFF(p, 1, 0, j);
    if (p->g[0].arith[0] && p->g[0].step[0] == 0) { *a = TFE_FN(k_red_fold_)(r->fold, r->pre, *a, x, t->n0); continue; }
    for (int64_t i = 0; i < t->n0; i++) {
      TFE_T *ai = a + TFE__KOFF(p, 0, 0, i);
      *ai = TFE_FN(k_red_comb_)(r->fold, *ai, TFE_FN(k_red_pre_)(r->pre, x[i]));
    }
  }
}

/* Accumulate src (dims `dims`, strides `sstr`) into acc (strides `astr`: 0 on reduced dims)
 * or, with partials, into per-thread slots. */
TFE_INTERNAL void TFE_FN(k_red_run_)(TFE_TY(kred_) *r, int rank, const int64_t *dims,
                                     const int64_t *astr, const tfe_layout *sl, int nt) {
  tfe__kplan p;
  const int64_t *str[2] = {astr, sl->strides};
  int64_t off[2] = {0, sl->offset};
  int64_t kb = (int64_t)TFE__KBUF, tt = kb / 8 < 4 ? 4 : kb / 8;
  tfe__kplan_make(&p, 2, 1, rank, dims, str, off, kb, 2 * tt, tt, 0, r->partials == NULL, (int64_t)sizeof(TFE_T), false);
  tfe__kplan_run(&p, TFE_FN(k_red_tile_), r, nt);
}

/* Parse op into fold + transform; count of reduced elements for mean. */
TFE_INTERNAL void TFE_FN(k_red_kind_)(tfe_redop op, int *fold, int *pre) {
  *pre = TFE__KP_NONE;
  switch (op) {
  case TFE_RED_PROD: *fold = TFE__KF_MUL; break;
  case TFE_RED_MAX: *fold = TFE__KF_MAX; break;
  case TFE_RED_MIN: *fold = TFE__KF_MIN; break;
  case TFE_RED_SUMSQ: case TFE_RED_NORM2: *fold = TFE__KF_ADD; *pre = TFE__KP_ABS2; break;
  case TFE_RED_NORM1: *fold = TFE__KF_ADD; *pre = TFE__KP_ABS; break;
  case TFE_RED_NORMINF: *fold = TFE__KF_MAX; *pre = TFE__KP_ABS; break;
  default: *fold = TFE__KF_ADD; break;
  }
}

/* The final value from an accumulated one (mean divides, norm2 takes the root). */
TFE_INTERNAL TFE_T TFE_FN(k_red_final_)(tfe_redop op, TFE_T a, int64_t count) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (op == TFE_RED_MEAN) return a / (TFE_R)count;
#if TFE_CPLX
  if (op == TFE_RED_NORM2) return (TFE_T)TFE__M(sqrt, TFE__CREAL(a));
#else
  if (op == TFE_RED_NORM2) return TFE__M(sqrt, a);
#endif
  if (op == TFE_RED_NORMINF && count == 0) return (TFE_T)0;
#endif
  (void)op; (void)count;
  return a;
}
TFE_INTERNAL void TFE_FN(k_fin_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *acc, const TFE_T *old) {
  const TFE_TY(kfin_) *f = (const TFE_TY(kfin_) *)ctx;
  for (int64_t i = 0; i < n; i++) {
    TFE_T r = TFE_FN(sr_mul)(f->alpha, TFE_FN(k_red_final_)(f->op, acc[i], f->count));
    out[i] = f->beta_zero ? r : TFE_FN(sr_add)(r, TFE_FN(sr_mul)(f->beta, old[i]));
  }
}

/* Full reduction of a validated source into *result (threads get padded partials). */
TFE_INTERNAL tfe_status TFE_FN(k_red_all_)(const TFE_TY(view) *src, int fold, int pre, int64_t n, TFE_T *result) {
  TFE_TY(kred_) r = {fold, pre, NULL, src->data, TFE_FN(k_conj_)(false, src->conj), NULL, 0};
  TFE_T id = TFE_FN(k_red_identity_)(fold);
  if (n == 0) { *result = id; return TFE_OK; }
  int nt = tfe__kthreads(n);
  r.slot = (sizeof(TFE_T) + 63) / 64 * 64; /* one cache line (or more) per thread */
  r.partials = (char *)tfe__alloc(r.slot * (size_t)nt);
  if (!r.partials) return TFE_ERR_ALLOC;
  for (int k = 0; k < nt; k++) *(TFE_T *)(r.partials + (size_t)k * r.slot) = id;
  int64_t zero[TFE_MAX_RANK] = {0};
  TFE_FN(k_red_run_)(&r, src->lay.rank, src->lay.dims, zero, &src->lay, nt);
  TFE_T a = id;
  for (int k = 0; k < nt; k++) a = TFE_FN(k_red_comb_)(fold, a, *(TFE_T *)(r.partials + (size_t)k * r.slot));
  tfe__free(r.partials);
  *result = a;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(reduce)(const TFE_TY(view) *out, const TFE_TY(view) *src, tfe_redop op,
                                  int naxes, const int *axes, TFE_T alpha, TFE_T beta) {
  TFE_CHECK_NULL(out);
  TFE_CHECK_NULL(src);
  if ((unsigned)op >= (unsigned)TFE_RED_COUNT_) return TFE_FAIL(TFE_ERR_INVALID, "unknown reduction %d", (int)op);
  if (!TFE_FN(k_red_ok_)(op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "reduction '%s' is not defined for this kind", tfe_redop_name(op));
  int64_t n = 0, nout = 0;
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", &n));
  int r = src->lay.rank;
  bool red[TFE_MAX_RANK] = {false};
  if (naxes < 0) { for (int i = 0; i < r; i++) red[i] = true; naxes = r; }
  else {
    if (naxes > r) return TFE_FAIL(TFE_ERR_INVALID, "%d axes given for a rank-%d source", naxes, r);
    if (naxes > 0 && !axes) return TFE_FAIL(TFE_ERR_NULL, "argument 'axes' is NULL");
    for (int k = 0; k < naxes; k++) {
      if (axes[k] < 0 || axes[k] >= r) return TFE_FAIL(TFE_ERR_BOUNDS, "axis %d outside [0, %d)", axes[k], r);
      if (red[axes[k]]) return TFE_FAIL(TFE_ERR_INVALID, "axis %d given twice", axes[k]);
      red[axes[k]] = true;
    }
  }
  /* out's dims: kept dims, or keepdims */
  tfe_layout ol; /* out's layout over src's rank (stride 0 on reduced axes) */
  ol.rank = r; ol.offset = out->lay.offset;
  if (out->lay.rank == r - naxes) {
    for (int i = 0, k = 0; i < r; i++) {
      ol.dims[i] = red[i] ? 1 : src->lay.dims[i];
      ol.strides[i] = red[i] ? 0 : out->lay.strides[k];
      if (!red[i] && out->lay.dims[k++] != src->lay.dims[i])
        return TFE_FAIL(TFE_ERR_SHAPE, "output dim %d is %lld, expected %lld", k - 1,
                        (long long)out->lay.dims[k - 1], (long long)src->lay.dims[i]);
    }
  } else if (out->lay.rank == r) {
    for (int i = 0; i < r; i++) {
      int64_t want = red[i] ? 1 : src->lay.dims[i];
      if (out->lay.dims[i] != want)
        return TFE_FAIL(TFE_ERR_SHAPE, "output dim %d is %lld, expected %lld", i,
                        (long long)out->lay.dims[i], (long long)want);
      ol.dims[i] = want;
      ol.strides[i] = red[i] ? 0 : out->lay.strides[i];
    }
  } else
    return TFE_FAIL(TFE_ERR_SHAPE, "output rank %d is neither %d (kept dims) nor %d (keepdims)",
                    out->lay.rank, r - naxes, r);
  TFE_TRY(tfe__check_dst(&out->lay, out->data, __func__, &nout));
  if (nout == 0) return TFE_OK;
  int64_t count = 1; /* elements folded into each output */
  for (int i = 0; i < r; i++) if (red[i]) count *= src->lay.dims[i];
  if (count == 0 && (op == TFE_RED_MAX || op == TFE_RED_MIN))
    return TFE_FAIL(TFE_ERR_INVALID, "%s over zero elements has no value", tfe_redop_name(op));
  int fold, pre;
  TFE_FN(k_red_kind_)(op, &fold, &pre);
  /* accumulator: dense over the kept dims in src's order */
  TFE_T *acc = (TFE_T *)tfe__alloc((size_t)nout * sizeof(TFE_T));
  if (!acc) return TFE_ERR_ALLOC;
  tfe_layout al; /* acc with out's dims (for the final combine) */
  int64_t astr[TFE_MAX_RANK], s = 1;
  al.rank = out->lay.rank; al.offset = 0;
  for (int i = 0, k = 0; i < r; i++) {
    astr[i] = red[i] ? 0 : s;
    if (!red[i]) s *= src->lay.dims[i];
    if (out->lay.rank == r) { al.dims[i] = ol.dims[i]; al.strides[i] = astr[i]; }
    else if (!red[i]) { al.dims[k] = src->lay.dims[i]; al.strides[k++] = astr[i]; }
  }
  tfe_status st = TFE_OK;
  if (nout == 1) st = TFE_FN(k_red_all_)(src, fold, pre, n, acc);
  else {
    TFE_T id = TFE_FN(k_red_identity_)(fold);
    for (int64_t i = 0; i < nout; i++) acc[i] = id;
    if (n > 0) {
      TFE_TY(kred_) rr = {fold, pre, acc, src->data, TFE_FN(k_conj_)(false, src->conj), NULL, 0};
      TFE_FN(k_red_run_)(&rr, r, src->lay.dims, astr, &src->lay, tfe__kthreads(n));
    }
  }
  if (st == TFE_OK) {
    TFE_TY(kfin_) f = {op, count, alpha, beta, TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)())};
    TFE_TY(view) av = {acc, al, false};
    /* out may alias src: it is written only here, after every read of src */
    st = TFE_FN(k_ew_)(__func__, out, f.beta_zero ? 1 : 2, &av, out, TFE_FN(k_fin_body_), &f);
  }
  tfe__free(acc);
  return st;
}
TFE_API tfe_status TFE_FN(reduce_all)(const TFE_TY(view) *src, tfe_redop op, TFE_T *result) {
  TFE_CHECK_NULL(src);
  TFE_CHECK_NULL(result);
  TFE_TY(view) o = {result, {0, 0, {0}, {0}}, false};
  return TFE_FN(reduce)(&o, src, op, -1, NULL, TFE_FN(sr_one)(), TFE_FN(sr_zero)());
}
#undef TFE__KBUF
#undef TFE__KSTRIP
#undef TFE__KCOL
#endif
