/* tenferro/ad_rules_tpl.h — primal, forward (frule) and reverse (rrule) rules of einsum, the
 * elementwise kernels, reductions and view operations for one float kind; re-included per
 * kind by ad.h. Every function here sees dense column-major, non-conjugated operands (the
 * dispatcher in ad_tape_tpl.h makes them so) and missing tangents / cotangents as zeros. */
#if !TFE__BODY_PHASE
#if TFE_FLOAT

/* Signatures shared by every rule (x: inputs, y: outputs, dx / dy: tangents or cotangents). */
typedef tfe_status (*TFE_TY(ad_primal_fn))(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                           TFE_TY(tensor) *y);
typedef tfe_status (*TFE_TY(ad_frule_fn))(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                          const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                          TFE_TY(tensor) *dy);
typedef tfe_status (*TFE_TY(ad_rrule_fn))(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                          const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                          TFE_TY(tensor) *dx);
#define TFE__AD_VIEW_PRIMAL(OP, name)                                                                              \
  TFE_INTERNAL tfe_status TFE_FN(name)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,             \
                                       TFE_TY(tensor) *y) {                                                         \
    (void)nin;                                                                                                      \
    TFE_TY(view) v;                                                                                                 \
    TFE_TRY(TFE_FN(ad_view_of_)(OP, p, x[0], &v));                                                                  \
    return TFE_FN(ad_dense_copy_)(&v, y);                                                                           \
  }
#undef TFE__AD_VIEW_PRIMAL

#endif /* TFE_FLOAT */
#else /* bodies */
#if TFE_FLOAT

/* ---- small helpers -------------------------------------------------------------------------- */
TFE_INTERNAL int64_t TFE_FN(ad_numel_)(const TFE_TY(view) *v) { return tfe_layout_numel(&v->lay); }
TFE_INTERNAL TFE_T TFE_FN(ad_scalar_)(const tfe_ad_params *p) {
#if TFE_CPLX
  return (TFE_T)p->scalar_re + (TFE_T)I * (TFE_T)p->scalar_im;
#else
  return (TFE_T)p->scalar_re;
#endif
}
TFE_INTERNAL TFE_R TFE_FN(ad_re_)(TFE_T x) {
#if TFE_CPLX
  return TFE__CREAL(x);
#else
  return x;
#endif
}
TFE_INTERNAL TFE_R TFE_FN(ad_im_)(TFE_T x) {
#if TFE_CPLX
  return TFE__CIMAG(x);
#else
  (void)x;
  return 0;
#endif
}
/* ---- memory of the running rule (ad.h: tfe__ts.ad_backend; NULL: host) --------------------- */
#define TFE__AD_BE (tfe__ts.ad_backend)
#undef TFE__AD_RDT
#if TFE_CPLX
#define TFE__AD_RDT (TFE_DT == TFE_DT_C64 ? TFE_DT_F32 : TFE_DT_F64)
#else
#define TFE__AD_RDT TFE_DT
#endif
/* A new uninitialized dense column-major tensor in the running rule's memory. */
TFE_INTERNAL tfe_status TFE_FN(ad_empty_)(int rank, const int64_t *dims, TFE_TY(tensor) *t) {
  const tfe_prims_backend *be = TFE__AD_BE;
  if (!be) return TFE_FN(empty)(t, rank, dims, TFE_COLMAJOR);
  tfe_layout L;
  int64_t n = 0;
  TFE_TRY(tfe_layout_dense(rank, dims, TFE_COLMAJOR, &L));
  TFE_TRY(tfe_layout_check(&L, &n));
  tfe_storage *st = NULL;
  TFE_TRY(tfe_backend_storage_new(be, (size_t)(n > 0 ? n : 1) * sizeof(TFE_T), &st));
  memset(t, 0, sizeof *t);
  t->st = st;
  t->v.data = (TFE_T *)st->ptr;
  t->v.lay = L;
  return TFE_OK;
}
/* The backend's elementwise slot on typed views (the kernel room's descriptor). */
TFE_INTERNAL tfe_status TFE_FN(ad_ew_)(tfe_ew_op op, int code, const TFE_TY(view) *dst, const TFE_TY(view) *a,
                                      const TFE_TY(view) *b, const TFE_T *s0, const TFE_T *s1) {
  const tfe_prims_backend *be = TFE__AD_BE;
  tfe_dyn dd, da, db;
  TFE_TRY(TFE_FN(view_to_dyn)(dst, &dd));
  if (a) TFE_TRY(TFE_FN(view_to_dyn)(a, &da));
  if (b) TFE_TRY(TFE_FN(view_to_dyn)(b, &db));
  tfe_ew_desc d = {op, code, &dd, a ? &da : NULL, b ? &db : NULL, s0, s1, 0, NULL, 0, NULL, 0};
  return be->elementwise(be, &d);
}
/* The same on the real and imaginary parts of complex views (the real kind, strides doubled). */
TFE_INTERNAL tfe_dyn TFE_FN(ad_part_)(const TFE_TY(view) *v, int imag) {
  tfe_dyn d;
  memset(&d, 0, sizeof d);
  d.dtype = TFE__AD_RDT;
  d.data = (void *)v->data;
  d.lay = v->lay;
  for (int i = 0; i < v->lay.rank; i++) d.lay.strides[i] *= TFE_CPLX ? 2 : 1;
  d.lay.offset = v->lay.offset * (TFE_CPLX ? 2 : 1) + imag;
  return d;
}
TFE_INTERNAL tfe_status TFE_FN(ad_fill_)(const TFE_TY(view) *dst, TFE_T value) {
  if (!TFE__AD_BE) {
    int64_t n = tfe_layout_numel(&dst->lay);
    for (int64_t i = 0; i < n; i++) dst->data[dst->lay.offset + i] = value; /* dense */
    return TFE_OK;
  }
  return TFE_FN(ad_ew_)(TFE_EW_FILL, 0, dst, NULL, NULL, &value, NULL);
}
/* The elementwise slot on dyn views (real and imaginary parts: ad_part_). */
TFE_INTERNAL tfe_status TFE_FN(ad_ewd_)(tfe_ew_op op, int code, const tfe_dyn *d, const tfe_dyn *a, const tfe_dyn *b,
                                       const void *s0) {
  tfe_ew_desc e = {op, code, d, a, b, s0, NULL, 0, NULL, 0, NULL, 0};
  return TFE__AD_BE->elementwise(TFE__AD_BE, &e);
}
/* Exact steps and phases on the device (dev_rules2_tpl.h's head comment; ad_bwin_, the abs rule). */
/* The constants the steps need: K = [0, 1, tiny] (tiny: the smallest normal number). */
TFE_INTERNAL tfe_status TFE_FN(ad_consts_)(TFE_TY(tensor) *K) {
  int64_t three = 3;
  TFE_TRY(TFE_FN(ad_empty_)(1, &three, K));
  const TFE_T v[3] = {0, 1, (TFE_T)(sizeof(TFE_R) == 4 ? FLT_MIN : DBL_MIN)};
  tfe_status st = TFE_OK;
  for (int i = 0; i < 3; i++) {
    TFE_TY(view) e = K->v;
    e.lay.dims[0] = 1, e.lay.offset = i;
    if (!st) st = TFE_FN(ad_fill_)(&e, v[i]);
  }
  if (st) TFE_FN(tensor_release)(K);
  return st;
}
/* The real part of constant i of K broadcast to the dyn view like (every stride 0). */
TFE_INTERNAL tfe_dyn TFE_FN(ad_kd_)(const TFE_TY(tensor) *K, int i, const tfe_dyn *like) {
  tfe_dyn d = TFE_FN(ad_part_)(&K->v, 0);
  d.lay = like->lay;
  d.lay.offset = i * (TFE_CPLX ? 2 : 1);
  for (int k = 0; k < d.lay.rank; k++) d.lay.strides[k] = 0;
  return d;
}
/* x = [x > 0] exactly on a real dyn view: scaled by 2^64 (f32) or 2^512 (f64) and clamped to
 * [0, 1], three times, so that the smallest positive subnormal reaches 1 (also ad_bwin_'s masks). */
