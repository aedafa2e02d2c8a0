/* tenferro/kernel/dyn.h — the dtype-tagged layer of the kernel room (tfe_copy_dyn,
 * tfe_map_dyn, tfe_zip_dyn: tensors whose kind is known at run time only) and the names of
 * the op codes used in messages. Prototypes in kernel.h; bodies here. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_DYN_H
#define TENFERRO_KERNEL_DYN_H
#include <tenferro/kernel/kernel.h>
#endif
#elif !defined(TENFERRO_KERNEL_DYN_BODY) /* bodies */
#define TENFERRO_KERNEL_DYN_BODY
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

/* ---- the dtype-tagged layer --------------------------------------------------------------- */
TFE_INTERNAL tfe_status tfe__dyn_same(const tfe_dyn *a, const tfe_dyn *b, const char *where,
                                      const char *an, const char *bn) {
  if (!a || !b) return tfe__fail(TFE_ERR_NULL, where, "argument '%s' is NULL", !a ? an : bn);
  if (a->dtype != b->dtype)
    return tfe__fail(TFE_ERR_DTYPE, where, "%s is %s but %s is %s", an, tfe_dtype_name(a->dtype),
                     bn, tfe_dtype_name(b->dtype));
  return TFE_OK;
}
TFE_API tfe_status tfe_copy_dyn(const tfe_dyn *dst, const tfe_dyn *src) {
  TFE_TRY(tfe__dyn_same(dst, src, __func__, "destination", "source"));
  switch (dst->dtype) {
#define TFE__DYN_COPY(s, T, R, alg, cplx, flt, DT) \
  case DT: { tfe_view_##s d = {(T *)dst->data, dst->lay, dst->conj}, x = {(T *)src->data, src->lay, src->conj}; \
             return tfe_copy_##s(&d, &x); }
    TFE_KINDS(TFE__DYN_COPY)
#undef TFE__DYN_COPY
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  }
}
TFE_API tfe_status tfe_map_dyn(const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op, const void *param) {
  TFE_TRY(tfe__dyn_same(dst, src, __func__, "destination", "source"));
  switch (dst->dtype) {
#define TFE__DYN_MAP(s, T, R, alg, cplx, flt, DT) \
  case DT: { tfe_view_##s d = {(T *)dst->data, dst->lay, dst->conj}, x = {(T *)src->data, src->lay, src->conj}; \
             T p = param ? *(const T *)param : tfe_sr_one_##s(); return tfe_map_##s(&d, &x, op, p); }
    TFE_KINDS(TFE__DYN_MAP)
#undef TFE__DYN_MAP
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  }
}
TFE_API tfe_status tfe_zip_dyn(const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b, tfe_binop op) {
  TFE_TRY(tfe__dyn_same(dst, a, __func__, "destination", "first input"));
  TFE_TRY(tfe__dyn_same(dst, b, __func__, "destination", "second input"));
  switch (dst->dtype) {
#define TFE__DYN_ZIP(s, T, R, alg, cplx, flt, DT) \
  case DT: { tfe_view_##s d = {(T *)dst->data, dst->lay, dst->conj}, x = {(T *)a->data, a->lay, a->conj}, \
             y = {(T *)b->data, b->lay, b->conj}; return tfe_zip_##s(&d, &x, &y, op); }
    TFE_KINDS(TFE__DYN_ZIP)
#undef TFE__DYN_ZIP
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  }
}
#endif
