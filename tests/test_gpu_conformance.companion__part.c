/* Second translation unit of tests/test_gpu_conformance.c: the GPU companion (default mode). */
#include <tenferro/gpu/tenferro_gpu.c>
