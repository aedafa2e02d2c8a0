/* tenferro/config.h — linkage modes, version, limits and the template-pasting macros.
 *
 * Linkage modes (docs/linkage.md has a recipe for each):
 *   default               include and compile: every function is `static inline`; several units
 *                         of one program share the process state (one weak block, core/state.h).
 *   TFE_HEADER            declarations only: types, prototypes and the generic front ends; no
 *                         bodies are parsed. Link libtenferro (`make lib`). C++ includes this mode.
 *   TFE_IMPLEMENTATION    the one unit that defines every public function (external linkage)
 *                         and the process state; internal helpers stay `static`. `make lib`
 *                         compiles exactly this (lib/tenferro.c).
 * Every header is split in two phases: declarations (types, prototypes) and bodies. The
 * umbrella header includes every room's declarations first, then, in the default and
 * implementation modes, every room's bodies (TFE__BODY_PHASE), as stb's single headers do. */
#ifndef TENFERRO_CONFIG_H
#define TENFERRO_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define TFE_VERSION_MAJOR 0
#define TFE_VERSION_MINOR 7
#define TFE_VERSION_PATCH 0
#define TFE_VERSION_STRING "0.7.0"
/* One number that grows with every release: 700 for 0.7.0. */
#define TFE_VERSION (TFE_VERSION_MAJOR * 10000 + TFE_VERSION_MINOR * 100 + TFE_VERSION_PATCH)

#if defined(TFE_EXTERN) && !defined(TFE_HEADER) /* the name of earlier releases */
#define TFE_HEADER
#endif
#if defined(__cplusplus) && !defined(TFE_HEADER)
#define TFE_HEADER /* C++ links the library: the bodies are C11 */
#endif
#if defined(TFE_HEADER) && defined(TFE_IMPLEMENTATION)
#error "tenferro: define at most one of TFE_HEADER and TFE_IMPLEMENTATION"
#endif

#if defined(TFE_IMPLEMENTATION)
#define TFE__IMPL 1
#define TFE_API __attribute__((visibility("default")))
#define TFE_INTERNAL static inline
#elif defined(TFE_HEADER)
#define TFE__IMPL 0
#define TFE_API extern
#define TFE_INTERNAL static inline
#else
#define TFE__IMPL 1
#define TFE_API static inline
#define TFE_INTERNAL static inline
#endif
#ifndef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#endif

/* Process state (the one block of core/state.h): weak in the default mode, so that every unit
 * of a program shares it; file-local in the implementation unit, so nothing of it is exported. */
#if defined(TFE_IMPLEMENTATION)
#define TFE_GLOBAL static
#else
#define TFE_GLOBAL __attribute__((weak))
#endif
#ifdef __cplusplus
#define TFE_THREAD_LOCAL thread_local
#else
#define TFE_THREAD_LOCAL _Thread_local
#endif

/* Highest tensor rank. Views carry fixed arrays so that a view is a plain value. A unit built
 * with another value than the library it links fails to link (tfe_abi_rank<N>, core/core.h). */
#ifndef TFE_MAX_RANK
#define TFE_MAX_RANK 64
#endif

/* OpenMP without warnings when the user compiles without -fopenmp. */
#define TFE__PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define TFE_OMP(x) TFE__PRAGMA(omp x)
#else
#define TFE_OMP(x)
#endif

#define TFE__CAT(a, b) a##b
#define TFE_CAT(a, b) TFE__CAT(a, b)
#define TFE__CAT3(a, b, c) a##b##c
#define TFE_CAT3(a, b, c) TFE__CAT3(a, b, c)
/* Inside a template: TFE_FN(zeros) -> tfe_zeros_f64 for TFE_S = f64. */
#define TFE_FN(name) TFE_CAT3(tfe_, name, TFE_CAT(_, TFE_S))
#define TFE_TY(name) TFE_FN(name)
#define TFE__STR(x) #x
#define TFE_STR(x) TFE__STR(x) /* TFE_STR(TFE_S) -> "f64" */

#define TFE_UNUSED(x) ((void)(x))

#endif
