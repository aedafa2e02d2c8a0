/* tenferro/einsum_path.h — contraction networks, trees and their cost; the greedy and exact
 * (dynamic programming) order optimizers; conversion of given paths.
 *
 * A network is n tensors, each a set of labels (bitsets of W words), a log2 size per label
 * and the set of output labels. A tree is in SSA form: leaves are 0..n-1, internal node k
 * (0 <= k < n-1) has id n+k and children ch[2k], ch[2k+1] with smaller ids; the root is
 * 2n-2. The cost model counts, per pairwise contraction, the product of the sizes of every
 * label involved (multiply-adds, the convention of the instances' log10_flops) and the size
 * of the intermediate written. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_PATH_H
#define TENFERRO_EINSUM_PATH_H

#include <tenferro/einsum/parse.h>

/* ---- options and cost (public) --------------------------------------------------------------- */
typedef enum tfe_path_algo {
  TFE_PATH_AUTO = 0,  /* DP up to dp_max operands, else greedy trials (+ anneal if time_budget > 0) */
  TFE_PATH_GREEDY,    /* best of greedy_trials randomized greedy runs */
  TFE_PATH_DP,        /* exact minimum of the cost model (fails above 20 operands per group) */
  TFE_PATH_ANNEAL,    /* greedy, then simulated annealing on the tree for time_budget seconds */
  TFE_PATH_GIVEN      /* opts.path: pairs in the opt_einsum (linear) or SSA format */
} tfe_path_algo;

typedef enum tfe_path_format {
  TFE_PATH_LINEAR = 0, /* numpy/opt_einsum: the pair is removed, the result appended at the end */
  TFE_PATH_SSA = 1     /* every operand keeps its id; result k of the path gets id n+k (a tree) */
} tfe_path_format;

/* Progress of a running einsum, handed to a progress callback after every step (and once
 * before the first): counts over all slices; live_bytes is what the intermediates of the
 * current slice hold after the step; seconds since the execution started. */
typedef struct tfe_einsum_progress_info {
  int64_t steps_done, steps_total;   /* leaf reductions and pairwise steps, all slices */
  int64_t slices_done, slices_total; /* slices finished; 1 for an unsliced plan */
  double madds_done, madds_total;    /* multiply-adds (product of the sizes of each step's labels) */
  double live_bytes;                 /* bytes of intermediates live after the step */
  double seconds;                    /* wall time since the execution started */
} tfe_einsum_progress_info;
/* Returns 0 to go on; non-zero cancels the call before its next step (TFE_ERR_CANCELLED). */
typedef int (*tfe_einsum_progress_fn)(void *ctx, const tfe_einsum_progress_info *info);

typedef struct tfe_einsum_opts {
  tfe_path_algo algo;
  double time_budget;     /* seconds of annealing (ANNEAL: default 1.0; AUTO: 0 = none) */
  int greedy_trials;      /* randomized greedy runs (default 8; the first is deterministic) */
  double greedy_alpha;    /* greedy score: size(out) - alpha*(size(a)+size(b)); default 1 */
  double greedy_temp;     /* randomization of later trials; default 0.3 */
  int dp_max;             /* AUTO uses DP for groups of at most this many operands (default 12) */
  double write_weight;    /* cost of writing one intermediate element, in multiply-adds (default 0) */
  int64_t memory_limit;   /* bytes for the largest intermediate; above it, slice (0: no limit) */
  uint64_t seed;          /* randomized optimizers (0: a fixed default) */
  int path_nsteps;        /* TFE_PATH_GIVEN: path[2k], path[2k+1] for step k */
  const int *path;
  tfe_path_format path_format;
  bool no_cache;          /* plan without consulting or filling the plan cache */
  tfe_order out_order;    /* memory order of the output the plan is laid out for, and of the
                             allocating forms' result: TFE_COLMAJOR (default) or TFE_ROWMAJOR */
  const struct tfe_prims_backend *backend; /* run on this backend (NULL: chosen from the operands,
                             prims/registry.h); plain views are then taken to be its memory */
  bool allow_transfer;    /* accept operands outside the backend's memory space (moving them
                             needs the runtime room: until then such a call fails) */
  tfe_einsum_progress_fn progress; /* called after every step of this call (NULL: the thread's
                             setting, tfe_einsum_set_progress; not part of the plan) */
  void *progress_ctx;     /* its first argument */
} tfe_einsum_opts;

typedef struct tfe_einsum_cost {
  double flops;        /* multiply-adds over all pairwise steps (and all slices) */
  double writes;       /* intermediate elements written (all slices) */
  double log10_flops;
  double log2_size;    /* log2 of the largest tensor a step writes, the output included (per slice) */
  double log2_inter;   /* the same without the output: what the memory limit governs */
  int max_rank;        /* largest intermediate rank */
  int64_t slices;      /* number of slices (1: unsliced) */
} tfe_einsum_cost;

/* ---- small utilities -------------------------------------------------------------------------- */
typedef struct tfe__rng { uint64_t s; } tfe__rng;

/* ---- networks -------------------------------------------------------------------------------- */
typedef struct tfe__ein_net {
  int n, nlab, W;
  const double *lsize; /* log2 size per label */
  uint64_t *leaf;      /* n * W */
  uint64_t *out;       /* W */
  double tshare;       /* share of the planning-time floor and cap this network gets (0: all);
                          a part of a network that falls apart (build.h, tfe__ein_parts) */
} tfe__ein_net;
#define TFE__BS(base, W, i) ((base) + (size_t)(i) * (size_t)(W))

/* ---- trees ----------------------------------------------------------------------------------- */
typedef struct tfe__ein_tree {
  int n;
  int *ch; /* 2*(n-1) children */
} tfe__ein_tree;

/* ---- greedy ----------------------------------------------------------------------------------- */
typedef struct tfe__ein_cand { double key; int i, j; } tfe__ein_cand;
typedef struct tfe__ein_heap { tfe__ein_cand *a; int n, cap; } tfe__ein_heap;

typedef struct tfe__ein_gstate {
  const tfe__ein_net *net;
  uint64_t *L;   /* (2n-1) * W label sets */
  double *ls;    /* log2 size of each tensor */
  int *ref;      /* live holders (+1 for the output) of each label */
  bool *alive;
  uint64_t *tmp; /* W */
  double alpha, temp;
  tfe__rng rng;
} tfe__ein_gstate;

/* ---- exact dynamic programming over subsets ------------------------------------------------------ */
#define TFE_EIN_DP_LIMIT 20