TFE_INTERNAL tfe_status TFE_FN(ad_step_)(const tfe_dyn *x, const TFE_TY(tensor) *K) {
  TFE_R big = (TFE_R)ldexp(1.0, sizeof(TFE_R) == 4 ? 64 : 512);
  tfe_dyn z = TFE_FN(ad_kd_)(K, 0, x), o = TFE_FN(ad_kd_)(K, 1, x);
  tfe_status st = TFE_OK;
  for (int r = 0; r < 3 && !st; r++) {
    st = TFE_FN(ad_ewd_)(TFE_EW_SCALE, 0, x, NULL, NULL, &big);
    if (!st) st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, x, x, &z, NULL);
    if (!st) st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MIN, x, x, &o, NULL);
  }
  return st;
}
/* z / max(|z|, tiny) into ph (a dense tensor shaped like z; 0 at 0). */
TFE_INTERNAL tfe_status TFE_FN(ad_phase1_)(const TFE_TY(view) *z, const TFE_TY(tensor) *K, const TFE_TY(view) *ph) {
  tfe_status st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_ABS, ph, z, NULL, NULL, NULL);
  tfe_dyn a = TFE_FN(ad_part_)(ph, 0), t = TFE_FN(ad_kd_)(K, 2, &a);
  if (!st) st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_MAX, &a, &a, &t, NULL);
  if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_DIV, ph, z, ph, NULL, NULL);
  return st;
}
/* A new dense tensor shaped like v (zeros when zero is true). Fresh gradient buffers are large
 * and touched once: huge pages (asked for before the first touch) save most page faults. */
TFE_INTERNAL tfe_status TFE_FN(ad_like_)(const TFE_TY(view) *v, bool zero, TFE_TY(tensor) *t) {
  if (TFE__AD_BE) {
    TFE_TRY(TFE_FN(ad_empty_)(v->lay.rank, v->lay.dims, t));
    tfe_status st = zero ? TFE_FN(ad_fill_)(&t->v, (TFE_T)0) : TFE_OK;
    if (st) TFE_FN(tensor_release)(t);
    return st;
  }
  TFE_TRY(TFE_FN(empty)(t, v->lay.rank, v->lay.dims, TFE_COLMAJOR));
  size_t bytes = (size_t)tfe_layout_numel(&t->v.lay) * sizeof(TFE_T);
  tfe__kadvise_huge(t->v.data, bytes);
  if (zero) memset(t->v.data, 0, bytes); /* all-bits-zero is 0 for IEEE kinds */
  return TFE_OK;
}
/* dst = src elementwise (any strides; src's lazy conjugation applies). */
TFE_INTERNAL tfe_status TFE_FN(ad_copy_)(const TFE_TY(view) *dst, const TFE_TY(view) *src) {
  if (!TFE__AD_BE) return TFE_FN(copy)(dst, src);
  return TFE_FN(ad_ew_)(TFE_EW_COPY, 0, dst, src, NULL, NULL, NULL);
}
/* Dense copy of a view. */
TFE_INTERNAL tfe_status TFE_FN(ad_dense_copy_)(const TFE_TY(view) *v, TFE_TY(tensor) *t) {
  if (!TFE__AD_BE) return TFE_FN(contiguous)(v, TFE_COLMAJOR, t);
  TFE_TRY(TFE_FN(ad_empty_)(v->lay.rank, v->lay.dims, t));
  tfe_status st = TFE_FN(ad_copy_)(&t->v, v);
  if (st) TFE_FN(tensor_release)(t);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_zeros_)(int rank, const int64_t *dims, TFE_TY(tensor) *t) {
  if (!TFE__AD_BE) return TFE_FN(zeros)(t, rank, dims, TFE_COLMAJOR);
  TFE_TRY(TFE_FN(ad_empty_)(rank, dims, t));
  tfe_status st = TFE_FN(ad_fill_)(&t->v, (TFE_T)0);
  if (st) TFE_FN(tensor_release)(t);
  return st;
}
/* Contractions on the running rule's backend (NULL: the one inferred for host views). */
TFE_INTERNAL tfe_status TFE_FN(ad_contract_)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la,
                                            const TFE_TY(view) *B, const int32_t *lb, TFE_T beta,
                                            const TFE_TY(view) *C, const int32_t *lc) {
  if (!TFE__AD_BE) return TFE_FN(contract)(alpha, A, la, B, lb, beta, C, lc);
  return TFE_FN(contract_on)(TFE__AD_BE, alpha, A, la, B, lb, beta, C, lc);
}
TFE_INTERNAL tfe_status TFE_FN(ad_contract_unary_)(TFE_T alpha, const TFE_TY(view) *A, const int32_t *la, TFE_T beta,
                                                  const TFE_TY(view) *C, const int32_t *lc) {
  if (!TFE__AD_BE) return TFE_FN(contract_unary)(alpha, A, la, beta, C, lc);
  return TFE_FN(contract_unary_on)(TFE__AD_BE, alpha, A, la, beta, C, lc);
}
/* Transfers of dense column-major tensors between host memory and the backend's. */
TFE_INTERNAL tfe_status TFE_FN(ad_down_)(const tfe_prims_backend *be, const TFE_TY(view) *v, TFE_TY(tensor) *h) {
  TFE_TRY(TFE_FN(empty)(h, v->lay.rank, v->lay.dims, TFE_COLMAJOR));
  size_t bytes = (size_t)tfe_layout_numel(&v->lay) * sizeof(TFE_T);
  tfe_status st = bytes ? be->mem_copy(be, h->v.data, TFE_HOST, v->data + v->lay.offset, be->space, bytes) : TFE_OK;
  if (st) TFE_FN(tensor_release)(h);
  return st;
}
/* h (host, any layout) into a new dense tensor in be's memory; h is released. */
TFE_INTERNAL tfe_status TFE_FN(ad_up_)(const tfe_prims_backend *be, TFE_TY(tensor) *h, TFE_TY(tensor) *d) {
  TFE_TY(tensor) c = {0};
  tfe_status st = TFE_OK;
  bool dense = !(TFE_CPLX && h->v.conj);
  int64_t s = 1;
  for (int i = 0; dense && i < h->v.lay.rank; i++) {
    if (h->v.lay.dims[i] != 1 && h->v.lay.strides[i] != s) dense = false;
    s *= h->v.lay.dims[i];
  }
  if (!dense) {
    st = TFE_FN(contiguous)(&h->v, TFE_COLMAJOR, &c);
    TFE_FN(tensor_release)(h);
    if (st) return st;
    *h = c;
  }
  memset(d, 0, sizeof *d);
  const tfe_prims_backend *saved = tfe__ts.ad_backend;
  tfe__ts.ad_backend = be;
  st = TFE_FN(ad_empty_)(h->v.lay.rank, h->v.lay.dims, d);
  tfe__ts.ad_backend = saved;
  size_t bytes = (size_t)tfe_layout_numel(&h->v.lay) * sizeof(TFE_T);
  if (!st && bytes) st = be->mem_copy(be, d->v.data, be->space, h->v.data + h->v.lay.offset, TFE_HOST, bytes);
  if (st && d->st) TFE_FN(tensor_release)(d);
  TFE_FN(tensor_release)(h);
  return st;
}

