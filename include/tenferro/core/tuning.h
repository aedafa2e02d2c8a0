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
#include <tenferro/core/status.h>

typedef struct tfe_tuning {
  /* ---- kernel room (docs/kernel.md) ---------------------------------------------------- */
  int64_t kernel_reserved_; /* placeholder, replaced by the kernel room's knobs */


  /* ---- prims room (docs/prims.md) ------------------------------------------------------ */
  int64_t prims_reserved_; /* placeholder, replaced by the prims room's knobs */


  /* ---- einsum room (docs/einsum.md) ---------------------------------------------------- */
  int64_t einsum_reserved_; /* placeholder, replaced by the einsum room's knobs */


} tfe_tuning;

/* The defaults, one initializer per room section, in the order of the fields above. */
#define TFE__TUNING_DEFAULTS { \
  /* kernel */ 0, \
  /* prims */ 0, \
  /* einsum */ 0, \
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

  /* einsum checks */

  tfe__st.tune = *t;
  return TFE_OK;
}
#endif
