/* tenferro/gpu/solver.h — gpu room, companion only: the linalg slot of a CUDA device's backend,
 * on cuSOLVER (docs/gpu.md, "linalg").
 *
 * The linalg room's entry points reach this slot with the typed function's arguments
 * (tfe_linalg_call): views whose data are device addresses (a dtype-tagged call on device
 * operands: tfe_svd_dyn, tfe_qr_dyn, tfe_eigh_dyn, tfe_cholesky_dyn, tfe_lu_dyn, tfe_solve_dyn)
 * and the addresses of the typed result tensors, which get new dense column-major tensors in the
 * device's memory. The checks, shapes, error codes and messages are the CPU code's
 * (linalg/factor_tpl.h, ops_tpl.h); so are the conventions:
 *   svd       A = U diag(S) Vh, S descending (cusolverDnXgesvd; it takes m >= n only, so a wide
 *             A is factored as A^H = U' S V'^H and U = V', Vh = U'^H). The signs (phases) of
 *             singular vectors are LAPACK's choice on both sides and may differ between them.
 *   qr        A = Q R, diag(R) real and >= 0 (the CPU's gauge, applied by tfe_la_gauge);
 *             cusolverDnXgeqrf, then {S,D}orgqr / {C,Z}ungqr for Q.
 *   eigh      W ascending, only the lower triangle read (cusolverDnXsyevd); eigenvector signs free.
 *   eig       complex kinds: W (not sorted) and V, columns of unit 2-norm with the largest component
 *             real, as LAPACK's geev (cusolverDnXgeev, CUDA 12.6 and later, or hipsolverDnXgeev;
 *             loaded when present: without it eig answers TFE_ERR_UNSUPPORTED, and the AD tape runs
 *             only that primal on the host). Real kinds: TFE_ERR_UNSUPPORTED (the CPU's
 *             geev unpacks conjugate pairs; on the device, convert A to the complex kind).
 *   cholesky  A = L L^H, lower (cusolverDnXpotrf); upper triangle zeroed.
 *   lu        A[perm[i], :] = (L U)[i, :] (cusolverDnXgetrf with pivoting); singular is no error.
 *   solve     X = A^-1 B (cusolverDnXgetrf + cusolverDnXgetrs), B a matrix or a vector batch.
 *   trisolve  X = A^-1 B for the lower or upper triangle of A (cublas{S,D,C,Z}trsmBatched; a zero
 *             on a non-unit diagonal is TFE_ERR_SINGULAR, as trtrs reports it).
 * Every input is checked for NaN and infinity on the device first (tfe_la_finite over its strides:
 * the CPU refuses them too, at the same point of its checks; the message names the first such
 * element, found on the host on that error path only). Inputs (any strides, lazy conjugation)
 * are then packed by the unary kernel into the device's workspace or straight into a result
 * (cuSOLVER overwrites its input). cuSOLVER's info codes of
 * every batch item are gathered on the device and read back once, then turned into the CPU's
 * errors: TFE_ERR_SINGULAR (singular matrix, not positive definite), TFE_ERR_NOCONV,
 * TFE_ERR_INVALID (an argument refused). On error no result is kept. The other linalg functions
 * (lq, lstsq, inv, det, slogdet, pinv, polar, norm, expm, svd_trunc) answer TFE_ERR_UNSUPPORTED on
 * a GPU backend.
 * Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION), after memory.h. */
#ifndef TENFERRO_GPU_SOLVER_H
#define TENFERRO_GPU_SOLVER_H
#ifdef TFE__GPU_COMPANION
#include <stddef.h>

/* The typed views and tensors of every kind share one layout (a data pointer, a layout, a conj
 * flag; a storage): the slot reads and fills them through this mirror. */
typedef struct tfe__la_view { void *data; tfe_layout lay; bool conj; } tfe__la_view;
typedef struct tfe__la_tensor { tfe__la_view v; tfe_storage *st; } tfe__la_tensor;
#define TFE__LA_SAME(T, tag)                                                                              \
  _Static_assert(sizeof(T) == sizeof(tfe__la_tensor) && offsetof(T, v.lay) == offsetof(tfe__la_tensor, v.lay) && \
                     offsetof(T, v.conj) == offsetof(tfe__la_tensor, v.conj) &&                            \
                     offsetof(T, st) == offsetof(tfe__la_tensor, st),                                      \
                 "typed tensors of " tag " share the mirror's layout");
TFE__LA_SAME(tfe_tensor_f32, "f32")
TFE__LA_SAME(tfe_tensor_f64, "f64")
TFE__LA_SAME(tfe_tensor_c64, "c64")
TFE__LA_SAME(tfe_tensor_c128, "c128")
TFE__LA_SAME(tfe_tensor_i64, "i64")
#undef TFE__LA_SAME

/* Parameter blocks of the helper kernels (struct LT and LG of kernels.h). */
typedef struct tfe__la_tparams { long long m, n, lds, sbs, ldo, sbo, nb; int keep, unit; } tfe__la_tparams;
typedef struct tfe__la_gparams { long long m, n, k, kq, nb; } tfe__la_gparams;
enum { TFE__LA_KEEP_NONE = 0, TFE__LA_KEEP_UPPER = 1, TFE__LA_KEEP_LOWER = 2, TFE__LA_KEEP_SLOWER = 3, TFE__LA_KEEP_ALL = 4 };

static const int tfe__la_cuda_t[TFE__GK_COUNT] = {TFE__CUDA_R_32F, TFE__CUDA_R_64F, TFE__CUDA_C_32F, TFE__CUDA_C_64F};
static const int tfe__la_cuda_r[TFE__GK_COUNT] = {TFE__CUDA_R_32F, TFE__CUDA_R_64F, TFE__CUDA_R_32F, TFE__CUDA_R_64F};
static const tfe_dtype tfe__la_rdt[TFE__GK_COUNT] = {TFE_DT_F32, TFE_DT_F64, TFE_DT_F32, TFE_DT_F64};

/* One call: the device, the kind, the name the CPU reports errors as (tfe_svd_f64, ...). */
typedef struct tfe__la_ctx {
  tfe__gpu_dev *D;
  int g;
  tfe_dtype dt;
  size_t es, res; /* element size, real element size */
  char where[48];
} tfe__la_ctx;

