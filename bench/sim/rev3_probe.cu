// bench/sim/rev3_probe.cu — a probe, not the library: what holds the f64 3^15 reversal
// (reverse_15d_3) under 0.8 of the device-to-device copy on the H200? Hand-written kernels
// of the library's shape (81 x 81 tiles of the four fastest labels on each side, the seven
// middle labels as positions) in variants, each timed against cudaMemcpyAsync of the same bytes:
// the order the positions are walked in, a balanced persistent grid (is it a tail?), more or
// fewer positions (R) than 2187, streaming cache hints, blocks a multiprocessor, and the loads
// or the stores of the pattern alone. Findings: docs/benchmarks.md, session 18.
// Build: nvcc -O3 -arch=sm_90 -o rev3_probe bench/sim/rev3_probe.cu ; run: ./rev3_probe [reps]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
static const int S = 81, NE = S * S, P = 2187; // tile side, tile elements, positions of 3^15
static const long long N = 14348907LL;        // 3^15

__host__ __device__ inline int rev(int v, int digits) { int r = 0; for (int i = 0; i < digits; i++) { r = r * 3 + v % 3; v /= 3; } return r; }
// position m (of any count R: copies of the 3^15 problem side by side) -> offsets in A and C;
// the offsets of each position (the middle labels 4..10 walked in a chosen order, fastest
// first), computed on the host: the kernels read two numbers a position
__device__ long long *g_off;
__device__ inline void pos_off(int m, long long &oa, long long &oc) {
  int k = m / P, mm = m - k * P;
  oa = (long long)k * N + g_off[2 * mm];
  oc = (long long)k * N + g_off[2 * mm + 1];
}
static long long *d_off;
static void set_order(const int *ord) {
  std::vector<long long> h(2 * P), w(15, 1);
  for (int i = 1; i < 15; i++) w[i] = w[i - 1] * 3;
  for (int m = 0; m < P; m++) {
    long long oa = 0, oc = 0;
    for (int j = 0, mm = m; j < 7; j++, mm /= 3) { oa += (mm % 3) * w[ord[j]]; oc += (mm % 3) * w[14 - ord[j]]; }
    h[2 * m] = oa, h[2 * m + 1] = oc;
  }
  if (!d_off) { CK(cudaMalloc(&d_off, 2 * P * 8)); CK(cudaMemcpyToSymbol(g_off, &d_off, sizeof(d_off))); }
  CK(cudaMemcpy(d_off, h.data(), 2 * P * 8, cudaMemcpyHostToDevice));
}
__device__ inline void tables(int *xa, int *ya, int *xc, int *yc) {
  for (int i = threadIdx.x; i < S; i += blockDim.x) {
    int r = 177147 * rev(i, 4);
    xa[i] = r; ya[i] = i; xc[i] = i; yc[i] = r;
  }
}
template <int HINT> __device__ inline void st(double *p, double v) { if (HINT) __stcs(p, v); else *p = v; }
template <int HINT> __device__ inline double ld(const double *p) { if (HINT) return __ldcs(p); return *p; }

// A: one position a block (the library's tfe_perm2d_b), K loads in flight, one tile buffer.
template <int K, int HINT, int MINB = 3>
__global__ void __launch_bounds__(512, MINB) kA(double *c, const double *a, int R, int per) {
  extern __shared__ double tile[];
  __shared__ int xa[S], ya[S], xc[S], yc[S];
  tables(xa, ya, xc, yc);
  __syncthreads();
  const int t = threadIdx.x, nt = blockDim.x;
  for (int m = blockIdx.x * per; m < R && m < (int)(blockIdx.x + 1) * per; m++) {
    long long oa, oc;
    pos_off(m, oa, oc);
    const double *ab = a + oa;
    double *cb = c + oc;
    for (int e0 = t; e0 < NE; e0 += nt * K) {
      double v[K];
#pragma unroll
      for (int k = 0; k < K; k++) { int e = e0 + k * nt; if (e < NE) { int lx = e / S, ly = e - lx * S; v[k] = ld<HINT>(ab + xa[lx] + ya[ly]); } }
#pragma unroll
      for (int k = 0; k < K; k++) { int e = e0 + k * nt; if (e < NE) { int lx = e / S, ly = e - lx * S; tile[lx * S + ly] = v[k]; } }
    }
    __syncthreads();
    for (int e = t; e < NE; e += nt) { int sy = e / S, sx = e - sy * S; st<HINT>(cb + xc[sx] + yc[sy], tile[sx * S + sy]); }
    __syncthreads();
  }
}

