/* tenferro/prims_plan.h — prims room: the kind-independent contraction planner.
 *
 * A plan turns the label table of a binary contraction into one (batched) GEMM:
 *   batch   labels in A, B and C      -> loop (parallel when the GEMMs are small)
 *   M       labels in A and C only    -> rows of A and C, fused into one dimension
 *   N       labels in B and C only    -> columns of B and C
 *   K       labels in A and B only    -> contracted
 *   summed  labels in one input only  -> reduced away first (into a dense temporary)
 * A group of labels fuses into one GEMM dimension only when, in the group's chosen order,
 * every stride equals the previous stride times the previous size, in EVERY operand that
 * carries the group (the check that `jk,kj->` and `ijk,kjl->il` with transposed inputs need).
 * An operand that cannot be addressed that way is copied into a dense temporary laid out
 * [M|K|batch] (A), [K|N|batch] (B) or [M|N|batch] (C); nothing else is copied. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_PLAN_H
#define TENFERRO_PRIMS_PLAN_H

#include <tenferro/tensor/tensor.h>

typedef struct tfe__pr_plab {
  int64_t dim;
  uint8_t in;     /* TFE__PR_IN_* */
  int64_t so[3];  /* stride in the operand as given (diagonals folded) */
  int64_t sr[2];  /* stride in the reduced temporary of A / B */
  int64_t sf[3];  /* stride in the operand the GEMM reads */
} tfe__pr_plab;

/* Workspace slots (element offsets into one allocation). */
enum { TFE__PR_WS_RA, TFE__PR_WS_RB, TFE__PR_WS_CA, TFE__PR_WS_CB, TFE__PR_WS_CC, TFE__PR_WS_N };

typedef struct tfe_contract_plan {
  atomic_long refs;
  tfe_dtype dtype;
  bool unary;
  bool naive;     /* empty or tiny problem: the reference engine does it */
  bool c_embed;
  bool red[2];    /* A / B have labels summed away before the GEMM */
  bool copy[3];   /* A / B / C go through a dense temporary */
  bool loop;      /* nloop > 0 */
  int nloop;      /* the last nloop of bl[] are M or N labels looped over to avoid copies */
  bool small;     /* float kinds: tiny GEMMs, run by the small-GEMM path (prims_small_tpl.h) */
  bool small_swap; /* the small path computes C^T = B^T A^T (vectorizes over N) */
  int ng[3];      /* small path: labels in the M, N, K groups, listed in gl[] in that order */
  int16_t gl[TFE__PR_MAXL];
  int64_t m, n, k, nbatch;
  int64_t off[3];        /* element offsets added to A, B, C (reversed labels) */
  int64_t rs[3], cs[3]; /* GEMM row / column strides of A (m x k), B (k x n), C (m x n) */
  int nb;               /* batch labels with size > 1 */
  int16_t bl[TFE__PR_MAXL];
  int64_t ws[TFE__PR_WS_N + 1]; /* offsets; ws[N] = total elements */
  uint64_t hash;
  int nkey;
  int64_t *key;         /* ranks, labels, dims, strides: what the plan was made for */
  int nl;
  tfe__pr_plab lab[];   /* nl entries, then the key */
} tfe_contract_plan;

/* One way to lay out the GEMM: which operands are copied, GEMM sizes and strides, the
 * elements of each copy, and the stride every label has in the operands the GEMM reads. */
typedef struct tfe__pr_lay {
  bool copy[3];
  int64_t m, n, k;
  int64_t rs[3], cs[3], wsz[3];
  int64_t fin[TFE__PR_MAXL][3];
} tfe__pr_lay;

/* Most M / N labels the planner loops over (the search tries this many steps). */
#define TFE__PR_MAXLOOP 4
/* Cost of one extra GEMM call, in copied elements: BLIS's fixed cost plus the lower rate of a
 * small GEMM, about 10-20 us here (a 256x64x64 dgemm runs at about half the rate of a
 * 65536x64x64 one). */
#define TFE__PR_CALL_COST 32768.0

/* ---- the small-GEMM path (float kinds; kernel in prims_small_tpl.h) -------------------------- */
#ifndef TFE__PR_SMALL_MNK
#define TFE__PR_SMALL_MNK 512000
#endif
TFE_API void tfe_contract_plan_retain(tfe_contract_plan *P);
TFE_API void tfe_contract_plan_release(tfe_contract_plan *P);
/* Bytes of temporary memory one execution of the plan allocates. */
TFE_API size_t tfe_contract_plan_workspace(const tfe_contract_plan *P);

/* The process-wide plan cache: TFE_PLAN_CACHE_SIZE entries, chained hash buckets keyed on
 * the full key (kind, ranks, labels, dims, strides), least-recently-used eviction when full.
 * One lock guards it; it is held only for the lookup and the list updates (never while a
 * plan is made or freed), so two threads making the same plan at once both succeed and the
 * first one stored is kept. */
#ifndef TFE_PLAN_CACHE_SIZE
#define TFE_PLAN_CACHE_SIZE 256
#endif
#define TFE__PR_NBUCKET (2 * TFE_PLAN_CACHE_SIZE)
/* Entry indices are stored plus one: 0 means none. */
typedef struct tfe__pr_cent {
  tfe_contract_plan *plan;
  int32_t prev, next; /* LRU list, most recent first */
  int32_t chain;      /* next entry in the same bucket */
} tfe__pr_cent;

int sched_yield(void); /* POSIX; hidden by -std=c11 */
/* Drops every cached plan (plans held by callers stay valid). One entry per lock hold, so
 * plans are freed outside the lock and the stack use does not grow with the capacity. */
TFE_API void tfe_contract_cache_clear(void);
TFE_API void tfe_contract_cache_stats(long *hits, long *misses);
/* Plans cached now, the capacity (TFE_PLAN_CACHE_SIZE) and how many were evicted so far. */
TFE_API void tfe_contract_cache_info(long *entries, long *capacity, long *evictions);

/* ---- workspace pool ------------------------------------------------------------------------ */
/* Big temporaries are fresh pages on every malloc: the page faults cost more than the
 * copies. The last workspace block is kept for the next call (one block, process-wide,
 * lock-free; only with the default allocator: user allocators get every block back at once). tfe_contract_workspace_release()
 * hands it back. */
typedef struct tfe__pr_block {
  size_t bytes;
  tfe_allocator from;
  char pad[64 - sizeof(size_t) - sizeof(tfe_allocator) > 0 ? 64 - sizeof(size_t) - sizeof(tfe_allocator) : 1];
} tfe__pr_block;
/* Frees the cached contraction workspace (it is otherwise kept for the next call). */
TFE_API void tfe_contract_workspace_release(void);