#define TFE__LA_FAIL(X, st, ...) TFE__GPU_FAIL_AT((st), (X)->where, __VA_ARGS__)
#define TFE__LA_SOL(X, call, what)                                                                        \
  do {                                                                                                    \
    tfe__sol_status s_ = (call);                                                                          \
    if (s_ != 0) return TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: %s failed (cusolverStatus %d)", (X)->D->bename, what, s_); \
  } while (0)
#define TFE__LA_CU(X, call)                                                                               \
  do {                                                                                                    \
    tfe__cu_result r_ = (call);                                                                           \
    if (r_ != 0) return TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: %s failed: %s", (X)->D->bename, #call, tfe__cu_errstr(r_)); \
  } while (0)

/* ---- results --------------------------------------------------------------------------------- */
/* A new dense column-major tensor of kind dt in the device's memory (no lock held). */
static tfe_status tfe__la_alloc(tfe__la_ctx *X, tfe_dtype dt, int rank, const int64_t *dims, tfe__la_tensor *out) {
  memset(out, 0, sizeof *out);
  tfe_layout L;
  int64_t n = 0, bytes = 0;
  if (rank > TFE_MAX_RANK) return TFE__LA_FAIL(X, TFE_ERR_RANK, "result rank %d above %d", rank, TFE_MAX_RANK);
  if (tfe_layout_dense(rank, dims, TFE_COLMAJOR, &L) != TFE_OK || tfe_layout_check(&L, &n) != TFE_OK)
    return TFE__LA_FAIL(X, TFE_ERR_OVERFLOW, "a result of rank %d has too many elements", rank);
  if (__builtin_mul_overflow(n, (int64_t)tfe_dtype_get(dt)->size, &bytes))
    return TFE__LA_FAIL(X, TFE_ERR_OVERFLOW, "a result of %lld elements overflows", (long long)n);
  tfe_storage *st = NULL;
  TFE_TRY(tfe__gpu_storage(X->D, (size_t)bytes, &st, X->where));
  out->v.data = st->ptr, out->v.lay = L, out->st = st;
  return TFE_OK;
}
static void tfe__la_release(tfe__la_tensor *t) {
  tfe_storage_release(t->st);
  memset(t, 0, sizeof *t);
}
static tfe__cu_ptr tfe__la_ptr(const tfe__la_tensor *t) { return (tfe__cu_ptr)(uintptr_t)t->v.data; }

/* ---- input checks (the CPU's, with its messages) ------------------------------------------------ */
static tfe_status tfe__la_finite(tfe__la_ctx *X, const tfe__la_view *A, int64_t numel);
static tfe_status tfe__la_view_ok(tfe__la_ctx *X, const tfe__la_view *A, const char *name, int64_t *numel) {
  if (!A) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument '%s' is NULL", name);
  int64_t n = 0;
  tfe_status st = tfe_layout_check(&A->lay, &n);
  if (st != TFE_OK) return TFE__LA_FAIL(X, st, "bad layout of '%s'", name);
  if (n > 0 && !A->data) return TFE__LA_FAIL(X, TFE_ERR_NULL, "view of %lld elements has NULL data", (long long)n);
  if (numel) *numel = n;
  return tfe__la_finite(X, A, n);
}
/* The batched convention: axes 0 and 1 are the matrix, the others a batch of nb matrices. */
static tfe_status tfe__la_batched(tfe__la_ctx *X, const tfe__la_view *A, int64_t *m, int64_t *n, int64_t *nb) {
  *m = *n = *nb = 0;
  if (A->lay.rank < 2) return TFE__LA_FAIL(X, TFE_ERR_RANK, "needs a matrix (rank >= 2), got rank %d", A->lay.rank);
  *m = A->lay.dims[0], *n = A->lay.dims[1], *nb = 1;
  for (int i = 2; i < A->lay.rank; i++)
    if (__builtin_mul_overflow(*nb, A->lay.dims[i], nb)) return TFE__LA_FAIL(X, TFE_ERR_OVERFLOW, "element count overflows");
  if (*m > INT_MAX || *n > INT_MAX)
    return TFE__LA_FAIL(X, TFE_ERR_OVERFLOW, "matrix %lld x %lld exceeds LAPACK's 32-bit sizes", (long long)*m,
                        (long long)*n);
  return TFE_OK;
}
/* Result dims: lead dims, then A's batch dims (axes 2...). */
static int tfe__la_dims(const tfe__la_view *A, int nl, int64_t d0, int64_t d1, int64_t *dims) {
  dims[0] = d0, dims[1] = d1;
  for (int i = 2; i < A->lay.rank; i++) dims[nl + i - 2] = A->lay.dims[i];
  return nl + A->lay.rank - 2;
}

/* ---- device steps (device lock held) ------------------------------------------------------------ */
/* Sizes of the workspace's parts, carved from the device's one workspace (256-byte aligned). */
typedef struct tfe__la_ws { size_t off[8]; int n; size_t total; } tfe__la_ws;
static int tfe__la_part(tfe__la_ws *W, size_t bytes) {
  W->off[W->n] = W->total;
  W->total += (bytes + 255) & ~(size_t)255;
  return W->n++;
}

/* Dense column-major copy of a view into dst, over its axes in order (lazy conjugation applied);
 * swap01: axes 0 and 1 exchanged and conjugated (dst holds A^H of each matrix). */
static tfe_status tfe__la_pack(tfe__la_ctx *X, const tfe__la_view *A, bool swap01, tfe__cu_ptr dst) {
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  int64_t s = 1;
  for (int q = 0; q < A->lay.rank; q++) {
    int i = swap01 && q < 2 ? 1 - q : q;
    TFE_TRY(tfe__gpu_kp_out(&p, A->lay.dims[i], s, A->lay.strides[i], X->where));
    s *= A->lay.dims[i];
  }
  if (s == 0) return TFE_OK;
  tfe__gscal one = {1, 0}, zero = {0, 0};
  tfe__cu_ptr a = (tfe__cu_ptr)(uintptr_t)A->data + (tfe__cu_ptr)(A->lay.offset * (int64_t)X->es);
  bool conj = X->g >= TFE__GK_C64 && (A->conj != swap01);
  return tfe__gpu_unary_launch(X->D, X->g, dst, a, &p, one, zero, conj, X->where);
}
/* dst (q x p, per batch item) = src (p x q)^H, for nb dense matrices. */
static tfe_status tfe__la_ctrans(tfe__la_ctx *X, tfe__cu_ptr dst, tfe__cu_ptr src, int64_t p, int64_t q) {
  tfe__gpu_kparams k;
  memset(&k, 0, sizeof k);
  TFE_TRY(tfe__gpu_kp_out(&k, q, 1, p, X->where));
  TFE_TRY(tfe__gpu_kp_out(&k, p, q, 1, X->where));
  if (p * q == 0) return TFE_OK;
  tfe__gscal one = {1, 0}, zero = {0, 0};
  return tfe__gpu_unary_launch(X->D, X->g, dst, src, &k, one, zero, X->g >= TFE__GK_C64, X->where);
}
static tfe_status tfe__la_kernel(tfe__la_ctx *X, int which, void **args, long long total) {
  TFE_TRY(tfe__gpu_kernels(X->D, X->g, X->where));
  tfe__cu_function f = X->D->f_la[X->g][which];
  if (!f) return TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: the linalg helper kernels are missing", X->D->bename);
  return tfe__gpu_launch(X->D, f, args, total, X->where);
}
/* o = the kept triangle of s (tfe_la_tri) for nb matrices of rows x cols. */
static tfe_status tfe__la_tri(tfe__la_ctx *X, tfe__cu_ptr o, int64_t ldo, int64_t sbo, tfe__cu_ptr s, int64_t lds,
                              int64_t sbs, int64_t rows, int64_t cols, int64_t nb, int keep, int unit) {
  tfe__la_tparams p = {rows, cols, lds, sbs, ldo, sbo, nb, keep, unit};
  void *args[] = {&o, &s, &p};
  return tfe__la_kernel(X, TFE__GPU_LA_TRI, args, rows * cols * nb);
}

/* NaN or infinity in a view (any strides), checked on the device before anything else, as the
 * CPU does; the CPU's error names the first such element (odometer order, first axis fastest),
 * found on the host on that error path only (the view's span is read back). */
static tfe_status tfe__la_finite_run(tfe__la_ctx *X, const tfe__la_view *A, int64_t numel) {
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < A->lay.rank; i++) TFE_TRY(tfe__gpu_kp_out(&p, A->lay.dims[i], 0, A->lay.strides[i], X->where));
  p.total = numel;
  static const int zero = 0;
  int bad = 0;
  tfe__cu_ptr flag = 0, a = (tfe__cu_ptr)(uintptr_t)A->data + (tfe__cu_ptr)(A->lay.offset * (int64_t)X->es);
  TFE_TRY(tfe__gpu_ws(X->D, 256, &flag, X->where));
  TFE__LA_CU(X, tfe__gpu.cu.cuMemcpyHtoDAsync(flag, &zero, sizeof zero, X->D->stream));
  void *args[] = {&flag, &a, &p};
  TFE_TRY(tfe__la_kernel(X, TFE__GPU_LA_FINITE, args, numel));
  TFE__LA_CU(X, tfe__gpu.cu.cuMemcpyDtoHAsync(&bad, flag, sizeof bad, X->D->stream));
  TFE__LA_CU(X, tfe__gpu.cu.cuStreamSynchronize(X->D->stream));
  if (!bad) return TFE_OK;
  int64_t lo = 0, hi = -1;
  tfe_layout_extent(&A->lay, &lo, &hi);
  size_t bytes = (size_t)(hi - lo + 1) * X->es;
  char *h = (char *)malloc(bytes);
  if (!h) return TFE__LA_FAIL(X, TFE_ERR_ALLOC, "no memory to read the input back");
  tfe__cu_result r = tfe__gpu.cu.cuMemcpyDtoHAsync(h, a + (tfe__cu_ptr)((lo - A->lay.offset) * (int64_t)X->es), bytes,
                                                   X->D->stream);
  if (r == 0) r = tfe__gpu.cu.cuStreamSynchronize(X->D->stream);
  int64_t idx[TFE_MAX_RANK] = {0}, off = A->lay.offset - lo;
  int parts = X->g >= TFE__GK_C64 ? 2 : 1;
  bool found = false;
  for (int64_t e = 0; r == 0 && e < numel && !found; e++) {
    for (int q = 0; q < parts; q++) {
      double v = X->res == 4 ? (double)((const float *)h)[off * parts + q] : ((const double *)h)[off * parts + q];
      found = found || !isfinite(v);
    }
    for (int i = 0; !found && i < A->lay.rank; i++) { /* odometer, first axis fastest */
      off += A->lay.strides[i];
      if (++idx[i] < A->lay.dims[i]) break;
      off -= idx[i] * A->lay.strides[i];
      idx[i] = 0;
    }
  }
  free(h);
  if (r != 0) return TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: reading the input back: %s", X->D->bename, tfe__cu_errstr(r));
  char at[TFE_MAX_RANK * 21 + 4];
  size_t w = 0;
  at[0] = 0;
  for (int i = 0; i < A->lay.rank; i++) w += (size_t)snprintf(at + w, sizeof at - w, "%s%lld", i ? ", " : "", (long long)idx[i]);
  return TFE__LA_FAIL(X, TFE_ERR_INVALID, "input holds a NaN or an infinity at (%s): non-finite input is refused", at);
}
static tfe_status tfe__la_finite(tfe__la_ctx *X, const tfe__la_view *A, int64_t numel) {
  if (numel == 0) return TFE_OK;
  TFE_TRY(tfe__gpu_enter(X->D, X->where));
  tfe_status st = tfe__la_finite_run(X, A, numel);
  tfe__gpu_leave(X->D);
  return st;
}

/* The cuSOLVER handle of the device (made at the first linalg call, on the device's stream). */
static tfe_status tfe__la_handle(tfe__la_ctx *X) {
  tfe__gpu_dev *D = X->D;
  if (D->sol) return TFE_OK;
  if (!tfe__gpu.sol.create)
    return TFE__LA_FAIL(X, TFE_ERR_UNSUPPORTED, "backend '%s' has no linalg: cuSOLVER is not loaded (%s)", D->bename,
                        tfe_gpu_status());
  TFE__LA_SOL(X, tfe__gpu.sol.create(&D->sol), "cusolverDnCreate");
  tfe__sol_status s = tfe__gpu.sol.set_stream(D->sol, D->stream);
  if (s == 0) s = tfe__gpu.sol.params_create(&D->solp);
  if (s != 0) {
    tfe__gpu.sol.destroy(D->sol);
    D->sol = NULL;
    return TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cuSOLVER setup failed (cusolverStatus %d)", D->bename, s);
  }
  return TFE_OK;
}

/* The workspace (device: W's parts, at least sol_bytes for cuSOLVER in the last part) and a host
 * buffer of host_bytes (freed by the caller). */
static tfe_status tfe__la_carve(tfe__la_ctx *X, tfe__la_ws *W, tfe__cu_ptr *base, size_t host_bytes, void **host) {
  *host = NULL;
  TFE_TRY(tfe__gpu_ws(X->D, W->total ? W->total : 1, base, X->where));
  if (host_bytes) {
    *host = malloc(host_bytes);
    if (!*host) return TFE__LA_FAIL(X, TFE_ERR_ALLOC, "no memory for %zu bytes of cuSOLVER host workspace", host_bytes);
  }
  return TFE_OK;
}
#define TFE__LA_AT(W, base, i) ((base) + (tfe__cu_ptr)(W).off[i])
#define TFE__LA_VP(p) ((void *)(uintptr_t)(p))

/* The info codes of nb batch items (nper per item) back on the host: one copy, one wait. */
static tfe_status tfe__la_infos(tfe__la_ctx *X, tfe__cu_ptr dinfo, int64_t count, int **out) {
  *out = (int *)calloc((size_t)(count > 0 ? count : 1), sizeof(int));
  if (!*out) return TFE__LA_FAIL(X, TFE_ERR_ALLOC, "no memory for %lld info codes", (long long)count);
  if (count > 0) TFE__LA_CU(X, tfe__gpu.cu.cuMemcpyDtoHAsync(*out, dinfo, (size_t)count * sizeof(int), X->D->stream));
  TFE__LA_CU(X, tfe__gpu.cu.cuStreamSynchronize(X->D->stream));
  return TFE_OK;
}
/* cuSOLVER's info < 0: an argument it refused (the CPU's message for LAPACK's). */
static tfe_status tfe__la_info_neg(tfe__la_ctx *X, int info, const char *routine) {
  return TFE__LA_FAIL(X, TFE_ERR_INVALID, "%s rejected argument %d (NaN or Inf in the input?)", routine, -info);
}

/* ---- SVD ------------------------------------------------------------------------------------------- */
static tfe_status tfe__la_svd_run(tfe__la_ctx *X, const tfe__la_view *A, tfe_svd_mode mode, int64_t m, int64_t n,
                                  int64_t nb, tfe__la_tensor *U, tfe__la_tensor *S, tfe__la_tensor *V) {
  tfe__gpu_dev *D = X->D;
  int64_t k = m < n ? m : n, ku = mode == TFE_SVD_FULL ? m : k, kv = mode == TFE_SVD_FULL ? n : k;
  bool vecs = mode != TFE_SVD_VALUES, wide = m < n;
  if (nb == 0) return TFE_OK;
  if (k == 0) { /* nothing for cuSOLVER; full factors are identities */
    if (vecs) TFE_TRY(tfe__la_tri(X, tfe__la_ptr(U), m, m * ku, 0, 0, 0, m, ku, nb, TFE__LA_KEEP_NONE, 1));
    if (vecs) TFE_TRY(tfe__la_tri(X, tfe__la_ptr(V), kv, kv * n, 0, 0, 0, kv, n, nb, TFE__LA_KEEP_NONE, 1));
    return TFE_OK;
  }
  TFE_TRY(tfe__la_handle(X));
  /* cuSOLVER's gesvd wants m >= n: a wide A is factored as A^H (mm x nn = n x m) */
  int64_t mm = wide ? n : m, nn = wide ? m : n, kum = wide ? kv : ku, kvm = wide ? ku : kv;
  signed char job = mode == TFE_SVD_FULL ? 'A' : mode == TFE_SVD_THIN ? 'S' : 'N';
  int t = tfe__la_cuda_t[X->g], rt = tfe__la_cuda_r[X->g];
  size_t dbytes = 0, hbytes = 0;
  TFE__LA_SOL(X, tfe__gpu.sol.gesvd_bs(D->sol, D->solp, job, job, mm, nn, t, NULL, mm, rt, NULL, t, NULL, mm, t, NULL,
                                       kvm > 0 ? kvm : 1, t, &dbytes, &hbytes),
              "cusolverDnXgesvd_bufferSize");
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, (size_t)(nb * m * n) * X->es), pinfo = tfe__la_part(&W, (size_t)(nb + 1) * sizeof(int));
  int pu = tfe__la_part(&W, wide && vecs ? (size_t)(mm * kum) * X->es : 0); /* U' and V'^H of one item (wide) */
  int pv = tfe__la_part(&W, wide && vecs ? (size_t)(kvm * nn) * X->es : 0);
  int pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  tfe__cu_ptr a = TFE__LA_AT(W, base, pa), info = TFE__LA_AT(W, base, pinfo);
  tfe_status st = tfe__la_pack(X, A, wide, a);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    tfe__cu_ptr ab = a + (tfe__cu_ptr)(b * mm * nn) * X->es, sb = tfe__la_ptr(S) + (tfe__cu_ptr)(b * k) * X->res;
    tfe__cu_ptr ub = 0, vb = 0;
    if (vecs && !wide) ub = tfe__la_ptr(U) + (tfe__cu_ptr)(b * m * ku) * X->es, vb = tfe__la_ptr(V) + (tfe__cu_ptr)(b * kv * n) * X->es;
    if (vecs && wide) ub = TFE__LA_AT(W, base, pu), vb = TFE__LA_AT(W, base, pv);
    tfe__sol_status s = tfe__gpu.sol.gesvd(D->sol, D->solp, job, job, mm, nn, t, TFE__LA_VP(ab), mm, rt, TFE__LA_VP(sb),
                                           t, TFE__LA_VP(ub), mm, t, TFE__LA_VP(vb), kvm > 0 ? kvm : 1, t,
                                           TFE__LA_VP(TFE__LA_AT(W, base, pw)), dbytes, host, hbytes,
                                           (int *)TFE__LA_VP(info + (tfe__cu_ptr)(b * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXgesvd failed (cusolverStatus %d)", D->bename, s);
    if (st == TFE_OK && vecs && wide) { /* A = (V'^H)^H S U'^H */
      st = tfe__la_ctrans(X, tfe__la_ptr(U) + (tfe__cu_ptr)(b * m * ku) * X->es, vb, kvm, nn);
      if (st == TFE_OK) st = tfe__la_ctrans(X, tfe__la_ptr(V) + (tfe__cu_ptr)(b * kv * n) * X->es, ub, mm, kum);
    }
  }
  int *h = NULL;
  if (st == TFE_OK) st = tfe__la_infos(X, info, nb, &h);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    if (h[b] < 0) st = tfe__la_info_neg(X, h[b], "gesvd");
    else if (h[b] > 0)
      st = TFE__LA_FAIL(X, TFE_ERR_NOCONV, "SVD of batch item %lld did not converge (gesvd info %d)", (long long)b, h[b]);
  }
  free(h);
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(D->stream); /* host workspace in use until then */
  free(host);
  return st;
}
static tfe_status tfe__la_svd(tfe__la_ctx *X, void *const *args) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0];
  tfe_svd_mode mode = *(const tfe_svd_mode *)args[1];
  tfe__la_tensor *Uo = *(tfe__la_tensor *const *)args[2], *So = *(tfe__la_tensor *const *)args[3],
                 *Vo = *(tfe__la_tensor *const *)args[4];
  TFE_TRY(tfe__la_view_ok(X, A, "A", NULL));
  if (mode != TFE_SVD_THIN && mode != TFE_SVD_FULL && mode != TFE_SVD_VALUES)
    return TFE__LA_FAIL(X, TFE_ERR_INVALID, "unknown SVD mode %d", (int)mode);
  if (!So) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'S' is NULL");
  if (mode != TFE_SVD_VALUES && (!Uo || !Vo)) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'U' or 'Vh' is NULL");
  int64_t m = 0, n = 0, nb = 0, k, dims[TFE_MAX_RANK + 1];
  TFE_TRY(tfe__la_batched(X, A, &m, &n, &nb));
  k = m < n ? m : n;
  bool vecs = mode != TFE_SVD_VALUES, full = mode == TFE_SVD_FULL;
  tfe__la_tensor U = {0}, S = {0}, V = {0};
  tfe_status st = tfe__la_alloc(X, tfe__la_rdt[X->g], tfe__la_dims(A, 1, k, 0, dims), dims, &S);
  if (st == TFE_OK && vecs) st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, m, full ? m : k, dims), dims, &U);
  if (st == TFE_OK && vecs) st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, full ? n : k, n, dims), dims, &V);
  if (st == TFE_OK && (st = tfe__gpu_enter(X->D, X->where)) == TFE_OK) {
    st = tfe__la_svd_run(X, A, mode, m, n, nb, &U, &S, &V);
    tfe__gpu_leave(X->D);
  }
  if (st != TFE_OK) {
    tfe__la_release(&U), tfe__la_release(&S), tfe__la_release(&V);
    return st;
  }
  if (vecs) *Uo = U, *Vo = V;
  *So = S;
  return TFE_OK;
}

