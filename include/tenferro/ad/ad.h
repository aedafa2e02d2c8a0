/* tenferro/ad.h — ad room: reverse and forward mode automatic differentiation (f32, f64, c64,
 * c128).
 *
 * Contents (per float kind S; see docs/ad.md):
 *   stateless rules   tfe_ad_primal_S, tfe_frule_S, tfe_rrule_S: one entry each, the operation
 *                     named by tfe_ad_op and its parameters in tfe_ad_params (integer einsum
 *                     labels): the FFI surface for ChainRules-style callers
 *   the tape          tfe_tape_S; tfe_ad_var_S (leaf, optional tangent), tfe_ad_op_S (record any
 *                     operation), convenience wrappers (tfe_ad_einsum_S, tfe_ad_unary_S, ...),
 *                     tfe_ad_backward_S (from a scalar or a given cotangent, gradients
 *                     accumulate on leaves), tfe_ad_value_S / _grad_S / _tangent_S
 *   forward mode      a leaf given a tangent makes every operation that depends on it carry a
 *                     tangent (dual tensors); read it with tfe_ad_tangent_S (jvp)
 *   leaves            tfe_ad_var_S (copy), tfe_ad_var_ref_S (retained reference, no copy)
 *   more entries      tfe_ad_einsum_str_S (string notation), tfe_ad_reduce_S (kernel reductions),
 *                     tfe_ad_lstsq_S, tfe_ad_trisolve_S, TFE_AD_SLOGDET_SIGN, LU of any shape
 *   tropical          tfe_rrule_tropical_einsum_S (any integer-label einsum), tfe_tropical_matmul_S
 *                     + tfe_rrule_tropical_matmul_S (through the argmax): cotangents of the REAL
 *                     kind (f32 / f64), the derivative of each element's value
 *   real eig          tfe_rrule_eig_real_R / tfe_frule_eig_real_R (through complex promotion)
 *   device tensors    leaves from tfe_ad_var_ref_S of tensors in a backend's memory (a GPU's):
 *                     the tape computes there through the backends (contractions, elementwise
 *                     slot, linalg slot; other rules through explicit host transfers) and the
 *                     gradients stay there; tfe_ad_grad_tensor_S & co. give the handles
 * Conventions: every value on the tape is a dense column-major tensor of the tape's kind; real
 * valued results of complex operations (singular values, eigenvalues of eigh, norms, log|det|)
 * are stored with a zero imaginary part and only the real part of their cotangent is used.
 * Complex gradients follow PyTorch: the cotangent of z is dL/dRe(z) + i dL/dIm(z) for a real
 * loss L (conjugate-Wirtinger times two), so that z -= lr * grad descends; a holomorphic f
 * pulls back g to conj(f'(z)) g. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_AD_H
#define TENFERRO_AD_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/prims.h>
#include <tenferro/linalg/linalg.h>
#include <tenferro/einsum/parse.h>

/* Every operation the rules know. Inputs / outputs in brackets. */
typedef enum tfe_ad_op {
  TFE_AD_EINSUM = 0, /* [A] or [A, B] -> [C]; labels la, lb, lc (repeats: diagonals/embedding) */
  TFE_AD_UNARY,      /* [x] -> [f(x)], f = params.unop (tfe_unop), params.scalar for pow */
  TFE_AD_BINARY,     /* [a, b] -> [a op b], same shapes, op = params.binop (add sub mul div) */
  TFE_AD_SCALE,      /* [x] -> [params.scalar * x] */
  TFE_AD_SUM,        /* [x] -> [sum over params.axes[0..naxes)]; naxes = -1: all (rank 0) */
  TFE_AD_PERMUTE,    /* [x] -> [x permuted]: out axis k is in axis params.axes[k] */
  TFE_AD_RESHAPE,    /* [x] -> column-major reshape to params.rank / params.dims */
  TFE_AD_SLICE,      /* [x] -> [x[start:stop:step]] per axis */
  TFE_AD_BROADCAST,  /* [x] -> numpy broadcast to params.rank / params.dims */
  TFE_AD_DIAGONAL,   /* [x] -> diagonal of axes params.axes[0], params.axes[1] */
  TFE_AD_SVD,        /* [A] -> [U, S, Vh] thin, batched */
  TFE_AD_SVD_TRUNC,  /* [A] -> [U, S, Vh] truncated by params.trunc (one matrix) */
  TFE_AD_QR,         /* [A] -> [Q, R] thin, batched */
  TFE_AD_LQ,         /* [A] -> [L, Q] thin, batched */
  TFE_AD_EIGH,       /* [A] -> [W, V] (A Hermitian) */
  TFE_AD_EIG,        /* [A] -> [W, V] complex kinds only */
  TFE_AD_LU,         /* [A] -> [L, U] square; the permutation is a constant */
  TFE_AD_CHOLESKY,   /* [A] -> [L] (A Hermitian positive definite) */
  TFE_AD_SOLVE,      /* [A, B] -> [A^-1 B] */
  TFE_AD_INV,        /* [A] -> [A^-1] */
  TFE_AD_DET,        /* [A] -> [det A] */
  TFE_AD_SLOGDET,    /* [A] -> [log|det A|] (the sign is not differentiated) */
  TFE_AD_PINV,       /* [A] -> [A^+] (rank assumed constant near A) */
  TFE_AD_NORM,       /* [A] -> [norm], kind params.norm (tfe_norm_kind) */
  TFE_AD_EXPM,       /* [A] -> [exp A] */
  TFE_AD_POLAR,      /* [A] -> [Up, P] */
  TFE_AD_REDUCE,     /* [x] -> [reduce over params.axes], tfe_redop params.redop (kernel room) */
  TFE_AD_LSTSQ,      /* [A, B] -> [minimum-norm least squares X] (A of full rank near A) */
  TFE_AD_TRISOLVE,   /* [A, B] -> [T^-1 B], T the params.lower / params.unit_diag triangle of A */
  TFE_AD_SLOGDET_SIGN, /* [A] -> [sign, log|det A|] (sign: zero gradient for real kinds) */
  TFE_AD_OP_COUNT_
} tfe_ad_op;

