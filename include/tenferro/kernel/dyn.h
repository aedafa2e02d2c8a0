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
/* Every kind's CPU code in the CPU backend's elementwise slot (the dtype-tagged entries reach
 * any kind through it). */
TFE_INTERNAL void tfe__k_enroll_all(void) {
#define TFE__K_ENROLL(s, T, R, alg, cplx, flt, DT) tfe__cpu_enroll_ew(DT, tfe_k_ew_call__##s);
  TFE_KINDS_ON(TFE__K_ENROLL)
#undef TFE__K_ENROLL
}
/* Runs d on the backend chosen from the storage of its n operands (names for messages). */
TFE_INTERNAL tfe_status tfe__k_dyn_run(const tfe_ew_desc *d, int n, const tfe_dyn *const *ops,
                                       const char *const *names, const char *where) {
  tfe_operand_place pl[3];
  for (int k = 0; k < n; k++) { pl[k].name = names[k]; pl[k].st = ops[k]->st; }
  const tfe_prims_backend *be = NULL;
  TFE_TRY(tfe__be_select_at(NULL, n, pl, false, &be, NULL, where));
  if (!be->elementwise)
    return tfe__fail(TFE_ERR_UNSUPPORTED, where, "backend '%s' has no elementwise slot", be->name);
  tfe__k_enroll_all();
  return be->elementwise(be, d);
}
TFE_API tfe_status tfe_copy_dyn(const tfe_dyn *dst, const tfe_dyn *src) {
  TFE_TRY(tfe__dyn_same(dst, src, __func__, "destination", "source"));
  tfe_ew_desc d = {TFE_EW_COPY, 0, dst, src, NULL, NULL, NULL, 0, NULL, 0, NULL, 0};
  return tfe__k_dyn_run(&d, 2, (const tfe_dyn *[]){dst, src}, (const char *[]){"destination", "source"}, __func__);
}
TFE_API tfe_status tfe_map_dyn(const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op, const void *param) {
  TFE_TRY(tfe__dyn_same(dst, src, __func__, "destination", "source"));
  tfe_ew_desc d = {TFE_EW_MAP, (int)op, dst, src, NULL, param, NULL, 0, NULL, 0, NULL, 0};
  return tfe__k_dyn_run(&d, 2, (const tfe_dyn *[]){dst, src}, (const char *[]){"destination", "source"}, __func__);
}
TFE_API tfe_status tfe_zip_dyn(const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b, tfe_binop op) {
  TFE_TRY(tfe__dyn_same(dst, a, __func__, "destination", "first input"));
  TFE_TRY(tfe__dyn_same(dst, b, __func__, "destination", "second input"));
  tfe_ew_desc d = {TFE_EW_ZIP, (int)op, dst, a, b, NULL, NULL, 0, NULL, 0, NULL, 0};
  return tfe__k_dyn_run(&d, 3, (const tfe_dyn *[]){dst, a, b},
                        (const char *[]){"destination", "first input", "second input"}, __func__);
}
TFE_API tfe_status tfe_fill_dyn(const tfe_dyn *dst, const void *value) {
  TFE_CHECK_NULL(dst);
  TFE_CHECK_NULL(value);
  tfe_ew_desc d = {TFE_EW_FILL, 0, dst, NULL, NULL, value, NULL, 0, NULL, 0, NULL, 0};
  return tfe__k_dyn_run(&d, 1, (const tfe_dyn *[]){dst}, (const char *[]){"destination"}, __func__);
}
TFE_API tfe_status tfe_reduce_dyn(const tfe_dyn *out, const tfe_dyn *src, tfe_redop op, int naxes, const int *axes,
                                  const void *alpha, const void *beta) {
  TFE_TRY(tfe__dyn_same(out, src, __func__, "output", "source"));
  tfe_ew_desc d = {TFE_EW_REDUCE, (int)op, out, src, NULL, alpha, beta, naxes, axes, 0, NULL, 0};
  return tfe__k_dyn_run(&d, 2, (const tfe_dyn *[]){out, src}, (const char *[]){"output", "source"}, __func__);
}
TFE_API const char *tfe_ew_op_name(tfe_ew_op op) {
  static const char *const n[] = {"copy", "fill", "scale", "axpby", "map", "zip", "reduce", "zipn"};
  return (unsigned)op < (unsigned)TFE_EW_COUNT ? n[op] : "unknown";
}
#endif
