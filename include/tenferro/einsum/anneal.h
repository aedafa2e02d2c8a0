/* tenferro/einsum_anneal.h — tree optimizer by simulated annealing (in the spirit of TreeSA):
 * local rotations of the contraction tree under a Metropolis rule with a rising inverse
 * temperature, within a time budget; and slicing to a memory limit.
 *
 * A rotation at node p = (A, X), X = (B, C) gives p = (C, (A, B)) or p = (B, (A, C)). Only X's
 * label set and the two step costs change, and the new set is local:
 *   L(A u B) = (L(A) | L(B)) & (L(C) | L(p)),
 * because a label of A or B must stay exactly when C or something outside p still holds it. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_ANNEAL_H
#define TENFERRO_EINSUM_ANNEAL_H

#include <tenferro/einsum/path.h>

typedef struct tfe__ein_sa {
  const tfe__ein_net *net;
  int n, N, W;
  int *lc, *rc, *par;   /* children and parent of each node (leaves: -1) */
  uint64_t *L;          /* N * W label sets */
  double *lf, *ls;      /* log2 flops and log2 size of each internal node */
  double *term;         /* 2^lf + ww * 2^ls of each internal node (tfe__ein_sa_term) */
  double T;             /* sum of 2^lf + ww * 2^ls over the internal nodes (ls: not the root) */
  double ww;
  int root;
  uint64_t *u, *x;      /* W-word scratch */
} tfe__ein_sa;

#endif
#elif !defined(TENFERRO_EINSUM_ANNEAL_BODY) /* bodies */
#define TENFERRO_EINSUM_ANNEAL_BODY
#include <tenferro/einsum/path.h>

TFE_INTERNAL double tfe__ein_sa_term(const tfe__ein_sa *s, int v) {
  return exp2(s->lf[v]) + (v == s->root ? 0 : s->ww * exp2(s->ls[v]));
}
/* Recomputes everything from the tree in SSA form. */
TFE_INTERNAL tfe_status tfe__ein_sa_load(tfe__ein_sa *s, const tfe__ein_tree *t) {
  int n = s->n, W = s->W;
  for (int v = 0; v < s->N; v++) s->lc[v] = s->rc[v] = s->par[v] = -1;
  for (int k = 0; k + 1 < n; k++) {
    s->lc[n + k] = t->ch[2 * k]; s->rc[n + k] = t->ch[2 * k + 1];
    s->par[t->ch[2 * k]] = s->par[t->ch[2 * k + 1]] = n + k;
  }
  s->root = 2 * n - 2;
  TFE_TRY(tfe__ein_tree_labels(s->net, t, s->L));
  s->T = 0;
  for (int v = n; v < s->N; v++) {
    const uint64_t *a = TFE__BS(s->L, W, s->lc[v]), *b = TFE__BS(s->L, W, s->rc[v]);
    for (int w = 0; w < W; w++) s->u[w] = a[w] | b[w];
    s->lf[v] = tfe__bs_log2(s->u, W, s->net->lsize);
    s->ls[v] = tfe__bs_log2(TFE__BS(s->L, W, v), W, s->net->lsize);
    s->term[v] = tfe__ein_sa_term(s, v);
    s->T += s->term[v];
  }
  return TFE_OK;
}
/* Post-order relabelling into SSA form. */
TFE_INTERNAL void tfe__ein_sa_store(const tfe__ein_sa *s, const int *lc, const int *rc, int root,
                                    tfe__ein_tree *t, int *stack, int *id) {
  int n = s->n, k = 0, sp = 0;
  for (int v = 0; v < s->N; v++) id[v] = v < n ? v : -1;
  stack[sp++] = root;
  while (sp) {
    int v = stack[sp - 1];
    if (id[lc[v]] < 0) { stack[sp++] = lc[v]; continue; }
    if (id[rc[v]] < 0) { stack[sp++] = rc[v]; continue; }
    t->ch[2 * k] = id[lc[v]]; t->ch[2 * k + 1] = id[rc[v]];
    id[v] = n + k++;
    sp--;
  }
}

