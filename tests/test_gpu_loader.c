/* tests/test_gpu_loader.c — the GPU companion's loader (gpu room), built with only the C
 * compiler and linked with nothing of CUDA: on a machine without a GPU (CI) every entry answers
 * "no GPU" cleanly and the CPU keeps working; on a machine with one, discovery finds it. The
 * explicit loads of absent or wrong libraries fail with a message on both. */
#define _DEFAULT_SOURCE 1 /* mkdtemp, setenv, unsetenv */
#include "testutil.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static bool have_gpu;

/* The companion's own message (in the library mode it cannot set tfe_last_error). */
#define GPU_EXPECT_ERR(expr, code, needle)                                       \
  do {                                                                           \
    tfe_status st_ = (expr);                                                     \
    assert_int_equal(st_, (code));                                               \
    if (!strstr(tfe_gpu_last_error(), (needle)))                                 \
      fail_msg("message '%s' lacks '%s'", tfe_gpu_last_error(), (needle));       \
  } while (0)

/* Explicit loads of what is not there: a clean error naming the library, nothing loaded. */
static void test_absent_paths(void **state) {
  (void)state;
  GPU_EXPECT_ERR(tfe_gpu_load_cutensor("/nonexistent/libcutensor.so.2"), TFE_ERR_DEVICE, "cuTENSOR not found");
  assert_null(tfe_gpu_library_path(TFE_GPU_NVIDIA, TFE_GPU_LIB_TENSOR));
  GPU_EXPECT_ERR(tfe_gpu_load_hiptensor("/nonexistent/libhiptensor.so"), TFE_ERR_DEVICE, "hipTensor not found");
  assert_null(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_TENSOR));
  GPU_EXPECT_ERR(tfe_gpu_load_cutensor(NULL), TFE_ERR_NULL, "'path' is NULL");
#if TFE__IMPL /* default mode: the companion shares the thread-local message */
  assert_string_equal(tfe_gpu_last_error(), tfe_last_error());
#endif
  /* a library that loads but is not the one asked for */
  GPU_EXPECT_ERR(tfe_gpu_load_cutensor("libm.so.6"), TFE_ERR_DEVICE, "has no symbol cutensorCreate");
  assert_null(tfe_gpu_library_path(TFE_GPU_NVIDIA, TFE_GPU_LIB_TENSOR));
  GPU_EXPECT_ERR(tfe_gpu_load_cuda("/nonexistent/libcuda.so.1"), TFE_ERR_DEVICE, "libcuda not found");
  GPU_EXPECT_ERR(tfe_gpu_load_hip("/nonexistent/libamdhip64.so"), TFE_ERR_DEVICE, "libamdhip64 not found");
  assert_null(tfe_gpu_library_path((tfe_gpu_vendor)7, TFE_GPU_LIB_DRIVER));
}

/* Automatic discovery: a GPU, or a clean "no GPU" with the reasons. */
static void test_discovery(void **state) {
  (void)state;
  tfe_status st = tfe_gpu_init();
  have_gpu = st == TFE_OK;
  printf("# tfe_gpu_status: %s\n", tfe_gpu_status());
  if (!have_gpu) {
    assert_int_equal(st, TFE_ERR_DEVICE);
    assert_non_null(strstr(tfe_gpu_last_error(), "no GPU"));
    assert_int_equal(tfe_gpu_device_count(), 0);
    assert_int_equal(tfe_gpu_init(), TFE_ERR_DEVICE); /* the answer is kept */
    return;
  }
  assert_true(tfe_gpu_device_count() > 0);
  assert_non_null(tfe_gpu_library_path(TFE_GPU_NVIDIA, TFE_GPU_LIB_DRIVER));
  assert_int_equal(tfe_gpu_init(), TFE_OK);
}

/* Every device entry: the device's facts, or TFE_ERR_DEVICE for a device that is not there. */
static void test_devices(void **state) {
  (void)state;
  int n = tfe_gpu_device_count();
  tfe_gpu_device_info info;
  for (int d = 0; d < n; d++) {
    assert_int_equal(tfe_gpu_device_get(d, &info), TFE_OK);
    assert_int_equal(info.index, d);
    assert_int_equal(tfe_gpu_device_type(d), TFE_GPU_NVIDIA);
    assert_true(info.total_mem > 0 && info.name[0]);
    printf("# device %d: %s, %zu MiB, sm_%d%d, backend id %d\n", d, info.name, info.total_mem >> 20, info.cc_major,
           info.cc_minor, info.backend_id);
    const tfe_prims_backend *be = tfe_gpu_backend(d);
    assert_non_null(be);
    assert_int_equal(be->space.kind, TFE_MEM_GPU);
    assert_non_null(tfe_backend_find(be->name));
  }
  GPU_EXPECT_ERR(tfe_gpu_device_get(n, &info), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_device_get(-1, &info), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_device_get(0, NULL), TFE_ERR_NULL, "'out' is NULL");
  assert_int_equal(tfe_gpu_device_type(n), TFE_GPU_NONE);
  assert_null(tfe_gpu_backend(n));
  GPU_EXPECT_ERR(tfe_gpu_synchronize(n), TFE_ERR_DEVICE, "no GPU device");
  /* pools, streams and the plan cache of a device that is not there */
  tfe_pool_stats ps;
  tfe_stream *s = NULL;
  int64_t hits = 0;
  GPU_EXPECT_ERR(tfe_gpu_pool_stats(n, &ps), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_pinned_stats(n, &ps), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_pool_set_limit(n, 0), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_pool_trim(n), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_stream_new(n, &s), TFE_ERR_DEVICE, "no GPU device");
  assert_null(s);
  GPU_EXPECT_ERR(tfe_gpu_plan_cache_stats(n, &hits, NULL), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_graph_stats(n, &hits, NULL, NULL), TFE_ERR_DEVICE, "no GPU device");
  tfe_gpu_graphs_enable(true); /* a switch: no device needed */
  if (n == 0) { /* the runtime has no pool for GPU memory, and no device streams */
    tfe_memspace g0 = {TFE_MEM_GPU, 0};
    assert_int_equal(tfe_memspace_pool_stats(g0, &ps), TFE_ERR_DEVICE);
    tfe_dyn x = {0}, y;
    double one = 1;
    x.dtype = TFE_DT_F64, x.data = &one;
    assert_int_equal(tfe_stream_new(0, &s), TFE_OK); /* cpu:0 */
    assert_null(tfe_stream_queue(s));
    assert_int_equal(tfe_transfer_async_dyn(s, &y, &x, g0), TFE_ERR_UNSUPPORTED);
    tfe_stream_free(s);
  }
}

