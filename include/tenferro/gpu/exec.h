/* tenferro/gpu/exec.h — gpu room, companion only: the slots of a CUDA device's backend.
 *
 * Every operand is a tfe_dyn whose data is a device address (element (i..) at
 * data + (offset + sum i*stride) * size). Labels follow tfe_contract_S's rules: a label repeated
 * within an operand is its diagonal (the strides add), a label repeated in C writes C's diagonal
 * (C is scaled by beta first, then the diagonal accumulates), a label in one input only is
 * summed away first.
 *   binary (CONTRACT, BATCHED_GEMM, ELEMENTWISE_MUL): labels sort into batch, M, N and K groups;
 *     an operand whose groups fuse in place (strides continue in the group order, one GEMM
 *     dimension of unit stride, leading dimension large enough, no conjugation cuBLAS cannot
 *     express) is handed to cuBLAS as it is; any other operand is copied by the unary kernel
 *     into a dense [M|K|batch], [K|N|batch] or [M|N|batch] block of the device's workspace
 *     (summing its one-input labels and conjugating on the way); then one strided-batched GEMM.
 *   unary (REDUCE, TRACE, PERMUTE, ANTI_TRACE, ANTI_DIAG): one launch of the unary kernel.
 * Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_EXEC_H
#define TENFERRO_GPU_EXEC_H
#ifdef TFE__GPU_COMPANION
#include <tenferro/gpu/device.h>
#include <limits.h>

/* ---- labels after folding diagonals --------------------------------------------------------- */
enum { TFE__GA = 0, TFE__GB = 1, TFE__GC = 2 };
typedef struct tfe__glabel {
  int32_t label;
  int64_t dim;
  int64_t s[3]; /* stride in A, B, C (summed over repeats) */
  bool in[3];
} tfe__glabel;
typedef struct tfe__gtab {
  int n;
  bool crep; /* C repeats a label */
  tfe__glabel l[3 * TFE_MAX_RANK];
} tfe__gtab;

/* Adds operand x's axes to the table (repeats fold into one stride). */
static tfe_status tfe__gpu_fold(tfe__gtab *T, int x, const tfe_dyn *v, const int32_t *lab, const char *where) {
  static const char nm[3] = {'A', 'B', 'C'};
  if (v->lay.rank < 0 || v->lay.rank > TFE_MAX_RANK)
    return TFE__GPU_FAIL_AT(TFE_ERR_RANK, where, "%c: rank %d outside [0, %d]", nm[x], v->lay.rank, TFE_MAX_RANK);
  if (v->lay.rank > 0 && !lab) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "labels of %c are NULL", nm[x]);
  for (int i = 0; i < v->lay.rank; i++) {
    int j = 0;
    while (j < T->n && T->l[j].label != lab[i]) j++;
    if (j == T->n) {
      memset(&T->l[j], 0, sizeof T->l[j]);
      T->l[j].label = lab[i];
      T->l[j].dim = v->lay.dims[i];
      T->n++;
    } else if (T->l[j].dim != v->lay.dims[i])
      return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "label %d: size %lld in %c, %lld elsewhere", (int)lab[i],
                              (long long)v->lay.dims[i], nm[x], (long long)T->l[j].dim);
    if (T->l[j].in[x] && x == TFE__GC) T->crep = true;
    T->l[j].s[x] += v->lay.strides[i];
    T->l[j].in[x] = true;
  }
  return TFE_OK;
}
static tfe_status tfe__gpu_table(tfe__gtab *T, const tfe_prim_desc *d, const char *where) {
  T->n = 0;
  T->crep = false;
  TFE_TRY(tfe__gpu_fold(T, TFE__GA, d->a, d->la, where));
  if (d->b) TFE_TRY(tfe__gpu_fold(T, TFE__GB, d->b, d->lb, where));
  TFE_TRY(tfe__gpu_fold(T, TFE__GC, d->c, d->lc, where));
  for (int j = 0; j < T->n; j++)
    if (T->l[j].in[TFE__GC] && !T->l[j].in[TFE__GA] && !T->l[j].in[TFE__GB])
      if (!(d->op == TFE_PRIM_ANTI_TRACE || d->op == TFE_PRIM_ANTI_DIAG))
        return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "output label %d is in no input", (int)T->l[j].label);
  return TFE_OK;
}