/* ---- describe -> plan ------------------------------------------------------------------- */
/* What a contraction is, without data: kind, layouts (offsets ignored) and labels. */
typedef struct tfe_contract_desc {
  tfe_dtype dtype;
  bool unary; /* no B */
  tfe_layout a, b, c;
  int32_t la[TFE_MAX_RANK], lb[TFE_MAX_RANK], lc[TFE_MAX_RANK];
} tfe_contract_desc;

#define TFE__PR_KEYMAX (5 + 9 * TFE_MAX_RANK)

/* Plans a described contraction. The plan is reusable from any thread and for any data
 * with the same kind, ranks, labels, dims and strides; release it when done. */
TFE_API tfe_status tfe_contract_plan_create(const tfe_contract_desc *d, tfe_contract_plan **out);

#endif
#elif !defined(TENFERRO_PRIMS_PLAN_BODY) /* bodies */
#define TENFERRO_PRIMS_PLAN_BODY
#include <tenferro/tensor/tensor.h>

/* ---- the key: everything a plan depends on ---------------------------------------------- */
TFE_INTERNAL int tfe__pr_key_len(const tfe_layout *A, const tfe_layout *B, const tfe_layout *C) {
  return 5 + 3 * (A->rank + (B ? B->rank : 0) + C->rank);
}
TFE_INTERNAL void tfe__pr_key_fill(int64_t *key, tfe_dtype dt, const tfe_layout *A, const int32_t *la,
                                   const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                   const int32_t *lc) {
  int64_t *k = key;
  *k++ = (int64_t)dt;
  *k++ = A->rank;
  *k++ = B ? B->rank : -1;
  *k++ = C->rank;
  *k++ = 0x7fe; /* format tag */
  const tfe_layout *L[3] = {A, B, C};
  const int32_t *lb_[3] = {la, lb, lc};
  for (int op = 0; op < 3; op++) {
    if (!L[op]) continue;
    for (int i = 0; i < L[op]->rank; i++) {
      *k++ = lb_[op][i];
      *k++ = L[op]->dims[i];
      *k++ = L[op]->strides[i];
    }
  }
}
TFE_INTERNAL uint64_t tfe__pr_key_hash(const int64_t *key, int n) {
  uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < n; i++) {
    h ^= (uint64_t)key[i];
    h *= 1099511628211ULL;
    h ^= h >> 29;
  }
  return h;
}

/* ---- group ordering and fusion ------------------------------------------------------------ */
TFE_INTERNAL int64_t tfe__pr_abs(int64_t x) { return x < 0 ? -x : x; }

/* Sorts label indices g[0..n) by |stride in op| (cur strides), ascending. */
TFE_INTERNAL void tfe__pr_sort(int16_t *g, int n, const tfe__pr_plab *lab, const int64_t (*cur)[3], int op) {
  (void)lab;
  for (int i = 1; i < n; i++) {
    int16_t x = g[i];
    int j = i;
    while (j > 0 && tfe__pr_abs(cur[g[j - 1]][op]) > tfe__pr_abs(cur[x][op])) { g[j] = g[j - 1]; j--; }
    g[j] = x;
  }
}
/* True when the labels g (in this order) fuse into one dimension of operand op. */
TFE_INTERNAL bool tfe__pr_fuses(const int16_t *g, int n, const tfe__pr_plab *lab, const int64_t (*cur)[3], int op) {
  for (int i = 1; i < n; i++)
    if (cur[g[i]][op] != cur[g[i - 1]][op] * lab[g[i - 1]].dim) return false;
  return true;
}

/* Picks the order of a group shared by operands x and y (prefer x's own order). Returns
 * through fx / fy whether each operand fuses in the chosen order. */
TFE_INTERNAL void tfe__pr_order_group(int16_t *g, int n, const tfe__pr_plab *lab, const int64_t (*cur)[3],
                                      int x, int y, bool *fx, bool *fy) {
  int16_t alt[TFE__PR_MAXL];
  memcpy(alt, g, (size_t)n * sizeof *g);
  tfe__pr_sort(g, n, lab, cur, x);
  *fx = tfe__pr_fuses(g, n, lab, cur, x);
  *fy = tfe__pr_fuses(g, n, lab, cur, y);
  if (*fx && *fy) return;
  tfe__pr_sort(alt, n, lab, cur, y);
  bool ax = tfe__pr_fuses(alt, n, lab, cur, x), ay = tfe__pr_fuses(alt, n, lab, cur, y);
  if ((ay && !*fx) || (ax && ay)) {
    memcpy(g, alt, (size_t)n * sizeof *g);
    *fx = ax; *fy = ay;
  }
}

/* Dense strides for a temporary holding the labels of `groups` in order. Returns elements. */
TFE_INTERNAL int64_t tfe__pr_dense(const tfe__pr_plab *lab, int64_t (*dst)[3], int op, const int16_t *const *groups,
                                   const int *counts, int ngroups) {
  int64_t s = 1;
  for (int q = 0; q < ngroups; q++)
    for (int i = 0; i < counts[q]; i++) {
      dst[groups[q][i]][op] = s;
      s *= lab[groups[q][i]].dim;
    }
  return s;
}

/* Lays out groups gm / gn / gk (reordered in place), the batch labels bl and the loop labels
 * xs[0..nx): M or N labels taken out of their groups and looped over like batch labels, so
 * that the other labels of the groups fuse. blas: BLIS's stride restrictions. */
