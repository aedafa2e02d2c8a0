/* bench/sim/sim_companion.c — the emulated device of tests/test_gpu_emulated.companion__part.c
 * with tfe_perm2d run by bench/sim/kernel_sim.cpp (the real kernel source on CPU threads)
 * instead of its reference loop; every other kernel stays emulated. With
 * tests/test_gpu_conformance.c (TU_GPU_EMULATED) it is the conformance suite on the real
 * permutation kernel. SIM_STATS=1 prints each launch's plan, SIM_BLOCKS / SIM_DTILE / SIM_FIT /
 * SIM_PIPE / SIM_WAVES / SIM_ORDER / SIM_RUN / SIM_TMAX / SIM_PRI / SIM_BIG set tfe__gperm_cfg; SIM_NSM=n makes the device answer the occupancy
 * attributes as an H100 with n multiprocessors (the grid from the blocks it holds: blocks 0);
 * TFE_GPU_TEST_FILTER=test_permute_large runs that test only. */
#define tu_gpu_emulate tu_gpu_emulate_base
#include "../../tests/test_gpu_emulated.companion__part.c"
#undef tu_gpu_emulate

int sim_perm_launch(int g, int big, unsigned gx, unsigned gy, unsigned nt, unsigned shm, void **args);
long sim_perm_launches;
static tfe__cu_result sim_launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  int h = (int)(uintptr_t)f - 1;
  pthread_mutex_lock(&emu_cap_mu);
  bool capturing = emu_cap_stream && s == emu_cap_stream; /* recorded by the emulator, replayed by its loop */
  pthread_mutex_unlock(&emu_cap_mu);
  if (!capturing && h >= 0 && h < 999 && (h % EMU_NFN == EMU_PERM || h % EMU_NFN == EMU_PERMB)) {
    const tfe__gperm_q *q = (const tfe__gperm_q *)args[3];
    if (getenv("SIM_STATS"))
      fprintf(stderr, "perm g=%d grid %ux%u nt %u shm %u mode %d nx %d ny %d TX %d TY %d px %lld py %lld rest %lld plain %d pipe %d big %d\n",
              h / EMU_NFN, gx, gy, bx, shm, q->mode, q->nx, q->ny, q->TX, q->TY, q->px, q->py, q->rest, q->plain, q->pipe,
              h % EMU_NFN == EMU_PERMB);
    if (by != 1 || bz != 1 || gz != 1) return 1;
    sim_perm_launches++;
    if (h % EMU_NFN == EMU_PERMB) emu_permb_launches++;
    return sim_perm_launch(h / EMU_NFN, h % EMU_NFN == EMU_PERMB, gx, gy, bx, shm, args) ? 1 : 0;
  }
  return emu_launch(f, gx, gy, gz, bx, by, bz, shm, s, args, extra);
}
static tfe__cu_result sim_attr(int *v, int attr, tfe__cu_device d) {
  (void)d;
  switch (attr) {
  case 16: *v = atoi(getenv("SIM_NSM")); return 0;
  case 82: *v = 65536; return 0;
  case 81: *v = 233472; return 0;
  case 106: *v = 32; return 0;
  case 111: *v = 1024; return 0;
  case 97: *v = 232448; return 0;
  default: return 1;
  }
}
void tu_gpu_emulate(void) {
  if (getenv("SIM_BLOCKS")) tfe__gperm_cfg.blocks = atoll(getenv("SIM_BLOCKS")); /* 1: every block walks many chunks */
  if (getenv("SIM_DTILE")) tfe__gperm_cfg.dtile = atoi(getenv("SIM_DTILE"));
  if (getenv("SIM_FIT")) tfe__gperm_cfg.fit = atoi(getenv("SIM_FIT"));
  if (getenv("SIM_PIPE")) tfe__gperm_cfg.pipe = atoi(getenv("SIM_PIPE"));
  if (getenv("SIM_WAVES")) tfe__gperm_cfg.waves = atoi(getenv("SIM_WAVES"));
  if (getenv("SIM_ORDER")) tfe__gperm_cfg.order = atoi(getenv("SIM_ORDER"));
  if (getenv("SIM_RUN")) tfe__gperm_cfg.run = atoi(getenv("SIM_RUN"));
  if (getenv("SIM_TMAX")) tfe__gperm_cfg.tmax = atoi(getenv("SIM_TMAX"));
  if (getenv("SIM_PRI")) tfe__gperm_cfg.pri = atoi(getenv("SIM_PRI"));
  if (getenv("SIM_BIG")) tfe__gperm_cfg.big = atoi(getenv("SIM_BIG"));
  tu_gpu_emulate_base();
  if (getenv("SIM_NSM")) tfe__gpu.cu.cuDeviceGetAttribute = sim_attr;
  tfe__gpu.cu.cuLaunchKernel = sim_launch;
}
