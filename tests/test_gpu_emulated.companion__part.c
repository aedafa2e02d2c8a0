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
enum { EMU_UNARY, EMU_PERM, EMU_SCALE, EMU_EW, EMU_EWRED, EMU_GSMALL, EMU_EWN, EMU_PERMW, EMU_PERMB, EMU_NFN };
/* tfe_gemm_small (kernels.h): C[i,j,q] = alpha sum_l A(i,l,q) B(l,j,q) + beta C[i,j,q] */
static void emu_gsmall(int g, char *c, const char *a, const char *b, const tfe__gg_sparams *p) {
  const size_t es = g == TFE__GK_F32 ? 4 : g == TFE__GK_C128 ? 16 : 8;
  emu_c al = {p->alpha_re, p->alpha_im}, be = {p->beta_re, p->beta_im};
  for (int q = 0; q < p->nb; q++)
    for (int j = 0; j < p->n; j++)
      for (int i = 0; i < p->m; i++) {
        emu_c s = {0, 0};
        for (int l = 0; l < p->k; l++) {
          emu_c u = emu_ld(g, a + (size_t)((long long)i * p->ars + (long long)l * p->acs + (long long)q * p->abs_) * es);
          emu_c v = emu_ld(g, b + (size_t)((long long)l * p->brs + (long long)j * p->bcs + (long long)q * p->bbs) * es);
          if (p->ca) u.im = -u.im;
          if (p->cb) v.im = -v.im;
          s = emu_add(s, emu_mul(u, v));
        }
        char *cp = c + (size_t)(i + (long long)j * p->ldc + (long long)q * p->cbs) * es;
        emu_c r = emu_mul(al, s);
        if (!p->beta_zero) r = emu_add(r, emu_mul(be, emu_ld(g, cp)));
        emu_st(g, cp, r);
      }
}
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
/* The kernels' fdiv (kernels.h): (umulhi(n, m) + n) >> s, in 32-bit arithmetic as on the device. */
static unsigned emu_fdiv(unsigned n, unsigned m, unsigned sh) {
  return ((unsigned)(((unsigned long long)n * m) >> 32) + n) >> sh;
}
/* tfe_ew's eplace and tfe_tew's tplace (P: their parameter block): element i's offsets in d, a
 * and b, by magic numbers when p->fast, as the kernels do */
#define EMU_PLACE(p, i, od, oa, ob)                                                                                  \
  do {                                                                                                               \
    long long i_ = (i);                                                                                              \
    unsigned u_ = (unsigned)i_;                                                                                      \
    od = oa = ob = 0;                                                                                                \
    for (int k_ = 0; k_ < (p)->nout; k_++) {                                                                         \
      long long x_;                                                                                                  \
      if ((p)->fast) {                                                                                               \
        unsigned v_ = k_ + 1 < (p)->nout ? emu_fdiv(u_, (p)->mg[k_], (p)->sh[k_]) : 0u;                              \
        x_ = (long long)(u_ - v_ * (unsigned)(p)->dout[k_]), u_ = v_;                                                \
      } else x_ = i_ % (p)->dout[k_], i_ /= (p)->dout[k_];                                                           \
      od += x_ * (p)->sd[k_], oa += x_ * (p)->sa[k_], ob += x_ * (p)->sb[k_];                                        \
    }                                                                                                                \
  } while (0)
