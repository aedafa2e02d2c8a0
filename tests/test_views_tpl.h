/* tests/test_views_tpl.h — per-kind differential tests of the view ops, re-included per kind
 * (shipped kinds by test_views.c, user kinds by test_userkind.c). Needs tv_* helpers from
 * tests/test_views_common.h. Only tfe_sr_* is used on elements, so any kind goes through. */
#define TV(name) TFE_CAT3(tv_, name, TFE_CAT(_, TFE_S))

/* A random view over a buffer whose element at address a holds from_f64(a + 1): equal values
 * mean equal addresses. */
typedef struct TV(case) { TFE_TY(view) v; TFE_T *buf; } TV(case);

/* (Re)allocate the buffer for the current layout (fits its offset first). */
static void TV(fill)(TV(case) *c, int64_t len) {
  c->buf = (TFE_T *)malloc((size_t)(len > 0 ? len : 1) * sizeof(TFE_T));
  assert_non_null(c->buf);
  for (int64_t a = 0; a < len; a++) c->buf[a] = TFE_FN(sr_from_f64)((double)(a + 1));
  c->v.data = c->buf;
  c->v.conj = false;
}
static void TV(make)(tu_rng *r, TV(case) *c, int maxrank) {
  int64_t len;
  tv_rand_layout(r, &c->v.lay, &len, maxrank);
  TV(fill)(c, len);
}
static void TV(refill)(TV(case) *c) {
  free(c->buf);
  TV(fill)(c, tv_fit_offset(&c->v.lay));
}

/* Every element of out equals the element of in at the index map(out index), read by explicit
 * address arithmetic on in's layout; out's dims must equal want_dims. */
static void TV(check)(const TV(case) *c, const TFE_TY(view) *out, int want_rank, const int64_t *want_dims,
                      tv_map_fn map, const void *ctx, bool conj) {
  const tfe_layout *IL = &c->v.lay;
  assert_int_equal(out->lay.rank, want_rank);
  for (int k = 0; k < want_rank; k++) assert_int_equal(out->lay.dims[k], want_dims[k]);
  assert_true(out->conj == conj);
  int64_t n = 1;
  for (int k = 0; k < want_rank; k++) n *= want_dims[k];
  int64_t oidx[TFE_MAX_RANK] = {0}, iidx[TFE_MAX_RANK];
  for (int64_t e = 0; e < n; e++) {
    map(ctx, oidx, iidx);
    int64_t a = IL->offset;
    for (int k = 0; k < IL->rank; k++) {
      assert_true(iidx[k] >= 0 && iidx[k] < IL->dims[k]);
      a += iidx[k] * IL->strides[k];
    }
    TFE_T want = c->buf[a], got = TFE_FN(sr_zero)();
    if (conj) want = TFE_FN(sr_conj)(want);
    assert_int_equal(TFE_FN(get)(out, oidx, &got), TFE_OK);
    if (!TFE_FN(sr_eq)(got, want)) fail_msg("%s: element %lld differs (address %lld)", TFE_STR(TFE_S), (long long)e, (long long)a);
    tv_odometer(want_rank, want_dims, oidx);
  }
}

static void TV(permute)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 8);
    tv_perm_ctx p;
    p.rank = c.v.lay.rank;
    tv_rand_perm(r, p.rank, p.perm);
    int64_t dims[TFE_MAX_RANK];
    for (int k = 0; k < p.rank; k++) dims[k] = c.v.lay.dims[p.perm[k]];
    TFE_TY(view) o;
    assert_int_equal(TFE_FN(permute)(&c.v, p.perm, &o), TFE_OK);
    TV(check)(&c, &o, p.rank, dims, tv_map_perm, &p, false);
    free(c.buf);
  }
}

static void TV(reshape)(tu_rng *r, int ncase) {
  int ok = 0, copy = 0;
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 8);
    if (tu_int(r, 0, 2) == 0) { /* dense-permuted inputs reshape more often */
      tv_dense_strides(r, &c.v.lay);
      TV(refill)(&c);
    }
    tv_reshape_ctx p;
    p.in = c.v.lay;
    p.order = tu_int(r, 0, 1) ? TFE_ROWMAJOR : TFE_COLMAJOR;
    tv_rand_reshape_dims(r, tfe_layout_numel(&c.v.lay), &p.rank, p.dims);
    bool possible = tv_reshape_possible(&p);
    TFE_TY(view) o;
    memset(&o, 0xA5, sizeof o);
    TFE_TY(view) keep = o;
    tfe_status st = TFE_FN(reshape)(&c.v, p.rank, p.dims, p.order, &o);
    if (possible) {
      assert_int_equal(st, TFE_OK);
      TV(check)(&c, &o, p.rank, p.dims, tv_map_reshape, &p, false);
      ok++;
    } else {
      TU_EXPECT_ERR(st, TFE_ERR_STRIDES, "needs a copy");
      assert_memory_equal(&o, &keep, sizeof o); /* untouched */
      copy++;
    }
    free(c.buf);
  }
  assert_true(ok > ncase / 10 && copy > 0); /* both branches exercised */
}

