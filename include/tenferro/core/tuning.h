/* tenferro/core/tuning.h — every tuning knob of tenferro in one struct, with get and set.
 *
 * The defaults are what the benchmarks in docs/benchmarks.md were measured with; the knobs
 * exist for experiments and for machines unlike ours, never for correctness (every value
 * gives the same results). Read the current values, change some, set them back:
 *
 *   tfe_tuning t = tfe_tuning_get();
 *   t.copy_tile_bytes = 1024;
 *   tfe_tuning_set(&t);          // validated: a bad value is refused, nothing changes
 *
 * The settings are process-wide; set them before starting work on several threads. What each
 * knob does is documented in the API page of its room (docs/kernel.md, docs/prims.md,
 * docs/einsum.md). Fields are only ever added at the end of a room's section. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_TUNING_H
#define TENFERRO_CORE_TUNING_H
#include <tenferro/config.h>

typedef struct tfe_tuning {
  /* ---- kernel room (docs/kernel.md) ---------------------------------------------------- */
  int64_t kernel_reserved_; /* placeholder, replaced by the kernel room's knobs */


  /* ---- prims room (docs/prims.md, "Tuning") -------------------------------------------- */
  int64_t contract_naive_work;   /* contractions of at most this many label combinations run the
                                    reference loops (512; 0: every non-empty one is planned) */
  int64_t contract_small_mnk;    /* largest m*n*k of one GEMM of a batch that the small-GEMM
                                    engine runs instead of BLIS (512000) */
  int64_t contract_small_buf;    /* most real elements of one thread's small-GEMM buffers (32768) */
  int64_t contract_small_mode;   /* small-GEMM engine: 0 by the crossover, 1 whenever its buffers
                                    fit, -1 never (0) */
  int64_t contract_small_orient; /* its orientation: 0 by cost, 1 never transposed, 2 always (0) */
  int64_t contract_loop_mode;    /* looping over labels that block fusion: 0 by cost, 1 whenever
                                    it saves a copy, -1 never (copy instead) (0) */
  int64_t contract_par_grain;    /* multiply-adds one more thread must get to be woken (2^20) */
  int64_t contract_plan_cache_size; /* contraction plans kept (256; 0: none) */
  int64_t semiring_gemm_isa;     /* tropical GEMM kernels: 0 the best the CPU runs, 1 generic C,
                                    2 AVX2, 3 AVX-512 (0) */


  /* ---- einsum room (docs/einsum.md, "Tuning") ------------------------------------------ */
  double einsum_write_weight;    /* cost of writing one intermediate element, in multiply-adds,
                                    for options that leave write_weight at 0 (0) */
  int64_t einsum_plan_cache_size; /* einsum plans kept (64; 0: none) */


} tfe_tuning;

/* The defaults, one initializer per room section, in the order of the fields above. */
#define TFE__TUNING_DEFAULTS { \
  /* kernel */ 0, \
  /* prims */ .contract_naive_work = 512, .contract_small_mnk = 512000, .contract_small_buf = 32768, \
  .contract_small_mode = 0, .contract_small_orient = 0, .contract_loop_mode = 0, \
  .contract_par_grain = (int64_t)1 << 20, .contract_plan_cache_size = 256, .semiring_gemm_isa = 0, \
  /* einsum */ .einsum_write_weight = 0, .einsum_plan_cache_size = 64, \
}

/* The values in use now (the defaults until tfe_tuning_set). */
TFE_API tfe_tuning tfe_tuning_get(void);
/* The defaults, whatever was set since. */
TFE_API tfe_tuning tfe_tuning_default(void);
/* Checks every field, then replaces all of them; on error nothing changes. */
TFE_API tfe_status tfe_tuning_set(const tfe_tuning *t);

#endif
#elif !defined(TENFERRO_CORE_TUNING_BODY) /* bodies */
#define TENFERRO_CORE_TUNING_BODY


TFE_API tfe_tuning tfe_tuning_default(void) {
  tfe_tuning t = TFE__TUNING_DEFAULTS;
  return t;
}
TFE_API tfe_tuning tfe_tuning_get(void) { return tfe__st.tune; }
/* Each room checks its own fields (a function per room, below its section's knobs). */
TFE_API tfe_status tfe_tuning_set(const tfe_tuning *t) {
  TFE_CHECK_NULL(t);
  /* kernel checks */

  /* prims checks */
  if (t->contract_naive_work < 0 || t->contract_small_mnk < 0 || t->contract_small_buf < 1 ||
      t->contract_par_grain < 1 || t->contract_plan_cache_size < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "contract_naive_work, contract_small_mnk and contract_plan_cache_size must be "
                                     ">= 0, contract_small_buf and contract_par_grain >= 1");
  if (t->contract_small_mode < -1 || t->contract_small_mode > 1 || t->contract_loop_mode < -1 ||
      t->contract_loop_mode > 1 || t->contract_small_orient < 0 || t->contract_small_orient > 2 ||
      t->semiring_gemm_isa < 0 || t->semiring_gemm_isa > 3)
    return TFE_FAIL(TFE_ERR_INVALID, "contract_small_mode and contract_loop_mode take -1, 0 or 1, "
                                     "contract_small_orient 0-2, semiring_gemm_isa 0-3");
  /* einsum checks */
  if (!(t->einsum_write_weight >= 0 && t->einsum_write_weight < 1e300) || t->einsum_plan_cache_size < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "einsum_write_weight must be finite and >= 0, einsum_plan_cache_size >= 0");

  tfe__st.tune = *t;
  return TFE_OK;
}
#endif
