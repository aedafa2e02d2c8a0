/* tenferro/einsum/plan.h — einsum room: the einsum plan (kind-independent part).
 *
 * A plan fixes, for one expression + operand shapes and strides + element kind: the contraction
 * tree, the label order (layout) of every intermediate, the sliced labels, the workspace
 * (one arena; each buffer gets an offset by first fit over its live range) and the
 * contraction plan of every step. How it is built: build.h; the plan cache: plan_cache.h;
 * executing it (einsum_tpl.h) only builds views and runs each step's contraction plan on the
 * call's backend. Plans are immutable and counted; one plan may run on several threads. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_PLAN_H
#define TENFERRO_EINSUM_PLAN_H

#include <tenferro/einsum/anneal.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/prims.h>
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

/* Where an operand of a pairwise step lives during a call, packed for the executor
 * (einsum_tpl.h, ein_slice_): the caller's operand op (its data plus its offset), or (op < 0)
 * buffer buf at element offset off. */
typedef struct tfe__ein_src { int32_t op, buf; int64_t off; } tfe__ein_src;

typedef struct tfe_einsum_plan {
  atomic_long refcount;
  tfe_dtype dtype;
  size_t elem;
  int n;                    /* operands */
  tfe_layout *in;           /* n: operand layouts as given (offset ignored) */
  int64_t (*in_ext)[2];     /* n: the element range each spans from its offset; lo > hi: empty
                             * (the output overlap test of every call: ein_check_) */
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
  int slice_workers;        /* slices that may run at once: the memory limit was divided among
                               this many (the thread count at planning time; 1: one at a time) */
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
  /* The contraction plan of every leaf reduction (cplan[q]), pairwise step (cplan[npre + k];
   * NULL for elementwise steps) and of the output write of a one-operand or sliced plan
   * (cplan[npre + nsteps]), made once for the CPU's engines: executing a cached einsum plan
   * looks nothing up again. The steps that write the output were planned for out_lay, the
   * dense layout of out_order; another output layout plans through the contraction cache. */
  tfe_contract_plan **cplan;
  tfe_layout out_lay;
  /* What every call reads per step and per operand, packed densely: the records above are a
   * layout apart (about 1.3 KiB: a chain of 800 steps spreads its reads over 3 MiB and as many
   * pages), which a long chain of small steps fetched from far caches at every step.
   * src[3k], src[3k + 1]: step k's operands a and b, src[3k + 2] its result (not for the last
   * step: the output); in_pk: per operand its rank, dims and strides (ein_check_ops_). */
  tfe__ein_src *src;
  int64_t *in_pk;
} tfe_einsum_plan;

TFE_API void tfe_einsum_plan_release(tfe_einsum_plan *p);
TFE_API void tfe_einsum_plan_retain(tfe_einsum_plan *p);
/* Cost of the chosen path (flops over all slices, largest intermediate, slices). */
TFE_API tfe_einsum_cost tfe_einsum_plan_cost(const tfe_einsum_plan *p);
/* Seconds spent building the plan (0 for a plan served from the cache). */
TFE_API double tfe_einsum_plan_seconds(const tfe_einsum_plan *p);
/* The path in opt_einsum's linear format: pairs[2k], pairs[2k+1]; returns the step count. */
TFE_API int tfe_einsum_plan_path(const tfe_einsum_plan *p, const int **pairs);

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
#include <tenferro/einsum/build.h>

/* ---- validation: every argument of a request, before any is used (docs/einsum.md) ---------------- */
/* Limits on the options: a value past them is refused, not clamped (a typo must not turn into a
 * planning run of days). */
