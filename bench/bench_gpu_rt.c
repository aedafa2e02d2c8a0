/* bench/bench_gpu_rt.c — the device side of the runtime on the GPU backend (issue 16/15):
 *
 *   plan     host time per call of small binary contractions on device operands
 *            (tfe_contract_dyn), with the GPU plan cache on and off, interleaved in one run:
 *            batches of 200 calls timed on the host (the queue absorbs the launches), the
 *            device synchronized between batches (not timed); median of the batches, ns/call
 *   pool     an allocating three-operand einsum (arena + result from the backend's memory
 *            slots) in a loop: the device pool on vs off (cap 0: cuMemAlloc, and cuMemFree
 *            after a stream synchronization, per buffer), wall time per call including a
 *            final synchronization
 *   streams  32 independent 256x256x256 f64 contractions on one runtime CUDA stream vs spread
 *            over two (tfe_gpu_stream_new), wall time until all are done
 *
 *   build/bench/bench_gpu_rt [reps]          (reps = 15 batches)
 * One unit: it includes the companion (default mode). Without a GPU it says so and exits 0. */
#include <tenferro/gpu/tenferro_gpu.c>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return v[n / 2];
}
static void check(tfe_status st, const char *what) {
  if (st != TFE_OK) {
    fprintf(stderr, "bench_gpu_rt: %s: %s\n", what, tfe_last_error());
    exit(1);
  }
}
static void dev_rand(tfe_dyn *d, tfe_dtype dt, int rank, const int64_t *dims) {
  tfe_dyn h;
  check(tfe_dyn_empty(&h, dt, rank, dims, TFE_COLMAJOR), "host");
  int64_t n = tfe_layout_numel(&h.lay) * (dt == TFE_DT_C128 ? 2 : 1);
  for (int64_t i = 0; i < n; i++) ((double *)h.data)[i] = (double)(i % 7) - 3;
  check(tfe_gpu_upload(d, 0, &h), "upload");
  tfe_dyn_release(&h);
}

/* ns per call of one small contraction, cache on and off interleaved. */
static void bench_plan(const char *name, tfe_dtype dt, int rank, const int64_t *da, const int32_t *la,
                       const int64_t *db, const int32_t *lb, const int64_t *dc, const int32_t *lc, int reps) {
  tfe_dyn A, B, C;
  dev_rand(&A, dt, rank, da), dev_rand(&B, dt, rank, db), dev_rand(&C, dt, rank, dc);
  double one[2] = {1, 0}, zero[2] = {0, 0}, t[2][64];
  if (reps > 64) reps = 64;
  for (int r = -2; r < reps; r++)
    for (int on = 0; on < 2; on++) {
      tfe_gpu_plan_cache_enable(on);
      check(tfe_gpu_synchronize(0), "sync");
      double t0 = now_s();
      for (int i = 0; i < 200; i++) check(tfe_contract_dyn(one, &A, la, &B, lb, zero, &C, lc), "contract");
      double t1 = now_s();
      if (r >= 0) t[on][r] = (t1 - t0) / 200 * 1e9;
    }
  tfe_gpu_plan_cache_enable(true);
  check(tfe_gpu_synchronize(0), "sync");
  /* the floor: cuBLAS's strided-batched GEMM of the same m, n, k called directly on the
   * device's stream (host time per call, the same batches) */
  double tb[64];
  tfe__gpu_dev *D = tfe__gpu_device(0);
  int g = tfe__gpu_kind(dt);
  tfe__blas_gemm_sb_fn_t f = tfe__gg_gemm_fn(g);
  int m = (int)da[0], n = (int)db[1], k = (int)da[1];
  for (int r = -2; r < reps; r++) {
    check(tfe_gpu_synchronize(0), "sync");
    double t0 = now_s();
    for (int i = 0; i < 200; i++) {
      tfe__gpu_enter(D, "bench");
      f(D->blas, 0, 0, m, n, k, one, A.data, m, 0, B.data, k, 0, zero, C.data, m, 0, 1);
      tfe__gpu_leave(D);
    }
    if (r >= 0) tb[r] = (now_s() - t0) / 200 * 1e9;
  }
  check(tfe_gpu_synchronize(0), "sync");
  double off = median(t[0], reps), on = median(t[1], reps), floor_ = median(tb, reps);
  printf("plan %-28s %-5s cache off %8.0f ns/call  on %8.0f ns/call  saved %6.0f ns (%.2fx); cuBLAS %dx%dx%d direct "
         "%6.0f ns/call\n", name, tfe_dtype_name(dt), off, on, off - on, off / on, m, n, k, floor_);
  tfe_dyn_release(&A), tfe_dyn_release(&B), tfe_dyn_release(&C);
}

