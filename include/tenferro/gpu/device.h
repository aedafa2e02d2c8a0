/* tenferro/gpu/device.h — gpu room, companion only: a device's first use (primary context,
 * stream, cuBLAS handle), entering and leaving it, its workspace, and the generated kernels
 * (NVRTC at first use, one module per element kind, cached per device). Parsed only inside
 * tenferro_gpu.c (TFE__GPU_COMPANION), after the loader. */
#ifndef TENFERRO_GPU_DEVICE_H
#define TENFERRO_GPU_DEVICE_H
#ifdef TFE__GPU_COMPANION

/* The kernels' parameter block: the layout of struct P in kernels.h. */
typedef struct tfe__gpu_kparams {
  long long total, nsum_total;
  int nout, nsum, beta_zero, conj, pj, pad; /* pj: tfe_perm2d's second tiled label */
  double alpha_re, alpha_im, beta_re, beta_im;
  long long dout[TFE__GPU_KMAXR], sc[TFE__GPU_KMAXR], sa[TFE__GPU_KMAXR], dsum[TFE__GPU_KMAXR],
      ssum[TFE__GPU_KMAXR];
} tfe__gpu_kparams;

/* The generated kernels' kind of a dtype, or -1 when the GPU backend does not run it. */
static int tfe__gpu_kind(tfe_dtype dt) {
  switch (dt) {
  case TFE_DT_F32: return TFE__GK_F32;
  case TFE_DT_F64: return TFE__GK_F64;
  case TFE_DT_C64: return TFE__GK_C64;
  case TFE_DT_C128: return TFE__GK_C128;
  default: return -1;
  }
}

/* First use (device lock held): the primary context, a stream, a cuBLAS handle on it. */
static tfe_status tfe__gpu_setup(tfe__gpu_dev *D, const char *where) {
  TFE__CU_TRY(tfe__gpu.cu.cuDevicePrimaryCtxRetain(&D->ctx, D->cudev), where);
  tfe__cu_result r = tfe__gpu.cu.cuCtxSetCurrent(D->ctx);
  if (r == 0) r = tfe__gpu.cu.cuStreamCreate(&D->stream, 0);
  if (r != 0) {
    tfe__gpu.cu.cuDevicePrimaryCtxRelease(D->cudev);
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s: context or stream setup failed: %s (CUDA error %d)",
                            D->bename, tfe__cu_errstr(r), r);
  }
  if (tfe__gpu.blas.create) {
    if (tfe__gpu.blas.create(&D->blas) != 0) D->blas = NULL;
    else tfe__gpu.blas.set_stream(D->blas, D->stream);
  }
  D->stream0 = D->stream;
  D->ready = true;
  return TFE_OK;
}

/* The runtime stream whose task runs on this thread (stream.h), NULL: none. */
static _Thread_local tfe__gpu_q *tfe__gpu_cur;
/* The device this thread holds for a whole sequence of calls (graph.h: from an einsum plan's
 * first step to its last), NULL: none. While held, the calls' own enter/leave are no-ops: the
 * lock is taken, the context current and the queue swapped in once for the sequence. */
static _Thread_local struct tfe__gpu_dev *tfe__gpu_held;

/* Takes the device for one call: its lock, set up, its context current on this thread; in a
 * task of one of its runtime streams, that stream's queue, cuBLAS handle and workspace are
 * swapped in (every launch reads D->stream, D->blas, D->ws) until tfe__gpu_leave. */
static tfe_status tfe__gpu_enter(tfe__gpu_dev *D, const char *where) {
  if (tfe__gpu_held == D) return TFE_OK;
  pthread_mutex_lock(&D->lock);
  tfe_status st = TFE_OK;
  if (!D->ready) st = tfe__gpu_setup(D, where);
  else {
    tfe__cu_result r = tfe__gpu.cu.cuCtxSetCurrent(D->ctx);
    if (r != 0)
      st = TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cuCtxSetCurrent(%s) failed: %s", D->bename, tfe__cu_errstr(r));
  }
  if (st != TFE_OK) {
    pthread_mutex_unlock(&D->lock);
    return st;
  }
  tfe__gpu_q *q = tfe__gpu_cur;
  if (q && q->D == D) {
    tfe__blas_handle b = D->blas;
    tfe__cu_ptr w = D->ws;
    size_t wb = D->ws_bytes;
    D->stream = q->s, D->blas = q->blas, D->ws = q->ws, D->ws_bytes = q->ws_bytes;
    q->blas = b, q->ws = w, q->ws_bytes = wb; /* the device's own, kept in q while swapped */
    D->swapped = q;
  }
  return TFE_OK;
}
static void tfe__gpu_leave(tfe__gpu_dev *D) {
  if (tfe__gpu_held == D) return;
  tfe__gpu_q *q = D->swapped;
  if (q) {
    tfe__blas_handle b = q->blas;
    tfe__cu_ptr w = q->ws;
    size_t wb = q->ws_bytes;
    q->blas = D->blas, q->ws = D->ws, q->ws_bytes = D->ws_bytes;
    D->stream = D->stream0, D->blas = b, D->ws = w, D->ws_bytes = wb;
    D->swapped = NULL;
  }
  pthread_mutex_unlock(&D->lock);
}

