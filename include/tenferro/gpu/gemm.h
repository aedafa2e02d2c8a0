/* tenferro/gpu/gemm.h — gpu room, companion only: binary contraction on cuBLAS (exec.h says
 * how labels become one strided-batched GEMM). Parsed only inside tenferro_gpu.c. */
#ifndef TENFERRO_GPU_GEMM_H
#define TENFERRO_GPU_GEMM_H
#ifdef TFE__GPU_COMPANION

/* The label groups of one contraction (indices into the label table), sizes as products. */
#define TFE__GG_MAX (3 * TFE_MAX_RANK)
typedef struct tfe__ggroup {
  int n;
  int64_t size;
  int l[TFE__GG_MAX];
} tfe__ggroup;
typedef struct tfe__gplan {
  tfe__gtab T;
  tfe__ggroup m, n, k, b, sa, sb; /* rows of C, columns of C, contracted, batch, A-only, B-only */
  tfe__ggroup lp;                /* loop labels: one GEMM per index (tfe__gg_loops), else empty */
  int xa, xb;                    /* which operand gives C's rows (A, or B after a transpose) */
  int fold;                      /* the loop label (index in lp.l) run as the GEMM's batch, or -1 */
} tfe__gplan;

static void tfe__gg_add(tfe__ggroup *G, const tfe__glabel *L, int j) {
  G->size *= L->dim;
  if (L->dim != 1) G->l[G->n++] = j;
}
/* Sorts labels by their stride's magnitude in operand x. */
static void tfe__gg_sort(const tfe__gtab *T, tfe__ggroup *G, int x) {
  for (int i = 1; i < G->n; i++)
    for (int j = i; j > 0 && llabs(T->l[G->l[j]].s[x]) < llabs(T->l[G->l[j - 1]].s[x]); j--) {
      int t = G->l[j];
      G->l[j] = G->l[j - 1], G->l[j - 1] = t;
    }
}
/* Whether the group fuses into one dimension in operand x (each stride is the previous one
 * times the previous size); *first is the fused stride (0 for an empty group). */
static bool tfe__gg_chain(const tfe__gtab *T, const tfe__ggroup *G, int x, int64_t *first) {
  *first = G->n ? T->l[G->l[0]].s[x] : 0;
  for (int i = 1; i < G->n; i++)
    if (T->l[G->l[i]].s[x] != T->l[G->l[i - 1]].s[x] * T->l[G->l[i - 1]].dim) return false;
  return true;
}
static int64_t tfe__gg_max1(int64_t v) { return v > 1 ? v : 1; }

/* Sorts the labels into groups (labels of size 1 only multiply the group's size). */
static void tfe__gg_classify(tfe__gplan *P) {
  tfe__ggroup *gs[] = {&P->m, &P->n, &P->k, &P->b, &P->sa, &P->sb, &P->lp};
  for (int i = 0; i < 7; i++) gs[i]->n = 0, gs[i]->size = 1;
  P->fold = -1;
  for (int j = 0; j < P->T.n; j++) {
    const tfe__glabel *L = &P->T.l[j];
    bool a = L->in[TFE__GA], b = L->in[TFE__GB], c = L->in[TFE__GC];
    tfe__ggroup *G = a && b && c ? &P->b : a && c ? &P->m : b && c ? &P->n : a && b ? &P->k : a ? &P->sa : &P->sb;
    tfe__gg_add(G, L, j);
  }
  P->xa = TFE__GA, P->xb = TFE__GB;
}

/* One GEMM operand: where it starts, its op, leading dimension and batch stride; or packed. */
typedef struct tfe__gmat {
  bool direct;
  int op;
  int64_t ld, bs;
} tfe__gmat;

/* Whether operand x is addressable in place as a rows x cols matrix per batch (see exec.h). */
static bool tfe__gg_direct(const tfe__gplan *P, int x, const tfe__ggroup *R, const tfe__ggroup *Cg, bool conj,
                           tfe__gmat *M) {
  int64_t sr, sc, sb;
  if (!tfe__gg_chain(&P->T, R, x, &sr) || !tfe__gg_chain(&P->T, Cg, x, &sc) || !tfe__gg_chain(&P->T, &P->b, x, &sb))
    return false;
  if (P->b.size > 1 && sb < 0) return false;
  M->bs = P->b.size > 1 ? sb : 0;
  int64_t r = R->size, c = Cg->size;
  if (!conj && (r == 1 || sr == 1)) {
    M->ld = c > 1 ? sc : tfe__gg_max1(r);
    M->op = TFE__BLAS_OP_N;
    if (M->ld >= tfe__gg_max1(r)) return M->direct = true;
  }
  if (c == 1 || sc == 1) {
    M->ld = r > 1 ? sr : tfe__gg_max1(c);
    M->op = conj ? TFE__BLAS_OP_C : TFE__BLAS_OP_T;
    if (M->ld >= tfe__gg_max1(c)) return M->direct = true;
  }
  return false;
}
/* Whether C is addressable in place as a column-major rows x cols matrix per batch. */
static bool tfe__gg_cdirect(const tfe__gplan *P, tfe__gmat *M) {
  int64_t sr, sc, sb;
  if (!tfe__gg_chain(&P->T, &P->m, TFE__GC, &sr) || !tfe__gg_chain(&P->T, &P->n, TFE__GC, &sc) ||
      !tfe__gg_chain(&P->T, &P->b, TFE__GC, &sb))
    return false;
  if ((P->m.size > 1 && sr != 1) || (P->b.size > 1 && sb <= 0)) return false;
  M->ld = P->n.size > 1 ? sc : tfe__gg_max1(P->m.size);
  M->bs = P->b.size > 1 ? sb : 0;
  M->op = TFE__BLAS_OP_N;
  return M->direct = M->ld >= tfe__gg_max1(P->m.size);
}
static void tfe__gg_swap(tfe__gplan *P) {
  tfe__ggroup t = P->m;
  P->m = P->n, P->n = t;
  int x = P->xa;
  P->xa = P->xb, P->xb = x;
}

