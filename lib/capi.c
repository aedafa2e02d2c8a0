/* lib/capi.c — the stable C ABI (include/tenferro/capi.h) over the dtype-tagged layer. Compiled
 * in declarations mode into libtenferro (a second unit beside lib/tenferro.c): it calls only
 * exported tfe_ functions, so it compiles in a fraction of a second. */
#define TFE_HEADER
#include <tenferro.h>
#include <tenferro/capi.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

_Static_assert((int)TFE_CAPI_F32 == (int)TFE_DT_F32 && (int)TFE_CAPI_C128 == (int)TFE_DT_C128 &&
                   (int)TFE_CAPI_I64 == (int)TFE_DT_I64 && (int)TFE_CAPI_MAXPLUS_F32 == (int)TFE_DT_MAXPLUS_F32 &&
                   (int)TFE_CAPI_MAXTIMES_F64 == (int)TFE_DT_MAXTIMES_F64 && TFE_DT_COUNT == 12,
               "capi.h dtype values must be those of tfe_dtype");
_Static_assert((int)TFE_CAPI_COLMAJOR == (int)TFE_COLMAJOR && (int)TFE_CAPI_ROWMAJOR == (int)TFE_ROWMAJOR, "capi.h orders");

struct tfe_handle { tfe_dyn d; };

TFE_CAPI_EXPORT int tfe_capi_version(void) { return TFE_CAPI_VERSION; }
/* Failures found here, before any tfe_ call, have their own thread-local message; every entry
 * clears both, so tfe_capi_last_error shows the failure of the last call. */
static _Thread_local char capi_msg[160];
TFE_CAPI_EXPORT const char *tfe_capi_last_error(void) { return capi_msg[0] ? capi_msg : tfe_last_error(); }
static void capi_enter(void) { capi_msg[0] = 0; tfe_clear_error(); }
static tfe_status capi_fail(tfe_status st, const char *where, const char *msg) {
  snprintf(capi_msg, sizeof capi_msg, "%s: %s", where, msg);
  return st;
}
#define CAPI_NULL(p) do { if (!(p)) return capi_fail(TFE_ERR_NULL, __func__, "argument '" #p "' is NULL"); } while (0)

static tfe_status capi_new(const tfe_dyn *d, tfe_handle **out) {
  tfe_handle *h = (tfe_handle *)malloc(sizeof *h);
  if (!h) return capi_fail(TFE_ERR_ALLOC, "tfe_handle", "no memory for a handle");
  h->d = *d;
  *out = h;
  return TFE_OK;
}

/* A dense or strided layout of rank dims (strides in elements, NULL: dense in order). */
static tfe_status capi_layout(int rank, const int64_t *dims, const int64_t *strides, int order, tfe_layout *L) {
  if (order != TFE_COLMAJOR && order != TFE_ROWMAJOR) return capi_fail(TFE_ERR_INVALID, "tfe_handle", "order is neither TFE_CAPI_COLMAJOR nor TFE_CAPI_ROWMAJOR");
  if (rank > 0 && !dims) return capi_fail(TFE_ERR_NULL, "tfe_handle", "argument 'dims' is NULL");
  TFE_TRY(tfe_layout_dense(rank, dims, (tfe_order)order, L));
  if (strides)
    for (int i = 0; i < rank; i++) L->strides[i] = strides[i];
  int64_t n;
  return tfe_layout_check(L, &n);
}

TFE_CAPI_EXPORT int tfe_handle_zeros(int dtype, int rank, const int64_t *dims, int order, tfe_handle **out) {
  capi_enter();
  CAPI_NULL(out);
  tfe_dyn d;
  TFE_TRY(tfe_dyn_zeros(&d, (tfe_dtype)dtype, rank, dims, (tfe_order)order));
  tfe_status st = capi_new(&d, out);
  if (st) tfe_dyn_release(&d);
  return st;
}

TFE_CAPI_EXPORT int tfe_handle_copy(int dtype, int rank, const int64_t *dims, const int64_t *strides, int order,
                                    const void *data, tfe_handle **out) {
  capi_enter();
  CAPI_NULL(out);
  tfe_layout L;
  TFE_TRY(capi_layout(rank, dims, strides, order, &L));
  tfe_dyn src = {(tfe_dtype)dtype, (void *)data, L, false, NULL}, d;
  TFE_TRY(tfe_dyn_empty(&d, (tfe_dtype)dtype, rank, dims, (tfe_order)order));
  tfe_status st = tfe_copy_dyn(&d, &src);
  if (!st) st = capi_new(&d, out);
  if (st) tfe_dyn_release(&d);
  return st;
}