static tfe_status tfe__gpool_alloc(tfe__gpu_dev *D, tfe__gpool *P, size_t bytes, tfe__cu_ptr *out, const char *where);
static void tfe__gpool_free(tfe__gpu_dev *D, tfe__gpool *P, tfe__cu_ptr p);

/* At least `bytes` of workspace (device lock held). Grows only; the old block goes back to the
 * device pool locked by the queued work that may still read it (memory.h), so neither the
 * growth nor the free waits for the stream. */
static tfe_status tfe__gpu_ws(tfe__gpu_dev *D, size_t bytes, tfe__cu_ptr *out, const char *where) {
  if (bytes <= D->ws_bytes) {
    *out = D->ws;
    return TFE_OK;
  }
  size_t want = bytes + bytes / 4;
  if (D->ws) {
    tfe__gpool_free(D, &D->pool, D->ws);
    D->ws = 0;
    D->ws_bytes = 0;
  }
  TFE_TRY(tfe__gpool_alloc(D, &D->pool, want, &D->ws, where));
  D->ws_bytes = want;
  *out = D->ws;
  return TFE_OK;
}

/* ---- NVRTC ---------------------------------------------------------------------------------- */
static const char *tfe__gpu_kdefs[TFE__GK_COUNT][2] = {
    {"-DTFE_R=float", "-DTFE_CPLX=0"},
    {"-DTFE_R=double", "-DTFE_CPLX=0"},
    {"-DTFE_R=float", "-DTFE_CPLX=1"},
    {"-DTFE_R=double", "-DTFE_CPLX=1"},
};

/* A growing string (the generated kernel source). */
typedef struct tfe__gpu_sb { char *s; size_t n, cap; bool oom; } tfe__gpu_sb;
static void tfe__gpu_sb_put(tfe__gpu_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tfe__gpu_sb_put(tfe__gpu_sb *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) { b->oom = true; return; }
    if (b->s && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
    size_t cap = (b->cap + (size_t)k + 1) * 2;
    char *t = (char *)realloc(b->s, cap);
    if (!t) { b->oom = true; return; }
    b->s = t, b->cap = cap;
  }
}
/* One switch over a table: `case code: return (expr);` for each defined entry. */
static void tfe__gpu_sb_switch(tfe__gpu_sb *b, const char *head, const tfe__gpu_opsrc *tab, int n, bool cplx,
                               const char *fallback) {
  tfe__gpu_sb_put(b, "%s {\n  switch (c) {\n", head);
  for (int i = 0; i < n; i++) {
    const char *e = cplx ? tab[i].cplx : tab[i].real;
    if (e) tfe__gpu_sb_put(b, "  case %d: return (%s);\n", i, e);
  }
  tfe__gpu_sb_put(b, "  }\n  return %s;\n}\n", fallback);
}
/* The kernel source, one string (malloc'd): the fixed pieces, the complex helpers, the op
 * functions generated from the tables of kernels.h (codes as the kernel room's enums), then
 * the elementwise kernels. */
