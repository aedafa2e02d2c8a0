/* tenferro/einsum/einsum_tpl.h — N-ary einsum execution of one kind; re-included per kind.
 * Parameters: TFE_S, TFE_T, TFE_DT (see config.h). Only tfe_sr_* and the contraction engine
 * of the kind are used, so user kinds work too. Every step runs on the call's backend. */
/* The plan's kind code: shipped kinds use their dtype; user kinds (TFE_DT_CUSTOM) add their
 * element size, which is what plans depend on (see tfe__ein_elem_size). */
#if !TFE__BODY_PHASE
#undef TFE__EIN_DT
#define TFE__EIN_DT (TFE_DT == TFE_DT_CUSTOM ? (tfe_dtype)((int)TFE_DT_CUSTOM + (int)sizeof(TFE_T)) : TFE_DT)

/* out = alpha * einsum(ops) + beta * out, following plan p. out may have any strides (no
 * overlap with itself or the operands); the operands must have the dims and strides the plan
 * was made for (their offsets and data pointers are free). out is untouched on error. */
TFE_API tfe_status TFE_FN(einsum_execute)(const tfe_einsum_plan *p, TFE_T alpha, const TFE_TY(view) *ops,
                                          TFE_T beta, const TFE_TY(view) *out);
/* The same on an explicit backend (NULL: the one inferred for host memory). */
TFE_API tfe_status TFE_FN(einsum_execute_on)(const tfe_prims_backend *be, const tfe_einsum_plan *p, TFE_T alpha,
                                             const TFE_TY(view) *ops, TFE_T beta, const TFE_TY(view) *out);

/* out = alpha * einsum(expr, ops) + beta * out (string form) with options (NULL: defaults). */
TFE_API tfe_status TFE_FN(einsum_into_with)(const TFE_TY(view) *out, TFE_T alpha, TFE_T beta, const char *expr, int n,
                                            const TFE_TY(view) *ops, const tfe_einsum_opts *opts);
TFE_API tfe_status TFE_FN(einsum_into)(const TFE_TY(view) *out, TFE_T alpha, TFE_T beta, const char *expr, int n,
                                       const TFE_TY(view) *ops);
/* A new dense tensor (opts->out_order, column-major by default) with einsum(expr, ops). */
TFE_API tfe_status TFE_FN(einsum_with)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops,
                                       const tfe_einsum_opts *opts);
TFE_API tfe_status TFE_FN(einsum)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops);
/* Integer labels: labels[k] names the axes of ops[k]; out_labels NULL = implicit output. */
TFE_API tfe_status TFE_FN(einsum_labels)(TFE_TY(tensor) *out, int n, const TFE_TY(view) *ops,
                                         const int32_t *const *labels, const int32_t *out_labels, int out_rank,
                                         const tfe_einsum_opts *opts);
/* Consuming form: the operand tensors are given up (released, handles cleared) whether or not
 * the call succeeds; their storage may hold intermediates or the result (see docs/einsum.md). */
TFE_API tfe_status TFE_FN(einsum_owned)(TFE_TY(tensor) *out, const char *expr, int n, TFE_TY(tensor) *ops,
                                        const tfe_einsum_opts *opts);
#else /* bodies */
#undef TFE__EIN_DT
#define TFE__EIN_DT (TFE_DT == TFE_DT_CUSTOM ? (tfe_dtype)((int)TFE_DT_CUSTOM + (int)sizeof(TFE_T)) : TFE_DT)

/* *d = *s up to s's rank (a layout is 1 KiB at TFE_MAX_RANK 64: whole copies were a quarter of
 * a 10 x 20 x 10 chain step's time; nothing reads past the rank). */
TFE_INTERNAL void TFE_FN(ein_lay_)(tfe_layout *d, const tfe_layout *s) {
  d->rank = s->rank;
  d->offset = s->offset;
  for (int i = 0; i < s->rank; i++) { d->dims[i] = s->dims[i]; d->strides[i] = s->strides[i]; }
}
/* The view of operand k as the plan reads it, with the sliced labels fixed to idx[], into *v. */
TFE_INTERNAL void TFE_FN(ein_leaf_to_)(const tfe_einsum_plan *p, const TFE_TY(view) *op, int k, const int64_t *idx,
                                       TFE_TY(view) *v) {
  v->data = op->data; v->conj = op->conj;
  TFE_FN(ein_lay_)(&v->lay, &p->leaf[k].lay);
  v->lay.offset = op->lay.offset;
  for (int i = 0; i < v->lay.rank; i++) {
    int s = p->slice_of[p->leaf[k].lab[i]];
    if (s >= 0) { v->lay.offset += idx[s] * v->lay.strides[i]; v->lay.dims[i] = 1; }
  }
}
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_leaf_)(const tfe_einsum_plan *p, const TFE_TY(view) *op, int k,
                                            const int64_t *idx) {
  TFE_TY(view) v;
  TFE_FN(ein_leaf_to_)(p, op, k, idx, &v);
  return v;
}
/* A workspace buffer as a view; bp[i] is where buffer i lives during this call. */
TFE_INTERNAL void TFE_FN(ein_buf_to_)(char *const *bp, const tfe__ein_step *s, TFE_TY(view) *v) {
  v->data = (TFE_T *)bp[s->buf];
  TFE_FN(ein_lay_)(&v->lay, &s->lay);
  v->conj = false;
}
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_buf_)(char *const *bp, const tfe__ein_step *s) {
  TFE_TY(view) v;
  TFE_FN(ein_buf_to_)(bp, s, &v);
  return v;
}
/* Node id -> the view that holds it during the current slice, into *v (filled in place: a
 * view returned by value is copied whole). */
TFE_INTERNAL void TFE_FN(ein_node_to_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *bp, int id,
                                       const int64_t *idx, const int32_t **lab, TFE_TY(view) *v) {
  if (id >= p->n) { *lab = p->step[id - p->n].lab; TFE_FN(ein_buf_to_)(bp, &p->step[id - p->n], v); return; }
  int pre = p->leaf[id].pre;
  if (pre >= 0) { *lab = p->pre[pre].lab; TFE_FN(ein_buf_to_)(bp, &p->pre[pre], v); return; }
  *lab = p->leaf[id].lab;
  TFE_FN(ein_leaf_to_)(p, &ops[id], id, idx, v);
}
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_node_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *bp,
                                            int id, const int64_t *idx, const int32_t **lab) {
  TFE_TY(view) v;
  TFE_FN(ein_node_to_)(p, ops, bp, id, idx, lab, &v);
  return v;
}

/* Node id's base pointer during slice idx[] (its view's data plus offset) and conjugation: what
 * ein_node_to_ would build the view around, without building it (a held step, ein_slice_). */
TFE_INTERNAL const TFE_T *TFE_FN(ein_node_ptr_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *bp,
                                                int id, const int64_t *idx) {
  if (id >= p->n) { const tfe__ein_step *s = &p->step[id - p->n]; return (const TFE_T *)(void *)bp[s->buf] + s->lay.offset; }
  int pre = p->leaf[id].pre;
  if (pre >= 0) return (const TFE_T *)(void *)bp[p->pre[pre].buf] + p->pre[pre].lay.offset;
  const tfe__ein_leaf *lf = &p->leaf[id];
  int64_t off = ops[id].lay.offset;
  for (int i = 0; p->nsliced && i < lf->lay.rank; i++) {
    int s = p->slice_of[lf->lab[i]];
    if (s >= 0) off += idx[s] * lf->lay.strides[i];
  }
  return ops[id].data + off;
}