/* ---- scalars -------------------------------------------------------------------------------- */
typedef struct tfe__gscal { double re, im; } tfe__gscal;
static tfe__gscal tfe__gpu_scalar(int g, const void *v) {
  tfe__gscal s = {0, 0};
  if (g == TFE__GK_F32) s.re = *(const float *)v;
  else if (g == TFE__GK_F64) s.re = *(const double *)v;
  else if (g == TFE__GK_C64) s.re = ((const float *)v)[0], s.im = ((const float *)v)[1];
  else s.re = ((const double *)v)[0], s.im = ((const double *)v)[1];
  if (s.re == 0) s.re = 0; /* -0 becomes +0: cuBLAS reads C for a beta of -0 */
  if (s.im == 0) s.im = 0;
  return s;
}
/* The scalar in the kind's own type (for cuBLAS), in buf. */
static const void *tfe__gpu_scalar_as(int g, tfe__gscal s, double buf[2]) {
  float *f = (float *)buf;
  if (g == TFE__GK_F32) f[0] = (float)s.re;
  else if (g == TFE__GK_F64) buf[0] = s.re;
  else if (g == TFE__GK_C64) f[0] = (float)s.re, f[1] = (float)s.im;
  else buf[0] = s.re, buf[1] = s.im;
  return buf;
}
/* The same without the -0 rule (the elementwise kernels keep a value's bits). */
static tfe__gscal tfe__gpu_scalar_raw(int g, const void *v) {
  tfe__gscal s = {0, 0};
  if (g == TFE__GK_F32) s.re = *(const float *)v;
  else if (g == TFE__GK_F64) s.re = *(const double *)v;
  else if (g == TFE__GK_C64) s.re = ((const float *)v)[0], s.im = ((const float *)v)[1];
  else s.re = ((const double *)v)[0], s.im = ((const double *)v)[1];
  return s;
}
static bool tfe__gpu_iszero(tfe__gscal s) { return s.re == 0 && s.im == 0; }
/* C stores its conjugate: C' = conj(alpha) op(A..) + conj(beta) C'. A zero keeps +0 parts
 * (cuBLAS reads C for a beta of -0). */
static void tfe__gpu_conj_c(tfe__gscal *alpha, tfe__gscal *beta) {
  alpha->im = alpha->im == 0 ? 0 : -alpha->im;
  beta->im = beta->im == 0 ? 0 : -beta->im;
}

/* The device address of element (0, ..., 0). */
static tfe__cu_ptr tfe__gpu_addr(const tfe_dyn *v, size_t es) {
  return (tfe__cu_ptr)(uintptr_t)v->data + (tfe__cu_ptr)(v->lay.offset * (int64_t)es);
}