/* Device tensors on a device that is not there; a host handle is not a device tensor. */
static void test_memory_without_device(void **state) {
  (void)state;
  int n = tfe_gpu_device_count();
  tfe_dyn d, h;
  memset(&d, 0, sizeof d);
  GPU_EXPECT_ERR(tfe_gpu_alloc_dyn(&d, n, TFE_DT_F64, 1, (int64_t[]){4}, TFE_COLMAJOR), TFE_ERR_DEVICE, "no GPU device");
  assert_null(d.st);
  assert_int_equal(tfe_dyn_zeros(&h, TFE_DT_F64, 1, (int64_t[]){4}, TFE_COLMAJOR), TFE_OK);
  GPU_EXPECT_ERR(tfe_gpu_upload(&d, n, &h), TFE_ERR_DEVICE, "no GPU device");
  GPU_EXPECT_ERR(tfe_gpu_download(&h, &h), TFE_ERR_DEVICE, "not a device tensor");
  GPU_EXPECT_ERR(tfe_gpu_upload(NULL, 0, &h), TFE_ERR_NULL, "'out' is NULL");
  tfe_dyn bad = h;
  bad.dtype = (tfe_dtype)99;
  GPU_EXPECT_ERR(tfe_gpu_upload(&d, 0, &bad), TFE_ERR_DTYPE, "unknown dtype");
  /* tfe_gpu_tropical_matmul checks its arguments before it looks for a device */
  tfe_dyn t = h, t2 = h, i64 = h;
  t.dtype = TFE_DT_MAXPLUS_F64;
  t.lay.rank = 2; t.lay.dims[0] = 2; t.lay.dims[1] = 2; t.lay.strides[0] = 1; t.lay.strides[1] = 2;
  t2 = t; t2.dtype = TFE_DT_MINPLUS_F64;
  i64 = t; i64.dtype = TFE_DT_F64;
  GPU_EXPECT_ERR(tfe_gpu_tropical_matmul(&t, NULL, &t, NULL), TFE_ERR_NULL, "argument 'B' is NULL");
  GPU_EXPECT_ERR(tfe_gpu_tropical_matmul(&h, &h, &h, NULL), TFE_ERR_DTYPE, "not a tropical kind");
  GPU_EXPECT_ERR(tfe_gpu_tropical_matmul(&t, &t2, &t, NULL), TFE_ERR_DTYPE, "differ in kind");
  GPU_EXPECT_ERR(tfe_gpu_tropical_matmul(&t, &t, &t, &i64), TFE_ERR_DTYPE, "not i64");
  tfe_dyn v = t;
  v.lay.rank = 1;
  GPU_EXPECT_ERR(tfe_gpu_tropical_matmul(&t, &v, &t, NULL), TFE_ERR_RANK, "needs matrices");
  v = t;
  v.lay.dims[1] = 1;
  GPU_EXPECT_ERR(tfe_gpu_tropical_matmul(&t, &t, &v, NULL), TFE_ERR_SHAPE, "shapes");
  tfe_dyn_release(&h);
}

/* Operands whose storage says GPU memory, with no GPU backend: the registry refuses them. */
static void test_registry_refuses_gpu_memory(void **state) {
  (void)state;
  if (have_gpu) skip();
  double buf[4] = {1, 2, 3, 4};
  tfe_storage *st = NULL;
  tfe_memspace gpu0 = {TFE_MEM_GPU, 0};
  assert_int_equal(tfe_storage_wrap(buf, sizeof buf, gpu0, NULL, NULL, &st), TFE_OK);
  tfe_dyn a;
  memset(&a, 0, sizeof a);
  a.dtype = TFE_DT_F64, a.data = buf, a.st = st;
  assert_int_equal(tfe_layout_dense(2, (int64_t[]){2, 2}, TFE_COLMAJOR, &a.lay), TFE_OK);
  double one = 1, zero = 0;
  TU_EXPECT_ERR(tfe_contract_dyn(&one, &a, (int32_t[]){0, 1}, &a, (int32_t[]){1, 2}, &zero, &a, (int32_t[]){0, 2}),
                TFE_ERR_DEVICE, "gpu:0");
  /* the linalg entries choose their backend from the operands' memory the same way */
  tfe_dyn u = {0}, v = {0}, w = {0};
  TU_EXPECT_ERR(tfe_svd_dyn(&a, TFE_SVD_THIN, &u, &v, &w), TFE_ERR_DEVICE, "gpu:0");
  TU_EXPECT_ERR(tfe_qr_dyn(&a, false, &u, &v), TFE_ERR_DEVICE, "gpu:0");
  TU_EXPECT_ERR(tfe_eigh_dyn(&a, &u, &v), TFE_ERR_DEVICE, "gpu:0");
  TU_EXPECT_ERR(tfe_cholesky_dyn(&a, &u), TFE_ERR_DEVICE, "gpu:0");
  TU_EXPECT_ERR(tfe_lu_dyn(&a, &u, &v, &w), TFE_ERR_DEVICE, "gpu:0");
  TU_EXPECT_ERR(tfe_solve_dyn(&a, &a, &u), TFE_ERR_DEVICE, "gpu:0");
  assert_null(u.st), assert_null(v.st), assert_null(w.st);
  tfe_storage_release(st);
}

