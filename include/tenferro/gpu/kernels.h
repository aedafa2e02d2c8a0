/* tenferro/gpu/kernels.h — gpu room, companion only: the source of the generated device kernels,
 * compiled by NVRTC at first use for each (device, element kind) and cached per device.
 *
 * One source serves the four float kinds: TFE_R is float or double, TFE_CPLX says whether an
 * element is a complex pair (stored interleaved, re then im, as C's _Complex). Two kernels:
 *   tfe_unary: C[o] = alpha * sum_s op(A[o, s]) + beta * C[o] over strided views, one thread
 *              per output element (grid-stride), an odometer over the summed labels. It is
 *              permute, reduce, trace (A's repeated labels folded into one stride), the
 *              anti-diagonal ops (C's repeats folded) and the packing copies of the GEMM path.
 *   tfe_perm2d: the same without summed labels (a copy: permute, the packing copies), 32-bit
 *              indices and offsets (exec.h sends larger copies to tfe_unary). Its plan (struct Q,
 *              the fourth argument; exec.h, tfe__gperm_plan) orders the labels x, y, rest: mode 1
 *              (A's fastest label is not C's) tiles TX x TY elements (at most 1024) of the
 *              flattened groups x (C's fastest labels, in C's order) and y (A's fastest, in A's
 *              order): loads along y, stores along x, through shared memory (two tiles in turn,
 *              one barrier per tile; the offsets of the tile's x and y indices are tables in
 *              shared memory); mode 0 (A and C share their fastest label) has no tile: x = C's
 *              labels in C's order. Each thread keeps the offsets of its four elements in
 *              registers (computed once per block); the rest labels are walked by the grid's y
 *              dimension, the offsets of a block's next 64 positions computed together (64
 *              threads, divisions by multiply-high with magic numbers from the host) into a
 *              table. Dynamic shared memory: the x/y tables, the rest table, then the tiles.
 *   tfe_scale: C[o] = beta * C[o] (beta == 0 writes zeros, never reads C).
 * The parameter block is passed by value (under 4 KiB); its layout is tfe__gpu_kparams in
 * tenferro_gpu.c. Split in pieces: ISO C guarantees string literals of 4095 bytes only. */
#ifndef TENFERRO_GPU_KERNELS_H
#define TENFERRO_GPU_KERNELS_H
#ifdef TFE__GPU_COMPANION

#define TFE__GPU_KMAXR 24 /* most labels of one side after size-1 labels are dropped */

