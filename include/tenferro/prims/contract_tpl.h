/* tenferro/prims/contract_tpl.h — binary and unary contraction of one kind: the execution of
 * a plan (one switch on its engine) and the entry points, which run on the backend chosen
 * for the call (registry.h); re-included per kind. Semiring arithmetic only through
 * tfe_sr_*_S, so user kinds (TFE_ALG_CUSTOM) work too. */
#if !TFE__BODY_PHASE

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

/* The same on an explicit backend (NULL: chosen as usual, registry.h). The views are memory
 * the backend reads and writes (its memory space). */
TFE_API tfe_status TFE_FN(contract_on)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                       const int32_t *la, const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                       const TFE_TY(view) *C, const int32_t *lc);
TFE_API tfe_status TFE_FN(contract_unary_on)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                             const int32_t *la, TFE_T beta, const TFE_TY(view) *C,
                                             const int32_t *lc);
#else /* bodies */
/* ---- views of a plan's operands ------------------------------------------------------------ */
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

/* The dtype-tagged view of operand op for a backend slot: the same labels as pr_view_ (each
 * named by its index in the plan's table), or with every label of op and its strides as
 * given (all = true, for a reduction's input). */
TFE_INTERNAL void TFE_FN(pr_dyn_)(tfe_dyn *v, int32_t *lab, const TFE_T *base, const tfe_contract_plan *P, int op,
                                  int which, bool conj, bool all) {
  uint8_t bit = (uint8_t)(1u << op);
  int r = 0;
  for (int j = 0; j < P->nl; j++) {
    const tfe__pr_plab *l = &P->lab[j];
    if (!(l->in & bit)) continue;
    if (!all && (l->dim == 1 || (op < 2 && P->red[op] && l->in == bit))) continue;
    v->lay.dims[r] = l->dim;
    v->lay.strides[r] = which == 0 ? l->so[op] : which == 1 ? l->sr[op] : l->sf[op];
    lab[r++] = j;
  }
  v->lay.rank = r;
  v->lay.offset = 0;
  v->dtype = TFE_DT;
  v->data = (void *)base;
  v->conj = conj;
  v->st = NULL;
}

/* ---- the phases around the GEMM: native, or the backend's slot ------------------------------- */
/* dst (dense, the kept labels) = sum of src over the labels only operand op carries. */
TFE_INTERNAL tfe_status TFE_FN(pr_reduce_phase_)(const tfe_prims_backend *be, const tfe_contract_plan *P, int op,
                                                 const TFE_T *src, bool conj, TFE_T *dst) {
  if (tfe__be_native(be, TFE_PRIM_REDUCE)) {
    TFE_FN(pr_reduce_)(P, op, src, conj, dst);
    return TFE_OK;
  }
  tfe_dyn x, y;
  int32_t lx[TFE__PR_MAXL], ly[TFE__PR_MAXL];
  TFE_FN(pr_dyn_)(&x, lx, src, P, op, 0, conj, true);
  int r = 0; /* the kept labels, strides in the temporary */
  for (int i = 0; i < x.lay.rank; i++) {
    const tfe__pr_plab *l = &P->lab[lx[i]];
    if (l->in == (uint8_t)(1u << op)) continue;
    y.lay.dims[r] = l->dim;
    y.lay.strides[r] = l->sr[op];
    ly[r++] = lx[i];
  }
  y.lay.rank = r; y.lay.offset = 0; y.dtype = TFE_DT; y.data = dst; y.conj = false; y.st = NULL;
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  tfe_prim_desc d = {TFE_PRIM_REDUCE, &x, NULL, &y, lx, NULL, ly, &one, &zero};
  return be->exec[TFE_PRIM_REDUCE](be, &d, NULL);
}
/* to = from (same labels, other strides): a permuting copy. */
TFE_INTERNAL tfe_status TFE_FN(pr_copy_phase_)(const tfe_prims_backend *be, const tfe_contract_plan *P, int op,
                                               const TFE_T *from, int fwhich, bool conj, TFE_T *to, int twhich) {
  if (tfe__be_native(be, TFE_PRIM_PERMUTE)) {
    TFE_TY(view) f, t;
    TFE_FN(pr_view_)(&f, from, P, op, fwhich, conj);
    TFE_FN(pr_view_)(&t, to, P, op, twhich, false);
    return TFE_FN(k_copy_cpu_)(&t, &f);
  }
  tfe_dyn f, t;
  int32_t lf[TFE__PR_MAXL], lt[TFE__PR_MAXL];
  TFE_FN(pr_dyn_)(&f, lf, from, P, op, fwhich, conj, false);
  TFE_FN(pr_dyn_)(&t, lt, to, P, op, twhich, false, false);
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  tfe_prim_desc d = {TFE_PRIM_PERMUTE, &f, NULL, &t, lf, NULL, lt, &one, &zero};
  return be->exec[TFE_PRIM_PERMUTE](be, &d, NULL);
}
/* The GEMM phase as one call of the backend's batched_gemm slot (engine BACKEND): labels M,
 * N, K (fused dimensions) and the batch labels, with the plan's strides. */
