/* Second translation unit of tests/test_gpu_emulated.c: the GPU companion with an emulated
 * device. The driver and cuBLAS tables are filled with host functions (device memory is host
 * memory; the generated kernels and the strided-batched GEMMs are interpreted on the CPU), so
 * that the backend's layout logic (label folding, groups, the copy-free/packed choice, leading
 * dimensions, transposes, conjugation, workspace offsets) runs in CI without a GPU. NVRTC and
 * the CUDA calls themselves are not exercised here: test_gpu_loader and the real device do. */
#include <tenferro/gpu/tenferro_gpu.c>
#include <complex.h>
#include <math.h>

void tu_gpu_emulate(void);

/* ---- elements as (re, im) doubles ------------------------------------------------------------ */
typedef struct emu_c { double re, im; } emu_c;
static const size_t emu_es[TFE__GK_COUNT] = {4, 8, 8, 16};
static emu_c emu_ld(int g, const char *p) {
  emu_c v = {0, 0};
  if (g == TFE__GK_F32) v.re = *(const float *)p;
  else if (g == TFE__GK_F64) v.re = *(const double *)p;
  else if (g == TFE__GK_C64) v.re = ((const float *)p)[0], v.im = ((const float *)p)[1];
  else v.re = ((const double *)p)[0], v.im = ((const double *)p)[1];
  return v;
}
static void emu_st(int g, char *p, emu_c v) {
  if (g == TFE__GK_F32) *(float *)p = (float)v.re;
  else if (g == TFE__GK_F64) *(double *)p = v.re;
  else if (g == TFE__GK_C64) ((float *)p)[0] = (float)v.re, ((float *)p)[1] = (float)v.im;
  else ((double *)p)[0] = v.re, ((double *)p)[1] = v.im;
}
static emu_c emu_mul(emu_c a, emu_c b) {
  emu_c r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}
static emu_c emu_add(emu_c a, emu_c b) {
  emu_c r = {a.re + b.re, a.im + b.im};
  return r;
}

/* ---- the kernels: tfe_unary and tfe_perm2d compute the same thing; tfe_scale ------------------ */
enum { EMU_UNARY, EMU_PERM, EMU_SCALE, EMU_EW, EMU_EWRED, EMU_NFN };
static void emu_unary(int g, char *c, const char *a, const tfe__gpu_kparams *p, bool scale) {
  size_t es = emu_es[g];
  emu_c al = {p->alpha_re, p->alpha_im}, be = {p->beta_re, p->beta_im};
  for (long long i = 0; i < p->total; i++) {
    long long r = i, oc = 0, oa = 0;
    for (int d = 0; d < p->nout; d++) oc += r % p->dout[d] * p->sc[d], oa += r % p->dout[d] * p->sa[d], r /= p->dout[d];
    char *cp = c + oc * (long long)es;
    if (scale) {
      emu_c z = {0, 0};
      emu_st(g, cp, p->beta_zero ? z : emu_mul(be, emu_ld(g, cp)));
      continue;
    }
    emu_c s = {0, 0};
    for (long long t = 0; t < p->nsum_total; t++) {
      long long q = t, os = 0;
      for (int d = 0; d < p->nsum; d++) os += q % p->dsum[d] * p->ssum[d], q /= p->dsum[d];
      emu_c v = emu_ld(g, a + (oa + os) * (long long)es);
      if (p->conj) v.im = -v.im;
      s = emu_add(s, v);
    }
    emu_c out = emu_mul(al, s);
    if (!p->beta_zero) out = emu_add(out, emu_mul(be, emu_ld(g, cp)));
    emu_st(g, cp, out);
  }
}
/* ---- tfe_ew / tfe_ew_red: the elementwise slot's kernels, interpreted with C99 complex math
 * (the kernel room's CPU code is what the results are compared with) */
/* re + i im (no CMPLX: clang's view of glibc's complex.h lacks it) */
static double complex emu_z(double re, double im) {
  double parts[2] = {re, im};
  double complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}
