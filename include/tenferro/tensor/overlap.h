/* tenferro/tensor/overlap.h — do two layouts (or one with itself) touch the same element?
 * Exact answers from a bounded Diophantine search (TFE_OVERLAP_BUDGET steps), "maybe" past it;
 * writes to views whose elements overlap are refused everywhere. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_TENSOR_OVERLAP_H
#define TENFERRO_TENSOR_OVERLAP_H
#include <tenferro/tensor/layout.h>
/* ---- overlap analysis ------------------------------------------------------------------------- */
typedef enum tfe_overlap {
  TFE_DISJOINT = 0,     /* proven: no element address is shared */
  TFE_OVERLAPS = 1,     /* proven: some address is shared (two indices alias) */
  TFE_MAYBE_OVERLAPS = 2 /* the search budget ran out: treat as overlapping (conservative) */
} tfe_overlap;

/* Nodes the exact search may visit before answering TFE_MAYBE_OVERLAPS. */
#ifndef TFE_OVERLAP_BUDGET
#define TFE_OVERLAP_BUDGET 100000
#endif

/* Bounded linear Diophantine problem: is there x with 0 <= x[m] <= u[m] and sum c[m] x[m] = R?
 * Terms are sorted by c descending with distinct c; depth-first search with interval and gcd
 * pruning. Returns 1 (solution), 0 (none) or -1 (budget exhausted). */
typedef struct tfe__term { int64_t c, u; } tfe__term;
typedef struct tfe__dioph {
  tfe__term t[2 * TFE_MAX_RANK + 1];
  int64_t sum[2 * TFE_MAX_RANK + 2]; /* sum[m] = max of sum over terms m.. */
  int64_t gcd[2 * TFE_MAX_RANK + 2];
  int n;
  int64_t work;
} tfe__dioph;

/* Do layouts a and b share an address, b's base lying `shift` elements after a's? Exact unless
 * the search budget runs out (then TFE_MAYBE_OVERLAPS). Layouts are not validated here. */
TFE_API tfe_overlap tfe_layout_overlap(const tfe_layout *a, const tfe_layout *b, int64_t shift);

/* Do two different indices of L address the same element? Exact unless the search budget runs
 * out. Zero stride on an axis of size > 1 overlaps; otherwise, with axes sorted by |stride|, no
 * overlap when each |stride| exceeds the span of the smaller ones (the common case, decided at
 * once); else one bounded search per axis k for e with e_k in [1, d_k-1], e_j in
 * [-(d_j-1), d_j-1] below k, zero above, and sum e_j |s_j| = 0. */
TFE_API tfe_overlap tfe_layout_self_overlap(const tfe_layout *L);

/* TFE_OK when every element of L has its own address (a write through it is well defined);
 * TFE_ERR_OVERLAP with the reason otherwise (undecided cases are refused too). */
TFE_API tfe_status tfe_layout_check_writable(const tfe_layout *L);

#endif
#elif !defined(TENFERRO_TENSOR_OVERLAP_BODY) /* bodies */
#define TENFERRO_TENSOR_OVERLAP_BODY
TFE_INTERNAL int64_t tfe__lay_gcd(int64_t a, int64_t b) {
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}
TFE_INTERNAL int tfe__dioph_search(tfe__dioph *P, int m, int64_t R) {
  if (m == P->n) return R == 0;
  if (R < 0 || R > P->sum[m]) return 0;
  if (P->gcd[m] > 1 && R % P->gcd[m] != 0) return 0;
  if (--P->work < 0) return -1;
  int64_t c = P->t[m].c, rest = P->sum[m + 1];
  int64_t lo = R - rest <= 0 ? 0 : (R - rest + c - 1) / c;
  int64_t hi = R / c < P->t[m].u ? R / c : P->t[m].u;
  for (int64_t x = hi; x >= lo; x--) {
    int r = tfe__dioph_search(P, m + 1, R - x * c);
    if (r != 0) return r;
  }
  return 0;
}
/* Add the term q*x, x in [0, u], to the problem with right-hand side *R (negative q is folded
 * into a positive one by x -> u - x). False on overflow. */
