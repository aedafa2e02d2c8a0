/* tenferro/gpu/vendor.h — gpu room, companion only: the few types, constants and entry points of
 * the vendor libraries that the companion calls, declared here so that no CUDA or ROCm header is
 * needed to build it. Every function is reached through a pointer filled at run time (dlopen +
 * cuGetProcAddress / dlsym). Values are the vendors' documented ABI (CUDA 11.3 and later,
 * ROCm 5 and later). Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_VENDOR_H
#define TENFERRO_GPU_VENDOR_H
#ifdef TFE__GPU_COMPANION
#include <stddef.h>
#include <stdint.h>

/* ---- CUDA driver API ------------------------------------------------------------------------ */
typedef int tfe__cu_result;                   /* CUresult: 0 = CUDA_SUCCESS */
typedef int tfe__cu_device;                   /* CUdevice */
typedef unsigned long long tfe__cu_ptr;       /* CUdeviceptr (the _v2 ABI: 64 bits) */
typedef struct tfe__cu_ctx_s *tfe__cu_ctx;    /* CUcontext */
typedef struct tfe__cu_mod_s *tfe__cu_module; /* CUmodule */
typedef struct tfe__cu_fn_s *tfe__cu_function;/* CUfunction */
typedef struct tfe__cu_stream_s *tfe__cu_stream; /* CUstream (= cudaStream_t) */
typedef struct tfe__cu_event_s *tfe__cu_event;   /* CUevent */
#define TFE__CU_ATTR_CC_MAJOR 75                 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define TFE__CU_ATTR_CC_MINOR 76
#define TFE__CU_STREAM_NON_BLOCKING 1u
#define TFE__CU_EVENT_DEFAULT 0u
#define TFE__CU_ERROR_NO_DEVICE 100

/* Driver entry points: name without version suffix (as cuGetProcAddress takes it), the _v2
 * name dlsym needs on drivers without cuGetProcAddress, and the pointer's type. */
#define TFE__CU_FUNCS(X)                                                                                 \
  X(cuInit, "cuInit", tfe__cu_result, (unsigned))                                                     \
  X(cuDriverGetVersion, "cuDriverGetVersion", tfe__cu_result, (int *))                                 \
  X(cuDeviceGetCount, "cuDeviceGetCount", tfe__cu_result, (int *))                                     \
  X(cuDeviceGet, "cuDeviceGet", tfe__cu_result, (tfe__cu_device *, int))                               \
  X(cuDeviceGetName, "cuDeviceGetName", tfe__cu_result, (char *, int, tfe__cu_device))                 \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", tfe__cu_result, (size_t *, tfe__cu_device))               \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", tfe__cu_result, (int *, int, tfe__cu_device))        \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", tfe__cu_result, (tfe__cu_ctx *, tfe__cu_device)) \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", tfe__cu_result, (tfe__cu_device))       \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", tfe__cu_result, (tfe__cu_ctx))                                 \
  X(cuCtxSynchronize, "cuCtxSynchronize", tfe__cu_result, (void))                                      \
  X(cuMemAlloc, "cuMemAlloc_v2", tfe__cu_result, (tfe__cu_ptr *, size_t))                              \
  X(cuMemFree, "cuMemFree_v2", tfe__cu_result, (tfe__cu_ptr))                                          \
  X(cuMemAllocHost, "cuMemAllocHost_v2", tfe__cu_result, (void **, size_t))                            \
  X(cuMemFreeHost, "cuMemFreeHost", tfe__cu_result, (void *))                                          \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", tfe__cu_result, (tfe__cu_ptr, const void *, size_t, tfe__cu_stream)) \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", tfe__cu_result, (void *, tfe__cu_ptr, size_t, tfe__cu_stream)) \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", tfe__cu_result, (tfe__cu_ptr, tfe__cu_ptr, size_t, tfe__cu_stream)) \
  X(cuStreamCreate, "cuStreamCreate", tfe__cu_result, (tfe__cu_stream *, unsigned))                    \
  X(cuStreamDestroy, "cuStreamDestroy_v2", tfe__cu_result, (tfe__cu_stream))                           \
  X(cuStreamSynchronize, "cuStreamSynchronize", tfe__cu_result, (tfe__cu_stream))                      \
  X(cuEventCreate, "cuEventCreate", tfe__cu_result, (tfe__cu_event *, unsigned))                       \
  X(cuEventDestroy, "cuEventDestroy_v2", tfe__cu_result, (tfe__cu_event))                              \
  X(cuEventRecord, "cuEventRecord", tfe__cu_result, (tfe__cu_event, tfe__cu_stream))                   \
  X(cuEventSynchronize, "cuEventSynchronize", tfe__cu_result, (tfe__cu_event))                         \
  X(cuEventElapsedTime, "cuEventElapsedTime", tfe__cu_result, (float *, tfe__cu_event, tfe__cu_event)) \
  X(cuModuleLoadData, "cuModuleLoadData", tfe__cu_result, (tfe__cu_module *, const void *))            \
  X(cuModuleUnload, "cuModuleUnload", tfe__cu_result, (tfe__cu_module))                                \
  X(cuModuleGetFunction, "cuModuleGetFunction", tfe__cu_result, (tfe__cu_function *, tfe__cu_module, const char *)) \
  X(cuLaunchKernel, "cuLaunchKernel", tfe__cu_result,                                                   \
    (tfe__cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,            \
     tfe__cu_stream, void **, void **))                                                                  \
  X(cuGetErrorString, "cuGetErrorString", tfe__cu_result, (tfe__cu_result, const char **))

