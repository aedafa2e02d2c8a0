/* bench/bench_gpu_perm.c — the permutation patterns of ../shared/bench/permutation_patterns.json on
 * the GPU backend against a device-to-device copy of the same bytes, in the same run.
 *
 *   build/bench/bench_gpu_perm [patterns.json] [reps] [configs]  (default ../shared/bench/..., 10)
 *
 * configs: a comma-separated list of blocks/tile/dtile[/fit/pipe/waves/order/run/tmax/pri/wide/big] launch
 * settings of the permutation kernel (tfe__gperm_cfg in gpu/exec.h: the grid size aimed at, 0
 * for waves times the blocks the device holds at once; the largest tile of mode 1 and of mode 0,
 * in elements; the exact-group fit 0-2; the next position's loads before the stores 0/1; waves;
 * the rest's label order 0-3; the run in bytes a tile side grows to, 0 for none; the most
 * elements of such a tile; which side grows first, 1 C's, 0 A's; 1 for tiles of 513-576
 * threads on tfe_perm2d_w (two blocks a multiprocessor); the most elements of a tile on
 * tfe_perm2d_b (opt-in shared memory), 0 for none; fields left out keep the default), e.g. 0/1024/1024/2/1/1/1/0 (session 12's plan) or 2048/1024/1024/0/0/1/0/0
 * (session 11's plan and grid): each pattern is timed under each (one column each; the first is
 * the built-in default when the list is absent).
 *
 * Each pattern (f64): out[i0, ..., ik] = src[i_perm0, ..., i_permk], the source column-major or
 * with the pattern's explicit element strides, the destination column-major; src[e] = e (its
 * storage index). tenferro: tfe_contract_dyn, a unary contraction (the PERMUTE primitive) of
 * device operands into a destination allocated once (allocation not timed; the shared
 * README's CPU timings include it). The copy: cuMemcpyDtoDAsync of the same bytes. Each of
 * `reps` rounds (at most 64, after 2 warm-up rounds) times the copy and then every config, each
 * call alone between two cuEvents on the device's stream (the host call included), so that the
 * copy and the permutations are measured interleaved; the medians are printed, ratio = copy
 * time / permute time (the target is 0.8 or more). With BENCH_B2B=n (2..64) two more columns:
 * n copies and n permutations (the first config) back to back between two events, per call
 * (the host's part hidden wherever the device is the slower). Every config's result is
 * checked: 2^20 random elements of the downloaded destination against the source index they
 * must hold (the whole tensor when smaller). BENCH_ONLY=id1,id2 runs those patterns only.
 * Without a GPU it says so and exits 0. One unit: it includes the companion (default mode). */
#define _POSIX_C_SOURCE 200809L
#include <tenferro/gpu/tenferro_gpu.c>
#include <math.h>
#include <stdlib.h>

#include "bench_gpu_common.h"
#include "bench_common.h"

typedef struct pctx {
  tfe_dyn src, dst;
  int32_t la[TFE_MAX_RANK], lc[TFE_MAX_RANK];
  tfe__gpu_dev *D;
  size_t bytes;
} pctx;
static tfe_status run_perm(void *p) {
  pctx *q = (pctx *)p;
  double one = 1, zero = 0;
  return tfe_contract_dyn(&one, &q->src, q->la, NULL, NULL, &zero, &q->dst, q->lc);
}
static tfe_status run_copy(void *p) {
  pctx *q = (pctx *)p;
  TFE_TRY(tfe__gpu_enter(q->D, "copy"));
  tfe__gpu.cu.cuMemcpyDtoDAsync((tfe__cu_ptr)(uintptr_t)q->dst.data, (tfe__cu_ptr)(uintptr_t)q->src.data, q->bytes,
                                q->D->stream);
  tfe__gpu_leave(q->D);
  return TFE_OK;
}