/* Checks the operands against the plan. */
TFE_INTERNAL tfe_status TFE_FN(ein_check_ops_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops) {
  if (p->dtype != TFE__EIN_DT || p->elem != sizeof(TFE_T))
    return TFE_FAIL(TFE_ERR_DTYPE, "plan was made for %s, called with %s", tfe_dtype_name(p->dtype), tfe_dtype_name(TFE_DT));
  if (p->n > 0 && !ops) return TFE_FAIL(TFE_ERR_NULL, "argument 'ops' is NULL");
  const int64_t *pk = p->in_pk; /* each operand's rank, dims and strides, packed */
  for (int k = 0; k < p->n; k++) {
    const tfe_layout *L = &ops[k].lay, *P = &p->in[k];
    int r = (int)pk[0];
    const int64_t *pd = pk + 1, *ps = pk + 1 + r;
    pk += 1 + 2 * r;
    if (L->rank != r)
      return TFE_FAIL(TFE_ERR_RANK, "operand %d has rank %d, the plan expects %d", k, L->rank, r);
    uint64_t diff = 0; /* (without a branch per axis: a chain checks one operand per step) */
    for (int i = 0; i < r; i++) diff |= (uint64_t)(L->dims[i] ^ pd[i]) | (uint64_t)(L->strides[i] ^ ps[i]);
    for (int i = 0; diff && i < L->rank; i++)
      if (L->dims[i] != P->dims[i] || L->strides[i] != P->strides[i])
        return TFE_FAIL(TFE_ERR_SHAPE, "operand %d axis %d is %lld (stride %lld), the plan expects %lld (stride %lld)", k, i,
                        (long long)L->dims[i], (long long)L->strides[i], (long long)P->dims[i], (long long)P->strides[i]);
    if (!ops[k].data && p->in_ext[k][0] <= p->in_ext[k][1])
      return TFE_FAIL(TFE_ERR_NULL, "data of operand %d is NULL", k);
  }
  return TFE_OK;
}
/* Checks the operands and the output against the plan; nothing is written on failure. */
TFE_INTERNAL tfe_status TFE_FN(ein_check_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops,
                                           const TFE_TY(view) *out) {
  TFE_TRY(TFE_FN(ein_check_ops_)(p, ops));
  if (out->lay.rank != p->out_rank)
    return TFE_FAIL(TFE_ERR_RANK, "output has rank %d, the expression gives %d", out->lay.rank, p->out_rank);
  for (int i = 0; i < p->out_rank; i++)
    if (out->lay.dims[i] != p->out_dims[i])
      return TFE_FAIL(TFE_ERR_SHAPE, "output axis %d is %lld, the expression gives %lld", i,
                      (long long)out->lay.dims[i], (long long)p->out_dims[i]);
  if (tfe_layout_numel(&out->lay) == 0) return TFE_OK;
  if (!out->data) return TFE_FAIL(TFE_ERR_NULL, "data of the output is NULL");
  if (!tfe__layout_distinct(&out->lay))
    return TFE_FAIL(TFE_ERR_OVERLAP, "output has overlapping elements (two indices address one element)");
  /* the output's byte range once (a chain has one operand per step), the exact test only for
   * operands whose range meets it */
  int64_t lo = 0, hi = 0, z = (int64_t)sizeof(TFE_T);
  if (!tfe_layout_extent(&out->lay, &lo, &hi)) return TFE_OK; /* (not taken: numel > 0 above) */
  const char *o0 = (const char *)out->data + lo * z, *o1 = (const char *)out->data + (hi + 1) * z;
  for (int k = 0; k < p->n; k++) { /* (the operands' layouts are the plan's: ein_check_ops_) */
    int64_t a = p->in_ext[k][0] + ops[k].lay.offset, b = p->in_ext[k][1] + ops[k].lay.offset;
    if (!ops[k].data || a > b) continue;
    const char *x0 = (const char *)ops[k].data + a * z, *x1 = (const char *)ops[k].data + (b + 1) * z;
    if (x0 < o1 && o0 < x1 && tfe__views_meet(ops[k].data, &ops[k].lay, out->data, &out->lay, sizeof(TFE_T)))
      return TFE_FAIL(TFE_ERR_OVERLAP, "output overlaps operand %d", k);
  }
  return TFE_OK;
}

/* c = a * b for a step that sums no label (elementwise or outer product, with broadcasting):
 * a and b are viewed in c's label order (ein_as_: a label x lacks gets size 1 and stride 0, a
 * repeated one the sum of its strides) and handed to the kernel room's zip with the semiring
 * product. */
TFE_INTERNAL void TFE_FN(ein_as_)(const TFE_TY(view) *x, const int32_t *lx, const TFE_TY(view) *c, const int32_t *lc,
                                  TFE_TY(view) *out) {
  out->data = x->data; out->conj = x->conj;
  out->lay.rank = c->lay.rank; out->lay.offset = x->lay.offset;
  for (int i = 0; i < c->lay.rank; i++) {
    int64_t st = 0, dim = 1;
    for (int j = 0; j < x->lay.rank; j++)
      if (lx[j] == lc[i]) { st += x->lay.strides[j]; dim = x->lay.dims[j]; }
    out->lay.dims[i] = dim; out->lay.strides[i] = dim == 1 ? 0 : st;
  }
}
TFE_INTERNAL tfe_status TFE_FN(ein_zip_)(const TFE_TY(view) *a, const int32_t *la, const TFE_TY(view) *b,
                                         const int32_t *lb, const TFE_TY(view) *c, const int32_t *lc) {
  TFE_TY(view) x, y;
  TFE_FN(ein_as_)(a, la, c, lc, &x);
  TFE_FN(ein_as_)(b, lb, c, lc, &y);
  return TFE_FN(k_zip_cpu_)(c, &x, &y, TFE_BIN_MUL);
}
/* The elementwise step c = a * b on the backend's elementwise_mul slot. */
TFE_INTERNAL tfe_status TFE_FN(ein_ew_slot_)(const tfe_prims_backend *be, const TFE_TY(view) *a, const int32_t *la,
                                             const TFE_TY(view) *b, const int32_t *lb, const TFE_TY(view) *c,
                                             const int32_t *lc) {
  tfe_dyn x = {TFE_DT, a->data, a->lay, a->conj, NULL}, y = {TFE_DT, b->data, b->lay, b->conj, NULL};
  tfe_dyn z = {TFE_DT, c->data, c->lay, false, NULL};
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  tfe_prim_desc d = {TFE_PRIM_ELEMENTWISE_MUL, &x, &y, &z, la, lb, lc, &one, &zero};
  return be->exec[TFE_PRIM_ELEMENTWISE_MUL](be, &d, NULL);
}
/* One pairwise step on backend be: c = alpha * (a . b) + beta * c. P is the step's stored
 * contraction plan when it serves (plans made for the CPU's engines, views as planned). */
