/* tenferro/einsum/plan_cache.h — einsum room: the process-wide cache of einsum plans.
 *
 * One keyed LRU cache (core/lru.h) serves the one-call entry points (tfe_einsum_S, ...). The
 * key is a byte string of everything a plan depends on: kind, expression (or integer labels),
 * operand layouts (dims and strides) and the options that shape the plan (not the backend:
 * plans are the same on every backend). It is built on the stack (heap only for very large
 * networks), hashed once, and looked up once: a hit runs the plan's stored contraction plans
 * without a second lookup. Capacity: the tuning field einsum_plan_cache_size (64). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_PLAN_CACHE_H
#define TENFERRO_EINSUM_PLAN_CACHE_H
#include <tenferro/einsum/plan.h>

/* A key under construction: bytes in `small` until they outgrow it. */
typedef struct tfe__ein_key {
  unsigned char *b;
  size_t n, cap;
  bool oom;
  unsigned char small[1024];
} tfe__ein_key;

/* Drops every cached plan (plans still held by callers stay valid). */
TFE_API void tfe_einsum_cache_clear(void);
/* Cache hits and misses since the start of the process. */
TFE_API void tfe_einsum_cache_stats(long *hits, long *misses);
/* Plans cached now, the capacity (einsum_plan_cache_size) and how many were evicted so far. */
TFE_API void tfe_einsum_cache_info(long *entries, long *capacity, long *evictions);

#endif
#elif !defined(TENFERRO_EINSUM_PLAN_CACHE_BODY) /* bodies */
#define TENFERRO_EINSUM_PLAN_CACHE_BODY
#include <tenferro/einsum/plan.h>

TFE_INTERNAL void tfe__ein_plan_retain_v(void *p) { tfe_einsum_plan_retain((tfe_einsum_plan *)p); }
TFE_INTERNAL void tfe__ein_plan_release_v(void *p) { tfe_einsum_plan_release((tfe_einsum_plan *)p); }
static const tfe__lru_vt tfe__ein_cache_vt = {tfe__ein_plan_retain_v, tfe__ein_plan_release_v};

TFE_API void tfe_einsum_cache_clear(void) { tfe__lru_clear(&tfe__st.einsum.cache, &tfe__ein_cache_vt); }
TFE_API void tfe_einsum_cache_stats(long *hits, long *misses) {
  tfe__lru_stats(&tfe__st.einsum.cache, NULL, hits, misses, NULL);
}
TFE_API void tfe_einsum_cache_info(long *entries, long *capacity, long *evictions) {
  tfe__lru_stats(&tfe__st.einsum.cache, entries, NULL, NULL, evictions);
  if (capacity) *capacity = (long)tfe__st.tune.einsum_plan_cache_size;
}

