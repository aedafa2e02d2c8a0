/* tenferro/kernel/reduce_tpl.h — reductions of one kind: reduce over any set of axes and
 * reduce_all, on the loop planner (kernel/plan.h) with the final combine through the
 * elementwise engine. Re-included per kind through kernel_tpl.h, after elementwise_tpl.h
 * and copy_tpl.h (k_ew_, k_conj_); no include guard. */
#if !TFE__BODY_PHASE
/* ==== reductions ==========================================================================
 * Accumulation runs into a dense scratch accumulator (kept dims only) that starts at the
 * fold's identity; the result is combined into out at the end as out = alpha*r + beta*out,
 * so out may even alias the source. A partial reduction splits only kept dims between
 * threads (each accumulator element is owned by one thread); a full reduction gives each
 * thread a padded partial and combines them in thread order. */

/* Reduce src over `axes` (naxes of them; naxes < 0: all axes) into out:
 *   out = alpha * reduce(src) + beta * out      (semiring operations; beta = zero: out is
 *                                                not read)
 * out has the kept dims in order, or src's rank with 1 on the reduced axes (keepdims).
 * SUM and PROD are the semiring's (max and + for max-plus); MAX/MIN for real and tropical
 * kinds; MEAN, NORM1, NORM2, NORMINF for float kinds; SUMSQ for the standard algebra. For
 * complex kinds the norms and sum of squares are real values stored with zero imaginary
 * part. MAX and MIN over zero elements are refused. */
TFE_API tfe_status TFE_FN(reduce)(const TFE_TY(view) *out, const TFE_TY(view) *src, tfe_redop op,
                                  int naxes, const int *axes, TFE_T alpha, TFE_T beta);

/* The reduction of every element of src into *result (see tfe_reduce_S). */
TFE_API tfe_status TFE_FN(reduce_all)(const TFE_TY(view) *src, tfe_redop op, TFE_T *result);
#else /* bodies */
/* Elements of the per-tile buffer of a strided or conjugated source (8 KiB, at least 64). */
#define TFE__KBUF (8192 / sizeof(TFE_T) < 64 ? 64 : 8192 / sizeof(TFE_T))

typedef struct TFE_TY(kred_) {
  int fold, pre;
  TFE_T *acc;            /* accumulator (partial reductions) */
  const TFE_T *src;
  bool cj;
  char *partials;        /* full reductions: one padded slot per thread */
  size_t slot;
} TFE_TY(kred_);

typedef struct TFE_TY(kfin_) { tfe_redop op; int64_t count; TFE_T alpha, beta; bool beta_zero; } TFE_TY(kfin_);

TFE_INTERNAL bool TFE_FN(k_red_ok_)(tfe_redop op) {
  if (op == TFE_RED_SUM || op == TFE_RED_PROD) return true;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (op == TFE_RED_MAX || op == TFE_RED_MIN) return !TFE_CPLX;
  return (unsigned)op < (unsigned)TFE_RED_COUNT_;
#elif TFE_ALG == TFE_ALG_STANDARD
  return op == TFE_RED_MAX || op == TFE_RED_MIN || op == TFE_RED_SUMSQ;
#elif TFE_ALG == TFE_ALG_CUSTOM
  return false;
#else
  return op == TFE_RED_MAX || op == TFE_RED_MIN;
#endif
}

TFE_INTERNAL TFE_T TFE_FN(k_red_identity_)(int fold) {
  switch (fold) {
  case TFE__KF_MUL: return TFE_FN(sr_one)();
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  case TFE__KF_MAX: return (TFE_T)-INFINITY;
  case TFE__KF_MIN: return (TFE_T)INFINITY;
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE__KF_MAX: return (TFE_T)(-(TFE_T)(((uint64_t)1 << (8 * sizeof(TFE_T) - 1)) - 1) - 1);
  case TFE__KF_MIN: return (TFE_T)(((uint64_t)1 << (8 * sizeof(TFE_T) - 1)) - 1);
#elif TFE_ALG != TFE_ALG_CUSTOM
  case TFE__KF_MAX: { TFE_T z = {(TFE_R)-INFINITY}; return z; }
  case TFE__KF_MIN: { TFE_T z = {(TFE_R)INFINITY}; return z; }
#endif
  default: return TFE_FN(sr_zero)();
  }
}

