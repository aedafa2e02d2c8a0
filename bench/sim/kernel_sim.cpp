// bench/sim/kernel_sim.cpp — runs the generated copy kernels (tfe_perm2d of
// include/tenferro/gpu/kernels.h) on the CPU: one POSIX thread per CUDA thread of a block,
// __syncthreads() a barrier, __shared__ a static (blocks run one after another), so that the
// kernel's own index arithmetic (tiles, tables, magic divisions, 32/64-bit paths) is checked
// without a GPU. Built by bench/sim/run.sh together with the emulated conformance suite.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

struct sim_dim3 { unsigned x, y, z; };
static thread_local sim_dim3 threadIdx, blockIdx;
static sim_dim3 blockDim, gridDim;
static pthread_barrier_t sim_bar;
alignas(16) static unsigned char sim_smem[232448]; // an H100's opt-in limit (tfe_perm2d_b)
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
#define __syncthreads() pthread_barrier_wait(&sim_bar)
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define DYN_SMEM(x) unsigned char *x = sim_smem

#define TFE_CPLX 0
namespace k_f32 { typedef float TFE_R;
#include "kernels.inc"
}
namespace k_f64 { typedef double TFE_R;
#include "kernels.inc"
}
#undef TFE_CPLX
#define TFE_CPLX 1
namespace k_c64 { typedef float TFE_R;
#include "kernels.inc"
}
namespace k_c128 { typedef double TFE_R;
#include "kernels.inc"
}

struct sim_job { int g, big; void **args; unsigned gx, gy; };
static void *sim_thread(void *arg) {
  sim_job *j = (sim_job *)((void **)arg)[0];
  threadIdx.x = (unsigned)(uintptr_t)((void **)arg)[1], threadIdx.y = threadIdx.z = 0;
  for (unsigned by = 0; by < j->gy; by++)
    for (unsigned bx = 0; bx < j->gx; bx++) {
      blockIdx.x = bx, blockIdx.y = by, blockIdx.z = 0;
      void **a = j->args;
#define RUN(ns)                                                                                          \
  (j->big ? ns::tfe_perm2d_b : ns::tfe_perm2d)(*(ns::T **)a[0], *(const ns::T **)a[1], *(const ns::P *)a[2], \
                                              *(const ns::Q *)a[3])
      switch (j->g) {
      case 0: RUN(k_f32); break;
      case 1: RUN(k_f64); break;
      case 2: RUN(k_c64); break;
      default: RUN(k_c128); break;
      }
      pthread_barrier_wait(&sim_bar); // the block ends: shared memory is the next block's
    }
  return NULL;
}
// One launch of tfe_perm2d (big: tfe_perm2d_b) of kind g (0 f32, 1 f64, 2 c64, 3 c128); args as
// cuLaunchKernel's (pointers to the device pointers and to the two parameter blocks).
extern "C" int sim_perm_launch(int g, int big, unsigned gx, unsigned gy, unsigned nt, unsigned shm, void **args) {
  if (nt == 0 || nt > 1024 || shm > sizeof sim_smem) { fprintf(stderr, "sim: bad launch nt=%u shm=%u\n", nt, shm); return 1; }
  blockDim.x = nt, blockDim.y = blockDim.z = 1, gridDim.x = gx, gridDim.y = gy, gridDim.z = 1;
  memset(sim_smem, 0xA5, sizeof sim_smem);
  pthread_barrier_init(&sim_bar, NULL, nt);
  sim_job j = {g, big, args, gx, gy};
  pthread_t th[1024];
  void *targ[1024][2];
  for (unsigned t = 0; t < nt; t++) {
    targ[t][0] = &j, targ[t][1] = (void *)(uintptr_t)t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 1 << 16);
    if (pthread_create(&th[t], &at, sim_thread, targ[t])) { fprintf(stderr, "sim: pthread_create\n"); exit(2); }
    pthread_attr_destroy(&at);
  }
  for (unsigned t = 0; t < nt; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&sim_bar);
  return 0;
}