#endif
#elif !defined(TENFERRO_EINSUM_PATH_BODY) /* bodies */
#define TENFERRO_EINSUM_PATH_BODY
#include <math.h>
#include <time.h>
#include <tenferro/einsum/parse.h>
TFE_INTERNAL uint64_t tfe__rng_next(tfe__rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
TFE_INTERNAL double tfe__rng_unif(tfe__rng *r) { return (double)(tfe__rng_next(r) >> 11) * 0x1.0p-53; }
TFE_INTERNAL int tfe__rng_int(tfe__rng *r, int n) { return (int)(tfe__rng_next(r) % (uint64_t)n); }

TFE_INTERNAL double tfe__now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The planning clock: seconds since this thread's planning began (tfe__ein_pclock_start, at
 * the start of every plan build). By default counted in work: the units tfe__bs_log2 counts
 * (it sits in every optimizer's inner loop) over einsum_plan_work_rate (1.5e8 per second, about
 * this speed on the 2-core AMD EPYC build host under its usual load), so the same seed gives the
 * same path under any load (docs/einsum.md, "Planning time"). With einsum_plan_work_rate = 0,
 * counted as the process's CPU time, but at least a quarter of
 * the wall time and at most the wall time (the process's other threads count in its CPU time).
 * The allowances of TFE_PATH_AUTO and the budget of _ANNEAL are spent on it: a planner
 * preempted on a loaded machine still gets the CPU time its allowance intends (on wall time, at
 * load 11 on 2 cores, gm_queen5_5_3 came back with a greedy-quality path, 9.9x the stored
 * opt_flops), and a quiet single-threaded plan spends the same either way; the quarter bounds
 * the wall time under any load (C's clock(): process CPU time where the C library has it, wall
 * time elsewhere). */
TFE_INTERNAL void tfe__ein_pclock_start(void) {
  clock_t c = clock();
  tfe__ts.ein_pc0[0] = tfe__now();
  tfe__ts.ein_pc0[1] = c == (clock_t)-1 ? 0 : (double)c / (double)CLOCKS_PER_SEC;
  tfe__ts.ein_work = 0;
  tfe__ts.ein_capped = false;
}
TFE_INTERNAL double tfe__ein_pclock(void) {
  double w = tfe__now() - tfe__ts.ein_pc0[0], rate = tfe__st.tune.einsum_plan_work_rate;
  if (rate > 0) {
    /* work: the same for the same seed under any load; a sixteenth of the wall time less 10 ms
     * only where that runs ahead (a machine loaded past about 16 jobs per core, or 16 times
     * slower than the rate says: a sanitizer build), which bounds the wall time */
    double v = tfe__ts.ein_work / rate, r = 0.0625 * w - 0.01;
    if (v >= r) return v;
    tfe__ts.ein_capped = true;
    return r;
  }
  clock_t c = clock();
  if (c == (clock_t)-1) return w;
  double cpu = (double)c / (double)CLOCKS_PER_SEC - tfe__ts.ein_pc0[1];
  if (cpu > w) cpu = w; /* other threads of the process (spinning OpenMP workers) count too */
  return cpu > 0.25 * w ? cpu : 0.25 * w;
}

/* Log2 size of a label set; counts its work (one unit per word and per label) on the planning
 * clock's work counter (tfe__ein_pclock). */
TFE_INTERNAL double tfe__bs_log2(const uint64_t *b, int W, const double *lsize) {
  double s = 0;
  int units = W;
  for (int w = 0; w < W; w++)
    for (uint64_t x = b[w]; x; x &= x - 1, units++) s += lsize[w * 64 + __builtin_ctzll(x)];
  tfe__ts.ein_work += units;
  return s;
}
/* The lowest set bit at or above `from`, -1 if none. */
TFE_INTERNAL int tfe__bs_next(const uint64_t *b, int W, int from) {
  for (int w = from / 64; w < W; w++) {
    uint64_t x = b[w] & (w == from / 64 ? ~0ULL << (from % 64) : ~0ULL);
    if (x) return w * 64 + __builtin_ctzll(x);
  }
  return -1;
}
TFE_INTERNAL int tfe__bs_count(const uint64_t *b, int W) {
  int c = 0;
  for (int w = 0; w < W; w++) c += __builtin_popcountll(b[w]);
  return c;
}
TFE_INTERNAL bool tfe__bs_meet(const uint64_t *a, const uint64_t *b, int W) {
  for (int w = 0; w < W; w++) if (a[w] & b[w]) return true;
  return false;
}
/* Whether a and b share a label outside x (x: the output: sharing only output labels is a
 * batched outer product, no contraction). */
TFE_INTERNAL bool tfe__bs_meet_but(const uint64_t *a, const uint64_t *b, const uint64_t *x, int W) {
  for (int w = 0; w < W; w++) if (a[w] & b[w] & ~x[w]) return true;
  return false;
}
TFE_INTERNAL bool tfe__bs_test(const uint64_t *b, int l) { return (b[l >> 6] >> (l & 63)) & 1; }
TFE_INTERNAL void tfe__bs_set(uint64_t *b, int l) { b[l >> 6] |= 1ULL << (l & 63); }

/* Allocates a network of n tensors with zeroed bitsets. */
TFE_INTERNAL tfe_status tfe__ein_net_new(int n, int nlab, const double *lsize, tfe__ein_net *net) {
  net->n = n; net->nlab = nlab; net->W = (nlab + 63) / 64 > 0 ? (nlab + 63) / 64 : 1; net->lsize = lsize;
  net->tshare = 0;
  net->leaf = (uint64_t *)tfe__calloc((size_t)(n + 1) * (size_t)net->W, sizeof(uint64_t));
  if (!net->leaf) return TFE_ERR_ALLOC;
  net->out = TFE__BS(net->leaf, net->W, n);
  return TFE_OK;
}
TFE_INTERNAL void tfe__ein_net_free(tfe__ein_net *net) { tfe__free(net->leaf); net->leaf = NULL; }

/* Drops from every tensor the labels no other tensor and not the output holds: those are
 * summed inside the tensor before any pairwise step. */
TFE_INTERNAL tfe_status tfe__ein_net_reduce(tfe__ein_net *net) {
  int W = net->W;
  uint64_t *once = (uint64_t *)tfe__calloc(2 * (size_t)W, sizeof(uint64_t)), *twice = once + W;
  if (!once) return TFE_ERR_ALLOC;
  for (int i = 0; i < net->n; i++)
    for (int w = 0; w < W; w++) {
      uint64_t x = TFE__BS(net->leaf, W, i)[w];
      twice[w] |= once[w] & x; once[w] |= x;
    }
  for (int i = 0; i < net->n; i++)
    for (int w = 0; w < W; w++) TFE__BS(net->leaf, W, i)[w] &= twice[w] | net->out[w];
  for (int w = 0; w < W; w++) net->out[w] &= once[w];
  tfe__free(once);
  return TFE_OK;
}

TFE_INTERNAL tfe_status tfe__ein_tree_new(int n, tfe__ein_tree *t) {
  t->n = n;
  t->ch = (int *)tfe__alloc((size_t)(n > 1 ? 2 * (n - 1) : 1) * sizeof(int));
  return t->ch ? TFE_OK : TFE_ERR_ALLOC;
}
TFE_INTERNAL void tfe__ein_tree_free(tfe__ein_tree *t) { tfe__free(t->ch); t->ch = NULL; }

/* Label sets of every node (nodes = 2n-1, each W words) by the reference count rule: after a
 * step a label stays when another live tensor or the output still holds it. */
TFE_INTERNAL tfe_status tfe__ein_tree_labels(const tfe__ein_net *net, const tfe__ein_tree *t, uint64_t *L) {
  int n = net->n, W = net->W;
  int *ref = (int *)tfe__calloc((size_t)net->nlab + 1, sizeof(int));
  if (!ref) return TFE_ERR_ALLOC;
  for (int i = 0; i < n; i++) {
    memcpy(TFE__BS(L, W, i), TFE__BS(net->leaf, W, i), (size_t)W * sizeof(uint64_t));
    for (int w = 0; w < W; w++)
      for (uint64_t x = TFE__BS(net->leaf, W, i)[w]; x; x &= x - 1) ref[w * 64 + __builtin_ctzll(x)]++;
  }
  for (int w = 0; w < W; w++)
    for (uint64_t x = net->out[w]; x; x &= x - 1) ref[w * 64 + __builtin_ctzll(x)]++;
  for (int k = 0; k + 1 < n; k++) {
    const uint64_t *a = TFE__BS(L, W, t->ch[2 * k]), *b = TFE__BS(L, W, t->ch[2 * k + 1]);
    uint64_t *r = TFE__BS(L, W, n + k);
    for (int w = 0; w < W; w++) {
      r[w] = a[w] | b[w];
      for (uint64_t x = a[w] & b[w]; x; x &= x - 1) {
        int l = w * 64 + __builtin_ctzll(x);
        if (--ref[l] <= 1) { r[w] &= ~(1ULL << (l & 63)); ref[l] = 0; }
      }
    }
  }
  tfe__free(ref);
  return TFE_OK;
}

/* Cost of a tree (sliced labels, if any, count as size 1 with `slices` repetitions). */
TFE_INTERNAL tfe_status tfe__ein_tree_cost(const tfe__ein_net *net, const tfe__ein_tree *t,
                                          double write_weight, tfe_einsum_cost *c, double *score) {
  int n = net->n, W = net->W;
  memset(c, 0, sizeof *c);
  c->slices = 1;
  if (n < 2) { c->log10_flops = 0; if (score) *score = 0; return TFE_OK; }
  uint64_t *L = (uint64_t *)tfe__alloc((size_t)(2 * n - 1) * (size_t)W * sizeof(uint64_t));
  uint64_t *u = (uint64_t *)tfe__alloc((size_t)W * sizeof(uint64_t));
  tfe_status st = (!L || !u) ? TFE_ERR_ALLOC : tfe__ein_tree_labels(net, t, L);
  if (st == TFE_OK) {
    for (int k = 0; k + 1 < n; k++) {
      const uint64_t *a = TFE__BS(L, W, t->ch[2 * k]), *b = TFE__BS(L, W, t->ch[2 * k + 1]);
      for (int w = 0; w < W; w++) u[w] = a[w] | b[w];
      c->flops += exp2(tfe__bs_log2(u, W, net->lsize));
      const uint64_t *r = TFE__BS(L, W, n + k);
      double ls = tfe__bs_log2(r, W, net->lsize);
      c->writes += exp2(ls);
      if (ls > c->log2_size) c->log2_size = ls;
      if (k + 2 < n && ls > c->log2_inter) c->log2_inter = ls; /* the root is the output */
      int rk = tfe__bs_count(r, W);
      if (rk > c->max_rank) c->max_rank = rk;
    }
    c->log10_flops = c->flops > 0 ? log10(c->flops) : 0;
    if (score) *score = c->flops + write_weight * c->writes;
  }
  tfe__free(L); tfe__free(u);
  return st;
}

/* ---- given paths ------------------------------------------------------------------------------ */
/* Converts a path (pairs) in the linear or SSA format into a tree over n tensors. */
TFE_INTERNAL tfe_status tfe__ein_path_to_tree(int n, int nsteps, const int *path, tfe_path_format fmt,
                                              tfe__ein_tree *t) {
  if (nsteps != (n > 0 ? n - 1 : 0))
    return TFE_FAIL(TFE_ERR_INVALID, "the path has %d steps but %d operands need %d", nsteps, n, n > 0 ? n - 1 : 0);
  if (nsteps > 0 && !path) return TFE_FAIL(TFE_ERR_NULL, "argument 'path' is NULL");
  TFE_TRY(tfe__ein_tree_new(n, t));
  int *live = (int *)tfe__alloc((size_t)(2 * n + 1) * sizeof(int)); /* linear: position -> id; SSA: used flags */
  if (!live) { tfe__ein_tree_free(t); return TFE_ERR_ALLOC; }
  int m = n;
  if (fmt == TFE_PATH_LINEAR) for (int i = 0; i < n; i++) live[i] = i;
  else memset(live, 0, (size_t)(2 * n + 1) * sizeof(int));
  for (int k = 0; k < nsteps; k++) {
    int i = path[2 * k], j = path[2 * k + 1];
    int lim = fmt == TFE_PATH_LINEAR ? m : n + k;
    if (i < 0 || j < 0 || i >= lim || j >= lim || i == j) {
      tfe__free(live); tfe__ein_tree_free(t);
      return TFE_FAIL(TFE_ERR_INVALID, "path step %d: pair (%d, %d) is not two distinct operands of the %d available",
                      k, i, j, lim);
    }
    if (fmt == TFE_PATH_LINEAR) {
      t->ch[2 * k] = live[i]; t->ch[2 * k + 1] = live[j];
      int hi = i > j ? i : j, lo = i > j ? j : i, w = 0;
      for (int q = 0; q < m; q++) if (q != hi && q != lo) live[w++] = live[q];
      live[w] = n + k;
      m--;
    } else {
      if (live[i] || live[j]) {
        int used = live[i] ? i : j;
        tfe__free(live); tfe__ein_tree_free(t);
        return TFE_FAIL(TFE_ERR_INVALID, "path step %d: operand %d was already contracted", k, used);
      }
      live[i] = live[j] = 1;
      t->ch[2 * k] = i; t->ch[2 * k + 1] = j;
    }
  }
  tfe__free(live);
  return TFE_OK;
}

TFE_INTERNAL bool tfe__ein_heap_push(tfe__ein_heap *h, tfe__ein_cand c) {
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 256;
    tfe__ein_cand *a = (tfe__ein_cand *)tfe__alloc((size_t)cap * sizeof *a);
    if (!a) return false;
    if (h->n) memcpy(a, h->a, (size_t)h->n * sizeof *a);
    tfe__free(h->a); h->a = a; h->cap = cap;
  }
  int k = h->n++;
  while (k > 0 && h->a[(k - 1) / 2].key > c.key) { h->a[k] = h->a[(k - 1) / 2]; k = (k - 1) / 2; }
  h->a[k] = c;
  return true;
}
TFE_INTERNAL tfe__ein_cand tfe__ein_heap_pop(tfe__ein_heap *h) {
  tfe__ein_cand top = h->a[0], last = h->a[--h->n];
  int k = 0;
  for (;;) {
    int c = 2 * k + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->a[c + 1].key < h->a[c].key) c++;
    if (h->a[c].key >= last.key) break;
    h->a[k] = h->a[c]; k = c;
  }
  if (h->n) h->a[k] = last;
  return top;
}

