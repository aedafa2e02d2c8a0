/* tenferro/prims_backend.h — prims room: the backend protocol.
 *
 * A backend is one vtable of primitive operations over dtype-tagged views (tfe_dyn), each
 * described in label form by a tfe_prim_desc (describe), optionally planned once (plan) and
 * executed any number of times (execute). Slots may be NULL: the six core operations are
 * required, contract and elementwise_mul are extensions a backend may lack; callers ask
 * tfe_prims_supports() at run time, and tfe_prims_execute() answers TFE_ERR_UNSUPPORTED.
 *
 * Custom semirings plug in at the level they choose: a kind stamped from the templates gets
 * the CPU backend's generic kernels for free; a copy of tfe_prims_cpu() with its own
 * batched_gemm slot keeps everything else; or a whole vtable replaces the protocol. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_BACKEND_H
#define TENFERRO_PRIMS_BACKEND_H

#include <tenferro/tensor/tensor.h>

typedef enum tfe_prim_op {
  TFE_PRIM_BATCHED_GEMM,   /* C[b,m,n] = alpha sum_k A[b,m,k] B[b,k,n] + beta C (labels: batch, M, N, K only) */
  TFE_PRIM_REDUCE,         /* C = alpha sum over the labels of A missing in C + beta C (no repeats) */
  TFE_PRIM_TRACE,          /* A has repeated labels: C = alpha sum of the diagonal + beta C */
  TFE_PRIM_PERMUTE,        /* C = alpha A (labels of C a permutation of A's) + beta C */
  TFE_PRIM_ANTI_TRACE,     /* adjoint of trace: C has repeated labels, A broadcasts onto the diagonal */
  TFE_PRIM_ANTI_DIAG,      /* adjoint of diagonal extraction: A is written on C's diagonal */
  TFE_PRIM_CONTRACT,       /* extension: any binary contraction (tfe_contract_S rules) */
  TFE_PRIM_ELEMENTWISE_MUL,/* extension: C = alpha A*B + beta C, all labels shared */
  TFE_PRIM_COUNT
} tfe_prim_op;

/* describe: the operation, its operands and labels. Scalars point at values of the dtype. */
typedef struct tfe_prim_desc {
  tfe_prim_op op;
  const tfe_dyn *a, *b, *c; /* b is NULL for unary operations */
  const int32_t *la, *lb, *lc;
  const void *alpha, *beta;
} tfe_prim_desc;

typedef struct tfe_prims_backend {
  const char *name;
  void *ctx;
  /* Optional: analyse once (NULL slot = nothing to plan); *plan may stay NULL. */
  tfe_status (*plan)(void *ctx, const tfe_prim_desc *d, void **plan);
  void (*plan_free)(void *ctx, void *plan);
  /* One slot per operation; NULL = not provided. */
  tfe_status (*exec[TFE_PRIM_COUNT])(void *ctx, const tfe_prim_desc *d, void *plan);
} tfe_prims_backend;

TFE_API const char *tfe_prim_op_name(tfe_prim_op op);

TFE_API bool tfe_prims_supports(const tfe_prims_backend *be, tfe_prim_op op);

/* plan (may be skipped: execute with plan == NULL plans on the fly where the backend needs it). */
TFE_API tfe_status tfe_prims_plan(const tfe_prims_backend *be, const tfe_prim_desc *d, void **plan);
TFE_API tfe_status tfe_prims_execute(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan);
TFE_API void tfe_prims_plan_free(const tfe_prims_backend *be, void *plan);