/* ---- einsum --------------------------------------------------------------------------------- */
/* Size of every output label (from the inputs), with consistency checks. */
TFE_INTERNAL tfe_status TFE_FN(ad_einsum_dims_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                int64_t *dims) {
  const char *fn = "tfe_ad_einsum";
  if (p->na != x[0]->lay.rank || (nin == 2 && p->nb != x[1]->lay.rank))
    return tfe__fail(TFE_ERR_RANK, fn, "label counts %d, %d do not match ranks %d, %d", p->na, p->nb,
                     x[0]->lay.rank, nin == 2 ? x[1]->lay.rank : 0);
  if (p->nc < 0 || p->nc > TFE_MAX_RANK) return tfe__fail(TFE_ERR_RANK, fn, "output has %d labels", p->nc);
  for (int c = 0; c < p->nc; c++) {
    int64_t d = -1;
    for (int k = 0; k < nin; k++) {
      const int32_t *l = k ? p->lb : p->la;
      for (int i = 0; i < x[k]->lay.rank; i++)
        if (l[i] == p->lc[c]) {
          if (d >= 0 && d != x[k]->lay.dims[i])
            return tfe__fail(TFE_ERR_SHAPE, fn, "label %d has sizes %lld and %lld", (int)l[i], (long long)d,
                             (long long)x[k]->lay.dims[i]);
          d = x[k]->lay.dims[i];
        }
    }
    if (d < 0) return tfe__fail(TFE_ERR_INVALID, fn, "output label %d appears in no input", (int)p->lc[c]);
    dims[c] = d;
  }
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(ad_einsum_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  TFE_TY(tensor) *y) {
  int64_t dims[TFE_MAX_RANK];
  TFE_TRY(TFE_FN(ad_einsum_dims_)(p, nin, x, dims));
  TFE_TRY(TFE_FN(ad_empty_)(p->nc, dims, y)); /* beta = 0 never reads y */
  tfe_status st = nin == 2 ? TFE_FN(ad_contract_)(1, x[0], p->la, x[1], p->lb, 0, &y->v, p->lc)
                           : TFE_FN(ad_contract_unary_)(1, x[0], p->la, 0, &y->v, p->lc);
  if (st) TFE_FN(tensor_release)(y);
  return st;
}

TFE_INTERNAL tfe_status TFE_FN(ad_einsum_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                 TFE_TY(tensor) *dy) {
  TFE_TRY(TFE_FN(ad_like_)(y[0], false, dy));
  tfe_status st;
  if (nin == 1) st = TFE_FN(ad_contract_unary_)(1, dx[0], p->la, 0, &dy->v, p->lc);
  else {
    st = TFE_FN(ad_contract_)(1, dx[0], p->la, x[1], p->lb, 0, &dy->v, p->lc);
    if (!st) st = TFE_FN(ad_contract_)(1, x[0], p->la, dx[1], p->lb, 1, &dy->v, p->lc);
  }
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}

/* Cotangent of operand `which`: G = contract(dC, conj(other)) onto the distinct labels of the
 * operand that occur elsewhere, then written onto the operand's diagonal (repeated labels) and
 * broadcast along labels that occur nowhere else. */
TFE_INTERNAL tfe_status TFE_FN(ad_einsum_grad1_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *dy, int which, TFE_TY(tensor) *dx) {
  const int32_t *lo = which ? p->lb : p->la, *lt = which ? p->la : p->lb;
  int no = which ? p->nb : p->na, nt = which ? p->na : p->nb;
  int32_t ul[TFE_MAX_RANK], ug[TFE_MAX_RANK];
  int map[TFE_MAX_RANK], nul = 0, nug = 0;
  for (int i = 0; i < no; i++) { /* distinct labels in first-occurrence order */
    int j = 0;
    while (j < nul && ul[j] != lo[i]) j++;
    if (j == nul) ul[nul++] = lo[i];
    map[i] = j;
  }
  bool kept[TFE_MAX_RANK];
  for (int j = 0; j < nul; j++) {
    bool inc = false;
    for (int c = 0; c < p->nc; c++) inc |= p->lc[c] == ul[j];
    for (int t = 0; nin == 2 && t < nt; t++) inc |= lt[t] == ul[j];
    kept[j] = inc;
    if (inc) ug[nug++] = ul[j];
  }
  const TFE_TY(view) *xo = x[which];
  TFE_TY(view) other;
  if (nin == 2) {
    other = *x[1 - which];
    other.conj = TFE_CPLX ? !other.conj : other.conj;
  }
  if (nul == no && nug == nul) { /* distinct labels, all shared: contract straight into dx */
    TFE_TRY(TFE_FN(ad_like_)(xo, false, dx)); /* beta = 0 never reads dx */
    tfe_status st = nin == 2 ? TFE_FN(ad_contract_)(1, dy, p->lc, &other, lt, 0, &dx->v, lo)
                             : TFE_FN(ad_contract_unary_)(1, dy, p->lc, 0, &dx->v, lo);
    if (st) TFE_FN(tensor_release)(dx);
    return st;
  }
  int64_t gd[TFE_MAX_RANK];
  for (int j = 0, g = 0; j < nul; j++) {
    if (!kept[j]) continue;
    for (int i = 0; i < no; i++) if (map[i] == j) { gd[g] = xo->lay.dims[i]; break; }
    g++;
  }
  TFE_TY(tensor) G = {0};
  TFE_TRY(TFE_FN(ad_empty_)(nug, gd, &G));
  tfe_status st;
  if (nin == 2) {
    st = TFE_FN(ad_contract_)(1, dy, p->lc, &other, lt, 0, &G.v, ug);
  } else {
    st = TFE_FN(ad_contract_unary_)(1, dy, p->lc, 0, &G.v, ug);
  }
  TFE_TY(view) dv, gv;
  if (!st) st = TFE_FN(ad_like_)(xo, true, dx);
  if (!st) st = TFE_FN(diagonal_map)(&dx->v, map, nul, &dv);
  if (!st) { /* G seen with the diagonal's rank: stride 0 along labels G does not have */
    gv = G.v;
    gv.lay.rank = nul;
    for (int j = 0, g = 0; j < nul; j++) {
      gv.lay.dims[j] = dv.lay.dims[j];
      gv.lay.strides[j] = kept[j] ? G.v.lay.strides[g++] : 0;
    }
    st = TFE_FN(ad_copy_)(&dv, &gv);
    if (st) TFE_FN(tensor_release)(dx);
  }
  TFE_FN(tensor_release)(&G);
  return st;
}

TFE_INTERNAL tfe_status TFE_FN(ad_einsum_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                 TFE_TY(tensor) *dx) {
  (void)y;
  for (int k = 0; k < nin; k++) {
    tfe_status st = TFE_FN(ad_einsum_grad1_)(p, nin, x, dy[0], k, &dx[k]);
    if (st) {
      for (int j = 0; j < k; j++) TFE_FN(tensor_release)(&dx[j]);
      return st;
    }
  }
  return TFE_OK;
}

/* ---- elementwise ------------------------------------------------------------------------------ */
TFE_INTERNAL tfe_status TFE_FN(ad_unary_check_)(int op) {
  if (op < 0 || op >= (int)TFE_UN_COUNT_) return tfe__fail(TFE_ERR_INVALID, "tfe_ad_unary", "unknown unary op %d", op);
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_unary_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)nin;
  TFE_TRY(TFE_FN(ad_unary_check_)(p->unop));
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, y));
  TFE_T par = TFE_FN(ad_scalar_)(p);
  tfe_status st = TFE__AD_BE ? TFE_FN(ad_ew_)(TFE_EW_MAP, p->unop, &y->v, x[0], NULL, &par, NULL)
                             : TFE_FN(map)(&y->v, x[0], (tfe_unop)p->unop, par);
  if (st) TFE_FN(tensor_release)(y);
  return st;
}

