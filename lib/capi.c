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
_Static_assert((int)TFE_CAPI_OP_EINSUM == (int)TFE_AD_EINSUM && (int)TFE_CAPI_OP_SVD == (int)TFE_AD_SVD && (int)TFE_CAPI_OP_QR == (int)TFE_AD_QR &&
                   (int)TFE_CAPI_OP_LQ == (int)TFE_AD_LQ && (int)TFE_CAPI_OP_EIGH == (int)TFE_AD_EIGH && (int)TFE_CAPI_OP_EIG == (int)TFE_AD_EIG &&
                   (int)TFE_CAPI_OP_LU == (int)TFE_AD_LU && (int)TFE_CAPI_OP_CHOLESKY == (int)TFE_AD_CHOLESKY &&
                   (int)TFE_CAPI_OP_SOLVE == (int)TFE_AD_SOLVE && (int)TFE_CAPI_OP_INV == (int)TFE_AD_INV && (int)TFE_CAPI_OP_DET == (int)TFE_AD_DET &&
                   (int)TFE_CAPI_OP_SLOGDET == (int)TFE_AD_SLOGDET && (int)TFE_CAPI_OP_PINV == (int)TFE_AD_PINV &&
                   (int)TFE_CAPI_OP_EXPM == (int)TFE_AD_EXPM && (int)TFE_CAPI_OP_POLAR == (int)TFE_AD_POLAR && (int)TFE_CAPI_OP_LSTSQ == (int)TFE_AD_LSTSQ,
               "capi.h op values must be those of tfe_ad_op");
_Static_assert((int)TFE_CAPI_DEV_CPU == (int)TFE_DEV_CPU && (int)TFE_CAPI_DEV_CUDA == (int)TFE_DEV_CUDA &&
                   (int)TFE_CAPI_DEV_ROCM == (int)TFE_DEV_ROCM, "capi.h device kinds");
_Static_assert((int)TFE_CAPI_COLMAJOR == (int)TFE_COLMAJOR && (int)TFE_CAPI_ROWMAJOR == (int)TFE_ROWMAJOR, "capi.h orders");

struct tfe_handle { tfe_dyn d; };

TFE_CAPI_EXPORT int tfe_capi_version(void) { return TFE_CAPI_VERSION; }
/* Failures found here, before any tfe_ call, have their own thread-local message; every entry
 * clears both, so tfe_capi_last_error shows the failure of the last call. */
static _Thread_local char capi_msg[512];
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

/* A given path's pairs (path=A:B;C:D...), valid during the call that parsed them. */
#define CAPI_PATH_MAX 4096
static _Thread_local int capi_path[2 * CAPI_PATH_MAX];

