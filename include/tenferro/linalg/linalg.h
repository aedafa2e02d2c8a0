/* tenferro/linalg.h — linalg room: decompositions and solvers on LAPACKE (f32, f64, c64, c128).
 *
 * Contents (per float kind S; R is its real kind, C its complex kind; see docs/linalg.md):
 *   factorizations   tfe_svd_S, tfe_svd_nd_S, tfe_svd_trunc_S, tfe_qr_S, tfe_qr_nd_S, tfe_lq_S,
 *                    tfe_lq_nd_S, tfe_eigh_S, tfe_eig_S, tfe_lu_S, tfe_cholesky_S, tfe_polar_S
 *   solvers          tfe_solve_S, tfe_trisolve_S, tfe_lstsq_S, tfe_inv_S, tfe_pinv_S
 *   scalars of A     tfe_det_S, tfe_slogdet_S, tfe_norm_S
 *   functions        tfe_expm_S
 * Matrix convention: a batched call reads axes 0 and 1 of its input as (rows, columns) and every
 * further axis as a batch axis; results are new column-major tensors shaped (rows', cols',
 * batch...). The _nd forms take one tensor (no batch) and name the axes that form the rows; the
 * remaining axes, in increasing order, form the columns. Inputs may have any strides and a lazy
 * conjugate flag: they are packed into one LAPACK-shaped work buffer (LAPACK overwrites its
 * input), outputs are written by LAPACK in place. On error every output is left untouched. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_LINALG_H
#define TENFERRO_LINALG_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>
#include <tenferro/tensor/dyn.h>
#include <tenferro/prims/prims.h>

/* CBLAS GEMM from the linked BLAS (BLIS), bound under tenferro-private C names so that these
 * declarations cannot clash with another header's prototype of the same symbols. The enum
 * values are the CBLAS ones (ColMajor = 102, NoTrans = 111, Trans = 112, ConjTrans = 113). */
extern void tfe__cblas_sgemm(int, int, int, int, int, int, float, const float *, int,
                             const float *, int, float, float *, int) __asm__("cblas_sgemm");
extern void tfe__cblas_dgemm(int, int, int, int, int, int, double, const double *, int,
                             const double *, int, double, double *, int) __asm__("cblas_dgemm");
extern void tfe__cblas_cgemm(int, int, int, int, int, int, const void *, const void *, int,
                             const void *, int, const void *, void *, int) __asm__("cblas_cgemm");
extern void tfe__cblas_zgemm(int, int, int, int, int, int, const void *, const void *, int,
                             const void *, int, const void *, void *, int) __asm__("cblas_zgemm");
#define TFE__CBLAS_COL 102
#define TFE__CBLAS_OP(c) ((c) == 'N' ? 111 : (c) == 'T' ? 112 : 113)

/* Per-kind name pieces used by the templates: LAPACK prefix, real and complex partner kinds. */
#define TFE__LPFX_f32 s
#define TFE__LPFX_f64 d
#define TFE__LPFX_c64 c
#define TFE__LPFX_c128 z
#define TFE__RSUF_f32 f32
#define TFE__RSUF_f64 f64
#define TFE__RSUF_c64 f32
#define TFE__RSUF_c128 f64
#define TFE__CSUF_f32 c64
#define TFE__CSUF_f64 c128
#define TFE__CSUF_c64 c64
#define TFE__CSUF_c128 c128
#define TFE__CTYPE_f32 float _Complex
#define TFE__CTYPE_f64 double _Complex
#define TFE__CTYPE_c64 float _Complex
#define TFE__CTYPE_c128 double _Complex

/* ---- options and reports ------------------------------------------------------------------ */
typedef enum tfe_svd_mode {
  TFE_SVD_THIN = 0,   /* U m x k, Vh k x n with k = min(m, n) */
  TFE_SVD_FULL = 1,   /* U m x m, Vh n x n */
  TFE_SVD_VALUES = 2  /* singular values only (U and Vh may be NULL and are not written) */
} tfe_svd_mode;

/* Truncation of an SVD: keep at most max_rank values (0 = no limit) and only values above the
 * cutoff (absolute, or relative to the largest value when relative is true; 0 = no cutoff).
 * At least one value is kept when the matrix is not empty. */