/* ---- QR ------------------------------------------------------------------------------------------- */
static tfe_status tfe__la_qr_run(tfe__la_ctx *X, const tfe__la_view *A, int64_t m, int64_t n, int64_t kq, int64_t nb,
                                 tfe__la_tensor *Q, tfe__la_tensor *R) {
  tfe__gpu_dev *D = X->D;
  int64_t k = m < n ? m : n;
  bool inq = kq == n; /* Q has A's shape: A is packed and factored there */
  if (nb == 0) return TFE_OK;
  if (k == 0) { /* R is empty; Q the identity */
    TFE_TRY(tfe__la_tri(X, tfe__la_ptr(R), kq, kq * n, 0, 0, 0, kq, n, nb, TFE__LA_KEEP_NONE, 0));
    return tfe__la_tri(X, tfe__la_ptr(Q), m, m * kq, 0, 0, 0, m, kq, nb, TFE__LA_KEEP_NONE, 1);
  }
  TFE_TRY(tfe__la_handle(X));
  int t = tfe__la_cuda_t[X->g];
  size_t dbytes = 0, hbytes = 0;
  int lwork = 0;
  TFE__LA_SOL(X, tfe__gpu.sol.geqrf_bs(D->sol, D->solp, m, n, t, NULL, m, t, NULL, t, &dbytes, &hbytes),
              "cusolverDnXgeqrf_bufferSize");
  tfe__sol_status (*orgqr_bs)TFE__SOL_ORGQR_BS_ARGS = X->g == TFE__GK_F32 ? tfe__gpu.sol.sorgqr_bs
                                                      : X->g == TFE__GK_F64 ? tfe__gpu.sol.dorgqr_bs
                                                      : X->g == TFE__GK_C64 ? tfe__gpu.sol.cungqr_bs
                                                                            : tfe__gpu.sol.zungqr_bs;
  tfe__sol_status (*orgqr)TFE__SOL_ORGQR_ARGS = X->g == TFE__GK_F32 ? tfe__gpu.sol.sorgqr
                                                : X->g == TFE__GK_F64 ? tfe__gpu.sol.dorgqr
                                                : X->g == TFE__GK_C64 ? tfe__gpu.sol.cungqr
                                                                      : tfe__gpu.sol.zungqr;
  TFE__LA_SOL(X, orgqr_bs(D->sol, (int)m, (int)kq, (int)k, NULL, (int)m, NULL, &lwork), "orgqr_bufferSize");
  if ((size_t)lwork * X->es > dbytes) dbytes = (size_t)lwork * X->es;
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, inq ? 0 : (size_t)(nb * m * n) * X->es), ptau = tfe__la_part(&W, (size_t)(nb * k) * X->es);
  int pph = tfe__la_part(&W, (size_t)(nb * k) * X->es), pinfo = tfe__la_part(&W, (size_t)(2 * nb + 1) * sizeof(int));
  int pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  /* the matrices as cuSOLVER sees them (ld m, m x n apart): in Q or in the workspace */
  tfe__cu_ptr a = inq ? tfe__la_ptr(Q) : TFE__LA_AT(W, base, pa), tau = TFE__LA_AT(W, base, ptau);
  tfe__cu_ptr info = TFE__LA_AT(W, base, pinfo), work = TFE__LA_AT(W, base, pw), ph = TFE__LA_AT(W, base, pph);
  int64_t sa = m * n;
  tfe_status st = tfe__la_pack(X, A, false, a);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    tfe__cu_ptr ab = a + (tfe__cu_ptr)(b * sa) * X->es, tb = tau + (tfe__cu_ptr)(b * k) * X->es;
    tfe__sol_status s = tfe__gpu.sol.geqrf(D->sol, D->solp, m, n, t, TFE__LA_VP(ab), m, t, TFE__LA_VP(tb), t,
                                           TFE__LA_VP(work), dbytes, host, hbytes,
                                           (int *)TFE__LA_VP(info + (tfe__cu_ptr)(b * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXgeqrf failed (cusolverStatus %d)", D->bename, s);
  }
  /* R: the upper triangle of the factored items' first kq rows */
  if (st == TFE_OK)
    st = tfe__la_tri(X, tfe__la_ptr(R), kq, kq * n, a, m, sa, kq, n, nb, TFE__LA_KEEP_UPPER, 0);
  if (st == TFE_OK && !inq) /* the reflectors into Q; its columns past k zeroed (orgqr sets them) */
    st = tfe__la_tri(X, tfe__la_ptr(Q), m, m * kq, a, m, sa, m, k, nb, TFE__LA_KEEP_ALL, 0);
  if (st == TFE_OK && !inq && kq > k)
    st = tfe__la_tri(X, tfe__la_ptr(Q) + (tfe__cu_ptr)(m * k) * X->es, m, m * kq, 0, 0, 0, m, kq - k, nb,
                     TFE__LA_KEEP_NONE, 0);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    tfe__cu_ptr qb = tfe__la_ptr(Q) + (tfe__cu_ptr)(b * m * kq) * X->es, tb = tau + (tfe__cu_ptr)(b * k) * X->es;
    tfe__sol_status s = orgqr(D->sol, (int)m, (int)kq, (int)k, TFE__LA_VP(qb), (int)m, TFE__LA_VP(tb),
                              TFE__LA_VP(work), lwork, (int *)TFE__LA_VP(info + (tfe__cu_ptr)((nb + b) * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: orgqr failed (cusolverStatus %d)", D->bename, s);
  }
  if (st == TFE_OK) { /* gauge: diag(R) real and >= 0 */
    tfe__la_gparams p = {m, n, k, kq, nb};
    tfe__cu_ptr r = tfe__la_ptr(R), q = tfe__la_ptr(Q);
    void *a1[] = {&ph, &r, &p}, *a2[] = {&q, &r, &ph, &p};
    st = tfe__la_kernel(X, TFE__GPU_LA_PHASE, a1, k * nb);
    if (st == TFE_OK) st = tfe__la_kernel(X, TFE__GPU_LA_GAUGE, a2, (m * k + k * n) * nb);
  }
  int *h = NULL;
  if (st == TFE_OK) st = tfe__la_infos(X, info, 2 * nb, &h);
  for (int64_t b = 0; st == TFE_OK && b < 2 * nb; b++)
    if (h[b] < 0) st = tfe__la_info_neg(X, h[b], b < nb ? "geqrf" : "orgqr");
  free(h);
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(D->stream);
  free(host);
  return st;
}
static tfe_status tfe__la_qr(tfe__la_ctx *X, void *const *args) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0];
  bool full = *(const bool *)args[1];
  tfe__la_tensor *Qo = *(tfe__la_tensor *const *)args[2], *Ro = *(tfe__la_tensor *const *)args[3];
  TFE_TRY(tfe__la_view_ok(X, A, "A", NULL));
  if (!Qo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'Q' is NULL");
  if (!Ro) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'R' is NULL");
  int64_t m = 0, n = 0, nb = 0, dims[TFE_MAX_RANK];
  TFE_TRY(tfe__la_batched(X, A, &m, &n, &nb));
  int64_t k = m < n ? m : n, kq = full ? m : k;
  tfe__la_tensor Q = {0}, R = {0};
  tfe_status st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, m, kq, dims), dims, &Q);
  if (st == TFE_OK) st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, kq, n, dims), dims, &R);
  if (st == TFE_OK && (st = tfe__gpu_enter(X->D, X->where)) == TFE_OK) {
    st = tfe__la_qr_run(X, A, m, n, kq, nb, &Q, &R);
    tfe__gpu_leave(X->D);
  }
  if (st != TFE_OK) {
    tfe__la_release(&Q), tfe__la_release(&R);
    return st;
  }
  *Qo = Q, *Ro = R;
  return TFE_OK;
}

