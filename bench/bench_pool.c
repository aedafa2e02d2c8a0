/* bench_pool: the buffer pool's effect on allocation-heavy einsum loops, pool on vs off in the
 * same run. Each case runs a loop of allocating einsums (the results and their storage records
 * come from the allocator every iteration); rounds alternate pool on / pool off, and the
 * median over the rounds is printed:
 *   case=... iters=... pool_on_ms=... pool_off_ms=... off/on=... hits=...
 * Usage: bench_pool [rounds] (default 7). Threads: tenferro's default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tenferro.h>

static double now_ms(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct { const char *name, *expr; int nops; int64_t n; int iters; } bcase;

/* One loop: iters allocating einsums, each result released at once. */
static double run(const bcase *c, const tfe_view_f64 *ops) {
  double t0 = now_ms();
  for (int i = 0; i < c->iters; i++) {
    tfe_tensor_f64 out = {0};
    if (tfe_einsum_f64(&out, c->expr, c->nops, ops)) {
      fprintf(stderr, "%s: %s\n", c->name, tfe_last_error());
      exit(1);
    }
    tfe_tensor_release_f64(&out);
  }
  return now_ms() - t0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  if (rounds < 1 || rounds > 99) rounds = 7;
  const bcase cases[] = {
      {"small_matmul_32", "ij,jk->ik", 2, 32, 20000},
      {"chain3_64", "ij,jk,kl->il", 3, 64, 4000},
      {"transpose_1024 (8 MiB results)", "ij->ji", 1, 1024, 60},
      {"outer_512 (2 MiB results)", "i,j->ij", 2, 512, 400},
  };
  size_t limit = (size_t)2 << 30;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const bcase *k = &cases[c];
    int64_t n = k->n, d2[2] = {n, n}, d1[1] = {n};
    bool vec = strcmp(k->expr, "i,j->ij") == 0;
    tfe_tensor_f64 t[3];
    memset(t, 0, sizeof t);
    tfe_view_f64 v[3];
    for (int i = 0; i < k->nops; i++) {
      if (tfe_ones_f64(&t[i], vec ? 1 : 2, vec ? d1 : d2, TFE_COLMAJOR)) return 1;
      v[i] = t[i].v;
    }
    double on[99], off[99];
    tfe_pool_stats s = {0};
    run(k, v); /* warm: plan cache, workspace */
    for (int r = 0; r < rounds; r++) {
      tfe_pool_set_limit(limit);
      if (r == 0) tfe_pool_stats_reset();
      on[r] = run(k, v);
      if (r == 0) tfe_pool_get_stats(&s);
      tfe_pool_set_limit(0);
      off[r] = run(k, v);
    }
    qsort(on, (size_t)rounds, sizeof *on, cmpd);
    qsort(off, (size_t)rounds, sizeof *off, cmpd);
    double mo = on[rounds / 2], mf = off[rounds / 2];
    printf("case=%s iters=%d pool_on_ms=%.2f pool_off_ms=%.2f off/on=%.2f hits=%lld misses=%lld\n", k->name,
           k->iters, mo, mf, mf / mo, (long long)s.hits, (long long)s.misses);
    for (int i = 0; i < k->nops; i++) tfe_tensor_release_f64(&t[i]);
  }
  tfe_pool_set_limit(limit);
  return 0;
}