/* Label set of the result of contracting i and j (into g->tmp); returns its log2 size. */
TFE_INTERNAL double tfe__ein_gresult(tfe__ein_gstate *g, int i, int j) {
  int W = g->net->W;
  const uint64_t *a = TFE__BS(g->L, W, i), *b = TFE__BS(g->L, W, j);
  for (int w = 0; w < W; w++) {
    g->tmp[w] = a[w] | b[w];
    for (uint64_t x = a[w] & b[w]; x; x &= x - 1) {
      int l = w * 64 + __builtin_ctzll(x);
      if (g->ref[l] <= 2) g->tmp[w] &= ~(1ULL << (l & 63));
    }
  }
  return tfe__bs_log2(g->tmp, W, g->net->lsize);
}
TFE_INTERNAL double tfe__ein_gkey(tfe__ein_gstate *g, int i, int j) {
  double lr = tfe__ein_gresult(g, i, j);
  double key = exp2(lr) - g->alpha * (exp2(g->ls[i]) + exp2(g->ls[j]));
  if (g->temp > 0) { /* Gumbel noise scaled by the result size: a Boltzmann choice */
    double u = tfe__rng_unif(&g->rng);
    if (u < 1e-300) u = 1e-300;
    key -= g->temp * exp2(lr) * -log(-log(u) + 1e-300);
  }
  return key;
}
/* Performs step k: contracts i and j into node n+k. */
TFE_INTERNAL void tfe__ein_gmerge(tfe__ein_gstate *g, tfe__ein_tree *t, int k, int i, int j) {
  int W = g->net->W, n = g->net->n, r = n + k;
  const uint64_t *a = TFE__BS(g->L, W, i), *b = TFE__BS(g->L, W, j);
  uint64_t *o = TFE__BS(g->L, W, r);
  for (int w = 0; w < W; w++) {
    o[w] = a[w] | b[w];
    for (uint64_t x = a[w] & b[w]; x; x &= x - 1) {
      int l = w * 64 + __builtin_ctzll(x);
      if (--g->ref[l] <= 1) { o[w] &= ~(1ULL << (l & 63)); g->ref[l] = 0; }
    }
  }
  g->ls[r] = tfe__bs_log2(o, W, g->net->lsize);
  g->alive[i] = g->alive[j] = false;
  g->alive[r] = true;
  t->ch[2 * k] = i; t->ch[2 * k + 1] = j;
}