/* The transform applied before folding (|x| or |x|^2, kept in the kind). */
TFE_INTERNAL TFE_T TFE_FN(k_red_pre_)(int pre, TFE_T x) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (pre == TFE__KP_ABS) return (TFE_T)TFE__MABS(x);
#if TFE_CPLX
  if (pre == TFE__KP_ABS2) return (TFE_T)(TFE__CREAL(x) * TFE__CREAL(x) + TFE__CIMAG(x) * TFE__CIMAG(x));
#else
  if (pre == TFE__KP_ABS2) return x * x;
#endif
#elif TFE_ALG == TFE_ALG_STANDARD
  if (pre == TFE__KP_ABS2) return TFE__WMUL(x, x);
#endif
  (void)pre;
  return x;
}

/* Combine two accumulated values. */
TFE_INTERNAL TFE_T TFE_FN(k_red_comb_)(int fold, TFE_T a, TFE_T b) {
  switch (fold) {
  case TFE__KF_MUL: return TFE_FN(sr_mul)(a, b);
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && TFE_CPLX /* only norminf: real values */
  case TFE__KF_MAX: return TFE__CREAL(a) >= TFE__CREAL(b) ? a : b;
  case TFE__KF_MIN: return TFE__CREAL(a) <= TFE__CREAL(b) ? a : b;
#elif TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT /* NaN propagates */
  case TFE__KF_MAX: return a > b || a != a ? a : b;
  case TFE__KF_MIN: return a < b || a != a ? a : b;
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE__KF_MAX: return a > b ? a : b;
  case TFE__KF_MIN: return a < b ? a : b;
#elif TFE_ALG != TFE_ALG_CUSTOM
  case TFE__KF_MAX: return a.v > b.v || a.v != a.v ? a : b;
  case TFE__KF_MIN: return a.v < b.v || a.v != a.v ? a : b;
#endif
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
  case TFE__KF_ADD: return TFE__WADD(a, b);
#endif
  default: return TFE_FN(sr_add)(a, b);
  }
}

/* Fold a contiguous run into acc. Sums of the standard algebra use four partial sums so the
 * adds pipeline (and vectorize); other folds go left to right. */
TFE_INTERNAL TFE_T TFE_FN(k_red_fold_)(int fold, int pre, TFE_T acc, const TFE_T *x, int64_t n) {
  int64_t i = 0;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (fold == TFE__KF_ADD && n >= 8) {
    TFE_T s[4] = {0, 0, 0, 0};
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; k++) s[k] += TFE_FN(k_red_pre_)(pre, x[i + k]);
    acc += (s[0] + s[1]) + (s[2] + s[3]);
  }
#endif
  for (; i < n; i++) acc = TFE_FN(k_red_comb_)(fold, acc, TFE_FN(k_red_pre_)(pre, x[i]));
  return acc;
}