TFE_INTERNAL void tfe__pr_layout(tfe__pr_lay *L, const tfe__pr_plab *lab, int n, const int64_t (*cur)[3],
                                 int16_t *gm, int nm, int16_t *gn, int nn, int16_t *gk, int nk,
                                 const int16_t *bl, int nb, const int16_t *xs, int nx, bool blas) {
  bool cm, am, cn, bn, ak, bk;
  tfe__pr_order_group(gm, nm, lab, cur, 2, 0, &cm, &am);
  tfe__pr_order_group(gn, nn, lab, cur, 2, 1, &cn, &bn);
  tfe__pr_order_group(gk, nk, lab, cur, am ? 0 : 1, am ? 1 : 0, am ? &ak : &bk, am ? &bk : &ak);
  L->copy[0] = !am || !ak;
  L->copy[1] = !bn || !bk;
  L->copy[2] = !cm || !cn;
  L->m = L->n = L->k = 1;
  for (int i = 0; i < nm; i++) L->m *= lab[gm[i]].dim;
  for (int i = 0; i < nn; i++) L->n *= lab[gn[i]].dim;
  for (int i = 0; i < nk; i++) L->k *= lab[gk[i]].dim;
  int16_t xla[TFE__PR_MAXLOOP], xlb[TFE__PR_MAXLOOP];
  int xa = 0, xb = 0;
  for (int i = 0; i < nx; i++) {
    if (lab[xs[i]].in & TFE__PR_IN_A) xla[xa++] = xs[i];
    if (lab[xs[i]].in & TFE__PR_IN_B) xlb[xb++] = xs[i];
  }
  const int16_t *gA[4] = {gm, gk, bl, xla}, *gB[4] = {gk, gn, bl, xlb}, *gC[4] = {gm, gn, bl, xs};
  int cA[4] = {nm, nk, nb, xa}, cB[4] = {nk, nn, nb, xb}, cC[4] = {nm, nn, nb, nx};
  for (int pass = 0; pass < 2; pass++) {
    memcpy(L->fin, cur, (size_t)n * sizeof L->fin[0]);
    for (int op = 0; op < 3; op++) L->wsz[op] = 0;
    if (L->copy[0]) L->wsz[0] = tfe__pr_dense(lab, L->fin, 0, gA, cA, 4);
    if (L->copy[1]) L->wsz[1] = tfe__pr_dense(lab, L->fin, 1, gB, cB, 4);
    if (L->copy[2]) L->wsz[2] = tfe__pr_dense(lab, L->fin, 2, gC, cC, 4);
    /* leading strides of the fused groups; an empty row group has stride 1, an empty
     * column group the stride a column-major matrix would have */
    L->rs[0] = nm ? L->fin[gm[0]][0] : 1; L->rs[1] = nk ? L->fin[gk[0]][1] : 1; L->rs[2] = nm ? L->fin[gm[0]][2] : 1;
    int64_t rows[3] = {L->m, L->k, L->m};
    L->cs[0] = nk ? L->fin[gk[0]][0] : tfe__pr_abs(L->rs[0]) * rows[0];
    L->cs[1] = nn ? L->fin[gn[0]][1] : tfe__pr_abs(L->rs[1]) * rows[1];
    L->cs[2] = nn ? L->fin[gn[0]][2] : tfe__pr_abs(L->rs[2]) * rows[2];
    /* An operand without a unit stride (e.g. column-major bij with the batch label first) is
     * gathered a cache line per element by the GEMM's packing and C is scattered the same
     * way: a dense copy is cheaper (bij,bjk->bik, b=32, n=128: 10.7 -> about 4 ms).
     * BLIS 0.9 also mishandles some negative, zero and equal stride pairs (e.g. zgemm with
     * rs_c = -1, cs_c = 1): such operands are copied too. */
    int64_t cols[3] = {L->k, L->n, L->n};
    bool again = false;
    for (int op = 0; op < 3; op++) {
      bool flat = rows[op] <= 1 || cols[op] <= 1;
      bool ok = flat || tfe__pr_abs(L->rs[op]) == 1 || tfe__pr_abs(L->cs[op]) == 1;
      if (blas)
        ok = ok && (rows[op] <= 1 || L->rs[op] > 0) && (cols[op] <= 1 || L->cs[op] > 0) &&
             (flat || L->rs[op] != L->cs[op]);
      if (!ok && !L->copy[op]) { L->copy[op] = true; again = true; }
    }
    if (!again) break;
  }
}

/* Loop-label choice. 0: cost model; 1: loop whenever it saves a copy (tests); -1: never. */
TFE_GLOBAL int tfe__pr_loop_mode;

/* Elements a layout moves: each copy reads and writes its operand; looping over M labels of
 * sizes dM (product) makes the GEMM repack B dM times instead of once (BLIS and the semiring
 * kernel pack both operands on every call), N labels (dN) repack A dN times, and each of the
 * dM*dN calls per batch costs the call overhead. */
TFE_INTERNAL double tfe__pr_lay_cost(const tfe__pr_lay *L, const tfe__pr_plab *lab, const int16_t *xs, int nx,
                                     int64_t nbatch) {
  double c = 0, dM = 1, dN = 1;
  for (int i = 0; i < nx; i++) {
    if (lab[xs[i]].in & TFE__PR_IN_A) dM *= (double)lab[xs[i]].dim;
    else dN *= (double)lab[xs[i]].dim;
  }
  double dop[3] = {dM, dN, dM * dN};
  for (int op = 0; op < 3; op++)
    if (L->copy[op]) c += 2.0 * (double)L->wsz[op];
  /* an operand read in place without a unit stride is gathered element by element (a cache
   * line per element) when packed, and C is then written the same way: weighted 8 copies
   * (measured: looping a 32x32x1024 aid,ij->ajd over a, leaving strides 1024 and 32, ran 3.5x
   * slower than copying on a Xeon) */
  int64_t rows[3] = {L->m, L->k, L->m}, cols[3] = {L->k, L->n, L->n};
  for (int op = 0; op < 3; op++) {
    bool unit = rows[op] <= 1 || cols[op] <= 1 || tfe__pr_abs(L->rs[op]) == 1 || tfe__pr_abs(L->cs[op]) == 1;
    if (L->copy[op] || unit) continue;
    c += 8.0 * (double)rows[op] * (double)cols[op] * (double)nbatch * dop[op];
  }
  if (nx > 0) {
    double nb = (double)nbatch;
    c += (dN - 1) * nb * dM * (double)L->m * (double)L->k + (dM - 1) * nb * dN * (double)L->k * (double)L->n;
    c += dM * dN * nb * TFE__PR_CALL_COST;
  }
  return c;
}

/* Lays out the groups with the loop labels xs[0..nx) taken out of them (copies of the groups:
 * the layout reorders them). */
TFE_INTERNAL void tfe__pr_layout_loop(tfe__pr_lay *L, const tfe__pr_plab *lab, int n, const int64_t (*cur)[3],
                                      const int16_t *gm, int nm, const int16_t *gn, int nn, const int16_t *gk, int nk,
                                      const int16_t *bl, int nb, const int16_t *xs, int nx, bool blas) {
  int16_t m2[TFE__PR_MAXL], n2[TFE__PR_MAXL], k2[TFE__PR_MAXL];
  int mm = 0, nn2 = 0;
  for (int pass = 0; pass < 2; pass++) {
    const int16_t *src = pass ? gn : gm;
    int cnt = pass ? nn : nm;
    for (int q = 0; q < cnt; q++) {
      bool out = false;
      for (int i = 0; i < nx; i++) out = out || xs[i] == src[q];
      if (out) continue;
      if (pass) n2[nn2++] = src[q]; else m2[mm++] = src[q];
    }
  }
  memcpy(k2, gk, (size_t)nk * sizeof *gk);
  tfe__pr_layout(L, lab, n, cur, m2, mm, n2, nn2, k2, nk, bl, nb, xs, nx, blas);
}

/* Picks loop labels (M or N labels whose removal lets their groups fuse) when that is cheaper
 * than the copies of *base (the layout without loops). Greedy: each step adds the label that
 * gives the cheapest layout (a step may save no copy by itself: C of `ijkl` with i, k in M
 * and j, l in N needs a loop over one label of each group), up to TFE__PR_MAXLOOP labels; the
 * cheapest set seen that saves a copy wins. Mode 0 keeps it only under 0.8x the copies and
 * with every looped group's GEMM dimension left at 16 or more (a skinny GEMM runs far below
 * peak); mode 1 takes the set with the fewest copies whatever it costs. Returns the count
 * and the labels through xs. */