TFE_INTERNAL tfe_status TFE_FN(ein_step_)(const tfe_prims_backend *be, const tfe_contract_plan *P, const tfe__ein_step *s,
                                          TFE_T alpha, const TFE_TY(view) *a, const int32_t *la, const TFE_TY(view) *b,
                                          const int32_t *lb, TFE_T beta, const TFE_TY(view) *c, const int32_t *lc) {
  if (s->zip && TFE_FN(sr_eq)(alpha, TFE_FN(sr_one)()) && TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)())) {
    if (tfe__be_native(be, TFE_PRIM_ELEMENTWISE_MUL) && tfe__be_native(be, TFE_PRIM_CONTRACT))
      return TFE_FN(ein_zip_)(a, la, b, lb, c, lc);
    if (!tfe__be_native(be, TFE_PRIM_ELEMENTWISE_MUL) &&
        tfe__ein_all_shared(la, a->lay.rank, lb, b->lay.rank, lc, c->lay.rank))
      return TFE_FN(ein_ew_slot_)(be, a, la, b, lb, c, lc);
  }
  if (P) return TFE_FN(pr_run_plan_)(be, P, alpha, a, b, beta, c, "tfe_einsum");
  return TFE_FN(pr_run_)(be, alpha, a, la, b, lb, beta, c, lc, "tfe_einsum");
}
/* A unary contraction of the plan (leaf reduction, output write) on backend be. */
TFE_INTERNAL tfe_status TFE_FN(ein_unary_)(const tfe_prims_backend *be, const tfe_contract_plan *P, TFE_T alpha,
                                           const TFE_TY(view) *a, const int32_t *la, TFE_T beta,
                                           const TFE_TY(view) *c, const int32_t *lc) {
  if (P) return TFE_FN(pr_run_plan_)(be, P, alpha, a, NULL, beta, c, "tfe_einsum");
  return TFE_FN(pr_run_)(be, alpha, a, la, NULL, NULL, beta, c, lc, "tfe_einsum");
}
/* The steps from k on that form a chain of elementwise products: each sums nothing and takes
 * the previous one's result (the only use of an intermediate in the tree), at most
 * TFE_EW_MAXIN - 1 of them; the plan's last step joins only when last_ok. */
TFE_INTERNAL int TFE_FN(ein_chain_len_)(const tfe_einsum_plan *p, int k, bool last_ok) {
  int m = 1;
  while (k + m < p->nsteps && m + 1 < TFE_EW_MAXIN) {
    const tfe__ein_step *t = &p->step[k + m];
    int prev = p->n + k + m - 1;
    if (!t->zip || (t->a != prev && t->b != prev) || (k + m + 1 == p->nsteps && !last_ok)) break;
    m++;
  }
  return m;
}
/* The m + 1 inputs of the chain of m steps from k, into x (labels lx): the first step's a and b,
 * then each later step's operand other than the chain so far; bit j of *flip: that step
 * computes input j * (the chain so far). */
TFE_INTERNAL void TFE_FN(ein_chain_ins_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *bp,
                                         const int64_t *idx, int k, int m, TFE_TY(view) *x, const int32_t **lx,
                                         unsigned *flip) {
  *flip = 0;
  for (int j = 0; j <= m; j++) {
    const tfe__ein_step *s = &p->step[k + (j < 2 ? 0 : j - 1)];
    int id = j == 0 ? s->a : j == 1 ? s->b : s->a == p->n + k + j - 2 ? s->b : s->a;
    if (j >= 2 && id == s->a) *flip |= 1u << j;
    TFE_FN(ein_node_to_)(p, ops, bp, id, idx, &lx[j], &x[j]);
  }
}
/* Whether one of the first m + 1 inputs shares memory with the result c: the arena gives a
 * buffer that dies inside the chain to a later step's result (first fit over live ranges),
 * which one pass would read while writing. */
TFE_INTERNAL bool TFE_FN(ein_chain_meets_)(const TFE_TY(view) *x, int m, const TFE_TY(view) *c) {
  for (int j = 0; j <= m; j++)
    if (tfe__views_meet(x[j].data, &x[j].lay, c->data, &c->lay, sizeof(TFE_T))) return true;
  return false;
}
/* A chain of m elementwise products (ein_chain_len_, m >= 2; inputs x, labels lx, flip bits) as
 * one ZIPN call of be's own elementwise slot into c (labels lc): one pass over the last result
 * instead of one per step, each step's product in its own operand order. *done: whether the
 * slot ran it (TFE_ERR_UNSUPPORTED: not done, the steps run one by one). */
TFE_INTERNAL tfe_status TFE_FN(ein_chain_run_)(const tfe_prims_backend *be, const TFE_TY(view) *x,
                                               const int32_t *const *lx, unsigned flip, int m, const TFE_TY(view) *c,
                                               const int32_t *lc, bool *done) {
  tfe_dyn in[TFE_EW_MAXIN];
  const tfe_dyn *inp[TFE_EW_MAXIN];
  for (int j = 0; j <= m; j++) {
    TFE_TY(view) v;
    TFE_FN(ein_as_)(&x[j], lx[j], c, lc, &v);
    in[j] = TFE_FN(k_dyn_)(&v);
    inp[j] = &in[j];
  }
  tfe_dyn Z = TFE_FN(k_dyn_)(c);
  tfe_ew_desc d = {TFE_EW_ZIPN, TFE_BIN_MUL, &Z, NULL, NULL, NULL, NULL, 0, NULL, m + 1, inp, flip};
  tfe_status st = be->elementwise(be, &d);
  *done = st != TFE_ERR_UNSUPPORTED;
  return *done ? st : TFE_OK;
}
/* The steps from k as one pass when they form a chain of elementwise products (ein_chain_len_)
 * whose result shares no memory with its inputs (the chain shortened until it does not), on
 * be's own elementwise slot; *ran: the steps run (0: none, they run one by one). */
TFE_INTERNAL tfe_status TFE_FN(ein_chain_)(const tfe_prims_backend *be, const tfe_einsum_plan *p,
                                           const TFE_TY(view) *ops, char *const *bp, const int64_t *idx,
                                           const TFE_TY(view) *target, int k, bool last_ok, int *ran) {
  *ran = 0;
  int m = TFE_FN(ein_chain_len_)(p, k, last_ok);
  if (m < 2) return TFE_OK;
  TFE_TY(view) x[TFE_EW_MAXIN], z;
  const int32_t *lx[TFE_EW_MAXIN];
  unsigned flip;
  TFE_FN(ein_chain_ins_)(p, ops, bp, idx, k, m, x, lx, &flip);
  for (; m >= 2; m--) {
    if (k + m == p->nsteps) { z.data = target->data; z.conj = target->conj; TFE_FN(ein_lay_)(&z.lay, &target->lay); }
    else TFE_FN(ein_buf_to_)(bp, &p->step[k + m - 1], &z);
    if (!TFE_FN(ein_chain_meets_)(x, m, &z)) break;
  }
  if (m < 2) return TFE_OK;
  bool done = false;
  TFE_TRY(TFE_FN(ein_chain_run_)(be, x, lx, flip, m, &z, k + m == p->nsteps ? p->out_lab : p->step[k + m - 1].lab, &done));
  if (done) *ran = m;
  return TFE_OK;
}
/* Whether out has the layout the output-writing steps were planned for. */
TFE_INTERNAL bool TFE_FN(ein_out_planned_)(const tfe_einsum_plan *p, const TFE_TY(view) *out) {
  for (int i = 0; i < p->out_rank; i++)
    if (out->lay.strides[i] != p->out_lay.strides[i] && out->lay.dims[i] > 1) return false;
  return out->lay.rank == p->out_rank;
}

/* The base pointer of a step's operand x (the plan's packed record, tfe_einsum_plan.src) during
 * slice idx[]: what ein_node_ptr_ gives, without the plan's step and leaf records. */
TFE_INTERNAL const TFE_T *TFE_FN(ein_src_ptr_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *bp,
                                               const tfe__ein_src *x, const int64_t *idx) {
  if (x->op < 0) return (const TFE_T *)(void *)bp[x->buf] + x->off;
  if (p->nsliced) return TFE_FN(ein_node_ptr_)(p, ops, bp, x->op, idx);
  return ops[x->op].data + ops[x->op].lay.offset;
}

/* One slice: leaf reductions, then the pairwise steps; the last writes into `target`. With a
 * profiling hook set, every step is timed and reported. cp: the stored plans (NULL: none
 * serve); the last step's only when target_planned. */