TFE_INTERNAL void TFE_FN(k_red_tile_)(void *ctx, const tfe__kplan *p, const tfe__ktile *t) {
  const TFE_TY(kred_) *r = (const TFE_TY(kred_) *)ctx;
  TFE_T buf[TFE__KBUF];
  TFE_T *part = r->partials ? (TFE_T *)(r->partials + (size_t)t->tid * r->slot) : NULL;
  for (int64_t j = 0; j < t->n1; j++) {
    const TFE_T *s = r->src + t->off[1] + TFE__KOFF(p, 1, 1, j);
    const TFE_T *x = s;
    if (r->cj || !p->g[0].arith[1] || p->g[0].step[1] != 1) {
      for (int64_t i = 0; i < t->n0; i++) {
        TFE_T v = s[TFE__KOFF(p, 0, 1, i)];
        buf[i] = r->cj ? TFE_FN(sr_conj)(v) : v;
      }
      x = buf;
    }
    if (part) { *part = TFE_FN(k_red_fold_)(r->fold, r->pre, *part, x, t->n0); continue; }
    TFE_T *a = r->acc + t->off[0] + TFE__KOFF(p, 1, 0, j);
    if (p->g[0].arith[0] && p->g[0].step[0] == 0) { *a = TFE_FN(k_red_fold_)(r->fold, r->pre, *a, x, t->n0); continue; }
    for (int64_t i = 0; i < t->n0; i++) {
      TFE_T *ai = a + TFE__KOFF(p, 0, 0, i);
      *ai = TFE_FN(k_red_comb_)(r->fold, *ai, TFE_FN(k_red_pre_)(r->pre, x[i]));
    }
  }
}

/* Accumulate src (dims `dims`, strides `sstr`) into acc (strides `astr`: 0 on reduced dims)
 * or, with partials, into per-thread slots. */
TFE_INTERNAL tfe_status TFE_FN(k_red_run_)(TFE_TY(kred_) *r, int rank, const int64_t *dims,
                                           const int64_t *astr, const tfe_layout *sl, int nt) {
  tfe__kplan *p = (tfe__kplan *)tfe__alloc(sizeof *p); /* (some 50 KB: not on the stack) */
  if (!p) return TFE_ERR_ALLOC;
  const int64_t *str[2] = {astr, sl->strides};
  int64_t off[2] = {0, sl->offset};
  int64_t kb = (int64_t)TFE__KBUF, tt = kb / 8 < 4 ? 4 : kb / 8;
  tfe__kplan_make(p, 2, 1, rank, dims, str, off, kb, 2 * tt, tt, 0, r->partials == NULL, (int64_t)sizeof(TFE_T), false);
  tfe__kplan_run(p, TFE_FN(k_red_tile_), r, nt);
  tfe__free(p);
  return TFE_OK;
}

/* Parse op into fold + transform; count of reduced elements for mean. */
TFE_INTERNAL void TFE_FN(k_red_kind_)(tfe_redop op, int *fold, int *pre) {
  *pre = TFE__KP_NONE;
  switch (op) {
  case TFE_RED_PROD: *fold = TFE__KF_MUL; break;
  case TFE_RED_MAX: *fold = TFE__KF_MAX; break;
  case TFE_RED_MIN: *fold = TFE__KF_MIN; break;
  case TFE_RED_SUMSQ: case TFE_RED_NORM2: *fold = TFE__KF_ADD; *pre = TFE__KP_ABS2; break;
  case TFE_RED_NORM1: *fold = TFE__KF_ADD; *pre = TFE__KP_ABS; break;
  case TFE_RED_NORMINF: *fold = TFE__KF_MAX; *pre = TFE__KP_ABS; break;
  default: *fold = TFE__KF_ADD; break;
  }
}

/* The final value from an accumulated one (mean divides, norm2 takes the root). */
TFE_INTERNAL TFE_T TFE_FN(k_red_final_)(tfe_redop op, TFE_T a, int64_t count) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  if (op == TFE_RED_MEAN) return a / (TFE_R)count;
#if TFE_CPLX
  if (op == TFE_RED_NORM2) return (TFE_T)TFE__M(sqrt, TFE__CREAL(a));
#else
  if (op == TFE_RED_NORM2) return TFE__M(sqrt, a);
#endif
  if (op == TFE_RED_NORMINF && count == 0) return (TFE_T)0;
