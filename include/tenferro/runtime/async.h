/* tenferro/runtime/async.h — runtime room: the asynchronous forms of the operations.
 *
 * Each form checks its arguments on the caller's thread (bad input fails at once, as in the
 * synchronous form), allocates any result, queues one task on the stream and returns: the
 * result is pending until the task has run (tfe_wait, tfe_ready). The task runs the
 * synchronous dtype-tagged entry point (tfe_einsum_into_dyn, tfe_contract_dyn, tfe_map_dyn,
 * ...), so results equal the synchronous ones bit for bit at the same thread count. Handles
 * are copied and their storage retained until the task has run; plain views (no storage)
 * must stay valid until then, and are not tracked. stream NULL: the scoped context's stream. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_RUNTIME_ASYNC_H
#define TENFERRO_RUNTIME_ASYNC_H
#include <tenferro/runtime/stream.h>
#include <tenferro/runtime/device.h>
#include <tenferro/kernel/kernel.h>
#ifndef TFE_NO_EINSUM
#include <tenferro/einsum/einsum.h>
#endif
#ifndef TFE_NO_LINALG
#include <tenferro/linalg/linalg.h>
#endif

#ifndef TFE_NO_EINSUM
/* out = einsum(expr, ops): out becomes a new owning handle, pending. */
TFE_API tfe_status tfe_einsum_async_dyn(tfe_stream *s, tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                        const tfe_einsum_opts *opts);
/* einsum into an existing handle (alpha = 1, beta = 0). */
TFE_API tfe_status tfe_einsum_into_async_dyn(tfe_stream *s, const tfe_dyn *out, const char *expr, int n,
                                             const tfe_dyn *ops, const tfe_einsum_opts *opts);
#endif
/* C = alpha * contract(A, B) + beta * C over labels (tfe_contract_dyn; B NULL: unary). */
TFE_API tfe_status tfe_contract_async_dyn(tfe_stream *s, const void *alpha, const tfe_dyn *A, const int32_t *la,
                                          const tfe_dyn *B, const int32_t *lb, const void *beta, const tfe_dyn *C,
                                          const int32_t *lc);
TFE_API tfe_status tfe_map_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op,
                                     const void *param);
TFE_API tfe_status tfe_zip_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b,
                                     tfe_binop op);
TFE_API tfe_status tfe_copy_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *src);
/* dst = alpha * reduce(src over axes) + beta * dst (tfe_reduce_S); alpha/beta NULL: 1 and 0. */
TFE_API tfe_status tfe_reduce_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *src, tfe_redop op,
                                        int naxes, const int *axes, const void *alpha, const void *beta);
/* A copy of src in memory space `space` (host only until a GPU backend brings its copies). */
TFE_API tfe_status tfe_transfer_async_dyn(tfe_stream *s, tfe_dyn *out, const tfe_dyn *src, tfe_memspace space);
#ifndef TFE_NO_LINALG
/* Results are new pending column-major handles, shaped as the synchronous forms shape them. */
TFE_API tfe_status tfe_svd_async_dyn(tfe_stream *s, const tfe_dyn *A, tfe_svd_mode mode, tfe_dyn *U, tfe_dyn *S,
                                     tfe_dyn *Vh);
TFE_API tfe_status tfe_qr_async_dyn(tfe_stream *s, const tfe_dyn *A, bool full, tfe_dyn *Q, tfe_dyn *R);
TFE_API tfe_status tfe_eigh_async_dyn(tfe_stream *s, const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V);
TFE_API tfe_status tfe_solve_async_dyn(tfe_stream *s, const tfe_dyn *A, const tfe_dyn *B, tfe_dyn *X);
#endif

#if TFE__IMPL
#define TFE__RT_OP_INLINE 8
/* What one asynchronous operation's task holds. */
typedef struct tfe__rt_op {
  int nd;
  tfe_dyn d[TFE__RT_OP_INLINE]; /* the handles it uses (each holding a reference) */
  tfe_dyn *dx;                  /* more handles (einsum operands) */
  char *expr;
  int32_t *lab;                 /* contraction labels: A's, then B's, then C's */
  unsigned char alpha[32], beta[32];
  bool has_alpha, has_beta, has_b;
  int code;                     /* unop / binop / redop / svd mode / qr full */
  int naxes;
  int axes[TFE_MAX_RANK];
#ifndef TFE_NO_EINSUM
  tfe_einsum_opts opts;
#endif
  bool has_opts;
  int *path;                    /* a copy of opts.path */
  const void *be;               /* a transfer's backend (its mem_copy slot) */
  size_t bytes;                 /* a transfer's bytes */
  int64_t lo_d, lo_s;           /* a transfer's element offsets */
} tfe__rt_op;
#endif