TFE_INTERNAL tfe_status TFE_FN(ein_slice_)(const tfe_prims_backend *be, tfe_contract_plan *const *cp,
                                           bool target_planned, const tfe_einsum_plan *p, const TFE_TY(view) *ops,
                                           char *const *bp, const int64_t *idx, int64_t slice, TFE_T alpha, TFE_T beta,
                                           const TFE_TY(view) *target, tfe__ein_prog *pg) {
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  tfe_einsum_step_hook hook = atomic_load(&tfe__st.einsum.hook.fn);
  double t0 = hook ? tfe__now() : 0;
  for (int q = 0; q < p->npre; q++) {
    const tfe__ein_step *s = &p->pre[q];
    TFE_TY(view) a = TFE_FN(ein_leaf_)(p, &ops[s->a], s->a, idx), c = TFE_FN(ein_buf_)(bp, s);
    TFE_TRY(TFE_FN(ein_unary_)(be, cp ? cp[q] : NULL, one, &a, p->leaf[s->a].lab, zero, &c, s->lab));
    if (hook) {
      double t1 = tfe__now();
      tfe__ein_report(hook, -1 - q, p->nsteps, slice, "reduce", &a.lay, p->leaf[s->a].lab, NULL, NULL, &c.lay, s->lab,
                      t1 - t0);
      t0 = t1;
    }
    if (pg->fn) TFE_TRY(tfe__progress_step(pg, q, 0));
  }
  /* Held steps: a stored plan that needs nothing but its kept set-up (prims, pr_held_) runs on
   * the operands' pointers, on one thread, without views or checks: the operands were checked
   * against the plan once (ein_check_) and the intermediates are the plan's own buffers. Not
   * with a profiling hook (it reports the views). */
  int nt = cp && !hook ? tfe_get_num_threads() : 0;
  if (nt > 0) TFE_FN(pr_enroll_)();
  /* chains of elementwise products as one pass (ein_chain_) on a backend with its own
   * elementwise slot, for the standard algebra; not under a profiling hook, which reports every
   * step as it runs alone */
  bool fuse = TFE_ALG == TFE_ALG_STANDARD && !hook && be->elementwise && be->elementwise != tfe__cpu_elementwise &&
              !tfe__be_native(be, TFE_PRIM_ELEMENTWISE_MUL);
  bool fuse_last = TFE_FN(sr_eq)(alpha, one) && TFE_FN(sr_eq)(beta, zero);
  for (int k = 0; k < p->nsteps; k++) {
    const tfe__ein_step *s = &p->step[k];
    bool last = k + 1 == p->nsteps;
    const tfe_contract_plan *P = cp && (!last || target_planned) ? cp[p->npre + k] : NULL;
    const void *h = nt > 0 && P ? TFE_FN(pr_held_)(P) : NULL;
    if (h && (nt == 1 || TFE_FN(pr_threads_)(P) <= 1)) {
      const tfe__ein_src *x = &p->src[3 * k];
      TFE_T *pc = last ? target->data + target->lay.offset : (TFE_T *)(void *)bp[x[2].buf] + x[2].off;
      TFE_FN(pr_run_held_)(P, h, last ? alpha : one, TFE_FN(ein_src_ptr_)(p, ops, bp, &x[0], idx),
                           TFE_FN(ein_src_ptr_)(p, ops, bp, &x[1], idx), last ? beta : zero, pc);
      if (pg->fn) TFE_TRY(tfe__progress_step(pg, p->npre + k, last));
      continue;
    }
    int ran = 0;
    if (s->zip && fuse) TFE_TRY(TFE_FN(ein_chain_)(be, p, ops, bp, idx, target, k, fuse_last, &ran));
    if (ran > 0) {
      for (int j = 0; j < ran && pg->fn; j++) TFE_TRY(tfe__progress_step(pg, p->npre + k + j, k + j + 1 == p->nsteps));
      k += ran - 1;
      continue;
    }
    const int32_t *la, *lb;
    TFE_TY(view) a, b, c;
    TFE_FN(ein_node_to_)(p, ops, bp, s->a, idx, &la, &a);
    TFE_FN(ein_node_to_)(p, ops, bp, s->b, idx, &lb, &b);
    if (last) { c.data = target->data; c.conj = target->conj; TFE_FN(ein_lay_)(&c.lay, &target->lay); }
    else TFE_FN(ein_buf_to_)(bp, s, &c);
    TFE_TRY(TFE_FN(ein_step_)(be, P, s, last ? alpha : one, &a, la, &b, lb, last ? beta : zero, &c,
                              last ? p->out_lab : s->lab));
    if (hook) {
      double t1 = tfe__now();
      tfe__ein_report(hook, k, p->nsteps, slice, s->zip ? "zip" : "contract", &a.lay, la, &b.lay, lb, &c.lay,
                      last ? p->out_lab : s->lab, t1 - t0);
      t0 = t1;
    }
    if (pg->fn) TFE_TRY(tfe__progress_step(pg, p->npre + k, last));
  }
  return TFE_OK;
}

/* t = the semiring's zero, in be's memory (its elementwise slot where it has its own). */
TFE_INTERNAL tfe_status TFE_FN(ein_zero_)(const tfe_prims_backend *be, const TFE_TY(view) *t) {
  TFE_T z = TFE_FN(sr_zero)();
  if (be->elementwise && be->elementwise != tfe__cpu_elementwise) {
    tfe_dyn D = TFE_FN(k_dyn_)(t);
    tfe_ew_desc d = {TFE_EW_FILL, 0, &D, NULL, NULL, &z, NULL, 0, NULL, 0, NULL, 0};
    return be->elementwise(be, &d);
  }
  if (be->space.kind != TFE_MEM_HOST) /* no host loop over device memory */
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' has no elementwise slot to zero a sliced accumulator", be->name);
  int64_t cnt = tfe_layout_numel(&t->lay);
  for (int64_t i = 0; i < cnt; i++) t->data[t->lay.offset + i] = z;
  return TFE_OK;
}
/* The part of accumulator tmp that slice idx[] writes (its sliced output labels fixed). */
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_acc_part_)(const tfe_einsum_plan *p, const TFE_TY(view) *tmp, const int64_t *idx) {
  TFE_TY(view) t = *tmp;
  for (int i = 0; i < t.lay.rank; i++) {
    int q = p->slice_of[p->out_lab[i]];
    if (q >= 0) { t.lay.offset += idx[q] * t.lay.strides[i]; t.lay.dims[i] = 1; }
  }
  return t;
}
/* Slice s's sliced-label indices: the serial loop's odometer (the first sliced label fastest). */
TFE_INTERNAL void TFE_FN(ein_slice_idx_)(const tfe_einsum_plan *p, int64_t s, int64_t *idx) {
  for (int d = 0; d < p->nsliced; d++) { idx[d] = s % p->sliced_dim[d]; s /= p->sliced_dim[d]; }
}
/* Slice idx[]'s leaf reductions and every step but the last, into worker buffers mb. */
TFE_INTERNAL tfe_status TFE_FN(ein_slice_head_)(const tfe_prims_backend *be, tfe_contract_plan *const *cp,
                                                const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *mb,
                                                const int64_t *idx) {
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  tfe_status st = TFE_OK;
  for (int q = 0; st == TFE_OK && q < p->npre; q++) {
    const tfe__ein_step *x = &p->pre[q];
    TFE_TY(view) a = TFE_FN(ein_leaf_)(p, &ops[x->a], x->a, idx), c = TFE_FN(ein_buf_)(mb, x);
    st = TFE_FN(ein_unary_)(be, cp ? cp[q] : NULL, one, &a, p->leaf[x->a].lab, zero, &c, x->lab);
  }
  for (int k = 0; st == TFE_OK && k + 1 < p->nsteps; k++) {
    const tfe__ein_step *x = &p->step[k];
    const int32_t *la, *lb;
    TFE_TY(view) a = TFE_FN(ein_node_)(p, ops, mb, x->a, idx, &la), b = TFE_FN(ein_node_)(p, ops, mb, x->b, idx, &lb);
    TFE_TY(view) c = TFE_FN(ein_buf_)(mb, x);
    st = TFE_FN(ein_step_)(be, cp ? cp[p->npre + k] : NULL, x, one, &a, la, &b, lb, zero, &c, x->lab);
  }
  return st;
}
/* Slice idx[]'s last step, added into its part of the accumulator tmp. */
TFE_INTERNAL tfe_status TFE_FN(ein_slice_tail_)(const tfe_prims_backend *be, tfe_contract_plan *const *cp,
                                                const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *const *mb,
                                                const int64_t *idx, const TFE_TY(view) *tmp) {
  const tfe__ein_step *x = &p->step[p->nsteps - 1];
  const int32_t *la, *lb;
  TFE_TY(view) a = TFE_FN(ein_node_)(p, ops, mb, x->a, idx, &la), b = TFE_FN(ein_node_)(p, ops, mb, x->b, idx, &lb);
  TFE_TY(view) t = TFE_FN(ein_acc_part_)(p, tmp, idx);
  return TFE_FN(ein_step_)(be, cp ? cp[p->npre + p->nsteps - 1] : NULL, x, TFE_FN(sr_one)(), &a, la, &b, lb,
                           TFE_FN(sr_one)(), &t, p->out_lab);
}
/* How many disjoint parts of the accumulator the slices write (the product of the sliced
 * output labels' dims); sets sum_dims[d] to sliced label d's dim when it is summed, else 1. */
