/* tests/test_gpu_loader.c — the GPU companion's loader (gpu room), built with only the C
 * compiler and linked with nothing of CUDA: on a machine without a GPU (CI) every entry answers
 * "no GPU" cleanly and the CPU keeps working; on a machine with one, discovery finds it. The
 * explicit loads of absent or wrong libraries fail with a message on both. */
#include "testutil.h"
#include <stdio.h>

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
      cmocka_unit_test(test_shutdown_reinit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