TFE_INTERNAL int tfe__pr_pick_loop(const tfe__pr_lay *base, const tfe__pr_plab *lab, int n, const int64_t (*cur)[3],
                                   const int16_t *gm, int nm, const int16_t *gn, int nn, const int16_t *gk, int nk,
                                   const int16_t *bl, int nb, int64_t nbatch, bool blas, int16_t *xs) {
  int ncopy = base->copy[0] + base->copy[1] + base->copy[2];
  if (ncopy == 0 || tfe__pr_loop_mode < 0) return 0;
  bool forced = tfe__pr_loop_mode > 0;
  double base_cost = tfe__pr_lay_cost(base, lab, NULL, 0, nbatch), best_cost = base_cost;
  int best_nc = ncopy, nbest = 0, ns = 0;
  int16_t set[TFE__PR_MAXLOOP + 1];
  tfe__pr_lay cand;
  while (ns < TFE__PR_MAXLOOP) {
    int step = -1, step_nc = 0;
    double step_cost = 0;
    for (int q = 0; q < nm + nn; q++) {
      int x = q < nm ? gm[q] : gn[q - nm];
      bool dup = false;
      for (int i = 0; i < ns; i++) dup = dup || set[i] == x;
      if (dup) continue;
      set[ns] = (int16_t)x;
      tfe__pr_layout_loop(&cand, lab, n, cur, gm, nm, gn, nn, gk, nk, bl, nb, set, ns + 1, blas);
      bool mloop = false, nloop = false;
      for (int i = 0; i <= ns; i++) {
        if (lab[set[i]].in & TFE__PR_IN_A) mloop = true; else nloop = true;
      }
      bool fat = (!mloop || cand.m >= 16) && (!nloop || cand.n >= 16);
      if (!forced && !fat) continue;
      int nc = cand.copy[0] + cand.copy[1] + cand.copy[2];
      double cost = tfe__pr_lay_cost(&cand, lab, set, ns + 1, nbatch);
      if (step < 0 || (forced ? nc < step_nc || (nc == step_nc && cost < step_cost) : cost < step_cost)) {
        step = x; step_nc = nc; step_cost = cost;
      }
    }
    if (step < 0) break;
    set[ns++] = (int16_t)step;
    bool better = forced ? step_nc < best_nc || (step_nc == best_nc && nbest && step_cost < best_cost)
                         : step_nc < ncopy && step_cost < 0.8 * base_cost && step_cost < best_cost;
    if (better) {
      nbest = ns; best_nc = step_nc; best_cost = step_cost;
      memcpy(xs, set, (size_t)ns * sizeof *set);
    }
    if (step_nc == 0) break; /* nothing left to save */
  }
  return nbest;
}

/* Problems of at most this many label combinations run the reference engine (tests lower it
 * so that tiny shapes go through the GEMM paths too). */
TFE_GLOBAL int64_t tfe__pr_naive_work = 512;
/* 0: measured crossover; 1: whenever the buffers fit (tests); -1: never. */
TFE_GLOBAL int tfe__pr_small_mode;
/* Largest m*n*k of one GEMM that the small path runs instead of BLIS (the crossover measured
 * on Zen 5 with `bench_contract crossover`, see docs/prims.md). Process-wide. */
TFE_GLOBAL int64_t tfe__pr_small_mnk = TFE__PR_SMALL_MNK;
/* Most real elements of one thread's packed buffers (X, Y, one tile): L2-resident. */
TFE_GLOBAL int64_t tfe__pr_small_buf = 32768;

/* Orientation of the small path: 0 by cost, 1 never swap, 2 always swap (benchmarks). */
TFE_GLOBAL int tfe__pr_small_orient;

/* Whether the labels g fuse into one affine dimension of operand op (any order tried: sorted
 * by stride). An empty or single-label group always does. */
TFE_INTERNAL bool tfe__pr_affine_group(const int16_t *g, int n, const tfe__pr_plab *lab, const int64_t (*cur)[3], int op) {
  int16_t t[TFE__PR_MAXL];
  memcpy(t, g, (size_t)n * sizeof *g);
  tfe__pr_sort(t, n, lab, cur, op);
  return tfe__pr_fuses(t, n, lab, cur, op);
}
/* Per-batch cost of the small path with rows from group gr of operand xo (0: A, 1: B), columns
 * from gq of the other input: vector multiply-adds over the padded rows, plus element moves:
 * packing X (a gather, weighted 2, when its rows are not contiguous), packing Y (unless its
 * groups are affine and it is read in place), and C's R*Q stores (weighted 3 when C's rows
 * are not contiguous). Weights from the gm_queen steps and the crossover shapes. */
TFE_INTERNAL double tfe__pr_small_cost(const tfe_contract_plan *P, const int64_t (*cur)[3], const int16_t *gr, int nr,
                                       const int16_t *gq, int nq, const int16_t *gk, int nk, int xo, int64_t w) {
  int64_t R = 1, Q = 1, K = 1;
  bool unit = nr == 0;
  for (int i = 0; i < nr; i++) { R *= P->lab[gr[i]].dim; unit = unit || tfe__pr_abs(cur[gr[i]][xo]) == 1; }
  for (int i = 0; i < nq; i++) Q *= P->lab[gq[i]].dim;
  for (int i = 0; i < nk; i++) K *= P->lab[gk[i]].dim;
  unit = unit && tfe__pr_affine_group(gr, nr, P->lab, cur, xo);
  bool cunit = nr == 0; /* C contiguous along the rows: written in place or in unit strides */
  for (int i = 0; i < nr; i++) cunit = cunit || tfe__pr_abs(cur[gr[i]][2]) == 1;
  bool yin = tfe__pr_affine_group(gq, nq, P->lab, cur, 1 - xo) && tfe__pr_affine_group(gk, nk, P->lab, cur, 1 - xo);
  double c = (double)((R + w - 1) / w) * (double)Q * (double)K;
  c += (unit ? 1.0 : 2.0) * (double)R * (double)K;
  if (!yin) c += (double)Q * (double)K;
  /* strided C stores weigh 3 (96x8x8 batches column-major: 1.2 ms with unit-stride rows of
   * C, 5.1 ms transposed) */
  return c + (cunit ? 1.0 : 3.0) * (double)R * (double)Q;
}

/* Insertion sort of labels g[0..n) by the weight w[label] (ascending). */
TFE_INTERNAL void tfe__pr_sort_w(int16_t *g, int n, const int64_t *w) {
  for (int i = 1; i < n; i++) {
    int16_t x = g[i];
    int j = i;
    while (j > 0 && w[g[j - 1]] > w[x]) { g[j] = g[j - 1]; j--; }
    g[j] = x;
  }
}