/* ---- the unary kernel ------------------------------------------------------------------------ */
static tfe_status tfe__gpu_kp_out(tfe__gpu_kparams *p, int64_t dim, int64_t sc, int64_t sa, const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nout == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d output labels of size > 1", TFE__GPU_KMAXR);
  p->dout[p->nout] = dim, p->sc[p->nout] = sc, p->sa[p->nout] = sa;
  p->nout++;
  return TFE_OK;
}
static tfe_status tfe__gpu_kp_sum(tfe__gpu_kparams *p, int64_t dim, int64_t sa, const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nsum == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d summed labels of size > 1", TFE__GPU_KMAXR);
  p->dsum[p->nsum] = dim, p->ssum[p->nsum] = sa;
  p->nsum++;
  return TFE_OK;
}
/* Output dims by C stride (the fastest-moving thread index writes neighbouring elements). */
static void tfe__gpu_kp_sort(tfe__gpu_kparams *p) {
  for (int i = 1; i < p->nout; i++)
    for (int j = i; j > 0 && llabs(p->sc[j]) < llabs(p->sc[j - 1]); j--) {
      long long t;
      t = p->dout[j], p->dout[j] = p->dout[j - 1], p->dout[j - 1] = t;
      t = p->sc[j], p->sc[j] = p->sc[j - 1], p->sc[j - 1] = t;
      t = p->sa[j], p->sa[j] = p->sa[j - 1], p->sa[j - 1] = t;
    }
}
/* Merges neighbouring output labels (in C's order) whose C and A strides both continue: one
 * label of their product size, the same elements (a permutation that keeps runs of labels
 * together becomes one of fewer, larger labels; a plain copy becomes one label). */
static void tfe__gpu_kp_merge(tfe__gpu_kparams *p) {
  int w = 0;
  for (int d = 0; d < p->nout; d++) {
    if (w > 0 && p->sc[d] == p->sc[w - 1] * p->dout[w - 1] && p->sa[d] == p->sa[w - 1] * p->dout[w - 1]) {
      p->dout[w - 1] *= p->dout[d];
      continue;
    }
    p->dout[w] = p->dout[d], p->sc[w] = p->sc[d], p->sa[w] = p->sa[d];
    w++;
  }
  p->nout = w;
}
/* Whether a copy (no summed labels) goes through tiles (tfe_perm2d): when A's fastest label
 * (smallest |stride|) is not C's fastest. x = C's fastest labels, in C's order, up to 32
 * elements or more, stopping before A's fastest; y = A's fastest of the others, in A's order,
 * up to 32 or more (1024 / x's size when x has fewer than 32). The tile is TX x TY elements (32 x 32, or up to 1024 elements when one
 * side has fewer than 32); the labels are reordered x, y, the rest; pj = nx | ny << 8,
 * pad = TX | TY << 16 (kernels.h). Small tiles (under 64 elements) take the plain kernel. */
