/* tenferro/prims/cpu_backend.h — prims room: the CPU backend, one instance of the vtable.
 *
 * Its eight operation slots are one function: check the labels against the operation, then
 * run tenferro's contraction engine (plan from the cache, engine switch) for the operands'
 * kind, natively: a CPU slot never calls back into another backend's slots. Its linalg slot
 * runs the LAPACKE code of the linalg room. It computes in host memory and is the backend
 * inferred for host memory (TFE_BACKEND_INFER). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_CPU_BACKEND_H
#define TENFERRO_PRIMS_CPU_BACKEND_H
#include <tenferro/prims/backend.h>

#endif
#elif !defined(TENFERRO_PRIMS_CPU_BACKEND_BODY) /* bodies */
#define TENFERRO_PRIMS_CPU_BACKEND_BODY
#include <tenferro/prims/backend.h>

/* A contraction over dtype-tagged operands (B NULL: unary) on backend be: the typed entry of
 * the operands' kind (which routes to be's slots where they are not the CPU's). */
TFE_INTERNAL tfe_status tfe__pr_contract_dyn(const tfe_prims_backend *be, const tfe_prim_desc *d, const char *where) {
  const tfe_dyn *A = d->a, *B = d->b, *C = d->c;
  if ((B && B->dtype != A->dtype) || C->dtype != A->dtype)
    return tfe__fail(TFE_ERR_DTYPE, where, "operands differ in kind: A is %s, B is %s, C is %s",
                     tfe_dtype_name(A->dtype), B ? tfe_dtype_name(B->dtype) : "absent", tfe_dtype_name(C->dtype));
  tfe__cpu_kind_fn fn = (unsigned)A->dtype < (unsigned)TFE_DT_COUNT
                            ? atomic_load_explicit(&tfe__st.prims.cpu_kind[A->dtype], memory_order_relaxed)
                            : NULL;
  if (!fn)
    return tfe__fail(TFE_ERR_UNSUPPORTED, where, "%s has no contraction in this program (user kinds: call tfe_contract_S)",
                     A->dtype == TFE_DT_CUSTOM ? "a user kind" : tfe_dtype_name(A->dtype));
  return fn(be, d, where);
}

/* Every operation slot: the labels must have the operation's shape; then the engine. */
TFE_INTERNAL tfe_status tfe__cpu_exec(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  (void)be; (void)plan;
  if (!d->a || !d->c) return TFE_FAIL_AT(TFE_ERR_NULL, "tfe_prims_execute", "operand %s is NULL", !d->a ? "A" : "C");
  if (!d->alpha || !d->beta)
    return TFE_FAIL_AT(TFE_ERR_NULL, "tfe_prims_execute", "scalar %s is NULL", !d->alpha ? "alpha" : "beta");
  TFE_TRY(tfe__pb_check_labels(d));
  return tfe__pr_contract_dyn(tfe__be_cpu(), d, "tfe_prims_execute");
}

/* The linalg slot: the linalg room's LAPACKE code for the call's kind (linalg.h; it says it is
 * there by defining TFE__HAVE_LINALG in its declarations, which precede every body;
 * TFE_NO_LINALG leaves its bodies out). */
#if defined(TFE__HAVE_LINALG) && !defined(TFE_NO_LINALG)
#define TFE__CPU_LINALG 1
TFE_INTERNAL void tfe__la_enroll_all(void);
#endif
TFE_INTERNAL tfe_status tfe__cpu_linalg(const tfe_prims_backend *be, const tfe_linalg_call *call) {
  (void)be;
  if (!call) return TFE_FAIL(TFE_ERR_NULL, "argument 'call' is NULL");
  tfe__cpu_la_fn fn = (unsigned)call->dtype < (unsigned)TFE_DT_COUNT
                          ? atomic_load_explicit(&tfe__st.prims.cpu_la[call->dtype], memory_order_relaxed)
                          : NULL;
  if (!fn) return TFE_FAIL_AT(TFE_ERR_DTYPE, "tfe_linalg", "no linalg for %s elements in this program",
                              call->dtype == TFE_DT_CUSTOM ? "user-kind" : tfe_dtype_name(call->dtype));
  return fn(call);
}