static const char *const tfe__gpu_ksrc[] = {
    "typedef TFE_R R;\n"
    "#ifndef INFINITY\n"
    "#define INFINITY __int_as_float(0x7f800000)\n"
    "#endif\n"
    "#define MAXR 24\n"
    "#if TFE_CPLX\n"
    "struct T { R re, im; };\n"
    "__device__ __forceinline__ T mk(R re, R im) { T t; t.re = re; t.im = im; return t; }\n"
    "__device__ __forceinline__ T add(T a, T b) { return mk(a.re + b.re, a.im + b.im); }\n"
    "__device__ __forceinline__ T mul(T a, T b) { return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }\n"
    "__device__ __forceinline__ T cj(T a) { return mk(a.re, -a.im); }\n"
    "__device__ __forceinline__ T zero() { return mk(0, 0); }\n"
    "#else\n"
    "typedef R T;\n"
    "__device__ __forceinline__ T mk(R re, R im) { (void)im; return re; }\n"
    "__device__ __forceinline__ T add(T a, T b) { return a + b; }\n"
    "__device__ __forceinline__ T mul(T a, T b) { return a * b; }\n"
    "__device__ __forceinline__ T cj(T a) { return a; }\n"
    "__device__ __forceinline__ T zero() { return 0; }\n"
    "#endif\n",
    "struct P {\n"
    "  long long total, nsum_total;\n"
    "  int nout, nsum, beta_zero, conj, pj, pad;\n"
    "  double alpha_re, alpha_im, beta_re, beta_im;\n"
    "  long long dout[MAXR], sc[MAXR], sa[MAXR], dsum[MAXR], ssum[MAXR];\n"
    "};\n"
    "__device__ __forceinline__ void place(const P &p, long long i, long long &oc, long long &oa) {\n"
    "  oc = 0; oa = 0;\n"
    "  if (p.total <= 0x7fffffffLL) { /* 32-bit divisions: several times cheaper */\n"
    "    unsigned u = (unsigned)i;\n"
    "    for (int d = 0; d < p.nout; d++) {\n"
    "      unsigned n = (unsigned)p.dout[d], q = u % n;\n"
    "      u /= n;\n"
    "      oc += q * p.sc[d]; oa += q * p.sa[d];\n"
    "    }\n"
    "    return;\n"
    "  }\n"
    "  for (int d = 0; d < p.nout; d++) {\n"
    "    long long q = i % p.dout[d];\n"
    "    i /= p.dout[d];\n"
    "    oc += q * p.sc[d]; oa += q * p.sa[d];\n"
    "  }\n"
    "}\n"
    "__device__ __forceinline__ T fin(const P &p, T s, const T *c) {\n"
    "  T r = mul(mk((R)p.alpha_re, (R)p.alpha_im), s);\n"
    "  if (!p.beta_zero) r = add(r, mul(mk((R)p.beta_re, (R)p.beta_im), *c));\n"
    "  return r;\n"
    "}\n",
    "extern \"C\" __global__ void tfe_unary(T *c, const T *a, P p) {\n"
    "  long long step = (long long)gridDim.x * blockDim.x;\n"
    "  if (p.nsum == 0) { /* a copy: four elements per thread, their loads in flight together */\n"
    "    for (long long i0 = (long long)blockIdx.x * blockDim.x * 4 + threadIdx.x; i0 < p.total; i0 += 4 * step) {\n"
    "      long long oc[4], oa;\n"
    "      T v[4];\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < 4; k++) {\n"
    "        long long i = i0 + (long long)k * blockDim.x;\n"
    "        if (i < p.total) { place(p, i, oc[k], oa); v[k] = a[oa]; }\n"
    "      }\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < 4; k++)\n"
    "        if (i0 + (long long)k * blockDim.x < p.total) c[oc[k]] = fin(p, p.conj ? cj(v[k]) : v[k], c + oc[k]);\n"
    "    }\n"
    "    return;\n"
    "  }\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += step) {\n"
    "    long long oc, oa;\n"
    "    place(p, i, oc, oa);\n"
    "    T s = zero();\n"
    "    if (p.nsum == 0) {\n"
    "      s = p.conj ? cj(a[oa]) : a[oa];\n"
    "    } else if (p.nsum_total > 0) {\n"
    "      long long idx[MAXR];\n"
    "      for (int d = 0; d < p.nsum; d++) idx[d] = 0;\n"
    "      const T *x = a + oa;\n"
    "      for (long long t = 0; t < p.nsum_total; t++) {\n"
    "        s = add(s, p.conj ? cj(*x) : *x);\n"
    "        for (int d = 0; d < p.nsum; d++) {\n"
    "          x += p.ssum[d];\n"
    "          if (++idx[d] < p.dsum[d]) break;\n"
    "          x -= p.ssum[d] * p.dsum[d];\n"
    "          idx[d] = 0;\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "    c[oc] = fin(p, s, c + oc);\n"
    "  }\n"
    "}\n",
    "#ifndef DYN_SMEM\n"
    "#define DYN_SMEM(x) extern __shared__ __align__(16) unsigned char x[]\n"
    "#endif\n"
    "struct Q {\n"
    "  long long px, py, ntx, rest;\n"
    "  int mode, nx, ny, TX, TY, wide, small, plain, tab, tstride;\n"
    "  unsigned mg[MAXR], sh[MAXR];\n"
    "};\n"
    "__device__ __forceinline__ unsigned fdiv(unsigned n, unsigned m, unsigned s) { return (__umulhi(n, m) + n) >> s; }\n"
    "template <typename I> /* g < 2^31: divisions by multiply-high (magic numbers from the host) */\n"
    "__device__ __forceinline__ void dec(const P &p, const Q &q, unsigned u, int d0, int d1, I &oc, I &oa) {\n"
    "  oc = 0; oa = 0;\n"
    "  for (int d = d0; d < d1; d++) {\n"
    "    unsigned v = d + 1 < d1 ? fdiv(u, q.mg[d], q.sh[d]) : 0u, r = u - v * (unsigned)p.dout[d];\n"
    "    oc += (I)r * (I)p.sc[d]; oa += (I)r * (I)p.sa[d];\n"
    "    u = v;\n"
    "  }\n"
    "}\n"
    "__device__ __forceinline__ T wr(const P &p, const Q &q, T v, const T *cp) {\n"
    "  return q.plain ? v : fin(p, p.conj ? cj(v) : v, cp);\n"
    "}\n",
    /* tfe_perm2d: see the head of this file and exec.h (tfe__gpu_perm_plan) */
    "template <typename I>\n"
    "__device__ __forceinline__ void perm_run(T *c, const T *a, const P &p, const Q &q, unsigned char *sm) {\n"
    "  const int t = threadIdx.x, nt = blockDim.x, nx = q.nx, nxy = q.nx + q.ny, TX = q.TX, TY = q.TY;\n"
    "  const unsigned bx = (blockIdx.x % (unsigned)q.ntx) * TX, by = (blockIdx.x / (unsigned)q.ntx) * TY;\n"
    "  const int ex = (int)(q.px - bx < TX ? q.px - bx : TX), ey = (int)(q.py - by < TY ? q.py - by : TY);\n"
    "  I la[4], lc[4];\n"
    "  int si[4], so[4];\n"
    "  unsigned okl = 0, oks = 0;\n"
    "  if (q.mode == 0) { /* no tile: each thread's elements along C's order, offsets once per block */\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 4; k++) {\n"
    "      const int e = t + k * nt;\n"
    "      la[k] = 0, lc[k] = 0, si[k] = 0, so[k] = 0;\n"
    "      if (e < ex) { dec<I>(p, q, bx + e, 0, nx, lc[k], la[k]); okl |= 1u << k; }\n"
    "    }\n"
    "    oks = okl;\n"
    "  } else { /* a tile: offset tables of its x and y indices, then each thread's four places */\n"
    "    I *xc = (I *)sm, *xa = xc + TX, *yc = xa + TX, *ya = yc + TY;\n"
    "    for (int i = t; i < TX + TY; i += nt) {\n"
    "      I oc, oa;\n"
    "      if (i < TX) { dec<I>(p, q, bx + i, 0, nx, oc, oa); xc[i] = oc; xa[i] = oa; }\n"
    "      else { dec<I>(p, q, by + (i - TX), nx, nxy, oc, oa); yc[i - TX] = oc; ya[i - TX] = oa; }\n"
    "    }\n"
    "    __syncthreads();\n"
    "    const int TP = TY | 1, ne = TX * TY;\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 4; k++) {\n"
    "      const int e = t + k * nt;\n"
    "      int lx = e / TY, ly = e - lx * TY; /* loads: y fastest (A's fast labels) */\n"
    "      la[k] = 0, lc[k] = 0, si[k] = 0, so[k] = 0;\n"
    "      if (e < ne && lx < ex && ly < ey) { la[k] = xa[lx] + ya[ly]; si[k] = lx * TP + ly; okl |= 1u << k; }\n"
    "      ly = e / TX, lx = e - ly * TX; /* stores: x fastest (C's fast labels) */\n"
    "      if (e < ne && lx < ex && ly < ey) { lc[k] = xc[lx] + yc[ly]; so[k] = lx * TP + ly; oks |= 1u << k; }\n"
    "    }\n"
    "  }\n"
    "  I *rt = (I *)(sm + q.tab); /* the offsets of the block's next 64 positions of the rest */\n"
    "  T *tile = (T *)(sm + q.tab + 64 * 2 * sizeof(I));\n"
    "  const unsigned gy = gridDim.y, R = (unsigned)q.rest;\n"
    "  int buf = 0;\n"
    "  for (unsigned rb = blockIdx.y; rb < R; rb += 64u * gy) {\n"
    "    const bool one = rb + gy >= R; /* one position left: no table (no barriers) */\n"
    "    I r1c = 0, r1a = 0;\n"
    "    if (one) dec<I>(p, q, rb, nxy, p.nout, r1c, r1a);\n"
    "    else {\n"
    "      __syncthreads();\n"
    "      for (int i = t; i < 64; i += nt) /* blocks of 32 threads too */\n"
    "        if (rb + i * gy < R) dec<I>(p, q, rb + i * gy, nxy, p.nout, rt[2 * i], rt[2 * i + 1]);\n"
    "      __syncthreads();\n"
    "    }\n"
    "    const unsigned nj = one ? 1u : (R - rb + gy - 1) / gy < 64u ? (R - rb + gy - 1) / gy : 64u;\n"
    "    for (unsigned j = 0; j < nj; j++) {\n"
    "      const T *ab = a + (one ? r1a : rt[2 * j + 1]);\n"
    "      T *cb = c + (one ? r1c : rt[2 * j]);\n"
    "      T v[4];\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < 4; k++) /* the loads first, all in flight */\n"
    "        if (okl >> k & 1) v[k] = ab[la[k]];\n"
    "      if (q.mode == 0) {\n"
    "#pragma unroll\n"
    "        for (int k = 0; k < 4; k++)\n"
    "          if (oks >> k & 1) { T *cp = cb + lc[k]; *cp = wr(p, q, v[k], cp); }\n"
    "        continue;\n"
    "      }\n"
    "      T *tb = tile + buf * q.tstride; /* two tiles in turn: one barrier per tile */\n"
    "      buf ^= 1;\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < 4; k++)\n"
    "        if (okl >> k & 1) tb[si[k]] = v[k];\n"
    "      __syncthreads();\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < 4; k++)\n"
    "        if (oks >> k & 1) { T *cp = cb + lc[k]; *cp = wr(p, q, tb[so[k]], cp); }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256, 4) tfe_perm2d(T *c, const T *a, P p, Q q) {\n"
    "  DYN_SMEM(sm);\n"
    "  perm_run<int>(c, a, p, q, sm); /* 32-bit offsets and indices (exec.h sends the others to tfe_unary) */\n"
    "}\n",
    "extern \"C\" __global__ void tfe_scale(T *c, P p) {\n"
    "  long long step = (long long)gridDim.x * blockDim.x;\n"
    "  T b = mk((R)p.beta_re, (R)p.beta_im);\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += step) {\n"
    "    long long oc, oa;\n"
    "    place(p, i, oc, oa);\n"
    "    c[oc] = p.beta_zero ? zero() : mul(b, c[oc]);\n"
    "  }\n"
    "}\n"};

