/* bench/sim/plans.c — prints tfe_perm2d's plan (gpu/exec.h tfe__gperm_plan) and the launch it
 * makes for each pattern of ../shared/bench/permutation_patterns.json (f64), on the host, with
 * an H100's occupancy attributes (132 multiprocessors) unless NSM says otherwise. Knobs as
 * bench_gpu_perm's configs: FIT, PIPE, WAVES, BLOCKS, TILE, DTILE, ORDER, RUN, TMAX, PRI, BIG; ES
 * the element size (default 8). No GPU needed. */
#define _POSIX_C_SOURCE 200809L
#include <tenferro/gpu/tenferro_gpu.c>
#include <stdlib.h>

#include "../bench_common.h"

static tfe__cu_result attr(int *v, int a, tfe__cu_device d) {
  (void)d;
  *v = a == 16 ? (getenv("NSM") ? atoi(getenv("NSM")) : 132) : a == 82 ? 65536 : a == 81 ? 233472 : a == 106 ? 32
     : a == 97 ? 232448 : 1024;
  return 0;
}
static tfe__cu_result fattr(tfe__cu_function f, int a, int v) { (void)f, (void)a, (void)v; return 0; }
static unsigned lgx, lgy, lnt, lshm;
static tfe__cu_result launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  (void)f, (void)gz, (void)by, (void)bz, (void)s, (void)args, (void)extra;
  lgx = gx, lgy = gy, lnt = bx, lshm = shm;
  return 0;
}
int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : "../shared/bench/permutation_patterns.json";
  if (getenv("FIT")) tfe__gperm_cfg.fit = atoi(getenv("FIT"));
  if (getenv("PIPE")) tfe__gperm_cfg.pipe = atoi(getenv("PIPE"));
  if (getenv("WAVES")) tfe__gperm_cfg.waves = atoi(getenv("WAVES"));
  if (getenv("BLOCKS")) tfe__gperm_cfg.blocks = atoll(getenv("BLOCKS"));
  if (getenv("TILE")) tfe__gperm_cfg.tile = atoi(getenv("TILE"));
  if (getenv("DTILE")) tfe__gperm_cfg.dtile = atoi(getenv("DTILE"));
  if (getenv("ORDER")) tfe__gperm_cfg.order = atoi(getenv("ORDER"));
  if (getenv("RUN")) tfe__gperm_cfg.run = atoi(getenv("RUN"));
  if (getenv("TMAX")) tfe__gperm_cfg.tmax = atoi(getenv("TMAX"));
  if (getenv("PRI")) tfe__gperm_cfg.pri = atoi(getenv("PRI"));
  if (getenv("BIG")) tfe__gperm_cfg.big = atoi(getenv("BIG"));
  size_t es = getenv("ES") ? (size_t)atoi(getenv("ES")) : 8;
  tfe__gpu.cu.cuDeviceGetAttribute = attr, tfe__gpu.cu.cuLaunchKernel = launch, tfe__gpu.cu.cuFuncSetAttribute = fattr;
  tfe__gpu_dev D;
  memset(&D, 0, sizeof D);
  D.info.vendor = TFE_GPU_NVIDIA;
  for (int g = 0; g < TFE__GK_COUNT; g++) D.f_perm_b[g] = (tfe__cu_function)(uintptr_t)1;
  char *text = bench_slurp(file);
  tfe_json j;
  if (!text || tfe_json_parse(text, strlen(text), &j) != TFE_OK) return 1;
  int pats = tfe_json_get(&j, 0, "patterns");
  for (int pn = j.nodes[pats].first; pn >= 0; pn = j.nodes[pn].next) {
    int64_t shape[TFE_MAX_RANK], perm[TFE_MAX_RANK], sa[TFE_MAX_RANK];
    int r = bench_json_ints(&j, tfe_json_get(&j, pn, "shape"), shape);
    bench_json_ints(&j, tfe_json_get(&j, pn, "perm"), perm);
    int sl = tfe_json_get(&j, pn, "src_layout");
    if (!strcmp(j.nodes[tfe_json_get(&j, sl, "kind")].str, "explicit_strides")) bench_json_ints(&j, tfe_json_get(&j, sl, "strides"), sa);
    else for (int d = 0, s = 1; d < r; d++) sa[d] = s, s *= (int)shape[d];
    tfe__gpu_kparams p;
    memset(&p, 0, sizeof p);
    int64_t sc = 1;
    for (int k = 0; k < r; k++) tfe__gpu_kp_out(&p, shape[perm[k]], sc, sa[perm[k]], "plans"), sc *= shape[perm[k]];
    tfe__gpu_kp_sort(&p);
    tfe__gpu_kp_merge(&p);
    p.total = 1;
    for (int i = 0; i < p.nout; i++) p.total *= p.dout[i];
    p.alpha_re = 1, p.beta_zero = 1;
    tfe__gpu_kparams p2 = p;
    tfe__gperm_q q;
    tfe__gperm_plan(&p2, &q, es, tfe__gperm_bigsm(&D, 0));
    tfe__gpu_launch_perm(&D, 0, 0, 0, &p, es, "plans");
    printf("%-40s mode %d%s x %lld (%d labels) y %lld (%d) tile %d x %d rest %lld | grid %u x %u, %u threads, %u B, %.1f positions a block\n",
           j.nodes[tfe_json_get(&j, pn, "id")].str, q.mode, q.wide == 2 ? " (big)" : "", q.px, q.nx, q.py, q.ny, q.TX, q.TY, q.rest, lgx, lgy, lnt, lshm,
           (double)q.rest / lgy);
  }
  tfe_json_free(&j);
  return 0;
}