/* Parameters of one operation (plain data: copy it, pass it through FFI). */
typedef struct tfe_ad_params {
  int na, nb, nc;                 /* einsum label counts (= ranks of A, B, C) */
  int32_t la[TFE_MAX_RANK], lb[TFE_MAX_RANK], lc[TFE_MAX_RANK];
  int naxes;                      /* sum axes, permutation, diagonal pair */
  int axes[TFE_MAX_RANK];
  int rank;                       /* reshape / broadcast target, slice rank */
  int64_t dims[TFE_MAX_RANK];
  int64_t start[TFE_MAX_RANK], stop[TFE_MAX_RANK], step[TFE_MAX_RANK];
  int unop, binop, norm;
  double scalar_re, scalar_im;    /* pow exponent, scale factor */
  tfe_trunc trunc;
  double eta;                     /* spectral broadening; <= 0 picks the default (docs/ad.md) */
  int redop;                      /* tfe_redop of TFE_AD_REDUCE */
  int lower, unit_diag;           /* triangle of TFE_AD_TRISOLVE */
} tfe_ad_params;

/* Inputs and outputs of each op (-1: einsum takes 1 or 2 inputs). */
TFE_API int tfe_ad_op_nin(tfe_ad_op op);
TFE_API int tfe_ad_op_nout(tfe_ad_op op);
TFE_API const char *tfe_ad_op_name(tfe_ad_op op);

/* Parameters of an einsum with integer labels. */
TFE_API tfe_ad_params tfe_ad_einsum_params(int na, const int32_t *la, int nb, const int32_t *lb, int nc,
                                           const int32_t *lc);

/* Real kind of a tropical kind's value type (used by the tropical backward). */
#define TFE__RSUF_float f32
#define TFE__RSUF_double f64

#define TFE_TEMPLATE <tenferro/ad/rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/linalg_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/eig_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/solve_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/more_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/tape_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/wrappers_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/tropical_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE

/* ---- eig of a real matrix: stateless rules through complex promotion ----------------------
 * tfe_eig_R gives complex W, V for real A; a real tape cannot hold them, so these rules take
 * the real A with complex (W, V) and their complex tangents / cotangents. They promote A to the
 * complex kind and run the complex rules; the real cotangent of A is the real part of the
 * complex one (a real input moves along real directions only). On a tape, record a real matrix
 * on a complex tape (imaginary parts zero) and take the real part of its gradient. */