TFE_INTERNAL int64_t TFE_FN(ein_parts_)(const tfe_einsum_plan *p, int64_t *sum_dims) {
  int64_t parts = 1;
  for (int d = 0; d < p->nsliced; d++) sum_dims[d] = p->sliced_dim[d];
  for (int i = 0; i < p->out_lay.rank; i++) {
    int q = p->slice_of[p->out_lab[i]];
    if (q >= 0 && sum_dims[q] > 1) { parts *= p->sliced_dim[q]; sum_dims[q] = 1; }
  }
  return parts;
}
/* Slices in parallel (exec.h, tfe__ein_workers) on W threads. Each computes its slices' leaf
 * reductions and steps in its own copy of the intermediates (bp[w * nbuf ...]) on one thread
 * (tenferro's kernels and BLIS inside single-threaded); the last step adds the slice into its
 * part of the shared accumulator tmp, and the sums are those of the serial loop, bit for bit:
 * - when the slices write at least W disjoint parts (sliced output labels), a thread takes
 *   whole parts and adds a part's slices in serial order: no thread ever waits;
 * - else threads take slices round-robin and the last steps run in slice order (an OpenMP
 *   ordered region), the one point where a thread may wait for another. */
TFE_INTERNAL tfe_status TFE_FN(ein_run_par_)(const tfe_prims_backend *be, tfe_contract_plan *const *cp,
                                             const tfe_einsum_plan *p, const TFE_TY(view) *ops, const TFE_TY(view) *tmp,
                                             char *const *bp, int W) {
  tfe_status first = TFE_OK;
  int failed = 0;
  char msg[TFE_ERRMSG_MAX];
  msg[0] = 0;
  int64_t sum_dims[TFE_MAX_RANK * 2 + 1];
  int64_t parts = TFE_FN(ein_parts_)(p, sum_dims), per = p->nslices / parts;
  (void)W; (void)per;
  TFE_OMP(parallel num_threads(W))
  {
    int w = 0;
#ifdef _OPENMP
    w = omp_get_thread_num();
#endif
    int saved = tfe__ts.rt.threads;
    tfe__ts.rt.threads = 1;
    char *const *mb = bp + (size_t)w * (size_t)p->nbuf;
    tfe_status st = TFE_OK;
    if (parts >= W) {
      TFE_OMP(for schedule(dynamic, 1))
      for (int64_t g = 0; g < parts; g++) {
        int64_t idx[TFE_MAX_RANK * 2 + 1], r = g;
        for (int d = 0; d < p->nsliced; d++) /* the part's output digits; summed digits 0 */
          if (sum_dims[d] == 1) { idx[d] = r % p->sliced_dim[d]; r /= p->sliced_dim[d]; } else idx[d] = 0;
        for (int64_t j = 0; j < per; j++) {
          int skip;
          TFE_OMP(atomic read)
          skip = failed;
          if (skip || st != TFE_OK) break;
          st = TFE_FN(ein_slice_head_)(be, cp, p, ops, mb, idx);
          if (st == TFE_OK) st = TFE_FN(ein_slice_tail_)(be, cp, p, ops, mb, idx, tmp);
          for (int d = 0; d < p->nsliced; d++) { /* next summed digits, in serial order */
            if (sum_dims[d] == 1) continue;
            if (++idx[d] < sum_dims[d]) break;
            idx[d] = 0;
          }
        }
        if (st != TFE_OK) {
          TFE_OMP(critical(tfe__ein_slice_fail))
          if (!failed) {
            memcpy(msg, tfe__ts.errmsg, sizeof msg);
            first = st;
            TFE_OMP(atomic write)
            failed = 1;
          }
          st = TFE_OK;
        }
      }
    } else {
      TFE_OMP(for ordered schedule(static, 1))
      for (int64_t s = 0; s < p->nslices; s++) {
        int64_t idx[TFE_MAX_RANK * 2 + 1];
        TFE_FN(ein_slice_idx_)(p, s, idx);
        int skip;
        TFE_OMP(atomic read)
        skip = failed;
        st = skip ? TFE_OK : TFE_FN(ein_slice_head_)(be, cp, p, ops, mb, idx);
        TFE_OMP(ordered)
        {
          if (!skip && st == TFE_OK && !failed) st = TFE_FN(ein_slice_tail_)(be, cp, p, ops, mb, idx, tmp);
          /* slice s is done here (or failed): in slice order, one thread at a time */
          if (st != TFE_OK && !failed) {
            memcpy(msg, tfe__ts.errmsg, sizeof msg);
            first = st;
            TFE_OMP(atomic write)
            failed = 1;
          }
        }
        st = TFE_OK;
      }
    }
    tfe__ts.rt.threads = saved;
  }
  if (first != TFE_OK) {
    memcpy(tfe__ts.errmsg, msg, sizeof msg);
    tfe__ts.errcode = first;
  }
  return first;
}
/* The plan's run over all slices with the buffers at bp[] (an arena, or owned operands'
 * storage); W > 1: that many slices at once, worker w's buffers at bp[w * nbuf ...]. */