/* One greedy run: always the cheapest candidate pair among tensors sharing a label, then outer
 * products of the smallest remaining tensors. */
TFE_INTERNAL tfe_status tfe__ein_greedy_run(const tfe__ein_net *net, double alpha, double temp, uint64_t seed,
                                            tfe__ein_tree *t, double until, bool *cut) {
  int n = net->n, W = net->W, N = 2 * n - 1;
  tfe__ein_gstate g;
  memset(&g, 0, sizeof g);
  g.net = net; g.alpha = alpha; g.temp = temp; g.rng.s = seed;
  g.L = (uint64_t *)tfe__alloc(((size_t)N + 1) * (size_t)W * sizeof(uint64_t));
  g.ls = (double *)tfe__alloc((size_t)N * sizeof(double));
  g.ref = (int *)tfe__calloc((size_t)net->nlab + 1, sizeof(int));
  g.alive = (bool *)tfe__calloc((size_t)N, sizeof(bool));
  tfe__ein_heap h = {NULL, 0, 0};
  tfe_status st = TFE_OK;
  if (!g.L || !g.ls || !g.ref || !g.alive) { st = TFE_ERR_ALLOC; goto done; }
  g.tmp = TFE__BS(g.L, W, N);
  for (int i = 0; i < n; i++) {
    memcpy(TFE__BS(g.L, W, i), TFE__BS(net->leaf, W, i), (size_t)W * sizeof(uint64_t));
    g.ls[i] = tfe__bs_log2(TFE__BS(g.L, W, i), W, net->lsize);
    g.alive[i] = true;
    for (int w = 0; w < W; w++)
      for (uint64_t x = TFE__BS(g.L, W, i)[w]; x; x &= x - 1) g.ref[w * 64 + __builtin_ctzll(x)]++;
  }
  for (int w = 0; w < W; w++)
    for (uint64_t x = net->out[w]; x; x &= x - 1) g.ref[w * 64 + __builtin_ctzll(x)]++;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (tfe__bs_meet_but(TFE__BS(g.L, W, i), TFE__BS(g.L, W, j), net->out, W)) {
        tfe__ein_cand c = {tfe__ein_gkey(&g, i, j), i, j};
        if (!tfe__ein_heap_push(&h, c)) { st = TFE_ERR_ALLOC; goto done; }
      }
  tfe__ts.ein_work += 0.0625 * (double)n * (double)n * W; /* the scans, on the planning clock (tfe__bs_log2) */
  int k = 0;
  *cut = false;
  for (int it = 1; h.n > 0 && k + 1 < n; it++) {
    if (until > 0 && (it & 63) == 0 && tfe__ein_pclock() > until) { *cut = true; goto done; }
    tfe__ein_cand c = tfe__ein_heap_pop(&h);
    if (!g.alive[c.i] || !g.alive[c.j]) continue;
    if (g.temp == 0) { /* costs change as holders merge: re-queue stale keys */
      double key = tfe__ein_gkey(&g, c.i, c.j);
      if (key > c.key + 1e-9 * fabs(c.key)) {
        c.key = key;
        if (!tfe__ein_heap_push(&h, c)) { st = TFE_ERR_ALLOC; goto done; }
        continue;
      }
    }
    tfe__ein_gmerge(&g, t, k, c.i, c.j);
    int r = n + k++;
    for (int q = 0; q < r; q++)
      if (g.alive[q] && tfe__bs_meet_but(TFE__BS(g.L, W, q), TFE__BS(g.L, W, r), net->out, W)) {
        tfe__ein_cand d = {tfe__ein_gkey(&g, q, r), q, r};
        if (!tfe__ein_heap_push(&h, d)) { st = TFE_ERR_ALLOC; goto done; }
      }
    tfe__ts.ein_work += 0.125 * (double)r * W;
  }
  while (k + 1 < n) { /* parts linked by output labels only, or not at all: the pair with the
                         smallest result (a batched product before an outer product), ties and
                         more than 256 parts: the two smallest */
    int a = -1, b = -1, m = 0;
    for (int q = 0; q < n + k; q++) {
      if (!g.alive[q]) continue;
      m++;
      if (a < 0 || g.ls[q] < g.ls[a]) { b = a; a = q; }
      else if (b < 0 || g.ls[q] < g.ls[b]) b = q;
    }
    if (m <= 256) {
      double best = tfe__ein_gresult(&g, a, b);
      for (int q = 0; q < n + k; q++)
        for (int r = q + 1; g.alive[q] && r < n + k; r++) {
          if (!g.alive[r]) continue;
          double lr = tfe__ein_gresult(&g, q, r);
          if (lr < best - 1e-9) { best = lr; a = q; b = r; }
        }
    }
    tfe__ein_gmerge(&g, t, k++, a, b);
  }
done:
  tfe__free(g.L); tfe__free(g.ls); tfe__free(g.ref); tfe__free(g.alive); tfe__free(h.a);
  return st;
}

