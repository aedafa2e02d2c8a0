/* tenferro/gpu/elementwise.h — gpu room, companion only: the backend's elementwise slot (the
 * kernel room's copy, fill, scale, axpby, map, zip and reduce on device operands: tfe_ew_desc,
 * kernel/kernel.h). One launch of the generated kernel tfe_ew (one thread per element of dst)
 * or, for a reduction that folds many elements into few outputs, tfe_ew_red (one block per
 * output element, a tree in shared memory). The checks are the CPU's (kernel/check.h): shapes,
 * numpy broadcasting of the inputs to dst, reduction axes, the ops each kind defines (map and
 * zip of a user function run on the host and never reach this slot). Not checked here, unlike
 * the CPU: a destination that overlaps an input other than element for element (the device
 * reads and writes in parallel). Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_ELEMENTWISE_H
#define TENFERRO_GPU_ELEMENTWISE_H
#ifdef TFE__GPU_COMPANION

/* The parameter block of tfe_ew / tfe_ew_red: the layout of struct E in kernels.h. */
typedef struct tfe__gpu_eparams {
  long long total, nsum_total;
  int op, code, nout, nsum, cjd, cja, cjb, s1_zero, fold, pre, fin, partial;
  double s0_re, s0_im, s1_re, s1_im, count;
  long long chunk, nchunk; /* tfe_ew_red: summed elements per block, blocks per output */
  long long dout[TFE__GPU_KMAXR], sd[TFE__GPU_KMAXR], sa[TFE__GPU_KMAXR], sb[TFE__GPU_KMAXR], dsum[TFE__GPU_KMAXR],
      ssum[TFE__GPU_KMAXR];
  unsigned mg[TFE__GPU_KMAXR], sh[TFE__GPU_KMAXR]; /* magic numbers of dout[] when fast */
  int fast, i32; /* i32: fast, and dst's, a's and b's offsets over dout fit an int */
  long long ssb[TFE__GPU_KMAXR]; /* TFE__GPU_EW_CTR: b's strides of the summed dims (ssum: a's) */
} tfe__gpu_eparams;


/* In a view's strides, for dst's dims: numpy broadcasting (trailing dims aligned; a dim of 1,
 * or a missing one, has stride 0). */
static tfe_status tfe__gpu_bcast(const tfe_dyn *x, const tfe_dyn *dst, int64_t *st, const char *name,
                                 const char *where) {
  int rd = dst->lay.rank, rx = x->lay.rank;
  if (rx > rd)
    return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "%s has rank %d, more than the destination's %d", name, rx, rd);
  for (int i = 0; i < rd; i++) {
    int k = i - (rd - rx);
    if (k < 0) { st[i] = 0; continue; }
    if (x->lay.dims[k] == dst->lay.dims[i]) st[i] = x->lay.strides[k];
    else if (x->lay.dims[k] == 1) st[i] = 0;
    else
      return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "%s dim %d is %lld, the destination's is %lld: not broadcastable",
                              name, k, (long long)x->lay.dims[k], (long long)dst->lay.dims[i]);
  }
  return TFE_OK;
}
static tfe_status tfe__gpu_ep_out(tfe__gpu_eparams *p, int64_t dim, int64_t sd, int64_t sa, int64_t sb,
                                  const char *where) {
  if (dim == 1) return TFE_OK;
  if (p->nout == TFE__GPU_KMAXR)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d dims of size > 1", TFE__GPU_KMAXR);
  p->dout[p->nout] = dim, p->sd[p->nout] = sd, p->sa[p->nout] = sa, p->sb[p->nout] = sb;
  p->nout++;
  return TFE_OK;
}
/* Output dims by dst stride and merged where dst, a and b continue alike (a dense tensor
 * becomes one dim: one multiplication per element instead of a division per dim); the summed
 * dims of a reduction likewise in a's strides (tropical.h's tfe__gpu_dims_sort / _merge); then
 * the output count, the placement's magic numbers and one chunk of nsum_total (set by the caller). */
