/* tenferro/einsum_plan.h — the einsum plan (kind-independent part) and the plan cache.
 *
 * A plan fixes, for one expression + operand shapes and strides + element kind: the contraction
 * tree, the label order (layout) of every intermediate, the sliced labels and the workspace
 * (one arena; each buffer gets an offset by first fit over its live range). Executing a plan
 * (einsum_tpl.h) only builds views and calls tfe_contract_S. Plans are immutable and counted;
 * one plan may run on several threads at once. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_PLAN_H
#define TENFERRO_EINSUM_PLAN_H

#include <tenferro/einsum/anneal.h>
#include <tenferro/kernel/kernel.h>
#include <stdatomic.h>

/* One pairwise step (or a leaf pre-reduction, b = -1): operands a, b are node ids (leaves
 * 0..n-1, step k -> node n+k); the result is written in label order lab[] into buffer `buf`
 * with layout lay (dense; sliced labels have dim 1). */
typedef struct tfe__ein_step {
  int a, b, buf;
  bool zip;                /* no label is summed: an elementwise product (tfe_zip_S), not a GEMM */
  tfe_layout lay;
  int32_t lab[TFE_MAX_RANK];
} tfe__ein_step;

/* An operand as the plan reads it: the axes kept (broadcast size-1 axes dropped). */
typedef struct tfe__ein_leaf {
  tfe_layout lay;          /* kept axes only, offset 0 */
  int32_t lab[TFE_MAX_RANK];
  int pre;                 /* index into pre[] of its reduction step, or -1 */
} tfe__ein_leaf;

typedef struct tfe_einsum_plan {
  atomic_long refcount;
  tfe_dtype dtype;
  size_t elem;
  int n;                    /* operands */
  tfe_layout *in;           /* n: operand layouts as given (offset ignored) */
  int **axis;               /* n: source axis of each kept leaf axis */
  tfe__ein_leaf *leaf;      /* n */
  int npre;
  tfe__ein_step *pre;       /* leaf reductions (labels only in that operand) */
  int nsteps;
  tfe__ein_step *step;      /* n-1 pairwise steps, the last writes the output */
  int out_rank;
  tfe_order out_order;      /* the output layout the intermediates are laid out for */
  int32_t out_lab[TFE_MAX_RANK];
  int64_t out_dims[TFE_MAX_RANK];
  int nsliced;
  int32_t *sliced;          /* labels */
  int64_t *sliced_dim;
  int64_t nslices;
  int tmp_buf;              /* buffer of the sliced output accumulator (-1: none) */
  int nbuf;
  int64_t *buf_off;         /* byte offsets in the arena */
  int64_t *buf_bytes;       /* nbuf: size of each buffer */
  int *buf_from, *buf_to;   /* nbuf: live range in step times (pre-reductions 0, step k: k+1) */
  int *consumed;            /* n: step time at which operand k is read for the last time */
  int64_t arena_bytes;
  int *path;                /* 2*nsteps: the tree in opt_einsum's linear format */
  tfe_einsum_cost cost;
  double plan_seconds;
  int nlab;
  int *slice_of;            /* nlab: index into sliced[] or -1 */
  int32_t *label_id;        /* label as written, per dense label */
  bool int_labels;
} tfe_einsum_plan;

TFE_API void tfe_einsum_plan_release(tfe_einsum_plan *p);
TFE_API void tfe_einsum_plan_retain(tfe_einsum_plan *p);
/* Cost of the chosen path (flops over all slices, largest intermediate, slices). */
TFE_API tfe_einsum_cost tfe_einsum_plan_cost(const tfe_einsum_plan *p);
/* Seconds spent building the plan (0 for a plan served from the cache). */
TFE_API double tfe_einsum_plan_seconds(const tfe_einsum_plan *p);
/* The path in opt_einsum's linear format: pairs[2k], pairs[2k+1]; returns the step count. */
TFE_API int tfe_einsum_plan_path(const tfe_einsum_plan *p, const int **pairs);

/* ---- per-step profile ---------------------------------------------------------------------------- */
/* What one executed step did, for a profiling hook: which pairwise step (leaf reductions are
 * reported with step = -1 - q), what ran (a GEMM-class contraction, an elementwise product,
 * a reduction), its multiply-adds and output elements, and its wall time. */
typedef struct tfe_einsum_step_info {
  int step, nsteps;
  int64_t slice;             /* 0 .. nslices-1 */
  const char *what;          /* "contract", "zip" or "reduce" */
  int rank_a, rank_b, rank_c;
  double flops;              /* multiply-adds (product of the sizes of every label involved) */
  double out_elems;
  double seconds;
  /* the step's views (b NULL for a reduction) and their dense label ids: valid during the call */
  const tfe_layout *lay_a, *lay_b, *lay_c;
  const int32_t *lab_a, *lab_b, *lab_c;
} tfe_einsum_step_info;
typedef void (*tfe_einsum_step_hook)(void *ctx, const tfe_einsum_step_info *info);
typedef struct tfe__ein_hook_t { _Atomic(tfe_einsum_step_hook) fn; _Atomic(void *) ctx; } tfe__ein_hook_t;
/* Calls fn(ctx, info) after every step of every plan execution in the process (NULL: off, the
 * default; then nothing is timed). For profiling: the hook runs on the calling thread, between
 * steps, and must not call einsum itself. */
TFE_API void tfe_einsum_set_step_hook(tfe_einsum_step_hook fn, void *ctx);

/* ---- the execution workspace -------------------------------------------------------------------- */
/* The arena of a big network is hundreds of MiB: fresh pages on every call cost a page fault
 * per 4 KiB (more than the copies that fill them). The last arena is kept for the next call
 * (one block, process-wide, lock-free; the bigger of two is kept), only when it comes from the
 * default allocator: user allocators get every block back at once. Huge pages are asked for
 * before the first touch. tfe_einsum_workspace_release() frees the kept block. */
typedef struct tfe__ein_block {
  size_t bytes;
  tfe_allocator from;
  char pad[64 - sizeof(size_t) - sizeof(tfe_allocator) > 0 ? 64 - sizeof(size_t) - sizeof(tfe_allocator) : 1];
} tfe__ein_block;
/* Frees the workspace kept for the next einsum call (it is otherwise kept until exit). */
TFE_API void tfe_einsum_workspace_release(void);

/* ---- building: the whole plan ------------------------------------------------------------------ */
typedef struct tfe__ein_bw { /* scratch of plan building */
  tfe__ein_prob pb;
  tfe__ein_net net;
  tfe__ein_tree tree;
  double *lsize;
  uint64_t *L;
  int32_t (*ord)[TFE_MAX_RANK];
  int *ordn, *parent, *bfrom, *bto, *live;
  int64_t *bbytes;
  bool *is_sliced;
} tfe__ein_bw;

/* ---- the plan cache ------------------------------------------------------------------------------ */
/* Keyed on everything the plan depends on: kind, expression (or labels), operand layouts
 * (dims and strides) and options. Least recently used entries are dropped. */
