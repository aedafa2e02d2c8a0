/* tenferro/kernel/map_zip_tpl.h — the elementwise operations of one kind over the engine of
 * elementwise_tpl.h: fill, scale, axpby, map (built-in unary ops), map_fn, zip (built-in
 * binary ops with broadcasting), zip_fn. Re-included per kind through kernel_tpl.h, after
 * elementwise_tpl.h; no include guard. Code that needs arithmetic of the standard algebra is
 * under #if; the rest uses the tfe_sr_* semiring functions. */
#if !TFE__BODY_PHASE
/* Every element of dst becomes value (as read through dst->conj). */
TFE_API tfe_status TFE_FN(fill)(const TFE_TY(view) *dst, TFE_T value);

/* y = alpha * y (semiring product). */
TFE_API tfe_status TFE_FN(scale)(const TFE_TY(view) *y, TFE_T alpha);
/* y = a*x + b*y in the semiring (x broadcasts to y's dims). With b the semiring zero y is
 * not read (NaN in y does not leak, as in BLAS). */
TFE_API tfe_status TFE_FN(axpby)(const TFE_TY(view) *y, TFE_T a, const TFE_TY(view) *x, TFE_T b);

/* ==== unary map =========================================================================== */

/* dst = op(src) elementwise (src broadcasts to dst's dims). param is the exponent of
 * TFE_UN_POW and ignored otherwise. abs/real/imag of a complex kind stay complex with a
 * zero imaginary part. Kinds without an op (integers: sqrt exp log sin cos tanh; tropical
 * and user kinds: all but conj) return TFE_ERR_UNSUPPORTED. */
TFE_API tfe_status TFE_FN(map)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe_unop op, TFE_T param);

/* User function over contiguous arrays: out[i] = f(in[i]) for i < n. */
typedef void (*TFE_TY(unary_fn))(int64_t n, TFE_T *out, const TFE_T *in, void *ctx);
/* dst = fn(src): fn is called on contiguous runs (buffers or the tensors themselves), from
 * several threads at once when the tensor is large. */
TFE_API tfe_status TFE_FN(map_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *src,
                                  TFE_TY(unary_fn) fn, void *ctx);

/* ==== binary zip ========================================================================== */
/* dst = a op b with numpy broadcasting of a and b to dst's dims. For tropical and user
 * kinds add and mul are the semiring's; complex kinds have no max/min. */
TFE_API tfe_status TFE_FN(zip)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_binop op);

typedef void (*TFE_TY(binary_fn))(int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b, void *ctx);
/* dst = fn(a, b) over contiguous runs, with broadcasting (see tfe_map_fn). */
TFE_API tfe_status TFE_FN(zip_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b,
                                  TFE_TY(binary_fn) fn, void *ctx);
#else /* bodies */
typedef struct TFE_TY(kab_) { TFE_T a, b; bool b_zero; } TFE_TY(kab_);
typedef struct TFE_TY(kun_) { tfe_unop op; TFE_T param; } TFE_TY(kun_);
typedef struct TFE_TY(kufn_) { TFE_TY(unary_fn) f; void *ctx; } TFE_TY(kufn_);
typedef struct TFE_TY(kzfn_) { TFE_TY(binary_fn) f; void *ctx; } TFE_TY(kzfn_);

/* ==== fill, scale, axpby ================================================================== */
TFE_INTERNAL void TFE_FN(k_fill_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  (void)a; (void)b;
  TFE_T v = *(const TFE_T *)ctx;
  for (int64_t i = 0; i < n; i++) out[i] = v;
}
TFE_INTERNAL tfe_status TFE_FN(k_fill_cpu_)(const TFE_TY(view) *dst, TFE_T value) {
  return TFE_FN(k_ew_)(__func__, dst, 0, NULL, NULL, TFE_FN(k_fill_body_), &value);
}

