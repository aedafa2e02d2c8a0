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
#ifndef __has_include
#error "tenferro/stamp.h needs __has_include (gcc >= 5, clang)"
#endif
#if !defined(TFE_S) || !defined(TFE_T) || !defined(TFE_R) || !defined(TFE_ALG) || !defined(TFE_CPLX) || \
    !defined(TFE_FLOAT) || !defined(TFE_DT)
#error "tenferro/stamp.h needs TFE_S, TFE_T, TFE_R, TFE_ALG, TFE_CPLX, TFE_FLOAT and TFE_DT defined"
#endif

/* Every room's per-kind templates, in dependency order (docs/architecture.md). A room adds its
 * templates in its own block; `__has_include` keeps a listed template that does not exist yet
 * from being an error. A template listed here must compile for TFE_ALG_CUSTOM kinds (guard
 * float-only code with `#if TFE_FLOAT`, write the rest with the tfe_sr_* functions). */

/* tensor room */
#include <tenferro/tensor/tensor_tpl.h>
#include <tenferro/tensor/view_tpl.h>

/* kernel room */
#if __has_include(<tenferro/kernel/kernel_tpl.h>)
#include <tenferro/kernel/kernel_tpl.h>
#endif

/* prims room (same order as in prims.h) */
#if __has_include(<tenferro/prims/semiring_gemm_tpl.h>)
#include <tenferro/prims/semiring_gemm_tpl.h>
#endif
#if __has_include(<tenferro/prims/naive_tpl.h>)
#include <tenferro/prims/naive_tpl.h>
#endif
#if __has_include(<tenferro/prims/small_gemm_tpl.h>)
#include <tenferro/prims/small_gemm_tpl.h>
#endif
#if __has_include(<tenferro/prims/contract_tpl.h>)
#include <tenferro/prims/contract_tpl.h>
#endif

/* einsum room */
#if __has_include(<tenferro/einsum/einsum_tpl.h>)
#include <tenferro/einsum/einsum_tpl.h>
#endif

/* linalg room (float kinds only: nothing to stamp for user kinds unless TFE_FLOAT) */

/* ad room */

/* io room */

#undef TFE_S
#undef TFE_T
#undef TFE_R
#undef TFE_ALG
#undef TFE_CPLX
#undef TFE_FLOAT
#undef TFE_DT