#endif
#elif !defined(TENFERRO_RUNTIME_ASYNC_BODY) /* bodies */
#define TENFERRO_RUNTIME_ASYNC_BODY

/* ---- the task's argument ------------------------------------------------------------------- */
TFE_INTERNAL tfe_dyn *tfe__op_h(tfe__rt_op *o, int k) { return k < TFE__RT_OP_INLINE ? &o->d[k] : &o->dx[k - TFE__RT_OP_INLINE]; }
TFE_INTERNAL void tfe__op_drop(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  if (!o) return;
  for (int k = 0; k < o->nd; k++) tfe_storage_release(tfe__op_h(o, k)->st);
  tfe__free(o->dx);
  tfe__free(o->expr);
  tfe__free(o->lab);
  tfe__free(o->path);
  tfe__free(o);
}
/* A task argument holding nd handles (filled by tfe__op_put). */
TFE_INTERNAL tfe__rt_op *tfe__op_new(int nd) {
  tfe__rt_op *o = (tfe__rt_op *)tfe__calloc(1, sizeof *o);
  if (!o) return NULL;
  if (nd > TFE__RT_OP_INLINE && !(o->dx = (tfe_dyn *)tfe__calloc((size_t)(nd - TFE__RT_OP_INLINE), sizeof(tfe_dyn)))) {
    tfe__free(o);
    return NULL;
  }
  return o;
}
/* Appends a handle (NULL: an empty one) and takes a reference on its storage. */
TFE_INTERNAL void tfe__op_put(tfe__rt_op *o, const tfe_dyn *x) {
  tfe_dyn *h = tfe__op_h(o, o->nd++);
  if (!x) { memset(h, 0, sizeof *h); return; }
  *h = *x;
  tfe_storage_retain(h->st);
}
/* Copies a scalar of x's kind (at most 32 bytes). */
TFE_INTERNAL bool tfe__op_scalar(unsigned char *to, const void *from, tfe_dtype dt) {
  const tfe_dtype_info *di = tfe_dtype_get(dt);
  if (!from || !di || di->size > 32) return false;
  memcpy(to, from, di->size);
  return true;
}
/* The stream of a call: the one given, else the scoped context's. */
TFE_INTERNAL tfe_status tfe__op_stream(tfe_stream **s, const char *where) {
  if (!*s) *s = tfe__rt_ctx_stream();
  if (!*s) return tfe__fail(TFE_ERR_NULL, where, "no stream given, and no scoped context names one");
  /* a device stream computes in its backend's memory: operands there, results allocated there */
  tfe__ts.rt.op_be = (*s)->hk.create ? tfe__rt_device_backend((*s)->device) : NULL;
  return TFE_OK;
}
/* A new dense handle for a result of the submission under way (its stream's memory). */
TFE_INTERNAL tfe_status tfe__op_empty(tfe_dyn *out, tfe_dtype dt, int rank, const int64_t *dims, tfe_order order) {
  const tfe_prims_backend *be = tfe__ts.rt.op_be;
  if (!be) return tfe_dyn_empty(out, dt, rank, dims, order);
  const tfe_dtype_info *di = tfe_dtype_get(dt);
  if (!di) return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dt);
  tfe_layout L;
  int64_t n = 0;
  TFE_TRY(tfe_layout_dense(rank, dims, order, &L));
  TFE_TRY(tfe_layout_check(&L, &n));
  tfe_storage *st = NULL;
  TFE_TRY(tfe_backend_storage_new(be, (size_t)(n > 0 ? n : 1) * di->size, &st));
  memset(out, 0, sizeof *out);
  out->dtype = dt, out->data = st->ptr, out->lay = L, out->st = st;
  return TFE_OK;
}
/* Queues run(o) on s over the operands of the call (its outputs written). */
TFE_INTERNAL tfe_status tfe__op_submit(tfe_stream *s, tfe__task_run run, tfe__rt_op *o, int n,
                                       const tfe__rt_operand *ops, const char *where) {
  tfe__task *t;
  TFE_TRY(tfe__task_new(run, tfe__op_drop, o, &t));
  return tfe__rt_submit(s, t, n, ops, where);
}
TFE_INTERNAL tfe_status tfe__op_handle(const tfe_dyn *x, const char *name, const char *where) {
  if (!x) return tfe__fail(TFE_ERR_NULL, where, "argument '%s' is NULL", name);
  const tfe_prims_backend *be = tfe__ts.rt.op_be;
  if (be) {
    if (!x->st || x->st->space.kind != be->space.kind || x->st->space.device != be->space.device)
      return tfe__fail(TFE_ERR_DEVICE, where, "%s is not in the memory of device stream '%s' (move it with "
                       "tfe_transfer_async_dyn)", name, be->name);
    return TFE_OK;
  }
  if (x->st && x->st->space.kind != TFE_MEM_HOST)
    return tfe__fail(TFE_ERR_DEVICE, where, "%s lives outside host memory: CPU streams compute in host memory", name);
  return TFE_OK;
}