#define TFE_EIN_CACHE_SIZE 64
typedef struct tfe__ein_cache_entry {
  uint64_t hash;
  size_t len;
  unsigned char *key;
  tfe_einsum_plan *plan;
  uint64_t tick;
} tfe__ein_cache_entry;
typedef struct tfe__ein_cache_t {
  atomic_flag lock;
  uint64_t tick;
  long hits, misses;
  tfe__ein_cache_entry e[TFE_EIN_CACHE_SIZE];
} tfe__ein_cache_t;

typedef struct tfe__ein_key { unsigned char *b; size_t n, cap; bool oom; } tfe__ein_key;
/* Drops every cached plan (plans still held by callers stay valid). */
TFE_API void tfe_einsum_cache_clear(void);
/* Cache hits and misses since the start of the process. */
TFE_API void tfe_einsum_cache_stats(long *hits, long *misses);

/* ---- public plan constructors ---------------------------------------------------------------------- */
/* Plan for expression expr over n operands of the given layouts and kind (no cache). */
TFE_API tfe_status tfe_einsum_plan_new(tfe_einsum_plan **plan, tfe_dtype dt, const char *expr, int n,
                                       const tfe_layout *const *layouts, const tfe_einsum_opts *opts);
/* The same for integer labels: labels[k] has layouts[k]->rank entries; out_labels NULL means
 * implicit output (labels seen once, ascending). */
TFE_API tfe_status tfe_einsum_plan_new_labels(tfe_einsum_plan **plan, tfe_dtype dt, int n,
                                              const tfe_layout *const *layouts, const int32_t *const *labels,
                                              const int32_t *out_labels, int out_rank, const tfe_einsum_opts *opts);

#endif
#elif !defined(TENFERRO_EINSUM_PLAN_BODY) /* bodies */
#define TENFERRO_EINSUM_PLAN_BODY
#include <tenferro/einsum/anneal.h>
#include <tenferro/kernel/kernel.h>
TFE_API void tfe_einsum_plan_release(tfe_einsum_plan *p) {
  if (!p || atomic_fetch_sub_explicit(&p->refcount, 1, memory_order_acq_rel) != 1) return;
  if (p->axis) for (int k = 0; k < p->n; k++) tfe__free(p->axis[k]);
  tfe__free(p->axis); tfe__free(p->in); tfe__free(p->leaf); tfe__free(p->pre); tfe__free(p->step);
  tfe__free(p->sliced); tfe__free(p->sliced_dim); tfe__free(p->buf_off); tfe__free(p->path);
  tfe__free(p->buf_bytes); tfe__free(p->buf_from); tfe__free(p->consumed); /* buf_to lives in buf_from */
  tfe__free(p->label_id); tfe__free(p->slice_of);
  tfe__free(p);
}
TFE_API void tfe_einsum_plan_retain(tfe_einsum_plan *p) {
  if (p) atomic_fetch_add_explicit(&p->refcount, 1, memory_order_relaxed);
}
TFE_API tfe_einsum_cost tfe_einsum_plan_cost(const tfe_einsum_plan *p) { return p->cost; }
TFE_API double tfe_einsum_plan_seconds(const tfe_einsum_plan *p) { return p->plan_seconds; }
TFE_API int tfe_einsum_plan_path(const tfe_einsum_plan *p, const int **pairs) {
  if (pairs) *pairs = p->path;
  return p->nsteps;
}
TFE_GLOBAL tfe__ein_hook_t tfe__ein_hook;
TFE_API void tfe_einsum_set_step_hook(tfe_einsum_step_hook fn, void *ctx) {
  atomic_store(&tfe__ein_hook.ctx, ctx);
  atomic_store(&tfe__ein_hook.fn, fn);
}
/* Multiply-adds of a step over views a (labels la) and b (lb; NULL for a reduction): the
 * product of the sizes of the distinct labels involved. */
TFE_INTERNAL double tfe__ein_step_flops(const tfe_layout *a, const int32_t *la, const tfe_layout *b,
                                        const int32_t *lb) {
  double f = 1;
  for (int i = 0; i < a->rank; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen = seen || la[j] == la[i];
    if (!seen) f *= (double)a->dims[i];
  }
  for (int i = 0; b && i < b->rank; i++) {
    bool seen = false;
    for (int j = 0; j < a->rank; j++) seen = seen || la[j] == lb[i];
    for (int j = 0; j < i; j++) seen = seen || lb[j] == lb[i];
    if (!seen) f *= (double)b->dims[i];
  }
  return f;
}
/* Reports one step to the hook (called only when a hook is set). */
TFE_INTERNAL void tfe__ein_report(tfe_einsum_step_hook fn, int step, int nsteps, int64_t slice, const char *what,
                                  const tfe_layout *a, const int32_t *la, const tfe_layout *b, const int32_t *lb,
                                  const tfe_layout *c, const int32_t *lc, double seconds) {
  tfe_einsum_step_info in;
  in.step = step; in.nsteps = nsteps; in.slice = slice; in.what = what;
  in.rank_a = a->rank; in.rank_b = b ? b->rank : 0; in.rank_c = c->rank;
  in.flops = tfe__ein_step_flops(a, la, b, lb);
  in.out_elems = (double)tfe_layout_numel(c);
  in.seconds = seconds;
  in.lay_a = a; in.lay_b = b; in.lay_c = c; in.lab_a = la; in.lab_b = lb; in.lab_c = lc;
  fn(atomic_load(&tfe__ein_hook.ctx), &in);
}
TFE_GLOBAL _Atomic(tfe__ein_block *) tfe__ein_pool;

TFE_INTERNAL void tfe__ein_block_free(tfe__ein_block *b) {
  if (b) b->from.free(b->from.ctx, b);
}
/* A workspace of at least `bytes` (64-byte aligned), NULL on failure (message set). */
TFE_INTERNAL void *tfe__ein_ws_get(size_t bytes) {
  tfe__ein_block *b = atomic_exchange(&tfe__ein_pool, NULL);
  tfe_allocator cur = tfe_get_allocator();
  if (b && b->bytes >= bytes && b->from.alloc == cur.alloc && b->from.ctx == cur.ctx) return b + 1;
  tfe__ein_block_free(b);
  if (bytes > SIZE_MAX - sizeof *b) { (void)TFE_FAIL(TFE_ERR_OVERFLOW, "workspace of %zu bytes", bytes); return NULL; }
  b = (tfe__ein_block *)tfe__alloc(sizeof *b + bytes);
  if (!b) return NULL;
  b->bytes = bytes;
  b->from = cur;
  tfe__kadvise_huge(b + 1, bytes);
  return b + 1;
}
TFE_INTERNAL void tfe__ein_ws_put(void *p) {
  if (!p) return;
  tfe__ein_block *b = (tfe__ein_block *)p - 1;
  if (b->from.alloc != tfe__default_alloc) { tfe__ein_block_free(b); return; }
  tfe__ein_block *old = atomic_exchange(&tfe__ein_pool, b);
  if (old && old->bytes > b->bytes) old = atomic_exchange(&tfe__ein_pool, old); /* keep the bigger */
  tfe__ein_block_free(old);
}
TFE_API void tfe_einsum_workspace_release(void) { tfe__ein_block_free(atomic_exchange(&tfe__ein_pool, NULL)); }

