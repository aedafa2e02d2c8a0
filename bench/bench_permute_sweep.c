/* bench_permute_sweep — tenferro's permuting copy on random shapes, permutations and scalar
 * sizes, each against a memcpy of the same bytes in the same round: the cases nobody tuned
 * for (the ten shared patterns are only ten). Looks for shapes where the plan falls far
 * behind memory speed.
 *
 *   bench_permute_sweep [--cases N] [--seed S] [--mib LO HI] [--reps R] [--threads T]
 *
 *   bench_permute_sweep ... [--sizes 1,2,4,8,16] [--only K] [--plan | --plan-only] [--tune knob=value]
 *                            (--plan: the loop plan and the path counters its planning set, then
 *                            those the warm-up call moved, per setting: `run A: counters k:count ..`)
 *   bench_permute_sweep --case 8:25,10,12,3r,19:1,4,0,3,2 [--plan] [--ab ..]: one given case
 *                            (scalar bytes : dims, r = reversed : permutation), timed as the others
 *   bench_permute_sweep ... --peer LIB.so: a third column, another transposer on the same cases
 *                            (bench/peer_hptt.sh builds HPTT's; 4-, 8-, 16-byte kinds, no reversed dims)
 *   bench_permute_sweep ... --warm: no cache emptying, tensors of 0.25-1 MiB unless --mib says: the
 *                            copy's own work in cache (on hosts whose memcpy is fast against their
 *                            cores, that work shows as the gap to memcpy; pooled outputs, no faults)
 *   bench_permute_sweep ... --ab knob=value [--ab ...]: every round also times setting B (the
 *                            knobs given) right after A, and prints B's median and B/A per round
 *   bench_permute_sweep ... --small-dims: every dim 2, 3 or 4, as many as fit (draw_small; the
 *                            random permutations of many small dims that tensor networks make)
 *   bench_permute_sweep ... --shared-runs: a dim continuing both operands' runs (draw_shared)
 *   bench_permute_sweep ... --reversed: regular cases with one or two dims read backwards (draw_reversed)
 *   bench_permute_sweep ... --records: copies between r-element records and r streams (draw_records)
 *   bench_permute_sweep ... --flips: numpy's flips of an inner axis, short first runs (draw_flips)
 *   bench_permute_sweep ... --last-flips: the same with the first run read backwards too: x[..., ::-1]
 *                            of a short last axis (BGR to RGB), records reversed (draw_flips)
 *
 * Case k: a scalar of 1, 2, 4, 8 or 16 bytes (u8 and u16 user kinds stamped here, f32, f64,
 * c128; --sizes picks a subset, e.g. --sizes 4,8,16 for the draws of sessions 6-9), rank 2-7, dims drawn so that the
 * tensor holds LO-HI MiB (default 48-160, above a 32 MiB L3), some dims small (2-5) and some
 * not powers of two, a random non-identity permutation, and in one case of four one source
 * dim reversed (negative stride). Timed: tfe_contiguous (allocation-inclusive, as
 * bench_permute) and the same allocator + the faster of the C library's memcpy (libc_ms) and a
 * streamed copy (memcpy_ms, the limit ratio= is taken against: bench_common.h, session 27;
 * before, ratios were against the library's memcpy alone); caches emptied before every timed call;
 * median of R rounds (default 3). One line per case, then the cases over 1.3x memcpy. */
#define _GNU_SOURCE
#include <tenferro.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"

#include "bench_userkinds.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static int64_t rint_(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

typedef struct {
  int rank, esz;
  int64_t dims[TFE_MAX_RANK], perm[TFE_MAX_RANK]; /* (drawn cases: rank 2-7; --case: any rank) */
  bool rev[TFE_MAX_RANK];
  int64_t n;
} kase;

/* Dims: a few small ones, the rest grown until the element count reaches the target. */
static int sizes[5] = {1, 2, 4, 8, 16}, nsizes = 5;
/* --small-dims: every dim 2, 3 or 4 (2 and 3 twice as likely), as many as fit the target (ranks
 * 11-27 at 48-160 MiB: the permutations of tensor networks over qubits and qutrits), no reversed
 * dims. */
static bool small_dims = false;
static kase draw_small(int64_t lo_bytes, int64_t hi_bytes) {
  static const int64_t pick[5] = {2, 2, 3, 3, 4};
  kase c;
  c.esz = sizes[rnd() % (uint64_t)nsizes];
  int64_t target = rint_(lo_bytes, hi_bytes) / c.esz, n = 1;
  c.rank = 0;
  while (c.rank < TFE_MAX_RANK) {
    int64_t d = pick[rnd() % 5];
    if (n * d > target) break;
    c.dims[c.rank++] = d;
    n *= d;
  }
  c.n = n;
  for (int k = 0; k < c.rank; k++) { c.perm[k] = k; c.rev[k] = false; }
  for (int k = c.rank - 1; k > 0; k--) {
    int j = (int)(rnd() % (uint64_t)(k + 1));
    int64_t t = c.perm[k]; c.perm[k] = c.perm[j]; c.perm[j] = t;
  }
  return c;
}
/* --shared-runs: a destination run a continued by a dim s that also continues the source's run
 * b: the source [b, s, a, o] read as [a, s, b, o], or [b, s, c, a, o] read as [a, s, b, c, o]
 * (c continuing the source's run b x s); b 2-63 bytes, a 16-255 bytes, s 2-3000, c 2-800, o what
 * fills the target (the shapes of copy_shared_run_dim and copy_shared_g0_bytes, session 33). */