/* Chooses the small path when the per-batch GEMM is below the crossover and its buffers fit;
 * then fills the plan: groups (each sorted by its stride in the operand it is packed from),
 * batch labels sorted by the sum of their strides (the odometer walks all three operands
 * forward in small steps), operand strides as read (no copies, no loop label). */
TFE_INTERNAL bool tfe__pr_small_plan(tfe_contract_plan *P, const int64_t (*cur)[3], int16_t *gm, int nm, int16_t *gn,
                                     int nn, int16_t *gk, int nk, const tfe_dtype_info *di) {
#ifndef TFE__PS_HAVE_VEC
  (void)P; (void)cur; (void)gm; (void)nm; (void)gn; (void)nn; (void)gk; (void)nk; (void)di;
  return false;
#else
  if (tfe__pr_small_mode < 0) return false;
  int64_t m = 1, n = 1, k = 1;
  for (int i = 0; i < nm; i++) m *= P->lab[gm[i]].dim;
  for (int i = 0; i < nn; i++) n *= P->lab[gn[i]].dim;
  for (int i = 0; i < nk; i++) k *= P->lab[gk[i]].dim;
  int64_t lim = tfe__pr_small_buf, pl = di->is_complex ? 2 : 1, w = 64 / ((int64_t)di->size / pl);
  if (m > lim || n > lim || k > lim) return false;
  int64_t mp = (m + w - 1) / w * w, np = (n + w - 1) / w * w;
  /* Orientation: a cost in vector multiply-adds plus element moves per batch (see
   * tfe__pr_small_cost); on a tie, the one along which C (else X) is contiguous. */
  bool cun = false, cum = false, xun = false, xum = false;
  for (int i = 0; i < nn; i++) { cun = cun || tfe__pr_abs(cur[gn[i]][2]) == 1; xun = xun || tfe__pr_abs(cur[gn[i]][1]) == 1; }
  for (int i = 0; i < nm; i++) { cum = cum || tfe__pr_abs(cur[gm[i]][2]) == 1; xum = xum || tfe__pr_abs(cur[gm[i]][0]) == 1; }
  double c0 = tfe__pr_small_cost(P, cur, gm, nm, gn, nn, gk, nk, 0, w), c1 = tfe__pr_small_cost(P, cur, gn, nn, gm, nm, gk, nk, 1, w);
  bool swap = c1 < c0 || (c1 == c0 && (cun > cum || (cun == cum && xun > xum)));
  if (tfe__pr_small_orient) swap = tfe__pr_small_orient == 2;
  /* one row in a vector of 8 (f64) wastes most lanes: tiny GEMMs of that shape keep the plain
   * loops (gm_queen step 138, 1 x 27 x 27 per batch: 16 ms plain, 27 ms small path) */
  if (tfe__pr_small_mode == 0 && (swap ? n : m) * 4 < w && m * n * k <= 2048) return false;
  int64_t rp = swap ? np : mp, q = swap ? m : n;
  q += 5; /* columns padded to the column block (ps_nq_) */
  if (pl * (rp * k + q * k + w + rp * q) + w > lim) return false; /* see ps_buf_elems_ */
  if (tfe__pr_small_mode == 0 && m * n * k > tfe__pr_small_mnk) return false;
  int64_t wt[TFE__PR_MAXL];
  int xo = swap ? 1 : 0; /* X: the operand whose rows are vectorized */
  for (int j = 0; j < P->nl; j++) wt[j] = tfe__pr_abs(cur[j][xo]);
  tfe__pr_sort_w(swap ? gn : gm, swap ? nn : nm, wt); /* X's rows and depth in X's order */
  tfe__pr_sort_w(gk, nk, wt);
  for (int j = 0; j < P->nl; j++) wt[j] = tfe__pr_abs(cur[j][1 - xo]);
  tfe__pr_sort_w(swap ? gm : gn, swap ? nm : nn, wt); /* Y's columns in Y's order */
  for (int j = 0; j < P->nl; j++) wt[j] = tfe__pr_abs(cur[j][0]) + tfe__pr_abs(cur[j][1]) + tfe__pr_abs(cur[j][2]);
  tfe__pr_sort_w(P->bl, P->nb, wt);
  P->small = true;
  P->small_swap = swap;
  P->m = m; P->n = n; P->k = k;
  P->ng[0] = nm; P->ng[1] = nn; P->ng[2] = nk;
  memcpy(P->gl, gm, (size_t)nm * sizeof *gm);
  memcpy(P->gl + nm, gn, (size_t)nn * sizeof *gn);
  memcpy(P->gl + nm + nn, gk, (size_t)nk * sizeof *gk);
  for (int j = 0; j < P->nl; j++)
    for (int op = 0; op < 3; op++) P->lab[j].sf[op] = P->lab[j].dim == 1 ? 0 : cur[j][op];
  return true;
#endif
}