static double complex emu_ldz(int g, const char *p, int cj) {
  emu_c v = emu_ld(g, p);
  return emu_z(v.re, cj ? -v.im : v.im);
}
static void emu_stz(int g, char *p, double complex z, int cj) {
  emu_c v = {creal(z), cj ? -cimag(z) : cimag(z)};
  emu_st(g, p, v);
}
static double complex emu_un(int g, int code, double complex x, double complex p) {
  bool cplx = g >= TFE__GK_C64;
  double r = creal(x);
  switch (code) {
  case TFE_UN_NEG: return -x;
  case TFE_UN_CONJ: return conj(x);
  case TFE_UN_ABS: return cabs(x);
  case TFE_UN_REAL: return creal(x);
  case TFE_UN_IMAG: return cimag(x);
  case TFE_UN_SQRT: return cplx ? csqrt(x) : sqrt(r);
  case TFE_UN_EXP: return cplx ? cexp(x) : exp(r);
  case TFE_UN_LOG: return cplx ? clog(x) : log(r);
  case TFE_UN_SIN: return cplx ? csin(x) : sin(r);
  case TFE_UN_COS: return cplx ? ccos(x) : cos(r);
  case TFE_UN_TANH: return cplx ? ctanh(x) : tanh(r);
  case TFE_UN_POW: return cplx ? cpow(x, p) : pow(r, creal(p));
  case TFE_UN_RECIP: return 1.0 / x;
  case TFE_UN_SQUARE: return x * x;
  default: return x;
  }
}
static double complex emu_bin(int code, double complex x, double complex y) {
  double a = creal(x), b = creal(y);
  switch (code) {
  case TFE_BIN_ADD: return x + y;
  case TFE_BIN_SUB: return x - y;
  case TFE_BIN_MUL: return x * y;
  case TFE_BIN_DIV: return x / y;
  case TFE_BIN_MAX: return a > b || a != a ? a : b;
  case TFE_BIN_MIN: return a < b || a != a ? a : b;
  default: return x;
  }
}
static double complex emu_comb(int fold, double complex a, double complex b) {
  switch (fold) {
  case TFE__KF_MUL: return a * b;
  case TFE__KF_MAX: return creal(a) > creal(b) || creal(a) != creal(a) ? a : b;
  case TFE__KF_MIN: return creal(a) < creal(b) || creal(a) != creal(a) ? a : b;
  default: return a + b;
  }
}
static void emu_ew(int g, char *d, const char *a, const char *b, const tfe__gpu_eparams *p) {
  size_t es = emu_es[g];
  double complex s0 = emu_z(p->s0_re, p->s0_im), s1 = emu_z(p->s1_re, p->s1_im);
  for (long long i = 0; i < p->total; i++) {
    long long q = i, od = 0, oa = 0, ob = 0;
    for (int k = 0; k < p->nout; k++) {
      long long x = q % p->dout[k];
      q /= p->dout[k];
      od += x * p->sd[k], oa += x * p->sa[k], ob += x * p->sb[k];
    }
    char *dp = d + od * (long long)es;
    const char *ap = a + oa * (long long)es, *bp = b + ob * (long long)es;
    double complex r;
    switch (p->op) {
    case TFE_EW_COPY: r = emu_ldz(g, ap, p->cja); break;
    case TFE_EW_FILL: r = s0; break;
    case TFE_EW_SCALE: r = s0 * emu_ldz(g, dp, p->cjd); break;
    case TFE_EW_AXPBY: r = s0 * emu_ldz(g, ap, p->cja) + (p->s1_zero ? 0 : s1 * emu_ldz(g, dp, p->cjd)); break;
    case TFE_EW_MAP: r = emu_un(g, p->code, emu_ldz(g, ap, p->cja), s0); break;
    case TFE_EW_ZIP: r = emu_bin(p->code, emu_ldz(g, ap, p->cja), emu_ldz(g, bp, p->cjb)); break;
    default: {
      double complex acc = p->fold == TFE__KF_MUL ? 1 : p->fold == TFE__KF_MAX ? -INFINITY : p->fold == TFE__KF_MIN ? INFINITY : 0;
      for (long long t = 0; t < p->nsum_total; t++) {
        long long u = t, os = 0;
        for (int k = 0; k < p->nsum; k++) os += u % p->dsum[k] * p->ssum[k], u /= p->dsum[k];
        double complex x = emu_ldz(g, ap + os * (long long)es, p->cja);
        if (p->pre == TFE__KP_ABS) x = cabs(x);
        else if (p->pre == TFE__KP_ABS2) x = creal(x) * creal(x) + cimag(x) * cimag(x);
        acc = emu_comb(p->fold, acc, x);
      }
      if (p->fin == TFE_RED_MEAN) acc /= p->count;
      else if (p->fin == TFE_RED_NORM2) acc = sqrt(creal(acc));
      else if (p->fin == TFE_RED_NORMINF && p->count == 0) acc = 0;
      r = s0 * acc + (p->s1_zero ? 0 : s1 * emu_ldz(g, dp, p->cjd));
    }
    }
    emu_stz(g, dp, r, p->cjd);
  }
}

