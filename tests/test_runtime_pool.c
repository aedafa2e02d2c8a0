/* tests/test_runtime_pool.c — the buffer pool: size classes, "larger serves smaller", the byte
 * cap, trim, statistics, event-locked reuse (checked with poisoned memory), injected failures,
 * user allocation hooks. Built under ThreadSanitizer by `make test-tsan` (TSAN_TESTS). */
#include <pthread.h>
#include <math.h>
#include "testutil.h"

static void pool_fresh(size_t limit) {
  tfe_pool_set_limit(0); /* everything kept goes */
  tfe_pool_set_limit(limit);
  tfe_pool_stats_reset();
}

static void test_classes(void **st) {
  (void)st;
  assert_int_equal(tfe_pool_class_bytes(1), 64);
  assert_int_equal(tfe_pool_class_bytes(64), 64);
  assert_int_equal(tfe_pool_class_bytes(65), 72);
  assert_int_equal(tfe_pool_class_bytes(4096), 4096);
  assert_int_equal(tfe_pool_class_bytes(4097), 4608);
  for (size_t b = 1; b < ((size_t)1 << 30); b = b * 3 + 1) { /* a class is at most 1/8 above */
    size_t c = tfe_pool_class_bytes(b);
    assert_true(b <= 64 ? c == 64 : c >= b && (c - b) * 8 <= b);
  }
}

static void test_reuse(void **st) {
  (void)st;
  if (!tfe_pool_limit() && getenv("TFE_POOL_BYTES") == NULL) {
    /* under AddressSanitizer the pool is off by default; turn it on for this test */
  }
  pool_fresh((size_t)64 << 20);
  tfe_allocator a = tfe_get_allocator();
  tfe_pool_stats s;
  /* small: a freed block comes back to a request of its class */
  void *p = a.alloc(a.ctx, 1000, 64);
  assert_non_null(p);
  a.free(a.ctx, p);
  assert_int_equal(tfe_pool_kept_bytes(), tfe_pool_class_bytes(1000));
  void *q = a.alloc(a.ctx, 990, 64);
  assert_ptr_equal(q, p);
  tfe_pool_get_stats(&s);
  assert_int_equal(s.hits, 1);
  assert_int_equal(s.misses, 1);
  /* larger serves smaller: a block of the next class up */
  size_t c1 = tfe_pool_class_bytes(2000), c2 = tfe_pool_class_bytes(c1 + 1);
  void *big = a.alloc(a.ctx, c2, 64);
  a.free(a.ctx, big);
  void *r = a.alloc(a.ctx, 2000, 64);
  assert_ptr_equal(r, big);
  tfe_pool_get_stats(&s);
  assert_int_equal(s.larger, 1);
  /* but not two classes up with pool_reuse_classes = 0 */
  tfe_tuning t = tfe_tuning_get(), t0 = t;
  t.pool_reuse_classes = 0;
  assert_int_equal(tfe_tuning_set(&t), TFE_OK);
  a.free(a.ctx, r);
  void *r2 = a.alloc(a.ctx, 2000, 64);
  assert_ptr_not_equal(r2, big);
  assert_int_equal(tfe_tuning_set(&t0), TFE_OK);
  t.pool_reuse_classes = 17;
  TU_EXPECT_ERR(tfe_tuning_set(&t), TFE_ERR_INVALID, "pool_reuse_classes");
  a.free(a.ctx, r2);
  a.free(a.ctx, q);
  /* the cap: keeping a block over it drops the oldest first */
  pool_fresh((size_t)8 << 20);
  void *m1 = a.alloc(a.ctx, (size_t)3 << 20, 64), *m2 = a.alloc(a.ctx, (size_t)3 << 20, 64);
  void *m3 = a.alloc(a.ctx, (size_t)4 << 20, 64);
  a.free(a.ctx, m1);
  a.free(a.ctx, m2);
  assert_int_equal(tfe_pool_kept_bytes(), (size_t)6 << 20);
  a.free(a.ctx, m3); /* 6 + 4 > 8: m1 goes */
  assert_int_equal(tfe_pool_kept_bytes(), (size_t)7 << 20);
  tfe_pool_get_stats(&s);
  assert_int_equal(s.kept_buffers, 2);
  tfe_pool_trim();
  tfe_pool_get_stats(&s);
  assert_int_equal(s.kept_bytes, 0);
  assert_int_equal(s.kept_buffers, 0);
  assert_int_equal(s.limit, (size_t)8 << 20);
  tfe_memspace g0 = {TFE_MEM_GPU, 1};
  TU_EXPECT_ERR(tfe_memspace_pool_stats(g0, &s), TFE_ERR_DEVICE, "no pool serves gpu:1 memory");
  assert_int_equal(tfe_memspace_pool_stats(TFE_HOST, &s), TFE_OK);
  pool_fresh(0);
}