/* Which of the chosen groups' operands are addressable in place (A: rows M, columns K). */
static void tfe__gg_ab(tfe__gplan *P, bool conj_a, bool conj_b, tfe__gmat *A, tfe__gmat *B) {
  bool ca = P->xa == TFE__GA ? conj_a : conj_b, cb = P->xa == TFE__GA ? conj_b : conj_a;
  const tfe__ggroup *only_a = P->xa == TFE__GA ? &P->sa : &P->sb, *only_b = P->xa == TFE__GA ? &P->sb : &P->sa;
  tfe__gg_sort(&P->T, &P->k, P->xa);
  A->direct = only_a->n == 0 && tfe__gg_direct(P, P->xa, &P->m, &P->k, ca, A);
  if (!A->direct) tfe__gg_sort(&P->T, &P->k, P->xb);
  B->direct = only_b->n == 0 && tfe__gg_direct(P, P->xb, &P->k, &P->n, cb, B);
}

/* ---- loop labels (session 12) ------------------------------------------------------------------
 * When C's M and N (or batch) labels interleave in memory (str_nw_mera_open_26's last step writes
 * C = PQÁÂÃÄÅÇÉ from M = ÅÄÃÂÁP, N = ÉÇQ), no order of the groups makes C one matrix per batch and
 * the GEMM would write a dense block that the unary kernel then copies into C. Instead, the
 * labels after each group's leading chain in C (sorted by C's strides: those that break the
 * chain) become loop labels: one GEMM per index of them, on sub-views (offsets into A, B and C),
 * each writing its own disjoint part of C in place (so beta applies once per element). One loop
 * label whose strides allow it (C's positive, an in-place operand's not negative; an operand
 * without the label has stride 0) runs as the strided-batched GEMM's batch instead when the
 * contraction has no batch labels. Taken only when
 *   - the launches (the loop labels' index count, over the folded label's size) are at most
 *     TFE__GG_LOOP_MAX (64),
 *   - the elements it copies (operands packed because their labels must follow C's order,
 *     read and written) are fewer than the plain layout's (that layout's packed operands plus
 *     C's block written and copied into C), and, unless TFE_GPU_GEMM_LOOPS=all (the tests: any
 *     size),
 *   - each GEMM has at least TFE__GG_LOOP_MACS (2^20) multiply-adds and both sides of C's
 *     matrix at least TFE__GG_LOOP_SIDE (32): on the H100 cuBLAS ran the loops of mera's steps
 *     with a side of 7 or 9 (9 x 2187 x 4620 in batches of 11, 243 x 7 x 360 in batches of 22)
 *     2.6-7x slower than the one GEMM and the copy of C together, while 81 x 59049 x 50 in
 *     batches of 3 (mera's last step) took 983 us against 1327 (docs/benchmarks.md, session 12),
 *   - and the elements saved are at least 1/TFE__GG_LOOP_SHARE (1/256) of the multiply-adds
 *     (a copy that small is lost in the GEMM's time; a slower loop GEMM would not be).
 * TFE_GPU_GEMM_LOOPS=0 turns loops off (read per analysis, as is "all").
 * Operands packed in loop mode hold their loop labels as outermost dimensions of the block. The
 * plan cache records the groups, loop labels and fold with the analysis. Tropical GEMMs keep the
 * plain layout (their C block path is unchanged). */
#define TFE__GG_LOOP_MAX 64
#define TFE__GG_LOOP_MACS (1LL << 20)
#define TFE__GG_LOOP_SIDE 32
#define TFE__GG_LOOP_SHARE 256
/* The product of the sizes of G's labels that operand x has. */
static int64_t tfe__gg_xsize(const tfe__gplan *P, const tfe__ggroup *G, int x) {
  int64_t s = 1;
  for (int i = 0; i < G->n; i++)
    if (P->T.l[G->l[i]].in[x]) s *= P->T.l[G->l[i]].dim;
  return s;
}
static double tfe__gg_numel(const tfe__gplan *P, int x) {
  double s = 1;
  for (int j = 0; j < P->T.n; j++)
    if (P->T.l[j].in[x]) s *= (double)P->T.l[j].dim;
  return s;
}
/* Elements read and written by the copies of a layout. */
static double tfe__gg_cost(const tfe__gplan *P, const tfe__gmat *A, const tfe__gmat *B, const tfe__gmat *C) {
  double c = 0, mk = (double)P->m.size * (double)P->k.size * (double)P->b.size,
         kn = (double)P->k.size * (double)P->n.size * (double)P->b.size;
  if (!A->direct) c += tfe__gg_numel(P, P->xa) + mk * (double)tfe__gg_xsize(P, &P->lp, P->xa);
  if (!B->direct) c += tfe__gg_numel(P, P->xb) + kn * (double)tfe__gg_xsize(P, &P->lp, P->xb);
  if (!C->direct) c += 2 * tfe__gg_numel(P, TFE__GC);
  return c;
}
/* Moves G's labels after its leading chain in C into the loop group (G sorted by C's strides). */
static void tfe__gg_peel(tfe__gplan *P, tfe__ggroup *G) {
  int keep = G->n ? 1 : 0;
  while (keep < G->n &&
         P->T.l[G->l[keep]].s[TFE__GC] == P->T.l[G->l[keep - 1]].s[TFE__GC] * P->T.l[G->l[keep - 1]].dim)
    keep++;
  for (int i = keep; i < G->n; i++) {
    int j = G->l[i];
    G->size /= P->T.l[j].dim, P->lp.size *= P->T.l[j].dim;
    P->lp.l[P->lp.n++] = j;
  }
  G->n = keep;
}
/* The stride of loop label j in the GEMM's operand M (x: its tensor; rows x cols x batch x the
 * loop labels of x, when packed). */
