/* Second translation unit of tests/test_gpu_loader.c: the GPU companion, compiled as a user
 * compiles it in the default mode (it shares the process state with the test's unit), and a few
 * looks into its tables for the HIP mapping's checks. */
#include <tenferro/gpu/tenferro_gpu.c>

const char *tu_gpu_unfilled(void);
int tu_gpu_hip_shims(void);
void tu_gpu_hip_forget(void);

/* The first entry of the HIP and hipBLAS tables, or of the driver, BLAS and RTC slots the
 * backend calls, that is still NULL; NULL when every one is filled (cublasGetVersion's slot has
 * no HIP counterpart and nothing calls it). */
const char *tu_gpu_unfilled(void) {
#define TU_CHK(tbl, name) \
  if (!tfe__gpu.tbl.name) return #tbl "." #name;
#define TU_CHK_HIP(name, sym, ret, args) TU_CHK(hip, name)
#define TU_CHK_HIPBLAS(name, sym, ret, args) TU_CHK(hipblas, name)
#define TU_CHK_CU(name, sym, ret, args) TU_CHK(cu, name)
#define TU_CHK_BLAS(name, sym, ret, args) \
  if (strcmp(#name, "get_version") != 0) TU_CHK(blas, name)
#define TU_CHK_RTC(name, sym, ret, args) TU_CHK(rtc, name)
  TFE__HIP_FUNCS(TU_CHK_HIP)
  TFE__HIPBLAS_FUNCS(TU_CHK_HIPBLAS)
  TFE__CU_FUNCS(TU_CHK_CU)
  TFE__CU_FUNCS_RT(TU_CHK_CU)
  TFE__CUBLAS_FUNCS(TU_CHK_BLAS)
  TFE__NVRTC_FUNCS(TU_CHK_RTC)
  if (!tfe__gpu.hip_props) return "hip_props";
  if (tfe__gpu.api != TFE_GPU_AMD || tfe__gpu.rtc_vendor != TFE_GPU_AMD) return "vendor of the tables";
  return NULL;
}

/* The enum shims on their own: 0 when every translation holds, else the failed check's number. */
int tu_gpu_hip_shims(void) {
  if (tfe__hipblas_op(TFE__BLAS_OP_N) != 111 || tfe__hipblas_op(TFE__BLAS_OP_T) != 112 ||
      tfe__hipblas_op(TFE__BLAS_OP_C) != 113 || tfe__hipblas_op(7) != -1)
    return 1;
  static const int hip2cu[][2] = {{0, 0}, {1, 1}, {2, 3}, {3, 7}, {4, 11}, {5, 13}, {6, 14}, {7, 15},
                                  {8, 8}, {9, 1}, {10, 7}, {11, 14}, {99, 14}};
  for (size_t i = 0; i < sizeof hip2cu / sizeof *hip2cu; i++)
    if (tfe__hipblas_status(hip2cu[i][0]) != hip2cu[i][1]) return 2 + (int)i;
  tfe__cu_ctx c = NULL;
  if (tfe__hip_ctx_retain(&c, 3) != 0 || (uintptr_t)c != 4) return 20;
  int v = 0;
  if (tfe__hip_attr(&v, 1234, 0) != TFE__HIP_ERROR_INVALID_VALUE) return 21; /* no HIP call for an unmapped id */
  return 0;
}

/* The hipSOLVER shims against the fake libhipsolver of test_hip_fake (loaded beside the fake
 * runtime): 0 when every check holds, else its number. */
int tu_gpu_hipsol_check(void) {
  struct fake_sol_log { int uplo, trans, jobz, svd_m, svd_n, svd_lwork, calls; long rwork_off; int jobvl, jobvr, geev_n; };
  void *h = tfe__gpu.lib[TFE_GPU_AMD][TFE_GPU_LIB_SOLVER];
  struct fake_sol_log *L = h ? (struct fake_sol_log *)dlsym(h, "fake_sol_log") : NULL;
  if (!L) return 1;
#define TU_CHK_SOL(name, sym, ret, args) \
  if (!tfe__gpu.sol.name) return 2;
#define TU_CHK_HIPSOL(name, sym, ret, args) \
  if (!tfe__gpu.hipsol.name) return 2;
  TFE__CUSOLVER_FUNCS(TU_CHK_SOL)
  TFE__HIPSOLVER_FUNCS(TU_CHK_HIPSOL)
#undef TU_CHK_SOL
#undef TU_CHK_HIPSOL
  tfe__sol_handle sh = NULL;
  tfe__sol_params sp = NULL;
  if (tfe__gpu.sol.create(&sh) != 0 || tfe__gpu.sol.params_create(&sp) != 0) return 3;
  size_t d = 0, hb = 1;
  if (tfe__gpu.sol.potrf_bs(sh, sp, TFE__BLAS_FILL_LOWER, 4, TFE__CUDA_R_64F, NULL, 4, TFE__CUDA_R_64F, &d, &hb) != 0 ||
      L->uplo != TFE__HIPSOLVER_FILL_LOWER)
    return 4;
  int info = -1;
  int64_t ipiv[2] = {1, 2};
  double A[4] = {0}, B[2] = {0};
  if (tfe__gpu.sol.getrs(sh, sp, TFE__BLAS_OP_N, 2, 1, TFE__CUDA_R_64F, A, 2, ipiv, TFE__CUDA_R_64F, B, 2, &info) != 0 ||
      L->trans != TFE__HIPSOLVER_OP_N || info != 0)
    return 5;
  if (tfe__gpu.sol.syevd_bs(sh, sp, TFE__SOL_EIG_VECTOR, TFE__BLAS_FILL_LOWER, 4, TFE__CUDA_R_64F, NULL, 4,
                            TFE__CUDA_R_64F, NULL, TFE__CUDA_R_64F, &d, &hb) != 0 ||
      L->jobz != TFE__HIPSOLVER_EIG_VECTOR || L->uplo != TFE__HIPSOLVER_FILL_LOWER || d != 10 * 8 || hb != 0)
    return 6;
  if (tfe__gpu.sol.gesvd_bs(sh, sp, 'S', 'S', 5, 3, TFE__CUDA_R_64F, NULL, 5, TFE__CUDA_R_64F, NULL, TFE__CUDA_R_64F,
                            NULL, 5, TFE__CUDA_R_64F, NULL, 3, TFE__CUDA_R_64F, &d, &hb) != 0 ||
      L->svd_m != 5 || L->svd_n != 3 || d != 7 * 8 + 3 * 8)
    return 7;
  char work[80];
  double S[3], U[15], V[9], Am[15];
  if (tfe__gpu.sol.gesvd(sh, sp, 'S', 'S', 5, 3, TFE__CUDA_R_64F, Am, 5, TFE__CUDA_R_64F, S, TFE__CUDA_R_64F, U, 5,
                         TFE__CUDA_R_64F, V, 3, TFE__CUDA_R_64F, work, sizeof work, NULL, 0, &info) != 0 ||
      L->svd_lwork != 7 || L->rwork_off != 7 * 8)
    return 8;
  if (tfe__gpu.sol.gesvd(sh, sp, 'S', 'S', 5, 3, TFE__CUDA_R_64F, Am, 5, TFE__CUDA_R_64F, S, TFE__CUDA_R_64F, U, 5,
                         TFE__CUDA_R_64F, V, 3, TFE__CUDA_R_64F, work, 79, NULL, 0, &info) == 0)
    return 9; /* a workspace short of the real work array is refused, not overrun */
  if (tfe__gpu.sol.gesvd_bs(sh, sp, 'S', 'S', 5, 3, 77, NULL, 5, 77, NULL, 77, NULL, 5, 77, NULL, 3, 77, &d, &hb) == 0)
    return 10; /* a kind hipSOLVER's typed entries do not have */
  /* the general eigensolver: cuSOLVER's eigen modes reach hipsolverDnXgeev as hipSOLVER's */
  if (!tfe__gpu.sol.geev_bs || !tfe__gpu.sol.geev) return 11;
  if (tfe__gpu.sol.geev_bs(sh, sp, TFE__SOL_EIG_NOVECTOR, TFE__SOL_EIG_VECTOR, 3, TFE__CUDA_C_64F, NULL, 3, TFE__CUDA_C_64F,
                           NULL, TFE__CUDA_C_64F, NULL, 1, TFE__CUDA_C_64F, NULL, 3, TFE__CUDA_C_64F, &d, &hb) != 0 ||
      L->jobvl != TFE__HIPSOLVER_EIG_NOVECTOR || L->jobvr != TFE__HIPSOLVER_EIG_VECTOR || L->geev_n != 3 || d != 24)
    return 12;
  L->jobvl = L->jobvr = -1;
  if (tfe__gpu.sol.geev(sh, sp, TFE__SOL_EIG_NOVECTOR, TFE__SOL_EIG_NOVECTOR, 2, TFE__CUDA_C_64F, Am, 2, TFE__CUDA_C_64F, S,
                        TFE__CUDA_C_64F, NULL, 1, TFE__CUDA_C_64F, NULL, 1, TFE__CUDA_C_64F, work, sizeof work, NULL, 0,
                        &info) != 0 ||
      L->jobvl != TFE__HIPSOLVER_EIG_NOVECTOR || L->jobvr != TFE__HIPSOLVER_EIG_NOVECTOR || L->geev_n != 2 || info != 0)
    return 13;
  tfe__gpu.sol.params_destroy(sp), tfe__gpu.sol.destroy(sh);
  return 0;
}

/* Forgets every AMD library and empties the tables they filled (no device may be left:
 * tfe_gpu_shutdown first), so that a test can load another runtime. The libraries stay mapped
 * (a real libamdhip64 must not be closed once initialized). */
void tu_gpu_hip_forget(void) {
  pthread_mutex_lock(&tfe__gpu.lock);
  for (int lib = 0; lib < TFE_GPU_LIB_COUNT; lib++) {
    tfe__gpu.lib[TFE_GPU_AMD][lib] = NULL;
    tfe__gpu.path[TFE_GPU_AMD][lib][0] = 0;
  }
  if (tfe__gpu.api == TFE_GPU_AMD) {
    memset(&tfe__gpu.cu, 0, sizeof tfe__gpu.cu), memset(&tfe__gpu.blas, 0, sizeof tfe__gpu.blas);
    memset(&tfe__gpu.sol, 0, sizeof tfe__gpu.sol); /* hipSOLVER's entries and shims */
    tfe__gpu.api = TFE_GPU_NONE;
  }
  if (tfe__gpu.rtc_vendor == TFE_GPU_AMD) memset(&tfe__gpu.rtc, 0, sizeof tfe__gpu.rtc), tfe__gpu.rtc_vendor = TFE_GPU_NONE;
  memset(&tfe__gpu.hip, 0, sizeof tfe__gpu.hip), memset(&tfe__gpu.hipblas, 0, sizeof tfe__gpu.hipblas);
  memset(&tfe__gpu.hipsol, 0, sizeof tfe__gpu.hipsol);
  tfe__gpu.hip_props = NULL;
  tfe__gpu.tried_hip = false;
  pthread_mutex_unlock(&tfe__gpu.lock);
}