#define TFE__EIN_MAX_BUDGET 86400.0 /* seconds of annealing: one day */
#define TFE__EIN_MAX_TRIALS 1000000 /* randomized greedy runs */
#define TFE__EIN_FIN(o, f, where) \
  do { if (!isfinite((o)->f)) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "option " #f " must be a finite number (got %g)", (o)->f); } while (0)
TFE_INTERNAL tfe_status tfe__ein_opts_check(const tfe_einsum_opts *o, const char *where) {
  if (!o) return TFE_OK;
  if ((int)o->algo < (int)TFE_PATH_AUTO || (int)o->algo > (int)TFE_PATH_GIVEN)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "unknown path algorithm %d (option algo)", (int)o->algo);
  if (o->path_format != TFE_PATH_LINEAR && o->path_format != TFE_PATH_SSA)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "unknown path format %d (option path_format: TFE_PATH_LINEAR or TFE_PATH_SSA)",
                       (int)o->path_format);
  if (o->out_order != TFE_COLMAJOR && o->out_order != TFE_ROWMAJOR)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "out_order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)o->out_order);
  TFE__EIN_FIN(o, time_budget, where);
  TFE__EIN_FIN(o, greedy_alpha, where);
  TFE__EIN_FIN(o, greedy_temp, where);
  TFE__EIN_FIN(o, write_weight, where);
  if (o->time_budget < 0 || o->time_budget > TFE__EIN_MAX_BUDGET)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "option time_budget is %g s, outside [0, %g] (one day)", o->time_budget,
                       TFE__EIN_MAX_BUDGET);
  if (o->greedy_trials < 0 || o->greedy_trials > TFE__EIN_MAX_TRIALS)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "option greedy_trials is %d, outside [0, %d]", o->greedy_trials,
                       TFE__EIN_MAX_TRIALS);
  if (o->dp_max < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "option dp_max is %d, negative", o->dp_max);
  if (o->memory_limit < 0)
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "option memory_limit is %lld bytes, negative (0: no limit)",
                       (long long)o->memory_limit);
  if (o->algo != TFE_PATH_GIVEN) return TFE_OK; /* path and path_nsteps are read only for a given path */
  if (o->path_nsteps < 0) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "option path_nsteps is %d, negative", o->path_nsteps);
  if (!o->path) return TFE_FAIL_AT(TFE_ERR_NULL, where, "algo TFE_PATH_GIVEN needs option path (it is NULL)");
  return TFE_OK;
}
#undef TFE__EIN_FIN
/* The operands' layouts: n in range, each present and valid (rank, dims, strides). */
TFE_INTERNAL tfe_status tfe__ein_lays_check(int n, const tfe_layout *const *lay, const char *where) {
  if (n < 1) return TFE_FAIL_AT(TFE_ERR_INVALID, where, "einsum needs at least one operand (got %d)", n);
  if (!lay) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'layouts' is NULL");
  for (int k = 0; k < n; k++) {
    if (!lay[k]) return TFE_FAIL_AT(TFE_ERR_NULL, where, "layout of operand %d is NULL", k);
    if (lay[k]->rank < 0 || lay[k]->rank > TFE_MAX_RANK)
      return TFE_FAIL_AT(TFE_ERR_RANK, where, "operand %d has rank %d, outside [0, %d]", k, lay[k]->rank, TFE_MAX_RANK);
    if (tfe_layout_check(lay[k], NULL) != TFE_OK) {
      char why[TFE_ERRMSG_MAX];
      snprintf(why, sizeof why, "%s", tfe__msg_body());
      return TFE_FAIL_AT(tfe__ts.errcode, where, "operand %d: %s", k, why);
    }
  }
  return TFE_OK;
}
/* A whole request: expr (string form) or labels/out_labels/out_rank (integer form), layouts and
 * options. The plan cache key and the plan are built only from a request that passed. */
