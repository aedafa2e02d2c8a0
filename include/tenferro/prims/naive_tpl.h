/* tenferro/prims/naive_tpl.h — the reference engine of the contraction (engine.h: NAIVE) and
 * the argument checks and scalar helpers every engine of one kind shares; re-included per
 * kind. Semiring arithmetic only through tfe_sr_*_S, so user kinds (TFE_ALG_CUSTOM) work. */
#if !TFE__BODY_PHASE
/* (nothing public: tfe_contract_S is declared in contract_tpl.h) */
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
  int64_t oi[TFE__PR_MAXL], ri[TFE__PR_MAXL]; /* only the used entries are zeroed: small calls */
  for (int d = 0; d < on; d++) oi[d] = 0;
  for (int d = 0; d < rn; d++) ri[d] = 0;
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
  if (tfe__views_meet(A->data, &A->lay, C->data, &C->lay, sizeof(TFE_T)))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C overlaps input A");
  if (B && tfe__views_meet(B->data, &B->lay, C->data, &C->lay, sizeof(TFE_T)))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C overlaps input B");
  return TFE_OK;
}

/* The same for views that match plan P (dims and strides): their element ranges are the
 * plan's, so the common case, ranges apart, costs a few compares; ranges that meet get the
 * exact test. */
TFE_INTERNAL tfe_status TFE_FN(pr_check_planned_)(const tfe_contract_plan *P, const TFE_TY(view) *A,
                                                  const TFE_TY(view) *B, const TFE_TY(view) *C, const char *where) {
  const TFE_TY(view) *v[3] = {A, B, C};
  for (int op = 0; op < 3; op++)
    if (v[op] && !v[op]->data && !P->empty[op])
      return tfe__fail(TFE_ERR_NULL, where, "data of %s is NULL", tfe__pr_opname(op));
  const size_t z = sizeof(TFE_T);
  if (!tfe__pr_apart(P, 0, A->data, A->lay.offset, C->data, C->lay.offset, z) &&
      tfe__views_meet(A->data, &A->lay, C->data, &C->lay, z))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C overlaps input A");
  if (B && !tfe__pr_apart(P, 1, B->data, B->lay.offset, C->data, C->lay.offset, z) &&
      tfe__views_meet(B->data, &B->lay, C->data, &C->lay, z))
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

#endif
