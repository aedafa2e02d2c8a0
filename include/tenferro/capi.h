/* tenferro/capi.h — the stable C ABI of libtenferro.so (docs/capi.md).
 *
 * A standalone header: it includes no other tenferro header, and nothing in it has a layout
 * that depends on a build macro (TFE_MAX_RANK, the kind list, opt-outs): tensors are opaque
 * handles, element kinds and statuses are plain ints with the values of tfe_dtype and
 * tfe_status, shapes are caller arrays. For FFI clients (Fortran, Python ctypes, Julia ccall)
 * and programs that must survive a rebuild of the library with other options.
 * The entry points live in the library only (lib/capi.c): link -ltenferro. */
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
 * for the defaults): algo=auto|greedy|dp|anneal, memory_limit=BYTES (slice above it),
 * time_budget=SECONDS, greedy_trials=N, seed=N, order=row|col (of the result; default row),
 * cache=0|1 (the plan cache; default 1).
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

#ifdef __cplusplus
}
#endif
#endif