static void bench_pool(int reps) {
  int64_t d[2] = {64, 64};
  tfe_dyn A, B, C;
  dev_rand(&A, TFE_DT_F64, 2, d), dev_rand(&B, TFE_DT_F64, 2, d), dev_rand(&C, TFE_DT_F64, 2, d);
  tfe_pool_stats ps;
  check(tfe_gpu_pool_stats(0, &ps), "stats");
  size_t lim = ps.limit;
  double t[2][64];
  if (reps > 64) reps = 64;
  for (int r = -1; r < reps; r++)
    for (int on = 0; on < 2; on++) {
      check(tfe_gpu_pool_set_limit(0, on ? lim : 0), "limit");
      check(tfe_gpu_synchronize(0), "sync");
      double t0 = now_s();
      for (int i = 0; i < 100; i++) {
        tfe_dyn out;
        check(tfe_einsum_dyn(&out, "ij,jk,kl->il", 3, (tfe_dyn[]){A, B, C}, NULL), "einsum");
        tfe_dyn_release(&out);
      }
      check(tfe_gpu_synchronize(0), "sync");
      if (r >= 0) t[on][r] = (now_s() - t0) / 100 * 1e6;
    }
  check(tfe_gpu_pool_stats(0, &ps), "stats");
  double off = median(t[0], reps), on = median(t[1], reps);
  printf("pool einsum ij,jk,kl->il 64^2 f64 (allocating)  pool off %7.1f us/call  on %7.1f us/call  (%.2fx); "
         "pool hits %lld misses %lld\n", off, on, off / on, (long long)ps.hits, (long long)ps.misses);
  tfe_dyn_release(&A), tfe_dyn_release(&B), tfe_dyn_release(&C);
}

static void bench_streams(int reps) {
  enum { NC = 32 };
  int64_t d[2] = {256, 256};
  tfe_dyn A[NC], B[NC], C[NC];
  for (int i = 0; i < NC; i++) dev_rand(&A[i], TFE_DT_F64, 2, d), dev_rand(&B[i], TFE_DT_F64, 2, d);
  tfe_stream *s[2];
  check(tfe_gpu_stream_new(0, &s[0]), "stream"), check(tfe_gpu_stream_new(0, &s[1]), "stream");
  double t[2][64];
  if (reps > 64) reps = 64;
  for (int r = -1; r < reps; r++)
    for (int two = 0; two < 2; two++) {
      double t0 = now_s();
      for (int i = 0; i < NC; i++)
        check(tfe_einsum_async_dyn(s[two ? i % 2 : 0], &C[i], "ij,jk->ik", 2, (tfe_dyn[]){A[i], B[i]}, NULL), "async");
      for (int i = 0; i < NC; i++) check(tfe_wait(&C[i]), "wait");
      if (r >= 0) t[two][r] = (now_s() - t0) * 1e3;
      for (int i = 0; i < NC; i++) tfe_dyn_release(&C[i]);
    }
  double ts[64];
  for (int r = -1; r < reps; r++) { /* the same through the synchronous API on the device's own stream */
    double t0 = now_s();
    for (int i = 0; i < NC; i++) check(tfe_einsum_dyn(&C[i], "ij,jk->ik", 2, (tfe_dyn[]){A[i], B[i]}, NULL), "einsum");
    check(tfe_gpu_synchronize(0), "sync");
    if (r >= 0) ts[r] = (now_s() - t0) * 1e3;
    for (int i = 0; i < NC; i++) tfe_dyn_release(&C[i]);
  }
  double one = median(t[0], reps), two = median(t[1], reps), syn = median(ts, reps);
  printf("streams %d x (256^3 f64 GEMM) one CUDA stream %.3f ms  two %.3f ms  (%.2fx); synchronous API %.3f ms\n", NC,
         one, two, one / two, syn);
  tfe_stream_free(s[0]), tfe_stream_free(s[1]);
  for (int i = 0; i < NC; i++) tfe_dyn_release(&A[i]), tfe_dyn_release(&B[i]);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 15;
  (void)tfe_backend_find("cpu");
  if (tfe_gpu_init() != TFE_OK) {
    printf("bench_gpu_rt: no GPU (%s)\n", tfe_last_error());
    return 0;
  }
  tfe_gpu_device_info info;
  tfe_gpu_device_get(0, &info);
  printf("# %s\n", info.name);
  int64_t d2[2] = {2, 2};
  int32_t ij[2] = {'i', 'j'}, jk[2] = {'j', 'k'}, ik[2] = {'i', 'k'};
  bench_plan("2x2 ij,jk->ik", TFE_DT_F64, 2, d2, ij, d2, jk, d2, ik, reps);
  bench_plan("2x2 ij,jk->ik", TFE_DT_C128, 2, d2, ij, d2, jk, d2, ik, reps);
  int64_t da[4] = {4, 3, 5, 2}, db[4] = {5, 6, 3, 2}, dc[4] = {4, 6, 3, 2};
  int32_t la[4] = {'a', 'b', 'c', 'd'}, lb[4] = {'c', 'e', 'b', 'd'}, lc[4] = {'a', 'e', 'b', 'd'};
  bench_plan("rank-4 abcd,cebd->aebd", TFE_DT_F64, 4, da, la, db, lb, dc, lc, reps);
  bench_pool(reps);
  bench_streams(reps < 8 ? reps : 8);
  int64_t h = 0, m = 0;
  tfe_gpu_plan_cache_stats(0, &h, &m);
  printf("plan cache: %lld hits, %lld misses\n", (long long)h, (long long)m);
  tfe_gpu_shutdown();
  return 0;
}