/* ---- einsum -------------------------------------------------------------------------------- */
#ifndef TFE_NO_EINSUM
TFE_INTERNAL tfe_status tfe__op_einsum_run(void *arg) { /* every handle inline */
  tfe__rt_op *o = (tfe__rt_op *)arg;
  return tfe_einsum_into_dyn(&o->d[0], o->expr, o->nd - 1, o->d + 1, o->has_opts ? &o->opts : NULL);
}
TFE_INTERNAL tfe_status tfe__op_einsum_run_big(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  /* operands past the inline slots: gather them into one array for the call */
  int n = o->nd - 1;
  tfe_dyn *v = (tfe_dyn *)tfe__alloc((size_t)n * sizeof *v);
  if (!v) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) v[k] = *tfe__op_h(o, k + 1);
  tfe_status st = tfe_einsum_into_dyn(tfe__op_h(o, 0), o->expr, n, v, o->has_opts ? &o->opts : NULL);
  tfe__free(v);
  return st;
}
/* Argument checks shared by both einsum forms; *o gets the task argument (out first). */
TFE_INTERNAL tfe_status tfe__op_einsum_prep(const tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                            const tfe_einsum_opts *opts, tfe__rt_op **res, const char *where) {
  if (!expr) return tfe__fail(TFE_ERR_NULL, where, "argument 'expr' is NULL");
  if (n < 1) return tfe__fail(TFE_ERR_INVALID, where, "einsum needs at least one operand (got %d)", n);
  if (!ops) return tfe__fail(TFE_ERR_NULL, where, "argument 'ops' is NULL");
  for (int k = 0; k < n; k++) {
    char nm[24];
    snprintf(nm, sizeof nm, "operand %d", k);
    TFE_TRY(tfe__op_handle(&ops[k], nm, where));
    if (ops[k].dtype != ops[0].dtype)
      return tfe__fail(TFE_ERR_DTYPE, where, "operand %d is %s but operand 0 is %s", k, tfe_dtype_name(ops[k].dtype),
                       tfe_dtype_name(ops[0].dtype));
  }
  tfe__rt_op *o = tfe__op_new(n + 1);
  size_t len = strlen(expr) + 1;
  if (o) o->expr = (char *)tfe__alloc(len);
  if (o && opts && opts->path && opts->path_nsteps > 0)
    o->path = (int *)tfe__alloc(2 * (size_t)opts->path_nsteps * sizeof(int));
  if (!o || !o->expr || (opts && opts->path && opts->path_nsteps > 0 && !o->path)) {
    tfe__op_drop(o);
    return TFE_ERR_ALLOC;
  }
  memcpy(o->expr, expr, len);
  if (opts) {
    o->opts = *opts;
    o->has_opts = true;
    if (o->path) {
      memcpy(o->path, opts->path, 2 * (size_t)opts->path_nsteps * sizeof(int));
      o->opts.path = o->path;
    }
  }
  tfe__op_put(o, out);
  for (int k = 0; k < n; k++) tfe__op_put(o, &ops[k]);
  *res = o;
  return TFE_OK;
}
/* Submits an einsum task writing *out. */
TFE_INTERNAL tfe_status tfe__op_einsum_go(tfe_stream *s, tfe__rt_op *o, const char *where) {
  int n = o->nd;
  tfe__rt_operand small[17], *ops = n <= 17 ? small : (tfe__rt_operand *)tfe__alloc((size_t)n * sizeof *ops);
  if (!ops) { tfe__op_drop(o); return TFE_ERR_ALLOC; }
  ops[0] = (tfe__rt_operand){tfe__op_h(o, 0), true, "the output"};
  for (int k = 1; k < n; k++) ops[k] = (tfe__rt_operand){tfe__op_h(o, k), false, "an operand"};
  tfe_status st = tfe__op_submit(s, n <= TFE__RT_OP_INLINE ? tfe__op_einsum_run : tfe__op_einsum_run_big, o, n, ops, where);
  if (ops != small) tfe__free(ops);
  return st;
}
TFE_API tfe_status tfe_einsum_into_async_dyn(tfe_stream *s, const tfe_dyn *out, const char *expr, int n,
                                             const tfe_dyn *ops, const tfe_einsum_opts *opts) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_handle(out, "out", __func__));
  TFE_TRY(tfe_dyn_check_writable(out));
  tfe__rt_op *o = NULL;
  TFE_TRY(tfe__op_einsum_prep(out, expr, n, ops, opts, &o, __func__));
  if (ops[0].dtype != out->dtype) {
    tfe__op_drop(o);
    return TFE_FAIL(TFE_ERR_DTYPE, "operand 0 is %s but the output is %s", tfe_dtype_name(ops[0].dtype),
                    tfe_dtype_name(out->dtype));
  }
  return tfe__op_einsum_go(s, o, __func__);
}
/* The output shape of an einsum: its plan (from the cache, as the task will find it). */
TFE_INTERNAL tfe_status tfe__op_einsum_shape(const char *expr, int n, const tfe_dyn *ops, const tfe_einsum_opts *opts,
                                             tfe_dyn *out) {
  const tfe_layout *small[16], **lay = n <= 16 ? small : (const tfe_layout **)tfe__alloc((size_t)n * sizeof *lay);
  if (!lay) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) lay[k] = &ops[k].lay;
  tfe_einsum_plan *p = NULL;
  tfe_status st = tfe__ein_plan_cached(&p, ops[0].dtype, expr, n, lay, NULL, NULL, 0, opts);
  if (lay != small) tfe__free((void *)lay);
  if (st != TFE_OK) return st;
  st = tfe__op_empty(out, ops[0].dtype, p->out_rank, p->out_dims, p->out_order);
  tfe_einsum_plan_release(p);
  return st;
}
TFE_API tfe_status tfe_einsum_async_dyn(tfe_stream *s, tfe_dyn *out, const char *expr, int n, const tfe_dyn *ops,
                                        const tfe_einsum_opts *opts) {
  TFE_CHECK_NULL(out);
  TFE_TRY(tfe__op_stream(&s, __func__));
  tfe__rt_op *o = NULL;
  TFE_TRY(tfe__op_einsum_prep(NULL, expr, n, ops, opts, &o, __func__));
  tfe_dyn r = {0};
  tfe_status st = tfe__op_einsum_shape(expr, n, ops, opts, &r);
  if (st != TFE_OK) { tfe__op_drop(o); return st; }
  *tfe__op_h(o, 0) = r;
  tfe_storage_retain(r.st); /* the task's reference; r keeps the caller's */
  st = tfe__op_einsum_go(s, o, __func__);
  if (st != TFE_OK) { tfe_dyn_release(&r); return st; }
  *out = r;
  return TFE_OK;
}
#endif