TFE_INTERNAL tfe_status TFE_FN(ein_run_)(const tfe_prims_backend *be, const tfe_einsum_plan *p, TFE_T alpha,
                                         const TFE_TY(view) *ops, TFE_T beta, const TFE_TY(view) *out, char *const *bp,
                                         int W, tfe__ein_prog *pg) {
  int64_t idx[TFE_MAX_RANK * 2 + 1];
  memset(idx, 0, sizeof idx);
  tfe_contract_plan *const *cp = tfe__ein_stored_ok(be) ? p->cplan : NULL;
  tfe_contract_plan *outp = cp ? cp[p->npre + p->nsteps] : NULL;
  bool planned = TFE_FN(ein_out_planned_)(p, out);
  if (p->nslices <= 1) return TFE_FN(ein_slice_)(be, cp, planned, p, ops, bp, idx, 0, alpha, beta, out, pg);
  /* Slices accumulate into a dense buffer; the output is written once at the end. */
  TFE_TY(view) tmp;
  tmp.data = (TFE_T *)bp[p->tmp_buf]; tmp.conj = false;
  tmp.lay = p->out_lay;
  tfe_status st = TFE_FN(ein_zero_)(be, &tmp);
  if (st == TFE_OK && W > 1) {
    st = TFE_FN(ein_run_par_)(be, cp, p, ops, &tmp, bp, W);
    if (st == TFE_OK) st = TFE_FN(ein_unary_)(be, planned ? outp : NULL, alpha, &tmp, p->out_lab, beta, out, p->out_lab);
    return st;
  }
  for (int64_t s = 0; st == TFE_OK && s < p->nslices; s++) {
    TFE_TY(view) t = tmp;
    for (int i = 0; i < t.lay.rank; i++) {
      int q = p->slice_of[p->out_lab[i]];
      if (q >= 0) { t.lay.offset += idx[q] * t.lay.strides[i]; t.lay.dims[i] = 1; }
    }
    st = TFE_FN(ein_slice_)(be, cp, true, p, ops, bp, idx, s, TFE_FN(sr_one)(), TFE_FN(sr_one)(), &t, pg);
    for (int d = 0; d < p->nsliced; d++) { /* odometer over the sliced labels */
      if (++idx[d] < p->sliced_dim[d]) break;
      idx[d] = 0;
    }
  }
  if (st == TFE_OK) st = TFE_FN(ein_unary_)(be, planned ? outp : NULL, alpha, &tmp, p->out_lab, beta, out, p->out_lab);
  return st;
}

/* ein_run_ as one sequence of the backend's calls where it has a seq slot (a CUDA device
 * replays it as a graph: gpu/graph.h). The key names the plan, the kind, the scalars and every
 * address and layout the steps read or write (operands, output, intermediates), so equal keys
 * mean equal calls. Not with a profiling hook (it times the steps one by one), nor for parallel
 * slices. A progress callback sees a replayed run as one report after it was queued (the
 * start's report, which may cancel, came before); a cancel while recording returns at once
 * (nothing ran). */
TFE_INTERNAL tfe_status TFE_FN(ein_run_seq_)(const tfe_prims_backend *be, const tfe_einsum_plan *p, TFE_T alpha,
                                             const TFE_TY(view) *ops, TFE_T beta, const TFE_TY(view) *out,
                                             char *const *bp, int W, tfe__ein_prog *pg) {
  if (!be->seq || W != 1 || atomic_load(&tfe__st.einsum.hook.fn))
    return TFE_FN(ein_run_)(be, p, alpha, ops, beta, out, bp, W, pg);
  size_t sw = (sizeof(TFE_T) + 7) / 8, nw = 4 + 2 * sw + 4 + 2 * (size_t)out->lay.rank + (size_t)p->nbuf;
  for (int k = 0; k < p->n; k++) nw += 4 + 2 * (size_t)ops[k].lay.rank;
  int64_t small[512], *key = nw <= 512 ? small : (int64_t *)tfe__alloc(nw * sizeof(int64_t));
  if (!key) return TFE_FN(ein_run_)(be, p, alpha, ops, beta, out, bp, W, pg);
  memset(key, 0, nw * sizeof(int64_t));
  size_t n = 0;
  key[n++] = (int64_t)(intptr_t)p, key[n++] = TFE_DT, key[n++] = p->n, key[n++] = p->nbuf;
  memcpy(&key[n], &alpha, sizeof alpha), n += sw;
  memcpy(&key[n], &beta, sizeof beta), n += sw;
  for (int k = 0; k < p->n; k++) n = tfe__ein_key_view(key, n, ops[k].data, ops[k].conj, &ops[k].lay);
  n = tfe__ein_key_view(key, n, out->data, out->conj, &out->lay);
  for (int i = 0; i < p->nbuf; i++) key[n++] = (int64_t)(intptr_t)bp[i];
  tfe_seq_desc d;
  memset(&d, 0, sizeof d);
  d.op = TFE_SEQ_BEGIN, d.key = key, d.key_bytes = n * sizeof(int64_t);
  d.owner = (void *)(uintptr_t)p, d.owner_retain = tfe__ein_owner_retain, d.owner_release = tfe__ein_owner_release;
  tfe_status st = be->seq(be, &d);
  if (key != small) tfe__free(key);
  if (st == TFE_OK && d.action == TFE_SEQ_DONE && pg->fn) tfe__progress_all(pg);
  if (st != TFE_OK || d.action == TFE_SEQ_DONE) return st;
  st = TFE_FN(ein_run_)(be, p, alpha, ops, beta, out, bp, W, pg);
  d.op = TFE_SEQ_END, d.status = st;
  tfe_status se = be->seq(be, &d);
  if (d.action == TFE_SEQ_AGAIN && st != TFE_ERR_CANCELLED) {
    if (pg->fn) tfe__progress_rewind(pg);
    return TFE_FN(ein_run_)(be, p, alpha, ops, beta, out, bp, W, pg);
  }
  return st != TFE_OK ? st : se;
}

/* Runs p with buffer i at reuse[i] when reuse is given and reuse[i] is not NULL (owned
 * operands' storage), the others in the (kept) arena of arena_bytes at offsets off[]. */
TFE_INTERNAL tfe_status TFE_FN(ein_exec_)(const tfe_prims_backend *be, const tfe_einsum_plan *p, TFE_T alpha,
                                          const TFE_TY(view) *ops, TFE_T beta, const TFE_TY(view) *out,
                                          char *const *reuse, const int64_t *off, int64_t arena_bytes) {
  tfe__ein_prog pg; /* progress and cancellation: off unless a callback is set (exec.h) */
  tfe_status st = tfe__progress_begin(&pg, p);
  if (st != TFE_OK) { tfe__progress_end(&pg); return st; }
  if (p->n == 1) {
    TFE_TY(view) a = TFE_FN(ein_leaf_)(p, &ops[0], 0, NULL);
    const tfe_contract_plan *P =
        tfe__ein_stored_ok(be) && TFE_FN(ein_out_planned_)(p, out) ? p->cplan[p->npre + p->nsteps] : NULL;
    st = TFE_FN(ein_unary_)(be, P, alpha, &a, p->leaf[0].lab, beta, out, p->out_lab);
    if (st == TFE_OK && pg.fn) st = tfe__progress_step(&pg, 0, 1);
    tfe__progress_end(&pg);
    return st;
  }
  /* parallel slices: worker w's copy of the intermediates at w * stride; the accumulator is one.
   * With a progress callback the slices run one after another (reports in step order). */
  int W = reuse || pg.fn ? 1 : tfe__ein_workers(p, be);
  int64_t stride = (arena_bytes + 63) / 64 * 64;
  if (W > 1 && stride > (INT64_MAX - 64) / W) W = 1;
  size_t nbp = (size_t)p->nbuf * (size_t)W;
  char *small[64], **bp = nbp <= 64 ? small : (char **)tfe__alloc(nbp * sizeof(char *));
  if (!bp) { tfe__progress_end(&pg); return TFE_ERR_ALLOC; }
  char *arena = NULL;
  /* intermediates in the backend's memory (a device backend without memory slots: refused) */
  bool device = be->mem_alloc != NULL || be->space.kind != TFE_MEM_HOST;
  if (arena_bytes > 0) {
    if (device) st = tfe_backend_alloc(be, (size_t)arena_bytes, (void **)&arena);
    else if (!(arena = (char *)tfe__ein_ws_get(W > 1 ? (size_t)(stride * W) : (size_t)arena_bytes))) st = TFE_ERR_ALLOC;
  }
  for (int i = 0; st == TFE_OK && i < p->nbuf; i++) bp[i] = reuse && reuse[i] ? reuse[i] : arena + off[i];
  for (int w = 1; st == TFE_OK && w < W; w++)
    for (int i = 0; i < p->nbuf; i++) bp[(size_t)w * (size_t)p->nbuf + (size_t)i] = i == p->tmp_buf ? bp[i] : arena + w * stride + off[i];
  if (st == TFE_OK) st = TFE_FN(ein_run_seq_)(be, p, alpha, ops, beta, out, bp, W, &pg);
  if (device) tfe_backend_free(be, arena);
  else tfe__ein_ws_put(arena);
  if (bp != small) tfe__free(bp);
  tfe__progress_end(&pg);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ein_execute_)(const tfe_prims_backend *be, const tfe_einsum_plan *p, TFE_T alpha,
                                             const TFE_TY(view) *ops, TFE_T beta, const TFE_TY(view) *out) {
  TFE_CHECK_NULL(p);
  TFE_CHECK_NULL(out);
  TFE_TRY(TFE_FN(ein_check_)(p, ops, out));
  if (tfe_layout_numel(&out->lay) == 0) return TFE_OK;
  return TFE_FN(ein_exec_)(be, p, alpha, ops, beta, out, NULL, p->buf_off, p->arena_bytes);
}
TFE_API tfe_status TFE_FN(einsum_execute_on)(const tfe_prims_backend *be, const tfe_einsum_plan *p, TFE_T alpha,
                                             const TFE_TY(view) *ops, TFE_T beta, const TFE_TY(view) *out) {
  if (!(be = tfe__be_for_views(be, 0, NULL, __func__))) return tfe__ts.errcode;
  return TFE_AS_API(TFE_FN(ein_execute_)(be, p, alpha, ops, beta, out));
}
TFE_API tfe_status TFE_FN(einsum_execute)(const tfe_einsum_plan *p, TFE_T alpha, const TFE_TY(view) *ops,
                                          TFE_T beta, const TFE_TY(view) *out) {
  const tfe_prims_backend *be = tfe__be_for_views(NULL, 0, NULL, __func__);
  if (!be) return tfe__ts.errcode;
  return TFE_AS_API(TFE_FN(ein_execute_)(be, p, alpha, ops, beta, out));
}

