/* tenferro/runtime/async_tpl.h — the typed asynchronous einsum, per kind S (runtime.h stamps
 * it): tfe_einsum_async_S(stream, &out, expr, n, ops, opts) over owning typed tensors, through
 * tfe_einsum_async_dyn. out becomes a new pending tensor. */
#if !TFE__BODY_PHASE
TFE_API tfe_status TFE_FN(einsum_async)(tfe_stream *s, TFE_TY(tensor) *out, const char *expr, int n,
                                        const TFE_TY(tensor) *ops, const tfe_einsum_opts *opts);
#else
TFE_API tfe_status TFE_FN(einsum_async)(tfe_stream *s, TFE_TY(tensor) *out, const char *expr, int n,
                                        const TFE_TY(tensor) *ops, const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  if (n < 1 || !ops) return TFE_FAIL(TFE_ERR_INVALID, "einsum needs at least one operand (got %d, ops %p)", n, (const void *)ops);
  tfe_dyn small[16], *d = n <= 16 ? small : (tfe_dyn *)tfe__alloc((size_t)n * sizeof *d);
  if (!d) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) /* borrowed handles: the task takes its own references */
    d[k] = (tfe_dyn){TFE_DT, ops[k].v.data, ops[k].v.lay, ops[k].v.conj, ops[k].st};
  tfe_dyn r = {0};
  tfe_status st = tfe_einsum_async_dyn(s, &r, expr, n, d, opts);
  if (d != small) tfe__free(d);
  if (st != TFE_OK) return st;
  out->v.data = (TFE_T *)r.data; out->v.lay = r.lay; out->v.conj = r.conj; out->st = r.st; /* the reference moves */
  return TFE_OK;
}
#endif
