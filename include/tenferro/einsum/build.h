/* tenferro/einsum/build.h — einsum room: building a plan.
 *
 * From the bound expression: the contraction tree (the chosen optimizer per parenthesised
 * group, path.h and anneal.h), the slicing to the memory limit, the leaf reductions and
 * pairwise steps with the label order of every intermediate (GEMM-ready orders chosen
 * top-down from the output), the buffers and their first-fit offsets in one arena, and the
 * path in opt_einsum's linear format. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_BUILD_H
#define TENFERRO_EINSUM_BUILD_H
#include <tenferro/einsum/plan.h>

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

#endif
#elif !defined(TENFERRO_EINSUM_BUILD_BODY) /* bodies */
#define TENFERRO_EINSUM_BUILD_BODY
#include <tenferro/einsum/anneal.h>

/* ---- building: the tree over groups ----------------------------------------------------------- */
/* TFE_PATH_AUTO with a time budget (docs/einsum.md, "Planning time"): greedy runs, annealing
 * chains, the interval DP over the best tree's leaf order and subtree re-solution, each
 * stopping at its share (20%, 85%, -, 100%) of tfe__ein_allow: a share of the estimated
 * contraction time of the best tree so far, between einsum_plan_floor and the budget, so the
 * time shrinks as the path improves and a cheap contraction is planned in milliseconds. The
 * planning clock counts work (einsum_plan_work_rate), so a seed gives the same path under any
 * load. Every chain starts from the best greedy tree with its own seed (a chain settles in one
 * basin: many short ones from the same start sample more basins than chains that continue from
 * the best so far); a floor-sized allowance runs 16 of them (lm_batch_likelihood: 0 of 100 seeds
 * above 1.05 of opt_flops, against 8 of 40 with three chains of a quarter each). When the first
 * chain does not improve on its start at all or makes under 100 sweeps, the allowance is too
 * small to anneal a network of this size, and the rest goes to subtree re-solution (gm_queen5_5_3,
 * 160 tensors, about 50 sweeps a chain). docs/benchmarks.md, "Session 13". */
TFE_INTERNAL tfe_status tfe__ein_auto(tfe__ein_net *net, const tfe_einsum_opts *o, tfe__ein_tree *t) {
  int n = net->n, m = 2 * (n - 1);
  double t0 = tfe__ein_pclock(), cap = o->time_budget, bscore;
  TFE_TRY(tfe__ein_greedy(net, o, t, NULL, 0, 0.2, t0, cap));
  tfe_einsum_cost c;
  TFE_TRY(tfe__ein_tree_cost(net, t, o->write_weight, &c, &bscore));
  double allow = tfe__ein_allow(net, c.flops + c.writes, cap), gscore = bscore;
  uint64_t seed = o->seed ? o->seed : 0xA11EA1;
  bool work = tfe__st.tune.einsum_plan_work_rate > 0; /* on CPU time: the first chain's sweeps are guaranteed */
  tfe__ein_tree cur, best;
  int *ord = (int *)tfe__alloc((size_t)(3 * n) * sizeof(int));
  if (!ord) return TFE_ERR_ALLOC;
  tfe_status st = tfe__ein_tree_new(n, &cur);
  if (st != TFE_OK) { tfe__free(ord); return st; }
  if ((st = tfe__ein_tree_new(n, &best)) != TFE_OK) { tfe__ein_tree_free(&cur); tfe__free(ord); return st; }
  memcpy(best.ch, t->ch, (size_t)m * sizeof(int));
  for (int r = 0; st == TFE_OK; r++) { /* chains as in tfe__ein_optimize, within 85% of allow */
    long sweeps = 0;
    double chain = 0.75 * allow / 32, left = t0 + 0.85 * allow - tfe__ein_pclock();
    if (chain < 0.02) chain = 0.02 < allow / 16 ? 0.02 : allow / 16; /* a small allowance: 16 chains */
    if (left <= 0.5 * chain && r > 0) break;
    if (left < 1e-3) left = 1e-3; /* the first chain runs */
    memcpy(cur.ch, t->ch, (size_t)m * sizeof(int));
    st = tfe__ein_anneal(net, o->write_weight, left < chain ? left : chain, seed + 7919u * (uint64_t)r, &cur,
                         r == 0 && !work ? (n < 100 ? 500 : 50000 / n) : 0, &sweeps); /* 5e4 tries at least */
    double sc = INFINITY;
    if (st == TFE_OK) st = tfe__ein_tree_cost(net, &cur, o->write_weight, &c, &sc);
    if (st == TFE_OK && sc < bscore) {
      bscore = sc; memcpy(best.ch, cur.ch, (size_t)m * sizeof(int));
      allow = tfe__ein_allow(net, c.flops + c.writes, cap);
    }
    /* a first chain that does not improve on its start, or gets under 100 sweeps: annealing gets
     * nowhere in this allowance on a network of this size */
    if (r == 0 && (!(sc < gscore * (1 - 1e-9)) || sweeps < 100)) break;
  }
  if (st == TFE_OK && n <= 64) { /* the best tree among those of its leaf order: cannot lose */
    double sc;
    tfe__ein_tree_order(&best, ord, ord + n);
    st = tfe__ein_order_dp(net, o->write_weight, ord, &cur, &sc);
    if (st == TFE_OK && sc < bscore * (1 - 1e-12)) { bscore = sc; memcpy(best.ch, cur.ch, (size_t)m * sizeof(int)); }
  }
  if (st == TFE_OK) memcpy(t->ch, best.ch, (size_t)m * sizeof(int));
  tfe__ein_tree_free(&cur); tfe__ein_tree_free(&best); tfe__free(ord);
  TFE_TRY(st);
  return tfe__ein_reconf(net, o->write_weight, 7, t0 + allow, t);
}