static void TV(broadcast)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 6);
    tv_bcast_ctx p;
    p.in = c.v.lay;
    p.rank = c.v.lay.rank + (int)tu_int(r, 0, 2);
    int lead = p.rank - c.v.lay.rank;
    for (int k = 0; k < p.rank; k++) {
      int i = k - lead;
      p.dims[k] = i < 0 ? tu_int(r, 0, 3) : c.v.lay.dims[i] == 1 ? tu_int(r, 0, 3) : c.v.lay.dims[i];
    }
    if (tv_numel(p.rank, p.dims) > 4096) { free(c.buf); continue; }
    TFE_TY(view) o;
    assert_int_equal(TFE_FN(broadcast)(&c.v, p.rank, p.dims, &o), TFE_OK);
    TV(check)(&c, &o, p.rank, p.dims, tv_map_bcast, &p, false);
    free(c.buf);
  }
}

static void TV(diagonal)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 7);
    tfe_layout *L = &c.v.lay;
    if (L->rank < 1) { free(c.buf); continue; }
    /* random grouping: each input axis joins an existing output axis of equal size or opens one */
    tv_diag_ctx p;
    p.rank = 0;
    int64_t dims[TFE_MAX_RANK];
    for (int k = 0; k < L->rank; k++) {
      int m = (int)tu_int(r, 0, p.rank);
      if (m < p.rank && tu_int(r, 0, 1)) { L->dims[k] = dims[m]; p.map[k] = m; continue; } /* force equal size */
      dims[p.rank] = L->dims[k];
      p.map[k] = p.rank++;
    }
    TV(refill)(&c); /* the dims changed */
    p.in_rank = L->rank;
    TFE_TY(view) o;
    assert_int_equal(TFE_FN(diagonal_map)(&c.v, p.map, p.rank, &o), TFE_OK);
    TV(check)(&c, &o, p.rank, dims, tv_map_diag, &p, false);
    /* the two-axis form agrees with the map form */
    if (L->rank >= 2) {
      int a1 = (int)tu_int(r, 0, L->rank - 1), a2 = (int)tu_int(r, 0, L->rank - 1);
      if (a1 != a2 && L->dims[a1] == L->dims[a2]) {
        int hi_ = a1 > a2 ? a1 : a2, lo_ = a1 < a2 ? a1 : a2;
        tv_diag_ctx q;
        q.in_rank = L->rank; q.rank = L->rank - 1;
        int64_t qd[TFE_MAX_RANK];
        for (int k = 0; k < L->rank; k++) q.map[k] = k == hi_ ? lo_ : (k > hi_ ? k - 1 : k);
        for (int k = 0; k < L->rank; k++) qd[q.map[k]] = L->dims[k];
        assert_int_equal(TFE_FN(diagonal)(&c.v, a1, a2, &o), TFE_OK);
        TV(check)(&c, &o, q.rank, qd, tv_map_diag, &q, false);
      }
    }
    free(c.buf);
  }
}

static void TV(slice)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 8);
    tv_slice_ctx p;
    int64_t dims[TFE_MAX_RANK];
    p.rank = c.v.lay.rank;
    for (int k = 0; k < p.rank; k++) tv_rand_range(r, c.v.lay.dims[k], &p.start[k], &p.stop[k], &p.step[k], &dims[k]);
    TFE_TY(view) o;
    assert_int_equal(TFE_FN(slice)(&c.v, p.start, p.stop, p.step, &o), TFE_OK);
    TV(check)(&c, &o, p.rank, dims, tv_map_slice, &p, false);
    if (p.rank > 0) { /* one axis */
      int ax = (int)tu_int(r, 0, p.rank - 1);
      tv_slice_ctx q = p;
      for (int k = 0; k < p.rank; k++) if (k != ax) { q.start[k] = 0; q.step[k] = 1; }
      int64_t qd[TFE_MAX_RANK];
      for (int k = 0; k < p.rank; k++) qd[k] = k == ax ? dims[k] : c.v.lay.dims[k];
      assert_int_equal(TFE_FN(slice_axis)(&c.v, ax, p.start[ax], p.stop[ax], p.step[ax], &o), TFE_OK);
      TV(check)(&c, &o, p.rank, qd, tv_map_slice, &q, false);
    }
    free(c.buf);
  }
}