/* The CPU keeps working after a failed discovery. */
static void test_cpu_unchanged(void **state) {
  (void)state;
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0};
  tfe_view_f64 A, B, C;
  assert_int_equal(tfe_wrap_f64(&A, a, 4, 2, (int64_t[]){2, 2}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_wrap_f64(&B, b, 4, 2, (int64_t[]){2, 2}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_wrap_f64(&C, c, 4, 2, (int64_t[]){2, 2}, NULL, 0, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_contract_f64(1.0, &A, (int32_t[]){0, 1}, &B, (int32_t[]){1, 2}, 0.0, &C, (int32_t[]){0, 2}),
                   TFE_OK);
  assert_true(c[0] == 1 * 5 + 3 * 6 && c[3] == 2 * 7 + 4 * 8);
}

/* NVRTC needs no device: the generated kernels compile for sm_90 wherever libnvrtc is. */
static void test_kernels_compile(void **state) {
  (void)state;
  tfe_status st = tfe_gpu_compile_check(9, 0);
  printf("# kernels for sm_90: %s\n", st == TFE_OK ? "compiled" : tfe_gpu_last_error());
  if (st != TFE_OK) assert_int_equal(st, TFE_ERR_UNSUPPORTED); /* no NVRTC here */
}

/* A stub driver (the toolkit's libcuda.so, present without a GPU) fails at cuInit, cleanly. */
static void test_stub_driver(void **state) {
  (void)state;
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  FILE *f = have_gpu ? NULL : fopen(stub, "rb");
  if (!f) skip();
  fclose(f);
  GPU_EXPECT_ERR(tfe_gpu_load_cuda(stub), TFE_ERR_DEVICE, "cuInit failed");
  assert_null(tfe_gpu_library_path(TFE_GPU_NVIDIA, TFE_GPU_LIB_DRIVER));
  assert_int_equal(tfe_gpu_device_count(), 0);
}

/* ---- HIP without AMD hardware: a fake libamdhip64 (with HIPRTC inside, as ROCm 5 ships it) and
 * a fake libhipblas, built here from a few lines of C, record what reaches them; the fake GEMM
 * computes (column-major, refusing any operation code but hipBLAS's 111/112) and the fake
 * kernels do not run. tests/test_gpu_loader.companion__part.c looks into the tables. */
const char *tu_gpu_unfilled(void);
int tu_gpu_hip_shims(void);
void tu_gpu_hip_forget(void);

#define FAKE_LOG_DEF                                                                                        \
  struct fake_log {                                                                                         \
    int ndev, init, setdev, mallocs, frees, hmallocs, htod, dtoh, dtod, streams, events, modules, launches,   \
        compiles, src_ok, dgemm_sb, gemm_other, ops_bad, op_n, op_t;                                         \
    unsigned grid, block;                                                                                   \
    char launched[64], opts[512];                                                                           \
  }
FAKE_LOG_DEF;
#define FAKE_STR_(...) #__VA_ARGS__
#define FAKE_STR(x) FAKE_STR_(x)
static const char *const fake_hip_src[] = {
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n" FAKE_STR(FAKE_LOG_DEF) ";\n"
    "struct fake_log fake_hip_log;\n#define L fake_hip_log\ntypedef void *P;\n"
    "static int nd(void) { const char *e = getenv(\"TU_FAKE_HIP_NDEV\"); return e ? atoi(e) : 1; }\n"
    "int hipInit(unsigned f) { (void)f; L.init++; return 0; }\n"
    "int hipDriverGetVersion(int *v) { *v = 60342134; return 0; }\n"
    "int hipGetDeviceCount(int *n) { *n = L.ndev = nd(); return *n ? 0 : 100; }\n"
    "int hipDeviceGet(int *d, int k) { *d = k; return k < nd() ? 0 : 101; }\n"
    "int hipDeviceGetName(char *s, int n, int d) { snprintf(s, (size_t)n, \"Fake AMD Instinct %d\", d); return 0; }\n"
    "int hipDeviceTotalMem(size_t *b, int d) { (void)d; *b = (size_t)64 << 30; return 0; }\n"
    "int hipDeviceGetAttribute(int *v, int a, int d) { (void)d; if (a != 23 && a != 61) return 1; *v = a == 23 ? 9 : 0; return 0; }\n"
    "int hipGetDeviceProperties(char *p, int d) { (void)d; memset(p, 0, 792); strcpy(p, \"AMD Instinct MI250X\");\n"
    "  strcpy(p + 396, \"gfx90a:sramecc+:xnack-\"); return 0; }\n"
    ,
    "int hipSetDevice(int d) { L.setdev++; return d < nd() ? 0 : 101; }\n"
    "int hipDeviceSynchronize(void) { return 0; }\n"
    "int hipMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); L.mallocs++; return *p ? 0 : 2; }\n"
    "int hipFree(void *p) { if (p) L.frees++; free(p); return 0; }\n"
    "int hipHostMalloc(void **p, size_t n, unsigned f) { *p = f ? NULL : malloc(n ? n : 1); L.hmallocs++; return *p ? 0 : 1; }\n"
    "int hipHostFree(void *p) { if (p) L.hmallocs--; free(p); return 0; }\n"
    "int hipMemcpyHtoDAsync(void *d, void *h, size_t n, P s) { (void)s; memcpy(d, h, n); L.htod++; return 0; }\n"
    "int hipMemcpyDtoHAsync(void *h, void *d, size_t n, P s) { (void)s; memcpy(h, d, n); L.dtoh++; return 0; }\n"
    "int hipMemcpyDtoDAsync(void *d, void *a, size_t n, P s) { (void)s; memmove(d, a, n); L.dtod++; return 0; }\n"
    "int hipMemcpyDtoH(void *h, void *d, size_t n) { memcpy(h, d, n); L.dtoh++; return 0; }\n"
    "int hipStreamCreateWithFlags(P *s, unsigned f) { (void)f; *s = malloc(1); L.streams++; return 0; }\n"
    "int hipStreamDestroy(P s) { free(s); L.streams--; return 0; }\n"
    "int hipStreamSynchronize(P s) { (void)s; return 0; }\n"
    "int hipStreamWaitEvent(P s, P e, unsigned f) { (void)s, (void)e, (void)f; return 0; }\n"
    "int hipEventCreateWithFlags(P *e, unsigned f) { (void)f; *e = malloc(1); L.events++; return 0; }\n"
    "int hipEventDestroy(P e) { free(e); L.events--; return 0; }\n"
    "int hipEventRecord(P e, P s) { (void)e, (void)s; return 0; }\n"
    "int hipEventSynchronize(P e) { (void)e; return 0; }\n"
    "int hipEventQuery(P e) { (void)e; return 0; }\n"
    "int hipEventElapsedTime(float *ms, P a, P b) { (void)a, (void)b; *ms = 1; return 0; }\n"
    ,
    "static char mod[8], fns[128][48]; static int nfn;\n"
    "int hipModuleLoadData(P *m, const void *img) { if (strcmp((const char *)img, \"FAKE-CODE-OBJECT\")) return 200;\n"
    "  L.modules++; *m = mod; return 0; }\n"
    "int hipModuleUnload(P m) { (void)m; L.modules--; return 0; }\n"
    "int hipModuleGetFunction(P *f, P m, const char *n) { (void)m; char *s = fns[nfn++ % 128];\n"
    "  snprintf(s, 48, \"%s\", n); *f = s; return 0; }\n"
    "#ifndef FAKE_OMIT_LAUNCH\n"
    "int hipModuleLaunchKernel(P f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,\n"
    "  unsigned shm, P s, void **args, void **extra) { (void)gy, (void)gz, (void)shm, (void)s, (void)extra;\n"
    "  L.launches++; if (!L.launched[0]) snprintf(L.launched, sizeof L.launched, \"%s\", (const char *)f);\n"
    "  L.grid = gx; L.block = bx * by * bz;\n"
    "  return args && args[0] ? 0 : 1; }\n"
    "#endif\n"
    "const char *hipGetErrorString(int r) { (void)r; return \"fakeHipError\"; }\n"
    ,
    "static char prog[8];\n"
    "int hiprtcVersion(int *a, int *b) { *a = 6; *b = 3; return 0; }\n"
    "int hiprtcCreateProgram(P *p, const char *src, const char *nm, int nh, const char *const *h, const char *const *i) {\n"
    "  (void)nm, (void)nh, (void)h, (void)i; L.src_ok = strstr(src, \"tfe_unary\") && strstr(src, \"tfe_ew_red\");\n"
    "  *p = prog; return 0; }\n"
    "int hiprtcDestroyProgram(P *p) { *p = NULL; return 0; }\n"
    "int hiprtcCompileProgram(P p, int n, const char *const *o) { (void)p; L.compiles++; L.opts[0] = 0;\n"
    "  for (int i = 0; i < n; i++) strncat(L.opts, o[i], 200), strcat(L.opts, \" \"); return 0; }\n"
    "int hiprtcGetProgramLogSize(P p, size_t *n) { (void)p; *n = 1; return 0; }\n"
    "int hiprtcGetProgramLog(P p, char *s) { (void)p; s[0] = 0; return 0; }\n"
    "int hiprtcGetCodeSize(P p, size_t *n) { (void)p; *n = sizeof \"FAKE-CODE-OBJECT\"; return 0; }\n"
    "int hiprtcGetCode(P p, char *c) { (void)p; strcpy(c, \"FAKE-CODE-OBJECT\"); return 0; }\n"
    "const char *hiprtcGetErrorString(int r) { (void)r; return \"fake HIPRTC error\"; }\n",
    NULL};
static const char *const fake_blas_src[] = {
    "#include <stdlib.h>\n" FAKE_STR(FAKE_LOG_DEF) ";\n"
    "struct fake_log fake_blas_log;\n#define L fake_blas_log\ntypedef void *P;\nstatic char handle[8];\n"
    "int hipblasCreate(P *h) { *h = handle; return 0; }\n"
    "int hipblasDestroy(P h) { (void)h; return 0; }\n"
    "int hipblasSetStream(P h, P s) { (void)h, (void)s; return 0; }\n"
    "static double at(const double *m, int op, int ld, int i, int l) { return op == 111 ? m[i + (long)l * ld] : m[l + (long)i * ld]; }\n"
    "int hipblasDgemmStridedBatched(P h, int ta, int tb, int m, int n, int k, const double *al, const double *A, int lda,\n"
    "  long long sa, const double *B, int ldb, long long sb, const double *be, double *C, int ldc, long long sc, int nb) {\n"
    "  (void)h; L.dgemm_sb++; const char *e = getenv(\"TU_FAKE_BLAS_STATUS\"); if (e) return atoi(e);\n"
    "  for (int t = 0; t < 2; t++) { int o = t ? tb : ta; if (o == 111) L.op_n++; else if (o == 112) L.op_t++; else { L.ops_bad++; return 10; } }\n"
    "  for (int b = 0; b < nb; b++) for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) { double s = 0;\n"
    "    for (int l = 0; l < k; l++) s += at(A + b * sa, ta, lda, i, l) * at(B + b * sb, tb, ldb, l, j);\n"
    "    double *c = C + b * sc + i + (long)j * ldc; *c = *al * s + (*be != 0 ? *be * *c : 0); }\n"
    "  return 0; }\n"
    "#define OTHER(nm) int nm(void) { L.gemm_other++; return 7; }\n"
    "OTHER(hipblasSgemm) OTHER(hipblasDgemm) OTHER(hipblasCgemm) OTHER(hipblasZgemm)\n"
    "OTHER(hipblasSgemmStridedBatched) OTHER(hipblasCgemmStridedBatched) OTHER(hipblasZgemmStridedBatched)\n"
    "OTHER(hipblasStrsmBatched) OTHER(hipblasDtrsmBatched) OTHER(hipblasCtrsmBatched) OTHER(hipblasZtrsmBatched)\n",
    NULL};

/* a fake libhipsolver: every hipsolverDn entry of the table; the ones behind shims record the
 * enums and sizes that reach them (the rest answer 7, not supported, if ever called) */
static const char *const fake_sol_src[] = {
    "#include <stddef.h>\n#include <stdint.h>\ntypedef void *P;\n"
    "struct fake_sol_log { int uplo, trans, jobz, svd_m, svd_n, svd_lwork, calls; long rwork_off; int jobvl, jobvr, geev_n; } fake_sol_log;\n"
    "#define L fake_sol_log\nstatic char handle[8];\n"
    "int hipsolverDnCreate(P *h) { *h = handle; return 0; }\n"
    "int hipsolverDnDestroy(P h) { (void)h; return 0; }\n"
    "int hipsolverDnSetStream(P h, P s) { (void)h, (void)s; return 0; }\n"
    "int hipsolverDnCreateParams(P *p) { *p = handle + 1; return 0; }\n"
    "int hipsolverDnDestroyParams(P p) { (void)p; return 0; }\n"
    "int hipsolverDnXpotrf_bufferSize(P h, P p, int uplo, int64_t n, int t, const void *A, int64_t lda, int ct, size_t *d,\n"
    "  size_t *hb) { (void)h, (void)p, (void)n, (void)t, (void)A, (void)lda, (void)ct; L.uplo = uplo; L.calls++; *d = 8; *hb = 0; return 0; }\n"
    "int hipsolverDnXgetrs(P h, P p, int op, int64_t n, int64_t r, int t, const void *A, int64_t lda, const int64_t *ip,\n"
    "  int tb, void *B, int64_t ldb, int *info) { (void)h, (void)p, (void)n, (void)r, (void)t, (void)A, (void)lda, (void)ip;\n"
    "  (void)tb, (void)B, (void)ldb; L.trans = op; L.calls++; *info = 0; return 0; }\n"
    "int hipsolverDnDsyevd_bufferSize(P h, int jobz, int uplo, int n, const void *A, int lda, const void *W, int *lw) {\n"
    "  (void)h, (void)n, (void)A, (void)lda, (void)W; L.jobz = jobz; L.uplo = uplo; L.calls++; *lw = 10; return 0; }\n"
    "int hipsolverDnDgesvd_bufferSize(P h, int m, int n, int *lw) { (void)h; L.svd_m = m, L.svd_n = n; L.calls++; *lw = 7; return 0; }\n"
    "int hipsolverDnDgesvd(P h, signed char ju, signed char jv, int m, int n, void *A, int lda, void *S, void *U, int ldu,\n"
    "  void *V, int ldv, void *w, int lw, void *rw, int *info) { (void)h, (void)ju, (void)jv, (void)m, (void)n, (void)A;\n"
    "  (void)lda, (void)S, (void)U, (void)ldu, (void)V, (void)ldv; L.svd_lwork = lw; L.rwork_off = (char *)rw - (char *)w;\n"
    "  L.calls++; *info = 0; return 0; }\n"
    "int hipsolverDnXgeev_bufferSize(P h, P p, int jl, int jr, int64_t n, int ta, const void *A, int64_t lda, int tw,\n"
    "  const void *W, int tl, const void *VL, int64_t ldl, int tr, const void *VR, int64_t ldr, int ct, size_t *d, size_t *hb) {\n"
    "  (void)h, (void)p, (void)ta, (void)A, (void)lda, (void)tw, (void)W, (void)tl, (void)VL, (void)ldl, (void)tr, (void)VR;\n"
    "  (void)ldr, (void)ct; L.jobvl = jl, L.jobvr = jr, L.geev_n = (int)n; L.calls++; *d = 24; *hb = 0; return 0; }\n"
    "int hipsolverDnXgeev(P h, P p, int jl, int jr, int64_t n, int ta, void *A, int64_t lda, int tw, void *W, int tl,\n"
    "  void *VL, int64_t ldl, int tr, void *VR, int64_t ldr, int ct, void *wd, size_t ld, void *wh, size_t lh, int *info) {\n"
    "  (void)h, (void)p, (void)ta, (void)A, (void)lda, (void)tw, (void)W, (void)tl, (void)VL, (void)ldl, (void)tr, (void)VR;\n"
    "  (void)ldr, (void)ct, (void)wd, (void)ld, (void)wh, (void)lh; L.jobvl = jl, L.jobvr = jr, L.geev_n = (int)n; L.calls++;\n"
    "  *info = 0; return 0; }\n"
    "#define NS(nm) int nm(void) { return 7; }\n"
    "NS(hipsolverDnXgeqrf_bufferSize) NS(hipsolverDnXgeqrf) NS(hipsolverDnXpotrf) NS(hipsolverDnXgetrf_bufferSize)\n"
    "NS(hipsolverDnXgetrf) NS(hipsolverDnSorgqr_bufferSize) NS(hipsolverDnDorgqr_bufferSize)\n"
    "NS(hipsolverDnCungqr_bufferSize) NS(hipsolverDnZungqr_bufferSize) NS(hipsolverDnSorgqr) NS(hipsolverDnDorgqr)\n"
    "NS(hipsolverDnCungqr) NS(hipsolverDnZungqr) NS(hipsolverDnSgesvd_bufferSize) NS(hipsolverDnCgesvd_bufferSize)\n"
    "NS(hipsolverDnZgesvd_bufferSize) NS(hipsolverDnSgesvd) NS(hipsolverDnCgesvd) NS(hipsolverDnZgesvd)\n"
    "NS(hipsolverDnSsyevd_bufferSize) NS(hipsolverDnCheevd_bufferSize) NS(hipsolverDnZheevd_bufferSize)\n"
    "NS(hipsolverDnSsyevd) NS(hipsolverDnDsyevd) NS(hipsolverDnCheevd) NS(hipsolverDnZheevd)\n",
    NULL};
int tu_gpu_hipsol_check(void);

static char fake_dir[128];
/* Writes and compiles the fakes into a fresh folder; false when no C compiler is at hand. */
static bool fake_build(void) {
  snprintf(fake_dir, sizeof fake_dir, "/tmp/tfe_fakehip_XXXXXX");
  if (!mkdtemp(fake_dir)) return false;
  char path[256], cmd[2048];
  snprintf(path, sizeof path, "%s/broken", fake_dir);
  if (mkdir(path, 0700) != 0) return false;
  const char *const *srcs[3] = {fake_hip_src, fake_blas_src, fake_sol_src},
                    *names[3] = {"fake_hip.c", "fake_blas.c", "fake_sol.c"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", fake_dir, names[i]);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    for (int k = 0; srcs[i][k]; k++) fputs(srcs[i][k], f);
    fclose(f);
  }
  const char *d = fake_dir;
  snprintf(cmd, sizeof cmd,
           "cc -shared -fPIC -O1 -o %s/libamdhip64.so %s/fake_hip.c && "
           "cc -shared -fPIC -O1 -DFAKE_OMIT_LAUNCH -o %s/broken/libamdhip64.so %s/fake_hip.c && "
           "cc -shared -fPIC -O1 -o %s/libhipblas.so %s/fake_blas.c && "
           "cc -shared -fPIC -O1 -o %s/libhipsolver.so %s/fake_sol.c",
           d, d, d, d, d, d, d, d);
  int rc = system(cmd);
  if (rc != 0) printf("# no fake HIP libraries (cc failed: %d): skipped\n", rc);
  return rc == 0;
}
static void fake_clean(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fake_dir);
  if (system(cmd) != 0) printf("# could not remove %s\n", fake_dir);
}

/* Device tensor of a dense column-major host array. */
static void fake_upload(tfe_dyn *d, int dev, int rank, const int64_t *dims, const double *vals) {
  tfe_dyn h;
  assert_int_equal(tfe_dyn_zeros(&h, TFE_DT_F64, rank, dims, TFE_COLMAJOR), TFE_OK);
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  memcpy(h.data, vals, (size_t)n * sizeof(double));
  assert_int_equal(tfe_gpu_upload(d, dev, &h), TFE_OK);
  tfe_dyn_release(&h);
}

static void test_hip_fake(void **state) {
  (void)state;
  assert_int_equal(tu_gpu_hip_shims(), 0);
  if (have_gpu) { /* CUDA's devices hold the tables: HIP is refused, nothing changes */
    int n = tfe_gpu_device_count();
    GPU_EXPECT_ERR(tfe_gpu_load_hip("/nonexistent/libamdhip64.so"), TFE_ERR_UNSUPPORTED, "one vendor");
    assert_int_equal(tfe_gpu_device_count(), n);
    return;
  }
  if (!fake_build()) skip();
  tfe_gpu_shutdown();
  tu_gpu_hip_forget(); /* what discovery loaded, if a real ROCm is installed */
  setenv("TFE_GPU_KERNEL_CACHE", "0", 1);
  char p[256], blas[256];
  /* a runtime lacking an entry: named; nothing kept, no device */
  snprintf(p, sizeof p, "%s/broken/libamdhip64.so", fake_dir);
  GPU_EXPECT_ERR(tfe_gpu_load_hip(p), TFE_ERR_DEVICE, "libamdhip64 has no hipModuleLaunchKernel");
  assert_null(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_DRIVER));
  assert_int_equal(tfe_gpu_device_count(), 0);
  /* a runtime that sees no device: the clean "no GPU" answer */
  snprintf(p, sizeof p, "%s/libamdhip64.so", fake_dir);
  snprintf(blas, sizeof blas, "%s/libhipblas.so", fake_dir);
  setenv("TU_FAKE_HIP_NDEV", "0", 1);
  GPU_EXPECT_ERR(tfe_gpu_load_hip(p), TFE_ERR_DEVICE, "no GPU: HIP");
  assert_int_equal(tfe_gpu_device_count(), 0);
  assert_null(tfe_gpu_backend(0));
  assert_null(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_DRIVER));
  /* two devices: "hip:0", "hip:1", every table filled from the HIP names */
  setenv("TU_FAKE_HIP_NDEV", "2", 1);
  assert_int_equal(tfe_gpu_load_hip(p), TFE_OK);
  printf("# tfe_gpu_status: %s\n", tfe_gpu_status());
  const char *miss = tu_gpu_unfilled();
  if (miss) fail_msg("slot %s not filled", miss);
  void *hh = dlopen(p, RTLD_NOW | RTLD_NOLOAD), *hb = dlopen(blas, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(hh), assert_non_null(hb);
  struct fake_log *LH = (struct fake_log *)dlsym(hh, "fake_hip_log"), *LB = (struct fake_log *)dlsym(hb, "fake_blas_log");
  assert_non_null(LH), assert_non_null(LB);
  assert_int_equal(LH->init, 2); /* the no-device try and this one: an initialized runtime stays mapped */
  assert_int_equal(tfe_gpu_device_count(), 2);
  assert_string_equal(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_DRIVER), p);
  assert_string_equal(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_BLAS), blas);
  assert_string_equal(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_RTC), p); /* ROCm 5: HIPRTC in the runtime */
  { /* hipSOLVER mapped: cuSOLVER's enums reach it as hipSOLVER's, the typed svd / eigh entries
     * behind the 64-bit signatures (workspace in elements, gesvd's real work after it) */
    char sol[256];
    snprintf(sol, sizeof sol, "%s/libhipsolver.so", fake_dir);
    assert_string_equal(tfe_gpu_library_path(TFE_GPU_AMD, TFE_GPU_LIB_SOLVER), sol);
    int rc = tu_gpu_hipsol_check();
    if (rc) fail_msg("hipSOLVER shim check %d failed", rc);
  }
  assert_null(tfe_gpu_library_path(TFE_GPU_NVIDIA, TFE_GPU_LIB_DRIVER));
  for (int d = 0; d < 2; d++) {
    tfe_gpu_device_info info;
    char want[64];
    assert_int_equal(tfe_gpu_device_get(d, &info), TFE_OK);
    assert_int_equal(tfe_gpu_device_type(d), TFE_GPU_AMD);
    snprintf(want, sizeof want, "Fake AMD Instinct %d", d);
    assert_string_equal(info.name, want);
    assert_true(info.total_mem == (size_t)64 << 30 && info.cc_major == 9 && info.cc_minor == 0);
    const tfe_prims_backend *be = tfe_gpu_backend(d);
    assert_non_null(be);
    snprintf(want, sizeof want, "hip:%d", d);
    assert_string_equal(be->name, want);
    assert_true(be->space.kind == TFE_MEM_GPU && be->space.device == d);
    assert_non_null(tfe_backend_find(want));
  }
  /* CUDA is refused while HIP's devices hold the tables; a second HIP path too */
  GPU_EXPECT_ERR(tfe_gpu_load_cuda("/nonexistent/libcuda.so.1"), TFE_ERR_UNSUPPORTED, "one vendor");
  GPU_EXPECT_ERR(tfe_gpu_load_hip("/elsewhere/libamdhip64.so"), TFE_ERR_INVALID, "loaded already");
  assert_int_equal(tfe_gpu_load_hip(p), TFE_OK);
  assert_int_equal(tfe_gpu_init(), TFE_OK);

  /* C[i,k] = sum_j A[j,i] B[j,k] on hip:1: A reaches hipBLAS as OP_T (112), B as OP_N (111) */
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0}, one = 1, zero = 0;
  tfe_dyn dA, dB, dC, hC;
  fake_upload(&dA, 1, 2, (int64_t[]){2, 2}, a);
  fake_upload(&dB, 1, 2, (int64_t[]){2, 2}, b);
  assert_int_equal(tfe_gpu_alloc_dyn(&dC, 1, TFE_DT_F64, 2, (int64_t[]){2, 2}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_contract_dyn(&one, &dA, (int32_t[]){1, 0}, &dB, (int32_t[]){1, 2}, &zero, &dC, (int32_t[]){0, 2}),
                   TFE_OK);
  assert_int_equal(tfe_dyn_zeros(&hC, TFE_DT_F64, 2, (int64_t[]){2, 2}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_gpu_download(&dC, &hC), TFE_OK);
  memcpy(c, hC.data, sizeof c);
  tfe_dyn_release(&hC);
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++) assert_true(c[i + 2 * k] == a[0 + 2 * i] * b[0 + 2 * k] + a[1 + 2 * i] * b[1 + 2 * k]);
  printf("# hipBLAS: %d strided-batched dgemm, ops N %d T %d, bad %d, other entries %d\n", LB->dgemm_sb, LB->op_n,
         LB->op_t, LB->ops_bad, LB->gemm_other);
  assert_true(LB->dgemm_sb >= 1 && LB->op_t >= 1 && LB->op_n >= 1 && LB->ops_bad == 0 && LB->gemm_other == 0);
  assert_true(LH->htod >= 2 && LH->dtoh >= 1 && LH->setdev > 0 && LH->mallocs > 0);
  /* a hipBLAS failure comes back as cuBLAS's status (HIPBLAS_STATUS_INVALID_VALUE 3 -> 7) */
  setenv("TU_FAKE_BLAS_STATUS", "3", 1);
  GPU_EXPECT_ERR(tfe_contract_dyn(&one, &dA, (int32_t[]){1, 0}, &dB, (int32_t[]){1, 2}, &zero, &dC, (int32_t[]){0, 2}),
                 TFE_ERR_DEVICE, "status 7");
  unsetenv("TU_FAKE_BLAS_STATUS");
  assert_int_equal(LH->compiles, 0); /* no kernel needed so far */

  /* a label of A alone (l) is summed by a generated kernel first: HIPRTC compiles the f64
   * module for the device's gcnArchName, hipModuleLaunchKernel runs tfe_unary first (the fake
   * records the first kernel launched and computes nothing: only the call is checked; the
   * small GEMM after it may run on tfe_gemm_small) */
  double a3[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  tfe_dyn dA3;
  fake_upload(&dA3, 1, 3, (int64_t[]){2, 2, 2}, a3);
  assert_int_equal(
      tfe_contract_dyn(&one, &dA3, (int32_t[]){1, 0, 3}, &dB, (int32_t[]){1, 2}, &zero, &dC, (int32_t[]){0, 2}), TFE_OK);
  assert_int_equal(tfe_gpu_synchronize(1), TFE_OK);
  printf("# HIPRTC: %d compile(s), options '%s'; first launched %s (last %u blocks of %u)\n", LH->compiles, LH->opts, LH->launched,
         LH->grid, LH->block);
  assert_int_equal(LH->compiles, 1);
  assert_true(LH->src_ok);
  assert_non_null(strstr(LH->opts, "--offload-arch=gfx90a:sramecc+:xnack- "));
  assert_non_null(strstr(LH->opts, "-DTFE_R=double -DTFE_CPLX=0 "));
  assert_int_equal(LH->modules, 1);
  assert_string_equal(LH->launched, "tfe_unary");
  assert_true(LH->launches >= 1 && LH->grid >= 1 && LH->block == 256);

  /* everything given back through the shims at shutdown */
  tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dC), tfe_dyn_release(&dA3);
  tfe_gpu_shutdown();
  assert_int_equal(tfe_gpu_device_count(), 0);
  assert_null(tfe_backend_find("hip:0"));
  printf("# after shutdown: %d of %d device blocks freed, %d streams, %d events, %d modules, %d pinned left\n",
         LH->frees, LH->mallocs, LH->streams, LH->events, LH->modules, LH->hmallocs);
  assert_true(LH->frees == LH->mallocs && LH->streams == 0 && LH->events == 0 && LH->modules == 0 && LH->hmallocs == 0);
  dlclose(hh), dlclose(hb);
  tu_gpu_hip_forget();
  unsetenv("TU_FAKE_HIP_NDEV"), unsetenv("TFE_GPU_KERNEL_CACHE");
  fake_clean();
}

