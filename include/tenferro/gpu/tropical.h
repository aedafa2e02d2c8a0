/* tenferro/gpu/tropical.h — gpu room, companion only: tropical GEMMs on the device (max-plus,
 * min-plus, max-times over f32 and f64: kernels.h's tfe_tgemm_*), for the binary slot (a
 * GEMM-shaped contraction of tropical device operands: gemm.h's layout, this GEMM in place of
 * cuBLAS's) and for tfe_gpu_tropical_matmul (with the argmax of the backward). Parsed only
 * inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_TROPICAL_H
#define TENFERRO_GPU_TROPICAL_H
#ifdef TFE__GPU_COMPANION

static tfe__gpu_dev *tfe__gpu_device(int dev); /* tenferro_gpu.c */

/* ---- shared by the strided launchers here and in elementwise.h ---------------------------- */
/* Indices below 2^31 are placed by multiply-high with magic numbers (kernels.h, fdiv): a 64-bit
 * division per dim and element costs more than the element's loads. */
static void tfe__gpu_fast_place(long long total, int nout, const long long *dout, int *fast, unsigned *mg,
                                unsigned *sh) {
  *fast = total <= 0x7fffffffLL;
  for (int i = 0; *fast && i < nout; i++) tfe__gperm_magic((unsigned long long)dout[i], &mg[i], &sh[i]);
}
/* Dims with up to three strides each (s1, s2 NULL: absent): sorted by |s0|, the smallest first
 * (neighbouring threads touch neighbours; stable), and merged where every present stride
 * continues the previous dim's (one dim of their product size, the same elements). */
static void tfe__gpu_dims_sort(int n, long long *dim, long long *s0, long long *s1, long long *s2) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && llabs(s0[j]) < llabs(s0[j - 1]); j--) {
      long long t;
      t = dim[j], dim[j] = dim[j - 1], dim[j - 1] = t;
      t = s0[j], s0[j] = s0[j - 1], s0[j - 1] = t;
      if (s1) t = s1[j], s1[j] = s1[j - 1], s1[j - 1] = t;
      if (s2) t = s2[j], s2[j] = s2[j - 1], s2[j - 1] = t;
    }
}
static int tfe__gpu_dims_merge(int n, long long *dim, long long *s0, long long *s1, long long *s2) {
  int w = 0;
  for (int k = 0; k < n; k++) {
    if (w > 0 && s0[k] == s0[w - 1] * dim[w - 1] && (!s1 || s1[k] == s1[w - 1] * dim[w - 1]) &&
        (!s2 || s2[k] == s2[w - 1] * dim[w - 1])) {
      dim[w - 1] *= dim[k];
      continue;
    }
    dim[w] = dim[k], s0[w] = s0[k];
    if (s1) s1[w] = s1[k];
    if (s2) s2[w] = s2[k];
    w++;
  }
  return w;
}
/* Folds of many summed elements into few outputs go to the block reduction (tfe_ew_red,
 * tfe_tew_red: one block per output, or per chunk of one): nchunk blocks per output, enough to
 * fill the device a few times over with at least 2048 summed elements each; 0 when the
 * one-thread-per-output kernel takes the fold, 1 for one pass. */
static long long tfe__gpu_red_chunks(long long total, long long nsum_total) {
  if (nsum_total < 512 || total >= 4096LL * 1024) return 0;
  long long want = 4 * 132, nchunk = total >= want ? 1 : (want + total - 1) / total;
  if (nchunk > nsum_total / 2048) nchunk = nsum_total / 2048;
  return nchunk < 1 ? 1 : nchunk;
}
/* Pass 2 of a chunked fold: output o folds w[o * nchunk .. + nchunk): its strides in w. */
static void tfe__gpu_red_pass2(int nout, const long long *dout, long long *sa, long long nchunk) {
  long long st = nchunk;
  for (int k = 0; k < nout; k++) sa[k] = st, st *= dout[k];
}

/* The parameter block of tfe_tgemm_*: struct G in kernels.h. */
typedef struct tfe__gpu_gparams {
  long long m, n, k;
  long long ars, acs, abs_, brs, bcs, bbs, crs, ccs, cbs, irs, ics, ibs;
  double alpha, beta;
  int beta_zero, pad;
} tfe__gpu_gparams;

/* The semiring (1 max-plus, 2 min-plus, 3 max-times) and real kind of a tropical dtype; 0
 * when dt is not one. */
