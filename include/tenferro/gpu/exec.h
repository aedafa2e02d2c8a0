/* tenferro/gpu/exec.h — gpu room, companion only: the slots of a CUDA device's backend.
 *
 * Every operand is a tfe_dyn whose data is a device address (element (i..) at
 * data + (offset + sum i*stride) * size). Labels follow tfe_contract_S's rules: a label repeated
 * within an operand is its diagonal (the strides add), a label repeated in C writes C's diagonal
 * (C is scaled by beta first, then the diagonal accumulates), a label in one input only is
 * summed away first.
 *   binary (CONTRACT, BATCHED_GEMM, ELEMENTWISE_MUL): labels sort into batch, M, N and K groups;
 *     an operand whose groups fuse in place (strides continue in the group order, one GEMM
 *     dimension of unit stride, leading dimension large enough, no conjugation cuBLAS cannot
 *     express) is handed to cuBLAS as it is; any other operand is copied by the unary kernel
 *     into a dense [M|K|batch], [K|N|batch] or [M|N|batch] block of the device's workspace
 *     (summing its one-input labels and conjugating on the way); then one strided-batched GEMM.
 *   unary (REDUCE, TRACE, PERMUTE, ANTI_TRACE, ANTI_DIAG): one launch: the unary kernel with
 *     summed labels, else (a copy) cuMemcpyDtoDAsync for a dense copy, tfe_perm2d (below) for
 *     any other copy within 32-bit offsets, the unary kernel for larger ones.
 * Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_EXEC_H
#define TENFERRO_GPU_EXEC_H
#ifdef TFE__GPU_COMPANION
#include <tenferro/gpu/device.h>
#include <limits.h>

/* ---- labels after folding diagonals --------------------------------------------------------- */
enum { TFE__GA = 0, TFE__GB = 1, TFE__GC = 2 };
typedef struct tfe__glabel {
  int32_t label;
  int64_t dim;
  int64_t s[3]; /* stride in A, B, C (summed over repeats) */
  bool in[3];
} tfe__glabel;
typedef struct tfe__gtab {
  int n;
  bool crep; /* C repeats a label */
  tfe__glabel l[3 * TFE_MAX_RANK];
  tfe__labmap map;
} tfe__gtab;

/* Adds operand x's axes to the table (repeats fold into one stride). */
static tfe_status tfe__gpu_fold(tfe__gtab *T, int x, const tfe_dyn *v, const int32_t *lab, const char *where) {
  static const char nm[3] = {'A', 'B', 'C'};
  if (v->lay.rank < 0 || v->lay.rank > TFE_MAX_RANK)
    return TFE__GPU_FAIL_AT(TFE_ERR_RANK, where, "%c: rank %d outside [0, %d]", nm[x], v->lay.rank, TFE_MAX_RANK);
  if (v->lay.rank > 0 && !lab) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "labels of %c are NULL", nm[x]);
  for (int i = 0; i < v->lay.rank; i++) {
    int j = tfe__labmap_get(&T->map, lab[i]);
    if (j == -2)
      for (j = 0; j < T->n && T->l[j].label != lab[i];) j++;
    if (j < 0 || j == T->n) {
      j = T->n;
      tfe__labmap_set(&T->map, lab[i], j);
      memset(&T->l[j], 0, sizeof T->l[j]);
      T->l[j].label = lab[i];
      T->l[j].dim = v->lay.dims[i];
      T->n++;
    } else if (T->l[j].dim != v->lay.dims[i])
      return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "label %d: size %lld in %c, %lld elsewhere", (int)lab[i],
                              (long long)v->lay.dims[i], nm[x], (long long)T->l[j].dim);
    if (T->l[j].in[x] && x == TFE__GC) T->crep = true;
    T->l[j].s[x] += v->lay.strides[i];
    T->l[j].in[x] = true;
  }
  return TFE_OK;
}
static tfe_status tfe__gpu_table(tfe__gtab *T, const tfe_prim_desc *d, const char *where) {
  T->n = 0;
  T->crep = false;
  memset(&T->map, 0, sizeof T->map);
  TFE_TRY(tfe__gpu_fold(T, TFE__GA, d->a, d->la, where));
  if (d->b) TFE_TRY(tfe__gpu_fold(T, TFE__GB, d->b, d->lb, where));
  TFE_TRY(tfe__gpu_fold(T, TFE__GC, d->c, d->lc, where));
  for (int j = 0; j < T->n; j++)
    if (T->l[j].in[TFE__GC] && !T->l[j].in[TFE__GA] && !T->l[j].in[TFE__GB])
      if (!(d->op == TFE_PRIM_ANTI_TRACE || d->op == TFE_PRIM_ANTI_DIAG))
        return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "output label %d is in no input", (int)T->l[j].label);
  return TFE_OK;
}

/* ---- scalars -------------------------------------------------------------------------------- */
typedef struct tfe__gscal { double re, im; } tfe__gscal;
static tfe__gscal tfe__gpu_scalar(int g, const void *v) {
  tfe__gscal s = {0, 0};
  if (g == TFE__GK_F32) s.re = *(const float *)v;
  else if (g == TFE__GK_F64) s.re = *(const double *)v;
  else if (g == TFE__GK_C64) s.re = ((const float *)v)[0], s.im = ((const float *)v)[1];
  else s.re = ((const double *)v)[0], s.im = ((const double *)v)[1];
  if (s.re == 0) s.re = 0; /* -0 becomes +0: cuBLAS reads C for a beta of -0 */
  if (s.im == 0) s.im = 0;
  return s;
}
/* The scalar in the kind's own type (for cuBLAS), in buf. */
static const void *tfe__gpu_scalar_as(int g, tfe__gscal s, double buf[2]) {
  float *f = (float *)buf;
  if (g == TFE__GK_F32) f[0] = (float)s.re;
  else if (g == TFE__GK_F64) buf[0] = s.re;
  else if (g == TFE__GK_C64) f[0] = (float)s.re, f[1] = (float)s.im;
  else buf[0] = s.re, buf[1] = s.im;
  return buf;
}
/* The same without the -0 rule (the elementwise kernels keep a value's bits). */
static tfe__gscal tfe__gpu_scalar_raw(int g, const void *v) {
  tfe__gscal s = {0, 0};
  if (g == TFE__GK_F32) s.re = *(const float *)v;
  else if (g == TFE__GK_F64) s.re = *(const double *)v;
  else if (g == TFE__GK_C64) s.re = ((const float *)v)[0], s.im = ((const float *)v)[1];
  else s.re = ((const double *)v)[0], s.im = ((const double *)v)[1];
  return s;
}
static bool tfe__gpu_iszero(tfe__gscal s) { return s.re == 0 && s.im == 0; }
/* C stores its conjugate: C' = conj(alpha) op(A..) + conj(beta) C'. A zero keeps +0 parts
 * (cuBLAS reads C for a beta of -0). */