static void emu_ew(int g, char *d, const char *a, const char *b, const tfe__gpu_eparams *p) {
  size_t es = emu_es[g];
  double complex s0 = emu_z(p->s0_re, p->s0_im), s1 = emu_z(p->s1_re, p->s1_im);
  for (long long i = 0; i < p->total; i++) {
    long long od, oa, ob;
    EMU_PLACE(p, i, od, oa, ob);
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
    case TFE__GPU_EW_CTR: { /* the contraction of gemm.h's tfe__gpu_ctr */
      double complex acc = 0;
      for (long long t = 0; t < p->nsum_total; t++) {
        long long u = t, xa = 0, xb = 0;
        for (int k = 0; k < p->nsum; k++) xa += u % p->dsum[k] * p->ssum[k], xb += u % p->dsum[k] * p->ssb[k], u /= p->dsum[k];
        acc += emu_ldz(g, ap + xa * (long long)es, p->cja) * emu_ldz(g, bp + xb * (long long)es, p->cjb);
      }
      r = s0 * acc + (p->s1_zero ? 0 : s1 * emu_ldz(g, dp, p->cjd));
      break;
    }
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

/* tfe_tgemm_*, tfe_tew_* (tropical.h): handles 1000 + 12 * kind + 4 * (semiring - 1) + variant
 * (TFE__TV_GEMM, _ARG, _EW, _EWRED) */
static void emu_tgemm(int h, char *c, const char *a, const char *b, long long *idx, const tfe__gpu_gparams *p,
                      unsigned batch) {
  int g = h / 12, s = h % 12 / 4 + 1, arg = h % 4 == TFE__TV_ARG;
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

/* tfe_tew_<s> / tfe_tew_red_<s>: the CPU's semiring rules (core/semiring_tpl.h) on doubles */
static double emu_tzero(int s) { return s == 1 ? -INFINITY : s == 2 ? INFINITY : 0; }
static double emu_tadd(int s, double a, double b) { return s == 2 ? (a <= b || isnan(a) ? a : b) : (a >= b || isnan(a) ? a : b); }
static double emu_tmul(int s, double a, double b) {
  if (a == emu_tzero(s) || b == emu_tzero(s)) return emu_tzero(s);
  return s == 3 ? a * b : a + b;
}
static double emu_tfold(int s, int f, double a, double b) {
  if (f == TFE__TF_MUL) return emu_tmul(s, a, b);
  if (f == TFE__TF_MAX) return a > b || isnan(a) ? a : b;
  if (f == TFE__TF_MIN) return a < b || isnan(a) ? a : b;
  return emu_tadd(s, a, b);
}
static double emu_tid(int s, int f) {
  return f == TFE__TF_MUL ? (s == 3 ? 1 : 0) : f == TFE__TF_MAX ? -INFINITY : f == TFE__TF_MIN ? INFINITY : emu_tzero(s);
}
static void emu_tew(int h, void **args, bool red) {
  int g = h / 12, s = h % 12 / 4 + 1;
  size_t es = emu_es[g];
  char *d = (char *)(uintptr_t) * (tfe__cu_ptr *)args[0];
  const char *a = (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], *b = (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2];
  char *w = red ? (char *)(uintptr_t) * (tfe__cu_ptr *)args[3] : NULL;
  const tfe__gpu_tparams *p = (const tfe__gpu_tparams *)args[red ? 4 : 3];
  int f = p->op == TFE__TOP_REDUCE ? p->code : TFE__TF_ADD;
  for (long long i = 0; i < p->total; i++) {
    long long od, oa, ob;
    EMU_PLACE(p, i, od, oa, ob);
    char *dp = d + od * (long long)es;
    /* only what the op reads: a and b may be smaller than the output's index range (a fill, a
     * reduction's summed operand, a unary op's unused b) */
    bool rx = p->op == TFE__TOP_COPY || p->op == TFE__TOP_ZIP || p->op == TFE__TOP_AXPBY, ry = p->op == TFE__TOP_ZIP;
    double x = rx ? emu_ld(g, a + oa * (long long)es).re : 0, y = ry ? emu_ld(g, b + ob * (long long)es).re : 0, r = 0;
    long long nch = red ? p->nchunk : 1, chunk = red ? p->chunk : p->nsum_total;
    switch (p->op) {
    case TFE__TOP_COPY: r = x; break;
    case TFE__TOP_FILL: r = p->s0; break;
    case TFE__TOP_SCALE: r = emu_tmul(s, p->s0, emu_ld(g, dp).re); break;
    case TFE__TOP_ZIP: r = p->code == TFE__TF_ADD ? emu_tadd(s, x, y) : p->code == TFE__TF_MUL ? emu_tmul(s, x, y) : emu_tfold(s, p->code, x, y); break;
    case TFE__TOP_AXPBY: r = x; break;
    default:
      for (long long c = 0; c < nch; c++) {
        double acc = p->op == TFE__TOP_REDUCE ? emu_tid(s, f) : emu_tzero(s);
        long long t1 = (c + 1) * chunk < p->nsum_total ? (c + 1) * chunk : p->nsum_total;
        for (long long t = c * chunk; t < t1; t++) {
          long long u = t, xa = 0, xb = 0;
          for (int k = 0; k < p->nsum; k++) xa += u % p->dsum[k] * p->ssa[k], xb += u % p->dsum[k] * p->ssb[k], u /= p->dsum[k];
          double va = emu_ld(g, a + (oa + xa) * (long long)es).re;
          double vb = p->op == TFE__TOP_REDUCE ? 0 : emu_ld(g, b + (ob + xb) * (long long)es).re;
          acc = p->op == TFE__TOP_REDUCE ? emu_tfold(s, f, acc, va) : emu_tadd(s, acc, emu_tmul(s, va, vb));
        }
        if (red && p->partial) {
          emu_c v = {acc, 0};
          emu_st(g, w + (i * p->nchunk + c) * (long long)es, v);
        }
        r = acc;
      }
      if (red && p->partial) continue;
    }
    if (p->op == TFE__TOP_AXPBY || p->op == TFE__TOP_REDUCE || p->op == TFE__TOP_CONTRACT) {
      r = emu_tmul(s, p->s0, r);
      if (!p->s1_zero) r = emu_tadd(s, r, emu_tmul(s, p->s1, emu_ld(g, dp).re));
    }
    emu_c v = {r, 0};
    emu_st(g, dp, v);
  }
}

/* tfe_ewn (ZIPN): the fold over p->nin inputs, placed by magic numbers when p->fast */
static int emu_ewn_launches;
int tu_gpu_emu_ewn_launches(void);
int tu_gpu_emu_ewn_launches(void) { return emu_ewn_launches; }
static int emu_permw_launches; /* tfe_perm2d_w, the tiles of 513-576 threads */
int tu_gpu_emu_permw_launches(void);
int tu_gpu_emu_permw_launches(void) { return emu_permw_launches; }
int tu_gpu_perm_big(int big); /* as in test_gpu_conformance.companion__part.c */
int tu_gpu_perm_big(int big) {
  int was = tfe__gperm_cfg.big;
  tfe__gperm_cfg.big = big;
  return was;
}
static int emu_permb_launches; /* tfe_perm2d_b, the tiles in opt-in shared memory */
int tu_gpu_emu_permb_launches(void);
int tu_gpu_emu_permb_launches(void) { return emu_permb_launches; }
static void emu_ewn(int g, char *d, const tfe__gpu_enparams *p) {
  size_t es = emu_es[g];
  emu_ewn_launches++;
  for (long long i = 0; i < p->total; i++) {
    long long od = 0, o[TFE_EW_MAXIN] = {0}, ii = i;
    unsigned u = (unsigned)i;
    for (int k = 0; k < p->nout; k++) {
      long long x;
      if (p->fast) {
        unsigned v = k + 1 < p->nout ? emu_fdiv(u, p->mg[k], p->sh[k]) : 0u;
        x = (long long)(u - v * (unsigned)p->dout[k]), u = v;
      } else x = ii % p->dout[k], ii /= p->dout[k];
      od += x * p->sd[k];
      for (int j = 0; j < p->nin; j++) o[j] += x * p->s[j][k];
    }
    double complex r = 0;
    for (int j = 0; j < p->nin; j++) {
      double complex x = emu_ldz(g, (const char *)(uintptr_t)p->in[j] + o[j] * (long long)es, p->cj >> j & 1);
      r = j == 0 ? x : j >= 2 && (p->flip >> j & 1) ? emu_bin(p->code, x, r) : emu_bin(p->code, r, x);
    }
    emu_stz(g, d + od * (long long)es, r, p->cjd);
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

/* ---- the linalg slot's helper kernels (solver.h): handles 3000 + 8 * kind + which ------------- */
static void emu_la(int g, int which, void **args) {
  size_t es = emu_es[g];
  emu_c one = {1, 0}, zero = {0, 0};
  if (which == TFE__GPU_LA_TRI) {
    char *o = (char *)(uintptr_t) * (tfe__cu_ptr *)args[0];
    const char *s = (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1];
    const tfe__la_tparams *p = (const tfe__la_tparams *)args[2];
    for (long long b = 0; b < p->nb; b++)
      for (long long c = 0; c < p->n; c++)
        for (long long r = 0; r < p->m; r++) {
          bool k = p->keep == 1 ? r <= c : p->keep == 2 ? r >= c : p->keep == 3 ? r > c : p->keep == 4;
          emu_c v = k ? emu_ld(g, s + (b * p->sbs + r + c * p->lds) * (long long)es) : zero;
          if (p->unit && r == c) v = one;
          emu_st(g, o + (b * p->sbo + r + c * p->ldo) * (long long)es, v);
        }
  } else if (which == TFE__GPU_LA_PHASE) {
    char *ph = (char *)(uintptr_t) * (tfe__cu_ptr *)args[0];
    const char *r = (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1];
    const tfe__la_gparams *p = (const tfe__la_gparams *)args[2];
    for (long long i = 0; i < p->k * p->nb; i++) {
      long long j = i % p->k, b = i / p->k;
      emu_c x = emu_ld(g, r + (b * p->kq * p->n + j + j * p->kq) * (long long)es);
      double a = hypot(x.re, x.im);
      emu_c v = {a > 0 ? x.re / a : 1, a > 0 ? x.im / a : 0};
      emu_st(g, ph + i * (long long)es, v);
    }
  } else if (which == TFE__GPU_LA_GAUGE) {
    char *q = (char *)(uintptr_t) * (tfe__cu_ptr *)args[0], *r = (char *)(uintptr_t) * (tfe__cu_ptr *)args[1];
    const char *ph = (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2];
    const tfe__la_gparams *p = (const tfe__la_gparams *)args[3];
    for (long long b = 0; b < p->nb; b++)
      for (long long j = 0; j < p->k; j++) {
        emu_c f = emu_ld(g, ph + (b * p->k + j) * (long long)es), fc = {f.re, -f.im};
        for (long long i = 0; i < p->m; i++) {
          char *x = q + (b * p->m * p->kq + i + j * p->m) * (long long)es;
          emu_st(g, x, emu_mul(emu_ld(g, x), f));
        }
        for (long long c = j; c < p->n; c++) {
          char *x = r + (b * p->kq * p->n + j + c * p->kq) * (long long)es;
          emu_c v = emu_mul(emu_ld(g, x), fc);
          if (c == j) v.re = hypot(v.re, v.im), v.im = 0;
          emu_st(g, x, v);
        }
      }
  } else if (which == TFE__GPU_LA_PERM) {
    long long *perm = (long long *)(uintptr_t) * (tfe__cu_ptr *)args[0];
    const long long *ipiv = (const long long *)(uintptr_t) * (tfe__cu_ptr *)args[1];
    long long m = *(long long *)args[2], k = *(long long *)args[3], nb = *(long long *)args[4];
    for (long long b = 0; b < nb; b++) {
      long long *p = perm + b * m;
      for (long long t = 0; t < m; t++) p[t] = t;
      for (long long t = 0; t < k; t++) {
        long long o = ipiv[b * k + t] - 1, x = p[t];
        p[t] = p[o], p[o] = x;
      }
    }
  } else {
    int *flag = (int *)(uintptr_t) * (tfe__cu_ptr *)args[0];
    const char *a = (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1];
    const tfe__gpu_kparams *p = (const tfe__gpu_kparams *)args[2];
    for (long long i = 0; i < p->total; i++) {
      long long q = i, oa = 0;
      for (int d = 0; d < p->nout; d++) oa += q % p->dout[d] * p->sa[d], q /= p->dout[d];
      emu_c v = emu_ld(g, a + oa * (long long)es);
      if (!isfinite(v.re) || !isfinite(v.im)) *flag = 1;
    }
  }
}

/* Function handles are small integers: 1 + EMU_NFN * kind + which. */
static tfe__cu_result emu_launch_now(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  (void)gx, (void)gy, (void)bx, (void)by, (void)bz, (void)shm, (void)s, (void)extra;
  int h = (int)(uintptr_t)f - 1, g = h / EMU_NFN, which = h % EMU_NFN;
  char *c = (char *)(uintptr_t) * (tfe__cu_ptr *)args[0];
  if (h >= 2999) {
    emu_la((h - 2999) / 8, (h - 2999) % 8, args);
    return 0;
  }
  if (h >= 999 && (h - 999) % 4 >= TFE__TV_EW) {
    emu_tew(h - 999, args, (h - 999) % 4 == TFE__TV_EWRED);
    return 0;
  }
  if (h >= 999) {
    emu_tgemm(h - 999, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
              (long long *)(uintptr_t) * (tfe__cu_ptr *)args[3], (const tfe__gpu_gparams *)args[4], gz);
    return 0;
  }
  if (which == EMU_GSMALL)
    emu_gsmall(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
               (const tfe__gg_sparams *)args[3]);
  else if (which == EMU_EWN) emu_ewn(g, c, (const tfe__gpu_enparams *)args[1]);
  else if (which == EMU_EWRED && ((const tfe__gpu_eparams *)args[3])->partial)
    emu_ew_partial(g, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
                   (const tfe__gpu_eparams *)args[3]);
  else if (which == EMU_EW || which == EMU_EWRED)
    emu_ew(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const char *)(uintptr_t) * (tfe__cu_ptr *)args[2],
           (const tfe__gpu_eparams *)args[3]);
  else if (which == EMU_SCALE) emu_unary(g, c, NULL, (const tfe__gpu_kparams *)args[1], true);
  else if (which == EMU_PERMW) emu_permw_launches++, emu_unary(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const tfe__gpu_kparams *)args[2], false);
  else if (which == EMU_PERMB) emu_permb_launches++, emu_unary(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const tfe__gpu_kparams *)args[2], false);
  else emu_unary(g, c, (const char *)(uintptr_t) * (tfe__cu_ptr *)args[1], (const tfe__gpu_kparams *)args[2], false);
  return 0;
}

/* ---- CUDA graphs: work queued on a stream under capture is recorded (its arguments copied by
 * value, as the driver and cuBLAS do), not run; a graph launch runs the records in order ---- */
typedef struct emu_rec {
  int what; /* 0 kernel, 1 device copy, 2 GEMM */
  tfe__cu_function f;
  unsigned g[6];
  int nargs;
  size_t off[6];
  unsigned char blob[4096]; /* the kernel's arguments by value; a GEMM's scalars */
  tfe__cu_ptr d, a;
  size_t n;
  int gk, ta, tb, m, nn, k, lda, ldb, ldc, batch;
  long long sa, sb, sc;
  const void *A, *B;
  void *C;
} emu_rec;
typedef struct emu_graph { int n, cap; emu_rec *r; } emu_graph;
static pthread_mutex_t emu_cap_mu = PTHREAD_MUTEX_INITIALIZER;
static tfe__cu_stream emu_cap_stream; /* the stream under capture, NULL: none */
static emu_graph *emu_cap_graph;
static int emu_graph_launches, emu_captures;
int tu_gpu_emu_graph_launches(void);
int tu_gpu_emu_graph_launches(void) { return emu_graph_launches; }
int tu_gpu_emu_captures(void);
int tu_gpu_emu_captures(void) { return emu_captures; }
/* A new record of the capture on stream s, or NULL when s is not under capture. */
static emu_rec *emu_capturing(tfe__cu_stream s) {
  pthread_mutex_lock(&emu_cap_mu);
  emu_rec *r = NULL;
  if (emu_cap_stream && s == emu_cap_stream) {
    emu_graph *G = emu_cap_graph;
    if (G->n == G->cap) {
      int cap = G->cap ? 2 * G->cap : 16;
      emu_rec *v = (emu_rec *)realloc(G->r, (size_t)cap * sizeof *v);
      if (!v) abort();
      G->r = v, G->cap = cap;
    }
    r = &G->r[G->n++];
    memset(r, 0, sizeof *r);
  }
  pthread_mutex_unlock(&emu_cap_mu);
  return r;
}
static tfe__cu_result emu_launch(tfe__cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shm, tfe__cu_stream s, void **args, void **extra) {
  emu_rec *r = emu_capturing(s);
  if (!r) return emu_launch_now(f, gx, gy, gz, bx, by, bz, shm, s, args, extra);
  int h = (int)(uintptr_t)f - 1, which = h % EMU_NFN;
  size_t sz[6];
  int n;
  if (h >= 2999) return 900; /* the linalg helpers: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED here */
  if (h >= 999) n = 5, sz[0] = sz[1] = sz[2] = sz[3] = sizeof(tfe__cu_ptr), sz[4] = sizeof(tfe__gpu_gparams);
  else if (which == EMU_EW || which == EMU_EWRED)
    n = 4, sz[0] = sz[1] = sz[2] = sizeof(tfe__cu_ptr), sz[3] = sizeof(tfe__gpu_eparams);
  else if (which == EMU_GSMALL) n = 4, sz[0] = sz[1] = sz[2] = sizeof(tfe__cu_ptr), sz[3] = sizeof(tfe__gg_sparams);
  else if (which == EMU_EWN) n = 2, sz[0] = sizeof(tfe__cu_ptr), sz[1] = sizeof(tfe__gpu_enparams);
  else if (which == EMU_SCALE) n = 2, sz[0] = sizeof(tfe__cu_ptr), sz[1] = sizeof(tfe__gpu_kparams);
  else n = 3, sz[0] = sz[1] = sizeof(tfe__cu_ptr), sz[2] = sizeof(tfe__gpu_kparams);
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    at = (at + 15) / 16 * 16;
    if (at + sz[i] > sizeof r->blob) abort();
    r->off[i] = at;
    memcpy(r->blob + at, args[i], sz[i]);
    at += sz[i];
  }
  r->what = 0, r->f = f, r->nargs = n;
  r->g[0] = gx, r->g[1] = gy, r->g[2] = gz, r->g[3] = bx, r->g[4] = by, r->g[5] = bz;
  return 0;
}
static tfe__cu_result emu_dtod(tfe__cu_ptr d, tfe__cu_ptr a, size_t n, tfe__cu_stream s) {
  emu_rec *r = emu_capturing(s);
  if (r) {
    r->what = 1, r->d = d, r->a = a, r->n = n;
    return 0;
  }
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)a, n);
  return 0;
}
static tfe__cu_result emu_begin_capture(tfe__cu_stream s, int mode) {
  if (mode != TFE__CU_STREAM_CAPTURE_MODE_RELAXED) return 1;
  pthread_mutex_lock(&emu_cap_mu);
  tfe__cu_result r = 0;
  if (emu_cap_stream) r = 900; /* one capture at a time here */
  else if (!(emu_cap_graph = (emu_graph *)calloc(1, sizeof *emu_cap_graph))) r = 2;
  else emu_cap_stream = s;
  pthread_mutex_unlock(&emu_cap_mu);
  return r;
}
static tfe__cu_result emu_graph_destroy(tfe__cu_graph g) {
  emu_graph *G = (emu_graph *)(void *)g;
  free(G->r), free(G);
  return 0;
}
static int emu_cap_fail;
void tu_gpu_emu_capture_fail(int on);
void tu_gpu_emu_capture_fail(int on) { emu_cap_fail = on; }
static tfe__cu_result emu_end_capture(tfe__cu_stream s, tfe__cu_graph *g) {
  pthread_mutex_lock(&emu_cap_mu);
  tfe__cu_result r = 0;
  if (s != emu_cap_stream) r = 1;
  else if (emu_cap_fail) { /* as a capture invalidated by a call it cannot hold: no graph */
    emu_graph_destroy((tfe__cu_graph)(void *)emu_cap_graph);
    emu_cap_graph = NULL, emu_cap_stream = NULL;
    *g = NULL;
    r = 901; /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
  } else {
    *g = (tfe__cu_graph)(void *)emu_cap_graph;
    emu_cap_graph = NULL, emu_cap_stream = NULL;
    emu_captures++;
  }
  pthread_mutex_unlock(&emu_cap_mu);
  return r;
}
static tfe__cu_result emu_instantiate(tfe__cu_graph_exec *x, tfe__cu_graph g, unsigned long long flags) {
  (void)flags;
  emu_graph *G = (emu_graph *)(void *)g, *X = (emu_graph *)calloc(1, sizeof *X);
  if (!X || (G->n && !(X->r = (emu_rec *)malloc((size_t)G->n * sizeof *X->r)))) {
    free(X);
    return 2;
  }
  if (G->n) memcpy(X->r, G->r, (size_t)G->n * sizeof *X->r);
  X->n = X->cap = G->n;
  *x = (tfe__cu_graph_exec)(void *)X;
  return 0;
}
static tfe__cu_result emu_exec_destroy(tfe__cu_graph_exec x) { return emu_graph_destroy((tfe__cu_graph)(void *)x); }
static tfe__blas_status emu_gemm(int g, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int lda,
                                 long long sa, const void *B, int ldb, long long sb, const void *beta, void *C, int ldc,
                                 long long sc, int batch);
