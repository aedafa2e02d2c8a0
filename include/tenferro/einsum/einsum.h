/* tenferro/einsum/einsum.h — einsum room: notation, contraction order, plans, N-ary execution.
 *
 * Table of contents (docs/einsum.md)
 *   notation ........... parse.h        UTF-8 labels, "...", implicit output, size-1 broadcast,
 *                                       parentheses fixing the order "ij,(jk,kl)->il"
 *   order .............. path.h         tfe_einsum_opts, cost model, greedy, exact DP, given paths
 *                        anneal.h       simulated-annealing tree optimizer, slicing
 *   plans .............. plan.h         tfe_einsum_plan_new[_labels], cost, path
 *                        build.h        how a plan is built (tree, orders, buffers, arena)
 *                        plan_cache.h   the plan cache: tfe_einsum_cache_clear / stats / info
 *   execution .......... exec.h         workspace, step hook, the backend of a call
 *                        einsum_tpl.h   per kind S:
 *     tfe_einsum_S(out_tensor, expr, n, ops)                       allocating
 *     tfe_einsum_with_S(out_tensor, expr, n, ops, opts)
 *     tfe_einsum_into_S(out_view, alpha, beta, expr, n, ops)        accumulating, any strides
 *     tfe_einsum_into_with_S(out_view, alpha, beta, expr, n, ops, opts)
 *     tfe_einsum_owned_S(out_tensor, expr, n, tensors, opts)         consuming
 *     tfe_einsum_labels_S(out_tensor, n, ops, labels, out_labels, out_rank, opts)
 *     tfe_einsum_execute_S(plan, alpha, ops, beta, out_view)
 *     tfe_einsum_execute_on_S(backend, plan, alpha, ops, beta, out_view)
 *   generic ............ tfe_einsum(...), tfe_einsum_into(...), ... (_Generic on the output)
 *   dtype-tagged ....... tfe_einsum_dyn(out, expr, n, ops, opts), tfe_einsum_into_dyn(...)
 * The call's backend (opts.backend, else the operands' compute device or memory space) runs
 * every step: tfe_einsum(&c, "ij,jk->ik", 2, ops) reads front end -> plan from the cache ->
 * per step, the stored contraction plan -> its engine (prims/contract_tpl.h). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_H
#define TENFERRO_EINSUM_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/prims/prims.h>
#include <tenferro/einsum/parse.h>
#include <tenferro/einsum/path.h>
#include <tenferro/einsum/anneal.h>
#include <tenferro/einsum/plan.h>
#include <tenferro/einsum/build.h>
#include <tenferro/einsum/plan_cache.h>
#include <tenferro/einsum/exec.h>

#define TFE_TEMPLATE <tenferro/einsum/einsum_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- _Generic front ends (dispatch on the output) ------------------------------------------------ */
#define tfe_einsum(out, expr, n, ops) _Generic((out), TFE_GCASES_ALL(einsum, tensor))(out, expr, n, ops)
#define tfe_einsum_with(out, expr, n, ops, opts) \
  _Generic((out), TFE_GCASES_ALL(einsum_with, tensor))(out, expr, n, ops, opts)
#define tfe_einsum_into(out, alpha, beta, expr, n, ops) \
  _Generic((out), TFE_GCASES_ALL(einsum_into, view))(out, alpha, beta, expr, n, ops)
#define tfe_einsum_into_with(out, alpha, beta, expr, n, ops, opts) \
  _Generic((out), TFE_GCASES_ALL(einsum_into_with, view))(out, alpha, beta, expr, n, ops, opts)
#define tfe_einsum_owned(out, expr, n, tensors, opts) \
  _Generic((out), TFE_GCASES_ALL(einsum_owned, tensor))(out, expr, n, tensors, opts)
#define tfe_einsum_labels(out, n, ops, labels, out_labels, out_rank, opts) \
  _Generic((out), TFE_GCASES_ALL(einsum_labels, tensor))(out, n, ops, labels, out_labels, out_rank, opts)
#define tfe_einsum_execute(plan, alpha, ops, beta, out) \
  _Generic((out), TFE_GCASES_ALL(einsum_execute, view))(plan, alpha, ops, beta, out)
#define tfe_einsum_execute_on(backend, plan, alpha, ops, beta, out) \
  _Generic((out), TFE_GCASES_ALL(einsum_execute_on, view))(backend, plan, alpha, ops, beta, out)

/* ---- the dtype-tagged layer ---------------------------------------------------------------------- */
/* Allocating einsum over run-time typed operands (all of one dtype); out becomes an owning
 * handle (release with tfe_storage_release(out->st)). */
TFE_API tfe_status tfe_einsum_dyn(tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                  const tfe_einsum_opts *opts);
/* out = einsum(expr, ops) into an existing run-time typed view (alpha = 1, beta = 0). */
TFE_API tfe_status tfe_einsum_into_dyn(const tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                       const tfe_einsum_opts *opts);

/* ---- the room's process state (one member of tfe__st, core/state.h; bodies only) ----------- */
#if TFE__IMPL
typedef struct tfe__einsum_state {
  tfe__lru cache;        /* einsum plans (plan_cache.h) */
  tfe__ws ws;            /* the arena workspace (exec.h) */
  tfe__ein_hook_t hook;  /* the profiling hook (exec.h) */
} tfe__einsum_state;
#endif