TFE_INTERNAL tfe_status TFE_FN(pr_gemm_slot_)(const tfe_prims_backend *be, const tfe_contract_plan *P, TFE_T alpha,
                                              const TFE_T *a, bool ca, const TFE_T *b, bool cb, TFE_T beta, TFE_T *c) {
  if (!be->exec[TFE_PRIM_BATCHED_GEMM])
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' provides neither contract nor batched_gemm", be->name);
  if (P->nb + 2 > TFE_MAX_RANK)
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "%d batch labels do not fit a batched_gemm descriptor", P->nb);
  tfe_dyn v[3];
  int32_t lab[3][TFE_MAX_RANK];
  const int32_t M = P->nl, N = P->nl + 1, K = P->nl + 2;
  const int32_t rows[3] = {M, K, M}, cols[3] = {K, N, N};
  const int64_t dr[3] = {P->m, P->k, P->m}, dc[3] = {P->k, P->n, P->n};
  const TFE_T *base[3] = {a, b, c};
  bool cj[3] = {ca, cb, false};
  for (int op = 0; op < 3; op++) {
    tfe_layout *L = &v[op].lay;
    L->rank = 2 + P->nb; L->offset = 0;
    L->dims[0] = dr[op]; L->strides[0] = P->rs[op]; lab[op][0] = rows[op];
    L->dims[1] = dc[op]; L->strides[1] = P->cs[op]; lab[op][1] = cols[op];
    for (int q = 0; q < P->nb; q++) {
      const tfe__pr_plab *l = &P->lab[P->bl[q]];
      L->dims[2 + q] = l->dim; L->strides[2 + q] = l->sf[op]; lab[op][2 + q] = P->bl[q];
    }
    v[op].dtype = TFE_DT; v[op].data = (void *)base[op]; v[op].conj = cj[op]; v[op].st = NULL;
  }
  tfe_prim_desc d = {TFE_PRIM_BATCHED_GEMM, &v[0], &v[1], &v[2], lab[0], lab[1], lab[2], &alpha, &beta};
  return be->exec[TFE_PRIM_BATCHED_GEMM](be, &d, NULL);
}

/* ---- the GEMM engines -------------------------------------------------------------------- */
/* One GEMM of the plan's shape, by the plan's engine: plain loops or BLIS for the float kinds,
 * the semiring kernel for every other kind. */