static bool tfe__gpu_tiled(tfe__gpu_kparams *p) {
  if (p->nout < 2 || p->total <= 0) return false;
  int af = -1;
  for (int d = 0; d < p->nout; d++)
    if (p->sa[d] != 0 && (af < 0 || llabs(p->sa[d]) < llabs(p->sa[af]))) af = d;
  if (af <= 0) return false;
  int nx = 0;
  long long px = 1, py = 1;
  while (nx < af && px < 32) px *= p->dout[nx++];
  int ord[TFE__GPU_KMAXR], m = 0, ny = 0;
  for (int d = nx; d < p->nout; d++) { /* the others by |A stride|, zero strides last */
    int e = m++;
    unsigned long long k = p->sa[d] ? (unsigned long long)llabs(p->sa[d]) : ~0ULL;
    for (; e > 0 && (p->sa[ord[e - 1]] ? (unsigned long long)llabs(p->sa[ord[e - 1]]) : ~0ULL) > k; e--) ord[e] = ord[e - 1];
    ord[e] = d;
  }
  long long ty = px < 32 ? 1024 / px : 32; /* a short x side: a longer y side */
  while (ny < m && py < ty && p->sa[ord[ny]] != 0) py *= p->dout[ord[ny++]];
  long long TX = px < 32 ? px : 32, TY = py < 32 ? py : 32;
  if (TX < 32) TY = py < 1024 / TX ? py : 1024 / TX;
  else if (TY < 32) TX = px < 1024 / TY ? px : 1024 / TY;
  if (TX < 2 || TY < 2 || TX * TY < 64) return false;
  long long dd[TFE__GPU_KMAXR], sc[TFE__GPU_KMAXR], sa[TFE__GPU_KMAXR];
  for (int i = 0; i < m; i++) dd[i] = p->dout[ord[i]], sc[i] = p->sc[ord[i]], sa[i] = p->sa[ord[i]];
  for (int i = 0; i < m; i++) p->dout[nx + i] = dd[i], p->sc[nx + i] = sc[i], p->sa[nx + i] = sa[i];
  p->pj = nx | ny << 8;
  p->pad = (int)TX | (int)TY << 16;
  return true;
}
/* tfe_perm2d: one block of 32x8 threads per tile; grid y over the labels outside the tile. */
static tfe_status tfe__gpu_launch_tiled(tfe__gpu_dev *D, tfe__cu_function f, void **args, const tfe__gpu_kparams *p,
                                        const char *where) {
  int nx = p->pj & 255, ny = p->pj >> 8 & 255;
  long long px = 1, py = 1, TX = p->pad & 0xffff, TY = p->pad >> 16;
  for (int d = 0; d < nx; d++) px *= p->dout[d];
  for (int d = nx; d < nx + ny; d++) py *= p->dout[d];
  if (p->total <= 0) return TFE_OK;
  long long tiles = ((px + TX - 1) / TX) * ((py + TY - 1) / TY);
  /* blocks walk several positions of the other labels when there are few tiles (their offset
   * tables are computed once): about 4096 blocks, at most 65535 in y */
  long long rest = p->total / (px * py), gy = (4096 + tiles - 1) / tiles;
  if (gy > rest) gy = rest;
  if (gy > 65535) gy = 65535;
  if (tiles > 0x7fffffffLL) return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "%lld tiles exceed the grid", tiles);
  TFE__CU_TRY(tfe__gpu.cu.cuLaunchKernel(f, (unsigned)tiles, (unsigned)gy, 1, 32, 8, 1, 0, D->stream, args, NULL), where);
  return TFE_OK;
}
/* C = alpha * sum op(A) + beta * C as described by p (dims and strides filled). */
static tfe_status tfe__gpu_unary_launch(tfe__gpu_dev *D, int g, tfe__cu_ptr c, tfe__cu_ptr a, tfe__gpu_kparams *p,
                                        tfe__gscal alpha, tfe__gscal beta, bool conj, const char *where) {
  TFE_TRY(tfe__gpu_kernels(D, g, where));
  tfe__gpu_kp_sort(p);
  tfe__gpu_kp_merge(p);
  p->total = 1;
  for (int i = 0; i < p->nout; i++) p->total *= p->dout[i];
  p->nsum_total = 1;
  for (int i = 0; i < p->nsum; i++) p->nsum_total *= p->dsum[i];
  p->alpha_re = alpha.re, p->alpha_im = alpha.im, p->beta_re = beta.re, p->beta_im = beta.im;
  p->beta_zero = tfe__gpu_iszero(beta);
  p->conj = conj && g >= TFE__GK_C64;
  void *args[] = {&c, &a, p};
  if (p->nsum == 0 && p->nout == 1 && p->sc[0] == 1 && p->sa[0] == 1 && !p->conj && alpha.re == 1 && alpha.im == 0 &&
      p->beta_zero) { /* a plain copy of a dense block: the driver's device-to-device copy */
    static const size_t es[TFE__GK_COUNT] = {4, 8, 8, 16};
    TFE__CU_TRY(tfe__gpu.cu.cuMemcpyDtoDAsync(c, a, (size_t)p->total * es[g], D->stream), where);
    return TFE_OK;
  }
  if (p->nsum == 0 && tfe__gpu_tiled(p)) return tfe__gpu_launch_tiled(D, D->f_perm[g], args, p, where);
  /* a copy takes four elements per thread (kernels.h): a quarter of the threads */
  return tfe__gpu_launch(D, D->f_unary[g], args, p->nsum == 0 ? (p->total + 3) / 4 : p->total, where);
}
/* C = beta * C over C's own layout (every element once). */
static tfe_status tfe__gpu_scale(tfe__gpu_dev *D, int g, const tfe_dyn *C, size_t es, tfe__gscal beta,
                                 const char *where) {
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < C->lay.rank; i++) TFE_TRY(tfe__gpu_kp_out(&p, C->lay.dims[i], C->lay.strides[i], 0, where));
  TFE_TRY(tfe__gpu_kernels(D, g, where));
  tfe__gpu_kp_sort(&p);
  p.total = 1;
  for (int i = 0; i < p.nout; i++) p.total *= p.dout[i];
  p.beta_re = beta.re, p.beta_im = beta.im, p.beta_zero = tfe__gpu_iszero(beta);
  tfe__cu_ptr c = tfe__gpu_addr(C, es);
  void *args[] = {&c, &p};
  return tfe__gpu_launch(D, D->f_scale[g], args, p.total, where);
}

