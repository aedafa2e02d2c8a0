/* tenferro/kernel.h — kernel room: strided copy/permute, fill, map, zip, reduce on the CPU.
 *
 * Table of contents (API page: docs/kernel.md)
 *   tfe_copy_S(dst, src)                 copy into any destination layout (permute, make dense)
 *   tfe_contiguous_S(src, order, out)    new dense tensor holding src
 *   tfe_conj_copy_S, tfe_fill_S, tfe_scale_S, tfe_axpby_S
 *   tfe_map_S / tfe_map_fn_S             unary op (enum tfe_unop) or user function
 *   tfe_zip_S / tfe_zip_fn_S             binary op with numpy broadcasting (enum tfe_binop)
 *   tfe_reduce_S / tfe_reduce_all_S      reductions over any set of axes (enum tfe_redop)
 *   tfe_copy_dyn / tfe_map_dyn / tfe_zip_dyn   the dtype-tagged layer
 * and _Generic front ends tfe_copy(dst, src), tfe_map(...), ... at the end.
 *
 * Kind-independent pieces live here: overlap tests and the loop planner that orders, fuses
 * and tiles the dimensions of up to three operands. Per-kind bodies are in kernel_tpl.h. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_H
#define TENFERRO_KERNEL_H

#include <tenferro/tensor/tensor.h>

/* ---- operation codes ---------------------------------------------------------------------- */
typedef enum tfe_unop {
  TFE_UN_NEG, TFE_UN_CONJ, TFE_UN_ABS, TFE_UN_REAL, TFE_UN_IMAG, TFE_UN_SQRT, TFE_UN_EXP,
  TFE_UN_LOG, TFE_UN_SIN, TFE_UN_COS, TFE_UN_TANH, TFE_UN_POW, TFE_UN_RECIP, TFE_UN_SQUARE,
  TFE_UN_COUNT_
} tfe_unop;

typedef enum tfe_binop {
  TFE_BIN_ADD, TFE_BIN_SUB, TFE_BIN_MUL, TFE_BIN_DIV, TFE_BIN_MAX, TFE_BIN_MIN, TFE_BIN_COUNT_
} tfe_binop;

typedef enum tfe_redop {
  TFE_RED_SUM,     /* semiring sum (max for max-plus, min for min-plus, ...) */
  TFE_RED_PROD,    /* semiring product */
  TFE_RED_MAX, TFE_RED_MIN, TFE_RED_MEAN, TFE_RED_SUMSQ,
  TFE_RED_NORM1, TFE_RED_NORM2, TFE_RED_NORMINF, TFE_RED_COUNT_
} tfe_redop;

TFE_API const char *tfe_unop_name(tfe_unop op);
TFE_API const char *tfe_binop_name(tfe_binop op);
TFE_API const char *tfe_redop_name(tfe_redop op);

/* Real and complex math by argument type (no <tgmath.h>: it would redefine the user's sqrt). */
#define TFE__M(name, x) \
  _Generic((x), float: name##f, double: name, float _Complex: c##name##f, double _Complex: c##name)(x)
#define TFE__MPOW(x, y) \
  _Generic((x), float: powf, double: pow, float _Complex: cpowf, double _Complex: cpow)(x, y)
#define TFE__CREAL(x) _Generic((x), float _Complex: crealf, double _Complex: creal)(x)
#define TFE__CIMAG(x) _Generic((x), float _Complex: cimagf, double _Complex: cimag)(x)
#define TFE__MABS(x) \
  _Generic((x), float: fabsf, double: fabs, float _Complex: cabsf, double _Complex: cabs)(x)

/* ---- fresh destinations ------------------------------------------------------------------
 * A large fresh buffer costs one page fault per 4 KiB page on first touch, which makes a
 * copy into it several times slower than the copy itself. Asking for transparent huge pages
 * before the first touch (what numpy does for its arrays) makes those faults 512x fewer.
 * Declared here rather than through <sys/mman.h>, which -std=c11 hides. */
#if defined(__linux__)
extern int madvise(void *addr, size_t len, int advice);
#endif
#define TFE__KOPS 3
#define TFE__KTAB 256     /* entries of a group table */
#define TFE__KGD 16       /* dims in a group */

typedef struct tfe__kgroup {
  int nd;                       /* dims in the group, inner first; 0: the group is empty */
  int64_t len;                  /* elements of a full block */
  int64_t inner;                /* elements per step of the last (outermost) dim */
  int64_t last_n, last_b;       /* that dim's size and block (block < size: cut) */
  bool arith[TFE__KOPS];
  int64_t step[TFE__KOPS];
  int64_t tab[TFE__KOPS][TFE__KTAB];
  /* distinct entries per op: entries that differ only along dims where op o has stride 0
   * share an id (cid, in [0, ncid)); a gather tile gathers each distinct column of an
   * input once per tile. ncid = 0: not computed (group longer than a table). */
  int64_t ncid[TFE__KOPS];
  int16_t cid[TFE__KOPS][TFE__KTAB];
} tfe__kgroup;

typedef struct tfe__kplan {
  int nops, key;
  int64_t numel;
  int64_t base[TFE__KOPS];               /* element offset of the origin after flips */
  int rank;                              /* sorted, fused dims */
  int64_t dims[TFE_MAX_RANK];
  int64_t str[TFE__KOPS][TFE_MAX_RANK];
  tfe__kgroup g[2];
  int no;                                /* tile odometer: counts and per-op steps */
  int64_t ocount[TFE_MAX_RANK + 2];
  int64_t ostep[TFE__KOPS][TFE_MAX_RANK + 2];
  int oclip[TFE_MAX_RANK + 2];           /* 1: cut dim of G0, 2: of G1, 0: plain */
  int64_t ntiles, nseq;                  /* tiles; leading tiles that share op 0 (reductions) */
  bool gather;                           /* G1 is a column group of a gather tile, not a transpose */
  bool tiny;                             /* a transpose whose destination run starts with a tiny dim */
  bool along_src;                        /* tiles step along the transposed input (table tiles) */
} tfe__kplan;

typedef struct tfe__ktile {
  int64_t off[TFE__KOPS];
  int64_t n0, n1;
  int tid;
} tfe__ktile;

/* Group build modes: gather tiles forced; table tiles (see tfe__kplan_make). */
enum { TFE__KM_GATHER = 1, TFE__KM_TABLE = 2 };

typedef void (*tfe__ktile_fn)(void *ctx, const tfe__kplan *p, const tfe__ktile *t);

/* Offset of entry e of group gi for op o. */
#define TFE__KOFF(p, gi, o, e) \
  ((p)->g[gi].arith[o] ? (e) * (p)->g[gi].step[o] : (p)->g[gi].tab[o][e])

/* Reductions: folds and the transform applied before folding. */
enum { TFE__KF_ADD, TFE__KF_MUL, TFE__KF_MAX, TFE__KF_MIN };
enum { TFE__KP_NONE, TFE__KP_ABS, TFE__KP_ABS2 };
#if TFE__IMPL && (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TFE__KHAVE_TR8 1
#if defined(__AVX512F__) || defined(__AVX2__)
#define tfe__ksimd() (!tfe__kportable)
#else
#define TFE__KSIMD_PRAGMA 1
#endif
#if defined(__AVX512F__)
typedef __m512d tfe__kv8;
#define tfe__kv8_ld(p) _mm512_loadu_pd(p)
#define tfe__kv8_st(p, v) _mm512_storeu_pd(p, v)
#define tfe__kv8_nt(p, v) _mm512_stream_pd(p, v)
#define tfe__kv8_set1(x) _mm512_set1_pd(x)
#define tfe__kv8_add(x, y) _mm512_add_pd(x, y)
#define tfe__kv8_sub(x, y) _mm512_sub_pd(x, y)
#define tfe__kv8_mul(x, y) _mm512_mul_pd(x, y)
#define tfe__kv8_div(x, y) _mm512_div_pd(x, y)
#define tfe__kv8_neg(x) _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MIN)))
#else /* AVX2: a line is two 256-bit halves */
typedef struct { __m256d lo, hi; } tfe__kv8;
#define TFE__KV8_BIN(name, f) \
  TFE_INTERNAL tfe__kv8 tfe__kv8_##name(tfe__kv8 x, tfe__kv8 y) { tfe__kv8 v = {f(x.lo, y.lo), f(x.hi, y.hi)}; return v; }
#endif
/* Ops that run inside the register transpose (f64): identity (conj, real), neg, square,
 * and zip's add, sub, mul, div with the transposed input on either side. */
enum { TFE__KFU_NONE, TFE__KFU_ID, TFE__KFU_NEG, TFE__KFU_SQUARE, TFE__KFU_ADD, TFE__KFU_SUB,
       TFE__KFU_MUL, TFE__KFU_DIV };
#else
#define TFE__KHAVE_TR8 0
#define tfe__ksimd() 0
enum { TFE__KFU_NONE, TFE__KFU_ID, TFE__KFU_NEG, TFE__KFU_SQUARE, TFE__KFU_ADD, TFE__KFU_SUB,
       TFE__KFU_MUL, TFE__KFU_DIV };
#endif

#define TFE_TEMPLATE <tenferro/kernel/kernel_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- _Generic front ends (dispatch on the first view pointer) ------------------------------ */
#define tfe_copy(dst, src) _Generic((dst), TFE_GCASES_ALL(copy, view))(dst, src)
#define tfe_conj_copy(dst, src) _Generic((dst), TFE_GCASES_ALL(conj_copy, view))(dst, src)
#define tfe_contiguous(src, order, out) _Generic((src), TFE_GCASES_ALL(contiguous, view))(src, order, out)
#define tfe_fill(dst, value) _Generic((dst), TFE_GCASES_ALL(fill, view))(dst, value)
#define tfe_scale(y, alpha) _Generic((y), TFE_GCASES_ALL(scale, view))(y, alpha)
#define tfe_axpby(y, a, x, b) _Generic((y), TFE_GCASES_ALL(axpby, view))(y, a, x, b)
#define tfe_map(dst, src, op, param) _Generic((dst), TFE_GCASES_ALL(map, view))(dst, src, op, param)
#define tfe_map_fn(dst, src, fn, ctx) _Generic((dst), TFE_GCASES_ALL(map_fn, view))(dst, src, fn, ctx)
#define tfe_zip(dst, a, b, op) _Generic((dst), TFE_GCASES_ALL(zip, view))(dst, a, b, op)
#define tfe_zip_fn(dst, a, b, fn, ctx) _Generic((dst), TFE_GCASES_ALL(zip_fn, view))(dst, a, b, fn, ctx)
#define tfe_reduce(out, src, op, naxes, axes, alpha, beta) \
  _Generic((out), TFE_GCASES_ALL(reduce, view))(out, src, op, naxes, axes, alpha, beta)
#define tfe_reduce_all(src, op, result) _Generic((src), TFE_GCASES_ALL(reduce_all, view))(src, op, result)

/* dst = src for tensors whose kind is known at run time only; kinds must match. */
TFE_API tfe_status tfe_copy_dyn(const tfe_dyn *dst, const tfe_dyn *src);
/* dst = op(src); param points to one value of the kind (the exponent of TFE_UN_POW), or NULL. */
TFE_API tfe_status tfe_map_dyn(const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op, const void *param);
/* dst = a op b with broadcasting; the three kinds must match. */
TFE_API tfe_status tfe_zip_dyn(const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b, tfe_binop op);

#endif
#elif !defined(TENFERRO_KERNEL_BODY) /* bodies */
#define TENFERRO_KERNEL_BODY
#include <tenferro/tensor/tensor.h>
TFE_API const char *tfe_unop_name(tfe_unop op) {
  static const char *const n[] = {"neg", "conj", "abs", "real", "imag", "sqrt", "exp", "log",
                                  "sin", "cos", "tanh", "pow", "recip", "square"};
  return (unsigned)op < (unsigned)TFE_UN_COUNT_ ? n[op] : "unknown";
}
TFE_API const char *tfe_binop_name(tfe_binop op) {
  static const char *const n[] = {"add", "sub", "mul", "div", "max", "min"};
  return (unsigned)op < (unsigned)TFE_BIN_COUNT_ ? n[op] : "unknown";
}
TFE_API const char *tfe_redop_name(tfe_redop op) {
  static const char *const n[] = {"sum", "prod", "max", "min", "mean", "sumsq",
                                  "norm1", "norm2", "norminf"};
  return (unsigned)op < (unsigned)TFE_RED_COUNT_ ? n[op] : "unknown";
}
TFE_INTERNAL void tfe__kadvise_huge(void *p, size_t bytes) {
#if defined(__linux__)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (!p || bytes < 2 * huge) return;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (e > a) (void)madvise((void *)a, (size_t)(e - a), 14 /* MADV_HUGEPAGE */);
#else
  (void)p; (void)bytes;
#endif
}

/* Fault in a fresh buffer of `bytes` before a kernel writes it: one write per 4 KiB, `nt`
 * threads taking equal 2 MiB-aligned shares (as the kernels split their outputs). Returns
 * whether it did (buffers of at least 4 MiB). A transposing copy into pages that its own
 * stores fault in ran 1.20-1.31x a memcpy; faulted first, with the tiles sized for written
 * pages, 1.11-1.17x (f64 2048^2 and 256^3 transposes, 1 thread, faults included in both).
 * Writes bytes: only for buffers nobody has read. */
TFE_GLOBAL int tfe__kprefault_on = 1;
/* Whether this is an AMD CPU, and a tuning switch with -1 meaning "on AMD CPUs only" (the
 * defaults measured per CPU family: streamed edge lines, fresh in-order transposes). */
TFE_INTERNAL bool tfe__kcpu_amd(void) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_is("amd");
#else
  return false;
#endif
}
TFE_INTERNAL bool tfe__kon_amd(int setting) { return setting > 0 || (setting < 0 && tfe__kcpu_amd()); }
/* A transposing copy into fresh pages whose tiles walk the destination in order
 * (tfe__kplan_in_order, tiles within 2 MiB) takes each page's faults as it reaches it and
 * writes with normal stores: the system has just zeroed the page through the cache, and
 * the stores find its lines there, where streaming stores or faulting everything first send
 * the zeros to memory and back (256^3 [2,0,1] and [1,0,2], 2048^2 into fresh pages: 1.21-1.29x
 * memcpy against 1.39-1.55x, Zen 3). Tiles that jump about the destination (reversals, the
 * rotation, de-interleaves) keep the faults first and the streaming stores (normal stores
 * measured 1.3-2.7x worse there). On the Xeon host it was mixed (256^3 [2,0,1] 1.12-1.20
 * against 1.21-1.24, [1,0,2] 1.15-1.22 against 1.05-1.21, 2048^2 1.33 against 1.21-1.22),
 * so -1 (default) takes it on AMD CPUs only; 1 always, 0 never. */
