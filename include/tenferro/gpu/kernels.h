/* tenferro/gpu/kernels.h — gpu room, companion only: the source of the generated device kernels,
 * compiled by NVRTC at first use for each (device, element kind) and cached per device.
 *
 * One source serves the four float kinds: TFE_R is float or double, TFE_CPLX says whether an
 * element is a complex pair (stored interleaved, re then im, as C's _Complex). Two kernels:
 *   tfe_unary: C[o] = alpha * sum_s op(A[o, s]) + beta * C[o] over strided views, one thread
 *              per output element (grid-stride), an odometer over the summed labels. It is
 *              permute, reduce, trace (A's repeated labels folded into one stride), the
 *              anti-diagonal ops (C's repeats folded) and the packing copies of the GEMM path.
 *   tfe_perm2d: the same without summed labels, through 32x32 tiles in shared memory: reads
 *              run along A's fastest label, writes along C's (a transposition's two sides both
 *              coalesced); the other labels are walked by the grid's y dimension.
 *   tfe_scale: C[o] = beta * C[o] (beta == 0 writes zeros, never reads C).
 * The parameter block is passed by value (under 4 KiB); its layout is tfe__gpu_kparams in
 * tenferro_gpu.c. Split in pieces: ISO C guarantees string literals of 4095 bytes only. */
#ifndef TENFERRO_GPU_KERNELS_H
#define TENFERRO_GPU_KERNELS_H
#ifdef TFE__GPU_COMPANION

#define TFE__GPU_KMAXR 24 /* most labels of one side after size-1 labels are dropped */

static const char *const tfe__gpu_ksrc[] = {
    "typedef TFE_R R;\n"
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
    "}\n"
    "extern \"C\" __global__ void tfe_perm2d(T *c, const T *a, P p) {\n"
    "  __shared__ T tile[32][33];\n"
    "  const int j = p.pj;\n"
    "  const long long d0 = p.dout[0], dj = p.dout[j], t0 = (d0 + 31) / 32;\n"
    "  const long long b0 = (blockIdx.x % t0) * 32, bj = (blockIdx.x / t0) * 32;\n"
    "  const long long rest = p.total / (d0 * dj);\n"
    "  for (long long q = blockIdx.y; q < rest; q += gridDim.y) {\n"
    "    long long r = q, oc = 0, oa = 0;\n"
    "    for (int d = 1; d < p.nout; d++) {\n"
    "      if (d == j) continue;\n"
    "      long long x = r % p.dout[d];\n"
    "      r /= p.dout[d];\n"
    "      oc += x * p.sc[d]; oa += x * p.sa[d];\n"
    "    }\n"
    "    for (int y = threadIdx.y; y < 32; y += blockDim.y) {\n"
    "      long long i0 = b0 + y, ij = bj + threadIdx.x;\n"
    "      if (i0 < d0 && ij < dj) {\n"
    "        T v = a[oa + i0 * p.sa[0] + ij * p.sa[j]];\n"
    "        tile[y][threadIdx.x] = p.conj ? cj(v) : v;\n"
    "      }\n"
    "    }\n"
    "    __syncthreads();\n"
    "    for (int y = threadIdx.y; y < 32; y += blockDim.y) {\n"
    "      long long ij = bj + y, i0 = b0 + threadIdx.x;\n"
    "      if (i0 < d0 && ij < dj) {\n"
    "        T *cp = c + oc + i0 * p.sc[0] + ij * p.sc[j];\n"
    "        *cp = fin(p, tile[threadIdx.x][y], cp);\n"
    "      }\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
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

#endif /* TFE__GPU_COMPANION */
#endif
