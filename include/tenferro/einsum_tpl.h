/* tenferro/einsum_tpl.h — N-ary einsum execution of one kind; re-included per kind.
 * Parameters: TFE_S, TFE_T, TFE_DT (see config.h). Only tfe_sr_* and tfe_contract_S are used,
 * so user kinds work too. */

/* The view of operand k as the plan reads it, with the sliced labels fixed to idx[]. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_leaf_)(const tfe_einsum_plan *p, const TFE_TY(view) *op, int k,
                                            const int64_t *idx) {
  TFE_TY(view) v;
  v.data = op->data; v.conj = op->conj;
  v.lay = p->leaf[k].lay;
  v.lay.offset = op->lay.offset;
  for (int i = 0; i < v.lay.rank; i++) {
    int s = p->slice_of[p->leaf[k].lab[i]];
    if (s >= 0) { v.lay.offset += idx[s] * v.lay.strides[i]; v.lay.dims[i] = 1; }
  }
  return v;
}
/* A workspace buffer as a view. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_buf_)(const tfe_einsum_plan *p, char *arena, const tfe__ein_step *s) {
  TFE_TY(view) v;
  v.data = (TFE_T *)(arena + p->buf_off[s->buf]);
  v.lay = s->lay; v.conj = false;
  return v;
}
/* Node id -> the view that holds it during the current slice. */
TFE_INTERNAL TFE_TY(view) TFE_FN(ein_node_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *arena,
                                            int id, const int64_t *idx, const int32_t **lab) {
  if (id >= p->n) { *lab = p->step[id - p->n].lab; return TFE_FN(ein_buf_)(p, arena, &p->step[id - p->n]); }
  int pre = p->leaf[id].pre;
  if (pre >= 0) { *lab = p->pre[pre].lab; return TFE_FN(ein_buf_)(p, arena, &p->pre[pre]); }
  *lab = p->leaf[id].lab;
  return TFE_FN(ein_leaf_)(p, &ops[id], id, idx);
}

/* Checks the operands and the output against the plan; nothing is written on failure. */
TFE_INTERNAL tfe_status TFE_FN(ein_check_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops,
                                           const TFE_TY(view) *out) {
  if (p->dtype != TFE_DT || p->elem != sizeof(TFE_T))
    return TFE_FAIL(TFE_ERR_DTYPE, "plan was made for %s, called with %s", tfe_dtype_name(p->dtype), tfe_dtype_name(TFE_DT));
  if (p->n > 0 && !ops) return TFE_FAIL(TFE_ERR_NULL, "argument 'ops' is NULL");
  for (int k = 0; k < p->n; k++) {
    const tfe_layout *L = &ops[k].lay, *P = &p->in[k];
    if (L->rank != P->rank)
      return TFE_FAIL(TFE_ERR_RANK, "operand %d has rank %d, the plan expects %d", k, L->rank, P->rank);
    for (int i = 0; i < L->rank; i++)
      if (L->dims[i] != P->dims[i] || L->strides[i] != P->strides[i])
        return TFE_FAIL(TFE_ERR_SHAPE, "operand %d axis %d is %lld (stride %lld), the plan expects %lld (stride %lld)", k, i,
                        (long long)L->dims[i], (long long)L->strides[i], (long long)P->dims[i], (long long)P->strides[i]);
    if (!ops[k].data && tfe_layout_numel(L) > 0) return TFE_FAIL(TFE_ERR_NULL, "data of operand %d is NULL", k);
  }
  if (out->lay.rank != p->out_rank)
    return TFE_FAIL(TFE_ERR_RANK, "output has rank %d, the expression gives %d", out->lay.rank, p->out_rank);
  for (int i = 0; i < p->out_rank; i++)
    if (out->lay.dims[i] != p->out_dims[i])
      return TFE_FAIL(TFE_ERR_SHAPE, "output axis %d is %lld, the expression gives %lld", i,
                      (long long)out->lay.dims[i], (long long)p->out_dims[i]);
  if (tfe_layout_numel(&out->lay) == 0) return TFE_OK;
  if (!out->data) return TFE_FAIL(TFE_ERR_NULL, "data of the output is NULL");
  if (!tfe__ein_no_self_overlap(&out->lay))
    return TFE_FAIL(TFE_ERR_OVERLAP, "output has overlapping elements (zero or interleaved strides)");
  for (int k = 0; k < p->n; k++)
    if (tfe__ein_meet(ops[k].data, &ops[k].lay, out->data, &out->lay, sizeof(TFE_T)))
      return TFE_FAIL(TFE_ERR_OVERLAP, "output overlaps operand %d", k);
  return TFE_OK;
}