#endif
#elif !defined(TENFERRO_PRIMS_BACKEND_BODY) /* bodies */
#define TENFERRO_PRIMS_BACKEND_BODY
#include <tenferro/tensor/tensor.h>
TFE_API const char *tfe_prim_op_name(tfe_prim_op op) {
  static const char *const n[] = {"batched_gemm", "reduce", "trace", "permute", "anti_trace",
                                  "anti_diag", "contract", "elementwise_mul"};
  return (unsigned)op < (unsigned)TFE_PRIM_COUNT ? n[op] : "unknown";
}
TFE_API bool tfe_prims_supports(const tfe_prims_backend *be, tfe_prim_op op) {
  return be && (unsigned)op < (unsigned)TFE_PRIM_COUNT && be->exec[op] != NULL;
}
TFE_API tfe_status tfe_prims_plan(const tfe_prims_backend *be, const tfe_prim_desc *d, void **plan) {
  TFE_CHECK_NULL(be);
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(plan);
  *plan = NULL;
  if (!tfe_prims_supports(be, d->op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' does not provide %s", be->name, tfe_prim_op_name(d->op));
  return be->plan ? be->plan(be->ctx, d, plan) : TFE_OK;
}
TFE_API tfe_status tfe_prims_execute(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  TFE_CHECK_NULL(be);
  TFE_CHECK_NULL(d);
  if (!tfe_prims_supports(be, d->op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' does not provide %s", be->name, tfe_prim_op_name(d->op));
  return be->exec[d->op](be->ctx, d, plan);
}
TFE_API void tfe_prims_plan_free(const tfe_prims_backend *be, void *plan) {
  if (be && plan && be->plan_free) be->plan_free(be->ctx, plan);
}

/* ---- label checks per operation ------------------------------------------------------------ */
TFE_INTERNAL int tfe__pb_count(const int32_t *l, int n, int32_t x) {
  int c = 0;
  for (int i = 0; i < n; i++) c += l[i] == x;
  return c;
}
/* Checks that the labels have the shape the operation names (the general engine would accept
 * more; a backend implementing only the named primitive relies on this). */
TFE_INTERNAL tfe_status tfe__pb_check_labels(const tfe_prim_desc *d) {
  const char *w = "tfe_prims_execute";
  int ra = d->a->lay.rank, rc = d->c->lay.rank, rb = d->b ? d->b->lay.rank : 0;
  bool unary = d->op != TFE_PRIM_BATCHED_GEMM && d->op != TFE_PRIM_CONTRACT && d->op != TFE_PRIM_ELEMENTWISE_MUL;
  if (unary != (d->b == NULL)) return tfe__fail(TFE_ERR_INVALID, w, "%s takes %s", tfe_prim_op_name(d->op), unary ? "one input" : "two inputs");
  bool rep_a = false, rep_c = false;
  for (int i = 0; i < ra; i++) rep_a = rep_a || tfe__pb_count(d->la, ra, d->la[i]) > 1;
  for (int i = 0; i < rc; i++) rep_c = rep_c || tfe__pb_count(d->lc, rc, d->lc[i]) > 1;
  switch (d->op) {
  case TFE_PRIM_REDUCE:
  case TFE_PRIM_PERMUTE:
    if (rep_a || rep_c) return tfe__fail(TFE_ERR_INVALID, w, "%s takes no repeated labels", tfe_prim_op_name(d->op));
    if (d->op == TFE_PRIM_PERMUTE && ra != rc) return tfe__fail(TFE_ERR_INVALID, w, "permute: C must carry every label of A");
    break;
  case TFE_PRIM_TRACE:
    if (!rep_a || rep_c) return tfe__fail(TFE_ERR_INVALID, w, "trace: A needs a repeated label, C none");
    break;
  case TFE_PRIM_ANTI_TRACE:
  case TFE_PRIM_ANTI_DIAG:
    if (rep_a || !rep_c) return tfe__fail(TFE_ERR_INVALID, w, "%s: C needs a repeated label, A none", tfe_prim_op_name(d->op));
    for (int i = 0; i < ra; i++)
      if (!tfe__pb_count(d->lc, rc, d->la[i])) return tfe__fail(TFE_ERR_INVALID, w, "%s: label %d of A is not in C", tfe_prim_op_name(d->op), (int)d->la[i]);
    break;
  case TFE_PRIM_BATCHED_GEMM:
  case TFE_PRIM_ELEMENTWISE_MUL:
    for (int i = 0; i < ra + rb + rc; i++) {
      int32_t x = i < ra ? d->la[i] : i < ra + rb ? d->lb[i - ra] : d->lc[i - ra - rb];
      int na = tfe__pb_count(d->la, ra, x), nb = tfe__pb_count(d->lb, rb, x), nc = tfe__pb_count(d->lc, rc, x);
      if (na > 1 || nb > 1 || nc > 1 || na + nb + nc < 2 || (d->op == TFE_PRIM_ELEMENTWISE_MUL && na + nb + nc != 3))
        return tfe__fail(TFE_ERR_INVALID, w, "%s: label %d is not a %s label", tfe_prim_op_name(d->op), (int)x,
                         d->op == TFE_PRIM_ELEMENTWISE_MUL ? "shared" : "batch, M, N or K");
    }
    break;
  default:
    break;
  }
  return TFE_OK;
}
#endif
