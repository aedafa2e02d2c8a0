/* tenferro/contract_tpl.h — binary and unary contraction of one kind; re-included per kind.
 * Semiring arithmetic only through tfe_sr_*_S, so user kinds (TFE_ALG_CUSTOM) work too. */

/* ---- small helpers ------------------------------------------------------------------------ */
#if !TFE__BODY_PHASE

#include <tenferro/prims/small_gemm_tpl.h>

/* ---- describe -> plan -> execute ---------------------------------------------------------- */
/* Fills a descriptor (B == NULL: unary). Validation happens in tfe_contract_plan_create. */
TFE_API tfe_status TFE_FN(contract_describe)(tfe_contract_desc *d, const TFE_TY(view) *A, const int32_t *la,
                                             const TFE_TY(view) *B, const int32_t *lb, const TFE_TY(view) *C,
                                             const int32_t *lc);

/* Views must have the ranks, labels, dims and strides the plan was made for; data pointers
 * and offsets may differ. */
TFE_API tfe_status TFE_FN(contract_execute)(const tfe_contract_plan *P, TFE_T alpha, const TFE_TY(view) *A,
                                            const TFE_TY(view) *B, TFE_T beta, const TFE_TY(view) *C);

/* ---- public entry points ------------------------------------------------------------------ */
/* C = alpha * (sum over labels not in C of A*B) + beta * C, in the kind's semiring.
 * See docs/prims.md for the label rules. C is left untouched on any error. */
TFE_API tfe_status TFE_FN(contract)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                    const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                    const TFE_TY(view) *C, const int32_t *lc);

/* C = alpha * (sum over labels not in C of A) + beta * C: trace, partial sums, diagonal
 * extraction, permutation and embedding (repeated output labels) in one call. */
TFE_API tfe_status TFE_FN(contract_unary)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                          TFE_T beta, const TFE_TY(view) *C, const int32_t *lc);
#else /* bodies */
TFE_INTERNAL bool TFE_FN(pr_is_zero_)(TFE_T x) { return TFE_FN(sr_eq)(x, TFE_FN(sr_zero)()); }
TFE_INTERNAL bool TFE_FN(pr_is_one_)(TFE_T x) { return TFE_FN(sr_eq)(x, TFE_FN(sr_one)()); }

/* alpha*acc + beta*c, where beta == zero never reads c (so NaN in C does not leak). */
TFE_INTERNAL TFE_T TFE_FN(pr_axpby_)(TFE_T alpha, TFE_T acc, TFE_T beta, const TFE_T *c) {
  TFE_T r = TFE_FN(sr_mul)(alpha, acc);
  if (TFE_FN(pr_is_zero_)(beta)) return r;
  return TFE_FN(sr_add)(r, TFE_FN(sr_mul)(beta, *c));
}

/* C := beta * C over a whole layout (beta == zero writes zeros without reading). */
TFE_INTERNAL void TFE_FN(pr_scale_)(const tfe_layout *L, TFE_T *data, TFE_T beta) {
  if (TFE_FN(pr_is_one_)(beta) || tfe_layout_numel(L) == 0) return;
  bool zero = TFE_FN(pr_is_zero_)(beta);
  int64_t idx[TFE_MAX_RANK] = {0};
  int64_t off = L->offset;
  for (;;) {
    data[off] = zero ? TFE_FN(sr_zero)() : TFE_FN(sr_mul)(beta, data[off]);
    int d = 0;
    for (; d < L->rank; d++) {
      off += L->strides[d];
      if (++idx[d] < L->dims[d]) break;
      off -= L->strides[d] * L->dims[d];
      idx[d] = 0;
    }
    if (d == L->rank) return;
  }
}

/* The reference engine: odometer over the distinct output labels, inner odometer over the
 * summed labels. b == NULL means unary. Offsets are absolute element offsets. */