TFE_INTERNAL void tfe__ein_key_init(tfe__ein_key *k) {
  k->b = k->small;
  k->n = 0;
  k->cap = sizeof k->small;
  k->oom = false;
}
TFE_INTERNAL void tfe__ein_key_free(tfe__ein_key *k) {
  if (k->b != k->small) tfe__free(k->b);
  k->b = k->small;
}
TFE_INTERNAL void tfe__ein_key_put(tfe__ein_key *k, const void *x, size_t len) {
  if (k->oom) return;
  if (k->n + len > k->cap) {
    size_t cap = (k->cap + len) * 2 + 256;
    unsigned char *b = (unsigned char *)tfe__alloc(cap);
    if (!b) { k->oom = true; return; }
    if (k->n) memcpy(b, k->b, k->n);
    tfe__ein_key_free(k);
    k->b = b; k->cap = cap;
  }
  memcpy(k->b + k->n, x, len);
  k->n += len;
}
/* Key of a request; expr NULL means the integer-label form (labels given). */
TFE_INTERNAL tfe_status tfe__ein_make_key(tfe__ein_key *k, tfe_dtype dt, const char *expr, int n,
                                         const tfe_layout *const *lay, const int32_t *const *labels,
                                         const int32_t *out_labels, int out_rank, const tfe_einsum_opts *o) {
  tfe__ein_key_init(k);
  int tag = expr ? 1 : 2;
  tfe__ein_key_put(k, &tag, sizeof tag);
  tfe__ein_key_put(k, &dt, sizeof dt);
  tfe__ein_key_put(k, &n, sizeof n);
  if (expr) tfe__ein_key_put(k, expr, strlen(expr) + 1);
  for (int i = 0; i < n; i++) {
    const tfe_layout *L = lay[i];
    tfe__ein_key_put(k, &L->rank, sizeof L->rank);
    tfe__ein_key_put(k, L->dims, (size_t)L->rank * sizeof(int64_t));
    tfe__ein_key_put(k, L->strides, (size_t)L->rank * sizeof(int64_t));
    if (!expr) tfe__ein_key_put(k, labels[i], (size_t)L->rank * sizeof(int32_t));
  }
  if (!expr) {
    int r = out_labels ? out_rank : -1;
    tfe__ein_key_put(k, &r, sizeof r);
    if (out_labels) tfe__ein_key_put(k, out_labels, (size_t)out_rank * sizeof(int32_t));
  }
  if (o) { /* field by field: padding bytes are not part of the key */
    tfe__ein_key_put(k, &o->algo, sizeof o->algo); tfe__ein_key_put(k, &o->time_budget, sizeof(double));
    tfe__ein_key_put(k, &o->greedy_trials, sizeof(int)); tfe__ein_key_put(k, &o->greedy_alpha, sizeof(double));
    tfe__ein_key_put(k, &o->greedy_temp, sizeof(double)); tfe__ein_key_put(k, &o->dp_max, sizeof(int));
    tfe__ein_key_put(k, &o->write_weight, sizeof(double)); tfe__ein_key_put(k, &o->memory_limit, sizeof(int64_t));
    tfe__ein_key_put(k, &o->seed, sizeof(uint64_t)); tfe__ein_key_put(k, &o->path_nsteps, sizeof(int));
    tfe__ein_key_put(k, &o->path_format, sizeof o->path_format);
    tfe__ein_key_put(k, &o->out_order, sizeof o->out_order);
    if (o->memory_limit > 0) { /* a sliced plan divides the limit among the threads (build.h) */
      int th = tfe_get_num_threads();
      tfe__ein_key_put(k, &th, sizeof th);
    }
    if (o->algo == TFE_PATH_GIVEN && o->path_nsteps > 0) tfe__ein_key_put(k, o->path, 2 * (size_t)o->path_nsteps * sizeof(int));
  }
  if (k->oom) { tfe__ein_key_free(k); return TFE_FAIL(TFE_ERR_ALLOC, "plan cache key allocation failed"); }
  return TFE_OK;
}

/* Cached plan lookup/build used by the one-call entry points. */
TFE_INTERNAL tfe_status tfe__ein_plan_cached(tfe_einsum_plan **plan, tfe_dtype dt, const char *expr, int n,
                                            const tfe_layout *const *lay, const int32_t *const *labels,
                                            const int32_t *out_labels, int out_rank, const tfe_einsum_opts *o) {
  /* every argument is checked before the key is built from it (ranks, counts, labels) */
  TFE_TRY(tfe__ein_request_check(expr, n, lay, labels, out_labels, out_rank, o, __func__));
  bool use = !(o && o->no_cache);
  tfe__ein_key k;
  uint64_t h = 0;
  if (use) {
    TFE_TRY(tfe__ein_make_key(&k, dt, expr, n, lay, labels, out_labels, out_rank, o));
    h = tfe__lru_hash(k.b, k.n);
    *plan = (tfe_einsum_plan *)tfe__lru_get(&tfe__st.einsum.cache, &tfe__ein_cache_vt, k.b, k.n, h);
    if (*plan) { tfe__ein_key_free(&k); return TFE_OK; }
  }
  tfe_status st = expr || !labels ? tfe_einsum_plan_new(plan, dt, expr, n, lay, o)
                                  : tfe_einsum_plan_new_labels(plan, dt, n, lay, labels, out_labels, out_rank, o);
  if (use) {
    if (st == TFE_OK)
      tfe__lru_put(&tfe__st.einsum.cache, &tfe__ein_cache_vt, (long)tfe__st.tune.einsum_plan_cache_size, k.b, k.n, h,
                   *plan);
    tfe__ein_key_free(&k);
  }
  return st;
}
#endif
