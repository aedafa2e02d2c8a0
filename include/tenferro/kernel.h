/* tenferro/kernel.h — kernel room: strided copy/permute, fill, map, zip, reduce on the CPU.
 *
 * Table of contents (API page: docs/kernel.md)
 *   tfe_copy_S(dst, src)                 copy into any destination layout (permute, make dense)
 *   tfe_contiguous_S(src, order, out)    new dense tensor holding src
 *   tfe_conj_copy_S, tfe_fill_S, tfe_scale_S, tfe_axpby_S
 *   tfe_map_S / tfe_map_fn_S             unary op (enum tfe_unop) or user function
 *   tfe_zip_S / tfe_zip_fn_S             binary op with numpy broadcasting (enum tfe_binop)
 *   tfe_reduce_S / tfe_reduce_all_S      reductions over any set of axes (enum tfe_redop)
 *   tfe_copy_dyn / tfe_map_dyn / tfe_zip_dyn   the dtype-tagged layer
 * and _Generic front ends tfe_copy(dst, src), tfe_map(...), ... at the end.
 *
 * Kind-independent pieces live here: overlap tests and the loop planner that orders, fuses
 * and tiles the dimensions of up to three operands. Per-kind bodies are in kernel_tpl.h. */
#ifndef TENFERRO_KERNEL_H
#define TENFERRO_KERNEL_H

#include <tenferro/tensor.h>

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

TFE_API const char *tfe_unop_name(tfe_unop op) {
  static const char *const n[] = {"neg", "conj", "abs", "real", "imag", "sqrt", "exp", "log",
                                  "sin", "cos", "tanh", "pow", "recip", "square"};
  return (unsigned)op < (unsigned)TFE_UN_COUNT_ ? n[op] : "unknown";
}
TFE_API const char *tfe_binop_name(tfe_binop op) {
  static const char *const n[] = {"add", "sub", "mul", "div", "max", "min"};
  return (unsigned)op < (unsigned)TFE_BIN_COUNT_ ? n[op] : "unknown";
}
TFE_API const char *tfe_redop_name(tfe_redop op) {
  static const char *const n[] = {"sum", "prod", "max", "min", "mean", "sumsq",
                                  "norm1", "norm2", "norminf"};
  return (unsigned)op < (unsigned)TFE_RED_COUNT_ ? n[op] : "unknown";
}

/* ---- layout checks ------------------------------------------------------------------------- */
/* Same rank and dims. */
TFE_INTERNAL tfe_status tfe__same_shape(const tfe_layout *a, const tfe_layout *b, const char *where) {
  if (a->rank != b->rank)
    return tfe__fail(TFE_ERR_SHAPE, where, "rank %d does not match rank %d", a->rank, b->rank);
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return tfe__fail(TFE_ERR_SHAPE, where, "dim %d is %lld, expected %lld", i,
                       (long long)b->dims[i], (long long)a->dims[i]);
  return TFE_OK;
}

/* Whether two distinct indices of L may address the same element. Conservative: sorting the
 * dims by |stride|, each stride must exceed the span of all smaller ones (which proves the
 * elements distinct); exotic interleavings that pass no such test are refused. */
TFE_INTERNAL bool tfe__layout_may_self_overlap(const tfe_layout *L) {
  int64_t s[TFE_MAX_RANK], n[TFE_MAX_RANK];
  int k = 0;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] == 0) return false; /* no elements at all */
    if (L->dims[i] == 1) continue;
    int64_t a = L->strides[i] < 0 ? -L->strides[i] : L->strides[i];
    int j = k++; /* insertion sort by |stride| */
    while (j > 0 && s[j - 1] > a) { s[j] = s[j - 1]; n[j] = n[j - 1]; j--; }
    s[j] = a; n[j] = L->dims[i];
  }
  int64_t span = 0;
  for (int i = 0; i < k; i++) {
    if (s[i] <= span) return true;
    span += (n[i] - 1) * s[i];
  }
  return false;
}