/* ---- square matrices: eigh, cholesky, LU, solve ------------------------------------------------------ */
static tfe_status tfe__la_square(tfe__la_ctx *X, const tfe__la_view *A, int64_t *n, int64_t *nb) {
  int64_t m = 0;
  TFE_TRY(tfe__la_view_ok(X, A, "A", NULL));
  TFE_TRY(tfe__la_batched(X, A, &m, n, nb));
  if (m != *n)
    return TFE__LA_FAIL(X, TFE_ERR_SHAPE, "needs a square matrix, got %lld x %lld", (long long)m, (long long)*n);
  return TFE_OK;
}
/* The end of an eigensolver's run: the items' infos read back (negative: a bad argument of
 * `routine`; positive: `what` did not converge), the host workspace freed, the stream drained on
 * failure. */
static tfe_status tfe__la_eig_end(tfe__la_ctx *X, tfe_status st, tfe__cu_ptr info, int64_t nb, const char *routine,
                                  const char *what, void *host) {
  int *h = NULL;
  if (st == TFE_OK) st = tfe__la_infos(X, info, nb, &h);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    if (h[b] < 0) st = tfe__la_info_neg(X, h[b], routine);
    else if (h[b] > 0)
      st = TFE__LA_FAIL(X, TFE_ERR_NOCONV, "%s did not converge on batch item %lld (info %d)", what, (long long)b, h[b]);
  }
  free(h);
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(X->D->stream);
  free(host);
  return st;
}
static tfe_status tfe__la_eigh_run(tfe__la_ctx *X, const tfe__la_view *A, int64_t n, int64_t nb, tfe__la_tensor *W_,
                                   tfe__la_tensor *V) {
  tfe__gpu_dev *D = X->D;
  if (nb == 0 || n == 0) return TFE_OK;
  TFE_TRY(tfe__la_handle(X));
  int t = tfe__la_cuda_t[X->g], rt = tfe__la_cuda_r[X->g], jobz = V ? TFE__SOL_EIG_VECTOR : TFE__SOL_EIG_NOVECTOR;
  size_t dbytes = 0, hbytes = 0;
  TFE__LA_SOL(X, tfe__gpu.sol.syevd_bs(D->sol, D->solp, jobz, TFE__BLAS_FILL_LOWER, n, t, NULL, n, rt, NULL, t, &dbytes,
                                       &hbytes),
              "cusolverDnXsyevd_bufferSize");
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, V ? 0 : (size_t)(nb * n * n) * X->es), pinfo = tfe__la_part(&W, (size_t)(nb + 1) * sizeof(int));
  int pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  tfe__cu_ptr a = V ? tfe__la_ptr(V) : TFE__LA_AT(W, base, pa), info = TFE__LA_AT(W, base, pinfo);
  tfe_status st = tfe__la_pack(X, A, false, a);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    tfe__cu_ptr ab = a + (tfe__cu_ptr)(b * n * n) * X->es, wb = tfe__la_ptr(W_) + (tfe__cu_ptr)(b * n) * X->res;
    tfe__sol_status s = tfe__gpu.sol.syevd(D->sol, D->solp, jobz, TFE__BLAS_FILL_LOWER, n, t, TFE__LA_VP(ab), n, rt,
                                           TFE__LA_VP(wb), t, TFE__LA_VP(TFE__LA_AT(W, base, pw)), dbytes, host, hbytes,
                                           (int *)TFE__LA_VP(info + (tfe__cu_ptr)(b * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXsyevd failed (cusolverStatus %d)", D->bename, s);
  }
  return tfe__la_eig_end(X, st, info, nb, X->g >= TFE__GK_C64 ? "heevd" : "syevd", "eigensolver", host);
}
/* The eigensolvers' slot calls: W (kind wdt, n per item) and optionally V (n x n per item) of a
 * square batch A, filled by run on the device; nothing is kept on failure. */
typedef tfe_status (*tfe__la_wv_run)(tfe__la_ctx *, const tfe__la_view *, int64_t, int64_t, tfe__la_tensor *,
                                     tfe__la_tensor *);
static tfe_status tfe__la_wv(tfe__la_ctx *X, const tfe__la_view *A, tfe_dtype wdt, tfe__la_wv_run run,
                             tfe__la_tensor *Wo, tfe__la_tensor *Vo) {
  int64_t n = 0, nb = 0, dims[TFE_MAX_RANK];
  TFE_TRY(tfe__la_square(X, A, &n, &nb));
  tfe__la_tensor W = {0}, V = {0};
  tfe_status st = tfe__la_alloc(X, wdt, tfe__la_dims(A, 1, n, 0, dims), dims, &W);
  if (st == TFE_OK && Vo) st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, n, n, dims), dims, &V);
  if (st == TFE_OK && (st = tfe__gpu_enter(X->D, X->where)) == TFE_OK) {
    st = run(X, A, n, nb, &W, Vo ? &V : NULL);
    tfe__gpu_leave(X->D);
  }
  if (st != TFE_OK) {
    tfe__la_release(&W), tfe__la_release(&V);
    return st;
  }
  *Wo = W;
  if (Vo) *Vo = V;
  return TFE_OK;
}
static tfe_status tfe__la_eigh(tfe__la_ctx *X, void *const *args) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0];
  tfe__la_tensor *Wo = *(tfe__la_tensor *const *)args[1], *Vo = *(tfe__la_tensor *const *)args[2];
  if (!Wo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'W' is NULL");
  return tfe__la_wv(X, A, tfe__la_rdt[X->g], tfe__la_eigh_run, Wo, Vo);
}