TFE_GLOBAL int tfe__kfresh_order = -1;
/* Fresh destinations below this many bytes skip both (the C library hands small buffers
 * back from its own free lists, not as new pages; tests lower it to drive the paths). */
TFE_GLOBAL int64_t tfe__kfresh_min = (int64_t)4 << 20;
TFE_INTERNAL bool tfe__kprefault(void *p, size_t bytes, int nt) {
  const size_t huge = (size_t)2 << 20;
  if (!p || bytes < 2 * huge || !tfe__kprefault_on) return false;
  size_t chunks = (bytes + huge - 1) / huge;
  if ((size_t)nt > chunks) nt = (int)chunks;
  TFE_OMP(parallel num_threads(nt) if (nt > 1))
  {
    size_t t = 0, n = 1;
#ifdef _OPENMP
    t = (size_t)omp_get_thread_num();
    n = (size_t)omp_get_num_threads();
#endif
    size_t lo = chunks * t / n * huge, hi = chunks * (t + 1) / n * huge;
    if (hi > bytes) hi = bytes;
    for (size_t o = lo; o < hi; o += 4096) ((volatile char *)p)[o] = 0;
  }
  return true;
}

/* ---- layout checks ------------------------------------------------------------------------- */
/* Same rank and dims. */
TFE_INTERNAL tfe_status tfe__same_shape(const tfe_layout *a, const tfe_layout *b, const char *where) {
  if (a->rank != b->rank)
    return tfe__fail(TFE_ERR_SHAPE, where, "rank %d does not match rank %d", a->rank, b->rank);
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return tfe__fail(TFE_ERR_SHAPE, where, "dim %d is %lld, expected %lld", i,
                       (long long)b->dims[i], (long long)a->dims[i]);
  return TFE_OK;
}

TFE_INTERNAL int64_t tfe__gcd(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}

/* Whether writing dst element by element while reading src (same dims, src possibly
 * broadcast by zero strides) can read a value already overwritten. False when the byte
 * ranges are disjoint, when dst and src address the same element at every index (in-place
 * elementwise), or when a common stride lattice keeps their elements apart. */
TFE_INTERNAL bool tfe__views_conflict(const void *dp, const tfe_layout *dl, const void *sp,
                                      const tfe_layout *sl, size_t esz) {
  int64_t dlo, dhi, slo, shi;
  if (!tfe_layout_extent(dl, &dlo, &dhi) || !tfe_layout_extent(sl, &slo, &shi)) return false;
  intptr_t d0 = (intptr_t)dp, s0 = (intptr_t)sp, e = (intptr_t)esz;
  intptr_t da = d0 + (intptr_t)dlo * e, db = d0 + (intptr_t)(dhi + 1) * e;
  intptr_t sa = s0 + (intptr_t)slo * e, sb = s0 + (intptr_t)(shi + 1) * e;
  if (db <= sa || sb <= da) return false;
  bool same = d0 + (intptr_t)dl->offset * e == s0 + (intptr_t)sl->offset * e && dl->rank == sl->rank;
  for (int i = 0; same && i < dl->rank; i++)
    if (dl->dims[i] > 1 && dl->strides[i] != sl->strides[i]) same = false;
  if (same) return false;
  int64_t g = 0;
  for (int i = 0; i < dl->rank; i++) if (dl->dims[i] > 1) g = tfe__gcd(g, dl->strides[i] * (int64_t)esz);
  for (int i = 0; i < sl->rank; i++) if (sl->dims[i] > 1) g = tfe__gcd(g, sl->strides[i] * (int64_t)esz);
  if (g == 0) return true; /* both single elements, and their bytes intersect */
  int64_t r = (int64_t)((d0 + (intptr_t)dl->offset * e) - (s0 + (intptr_t)sl->offset * e)) % g;
  if (r < 0) r += g;
  return !(r >= (int64_t)esz && g - r >= (int64_t)esz);
}

/* src viewed with dst's dims by numpy's rule: trailing dims align, a dim of 1 (or a missing
 * leading dim) repeats with stride 0. */
TFE_INTERNAL tfe_status tfe__broadcast(const tfe_layout *src, const tfe_layout *dst, tfe_layout *out,
                                       const char *where, const char *name) {
  if (src->rank > dst->rank)
    return tfe__fail(TFE_ERR_SHAPE, where, "cannot broadcast %s of rank %d to rank %d", name,
                     src->rank, dst->rank);
  int lead = dst->rank - src->rank;
  out->rank = dst->rank;
  out->offset = src->offset;
  for (int i = 0; i < dst->rank; i++) {
    out->dims[i] = dst->dims[i];
    if (i < lead) { out->strides[i] = 0; continue; }
    int64_t n = src->dims[i - lead];
    if (n == dst->dims[i]) out->strides[i] = src->strides[i - lead];
    else if (n == 1) out->strides[i] = 0;
    else
      return tfe__fail(TFE_ERR_SHAPE, where,
                       "cannot broadcast %s dim %d (size %lld) to size %lld", name, i - lead,
                       (long long)n, (long long)dst->dims[i]);
  }
  return TFE_OK;
}

/* A valid layout (rank, non-negative dims, no overflow) with data unless it is empty. */
TFE_INTERNAL tfe_status tfe__check_layout(const tfe_layout *L, const void *data, const char *where,
                                          const char *name, int64_t *count) {
  if (L->rank < 0 || L->rank > TFE_MAX_RANK)
    return tfe__fail(TFE_ERR_RANK, where, "%s rank %d outside [0, %d]", name, L->rank, TFE_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < L->rank; i++) {
    if (L->dims[i] < 0)
      return tfe__fail(TFE_ERR_INVALID, where, "%s dim %d is negative (%lld)", name, i,
                       (long long)L->dims[i]);
    if (!tfe__mul_ok(n, L->dims[i], &n))
      return tfe__fail(TFE_ERR_OVERFLOW, where, "%s element count overflows at dim %d", name, i);
  }
  if (n > 0 && !data) return tfe__fail(TFE_ERR_NULL, where, "%s data is NULL", name);
  if (count) *count = n;
  return TFE_OK;
}
/* A written view must also have distinct elements. */
TFE_INTERNAL tfe_status tfe__check_dst(const tfe_layout *L, const void *data, const char *where,
                                       int64_t *count) {
  TFE_TRY(tfe__check_layout(L, data, where, "destination", count));
  if (!tfe__layout_nested(L))
    return tfe__fail(TFE_ERR_OVERLAP, where,
                     "destination elements overlap (zero or interleaved strides)");
  return TFE_OK;
}