static int tfe__gpu_trop(tfe_dtype dt, int *g) {
  switch (dt) {
  case TFE_DT_MAXPLUS_F32: *g = TFE__GK_F32; return 1;
  case TFE_DT_MAXPLUS_F64: *g = TFE__GK_F64; return 1;
  case TFE_DT_MINPLUS_F32: *g = TFE__GK_F32; return 2;
  case TFE_DT_MINPLUS_F64: *g = TFE__GK_F64; return 2;
  case TFE_DT_MAXTIMES_F32: *g = TFE__GK_F32; return 3;
  case TFE_DT_MAXTIMES_F64: *g = TFE__GK_F64; return 3;
  default: return 0;
  }
}
/* The semiring's zero as a double. */
static double tfe__gpu_trop_zero(int s) { return s == 1 ? -INFINITY : s == 2 ? INFINITY : 0; }

/* The kernels of a semiring and real kind: D->f_tgemm[g][s - 1][v]. */
enum { TFE__TV_GEMM, TFE__TV_ARG, TFE__TV_EW, TFE__TV_EWRED, TFE__TV_COUNT };

/* ---- the strided semiring kernels (tfe_tew_<s>, tfe_tew_red_<s>: kernels.h's struct TE) ------- */
enum { TFE__TOP_COPY, TFE__TOP_FILL, TFE__TOP_SCALE, TFE__TOP_AXPBY, TFE__TOP_ZIP, TFE__TOP_REDUCE, TFE__TOP_CONTRACT };
enum { TFE__TF_ADD, TFE__TF_MUL, TFE__TF_MAX, TFE__TF_MIN }; /* zip codes and folds: semiring add, mul; max, min */
typedef struct tfe__gpu_tparams {
  long long total, nsum_total;
  int op, code, nout, nsum, s1_zero, partial, pad0, pad1;
  double s0, s1;
  long long chunk, nchunk;
  long long dout[TFE__GPU_KMAXR], sd[TFE__GPU_KMAXR], sa[TFE__GPU_KMAXR], sb[TFE__GPU_KMAXR], dsum[TFE__GPU_KMAXR],
      ssa[TFE__GPU_KMAXR], ssb[TFE__GPU_KMAXR];
  unsigned mg[TFE__GPU_KMAXR], sh[TFE__GPU_KMAXR]; /* magic numbers of dout[] when fast */
  int fast, pad;
} tfe__gpu_tparams;

/* Adds an output dim (strides in d, a, b) or a summed dim (strides in a, b); size-1 dims drop. */
static tfe_status tfe__gpu_tp_out(tfe__gpu_tparams *p, int64_t dim, int64_t sd, int64_t sa, int64_t sb, const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nout == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d output dims of size > 1", TFE__GPU_KMAXR);
  p->dout[p->nout] = dim, p->sd[p->nout] = sd, p->sa[p->nout] = sa, p->sb[p->nout] = sb, p->nout++;
  return TFE_OK;
}
static tfe_status tfe__gpu_tp_sum(tfe__gpu_tparams *p, int64_t dim, int64_t sa, int64_t sb, const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nsum == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d summed dims of size > 1", TFE__GPU_KMAXR);
  p->dsum[p->nsum] = dim, p->ssa[p->nsum] = sa, p->ssb[p->nsum] = sb, p->nsum++;
  return TFE_OK;
}
/* Output dims by |d stride| (neighbouring threads write neighbours), merged where d, a and b
 * all continue; summed dims by |a stride|, merged where a and b continue; the totals. */
static void tfe__gpu_tp_finish(tfe__gpu_tparams *p) {
  tfe__gpu_dims_sort(p->nout, p->dout, p->sd, p->sa, p->sb);
  p->nout = tfe__gpu_dims_merge(p->nout, p->dout, p->sd, p->sa, p->sb);
  tfe__gpu_dims_sort(p->nsum, p->dsum, p->ssa, p->ssb, NULL);
  p->nsum = tfe__gpu_dims_merge(p->nsum, p->dsum, p->ssa, p->ssb, NULL);
  p->total = 1;
  for (int i = 0; i < p->nout; i++) p->total *= p->dout[i];
  tfe__gpu_fast_place(p->total, p->nout, p->dout, &p->fast, p->mg, p->sh);
  p->nsum_total = 1;
  for (int i = 0; i < p->nsum; i++) p->nsum_total *= p->dsum[i];
  p->chunk = p->nsum_total, p->nchunk = 1;
}
/* One launch of tfe_tew_red_<s> (grid-stride over outputs x chunks). */
static tfe_status tfe__gpu_tew_red(tfe__gpu_dev *D, int g, int s, tfe__cu_ptr d, tfe__cu_ptr a, tfe__cu_ptr b,
                                   tfe__cu_ptr w, tfe__gpu_tparams *p, const char *where) {
  long long nb = p->total * p->nchunk, blocks = nb < 65535 ? nb : 65535;
  void *args[] = {&d, &a, &b, &w, p};
  TFE__CU_TRY(tfe__gpu.cu.cuLaunchKernel(D->f_tgemm[g][s - 1][TFE__TV_EWRED], (unsigned)blocks, 1, 1, 256, 1, 1, 0,
                                         D->stream, args, NULL),
              where);
  return TFE_OK;
}
/* Runs p (dims filled; device lock held): d = s0 (x) F (+) s1 (x) d in semiring s over d's,
 * a's and b's device addresses. Folds of many summed elements into few outputs take one block
 * per output (or per chunk of one, then a second pass over the chunks' folds). */