/* ---- checks common to every slot ------------------------------------------------------------- */
/* The device, kind and element size of a call; the operands must be on be's device. */
static tfe_status tfe__gpu_begin(const tfe_prims_backend *be, const tfe_prim_desc *d, int *g, size_t *es,
                                 const char *where) {
  if (!d->a || !d->c) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "operand %s is NULL", !d->a ? "A" : "C");
  if (!d->alpha || !d->beta)
    return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "scalar %s is NULL", !d->alpha ? "alpha" : "beta");
  tfe_dtype dt = d->a->dtype;
  if ((d->b && d->b->dtype != dt) || d->c->dtype != dt)
    return TFE__GPU_FAIL_AT(TFE_ERR_DTYPE, where, "operands differ in kind (A is %s, C is %s)", tfe_dtype_name(dt),
                            tfe_dtype_name(d->c->dtype));
  *g = tfe__gpu_kind(dt);
  if (*g < 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "backend '%s' runs f32, f64, c64 and c128, not %s", be->name,
                            tfe_dtype_name(dt));
  *es = tfe_dtype_get(dt)->size;
  return TFE_OK;
}

/* ---- unary slots ------------------------------------------------------------------------------ */
static tfe_status tfe__gpu_unary_body(tfe__gpu_dev *D, const tfe_prim_desc *d, int g, size_t es, const char *where) {
  tfe__gtab *T = (tfe__gtab *)malloc(sizeof *T);
  if (!T) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the label table");
  tfe_status st = tfe__gpu_table(T, d, where);
  tfe__gscal alpha = tfe__gpu_scalar(g, d->alpha), beta = tfe__gpu_scalar(g, d->beta);
  bool conj = d->a->conj;
  if (st == TFE_OK && tfe_layout_numel(&d->c->lay) == 0) goto done;
  if (d->c->conj) tfe__gpu_conj_c(&alpha, &beta), conj = !conj;
  if (st == TFE_OK && T->crep) { /* off-diagonal elements become beta*C; the diagonal accumulates */
    st = tfe__gpu_scale(D, g, d->c, es, beta, where);
    beta.re = 1, beta.im = 0;
  }
  tfe__gpu_kparams p;
  memset(&p, 0, sizeof p);
  for (int j = 0; j < T->n && st == TFE_OK; j++) {
    const tfe__glabel *L = &T->l[j];
    if (L->in[TFE__GC]) st = tfe__gpu_kp_out(&p, L->dim, L->s[TFE__GC], L->in[TFE__GA] ? L->s[TFE__GA] : 0, where);
    else st = tfe__gpu_kp_sum(&p, L->dim, L->s[TFE__GA], where);
  }
  if (st == TFE_OK)
    st = tfe__gpu_unary_launch(D, g, tfe__gpu_addr(d->c, es), tfe__gpu_addr(d->a, es), &p, alpha, beta, conj, where);
done:
  free(T);
  return st;
}
static int tfe__gpu_trop(tfe_dtype dt, int *g); /* tropical.h: tropical operands go there */
static tfe_status tfe__gpu_trop_unary(const tfe_prims_backend *be, const tfe_prim_desc *d, int s, int g,
                                      const char *where);