/* ---- the loop planner --------------------------------------------------------------------
 * Operands share one index space (dims); each has its own strides. Op 0 is the written one
 * (or, for reductions, the accumulator), ops 1.. are read. The plan:
 *   1. drops size-1 dims, flips dims where the key operand's stride is negative,
 *   2. sorts dims by the key operand's |stride| and fuses dims contiguous in every operand,
 *   3. forms group G0 of the innermost dims (contiguous in the key operand) up to a block of
 *      about `t0` elements, and, when an input reads with large strides along G0 (a
 *      transpose), a group G1 of the dims that input reads contiguously, up to `t1`;
 *      the last dim of a group may be cut into blocks (its tail tile is clipped),
 *   4. the remaining dims and the block counts form the tile odometer, threads split it.
 * A tile is G0 x G1: for j < n1, for i < n0 the element at off(G0, i) + off(G1, j). Offsets
 * along a group are an arithmetic step (single dim) or a table (several small dims). */
/* Path counters for tests (counted by the calling thread, only while tfe__kstat_on is set):
 * [0] map/zip plans with gather tiles, [1] of them with column caches, [2] copy plans with
 * gather tiles, [3] copy plans whose table blocks copy runs; counted by the tile's thread
 * (atomically): [4] map/zip transpose tiles with the op fused into the 8x8 register
 * transpose, [5] plain map/zip blocks streamed through an L1 buffer, [6] plain f64 blocks
 * of a fusable op computed and streamed in one pass (tfe__kfu_row); by the calling thread
 * again: [7] copy plans with buffered transpose tiles (k_copy_buffered_), [8] plans with
 * table tiles (tfe__kplan_make); by the tile's thread: [9] copy tiles that ran register
 * blocks of a 4- or 16-byte kind; by the calling thread: [10] plans that tile short common
 * runs as a transpose (tfe__krun_split). */
TFE_GLOBAL int tfe__kstat_on = 0;
TFE_GLOBAL int64_t tfe__kstat[11] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
/* Whether this CPU runs transposes fastest with the op fused into the register transpose and
 * unbuffered copy tiles: measured so only on AMD parts with AVX-512 (Zen 5). On a Zen 3
 * (AVX2) and an AVX-512 Xeon the buffered tiles won (16M f64 transposed map 0.85 of memcpy
 * buffered vs 0.52 fused, zip 0.77-0.86 vs 0.35; docs/bench-kernel.md, round 6). */
TFE_INTERNAL bool tfe__kcpu_fuses(void) {
#if defined(__AVX512F__)
  return tfe__kcpu_amd();
#else
  return false;
#endif
}
/* Copy transpose tiles of streamed outputs through a tile buffer: 2 always, 1 only when the
 * destination columns are not 64-byte aligned, 0 never; -1 (default) picks 1 where
 * tfe__kcpu_fuses and 2 elsewhere. See k_copy_buffered_. */
TFE_GLOBAL int tfe__kcopy_buf = -1;
TFE_INTERNAL int tfe__kcopy_buf_mode(void) {
  return tfe__kcopy_buf >= 0 ? tfe__kcopy_buf : tfe__kcpu_fuses() ? 1 : 2;
}
TFE_INTERNAL void tfe__kstat_add(int k) {
  if (tfe__kstat_on) __atomic_fetch_add(&tfe__kstat[k], 1, __ATOMIC_RELAXED);
}
/* Table tiles (tfe__kplan_make): G1 at least this many bytes along the input, G0 twice. */
TFE_GLOBAL int64_t tfe__ktable_bytes = 512;
TFE_GLOBAL int tfe__kgather_all = 0;
TFE_GLOBAL int64_t tfe__ktiny_dim = 8; /* a destination run below this many elements is tiny */

TFE_INTERNAL int64_t tfe__kabs(int64_t x) { return x < 0 ? -x : x; }

/* Whether input op j reads G0's first dim with a large stride while some other dim is
 * contiguous for it: then a 2-D tile keeps its cache lines in use. */
TFE_INTERNAL bool tfe__kmisaligned(const tfe__kplan *p, int j) {
  int64_t s0 = tfe__kabs(p->str[j][0]);
  if (s0 <= 1) return false; /* (stride 2 or 3, as in an interleaved source: tiles read it once) */
  for (int d = 1; d < p->rank; d++) {
    int64_t s = tfe__kabs(p->str[j][d]);
    if (s != 0 && s < s0) return true;
  }
  return false;
}

/* Move dims `sel` (in this order) to positions [at, at + n) keeping the others' order. */
TFE_INTERNAL void tfe__kmove(tfe__kplan *p, int at, int n, const int *sel) {
  int64_t dims[TFE_MAX_RANK], str[TFE__KOPS][TFE_MAX_RANK];
  bool used[TFE_MAX_RANK] = {false};
  int k = 0;
  for (int i = 0; i < at; i++) { used[i] = true; }
  for (int i = 0; i < at; i++, k++) {
    dims[k] = p->dims[i];
    for (int o = 0; o < p->nops; o++) str[o][k] = p->str[o][i];
  }
  for (int m = 0; m < n; m++, k++) {
    used[sel[m]] = true;
    dims[k] = p->dims[sel[m]];
    for (int o = 0; o < p->nops; o++) str[o][k] = p->str[o][sel[m]];
  }
  for (int i = 0; i < p->rank; i++) if (!used[i]) {
    dims[k] = p->dims[i];
    for (int o = 0; o < p->nops; o++) str[o][k] = p->str[o][i];
    k++;
  }
  memcpy(p->dims, dims, sizeof(int64_t) * (size_t)p->rank);
  for (int o = 0; o < p->nops; o++) memcpy(p->str[o], str[o], sizeof(int64_t) * (size_t)p->rank);
}

/* The distinct-entry ids of a group (see tfe__kgroup): a mixed-radix index over the dims
 * where the op moves. */
TFE_INTERNAL void tfe__kgroup_ids(const tfe__kplan *p, tfe__kgroup *g, int at) {
  for (int o = 0; o < p->nops; o++) {
    g->ncid[o] = 0;
    if (g->len > TFE__KTAB) continue;
    int64_t rad[TFE__KGD], m = 1, idx[TFE__KGD] = {0}, id = 0;
    for (int k = 0; k < g->nd; k++) {
      int64_t n = k == g->nd - 1 ? g->last_b : p->dims[at + k];
      rad[k] = p->str[o][at + k] != 0 ? m : 0;
      if (p->str[o][at + k] != 0) m *= n;
    }
    g->ncid[o] = m;
    for (int64_t e = 0; e < g->len; e++) {
      g->cid[o][e] = (int16_t)id;
      for (int k = 0; k < g->nd; k++) {
        int64_t n = k == g->nd - 1 ? g->last_b : p->dims[at + k];
        if (++idx[k] < n) { id += rad[k]; break; }
        id -= (n - 1) * rad[k];
        idx[k] = 0;
      }
    }
  }
}

/* Group of dims [at, at + nd): fill the block shape, steps or tables. The last dim is cut
 * to `last_b` (= its size when whole). */
TFE_INTERNAL void tfe__kgroup_make(tfe__kplan *p, tfe__kgroup *g, int at, int nd, int64_t last_b) {
  g->nd = nd;
  g->inner = 1;
  for (int d = at; d < at + nd - 1; d++) g->inner *= p->dims[d];
  g->last_n = p->dims[at + nd - 1];
  g->last_b = last_b;
  g->len = g->inner * last_b;
  for (int o = 0; o < p->nops; o++) {
    g->arith[o] = nd == 1;
    g->step[o] = p->str[o][at];
    if (nd == 1) continue;
    int64_t idx[TFE__KGD] = {0}, off = 0;
    for (int64_t e = 0; e < g->len; e++) {
      g->tab[o][e] = off;
      for (int k = 0; k < nd; k++) {
        int64_t n = k == nd - 1 ? last_b : p->dims[at + k];
        if (++idx[k] < n) { off += p->str[o][at + k]; break; }
        off -= (n - 1) * p->str[o][at + k];
        idx[k] = 0;
      }
    }
    bool ar = true; /* an arithmetic table is a step (faster inner loops) */
    for (int64_t e = 1; e < g->len && ar; e++) ar = g->tab[o][e] == e * g->tab[o][1];
    if (ar) { g->arith[o] = true; g->step[o] = g->len > 1 ? g->tab[o][1] : 0; }
  }
  tfe__kgroup_ids(p, g, at);
}

/* Choose a group starting at `at` among dims [at, rank): whole dims while the block stays
 * within `target` (and the table within TFE__KTAB), then a cut of the next dim. Returns the
 * dims used; *cut gets the block of the last one. */
TFE_INTERNAL int tfe__kgroup_pick(const tfe__kplan *p, int at, int end, int64_t target, int64_t *cut) {
  int nd = 0;
  int64_t prod = 1;
  while (at + nd < end && nd < TFE__KGD) {
    int64_t n = p->dims[at + nd];
    if (prod * n <= target && (nd == 0 || prod * n <= TFE__KTAB)) {
      prod *= n; nd++; *cut = n;
      continue;
    }
    int64_t lim = nd == 0 ? target : (target < TFE__KTAB ? target : TFE__KTAB);
    int64_t b = lim / prod;
    if (b >= 2 || nd == 0) { *cut = b < 1 ? 1 : b; nd++; }
    break;
  }
  return nd;
}

/* Whole dims from `at` until the block reaches `target` (or the table TFE__KTAB entries):
 * table tiles of 3s take 81 rather than a cut 54 for a target of 64. A next dim too large
 * for the table is cut so that the block reaches the target (a 21 x 8138 pair: 21 x 7, not
 * 21 alone, whose 168-byte destination columns ran 3x memcpy). */
TFE_INTERNAL int tfe__kgroup_pick_up(const tfe__kplan *p, int at, int end, int64_t target, int64_t *cut, bool may_cut) {
  int nd = 0;
  int64_t prod = 1;
  if (may_cut && at < end && p->dims[at] > TFE__KTAB && target >= 8) { /* (a 2460-long first dim: */
    *cut = target;                                                    /* tiles of 2.4 MB) */
    return 1;
  }
  while (at + nd < end && nd < TFE__KGD && prod < target && (nd == 0 || prod * p->dims[at + nd] <= TFE__KTAB)) {
    prod *= p->dims[at + nd];
    *cut = p->dims[at + nd];
    nd++;
  }
  if (may_cut && nd > 0 && at + nd < end && nd < TFE__KGD && prod < target) {
    int64_t b = (target + prod - 1) / prod;
    if (b > TFE__KTAB / prod) b = TFE__KTAB / prod;
    if (b >= 2) { *cut = b; nd++; }
  }
  return nd;
}

/* Elements of input o contiguous within one plain block of target t0 (dims from 0, as
 * tfe__kgroup_pick takes them): the longest chunk of o a block reads in one piece. */