/* ---- building: the tree over groups ----------------------------------------------------------- */
/* Runs the chosen optimizer on one network. */
TFE_INTERNAL tfe_status tfe__ein_optimize(tfe__ein_net *net, const tfe_einsum_opts *o, tfe__ein_tree *t) {
  int n = net->n;
  if (n < 2) return TFE_OK;
  if (n == 2) { t->ch[0] = 0; t->ch[1] = 1; return TFE_OK; }
  int dpmax = o->dp_max > 0 ? o->dp_max : 12;
  if (o->algo == TFE_PATH_DP || (o->algo == TFE_PATH_AUTO && n <= dpmax))
    return tfe__ein_dp(net, o->write_weight, t);
  double budget = o->algo == TFE_PATH_ANNEAL ? (o->time_budget > 0 ? o->time_budget : 1.0)
                : o->algo == TFE_PATH_AUTO ? o->time_budget : 0;
  double t0 = tfe__now();
  /* 15% of the budget on randomized greedy runs; then independent short annealing chains,
   * each from the best greedy tree with its own seed, the best kept: one long chain settles
   * in one basin (on lm_batch_likelihood: 0.99, 1.05 or 1.11x the best known flops by seed),
   * several short ones sample several basins; every other chain continues from the best tree
   * so far (re-heating it). */
  TFE_TRY(tfe__ein_greedy(net, o, t, NULL, budget > 0 ? t0 + 0.15 * budget : 0));
  uint64_t seed = o->seed ? o->seed : 0xA11EA1;
  if (budget > 0) {
    int m = 2 * (n - 1);
    tfe__ein_tree cur, best;
    TFE_TRY(tfe__ein_tree_new(n, &cur));
    tfe_status st = tfe__ein_tree_new(n, &best);
    if (st != TFE_OK) { tfe__ein_tree_free(&cur); return st; }
    memcpy(best.ch, t->ch, (size_t)m * sizeof(int));
    double bscore = INFINITY, chain = 0.75 * budget / 32;
    if (chain < 0.02) chain = 0.02;
    tfe_einsum_cost c;
    for (int r = 0; st == TFE_OK; r++) {
      double left = t0 + 0.9 * budget - tfe__now();
      if (left <= 0.5 * chain && r > 0) break;
      memcpy(cur.ch, (r & 1) ? best.ch : t->ch, (size_t)m * sizeof(int));
      st = tfe__ein_anneal(net, o->write_weight, left < chain ? left : chain, seed + 7919u * (uint64_t)r, &cur);
      double sc;
      if (st == TFE_OK) st = tfe__ein_tree_cost(net, &cur, o->write_weight, &c, &sc);
      if (st == TFE_OK && sc < bscore) { bscore = sc; memcpy(best.ch, cur.ch, (size_t)m * sizeof(int)); }
    }
    if (st == TFE_OK) memcpy(t->ch, best.ch, (size_t)m * sizeof(int));
    tfe__ein_tree_free(&cur); tfe__ein_tree_free(&best);
    TFE_TRY(st);
  }
  /* exact re-solution of subtrees polishes what annealing leaves */
  if (budget > 0) TFE_TRY(tfe__ein_reconf(net, o->write_weight, 10, t0 + budget, t));
  return TFE_OK;
}

/* Builds the global tree: innermost parenthesised groups first, each group optimized as its own
 * network whose output is what the rest of the expression needs. */
TFE_INTERNAL tfe_status tfe__ein_build_tree(const tfe__ein_prob *pb, const tfe__ein_net *gnet,
                                           const tfe_einsum_opts *o, tfe__ein_tree *t) {
  int n = pb->n, G = pb->ngroups, W = gnet->W;
  TFE_TRY(tfe__ein_tree_new(n, t));
  if (o->algo == TFE_PATH_GIVEN) {
    tfe__ein_tree_free(t);
    if (G > 1) return TFE_FAIL(TFE_ERR_INVALID, "a given path cannot be combined with parentheses");
    return tfe__ein_path_to_tree(n, o->path_nsteps, o->path, o->path_format, t);
  }
  if (G == 1) {
    tfe__ein_net net = *gnet;
    tfe_status st = tfe__ein_optimize(&net, o, t);
    if (st != TFE_OK) tfe__ein_tree_free(t);
    return st;
  }
  /* node[g]: global node holding group g's result; members listed per group. */
  int *gnode = (int *)tfe__alloc((size_t)(2 * G + 2 * n + 2) * sizeof(int));
  uint64_t *gL = (uint64_t *)tfe__calloc((size_t)(2 * n) * (size_t)W + 2 * (size_t)W, sizeof(uint64_t));
  tfe_status st = (!gnode || !gL) ? TFE_ERR_ALLOC : TFE_OK;
  int *mem = gnode + G, *insub = mem + n + G;
  int k = 0; /* next global step */
  uint64_t *outside = gL + (size_t)(2 * n) * (size_t)W, *un = outside + W;
  for (int i = 0; st == TFE_OK && i < n; i++) memcpy(TFE__BS(gL, W, i), TFE__BS(gnet->leaf, W, i), (size_t)W * 8);
  for (int g = G - 1; st == TFE_OK && g >= 0; g--) {
    int m = 0;
    for (int i = 0; i < n; i++) if (pb->group[i] == g) mem[m++] = i;
    for (int c = g + 1; c < G; c++) if (pb->gparent[c] == g) mem[m++] = gnode[c];
    /* labels outside the group: operands not under g, and the output */
    memcpy(outside, gnet->out, (size_t)W * 8);
    for (int i = 0; i < n; i++) {
      int h = pb->group[i];
      while (h > g) h = pb->gparent[h];
      insub[i] = h == g;
      if (!insub[i]) for (int w = 0; w < W; w++) outside[w] |= TFE__BS(gnet->leaf, W, i)[w];
    }
    if (m == 1) { gnode[g] = mem[0]; continue; }
    tfe__ein_net sub;
    if ((st = tfe__ein_net_new(m, gnet->nlab, gnet->lsize, &sub)) != TFE_OK) break;
    memset(un, 0, (size_t)W * 8);
    for (int q = 0; q < m; q++) {
      memcpy(TFE__BS(sub.leaf, W, q), TFE__BS(gL, W, mem[q]), (size_t)W * 8);
      for (int w = 0; w < W; w++) un[w] |= TFE__BS(gL, W, mem[q])[w];
    }
    for (int w = 0; w < W; w++) sub.out[w] = outside[w] & un[w];
    tfe__ein_tree st_t;
    st = tfe__ein_net_reduce(&sub);
    if (st == TFE_OK) st = tfe__ein_tree_new(m, &st_t);
    if (st == TFE_OK) {
      st = tfe__ein_optimize(&sub, o, &st_t);
      for (int q = 0; st == TFE_OK && q + 1 < m; q++) { /* map to global ids */
        int a = st_t.ch[2 * q], b = st_t.ch[2 * q + 1];
        t->ch[2 * k] = a < m ? mem[a] : n + (k - q) + (a - m);
        t->ch[2 * k + 1] = b < m ? mem[b] : n + (k - q) + (b - m);
        k++;
      }
      tfe__ein_tree_free(&st_t);
    }
    gnode[g] = n + k - 1;
    memcpy(TFE__BS(gL, W, gnode[g]), sub.out, (size_t)W * 8);
    tfe__ein_net_free(&sub);
  }
  tfe__free(gnode); tfe__free(gL);
  if (st == TFE_OK && k != n - 1) st = TFE_FAIL(TFE_ERR_INTERNAL, "group tree has %d steps, expected %d", k, n - 1);
  if (st != TFE_OK) tfe__ein_tree_free(t);
  return st;
}