/* The elementwise slot: the kernel room's CPU code for the descriptor's kind. */
TFE_INTERNAL tfe_status tfe__cpu_elementwise(const tfe_prims_backend *be, const tfe_ew_desc *d) {
  (void)be;
  if (!d || !d->dst) return TFE_FAIL_AT(TFE_ERR_NULL, "tfe_elementwise", "%s is NULL", !d ? "the descriptor" : "dst");
  tfe__cpu_ew_fn fn = (unsigned)d->dst->dtype < (unsigned)TFE_DT_COUNT
                          ? atomic_load_explicit(&tfe__st.prims.cpu_ew[d->dst->dtype], memory_order_relaxed)
                          : NULL;
  if (!fn) return TFE_FAIL_AT(TFE_ERR_DTYPE, "tfe_elementwise", "no elementwise code for %s elements in this program",
                              d->dst->dtype == TFE_DT_CUSTOM ? "user-kind" : tfe_dtype_name(d->dst->dtype));
  return fn(d);
}

TFE_INTERNAL void tfe__cpu_enroll_all(void) {
#define TFE__CPU_ENROLL(s, T, R, alg, cplx, flt, DT) tfe_pr_enroll__##s(); tfe__cpu_enroll_ew(DT, tfe_k_ew_call__##s);
  TFE_KINDS_ON(TFE__CPU_ENROLL)
#undef TFE__CPU_ENROLL
#ifdef TFE__CPU_LINALG
  tfe__la_enroll_all();
#endif
}

/* The vtable as the registry holds it: its slots reach only the kinds enrolled so far. */
TFE_INTERNAL tfe_prims_backend tfe__prims_cpu_bare(void) {
  tfe_prims_backend be;
  memset(&be, 0, sizeof be);
  be.name = "cpu";
  be.space = TFE_HOST;
  be.flags = TFE_BACKEND_INFER;
  for (int op = 0; op < TFE_PRIM_COUNT; op++) be.exec[op] = tfe__cpu_exec;
  be.linalg = tfe__cpu_linalg;
  be.elementwise = tfe__cpu_elementwise;
  return be;
}
/* Handed to users, who may call its slots with any kind: every kind this unit compiles. */
TFE_API tfe_prims_backend tfe_prims_cpu(void) {
  tfe__cpu_enroll_all();
  return tfe__prims_cpu_bare();
}

/* tfe_contract_S for operands whose kind is known at run time (see prims.h). */
TFE_API tfe_status tfe_contract_dyn_on(const tfe_prims_backend *be, const void *alpha, const tfe_dyn *A,
                                       const int32_t *la, const tfe_dyn *B, const int32_t *lb, const void *beta,
                                       const tfe_dyn *C, const int32_t *lc) {
  if (!alpha || !beta) return TFE_FAIL(TFE_ERR_NULL, "scalar %s is NULL", !alpha ? "alpha" : "beta");
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "operand %s is NULL", !A ? "A" : "C");
  tfe__cpu_enroll_all();
  tfe_operand_place ops[3] = {{"A", A->st}, {"C", C->st}, {"B", B ? B->st : NULL}};
  TFE_TRY(tfe__be_select_at(be, B ? 3 : 2, ops, false, &be, NULL, __func__));
  tfe_prim_desc d = {TFE_PRIM_CONTRACT, A, B, C, la, lb, lc, alpha, beta};
  return tfe__pr_contract_dyn(be, &d, __func__);
}
TFE_API tfe_status tfe_contract_dyn(const void *alpha, const tfe_dyn *A, const int32_t *la, const tfe_dyn *B,
                                    const int32_t *lb, const void *beta, const tfe_dyn *C, const int32_t *lc) {
  return tfe_contract_dyn_on(NULL, alpha, A, la, B, lb, beta, C, lc);
}
#endif