TFE_INTERNAL void TFE_FN(pr_gemm_)(const tfe_contract_plan *P, TFE_T alpha, const TFE_T *a, bool ca,
                                   const TFE_T *b, bool cb, TFE_T beta, TFE_T *c, int threads, TFE_T *sgws) {
  int64_t m = P->m, n = P->n, k = P->k;
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD
  (void)sgws;
  if (P->engine == TFE__PR_ENG_LOOPS) { /* BLIS's per-call cost would exceed the work */
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
/* Multiply-adds of one GEMM of the plan (saturating). */
TFE_INTERNAL int64_t TFE_FN(pr_mnk_)(const tfe_contract_plan *P) { return tfe__pr_mnk(P->m, P->n, P->k); }
/* Threads worth using for the whole execution (see tfe__pr_threads_for). */
TFE_INTERNAL int TFE_FN(pr_threads_)(const tfe_contract_plan *P) {
  int nt = tfe_get_num_threads();
  if (nt <= 1) return 1; /* (no divisions on the 1-thread path of every call) */
  int64_t w = TFE_FN(pr_mnk_)(P), lim = (int64_t)1 << 62;
  w = P->nbatch && w > lim / P->nbatch ? lim : w * P->nbatch;
  return tfe__pr_threads_for(w, nt);
}
/* The batch loop runs in parallel (one thread per GEMM) when one GEMM is too small for
 * BLIS's own threads to pay off, or when there are enough GEMMs to balance the threads;
 * otherwise each GEMM gets the threads. */
TFE_INTERNAL bool TFE_FN(pr_batch_parallel_)(const tfe_contract_plan *P, int threads) {
  if (threads <= 1 || P->nbatch <= 1) return false;
#if TFE_FLOAT && TFE_CPLX
  /* BLIS 0.9 runs complex GEMM through its 1m method, and concurrent single-threaded ?gemm
   * calls from several OpenMP threads serialize inside BLIS (measured: docs/bench-prims.md):
   * complex batches run serially, each GEMM with the threads its size earns. */
  return false;
#endif
  return tfe__pr_threads_for(TFE_FN(pr_mnk_)(P), threads) < threads || P->nbatch >= 4 * (int64_t)threads;
}
TFE_INTERNAL int64_t TFE_FN(pr_sg_elems_)(const tfe_contract_plan *P, int threads) {
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD
#ifdef TFE__PS_HAVE_VEC
  if (P->engine == TFE__PR_ENG_SMALL) return TFE_FN(ps_ws_elems_)(P, threads);
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
 * BLIS's own team on every call (measured: docs/bench-prims.md, "Nested regions"). */
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

/* ---- this kind in the CPU backend's slots (cpu_backend.h) ----------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(pr_run_)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                        const int32_t *la, const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                        const TFE_TY(view) *C, const int32_t *lc, const char *where);
/* A label-form operation of this kind on backend be (operands checked to be of this kind). */
TFE_INTERNAL tfe_status TFE_FN(pr_dyn_run_)(const tfe_prims_backend *be, const tfe_prim_desc *d, const char *where) {
  const tfe_dyn *A = d->a, *B = d->b, *C = d->c;
  TFE_TY(view) a = {(TFE_T *)A->data, A->lay, A->conj}, c = {(TFE_T *)C->data, C->lay, C->conj};
  TFE_TY(view) b = {(TFE_T *)(B ? B->data : NULL), B ? B->lay : A->lay, B ? B->conj : false};
  return TFE_FN(pr_run_)(be, *(const TFE_T *)d->alpha, &a, d->la, B ? &b : NULL, d->lb, *(const TFE_T *)d->beta, &c,
                         d->lc, where);
}
/* Called wherever this kind may reach another backend's slot, which may forward to the CPU's. */
TFE_INTERNAL void TFE_FN(pr_enroll_)(void) { tfe__cpu_enroll(TFE_DT, TFE_FN(pr_dyn_run_)); }

/* ---- held runs: a stored plan on raw pointers ------------------------------------------------ */
/* What a plan run again by its owner (einsum's executor: every step of a held N-ary plan) may
 * skip: the views (their offsets are folded into the pointers), the views' checks (the owner
 * checked the operands once and placed the intermediates), the workspace lookup. Only for
 * plans that need nothing but their kept set-up: the small engine reading and writing in place
 * (no reduction, copy, workspace or diagonal); returns that set-up, NULL for any other plan
 * (run it through pr_execute_). */
TFE_INTERNAL const void *TFE_FN(pr_held_)(const tfe_contract_plan *P) {
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD && defined(TFE__PS_HAVE_VEC)
  if (P->engine != TFE__PR_ENG_SMALL) return NULL;
  /* after the first run: the kept set-up says it (ps_prep_ checked the plan's conditions) */
  const TFE_FN(ps_call_) *h = (const TFE_FN(ps_call_) *)atomic_load_explicit(&((tfe_contract_plan *)(uintptr_t)P)->small_prep,
                                                                             memory_order_acquire);
  if (h) return h->held ? (const void *)h : NULL;
  return (const void *)TFE_FN(ps_held_)(P);
#else
  (void)P;
  return NULL;
#endif
}
/* C = alpha * (A . B) + beta * C on one thread for a plan pr_held_ gave h for: a, b, c are the
 * views' data plus their layouts' offsets. The same arithmetic as pr_execute_. */
TFE_INTERNAL void TFE_FN(pr_run_held_)(const tfe_contract_plan *P, const void *h, TFE_T alpha, const TFE_T *a,
                                       const TFE_T *b, TFE_T beta, TFE_T *c) {
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD && defined(TFE__PS_HAVE_VEC)
  TFE_FN(ps_run_held_)(P, (const TFE_FN(ps_call_) *)h, alpha, a + P->off[0], b + P->off[1], beta, c + P->off[2]);
#else
  (void)P; (void)h; (void)alpha; (void)a; (void)b; (void)beta; (void)c;
#endif
}

/* ---- execution: plan -> engine --------------------------------------------------------------- */
/* Runs a plan on views that match it (checked by the caller) under backend be. C untouched on
 * failure (but for a backend slot that fails half-way). */
TFE_INTERNAL tfe_status TFE_FN(pr_execute_)(const tfe_prims_backend *be, const tfe_contract_plan *P, TFE_T alpha,
                                            const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_T beta,
                                            const TFE_TY(view) *C) {
  TFE_FN(pr_enroll_)();
  bool ca = A->conj, cb = B ? B->conj : false;
  TFE_FN(pr_fold_cconj_)(C->conj, &alpha, &beta, &ca, &cb);
  const TFE_T *a = A->data + A->lay.offset + P->off[0];
  const TFE_T *b = B ? B->data + B->lay.offset + P->off[1] : NULL;
  TFE_T *c = C->data + C->lay.offset + P->off[2];
  bool naive = P->engine == TFE__PR_ENG_NAIVE;
  int threads = naive ? 1 : TFE_FN(pr_threads_)(P);
#if !TFE_CPLX
  /* a plan that needs nothing but its kept set-up on one thread: straight to the kernels (no
   * workspace, no phases) */
  const void *held = threads == 1 ? TFE_FN(pr_held_)(P) : NULL;
  if (held) {
    TFE_FN(pr_run_held_)(P, held, alpha, A->data + A->lay.offset, B->data + B->lay.offset, beta, C->data + C->lay.offset);
    return TFE_OK;
  }
#endif
  int64_t sgn = naive || P->engine == TFE__PR_ENG_BACKEND ? 0 : TFE_FN(pr_sg_elems_)(P, threads);
  int64_t total = P->ws[TFE__PR_WS_N] + sgn;
  TFE_T *ws = NULL;
  if (total > 0) {
    int64_t bytes;
    if (!tfe__mul_ok(total, (int64_t)sizeof(TFE_T), &bytes))
      return TFE_FAIL(TFE_ERR_OVERFLOW, "workspace of %lld elements overflows", (long long)total);
    ws = (TFE_T *)tfe__pr_ws_get((size_t)bytes);
    if (!ws) return tfe__ts.errcode;
  }
  if (P->c_embed) { /* off-diagonal elements: beta * C; the diagonal then accumulates */
    TFE_FN(pr_scale_)(&C->lay, C->data, beta);
    beta = TFE_FN(sr_one)();
  }
  tfe_status st = TFE_OK;
  if (naive) {
    tfe__pr_prob q;
    TFE_FN(pr_prob_from_plan_)(P, &q);
    TFE_FN(pr_naive_)(alpha, a, ca, b, cb, beta, c, &q);
    tfe__pr_ws_put(ws);
    return TFE_OK;
  }
  /* before the GEMM: labels of one input summed away, operands copied where they do not fuse */
  const TFE_T *src[2] = {a, b};
  bool cj[2] = {ca, cb};
  for (int op = 0; op < 2 && st == TFE_OK; op++) {
    if (P->red[op]) {
      TFE_T *dst = ws + P->ws[op == 0 ? TFE__PR_WS_RA : TFE__PR_WS_RB];
      st = TFE_FN(pr_reduce_phase_)(be, P, op, src[op], cj[op], dst);
      src[op] = dst;
      cj[op] = false;
    }
    if (P->copy[op] && st == TFE_OK) {
      TFE_T *dst = ws + P->ws[op == 0 ? TFE__PR_WS_CA : TFE__PR_WS_CB];
      st = TFE_FN(pr_copy_phase_)(be, P, op, src[op], P->red[op] ? 1 : 0, cj[op], dst, 2);
      src[op] = dst;
      cj[op] = false;
    }
  }
  TFE_T *cc = c;
  if (P->copy[2] && st == TFE_OK) {
    cc = ws + P->ws[TFE__PR_WS_CC];
    if (!TFE_FN(pr_is_zero_)(beta)) st = TFE_FN(pr_copy_phase_)(be, P, 2, c, 0, false, cc, 2);
  }
  if (st == TFE_OK) {
    switch (P->engine) {
#if TFE_FLOAT && TFE_ALG == TFE_ALG_STANDARD && defined(TFE__PS_HAVE_VEC)
    case TFE__PR_ENG_SMALL:
      TFE_FN(ps_run_)(P, alpha, src[0], cj[0], src[1], cj[1], beta, cc, threads, ws ? ws + P->ws[TFE__PR_WS_N] : NULL);
      break;
#endif
    case TFE__PR_ENG_BACKEND:
      st = TFE_FN(pr_gemm_slot_)(be, P, alpha, src[0], cj[0], src[1], cj[1], beta, cc);
      break;
    default: /* LOOPS, BLIS, SEMIRING: one GEMM per batch */
      TFE_FN(pr_batches_)(P, alpha, src[0], cj[0], src[1], cj[1], beta, cc, threads,
                          sgn ? ws + P->ws[TFE__PR_WS_N] : NULL);
      break;
    }
  }
  /* after the GEMM: a copied C is written back */
  if (P->copy[2] && st == TFE_OK) st = TFE_FN(pr_copy_phase_)(be, P, 2, cc, 2, false, c, 0);
  tfe__pr_ws_put(ws);
  return st;
}

/* ---- describe -> plan -> execute ------------------------------------------------------------ */
TFE_API tfe_status TFE_FN(contract_describe)(tfe_contract_desc *d, const TFE_TY(view) *A, const int32_t *la,
                                             const TFE_TY(view) *B, const int32_t *lb, const TFE_TY(view) *C,
                                             const int32_t *lc) {
  TFE_CHECK_NULL(d);
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : "C");
  return TFE_AS_API(tfe__pr_describe(d, TFE_DT, &A->lay, la, B ? &B->lay : NULL, lb, &C->lay, lc));
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
  TFE_TRY(TFE_FN(pr_check_planned_)(P, A, B, C, __func__));
  const tfe_prims_backend *be = tfe__be_for_views(NULL, 3, tfe__pr_names, __func__);
  if (!be) return tfe__ts.errcode;
  return TFE_AS_API(TFE_FN(pr_execute_)(be, P, alpha, A, B, beta, C));
}

/* ---- the entry points: the backend's slot, or the engine ------------------------------------- */
/* A contraction handed whole to a backend's slot (its contract slot, or the unary primitive
 * the labels make): validated here, described in label form, executed there. */
TFE_INTERNAL tfe_status TFE_FN(pr_slot_)(const tfe_prims_backend *be, tfe_prim_op op, TFE_T alpha,
                                         const TFE_TY(view) *A, const int32_t *la, const TFE_TY(view) *B,
                                         const int32_t *lb, TFE_T beta, const TFE_TY(view) *C, const int32_t *lc,
                                         const char *where) {
  TFE_FN(pr_enroll_)();
  tfe__pr_prob p;
  TFE_TRY(tfe__pr_analyze(&A->lay, la, B ? &B->lay : NULL, lb, &C->lay, lc, &p, where));
  TFE_TRY(TFE_FN(pr_check_views_)(A, B, C, where));
  tfe_dyn x, y, z;
  TFE_TY(view) const *v[3] = {A, B, C};
  tfe_dyn *d[3] = {&x, &y, &z};
  for (int k = 0; k < 3; k++) {
    if (!v[k]) continue;
    d[k]->dtype = TFE_DT; d[k]->data = v[k]->data; d[k]->lay = v[k]->lay; d[k]->conj = v[k]->conj; d[k]->st = NULL;
  }
  tfe_prim_desc desc = {op, &x, B ? &y : NULL, &z, la, B ? lb : NULL, lc, &alpha, &beta};
  return be->exec[op](be, &desc, NULL);
}
/* Whether be computes this contraction in a slot of its own rather than in the engine. */
TFE_INTERNAL tfe_prim_op TFE_FN(pr_slot_op_)(const tfe_prims_backend *be, const TFE_TY(view) *A, const int32_t *la,
                                             const TFE_TY(view) *B, const TFE_TY(view) *C, const int32_t *lc) {
  if (B) return tfe__be_native(be, TFE_PRIM_CONTRACT) ? TFE_PRIM_COUNT : TFE_PRIM_CONTRACT;
  if (tfe__be_native(be, TFE_PRIM_REDUCE) && tfe__be_native(be, TFE_PRIM_PERMUTE) && tfe__be_native(be, TFE_PRIM_TRACE) &&
      tfe__be_native(be, TFE_PRIM_ANTI_DIAG))
    return TFE_PRIM_COUNT;
  if (A->lay.rank < 0 || A->lay.rank > TFE_MAX_RANK || C->lay.rank < 0 || C->lay.rank > TFE_MAX_RANK ||
      (A->lay.rank && !la) || (C->lay.rank && !lc))
    return TFE_PRIM_COUNT; /* the engine reports it */
  tfe_prim_op op = tfe__pb_unary_op(la, A->lay.rank, lc, C->lay.rank);
  return op != TFE_PRIM_COUNT && !tfe__be_native(be, op) ? op : TFE_PRIM_COUNT;
}
/* A unary contraction with repeated labels in A and in C (iij -> jj) is none of the
 * primitives, and the engine would run it in host code: for a backend with unary slots of its
 * own it runs as TRACE into a dense temporary in the backend's memory (the labels of A that C
 * keeps, once each), then ANTI_DIAG from there into C. */
TFE_INTERNAL bool TFE_FN(pr_split_wanted_)(const tfe_prims_backend *be, const TFE_TY(view) *A, const int32_t *la,
                                           const TFE_TY(view) *C, const int32_t *lc) {
  if (tfe__be_native(be, TFE_PRIM_TRACE) || tfe__be_native(be, TFE_PRIM_ANTI_DIAG)) return false;
  if (A->lay.rank < 0 || A->lay.rank > TFE_MAX_RANK || C->lay.rank < 0 || C->lay.rank > TFE_MAX_RANK || !la || !lc)
    return false;
  return tfe__pb_repeats(la, A->lay.rank) && tfe__pb_repeats(lc, C->lay.rank);
}
TFE_INTERNAL tfe_status TFE_FN(pr_split_unary_)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                                const int32_t *la, TFE_T beta, const TFE_TY(view) *C,
                                                const int32_t *lc, const char *where) {
  int32_t lt[TFE_MAX_RANK];
  TFE_TY(view) T;
  memset(&T, 0, sizeof T);
  int rt = 0;
  int64_t n = 1;
  for (int i = 0; i < A->lay.rank; i++) {
    bool in_c = false, seen = false;
    for (int k = 0; k < C->lay.rank; k++) in_c = in_c || lc[k] == la[i];
    for (int k = 0; k < rt; k++) seen = seen || lt[k] == la[i];
    if (!in_c || seen) continue;
    lt[rt] = la[i];
    T.lay.dims[rt] = A->lay.dims[i];
    T.lay.strides[rt++] = n;
    n *= A->lay.dims[i] > 0 ? A->lay.dims[i] : 0;
  }
  T.lay.rank = rt;
  void *buf = NULL;
  if (n > 0) TFE_TRY(tfe_backend_alloc(be, (size_t)n * sizeof(TFE_T), &buf));
  T.data = (TFE_T *)buf;
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  tfe_status st = TFE_FN(pr_slot_)(be, tfe__pb_unary_op(la, A->lay.rank, lt, rt), one, A, la, NULL, NULL, zero, &T,
                                   lt, where);
  if (st == TFE_OK)
    st = TFE_FN(pr_slot_)(be, tfe__pb_unary_op(lt, rt, lc, C->lay.rank), alpha, &T, lt, NULL, NULL, beta, C, lc, where);
  if (buf) tfe_backend_free(be, buf);
  return st;
}
/* Runs a plan made for these views (einsum's stored plans). */
TFE_INTERNAL tfe_status TFE_FN(pr_run_plan_)(const tfe_prims_backend *be, const tfe_contract_plan *P, TFE_T alpha,
                                             const TFE_TY(view) *A, const TFE_TY(view) *B, TFE_T beta,
                                             const TFE_TY(view) *C, const char *where) {
  TFE_TRY(TFE_FN(pr_check_planned_)(P, A, B, C, where));
  return TFE_FN(pr_execute_)(be, P, alpha, A, B, beta, C);
}
/* One contraction on backend be: its own slot, or a plan from the cache (made for be's GEMM:
 * the CPU's engines, or be's batched_gemm slot) and the engine. */
TFE_INTERNAL tfe_status TFE_FN(pr_run_)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                        const int32_t *la, const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                        const TFE_TY(view) *C, const int32_t *lc, const char *where) {
  tfe_prim_op op = TFE_FN(pr_slot_op_)(be, A, la, B, C, lc);
  if (op != TFE_PRIM_COUNT) return TFE_FN(pr_slot_)(be, op, alpha, A, la, B, lb, beta, C, lc, where);
  if (!B && TFE_FN(pr_split_wanted_)(be, A, la, C, lc)) return TFE_FN(pr_split_unary_)(be, alpha, A, la, beta, C, lc, where);
  tfe__pr_flavor fl = tfe__be_native(be, TFE_PRIM_BATCHED_GEMM) ? TFE__PR_NATIVE : TFE__PR_LOWERED;
  tfe_contract_plan *P = NULL;
  TFE_TRY(tfe__pr_plan_cached(&P, TFE_DT, &A->lay, la, B ? &B->lay : NULL, lb, &C->lay, lc, fl, where));
  tfe_status st = TFE_FN(pr_run_plan_)(be, P, alpha, A, B, beta, C, where);
  tfe_contract_plan_release(P);
  return st;
}
TFE_API tfe_status TFE_FN(contract_on)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                       const int32_t *la, const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                       const TFE_TY(view) *C, const int32_t *lc) {
  if (!A || !B || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : !B ? "B" : "C");
  if (!(be = tfe__be_for_views(be, 3, tfe__pr_names, __func__))) return tfe__ts.errcode;
  return TFE_FN(pr_run_)(be, alpha, A, la, B, lb, beta, C, lc, __func__);
}
TFE_API tfe_status TFE_FN(contract_unary_on)(const tfe_prims_backend *be, TFE_T alpha, const TFE_TY(view) *A,
                                             const int32_t *la, TFE_T beta, const TFE_TY(view) *C,
                                             const int32_t *lc) {
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : "C");
  if (!(be = tfe__be_for_views(be, 2, tfe__pr_names_unary, __func__))) return tfe__ts.errcode;
  return TFE_FN(pr_run_)(be, alpha, A, la, NULL, NULL, beta, C, lc, __func__);
}
TFE_API tfe_status TFE_FN(contract)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                    const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                    const TFE_TY(view) *C, const int32_t *lc) {
  if (!A || !B || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : !B ? "B" : "C");
  const tfe_prims_backend *be = tfe__be_for_views(NULL, 3, tfe__pr_names, __func__);
  if (!be) return tfe__ts.errcode;
  return TFE_FN(pr_run_)(be, alpha, A, la, B, lb, beta, C, lc, __func__);
}
TFE_API tfe_status TFE_FN(contract_unary)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                          TFE_T beta, const TFE_TY(view) *C, const int32_t *lc) {
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "view %s is NULL", !A ? "A" : "C");
  const tfe_prims_backend *be = tfe__be_for_views(NULL, 2, tfe__pr_names_unary, __func__);
  if (!be) return tfe__ts.errcode;
  return TFE_FN(pr_run_)(be, alpha, A, la, NULL, NULL, beta, C, lc, __func__);
}
#endif