/* ---- the elementwise kernels (the backend's elementwise slot: tfe_ew_desc, kernel/kernel.h) ----
 * The op functions are generated from the tables below, indexed by the kernel room's own enums
 * (tfe_unop, tfe_binop; folds and transforms of kernel/math.h), so that a code means the same
 * operation on the CPU and on the device; tfe__gpu_source() writes them out as switch
 * statements (and #defines of the codes) between the pieces above and the kernels below. Each
 * entry is an expression of x (and y, or p the parameter of pow) in the kernel's type T: the
 * real form (float, double) and the complex form (interleaved pairs, T = struct {re, im}).
 * Complex functions follow C99 Annex G and glibc (branch cuts on the negative real axis with
 * the sign of a zero imaginary part kept: csqrt(-4 - 0i) = -2i, clog(-1 - 0i) = -i pi;
 * cpow(x, p) = cexp(p clog(x)), as glibc computes it). NULL: not defined for that form (the
 * slot refuses it before launching, as the CPU does). */
typedef struct tfe__gpu_opsrc { const char *real, *cplx; } tfe__gpu_opsrc;
static const tfe__gpu_opsrc tfe__gpu_unop_src[TFE_UN_COUNT_] = {
    [TFE_UN_NEG] = {"-x", "mk(-x.re, -x.im)"},
    [TFE_UN_CONJ] = {"x", "cj(x)"},
    [TFE_UN_ABS] = {"fabs(x)", "mk(hypot(x.re, x.im), (R)0)"},
    [TFE_UN_REAL] = {"x", "mk(x.re, (R)0)"},
    [TFE_UN_IMAG] = {"(R)0", "mk(x.im, (R)0)"},
    [TFE_UN_SQRT] = {"sqrt(x)", "c_sqrt(x)"},
    [TFE_UN_EXP] = {"exp(x)", "c_exp(x)"},
    [TFE_UN_LOG] = {"log(x)", "c_log(x)"},
    [TFE_UN_SIN] = {"sin(x)", "c_sin(x)"},
    [TFE_UN_COS] = {"cos(x)", "c_cos(x)"},
    [TFE_UN_TANH] = {"tanh(x)", "c_tanh(x)"},
    [TFE_UN_POW] = {"pow(x, p)", "c_exp(mul(p, c_log(x)))"},
    [TFE_UN_RECIP] = {"(R)1 / x", "c_div(mk((R)1, (R)0), x)"},
    [TFE_UN_SQUARE] = {"x * x", "mul(x, x)"},
};
static const tfe__gpu_opsrc tfe__gpu_binop_src[TFE_BIN_COUNT_] = {
    [TFE_BIN_ADD] = {"x + y", "add(x, y)"},
    [TFE_BIN_SUB] = {"x - y", "mk(x.re - y.re, x.im - y.im)"},
    [TFE_BIN_MUL] = {"x * y", "mul(x, y)"},
    [TFE_BIN_DIV] = {"x / y", "c_div(x, y)"},
    [TFE_BIN_MAX] = {"(x > y || x != x) ? x : y", NULL}, /* NaN propagates, as on the CPU */
    [TFE_BIN_MIN] = {"(x < y || x != x) ? x : y", NULL},
};
/* Reductions: the fold (TFE__KF_*), the transform before it (TFE__KP_*), as reduce_tpl.h. */
static const tfe__gpu_opsrc tfe__gpu_fold_src[4] = {
    [TFE__KF_ADD] = {"a + b", "add(a, b)"},
    [TFE__KF_MUL] = {"a * b", "mul(a, b)"},
    [TFE__KF_MAX] = {"(a > b || a != a) ? a : b", "a.re >= b.re ? a : b"}, /* complex: norminf only */
    [TFE__KF_MIN] = {"(a < b || a != a) ? a : b", "a.re <= b.re ? a : b"},
};
static const tfe__gpu_opsrc tfe__gpu_pre_src[3] = {
    [TFE__KP_NONE] = {"x", "x"},
    [TFE__KP_ABS] = {"fabs(x)", "mk(hypot(x.re, x.im), (R)0)"},
    [TFE__KP_ABS2] = {"x * x", "mk(x.re * x.re + x.im * x.im, (R)0)"},
};

