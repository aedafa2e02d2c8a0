/* tenferro/prims/plan.h — prims room: the contraction plan and the planner's top level.
 *
 * A plan turns the label table of a binary contraction into one (batched) GEMM:
 *   batch   labels in A, B and C      -> loop (parallel when the GEMMs are small)
 *   M       labels in A and C only    -> rows of A and C, fused into one dimension
 *   N       labels in B and C only    -> columns of B and C
 *   K       labels in A and B only    -> contracted
 *   summed  labels in one input only  -> reduced away first (into a dense temporary)
 * and records the engine that runs it (engine.h). How groups fuse, which operands are copied
 * and which labels are looped over: plan_layout.h; when the small-GEMM engine takes a plan:
 * plan_small.h; the plan cache and its key: plan_cache.h. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_PLAN_H
#define TENFERRO_PRIMS_PLAN_H
#include <tenferro/tensor/tensor.h>
#include <tenferro/prims/labels.h>
#include <tenferro/prims/engine.h>

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
  tfe__pr_engine engine; /* what runs the plan (engine.h) */
  bool unary;
  bool c_embed;
  bool red[2];    /* A / B have labels summed away before the GEMM */
  bool copy[3];   /* A / B / C go through a dense temporary */
  bool loop;      /* nloop > 0 */
  int nloop;      /* the last nloop of bl[] are M or N labels looped over to avoid copies */
  bool small_swap; /* the small engine computes C^T = B^T A^T (vectorizes over N) */
  int ng[3];      /* small engine: labels in the M, N, K groups, listed in gl[] in that order */
  int16_t gl[TFE__PR_MAXL];
  int64_t m, n, k, nbatch;
  int64_t off[3];        /* element offsets added to A, B, C (reversed labels) */
  int64_t rs[3], cs[3]; /* GEMM row / column strides of A (m x k), B (k x n), C (m x n) */
  int nb;               /* batch labels with size > 1 */
  int16_t bl[TFE__PR_MAXL];
  int64_t ws[TFE__PR_WS_N + 1]; /* offsets; ws[N] = total elements */
  /* small engine: its per-plan set-up (offset tables, in-place decisions, batch odometer),
   * made at the plan's first run and kept (small_gemm_tpl.h, ps_prep_); freed with the plan */
  _Atomic(void *) small_prep;
  /* per operand (A, B, C): the element range its layout spans from the view's offset, and
   * whether it has no elements (then ext is unset); the views an execution matches to the
   * plan share them, so their overlap test starts from these (pr_check_planned_) */
  int64_t ext[3][2];
  bool empty[3];
  uint64_t hash;
  int nkey;
  int64_t *key;         /* ranks, labels, dims, strides, flavor: what the plan was made for */
  tfe__lru_node node;   /* its entry in the plan cache (the key above is the entry's key) */
  int nl;
  tfe__pr_plab lab[];   /* nl entries, then the key */
} tfe_contract_plan;

TFE_API void tfe_contract_plan_retain(tfe_contract_plan *P);
TFE_API void tfe_contract_plan_release(tfe_contract_plan *P);
/* Bytes of temporary memory one execution of the plan allocates. */
TFE_API size_t tfe_contract_plan_workspace(const tfe_contract_plan *P);

/* ---- describe -> plan ------------------------------------------------------------------- */
/* What a contraction is, without data: kind, layouts (offsets ignored) and labels. */
typedef struct tfe_contract_desc {
  tfe_dtype dtype;
  bool unary; /* no B */
  tfe_layout a, b, c;
  int32_t la[TFE_MAX_RANK], lb[TFE_MAX_RANK], lc[TFE_MAX_RANK];
} tfe_contract_desc;

/* Plans a described contraction. The plan is reusable from any thread and for any data
 * with the same kind, ranks, labels, dims and strides; release it when done. */
TFE_API tfe_status tfe_contract_plan_create(const tfe_contract_desc *d, tfe_contract_plan **out);

#define TFE__PR_KEYMAX (5 + 9 * TFE_MAX_RANK)

#endif
#elif !defined(TENFERRO_PRIMS_PLAN_BODY) /* bodies */
#define TENFERRO_PRIMS_PLAN_BODY
#include <tenferro/prims/labels.h>
#include <tenferro/prims/engine.h>
#include <tenferro/prims/plan_layout.h>
#include <tenferro/prims/plan_small.h>