static void tfe__gpu_ep_finish(tfe__gpu_eparams *p) {
  tfe__gpu_dims_sort(p->nout, p->dout, p->sd, p->sa, p->sb);
  p->nout = tfe__gpu_dims_merge(p->nout, p->dout, p->sd, p->sa, p->sb);
  tfe__gpu_dims_sort(p->nsum, p->dsum, p->ssum, p->ssb, NULL);
  p->nsum = tfe__gpu_dims_merge(p->nsum, p->dsum, p->ssum, p->ssb, NULL);
  p->total = 1;
  for (int i = 0; i < p->nout; i++) p->total *= p->dout[i];
  tfe__gpu_fast_place(p->total, p->nout, p->dout, &p->fast, p->mg, p->sh);
  long long ext[3] = {0, 0, 0};
  for (int i = 0; i < p->nout; i++)
    ext[0] += (p->dout[i] - 1) * llabs(p->sd[i]), ext[1] += (p->dout[i] - 1) * llabs(p->sa[i]),
        ext[2] += (p->dout[i] - 1) * llabs(p->sb[i]);
  p->i32 = p->fast && ext[0] <= 0x7fffffffLL && ext[1] <= 0x7fffffffLL && ext[2] <= 0x7fffffffLL;
  p->chunk = p->nsum_total, p->nchunk = 1; /* nsum_total: the caller's */
}
/* A layout's dims are non-negative (the CPU's tfe__check_layout, less the data checks). */
static tfe_status tfe__gpu_ew_dims(const tfe_dyn *v, const char *name, const char *where) {
  if (v->lay.rank < 0 || v->lay.rank > TFE_MAX_RANK)
    return TFE__GPU_FAIL_AT(TFE_ERR_RANK, where, "%s: rank %d outside [0, %d]", name, v->lay.rank, TFE_MAX_RANK);
  for (int i = 0; i < v->lay.rank; i++)
    if (v->lay.dims[i] < 0)
      return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "%s: dim %d is negative", name, i);
  return TFE_OK;
}
/* The reduction's fold, transform before it, and whether the kind defines it (reduce_tpl.h). */
static bool tfe__gpu_red_kind(int g, tfe_redop op, int *fold, int *pre) {
  bool cplx = g >= TFE__GK_C64;
  *pre = TFE__KP_NONE, *fold = TFE__KF_ADD;
  switch (op) {
  case TFE_RED_PROD: *fold = TFE__KF_MUL; break;
  case TFE_RED_MAX: *fold = TFE__KF_MAX; return !cplx;
  case TFE_RED_MIN: *fold = TFE__KF_MIN; return !cplx;
  case TFE_RED_SUMSQ: case TFE_RED_NORM2: *pre = TFE__KP_ABS2; break;
  case TFE_RED_NORM1: *pre = TFE__KP_ABS; break;
  case TFE_RED_NORMINF: *fold = TFE__KF_MAX, *pre = TFE__KP_ABS; break;
  default: break;
  }
  return true;
}

/* Binary op code of ZIP and ZIPN: known, and defined for kind g (the CPU's messages). */
static tfe_status tfe__gpu_binop_ok(int code, int g, const char *where) {
  if ((unsigned)code >= (unsigned)TFE_BIN_COUNT_) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown binary op %d", code);
  const tfe__gpu_opsrc *o = &tfe__gpu_binop_src[code];
  if (!(g >= TFE__GK_C64 ? o->cplx : o->real))
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "binary op '%s' is not defined for this kind",
                            tfe_binop_name((tfe_binop)code));
  return TFE_OK;
}
/* Fills p for d (dims and strides of the output, summed dims, op codes, flags, scalars); *skip
 * when there is nothing to do (an empty destination). */