static bool shared_runs = false;
static kase draw_shared(int64_t lo_bytes, int64_t hi_bytes) {
  kase c;
  c.esz = sizes[rnd() % (uint64_t)nsizes];
  const int64_t es = c.esz, b = rint_((2 + es - 1) / es, 63 / es > 1 ? 63 / es : 2),
                a = rint_((16 + es - 1) / es, 255 / es > 2 ? 255 / es : 2);
  const int64_t s = rnd() % 2 ? rint_(2, 40) : rint_(40, 3000), cc = rnd() % 2 ? rint_(2, 20) : rint_(20, 800);
  const bool five = rnd() % 2;
  c.rank = five ? 5 : 4;
  c.dims[0] = b; c.dims[1] = s;
  if (five) c.dims[2] = cc;
  c.dims[c.rank - 2] = a;
  int64_t n = b * s * a * (five ? cc : 1), target = rint_(lo_bytes, hi_bytes) / es;
  while (n > target) { /* (halve s or c, the larger) */
    int k = five && c.dims[2] > c.dims[1] ? 2 : 1;
    n = n / c.dims[k] * (c.dims[k] / 2);
    c.dims[k] /= 2;
  }
  c.dims[c.rank - 1] = target / n > 1 ? target / n : 1;
  c.n = n * c.dims[c.rank - 1];
  static const int64_t p4[4] = {2, 1, 0, 3}, p5[5] = {3, 1, 0, 2, 4};
  for (int k = 0; k < c.rank; k++) { c.perm[k] = five ? p5[k] : p4[k]; c.rev[k] = false; }
  return c;
}
/* --records: copies between records of r elements (r * es under 64 bytes, r 2-16; the rule takes r up to 8) and r streams
 * (copy_narrow_records, session 39): the source [rec.., n, o..] split so that n leads the
 * destination, or [n, rec.., o..] joined so that the record leads it; the record of one dim or
 * (one case of three, where r allows) two, in either order on the other side; 0-2 outer dims of
 * 2-5 in random order; n what fills the target. */
static bool records = false;
static kase draw_records(int64_t lo_bytes, int64_t hi_bytes) {
  kase c;
  do c.esz = sizes[rnd() % (uint64_t)nsizes]; while (c.esz == 16 && nsizes > 1 && rnd() % 2); /* (16: r <= 3 only) */
  const int64_t es = c.esz, maxr = 63 / es < 16 ? 63 / es : 16;
  const bool join = rnd() % 2, two = maxr >= 4 && rnd() % 3 == 0;
  const int nrec = two ? 2 : 1, nout = (int)rint_(0, 2), ni = join ? 0 : nrec;
  c.rank = nrec + 1 + nout;
  int64_t rec = 1, outer = 1;
  for (int k = 0; k < nrec; k++) {
    int64_t d = two ? rint_(2, maxr / 2) : rint_(2, maxr);
    if (two && k == 1 && rec * d > maxr) d = 2;
    c.dims[join ? 1 + k : k] = d;
    rec *= d;
  }
  for (int k = nrec + 1; k < c.rank; k++) { c.dims[k] = rint_(2, 5); outer *= c.dims[k]; }
  c.dims[ni] = rint_(lo_bytes, hi_bytes) / es / (rec * outer);
  if (c.dims[ni] < 1) c.dims[ni] = 1;
  c.n = c.dims[ni] * rec * outer;
  int m = 0;
  if (join) {
    const bool swap = two && rnd() % 2;
    for (int k = 0; k < nrec; k++) c.perm[m++] = 1 + (swap ? nrec - 1 - k : k);
  }
  c.perm[m++] = ni;
  int64_t left[TFE_MAX_RANK];
  int nl = 0;
  for (int k = 0; k < c.rank; k++) {
    bool taken = false;
    for (int j = 0; j < m; j++) taken |= c.perm[j] == k;
    if (!taken) left[nl++] = k;
  }
  for (int k = nl - 1; k > 0; k--) { int j = (int)(rnd() % (uint64_t)(k + 1)); int64_t t = left[k]; left[k] = left[j]; left[j] = t; }
  for (int k = 0; k < nl; k++) c.perm[m++] = left[k];
  for (int k = 0; k < c.rank; k++) c.rev[k] = false;
  return c;
}
static kase draw(int64_t lo_bytes, int64_t hi_bytes) {
  kase c;
  c.esz = sizes[rnd() % (uint64_t)nsizes];
  c.rank = (int)rint_(2, 7);
  int64_t target = rint_(lo_bytes, hi_bytes) / c.esz;
  for (;;) {
    int64_t n = 1;
    for (int k = 0; k < c.rank; k++) {
      c.dims[k] = rnd() % 3 == 0 ? rint_(2, 5) : 1;
      n *= c.dims[k];
    }
    for (int guard = 0; n < target && guard < 10000; guard++) { /* grow a random dim by ~1.1-2x */
      int k = (int)(rnd() % (uint64_t)c.rank);
      int64_t d = c.dims[k], nd = d < 4 ? d + 1 : d + rint_(d / 8 + 1, d);
      if (n / d * nd > hi_bytes / c.esz) continue;
      n = n / d * nd;
      c.dims[k] = nd;
    }
    c.n = n;
    if (n * c.esz >= lo_bytes / 2) break;
  }
  bool ident = true;
  do {
    for (int k = 0; k < c.rank; k++) c.perm[k] = k;
    for (int k = c.rank - 1; k > 0; k--) {
      int j = (int)(rnd() % (uint64_t)(k + 1));
      int64_t t = c.perm[k]; c.perm[k] = c.perm[j]; c.perm[j] = t;
    }
    ident = true;
    for (int k = 0; k < c.rank; k++) ident &= c.perm[k] == k;
  } while (ident);
  int flip = rnd() % 4 == 0 ? (int)(rnd() % (uint64_t)c.rank) : -1;
  for (int k = 0; k < c.rank; k++) c.rev[k] = k == flip;
  return c;
}