/* Fills the plan from the label table. Never fails (sizes were checked by the caller). */
TFE_INTERNAL void tfe__pr_plan_build(tfe_contract_plan *P, const tfe__pr_prob *p) {
  int n = p->n;
  P->nl = n;
  P->c_embed = p->c_embed;
  int64_t work = 1;
  bool empty = false;
  for (int j = 0; j < n; j++) {
    tfe__pr_plab *l = &P->lab[j];
    memset(l, 0, sizeof *l);
    l->dim = p->lab[j].dim;
    l->in = p->lab[j].in;
    for (int op = 0; op < 3; op++) l->so[op] = p->lab[j].s[op];
    empty = empty || l->dim == 0;
    if (!empty && work < ((int64_t)1 << 40)) work *= l->dim;
  }
  P->naive = empty || P->unary || work <= tfe__pr_naive_work;
  if (P->naive) return;
  /* Reverse labels whose leading stride is negative, in every operand at once (a relabeling
   * i -> dim-1-i changes nothing): C's labels positive in C, the others in A (or B). */
  for (int j = 0; j < n; j++) {
    tfe__pr_plab *l = &P->lab[j];
    int lead = (l->in & TFE__PR_IN_C) ? 2 : (l->in & TFE__PR_IN_A) ? 0 : 1;
    if (l->so[lead] >= 0) continue;
    for (int op = 0; op < 3; op++) {
      P->off[op] += (l->dim - 1) * l->so[op];
      l->so[op] = -l->so[op];
    }
  }
  int64_t cur[TFE__PR_MAXL][3];
  int16_t gm[TFE__PR_MAXL], gn[TFE__PR_MAXL], gk[TFE__PR_MAXL];
  int nm = 0, nn = 0, nk = 0;
  int64_t ws[TFE__PR_WS_N] = {0};
  P->nb = 0;
  P->nbatch = 1;
  for (int op = 0; op < 2; op++) {
    /* reduce labels of one input only: dense temporary of the kept labels, in order */
    int16_t kept[TFE__PR_MAXL];
    int nkept = 0;
    P->red[op] = false;
    for (int j = 0; j < n; j++) {
      uint8_t bit = (uint8_t)(1u << op);
      if (!(P->lab[j].in & bit)) continue;
      if (P->lab[j].in == bit) P->red[op] = true; else kept[nkept++] = (int16_t)j;
    }
    for (int j = 0; j < n; j++) cur[j][op] = P->lab[j].so[op];
    if (P->red[op]) {
      for (int j = 0; j < n; j++) cur[j][op] = 0;
      const int16_t *g[1] = {kept};
      int c[1] = {nkept};
      int64_t tmp[TFE__PR_MAXL][3];
      ws[op == 0 ? TFE__PR_WS_RA : TFE__PR_WS_RB] = tfe__pr_dense(P->lab, tmp, 0, g, c, 1);
      for (int i = 0; i < nkept; i++) cur[kept[i]][op] = tmp[kept[i]][0];
    }
    for (int j = 0; j < n; j++) P->lab[j].sr[op] = cur[j][op];
  }
  for (int j = 0; j < n; j++) {
    cur[j][2] = P->lab[j].so[2];
    uint8_t in = P->lab[j].in;
    if (P->lab[j].dim == 1) continue; /* any stride addresses a size-1 label */
    if (in == (TFE__PR_IN_A | TFE__PR_IN_B | TFE__PR_IN_C)) { P->bl[P->nb++] = (int16_t)j; P->nbatch *= P->lab[j].dim; }
    else if (in == (TFE__PR_IN_A | TFE__PR_IN_C)) gm[nm++] = (int16_t)j;
    else if (in == (TFE__PR_IN_B | TFE__PR_IN_C)) gn[nn++] = (int16_t)j;
    else if (in == (TFE__PR_IN_A | TFE__PR_IN_B)) gk[nk++] = (int16_t)j;
  }
  const tfe_dtype_info *di = tfe_dtype_get(P->dtype);
  bool blas = di && di->is_float && di->algebra == TFE_ALGEBRA_STANDARD;
  if (blas && tfe__pr_small_plan(P, (const int64_t(*)[3])cur, gm, nm, gn, nn, gk, nk, di)) {
    int64_t off = 0;
    for (int s = 0; s < TFE__PR_WS_N; s++) { P->ws[s] = off; off += ws[s]; }
    P->ws[TFE__PR_WS_N] = off;
    return;
  }
  tfe__pr_lay lay;
  int16_t xs[TFE__PR_MAXLOOP];
  tfe__pr_layout(&lay, P->lab, n, (const int64_t(*)[3])cur, gm, nm, gn, nn, gk, nk, P->bl, P->nb, NULL, 0, blas);
  int nx = tfe__pr_pick_loop(&lay, P->lab, n, (const int64_t(*)[3])cur, gm, nm, gn, nn, gk, nk, P->bl, P->nb,
                             P->nbatch, blas, xs);
  if (nx > 0) /* the loop labels join the batch (after it, so the layout's dense copies agree) */
    tfe__pr_layout_loop(&lay, P->lab, n, (const int64_t(*)[3])cur, gm, nm, gn, nn, gk, nk, P->bl, P->nb, xs, nx, blas);
  const tfe__pr_lay *best = &lay;
  for (int i = 0; i < nx; i++) { P->bl[P->nb++] = xs[i]; P->nbatch *= P->lab[xs[i]].dim; }
  P->nloop = nx;
  P->loop = nx > 0;
  for (int op = 0; op < 3; op++) {
    P->copy[op] = best->copy[op];
    P->rs[op] = best->rs[op];
    P->cs[op] = best->cs[op];
    ws[TFE__PR_WS_CA + op] = best->copy[op] ? best->wsz[op] : 0;
  }
  P->m = best->m; P->n = best->n; P->k = best->k;
  for (int j = 0; j < n; j++)
    for (int op = 0; op < 3; op++) P->lab[j].sf[op] = P->lab[j].dim == 1 ? 0 : best->fin[j][op];
  int64_t off = 0;
  for (int s = 0; s < TFE__PR_WS_N; s++) { P->ws[s] = off; off += ws[s]; }
  P->ws[TFE__PR_WS_N] = off;
}

/* ---- threads ------------------------------------------------------------------------------- */
/* Multiply-adds one extra thread must have to be worth waking (2^20: about 20-40 us on one
 * core here). A parallel region costs microseconds on a quiet machine but up to a scheduler
 * slice on a loaded one (the other thread is descheduled while BLIS's barriers spin), so
 * small problems stay on the calling thread. Process-wide; tests lower it. */
TFE_GLOBAL int64_t tfe__pr_par_grain = (int64_t)1 << 20;

/* Threads to use for `work` multiply-adds when `threads` are allowed. */
TFE_INTERNAL int tfe__pr_threads_for(int64_t work, int threads) {
  int64_t grain = tfe__pr_par_grain > 0 ? tfe__pr_par_grain : 1;
  int64_t t = work / grain;
  if (t < 1) t = 1;
  return t < threads ? (int)t : threads;
}

/* ---- plan objects and the process-wide cache -------------------------------------------- */
TFE_INTERNAL tfe_contract_plan *tfe__pr_plan_alloc(int nl, int nkey) {
  size_t bytes = sizeof(tfe_contract_plan) + (size_t)nl * sizeof(tfe__pr_plab) + (size_t)nkey * sizeof(int64_t);
  tfe_contract_plan *P = (tfe_contract_plan *)tfe__alloc(bytes);
  if (!P) return NULL;
  memset(P, 0, sizeof *P);
  atomic_init(&P->refs, 1);
  P->nl = nl;
  P->nkey = nkey;
  P->key = (int64_t *)(void *)(P->lab + nl);
  return P;
}
TFE_API void tfe_contract_plan_retain(tfe_contract_plan *P) {
  if (P) atomic_fetch_add_explicit(&P->refs, 1, memory_order_relaxed);
}
TFE_API void tfe_contract_plan_release(tfe_contract_plan *P) {
  if (P && atomic_fetch_sub_explicit(&P->refs, 1, memory_order_acq_rel) == 1) tfe__free(P);
}
TFE_API size_t tfe_contract_plan_workspace(const tfe_contract_plan *P) {
  return P ? (size_t)P->ws[TFE__PR_WS_N] * tfe_dtype_get(P->dtype)->size : 0;
}
TFE_GLOBAL tfe__pr_cent tfe__pr_cent_[TFE_PLAN_CACHE_SIZE];
TFE_GLOBAL int32_t tfe__pr_bucket[TFE__PR_NBUCKET];
TFE_GLOBAL int32_t tfe__pr_lru_head, tfe__pr_lru_tail, tfe__pr_nused;
TFE_GLOBAL atomic_flag tfe__pr_cache_lock;
TFE_GLOBAL atomic_long tfe__pr_cache_hits, tfe__pr_cache_misses, tfe__pr_cache_evictions;
TFE_INTERNAL void tfe__pr_lock(void) {
  /* spin briefly, then yield: a holder descheduled on a loaded machine must get to run */
  for (int spins = 0; atomic_flag_test_and_set_explicit(&tfe__pr_cache_lock, memory_order_acquire); spins++)
    if (spins >= 64) sched_yield();
}
TFE_INTERNAL void tfe__pr_unlock(void) { atomic_flag_clear_explicit(&tfe__pr_cache_lock, memory_order_release); }