/* A buffer freed while a stream still reads it is not handed out before that work completes:
 * a reader gated behind an event, its input freed with tfe_free_after, the allocator asked for
 * the same size and the block poisoned; the reader's result is still right. */
static double *g_in;
static double g_sum;
static tfe_status pool_reader(void *arg) {
  (void)arg;
  double s = 0;
  for (int i = 0; i < 1024; i++) s += g_in[i];
  g_sum = s;
  return TFE_OK;
}
static void test_event_lock(void **st) {
  (void)st;
  pool_fresh((size_t)64 << 20);
  tfe_allocator a = tfe_get_allocator();
  tfe_stream *s = NULL;
  assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
  tfe_event *gate = NULL, *done = NULL;
  assert_int_equal(tfe_event_new(&gate), TFE_OK);
  assert_int_equal(tfe_stream_wait_event(s, gate), TFE_OK);
  g_in = (double *)a.alloc(a.ctx, 1024 * sizeof(double), 64);
  for (int i = 0; i < 1024; i++) g_in[i] = 1.0;
  assert_int_equal(tfe_stream_host_fn(s, pool_reader, NULL, &done), TFE_OK);
  tfe_free_after(g_in, done); /* freed now, while the reader is pending */
  tfe_pool_stats ps;
  tfe_pool_get_stats(&ps);
  assert_int_equal(ps.locked_buffers, 1);
  double *other = (double *)a.alloc(a.ctx, 1024 * sizeof(double), 64);
  assert_ptr_not_equal(other, g_in); /* locked: passed over */
  for (int i = 0; i < 1024; i++) other[i] = NAN; /* poison whatever we were given */
  tfe_pool_trim();                               /* trim keeps locked blocks too */
  tfe_pool_get_stats(&ps);
  assert_int_equal(ps.locked_buffers, 1);
  assert_true(ps.locked_skips >= 1);
  assert_int_equal(tfe_event_signal(gate, TFE_OK, NULL), TFE_OK);
  assert_int_equal(tfe_event_wait(done), TFE_OK);
  assert_true(g_sum == 1024.0);
  /* once the reader is done, the block is handed out again */
  double *again = (double *)a.alloc(a.ctx, 1024 * sizeof(double), 64);
  assert_ptr_equal(again, g_in);
  tfe_pool_get_stats(&ps);
  assert_int_equal(ps.locked_buffers, 0);
  a.free(a.ctx, again);
  a.free(a.ctx, other);
  tfe_event_release(gate);
  tfe_event_release(done);
  tfe_stream_free(s);
  pool_fresh(0);
}

/* Tensors released while a stream still reads them: the task's reference keeps the storage,
 * so a new tensor of that size never gets its buffer early (poisoned right away). */