// B: balanced persistent blocks: the rows (position, x) split evenly over the grid; a block's
// range crosses tiles in chunks of up to 81 rows (a partial tile's stores are partial runs).
template <int K, int HINT>
__global__ void __launch_bounds__(512, 3) kB(double *c, const double *a, int R) {
  extern __shared__ double tile[];
  __shared__ int xa[S], ya[S], xc[S], yc[S];
  tables(xa, ya, xc, yc);
  __syncthreads();
  const int t = threadIdx.x, nt = blockDim.x;
  const long long W = (long long)R * S, r0 = W * blockIdx.x / gridDim.x, r1 = W * (blockIdx.x + 1) / gridDim.x;
  for (long long r = r0; r < r1;) {
    int m = (int)(r / S), x0 = (int)(r - (long long)m * S), nx = (int)(S - x0 < r1 - r ? S - x0 : r1 - r);
    r += nx;
    long long oa, oc;
    pos_off(m, oa, oc);
    const double *ab = a + oa;
    double *cb = c + oc;
    const int ne = nx * S;
    for (int e0 = t; e0 < ne; e0 += nt * K) {
      double v[K];
#pragma unroll
      for (int k = 0; k < K; k++) { int e = e0 + k * nt; if (e < ne) { int lx = e / S, ly = e - lx * S; v[k] = ld<HINT>(ab + xa[x0 + lx] + ya[ly]); } }
#pragma unroll
      for (int k = 0; k < K; k++) { int e = e0 + k * nt; if (e < ne) { int lx = e / S, ly = e - lx * S; tile[lx * S + ly] = v[k]; } }
    }
    __syncthreads();
    int sy = t / nx, sx = t - sy * nx; const int dsy = nt / nx, dsx = nt - dsy * nx;
    while (sy < S) {
      st<HINT>(cb + xc[x0 + sx] + yc[sy], tile[sx * S + sy]);
      sx += dsx, sy += dsy;
      if (sx >= nx) sx -= nx, sy++;
    }
    __syncthreads();
  }
}