static int64_t tfe__gg_lstride(const tfe__gplan *P, int x, const tfe__gmat *M, int64_t block, int i) {
  const tfe__glabel *L = &P->T.l[P->lp.l[i]];
  if (!L->in[x]) return 0;
  if (M->direct) return L->s[x];
  int64_t s = block;
  for (int q = 0; q < i; q++)
    if (P->T.l[P->lp.l[q]].in[x]) s *= P->T.l[P->lp.l[q]].dim;
  return s;
}
/* Tries the loop layout in P's current orientation (m, n, b sorted by C's strides). */
static bool tfe__gg_loops(tfe__gplan *P, bool conj_a, bool conj_b, tfe__gmat *A, tfe__gmat *B, tfe__gmat *C,
                          bool any_size) {
  tfe__gg_peel(P, &P->m), tfe__gg_peel(P, &P->n), tfe__gg_peel(P, &P->b);
  if (P->lp.n == 0 || P->lp.size > (int64_t)TFE__GG_LOOP_MAX * TFE__GG_LOOP_MAX) return false;
  if (!tfe__gg_cdirect(P, C)) return false;
  tfe__gg_ab(P, conj_a, conj_b, A, B);
  int64_t fd = 1;
  P->fold = -1;
  if (P->b.n == 0)
    for (int i = 0; i < P->lp.n; i++) {
      const tfe__glabel *L = &P->T.l[P->lp.l[i]];
      if (L->s[TFE__GC] <= 0 || L->dim <= fd) continue;
      if ((A->direct && L->in[P->xa] && L->s[P->xa] < 0) || (B->direct && L->in[P->xb] && L->s[P->xb] < 0)) continue;
      P->fold = i, fd = L->dim;
    }
  double macs = (double)P->m.size * (double)P->n.size * (double)P->k.size * (double)P->b.size * (double)fd;
  if (P->lp.size / fd > TFE__GG_LOOP_MAX) return false;
  return any_size ||
         (macs >= (double)TFE__GG_LOOP_MACS && P->m.size >= TFE__GG_LOOP_SIDE && P->n.size >= TFE__GG_LOOP_SIDE);
}

/* Chooses the group orders, which operands are copied, and loop labels (loops: allowed). */
static void tfe__gg_layout(tfe__gplan *P, bool conj_a, bool conj_b, tfe__gmat *A, tfe__gmat *B, tfe__gmat *C,
                           bool loops) {
  tfe__gg_sort(&P->T, &P->m, TFE__GC), tfe__gg_sort(&P->T, &P->n, TFE__GC), tfe__gg_sort(&P->T, &P->b, TFE__GC);
  if (!tfe__gg_cdirect(P, C)) {
    tfe__gg_swap(P); /* C^T = B^T A^T: C's columns may be the unit-stride side */
    if (!tfe__gg_cdirect(P, C)) {
      tfe__gg_swap(P);
      tfe__gg_sort(&P->T, &P->m, P->xa), tfe__gg_sort(&P->T, &P->n, P->xb), tfe__gg_sort(&P->T, &P->b, P->xa);
    }
  }
  tfe__gg_ab(P, conj_a, conj_b, A, B);
  if (C->direct || !loops) return;
  const char *e = getenv("TFE_GPU_GEMM_LOOPS");
  if (e && e[0] == '0') return;
  bool any_size = e && strcmp(e, "all") == 0;
  double best = tfe__gg_cost(P, A, B, C);
  double need = any_size ? 0
                         : (double)P->m.size * (double)P->n.size * (double)P->k.size * (double)P->b.size /
                               TFE__GG_LOOP_SHARE; /* the least saving worth a loop */
  tfe__ggroup m0 = P->m, n0 = P->n, k0 = P->k, b0 = P->b;
  int xa0 = P->xa, xb0 = P->xb;
  for (int o = 0; o < 2; o++) { /* both orientations */
    tfe__ggroup m = P->m, n = P->n, k = P->k, b = P->b, lp = P->lp;
    int xa = P->xa, xb = P->xb, fold = P->fold;
    tfe__gmat a = *A, bm = *B, c = *C;
    P->m = m0, P->n = n0, P->k = k0, P->b = b0, P->xa = xa0, P->xb = xb0;
    P->lp.n = 0, P->lp.size = 1, P->fold = -1;
    if (o) tfe__gg_swap(P);
    tfe__gg_sort(&P->T, &P->m, TFE__GC), tfe__gg_sort(&P->T, &P->n, TFE__GC), tfe__gg_sort(&P->T, &P->b, TFE__GC);
    tfe__gmat ta, tb, tc;
    memset(&ta, 0, sizeof ta), memset(&tb, 0, sizeof tb), memset(&tc, 0, sizeof tc);
    double cost;
    if (tfe__gg_loops(P, conj_a, conj_b, &ta, &tb, &tc, any_size) && (cost = tfe__gg_cost(P, &ta, &tb, &tc)) < best &&
        best - cost >= need) {
      best = cost, *A = ta, *B = tb, *C = tc;
      continue;
    }
    P->m = m, P->n = n, P->k = k, P->b = b, P->lp = lp, P->xa = xa, P->xb = xb, P->fold = fold; /* keep the best */
    *A = a, *B = bm, *C = c;
  }
}

/* Copies operand x into a dense [R | Cg | batch] block at w (summing its one-input labels S,
 * conjugating when conj). */
static tfe_status tfe__gg_pack(tfe__gpu_dev *D, int g, const tfe__gplan *P, int x, const tfe__ggroup *R,
                               const tfe__ggroup *Cg, const tfe__ggroup *S, tfe__cu_ptr w, tfe__cu_ptr src, bool conj,
                               int trop, const char *where) {
  if (trop && S->n) { /* a tropical operand's one-input labels: a semiring sum (tropical.h) */
    tfe__gpu_tparams t;
    memset(&t, 0, sizeof t);
    const tfe__ggroup *parts[3] = {R, Cg, &P->b};
    int64_t stride = 1;
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < parts[q]->n; i++) {
        const tfe__glabel *L = &P->T.l[parts[q]->l[i]];
        TFE_TRY(tfe__gpu_tp_out(&t, L->dim, stride, L->s[x], 0, where));
        stride *= L->dim;
      }
    for (int i = 0; i < S->n; i++) TFE_TRY(tfe__gpu_tp_sum(&t, P->T.l[S->l[i]].dim, P->T.l[S->l[i]].s[x], 0, where));
    t.op = TFE__TOP_REDUCE, t.code = TFE__TF_ADD, t.s0 = tfe__gpu_trop_one(trop), t.s1 = tfe__gpu_trop_zero(trop);
    t.s1_zero = 1;
    return tfe__gpu_tew(D, g, trop, w, src, src, &t, where);
  }
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  const tfe__ggroup *parts[4] = {R, Cg, &P->b, &P->lp}; /* loop labels outermost (those x has) */
  int64_t stride = 1;
  for (int q = 0; q < 4; q++)
    for (int i = 0; i < parts[q]->n; i++) {
      const tfe__glabel *L = &P->T.l[parts[q]->l[i]];
      if (q == 3 && !L->in[x]) continue;
      TFE_TRY(tfe__gpu_kp_out(&p, L->dim, stride, L->s[x], where));
      stride *= L->dim;
    }
  for (int i = 0; i < S->n; i++) TFE_TRY(tfe__gpu_kp_sum(&p, P->T.l[S->l[i]].dim, P->T.l[S->l[i]].s[x], where));
  tfe__gscal one = {1, 0}, zero = {0, 0};
  return tfe__gpu_unary_launch(D, g, w, src, &p, one, zero, conj, where);
}
/* Copies between C and its dense [M | N | batch] block (to_block: C into the block). */
static tfe_status tfe__gg_cblock(tfe__gpu_dev *D, int g, const tfe__gplan *P, tfe__cu_ptr w, tfe__cu_ptr c,
                                 bool to_block, const char *where) {
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  const tfe__ggroup *parts[3] = {&P->m, &P->n, &P->b};
  int64_t stride = 1;
  for (int q = 0; q < 3; q++)
    for (int i = 0; i < parts[q]->n; i++) {
      const tfe__glabel *L = &P->T.l[parts[q]->l[i]];
      int64_t sc = L->s[TFE__GC];
      TFE_TRY(tfe__gpu_kp_out(&p, L->dim, to_block ? stride : sc, to_block ? sc : stride, where));
      stride *= L->dim;
    }
  tfe__gscal one = {1, 0}, zero = {0, 0};
  return tfe__gpu_unary_launch(D, g, to_block ? w : c, to_block ? c : w, &p, one, zero, false, where);
}

