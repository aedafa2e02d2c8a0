/* tenferro/tensor/tensor.h — the tensor room: layouts, reference-counted storage, typed views and
 * owning tensors (stamped per kind from tensor_tpl.h), and the dtype-tagged handle.
 *
 *   layout.h     tfe_layout, tfe_order, tfe_layout_* (check, dense, permute, reshape, broadcast,
 *                diagonal, slice, select, squeeze, unsqueeze, split)
 *   storage.h    tfe_memspace, tfe_storage, tfe_storage_new / wrap / retain / release
 *   overlap.h    tfe_overlap, tfe_layout_overlap / self_overlap / check_writable
 *   tensor_tpl.h tfe_view_S, tfe_tensor_S, empty / zeros / ones / full / wrap / get / set (per kind)
 *   view_tpl.h   the zero-copy view operations on typed views (per kind)
 *   dyn.h        tfe_dyn, the dtype-tagged handle and its front ends
 *
 * A view is {data, layout, conj}: element (i0, ..., ik) lives at
 *   data[layout.offset + i0*strides[0] + ... + ik*strides[k]]
 * Strides are signed element counts: 0 broadcasts, negative reverses. A tensor is a view plus
 * a counted reference to the storage that owns the memory. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_TENSOR_H
#define TENFERRO_TENSOR_H
#include <tenferro/core/kinds.h>
#include <tenferro/gen/generic.h>
#endif
#endif
#include <tenferro/tensor/layout.h>
#include <tenferro/tensor/storage.h>
#include <tenferro/tensor/overlap.h>
#if !TFE__BODY_PHASE
#ifndef TENFERRO_TENSOR_TOC_H
#define TENFERRO_TENSOR_TOC_H
/* ---- the dtype-tagged handle -------------------------------------------------------------------- */
typedef struct tfe_dyn {
  tfe_dtype dtype;
  void *data;
  tfe_layout lay;
  bool conj;
  tfe_storage *st; /* NULL for a non-owning view */
} tfe_dyn;

#define TFE_TEMPLATE <tenferro/tensor/tensor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/tensor/view_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- _Generic front ends ------------------------------------------------------------------------
 * tfe_zeros(&t, ...) is tfe_zeros_f64(&t, ...) for a tfe_tensor_f64 *t; view ops accept a view
 * or a tensor pointer (tfe_permute(&t, ...) on a tensor is tfe_tensor_permute_S). A pointer of
 * any other type is a compile error ("'_Generic' selector of type 'X *' is not compatible with
 * any association"). */
#define TFE__GVT(fn, x) _Generic((x), TFE_GCASES_ALL(fn, view), TFE_GCASES_ALL(tensor_##fn, tensor))
#define tfe_empty(out, rank, dims, order) _Generic((out), TFE_GCASES_ALL(empty, tensor))(out, rank, dims, order)
#define tfe_zeros(out, rank, dims, order) _Generic((out), TFE_GCASES_ALL(zeros, tensor))(out, rank, dims, order)
#define tfe_ones(out, rank, dims, order) _Generic((out), TFE_GCASES_ALL(ones, tensor))(out, rank, dims, order)
#define tfe_full(out, rank, dims, order, value) \
  _Generic((out), TFE_GCASES_ALL(full, tensor))(out, rank, dims, order, value)
#define tfe_release(t) _Generic((t), TFE_GCASES_ALL(tensor_release, tensor))(t)
#define tfe_retain(t, out) _Generic((t), TFE_GCASES_ALL(tensor_retain, tensor))(t, out)
#define tfe_wrap(out, buf, buflen, rank, dims, strides, offset, order) \
  _Generic((out), TFE_GCASES_ALL(wrap, view), TFE_GCASES_ALL(tensor_wrap, tensor))( \
      out, buf, buflen, rank, dims, strides, offset, order)
#define tfe_from_buffer(out, buf, buflen, rank, dims, strides, offset, order) \
  _Generic((out), TFE_GCASES_ALL(from_buffer, tensor))(out, buf, buflen, rank, dims, strides, offset, order)
#define tfe_get(v, idx, out) _Generic((v), TFE_GCASES_ALL(get, view))(v, idx, out)
#define tfe_set(v, idx, value) _Generic((v), TFE_GCASES_ALL(set, view))(v, idx, value)
#define tfe_permute(in, perm, out) TFE__GVT(permute, in)(in, perm, out)
#define tfe_reshape(in, rank, dims, order, out) TFE__GVT(reshape, in)(in, rank, dims, order, out)
#define tfe_broadcast(in, rank, dims, out) TFE__GVT(broadcast, in)(in, rank, dims, out)
#define tfe_diagonal(in, a1, a2, out) TFE__GVT(diagonal, in)(in, a1, a2, out)
#define tfe_diagonal_map(in, map, out_rank, out) TFE__GVT(diagonal_map, in)(in, map, out_rank, out)
#define tfe_slice(in, start, stop, step, out) TFE__GVT(slice, in)(in, start, stop, step, out)
#define tfe_slice_axis(in, axis, start, stop, step, out) TFE__GVT(slice_axis, in)(in, axis, start, stop, step, out)
#define tfe_select(in, axis, index, out) TFE__GVT(select, in)(in, axis, index, out)
#define tfe_squeeze(in, axis, out) TFE__GVT(squeeze, in)(in, axis, out)
#define tfe_unsqueeze(in, axis, out) TFE__GVT(unsqueeze, in)(in, axis, out)
#define tfe_conj(in, out) TFE__GVT(conj, in)(in, out)
#define tfe_split(in, axis, nparts, sizes, outs) TFE__GVT(split, in)(in, axis, nparts, sizes, outs)
#define tfe_views_overlap(a, b, res) _Generic((a), TFE_GCASES_ALL(views_overlap, view))(a, b, res)
#define tfe_self_overlap(v, res) _Generic((v), TFE_GCASES_ALL(self_overlap, view))(v, res)
#define tfe_check_writable(v) _Generic((v), TFE_GCASES_ALL(check_writable, view))(v)
#define tfe_dyn_as(d, out) _Generic((out), TFE_GCASES_ALL(dyn_as_view, view), TFE_GCASES_ALL(dyn_as_tensor, tensor))(d, out)
#define tfe_to_dyn(x, out) _Generic((x), TFE_GCASES_ALL(view_to_dyn, view), TFE_GCASES_ALL(tensor_to_dyn, tensor))(x, out)

#include <tenferro/tensor/dyn.h>

#endif
#elif !defined(TENFERRO_TENSOR_BODY) /* bodies */
#define TENFERRO_TENSOR_BODY
#define TFE_TEMPLATE <tenferro/tensor/tensor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/tensor/view_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#include <tenferro/tensor/dyn.h>
#endif
