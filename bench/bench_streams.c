/* bench_streams: how close two CPU streams come to the machine's own limit.
 *
 * The same batch of independent f64 products (n x n, `jobs` of them, one thread each) runs
 *   serial    one after another on this thread (one thread, through a scoped context);
 *   streams   on two streams of a CPU pool of one thread per task (examples/streams.c);
 *   pthreads  on two plain threads, each running its half with tfe_einsum_dyn, no runtime:
 *             the best two workers can do on this machine.
 * The three alternate within every round (a change of clock or load touches all alike).
 * Prints the medians and streams/pthreads: 1.0 means the runtime costs nothing.
 *   build/bench/bench_streams [n=400] [jobs=16] [rounds=9] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tenferro.h>

#define MAXJOBS 256
static tfe_dyn A[MAXJOBS], B[MAXJOBS], R[MAXJOBS];
static int njobs;

static double now_ms(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}
static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, tfe_last_error());
  return 1;
}

/* jobs first, first + 2, ... on the calling thread with one thread each */
static void *half(void *arg) {
  int first = (int)(intptr_t)arg;
  tfe_context one = {-1, 1, NULL, NULL};
  if (tfe_with_context(&one)) return (void *)1;
  for (int k = first; k < njobs; k += 2) {
    tfe_dyn ops[2] = {A[k], B[k]};
    tfe_dyn_release(&R[k]);
    if (tfe_einsum_dyn(&R[k], "ij,jk->ik", 2, ops, NULL)) return (void *)1;
  }
  tfe_end_context();
  return NULL;
}

static double run_serial(void) {
  double t0 = now_ms();
  if (half((void *)0) || half((void *)1)) return -1;
  return now_ms() - t0;
}
static double run_pthreads(void) {
  pthread_t t;
  double t0 = now_ms();
  if (pthread_create(&t, NULL, half, (void *)1)) return -1;
  void *mine = half((void *)0), *other = NULL;
  pthread_join(t, &other);
  return mine || other ? -1 : now_ms() - t0;
}
static double run_streams(tfe_stream **s) {
  double t0 = now_ms();
  for (int k = 0; k < njobs; k++) {
    tfe_dyn ops[2] = {A[k], B[k]};
    tfe_dyn_release(&R[k]);
    if (tfe_einsum_async_dyn(s[k % 2], &R[k], "ij,jk->ik", 2, ops, NULL)) return -1;
  }
  if (tfe_stream_sync(s[0]) || tfe_stream_sync(s[1])) return -1;
  return now_ms() - t0;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 400;
  njobs = argc > 2 ? atoi(argv[2]) : 16;
  int rounds = argc > 3 ? atoi(argv[3]) : 9;
  if (n < 1 || n > 8192 || njobs < 2 || njobs > MAXJOBS || rounds < 1 || rounds > 100) {
    fprintf(stderr, "usage: bench_streams [n] [jobs 2..%d] [rounds 1..100]\n", MAXJOBS);
    return 2;
  }
  int64_t dims[2] = {n, n};
  for (int k = 0; k < njobs; k++) {
    if (tfe_dyn_empty(&A[k], TFE_DT_F64, 2, dims, TFE_COLMAJOR) || tfe_dyn_empty(&B[k], TFE_DT_F64, 2, dims, TFE_COLMAJOR))
      return fail("allocation");
    for (int64_t i = 0; i < n * n; i++) {
      ((double *)A[k].data)[i] = (double)((i * 7 + k) % 13) - 6;
      ((double *)B[k].data)[i] = (double)((i * 5 + 3 * k) % 11) - 5;
    }
  }
  int pool;
  tfe_stream *s[2];
  if (tfe_cpu_device_add(1, -1, &pool) || tfe_stream_new(pool, &s[0]) || tfe_stream_new(pool, &s[1]))
    return fail("streams");
  double ts[100], tp[100], tq[100];
  for (int r = 0; r <= rounds; r++) { /* round 0 warms up */
    double a = run_serial(), b = run_streams(s), c = run_pthreads();
    if (a < 0 || b < 0 || c < 0) return fail("round");
    if (r > 0) ts[r - 1] = a, tq[r - 1] = b, tp[r - 1] = c;
  }
  double ms = median(ts, rounds), mq = median(tq, rounds), mp = median(tp, rounds);
  printf("n=%lld jobs=%d rounds=%d serial_ms=%.2f streams_ms=%.2f pthreads_ms=%.2f "
         "speedup_streams=%.2f speedup_pthreads=%.2f streams_over_pthreads=%.3f\n",
         (long long)n, njobs, rounds, ms, mq, mp, ms / mq, ms / mp, mq / mp);
  tfe_stream_free(s[0]);
  tfe_stream_free(s[1]);
  for (int k = 0; k < njobs; k++) {
    tfe_dyn_release(&A[k]);
    tfe_dyn_release(&B[k]);
    tfe_dyn_release(&R[k]);
  }
  return 0;
}