/* f'(x) for the holomorphic ops (tangent dy = f'(x) dx, cotangent dx = conj(f'(x)) dy). */
TFE_INTERNAL TFE_T TFE_FN(ad_deriv_)(int op, TFE_T x, TFE_T y, TFE_T param) {
  switch (op) {
  case TFE_UN_NEG: return -1;
  case TFE_UN_SQRT: return (TFE_T)0.5 / y;
  case TFE_UN_EXP: return y;
  case TFE_UN_LOG: return (TFE_T)1 / x;
  case TFE_UN_SIN: return TFE__M(cos, x);
  case TFE_UN_COS: return -TFE__M(sin, x);
  case TFE_UN_TANH: return 1 - y * y;
  case TFE_UN_POW: return param * TFE__MPOW(x, param - 1);
  case TFE_UN_RECIP: return -y * y;
  case TFE_UN_SQUARE: return 2 * x;
  default: return 0;
  }
}
/* x / |x| (0 at 0): the derivative direction of abs. */
TFE_INTERNAL TFE_T TFE_FN(ad_sign_)(TFE_T x) {
  TFE_R a = (TFE_R)TFE__MABS(x);
  return a > 0 ? x / a : (TFE_T)0;
}

/* Device form of the unary rules (values outside host memory): f'(x) built by the backend's
 * map, zip and scale, then one product. rev: cotangent conj(f'(x)) g, else tangent f'(x) d. */
TFE_INTERNAL tfe_status TFE_FN(ad_unary_dev_)(const tfe_ad_params *p, const TFE_TY(view) *x, const TFE_TY(view) *d,
                                             const TFE_TY(view) *y, bool rev, TFE_TY(tensor) *out) {
  TFE_TRY(TFE_FN(ad_like_)(x, false, out));
  TFE_TY(tensor) T = {0}, one = {0};
  TFE_T par = TFE_FN(ad_scalar_)(p), s = 1;
  tfe_status st = TFE_OK;
  const TFE_TY(view) *o = &out->v;
  switch (p->unop) {
  case TFE_UN_NEG: st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_NEG, o, d, NULL, &par, NULL); goto done;
  case TFE_UN_CONJ: st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_CONJ, o, d, NULL, &par, NULL); goto done;
  case TFE_UN_REAL: st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_REAL, o, d, NULL, &par, NULL); goto done;
  case TFE_UN_IMAG:
#if TFE_CPLX
    st = TFE_FN(ad_ew_)(TFE_EW_MAP, rev ? TFE_UN_REAL : TFE_UN_IMAG, o, d, NULL, &par, NULL);
    if (!st && rev) { s = (TFE_T)I; st = TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, o, NULL, NULL, &s, NULL); }
#else
    st = TFE_FN(ad_fill_)(o, (TFE_T)0);
