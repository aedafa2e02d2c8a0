/* tenferro/dyn.h — the dtype-tagged layer: one untyped handle (tfe_dyn, defined in tensor.h)
 * for callers that learn the element kind at run time (CLI, FFI, file readers).
 *
 * A tfe_dyn owns one reference to its storage when st != NULL (release it with
 * tfe_dyn_release) and borrows otherwise. View ops work on the layout alone and need no
 * dispatch; constructors and element access dispatch on the dtype through a switch stamped
 * from the kind table (TFE_KIND_SUFFIXES). Typed <-> dyn conversions are per kind:
 * tfe_view_to_dyn_S, tfe_tensor_to_dyn_S, tfe_dyn_as_view_S, tfe_dyn_as_tensor_S (the last two
 * fail with TFE_ERR_DTYPE when the kinds differ). User kinds carry TFE_DT_CUSTOM: their handles
 * go through the view ops and conversions, not through the dtype switch. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_DYN_H
#define TENFERRO_DYN_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>

/* ---- lifetime ---------------------------------------------------------------------------------- */
TFE_API void tfe_dyn_release(tfe_dyn *d);
/* A second handle on the same elements (one more reference when d owns). */
TFE_API tfe_status tfe_dyn_retain(const tfe_dyn *d, tfe_dyn *out);

