/* tenferro.h — the umbrella header: include this, link BLIS and LAPACKE (or libtenferro).
 * Rooms, bottom up (docs/architecture.md): core, tensor, kernel, prims, einsum, linalg, ad,
 * io, runtime (gpu and dist to come). Linkage modes: tenferro/config.h, docs/linkage.md.
 *
 * Every room header is included twice: first for its declarations (types, prototypes, the
 * generic front ends), then, unless TFE_HEADER, for its bodies (TFE__BODY_PHASE = 1). A unit
 * in declarations mode therefore parses only what a caller needs. A room left out by an opt-out
 * (TFE_NO_EINSUM, TFE_NO_LINALG, TFE_NO_AD, TFE_NO_IO; config.h) is declared `extern` and its
 * bodies are skipped. C++ gets overloads in place of the _Generic front ends (gen/cxx.h). */
#ifndef TENFERRO_H
#define TENFERRO_H

#include <tenferro/config.h>

#ifdef __cplusplus
/* Functions of C linkage return tfe_c64 / tfe_c128 (std::complex) by value: layout- and
 * register-compatible with C's _Complex (config.h; tests/test_cxx.cpp calls them), which clang
 * warns about (silenced for tenferro's declarations only). */
#pragma GCC diagnostic push
#ifdef __clang__
#pragma GCC diagnostic ignored "-Wreturn-type-c-linkage"
#endif
extern "C" {
#endif


#include <tenferro/core/core.h>
#include <tenferro/core/kinds.h>
#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>
#include <tenferro/kernel/kernel.h>
#if defined(__cplusplus) /* prims/plan.h: a flexible array member (C99) in tfe_contract_plan */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#ifdef __clang__
#pragma GCC diagnostic ignored "-Wc99-extensions"
#endif
#endif
#include <tenferro/prims/prims.h>
#if defined(__cplusplus)
#pragma GCC diagnostic pop
#endif
#ifdef TFE_NO_EINSUM
#pragma push_macro("TFE__PART")
#undef TFE__PART
#define TFE__PART OFF
#endif
#include <tenferro/einsum/einsum.h>
#ifdef TFE_NO_EINSUM
#pragma pop_macro("TFE__PART")
#endif
#ifdef TFE_NO_LINALG
#pragma push_macro("TFE__PART")
#undef TFE__PART
#define TFE__PART OFF
#endif
#include <tenferro/linalg/linalg.h>
#ifdef TFE_NO_LINALG
#pragma pop_macro("TFE__PART")
#endif
#ifdef TFE_NO_AD
#pragma push_macro("TFE__PART")
#undef TFE__PART
#define TFE__PART OFF
#endif
#include <tenferro/ad/ad.h>
#ifdef TFE_NO_AD
#pragma pop_macro("TFE__PART")
#endif
#include <tenferro/gpu/gpu.h> /* declarations only: the bodies are the companion unit's */
#ifdef TFE_NO_IO
#pragma push_macro("TFE__PART")
#undef TFE__PART
#define TFE__PART OFF
#endif
#include <tenferro/io/io.h>
#ifdef TFE_NO_IO
#pragma pop_macro("TFE__PART")
#endif
#include <tenferro/runtime/runtime.h>

#if TFE__IMPL
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 1
#include <tenferro/core/state.h>
#include <tenferro/core/core.h>
#include <tenferro/core/lock.h>
#include <tenferro/core/tuning.h>
#include <tenferro/core/kinds.h>
#include <tenferro/tensor/tensor.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/prims.h>
#ifndef TFE_NO_EINSUM
#include <tenferro/einsum/einsum.h>
#endif
#ifndef TFE_NO_LINALG
#include <tenferro/linalg/linalg.h>
#endif
#ifndef TFE_NO_AD
#include <tenferro/ad/ad.h>
#endif
#ifndef TFE_NO_IO
#include <tenferro/io/io.h>
#endif
#include <tenferro/runtime/runtime.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#endif

#ifdef __cplusplus
}
#pragma GCC diagnostic pop
#include <tenferro/gen/cxx.h>
#endif

#endif