static char *tfe__gpu_source(void) {
  tfe__gpu_sb b = {NULL, 0, 0, false};
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc / sizeof *tfe__gpu_ksrc; i++) tfe__gpu_sb_put(&b, "%s", tfe__gpu_ksrc[i]);
  tfe__gpu_sb_put(&b, "%s", tfe__gpu_ksrc_cmath);
  tfe__gpu_sb_put(&b, "#define EW_COPY %d\n#define EW_FILL %d\n#define EW_SCALE %d\n#define EW_AXPBY %d\n"
                      "#define EW_MAP %d\n#define EW_ZIP %d\n#define EW_REDUCE %d\n",
                  TFE_EW_COPY, TFE_EW_FILL, TFE_EW_SCALE, TFE_EW_AXPBY, TFE_EW_MAP, TFE_EW_ZIP, TFE_EW_REDUCE);
  tfe__gpu_sb_put(&b, "#define RED_MEAN %d\n#define RED_NORM2 %d\n#define RED_NORMINF %d\n", TFE_RED_MEAN, TFE_RED_NORM2,
                  TFE_RED_NORMINF);
  for (int cplx = 1; cplx >= 0; cplx--) {
    tfe__gpu_sb_put(&b, cplx ? "#if TFE_CPLX\n" : "#else\n");
    tfe__gpu_sb_switch(&b, "__device__ T un_op(int c, T x, T p)", tfe__gpu_unop_src, TFE_UN_COUNT_, cplx, "x");
    tfe__gpu_sb_switch(&b, "__device__ T bin_op(int c, T x, T y)", tfe__gpu_binop_src, TFE_BIN_COUNT_, cplx, "x");
    tfe__gpu_sb_switch(&b, "__device__ __forceinline__ T red_comb(int c, T a, T b)", tfe__gpu_fold_src, 4, cplx, "a");
    tfe__gpu_sb_switch(&b, "__device__ __forceinline__ T red_pre(int c, T x)", tfe__gpu_pre_src, 3, cplx, "x");
  }
  tfe__gpu_sb_put(&b, "#endif\n__device__ __forceinline__ T red_id(int f) {\n"
                      "  return f == %d ? mk((R)1, (R)0) : f == %d ? mk((R)-INFINITY, (R)0) : f == %d ? mk((R)INFINITY, (R)0) : zero();\n}\n",
                  TFE__KF_MUL, TFE__KF_MAX, TFE__KF_MIN);
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc_ew / sizeof *tfe__gpu_ksrc_ew; i++) tfe__gpu_sb_put(&b, "%s", tfe__gpu_ksrc_ew[i]);
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc_trop / sizeof *tfe__gpu_ksrc_trop; i++) tfe__gpu_sb_put(&b, "%s", tfe__gpu_ksrc_trop[i]);
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc_la / sizeof *tfe__gpu_ksrc_la; i++) tfe__gpu_sb_put(&b, "%s", tfe__gpu_ksrc_la[i]);
  for (size_t i = 0; i < sizeof tfe__gpu_ksrc_gsmall / sizeof *tfe__gpu_ksrc_gsmall; i++)
    tfe__gpu_sb_put(&b, "%s", tfe__gpu_ksrc_gsmall[i]);
  if (b.oom) { free(b.s); return NULL; }
  return b.s;
}

/* The compiler's log, appended to the message (first 300 bytes). */
static tfe_status tfe__gpu_rtc_fail(tfe__rtc_prog p, tfe__rtc_result r, const char *arch, const char *where) {
  size_t n = 0;
  char log[301] = "";
  if (tfe__gpu.rtc.log_size(p, &n) == 0 && n > 1) {
    char *full = (char *)malloc(n);
    if (full && tfe__gpu.rtc.log(p, full) == 0) snprintf(log, sizeof log, "%s", full);
    free(full);
  }
  return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s could not compile the kernels for %s: %s: %s",
                          (tfe__gpu.rtc_vendor == TFE_GPU_AMD ? "HIPRTC" : "NVRTC"), arch, tfe__gpu.rtc.error_string(r), log);
}

/* Compiles the kernels of kind g for arch ("sm_90": a cubin; "compute_90": PTX; with HIPRTC a
 * gcnArchName, "gfx90a:xnack-": a code object, "": HIPRTC's default target); *image is
 * malloc'd. Needs no device. */