static tfe_status tfe__gpu_ew_params(const tfe_ew_desc *d, int g, tfe__gpu_eparams *p, bool *skip,
                                     const char *where) {
  const tfe_dyn *D = d->dst, *A = d->a, *B = d->b;
  memset(p, 0, sizeof *p);
  *skip = false;
  p->op = (int)d->op, p->code = d->code;
  p->cjd = D->conj && g >= TFE__GK_C64;
  p->cja = A && A->conj && g >= TFE__GK_C64;
  p->cjb = B && B->conj && g >= TFE__GK_C64;
  TFE_TRY(tfe__gpu_ew_dims(D, "destination", where));
  if (A) TFE_TRY(tfe__gpu_ew_dims(A, "source", where));
  if (B) TFE_TRY(tfe__gpu_ew_dims(B, "second input", where));
  int64_t sa[TFE_MAX_RANK] = {0}, sb[TFE_MAX_RANK] = {0};
  switch (d->op) {
  case TFE_EW_COPY:
    for (int i = 0; i < D->lay.rank || i < A->lay.rank; i++)
      if (A->lay.rank != D->lay.rank || A->lay.dims[i] != D->lay.dims[i])
        return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "copy: the source's shape differs from the destination's");
    for (int i = 0; i < D->lay.rank; i++) sa[i] = A->lay.strides[i];
    break;
  case TFE_EW_FILL: case TFE_EW_SCALE: break;
  case TFE_EW_MAP:
    if ((unsigned)d->code >= (unsigned)TFE_UN_COUNT_)
      return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown unary op %d", d->code);
    TFE_TRY(tfe__gpu_bcast(A, D, sa, "source", where));
    break;
  case TFE_EW_AXPBY: TFE_TRY(tfe__gpu_bcast(A, D, sa, "source", where)); break;
  case TFE_EW_ZIP: {
    TFE_TRY(tfe__gpu_binop_ok(d->code, g, where));
    TFE_TRY(tfe__gpu_bcast(A, D, sa, "first input", where));
    TFE_TRY(tfe__gpu_bcast(B, D, sb, "second input", where));
    break;
  }
  case TFE_EW_REDUCE: break;
  default: return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown elementwise operation %d", (int)d->op);
  }
  if (d->op != TFE_EW_REDUCE) {
    for (int i = 0; i < D->lay.rank; i++) {
      if (D->lay.dims[i] == 0) { *skip = true; return TFE_OK; }
      TFE_TRY(tfe__gpu_ep_out(p, D->lay.dims[i], D->lay.strides[i], sa[i], sb[i], where));
    }
    return TFE_OK;
  }
  /* REDUCE: dst holds the kept dims in order, or keepdims (reduce_tpl.h) */
  tfe_redop op = (tfe_redop)d->code;
  if ((unsigned)op >= (unsigned)TFE_RED_COUNT_) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown reduction %d", d->code);
  if (!tfe__gpu_red_kind(g, op, &p->fold, &p->pre))
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "reduction '%s' is not defined for this kind", tfe_redop_name(op));
  p->fin = (int)op;
  int r = A->lay.rank, naxes = d->naxes;
  bool red[TFE_MAX_RANK] = {false};
  if (naxes < 0) {
    for (int i = 0; i < r; i++) red[i] = true;
    naxes = r;
  } else {
    if (naxes > r) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "%d axes given for a rank-%d source", naxes, r);
    if (naxes > 0 && !d->axes) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "argument 'axes' is NULL");
    for (int k = 0; k < naxes; k++) {
      if (d->axes[k] < 0 || d->axes[k] >= r)
        return TFE__GPU_FAIL_AT(TFE_ERR_BOUNDS, where, "axis %d outside [0, %d)", d->axes[k], r);
      if (red[d->axes[k]]) return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "axis %d given twice", d->axes[k]);
      red[d->axes[k]] = true;
    }
  }
  bool keep = D->lay.rank == r;
  if (!keep && D->lay.rank != r - naxes)
    return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "output rank %d is neither %d (kept dims) nor %d (keepdims)",
                            D->lay.rank, r - naxes, r);
  int64_t count = 1, nout = 1;
  for (int i = 0, k = 0; i < r; i++) {
    if (red[i]) {
      count *= A->lay.dims[i];
      if (keep && D->lay.dims[i] != 1)
        return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "output dim %d is %lld, expected 1", i, (long long)D->lay.dims[i]);
      if (A->lay.dims[i] != 1) {
        if (p->nsum == TFE__GPU_KMAXR)
          return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d reduced dims", TFE__GPU_KMAXR);
        p->dsum[p->nsum] = A->lay.dims[i], p->ssum[p->nsum] = A->lay.strides[i], p->nsum++;
      }
      if (keep) k++;
      continue;
    }
    int kk = keep ? i : k++;
    if (D->lay.dims[kk] != A->lay.dims[i])
      return TFE__GPU_FAIL_AT(TFE_ERR_SHAPE, where, "output dim %d is %lld, expected %lld", kk,
                              (long long)D->lay.dims[kk], (long long)A->lay.dims[i]);
    nout *= A->lay.dims[i];
    TFE_TRY(tfe__gpu_ep_out(p, A->lay.dims[i], D->lay.strides[kk], A->lay.strides[i], 0, where));
  }
  if (nout == 0) { *skip = true; return TFE_OK; }
  if (count == 0 && (op == TFE_RED_MAX || op == TFE_RED_MIN))
    return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "%s over zero elements has no value", tfe_redop_name(op));
  p->count = (double)count;
  p->nsum_total = count;
  return TFE_OK;
}

