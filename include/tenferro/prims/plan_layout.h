/* tenferro/prims/plan_layout.h — prims room: how the GEMM of a plan addresses its operands.
 *
 * A group of labels fuses into one GEMM dimension only when, in the group's chosen order,
 * every stride equals the previous stride times the previous size, in EVERY operand that
 * carries the group (the check that `jk,kj->` and `ijk,kjl->il` with transposed inputs need).
 * An operand that cannot be addressed that way is copied into a dense temporary laid out
 * [M|K|batch] (A), [K|N|batch] (B) or [M|N|batch] (C); nothing else is copied. Instead of a
 * copy, the planner may loop over a few M or N labels (as if they were batch labels) when the
 * cost model says that is cheaper. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_PLAN_LAYOUT_H
#define TENFERRO_PRIMS_PLAN_LAYOUT_H
#include <tenferro/prims/plan.h>

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
 * small GEMM (measured: docs/bench-prims.md, "Loop labels"). */
#define TFE__PR_CALL_COST 32768.0

#endif
#elif !defined(TENFERRO_PRIMS_PLAN_LAYOUT_BODY) /* bodies */
#define TENFERRO_PRIMS_PLAN_LAYOUT_BODY
#include <string.h>

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
     * way: a dense copy is cheaper (measured: docs/bench-prims.md, "Why the code does it").
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
   * (the weight: docs/bench-prims.md, "Why the code does it") */
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
  int64_t mode = tfe__st.tune.contract_loop_mode; /* 0 cost model, 1 whenever it saves a copy, -1 never */
  if (ncopy == 0 || mode < 0) return 0;
  bool forced = mode > 0;
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

#endif
