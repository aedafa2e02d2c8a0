/* bench/sim/dump_src.c — writes the permutation/copy kernels' source (tfe__gpu_ksrc of
 * include/tenferro/gpu/kernels.h) to stdout for bench/sim/kernel_sim.cpp, with `extern "C"`
 * dropped (the simulator compiles it once per kind, in a namespace; `--extern` keeps it, for
 * bench/sim/regs.py). Exits 1 when a piece
 * reaches ISO C's 4095-byte string limit. */
#include <tenferro/gpu/tenferro_gpu.c>
int main(int argc, char **argv) {
  int bad = 0, keep = argc > 1 && !strcmp(argv[1], "--extern"); /* keep extern "C" (bench/sim/regs.py) */
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc / sizeof *tfe__gpu_ksrc; i++) {
    const char *s = tfe__gpu_ksrc[i];
    if (strlen(s) >= 4095) fprintf(stderr, "piece %zu: %zu bytes\n", i, strlen(s)), bad = 1;
    for (; *s; s++) {
      if (!keep && !strncmp(s, "extern \"C\" ", 11)) { s += 10; continue; }
      putchar(*s);
    }
  }
  return bad;
}