TFE_INTERNAL bool tfe__dioph_add(tfe__dioph *P, int64_t q, int64_t u, int64_t *R) {
  if (q == 0 || u == 0) return true;
  if (q < 0) {
    int64_t qu;
    if (q == INT64_MIN || !tfe__mul_ok(q, u, &qu) || !tfe__add_ok(*R, -qu, R)) return false;
    q = -q;
  }
  for (int i = 0; i < P->n; i++) /* equal coefficients: x1 + x2 takes every value in [0, u1+u2] */
    if (P->t[i].c == q) return tfe__add_ok(P->t[i].u, u, &P->t[i].u);
  P->t[P->n].c = q; P->t[P->n].u = u; P->n++;
  return true;
}
/* Sort, build suffix sums and gcds, search. -1 also on overflow. */
TFE_INTERNAL int tfe__dioph_solve(tfe__dioph *P, int64_t R) {
  for (int i = 1; i < P->n; i++) /* insertion sort, c descending */
    for (int j = i; j > 0 && P->t[j].c > P->t[j - 1].c; j--) { tfe__term x = P->t[j]; P->t[j] = P->t[j - 1]; P->t[j - 1] = x; }
  P->sum[P->n] = 0; P->gcd[P->n] = 0;
  for (int m = P->n - 1; m >= 0; m--) {
    int64_t cu;
    if (!tfe__mul_ok(P->t[m].c, P->t[m].u, &cu) || !tfe__add_ok(P->sum[m + 1], cu, &P->sum[m])) return -1;
    P->gcd[m] = tfe__lay_gcd(P->t[m].c, P->gcd[m + 1]);
  }
  P->work = TFE_OVERLAP_BUDGET;
  return tfe__dioph_search(P, 0, R);
}

/* Fast sufficient test that no two indices of L address one element: sorted by |stride|, each
 * stride reaches past everything the smaller ones span (the common, "nested" case). Interleaved
 * but disjoint layouts fail it: tfe_layout_self_overlap decides those exactly. Empty: true. */
TFE_INTERNAL bool tfe__layout_nested(const tfe_layout *L) {
  int64_t st[TFE_MAX_RANK], dm[TFE_MAX_RANK];
  int n = 0;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] == 0) return true;
    if (L->dims[i] == 1) continue;
    int64_t s = L->strides[i] < 0 ? -L->strides[i] : L->strides[i];
    int k = n++; /* insertion sort by |stride| */
    while (k > 0 && st[k - 1] > s) { st[k] = st[k - 1]; dm[k] = dm[k - 1]; k--; }
    st[k] = s; dm[k] = L->dims[i];
  }
  int64_t span = 0; /* largest offset reachable with the smaller strides */
  for (int k = 0; k < n; k++) {
    if (st[k] <= span) return false;
    span += st[k] * (dm[k] - 1);
  }
  return true;
}

/* Whether the byte ranges [first, last element] of two views intersect (a cheap aliasing test). */
TFE_INTERNAL bool tfe__ranges_meet(const void *pa, const tfe_layout *La, const void *pb, const tfe_layout *Lb,
                                   size_t elem) {
  int64_t alo, ahi, blo, bhi;
  if (!pa || !pb || !tfe_layout_extent(La, &alo, &ahi) || !tfe_layout_extent(Lb, &blo, &bhi)) return false;
  const char *a0 = (const char *)pa + alo * (int64_t)elem, *a1 = (const char *)pa + (ahi + 1) * (int64_t)elem;
  const char *b0 = (const char *)pb + blo * (int64_t)elem, *b1 = (const char *)pb + (bhi + 1) * (int64_t)elem;
  return a0 < b1 && b0 < a1;
}
/* Whether two views of elements of `elem` bytes may share an element: the range test, then,
 * for views into one buffer a whole number of elements apart, the exact test (even and odd
 * elements of one buffer are disjoint). Undecided cases count as meeting. */
