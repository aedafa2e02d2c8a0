/* tenferro/prims/plan_cache.h — prims room: the process-wide cache of contraction plans.
 *
 * One keyed LRU cache (core/lru.h) holds the plans of the convenience calls
 * (tfe_contract_S, tfe_contract_unary_S) and the steps of einsum plans. The key is the plan's
 * own key (plan.h): kind, ranks, labels, dims, strides and flavor, as int64 words; a plan
 * carries its own cache entry, so caching it allocates nothing. The capacity is the tuning field
 * contract_plan_cache_size (256 by default); the least recently used plan is dropped when
 * it is full (callers holding that plan keep it). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_PLAN_CACHE_H
#define TENFERRO_PRIMS_PLAN_CACHE_H
#include <tenferro/prims/plan.h>

/* Drops every cached plan (plans held by callers stay valid). */
TFE_API void tfe_contract_cache_clear(void);
/* Lookups that found a plan, and those that did not, since the start of the process. */
TFE_API void tfe_contract_cache_stats(long *hits, long *misses);
/* Plans cached now, the capacity (contract_plan_cache_size) and how many were evicted so far. */
TFE_API void tfe_contract_cache_info(long *entries, long *capacity, long *evictions);

#endif
#elif !defined(TENFERRO_PRIMS_PLAN_CACHE_BODY) /* bodies */
#define TENFERRO_PRIMS_PLAN_CACHE_BODY
#include <tenferro/prims/plan.h>

TFE_INTERNAL void tfe__pr_plan_retain_v(void *p) { tfe_contract_plan_retain((tfe_contract_plan *)p); }
TFE_INTERNAL void tfe__pr_plan_release_v(void *p) { tfe_contract_plan_release((tfe_contract_plan *)p); }
static const tfe__lru_vt tfe__pr_cache_vt = {tfe__pr_plan_retain_v, tfe__pr_plan_release_v};

TFE_API void tfe_contract_cache_clear(void) { tfe__lru_clear(&tfe__st.prims.cache, &tfe__pr_cache_vt); }
TFE_API void tfe_contract_cache_stats(long *hits, long *misses) {
  tfe__lru_stats(&tfe__st.prims.cache, NULL, hits, misses, NULL);
}
TFE_API void tfe_contract_cache_info(long *entries, long *capacity, long *evictions) {
  tfe__lru_stats(&tfe__st.prims.cache, entries, NULL, NULL, evictions);
  if (capacity) *capacity = (long)tfe__st.tune.contract_plan_cache_size;
}

/* A plan for this contraction from the process-wide cache, made and cached on a miss. */
TFE_INTERNAL tfe_status tfe__pr_plan_cached(tfe_contract_plan **out, tfe_dtype dt, const tfe_layout *A, const int32_t *la,
                                            const tfe_layout *B, const int32_t *lb, const tfe_layout *C,
                                            const int32_t *lc, tfe__pr_flavor flavor, const char *where) {
  const tfe_layout *L[3] = {A, B, C};
  const int32_t *lab[3] = {la, lb, lc};
  bool keyable = true;
  for (int op = 0; op < 3; op++)
    if (L[op]) keyable = keyable && L[op]->rank >= 0 && L[op]->rank <= TFE_MAX_RANK && (L[op]->rank == 0 || lab[op]);
  if (keyable) {
    int64_t key[TFE__PR_KEYMAX];
    size_t bytes = (size_t)tfe__pr_key_len(A, B, C) * sizeof *key;
    tfe__pr_key_fill(key, dt, A, la, B, lb, C, lc, flavor);
    *out = (tfe_contract_plan *)tfe__lru_get(&tfe__st.prims.cache, &tfe__pr_cache_vt, key, bytes,
                                             tfe__lru_hash(key, bytes));
    if (*out) return TFE_OK;
  }
  TFE_TRY(tfe__pr_plan_make(out, dt, A, la, B, lb, C, lc, flavor, where));
  tfe_contract_plan *P = *out;
  tfe__lru_put_node(&tfe__st.prims.cache, &tfe__pr_cache_vt, (long)tfe__st.tune.contract_plan_cache_size, &P->node,
                    P->key, (size_t)P->nkey * sizeof *P->key, P->hash, P);
  return TFE_OK;
}
#endif