/* ---- list and bucket updates (lock held) ---- */
TFE_INTERNAL void tfe__pr_lru_unlink(int32_t e) {
  tfe__pr_cent *x = &tfe__pr_cent_[e - 1];
  if (x->prev) tfe__pr_cent_[x->prev - 1].next = x->next; else tfe__pr_lru_head = x->next;
  if (x->next) tfe__pr_cent_[x->next - 1].prev = x->prev; else tfe__pr_lru_tail = x->prev;
  x->prev = x->next = 0;
}
TFE_INTERNAL void tfe__pr_lru_front(int32_t e) {
  tfe__pr_cent *x = &tfe__pr_cent_[e - 1];
  x->prev = 0;
  x->next = tfe__pr_lru_head;
  if (tfe__pr_lru_head) tfe__pr_cent_[tfe__pr_lru_head - 1].prev = e; else tfe__pr_lru_tail = e;
  tfe__pr_lru_head = e;
}
TFE_INTERNAL void tfe__pr_chain_unlink(int32_t e) {
  int32_t *link = &tfe__pr_bucket[tfe__pr_cent_[e - 1].plan->hash % TFE__PR_NBUCKET];
  while (*link != e) link = &tfe__pr_cent_[*link - 1].chain;
  *link = tfe__pr_cent_[e - 1].chain;
  tfe__pr_cent_[e - 1].chain = 0;
}
TFE_INTERNAL int32_t tfe__pr_find(const int64_t *key, int nkey, uint64_t h) {
  for (int32_t e = tfe__pr_bucket[h % TFE__PR_NBUCKET]; e; e = tfe__pr_cent_[e - 1].chain) {
    const tfe_contract_plan *P = tfe__pr_cent_[e - 1].plan;
    if (P->hash == h && P->nkey == nkey && memcmp(P->key, key, (size_t)nkey * sizeof *key) == 0) return e;
  }
  return 0;
}

/* A retained plan for this key, or NULL. A hit becomes the most recently used entry. */
TFE_INTERNAL tfe_contract_plan *tfe__pr_cache_get(const int64_t *key, int nkey, uint64_t h) {
  tfe_contract_plan *P = NULL;
  tfe__pr_lock();
  int32_t e = tfe__pr_find(key, nkey, h);
  if (e) {
    P = tfe__pr_cent_[e - 1].plan;
    tfe_contract_plan_retain(P);
    if (tfe__pr_lru_head != e) { tfe__pr_lru_unlink(e); tfe__pr_lru_front(e); }
  }
  tfe__pr_unlock();
  atomic_fetch_add_explicit(P ? &tfe__pr_cache_hits : &tfe__pr_cache_misses, 1, memory_order_relaxed);
  return P;
}
/* Stores P (the cache takes its own reference) unless its key is already there; a full
 * cache evicts its least recently used plan (callers holding that plan keep it). */
TFE_INTERNAL void tfe__pr_cache_put(tfe_contract_plan *P) {
  tfe_contract_plan *old = NULL;
  tfe_contract_plan_retain(P);
  tfe__pr_lock();
  if (tfe__pr_find(P->key, P->nkey, P->hash)) {
    old = P; /* another thread stored the same plan first */
  } else {
    int32_t e;
    if (tfe__pr_nused < TFE_PLAN_CACHE_SIZE) {
      e = ++tfe__pr_nused;
    } else {
      e = tfe__pr_lru_tail;
      tfe__pr_lru_unlink(e);
      tfe__pr_chain_unlink(e);
      old = tfe__pr_cent_[e - 1].plan;
      atomic_fetch_add_explicit(&tfe__pr_cache_evictions, 1, memory_order_relaxed);
    }
    tfe__pr_cent *x = &tfe__pr_cent_[e - 1];
    x->plan = P;
    int32_t *head = &tfe__pr_bucket[P->hash % TFE__PR_NBUCKET];
    x->chain = *head;
    *head = e;
    tfe__pr_lru_front(e);
  }
  tfe__pr_unlock();
  tfe_contract_plan_release(old);
}
TFE_API void tfe_contract_cache_clear(void) {
  for (;;) {
    tfe__pr_lock();
    int32_t e = tfe__pr_lru_tail;
    tfe_contract_plan *P = NULL;
    if (e) {
      tfe__pr_lru_unlink(e);
      tfe__pr_chain_unlink(e);
      P = tfe__pr_cent_[e - 1].plan;
      int32_t last = tfe__pr_nused--; /* keep entries dense: move the last one into slot e */
      if (e != last) {
        tfe__pr_cent moved = tfe__pr_cent_[last - 1];
        tfe__pr_cent_[e - 1] = moved;
        if (moved.prev) tfe__pr_cent_[moved.prev - 1].next = e; else tfe__pr_lru_head = e;
        if (moved.next) tfe__pr_cent_[moved.next - 1].prev = e; else tfe__pr_lru_tail = e;
        int32_t *link = &tfe__pr_bucket[moved.plan->hash % TFE__PR_NBUCKET];
        while (*link != last) link = &tfe__pr_cent_[*link - 1].chain;
        *link = e;
      }
      memset(&tfe__pr_cent_[last - 1], 0, sizeof tfe__pr_cent_[0]);
    }
    tfe__pr_unlock();
    if (!P) return;
    tfe_contract_plan_release(P);
  }
}
TFE_API void tfe_contract_cache_stats(long *hits, long *misses) {
  if (hits) *hits = atomic_load(&tfe__pr_cache_hits);
  if (misses) *misses = atomic_load(&tfe__pr_cache_misses);
}
TFE_API void tfe_contract_cache_info(long *entries, long *capacity, long *evictions) {
  tfe__pr_lock();
  long n = tfe__pr_nused;
  tfe__pr_unlock();
  if (entries) *entries = n;
  if (capacity) *capacity = TFE_PLAN_CACHE_SIZE;
  if (evictions) *evictions = atomic_load(&tfe__pr_cache_evictions);
}
TFE_GLOBAL _Atomic(tfe__pr_block *) tfe__pr_pool;