static void test_release_while_pending(void **st) {
  (void)st;
  pool_fresh((size_t)64 << 20);
  tu_rng r = {5};
  tfe_stream *s = NULL;
  assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
  for (int round = 0; round < tu_cases(20); round++) {
    int64_t d[2] = {32, 32};
    tfe_dyn x = {0}, y = {0}, ref = {0}, p = {0};
    assert_int_equal(tfe_dyn_empty(&x, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
    for (int i = 0; i < 1024; i++) ((double *)x.data)[i] = tu_unif(&r);
    tfe_dyn ops[2] = {x, x};
    assert_int_equal(tfe_einsum_dyn(&ref, "ij,jk->ik", 2, ops, NULL), TFE_OK);
    tfe_event *gate = NULL;
    assert_int_equal(tfe_event_new(&gate), TFE_OK);
    assert_int_equal(tfe_stream_wait_event(s, gate), TFE_OK);
    assert_int_equal(tfe_einsum_async_dyn(s, &y, "ij,jk->ik", 2, ops, NULL), TFE_OK);
    void *old = x.data;
    tfe_dyn_release(&x); /* while the task still has to read it */
    assert_int_equal(tfe_dyn_empty(&p, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
    assert_ptr_not_equal(p.data, old);
    for (int i = 0; i < 1024; i++) ((double *)p.data)[i] = NAN;
    assert_int_equal(tfe_event_signal(gate, TFE_OK, NULL), TFE_OK);
    assert_int_equal(tfe_wait(&y), TFE_OK);
    assert_memory_equal(y.data, ref.data, 1024 * sizeof(double));
    tfe_event_release(gate);
    tfe_dyn_release(&y); tfe_dyn_release(&ref); tfe_dyn_release(&p);
  }
  tfe_stream_free(s);
  pool_fresh(0);
}

/* Failures injected inside the pool (its system allocations): an error, no leak, the pool's
 * books right; a custom allocator bypasses the pool and keeps working. */
static void test_failures(void **st) {
  (void)st;
  pool_fresh((size_t)64 << 20);
  int64_t d[2] = {16, 16};
  tfe_dyn a = {0}, c = {0};
  assert_int_equal(tfe_dyn_ones(&a, TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
  tfe_dyn ops[2] = {a, a};
  int failed = 0;
  for (long n = 0; n < 40; n++) {
    tfe_pool_trim(); /* every allocation goes to the system */
    tfe__st.pool.fail_countdown = n;
    tfe_status r = tfe_einsum_dyn(&c, "ij,jk->ik", 2, ops, NULL);
    tfe__st.pool.fail_countdown = -1;
    if (r != TFE_OK) {
      assert_int_equal(r, TFE_ERR_ALLOC);
      assert_non_null(strstr(tfe_last_error(), "allocation of"));
      failed++;
      continue;
    }
    assert_true(((double *)c.data)[0] == 16.0);
    tfe_dyn_release(&c);
    break;
  }
  assert_true(failed > 0);
  /* a user hook: the pool is bypassed, the hook sees every allocation */
  tfe_pool_stats s0, s1;
  tfe_pool_get_stats(&s0);
  tu_live_allocs = 0;
  tu_fail_after(-1);
  assert_int_equal(tfe_einsum_dyn(&c, "ij,jk->ik", 2, ops, NULL), TFE_OK);
  assert_true(tu_live_allocs > 0);
  tfe_dyn_release(&c);
  tu_alloc_restore();
  tfe_pool_get_stats(&s1);
  assert_int_equal(s1.hits + s1.misses, s0.hits + s0.misses);
  tfe_dyn_release(&a);
  pool_fresh(0);
}

/* Several threads taking and giving blocks of mixed sizes at once. */
static void *pool_churn(void *arg) {
  tu_rng r = {(uint64_t)(uintptr_t)arg};
  tfe_allocator a = tfe_get_allocator();
  void *held[8] = {0};
  for (int i = 0; i < 2000; i++) {
    int k = (int)tu_int(&r, 0, 7);
    if (held[k]) { a.free(a.ctx, held[k]); held[k] = NULL; }
    else {
      size_t b = (size_t)tu_int(&r, 1, 100000);
      held[k] = a.alloc(a.ctx, b, 64);
      memset(held[k], k, b < 256 ? b : 256);
    }
  }
  for (int k = 0; k < 8; k++) a.free(a.ctx, held[k]);
  return NULL;
}
static void test_threads(void **st) {
  (void)st;
  pool_fresh((size_t)4 << 20);
  pthread_t th[4];
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, pool_churn, (void *)(uintptr_t)(i + 1)), 0);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  assert_true(tfe_pool_kept_bytes() <= (size_t)4 << 20);
  pool_fresh(0);
}

/* NUMA: the CPU list parser, a pool bound to node 0 (its worker's CPU mask is the node's), and
 * the pool's rule that a thread bound to a node reuses only blocks of that node (the thread's
 * node is set by hand here: the machines that run the suite have one node). */
typedef struct numa_probe { uint64_t mask[TFE__CPU_WORDS]; int node1; int rc; } numa_probe;
static tfe_status numa_look(void *arg) {
  numa_probe *p = (numa_probe *)arg;
  int (*getaffinity)(int, size_t, void *) = NULL;
  memset(p->mask, 0, sizeof p->mask);
  p->rc = tfe__rt_sym(NULL, "sched_getaffinity", &getaffinity) ? getaffinity(0, sizeof p->mask, p->mask) : -2;
  p->node1 = tfe__ts.numa_node1;
  return TFE_OK;
}
static void test_numa(void **st) {
  (void)st;
  uint64_t m[TFE__CPU_WORDS];
  assert_int_equal(tfe__cpulist_parse("0-3,8,10-11\n", m), 7);
  assert_true(m[0] == 0xD0Full && m[1] == 0);
  assert_int_equal(tfe__cpulist_parse("65", m), 1);
  assert_true(m[0] == 0 && m[1] == 2);
  assert_int_equal(tfe__cpulist_parse("", m), 0);
  assert_int_equal(tfe__cpulist_parse("3-1", m), 0);
  TU_EXPECT_ERR(tfe_cpu_device_add(1, tfe_numa_nodes(), &(int){0}), TFE_ERR_INVALID, "does not exist");
  if (tfe__numa_cpus(0, m) > 0) { /* /sys lists node 0: bind a pool to it */
    int id = -1;
    assert_int_equal(tfe_cpu_device_add(1, 0, &id), TFE_OK);
    tfe_stream *s = NULL;
    assert_int_equal(tfe_stream_new(id, &s), TFE_OK);
    numa_probe pr = {{0}, 0, -1};
    tfe_event *e = NULL;
    assert_int_equal(tfe_stream_host_fn(s, numa_look, &pr, &e), TFE_OK);
    assert_int_equal(tfe_event_wait(e), TFE_OK);
    tfe_event_release(e);
    tfe_stream_free(s);
    assert_int_equal(pr.rc, 0);
    assert_int_equal(pr.node1, 1);
    assert_memory_equal(pr.mask, m, sizeof m);
  }
  pool_fresh((size_t)64 << 20);
  tfe_allocator a = tfe_get_allocator();
  tfe__ts.numa_node1 = 2; /* as if bound to node 1 */
  void *p = a.alloc(a.ctx, 100000, 64);
  a.free(a.ctx, p);
  tfe__ts.numa_node1 = 1; /* node 0 does not get node 1's block */
  void *q = a.alloc(a.ctx, 100000, 64);
  assert_ptr_not_equal(q, p);
  tfe_pool_stats ps;
  tfe_pool_get_stats(&ps);
  assert_int_equal(ps.node_skips, 1);
  tfe__ts.numa_node1 = 2; /* node 1 does */
  void *r = a.alloc(a.ctx, 100000, 64);
  assert_ptr_equal(r, p);
  tfe__ts.numa_node1 = 0; /* and so would an unbound thread */
  a.free(a.ctx, q);
  void *u = a.alloc(a.ctx, 100000, 64);
  assert_ptr_equal(u, q);
  a.free(a.ctx, r);
  a.free(a.ctx, u);
  pool_fresh(0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classes),  cmocka_unit_test(test_reuse),    cmocka_unit_test(test_event_lock),
      cmocka_unit_test(test_release_while_pending), cmocka_unit_test(test_failures), cmocka_unit_test(test_threads),
      cmocka_unit_test(test_numa),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