TFE_INTERNAL void TFE_FN(pr_naive_)(TFE_T alpha, const TFE_T *a, bool ca, const TFE_T *b, bool cb,
                                    TFE_T beta, TFE_T *c, const tfe__pr_prob *p) {
  int on = 0, rn = 0;
  int out[TFE__PR_MAXL], red[TFE__PR_MAXL];
  for (int j = 0; j < p->n; j++) {
    if (p->lab[j].dim == 0 && (p->lab[j].in & TFE__PR_IN_C)) return; /* empty output */
    if (p->lab[j].in & TFE__PR_IN_C) out[on++] = j; else red[rn++] = j;
  }
  int64_t oi[TFE__PR_MAXL] = {0}, ri[TFE__PR_MAXL] = {0};
  int64_t oa = 0, ob = 0, oc = 0;
  bool rempty = false;
  for (int r = 0; r < rn; r++) rempty = rempty || p->lab[red[r]].dim == 0;
  for (;;) {
    TFE_T acc = TFE_FN(sr_zero)();
    if (!rempty) {
      int64_t ra = oa, rb = ob;
      for (;;) {
        TFE_T x = a[ra];
        if (TFE_CPLX && ca) x = TFE_FN(sr_conj)(x);
        if (b) {
          TFE_T y = b[rb];
          if (TFE_CPLX && cb) y = TFE_FN(sr_conj)(y);
          x = TFE_FN(sr_mul)(x, y);
        }
        acc = TFE_FN(sr_add)(acc, x);
        int d = 0;
        for (; d < rn; d++) {
          const tfe__pr_lab *l = &p->lab[red[d]];
          ra += l->s[0]; rb += l->s[1];
          if (++ri[d] < l->dim) break;
          ra -= l->s[0] * l->dim; rb -= l->s[1] * l->dim;
          ri[d] = 0;
        }
        if (d == rn) break;
      }
    }
    c[oc] = TFE_FN(pr_axpby_)(alpha, acc, beta, &c[oc]);
    int d = 0;
    for (; d < on; d++) {
      const tfe__pr_lab *l = &p->lab[out[d]];
      oa += l->s[0]; ob += l->s[1]; oc += l->s[2];
      if (++oi[d] < l->dim) break;
      oa -= l->s[0] * l->dim; ob -= l->s[1] * l->dim; oc -= l->s[2] * l->dim;
      oi[d] = 0;
    }
    if (d == on) return;
  }
}

/* ---- argument checks shared by the front ends ------------------------------------------------ */
TFE_INTERNAL tfe_status TFE_FN(pr_check_views_)(const TFE_TY(view) *A, const TFE_TY(view) *B,
                                                const TFE_TY(view) *C, const char *where) {
  const TFE_TY(view) *v[3] = {A, B, C};
  for (int op = 0; op < 3; op++) {
    if (!v[op]) continue;
    if (!v[op]->data && tfe_layout_numel(&v[op]->lay) > 0)
      return tfe__fail(TFE_ERR_NULL, where, "data of %s is NULL", tfe__pr_opname(op));
  }
  if (tfe__ranges_meet(A->data, &A->lay, C->data, &C->lay, sizeof(TFE_T)))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C overlaps input A");
  if (B && tfe__ranges_meet(B->data, &B->lay, C->data, &C->lay, sizeof(TFE_T)))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C overlaps input B");
  return TFE_OK;
}

/* A conjugated output view stores conj(value): conjugate everything instead, so the engines
 * only ever see a plain C. */
TFE_INTERNAL void TFE_FN(pr_fold_cconj_)(bool cconj, TFE_T *alpha, TFE_T *beta, bool *ca, bool *cb) {
#if TFE_CPLX
  if (cconj) {
    *alpha = TFE_FN(sr_conj)(*alpha);
    *beta = TFE_FN(sr_conj)(*beta);
    *ca = !*ca;
    *cb = !*cb;
  }
#else
  TFE_UNUSED(cconj); TFE_UNUSED(alpha); TFE_UNUSED(beta);
  *ca = false; *cb = false;
#endif
}

/* ---- the planned engine ---------------------------------------------------------------- */
/* The label table of a plan, with strides `which` (0 as given, 1 reduced, 2 GEMM operand),
 * in the reference engine's form. */