/* ---- contraction, map, zip, copy, reduce ----------------------------------------------------- */
TFE_INTERNAL tfe_status tfe__op_contract_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  const tfe_dyn *A = &o->d[1], *B = o->has_b ? &o->d[2] : NULL;
  int ra = A->lay.rank, rb = B ? B->lay.rank : 0;
  return tfe_contract_dyn(o->alpha, A, o->lab, B, B ? o->lab + ra : NULL, o->beta, &o->d[0], o->lab + ra + rb);
}
TFE_API tfe_status tfe_contract_async_dyn(tfe_stream *s, const void *alpha, const tfe_dyn *A, const int32_t *la,
                                          const tfe_dyn *B, const int32_t *lb, const void *beta, const tfe_dyn *C,
                                          const int32_t *lc) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_handle(A, "A", __func__));
  TFE_TRY(tfe__op_handle(C, "C", __func__));
  if (B) TFE_TRY(tfe__op_handle(B, "B", __func__));
  int ra = A->lay.rank, rb = B ? B->lay.rank : 0, rc = C->lay.rank;
  if ((ra && !la) || (B && rb && !lb) || (rc && !lc)) return TFE_FAIL(TFE_ERR_NULL, "a label array is NULL");
  if (ra < 0 || rb < 0 || rc < 0 || ra > TFE_MAX_RANK || rb > TFE_MAX_RANK || rc > TFE_MAX_RANK)
    return TFE_FAIL(TFE_ERR_RANK, "ranks must lie in [0, %d]", TFE_MAX_RANK);
  tfe__rt_op *o = tfe__op_new(3);
  if (o) o->lab = (int32_t *)tfe__alloc((size_t)(ra + rb + rc + 1) * sizeof(int32_t));
  if (!o || !o->lab) { tfe__op_drop(o); return TFE_ERR_ALLOC; }
  if (ra) memcpy(o->lab, la, (size_t)ra * sizeof *la);
  if (rb) memcpy(o->lab + ra, lb, (size_t)rb * sizeof *lb);
  if (rc) memcpy(o->lab + ra + rb, lc, (size_t)rc * sizeof *lc);
  o->has_alpha = tfe__op_scalar(o->alpha, alpha, C->dtype);
  o->has_beta = tfe__op_scalar(o->beta, beta, C->dtype);
  if (!o->has_alpha || !o->has_beta) {
    tfe__op_drop(o);
    return TFE_FAIL(TFE_ERR_NULL, "alpha and beta must point at scalars of C's kind");
  }
  o->has_b = B != NULL;
  tfe__op_put(o, C); tfe__op_put(o, A); tfe__op_put(o, B);
  tfe__rt_operand ops[3] = {{&o->d[0], true, "C"}, {&o->d[1], false, "A"}, {B ? &o->d[2] : NULL, false, "B"}};
  return tfe__op_submit(s, tfe__op_contract_run, o, 3, ops, __func__);
}
TFE_INTERNAL tfe_status tfe__op_map_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  return tfe_map_dyn(&o->d[0], &o->d[1], (tfe_unop)o->code, o->has_alpha ? o->alpha : NULL);
}
TFE_INTERNAL tfe_status tfe__op_zip_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  return tfe_zip_dyn(&o->d[0], &o->d[1], &o->d[2], (tfe_binop)o->code);
}
TFE_INTERNAL tfe_status tfe__op_copy_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  return tfe_copy_dyn(&o->d[0], &o->d[1]);
}
/* dst and up to two inputs, checked for a kind and a writable destination. */
TFE_INTERNAL tfe_status tfe__op_ew(tfe_stream *s, tfe__task_run run, const tfe_dyn *dst, const tfe_dyn *a,
                                   const tfe_dyn *b, int code, const void *param, const char *where) {
  TFE_TRY(tfe__op_handle(dst, "dst", where));
  TFE_TRY(tfe__op_handle(a, "src", where));
  if (b) TFE_TRY(tfe__op_handle(b, "b", where));
  if (a->dtype != dst->dtype || (b && b->dtype != dst->dtype))
    return tfe__fail(TFE_ERR_DTYPE, where, "the inputs must be %s like the destination", tfe_dtype_name(dst->dtype));
  tfe__rt_op *o = tfe__op_new(3);
  if (!o) return TFE_ERR_ALLOC;
  o->code = code;
  o->has_alpha = tfe__op_scalar(o->alpha, param, dst->dtype);
  tfe__op_put(o, dst); tfe__op_put(o, a); tfe__op_put(o, b);
  tfe__rt_operand ops[3] = {{&o->d[0], true, "dst"}, {&o->d[1], false, "src"}, {b ? &o->d[2] : NULL, false, "b"}};
  return tfe__op_submit(s, run, o, 3, ops, where);
}
TFE_API tfe_status tfe_map_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *src, tfe_unop op,
                                     const void *param) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  return tfe__op_ew(s, tfe__op_map_run, dst, src, NULL, (int)op, param, __func__);
}
TFE_API tfe_status tfe_zip_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *a, const tfe_dyn *b,
                                     tfe_binop op) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  if (!b) return TFE_FAIL(TFE_ERR_NULL, "argument 'b' is NULL");
  return tfe__op_ew(s, tfe__op_zip_run, dst, a, b, (int)op, NULL, __func__);
}
TFE_API tfe_status tfe_copy_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *src) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  return tfe__op_ew(s, tfe__op_copy_run, dst, src, NULL, 0, NULL, __func__);
}
TFE_INTERNAL tfe_status tfe__op_reduce_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  const tfe_dyn *d = &o->d[0], *x = &o->d[1];
  switch (d->dtype) {
#define TFE__OP_RED(s, T, R, alg, cplx, flt, DT)                                                       \
  case DT: {                                                                                         \
    tfe_view_##s dv = {(T *)d->data, d->lay, d->conj}, xv = {(T *)x->data, x->lay, x->conj};         \
    T al = o->has_alpha ? *(const T *)(const void *)o->alpha : tfe_sr_one_##s();                     \
    T be = o->has_beta ? *(const T *)(const void *)o->beta : tfe_sr_zero_##s();                      \
    return tfe_reduce_##s(&dv, &xv, (tfe_redop)o->code, o->naxes, o->axes, al, be);                  \
  }
    TFE_KINDS_ON(TFE__OP_RED)
#undef TFE__OP_RED
  default: return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)d->dtype);
  }
}
TFE_API tfe_status tfe_reduce_async_dyn(tfe_stream *s, const tfe_dyn *dst, const tfe_dyn *src, tfe_redop op,
                                        int naxes, const int *axes, const void *alpha, const void *beta) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_handle(dst, "dst", __func__));
  TFE_TRY(tfe__op_handle(src, "src", __func__));
  if (src->dtype != dst->dtype) return TFE_FAIL(TFE_ERR_DTYPE, "src is %s but dst is %s", tfe_dtype_name(src->dtype),
                                                tfe_dtype_name(dst->dtype));
  if (naxes < 0 || naxes > TFE_MAX_RANK || (naxes && !axes))
    return TFE_FAIL(TFE_ERR_INVALID, "need 0 to %d axes (got %d, axes %p)", TFE_MAX_RANK, naxes, (const void *)axes);
  tfe__rt_op *o = tfe__op_new(2);
  if (!o) return TFE_ERR_ALLOC;
  o->code = (int)op;
  o->naxes = naxes;
  if (naxes) memcpy(o->axes, axes, (size_t)naxes * sizeof *axes);
  o->has_alpha = tfe__op_scalar(o->alpha, alpha, dst->dtype);
  o->has_beta = tfe__op_scalar(o->beta, beta, dst->dtype);
  tfe__op_put(o, dst); tfe__op_put(o, src);
  tfe__rt_operand ops[2] = {{&o->d[0], true, "dst"}, {&o->d[1], false, "src"}};
  return tfe__op_submit(s, tfe__op_reduce_run, o, 2, ops, __func__);
}
/* A transfer's task: the bytes of the source's element span into the result (same layout). */
TFE_INTERNAL tfe_status tfe__op_xfer_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  const tfe_prims_backend *be = (const tfe_prims_backend *)o->be;
  tfe_dyn *d = &o->d[0], *x = &o->d[1];
  if (!o->bytes) return TFE_OK;
  size_t es = tfe_dtype_get(x->dtype)->size;
  tfe_memspace ds = d->st ? d->st->space : TFE_HOST, xs = x->st ? x->st->space : TFE_HOST;
  return be->mem_copy(be, (char *)d->data + (d->lay.offset - o->lo_d) * (int64_t)es, ds,
                      (const char *)x->data + o->lo_s * (int64_t)es, xs, o->bytes);
}
TFE_API tfe_status tfe_transfer_async_dyn(tfe_stream *s, tfe_dyn *out, const tfe_dyn *src, tfe_memspace space) {
  TFE_CHECK_NULL(out);
  TFE_TRY(tfe__op_stream(&s, __func__));
  if (!src) return TFE_FAIL(TFE_ERR_NULL, "argument 'src' is NULL");
  tfe_memspace from = src->st ? src->st->space : TFE_HOST;
  const tfe_prims_backend *be = tfe__ts.rt.op_be;
  if (space.kind == TFE_MEM_HOST && from.kind == TFE_MEM_HOST && !be) {
    tfe_dyn r = {0};
    TFE_TRY(tfe_dyn_empty(&r, src->dtype, src->lay.rank, src->lay.dims, TFE_COLMAJOR));
    tfe_status st = tfe_copy_async_dyn(s, &r, src);
    if (st != TFE_OK) { tfe_dyn_release(&r); return st; }
    *out = r;
    return TFE_OK;
  }
  /* between host memory and a device's: on a stream of that device, through its mem_copy slot */
  bool same_dev = be && space.kind == be->space.kind && space.device == be->space.device;
  bool from_dev = be && from.kind == be->space.kind && from.device == be->space.device;
  bool up = same_dev && from.kind == TFE_MEM_HOST, down = from_dev && space.kind == TFE_MEM_HOST;
  if (!be || !be->mem_copy || !(up || down))
    return TFE_FAIL(be ? TFE_ERR_DEVICE : TFE_ERR_UNSUPPORTED,
                    "transfers between host memory and a device's memory come with a GPU backend and run on a "
                    "stream of that device (from %s:%d to %s:%d on %s)", from.kind == TFE_MEM_HOST ? "host" : "gpu", from.device,
                    space.kind == TFE_MEM_HOST ? "host" : "gpu", space.device, be ? be->name : "a CPU stream");
  const tfe_dtype_info *di = tfe_dtype_get(src->dtype);
  int64_t count = 0, lo = 0, hi = -1;
  if (!di) return TFE_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)src->dtype);
  TFE_TRY(tfe_layout_check(&src->lay, &count));
  bool any = tfe_layout_extent(&src->lay, &lo, &hi);
  if (any && !src->data) return TFE_FAIL(TFE_ERR_NULL, "the source's data pointer is NULL");
  int64_t span = any ? hi - lo + 1 : 0;
  /* the result keeps the source's dims and strides over a buffer of its element span */
  tfe_dyn r = {0};
  if (up) TFE_TRY(tfe__op_empty(&r, src->dtype, 1, &span, TFE_COLMAJOR));
  else TFE_TRY(tfe_dyn_empty(&r, src->dtype, 1, &span, TFE_COLMAJOR));
  r.lay = src->lay;
  r.lay.offset = src->lay.offset - lo;
  r.conj = src->conj;
  tfe__rt_op *o = tfe__op_new(2);
  if (!o) { tfe_dyn_release(&r); return TFE_ERR_ALLOC; }
  o->be = be;
  o->bytes = (size_t)span * di->size;
  o->lo_d = src->lay.offset - lo; /* element (0..0) of r sits lo_d elements into its buffer */
  o->lo_s = lo;
  tfe__op_put(o, &r); tfe__op_put(o, src);
  tfe__rt_operand ops[2] = {{&o->d[0], true, "out"}, {&o->d[1], false, "src"}};
  tfe_status st = tfe__op_submit(s, tfe__op_xfer_run, o, 2, ops, __func__);
  if (st != TFE_OK) { tfe_dyn_release(&r); return st; }
  *out = r;
  return TFE_OK;
}