static void TV(select)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 8);
    tfe_layout *L = &c.v.lay;
    int ax = L->rank ? (int)tu_int(r, 0, L->rank - 1) : 0;
    if (L->rank == 0 || L->dims[ax] == 0) { free(c.buf); continue; }
    tv_select_ctx p;
    p.axis = ax; p.index = tu_int(r, 0, L->dims[ax] - 1); p.in_rank = L->rank;
    int64_t dims[TFE_MAX_RANK];
    for (int k = 0, j = 0; k < L->rank; k++) if (k != ax) dims[j++] = L->dims[k];
    TFE_TY(view) o;
    assert_int_equal(TFE_FN(select)(&c.v, ax, p.index, &o), TFE_OK);
    TV(check)(&c, &o, L->rank - 1, dims, tv_map_select, &p, false);
    free(c.buf);
  }
}

static void TV(squeeze)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 8);
    tfe_layout *L = &c.v.lay;
    TFE_TY(view) o;
    /* squeeze all, then unsqueeze at a random place */
    tv_squeeze_ctx p;
    p.in_rank = L->rank;
    int64_t dims[TFE_MAX_RANK];
    int n = 0;
    for (int k = 0; k < L->rank; k++) { p.kept[k] = L->dims[k] != 1; if (p.kept[k]) dims[n++] = L->dims[k]; }
    assert_int_equal(TFE_FN(squeeze)(&c.v, TFE_ALL_AXES, &o), TFE_OK);
    TV(check)(&c, &o, n, dims, tv_map_squeeze, &p, false);
    for (int k = 0; k < L->rank; k++)
      if (L->dims[k] == 1) { /* one axis */
        n = 0;
        for (int j = 0; j < L->rank; j++) { p.kept[j] = j != k; if (j != k) dims[n++] = L->dims[j]; }
        assert_int_equal(TFE_FN(squeeze)(&c.v, k, &o), TFE_OK);
        TV(check)(&c, &o, n, dims, tv_map_squeeze, &p, false);
        break;
      }
    if (L->rank < TFE_MAX_RANK) {
      tv_select_ctx u; /* unsqueeze is the inverse of selecting index 0 of a size-1 axis */
      u.axis = (int)tu_int(r, 0, L->rank); u.index = 0; u.in_rank = L->rank + 1;
      for (int k = 0, j = 0; k <= L->rank; k++) dims[k] = k == u.axis ? 1 : L->dims[j++];
      assert_int_equal(TFE_FN(unsqueeze)(&c.v, u.axis, &o), TFE_OK);
      TV(check)(&c, &o, L->rank + 1, dims, tv_map_unsqueeze, &u, false);
      if (tfe_layout_is_dense(L, TFE_COLMAJOR)) assert_true(tfe_layout_is_dense(&o.lay, TFE_COLMAJOR));
    }
    free(c.buf);
  }
}

static void TV(conj_split)(tu_rng *r, int ncase) {
  for (int t = 0; t < ncase; t++) {
    TV(case) c;
    TV(make)(r, &c, 8);
    tfe_layout *L = &c.v.lay;
    tv_perm_ctx id;
    id.rank = L->rank;
    for (int k = 0; k < L->rank; k++) id.perm[k] = k;
    TFE_TY(view) o, o2;
    assert_int_equal(TFE_FN(conj)(&c.v, &o), TFE_OK);
    TV(check)(&c, &o, L->rank, L->dims, tv_map_perm, &id, true);
    assert_int_equal(TFE_FN(conj)(&o, &o2), TFE_OK);
    TV(check)(&c, &o2, L->rank, L->dims, tv_map_perm, &id, false);
    if (L->rank == 0) { free(c.buf); continue; }
    tv_split_ctx p;
    p.axis = (int)tu_int(r, 0, L->rank - 1);
    int np = (int)tu_int(r, 1, 4);
    int64_t sizes[4], left = L->dims[p.axis];
    for (int q = 0; q < np; q++) { sizes[q] = q == np - 1 ? left : tu_int(r, 0, left); left -= sizes[q]; }
    TFE_TY(view) parts[4];
    assert_int_equal(TFE_FN(split)(&c.v, p.axis, np, sizes, parts), TFE_OK);
    p.at = 0;
    for (int q = 0; q < np; q++) {
      int64_t dims[TFE_MAX_RANK];
      memcpy(dims, L->dims, sizeof(int64_t) * (size_t)L->rank);
      dims[p.axis] = sizes[q];
      TV(check)(&c, &parts[q], L->rank, dims, tv_map_split, &p, false);
      p.at += sizes[q];
    }
    /* parts of a non-overlapping view are disjoint, and the check proves it */
    tfe_overlap self = TFE_MAYBE_OVERLAPS, pair = TFE_MAYBE_OVERLAPS;
    assert_int_equal(TFE_FN(self_overlap)(&c.v, &self), TFE_OK);
    for (int q = 0; q + 1 < np && self == TFE_DISJOINT; q++) {
      assert_int_equal(TFE_FN(views_overlap)(&parts[q], &parts[q + 1], &pair), TFE_OK);
      assert_int_equal(pair, TFE_DISJOINT);
    }
    free(c.buf);
  }
}