/* ---- networks that fall apart --------------------------------------------------------------------- */
/* Parts of a network: tensors linked by labels outside the output (union-find); part[i] of
 * tensor i, numbered 0.. in order of first tensor; returns the count. */
TFE_INTERNAL int tfe__ein_part_of(const tfe__ein_net *net, int *part, int *root) {
  int n = net->n, W = net->W, np = 0;
  for (int i = 0; i < n; i++) root[i] = i;
  for (int l = 0; l < net->nlab; l++) {
    if (tfe__bs_test(net->out, l)) continue;
    int first = -1;
    for (int i = 0; i < n; i++) {
      if (!tfe__bs_test(TFE__BS(net->leaf, W, i), l)) continue;
      int a = i, b = first;
      while (root[a] != a) a = root[a];
      if (b >= 0) { while (root[b] != b) b = root[b]; root[a > b ? a : b] = a < b ? a : b; }
      first = first < 0 ? i : first;
    }
  }
  for (int i = 0; i < n; i++) {
    int a = i;
    while (root[a] != a) a = root[a];
    part[i] = a == i ? np++ : part[a];
  }
  return np;
}
/* Whether part q repeats part r (member lists mq, mr of m tensors each): the same tensors in the
 * same order up to a renaming of labels that keeps sizes and output membership, built tensor by
 * tensor: labels met before must correspond, new ones pair up by size, output membership and the
 * positions of the tensors holding them (h: a hash of those positions per label, 2 * nlab
 * words). Every tensor's set is checked under the renaming, so a match is an isomorphism and the
 * same local tree is as good; a hash collision can only miss a match (a second plan).
 * map: 2 * nlab ints. */
