/* bench/sim/hostcall.c — the host's part of one tfe_contract_dyn on GPU operands, without a GPU:
 * the emulated device of tests/test_gpu_emulated.companion__part.c with its kernel launches made
 * no-ops, so that a loop of calls times the analysis, the GPU backend's planning and the
 * launch's argument setup alone (the driver's own cost is not in it). A reversal of a rank-R
 * tensor of dims n (docs/benchmarks.md, session 16; profile it with `perf record -g`).
 *   gcc -std=c11 -O2 -march=native -fopenmp -Iinclude -Itests -o build/hostcall bench/sim/hostcall.c \
 *       -lcmocka -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -llapacke -lm -ldl -lpthread
 *   build/hostcall [rank 15] [n 3] [calls 20000] */
#define _POSIX_C_SOURCE 200809L
#include "../../tests/test_gpu_emulated.companion__part.c"
#include <time.h>

static tfe__cu_result noop_launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shm, (void)s, (void)args, (void)extra;
  return 0;
}
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
int main(int argc, char **argv) {
  int rank = argc > 1 ? atoi(argv[1]) : 15, n = argc > 2 ? atoi(argv[2]) : 3, calls = argc > 3 ? atoi(argv[3]) : 20000;
  if (rank < 1 || rank > TFE__GPU_KMAXR || n < 2 || calls < 1) {
    fprintf(stderr, "usage: hostcall [rank 1..%d] [n >= 2] [calls >= 1]\n", TFE__GPU_KMAXR);
    return 2;
  }
  tu_gpu_emulate();
  tfe__gpu.cu.cuLaunchKernel = noop_launch;
  int64_t dims[TFE_MAX_RANK];
  int32_t la[TFE_MAX_RANK], lc[TFE_MAX_RANK];
  for (int i = 0; i < rank; i++) dims[i] = n, la[i] = i, lc[i] = rank - 1 - i;
  tfe_dyn a = {0}, c = {0};
  double one = 1, zero = 0;
  if (tfe_gpu_alloc_dyn(&a, 0, TFE_DT_F64, rank, dims, TFE_COLMAJOR) ||
      tfe_gpu_alloc_dyn(&c, 0, TFE_DT_F64, rank, dims, TFE_COLMAJOR) ||
      tfe_contract_dyn(&one, &a, la, NULL, NULL, &zero, &c, lc)) {
    fprintf(stderr, "hostcall: %s\n", tfe_last_error());
    return 1;
  }
  double t0 = now_s();
  for (int i = 0; i < calls; i++) (void)tfe_contract_dyn(&one, &a, la, NULL, NULL, &zero, &c, lc);
  printf("rank %d, dims %d: %.3f us of host code per call\n", rank, n, (now_s() - t0) / calls * 1e6);
  tfe_dyn_release(&a), tfe_dyn_release(&c);
  return 0;
}