/* Greedy over labels instead of pairs (variable elimination, min-size rule): repeatedly pick
 * the label whose holders, merged, make the smallest contraction (with Gumbel noise when
 * temp > 0), merge its holders smallest first, and finish with the smallest pairs. Strong on
 * graphical models and lattices, where pair-greedy walks into huge intermediates. */
/* until: a tfe__ein_pclock() time after which the run gives up (*cut set, t unfinished); 0: none. */
TFE_INTERNAL tfe_status tfe__ein_elim_run(const tfe__ein_net *net, double temp, uint64_t seed, tfe__ein_tree *t,
                                          double until, bool *cut) {
  int n = net->n, W = net->W, N = 2 * n - 1;
  tfe__ein_gstate g;
  memset(&g, 0, sizeof g);
  g.net = net; g.rng.s = seed;
  g.L = (uint64_t *)tfe__alloc(((size_t)N + 2) * (size_t)W * sizeof(uint64_t));
  g.ls = (double *)tfe__alloc((size_t)N * sizeof(double));
  g.ref = (int *)tfe__calloc((size_t)net->nlab + 1, sizeof(int));
  g.alive = (bool *)tfe__calloc((size_t)N, sizeof(bool));
  int *hold = (int *)tfe__alloc((size_t)N * sizeof(int));
  tfe_status st = TFE_OK;
  if (!g.L || !g.ls || !g.ref || !g.alive || !hold) { st = TFE_ERR_ALLOC; goto done; }
  g.tmp = TFE__BS(g.L, W, N);
  uint64_t *u = TFE__BS(g.L, W, N + 1);
  for (int i = 0; i < n; i++) {
    memcpy(TFE__BS(g.L, W, i), TFE__BS(net->leaf, W, i), (size_t)W * sizeof(uint64_t));
    g.ls[i] = tfe__bs_log2(TFE__BS(g.L, W, i), W, net->lsize);
    g.alive[i] = true;
    for (int w = 0; w < W; w++)
      for (uint64_t x = TFE__BS(g.L, W, i)[w]; x; x &= x - 1) g.ref[w * 64 + __builtin_ctzll(x)]++;
  }
  for (int w = 0; w < W; w++)
    for (uint64_t x = net->out[w]; x; x &= x - 1) g.ref[w * 64 + __builtin_ctzll(x)]++;
  int k = 0;
  *cut = false;
  for (int it = 1; k + 1 < n; it++) {
    if (until > 0 && (it & 3) == 0 && tfe__ein_pclock() > until) { *cut = true; break; }
    int bestl = -1;
    double bestc = INFINITY;
    for (int l = 0; l < net->nlab; l++) {
      if (g.ref[l] < 2 || tfe__bs_test(net->out, l)) continue; /* only summed labels held twice+ */
      memset(u, 0, (size_t)W * sizeof(uint64_t));
      for (int q = 0; q < n + k; q++)
        if (g.alive[q] && tfe__bs_test(TFE__BS(g.L, W, q), l))
          for (int w = 0; w < W; w++) u[w] |= TFE__BS(g.L, W, q)[w];
      tfe__ts.ein_work += 0.125 * (double)(n + k); /* the scan, on the planning clock (tfe__bs_log2) */
      double c = tfe__bs_log2(u, W, net->lsize);
      if (temp > 0) { double r = tfe__rng_unif(&g.rng); c -= temp * log(-log(r > 1e-300 ? r : 1e-300)); }
      if (c < bestc) { bestc = c; bestl = l; }
    }
    int nh = 0;
    for (int q = 0; q < n + k; q++)
      if (g.alive[q] && (bestl < 0 || tfe__bs_test(TFE__BS(g.L, W, q), bestl))) hold[nh++] = q;
    while (nh >= 2 && k + 1 < n) { /* merge the holders, smallest two first */
      int a = 0, b = 1;
      if (g.ls[hold[b]] < g.ls[hold[a]]) { a = 1; b = 0; }
      for (int q = 2; q < nh; q++) {
        if (g.ls[hold[q]] < g.ls[hold[a]]) { b = a; a = q; }
        else if (g.ls[hold[q]] < g.ls[hold[b]]) b = q;
      }
      tfe__ein_gmerge(&g, t, k, hold[a], hold[b]);
      hold[a] = n + k++;
      hold[b] = hold[--nh];
    }
  }
done:
  tfe__free(g.L); tfe__free(g.ls); tfe__free(g.ref); tfe__free(g.alive); tfe__free(hold);
  return st;
}