/* Tries one rotation at p; returns true when accepted (the tree is changed). */
TFE_INTERNAL bool tfe__ein_sa_try(tfe__ein_sa *s, int p, double beta, tfe__rng *rng) {
  int W = s->W;
  bool left_internal = s->lc[p] >= s->n, right_internal = s->rc[p] >= s->n;
  if (!left_internal && !right_internal) return false;
  bool xl = left_internal && (!right_internal || (tfe__rng_next(rng) & 1));
  int X = xl ? s->lc[p] : s->rc[p], A = xl ? s->rc[p] : s->lc[p];
  bool swapB = tfe__rng_next(rng) & 2; /* A <-> B (keeps C in X) or A <-> C (keeps B) */
  int B = s->lc[X], C = s->rc[X];
  int keep = swapB ? C : B, out = swapB ? B : C;     /* X' = (A, keep), p = (out, X') */
  const uint64_t *La = TFE__BS(s->L, W, A), *Lk = TFE__BS(s->L, W, keep), *Lo = TFE__BS(s->L, W, out),
                 *Lp = TFE__BS(s->L, W, p);
  for (int w = 0; w < W; w++) {
    s->u[w] = La[w] | Lk[w];
    s->x[w] = s->u[w] & (Lo[w] | Lp[w]);
  }
  double lfx = tfe__bs_log2(s->u, W, s->net->lsize), lsx = tfe__bs_log2(s->x, W, s->net->lsize);
  for (int w = 0; w < W; w++) s->u[w] = s->x[w] | Lo[w];
  double lfp = tfe__bs_log2(s->u, W, s->net->lsize);
  double fx = exp2(lfx), fp = exp2(lfp), tx = fx + (s->ww > 0 ? s->ww * exp2(lsx) : 0);
  double old = s->term[X] + s->term[p] - (p == s->root || s->ww <= 0 ? 0 : s->ww * exp2(s->ls[p]));
  double neu = tx + fp;
  double dT = neu - old;
  if (dT > 0) {
    double dE = log2((s->T + dT) / s->T);
    if (tfe__rng_unif(rng) >= exp(-beta * dE)) return false;
  }
  if (tfe__bs_count(s->x, W) > TFE_MAX_RANK) return false;
  /* Apply: X becomes (A, keep), p becomes (X, out). */
  memcpy(TFE__BS(s->L, W, X), s->x, (size_t)W * sizeof(uint64_t));
  s->lc[X] = A; s->rc[X] = keep; s->par[A] = X; s->par[keep] = X;
  s->lc[p] = X; s->rc[p] = out; s->par[out] = p;
  s->lf[X] = lfx; s->ls[X] = lsx; s->lf[p] = lfp;
  s->term[X] = tx; s->term[p] = tfe__ein_sa_term(s, p);
  s->T += dT;
  return true;
}

/* Anneals tree t in place for `budget` seconds (score model: flops + ww * writes), and at least
 * min_sweeps sweeps (one try per internal node each): the schedule then advances by whichever
 * of the two is behind, so a preempted thread does not end with a cold-started tree. The sweeps
 * made go to *sweeps (may be NULL). */
TFE_INTERNAL tfe_status tfe__ein_anneal(const tfe__ein_net *net, double ww, double budget, uint64_t seed,
                                       tfe__ein_tree *t, long min_sweeps, long *sweeps) {
  int n = net->n;
  if (sweeps) *sweeps = 0;
  if (n < 3 || budget <= 0) return TFE_OK;
  tfe__ein_sa s;
  memset(&s, 0, sizeof s);
  s.net = net; s.n = n; s.N = 2 * n - 1; s.W = net->W; s.ww = ww;
  size_t N = (size_t)s.N;
  int *iw = (int *)tfe__alloc(N * 8 * sizeof(int));
  double *dw = (double *)tfe__alloc(N * 3 * sizeof(double));
  s.L = (uint64_t *)tfe__alloc((N + 2) * (size_t)s.W * sizeof(uint64_t));
  if (!iw || !dw || !s.L) { tfe__free(iw); tfe__free(dw); tfe__free(s.L); return TFE_ERR_ALLOC; }
  s.lc = iw; s.rc = iw + N; s.par = iw + 2 * N;
  int *blc = iw + 3 * N, *brc = iw + 4 * N, *stack = iw + 5 * N, *id = iw + 6 * N, *inner = iw + 7 * N;
  s.lf = dw; s.ls = dw + N; s.term = dw + 2 * N;
  s.u = TFE__BS(s.L, s.W, N); s.x = TFE__BS(s.L, s.W, N + 1);
  tfe_status st = tfe__ein_sa_load(&s, t);
  if (st == TFE_OK) {
    tfe__rng rng = {seed ? seed : 0xA11EA1};
    double best = s.T, t0 = tfe__ein_pclock(), beta0 = 2.0, beta1 = 2000.0;
    int broot = s.root;
    memcpy(blc, s.lc, N * sizeof(int)); memcpy(brc, s.rc, N * sizeof(int));
    int ni = 0;
    for (int v = n; v < s.N; v++) inner[ni++] = v;
    for (long sw = 0;; sw++) {
      double frac = (tfe__ein_pclock() - t0) / budget;
      if (sw < min_sweeps && (double)sw / (double)min_sweeps < frac) frac = (double)sw / (double)min_sweeps;
      if (frac >= 1) { if (sweeps) *sweeps = sw; break; }
      double beta = beta0 * pow(beta1 / beta0, frac); /* geometric schedule */
      for (int sweep = 0; sweep < ni; sweep++) tfe__ein_sa_try(&s, inner[tfe__rng_int(&rng, ni)], beta, &rng);
      s.T = 0; /* refresh the running sum: additions of far-apart magnitudes drift */
      for (int v = n; v < s.N; v++) s.T += s.term[v];
      if (s.T < best * (1 - 1e-12)) {
        best = s.T; broot = s.root;
        memcpy(blc, s.lc, N * sizeof(int)); memcpy(brc, s.rc, N * sizeof(int));
      }
    }
    tfe__ein_sa_store(&s, blc, brc, broot, t, stack, id);
  }
  tfe__free(iw); tfe__free(dw); tfe__free(s.L);
  return st;
}