/* Borrowing goes through a DLPack import: its managed tensor carries the release callback. */
typedef struct capi_borrow {
  tfe_dl_managed_tensor m;
  void (*release)(void *);
  void *ctx;
  int64_t shape[TFE_MAX_RANK], strides[TFE_MAX_RANK];
} capi_borrow;
static void capi_borrow_done(tfe_dl_managed_tensor *m) {
  capi_borrow *b = (capi_borrow *)m->manager_ctx;
  if (b->release) b->release(b->ctx);
  free(b);
}

TFE_CAPI_EXPORT int tfe_handle_borrow(int dtype, int rank, const int64_t *dims, const int64_t *strides, int order,
                                      void *data, void (*release)(void *ctx), void *ctx, tfe_handle **out) {
  capi_enter();
  CAPI_NULL(out);
  tfe_layout L;
  TFE_TRY(capi_layout(rank, dims, strides, order, &L));
  tfe_dl_dtype t;
  TFE_TRY(tfe_dlpack_dtype((tfe_dtype)dtype, &t));
  capi_borrow *b = (capi_borrow *)calloc(1, sizeof *b);
  if (!b) return capi_fail(TFE_ERR_ALLOC, __func__, "no memory");
  memcpy(b->shape, L.dims, sizeof b->shape);
  memcpy(b->strides, L.strides, sizeof b->strides);
  b->release = release; b->ctx = ctx;
  b->m.manager_ctx = b; b->m.deleter = capi_borrow_done;
  tfe_dl_tensor x = {data, {TFE_DL_CPU, 0}, rank, t, b->shape, b->strides, 0};
  b->m.dl_tensor = x;
  tfe_dyn d;
  tfe_status st = tfe_dlpack_import(&b->m, (tfe_dtype)dtype, &d);
  if (st) { free(b); return st; } /* not consumed: the caller keeps its memory */
  st = capi_new(&d, out);
  if (st) { b->release = NULL; tfe_dyn_release(&d); } /* give the memory back without release() */
  return st;
}

TFE_CAPI_EXPORT void tfe_handle_release(tfe_handle *h) {
  if (!h) return;
  tfe_dyn_release(&h->d);
  free(h);
}

TFE_CAPI_EXPORT int tfe_handle_dtype(const tfe_handle *h) { return h ? (int)h->d.dtype : -1; }
TFE_CAPI_EXPORT int tfe_handle_rank(const tfe_handle *h) { return h ? h->d.lay.rank : -1; }
TFE_CAPI_EXPORT int tfe_handle_shape(const tfe_handle *h, int64_t *dims, int64_t *strides) {
  capi_enter();
  CAPI_NULL(h);
  for (int i = 0; i < h->d.lay.rank; i++) {
    if (dims) dims[i] = h->d.lay.dims[i];
    if (strides) strides[i] = h->d.lay.strides[i];
  }
  return TFE_OK;
}
TFE_CAPI_EXPORT void *tfe_handle_data(const tfe_handle *h) {
  if (!h || !h->d.data) return NULL;
  return (char *)h->d.data + h->d.lay.offset * (int64_t)tfe_dtype_get(h->d.dtype)->size;
}

/* The operands' tfe_dyn side by side (n is checked by einsum against the expression). */
static tfe_status capi_ops(int n, tfe_handle *const *ops, tfe_dyn **v) {
  if (n < 1 || n > 4096) return capi_fail(TFE_ERR_INVALID, "tfe_handle_einsum", "n outside [1, 4096]");
  if (!ops) return capi_fail(TFE_ERR_NULL, "tfe_handle_einsum", "argument 'ops' is NULL");
  *v = (tfe_dyn *)malloc(sizeof **v * (size_t)n);
  if (!*v) return capi_fail(TFE_ERR_ALLOC, "tfe_handle_einsum", "no memory");
  for (int i = 0; i < n; i++) {
    if (!ops[i]) { free(*v); return capi_fail(TFE_ERR_NULL, "tfe_handle_einsum", "an operand handle is NULL"); }
    (*v)[i] = ops[i]->d;
  }
  return TFE_OK;
}