/* The planning time TFE_PATH_AUTO allows itself (docs/einsum.md, "Planning time"): a share of
 * the estimated contraction time of the best tree so far (work = multiply-adds + elements
 * written, at einsum_plan_rate per second), at least einsum_plan_floor, at most cap. */
TFE_INTERNAL double tfe__ein_allow(const tfe__ein_net *net, double work, double cap) {
  const tfe_tuning *tu = &tfe__st.tune;
  int th = tfe_get_num_threads();
  double share = net->tshare > 0 ? net->tshare : 1, floor = tu->einsum_plan_floor * share;
  double a = tu->einsum_plan_fraction * work / (tu->einsum_plan_rate * (th > 1 ? th : 1));
  if (!(a >= floor)) a = floor;
  return a < cap * share ? a : cap * share;
}

/* Best of several greedy runs by score; writes the best tree into t (allocated by caller). */
/* Runs at least greedy_trials runs, and more until `until` (a tfe__ein_pclock() time; 0: none).
 * share > 0 (TFE_PATH_AUTO with a budget): at least two runs, then more while the time since
 * t0 is below share * tfe__ein_allow(best so far, cap); a run past that time is cut short. */
TFE_INTERNAL tfe_status tfe__ein_greedy(const tfe__ein_net *net, const tfe_einsum_opts *o, tfe__ein_tree *t,
                                       double *best_score, double until, double share, double t0, double cap) {
  int trials = share > 0 ? 1 : o->greedy_trials > 0 ? o->greedy_trials : 8;
  double alpha = o->greedy_alpha > 0 ? o->greedy_alpha : 1.0, temp = o->greedy_temp > 0 ? o->greedy_temp : 0.3;
  tfe__rng rng = {o->seed ? o->seed : 0x5eed};
  tfe__ein_tree cur;
  TFE_TRY(tfe__ein_tree_new(net->n, &cur));
  /* Batch labels (output labels held by three or more tensors) make every pair that holds them
   * look alike to the greedy score and hide the contraction structure (a language model's
   * sentence batch): one run plans as if their size were 1, and is costed as it is. */
  tfe__ein_net nob = *net;
  double *lsz = (double *)tfe__alloc((size_t)(net->nlab + 1) * sizeof(double));
  if (!lsz) { tfe__ein_tree_free(&cur); return TFE_ERR_ALLOC; }
  bool batch = false;
  for (int l = 0; l < net->nlab; l++) {
    lsz[l] = net->lsize[l];
    if (!tfe__bs_test(net->out, l) || net->lsize[l] <= 0) continue;
    int h = 0;
    for (int i = 0; i < net->n && h < 3; i++) h += tfe__bs_test(TFE__BS(net->leaf, net->W, i), l);
    if (h >= 3) { lsz[l] = 0; batch = true; }
  }
  nob.lsize = lsz;
  if (batch) trials++;
  double best = INFINITY, stop = 0;
  tfe_status st = TFE_OK;
  for (int r = batch ? -1 : 0; (r < trials - batch || (until > 0 && tfe__ein_pclock() < until) || (share > 0 && tfe__ein_pclock() < stop)) &&
                               st == TFE_OK;
       r++) {
    /* run 0: deterministic with the given alpha; 1: alpha 0 (pure size); then randomized
     * (alpha uniform in [0, 2 alpha], temperature log-uniform up to 3 temp) */
    double a = r == 0 ? alpha : r == 1 ? 0.0 : alpha * tfe__rng_unif(&rng) * 2.0;
    double tp = r < 2 ? 0.0 : temp * 3.0 * exp(-5.0 * tfe__rng_unif(&rng));
    bool cut = false;
    double lim = r >= trials - batch || (share > 0 && r > 0) ? (share > 0 ? stop : until) : 0;
    st = r < 0 ? tfe__ein_greedy_run(&nob, alpha, 0, 1, &cur, 0, &cut)
       : (r % 2 == 1 && r > 1) ? tfe__ein_elim_run(net, r == 3 ? 0.0 : 2.0 * tfe__rng_unif(&rng), tfe__rng_next(&rng), &cur,
                                                   lim, &cut)
                                : tfe__ein_greedy_run(batch && r > 1 ? &nob : net, a, tp, tfe__rng_next(&rng), &cur, lim, &cut);
    if (st != TFE_OK) break;
    if (cut) continue;
    tfe_einsum_cost c;
    double s;
    st = tfe__ein_tree_cost(net, &cur, o->write_weight, &c, &s);
    if (st == TFE_OK && s < best) {
      best = s;
      if (net->n > 1) memcpy(t->ch, cur.ch, (size_t)(2 * (net->n - 1)) * sizeof(int));
      if (share > 0) stop = t0 + share * tfe__ein_allow(net, c.flops + c.writes, cap);
    }
  }
  tfe__ein_tree_free(&cur);
  tfe__free(lsz);
  if (best_score) *best_score = best;
  return st;
}