static tfe_status tfe__gpu_rtc_compile(const char *arch, int g, char **image, size_t *nimage, const char *where) {
  bool hip = tfe__gpu.rtc_vendor == TFE_GPU_AMD;
  if (!tfe__gpu.rtc.create)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "NVRTC is not loaded (%s): kernels cannot be generated",
                            tfe_gpu_status());
  char *src = tfe__gpu_source(), opt_arch[96];
  if (!src) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the kernel source");
  snprintf(opt_arch, sizeof opt_arch, hip ? "--offload-arch=%s" : "--gpu-architecture=%s", arch);
  const char *opts[] = {tfe__gpu_kdefs[g][0], tfe__gpu_kdefs[g][1], hip ? "-std=c++14" : "--std=c++14", opt_arch};
  int nopt = hip && !arch[0] ? 3 : 4;
  tfe__rtc_prog p = NULL;
  tfe__rtc_result r = tfe__gpu.rtc.create(&p, src, "tenferro_kernels.cu", 0, NULL, NULL);
  free(src);
  if (r != 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s: %s", hip ? "hiprtcCreateProgram" : "nvrtcCreateProgram",
                            tfe__gpu.rtc.error_string(r));
  r = tfe__gpu.rtc.compile(p, nopt, opts);
  if (r != 0) {
    tfe_status st = tfe__gpu_rtc_fail(p, r, arch, where);
    tfe__gpu.rtc.destroy(&p);
    return st;
  }
  bool cubin = hip || strncmp(arch, "sm_", 3) == 0;
  size_t n = 0;
  r = cubin ? tfe__gpu.rtc.cubin_size(p, &n) : tfe__gpu.rtc.ptx_size(p, &n);
  char *img = r == 0 ? (char *)malloc(n ? n : 1) : NULL;
  if (img) r = cubin ? tfe__gpu.rtc.cubin(p, img) : tfe__gpu.rtc.ptx(p, img);
  tfe__gpu.rtc.destroy(&p);
  if (!img || r != 0) {
    free(img);
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s gave no %s image for %s",
                            (tfe__gpu.rtc_vendor == TFE_GPU_AMD ? "HIPRTC" : "NVRTC"), hip ? "code object" : cubin ? "CUBIN" : "PTX",
                            arch);
  }
  *image = img;
  if (nimage) *nimage = cubin ? n : strlen(img) + 1;
  return TFE_OK;
}

TFE_GPU_API tfe_status tfe_gpu_compile_check(int cc_major, int cc_minor) {
  pthread_mutex_lock(&tfe__gpu.lock);
  if (tfe__gpu.rtc_vendor != TFE_GPU_NVIDIA) {
    if (tfe__gpu.api == TFE_GPU_AMD && tfe__gpu.ndev > 0) {
      pthread_mutex_unlock(&tfe__gpu.lock);
      return TFE__GPU_FAIL(TFE_ERR_UNSUPPORTED, "the HIP devices use HIPRTC's table: a process drives one vendor's GPUs");
    }
    memset(&tfe__gpu.rtc, 0, sizeof tfe__gpu.rtc), tfe__gpu.rtc_vendor = TFE_GPU_NONE;
    if (tfe__gpu_load_lib(TFE_GPU_NVIDIA, TFE_GPU_LIB_RTC, NULL, __func__) == TFE_OK) tfe__nvrtc_fill(__func__);
  }
  pthread_mutex_unlock(&tfe__gpu.lock);
  char arch[32];
  snprintf(arch, sizeof arch, "sm_%d%d", cc_major, cc_minor);
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    char *img = NULL;
    TFE_TRY(tfe__gpu_rtc_compile(arch, g, &img, NULL, __func__));
    free(img);
  }
  return TFE_OK;
}

/* The same for an AMD architecture with HIPRTC (libhiprtc, or libamdhip64 of ROCm 5). */
/* An AMD target as HIPRTC's --offload-arch takes it: "" (HIPRTC's default), or "gfx" and a
 * processor name (letters and digits), then ":feature+" / ":feature-" parts (sramecc, xnack;
 * lowercase letters, digits, '_'), at most 63 characters. Anything else (spaces, other options,
 * an empty feature, a missing sign) is refused before HIPRTC sees it. */
static bool tfe__hip_arch_ok(const char *a) {
  size_t n = strlen(a), i = 3;
  if (n == 0) return true;
  if (n > 63 || strncmp(a, "gfx", 3) != 0) return false;
  while (i < n && isalnum((unsigned char)a[i])) i++;
  if (i == 3) return false;
  while (i < n) {
    if (a[i++] != ':') return false;
    size_t f = i;
    while (i < n && (islower((unsigned char)a[i]) || isdigit((unsigned char)a[i]) || a[i] == '_')) i++;
    if (i == f || i >= n || (a[i] != '+' && a[i] != '-')) return false;
    i++;
  }
  return true;
}
TFE_GPU_API tfe_status tfe_gpu_compile_check_hip(const char *arch) {
  if (!arch) return TFE__GPU_FAIL(TFE_ERR_NULL, "argument 'arch' is NULL");
  if (!tfe__hip_arch_ok(arch))
    return TFE__GPU_FAIL(TFE_ERR_INVALID, "'%.80s' is not an AMD architecture (\"gfx90a\", \"gfx942:sramecc+:xnack-\")",
                         arch);
  pthread_mutex_lock(&tfe__gpu.lock);
  tfe_status st = tfe__hip_rtc_load(__func__);
  pthread_mutex_unlock(&tfe__gpu.lock);
  TFE_TRY(st);
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    char *img = NULL;
    TFE_TRY(tfe__gpu_rtc_compile(arch, g, &img, NULL, __func__));
    free(img);
  }
  return TFE_OK;
}