TFE_INTERNAL void TFE_FN(k_scale_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *x, const TFE_T *b) {
  (void)b;
  TFE_T a = *(const TFE_T *)ctx;
  for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_mul)(a, x[i]);
}
TFE_INTERNAL tfe_status TFE_FN(k_scale_cpu_)(const TFE_TY(view) *y, TFE_T alpha) {
  return TFE_FN(k_ew_)(__func__, y, 1, y, NULL, TFE_FN(k_scale_body_), &alpha);
}

TFE_INTERNAL void TFE_FN(k_axpby_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *x, const TFE_T *y) {
  const TFE_TY(kab_) *c = (const TFE_TY(kab_) *)ctx;
  TFE_T a = c->a, b = c->b;
  if (c->b_zero) { for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_mul)(a, x[i]); return; }
  for (int64_t i = 0; i < n; i++) out[i] = TFE_FN(sr_add)(TFE_FN(sr_mul)(a, x[i]), TFE_FN(sr_mul)(b, y[i]));
}
TFE_INTERNAL tfe_status TFE_FN(k_axpby_cpu_)(const TFE_TY(view) *y, TFE_T a, const TFE_TY(view) *x, TFE_T b) {
  TFE_TY(kab_) c = {a, b, TFE_FN(sr_eq)(b, TFE_FN(sr_zero)())};
  if (c.b_zero) return TFE_FN(k_ew_)(__func__, y, 1, x, NULL, TFE_FN(k_axpby_body_), &c);
  return TFE_FN(k_ew_)(__func__, y, 2, x, y, TFE_FN(k_axpby_body_), &c);
}
#if TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
/* Integer division: by zero gives 0, MIN / -1 wraps to MIN. */
TFE_INTERNAL TFE_T TFE_FN(k_idiv_)(TFE_T a, TFE_T b) {
  if (b == 0) return 0;
  if (b == -1) return TFE__WNEG(a);
  return a / b;
}
TFE_INTERNAL TFE_T TFE_FN(k_ipow_)(TFE_T a, TFE_T e) {
  if (e < 0) return TFE_FN(k_idiv_)(1, e % 2 == 0 ? TFE__WMUL(a, a) : a) ; /* |a| > 1 -> 0 */
  TFE_T r = 1;
  while (e) { if (e & 1) r = TFE__WMUL(r, a); a = TFE__WMUL(a, a); e /= 2; }
  return r;
}
#endif