/* ---- linalg: the synchronous call into fresh results, copied into the pending ones ------------ */
#ifndef TFE_NO_LINALG
/* Copies a fresh result into the pending handle allocated at submission (same shape). */
TFE_INTERNAL tfe_status tfe__op_la_put(const tfe_dyn *pending, tfe_dyn *fresh) {
  tfe_status st = TFE_OK;
  if (pending->lay.rank != fresh->lay.rank) st = TFE_ERR_INTERNAL;
  for (int i = 0; st == TFE_OK && i < fresh->lay.rank; i++)
    if (pending->lay.dims[i] != fresh->lay.dims[i]) st = TFE_ERR_INTERNAL;
  if (st != TFE_OK) st = TFE_FAIL(TFE_ERR_INTERNAL, "a result's shape differs from the one allocated at submission");
  else st = tfe_copy_dyn(pending, fresh);
  tfe_dyn_release(fresh);
  return st;
}
/* Handles: d[0] = A (d[1] = B for solve), then the results (empty: not asked for). */
TFE_INTERNAL tfe_status tfe__op_la_run(void *arg) {
  tfe__rt_op *o = (tfe__rt_op *)arg;
  tfe_dyn r[3] = {{0}, {0}, {0}};
  tfe_status st;
  int first = 1, nres = 3;
  switch (o->code >> 8) {
  case 0: st = tfe_svd_dyn(&o->d[0], (tfe_svd_mode)(o->code & 255), o->d[1].st ? &r[0] : NULL, &r[1],
                           o->d[3].st ? &r[2] : NULL); break;
  case 1: st = tfe_qr_dyn(&o->d[0], (o->code & 255) != 0, &r[0], &r[1]); nres = 2; break;
  case 2: st = tfe_eigh_dyn(&o->d[0], &r[0], o->d[2].st ? &r[1] : NULL); nres = 2; break;
  default: st = tfe_solve_dyn(&o->d[0], &o->d[1], &r[0]); first = 2; nres = 1; break;
  }
  for (int k = 0; k < nres; k++) {
    if (st == TFE_OK && r[k].st) st = tfe__op_la_put(&o->d[first + k], &r[k]);
    else tfe_dyn_release(&r[k]);
  }
  return st;
}
/* Allocates the pending results (dims of each, rank[k] < 0: not asked for) and queues. */
TFE_INTERNAL tfe_status tfe__op_la(tfe_stream *s, int code, int nin, const tfe_dyn *const *in, int nres,
                                   const int *rank, int64_t (*dims)[TFE_MAX_RANK], const tfe_dtype *dt,
                                   tfe_dyn *const *res, const char *where) {
  tfe_dyn r[3] = {{0}, {0}, {0}};
  tfe_status st = TFE_OK;
  for (int k = 0; k < nres && st == TFE_OK; k++)
    if (rank[k] >= 0) st = tfe__op_empty(&r[k], dt[k], rank[k], dims[k], TFE_COLMAJOR);
  tfe__rt_op *o = st == TFE_OK ? tfe__op_new(nin + nres) : NULL;
  if (!o) {
    for (int k = 0; k < nres; k++) tfe_dyn_release(&r[k]);
    return st != TFE_OK ? st : TFE_ERR_ALLOC;
  }
  o->code = code;
  tfe__rt_operand ops[5];
  for (int k = 0; k < nin; k++) {
    tfe__op_put(o, in[k]);
    ops[k] = (tfe__rt_operand){&o->d[k], false, "an input"};
  }
  for (int k = 0; k < nres; k++) {
    tfe__op_put(o, rank[k] >= 0 ? &r[k] : NULL);
    ops[nin + k] = (tfe__rt_operand){rank[k] >= 0 ? &o->d[nin + k] : NULL, true, "a result"};
  }
  st = tfe__op_submit(s, tfe__op_la_run, o, nin + nres, ops, where); /* the task holds its own references */
  for (int k = 0; k < nres; k++) {
    if (st == TFE_OK && res[k]) *res[k] = r[k];
    else tfe_dyn_release(&r[k]);
  }
  return st;
}
/* Matrix checks on the caller's thread: a float kind, at least two axes. */
TFE_INTERNAL tfe_status tfe__op_la_matrix(const tfe_dyn *A, const char *where) {
  TFE_TRY(tfe__op_handle(A, "A", where));
  TFE_TRY(tfe__la_dyn_kind(A, where));
  if (A->lay.rank < 2) return tfe__fail(TFE_ERR_RANK, where, "A needs at least 2 axes (rows, columns), got %d", A->lay.rank);
  return TFE_OK;
}
/* dims = (a, b, batch axes of A...). */
TFE_INTERNAL int tfe__op_la_dims(const tfe_dyn *A, int lead, int64_t a, int64_t b, int64_t *dims) {
  int r = 0;
  dims[r++] = a;
  if (lead == 2) dims[r++] = b;
  for (int i = 2; i < A->lay.rank; i++) dims[r++] = A->lay.dims[i];
  return r;
}
TFE_API tfe_status tfe_svd_async_dyn(tfe_stream *s, const tfe_dyn *A, tfe_svd_mode mode, tfe_dyn *U, tfe_dyn *S,
                                     tfe_dyn *Vh) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_la_matrix(A, __func__));
  TFE_CHECK_NULL(S);
  if (mode < TFE_SVD_THIN || mode > TFE_SVD_VALUES) return TFE_FAIL(TFE_ERR_INVALID, "unknown svd mode %d", (int)mode);
  if (mode != TFE_SVD_VALUES && (!U || !Vh)) return TFE_FAIL(TFE_ERR_NULL, "U and Vh are needed unless mode is TFE_SVD_VALUES");
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n, dims[3][TFE_MAX_RANK];
  bool full = mode == TFE_SVD_FULL, vec = mode != TFE_SVD_VALUES;
  int rank[3];
  rank[0] = vec ? tfe__op_la_dims(A, 2, m, full ? m : k, dims[0]) : -1;
  rank[1] = tfe__op_la_dims(A, 1, k, 0, dims[1]);
  rank[2] = vec ? tfe__op_la_dims(A, 2, full ? n : k, n, dims[2]) : -1;
  tfe_dtype dt[3] = {A->dtype, tfe_dtype_get(A->dtype)->real, A->dtype};
  const tfe_dyn *in[1] = {A};
  tfe_dyn *res[3] = {vec ? U : NULL, S, vec ? Vh : NULL};
  return tfe__op_la(s, (0 << 8) | (int)mode, 1, in, 3, rank, dims, dt, res, __func__);
}
TFE_API tfe_status tfe_qr_async_dyn(tfe_stream *s, const tfe_dyn *A, bool full, tfe_dyn *Q, tfe_dyn *R) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_la_matrix(A, __func__));
  TFE_CHECK_NULL(Q);
  TFE_CHECK_NULL(R);
  int64_t m = A->lay.dims[0], n = A->lay.dims[1], k = m < n ? m : n, dims[2][TFE_MAX_RANK];
  int rank[2] = {tfe__op_la_dims(A, 2, m, full ? m : k, dims[0]), tfe__op_la_dims(A, 2, full ? m : k, n, dims[1])};
  tfe_dtype dt[2] = {A->dtype, A->dtype};
  const tfe_dyn *in[1] = {A};
  tfe_dyn *res[2] = {Q, R};
  return tfe__op_la(s, (1 << 8) | (int)full, 1, in, 2, rank, dims, dt, res, __func__);
}
TFE_API tfe_status tfe_eigh_async_dyn(tfe_stream *s, const tfe_dyn *A, tfe_dyn *W, tfe_dyn *V) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_la_matrix(A, __func__));
  TFE_CHECK_NULL(W);
  int64_t n = A->lay.dims[0], dims[2][TFE_MAX_RANK];
  if (A->lay.dims[1] != n) return TFE_FAIL(TFE_ERR_SHAPE, "A must be square (%lld x %lld)", (long long)n, (long long)A->lay.dims[1]);
  int rank[2] = {tfe__op_la_dims(A, 1, n, 0, dims[0]), V ? tfe__op_la_dims(A, 2, n, n, dims[1]) : -1};
  tfe_dtype dt[2] = {tfe_dtype_get(A->dtype)->real, A->dtype};
  const tfe_dyn *in[1] = {A};
  tfe_dyn *res[2] = {W, V};
  return tfe__op_la(s, 2 << 8, 1, in, 2, rank, dims, dt, res, __func__);
}
TFE_API tfe_status tfe_solve_async_dyn(tfe_stream *s, const tfe_dyn *A, const tfe_dyn *B, tfe_dyn *X) {
  TFE_TRY(tfe__op_stream(&s, __func__));
  TFE_TRY(tfe__op_la_matrix(A, __func__));
  TFE_TRY(tfe__op_handle(B, "B", __func__));
  TFE_TRY(tfe__la_dyn_same(A, B, __func__));
  TFE_CHECK_NULL(X);
  int64_t dims[1][TFE_MAX_RANK];
  int rank[1] = {B->lay.rank};
  memcpy(dims[0], B->lay.dims, (size_t)B->lay.rank * sizeof(int64_t));
  tfe_dtype dt[1] = {A->dtype};
  const tfe_dyn *in[2] = {A, B};
  tfe_dyn *res[1] = {X};
  return tfe__op_la(s, 3 << 8, 2, in, 1, rank, dims, dt, res, __func__);
}
#endif
#endif