/* ---- subtree reconfiguration ----------------------------------------------------------------------- */
/* For every internal node v, the most expensive steps first, grows a subtree below v to k
 * frontier nodes (expanding the largest intermediates first), re-solves that subtree exactly by
 * DP and keeps the result when cheaper (spliced in place: the subtree's internal nodes keep their
 * ids, so the pass order stays valid). Repeats passes until nothing improves or `until`
 * (tfe__ein_pclock time) passes. The expensive steps first: in a small allowance a pass over a
 * large network does not finish, and most of the cost sits in a few steps (gm_queen5_5_3). */
TFE_INTERNAL tfe_status tfe__ein_reconf(const tfe__ein_net *net, double ww, int k, double until, tfe__ein_tree *t) {
  int n = net->n, W = net->W;
  if (n < 4) return TFE_OK;
  if (k > 12) k = 12;
  tfe__ein_sa s;
  memset(&s, 0, sizeof s);
  s.net = net; s.n = n; s.N = 2 * n - 1; s.W = W; s.ww = ww;
  size_t N = (size_t)s.N;
  int *iw = (int *)tfe__alloc(N * 6 * sizeof(int));
  double *dw = (double *)tfe__alloc(N * 3 * sizeof(double));
  s.L = (uint64_t *)tfe__alloc((N + 2 + 2 * (size_t)k) * (size_t)W * sizeof(uint64_t));
  tfe__ein_net sub;
  memset(&sub, 0, sizeof sub);
  tfe__ein_tree st_t = {0, NULL};
  tfe_status st = (!iw || !dw || !s.L) ? TFE_ERR_ALLOC : tfe__ein_net_new(k, net->nlab, net->lsize, &sub);
  if (st == TFE_OK) st = tfe__ein_tree_new(k, &st_t);
  if (st != TFE_OK) goto done;
  s.lc = iw; s.rc = iw + N; s.par = iw + 2 * N;
  int *stack = iw + 3 * N, *id = iw + 4 * N, *order = iw + 5 * N;
  s.lf = dw; s.ls = dw + N; s.term = dw + 2 * N;
  s.u = TFE__BS(s.L, W, N); s.x = TFE__BS(s.L, W, N + 1);
  uint64_t *Ls = TFE__BS(s.L, W, N + 2); /* the re-solved subtree's label sets, 2k - 1 */
  if ((st = tfe__ein_sa_load(&s, t)) != TFE_OK) goto done;
  for (bool improved = true; improved && tfe__ein_pclock() < until;) {
    improved = false;
    int no = 0;
    for (int v = n; v < s.N; v++) { /* internal nodes by falling step cost (insertion sort) */
      int j = no++;
      while (j > 0 && s.lf[order[j - 1]] < s.lf[v]) { order[j] = order[j - 1]; j--; }
      order[j] = v;
    }
    for (int oi = 0; oi < no && st == TFE_OK; oi++) {
      int v = order[oi];
      if (tfe__ein_pclock() >= until) break;
      int front[12], inner[12], nf = 2, ni = 1;
      front[0] = s.lc[v]; front[1] = s.rc[v]; inner[0] = v;
      while (nf < k) {
        int best = -1;
        for (int q = 0; q < nf; q++)
          if (front[q] >= n && (best < 0 || s.ls[front[q]] > s.ls[front[best]])) best = q;
        if (best < 0) break;
        int f = front[best];
        inner[ni++] = f;
        front[best] = s.lc[f]; front[nf++] = s.rc[f];
      }
      if (nf < 3) continue;
      double cur = 0;
      for (int q = 0; q < ni; q++) cur += exp2(s.lf[inner[q]]) + (q ? ww * exp2(s.ls[inner[q]]) : 0);
      sub.n = nf;
      for (int q = 0; q < nf; q++) memcpy(TFE__BS(sub.leaf, W, q), TFE__BS(s.L, W, front[q]), (size_t)W * 8);
      sub.out = TFE__BS(sub.leaf, W, nf);
      memcpy(sub.out, TFE__BS(s.L, W, v), (size_t)W * 8);
      st_t.n = nf;
      if ((st = tfe__ein_dp(&sub, ww, &st_t)) != TFE_OK) break;
      tfe_einsum_cost c;
      double score = 0;
      if ((st = tfe__ein_tree_cost(&sub, &st_t, ww, &c, &score)) != TFE_OK) break;
      score -= ww * exp2(s.ls[v]); /* the subtree root's size is the same either way */
      if (!(score < cur * (1 - 1e-9))) continue;
      /* splice: sub internal node q -> inner id (its root -> v), with its labels and costs */
      if ((st = tfe__ein_tree_labels(&sub, &st_t, Ls)) != TFE_OK) break;
      int map[24];
      for (int q = 0; q < nf; q++) map[q] = front[q];
      for (int q = 0; q + 1 < nf; q++) map[nf + q] = q + 2 == nf ? v : inner[q + 1];
      for (int q = 0; q + 1 < nf; q++) {
        int me = map[nf + q], a = map[st_t.ch[2 * q]], b = map[st_t.ch[2 * q + 1]];
        s.lc[me] = a; s.rc[me] = b; s.par[a] = me; s.par[b] = me;
        if (me != v) memcpy(TFE__BS(s.L, W, me), TFE__BS(Ls, W, nf + q), (size_t)W * 8);
        for (int w = 0; w < W; w++) s.u[w] = TFE__BS(s.L, W, a)[w] | TFE__BS(s.L, W, b)[w];
        s.lf[me] = tfe__bs_log2(s.u, W, net->lsize);
        s.ls[me] = tfe__bs_log2(TFE__BS(s.L, W, me), W, net->lsize);
        s.term[me] = tfe__ein_sa_term(&s, me);
      }
      improved = true;
    }
  }
  if (st == TFE_OK) tfe__ein_sa_store(&s, s.lc, s.rc, s.root, t, stack, id);
done:
  tfe__free(iw); tfe__free(dw); tfe__free(s.L); tfe__ein_net_free(&sub); tfe__ein_tree_free(&st_t);
  return st;
}