static void tfe__gpu_conj_c(tfe__gscal *alpha, tfe__gscal *beta) {
  alpha->im = alpha->im == 0 ? 0 : -alpha->im;
  beta->im = beta->im == 0 ? 0 : -beta->im;
}

/* The device address of element (0, ..., 0). */
static tfe__cu_ptr tfe__gpu_addr(const tfe_dyn *v, size_t es) {
  return (tfe__cu_ptr)(uintptr_t)v->data + (tfe__cu_ptr)(v->lay.offset * (int64_t)es);
}

/* ---- the unary kernel ------------------------------------------------------------------------ */
static tfe_status tfe__gpu_kp_out(tfe__gpu_kparams *p, int64_t dim, int64_t sc, int64_t sa, const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nout == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d output labels of size > 1", TFE__GPU_KMAXR);
  p->dout[p->nout] = dim, p->sc[p->nout] = sc, p->sa[p->nout] = sa;
  p->nout++;
  return TFE_OK;
}
static tfe_status tfe__gpu_kp_sum(tfe__gpu_kparams *p, int64_t dim, int64_t sa, const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nsum == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d summed labels of size > 1", TFE__GPU_KMAXR);
  p->dsum[p->nsum] = dim, p->ssum[p->nsum] = sa;
  p->nsum++;
  return TFE_OK;
}
/* Labels lo..nout-1 of p reordered by key (stable insertion sort of indices: the keys computed
 * once and each label moved once, where swapping three arrays per step cost 1-2 us on rank 23). */
static void tfe__gpu_kp_order(tfe__gpu_kparams *p, int lo, const long long *key) {
  int ix[TFE__GPU_KMAXR], n = p->nout - lo;
  for (int i = 0; i < n; i++) {
    int j = i;
    for (; j > 0 && key[ix[j - 1]] > key[lo + i]; j--) ix[j] = ix[j - 1];
    ix[j] = lo + i;
  }
  long long d[TFE__GPU_KMAXR], c[TFE__GPU_KMAXR], a[TFE__GPU_KMAXR];
  for (int i = 0; i < n; i++) d[i] = p->dout[ix[i]], c[i] = p->sc[ix[i]], a[i] = p->sa[ix[i]];
  for (int i = 0; i < n; i++) p->dout[lo + i] = d[i], p->sc[lo + i] = c[i], p->sa[lo + i] = a[i];
}
/* Output dims by C stride (the fastest-moving thread index writes neighbouring elements). */
static void tfe__gpu_kp_sort(tfe__gpu_kparams *p) {
  long long key[TFE__GPU_KMAXR];
  for (int i = 0; i < p->nout; i++) key[i] = llabs(p->sc[i]);
  tfe__gpu_kp_order(p, 0, key);
}
/* Merges neighbouring output labels (in C's order) whose C and A strides both continue: one
 * label of their product size, the same elements (a permutation that keeps runs of labels
 * together becomes one of fewer, larger labels; a plain copy becomes one label). */