/* Complex helpers (C99 Annex G forms, as glibc for finite arguments). */
static const char *const tfe__gpu_ksrc_cmath =
    "#if TFE_CPLX\n"
    "__device__ T c_div(T a, T b) {\n" /* Smith's algorithm */
    "  R c = b.re, d = b.im;\n"
    "  if (fabs(c) >= fabs(d)) {\n"
    "    if (c == 0) return mk(a.re / c, a.im / c);\n"
    "    R r = d / c, den = c + d * r;\n"
    "    return mk((a.re + a.im * r) / den, (a.im - a.re * r) / den);\n"
    "  }\n"
    "  R r = c / d, den = c * r + d;\n"
    "  return mk((a.re * r + a.im) / den, (a.im * r - a.re) / den);\n"
    "}\n"
    "__device__ T c_sqrt(T z) {\n"
    "  R x = z.re, y = z.im;\n"
    "  if (x == 0 && y == 0) return mk((R)0, y);\n"
    "  if (isinf(y)) return mk((R)INFINITY, y);\n"
    "  R t = sqrt((fabs(x) + hypot(x, y)) * (R)0.5);\n"
    "  if (x >= 0) return mk(t, y / (2 * t));\n"
    "  return mk(fabs(y) / (2 * t), copysign(t, y));\n"
    "}\n"
    "__device__ T c_exp(T z) {\n"
    "  if (isinf(z.re) && !isfinite(z.im))\n" /* Annex G: cexp(-inf + i nan) = 0 (+-) i0 */
    "    return z.re < 0 ? mk((R)0, copysign((R)0, z.im)) : mk(z.re, z.im - z.im);\n"
    "  R e = exp(z.re);\n"
    "  if (z.im == 0) return mk(e, z.im);\n"
    "  return mk(e * cos(z.im), e * sin(z.im));\n"
    "}\n"
    "__device__ T c_log(T z) { return mk(log(hypot(z.re, z.im)), atan2(z.im, z.re)); }\n"
    "__device__ T c_sin(T z) { return mk(sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im)); }\n"
    "__device__ T c_cos(T z) { return mk(cos(z.re) * cosh(z.im), -(sin(z.re) * sinh(z.im))); }\n"
    "__device__ T c_tanh(T z) {\n"
    "  if (fabs(z.re) > (R)(sizeof(R) == 8 ? 354 : 44)) {\n" /* sinh^2 overflows: the limit */
    "    R e = exp(-2 * fabs(z.re));\n"
    "    return mk(copysign((R)1, z.re), 4 * sin(z.im) * cos(z.im) * e);\n"
    "  }\n"
    "  R sx = sinh(z.re), cx = cosh(z.re), si = sin(z.im), ci = cos(z.im), den = sx * sx + ci * ci;\n"
    "  return mk(sx * cx / den, si * ci / den);\n"
    "}\n"
    "#endif\n";