/* ---- building: layouts, buffers ---------------------------------------------------------------- */
/* Position of label l in lab[0..r), -1 if absent. */
TFE_INTERNAL int tfe__ein_pos(const int32_t *lab, int r, int32_t l) {
  for (int i = 0; i < r; i++) if (lab[i] == l) return i;
  return -1;
}
/* Memory rank of label l in a layout: its smallest |stride| (for ordering contracted labels
 * like the sibling stores them). */
TFE_INTERNAL int64_t tfe__ein_stride_of(const tfe_layout *L, const int32_t *lab, int32_t l) {
  int64_t best = INT64_MAX;
  for (int i = 0; i < L->rank; i++)
    if (lab[i] == l) { int64_t s = L->strides[i] < 0 ? -L->strides[i] : L->strides[i]; if (s < best) best = s; }
  return best;
}

/* Chooses the label order of every intermediate, top-down from the output: for a step
 * C = A * B, the left operand stores (free, contracted, batch) and the right one
 * (contracted, free, batch) in column-major order — the GEMM-ready shapes — with free and
 * batch labels in the order of the result and contracted labels in the order the sibling
 * already stores them when it is an operand. */
TFE_INTERNAL void tfe__ein_choose_orders(tfe_einsum_plan *p, const uint64_t *L, int W, int32_t (*ord)[TFE_MAX_RANK],
                                         int *ordn) {
  int n = p->n;
  for (int k = n - 2; k >= 0; k--) {
    int v = n + k;
    const int32_t *po = ord[v];
    int pr = ordn[v];
    for (int side = 0; side < 2; side++) {
      int c = p->step[k].a, s = p->step[k].b;
      if (side) { c = p->step[k].b; s = p->step[k].a; }
      if (c < n) continue;
      const uint64_t *Lc = TFE__BS(L, W, c), *Ls = TFE__BS(L, W, s), *Lv = TFE__BS(L, W, v);
      int32_t F[TFE_MAX_RANK], K[TFE_MAX_RANK], Bt[TFE_MAX_RANK];
      int nf = 0, nk = 0, nb = 0;
      for (int i = 0; i < pr; i++) {
        int32_t l = po[i];
        if (!tfe__bs_test(Lc, l)) continue;
        if (tfe__bs_test(Ls, l)) Bt[nb++] = l; else F[nf++] = l;
      }
      for (int l = 0; l < p->nlab; l++)
        if (tfe__bs_test(Lc, l) && tfe__bs_test(Ls, l) && !tfe__bs_test(Lv, l)) K[nk++] = l;
      if (s < n || (side == 1 && p->step[k].a >= n)) { /* follow the sibling's order */
        const tfe_layout *SL = s < n ? &p->leaf[s].lay : &p->step[s - n].lay;
        const int32_t *slab = s < n ? p->leaf[s].lab : ord[s];
        if (s < n && p->leaf[s].pre >= 0) { SL = &p->pre[p->leaf[s].pre].lay; slab = p->pre[p->leaf[s].pre].lab; }
        if (s >= n) SL = NULL;
        for (int i = 1; i < nk; i++) { /* insertion sort by the sibling's stride or position */
          int32_t l = K[i];
          int64_t key = SL ? tfe__ein_stride_of(SL, slab, l) : tfe__ein_pos(slab, ordn[s], l);
          int j = i;
          while (j > 0) {
            int64_t kj = SL ? tfe__ein_stride_of(SL, slab, K[j - 1]) : tfe__ein_pos(slab, ordn[s], K[j - 1]);
            if (kj <= key) break;
            K[j] = K[j - 1]; j--;
          }
          K[j] = l;
        }
      }
      int r = 0;
      int32_t *o = ord[c];
      if (side == 0) { for (int i = 0; i < nf; i++) o[r++] = F[i]; for (int i = 0; i < nk; i++) o[r++] = K[i]; }
      else { for (int i = 0; i < nk; i++) o[r++] = K[i]; for (int i = 0; i < nf; i++) o[r++] = F[i]; }
      for (int i = 0; i < nb; i++) o[r++] = Bt[i];
      ordn[c] = r;
    }
  }
}

/* First-fit offsets for buffers with live ranges [from, to] (in step numbers). */
TFE_INTERNAL tfe_status tfe__ein_arena(int nbuf, const int64_t *bytes, const int *from, const int *to, int64_t *off,
                                      int64_t *total) {
  int *order = (int *)tfe__alloc((size_t)(nbuf + 1) * sizeof(int));
  if (!order) return TFE_ERR_ALLOC;
  for (int i = 0; i < nbuf; i++) order[i] = i;
  for (int i = 1; i < nbuf; i++) { /* biggest first packs better */
    int x = order[i], j = i;
    while (j > 0 && bytes[order[j - 1]] < bytes[x]) { order[j] = order[j - 1]; j--; }
    order[j] = x;
  }
  *total = 0;
  for (int q = 0; q < nbuf; q++) {
    int i = order[q];
    int64_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int r = 0; r < q; r++) {
        int j = order[r];
        if (to[j] < from[i] || to[i] < from[j]) continue;
        if (at < off[j] + bytes[j] && off[j] < at + bytes[i]) { at = (off[j] + bytes[j] + 63) / 64 * 64; moved = true; }
      }
    }
    off[i] = at;
    if (at + bytes[i] > *total) *total = at + bytes[i];
  }
  tfe__free(order);
  return TFE_OK;
}