static tfe_status tfe__gpu_exec_unary(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  (void)plan;
  const char *where = "tfe_prims_execute";
  int g = 0;
  size_t es = 0;
  int trop = d && d->a ? tfe__gpu_trop(d->a->dtype, &g) : 0;
  if (trop) return tfe__gpu_trop_unary(be, d, trop, g, where);
  TFE_TRY(tfe__gpu_begin(be, d, &g, &es, where));
  if (d->b) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "%s takes one input", tfe_prim_op_name(d->op));
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe_status st = tfe__gpu_unary_body(D, d, g, es, where);
  tfe__gpu_leave(D);
  return st;
}

#include <tenferro/gpu/tropical.h>
#include <tenferro/gpu/gemm.h>
#include <tenferro/gpu/elementwise.h>

/* ---- the vtable -------------------------------------------------------------------------------- */
/* The linalg slot: cuSOLVER (solver.h, included after memory.h). */
static tfe_status tfe__gpu_linalg(const tfe_prims_backend *be, const tfe_linalg_call *call);
/* Memory slots: einsum's intermediates and results in the device's memory, from its pool; a
 * free goes back to the pool locked by the queued work (memory.h). mem_copy: between host and
 * device memory on the current queue (a runtime stream's in its tasks), staged through pinned
 * buffers. */
static tfe_status tfe__gpool_alloc(tfe__gpu_dev *D, tfe__gpool *P, size_t bytes, tfe__cu_ptr *out, const char *where);
static tfe_status tfe__gpu_mem_alloc(const tfe_prims_backend *be, size_t bytes, void **out) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  tfe__cu_ptr p = 0;
  TFE_TRY(tfe__gpu_enter(D, "tfe_backend_alloc"));
  tfe_status st = tfe__gpool_alloc(D, &D->pool, bytes ? bytes : 1, &p, "tfe_backend_alloc");
  tfe__gpu_leave(D);
  *out = (void *)(uintptr_t)p;
  return st;
}
static void tfe__gpu_free_cb(void *ctx, void *ptr); /* memory.h */
static void tfe__gpu_mem_free(const tfe_prims_backend *be, void *p) { tfe__gpu_free_cb(be->ctx, p); }
static tfe_status tfe__gpu_mem_copy(const tfe_prims_backend *be, void *dst, tfe_memspace dst_space, const void *src,
                                    tfe_memspace src_space, size_t bytes); /* memory.h */
/* The seq slot: a plan's steps replayed as a CUDA graph (graph.h, included after memory.h). */
static tfe_status tfe__gpu_seq(const tfe_prims_backend *be, tfe_seq_desc *d);
/* Every slot is filled: a NULL slot would run host code on device memory. */
static tfe_prims_backend tfe__gpu_vtable(tfe__gpu_dev *D) {
  tfe_prims_backend be;
  memset(&be, 0, sizeof be);
  be.name = D->bename;
  be.ctx = D;
  be.space.kind = TFE_MEM_GPU;
  be.space.device = D->info.index;
  be.flags = TFE_BACKEND_INFER;
  for (int op = 0; op < TFE_PRIM_COUNT; op++) be.exec[op] = tfe__gpu_exec_unary;
  be.exec[TFE_PRIM_BATCHED_GEMM] = tfe__gpu_exec_binary;
  be.exec[TFE_PRIM_CONTRACT] = tfe__gpu_exec_binary;
  be.exec[TFE_PRIM_ELEMENTWISE_MUL] = tfe__gpu_exec_binary;
  be.linalg = tfe__gpu_linalg;
  be.elementwise = tfe__gpu_elementwise;
  be.mem_alloc = tfe__gpu_mem_alloc;
  be.mem_free = tfe__gpu_mem_free;
  be.mem_copy = tfe__gpu_mem_copy;
  be.seq = tfe__gpu_seq;
  return be;
}

#endif /* TFE__GPU_COMPANION */
#endif
