/* tenferro/scalars.h — the one table of scalar kinds. Adding a kind is one line here, then
 * `make gen` (gen/gen_kinds.py reads this table and writes include/tenferro/gen/).
 *
 * X(suffix, C type, real type, algebra, is_complex, is_float, dtype constant)
 *   algebra: STANDARD (+, *), MAXPLUS (max, +), MINPLUS (min, +), MAXTIMES (max, *)
 *   is_float: an IEEE real or complex kind of the standard algebra (BLAS and LAPACK kinds)
 * Tropical kinds are distinct one-member structs so that _Generic tells them from double;
 * the max-plus zero is -inf, never the most negative finite value. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_SCALARS_H
#define TENFERRO_SCALARS_H

#include <tenferro/core/core.h>

/* The complex kinds' element types: C's float _Complex and double _Complex; in C++ (which has no
 * _Complex) std::complex<float> and std::complex<double>, of the same layout (config.h). */
#ifdef __cplusplus
typedef std::complex<float> tfe_c64;
typedef std::complex<double> tfe_c128;
#else
typedef float _Complex tfe_c64;
typedef double _Complex tfe_c128;
#endif

/* clang-format off */
#define TFE_KINDS(X)                                                                   \
  X(f32,         float,            float,   STANDARD, 0, 1, TFE_DT_F32)                \
  X(f64,         double,           double,  STANDARD, 0, 1, TFE_DT_F64)                \
  X(c64,         tfe_c64,          float,   STANDARD, 1, 1, TFE_DT_C64)                \
  X(c128,        tfe_c128,         double,  STANDARD, 1, 1, TFE_DT_C128)               \
  X(i32,         int32_t,          int32_t, STANDARD, 0, 0, TFE_DT_I32)                \
  X(i64,         int64_t,          int64_t, STANDARD, 0, 0, TFE_DT_I64)                \
  X(maxplus_f32, tfe_maxplus_f32,  float,   MAXPLUS,  0, 0, TFE_DT_MAXPLUS_F32)        \
  X(maxplus_f64, tfe_maxplus_f64,  double,  MAXPLUS,  0, 0, TFE_DT_MAXPLUS_F64)        \
  X(minplus_f32, tfe_minplus_f32,  float,   MINPLUS,  0, 0, TFE_DT_MINPLUS_F32)        \
  X(minplus_f64, tfe_minplus_f64,  double,  MINPLUS,  0, 0, TFE_DT_MINPLUS_F64)        \
  X(maxtimes_f32, tfe_maxtimes_f32, float,  MAXTIMES, 0, 0, TFE_DT_MAXTIMES_F32)       \
  X(maxtimes_f64, tfe_maxtimes_f64, double, MAXTIMES, 0, 0, TFE_DT_MAXTIMES_F64)
/* clang-format on */

/* Algebra codes usable in #if inside templates. CUSTOM: the user supplies the semiring. */
#define TFE_ALG_STANDARD 0
#define TFE_ALG_MAXPLUS 1
#define TFE_ALG_MINPLUS 2
#define TFE_ALG_MAXTIMES 3
#define TFE_ALG_CUSTOM 4

/* Run-time element kinds (the dtype-tagged layer). TFE_DT_CUSTOM marks user kinds. */
typedef enum tfe_dtype {
#define TFE__DT_ENUM(s, T, R, alg, cplx, flt, DT) DT,
  TFE_KINDS(TFE__DT_ENUM)
#undef TFE__DT_ENUM
  TFE_DT_COUNT,
  TFE_DT_CUSTOM = 1000
} tfe_dtype;

typedef enum tfe_algebra {
  TFE_ALGEBRA_STANDARD = TFE_ALG_STANDARD,
  TFE_ALGEBRA_MAXPLUS = TFE_ALG_MAXPLUS,
  TFE_ALGEBRA_MINPLUS = TFE_ALG_MINPLUS,
  TFE_ALGEBRA_MAXTIMES = TFE_ALG_MAXTIMES,
  TFE_ALGEBRA_CUSTOM = TFE_ALG_CUSTOM
} tfe_algebra;

typedef struct tfe_dtype_info {
  const char *name;    /* the suffix: "f64", "maxplus_f32", ... */
  size_t size;         /* bytes per element */
  tfe_algebra algebra;
  bool is_complex, is_float;
  tfe_dtype real;      /* dtype of the real type for standard kinds, itself otherwise */
} tfe_dtype_info;

/* Tropical struct types must exist before the per-kind templates use them. */
typedef struct tfe_maxplus_f32 { float v; } tfe_maxplus_f32;
typedef struct tfe_maxplus_f64 { double v; } tfe_maxplus_f64;
typedef struct tfe_minplus_f32 { float v; } tfe_minplus_f32;
typedef struct tfe_minplus_f64 { double v; } tfe_minplus_f64;
typedef struct tfe_maxtimes_f32 { float v; } tfe_maxtimes_f32;
typedef struct tfe_maxtimes_f64 { double v; } tfe_maxtimes_f64;

#define TFE__REAL_DT_float TFE_DT_F32
#define TFE__REAL_DT_double TFE_DT_F64
#define TFE__REAL_DT_int32_t TFE_DT_I32
#define TFE__REAL_DT_int64_t TFE_DT_I64

TFE_API const tfe_dtype_info *tfe_dtype_get(tfe_dtype dt);
TFE_API const char *tfe_dtype_name(tfe_dtype dt);
/* Look a kind up by its suffix ("f64", "c128", "maxplus_f64"); TFE_DT_COUNT if unknown. */
TFE_API tfe_dtype tfe_dtype_from_name(const char *name);

/* Complex conjugate without promotion to double. */
#define TFE_CONJ(x) _Generic((x), float _Complex: conjf, double _Complex: conj)(x)
#define TFE_CABS(x) _Generic((x), float _Complex: cabsf, double _Complex: cabs)(x)

/* Per-kind semiring operations: tfe_sr_zero_f64() etc. (see scalar_tpl.h). */
#define TFE_TEMPLATE <tenferro/core/semiring_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

#endif
#elif !defined(TENFERRO_SCALARS_BODY) /* bodies */
#define TENFERRO_SCALARS_BODY
#include <complex.h>
#include <math.h>
#include <tenferro/core/core.h>
TFE_API const tfe_dtype_info *tfe_dtype_get(tfe_dtype dt) {
  static const tfe_dtype_info table[] = {
#define TFE__DT_INFO(s, T, R, alg, cplx, flt, DT) \
  {#s, sizeof(T), TFE_ALGEBRA_##alg, cplx, flt, (TFE_ALG_##alg == 0 ? TFE__REAL_DT_##R : DT)},
      TFE_KINDS(TFE__DT_INFO)
#undef TFE__DT_INFO
  };
  return (unsigned)dt < (unsigned)TFE_DT_COUNT ? &table[dt] : NULL;
}
TFE_API const char *tfe_dtype_name(tfe_dtype dt) {
  const tfe_dtype_info *i = tfe_dtype_get(dt);
  return i ? i->name : "unknown";
}
TFE_API tfe_dtype tfe_dtype_from_name(const char *name) {
  for (int d = 0; name && d < (int)TFE_DT_COUNT; d++)
    if (strcmp(tfe_dtype_get((tfe_dtype)d)->name, name) == 0) return (tfe_dtype)d;
  return TFE_DT_COUNT;
}
#define TFE_TEMPLATE <tenferro/core/semiring_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#endif