/* ---- slicing ------------------------------------------------------------------------------------ */
/* Chooses labels to slice so that no intermediate (the output excluded) exceeds 2^limit_log2
 * elements. lsize is modified in place (sliced labels get log2 size 0); the chosen labels are
 * written to sliced[] (count in *nsliced). Each round picks, among the labels of the largest
 * intermediate, the one whose slicing adds the fewest total flops. */
TFE_INTERNAL tfe_status tfe__ein_slice(tfe__ein_net *net, double *lsize, const tfe__ein_tree *t, double limit_log2,
                                      int *sliced, int *nsliced) {
  int n = net->n, W = net->W;
  *nsliced = 0;
  if (n < 3) return TFE_OK; /* a single step writes only the output */
  uint64_t *L = (uint64_t *)tfe__alloc((size_t)(2 * n) * (size_t)W * sizeof(uint64_t));
  if (!L) return TFE_ERR_ALLOC;
  tfe_status st = TFE_OK;
  for (;;) {
    if ((st = tfe__ein_tree_labels(net, t, L)) != TFE_OK) break;
    int big = -1;
    double bigs = -1;
    for (int k = 0; k + 2 < n; k++) {
      double s = tfe__bs_log2(TFE__BS(L, W, n + k), W, lsize);
      if (s > bigs) { bigs = s; big = n + k; }
    }
    if (big < 0 || bigs <= limit_log2 + 1e-9) break;
    int bestl = -1;
    double bestf = INFINITY;
    const uint64_t *B = TFE__BS(L, W, big);
    for (int l = 0; l < net->nlab; l++) {
      if (!tfe__bs_test(B, l) || lsize[l] <= 0) continue;
      double keep = lsize[l];
      lsize[l] = 0;
      tfe_einsum_cost c;
      st = tfe__ein_tree_cost(net, t, 0, &c, NULL);
      lsize[l] = keep;
      if (st != TFE_OK) break;
      double f = c.flops * exp2(keep);
      if (f < bestf) { bestf = f; bestl = l; }
    }
    if (st != TFE_OK) break;
    if (bestl < 0) {
      st = TFE_FAIL(TFE_ERR_UNSUPPORTED, "slicing cannot bring the largest intermediate (2^%.1f elements) under the memory limit", bigs);
      break;
    }
    lsize[bestl] = 0;
    sliced[(*nsliced)++] = bestl;
  }
  tfe__free(L);
  return st;
}
#endif