/* One slice: leaf reductions, then the pairwise steps; the last writes into `target`. */
TFE_INTERNAL tfe_status TFE_FN(ein_slice_)(const tfe_einsum_plan *p, const TFE_TY(view) *ops, char *arena,
                                           const int64_t *idx, TFE_T alpha, TFE_T beta, const TFE_TY(view) *target) {
  TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  for (int q = 0; q < p->npre; q++) {
    const tfe__ein_step *s = &p->pre[q];
    TFE_TY(view) a = TFE_FN(ein_leaf_)(p, &ops[s->a], s->a, idx), c = TFE_FN(ein_buf_)(p, arena, s);
    TFE_TRY(TFE_FN(contract_unary)(one, &a, p->leaf[s->a].lab, zero, &c, s->lab));
  }
  for (int k = 0; k < p->nsteps; k++) {
    const tfe__ein_step *s = &p->step[k];
    const int32_t *la, *lb;
    TFE_TY(view) a = TFE_FN(ein_node_)(p, ops, arena, s->a, idx, &la);
    TFE_TY(view) b = TFE_FN(ein_node_)(p, ops, arena, s->b, idx, &lb);
    if (k + 1 == p->nsteps) return TFE_FN(contract)(alpha, &a, la, &b, lb, beta, target, p->out_lab);
    TFE_TY(view) c = TFE_FN(ein_buf_)(p, arena, s);
    TFE_TRY(TFE_FN(contract)(one, &a, la, &b, lb, zero, &c, s->lab));
  }
  return TFE_OK;
}

/* out = alpha * einsum(ops) + beta * out, following plan p. out may have any strides (no
 * overlap with itself or the operands); the operands must have the dims and strides the plan
 * was made for (their offsets and data pointers are free). out is untouched on error. */
