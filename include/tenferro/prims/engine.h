/* tenferro/prims/engine.h — prims room: the engines a contraction plan chooses between, how
 * many threads an execution gets, and the contraction workspace.
 *
 * Every plan records one engine at plan time (tfe__pr_plan_build); execution
 * (contract_tpl.h) is then one switch on it:
 *   NAIVE     the reference loops: empty, unary or tiny problems (contract_naive_work)
 *   SMALL     the small-GEMM engine (small_gemm_tpl.h): huge batches of tiny GEMMs, float
 *             kinds, below the crossover contract_small_mnk
 *   LOOPS     plain loops per GEMM of the batch: each GEMM costs less than a BLIS call
 *             (m*n*k <= 2048), float kinds, when the small engine is off
 *   BLIS      one BLIS call per GEMM of the batch (float kinds)
 *   SEMIRING  tenferro's semiring GEMM per batch (integer, tropical and user kinds)
 *   BACKEND   the batch of GEMMs is one call of the backend's batched_gemm slot: plans made
 *             for a backend whose batched_gemm is not the CPU's own (a user's GEMM, say)
 * Before the GEMM phase, labels summed in one input are reduced away and operands that
 * cannot be addressed as matrices are copied; after it, a copied C is written back. Those
 * phases go through the backend's reduce and permute slots (the CPU's own: in-line code). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_ENGINE_H
#define TENFERRO_PRIMS_ENGINE_H
#include <tenferro/core/core.h>

typedef enum tfe__pr_engine {
  TFE__PR_ENG_NAIVE,
  TFE__PR_ENG_SMALL,
  TFE__PR_ENG_LOOPS,
  TFE__PR_ENG_BLIS,
  TFE__PR_ENG_SEMIRING,
  TFE__PR_ENG_BACKEND,
  TFE__PR_ENG_COUNT
} tfe__pr_engine;

/* What a plan is made for: the CPU's own GEMM engines, or a backend's batched_gemm slot. The
 * flavor is part of the plan cache key. */
typedef enum tfe__pr_flavor { TFE__PR_NATIVE = 0, TFE__PR_LOWERED = 1 } tfe__pr_flavor;

/* Frees the cached contraction workspace (it is otherwise kept for the next call). */
TFE_API void tfe_contract_workspace_release(void);

#endif
#elif !defined(TENFERRO_PRIMS_ENGINE_BODY) /* bodies */
#define TENFERRO_PRIMS_ENGINE_BODY

TFE_INTERNAL const char *tfe__pr_engine_name(tfe__pr_engine e) {
  static const char *const n[] = {"naive", "small", "loops", "blis", "semiring", "backend"};
  return (unsigned)e < (unsigned)TFE__PR_ENG_COUNT ? n[e] : "unknown";
}

/* ---- threads ------------------------------------------------------------------------------- */
/* A parallel region costs microseconds on a quiet machine but up to a scheduler slice on a
 * loaded one (the other thread is descheduled while BLIS's barriers spin), so a thread is
 * woken only for contract_par_grain multiply-adds or more (docs/bench-prims.md). */
TFE_INTERNAL int tfe__pr_threads_for(int64_t work, int threads) {
  int64_t grain = tfe__st.tune.contract_par_grain > 0 ? tfe__st.tune.contract_par_grain : 1;
  int64_t t = work / grain;
  if (t < 1) t = 1;
  return t < threads ? (int)t : threads;
}

/* ---- workspace ----------------------------------------------------------------------------- */
/* Big temporaries are fresh pages on every malloc: the page faults cost more than the copies,
 * so the last block is kept for the next call (core/workspace.h). */
TFE_INTERNAL void *tfe__pr_ws_get(size_t bytes) { return tfe__ws_get(&tfe__st.prims.ws, bytes, NULL); }
TFE_INTERNAL void tfe__pr_ws_put(void *p) { tfe__ws_put(&tfe__st.prims.ws, p); }
TFE_API void tfe_contract_workspace_release(void) { tfe__ws_release(&tfe__st.prims.ws); }
#endif