/* Bytes of a block of n elements, rounded up to 256 (0 when not needed); false on overflow. */
static bool tfe__gg_bytes(bool need, int64_t a, int64_t b, int64_t c, size_t es, size_t *out) {
  int64_t n;
  *out = 0;
  if (!need) return true;
  if (__builtin_mul_overflow(a, b, &n) || __builtin_mul_overflow(n, c, &n) ||
      __builtin_mul_overflow(n, (int64_t)es, &n) || n > INT64_MAX - 256)
    return false;
  *out = (size_t)((n + 255) / 256 * 256);
  return true;
}

static tfe__blas_gemm_sb_fn_t tfe__gg_gemm_fn(int g) {
  return g == TFE__GK_F32 ? tfe__gpu.blas.sgemm_sb
         : g == TFE__GK_F64 ? tfe__gpu.blas.dgemm_sb
         : g == TFE__GK_C64 ? tfe__gpu.blas.cgemm_sb
                            : tfe__gpu.blas.zgemm_sb;
}

/* cublasZgemm3m for unbatched c128 GEMMs when TFE_GPU_ZGEMM3M=1 (read once; opt-in: its error
 * bound for imaginary parts is weaker, docs/gpu.md); NULL: off, or not in the library. */
typedef tfe__blas_status(*tfe__gg_gemm_fn_t) TFE__BLAS_GEMM_ARGS;
static tfe__gg_gemm_fn_t tfe__gg_z3m(void) {
  static int tried;
  static tfe__gg_gemm_fn_t f;
  if (!tried) {
    const char *e = getenv("TFE_GPU_ZGEMM3M");
    void *h = tfe__gpu.lib[TFE_GPU_NVIDIA][TFE_GPU_LIB_BLAS];
    if (e && e[0] == '1' && h) *(void **)&f = dlsym(h, "cublasZgemm3m");
    tried = 1;
  }
  return f;
}
/* Small GEMMs (kernels.h, tfe_gemm_small: one thread per element of C, K summed in a loop)
 * instead of cuBLAS: K at most TFE__GG_SMALL_K, one batch entry's A and B within
 * TFE__GG_SMALL_BYTES (they stay in cache while C's elements are written), at most
 * TFE__GG_SMALL_MACS multiply-adds in all. On an H100 cuBLAS's strided-batched GEMMs of such
 * shapes (16 x 4 x 4 in batches of 1900, 176 x 1900 x 11) take 10-40 us where the work is
 * 1-3 us of memory traffic (docs/benchmarks.md, session 12). */
#define TFE__GG_SMALL_K 32
#define TFE__GG_SMALL_BYTES (1 << 20)
#define TFE__GG_SMALL_MACS (1LL << 23)
typedef struct tfe__gg_sparams { /* struct GS in kernels.h */
  long long ars, acs, abs_, brs, bcs, bbs, ldc, cbs;
  int m, n, k, nb, ca, cb, beta_zero, pad;
  double alpha_re, alpha_im, beta_re, beta_im;
} tfe__gg_sparams;
static int tfe__gg_small_on = -1; /* -1: TFE_GPU_SMALL_GEMM at first use ("0": always cuBLAS) */
static bool tfe__gg_small(const tfe__gpu_dev *D, int g, int64_t m, int64_t n, int64_t k, int64_t nb, size_t es) {
  if (tfe__gg_small_on < 0) {
    const char *e = getenv("TFE_GPU_SMALL_GEMM");
    tfe__gg_small_on = !(e && e[0] == '0');
  }
  if (!tfe__gg_small_on || !D->f_gsmall[g] || k < 1 || k > TFE__GG_SMALL_K || m < 1 || n < 1 || nb < 1) return false;
  if ((m * k + k * n) * (int64_t)es > TFE__GG_SMALL_BYTES) return false;
  if (m > INT_MAX / n || m * n > INT_MAX / nb || m * n * nb > 0x7fffffffLL) return false; /* 32-bit indices */
  return m * n * nb <= TFE__GG_SMALL_MACS / k;
}
/* A contraction whose C the GEMM could not write in place (it would write a block, then copy it
 * into C), whose sum has at most TFE__GPU_CTR_MAXT elements and whose A and B together fit in
 * TFE__GG_CTR_BYTES runs instead as one pass over C (elementwise.h, tfe__gpu_ctr): C written
 * once instead of three times, A and B read from the cache. With larger operands each element's
 * strided reads miss: on an H100 gm_queen's 1 GB steps took 2-5x the GEMM and copy
 * (docs/benchmarks.md, session 13). TFE_GPU_DIRECT_CTR: "0" never, "all" without the size rule
 * (the tests), read per call. */
