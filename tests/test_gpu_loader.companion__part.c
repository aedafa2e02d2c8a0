/* Second translation unit of tests/test_gpu_loader.c: the GPU companion, compiled as a user
 * compiles it in the default mode (it shares the process state with the test's unit). */
#include <tenferro/gpu/tenferro_gpu.c>
