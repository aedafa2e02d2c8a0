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
 *   units.h           copies of short common runs as units: their plan and tiles (bodies only)
 *   records.h         copies between r-element records and r streams (AoS <-> SoA; bodies only)
 *   bothruns.h        copies whose short runs share dims: tiles of whole runs on both sides (bodies only)
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

/* ---- the operations as a backend's elementwise slot receives them (prims/backend.h) ---------
 * Every public elementwise entry (typed and dtype-tagged) runs on the backend chosen for its
 * operands (prims/registry.h); where that backend's elementwise slot is not the CPU's, the
 * slot gets this descriptor. Operands are dtype-tagged views of one kind in the backend's
 * memory; scalars point at values of that kind. map_fn / zip_fn (user C functions) always
 * run on the host. */
typedef enum tfe_ew_op {
  TFE_EW_COPY,   /* dst = a (a->conj applies: conj_copy is a copy of a conjugated view) */
  TFE_EW_FILL,   /* dst = *s0 */
  TFE_EW_SCALE,  /* dst = *s0 * dst */
  TFE_EW_AXPBY,  /* dst = *s0 * a + *s1 * dst (semiring operations; *s1 zero: dst not read) */
  TFE_EW_MAP,    /* dst = code(a), code a tfe_unop, *s0 its parameter */
  TFE_EW_ZIP,    /* dst = code(a, b), code a tfe_binop, numpy broadcasting */
  TFE_EW_REDUCE, /* dst = *s0 * code(a over axes) + *s1 * dst, code a tfe_redop (tfe_reduce_S) */
  TFE_EW_ZIPN,   /* dst = code folded over in[0..nin) left to right (2 <= nin <= TFE_EW_MAXIN):
                    acc = in[0] code in[1], then acc = acc code in[k], or in[k] code acc where
                    bit k of flip is set; each input broadcast to dst (numpy), none overlapping
                    dst. One pass for a chain of elementwise products (einsum's executor fuses
                    consecutive steps that sum nothing); a slot may refuse it (TFE_ERR_UNSUPPORTED) */
  TFE_EW_COUNT
} tfe_ew_op;
#define TFE_EW_MAXIN 8
typedef struct tfe_ew_desc {
  tfe_ew_op op;
  int code;                   /* tfe_unop / tfe_binop / tfe_redop, else 0 */
  const tfe_dyn *dst, *a, *b; /* a: COPY, AXPBY, MAP, ZIP, REDUCE; b: ZIP */
  const void *s0, *s1;        /* scalars of the kind (see each op) */
  int naxes;                  /* REDUCE: the axes of a reduced (naxes < 0: all) */
  const int *axes;
  int nin;                    /* ZIPN: the inputs in[0..nin) and the flip bits (see the op) */
  const tfe_dyn *const *in;
  unsigned flip;
} tfe_ew_desc;
TFE_API const char *tfe_ew_op_name(tfe_ew_op op);

/* ---- the room's pieces and the per-kind functions (tfe_copy_f64, ...) ---------------------- */
#include <tenferro/kernel/math.h>
#include <tenferro/kernel/check.h>
#include <tenferro/kernel/policy.h>
#include <tenferro/kernel/simd_x86.h>
#include <tenferro/kernel/plan.h>
#include <tenferro/kernel/units.h>
#include <tenferro/kernel/records.h>
#include <tenferro/kernel/bothruns.h>
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
/* dst = *value (a value of dst's kind). */
TFE_API tfe_status tfe_fill_dyn(const tfe_dyn *dst, const void *value);
/* out = *alpha * reduce(src over axes) + *beta * out (tfe_reduce_S); alpha/beta NULL: one, zero. */
TFE_API tfe_status tfe_reduce_dyn(const tfe_dyn *out, const tfe_dyn *src, tfe_redop op, int naxes, const int *axes,
                                  const void *alpha, const void *beta);
/* The dtype-tagged entries run on the backend chosen from the operands' storage (compute
 * device, memory space: prims/registry.h); views without storage are host memory. */

#endif
#elif !defined(TENFERRO_KERNEL_BODY) /* bodies */
#define TENFERRO_KERNEL_BODY
#include <tenferro/kernel/math.h>
#include <tenferro/kernel/check.h>
#include <tenferro/kernel/policy.h>
#include <tenferro/kernel/simd_x86.h>
#include <tenferro/kernel/plan.h>
#include <tenferro/kernel/units.h>
#include <tenferro/kernel/records.h>
#include <tenferro/kernel/bothruns.h>
/* ---- the backend of an elementwise call (route_tpl.h, dyn.h) ------------------------------ */
/* Defined by the prims room, whose bodies follow this room's. */
TFE_INTERNAL const tfe_prims_backend *tfe__be_for_views(const tfe_prims_backend *explicit_be, int n,
                                                        const char *const *names, const char *where);
TFE_INTERNAL tfe_status tfe__be_select_at(const tfe_prims_backend *explicit_be, int n, const tfe_operand_place *ops,
                                          bool allow_transfer, const tfe_prims_backend **out, tfe_backend_rule *rule,
                                          const char *where);
TFE_SHARED_FN tfe_status tfe__cpu_elementwise(const tfe_prims_backend *be, const tfe_ew_desc *d);
TFE_INTERNAL void tfe__cpu_enroll_ew(tfe_dtype dt, tfe__cpu_ew_fn fn);
/* The backend whose own slot runs a typed call over host views, or NULL when the CPU code of
 * this room does (the common case: one atomic load); *st is set when no backend serves host
 * memory. */
TFE_INTERNAL const tfe_prims_backend *tfe__k_route(const char *where, tfe_status *st) {
  *st = TFE_OK;
  const tfe_prims_backend *be = tfe__be_for_views(NULL, 0, NULL, where);
  if (!be) { *st = tfe__ts.errcode; return NULL; }
  return be->elementwise && be->elementwise != tfe__cpu_elementwise ? be : NULL;
}
#define TFE_TEMPLATE <tenferro/kernel/kernel_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#include <tenferro/kernel/dyn.h>
#endif
