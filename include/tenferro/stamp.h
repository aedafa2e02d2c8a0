/* tenferro/stamp.h — stamp the whole tenferro stack for a scalar kind of your own.
 *
 *   #include <tenferro.h>
 *   typedef struct { uint32_t v; } modp;           // your element type
 *   static inline modp tfe_sr_zero_modp(void) ...  // the 8 semiring functions (scalar_tpl.h):
 *       zero, one, add, mul, conj, eq, from_f64, dist   -- all named tfe_sr_<op>_<suffix>
 *   #define TFE_S modp                  // suffix: names become tfe_zeros_modp, tfe_view_modp, ...
 *   #define TFE_T modp                  // C type of an element
 *   #define TFE_R modp                  // its "real" type (the type itself for non-complex kinds)
 *   #define TFE_ALG TFE_ALG_CUSTOM
 *   #define TFE_CPLX 0
 *   #define TFE_FLOAT 0                 // 1 only for IEEE float kinds of the standard algebra
 *   #define TFE_DT TFE_DT_CUSTOM
 *   #include <tenferro/stamp.h>         // undefines the seven parameters again
 *
 * No include guard: include it once per kind. Use it in the default linkage mode (the stamped
 * functions are static inline and may call your static semiring functions). */
#ifndef TENFERRO_H
#error "include <tenferro.h> before <tenferro/stamp.h>"
#endif
#if !defined(TFE_S) || !defined(TFE_T) || !defined(TFE_R) || !defined(TFE_ALG) || !defined(TFE_CPLX) || \
    !defined(TFE_FLOAT) || !defined(TFE_DT)
#error "tenferro/stamp.h needs TFE_S, TFE_T, TFE_R, TFE_ALG, TFE_CPLX, TFE_FLOAT and TFE_DT defined"
#endif

/* Every room's per-kind templates that take a user kind, in dependency order: declarations
 * first, then (unless TFE_HEADER) the bodies. The list is generated (gen/stamp_list.h: the
 * TFE_TEMPLATE lines of the tensor, kernel, prims and einsum rooms, gen/gen_kinds.py). A
 * template listed there must compile for TFE_ALG_CUSTOM kinds (guard float-only code with
 * `#if TFE_FLOAT`, write the rest with the tfe_sr_* functions). */
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#include <tenferro/gen/stamp_list.h>
#if TFE__IMPL
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 1
#include <tenferro/gen/stamp_list.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#endif

#undef TFE_S
#undef TFE_T
#undef TFE_R
#undef TFE_ALG
#undef TFE_CPLX
#undef TFE_FLOAT
#undef TFE_DT
