/* tests/test_stress.c — concurrent einsum and contract through the shared plan caches and the
 * two "keep the last block" workspace pools (core/workspace.h), checked against results made on
 * one thread. `make test-tsan` runs it under ThreadSanitizer (issue 19: a block was published
 * and its size read afterwards); `make test` runs it plainly. Threads are pthreads (TSan
 * intercepts pthread_create, not C11 threads). */
#include "testutil.h"
#include <pthread.h>

enum { ST_CASES = 6, ST_THREADS = 6 };
static double st_data[8192];

/* Case c on f64 (or max-plus for c == 4): einsum, sliced einsum, contract, a shared plan. */
typedef struct st_case { const char *expr; int n; int64_t dims[3][3]; int rank[3]; } st_case;
static const st_case st_cases[ST_CASES] = {
    {"abc,cd,de->abe", 3, {{6, 5, 7}, {7, 9}, {9, 4}}, {3, 2, 2}},
    {"ab,bc,cd->da", 3, {{8, 9}, {9, 10}, {10, 11}}, {2, 2, 2}},
    {"ij,jk->ik", 2, {{24, 30}, {30, 20}}, {2, 2}},
    {"abc,bcd->ad", 2, {{10, 6, 7}, {6, 7, 12}}, {3, 3}},
    {"ij,jk,kl->il", 3, {{12, 40}, {40, 16}, {16, 9}}, {2, 2, 2}},
    {"ab,bc,ca->", 3, {{16, 17}, {17, 18}, {18, 16}}, {2, 2, 2}},
};
static tfe_einsum_plan *st_plan; /* case 0's plan, shared by every thread */
static double *st_want[ST_CASES];
static int64_t st_nwant[ST_CASES];

static void st_views(int c, tfe_view_f64 *v) {
  const st_case *k = &st_cases[c];
  for (int i = 0; i < k->n; i++)
    assert_int_equal(tfe_wrap_f64(&v[i], st_data + 97 * i, 8192 - 97 * i, k->rank[i], k->dims[i], NULL, 0, TFE_COLMAJOR),
                     TFE_OK);
}
/* One run of case c; mode varies the entry point. Results into *out (released by the caller). */
static tfe_status st_run(int c, int mode, tfe_tensor_f64 *out) {
  tfe_view_f64 v[3];
  st_views(c, v);
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  if (mode == 1) o.memory_limit = 8 * 64; /* sliced: the accumulator buffer too */
  if (mode == 2 && c == 0) {
    tfe_status s = tfe_empty_f64(out, 3, (int64_t[]){6, 5, 4}, TFE_COLMAJOR);
    if (s == TFE_OK) s = tfe_einsum_execute_f64(st_plan, 1, v, 0, &out->v);
    return s;
  }
  if (mode == 3 && c == 2) {
    int32_t la[2] = {0, 1}, lb[2] = {1, 2}, lc[2] = {0, 2};
    tfe_status s = tfe_zeros_f64(out, 2, (int64_t[]){24, 20}, TFE_COLMAJOR);
    if (s == TFE_OK) s = tfe_contract_f64(1, &v[0], la, &v[1], lb, 0, &out->v, lc);
    return s;
  }
  return tfe_einsum_with_f64(out, st_cases[c].expr, st_cases[c].n, v, &o);
}
/* The max-plus einsum of case 4 (the tropical GEMM's workspace), as a sum of its values. */
static double st_trop(void) {
  tfe_view_maxplus_f64 v[3];
  tfe_view_f64 w[3];
  st_views(4, w);
  for (int i = 0; i < 3; i++) { v[i].data = (tfe_maxplus_f64 *)w[i].data; v[i].lay = w[i].lay; v[i].conj = false; }
  tfe_tensor_maxplus_f64 t = {0};
  if (tfe_einsum_maxplus_f64(&t, "ij,jk,kl->il", 3, v) != TFE_OK) return NAN;
  double s = 0;
  for (int64_t i = 0; i < tfe_layout_numel(&t.v.lay); i++) s += t.v.data[i].v;
  tfe_tensor_release_maxplus_f64(&t);
  return s;
}
static double st_trop_want;