/* --reversed: regular cases whose source reads one or two dims backwards (numpy's flip and
 * [::-1] copies): half of them keep the source's dim 0 first in the destination (a run common to
 * both), dim 0 reversed in half, another dim in half (at least one reversed). */
static bool reversed_dims = false;
static kase draw_reversed(int64_t lo_bytes, int64_t hi_bytes) {
  kase c = draw(lo_bytes, hi_bytes);
  if (rnd() % 2)
    for (int k = 1; k < c.rank; k++) if (c.perm[k] == 0) { c.perm[k] = c.perm[0]; c.perm[0] = 0; }
  const int other = (int)rint_(1, c.rank - 1);
  bool any = false;
  for (int k = 0; k < c.rank; k++) { c.rev[k] = (k == 0 || k == other) && rnd() % 2; any |= c.rev[k]; }
  if (!any) c.rev[rnd() % 2 ? 0 : other] = true;
  return c;
}

/* --flips: numpy's flips of an inner axis (x[..., ::-1, :].copy() in column-major terms): the
 * destination keeps the source's first 2-4 dims first and in order, dim 0 a run of 1-64 bytes,
 * one or two of the other kept dims read backwards; the outer dims in order in half the cases,
 * else permuted. */
static bool flips = false, last_flips = false;
static kase draw_flips(int64_t lo_bytes, int64_t hi_bytes) {
  kase c = draw(lo_bytes, hi_bytes);
  if (c.rank < 3) return draw_flips(lo_bytes, hi_bytes);
  const int keep = (int)rint_(2, c.rank - 1 < 4 ? c.rank - 1 : 4);
  const int64_t n = c.n, d0 = rint_(1, 64 / c.esz > 1 ? 64 / c.esz : 1);
  c.dims[0] = d0;
  for (int k = 1; k < keep; k++) c.dims[k] = rint_(2, 40);
  int64_t inner = 1, rest = 1;
  for (int k = 0; k < keep; k++) inner *= c.dims[k];
  for (int k = keep; k < c.rank; k++) rest *= c.dims[k];
  while (rest > 1 && inner * rest > 2 * n) /* (shrink the outer dims back to about n elements) */
    for (int k = keep; k < c.rank && inner * rest > 2 * n; k++)
      if (c.dims[k] > 1) { rest = rest / c.dims[k] * ((c.dims[k] + 1) / 2); c.dims[k] = (c.dims[k] + 1) / 2; }
  while (inner * rest < n / 2) { c.dims[c.rank - 1] *= 2; rest *= 2; }
  c.n = inner * rest;
  for (int k = 0; k < c.rank; k++) { c.perm[k] = k; c.rev[k] = false; }
  if (rnd() % 2)
    for (int k = c.rank - 1; k > keep; k--) {
      int j = keep + (int)(rnd() % (uint64_t)(k - keep + 1));
      int64_t t = c.perm[k]; c.perm[k] = c.perm[j]; c.perm[j] = t;
    }
  c.rev[rint_(1, keep - 1)] = true;
  if (keep > 2 && rnd() % 3 == 0) c.rev[rint_(1, keep - 1)] = true;
  if (last_flips) { c.rev[0] = true; if (rnd() % 2) c.rev[rint_(1, keep - 1)] = false; } /* (dim 0 alone in half) */
  return c;
}