static void tfe__gpu_kp_merge(tfe__gpu_kparams *p) {
  int w = 0;
  for (int d = 0; d < p->nout; d++) {
    if (w > 0 && p->sc[d] == p->sc[w - 1] * p->dout[w - 1] && p->sa[d] == p->sa[w - 1] * p->dout[w - 1]) {
      p->dout[w - 1] *= p->dout[d];
      continue;
    }
    p->dout[w] = p->dout[d], p->sc[w] = p->sc[d], p->sa[w] = p->sa[d];
    w++;
  }
  p->nout = w;
}
/* ---- permutations: tfe_perm2d (kernels.h) ----------------------------------------------------
 * A copy without summed labels (C = alpha op(A) + beta C), labels sorted by |C stride| and
 * merged, goes to tfe_perm2d with the plan below (struct Q in kernels.h; the kernel's fourth
 * argument):
 *   mode 1 (a tile) when A's fastest label (smallest nonzero |stride|) is not C's fastest:
 *     x = C's fastest labels in C's order (stopping before A's fastest), y = A's fastest of the
 *     others in A's order; the tile is TX x TY elements of the flattened groups (first at most
 *     1024: sides 32 x 32, or longer where the other side is short; a group larger than its side
 *     is cut into equal tiles, ceil(n / ceil(n / side)), so that 81 = 3 x 27, not 32 + 32 + 17);
 *     longer runs (cfg.run bytes): a side whose run is shorter and not a whole number of
 *     32-byte sectors grows, C's side first, to the smallest exact cut of its group (or of a
 *     longer group) of at least run / es elements where the tile still fits: at most cfg.tmax
 *     elements (2304: 576 threads) and 48 KiB of shared memory (two tiles and the tables),
 *     or, on tfe_perm2d_b (NVIDIA, the driver's opt-in shared memory), cfg.big elements in one
 *     tile within that opt-in limit; f64 reverse_15d_3's 27 x 27 (216-byte runs) -> 81 x 27
 *     (tfe_perm2d_w, cfg.wide: two blocks a multiprocessor, where tfe_perm2d fits one) -> 81 x
 *     81 (tfe_perm2d_b: 648-byte runs on both sides); 256-byte runs (the 2^k reversals,
 *     the 2048^2 and 256^3 transposes) stay 32 x 32: 64 x 32 was slower there (docs/benchmarks.md,
 *     sessions 13 and 16);
 *     loads run along y, stores along x, through two tiles in shared memory taken in turn (one
 *     barrier per tile); the offsets of the tile's x and y indices are tables in shared memory.
 *   mode 0 (no tile) when A and C share their fastest label (or A has no nonzero stride, or the
 *     tile would hold under 64 elements): x = C's labels in C's order up to 1024 elements.
 * Exact groups (cfg.fit): a side is preferably a divisor-sized cut of the group's last label
 * (fit 2: when at least half the equal cut; 3^14 along a side of 341 takes 243 = 3^5), and a
 * group whose side is such a cut is made exactly one tile: its last label splits in two (f,
 * n / f) or leaves the group, and the part left over joins the rest (fit 1). Then a tile's
 * offset tables serve every position of the rest that its block walks, with no partial tiles
 * (transpose_2d_2048: one 32 x 32 tile, 4096 rest positions, where it was 4096 tiles of one).
 * In both modes each thread has four elements of the tile and keeps their offsets in registers
 * (computed once per block); the labels after x and y (the rest) are walked by the grid's y
 * dimension, their offsets computed per tile without divisions (multiply-high by magic
 * numbers computed here; valid for indices below 2^31) into a shared table of the block's
 * next 64 positions; with cfg.pipe the loads of the next position are issued before the
 * current one's stores (eight elements in flight per thread). The grid (cfg.blocks 0) is
 * cfg.waves times the blocks the device holds at once (its multiprocessors times the blocks
 * of this size that fit one: 64 registers a thread, the kernel's launch bound, and the shared
 * memory), so that every block walks an equal share of the rest in one or two waves; where
 * the driver does not tell (HIP, the emulated device) 2048 blocks. Offsets are 32-bit (copies
 * with larger ones go to tfe_unary). A negative stride is a signed offset from the address of
 * element (0, ..., 0): no extra cost. */
typedef struct tfe__gperm_q { /* the layout of struct Q in kernels.h */
  long long px, py, ntx, rest;
  int mode, nx, ny, TX, TY, wide, small, plain, tab, tstride, pipe, pad;
  unsigned mg[TFE__GPU_KMAXR], sh[TFE__GPU_KMAXR];
} tfe__gperm_q;
/* Launch knobs (internal; bench_gpu_perm sweeps them): blocks, the grid size aimed at (0: waves
 * times what the device holds at once); tile and dtile, the largest tile of mode 1 and of mode 0
 * in elements; fit (0: session 11's plan, 1: exact groups, 2: divisor-sized sides too); pipe
 * (the next position's loads before the current stores); order, the rest's labels (0: what
 * left x, then what left y, then by |A stride|; 1: by |C stride|; 2: by |A stride|; 3, the
 * default: by the smaller of the two, so that the blocks running at once (neighbouring
 * positions) cover runs that continue in C and in A); run, the bytes a tile side's run should
 * reach when it is not whole sectors (0: no longer sides; 512, the default);
 * tmax, the most elements of such a longer tile (4 a thread, at most 4096; 2304); pri 1 (0):
 * C's side (A's side) grows first; wide 1: tiles of 513-576 threads run on tfe_perm2d_w (two
 * blocks a multiprocessor, no pipelining) instead of tfe_perm2d (one); big, the most elements of
 * a longer tile on tfe_perm2d_b (one tile buffer in opt-in shared memory; 0: none). */
typedef struct tfe__gperm_knobs {
  long long blocks;
  int tile, dtile, fit, pipe, waves, order, run, tmax, pri, wide, big;
} tfe__gperm_knobs;
static tfe__gperm_knobs tfe__gperm_cfg = {0, 1024, 1024, 2, 1, 1, 3, 512, 2304, 1, 1, 8192};
/* Per device: multiprocessors, registers, shared memory and blocks per multiprocessor, shared
 * memory the driver reserves per block (0: not asked yet, nsm -1: not known). */
static struct { int nsm, regs, smem, blocks, resv; } tfe__gperm_dev[TFE__GPU_MAX_DEV];

/* Equal tiles of at most `side` over n: ceil(n / ceil(n / side)). */
static long long tfe__gperm_side(long long n, long long side) {
  if (n <= side) return n;
  long long k = (n + side - 1) / side;
  return (n + k - 1) / k;
}
/* The side of a group of product n whose last label has size nl, at most cap: the equal cut,
 * or (fit 2) pre * f with pre = n / nl and f the largest divisor of nl that fits, when that is
 * at least half the equal cut (the group then splits exactly). */
static long long tfe__gperm_tside(long long n, long long nl, long long cap) {
  long long s = tfe__gperm_side(n, cap), pre = nl > 0 ? n / nl : n;
  if (tfe__gperm_cfg.fit < 2 || s == n || pre > cap) return s;
  for (long long f = cap / pre; f >= 1 && pre * f * 2 >= s; f--)
    if (nl % f == 0) return pre * f;
  return s;
}
/* Magic numbers of n (Granlund-Montgomery, as PyTorch's IntDivider): (umulhi(x, m) + x) >> s
 * = x / n for x < 2^31. */