/* ---- the on-disk cache of compiled kernels ----------------------------------------------------
 * One file per (architecture, kind, driver version, NVRTC version, source hash):
 * $XDG_CACHE_HOME/tenferro/ (else ~/.cache/tenferro/) kernels-sm_90-k1-d13000-r13.0-<hash>.bin.
 * TFE_GPU_KERNEL_CACHE=0 (or off, no) turns it off; TFE_GPU_KERNEL_CACHE=<dir> puts it there.
 * A file that is missing, short or refused by the driver is recompiled and rewritten (written
 * to a temporary name, then renamed: concurrent processes never read half a file). */
static uint64_t tfe__gpu_fnv(const char *s, uint64_t h) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}
/* The cache folder in buf, or false when the cache is off or no folder can be named. */
static bool tfe__gpu_cache_dir(char *buf, size_t n) {
  const char *e = getenv("TFE_GPU_KERNEL_CACHE");
  if (e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "no") || !strcmp(e, "OFF"))) return false;
  if (e && e[0] == '/') return snprintf(buf, n, "%s", e) < (int)n;
  const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  if (x && x[0] == '/') return snprintf(buf, n, "%s/tenferro", x) < (int)n;
  if (h && h[0]) return snprintf(buf, n, "%s/.cache/tenferro", h) < (int)n;
  return false;
}
/* The file of kind g's kernels for arch (false: no cache). */
static bool tfe__gpu_cache_path(char *buf, size_t n, const char *arch, int g, const char *src) {
  char dir[TFE__GPU_PATH_MAX];
  if (!tfe__gpu_cache_dir(dir, sizeof dir)) return false;
  int maj = 0, min = 0;
  if (tfe__gpu.rtc.version) tfe__gpu.rtc.version(&maj, &min);
  uint64_t h = tfe__gpu_fnv(src, 0xcbf29ce484222325ULL);
  h = tfe__gpu_fnv(tfe__gpu_kdefs[g][0], h), h = tfe__gpu_fnv(tfe__gpu_kdefs[g][1], h);
  return snprintf(buf, n, "%s/kernels-%s-k%d-d%d-r%d.%d-%016llx.bin", dir, arch, g, tfe__gpu.driver_version, maj, min,
                  (unsigned long long)h) < (int)n;
}
static char *tfe__gpu_cache_load(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *img = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n > 16 && fseek(f, 0, SEEK_SET) == 0 && (img = (char *)malloc((size_t)n + 1)) != NULL) {
    if (fread(img, 1, (size_t)n, f) != (size_t)n) free(img), img = NULL;
    else img[n] = 0;
  }
  fclose(f);
  return img;
}
/* Creates the folders of path (mode 0700 for new ones) and writes img there atomically. */
static bool tfe__gpu_cache_store(const char *path, const char *img, size_t n) {
  char tmp[TFE__GPU_PATH_MAX + 160];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *q = tmp + 1; *q; q++)
    if (*q == '/') {
      *q = 0;
      mkdir(tmp, 0700);
      *q = '/';
    }
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return false;
  bool ok = fwrite(img, 1, n, f) == n;
  ok = fclose(f) == 0 && ok;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) remove(tmp);
  return ok;
}