/* One tenferro call of the case for element type S; returns ms or -1 on error. */
#define TIMED_CASE(S, T)                                                                          \
  static double time_##S(const kase *c, void *src, void *keep) {                                  \
    tfe_view_##S v = {(T *)src, {c->rank, 0, {0}, {0}}, false};                                   \
    int64_t st[TFE_MAX_RANK], s = 1;                                                              \
    for (int k = 0; k < c->rank; k++) { st[k] = s; s *= c->dims[k]; }                             \
    for (int k = 0; k < c->rank; k++) {                                                           \
      int64_t a = c->perm[k];                                                                     \
      v.lay.dims[k] = c->dims[a];                                                                 \
      v.lay.strides[k] = c->rev[a] ? -st[a] : st[a];                                              \
      if (c->rev[a]) v.lay.offset += (c->dims[a] - 1) * st[a];                                    \
    }                                                                                             \
    tfe_tensor_##S o = {0};                                                                       \
    double t0 = now_ms();                                                                         \
    tfe_status e = tfe_contiguous_##S(&v, TFE_COLMAJOR, &o);                                      \
    double t = now_ms() - t0;                                                                     \
    if (e) { fprintf(stderr, "%s\n", tfe_last_error()); return -1; }                              \
    if (keep) memcpy(keep, o.v.data + o.v.lay.offset, (size_t)c->n * sizeof(T));                               \
    tfe_tensor_release_##S(&o);                                                                   \
    return t;                                                                                     \
  }
TIMED_CASE(u8k, u8k)
TIMED_CASE(u16k, u16k)
TIMED_CASE(f32, float)
TIMED_CASE(f64, double)
TIMED_CASE(c128, double _Complex)

static double time_tfe(const kase *c, void *src, void *keep) {
  return c->esz == 1 ? time_u8k(c, src, keep) : c->esz == 2 ? time_u16k(c, src, keep) : c->esz == 4 ? time_f32(c, src, keep)
       : c->esz == 8 ? time_f64(c, src, keep) : time_c128(c, src, keep);
}

/* --peer LIB.so: another transposer (bench/peers/hptt_shim.cpp: HPTT) timed on the same cases in
 * the same rounds, allocation-inclusive as the other two; its output is checked against
 * tenferro's once per case. A plan is made once per case (not timed); NULL: kind not supported. */
typedef struct {
  const char *(*name)(void);
  void *(*plan)(int esz, int rank, const int *dims, const int *perm, const void *src, void *dst, int threads);
  void (*run)(void *plan, void *dst);
  void (*free_)(void *plan);
} peer_lib;
static peer_lib peer;

static bool peer_open(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "--peer: %s\n", dlerror()); return false; }
  *(void **)&peer.name = dlsym(h, "tfe_peer_name");
  *(void **)&peer.plan = dlsym(h, "tfe_peer_plan");
  *(void **)&peer.run = dlsym(h, "tfe_peer_run");
  *(void **)&peer.free_ = dlsym(h, "tfe_peer_free");
  if (!peer.name || !peer.plan || !peer.run || !peer.free_) { fprintf(stderr, "--peer: %s lacks tfe_peer_*\n", path); return false; }
  return true;
}

/* The peer's plan for case c, or NULL (no peer, a reversed dim, a kind it lacks). */
static void *peer_plan_case(const kase *c, const void *src, int threads) {
  if (!peer.plan) return NULL;
  int dims[TFE_MAX_RANK], perm[TFE_MAX_RANK];
  for (int k = 0; k < c->rank; k++) {
    if (c->rev[k] || c->dims[k] > INT32_MAX) return NULL;
    dims[k] = (int)c->dims[k];
    perm[k] = (int)c->perm[k];
  }
  tfe_allocator a = tfe_get_allocator();
  void *dst = a.alloc(a.ctx, (size_t)c->n * (size_t)c->esz, TFE_ALIGN);
  if (!dst) return NULL;
  void *p = peer.plan(c->esz, c->rank, dims, perm, src, dst, threads);
  a.free(a.ctx, dst);
  return p;
}

/* One timed peer call into a fresh destination (as memcpy_fresh_ms); keep: a copy of its output. */
static double time_peer(void *plan, size_t bytes, void *keep) {
  tfe_allocator a = tfe_get_allocator();
  double t0 = now_ms();
  void *p = a.alloc(a.ctx, bytes, TFE_ALIGN);
  if (!p) return -1;
  tfe__kadvise_huge(p, bytes);
  if (keep) memset(p, 0x5a, bytes); /* a check: no stale output of an earlier call may pass */
  peer.run(plan, p);
  double t = now_ms() - t0;
  if (keep) memcpy(keep, p, bytes);
  a.free(a.ctx, p);
  return t;
}

/* The peer's output against tenferro's, byte for byte (both copy the same bytes). */
static bool peer_check(const kase *c, void *plan, void *src, size_t bytes) {
  char *x = malloc(bytes), *y = malloc(bytes);
  bool ok = x && y && time_tfe(c, src, x) >= 0 && time_peer(plan, bytes, y) >= 0 && !memcmp(x, y, bytes);
  if (!ok) fprintf(stderr, "--peer %s: output differs from tenferro's (or out of memory)\n", peer.name());
  free(x);
  free(y);
  return ok;
}

/* --plan: the loop plan of a case's copy (as k_copy_run_ builds it for a fresh destination of
 * written-before tiles), to see which path a slow case takes. */