/* cuGetProcAddress as CUDA 12 exports it (cuGetProcAddress_v2: with a status out-parameter)
 * and as CUDA 11.3 did (cuGetProcAddress). flags 0 = CU_GET_PROC_ADDRESS_DEFAULT. */
typedef tfe__cu_result (*tfe__cu_getproc2_fn)(const char *, void **, int, uint64_t, int *);
typedef tfe__cu_result (*tfe__cu_getproc1_fn)(const char *, void **, int, uint64_t);

/* ---- cuBLAS (v2 API) / hipBLAS --------------------------------------------------------------- */
typedef struct tfe__blas_s *tfe__blas_handle;
typedef int tfe__blas_status; /* 0 = success */
enum { TFE__BLAS_OP_N = 0, TFE__BLAS_OP_T = 1, TFE__BLAS_OP_C = 2 };
/* One signature for the four GEMMs of each form: scalars and matrices are passed by address,
 * so the element type does not change the ABI. */
#define TFE__BLAS_GEMM_SB_ARGS                                                                   \
  (tfe__blas_handle, int, int, int, int, int, const void *, const void *, int, long long, const void *, \
   int, long long, const void *, void *, int, long long, int)
typedef tfe__blas_status(*tfe__blas_gemm_sb_fn_t) TFE__BLAS_GEMM_SB_ARGS;
/* The batched triangular solves (cublas{S,D,C,Z}trsmBatched: side, fill mode, operation, diagonal,
 * m, n, alpha, device arrays of batch matrix addresses A[] and B[], lda, ldb, batch count): one
 * signature for the four kinds, as for the GEMMs. */
enum { TFE__BLAS_SIDE_LEFT = 0, TFE__BLAS_SIDE_RIGHT = 1 };         /* cublasSideMode_t */
enum { TFE__BLAS_DIAG_NON_UNIT = 0, TFE__BLAS_DIAG_UNIT = 1 };      /* cublasDiagType_t */
#define TFE__BLAS_TRSM_B_ARGS \
  (tfe__blas_handle, int, int, int, int, int, int, const void *, const void *const *, int, void *const *, int, int)
typedef tfe__blas_status(*tfe__blas_trsm_b_fn_t) TFE__BLAS_TRSM_B_ARGS;
#define TFE__BLAS_GEMM_ARGS \
  (tfe__blas_handle, int, int, int, int, int, const void *, const void *, int, const void *, int, const void *, void *, int)