#endif
#elif !defined(TENFERRO_EINSUM_BODY) /* bodies */
#define TENFERRO_EINSUM_BODY
#include <limits.h>
#include <tenferro/tensor/tensor.h>
#include <tenferro/prims/prims.h>
#include <tenferro/einsum/parse.h>
#include <tenferro/einsum/path.h>
#include <tenferro/einsum/anneal.h>
#include <tenferro/einsum/plan.h>
#include <tenferro/einsum/build.h>
#include <tenferro/einsum/plan_cache.h>
#include <tenferro/einsum/exec.h>
#define TFE_TEMPLATE <tenferro/einsum/einsum_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
/* The options of a dtype-tagged call with its backend chosen from the operands' storage (and
 * the output's, when given): compute device, memory space (exec.h, prims/registry.h). */
TFE_INTERNAL tfe_status tfe__ein_dyn_opts(const tfe_einsum_opts *opts, int n, const tfe_dyn *ops, const tfe_dyn *out,
                                          tfe_einsum_opts *o, const char *where) {
  if (opts) *o = *opts; else memset(o, 0, sizeof *o);
  tfe_storage *small[17] = {0}, **st = n < 17 ? small : (tfe_storage **)tfe__alloc((size_t)(n + 1) * sizeof *st);
  if (!st) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) st[k] = ops[k].st;
  if (out) st[n] = out->st;
  const tfe_prims_backend *be = NULL;
  tfe_status s = tfe__ein_backend(opts, n + (out != NULL), st, &be, where);
  if (st != small) tfe__free(st);
  o->backend = be;
  return s;
}
TFE_API tfe_status tfe_einsum_dyn(tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                  const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  if (n < 1) return TFE_FAIL(TFE_ERR_INVALID, "einsum needs at least one operand (got %d)", n);
  TFE_CHECK_NULL(ops);
  for (int k = 1; k < n; k++)
    if (ops[k].dtype != ops[0].dtype)
      return TFE_FAIL(TFE_ERR_DTYPE, "operand %d is %s but operand 0 is %s", k, tfe_dtype_name(ops[k].dtype),
                      tfe_dtype_name(ops[0].dtype));
  tfe_einsum_opts o;
  TFE_TRY(tfe__ein_dyn_opts(opts, n, ops, NULL, &o, __func__));
  switch (ops[0].dtype) {
#define TFE__EIN_DYN(s, T, R, alg, cplx, flt, DT)                                                  \
  case DT: {                                                                                       \
    tfe_view_##s sm[16], *v = n <= 16 ? sm : (tfe_view_##s *)tfe__alloc((size_t)n * sizeof *v);    \
    if (!v) return TFE_ERR_ALLOC;                                                                  \
    for (int k = 0; k < n; k++) { v[k].data = (T *)ops[k].data; v[k].lay = ops[k].lay; v[k].conj = ops[k].conj; } \
    tfe_tensor_##s t = {0};                                                                        \
    tfe_status st = tfe_einsum_with_##s(&t, expr, n, v, &o);                                       \
    if (v != sm) tfe__free(v);                                                                     \
    if (st != TFE_OK) return st;                                                                   \
    out->dtype = DT; out->data = t.v.data; out->lay = t.v.lay; out->conj = false; out->st = t.st;  \
    return TFE_OK;                                                                                 \
  }
    TFE_KINDS(TFE__EIN_DYN)
#undef TFE__EIN_DYN
    default: return TFE_FAIL(TFE_ERR_DTYPE, "unsupported dtype %d", (int)ops[0].dtype);
  }
}
TFE_API tfe_status tfe_einsum_into_dyn(const tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                       const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  if (n < 1) return TFE_FAIL(TFE_ERR_INVALID, "einsum needs at least one operand (got %d)", n);
  TFE_CHECK_NULL(ops);
  for (int k = 0; k < n; k++)
    if (ops[k].dtype != out->dtype)
      return TFE_FAIL(TFE_ERR_DTYPE, "operand %d is %s but the output is %s", k, tfe_dtype_name(ops[k].dtype),
                      tfe_dtype_name(out->dtype));
  tfe_einsum_opts o;
  TFE_TRY(tfe__ein_dyn_opts(opts, n, ops, out, &o, __func__));
  switch (out->dtype) {
#define TFE__EIN_DYN(s, T, R, alg, cplx, flt, DT)                                                  \
  case DT: {                                                                                       \
    tfe_view_##s sm[16], *v = n <= 16 ? sm : (tfe_view_##s *)tfe__alloc((size_t)n * sizeof *v);    \
    if (!v) return TFE_ERR_ALLOC;                                                                  \
    for (int k = 0; k < n; k++) { v[k].data = (T *)ops[k].data; v[k].lay = ops[k].lay; v[k].conj = ops[k].conj; } \
    tfe_view_##s ov = {(T *)out->data, out->lay, out->conj};                                       \
    tfe_status st = tfe_einsum_into_with_##s(&ov, tfe_sr_one_##s(), tfe_sr_zero_##s(), expr, n, v, &o); \
    if (v != sm) tfe__free(v);                                                                     \
    return st;                                                                                     \
  }
    TFE_KINDS(TFE__EIN_DYN)
#undef TFE__EIN_DYN
    default: return TFE_FAIL(TFE_ERR_DTYPE, "unsupported dtype %d", (int)out->dtype);
  }
}
#endif