static tfe_status tfe__gpu_tew(tfe__gpu_dev *D, int g, int s, tfe__cu_ptr d, tfe__cu_ptr a, tfe__cu_ptr b,
                               tfe__gpu_tparams *p, const char *where) {
  TFE_TRY(tfe__gpu_kernels(D, g, where));
  if (!D->f_tgemm[g][s - 1][TFE__TV_EW] || !D->f_tgemm[g][s - 1][TFE__TV_EWRED])
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s: no tropical elementwise kernel", D->bename);
  tfe__gpu_tp_finish(p);
  if (p->total <= 0) return TFE_OK;
  bool fold = p->op == TFE__TOP_REDUCE || p->op == TFE__TOP_CONTRACT;
  long long nchunk = fold ? tfe__gpu_red_chunks(p->total, p->nsum_total) : 0;
  if (nchunk > 0) {
    if (nchunk == 1) return tfe__gpu_tew_red(D, g, s, d, a, b, 0, p, where);
    size_t es = g == TFE__GK_F32 ? 4 : 8;
    tfe__cu_ptr w = 0;
    TFE_TRY(tfe__gpu_ws(D, (size_t)(p->total * nchunk) * es, &w, where));
    tfe__gpu_tparams q = *p; /* pass 1: the raw folds of the chunks */
    q.nchunk = nchunk, q.chunk = (p->nsum_total + nchunk - 1) / nchunk, q.partial = 1;
    TFE_TRY(tfe__gpu_tew_red(D, g, s, d, a, b, w, &q, where));
    q = *p; /* pass 2: output o folds w[o * nchunk .. + nchunk) (a reduce with the same fold) */
    tfe__gpu_red_pass2(q.nout, q.dout, q.sa, nchunk);
    if (q.op == TFE__TOP_CONTRACT) q.op = TFE__TOP_REDUCE, q.code = TFE__TF_ADD;
    q.nsum = 1, q.dsum[0] = nchunk, q.ssa[0] = 1, q.ssb[0] = 0, q.nsum_total = nchunk, q.chunk = nchunk, q.nchunk = 1;
    return tfe__gpu_tew_red(D, g, s, d, w, w, 0, &q, where);
  }
  void *args[] = {&d, &a, &b, p};
  return tfe__gpu_launch(D, D->f_tgemm[g][s - 1][TFE__TV_EW], args, p->total, where);
}
/* The semiring's one as a double. */
static double tfe__gpu_trop_one(int s) { return s == 3 ? 1 : 0; }
/* C = beta (x) C over C's own layout (beta the semiring's zero: C filled with it, not read). */
static tfe_status tfe__gpu_trop_scale(tfe__gpu_dev *D, int g, int s, const tfe_dyn *C, size_t es, double beta,
                                      const char *where) {
  tfe__gpu_tparams p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < C->lay.rank; i++) TFE_TRY(tfe__gpu_tp_out(&p, C->lay.dims[i], C->lay.strides[i], 0, 0, where));
  p.op = beta == tfe__gpu_trop_zero(s) ? TFE__TOP_FILL : TFE__TOP_SCALE, p.s0 = beta;
  tfe__cu_ptr c = tfe__gpu_addr(C, es);
  return tfe__gpu_tew(D, g, s, c, c, c, &p, where);
}

/* The unary slots (REDUCE, TRACE, PERMUTE, ANTI_TRACE, ANTI_DIAG) for tropical operands:
 * C = alpha (x) (+)_s A[.., s] (+) beta (x) C, the labels as exec.h folds them. A copy (no
 * summed label, alpha the semiring's one, beta its zero) takes the real kind's copy kernels
 * (exec.h: the tiled transposes, the driver's copy); the rest one tfe_tew launch. */
