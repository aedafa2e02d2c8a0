/* tenferro/config.h — build switches shared by every room.
 *
 * Linkage modes (see docs/core.md):
 *   default                 every function is `static inline`: include and compile, nothing else.
 *   TFE_IMPLEMENTATION      this translation unit emits the one external definition of everything
 *                           (define it in exactly one .c file of a large project), and
 *   TFE_EXTERN              other translation units see C99 `inline` definitions only and call
 *                           the external ones: the code is compiled once.
 * Process-wide state (allocation hooks, caches, loaded backends) lives in weak globals so that
 * every translation unit of a program shares one copy in all modes. */
#ifndef TENFERRO_CONFIG_H
#define TENFERRO_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#if defined(TFE_IMPLEMENTATION)
#define TFE_API extern inline
#elif defined(TFE_EXTERN)
#define TFE_API inline
#else
#define TFE_API static inline
#endif
/* In the one-TU modes the SIMD micro-kernels (static inline compiler intrinsics) sit inside
 * functions with external linkage. C11 6.7.4p3 asks for a diagnostic there and clang gives one
 * (-Wstatic-in-inline); the intrinsics are always inlined, so the program is well formed in
 * practice. The warning is switched off for the translation units that pick these modes. */
#if (defined(TFE_IMPLEMENTATION) || defined(TFE_EXTERN)) && defined(__clang__)
#pragma clang diagnostic ignored "-Wstatic-in-inline"
#endif

/* Internal helpers follow the same linkage as the API (an inline external function may not
 * call a static one). Their names carry a double underscore: tfe__name. */
#define TFE_INTERNAL TFE_API

/* One definition shared by every translation unit of the program. */
#define TFE_GLOBAL __attribute__((weak))
#define TFE_THREAD_LOCAL _Thread_local

/* Highest tensor rank. Views carry fixed arrays so that a view is a plain value. */
#ifndef TFE_MAX_RANK
#define TFE_MAX_RANK 64
#endif

/* OpenMP without warnings when the user compiles without -fopenmp. */
#define TFE__PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#include <omp.h>
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