TFE_API tfe_status TFE_FN(einsum_execute)(const tfe_einsum_plan *p, TFE_T alpha, const TFE_TY(view) *ops,
                                          TFE_T beta, const TFE_TY(view) *out) {
  TFE_CHECK_NULL(p);
  TFE_CHECK_NULL(out);
  TFE_TRY(TFE_FN(ein_check_)(p, ops, out));
  if (tfe_layout_numel(&out->lay) == 0) return TFE_OK;
  if (p->n == 1) {
    TFE_TY(view) a = TFE_FN(ein_leaf_)(p, &ops[0], 0, NULL);
    return TFE_FN(contract_unary)(alpha, &a, p->leaf[0].lab, beta, out, p->out_lab);
  }
  char *arena = NULL;
  if (p->arena_bytes > 0 && !(arena = (char *)tfe__alloc((size_t)p->arena_bytes))) return TFE_ERR_ALLOC;
  int64_t idx[TFE_MAX_RANK * 2 + 1];
  memset(idx, 0, sizeof idx);
  tfe_status st = TFE_OK;
  if (p->nslices <= 1) {
    st = TFE_FN(ein_slice_)(p, ops, arena, idx, alpha, beta, out);
  } else {
    /* Slices accumulate into a dense buffer; the output is written once at the end. */
    TFE_TY(view) tmp;
    tmp.data = (TFE_T *)(arena + p->buf_off[p->tmp_buf]); tmp.conj = false;
    tfe_layout_dense(p->out_rank, p->out_dims, TFE_COLMAJOR, &tmp.lay);
    int64_t cnt = tfe_layout_numel(&tmp.lay);
    for (int64_t i = 0; i < cnt; i++) tmp.data[i] = TFE_FN(sr_zero)();
    for (int64_t s = 0; st == TFE_OK && s < p->nslices; s++) {
      TFE_TY(view) t = tmp;
      for (int i = 0; i < t.lay.rank; i++) {
        int q = p->slice_of[p->out_lab[i]];
        if (q >= 0) { t.lay.offset += idx[q] * t.lay.strides[i]; t.lay.dims[i] = 1; }
      }
      st = TFE_FN(ein_slice_)(p, ops, arena, idx, TFE_FN(sr_one)(), TFE_FN(sr_one)(), &t);
      for (int d = 0; d < p->nsliced; d++) { /* odometer over the sliced labels */
        if (++idx[d] < p->sliced_dim[d]) break;
        idx[d] = 0;
      }
    }
    if (st == TFE_OK) st = TFE_FN(contract_unary)(alpha, &tmp, p->out_lab, beta, out, p->out_lab);
  }
  tfe__free(arena);
  return st;
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

/* out = alpha * einsum(expr, ops) + beta * out (string form) with options (NULL: defaults). */
TFE_API tfe_status TFE_FN(einsum_into_with)(const TFE_TY(view) *out, TFE_T alpha, TFE_T beta, const char *expr, int n,
                                            const TFE_TY(view) *ops, const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  const tfe_layout *small[16], **lay;
  TFE_TRY(TFE_FN(ein_layouts_)(n, ops, &lay, small, 16));
  tfe_einsum_plan *p = NULL;
  tfe_status st = tfe__ein_plan_cached(&p, TFE_DT, expr, n, lay, NULL, NULL, 0, opts);
  if (lay != small) tfe__free((void *)lay);
  if (st != TFE_OK) return st;
  st = TFE_FN(einsum_execute)(p, alpha, ops, beta, out);
  tfe_einsum_plan_release(p);
  return st;
}
TFE_API tfe_status TFE_FN(einsum_into)(const TFE_TY(view) *out, TFE_T alpha, TFE_T beta, const char *expr, int n,
                                       const TFE_TY(view) *ops) {
  return TFE_FN(einsum_into_with)(out, alpha, beta, expr, n, ops, NULL);
}

/* Allocating form shared by the string and the label entry points. */
TFE_INTERNAL tfe_status TFE_FN(ein_alloc_)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops,
                                           const int32_t *const *labels, const int32_t *out_labels, int out_rank,
                                           const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  const tfe_layout *small[16], **lay;
  TFE_TRY(TFE_FN(ein_layouts_)(n, ops, &lay, small, 16));
  tfe_einsum_plan *p = NULL;
  tfe_status st = tfe__ein_plan_cached(&p, TFE_DT, expr, n, lay, labels, out_labels, out_rank, opts);
  if (lay != small) tfe__free((void *)lay);
  if (st != TFE_OK) return st;
  TFE_TY(tensor) t = {0};
  st = TFE_FN(empty)(&t, p->out_rank, p->out_dims, TFE_COLMAJOR);
  if (st == TFE_OK) st = TFE_FN(einsum_execute)(p, TFE_FN(sr_one)(), ops, TFE_FN(sr_zero)(), &t.v);
  tfe_einsum_plan_release(p);
  if (st != TFE_OK) { TFE_FN(tensor_release)(&t); return st; }
  *out = t;
  return TFE_OK;
}
/* A new column-major tensor with einsum(expr, ops). */
TFE_API tfe_status TFE_FN(einsum_with)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops,
                                       const tfe_einsum_opts *opts) {
  if (!expr) return TFE_FAIL(TFE_ERR_NULL, "argument 'expr' is NULL");
  return TFE_FN(ein_alloc_)(out, expr, n, ops, NULL, NULL, 0, opts);
}
TFE_API tfe_status TFE_FN(einsum)(TFE_TY(tensor) *out, const char *expr, int n, const TFE_TY(view) *ops) {
  return TFE_FN(einsum_with)(out, expr, n, ops, NULL);
}
/* Integer labels: labels[k] names the axes of ops[k]; out_labels NULL = implicit output. */
TFE_API tfe_status TFE_FN(einsum_labels)(TFE_TY(tensor) *out, int n, const TFE_TY(view) *ops,
                                         const int32_t *const *labels, const int32_t *out_labels, int out_rank,
                                         const tfe_einsum_opts *opts) {
  if (!labels) return TFE_FAIL(TFE_ERR_NULL, "argument 'labels' is NULL");
  return TFE_FN(ein_alloc_)(out, NULL, n, ops, labels, out_labels, out_rank, opts);
}
/* Consuming form: the operand tensors are given up (released, handles cleared) whether or not
 * the call succeeds. */
TFE_API tfe_status TFE_FN(einsum_owned)(TFE_TY(tensor) *out, const char *expr, int n, TFE_TY(tensor) *ops,
                                        const tfe_einsum_opts *opts) {
  if (n < 1 || !ops) return TFE_FAIL(ops ? TFE_ERR_INVALID : TFE_ERR_NULL, "einsum needs operands (n = %d)", n);
  TFE_TY(view) small[16], *v = n <= 16 ? small : (TFE_TY(view) *)tfe__alloc((size_t)n * sizeof(TFE_TY(view)));
  tfe_status st = TFE_ERR_ALLOC;
  if (v) {
    for (int k = 0; k < n; k++) v[k] = ops[k].v;
    st = TFE_FN(einsum_with)(out, expr, n, v, opts);
    if (v != small) tfe__free(v);
  }
  for (int k = 0; k < n; k++) TFE_FN(tensor_release)(&ops[k]);
  return st;
}
