/* bench_common.h — timing helpers shared by the permutation benchmarks (bench_permute,
 * bench_permute_ab, bench_permute_sweep, bench_kernels, bench_slices,
 * bench_gpu_perm, sim/plans). Include after <tenferro.h> and
 * <unistd.h>. */
#ifndef TFE_BENCH_COMMON_H
#define TFE_BENCH_COMMON_H
#include <time.h>

/* A whole file, NUL-terminated (malloc'd); NULL when it cannot be read. */
static inline char *bench_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}
/* The numbers of JSON array `arr` (at most TFE_MAX_RANK) into out; returns the count. */
static inline int bench_json_ints(const tfe_json *j, int arr, int64_t *out) {
  int n = 0;
  for (int x = j->nodes[arr].first; x >= 0 && n < TFE_MAX_RANK; x = j->nodes[x].next) out[n++] = (int64_t)j->nodes[x].num;
  return n;
}
/* Wall time; TFE_BENCH_CPU=1: the process's CPU time instead (1-thread runs on a shared machine:
 * time spent descheduled is left out; page faults count, they run in the process) */
static inline double now_ms(void) {
  struct timespec t;
  static int cpu = -1;
  if (cpu < 0) cpu = getenv("TFE_BENCH_CPU") && atoi(getenv("TFE_BENCH_CPU")) > 0;
  clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static inline int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
/* Untimed: read a buffer of three last-level caches (at least 64 MiB), so that the next
 * timed call finds neither its source nor a previous call's lines in cache (evict_on =
 * false skips it). */
static bool evict_on = true;
static inline void evict(void) {
  static volatile const char *buf;
  static size_t bytes;
  if (!evict_on) return;
  if (!buf) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    bytes = l3 > 0 && (size_t)l3 * 3 > ((size_t)64 << 20) ? (size_t)l3 * 3 : (size_t)64 << 20;
    char *b = malloc(bytes);
    if (!b) { evict_on = false; return; }
    memset(b, 1, bytes);
    buf = b;
  }
  unsigned long sum = 0;
  for (size_t i = 0; i < bytes; i += 64) sum += (unsigned char)buf[i];
  __asm__ volatile("" : : "r"(sum));
}
/* The memcpy baseline, allocation-inclusive: a buffer from tenferro's allocator with the
 * huge-page advice tfe_contiguous gives its results, memcpy, free. Milliseconds; -1 when
 * out of memory. */
static inline void bench_copy(void *p, const void *src, size_t bytes, bool streamed) {
  if (streamed) { tfe__kstream(p, src, bytes); tfe__ksfence(); }
  else memcpy(p, src, bytes);
}
/* streamed: the copy's stores streamed past the cache (tenferro's own streaming memcpy), the
 * copy a C library does only above its threshold (glibc: 3/4 of the L3 and more, 181 MiB on a
 * 480 MiB-L3 Xeon, where its 128 MiB memcpy took 1.8x the streamed time; a few MiB on a 32 MiB
 * L3): the limit that permutation ratios are taken against, with the library's memcpy. */
static inline double memcpy_fresh_ms_ex(const void *src, size_t bytes, bool streamed) {
  tfe_allocator a = tfe_get_allocator();
  double t0 = now_ms();
  void *p = a.alloc(a.ctx, bytes, TFE_ALIGN);
  if (!p) return -1;
  tfe__kadvise_huge(p, bytes);
  bench_copy(p, src, bytes, streamed);
  __asm__ volatile("" : : "r"(p) : "memory");
  a.free(a.ctx, p);
  return now_ms() - t0;
}
static inline double memcpy_fresh_ms(const void *src, size_t bytes) { return memcpy_fresh_ms_ex(src, bytes, false); }
#endif