/* Parses the options string into o (zero: every default). */
static tfe_status capi_opts(const char *s, tfe_einsum_opts *o, const char *where) {
  memset(o, 0, sizeof *o);
  o->out_order = TFE_ROWMAJOR;
  static const char *const algos[] = {"auto", "greedy", "dp", "anneal"};
  while (s && *s) {
    char key[32], val[64];
    size_t k = strcspn(s, " ,");
    if (k == 0) { s++; continue; }
    const char *eq = memchr(s, '=', k);
    if (!eq || (size_t)(eq - s) >= sizeof key || k - (size_t)(eq - s) - 1 >= sizeof val)
      return capi_fail(TFE_ERR_PARSE, where, "options: expected key=value words");
    memcpy(key, s, (size_t)(eq - s)); key[eq - s] = 0;
    memcpy(val, eq + 1, k - (size_t)(eq - s) - 1); val[k - (size_t)(eq - s) - 1] = 0;
    char *end;
    double x = strtod(val, &end);
    bool num = *val && !*end;
    int a = -1;
    for (int i = 0; i < 4; i++) if (!strcmp(val, algos[i])) a = i;
    if (!strcmp(key, "algo") && a >= 0) o->algo = (tfe_path_algo)a;
    else if (!strcmp(key, "memory_limit") && num && x >= 0) o->memory_limit = (int64_t)x;
    else if (!strcmp(key, "time_budget") && num && x >= 0) o->time_budget = x;
    else if (!strcmp(key, "greedy_trials") && num && x >= 1) o->greedy_trials = (int)x;
    else if (!strcmp(key, "seed") && num && x >= 0) o->seed = (uint64_t)x;
    else if (!strcmp(key, "order") && (!strcmp(val, "row") || !strcmp(val, "col")))
      o->out_order = val[0] == 'r' ? TFE_ROWMAJOR : TFE_COLMAJOR;
    else if (!strcmp(key, "cache") && num) o->no_cache = x == 0;
    else {
      snprintf(capi_msg, sizeof capi_msg, "%s: option '%s=%s' is unknown or out of range", where, key, val);
      return TFE_ERR_INVALID;
    }
    s += k;
  }
  return TFE_OK;
}

TFE_CAPI_EXPORT int tfe_handle_einsum_ex(const char *expr, int n, tfe_handle *const *ops, const char *options,
                                         tfe_handle **out) {
  capi_enter();
  CAPI_NULL(out);
  CAPI_NULL(expr);
  tfe_einsum_opts o;
  TFE_TRY(capi_opts(options, &o, __func__));
  tfe_dyn *v, r;
  TFE_TRY(capi_ops(n, ops, &v));
  tfe_status st = tfe_einsum_dyn(&r, expr, n, v, &o);
  free(v);
  if (st) return st;
  st = capi_new(&r, out);
  if (st) tfe_dyn_release(&r);
  return st;
}

TFE_CAPI_EXPORT int tfe_handle_einsum(const char *expr, int n, tfe_handle *const *ops, int order, tfe_handle **out) {
  return tfe_handle_einsum_ex(expr, n, ops, order == TFE_ROWMAJOR ? "order=row" : "order=col", out);
}

TFE_CAPI_EXPORT int tfe_handle_einsum_path(const char *expr, int n, tfe_handle *const *ops, const char *options,
                                           int *pairs, int cap, int *nsteps, double *cost) {
  capi_enter();
  CAPI_NULL(expr);
  CAPI_NULL(nsteps);
  tfe_einsum_opts o;
  TFE_TRY(capi_opts(options, &o, __func__));
  tfe_dyn *v;
  TFE_TRY(capi_ops(n, ops, &v));
  const tfe_layout **lays = (const tfe_layout **)malloc(sizeof *lays * (size_t)n);
  tfe_einsum_plan *p = NULL;
  tfe_status st = lays ? TFE_OK : capi_fail(TFE_ERR_ALLOC, __func__, "no memory");
  for (int i = 0; !st && i < n; i++) lays[i] = &v[i].lay;
  if (!st) st = tfe_einsum_plan_new(&p, v[0].dtype, expr, n, lays, &o);
  if (!st) {
    const int *path;
    int k = tfe_einsum_plan_path(p, &path);
    *nsteps = k;
    for (int i = 0; pairs && i < 2 * k && i < 2 * cap; i++) pairs[i] = path[i];
    tfe_einsum_cost c = tfe_einsum_plan_cost(p);
    if (cost) { cost[0] = c.flops; cost[1] = c.log2_inter; cost[2] = (double)c.slices; cost[3] = c.max_rank; }
    tfe_einsum_plan_release(p);
  }
  free(lays);
  free(v);
  return st;
}