/* The parameter block of tfe_ew and tfe_ew_red: the layout of tfe__gpu_eparams in device.h.
 * Output dims (dout) with the strides of dst, a and b (0: broadcast), summed dims of a. */
static const char *const tfe__gpu_ksrc_ew[] = {
    "struct E {\n"
    "  long long total, nsum_total;\n"
    "  int op, code, nout, nsum, cjd, cja, cjb, s1_zero, fold, pre, fin, partial;\n"
    "  double s0_re, s0_im, s1_re, s1_im, count;\n"
    "  long long chunk, nchunk;\n"
    "  long long dout[MAXR], sd[MAXR], sa[MAXR], sb[MAXR], dsum[MAXR], ssum[MAXR];\n"
    "};\n"
    "__device__ __forceinline__ T ld(const T *p, int c) { T v = *p; return c ? cj(v) : v; }\n"
    "__device__ __forceinline__ T red_final(const E &p, T a) {\n"
    "#if TFE_CPLX\n"
    "  if (p.fin == RED_MEAN) return mk(a.re / (R)p.count, a.im / (R)p.count);\n"
    "  if (p.fin == RED_NORM2) return mk(sqrt(a.re), (R)0);\n"
    "#else\n"
    "  if (p.fin == RED_MEAN) return a / (R)p.count;\n"
    "  if (p.fin == RED_NORM2) return sqrt(a);\n"
    "#endif\n"
    "  if (p.fin == RED_NORMINF && p.count == 0) return zero();\n"
    "  return a;\n"
    "}\n"
    "__device__ __forceinline__ T red_out(const E &p, T acc, const T *dp) {\n"
    "  T r = mul(mk((R)p.s0_re, (R)p.s0_im), red_final(p, acc));\n"
    "  if (!p.s1_zero) r = add(r, mul(mk((R)p.s1_re, (R)p.s1_im), ld(dp, p.cjd)));\n"
    "  return r;\n"
    "}\n"
    "__device__ __forceinline__ void eplace(const E &p, long long i, long long &od, long long &oa, long long &ob) {\n"
    "  if (p.nout == 1) { od = i * p.sd[0]; oa = i * p.sa[0]; ob = i * p.sb[0]; return; }\n"
    "  od = 0; oa = 0; ob = 0;\n"
    "  for (int k = 0; k < p.nout; k++) {\n"
    "    long long x = i % p.dout[k];\n"
    "    i /= p.dout[k];\n"
    "    od += x * p.sd[k]; oa += x * p.sa[k]; ob += x * p.sb[k];\n"
    "  }\n"
    "}\n"
    "__device__ __forceinline__ long long splace(const E &p, long long t) {\n"
    "  long long o = 0;\n"
    "  if (p.nsum == 1) return t * p.ssum[0];\n"
    "  for (int k = 0; k < p.nsum; k++) { o += (t % p.dsum[k]) * p.ssum[k]; t /= p.dsum[k]; }\n"
    "  return o;\n"
    "}\n",
    /* one thread per output element */
    "extern \"C\" __global__ void tfe_ew(T *d, const T *a, const T *b, E p) {\n"
    "  const T s0 = mk((R)p.s0_re, (R)p.s0_im), s1 = mk((R)p.s1_re, (R)p.s1_im);\n"
    "  long long step = (long long)gridDim.x * blockDim.x;\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += step) {\n"
    "    long long od, oa, ob;\n"
    "    eplace(p, i, od, oa, ob);\n"
    "    T r;\n"
    "    switch (p.op) {\n"
    "    case EW_COPY: r = ld(a + oa, p.cja); break;\n"
    "    case EW_FILL: r = s0; break;\n"
    "    case EW_SCALE: r = mul(s0, ld(d + od, p.cjd)); break;\n"
    "    case EW_AXPBY:\n"
    "      r = mul(s0, ld(a + oa, p.cja));\n"
    "      if (!p.s1_zero) r = add(r, mul(s1, ld(d + od, p.cjd)));\n"
    "      break;\n"
    "    case EW_MAP: r = un_op(p.code, ld(a + oa, p.cja), s0); break;\n"
    "    case EW_ZIP: r = bin_op(p.code, ld(a + oa, p.cja), ld(b + ob, p.cjb)); break;\n"
    "    default: {\n"
    "      T acc = red_id(p.fold);\n"
    "      for (long long t = 0; t < p.nsum_total; t++) acc = red_comb(p.fold, acc, red_pre(p.pre, ld(a + oa + splace(p, t), p.cja)));\n"
    "      r = red_out(p, acc, d + od);\n"
    "    }\n"
    "    }\n"
    "    d[od] = p.cjd ? cj(r) : r;\n"
    "  }\n"
    "}\n",
    /* reductions with many summed elements: one block per (output element, chunk of its summed
     * elements), a tree in shared memory (256 threads); with several chunks (partial) each block
     * writes its raw fold to b[o * nchunk + c], and a second launch folds those */
    "extern \"C\" __global__ void tfe_ew_red(T *d, const T *a, T *b, E p) {\n"
    "  __shared__ T sh[256];\n"
    "  const long long nb = p.total * p.nchunk;\n"
    "  for (long long bi = blockIdx.x; bi < nb; bi += gridDim.x) {\n"
    "    long long o = bi / p.nchunk, c = bi % p.nchunk, od, oa, ob;\n"
    "    eplace(p, o, od, oa, ob);\n"
    "    long long t0 = c * p.chunk, t1 = t0 + p.chunk < p.nsum_total ? t0 + p.chunk : p.nsum_total;\n"
    "    T acc = red_id(p.fold);\n"
    "    for (long long t = t0 + threadIdx.x; t < t1; t += blockDim.x)\n"
    "      acc = red_comb(p.fold, acc, red_pre(p.pre, ld(a + oa + splace(p, t), p.cja)));\n"
    "    sh[threadIdx.x] = acc;\n"
    "    __syncthreads();\n"
    "    for (int w = blockDim.x / 2; w > 0; w /= 2) {\n"
    "      if (threadIdx.x < w) sh[threadIdx.x] = red_comb(p.fold, sh[threadIdx.x], sh[threadIdx.x + w]);\n"
    "      __syncthreads();\n"
    "    }\n"
    "    if (threadIdx.x == 0) {\n"
    "      if (p.partial) b[o * p.nchunk + c] = sh[0];\n"
    "      else {\n"
    "        T r = red_out(p, sh[0], d + od);\n"
    "        d[od] = p.cjd ? cj(r) : r;\n"
    "      }\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "}\n"};

