/* tenferro/gpu/gpu.h — gpu room: GPUs found at run time (docs/gpu.md).
 *
 * The declarations of this room come with <tenferro.h>; the bodies live in ONE companion
 * translation unit, include/tenferro/gpu/tenferro_gpu.c, that a program compiles when it wants
 * GPUs (with only a C compiler: no CUDA or ROCm header or library is needed to build it, every
 * vendor library is opened with dlopen at run time). A program that does not compile it never
 * calls these functions (calling one is a link error that names it).
 *
 * Contents:
 *   discovery        tfe_gpu_init (automatic), tfe_gpu_load_cuda / _cutensor / _hip / _hiptensor
 *                    (explicit paths), tfe_gpu_status (what was loaded from where, or why not)
 *   devices          tfe_gpu_device_count, tfe_gpu_device_type, tfe_gpu_device_get
 *   libraries        tfe_gpu_library_path: which vendor library backs which slot, or NULL
 *   backends         tfe_gpu_backend: the registered vtable "cuda:N" (or "hip:N": AMD, never run on
 *                    AMD hardware) of device N
 *   memory           tfe_gpu_alloc_dyn, tfe_gpu_upload, tfe_gpu_download, tfe_gpu_synchronize,
 *                    the device and pinned pools (tfe_gpu_pool_*, tfe_gpu_pinned_stats)
 *   streams          tfe_gpu_stream_new (runtime streams on CUDA streams); plan cache stats
 *   tropical         tfe_gpu_tropical_matmul (max-plus, min-plus, max-times GEMM with the argmax)
 *   lifetime         tfe_gpu_shutdown
 * A missing library, driver or device is a clean "no GPU" answer (TFE_ERR_DEVICE with a message,
 * device count 0), never a crash; the CPU keeps working. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_GPU_H
#define TENFERRO_GPU_H
#include <tenferro/prims/prims.h>
typedef struct tfe_stream tfe_stream; /* runtime/stream.h (below this room) */

/* The companion unit defines these with external linkage in every linkage mode. */
#define TFE_GPU_API extern __attribute__((visibility("default")))

typedef enum tfe_gpu_vendor { TFE_GPU_NONE = 0, TFE_GPU_NVIDIA = 1, TFE_GPU_AMD = 2 } tfe_gpu_vendor;

/* The vendor libraries behind a device's slots. */
typedef enum tfe_gpu_lib {
  TFE_GPU_LIB_DRIVER = 0, /* libcuda / libamdhip64: devices, memory, streams, modules */
  TFE_GPU_LIB_BLAS,       /* cuBLAS / hipBLAS: GEMMs */
  TFE_GPU_LIB_RTC,        /* NVRTC / HIPRTC: generated kernels */
  TFE_GPU_LIB_SOLVER,     /* cuSOLVER / hipSOLVER: linalg (svd, qr, eigh, cholesky, lu, solve: solver.h) */
  TFE_GPU_LIB_TENSOR,     /* cuTENSOR / hipTensor: loaded when present, not used yet */
  TFE_GPU_LIB_COUNT
} tfe_gpu_lib;

typedef struct tfe_gpu_device_info {
  tfe_gpu_vendor vendor;
  int index;            /* N of "cuda:N" */
  char name[128];       /* "NVIDIA H100 80GB HBM3" */
  size_t total_mem;     /* bytes */
  int cc_major, cc_minor; /* compute capability (NVIDIA; AMD: HIP's, e.g. 9.0 for gfx90a) */
  int backend_id;       /* registry id of its backend (tfe_backend_get), -1: not registered */
} tfe_gpu_device_info;

/* Automatic discovery, once per process (later calls answer the first one's status): loads the
 * CUDA driver and libraries from their usual sonames, then HIP's; registers one backend per
 * device. TFE_OK when at least one device works; TFE_ERR_DEVICE ("no GPU: ...") otherwise. */