TFE_CAPI_EXPORT int tfe_handle_einsum_into(tfe_handle *out, const char *expr, int n, tfe_handle *const *ops) {
  capi_enter();
  CAPI_NULL(out);
  CAPI_NULL(expr);
  tfe_dyn *v;
  TFE_TRY(capi_ops(n, ops, &v));
  tfe_status st = tfe_einsum_into_dyn(&out->d, expr, n, v, NULL);
  free(v);
  return st;
}

#define CAPI_LABELS(s, DT)                                                                      \
  case DT: {                                                                                    \
    tfe_view_##s *w = (tfe_view_##s *)malloc(sizeof *w * (size_t)n);                           \
    tfe_tensor_##s t = {0};                                                                     \
    st = w ? TFE_OK : capi_fail(TFE_ERR_ALLOC, __func__, "no memory");                          \
    for (int i = 0; !st && i < n; i++) st = tfe_dyn_as_view_##s(&v[i], &w[i]);                  \
    if (!st) st = tfe_einsum_labels_##s(&t, n, w, labels, out_labels, out_rank, &o);            \
    if (!st) st = tfe_tensor_to_dyn_##s(&t, &r); /* r takes a reference of its own */           \
    tfe_storage_release(t.st);                                                                  \
    free(w);                                                                                    \
    break;                                                                                      \
  }
TFE_CAPI_EXPORT int tfe_handle_einsum_labels(int n, tfe_handle *const *ops, const int32_t *const *labels,
                                             const int32_t *out_labels, int out_rank, const char *options,
                                             tfe_handle **out) {
  capi_enter();
  CAPI_NULL(out);
  CAPI_NULL(labels);
  tfe_einsum_opts o;
  TFE_TRY(capi_opts(options, &o, __func__));
  tfe_dyn *v, r = {0};
  TFE_TRY(capi_ops(n, ops, &v));
  tfe_status st;
  switch (v[0].dtype) {
    TFE_KIND_SUFFIXES(CAPI_LABELS)
  default: st = capi_fail(TFE_ERR_DTYPE, __func__, "unknown dtype");
  }
  free(v);
  if (!st) st = capi_new(&r, out);
  if (st) tfe_dyn_release(&r);
  return st;
}

#define CAPI_CONTRACT(s, DT)                                                                  \
  case DT: {                                                                                  \
    tfe_view_##s va, vb, vc;                                                                  \
    TFE_TRY(tfe_dyn_as_view_##s(&a->d, &va));                                                 \
    TFE_TRY(tfe_dyn_as_view_##s(&b->d, &vb));                                                 \
    TFE_TRY(tfe_dyn_as_view_##s(&c->d, &vc));                                                 \
    return tfe_contract_##s(tfe_sr_one_##s(), &va, la, &vb, lb, tfe_sr_zero_##s(), &vc, lc);  \
  }
TFE_CAPI_EXPORT int tfe_handle_contract(const tfe_handle *a, const int32_t *la, const tfe_handle *b, const int32_t *lb,
                                        tfe_handle *c, const int32_t *lc) {
  capi_enter();
  CAPI_NULL(a);
  CAPI_NULL(b);
  CAPI_NULL(c);
  switch (a->d.dtype) {
    TFE_KIND_SUFFIXES(CAPI_CONTRACT)
  default: return capi_fail(TFE_ERR_DTYPE, __func__, "unknown dtype");
  }
}

TFE_CAPI_EXPORT int tfe_handle_from_dlpack(void *managed, int versioned, int allow_read_only, tfe_handle **out) {
  capi_enter();
  CAPI_NULL(managed);
  CAPI_NULL(out);
  tfe_handle *h = (tfe_handle *)malloc(sizeof *h); /* first, so that a failure leaves managed untaken */
  if (!h) return capi_fail(TFE_ERR_ALLOC, __func__, "no memory for a handle");
  bool ro = false;
  tfe_status st = versioned ? tfe_dlpack_import_versioned((tfe_dl_managed_tensor_versioned *)managed, TFE_DT_COUNT,
                                                          &h->d, allow_read_only ? &ro : NULL)
                            : tfe_dlpack_import((tfe_dl_managed_tensor *)managed, TFE_DT_COUNT, &h->d);
  if (st) { free(h); return st; }
  *out = h;
  return TFE_OK;
}
TFE_CAPI_EXPORT int tfe_handle_to_dlpack(const tfe_handle *h, int versioned, void **managed) {
  capi_enter();
  CAPI_NULL(h);
  CAPI_NULL(managed);
  if (versioned) return tfe_dlpack_export_versioned(&h->d, 0, (tfe_dl_managed_tensor_versioned **)managed);
  return tfe_dlpack_export(&h->d, (tfe_dl_managed_tensor **)managed);
}