TFE_INTERNAL tfe_status tfe__ein_dp(const tfe__ein_net *net, double write_weight, tfe__ein_tree *t) {
  int n = net->n, W = net->W;
  if (n > TFE_EIN_DP_LIMIT)
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "exact DP handles at most %d operands per group (got %d)", TFE_EIN_DP_LIMIT, n);
  if (n < 2) return TFE_OK;
  size_t S = (size_t)1 << n;
  uint64_t *U = (uint64_t *)tfe__alloc(S * (size_t)W * sizeof(uint64_t));   /* union of labels */
  uint64_t *Lo = (uint64_t *)tfe__alloc(S * (size_t)W * sizeof(uint64_t));  /* open labels */
  double *best = (double *)tfe__alloc(S * sizeof(double));
  double *lsz = (double *)tfe__alloc(S * sizeof(double));
  uint32_t *split = (uint32_t *)tfe__alloc(S * sizeof(uint32_t));
  uint64_t *u = (uint64_t *)tfe__alloc((size_t)W * sizeof(uint64_t));
  uint32_t *stack = (uint32_t *)tfe__alloc((size_t)(2 * n) * sizeof(uint32_t));
  tfe_status st = TFE_OK;
  if (!U || !Lo || !best || !lsz || !split || !u || !stack) { st = TFE_ERR_ALLOC; goto done; }
  memset(U, 0, (size_t)W * sizeof(uint64_t));
  for (size_t m = 1; m < S; m++) {
    int low = __builtin_ctzll(m);
    for (int w = 0; w < W; w++) TFE__BS(U, W, m)[w] = TFE__BS(U, W, m & (m - 1))[w] | TFE__BS(net->leaf, W, low)[w];
  }
  for (size_t m = 1; m < S; m++) {
    const uint64_t *in = TFE__BS(U, W, m), *outside = TFE__BS(U, W, (S - 1) ^ m);
    for (int w = 0; w < W; w++) TFE__BS(Lo, W, m)[w] = in[w] & (outside[w] | net->out[w]);
    lsz[m] = tfe__bs_log2(TFE__BS(Lo, W, m), W, net->lsize);
    best[m] = (m & (m - 1)) == 0 ? 0.0 : INFINITY;
    split[m] = 0;
  }
  for (int pass = 0; pass < 2; pass++) { /* pass 1 allows outer products if pass 0 left gaps */
    for (size_t m = 3; m < S; m++) {
      if ((m & (m - 1)) == 0 || (pass == 1 && best[m] < INFINITY)) continue;
      uint32_t low = (uint32_t)(m & (~m + 1)), rest = (uint32_t)m ^ low;
      /* submasks a containing the lowest bit; b = m ^ a */
      for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
        uint32_t a = sub | low, b = (uint32_t)m ^ a;
        if (b != 0 && best[a] < INFINITY && best[b] < INFINITY) {
          const uint64_t *la = TFE__BS(Lo, W, a), *lb = TFE__BS(Lo, W, b);
          if (pass == 1 || tfe__bs_meet(la, lb, W)) {
            for (int w = 0; w < W; w++) u[w] = la[w] | lb[w];
            double c = best[a] + best[b] + exp2(tfe__bs_log2(u, W, net->lsize));
            if ((size_t)m != S - 1) c += write_weight * exp2(lsz[m]);
            if (c < best[m]) { best[m] = c; split[m] = a; }
          }
        }
        if (sub == 0) break;
      }
    }
    if (best[S - 1] < INFINITY) break;
  }
  /* Emit the tree bottom-up: post-order over the split table. */
  {
    int k = 0, sp = 0;
    int *id = (int *)tfe__alloc(S * sizeof(int));
    if (!id) { st = TFE_ERR_ALLOC; goto done; }
    for (size_t q = 0; q < S; q++) id[q] = -1;
    for (int i = 0; i < n; i++) id[(size_t)1 << i] = i;
    stack[sp++] = (uint32_t)(S - 1);
    while (sp) { /* iterative post-order: a mask is emitted once both halves have ids */
      uint32_t m = stack[sp - 1], a = split[m], b = m ^ a;
      if (id[a] < 0) { stack[sp++] = a; continue; }
      if (id[b] < 0) { stack[sp++] = b; continue; }
      t->ch[2 * k] = id[a]; t->ch[2 * k + 1] = id[b];
      id[m] = n + k++;
      sp--;
    }
    tfe__free(id);
  }
done:
  tfe__free(U); tfe__free(Lo); tfe__free(best); tfe__free(lsz); tfe__free(split); tfe__free(u); tfe__free(stack);
  return st;
}
/* ---- exact DP over the intervals of a leaf order -------------------------------------------------- */
/* The cheapest tree (score: multiply-adds + write_weight * elements written) among those whose
 * every intermediate holds a contiguous run of the leaf order ord[0..n) (a permutation of the
 * tensors), by dynamic programming over intervals: O(n^3) splits. Every tree is among the trees of
 * its own in-order (the leaves left to right), so re-solving a tree over its in-order cannot lose;
 * the winner may differ from it everywhere (a chain contracted from the other end has the same
 * in-order). Pairs that share no label are allowed (costed as the outer products they are).
 * Writes the tree into t (n >= 2) and its score into *score (may be NULL). Scratch: about
 * n^2 * (W + 3) words, allocated here. */