TFE_INTERNAL bool tfe__ein_part_same(const tfe__ein_net *net, const int *mq, const int *mr, int m, int *map, uint64_t *h) {
  int W = net->W, *inv = map + net->nlab;
  uint64_t *ha = h, *hb = h + net->nlab;
  for (int l = 0; l < net->nlab; l++) map[l] = inv[l] = -1, ha[l] = hb[l] = 0;
  for (int k = 0; k < m; k++) {
    const uint64_t *a = TFE__BS(net->leaf, W, mq[k]), *b = TFE__BS(net->leaf, W, mr[k]);
    for (int l = tfe__bs_next(a, W, 0); l >= 0; l = tfe__bs_next(a, W, l + 1)) ha[l] = ha[l] * 0x9E3779B97F4A7C15ULL + (uint64_t)k + 1;
    for (int l = tfe__bs_next(b, W, 0); l >= 0; l = tfe__bs_next(b, W, l + 1)) hb[l] = hb[l] * 0x9E3779B97F4A7C15ULL + (uint64_t)k + 1;
  }
  for (int k = 0; k < m; k++) {
    const uint64_t *a = TFE__BS(net->leaf, W, mq[k]), *b = TFE__BS(net->leaf, W, mr[k]);
    if (tfe__bs_count(a, W) != tfe__bs_count(b, W)) return false;
    int na[TFE_MAX_RANK * 2], nb[TFE_MAX_RANK * 2], ca = 0, cb = 0;
    for (int l = tfe__bs_next(a, W, 0); l >= 0; l = tfe__bs_next(a, W, l + 1)) {
      if (map[l] >= 0) { if (!tfe__bs_test(b, map[l])) return false; }
      else if (ca < TFE_MAX_RANK * 2) na[ca++] = l;
      else return false;
    }
    for (int l = tfe__bs_next(b, W, 0); l >= 0; l = tfe__bs_next(b, W, l + 1)) {
      if (inv[l] >= 0) { if (!tfe__bs_test(a, inv[l])) return false; }
      else if (cb < TFE_MAX_RANK * 2) nb[cb++] = l;
      else return false;
    }
    if (ca != cb) return false;
    for (int i = 0; i < ca; i++) { /* the i-th new label of a pairs with the first unpaired alike of b */
      int j = 0, la = na[i];
      while (j < cb && (nb[j] < 0 || ha[la] != hb[nb[j]] || net->lsize[nb[j]] != net->lsize[la] ||
                        tfe__bs_test(net->out, nb[j]) != tfe__bs_test(net->out, la)))
        j++;
      if (j == cb) return false;
      map[la] = nb[j]; inv[nb[j]] = la; nb[j] = -1;
    }
  }
  return true;
}
TFE_INTERNAL tfe_status tfe__ein_optimize(tfe__ein_net *net, const tfe_einsum_opts *o, tfe__ein_tree *t);
/* TFE_PATH_AUTO with a budget on a network that falls apart into parts linked only by output
 * labels (a batch of independent sentences): each part is planned as its own network, a part
 * that repeats an earlier one (tfe__ein_part_same) takes that one's tree, the planning time is
 * shared among the distinct parts by tensor count, and the parts' results are joined last, the
 * pair with the smallest result first (a batched product before an outer product). Annealing
 * the whole instead lands one part in a worse basin in about half the seeds (lm_batch: one step
 * 4x too large; docs/benchmarks.md "Planning time"). *done when it applied. */