static void tfe__gperm_magic(unsigned long long n, unsigned *m, unsigned *s) {
  unsigned k = 0;
  while (k < 32 && (1ULL << k) < n) k++;
  *s = k;
  *m = (unsigned)(((1ULL << 32) * ((1ULL << k) - n)) / n + 1);
}
/* Whether tfe_perm2d takes p: indices and offsets of A and C within 32 bits (else tfe_unary). */
static bool tfe__gperm_fits(const tfe__gpu_kparams *p) {
  unsigned long long ea = 0, ec = 0; /* the largest offsets */
  for (int d = 0; d < p->nout; d++) {
    ea += (unsigned long long)(p->dout[d] - 1) * (unsigned long long)llabs(p->sa[d]);
    ec += (unsigned long long)(p->dout[d] - 1) * (unsigned long long)llabs(p->sc[d]);
  }
  return p->total <= 0x7fffffffLL && ea <= 0x7fffffffULL && ec <= 0x7fffffffULL;
}
/* Moves label `from` of p to position `to` (the labels between shift by one). */
static void tfe__gperm_move(tfe__gpu_kparams *p, int from, int to) {
  long long d = p->dout[from], c = p->sc[from], a = p->sa[from];
  for (int i = from; i < to; i++) p->dout[i] = p->dout[i + 1], p->sc[i] = p->sc[i + 1], p->sa[i] = p->sa[i + 1];
  for (int i = from; i > to; i--) p->dout[i] = p->dout[i - 1], p->sc[i] = p->sc[i - 1], p->sa[i] = p->sa[i - 1];
  p->dout[to] = d, p->sc[to] = c, p->sa[to] = a;
}
/* Splits label d of p in two, (f, n / f): the high part (strides times f) at d + 1. */
static void tfe__gperm_split(tfe__gpu_kparams *p, int d, long long f) {
  for (int e = p->nout; e > d + 1; e--) p->dout[e] = p->dout[e - 1], p->sc[e] = p->sc[e - 1], p->sa[e] = p->sa[e - 1];
  p->nout++;
  p->dout[d + 1] = p->dout[d] / f, p->sc[d + 1] = p->sc[d] * f, p->sa[d + 1] = p->sa[d] * f, p->dout[d] = f;
}
/* Fit (cfg.fit >= 1): the group of labels g0 .. g0 + *cnt - 1 (product *prod) with side T becomes
 * exactly T when T = pre * f, pre the product of all but its last label and f dividing that
 * label: the label leaves (f = 1) or splits; what leaves goes to position `to` (the start of
 * the rest, counted before the change). */
static void tfe__gperm_fit(tfe__gpu_kparams *p, int g0, int *cnt, long long *prod, long long T, int to) {
  if (tfe__gperm_cfg.fit < 1 || *cnt < 1 || T >= *prod) return;
  int last = g0 + *cnt - 1;
  long long pre = *prod / p->dout[last];
  if (T % pre || p->dout[last] % (T / pre)) return;
  long long f = T / pre;
  if (f == 1) {
    tfe__gperm_move(p, last, to - 1);
    (*cnt)--;
  } else {
    if (p->nout == TFE__GPU_KMAXR) return;
    tfe__gperm_split(p, last, f);
    tfe__gperm_move(p, last + 1, to);
  }
  *prod = T;
}
/* Which kernel takes a tile of TX x TY elements of es bytes: 1, tfe_perm2d (at most cfg.tmax,
 * and 4096, elements: four a thread; its shared memory, the tables, the rest's table and two
 * padded tiles, within the 48 KiB a launch gets without opting in); 2, tfe_perm2d_b (at most
 * cfg.big elements, one padded tile within bigsm bytes, the opt-in limit: 0 where there is
 * none); 0, neither. */
static int tfe__gperm_tile_kind(long long TX, long long TY, size_t es, long long bigsm) {
  long long tab = (2 * (TX + TY) * 4 + 15) / 16 * 16 + 64 * 2 * 4, tb = TX * (TY | 1) * (long long)es;
  long long lim = tfe__gperm_cfg.tmax < 4096 ? tfe__gperm_cfg.tmax : 4096;
  if (TX * TY <= lim && tab + 2 * tb <= 48 * 1024) return 1;
  return TX * TY <= tfe__gperm_cfg.big && tab + tb <= bigsm ? 2 : 0;
}
/* The key of label d in the rest's order (cfg.order 1-3). */
static long long tfe__gperm_rkey(const tfe__gpu_kparams *p, int d) {
  long long c = llabs(p->sc[d]), a = llabs(p->sa[d]);
  if (tfe__gperm_cfg.order == 1) return c;
  if (tfe__gperm_cfg.order == 2) return a;
  return a != 0 && a < c ? a : c;
}
/* A longer side for a group whose run is short (cfg.run): the group's labels are n[0..m-1] in
 * order, its side now `side` over its first *cnt labels (product *prod). The new side is the
 * smallest exact cut of at least `want` elements: labels are added while the product is below
 * want, then the last one is cut to its smallest divisor f with pre * f >= want (the whole
 * group when it never reaches want). Returns it (or `side` when not longer), with the group's
 * labels and product in *cnt and *prod. */
static long long tfe__gperm_longer(const long long *n, int m, long long want, long long side, int *cnt, long long *prod) {
  int c = 0;
  long long pre = 1;
  while (c < m && pre * n[c] < want) pre *= n[c++];
  if (c == m) { /* the whole group */
    if (pre <= side) return side;
    *cnt = c, *prod = pre;
    return pre;
  }
  long long f = 2;
  while (pre * f < want || n[c] % f) f++;
  if (pre * f <= side) return side;
  *cnt = c + 1, *prod = pre * n[c];
  return pre * f;
}
/* The plan of p (sorted and merged, total > 0, no summed labels) into q; reorders p's labels
 * x, y, rest (and may split some). */