/* m*n*k, saturating. */
TFE_INTERNAL int64_t tfe__pr_mnk(int64_t m, int64_t n, int64_t k) {
  int64_t w = m, lim = (int64_t)1 << 62;
  w = n && w > lim / n ? lim : w * n;
  w = k && w > lim / k ? lim : w * k;
  return w;
}

/* ---- the key: everything a plan depends on ---------------------------------------------- */
TFE_INTERNAL int tfe__pr_key_len(const tfe_layout *A, const tfe_layout *B, const tfe_layout *C) {
  return 5 + 3 * (A->rank + (B ? B->rank : 0) + C->rank);
}
TFE_INTERNAL void tfe__pr_key_fill(int64_t *key, tfe_dtype dt, const tfe_layout *A, const int32_t *la,
                                   const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                   const int32_t *lc, tfe__pr_flavor flavor) {
  int64_t *k = key;
  *k++ = (int64_t)dt;
  *k++ = A->rank;
  *k++ = B ? B->rank : -1;
  *k++ = C->rank;
  *k++ = 0x7fe0 + (int64_t)flavor; /* format tag and plan flavor */
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

/* The element ranges of the plan's operands (offsets left out: a view adds its own). */
TFE_INTERNAL void tfe__pr_extents(tfe_contract_plan *P, const tfe_layout *A, const tfe_layout *B, const tfe_layout *C) {
  const tfe_layout *L[3] = {A, B, C};
  for (int op = 0; op < 3; op++) {
    tfe_layout x;
    P->empty[op] = true;
    P->ext[op][0] = P->ext[op][1] = 0;
    if (!L[op]) continue;
    x.rank = L[op]->rank;
    x.offset = 0;
    for (int i = 0; i < x.rank; i++) { x.dims[i] = L[op]->dims[i]; x.strides[i] = L[op]->strides[i]; }
    P->empty[op] = !tfe_layout_extent(&x, &P->ext[op][0], &P->ext[op][1]);
  }
}
/* Whether the byte ranges of operand op (view data d, offset o) and C (data dc, offset oc)
 * are apart, from the plan's extents (views that match the plan). Empty operands are apart. */
TFE_INTERNAL bool tfe__pr_apart(const tfe_contract_plan *P, int op, const void *d, int64_t o, const void *dc, int64_t oc,
                                size_t elem) {
  if (P->empty[op] || P->empty[2] || !d || !dc) return true;
  int64_t e = (int64_t)elem;
  const char *a0 = (const char *)d + (o + P->ext[op][0]) * e, *a1 = (const char *)d + (o + P->ext[op][1] + 1) * e;
  const char *c0 = (const char *)dc + (oc + P->ext[2][0]) * e, *c1 = (const char *)dc + (oc + P->ext[2][1] + 1) * e;
  return !(a0 < c1 && c0 < a1);
}

/* Fills the plan from the label table. Never fails (sizes were checked by the caller). */
TFE_INTERNAL void tfe__pr_plan_build(tfe_contract_plan *P, const tfe__pr_prob *p, tfe__pr_flavor flavor) {
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
  /* a plan for a backend's GEMM runs it whenever there is a product to run. Tiny problems run
   * the loops, but for the float kinds only up to a sixteenth of the threshold: above it the
   * small engine's set-up beats the loops' per-element cost where it takes the problem
   * (docs/bench-prims.md, session 18), the loops run what it refuses */
  const tfe_dtype_info *di = tfe_dtype_get(P->dtype);
  bool blas = di && di->is_float && di->algebra == TFE_ALGEBRA_STANDARD;
  int64_t nw = tfe__st.tune.contract_naive_work;
  bool tiny = flavor == TFE__PR_NATIVE && work <= nw;
  P->engine = TFE__PR_ENG_NAIVE;
  if (empty || P->unary || (tiny && (!blas || work <= nw / 16))) return;
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
  if (flavor == TFE__PR_NATIVE && blas && tfe__pr_small_plan(P, (const int64_t(*)[3])cur, gm, nm, gn, nn, gk, nk, di)) {
    P->engine = TFE__PR_ENG_SMALL;
    int64_t off = 0;
    for (int s = 0; s < TFE__PR_WS_N; s++) { P->ws[s] = off; off += ws[s]; }
    P->ws[TFE__PR_WS_N] = off;
    return;
  }
  if (tiny) return; /* one the small engine does not take: the loops (the relabeling above keeps them valid) */
  if (flavor == TFE__PR_LOWERED) blas = true; /* a backend's GEMM gets BLAS-style operands */
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
  /* a GEMM below about 2048 multiply-adds costs less than a BLIS call: plain loops (reached
   * only when the small engine is off or does not take the plan) */
  int64_t mnk = tfe__pr_mnk(P->m, P->n, P->k);
  P->engine = flavor == TFE__PR_LOWERED ? TFE__PR_ENG_BACKEND
            : !blas                     ? TFE__PR_ENG_SEMIRING
            : mnk <= 2048               ? TFE__PR_ENG_LOOPS
                                        : TFE__PR_ENG_BLIS;
  for (int j = 0; j < n; j++)
    for (int op = 0; op < 3; op++) P->lab[j].sf[op] = P->lab[j].dim == 1 ? 0 : best->fin[j][op];
  int64_t off = 0;
  for (int s = 0; s < TFE__PR_WS_N; s++) { P->ws[s] = off; off += ws[s]; }
  P->ws[TFE__PR_WS_N] = off;
}

/* ---- plan objects -------------------------------------------------------------------------- */
TFE_INTERNAL tfe_contract_plan *tfe__pr_plan_alloc(int nl, int nkey) {
  size_t bytes = sizeof(tfe_contract_plan) + (size_t)nl * sizeof(tfe__pr_plab) + (size_t)nkey * sizeof(int64_t);
  tfe_contract_plan *P = (tfe_contract_plan *)tfe__alloc(bytes);
  if (!P) return NULL;
  memset(P, 0, sizeof *P);
  atomic_init(&P->refs, 1);
  atomic_init(&P->small_prep, NULL);
  P->nl = nl;
  P->nkey = nkey;
  P->key = (int64_t *)(void *)(P->lab + nl);
  return P;
}
TFE_API void tfe_contract_plan_retain(tfe_contract_plan *P) {
  if (P) atomic_fetch_add_explicit(&P->refs, 1, memory_order_relaxed);
}
TFE_API void tfe_contract_plan_release(tfe_contract_plan *P) {
  if (P && atomic_fetch_sub_explicit(&P->refs, 1, memory_order_acq_rel) == 1) {
    tfe__free(atomic_load(&P->small_prep));
    tfe__free(P);
  }
}
TFE_API size_t tfe_contract_plan_workspace(const tfe_contract_plan *P) {
  const tfe_dtype_info *di = P ? tfe_dtype_get(P->dtype) : NULL;
  return di ? (size_t)P->ws[TFE__PR_WS_N] * di->size : 0;
}

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
                                          const int32_t *lc, tfe__pr_flavor flavor, const char *where) {
  tfe__pr_prob p;
  p.n = 0;
  p.c_embed = false;
  TFE_TRY(tfe__pr_analyze(A, la, B, lb, C, lc, &p, where));
  int nkey = tfe__pr_key_len(A, B, C);
  tfe_contract_plan *P = tfe__pr_plan_alloc(p.n, nkey);
  if (!P) return TFE_ERR_ALLOC;
  P->dtype = dt;
  P->unary = B == NULL;
  tfe__pr_plan_build(P, &p, flavor);
  tfe__pr_key_fill(P->key, dt, A, la, B, lb, C, lc, flavor);
  tfe__pr_extents(P, A, B, C);
  P->hash = tfe__lru_hash(P->key, (size_t)nkey * sizeof *P->key);
  *out = P;
  return TFE_OK;
}
TFE_API tfe_status tfe_contract_plan_create(const tfe_contract_desc *d, tfe_contract_plan **out) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(out);
  return tfe__pr_plan_make(out, d->dtype, &d->a, d->la, d->unary ? NULL : &d->b, d->lb, &d->c, d->lc, TFE__PR_NATIVE,
                           __func__);
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
  /* every call of a held plan matches: one pass without branches, the messages below only on
   * a mismatch */
  const int64_t *e = k + 5;
  uint64_t diff = 0;
  for (int op = 0; op < 3; op++) {
    if (!L[op]) continue;
    for (int i = 0; i < L[op]->rank; i++, e += 3)
      diff |= (uint64_t)(L[op]->dims[i] ^ e[1]) | (uint64_t)(L[op]->strides[i] ^ e[2]);
  }
  if (!diff) return TFE_OK;
  e = k + 5;
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