/* ---- eig: general A V = V diag(W), complex kinds (cusolverDnXgeev) --------------------------------- */
/* W and V of A's complex kind, as the CPU's geev: W in the solver's order (not sorted), V's columns
 * of unit 2-norm with their largest component real (cuSOLVER documents LAPACK's normalization).
 * The items are packed into the workspace (geev overwrites its input); no left vectors. */
static tfe_status tfe__la_eig_run(tfe__la_ctx *X, const tfe__la_view *A, int64_t n, int64_t nb, tfe__la_tensor *W_,
                                  tfe__la_tensor *V) {
  tfe__gpu_dev *D = X->D;
  if (nb == 0 || n == 0) return TFE_OK;
  TFE_TRY(tfe__la_handle(X));
  int t = tfe__la_cuda_t[X->g], jobvr = V ? TFE__SOL_EIG_VECTOR : TFE__SOL_EIG_NOVECTOR;
  int64_t ldv = V ? n : 1;
  size_t dbytes = 0, hbytes = 0;
  TFE__LA_SOL(X, tfe__gpu.sol.geev_bs(D->sol, D->solp, TFE__SOL_EIG_NOVECTOR, jobvr, n, t, NULL, n, t, NULL, t, NULL, 1, t,
                                      NULL, ldv, t, &dbytes, &hbytes),
              "cusolverDnXgeev_bufferSize");
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, (size_t)(nb * n * n) * X->es), pinfo = tfe__la_part(&W, (size_t)(nb + 1) * sizeof(int));
  int pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  tfe__cu_ptr a = TFE__LA_AT(W, base, pa), info = TFE__LA_AT(W, base, pinfo);
  tfe_status st = tfe__la_pack(X, A, false, a);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    tfe__cu_ptr ab = a + (tfe__cu_ptr)(b * n * n) * X->es, wb = tfe__la_ptr(W_) + (tfe__cu_ptr)(b * n) * X->es;
    tfe__cu_ptr vb = V ? tfe__la_ptr(V) + (tfe__cu_ptr)(b * n * n) * X->es : 0;
    tfe__sol_status s = tfe__gpu.sol.geev(D->sol, D->solp, TFE__SOL_EIG_NOVECTOR, jobvr, n, t, TFE__LA_VP(ab), n, t,
                                          TFE__LA_VP(wb), t, NULL, 1, t, TFE__LA_VP(vb), ldv, t,
                                          TFE__LA_VP(TFE__LA_AT(W, base, pw)), dbytes, host, hbytes,
                                          (int *)TFE__LA_VP(info + (tfe__cu_ptr)(b * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXgeev failed (cusolverStatus %d)", D->bename, s);
  }
  return tfe__la_eig_end(X, st, info, nb, "geev", "QR algorithm", host);
}
static tfe_status tfe__la_eig(tfe__la_ctx *X, void *const *args) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0];
  tfe__la_tensor *Wo = *(tfe__la_tensor *const *)args[1], *Vo = *(tfe__la_tensor *const *)args[2];
  if (!Wo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'W' is NULL");
  if (X->g < TFE__GK_C64)
    return TFE__LA_FAIL(X, TFE_ERR_UNSUPPORTED, "backend '%s' runs eig on complex kinds (c64, c128) only: convert the "
                        "real matrix to its complex kind", X->D->bename);
  if (!tfe__gpu.sol.create)
    return TFE__LA_FAIL(X, TFE_ERR_UNSUPPORTED, "backend '%s' has no linalg: cuSOLVER is not loaded (%s)", X->D->bename,
                        tfe_gpu_status());
  if (!tfe__gpu.sol.geev || !tfe__gpu.sol.geev_bs)
    return TFE__LA_FAIL(X, TFE_ERR_UNSUPPORTED, "backend '%s' has no general eigensolver: the loaded solver library "
                        "lacks cusolverDnXgeev (CUDA 12.6 and later) / hipsolverDnXgeev; download the operands "
                        "and call eig on the host", X->D->bename);
  return tfe__la_wv(X, A, X->dt, tfe__la_eig_run, Wo, Vo);
}