#endif
    goto done;
  default: break;
  }
  st = TFE_FN(ad_like_)(x, false, &T);
  if (st) goto done;
  const TFE_TY(view) *t = &T.v;
  switch (p->unop) {
  case TFE_UN_SQRT: s = (TFE_T)0.5; st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_RECIP, t, y, NULL, &par, NULL); break;
  case TFE_UN_EXP: st = TFE_FN(ad_copy_)(t, y); break;
  case TFE_UN_LOG: st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_RECIP, t, x, NULL, &par, NULL); break;
  case TFE_UN_SIN: st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_COS, t, x, NULL, &par, NULL); break;
  case TFE_UN_COS: s = -1; st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_SIN, t, x, NULL, &par, NULL); break;
  case TFE_UN_RECIP: s = -1; st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_SQUARE, t, y, NULL, &par, NULL); break;
  case TFE_UN_SQUARE: s = 2; st = TFE_FN(ad_copy_)(t, x); break;
  case TFE_UN_POW: {
    TFE_T q = par - 1;
    s = par;
    st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_POW, t, x, NULL, &q, NULL);
    break;
  }
  case TFE_UN_TANH: { /* 1 - y^2: a broadcast one minus y^2 */
    st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_SQUARE, t, y, NULL, &par, NULL);
    int64_t one_dim = 1;
    if (!st) st = TFE_FN(ad_empty_)(1, &one_dim, &one);
    if (!st) st = TFE_FN(ad_fill_)(&one.v, (TFE_T)1);
    if (!st) {
      TFE_TY(view) b = one.v;
      b.lay = x->lay;
      for (int i = 0; i < b.lay.rank; i++) b.lay.strides[i] = 0;
      b.lay.offset = 0;
      st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_SUB, t, &b, t, NULL, NULL);
    }
    break;
  }
  case TFE_UN_ABS: { /* sign(x) = x / max(|x|, tiny) (0 at 0; ad_phase1_; one: its constants) */
    st = TFE_FN(ad_consts_)(&one);
    if (!st) st = TFE_FN(ad_phase1_)(x, &one, t);
    if (st) break;
    if (rev) { /* Re(g) sign(x) */
      st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_REAL, o, d, NULL, &par, NULL);
      if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, o, o, t, NULL, NULL);
    } else { /* Re(conj(sign(x)) d) */
      TFE_TY(view) c = *t;
      c.conj = TFE_CPLX ? true : false;
      st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, o, &c, d, NULL, NULL);
      if (!st) st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_REAL, o, o, NULL, &par, NULL);
    }
    goto done;
  }
  default: st = tfe__fail(TFE_ERR_INVALID, "tfe_ad_unary", "unknown unary op %d", p->unop); break;
  }
  if (!st && s != (TFE_T)1) st = TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, t, NULL, NULL, &s, NULL);
  if (!st) { /* (conj) f'(x) times d */
    TFE_TY(view) c = *t;
    c.conj = TFE_CPLX && rev;
    st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, o, &c, d, NULL, NULL);
  }
done:
  TFE_FN(tensor_release)(&T);
  TFE_FN(tensor_release)(&one);
  if (st) TFE_FN(tensor_release)(out);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_unary_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_unary_dev_)(p, x[0], dx[0], y[0], false, dy);
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, dy));
  const TFE_T *a = x[0]->data + x[0]->lay.offset, *d = dx[0]->data + dx[0]->lay.offset, *b = y[0]->data + y[0]->lay.offset;
  TFE_T *o = dy->v.data, par = TFE_FN(ad_scalar_)(p);
  int64_t n = TFE_FN(ad_numel_)(x[0]);
  for (int64_t i = 0; i < n; i++) {
    switch (p->unop) {
    case TFE_UN_CONJ: o[i] = TFE_FN(la_conj_)(d[i]); break;
    case TFE_UN_ABS: o[i] = TFE_FN(ad_re_)(TFE_FN(la_conj_)(TFE_FN(ad_sign_)(a[i])) * d[i]); break;
    case TFE_UN_REAL: o[i] = TFE_FN(ad_re_)(d[i]); break;
    case TFE_UN_IMAG: o[i] = TFE_FN(ad_im_)(d[i]); break;
    default: o[i] = TFE_FN(ad_deriv_)(p->unop, a[i], b[i], par) * d[i];
    }
  }
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(ad_unary_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                TFE_TY(tensor) *dx) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_unary_dev_)(p, x[0], dy[0], y[0], true, dx);
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, dx));
  const TFE_T *a = x[0]->data + x[0]->lay.offset, *g = dy[0]->data + dy[0]->lay.offset, *b = y[0]->data + y[0]->lay.offset;
  TFE_T *o = dx->v.data, par = TFE_FN(ad_scalar_)(p);
  int64_t n = TFE_FN(ad_numel_)(x[0]);
  for (int64_t i = 0; i < n; i++) {
    switch (p->unop) {
    case TFE_UN_CONJ: o[i] = TFE_FN(la_conj_)(g[i]); break;
    case TFE_UN_ABS: o[i] = TFE_FN(ad_re_)(g[i]) * TFE_FN(ad_sign_)(a[i]); break;
    case TFE_UN_REAL: o[i] = TFE_FN(ad_re_)(g[i]); break;
#if TFE_CPLX
    case TFE_UN_IMAG: o[i] = (TFE_T)I * TFE_FN(ad_re_)(g[i]); break;
#else
    case TFE_UN_IMAG: o[i] = 0; break;
#endif
    default: o[i] = TFE_FN(la_conj_)(TFE_FN(ad_deriv_)(p->unop, a[i], b[i], par)) * g[i];
    }
  }
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(ad_binary_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                  TFE_TY(tensor) *y) {
  (void)nin;
  if (p->binop < TFE_BIN_ADD || p->binop > TFE_BIN_MIN)
    return tfe__fail(TFE_ERR_INVALID, "tfe_ad_binary", "unknown binary op %d", p->binop);
  if (TFE_CPLX && p->binop >= TFE_BIN_MAX)
    return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_ad_binary", "%s of complex numbers is not defined (no order)",
                     tfe_binop_name((tfe_binop)p->binop));
  TFE_TRY(tfe__same_shape(&x[0]->lay, &x[1]->lay, "tfe_ad_binary"));
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, y));
  tfe_status st = TFE__AD_BE ? TFE_FN(ad_ew_)(TFE_EW_ZIP, p->binop, &y->v, x[0], x[1], NULL, NULL)
                             : TFE_FN(zip)(&y->v, x[0], x[1], (tfe_binop)p->binop);
  if (st) TFE_FN(tensor_release)(y);
  return st;
}
/* max / min: the first operand wins ties (the gradient goes to a where a == b). */
TFE_INTERNAL bool TFE_FN(ad_first_wins_)(int op, TFE_T a, TFE_T b) {
#if TFE_CPLX
  (void)op; (void)a; (void)b;
  return true; /* unreachable: the primal refuses complex max / min */
#else
  return op == TFE_BIN_MAX ? a >= b : a <= b;
#endif
}
/* [b wins] of max (b > a) or min (b < a), exact 0 / 1 in the dense D (a wins ties, as
 * ad_first_wins_), and Dn = 1 - D: the step of the difference (ad_step_: scaled past every nonzero
 * magnitude and clamped to [0, 1], three times; an infinite product clamps to 1). Real kinds (the
 * primal refuses complex max / min). */
