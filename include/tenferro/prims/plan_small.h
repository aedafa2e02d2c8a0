/* tenferro/prims/plan_small.h — prims room: when the small-GEMM engine takes a plan.
 *
 * Many contractions of tensor networks are a huge batch of tiny GEMMs. The small-GEMM engine
 * (small_gemm_tpl.h) runs them without copies and without BLIS's per-call cost; it takes a
 * plan of a float kind when the per-batch GEMM is below the crossover contract_small_mnk
 * (measured with `bench_contract crossover`, docs/bench-prims.md) and its packed buffers fit
 * contract_small_buf reals per thread. Its orientation (which operand's rows are vectorized)
 * comes from a cost in vector multiply-adds and element moves. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_PLAN_SMALL_H
#define TENFERRO_PRIMS_PLAN_SMALL_H
#include <tenferro/prims/plan.h>
/* The small-GEMM engine needs GNU vector types. */
#if defined(__GNUC__) || defined(__clang__)
#define TFE__PS_HAVE_VEC 1
#endif
/* Its vectors are the target's own registers: 64 bytes with AVX-512, 32 with AVX/AVX2, 16
 * elsewhere (SSE, NEON), and it has TFE__PS_NREG of them (32 with AVX-512 and on AArch64, else
 * 16). Wider GNU vectors than the target has are lowered by gcc through the stack: 64-byte
 * vectors on an AVX2 Zen ran the engine 10-17x slower than BLIS on 32-60 bonds
 * (docs/bench-prims.md, session 9). */
#if defined(__AVX512F__)
#define TFE__PS_VB 64
#elif defined(__AVX__)
#define TFE__PS_VB 32
#else
#define TFE__PS_VB 16
#endif
#if defined(__AVX512F__) || defined(__aarch64__)
#define TFE__PS_NREG 32
#else
#define TFE__PS_NREG 16
#endif
/* ISO C modes (-std=c11) turn off gcc's fusing of a*b+c into one FMA; the small kernel's tile
 * loop asks for it back (one rounding instead of two per multiply-add, like BLIS's kernels). */
#if defined(__GNUC__) && !defined(__clang__)
#define TFE__PS_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define TFE__PS_CONTRACT
#endif
#endif
#elif !defined(TENFERRO_PRIMS_PLAN_SMALL_BODY) /* bodies */
#define TENFERRO_PRIMS_PLAN_SMALL_BODY
#include <tenferro/prims/plan_layout.h>

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
 * are not contiguous). Weights measured on real network steps (docs/bench-prims.md). */
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
  /* strided C stores weigh 3 (measured: docs/bench-prims.md, "Why the code does it") */
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
  int64_t mode = tfe__st.tune.contract_small_mode; /* 0 crossover, 1 whenever the buffers fit, -1 never */
  if (mode < 0) return false;
  int64_t m = 1, n = 1, k = 1;
  for (int i = 0; i < nm; i++) m *= P->lab[gm[i]].dim;
  for (int i = 0; i < nn; i++) n *= P->lab[gn[i]].dim;
  for (int i = 0; i < nk; i++) k *= P->lab[gk[i]].dim;
  int64_t lim = tfe__st.tune.contract_small_buf, pl = di->is_complex ? 2 : 1, w = TFE__PS_VB / ((int64_t)di->size / pl);
  if (m > lim || n > lim || k > lim) return false;
  int64_t mp = (m + w - 1) / w * w, np = (n + w - 1) / w * w;
  /* Orientation: a cost in vector multiply-adds plus element moves per batch (see
   * tfe__pr_small_cost); on a tie, the one along which C (else X) is contiguous. */
  bool cun = false, cum = false, xun = false, xum = false;
  for (int i = 0; i < nn; i++) { cun = cun || tfe__pr_abs(cur[gn[i]][2]) == 1; xun = xun || tfe__pr_abs(cur[gn[i]][1]) == 1; }
  for (int i = 0; i < nm; i++) { cum = cum || tfe__pr_abs(cur[gm[i]][2]) == 1; xum = xum || tfe__pr_abs(cur[gm[i]][0]) == 1; }
  double c0 = tfe__pr_small_cost(P, cur, gm, nm, gn, nn, gk, nk, 0, w), c1 = tfe__pr_small_cost(P, cur, gn, nn, gm, nm, gk, nk, 1, w);
  bool swap = c1 < c0 || (c1 == c0 && (cun > cum || (cun == cum && xun > xum)));
  if (tfe__st.tune.contract_small_orient) swap = tfe__st.tune.contract_small_orient == 2;
  /* one row in a vector of 8 (f64) wastes most lanes: tiny GEMMs of that shape keep the plain
   * loops (measured: docs/bench-prims.md, "Why the code does it") */
  if (mode == 0 && (swap ? n : m) * 4 < w && m * n * k <= 2048) return false;
  int64_t rp = swap ? np : mp, q = swap ? m : n;
  q += 5; /* columns padded to the column block (ps_nq_) */
  if (pl * (rp * k + q * k + w + rp * q) + w > lim) return false; /* see ps_buf_elems_ */
  if (mode == 0 && m * n * k > tfe__st.tune.contract_small_mnk) return false;
  int64_t wt[TFE__PR_MAXL];
  int xo = swap ? 1 : 0; /* X: the operand whose rows are vectorized */
  for (int j = 0; j < P->nl; j++) wt[j] = tfe__pr_abs(cur[j][xo]);
  tfe__pr_sort_w(swap ? gn : gm, swap ? nn : nm, wt); /* X's rows and depth in X's order */
  tfe__pr_sort_w(gk, nk, wt);
  for (int j = 0; j < P->nl; j++) wt[j] = tfe__pr_abs(cur[j][1 - xo]);
  tfe__pr_sort_w(swap ? gm : gn, swap ? nm : nn, wt); /* Y's columns in Y's order */
  for (int j = 0; j < P->nl; j++) wt[j] = tfe__pr_abs(cur[j][0]) + tfe__pr_abs(cur[j][1]) + tfe__pr_abs(cur[j][2]);
  tfe__pr_sort_w(P->bl, P->nb, wt);
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

#endif