#define TFE__GG_CTR_BYTES (4 << 20)
static tfe_status tfe__gpu_ctr(tfe__gpu_dev *D, const tfe_prim_desc *d, int g, size_t es, const tfe__gplan *P,
                               tfe__gscal alpha, tfe__gscal beta, bool ca, bool cb, const char *where);
static bool tfe__gg_ctr(const tfe__gplan *P, const tfe__gmat *C, size_t es) {
  if (C->direct || P->lp.n > 0) return false;
  const char *e = getenv("TFE_GPU_DIRECT_CTR");
  if (e && e[0] == '0') return false;
  int64_t sums = P->k.size * P->sa.size * P->sb.size;
  if (sums < 1 || sums > TFE__GPU_CTR_MAXT) return false;
  return (e && strcmp(e, "all") == 0) || (tfe__gg_numel(P, P->xa) + tfe__gg_numel(P, P->xb)) * (double)es <= TFE__GG_CTR_BYTES;
}
/* One GEMM (or batch of them) of the chosen kind at pa, pb, cc. */
static tfe_status tfe__gg_launch(tfe__gpu_dev *D, int g, size_t es, int trop, const tfe__gmat *A, const tfe__gmat *B,
                                 const tfe__gmat *C, int64_t m, int64_t n, int64_t k, int64_t nb, tfe__gscal alpha,
                                 tfe__gscal beta, bool beta_zero, tfe__cu_ptr cc, tfe__cu_ptr pa, tfe__cu_ptr pb,
                                 const char *where) {
  if (trop) {
    tfe__gpu_gparams q;
    memset(&q, 0, sizeof q);
    q.m = m, q.n = n, q.k = k;
    q.ars = A->op == TFE__BLAS_OP_N ? 1 : A->ld, q.acs = A->op == TFE__BLAS_OP_N ? A->ld : 1, q.abs_ = A->bs;
    q.brs = B->op == TFE__BLAS_OP_N ? 1 : B->ld, q.bcs = B->op == TFE__BLAS_OP_N ? B->ld : 1, q.bbs = B->bs;
    q.crs = 1, q.ccs = C->ld, q.cbs = C->bs;
    q.alpha = alpha.re, q.beta = beta.re, q.beta_zero = beta_zero;
    return tfe__gpu_tgemm(D, g, trop, false, cc, pa, pb, 0, &q, nb, where);
  }
  double al[2], be[2];
  if (tfe__gg_small(D, g, m, n, k, nb, es)) { /* a small GEMM: one thread per element of C */
    tfe__gg_sparams q;
    memset(&q, 0, sizeof q);
    q.ars = A->op == TFE__BLAS_OP_N ? 1 : A->ld, q.acs = A->op == TFE__BLAS_OP_N ? A->ld : 1, q.abs_ = A->bs;
    q.brs = B->op == TFE__BLAS_OP_N ? 1 : B->ld, q.bcs = B->op == TFE__BLAS_OP_N ? B->ld : 1, q.bbs = B->bs;
    q.ldc = C->ld, q.cbs = C->bs;
    q.m = (int)m, q.n = (int)n, q.k = (int)k, q.nb = (int)nb;
    q.ca = A->op == TFE__BLAS_OP_C, q.cb = B->op == TFE__BLAS_OP_C;
    q.beta_zero = beta_zero;
    q.alpha_re = alpha.re, q.alpha_im = alpha.im, q.beta_re = beta.re, q.beta_im = beta.im;
    void *args[] = {&cc, &pa, &pb, &q};
    return tfe__gpu_launch(D, D->f_gsmall[g], args, m * n * nb, where);
  }
  if (g == TFE__GK_C128 && nb == 1 && tfe__gg_z3m()) { /* opt-in (docs/gpu.md): Gauss's 3 real products */
    tfe__blas_status bs3 = tfe__gg_z3m()(D->blas, A->op, B->op, (int)m, (int)n, (int)k, tfe__gpu_scalar_as(g, alpha, al),
                                         (const void *)(uintptr_t)pa, (int)A->ld, (const void *)(uintptr_t)pb, (int)B->ld,
                                         tfe__gpu_scalar_as(g, beta, be), (void *)(uintptr_t)cc, (int)C->ld);
    if (bs3 != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cublasZgemm3m failed: status %d", bs3);
    return TFE_OK;
  }
  tfe__blas_status bs = tfe__gg_gemm_fn(g)(D->blas, A->op, B->op, (int)m, (int)n, (int)k,
                                           tfe__gpu_scalar_as(g, alpha, al), (const void *)(uintptr_t)pa, (int)A->ld,
                                           (long long)A->bs, (const void *)(uintptr_t)pb, (int)B->ld, (long long)B->bs,
                                           tfe__gpu_scalar_as(g, beta, be), (void *)(uintptr_t)cc, (int)C->ld,
                                           (long long)C->bs, (int)nb);
  if (bs != 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cuBLAS GEMM (%lld x %lld x %lld, batch %lld) failed: status %d",
                            (long long)m, (long long)n, (long long)k, (long long)nb, bs);
  return TFE_OK;
}
/* The GEMM over the chosen layout, copying what must be copied. */
/* trop: the tropical semiring (tropical.h) whose GEMM replaces cuBLAS's, 0 for cuBLAS. */
/* abc: the operands' GEMM forms when planned (the plan cache's), else filled here. */
static tfe_status tfe__gg_run(tfe__gpu_dev *D, const tfe_prim_desc *d, int g, size_t es, tfe__gplan *P,
                              tfe__gscal alpha, tfe__gscal beta, bool conj_a, bool conj_b, int trop, const char *where,
                              tfe__gmat *abc, bool planned) {
  bool beta_zero = trop ? beta.re == tfe__gpu_trop_zero(trop) : tfe__gpu_iszero(beta);
  tfe__gmat A, B, C;
  if (planned) A = abc[0], B = abc[1], C = abc[2];
  else {
    memset(&A, 0, sizeof A), memset(&B, 0, sizeof B), memset(&C, 0, sizeof C);
    tfe__gg_layout(P, conj_a, conj_b, &A, &B, &C, !trop);
    if (abc) abc[0] = A, abc[1] = B, abc[2] = C;
  }
  if (!trop && tfe__gg_ctr(P, &C, es)) return tfe__gpu_ctr(D, d, g, es, P, alpha, beta, conj_a, conj_b, where);
  int64_t m = P->m.size, n = P->n.size, k = P->k.size, nb = P->b.size;
  int64_t la = tfe__gg_xsize(P, &P->lp, P->xa), lb = tfe__gg_xsize(P, &P->lp, P->xb);
  size_t ba, bb, bc;
  if (!tfe__gg_bytes(!A.direct, m, k, nb * la, es, &ba) || !tfe__gg_bytes(!B.direct, k, n, nb * lb, es, &bb) ||
      !tfe__gg_bytes(!C.direct, m, n, nb, es, &bc))
    return TFE__GPU_FAIL_AT(TFE_ERR_OVERFLOW, where, "workspace size overflows");
  int64_t lim = INT_MAX;
  if (m > lim || n > lim || k > lim || nb > lim || A.ld > lim || B.ld > lim || C.ld > lim)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "GEMM of %lld x %lld x %lld (batch %lld) exceeds cuBLAS's int",
                            (long long)m, (long long)n, (long long)k, (long long)nb);
  tfe__cu_ptr w = 0;
  if (ba + bb + bc) TFE_TRY(tfe__gpu_ws(D, ba + bb + bc, &w, where));
  const tfe_dyn *opnd[2] = {d->a, d->b};
  bool cj[2] = {conj_a, conj_b};
  tfe__cu_ptr pa = tfe__gpu_addr(opnd[P->xa], es), pb = tfe__gpu_addr(opnd[P->xb], es), pc = tfe__gpu_addr(d->c, es);
  const tfe__ggroup *oa = P->xa == TFE__GA ? &P->sa : &P->sb, *ob = P->xa == TFE__GA ? &P->sb : &P->sa;
  if (!A.direct) {
    TFE_TRY(tfe__gg_pack(D, g, P, P->xa, &P->m, &P->k, oa, w, pa, cj[P->xa], trop, where));
    pa = w, A.op = TFE__BLAS_OP_N, A.ld = tfe__gg_max1(m), A.bs = nb > 1 ? m * k : 0;
  }
  if (!B.direct) {
    TFE_TRY(tfe__gg_pack(D, g, P, P->xb, &P->k, &P->n, ob, w + ba, pb, cj[P->xb], trop, where));
    pb = w + ba, B.op = TFE__BLAS_OP_N, B.ld = tfe__gg_max1(k), B.bs = nb > 1 ? k * n : 0;
  }
  tfe__cu_ptr cc = pc;
  if (!C.direct) {
    cc = w + ba + bb, C.ld = tfe__gg_max1(m), C.bs = nb > 1 ? m * n : 0;
    if (!beta_zero) TFE_TRY(tfe__gg_cblock(D, g, P, cc, pc, true, where));
  }
  if (P->lp.n == 0) {
    TFE_TRY(tfe__gg_launch(D, g, es, trop, &A, &B, &C, m, n, k, nb, alpha, beta, beta_zero, cc, pa, pb, where));
  } else { /* loop labels: one launch per index of those not folded into the batch (C is in place) */
    int64_t sa[TFE__GG_MAX], sb[TFE__GG_MAX], sc[TFE__GG_MAX], dim[TFE__GG_MAX], idx[TFE__GG_MAX];
    for (int i = 0; i < P->lp.n; i++) {
      sa[i] = tfe__gg_lstride(P, P->xa, &A, m * k * nb, i), sb[i] = tfe__gg_lstride(P, P->xb, &B, k * n * nb, i);
      sc[i] = P->T.l[P->lp.l[i]].s[TFE__GC], dim[i] = P->T.l[P->lp.l[i]].dim, idx[i] = 0;
    }
    int64_t nl = nb;
    if (P->fold >= 0) {
      int f = P->fold;
      A.bs = sa[f], B.bs = sb[f], C.bs = sc[f], nl = dim[f];
      dim[f] = 1;
    }
    int64_t oa = 0, ob = 0, oc = 0;
    for (;;) {
      TFE_TRY(tfe__gg_launch(D, g, es, trop, &A, &B, &C, m, n, k, nl, alpha, beta, beta_zero, cc + oc * (int64_t)es,
                             pa + oa * (int64_t)es, pb + ob * (int64_t)es, where));
      int i = 0;
      for (; i < P->lp.n; i++) { /* the next index, odometer order */
        if (++idx[i] < dim[i]) {
          oa += sa[i], ob += sb[i], oc += sc[i];
          break;
        }
        oa -= sa[i] * (dim[i] - 1), ob -= sb[i] * (dim[i] - 1), oc -= sc[i] * (dim[i] - 1), idx[i] = 0;
      }
      if (i == P->lp.n) break;
    }
  }
  if (!C.direct) TFE_TRY(tfe__gg_cblock(D, g, P, cc, pc, false, where));
  return TFE_OK;
}