/* ---- one-call entry points ------------------------------------------------------------------------ */
TFE_INTERNAL tfe_status TFE_FN(ein_layouts_)(int n, const TFE_TY(view) *ops, const tfe_layout ***lay,
                                             const tfe_layout **small, int nsmall) {
  if (n < 1) return TFE_FAIL(TFE_ERR_INVALID, "einsum needs at least one operand (got %d)", n);
  if (!ops) return TFE_FAIL(TFE_ERR_NULL, "argument 'ops' is NULL");
  *lay = n <= nsmall ? small : (const tfe_layout **)tfe__alloc((size_t)n * sizeof(tfe_layout *));
  if (!*lay) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) (*lay)[k] = &ops[k].lay;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(einsum_into_with)(const TFE_TY(view) *out, TFE_T alpha, TFE_T beta, const char *expr, int n,
                                            const TFE_TY(view) *ops, const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  if (!expr) return TFE_FAIL(TFE_ERR_NULL, "argument 'expr' is NULL");
  const tfe_layout *small[16], **lay = NULL;
  TFE_TRY(TFE_AS_API(TFE_FN(ein_layouts_)(n, ops, &lay, small, 16)));
  const tfe_prims_backend *be = tfe__be_for_views(opts ? opts->backend : NULL, 0, NULL, __func__);
  if (!be) { if (lay != small) tfe__free((void *)lay); return tfe__ts.errcode; }
  tfe_einsum_plan *p = NULL;
  tfe_status st = tfe__ein_plan_cached(&p, TFE__EIN_DT, expr, n, lay, NULL, NULL, 0, opts);
  if (lay != small) tfe__free((void *)lay);
  if (st != TFE_OK) return TFE_AS_API(st);
  tfe__ein_progress_set saved = tfe__ein_call_begin(opts);
  st = TFE_FN(ein_execute_)(be, p, alpha, ops, beta, out);
  tfe__ein_call_end(saved);
  tfe_einsum_plan_release(p);
  return TFE_AS_API(st);
}
TFE_API tfe_status TFE_FN(einsum_into)(const TFE_TY(view) *out, TFE_T alpha, TFE_T beta, const char *expr, int n,
                                       const TFE_TY(view) *ops) {
  return TFE_FN(einsum_into_with)(out, alpha, beta, expr, n, ops, NULL);
}

/* A dense result in be's memory (host memory from the allocator where be has no memory slots). */
TFE_INTERNAL tfe_status TFE_FN(ein_empty_)(const tfe_prims_backend *be, TFE_TY(tensor) *out, int rank,
                                           const int64_t *dims, tfe_order order) {
  if (!be->mem_alloc && be->space.kind == TFE_MEM_HOST) return TFE_FN(empty)(out, rank, dims, order);
  tfe_layout L;
  int64_t n = 0, bytes = 0;
  TFE_TRY(tfe_layout_dense(rank, dims, order, &L));
  TFE_TRY(tfe_layout_check(&L, &n));
  if (!tfe__mul_ok(n, (int64_t)sizeof(TFE_T), &bytes))
    return TFE_FAIL(TFE_ERR_OVERFLOW, "%lld elements overflow the byte count", (long long)n);
  tfe_storage *st = NULL;
  TFE_TRY(tfe_backend_storage_new(be, (size_t)bytes, &st));
  out->st = st;
  out->v.data = (TFE_T *)st->ptr;
  out->v.lay = L;
  out->v.conj = false;
  return TFE_OK;
}
/* Allocating form shared by the string and the label entry points. */
TFE_INTERNAL tfe_status TFE_FN(ein_alloc_)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops,
                                           const int32_t *const *labels, const int32_t *out_labels, int out_rank,
                                           const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  const tfe_layout *small[16], **lay = NULL;
  TFE_TRY(TFE_FN(ein_layouts_)(n, ops, &lay, small, 16));
  const tfe_prims_backend *be = tfe__be_for_views(opts ? opts->backend : NULL, 0, NULL, __func__);
  if (!be) { if (lay != small) tfe__free((void *)lay); return tfe__ts.errcode; }
  tfe_einsum_plan *p = NULL;
  tfe_status st = tfe__ein_plan_cached(&p, TFE__EIN_DT, expr, n, lay, labels, out_labels, out_rank, opts);
  if (lay != small) tfe__free((void *)lay);
  if (st != TFE_OK) return st;
  TFE_TY(tensor) t = {0};
  st = TFE_FN(ein_empty_)(be, &t, p->out_rank, p->out_dims, p->out_order);
  tfe__ein_progress_set saved = tfe__ein_call_begin(opts);
  if (st == TFE_OK) st = TFE_FN(ein_execute_)(be, p, TFE_FN(sr_one)(), ops, TFE_FN(sr_zero)(), &t.v);
  tfe__ein_call_end(saved);
  tfe_einsum_plan_release(p);
  if (st != TFE_OK) { TFE_FN(tensor_release)(&t); return st; }
  *out = t;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(einsum_with)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops,
                                       const tfe_einsum_opts *opts) {
  if (!expr) return TFE_FAIL(TFE_ERR_NULL, "argument 'expr' is NULL");
  return TFE_AS_API(TFE_FN(ein_alloc_)(out, expr, n, ops, NULL, NULL, 0, opts));
}
TFE_API tfe_status TFE_FN(einsum)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops) {
  return TFE_FN(einsum_with)(out, expr, n, ops, NULL);
}
TFE_API tfe_status TFE_FN(einsum_labels)(TFE_TY(tensor) *out, int n, const TFE_TY(view) *ops,
                                         const int32_t *const *labels, const int32_t *out_labels, int out_rank,
                                         const tfe_einsum_opts *opts) {
  if (!labels) return TFE_FAIL(TFE_ERR_NULL, "argument 'labels' is NULL");
  return TFE_AS_API(TFE_FN(ein_alloc_)(out, NULL, n, ops, labels, out_labels, out_rank, opts));
}
/* ---- the consuming form ---------------------------------------------------------------------------- */
/* Storage of operand k that the call may overwrite once the operand is read: held by the
 * caller's handle only, host memory tenferro allocated, no pending work, 64-byte aligned,
 * shared with no other operand. */
