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
#define TFE__API_ON __attribute__((visibility("default")))
#elif defined(TFE_HEADER)
#define TFE__IMPL 0
#define TFE__API_ON extern
#else
#define TFE__IMPL 1
#define TFE__API_ON static inline
#endif
#define TFE_INTERNAL static inline
/* A public function: TFE__API_ON for what this unit compiles; `extern` for a room or kind left
 * out by an opt-out (below): the umbrella and gen/foreach_kind.h switch TFE__PART to OFF around
 * the declarations of what is left out and skip its bodies, so that calling it is a link error
 * (an undefined reference that names it) rather than a warning about a static function never
 * defined. */
#define TFE__API_OFF extern
#define TFE__PART ON
#define TFE_API TFE_CAT(TFE__API_, TFE__PART)

/* ---- opt-outs for size (default and implementation modes; docs/linkage.md) -----------------
 * Rooms: define TFE_NO_AD, TFE_NO_LINALG, TFE_NO_EINSUM or TFE_NO_IO before the include. ad
 * needs linalg and einsum, so leaving either out leaves ad out too. Kinds: TFE_NO_KIND_<S>
 * (TFE_NO_KIND_C64, TFE_NO_KIND_MAXPLUS_F32, ...) leaves one kind out; TFE_ONLY_KIND_<S> (one
 * or more) keeps only those (gen/optouts.h, generated from the kind table). Declarations stay
 * (types, prototypes, front ends; every unit has the same process-state layout); the bodies of
 * what is left out are not parsed; calling it is a link error. linalg needs every float kind
 * (f32, f64, c64, c128): leaving one out needs TFE_NO_LINALG too. The dtype-tagged layer
 * of the tensor room (tfe_dyn_*) refuses a kind left out as an unknown dtype; the other rooms' dyn
 * functions may call every kind (a link error names what is missing). */
#if (defined(TFE_NO_LINALG) || defined(TFE_NO_EINSUM)) && !defined(TFE_NO_AD)
#define TFE_NO_AD
#endif
#include <tenferro/gen/optouts.h>
#if defined(TFE_IMPLEMENTATION) && TFE__KINDS_LEFT_OUT
#error "tenferro: kind opt-outs are for the default mode (the library's dtype-tagged layer uses every kind)"
#endif
#if !defined(TFE_NO_LINALG) && !TFE__FLOAT_KINDS_ON
#error "tenferro: linalg needs the kinds f32, f64, c64 and c128: keep them, or leave linalg out (TFE_NO_LINALG)"
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
/* A function whose address is its identity (the CPU backend's slots, compared by the engines):
 * one weak definition shared by every unit of a program in the default mode, like the state
 * (each unit's static copy would have its own address: a slot set up by one unit would look
 * foreign to another); file-local in the implementation unit. Its name carries TFE_MAX_RANK. */
#if defined(TFE_IMPLEMENTATION)
#define TFE_SHARED_FN static
#else
#define TFE_SHARED_FN __attribute__((weak))
#endif
#ifdef __cplusplus
#define TFE_THREAD_LOCAL thread_local
#else
#define TFE_THREAD_LOCAL _Thread_local
#endif

/* ---- C++ (declarations mode; docs/linkage.md) -------------------------------------------------
 * The declarations are C11. For C++ they need: complex kinds as std::complex<float> and
 * std::complex<double> (tfe_c64 and tfe_c128 in core/kinds.h: the same layout as float _Complex
 * and double _Complex, and the same registers when passed by value on x86-64 and AArch64), the
 * C11 atomic spellings of a few structs as std::atomic (what C++23's <stdatomic.h> does:
 * std::atomic<T> has the layout of _Atomic T with gcc and clang), and C++ overloads in place of
 * the _Generic front ends (gen/cxx.h). The standard headers are included here, before the
 * umbrella opens its extern "C" block. */
#ifdef __cplusplus
#include <atomic>
#include <complex>
#if __cplusplus > 202002L && defined(__has_include)
#if __has_include(<stdatomic.h>)
#include <stdatomic.h> /* C++23: _Atomic(T) and the atomic_* names */
#endif
#endif
#ifndef _Atomic
#ifdef _LIBCPP_VERSION
#define _Atomic(_Tp) ::std::atomic<_Tp> /* spelled as libc++'s <stdatomic.h> spells it */
#else
#define _Atomic(_Tp) std::atomic<_Tp> /* spelled as libstdc++'s <stdatomic.h> spells it */
#endif
using std::atomic_bool;
using std::atomic_flag;
using std::atomic_int;
using std::atomic_long;
using std::atomic_size_t;
using std::atomic_uint;
using std::atomic_ulong;
/* Before C++23, clang's C <stdatomic.h> would declare the same names again (as C11 _Atomic
 * types) when a room header includes it: mark it as included. */
#ifndef __CLANG_STDATOMIC_H
#define __CLANG_STDATOMIC_H
#endif
#endif
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