/* ---- the plan cache ----------------------------------------------------------------------------
 * The analysis of a binary contraction (the label table, the groups, their orders, which
 * operands are copied, the GEMM's ops and leading dimensions) depends only on the kind, the
 * conjugation flags, and the operands' dims, strides and labels: each device keeps the last
 * TFE__GPU_PC_SIZE analyses (direct-mapped by a hash of that key; a colliding one replaces the
 * entry) and reuses them (D->pc, under the device lock). Offsets and scalars are read per
 * call. Operands of more than TFE__GPC_RANK axes in all are analysed per call. */
#define TFE__GPC_RANK 24
#define TFE__GPC_KEY (4 + 3 * TFE__GPC_RANK)
typedef struct tfe__gpc_entry {
  bool valid;
  int nkey;
  int64_t key[TFE__GPC_KEY];
  tfe__gplan P;
  tfe__gmat abc[3];
  bool laid;     /* abc filled (the GEMM layout was chosen) */
} tfe__gpc_entry;
static bool tfe__gpu_pc_on = true;
TFE_GPU_API void tfe_gpu_plan_cache_enable(bool on) { __atomic_store_n(&tfe__gpu_pc_on, on, __ATOMIC_RELAXED); }
TFE_GPU_API tfe_status tfe_gpu_plan_cache_stats(int dev, int64_t *hits, int64_t *misses) {
  tfe__gpu_dev *D = tfe__gpu_device(dev);
  if (!D) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "no GPU device %d (%d found)", dev, tfe_gpu_device_count());
  pthread_mutex_lock(&D->lock);
  if (hits) *hits = D->pc_hits;
  if (misses) *misses = D->pc_misses;
  pthread_mutex_unlock(&D->lock);
  return TFE_OK;
}
/* The key of a call (false: too many axes to cache). */
static bool tfe__gpc_key(const tfe_prim_desc *d, int g, int64_t *key, int *nkey) {
  const tfe_dyn *v[3] = {d->a, d->b, d->c};
  const int32_t *lab[3] = {d->la, d->lb, d->lc};
  int r = v[0]->lay.rank + v[1]->lay.rank + v[2]->lay.rank;
  if (r > TFE__GPC_RANK) return false;
  int n = 0;
  key[n++] = g | (int64_t)v[0]->conj << 8 | (int64_t)v[1]->conj << 9 | (int64_t)v[2]->conj << 10 | (int64_t)d->op << 12;
  for (int x = 0; x < 3; x++) {
    key[n++] = v[x]->lay.rank;
    for (int i = 0; i < v[x]->lay.rank; i++) {
      key[n++] = lab[x][i];
      key[n++] = v[x]->lay.dims[i];
      key[n++] = v[x]->lay.strides[i];
    }
  }
  *nkey = n;
  return n <= TFE__GPC_KEY;
}
static uint64_t tfe__gpc_hash(const int64_t *k, int n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < n; i++) h = (h ^ (uint64_t)k[i]) * 0x100000001b3ULL, h ^= h >> 29;
  return h;
}