static tfe_status tfe__la_chol_run(tfe__la_ctx *X, const tfe__la_view *A, int64_t n, int64_t nb, tfe__la_tensor *L) {
  tfe__gpu_dev *D = X->D;
  if (nb == 0 || n == 0) return TFE_OK;
  TFE_TRY(tfe__la_handle(X));
  int t = tfe__la_cuda_t[X->g];
  size_t dbytes = 0, hbytes = 0;
  TFE__LA_SOL(X, tfe__gpu.sol.potrf_bs(D->sol, D->solp, TFE__BLAS_FILL_LOWER, n, t, NULL, n, t, &dbytes, &hbytes),
              "cusolverDnXpotrf_bufferSize");
  tfe__la_ws W = {{0}, 0, 0};
  int pinfo = tfe__la_part(&W, (size_t)(nb + 1) * sizeof(int)), pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  tfe__cu_ptr a = tfe__la_ptr(L), info = TFE__LA_AT(W, base, pinfo);
  tfe_status st = tfe__la_pack(X, A, false, a);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    tfe__cu_ptr ab = a + (tfe__cu_ptr)(b * n * n) * X->es;
    tfe__sol_status s = tfe__gpu.sol.potrf(D->sol, D->solp, TFE__BLAS_FILL_LOWER, n, t, TFE__LA_VP(ab), n, t,
                                           TFE__LA_VP(TFE__LA_AT(W, base, pw)), dbytes, host, hbytes,
                                           (int *)TFE__LA_VP(info + (tfe__cu_ptr)(b * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXpotrf failed (cusolverStatus %d)", D->bename, s);
  }
  if (st == TFE_OK) st = tfe__la_tri(X, a, n, n * n, a, n, n * n, n, n, nb, TFE__LA_KEEP_LOWER, 0);
  int *h = NULL;
  if (st == TFE_OK) st = tfe__la_infos(X, info, nb, &h);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    if (h[b] < 0) st = tfe__la_info_neg(X, h[b], "potrf");
    else if (h[b] > 0)
      st = TFE__LA_FAIL(X, TFE_ERR_SINGULAR, "batch item %lld is not positive definite (leading minor %d)", (long long)b,
                        h[b]);
  }
  free(h);
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(D->stream);
  free(host);
  return st;
}
static tfe_status tfe__la_cholesky(tfe__la_ctx *X, void *const *args) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0];
  tfe__la_tensor *Lo = *(tfe__la_tensor *const *)args[1];
  if (!Lo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'L' is NULL");
  int64_t n = 0, nb = 0, dims[TFE_MAX_RANK];
  TFE_TRY(tfe__la_square(X, A, &n, &nb));
  tfe__la_tensor L = {0};
  tfe_status st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, n, n, dims), dims, &L);
  if (st == TFE_OK && (st = tfe__gpu_enter(X->D, X->where)) == TFE_OK) {
    st = tfe__la_chol_run(X, A, n, nb, &L);
    tfe__gpu_leave(X->D);
  }
  if (st != TFE_OK) {
    tfe__la_release(&L);
    return st;
  }
  *Lo = L;
  return TFE_OK;
}

/* LU of nb packed m x n items at a (factored in place, pivots in ipiv, k per item), info codes at
 * info[0..nb). */
static tfe_status tfe__la_getrf(tfe__la_ctx *X, tfe__cu_ptr a, int64_t m, int64_t n, int64_t nb, tfe__cu_ptr ipiv,
                                tfe__cu_ptr info, tfe__cu_ptr work, size_t dbytes, void *host, size_t hbytes) {
  tfe__gpu_dev *D = X->D;
  int t = tfe__la_cuda_t[X->g];
  int64_t k = m < n ? m : n;
  for (int64_t b = 0; b < nb; b++) {
    tfe__sol_status s = tfe__gpu.sol.getrf(D->sol, D->solp, m, n, t, TFE__LA_VP(a + (tfe__cu_ptr)(b * m * n) * X->es), m,
                                           (int64_t *)TFE__LA_VP(ipiv + (tfe__cu_ptr)(b * k) * sizeof(int64_t)), t,
                                           TFE__LA_VP(work), dbytes, host, hbytes,
                                           (int *)TFE__LA_VP(info + (tfe__cu_ptr)(b * (int64_t)sizeof(int))));
    if (s != 0) return TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXgetrf failed (cusolverStatus %d)", D->bename, s);
  }
  return TFE_OK;
}
static tfe_status tfe__la_lu_run(tfe__la_ctx *X, const tfe__la_view *A, int64_t m, int64_t n, int64_t nb,
                                 tfe__la_tensor *P, tfe__la_tensor *L, tfe__la_tensor *U) {
  tfe__gpu_dev *D = X->D;
  int64_t k = m < n ? m : n;
  if (nb == 0) return TFE_OK;
  size_t dbytes = 0, hbytes = 0;
  if (k > 0) {
    TFE_TRY(tfe__la_handle(X));
    int t = tfe__la_cuda_t[X->g];
    TFE__LA_SOL(X, tfe__gpu.sol.getrf_bs(D->sol, D->solp, m, n, t, NULL, m, t, &dbytes, &hbytes),
                "cusolverDnXgetrf_bufferSize");
  }
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, (size_t)(nb * m * n) * X->es), pp = tfe__la_part(&W, (size_t)(nb * k) * sizeof(int64_t));
  int pinfo = tfe__la_part(&W, (size_t)(nb + 1) * sizeof(int)), pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  tfe__cu_ptr a = TFE__LA_AT(W, base, pa), ipiv = TFE__LA_AT(W, base, pp), info = TFE__LA_AT(W, base, pinfo);
  tfe_status st = tfe__la_pack(X, A, false, a);
  if (st == TFE_OK && k > 0) st = tfe__la_getrf(X, a, m, n, nb, ipiv, info, TFE__LA_AT(W, base, pw), dbytes, host, hbytes);
  if (st == TFE_OK) st = tfe__la_tri(X, tfe__la_ptr(L), m, m * k, a, m, m * n, m, k, nb, TFE__LA_KEEP_SLOWER, 1);
  if (st == TFE_OK) st = tfe__la_tri(X, tfe__la_ptr(U), k, k * n, a, m, m * n, k, n, nb, TFE__LA_KEEP_UPPER, 0);
  if (st == TFE_OK) {
    tfe__cu_ptr perm = tfe__la_ptr(P);
    long long mm = m, kk = k, nbb = nb;
    void *args[] = {&perm, &ipiv, &mm, &kk, &nbb};
    st = tfe__la_kernel(X, TFE__GPU_LA_PERM, args, nb);
  }
  int *h = NULL;
  if (st == TFE_OK && k > 0) st = tfe__la_infos(X, info, nb, &h);
  for (int64_t b = 0; st == TFE_OK && h && b < nb; b++)
    if (h[b] < 0) st = tfe__la_info_neg(X, h[b], "getrf"); /* info > 0: a zero pivot, no error for lu */
  free(h);
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(D->stream);
  free(host);
  return st;
}
static tfe_status tfe__la_lu(tfe__la_ctx *X, void *const *args) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0];
  tfe__la_tensor *Po = *(tfe__la_tensor *const *)args[1], *Lo = *(tfe__la_tensor *const *)args[2],
                 *Uo = *(tfe__la_tensor *const *)args[3];
  TFE_TRY(tfe__la_view_ok(X, A, "A", NULL));
  if (!Po) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'perm' is NULL");
  if (!Lo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'L' is NULL");
  if (!Uo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'U' is NULL");
  int64_t m = 0, n = 0, nb = 0, dims[TFE_MAX_RANK];
  TFE_TRY(tfe__la_batched(X, A, &m, &n, &nb));
  int64_t k = m < n ? m : n;
  tfe__la_tensor P = {0}, L = {0}, U = {0};
  tfe_status st = tfe__la_alloc(X, TFE_DT_I64, tfe__la_dims(A, 1, m, 0, dims), dims, &P);
  if (st == TFE_OK) st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, m, k, dims), dims, &L);
  if (st == TFE_OK) st = tfe__la_alloc(X, X->dt, tfe__la_dims(A, 2, k, n, dims), dims, &U);
  if (st == TFE_OK && (st = tfe__gpu_enter(X->D, X->where)) == TFE_OK) {
    st = tfe__la_lu_run(X, A, m, n, nb, &P, &L, &U);
    tfe__gpu_leave(X->D);
  }
  if (st != TFE_OK) {
    tfe__la_release(&P), tfe__la_release(&L), tfe__la_release(&U);
    return st;
  }
  *Po = P, *Lo = L, *Uo = U;
  return TFE_OK;
}