TFE_INTERNAL int64_t tfe__kblock_run(const tfe__kplan *p, int o, int64_t t0) {
  int64_t cut = 1, r = 1;
  int nd = tfe__kgroup_pick(p, 0, p->rank, t0, &cut);
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < nd; i++)
      if (tfe__kabs(p->str[o][i]) == r) {
        if (i == nd - 1) return r * cut; /* the cut dim ends the chunk */
        r *= p->dims[i];
        more = true;
        break;
      }
  }
  return r;
}

/* Plan the loops. strides[o] are op o's strides over dims; offsets[o] its origin. t0
 * bounds G0 of a plain block, tt0 and tt1 G0 and G1 of a transpose tile, tg0 (0: never)
 * G0 of a gather tile. Returns false when there are no elements.
 * Gather tiles: when the destination's run before a transposed input's innermost dim is
 * shorter than a register block (dims of 2, 3, 4: a 3 x 243 transpose tile would run its
 * body on runs of 3), G0 instead takes the destination's leading dims up to tg0 elements
 * and every input is read along G0 through its offset table (vector gathers); G1 is still
 * chosen by the transposed input's strides, so each tile uses that input's lines whole. */
TFE_INTERNAL bool tfe__kplan_build(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                   const int64_t *const *strides, const int64_t *offsets, int64_t t0,
                                   int64_t tt0, int64_t tt1, int64_t tg0, bool seq_zero, int mode, int64_t run_max);
/* Copies: when the source's contiguous chunks within a plain block are shorter than this
 * many bytes while the source continues along a dim outside the block (runs of 22 doubles
 * common to both, the next one 726 elements on in the source: each block reads 176-byte
 * pieces of lines it never finishes), the copy is tiled as a transpose of runs
 * (k_copy_tile_), which reads the source row by row: 2.7 -> 1.3x memcpy on the Zen 3.
 * tn_light's blocks read 512-byte chunks and stay plain (1.0x there, 1.4-2x as runs).
 * 0: never. */
TFE_GLOBAL int64_t tfe__krun_split = 256;
TFE_INTERNAL bool tfe__kplan_make(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                  const int64_t *const *strides, const int64_t *offsets,
                                  int64_t t0, int64_t tt0, int64_t tt1, int64_t tg0, bool seq_zero, int64_t es,
                                  bool copy) {
  int64_t run_max = copy ? tfe__krun_split / es : 0;
  if (!tfe__kplan_build(p, nops, key, rank, dims, strides, offsets, t0, tt0, tt1, tg0, seq_zero, 0, run_max))
    return false;
  /* A transpose of tiny dims whose groups are tables (a random permutation of 3s: the
   * destination's and the source's small dims interleave) runs its 8x8 blocks through
   * scalar table loops; gather tiles do better there (a reversal keeps both groups unit
   * steps and stays a transpose). */
  if (tg0 > 0 && p->g[1].nd > 0 && !p->gather && p->tiny) {
    bool fast = p->g[0].arith[0] && p->g[0].step[0] == 1;
    for (int o = 0; o < nops; o++)
      if (o != key && !(p->g[0].arith[o] && p->g[0].step[o] <= 1) && !(p->g[1].arith[o] && p->g[1].step[o] == 1))
        fast = false;
    if (!fast) {
      tfe__kplan_build(p, nops, key, rank, dims, strides, offsets, t0, tt0, tt1, tg0, seq_zero, TFE__KM_GATHER, run_max);
      return true;
    }
  }
  /* A transpose whose G0 reads its input through a table (a reversal of 2s or 3s: the tile's
   * rows lie scattered over the whole input) is rebuilt as table tiles: groups of whole dims
   * of at least 2x and 1x tfe__ktable_bytes elements-worth (f64: 128 x 64 for 2s, 243 x 81 for
   * 3s; reverse_23d_2 1.37x memcpy against 1.59-1.67x for 128 x 128 or 256 x 128, into fresh
   * or existing destinations alike), stepped along the input (tfe__kplan_build). */
  if (p->along_src) {
    int64_t tb = tfe__ktable_bytes / es < 8 ? 8 : tfe__ktable_bytes / es;
    tfe__kplan_build(p, nops, key, rank, dims, strides, offsets, t0, tb, tb, tg0, seq_zero, TFE__KM_TABLE, run_max);
    if (tfe__kstat_on) tfe__kstat[8]++;
  }
  return true;
}

TFE_INTERNAL bool tfe__kplan_build(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                   const int64_t *const *strides, const int64_t *offsets, int64_t t0,
                                   int64_t tt0, int64_t tt1, int64_t tg0, bool seq_zero, int mode, int64_t run_max) {
  p->nops = nops; p->key = key; p->rank = 0; p->numel = 1; p->gather = false; p->tiny = false;
  p->along_src = false;
  for (int o = 0; o < nops; o++) p->base[o] = offsets[o];
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) { p->numel = 0; return false; }
    if (dims[i] == 1) continue;
    int k = p->rank++;
    p->numel *= dims[i];
    p->dims[k] = dims[i];
    bool flip = strides[key][i] < 0;
    for (int o = 0; o < nops; o++) {
      int64_t s = strides[o][i];
      if (flip) { p->base[o] += (dims[i] - 1) * s; s = -s; }
      p->str[o][k] = s;
    }
  }
  /* sort by the key's stride; ties by the sum of the others' (insertion sort: rank is small) */
  for (int i = 1; i < p->rank; i++) {
    for (int j = i; j > 0; j--) {
      int64_t a = p->str[key][j - 1], b = p->str[key][j], sa = 0, sb = 0;
      for (int o = 0; o < nops; o++) { sa += tfe__kabs(p->str[o][j - 1]); sb += tfe__kabs(p->str[o][j]); }
      if (a < b || (a == b && sa <= sb)) break;
      int64_t t = p->dims[j]; p->dims[j] = p->dims[j - 1]; p->dims[j - 1] = t;
      for (int o = 0; o < nops; o++) { t = p->str[o][j]; p->str[o][j] = p->str[o][j - 1]; p->str[o][j - 1] = t; }
    }
  }
  /* fuse neighbours contiguous in every operand */
  int k = 0;
  for (int i = 1; i < p->rank; i++) {
    bool f = true;
    for (int o = 0; o < nops && f; o++) f = p->str[o][i] == p->str[o][k] * p->dims[k];
    if (f) { p->dims[k] *= p->dims[i]; continue; }
    k++;
    p->dims[k] = p->dims[i];
    for (int o = 0; o < nops; o++) p->str[o][k] = p->str[o][i];
  }
  if (p->rank > 0) p->rank = k + 1;
  /* groups */
  int mis = -1;
  for (int o = 0; o < nops && mis < 0; o++) if (o != key && tfe__kmisaligned(p, o)) mis = o;
  int64_t cut0 = 1, cut1 = 1;
  int end0 = p->rank; /* G0 stops before the misaligned input's innermost dim (G1 takes it) */
  if (mis < 0 && p->rank > 2 && p->dims[0] < run_max && p->str[key][0] == 1)
    for (int o = 0; o < nops && mis < 0; o++) /* a short common run continued elsewhere */
      if (o != key && tfe__kabs(p->str[o][0]) == 1 && tfe__kblock_run(p, o, t0) < run_max)
        for (int d = 2; d < p->rank; d++) /* (either direction: reversed runs or rows) */
          if (tfe__kabs(p->str[o][d]) == p->dims[0]) { mis = o; end0 = d; if (tfe__kstat_on) tfe__kstat[10]++; break; }
  if (mis >= 0 && end0 == p->rank)
    for (int d = 1; d < p->rank; d++) {
      int64_t s = tfe__kabs(p->str[mis][d]);
      if (s != 0 && s < tfe__kabs(p->str[mis][end0 < p->rank ? end0 : 0])) end0 = d;
    }
  if (tg0 > 0 && p->rank > 1 && p->dims[0] < tfe__ktiny_dim) {
    int64_t pre = 1;
    for (int d = 0; d < end0 && d < p->rank; d++) pre *= p->dims[d];
    bool strided = false; /* an input not unit-stride along the destination's run */
    for (int o = 0; o < nops; o++) if (o != key && p->str[o][0] != 1) strided = true;
    p->tiny = mis >= 0;
    if ((mis >= 0 && (pre < 8 || (mode & TFE__KM_GATHER) || tfe__kgather_all)) || (mis < 0 && strided)) {
      p->gather = true;
      end0 = p->rank;
    }
    if (p->gather && mis < 0) mis = key == 0 ? 1 : 0;
  }
  int nd0 = p->rank ? tfe__kgroup_pick(p, 0, end0, p->gather ? tg0 : mis >= 0 ? tt0 : t0, &cut0) : 0;
  bool table = (mode & TFE__KM_TABLE) && mis >= 0 && !p->gather;
  /* (G0 cuts a dim only when the input's innermost run fills register blocks: with runs of 4
   * the cut dim, which continues them, serves better in the odometer: 1.7 vs 3.1x memcpy) */
  if (table) nd0 = tfe__kgroup_pick_up(p, 0, end0, 2 * tt0, &cut0, end0 < p->rank && p->dims[end0] >= 8);
  /* A transpose group of several small dims (2s and 3s) runs its 8x8 blocks through
   * tables, and blocks clipped at its edges (27 = 3*8 + 3) element by element: four times
   * the target makes the clipped share small (243 x 81 tiles of 3s: 2.5 %). */
  if (mis >= 0 && !p->gather && nd0 > 1 && !table) nd0 = tfe__kgroup_pick(p, 0, end0, 4 * tt0, &cut0);
  int nd1 = 0;
  if (mis >= 0 && nd0 < p->rank) {
    /* remaining dims by the misaligned input's |stride| (broadcast dims last); gather
     * tiles: by the inputs' summed |stride|, so broadcast dims (an input reused within the
     * tile) and small strides (its lines used whole) come first */
    int64_t key1[TFE_MAX_RANK];
    for (int d = nd0; d < p->rank; d++) {
      key1[d] = tfe__kabs(p->str[mis][d]);
      if (key1[d] == 0) key1[d] = INT64_MAX;
      if (p->gather) {
        key1[d] = 0;
        for (int o = 0; o < nops; o++) if (o != key) key1[d] += tfe__kabs(p->str[o][d]);
      }
    }
    int sel[TFE_MAX_RANK], ns = 0;
    for (int d = nd0; d < p->rank; d++) {
      int j = ns++;
      while (j > 0 && key1[sel[j - 1]] > key1[d]) { sel[j] = sel[j - 1]; j--; }
      sel[j] = d;
    }
    tfe__kmove(p, nd0, ns, sel);
    nd1 = tfe__kgroup_pick(p, nd0, p->rank, tt1, &cut1);
    if (nd1 > 1) nd1 = tfe__kgroup_pick(p, nd0, p->rank, 4 * tt1, &cut1);
    if (table) nd1 = tfe__kgroup_pick_up(p, nd0, p->rank, tt1, &cut1, true);
  }
  if (nd0) tfe__kgroup_make(p, &p->g[0], 0, nd0, cut0);
  else { p->g[0].nd = 0; p->g[0].len = 1; p->g[0].inner = 1; p->g[0].last_n = p->g[0].last_b = 1; }
  if (!nd1) p->gather = false;
  if (nd1) tfe__kgroup_make(p, &p->g[1], nd0, nd1, cut1);
  else { p->g[1].nd = 0; p->g[1].len = 1; p->g[1].inner = 1; p->g[1].last_n = p->g[1].last_b = 1; }
  for (int gi = 0; gi < 2; gi++) if (p->g[gi].nd == 0)
    for (int o = 0; o < nops; o++) { p->g[gi].arith[o] = true; p->g[gi].step[o] = 0; }
  /* tile odometer: cut dims first, then the rest by the key's stride; with seq_zero the
   * dims where op 0 does not move come first so that they form the sequential prefix */
  int no = 0;
  int64_t cnt[TFE_MAX_RANK + 2], stp[TFE__KOPS][TFE_MAX_RANK + 2];
  int clip[TFE_MAX_RANK + 2];
  for (int gi = 0; gi < 2; gi++) {
    int nd = gi ? nd1 : nd0, last = (gi ? nd0 : 0) + nd - 1;
    if (!nd || p->g[gi].last_b >= p->g[gi].last_n) continue;
    cnt[no] = (p->g[gi].last_n + p->g[gi].last_b - 1) / p->g[gi].last_b;
    for (int o = 0; o < nops; o++) stp[o][no] = p->str[o][last] * p->g[gi].last_b;
    clip[no++] = gi + 1;
  }
  for (int d = nd0 + nd1; d < p->rank; d++) {
    cnt[no] = p->dims[d];
    for (int o = 0; o < nops; o++) stp[o][no] = p->str[o][d];
    clip[no++] = 0;
  }
  /* gather tiles with a broadcast input: tiles along dims where an input does not move (or
   * moves little) come first, so that consecutive tiles find that input's columns in cache
   * (without a broadcast input the destination's order is kept: a permuting copy sorted by
   * its source's strides measured 1.4x slower) */
  bool bcast = false;
  for (int i = 0; i < no; i++) for (int o = 0; o < nops; o++) if (o != key && stp[o][i] == 0) bcast = true;
  for (int i = 1; p->gather && bcast && i < no; i++)
    for (int j = i; j > 0; j--) {
      int64_t a = 0, b = 0;
      for (int o = 0; o < nops; o++) if (o != key) { a += tfe__kabs(stp[o][j - 1]); b += tfe__kabs(stp[o][j]); }
      if (a <= b) break;
      int64_t t = cnt[j]; cnt[j] = cnt[j - 1]; cnt[j - 1] = t;
      int c = clip[j]; clip[j] = clip[j - 1]; clip[j - 1] = c;
      for (int o = 0; o < nops; o++) { t = stp[o][j]; stp[o][j] = stp[o][j - 1]; stp[o][j - 1] = t; }
    }
  /* A transpose whose G0 reads the input through a table (a reversal: its rows lie
   * scattered over the whole input) steps its tiles along that input instead: each row then
   * continues where the previous tile left it (reverse_23d_2 1.80 -> 1.37x memcpy with the
   * table tiles, 3s 1.99 -> 1.74x); the destination takes whole-line streamed stores in any
   * order. Transposes of single dims keep the destination's order (3d_201 1.34 vs 1.37x). */
  p->along_src = mis >= 0 && !p->gather && nd0 > 1 && !p->g[0].arith[mis];
  bool along_src = p->along_src;
  for (int i = 1; along_src && i < no; i++)
    for (int j = i; j > 0; j--) {
      if (tfe__kabs(stp[mis][j - 1]) <= tfe__kabs(stp[mis][j])) break;
      int64_t t = cnt[j]; cnt[j] = cnt[j - 1]; cnt[j - 1] = t;
      int c = clip[j]; clip[j] = clip[j - 1]; clip[j - 1] = c;
      for (int o = 0; o < nops; o++) { t = stp[o][j]; stp[o][j] = stp[o][j - 1]; stp[o][j - 1] = t; }
    }
  p->no = 0; p->ntiles = 1; p->nseq = 1;
  for (int pass = 0; pass < 2; pass++) /* seq_zero: op-0-stationary tiles first */
    for (int i = 0; i < no; i++) {
      bool z = seq_zero && stp[0][i] == 0;
      if ((pass == 0) != z) continue;
      int q = p->no++;
      p->ocount[q] = cnt[i]; p->oclip[q] = clip[i];
      for (int o = 0; o < nops; o++) p->ostep[o][q] = stp[o][i];
      p->ntiles *= cnt[i];
      if (z) p->nseq *= cnt[i];
    }
  /* Threads split the outermost odometer dim first: make it the one with op 0's largest
   * stride, so that each thread writes (and first-touches) one contiguous share of op 0
   * instead of pieces of every huge page (two threads faulting the same pages wait on
   * each other). */
  int big = -1;
  for (int q = 0; q < p->no && !along_src; q++)
    if (!(seq_zero && p->ostep[0][q] == 0) && p->ocount[q] > 1 &&
        (big < 0 || tfe__kabs(p->ostep[0][q]) > tfe__kabs(p->ostep[0][big])))
      big = q;
  if (big >= 0 && big != p->no - 1) {
    int64_t c = p->ocount[big], st[TFE__KOPS];
    int cl = p->oclip[big];
    for (int o = 0; o < nops; o++) st[o] = p->ostep[o][big];
    for (int q = big; q < p->no - 1; q++) {
      p->ocount[q] = p->ocount[q + 1]; p->oclip[q] = p->oclip[q + 1];
      for (int o = 0; o < nops; o++) p->ostep[o][q] = p->ostep[o][q + 1];
    }
    p->ocount[p->no - 1] = c; p->oclip[p->no - 1] = cl;
    for (int o = 0; o < nops; o++) p->ostep[o][p->no - 1] = st[o];
  }
  return true;
}