/* tfe_ew_red: one block per output element, or, when there are few outputs and many summed
 * elements, one block per (output, chunk) writing raw folds into the workspace, then a second
 * launch that folds each output's chunks and applies the final step, alpha and beta. */
static tfe_status tfe__gpu_ew_red_launch(tfe__gpu_dev *D, int g, tfe__cu_ptr c, tfe__cu_ptr a, tfe__cu_ptr b,
                                         tfe__gpu_eparams *p, const char *where) {
  long long nb = p->total * p->nchunk, blocks = nb < 65535 ? nb : 65535;
  void *args[] = {&c, &a, &b, p};
  tfe__cu_result r = tfe__gpu.cu.cuLaunchKernel(D->f_ewred[g], (unsigned)blocks, 1, 1, 256, 1, 1, 0, D->stream, args, NULL);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "cuLaunchKernel(tfe_ew_red): %s", tfe__cu_errstr(r));
  return TFE_OK;
}
static tfe_status tfe__gpu_reduce_blocks(tfe__gpu_dev *D, int g, size_t es, tfe__cu_ptr c, tfe__cu_ptr a,
                                         tfe__gpu_eparams *p, long long nchunk, const char *where) {
  if (nchunk <= 1) return tfe__gpu_ew_red_launch(D, g, c, a, c, p, where);
  tfe__cu_ptr w = 0;
  TFE_TRY(tfe__gpu_ws(D, (size_t)(p->total * nchunk) * es, &w, where));
  tfe__gpu_eparams q = *p; /* pass 1: raw folds of the chunks (64-bit offsets: pass 2's strides are new) */
  q.nchunk = nchunk, q.chunk = (p->nsum_total + nchunk - 1) / nchunk, q.partial = 1, q.i32 = 0;
  TFE_TRY(tfe__gpu_ew_red_launch(D, g, c, a, w, &q, where));
  q = *p; /* pass 2: output o folds w[o * nchunk .. + nchunk) */
  tfe__gpu_red_pass2(q.nout, q.dout, q.sa, nchunk);
  q.nsum = 1, q.dsum[0] = nchunk, q.ssum[0] = 1, q.nsum_total = nchunk, q.chunk = nchunk, q.nchunk = 1;
  q.pre = TFE__KP_NONE, q.cja = 0, q.partial = 0, q.i32 = 0;
  return tfe__gpu_ew_red_launch(D, g, c, w, w, &q, where);
}

/* ---- tropical kinds (max-plus, min-plus, max-times of f32 and f64): the semiring ops ----------
 * The CPU's definitions (kernel/map_zip_tpl.h, reduce_tpl.h): copy, fill, scale (s0 (x) dst),
 * axpby (s0 (x) a (+) s1 (x) dst; s1 the semiring's zero: dst not read), map of conj (a copy),
 * zip of add, mul (the semiring's), max and min, reduce of sum and prod (the semiring's), max
 * and min, then s0 (x) r (+) s1 (x) dst; the other ops are refused with the CPU's messages. The
 * shape checks are the real kinds' (tfe__gpu_ew_params); one launch of tfe_tew_<s> or
 * tfe_tew_red_<s> (tropical.h). */