TFE_INTERNAL tfe_status tfe__ein_request_check(const char *expr, int n, const tfe_layout *const *lay,
                                              const int32_t *const *labels, const int32_t *out_labels, int out_rank,
                                              const tfe_einsum_opts *o, const char *where) {
  TFE_TRY(tfe__ein_lays_check(n, lay, where));
  if (!expr) {
    if (!labels) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'labels' is NULL");
    for (int k = 0; k < n; k++)
      if (lay[k]->rank > 0 && !labels[k]) return TFE_FAIL_AT(TFE_ERR_NULL, where, "labels of operand %d are NULL", k);
    if (out_labels && (out_rank < 0 || out_rank > TFE_MAX_RANK))
      return TFE_FAIL_AT(TFE_ERR_RANK, where, "output rank %d, outside [0, %d]", out_rank, TFE_MAX_RANK);
  }
  TFE_TRY(tfe__ein_opts_check(o, where));
  if (o && o->algo == TFE_PATH_GIVEN && o->path_nsteps != n - 1) /* the key reads 2 * path_nsteps ints */
    return TFE_FAIL_AT(TFE_ERR_INVALID, where, "the path has %d steps but %d operands need %d", o->path_nsteps, n, n - 1);
  return TFE_OK;
}
TFE_API void tfe_einsum_plan_release(tfe_einsum_plan *p) {
  if (!p || atomic_fetch_sub_explicit(&p->refcount, 1, memory_order_acq_rel) != 1) return;
  if (p->axis) for (int k = 0; k < p->n; k++) tfe__free(p->axis[k]);
  tfe__free(p->axis); tfe__free(p->in); tfe__free(p->in_ext); tfe__free(p->leaf); tfe__free(p->pre); tfe__free(p->step);
  tfe__free(p->sliced); tfe__free(p->sliced_dim); tfe__free(p->buf_off); tfe__free(p->path);
  tfe__free(p->buf_bytes); tfe__free(p->buf_from); tfe__free(p->consumed); /* buf_to lives in buf_from */
  tfe__free(p->label_id); tfe__free(p->slice_of); tfe__free(p->src); tfe__free(p->in_pk);
  if (p->cplan)
    for (int i = 0; i <= p->npre + p->nsteps; i++) tfe_contract_plan_release(p->cplan[i]);
  tfe__free(p->cplan);
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

/* ---- the contraction plans of the steps ---------------------------------------------------- */
/* The layout operand k is read with during slice 0 (sliced labels fixed: dim 1); its offset is
 * free (each slice moves it). */
TFE_INTERNAL void tfe__ein_leaf_lay(const tfe_einsum_plan *p, int k, tfe_layout *L) {
  *L = p->leaf[k].lay;
  for (int i = 0; i < L->rank; i++)
    if (p->slice_of[p->leaf[k].lab[i]] >= 0) L->dims[i] = 1;
}
/* Node id -> its layout and labels as the steps read it. */
TFE_INTERNAL const tfe_layout *tfe__ein_node_lay(const tfe_einsum_plan *p, int id, tfe_layout *leaf, const int32_t **lab) {
  if (id >= p->n) { *lab = p->step[id - p->n].lab; return &p->step[id - p->n].lay; }
  int pre = p->leaf[id].pre;
  if (pre >= 0) { *lab = p->pre[pre].lab; return &p->pre[pre].lay; }
  *lab = p->leaf[id].lab;
  tfe__ein_leaf_lay(p, id, leaf);
  return leaf;
}
/* One contraction plan, from the contraction plan cache (shared with tfe_contract_S and other
 * einsum plans), or NULL when the engine refuses the step: it then plans at run time and
 * reports why. Only an allocation failure fails. */
TFE_INTERNAL tfe_status tfe__ein_cplan(const tfe_einsum_plan *p, tfe_contract_plan **out, const tfe_layout *A,
                                       const int32_t *la, const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                       const int32_t *lc) {
  *out = NULL;
  /* Labels renamed in order of first appearance (a plan reads views, never label ids): steps of
   * the same shape get one plan from the cache. A chain of 199 steps then runs on 4 plans that
   * stay in L1, instead of 199 plans whose fields each step fetched from L2 (measured at D = 8:
   * a tenth of the chain's time was in loads of the cold plan). */
  int32_t ca[TFE_MAX_RANK], cb[TFE_MAX_RANK], cc[TFE_MAX_RANK], seen[3 * TFE_MAX_RANK];
  int ns = 0;
  const int32_t *src[3] = {la, lb, lc};
  int32_t *dst[3] = {ca, cb, cc};
  int rk[3] = {A->rank, B ? B->rank : 0, C->rank};
  for (int o = 0; o < 3; o++)
    for (int i = 0; src[o] && i < rk[o]; i++) {
      int j = 0;
      while (j < ns && seen[j] != src[o][i]) j++;
      if (j == ns) seen[ns++] = src[o][i];
      dst[o][i] = j;
    }
  tfe_status st = tfe__pr_plan_cached(out, p->dtype, A, la ? ca : NULL, B, lb ? cb : NULL, C, lc ? cc : NULL, TFE__PR_NATIVE,
                                      "tfe_einsum_plan_new");
  if (st == TFE_ERR_ALLOC) return st;
  if (st != TFE_OK) *out = NULL;
  return TFE_OK;
}
/* The packed records of every call's reads (tfe_einsum_plan.src, in_pk). */
TFE_INTERNAL tfe__ein_src tfe__ein_src_of(const tfe_einsum_plan *p, int id) {
  tfe__ein_src x = {id, -1, 0};
  const tfe__ein_step *s = id >= p->n ? &p->step[id - p->n] : p->leaf[id].pre >= 0 ? &p->pre[p->leaf[id].pre] : NULL;
  if (s) x.op = -1, x.buf = s->buf, x.off = s->lay.offset;
  return x;
}
TFE_INTERNAL tfe_status tfe__ein_plan_packed(tfe_einsum_plan *p) {
  int64_t words = 0;
  for (int k = 0; k < p->n; k++) words += 1 + 2 * (int64_t)p->in[k].rank;
  p->in_pk = (int64_t *)tfe__alloc((size_t)(words > 0 ? words : 1) * sizeof(int64_t));
  p->src = (tfe__ein_src *)tfe__alloc((size_t)(p->nsteps > 0 ? 3 * p->nsteps : 1) * sizeof(tfe__ein_src));
  if (!p->in_pk || !p->src) return TFE_ERR_ALLOC;
  int64_t *w = p->in_pk;
  for (int k = 0; k < p->n; k++) {
    const tfe_layout *L = &p->in[k];
    *w++ = L->rank;
    for (int i = 0; i < L->rank; i++) *w++ = L->dims[i];
    for (int i = 0; i < L->rank; i++) *w++ = L->strides[i];
  }
  for (int k = 0; k < p->nsteps; k++) {
    const tfe__ein_step *s = &p->step[k];
    p->src[3 * k] = tfe__ein_src_of(p, s->a);
    p->src[3 * k + 1] = tfe__ein_src_of(p, s->b);
    p->src[3 * k + 2].op = -1, p->src[3 * k + 2].buf = s->buf, p->src[3 * k + 2].off = s->lay.offset;
  }
  return TFE_OK;
}
/* Plans every step's contraction for the CPU's engines (see tfe_einsum_plan.cplan). */
TFE_INTERNAL tfe_status tfe__ein_plan_contractions(tfe_einsum_plan *p) {
  int nc = p->npre + p->nsteps + 1;
  p->cplan = (tfe_contract_plan **)tfe__calloc((size_t)nc, sizeof *p->cplan);
  if (!p->cplan) return TFE_ERR_ALLOC;
  TFE_TRY(tfe_layout_dense(p->out_rank, p->out_dims, p->out_order, &p->out_lay));
  tfe_layout la, lb, tmp;
  const int32_t *xa, *xb;
  for (int q = 0; q < p->npre; q++) {
    const tfe__ein_step *s = &p->pre[q];
    tfe__ein_leaf_lay(p, s->a, &la);
    TFE_TRY(tfe__ein_cplan(p, &p->cplan[q], &la, p->leaf[s->a].lab, NULL, NULL, &s->lay, s->lab));
  }
  /* the sliced output accumulates in a dense buffer: each slice writes its part */
  const tfe_layout *target = &p->out_lay;
  if (p->nslices > 1) {
    tmp = p->out_lay;
    for (int i = 0; i < tmp.rank; i++)
      if (p->slice_of[p->out_lab[i]] >= 0) tmp.dims[i] = 1;
    target = &tmp;
  }
  for (int k = 0; k < p->nsteps; k++) {
    const tfe__ein_step *s = &p->step[k];
    if (s->zip) continue;
    const tfe_layout *A = tfe__ein_node_lay(p, s->a, &la, &xa), *B = tfe__ein_node_lay(p, s->b, &lb, &xb);
    bool last = k + 1 == p->nsteps;
    TFE_TRY(tfe__ein_cplan(p, &p->cplan[p->npre + k], A, xa, B, xb, last ? target : &s->lay, last ? p->out_lab : s->lab));
  }
  if (p->n == 1) { /* the output write of a one-operand plan */
    tfe__ein_leaf_lay(p, 0, &la);
    TFE_TRY(tfe__ein_cplan(p, &p->cplan[p->npre + p->nsteps], &la, p->leaf[0].lab, NULL, NULL, &p->out_lay, p->out_lab));
  } else if (p->nslices > 1) { /* the sliced accumulator into the output */
    TFE_TRY(tfe__ein_cplan(p, &p->cplan[p->npre + p->nsteps], &p->out_lay, p->out_lab, NULL, NULL, &p->out_lay, p->out_lab));
  }
  return TFE_OK;
}

/* Builds a plan for expression e bound to the operand layouts. */
TFE_INTERNAL tfe_status tfe__ein_plan_build(const tfe__ein_expr *e, const char *src, tfe_dtype dt, size_t elem, int n,
                                           const tfe_layout *const *lay, const tfe_einsum_opts *opts,
                                           tfe_einsum_plan **out) {
  double t0 = tfe__now();
  tfe__ein_pclock_start(); /* the planners' clock (path.h) */
  tfe_einsum_opts o;
  if (opts) o = *opts; else memset(&o, 0, sizeof o);
  if (o.algo < TFE_PATH_AUTO || o.algo > TFE_PATH_GIVEN)
    return TFE_FAIL(TFE_ERR_INVALID, "unknown path algorithm %d", (int)o.algo);
  if (o.out_order != TFE_COLMAJOR && o.out_order != TFE_ROWMAJOR)
    return TFE_FAIL(TFE_ERR_INVALID, "out_order %d is not TFE_COLMAJOR or TFE_ROWMAJOR", (int)o.out_order);
  if (isnan(o.write_weight) || isinf(o.write_weight))
    return TFE_FAIL(TFE_ERR_INVALID, "write_weight must be a finite number");
  o.write_weight = o.write_weight == 0 ? tfe__st.tune.einsum_write_weight : o.write_weight < 0 ? 0 : o.write_weight;
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
    p->in_ext = (int64_t(*)[2])tfe__alloc((size_t)(n > 0 ? n : 1) * sizeof *p->in_ext);
    p->leaf = (tfe__ein_leaf *)tfe__alloc((size_t)n * sizeof(tfe__ein_leaf));
    p->axis = (int **)tfe__calloc((size_t)n, sizeof(int *));
    p->label_id = (int32_t *)tfe__alloc((size_t)(w.pb.nlab + 1) * sizeof(int32_t));
    if (!p->in || !p->in_ext || !p->leaf || !p->axis || !p->label_id) st = TFE_ERR_ALLOC;
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
  if (st == TFE_OK) st = tfe__ein_plan_contractions(p);
  if (st == TFE_OK) st = tfe__ein_plan_packed(p);
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
  TFE_CHECK_NULL(expr);
  size_t elem = tfe__ein_elem_size(dt);
  if (!elem) return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dt);
  TFE_TRY(tfe__ein_request_check(expr, n, layouts, NULL, NULL, 0, opts, __func__));
  tfe__ein_expr e;
  TFE_TRY(TFE_AS_API(tfe__ein_parse(expr, &e)));
  tfe_status st = tfe__ein_plan_build(&e, expr, dt, elem, n, layouts, opts, plan);
  tfe__ein_expr_free(&e);
  return TFE_AS_API(st);
}
TFE_API tfe_status tfe_einsum_plan_new_labels(tfe_einsum_plan **plan, tfe_dtype dt, int n,
                                              const tfe_layout *const *layouts, const int32_t *const *labels,
                                              const int32_t *out_labels, int out_rank, const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(plan);
  size_t elem = tfe__ein_elem_size(dt);
  if (!elem) return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dt);
  TFE_TRY(tfe__ein_request_check(NULL, n, layouts, labels, out_labels, out_rank, opts, __func__));
  int ranks[1024] = {0}, *rk = n <= 1024 ? ranks : (int *)tfe__alloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  if (!rk) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) {
    if (!layouts[k]) { if (rk != ranks) tfe__free(rk); return TFE_FAIL(TFE_ERR_NULL, "layout of operand %d is NULL", k); }
    rk[k] = layouts[k]->rank;
  }
  tfe__ein_expr e;
  tfe_status st = tfe__ein_from_labels(n, rk, labels, out_labels, out_rank, &e);
  if (rk != ranks) tfe__free(rk);
  if (st != TFE_OK) return TFE_AS_API(st);
  st = tfe__ein_plan_build(&e, NULL, dt, elem, n, layouts, opts, plan);
  tfe__ein_expr_free(&e);
  return TFE_AS_API(st);
}

#endif