/* Dense column-major layout of labels lab[0..r) (sliced labels get dim 1); byte count out. */
TFE_INTERNAL tfe_status tfe__ein_dense(const tfe__ein_prob *pb, const bool *is_sliced, const int32_t *lab, int r,
                                      size_t elem, tfe_layout *L, int64_t *bytes) {
  int64_t dims[TFE_MAX_RANK], nb;
  for (int i = 0; i < r; i++) dims[i] = is_sliced[lab[i]] ? 1 : pb->size[lab[i]];
  TFE_TRY(tfe_layout_dense(r, dims, TFE_COLMAJOR, L));
  int64_t cnt;
  TFE_TRY(tfe_layout_check(L, &cnt));
  if (!tfe__mul_ok(cnt, (int64_t)elem, &nb) || nb > INT64_MAX - 128)
    return TFE_FAIL(TFE_ERR_OVERFLOW, "an intermediate of %lld elements overflows the byte count", (long long)cnt);
  *bytes = nb;
  return TFE_OK;
}

TFE_INTERNAL void tfe__ein_bw_free(tfe__ein_bw *w) {
  tfe__ein_prob_free(&w->pb); tfe__ein_net_free(&w->net); tfe__ein_tree_free(&w->tree);
  tfe__free(w->lsize); tfe__free(w->L); tfe__free(w->ord); tfe__free(w->ordn); tfe__free(w->parent);
  tfe__free(w->bfrom); tfe__free(w->bto); tfe__free(w->live); tfe__free(w->bbytes); tfe__free(w->is_sliced);
}

/* Operand views as the plan reads them, the network and its reductions. */
TFE_INTERNAL tfe_status tfe__ein_plan_leaves(tfe_einsum_plan *p, tfe__ein_bw *w, const tfe_layout *const *lay) {
  tfe__ein_prob *pb = &w->pb;
  int n = pb->n;
  for (int k = 0; k < n; k++) {
    p->in[k] = *lay[k];
    p->in[k].offset = 0;
    tfe__ein_leaf *lf = &p->leaf[k];
    lf->lay.rank = pb->rank[k]; lf->lay.offset = 0; lf->pre = -1;
    p->axis[k] = (int *)tfe__alloc((size_t)(pb->rank[k] + 1) * sizeof(int));
    if (!p->axis[k]) return TFE_ERR_ALLOC;
    for (int i = 0; i < pb->rank[k]; i++) {
      int a = pb->axis[k][i];
      p->axis[k][i] = a;
      lf->lay.dims[i] = lay[k]->dims[a]; lf->lay.strides[i] = lay[k]->strides[a];
      lf->lab[i] = pb->lab[k][i];
    }
  }
  w->lsize = (double *)tfe__alloc((size_t)(pb->nlab + 1) * sizeof(double));
  if (!w->lsize) return TFE_ERR_ALLOC;
  for (int l = 0; l < pb->nlab; l++) w->lsize[l] = pb->size[l] > 1 ? log2((double)pb->size[l]) : 0;
  TFE_TRY(tfe__ein_net_new(n, pb->nlab, w->lsize, &w->net));
  for (int k = 0; k < n; k++)
    for (int i = 0; i < pb->rank[k]; i++) tfe__bs_set(TFE__BS(w->net.leaf, w->net.W, k), pb->lab[k][i]);
  for (int i = 0; i < pb->out_rank; i++) tfe__bs_set(w->net.out, pb->out_lab[i]);
  return tfe__ein_net_reduce(&w->net);
}

/* Slicing to the memory limit; fills sliced[], slice_of[] and nslices. */
TFE_INTERNAL tfe_status tfe__ein_plan_slice(tfe_einsum_plan *p, tfe__ein_bw *w, const tfe_einsum_opts *o) {
  int nl = w->pb.nlab;
  p->sliced = (int32_t *)tfe__alloc((size_t)(nl + 1) * sizeof(int32_t));
  p->sliced_dim = (int64_t *)tfe__alloc((size_t)(nl + 1) * sizeof(int64_t));
  p->slice_of = (int *)tfe__alloc((size_t)(nl + 1) * sizeof(int));
  w->is_sliced = (bool *)tfe__calloc((size_t)nl + 1, sizeof(bool));
  if (!p->sliced || !p->sliced_dim || !p->slice_of || !w->is_sliced) return TFE_ERR_ALLOC;
  for (int l = 0; l < nl; l++) p->slice_of[l] = -1;
  p->nslices = 1;
  if (o->memory_limit <= 0) return TFE_OK;
  double elems = (double)o->memory_limit / (double)p->elem;
  if (elems < 1)
    return TFE_FAIL(TFE_ERR_INVALID, "memory limit of %lld bytes is below one element", (long long)o->memory_limit);
  int *tmp = (int *)tfe__alloc((size_t)(nl + 1) * sizeof(int));
  if (!tmp) return TFE_ERR_ALLOC;
  tfe_status st = tfe__ein_slice(&w->net, w->lsize, &w->tree, log2(elems), tmp, &p->nsliced);
  for (int i = 0; st == TFE_OK && i < p->nsliced; i++) {
    int l = tmp[i];
    p->sliced[i] = l; p->sliced_dim[i] = w->pb.size[l]; p->slice_of[l] = i; w->is_sliced[l] = true;
    if (!tfe__mul_ok(p->nslices, w->pb.size[l], &p->nslices)) st = TFE_FAIL(TFE_ERR_OVERFLOW, "slice count overflows");
  }
  tfe__free(tmp);
  return st;
}