TFE_INTERNAL void TFE_FN(pr_prob_from_plan_)(const tfe_contract_plan *P, tfe__pr_prob *q) {
  q->n = P->nl;
  q->c_embed = false;
  for (int j = 0; j < P->nl; j++) {
    const tfe__pr_plab *l = &P->lab[j];
    tfe__pr_lab x = {0, l->in, l->dim, {l->so[0], l->so[1], l->so[2]}};
    q->lab[j] = x;
  }
}

/* A view over the distinct labels (size > 1) of operand op, strides from `which`. */
TFE_INTERNAL void TFE_FN(pr_view_)(TFE_TY(view) *v, const TFE_T *base, const tfe_contract_plan *P, int op,
                                   int which, bool conj) {
  uint8_t bit = (uint8_t)(1u << op);
  int r = 0;
  for (int j = 0; j < P->nl; j++) {
    const tfe__pr_plab *l = &P->lab[j];
    if (!(l->in & bit) || l->dim == 1 || (op < 2 && P->red[op] && l->in == bit)) continue;
    v->lay.dims[r] = l->dim;
    v->lay.strides[r] = which == 0 ? l->so[op] : which == 1 ? l->sr[op] : l->sf[op];
    r++;
  }
  v->lay.rank = r;
  v->lay.offset = 0;
  v->data = (TFE_T *)base;
  v->conj = conj;
}

/* Sums the labels only operand op carries into the dense temporary dst. */
TFE_INTERNAL void TFE_FN(pr_reduce_)(const tfe_contract_plan *P, int op, const TFE_T *src, bool conj, TFE_T *dst) {
  tfe__pr_prob q;
  q.n = 0;
  q.c_embed = false;
  uint8_t bit = (uint8_t)(1u << op);
  for (int j = 0; j < P->nl; j++) {
    const tfe__pr_plab *l = &P->lab[j];
    if (!(l->in & bit)) continue;
    uint8_t in = l->in == bit ? TFE__PR_IN_A : (TFE__PR_IN_A | TFE__PR_IN_C);
    tfe__pr_lab x = {0, in, l->dim, {l->so[op], 0, l->sr[op]}};
    q.lab[q.n++] = x;
  }
  TFE_FN(pr_naive_)(TFE_FN(sr_one)(), src, conj, NULL, false, TFE_FN(sr_zero)(), dst, &q);
}

/* One GEMM of the plan's shape: BLIS for the float kinds, the semiring kernel otherwise. */
TFE_INTERNAL void TFE_FN(pr_gemm_)(const tfe_contract_plan *P, TFE_T alpha, const TFE_T *a, bool ca,
                                   const TFE_T *b, bool cb, TFE_T beta, TFE_T *c, int threads, TFE_T *sgws) {
  int64_t m = P->m, n = P->n, k = P->k;
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD
  (void)sgws;
  if (m * n * k <= 2048) { /* BLIS's per-call cost exceeds the work: plain loops (used only
                             * when the small-GEMM path is off or unavailable) */
    bool bz = TFE_FN(pr_is_zero_)(beta);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        TFE_T acc = 0;
#if TFE_CPLX /* on real and imaginary parts: ISO C's complex product calls __muldc3 */
        TFE_R ar = 0, ai = 0, sa = ca ? (TFE_R)-1 : (TFE_R)1, sb = cb ? (TFE_R)-1 : (TFE_R)1;
        for (int64_t p = 0; p < k; p++) {
          const TFE_R *x = (const TFE_R *)(a + i * P->rs[0] + p * P->cs[0]);
          const TFE_R *y = (const TFE_R *)(b + p * P->rs[1] + j * P->cs[1]);
          TFE_R xr = x[0], xi = sa * x[1], yr = y[0], yi = sb * y[1];
          ar += xr * yr - xi * yi;
          ai += xr * yi + xi * yr;
        }
        TFE_R *accp = (TFE_R *)&acc;
        accp[0] = ar;
        accp[1] = ai;
#else
        for (int64_t p = 0; p < k; p++) acc += a[i * P->rs[0] + p * P->cs[0]] * b[p * P->rs[1] + j * P->cs[1]];
#endif
        TFE_T *cp = c + i * P->rs[2] + j * P->cs[2];
        *cp = bz ? alpha * acc : alpha * acc + beta * *cp;
      }
    return;
  }
  int ta = TFE_CPLX && ca ? TFE__BLIS_CONJ_NO_TRANSPOSE : TFE__BLIS_NO_TRANSPOSE;
  int tb = TFE_CPLX && cb ? TFE__BLIS_CONJ_NO_TRANSPOSE : TFE__BLIS_NO_TRANSPOSE;
  TFE_CAT(tfe__blas_gemm_, TFE_S)(ta, tb, m, n, k, alpha, a, P->rs[0], P->cs[0], b, P->rs[1], P->cs[1], beta, c,
                                  P->rs[2], P->cs[2], threads);