/* tfe_tgemm_* (tropical.h): handles 1000 + 6 * kind + 2 * (semiring - 1) + argmax */
static void emu_tgemm(int h, char *c, const char *a, const char *b, long long *idx, const tfe__gpu_gparams *p,
                      unsigned batch) {
  int g = h / 6, s = h % 6 / 2 + 1, arg = h % 2;
  size_t es = emu_es[g];
  double zero = tfe__gpu_trop_zero(s);
  for (unsigned z = 0; z < batch; z++)
    for (long long i = 0; i < p->m; i++)
      for (long long j = 0; j < p->n; j++) {
        double acc = zero;
        long long w = -1;
        for (long long l = 0; l < p->k; l++) {
          double x = emu_ld(g, a + (z * p->abs_ + i * p->ars + l * p->acs) * (long long)es).re;
          double y = emu_ld(g, b + (z * p->bbs + l * p->brs + j * p->bcs) * (long long)es).re;
          double v = s == 3 ? x * y : x + y;
          bool better = s == 2 ? v < acc : v > acc;
          if (better) acc = v, w = l;
        }
        char *cp = c + (z * p->cbs + i * p->crs + j * p->ccs) * (long long)es;
        double r = s == 3 ? p->alpha * acc : p->alpha + acc;
        if (!p->beta_zero) {
          double o = emu_ld(g, cp).re, bo = s == 3 ? p->beta * o : p->beta + o;
          r = s == 2 ? fmin(r, bo) : fmax(r, bo);
        }
        emu_c out = {r, 0};
        emu_st(g, cp, out);
        if (arg) idx[z * p->ibs + i * p->irs + j * p->ics] = w;
      }
}

/* tfe_ew_red's first pass (partial): the raw fold of each (output, chunk) into b */
static void emu_ew_partial(int g, const char *a, char *b, const tfe__gpu_eparams *p) {
  size_t es = emu_es[g];
  for (long long o = 0; o < p->total; o++) {
    long long q = o, oa = 0;
    for (int k = 0; k < p->nout; k++) oa += q % p->dout[k] * p->sa[k], q /= p->dout[k];
    for (long long c = 0; c < p->nchunk; c++) {
      double complex acc = p->fold == TFE__KF_MUL ? 1 : p->fold == TFE__KF_MAX ? -INFINITY : p->fold == TFE__KF_MIN ? INFINITY : 0;
      long long t1 = (c + 1) * p->chunk < p->nsum_total ? (c + 1) * p->chunk : p->nsum_total;
      for (long long t = c * p->chunk; t < t1; t++) {
        long long u = t, os = 0;
        for (int k = 0; k < p->nsum; k++) os += u % p->dsum[k] * p->ssum[k], u /= p->dsum[k];
        double complex x = emu_ldz(g, a + (oa + os) * (long long)es, p->cja);
        if (p->pre == TFE__KP_ABS) x = cabs(x);
        else if (p->pre == TFE__KP_ABS2) x = creal(x) * creal(x) + cimag(x) * cimag(x);
        acc = emu_comb(p->fold, acc, x);
      }
      emu_stz(g, b + (o * p->nchunk + c) * (long long)es, acc, 0);
    }
  }
}

/* Function handles are small integers: 1 + EMU_NFN * kind + which. */
static tfe__cu_result emu_launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  (void)gx, (void)gy, (void)bx, (void)by, (void)bz, (void)shm, (void)s, (void)extra;
  int h = (int)(uintptr_t)f - 1, g = h / EMU_NFN, which = h % EMU_NFN;
  char *c = (char *)(uintptr_t) * (tfe__cu_ptr *)args[0];
  if (h >= 999) {
    emu_tgemm(h - 999, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
              (long long *)(uintptr_t) * (tfe__cu_ptr *)args[3], (const tfe__gpu_gparams *)args[4], gz);
    return 0;
  }
  if (which == EMU_EWRED && ((const tfe__gpu_eparams *)args[3])->partial)
    emu_ew_partial(g, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
                   (const tfe__gpu_eparams *)args[3]);
  else if (which == EMU_EW || which == EMU_EWRED)
    emu_ew(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
           (const tfe__gpu_eparams *)args[3]);
  else if (which == EMU_SCALE) emu_unary(g, c, NULL, (const tfe__gpu_kparams *)args[1], true);
  else emu_unary(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const tfe__gpu_kparams *)args[2], false);
  return 0;
}