/* Leaf reductions, pairwise steps, layouts, buffers and the linear path. */
TFE_INTERNAL tfe_status tfe__ein_plan_steps(tfe_einsum_plan *p, tfe__ein_bw *w) {
  tfe__ein_prob *pb = &w->pb;
  int n = pb->n, W = w->net.W, N = 2 * n - 1;
  p->nsteps = n - 1;
  w->L = (uint64_t *)tfe__alloc((size_t)(N + 1) * (size_t)W * sizeof(uint64_t));
  w->ord = (int32_t(*)[TFE_MAX_RANK])tfe__alloc((size_t)N * sizeof *w->ord);
  w->ordn = (int *)tfe__calloc((size_t)N, sizeof(int));
  w->parent = (int *)tfe__alloc((size_t)N * sizeof(int));
  int nbmax = 2 * n + 1;
  w->bfrom = (int *)tfe__alloc((size_t)nbmax * sizeof(int));
  w->bto = (int *)tfe__alloc((size_t)nbmax * sizeof(int));
  w->bbytes = (int64_t *)tfe__alloc((size_t)nbmax * sizeof(int64_t));
  w->live = (int *)tfe__alloc((size_t)(n + 1) * sizeof(int));
  p->buf_off = (int64_t *)tfe__alloc((size_t)nbmax * sizeof(int64_t));
  p->pre = (tfe__ein_step *)tfe__alloc((size_t)(n + 1) * sizeof(tfe__ein_step));
  p->step = (tfe__ein_step *)tfe__alloc((size_t)(n + 1) * sizeof(tfe__ein_step));
  p->path = (int *)tfe__alloc((size_t)(2 * n + 2) * sizeof(int));
  if (!w->L || !w->ord || !w->ordn || !w->parent || !w->bfrom || !w->bto || !w->bbytes || !w->live ||
      !p->buf_off || !p->pre || !p->step || !p->path)
    return TFE_ERR_ALLOC;
  TFE_TRY(tfe__ein_tree_labels(&w->net, &w->tree, w->L));
  for (int v = 0; v < N; v++) {
    w->parent[v] = -1;
    if (tfe__bs_count(TFE__BS(w->L, W, v), W) > TFE_MAX_RANK)
      return TFE_FAIL(TFE_ERR_RANK, "the path makes an intermediate of rank %d (above %d): choose another path",
                      tfe__bs_count(TFE__BS(w->L, W, v), W), TFE_MAX_RANK);
  }
  for (int k = 0; k + 1 < n; k++) {
    p->step[k].a = w->tree.ch[2 * k]; p->step[k].b = w->tree.ch[2 * k + 1];
    w->parent[p->step[k].a] = k; w->parent[p->step[k].b] = k;
  }
  int nb = 0;
  /* Leaf reductions: labels of the operand that nothing else needs are summed first. */
  for (int k = 0; n > 1 && k < n; k++) {
    tfe__ein_leaf *lf = &p->leaf[k];
    const uint64_t *E = TFE__BS(w->net.leaf, W, k);
    bool need = false;
    for (int i = 0; i < lf->lay.rank; i++) need = need || !tfe__bs_test(E, lf->lab[i]);
    if (!need) continue;
    tfe__ein_step *s = &p->pre[p->npre];
    s->a = k; s->b = -1; s->buf = nb; s->zip = false;
    int r = 0;
    for (int i = 0; i < lf->lay.rank; i++)
      if (tfe__bs_test(E, lf->lab[i]) && tfe__ein_pos(s->lab, r, lf->lab[i]) < 0) s->lab[r++] = lf->lab[i];
    TFE_TRY(tfe__ein_dense(pb, w->is_sliced, s->lab, r, p->elem, &s->lay, &w->bbytes[nb]));
    w->bfrom[nb] = 0; w->bto[nb] = w->parent[k] + 1;
    lf->pre = p->npre++;
    nb++;
  }
  /* Orders: the output's memory order for the root, then top-down. */
  if (n > 1) {
    for (int i = 0; i < p->out_rank; i++)
      w->ord[N - 1][i] = p->out_lab[p->out_order == TFE_ROWMAJOR ? p->out_rank - 1 - i : i];
    w->ordn[N - 1] = p->out_rank;
    tfe__ein_choose_orders(p, w->L, W, w->ord, w->ordn);
  }
  for (int k = 0; k + 1 < n; k++) {
    tfe__ein_step *s = &p->step[k];
    int v = n + k, r = w->ordn[v];
    memcpy(s->lab, w->ord[v], (size_t)r * sizeof(int32_t));
    int64_t bytes;
    TFE_TRY(tfe__ein_dense(pb, w->is_sliced, s->lab, r, p->elem, &s->lay, &bytes));
    s->buf = -1;
    /* every label of the operands survives: the step is a broadcast product */
    uint64_t *u = TFE__BS(w->L, W, N); /* scratch word set past the last node */
    for (int q = 0; q < W; q++) u[q] = TFE__BS(w->L, W, s->a)[q] | TFE__BS(w->L, W, s->b)[q];
    s->zip = tfe__bs_count(u, W) == tfe__bs_count(TFE__BS(w->L, W, v), W);
    if (k + 2 < n) {
      s->buf = nb; w->bbytes[nb] = bytes; w->bfrom[nb] = k + 1; w->bto[nb] = w->parent[v] + 1; nb++;
    }
  }
  p->tmp_buf = -1;
  if (p->nslices > 1) { /* the output accumulates slice by slice in a dense buffer */
    int64_t cnt = 1;
    for (int i = 0; i < p->out_rank; i++)
      if (!tfe__mul_ok(cnt, p->out_dims[i], &cnt)) return TFE_FAIL(TFE_ERR_OVERFLOW, "output size overflows");
    if (!tfe__mul_ok(cnt, (int64_t)p->elem, &w->bbytes[nb])) return TFE_FAIL(TFE_ERR_OVERFLOW, "output size overflows");
    w->bfrom[nb] = 0; w->bto[nb] = n + 1;
    p->tmp_buf = nb++;
  }
  p->nbuf = nb;
  TFE_TRY(tfe__ein_arena(nb, w->bbytes, w->bfrom, w->bto, p->buf_off, &p->arena_bytes));
  /* live ranges kept for execution-time buffer reuse (tfe_einsum_owned_S) */
  p->buf_bytes = (int64_t *)tfe__alloc((size_t)(nb + 1) * sizeof(int64_t));
  p->buf_from = (int *)tfe__alloc((size_t)(2 * nb + 2) * sizeof(int));
  p->consumed = (int *)tfe__alloc((size_t)(n + 1) * sizeof(int));
  if (!p->buf_bytes || !p->buf_from || !p->consumed) return TFE_ERR_ALLOC;
  p->buf_to = p->buf_from + nb + 1;
  memcpy(p->buf_bytes, w->bbytes, (size_t)nb * sizeof(int64_t));
  memcpy(p->buf_from, w->bfrom, (size_t)nb * sizeof(int));
  memcpy(p->buf_to, w->bto, (size_t)nb * sizeof(int));
  for (int k = 0; k < n; k++) p->consumed[k] = p->leaf[k].pre >= 0 ? 0 : w->parent[k] + 1;
  /* The tree as opt_einsum pairs (positions in the shrinking operand list). */
  int m = n;
  for (int i = 0; i < n; i++) w->live[i] = i;
  for (int k = 0; k + 1 < n; k++) {
    int pa = -1, pbp = -1;
    for (int q = 0; q < m; q++) { if (w->live[q] == p->step[k].a) pa = q; if (w->live[q] == p->step[k].b) pbp = q; }
    p->path[2 * k] = pa; p->path[2 * k + 1] = pbp;
    int x = 0;
    for (int q = 0; q < m; q++) if (q != pa && q != pbp) w->live[x++] = w->live[q];
    w->live[x] = n + k;
    m--;
  }
  return TFE_OK;
}

/* The cost model's default weight of one written intermediate element, in multiply-adds
 * (opts.write_weight == 0). See docs/einsum.md, "Cost model", for how it was measured. */
