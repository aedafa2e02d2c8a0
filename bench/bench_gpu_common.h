/* bench_gpu_common.h — the event timer shared by the GPU benchmarks (bench_gpu, bench_gpu_ew,
 * bench_gpu_perm). Include after <tenferro/gpu/tenferro_gpu.c> (it uses the companion's
 * device and driver table). */
#ifndef TFE_BENCH_GPU_COMMON_H
#define TFE_BENCH_GPU_COMMON_H
#include <stdio.h>
#include <stdlib.h>

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
typedef tfe_status (*bench_fn)(void *ctx);

/* Median milliseconds of fn over reps runs (at most 64; two warm-ups), each between two
 * events on D's stream. A failing call ends the program with its message. */
static double time_ms(tfe__gpu_dev *D, bench_fn fn, void *ctx, int reps) {
  double t[64];
  tfe__cu_event e0, e1;
  tfe__gpu_enter(D, "bench");
  tfe__gpu.cu.cuEventCreate(&e0, 0), tfe__gpu.cu.cuEventCreate(&e1, 0);
  tfe__gpu_leave(D);
  if (reps > 64) reps = 64;
  for (int i = -2; i < reps; i++) {
    tfe__gpu_enter(D, "bench");
    tfe__gpu.cu.cuEventRecord(e0, D->stream);
    tfe__gpu_leave(D);
    if (fn(ctx) != TFE_OK) {
      fprintf(stderr, "bench: %s / %s\n", tfe_last_error(), tfe_gpu_last_error());
      exit(1);
    }
    tfe__gpu_enter(D, "bench");
    tfe__gpu.cu.cuEventRecord(e1, D->stream);
    tfe__gpu.cu.cuEventSynchronize(e1);
    float ms = 0;
    tfe__gpu.cu.cuEventElapsedTime(&ms, e0, e1);
    tfe__gpu_leave(D);
    if (i >= 0) t[i] = ms;
  }
  tfe__gpu_enter(D, "bench");
  tfe__gpu.cu.cuEventDestroy(e0), tfe__gpu.cu.cuEventDestroy(e1);
  tfe__gpu_leave(D);
  qsort(t, (size_t)reps, sizeof *t, cmp_d);
  return t[reps / 2];
}
#endif
