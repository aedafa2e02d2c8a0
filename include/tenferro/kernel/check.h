/* tenferro/kernel/check.h — operand checks of the kernel room: shapes, layouts, broadcasting
 * and overlap between a written view and the views it reads. Internal helpers only (bodies),
 * used by the kernels and by other rooms' bodies (tfe__same_shape, tfe__check_layout). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_CHECK_H
#define TENFERRO_KERNEL_CHECK_H
#include <tenferro/tensor/tensor.h>
#endif
#elif !defined(TENFERRO_KERNEL_CHECK_BODY) /* bodies */
#define TENFERRO_KERNEL_CHECK_BODY

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

/* src viewed with dst's dims by numpy's rule: trailing dims align, a dim of 1 (or a missing
 * leading dim) repeats with stride 0. */
TFE_INTERNAL tfe_status tfe__broadcast(const tfe_layout *src, const tfe_layout *dst, tfe_layout *out,
                                       const char *where, const char *name) {
  if (src->rank > dst->rank)
    return tfe__fail(TFE_ERR_SHAPE, where, "cannot broadcast %s of rank %d to rank %d", name,
                     src->rank, dst->rank);
  int lead = dst->rank - src->rank;
  out->rank = dst->rank;
  out->offset = src->offset;
  for (int i = 0; i < dst->rank; i++) {
    out->dims[i] = dst->dims[i];
    if (i < lead) { out->strides[i] = 0; continue; }
    int64_t n = src->dims[i - lead];
    if (n == dst->dims[i]) out->strides[i] = src->strides[i - lead];
    else if (n == 1) out->strides[i] = 0;
    else
      return tfe__fail(TFE_ERR_SHAPE, where,
                       "cannot broadcast %s dim %d (size %lld) to size %lld", name, i - lead,
                       (long long)n, (long long)dst->dims[i]);
  }
  return TFE_OK;
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
  if (!tfe__layout_distinct(L))
    return tfe__fail(TFE_ERR_OVERLAP, where, "destination elements overlap (two indices address one element)");
  return TFE_OK;
}
#endif