TFE_INTERNAL int64_t tfe__gcd(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}

/* Whether writing dst element by element while reading src (same dims, src possibly
 * broadcast by zero strides) can read a value already overwritten. False when the byte
 * ranges are disjoint, when dst and src address the same element at every index (in-place
 * elementwise), or when a common stride lattice keeps their elements apart. */
TFE_INTERNAL bool tfe__views_conflict(const void *dp, const tfe_layout *dl, const void *sp,
                                      const tfe_layout *sl, size_t esz) {
  int64_t dlo, dhi, slo, shi;
  if (!tfe_layout_extent(dl, &dlo, &dhi) || !tfe_layout_extent(sl, &slo, &shi)) return false;
  intptr_t d0 = (intptr_t)dp, s0 = (intptr_t)sp, e = (intptr_t)esz;
  intptr_t da = d0 + (intptr_t)dlo * e, db = d0 + (intptr_t)(dhi + 1) * e;
  intptr_t sa = s0 + (intptr_t)slo * e, sb = s0 + (intptr_t)(shi + 1) * e;
  if (db <= sa || sb <= da) return false;
  bool same = d0 + (intptr_t)dl->offset * e == s0 + (intptr_t)sl->offset * e && dl->rank == sl->rank;
  for (int i = 0; same && i < dl->rank; i++)
    if (dl->dims[i] > 1 && dl->strides[i] != sl->strides[i]) same = false;
  if (same) return false;
  int64_t g = 0;
  for (int i = 0; i < dl->rank; i++) if (dl->dims[i] > 1) g = tfe__gcd(g, dl->strides[i] * (int64_t)esz);
  for (int i = 0; i < sl->rank; i++) if (sl->dims[i] > 1) g = tfe__gcd(g, sl->strides[i] * (int64_t)esz);
  if (g == 0) return true; /* both single elements, and their bytes intersect */
  int64_t r = (int64_t)((d0 + (intptr_t)dl->offset * e) - (s0 + (intptr_t)sl->offset * e)) % g;
  if (r < 0) r += g;
  return !(r >= (int64_t)esz && g - r >= (int64_t)esz);
}

/* A valid layout (rank, non-negative dims, no overflow) with data unless it is empty. */
TFE_INTERNAL tfe_status tfe__check_layout(const tfe_layout *L, const void *data, const char *where,
                                          const char *name, int64_t *count) {
  if (L->rank < 0 || L->rank > TFE_MAX_RANK)
    return tfe__fail(TFE_ERR_RANK, where, "%s rank %d outside [0, %d]", name, L->rank, TFE_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] < 0)
      return tfe__fail(TFE_ERR_INVALID, where, "%s dim %d is negative (%lld)", name, i,
                       (long long)L->dims[i]);
    if (!tfe__mul_ok(n, L->dims[i], &n))
      return tfe__fail(TFE_ERR_OVERFLOW, where, "%s element count overflows at dim %d", name, i);
  }
  if (n > 0 && !data) return tfe__fail(TFE_ERR_NULL, where, "%s data is NULL", name);
  if (count) *count = n;
  return TFE_OK;
}
/* A written view must also have distinct elements. */
TFE_INTERNAL tfe_status tfe__check_dst(const tfe_layout *L, const void *data, const char *where,
                                       int64_t *count) {
  TFE_TRY(tfe__check_layout(L, data, where, "destination", count));
  if (tfe__layout_may_self_overlap(L))
    return tfe__fail(TFE_ERR_OVERLAP, where,
                     "destination elements overlap (zero or interleaved strides)");
  return TFE_OK;
}

#define TFE_TEMPLATE <tenferro/kernel_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- _Generic front ends ------------------------------------------------------------------ */
#define tfe_copy(dst, src) _Generic((dst), TFE_GCASES_ALL(copy, view))(dst, src)
#define tfe_contiguous(src, order, out) _Generic((src), TFE_GCASES_ALL(contiguous, view))(src, order, out)

#endif
