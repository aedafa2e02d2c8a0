/* bench_tblocks — the register-block transposes (tfe__ktrx: 1- and 2-byte kinds 64 x 64 bytes,
 * 64 / es rows to 64 / es columns; 4-byte 16 x 8, 8-byte 8 x 8, 16-byte 4 x 4 elements) one
 * block at a time, the source rows S bytes apart:
 * in L1 (S = 128), at an odd stride (1843), and 8 KiB apart (all 64 rows in one L1 set, so that
 * a block reading a line more than once fetches it again from L2). Reports ns and bytes per ns a
 * block (best and median of --reps rounds of N blocks), with a 4 KiB memcpy for scale. The
 * kernels are internal (simd_x86.h); the program builds on earlier commits too (tfe__ktrx has
 * kept its signature), which is how the swap form it replaced was timed (docs/bench-kernel.md,
 * session 38).
 *
 *   bench_tblocks [--reps R] [--blocks N] [--strides 128,1843,8192] */
#define _GNU_SOURCE
#include <tenferro.h>
#include <time.h>

#include "bench_common.h"

#if TFE__KHAVE_TR8
/* Best and median ns per call of one block transpose (es bytes, rows ld bytes apart). */
static void time_blocks(size_t es, int64_t ld, int reps, int nblk, double *best, double *med) {
  unsigned char *src = aligned_alloc(64, (size_t)(64 * ld)), *dst = aligned_alloc(64, (size_t)(64 * ld));
  for (int64_t i = 0; i < 64 * ld; i++) src[i] = (unsigned char)(i * 7 + i / ld);
  const void *sr[64];
  void *dc[64];
  for (int i = 0; i < 64; i++) { sr[i] = src + i * ld; dc[i] = dst + i * ld; }
  double t[64];
  for (int r = 0; r < reps; r++) {
    double t0 = now_ms();
    for (int k = 0; k < nblk; k++) {
      tfe__ktrx(es, dc, sr, false);
      __asm__ volatile("" ::"r"(dst) : "memory");
    }
    t[r] = (now_ms() - t0) * 1e6 / nblk;
  }
  /* the block's result against the plain transpose (a wrong kernel is no benchmark) */
  for (int i = 0; i < (int)tfe__krb(es); i++)
    for (int j = 0; j < (int)tfe__kcb(es); j++)
      if (memcmp(dst + j * ld + i * (int64_t)es, src + i * ld + j * (int64_t)es, es)) {
        fprintf(stderr, "bench_tblocks: es %zu stride %lld: wrong element (%d, %d)\n", es, (long long)ld, i, j);
        exit(1);
      }
  qsort(t, (size_t)reps, sizeof t[0], cmpd);
  *best = t[0];
  *med = t[reps / 2];
  free(src);
  free(dst);
}
#endif

int main(int argc, char **argv) {
  int reps = 7, nblk = 100000;
  int64_t strides[8] = {128, 1843, 8192};
  int ns = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) nblk = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--strides") && i + 1 < argc) {
      ns = 0;
      for (char *p = argv[++i]; *p && ns < 8; p++) {
        strides[ns++] = strtoll(p, &p, 10);
        if (!*p) break;
      }
    } else {
      fprintf(stderr, "usage: bench_tblocks [--reps R] [--blocks N] [--strides S1,S2,..]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > 64 || nblk < 1) { fprintf(stderr, "bench_tblocks: --reps 1..64, --blocks >= 1\n"); return 2; }
#if TFE__KHAVE_TR8
  if (!tfe__ksimd()) { printf("# no SIMD kernels on this host\n"); return 0; }
  printf("# register-block transposes, 1 thread, %d blocks a round, best / median of %d rounds\n", nblk, reps);
  for (int s = 0; s < ns; s++) {
    if (strides[s] < 64) { fprintf(stderr, "bench_tblocks: strides of 64 bytes or more\n"); return 2; }
    for (size_t es = 1; es <= 16; es *= 2) {
      double b, m;
      const int64_t bytes = tfe__krb(es) * tfe__kcb(es) * (int64_t)es;
      time_blocks(es, strides[s], reps, nblk, &b, &m);
      printf("es %2zu stride %5lld: %7.1f ns a block of %4lld bytes (median %7.1f), %5.1f bytes/ns\n", es, (long long)strides[s],
             b, (long long)bytes, m, (double)bytes / b);
    }
  }
  static char a[4096], c[4096];
  double t0 = now_ms();
  for (int k = 0; k < nblk; k++) {
    memcpy(c, a, sizeof a);
    __asm__ volatile("" ::"r"(c) : "memory");
  }
  printf("memcpy of 4 KiB in L1: %.1f ns\n", (now_ms() - t0) * 1e6 / nblk);
#else
  (void)reps; (void)nblk; (void)strides; (void)ns;
  printf("# no x86 register-block kernels in this build\n");
#endif
  return 0;
}