TFE_GPU_API tfe_status tfe_gpu_init(void);
/* Explicit loads: path NULL tries the usual sonames. load_cuda opens the driver (and, beside
 * it, cuBLAS, NVRTC, cuSOLVER and cuTENSOR from their sonames) and registers its devices;
 * load_hip does the same with libamdhip64, hipBLAS, HIPRTC, hipSOLVER and hipTensor (looked for
 * in the runtime's folder first) and registers "hip:N" (one vendor per process: refused while
 * the other's devices are registered). */
TFE_GPU_API tfe_status tfe_gpu_load_cuda(const char *path);
TFE_GPU_API tfe_status tfe_gpu_load_cutensor(const char *path);
TFE_GPU_API tfe_status tfe_gpu_load_hip(const char *path);
TFE_GPU_API tfe_status tfe_gpu_load_hiptensor(const char *path);
/* One line: what discovery loaded from where, or why there is no GPU. */
TFE_GPU_API const char *tfe_gpu_status(void);
/* The path a vendor library was loaded from, or NULL when absent. */
TFE_GPU_API const char *tfe_gpu_library_path(tfe_gpu_vendor v, tfe_gpu_lib lib);

/* Devices of every vendor, numbered from 0 in discovery order (0 when there is none). */
TFE_GPU_API int tfe_gpu_device_count(void);
TFE_GPU_API tfe_gpu_vendor tfe_gpu_device_type(int dev);
TFE_GPU_API tfe_status tfe_gpu_device_get(int dev, tfe_gpu_device_info *out);
/* The backend of device dev ("cuda:N" or "hip:N", memory space {TFE_MEM_GPU, dev}), or NULL. */
TFE_GPU_API const tfe_prims_backend *tfe_gpu_backend(int dev);

/* Device tensors: a tfe_dyn whose storage is in {TFE_MEM_GPU, dev}; release with
 * tfe_dyn_release (the memory goes back to the device). alloc_dyn: dense, uninitialised. */
TFE_GPU_API tfe_status tfe_gpu_alloc_dyn(tfe_dyn *out, int dev, tfe_dtype dt, int rank, const int64_t *dims,
                                         tfe_order order);
/* A device copy of a host view with the same dims, strides and offset (the bytes its elements
 * span are copied; negative and zero strides are kept). The bytes are staged through a pinned
 * buffer and the copy is queued: it returns without waiting, and the host view may change at
 * once. (Asynchronous on a runtime stream: tfe_transfer_async_dyn.) */
TFE_GPU_API tfe_status tfe_gpu_upload(tfe_dyn *out, int dev, const tfe_dyn *host);
/* Copies the stored elements of a device view into a host view of the same dims and kind (any
 * strides; conj flags are not applied); only the host view's elements are written. Waits for
 * the device's pending work. */
TFE_GPU_API tfe_status tfe_gpu_download(const tfe_dyn *device, const tfe_dyn *host);
/* Diagnostic: compiles every generated kernel for compute capability major.minor with NVRTC
 * (needs libnvrtc, not a device). */
TFE_GPU_API tfe_status tfe_gpu_compile_check(int cc_major, int cc_minor);
/* The same with HIPRTC for an AMD architecture ("gfx90a", "gfx942:sramecc+:xnack-"): needs
 * libhiprtc (ROCm 6) or libamdhip64 carrying HIPRTC (ROCm 5), not a device. */
TFE_GPU_API tfe_status tfe_gpu_compile_check_hip(const char *arch);
/* Gives every device's resources back (workspace, kernels, cuBLAS handles, streams, contexts)
 * and unregisters the backends; release every device tensor first. The libraries stay loaded;
 * tfe_gpu_init discovers the devices again. */
TFE_GPU_API void tfe_gpu_shutdown(void);
/* C = A B in the semiring of A's kind (max-plus, min-plus or max-times, f32 or f64) for device
 * matrices A (m x k), B (k x n), C (m x n) of any strides, on NVRTC-generated kernels; argmax
 * (i64, m x n, device memory; NULL: not kept) receives the k that won each C[i,j], the input of
 * tfe_rrule_tropical_matmul_S. Asynchronous on the device's stream. */