// R / W: only the loads (summed, one store a block) or only the stores of kA's pattern
template <int MODE>
__global__ void __launch_bounds__(512, 3) kRW(double *c, const double *a, int R) {
  __shared__ int xa[S], ya[S], xc[S], yc[S];
  tables(xa, ya, xc, yc);
  __syncthreads();
  const int t = threadIdx.x, nt = blockDim.x, m = blockIdx.x;
  long long oa, oc;
  pos_off(m, oa, oc);
  const double *ab = a + oa;
  double *cb = c + oc;
  double s = 0;
  if (MODE == 0) {
    for (int e0 = t; e0 < NE; e0 += nt * 7) {
      double v[7];
#pragma unroll
      for (int k = 0; k < 7; k++) { int e = e0 + k * nt; v[k] = 0; if (e < NE) { int lx = e / S, ly = e - lx * S; v[k] = ab[xa[lx] + ya[ly]]; } }
#pragma unroll
      for (int k = 0; k < 7; k++) s += v[k];
    }
    if (s == -1.0) c[m] = s;
  } else {
    for (int e = t; e < NE; e += nt) { int sy = e / S, sx = e - sy * S; cb[xc[sx] + yc[sy]] = (double)e; }
  }
}
// C: a plain copy kernel (16-byte vectors) for reference.
__global__ void kcopy(double2 *c, const double2 *a, long long n2) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n2; i += (long long)gridDim.x * blockDim.x) c[i] = a[i];
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  int nsm; CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  printf("device %s, %d SMs\n", pr.name, nsm);
  const int Rmax = 2 * P;
  double *a, *c, *ref;
  size_t bytes = (size_t)2 * N * sizeof(double);
  CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&c, bytes));
  std::vector<double> h(2 * N);
  for (long long i = 0; i < 2 * N; i++) h[i] = (double)i;
  CK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
  int smem = NE * 8;
  CK(cudaFuncSetAttribute(kA<7, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000));
  CK(cudaFuncSetAttribute(kA<7, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(kB<7, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(kB<7, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(kA<4, 0, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(kA<5, 0, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(kA<3, 0, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int occ4; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ4, kA<4, 0, 4>, 480, smem));
  printf("kA<4,0,4> blocks per SM: %d\n", occ4);
  int occ; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kB<7, 0>, 480, smem));
  printf("blocks per SM at 480 threads and %d B: %d\n", smem, occ);
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  // checks: each variant's C against the host reversal of the first copy
  std::vector<double> hc(N);
  auto check = [&](const char *name) {
    CK(cudaMemcpy(hc.data(), c, N * 8, cudaMemcpyDeviceToHost));
    for (long long i = 0; i < N; i += 7) {
      long long j = 0, v = i; for (int k = 0; k < 15; k++) { j = j * 3 + v % 3; v /= 3; }
      if (hc[j] != (double)i) { printf("CHECK FAIL %s at %lld\n", name, i); return; }
    }
  };
  struct V { const char *name; int R; int kind; };
  std::vector<V> vs = {
    {"copy 3^15", P, 0}, {"A one pos/block R=2187", P, 1}, {"A hint cs", P, 2}, {"B balanced", P, 3}, {"B balanced cs", P, 4},
    {"copy R=1980", 1980, 0}, {"A R=1980 (396x5)", 1980, 1}, {"copy R=2376", 2376, 0}, {"A R=2376 (396x6)", 2376, 1},
    {"B balanced R=2376", 2376, 3}, {"kcopy 3^15", P, 5}, {"A 2 pos/block", P, 6}, {"B 2 waves (2x grid)", P, 7}, {"A 2 blocks/SM", P, 8}, {"A K4 4 blocks/SM", P, 13}, {"A K5 4 blocks/SM", P, 14}, {"A K3 4 blocks/SM", P, 15}, {"loads only", P, 10}, {"stores only", P, 11}, {"memset (linear writes)", P, 12}, {"A 1 block/SM", P, 9},
  };
  int G = nsm * occ;
  const int orders[][7] = {{4, 5, 6, 7, 8, 9, 10}, {10, 9, 8, 7, 6, 5, 4}, {4, 10, 5, 9, 6, 8, 7}, {4, 5, 10, 9, 6, 8, 7},
                           {4, 5, 6, 10, 9, 8, 7}, {10, 9, 4, 5, 6, 8, 7}, {4, 10, 9, 5, 8, 6, 7}, {4, 5, 10, 9, 8, 6, 7}};
  const char *oname[] = {"A-first", "C-first", "interleave(lib)", "2A+2C", "3A+3C", "2C+3A", "1A+2C+..", "2A+3C"};
  for (int oi = 0; oi < 8; oi++) {
    set_order(orders[oi]);
    std::vector<float> t1, t0;
    for (int rep = 0; rep < reps; rep++) {
      CK(cudaEventRecord(e0)); CK(cudaMemcpyAsync(c, a, (size_t)N * 8, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t0.push_back(ms);
      CK(cudaEventRecord(e0)); kA<7, 0><<<P, 480, smem>>>(c, a, P, 1); CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); t1.push_back(ms);
      if (rep == 0) check(oname[oi]);
    }
    printf("order %-16s A kernel %8.1f us  copy %8.1f us  ratio %.3f\n", oname[oi], median(t1) * 1e3, median(t0) * 1e3, median(t0) / median(t1));
  }
  set_order(orders[2]);
  std::vector<std::vector<float>> ts(vs.size());
  for (int rep = 0; rep < reps; rep++) {
    for (size_t vi = 0; vi < vs.size(); vi++) {
      const V &v = vs[vi];
      size_t vb = (size_t)v.R * NE * 8;
      CK(cudaEventRecord(e0));
      switch (v.kind) {
      case 0: CK(cudaMemcpyAsync(c, a, vb, cudaMemcpyDeviceToDevice)); break;
      case 1: kA<7, 0><<<v.R, 480, smem>>>(c, a, v.R, 1); break;
      case 2: kA<7, 1><<<v.R, 480, smem>>>(c, a, v.R, 1); break;
      case 3: kB<7, 0><<<G, 480, smem>>>(c, a, v.R); break;
      case 4: kB<7, 1><<<G, 480, smem>>>(c, a, v.R); break;
      case 5: kcopy<<<nsm * 8, 256>>>((double2 *)c, (const double2 *)a, (long long)vb / 16); break;
      case 6: kA<7, 0><<<(v.R + 1) / 2, 480, smem>>>(c, a, v.R, 2); break;
      case 8: kA<7, 0><<<v.R, 480, 100000>>>(c, a, v.R, 1); break;
      case 9: kA<7, 0><<<v.R, 480, 200000>>>(c, a, v.R, 1); break;
      case 10: kRW<0><<<v.R, 480>>>(c, a, v.R); break;
      case 11: kRW<1><<<v.R, 480>>>(c, a, v.R); break;
      case 12: CK(cudaMemsetAsync(c, 0, vb)); break;
      case 13: kA<4, 0, 4><<<v.R, 480, smem>>>(c, a, v.R, 1); break;
      case 14: kA<5, 0, 4><<<v.R, 480, smem>>>(c, a, v.R, 1); break;
      case 15: kA<3, 0, 4><<<v.R, 480, smem>>>(c, a, v.R, 1); break;
      case 7: kB<7, 0><<<2 * G, 480, smem>>>(c, a, v.R); break;
      }
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      CK(cudaGetLastError());
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      ts[vi].push_back(ms);
      if (rep == 0 && v.kind != 0 && v.kind != 5 && v.kind < 10 && v.R == P) check(v.name);
    }
  }
  float tcopy = median(ts[0]);
  for (size_t vi = 0; vi < vs.size(); vi++) {
    float t = median(ts[vi]);
    size_t vb = (size_t)vs[vi].R * NE * 8;
    printf("%-26s R=%4d  %8.1f us  %6.2f TB/s (r+w)  copy3^15/t scaled %.3f\n", vs[vi].name, vs[vi].R, t * 1e3,
           2.0 * vb / (t * 1e-3) / 1e12, tcopy / t * vs[vi].R / P);
  }
  return 0;
}