/* Decode tile t into offsets and clipped extents. */
TFE_INTERNAL void tfe__ktile_at(const tfe__kplan *p, int64_t t, tfe__ktile *tl) {
  for (int o = 0; o < p->nops; o++) tl->off[o] = p->base[o];
  tl->n0 = p->g[0].len;
  tl->n1 = p->g[1].len;
  for (int q = 0; q < p->no && t; q++) {
    int64_t c = t % p->ocount[q];
    t /= p->ocount[q];
    for (int o = 0; o < p->nops; o++) tl->off[o] += c * p->ostep[o][q];
    if (p->oclip[q]) {
      const tfe__kgroup *g = &p->g[p->oclip[q] - 1];
      int64_t rem = g->last_n - c * g->last_b;
      if (rem < g->last_b) {
        if (p->oclip[q] == 1) tl->n0 = g->inner * rem; else tl->n1 = g->inner * rem;
      }
    }
  }
}

/* Whether plan p's tiles write op 0 in address order, each tile within `span` elements:
 * the odometer's op-0 steps ascend and a tile's op-0 footprint is small. */
TFE_INTERNAL bool tfe__kplan_in_order(const tfe__kplan *p, int64_t span) {
  int64_t s = 0;
  for (int gi = 0; gi < 2; gi++) {
    const tfe__kgroup *g = &p->g[gi];
    int at = gi ? p->g[0].nd : 0;
    for (int k = 0; k < g->nd; k++) {
      int64_t n = k == g->nd - 1 ? g->last_b : p->dims[at + k];
      s += (n - 1) * tfe__kabs(p->str[0][at + k]);
    }
  }
  if (s > span) return false;
  for (int q = 1; q < p->no; q++)
    if (tfe__kabs(p->ostep[0][q]) < tfe__kabs(p->ostep[0][q - 1])) return false;
  return true;
}

/* Extents of a tile whose cut dim q (a G0 or G1 block counter) is at c. */
TFE_INTERNAL void tfe__ktile_clip(const tfe__kplan *p, int q, int64_t c, tfe__ktile *tl) {
  const tfe__kgroup *g = &p->g[p->oclip[q] - 1];
  int64_t rem = g->last_n - c * g->last_b, n = rem < g->last_b ? g->inner * rem : g->len;
  if (p->oclip[q] == 1) tl->n0 = n; else tl->n1 = n;
}

/* Tuning (process-wide; tests lower them to drive every path with small tensors):
 * tensors of at most tfe__ktiny elements take plain odometer loops without planning, and
 * below tfe__kpar_min elements a kernel runs on one thread. */
TFE_GLOBAL int64_t tfe__ktiny = 1024;
TFE_GLOBAL int64_t tfe__kpar_min = 32768;
/* Transpose tiles: G1 spans this many bytes along the source, G0 twice as many. Copies
 * (tfe__ktile_bytes) and map/zip (tfe__kew_tile_bytes) tile separately. A copy into an
 * existing destination takes tiles twice as large: a fresh one is faulted in by the tiles'
 * own stores (the system zeroes each 2 MiB page as a tile first touches it) and favours
 * small tiles, while written-before pages favour larger ones (f64, 1 thread: 2048^2 and
 * 256^3 transposes 0.87-1.00x memcpy with 512 B x 1 KiB into existing pages against
 * 1.02-1.09x with 256 B x 512 B; into fresh pages 1.24-1.36x against 1.43-1.48x).
 * 512 (tiles of 2 KiB x 1 KiB once the destination is written or faulted in; 256 until
 * session 4): 256^3 [2,0,1] on the Xeon host 1.04-1.06x memcpy against 1.37-1.50x, on the
 * Zen 3 1.10-1.13 against 1.27-1.29 (A/B in one process, cold caches, pool on), the other
 * transposes equal or better on both (docs/bench-kernel.md, round 7). */
TFE_GLOBAL int64_t tfe__ktile_bytes = 512;
/* (map/zip: 2 KiB runs of the transposed input x 1 KiB of the destination measured 11.5
 * ms for a transposed 16M map on the Zen 5 against 13.8 ms for 1 KiB x 2 KiB; the buffered
 * tiles that other CPUs take ran 16M f64 zips on a Zen 3 at 0.86-0.88 of memcpy with 1 KiB
 * against 0.80-0.84 with 2 KiB.) 0 (default): 2 KiB where tfe__kcpu_fuses, else 1 KiB. */
TFE_GLOBAL int64_t tfe__kew_tile_bytes = 0;
/* map/zip: G0 span (destination runs); 2 KiB ran transposed 16M f64 zips at 0.80-0.83 of
 * memcpy's bandwidth against 0.78-0.82 for 1 KiB */