TFE_GLOBAL double tfe__ein_ww_default = 0;
/* Builds a plan for expression e bound to the operand layouts. */
TFE_INTERNAL tfe_status tfe__ein_plan_build(const tfe__ein_expr *e, const char *src, tfe_dtype dt, size_t elem, int n,
                                           const tfe_layout *const *lay, const tfe_einsum_opts *opts,
                                           tfe_einsum_plan **out) {
  double t0 = tfe__now();
  tfe_einsum_opts o;
  if (opts) o = *opts; else memset(&o, 0, sizeof o);
  if (o.algo < TFE_PATH_AUTO || o.algo > TFE_PATH_GIVEN)
    return TFE_FAIL(TFE_ERR_INVALID, "unknown path algorithm %d", (int)o.algo);
  if (o.out_order != TFE_COLMAJOR && o.out_order != TFE_ROWMAJOR)
    return TFE_FAIL(TFE_ERR_INVALID, "out_order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)o.out_order);
  if (isnan(o.write_weight) || isinf(o.write_weight))
    return TFE_FAIL(TFE_ERR_INVALID, "write_weight must be a finite number");
  o.write_weight = o.write_weight == 0 ? tfe__ein_ww_default : o.write_weight < 0 ? 0 : o.write_weight;
  for (int k = 0; k < n; k++) {
    if (!lay[k]) return TFE_FAIL(TFE_ERR_NULL, "layout of operand %d is NULL", k);
    TFE_TRY(tfe_layout_check(lay[k], NULL));
  }
  tfe__ein_bw w;
  memset(&w, 0, sizeof w);
  tfe_einsum_plan *p = (tfe_einsum_plan *)tfe__calloc(1, sizeof *p);
  if (!p) return TFE_ERR_ALLOC;
  atomic_init(&p->refcount, 1);
  p->dtype = dt; p->elem = elem; p->n = n; p->out_order = o.out_order;
  tfe_status st = tfe__ein_bind(e, src, n, lay, &w.pb);
  if (st == TFE_OK) {
    p->in = (tfe_layout *)tfe__alloc((size_t)n * sizeof(tfe_layout));
    p->leaf = (tfe__ein_leaf *)tfe__alloc((size_t)n * sizeof(tfe__ein_leaf));
    p->axis = (int **)tfe__calloc((size_t)n, sizeof(int *));
    p->label_id = (int32_t *)tfe__alloc((size_t)(w.pb.nlab + 1) * sizeof(int32_t));
    if (!p->in || !p->leaf || !p->axis || !p->label_id) st = TFE_ERR_ALLOC;
  }
  if (st == TFE_OK) {
    p->nlab = w.pb.nlab; p->int_labels = w.pb.int_labels;
    memcpy(p->label_id, w.pb.label_id, (size_t)w.pb.nlab * sizeof(int32_t));
    p->out_rank = w.pb.out_rank;
    for (int i = 0; i < p->out_rank; i++) { p->out_lab[i] = w.pb.out_lab[i]; p->out_dims[i] = w.pb.size[w.pb.out_lab[i]]; }
    st = tfe__ein_plan_leaves(p, &w, lay);
  }
  if (st == TFE_OK) st = tfe__ein_build_tree(&w.pb, &w.net, &o, &w.tree);
  if (st == TFE_OK) st = tfe__ein_plan_slice(p, &w, &o);
  if (st == TFE_OK) st = tfe__ein_tree_cost(&w.net, &w.tree, o.write_weight, &p->cost, NULL);
  if (st == TFE_OK) st = tfe__ein_plan_steps(p, &w);
  if (st == TFE_OK) {
    p->cost.slices = p->nslices;
    p->cost.flops *= (double)p->nslices; p->cost.writes *= (double)p->nslices;
    p->cost.log10_flops = p->cost.flops > 0 ? log10(p->cost.flops) : 0;
  }
  tfe__ein_bw_free(&w);
  if (st != TFE_OK) { tfe_einsum_plan_release(p); return st; }
  p->plan_seconds = tfe__now() - t0;
  *out = p;
  return TFE_OK;
}
TFE_GLOBAL tfe__ein_cache_t tfe__ein_cache;

TFE_INTERNAL void tfe__ein_cache_lock(void) { while (atomic_flag_test_and_set_explicit(&tfe__ein_cache.lock, memory_order_acquire)) {} }
TFE_INTERNAL void tfe__ein_cache_unlock(void) { atomic_flag_clear_explicit(&tfe__ein_cache.lock, memory_order_release); }
TFE_INTERNAL void tfe__ein_key_put(tfe__ein_key *k, const void *x, size_t len) {
  if (k->oom) return;
  if (k->n + len > k->cap) {
    size_t cap = (k->cap + len) * 2 + 256;
    unsigned char *b = (unsigned char *)tfe__alloc(cap);
    if (!b) { k->oom = true; return; }
    if (k->n) memcpy(b, k->b, k->n);
    tfe__free(k->b); k->b = b; k->cap = cap;
  }
  memcpy(k->b + k->n, x, len);
  k->n += len;
}
TFE_INTERNAL uint64_t tfe__ein_hash(const unsigned char *b, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ULL; }
  return h;
}
/* Key of a request; expr NULL means the integer-label form (labels given). */
TFE_INTERNAL tfe_status tfe__ein_make_key(tfe__ein_key *k, tfe_dtype dt, const char *expr, int n,
                                         const tfe_layout *const *lay, const int32_t *const *labels,
                                         const int32_t *out_labels, int out_rank, const tfe_einsum_opts *o) {
  memset(k, 0, sizeof *k);
  int tag = expr ? 1 : 2;
  tfe__ein_key_put(k, &tag, sizeof tag);
  tfe__ein_key_put(k, &dt, sizeof dt);
  tfe__ein_key_put(k, &n, sizeof n);
  if (expr) tfe__ein_key_put(k, expr, strlen(expr) + 1);
  for (int i = 0; i < n; i++) {
    const tfe_layout *L = lay[i];
    tfe__ein_key_put(k, &L->rank, sizeof L->rank);
    tfe__ein_key_put(k, L->dims, (size_t)L->rank * sizeof(int64_t));
    tfe__ein_key_put(k, L->strides, (size_t)L->rank * sizeof(int64_t));
    if (!expr) tfe__ein_key_put(k, labels[i], (size_t)L->rank * sizeof(int32_t));
  }
  if (!expr) {
    int r = out_labels ? out_rank : -1;
    tfe__ein_key_put(k, &r, sizeof r);
    if (out_labels) tfe__ein_key_put(k, out_labels, (size_t)out_rank * sizeof(int32_t));
  }
  tfe_einsum_opts z;
  memset(&z, 0, sizeof z);
  if (o) { /* field by field: padding bytes are not part of the key */
    tfe__ein_key_put(k, &o->algo, sizeof o->algo); tfe__ein_key_put(k, &o->time_budget, sizeof(double));
    tfe__ein_key_put(k, &o->greedy_trials, sizeof(int)); tfe__ein_key_put(k, &o->greedy_alpha, sizeof(double));
    tfe__ein_key_put(k, &o->greedy_temp, sizeof(double)); tfe__ein_key_put(k, &o->dp_max, sizeof(int));
    tfe__ein_key_put(k, &o->write_weight, sizeof(double)); tfe__ein_key_put(k, &o->memory_limit, sizeof(int64_t));
    tfe__ein_key_put(k, &o->seed, sizeof(uint64_t)); tfe__ein_key_put(k, &o->path_nsteps, sizeof(int));
    tfe__ein_key_put(k, &o->path_format, sizeof o->path_format);
    tfe__ein_key_put(k, &o->out_order, sizeof o->out_order);
    if (o->path && o->path_nsteps > 0) tfe__ein_key_put(k, o->path, 2 * (size_t)o->path_nsteps * sizeof(int));
  }
  if (k->oom) { tfe__free(k->b); k->b = NULL; return TFE_FAIL(TFE_ERR_ALLOC, "plan cache key allocation failed"); }
  return TFE_OK;
}

