/* bench/bench_gpu_perm.c — the permutation patterns of ../shared/bench/permutation_patterns.json on
 * the GPU backend against a device-to-device copy of the same bytes, in the same run.
 *
 *   build/bench/bench_gpu_perm [patterns.json] [reps] [configs]  (default ../shared/bench/..., 10)
 *
 * configs: a comma-separated list of blocks/tile/dtile[/fit/pipe/waves/order] launch settings of the
 * permutation kernel (tfe__gperm_cfg in gpu/exec.h: the grid size aimed at, 0 for waves times
 * the blocks the device holds at once; the largest tile of mode 1 and of mode 0, in elements;
 * the exact-group fit 0-2; the next position's loads before the stores 0/1; waves; the rest's
 * label order 0-2), e.g.
 * 0/1024/1024/2/1/1,2048/1024/1024/0/0: each pattern is timed under each (one column each; the
 * first is the built-in default when the list is absent; 2048/1024/1024/0/0 is session 11's
 * plan and grid).
 *
 * Each pattern (f64): out[i0, ..., ik] = src[i_perm0, ..., i_permk], the source column-major or
 * with the pattern's explicit element strides, the destination column-major; src[e] = e (its
 * storage index). tenferro: tfe_contract_dyn, a unary contraction (the PERMUTE primitive) of
 * device operands into a destination allocated once (allocation not timed; the shared
 * README's CPU timings include it). The copy: cuMemcpyDtoDAsync of the same bytes. Median of
 * `reps` runs after 2 warm-ups between cuEvents; ratio = copy time / permute time (the target
 * is 0.8 or more). Every config's result is checked: 2^20 random elements of the downloaded
 * destination against the source index they must hold (the whole tensor when smaller). Without a GPU it
 * says so and exits 0. One unit: it includes the companion (default mode). */
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

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : "../shared/bench/permutation_patterns.json";
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  long long cfg[8][7];
  int ncfg = 0;
  cfg[0][0] = tfe__gperm_cfg.blocks, cfg[0][1] = tfe__gperm_cfg.tile, cfg[0][2] = tfe__gperm_cfg.dtile;
  cfg[0][3] = tfe__gperm_cfg.fit, cfg[0][4] = tfe__gperm_cfg.pipe, cfg[0][5] = tfe__gperm_cfg.waves, cfg[0][6] = tfe__gperm_cfg.order;
  for (const char *c = argc > 3 ? argv[3] : ""; *c && ncfg < 8;) {
    long long *k = cfg[ncfg];
    k[3] = tfe__gperm_cfg.fit, k[4] = tfe__gperm_cfg.pipe, k[5] = tfe__gperm_cfg.waves, k[6] = tfe__gperm_cfg.order;
    if (sscanf(c, "%lld/%lld/%lld/%lld/%lld/%lld/%lld", &k[0], &k[1], &k[2], &k[3], &k[4], &k[5], &k[6]) < 3 || k[1] < 64 ||
        k[1] > 1024 || k[2] < 32 || k[2] > 1024 || k[0] < 0 || k[3] < 0 || k[3] > 2 || k[5] < 1 || k[6] < 0 || k[6] > 2) {
      fprintf(stderr, "bad config list '%s' (blocks/tile/dtile[/fit/pipe/waves/order], tile 64..1024, dtile 32..1024)\n", argv[3]);
      return 2;
    }
    ncfg++;
    while (*c && *c != ',') c++;
    if (*c == ',') c++;
  }
  if (ncfg == 0) ncfg = 1;
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
    printf("config %d: blocks %lld, tile %lld, dtile %lld, fit %lld, pipe %lld, waves %lld, order %lld\n", k, cfg[k][0],
           cfg[k][1], cfg[k][2], cfg[k][3], cfg[k][4], cfg[k][5], cfg[k][6]);
  printf("%-40s %10s %10s %8s %9s %7s", "pattern", "tfe ms", "copy ms", "ratio", "tfe GB/s", "check");
  for (int k = 1; k < ncfg; k++) printf("  cfg%d ms  ratio", k);
  printf("\n");
  int bad = 0;
  for (int pn = j.nodes[pats].first; pn >= 0; pn = j.nodes[pn].next) {
    const char *id = j.nodes[tfe_json_get(&j, pn, "id")].str;
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
    double tc = time_ms(q.D, run_copy, &q, reps), tk[8] = {0};
    int64_t checks = n < (1 << 20) ? n : (1 << 20), wrong = 0, wk[8] = {0};
    tfe_dyn o;
    if (tfe_dyn_empty(&o, TFE_DT_F64, r, cd, TFE_COLMAJOR) != TFE_OK) return 1;
    for (int k = ncfg - 1; k >= 0; k--) {
      tfe__gperm_cfg.blocks = cfg[k][0], tfe__gperm_cfg.tile = (int)cfg[k][1], tfe__gperm_cfg.dtile = (int)cfg[k][2];
      tfe__gperm_cfg.fit = (int)cfg[k][3], tfe__gperm_cfg.pipe = (int)cfg[k][4], tfe__gperm_cfg.waves = (int)cfg[k][5];
      tfe__gperm_cfg.order = (int)cfg[k][6];
      tk[k] = time_ms(q.D, run_perm, &q, reps);
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