TFE_INTERNAL tfe_status TFE_FN(ad_bwin_)(int op, const TFE_TY(view) *a, const TFE_TY(view) *b, TFE_TY(tensor) *D,
                                        TFE_TY(tensor) *Dn) {
#if TFE_CPLX
  (void)a; (void)b; (void)D; (void)Dn;
  return tfe__fail(TFE_ERR_UNSUPPORTED, "tfe_ad_binary", "%s of a complex kind", op == TFE_BIN_MAX ? "max" : "min");
#else
  TFE_TY(tensor) K = {0};
  memset(D, 0, sizeof *D);
  memset(Dn, 0, sizeof *Dn);
  tfe_status st = TFE_FN(ad_consts_)(&K);
  if (!st) st = TFE_FN(ad_like_)(a, false, D);
  if (!st) st = TFE_FN(ad_like_)(a, false, Dn);
  if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_SUB, &D->v, op == TFE_BIN_MAX ? b : a, op == TFE_BIN_MAX ? a : b, NULL, NULL);
  if (!st) {
    tfe_dyn dd = TFE_FN(ad_part_)(&D->v, 0), dn = TFE_FN(ad_part_)(&Dn->v, 0), one = TFE_FN(ad_kd_)(&K, 1, &dd);
    st = TFE_FN(ad_step_)(&dd, &K);
    if (!st) st = TFE_FN(ad_ewd_)(TFE_EW_ZIP, TFE_BIN_SUB, &dn, &one, &dd, NULL);
  }
  TFE_FN(tensor_release)(&K);
  if (st) { TFE_FN(tensor_release)(D); TFE_FN(tensor_release)(Dn); }
  return st;
#endif
}
/* Device forms of the binary rules (max and min through ad_bwin_'s 0 / 1 masks). */
TFE_INTERNAL tfe_status TFE_FN(ad_binary_dev_f_)(int op, const TFE_TY(view) *const *x, const TFE_TY(view) *const *dx,
                                                const TFE_TY(view) *c, TFE_TY(tensor) *dy) {
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, dy));
  const TFE_TY(view) *o = &dy->v;
  TFE_TY(tensor) T = {0};
  tfe_status st;
  switch (op) {
  case TFE_BIN_ADD: case TFE_BIN_SUB: st = TFE_FN(ad_ew_)(TFE_EW_ZIP, op, o, dx[0], dx[1], NULL, NULL); break;
  case TFE_BIN_MUL: /* da b + a db */
    st = TFE_FN(ad_like_)(x[0], false, &T);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, &T.v, dx[0], x[1], NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, o, x[0], dx[1], NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_ADD, o, o, &T.v, NULL, NULL);
    break;
  case TFE_BIN_DIV: /* (da - c db) / b */
    st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, o, c, dx[1], NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_SUB, o, dx[0], o, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_DIV, o, o, x[1], NULL, NULL);
    break;
  default: { /* max, min: da (1 - D) + db D */
    TFE_TY(tensor) D = {0}, Dn = {0};
    st = TFE_FN(ad_bwin_)(op, x[0], x[1], &D, &Dn);
    if (!st) st = TFE_FN(ad_like_)(x[0], false, &T);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, o, dx[0], &Dn.v, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, &T.v, dx[1], &D.v, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_ADD, o, o, &T.v, NULL, NULL);
    TFE_FN(tensor_release)(&D), TFE_FN(tensor_release)(&Dn);
    break;
  }
  }
  TFE_FN(tensor_release)(&T);
  if (st) TFE_FN(tensor_release)(dy);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_binary_dev_r_)(int op, const TFE_TY(view) *const *x, const TFE_TY(view) *c,
                                                const TFE_TY(view) *g, TFE_TY(tensor) *dx) {
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, &dx[0]));
  tfe_status st = TFE_FN(ad_like_)(x[1], false, &dx[1]);
  if (st) { TFE_FN(tensor_release)(&dx[0]); return st; }
  const TFE_TY(view) *ga = &dx[0].v, *gb = &dx[1].v;
  TFE_TY(view) ca = *x[0], cb = *x[1], cc = *c; /* conjugated operands */
  ca.conj = cb.conj = cc.conj = TFE_CPLX ? true : false;
  TFE_T par = 0;
  switch (op) {
  case TFE_BIN_ADD:
    st = TFE_FN(ad_copy_)(ga, g);
    if (!st) st = TFE_FN(ad_copy_)(gb, g);
    break;
  case TFE_BIN_SUB:
    st = TFE_FN(ad_copy_)(ga, g);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_NEG, gb, g, NULL, &par, NULL);
    break;
  case TFE_BIN_MUL: /* conj(b) g, conj(a) g */
    st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, ga, &cb, g, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, gb, &ca, g, NULL, NULL);
    break;
  case TFE_BIN_DIV: /* g / conj(b), -(g / conj(b)) conj(c) */
    st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_DIV, ga, g, &cb, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, gb, ga, &cc, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_MAP, TFE_UN_NEG, gb, gb, NULL, &par, NULL);
    break;
  default: { /* max, min: g (1 - D), g D */
    TFE_TY(tensor) D = {0}, Dn = {0};
    st = TFE_FN(ad_bwin_)(op, x[0], x[1], &D, &Dn);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, ga, g, &Dn.v, NULL, NULL);
    if (!st) st = TFE_FN(ad_ew_)(TFE_EW_ZIP, TFE_BIN_MUL, gb, g, &D.v, NULL, NULL);
    TFE_FN(tensor_release)(&D), TFE_FN(tensor_release)(&Dn);
    break;
  }
  }
  if (st) { TFE_FN(tensor_release)(&dx[0]); TFE_FN(tensor_release)(&dx[1]); }
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_binary_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                 TFE_TY(tensor) *dy) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_binary_dev_f_)(p->binop, x, dx, y[0], dy);
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, dy));
  const TFE_T *a = x[0]->data + x[0]->lay.offset, *b = x[1]->data + x[1]->lay.offset;
  const TFE_T *da = dx[0]->data + dx[0]->lay.offset, *db = dx[1]->data + dx[1]->lay.offset, *c = y[0]->data + y[0]->lay.offset;
  TFE_T *o = dy->v.data;
  int64_t n = TFE_FN(ad_numel_)(x[0]);
  for (int64_t i = 0; i < n; i++) {
    switch (p->binop) {
    case TFE_BIN_ADD: o[i] = da[i] + db[i]; break;
    case TFE_BIN_SUB: o[i] = da[i] - db[i]; break;
    case TFE_BIN_MUL: o[i] = da[i] * b[i] + a[i] * db[i]; break;
    case TFE_BIN_DIV: o[i] = (da[i] - c[i] * db[i]) / b[i]; break;
    default: o[i] = TFE_FN(ad_first_wins_)(p->binop, a[i], b[i]) ? da[i] : db[i]; break;
    }
  }
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_binary_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                 TFE_TY(tensor) *dx) {
  (void)nin;
  if (TFE__AD_BE) return TFE_FN(ad_binary_dev_r_)(p->binop, x, y[0], dy[0], dx);
  TFE_TRY(TFE_FN(ad_like_)(x[0], false, &dx[0]));
  tfe_status st = TFE_FN(ad_like_)(x[1], false, &dx[1]);
  if (st) { TFE_FN(tensor_release)(&dx[0]); return st; }
  const TFE_T *a = x[0]->data + x[0]->lay.offset, *b = x[1]->data + x[1]->lay.offset;
  const TFE_T *g = dy[0]->data + dy[0]->lay.offset, *c = y[0]->data + y[0]->lay.offset;
  TFE_T *ga = dx[0].v.data, *gb = dx[1].v.data;
  int64_t n = TFE_FN(ad_numel_)(x[0]);
  for (int64_t i = 0; i < n; i++) {
    switch (p->binop) {
    case TFE_BIN_ADD: ga[i] = g[i]; gb[i] = g[i]; break;
    case TFE_BIN_SUB: ga[i] = g[i]; gb[i] = -g[i]; break;
    case TFE_BIN_MUL: ga[i] = TFE_FN(la_conj_)(b[i]) * g[i]; gb[i] = TFE_FN(la_conj_)(a[i]) * g[i]; break;
    case TFE_BIN_DIV:
      ga[i] = g[i] / TFE_FN(la_conj_)(b[i]);
      gb[i] = -ga[i] * TFE_FN(la_conj_)(c[i]);
      break;
    default: {
      bool fa = TFE_FN(ad_first_wins_)(p->binop, a[i], b[i]);
      ga[i] = fa ? g[i] : (TFE_T)0;
      gb[i] = fa ? (TFE_T)0 : g[i];
      break;
    }
    }
  }
  return TFE_OK;
}