static void print_plan(const kase *c) {
  int64_t dims[TFE_MAX_RANK], str[2][TFE_MAX_RANK], off[2] = {0, 0}, st[TFE_MAX_RANK], s = 1, es = c->esz;
  for (int k = 0; k < c->rank; k++) { st[k] = s; s *= c->dims[k]; }
  s = 1;
  for (int k = 0; k < c->rank; k++) {
    int64_t a = c->perm[k];
    dims[k] = c->dims[a];
    str[0][k] = s; s *= dims[k];
    str[1][k] = c->rev[a] ? -st[a] : st[a];
    if (c->rev[a]) off[1] += (c->dims[a] - 1) * st[a];
  }
  const int64_t *sp[2] = {str[0], str[1]};
  const tfe_tuning *tu = &tfe__st.tune;
  int64_t tt = tu->copy_tile_bytes / es < 8 ? 8 : tu->copy_tile_bytes / es;
  int64_t tg = 8 * tt < TFE__KTAB ? 8 * tt : TFE__KTAB;
  tfe__kplan p;
  int64_t st0[sizeof tfe__st.kernel_stat / sizeof tfe__st.kernel_stat[0]];
  memcpy(st0, tfe__st.kernel_stat, sizeof st0);
  tfe__st.kernel_stat_on++;
  bool ok = tfe__kplan_make(&p, 2, 0, c->rank, dims, sp, off, 65536 / es + 1, 4 * tt, tfe__kcopy_g1(2 * tt, es), tg, false, es, true);
  tfe__kplan u; /* (a copy of short common runs as units: units.h) */
  if (ok && tfe__kplan_units(&u, &p, tu->copy_unit_tile_bytes)) { p = u; tfe__st.kernel_stat[29]++; }
  tfe__st.kernel_stat_on--;
  if (!ok) return;
  printf("plan: rank %d gather %d tiny %d along_src %d ntiles %lld nchain %d unit %lld pf %lld x %d counters", p.rank, p.gather, p.tiny, p.along_src,
         (long long)p.ntiles, p.nchain, (long long)p.unit, (long long)p.pf_run, p.pf_nrun);
  for (size_t k = 0; k < sizeof st0 / sizeof st0[0]; k++) if (tfe__st.kernel_stat[k] != st0[k]) printf(" %zu", k);
  printf("\n");
  for (int k = 0; k < p.rank; k++)
    printf("  dim %d: %lld  dst %lld  src %lld\n", k, (long long)p.dims[k], (long long)p.str[0][k], (long long)p.str[1][k]);
  for (int g = 0; g < 2; g++)
    printf("  G%d: nd %d len %lld last %lld/%lld arith %d/%d step %lld/%lld\n", g, p.g[g].nd, (long long)p.g[g].len,
           (long long)p.g[g].last_b, (long long)p.g[g].last_n, p.g[g].arith[0], p.g[g].arith[1],
           (long long)p.g[g].step[0], (long long)p.g[g].step[1]);
  for (int q = 0; q < p.no; q++)
    printf("  odo %d: count %lld dst %lld src %lld clip %d\n", q, (long long)p.ocount[q], (long long)p.ostep[0][q],
           (long long)p.ostep[1][q], p.oclip[q]);
}

/* --case ES:D0,D1r,..:P0,P1,..: one given case (r: a reversed dim); false on a bad one. */
static bool parse_case(const char *arg, kase *c) {
  memset(c, 0, sizeof *c);
  char *q = (char *)arg;
  c->esz = (int)strtol(q, &q, 10);
  if (*q++ != ':') return false;
  for (c->n = 1; c->rank < TFE_MAX_RANK; q++) {
    c->dims[c->rank] = strtoll(q, &q, 10);
    if (*q == 'r') { c->rev[c->rank] = true; q++; }
    if (c->dims[c->rank] < 1) return false;
    c->n *= c->dims[c->rank++];
    if (*q != ',') break;
  }
  if (*q++ != ':') return false;
  int np = 0;
  for (; np < TFE_MAX_RANK; q++) {
    c->perm[np++] = strtoll(q, &q, 10);
    if (*q != ',') break;
  }
  bool seen[TFE_MAX_RANK] = {false};
  for (int k = 0; k < np; k++) {
    if (c->perm[k] < 0 || c->perm[k] >= c->rank || seen[c->perm[k]]) return false;
    seen[c->perm[k]] = true;
  }
  return np == c->rank && !*q && (c->esz == 1 || c->esz == 2 || c->esz == 4 || c->esz == 8 || c->esz == 16);
}

