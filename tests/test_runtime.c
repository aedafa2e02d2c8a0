/* tests/test_runtime.c — the runtime room: streams, events, asynchronous forms against the
 * synchronous ones (randomized task graphs over 1-4 streams), error propagation, overlapping
 * writers, compute devices, scoped overrides and the #602 dispatch order level by level.
 * Built under ThreadSanitizer by `make test-tsan` (TSAN_TESTS in the Makefile). */
#include <pthread.h> /* not C11 threads: ThreadSanitizer intercepts pthread_create only */
#include <math.h>
#include <sched.h>
#include <time.h>
#include "testutil.h"

/* ---- helpers ----------------------------------------------------------------------------- */
static tfe_dyn rt_rand(tu_rng *r, int64_t m, int64_t n) {
  tfe_dyn x;
  int64_t d[2] = {m, n};
  assert_int_equal(tfe_dyn_empty(&x, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  double *p = (double *)x.data;
  for (int64_t i = 0; i < m * n; i++) p[i] = tu_unif(r) - 0.5;
  return x;
}
static double rt_at(const tfe_dyn *x, int64_t i, int64_t j) {
  double v = 0;
  int64_t idx[2] = {i, j};
  assert_int_equal(tfe_dyn_get(x, idx, &v), TFE_OK);
  return v;
}
/* max |x - y| over all elements, relative to max |y| (1 when shapes differ) */
static double rt_diff(const tfe_dyn *x, const tfe_dyn *y) {
  if (x->lay.rank != y->lay.rank) return 1;
  for (int i = 0; i < x->lay.rank; i++)
    if (x->lay.dims[i] != y->lay.dims[i]) return 1;
  int64_t m = x->lay.rank > 0 ? x->lay.dims[0] : 1, n = x->lay.rank > 1 ? x->lay.dims[1] : 1;
  double d = 0, s = 1e-300;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double a, b;
      int64_t idx[2] = {i, j};
      assert_int_equal(tfe_dyn_get(x, idx, &a), TFE_OK);
      assert_int_equal(tfe_dyn_get(y, idx, &b), TFE_OK);
      if (fabs(a - b) > d) d = fabs(a - b);
      if (fabs(b) > s) s = fabs(b);
    }
  return d / s;
}
static double rt_now_ms(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}
static void rt_sleep_ms(int ms) { /* nanosleep is POSIX, hidden by -std=c11 under clang */
  for (double end = rt_now_ms() + ms; rt_now_ms() < end;) sched_yield();
}
/* A gate: a user event some stream waits on, so that what follows stays pending. */
static tfe_event *rt_gate(tfe_stream *s) {
  tfe_event *g;
  assert_int_equal(tfe_event_new(&g), TFE_OK);
  assert_int_equal(tfe_stream_wait_event(s, g), TFE_OK);
  return g;
}

/* A host function that opens a gate a little later (from another stream's worker). */
static tfe_status rt_open_gate_later(void *gate) {
  rt_sleep_ms(30);
  return tfe_event_signal((tfe_event *)gate, TFE_OK, NULL);
}

/* ---- basics -------------------------------------------------------------------------------- */
static void test_einsum_async(void **st) {
  (void)st;
  tu_rng r = {11};
  tfe_stream *s = NULL;
  assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
  tfe_dyn a = rt_rand(&r, 7, 5), b = rt_rand(&r, 5, 6), ops[2] = {a, b}, c, ref;
  assert_int_equal(tfe_einsum_async_dyn(s, &c, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  assert_int_equal(tfe_einsum_dyn(&ref, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  assert_int_equal(tfe_wait(&c), TFE_OK);
  assert_true(tfe_ready(&c));
  assert_true(rt_diff(&c, &ref) == 0);
  /* the typed form */
  tfe_tensor_f64 ta, tb, tc = {0};
  assert_int_equal(tfe_dyn_as_tensor_f64(&a, &ta), TFE_OK);
  assert_int_equal(tfe_dyn_as_tensor_f64(&b, &tb), TFE_OK);
  tfe_tensor_f64 tops[2] = {ta, tb};
  assert_int_equal(tfe_einsum_async(s, &tc, "ij,jk->ik", 2, tops, NULL), TFE_OK);
  tfe_dyn dc;
  assert_int_equal(tfe_tensor_to_dyn_f64(&tc, &dc), TFE_OK);
  assert_int_equal(tfe_wait(&dc), TFE_OK);
  assert_true(rt_diff(&dc, &ref) == 0);
  /* bad input fails at submission, with the synchronous message */
  tfe_dyn bad[2] = {a, a};
  TU_EXPECT_ERR(tfe_einsum_async_dyn(s, &c, "ij,jk->ik", 2, bad, NULL), TFE_ERR_SHAPE, "label 'j' has size 7");
  TU_EXPECT_ERR(tfe_einsum_async_dyn(NULL, &c, "ij,jk->ik", 2, ops, NULL), TFE_ERR_NULL, "no stream given");
  /* a pending result read through the synchronous API: the call waits */
  tfe_event *g = rt_gate(s);
  tfe_dyn c2, c3;
  assert_int_equal(tfe_einsum_async_dyn(s, &c2, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  assert_false(tfe_ready(&c2));
  assert_int_equal(tfe_event_signal(g, TFE_OK, NULL), TFE_OK);
  tfe_dyn ops2[1] = {c2};
  assert_int_equal(tfe_einsum_dyn(&c3, "ik->ik", 1, ops2, NULL), TFE_OK);
  assert_true(rt_diff(&c3, &ref) == 0);
  tfe_event_release(g);
  /* element access waits too: a read for pending writes, a write for pending reads */
  tfe_stream *s2 = NULL;
  assert_int_equal(tfe_stream_new(0, &s2), TFE_OK);
  g = rt_gate(s);
  tfe_dyn c4, c5;
  assert_int_equal(tfe_einsum_async_dyn(s, &c4, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  tfe_event *opener = NULL;
  assert_int_equal(tfe_stream_host_fn(s2, rt_open_gate_later, g, &opener), TFE_OK);
  double v = -1, want = 0;
  int64_t at[2] = {3, 4};
  assert_int_equal(tfe_dyn_get(&c4, at, &v), TFE_OK); /* blocks until the gate opens */
  assert_int_equal(tfe_dyn_get(&ref, at, &want), TFE_OK);
  assert_true(v == want && tfe_ready(&c4));
  tfe_event_release(g);
  tfe_event_release(opener);
  g = rt_gate(s);
  ops2[0] = a;
  assert_int_equal(tfe_einsum_async_dyn(s, &c5, "ik->ki", 1, ops2, NULL), TFE_OK); /* reads a */
  assert_int_equal(tfe_stream_host_fn(s2, rt_open_gate_later, g, &opener), TFE_OK);
  double a34 = 0, seven = 7;
  int64_t at2[2] = {3, 4};
  assert_int_equal(tfe_dyn_get(&a, at2, &a34), TFE_OK);   /* reads do not wait for reads */
  assert_int_equal(tfe_dyn_set(&a, at2, &seven), TFE_OK); /* waits for the transpose */
  assert_true(tfe_ready(&c5));
  int64_t at3[2] = {4, 3};
  double t43 = 0;
  assert_int_equal(tfe_dyn_get(&c5, at3, &t43), TFE_OK);
  assert_true(t43 == a34); /* the transpose read a before the write */
  tfe_event_release(g); tfe_event_release(opener);
  tfe_stream_free(s2);
  tfe_dyn_release(&c4); tfe_dyn_release(&c5);
  tfe_stream_free(s);
  tfe_dyn_release(&c); tfe_dyn_release(&c2); tfe_dyn_release(&c3); tfe_dyn_release(&dc);
  tfe_tensor_release_f64(&ta); tfe_tensor_release_f64(&tb); tfe_tensor_release_f64(&tc);
  tfe_dyn_release(&ref); tfe_dyn_release(&a); tfe_dyn_release(&b);
}

/* Every asynchronous form against its synchronous one. */
static void test_async_forms(void **st) {
  (void)st;
  tu_rng r = {12};
  tfe_stream *s = NULL;
  assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
  tfe_dyn a = rt_rand(&r, 6, 6), b = rt_rand(&r, 6, 6), y1, y2;
  int64_t d[2] = {6, 6}, d1[1] = {6};
  assert_int_equal(tfe_dyn_zeros(&y1, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_dyn_zeros(&y2, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  /* contraction */
  double one = 1, zero = 0;
  int32_t la[2] = {0, 1}, lb[2] = {1, 2}, lc[2] = {0, 2};
  assert_int_equal(tfe_contract_async_dyn(s, &one, &a, la, &b, lb, &zero, &y1, lc), TFE_OK);
  assert_int_equal(tfe_contract_dyn(&one, &a, la, &b, lb, &zero, &y2, lc), TFE_OK);
  assert_int_equal(tfe_wait(&y1), TFE_OK);
  assert_true(rt_diff(&y1, &y2) == 0);
  /* map, zip, copy */
  assert_int_equal(tfe_map_async_dyn(s, &y1, &a, TFE_UN_SQUARE, NULL), TFE_OK);
  assert_int_equal(tfe_map_dyn(&y2, &a, TFE_UN_SQUARE, NULL), TFE_OK);
  assert_int_equal(tfe_wait(&y1), TFE_OK);
  assert_true(rt_diff(&y1, &y2) == 0);
  assert_int_equal(tfe_zip_async_dyn(s, &y1, &a, &b, TFE_BIN_SUB), TFE_OK);
  assert_int_equal(tfe_zip_dyn(&y2, &a, &b, TFE_BIN_SUB), TFE_OK);
  assert_int_equal(tfe_wait(&y1), TFE_OK);
  assert_true(rt_diff(&y1, &y2) == 0);
  tfe_dyn at;
  int perm[2] = {1, 0};
  assert_int_equal(tfe_dyn_permute(&a, perm, &at), TFE_OK);
  assert_int_equal(tfe_copy_async_dyn(s, &y1, &at), TFE_OK);
  assert_int_equal(tfe_wait(&y1), TFE_OK);
  assert_true(rt_at(&y1, 1, 2) == rt_at(&a, 2, 1));
  /* reduce over axis 1 */
  tfe_dyn r1, r2;
  assert_int_equal(tfe_dyn_zeros(&r1, TFE_DT_F64, 1, d1, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_dyn_zeros(&r2, TFE_DT_F64, 1, d1, TFE_COLMAJOR), TFE_OK);
  int ax[1] = {1};
  assert_int_equal(tfe_reduce_async_dyn(s, &r1, &a, TFE_RED_SUM, 1, ax, NULL, NULL), TFE_OK);
  tfe_view_f64 rv, av;
  assert_int_equal(tfe_dyn_as_view_f64(&r2, &rv), TFE_OK);
  assert_int_equal(tfe_dyn_as_view_f64(&a, &av), TFE_OK);
  assert_int_equal(tfe_reduce_f64(&rv, &av, TFE_RED_SUM, 1, ax, 1.0, 0.0), TFE_OK);
  assert_int_equal(tfe_wait(&r1), TFE_OK);
  assert_true(rt_diff(&r1, &r2) == 0);
  /* transfer (host to host) */
  tfe_dyn tr;
  assert_int_equal(tfe_transfer_async_dyn(s, &tr, &at, TFE_HOST), TFE_OK);
  assert_int_equal(tfe_wait(&tr), TFE_OK);
  assert_true(rt_at(&tr, 3, 4) == rt_at(&a, 4, 3));
  tfe_memspace g0 = {TFE_MEM_GPU, 0};
  tfe_dyn tr2;
  TU_EXPECT_ERR(tfe_transfer_async_dyn(s, &tr2, &a, g0), TFE_ERR_UNSUPPORTED, "come with a GPU backend");
  /* linalg: svd, qr, eigh, solve */
  tfe_dyn U1, S1, V1, U2, S2, V2;
  assert_int_equal(tfe_svd_async_dyn(s, &a, TFE_SVD_THIN, &U1, &S1, &V1), TFE_OK);
  assert_int_equal(tfe_svd_dyn(&a, TFE_SVD_THIN, &U2, &S2, &V2), TFE_OK);
  assert_int_equal(tfe_wait(&U1), TFE_OK);
  assert_true(rt_diff(&U1, &U2) == 0 && rt_diff(&S1, &S2) == 0 && rt_diff(&V1, &V2) == 0);
  tfe_dyn Q1, R1, Q2, R2;
  assert_int_equal(tfe_qr_async_dyn(s, &a, false, &Q1, &R1), TFE_OK);
  assert_int_equal(tfe_qr_dyn(&a, false, &Q2, &R2), TFE_OK);
  assert_int_equal(tfe_wait(&R1), TFE_OK);
  assert_true(rt_diff(&Q1, &Q2) == 0 && rt_diff(&R1, &R2) == 0);
  tfe_dyn h, ops[2] = {a, at}, W1, E1, W2, E2;
  assert_int_equal(tfe_einsum_dyn(&h, "ij,jk->ik", 2, ops, NULL), TFE_OK); /* a a^T: symmetric */
  assert_int_equal(tfe_eigh_async_dyn(s, &h, &W1, &E1), TFE_OK);
  assert_int_equal(tfe_eigh_dyn(&h, &W2, &E2), TFE_OK);
  assert_int_equal(tfe_wait(&E1), TFE_OK);
  assert_true(rt_diff(&W1, &W2) == 0 && rt_diff(&E1, &E2) == 0);
  tfe_dyn X1, X2;
  assert_int_equal(tfe_solve_async_dyn(s, &a, &b, &X1), TFE_OK);
  assert_int_equal(tfe_solve_dyn(&a, &b, &X2), TFE_OK);
  assert_int_equal(tfe_wait(&X1), TFE_OK);
  assert_true(rt_diff(&X1, &X2) == 0);
  assert_int_equal(tfe_stream_sync(s), TFE_OK);
  tfe_stream_free(s);
  tfe_dyn *all[] = {&a, &b, &y1, &y2, &at, &r1, &r2, &tr, &U1, &S1, &V1, &U2, &S2, &V2, &Q1, &R1, &Q2, &R2,
                    &h, &W1, &E1, &W2, &E2, &X1, &X2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfe_dyn_release(all[i]);
}

/* ---- randomized task graphs ------------------------------------------------------------------ */
#define RG_MAX 24
typedef struct { tfe_dyn async, sync; bool live; } rg_slot;
/* One random step: the same operation on the asynchronous and the synchronous copies. */
static void rg_step(tu_rng *r, tfe_stream **ss, int ns, rg_slot *T, int *nt) {
  tfe_stream *s = ss[tu_int(r, 0, ns - 1)];
  int i = (int)tu_int(r, 0, *nt - 1), j = (int)tu_int(r, 0, *nt - 1), op = (int)tu_int(r, 0, 5);
  if (op <= 1 && *nt < RG_MAX) { /* a new result: matmul or elementwise product by einsum */
    const char *e = op == 0 ? "ij,jk->ik" : "ij,ij->ij";
    tfe_dyn oa[2] = {T[i].async, T[j].async}, os[2] = {T[i].sync, T[j].sync};
    rg_slot *o = &T[(*nt)++];
    assert_int_equal(tfe_einsum_async_dyn(s, &o->async, e, 2, oa, NULL), TFE_OK);
    assert_int_equal(tfe_einsum_dyn(&o->sync, e, 2, os, NULL), TFE_OK);
    return;
  }
  int k = (int)tu_int(r, 0, *nt - 1); /* overwrite slot k */
  tfe_status sa;
  if (op == 2 || op == 3) {
    sa = tfe_zip_async_dyn(s, &T[k].async, &T[i].async, &T[j].async, op == 2 ? TFE_BIN_ADD : TFE_BIN_SUB);
    if (sa == TFE_OK) assert_int_equal(tfe_zip_dyn(&T[k].sync, &T[i].sync, &T[j].sync, op == 2 ? TFE_BIN_ADD : TFE_BIN_SUB), TFE_OK);
  } else if (op == 4) {
    tfe_dyn oa[2] = {T[i].async, T[j].async}, os[2] = {T[i].sync, T[j].sync};
    if (k == i || k == j) return; /* an output aliasing an input: refused by einsum itself */
    sa = tfe_einsum_into_async_dyn(s, &T[k].async, "ij,kj->ik", 2, oa, NULL);
    if (sa == TFE_OK) assert_int_equal(tfe_einsum_into_dyn(&T[k].sync, "ij,kj->ik", 2, os, NULL), TFE_OK);
  } else {
    sa = tfe_map_async_dyn(s, &T[k].async, &T[i].async, TFE_UN_NEG, NULL);
    if (sa == TFE_OK) assert_int_equal(tfe_map_dyn(&T[k].sync, &T[i].sync, TFE_UN_NEG, NULL), TFE_OK);
  }
  /* refused only when another stream is still writing slot k */
  if (sa != TFE_OK) {
    assert_int_equal(sa, TFE_ERR_OVERLAP);
    assert_non_null(strstr(tfe_last_error(), "another stream is still writing"));
  }
}
static void test_random_graphs(void **st) {
  (void)st;
  tu_rng r = {2024};
  int graphs = tu_cases(40);
  for (int g = 0; g < graphs; g++) {
    int ns = (int)tu_int(&r, 1, 4), steps = (int)tu_int(&r, 4, 30);
    int64_t n = tu_int(&r, 1, 12);
    tfe_stream *ss[4];
    for (int k = 0; k < ns; k++) assert_int_equal(tfe_stream_new(0, &ss[k]), TFE_OK);
    rg_slot T[RG_MAX];
    int nt = 3;
    for (int k = 0; k < nt; k++) {
      T[k].async = rt_rand(&r, n, n);
      assert_int_equal(tfe_dyn_empty(&T[k].sync, TFE_DT_F64, 2, T[k].async.lay.dims, TFE_COLMAJOR), TFE_OK);
      assert_int_equal(tfe_copy_dyn(&T[k].sync, &T[k].async), TFE_OK);
    }
    for (int q = 0; q < steps; q++) rg_step(&r, ss, ns, T, &nt);
    for (int k = 0; k < nt; k++) {
      assert_int_equal(tfe_wait(&T[k].async), TFE_OK);
      double d = rt_diff(&T[k].async, &T[k].sync);
      if (d > 1e-12) fail_msg("graph %d (streams %d, n %lld): slot %d differs by %g", g, ns, (long long)n, k, d);
    }
    for (int k = 0; k < ns; k++) tfe_stream_free(ss[k]);
    for (int k = 0; k < nt; k++) { tfe_dyn_release(&T[k].async); tfe_dyn_release(&T[k].sync); }
  }
}

/* ---- errors ------------------------------------------------------------------------------------ */
static void test_errors(void **st) {
  (void)st;
  tfe_stream *s1 = NULL, *s2 = NULL;
  assert_int_equal(tfe_stream_new(0, &s1), TFE_OK);
  assert_int_equal(tfe_stream_new(0, &s2), TFE_OK);
  /* device stream hooks: only for a registered backend, and whole */
  tfe_stream_hooks half = {0};
  TU_EXPECT_ERR(tfe_device_set_hooks(-1, NULL), TFE_ERR_DEVICE, "device -1 is not a registered backend");
  TU_EXPECT_ERR(tfe_device_set_hooks(TFE_BACKEND_MAX, NULL), TFE_ERR_DEVICE, "is not a registered backend");
  TU_EXPECT_ERR(tfe_device_set_hooks(0, &half), TFE_ERR_NULL, "every stream hook but pool_stats is needed");
  assert_null(tfe_stream_queue(s1)); /* a CPU stream has no vendor queue */
  int64_t d[2] = {3, 3};
  tfe_dyn z, b, x, y;
  assert_int_equal(tfe_dyn_zeros(&z, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK); /* singular */
  assert_int_equal(tfe_dyn_ones(&b, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  char sync_msg[TFE_ERRMSG_MAX];
  tfe_status sync_st = tfe_solve_dyn(&z, &b, &x);
  assert_int_not_equal(sync_st, TFE_OK);
  snprintf(sync_msg, sizeof sync_msg, "%s", tfe_last_error());
  /* the stream's failure surfaces at wait, with the synchronous call's message */
  assert_int_equal(tfe_solve_async_dyn(s1, &z, &b, &x), TFE_OK);
  tfe_clear_error();
  assert_int_equal(tfe_wait(&x), sync_st);
  assert_string_equal(tfe_last_error(), sync_msg);
  /* a task on another stream reading the failed result fails with the same message */
  tfe_dyn ops[2] = {x, b};
  assert_int_equal(tfe_einsum_async_dyn(s2, &y, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  assert_int_equal(tfe_wait(&y), sync_st);
  assert_string_equal(tfe_last_error(), sync_msg);
  /* the synchronous API reading it hears it too */
  tfe_dyn w;
  TU_EXPECT_ERR(tfe_einsum_dyn(&w, "ij->ji", 1, &x, NULL), sync_st, sync_msg);
  /* tfe_stream_sync reports the first failure once */
  assert_int_equal(tfe_stream_sync(s1), sync_st);
  assert_string_equal(tfe_last_error(), sync_msg);
  assert_int_equal(tfe_stream_sync(s1), TFE_OK);
  assert_int_equal(tfe_stream_sync(s2), sync_st);
  /* rewriting the failed view clears the failure */
  assert_int_equal(tfe_copy_async_dyn(s1, &x, &b), TFE_OK);
  assert_int_equal(tfe_wait(&x), TFE_OK);
  /* a failed user event fails the tasks of a stream that waits for it */
  tfe_event *e = NULL;
  assert_int_equal(tfe_event_new(&e), TFE_OK);
  assert_int_equal(tfe_stream_wait_event(s2, e), TFE_OK);
  tfe_dyn y2;
  assert_int_equal(tfe_einsum_async_dyn(s2, &y2, "ij->ji", 1, &b, NULL), TFE_OK);
  assert_int_equal(tfe_event_signal(e, TFE_ERR_IO, "host: the input file vanished"), TFE_OK);
  TU_EXPECT_ERR(tfe_event_signal(e, TFE_OK, NULL), TFE_ERR_INVALID, "completed already");
  assert_int_equal(tfe_wait(&y2), TFE_ERR_IO);
  assert_string_equal(tfe_last_error(), "host: the input file vanished");
  tfe_event_release(e);
  tfe_stream_free(s1);
  tfe_stream_free(s2);
  tfe_dyn *all[] = {&z, &b, &x, &y, &y2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfe_dyn_release(all[i]);
}

/* Disjoint halves written from two streams at once; overlapping writers refused. */
static void test_writers(void **st) {
  (void)st;
  tfe_stream *s1 = NULL, *s2 = NULL;
  assert_int_equal(tfe_stream_new(0, &s1), TFE_OK);
  assert_int_equal(tfe_stream_new(0, &s2), TFE_OK);
  int64_t d[2] = {8, 8}, h[2] = {8, 4};
  tfe_dyn big, left, right, mid, src;
  assert_int_equal(tfe_dyn_zeros(&big, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_dyn_ones(&src, TFE_DT_F64, 2, h, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_dyn_slice_axis(&big, 1, 0, 4, 1, &left), TFE_OK);
  assert_int_equal(tfe_dyn_slice_axis(&big, 1, 4, 8, 1, &right), TFE_OK);
  assert_int_equal(tfe_dyn_slice_axis(&big, 1, 2, 6, 1, &mid), TFE_OK);
  tfe_event *g1 = rt_gate(s1), *g2 = rt_gate(s2);
  assert_int_equal(tfe_copy_async_dyn(s1, &left, &src), TFE_OK);
  assert_int_equal(tfe_map_async_dyn(s2, &right, &src, TFE_UN_NEG, NULL), TFE_OK);
  TU_EXPECT_ERR(tfe_copy_async_dyn(s2, &mid, &src), TFE_ERR_OVERLAP, "dst overlaps elements that another stream");
  /* the same stream may write it again: its FIFO orders the two */
  assert_int_equal(tfe_map_async_dyn(s1, &left, &src, TFE_UN_SQUARE, NULL), TFE_OK);
  assert_false(tfe_ready(&left));
  assert_true(tfe_ready(&src));
  tfe_event_signal(g1, TFE_OK, NULL);
  tfe_event_signal(g2, TFE_OK, NULL);
  assert_int_equal(tfe_wait(&big), TFE_OK);
  assert_true(rt_at(&big, 3, 1) == 1 && rt_at(&big, 3, 6) == -1);
  /* once the writers are done, the overlapping view may be written */
  assert_int_equal(tfe_copy_async_dyn(s2, &mid, &src), TFE_OK);
  assert_int_equal(tfe_wait(&mid), TFE_OK);
  /* a writer waits for pending readers of another stream (write after read) */
  tfe_event *g3 = rt_gate(s1);
  tfe_dyn t1;
  assert_int_equal(tfe_einsum_async_dyn(s1, &t1, "ij->ij", 1, &left, NULL), TFE_OK); /* reads left */
  assert_int_equal(tfe_map_async_dyn(s2, &left, &src, TFE_UN_NEG, NULL), TFE_OK);   /* writes it */
  rt_sleep_ms(20);
  assert_false(tfe_ready(&left)); /* held back by s1's pending read */
  tfe_event_signal(g3, TFE_OK, NULL);
  assert_int_equal(tfe_wait(&t1), TFE_OK);
  assert_int_equal(tfe_wait(&left), TFE_OK);
  assert_true(rt_at(&t1, 0, 0) == 1 && rt_at(&left, 0, 0) == -1);
  tfe_event_release(g1); tfe_event_release(g2); tfe_event_release(g3);
  tfe_stream_free(s1);
  tfe_stream_free(s2);
  tfe_dyn *all[] = {&big, &left, &right, &mid, &src, &t1};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfe_dyn_release(all[i]);
}

/* ---- devices, scopes, the dispatch order ------------------------------------------------------- */
static tfe_status rt_count_threads(void *arg) {
  *(int *)arg = tfe_get_num_threads();
  return TFE_OK;
}
static tfe_status rt_fail_fn(void *arg) {
  (void)arg;
  return TFE_FAIL(TFE_ERR_INVALID, "host function says no");
}
static void test_devices(void **st) {
  (void)st;
  tfe_device_info info[TFE_BACKEND_MAX + TFE_CPU_POOLS_MAX];
  int n = tfe_device_list(info, TFE_BACKEND_MAX + TFE_CPU_POOLS_MAX);
  assert_true(n >= 1 && n == tfe_device_count());
  assert_int_equal(info[0].id, 0);
  assert_string_equal(info[0].name, "cpu:0");
  assert_int_equal(info[0].kind, TFE_DEV_CPU);
  assert_true(info[0].memory_bytes > 0);
  assert_true(tfe_numa_nodes() >= 1);
  int pool = -1, id = -1;
  assert_int_equal(tfe_cpu_device_add(1, -1, &pool), TFE_OK);
  assert_true(pool >= TFE_BACKEND_MAX);
  tfe_device_info pi;
  assert_int_equal(tfe_device_get(pool, &pi), TFE_OK);
  assert_int_equal(pi.threads, 1);
  assert_int_equal(tfe_device_find(pi.name, &id), TFE_OK);
  assert_int_equal(id, pool);
  TU_EXPECT_ERR(tfe_device_find("tpu:9", &id), TFE_ERR_DEVICE, "no compute device is named 'tpu:9'");
  TU_EXPECT_ERR(tfe_device_get(999, &pi), TFE_ERR_DEVICE, "no compute device has id 999");
  TU_EXPECT_ERR(tfe_cpu_device_add(0, -1, &id), TFE_ERR_INVALID, "1 to 4096 threads");
  TU_EXPECT_ERR(tfe_cpu_device_add(1, 4096, &id), TFE_ERR_INVALID, "NUMA node 4096 does not exist");
  TU_EXPECT_ERR(tfe_stream_new(999, NULL), TFE_ERR_NULL, "out");
  tfe_stream *s = NULL;
  TU_EXPECT_ERR(tfe_stream_new(999, &s), TFE_ERR_DEVICE, "no compute device has id 999");
  /* a stream of the pool runs its tasks with the pool's thread count */
  assert_int_equal(tfe_stream_new(pool, &s), TFE_OK);
  assert_int_equal(tfe_stream_device(s), pool);
  int seen = -1;
  tfe_event *e = NULL;
  assert_int_equal(tfe_stream_host_fn(s, rt_count_threads, &seen, &e), TFE_OK);
  assert_int_equal(tfe_event_wait(e), TFE_OK);
  assert_int_equal(seen, 1);
  tfe_event_release(e);
  assert_int_equal(tfe_stream_host_fn(s, rt_fail_fn, NULL, &e), TFE_OK);
  TU_EXPECT_ERR(tfe_event_wait(e), TFE_ERR_INVALID, "host function says no");
  tfe_event_release(e);
  tfe_stream_free(s);
  /* the tensor compute device: get, set, with */
  int64_t d[2] = {2, 2};
  tfe_dyn x = {0}, y = {0};
  assert_int_equal(tfe_dyn_ones(&x, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_dyn_device(&x), -1);
  assert_int_equal(tfe_dyn_with_device(&x, pool, &y), TFE_OK);
  assert_int_equal(tfe_dyn_device(&y), pool);
  assert_int_equal(tfe_dyn_device(&x), -1);
  assert_ptr_equal(y.data, x.data);
  assert_int_equal(tfe_dyn_set_device(&x, 0), TFE_OK);
  assert_int_equal(tfe_dyn_device(&x), 0);
  TU_EXPECT_ERR(tfe_dyn_set_device(&x, 999), TFE_ERR_DEVICE, "no compute device has id 999");
  /* work pending on y (re-tagged) is pending on x: one record for the shared elements */
  assert_int_equal(tfe_stream_new(pool, &s), TFE_OK);
  tfe_event *g = rt_gate(s);
  assert_int_equal(tfe_map_async_dyn(s, &y, &y, TFE_UN_NEG, NULL), TFE_OK);
  assert_false(tfe_ready(&x));
  tfe_event_signal(g, TFE_OK, NULL);
  assert_int_equal(tfe_wait(&x), TFE_OK);
  assert_true(rt_at(&x, 1, 1) == -1);
  tfe_event_release(g);
  tfe_stream_free(s);
  tfe_dyn_release(&y);
  tfe_dyn_release(&x);
}

/* The choice of a call's backend, level by level (tenferro issue #602). */
static tfe_prims_backend rt_backend(const char *name, tfe_memspace space, int flags) {
  tfe_prims_backend b = *tfe_backend_find("cpu");
  b.name = name;
  b.space = space;
  b.flags = flags;
  return b;
}
static void test_dispatch_order(void **st) {
  (void)st;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu"), *be = NULL;
  tfe_prims_backend b1 = rt_backend("rt_one", TFE_HOST, 0), b2 = rt_backend("rt_two", TFE_HOST, 0);
  int id1, id2, pool;
  assert_int_equal(tfe_backend_register(&b1, &id1), TFE_OK);
  assert_int_equal(tfe_backend_register(&b2, &id2), TFE_OK);
  assert_int_equal(tfe_cpu_device_add(2, -1, &pool), TFE_OK);
  const tfe_prims_backend *one = tfe_backend_get(id1), *two = tfe_backend_get(id2);
  double buf[4];
  tfe_storage *plain = NULL, *tagged = NULL;
  assert_int_equal(tfe_storage_wrap(buf, sizeof buf, TFE_HOST, NULL, NULL, &plain), TFE_OK);
  assert_int_equal(tfe_storage_wrap(buf, sizeof buf, TFE_HOST, NULL, NULL, &tagged), TFE_OK);
  tfe_storage_set_device(tagged, id1);
  tfe_operand_place P[2] = {{"A", plain}, {"B", plain}}, T[2] = {{"A", plain}, {"B", tagged}};
  tfe_backend_rule rule;
  /* 5. memory space */
  assert_int_equal(tfe_backend_select(NULL, 2, P, false, &be, &rule), TFE_OK);
  assert_true(be == cpu && rule == TFE_RULE_MEMORY_SPACE);
  /* 4. scoped context beats the memory space */
  tfe_context ctx = {id2, 0, NULL, NULL};
  assert_int_equal(tfe_with_context(&ctx), TFE_OK);
  assert_int_equal(tfe_backend_select(NULL, 2, P, false, &be, &rule), TFE_OK);
  assert_true(be == two && rule == TFE_RULE_SCOPED_CONTEXT);
  /* 3. scoped device beats the context */
  assert_int_equal(tfe_with_device(pool), TFE_OK);
  assert_int_equal(tfe_scoped_device(), pool);
  assert_int_equal(tfe_backend_select(NULL, 2, P, false, &be, &rule), TFE_OK);
  assert_true(be == cpu && rule == TFE_RULE_SCOPED_DEVICE);
  /* nested: the innermost wins, and ending it restores the outer */
  assert_int_equal(tfe_with_device(id1), TFE_OK);
  assert_int_equal(tfe_backend_select(NULL, 2, P, false, &be, &rule), TFE_OK);
  assert_true(be == one && rule == TFE_RULE_SCOPED_DEVICE);
  assert_int_equal(tfe_end_device(), TFE_OK);
  assert_int_equal(tfe_scoped_device(), pool);
  /* 2. an operand's compute device beats the scopes */
  assert_int_equal(tfe_backend_select(NULL, 2, T, false, &be, &rule), TFE_OK);
  assert_true(be == one && rule == TFE_RULE_COMPUTE_DEVICE);
  /* 1. an explicit argument beats everything */
  assert_int_equal(tfe_backend_select(two, 2, T, false, &be, &rule), TFE_OK);
  assert_true(be == two && rule == TFE_RULE_ARGUMENT);
  assert_int_equal(tfe_end_device(), TFE_OK);
  assert_int_equal(tfe_end_context(), TFE_OK);
  assert_null(tfe_scoped_context());
  TU_EXPECT_ERR(tfe_end_device(), TFE_ERR_INVALID, "no scoped device is open");
  TU_EXPECT_ERR(tfe_end_context(), TFE_ERR_INVALID, "no scoped context is open");
  TU_EXPECT_ERR(tfe_with_device(999), TFE_ERR_DEVICE, "no compute device has id 999");
  tfe_context badctx = {999, 0, NULL, NULL};
  TU_EXPECT_ERR(tfe_with_context(&badctx), TFE_ERR_DEVICE, "names compute device 999");
  /* a CPU pool as an operand's compute device computes with the CPU backend */
  tfe_storage_set_device(tagged, pool);
  assert_int_equal(tfe_backend_select(NULL, 2, T, false, &be, &rule), TFE_OK);
  assert_true(be == cpu && rule == TFE_RULE_COMPUTE_DEVICE);
  /* ambiguity: operands naming different devices */
  tfe_storage *other = NULL;
  assert_int_equal(tfe_storage_wrap(buf, sizeof buf, TFE_HOST, NULL, NULL, &other), TFE_OK);
  tfe_storage_set_device(other, id2);
  tfe_operand_place amb[2] = {{"A", tagged}, {"B", other}};
  char want[96];
  snprintf(want, sizeof want, "ambiguous: A asks for compute device %d, B for compute device %d", pool, id2);
  TU_EXPECT_ERR(tfe_backend_select(NULL, 2, amb, false, &be, NULL), TFE_ERR_DEVICE, want);
  /* ambiguity at the memory-space level: two inferable backends for host memory */
  tfe_prims_backend b3 = rt_backend("rt_infer", TFE_HOST, TFE_BACKEND_INFER);
  assert_int_equal(tfe_backend_register(&b3, NULL), TFE_OK);
  TU_EXPECT_ERR(tfe_backend_select(NULL, 2, P, false, &be, NULL), TFE_ERR_DEVICE,
                "ambiguous: A, B (host memory, no compute device) could run on 'cpu', 'rt_infer'");
  /* ... which a scoped device settles */
  assert_int_equal(tfe_with_device(0), TFE_OK);
  assert_int_equal(tfe_backend_select(NULL, 2, P, false, &be, &rule), TFE_OK);
  assert_true(be == cpu && rule == TFE_RULE_SCOPED_DEVICE);
  assert_int_equal(tfe_end_device(), TFE_OK);
  assert_int_equal(tfe_backend_unregister("rt_infer"), TFE_OK);
  /* mixed memory spaces */
  tfe_memspace g0 = {TFE_MEM_GPU, 0};
  tfe_storage *gpu = NULL;
  assert_int_equal(tfe_storage_wrap(buf, sizeof buf, g0, NULL, NULL, &gpu), TFE_OK);
  tfe_operand_place mix[2] = {{"A", plain}, {"B", gpu}};
  TU_EXPECT_ERR(tfe_backend_select(NULL, 2, mix, false, &be, NULL), TFE_ERR_DEVICE,
                "A is in host memory, B in gpu:0 memory: operands in different memory spaces need an explicit transfer");
  assert_int_equal(tfe_with_device(0), TFE_OK);
  TU_EXPECT_ERR(tfe_backend_select(NULL, 2, mix, false, &be, NULL), TFE_ERR_DEVICE,
                "B is in gpu:0 memory but backend 'cpu' computes in host memory");
  assert_int_equal(tfe_end_device(), TFE_OK);
  /* the scoped device reaches typed calls on plain views (the hot path) */
  tfe_prims_backend gb = rt_backend("rt_gpu", g0, 0);
  int gid;
  assert_int_equal(tfe_backend_register(&gb, &gid), TFE_OK);
  tfe_tensor_f64 c = {0};
  tfe_view_f64 v;
  int64_t d2[2] = {2, 2};
  assert_int_equal(tfe_wrap(&v, buf, 4, 2, d2, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_with_device(gid), TFE_OK);
  TU_EXPECT_ERR(tfe_einsum(&c, "ij->ji", 1, &v), TFE_ERR_DEVICE, "computes in gpu:0 memory");
  assert_int_equal(tfe_end_device(), TFE_OK);
  assert_int_equal(tfe_einsum(&c, "ij->ji", 1, &v), TFE_OK);
  tfe_tensor_release_f64(&c);
  assert_int_equal(tfe_backend_unregister("rt_gpu"), TFE_OK);
  tfe_storage_release(plain); tfe_storage_release(tagged); tfe_storage_release(other); tfe_storage_release(gpu);
  assert_int_equal(tfe_backend_unregister("rt_one"), TFE_OK);
  assert_int_equal(tfe_backend_unregister("rt_two"), TFE_OK);
}

/* A scoped context: thread count, default stream, allocator of new storage. */
static long rt_ctx_allocs, rt_ctx_frees;
static void *rt_ctx_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  rt_ctx_allocs++;
  return aligned_alloc(align, (bytes + align - 1) / align * align + align);
}
static void rt_ctx_free(void *ctx, void *p) {
  (void)ctx;
  rt_ctx_frees++;
  free(p);
}
static void test_context(void **st) {
  (void)st;
  tfe_stream *s = NULL;
  assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
  tfe_allocator al = {rt_ctx_alloc, rt_ctx_free, NULL};
  tfe_context ctx = {-1, 3, s, &al};
  int before = tfe_get_num_threads();
  assert_int_equal(tfe_with_context(&ctx), TFE_OK);
  assert_int_equal(tfe_get_num_threads(), 3);
  tfe_context inner = {-1, 1, NULL, NULL};
  assert_int_equal(tfe_with_context(&inner), TFE_OK);
  assert_int_equal(tfe_get_num_threads(), 1);
  assert_int_equal(tfe_end_context(), TFE_OK);
  assert_int_equal(tfe_get_num_threads(), 3);
  int64_t d[2] = {4, 4};
  tfe_dyn x, y;
  assert_int_equal(tfe_dyn_ones(&x, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(rt_ctx_allocs, 1);
  /* stream NULL: the context's */
  assert_int_equal(tfe_einsum_async_dyn(NULL, &y, "ij->ji", 1, &x, NULL), TFE_OK);
  assert_int_equal(tfe_end_context(), TFE_OK);
  assert_int_equal(tfe_get_num_threads(), before);
  assert_int_equal(tfe_wait(&y), TFE_OK);
  assert_true(rt_at(&y, 2, 3) == 1);
  /* storage made in the scope goes back to the scope's allocator, wherever it is released */
  tfe_dyn_release(&x);
  tfe_dyn_release(&y);
  assert_int_equal(rt_ctx_frees, rt_ctx_allocs);
  tfe_allocator half = {rt_ctx_alloc, NULL, NULL};
  tfe_context badctx = {-1, 0, NULL, &half};
  TU_EXPECT_ERR(tfe_with_context(&badctx), TFE_ERR_INVALID, "needs both alloc and free");
  tfe_stream_free(s);
}

/* Two streams on a one-thread pool run independent contractions at once (on 2+ cores the
 * wall time of both is below the sum; only checked for correctness here). */
static void test_pool_streams(void **st) {
  (void)st;
  tu_rng r = {77};
  int pool;
  assert_int_equal(tfe_cpu_device_add(1, -1, &pool), TFE_OK);
  tfe_stream *s[2];
  for (int k = 0; k < 2; k++) assert_int_equal(tfe_stream_new(pool, &s[k]), TFE_OK);
  tfe_dyn a[6], c[6], ref[6];
  for (int k = 0; k < 6; k++) {
    a[k] = rt_rand(&r, 40, 40);
    tfe_dyn ops[2] = {a[k], a[k]};
    assert_int_equal(tfe_einsum_async_dyn(s[k % 2], &c[k], "ij,jk->ik", 2, ops, NULL), TFE_OK);
    assert_int_equal(tfe_einsum_dyn(&ref[k], "ij,jk->ik", 2, ops, NULL), TFE_OK);
  }
  for (int k = 0; k < 6; k++) {
    assert_int_equal(tfe_wait(&c[k]), TFE_OK);
    assert_true(rt_diff(&c[k], &ref[k]) < 1e-13);
    tfe_dyn_release(&a[k]); tfe_dyn_release(&c[k]); tfe_dyn_release(&ref[k]);
  }
  for (int k = 0; k < 2; k++) tfe_stream_free(s[k]);
}

/* Allocation failures inside submissions and tasks: an error (at once, or at wait), nothing
 * leaked. Each round has its own stream, freed before counting, so that every task is gone. */
static void test_alloc_failures(void **st) {
  (void)st;
  int64_t d[2] = {3, 3};
  tfe_dyn a, c, w0;
  assert_int_equal(tfe_dyn_ones(&a, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  tfe_dyn ops[2] = {a, a};
  assert_int_equal(tfe_einsum_dyn(&w0, "ij,jk->ik", 2, ops, NULL), TFE_OK); /* plan cached, workspace made */
  tfe_dyn_release(&w0);
  tfe_stream *s0 = NULL; /* a's record of pending uses made (it outlives the rounds) */
  assert_int_equal(tfe_stream_new(0, &s0), TFE_OK);
  assert_int_equal(tfe_einsum_async_dyn(s0, &w0, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  assert_int_equal(tfe_wait(&w0), TFE_OK);
  tfe_dyn_release(&w0);
  tfe_stream_free(s0);
  assert_int_equal(tfe_wait(&a), TFE_OK); /* prunes a's record: nothing done stays there */
  int fails = 0;
  for (long n = 0; n < 60; n++) {
    tfe_stream *s = NULL;
    tu_live_allocs = 0;
    tu_fail_after(-1);
    assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
    tu_fail_countdown = n;
    tfe_status r = tfe_einsum_async_dyn(s, &c, "ij,jk->ik", 2, ops, NULL), w = TFE_OK;
    if (r == TFE_OK) w = tfe_wait(&c);
    tu_fail_countdown = -1;
    tfe_stream_free(s); /* joins the worker: its last frees are done before ours */
    if (r == TFE_OK) tfe_dyn_release(&c);
    assert_int_equal(tfe_wait(&a), TFE_OK); /* drops the round's records on a */
    long live = tu_live_allocs;
    tu_alloc_restore();
    if (live) fail_msg("round %ld (submit %d, wait %d: %s): %ld allocations leaked", n, r, w, tfe_last_error(), live);
    assert_true(r == TFE_OK || r == TFE_ERR_ALLOC);
    assert_true(w == TFE_OK || w == TFE_ERR_ALLOC);
    if (r != TFE_OK || w != TFE_OK) fails++;
    else break;
  }
  assert_true(fails > 0);
  tfe_dyn_release(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_einsum_async),  cmocka_unit_test(test_async_forms), cmocka_unit_test(test_random_graphs),
      cmocka_unit_test(test_errors),        cmocka_unit_test(test_writers),     cmocka_unit_test(test_devices),
      cmocka_unit_test(test_dispatch_order), cmocka_unit_test(test_context),    cmocka_unit_test(test_pool_streams),
      cmocka_unit_test(test_alloc_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