static tfe_status tfe__gpu_trop_ew(const tfe_prims_backend *be, const tfe_ew_desc *d, int s, int g, const char *where) {
  int code = 0;
  switch (d->op) {
  case TFE_EW_MAP:
    if ((unsigned)d->code >= (unsigned)TFE_UN_COUNT_)
      return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown unary op %d", d->code);
    if (d->code != TFE_UN_CONJ)
      return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "unary op '%s' is not defined for this kind",
                              tfe_unop_name((tfe_unop)d->code));
    break;
  case TFE_EW_ZIP:
    if ((unsigned)d->code >= (unsigned)TFE_BIN_COUNT_)
      return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown binary op %d", d->code);
    if (d->code == TFE_BIN_ADD) code = TFE__TF_ADD;
    else if (d->code == TFE_BIN_MUL) code = TFE__TF_MUL;
    else if (d->code == TFE_BIN_MAX) code = TFE__TF_MAX;
    else if (d->code == TFE_BIN_MIN) code = TFE__TF_MIN;
    else
      return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "binary op '%s' is not defined for this kind",
                              tfe_binop_name((tfe_binop)d->code));
    break;
  case TFE_EW_REDUCE:
    if ((unsigned)d->code >= (unsigned)TFE_RED_COUNT_)
      return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "unknown reduction %d", d->code);
    if (d->code == TFE_RED_SUM) code = TFE__TF_ADD;
    else if (d->code == TFE_RED_PROD) code = TFE__TF_MUL;
    else if (d->code == TFE_RED_MAX) code = TFE__TF_MAX;
    else if (d->code == TFE_RED_MIN) code = TFE__TF_MIN;
    else
      return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "reduction '%s' is not defined for this kind",
                              tfe_redop_name((tfe_redop)d->code));
    break;
  default: break;
  }
  tfe__gpu_eparams e;
  bool skip = false;
  TFE_TRY(tfe__gpu_ew_params(d, g, &e, &skip, where));
  if (skip) return TFE_OK;
  static const int ops[TFE_EW_COUNT] = {[TFE_EW_COPY] = TFE__TOP_COPY,   [TFE_EW_FILL] = TFE__TOP_FILL,
                                        [TFE_EW_SCALE] = TFE__TOP_SCALE, [TFE_EW_AXPBY] = TFE__TOP_AXPBY,
                                        [TFE_EW_MAP] = TFE__TOP_COPY,    [TFE_EW_ZIP] = TFE__TOP_ZIP,
                                        [TFE_EW_REDUCE] = TFE__TOP_REDUCE};
  tfe__gpu_tparams p;
  memset(&p, 0, sizeof p);
  p.op = ops[d->op], p.code = code;
  for (int i = 0; i < e.nout; i++) TFE_TRY(tfe__gpu_tp_out(&p, e.dout[i], e.sd[i], e.sa[i], e.sb[i], where));
  for (int i = 0; i < e.nsum; i++) TFE_TRY(tfe__gpu_tp_sum(&p, e.dsum[i], e.ssum[i], 0, where));
  if (d->op == TFE_EW_FILL && !d->s0) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "fill needs its value");
  p.s0 = d->s0 ? tfe__gpu_scalar_raw(g, d->s0).re : tfe__gpu_trop_one(s);
  p.s1 = d->s1 ? tfe__gpu_scalar_raw(g, d->s1).re : tfe__gpu_trop_zero(s);
  p.s1_zero = p.s1 == tfe__gpu_trop_zero(s);
  size_t es = tfe_dtype_get(d->dst->dtype)->size;
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  TFE_TRY(tfe__gpu_enter(D, where));
  bool need_a = d->op != TFE_EW_FILL && d->op != TFE_EW_SCALE;
  tfe__cu_ptr c = tfe__gpu_addr(d->dst, es), a = need_a ? tfe__gpu_addr(d->a, es) : c,
              b = d->op == TFE_EW_ZIP ? tfe__gpu_addr(d->b, es) : c;
  tfe_status st = tfe__gpu_tew(D, g, s, c, a, b, &p, where);
  tfe__gpu_leave(D);
  return st;
}