#endif
  (void)op; (void)count;
  return a;
}
TFE_INTERNAL void TFE_FN(k_fin_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *acc, const TFE_T *old) {
  const TFE_TY(kfin_) *f = (const TFE_TY(kfin_) *)ctx;
  for (int64_t i = 0; i < n; i++) {
    TFE_T r = TFE_FN(sr_mul)(f->alpha, TFE_FN(k_red_final_)(f->op, acc[i], f->count));
    out[i] = f->beta_zero ? r : TFE_FN(sr_add)(r, TFE_FN(sr_mul)(f->beta, old[i]));
  }
}

/* Full reduction of a validated source into *result (threads get padded partials). */
TFE_INTERNAL tfe_status TFE_FN(k_red_all_)(const TFE_TY(view) *src, int fold, int pre, int64_t n, TFE_T *result) {
  TFE_TY(kred_) r = {fold, pre, NULL, src->data, TFE_FN(k_conj_)(false, src->conj), NULL, 0};
  TFE_T id = TFE_FN(k_red_identity_)(fold);
  if (n == 0) { *result = id; return TFE_OK; }
  int nt = tfe__kthreads(n);
  r.slot = (sizeof(TFE_T) + 63) / 64 * 64; /* one cache line (or more) per thread */
  r.partials = (char *)tfe__alloc(r.slot * (size_t)nt);
  if (!r.partials) return TFE_ERR_ALLOC;
  for (int k = 0; k < nt; k++) *(TFE_T *)(r.partials + (size_t)k * r.slot) = id;
  int64_t zero[TFE_MAX_RANK] = {0};
  tfe_status st = TFE_FN(k_red_run_)(&r, src->lay.rank, src->lay.dims, zero, &src->lay, nt);
  if (st != TFE_OK) { tfe__free(r.partials); return st; }
  TFE_T a = id;
  for (int k = 0; k < nt; k++) a = TFE_FN(k_red_comb_)(fold, a, *(TFE_T *)(r.partials + (size_t)k * r.slot));
  tfe__free(r.partials);
  *result = a;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(k_reduce_cpu_)(const TFE_TY(view) *out, const TFE_TY(view) *src, tfe_redop op,
                                             int naxes, const int *axes, TFE_T alpha, TFE_T beta) {
  TFE_CHECK_NULL(out);
  TFE_CHECK_NULL(src);
  if ((unsigned)op >= (unsigned)TFE_RED_COUNT_) return TFE_FAIL(TFE_ERR_INVALID, "unknown reduction %d", (int)op);
  if (!TFE_FN(k_red_ok_)(op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "reduction '%s' is not defined for this kind", tfe_redop_name(op));
  int64_t n = 0, nout = 0;
  TFE_TRY(tfe__check_layout(&src->lay, src->data, __func__, "source", &n));
  int r = src->lay.rank;
  bool red[TFE_MAX_RANK] = {false};
  if (naxes < 0) { for (int i = 0; i < r; i++) red[i] = true; naxes = r; }
  else {
    if (naxes > r) return TFE_FAIL(TFE_ERR_INVALID, "%d axes given for a rank-%d source", naxes, r);
    if (naxes > 0 && !axes) return TFE_FAIL(TFE_ERR_NULL, "argument 'axes' is NULL");
    for (int k = 0; k < naxes; k++) {
      if (axes[k] < 0 || axes[k] >= r) return TFE_FAIL(TFE_ERR_BOUNDS, "axis %d outside [0, %d)", axes[k], r);
      if (red[axes[k]]) return TFE_FAIL(TFE_ERR_INVALID, "axis %d given twice", axes[k]);
      red[axes[k]] = true;
    }
  }
  /* out's dims: kept dims, or keepdims */
  tfe_layout ol; /* out's layout over src's rank (stride 0 on reduced axes) */
  ol.rank = r; ol.offset = out->lay.offset;
  if (out->lay.rank == r - naxes) {
    for (int i = 0, k = 0; i < r; i++) {
      ol.dims[i] = red[i] ? 1 : src->lay.dims[i];
      ol.strides[i] = red[i] ? 0 : out->lay.strides[k];
      if (!red[i] && out->lay.dims[k++] != src->lay.dims[i])
        return TFE_FAIL(TFE_ERR_SHAPE, "output dim %d is %lld, expected %lld", k - 1,
                        (long long)out->lay.dims[k - 1], (long long)src->lay.dims[i]);
    }
  } else if (out->lay.rank == r) {
    for (int i = 0; i < r; i++) {
      int64_t want = red[i] ? 1 : src->lay.dims[i];
      if (out->lay.dims[i] != want)
        return TFE_FAIL(TFE_ERR_SHAPE, "output dim %d is %lld, expected %lld", i,
                        (long long)out->lay.dims[i], (long long)want);
      ol.dims[i] = want;
      ol.strides[i] = red[i] ? 0 : out->lay.strides[i];
    }
  } else
    return TFE_FAIL(TFE_ERR_SHAPE, "output rank %d is neither %d (kept dims) nor %d (keepdims)",
                    out->lay.rank, r - naxes, r);
  TFE_TRY(tfe__check_dst(&out->lay, out->data, __func__, &nout));
  if (nout == 0) return TFE_OK;
  int64_t count = 1; /* elements folded into each output */
  for (int i = 0; i < r; i++) if (red[i]) count *= src->lay.dims[i];
  if (count == 0 && (op == TFE_RED_MAX || op == TFE_RED_MIN))
    return TFE_FAIL(TFE_ERR_INVALID, "%s over zero elements has no value", tfe_redop_name(op));
  int fold, pre;
  TFE_FN(k_red_kind_)(op, &fold, &pre);
  /* accumulator: dense over the kept dims in src's order */
  TFE_T *acc = (TFE_T *)tfe__alloc((size_t)nout * sizeof(TFE_T));
  if (!acc) return TFE_ERR_ALLOC;
  tfe_layout al; /* acc with out's dims (for the final combine) */
  int64_t astr[TFE_MAX_RANK], s = 1;
  al.rank = out->lay.rank; al.offset = 0;
  for (int i = 0, k = 0; i < r; i++) {
    astr[i] = red[i] ? 0 : s;
    if (!red[i]) s *= src->lay.dims[i];
    if (out->lay.rank == r) { al.dims[i] = ol.dims[i]; al.strides[i] = astr[i]; }
    else if (!red[i]) { al.dims[k] = src->lay.dims[i]; al.strides[k++] = astr[i]; }
  }
  tfe_status st = TFE_OK;
  if (nout == 1) st = TFE_FN(k_red_all_)(src, fold, pre, n, acc);
  else {
    TFE_T id = TFE_FN(k_red_identity_)(fold);
    for (int64_t i = 0; i < nout; i++) acc[i] = id;
    if (n > 0) {
      TFE_TY(kred_) rr = {fold, pre, acc, src->data, TFE_FN(k_conj_)(false, src->conj), NULL, 0};
      st = TFE_FN(k_red_run_)(&rr, r, src->lay.dims, astr, &src->lay, tfe__kthreads(n));
    }
  }
  if (st == TFE_OK) {
    TFE_TY(kfin_) f = {op, count, alpha, beta, TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)())};
    TFE_TY(view) av = {acc, al, false};
    /* out may alias src: it is written only here, after every read of src */
    st = TFE_FN(k_ew_)(__func__, out, f.beta_zero ? 1 : 2, &av, out, TFE_FN(k_fin_body_), &f);
  }
  tfe__free(acc);
  return st;
}
TFE_API tfe_status TFE_FN(reduce_all)(const TFE_TY(view) *src, tfe_redop op, TFE_T *result) {
  TFE_CHECK_NULL(src);
  TFE_CHECK_NULL(result);
  TFE_TY(view) o = {result, {0, 0, {0}, {0}}, false};
  return TFE_FN(reduce)(&o, src, op, -1, NULL, TFE_FN(sr_one)(), TFE_FN(sr_zero)());
}
#undef TFE__KBUF
#endif