static tfe_status tfe__gpu_trop_unary(const tfe_prims_backend *be, const tfe_prim_desc *d, int s, int g,
                                      const char *where) {
  if (!d->c) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "operand C is NULL");
  if (!d->alpha || !d->beta)
    return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "scalar %s is NULL", !d->alpha ? "alpha" : "beta");
  if (d->c->dtype != d->a->dtype) return TFE__GPU_FAIL_AT(TFE_ERR_DTYPE, where, "operands differ in kind");
  if (d->b) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "%s takes one input", tfe_prim_op_name(d->op));
  size_t es = tfe_dtype_get(d->a->dtype)->size;
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  tfe__gtab *T = (tfe__gtab *)malloc(sizeof *T);
  if (!T) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the label table");
  tfe_status st = tfe__gpu_table(T, d, where);
  if (st != TFE_OK || tfe_layout_numel(&d->c->lay) == 0) {
    free(T);
    return st;
  }
  double alpha = tfe__gpu_scalar_raw(g, d->alpha).re, beta = tfe__gpu_scalar_raw(g, d->beta).re;
  if ((st = tfe__gpu_enter(D, where)) != TFE_OK) {
    free(T);
    return st;
  }
  st = tfe__gpu_kernels(D, g, where);
  if (st == TFE_OK && T->crep) { /* off-diagonal elements become beta (x) C; the diagonal accumulates */
    st = tfe__gpu_trop_scale(D, g, s, d->c, es, beta, where);
    beta = tfe__gpu_trop_one(s);
  }
  tfe__gpu_tparams p;
  memset(&p, 0, sizeof p);
  for (int j = 0; j < T->n && st == TFE_OK; j++) {
    const tfe__glabel *L = &T->l[j];
    if (L->in[TFE__GC]) st = tfe__gpu_tp_out(&p, L->dim, L->s[TFE__GC], L->in[TFE__GA] ? L->s[TFE__GA] : 0, 0, where);
    else st = tfe__gpu_tp_sum(&p, L->dim, L->s[TFE__GA], 0, where);
  }
  bool summed = false;
  for (int j = 0; j < T->n; j++) summed = summed || (!T->l[j].in[TFE__GC] && T->l[j].dim != 1);
  tfe__cu_ptr c = tfe__gpu_addr(d->c, es), a = tfe__gpu_addr(d->a, es);
  if (st == TFE_OK && !summed && alpha == tfe__gpu_trop_one(s) && beta == tfe__gpu_trop_zero(s)) {
    tfe__gpu_kparams k; /* a copy: the real kind's kernels move the same bits */
    memset(&k, 0, sizeof k);
    for (int i = 0; i < p.nout && st == TFE_OK; i++) st = tfe__gpu_kp_out(&k, p.dout[i], p.sd[i], p.sa[i], where);
    tfe__gscal one = {1, 0}, zero = {0, 0};
    if (st == TFE_OK) st = tfe__gpu_unary_launch(D, g, c, a, &k, one, zero, false, where);
  } else if (st == TFE_OK) {
    p.op = summed ? TFE__TOP_REDUCE : TFE__TOP_AXPBY, p.code = TFE__TF_ADD;
    p.s0 = alpha, p.s1 = beta, p.s1_zero = beta == tfe__gpu_trop_zero(s);
    st = tfe__gpu_tew(D, g, s, c, a, a, &p, where);
  }
  tfe__gpu_leave(D);
  free(T);
  return st;
}

/* One launch (device lock held, kernels of kind g loaded): grid of C's tiles x batch (the
 * argmax kernel's tiles are 128 x 128; the other's 16 TM x 16 TN, kernels.h). */
static tfe_status tfe__gpu_tgemm(tfe__gpu_dev *D, int g, int s, bool arg, tfe__cu_ptr c, tfe__cu_ptr a, tfe__cu_ptr b,
                                 tfe__cu_ptr idx, tfe__gpu_gparams *p, long long batch, const char *where) {
  tfe__cu_function f = D->f_tgemm[g][s - 1][arg ? TFE__TV_ARG : TFE__TV_GEMM];
  if (!f) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s: no tropical GEMM kernel", D->bename);
  if (p->m == 0 || p->n == 0 || batch == 0) return TFE_OK;
  if (arg && p->k > 0x7fffffffLL)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "argmax over k = %lld > 2^31 - 1", p->k);
  long long bm = arg ? 128 : 16 * (g == TFE__GK_F64 ? TFE__TG_TM64 : TFE__TG_TM32),
            bn = arg ? 128 : 16 * (g == TFE__GK_F64 ? TFE__TG_TN64 : TFE__TG_TN32);
  long long gx = (p->m + bm - 1) / bm, gy = (p->n + bn - 1) / bn;
  if (gx > 0x7fffffffLL || gy > 65535 || batch > 65535)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "tropical GEMM grid %lld x %lld x %lld too large", gx, gy, batch);
  void *args[] = {&c, &a, &b, &idx, p};
  TFE__CU_TRY(tfe__gpu.cu.cuLaunchKernel(f, (unsigned)gx, (unsigned)gy, (unsigned)batch, 256, 1, 1, 0, D->stream, args,
                                         NULL),
              where);
  return TFE_OK;
}