TFE_INTERNAL tfe_status tfe__ein_order_dp(const tfe__ein_net *net, double write_weight, const int *ord, tfe__ein_tree *t,
                                          double *score) {
  int n = net->n, W = net->W;
  if (n < 2) { if (score) *score = 0; return TFE_OK; }
  size_t N2 = (size_t)n * (size_t)n;
  uint64_t *open = (uint64_t *)tfe__alloc((N2 + 2 * (size_t)(n + 1) + 1) * (size_t)W * sizeof(uint64_t));
  double *best = (double *)tfe__alloc(2 * N2 * sizeof(double));
  int *split = (int *)tfe__alloc(2 * N2 * sizeof(int));
  tfe_status st = TFE_OK;
  if (!open || !best || !split) { st = TFE_ERR_ALLOC; goto done; }
  {
    uint64_t *pre = open + N2 * (size_t)W, *suf = pre + (size_t)(n + 1) * (size_t)W, *u = suf + (size_t)(n + 1) * (size_t)W;
    double *lso = best + N2; /* log2 size of each interval's open labels */
    /* pre[i]: labels of ord[0..i), suf[j]: labels of ord[j..n) */
    memset(pre, 0, (size_t)W * 8); memset(TFE__BS(suf, W, n), 0, (size_t)W * 8);
    for (int i = 0; i < n; i++)
      for (int w = 0; w < W; w++) TFE__BS(pre, W, i + 1)[w] = TFE__BS(pre, W, i)[w] | TFE__BS(net->leaf, W, ord[i])[w];
    for (int j = n - 1; j >= 0; j--)
      for (int w = 0; w < W; w++) TFE__BS(suf, W, j)[w] = TFE__BS(suf, W, j + 1)[w] | TFE__BS(net->leaf, W, ord[j])[w];
#define TFE__IV(i, j) ((size_t)(i) * (size_t)n + (size_t)(j))
    for (int i = 0; i < n; i++) { /* open labels of every interval [i, j] */
      for (int w = 0; w < W; w++) u[w] = 0;
      for (int j = i; j < n; j++) {
        uint64_t *o = TFE__BS(open, W, TFE__IV(i, j));
        for (int w = 0; w < W; w++) {
          u[w] |= TFE__BS(net->leaf, W, ord[j])[w];
          o[w] = u[w] & (TFE__BS(pre, W, i)[w] | TFE__BS(suf, W, j + 1)[w] | net->out[w]);
        }
        lso[TFE__IV(i, j)] = tfe__bs_log2(o, W, net->lsize);
        best[TFE__IV(i, j)] = i == j ? 0 : INFINITY;
      }
    }
    for (int len = 2; len <= n; len++)
      for (int i = 0; i + len <= n; i++) {
        int j = i + len - 1;
        double bc = INFINITY;
        int bk = i;
        for (int k = i; k < j; k++) {
          double c = best[TFE__IV(i, k)] + best[TFE__IV(k + 1, j)];
          if (!(c < bc)) continue;
          const uint64_t *oa = TFE__BS(open, W, TFE__IV(i, k)), *ob = TFE__BS(open, W, TFE__IV(k + 1, j));
          for (int w = 0; w < W; w++) u[w] = oa[w] & ob[w]; /* |a u b| = |a| |b| / |a n b| */
          c += exp2(lso[TFE__IV(i, k)] + lso[TFE__IV(k + 1, j)] - tfe__bs_log2(u, W, net->lsize));
          if (c < bc) { bc = c; bk = k; }
        }
        if (len < n) bc += write_weight * exp2(lso[TFE__IV(i, j)]);
        best[TFE__IV(i, j)] = bc; split[TFE__IV(i, j)] = bk;
      }
    if (score) *score = best[TFE__IV(0, n - 1)];
    /* emit post-order: an explicit stack of intervals; fin[] the id of each finished interval */
    int *stk = split + N2, *fin = (int *)lso; /* lso is no longer needed: N2 doubles hold N2 ints */
    int sp = 0, k = 0;
    for (size_t q = 0; q < N2; q++) fin[q] = -1;
    for (int i = 0; i < n; i++) fin[TFE__IV(i, i)] = ord[i];
    stk[sp++] = 0; stk[sp++] = n - 1;
    while (sp) {
      int i = stk[sp - 2], j = stk[sp - 1], m = split[TFE__IV(i, j)];
      if (fin[TFE__IV(i, m)] < 0) { stk[sp++] = i; stk[sp++] = m; continue; }
      if (fin[TFE__IV(m + 1, j)] < 0) { stk[sp++] = m + 1; stk[sp++] = j; continue; }
      t->ch[2 * k] = fin[TFE__IV(i, m)]; t->ch[2 * k + 1] = fin[TFE__IV(m + 1, j)];
      fin[TFE__IV(i, j)] = n + k++;
      sp -= 2;
    }
#undef TFE__IV
  }
done:
  tfe__free(open); tfe__free(best); tfe__free(split);
  return st;
}
/* The leaves of tree t left to right (children in stored order) into ord[0..n); stk: 2n ints. */
TFE_INTERNAL void tfe__ein_tree_order(const tfe__ein_tree *t, int *ord, int *stk) {
  int n = t->n, m = 0, sp = 0;
  if (n < 2) { if (n == 1) ord[0] = 0; return; }
  stk[sp++] = 2 * n - 2;
  while (sp) {
    int v = stk[--sp];
    if (v < n) { ord[m++] = v; continue; }
    stk[sp++] = t->ch[2 * (v - n) + 1]; stk[sp++] = t->ch[2 * (v - n)];
  }
}

/* ---- chains -------------------------------------------------------------------------------------- */
/* When the tensors form a path (every label not in the output is held by exactly two tensors,
 * and these pairs link the tensors in one line: a matrix chain, a batched chain, an MPS
 * contracted against vectors), the trees that never multiply non-neighbours (outer products)
 * contract intervals of that line; the best of them is found exactly in O(n^3) by the interval
 * DP over that line (tfe__ein_order_dp). Sets *done when it applied (n <= TFE_EIN_CHAIN_MAX). */
#define TFE_EIN_CHAIN_MAX 400
TFE_INTERNAL tfe_status tfe__ein_chain_dp(const tfe__ein_net *net, double write_weight, tfe__ein_tree *t, bool *done) {
  int n = net->n, W = net->W;
  *done = false;
  if (n < 3 || n > TFE_EIN_CHAIN_MAX) return TFE_OK;
  int *hold = (int *)tfe__alloc((size_t)(2 * net->nlab + 4 * n + 2) * sizeof(int));
  if (!hold) return TFE_ERR_ALLOC;
  int *nb = hold + 2 * net->nlab, *deg = nb + 2 * n, *ord = deg + n; /* nb: 2 neighbours per tensor */
  for (int l = 0; l < net->nlab; l++) hold[2 * l] = hold[2 * l + 1] = -1;
  for (int i = 0; i < n; i++) { deg[i] = 0; nb[2 * i] = nb[2 * i + 1] = -1; }
  bool ok = true;
  for (int i = 0; ok && i < n; i++)
    for (int w = 0; ok && w < W; w++)
      for (uint64_t x = TFE__BS(net->leaf, W, i)[w] & ~net->out[w]; ok && x; x &= x - 1) {
        int l = w * 64 + __builtin_ctzll(x);
        if (hold[2 * l] < 0) hold[2 * l] = i;
        else if (hold[2 * l + 1] < 0) hold[2 * l + 1] = i;
        else ok = false; /* a hyperedge */
      }
  for (int l = 0; ok && l < net->nlab; l++) { /* each label links two tensors: record the edge once */
    int a = hold[2 * l], b = hold[2 * l + 1];
    if (a < 0 || b < 0) continue;
    if (nb[2 * a] == b || nb[2 * a + 1] == b) continue;
    if (deg[a] == 2 || deg[b] == 2) { ok = false; break; }
    nb[2 * a + deg[a]++] = b; nb[2 * b + deg[b]++] = a;
  }
  int start = -1;
  for (int i = 0; ok && i < n; i++) if (deg[i] == 1) { start = i; break; }
  if (ok && start >= 0) { /* walk the line; it must visit every tensor */
    int prev = -1, cur = start, m = 0;
    while (cur >= 0 && m < n) {
      ord[m++] = cur;
      int nx = nb[2 * cur] != prev ? nb[2 * cur] : nb[2 * cur + 1];
      prev = cur; cur = nx;
    }
    ok = m == n;
  } else ok = false;
  tfe_status st = ok ? tfe__ein_order_dp(net, write_weight, ord, t, NULL) : TFE_OK;
  *done = ok && st == TFE_OK;
  tfe__free(hold);
  return st;
}
#endif