/* ---- tropical GEMMs (real kinds only: the modules of f32 and f64 carry them) ----------------
 * C = alpha (x) (A B) (+) beta (x) C in max-plus (1), min-plus (2) or max-times (3), column
 * tiles of 128 x 128 per block of 256 threads, 8 x 8 elements per thread, K in steps of 8
 * through shared memory; any strides (the tiles are gathered), a batch index in grid z. The
 * argmax variants keep the k that won each C[i,j] (the first among equal values; -1 when no
 * product beats the semiring's zero, as for k = 0 on the CPU) and write it as int64. Operands are padded with the semiring's zero. Differs from the CPU's
 * semiring_gemm only where the CPU's zero rule applies (zero (x) +inf is zero there, NaN here)
 * and in which NaN a max keeps. */
static const char *const tfe__gpu_ksrc_trop[] = {
    "#if !TFE_CPLX\n"
    "struct G {\n"
    "  long long m, n, k;\n"
    "  long long ars, acs, abs_, brs, bcs, bbs, crs, ccs, cbs, irs, ics, ibs;\n"
    "  double alpha, beta;\n"
    "  int beta_zero, pad;\n"
    "};\n"
    "template <int S> struct SR;\n"
    "template <> struct SR<1> {\n"
    "  static __device__ __forceinline__ R zero() { return (R)-INFINITY; }\n"
    "  static __device__ __forceinline__ R mul(R a, R b) { return a + b; }\n"
    "  static __device__ __forceinline__ R add(R a, R b) { return b > a ? b : a; }\n"
    "  static __device__ __forceinline__ bool better(R v, R acc) { return v > acc; }\n"
    "};\n"
    "template <> struct SR<2> {\n"
    "  static __device__ __forceinline__ R zero() { return (R)INFINITY; }\n"
    "  static __device__ __forceinline__ R mul(R a, R b) { return a + b; }\n"
    "  static __device__ __forceinline__ R add(R a, R b) { return b < a ? b : a; }\n"
    "  static __device__ __forceinline__ bool better(R v, R acc) { return v < acc; }\n"
    "};\n"
    "template <> struct SR<3> {\n"
    "  static __device__ __forceinline__ R zero() { return (R)0; }\n"
    "  static __device__ __forceinline__ R mul(R a, R b) { return a * b; }\n"
    "  static __device__ __forceinline__ R add(R a, R b) { return b > a ? b : a; }\n"
    "  static __device__ __forceinline__ bool better(R v, R acc) { return v > acc; }\n"
    "};\n",
    "#define TB 128\n"
    "#define TK 8\n"
    "template <int S, bool ARG>\n"
    "__device__ __forceinline__ void tgemm(R *c, const R *a, const R *b, long long *idx, const G &p) {\n"
    "  __shared__ R As[TK][TB], Bs[TK][TB];\n"
    "  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;\n"
    "  const long long m0 = (long long)blockIdx.x * TB, n0 = (long long)blockIdx.y * TB, z = blockIdx.z;\n"
    "  a += z * p.abs_; b += z * p.bbs; c += z * p.cbs;\n"
    "  if (ARG) idx += z * p.ibs;\n"
    "  R acc[8][8];\n"
    "  int arg[8][8];\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < 8; i++)\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 8; j++) { acc[i][j] = SR<S>::zero(); if (ARG) arg[i][j] = -1; }\n"
    "  for (long long k0 = 0; k0 < p.k; k0 += TK) {\n"
    "#pragma unroll\n"
    "    for (int q = 0; q < 4; q++) {\n"
    "      int e = threadIdx.x + 256 * q, r = e % TB, kk = e / TB;\n"
    "      long long gm = m0 + r, gk = k0 + kk;\n"
    "      As[kk][r] = gm < p.m && gk < p.k ? a[gm * p.ars + gk * p.acs] : SR<S>::zero();\n"
    "      int kb = e % TK, cb = e / TK;\n"
    "      long long gn = n0 + cb, gkb = k0 + kb;\n"
    "      Bs[kb][cb] = gn < p.n && gkb < p.k ? b[gkb * p.brs + gn * p.bcs] : SR<S>::zero();\n"
    "    }\n"
    "    __syncthreads();\n"
    "#pragma unroll\n"
    "    for (int kk = 0; kk < TK; kk++) {\n"
    "      R av[8], bv[8];\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < 8; i++) av[i] = As[kk][ty + 16 * i];\n"
    "#pragma unroll\n"
    "      for (int j = 0; j < 8; j++) bv[j] = Bs[kk][tx + 16 * j];\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < 8; i++)\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 8; j++) {\n"
    "          R v = SR<S>::mul(av[i], bv[j]);\n"
    "          if (ARG) {\n"
    "            if (SR<S>::better(v, acc[i][j])) { acc[i][j] = v; arg[i][j] = (int)(k0 + kk); }\n"
    "          } else acc[i][j] = SR<S>::add(acc[i][j], v);\n"
    "        }\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < 8; i++)\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 8; j++) {\n"
    "      long long gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;\n"
    "      if (gm >= p.m || gn >= p.n) continue;\n"
    "      R r = SR<S>::mul((R)p.alpha, acc[i][j]);\n"
    "      R *cp = c + gm * p.crs + gn * p.ccs;\n"
    "      if (!p.beta_zero) r = SR<S>::add(r, SR<S>::mul((R)p.beta, *cp));\n"
    "      *cp = r;\n"
    "      if (ARG) idx[gm * p.irs + gn * p.ics] = arg[i][j];\n"
    "    }\n"
    "}\n",
    "#define TGEMM(s)                                                                                      \\\n"
    "  extern \"C\" __global__ void __launch_bounds__(256) tfe_tgemm_##s(R *c, const R *a, const R *b,      \\\n"
    "                                                                      long long *idx, G p) {         \\\n"
    "    tgemm<s, false>(c, a, b, idx, p);                                                                 \\\n"
    "  }                                                                                                   \\\n"
    "  extern \"C\" __global__ void __launch_bounds__(256) tfe_tgemm_arg_##s(R *c, const R *a, const R *b,  \\\n"
    "                                                                          long long *idx, G p) {     \\\n"
    "    tgemm<s, true>(c, a, b, idx, p);                                                                  \\\n"
    "  }\n"
    "TGEMM(1)\n"
    "TGEMM(2)\n"
    "TGEMM(3)\n"
    "#endif\n"};