TFE_GPU_API tfe_status tfe_gpu_tropical_matmul(const tfe_dyn *A, const tfe_dyn *B, const tfe_dyn *C,
                                               const tfe_dyn *argmax) {
  if (!A || !B || !C) return TFE__GPU_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", !A ? "A" : !B ? "B" : "C");
  int g = 0, s = tfe__gpu_trop(A->dtype, &g);
  if (!s)
    return TFE__GPU_FAIL(TFE_ERR_DTYPE, "A is %s: not a tropical kind (max-plus, min-plus, max-times)",
                         tfe_dtype_name(A->dtype));
  if (B->dtype != A->dtype || C->dtype != A->dtype)
    return TFE__GPU_FAIL(TFE_ERR_DTYPE, "A, B and C differ in kind");
  if (argmax && argmax->dtype != TFE_DT_I64) return TFE__GPU_FAIL(TFE_ERR_DTYPE, "argmax is %s, not i64", tfe_dtype_name(argmax->dtype));
  if (A->lay.rank != 2 || B->lay.rank != 2 || C->lay.rank != 2 || (argmax && argmax->lay.rank != 2))
    return TFE__GPU_FAIL(TFE_ERR_RANK, "needs matrices");
  int64_t m = A->lay.dims[0], k = A->lay.dims[1], n = B->lay.dims[1];
  if (B->lay.dims[0] != k || C->lay.dims[0] != m || C->lay.dims[1] != n ||
      (argmax && (argmax->lay.dims[0] != m || argmax->lay.dims[1] != n)))
    return TFE__GPU_FAIL(TFE_ERR_SHAPE, "shapes: A %lld x %lld, B %lld x %lld, C %lld x %lld", (long long)m,
                         (long long)k, (long long)B->lay.dims[0], (long long)n, (long long)C->lay.dims[0],
                         (long long)C->lay.dims[1]);
  const tfe_dyn *ops[4] = {A, B, C, argmax};
  int dev = -1;
  for (int i = 0; i < 4; i++) {
    if (!ops[i]) continue;
    if (!ops[i]->st || ops[i]->st->space.kind != TFE_MEM_GPU)
      return TFE__GPU_FAIL(TFE_ERR_DEVICE, "operand %d is not in GPU memory", i);
    if (dev >= 0 && ops[i]->st->space.device != dev) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "operands on different GPUs");
    dev = ops[i]->st->space.device;
  }
  tfe__gpu_dev *D = tfe__gpu_device(dev);
  if (!D) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "no GPU device %d", dev);
  size_t es = tfe_dtype_get(A->dtype)->size;
  tfe__gpu_gparams p;
  memset(&p, 0, sizeof p);
  p.m = m, p.n = n, p.k = k;
  p.ars = A->lay.strides[0], p.acs = A->lay.strides[1], p.brs = B->lay.strides[0], p.bcs = B->lay.strides[1];
  p.crs = C->lay.strides[0], p.ccs = C->lay.strides[1];
  if (argmax) p.irs = argmax->lay.strides[0], p.ics = argmax->lay.strides[1];
  p.alpha = s == 3 ? 1 : 0, p.beta = tfe__gpu_trop_zero(s), p.beta_zero = 1;
  TFE_TRY(tfe__gpu_enter(D, __func__));
  tfe_status st = tfe__gpu_kernels(D, g, __func__);
  if (st == TFE_OK)
    st = tfe__gpu_tgemm(D, g, s, argmax != NULL, tfe__gpu_addr(C, es), tfe__gpu_addr(A, es), tfe__gpu_addr(B, es),
                        argmax ? tfe__gpu_addr(argmax, 8) : 0, &p, 1, __func__);
  tfe__gpu_leave(D);
  return st;
}

#endif /* TFE__GPU_COMPANION */
#endif