static void tfe__gperm_plan(tfe__gpu_kparams *p, tfe__gperm_q *q, size_t es, long long bigsm) {
  memset(q, 0, sizeof *q);
  const long long tile = tfe__gperm_cfg.tile;
  int af = -1;
  for (int d = 0; d < p->nout; d++)
    if (p->sa[d] != 0 && (af < 0 || llabs(p->sa[d]) < llabs(p->sa[af]))) af = d;
  int nx = 0, ny = 0;
  long long px = 1, py = 1, TX = 1, TY = 1;
  if (af > 0) {
    while (nx < af && px < 32) px *= p->dout[nx++];
    int ord[TFE__GPU_KMAXR], m = 0;
    for (int d = nx; d < p->nout; d++) { /* the others by |A stride|, zero strides last */
      int e = m++;
      unsigned long long k = p->sa[d] ? (unsigned long long)llabs(p->sa[d]) : ~0ULL;
      for (; e > 0 && (p->sa[ord[e - 1]] ? (unsigned long long)llabs(p->sa[ord[e - 1]]) : ~0ULL) > k; e--) ord[e] = ord[e - 1];
      ord[e] = d;
    }
    long long ycap = px < 32 ? tile / px : 32;
    while (ny < m && py < ycap && p->sa[ord[ny]] != 0) py *= p->dout[ord[ny++]];
    long long cx = 32, cy = 32; /* the sides' caps: 32 x 32, or longer where the other side is short */
    if (tfe__gperm_side(px, 32) < 32) cy = tile / tfe__gperm_side(px, 32);
    else if (tfe__gperm_side(py, 32) < 32) cx = tile / (py | 1); /* a padded tile within 1024 + 31 elements:
                                                                     two of c128 + tables < 48 KiB */
    TX = tfe__gperm_tside(px, p->dout[nx - 1], cx);
    TY = ny ? tfe__gperm_tside(py, p->dout[ord[ny - 1]], cy) : 1;
    if (TX * TY >= 64 && tfe__gperm_cfg.run > 0) {
      /* longer runs (cfg.run bytes): a side under run / es elements grows (C's side first, or
       * A's with cfg.pri 0) to the smallest exact cut of its group, or a longer group, of at
       * least that many elements, where the tile still fits (reverse_15d_3: 27 x 27 -> 81 x 27) */
      long long want = (tfe__gperm_cfg.run + (long long)es - 1) / (long long)es, ns[TFE__GPU_KMAXR];
      for (int k = 0; k < 2; k++) {
        bool xs = (k == 0) == (tfe__gperm_cfg.pri != 0);
        long long side = xs ? TX : TY, pr = xs ? px : py;
        int cnt = xs ? nx : ny, ml = 0;
        if (side * (long long)es >= tfe__gperm_cfg.run || side * (long long)es % 32 == 0) continue; /* whole sectors: no gain */
        if (xs) /* C's labels before A's fastest */
          for (; ml < af; ml++) ns[ml] = p->dout[ml];
        else /* A's labels in A's order, nonzero strides */
          for (; ml < m && p->sa[ord[ml]] != 0; ml++) ns[ml] = p->dout[ord[ml]];
        long long s2 = tfe__gperm_longer(ns, ml, want, side, &cnt, &pr);
        if (s2 == side || !tfe__gperm_tile_kind(xs ? s2 : TX, xs ? TY : s2, es, bigsm)) continue;
        if (xs) { /* x's new labels leave the others' list (and must not be y's) */
          bool clash = cnt < nx;
          for (int i = 0; i < ny; i++) clash |= ord[i] < cnt;
          if (clash) continue;
          int w = 0;
          for (int i = 0; i < m; i++)
            if (ord[i] >= cnt) ord[w++] = ord[i];
          m = w, TX = s2, nx = cnt, px = pr;
        } else
          TY = s2, ny = cnt, py = pr;
      }
    }
    if (TX * TY >= 64) {
      long long dd[TFE__GPU_KMAXR], sc[TFE__GPU_KMAXR], sa[TFE__GPU_KMAXR];
      for (int i = 0; i < m; i++) dd[i] = p->dout[ord[i]], sc[i] = p->sc[ord[i]], sa[i] = p->sa[ord[i]];
      for (int i = 0; i < m; i++) p->dout[nx + i] = dd[i], p->sc[nx + i] = sc[i], p->sa[nx + i] = sa[i];
      q->mode = 1;
      tfe__gperm_fit(p, 0, &nx, &px, TX, nx + ny);
      tfe__gperm_fit(p, nx, &ny, &py, TY, nx + ny);
    }
  }
  if (!q->mode) { /* no tile: C's labels in C's order up to dtile elements */
    const long long dt = tfe__gperm_cfg.dtile;
    nx = 0, ny = 0, px = 1, py = 1, TY = 1;
    while (nx < p->nout && px * p->dout[nx] <= dt) px *= p->dout[nx++];
    if (nx < p->nout && px * 4 < dt && p->nout < TFE__GPU_KMAXR) {
      /* the next label splits in two (f, n / f) where f divides it and fills x to dt / 4 .. dt:
       * the rest (offsets once per 64 positions) instead of a long x (offsets per element) */
      long long n = p->dout[nx], f = dt / px;
      while (f > 1 && n % f) f--;
      if (f > 1 && px * f * 4 >= dt) {
        tfe__gperm_split(p, nx, f);
        px *= f, nx++;
      }
    }
    if (nx < p->nout && px * 4 < dt) px *= p->dout[nx++]; /* no split: tiles over the next label */
    TX = nx ? tfe__gperm_tside(px, p->dout[nx - 1], dt) : 1;
    tfe__gperm_fit(p, 0, &nx, &px, TX, nx);
  }
  if (tfe__gperm_cfg.order) { /* the rest's labels by a stride key (tfe__gperm_rkey): neighbouring positions are neighbours there */
    long long key[TFE__GPU_KMAXR];
    for (int d = nx + ny; d < p->nout; d++) key[d] = tfe__gperm_rkey(p, d);
    tfe__gpu_kp_order(p, nx + ny, key);
  }
  q->nx = nx, q->ny = ny, q->px = px, q->py = py, q->TX = (int)TX, q->TY = (int)TY;
  q->ntx = (px + TX - 1) / TX;
  q->rest = p->total / (px * py);
  q->small = 1; /* tfe__gperm_fits */
  for (int d = 0; d < p->nout; d++) tfe__gperm_magic((unsigned long long)p->dout[d], &q->mg[d], &q->sh[d]);
  q->plain = !p->conj && p->beta_zero && p->alpha_re == 1 && p->alpha_im == 0;
  q->pipe = tfe__gperm_cfg.pipe;
  if (q->mode) {
    q->tab = (int)((2 * (size_t)(TX + TY) * sizeof(int) + 15) / 16 * 16);
    q->tstride = (int)(TX * (TY | 1));
    q->wide = tfe__gperm_tile_kind(TX, TY, es, bigsm) == 2 ? 2 : 0; /* 2: tfe_perm2d_b */
  } /* shared memory: tab bytes of x/y tables, 64 x 2 offsets of the rest, two tiles (mode 1; one on tfe_perm2d_b) */
  p->pj = nx | ny << 8; /* as before (the emulated device ignores them) */
  p->pad = (int)TX | (int)TY << 16;
}
/* The blocks of nt threads and shm bytes of shared memory the device holds at once (0: not known). */
static long long tfe__gperm_resident(tfe__gpu_dev *D, unsigned nt, unsigned shm, int regs) {
  int i = D->info.index >= 0 && D->info.index < TFE__GPU_MAX_DEV ? D->info.index : 0;
  if (tfe__gperm_dev[i].nsm == 0) {
    int v[5] = {-1, 0, 0, 0, 0};
    static const int attr[5] = {16, 82, 81, 106, 111}; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, MAX_REGISTERS_,
                                                          MAX_SHARED_MEMORY_, MAX_BLOCKS_PER_MULTIPROCESSOR,
                                                          RESERVED_SHARED_MEMORY_PER_BLOCK */
    bool ok = tfe__gpu.cu.cuDeviceGetAttribute != NULL && D->info.vendor == TFE_GPU_NVIDIA;
    for (int k = 0; k < 5 && ok; k++) ok = tfe__gpu.cu.cuDeviceGetAttribute(&v[k], attr[k], D->cudev) == 0;
    if (!ok || v[0] <= 0 || v[1] <= 0 || v[2] <= 0 || v[3] <= 0) v[0] = -1;
    tfe__gperm_dev[i].nsm = v[0], tfe__gperm_dev[i].regs = v[1], tfe__gperm_dev[i].smem = v[2];
    tfe__gperm_dev[i].blocks = v[3], tfe__gperm_dev[i].resv = v[4];
  }
  if (tfe__gperm_dev[i].nsm < 0) return 0;
  long long warps = (nt + 31) / 32, by_regs = tfe__gperm_dev[i].regs / (regs * 32 * warps); /* from the launch bounds */
  long long by_smem = tfe__gperm_dev[i].smem / ((long long)shm + tfe__gperm_dev[i].resv + 1);
  long long b = by_regs < by_smem ? by_regs : by_smem;
  if (b > tfe__gperm_dev[i].blocks) b = tfe__gperm_dev[i].blocks;
  return b < 1 ? 0 : b * tfe__gperm_dev[i].nsm;
}
/* tfe_perm2d_b's shared memory for kind g on D: the device's opt-in limit per block (the
 * reserved part already taken off), allowed on the function once (cuFuncSetAttribute); 0 where
 * the driver does not offer it (HIP, older drivers), cfg.big is 0 or the kernel is not loaded. */
