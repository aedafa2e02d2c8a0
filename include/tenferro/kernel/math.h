/* tenferro/kernel/math.h — the scalar helpers that the kernel templates share: math by
 * argument type, wrapping integer arithmetic, and the internal codes of reduction folds and
 * of the ops that the register transpose can apply. Macros and enums only (no bodies); the
 * math macros serve other rooms' templates too (ad). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_MATH_H
#define TENFERRO_KERNEL_MATH_H
#include <tenferro/config.h>

/* Real and complex math by argument type (no <tgmath.h>: it would redefine the user's sqrt). */
#define TFE__M(name, x) \
  _Generic((x), float: name##f, double: name, float _Complex: c##name##f, double _Complex: c##name)(x)
#define TFE__MPOW(x, y) \
  _Generic((x), float: powf, double: pow, float _Complex: cpowf, double _Complex: cpow)(x, y)
#define TFE__CREAL(x) _Generic((x), float _Complex: crealf, double _Complex: creal)(x)
#define TFE__CIMAG(x) _Generic((x), float _Complex: cimagf, double _Complex: cimag)(x)
#define TFE__MABS(x) \
  _Generic((x), float: fabsf, double: fabs, float _Complex: cabsf, double _Complex: cabs)(x)

/* Integer arithmetic of a template's kind TFE_T wraps (two's complement, like numpy)
 * instead of overflowing. */
#define TFE__WADD(a, b) ((TFE_T)((uint64_t)(a) + (uint64_t)(b)))
#define TFE__WSUB(a, b) ((TFE_T)((uint64_t)(a) - (uint64_t)(b)))
#define TFE__WMUL(a, b) ((TFE_T)((uint64_t)(a) * (uint64_t)(b)))
#define TFE__WNEG(a) ((TFE_T)(0 - (uint64_t)(a)))

/* Reductions: folds and the transform applied before folding. */
enum { TFE__KF_ADD, TFE__KF_MUL, TFE__KF_MAX, TFE__KF_MIN };
enum { TFE__KP_NONE, TFE__KP_ABS, TFE__KP_ABS2 };

/* Ops that run inside the register transpose (f64): identity (conj, real), neg, square,
 * and zip's add, sub, mul, div with the transposed input on either side. */
enum { TFE__KFU_NONE, TFE__KFU_ID, TFE__KFU_NEG, TFE__KFU_SQUARE, TFE__KFU_ADD, TFE__KFU_SUB,
       TFE__KFU_MUL, TFE__KFU_DIV };

#endif
#elif !defined(TENFERRO_KERNEL_MATH_BODY) /* bodies: none */
#define TENFERRO_KERNEL_MATH_BODY
#endif
