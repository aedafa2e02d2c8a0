/* tests/test_views_common.h — kind-independent helpers of the view-op tests: random layouts and
 * the explicit index maps (the reference every view op is compared against). */
#ifndef TFE_TEST_VIEWS_COMMON_H
#define TFE_TEST_VIEWS_COMMON_H
#include "testutil.h"

#define TV_MAXNUMEL 4096

typedef void (*tv_map_fn)(const void *ctx, const int64_t *oidx, int64_t *iidx);

static inline int64_t tv_numel(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int k = 0; k < rank; k++) n *= dims[k];
  return n;
}
/* Next index in column-major order. */
static inline void tv_odometer(int rank, const int64_t *dims, int64_t *idx) {
  for (int k = 0; k < rank; k++) {
    if (++idx[k] < dims[k]) return;
    idx[k] = 0;
  }
}
/* Shift the offset so that the lowest address is 0 (plus a little slack); returns the buffer
 * length the layout needs. */
static inline int64_t tv_fit_offset(tfe_layout *L) {
  int64_t lo = 0, hi = -1;
  L->offset = 0;
  if (!tfe_layout_extent(L, &lo, &hi)) return 1;
  L->offset = -lo;
  return hi - lo + 1;
}
static inline void tv_rand_perm(tu_rng *r, int n, int *perm) {
  for (int k = 0; k < n; k++) perm[k] = k;
  for (int k = n - 1; k > 0; k--) { int j = (int)tu_int(r, 0, k), t = perm[k]; perm[k] = perm[j]; perm[j] = t; }
}
/* Dense strides over a random axis order, random signs. */
static inline void tv_dense_strides(tu_rng *r, tfe_layout *L) {
  int perm[TFE_MAX_RANK];
  tv_rand_perm(r, L->rank, perm);
  int64_t s = 1;
  for (int k = 0; k < L->rank; k++) {
    int a = perm[k];
    L->strides[a] = tu_int(r, 0, 3) == 0 ? -s : s;
    s *= L->dims[a] > 0 ? L->dims[a] : 1;
  }
}
/* Random layout: rank 0..maxrank (sometimes 20..30 with tiny dims), dims 0..4 with many 1s,
 * strides in [-6, 6] with zeros, or dense-permuted strides. At most TV_MAXNUMEL elements. */
static inline void tv_rand_layout(tu_rng *r, tfe_layout *L, int64_t *len, int maxrank) {
  memset(L, 0, sizeof *L);
  bool huge = tu_int(r, 0, 40) == 0;
  L->rank = huge ? (int)tu_int(r, 20, 30) : (int)tu_int(r, 0, maxrank);
  for (int k = 0; k < L->rank; k++) {
    int64_t u = tu_int(r, 0, 19);
    L->dims[k] = huge ? (u < 16 ? 1 : 2) : u == 0 ? 0 : u < 6 ? 1 : tu_int(r, 2, 4);
  }
  while (tv_numel(L->rank, L->dims) > TV_MAXNUMEL)
    for (int k = 0; k < L->rank; k++) if (L->dims[k] > 1) { L->dims[k]--; break; }
  if (tu_int(r, 0, 2) == 0) tv_dense_strides(r, L);
  else
    for (int k = 0; k < L->rank; k++) L->strides[k] = tu_int(r, 0, 9) == 0 ? 0 : tu_int(r, -6, 6);
  *len = tv_fit_offset(L) + tu_int(r, 0, 2);
}

/* ---- index maps: output index -> input index --------------------------------------------------- */
typedef struct { int rank; int perm[TFE_MAX_RANK]; } tv_perm_ctx;
static inline void tv_map_perm(const void *c, const int64_t *o, int64_t *i) {
  const tv_perm_ctx *p = (const tv_perm_ctx *)c;
  for (int k = 0; k < p->rank; k++) i[p->perm[k]] = o[k];
}