static tfe_status tfe__la_solve_run(tfe__la_ctx *X, const tfe__la_view *A, const tfe__la_view *B, int64_t n,
                                    int64_t r, int64_t nb, tfe__la_tensor *Xo) {
  tfe__gpu_dev *D = X->D;
  if (nb == 0 || n == 0) return TFE_OK;
  TFE_TRY(tfe__la_handle(X));
  int t = tfe__la_cuda_t[X->g];
  size_t dbytes = 0, hbytes = 0;
  TFE__LA_SOL(X, tfe__gpu.sol.getrf_bs(D->sol, D->solp, n, n, t, NULL, n, t, &dbytes, &hbytes),
              "cusolverDnXgetrf_bufferSize");
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, (size_t)(nb * n * n) * X->es), pp = tfe__la_part(&W, (size_t)(nb * n) * sizeof(int64_t));
  int pinfo = tfe__la_part(&W, (size_t)(2 * nb + 1) * sizeof(int)), pw = tfe__la_part(&W, dbytes);
  tfe__cu_ptr base = 0;
  void *host = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, hbytes, &host));
  tfe__cu_ptr a = TFE__LA_AT(W, base, pa), ipiv = TFE__LA_AT(W, base, pp), info = TFE__LA_AT(W, base, pinfo);
  tfe__cu_ptr x = tfe__la_ptr(Xo);
  tfe_status st = tfe__la_pack(X, A, false, a);
  if (st == TFE_OK) st = tfe__la_pack(X, B, false, x);
  if (st == TFE_OK) st = tfe__la_getrf(X, a, n, n, nb, ipiv, info, TFE__LA_AT(W, base, pw), dbytes, host, hbytes);
  for (int64_t b = 0; st == TFE_OK && r > 0 && b < nb; b++) {
    tfe__sol_status s = tfe__gpu.sol.getrs(D->sol, D->solp, TFE__BLAS_OP_N, n, r, t,
                                           TFE__LA_VP(a + (tfe__cu_ptr)(b * n * n) * X->es), n,
                                           (const int64_t *)TFE__LA_VP(ipiv + (tfe__cu_ptr)(b * n) * sizeof(int64_t)), t,
                                           TFE__LA_VP(x + (tfe__cu_ptr)(b * n * r) * X->es), n,
                                           (int *)TFE__LA_VP(info + (tfe__cu_ptr)((nb + b) * (int64_t)sizeof(int))));
    if (s != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cusolverDnXgetrs failed (cusolverStatus %d)", D->bename, s);
  }
  int *h = NULL;
  if (st == TFE_OK) st = tfe__la_infos(X, info, r > 0 ? 2 * nb : nb, &h);
  for (int64_t b = 0; st == TFE_OK && b < nb; b++) {
    if (h[b] < 0) st = tfe__la_info_neg(X, h[b], "gesv");
    else if (h[b] > 0)
      st = TFE__LA_FAIL(X, TFE_ERR_SINGULAR, "batch item %lld is singular (U(%d,%d) = 0)", (long long)b, h[b] - 1, h[b] - 1);
    else if (r > 0 && h[nb + b] < 0) st = tfe__la_info_neg(X, h[nb + b], "gesv");
  }
  free(h);
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(D->stream);
  free(host);
  return st;
}
/* The right-hand side of a solve (linalg's la_rhs_): (n, r, batch...) or a vector (n, batch...);
 * r: its column count. */
static tfe_status tfe__la_rhs(tfe__la_ctx *X, const tfe__la_view *A, int64_t n, const tfe__la_view *B, int64_t *r) {
  if (!B) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'B' is NULL");
  TFE_TRY(tfe__la_view_ok(X, B, "A", NULL));
  int ra = A->lay.rank, rb = B->lay.rank;
  if (rb != ra && rb != ra - 1)
    return TFE__LA_FAIL(X, TFE_ERR_RANK, "B has rank %d; expected %d (matrix) or %d (vector)", rb, ra, ra - 1);
  int b0 = rb == ra - 1 ? 1 : 2;
  for (int i = 0; i < ra - 2; i++)
    if (A->lay.dims[2 + i] != B->lay.dims[b0 + i])
      return TFE__LA_FAIL(X, TFE_ERR_SHAPE, "batch axis %d: %lld vs %lld", i, (long long)A->lay.dims[2 + i],
                          (long long)B->lay.dims[b0 + i]);
  if (B->lay.dims[0] != n)
    return TFE__LA_FAIL(X, TFE_ERR_SHAPE, "B has %lld rows, A needs %lld", (long long)B->lay.dims[0], (long long)n);
  *r = b0 == 2 ? B->lay.dims[1] : 1;
  if (*r > INT_MAX)
    return TFE__LA_FAIL(X, TFE_ERR_OVERFLOW, "matrix %lld x %lld exceeds LAPACK's 32-bit sizes", (long long)n, (long long)*r);
  return TFE_OK;
}
/* ---- triangular solves: cuBLAS's batched trsm ------------------------------------------------------ */
/* X = A^-1 B for the lower or upper triangle of each A (the other one is not read), unit_diag: a
 * diagonal of ones assumed. A is read where it lies when each of its matrices is column-major
 * (op N) or row-major (op T, or C for a lazily conjugated view, with the other triangle) with a
 * leading dimension in int range, at any batch strides (the batched trsm takes one address per
 * item); otherwise it is packed first. B is packed into X, which trsm overwrites. A zero on a
 * non-unit diagonal is the CPU's TFE_ERR_SINGULAR (trtrs checks it first; trsm does not): the
 * diagonals are gathered on the device and read back once. */