/* Which built-in unary ops this kind provides. */
TFE_INTERNAL bool TFE_FN(k_un_ok_)(tfe_unop op) {
  if (op == TFE_UN_CONJ) return true;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  return (unsigned)op < (unsigned)TFE_UN_COUNT_;
#elif TFE_ALG == TFE_ALG_STANDARD
  return op == TFE_UN_NEG || op == TFE_UN_ABS || op == TFE_UN_REAL || op == TFE_UN_IMAG ||
         op == TFE_UN_POW || op == TFE_UN_RECIP || op == TFE_UN_SQUARE;
#else
  return false;
#endif
}
#define TFE__KMAP(expr) do { for (int64_t i = 0; i < n; i++) { TFE_T x = a[i]; out[i] = (expr); } } while (0)
TFE_INTERNAL void TFE_FN(k_un_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  (void)b;
  const TFE_TY(kun_) *u = (const TFE_TY(kun_) *)ctx;
  TFE_T p = u->param;
  (void)p;
  switch (u->op) {
  case TFE_UN_CONJ: TFE__KMAP(TFE_FN(sr_conj)(x)); break;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  case TFE_UN_NEG: TFE__KMAP(-x); break;
  case TFE_UN_SQRT: TFE__KMAP(TFE__M(sqrt, x)); break;
  case TFE_UN_EXP: TFE__KMAP(TFE__M(exp, x)); break;
  case TFE_UN_LOG: TFE__KMAP(TFE__M(log, x)); break;
  case TFE_UN_SIN: TFE__KMAP(TFE__M(sin, x)); break;
  case TFE_UN_COS: TFE__KMAP(TFE__M(cos, x)); break;
  case TFE_UN_TANH: TFE__KMAP(TFE__M(tanh, x)); break;
  case TFE_UN_POW: TFE__KMAP(TFE__MPOW(x, p)); break;
  case TFE_UN_RECIP: TFE__KMAP((TFE_T)1 / x); break;
  case TFE_UN_SQUARE: TFE__KMAP(x * x); break;
  case TFE_UN_ABS: TFE__KMAP((TFE_T)TFE__MABS(x)); break;
#if TFE_CPLX
  case TFE_UN_REAL: TFE__KMAP((TFE_T)TFE__CREAL(x)); break;
  case TFE_UN_IMAG: TFE__KMAP((TFE_T)TFE__CIMAG(x)); break;
#else
  case TFE_UN_REAL: TFE__KMAP(x); break;
  case TFE_UN_IMAG: for (int64_t i = 0; i < n; i++) out[i] = (TFE_T)0; break;
#endif
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE_UN_NEG: TFE__KMAP(TFE__WNEG(x)); break;
  case TFE_UN_ABS: TFE__KMAP(x < 0 ? TFE__WNEG(x) : x); break;
  case TFE_UN_REAL: TFE__KMAP(x); break;
  case TFE_UN_IMAG: for (int64_t i = 0; i < n; i++) out[i] = (TFE_T)0; break;
  case TFE_UN_POW: TFE__KMAP(TFE_FN(k_ipow_)(x, p)); break;
  case TFE_UN_RECIP: TFE__KMAP(TFE_FN(k_idiv_)(1, x)); break;
  case TFE_UN_SQUARE: TFE__KMAP(TFE__WMUL(x, x)); break;
#endif
  default: break;
  }
}
#undef TFE__KMAP
TFE_INTERNAL tfe_status TFE_FN(k_map_cpu_)(const TFE_TY(view) *dst, const TFE_TY(view) *src, tfe_unop op, TFE_T param) {
  if ((unsigned)op >= (unsigned)TFE_UN_COUNT_)
    return TFE_FAIL(TFE_ERR_INVALID, "unknown unary op %d", (int)op);
  if (!TFE_FN(k_un_ok_)(op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "unary op '%s' is not defined for this kind", tfe_unop_name(op));
  TFE_TY(kun_) u = {op, param};
  int fop = TFE__KFU_NONE;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && !TFE_CPLX
  if (sizeof(TFE_T) == 8) /* f64: ops the register transpose can apply */
    fop = op == TFE_UN_NEG ? TFE__KFU_NEG : op == TFE_UN_SQUARE ? TFE__KFU_SQUARE
        : op == TFE_UN_CONJ || op == TFE_UN_REAL ? TFE__KFU_ID : TFE__KFU_NONE;
#endif
  return TFE_FN(k_ew2_)(__func__, dst, 1, src, NULL, TFE_FN(k_un_body_), &u, fop);
}
TFE_INTERNAL void TFE_FN(k_ufn_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  (void)b;
  const TFE_TY(kufn_) *u = (const TFE_TY(kufn_) *)ctx;
  u->f(n, out, a, u->ctx);
}
TFE_API tfe_status TFE_FN(map_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *src,
                                  TFE_TY(unary_fn) fn, void *ctx) {
  TFE_CHECK_NULL(fn);
  TFE_TY(kufn_) u = {fn, ctx};
  return TFE_FN(k_ew_)(__func__, dst, 1, src, NULL, TFE_FN(k_ufn_body_), &u);
}

/* ==== binary zip ========================================================================== */
TFE_INTERNAL bool TFE_FN(k_bin_ok_)(tfe_binop op) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_CPLX
  return op == TFE_BIN_ADD || op == TFE_BIN_SUB || op == TFE_BIN_MUL || op == TFE_BIN_DIV;
#elif TFE_ALG == TFE_ALG_STANDARD
  return (unsigned)op < (unsigned)TFE_BIN_COUNT_;
#elif TFE_ALG == TFE_ALG_CUSTOM
  return op == TFE_BIN_ADD || op == TFE_BIN_MUL;
#else
  return op == TFE_BIN_ADD || op == TFE_BIN_MUL || op == TFE_BIN_MAX || op == TFE_BIN_MIN;
#endif
}
#define TFE__KZIP(expr) do { for (int64_t i = 0; i < n; i++) { TFE_T x = a[i], y = b[i]; out[i] = (expr); } } while (0)
TFE_INTERNAL void TFE_FN(k_bin_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  switch (*(const tfe_binop *)ctx) {
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT
  case TFE_BIN_ADD: TFE__KZIP(x + y); break;
  case TFE_BIN_SUB: TFE__KZIP(x - y); break;
  case TFE_BIN_MUL: TFE__KZIP(x * y); break;
  case TFE_BIN_DIV: TFE__KZIP(x / y); break;
#if !TFE_CPLX /* NaN propagates, as numpy's maximum/minimum */
  case TFE_BIN_MAX: TFE__KZIP(x > y || x != x ? x : y); break;
  case TFE_BIN_MIN: TFE__KZIP(x < y || x != x ? x : y); break;
#endif
#elif TFE_ALG == TFE_ALG_STANDARD
  case TFE_BIN_ADD: TFE__KZIP(TFE__WADD(x, y)); break;
  case TFE_BIN_SUB: TFE__KZIP(TFE__WSUB(x, y)); break;
  case TFE_BIN_MUL: TFE__KZIP(TFE__WMUL(x, y)); break;
  case TFE_BIN_DIV: TFE__KZIP(TFE_FN(k_idiv_)(x, y)); break;
  case TFE_BIN_MAX: TFE__KZIP(x > y ? x : y); break;
  case TFE_BIN_MIN: TFE__KZIP(x < y ? x : y); break;
#else
  case TFE_BIN_ADD: TFE__KZIP(TFE_FN(sr_add)(x, y)); break;
  case TFE_BIN_MUL: TFE__KZIP(TFE_FN(sr_mul)(x, y)); break;
#if TFE_ALG != TFE_ALG_CUSTOM
  case TFE_BIN_MAX: TFE__KZIP(x.v > y.v || x.v != x.v ? x : y); break;
  case TFE_BIN_MIN: TFE__KZIP(x.v < y.v || x.v != x.v ? x : y); break;
#endif
#endif
  default: break;
  }
}
#undef TFE__KZIP
TFE_INTERNAL tfe_status TFE_FN(k_zip_cpu_)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b, tfe_binop op) {
  if ((unsigned)op >= (unsigned)TFE_BIN_COUNT_)
    return TFE_FAIL(TFE_ERR_INVALID, "unknown binary op %d", (int)op);
  if (!TFE_FN(k_bin_ok_)(op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "binary op '%s' is not defined for this kind", tfe_binop_name(op));
  int fop = TFE__KFU_NONE;
#if TFE_ALG == TFE_ALG_STANDARD && TFE_FLOAT && !TFE_CPLX
  if (sizeof(TFE_T) == 8)
    fop = op == TFE_BIN_ADD ? TFE__KFU_ADD : op == TFE_BIN_SUB ? TFE__KFU_SUB
        : op == TFE_BIN_MUL ? TFE__KFU_MUL : op == TFE_BIN_DIV ? TFE__KFU_DIV : TFE__KFU_NONE;
#endif
  return TFE_FN(k_ew2_)(__func__, dst, 2, a, b, TFE_FN(k_bin_body_), &op, fop);
}
/* The elementwise slot's ZIPN (kernel.h): every input checked against dst first (shape,
 * broadcasting, overlap), so nothing is written unless the whole fold runs; then one zip per
 * input, in place in dst. The CPU gains nothing from the fusion (einsum's executor fuses only
 * on other backends); the op is here so that every backend copied from the CPU's has it. */
TFE_INTERNAL tfe_status TFE_FN(k_zipn_cpu_)(const TFE_TY(view) *dst, tfe_dtype dt, int nin, const tfe_dyn *const *in,
                                            unsigned flip, tfe_binop op) {
  const char *where = "tfe_elementwise";
  if (nin < 2 || nin > TFE_EW_MAXIN) return tfe__fail(TFE_ERR_INVALID, where, "zipn takes 2 to %d inputs, not %d", TFE_EW_MAXIN, nin);
  if (!in) return tfe__fail(TFE_ERR_NULL, where, "argument 'in' is NULL");
  if ((unsigned)op >= (unsigned)TFE_BIN_COUNT_) return tfe__fail(TFE_ERR_INVALID, where, "unknown binary op %d", (int)op);
  if (!TFE_FN(k_bin_ok_)(op))
    return tfe__fail(TFE_ERR_UNSUPPORTED, where, "binary op '%s' is not defined for this kind", tfe_binop_name(op));
  TFE_TY(view) x[TFE_EW_MAXIN];
  int64_t n = 0;
  TFE_TRY(tfe__check_dst(&dst->lay, dst->data, where, &n));
  for (int k = 0; k < nin; k++) {
    if (!in[k]) return tfe__fail(TFE_ERR_NULL, where, "zipn input %d is NULL", k);
    if (in[k]->dtype != dt)
      return tfe__fail(TFE_ERR_DTYPE, where, "zipn input %d differs in kind from dst (%s)", k, tfe_dtype_name(dt));
    x[k].data = (TFE_T *)in[k]->data, x[k].lay = in[k]->lay, x[k].conj = in[k]->conj;
    tfe_layout bl;
    TFE_TRY(tfe__check_layout(&x[k].lay, x[k].data, where, "a zipn input", NULL));
    TFE_TRY(tfe__broadcast(&x[k].lay, &dst->lay, &bl, where, "a zipn input"));
    bool same = dst->data + dst->lay.offset == x[k].data + bl.offset; /* in place: still refused */
    for (int i = 0; same && i < bl.rank; i++) same = dst->lay.dims[i] < 2 || bl.strides[i] == dst->lay.strides[i];
    if (n > 0 && (same || tfe__views_conflict(dst->data, &dst->lay, x[k].data, &bl, sizeof(TFE_T))))
      return tfe__fail(TFE_ERR_OVERLAP, where, "destination overlaps zipn input %d", k);
  }
  TFE_TRY(TFE_FN(k_zip_cpu_)(dst, &x[0], &x[1], op));
  for (int k = 2; k < nin; k++)
    TFE_TRY((flip >> k & 1u) ? TFE_FN(k_zip_cpu_)(dst, &x[k], dst, op) : TFE_FN(k_zip_cpu_)(dst, dst, &x[k], op));
  return TFE_OK;
}
TFE_INTERNAL void TFE_FN(k_zfn_body_)(void *ctx, int64_t n, TFE_T *out, const TFE_T *a, const TFE_T *b) {
  const TFE_TY(kzfn_) *u = (const TFE_TY(kzfn_) *)ctx;
  u->f(n, out, a, b, u->ctx);
}
TFE_API tfe_status TFE_FN(zip_fn)(const TFE_TY(view) *dst, const TFE_TY(view) *a, const TFE_TY(view) *b,
                                  TFE_TY(binary_fn) fn, void *ctx) {
  TFE_CHECK_NULL(fn);
  TFE_TY(kzfn_) u = {fn, ctx};
  return TFE_FN(k_ew_)(__func__, dst, 2, a, b, TFE_FN(k_zfn_body_), &u);
}
#endif