static tfe_status tfe__gpu_binary_body(tfe__gpu_dev *D, const tfe_prim_desc *d, int g, size_t es, tfe__gplan *P,
                                       const char *where) {
  int64_t key[TFE__GPC_KEY];
  int nkey = 0;
  tfe__gpc_entry *E = NULL;
  bool hit = false;
  if (__atomic_load_n(&tfe__gpu_pc_on, __ATOMIC_RELAXED) && d->la && d->lb && d->lc && tfe__gpc_key(d, g, key, &nkey)) {
    if (!D->pc) D->pc = (tfe__gpc_entry *)calloc(TFE__GPU_PC_SIZE, sizeof *D->pc);
    if (D->pc) {
      E = &D->pc[tfe__gpc_hash(key, nkey) % TFE__GPU_PC_SIZE];
      hit = E->valid && E->nkey == nkey && memcmp(E->key, key, (size_t)nkey * sizeof *key) == 0;
      if (hit) P = &E->P, D->pc_hits++;
      else D->pc_misses++;
    }
  }
  if (!hit) TFE_TRY(tfe__gpu_table(&P->T, d, where));
  if (tfe_layout_numel(&d->c->lay) == 0) return TFE_OK;
  tfe__gscal alpha = tfe__gpu_scalar(g, d->alpha), beta = tfe__gpu_scalar(g, d->beta);
  bool cplx = g >= TFE__GK_C64, ca = cplx && d->a->conj, cb = cplx && d->b->conj;
  if (d->c->conj) tfe__gpu_conj_c(&alpha, &beta), ca = cplx && !ca, cb = cplx && !cb;
  if (P->T.crep) { /* off-diagonal elements become beta*C; the diagonal accumulates */
    TFE_TRY(tfe__gpu_scale(D, g, d->c, es, beta, where));
    beta.re = 1, beta.im = 0;
  }
  if (!hit) tfe__gg_classify(P);
  if (P->k.size == 0 || P->sa.size == 0 || P->sb.size == 0) /* an empty sum: C = beta*C */
    return tfe__gpu_scale(D, g, d->c, es, beta, where);
  if (!D->blas)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "%s has no cuBLAS (%s)", D->bename, tfe_gpu_status());
  if (hit && E->laid) return tfe__gg_run(D, d, g, es, P, alpha, beta, ca, cb, 0, where, E->abc, true);
  tfe__gmat abc[3];
  tfe_status st = tfe__gg_run(D, d, g, es, P, alpha, beta, ca, cb, 0, where, abc, false);
  if (E && !hit) { /* the analysis as it ran (the layout is chosen before anything can fail) */
    E->valid = false;
    E->P = *P;
    memcpy(E->abc, abc, sizeof abc);
    memcpy(E->key, key, (size_t)nkey * sizeof *key);
    E->nkey = nkey;
    E->laid = true;
    E->valid = true;
  }
  return st;
}
/* A binary contraction of tropical device operands (the CPU's label rules): C's repeated labels
 * (C = beta (x) C first, then the diagonal accumulates), empty sums (C = beta (x) C), then
 * either one pass of tfe_tew_<s> over C, each element the semiring sum over the K labels and
 * both inputs' one-input labels of A (x) B (elementwise, outer and broadcast products, small
 * sums, batches beyond the GEMM's grid), or the tropical GEMM over gemm.h's layout (operands
 * packed where needed, one-input labels summed on the way). */