static long long tfe__gperm_bigsm(tfe__gpu_dev *D, int g) {
  if (tfe__gperm_cfg.big <= 0) return 0;
  if (D->perm_bsm[g] == 0) {
    int v = 0;
    bool ok = D->f_perm_b[g] && tfe__gpu.cu.cuFuncSetAttribute && tfe__gpu.cu.cuDeviceGetAttribute &&
              D->info.vendor == TFE_GPU_NVIDIA;
    ok = ok && tfe__gpu.cu.cuDeviceGetAttribute(&v, 97, D->cudev) == 0 && v > 48 * 1024; /* ..._PER_BLOCK_OPTIN */
    ok = ok && tfe__gpu.cu.cuFuncSetAttribute(D->f_perm_b[g], 8, v) == 0; /* MAX_DYNAMIC_SHARED_SIZE_BYTES */
    D->perm_bsm[g] = ok ? v : -1;
  }
  return D->perm_bsm[g] > 0 ? D->perm_bsm[g] : 0;
}
/* One block per tile; grid y over the rest: the grid aims at tfe__gperm_cfg.blocks blocks, or
 * (0) waves times what the device holds at once, 2048 where that is not known (at most 65535
 * in y). tfe_perm2d and tfe_perm2d_w: 32..1024 threads, four elements each; tfe_perm2d_b: threads
 * for whole rounds of K (8, 7, 2 for 4-, 8-, 16-byte kinds), at most 512, one position of the
 * rest a block (its tiles are large; the device's block scheduler then shares them out: a grid
 * of what the device holds left 5 or 6 positions a block at 2187, docs/benchmarks.md session 17). */
