/* bench/sim/sim_companion.c — the emulated device of tests/test_gpu_emulated.companion__part.c
 * with tfe_perm2d run by bench/sim/kernel_sim.cpp (the real kernel source on CPU threads)
 * instead of its reference loop; every other kernel stays emulated. With
 * tests/test_gpu_conformance.c (TU_GPU_EMULATED) it is the conformance suite on the real
 * permutation kernel. SIM_STATS=1 prints each launch's plan, SIM_BLOCKS / SIM_DTILE set tfe__gperm_cfg; TFE_GPU_TEST_FILTER=test_permute_large runs that test only. */
#define tu_gpu_emulate tu_gpu_emulate_base
#include "../../tests/test_gpu_emulated.companion__part.c"
#undef tu_gpu_emulate

int sim_perm_launch(int g, unsigned gx, unsigned gy, unsigned nt, unsigned shm, void **args);
long sim_perm_launches;
static tfe__cu_result sim_launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  int h = (int)(uintptr_t)f - 1;
  if (h >= 0 && h < 999 && h % EMU_NFN == EMU_PERM) {
    const tfe__gperm_q *q = (const tfe__gperm_q *)args[3];
    if (getenv("SIM_STATS"))
      fprintf(stderr, "perm g=%d grid %ux%u nt %u shm %u mode %d nx %d ny %d TX %d TY %d rest %lld wide %d small %d plain %d\n",
              h / EMU_NFN, gx, gy, bx, shm, q->mode, q->nx, q->ny, q->TX, q->TY, q->rest, q->wide, q->small, q->plain);
    if (by != 1 || bz != 1 || gz != 1) return 1;
    sim_perm_launches++;
    return sim_perm_launch(h / EMU_NFN, gx, gy, bx, shm, args) ? 1 : 0;
  }
  return emu_launch(f, gx, gy, gz, bx, by, bz, shm, s, args, extra);
}
void tu_gpu_emulate(void) {
  if (getenv("SIM_BLOCKS")) tfe__gperm_cfg.blocks = atoll(getenv("SIM_BLOCKS")); /* 1: every block walks many chunks */
  if (getenv("SIM_DTILE")) tfe__gperm_cfg.dtile = atoi(getenv("SIM_DTILE"));
  tu_gpu_emulate_base();
  tfe__gpu.cu.cuLaunchKernel = sim_launch;
}