/* The linalg slot's helpers (solver.h), every kind:
 *   tfe_la_tri:    o[r,c] = keep(r,c) ? s[r,c] : 0 (then 1 on the diagonal when unit) over a batch of
 *                  column-major matrices; keep: 0 none, 1 upper (r <= c), 2 lower (r >= c), 3 strictly
 *                  lower, 4 all. In place (o == s) is fine: each thread reads and writes its element.
 *   tfe_la_phase:  ph[b,j] = R_jj / |R_jj| (1 for 0), the QR gauge factors.
 *   tfe_la_gauge:  Q[:,j] *= ph[j], R[j,c>=j] *= conj(ph[j]), R_jj = |R_jj| (exactly real).
 *   tfe_la_perm:   LAPACK's pivots (1-based row swaps) as a permutation, one thread per matrix.
 *   tfe_la_finite: *flag = 1 when an element of a strided view (the unary kernel's parameter block,
 *                  its A side) is NaN or infinite (flag zeroed by the caller). */
static const char *const tfe__gpu_ksrc_la[] = {
    "struct LT { long long m, n, lds, sbs, ldo, sbo, nb; int keep, unit; };\n"
    "struct LG { long long m, n, k, kq, nb; };\n"
    "__device__ __forceinline__ R la_abs(T x) {\n"
    "#if TFE_CPLX\n"
    "  return hypot(x.re, x.im);\n"
    "#else\n"
    "  return fabs(x);\n"
    "#endif\n"
    "}\n"
    "__device__ __forceinline__ bool la_fin(T x) {\n"
    "#if TFE_CPLX\n"
    "  return isfinite(x.re) && isfinite(x.im);\n"
    "#else\n"
    "  return isfinite(x);\n"
    "#endif\n"
    "}\n"
    "#define LA_LOOP(tot) \\\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (tot); i += (long long)gridDim.x * blockDim.x)\n"
    "extern \"C\" __global__ void tfe_la_tri(T *o, const T *s, LT p) {\n"
    "  LA_LOOP(p.m * p.n * p.nb) {\n"
    "    long long r = i % p.m, q = i / p.m, c = q % p.n, b = q / p.n;\n"
    "    bool k = p.keep == 1 ? r <= c : p.keep == 2 ? r >= c : p.keep == 3 ? r > c : p.keep == 4;\n"
    "    T v = k ? s[b * p.sbs + r + c * p.lds] : zero();\n"
    "    if (p.unit && r == c) v = mk((R)1, (R)0);\n"
    "    o[b * p.sbo + r + c * p.ldo] = v;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void tfe_la_phase(T *ph, const T *r, LG p) {\n"
    "  LA_LOOP(p.k * p.nb) {\n"
    "    long long j = i % p.k, b = i / p.k;\n"
    "    T x = r[b * p.kq * p.n + j + j * p.kq];\n"
    "    R a = la_abs(x);\n"
    "#if TFE_CPLX\n"
    "    ph[i] = a > 0 ? mk(x.re / a, x.im / a) : mk((R)1, (R)0);\n"
    "#else\n"
    "    ph[i] = a > 0 ? x / a : (R)1;\n"
    "#endif\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void tfe_la_gauge(T *q, T *r, const T *ph, LG p) {\n"
    "  long long nq = p.m * p.k, nr = p.k * p.n;\n"
    "  LA_LOOP((nq + nr) * p.nb) {\n"
    "    long long b = i / (nq + nr), e = i % (nq + nr);\n"
    "    if (e < nq) {\n"
    "      T *x = q + b * p.m * p.kq + e;\n"
    "      *x = mul(*x, ph[b * p.k + e / p.m]);\n"
    "    } else {\n"
    "      e -= nq;\n"
    "      long long j = e % p.k, c = e / p.k;\n"
    "      if (c < j) continue;\n"
    "      T *x = r + b * p.kq * p.n + j + c * p.kq, v = mul(*x, cj(ph[b * p.k + j]));\n"
    "      if (c == j) v = mk(la_abs(v), (R)0);\n"
    "      *x = v;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void tfe_la_perm(long long *perm, const long long *ipiv, long long m, long long k, long long nb) {\n"
    "  LA_LOOP(nb) {\n"
    "    long long *p = perm + i * m;\n"
    "    const long long *v = ipiv + i * k;\n"
    "    for (long long t = 0; t < m; t++) p[t] = t;\n"
    "    for (long long t = 0; t < k; t++) {\n"
    "      long long o = v[t] - 1, x = p[t];\n"
    "      p[t] = p[o], p[o] = x;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void tfe_la_finite(int *flag, const T *a, P p) {\n"
    "  LA_LOOP(p.total) {\n"
    "    long long oc, oa;\n"
    "    place(p, i, oc, oa);\n"
    "    if (!la_fin(a[oa])) *flag = 1;\n"
    "  }\n"
    "}\n"};

#endif /* TFE__GPU_COMPANION */
#endif