static tfe_status tfe__gpu_launch_perm(tfe__gpu_dev *D, int g, tfe__cu_ptr c, tfe__cu_ptr a,
                                       tfe__gpu_kparams *p, size_t es, const char *where) {
  tfe__gperm_q q;
  long long bigsm = tfe__gperm_bigsm(D, g);
  tfe__gperm_plan(p, &q, es, bigsm);
  long long tiles = q.ntx * ((q.py + q.TY - 1) / q.TY), ne = (long long)q.TX * q.TY;
  if (tiles > 0x7fffffffLL) return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "%lld tiles exceed the grid", tiles);
  bool big = q.wide == 2;
  unsigned nt = (unsigned)(((ne + 3) / 4 + 31) / 32 * 32);
  unsigned shm = (unsigned)q.tab + 64u * 2u * (unsigned)sizeof(int) + (q.mode ? (big ? 1u : 2u) * (unsigned)q.tstride * (unsigned)es : 0);
  if (big) { /* K as kernels.h's tfe_perm2d_b: loads in flight a thread */
    long long K = es == 4 ? 8 : es == 8 ? 7 : 2, rounds = (ne + K * 512 - 1) / (K * 512);
    nt = (unsigned)(((ne + K * rounds - 1) / (K * rounds) + 31) / 32 * 32);
  }
  if (shm > (big ? (unsigned)bigsm : 48u * 1024u)) /* not reached: the plan keeps tiles within (tfe__gperm_tile_kind) */
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "a tile of %u bytes of shared memory", shm);
  bool wide = !big && tfe__gperm_cfg.wide && q.mode == 1 && nt > 512 && nt <= 576 && D->f_perm_w[g];
  tfe__cu_function f = big ? D->f_perm_b[g] : wide ? D->f_perm_w[g] : D->f_perm[g];
  long long want = tfe__gperm_cfg.blocks;
  if (want <= 0 && big) want = tiles * q.rest;
  if (want <= 0) { /* the launch bounds' registers: (1024, 1) 64, (576, 2) 56 */
    long long r = tfe__gperm_resident(D, nt, shm, wide ? 56 : 64);
    want = r > 0 ? r * (tfe__gperm_cfg.waves > 0 ? tfe__gperm_cfg.waves : 1) : 2048;
  }
  long long gy = want / tiles; /* at most `want` blocks (the rest shared out evenly) */
  if (gy > q.rest) gy = q.rest;
  if (gy > 65535) gy = 65535;
  if (gy < 1) gy = 1;
  void *args[] = {&c, &a, p, &q};
  TFE__CU_TRY(tfe__gpu.cu.cuLaunchKernel(f, (unsigned)tiles, (unsigned)gy, 1, nt, 1, 1, shm, D->stream, args, NULL), where);
  return TFE_OK;
}
/* C = alpha * sum op(A) + beta * C as described by p (dims and strides filled). */
static tfe_status tfe__gpu_unary_launch(tfe__gpu_dev *D, int g, tfe__cu_ptr c, tfe__cu_ptr a, tfe__gpu_kparams *p,
                                        tfe__gscal alpha, tfe__gscal beta, bool conj, const char *where) {
  TFE_TRY(tfe__gpu_kernels(D, g, where));
  tfe__gpu_kp_sort(p);
  tfe__gpu_kp_merge(p);
  p->total = 1;
  for (int i = 0; i < p->nout; i++) p->total *= p->dout[i];
  p->nsum_total = 1;
  for (int i = 0; i < p->nsum; i++) p->nsum_total *= p->dsum[i];
  p->alpha_re = alpha.re, p->alpha_im = alpha.im, p->beta_re = beta.re, p->beta_im = beta.im;
  p->beta_zero = tfe__gpu_iszero(beta);
  p->conj = conj && g >= TFE__GK_C64;
  void *args[] = {&c, &a, p};
  static const size_t es[TFE__GK_COUNT] = {4, 8, 8, 16};
  if (p->nsum == 0 && p->nout == 1 && p->sc[0] == 1 && p->sa[0] == 1 && !p->conj && alpha.re == 1 && alpha.im == 0 &&
      p->beta_zero) { /* a plain copy of a dense block: the driver's device-to-device copy */
    TFE__CU_TRY(tfe__gpu.cu.cuMemcpyDtoDAsync(c, a, (size_t)p->total * es[g], D->stream), where);
    return TFE_OK;
  }
  if (p->total <= 0) return TFE_OK;
  if (p->nsum == 0 && tfe__gperm_fits(p)) /* a copy: tfe_perm2d (nout 0: one element) */
    return tfe__gpu_launch_perm(D, g, c, a, p, es[g], where);
  /* a larger copy takes four elements per thread (kernels.h): a quarter of the threads */
  return tfe__gpu_launch(D, D->f_unary[g], args, p->nsum == 0 ? (p->total + 3) / 4 : p->total, where);
}
/* C = beta * C over C's own layout (every element once). */
static tfe_status tfe__gpu_scale(tfe__gpu_dev *D, int g, const tfe_dyn *C, size_t es, tfe__gscal beta,
                                 const char *where) {
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < C->lay.rank; i++) TFE_TRY(tfe__gpu_kp_out(&p, C->lay.dims[i], C->lay.strides[i], 0, where));
  TFE_TRY(tfe__gpu_kernels(D, g, where));
  tfe__gpu_kp_sort(&p);
  p.total = 1;
  for (int i = 0; i < p.nout; i++) p.total *= p.dout[i];
  p.beta_re = beta.re, p.beta_im = beta.im, p.beta_zero = tfe__gpu_iszero(beta);
  tfe__cu_ptr c = tfe__gpu_addr(C, es);
  void *args[] = {&c, &p};
  return tfe__gpu_launch(D, D->f_scale[g], args, p.total, where);
}

/* ---- checks common to every slot ------------------------------------------------------------- */
/* The device, kind and element size of a call; the operands must be on be's device. */
static tfe_status tfe__gpu_begin(const tfe_prims_backend *be, const tfe_prim_desc *d, int *g, size_t *es,
                                 const char *where) {
  if (!d->a || !d->c) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "operand %s is NULL", !d->a ? "A" : "C");
  if (!d->alpha || !d->beta)
    return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "scalar %s is NULL", !d->alpha ? "alpha" : "beta");
  tfe_dtype dt = d->a->dtype;
  if ((d->b && d->b->dtype != dt) || d->c->dtype != dt)
    return TFE__GPU_FAIL_AT(TFE_ERR_DTYPE, where, "operands differ in kind (A is %s, C is %s)", tfe_dtype_name(dt),
                            tfe_dtype_name(d->c->dtype));
  *g = tfe__gpu_kind(dt);
  if (*g < 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "backend '%s' runs f32, f64, c64 and c128, not %s", be->name,
                            tfe_dtype_name(dt));
  *es = tfe_dtype_get(dt)->size;
  return TFE_OK;
}