/* ---- cuBLAS's strided-batched GEMM, column-major, op N / T / C --------------------------------- */
static emu_c emu_op(int g, const char *m, int op, int ld, int i, int l) {
  emu_c v = emu_ld(g, m + (size_t)(op == TFE__BLAS_OP_N ? i + (long long)l * ld : l + (long long)i * ld) * emu_es[g]);
  if (op == TFE__BLAS_OP_C) v.im = -v.im;
  return v;
}
static tfe__blas_status emu_gemm(int g, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int lda,
                                 long long sa, const void *B, int ldb, long long sb, const void *beta, void *C, int ldc,
                                 long long sc, int batch) {
  emu_c al = emu_ld(g, (const char *)alpha), be = emu_ld(g, (const char *)beta);
  size_t es = emu_es[g];
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        emu_c s = {0, 0};
        for (int l = 0; l < k; l++)
          s = emu_add(s, emu_mul(emu_op(g, (const char *)A + sa * b * (long long)es, ta, lda, i, l),
                                 emu_op(g, (const char *)B + sb * b * (long long)es, tb, ldb, l, j)));
        char *cp = (char *)C + (size_t)(sc * b + i + (long long)j * ldc) * es;
        emu_c out = emu_mul(al, s);
        if (be.re != 0 || be.im != 0) out = emu_add(out, emu_mul(be, emu_ld(g, cp)));
        emu_st(g, cp, out);
      }
  return 0;
}
#define EMU_GEMM(name, g)                                                                                         \
  static tfe__blas_status name(tfe__blas_handle h, int ta, int tb, int m, int n, int k, const void *al, const void *A, \
                               int lda, long long sa, const void *B, int ldb, long long sb, const void *be, void *C,  \
                               int ldc, long long sc, int batch) {                                                   \
    (void)h;                                                                                                       \
    return emu_gemm(g, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch);                        \
  }
EMU_GEMM(emu_sgemm, TFE__GK_F32)
EMU_GEMM(emu_dgemm, TFE__GK_F64)
EMU_GEMM(emu_cgemm, TFE__GK_C64)
EMU_GEMM(emu_zgemm, TFE__GK_C128)

/* ---- the driver: host memory, no-op streams and contexts --------------------------------------- */
static tfe__cu_result emu_ok_ctx(tfe__cu_ctx c) { (void)c; return 0; }
static tfe__cu_result emu_retain(tfe__cu_ctx *c, tfe__cu_device d) { (void)d; *c = (tfe__cu_ctx)(uintptr_t)1; return 0; }
static tfe__cu_result emu_release(tfe__cu_device d) { (void)d; return 0; }
static tfe__cu_result emu_stream_create(tfe__cu_stream *s, unsigned f) { (void)f; *s = (tfe__cu_stream)(uintptr_t)1; return 0; }
static tfe__cu_result emu_stream_ok(tfe__cu_stream s) { (void)s; return 0; }
static tfe__cu_result emu_alloc(tfe__cu_ptr *p, size_t n) {
  void *m = malloc(n);
  *p = (tfe__cu_ptr)(uintptr_t)m;
  return m ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
static tfe__cu_result emu_free(tfe__cu_ptr p) { free((void *)(uintptr_t)p); return 0; }
static tfe__cu_result emu_htod(tfe__cu_ptr d, const void *h, size_t n, tfe__cu_stream s) { (void)s; memcpy((void *)(uintptr_t)d, h, n); return 0; }
static tfe__cu_result emu_dtoh(void *h, tfe__cu_ptr d, size_t n, tfe__cu_stream s) { (void)s; memcpy(h, (const void *)(uintptr_t)d, n); return 0; }
static tfe__cu_result emu_dtod(tfe__cu_ptr d, tfe__cu_ptr a, size_t n, tfe__cu_stream s) { (void)s; memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)a, n); return 0; }
static tfe__cu_result emu_unload(tfe__cu_module m) { (void)m; return 0; }
static tfe__cu_result emu_errstr(tfe__cu_result r, const char **s) { (void)r; *s = "emulated device error"; return 0; }
static tfe__blas_status emu_blas_create(tfe__blas_handle *h) { *h = (tfe__blas_handle)(uintptr_t)1; return 0; }
static tfe__blas_status emu_blas_destroy(tfe__blas_handle h) { (void)h; return 0; }
static tfe__blas_status emu_blas_stream(tfe__blas_handle h, tfe__cu_stream s) { (void)h, (void)s; return 0; }

