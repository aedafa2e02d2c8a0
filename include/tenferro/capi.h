/* tenferro/capi.h — the stable C ABI of libtenferro.so (docs/capi.md).
 *
 * A standalone header: it includes no other tenferro header, and nothing in it has a layout
 * that depends on a build macro (TFE_MAX_RANK, the kind list, opt-outs): tensors are opaque
 * handles, element kinds and statuses are plain ints with the values of tfe_dtype and
 * tfe_status, shapes are caller arrays. For FFI clients (Fortran, Python ctypes, Julia ccall)
 * and programs that must survive a rebuild of the library with other options.
 * The entry points live in libtenferro_c.so only (lib/capi.c, with the library inside it and
 * nothing else exported): link -ltenferro_c. */
#ifndef TENFERRO_CAPI_H
#define TENFERRO_CAPI_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define TFE_CAPI_VERSION 1 /* raised when an entry point changes; additions keep it */
#if defined(__GNUC__)
#define TFE_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define TFE_CAPI_EXPORT
#endif

typedef struct tfe_handle tfe_handle; /* one tensor: dtype, shape, strides, and a reference to its memory */

/* Element kinds: the values of tfe_dtype (core/kinds.h), fixed by this ABI. */
enum {
  TFE_CAPI_F32 = 0, TFE_CAPI_F64 = 1, TFE_CAPI_C64 = 2, TFE_CAPI_C128 = 3, TFE_CAPI_I32 = 4, TFE_CAPI_I64 = 5,
  TFE_CAPI_MAXPLUS_F32 = 6, TFE_CAPI_MAXPLUS_F64 = 7, TFE_CAPI_MINPLUS_F32 = 8, TFE_CAPI_MINPLUS_F64 = 9,
  TFE_CAPI_MAXTIMES_F32 = 10, TFE_CAPI_MAXTIMES_F64 = 11
};
/* Memory orders for dense shapes (strides == NULL). */
enum { TFE_CAPI_COLMAJOR = 0, TFE_CAPI_ROWMAJOR = 1 };

/* TFE_CAPI_VERSION of the library; compare with the header's at start-up. */
TFE_CAPI_EXPORT int tfe_capi_version(void);
/* The message of the last failure on this thread ("" after success is not guaranteed). */
TFE_CAPI_EXPORT const char *tfe_capi_last_error(void);

/* ---- create and release --------------------------------------------------------------------
 * dims[rank]; strides[rank] in elements (NULL: dense in `order`); data points at element
 * (0, ..., 0). All return 0 (TFE_OK) or a tfe_status code with a message. */
/* A new handle owning a copy of the elements (dense in `order`). */
TFE_CAPI_EXPORT int tfe_handle_copy(int dtype, int rank, const int64_t *dims, const int64_t *strides, int order,
                                    const void *data, tfe_handle **out);
/* A new handle on the caller's memory (no copy); release(ctx) runs once, when tenferro holds no
 * reference any more (release may be NULL: the memory must then outlive every handle). */
TFE_CAPI_EXPORT int tfe_handle_borrow(int dtype, int rank, const int64_t *dims, const int64_t *strides, int order,
                                      void *data, void (*release)(void *ctx), void *ctx, tfe_handle **out);
/* A new zero-filled handle, dense in `order`. */
TFE_CAPI_EXPORT int tfe_handle_zeros(int dtype, int rank, const int64_t *dims, int order, tfe_handle **out);
TFE_CAPI_EXPORT void tfe_handle_release(tfe_handle *h);

/* ---- queries ------------------------------------------------------------------------------- */
TFE_CAPI_EXPORT int tfe_handle_dtype(const tfe_handle *h);
TFE_CAPI_EXPORT int tfe_handle_rank(const tfe_handle *h);
/* dims[rank] and strides[rank] (in elements); either may be NULL. */
TFE_CAPI_EXPORT int tfe_handle_shape(const tfe_handle *h, int64_t *dims, int64_t *strides);
/* Address of element (0, ..., 0). */
TFE_CAPI_EXPORT void *tfe_handle_data(const tfe_handle *h);

/* ---- einsum and contraction -------------------------------------------------------------------
 * Operands and outputs share one dtype. */
/* *out = einsum(expr, ops): a new handle, dense in `order`. */
TFE_CAPI_EXPORT int tfe_handle_einsum(const char *expr, int n, tfe_handle *const *ops, int order, tfe_handle **out);
/* The same with options, a string of key=value words separated by spaces or commas (NULL or ""
 * for the defaults): algo=auto|greedy|dp|anneal|given, path=A:B;C:D;... (a given path: operand
 * positions per step, opt_einsum's linear format unless path_format=ssa; implies algo=given),
 * memory_limit=BYTES (slice above it), time_budget=SECONDS, greedy_trials=N, greedy_alpha=X,
 * greedy_temp=X, dp_max=N, write_weight=X, seed=N, order=row|col (of the result; default row),
 * cache=0|1 (the plan cache; default 1) -- the planner fields of tenferro's tfe_einsum_opts.
 * A string keeps the ABI free of an options struct whose layout would grow. */