static tfe_status tfe__gpu_trop_binary(const tfe_prims_backend *be, const tfe_prim_desc *d, int s, int g,
                                       const char *where) {
  if (!d->b || !d->c) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "operand %s is NULL", !d->b ? "B" : "C");
  if (!d->alpha || !d->beta)
    return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "scalar %s is NULL", !d->alpha ? "alpha" : "beta");
  if (d->b->dtype != d->a->dtype || d->c->dtype != d->a->dtype)
    return TFE__GPU_FAIL_AT(TFE_ERR_DTYPE, where, "operands differ in kind");
  size_t es = tfe_dtype_get(d->a->dtype)->size;
  tfe__gplan *P = (tfe__gplan *)malloc(sizeof *P);
  if (!P) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the contraction plan");
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  tfe_status st = tfe__gpu_table(&P->T, d, where);
  if (st != TFE_OK || tfe_layout_numel(&d->c->lay) == 0 || (st = tfe__gpu_enter(D, where)) != TFE_OK) {
    free(P);
    return st;
  }
  double alpha = tfe__gpu_scalar_raw(g, d->alpha).re, beta = tfe__gpu_scalar_raw(g, d->beta).re;
  st = tfe__gpu_kernels(D, g, where);
  if (st == TFE_OK && P->T.crep) {
    st = tfe__gpu_trop_scale(D, g, s, d->c, es, beta, where);
    beta = tfe__gpu_trop_one(s);
  }
  tfe__gg_classify(P);
  int64_t sums = P->k.size * P->sa.size * P->sb.size;
  if (st != TFE_OK) {
  } else if (sums == 0) { /* an empty sum */
    if (!P->T.crep) st = tfe__gpu_trop_scale(D, g, s, d->c, es, beta, where);
  } else if (sums <= 16 || P->b.size > 65535 || P->m.size < 16 || P->n.size < 16) {
    tfe__gpu_tparams p;
    memset(&p, 0, sizeof p);
    for (int j = 0; j < P->T.n && st == TFE_OK; j++) {
      const tfe__glabel *L = &P->T.l[j];
      int64_t sa = L->in[TFE__GA] ? L->s[TFE__GA] : 0, sb = L->in[TFE__GB] ? L->s[TFE__GB] : 0;
      st = L->in[TFE__GC] ? tfe__gpu_tp_out(&p, L->dim, L->s[TFE__GC], sa, sb, where)
                          : tfe__gpu_tp_sum(&p, L->dim, sa, sb, where);
    }
    p.op = TFE__TOP_CONTRACT, p.s0 = alpha, p.s1 = beta, p.s1_zero = beta == tfe__gpu_trop_zero(s);
    if (st == TFE_OK)
      st = tfe__gpu_tew(D, g, s, tfe__gpu_addr(d->c, es), tfe__gpu_addr(d->a, es), tfe__gpu_addr(d->b, es), &p, where);
  } else {
    tfe__gscal al = {alpha, 0}, bt = {beta, 0};
    st = tfe__gg_run(D, d, g, es, P, al, bt, false, false, s, where, NULL, false);
  }
  tfe__gpu_leave(D);
  free(P);
  return st;
}
/* A product without a sum (every label of A and of B is in C, once: elementwise, outer and
 * broadcast products; alpha 1, beta 0, nothing conjugated) runs as the elementwise slot's zip
 * (unless it is a plain outer product cuBLAS takes in place, below), one pass
 * over C with A and B read as views in C's label order (a label an input lacks has size 1 and
 * stride 0 there: numpy broadcasting), instead of packing the operands for a GEMM with K = 1
 * and copying C back, or running many tiny batched GEMMs. False: not such a product, or an
 * outer product left to the GEMM. */
static tfe_status tfe__gpu_elementwise(const tfe_prims_backend *be, const tfe_ew_desc *d); /* elementwise.h */
static bool tfe__gpu_try_zip(const tfe_prims_backend *be, const tfe_prim_desc *d, int g, tfe__gplan *P, tfe_status *st,
                             const char *where) {
  if (d->a->conj || d->b->conj || d->c->conj || d->c->lay.rank < 1) return false;
  tfe__gscal al = tfe__gpu_scalar(g, d->alpha), bt = tfe__gpu_scalar(g, d->beta);
  if (al.re != 1 || al.im != 0 || !tfe__gpu_iszero(bt)) return false;
  if (tfe__gpu_table(&P->T, d, where) != TFE_OK || P->T.crep || P->T.n != d->c->lay.rank) return false;
  int na = 0, nb = 0;
  for (int j = 0; j < P->T.n; j++) na += P->T.l[j].in[TFE__GA], nb += P->T.l[j].in[TFE__GB];
  if (na != d->a->lay.rank || nb != d->b->lay.rank) return false; /* a repeated label (a diagonal) */
  /* an outer product of two dense blocks without batch labels, which cuBLAS takes in place, is
   * faster as a GEMM with K = 1 (n = 4096: 0.048 ms against 0.137 on the zip kernel, H200); with
   * batch labels or a side under 16 cuBLAS's batched GEMMs are far slower than the zip (an
   * elementwise product of 2048 x 2048 as 4M GEMMs of 1 x 1 x 1: 3.8 ms against 0.042) */
  tfe__gmat A, B, C;
  memset(&A, 0, sizeof A), memset(&B, 0, sizeof B), memset(&C, 0, sizeof C);
  tfe__gg_classify(P);
  if (P->b.size == 1 && P->m.size >= 16 && P->n.size >= 16) {
    tfe__gg_layout(P, false, false, &A, &B, &C, false);
    if (A.direct && B.direct && C.direct) return false;
  }
  tfe_dyn x = *d->a, y = *d->b;
  x.lay.rank = y.lay.rank = d->c->lay.rank;
  for (int i = 0; i < d->c->lay.rank; i++) {
    int j = 0;
    while (j < P->T.n && P->T.l[j].label != d->lc[i]) j++;
    if (j == P->T.n) return false;
    const tfe__glabel *L = &P->T.l[j];
    x.lay.dims[i] = L->in[TFE__GA] ? L->dim : 1, x.lay.strides[i] = L->in[TFE__GA] ? L->s[TFE__GA] : 0;
    y.lay.dims[i] = L->in[TFE__GB] ? L->dim : 1, y.lay.strides[i] = L->in[TFE__GB] ? L->s[TFE__GB] : 0;
  }
  tfe_ew_desc e = {TFE_EW_ZIP, TFE_BIN_MUL, d->c, &x, &y, NULL, NULL, 0, NULL, 0, NULL, 0};
  *st = tfe__gpu_elementwise(be, &e);
  return true;
}
static tfe_status tfe__gpu_exec_binary(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  (void)plan;
  const char *where = "tfe_prims_execute";
  int g = 0;
  size_t es = 0;
  int trop = d && d->a ? tfe__gpu_trop(d->a->dtype, &g) : 0;
  if (trop) return tfe__gpu_trop_binary(be, d, trop, g, where);
  TFE_TRY(tfe__gpu_begin(be, d, &g, &es, where));
  if (!d->b) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "%s takes two inputs", tfe_prim_op_name(d->op));
  tfe__gplan *P = (tfe__gplan *)malloc(sizeof *P);
  if (!P) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the contraction plan");
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  tfe_status st = TFE_OK;
  if (tfe__gpu_try_zip(be, d, g, P, &st, where)) {
    free(P);
    return st;
  }
  st = tfe__gpu_enter(D, where);
  if (st == TFE_OK) {
    st = tfe__gpu_binary_body(D, d, g, es, P, where);
    tfe__gpu_leave(D);
  }
  free(P);
  return st;
}

#endif /* TFE__GPU_COMPANION */
#endif