/* Whether id is in the comma-separated list. */
static bool bench_listed(const char *list, const char *id) {
  size_t n = strlen(id);
  for (const char *c = list; *c;) {
    const char *e = strchr(c, ',');
    size_t m = e ? (size_t)(e - c) : strlen(c);
    if (m == n && !strncmp(c, id, n)) return true;
    if (!e) break;
    c = e + 1;
  }
  return false;
}
/* Creates (or destroys) the two events of the timers. */
static void bench_events(pctx *q, tfe__cu_event *e, bool create) {
  tfe__gpu_enter(q->D, "bench");
  for (int i = 0; i < 2; i++)
    if (create) tfe__gpu.cu.cuEventCreate(&e[i], 0);
    else tfe__gpu.cu.cuEventDestroy(e[i]);
  tfe__gpu_leave(q->D);
}
/* One call of fn between two events on q's stream, in ms. */
static double time_one(pctx *q, bench_fn fn, tfe__cu_event e0, tfe__cu_event e1, int n) {
  tfe__gpu_enter(q->D, "bench");
  tfe__gpu.cu.cuEventRecord(e0, q->D->stream);
  tfe__gpu_leave(q->D);
  for (int i = 0; i < n; i++)
    if (fn(q) != TFE_OK) {
      fprintf(stderr, "bench: %s / %s\n", tfe_last_error(), tfe_gpu_last_error());
      exit(1);
    }
  float ms = 0;
  tfe__gpu_enter(q->D, "bench");
  tfe__gpu.cu.cuEventRecord(e1, q->D->stream);
  tfe__gpu.cu.cuEventSynchronize(e1);
  tfe__gpu.cu.cuEventElapsedTime(&ms, e0, e1);
  tfe__gpu_leave(q->D);
  return ms;
}
/* Interleaved medians: each round times the copy, then every config (2 warm-up rounds). */
static void time_set(pctx *q, const tfe__gperm_knobs *cfg, int ncfg, int reps, double *tc, double *tk) {
  static double t[9][64];
  tfe__cu_event e[2];
  bench_events(q, e, true);
  if (reps > 64) reps = 64;
  if (reps < 1) reps = 1;
  for (int i = -2; i < reps; i++)
    for (int k = -1; k < ncfg; k++) {
      if (k >= 0) tfe__gperm_cfg = cfg[k];
      double ms = time_one(q, k < 0 ? run_copy : run_perm, e[0], e[1], 1);
      if (i >= 0) t[k + 1][i] = ms;
    }
  for (int k = -1; k < ncfg; k++) {
    qsort(t[k + 1], (size_t)reps, sizeof(double), cmp_d);
    *(k < 0 ? tc : &tk[k]) = t[k + 1][reps / 2];
  }
  bench_events(q, e, false);
}
/* n calls back to back between two events, per call (median of 5 after one warm-up). */
static double time_b2b(pctx *q, bench_fn fn, int n) {
  double t[5];
  tfe__cu_event e[2];
  bench_events(q, e, true);
  for (int i = -1; i < 5; i++) {
    double ms = time_one(q, fn, e[0], e[1], n) / n;
    if (i >= 0) t[i] = ms;
  }
  bench_events(q, e, false);
  qsort(t, 5, sizeof(double), cmp_d);
  return t[2];
}

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : "../shared/bench/permutation_patterns.json";
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  tfe__gperm_knobs cfg[8];
  int ncfg = 0;
  cfg[0] = tfe__gperm_cfg;
  for (const char *c = argc > 3 ? argv[3] : ""; *c && ncfg < 8;) {
    tfe__gperm_knobs *k = &cfg[ncfg];
    *k = tfe__gperm_cfg;
    long long v[12];
    int nv = sscanf(c, "%lld/%lld/%lld/%lld/%lld/%lld/%lld/%lld/%lld/%lld/%lld/%lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                    &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]);
    int *f[11] = {&k->tile, &k->dtile, &k->fit, &k->pipe, &k->waves, &k->order, &k->run, &k->tmax, &k->pri, &k->wide, &k->big};
    if (nv >= 1) k->blocks = v[0];
    for (int i = 1; i < nv; i++) *f[i - 1] = (int)v[i];
    if (nv < 3 || k->tile < 64 || k->tile > 1024 || k->dtile < 32 || k->dtile > 1024 || k->blocks < 0 || k->fit < 0 ||
        k->fit > 2 || k->waves < 1 || k->order < 0 || k->order > 3 || k->run < 0 || k->tmax < 64 || k->tmax > 4096) {
      fprintf(stderr, "bad config list '%s' (blocks/tile/dtile[/fit/pipe/waves/order/run/tmax/pri/wide/big], tile 64..1024, "
                      "dtile 32..1024, order 0..3, tmax 64..4096)\n", argv[3]);
      return 2;
    }
    ncfg++;
    while (*c && *c != ',') c++;
    if (*c == ',') c++;
  }
  if (ncfg == 0) ncfg = 1;
  (void)time_ms; /* bench_gpu_common.h's timer: this one interleaves its own (time_set) */
  if (tfe_gpu_init() != TFE_OK) {
    printf("bench_gpu_perm: %s\n", tfe_last_error());
    return 0;
  }
  tfe_gpu_device_info info;
  tfe_gpu_device_get(0, &info);
  printf("device: %s (sm_%d%d, %zu MiB)\n", info.name, info.cc_major, info.cc_minor, info.total_mem >> 20);
  char *text = bench_slurp(file);
  size_t len = text ? strlen(text) : 0;
  tfe_json j;
  if (!text || tfe_json_parse(text, len, &j) != TFE_OK) {
    fprintf(stderr, "cannot read %s\n", file);
    return 1;
  }
  free(text);
  int pats = tfe_json_get(&j, 0, "patterns");
  for (int k = 0; k < ncfg; k++)
    printf("config %d: blocks %lld, tile %d, dtile %d, fit %d, pipe %d, waves %d, order %d, run %d, tmax %d, pri %d, wide %d, big %d\n",
           k, cfg[k].blocks, cfg[k].tile, cfg[k].dtile, cfg[k].fit, cfg[k].pipe, cfg[k].waves, cfg[k].order, cfg[k].run,
           cfg[k].tmax, cfg[k].pri, cfg[k].wide, cfg[k].big);
  int b2b = getenv("BENCH_B2B") ? atoi(getenv("BENCH_B2B")) : 0;
  if (b2b > 64) b2b = 64;
  const char *only = getenv("BENCH_ONLY");
  printf("%-40s %10s %10s %8s %9s %7s", "pattern", "tfe ms", "copy ms", "ratio", "tfe GB/s", "check");
  for (int k = 1; k < ncfg; k++) printf("  cfg%d ms  ratio", k);
  if (b2b > 1) printf("  b2b copy  b2b tfe  ratio");
  printf("\n");
  int bad = 0;
  for (int pn = j.nodes[pats].first; pn >= 0; pn = j.nodes[pn].next) {
    const char *id = j.nodes[tfe_json_get(&j, pn, "id")].str;
    if (only && !bench_listed(only, id)) continue;
    int64_t shape[TFE_MAX_RANK], perm[TFE_MAX_RANK], sstr[TFE_MAX_RANK];
    int r = bench_json_ints(&j, tfe_json_get(&j, pn, "shape"), shape);
    bench_json_ints(&j, tfe_json_get(&j, pn, "perm"), perm);
    int sl = tfe_json_get(&j, pn, "src_layout");
    bool explicit_str = !strcmp(j.nodes[tfe_json_get(&j, sl, "kind")].str, "explicit_strides");
    pctx q;
    memset(&q, 0, sizeof q);
    q.D = &tfe__gpu.dev[0];
    tfe_dyn h;
    if (tfe_dyn_empty(&h, TFE_DT_F64, r, shape, TFE_COLMAJOR) != TFE_OK) return 1;
    if (explicit_str) {
      bench_json_ints(&j, tfe_json_get(&j, sl, "strides"), sstr);
      for (int d = 0; d < r; d++) h.lay.strides[d] = sstr[d];
    }
    int64_t n = tfe_layout_numel(&h.lay);
    double *x = (double *)h.data;
    for (int64_t e = 0; e < n; e++) x[e] = (double)e; /* the storage index (explicit strides are dense here) */
    q.bytes = (size_t)n * 8;
    int64_t cd[TFE_MAX_RANK];
    for (int k = 0; k < r; k++) q.la[k] = k, q.lc[k] = (int32_t)perm[k], cd[k] = shape[perm[k]];
    if (tfe_gpu_upload(&q.src, 0, &h) != TFE_OK || tfe_gpu_alloc_dyn(&q.dst, 0, TFE_DT_F64, r, cd, TFE_COLMAJOR) != TFE_OK) {
      fprintf(stderr, "%s: %s\n", id, tfe_last_error());
      return 1;
    }
    double tc = 0, tk[8] = {0}, bc = 0, bk = 0;
    time_set(&q, cfg, ncfg, reps, &tc, tk);
    if (b2b > 1) {
      tfe__gperm_cfg = cfg[0];
      bc = time_b2b(&q, run_copy, b2b), bk = time_b2b(&q, run_perm, b2b);
    }
    int64_t checks = n < (1 << 20) ? n : (1 << 20), wrong = 0, wk[8] = {0};
    tfe_dyn o;
    if (tfe_dyn_empty(&o, TFE_DT_F64, r, cd, TFE_COLMAJOR) != TFE_OK) return 1;
    for (int k = ncfg - 1; k >= 0; k--) {
      tfe__gperm_cfg = cfg[k];
      run_copy(&q); /* the identity over dst first: no element is left from an earlier run */
      if (run_perm(&q) != TFE_OK) return 1;
      /* check: dst[i] must be src's storage index of out multi-index i */
      if (tfe_gpu_download(&q.dst, &o) != TFE_OK) return 1;
      const double *y = (const double *)o.data;
      uint64_t rs = 88172645463325252ULL;
      for (int64_t t = 0; t < checks; t++) {
        int64_t i = t;
        if (checks < n) {
          rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
          i = (int64_t)(rs % (uint64_t)n);
        }
        int64_t rem = i, off = 0;
        for (int d = 0; d < r; d++) off += (rem % cd[d]) * h.lay.strides[perm[d]], rem /= cd[d];
        if (y[i] != (double)off) wk[k]++;
      }
      wrong += wk[k];
    }
    double tp = tk[0];
    if (wrong) bad++;
    printf("%-40s %10.4f %10.4f %8.3f %9.0f %7s", id, tp, tc, tc / tp, 2.0 * (double)q.bytes / tp / 1e6,
           wrong ? "WRONG" : "ok");
    for (int k = 1; k < ncfg; k++) printf(" %9.4f %6.3f", tk[k], tc / tk[k]);
    if (b2b > 1) printf(" %9.4f %8.4f %6.3f", bc, bk, bc / bk);
    printf("\n");
    for (int k = 0; k < ncfg; k++)
      if (wk[k]) printf("  config %d: %lld of %lld checked elements wrong\n", k, (long long)wk[k], (long long)checks);
    fflush(stdout);
    tfe_dyn_release(&o), tfe_dyn_release(&h), tfe_dyn_release(&q.src), tfe_dyn_release(&q.dst);
  }
  tfe_json_free(&j);
  printf("ratio = D2D copy time / permutation time; GB/s counts bytes read and written%s\n",
         bad ? "; SOME RESULTS WRONG" : "");
  return bad ? 1 : 0;
}