/* A counted reference to the cached plan for key, or NULL. */
TFE_INTERNAL tfe_einsum_plan *tfe__ein_cache_get(const tfe__ein_key *k, uint64_t h) {
  tfe_einsum_plan *p = NULL;
  tfe__ein_cache_lock();
  for (int i = 0; i < TFE_EIN_CACHE_SIZE; i++) {
    tfe__ein_cache_entry *e = &tfe__ein_cache.e[i];
    if (e->plan && e->hash == h && e->len == k->n && memcmp(e->key, k->b, k->n) == 0) {
      p = e->plan;
      tfe_einsum_plan_retain(p);
      e->tick = ++tfe__ein_cache.tick;
      break;
    }
  }
  if (p) tfe__ein_cache.hits++; else tfe__ein_cache.misses++;
  tfe__ein_cache_unlock();
  return p;
}
/* Stores plan under key (takes the key buffer); the cache keeps its own reference. */
TFE_INTERNAL void tfe__ein_cache_put(tfe__ein_key *k, uint64_t h, tfe_einsum_plan *p) {
  tfe__ein_cache_lock();
  int slot = 0;
  for (int i = 0; i < TFE_EIN_CACHE_SIZE; i++) {
    if (!tfe__ein_cache.e[i].plan) { slot = i; break; }
    if (tfe__ein_cache.e[i].tick < tfe__ein_cache.e[slot].tick) slot = i;
  }
  tfe__ein_cache_entry old = tfe__ein_cache.e[slot];
  tfe_einsum_plan_retain(p);
  tfe__ein_cache_entry ne = {h, k->n, k->b, p, ++tfe__ein_cache.tick};
  tfe__ein_cache.e[slot] = ne;
  k->b = NULL;
  tfe__ein_cache_unlock();
  tfe__free(old.key);
  tfe_einsum_plan_release(old.plan);
}
TFE_API void tfe_einsum_cache_clear(void) {
  for (int i = 0; i < TFE_EIN_CACHE_SIZE; i++) {
    tfe__ein_cache_lock();
    tfe__ein_cache_entry old = tfe__ein_cache.e[i];
    memset(&tfe__ein_cache.e[i], 0, sizeof old);
    tfe__ein_cache_unlock();
    tfe__free(old.key);
    tfe_einsum_plan_release(old.plan);
  }
}
TFE_API void tfe_einsum_cache_stats(long *hits, long *misses) {
  tfe__ein_cache_lock();
  if (hits) *hits = tfe__ein_cache.hits;
  if (misses) *misses = tfe__ein_cache.misses;
  tfe__ein_cache_unlock();
}

/* Element bytes of a plan's kind: shipped dtypes from the table; a user kind is TFE_DT_CUSTOM
 * plus its element size (1..256), as the einsum templates pass it. 0: unknown. */
TFE_INTERNAL size_t tfe__ein_elem_size(tfe_dtype dt) {
  const tfe_dtype_info *di = tfe_dtype_get(dt);
  if (di) return di->size;
  if ((int)dt > (int)TFE_DT_CUSTOM && (int)dt <= (int)TFE_DT_CUSTOM + 256) return (size_t)((int)dt - (int)TFE_DT_CUSTOM);
  return 0;
}
TFE_API tfe_status tfe_einsum_plan_new(tfe_einsum_plan **plan, tfe_dtype dt, const char *expr, int n,
                                       const tfe_layout *const *layouts, const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(plan);
  TFE_CHECK_NULL(layouts);
  size_t elem = tfe__ein_elem_size(dt);
  if (!elem) return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dt);
  tfe__ein_expr e;
  TFE_TRY(tfe__ein_parse(expr, &e));
  tfe_status st = tfe__ein_plan_build(&e, expr, dt, elem, n, layouts, opts, plan);
  tfe__ein_expr_free(&e);
  return st;
}
TFE_API tfe_status tfe_einsum_plan_new_labels(tfe_einsum_plan **plan, tfe_dtype dt, int n,
                                              const tfe_layout *const *layouts, const int32_t *const *labels,
                                              const int32_t *out_labels, int out_rank, const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(plan);
  TFE_CHECK_NULL(layouts);
  size_t elem = tfe__ein_elem_size(dt);
  if (!elem) return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dt);
  int ranks[1024] = {0}, *rk = n <= 1024 ? ranks : (int *)tfe__alloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  if (!rk) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) {
    if (!layouts[k]) { if (rk != ranks) tfe__free(rk); return TFE_FAIL(TFE_ERR_NULL, "layout of operand %d is NULL", k); }
    rk[k] = layouts[k]->rank;
  }
  tfe__ein_expr e;
  tfe_status st = tfe__ein_from_labels(n, rk, labels, out_labels, out_rank, &e);
  if (rk != ranks) tfe__free(rk);
  if (st != TFE_OK) return st;
  st = tfe__ein_plan_build(&e, NULL, dt, elem, n, layouts, opts, plan);
  tfe__ein_expr_free(&e);
  return st;
}

/* Cached plan lookup/build used by the one-call entry points. */
TFE_INTERNAL tfe_status tfe__ein_plan_cached(tfe_einsum_plan **plan, tfe_dtype dt, const char *expr, int n,
                                            const tfe_layout *const *lay, const int32_t *const *labels,
                                            const int32_t *out_labels, int out_rank, const tfe_einsum_opts *o) {
  bool use = !(o && o->no_cache);
  tfe__ein_key k = {NULL, 0, 0, false};
  uint64_t h = 0;
  if (use) {
    for (int i = 0; i < n; i++) if (!lay[i]) return TFE_FAIL(TFE_ERR_NULL, "operand %d is NULL", i);
    if (expr || labels) {
      if (!expr) for (int i = 0; i < n; i++) if (lay[i]->rank > 0 && !labels[i]) return TFE_FAIL(TFE_ERR_NULL, "labels of operand %d are NULL", i);
      if (lay && n > 0) for (int i = 0; i < n; i++) if (lay[i]->rank < 0 || lay[i]->rank > TFE_MAX_RANK) use = false;
    } else use = false;
  }
  if (use) {
    TFE_TRY(tfe__ein_make_key(&k, dt, expr, n, lay, labels, out_labels, out_rank, o));
    h = tfe__ein_hash(k.b, k.n);
    *plan = tfe__ein_cache_get(&k, h);
    if (*plan) { tfe__free(k.b); return TFE_OK; }
  }
  tfe_status st = expr || !labels ? tfe_einsum_plan_new(plan, dt, expr, n, lay, o)
                                  : tfe_einsum_plan_new_labels(plan, dt, n, lay, labels, out_labels, out_rank, o);
  if (st == TFE_OK && use) tfe__ein_cache_put(&k, h, *plan);
  tfe__free(k.b);
  return st;
}
#endif