TFE_INTERNAL bool tfe__views_meet(const void *pa, const tfe_layout *La, const void *pb, const tfe_layout *Lb,
                                  size_t elem) {
  if (!tfe__ranges_meet(pa, La, pb, Lb, elem)) return false;
  intptr_t d = (intptr_t)(uintptr_t)pb - (intptr_t)(uintptr_t)pa; /* no pointer arithmetic across objects */
  if (d % (intptr_t)elem != 0) return true;
  return tfe_layout_overlap(La, Lb, (int64_t)(d / (intptr_t)elem)) != TFE_DISJOINT;
}
/* Whether every element of L has its own address: the fast nested test, else the exact one. */
TFE_INTERNAL bool tfe__layout_distinct(const tfe_layout *L) {
  return tfe__layout_nested(L) || tfe_layout_self_overlap(L) == TFE_DISJOINT;
}
TFE_API tfe_overlap tfe_layout_overlap(const tfe_layout *a, const tfe_layout *b, int64_t shift) {
  int64_t alo, ahi, blo, bhi, D;
  if (!tfe_layout_extent(a, &alo, &ahi) || !tfe_layout_extent(b, &blo, &bhi)) return TFE_DISJOINT;
  if (!tfe__add_ok(blo, shift, &blo) || !tfe__add_ok(bhi, shift, &bhi)) return TFE_MAYBE_OVERLAPS;
  if (bhi < alo || ahi < blo) return TFE_DISJOINT;
  /* sum i_k sa_k - sum j_k sb_k = b.offset + shift - a.offset */
  if (!tfe__add_ok(b->offset, shift, &D) || !tfe__add_ok(D, -a->offset, &D)) return TFE_MAYBE_OVERLAPS;
  tfe__dioph P;
  P.n = 0;
  for (int k = 0; k < a->rank; k++)
    if (!tfe__dioph_add(&P, a->strides[k], a->dims[k] - 1, &D)) return TFE_MAYBE_OVERLAPS;
  for (int k = 0; k < b->rank; k++)
    if (b->strides[k] == INT64_MIN || !tfe__dioph_add(&P, -b->strides[k], b->dims[k] - 1, &D)) return TFE_MAYBE_OVERLAPS;
  int r = tfe__dioph_solve(&P, D);
  return r > 0 ? TFE_OVERLAPS : r == 0 ? TFE_DISJOINT : TFE_MAYBE_OVERLAPS;
}
TFE_API tfe_overlap tfe_layout_self_overlap(const tfe_layout *L) {
  int64_t d[TFE_MAX_RANK], s[TFE_MAX_RANK];
  int n = 0;
  if (tfe_layout_numel(L) == 0) return TFE_DISJOINT;
  for (int k = 0; k < L->rank; k++) {
    if (L->dims[k] == 1) continue;
    if (L->strides[k] == 0) return TFE_OVERLAPS;
    if (L->strides[k] == INT64_MIN) return TFE_MAYBE_OVERLAPS;
    d[n] = L->dims[k]; s[n++] = L->strides[k] < 0 ? -L->strides[k] : L->strides[k];
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
      int64_t t = s[j]; s[j] = s[j - 1]; s[j - 1] = t;
      t = d[j]; d[j] = d[j - 1]; d[j - 1] = t;
    }
  bool nested = true;
  int64_t span = 0; /* sum over smaller axes of |s|(d-1): fits, it is an address difference */
  for (int k = 0; k < n && nested; k++) {
    if (s[k] <= span) nested = false;
    span += s[k] * (d[k] - 1);
  }
  if (nested) return TFE_DISJOINT;
  tfe_overlap res = TFE_DISJOINT;
  for (int k = 1; k < n; k++) {
    /* g|s_k| + sum_j f_j |s_j| = sum_j (d_j-1)|s_j| - |s_k|, g in [0, d_k-2], f_j in [0, 2d_j-2] */
    tfe__dioph P;
    P.n = 0;
    int64_t R = -s[k];
    bool ok = tfe__dioph_add(&P, s[k], d[k] - 2, &R);
    for (int j = 0; j < k && ok; j++) {
      int64_t sd;
      ok = tfe__mul_ok(s[j], d[j] - 1, &sd) && tfe__add_ok(R, sd, &R) && tfe__dioph_add(&P, s[j], 2 * (d[j] - 1), &R);
    }
    int r = ok ? tfe__dioph_solve(&P, R) : -1;
    if (r > 0) return TFE_OVERLAPS;
    if (r < 0) res = TFE_MAYBE_OVERLAPS;
  }
  return res;
}
TFE_API tfe_status tfe_layout_check_writable(const tfe_layout *L) {
  TFE_TRY(tfe__lay_ok(L, __func__, "L"));
  for (int k = 0; k < L->rank; k++)
    if (L->strides[k] == 0 && L->dims[k] > 1 && tfe_layout_numel(L) > 0)
      return TFE_FAIL(TFE_ERR_OVERLAP, "cannot write: axis %d has stride 0 and size %lld (a broadcast view)", k,
                      (long long)L->dims[k]);
  switch (tfe_layout_self_overlap(L)) {
  case TFE_DISJOINT: return TFE_OK;
  case TFE_OVERLAPS: return TFE_FAIL(TFE_ERR_OVERLAP, "cannot write: two indices of the view address the same element");
  default: return TFE_FAIL(TFE_ERR_OVERLAP, "cannot write: could not prove the view free of self-overlap "
                                             "(search budget TFE_OVERLAP_BUDGET exhausted)");
  }
}
#endif