TFE_INTERNAL tfe_status tfe__ein_parts(tfe__ein_net *net, const tfe_einsum_opts *o, tfe__ein_tree *t, bool *done) {
  int n = net->n, W = net->W;
  *done = false;
  int *iw = (int *)tfe__alloc((size_t)(6 * n + 2 * net->nlab + 2) * sizeof(int));
  if (!iw) return TFE_ERR_ALLOC;
  int *part = iw, *root = iw + n, *mem = iw + 2 * n, *start = iw + 3 * n, *same = iw + 4 * n + 1, *node = iw + 5 * n + 1,
      *map = iw + 6 * n + 1;
  int np = tfe__ein_part_of(net, part, root);
  if (np < 2 || np == n) { tfe__free(iw); return TFE_OK; } /* one part, or nothing but outer products */
  uint64_t *hw = (uint64_t *)tfe__alloc((size_t)(2 * net->nlab + 2) * sizeof(uint64_t));
  if (!hw) { tfe__free(iw); return TFE_ERR_ALLOC; }
  /* members of each part, in tensor order: mem[start[q] .. start[q + 1]) */
  for (int q = 0; q <= np; q++) start[q] = 0;
  for (int i = 0; i < n; i++) start[part[i] + 1]++;
  for (int q = 0; q < np; q++) start[q + 1] += start[q];
  {
    int *pos = root; /* reuse */
    for (int q = 0; q < np; q++) pos[q] = start[q];
    for (int i = 0; i < n; i++) mem[pos[part[i]]++] = i;
  }
  int distinct = 0;
  for (int q = 0; q < np; q++) {
    int m = start[q + 1] - start[q];
    same[q] = -1;
    for (int r = 0, tried = 0; r < q && same[q] < 0 && tried < 8; r++) /* the first 8 distinct parts of this size */
      if (same[r] < 0 && start[r + 1] - start[r] == m && ++tried && tfe__ein_part_same(net, mem + start[r], mem + start[q], m, map, hw))
        same[q] = r;
    if (same[q] < 0) distinct += m;
  }
  tfe_status st = TFE_OK;
  tfe__ein_tree *pt = (tfe__ein_tree *)tfe__calloc((size_t)np, sizeof *pt);
  if (!pt) st = TFE_ERR_ALLOC;
  int k = 0; /* next global step */
  for (int q = 0; st == TFE_OK && q < np; q++) {
    int m = start[q + 1] - start[q], *mq = mem + start[q];
    if (m == 1) { node[q] = mq[0]; continue; }
    if (same[q] < 0) { /* plan it */
      tfe__ein_net sub;
      if ((st = tfe__ein_net_new(m, net->nlab, net->lsize, &sub)) != TFE_OK) break;
      for (int w = 0; w < W; w++) sub.out[w] = 0;
      for (int j = 0; j < m; j++) {
        memcpy(TFE__BS(sub.leaf, W, j), TFE__BS(net->leaf, W, mq[j]), (size_t)W * 8);
        for (int w = 0; w < W; w++) sub.out[w] |= TFE__BS(net->leaf, W, mq[j])[w] & net->out[w];
      }
      sub.tshare = (net->tshare > 0 ? net->tshare : 1) * (double)m / (double)distinct;
      if ((st = tfe__ein_tree_new(m, &pt[q])) == TFE_OK) st = tfe__ein_optimize(&sub, o, &pt[q]);
      tfe__ein_net_free(&sub);
      if (st != TFE_OK) break;
    }
    const tfe__ein_tree *lt = &pt[same[q] < 0 ? q : same[q]];
    for (int j = 0; j + 1 < m; j++, k++) { /* local ids -> global: members, then this part's steps */
      int a = lt->ch[2 * j], b = lt->ch[2 * j + 1];
      t->ch[2 * k] = a < m ? mq[a] : n + (k - j) + (a - m);
      t->ch[2 * k + 1] = b < m ? mq[b] : n + (k - j) + (b - m);
    }
    node[q] = n + k - 1;
  }
  if (st == TFE_OK) { /* join the parts' results: the pair with the smallest result first */
    uint64_t *L = (uint64_t *)tfe__calloc((size_t)(np + 1) * (size_t)W, sizeof(uint64_t));
    if (!L) st = TFE_ERR_ALLOC;
    for (int q = 0; st == TFE_OK && q < np; q++)
      for (int j = start[q]; j < start[q + 1]; j++)
        for (int w = 0; w < W; w++) TFE__BS(L, W, q)[w] |= TFE__BS(net->leaf, W, mem[j])[w] & net->out[w];
    for (int left = np; st == TFE_OK && left > 1; left--) {
      int a = -1, b = -1;
      double best = INFINITY;
      uint64_t *u = TFE__BS(L, W, np);
      for (int x = 0; x < left; x++)
        for (int y = x + 1; y < left; y++) {
          for (int w = 0; w < W; w++) u[w] = TFE__BS(L, W, x)[w] | TFE__BS(L, W, y)[w];
          double ls = tfe__bs_log2(u, W, net->lsize);
          if (ls < best - 1e-9) { best = ls; a = x; b = y; }
        }
      t->ch[2 * k] = node[a]; t->ch[2 * k + 1] = node[b];
      for (int w = 0; w < W; w++) TFE__BS(L, W, a)[w] |= TFE__BS(L, W, b)[w];
      node[a] = n + k++;
      node[b] = node[left - 1];
      memcpy(TFE__BS(L, W, b), TFE__BS(L, W, left - 1), (size_t)W * 8);
    }
    tfe__free(L);
  }
  if (st == TFE_OK && k != n - 1) st = TFE_FAIL(TFE_ERR_INTERNAL, "parts tree has %d steps, expected %d", k, n - 1);
  for (int q = 0; pt && q < np; q++) tfe__ein_tree_free(&pt[q]);
  tfe__free(pt); tfe__free(iw); tfe__free(hw);
  *done = st == TFE_OK;
  return st;
}