typedef struct st_job { int id, iters; bool bad; char msg[700]; } st_job;
static void *st_worker(void *arg) {
  st_job *j = (st_job *)arg;
  tu_rng g = {(uint64_t)j->id * 7919 + 1};
  for (int it = 0; it < j->iters && !j->bad; it++) {
    int c = (int)tu_int(&g, 0, ST_CASES - 1), mode = (int)tu_int(&g, 0, 3);
    if (tu_int(&g, 0, 40) == 0) tfe_einsum_workspace_release(); /* racing the pools' slots */
    if (tu_int(&g, 0, 40) == 0) tfe_contract_workspace_release();
    if (tu_int(&g, 0, 60) == 0) tfe_einsum_cache_clear();
    if (tu_int(&g, 0, 8) == 0) {
      double s = st_trop();
      if (s != st_trop_want) { j->bad = true; snprintf(j->msg, sizeof j->msg, "max-plus sum %g, want %g", s, st_trop_want); }
      continue;
    }
    tfe_tensor_f64 t = {0};
    tfe_status s = st_run(c, mode, &t);
    if (s != TFE_OK) { j->bad = true; snprintf(j->msg, sizeof j->msg, "case %d mode %d: %s", c, mode, tfe_last_error()); }
    for (int64_t i = 0; s == TFE_OK && i < st_nwant[c]; i++)
      if (fabs(t.v.data[i] - st_want[c][i]) > 1e-9 * (1 + fabs(st_want[c][i]))) {
        j->bad = true;
        snprintf(j->msg, sizeof j->msg, "case %d mode %d element %lld: %g, want %g", c, mode, (long long)i, t.v.data[i],
                 st_want[c][i]);
        break;
      }
    tfe_tensor_release_f64(&t);
  }
  return NULL;
}

static void test_concurrent(void **state) {
  (void)state;
  for (int i = 0; i < 8192; i++) st_data[i] = (double)((i * 37) % 13) / 8 - 0.7;
  for (int c = 0; c < ST_CASES; c++) {
    tfe_tensor_f64 t = {0};
    assert_int_equal(st_run(c, 0, &t), TFE_OK);
    st_nwant[c] = tfe_layout_numel(&t.v.lay);
    st_want[c] = malloc((size_t)st_nwant[c] * sizeof(double) + 8);
    memcpy(st_want[c], t.v.data, (size_t)st_nwant[c] * sizeof(double));
    tfe_tensor_release_f64(&t);
  }
  st_trop_want = st_trop();
  tfe_view_f64 v[3];
  st_views(0, v);
  const tfe_layout *lay[3] = {&v[0].lay, &v[1].lay, &v[2].lay};
  assert_int_equal(tfe_einsum_plan_new(&st_plan, TFE_DT_F64, st_cases[0].expr, 3, lay, NULL), TFE_OK);
  tfe_tuning keep = tfe_tuning_get(), small = keep;
  small.einsum_plan_cache_size = 2; /* evictions in both caches while others look up */
  small.contract_plan_cache_size = 3;
  small.contract_naive_work = 0;    /* every contraction through the planned engines and their workspace */
  assert_int_equal(tfe_tuning_set(&small), TFE_OK);
  st_job jobs[ST_THREADS];
  pthread_t th[ST_THREADS];
  for (int i = 0; i < ST_THREADS; i++) {
    jobs[i] = (st_job){i, tu_cases(1500), false, ""};
    assert_int_equal(pthread_create(&th[i], NULL, st_worker, &jobs[i]), 0);
  }
  for (int i = 0; i < ST_THREADS; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < ST_THREADS; i++)
    if (jobs[i].bad) fail_msg("thread %d: %s", i, jobs[i].msg);
  assert_int_equal(tfe_tuning_set(&keep), TFE_OK);
  tfe_einsum_plan_release(st_plan);
  tfe_einsum_cache_clear();
  tfe_contract_cache_clear();
  tfe_einsum_workspace_release();
  tfe_contract_workspace_release();
  for (int c = 0; c < ST_CASES; c++) free(st_want[c]);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_concurrent)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