TFE_INTERNAL bool TFE_FN(ein_reusable_)(const TFE_TY(tensor) *ops, int n, int k) {
  const tfe_storage *s = ops[k].st;
  if (!s || !s->ptr || !s->free_fn || s->event || s->space.kind != TFE_MEM_HOST || (uintptr_t)s->ptr % 64 ||
      atomic_load(&((tfe_storage *)s)->refcount) != 1)
    return false;
  for (int j = 0; j < n; j++) if (j != k && ops[j].st == s) return false;
  return true;
}
/* Smallest reusable operand storage of at least `bytes` that is free before step time `at`
 * (free_at[k] < at), or -1. */
TFE_INTERNAL int TFE_FN(ein_pick_)(const TFE_TY(tensor) *ops, int n, const int *free_at, int at, int64_t bytes) {
  int best = -1;
  for (int k = 0; k < n; k++)
    if (free_at[k] < at && (int64_t)ops[k].st->bytes >= bytes && (best < 0 || ops[k].st->bytes < ops[best].st->bytes))
      best = k;
  return best;
}
/* Runs plan p for the consuming form: the result goes into the storage of an operand read
 * before the last step when one is big enough, intermediates into operands' storage once
 * they are read (the arena shrinks accordingly). ops' storage moved to the result is cleared
 * from its handle. Unsliced plans only: slices re-read every operand. */
TFE_INTERNAL tfe_status TFE_FN(ein_owned_run_)(const tfe_prims_backend *be, const tfe_einsum_plan *p,
                                               TFE_TY(tensor) *ops, const TFE_TY(view) *v, TFE_TY(tensor) *out) {
  int n = p->n, nb = p->nbuf;
  TFE_TRY(TFE_FN(ein_check_ops_)(p, v));
  int64_t cnt = 1, obytes;
  for (int i = 0; i < p->out_rank; i++) cnt *= p->out_dims[i];
  if (!tfe__mul_ok(cnt, (int64_t)sizeof(TFE_T), &obytes)) return TFE_FAIL(TFE_ERR_OVERFLOW, "output size overflows");
  int *free_at = (int *)tfe__alloc((size_t)(n + 1) * sizeof(int));
  char **reuse = (char **)tfe__calloc((size_t)nb + 1, sizeof(char *));
  int64_t *off = (int64_t *)tfe__alloc((size_t)(2 * nb + 1) * sizeof(int64_t)), *bytes = off ? off + nb : NULL;
  tfe_status st = (!free_at || !reuse || !off) ? TFE_ERR_ALLOC : TFE_OK;
  int owner = -1;
  TFE_TY(tensor) t = {0};
  if (st == TFE_OK) {
    bool on = n > 1 && p->nslices <= 1 && obytes > 0;
    for (int k = 0; k < n; k++) free_at[k] = on && TFE_FN(ein_reusable_)(ops, n, k) ? p->consumed[k] : INT_MAX;
    owner = on ? TFE_FN(ein_pick_)(ops, n, free_at, p->nsteps, obytes) : -1;
    if (owner >= 0) free_at[owner] = INT_MAX;
    int64_t arena = 0;
    for (int i = 0; i < nb; i++) { /* buffers in step order: a storage serves one live range at a time */
      int k = TFE_FN(ein_pick_)(ops, n, free_at, p->buf_from[i], p->buf_bytes[i]);
      bytes[i] = p->buf_bytes[i];
      if (k >= 0) { reuse[i] = (char *)ops[k].st->ptr; free_at[k] = p->buf_to[i]; bytes[i] = 0; }
    }
    st = tfe__ein_arena(nb, bytes, p->buf_from, p->buf_to, off, &arena);
    if (st == TFE_OK && owner < 0) st = TFE_FN(empty)(&t, p->out_rank, p->out_dims, p->out_order);
    if (st == TFE_OK && owner >= 0) {
      t.st = ops[owner].st; t.v.data = (TFE_T *)t.st->ptr; t.v.conj = false;
      tfe_layout_dense(p->out_rank, p->out_dims, p->out_order, &t.v.lay);
      ops[owner].st = NULL; ops[owner].v.data = NULL;
    }
    if (st == TFE_OK) st = TFE_FN(ein_exec_)(be, p, TFE_FN(sr_one)(), v, TFE_FN(sr_zero)(), &t.v, reuse, off, arena);
  }
  tfe__free(free_at); tfe__free(reuse); tfe__free(off);
  if (st != TFE_OK) { TFE_FN(tensor_release)(&t); return st; }
  *out = t;
  return TFE_OK;
}
TFE_API tfe_status TFE_FN(einsum_owned)(TFE_TY(tensor) *out, const char *expr, int n, TFE_TY(tensor) *ops,
                                        const tfe_einsum_opts *opts) {
  if (n < 1 || !ops) return TFE_FAIL(ops ? TFE_ERR_INVALID : TFE_ERR_NULL, "einsum needs operands (n = %d)", n);
  TFE_TY(view) small[16], *v = n <= 16 ? small : (TFE_TY(view) *)tfe__alloc((size_t)n * sizeof(TFE_TY(view)));
  const tfe_layout *lsmall[16], **lay = NULL;
  tfe_status st = !out ? TFE_FAIL(TFE_ERR_NULL, "argument 'out' is NULL")
                : !expr ? TFE_FAIL(TFE_ERR_NULL, "argument 'expr' is NULL") : !v ? TFE_ERR_ALLOC : TFE_OK;
  if (st == TFE_OK) {
    for (int k = 0; k < n; k++) v[k] = ops[k].v;
    st = TFE_FN(ein_layouts_)(n, v, &lay, lsmall, 16);
  }
  const tfe_prims_backend *be = NULL; /* from the operands' storage: compute device, memory space */
  if (st == TFE_OK) {
    tfe_storage *ssmall[16], **sts = n <= 16 ? ssmall : (tfe_storage **)tfe__alloc((size_t)n * sizeof *sts);
    st = sts ? TFE_OK : TFE_ERR_ALLOC;
    for (int k = 0; st == TFE_OK && k < n; k++) sts[k] = ops[k].st;
    if (st == TFE_OK) st = tfe__ein_backend(opts, n, sts, &be, __func__);
    if (sts && sts != ssmall) tfe__free(sts);
  }
  tfe_einsum_plan *p = NULL;
  if (st == TFE_OK) st = tfe__ein_plan_cached(&p, TFE__EIN_DT, expr, n, lay, NULL, NULL, 0, opts);
  if (lay && lay != lsmall) tfe__free((void *)lay);
  tfe__ein_progress_set saved = tfe__ein_call_begin(opts);
  if (st == TFE_OK) st = TFE_FN(ein_owned_run_)(be, p, ops, v, out);
  tfe__ein_call_end(saved);
  tfe_einsum_plan_release(p);
  if (v && v != small) tfe__free(v);
  for (int k = 0; k < n; k++) TFE_FN(tensor_release)(&ops[k]);
  return TFE_AS_API(st);
}
#endif