static tfe__cu_result emu_graph_launch(tfe__cu_graph_exec x, tfe__cu_stream s) {
  emu_graph *X = (emu_graph *)(void *)x;
  if (emu_capturing(s)) return 900; /* not recorded into another capture here */
  for (int i = 0; i < X->n; i++) {
    emu_rec *r = &X->r[i];
    if (r->what == 1) memmove((void *)(uintptr_t)r->d, (const void *)(uintptr_t)r->a, r->n);
    else if (r->what == 2)
      emu_gemm(r->gk, r->ta, r->tb, r->m, r->nn, r->k, r->blob, r->A, r->lda, r->sa, r->B, r->ldb, r->sb, r->blob + 16, r->C,
               r->ldc, r->sc, r->batch);
    else {
      void *args[6];
      for (int j = 0; j < r->nargs; j++) args[j] = r->blob + r->off[j];
      emu_launch_now(r->f, r->g[0], r->g[1], r->g[2], r->g[3], r->g[4], r->g[5], 0, s, args, NULL);
    }
  }
  emu_graph_launches++;
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
/* Handles know their stream (emu_blas_stream): a GEMM on a stream under capture is recorded. */
typedef struct emu_blas { tfe__cu_stream s; } emu_blas;
static tfe__blas_status emu_gemm_q(tfe__blas_handle h, int g, int ta, int tb, int m, int n, int k, const void *al,
                                   const void *A, int lda, long long sa, const void *B, int ldb, long long sb,
                                   const void *be, void *C, int ldc, long long sc, int batch) {
  emu_rec *r = emu_capturing(((emu_blas *)(void *)h)->s);
  if (!r) return emu_gemm(g, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch);
  memcpy(r->blob, al, emu_es[g]), memcpy(r->blob + 16, be, emu_es[g]);
  r->what = 2, r->gk = g, r->ta = ta, r->tb = tb, r->m = m, r->nn = n, r->k = k, r->lda = lda, r->ldb = ldb;
  r->ldc = ldc, r->batch = batch, r->sa = sa, r->sb = sb, r->sc = sc, r->A = A, r->B = B, r->C = C;
  return 0;
}
#define EMU_GEMM(name, g)                                                                                         \
  static tfe__blas_status name(tfe__blas_handle h, int ta, int tb, int m, int n, int k, const void *al, const void *A, \
                               int lda, long long sa, const void *B, int ldb, long long sb, const void *be, void *C,  \
                               int ldc, long long sc, int batch) {                                                   \
    return emu_gemm_q(h, g, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch);                   \
  }
EMU_GEMM(emu_sgemm, TFE__GK_F32)
EMU_GEMM(emu_dgemm, TFE__GK_F64)
EMU_GEMM(emu_cgemm, TFE__GK_C64)
EMU_GEMM(emu_zgemm, TFE__GK_C128)

/* ---- cuBLAS's batched trsm (left side): op(A) X = alpha B per item, A and B by address arrays ------- */
static emu_c emu_div(emu_c a, emu_c b) {
  double d = b.re * b.re + b.im * b.im;
  emu_c r = {(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d};
  return r;
}
static int emu_ntrsm;
int tu_gpu_emu_trsm_calls(void);
int tu_gpu_emu_trsm_calls(void) { return emu_ntrsm; }
static tfe__blas_status emu_trsm(int g, int side, int uplo, int op, int diag, int m, int n, const void *alpha,
                                 const void *const *Aa, int lda, void *const *Ba, int ldb, int batch) {
  if (side != TFE__BLAS_SIDE_LEFT || lda < m || ldb < m) return 7; /* CUBLAS_STATUS_INVALID_VALUE */
  __atomic_fetch_add(&emu_ntrsm, 1, __ATOMIC_RELAXED);
  size_t es = emu_es[g];
  emu_c al = emu_ld(g, (const char *)alpha);
  /* op(A) is lower when (uplo lower) == (op N) */
  bool low = (uplo == TFE__BLAS_FILL_LOWER) == (op == TFE__BLAS_OP_N);
  for (int b = 0; b < batch; b++) {
    const char *A = (const char *)Aa[b];
    char *B = (char *)Ba[b];
    for (int j = 0; j < n; j++)
      for (int t = 0; t < m; t++) {
        int i = low ? t : m - 1 - t;
        emu_c s = emu_mul(al, emu_ld(g, B + (size_t)(i + (long long)j * ldb) * es));
        for (int q = 0; q < m; q++) {
          if (low ? q >= i : q <= i) continue;
          emu_c a = emu_op(g, A, op, lda, i, q), x = emu_ld(g, B + (size_t)(q + (long long)j * ldb) * es);
          emu_c p = emu_mul(a, x);
          s.re -= p.re, s.im -= p.im;
        }
        if (diag != TFE__BLAS_DIAG_UNIT) s = emu_div(s, emu_op(g, A, op, lda, i, i));
        emu_st(g, B + (size_t)(i + (long long)j * ldb) * es, s);
      }
  }
  return 0;
}
#define EMU_TRSM(name, g)                                                                                          \
  static tfe__blas_status name(tfe__blas_handle h, int side, int uplo, int op, int diag, int m, int n, const void *al, \
                               const void *const *A, int lda, void *const *B, int ldb, int batch) {                  \
    (void)h;                                                                                                       \
    return emu_trsm(g, side, uplo, op, diag, m, n, al, A, lda, B, ldb, batch);                                     \
  }
EMU_TRSM(emu_strsm, TFE__GK_F32)
EMU_TRSM(emu_dtrsm, TFE__GK_F64)
EMU_TRSM(emu_ctrsm, TFE__GK_C64)
EMU_TRSM(emu_ztrsm, TFE__GK_C128)

/* ---- cuSOLVER on LAPACKE: the same calls on host memory (gesvd refuses m < n, as cuSOLVER's
 * does, so the slot's transposed path runs here too); workspaces are asked for and ignored --------- */
static int emu_sg(int t) { return t == TFE__CUDA_R_32F ? 0 : t == TFE__CUDA_R_64F ? 1 : t == TFE__CUDA_C_32F ? 2 : 3; }
static tfe__sol_status emu_sol_create(tfe__sol_handle *h) { *h = (tfe__sol_handle)(uintptr_t)1; return 0; }
static tfe__sol_status emu_sol_destroy(tfe__sol_handle h) { (void)h; return 0; }
static tfe__sol_status emu_sol_stream(tfe__sol_handle h, tfe__cu_stream s) { (void)h, (void)s; return 0; }
static tfe__sol_status emu_solp_create(tfe__sol_params *p) { *p = (tfe__sol_params)(uintptr_t)1; return 0; }
static tfe__sol_status emu_solp_destroy(tfe__sol_params p) { (void)p; return 0; }
static tfe__sol_status emu_gesvd_bs(tfe__sol_handle h, tfe__sol_params p, signed char ju, signed char jv, int64_t m,
                                    int64_t n, int ta, const void *A, int64_t lda, int ts, const void *S, int tu,
                                    const void *U, int64_t ldu, int tv, const void *V, int64_t ldv, int tc, size_t *d,
                                    size_t *hb) {
  (void)h, (void)p, (void)ju, (void)jv, (void)m, (void)n, (void)ta, (void)A, (void)lda, (void)ts, (void)S, (void)tu;
  (void)U, (void)ldu, (void)tv, (void)V, (void)ldv, (void)tc;
  *d = 96, *hb = 40;
  return 0;
}
static tfe__sol_status emu_gesvd(tfe__sol_handle h, tfe__sol_params p, signed char ju, signed char jv, int64_t m,
                                 int64_t n, int ta, void *A, int64_t lda, int ts, void *S, int tu, void *U, int64_t ldu,
                                 int tv, void *V, int64_t ldv, int tc, void *dw, size_t dn, void *hw, size_t hn,
                                 int *info) {
  (void)h, (void)p, (void)ts, (void)tu, (void)tv, (void)tc, (void)dw, (void)dn, (void)hw, (void)hn;
  if (m < n) return 3; /* CUSOLVER_STATUS_INVALID_VALUE: gesvd takes m >= n only */
  int k = (int)(m < n ? m : n);
  double *sup = malloc(sizeof(double) * (size_t)(k + 1));
  int M = (int)m, N = (int)n, la = (int)lda, lu = (int)ldu, lv = (int)ldv, r;
  switch (emu_sg(ta)) {
  case 0: r = LAPACKE_sgesvd(LAPACK_COL_MAJOR, ju, jv, M, N, A, la, S, U, lu, V, lv, (float *)sup); break;
  case 1: r = LAPACKE_dgesvd(LAPACK_COL_MAJOR, ju, jv, M, N, A, la, S, U, lu, V, lv, sup); break;
  case 2: r = LAPACKE_cgesvd(LAPACK_COL_MAJOR, ju, jv, M, N, A, la, S, U, lu, V, lv, (float *)sup); break;
  default: r = LAPACKE_zgesvd(LAPACK_COL_MAJOR, ju, jv, M, N, A, la, S, U, lu, V, lv, sup); break;
  }
  free(sup);
  *info = r;
  return 0;
}
static tfe__sol_status emu_geqrf_bs(tfe__sol_handle h, tfe__sol_params p, int64_t m, int64_t n, int ta, const void *A,
                                    int64_t lda, int tt, const void *tau, int tc, size_t *d, size_t *hb) {
  (void)h, (void)p, (void)m, (void)n, (void)ta, (void)A, (void)lda, (void)tt, (void)tau, (void)tc;
  *d = 64, *hb = 0;
  return 0;
}
static tfe__sol_status emu_geqrf(tfe__sol_handle h, tfe__sol_params p, int64_t m, int64_t n, int ta, void *A,
                                 int64_t lda, int tt, void *tau, int tc, void *dw, size_t dn, void *hw, size_t hn,
                                 int *info) {
  (void)h, (void)p, (void)tt, (void)tc, (void)dw, (void)dn, (void)hw, (void)hn;
  int M = (int)m, N = (int)n, la = (int)lda;
  switch (emu_sg(ta)) {
  case 0: *info = LAPACKE_sgeqrf(LAPACK_COL_MAJOR, M, N, A, la, tau); break;
  case 1: *info = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, M, N, A, la, tau); break;
  case 2: *info = LAPACKE_cgeqrf(LAPACK_COL_MAJOR, M, N, A, la, tau); break;
  default: *info = LAPACKE_zgeqrf(LAPACK_COL_MAJOR, M, N, A, la, tau); break;
  }
  return 0;
}
#define EMU_ORGQR(name, fn, T)                                                                                      \
  static tfe__sol_status name##_bs(tfe__sol_handle h, int m, int n, int k, const void *A, int lda, const void *tau, \
                                   int *lwork) {                                                                   \
    (void)h, (void)m, (void)n, (void)k, (void)A, (void)lda, (void)tau;                                             \
    *lwork = 7;                                                                                                    \
    return 0;                                                                                                      \
  }                                                                                                                \
  static tfe__sol_status name(tfe__sol_handle h, int m, int n, int k, void *A, int lda, const void *tau, void *w,    \
                              int lw, int *info) {                                                                 \
    (void)h, (void)w, (void)lw;                                                                                    \
    *info = fn(LAPACK_COL_MAJOR, m, n, k, (T *)A, lda, (const T *)tau);                                            \
    return 0;                                                                                                      \
  }
