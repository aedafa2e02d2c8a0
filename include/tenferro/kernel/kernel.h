/* tenferro/kernel/kernel.h — kernel room: strided copy/permute, fill, map, zip, reduce on the CPU.
 *
 * Table of contents (API page: docs/kernel.md)
 *   tfe_copy_S(dst, src)                 copy into any destination layout (permute, make dense)
 *   tfe_contiguous_S(src, order, out)    new dense tensor holding src
 *   tfe_conj_copy_S, tfe_fill_S, tfe_scale_S, tfe_axpby_S
 *   tfe_map_S / tfe_map_fn_S             unary op (enum tfe_unop) or user function
 *   tfe_zip_S / tfe_zip_fn_S             binary op with numpy broadcasting (enum tfe_binop)
 *   tfe_reduce_S / tfe_reduce_all_S      reductions over any set of axes (enum tfe_redop)
 *   tfe_copy_dyn / tfe_map_dyn / tfe_zip_dyn   the dtype-tagged layer
 * and _Generic front ends tfe_copy(dst, src), tfe_map(...), ... at the end. Tuning knobs:
 * the kernel section of struct tfe_tuning (core/tuning.h, tfe_tuning_get / tfe_tuning_set).
 *
 * Files of the room, in the order they are included (each in both phases):
 *   math.h            math by argument type, wrapping integer arithmetic, internal op codes
 *   check.h           operand checks: shapes, layouts, broadcasting, overlap
 *   policy.h          fresh destinations, per-CPU defaults, thread count
 *   simd_x86.h        register transposes, streamed copies, gathers (bodies only)
 *   plan.h            the loop planner: dimension order, fusion, groups, tiles, tile runner
 *   kernel_tpl.h      per kind: copy_tpl.h, elementwise_tpl.h, map_zip_tpl.h, reduce_tpl.h
 *   dyn.h             the dtype-tagged layer and the op names */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_H
#define TENFERRO_KERNEL_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>

/* ---- operation codes ---------------------------------------------------------------------- */
typedef enum tfe_unop {
  TFE_UN_NEG, TFE_UN_CONJ, TFE_UN_ABS, TFE_UN_REAL, TFE_UN_IMAG, TFE_UN_SQRT, TFE_UN_EXP,
  TFE_UN_LOG, TFE_UN_SIN, TFE_UN_COS, TFE_UN_TANH, TFE_UN_POW, TFE_UN_RECIP, TFE_UN_SQUARE,
  TFE_UN_COUNT_
} tfe_unop;

typedef enum tfe_binop {
  TFE_BIN_ADD, TFE_BIN_SUB, TFE_BIN_MUL, TFE_BIN_DIV, TFE_BIN_MAX, TFE_BIN_MIN, TFE_BIN_COUNT_
} tfe_binop;

typedef enum tfe_redop {
  TFE_RED_SUM,     /* semiring sum (max for max-plus, min for min-plus, ...) */
  TFE_RED_PROD,    /* semiring product */
  TFE_RED_MAX, TFE_RED_MIN, TFE_RED_MEAN, TFE_RED_SUMSQ,
  TFE_RED_NORM1, TFE_RED_NORM2, TFE_RED_NORMINF, TFE_RED_COUNT_
} tfe_redop;

/* Names used in messages ("unknown" outside the enum). */
TFE_API const char *tfe_unop_name(tfe_unop op);
TFE_API const char *tfe_binop_name(tfe_binop op);
TFE_API const char *tfe_redop_name(tfe_redop op);

/* ---- the room's pieces and the per-kind functions (tfe_copy_f64, ...) ---------------------- */
#include <tenferro/kernel/math.h>
#include <tenferro/kernel/check.h>
#include <tenferro/kernel/policy.h>
#include <tenferro/kernel/simd_x86.h>
#include <tenferro/kernel/plan.h>
#define TFE_TEMPLATE <tenferro/kernel/kernel_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#include <tenferro/kernel/dyn.h>

/* ---- _Generic front ends (dispatch on the first view pointer) ------------------------------ */
#define tfe_copy(dst, src) _Generic((dst), TFE_GCASES_ALL(copy, view))(dst, src)
#define tfe_conj_copy(dst, src) _Generic((dst), TFE_GCASES_ALL(conj_copy, view))(dst, src)
#define tfe_contiguous(src, order, out) _Generic((src), TFE_GCASES_ALL(contiguous, view))(src, order, out)
#define tfe_fill(dst, value) _Generic((dst), TFE_GCASES_ALL(fill, view))(dst, value)
#define tfe_scale(y, alpha) _Generic((y), TFE_GCASES_ALL(scale, view))(y, alpha)
#define tfe_axpby(y, a, x, b) _Generic((y), TFE_GCASES_ALL(axpby, view))(y, a, x, b)
#define tfe_map(dst, src, op, param) _Generic((dst), TFE_GCASES_ALL(map, view))(dst, src, op, param)
#define tfe_map_fn(dst, src, fn, ctx) _Generic((dst), TFE_GCASES_ALL(map_fn, view))(dst, src, fn, ctx)
#define tfe_zip(dst, a, b, op) _Generic((dst), TFE_GCASES_ALL(zip, view))(dst, a, b, op)
#define tfe_zip_fn(dst, a, b, fn, ctx) _Generic((dst), TFE_GCASES_ALL(zip_fn, view))(dst, a, b, fn, ctx)
#define tfe_reduce(out, src, op, naxes, axes, alpha, beta) \
  _Generic((out), TFE_GCASES_ALL(reduce, view))(out, src, op, naxes, axes, alpha, beta)
#define tfe_reduce_all(src, op, result) _Generic((src), TFE_GCASES_ALL(reduce_all, view))(src, op, result)

/* ---- the dtype-tagged layer (kernel/dyn.h) -------------------------------------------------- */
/* dst = src for tensors whose kind is known at run time only; kinds must match. */
TFE_API tfe_status tfe_copy_dyn(const tfe_dyn *dst, const tfe_dyn *src);
/* dst = op(src); param points to one value of the kind (the exponent of TFE_UN_POW), or NULL. */
TFE_API tfe_status tfe_map_dyn(const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op, const void *param);
/* dst = a op b with broadcasting; the three kinds must match. */
TFE_API tfe_status tfe_zip_dyn(const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b, tfe_binop op);

#endif
#elif !defined(TENFERRO_KERNEL_BODY) /* bodies */
#define TENFERRO_KERNEL_BODY
#include <tenferro/kernel/math.h>
#include <tenferro/kernel/check.h>
#include <tenferro/kernel/policy.h>
#include <tenferro/kernel/simd_x86.h>
#include <tenferro/kernel/plan.h>
#define TFE_TEMPLATE <tenferro/kernel/kernel_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#include <tenferro/kernel/dyn.h>
#endif