#else
  TFE_FN(semiring_gemm_ws_)(m, n, k, alpha, a, P->rs[0], P->cs[0], ca, b, P->rs[1], P->cs[1], cb, beta, c,
                            P->rs[2], P->cs[2], threads, sgws);
#endif
}
#include <tenferro/prims/small_gemm_tpl.h>

/* Multiply-adds of one GEMM of the plan (saturating). */
TFE_INTERNAL int64_t TFE_FN(pr_mnk_)(const tfe_contract_plan *P) {
  int64_t w = P->m, lim = (int64_t)1 << 62;
  w = P->n && w > lim / P->n ? lim : w * P->n;
  w = P->k && w > lim / P->k ? lim : w * P->k;
  return w;
}
/* Threads worth using for the whole execution (see tfe__pr_threads_for). */
TFE_INTERNAL int TFE_FN(pr_threads_)(const tfe_contract_plan *P) {
  int64_t w = TFE_FN(pr_mnk_)(P), lim = (int64_t)1 << 62;
  w = P->nbatch && w > lim / P->nbatch ? lim : w * P->nbatch;
  return tfe__pr_threads_for(w, tfe_get_num_threads());
}
/* The batch loop runs in parallel (one thread per GEMM) when one GEMM is too small for
 * BLIS's own threads to pay off, or when there are enough GEMMs to balance the threads;
 * otherwise each GEMM gets the threads. */
TFE_INTERNAL bool TFE_FN(pr_batch_parallel_)(const tfe_contract_plan *P, int threads) {
  if (threads <= 1 || P->nbatch <= 1) return false;
#if TFE_FLOAT && TFE_CPLX
  /* BLIS 0.9 runs complex GEMM through its 1m method, and concurrent single-threaded
   * ?gemm calls from several OpenMP threads serialize inside BLIS: measured on Zen 5, 32
   * zgemm of 128^3 take 6.6 ms serially, 13.9 ms from 2 threads (64^3: 0.81 vs 1.80 ms).
   * Complex batches therefore run serially, each GEMM with the threads its size earns. */
  return false;
#endif
  return tfe__pr_threads_for(TFE_FN(pr_mnk_)(P), threads) < threads || P->nbatch >= 4 * (int64_t)threads;
}
TFE_INTERNAL int64_t TFE_FN(pr_sg_elems_)(const tfe_contract_plan *P, int threads) {
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD
#ifdef TFE__PS_HAVE_VEC
  if (P->small) return TFE_FN(ps_ws_elems_)(P, threads);
#endif
  (void)P; (void)threads;
  return 0;
#else
  return (int64_t)threads * TFE_FN(sg_workspace_)(1, P->m, P->n, P->k);
#endif
}

/* The offsets of batch element bi in A, B and C. */
TFE_INTERNAL void TFE_FN(pr_batch_off_)(const tfe_contract_plan *P, int64_t bi, int64_t *oa, int64_t *ob, int64_t *oc) {
  *oa = *ob = *oc = 0;
  for (int q = 0; q < P->nb; q++) {
    const tfe__pr_plab *l = &P->lab[P->bl[q]];
    int64_t x = bi % l->dim;
    bi /= l->dim;
    *oa += x * l->sf[0]; *ob += x * l->sf[1]; *oc += x * l->sf[2];
  }
}

/* Serial batches call the GEMM outside any OpenMP region: a GEMM inside even an inactive
 * (if(false)) region is a nested one, and libgomp then creates and joins fresh threads for
 * BLIS's own team on every call (measured: 4.8 us -> 180 ms per call for a d=8 abc,cbd->ad
 * on a loaded 2-core machine). */