/* --tune / --ab: one knob "name=value" into *t; nonzero on a bad setting. */
static int set_knob(tfe_tuning *t, const char *arg) {
  char name[64];
  long long v;
  if (sscanf(arg, "%63[a-z_0-9]=%lld", name, &v) != 2) { fprintf(stderr, "--tune name=value\n"); return 2; }
#define KNOB(f) else if (!strcmp(name, #f)) t->f = (__typeof__(t->f))v;
  if (0) {}
  KNOB(copy_tile_bytes) KNOB(copy_run_split_bytes) KNOB(copy_run_split_far_bytes) KNOB(copy_shifted_rims) KNOB(copy_buffered_tiles) KNOB(kernel_prefetch_strips)
  KNOB(kernel_table_tile_bytes) KNOB(kernel_tiny_dim) KNOB(kernel_gather_all) KNOB(copy_fresh_prefault)
  KNOB(copy_fresh_in_order) KNOB(kernel_stream_min_bytes) KNOB(kernel_vector_gather) KNOB(copy_narrow_source_tiles) KNOB(copy_gather_run_tiles) KNOB(copy_tiny_source_runs) KNOB(kernel_table_input_runs)
  KNOB(kernel_stream_edge_lines) KNOB(copy_stream_narrow_columns) KNOB(copy_tile_pad) KNOB(copy_skew_lines) KNOB(copy_block_prefetch) KNOB(copy_edge_stores)
  KNOB(copy_source_chain_bytes) KNOB(copy_short_runs) KNOB(copy_block_prefetch_spread) KNOB(copy_table_runs)
  KNOB(copy_run_prefetch_bytes) KNOB(copy_run_tile_bytes) KNOB(copy_run_tile_cols) KNOB(copy_shared_run_dim) KNOB(copy_half_blocks) KNOB(copy_rim_scalar_cols) KNOB(copy_quarter_blocks) KNOB(copy_unit_run_bytes) KNOB(copy_unit_tile_bytes) KNOB(copy_unit_stream) KNOB(copy_unit_prefetch) KNOB(copy_wide_tables) KNOB(copy_next_prefetch) KNOB(copy_flip_source_dims) KNOB(copy_table_run_cut) KNOB(copy_g1_run_bytes) KNOB(copy_tiny_g0_wide_g1) KNOB(copy_buf_narrow_bytes) KNOB(copy_g1_run_dims) KNOB(copy_lone_edge_bytes) KNOB(kernel_small_elems) KNOB(copy_fresh_min_bytes) KNOB(copy_stream_line_runs) KNOB(copy_interleave_rows) KNOB(copy_deinterleave_rows) KNOB(copy_skew_run_bytes) KNOB(copy_long_row_bytes) KNOB(copy_block_segments) KNOB(copy_shared_keep) KNOB(copy_gather_blocks) KNOB(copy_unit_kinds) KNOB(copy_short_rows) KNOB(copy_shared_g0_bytes) KNOB(copy_run_piece_edges) KNOB(copy_chain_columns) KNOB(kernel_prefetch_l2) KNOB(copy_gather_source_run) KNOB(copy_small_wide) KNOB(copy_reverse_runs) KNOB(copy_run_stream_bytes) KNOB(copy_skew_short_cols) KNOB(copy_tile_slack) KNOB(copy_buf_short_rows) KNOB(copy_short_row_prefetch) KNOB(copy_skew_rim_pct) KNOB(copy_quarter_st) KNOB(copy_skew_buf_src_bytes) KNOB(copy_narrow_records) KNOB(copy_col_stream_bytes) KNOB(copy_skew_min_row_bytes) KNOB(copy_records_src_order) KNOB(copy_run_tile_col_bytes) KNOB(copy_buf_rim_pct) KNOB(copy_skew_tile_bytes) KNOB(copy_buf_short_cols) KNOB(copy_run_table_entries) KNOB(copy_small_run_bytes) KNOB(copy_wide_rows) KNOB(copy_chain_next_prefetch) KNOB(copy_rev_records) KNOB(copy_run_tile_max_bytes) KNOB(copy_unit_flips) KNOB(copy_both_run_tile_bytes) KNOB(copy_both_run_rho_bytes) KNOB(copy_both_run_wide) KNOB(copy_both_run_gathers) KNOB(copy_both_run_ask) KNOB(copy_next_spread) KNOB(copy_both_run_split_bytes) KNOB(copy_records_edge_bytes) KNOB(copy_both_run_unit_bytes) KNOB(copy_both_run_tiny_bytes) KNOB(copy_run_g1_table) KNOB(copy_both_run_flips) KNOB(copy_footprint_reversed)
  else { fprintf(stderr, "--tune: unknown knob %s\n", name); return 2; }
#undef KNOB
  return 0;
}

