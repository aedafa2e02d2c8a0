/* tenferro/kernel/route_tpl.h — the public elementwise entries of one kind: each runs on the
 * backend chosen for its operands (prims/registry.h). Where that backend's elementwise slot
 * is the CPU's (always, unless a backend replaced it for host memory), the CPU code of this
 * room runs directly; otherwise the slot gets a tfe_ew_desc (kernel.h). Also this kind's CPU
 * elementwise slot (k_ew_call_), which prims/cpu_backend.h reaches through its table.
 * Re-included per kind through kernel_tpl.h, last; no include guard. */
#if !TFE__BODY_PHASE
#else /* bodies */
/* A borrowed dtype-tagged view of v. */
TFE_INTERNAL tfe_dyn TFE_FN(k_dyn_)(const TFE_TY(view) *v) {
  tfe_dyn d;
  memset(&d, 0, sizeof d);
  d.dtype = TFE_DT;
  if (v) { d.data = v->data; d.lay = v->lay; d.conj = v->conj; }
  return d;
}
/* This kind's CPU code for a descriptor (the CPU backend's elementwise slot). */
TFE_INTERNAL tfe_status TFE_FN(k_ew_call_)(const tfe_ew_desc *d) {
  const TFE_T one = TFE_FN(sr_one)(), zero = TFE_FN(sr_zero)();
  const TFE_T s0 = d->s0 ? *(const TFE_T *)d->s0 : one, s1 = d->s1 ? *(const TFE_T *)d->s1 : zero;
  const tfe_dyn *D = d->dst, *A = d->a, *B = d->b;
  TFE_TY(view) dst = {(TFE_T *)D->data, D->lay, D->conj};
  TFE_TY(view) a = {(TFE_T *)(A ? A->data : NULL), A ? A->lay : D->lay, A ? A->conj : false};
  TFE_TY(view) b = {(TFE_T *)(B ? B->data : NULL), B ? B->lay : D->lay, B ? B->conj : false};
  bool need_a = d->op != TFE_EW_FILL && d->op != TFE_EW_SCALE && d->op != TFE_EW_ZIPN;
  if ((need_a && !A) || (d->op == TFE_EW_ZIP && !B))
    return TFE_FAIL_AT(TFE_ERR_NULL, "tfe_elementwise", "%s needs operand %s", tfe_ew_op_name(d->op), !A ? "a" : "b");
  if ((A && A->dtype != D->dtype) || (B && B->dtype != D->dtype))
    return TFE_FAIL_AT(TFE_ERR_DTYPE, "tfe_elementwise", "operands differ in kind from dst (%s)", tfe_dtype_name(D->dtype));
  switch (d->op) {
  case TFE_EW_COPY: return TFE_FN(k_copy_cpu_)(&dst, &a);
  case TFE_EW_FILL: return TFE_FN(k_fill_cpu_)(&dst, s0);
  case TFE_EW_SCALE: return TFE_FN(k_scale_cpu_)(&dst, s0);
  case TFE_EW_AXPBY: return TFE_FN(k_axpby_cpu_)(&dst, s0, &a, s1);
  case TFE_EW_MAP: return TFE_FN(k_map_cpu_)(&dst, &a, (tfe_unop)d->code, d->s0 ? s0 : one);
  case TFE_EW_ZIP: return TFE_FN(k_zip_cpu_)(&dst, &a, &b, (tfe_binop)d->code);
  case TFE_EW_REDUCE: return TFE_FN(k_reduce_cpu_)(&dst, &a, (tfe_redop)d->code, d->naxes, d->axes, s0, s1);
  case TFE_EW_ZIPN: return TFE_FN(k_zipn_cpu_)(&dst, D->dtype, d->nin, d->in, d->flip, (tfe_binop)d->code);
  default: return TFE_FAIL_AT(TFE_ERR_INVALID, "tfe_elementwise", "unknown elementwise operation %d", (int)d->op);
  }
}
/* Hands a typed call to a backend whose elementwise slot is its own (its CPU code may be
 * reached from there: enrolled first). */
