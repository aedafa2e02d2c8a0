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
  D->ready = true;
  return TFE_OK;
}

/* Takes the device for one call: its lock, set up, its context current on this thread. */
static tfe_status tfe__gpu_enter(tfe__gpu_dev *D, const char *where) {
  pthread_mutex_lock(&D->lock);
  tfe_status st = TFE_OK;
  if (!D->ready) st = tfe__gpu_setup(D, where);
  else {
    tfe__cu_result r = tfe__gpu.cu.cuCtxSetCurrent(D->ctx);
    if (r != 0)
      st = TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cuCtxSetCurrent(%s) failed: %s", D->bename, tfe__cu_errstr(r));
  }
  if (st != TFE_OK) pthread_mutex_unlock(&D->lock);
  return st;
}
static void tfe__gpu_leave(tfe__gpu_dev *D) { pthread_mutex_unlock(&D->lock); }

/* At least `bytes` of workspace (device lock held). Grows only; the old block is freed after
 * the stream drains, so queued work never reads freed memory. */
static tfe_status tfe__gpu_ws(tfe__gpu_dev *D, size_t bytes, tfe__cu_ptr *out, const char *where) {
  if (bytes <= D->ws_bytes) {
    *out = D->ws;
    return TFE_OK;
  }
  size_t want = bytes + bytes / 4;
  if (D->ws) {
    TFE__CU_TRY(tfe__gpu.cu.cuStreamSynchronize(D->stream), where);
    tfe__gpu.cu.cuMemFree(D->ws);
    D->ws = 0;
    D->ws_bytes = 0;
  }
  tfe__cu_result r = tfe__gpu.cu.cuMemAlloc(&D->ws, want);
  if (r != 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "%s: %zu bytes of workspace: %s", D->bename, want, tfe__cu_errstr(r));
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

/* The kernel source, one string (malloc'd). */
static char *tfe__gpu_source(void) {
  size_t n = 1, k = sizeof tfe__gpu_ksrc / sizeof *tfe__gpu_ksrc;
  for (size_t i = 0; i < k; i++) n += strlen(tfe__gpu_ksrc[i]);
  char *s = (char *)malloc(n);
  if (!s) return NULL;
  s[0] = 0;
  for (size_t i = 0; i < k; i++) strcat(s, tfe__gpu_ksrc[i]);
  return s;
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
  return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "NVRTC could not compile the kernels for %s: %s: %s", arch,
                          tfe__gpu.rtc.error_string(r), log);
}

/* Compiles the kernels of kind g for arch ("sm_90": a cubin; "compute_90": PTX); *image is
 * malloc'd. Needs no device. */
static tfe_status tfe__gpu_rtc_compile(const char *arch, int g, char **image, const char *where) {
  if (!tfe__gpu.rtc.create)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "NVRTC is not loaded (%s): kernels cannot be generated",
                            tfe_gpu_status());
  char *src = tfe__gpu_source(), opt_arch[48];
  if (!src) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the kernel source");
  snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt_arch, tfe__gpu_kdefs[g][0], tfe__gpu_kdefs[g][1], "--std=c++14"};
  tfe__rtc_prog p = NULL;
  tfe__rtc_result r = tfe__gpu.rtc.create(&p, src, "tenferro_kernels.cu", 0, NULL, NULL);
  free(src);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "nvrtcCreateProgram: %s", tfe__gpu.rtc.error_string(r));
  r = tfe__gpu.rtc.compile(p, 4, opts);
  if (r != 0) {
    tfe_status st = tfe__gpu_rtc_fail(p, r, arch, where);
    tfe__gpu.rtc.destroy(&p);
    return st;
  }
  bool cubin = strncmp(arch, "sm_", 3) == 0;
  size_t n = 0;
  r = cubin ? tfe__gpu.rtc.cubin_size(p, &n) : tfe__gpu.rtc.ptx_size(p, &n);
  char *img = r == 0 ? (char *)malloc(n ? n : 1) : NULL;
  if (img) r = cubin ? tfe__gpu.rtc.cubin(p, img) : tfe__gpu.rtc.ptx(p, img);
  tfe__gpu.rtc.destroy(&p);
  if (!img || r != 0) {
    free(img);
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "NVRTC gave no %s image for %s", cubin ? "CUBIN" : "PTX", arch);
  }
  *image = img;
  return TFE_OK;
}

TFE_GPU_API tfe_status tfe_gpu_compile_check(int cc_major, int cc_minor) {
  pthread_mutex_lock(&tfe__gpu.lock);
  if (!tfe__gpu.rtc.create && tfe__gpu_load_lib(TFE_GPU_NVIDIA, TFE_GPU_LIB_RTC, NULL, __func__) == TFE_OK)
    tfe__nvrtc_fill(__func__);
  pthread_mutex_unlock(&tfe__gpu.lock);
  char arch[32];
  snprintf(arch, sizeof arch, "sm_%d%d", cc_major, cc_minor);
  for (int g = 0; g < TFE__GK_COUNT; g++) {
    char *img = NULL;
    TFE_TRY(tfe__gpu_rtc_compile(arch, g, &img, __func__));
    free(img);
  }
  return TFE_OK;
}

/* The kernels of kind g on device D (device lock held): compiled at first use (a CUBIN for the
 * device's architecture; PTX for the driver to finish when NVRTC does not know it). */
static tfe_status tfe__gpu_kernels(tfe__gpu_dev *D, int g, const char *where) {
  if (D->f_unary[g]) return TFE_OK;
  char arch[32], *img = NULL;
  snprintf(arch, sizeof arch, "sm_%d%d", D->info.cc_major, D->info.cc_minor);
  if (tfe__gpu_rtc_compile(arch, g, &img, where) != TFE_OK) {
    snprintf(arch, sizeof arch, "compute_%d%d", D->info.cc_major, D->info.cc_minor);
    TFE_TRY(tfe__gpu_rtc_compile(arch, g, &img, where));
  }
  tfe__cu_module m = NULL;
  tfe__cu_result r = tfe__gpu.cu.cuModuleLoadData(&m, img);
  free(img);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cuModuleLoadData (%s): %s", arch, tfe__cu_errstr(r));
  if ((r = tfe__gpu.cu.cuModuleGetFunction(&D->f_unary[g], m, "tfe_unary")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_perm[g], m, "tfe_perm2d")) != 0 ||
      (r = tfe__gpu.cu.cuModuleGetFunction(&D->f_scale[g], m, "tfe_scale")) != 0) {
    tfe__gpu.cu.cuModuleUnload(m);
    D->f_unary[g] = D->f_scale[g] = D->f_perm[g] = NULL;
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cuModuleGetFunction: %s", tfe__cu_errstr(r));
  }
  D->mod[g] = m;
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