typedef struct tfe_trunc {
  int64_t max_rank;
  double cutoff;
  bool relative;
} tfe_trunc;

/* What a truncation dropped. discarded = sum of the dropped s_i^2 (the squared Frobenius
 * distance between A and its truncation); discarded_rel = discarded / sum of all s_i^2. */
typedef struct tfe_trunc_info {
  int64_t rank, full_rank;
  double discarded, discarded_rel;
} tfe_trunc_info;

typedef enum tfe_norm_kind {
  TFE_NORM_FRO = 0, /* Frobenius (any strides, no copy) */
  TFE_NORM_NUC,     /* nuclear: sum of singular values */
  TFE_NORM_2,       /* spectral: largest singular value */
  TFE_NORM_1,       /* largest column sum of |a_ij| */
  TFE_NORM_INF      /* largest row sum of |a_ij| */
} tfe_norm_kind;

/* ---- matrix view of a strided tensor (kind-independent) ------------------------------------ */
/* Element (i, j) of batch item b of the tensor lives at data[boff[b] + roff[i] + coff[j]]; the
 * row (column, batch) index runs over its axes in column-major order (first axis fastest). */
typedef struct tfe__mat {
  int64_t m, n, nbatch;
  int64_t *roff, *coff, *boff; /* one allocation, owned */
  int nr, nc, nb;
  int r[TFE_MAX_RANK], c[TFE_MAX_RANK], b[TFE_MAX_RANK];
} tfe__mat;

/* ---- dispatch: every entry point runs on the backend chosen for its operands ---------------
 * The typed entry points below read plain views (host memory, no compute device), so the
 * backend is the explicit one (none yet for linalg) or the one inferred for host memory
 * (prims/registry.h). The CPU backend's linalg slot is the LAPACKE code of this room; another
 * backend's slot gets the call as a tfe_linalg_call (prims/backend.h): the function, the
 * element kind, and pointers to the arguments in the order of the typed function. */