/* ---- ZIPN: a fold over up to TFE_EW_MAXIN inputs in one pass (kernels.h's tfe_ewn) -------- */
/* The parameter block of tfe_ewn: struct EN in kernels.h. */
typedef struct tfe__gpu_enparams {
  long long total;
  int nout, nin, code, fast, flip, cj, cjd, i32; /* i32: every operand's offsets fit an int */
  long long dout[TFE__GPU_KMAXR], sd[TFE__GPU_KMAXR];
  unsigned mg[TFE__GPU_KMAXR], sh[TFE__GPU_KMAXR];
  long long s[TFE_EW_MAXIN][TFE__GPU_KMAXR];
  unsigned long long in[TFE_EW_MAXIN];
} tfe__gpu_enparams;
/* dst's dims of size > 1, sorted by |dst stride| (stable), merged where every stride continues
 * (tfe__gpu_dims_sort / _merge for nin + 1 operands); then the count and the magic numbers. */
static void tfe__gpu_en_finish(tfe__gpu_enparams *p) {
  for (int i = 1; i < p->nout; i++)
    for (int j = i; j > 0 && llabs(p->sd[j]) < llabs(p->sd[j - 1]); j--) {
      long long t;
      t = p->dout[j], p->dout[j] = p->dout[j - 1], p->dout[j - 1] = t;
      t = p->sd[j], p->sd[j] = p->sd[j - 1], p->sd[j - 1] = t;
      for (int k = 0; k < p->nin; k++) t = p->s[k][j], p->s[k][j] = p->s[k][j - 1], p->s[k][j - 1] = t;
    }
  int w = 0;
  for (int i = 0; i < p->nout; i++) {
    bool cont = w > 0 && p->sd[i] == p->sd[w - 1] * p->dout[w - 1];
    for (int k = 0; cont && k < p->nin; k++) cont = p->s[k][i] == p->s[k][w - 1] * p->dout[w - 1];
    if (cont) { p->dout[w - 1] *= p->dout[i]; continue; }
    p->dout[w] = p->dout[i], p->sd[w] = p->sd[i];
    for (int k = 0; k < p->nin; k++) p->s[k][w] = p->s[k][i];
    w++;
  }
  p->nout = w, p->total = 1;
  for (int i = 0; i < w; i++) p->total *= p->dout[i];
  tfe__gpu_fast_place(p->total, p->nout, p->dout, &p->fast, p->mg, p->sh);
  p->i32 = p->fast;
  for (int k = -1; k < p->nin && p->i32; k++) { /* the largest |offset| of dst (k = -1) and each input */
    long long ext = 0;
    for (int i = 0; i < w; i++) ext += (p->dout[i] - 1) * llabs(k < 0 ? p->sd[i] : p->s[k][i]);
    p->i32 = ext <= 0x7fffffffLL;
  }
}
/* The checks are the CPU's (kernel/map_zip_tpl.h, k_zipn_cpu_) but for overlaps; *skip for an
 * empty dst. */