/* Loads an image as kind g's module on D (device lock held). */
static tfe__cu_result tfe__gpu_module(tfe__gpu_dev *D, int g, const char *img) {
  tfe__cu_module m = NULL;
  tfe__cu_result r = tfe__gpu.cu.cuModuleLoadData(&m, img);
  if (r != 0) return r;
  if ((r = tfe__gpu.cu.cuModuleGetFunction(&D->f_unary[g], m, "tfe_unary")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_perm[g], m, "tfe_perm2d")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_perm_w[g], m, "tfe_perm2d_w")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_perm_b[g], m, "tfe_perm2d_b")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_scale[g], m, "tfe_scale")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_ew[g], m, "tfe_ew")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_ewred[g], m, "tfe_ew_red")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_ewn[g], m, "tfe_ewn")) != 0) {
    tfe__gpu.cu.cuModuleUnload(m);
    D->f_unary[g] = D->f_scale[g] = D->f_perm[g] = D->f_perm_w[g] = D->f_perm_b[g] = D->f_ew[g] = D->f_ewred[g] = NULL;
    D->f_ewn[g] = NULL;
    return r;
  }
  static const char *const la[TFE__GPU_LA_NFN] = {"tfe_la_tri", "tfe_la_phase", "tfe_la_gauge", "tfe_la_perm",
                                                  "tfe_la_finite"};
  for (int i = 0; i < TFE__GPU_LA_NFN; i++) /* the linalg slot's helpers (solver.h); NULL: refused there */
    if (tfe__gpu.cu.cuModuleGetFunction(&D->f_la[g][i], m, la[i]) != 0) D->f_la[g][i] = NULL;
  if (tfe__gpu.cu.cuModuleGetFunction(&D->f_gsmall[g], m, "tfe_gemm_small") != 0) D->f_gsmall[g] = NULL; /* gemm.h */
  for (int s = 0; s < 3 && g <= TFE__GK_F64; s++) { /* the tropical kernels of the real kinds (tropical.h) */
    static const char *const tn[4] = {"tfe_tgemm_%d", "tfe_tgemm_arg_%d", "tfe_tew_%d", "tfe_tew_red_%d"};
    for (int v = 0; v < 4; v++) {
      char nm[32];
      snprintf(nm, sizeof nm, tn[v], s + 1);
      if (tfe__gpu.cu.cuModuleGetFunction(&D->f_tgemm[g][s][v], m, nm) != 0) D->f_tgemm[g][s][v] = NULL;
    }
  }
  D->mod[g] = m;
  return 0;
}

/* The kernels of kind g on device D (device lock held): from the disk cache, else compiled
 * (a CUBIN for the device's architecture; PTX for the driver to finish when NVRTC does not
 * know it) and stored there. */
static tfe_status tfe__gpu_kernels(tfe__gpu_dev *D, int g, const char *where) {
  if (D->f_unary[g]) return TFE_OK;
  char arch[80], *img = NULL, path[TFE__GPU_PATH_MAX + 128];
  bool hip = D->info.vendor == TFE_GPU_AMD;
  if (hip) snprintf(arch, sizeof arch, "%s", D->arch);
  else snprintf(arch, sizeof arch, "sm_%d%d", D->info.cc_major, D->info.cc_minor);
  if (hip && tfe__gpu.rtc_vendor != TFE_GPU_AMD)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "HIPRTC is not loaded (%s): kernels cannot be generated",
                            tfe_gpu_status());
  char *src = tfe__gpu_source();
  bool cached = src && (!hip || arch[0]) && tfe__gpu_cache_path(path, sizeof path, arch, g, src);
  free(src);
  if (cached && (img = tfe__gpu_cache_load(path)) != NULL) {
    tfe__cu_result r = tfe__gpu_module(D, g, img);
    free(img);
    if (r == 0) {
      D->kernels_from_disk++;
      return TFE_OK;
    }
  }
  size_t n = 0;
  if (tfe__gpu_rtc_compile(arch, g, &img, &n, where) != TFE_OK) {
    if (hip) return TFE_ERR_DEVICE; /* no intermediate form to fall back on; the message is set */
    snprintf(arch, sizeof arch, "compute_%d%d", D->info.cc_major, D->info.cc_minor);
    TFE_TRY(tfe__gpu_rtc_compile(arch, g, &img, &n, where));
    cached = false; /* PTX: the driver's JIT has its own cache */
  }
  tfe__cu_result r = tfe__gpu_module(D, g, img);
  if (r == 0 && cached) tfe__gpu_cache_store(path, img, n);
  free(img);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "loading the kernels (%s): %s", arch, tfe__cu_errstr(r));
  D->kernels_compiled++;
  return TFE_OK;
}

/* Launches f over total output elements (grid-stride: at most 65535 blocks of 256). */
static tfe_status tfe__gpu_launch(tfe__gpu_dev *D, tfe__cu_function f, void **args, long long total,
                                  const char *where) {
  if (total <= 0) return TFE_OK;
  long long blocks = (total + 255) / 256;
  if (blocks > 65535) blocks = 65535;
  TFE__CU_TRY(tfe__gpu.cu.cuLaunchKernel(f, (unsigned)blocks, 1, 1, 256, 1, 1, 0, D->stream, args, NULL), where);
  return TFE_OK;
}

#endif /* TFE__GPU_COMPANION */
#endif