TFE_INTERNAL tfe_status TFE_FN(ad_scale_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                 TFE_TY(tensor) *y) {
  (void)nin;
  TFE_TRY(TFE_FN(ad_dense_copy_)(x[0], y));
  TFE_T s = TFE_FN(ad_scalar_)(p);
  if (TFE__AD_BE) {
    tfe_status st = TFE_FN(ad_ew_)(TFE_EW_SCALE, 0, &y->v, NULL, NULL, &s, NULL);
    if (st) TFE_FN(tensor_release)(y);
    return st;
  }
  int64_t n = tfe_layout_numel(&y->v.lay);
  for (int64_t i = 0; i < n; i++) y->v.data[i] *= s;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_scale_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                                TFE_TY(tensor) *dy) {
  (void)x; (void)y;
  return TFE_FN(ad_scale_primal_)(p, nin, dx, dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_scale_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                                TFE_TY(tensor) *dx) {
  (void)x; (void)y;
  tfe_ad_params q = *p;
  q.scalar_im = -q.scalar_im;
  return TFE_FN(ad_scale_primal_)(&q, nin, dy, dx);
}

/* ---- reductions --------------------------------------------------------------------------------- */
/* Labels 0..r-1 for x; the output keeps the axes not summed (naxes < 0: none kept). */
TFE_INTERNAL tfe_status TFE_FN(ad_sum_labels_)(const tfe_ad_params *p, const tfe_layout *L, int32_t *lx, int32_t *ly,
                                               int *ny, bool *summed) {
  for (int i = 0; i < L->rank; i++) { lx[i] = i; summed[i] = p->naxes < 0; }
  for (int k = 0; k < p->naxes; k++) {
    int a = p->axes[k];
    if (a < 0 || a >= L->rank) return tfe__fail(TFE_ERR_INVALID, "tfe_ad_sum", "axis %d outside [0, %d)", a, L->rank);
    if (summed[a]) return tfe__fail(TFE_ERR_INVALID, "tfe_ad_sum", "axis %d named twice", a);
    summed[a] = true;
  }
  *ny = 0;
  for (int i = 0; i < L->rank; i++) if (!summed[i]) ly[(*ny)++] = i;
  return TFE_OK;
}
TFE_INTERNAL tfe_status TFE_FN(ad_sum_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                               TFE_TY(tensor) *y) {
  (void)nin;
  int32_t lx[TFE_MAX_RANK], ly[TFE_MAX_RANK];
  bool summed[TFE_MAX_RANK];
  int ny = 0;
  TFE_TRY(TFE_FN(ad_sum_labels_)(p, &x[0]->lay, lx, ly, &ny, summed));
  int64_t dims[TFE_MAX_RANK];
  for (int i = 0; i < ny; i++) dims[i] = x[0]->lay.dims[ly[i]];
  TFE_TRY(TFE_FN(ad_zeros_)(ny, dims, y));
  tfe_status st = TFE_FN(ad_contract_unary_)(1, x[0], lx, 0, &y->v, ly);
  if (st) TFE_FN(tensor_release)(y);
  return st;
}
TFE_INTERNAL tfe_status TFE_FN(ad_sum_frule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *dx, const TFE_TY(view) *const *y,
                                              TFE_TY(tensor) *dy) {
  (void)x; (void)y;
  return TFE_FN(ad_sum_primal_)(p, nin, dx, dy);
}
TFE_INTERNAL tfe_status TFE_FN(ad_sum_rrule_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                              const TFE_TY(view) *const *y, const TFE_TY(view) *const *dy,
                                              TFE_TY(tensor) *dx) {
  (void)nin; (void)y;
  int32_t lx[TFE_MAX_RANK], ly[TFE_MAX_RANK];
  bool summed[TFE_MAX_RANK];
  int ny = 0;
  TFE_TRY(TFE_FN(ad_sum_labels_)(p, &x[0]->lay, lx, ly, &ny, summed));
  TFE_TY(view) g = *dy[0]; /* broadcast back: stride 0 along the summed axes */
  g.lay.rank = x[0]->lay.rank;
  for (int i = 0, k = 0; i < x[0]->lay.rank; i++) {
    g.lay.dims[i] = x[0]->lay.dims[i];
    g.lay.strides[i] = summed[i] ? 0 : dy[0]->lay.strides[k++];
  }
  return TFE_FN(ad_dense_copy_)(&g, dx);
}

/* ---- view operations ------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status TFE_FN(ad_view_of_)(tfe_ad_op op, const tfe_ad_params *p, const TFE_TY(view) *x, TFE_TY(view) *v) {
  switch (op) {
  case TFE_AD_PERMUTE:
    if (p->naxes != x->lay.rank)
      return tfe__fail(TFE_ERR_RANK, "tfe_ad_permute", "permutation of %d axes for rank %d", p->naxes, x->lay.rank);
    return TFE_FN(permute)(x, p->axes, v);
  case TFE_AD_SLICE:
    if (p->rank != x->lay.rank)
      return tfe__fail(TFE_ERR_RANK, "tfe_ad_slice", "slice of rank %d for rank %d", p->rank, x->lay.rank);
    return TFE_FN(slice)(x, p->start, p->stop, p->step, v);
  case TFE_AD_BROADCAST: return TFE_FN(broadcast)(x, p->rank, p->dims, v);
  case TFE_AD_DIAGONAL: return TFE_FN(diagonal)(x, p->axes[0], p->axes[1], v);
  default: return tfe__fail(TFE_ERR_INTERNAL, "tfe_ad_view", "not a view op");
  }
}
TFE_INTERNAL tfe_status TFE_FN(ad_reshape_)(const tfe_ad_params *p, const TFE_TY(view) *x, TFE_TY(tensor) *y) {
  int64_t n = 0;
  tfe_layout L;
  TFE_TRY(tfe_layout_dense(p->rank, p->dims, TFE_COLMAJOR, &L));
  TFE_TRY(tfe_layout_check(&L, &n));
  if (n != TFE_FN(ad_numel_)(x))
    return tfe__fail(TFE_ERR_SHAPE, "tfe_ad_reshape", "%lld elements cannot take a shape of %lld",
                     (long long)TFE_FN(ad_numel_)(x), (long long)n);
  TFE_TRY(TFE_FN(ad_empty_)(p->rank, p->dims, y));
  const tfe_prims_backend *be = TFE__AD_BE;
  size_t bytes = (size_t)n * sizeof(TFE_T);
  if (!be) memcpy(y->v.data, x->data + x->lay.offset, bytes); /* x is dense column-major */
  else if (bytes) {
    tfe_status st = be->mem_copy(be, y->v.data, be->space, x->data + x->lay.offset, be->space, bytes);
    if (st) { TFE_FN(tensor_release)(y); return st; }
  }
  return TFE_OK;
}
#define TFE__AD_VIEW_PRIMAL(OP, name)                                                                              \
  TFE_INTERNAL tfe_status TFE_FN(name)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,             \
                                       TFE_TY(tensor) *y) {                                                         \
    (void)nin;                                                                                                      \
    TFE_TY(view) v;                                                                                                 \
    TFE_TRY(TFE_FN(ad_view_of_)(OP, p, x[0], &v));                                                                  \
    return TFE_FN(ad_dense_copy_)(&v, y);                                                                           \
  }