static tfe_status tfe__gpu_en_params(const tfe_ew_desc *d, int g, tfe__gpu_enparams *p, bool *skip, const char *where) {
  const tfe_dyn *D = d->dst;
  memset(p, 0, sizeof *p);
  *skip = false;
  if (d->nin < 2 || d->nin > TFE_EW_MAXIN)
    return TFE__GPU_FAIL_AT(TFE_ERR_INVALID, where, "zipn takes 2 to %d inputs, not %d", TFE_EW_MAXIN, d->nin);
  if (!d->in) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "argument 'in' is NULL");
  TFE_TRY(tfe__gpu_binop_ok(d->code, g, where));
  TFE_TRY(tfe__gpu_ew_dims(D, "destination", where));
  int64_t st[TFE_EW_MAXIN][TFE_MAX_RANK];
  for (int k = 0; k < d->nin; k++) {
    const tfe_dyn *x = d->in[k];
    if (!x) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "zipn input %d is NULL", k);
    if (x->dtype != D->dtype)
      return TFE__GPU_FAIL_AT(TFE_ERR_DTYPE, where, "zipn input %d differs in kind from dst (%s)", k, tfe_dtype_name(D->dtype));
    TFE_TRY(tfe__gpu_ew_dims(x, "a zipn input", where));
    TFE_TRY(tfe__gpu_bcast(x, D, st[k], "a zipn input", where));
    if (x->conj && g >= TFE__GK_C64) p->cj |= 1 << k;
  }
  p->nin = d->nin, p->code = d->code, p->flip = (int)(d->flip & 0xffu), p->cjd = D->conj && g >= TFE__GK_C64;
  for (int i = 0; i < D->lay.rank; i++) {
    if (D->lay.dims[i] == 0) { *skip = true; return TFE_OK; }
    if (D->lay.dims[i] == 1) continue;
    if (p->nout == TFE__GPU_KMAXR)
      return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d dims of size > 1", TFE__GPU_KMAXR);
    p->dout[p->nout] = D->lay.dims[i], p->sd[p->nout] = D->lay.strides[i];
    for (int k = 0; k < d->nin; k++) p->s[k][p->nout] = st[k][i];
    p->nout++;
  }
  tfe__gpu_en_finish(p);
  return TFE_OK;
}
static tfe_status tfe__gpu_ew_zipn(const tfe_prims_backend *be, const tfe_ew_desc *d, const char *where) {
  tfe_dtype dt = d->dst->dtype;
  int g = tfe__gpu_kind(dt);
  if (g < 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "backend '%s' runs zipn on f32, f64, c64 and c128, not %s",
                            be->name, tfe_dtype_name(dt));
  tfe__gpu_enparams p;
  bool skip = false;
  TFE_TRY(tfe__gpu_en_params(d, g, &p, &skip, where));
  if (skip) return TFE_OK;
  size_t es = tfe_dtype_get(dt)->size;
  for (int k = 0; k < p.nin; k++) p.in[k] = (unsigned long long)tfe__gpu_addr(d->in[k], es);
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe_status st = tfe__gpu_kernels(D, g, where);
  if (st == TFE_OK) {
    tfe__cu_ptr c = tfe__gpu_addr(d->dst, es);
    void *args[] = {&c, &p};
    st = tfe__gpu_launch(D, D->f_ewn[g], args, p.total, where);
  }
  tfe__gpu_leave(D);
  return st;
}

