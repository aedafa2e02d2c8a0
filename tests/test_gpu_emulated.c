/* tests/test_gpu_emulated.c — tests/test_gpu_conformance.c against an emulated device
 * (tests/test_gpu_emulated.companion__part.c: host memory, the generated kernels and cuBLAS's
 * strided-batched GEMM interpreted on the CPU), so that the GPU backend's layout logic runs on
 * every machine, CI included. The real device runs the same suite through `make test-gpu`. */
#define TU_GPU_EMULATED 1
#include "test_gpu_conformance.c"