/* Registers one emulated device "cuda:0" with its kernels in place (no NVRTC). */
void tu_gpu_emulate(void) {
  pthread_mutex_lock(&tfe__gpu.lock);
  tfe__cu_api *cu = &tfe__gpu.cu;
  cu->cuDevicePrimaryCtxRetain = emu_retain, cu->cuDevicePrimaryCtxRelease = emu_release;
  cu->cuCtxSetCurrent = emu_ok_ctx, cu->cuStreamCreate = emu_stream_create, cu->cuStreamDestroy = emu_stream_ok;
  cu->cuStreamSynchronize = emu_stream_ok, cu->cuMemAlloc = emu_alloc, cu->cuMemFree = emu_free;
  cu->cuMemcpyHtoDAsync = emu_htod, cu->cuMemcpyDtoHAsync = emu_dtoh, cu->cuModuleUnload = emu_unload;
  cu->cuMemcpyDtoDAsync = emu_dtod;
  cu->cuLaunchKernel = emu_launch, cu->cuGetErrorString = emu_errstr;
  tfe__gpu.blas.create = emu_blas_create, tfe__gpu.blas.destroy = emu_blas_destroy, tfe__gpu.blas.set_stream = emu_blas_stream;
  tfe__gpu.blas.sgemm_sb = emu_sgemm, tfe__gpu.blas.dgemm_sb = emu_dgemm;
  tfe__gpu.blas.cgemm_sb = emu_cgemm, tfe__gpu.blas.zgemm_sb = emu_zgemm;
  tfe__gpu_dev *D = &tfe__gpu.dev[0];
  memset(D, 0, sizeof *D);
  snprintf(D->info.name, sizeof D->info.name, "emulated device");
  D->info.vendor = TFE_GPU_NVIDIA, D->info.total_mem = (size_t)1 << 30, D->info.cc_major = 9;
  pthread_mutex_init(&D->lock, NULL);
  snprintf(D->bename, sizeof D->bename, "cuda:0");
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    D->f_unary[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_UNARY);
    D->f_perm[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_PERM);
    D->f_scale[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_SCALE);
    D->f_ew[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_EW);
    D->f_ewred[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_EWRED);
    for (int k = 0; k < 6 && g <= TFE__GK_F64; k++) D->f_tgemm[g][k / 2][k % 2] = (tfe__cu_function)(uintptr_t)(1000 + 6 * g + k);
  }
  tfe__gpu.ndev = 1;
  tfe__gpu_register(D);
  tfe__gpu.init_done = true, tfe__gpu.init_st = TFE_OK;
  snprintf(tfe__gpu.status, sizeof tfe__gpu.status, "cuda:0 = an emulated device (host memory, kernels and GEMMs on the CPU)");
  pthread_mutex_unlock(&tfe__gpu.lock);
}

/* The on-disk kernel cache (device.h): the file name follows the folder chosen by
 * TFE_GPU_KERNEL_CACHE / XDG_CACHE_HOME / HOME, a stored image reads back, "0" turns it off,
 * a change of the source changes the name. Returns 0 when every check holds, else the number
 * of the first failed one. */
int tu_gpu_cache_roundtrip(const char *dir);
int tu_gpu_cache_roundtrip(const char *dir) {
  char p1[TFE__GPU_PATH_MAX + 128], p2[TFE__GPU_PATH_MAX + 128], want[TFE__GPU_PATH_MAX];
  setenv("TFE_GPU_KERNEL_CACHE", dir, 1);
  if (!tfe__gpu_cache_path(p1, sizeof p1, "sm_90", TFE__GK_F64, "source one")) return 1;
  snprintf(want, sizeof want, "%s/kernels-sm_90-k1-", dir);
  if (strncmp(p1, want, strlen(want)) != 0) return 2;
  if (!tfe__gpu_cache_path(p2, sizeof p2, "sm_90", TFE__GK_F64, "source two") || !strcmp(p1, p2)) return 3;
  static const char img[] = "a kernel image of more than sixteen bytes";
  if (!tfe__gpu_cache_store(p1, img, sizeof img)) return 4;
  char *back = tfe__gpu_cache_load(p1);
  bool same = back && memcmp(back, img, sizeof img) == 0;
  free(back);
  remove(p1);
  if (!same) return 5;
  if (tfe__gpu_cache_load(p2)) return 6;
  setenv("TFE_GPU_KERNEL_CACHE", "0", 1);
  if (tfe__gpu_cache_path(p1, sizeof p1, "sm_90", TFE__GK_F64, "source one")) return 7;
  setenv("TFE_GPU_KERNEL_CACHE", "", 1);
  setenv("XDG_CACHE_HOME", dir, 1);
  snprintf(want, sizeof want, "%s/tenferro/kernels-", dir);
  if (!tfe__gpu_cache_path(p1, sizeof p1, "sm_90", TFE__GK_F64, "x") || strncmp(p1, want, strlen(want)) != 0) return 8;
  setenv("XDG_CACHE_HOME", "", 1);
  return 0;
}