static tfe__blas_trsm_b_fn_t tfe__la_trsm_fn(int g) {
  return g == TFE__GK_F32 ? tfe__gpu.blas.strsm_b
         : g == TFE__GK_F64 ? tfe__gpu.blas.dtrsm_b
         : g == TFE__GK_C64 ? tfe__gpu.blas.ctrsm_b
                            : tfe__gpu.blas.ztrsm_b;
}
/* The address of batch item b of a view (batch axes 2..., first fastest). */
static tfe__cu_ptr tfe__la_item(const tfe__la_ctx *X, const tfe__la_view *A, int64_t b) {
  int64_t off = A->lay.offset;
  for (int i = 2; i < A->lay.rank; i++) off += b % A->lay.dims[i] * A->lay.strides[i], b /= A->lay.dims[i];
  return (tfe__cu_ptr)(uintptr_t)A->data + (tfe__cu_ptr)(off * (int64_t)X->es);
}
static tfe_status tfe__la_trisolve_run(tfe__la_ctx *X, const tfe__la_view *A, bool lower, bool unit, int64_t n,
                                       int64_t r, int64_t nb, const tfe__la_view *B, tfe__la_tensor *Xo) {
  tfe__gpu_dev *D = X->D;
  if (nb == 0 || n == 0) return TFE_OK;
  tfe__blas_trsm_b_fn_t trsm = tfe__la_trsm_fn(X->g);
  if (!trsm || !D->blas)
    return TFE__LA_FAIL(X, TFE_ERR_UNSUPPORTED, "backend '%s' has no triangular solve: cuBLAS is not loaded", D->bename);
  int64_t s0 = A->lay.strides[0], s1 = A->lay.strides[1];
  bool cj = X->g >= TFE__GK_C64 && A->conj;
  int op = -1, lda = (int)n;
  if (!cj && s0 == 1 && s1 >= n && s1 <= INT_MAX) op = TFE__BLAS_OP_N, lda = (int)s1;
  else if (s1 == 1 && s0 >= n && s0 <= INT_MAX) op = cj ? TFE__BLAS_OP_C : TFE__BLAS_OP_T, lda = (int)s0;
  bool packed = op < 0, low = op == TFE__BLAS_OP_N || packed ? lower : !lower;
  tfe__la_ws W = {{0}, 0, 0};
  int pa = tfe__la_part(&W, packed ? (size_t)(nb * n * n) * X->es : 0), pd = tfe__la_part(&W, unit ? 0 : (size_t)(nb * n) * X->es);
  int pp = tfe__la_part(&W, (size_t)(2 * nb) * sizeof(tfe__cu_ptr));
  tfe__cu_ptr base = 0;
  void *unused = NULL;
  TFE_TRY(tfe__la_carve(X, &W, &base, 0, &unused));
  tfe__cu_ptr a = TFE__LA_AT(W, base, pa), x = tfe__la_ptr(Xo), ptrs = TFE__LA_AT(W, base, pp);
  tfe__la_view Ap = *A; /* the matrices trsm reads: A itself or its packed copy */
  tfe_status st = TFE_OK;
  if (packed) {
    st = tfe__la_pack(X, A, false, a);
    Ap.data = TFE__LA_VP(a), Ap.conj = false, Ap.lay.offset = 0, lda = (int)n, op = TFE__BLAS_OP_N;
    Ap.lay.strides[0] = 1, Ap.lay.strides[1] = n;
    for (int i = 2; i < A->lay.rank; i++) Ap.lay.strides[i] = Ap.lay.strides[i - 1] * Ap.lay.dims[i - 1];
  }
  char *hd = NULL;
  if (st == TFE_OK && !unit) { /* the diagonals, gathered and read back */
    tfe__la_view dg = Ap;
    dg.lay.rank = Ap.lay.rank - 1, dg.lay.dims[0] = n, dg.lay.strides[0] = Ap.lay.strides[0] + Ap.lay.strides[1];
    for (int i = 1; i < dg.lay.rank; i++) dg.lay.dims[i] = Ap.lay.dims[i + 1], dg.lay.strides[i] = Ap.lay.strides[i + 1];
    dg.conj = false;
    hd = (char *)malloc((size_t)(nb * n) * X->es);
    if (!hd) st = TFE__LA_FAIL(X, TFE_ERR_ALLOC, "no memory for %lld diagonal elements", (long long)(nb * n));
    if (st == TFE_OK) st = tfe__la_pack(X, &dg, false, TFE__LA_AT(W, base, pd));
    if (st == TFE_OK) {
      tfe__cu_result cr = tfe__gpu.cu.cuMemcpyDtoHAsync(hd, TFE__LA_AT(W, base, pd), (size_t)(nb * n) * X->es, D->stream);
      if (cr == 0) cr = tfe__gpu.cu.cuStreamSynchronize(D->stream);
      if (cr != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: reading the diagonals back: %s", D->bename, tfe__cu_errstr(cr));
    }
    int parts = X->g >= TFE__GK_C64 ? 2 : 1;
    for (int64_t e = 0; st == TFE_OK && e < nb * n; e++) {
      bool zero = true;
      for (int q = 0; q < parts; q++)
        zero = zero && (X->res == 4 ? ((const float *)hd)[e * parts + q] == 0 : ((const double *)hd)[e * parts + q] == 0);
      if (zero)
        st = TFE__LA_FAIL(X, TFE_ERR_SINGULAR, "batch item %lld: zero on the diagonal at %d", (long long)(e / n), (int)(e % n));
    }
  }
  free(hd);
  if (st == TFE_OK) st = tfe__la_pack(X, B, false, x);
  tfe__cu_ptr *hp = st == TFE_OK ? (tfe__cu_ptr *)malloc((size_t)(2 * nb) * sizeof *hp) : NULL;
  if (st == TFE_OK && !hp) st = TFE__LA_FAIL(X, TFE_ERR_ALLOC, "no memory for %lld batch addresses", (long long)(2 * nb));
  if (st == TFE_OK) {
    for (int64_t b = 0; b < nb; b++) hp[b] = tfe__la_item(X, &Ap, b), hp[nb + b] = x + (tfe__cu_ptr)(b * n * r) * X->es;
    /* pageable source: the copy has read hp when it returns */
    tfe__cu_result cr = tfe__gpu.cu.cuMemcpyHtoDAsync(ptrs, hp, (size_t)(2 * nb) * sizeof *hp, D->stream);
    if (cr != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: uploading the batch addresses: %s", D->bename, tfe__cu_errstr(cr));
  }
  free(hp);
  static const double one[2] = {1, 0};
  static const float onef[2] = {1, 0};
  for (int64_t b0 = 0; st == TFE_OK && r > 0 && b0 < nb; b0 += INT_MAX) { /* batch counts are ints */
    int cnt = (int)(nb - b0 < INT_MAX ? nb - b0 : INT_MAX);
    tfe__blas_status bs = trsm(D->blas, TFE__BLAS_SIDE_LEFT, low ? TFE__BLAS_FILL_LOWER : TFE__BLAS_FILL_UPPER, op,
                               unit ? TFE__BLAS_DIAG_UNIT : TFE__BLAS_DIAG_NON_UNIT, (int)n, (int)r,
                               X->res == 4 ? (const void *)onef : (const void *)one,
                               (const void *const *)TFE__LA_VP(ptrs + (tfe__cu_ptr)b0 * sizeof(tfe__cu_ptr)), lda,
                               (void *const *)TFE__LA_VP(ptrs + (tfe__cu_ptr)(nb + b0) * sizeof(tfe__cu_ptr)), (int)n, cnt);
    if (bs != 0) st = TFE__LA_FAIL(X, TFE_ERR_DEVICE, "%s: cublas?trsmBatched failed (cublasStatus %d)", D->bename, bs);
  }
  if (st != TFE_OK) tfe__gpu.cu.cuStreamSynchronize(D->stream);
  return st;
}
/* solve (tri false: A, B, X) and trisolve (tri: A, B, lower, unit_diag, X): the right-hand side
 * checked, X allocated like B, the run under the device lock. */
static tfe_status tfe__la_solves(tfe__la_ctx *X, void *const *args, bool tri) {
  const tfe__la_view *A = *(const tfe__la_view *const *)args[0], *B = *(const tfe__la_view *const *)args[1];
  tfe__la_tensor *Xo = *(tfe__la_tensor *const *)args[tri ? 4 : 2];
  if (!Xo) return TFE__LA_FAIL(X, TFE_ERR_NULL, "argument 'X' is NULL");
  int64_t n = 0, nb = 0, r = 0;
  TFE_TRY(tfe__la_square(X, A, &n, &nb));
  TFE_TRY(tfe__la_rhs(X, A, n, B, &r));
  tfe__la_tensor Xt = {0};
  tfe_status st = tfe__la_alloc(X, X->dt, B->lay.rank, B->lay.dims, &Xt);
  if (st == TFE_OK && (st = tfe__gpu_enter(X->D, X->where)) == TFE_OK) {
    st = tri ? tfe__la_trisolve_run(X, A, *(const bool *)args[2], *(const bool *)args[3], n, r, nb, B, &Xt)
             : tfe__la_solve_run(X, A, B, n, r, nb, &Xt);
    tfe__gpu_leave(X->D);
  }
  if (st != TFE_OK) {
    tfe__la_release(&Xt);
    return st;
  }
  *Xo = Xt;
  return TFE_OK;
}

/* ---- the slot ------------------------------------------------------------------------------------------ */
static tfe_status tfe__gpu_linalg(const tfe_prims_backend *be, const tfe_linalg_call *call) {
  static const struct { int op, nargs; const char *name; } ops[] = {
      {TFE_LA_SVD, 5, "svd"}, {TFE_LA_QR, 4, "qr"}, {TFE_LA_EIGH, 3, "eigh"}, {TFE_LA_EIG, 3, "eig"},
      {TFE_LA_CHOLESKY, 2, "cholesky"}, {TFE_LA_LU, 4, "lu"}, {TFE_LA_SOLVE, 3, "solve"},
      {TFE_LA_TRISOLVE, 5, "trisolve"},
  };
  if (!call) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, "tfe_linalg", "call is NULL");
  tfe__la_ctx X;
  memset(&X, 0, sizeof X);
  X.D = (tfe__gpu_dev *)be->ctx, X.dt = call->dtype, X.g = tfe__gpu_kind(call->dtype);
  int i = 0;
  while (i < (int)(sizeof ops / sizeof *ops) && ops[i].op != call->op) i++;
  if (X.g < 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, "tfe_linalg", "backend '%s' runs linalg on f32, f64, c64 and c128, not %s",
                            be->name, tfe_dtype_name(call->dtype));
  if (i == (int)(sizeof ops / sizeof *ops))
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, "tfe_linalg",
                            "backend '%s' runs svd, qr, eigh, eig, cholesky, lu, solve (cuSOLVER) and trisolve (cuBLAS); linalg operation %d "
                            "is not on the device (download the operands and call it on the host)",
                            be->name, call->op);
  snprintf(X.where, sizeof X.where, "tfe_%s_%s", ops[i].name, tfe_dtype_name(call->dtype));
  if (call->nargs != ops[i].nargs || !call->args)
    return TFE__LA_FAIL(&X, TFE_ERR_INVALID, "%d arguments, expected %d", call->nargs, ops[i].nargs);
  X.es = tfe_dtype_get(call->dtype)->size, X.res = X.g == TFE__GK_F32 || X.g == TFE__GK_C64 ? 4 : 8;
  switch (call->op) {
  case TFE_LA_SVD: return tfe__la_svd(&X, call->args);
  case TFE_LA_QR: return tfe__la_qr(&X, call->args);
  case TFE_LA_EIGH: return tfe__la_eigh(&X, call->args);
  case TFE_LA_EIG: return tfe__la_eig(&X, call->args);
  case TFE_LA_CHOLESKY: return tfe__la_cholesky(&X, call->args);
  case TFE_LA_LU: return tfe__la_lu(&X, call->args);
  case TFE_LA_TRISOLVE: return tfe__la_solves(&X, call->args, true);
  default: return tfe__la_solves(&X, call->args, false);
  }
}

#endif /* TFE__GPU_COMPANION */
#endif