/* Owning versions: same layouts as the view ops, one reference each, storage freed at the end. */
static void TV(tensor_ops)(tu_rng *r) {
  TFE_TY(tensor) t = {0}, a = {0}, b = {0};
  int64_t dims[3] = {2, 3, 4};
  assert_int_equal(TFE_FN(zeros)(&t, 3, dims, TFE_COLMAJOR), TFE_OK);
  int perm[3] = {2, 0, 1};
  assert_int_equal(TFE_FN(tensor_permute)(&t, perm, &a), TFE_OK);
  assert_int_equal(atomic_load(&t.st->refcount), 2);
  assert_int_equal(TFE_FN(tensor_slice_axis)(&a, 0, 3, -1, -2, &a), TFE_OK); /* in place: no new reference */
  assert_int_equal(atomic_load(&t.st->refcount), 2);
  assert_int_equal(a.v.lay.dims[0], 2);
  assert_int_equal(a.v.lay.strides[0], -12);
  int64_t fl[1] = {24};
  assert_int_equal(TFE_FN(tensor_reshape)(&t, 1, fl, TFE_COLMAJOR, &b), TFE_OK);
  assert_int_equal(TFE_FN(tensor_select)(&b, 0, 5, &b), TFE_OK);
  assert_int_equal(TFE_FN(tensor_unsqueeze)(&b, 0, &b), TFE_OK);
  assert_int_equal(TFE_FN(tensor_squeeze)(&b, TFE_ALL_AXES, &b), TFE_OK);
  assert_int_equal(TFE_FN(tensor_conj)(&b, &b), TFE_OK);
  assert_int_equal(b.v.lay.rank, 0);
  assert_int_equal(b.v.lay.offset, 5);
  TFE_FN(tensor_release)(&b);
  int64_t bd[4] = {5, 2, 3, 4};
  assert_int_equal(TFE_FN(tensor_broadcast)(&t, 4, bd, &b), TFE_OK);
  assert_int_equal(b.v.lay.strides[0], 0);
  TFE_FN(tensor_release)(&b);
  int64_t sq[2] = {3, 3};
  TFE_TY(tensor) m = {0}, d = {0};
  assert_int_equal(TFE_FN(zeros)(&m, 2, sq, TFE_ROWMAJOR), TFE_OK);
  assert_int_equal(TFE_FN(tensor_diagonal)(&m, 0, 1, &d), TFE_OK);
  assert_int_equal(d.v.lay.strides[0], 4);
  int map[2] = {0, 0};
  TFE_FN(tensor_release)(&d);
  assert_int_equal(TFE_FN(tensor_diagonal_map)(&m, map, 1, &d), TFE_OK);
  TFE_FN(tensor_release)(&d);
  int64_t st0[2] = {0, 0}, sp1[2] = {3, 3};
  assert_int_equal(TFE_FN(tensor_slice)(&m, st0, sp1, NULL, &d), TFE_OK);
  TFE_FN(tensor_release)(&d);
  TFE_TY(tensor) parts[3];
  int64_t sizes[3] = {1, 0, 2};
  assert_int_equal(TFE_FN(tensor_split)(&m, 1, 3, sizes, parts), TFE_OK);
  assert_int_equal(atomic_load(&m.st->refcount), 4);
  for (int q = 0; q < 3; q++) TFE_FN(tensor_release)(&parts[q]);
  TFE_FN(tensor_release)(&m);
  TFE_FN(tensor_release)(&a);
  TFE_FN(tensor_release)(&t);
  (void)r;
}

static void TV(all)(tu_rng *r, int ncase) {
  TV(permute)(r, ncase);
  TV(reshape)(r, ncase);
  TV(broadcast)(r, ncase);
  TV(diagonal)(r, ncase);
  TV(slice)(r, ncase);
  TV(select)(r, ncase);
  TV(squeeze)(r, ncase);
  TV(conj_split)(r, ncase);
  TV(tensor_ops)(r);
}

#undef TV
