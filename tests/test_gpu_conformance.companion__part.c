/* Second translation unit of tests/test_gpu_conformance.c: the GPU companion (default mode). */
#include <tenferro/gpu/tenferro_gpu.c>

/* The suite's switch of tfe_perm2d_b (exec.h cfg.big, the most elements of its tiles; 0: off);
 * returns the setting before. */
int tu_gpu_perm_big(int big);
int tu_gpu_perm_big(int big) {
  int was = tfe__gperm_cfg.big;
  tfe__gperm_cfg.big = big;
  return was;
}