TFE_CAPI_EXPORT int tfe_handle_einsum_ex(const char *expr, int n, tfe_handle *const *ops, const char *options,
                                         tfe_handle **out);
/* The contraction path (opt_einsum's linear format: pairs[2k], pairs[2k+1], at most cap pairs)
 * and cost einsum would use, without computing: *nsteps pairs; cost[0] flops (multiply-adds),
 * cost[1] log2 of the largest intermediate, cost[2] slices, cost[3] largest rank (cost may be NULL). */
TFE_CAPI_EXPORT int tfe_handle_einsum_path(const char *expr, int n, tfe_handle *const *ops, const char *options,
                                           int *pairs, int cap, int *nsteps, double *cost);
/* Integer labels, any number of operands: labels[k] names the axes of ops[k] (rank(ops[k])
 * int32 each); out_labels[out_rank] the result's (NULL: labels seen once, ascending). */
TFE_CAPI_EXPORT int tfe_handle_einsum_labels(int n, tfe_handle *const *ops, const int32_t *const *labels,
                                             const int32_t *out_labels, int out_rank, const char *options,
                                             tfe_handle **out);
/* out = einsum(expr, ops), written into out's memory (the shape must match). */
TFE_CAPI_EXPORT int tfe_handle_einsum_into(tfe_handle *out, const char *expr, int n, tfe_handle *const *ops);
/* c = sum over the labels absent from lc of a * b, integer labels (la[rank(a)], ...), in place. */
TFE_CAPI_EXPORT int tfe_handle_contract(const tfe_handle *a, const int32_t *la, const tfe_handle *b, const int32_t *lb,
                                        tfe_handle *c, const int32_t *lc);

/* ---- DLPack (docs/dlpack.md) -------------------------------------------------------------------
 * managed: a DLManagedTensorVersioned * (versioned != 0) or a legacy DLManagedTensor *. Import
 * takes it on success only (its deleter runs when the last reference goes); a read-only tensor
 * is refused unless allow_read_only. Export: a new managed tensor holding a reference to h's
 * memory; the consumer calls its deleter once. */
TFE_CAPI_EXPORT int tfe_handle_from_dlpack(void *managed, int versioned, int allow_read_only, tfe_handle **out);
TFE_CAPI_EXPORT int tfe_handle_to_dlpack(const tfe_handle *h, int versioned, void **managed);

/* ---- plans: the hot path of a repeated einsum -----------------------------------------------------
 * A plan fixes the expression, the kind and every operand's dims and strides (in elements); running
 * it takes only the data addresses (element (0, ..., 0) of each operand) and writes the result dense
 * in the plan's order (options as tfe_handle_einsum_ex; order=row by default) at `out`, which holds
 * tfe_capi_plan_out_shape's elements. Nothing is looked up or allocated per run but the
 * intermediates of a multi-step plan. A plan may run from several threads at once. */
typedef struct tfe_capi_plan tfe_capi_plan;
TFE_CAPI_EXPORT int tfe_capi_plan_new(int dtype, const char *expr, int n, const int *ranks,
                                      const int64_t *const *dims, const int64_t *const *strides, const char *options,
                                      tfe_capi_plan **out);
/* Returns the result's rank; dims[rank] (may be NULL) get its dims, cost[4] (may be NULL) the
 * cost as tfe_handle_einsum_path gives it. */
TFE_CAPI_EXPORT int tfe_capi_plan_out_shape(const tfe_capi_plan *p, int64_t *dims, double *cost);
TFE_CAPI_EXPORT int tfe_capi_plan_run(const tfe_capi_plan *p, const void *const *data, void *out);
TFE_CAPI_EXPORT void tfe_capi_plan_release(tfe_capi_plan *p);

/* ---- linear algebra and the stateless AD rules --------------------------------------------------
 * Operations, numbered as tenferro's tfe_ad_op. Float kinds only (F32, F64, C64, C128). Matrices
 * are the first two axes of a handle, batch axes follow (tenferro's convention: A (m, n, batch...)).
 * Results are new handles, dense column-major. */