EMU_ORGQR(emu_sorgqr, LAPACKE_sorgqr, float)
EMU_ORGQR(emu_dorgqr, LAPACKE_dorgqr, double)
EMU_ORGQR(emu_cungqr, LAPACKE_cungqr, lapack_complex_float)
EMU_ORGQR(emu_zungqr, LAPACKE_zungqr, lapack_complex_double)
static tfe__sol_status emu_syevd_bs(tfe__sol_handle h, tfe__sol_params p, int jz, int ul, int64_t n, int ta,
                                    const void *A, int64_t lda, int tw, const void *W, int tc, size_t *d, size_t *hb) {
  (void)h, (void)p, (void)jz, (void)ul, (void)n, (void)ta, (void)A, (void)lda, (void)tw, (void)W, (void)tc;
  *d = 8, *hb = 8;
  return 0;
}
static tfe__sol_status emu_syevd(tfe__sol_handle h, tfe__sol_params p, int jz, int ul, int64_t n, int ta, void *A,
                                 int64_t lda, int tw, void *W, int tc, void *dw, size_t dn, void *hw, size_t hn,
                                 int *info) {
  (void)h, (void)p, (void)tw, (void)tc, (void)dw, (void)dn, (void)hw, (void)hn;
  char j = jz == TFE__SOL_EIG_VECTOR ? 'V' : 'N', u = ul == TFE__BLAS_FILL_LOWER ? 'L' : 'U';
  int N = (int)n, la = (int)lda;
  switch (emu_sg(ta)) {
  case 0: *info = LAPACKE_ssyevd(LAPACK_COL_MAJOR, j, u, N, A, la, W); break;
  case 1: *info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, j, u, N, A, la, W); break;
  case 2: *info = LAPACKE_cheevd(LAPACK_COL_MAJOR, j, u, N, A, la, W); break;
  default: *info = LAPACKE_zheevd(LAPACK_COL_MAJOR, j, u, N, A, la, W); break;
  }
  return 0;
}
static tfe__sol_status emu_geev_bs(tfe__sol_handle h, tfe__sol_params p, int jl, int jr, int64_t n, int ta,
                                   const void *A, int64_t lda, int tw, const void *W, int tl, const void *VL, int64_t ldl,
                                   int tr, const void *VR, int64_t ldr, int tc, size_t *d, size_t *hb) {
  (void)h, (void)p, (void)jl, (void)jr, (void)n, (void)ta, (void)A, (void)lda, (void)tw, (void)W, (void)tl, (void)VL;
  (void)ldl, (void)tr, (void)VR, (void)ldr, (void)tc;
  *d = 24, *hb = 16;
  return 0;
}
static int emu_geev_calls;
static tfe__sol_status emu_geev(tfe__sol_handle h, tfe__sol_params p, int jl, int jr, int64_t n, int ta, void *A,
                                int64_t lda, int tw, void *W, int tl, void *VL, int64_t ldl, int tr, void *VR, int64_t ldr,
                                int tc, void *dw, size_t dn, void *hw, size_t hn, int *info) {
  (void)h, (void)p, (void)tw, (void)tl, (void)tr, (void)tc, (void)dw, (void)dn, (void)hw, (void)hn;
  if (jl != TFE__SOL_EIG_NOVECTOR) return 3; /* the slot never asks for left vectors */
  if (ta != tw || ta != tr || (emu_sg(ta) < 2)) return 3; /* complex kinds only (the slot's use) */
  double dummy[4] = {0, 0, 0, 0};
  char vr = jr == TFE__SOL_EIG_VECTOR ? 'V' : 'N';
  int N = (int)n, la = (int)lda, lr = (int)ldr, ll = (int)ldl;
  void *vl = VL ? VL : (void *)dummy, *vv = VR ? VR : (void *)dummy;
  __atomic_fetch_add(&emu_geev_calls, 1, __ATOMIC_RELAXED);
  if (emu_sg(ta) == 2) *info = LAPACKE_cgeev(LAPACK_COL_MAJOR, 'N', vr, N, A, la, W, vl, ll, vv, lr);
  else *info = LAPACKE_zgeev(LAPACK_COL_MAJOR, 'N', vr, N, A, la, W, vl, ll, vv, lr);
  return 0;
}
/* The number of cusolverDnXgeev calls so far (the device's eig ran there). */
int tu_gpu_emu_geev_calls(void);
int tu_gpu_emu_geev_calls(void) { return __atomic_load_n(&emu_geev_calls, __ATOMIC_RELAXED); }
static tfe__sol_status emu_potrf_bs(tfe__sol_handle h, tfe__sol_params p, int ul, int64_t n, int ta, const void *A,
                                    int64_t lda, int tc, size_t *d, size_t *hb) {
  (void)h, (void)p, (void)ul, (void)n, (void)ta, (void)A, (void)lda, (void)tc;
  *d = 0, *hb = 0;
  return 0;
}
static tfe__sol_status emu_potrf(tfe__sol_handle h, tfe__sol_params p, int ul, int64_t n, int ta, void *A, int64_t lda,
                                 int tc, void *dw, size_t dn, void *hw, size_t hn, int *info) {
  (void)h, (void)p, (void)tc, (void)dw, (void)dn, (void)hw, (void)hn;
  char u = ul == TFE__BLAS_FILL_LOWER ? 'L' : 'U';
  int N = (int)n, la = (int)lda;
  switch (emu_sg(ta)) {
  case 0: *info = LAPACKE_spotrf(LAPACK_COL_MAJOR, u, N, A, la); break;
  case 1: *info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, u, N, A, la); break;
  case 2: *info = LAPACKE_cpotrf(LAPACK_COL_MAJOR, u, N, A, la); break;
  default: *info = LAPACKE_zpotrf(LAPACK_COL_MAJOR, u, N, A, la); break;
  }
  return 0;
}
static tfe__sol_status emu_getrf_bs(tfe__sol_handle h, tfe__sol_params p, int64_t m, int64_t n, int ta, const void *A,
                                    int64_t lda, int tc, size_t *d, size_t *hb) {
  (void)h, (void)p, (void)m, (void)n, (void)ta, (void)A, (void)lda, (void)tc;
  *d = 16, *hb = 0;
  return 0;
}
static tfe__sol_status emu_getrf(tfe__sol_handle h, tfe__sol_params p, int64_t m, int64_t n, int ta, void *A,
                                 int64_t lda, int64_t *ipiv, int tc, void *dw, size_t dn, void *hw, size_t hn, int *info) {
  (void)h, (void)p, (void)tc, (void)dw, (void)dn, (void)hw, (void)hn;
  int M = (int)m, N = (int)n, la = (int)lda, k = M < N ? M : N;
  lapack_int *iv = malloc(sizeof(lapack_int) * (size_t)(k + 1));
  switch (emu_sg(ta)) {
  case 0: *info = LAPACKE_sgetrf(LAPACK_COL_MAJOR, M, N, A, la, iv); break;
  case 1: *info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, M, N, A, la, iv); break;
  case 2: *info = LAPACKE_cgetrf(LAPACK_COL_MAJOR, M, N, A, la, iv); break;
  default: *info = LAPACKE_zgetrf(LAPACK_COL_MAJOR, M, N, A, la, iv); break;
  }
  for (int i = 0; i < k; i++) ipiv[i] = iv[i];
  free(iv);
  return 0;
}
static tfe__sol_status emu_getrs(tfe__sol_handle h, tfe__sol_params p, int tr, int64_t n, int64_t nrhs, int ta,
                                 const void *A, int64_t lda, const int64_t *ipiv, int tb, void *B, int64_t ldb, int *info) {
  (void)h, (void)p, (void)tb;
  if (tr != TFE__BLAS_OP_N) return 3;
  int N = (int)n, R = (int)nrhs;
  lapack_int *iv = malloc(sizeof(lapack_int) * (size_t)(N + 1));
  for (int i = 0; i < N; i++) iv[i] = (lapack_int)ipiv[i];
  switch (emu_sg(ta)) {
  case 0: *info = LAPACKE_sgetrs(LAPACK_COL_MAJOR, 'N', N, R, A, (int)lda, iv, B, (int)ldb); break;
  case 1: *info = LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'N', N, R, A, (int)lda, iv, B, (int)ldb); break;
  case 2: *info = LAPACKE_cgetrs(LAPACK_COL_MAJOR, 'N', N, R, A, (int)lda, iv, B, (int)ldb); break;
  default: *info = LAPACKE_zgetrs(LAPACK_COL_MAJOR, 'N', N, R, A, (int)lda, iv, B, (int)ldb); break;
  }
  free(iv);
  return 0;
}

