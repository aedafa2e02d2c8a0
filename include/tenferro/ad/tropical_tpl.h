/* tenferro/ad_tropical_tpl.h — backward of any binary (or unary) integer-label einsum over the
 * tropical kinds (max-plus, min-plus, max-times), through the winning term of every output
 * element. Re-included per kind by ad.h; stamps nothing for other kinds.
 *
 * Gradient type convention: the cotangent of a tropical tensor is a tensor of its REAL kind
 * (tfe_tensor_f64 for maxplus_f64, ...), holding ordinary real numbers: the derivative of the
 * value v of each element, where C = max_terms(a + b) (or min, or max of a * b). */
#if !TFE__BODY_PHASE
#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_R)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)
#define TFE__RV TFE_CAT(tfe_view_, TFE__RS)

/* One distinct label: its size and the (summed) strides it moves in A, B, gC, gA, gB. */
typedef struct TFE_TY(trop_lab_) {
  int32_t id;
  int64_t dim, s[5];
} TFE_TY(trop_lab_);

/* Cotangents gA (A's shape) and gB (B's shape; B NULL: unary, gB untouched) of the real kind for
 * C[lc] = sum_{other labels} A[la] B[lb] in this tropical semiring, given gC (C's shape, real
 * kind). Repeated labels: diagonals of A / B (traces when summed) and of C (its off-diagonal
 * elements are the semiring zero: no gradient). Inputs may have any strides. The winners are
 * recomputed here (the rule is stateless); cost ~ one naive evaluation of the einsum. */
TFE_API tfe_status TFE_FN(rrule_tropical_einsum)(const TFE_TY(view) *A, const int32_t *la, const TFE_TY(view) *B,
                                                 const int32_t *lb, int nc, const int32_t *lc, const TFE__RV *gC,
                                                 TFE__RT *gA, TFE__RT *gB);
#undef TFE__RS
#undef TFE__RT
#undef TFE__RV
#endif
#else /* bodies */
#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
#define TFE__RS TFE_CAT(TFE__RSUF_, TFE_R)
#define TFE__RT TFE_CAT(tfe_tensor_, TFE__RS)
#define TFE__RV TFE_CAT(tfe_view_, TFE__RS)

/* Adds label id of size d (stride s in operand `which`); checks that sizes agree. */
TFE_INTERNAL tfe_status TFE_FN(trop_add_)(TFE_TY(trop_lab_) *L, int *n, int32_t id, int64_t d, int which, int64_t s,
                                          const char *fn) {
  int j = 0;
  while (j < *n && L[j].id != id) j++;
  if (j == *n) {
    if (*n >= 3 * TFE_MAX_RANK) return tfe__fail(TFE_ERR_RANK, fn, "too many labels");
    memset(&L[j], 0, sizeof L[j]);
    L[j].id = id; L[j].dim = d;
    (*n)++;
  } else if (L[j].dim != d)
    return tfe__fail(TFE_ERR_SHAPE, fn, "label %d has sizes %lld and %lld", (int)id, (long long)L[j].dim, (long long)d);
  L[j].s[which] += s;
  return TFE_OK;
}

/* Distinct labels, output labels first (nfree of them), then the summed ones. */
TFE_INTERNAL tfe_status TFE_FN(trop_labels_)(const TFE_TY(view) *A, const int32_t *la, const TFE_TY(view) *B,
                                             const int32_t *lb, int nc, const int32_t *lc, const TFE__RV *gC,
                                             const tfe_layout *gal, const tfe_layout *gbl, TFE_TY(trop_lab_) *L,
                                             int *nlab, int *nfree, const char *fn) {
  if (gC->lay.rank != nc) return tfe__fail(TFE_ERR_RANK, fn, "gC has rank %d, the output has %d labels", gC->lay.rank, nc);
  int n = 0;
  for (int i = 0; i < A->lay.rank; i++) /* input sizes first: the clearer message */
    TFE_TRY(TFE_FN(trop_add_)(L, &n, la[i], A->lay.dims[i], 0, 0, fn));
  for (int i = 0; B && i < B->lay.rank; i++) TFE_TRY(TFE_FN(trop_add_)(L, &n, lb[i], B->lay.dims[i], 1, 0, fn));
  n = 0;
  for (int c = 0; c < nc; c++) { /* output labels: sizes come from the inputs */
    int64_t d = -1;
    for (int i = 0; i < A->lay.rank; i++) if (la[i] == lc[c]) d = A->lay.dims[i];
    for (int i = 0; B && i < B->lay.rank; i++) if (lb[i] == lc[c]) d = B->lay.dims[i];
    if (d < 0) return tfe__fail(TFE_ERR_INVALID, fn, "output label %d appears in no input", (int)lc[c]);
    TFE_TRY(TFE_FN(trop_add_)(L, &n, lc[c], d, 2, gC->lay.strides[c], fn));
    if (gC->lay.dims[c] != d)
      return tfe__fail(TFE_ERR_SHAPE, fn, "gC dim %d is %lld, label %d has size %lld", c, (long long)gC->lay.dims[c],
                       (int)lc[c], (long long)d);
  }
  *nfree = n;
  for (int i = 0; i < A->lay.rank; i++) {
    TFE_TRY(TFE_FN(trop_add_)(L, &n, la[i], A->lay.dims[i], 0, A->lay.strides[i], fn));
    TFE_TRY(TFE_FN(trop_add_)(L, &n, la[i], A->lay.dims[i], 3, gal->strides[i], fn));
  }
  for (int i = 0; B && i < B->lay.rank; i++) {
    TFE_TRY(TFE_FN(trop_add_)(L, &n, lb[i], B->lay.dims[i], 1, B->lay.strides[i], fn));
    TFE_TRY(TFE_FN(trop_add_)(L, &n, lb[i], B->lay.dims[i], 4, gbl->strides[i], fn));
  }
  *nlab = n;
  return TFE_OK;
}