enum {
  TFE_CAPI_OP_EINSUM = 0,    /* [A] or [A, B] -> [C]; params: the expression (below) */
  TFE_CAPI_OP_SVD = 10,      /* [A] -> [U, S, Vh] thin; S real */
  TFE_CAPI_OP_QR = 12,       /* [A] -> [Q, R] thin */
  TFE_CAPI_OP_LQ = 13,       /* [A] -> [L, Q] thin */
  TFE_CAPI_OP_EIGH = 14,     /* [A] -> [W, V], A Hermitian (lower triangle read); W real ascending */
  TFE_CAPI_OP_EIG = 15,      /* [A] -> [W, V] complex (linalg: every float kind; rules: complex kinds) */
  TFE_CAPI_OP_LU = 16,       /* [A] -> linalg: [perm (I64), L, U]; rules: [L, U] (perm constant) */
  TFE_CAPI_OP_CHOLESKY = 17, /* [A] -> [L] */
  TFE_CAPI_OP_SOLVE = 18,    /* [A, B] -> [A^-1 B] */
  TFE_CAPI_OP_INV = 19,      /* [A] -> [A^-1] */
  TFE_CAPI_OP_DET = 20,      /* [A] -> [det A] */
  TFE_CAPI_OP_SLOGDET = 21,  /* [A] -> linalg: [sign, log|det A| (real)]; rules: [log|det A|] */
  TFE_CAPI_OP_PINV = 22,     /* [A] -> [A^+] */
  TFE_CAPI_OP_EXPM = 24,     /* [A] -> [exp A] */
  TFE_CAPI_OP_POLAR = 25,    /* [A] -> [Up, P] */
  TFE_CAPI_OP_LSTSQ = 27     /* [A, B] -> [least-squares X] */
};
/* Inputs and outputs of op (as the rules count them); 0 or a status for an unknown op. */
TFE_CAPI_EXPORT int tfe_capi_op_arity(int op, int *nin, int *nout);
/* Linear algebra: y[0..nout) new handles (nout as in the enum's linalg column). Options:
 * "full=1" (QR, LQ: complete Q), "rcond=X" (PINV). */
TFE_CAPI_EXPORT int tfe_handle_linalg(int op, const char *options, int nin, tfe_handle *const *x, int *nout,
                                      tfe_handle **y);
/* Stateless rules (ChainRules' primal / frule / rrule). params: for TFE_CAPI_OP_EINSUM the
 * expression with an explicit output, over one or two operands: characters ("ij,jk->ik") or
 * integer labels separated by spaces ("0 1,1 2->0 2": the contraction with integer labels);
 * for the other ops NULL or "eta=X" (spectral broadening of the SVD / eigh rules).
 * primal: y[nout] new handles. frule: dy[nout] from the tangents dx[nin] (an entry may be NULL:
 * zero) at x with primal outputs y. rrule: dx[nin] from the cotangents dy[nout] (NULL: zero).
 * Complex cotangents follow PyTorch's convention (docs/ad.md). */
TFE_CAPI_EXPORT int tfe_handle_primal(int op, const char *params, int nin, tfe_handle *const *x, tfe_handle **y);
TFE_CAPI_EXPORT int tfe_handle_frule(int op, const char *params, int nin, tfe_handle *const *x,
                                     tfe_handle *const *dx, tfe_handle *const *y, tfe_handle **dy);
TFE_CAPI_EXPORT int tfe_handle_rrule(int op, const char *params, int nin, tfe_handle *const *x,
                                     tfe_handle *const *y, tfe_handle *const *dy, tfe_handle **dx);

/* ---- devices and backends -----------------------------------------------------------------------
 * Compute devices: "cpu:0" always, CPU pools, and one per GPU once a GPU backend is loaded. */
enum { TFE_CAPI_DEV_CPU = 0, TFE_CAPI_DEV_CUDA = 1, TFE_CAPI_DEV_ROCM = 2, TFE_CAPI_DEV_OTHER = 3 };
/* Writes up to max device ids to ids (may be NULL); returns how many devices there are. */
TFE_CAPI_EXPORT int tfe_capi_device_list(int *ids, int max);
/* kind (TFE_CAPI_DEV_*), index (CPU pool k, GPU N), memory bytes (0: unknown), the name ("cpu:0",
 * "cuda:0") into name[cap]; any output may be NULL. */
TFE_CAPI_EXPORT int tfe_capi_device_info(int id, int *kind, int *index, int64_t *memory_bytes, char *name, int cap);
/* Loads a GPU backend at run time (dlopen; no CUDA or ROCm needed to build): which = "auto"
 * (CUDA, then HIP, from their usual sonames), "cuda", "cutensor", "hip", "hiptensor"; path NULL
 * for the usual sonames. No GPU is TFE_ERR_DEVICE with a message, never a crash. */
TFE_CAPI_EXPORT int tfe_capi_backend_load(const char *which, const char *path);
/* One line: what the GPU discovery loaded from where, or why there is no GPU. */
TFE_CAPI_EXPORT const char *tfe_capi_backend_status(void);

#ifdef __cplusplus
}
#endif
#endif