/* HIPRTC needs no device either: where ROCm's HIPRTC is installed, the generated kernels
 * compile for gfx90a (CDNA2; docs/gpu.md lists the others tried by hand). */
static void test_hip_kernels_compile(void **state) {
  (void)state;
  /* malformed targets are refused before HIPRTC (loaded or not) sees them */
  const char *bad[] = {"sm_90", "gfx", "gfx90a ", "gfx90a --save-temps", "gfx90a:", "gfx90a:xnack", "gfx90a:+",
                       "gfx90a:XNACK+", "gfx90a::xnack-", "gfx90a-", "gfx90a:xnack+;rm",
                       "gfx1234567890123456789012345678901234567890123456789012345678901234567890"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) GPU_EXPECT_ERR(tfe_gpu_compile_check_hip(bad[i]), TFE_ERR_INVALID, "not an AMD architecture");
  GPU_EXPECT_ERR(tfe_gpu_compile_check_hip(NULL), TFE_ERR_NULL, "'arch' is NULL");
  const char *arch[1] = {"gfx90a"};
  for (int i = 0; i < 1; i++) {
    tfe_status st = tfe_gpu_compile_check_hip(arch[i]);
    printf("# kernels for %s: %s\n", arch[i], st == TFE_OK ? "compiled by HIPRTC" : tfe_gpu_last_error());
    if (st != TFE_OK) assert_int_equal(st, TFE_ERR_UNSUPPORTED); /* no HIPRTC here, or CUDA's devices in use */
  }
  if (!have_gpu) tu_gpu_hip_forget();
}

/* Shutdown gives the devices back and unregisters their backends; discovery works again. */
static void test_shutdown_reinit(void **state) {
  (void)state;
  int n = tfe_gpu_device_count();
  tfe_gpu_shutdown();
  assert_int_equal(tfe_gpu_device_count(), 0);
  assert_null(tfe_backend_find("cuda:0"));
  assert_int_equal(tfe_gpu_init(), have_gpu ? TFE_OK : TFE_ERR_DEVICE);
  assert_int_equal(tfe_gpu_device_count(), n);
  if (have_gpu) assert_non_null(tfe_backend_find("cuda:0"));
  tfe_gpu_shutdown();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_absent_paths),      cmocka_unit_test(test_discovery),
      cmocka_unit_test(test_devices),           cmocka_unit_test(test_memory_without_device),
      cmocka_unit_test(test_registry_refuses_gpu_memory), cmocka_unit_test(test_cpu_unchanged),
      cmocka_unit_test(test_kernels_compile),   cmocka_unit_test(test_stub_driver),
      cmocka_unit_test(test_hip_fake),          cmocka_unit_test(test_hip_kernels_compile),
      cmocka_unit_test(test_shutdown_reinit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