TFE_INTERNAL void TFE_FN(pr_batches_)(const tfe_contract_plan *P, TFE_T alpha, const TFE_T *a, bool ca,
                                      const TFE_T *b, bool cb, TFE_T beta, TFE_T *c, int threads, TFE_T *sgws) {
  int64_t oa, ob, oc;
  if (!TFE_FN(pr_batch_parallel_)(P, threads)) {
    int gt = tfe__pr_threads_for(TFE_FN(pr_mnk_)(P), threads);
    for (int64_t bi = 0; bi < P->nbatch; bi++) {
      TFE_FN(pr_batch_off_)(P, bi, &oa, &ob, &oc);
      TFE_FN(pr_gemm_)(P, alpha, a + oa, ca, b + ob, cb, beta, c + oc, gt, sgws);
    }
    return;
  }
  int64_t per = TFE_FN(pr_sg_elems_)(P, 1);
  int nt = P->nbatch < threads ? (int)P->nbatch : threads;
  (void)nt; /* unused without OpenMP */
  TFE_OMP(parallel for num_threads(nt) schedule(static) private(oa, ob, oc))
  for (int64_t bi = 0; bi < P->nbatch; bi++) {
    TFE_FN(pr_batch_off_)(P, bi, &oa, &ob, &oc);
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    TFE_FN(pr_gemm_)(P, alpha, a + oa, ca, b + ob, cb, beta, c + oc, 1, sgws ? sgws + (int64_t)tid * per : NULL);
  }
}