TFE_INTERNAL tfe_status TFE_FN(k_ew_slot_)(const tfe_prims_backend *be, tfe_ew_op op, int code, const TFE_TY(view) *dst,
                                           const TFE_TY(view) *a, const TFE_TY(view) *b, const TFE_T *s0,
                                           const TFE_T *s1, int naxes, const int *axes) {
  tfe__cpu_enroll_ew(TFE_DT, TFE_FN(k_ew_call_));
  tfe_dyn D = TFE_FN(k_dyn_)(dst), A = TFE_FN(k_dyn_)(a), B = TFE_FN(k_dyn_)(b);
  tfe_ew_desc d = {op, code, &D, a ? &A : NULL, b ? &B : NULL, s0, s1, naxes, axes, 0, NULL, 0};
  return be->elementwise(be, &d);
}
/* Each entry: the backend (NULL: the CPU code runs it), then the slot or the CPU code. A NULL
 * operand goes to the CPU code, whose checks name it. */
#define TFE__KROUTE(op, code, dst, a, b, s0, s1, naxes, axes)                                         \
  do {                                                                                                \
    if (!(dst) || ((op) != TFE_EW_FILL && (op) != TFE_EW_SCALE && !(a)) || ((op) == TFE_EW_ZIP && !(b))) break; \
    tfe_status st_;                                                                                   \
    const tfe_prims_backend *be_ = tfe__k_route(__func__, &st_);                                      \
    if (st_ != TFE_OK) return st_;                                                                    \
    if (be_) return TFE_FN(k_ew_slot_)(be_, op, code, dst, a, b, s0, s1, naxes, axes);                \
  } while (0)
TFE_API tfe_status TFE_FN(copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
  TFE__KROUTE(TFE_EW_COPY, 0, dst, src, NULL, NULL, NULL, 0, NULL);
  return TFE_FN(k_copy_cpu_)(dst, src);
}
TFE_API tfe_status TFE_FN(conj_copy)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
  TFE_CHECK_NULL(src);
  TFE_TY(view) s = *src;
  s.conj = !s.conj;
  return TFE_FN(copy)(dst, &s);
}
TFE_API tfe_status TFE_FN(fill)(const TFE_TY(view) *dst, TFE_T value) {
  TFE__KROUTE(TFE_EW_FILL, 0, dst, NULL, NULL, &value, NULL, 0, NULL);
  return TFE_FN(k_fill_cpu_)(dst, value);
}
TFE_API tfe_status TFE_FN(scale)(const TFE_TY(view) *y, TFE_T alpha) {
  TFE__KROUTE(TFE_EW_SCALE, 0, y, NULL, NULL, &alpha, NULL, 0, NULL);
  return TFE_FN(k_scale_cpu_)(y, alpha);
}
TFE_API tfe_status TFE_FN(axpby)(const TFE_TY(view) *y, TFE_T a, const TFE_TY(view) *x, TFE_T b) {
  TFE__KROUTE(TFE_EW_AXPBY, 0, y, x, NULL, &a, &b, 0, NULL);
  return TFE_FN(k_axpby_cpu_)(y, a, x, b);
}
TFE_API tfe_status TFE_FN(map)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe_unop op, TFE_T param) {
  TFE__KROUTE(TFE_EW_MAP, (int)op, dst, src, NULL, &param, NULL, 0, NULL);
  return TFE_FN(k_map_cpu_)(dst, src, op, param);
}
TFE_API tfe_status TFE_FN(zip)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_binop op) {
  TFE__KROUTE(TFE_EW_ZIP, (int)op, dst, a, b, NULL, NULL, 0, NULL);
  return TFE_FN(k_zip_cpu_)(dst, a, b, op);
}
TFE_API tfe_status TFE_FN(reduce)(const TFE_TY(view) *out, const TFE_TY(view) *src, tfe_redop op,
                                  int naxes, const int *axes, TFE_T alpha, TFE_T beta) {
  TFE__KROUTE(TFE_EW_REDUCE, (int)op, out, src, NULL, &alpha, &beta, naxes, axes);
  return TFE_FN(k_reduce_cpu_)(out, src, op, naxes, axes, alpha, beta);
}
#undef TFE__KROUTE
#endif
