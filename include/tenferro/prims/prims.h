/* tenferro/prims.h — prims room: binary and unary contraction over every scalar kind, the
 * BLIS binding (blas.h), semiring GEMM kernels (semiring_gemm*.h) and the backend protocol.
 *
 * Table of contents
 *   tfe_contract_S(alpha, A, la, B, lb, beta, C, lc)   C = alpha * sum A*B + beta * C
 *   tfe_contract_unary_S(alpha, A, la, beta, C, lc)    C = alpha * sum A + beta * C
 *   tfe_contract(...), tfe_contract_unary(...)         _Generic front ends
 *   tfe_contract_describe_S / tfe_contract_plan_create / tfe_contract_execute_S
 *                                                      describe -> plan -> execute (prims_plan.h)
 *   tfe_contract_dyn(...)                              dtype-tagged form
 *   tfe_semiring_gemm_S, tfe_semiring_gemm_argmax_S    GEMM over any semiring (semiring_gemm_tpl.h)
 *   tfe_prims_backend, tfe_prims_cpu()                 the backend protocol (prims_backend.h)
 *   tfe_blas_arch(), tfe_blas_set_num_threads()        the BLIS binding (blas.h)
 * Labels are int32 values, one per axis. See docs/prims.md. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_H
#define TENFERRO_PRIMS_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/prims/blis.h>
#include <tenferro/gen/generic.h>
#include <tenferro/kernel/kernel.h>

/* ---- label analysis (kind-independent) ------------------------------------------------------ */
#define TFE__PR_MAXL (2 * TFE_MAX_RANK)
#define TFE__PR_IN_A 1
#define TFE__PR_IN_B 2
#define TFE__PR_IN_C 4

/* One distinct label: its size and its stride in each operand. A label repeated within an
 * operand gets the sum of its strides there: that is the diagonal view, without a copy. */
typedef struct tfe__pr_lab {
  int32_t label;
  uint8_t in;  /* TFE__PR_IN_* bits */
  int64_t dim;
  int64_t s[3]; /* stride in A, B, C (0 where absent) */
} tfe__pr_lab;

typedef struct tfe__pr_prob {
  int n;
  bool c_embed; /* a label repeated in C: off-diagonal elements get beta*C */
  tfe__pr_lab lab[TFE__PR_MAXL];
} tfe__pr_prob;

/* The small-GEMM path (prims_small_tpl.h, included by contract_tpl.h) needs GNU vector types. */
#if defined(__GNUC__) || defined(__clang__)
#define TFE__PS_HAVE_VEC 1
#endif
/* ISO C modes (-std=c11) turn off gcc's fusing of a*b+c into one FMA; the small kernel's tile
 * loop asks for it back (one rounding instead of two per multiply-add, like BLIS's kernels). */
#if defined(__GNUC__) && !defined(__clang__)
#define TFE__PS_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define TFE__PS_CONTRACT
#endif

#include <tenferro/prims/plan.h>
#include <tenferro/prims/backend.h>
#include <tenferro/prims/semiring_gemm_simd.h>

#define TFE_TEMPLATE <tenferro/prims/semiring_gemm_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

#define TFE_TEMPLATE <tenferro/prims/contract_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* _Generic front ends: dispatch on the type of A (variadic so that compound-literal label
 * arrays, which contain commas, pass through). */
#define tfe_contract(alpha, A, ...) _Generic((A), TFE_GCASES_ALL(contract, view))(alpha, A, __VA_ARGS__)
#define tfe_contract_unary(alpha, A, ...) _Generic((A), TFE_GCASES_ALL(contract_unary, view))(alpha, A, __VA_ARGS__)

/* ---- the dtype-tagged layer ------------------------------------------------------------------ */
/* tfe_contract_S for operands whose kind is known at run time; B == NULL is the unary form.
 * alpha and beta point at scalars of the operands' kind. */
TFE_API tfe_status tfe_contract_dyn(const void *alpha, const tfe_dyn *A, const int32_t *la, const tfe_dyn *B,
                                    const int32_t *lb, const void *beta, const tfe_dyn *C, const int32_t *lc);
/* The CPU backend's vtable: all eight operations. Copy it to override single slots. */
TFE_API tfe_prims_backend tfe_prims_cpu(void);

#endif
#elif !defined(TENFERRO_PRIMS_BODY) /* bodies */
#define TENFERRO_PRIMS_BODY
#include <tenferro/tensor/tensor.h>
#include <tenferro/prims/blis.h>
#include <tenferro/gen/generic.h>
#include <tenferro/kernel/kernel.h>

TFE_INTERNAL const char *tfe__pr_opname(int op) { return op == 0 ? "A" : op == 1 ? "B" : "C"; }