/* Runs a plan on views that match it (checked by the caller). C untouched on failure. */
TFE_INTERNAL tfe_status TFE_FN(pr_execute_)(const tfe_contract_plan *P, TFE_T alpha, const TFE_TY(view) *A,
                                            const TFE_TY(view) *B, TFE_T beta, const TFE_TY(view) *C) {
  bool ca = A->conj, cb = B ? B->conj : false;
  TFE_FN(pr_fold_cconj_)(C->conj, &alpha, &beta, &ca, &cb);
  const TFE_T *a = A->data + A->lay.offset + P->off[0];
  const TFE_T *b = B ? B->data + B->lay.offset + P->off[1] : NULL;
  TFE_T *c = C->data + C->lay.offset + P->off[2];
  int threads = P->naive ? 1 : TFE_FN(pr_threads_)(P);
  int64_t sgn = P->naive ? 0 : TFE_FN(pr_sg_elems_)(P, threads);
  int64_t total = P->ws[TFE__PR_WS_N] + sgn;
  TFE_T *ws = NULL;
  if (total > 0) {
    int64_t bytes;
    if (!tfe__mul_ok(total, (int64_t)sizeof(TFE_T), &bytes))
      return TFE_FAIL(TFE_ERR_OVERFLOW, "workspace of %lld elements overflows", (long long)total);
    ws = (TFE_T *)tfe__pr_ws_get((size_t)bytes);
    if (!ws) return tfe__errcode;
  }
  if (P->c_embed) { /* off-diagonal elements: beta * C; the diagonal then accumulates */
    TFE_FN(pr_scale_)(&C->lay, C->data, beta);
    beta = TFE_FN(sr_one)();
  }
  if (P->naive) {
    tfe__pr_prob q;
    TFE_FN(pr_prob_from_plan_)(P, &q);
    TFE_FN(pr_naive_)(alpha, a, ca, b, cb, beta, c, &q);
    tfe__pr_ws_put(ws);
    return TFE_OK;
  }
  const TFE_T *src[2] = {a, b};
  bool cj[2] = {ca, cb};
  for (int op = 0; op < 2; op++) {
    if (P->red[op]) {
      TFE_T *dst = ws + P->ws[op == 0 ? TFE__PR_WS_RA : TFE__PR_WS_RB];
      TFE_FN(pr_reduce_)(P, op, src[op], cj[op], dst);
      src[op] = dst;
      cj[op] = false;
    }
    if (P->copy[op]) {
      TFE_TY(view) from, to;
      TFE_FN(pr_view_)(&from, src[op], P, op, P->red[op] ? 1 : 0, cj[op]);
      TFE_FN(pr_view_)(&to, ws + P->ws[op == 0 ? TFE__PR_WS_CA : TFE__PR_WS_CB], P, op, 2, false);
      TFE_FN(copy)(&to, &from);
      src[op] = to.data;
      cj[op] = false;
    }
  }
  TFE_T *cc = c;
  TFE_TY(view) cv, ct;
  if (P->copy[2]) {
    TFE_FN(pr_view_)(&cv, c, P, 2, 0, false);
    TFE_FN(pr_view_)(&ct, ws + P->ws[TFE__PR_WS_CC], P, 2, 2, false);
    if (!TFE_FN(pr_is_zero_)(beta)) TFE_FN(copy)(&ct, &cv);
    cc = ct.data;
  }
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD && defined(TFE__PS_HAVE_VEC)
  if (P->small) {
    TFE_FN(ps_run_)(P, alpha, src[0], cj[0], src[1], cj[1], beta, cc, threads, ws + P->ws[TFE__PR_WS_N]);
    tfe__pr_ws_put(ws);
    return TFE_OK;
  }
#endif
  TFE_FN(pr_batches_)(P, alpha, src[0], cj[0], src[1], cj[1], beta, cc, threads, sgn ? ws + P->ws[TFE__PR_WS_N] : NULL);
  if (P->copy[2]) TFE_FN(copy)(&cv, &ct);
  tfe__pr_ws_put(ws);
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(contract_describe)(tfe_contract_desc *d, const TFE_TY(view) *A, const int32_t *la,
                                             const TFE_TY(view) *B, const int32_t *lb, const TFE_TY(view) *C,
                                             const int32_t *lc) {
  TFE_CHECK_NULL(d);
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : "C");
  return tfe__pr_describe(d, TFE_DT, &A->lay, la, B ? &B->lay : NULL, lb, &C->lay, lc);
}
TFE_API tfe_status TFE_FN(contract_execute)(const tfe_contract_plan *P, TFE_T alpha, const TFE_TY(view) *A,
                                            const TFE_TY(view) *B, TFE_T beta, const TFE_TY(view) *C) {
  TFE_CHECK_NULL(P);
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : "C");
  if (P->dtype != TFE_DT)
    return TFE_FAIL(TFE_ERR_DTYPE, "plan was made for %s, called with %s", tfe_dtype_name(P->dtype),
                    tfe_dtype_name(TFE_DT));
  if (P->unary != (B == NULL)) return TFE_FAIL(TFE_ERR_INVALID, "plan is %s but B %s given", P->unary ? "unary" : "binary", B ? "was" : "was not");
  TFE_TRY(tfe__pr_match(P, &A->lay, B ? &B->lay : NULL, &C->lay, __func__));
  TFE_TRY(TFE_FN(pr_check_views_)(A, B, C, __func__));
  return TFE_FN(pr_execute_)(P, alpha, A, B, beta, C);
}

/* The convenience path: plan from the cache (or made and cached), then execute. */
TFE_INTERNAL tfe_status TFE_FN(pr_cached_)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                           const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                           const TFE_TY(view) *C, const int32_t *lc, const char *where) {
  tfe_contract_plan *P = NULL;
  TFE_TRY(tfe__pr_plan_cached(&P, TFE_DT, &A->lay, la, B ? &B->lay : NULL, lb, &C->lay, lc, where));
  tfe_status st = TFE_FN(pr_check_views_)(A, B, C, where);
  if (st == TFE_OK) st = TFE_FN(pr_execute_)(P, alpha, A, B, beta, C);
  tfe_contract_plan_release(P);
  return st;
}
TFE_API tfe_status TFE_FN(contract)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                    const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                    const TFE_TY(view) *C, const int32_t *lc) {
  if (!A || !B || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : !B ? "B" : "C");
  return TFE_FN(pr_cached_)(alpha, A, la, B, lb, beta, C, lc, __func__);
}
TFE_API tfe_status TFE_FN(contract_unary)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                          TFE_T beta, const TFE_TY(view) *C, const int32_t *lc) {
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : "C");
  return TFE_FN(pr_cached_)(alpha, A, la, NULL, NULL, beta, C, lc, __func__);
}
#endif
