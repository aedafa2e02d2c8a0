/* streams: a batch of independent contractions submitted to two CPU streams at once.
 *
 * A CPU pool of one thread per task (tfe_cpu_device_add) gets two streams; each matrix
 * product runs single-threaded on one of them, so that on two cores both run at the same
 * time. The same products run one after another on this thread (one thread too, through a
 * scoped context) for the serial time and the reference results. Prints
 *   serial_ms=... streams_ms=... speedup=... correct=1
 * (median of seven rounds each, serial and stream rounds alternating). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tenferro.h>

#define MAXJOBS 256
#define ROUNDS 7

static double now_ms(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, tfe_last_error());
  return 1;
}

/* Optional arguments: the matrix size (400) and the number of products (16). */
int main(int argc, char **argv) {
  int64_t N = argc > 1 ? atoll(argv[1]) : 400;
  int NJOBS = argc > 2 ? atoi(argv[2]) : 16;
  if (N < 1 || N > 8192 || NJOBS < 2 || NJOBS > MAXJOBS) {
    fprintf(stderr, "usage: streams [n in 1..8192] [products in 2..%d]\n", MAXJOBS);
    return 2;
  }
  int64_t dims[2] = {N, N};
  static tfe_dyn a[MAXJOBS], b[MAXJOBS], ref[MAXJOBS], out[MAXJOBS];
  for (int k = 0; k < NJOBS; k++) {
    if (tfe_dyn_empty(&a[k], TFE_DT_F64, 2, dims, TFE_COLMAJOR) || tfe_dyn_empty(&b[k], TFE_DT_F64, 2, dims, TFE_COLMAJOR))
      return fail("allocation");
    for (int64_t i = 0; i < N * N; i++) {
      ((double *)a[k].data)[i] = (double)((i * 7 + k) % 13) - 6;
      ((double *)b[k].data)[i] = (double)((i * 5 + 3 * k) % 11) - 5;
    }
  }
  /* two streams on a CPU pool of one thread per task */
  int pool;
  tfe_stream *s[2];
  if (tfe_cpu_device_add(1, -1, &pool) || tfe_stream_new(pool, &s[0]) || tfe_stream_new(pool, &s[1]))
    return fail("streams");
  /* serial and stream rounds alternate, so that a change of clock or of other load on the
   * machine touches both sides alike; round 0 warms up (BLIS, plan cache, pools) */
  tfe_context one = {-1, 1, NULL, NULL}; /* serial: one thread, on this thread */
  double serial[ROUNDS], streams[ROUNDS];
  int correct = 1;
  for (int r = 0; r <= ROUNDS; r++) {
    if (tfe_with_context(&one)) return fail("context");
    double t0 = now_ms();
    for (int k = 0; k < NJOBS; k++) {
      tfe_dyn ops[2] = {a[k], b[k]};
      if (r > 0) tfe_dyn_release(&ref[k]);
      if (tfe_einsum_dyn(&ref[k], "ij,jk->ik", 2, ops, NULL)) return fail("serial einsum");
    }
    if (r > 0) serial[r - 1] = now_ms() - t0;
    tfe_end_context();
    t0 = now_ms();
    for (int k = 0; k < NJOBS; k++) {
      tfe_dyn ops[2] = {a[k], b[k]};
      if (tfe_einsum_async_dyn(s[k % 2], &out[k], "ij,jk->ik", 2, ops, NULL)) return fail("submission");
    }
    if (tfe_stream_sync(s[0]) || tfe_stream_sync(s[1])) return fail("stream");
    if (r > 0) streams[r - 1] = now_ms() - t0;
    for (int k = 0; k < NJOBS; k++) {
      if (tfe_wait(&out[k])) return fail("wait");
      correct &= memcmp(out[k].data, ref[k].data, sizeof(double) * (size_t)(N * N)) == 0;
      tfe_dyn_release(&out[k]);
    }
  }
  tfe_stream_free(s[0]);
  tfe_stream_free(s[1]);
  qsort(serial, ROUNDS, sizeof *serial, cmp);
  qsort(streams, ROUNDS, sizeof *streams, cmp);
  double sm = serial[ROUNDS / 2], tm = streams[ROUNDS / 2];
  printf("serial_ms=%.1f streams_ms=%.1f speedup=%.2f correct=%d\n", sm, tm, sm / tm, correct);
  for (int k = 0; k < NJOBS; k++) {
    tfe_dyn_release(&a[k]);
    tfe_dyn_release(&b[k]);
    tfe_dyn_release(&ref[k]);
  }
  return correct ? 0 : 1;
}