int main(int argc, char **argv) {
  int ncase = 60, reps = 3, threads = 1, only = -1;
  bool plan = false, plan_only = false;
  int nab = 0;
  kase given;          /* --case */
  bool have_case = false;         /* --ab: knobs of setting B (timed in every round after A) */
  tfe_tuning tb, ta;
  double lo = 48, hi = 160;
  bool mib_given = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cases") && i + 1 < argc) ncase = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) rng = strtoull(argv[++i], NULL, 10) | 1;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mib") && i + 2 < argc) { lo = atof(argv[++i]); hi = atof(argv[++i]); mib_given = true; }
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--plan")) plan = true;
    else if (!strcmp(argv[i], "--small-dims")) small_dims = true;
    else if (!strcmp(argv[i], "--shared-runs")) shared_runs = true;
    else if (!strcmp(argv[i], "--reversed")) reversed_dims = true;
    else if (!strcmp(argv[i], "--flips")) flips = true;
    else if (!strcmp(argv[i], "--last-flips")) flips = last_flips = true;
    else if (!strcmp(argv[i], "--records")) records = true;
    else if (!strcmp(argv[i], "--warm")) { evict_on = false; if (!mib_given) { lo = 0.25; hi = 1; } }
    else if (!strcmp(argv[i], "--peer") && i + 1 < argc) { if (!peer_open(argv[++i])) return 2; }
    else if (!strcmp(argv[i], "--plan-only")) plan = plan_only = true; /* plans, no timing */
    else if (!strcmp(argv[i], "--tune") && i + 1 < argc) { /* a kernel knob, for experiments */
      tfe_tuning t = tfe_tuning_get();
      if (set_knob(&t, argv[++i]) || tfe_tuning_set(&t)) return 2;
    }
    else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
      if (!parse_case(argv[++i], &given)) { fprintf(stderr, "--case ES:D0,D1r,..:P0,P1,..\n"); return 2; }
      have_case = true; ncase = 1; only = 0;
    }
    else if (!strcmp(argv[i], "--ab") && i + 1 < argc) { /* B: the knob(s) timed beside A in every round */
      if (nab == 0) { tb = tfe_tuning_get(); }
      if (set_knob(&tb, argv[++i])) return 2;
      nab++;
    }
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      for (char *q = argv[++i]; *q && nsizes < 5;) {
        int e = (int)strtol(q, &q, 10);
        if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16) { fprintf(stderr, "sizes: 1, 2, 4, 8, 16\n"); return 2; }
        sizes[nsizes++] = e;
        if (*q == ',') q++; else if (*q) { fprintf(stderr, "sizes: a comma list\n"); return 2; }
      }
    }
    else { fprintf(stderr, "usage: bench_permute_sweep [--cases N] [--seed S] [--mib LO HI] [--reps R] [--threads T] [--sizes 1,2,4,8,16] [--only K] [--plan | --plan-only] [--tune knob=value] [--ab knob=value] [--case ES:DIMS:PERM] [--peer LIB.so] [--warm] [--small-dims | --shared-runs | --reversed | --records | --flips | --last-flips]\n"); return 2; }
  }
  if (reps < 1 || reps > 64 || ncase < 1 || lo <= 0 || hi < lo || nsizes < 1) { fprintf(stderr, "bad arguments\n"); return 2; }
  tfe_set_num_threads(threads);
  ta = tfe_tuning_get();
  if (nab && tfe_tuning_set(&tb)) { fprintf(stderr, "%s\n", tfe_last_error()); return 2; }
  tfe_tuning_set(&ta);
  if (tfe_sr_dist_u8k(tfe_sr_from_f64_u8k(257), tfe_sr_one_u8k()) != 0 ||
      tfe_sr_dist_u16k(tfe_sr_from_f64_u16k(65537), tfe_sr_one_u16k()) != 0) { fprintf(stderr, "user kinds\n"); return 1; }
  tfe_allocator a = tfe_get_allocator();
  printf("# random permutations, allocation-inclusive, tfe on %d thread(s), median of %d\n", threads, reps);
  int over = 0, nover13 = 0;
  double worst = 0, ratios[4096];
  static double pr_peer[4096], pr_tfe[4096], pr_rel[4096]; /* cases the peer ran: its ratio, tfe's, tfe/peer */
  int npeer = 0;
  char lines[64][1100];
  for (int ci = 0; ci < ncase && ci < 4096; ci++) {
    kase c = have_case    ? given
             : small_dims  ? draw_small((int64_t)(lo * 1048576), (int64_t)(hi * 1048576))
             : shared_runs ? draw_shared((int64_t)(lo * 1048576), (int64_t)(hi * 1048576))
             : reversed_dims ? draw_reversed((int64_t)(lo * 1048576), (int64_t)(hi * 1048576))
             : flips       ? draw_flips((int64_t)(lo * 1048576), (int64_t)(hi * 1048576))
             : records     ? draw_records((int64_t)(lo * 1048576), (int64_t)(hi * 1048576))
                           : draw((int64_t)(lo * 1048576), (int64_t)(hi * 1048576));
    if (only >= 0 && ci != only) continue;
    if (plan) {
      if (plan_only) { /* (with the case in --case form) */
        printf("case %d esz=%d rank %d --case %d:", ci, c.esz, c.rank, c.esz);
        for (int k = 0; k < c.rank; k++) printf("%s%lld%s", k ? "," : "", (long long)c.dims[k], c.rev[k] ? "r" : "");
        for (int k = 0; k < c.rank; k++) printf("%s%lld", k ? "," : ":", (long long)c.perm[k]);
        printf("\n");
      }
      print_plan(&c);
      if (plan_only) continue;
    }
    size_t bytes = (size_t)c.n * (size_t)c.esz;
    char *src = a.alloc(a.ctx, bytes, TFE_ALIGN);
    if (!src) { fprintf(stderr, "out of memory\n"); return 1; }
    tfe__kadvise_huge(src, bytes);
    for (size_t q = 0; q < bytes; q++) src[q] = (char)(q * 131);
    double tm[64], tt[64], tbb[64], rb[64], tp[64], tl[64];
    void *pp = peer_plan_case(&c, src, threads);
    if (pp && !peer_check(&c, pp, src, bytes)) return 1;
    for (int r = -1; r < reps; r++) {
      evict();
      double ml = memcpy_fresh_ms(src, bytes);
      evict();
      double mn = memcpy_fresh_ms_ex(src, bytes, true);
      if (ml < 0 || mn < 0) { fprintf(stderr, "out of memory\n"); return 1; }
      double m = ml < mn ? ml : mn; /* the copy limit: the faster of the two */
      double t = 0;
      for (int s = 0; s < 1 + (nab > 0); s++) { /* A (the --tune setting), then B (--ab) */
        tfe_tuning_set(s ? &tb : &ta);
        evict();
        int64_t k0[sizeof tfe__st.kernel_stat / sizeof tfe__st.kernel_stat[0]];
        const bool stats = plan && r < 0; /* (the warm-up call's path counters, A then B) */
        if (stats) { memcpy(k0, tfe__st.kernel_stat, sizeof k0); tfe__st.kernel_stat_on++; }
        double x = time_tfe(&c, src, NULL);
        if (stats) {
          tfe__st.kernel_stat_on--;
          printf("run %s: counters", s ? "B" : "A");
          for (size_t k = 0; k < sizeof k0 / sizeof k0[0]; k++)
            if (tfe__st.kernel_stat[k] != k0[k]) printf(" %zu:%lld", k, (long long)(tfe__st.kernel_stat[k] - k0[k]));
          printf("\n");
        }
        if (x < 0) return 1;
        if (s == 0) t = x;
        else if (r >= 0) { tbb[r] = x; rb[r] = x / t; }
      }
      tfe_tuning_set(&ta);
      if (pp) {
        evict();
        double x = time_peer(pp, bytes, NULL);
        if (x < 0) { fprintf(stderr, "out of memory\n"); return 1; }
        if (r >= 0) tp[r] = x;
      }
      if (r >= 0) { tm[r] = m; tt[r] = t; tl[r] = ml; }
    }
    if (pp && !peer_check(&c, pp, src, bytes)) return 1; /* again after its timed calls */
    a.free(a.ctx, src);
    qsort(tm, (size_t)reps, sizeof(double), cmpd);
    qsort(tt, (size_t)reps, sizeof(double), cmpd);
    qsort(tl, (size_t)reps, sizeof(double), cmpd);
    double ratio = tt[reps / 2] / tm[reps / 2];
    char pcol[96] = "";
    if (pp) {
      peer.free_(pp);
      qsort(tp, (size_t)reps, sizeof(double), cmpd);
      snprintf(pcol, sizeof pcol, " %s_ms=%.2f %s_ratio=%.2f", peer.name(), tp[reps / 2], peer.name(), tp[reps / 2] / tm[reps / 2]);
      if (npeer < 4096) { pr_peer[npeer] = tp[reps / 2] / tm[reps / 2]; pr_tfe[npeer] = ratio; pr_rel[npeer++] = tt[reps / 2] / tp[reps / 2]; }
    }
    if (nab) {
      qsort(tbb, (size_t)reps, sizeof(double), cmpd);
      qsort(rb, (size_t)reps, sizeof(double), cmpd);
      printf("ab %d B_ms=%.2f B_ratio=%.2f B/A per round: median %.2f, range %.2f-%.2f\n", ci, tbb[reps / 2],
             tbb[reps / 2] / tm[reps / 2], rb[reps / 2], rb[0], rb[reps - 1]);
    }
    ratios[over] = ratio;
    char shape[640] = "", perm[320] = "";
    for (int k = 0; k < c.rank; k++) {
      snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld%s", k ? "," : "", (long long)c.dims[k], c.rev[k] ? "r" : "");
      snprintf(perm + strlen(perm), sizeof perm - strlen(perm), "%s%lld", k ? "," : "", (long long)c.perm[k]);
    }
    char line[1100];
    snprintf(line, sizeof line, "case %d esz=%d shape=[%s] perm=[%s] MiB=%.0f tfe_ms=%.2f memcpy_ms=%.2f libc_ms=%.2f ratio=%.2f%s",
             ci, c.esz, shape, perm, bytes / 1048576.0, tt[reps / 2], tm[reps / 2], tl[reps / 2], ratio, pcol);
    puts(line);
    fflush(stdout);
    if (ratio > 1.3) { if (nover13 < 64) snprintf(lines[nover13], sizeof lines[0], "%s", line); nover13++; }
    if (ratio > worst) worst = ratio;
    over++;
  }
  if (!over) return 0;
  qsort(ratios, (size_t)over, sizeof(double), cmpd);
  printf("# %d cases: median ratio %.2f, 90th percentile %.2f, worst %.2f; %d over 1.3x\n", over,
         ratios[over / 2], ratios[(over * 9) / 10], worst, nover13);
  for (int k = 0; k < nover13 && k < 64; k++) printf("# over: %s\n", lines[k]);
  if (npeer) {
    qsort(pr_peer, (size_t)npeer, sizeof(double), cmpd);
    qsort(pr_tfe, (size_t)npeer, sizeof(double), cmpd);
    qsort(pr_rel, (size_t)npeer, sizeof(double), cmpd);
    printf("# the %d cases %s ran: memcpy ratio median tfe %.2f / %s %.2f, worst tfe %.2f / %s %.2f; tfe/%s median %.2f, range %.2f-%.2f\n",
           npeer, peer.name(), pr_tfe[npeer / 2], peer.name(), pr_peer[npeer / 2], pr_tfe[npeer - 1], peer.name(),
           pr_peer[npeer - 1], peer.name(), pr_rel[npeer / 2], pr_rel[0], pr_rel[npeer - 1]);
  }
  return 0;
}
