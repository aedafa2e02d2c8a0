/* tenferro/prims/prims.h — prims room: binary and unary contraction over every scalar kind and
 * the backend protocol. See docs/prims.md.
 *
 * Table of contents
 *   labels.h               the label table of one contraction (analysis and checks)
 *   engine.h               the engines a plan chooses between; threads; the workspace
 *   plan.h                 tfe_contract_plan, describe -> plan (the planner's top level)
 *   plan_layout.h          fusion of label groups, copies, loop labels (cost model)
 *   plan_small.h           when the small-GEMM engine takes a plan
 *   plan_cache.h           the process-wide plan cache (core/lru.h)
 *   blis.h                 the BLIS binding: tfe_blas_arch(), tfe_blas_set_num_threads()
 *   semiring_gemm_simd.h   tropical GEMM micro-kernels (AVX2, AVX-512)
 *   backend.h              the backend protocol: tfe_prims_backend, tfe_prim_desc,
 *                          tfe_prims_execute, tfe_prims_cpu()
 *   registry.h             tfe_backend_register / find / list / select (the #602 order)
 *   per kind S (stamped below):
 *     semiring_gemm_tpl.h  tfe_semiring_gemm_S, tfe_semiring_gemm_argmax_S
 *     naive_tpl.h          the reference engine, argument checks
 *     small_gemm_tpl.h     the small-GEMM engine (float kinds)
 *     contract_tpl.h       tfe_contract_S(alpha, A, la, B, lb, beta, C, lc)
 *                          tfe_contract_unary_S(alpha, A, la, beta, C, lc)
 *                          tfe_contract_on_S / tfe_contract_unary_on_S (explicit backend)
 *                          tfe_contract_describe_S / tfe_contract_execute_S
 *   cpu_backend.h          the CPU backend's slots; tfe_contract_dyn (dtype-tagged)
 *   generic                tfe_contract(...), tfe_contract_unary(...) (_Generic on A)
 * Labels are int32 values, one per axis. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_H
#define TENFERRO_PRIMS_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/labels.h>
#include <tenferro/prims/engine.h>
#include <tenferro/prims/plan.h>
#include <tenferro/prims/plan_layout.h>
#include <tenferro/prims/plan_small.h>
#include <tenferro/prims/plan_cache.h>
#include <tenferro/prims/blis.h>
#include <tenferro/prims/semiring_gemm_simd.h>
#include <tenferro/prims/backend.h>
#include <tenferro/prims/registry.h>
#include <tenferro/prims/cpu_backend.h>

#define TFE_TEMPLATE <tenferro/prims/semiring_gemm_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/prims/naive_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/prims/small_gemm_tpl.h>
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
 * alpha and beta point at scalars of the operands' kind. The backend is chosen from the
 * operands' storage (compute device, memory space: registry.h); _on names it. */
TFE_API tfe_status tfe_contract_dyn(const void *alpha, const tfe_dyn *A, const int32_t *la, const tfe_dyn *B,
                                    const int32_t *lb, const void *beta, const tfe_dyn *C, const int32_t *lc);
TFE_API tfe_status tfe_contract_dyn_on(const tfe_prims_backend *be, const void *alpha, const tfe_dyn *A,
                                       const int32_t *la, const tfe_dyn *B, const int32_t *lb, const void *beta,
                                       const tfe_dyn *C, const int32_t *lc);

/* ---- the room's process state (one member of tfe__st, core/state.h; bodies only) ----------- */
#if TFE__IMPL
/* The CPU backend's code for one kind (cpu_backend.h): its operation slots and its linalg slot. */
typedef tfe_status (*tfe__cpu_kind_fn)(const tfe_prims_backend *be, const tfe_prim_desc *d, const char *where);
typedef tfe_status (*tfe__cpu_la_fn)(const tfe_linalg_call *call);
typedef tfe_status (*tfe__cpu_ew_fn)(const tfe_ew_desc *d);
typedef struct tfe__prims_state {
  tfe__lru cache;             /* contraction plans (plan_cache.h) */
  tfe__ws ws;                 /* the contraction workspace (engine.h) */
  tfe__be_registry reg;       /* registered backends (registry.h) */
  atomic_long small_direct[3]; /* small-engine calls that read X / read Y / wrote C in place (tests) */
  atomic_long small_tail;      /* small-engine calls in place whose last row vector is masked (tests) */
  atomic_long small_tn;        /* small-engine calls on the depth-contiguous dot kernel (ps_tn_; tests) */
  atomic_long small_half;      /* small-engine calls with a half-width last row vector (small_half_tail; tests) */
  atomic_long small_nobuf[4];  /* calls without buffers (X, Y, C in place): whole vectors, masked, dot kernel,
                                * transposed input packed on the stack (tests) */
  tfe__blas_state blas;       /* the BLIS binding (blis.h) */
  /* The CPU slots' code per kind, enrolled by the kind's own typed entry points, so that a
   * unit compiles only the kinds it calls (cpu_backend.h). */
  _Atomic(tfe__cpu_kind_fn) cpu_kind[TFE_DT_COUNT];
  _Atomic(tfe__cpu_la_fn) cpu_la[TFE_DT_COUNT];
  _Atomic(tfe__cpu_ew_fn) cpu_ew[TFE_DT_COUNT];
} tfe__prims_state;
/* Bumps one of the counters above: a relaxed load and store, not a locked add (a locked
 * instruction in every small call waits for the kernel's stores to drain; a count lost to a
 * race between threads is harmless: the tests read them on one thread). */
#define tfe__count(c) atomic_store_explicit((c), atomic_load_explicit((c), memory_order_relaxed) + 1, memory_order_relaxed)
#endif

#endif
#elif !defined(TENFERRO_PRIMS_BODY) /* bodies */
#define TENFERRO_PRIMS_BODY
#include <tenferro/prims/labels.h>
#include <tenferro/prims/engine.h>
#include <tenferro/prims/plan.h>
#include <tenferro/prims/plan_layout.h>
#include <tenferro/prims/plan_small.h>
#include <tenferro/prims/plan_cache.h>
#include <tenferro/prims/blis.h>
#include <tenferro/prims/semiring_gemm_simd.h>
#include <tenferro/prims/backend.h>
#include <tenferro/prims/registry.h>
#define TFE_TEMPLATE <tenferro/prims/semiring_gemm_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/prims/naive_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/prims/small_gemm_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/prims/contract_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#include <tenferro/prims/cpu_backend.h>
#endif