TFE__AD_VIEW_PRIMAL(TFE_AD_PERMUTE, ad_permute_primal_)
TFE__AD_VIEW_PRIMAL(TFE_AD_SLICE, ad_slice_primal_)
TFE__AD_VIEW_PRIMAL(TFE_AD_BROADCAST, ad_broadcast_primal_)
TFE__AD_VIEW_PRIMAL(TFE_AD_DIAGONAL, ad_diagonal_primal_)
#undef TFE__AD_VIEW_PRIMAL

TFE_INTERNAL tfe_status TFE_FN(ad_reshape_primal_)(const tfe_ad_params *p, int nin, const TFE_TY(view) *const *x,
                                                   TFE_TY(tensor) *y) {
  (void)nin;
  return TFE_FN(ad_reshape_)(p, x[0], y);
}

/* The tangent of a linear op is the op applied to the tangent. */
TFE_INTERNAL tfe_status TFE_FN(ad_linear_frule_)(tfe_ad_op op, const tfe_ad_params *p, const TFE_TY(view) *dx,
                                                 TFE_TY(tensor) *dy) {
  if (op == TFE_AD_RESHAPE) return TFE_FN(ad_reshape_)(p, dx, dy);
  TFE_TY(view) v;
  TFE_TRY(TFE_FN(ad_view_of_)(op, p, dx, &v));
  return TFE_FN(ad_dense_copy_)(&v, dy);
}

/* Adjoints of the view ops: scatter into zeros (slice, diagonal), inverse permutation, sum
 * over the broadcast axes, reshape back. */
TFE_INTERNAL tfe_status TFE_FN(ad_view_rrule_)(tfe_ad_op op, const tfe_ad_params *p, const TFE_TY(view) *x,
                                               const TFE_TY(view) *g, TFE_TY(tensor) *dx) {
  if (op == TFE_AD_RESHAPE) {
    tfe_ad_params q = *p;
    q.rank = x->lay.rank;
    memcpy(q.dims, x->lay.dims, sizeof q.dims);
    return TFE_FN(ad_reshape_)(&q, g, dx);
  }
  if (op == TFE_AD_PERMUTE) {
    int inv[TFE_MAX_RANK];
    for (int k = 0; k < p->naxes; k++) inv[p->axes[k]] = k;
    TFE_TY(view) v;
    TFE_TRY(TFE_FN(permute)(g, inv, &v));
    return TFE_FN(ad_dense_copy_)(&v, dx);
  }
  if (op == TFE_AD_BROADCAST) { /* sum the stretched and the new leading axes */
    int rx = x->lay.rank, ry = g->lay.rank, nk = 0;
    int32_t lg[TFE_MAX_RANK], lk[TFE_MAX_RANK];
    for (int i = 0; i < ry; i++) lg[i] = i;
    for (int i = 0; i < rx; i++)
      if (!(x->lay.dims[i] == 1 && g->lay.dims[ry - rx + i] != 1)) lk[nk++] = ry - rx + i;
    TFE_TRY(TFE_FN(ad_zeros_)(rx, x->lay.dims, dx));
    TFE_TY(view) kv = dx->v; /* dx without its stretched size-1 axes: same dense data */
    kv.lay.rank = nk;
    for (int k = 0; k < nk; k++) {
      kv.lay.dims[k] = g->lay.dims[lk[k]];
      kv.lay.strides[k] = dx->v.lay.strides[lk[k] - (ry - rx)];
    }
    tfe_status st = TFE_FN(ad_contract_unary_)(1, g, lg, 0, &kv, lk);
    if (st) TFE_FN(tensor_release)(dx);
    return st;
  }
  TFE_TRY(TFE_FN(ad_like_)(x, true, dx));
  TFE_TY(view) v;
  tfe_status st = TFE_FN(ad_view_of_)(op, p, &dx->v, &v);
  if (!st) st = TFE_FN(ad_copy_)(&v, g);
  if (st) TFE_FN(tensor_release)(dx);
  return st;
}
#endif /* TFE_FLOAT */
#endif