#define TFE__HAVE_LINALG 1 /* the CPU backend's linalg slot calls this room (prims/cpu_backend.h) */
typedef enum tfe_linalg_op {
  TFE_LA_SVD, TFE_LA_SVD_ND, TFE_LA_SVD_TRUNC, TFE_LA_QR, TFE_LA_QR_ND, TFE_LA_LQ, TFE_LA_LQ_ND, TFE_LA_EIGH,
  TFE_LA_EIG, TFE_LA_LU, TFE_LA_CHOLESKY, TFE_LA_SOLVE, TFE_LA_TRISOLVE, TFE_LA_LSTSQ, TFE_LA_INV, TFE_LA_DET,
  TFE_LA_SLOGDET, TFE_LA_PINV, TFE_LA_POLAR, TFE_LA_NORM, TFE_LA_EXPM, TFE_LA_COUNT
} tfe_linalg_op;
/* The name of the typed function the CPU code reports errors as (tfe_svd_f64, ...). */
#define TFE__LA_WHERE(name) ("tfe_" #name "_" TFE_STR(TFE_S))
#define TFE__LA_CHECK_NULL(p, where) \
  do { if (!(p)) return TFE_FAIL_AT(TFE_ERR_NULL, where, "argument '%s' is NULL", #p); } while (0)
#define TFE__LA_DISPATCH(op, cpu_call, ...)                                                          \
  do {                                                                                               \
    const tfe_prims_backend *be_ = tfe__la_backend(__func__);                                        \
    if (!be_) return tfe__ts.errcode;                                                                   \
    if (be_->linalg == tfe__cpu_linalg) return cpu_call;                                             \
    if (!be_->linalg) return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' has no linalg slot", be_->name); \
    tfe__cpu_enroll_la(TFE_DT, TFE_FN(la_cpu_call_)); /* be_'s slot may forward to the CPU's */      \
    void *const args_[] = {__VA_ARGS__};                                                             \
    tfe_linalg_call c_ = {(int)(op), TFE_DT, (int)(sizeof args_ / sizeof args_[0]), args_};          \
    return be_->linalg(be_, &c_);                                                                    \
  } while (0)

#define TFE_TEMPLATE <tenferro/linalg/factor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/linalg/ops_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- dtype-tagged entries (kinds known at run time) ----------------------------------------
 * tfe_svd_dyn, tfe_qr_dyn, tfe_eigh_dyn, tfe_eig_dyn, tfe_cholesky_dyn, tfe_lu_dyn, tfe_solve_dyn, tfe_inv_dyn,
 * tfe_det_dyn: the typed
 * functions for a tfe_dyn input of kind f32, f64, c64 or c128; results are owning tfe_dyn
 * handles (release with tfe_dyn_release). Another kind, or operands of different kinds:
 * TFE_ERR_DTYPE naming both. */
#define TFE__LA_DYN_KINDS(X) X(f32, f32, TFE_DT_F32) X(f64, f64, TFE_DT_F64) X(c64, f32, TFE_DT_C64) X(c128, f64, TFE_DT_C128)
#define TFE__LA_DYN_SVD(s, r, DT)                                                                  \
  case DT: {                                                                                       \
    tfe_view_##s a;                                                                                \
    tfe_tensor_##s u = {0}, vh = {0};                                                              \
    tfe_tensor_##r sv = {0};                                                                       \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(tfe_svd_##s(&a, mode, U ? &u : NULL, &sv, Vh ? &vh : NULL));                           \
    if (U) tfe_dyn_adopt__##s(&u, U);                                                              \
    if (Vh) tfe_dyn_adopt__##s(&vh, Vh);                                                           \
    tfe_dyn_adopt__##r(&sv, S);                                                                    \
    return TFE_OK;                                                                                 \
  }
/* A = U diag(S) Vh (see tfe_svd_S); U and Vh may be NULL with TFE_SVD_VALUES. */
TFE_API tfe_status tfe_svd_dyn(const tfe_dyn *A, tfe_svd_mode mode, tfe_dyn *U, tfe_dyn *S, tfe_dyn *Vh);
#define TFE__LA_DYN_QR(s, r, DT)                                                                   \
  case DT: {                                                                                       \
    tfe_view_##s a;                                                                                \
    tfe_tensor_##s q = {0}, rr = {0};                                                              \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(tfe_qr_##s(&a, full, &q, &rr));                                                        \
    tfe_dyn_adopt__##s(&q, Q);                                                                     \
    tfe_dyn_adopt__##s(&rr, R);                                                                    \
    return TFE_OK;                                                                                 \
  }
TFE_API tfe_status tfe_qr_dyn(const tfe_dyn *A, bool full, tfe_dyn *Q, tfe_dyn *R);
/* The eigendecompositions' dyn cases: view kind s, W of kind wk, V of kind vk. */
#define TFE__LA_DYN_WV(fn, s, wk, vk, DT)                                                          \
  case DT: {                                                                                       \
    tfe_view_##s a;                                                                                \
    tfe_tensor_##wk w = {0};                                                                       \
    tfe_tensor_##vk v = {0};                                                                       \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(tfe_##fn##_##s(&a, &w, V ? &v : NULL));                                                \
    tfe_dyn_adopt__##wk(&w, W);                                                                    \
    if (V) tfe_dyn_adopt__##vk(&v, V);                                                             \
    return TFE_OK;                                                                                 \
  }
#define TFE__LA_DYN_EIGH(s, r, DT) TFE__LA_DYN_WV(eigh, s, r, s, DT)
/* Hermitian A = V diag(W) V^H; V may be NULL. */
TFE_API tfe_status tfe_eigh_dyn(const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V);
#define TFE__LA_DYN_KINDS_C(X) X(f32, c64, TFE_DT_F32) X(f64, c128, TFE_DT_F64) X(c64, c64, TFE_DT_C64) X(c128, c128, TFE_DT_C128)
#define TFE__LA_DYN_EIG(s, c, DT) TFE__LA_DYN_WV(eig, s, c, c, DT)
/* General A V = V diag(W) (see tfe_eig_S): W, V of the complex kind (c64 for f32 and c64, c128
 * for f64 and c128); V may be NULL. On a GPU: complex kinds (cuSOLVER's geev, docs/gpu.md). */
TFE_API tfe_status tfe_eig_dyn(const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V);
#define TFE__LA_DYN_SOLVE(s, r, DT)                                                                \
  case DT: {                                                                                       \
    tfe_view_##s a, b;                                                                             \
    tfe_tensor_##s x = {0};                                                                        \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(tfe_dyn_as_view_##s(B, &b));                                                           \
    TFE_TRY(tfe_solve_##s(&a, &b, &x));                                                            \
    tfe_dyn_adopt__##s(&x, X);                                                                     \
    return TFE_OK;                                                                                 \
  }
/* X = A^-1 B; A and B of the same kind. */
TFE_API tfe_status tfe_solve_dyn(const tfe_dyn *A, const tfe_dyn *B, tfe_dyn *X);
#define TFE__LA_DYN_CHOL(s, r, DT)                                                                 \
  case DT: {                                                                                       \
    tfe_view_##s a;                                                                                \
    tfe_tensor_##s l = {0};                                                                        \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(tfe_cholesky_##s(&a, &l));                                                             \
    tfe_dyn_adopt__##s(&l, L);                                                                     \
    return TFE_OK;                                                                                 \
  }
/* Hermitian positive definite A = L L^H (see tfe_cholesky_S). */
TFE_API tfe_status tfe_cholesky_dyn(const tfe_dyn *A, tfe_dyn *L);
#define TFE__LA_DYN_LU(s, r, DT)                                                                   \
  case DT: {                                                                                       \
    tfe_view_##s a;                                                                                \
    tfe_tensor_##s l = {0}, u = {0};                                                               \
    tfe_tensor_i64 p = {0};                                                                        \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(tfe_lu_##s(&a, &p, &l, &u));                                                           \
    tfe_dyn_adopt__i64(&p, perm);                                                                  \
    tfe_dyn_adopt__##s(&l, L);                                                                     \
    tfe_dyn_adopt__##s(&u, U);                                                                     \
    return TFE_OK;                                                                                 \
  }
/* A[perm[i], :] = (L U)[i, :]; perm an i64 tensor (see tfe_lu_S). */
TFE_API tfe_status tfe_lu_dyn(const tfe_dyn *A, tfe_dyn *perm, tfe_dyn *L, tfe_dyn *U);
#define TFE__LA_DYN_ONE(s, r, DT)                                                                  \
  case DT: {                                                                                       \
    tfe_view_##s a;                                                                                \
    tfe_tensor_##s x = {0};                                                                        \
    TFE_TRY(tfe_dyn_as_view_##s(A, &a));                                                           \
    TFE_TRY(det ? tfe_det_##s(&a, &x) : tfe_inv_##s(&a, &x));                                      \
    tfe_dyn_adopt__##s(&x, X);                                                                     \
    return TFE_OK;                                                                                 \
  }
TFE_API tfe_status tfe_inv_dyn(const tfe_dyn *A, tfe_dyn *X);
TFE_API tfe_status tfe_det_dyn(const tfe_dyn *A, tfe_dyn *D);

/* ---- _Generic front ends (dispatch on the first view argument) ------------------------------- */
#define tfe_svd(A, ...) _Generic((A), TFE_GCASES_FLOAT(svd, view))(A, __VA_ARGS__)
#define tfe_svd_nd(A, ...) _Generic((A), TFE_GCASES_FLOAT(svd_nd, view))(A, __VA_ARGS__)
#define tfe_svd_trunc(A, ...) _Generic((A), TFE_GCASES_FLOAT(svd_trunc, view))(A, __VA_ARGS__)
#define tfe_qr(A, ...) _Generic((A), TFE_GCASES_FLOAT(qr, view))(A, __VA_ARGS__)
#define tfe_qr_nd(A, ...) _Generic((A), TFE_GCASES_FLOAT(qr_nd, view))(A, __VA_ARGS__)
#define tfe_lq(A, ...) _Generic((A), TFE_GCASES_FLOAT(lq, view))(A, __VA_ARGS__)
#define tfe_lq_nd(A, ...) _Generic((A), TFE_GCASES_FLOAT(lq_nd, view))(A, __VA_ARGS__)
#define tfe_eigh(A, ...) _Generic((A), TFE_GCASES_FLOAT(eigh, view))(A, __VA_ARGS__)
#define tfe_eig(A, ...) _Generic((A), TFE_GCASES_FLOAT(eig, view))(A, __VA_ARGS__)
#define tfe_lu(A, ...) _Generic((A), TFE_GCASES_FLOAT(lu, view))(A, __VA_ARGS__)
#define tfe_cholesky(A, ...) _Generic((A), TFE_GCASES_FLOAT(cholesky, view))(A, __VA_ARGS__)
#define tfe_solve(A, ...) _Generic((A), TFE_GCASES_FLOAT(solve, view))(A, __VA_ARGS__)
#define tfe_trisolve(A, ...) _Generic((A), TFE_GCASES_FLOAT(trisolve, view))(A, __VA_ARGS__)
#define tfe_lstsq(A, ...) _Generic((A), TFE_GCASES_FLOAT(lstsq, view))(A, __VA_ARGS__)
#define tfe_inv(A, ...) _Generic((A), TFE_GCASES_FLOAT(inv, view))(A, __VA_ARGS__)
#define tfe_pinv(A, ...) _Generic((A), TFE_GCASES_FLOAT(pinv, view))(A, __VA_ARGS__)
#define tfe_det(A, ...) _Generic((A), TFE_GCASES_FLOAT(det, view))(A, __VA_ARGS__)
#define tfe_slogdet(A, ...) _Generic((A), TFE_GCASES_FLOAT(slogdet, view))(A, __VA_ARGS__)
#define tfe_norm(A, ...) _Generic((A), TFE_GCASES_FLOAT(norm, view))(A, __VA_ARGS__)
#define tfe_expm(A, ...) _Generic((A), TFE_GCASES_FLOAT(expm, view))(A, __VA_ARGS__)
#define tfe_polar(A, ...) _Generic((A), TFE_GCASES_FLOAT(polar, view))(A, __VA_ARGS__)

#endif
#elif !defined(TENFERRO_LINALG_BODY) /* bodies */
#define TENFERRO_LINALG_BODY
#include <float.h>
#include <limits.h>
#include <lapacke.h>
#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>
#include <tenferro/tensor/dyn.h>

TFE_INTERNAL void tfe__mat_free(tfe__mat *M) {
  tfe__free(M->roff);
  M->roff = M->coff = M->boff = NULL;
}

/* Offsets of every multi-index over the axes ax[0..na) (column-major enumeration). */
TFE_INTERNAL void tfe__mat_offsets(const tfe_layout *L, int na, const int *ax, int64_t base, int64_t *off) {
  int64_t idx[TFE_MAX_RANK] = {0}, n = 1, o = base;
  for (int a = 0; a < na; a++) n *= L->dims[ax[a]];
  for (int64_t t = 0; t < n; t++) {
    off[t] = o;
    for (int a = 0; a < na; a++) { /* odometer step */
      int d = ax[a];
      if (++idx[a] < L->dims[d]) { o += L->strides[d]; break; }
      o -= (L->dims[d] - 1) * L->strides[d];
      idx[a] = 0;
    }
  }
}

TFE_INTERNAL tfe_status tfe__mat_count(const tfe_layout *L, int na, const int *ax, int64_t *n, const char *fn) {
  int64_t p = 1;
  for (int a = 0; a < na; a++)
    if (!tfe__mul_ok(p, L->dims[ax[a]], &p)) return tfe__fail(TFE_ERR_OVERFLOW, fn, "element count overflows");
  *n = p;
  return TFE_OK;
}

/* Group the axes of L into rows, columns and batch and compute the offset tables. */
TFE_INTERNAL tfe_status tfe__mat_init(tfe__mat *M, const tfe_layout *L, int nr, const int *r, int nc,
                                      const int *c, int nb, const int *b, const char *fn) {
  memset(M, 0, sizeof *M);
  M->nr = nr; M->nc = nc; M->nb = nb;
  for (int i = 0; i < nr; i++) M->r[i] = r[i];
  for (int i = 0; i < nc; i++) M->c[i] = c[i];
  for (int i = 0; i < nb; i++) M->b[i] = b[i];
  TFE_TRY(tfe__mat_count(L, nr, r, &M->m, fn));
  TFE_TRY(tfe__mat_count(L, nc, c, &M->n, fn));
  TFE_TRY(tfe__mat_count(L, nb, b, &M->nbatch, fn));
  if (M->m > INT_MAX || M->n > INT_MAX)
    return tfe__fail(TFE_ERR_OVERFLOW, fn, "matrix %lld x %lld exceeds LAPACK's 32-bit sizes",
                     (long long)M->m, (long long)M->n);
  int64_t tot = M->m + M->n + M->nbatch;
  M->roff = (int64_t *)tfe__calloc_at((size_t)(tot > 0 ? tot : 1), sizeof(int64_t), fn);
  if (!M->roff) return TFE_ERR_ALLOC;
  M->coff = M->roff + M->m;
  M->boff = M->coff + M->n;
  tfe__mat_offsets(L, nr, r, 0, M->roff);
  tfe__mat_offsets(L, nc, c, 0, M->coff);
  tfe__mat_offsets(L, nb, b, L->offset, M->boff);
  return TFE_OK;
}

/* Batched convention: axes 0 and 1 are the matrix, the rest are batch axes. */
TFE_INTERNAL tfe_status tfe__mat_batched(tfe__mat *M, const tfe_layout *L, const char *fn) {
  memset(M, 0, sizeof *M); /* defined on every error path too */
  if (L->rank < 2) return tfe__fail(TFE_ERR_RANK, fn, "needs a matrix (rank >= 2), got rank %d", L->rank);
  int r = 0, c = 1, b[TFE_MAX_RANK];
  for (int i = 2; i < L->rank; i++) b[i - 2] = i;
  return tfe__mat_init(M, L, 1, &r, 1, &c, L->rank - 2, b, fn);
}

/* N-D convention: the named axes form the rows, the others (increasing) the columns. */
TFE_INTERNAL tfe_status tfe__mat_nd(tfe__mat *M, const tfe_layout *L, int nrow, const int *row_axes, const char *fn) {
  memset(M, 0, sizeof *M); /* defined on every error path too */
  if (nrow < 0 || nrow > L->rank)
    return tfe__fail(TFE_ERR_INVALID, fn, "%d row axes for a rank-%d tensor", nrow, L->rank);
  if (nrow > 0 && !row_axes) return tfe__fail(TFE_ERR_NULL, fn, "argument 'row_axes' is NULL");
  bool used[TFE_MAX_RANK] = {false};
  for (int i = 0; i < nrow; i++) {
    int a = row_axes[i];
    if (a < 0 || a >= L->rank) return tfe__fail(TFE_ERR_INVALID, fn, "row axis %d outside [0, %d)", a, L->rank);
    if (used[a]) return tfe__fail(TFE_ERR_INVALID, fn, "row axis %d named twice", a);
    used[a] = true;
  }
  int c[TFE_MAX_RANK], nc = 0;
  for (int a = 0; a < L->rank; a++) if (!used[a]) c[nc++] = a;
  return tfe__mat_init(M, L, nrow, row_axes, nc, c, 0, NULL, fn);
}

/* Output shape: lead dims followed by the batch dims of M (the dims of its batch axes in L). */
TFE_INTERNAL tfe_status tfe__mat_shape(const tfe__mat *M, const tfe_layout *L, int nl, const int64_t *lead,
                                       int64_t *dims, int *rank, const char *fn) {
  if (nl + M->nb > TFE_MAX_RANK) return tfe__fail(TFE_ERR_RANK, fn, "result rank %d above %d", nl + M->nb, TFE_MAX_RANK);
  for (int i = 0; i < nl; i++) dims[i] = lead[i];
  for (int i = 0; i < M->nb; i++) dims[nl + i] = L->dims[M->b[i]];
  *rank = nl + M->nb;
  return TFE_OK;
}

/* Same batch shape of two batched operands (no broadcasting). */
TFE_INTERNAL tfe_status tfe__mat_same_batch(const tfe_layout *A, int a0, const tfe_layout *B, int b0, const char *fn) {
  if (A->rank - a0 != B->rank - b0)
    return tfe__fail(TFE_ERR_SHAPE, fn, "batch ranks differ (%d and %d)", A->rank - a0, B->rank - b0);
  for (int i = 0; i < A->rank - a0; i++)
    if (A->dims[a0 + i] != B->dims[b0 + i])
      return tfe__fail(TFE_ERR_SHAPE, fn, "batch axis %d: %lld vs %lld", i, (long long)A->dims[a0 + i],
                       (long long)B->dims[b0 + i]);
  return TFE_OK;
}

/* LAPACK's info < 0 is an argument it refused; with LAPACKE that is most often a NaN. */
TFE_INTERNAL tfe_status tfe__lapack_info(int info, const char *routine, const char *fn) {
  if (info < 0)
    return tfe__fail(TFE_ERR_INVALID, fn, "%s rejected argument %d (NaN or Inf in the input?)", routine, -info);
  return TFE_OK;
}
/* ---- dispatch (see the declarations) ---------------------------------------------------------- */
/* The backend of a linalg call over plain views. */
TFE_INTERNAL const tfe_prims_backend *tfe__la_backend(const char *where) {
  if (tfe__ts.la_backend) return tfe__ts.la_backend; /* a dtype-tagged call chose it */
  return tfe__be_for_views(NULL, 0, NULL, where);
}
#define TFE_TEMPLATE <tenferro/linalg/factor_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/linalg/ops_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
/* Every float kind's CPU code in the CPU backend's linalg slot (prims/cpu_backend.h). */
TFE_INTERNAL void tfe__la_enroll_all(void) {
#define TFE__LA_ENROLL(s, r, DT) tfe__cpu_enroll_la(DT, tfe_la_cpu_call__##s);
  TFE__LA_DYN_KINDS(TFE__LA_ENROLL)
#undef TFE__LA_ENROLL
}
TFE_INTERNAL tfe_status tfe__la_dyn_kind(const tfe_dyn *A, const char *fn) {
  if (!A) return tfe__fail(TFE_ERR_NULL, fn, "argument 'A' is NULL");
  switch (A->dtype) {
  case TFE_DT_F32: case TFE_DT_F64: case TFE_DT_C64: case TFE_DT_C128: return TFE_OK;
  default:
    return tfe__fail(TFE_ERR_DTYPE, fn, "needs a float kind (f32, f64, c64, c128), got %s",
                     A->dtype == TFE_DT_CUSTOM ? "a user kind" : tfe_dtype_name(A->dtype));
  }
}
TFE_INTERNAL tfe_status tfe__la_dyn_same(const tfe_dyn *A, const tfe_dyn *B, const char *fn) {
  if (!B) return tfe__fail(TFE_ERR_NULL, fn, "argument 'B' is NULL");
  if (A->dtype != B->dtype)
    return tfe__fail(TFE_ERR_DTYPE, fn, "A holds %s elements but B holds %s", tfe_dtype_name(A->dtype),
                     B->dtype == TFE_DT_CUSTOM ? "user-kind" : tfe_dtype_name(B->dtype));
  return TFE_OK;
}
/* The backend of a dtype-tagged call, from the storage of A (and B): the typed call it makes
 * runs there (tfe__la_backend). */
TFE_INTERNAL tfe_status tfe__la_dyn_enter(const tfe_dyn *A, const tfe_dyn *B, const tfe_prims_backend **prev,
                                          const char *fn) {
  tfe_operand_place pl[2] = {{"A", A->st}, {"B", B ? B->st : NULL}};
  const tfe_prims_backend *be = NULL;
  TFE_TRY(tfe__be_select_at(NULL, B ? 2 : 1, pl, false, &be, NULL, fn));
  *prev = tfe__ts.la_backend;
  tfe__ts.la_backend = be;
  return TFE_OK;
}
TFE_INTERNAL tfe_status tfe__la_dyn_leave(const tfe_prims_backend *prev, tfe_status st) {
  tfe__ts.la_backend = prev;
  return st;
}
TFE_INTERNAL tfe_status tfe__la_svd_dyn(const tfe_dyn *A, tfe_svd_mode mode, tfe_dyn *U, tfe_dyn *S, tfe_dyn *Vh) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_SVD) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_svd_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_qr_dyn(const tfe_dyn *A, bool full, tfe_dyn *Q, tfe_dyn *R) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_QR) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_qr_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_eigh_dyn(const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_EIGH) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_eigh_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_eig_dyn(const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V) {
  switch (A->dtype) { TFE__LA_DYN_KINDS_C(TFE__LA_DYN_EIG) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_eig_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_solve_dyn(const tfe_dyn *A, const tfe_dyn *B, tfe_dyn *X) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_SOLVE) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_solve_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_chol_dyn(const tfe_dyn *A, tfe_dyn *L) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_CHOL) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_cholesky_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_lu_dyn(const tfe_dyn *A, tfe_dyn *perm, tfe_dyn *L, tfe_dyn *U) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_LU) default: break; }
  return TFE_FAIL_AT(TFE_ERR_INTERNAL, "tfe_lu_dyn", "unreachable");
}
TFE_INTERNAL tfe_status tfe__la_one_dyn(const tfe_dyn *A, bool det, tfe_dyn *X, const char *fn) {
  switch (A->dtype) { TFE__LA_DYN_KINDS(TFE__LA_DYN_ONE) default: break; }
  return tfe__fail(TFE_ERR_INTERNAL, fn, "unreachable");
}
TFE_API tfe_status tfe_svd_dyn(const tfe_dyn *A, tfe_svd_mode mode, tfe_dyn *U, tfe_dyn *S, tfe_dyn *Vh) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_CHECK_NULL(S);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_svd_dyn(A, mode, U, S, Vh));
}
TFE_API tfe_status tfe_qr_dyn(const tfe_dyn *A, bool full, tfe_dyn *Q, tfe_dyn *R) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_CHECK_NULL(Q);
  TFE_CHECK_NULL(R);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_qr_dyn(A, full, Q, R));
}
TFE_API tfe_status tfe_eigh_dyn(const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_CHECK_NULL(W);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_eigh_dyn(A, W, V));
}
TFE_API tfe_status tfe_eig_dyn(const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_CHECK_NULL(W);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_eig_dyn(A, W, V));
}
TFE_API tfe_status tfe_solve_dyn(const tfe_dyn *A, const tfe_dyn *B, tfe_dyn *X) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_TRY(tfe__la_dyn_same(A, B, __func__));
  TFE_CHECK_NULL(X);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, B, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_solve_dyn(A, B, X));
}
TFE_API tfe_status tfe_cholesky_dyn(const tfe_dyn *A, tfe_dyn *L) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_CHECK_NULL(L);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_chol_dyn(A, L));
}
TFE_API tfe_status tfe_lu_dyn(const tfe_dyn *A, tfe_dyn *perm, tfe_dyn *L, tfe_dyn *U) {
  TFE_TRY(tfe__la_dyn_kind(A, __func__));
  TFE_CHECK_NULL(perm);
  TFE_CHECK_NULL(L);
  TFE_CHECK_NULL(U);
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, __func__));
  return tfe__la_dyn_leave(prev, tfe__la_lu_dyn(A, perm, L, U));
}
TFE_INTERNAL tfe_status tfe__la_dyn_one(const tfe_dyn *A, bool det, tfe_dyn *X, const char *fn) {
  TFE_TRY(tfe__la_dyn_kind(A, fn));
  if (!X) return tfe__fail(TFE_ERR_NULL, fn, "argument 'X' is NULL");
  const tfe_prims_backend *prev;
  TFE_TRY(tfe__la_dyn_enter(A, NULL, &prev, fn));
  return tfe__la_dyn_leave(prev, tfe__la_one_dyn(A, det, X, fn));
}
TFE_API tfe_status tfe_inv_dyn(const tfe_dyn *A, tfe_dyn *X) { return tfe__la_dyn_one(A, false, X, __func__); }
TFE_API tfe_status tfe_det_dyn(const tfe_dyn *A, tfe_dyn *D) { return tfe__la_dyn_one(A, true, D, __func__); }
#undef TFE__LA_DYN_SVD
#undef TFE__LA_DYN_QR
#undef TFE__LA_DYN_EIGH
#undef TFE__LA_DYN_EIG
#undef TFE__LA_DYN_WV
#undef TFE__LA_DYN_KINDS_C
#undef TFE__LA_DYN_SOLVE
#undef TFE__LA_DYN_ONE
#undef TFE__LA_DYN_CHOL
#undef TFE__LA_DYN_LU
#undef TFE__LA_DYN_KINDS
#endif