typedef struct { tfe_layout in; int rank; int64_t dims[TFE_MAX_RANK]; tfe_order order; } tv_reshape_ctx;
static inline int64_t tv_ravel(int rank, const int64_t *dims, const int64_t *idx, tfe_order order) {
  int64_t lin = 0;
  for (int k = 0; k < rank; k++) {
    int a = order == TFE_COLMAJOR ? rank - 1 - k : k; /* most significant first */
    lin = lin * dims[a] + idx[a];
  }
  return lin;
}
static inline void tv_unravel(int rank, const int64_t *dims, int64_t lin, int64_t *idx, tfe_order order) {
  for (int k = 0; k < rank; k++) {
    int a = order == TFE_COLMAJOR ? k : rank - 1 - k; /* least significant first */
    idx[a] = dims[a] ? lin % dims[a] : 0;
    lin = dims[a] ? lin / dims[a] : 0;
  }
}
static inline void tv_map_reshape(const void *c, const int64_t *o, int64_t *i) {
  const tv_reshape_ctx *p = (const tv_reshape_ctx *)c;
  tv_unravel(p->in.rank, p->in.dims, tv_ravel(p->rank, p->dims, o, p->order), i, p->order);
}
static inline int64_t tv_addr(const tfe_layout *L, const int64_t *idx) {
  int64_t a = L->offset;
  for (int k = 0; k < L->rank; k++) a += idx[k] * L->strides[k];
  return a;
}
/* Brute force: is the map new index -> address affine (so that strides exist)? */
static inline bool tv_reshape_possible(const tv_reshape_ctx *p) {
  int64_t n = tv_numel(p->rank, p->dims);
  if (n == 0) return true;
  int64_t o[TFE_MAX_RANK] = {0}, i[TFE_MAX_RANK], t[TFE_MAX_RANK];
  tv_map_reshape(p, o, i);
  int64_t a0 = tv_addr(&p->in, i);
  for (int k = 0; k < p->rank; k++) {
    t[k] = 0;
    if (p->dims[k] < 2) continue;
    o[k] = 1;
    tv_map_reshape(p, o, i);
    t[k] = tv_addr(&p->in, i) - a0;
    o[k] = 0;
  }
  for (int64_t e = 0; e < n; e++) {
    tv_map_reshape(p, o, i);
    int64_t want = a0;
    for (int k = 0; k < p->rank; k++) want += o[k] * t[k];
    if (tv_addr(&p->in, i) != want) return false;
    tv_odometer(p->rank, p->dims, o);
  }
  return true;
}
/* Random shape with n elements: random factors of n and random 1s (a 0 somewhere if n = 0). */
static inline void tv_rand_reshape_dims(tu_rng *r, int64_t n, int *rank, int64_t *dims) {
  int k = 0;
  if (n == 0) {
    *rank = (int)tu_int(r, 1, 5);
    for (k = 0; k < *rank; k++) dims[k] = tu_int(r, 1, 3);
    dims[tu_int(r, 0, *rank - 1)] = 0;
    return;
  }
  int64_t rem = n;
  while (rem > 1 && k < 12) {
    int64_t d = tu_int(r, 2, rem < 8 ? rem : 8);
    while (rem % d) d++;
    if (tu_int(r, 0, 2) == 0) d = rem; /* sometimes take the rest whole */
    dims[k++] = d;
    rem /= d;
  }
  if (rem > 1) dims[k++] = rem;
  int ones = (int)tu_int(r, 0, 2);
  for (int j = 0; j < ones && k < 14; j++) dims[k++] = 1;
  for (int j = k - 1; j > 0; j--) { int m = (int)tu_int(r, 0, j); int64_t x = dims[j]; dims[j] = dims[m]; dims[m] = x; }
  *rank = k;
}

typedef struct { tfe_layout in; int rank; int64_t dims[TFE_MAX_RANK]; } tv_bcast_ctx;
static inline void tv_map_bcast(const void *c, const int64_t *o, int64_t *i) {
  const tv_bcast_ctx *p = (const tv_bcast_ctx *)c;
  int lead = p->rank - p->in.rank;
  for (int k = 0; k < p->in.rank; k++) i[k] = p->in.dims[k] == 1 ? 0 : o[k + lead];
}

typedef struct { int in_rank, rank; int map[TFE_MAX_RANK]; } tv_diag_ctx;
static inline void tv_map_diag(const void *c, const int64_t *o, int64_t *i) {
  const tv_diag_ctx *p = (const tv_diag_ctx *)c;
  for (int k = 0; k < p->in_rank; k++) i[k] = o[p->map[k]];
}

typedef struct { int rank; int64_t start[TFE_MAX_RANK], stop[TFE_MAX_RANK], step[TFE_MAX_RANK]; } tv_slice_ctx;
static inline void tv_map_slice(const void *c, const int64_t *o, int64_t *i) {
  const tv_slice_ctx *p = (const tv_slice_ctx *)c;
  for (int k = 0; k < p->rank; k++) i[k] = p->start[k] + o[k] * p->step[k];
}
/* A random valid range of an axis of size d and its element count. */
static inline void tv_rand_range(tu_rng *r, int64_t d, int64_t *start, int64_t *stop, int64_t *step, int64_t *n) {
  static const int64_t steps[] = {1, 1, 2, 3, -1, -1, -2, -3};
  *step = steps[tu_int(r, 0, 7)];
  if (*step > 0) {
    *start = tu_int(r, 0, d);
    *stop = tu_int(r, *start, d);
    *n = (*stop - *start + *step - 1) / *step;
  } else {
    *start = tu_int(r, -1, d - 1);
    *stop = tu_int(r, -1, *start);
    *n = (*start - *stop + (-*step) - 1) / (-*step);
  }
}

typedef struct { int axis, in_rank; int64_t index; } tv_select_ctx;
static inline void tv_map_select(const void *c, const int64_t *o, int64_t *i) {
  const tv_select_ctx *p = (const tv_select_ctx *)c;
  for (int k = 0, j = 0; k < p->in_rank; k++) i[k] = k == p->axis ? p->index : o[j++];
}
/* unsqueeze: drop the inserted axis from the output index (in_rank is the output's rank) */
static inline void tv_map_unsqueeze(const void *c, const int64_t *o, int64_t *i) {
  const tv_select_ctx *p = (const tv_select_ctx *)c;
  for (int k = 0, j = 0; k < p->in_rank; k++) if (k != p->axis) i[j++] = o[k];
}
typedef struct { int in_rank; bool kept[TFE_MAX_RANK]; } tv_squeeze_ctx;
static inline void tv_map_squeeze(const void *c, const int64_t *o, int64_t *i) {
  const tv_squeeze_ctx *p = (const tv_squeeze_ctx *)c;
  for (int k = 0, j = 0; k < p->in_rank; k++) i[k] = p->kept[k] ? o[j++] : 0;
}
typedef struct { int axis; int64_t at; int rank; } tv_split_ctx;
static inline void tv_map_split(const void *c, const int64_t *o, int64_t *i) {
  const tv_split_ctx *p = (const tv_split_ctx *)c;
  for (int k = 0; k < TFE_MAX_RANK; k++) i[k] = o[k];
  i[p->axis] += p->at;
}
#endif