/* Runs the chosen optimizer on one network. */
TFE_INTERNAL tfe_status tfe__ein_optimize(tfe__ein_net *net, const tfe_einsum_opts *o, tfe__ein_tree *t) {
  int n = net->n;
  if (n < 2) return TFE_OK;
  if (n == 2) { t->ch[0] = 0; t->ch[1] = 1; return TFE_OK; }
  int dpmax = o->dp_max > 0 ? o->dp_max : 12;
  if (o->algo == TFE_PATH_DP || (o->algo == TFE_PATH_AUTO && n <= dpmax))
    return tfe__ein_dp(net, o->write_weight, t);
  if (o->algo == TFE_PATH_AUTO) {
    bool done;
    TFE_TRY(tfe__ein_chain_dp(net, o->write_weight, t, &done));
    if (done) return TFE_OK;
    if (o->time_budget > 0) {
      TFE_TRY(tfe__ein_parts(net, o, t, &done));
      if (done) return TFE_OK;
      return tfe__ein_auto(net, o, t);
    }
  }
  double budget = o->algo == TFE_PATH_ANNEAL ? (o->time_budget > 0 ? o->time_budget : 1.0)
                : o->algo == TFE_PATH_AUTO ? o->time_budget : 0;
  double t0 = tfe__ein_pclock();
  /* 15% of the budget on randomized greedy runs; then independent short annealing chains,
   * each from the best greedy tree with its own seed, the best kept: one long chain settles
   * in one basin, several short ones sample several basins (docs/bench-prims.md, "Annealing
   * chains"); every other chain continues from the best tree so far (re-heating it). */
  TFE_TRY(tfe__ein_greedy(net, o, t, NULL, budget > 0 ? t0 + 0.15 * budget : 0, 0, 0, 0));
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
      double left = t0 + 0.9 * budget - tfe__ein_pclock();
      if (left <= 0.5 * chain && r > 0) break;
      memcpy(cur.ch, (r & 1) ? best.ch : t->ch, (size_t)m * sizeof(int));
      st = tfe__ein_anneal(net, o->write_weight, left < chain ? left : chain, seed + 7919u * (uint64_t)r, &cur, 0, NULL);
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

/* The layout and labels operand id is read with when it is fixed before the orders are
 * chosen (a leaf, or its reduction); false for an intermediate (its order is chosen). */
TFE_INTERNAL bool tfe__ein_fixed(const tfe_einsum_plan *p, int id, const tfe_layout **L, const int32_t **lab) {
  if (id >= p->n) return false;
  if (p->leaf[id].pre >= 0) { *L = &p->pre[p->leaf[id].pre].lay; *lab = p->pre[p->leaf[id].pre].lab; }
  else { *L = &p->leaf[id].lay; *lab = p->leaf[id].lab; }
  return true;
}
/* How far order o[0..r) of node v (an intermediate) is from what its producing step writes
 * without scattering: the number of places where two neighbours of o cannot share one GEMM
 * dimension of the producer — they come from different operands (free labels of its left
 * operand, of its right one, batch labels), or from the same fixed operand where the second
 * does not continue the first's stride (stride * dim). Labels from an intermediate operand
 * never break (that operand's order follows v's). */
TFE_INTERNAL int tfe__ein_prod_breaks(const tfe_einsum_plan *p, const uint64_t *L, int W, int v, const int32_t *o,
                                      int r) {
  int n = p->n, x = p->step[v - n].a, y = p->step[v - n].b, src[TFE_MAX_RANK], brk = 0;
  const uint64_t *Lx = TFE__BS(L, W, x), *Ly = TFE__BS(L, W, y);
  for (int i = 0; i < r; i++) src[i] = tfe__bs_test(Lx, o[i]) ? (tfe__bs_test(Ly, o[i]) ? 2 : 0) : 1;
  for (int i = 0; i + 1 < r; i++) {
    if (src[i] != src[i + 1]) { brk++; continue; }
    const tfe_layout *FL;
    const int32_t *fl;
    for (int q = 0; q < 2; q++) { /* a batch label continues in both operands */
      if (src[i] != 2 && src[i] != q) continue;
      if (!tfe__ein_fixed(p, q ? y : x, &FL, &fl)) continue;
      int a = tfe__ein_pos(fl, FL->rank, o[i]), b = tfe__ein_pos(fl, FL->rank, o[i + 1]);
      if (a < 0 || b < 0 || FL->strides[b] != FL->strides[a] * FL->dims[a]) { brk++; break; }
    }
  }
  return brk;
}

/* Chooses the label order of every intermediate, top-down from the output: for a step
 * C = A * B, the left operand stores (free, contracted, batch) and the right one
 * (contracted, free, batch) in column-major order — the GEMM-ready shapes — with free and
 * batch labels in the order of the result and contracted labels in the order the sibling
 * already stores them when it is an operand. The transposed block order, (contracted, free,
 * batch) for the left operand and (free, contracted, batch) for the right, is as GEMM-ready
 * for the consumer; it is taken when the step that produces the intermediate then writes it
 * with fewer scattered dimensions (tfe__ein_prod_breaks): in a chain E(b,e) A(b,s,c) -> T,
 * T(e,s,c) is the producer's natural (m, n) output and a transposed left operand of
 * T(e,s,c) B(e,s,f), where (c,e,s) would make every step write across its columns. */
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
      int32_t *o = ord[c], alt[TFE_MAX_RANK];
      if (side == 0) { for (int i = 0; i < nf; i++) o[r++] = F[i]; for (int i = 0; i < nk; i++) o[r++] = K[i]; }
      else { for (int i = 0; i < nk; i++) o[r++] = K[i]; for (int i = 0; i < nf; i++) o[r++] = F[i]; }
      for (int i = 0; i < nb; i++) o[r++] = Bt[i];
      ordn[c] = r;
      if (nf > 0 && nk > 0) { /* the other block order, when its producer writes it better */
        int a0 = side == 0 ? nk : nf, a1 = r - nb - a0; /* the second block first */
        for (int i = 0; i < a0; i++) alt[i] = o[a1 + i];
        for (int i = 0; i < a1; i++) alt[a0 + i] = o[i];
        for (int i = a0 + a1; i < r; i++) alt[i] = o[i];
        if (tfe__ein_prod_breaks(p, L, W, c, alt, r) < tfe__ein_prod_breaks(p, L, W, c, o, r))
          memcpy(o, alt, (size_t)r * sizeof(int32_t));
      }
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
    if (!tfe_layout_extent(&p->in[k], &p->in_ext[k][0], &p->in_ext[k][1])) { p->in_ext[k][0] = 1; p->in_ext[k][1] = 0; }
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

/* log2 of the slice count: the sizes that slicing took out of lsize (full: the sizes before). */
TFE_INTERNAL double tfe__ein_sliced_log2(const double *full, const double *lsize, int nl) {
  double s = 0;
  for (int l = 0; l < nl; l++) s += full[l] - lsize[l];
  return s;
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
  p->slice_workers = 1;
  if (o->memory_limit <= 0) return TFE_OK;
  double elems = (double)o->memory_limit / (double)p->elem;
  if (elems < 1)
    return TFE_FAIL(TFE_ERR_INVALID, "memory limit of %lld bytes is below one element", (long long)o->memory_limit);
  int *tmp = (int *)tfe__alloc((size_t)(nl + 1) * sizeof(int));
  double *keep = (double *)tfe__alloc((size_t)(nl + 1) * sizeof(double));
  if (!tmp || !keep) { tfe__free(tmp); tfe__free(keep); return TFE_ERR_ALLOC; }
  memcpy(keep, w->lsize, (size_t)nl * sizeof(double));
  tfe_status st = tfe__ein_slice(&w->net, w->lsize, &w->tree, log2(elems), tmp, &p->nsliced);
  /* Slices run concurrently on the threads (einsum_tpl.h): when the network needs slicing,
   * slice it for the memory limit divided among the threads, so that every running slice's
   * intermediates fit its share; if that cannot be met, one slice at a time. */
  int th = tfe_get_num_threads();
  if (st == TFE_OK && p->nsliced > 0 && th > 1 && elems / th >= 1) {
    /* kept only when the finer slicing adds at most 10% to the total multiply-adds (per-slice
     * cost times the slices) and a slice is small (at most 2^24 multiply-adds): large slices
     * run faster one at a time on threaded kernels and BLIS (mera at 64 MiB, 16-core Xeon: 2
     * threads 1.69x the 1-thread time that way, 1.34x as parallel slices; docs/benchmarks.md) */
    tfe_einsum_cost c1, cT;
    double f1 = 0, fT = INFINITY;
    st = tfe__ein_tree_cost(&w->net, &w->tree, 0, &c1, NULL);
    if (st == TFE_OK) f1 = c1.flops * exp2(tfe__ein_sliced_log2(keep, w->lsize, nl));
    memcpy(w->lsize, keep, (size_t)nl * sizeof(double));
    if (st == TFE_OK && tfe__ein_slice(&w->net, w->lsize, &w->tree, log2(elems / th), tmp, &p->nsliced) == TFE_OK &&
        tfe__ein_tree_cost(&w->net, &w->tree, 0, &cT, NULL) == TFE_OK)
      fT = cT.flops * exp2(tfe__ein_sliced_log2(keep, w->lsize, nl));
    if (st == TFE_OK && fT <= f1 * 1.1 && cT.flops <= 0x1p24) p->slice_workers = th;
    else if (st == TFE_OK) { /* back to the slicing for the whole limit, one slice at a time */
      tfe_clear_error();
      memcpy(w->lsize, keep, (size_t)nl * sizeof(double));
      st = tfe__ein_slice(&w->net, w->lsize, &w->tree, log2(elems), tmp, &p->nsliced);
    }
  }
  tfe__free(keep);
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

#endif