TFE_GLOBAL int64_t tfe__kew_run_bytes = 2048;
TFE_GLOBAL int64_t tfe__kew_gather_bytes = 2048; /* map/zip gather tiles: G0 span */
/* map/zip transpose tiles: whole-tile heap buffers (1) or strips of at most tfe__kew_strip
 * elements on the stack (0; also the fallback when the buffers cannot be allocated). */
TFE_GLOBAL int tfe__kew_scratch = 1;
TFE_GLOBAL int64_t tfe__kew_strip = (int64_t)1 << 30;
/* f64 map/zip transpose tiles with a built-in op: the op runs on the registers of the 8x8
 * transpose and the result goes straight to the destination, with no tile buffer: 1 for
 * zips, 2 for maps and zips (default), 0 never (the transposed input goes through a tile
 * buffer); -1 (default): 2 where tfe__kcpu_fuses, else 0. Zips measured faster fused (17
 * vs 23 ms for 16M f64 on Zen 5); maps too once their tiles are narrow
 * (tfe__kew_map_tile_bytes: 7.1-7.4 ms against 9.6-9.9 buffered); elsewhere, not. */
TFE_GLOBAL int tfe__kfuse = -1;
TFE_INTERNAL int tfe__kfuse_mode(void) { return tfe__kfuse >= 0 ? tfe__kfuse : tfe__kcpu_fuses() ? 2 : 0; }
/* Fused maps' transpose tiles span this many bytes along the transposed input (G1; zips and
 * buffered tiles use tfe__kew_tile_bytes): 512 B x 1 KiB tiles ran 16M f64 at 0.86-0.91 of
 * memcpy's bandwidth against 0.60-0.67 for 2 KiB x 1 KiB. */
TFE_GLOBAL int64_t tfe__kew_map_tile_bytes = 512;
/* Plain (non-transposed) map/zip blocks of outputs above tfe__knt_min: body into an L1
 * buffer, then streamed past the cache (1), or normal stores (0). */
TFE_GLOBAL int tfe__kew_nt = 1;
/* map/zip gather tiles: the most elements of one input's column cache (per thread). */
TFE_GLOBAL int64_t tfe__kew_cache = 16384;
/* Run copies of large outputs: prefetch this many bytes past each source run. */
TFE_GLOBAL int64_t tfe__krun_pf = 512;
/* Software prefetch of strided tile rows, this many 8-row strips ahead (0: none). */
TFE_GLOBAL int tfe__kpf = 2;

TFE_INTERNAL int tfe__kthreads(int64_t numel) {
  int nt = tfe_get_num_threads();
  return numel >= tfe__kpar_min && nt > 1 ? nt : 1;
}

/* Run every tile. Tiles of one sequential run (nseq consecutive, sharing op 0 elements)
 * stay on one thread; runs are split statically so that each thread writes (and first
 * touches) one contiguous share of the output. Each thread fences its streaming stores once,
 * at the end of its share (a fence per tile drains the write-combining buffers every few KiB
 * and costs a quarter of the bandwidth). */
TFE_INTERNAL void tfe__ksfence(void);
TFE_INTERNAL void tfe__kplan_run(const tfe__kplan *p, tfe__ktile_fn fn, void *ctx, int nt) {
  int64_t nrun = p->ntiles / p->nseq;
  if (nt > nrun) nt = (int)(nrun > 0 ? nrun : 1);
  TFE_OMP(parallel num_threads(nt) if (nt > 1))
  {
    tfe__ktile tl;
    int nth = 1;
    tl.tid = 0;
#ifdef _OPENMP
    tl.tid = omp_get_thread_num();
    nth = omp_get_num_threads();
#endif
    int64_t r0 = nrun * tl.tid / nth, r1 = nrun * (tl.tid + 1) / nth;
    int64_t t = r0 * p->nseq, t1 = r1 * p->nseq, idx[TFE_MAX_RANK + 2];
    /* decode the first tile, then step the odometer (a decode per tile costs two divisions
     * per dim: 100 ns at rank 20, as much as a small tile's copy) */
    if (t < t1) tfe__ktile_at(p, t, &tl);
    for (int q = 0; q < p->no; q++) { idx[q] = t % p->ocount[q]; t /= p->ocount[q]; }
    for (t = r0 * p->nseq; t < t1; t++) {
      fn(ctx, p, &tl);
      for (int q = 0; q < p->no; q++) {
        bool wrap = ++idx[q] == p->ocount[q];
        if (wrap) idx[q] = 0;
        for (int o = 0; o < p->nops; o++) tl.off[o] += wrap ? -(p->ocount[q] - 1) * p->ostep[o][q] : p->ostep[o][q];
        if (p->oclip[q]) tfe__ktile_clip(p, q, idx[q], &tl);
        if (!wrap) break;
      }
    }
    tfe__ksfence();
  }
}

/* Register transpose blocks by element size: rows (source rows, destination-contiguous) and
 * columns per block; 0 rows: no register kernel for that size (portable loops). */
TFE_INTERNAL int64_t tfe__krb(size_t es) { return es == 8 ? 8 : es == 4 ? 16 : es == 16 ? 4 : 0; }
TFE_INTERNAL int64_t tfe__kcb(size_t es) { return es == 16 ? 4 : 8; }

/* ---- transpose micro-kernels ---------------------------------------------------------------
 * An 8x8 block of 8-byte elements: column j of the destination (8 consecutive elements at
 * dcol[j]) receives element j of each source row (8 consecutive elements at srow[i]).
 * Every source and destination line is used whole while in registers, so large power-of-two
 * strides (which map all rows to one cache set) cost nothing extra. Kinds of other sizes
 * use the portable loop in kernel_tpl.h. `nt`: stream the stores past the cache (the
 * caller checked 64-byte alignment and issues tfe__ksfence afterwards).
 *
 * Eight doubles (one 64-byte line) are one tfe__kv8: an AVX-512 register, or two AVX2
 * registers. Everything below the tfe__kv8_* primitives is written once for both; a build
 * without AVX2 (-march lacking it) runs the portable loops. */
/* 1: streamed runs store their partial edge lines with 8-byte streaming stores (see
 * tfe__kstream_edge); 0: normal stores; -1 (default): 1 on AMD CPUs, 0 elsewhere. */
TFE_GLOBAL int tfe__kedge_nt = -1;
/* 1: the destination columns of copy tiles narrower than 8 are streamed (tfe__kcol_simd);
 * 0: element-wise normal stores. */
TFE_GLOBAL int tfe__kcol_nt = 1;
/* Which micro-kernels run. Built with -march covering AVX-512 or AVX2, they are inlined and
 * always used. Built for baseline x86-64 (no -march: the common way to compile a program
 * that includes this header), the AVX2 set is compiled for AVX2 all the same (a target
 * pragma) and used when the CPU has it (tfe__ksimd(), checked per tile): a program built
 * once runs the vector transposes wherever they exist. tfe__kportable = 1 forces the
 * portable loops (tests). */