/* ---- constructors ---------------------------------------------------------------------------- */
#define TFE__DYN_MAKE(s, DT)                                            \
  case DT: {                                                            \
    tfe_tensor_##s t = {0};                                             \
    TFE_TRY(fill == 0   ? tfe_empty_##s(&t, rank, dims, order)          \
            : fill == 1 ? tfe_zeros_##s(&t, rank, dims, order)          \
                        : tfe_ones_##s(&t, rank, dims, order));         \
    tfe_dyn_adopt__##s(&t, out);                                        \
    return TFE_OK;                                                      \
  }
TFE_API tfe_status tfe_dyn_empty(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order);
TFE_API tfe_status tfe_dyn_zeros(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order);
TFE_API tfe_status tfe_dyn_ones(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order);

/* ---- element access ----------------------------------------------------------------------------- */
/* out / value point to one element of d's C type (double for f64, tfe_maxplus_f32 for ...). */
/* Inlined into a caller, gcc checks every kind's branch against the caller's buffer (a double
 * handed to the c128 branch: a false -Warray-bounds); an empty asm hides which object it is. */
#define TFE__HIDE_OBJECT(p) __asm__("" : "+r"(p))
#define TFE__DYN_GET(s, DT) case DT: return tfe_dyn_get__##s(d, idx, out);
#define TFE__DYN_SET(s, DT) case DT: return tfe_dyn_set__##s(d, idx, value);
TFE_API tfe_status tfe_dyn_get(const tfe_dyn *d, const int64_t *idx, void *out);
TFE_API tfe_status tfe_dyn_set(const tfe_dyn *d, const int64_t *idx, const void *value);
#define TFE__DYN_OP(call)         \
  do {                            \
    TFE_CHECK_NULL(in);           \
    TFE_CHECK_NULL(out);          \
    tfe_layout L;                 \
    TFE_TRY(call);                \
    return tfe__dyn_put(in, &L, out); \
  } while (0)
TFE_API tfe_status tfe_dyn_permute(const tfe_dyn *in, const int *perm, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_reshape(const tfe_dyn *in, int rank, const int64_t *dims, tfe_order order, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_broadcast(const tfe_dyn *in, int rank, const int64_t *dims, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_diagonal(const tfe_dyn *in, int a1, int a2, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_diagonal_map(const tfe_dyn *in, const int *map, int out_rank, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_slice(const tfe_dyn *in, const int64_t *start, const int64_t *stop, const int64_t *step,
                                 tfe_dyn *out);
TFE_API tfe_status tfe_dyn_slice_axis(const tfe_dyn *in, int axis, int64_t start, int64_t stop, int64_t step,
                                      tfe_dyn *out);
TFE_API tfe_status tfe_dyn_select(const tfe_dyn *in, int axis, int64_t index, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_squeeze(const tfe_dyn *in, int axis, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_unsqueeze(const tfe_dyn *in, int axis, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_conj(const tfe_dyn *in, tfe_dyn *out);
TFE_API tfe_status tfe_dyn_split(const tfe_dyn *in, int axis, int nparts, const int64_t *sizes, tfe_dyn *outs);
/* TFE_OK when d may be written (no two indices share an element), else TFE_ERR_OVERLAP. */
TFE_API tfe_status tfe_dyn_check_writable(const tfe_dyn *d);

#endif
#elif !defined(TENFERRO_DYN_BODY) /* bodies */
#define TENFERRO_DYN_BODY
#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>

TFE_INTERNAL tfe_status tfe__dtype_unknown(tfe_dtype dt, const char *where) {
  if (dt == TFE_DT_CUSTOM)
    return TFE_FAIL_AT(TFE_ERR_DTYPE, where, "user-kind handles (TFE_DT_CUSTOM) need the typed API here");
  return TFE_FAIL_AT(TFE_ERR_DTYPE, where, "unknown dtype %d", (int)dt);
}
TFE_API void tfe_dyn_release(tfe_dyn *d) {
  if (!d) return;
  tfe_storage_release(d->st);
  d->st = NULL;
  d->data = NULL;
  d->lay.rank = 0;
}
TFE_API tfe_status tfe_dyn_retain(const tfe_dyn *d, tfe_dyn *out) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(out);
  tfe_storage_retain(d->st);
  *out = *d;
  return TFE_OK;
}
/* fill: 0 uninitialized, 1 the semiring zero, 2 the semiring one. */
TFE_INTERNAL tfe_status tfe__dyn_make(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order,
                                      int fill, const char *where) {
  if (!out) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument 'out' is NULL");
  switch (dt) {
    TFE_KIND_SUFFIXES(TFE__DYN_MAKE)
  default: return tfe__dtype_unknown(dt, where);
  }
}
#undef TFE__DYN_MAKE
TFE_API tfe_status tfe_dyn_empty(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order) {
  return tfe__dyn_make(out, dt, rank, dims, order, 0, __func__);
}
TFE_API tfe_status tfe_dyn_zeros(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order) {
  return tfe__dyn_make(out, dt, rank, dims, order, 1, __func__);
}
TFE_API tfe_status tfe_dyn_ones(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order) {
  return tfe__dyn_make(out, dt, rank, dims, order, 2, __func__);
}
TFE_API tfe_status tfe_dyn_get(const tfe_dyn *d, const int64_t *idx, void *out) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(out);
  TFE_TRY(tfe__rt_access_sync(d, false)); /* pending stream work that writes d */
  TFE__HIDE_OBJECT(out);
  switch (d->dtype) {
    TFE_KIND_SUFFIXES(TFE__DYN_GET)
  default: return tfe__dtype_unknown(d->dtype, __func__);
  }
}
TFE_API tfe_status tfe_dyn_set(const tfe_dyn *d, const int64_t *idx, const void *value) {
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(value);
  TFE_TRY(tfe__rt_access_sync(d, true)); /* pending stream work that reads or writes d */
  TFE__HIDE_OBJECT(value);
  switch (d->dtype) {
    TFE_KIND_SUFFIXES(TFE__DYN_SET)
  default: return tfe__dtype_unknown(d->dtype, __func__);
  }
}
#undef TFE__DYN_GET
#undef TFE__DYN_SET
#undef TFE__HIDE_OBJECT

/* ---- view ops: the layout ops plus ownership -------------------------------------------------- */
/* out gets in's elements with layout L; one new reference unless out == in. */
TFE_INTERNAL tfe_status tfe__dyn_put(const tfe_dyn *in, const tfe_layout *L, tfe_dyn *out) {
  tfe_dyn r = *in;
  r.lay = *L;
  if (out != in) tfe_storage_retain(in->st);
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_dyn_permute(const tfe_dyn *in, const int *perm, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_permute(&in->lay, perm, &L));
}
TFE_API tfe_status tfe_dyn_reshape(const tfe_dyn *in, int rank, const int64_t *dims, tfe_order order, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_reshape(&in->lay, rank, dims, order, &L));
}
TFE_API tfe_status tfe_dyn_broadcast(const tfe_dyn *in, int rank, const int64_t *dims, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_broadcast(&in->lay, rank, dims, &L));
}
TFE_API tfe_status tfe_dyn_diagonal(const tfe_dyn *in, int a1, int a2, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_diagonal(&in->lay, a1, a2, &L));
}
TFE_API tfe_status tfe_dyn_diagonal_map(const tfe_dyn *in, const int *map, int out_rank, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_diagonal_map(&in->lay, map, out_rank, &L));
}
TFE_API tfe_status tfe_dyn_slice(const tfe_dyn *in, const int64_t *start, const int64_t *stop, const int64_t *step,
                                 tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_slice(&in->lay, start, stop, step, &L));
}
TFE_API tfe_status tfe_dyn_slice_axis(const tfe_dyn *in, int axis, int64_t start, int64_t stop, int64_t step,
                                      tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_slice_axis(&in->lay, axis, start, stop, step, &L));
}
TFE_API tfe_status tfe_dyn_select(const tfe_dyn *in, int axis, int64_t index, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_select(&in->lay, axis, index, &L));
}
TFE_API tfe_status tfe_dyn_squeeze(const tfe_dyn *in, int axis, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_squeeze(&in->lay, axis, &L));
}
TFE_API tfe_status tfe_dyn_unsqueeze(const tfe_dyn *in, int axis, tfe_dyn *out) {
  TFE__DYN_OP(tfe_layout_unsqueeze(&in->lay, axis, &L));
}
#undef TFE__DYN_OP
TFE_API tfe_status tfe_dyn_conj(const tfe_dyn *in, tfe_dyn *out) {
  TFE_CHECK_NULL(in);
  TFE_CHECK_NULL(out);
  tfe_dyn r = *in;
  r.conj = !in->conj;
  if (out != in) tfe_storage_retain(in->st);
  *out = r;
  return TFE_OK;
}
TFE_API tfe_status tfe_dyn_split(const tfe_dyn *in, int axis, int nparts, const int64_t *sizes, tfe_dyn *outs) {
  TFE_CHECK_NULL(in);
  TFE_TRY(tfe__split_ok(&in->lay, axis, nparts, sizes, outs, __func__));
  tfe_dyn base = *in; /* outs may alias in: that entry reuses in's reference */
  int64_t at = 0;
  for (int p = 0; p < nparts; p++) {
    if (&outs[p] != in) tfe_storage_retain(base.st);
    outs[p] = base;
    outs[p].lay = tfe__split_part(&base.lay, axis, sizes[p], &at);
  }
  return TFE_OK;
}
TFE_API tfe_status tfe_dyn_check_writable(const tfe_dyn *d) {
  TFE_CHECK_NULL(d);
  return tfe_layout_check_writable(&d->lay);
}
#endif