/* The slot. */
static tfe_status tfe__gpu_elementwise(const tfe_prims_backend *be, const tfe_ew_desc *d) {
  const char *where = "tfe_elementwise";
  if (!d || !d->dst) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "%s is NULL", !d ? "the descriptor" : "dst");
  if (d->op == TFE_EW_ZIPN) return tfe__gpu_ew_zipn(be, d, where);
  bool need_a = d->op != TFE_EW_FILL && d->op != TFE_EW_SCALE;
  if ((need_a && !d->a) || (d->op == TFE_EW_ZIP && !d->b))
    return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "%s needs operand %s", tfe_ew_op_name(d->op), !d->a ? "a" : "b");
  tfe_dtype dt = d->dst->dtype;
  if ((need_a && d->a->dtype != dt) || (d->op == TFE_EW_ZIP && d->b->dtype != dt))
    return TFE__GPU_FAIL_AT(TFE_ERR_DTYPE, where, "operands differ in kind from dst (%s)", tfe_dtype_name(dt));
  int g = tfe__gpu_kind(dt), trop = tfe__gpu_trop(dt, &g);
  if (trop) return tfe__gpu_trop_ew(be, d, trop, g, where);
  if (g < 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "backend '%s' runs elementwise operations on f32, f64, c64 and c128, not %s",
                            be->name, tfe_dtype_name(dt));
  size_t es = tfe_dtype_get(dt)->size;
  tfe__gpu_eparams p;
  bool skip = false;
  TFE_TRY(tfe__gpu_ew_params(d, g, &p, &skip, where));
  if (skip) return TFE_OK;
  /* scalars: s0 defaults to one (map's parameter, fill's value needs one), s1 to zero */
  tfe__gscal s0 = {1, 0}, s1 = {0, 0};
  if (d->op == TFE_EW_FILL && !d->s0) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "fill needs its value");
  if (d->s0) s0 = tfe__gpu_scalar_raw(g, d->s0);
  if (d->s1) s1 = tfe__gpu_scalar_raw(g, d->s1);
  p.s0_re = s0.re, p.s0_im = s0.im, p.s1_re = s1.re, p.s1_im = s1.im;
  p.s1_zero = tfe__gpu_iszero(s1);
  tfe__gpu_ep_finish(&p);
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe_status st = tfe__gpu_kernels(D, g, where);
  if (st == TFE_OK) {
    tfe__cu_ptr c = tfe__gpu_addr(d->dst, es), a = need_a ? tfe__gpu_addr(d->a, es) : c,
                b = d->op == TFE_EW_ZIP ? tfe__gpu_addr(d->b, es) : c;
    long long nchunk = d->op == TFE_EW_REDUCE ? tfe__gpu_red_chunks(p.total, p.nsum_total) : 0;
    if (nchunk > 0) st = tfe__gpu_reduce_blocks(D, g, es, c, a, &p, nchunk, where);
    else {
      void *args[] = {&c, &a, &b, &p};
      st = tfe__gpu_launch(D, D->f_ew[g], args, p.total, where);
    }
  }
  tfe__gpu_leave(D);
  return st;
}

/* A binary contraction whose sum has at most TFE__GPU_CTR_MAXT elements (gemm.h decides when):
 * one pass of tfe_ew over C, each element alpha * the sum of A * B over the labels C lacks, plus
 * beta * C, written in place. P: the contraction's label table (strides of A, B, C); alpha,
 * beta, ca, cb as the GEMM would take them (C's own conjugation already folded in). */
static tfe_status tfe__gpu_ctr(tfe__gpu_dev *D, const tfe_prim_desc *d, int g, size_t es, const tfe__gplan *P,
                               tfe__gscal alpha, tfe__gscal beta, bool ca, bool cb, const char *where) {
  tfe__gpu_eparams p;
  memset(&p, 0, sizeof p);
  p.op = TFE__GPU_EW_CTR, p.cja = ca, p.cjb = cb;
  for (int j = 0; j < P->T.n; j++) {
    const tfe__glabel *L = &P->T.l[j];
    int64_t sa = L->in[TFE__GA] ? L->s[TFE__GA] : 0, sb = L->in[TFE__GB] ? L->s[TFE__GB] : 0;
    if (L->in[TFE__GC]) TFE_TRY(tfe__gpu_ep_out(&p, L->dim, L->s[TFE__GC], sa, sb, where));
    else if (L->dim > 1) {
      if (p.nsum == TFE__GPU_KMAXR)
        return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "more than %d summed dims", TFE__GPU_KMAXR);
      p.dsum[p.nsum] = L->dim, p.ssum[p.nsum] = sa, p.ssb[p.nsum] = sb, p.nsum++;
    }
  }
  p.nsum_total = 1;
  for (int i = 0; i < p.nsum; i++) p.nsum_total *= p.dsum[i];
  tfe__gpu_ep_finish(&p);
  p.s0_re = alpha.re, p.s0_im = alpha.im, p.s1_re = beta.re, p.s1_im = beta.im, p.s1_zero = tfe__gpu_iszero(beta);
  TFE_TRY(tfe__gpu_kernels(D, g, where));
  tfe__cu_ptr c = tfe__gpu_addr(d->c, es), a = tfe__gpu_addr(d->a, es), b = tfe__gpu_addr(d->b, es);
  void *args[] = {&c, &a, &b, &p};
  return tfe__gpu_launch(D, D->f_ew[g], args, p.total, where);
}

#endif /* TFE__GPU_COMPANION */
#endif