TFE_GLOBAL int tfe__kportable = 0;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX512F__) || defined(__AVX2__)
#else
TFE_INTERNAL bool tfe__ksimd(void) { return !tfe__kportable && __builtin_cpu_supports("avx2"); }
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
#endif
#if defined(__AVX512F__)
/* Registers r[i] (source rows) to c[j] (destination columns). */
TFE_INTERNAL void tfe__ktr8_regs(const __m512d *r, __m512d *c) {
  __m512d a[8], b[8];
  for (int i = 0; i < 8; i += 2) {
    a[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);     /* r_i[0] r_i+1[0] r_i[2] r_i+1[2] ... */
    a[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
  }
  const __m512i p1 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i p2 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  for (int h = 0; h < 8; h += 4) { /* rows h..h+3: b holds 4-row groups of columns */
    b[h + 0] = _mm512_permutex2var_pd(a[h + 0], p1, a[h + 2]);
    b[h + 1] = _mm512_permutex2var_pd(a[h + 1], p1, a[h + 3]);
    b[h + 2] = _mm512_permutex2var_pd(a[h + 0], p2, a[h + 2]);
    b[h + 3] = _mm512_permutex2var_pd(a[h + 1], p2, a[h + 3]);
  }
  const __m512i q1 = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
  const __m512i q2 = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  for (int k = 0; k < 4; k++) {
    c[k] = _mm512_permutex2var_pd(b[k], q1, b[k + 4]);
    c[k + 4] = _mm512_permutex2var_pd(b[k], q2, b[k + 4]);
  }
}
/* 8 gathered elements s[tab[0..7]] (AVX-512 gather). */
TFE_INTERNAL tfe__kv8 tfe__kv8_gather(const double *s, const int64_t *tab) {
  return _mm512_i64gather_pd(_mm512_loadu_si512((const void *)tab), s, 8);
}
#else /* AVX2: a line is two 256-bit halves */
TFE_INTERNAL tfe__kv8 tfe__kv8_ld(const double *p) { tfe__kv8 v = {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; return v; }
TFE_INTERNAL void tfe__kv8_st(double *p, tfe__kv8 v) { _mm256_storeu_pd(p, v.lo); _mm256_storeu_pd(p + 4, v.hi); }
TFE_INTERNAL void tfe__kv8_nt(double *p, tfe__kv8 v) { _mm256_stream_pd(p, v.lo); _mm256_stream_pd(p + 4, v.hi); }
TFE_INTERNAL tfe__kv8 tfe__kv8_set1(double x) { tfe__kv8 v = {_mm256_set1_pd(x), _mm256_set1_pd(x)}; return v; }
TFE__KV8_BIN(add, _mm256_add_pd)
TFE__KV8_BIN(sub, _mm256_sub_pd)
TFE__KV8_BIN(mul, _mm256_mul_pd)
TFE__KV8_BIN(div, _mm256_div_pd)
TFE__KV8_BIN(xor, _mm256_xor_pd)
#undef TFE__KV8_BIN
TFE_INTERNAL tfe__kv8 tfe__kv8_neg(tfe__kv8 x) { return tfe__kv8_xor(x, tfe__kv8_set1(-0.0)); }
/* One 4x4 block: rows r0..r3 to columns c[0..3]. */
TFE_INTERNAL void tfe__ktr4_regs(__m256d r0, __m256d r1, __m256d r2, __m256d r3, __m256d *c) {
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1); /* r0[0] r1[0] r0[2] r1[2] */
  __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  c[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  c[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  c[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  c[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
/* Registers r[i] (source rows) to c[j] (destination columns): four 4x4 blocks; column j < 4
 * takes its top half from rows 0-3 and its bottom half from rows 4-7. */
TFE_INTERNAL void tfe__ktr8_regs(const tfe__kv8 *r, tfe__kv8 *c) {
  __m256d q[4][4];
  tfe__ktr4_regs(r[0].lo, r[1].lo, r[2].lo, r[3].lo, q[0]); /* rows 0-3, cols 0-3 */
  tfe__ktr4_regs(r[4].lo, r[5].lo, r[6].lo, r[7].lo, q[1]); /* rows 4-7, cols 0-3 */
  tfe__ktr4_regs(r[0].hi, r[1].hi, r[2].hi, r[3].hi, q[2]); /* rows 0-3, cols 4-7 */
  tfe__ktr4_regs(r[4].hi, r[5].hi, r[6].hi, r[7].hi, q[3]); /* rows 4-7, cols 4-7 */
  for (int j = 0; j < 4; j++) {
    c[j].lo = q[0][j]; c[j].hi = q[1][j];
    c[j + 4].lo = q[2][j]; c[j + 4].hi = q[3][j];
  }
}
/* 8 gathered elements s[tab[0..7]] (two AVX2 gathers of 4). */
TFE_INTERNAL tfe__kv8 tfe__kv8_gather(const double *s, const int64_t *tab) {
  tfe__kv8 v = {_mm256_i64gather_pd(s, _mm256_loadu_si256((const __m256i *)(const void *)tab), 8),
                _mm256_i64gather_pd(s, _mm256_loadu_si256((const __m256i *)(const void *)(tab + 4)), 8)};
  return v;
}
#endif
/* A row of blocks: jb = 0, 8, .. < m1, source row i at srow[i] + jb, destination column j
 * at d + j*ldd (one call per row of blocks, so that a baseline build calling these across
 * the target boundary pays one call per row). */
TFE_INTERNAL void tfe__ktr8p_row(double *d, int64_t ldd, const double *const *srow, int64_t m1, bool nt) {
  for (int64_t jb = 0; jb < m1; jb += 8) {
    tfe__kv8 r[8], c[8];
    for (int i = 0; i < 8; i++) r[i] = tfe__kv8_ld(srow[i] + jb);
    tfe__ktr8_regs(r, c);
    double *q = d + jb * ldd;
    if (nt) for (int j = 0; j < 8; j++) tfe__kv8_nt(q + j * ldd, c[j]);
    else for (int j = 0; j < 8; j++) tfe__kv8_st(q + j * ldd, c[j]);
  }
}
/* Strided form: source row i at s + i*lds. */
TFE_INTERNAL void tfe__ktr8s_row(double *d, int64_t ldd, const double *s, int64_t lds, int64_t m1, bool nt) {
  const double *srow[8];
  for (int i = 0; i < 8; i++) srow[i] = s + i * lds;
  tfe__ktr8p_row(d, ldd, srow, m1, nt);
}
/* Pointer form: one pointer per source row and destination column (any layout). */
TFE_INTERNAL void tfe__ktr8(void *const *dcol, const void *const *srow, bool nt) {
  tfe__kv8 r[8], c[8];
  for (int i = 0; i < 8; i++) r[i] = tfe__kv8_ld((const double *)srow[i]);
  tfe__ktr8_regs(r, c);
  if (nt) for (int j = 0; j < 8; j++) tfe__kv8_nt((double *)dcol[j], c[j]);
  else for (int j = 0; j < 8; j++) tfe__kv8_st((double *)dcol[j], c[j]);
}
/* 4-byte kinds (f32 i32, 4-byte tropical): a block is 16 source rows x 8 columns, so that
 * each destination column is one whole 64-byte line (two AVX2 halves, stored together: a
 * streamed line is never left half written). Before these, such transposes ran the portable
 * loops at 2.3-4x memcpy on the Zen 3 (bench_permute_sweep). AVX2 also in AVX-512 builds. */
TFE_INTERNAL void tfe__ktr8x4_regs(const __m256 *r, __m256 *c) { /* an 8x8 block of floats */
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]); /* r_i[0] r_i+1[0] r_i[1] r_i+1[1] | [4] [5] */
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int h = 0; h < 8; h += 4) { /* u[h+k]: column k (low lane) and k+4 (high) of rows h..h+3 */
    u[h + 0] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44);
    u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
    u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
    u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
  }
  for (int k = 0; k < 4; k++) {
    c[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    c[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}
/* One 16x8 block: source row i at srow[i], destination column j at dcol[j]. */
TFE_INTERNAL void tfe__ktr4(float *const *dcol, const float *const *srow, bool nt) {
  __m256 r[8], lo[8], hi[8];
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(srow[i]);
  tfe__ktr8x4_regs(r, lo);
  for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(srow[8 + i]);
  tfe__ktr8x4_regs(r, hi);
  for (int j = 0; j < 8; j++) {
    if (nt) { _mm256_stream_ps(dcol[j], lo[j]); _mm256_stream_ps(dcol[j] + 8, hi[j]); }
    else { _mm256_storeu_ps(dcol[j], lo[j]); _mm256_storeu_ps(dcol[j] + 8, hi[j]); }
  }
}
/* The last 8 rows of a 4-byte tile with fewer than 16 left (a destination run of 15): 8x8
 * blocks, half-line columns with normal stores. Strided rows, columns jb < m1 (m1 % 8 == 0). */
TFE_INTERNAL void tfe__ktr4h_row(float *d, int64_t ldd, const float *s, int64_t lds, int64_t m1) {
  for (int64_t jb = 0; jb < m1; jb += 8) {
    __m256 r[8], c[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + i * lds + jb);
    tfe__ktr8x4_regs(r, c);
    for (int j = 0; j < 8; j++) _mm256_storeu_ps(d + (jb + j) * ldd, c[j]);
  }
}
/* 16-byte kinds (c128): a block is 4 rows x 4 columns of 16-byte elements, each row and
 * column one 64-byte line; an element is a 128-bit lane. Row i in r[2i] (elements 0-1) and
 * r[2i+1] (2-3); column j goes to c[2j] (rows 0-1) and c[2j+1] (rows 2-3). */
TFE_INTERNAL void tfe__ktr16(double *const *dcol, const double *const *srow, bool nt) {
  __m256d r[8], c[8];
  for (int i = 0; i < 4; i++) { r[2 * i] = _mm256_loadu_pd(srow[i]); r[2 * i + 1] = _mm256_loadu_pd(srow[i] + 4); }
  for (int h = 0; h < 2; h++) { /* columns 2h and 2h+1 come from the h-th half of each row */
    c[4 * h + 0] = _mm256_permute2f128_pd(r[h], r[2 + h], 0x20);
    c[4 * h + 1] = _mm256_permute2f128_pd(r[4 + h], r[6 + h], 0x20);
    c[4 * h + 2] = _mm256_permute2f128_pd(r[h], r[2 + h], 0x31);
    c[4 * h + 3] = _mm256_permute2f128_pd(r[4 + h], r[6 + h], 0x31);
  }
  for (int j = 0; j < 4; j++) {
    if (nt) { _mm256_stream_pd(dcol[j], c[2 * j]); _mm256_stream_pd(dcol[j] + 4, c[2 * j + 1]); }
    else { _mm256_storeu_pd(dcol[j], c[2 * j]); _mm256_storeu_pd(dcol[j] + 4, c[2 * j + 1]); }
  }
}
/* Any size with register blocks (tfe__krb): one block, pointers per source row (tfe__krb of
 * them) and destination column (tfe__kcb). */
TFE_INTERNAL void tfe__ktrx(size_t es, void *const *dcol, const void *const *srow, bool nt) {
  if (es == 8) { tfe__ktr8(dcol, srow, nt); return; }
  if (es == 4) {
    float *dc[8];
    const float *sr[16];
    for (int j = 0; j < 8; j++) dc[j] = (float *)dcol[j];
    for (int i = 0; i < 16; i++) sr[i] = (const float *)srow[i];
    tfe__ktr4(dc, sr, nt);
    return;
  }
  double *dc[4];
  const double *sr[4];
  for (int j = 0; j < 4; j++) { dc[j] = (double *)dcol[j]; sr[j] = (const double *)srow[j]; }
  tfe__ktr16(dc, sr, nt);
}
/* A row of blocks of es-byte elements: columns jb = 0, cb, .. < m1 (cb = tfe__kcb), source
 * row i at srow[i] + jb, destination column j at d + j*ldd (ldd in elements). One call per
 * row of blocks (see tfe__ktr8p_row). */
TFE_INTERNAL void tfe__ktrx_row(size_t es, void *d, int64_t ldd, const void *const *srow, int64_t m1, bool nt) {
  if (es == 8) {
    const double *sr[8];
    for (int i = 0; i < 8; i++) sr[i] = (const double *)srow[i];
    tfe__ktr8p_row((double *)d, ldd, sr, m1, nt);
    return;
  }
  if (es == 4) { /* typed pointers built once per block, straight into the kernel */
    const float *sr[16];
    float *dc[8];
    for (int64_t jb = 0; jb < m1; jb += 8) {
      for (int i = 0; i < 16; i++) sr[i] = (const float *)srow[i] + jb;
      for (int j = 0; j < 8; j++) dc[j] = (float *)d + (jb + j) * ldd;
      tfe__ktr4(dc, sr, nt);
    }
    return;
  }
  const double *sr[4];
  double *dc[4];
  for (int64_t jb = 0; jb < m1; jb += 4) { /* 16-byte elements: two doubles each */
    for (int i = 0; i < 4; i++) sr[i] = (const double *)srow[i] + 2 * jb;
    for (int j = 0; j < 4; j++) dc[j] = (double *)d + 2 * (jb + j) * ldd;
    tfe__ktr16(dc, sr, nt);
  }
}
TFE_INTERNAL tfe__kv8 tfe__kfu_apply(int op, tfe__kv8 x, tfe__kv8 y) {
  switch (op) {
  case TFE__KFU_NEG: return tfe__kv8_neg(x); /* flip the sign bit: -x exactly, -0 included */
  case TFE__KFU_SQUARE: return tfe__kv8_mul(x, x);
  case TFE__KFU_ADD: return tfe__kv8_add(x, y);
  case TFE__KFU_SUB: return tfe__kv8_sub(x, y);
  case TFE__KFU_MUL: return tfe__kv8_mul(x, y);
  case TFE__KFU_DIV: return tfe__kv8_div(x, y);
  default: return x;
  }
}
/* An 8x8 block of a transposed f64 input with the op fused: destination column j (8
 * elements at d + j*ldd) = op(column j of the transposed block, zip's other input at
 * o + j*ldo read in place; o NULL for a map). `tfirst`: the transposed input is the op's
 * first operand. Aligned columns are streamed past the cache when nt (the caller fences). */
TFE_INTERNAL void tfe__ktr8f(double *d, int64_t ldd, const double *s, int64_t lds, const double *o,
                             int64_t ldo, int op, bool tfirst, bool nt) {
  tfe__kv8 r[8], c[8];
  for (int i = 0; i < 8; i++) r[i] = tfe__kv8_ld(s + i * lds);
  tfe__ktr8_regs(r, c);
  for (int j = 0; j < 8; j++) {
    tfe__kv8 y = o ? tfe__kv8_ld(o + j * ldo) : c[j];
    tfe__kv8 v = tfirst ? tfe__kfu_apply(op, c[j], y) : tfe__kfu_apply(op, y, c[j]);
    double *q = d + j * ldd;
    if (nt && !((uintptr_t)q & 63)) tfe__kv8_nt(q, v);
    else tfe__kv8_st(q, v);
  }
}
/* One element of a fused op (the heads and tails of tfe__kfu_row). */
TFE_INTERNAL double tfe__kfu_apply1(int op, double x, double y) {
  switch (op) {
  case TFE__KFU_NEG: return -x;
  case TFE__KFU_SQUARE: return x * x;
  case TFE__KFU_ADD: return x + y;
  case TFE__KFU_SUB: return x - y;
  case TFE__KFU_MUL: return x * y;
  case TFE__KFU_DIV: return x / y;
  default: return x;
  }
}
/* d[i] = op(x[i], y[i]) for i < n, where an input with xb / yb set is one value broadcast
 * (stride 0: the operands of an outer product); the 64-byte-aligned middle of d is
 * streamed past the cache (the caller fences). One pass: no buffer, no read of d. */
TFE_INTERNAL void tfe__kfu_row(double *d, int64_t n, const double *x, bool xb, const double *y, bool yb, int op) {
  int64_t i = 0;
  for (; i < n && ((uintptr_t)(d + i) & 63); i++) d[i] = tfe__kfu_apply1(op, x[xb ? 0 : i], y[yb ? 0 : i]);
  tfe__kv8 bx = tfe__kv8_set1(x[0]), by = tfe__kv8_set1(y[0]);
  for (; i + 8 <= n; i += 8) {
    tfe__kv8 vx = xb ? bx : tfe__kv8_ld(x + i), vy = yb ? by : tfe__kv8_ld(y + i);
    tfe__kv8_nt(d + i, tfe__kfu_apply(op, vx, vy));
  }
  for (; i < n; i++) d[i] = tfe__kfu_apply1(op, x[xb ? 0 : i], y[yb ? 0 : i]);
}
/* The partial lines at the ends of a streamed run: 8-byte streaming stores where d and the
 * length allow (a normal store reads the line first, and the line's other part belongs to
 * another run: reverse_15d_3's 1944-byte columns wrote 8.3 ms of 109 MiB with normal edge
 * stores, 5.5 with streamed ones, 5.1 with their edges left out; whole permutation 1.44-1.52
 * -> 1.16x memcpy on a Zen 3). Only on AMD by default: on the Xeon host the same
 * permutation measured 1.37 / 1.42x streamed against 1.30 / 1.39x normal. Else memcpy. */
TFE_INTERNAL void tfe__kstream_edge(char *d, const char *s, size_t bytes) {
  if (!tfe__kon_amd(tfe__kedge_nt) || ((uintptr_t)d & 7) || (bytes & 7)) { memcpy(d, s, bytes); return; }
  for (size_t i = 0; i < bytes; i += 8) {
    long long x;
    memcpy(&x, s + i, 8);
    _mm_stream_si64((long long *)(void *)(d + i), x);
  }
}
/* memcpy that streams dst past the cache: the 64-byte-aligned middle in whole lines, the
 * edges through tfe__kstream_edge (the caller issues tfe__ksfence when done). */
TFE_INTERNAL void tfe__kstream_simd(char *d, const char *s, size_t bytes) {
  size_t head = (size_t)(-(uintptr_t)d & 63);
  if (head > bytes) head = bytes;
  tfe__kstream_edge(d, s, head);
  d += head; s += head; bytes -= head;
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64)
    tfe__kv8_nt((double *)(void *)d, tfe__kv8_ld((const double *)(const void *)s));
  tfe__kstream_edge(d, s, bytes);
}
/* d[i] = s[i*lds] for i < n, streamed: the 64-byte-aligned middle of d in whole lines
 * gathered 8 at a time, the partial lines at its ends through tfe__kstream_edge (the
 * caller fences). The destination columns of a tile narrower than 8 (the 3-way
 * de-interleave of a cyclic shift of 3s), which element-wise normal stores read before
 * writing. */
TFE_INTERNAL void tfe__kcol_simd(double *d, const double *s, int64_t lds, int64_t n) {
  int64_t i = 0;
  double e[8];
  if ((uintptr_t)d & 7) { /* not element-aligned (a packed struct's field): no whole lines */
    for (; i < n; i++) d[i] = s[i * lds];
    return;
  }
  int64_t h = (int64_t)((-(uintptr_t)d & 63) / sizeof(double));
  for (; i < h && i < n; i++) e[i] = s[i * lds];
  tfe__kstream_edge((char *)d, (const char *)e, (size_t)i * sizeof(double));
  for (; i + 8 <= n; i += 8) { /* (scalar loads: AVX2 gathers measured 1.76x memcpy on Zen 3) */
    const double *q = s + i * lds;
    for (int k = 0; k < 8; k++) e[k] = q[k * lds];
    tfe__kv8_nt(d + i, tfe__kv8_ld(e));
  }
  int64_t t = i;
  for (; i < n; i++) e[i - t] = s[i * lds];
  tfe__kstream_edge((char *)(d + t), (const char *)e, (size_t)(n - t) * sizeof(double));
}
/* d[i] = s[tab[i]] for i < n through vector gathers (see tfe__kgather8). */
TFE_INTERNAL void tfe__kgather8_simd(double *d, const double *s, const int64_t *tab, int64_t n, bool nt) {
  int64_t i = 0;
  if (nt) for (; i < n && ((uintptr_t)(d + i) & 63); i++) d[i] = s[tab[i]];
  for (; i + 8 <= n; i += 8) {
    tfe__kv8 v = tfe__kv8_gather(s, tab + i);
    if (nt) tfe__kv8_nt(d + i, v); else tfe__kv8_st(d + i, v);
  }
  for (; i < n; i++) d[i] = s[tab[i]];
}
#if defined(TFE__KSIMD_PRAGMA)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
TFE_INTERNAL void tfe__ksfence(void) { _mm_sfence(); }
#else
TFE_INTERNAL void tfe__ksfence(void) {}
#endif

/* Outputs above this many bytes are written with streaming stores where aligned (they would
 * not stay in cache anyway, and a normal store first reads the line it writes: a third
 * stream of memory traffic). */
TFE_GLOBAL int64_t tfe__knt_min = (int64_t)16 << 20;

/* memcpy that streams the 64-byte-aligned middle of dst past the cache (the caller issues
 * tfe__ksfence when done). Without the vector kernels: plain memcpy. */
TFE_INTERNAL void tfe__kstream(void *dst, const void *src, size_t bytes) {
#if TFE__KHAVE_TR8
  if (tfe__ksimd()) { tfe__kstream_simd((char *)dst, (const char *)src, bytes); return; }
#endif
  memcpy(dst, src, bytes);
}

/* d[i] = s[tab[i]] for i < n, 8-byte elements moved as bits: vector gathers of 8, stores
 * streamed past the cache where d is 64-byte aligned when nt (the caller fences). Returns
 * false without the vector kernels (the caller runs its scalar loop). */
/* Vector gathers: 0 where they measured faster on Zen 5 (`vec`: copies through gather
 * tiles), 1 always, -1 never. (Scalar loads won for map/zip column caches and tn_light's
 * table blocks; gathers for permutations of 3s.) */
TFE_GLOBAL int tfe__kvgather = 0;
TFE_INTERNAL bool tfe__kgather8(void *dst, const void *src, const int64_t *tab, int64_t n, bool nt, bool vec) {
#if TFE__KHAVE_TR8
  if (tfe__kvgather < 0 || (tfe__kvgather == 0 && !vec) || !tfe__ksimd()) return false;
  tfe__kgather8_simd((double *)dst, (const double *)src, tab, n, nt);
  return true;
#else
  (void)dst; (void)src; (void)tab; (void)n; (void)nt; (void)vec;
  return false;
#endif
}
#define TFE_TEMPLATE <tenferro/kernel/kernel_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- the dtype-tagged layer --------------------------------------------------------------- */
TFE_INTERNAL tfe_status tfe__dyn_same(const tfe_dyn *a, const tfe_dyn *b, const char *where,
                                      const char *an, const char *bn) {
  if (!a || !b) return tfe__fail(TFE_ERR_NULL, where, "argument '%s' is NULL", !a ? an : bn);
  if (a->dtype != b->dtype)
    return tfe__fail(TFE_ERR_DTYPE, where, "%s is %s but %s is %s", an, tfe_dtype_name(a->dtype),
                     bn, tfe_dtype_name(b->dtype));
  return TFE_OK;
}
TFE_API tfe_status tfe_copy_dyn(const tfe_dyn *dst, const tfe_dyn *src) {
  TFE_TRY(tfe__dyn_same(dst, src, __func__, "destination", "source"));
  switch (dst->dtype) {
#define TFE__DYN_COPY(s, T, R, alg, cplx, flt, DT) \
  case DT: { tfe_view_##s d = {(T *)dst->data, dst->lay, dst->conj}, x = {(T *)src->data, src->lay, src->conj}; \
             return tfe_copy_##s(&d, &x); }
    TFE_KINDS(TFE__DYN_COPY)
#undef TFE__DYN_COPY
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  }
}
TFE_API tfe_status tfe_map_dyn(const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op, const void *param) {
  TFE_TRY(tfe__dyn_same(dst, src, __func__, "destination", "source"));
  switch (dst->dtype) {
#define TFE__DYN_MAP(s, T, R, alg, cplx, flt, DT) \
  case DT: { tfe_view_##s d = {(T *)dst->data, dst->lay, dst->conj}, x = {(T *)src->data, src->lay, src->conj}; \
             T p = param ? *(const T *)param : tfe_sr_one_##s(); return tfe_map_##s(&d, &x, op, p); }
    TFE_KINDS(TFE__DYN_MAP)
#undef TFE__DYN_MAP
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  }
}
TFE_API tfe_status tfe_zip_dyn(const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b, tfe_binop op) {
  TFE_TRY(tfe__dyn_same(dst, a, __func__, "destination", "first input"));
  TFE_TRY(tfe__dyn_same(dst, b, __func__, "destination", "second input"));
  switch (dst->dtype) {
#define TFE__DYN_ZIP(s, T, R, alg, cplx, flt, DT) \
  case DT: { tfe_view_##s d = {(T *)dst->data, dst->lay, dst->conj}, x = {(T *)a->data, a->lay, a->conj}, \
             y = {(T *)b->data, b->lay, b->conj}; return tfe_zip_##s(&d, &x, &y, op); }
    TFE_KINDS(TFE__DYN_ZIP)
#undef TFE__DYN_ZIP
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dst->dtype);
  }
}
#endif