TFE_INTERNAL void tfe__pr_block_free(tfe__pr_block *b) {
  if (b) b->from.free(b->from.ctx, b);
}
TFE_INTERNAL void *tfe__pr_ws_get(size_t bytes) {
  tfe__pr_block *b = atomic_exchange(&tfe__pr_pool, NULL);
  tfe_allocator cur = tfe_get_allocator();
  if (b && b->bytes >= bytes && b->from.alloc == cur.alloc && b->from.ctx == cur.ctx) return b + 1;
  tfe__pr_block_free(b);
  if (bytes > SIZE_MAX - sizeof *b) { (void)TFE_FAIL(TFE_ERR_OVERFLOW, "workspace of %zu bytes", bytes); return NULL; }
  b = (tfe__pr_block *)tfe__alloc(sizeof *b + bytes);
  if (!b) return NULL;
  b->bytes = bytes;
  b->from = cur;
  return b + 1;
}
TFE_INTERNAL void tfe__pr_ws_put(void *p) {
  if (!p) return;
  tfe__pr_block *b = (tfe__pr_block *)p - 1;
  if (b->from.alloc != tfe__default_alloc) { /* user allocators get their memory back at once */
    tfe__pr_block_free(b);
    return;
  }
  tfe__pr_block *old = atomic_exchange(&tfe__pr_pool, b);
  if (old && old->bytes > b->bytes) { /* keep the bigger one */
    old = atomic_exchange(&tfe__pr_pool, old);
  }
  tfe__pr_block_free(old);
}
TFE_API void tfe_contract_workspace_release(void) { tfe__pr_block_free(atomic_exchange(&tfe__pr_pool, NULL)); }

TFE_INTERNAL tfe_status tfe__pr_copy_labels(int32_t *dst, const tfe_layout *L, const int32_t *l, const char *name,
                                            const char *where) {
  if (L->rank < 0 || L->rank > TFE_MAX_RANK)
    return tfe__fail(TFE_ERR_RANK, where, "operand %s: rank %d outside [0, %d]", name, L->rank, TFE_MAX_RANK);
  if (L->rank > 0 && !l) return tfe__fail(TFE_ERR_NULL, where, "labels of %s are NULL", name);
  for (int i = 0; i < L->rank; i++) dst[i] = l[i];
  return TFE_OK;
}
TFE_INTERNAL tfe_status tfe__pr_describe(tfe_contract_desc *d, tfe_dtype dt, const tfe_layout *A, const int32_t *la,
                                         const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                         const int32_t *lc) {
  const char *where = "tfe_contract_describe";
  TFE_TRY(tfe__pr_copy_labels(d->la, A, la, "A", where));
  if (B) TFE_TRY(tfe__pr_copy_labels(d->lb, B, lb, "B", where));
  TFE_TRY(tfe__pr_copy_labels(d->lc, C, lc, "C", where));
  d->dtype = dt;
  d->unary = B == NULL;
  d->a = *A;
  if (B) d->b = *B; else d->b.rank = 0;
  d->c = *C;
  return TFE_OK;
}

/* Validates, analyses and plans (not cached). */
TFE_INTERNAL tfe_status tfe__pr_plan_make(tfe_contract_plan **out, tfe_dtype dt, const tfe_layout *A, const int32_t *la,
                                          const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                          const int32_t *lc, const char *where) {
  tfe__pr_prob p;
  p.n = 0;
  p.c_embed = false;
  TFE_TRY(tfe__pr_analyze(A, la, B, lb, C, lc, &p, where));
  int nkey = tfe__pr_key_len(A, B, C);
  tfe_contract_plan *P = tfe__pr_plan_alloc(p.n, nkey);
  if (!P) return TFE_ERR_ALLOC;
  P->dtype = dt;
  P->unary = B == NULL;
  tfe__pr_plan_build(P, &p);
  tfe__pr_key_fill(P->key, dt, A, la, B, lb, C, lc);
  P->hash = tfe__pr_key_hash(P->key, nkey);
  *out = P;
  return TFE_OK;
}
TFE_API tfe_status tfe_contract_plan_create(const tfe_contract_desc *d, tfe_contract_plan **out) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(out);
  return tfe__pr_plan_make(out, d->dtype, &d->a, d->la, d->unary ? NULL : &d->b, d->lb, &d->c, d->lc, __func__);
}

/* A plan for this contraction from the process-wide cache, made and cached on a miss. */
TFE_INTERNAL tfe_status tfe__pr_plan_cached(tfe_contract_plan **out, tfe_dtype dt, const tfe_layout *A, const int32_t *la,
                                            const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                            const int32_t *lc, const char *where) {
  const tfe_layout *L[3] = {A, B, C};
  const int32_t *lab[3] = {la, lb, lc};
  bool keyable = true;
  for (int op = 0; op < 3; op++)
    if (L[op]) keyable = keyable && L[op]->rank >= 0 && L[op]->rank <= TFE_MAX_RANK && (L[op]->rank == 0 || lab[op]);
  int64_t key[TFE__PR_KEYMAX];
  int nkey = 0;
  uint64_t h = 0;
  if (keyable) {
    nkey = tfe__pr_key_len(A, B, C);
    tfe__pr_key_fill(key, dt, A, la, B, lb, C, lc);
    h = tfe__pr_key_hash(key, nkey);
    *out = tfe__pr_cache_get(key, nkey, h);
    if (*out) return TFE_OK;
  }
  TFE_TRY(tfe__pr_plan_make(out, dt, A, la, B, lb, C, lc, where));
  tfe__pr_cache_put(*out);
  return TFE_OK;
}

/* Whether the layouts have the ranks, dims and strides the plan was made for. */
TFE_INTERNAL tfe_status tfe__pr_match(const tfe_contract_plan *P, const tfe_layout *A, const tfe_layout *B,
                                      const tfe_layout *C, const char *where) {
  const int64_t *k = P->key;
  const tfe_layout *L[3] = {A, B, C};
  static const char *const nm[3] = {"A", "B", "C"};
  for (int op = 0; op < 3; op++) {
    int64_t rank = k[1 + op];
    if (!L[op]) continue;
    if (L[op]->rank != rank)
      return tfe__fail(TFE_ERR_SHAPE, where, "%s has rank %d, the plan expects %lld", nm[op], L[op]->rank, (long long)rank);
  }
  const int64_t *e = k + 5;
  for (int op = 0; op < 3; op++) {
    if (!L[op]) continue;
    for (int i = 0; i < L[op]->rank; i++, e += 3)
      if (L[op]->dims[i] != e[1] || L[op]->strides[i] != e[2])
        return tfe__fail(TFE_ERR_SHAPE, where, "%s axis %d is %lld (stride %lld), the plan expects %lld (stride %lld)",
                         nm[op], i, (long long)L[op]->dims[i], (long long)L[op]->strides[i], (long long)e[1],
                         (long long)e[2]);
  }
  return TFE_OK;
}
#endif