TFE_GPU_API tfe_status tfe_gpu_tropical_matmul(const tfe_dyn *A, const tfe_dyn *B, const tfe_dyn *C,
                                               const tfe_dyn *argmax);
/* The device memory pool of device dev (device tensors, einsum's arena and results, the
 * workspace) and its pool of pinned host buffers (the staging of transfers): statistics, the
 * cap of the device pool in bytes (0 turns pooling off; default half the device memory, or
 * TFE_GPU_POOL_BYTES at first use), trim (both pools give back every kept block, after the
 * queued work that locks it), counters reset. */
TFE_GPU_API tfe_status tfe_gpu_pool_stats(int dev, tfe_pool_stats *out);
TFE_GPU_API tfe_status tfe_gpu_pinned_stats(int dev, tfe_pool_stats *out);
TFE_GPU_API tfe_status tfe_gpu_pool_set_limit(int dev, size_t bytes);
TFE_GPU_API tfe_status tfe_gpu_pool_trim(int dev);
TFE_GPU_API tfe_status tfe_gpu_pool_stats_reset(int dev);
/* A runtime stream on device dev (tfe_stream_new with its backend's id): a CUDA stream with
 * its own cuBLAS handle; the asynchronous entry points enqueue there (docs/gpu.md). */
TFE_GPU_API tfe_status tfe_gpu_stream_new(int dev, tfe_stream **out);
/* The plan cache of binary contractions on device dev: hits and misses so far; enable(false)
 * makes every call analyse again (the process-wide switch, for measurements). */
TFE_GPU_API tfe_status tfe_gpu_plan_cache_stats(int dev, int64_t *hits, int64_t *misses);
TFE_GPU_API void tfe_gpu_plan_cache_enable(bool on);
/* CUDA graphs of einsum plans on device dev (docs/gpu.md): the runs replayed by one graph
 * launch, the captures made, the captures discarded (the steps then ran one by one);
 * enable(false) queues every step again (the process-wide switch, for measurements; also
 * TFE_GPU_GRAPHS=0 at first use). */
TFE_GPU_API tfe_status tfe_gpu_graph_stats(int dev, int64_t *replays, int64_t *captures, int64_t *fallbacks);
TFE_GPU_API void tfe_gpu_graphs_enable(bool on);
/* Waits until every operation queued on device dev has finished. */
TFE_GPU_API tfe_status tfe_gpu_synchronize(int dev);
/* The message of the companion's last failure on this thread (the same text as tfe_last_error
 * in the default mode; in the library mode tfe_last_error cannot be set from outside). */
TFE_GPU_API const char *tfe_gpu_last_error(void);

/* Default mode: the unit that calls tfe_gpu_init sets the backend registry up first. The
 * engine recognises the CPU backend's slots by address, and in this mode every unit has its own
 * copy of them (static functions): the unit that sets the registry up gives the registered CPU
 * vtable its slots, and a CPU contraction from another unit does not recognise them (it calls
 * the slot as a foreign backend's, which recurses). Without this, the companion (which
 * registers the GPU backends) would be that unit. Until the prims room shares the CPU slots
 * across units, run CPU contractions from the unit that calls tfe_gpu_init (docs/gpu.md). */
#if TFE__IMPL && !defined(TFE_IMPLEMENTATION) && !defined(TFE__GPU_COMPANION)
#define tfe_gpu_init() ((void)tfe_backend_id(&tfe__st.prims.reg.be[0]), tfe_gpu_init())
#define tfe_gpu_load_cuda(path) ((void)tfe_backend_id(&tfe__st.prims.reg.be[0]), tfe_gpu_load_cuda(path))
#endif

#endif
#elif !defined(TENFERRO_GPU_BODY) /* bodies: none here (the companion unit holds them) */
#define TENFERRO_GPU_BODY
#endif