/* ---- unary slots ------------------------------------------------------------------------------ */
static tfe_status tfe__gpu_unary_body(tfe__gpu_dev *D, const tfe_prim_desc *d, int g, size_t es, const char *where) {
  tfe__gtab *T = (tfe__gtab *)malloc(sizeof *T);
  if (!T) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the label table");
  tfe_status st = tfe__gpu_table(T, d, where);
  tfe__gscal alpha = tfe__gpu_scalar(g, d->alpha), beta = tfe__gpu_scalar(g, d->beta);
  bool conj = d->a->conj;
  if (st == TFE_OK && tfe_layout_numel(&d->c->lay) == 0) goto done;
  if (d->c->conj) tfe__gpu_conj_c(&alpha, &beta), conj = !conj;
  if (st == TFE_OK && T->crep) { /* off-diagonal elements become beta*C; the diagonal accumulates */
    st = tfe__gpu_scale(D, g, d->c, es, beta, where);
    beta.re = 1, beta.im = 0;
  }
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  for (int j = 0; j < T->n && st == TFE_OK; j++) {
    const tfe__glabel *L = &T->l[j];
    if (L->in[TFE__GC]) st = tfe__gpu_kp_out(&p, L->dim, L->s[TFE__GC], L->in[TFE__GA] ? L->s[TFE__GA] : 0, where);
    else st = tfe__gpu_kp_sum(&p, L->dim, L->s[TFE__GA], where);
  }
  if (st == TFE_OK)
    st = tfe__gpu_unary_launch(D, g, tfe__gpu_addr(d->c, es), tfe__gpu_addr(d->a, es), &p, alpha, beta, conj, where);
done:
  free(T);
  return st;
}
static int tfe__gpu_trop(tfe_dtype dt, int *g); /* tropical.h: tropical operands go there */
static tfe_status tfe__gpu_trop_unary(const tfe_prims_backend *be, const tfe_prim_desc *d, int s, int g,
                                      const char *where);
static tfe_status tfe__gpu_exec_unary(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  (void)plan;
  const char *where = "tfe_prims_execute";
  int g = 0;
  size_t es = 0;
  int trop = d && d->a ? tfe__gpu_trop(d->a->dtype, &g) : 0;
  if (trop) return tfe__gpu_trop_unary(be, d, trop, g, where);
  TFE_TRY(tfe__gpu_begin(be, d, &g, &es, where));
  if (d->b) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "%s takes one input", tfe_prim_op_name(d->op));
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe_status st = tfe__gpu_unary_body(D, d, g, es, where);
  tfe__gpu_leave(D);
  return st;
}

#include <tenferro/gpu/tropical.h>
#include <tenferro/gpu/gemm.h>
#include <tenferro/gpu/elementwise.h>

/* ---- the vtable -------------------------------------------------------------------------------- */
/* The linalg slot: cuSOLVER (solver.h, included after memory.h). */
static tfe_status tfe__gpu_linalg(const tfe_prims_backend *be, const tfe_linalg_call *call);
/* Memory slots: einsum's intermediates and results in the device's memory, from its pool; a
 * free goes back to the pool locked by the queued work (memory.h). mem_copy: between host and
 * device memory on the current queue (a runtime stream's in its tasks), staged through pinned
 * buffers. */
static tfe_status tfe__gpool_alloc(tfe__gpu_dev *D, tfe__gpool *P, size_t bytes, tfe__cu_ptr *out, const char *where);
static tfe_status tfe__gpu_mem_alloc(const tfe_prims_backend *be, size_t bytes, void **out) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  tfe__cu_ptr p = 0;
  TFE_TRY(tfe__gpu_enter(D, "tfe_backend_alloc"));
  tfe_status st = tfe__gpool_alloc(D, &D->pool, bytes ? bytes : 1, &p, "tfe_backend_alloc");
  tfe__gpu_leave(D);
  *out = (void *)(uintptr_t)p;
  return st;
}
static void tfe__gpu_free_cb(void *ctx, void *ptr); /* memory.h */
static void tfe__gpu_mem_free(const tfe_prims_backend *be, void *p) { tfe__gpu_free_cb(be->ctx, p); }
static tfe_status tfe__gpu_mem_copy(const tfe_prims_backend *be, void *dst, tfe_memspace dst_space, const void *src,
                                    tfe_memspace src_space, size_t bytes); /* memory.h */
/* The seq slot: a plan's steps replayed as a CUDA graph (graph.h, included after memory.h). */
static tfe_status tfe__gpu_seq(const tfe_prims_backend *be, tfe_seq_desc *d);
/* Every slot is filled: a NULL slot would run host code on device memory. */
static tfe_prims_backend tfe__gpu_vtable(tfe__gpu_dev *D) {
  tfe_prims_backend be;
  memset(&be, 0, sizeof be);
  be.name = D->bename;
  be.ctx = D;
  be.space.kind = TFE_MEM_GPU;
  be.space.device = D->info.index;
  be.flags = TFE_BACKEND_INFER;
  for (int op = 0; op < TFE_PRIM_COUNT; op++) be.exec[op] = tfe__gpu_exec_unary;
  be.exec[TFE_PRIM_BATCHED_GEMM] = tfe__gpu_exec_binary;
  be.exec[TFE_PRIM_CONTRACT] = tfe__gpu_exec_binary;
  be.exec[TFE_PRIM_ELEMENTWISE_MUL] = tfe__gpu_exec_binary;
  be.linalg = tfe__gpu_linalg;
  be.elementwise = tfe__gpu_elementwise;
  be.mem_alloc = tfe__gpu_mem_alloc;
  be.mem_free = tfe__gpu_mem_free;
  be.mem_copy = tfe__gpu_mem_copy;
  be.seq = tfe__gpu_seq;
  return be;
}

#endif /* TFE__GPU_COMPANION */
#endif