#define TFE__CUBLAS_FUNCS(X)                                                                   \
  X(create, "cublasCreate_v2", tfe__blas_status, (tfe__blas_handle *))                        \
  X(destroy, "cublasDestroy_v2", tfe__blas_status, (tfe__blas_handle))                        \
  X(set_stream, "cublasSetStream_v2", tfe__blas_status, (tfe__blas_handle, tfe__cu_stream))   \
  X(get_version, "cublasGetVersion_v2", tfe__blas_status, (tfe__blas_handle, int *))          \
  X(sgemm, "cublasSgemm_v2", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                                                 \
  X(dgemm, "cublasDgemm_v2", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                                                 \
  X(cgemm, "cublasCgemm_v2", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                                                 \
  X(zgemm, "cublasZgemm_v2", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                                                 \
  X(sgemm_sb, "cublasSgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)                                \
  X(dgemm_sb, "cublasDgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)                                \
  X(cgemm_sb, "cublasCgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)                                \
  X(zgemm_sb, "cublasZgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)                                \
  X(strsm_b, "cublasStrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)                                         \
  X(dtrsm_b, "cublasDtrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)                                         \
  X(ctrsm_b, "cublasCtrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)                                         \
  X(ztrsm_b, "cublasZtrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)

/* ---- NVRTC / HIPRTC -------------------------------------------------------------------------- */
typedef struct tfe__rtc_s *tfe__rtc_prog;
typedef int tfe__rtc_result; /* 0 = success */
#define TFE__NVRTC_FUNCS(X)                                                                          \
  X(version, "nvrtcVersion", tfe__rtc_result, (int *, int *))                                       \
  X(create, "nvrtcCreateProgram", tfe__rtc_result,                                                    \
    (tfe__rtc_prog *, const char *, const char *, int, const char *const *, const char *const *))      \
  X(destroy, "nvrtcDestroyProgram", tfe__rtc_result, (tfe__rtc_prog *))                             \
  X(compile, "nvrtcCompileProgram", tfe__rtc_result, (tfe__rtc_prog, int, const char *const *))     \
  X(log_size, "nvrtcGetProgramLogSize", tfe__rtc_result, (tfe__rtc_prog, size_t *))                 \
  X(log, "nvrtcGetProgramLog", tfe__rtc_result, (tfe__rtc_prog, char *))                            \
  X(cubin_size, "nvrtcGetCUBINSize", tfe__rtc_result, (tfe__rtc_prog, size_t *))                    \
  X(cubin, "nvrtcGetCUBIN", tfe__rtc_result, (tfe__rtc_prog, char *))                               \
  X(ptx_size, "nvrtcGetPTXSize", tfe__rtc_result, (tfe__rtc_prog, size_t *))                        \
  X(ptx, "nvrtcGetPTX", tfe__rtc_result, (tfe__rtc_prog, char *))                                   \
  X(error_string, "nvrtcGetErrorString", const char *, (tfe__rtc_result))

/* ---- cuSOLVER (dense): the 64-bit generic API (cusolverDnX*, CUDA 11.1 and later) where it
 * exists, with one signature for the four kinds (the element type is a cudaDataType argument);
 * Q of a QR comes from the legacy {S,D}orgqr / {C,Z}ungqr (no generic form exists). Enum
 * arguments (cudaDataType, cusolverEigMode_t, cublasFillMode_t, cublasOperation_t) are ints. */
typedef struct tfe__sol_s *tfe__sol_handle;   /* cusolverDnHandle_t */
typedef struct tfe__solp_s *tfe__sol_params;  /* cusolverDnParams_t */
typedef int tfe__sol_status;                  /* cusolverStatus_t: 0 = success */
enum { TFE__CUDA_R_32F = 0, TFE__CUDA_R_64F = 1, TFE__CUDA_C_32F = 4, TFE__CUDA_C_64F = 5 }; /* cudaDataType */
enum { TFE__SOL_EIG_NOVECTOR = 0, TFE__SOL_EIG_VECTOR = 1 };                              /* cusolverEigMode_t */
enum { TFE__BLAS_FILL_LOWER = 0, TFE__BLAS_FILL_UPPER = 1 };                              /* cublasFillMode_t */
#define TFE__SOL_ORGQR_BS_ARGS (tfe__sol_handle, int, int, int, const void *, int, const void *, int *)
#define TFE__SOL_ORGQR_ARGS (tfe__sol_handle, int, int, int, void *, int, const void *, void *, int, int *)
#define TFE__CUSOLVER_FUNCS(X)                                                                                      \
  X(create, "cusolverDnCreate", tfe__sol_status, (tfe__sol_handle *))                                             \
  X(destroy, "cusolverDnDestroy", tfe__sol_status, (tfe__sol_handle))                                             \
  X(set_stream, "cusolverDnSetStream", tfe__sol_status, (tfe__sol_handle, tfe__cu_stream))                        \
  X(params_create, "cusolverDnCreateParams", tfe__sol_status, (tfe__sol_params *))                                \
  X(params_destroy, "cusolverDnDestroyParams", tfe__sol_status, (tfe__sol_params))                                \
  X(gesvd_bs, "cusolverDnXgesvd_bufferSize", tfe__sol_status,                                                    \
    (tfe__sol_handle, tfe__sol_params, signed char, signed char, int64_t, int64_t, int, const void *, int64_t, int, \
     const void *, int, const void *, int64_t, int, const void *, int64_t, int, size_t *, size_t *))              \
  X(gesvd, "cusolverDnXgesvd", tfe__sol_status,                                                                  \
    (tfe__sol_handle, tfe__sol_params, signed char, signed char, int64_t, int64_t, int, void *, int64_t, int,     \
     void *, int, void *, int64_t, int, void *, int64_t, int, void *, size_t, void *, size_t, int *))            \
  X(geqrf_bs, "cusolverDnXgeqrf_bufferSize", tfe__sol_status,                                                    \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, const void *, int64_t, int, const void *, int,     \
     size_t *, size_t *))                                                                                        \
  X(geqrf, "cusolverDnXgeqrf", tfe__sol_status,                                                                  \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, void *, int64_t, int, void *, int, void *, size_t,  \
     void *, size_t, int *))                                                                                     \
  X(syevd_bs, "cusolverDnXsyevd_bufferSize", tfe__sol_status,                                                    \
    (tfe__sol_handle, tfe__sol_params, int, int, int64_t, int, const void *, int64_t, int, const void *, int,    \
     size_t *, size_t *))                                                                                        \
  X(syevd, "cusolverDnXsyevd", tfe__sol_status,                                                                  \
    (tfe__sol_handle, tfe__sol_params, int, int, int64_t, int, void *, int64_t, int, void *, int, void *, size_t, \
     void *, size_t, int *))                                                                                     \
  X(potrf_bs, "cusolverDnXpotrf_bufferSize", tfe__sol_status,                                                    \
    (tfe__sol_handle, tfe__sol_params, int, int64_t, int, const void *, int64_t, int, size_t *, size_t *))      \
  X(potrf, "cusolverDnXpotrf", tfe__sol_status,                                                                  \
    (tfe__sol_handle, tfe__sol_params, int, int64_t, int, void *, int64_t, int, void *, size_t, void *, size_t,  \
     int *))                                                                                                     \
  X(getrf_bs, "cusolverDnXgetrf_bufferSize", tfe__sol_status,                                                    \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, const void *, int64_t, int, size_t *, size_t *))  \
  X(getrf, "cusolverDnXgetrf", tfe__sol_status,                                                                  \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, void *, int64_t, int64_t *, int, void *, size_t,   \
     void *, size_t, int *))                                                                                     \
  X(getrs, "cusolverDnXgetrs", tfe__sol_status,                                                                  \
    (tfe__sol_handle, tfe__sol_params, int, int64_t, int64_t, int, const void *, int64_t, const int64_t *, int,  \
     void *, int64_t, int *))                                                                                    \
  X(sorgqr_bs, "cusolverDnSorgqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                           \
  X(dorgqr_bs, "cusolverDnDorgqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                           \
  X(cungqr_bs, "cusolverDnCungqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                           \
  X(zungqr_bs, "cusolverDnZungqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                           \
  X(sorgqr, "cusolverDnSorgqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                            \
  X(dorgqr, "cusolverDnDorgqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                            \
  X(cungqr, "cusolverDnCungqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                            \
  X(zungqr, "cusolverDnZungqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)

/* cuSOLVER entries loaded when present (a library without them stays usable; the linalg slot
 * answers TFE_ERR_UNSUPPORTED for what needs them): the general eigensolver cusolverDnXgeev
 * (CUDA 12.6 and later; solver.h's eig). */
#define TFE__SOL_GEEV_BS_ARGS                                                                                   \
  (tfe__sol_handle, tfe__sol_params, int, int, int64_t, int, const void *, int64_t, int, const void *, int, const void *, \
   int64_t, int, const void *, int64_t, int, size_t *, size_t *)
#define TFE__SOL_GEEV_ARGS                                                                                      \
  (tfe__sol_handle, tfe__sol_params, int, int, int64_t, int, void *, int64_t, int, void *, int, void *, int64_t, int, \
   void *, int64_t, int, void *, size_t, void *, size_t, int *)
#define TFE__CUSOLVER_FUNCS_OPT(X)                                                         \
  X(geev_bs, "cusolverDnXgeev_bufferSize", tfe__sol_status, TFE__SOL_GEEV_BS_ARGS) \
  X(geev, "cusolverDnXgeev", tfe__sol_status, TFE__SOL_GEEV_ARGS)

/* ---- cuSOLVER, cuTENSOR: loaded when present; one entry each proves the library usable ----- */
#define TFE__CUSOLVER_PROBE "cusolverDnCreate"
#define TFE__CUTENSOR_PROBE "cutensorCreate"

/* ---- HIP (AMD): the same tables (driver, BLAS, RTC) filled from HIP, hipBLAS and HIPRTC -------
 * Never run on AMD hardware (docs/gpu.md): the signatures are ROCm 5/6's hip_runtime_api.h,
 * hipblas.h and hiprtc.h, checked against ROCm 5.2's headers and library; the tests load a fake
 * libamdhip64/libhipblas built from a few lines of C. HIP's streams, events, modules and
 * functions are opaque pointers like CUDA's, so the CUDA handle types serve both; hipDevice_t
 * is an int like CUdevice. A device address is a void * in HIP (hipDeviceptr_t), a 64-bit
 * integer in the CUDA tables: shims convert (tenferro_gpu.c). An entry declared here with the
 * very type of its CUDA slot is put in the slot as it is (the compiler checks the match). */
typedef int tfe__hip_result;                /* hipError_t: 0 = hipSuccess; 600 = hipErrorNotReady */
#define TFE__HIP_ERROR_INVALID_VALUE 1      /* hipErrorInvalidValue */
#define TFE__HIP_ATTR_CC_MAJOR 23           /* hipDeviceAttributeComputeCapabilityMajor (ROCm 5, 6) */
#define TFE__HIP_ATTR_CC_MINOR 61           /* hipDeviceAttributeComputeCapabilityMinor */
#define TFE__HIP_PROPS_BYTES 16384          /* > sizeof(hipDeviceProp_t) of any ROCm (792 in 5.2) */
#define TFE__HIP_FUNCS(X)                                                                                   \
  X(hipInit, "hipInit", tfe__hip_result, (unsigned))                                                       \
  X(hipDriverGetVersion, "hipDriverGetVersion", tfe__hip_result, (int *))                                  \
  X(hipGetDeviceCount, "hipGetDeviceCount", tfe__hip_result, (int *))                                      \
  X(hipDeviceGet, "hipDeviceGet", tfe__hip_result, (tfe__cu_device *, int))                                \
  X(hipDeviceGetName, "hipDeviceGetName", tfe__hip_result, (char *, int, tfe__cu_device))                  \
  X(hipDeviceTotalMem, "hipDeviceTotalMem", tfe__hip_result, (size_t *, tfe__cu_device))                   \
  X(hipDeviceGetAttribute, "hipDeviceGetAttribute", tfe__hip_result, (int *, int, int))                    \
  X(hipSetDevice, "hipSetDevice", tfe__hip_result, (int))                                                  \
  X(hipDeviceSynchronize, "hipDeviceSynchronize", tfe__hip_result, (void))                                 \
  X(hipMalloc, "hipMalloc", tfe__hip_result, (void **, size_t))                                            \
  X(hipFree, "hipFree", tfe__hip_result, (void *))                                                         \
  X(hipHostMalloc, "hipHostMalloc", tfe__hip_result, (void **, size_t, unsigned))                          \
  X(hipHostFree, "hipHostFree", tfe__hip_result, (void *))                                                 \
  X(hipMemcpyHtoDAsync, "hipMemcpyHtoDAsync", tfe__hip_result, (void *, void *, size_t, tfe__cu_stream))    \
  X(hipMemcpyDtoHAsync, "hipMemcpyDtoHAsync", tfe__hip_result, (void *, void *, size_t, tfe__cu_stream))    \
  X(hipMemcpyDtoDAsync, "hipMemcpyDtoDAsync", tfe__hip_result, (void *, void *, size_t, tfe__cu_stream))    \
  X(hipMemcpyDtoH, "hipMemcpyDtoH", tfe__hip_result, (void *, void *, size_t))                             \
  X(hipStreamCreateWithFlags, "hipStreamCreateWithFlags", tfe__hip_result, (tfe__cu_stream *, unsigned))   \
  X(hipStreamDestroy, "hipStreamDestroy", tfe__hip_result, (tfe__cu_stream))                               \
  X(hipStreamSynchronize, "hipStreamSynchronize", tfe__hip_result, (tfe__cu_stream))                       \
  X(hipStreamWaitEvent, "hipStreamWaitEvent", tfe__hip_result, (tfe__cu_stream, tfe__cu_event, unsigned))  \
  X(hipEventCreateWithFlags, "hipEventCreateWithFlags", tfe__hip_result, (tfe__cu_event *, unsigned))      \
  X(hipEventDestroy, "hipEventDestroy", tfe__hip_result, (tfe__cu_event))                                  \
  X(hipEventRecord, "hipEventRecord", tfe__hip_result, (tfe__cu_event, tfe__cu_stream))                    \
  X(hipEventSynchronize, "hipEventSynchronize", tfe__hip_result, (tfe__cu_event))                          \
  X(hipEventQuery, "hipEventQuery", tfe__hip_result, (tfe__cu_event))                                      \
  X(hipEventElapsedTime, "hipEventElapsedTime", tfe__hip_result, (float *, tfe__cu_event, tfe__cu_event))  \
  X(hipModuleLoadData, "hipModuleLoadData", tfe__hip_result, (tfe__cu_module *, const void *))             \
  X(hipModuleUnload, "hipModuleUnload", tfe__hip_result, (tfe__cu_module))                                 \
  X(hipModuleGetFunction, "hipModuleGetFunction", tfe__hip_result,                                        \
    (tfe__cu_function *, tfe__cu_module, const char *))                                                    \
  X(hipModuleLaunchKernel, "hipModuleLaunchKernel", tfe__hip_result,                                      \
    (tfe__cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, tfe__cu_stream, \
     void **, void **))                                                                                    \
  X(hipGetErrorString, "hipGetErrorString", const char *, (tfe__hip_result))
/* The device's architecture (gcnArchName, "gfx90a:sramecc+:xnack-") is read from
 * hipGetDeviceProperties' struct, whose layout changes between ROCm versions (ROCm 6 exports
 * the new one as hipGetDevicePropertiesR0600): the companion looks for the "gfx" string in it
 * rather than at an offset. Optional: without it the kernels are compiled for HIPRTC's default. */
typedef tfe__hip_result (*tfe__hip_props_fn)(void *, int);
#define TFE__HIP_PROPS_NAMES {"hipGetDevicePropertiesR0600", "hipGetDeviceProperties"}

/* hipBLAS: operations are 111/112/113 (cuBLAS: 0/1/2) and the statuses differ past 0
 * (HIPBLAS_STATUS_*: shims translate both); the rest has cuBLAS's ABI (hipblasStride = int64_t,
 * scalars by address, complex types by address). */
enum { TFE__HIPBLAS_OP_N = 111, TFE__HIPBLAS_OP_T = 112, TFE__HIPBLAS_OP_C = 113 };
/* hipblasFillMode_t, hipblasDiagType_t, hipblasSideMode_t (the trsm shims translate cuBLAS's) */
enum { TFE__HIPBLAS_FILL_UPPER = 121, TFE__HIPBLAS_FILL_LOWER = 122 };
enum { TFE__HIPBLAS_DIAG_NON_UNIT = 131, TFE__HIPBLAS_DIAG_UNIT = 132 };
enum { TFE__HIPBLAS_SIDE_LEFT = 141, TFE__HIPBLAS_SIDE_RIGHT = 142 };
enum {
  TFE__HIPBLAS_STATUS_NOT_INITIALIZED = 1, TFE__HIPBLAS_STATUS_ALLOC_FAILED = 2, TFE__HIPBLAS_STATUS_INVALID_VALUE = 3,
  TFE__HIPBLAS_STATUS_MAPPING_ERROR = 4, TFE__HIPBLAS_STATUS_EXECUTION_FAILED = 5,
  TFE__HIPBLAS_STATUS_INTERNAL_ERROR = 6, TFE__HIPBLAS_STATUS_NOT_SUPPORTED = 7, TFE__HIPBLAS_STATUS_ARCH_MISMATCH = 8,
  TFE__HIPBLAS_STATUS_HANDLE_IS_NULLPTR = 9, TFE__HIPBLAS_STATUS_INVALID_ENUM = 10, TFE__HIPBLAS_STATUS_UNKNOWN = 11
};
/* cuBLAS's statuses that the hipBLAS ones become (cublasStatus_t) */
enum {
  TFE__CUBLAS_STATUS_NOT_INITIALIZED = 1, TFE__CUBLAS_STATUS_ALLOC_FAILED = 3, TFE__CUBLAS_STATUS_INVALID_VALUE = 7,
  TFE__CUBLAS_STATUS_ARCH_MISMATCH = 8, TFE__CUBLAS_STATUS_MAPPING_ERROR = 11, TFE__CUBLAS_STATUS_EXECUTION_FAILED = 13,
  TFE__CUBLAS_STATUS_INTERNAL_ERROR = 14, TFE__CUBLAS_STATUS_NOT_SUPPORTED = 15
};
#define TFE__HIPBLAS_FUNCS(X)                                                                 \
  X(create, "hipblasCreate", tfe__blas_status, (tfe__blas_handle *))                         \
  X(destroy, "hipblasDestroy", tfe__blas_status, (tfe__blas_handle))                         \
  X(set_stream, "hipblasSetStream", tfe__blas_status, (tfe__blas_handle, tfe__cu_stream))    \
  X(sgemm, "hipblasSgemm", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                            \
  X(dgemm, "hipblasDgemm", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                            \
  X(cgemm, "hipblasCgemm", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                            \
  X(zgemm, "hipblasZgemm", tfe__blas_status, TFE__BLAS_GEMM_ARGS)                            \
  X(sgemm_sb, "hipblasSgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)        \
  X(dgemm_sb, "hipblasDgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)        \
  X(cgemm_sb, "hipblasCgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)        \
  X(zgemm_sb, "hipblasZgemmStridedBatched", tfe__blas_status, TFE__BLAS_GEMM_SB_ARGS)        \
  X(strsm_b, "hipblasStrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)                 \
  X(dtrsm_b, "hipblasDtrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)                 \
  X(ctrsm_b, "hipblasCtrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)                 \
  X(ztrsm_b, "hipblasZtrsmBatched", tfe__blas_status, TFE__BLAS_TRSM_B_ARGS)

/* HIPRTC: NVRTC's table with HIP's names (the same signatures); a code object stands for both
 * the CUBIN and the PTX (HIP has no intermediate form the runtime finishes). ROCm 5 carries
 * these entries in libamdhip64 itself, ROCm 6 in libhiprtc. */
#define TFE__HIPRTC_FUNCS(X)                                                                          \
  X(version, "hiprtcVersion", tfe__rtc_result, (int *, int *))                                      \
  X(create, "hiprtcCreateProgram", tfe__rtc_result,                                                   \
    (tfe__rtc_prog *, const char *, const char *, int, const char *const *, const char *const *))      \
  X(destroy, "hiprtcDestroyProgram", tfe__rtc_result, (tfe__rtc_prog *))                            \
  X(compile, "hiprtcCompileProgram", tfe__rtc_result, (tfe__rtc_prog, int, const char *const *))    \
  X(log_size, "hiprtcGetProgramLogSize", tfe__rtc_result, (tfe__rtc_prog, size_t *))                \
  X(log, "hiprtcGetProgramLog", tfe__rtc_result, (tfe__rtc_prog, char *))                           \
  X(cubin_size, "hiprtcGetCodeSize", tfe__rtc_result, (tfe__rtc_prog, size_t *))                    \
  X(cubin, "hiprtcGetCode", tfe__rtc_result, (tfe__rtc_prog, char *))                               \
  X(ptx_size, "hiprtcGetCodeSize", tfe__rtc_result, (tfe__rtc_prog, size_t *))                      \
  X(ptx, "hiprtcGetCode", tfe__rtc_result, (tfe__rtc_prog, char *))                                 \
  X(error_string, "hiprtcGetErrorString", const char *, (tfe__rtc_result))
/* hipSOLVER: its compatibility API (hipsolverDn*, cuSOLVER's signatures). The 64-bit generic
 * entries exist for geqrf, getrf, getrs and potrf (hipsolver-dense64.h, ROCm 6.2 and later:
 * hipDataType has cudaDataType's values); svd and eigh take the typed {S,D,C,Z}gesvd and
 * {S,D}syevd / {C,Z}heevd entries (int sizes, workspace counted in elements) and QR's Q the
 * typed orgqr / ungqr ones, as on CUDA. Enums differ from cuSOLVER's: operations 111/112/113,
 * fill modes upper 121 / lower 122, eigen modes 201 (values) / 202 (vectors); shims in
 * tenferro_gpu.c translate them (tfe__hipsol_*). Statuses: 0 is success on both; any other is
 * reported by its number. Never run on AMD hardware (docs/gpu.md); the loader test fills the
 * table from a fake libhipsolver and checks what reaches it. */
enum { TFE__HIPSOLVER_OP_N = 111, TFE__HIPSOLVER_OP_T = 112, TFE__HIPSOLVER_OP_C = 113 };
enum { TFE__HIPSOLVER_FILL_UPPER = 121, TFE__HIPSOLVER_FILL_LOWER = 122 };
enum { TFE__HIPSOLVER_EIG_NOVECTOR = 201, TFE__HIPSOLVER_EIG_VECTOR = 202 };
#define TFE__HIPSOL_GESVD_BS_ARGS (tfe__sol_handle, int, int, int *)
#define TFE__HIPSOL_GESVD_ARGS \
  (tfe__sol_handle, signed char, signed char, int, int, void *, int, void *, void *, int, void *, int, void *, int, void *, int *)
#define TFE__HIPSOL_SYEVD_BS_ARGS (tfe__sol_handle, int, int, int, const void *, int, const void *, int *)
#define TFE__HIPSOL_SYEVD_ARGS (tfe__sol_handle, int, int, int, void *, int, void *, void *, int, int *)
#define TFE__HIPSOLVER_FUNCS(X)                                                                                     \
  X(create, "hipsolverDnCreate", tfe__sol_status, (tfe__sol_handle *))                                            \
  X(destroy, "hipsolverDnDestroy", tfe__sol_status, (tfe__sol_handle))                                            \
  X(set_stream, "hipsolverDnSetStream", tfe__sol_status, (tfe__sol_handle, tfe__cu_stream))                       \
  X(params_create, "hipsolverDnCreateParams", tfe__sol_status, (tfe__sol_params *))                               \
  X(params_destroy, "hipsolverDnDestroyParams", tfe__sol_status, (tfe__sol_params))                               \
  X(geqrf_bs, "hipsolverDnXgeqrf_bufferSize", tfe__sol_status,                                                   \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, const void *, int64_t, int, const void *, int,     \
     size_t *, size_t *))                                                                                        \
  X(geqrf, "hipsolverDnXgeqrf", tfe__sol_status,                                                                 \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, void *, int64_t, int, void *, int, void *, size_t,  \
     void *, size_t, int *))                                                                                     \
  X(potrf_bs, "hipsolverDnXpotrf_bufferSize", tfe__sol_status,                                                   \
    (tfe__sol_handle, tfe__sol_params, int, int64_t, int, const void *, int64_t, int, size_t *, size_t *))      \
  X(potrf, "hipsolverDnXpotrf", tfe__sol_status,                                                                 \
    (tfe__sol_handle, tfe__sol_params, int, int64_t, int, void *, int64_t, int, void *, size_t, void *, size_t,  \
     int *))                                                                                                     \
  X(getrf_bs, "hipsolverDnXgetrf_bufferSize", tfe__sol_status,                                                   \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, const void *, int64_t, int, size_t *, size_t *))  \
  X(getrf, "hipsolverDnXgetrf", tfe__sol_status,                                                                 \
    (tfe__sol_handle, tfe__sol_params, int64_t, int64_t, int, void *, int64_t, int64_t *, int, void *, size_t,   \
     void *, size_t, int *))                                                                                     \
  X(getrs, "hipsolverDnXgetrs", tfe__sol_status,                                                                 \
    (tfe__sol_handle, tfe__sol_params, int, int64_t, int64_t, int, const void *, int64_t, const int64_t *, int,  \
     void *, int64_t, int *))                                                                                    \
  X(sorgqr_bs, "hipsolverDnSorgqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                          \
  X(dorgqr_bs, "hipsolverDnDorgqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                          \
  X(cungqr_bs, "hipsolverDnCungqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                          \
  X(zungqr_bs, "hipsolverDnZungqr_bufferSize", tfe__sol_status, TFE__SOL_ORGQR_BS_ARGS)                          \
  X(sorgqr, "hipsolverDnSorgqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                           \
  X(dorgqr, "hipsolverDnDorgqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                           \
  X(cungqr, "hipsolverDnCungqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                           \
  X(zungqr, "hipsolverDnZungqr", tfe__sol_status, TFE__SOL_ORGQR_ARGS)                                           \
  X(sgesvd_bs, "hipsolverDnSgesvd_bufferSize", tfe__sol_status, TFE__HIPSOL_GESVD_BS_ARGS)                       \
  X(dgesvd_bs, "hipsolverDnDgesvd_bufferSize", tfe__sol_status, TFE__HIPSOL_GESVD_BS_ARGS)                       \
  X(cgesvd_bs, "hipsolverDnCgesvd_bufferSize", tfe__sol_status, TFE__HIPSOL_GESVD_BS_ARGS)                       \
  X(zgesvd_bs, "hipsolverDnZgesvd_bufferSize", tfe__sol_status, TFE__HIPSOL_GESVD_BS_ARGS)                       \
  X(sgesvd, "hipsolverDnSgesvd", tfe__sol_status, TFE__HIPSOL_GESVD_ARGS)                                        \
  X(dgesvd, "hipsolverDnDgesvd", tfe__sol_status, TFE__HIPSOL_GESVD_ARGS)                                        \
  X(cgesvd, "hipsolverDnCgesvd", tfe__sol_status, TFE__HIPSOL_GESVD_ARGS)                                        \
  X(zgesvd, "hipsolverDnZgesvd", tfe__sol_status, TFE__HIPSOL_GESVD_ARGS)                                        \
  X(ssyevd_bs, "hipsolverDnSsyevd_bufferSize", tfe__sol_status, TFE__HIPSOL_SYEVD_BS_ARGS)                       \
  X(dsyevd_bs, "hipsolverDnDsyevd_bufferSize", tfe__sol_status, TFE__HIPSOL_SYEVD_BS_ARGS)                       \
  X(cheevd_bs, "hipsolverDnCheevd_bufferSize", tfe__sol_status, TFE__HIPSOL_SYEVD_BS_ARGS)                       \
  X(zheevd_bs, "hipsolverDnZheevd_bufferSize", tfe__sol_status, TFE__HIPSOL_SYEVD_BS_ARGS)                       \
  X(ssyevd, "hipsolverDnSsyevd", tfe__sol_status, TFE__HIPSOL_SYEVD_ARGS)                                        \
  X(dsyevd, "hipsolverDnDsyevd", tfe__sol_status, TFE__HIPSOL_SYEVD_ARGS)                                        \
  X(cheevd, "hipsolverDnCheevd", tfe__sol_status, TFE__HIPSOL_SYEVD_ARGS)                                        \
  X(zheevd, "hipsolverDnZheevd", tfe__sol_status, TFE__HIPSOL_SYEVD_ARGS)
/* hipSOLVER's general eigensolver (recent ROCm; cuSOLVER's signature, hipSOLVER's eigen-mode
 * enums): loaded when present, both or neither, as on CUDA; a shim translates the modes. */
#define TFE__HIPSOLVER_FUNCS_OPT(X)                                                         \
  X(geev_bs, "hipsolverDnXgeev_bufferSize", tfe__sol_status, TFE__SOL_GEEV_BS_ARGS) \
  X(geev, "hipsolverDnXgeev", tfe__sol_status, TFE__SOL_GEEV_ARGS)
#define TFE__HIPBLAS_PROBE "hipblasCreate"
#define TFE__HIPRTC_PROBE "hiprtcCreateProgram"
#define TFE__HIPSOLVER_PROBE "hipsolverDnCreate"
#define TFE__HIPTENSOR_PROBE "hiptensorCreate"

/* ---- driver entry points of the device pool, pinned buffers and runtime streams (memory.h,
 * stream.h); filled like TFE__CU_FUNCS ---------------------------------------------------- */
#define TFE__CU_ERROR_NOT_READY 600       /* cuEventQuery / cuStreamQuery: work still pending */
#define TFE__CU_EVENT_DISABLE_TIMING 2u
#define TFE__CU_FUNCS_RT(X)                                                                              \
  X(cuEventQuery, "cuEventQuery", tfe__cu_result, (tfe__cu_event))                                     \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", tfe__cu_result, (tfe__cu_stream, tfe__cu_event, unsigned)) \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", tfe__cu_result, (void *, tfe__cu_ptr, size_t))

/* ---- CUDA graphs (graph.h): a plan's launches captured from the stream once and replayed;
 * loaded when present (all or none), absent: every call queues its work as before ---------- */
typedef struct tfe__cu_graph_s *tfe__cu_graph;          /* CUgraph */
typedef struct tfe__cu_graphexec_s *tfe__cu_graph_exec; /* CUgraphExec */
#define TFE__CU_STREAM_CAPTURE_MODE_RELAXED 2           /* CUstreamCaptureMode */
#define TFE__CU_FUNCS_GRAPH(X)                                                                                  \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", tfe__cu_result, (tfe__cu_stream, int))                  \
  X(cuStreamEndCapture, "cuStreamEndCapture", tfe__cu_result, (tfe__cu_stream, tfe__cu_graph *))             \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", tfe__cu_result,                              \
    (tfe__cu_graph_exec *, tfe__cu_graph, unsigned long long))                                               \
  X(cuGraphLaunch, "cuGraphLaunch", tfe__cu_result, (tfe__cu_graph_exec, tfe__cu_stream))                    \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", tfe__cu_result, (tfe__cu_graph_exec))                          \
  X(cuGraphDestroy, "cuGraphDestroy", tfe__cu_result, (tfe__cu_graph))

/* ---- optional driver entries, each absent alone: cuFuncSetAttribute lets tfe_perm2d_b take
 * shared memory beyond 48 KiB (exec.h); absent (HIP's table), that kernel is not used ---- */
#define TFE__CU_FUNCS_OPT(X) X(cuFuncSetAttribute, "cuFuncSetAttribute", tfe__cu_result, (tfe__cu_function, int, int))

#endif /* TFE__GPU_COMPANION */
#endif