/* Adds the axes of operand op (0 A, 1 B, 2 C) to p, checking that sizes agree. */
TFE_INTERNAL tfe_status tfe__pr_add_operand(tfe__pr_prob *p, int op, const tfe_layout *L,
                                            const int32_t *labels, const char *where) {
  if (L->rank > 0 && !labels)
    return tfe__fail(TFE_ERR_NULL, where, "labels of %s are NULL", tfe__pr_opname(op));
  for (int i = 0; i < L->rank; i++) {
    int j = 0;
    while (j < p->n && p->lab[j].label != labels[i]) j++;
    if (j == p->n) {
      if (op == 2)
        return tfe__fail(TFE_ERR_INVALID, where, "output label %d (C axis %d) appears in no input",
                         (int)labels[i], i);
      tfe__pr_lab z = {labels[i], 0, L->dims[i], {0, 0, 0}};
      p->lab[p->n++] = z;
    } else if (p->lab[j].dim != L->dims[i]) {
      return tfe__fail(TFE_ERR_SHAPE, where, "label %d has size %lld in %s axis %d but %lld elsewhere",
                       (int)labels[i], (long long)L->dims[i], tfe__pr_opname(op), i,
                       (long long)p->lab[j].dim);
    }
    uint8_t bit = (uint8_t)(1u << op);
    if (op == 2 && (p->lab[j].in & bit)) p->c_embed = true;
    p->lab[j].in |= bit;
    p->lab[j].s[op] += L->strides[i];
  }
  return TFE_OK;
}

/* Validates the operands (B may be NULL: unary) and builds the label table. */
TFE_INTERNAL tfe_status tfe__pr_analyze(const tfe_layout *A, const int32_t *la, const tfe_layout *B,
                                        const int32_t *lb, const tfe_layout *C, const int32_t *lc,
                                        tfe__pr_prob *p, const char *where) {
  const tfe_layout *L[3] = {A, B, C};
  for (int op = 0; op < 3; op++) {
    if (!L[op]) continue;
    if (tfe_layout_check(L[op], NULL) != TFE_OK) {
      char msg[TFE_ERRMSG_MAX]; /* the layout check's message, without its function name */
      const char *colon = strchr(tfe__errmsg, ':');
      snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : tfe__errmsg);
      return tfe__fail(tfe__errcode, where, "operand %s: %s", tfe__pr_opname(op), msg);
    }
  }
  p->n = 0;
  p->c_embed = false;
  TFE_TRY(tfe__pr_add_operand(p, 0, A, la, where));
  if (B) TFE_TRY(tfe__pr_add_operand(p, 1, B, lb, where));
  TFE_TRY(tfe__pr_add_operand(p, 2, C, lc, where));
  if (!tfe__layout_nested(C))
    return tfe__fail(TFE_ERR_OVERLAP, where, "output C has overlapping elements (zero or interleaved strides)");
  return TFE_OK;
}
/* Calls of the small path that read X / read Y / wrote C in place (tests check the paths ran). */
TFE_GLOBAL atomic_long tfe__ps_direct_calls[3];
#include <tenferro/prims/plan.h>
#include <tenferro/prims/backend.h>
#include <tenferro/prims/semiring_gemm_simd.h>
#define TFE_TEMPLATE <tenferro/prims/semiring_gemm_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/prims/contract_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
TFE_API tfe_status tfe_contract_dyn(const void *alpha, const tfe_dyn *A, const int32_t *la, const tfe_dyn *B,
                                    const int32_t *lb, const void *beta, const tfe_dyn *C, const int32_t *lc) {
  if (!alpha || !beta) return TFE_FAIL(TFE_ERR_NULL, "scalar %s is NULL", !alpha ? "alpha" : "beta");
  if (!A || !C) return TFE_FAIL(TFE_ERR_NULL, "operand %s is NULL", !A ? "A" : "C");
  if ((B && B->dtype != A->dtype) || C->dtype != A->dtype)
    return TFE_FAIL(TFE_ERR_DTYPE, "operands differ in kind: A is %s, B is %s, C is %s", tfe_dtype_name(A->dtype),
                    B ? tfe_dtype_name(B->dtype) : "absent", tfe_dtype_name(C->dtype));
  switch (A->dtype) {
#define TFE__PR_DYN_CASE(s, T, R, alg, cplx, flt, DT)                                                   \
  case DT: {                                                                                            \
    tfe_view_##s a = {(T *)A->data, A->lay, A->conj}, c = {(T *)C->data, C->lay, C->conj};             \
    if (!B) return tfe_contract_unary_##s(*(const T *)alpha, &a, la, *(const T *)beta, &c, lc);         \
    tfe_view_##s b = {(T *)B->data, B->lay, B->conj};                                                   \
    return tfe_contract_##s(*(const T *)alpha, &a, la, &b, lb, *(const T *)beta, &c, lc);               \
  }
    TFE_KINDS(TFE__PR_DYN_CASE)
#undef TFE__PR_DYN_CASE
  default:
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "dtype %d has no contraction here (user kinds: call tfe_contract_S)", (int)A->dtype);
  }
}

/* ---- the CPU backend ------------------------------------------------------------------------ */
/* Every slot checks that the labels have the operation's shape, then runs the contraction
 * engine (which plans and caches by itself, so the plan slot stays empty). */
TFE_INTERNAL tfe_status tfe__pb_cpu_exec(void *ctx, const tfe_prim_desc *d, void *plan) {
  (void)ctx; (void)plan;
  if (!d->a || !d->c) return TFE_FAIL(TFE_ERR_NULL, "operand %s is NULL", !d->a ? "A" : "C");
  TFE_TRY(tfe__pb_check_labels(d));
  return tfe_contract_dyn(d->alpha, d->a, d->la, d->b, d->lb, d->beta, d->c, d->lc);
}
TFE_API tfe_prims_backend tfe_prims_cpu(void) {
  tfe_prims_backend be;
  memset(&be, 0, sizeof be);
  be.name = "cpu";
  for (int op = 0; op < TFE_PRIM_COUNT; op++) be.exec[op] = tfe__pb_cpu_exec;
  return be;
}
#endif