/* Odometer step over labels L[0..n): offsets o[0..5) follow; false when it wraps around. */
TFE_INTERNAL bool TFE_FN(trop_step_)(const TFE_TY(trop_lab_) *L, int n, int64_t *idx, int64_t *o) {
  for (int j = 0; j < n; j++) {
    if (++idx[j] < L[j].dim) { for (int w = 0; w < 5; w++) o[w] += L[j].s[w]; return true; }
    for (int w = 0; w < 5; w++) o[w] -= (L[j].dim - 1) * L[j].s[w];
    idx[j] = 0;
  }
  return false;
}

/* Walks every output element, finds its winning term (summed labels in column-major order of
 * first appearance, A's labels before B's; the first term wins ties, as
 * tfe_semiring_gemm_argmax_S does for a matrix product) and sends gC there. */
TFE_INTERNAL void TFE_FN(trop_walk_)(const TFE_TY(view) *A, const TFE_TY(view) *B, const TFE__RV *gC,
                                     const TFE_TY(trop_lab_) *L, int nlab, int nfree, TFE_R *ga, TFE_R *gb) {
  const TFE_T *a = A->data + A->lay.offset, *b = B ? B->data + B->lay.offset : NULL;
  const TFE_R *g = gC->data + gC->lay.offset;
  const TFE_TY(trop_lab_) *S = L + nfree;
  int ns = nlab - nfree;
  for (int j = 0; j < nlab; j++) if (L[j].dim == 0) return; /* no output element or no term */
  int64_t fi[3 * TFE_MAX_RANK] = {0}, fo[5] = {0};
  do {
    int64_t si[3 * TFE_MAX_RANK] = {0}, so[5] = {fo[0], fo[1], fo[2], fo[3], fo[4]}, win[5] = {0};
    TFE_T best = TFE_FN(sr_zero)();
    bool any = false;
    do {
      TFE_T v = b ? TFE_FN(sr_mul)(a[so[0]], b[so[1]]) : a[so[0]];
      if (!any || !TFE_FN(sr_eq)(TFE_FN(sr_add)(best, v), best)) { /* strictly better only */
        best = v; any = true;
        for (int w = 0; w < 5; w++) win[w] = so[w];
      }
    } while (TFE_FN(trop_step_)(S, ns, si, so));
    TFE_R gv = g[fo[2]];
#if TFE_ALG == TFE_ALG_MAXTIMES
    ga[win[3]] += b ? gv * b[win[1]].v : gv;
    if (b) gb[win[4]] += gv * a[win[0]].v;
#else
    ga[win[3]] += gv;
    if (b) gb[win[4]] += gv;
#endif
  } while (TFE_FN(trop_step_)(L, nfree, fi, fo));
}
TFE_API tfe_status TFE_FN(rrule_tropical_einsum)(const TFE_TY(view) *A, const int32_t *la, const TFE_TY(view) *B,
                                                 const int32_t *lb, int nc, const int32_t *lc, const TFE__RV *gC,
                                                 TFE__RT *gA, TFE__RT *gB) {
  TFE_CHECK_NULL(A); TFE_CHECK_NULL(gC); TFE_CHECK_NULL(gA);
  if (B) TFE_CHECK_NULL(gB);
  if ((A->lay.rank && !la) || (B && B->lay.rank && !lb) || (nc && !lc))
    return TFE_FAIL(TFE_ERR_NULL, "a label array is NULL");
  if (nc < 0 || nc > TFE_MAX_RANK) return TFE_FAIL(TFE_ERR_RANK, "output has %d labels", nc);
  int64_t n = 0;
  TFE_TRY(tfe_layout_check(&A->lay, &n));
  if (B) TFE_TRY(tfe_layout_check(&B->lay, &n));
  TFE_TRY(tfe_layout_check(&gC->lay, &n));
  TFE__RT ga = {0}, gb = {0};
  TFE_TRY(TFE_CAT(tfe_zeros_, TFE__RS)(&ga, A->lay.rank, A->lay.dims, TFE_COLMAJOR));
  tfe_status st = B ? TFE_CAT(tfe_zeros_, TFE__RS)(&gb, B->lay.rank, B->lay.dims, TFE_COLMAJOR) : TFE_OK;
  TFE_TY(trop_lab_) *L = st ? NULL : (TFE_TY(trop_lab_) *)tfe__calloc(3 * TFE_MAX_RANK, sizeof *L);
  if (!st && !L) st = TFE_ERR_ALLOC;
  int nlab = 0, nfree = 0;
  if (!st)
    st = TFE_FN(trop_labels_)(A, la, B, lb, nc, lc, gC, &ga.v.lay, B ? &gb.v.lay : NULL, L, &nlab, &nfree, __func__);
  if (!st) TFE_FN(trop_walk_)(A, B, gC, L, nlab, nfree, ga.v.data, B ? gb.v.data : NULL);
  tfe__free(L);
  if (st) { TFE_CAT(tfe_tensor_release_, TFE__RS)(&ga); TFE_CAT(tfe_tensor_release_, TFE__RS)(&gb); return st; }
  *gA = ga;
  if (B) *gB = gb;
  return TFE_OK;
}
#undef TFE__RS
#undef TFE__RT
#undef TFE__RV
#endif
#endif