/* ---- the driver: host memory, no-op streams and contexts --------------------------------------- */
static tfe__cu_result emu_ok_ctx(tfe__cu_ctx c) { (void)c; return 0; }
static tfe__cu_result emu_retain(tfe__cu_ctx *c, tfe__cu_device d) { (void)d; *c = (tfe__cu_ctx)(uintptr_t)1; return 0; }
static tfe__cu_result emu_release(tfe__cu_device d) { (void)d; return 0; }
static int emu_nstreams;
static tfe__cu_result emu_stream_create(tfe__cu_stream *s, unsigned f) { /* distinct handles: captures are per stream */
  (void)f;
  *s = (tfe__cu_stream)(uintptr_t)(1 + __atomic_fetch_add(&emu_nstreams, 1, __ATOMIC_RELAXED));
  return 0;
}
static tfe__cu_result emu_stream_ok(tfe__cu_stream s) { (void)s; return 0; }
static tfe__cu_result emu_stream_sync(tfe__cu_stream s) {
  pthread_mutex_lock(&emu_cap_mu);
  bool cap = emu_cap_stream && s == emu_cap_stream;
  pthread_mutex_unlock(&emu_cap_mu);
  return cap ? 900 : 0; /* not on a stream under capture */
}
static tfe__cu_result emu_alloc(tfe__cu_ptr *p, size_t n) {
  void *m = malloc(n);
  *p = (tfe__cu_ptr)(uintptr_t)m;
  return m ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
static tfe__cu_result emu_free(tfe__cu_ptr p) { free((void *)(uintptr_t)p); return 0; }
static tfe__cu_result emu_htod(tfe__cu_ptr d, const void *h, size_t n, tfe__cu_stream s) { (void)s; memcpy((void *)(uintptr_t)d, h, n); return 0; }
static tfe__cu_result emu_dtoh(void *h, tfe__cu_ptr d, size_t n, tfe__cu_stream s) { (void)s; memcpy(h, (const void *)(uintptr_t)d, n); return 0; }
static tfe__cu_result emu_unload(tfe__cu_module m) { (void)m; return 0; }
static tfe__cu_result emu_errstr(tfe__cu_result r, const char **s) { (void)r; *s = "emulated device error"; return 0; }
static tfe__cu_result emu_alloc_host(void **p, size_t n) { *p = malloc(n); return *p ? 0 : 2; }
static tfe__cu_result emu_free_host(void *p) { free(p); return 0; }
/* Events: work runs when it is queued, so an event is complete when recorded, unless the test
 * holds the device (tu_gpu_emu_hold): then events recorded stay pending (as if the queue still
 * ran the work before them) until tu_gpu_emu_hold(false) or a wait on them. */
typedef struct emu_ev { int pending; struct emu_ev *next; } emu_ev;
static pthread_mutex_t emu_ev_mu = PTHREAD_MUTEX_INITIALIZER;
static emu_ev *emu_evs;
static int emu_hold, emu_nev_live, emu_nwait;
void tu_gpu_emu_hold(int on);
/* The kernels' divisions by magic numbers (tfe__gperm_magic, fdiv) against plain division: every
 * divisor up to 4096 and 20000 random ones up to 2^31 - 1, each with the numerators at the edges
 * of its quotients and random ones below 2^31. Returns the mismatches; *checked the pairs tried. */
long tu_gpu_magic_check(long *checked);
long tu_gpu_magic_check(long *checked) {
  unsigned long long x = 88172645463325252ULL; /* xorshift64 */
  long bad = 0, n = 0;
  for (int t = 0; t < 4096 + 20000; t++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    unsigned d = t < 4096 ? (unsigned)t + 1 : (unsigned)(x % 0x7fffffffULL) + 1, m, sh;
    tfe__gperm_magic(d, &m, &sh);
    unsigned num[8] = {0, 1, d - 1, d, d + 1 <= 0x7fffffffu ? d + 1 : d, 0x7fffffffu, (unsigned)(x >> 33),
                       (unsigned)((x >> 40) % 0x7fffffffULL)};
    num[6] = num[6] / d * d, num[7] = num[7] / d * d - 1 + (num[7] < d); /* at a quotient's edges */
    for (int k = 0; k < 8; k++, n++)
      if (num[k] <= 0x7fffffffu && emu_fdiv(num[k], m, sh) != num[k] / d) bad++;
  }
  *checked = n;
  return bad;
}
int tu_gpu_emu_events(void);
int tu_gpu_emu_stream_waits(void);
void tu_gpu_emu_hold(int on) {
  pthread_mutex_lock(&emu_ev_mu);
  emu_hold = on;
  if (!on)
    for (emu_ev *e = emu_evs; e; e = e->next) e->pending = 0;
  pthread_mutex_unlock(&emu_ev_mu);
}
int tu_gpu_emu_events(void) { return emu_nev_live; }
int tu_gpu_emu_stream_waits(void) { return emu_nwait; }
static tfe__cu_result emu_ev_create(tfe__cu_event *e, unsigned f) {
  (void)f;
  emu_ev *v = (emu_ev *)calloc(1, sizeof *v);
  if (!v) return 2;
  pthread_mutex_lock(&emu_ev_mu);
  v->next = emu_evs, emu_evs = v, emu_nev_live++;
  pthread_mutex_unlock(&emu_ev_mu);
  *e = (tfe__cu_event)(void *)v;
  return 0;
}
static tfe__cu_result emu_ev_destroy(tfe__cu_event e) {
  pthread_mutex_lock(&emu_ev_mu);
  for (emu_ev **p = &emu_evs; *p; p = &(*p)->next)
    if (*p == (emu_ev *)(void *)e) { *p = (*p)->next; break; }
  emu_nev_live--;
  pthread_mutex_unlock(&emu_ev_mu);
  free((void *)e);
  return 0;
}
static tfe__cu_result emu_ev_record(tfe__cu_event e, tfe__cu_stream s) {
  (void)s;
  pthread_mutex_lock(&emu_ev_mu);
  ((emu_ev *)(void *)e)->pending = emu_hold;
  pthread_mutex_unlock(&emu_ev_mu);
  return 0;
}
static tfe__cu_result emu_ev_query(tfe__cu_event e) {
  pthread_mutex_lock(&emu_ev_mu);
  int p = ((emu_ev *)(void *)e)->pending;
  pthread_mutex_unlock(&emu_ev_mu);
  return p ? TFE__CU_ERROR_NOT_READY : 0;
}
static tfe__cu_result emu_ev_sync(tfe__cu_event e) {
  pthread_mutex_lock(&emu_ev_mu);
  ((emu_ev *)(void *)e)->pending = 0;
  pthread_mutex_unlock(&emu_ev_mu);
  return 0;
}
static tfe__cu_result emu_stream_wait(tfe__cu_stream s, tfe__cu_event e, unsigned f) {
  (void)s, (void)e, (void)f;
  __atomic_fetch_add(&emu_nwait, 1, __ATOMIC_RELAXED);
  return 0;
}
static tfe__blas_status emu_blas_create(tfe__blas_handle *h) {
  emu_blas *b = (emu_blas *)calloc(1, sizeof *b);
  *h = (tfe__blas_handle)(void *)b;
  return b ? 0 : 3;
}
static tfe__blas_status emu_blas_destroy(tfe__blas_handle h) { free((void *)h); return 0; }
static tfe__blas_status emu_blas_stream(tfe__blas_handle h, tfe__cu_stream s) { ((emu_blas *)(void *)h)->s = s; return 0; }

/* Of the device attributes only the opt-in shared memory per block (an H100's), so that
 * tfe_perm2d_b is planned; the occupancy ones stay unknown (exec.h then aims at 2048 blocks). */
static tfe__cu_result emu_attr(int *v, int attr, tfe__cu_device d) {
  (void)d;
  if (attr != 97) return 1;
  *v = 232448;
  return 0;
}
static tfe__cu_result emu_func_attr(tfe__cu_function f, int attr, int v) { (void)f; return attr == 8 && v > 0 ? 0 : 1; }
/* Registers one emulated device "cuda:0" with its kernels in place (no NVRTC). */
void tu_gpu_emulate(void) {
  pthread_mutex_lock(&tfe__gpu.lock);
  tfe__cu_api *cu = &tfe__gpu.cu;
  cu->cuDevicePrimaryCtxRetain = emu_retain, cu->cuDevicePrimaryCtxRelease = emu_release;
  cu->cuCtxSetCurrent = emu_ok_ctx, cu->cuStreamCreate = emu_stream_create, cu->cuStreamDestroy = emu_stream_ok;
  cu->cuStreamSynchronize = emu_stream_sync, cu->cuMemAlloc = emu_alloc, cu->cuMemFree = emu_free;
  cu->cuMemcpyHtoDAsync = emu_htod, cu->cuMemcpyDtoHAsync = emu_dtoh, cu->cuModuleUnload = emu_unload;
  cu->cuMemcpyDtoDAsync = emu_dtod;
  cu->cuLaunchKernel = emu_launch, cu->cuGetErrorString = emu_errstr;
  cu->cuDeviceGetAttribute = emu_attr, cu->cuFuncSetAttribute = emu_func_attr;
  cu->cuMemcpyDtoDAsync = emu_dtod, cu->cuMemAllocHost = emu_alloc_host, cu->cuMemFreeHost = emu_free_host;
  cu->cuEventCreate = emu_ev_create, cu->cuEventDestroy = emu_ev_destroy, cu->cuEventRecord = emu_ev_record;
  cu->cuEventQuery = emu_ev_query, cu->cuEventSynchronize = emu_ev_sync, cu->cuStreamWaitEvent = emu_stream_wait;
  cu->cuStreamBeginCapture = emu_begin_capture, cu->cuStreamEndCapture = emu_end_capture;
  cu->cuGraphInstantiateWithFlags = emu_instantiate, cu->cuGraphLaunch = emu_graph_launch;
  cu->cuGraphExecDestroy = emu_exec_destroy, cu->cuGraphDestroy = emu_graph_destroy;
  tfe__gpu.blas.create = emu_blas_create, tfe__gpu.blas.destroy = emu_blas_destroy, tfe__gpu.blas.set_stream = emu_blas_stream;
  tfe__gpu.blas.sgemm_sb = emu_sgemm, tfe__gpu.blas.dgemm_sb = emu_dgemm;
  tfe__gpu.blas.cgemm_sb = emu_cgemm, tfe__gpu.blas.zgemm_sb = emu_zgemm;
  tfe__gpu.blas.strsm_b = emu_strsm, tfe__gpu.blas.dtrsm_b = emu_dtrsm;
  tfe__gpu.blas.ctrsm_b = emu_ctrsm, tfe__gpu.blas.ztrsm_b = emu_ztrsm;
  tfe__cusolver_api *so = &tfe__gpu.sol;
  so->create = emu_sol_create, so->destroy = emu_sol_destroy, so->set_stream = emu_sol_stream;
  so->params_create = emu_solp_create, so->params_destroy = emu_solp_destroy;
  so->gesvd_bs = emu_gesvd_bs, so->gesvd = emu_gesvd, so->geqrf_bs = emu_geqrf_bs, so->geqrf = emu_geqrf;
  so->syevd_bs = emu_syevd_bs, so->syevd = emu_syevd, so->potrf_bs = emu_potrf_bs, so->potrf = emu_potrf;
  so->getrf_bs = emu_getrf_bs, so->getrf = emu_getrf, so->getrs = emu_getrs;
  so->geev_bs = emu_geev_bs, so->geev = emu_geev;
  so->sorgqr_bs = emu_sorgqr_bs, so->dorgqr_bs = emu_dorgqr_bs, so->cungqr_bs = emu_cungqr_bs, so->zungqr_bs = emu_zungqr_bs;
  so->sorgqr = emu_sorgqr, so->dorgqr = emu_dorgqr, so->cungqr = emu_cungqr, so->zungqr = emu_zungqr;
  tfe__gpu_dev *D = &tfe__gpu.dev[0];
  memset(D, 0, sizeof *D);
  snprintf(D->info.name, sizeof D->info.name, "emulated device");
  D->info.vendor = TFE_GPU_NVIDIA, D->info.total_mem = (size_t)1 << 30, D->info.cc_major = 9;
  pthread_mutex_init(&D->lock, NULL);
  snprintf(D->bename, sizeof D->bename, "cuda:0");
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    D->f_unary[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_UNARY);
    D->f_perm[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_PERM);
    D->f_perm_w[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_PERMW);
    D->f_perm_b[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_PERMB);
    D->f_scale[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_SCALE);
    D->f_ew[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_EW);
    D->f_ewred[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_EWRED);
    D->f_gsmall[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_GSMALL);
    D->f_ewn[g] = (tfe__cu_function)(uintptr_t)(1 + EMU_NFN * g + EMU_EWN);
    for (int k = 0; k < 12 && g <= TFE__GK_F64; k++) D->f_tgemm[g][k / 4][k % 4] = (tfe__cu_function)(uintptr_t)(1000 + 12 * g + k);
    for (int w = 0; w < TFE__GPU_LA_NFN; w++) D->f_la[g][w] = (tfe__cu_function)(uintptr_t)(3000 + 8 * g + w);
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

/* cuSOLVER absent (true) or back (false): the linalg slot's "not loaded" answer. */
void tu_gpu_solver_absent(bool absent);
void tu_gpu_solver_absent(bool absent) {
  static tfe__cusolver_api saved;
  tfe__gpu_dev *D = &tfe__gpu.dev[0];
  pthread_mutex_lock(&D->lock);
  if (absent) {
    saved = tfe__gpu.sol;
    memset(&tfe__gpu.sol, 0, sizeof tfe__gpu.sol);
    D->sol = NULL, D->solp = NULL; /* the emulated handles own nothing */
  } else
    tfe__gpu.sol = saved;
  pthread_mutex_unlock(&D->lock);
}

/* cusolverDnXgeev absent (true: a cuSOLVER before 12.6) or back (false). */
void tu_gpu_geev_absent(bool absent);
void tu_gpu_geev_absent(bool absent) {
  tfe__gpu_dev *D = &tfe__gpu.dev[0];
  pthread_mutex_lock(&D->lock);
  tfe__gpu.sol.geev_bs = absent ? NULL : emu_geev_bs;
  tfe__gpu.sol.geev = absent ? NULL : emu_geev;
  pthread_mutex_unlock(&D->lock);
}