#define TFE__AD_EIG_REAL(R, C, CT)                                                                                     \
  TFE_INTERNAL tfe_status tfe__ad_promote_##R(const tfe_view_##R *A, tfe_tensor_##C *out) {                            \
    tfe_tensor_##R d = {0};                                                                                            \
    TFE_TRY(tfe_contiguous_##R(A, TFE_COLMAJOR, &d));                                                                  \
    tfe_status st = tfe_empty_##C(out, d.v.lay.rank, d.v.lay.dims, TFE_COLMAJOR);                                      \
    int64_t n = tfe_layout_numel(&d.v.lay);                                                                            \
    for (int64_t i = 0; !st && i < n; i++) out->v.data[i] = (CT)d.v.data[i];                                           \
    tfe_tensor_release_##R(&d);                                                                                        \
    return st;                                                                                                         \
  }                                                                                                                    \
  /* gA = Re(complex eig rule(A, W, V, gW, gV)); gW or gV may be NULL (zero). */                                      \
  TFE_API tfe_status tfe_rrule_eig_real_##R(const tfe_view_##R *A, const tfe_view_##C *W, const tfe_view_##C *V,       \
                                            const tfe_view_##C *gW, const tfe_view_##C *gV, tfe_tensor_##R *gA) {     \
    TFE_CHECK_NULL(A); TFE_CHECK_NULL(W); TFE_CHECK_NULL(V); TFE_CHECK_NULL(gA);                                       \
    tfe_tensor_##C Ac = {0}, g = {0};                                                                                  \
    TFE_TRY(tfe__ad_promote_##R(A, &Ac));                                                                              \
    tfe_ad_params p;                                                                                                   \
    memset(&p, 0, sizeof p);                                                                                           \
    const tfe_view_##C *x[1] = {&Ac.v}, *y[2] = {W, V}, *dy[2] = {gW, gV};                                             \
    tfe_status st = tfe_rrule_##C(TFE_AD_EIG, &p, 1, x, y, dy, &g);                                                    \
    tfe_tensor_##R r = {0};                                                                                            \
    if (!st) st = tfe_empty_##R(&r, g.v.lay.rank, g.v.lay.dims, TFE_COLMAJOR);                                         \
    int64_t n = st ? 0 : tfe_layout_numel(&g.v.lay);                                                                   \
    for (int64_t i = 0; i < n; i++) r.v.data[i] = TFE__CREAL(g.v.data[i]);                                             \
    tfe_tensor_release_##C(&Ac); tfe_tensor_release_##C(&g);                                                           \
    if (!st) *gA = r;                                                                                                  \
    return st;                                                                                                         \
  }                                                                                                                    \
  /* Complex tangents dW, dV of tfe_eig_R(A) for a real tangent dA (NULL: zero). */                                   \
  TFE_API tfe_status tfe_frule_eig_real_##R(const tfe_view_##R *A, const tfe_view_##R *dA, const tfe_view_##C *W,      \
                                            const tfe_view_##C *V, tfe_tensor_##C *dW, tfe_tensor_##C *dV) {          \
    TFE_CHECK_NULL(A); TFE_CHECK_NULL(W); TFE_CHECK_NULL(V); TFE_CHECK_NULL(dW); TFE_CHECK_NULL(dV);                   \
    tfe_tensor_##C Ac = {0}, dAc = {0}, d[2] = {{{0}, 0}, {{0}, 0}};                                                   \
    TFE_TRY(tfe__ad_promote_##R(A, &Ac));                                                                              \
    tfe_status st = dA ? tfe__ad_promote_##R(dA, &dAc) : TFE_OK;                                                       \
    tfe_ad_params p;                                                                                                   \
    memset(&p, 0, sizeof p);                                                                                           \
    const tfe_view_##C *x[1] = {&Ac.v}, *dx[1] = {dA ? &dAc.v : NULL}, *y[2] = {W, V};                                 \
    if (!st) st = tfe_frule_##C(TFE_AD_EIG, &p, 1, x, dx, y, d);                                                       \
    tfe_tensor_release_##C(&Ac); tfe_tensor_release_##C(&dAc);                                                         \
    if (!st) { *dW = d[0]; *dV = d[1]; }                                                                               \
    return st;                                                                                                         \
  }