/* Parses the options string into o (zero: every default). */
static tfe_status capi_opts(const char *s, tfe_einsum_opts *o, const char *where) {
  memset(o, 0, sizeof *o);
  o->out_order = TFE_ROWMAJOR;
  static const char *const algos[] = {"auto", "greedy", "dp", "anneal", "given"};
  bool have_path = false;
  while (s && *s) {
    char key[32], val[64];
    size_t k = strcspn(s, " ,");
    if (k == 0) { s++; continue; }
    const char *eq = memchr(s, '=', k);
    if (eq && (size_t)(eq - s) == 4 && !strncmp(s, "path", 4)) { /* pairs A:B;C:D... (any length) */
      const char *q = eq + 1, *end = s + k;
      int np = 0;
      while (q < end) {
        char *e1, *e2;
        long a = strtol(q, &e1, 10);
        if (e1 == q || *e1 != ':') break;
        long b = strtol(e1 + 1, &e2, 10);
        if (e2 == e1 + 1 || (e2 < end && *e2 != ';') || np >= CAPI_PATH_MAX || a < 0 || b < 0) break;
        capi_path[2 * np] = (int)a; capi_path[2 * np + 1] = (int)b; np++;
        q = e2 < end ? e2 + 1 : e2;
      }
      if (q < end) return capi_fail(TFE_ERR_PARSE, where, "options: path=A:B;C:D... (pairs of operand positions)");
      o->path = capi_path; o->path_nsteps = np; have_path = true;
      s += k;
      continue;
    }
    if (!eq || (size_t)(eq - s) >= sizeof key || k - (size_t)(eq - s) - 1 >= sizeof val)
      return capi_fail(TFE_ERR_PARSE, where, "options: expected key=value words");
    memcpy(key, s, (size_t)(eq - s)); key[eq - s] = 0;
    memcpy(val, eq + 1, k - (size_t)(eq - s) - 1); val[k - (size_t)(eq - s) - 1] = 0;
    char *end;
    double x = strtod(val, &end);
    bool num = *val && !*end;
    int a = -1;
    for (int i = 0; i < 5; i++) if (!strcmp(val, algos[i])) a = i;
    if (!strcmp(key, "algo") && a >= 0) o->algo = (tfe_path_algo)a;
    else if (!strcmp(key, "memory_limit") && num && x >= 0) o->memory_limit = (int64_t)x;
    else if (!strcmp(key, "time_budget") && num && x >= 0) o->time_budget = x;
    else if (!strcmp(key, "greedy_trials") && num && x >= 1) o->greedy_trials = (int)x;
    else if (!strcmp(key, "greedy_alpha") && num) o->greedy_alpha = x;
    else if (!strcmp(key, "greedy_temp") && num && x >= 0) o->greedy_temp = x;
    else if (!strcmp(key, "dp_max") && num && x >= 1) o->dp_max = (int)x;
    else if (!strcmp(key, "write_weight") && num && x >= 0) o->write_weight = x;
    else if (!strcmp(key, "seed") && num && x >= 0) o->seed = (uint64_t)x;
    else if (!strcmp(key, "order") && (!strcmp(val, "row") || !strcmp(val, "col")))
      o->out_order = val[0] == 'r' ? TFE_ROWMAJOR : TFE_COLMAJOR;
    else if (!strcmp(key, "cache") && num) o->no_cache = x == 0;
    else if (!strcmp(key, "path_format") && (!strcmp(val, "linear") || !strcmp(val, "ssa")))
      o->path_format = val[0] == 'l' ? TFE_PATH_LINEAR : TFE_PATH_SSA;
    else {
      snprintf(capi_msg, sizeof capi_msg, "%s: option '%s=%s' is unknown or out of range", where, key, val);
      return TFE_ERR_INVALID;
    }
    s += k;
  }
  if (have_path && o->algo == TFE_PATH_AUTO) o->algo = TFE_PATH_GIVEN; /* a path alone means: use it */
  if (o->algo == TFE_PATH_GIVEN && !have_path) return capi_fail(TFE_ERR_INVALID, where, "algo=given needs path=A:B;...");
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

/* ---- plans ------------------------------------------------------------------------------------ */
struct tfe_capi_plan { tfe_einsum_plan *p; };

TFE_CAPI_EXPORT int tfe_capi_plan_new(int dtype, const char *expr, int n, const int *ranks,
                                      const int64_t *const *dims, const int64_t *const *strides, const char *options,
                                      tfe_capi_plan **out) {
  capi_enter();
  CAPI_NULL(expr);
  CAPI_NULL(ranks);
  CAPI_NULL(dims);
  CAPI_NULL(out);
  if (n < 1 || n > 4096) return capi_fail(TFE_ERR_INVALID, __func__, "n outside [1, 4096]");
  if (dtype < 0 || dtype >= TFE_DT_COUNT) return capi_fail(TFE_ERR_DTYPE, __func__, "unknown dtype");
  tfe_einsum_opts o;
  TFE_TRY(capi_opts(options, &o, __func__));
  tfe_layout *L = (tfe_layout *)malloc(sizeof *L * (size_t)n);
  const tfe_layout **lays = (const tfe_layout **)malloc(sizeof *lays * (size_t)n);
  tfe_capi_plan *cp = (tfe_capi_plan *)malloc(sizeof *cp);
  tfe_status st = L && lays && cp ? TFE_OK : capi_fail(TFE_ERR_ALLOC, __func__, "no memory");
  for (int k = 0; !st && k < n; k++) {
    st = capi_layout(ranks[k], dims[k], strides ? strides[k] : NULL, TFE_ROWMAJOR, &L[k]);
    lays[k] = &L[k];
  }
  if (!st) st = tfe_einsum_plan_new(&cp->p, (tfe_dtype)dtype, expr, n, lays, &o);
  free(L);
  free(lays);
  if (st) { free(cp); return st; }
  *out = cp;
  return TFE_OK;
}

TFE_CAPI_EXPORT int tfe_capi_plan_out_shape(const tfe_capi_plan *p, int64_t *dims, double *cost) {
  if (!p) return -1;
  for (int i = 0; dims && i < p->p->out_rank; i++) dims[i] = p->p->out_dims[i];
  if (cost) {
    tfe_einsum_cost c = tfe_einsum_plan_cost(p->p);
    cost[0] = c.flops; cost[1] = c.log2_inter; cost[2] = (double)c.slices; cost[3] = c.max_rank;
  }
  return p->p->out_rank;
}

#define CAPI_RUN(s, DT)                                                                               \
  case DT: {                                                                                          \
    tfe_view_##s sm[8], *v = n <= 8 ? sm : (tfe_view_##s *)malloc(sizeof *v * (size_t)n);             \
    if (!v) return capi_fail(TFE_ERR_ALLOC, __func__, "no memory");                                   \
    for (int k = 0; k < n; k++) {                                                                     \
      v[k].data = (void *)data[k]; v[k].lay = p->p->in[k]; v[k].lay.offset = 0; v[k].conj = false; \
    }                                                                                                 \
    tfe_view_##s o = {(void *)out, p->p->out_lay, false};                                     \
    o.lay.offset = 0;                                                                                 \
    tfe_status st = tfe_einsum_execute_##s(p->p, tfe_sr_one_##s(), v, tfe_sr_zero_##s(), &o);          \
    if (v != sm) free(v);                                                                             \
    return st;                                                                                        \
  }
TFE_CAPI_EXPORT int tfe_capi_plan_run(const tfe_capi_plan *p, const void *const *data, void *out) {
  capi_enter();
  CAPI_NULL(p);
  CAPI_NULL(data);
  int n = p->p->n;
  switch (p->p->dtype) {
    TFE_KIND_SUFFIXES(CAPI_RUN)
  default: return capi_fail(TFE_ERR_DTYPE, __func__, "unknown dtype");
  }
}
TFE_CAPI_EXPORT void tfe_capi_plan_release(tfe_capi_plan *p) {
  if (!p) return;
  tfe_einsum_plan_release(p->p);
  free(p);
}

/* ---- linear algebra ------------------------------------------------------------------------------ */
TFE_CAPI_EXPORT int tfe_capi_op_arity(int op, int *nin, int *nout) {
  capi_enter();
  if (op < 0 || op >= TFE_AD_OP_COUNT_) return capi_fail(TFE_ERR_INVALID, __func__, "unknown op");
  if (nin) *nin = tfe_ad_op_nin((tfe_ad_op)op);
  if (nout) *nout = tfe_ad_op_nout((tfe_ad_op)op);
  return TFE_OK;
}

/* One option value of a key=value string (absent: def). */
static double capi_opt_num(const char *s, const char *key, double def) {
  size_t k = strlen(key);
  while (s && *s) {
    if (!strncmp(s, key, k) && s[k] == '=') return strtod(s + k + 1, NULL);
    s += strcspn(s, " ,");
    s += strspn(s, " ,");
  }
  return def;
}

/* y[i] takes the tensor's storage (its reference is handed over). */
#define CAPI_TAKE(s, t, i)                                                                   \
  do {                                                                                     \
    tfe_dyn d_;                                                                            \
    if (!st) st = tfe_tensor_to_dyn_##s(&(t), &d_);                                        \
    if (!st) { st = capi_new(&d_, &y[i]); if (st) tfe_dyn_release(&d_); else (*nout)++; }  \
  } while (0)
#define CAPI_LINALG(s, r, c, DT)                                                                     \
  case DT: {                                                                                         \
    tfe_view_##s a, b;                                                                               \
    tfe_tensor_##s t0 = {0}, t1 = {0}, t2 = {0};                                                     \
    tfe_tensor_##r rt = {0};                                                                         \
    tfe_tensor_##c c0 = {0}, c1 = {0};                                                               \
    tfe_tensor_i64 perm = {0};                                                                       \
    st = tfe_dyn_as_view_##s(&x[0]->d, &a);                                                          \
    if (!st && nin == 2) st = tfe_dyn_as_view_##s(&x[1]->d, &b);                                     \
    if (st) break;                                                                                   \
    switch (op) {                                                                                    \
    case TFE_AD_SVD: st = tfe_svd_##s(&a, TFE_SVD_THIN, &t0, &rt, &t1);                              \
      CAPI_TAKE(s, t0, 0); CAPI_TAKE(r, rt, 1); CAPI_TAKE(s, t1, 2); break;                          \
    case TFE_AD_QR: st = tfe_qr_##s(&a, full, &t0, &t1); CAPI_TAKE(s, t0, 0); CAPI_TAKE(s, t1, 1); break; \
    case TFE_AD_LQ: st = tfe_lq_##s(&a, full, &t0, &t1); CAPI_TAKE(s, t0, 0); CAPI_TAKE(s, t1, 1); break; \
    case TFE_AD_EIGH: st = tfe_eigh_##s(&a, &rt, &t0); CAPI_TAKE(r, rt, 0); CAPI_TAKE(s, t0, 1); break;   \
    case TFE_AD_EIG: st = tfe_eig_##s(&a, &c0, &c1); CAPI_TAKE(c, c0, 0); CAPI_TAKE(c, c1, 1); break;     \
    case TFE_AD_LU: st = tfe_lu_##s(&a, &perm, &t0, &t1);                                            \
      CAPI_TAKE(i64, perm, 0); CAPI_TAKE(s, t0, 1); CAPI_TAKE(s, t1, 2); break;                      \
    case TFE_AD_CHOLESKY: st = tfe_cholesky_##s(&a, &t0); CAPI_TAKE(s, t0, 0); break;                \
    case TFE_AD_SOLVE: st = tfe_solve_##s(&a, &b, &t0); CAPI_TAKE(s, t0, 0); break;                  \
    case TFE_AD_LSTSQ: st = tfe_lstsq_##s(&a, &b, &t0); CAPI_TAKE(s, t0, 0); break;                  \
    case TFE_AD_INV: st = tfe_inv_##s(&a, &t0); CAPI_TAKE(s, t0, 0); break;                          \
    case TFE_AD_DET: st = tfe_det_##s(&a, &t0); CAPI_TAKE(s, t0, 0); break;                          \
    case TFE_AD_SLOGDET: st = tfe_slogdet_##s(&a, &t0, &rt); CAPI_TAKE(s, t0, 0); CAPI_TAKE(r, rt, 1); break; \
    case TFE_AD_PINV: st = tfe_pinv_##s(&a, rcond, &t0); CAPI_TAKE(s, t0, 0); break;                 \
    case TFE_AD_EXPM: st = tfe_expm_##s(&a, &t0); CAPI_TAKE(s, t0, 0); break;                        \
    case TFE_AD_POLAR: st = tfe_polar_##s(&a, &t0, &t1); CAPI_TAKE(s, t0, 0); CAPI_TAKE(s, t1, 1); break; \
    default: st = capi_fail(TFE_ERR_INVALID, "tfe_handle_linalg", "op is not a linear algebra operation"); \
    }                                                                                                \
    tfe_storage_release(t0.st); tfe_storage_release(t1.st); tfe_storage_release(t2.st);             \
    tfe_storage_release(rt.st); tfe_storage_release(c0.st); tfe_storage_release(c1.st);             \
    tfe_storage_release(perm.st);                                                                    \
    break;                                                                                           \
  }
#define CAPI_FLOAT_KINDS(X) X(f32, f32, c64, TFE_DT_F32) X(f64, f64, c128, TFE_DT_F64) \
  X(c64, f32, c64, TFE_DT_C64) X(c128, f64, c128, TFE_DT_C128)

TFE_CAPI_EXPORT int tfe_handle_linalg(int op, const char *options, int nin, tfe_handle *const *x, int *nout,
                                      tfe_handle **y) {
  capi_enter();
  CAPI_NULL(x);
  CAPI_NULL(y);
  CAPI_NULL(nout);
  *nout = 0;
  int want = (op == TFE_AD_SOLVE || op == TFE_AD_LSTSQ) ? 2 : 1;
  if (nin != want) return capi_fail(TFE_ERR_INVALID, __func__, "wrong number of inputs for this op");
  for (int i = 0; i < nin; i++) CAPI_NULL(x[i]);
  if (nin == 2 && x[0]->d.dtype != x[1]->d.dtype) return capi_fail(TFE_ERR_DTYPE, __func__, "inputs of two kinds");
  bool full = capi_opt_num(options, "full", 0) != 0;
  double rcond = capi_opt_num(options, "rcond", -1);
  tfe_status st = TFE_OK;
  switch (x[0]->d.dtype) {
    CAPI_FLOAT_KINDS(CAPI_LINALG)
  default: return capi_fail(TFE_ERR_DTYPE, __func__, "linear algebra needs a float kind (f32, f64, c64, c128)");
  }
  if (st) {
    for (int i = 0; i < *nout; i++) tfe_handle_release(y[i]);
    *nout = 0;
  }
  return st;
}

/* ---- the stateless rules -------------------------------------------------------------------------- */
/* An einsum's labels from "ij,jk->ik" or "0 1,1 2->0 2" (one or two inputs, explicit output). */
static tfe_status capi_einsum_params(const char *e, int nin, tfe_ad_params *p) {
  if (!e) return capi_fail(TFE_ERR_NULL, "tfe_handle_rule", "the einsum rules need the expression in params");
  int32_t la[TFE_MAX_RANK], lb[TFE_MAX_RANK], lc[TFE_MAX_RANK], *lab[3] = {la, lb, lc};
  int cnt[3] = {0, 0, 0}, term = 0;
  bool ints = strpbrk(e, "0123456789") != NULL, arrow = false;
  for (const char *s = e; *s;) {
    if (*s == ' ') { s++; continue; }
    if (*s == ',') { if (arrow || ++term > 1) return capi_fail(TFE_ERR_PARSE, "tfe_handle_rule", "the rules take one or two operands"); s++; continue; }
    if (s[0] == '-' && s[1] == '>') { if (arrow) return capi_fail(TFE_ERR_PARSE, "tfe_handle_rule", "two '->'"); arrow = true; s += 2; continue; }
    int t = arrow ? 2 : term;
    if (cnt[t] >= TFE_MAX_RANK) return capi_fail(TFE_ERR_RANK, "tfe_handle_rule", "too many labels");
    if (ints) {
      char *end;
      long v = strtol(s, &end, 10);
      if (end == s || v < 0 || v > INT32_MAX) return capi_fail(TFE_ERR_PARSE, "tfe_handle_rule", "integer labels: non-negative numbers separated by spaces");
      lab[t][cnt[t]++] = (int32_t)v;
      s = end;
    } else {
      if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return capi_fail(TFE_ERR_PARSE, "tfe_handle_rule", "labels are letters a-z, A-Z (or integers)");
      lab[t][cnt[t]++] = (int32_t)(unsigned char)*s++;
    }
  }
  if (!arrow) return capi_fail(TFE_ERR_PARSE, "tfe_handle_rule", "the rules need an explicit output ('->')");
  if (term + 1 != nin) return capi_fail(TFE_ERR_INVALID, "tfe_handle_rule", "the expression's operand count is not nin");
  *p = tfe_ad_einsum_params(cnt[0], la, nin == 2 ? cnt[1] : 0, lb, cnt[2], lc);
  return TFE_OK;
}

enum { CAPI_PRIMAL, CAPI_FRULE, CAPI_RRULE };
#define CAPI_VIEWS(s, h, v, pv, m)                                               \
  for (int i = 0; !st && i < (m); i++) {                                       \
    pv[i] = NULL;                                                              \
    if ((h) && (h)[i]) { st = tfe_dyn_as_view_##s(&(h)[i]->d, &v[i]); pv[i] = &v[i]; } \
  }
#define CAPI_RULE(s, r, c, DT)                                                                        \
  case DT: {                                                                                          \
    tfe_view_##s vx[2], vt[3], vy[3];                                                                 \
    const tfe_view_##s *px[2], *pt[3], *py[3];                                                        \
    tfe_tensor_##s res[3];                                                                            \
    memset(res, 0, sizeof res);                                                                       \
    int nt = mode == CAPI_FRULE ? nin : nout;                                                         \
    CAPI_VIEWS(s, x, vx, px, nin);                                                                    \
    CAPI_VIEWS(s, t, vt, pt, nt);                                                                     \
    if (mode != CAPI_PRIMAL) CAPI_VIEWS(s, y, vy, py, nout);                                          \
    if (!st) st = mode == CAPI_PRIMAL ? tfe_ad_primal_##s((tfe_ad_op)op, &p, nin, px, res)            \
                : mode == CAPI_FRULE  ? tfe_frule_##s((tfe_ad_op)op, &p, nin, px, pt, py, res)        \
                                      : tfe_rrule_##s((tfe_ad_op)op, &p, nin, px, py, pt, res);        \
    for (int i = 0; i < nres; i++) {                                                                  \
      tfe_dyn d_;                                                                                     \
      if (!st) st = tfe_tensor_to_dyn_##s(&res[i], &d_);                                              \
      if (!st) { st = capi_new(&d_, &out[i]); if (st) tfe_dyn_release(&d_); else made++; }            \
      tfe_storage_release(res[i].st);                                                                 \
    }                                                                                                 \
    break;                                                                                            \
  }
static int capi_rule(int mode, int op, const char *params, int nin, tfe_handle *const *x, tfe_handle *const *t,
                     tfe_handle *const *y, tfe_handle **out, const char *where) {
  capi_enter();
  CAPI_NULL(x);
  CAPI_NULL(out);
  if (op < 0 || op >= TFE_AD_OP_COUNT_) return capi_fail(TFE_ERR_INVALID, where, "unknown op");
  int want = tfe_ad_op_nin((tfe_ad_op)op), nout = tfe_ad_op_nout((tfe_ad_op)op);
  if (want < 0 ? (nin < 1 || nin > 2) : nin != want) return capi_fail(TFE_ERR_INVALID, where, "wrong number of inputs for this op");
  if (mode != CAPI_PRIMAL && !y) return capi_fail(TFE_ERR_NULL, where, "argument 'y' (the primal outputs) is NULL");
  for (int i = 0; i < nin; i++) CAPI_NULL(x[i]);
  for (int i = 0; mode != CAPI_PRIMAL && i < nout; i++)
    if (!y[i]) return capi_fail(TFE_ERR_NULL, where, "a primal output handle is NULL");
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  if (op == TFE_AD_EINSUM) TFE_TRY(capi_einsum_params(params, nin, &p));
  else p.eta = capi_opt_num(params, "eta", 0);
  int nres = mode == CAPI_RRULE ? nin : nout, made = 0;
  tfe_status st = TFE_OK;
  switch (x[0]->d.dtype) {
    CAPI_FLOAT_KINDS(CAPI_RULE)
  default: return capi_fail(TFE_ERR_DTYPE, where, "the rules need a float kind (f32, f64, c64, c128)");
  }
  if (st)
    for (int i = 0; i < made; i++) { tfe_handle_release(out[i]); out[i] = NULL; }
  return st;
}
TFE_CAPI_EXPORT int tfe_handle_primal(int op, const char *params, int nin, tfe_handle *const *x, tfe_handle **y) {
  return capi_rule(CAPI_PRIMAL, op, params, nin, x, NULL, NULL, y, __func__);
}
TFE_CAPI_EXPORT int tfe_handle_frule(int op, const char *params, int nin, tfe_handle *const *x,
                                     tfe_handle *const *dx, tfe_handle *const *y, tfe_handle **dy) {
  return capi_rule(CAPI_FRULE, op, params, nin, x, dx, y, dy, __func__);
}
TFE_CAPI_EXPORT int tfe_handle_rrule(int op, const char *params, int nin, tfe_handle *const *x,
                                     tfe_handle *const *y, tfe_handle *const *dy, tfe_handle **dx) {
  return capi_rule(CAPI_RRULE, op, params, nin, x, dy, y, dx, __func__);
}

/* ---- devices and backends ------------------------------------------------------------------------ */
TFE_CAPI_EXPORT int tfe_capi_device_list(int *ids, int max) {
  tfe_device_info info[64];
  int n = tfe_device_list(info, 64);
  for (int i = 0; ids && i < max && i < n && i < 64; i++) ids[i] = info[i].id;
  return n;
}
TFE_CAPI_EXPORT int tfe_capi_device_info(int id, int *kind, int *index, int64_t *memory_bytes, char *name, int cap) {
  capi_enter();
  tfe_device_info d;
  TFE_TRY(tfe_device_get(id, &d));
  if (kind) *kind = (int)d.kind;
  if (index) *index = d.index;
  if (memory_bytes) *memory_bytes = (int64_t)d.memory_bytes;
  if (name && cap > 0) snprintf(name, (size_t)cap, "%s", d.name);
  return TFE_OK;
}
TFE_CAPI_EXPORT int tfe_capi_backend_load(const char *which, const char *path) {
  capi_enter();
  tfe_status st;
  if (!which || !strcmp(which, "auto")) st = tfe_gpu_init();
  else if (!strcmp(which, "cuda")) st = tfe_gpu_load_cuda(path);
  else if (!strcmp(which, "cutensor")) st = tfe_gpu_load_cutensor(path);
  else if (!strcmp(which, "hip")) st = tfe_gpu_load_hip(path);
  else if (!strcmp(which, "hiptensor")) st = tfe_gpu_load_hiptensor(path);
  else return capi_fail(TFE_ERR_INVALID, __func__, "which is none of auto, cuda, cutensor, hip, hiptensor");
  if (st) snprintf(capi_msg, sizeof capi_msg, "%s", tfe_gpu_last_error()); /* the companion's message */
  return st;
}
TFE_CAPI_EXPORT const char *tfe_capi_backend_status(void) { return tfe_gpu_status(); }