#endif
#elif !defined(TENFERRO_AD_BODY) /* bodies */
#define TENFERRO_AD_BODY
#include <tenferro/tensor/tensor.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/prims.h>
#include <tenferro/linalg/linalg.h>
#include <tenferro/einsum/parse.h>
TFE_API int tfe_ad_op_nin(tfe_ad_op op) {
  static const signed char n[] = {-1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1};
  return (unsigned)op < (unsigned)TFE_AD_OP_COUNT_ ? n[op] : 0;
}
TFE_API int tfe_ad_op_nout(tfe_ad_op op) {
  static const signed char n[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 2};
  return (unsigned)op < (unsigned)TFE_AD_OP_COUNT_ ? n[op] : 0;
}
TFE_API const char *tfe_ad_op_name(tfe_ad_op op) {
  static const char *const n[] = {"einsum", "unary", "binary", "scale", "sum", "permute", "reshape", "slice",
                                  "broadcast", "diagonal", "svd", "svd_trunc", "qr", "lq", "eigh", "eig",
                                  "lu", "cholesky", "solve", "inv", "det", "slogdet", "pinv", "norm",
                                  "expm", "polar", "reduce", "lstsq", "trisolve", "slogdet_sign"};
  return (unsigned)op < (unsigned)TFE_AD_OP_COUNT_ ? n[op] : "unknown";
}
TFE_API tfe_ad_params tfe_ad_einsum_params(int na, const int32_t *la, int nb, const int32_t *lb, int nc,
                                           const int32_t *lc) {
  tfe_ad_params p;
  memset(&p, 0, sizeof p);
  p.na = na; p.nb = nb; p.nc = nc;
  for (int i = 0; i < na && i < TFE_MAX_RANK; i++) p.la[i] = la[i];
  for (int i = 0; i < nb && i < TFE_MAX_RANK; i++) p.lb[i] = lb[i];
  for (int i = 0; i < nc && i < TFE_MAX_RANK; i++) p.lc[i] = lc[i];
  return p;
}
/* ---- device tensors (docs/ad.md "Device tensors") -------------------------------------------
 * The tape's values carry their storage, so the tape knows their memory space. While a rule runs
 * for values outside host memory, tfe__ts.ad_backend holds their backend: the rules' helpers
 * allocate there (tfe_backend_storage_new), contract through tfe_contract_on_S, run elementwise
 * work through the backend's elementwise slot, and the linalg room's typed calls go to its
 * linalg slot (tfe__ts.la_backend). NULL (host memory): the CPU code, unchanged. */
typedef struct tfe__ad_saved { const tfe_prims_backend *ad, *la; } tfe__ad_saved;
TFE_INTERNAL tfe__ad_saved tfe__ad_enter(const tfe_prims_backend *be) {
  tfe__ad_saved s = {tfe__ts.ad_backend, tfe__ts.la_backend};
  tfe__ts.ad_backend = be;
  tfe__ts.la_backend = be;
  return s;
}
TFE_INTERNAL void tfe__ad_leave(tfe__ad_saved s) {
  tfe__ts.ad_backend = s.ad;
  tfe__ts.la_backend = s.la;
}
/* The backend of values in storages sts[0..n) (NULL entries: none): NULL when all are plain host
 * memory (the CPU path, no registry lookup), else the registry's choice when it computes outside
 * host memory (operands in different memory spaces: TFE_ERR_DEVICE). */
TFE_INTERNAL tfe_status tfe__ad_pick(int n, const tfe_storage *const *sts, const tfe_prims_backend **out,
                                     const char *fn) {
  *out = NULL;
  bool plain = true;
  for (int k = 0; k < n; k++)
    if (sts[k] && (sts[k]->space.kind != TFE_MEM_HOST || sts[k]->compute_device >= 0)) plain = false;
  if (plain) return TFE_OK;
  static const char *const names[4] = {"input 0", "input 1", "input 2", "input 3"};
  tfe_operand_place pl[4];
  int m = 0;
  for (int k = 0; k < n && m < 4; k++)
    if (sts[k]) { pl[m].name = names[m]; pl[m].st = sts[k]; m++; }
  const tfe_prims_backend *be = NULL;
  TFE_TRY(tfe__be_select_at(NULL, m, pl, false, &be, NULL, fn));
  if (be->space.kind != TFE_MEM_HOST) {
    if (!be->elementwise || !be->mem_copy)
      return tfe__fail(TFE_ERR_UNSUPPORTED, fn, "backend '%s' has no elementwise or memory copy slot: the tape "
                       "needs both for values in its memory", be->name);
    *out = be;
  }
  return TFE_OK;
}
#define TFE_TEMPLATE <tenferro/ad/rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
/* The device rules' shorthands (dev_rules*_tpl.h): a step run only while st is TFE_OK, and a zip
 * of the elementwise slot. */
#define TFE__ADT(call)                                                                                    \
  do {                                                                                                    \
    if (!st) st = (call);                                                                                 \
  } while (0)
#define TFE__ADZIP(op, d, a, b) TFE_FN(ad_ew_)(TFE_EW_ZIP, (op), (d), (a), (b), NULL, NULL)
#define TFE_TEMPLATE <tenferro/ad/dev_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/dev_rules2_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/dev_rules3_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#undef TFE__ADT
#undef TFE__ADZIP
#define TFE_TEMPLATE <tenferro/ad/linalg_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/eig_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/solve_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/more_rules_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/tape_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/wrappers_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#define TFE_TEMPLATE <tenferro/ad/tropical_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
TFE__AD_EIG_REAL(f32, c64, float _Complex)
TFE__AD_EIG_REAL(f64, c128, double _Complex)
#undef TFE__AD_EIG_REAL
#endif
