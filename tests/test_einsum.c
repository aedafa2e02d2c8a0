/* tests/test_einsum.c — N-ary einsum: differential tests against a pairwise naive reference on
 * random networks (every kind and algebra, strided/broadcast/ellipsis/trace/batch, sliced and
 * unsliced, every path algorithm), optimizer checks, bad-input tests. */
#include "testutil.h"
#include <math.h>

/* ---- a kind-generic element vtable, stamped from the scalar table ------------------------------- */
typedef struct kind {
  tfe_dtype dt;
  size_t sz;
  int alg;
  bool cplx, isint, f32;
  void (*zero)(void *);
  void (*one)(void *);
  void (*add)(void *, const void *, const void *);
  void (*mul)(void *, const void *, const void *);
  void (*conj)(void *, const void *);
  void (*from2)(void *, double, double);
  double (*dist)(const void *, const void *);
  double (*mag)(const void *);
  tfe_status (*into)(void *out, const tfe_layout *ol, double alpha, double beta, const char *expr, int n,
                     void *const *data, const tfe_layout *lays, const bool *conj, const tfe_einsum_opts *o);
  tfe_status (*labels)(tfe_dyn *out, int n, void *const *data, const tfe_layout *lays, const bool *conj,
                       const int32_t *const *lab, const int32_t *olab, int orank, const tfe_einsum_opts *o);
  tfe_status (*owned)(tfe_dyn *out, const char *expr, int n, tfe_storage **st, const tfe_layout *lays,
                      const bool *conj, const tfe_einsum_opts *o);
} kind;

#define K_STAMP(s, T, R, alg, cplx, flt, DT)                                                          \
  static void zero_##s(void *r) { *(T *)r = tfe_sr_zero_##s(); }                                       \
  static void one_##s(void *r) { *(T *)r = tfe_sr_one_##s(); }                                         \
  static void add_##s(void *r, const void *a, const void *b) { *(T *)r = tfe_sr_add_##s(*(const T *)a, *(const T *)b); } \
  static void mul_##s(void *r, const void *a, const void *b) { *(T *)r = tfe_sr_mul_##s(*(const T *)a, *(const T *)b); } \
  static void conj_##s(void *r, const void *a) { *(T *)r = tfe_sr_conj_##s(*(const T *)a); }          \
  static void from2_##s(void *r, double re, double im) {                                              \
    R parts[2] = {(R)re, (R)im};                                                                       \
    memcpy(r, parts, sizeof(T));                                                                       \
  }                                                                                                    \
  static double dist_##s(const void *a, const void *b) { return tfe_sr_dist_##s(*(const T *)a, *(const T *)b); } \
  static double mag_##s(const void *a) {                                                              \
    R parts[2] = {0, 0};                                                                               \
    memcpy(parts, a, sizeof(T));                                                                       \
    double m = fabs((double)parts[0]);                                                                 \
    if (cplx) m += fabs((double)parts[1]);                                                             \
    return m;                                                                                          \
  }                                                                                                    \
  static tfe_view_##s *views_##s(int n, void *const *data, const tfe_layout *lays, const bool *conj) { \
    tfe_view_##s *v = (tfe_view_##s *)calloc((size_t)n + 1, sizeof *v);                                \
    for (int k = 0; k < n; k++) { v[k].data = (T *)data[k]; v[k].lay = lays[k]; v[k].conj = conj[k]; } \
    return v;                                                                                          \
  }                                                                                                    \
  static tfe_status into_##s(void *out, const tfe_layout *ol, double alpha, double beta, const char *expr, \
                             int n, void *const *data, const tfe_layout *lays, const bool *conj,        \
                             const tfe_einsum_opts *o) {                                                \
    tfe_view_##s *v = views_##s(n, data, lays, conj);                                                   \
    tfe_view_##s ov = {(T *)out, *ol, false};                                                          \
    tfe_status st = tfe_einsum_into_with(&ov, tfe_sr_from_f64_##s(alpha),                                \
                                         beta == 0 ? tfe_sr_zero_##s() : tfe_sr_from_f64_##s(beta),    \
                                         expr, n, v, o);                                                \
    free(v);                                                                                           \
    return st;                                                                                         \
  }                                                                                                    \
  static tfe_status labels_##s(tfe_dyn *out, int n, void *const *data, const tfe_layout *lays,           \
                               const bool *conj, const int32_t *const *lab, const int32_t *olab,        \
                               int orank, const tfe_einsum_opts *o) {                                   \
    tfe_view_##s *v = views_##s(n, data, lays, conj);                                                   \
    tfe_tensor_##s t = {0};                                                                            \
    tfe_status st = tfe_einsum_labels(&t, n, v, lab, olab, orank, o);                                   \
    free(v);                                                                                           \
    if (st == TFE_OK) { out->dtype = DT; out->data = t.v.data; out->lay = t.v.lay; out->conj = false; out->st = t.st; } \
    return st;                                                                                         \
  }                                                                                                    \
  static tfe_status owned_##s(tfe_dyn *out, const char *expr, int n, tfe_storage **st, const tfe_layout *lays, \
                              const bool *conj, const tfe_einsum_opts *o) {                             \
    tfe_tensor_##s *t = (tfe_tensor_##s *)calloc((size_t)n + 1, sizeof *t);                             \
    for (int k = 0; k < n; k++) { t[k].st = st[k]; t[k].v.data = (T *)st[k]->ptr; t[k].v.lay = lays[k]; t[k].v.conj = conj[k]; } \
    tfe_tensor_##s r = {0};                                                                            \
    tfe_status s_ = tfe_einsum_owned(&r, expr, n, t, o);                                                \
    for (int k = 0; k < n; k++) assert_null(t[k].st);                                                  \
    free(t);                                                                                           \
    if (s_ == TFE_OK) { out->dtype = DT; out->data = r.v.data; out->lay = r.v.lay; out->conj = false; out->st = r.st; } \
    return s_;                                                                                         \
  }
TFE_KINDS(K_STAMP)
#undef K_STAMP

static kind KINDS[TFE_DT_COUNT];
static void kinds_init(void) {
#define K_FILL(s, T, R, alg, cplx, flt, DT)                                                        \
  {                                                                                               \
    kind k = {DT, sizeof(T), TFE_ALG_##alg, cplx, TFE_ALG_##alg == 0 && !flt, sizeof(R) == 4 && flt, \
              zero_##s, one_##s, add_##s, mul_##s, conj_##s, from2_##s, dist_##s, mag_##s, into_##s, labels_##s, \
              owned_##s};                                                                         \
    KINDS[DT] = k;                                                                                \
  }
  TFE_KINDS(K_FILL)
#undef K_FILL
}
static void rand_elem(const kind *k, void *r, tu_rng *g) {
  if (k->isint) k->from2(r, (double)tu_int(g, -1, 1), 0);
  else if (k->alg == TFE_ALG_MAXTIMES) k->from2(r, 2 * tu_unif(g), 0);
  else if (k->alg != TFE_ALG_STANDARD) k->from2(r, (double)tu_int(g, -8, 8) / 4.0, 0);
  else k->from2(r, 2 * tu_unif(g) - 1, 2 * tu_unif(g) - 1);
}

/* ---- the reference: dense tensors over distinct labels, contracted pairwise ---------------------- */
#define MAXL 40
typedef struct rt { int r; int lab[MAXL]; int64_t dims[MAXL]; unsigned char *d; } rt;

static int64_t rt_numel(const rt *t) { int64_t n = 1; for (int i = 0; i < t->r; i++) n *= t->dims[i]; return n; }
static int rt_pos(const rt *t, int l) { for (int i = 0; i < t->r; i++) if (t->lab[i] == l) return i; return -1; }
/* Offset of the element of t at the label assignment val[] (column-major). */
static int64_t rt_off(const rt *t, const int64_t *val) {
  int64_t o = 0, s = 1;
  for (int i = 0; i < t->r; i++) { o += val[t->lab[i]] * s; s *= t->dims[i]; }
  return o;
}
/* Canonical form of a strided operand: distinct labels, broadcast axes read at 0. */
static rt rt_from_view(const kind *k, const unsigned char *data, const tfe_layout *L, const int *lab, bool cj,
                       const int64_t *size) {
  rt t;
  t.r = 0;
  for (int a = 0; a < L->rank; a++)
    if (rt_pos(&t, lab[a]) < 0) { t.lab[t.r] = lab[a]; t.dims[t.r] = size[lab[a]]; t.r++; }
  int64_t n = rt_numel(&t);
  t.d = (unsigned char *)malloc((size_t)(n > 0 ? n : 1) * k->sz);
  int64_t val[MAXL * 2] = {0}, idx[MAXL] = {0};
  for (int64_t e = 0; e < n; e++) {
    for (int i = 0; i < t.r; i++) val[t.lab[i]] = idx[i];
    int64_t o = L->offset;
    for (int a = 0; a < L->rank; a++) o += (L->dims[a] == 1 ? 0 : val[lab[a]]) * L->strides[a];
    unsigned char *dst = t.d + (size_t)rt_off(&t, val) * k->sz;
    if (cj) k->conj(dst, data + o * (int64_t)k->sz); else memcpy(dst, data + o * (int64_t)k->sz, k->sz);
    for (int i = 0; i < t.r; i++) { if (++idx[i] < t.dims[i]) break; idx[i] = 0; }
  }
  return t;
}
/* Contracts a and b (b may be NULL) keeping the labels with keep[l]. */
static rt rt_contract(const kind *k, const rt *a, const rt *b, const bool *keep, const int64_t *size) {
  rt u, o;
  u.r = 0; o.r = 0;
  const rt *ops[2] = {a, b};
  for (int q = 0; q < 2; q++)
    for (int i = 0; ops[q] && i < ops[q]->r; i++) {
      int l = ops[q]->lab[i];
      if (rt_pos(&u, l) >= 0) continue;
      u.lab[u.r] = l; u.dims[u.r++] = size[l];
      if (keep[l]) { o.lab[o.r] = l; o.dims[o.r++] = size[l]; }
    }
  int64_t no = rt_numel(&o), nu = rt_numel(&u);
  o.d = (unsigned char *)malloc((size_t)(no > 0 ? no : 1) * k->sz);
  for (int64_t e = 0; e < no; e++) k->zero(o.d + e * (int64_t)k->sz);
  int64_t val[MAXL * 2] = {0}, idx[MAXL] = {0};
  unsigned char tmp[16];
  for (int64_t e = 0; e < nu; e++) {
    for (int i = 0; i < u.r; i++) val[u.lab[i]] = idx[i];
    const unsigned char *x = a->d + rt_off(a, val) * (int64_t)k->sz;
    unsigned char *dst = o.d + rt_off(&o, val) * (int64_t)k->sz;
    if (b) { k->mul(tmp, x, b->d + rt_off(b, val) * (int64_t)k->sz); k->add(dst, dst, tmp); }
    else k->add(dst, dst, x);
    for (int i = 0; i < u.r; i++) { if (++idx[i] < u.dims[i]) break; idx[i] = 0; }
  }
  return o;
}

/* ---- random networks ------------------------------------------------------------------------------- */
typedef struct net {
  int n, nl, E;                /* operands, labels (ellipsis labels are nl-E .. nl-1) */
  int rank[16];
  int lab[16][12];             /* label per axis */
  int ell[16];                 /* ellipsis position in the written term, -1 none */
  int nell[16];                /* ellipsis axes of the operand */
  int64_t size[MAXL * 2];      /* bound size per label */
  int orank, olab[MAXL];
  bool implicit, parens;
  int pa, pb;                  /* parenthesised range [pa, pb] */
  tfe_layout lay[16];
  unsigned char *buf[16];
  bool conj[16];
} net;

static const char *GLYPHS[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "x", "y", "z", "A", "B",
                               "\xc3\x81", "\xc3\xa9", "\xd0\x96", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "q", "r", "s"};
#define NGLYPH 24

/* Strided storage for a tensor of dims: random memory order, gaps, reversals, zero strides. */
static int64_t make_layout(tu_rng *g, const kind *k, int r, const int64_t *dims, tfe_layout *L, unsigned char **buf,
                           bool allow_zero) {
  int perm[16];
  for (int i = 0; i < r; i++) perm[i] = i;
  for (int i = r - 1; i > 0; i--) { int j = (int)tu_int(g, 0, i); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  int64_t s = 1;
  L->rank = r; L->offset = 0;
  for (int q = 0; q < r; q++) {
    int i = perm[q];
    L->dims[i] = dims[i];
    L->strides[i] = (allow_zero && dims[i] > 1 && tu_int(g, 0, 19) == 0) ? 0 : s;
    s *= (dims[i] > 0 ? dims[i] : 1) * (tu_int(g, 0, 4) == 0 ? 2 : 1);
  }
  for (int i = 0; i < r; i++)
    if (tu_int(g, 0, 3) == 0 && dims[i] > 1) { L->offset += (dims[i] - 1) * L->strides[i]; L->strides[i] = -L->strides[i]; }
  int64_t n = s + 1;
  *buf = (unsigned char *)malloc((size_t)n * k->sz);
  for (int64_t e = 0; e < n; e++) rand_elem(k, *buf + e * (int64_t)k->sz, g);
  return n;
}

/* A random network; returns false when its reference would be too expensive. */
static bool make_net(tu_rng *g, const kind *k, net *N, bool allow_ell, int nmin, int nmax) {
  memset(N, 0, sizeof *N);
  N->n = (int)tu_int(g, nmin, nmax);
  int nl = (int)tu_int(g, 1, N->n + 4);
  if (nl > 16) nl = 16;
  int Ereq = allow_ell && tu_int(g, 0, 2) == 0 ? (int)tu_int(g, 1, 2) : 0;
  N->E = Ereq;
  N->nl = nl + N->E;
  int64_t truesz[MAXL];
  for (int l = 0; l < N->nl; l++) truesz[l] = tu_int(g, 0, 49) == 0 ? 0 : tu_int(g, 1, tu_int(g, 0, 3) == 0 ? 4 : 3);
  int64_t bound[MAXL];
  for (int l = 0; l < N->nl; l++) bound[l] = -1;
  for (int t = 0; t < N->n; t++) {
    int r = (int)tu_int(g, 0, 4), a = 0;
    N->ell[t] = -1; N->nell[t] = 0;
    for (int i = 0; i < r; i++) {
      int l = (int)tu_int(g, 0, nl - 1);
      if (i > 0 && tu_int(g, 0, 6) == 0) l = N->lab[t][tu_int(g, 0, i - 1)]; /* repeated: diagonal/trace */
      N->lab[t][a++] = l;
    }
    if (N->E && tu_int(g, 0, 1)) {
      N->ell[t] = (int)tu_int(g, 0, a);
      N->nell[t] = (int)tu_int(g, 0, N->E);
      /* insert the ellipsis labels (right-aligned) at position ell */
      for (int i = a - 1; i >= N->ell[t]; i--) N->lab[t][i + N->nell[t]] = N->lab[t][i];
      for (int q = 0; q < N->nell[t]; q++) N->lab[t][N->ell[t] + q] = nl + N->E - N->nell[t] + q;
      a += N->nell[t];
    }
    N->rank[t] = a;
  }
  int Eact = 0;
  for (int t = 0; t < N->n; t++) if (N->nell[t] > Eact) Eact = N->nell[t];
  N->E = Eact; N->nl = nl + Eact;
  /* shift ellipsis labels to the actual width */
  for (int t = 0; t < N->n; t++)
    for (int a = 0; a < N->rank[t]; a++)
      if (N->lab[t][a] >= nl) N->lab[t][a] -= Ereq - Eact;
  /* dims: broadcast size-1 axes now and then */
  int64_t dims[16][12];
  for (int t = 0; t < N->n; t++)
    for (int a = 0; a < N->rank[t]; a++) {
      int l = N->lab[t][a];
      dims[t][a] = (truesz[l] > 1 && tu_int(g, 0, 9) == 0) ? 1 : truesz[l];
      if (dims[t][a] > bound[l]) bound[l] = dims[t][a];
    }
  /* an axis is broadcast only if some other axis of its label has the full size */
  for (int t = 0; t < N->n; t++)
    for (int a = 0; a < N->rank[t]; a++) if (dims[t][a] != bound[N->lab[t][a]] && dims[t][a] != 1) return false;
  for (int l = 0; l < N->nl; l++) N->size[l] = bound[l] < 0 ? 1 : bound[l];
  /* output */
  int count[MAXL] = {0};
  bool seen[MAXL] = {0};
  for (int t = 0; t < N->n; t++) for (int a = 0; a < N->rank[t]; a++) { count[N->lab[t][a]]++; seen[N->lab[t][a]] = true; }
  N->implicit = tu_int(g, 0, 4) == 0;
  N->orank = 0;
  if (N->implicit) {
    for (int l = nl; l < N->nl; l++) N->olab[N->orank++] = l;
    /* numpy order: code point order of the glyphs */
    int order[MAXL], m = 0;
    for (int l = 0; l < nl; l++) if (count[l] == 1) order[m++] = l;
    for (int i = 1; i < m; i++)
      for (int j = i; j > 0 && strcmp(GLYPHS[order[j - 1]], GLYPHS[order[j]]) > 0; j--) { int x = order[j]; order[j] = order[j - 1]; order[j - 1] = x; }
    for (int i = 0; i < m; i++) N->olab[N->orank++] = order[i];
  } else {
    for (int l = 0; l < nl; l++) if (seen[l] && tu_int(g, 0, 2) == 0) N->olab[N->orank++] = l;
    int base = N->orank;
    for (int i = N->orank - 1; i > 0; i--) { int j = (int)tu_int(g, 0, i); int x = N->olab[i]; N->olab[i] = N->olab[j]; N->olab[j] = x; }
    int at = (int)tu_int(g, 0, base); /* ellipsis block position in the output */
    for (int q = 0; q < Eact; q++) {
      for (int i = N->orank; i > at + q; i--) N->olab[i] = N->olab[i - 1];
      N->olab[at + q] = nl + q;
      N->orank++;
    }
  }
  N->parens = N->n >= 3 && tu_int(g, 0, 4) == 0;
  if (N->parens) { N->pa = (int)tu_int(g, 0, N->n - 2); N->pb = (int)tu_int(g, N->pa + 1, N->n - 1); }
  /* cost guard for the reference: sequential pairwise union sizes */
  double worst = 1;
  bool have[MAXL] = {0};
  for (int t = 0; t < N->n; t++) {
    for (int a = 0; a < N->rank[t]; a++) have[N->lab[t][a]] = true;
    double u = 1;
    for (int l = 0; l < N->nl; l++) if (have[l]) u *= (double)N->size[l];
    if (u > worst) worst = u;
  }
  if (worst > 3e4) return false;
  for (int t = 0; t < N->n; t++) {
    make_layout(g, k, N->rank[t], dims[t], &N->lay[t], &N->buf[t], true);
    N->conj[t] = k->cplx && tu_int(g, 0, 2) == 0;
  }
  return true;
}
static void free_net(net *N) { for (int t = 0; t < N->n; t++) free(N->buf[t]); }

/* The expression string of a network. */
static void net_expr(const net *N, char *s) {
  int nl = N->nl - N->E;
  s[0] = 0;
  for (int t = 0; t < N->n; t++) {
    if (t) strcat(s, ",");
    if (N->parens && t == N->pa) strcat(s, "(");
    for (int a = 0; a <= N->rank[t];) {
      if (a == N->ell[t]) {
        strcat(s, "...");
        if (N->nell[t] > 0) { a += N->nell[t]; continue; }
      }
      if (a == N->rank[t]) break;
      strcat(s, GLYPHS[N->lab[t][a]]);
      a++;
    }
    if (N->parens && t == N->pb) strcat(s, ")");
  }
  if (N->implicit) return;
  strcat(s, "->");
  bool ell_done = false;
  for (int i = 0; i < N->orank; i++) {
    if (N->olab[i] >= nl) { if (!ell_done) strcat(s, "..."); ell_done = true; continue; }
    strcat(s, GLYPHS[N->olab[i]]);
  }
}

/* Reference result (dense over olab order) of the network. */
static rt reference(const kind *k, const net *N, tu_rng *g) {
  rt ts[16];
  int m = N->n;
  for (int t = 0; t < N->n; t++) ts[t] = rt_from_view(k, N->buf[t], &N->lay[t], N->lab[t], N->conj[t], N->size);
  bool keep[MAXL * 2];
  while (m > 1) {
    int i = (int)tu_int(g, 0, m - 1), j = (int)tu_int(g, 0, m - 2);
    if (j >= i) j++;
    memset(keep, 0, sizeof keep);
    for (int q = 0; q < m; q++) if (q != i && q != j) for (int a = 0; a < ts[q].r; a++) keep[ts[q].lab[a]] = true;
    for (int a = 0; a < N->orank; a++) keep[N->olab[a]] = true;
    rt c = rt_contract(k, &ts[i], &ts[j], keep, N->size);
    free(ts[i].d); free(ts[j].d);
    int hi = i > j ? i : j, lo = i > j ? j : i;
    ts[hi] = ts[m - 1]; ts[lo] = c;
    m--;
  }
  memset(keep, 0, sizeof keep);
  for (int a = 0; a < N->orank; a++) keep[N->olab[a]] = true;
  rt r = rt_contract(k, &ts[0], NULL, keep, N->size);
  free(ts[0].d);
  /* the output in olab order */
  rt o;
  o.r = N->orank;
  for (int a = 0; a < o.r; a++) { o.lab[a] = N->olab[a]; o.dims[a] = N->size[N->olab[a]]; }
  int64_t n = rt_numel(&o);
  o.d = (unsigned char *)malloc((size_t)(n > 0 ? n : 1) * k->sz);
  int64_t val[MAXL * 2] = {0}, idx[MAXL] = {0};
  for (int64_t e = 0; e < n; e++) {
    for (int a = 0; a < o.r; a++) val[o.lab[a]] = idx[a];
    memcpy(o.d + rt_off(&o, val) * (int64_t)k->sz, r.d + rt_off(&r, val) * (int64_t)k->sz, k->sz);
    for (int a = 0; a < o.r; a++) { if (++idx[a] < o.dims[a]) break; idx[a] = 0; }
  }
  free(r.d);
  return o;
}

static double tol_of(const kind *k) {
  if (k->isint) return 0;
  if (k->alg != TFE_ALG_STANDARD) return k->f32 || k->sz == 4 ? 1e-4 : 1e-10;
  return k->f32 || k->sz == 8 ? 2e-3 : 1e-9;
}

/* Compares out (strided) with alpha*ref + beta*old (old: a copy of out before the call). */
static void check_result(const kind *k, const rt *ref, const unsigned char *out, const tfe_layout *ol,
                         const unsigned char *old, double alpha, double beta, bool unit, const char *what) {
  int64_t n = rt_numel(ref), idx[MAXL] = {0};
  double scale = 1;
  for (int64_t e = 0; e < n; e++) { double m = k->mag(ref->d + e * (int64_t)k->sz); if (isfinite(m) && m > scale) scale = m; }
  unsigned char a[16], b[16], want[16], t1[16];
  k->from2(a, alpha, 0);
  if (unit) k->one(a);
  k->from2(b, beta, 0);
  for (int64_t e = 0; e < n; e++) {
    int64_t o = ol->offset, r = 0, s = 1;
    for (int i = 0; i < ol->rank; i++) { o += idx[i] * ol->strides[i]; r += idx[i] * s; s *= ref->dims[i]; }
    k->mul(want, a, ref->d + r * (int64_t)k->sz);
    if (beta != 0) { k->mul(t1, b, old + o * (int64_t)k->sz); k->add(want, want, t1); }
    double d = k->dist(want, out + o * (int64_t)k->sz);
    if (!(d <= tol_of(k) * (scale + 1)))
      fail_msg("%s: %s element %lld differs by %g (scale %g)", what, tfe_dtype_name(k->dt), (long long)e, d, scale);
    for (int i = 0; i < ol->rank; i++) { if (++idx[i] < ol->dims[i]) break; idx[i] = 0; }
  }
}

/* Per kind: pairwise steps planned as broadcast products (tfe_zip_S), owned calls whose result
 * landed in an operand's storage. */
static int zip_steps[TFE_DT_COUNT], owned_reused[TFE_DT_COUNT];

/* The consuming form on copies of the case's operands: checked against the reference. */
static void owned_case(const kind *k, net *N, const char *expr, const rt *ref, const tfe_einsum_opts *o) {
  tfe_storage *st[16];
  for (int t = 0; t < N->n; t++) {
    int64_t lo = 0, hi = -1;
    tfe_layout_extent(&N->lay[t], &lo, &hi);
    size_t bytes = (size_t)(hi + 1 > 0 ? hi + 1 : 1) * k->sz;
    assert_int_equal(tfe_storage_new(bytes, &st[t]), TFE_OK);
    memcpy(st[t]->ptr, N->buf[t], bytes);
  }
  void *ptrs[16];
  for (int t = 0; t < N->n; t++) ptrs[t] = st[t]->ptr;
  tfe_dyn res;
  memset(&res, 0, sizeof res);
  tfe_status s = k->owned(&res, expr, N->n, st, N->lay, N->conj, o);
  if (s != TFE_OK) fail_msg("owned einsum '%s' (%s) failed: %s", expr, tfe_dtype_name(k->dt), tfe_last_error());
  for (int t = 0; t < N->n; t++) if (res.st && res.st->ptr == ptrs[t]) owned_reused[k->dt]++;
  check_result(k, ref, (const unsigned char *)res.data, &res.lay, NULL, 1, 0, true, expr);
  tfe_storage_release(res.st);
}

/* One random differential case. */
static void one_case(tu_rng *g, const kind *k, int nmin, int nmax, int *nsliced_seen) {
  net N;
  while (!make_net(g, k, &N, true, nmin, nmax)) {}
  char expr[1024];
  net_expr(&N, expr);
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.seed = tu_next(g);
  int algo = (int)tu_int(g, 0, 4);
  int path[64];
  if (algo == 4 && !N.parens) { /* a random given path in the linear format */
    o.algo = TFE_PATH_GIVEN; o.path = path; o.path_nsteps = N.n - 1;
    o.path_format = tu_int(g, 0, 1) ? TFE_PATH_SSA : TFE_PATH_LINEAR;
    bool used[64] = {0};
    for (int s = 0; s + 1 < N.n; s++) {
      if (o.path_format == TFE_PATH_LINEAR) {
        int m = N.n - s, i = (int)tu_int(g, 0, m - 1), j = (int)tu_int(g, 0, m - 2);
        path[2 * s] = i; path[2 * s + 1] = j >= i ? j + 1 : j;
      } else {
        int av[64], na = 0;
        for (int q = 0; q < N.n + s; q++) if (!used[q]) av[na++] = q;
        int i = (int)tu_int(g, 0, na - 1), j = (int)tu_int(g, 0, na - 2);
        if (j >= i) j++;
        path[2 * s] = av[i]; path[2 * s + 1] = av[j]; used[av[i]] = used[av[j]] = true;
      }
    }
  } else if (algo == 3) { o.algo = TFE_PATH_ANNEAL; o.time_budget = 0.002; }
  else if (algo == 2 && N.n <= 10) o.algo = TFE_PATH_DP;
  else o.algo = algo == 1 ? TFE_PATH_GREEDY : TFE_PATH_AUTO;
  if (tu_int(g, 0, 2) == 0) o.memory_limit = (int64_t)k->sz * tu_int(g, 1, 12);
  o.out_order = tu_int(g, 0, 1) ? TFE_ROWMAJOR : TFE_COLMAJOR;
  rt ref = reference(k, &N, g);
  /* output: strided, prefilled; alpha/beta now and then */
  int64_t odims[MAXL];
  for (int a = 0; a < N.orank; a++) odims[a] = N.size[N.olab[a]];
  tfe_layout ol;
  unsigned char *out;
  int64_t nout = make_layout(g, k, N.orank, odims, &ol, &out, false);
  unsigned char *old = (unsigned char *)malloc((size_t)nout * k->sz);
  memcpy(old, out, (size_t)nout * k->sz);
  bool use_labels = !N.parens && N.E == 0 && tu_int(g, 0, 5) == 0;
  double alpha = 1, beta = 0;
  tfe_status st;
  void *data[16];
  for (int t = 0; t < N.n; t++) data[t] = N.buf[t];
  if (use_labels) {
    int32_t lab32[16][12], olab32[MAXL];
    const int32_t *lp[16];
    for (int t = 0; t < N.n; t++) { for (int a = 0; a < N.rank[t]; a++) lab32[t][a] = 1000 + 7 * N.lab[t][a]; lp[t] = lab32[t]; }
    for (int a = 0; a < N.orank; a++) olab32[a] = 1000 + 7 * N.olab[a];
    tfe_dyn res;
    memset(&res, 0, sizeof res);
    if (N.implicit) { /* implicit integer output: labels seen once, ascending = glyph index order */
      N.orank = 0;
      int count[MAXL] = {0};
      for (int t = 0; t < N.n; t++) for (int a = 0; a < N.rank[t]; a++) count[N.lab[t][a]]++;
      for (int l = 0; l < N.nl; l++) if (count[l] == 1) N.olab[N.orank++] = l;
      free(ref.d);
      tu_rng g3 = {tu_next(g) | 1};
      ref = reference(k, &N, &g3);
    }
    st = k->labels(&res, N.n, data, N.lay, N.conj, lp, N.implicit ? NULL : olab32, N.orank, &o);
    if (st != TFE_OK) fail_msg("labels form of %s failed: %s", expr, tfe_last_error());
    check_result(k, &ref, (const unsigned char *)res.data, &res.lay, NULL, 1, 0, true, expr);
    tfe_storage_release(res.st);
  } else {
    if (tu_int(g, 0, 1)) { alpha = k->isint ? -1 : 0.5; beta = k->isint ? 1 : (k->alg == TFE_ALG_MAXTIMES ? 0.25 : -0.75); }
    st = k->into(out, &ol, alpha, beta, expr, N.n, data, N.lay, N.conj, &o);
    if (st != TFE_OK) fail_msg("einsum '%s' (%s, algo %d) failed: %s", expr, tfe_dtype_name(k->dt), (int)o.algo, tfe_last_error());
    check_result(k, &ref, out, &ol, old, alpha, beta, false, expr);
    if (tu_int(g, 0, 2) == 0) owned_case(k, &N, expr, &ref, &o);
  }
  if (!N.parens) { /* count the steps that ran as broadcast products */
    tfe_einsum_plan *p = NULL;
    const tfe_layout *lp[16];
    for (int t = 0; t < N.n; t++) lp[t] = &N.lay[t];
    if (tfe_einsum_plan_new(&p, k->dt, expr, N.n, lp, &o) == TFE_OK) {
      for (int s = 0; s + 1 < p->nsteps; s++) zip_steps[k->dt] += p->step[s].zip;
      tfe_einsum_plan_release(p);
    }
  }
  if (o.memory_limit && nsliced_seen) {
    tfe_einsum_plan *p = NULL;
    const tfe_layout *lp[16];
    for (int t = 0; t < N.n; t++) lp[t] = &N.lay[t];
    if (!N.parens && tfe_einsum_plan_new(&p, k->dt, expr, N.n, lp, &o) == TFE_OK) {
      if (p->nslices > 1) (*nsliced_seen)++;
      tfe_einsum_plan_release(p);
    }
  }
  free(ref.d); free(out); free(old);
  free_net(&N);
}

static void test_differential(void **state) {
  (void)state;
  kinds_init();
  tu_rng g = {0x1234567};
  int cases = tu_cases(3000), sliced = 0;
  for (int c = 0; c < cases; c++) one_case(&g, &KINDS[c % TFE_DT_COUNT], 3, 12, &sliced);
  for (int c = 0; c < tu_cases(300); c++) one_case(&g, &KINDS[c % TFE_DT_COUNT], 1, 2, NULL);
  assert_true(sliced > cases / 20); /* slicing really happened */
  for (int d = 0; d < TFE_DT_COUNT; d++) { /* every kind went through the zip and owned-reuse paths */
    if (getenv("TFE_EIN_COUNTS")) printf("%s zip %d owned %d\n", tfe_dtype_name((tfe_dtype)d), zip_steps[d], owned_reused[d]);
    if (zip_steps[d] < 3 || owned_reused[d] < 1)
      fail_msg("%s: %d zip steps, %d owned results in operand storage", tfe_dtype_name((tfe_dtype)d), zip_steps[d], owned_reused[d]);
  }
  tfe_einsum_cache_clear();
}

/* ---- hand-written semantics -------------------------------------------------------------------------- */
static tfe_view_f64 rowmajor(double *d, int r, const int64_t *dims) {
  tfe_view_f64 v = {d, {0}, false};
  tfe_layout_dense(r, dims, TFE_ROWMAJOR, &v.lay);
  return v;
}
static void test_semantics(void **state) {
  (void)state;
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  int64_t d23[2] = {2, 3}, d32[2] = {3, 2}, d33[2] = {3, 3};
  tfe_view_f64 v[3] = {rowmajor(a, 2, d23), rowmajor(b, 2, d32), rowmajor(c, 2, d33)};
  tfe_tensor_f64 t = {0};
  /* matrix product, column-major result */
  assert_int_equal(tfe_einsum(&t, "ij,jk->ik", 2, v), TFE_OK);
  double want[4] = {4, 10, 5, 11};
  for (int i = 0; i < 4; i++) assert_true(t.v.data[i] == want[i]);
  tfe_tensor_release_f64(&t);
  /* implicit output: labels seen once, in code point order ('B' < 'a') */
  assert_int_equal(tfe_einsum(&t, "aB,Bc", 2, v), TFE_OK);
  assert_int_equal(t.v.lay.rank, 2);
  tfe_tensor_release_f64(&t);
  /* trace, diagonal */
  assert_int_equal(tfe_einsum(&t, "ii", 1, &v[2]), TFE_OK);
  assert_true(t.v.lay.rank == 0 && t.v.data[0] == 15);
  tfe_tensor_release_f64(&t);
  assert_int_equal(tfe_einsum(&t, "ii->i", 1, &v[2]), TFE_OK);
  assert_true(t.v.data[0] == 1 && t.v.data[1] == 5 && t.v.data[2] == 9);
  tfe_tensor_release_f64(&t);
  /* parentheses change the order, not the value */
  tfe_view_f64 w[3] = {v[0], v[1], v[0]};
  tfe_tensor_f64 t2 = {0};
  assert_int_equal(tfe_einsum(&t, "ij,(jk,kl)->il", 3, w), TFE_OK);
  assert_int_equal(tfe_einsum(&t2, "(ij,jk),kl->il", 3, w), TFE_OK);
  for (int i = 0; i < 4; i++) assert_true(fabs(t.v.data[i] - t2.v.data[i]) < 1e-12);
  tfe_tensor_release_f64(&t); tfe_tensor_release_f64(&t2);
  /* ellipsis broadcasting: (2,1,3) with (3,) -> ... is (2,1)... with (1,3)x(3,)? */
  double e1[6] = {1, 2, 3, 4, 5, 6}, e2[4] = {1, 10, 100, 1000};
  int64_t de1[3] = {2, 1, 3}, de2[2] = {1, 4};
  tfe_view_f64 ev[2] = {rowmajor(e1, 3, de1), rowmajor(e2, 2, de2)};
  assert_int_equal(tfe_einsum(&t, "...j,...->...", 2, ev), TFE_OK); /* broadcast to (2,4) */
  assert_int_equal(t.v.lay.rank, 2);
  assert_true(t.v.lay.dims[0] == 2 && t.v.lay.dims[1] == 4);
  /* element (1, 2): sum_j e1[1,0,j] * e2[2,0] = 15 * 100 */
  assert_true(t.v.data[1 + 2 * 2] == 1500);
  tfe_tensor_release_f64(&t);
  /* Unicode labels */
  assert_int_equal(tfe_einsum(&t, "i\xc3\x81,\xc3\x81\xf0\x9f\x98\x80->i\xf0\x9f\x98\x80", 2, v), TFE_OK);
  for (int i = 0; i < 4; i++) assert_true(t.v.data[i] == want[i]);
  tfe_tensor_release_f64(&t);
  /* whitespace is ignored */
  assert_int_equal(tfe_einsum(&t, " ij , jk -> ik ", 2, v), TFE_OK);
  tfe_tensor_release_f64(&t);
  tfe_einsum_cache_clear();
}

/* ---- errors ------------------------------------------------------------------------------------------- */
static void test_parse_errors(void **state) {
  (void)state;
  static const struct { const char *e; const char *msg; } bad[] = {
      {"ij,jk-ik", "'-' not followed by '>' at column 6"},
      {"ij>k", "'>' without '-' before it at column 3"},
      {"i.j", "'.' that is not part of an ellipsis '...' at column 2"},
      {"i......", "second ellipsis '...' in one term at column 5"},
      {"(ij,jk", "'(' is never closed at column 1"},
      {"ij,jk)", "')' without a matching '(' at column 6"},
      {"ij,(jk->k)", "'->' inside parentheses at column 7"},
      {"ij->i,j", "',' in the output (one output only) at column 6"},
      {"ij->(i)", "parenthesis in the output at column 5"},
      {"ij->i->j", "second '->' at column 6"},
      {"i\xffj", "invalid UTF-8 byte 0xff at column 2"},
      {"i\xc3", "invalid UTF-8 byte 0xc3 at column 2"},
      {"\xc3\x81\x01", "control character U+0001 is not a label at column 2 (byte 2)"},
      {"ij(k", "'(' inside a term (a ',' is missing) at column 3"},
      {"i\xc0\x80", "invalid UTF-8 byte 0xc0"},
      {"ij->i......", "second ellipsis '...' in one output"},
  };
  double x[4] = {0};
  int64_t d[2] = {2, 2};
  tfe_view_f64 v = rowmajor(x, 2, d);
  tfe_tensor_f64 t = {0};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    TU_EXPECT_ERR(tfe_einsum(&t, bad[i].e, 1, &v), TFE_ERR_PARSE, bad[i].msg);
    assert_null(t.st);
  }
  char deep[600];
  memset(deep, '(', 300); strcpy(deep + 300, "ij");
  TU_EXPECT_ERR(tfe_einsum(&t, deep, 1, &v), TFE_ERR_PARSE, "nested deeper than 256");
  TU_EXPECT_ERR(tfe_einsum(&t, NULL, 1, &v), TFE_ERR_NULL, "expr");
}

static void test_bind_errors(void **state) {
  (void)state;
  double x[12] = {0};
  int64_t d23[2] = {2, 3}, d33[2] = {3, 3}, d2[1] = {2};
  tfe_view_f64 v[3] = {rowmajor(x, 2, d23), rowmajor(x, 2, d33), rowmajor(x, 1, d2)};
  tfe_tensor_f64 t = {0};
  TU_EXPECT_ERR(tfe_einsum(&t, "ij,jk->ik", 1, v), TFE_ERR_INVALID, "the expression has 2 operands but 1 tensor was given");
  TU_EXPECT_ERR(tfe_einsum(&t, "ijk,jk->ik", 2, v), TFE_ERR_RANK, "operand 0 has rank 2 but its term has 3 labels");
  TU_EXPECT_ERR(tfe_einsum(&t, "ij,ik->jk", 2, v), TFE_ERR_SHAPE, "label 'i' has size 3 in operand 1 (axis 0) but 2 elsewhere (column 4)");
  TU_EXPECT_ERR(tfe_einsum(&t, "ij,jk->iz", 2, v), TFE_ERR_INVALID, "output label 'z' appears in no input (column 9)");
  TU_EXPECT_ERR(tfe_einsum(&t, "ij,jk->ii", 2, v), TFE_ERR_INVALID, "output label 'i' is repeated (column 9)");
  TU_EXPECT_ERR(tfe_einsum(&t, "...j,jk->k", 2, v), TFE_ERR_INVALID, "operands have 1 ellipsis axes but the output has no '...'");
  TU_EXPECT_ERR(tfe_einsum(&t, "ij...k,jk->k", 2, v), TFE_ERR_RANK, "needs at least 3 axes");
  TU_EXPECT_ERR(tfe_einsum(&t, "ij", 0, v), TFE_ERR_INVALID, "at least one operand");
  TU_EXPECT_ERR(tfe_einsum(&t, "ij", 1, NULL), TFE_ERR_NULL, "ops");
  tfe_view_f64 neg = v[2];
  neg.lay.dims[0] = -1;
  TU_EXPECT_ERR(tfe_einsum(&t, "i", 1, &neg), TFE_ERR_INVALID, "negative");
  /* integer labels */
  int32_t l0[2] = {5, 6}, l1[2] = {6, 7}, lo[2] = {5, 9};
  const int32_t *ls[2] = {l0, l1};
  tfe_view_f64 mm[2] = {v[0], v[1]};
  TU_EXPECT_ERR(tfe_einsum_labels(&t, 2, mm, ls, lo, 2, NULL), TFE_ERR_INVALID, "output label 9 appears in no input");
  int32_t bad1[2] = {5, 5};
  const int32_t *ls2[2] = {l0, bad1};
  TU_EXPECT_ERR(tfe_einsum_labels(&t, 2, mm, ls2, NULL, 0, NULL), TFE_ERR_SHAPE, "label 5 has size 3 in operand 1");
  TU_EXPECT_ERR(tfe_einsum_labels(&t, 2, mm, NULL, NULL, 0, NULL), TFE_ERR_NULL, "labels");
  assert_null(t.st);
}

static void test_exec_errors(void **state) {
  (void)state;
  double x[64] = {0}, y[64];
  int64_t d23[2] = {2, 3}, d34[2] = {3, 4}, d24[2] = {2, 4};
  tfe_view_f64 v[2] = {rowmajor(x, 2, d23), rowmajor(x + 6, 2, d34)};
  tfe_view_f64 out = rowmajor(y, 2, d24);
  for (int i = 0; i < 64; i++) y[i] = 42;
  /* wrong output shape, rank */
  tfe_view_f64 o2 = rowmajor(y, 2, d23);
  TU_EXPECT_ERR(tfe_einsum_into(&o2, 1.0, 0.0, "ij,jk->ik", 2, v), TFE_ERR_SHAPE, "output axis 1 is 3, the expression gives 4");
  tfe_view_f64 o3 = rowmajor(y, 1, d24);
  TU_EXPECT_ERR(tfe_einsum_into(&o3, 1.0, 0.0, "ij,jk->ik", 2, v), TFE_ERR_RANK, "output has rank 1");
  /* overlapping output */
  tfe_view_f64 o4 = out;
  o4.lay.strides[0] = 0;
  TU_EXPECT_ERR(tfe_einsum_into(&o4, 1.0, 0.0, "ij,jk->ik", 2, v), TFE_ERR_OVERLAP, "overlapping elements");
  tfe_view_f64 o5 = rowmajor(x + 4, 2, d24);
  TU_EXPECT_ERR(tfe_einsum_into(&o5, 1.0, 0.0, "ij,jk->ik", 2, v), TFE_ERR_OVERLAP, "output overlaps operand 0");
  tfe_view_f64 o6 = rowmajor(x + 10, 2, d24); /* overlaps operand 1 only */
  TU_EXPECT_ERR(tfe_einsum_into(&o6, 1.0, 0.0, "ij,jk->ik", 2, v), TFE_ERR_OVERLAP, "output overlaps operand 1");
  /* NULL data */
  tfe_view_f64 vn[2] = {v[0], v[1]};
  vn[1].data = NULL;
  TU_EXPECT_ERR(tfe_einsum_into(&out, 1.0, 0.0, "ij,jk->ik", 2, vn), TFE_ERR_NULL, "data of operand 1 is NULL");
  for (int i = 0; i < 64; i++) assert_true(y[i] == 42); /* untouched */
  /* an output interleaved with operand 0 (byte ranges meet, elements do not) runs */
  double z[64];
  for (int i = 0; i < 64; i++) z[i] = i % 7 - 3;
  tfe_view_f64 w[2] = {{z, {2, 0, {2, 3}, {6, 2}}, false}, rowmajor(z + 40, 2, d34)};
  tfe_view_f64 oz = {z + 1, {2, 0, {2, 4}, {8, 2}}, false};
  assert_int_equal(tfe_einsum_into(&oz, 1.0, 0.0, "ij,jk->ik", 2, w), TFE_OK);
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      double t = 0;
      for (int j = 0; j < 3; j++) t += (double)((6 * i + 2 * j) % 7 - 3) * (double)((40 + 4 * j + k) % 7 - 3);
      assert_true(z[1 + 8 * i + 2 * k] == t);
    }
  /* plan mismatches */
  const tfe_layout *lp[2] = {&v[0].lay, &v[1].lay};
  tfe_einsum_plan *p = NULL;
  assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk->ik", 2, lp, NULL), TFE_OK);
  tfe_view_f32 fo = {(float *)y, out.lay, false};
  tfe_view_f32 fv[2] = {{(float *)x, v[0].lay, false}, {(float *)x, v[1].lay, false}};
  TU_EXPECT_ERR(tfe_einsum_execute(p, 1.0f, fv, 0.0f, &fo), TFE_ERR_DTYPE, "plan was made for f64, called with f32");
  tfe_view_f64 vt[2] = {v[0], v[1]};
  vt[0].lay.strides[0] = 1; vt[0].lay.strides[1] = 2; /* transposed storage: another plan */
  TU_EXPECT_ERR(tfe_einsum_execute(p, 1.0, vt, 0.0, &out), TFE_ERR_SHAPE, "operand 0 axis 0 is 2 (stride 1), the plan expects 2 (stride 3)");
  /* the plan runs on other data and offsets */
  double x2[40];
  for (int i = 0; i < 40; i++) x2[i] = i;
  tfe_view_f64 vo[2] = {v[0], v[1]};
  vo[0].data = x2; vo[0].lay.offset = 3; vo[1].data = x2; vo[1].lay.offset = 10;
  assert_int_equal(tfe_einsum_execute(p, 1.0, vo, 0.0, &out), TFE_OK);
  assert_true(out.data[0] == 3 * 10 + 4 * 14 + 5 * 18);
  tfe_einsum_plan_release(p);
  /* given-path errors */
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.algo = TFE_PATH_GIVEN;
  int path[4] = {0, 0, 0, 1};
  o.path = path; o.path_nsteps = 1;
  tfe_view_f64 three[3] = {v[0], v[1], v[1]};
  const tfe_layout *l3[3] = {&v[0].lay, &v[1].lay, &v[1].lay};
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_ERR_INVALID, "the path has 1 steps but 3 operands need 2");
  o.path_nsteps = 2;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_ERR_INVALID, "pair (0, 0) is not two distinct operands");
  path[0] = 0; path[1] = 1; path[2] = 1; path[3] = 2;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_ERR_INVALID, "pair (1, 2) is not two distinct operands of the 2 available");
  o.path_format = TFE_PATH_SSA; path[2] = 0; path[3] = 3;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_ERR_INVALID, "operand 0 was already contracted");
  path[2] = 2; path[3] = 3;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,(jk,jk)->ik", 3, l3, &o), TFE_ERR_INVALID, "cannot be combined with parentheses");
  assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_OK);
  tfe_einsum_plan_release(p);
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, (tfe_dtype)99, "ij->ij", 1, l3, NULL), TFE_ERR_DTYPE, "unknown dtype 99");
  memset(&o, 0, sizeof o);
  o.memory_limit = 4;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_ERR_INVALID, "memory limit of 4 bytes is below one element");
  o.memory_limit = 0; o.algo = (tfe_path_algo)42;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "ij,jk,jk->ik", 3, l3, &o), TFE_ERR_INVALID, "unknown path algorithm 42");
  (void)three;
  /* DP above its limit */
  memset(&o, 0, sizeof o);
  o.algo = TFE_PATH_DP;
  tfe_layout one;
  int64_t d1[1] = {2};
  tfe_layout_dense(1, d1, TFE_COLMAJOR, &one);
  const tfe_layout *many[22];
  char ex[200] = "";
  for (int i = 0; i < 22; i++) { many[i] = &one; strcat(ex, i ? ",a" : "a"); }
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, ex, 22, many, &o), TFE_ERR_UNSUPPORTED, "at most 20 operands");
  /* dyn: mixed dtypes */
  tfe_dyn dv[2] = {{TFE_DT_F64, x, v[0].lay, false, NULL}, {TFE_DT_F32, x, v[1].lay, false, NULL}};
  tfe_dyn dout;
  TU_EXPECT_ERR(tfe_einsum_dyn(&dout, "ij,jk->ik", 2, dv, NULL), TFE_ERR_DTYPE, "operand 1 is f32 but operand 0 is f64");
  tfe_einsum_cache_clear();
}

/* Allocation failures at every point: clean status, no leak, output untouched. */
static void test_alloc_failures(void **state) {
  (void)state;
  double x[64], y[16];
  for (int i = 0; i < 64; i++) x[i] = i % 7 - 3;
  int64_t d[2] = {2, 2};
  tfe_view_f64 v[4];
  for (int i = 0; i < 4; i++) v[i] = rowmajor(x + 4 * i, 2, d);
  tfe_view_f64 out = rowmajor(y, 2, d);
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.memory_limit = 16; /* slicing too */
  o.no_cache = true;
  int ok_at = -1;
  /* one warm-up call: the contraction room's plan cache and workspace persist across calls */
  tu_fail_after(-1);
  assert_int_equal(tfe_einsum_into_with(&out, 1.0, 0.0, "ij,jk,kl,lm->im", 4, v, &o), TFE_OK);
  tu_alloc_restore();
  for (long n = 0; n < 400 && ok_at < 0; n++) {
    for (int i = 0; i < 16; i++) y[i] = 99;
    long live0 = tu_live_allocs;
    tu_fail_after(n);
    tfe_status st = tfe_einsum_into_with(&out, 1.0, 0.0, "ij,jk,kl,lm->im", 4, v, &o);
    tu_alloc_restore();
    if (tu_live_allocs != live0) fail_msg("leak after failing allocation %ld (status %d: %s)", n, st, tfe_last_error());
    if (st == TFE_OK) { ok_at = (int)n; break; }
    assert_int_equal(st, TFE_ERR_ALLOC);
    for (int i = 0; i < 16; i++) assert_true(y[i] == 99);
  }
  assert_true(ok_at > 3);
}

/* ---- optimizers --------------------------------------------------------------------------------------- */
/* A random connected network as an expression and layouts (sizes 2..8). */
static void random_network(tu_rng *g, int n, char *expr, tfe_layout *lay, const tfe_layout **lp) {
  int nl = n + (int)tu_int(g, 1, n);
  int64_t sz[64];
  for (int l = 0; l < nl; l++) sz[l] = tu_int(g, 2, 8);
  expr[0] = 0;
  bool used[64] = {0};
  for (int t = 0; t < n; t++) {
    if (t) strcat(expr, ",");
    int r = (int)tu_int(g, 1, 4), labs[4], m = 0;
    labs[m++] = t < nl ? t : (int)tu_int(g, 0, nl - 1); /* chain-ish backbone */
    if (t > 0) labs[m++] = t - 1;
    while (m < r) { int l = (int)tu_int(g, 0, nl - 1); bool dup = false; for (int q = 0; q < m; q++) dup |= labs[q] == l; if (!dup) labs[m++] = l; }
    int64_t dims[4];
    for (int a = 0; a < m; a++) { char c[2] = {(char)('A' + labs[a]), 0}; strcat(expr, c); dims[a] = sz[labs[a]]; used[labs[a]] = true; }
    tfe_layout_dense(m, dims, TFE_COLMAJOR, &lay[t]);
    lp[t] = &lay[t];
  }
  strcat(expr, "->");
  for (int l = 0; l < nl; l++) if (used[l] && tu_int(g, 0, 5) == 0) { char c[2] = {(char)('A' + l), 0}; strcat(expr, c); }
}

static double plan_flops(const char *expr, int n, const tfe_layout *const *lp, tfe_path_algo algo, double budget,
                         const int *path, tfe_path_format fmt) {
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.algo = algo; o.time_budget = budget; o.path = path; o.path_nsteps = n - 1; o.path_format = fmt;
  tfe_einsum_plan *p = NULL;
  tfe_status st = tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o);
  if (st != TFE_OK) fail_msg("plan %s: %s", expr, tfe_last_error());
  double f = tfe_einsum_plan_cost(p).flops;
  tfe_einsum_plan_release(p);
  return f;
}

static void test_optimizers(void **state) {
  (void)state;
  tu_rng g = {777};
  for (int c = 0; c < tu_cases(60); c++) {
    int n = (int)tu_int(&g, 4, 9);
    char expr[400];
    tfe_layout lay[16];
    const tfe_layout *lp[16];
    random_network(&g, n, expr, lay, lp);
    double dp = plan_flops(expr, n, lp, TFE_PATH_DP, 0, NULL, 0);
    double gr = plan_flops(expr, n, lp, TFE_PATH_GREEDY, 0, NULL, 0);
    double sa = plan_flops(expr, n, lp, TFE_PATH_ANNEAL, 0.01, NULL, 0);
    assert_true(dp <= gr * (1 + 1e-9));
    assert_true(dp <= sa * (1 + 1e-9));
    /* DP is no worse than random trees */
    for (int r = 0; r < 30; r++) {
      int path[40];
      for (int s = 0; s + 1 < n; s++) {
        int m = n - s, i = (int)tu_int(&g, 0, m - 1), j = (int)tu_int(&g, 0, m - 2);
        path[2 * s] = i; path[2 * s + 1] = j >= i ? j + 1 : j;
      }
      double rf = plan_flops(expr, n, lp, TFE_PATH_GIVEN, 0, path, TFE_PATH_LINEAR);
      assert_true(dp <= rf * (1 + 1e-9));
    }
  }
  /* a plan's own path, given back, costs the same */
  for (int c = 0; c < tu_cases(40); c++) {
    int n = (int)tu_int(&g, 3, 30);
    char expr[800];
    tfe_layout lay[40];
    const tfe_layout *lp[40];
    random_network(&g, n, expr, lay, lp);
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    o.algo = TFE_PATH_ANNEAL; o.time_budget = 0.003;
    tfe_einsum_plan *p = NULL;
    if (tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o) != TFE_OK) fail_msg("%s: %s", expr, tfe_last_error());
    const int *pairs;
    int ns = tfe_einsum_plan_path(p, &pairs);
    assert_int_equal(ns, n - 1);
    double f = plan_flops(expr, n, lp, TFE_PATH_GIVEN, 0, pairs, TFE_PATH_LINEAR);
    assert_true(fabs(f - tfe_einsum_plan_cost(p).flops) <= 1e-9 * f);
    double gr = plan_flops(expr, n, lp, TFE_PATH_GREEDY, 0, NULL, 0);
    assert_true(tfe_einsum_plan_cost(p).flops <= gr * (1 + 1e-9)); /* annealing starts from greedy */
    tfe_einsum_plan_release(p);
  }
  /* slicing respects the memory limit and multiplies the slices */
  for (int c = 0; c < tu_cases(40); c++) {
    int n = (int)tu_int(&g, 4, 14);
    char expr[800];
    tfe_layout lay[40];
    const tfe_layout *lp[40];
    random_network(&g, n, expr, lay, lp);
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    tfe_einsum_plan *p = NULL;
    assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o), TFE_OK);
    double big = tfe_einsum_plan_cost(p).log2_inter;
    tfe_einsum_plan_release(p);
    if (big < 3) continue;
    o.memory_limit = (int64_t)(8 * exp2(floor(big) - 2));
    assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o), TFE_OK);
    tfe_einsum_cost cs = tfe_einsum_plan_cost(p);
    assert_true(cs.log2_inter <= floor(big) - 2 + 1e-9);
    assert_true(cs.slices > 1);
    tfe_einsum_plan_release(p);
  }
}

/* ---- planning time (docs/einsum.md, "Planning time") ------------------------------------------- */
/* A chain of n matrices (labels A, B, ... along it; dims from g), optionally with a batch label
 * 'z' on every matrix and in the output. */
static void chain_network(tu_rng *g, int n, bool batch, char *expr, tfe_layout *lay, const tfe_layout **lp) {
  int64_t dim[128];
  for (int i = 0; i <= n; i++) dim[i] = tu_int(g, 2, 40);
  char *e = expr;
  for (int t = 0; t < n; t++) {
    if (t) *e++ = ',';
    int64_t d[3] = {dim[t], dim[t + 1], 3};
    *e++ = (char)(t < 26 ? 'A' + t : 'a' + t - 26); *e++ = (char)(t + 1 < 26 ? 'A' + t + 1 : 'a' + t + 1 - 26);
    if (batch) *e++ = 'z';
    tfe_layout_dense(batch ? 3 : 2, d, TFE_COLMAJOR, &lay[t]);
    lp[t] = &lay[t];
  }
  *e++ = '-'; *e++ = '>'; *e++ = 'A'; *e++ = (char)(n < 26 ? 'A' + n : 'a' + n - 26);
  if (batch) *e++ = 'z';
  *e = 0;
}
static double plan_time(const char *expr, int n, const tfe_layout *const *lp, double budget, double *flops) {
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.algo = TFE_PATH_AUTO; o.time_budget = budget; o.no_cache = true;
  tfe_einsum_plan *p = NULL;
  if (tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o) != TFE_OK) fail_msg("plan %s: %s", expr, tfe_last_error());
  double s = tfe_einsum_plan_seconds(p);
  if (flops) *flops = tfe_einsum_plan_cost(p).flops;
  tfe_einsum_plan_release(p);
  return s;
}
static void test_plan_time(void **state) {
  (void)state;
  tu_rng g = {4242};
  char expr[1200];
  tfe_layout lay[64];
  const tfe_layout *lp[64];
  /* chains above dp_max: the interval DP finds the exact optimum (the subset DP's) */
  for (int c = 0; c < tu_cases(24); c++) {
    int n = (int)tu_int(&g, 3, 11);
    chain_network(&g, n, c % 2 == 1, expr, lay, lp);
    double dp = plan_flops(expr, n, lp, TFE_PATH_DP, 0, NULL, 0);
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    o.algo = TFE_PATH_AUTO; o.dp_max = 2; o.no_cache = true;
    tfe_einsum_plan *p = NULL;
    assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o), TFE_OK);
    double f = tfe_einsum_plan_cost(p).flops;
    tfe_einsum_plan_release(p);
    if (fabs(f - dp) > 1e-9 * dp) fail_msg("%s: chain DP %g, subset DP %g", expr, f, dp);
  }
  /* tensors linked by output labels only: greedy makes the batched (Hadamard) products first */
  {
    int64_t d8[2] = {8, 8};
    for (int t = 0; t < 4; t++) { tfe_layout_dense(2, d8, TFE_COLMAJOR, &lay[t]); lp[t] = &lay[t]; }
    double dp = plan_flops("ab,cd,ab,cd->abcd", 4, lp, TFE_PATH_DP, 0, NULL, 0);
    double gr = plan_flops("ab,cd,ab,cd->abcd", 4, lp, TFE_PATH_GREEDY, 0, NULL, 0);
    assert_true(gr <= dp * (1 + 1e-9));
  }
  /* a 50-matrix chain with a budget of 10 s plans in milliseconds */
  chain_network(&g, 50, false, expr, lay, lp);
  double f60, t60 = plan_time(expr, 50, lp, 10, &f60);
  print_message("50-matrix chain: planned in %.2f ms\n", 1e3 * t60);
  assert_true(t60 < 0.5);
  /* the rule: a cheap network of 40 small tensors with a budget of 10 s takes about the floor,
   * and its path is no worse than greedy's */
  random_network(&g, 40, expr, lay, lp);
  double fa, ta = plan_time(expr, 40, lp, 10, &fa);
  double gr = plan_flops(expr, 40, lp, TFE_PATH_GREEDY, 0, NULL, 0);
  print_message("40 small tensors: planned in %.2f ms (floor %.0f ms), flops %.4g vs greedy %.4g\n", 1e3 * ta,
                1e3 * tfe_tuning_get().einsum_plan_floor, fa, gr);
  assert_true(ta < 1.0);
  assert_true(fa <= gr * (1 + 1e-9));
  /* the floor is spent when the estimate is below it, and the budget caps it (on the CPU-time
   * clock: the work clock's seconds are this machine's only at the calibrated speed) */
  tfe_tuning keep = tfe_tuning_get(), t = keep;
  t.einsum_plan_floor = 0.25; t.einsum_plan_fraction = 0; t.einsum_plan_work_rate = 0;
  assert_int_equal(tfe_tuning_set(&t), TFE_OK);
  double tf = plan_time(expr, 40, lp, 10, NULL), tc = plan_time(expr, 40, lp, 0.02, NULL);
  assert_int_equal(tfe_tuning_set(&keep), TFE_OK); /* before any check: later tests plan on the defaults */
  print_message("floor 250 ms: %.1f ms; budget 20 ms: %.1f ms\n", 1e3 * tf, 1e3 * tc);
  /* the floor is spent at least by its shares that are always run: greedy runs to 20% of it
   * (50 ms) and the first annealing chain for its sixteenth (15.6 ms), both on the planning
   * clock, which never runs ahead of the wall time. The chains continue to 85% only when the
   * first improves on greedy, and the subtree re-solution may converge sooner (66.8 ms seen
   * under clang on CI, 176 ms under gcc). */
  if (!(tf >= 0.06)) fail_msg("floor 250 ms planned in %.1f ms: less than its greedy and first-chain shares", 1e3 * tf);
  assert_true(tc < 0.2);
  t.einsum_plan_rate = 0; /* the knobs are checked */
  TU_EXPECT_ERR(tfe_tuning_set(&t), TFE_ERR_INVALID, "einsum_plan_rate");
  t.einsum_plan_rate = 1e10; t.einsum_plan_fraction = -1;
  TU_EXPECT_ERR(tfe_tuning_set(&t), TFE_ERR_INVALID, "einsum_plan_fraction");
  t.einsum_plan_fraction = 0.04; t.einsum_plan_work_rate = 10;
  TU_EXPECT_ERR(tfe_tuning_set(&t), TFE_ERR_INVALID, "einsum_plan_work_rate");
  assert_int_equal(tfe_tuning_set(&keep), TFE_OK);
}

/* lm_batch_likelihood_sentence_4_4d (bench instances): 84 tensors, labels per tensor ended by -1;
 * label sizes 4, 11 (lmb_eleven) and 1900 (the batch); the output is the batch label LMB_BATCH; lmb_opt is the stored opt_flops
 * path (linear pairs). */
static const int16_t lmb_labels[] = {
  0, 1, -1, 0, 2, 3, -1, 1, 4, 5, -1, 3, 4, 6, 7, -1, 2, 8, 9, -1, 6, 10, 11, -1, 7, 12, 13, -1, 5, 14, 15,
  -1, 9, 10, 16, 17, -1, 11, 12, 18, 19, -1, 13, 14, 20, 21, -1, 8, 22, 23, -1, 16, 24, 25, -1, 17, 26, 27,
  -1, 18, 28, 29, -1, 19, 30, 31, -1, 20, 32, 33, -1, 21, 34, 35, -1, 15, 36, 37, -1, 23, 24, 38, 39, -1, 25,
  26, 40, 41, -1, 27, 28, 42, 43, -1, 29, 30, 44, 45, -1, 31, 32, 46, 47, -1, 33, 34, 48, 49, -1, 35, 36, 50,
  51, -1, 52, 22, -1, 52, 37, -1, 52, 38, -1, 52, 39, -1, 52, 40, -1, 52, 41, -1, 52, 42, -1, 52, 43, -1, 52,
  44, -1, 52, 45, -1, 52, 46, -1, 52, 47, -1, 52, 48, -1, 52, 49, -1, 52, 50, -1, 52, 51, -1, 53, 54, -1, 53,
  55, 56, -1, 54, 57, 58, -1, 56, 57, 59, 60, -1, 55, 61, 62, -1, 59, 63, 64, -1, 60, 65, 66, -1, 58, 67, 68,
  -1, 62, 63, 69, 70, -1, 64, 65, 71, 72, -1, 66, 67, 73, 74, -1, 61, 75, 76, -1, 69, 77, 78, -1, 70, 79, 80,
  -1, 71, 81, 82, -1, 72, 83, 84, -1, 73, 85, 86, -1, 74, 87, 88, -1, 68, 89, 90, -1, 76, 77, 91, 92, -1, 78,
  79, 93, 94, -1, 80, 81, 95, 96, -1, 82, 83, 97, 98, -1, 84, 85, 99, 100, -1, 86, 87, 101, 102, -1, 88, 89,
  103, 104, -1, 52, 75, -1, 52, 90, -1, 52, 91, -1, 52, 92, -1, 52, 93, -1, 52, 94, -1, 52, 95, -1, 52, 96,
  -1, 52, 97, -1, 52, 98, -1, 52, 99, -1, 52, 100, -1, 52, 101, -1, 52, 102, -1, 52, 103, -1, 52, 104, -1
};
static const int16_t lmb_opt[] = {
  7, 10, 14, 82, 21, 35, 34, 80, 14, 79, 14, 22, 19, 32, 30, 76, 74, 75, 73, 74, 72, 73, 18, 28, 27, 71, 69,
  70, 6, 69, 7, 11, 10, 67, 13, 21, 20, 65, 63, 64, 62, 63, 4, 6, 7, 61, 9, 15, 14, 59, 0, 2, 0, 57, 0, 56,
  0, 55, 51, 54, 52, 53, 51, 52, 0, 4, 1, 3, 2, 49, 47, 48, 46, 47, 0, 46, 0, 45, 0, 44, 0, 43, 7, 10, 14,
  41, 21, 35, 34, 39, 14, 38, 14, 22, 19, 32, 30, 35, 33, 34, 32, 33, 31, 32, 18, 28, 27, 30, 28, 29, 6, 28,
  7, 11, 10, 26, 13, 21, 20, 24, 22, 23, 21, 22, 4, 6, 7, 20, 9, 15, 14, 18, 0, 2, 0, 16, 0, 15, 0, 14, 10,
  13, 11, 12, 10, 11, 0, 4, 1, 3, 2, 8, 6, 7, 5, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1
};
static const int16_t lmb_eleven[] = {22, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 75, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104};
#define LMB_N 84
#define LMB_BATCH 52
#define LMB_NLAB 105

/* The planning rule on lm_batch_likelihood_sentence_4_4d, the instance where the path depended
 * on the seed and the machine's load: with the default settings (the library's seed 0, the
 * tool's 42, and more seeds), --path auto's path stays within 1.05 of the stored opt_flops path,
 * and a seed gives the same path twice (the allowance is counted in work: no timing involved).
 * A plan whose wall time ran 16 times ahead of its work (a sanitizer build on a loaded machine:
 * the clock's bound on the wall time took over) is reported and not judged. */
static void test_plan_lm_batch(void **state) {
  (void)state;
  tfe_layout lay[LMB_N];
  const tfe_layout *lp[LMB_N];
  static int32_t lab[LMB_N][8];
  const int32_t *labp[LMB_N];
  int k = 0, r = 0;
  for (size_t i = 0; i < sizeof lmb_labels / sizeof lmb_labels[0]; i++) {
    if (lmb_labels[i] >= 0) { lab[k][r++] = lmb_labels[i]; continue; }
    int64_t d[8];
    for (int q = 0; q < r; q++) {
      d[q] = lab[k][q] == LMB_BATCH ? 1900 : 4;
      for (size_t e = 0; e < sizeof lmb_eleven / sizeof lmb_eleven[0]; e++) if (lmb_eleven[e] == lab[k][q]) d[q] = 11;
    }
    tfe_layout_dense(r, d, TFE_ROWMAJOR, &lay[k]);
    lp[k] = &lay[k]; labp[k] = lab[k];
    k++; r = 0;
  }
  assert_int_equal(k, LMB_N);
  int32_t out = LMB_BATCH;
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  int opt[2 * (LMB_N - 1)];
  for (int i = 0; i < 2 * (LMB_N - 1); i++) opt[i] = lmb_opt[i];
  o.algo = TFE_PATH_GIVEN; o.path = opt; o.path_nsteps = LMB_N - 1; o.no_cache = true;
  tfe_einsum_plan *p = NULL;
  assert_int_equal(tfe_einsum_plan_new_labels(&p, TFE_DT_F64, LMB_N, lp, labp, &out, 1, &o), TFE_OK);
  double ref = tfe_einsum_plan_cost(p).flops;
  tfe_einsum_plan_release(p);
  int seeds = tu_cases(8) < 2 ? 2 : tu_cases(8), judged = 0;
  double worst = 0;
  for (int c = 0; c < seeds; c++) {
    memset(&o, 0, sizeof o);
    o.algo = TFE_PATH_AUTO; o.time_budget = 1.5; o.no_cache = true; /* the tool's --path auto */
    o.seed = c == 0 ? 0 : c == 1 ? 42 : (uint64_t)c;
    double f[2];
    int *path[2] = {NULL, NULL};
    bool capped = false;
    for (int twice = 0; twice < 2; twice++) {
      assert_int_equal(tfe_einsum_plan_new_labels(&p, TFE_DT_F64, LMB_N, lp, labp, &out, 1, &o), TFE_OK);
      capped |= tfe__ts.ein_capped;
      f[twice] = tfe_einsum_plan_cost(p).flops;
      const int *pp;
      int ns = tfe_einsum_plan_path(p, &pp);
      assert_int_equal(ns, LMB_N - 1);
      path[twice] = (int *)malloc(sizeof(int) * 2 * (size_t)ns);
      memcpy(path[twice], pp, sizeof(int) * 2 * (size_t)ns);
      tfe_einsum_plan_release(p);
    }
    if (capped) {
      print_message("seed %llu: the wall time ran ahead of the planner's work (a slow or loaded machine): not judged\n",
                    (unsigned long long)o.seed);
    } else {
      judged++;
      print_message("seed %llu: %.6f of opt_flops\n", (unsigned long long)o.seed, f[0] / ref);
      if (f[0] / ref > worst) worst = f[0] / ref;
      if (!(f[0] <= 1.05 * ref)) fail_msg("seed %llu: flops %.6g = %.4f of opt_flops", (unsigned long long)o.seed, f[0], f[0] / ref);
      if (f[1] != f[0] || memcmp(path[0], path[1], sizeof(int) * 2 * (LMB_N - 1)))
        fail_msg("seed %llu: two plans differ (%.6g, %.6g flops)", (unsigned long long)o.seed, f[0], f[1]);
    }
    free(path[0]); free(path[1]);
  }
  print_message("lm_batch: %d of %d seeds judged, all within 1.05 of opt_flops (worst %.4f)\n", judged, seeds, worst);
}

/* A network of parts linked only by an output (batch) label: each part is planned on its own
 * (here chains, exact by the interval DP), a part repeating an earlier one takes its tree, and
 * the parts' results are joined last; the result equals the greedy path's. */
static double labels_plan(int n, const tfe_layout *const *lp, const int32_t *const *lab, int32_t z, tfe_path_algo algo,
                          tfe_einsum_plan **keep) {
  tfe_einsum_opts o;
  memset(&o, 0, sizeof o);
  o.algo = algo; o.time_budget = algo == TFE_PATH_AUTO ? 1.0 : 0; o.no_cache = true;
  tfe_einsum_plan *p = NULL;
  if (tfe_einsum_plan_new_labels(&p, TFE_DT_F64, n, lp, lab, &z, 1, &o) != TFE_OK) fail_msg("plan: %s", tfe_last_error());
  double f = tfe_einsum_plan_cost(p).flops;
  if (keep) *keep = p; else tfe_einsum_plan_release(p);
  return f;
}
static void test_plan_parts(void **state) {
  (void)state;
  tu_rng g = {2718};
  enum { M = 14, P = 3 };
  static int32_t labs[P * M][3];
  const int32_t *lab[P * M];
  tfe_layout lay[P * M];
  const tfe_layout *lp[P * M];
  int64_t dim[P][M + 1];
  for (int c = 0; c < tu_cases(6); c++) {
    for (int q = 0; q < P; q++)
      for (int t = 0; t <= M; t++) dim[q][t] = q == 1 ? dim[0][t] : tu_int(&g, 2, 9); /* part 1 repeats part 0 */
    for (int q = 0; q < P; q++)
      for (int t = 0; t < M; t++) {
        int k = q * M + t;
        labs[k][0] = 100 * q + t; labs[k][1] = 100 * q + t + 1; labs[k][2] = 999;
        int64_t d[3] = {dim[q][t], dim[q][t + 1], 3};
        tfe_layout_dense(3, d, TFE_COLMAJOR, &lay[k]);
        lp[k] = &lay[k]; lab[k] = labs[k];
      }
    double parts = 0;
    for (int q = 0; q < P; q++) parts += labels_plan(M, lp + q * M, lab + q * M, 999, TFE_PATH_AUTO, NULL);
    tfe_einsum_plan *pa = NULL, *pg = NULL;
    double all = labels_plan(P * M, lp, lab, 999, TFE_PATH_AUTO, &pa);
    labels_plan(P * M, lp, lab, 999, TFE_PATH_GREEDY, &pg);
    if (fabs(all - (parts + 2 * 3)) > 1e-9 * all) fail_msg("case %d: whole %g, parts %g + joins 6", c, all, parts);
    /* the same numbers along both trees */
    static double data[P * M * 9 * 9 * 3];
    tfe_view_f64 v[P * M];
    int64_t at = 0;
    for (int k = 0; k < P * M; k++) {
      int64_t cnt = tfe_layout_numel(&lay[k]);
      for (int64_t e = 0; e < cnt; e++) data[at + e] = 0.25 + 0.5 * tu_unif(&g);
      v[k].data = data + at; v[k].lay = lay[k]; v[k].conj = false;
      at += cnt;
    }
    double ra[3], rg[3];
    int64_t d3 = 3;
    tfe_view_f64 oa = {ra, {0}, false}, og = {rg, {0}, false};
    tfe_layout_dense(1, &d3, TFE_COLMAJOR, &oa.lay); og.lay = oa.lay;
    assert_int_equal(tfe_einsum_execute_f64(pa, 1, v, 0, &oa), TFE_OK);
    assert_int_equal(tfe_einsum_execute_f64(pg, 1, v, 0, &og), TFE_OK);
    for (int i = 0; i < 3; i++) assert_true(fabs(ra[i] - rg[i]) <= 1e-12 * fabs(rg[i]));
    tfe_einsum_plan_release(pa); tfe_einsum_plan_release(pg);
  }
}

/* ---- slices in parallel ---------------------------------------------------------------------------- */
/* A sliced plan made with 3 threads runs its slices 3 at a time; the result equals the one of
 * the same plan run one slice after another, bit for bit, and the unsliced result to rounding. */
static void test_parallel_slices(void **state) {
  (void)state;
  tu_rng g = {31337};
  static double data[1 << 16];
  for (int i = 0; i < (1 << 16); i++) data[i] = (double)((i * 7919) % 1013) / 1013.0 - 0.45;
  int par = 0, whole = 0, cases = tu_cases(40) < 16 ? 16 : tu_cases(40); /* small networks: cheap even under sanitizers */
  for (int c = 0; c < cases; c++) {
    int n = (int)tu_int(&g, 4, 10);
    char expr[800];
    tfe_layout lay[40];
    const tfe_layout *lp[40];
    random_network(&g, n, expr, lay, lp);
    tfe_view_f64 v[40];
    int64_t at = 0;
    bool fits = true;
    for (int k = 0; k < n; k++) {
      int64_t cnt = tfe_layout_numel(&lay[k]);
      if (at + cnt > (1 << 16)) { fits = false; break; }
      v[k].data = data + at; v[k].lay = lay[k]; v[k].conj = false;
      at += cnt;
    }
    if (!fits) continue;
    tfe_set_num_threads(3);
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    o.algo = TFE_PATH_GREEDY; o.no_cache = true;
    tfe_einsum_plan *p0 = NULL, *p = NULL;
    assert_int_equal(tfe_einsum_plan_new(&p0, TFE_DT_F64, expr, n, lp, &o), TFE_OK);
    double big = tfe_einsum_plan_cost(p0).log2_inter;
    if (big < 4) { tfe_einsum_plan_release(p0); continue; }
    o.memory_limit = (int64_t)(8 * exp2(floor(big) - 1));
    assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o), TFE_OK);
    tfe_einsum_cost cs = tfe_einsum_plan_cost(p);
    assert_true(cs.slices > 1);
    /* every running slice keeps within its share of the limit */
    assert_true(exp2(cs.log2_inter) * 8 * p->slice_workers <= (double)o.memory_limit * (1 + 1e-9));
    tfe_layout ol;
    tfe_layout_dense(p->out_rank, p->out_dims, TFE_COLMAJOR, &ol);
    int64_t on = tfe_layout_numel(&ol);
    double *r[3];
    for (int q = 0; q < 3; q++) {
      r[q] = (double *)calloc((size_t)on + 1, sizeof(double));
      tfe_view_f64 out = {r[q], ol, false};
      tfe_set_num_threads(q == 1 ? 1 : 3);
      assert_int_equal(tfe_einsum_execute_f64(q == 2 ? p0 : p, 1, v, 0, &out), TFE_OK);
    }
    if (memcmp(r[0], r[1], (size_t)on * sizeof(double))) fail_msg("%s: 3 workers differ from one", expr);
    for (int64_t i = 0; i < on; i++) assert_true(fabs(r[0][i] - r[2][i]) <= 1e-9 * (1 + fabs(r[2][i])) * (double)cs.slices);
    par += p->slice_workers > 1;
    int64_t parts = 1; /* disjoint parts of the output: >= 3 lets each worker take whole parts */
    for (int i = 0; i < p->out_rank; i++)
      if (p->slice_of[p->out_lab[i]] >= 0) parts *= p->sliced_dim[p->slice_of[p->out_lab[i]]];
    whole += p->slice_workers > 1 && parts >= 3;
    for (int q = 0; q < 3; q++) free(r[q]);
    tfe_einsum_plan_release(p);
    tfe_einsum_plan_release(p0);
  }
  tfe_set_num_threads(0);
  print_message("sliced plans run 3 slices at a time: %d (workers taking whole output parts: %d)\n", par, whole);
#ifdef _OPENMP
  assert_true(par > whole && whole > 0); /* both schedules ran */
#else
  assert_int_equal(par, 0); /* one thread without OpenMP: slices one at a time */
#endif
}

/* The cache serves a repeated call; a changed stride makes a new plan. */
static void test_cache(void **state) {
  (void)state;
  tfe_einsum_cache_clear();
  double x[24] = {1, 2, 3, 4, 5, 6};
  int64_t d[2] = {2, 3};
  tfe_view_f64 v[2] = {rowmajor(x, 2, d), rowmajor(x + 6, 2, d)};
  tfe_tensor_f64 t = {0};
  long h0, m0, h1, m1;
  tfe_einsum_cache_stats(&h0, &m0);
  for (int i = 0; i < 5; i++) { assert_int_equal(tfe_einsum(&t, "ij,kj->ik", 2, v), TFE_OK); tfe_tensor_release_f64(&t); }
  tfe_einsum_cache_stats(&h1, &m1);
  assert_int_equal(h1 - h0, 4);
  assert_int_equal(m1 - m0, 1);
  v[1].lay.strides[0] = 1; v[1].lay.strides[1] = 2;
  assert_int_equal(tfe_einsum(&t, "ij,kj->ik", 2, v), TFE_OK);
  tfe_tensor_release_f64(&t);
  tfe_einsum_cache_stats(&h1, &m1);
  assert_int_equal(m1 - m0, 2);
  for (int i = 0; i < 100; i++) { /* eviction keeps the cache bounded and valid */
    char e[16];
    snprintf(e, sizeof e, "ij,kj->%s", i % 2 ? "ik" : "ki");
    int64_t dd[2] = {2, 1 + i % 3};
    tfe_view_f64 w[2] = {rowmajor(x, 2, dd), rowmajor(x + 6, 2, dd)};
    assert_int_equal(tfe_einsum(&t, e, 2, w), TFE_OK);
    tfe_tensor_release_f64(&t);
  }
  tfe_einsum_cache_clear();
}

/* Owned operands are released; dyn entry points work. */
static void test_owned_dyn(void **state) {
  (void)state;
  int64_t d[2] = {3, 3};
  tfe_tensor_c128 ops[3];
  memset(ops, 0, sizeof ops);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(tfe_empty_c128(&ops[i], 2, d, TFE_COLMAJOR), TFE_OK);
    for (int e = 0; e < 9; e++) ops[i].v.data[e] = (double)(e + i) + 1.0 * I * (double)(e - i);
  }
  tfe_view_c128 vv[3] = {ops[0].v, ops[1].v, ops[2].v};
  tfe_tensor_c128 ref = {0}, got = {0};
  assert_int_equal(tfe_einsum(&ref, "ab,bc,ca->", 3, vv), TFE_OK);
  assert_int_equal(tfe_einsum_owned(&got, "ab,bc,ca->", 3, ops, NULL), TFE_OK);
  for (int i = 0; i < 3; i++) assert_null(ops[i].st);
  assert_true(cabs(ref.v.data[0] - got.v.data[0]) < 1e-9);
  tfe_tensor_release_c128(&ref);
  tfe_tensor_release_c128(&got);
  float xf[4] = {1, 2, 3, 4};
  int64_t d2[2] = {2, 2};
  tfe_dyn dv = {TFE_DT_F32, xf, {0}, false, NULL}, out;
  tfe_layout_dense(2, d2, TFE_COLMAJOR, &dv.lay);
  assert_int_equal(tfe_einsum_dyn(&out, "ij->ji", 1, &dv, NULL), TFE_OK);
  assert_int_equal(out.dtype, TFE_DT_F32);
  assert_true(((float *)out.data)[1] == 3);
  float yf[4];
  tfe_dyn od = {TFE_DT_F32, yf, out.lay, false, NULL};
  assert_int_equal(tfe_einsum_into_dyn(&od, "ij->ij", 1, &dv, NULL), TFE_OK);
  assert_true(yf[1] == 2);
  tfe_storage_release(out.st);
  tfe_einsum_cache_clear();
}

/* The profiling hook sees every step of every slice once, with the plan's multiply-adds. */
typedef struct hook_log { int calls, pre, seen[16]; double flops; bool bad; } hook_log;
static void log_step(void *ctx, const tfe_einsum_step_info *in) {
  hook_log *h = (hook_log *)ctx;
  h->calls++;
  if (in->step < 0) { h->pre++; return; }
  if (!in->lay_a || !in->lab_a || !in->lay_c || !in->lab_c || (double)tfe_layout_numel(in->lay_c) != in->out_elems ||
      (in->step >= 0) != (in->lay_b != NULL))
    h->bad = true;
  if (in->step >= 16 || in->seconds < 0 || in->out_elems < 1 ||
      (strcmp(in->what, "contract") && strcmp(in->what, "zip")))
    h->bad = true;
  else
    h->seen[in->step]++;
  h->flops += in->flops;
}
static void test_step_hook(void **state) {
  (void)state;
  double x[4096];
  for (int i = 0; i < 4096; i++) x[i] = (double)(i % 7) - 3;
  int64_t d3[3] = {4, 5, 3}, d2[2] = {5, 6}, e2[2] = {6, 4};
  tfe_view_f64 v[3] = {rowmajor(x, 3, d3), rowmajor(x + 100, 2, d2), rowmajor(x + 200, 2, e2)};
  const tfe_layout *lp[3] = {&v[0].lay, &v[1].lay, &v[2].lay};
  for (int sliced = 0; sliced < 2; sliced++) {
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    o.algo = TFE_PATH_DP;
    o.no_cache = true;
    if (sliced) o.memory_limit = 8 * 8; /* forces slicing of the 4x6 intermediate */
    tfe_einsum_plan *p = NULL;
    assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, "abx,bc,cd->ad", 3, lp, &o), TFE_OK);
    tfe_einsum_cost c = tfe_einsum_plan_cost(p);
    double out[16];
    int64_t od[2] = {4, 4};
    tfe_view_f64 ov = rowmajor(out, 2, od);
    hook_log h;
    memset(&h, 0, sizeof h);
    tfe_einsum_set_step_hook(log_step, &h);
    assert_int_equal(tfe_einsum_execute_f64(p, 1, v, 0, &ov), TFE_OK);
    tfe_einsum_set_step_hook(NULL, NULL);
    assert_false(h.bad);
    assert_int_equal(h.pre, (int)c.slices);            /* the x-sum of operand 0, once per slice */
    assert_int_equal(h.calls, (int)c.slices * 3);
    for (int k = 0; k < 2; k++) assert_int_equal(h.seen[k], (int)c.slices);
    if (sliced) assert_true(c.slices > 1);
    assert_true(fabs(h.flops - c.flops) <= 1e-9 * c.flops); /* pairwise madds, all slices */
    memset(&h, 0, sizeof h); /* off again: no calls */
    assert_int_equal(tfe_einsum_execute_f64(p, 1, v, 0, &ov), TFE_OK);
    assert_int_equal(h.calls, 0);
    tfe_einsum_plan_release(p);
  }
  tfe_einsum_opts o; /* the cost weight must be finite (0 = the default, < 0 = flops only) */
  memset(&o, 0, sizeof o);
  tfe_einsum_plan *p = NULL;
  o.write_weight = NAN;
  TU_EXPECT_ERR(tfe_einsum_plan_new(&p, TFE_DT_F64, "abx,bc,cd->ad", 3, lp, &o), TFE_ERR_INVALID, "write_weight must be a finite number");
  o.write_weight = -1;
  assert_int_equal(tfe_einsum_plan_new(&p, TFE_DT_F64, "abx,bc,cd->ad", 3, lp, &o), TFE_OK);
  tfe_einsum_plan_release(p);
}

/* ---- chains of small steps: the intermediates' orders ---------------------------------------------- */
/* The inner product of two matrix-product states (bench/bench_chain.c) along the natural path
 * given in SSA form: E(b,e) A(b,s,c) -> T, T B(e,s,f) -> E'. Every middle E.A step must write T
 * as its GEMM's natural (m, n) output, (e, s, c) — the transposed left operand of the next
 * step — and not (c, e, s), across its columns (build.h, tfe__ein_choose_orders); the value
 * against plain loops, for bonds that leave partial vectors (3, 5, 10) and whole ones (8); then
 * without the hook (held steps), with operands at offsets, alpha and beta, unsliced and sliced. */
typedef struct chain_log { int bad, checked; } chain_log;
static void chain_step(void *ctx, const tfe_einsum_step_info *in) {
  chain_log *g = (chain_log *)ctx;
  if (in->step <= 0 || in->step % 2 == 0 || in->step >= in->nsteps - 2) return; /* the middle E.A steps */
  g->checked++;
  /* c's first label is E's free one (in a, not in b), then A's free labels in A's order */
  if (in->rank_a != 2 || in->rank_b != 3 || in->rank_c != 3) { g->bad++; return; }
  int32_t efree = in->lab_a[in->lab_a[0] == in->lab_b[0] ? 1 : 0];
  bool ok = in->lab_c[0] == efree &&
            in->lab_c[1] == in->lab_b[1] && in->lab_c[2] == in->lab_b[2] && in->lay_c->strides[0] == 1 &&
            in->lay_c->strides[2] == in->lay_c->strides[1] * in->lay_c->dims[1];
  if (!ok) g->bad++;
}
static void test_chain_orders(void **state) {
  (void)state;
  const int Ns[] = {2, 3, 6}, Ds[] = {3, 5, 8, 10}, d = 2;
  for (int ni = 0; ni < 3; ni++)
    for (int di = 0; di < 4; di++) {
      int N = Ns[ni], D = Ds[di], n = 2 * N;
      double *data[12];
      tfe_layout lay[12];
      int32_t lab[12][3];
      for (int k = 0; k < n; k++) { /* A_i: (b_{i-1}, s_i, b_i); B_i: (e_{i-1}, s_i, e_i) */
        int i = k / 2, r = 0;
        int32_t bond = k % 2 ? 2 * N : N;
        int64_t dims[3];
        if (i > 0) { dims[r] = D; lab[k][r++] = bond + i - 1; }
        dims[r] = d; lab[k][r++] = i;
        if (i < N - 1) { dims[r] = D; lab[k][r++] = bond + i; }
        tfe_layout_dense(r, dims, TFE_COLMAJOR, &lay[k]);
        int64_t cnt = tfe_layout_numel(&lay[k]);
        data[k] = malloc(sizeof(double) * (size_t)cnt);
        assert_non_null(data[k]);
        for (int64_t j = 0; j < cnt; j++) data[k][j] = (double)((j * 37 + k * 11) % 17) / 17.0 - 0.45;
      }
      /* reference: E[b + D e] boundary by plain loops */
      double *E = calloc((size_t)(D * D), sizeof(double)), *E2 = calloc((size_t)(D * D), sizeof(double)), ref = 0;
      assert_non_null(E); assert_non_null(E2);
      for (int b = 0; b < D; b++)
        for (int e = 0; e < D; e++)
          for (int s = 0; s < d; s++) E[b + D * e] += data[0][s + d * b] * data[1][s + d * e];
      for (int i = 1; i < N; i++) {
        const double *A = data[2 * i], *B = data[2 * i + 1];
        int last = i == N - 1, C = last ? 1 : D;
        memset(E2, 0, sizeof(double) * (size_t)(D * D));
        for (int c = 0; c < C; c++)
          for (int f = 0; f < C; f++)
            for (int b = 0; b < D; b++)
              for (int e = 0; e < D; e++)
                for (int s = 0; s < d; s++) E2[c + D * f] += E[b + D * e] * A[b + D * s + D * d * c] * B[e + D * s + D * d * f];
        memcpy(E, E2, sizeof(double) * (size_t)(D * D));
      }
      ref = E[0];
      int path[22];
      path[0] = 0; path[1] = 1;
      for (int k = 1; k < n - 1; k++) { path[2 * k] = n + k - 1; path[2 * k + 1] = k + 1; }
      tfe_einsum_opts o;
      memset(&o, 0, sizeof o);
      o.algo = TFE_PATH_GIVEN; o.path = path; o.path_nsteps = n - 1; o.path_format = TFE_PATH_SSA; o.no_cache = true;
      const tfe_layout *lp[12];
      const int32_t *lb[12];
      tfe_view_f64 ops[12];
      for (int k = 0; k < n; k++) { lp[k] = &lay[k]; lb[k] = lab[k]; ops[k].data = data[k]; ops[k].lay = lay[k]; ops[k].conj = false; }
      tfe_einsum_plan *p = NULL;
      assert_int_equal(tfe_einsum_plan_new_labels(&p, TFE_DT_F64, n, lp, lb, NULL, 0, &o), TFE_OK);
      double out = 0;
      tfe_view_f64 ov = {&out, {0}, false};
      chain_log g = {0, 0};
      tfe_einsum_set_step_hook(chain_step, &g);
      assert_int_equal(tfe_einsum_execute_f64(p, 1.0, ops, 0.0, &ov), TFE_OK);
      tfe_einsum_set_step_hook(NULL, NULL);
      if (!(fabs(out - ref) <= 1e-12 * (1 + fabs(ref)) * n))
        fail_msg("N=%d D=%d: einsum %.17g, loops %.17g", N, D, out, ref);
      assert_int_equal(g.bad, 0);
      assert_int_equal(g.checked, N > 2 ? N - 2 : 0);
      /* without the hook the small steps run held (exec: stored plans on the operands'
       * pointers, no views): the operands at an offset in other buffers, alpha and beta; then
       * the same plan sliced (a memory limit below the T intermediate) */
      double *moved[12];
      tfe_view_f64 ops2[12];
      for (int k = 0; k < n; k++) {
        int64_t cnt = tfe_layout_numel(&lay[k]);
        moved[k] = malloc(sizeof(double) * (size_t)(cnt + 5));
        assert_non_null(moved[k]);
        memcpy(moved[k] + 5, data[k], sizeof(double) * (size_t)cnt);
        ops2[k] = ops[k]; ops2[k].data = moved[k]; ops2[k].lay.offset = 5;
      }
      for (int sliced = 0; sliced < 2; sliced++) {
        tfe_einsum_plan *q = p;
        if (sliced) {
          o.memory_limit = 8 * (int64_t)D * D;
          assert_int_equal(tfe_einsum_plan_new_labels(&q, TFE_DT_F64, n, lp, lb, NULL, 0, &o), TFE_OK);
          o.memory_limit = 0;
        }
        out = 1;
        assert_int_equal(tfe_einsum_execute_f64(q, 2.0, ops2, 0.5, &ov), TFE_OK);
        if (!(fabs(out - (2 * ref + 0.5)) <= 1e-12 * (1 + fabs(ref)) * n))
          fail_msg("N=%d D=%d sliced %d (%lld slices): held run %.17g, loops %.17g", N, D, sliced,
                   (long long)tfe_einsum_plan_cost(q).slices, out, 2 * ref + 0.5);
        if (q != p) tfe_einsum_plan_release(q);
      }
      /* the operands' layouts are checked against the plan's packed copy (plan.h, in_pk): a
       * stride or a rank changed on the last operand (after operands of ranks 2 and 3) is
       * refused, the output untouched; the packed operand records of the held steps name the
       * same operand, buffer and offset as the steps' own */
      {
        tfe_view_f64 bad = ops2[n - 1];
        out = 7;
        ops2[n - 1].lay.strides[0] += 1;
        assert_int_equal(tfe_einsum_execute_f64(p, 1.0, ops2, 0.0, &ov), TFE_ERR_SHAPE);
        char want[32];
        snprintf(want, sizeof want, "operand %d axis 0", n - 1);
        if (!strstr(tfe_last_error(), want)) fail_msg("message '%s' lacks '%s'", tfe_last_error(), want);
        ops2[n - 1] = bad;
        ops2[n - 1].lay.rank = 1;
        assert_int_equal(tfe_einsum_execute_f64(p, 1.0, ops2, 0.0, &ov), TFE_ERR_RANK);
        assert_true(out == 7);
        ops2[n - 1] = bad;
        for (int k = 0; k < p->nsteps; k++) {
          const tfe__ein_step *s = &p->step[k];
          int id[2] = {s->a, s->b};
          for (int j = 0; j < 2; j++) {
            const tfe__ein_src *x = &p->src[3 * k + j];
            if (id[j] < n && p->leaf[id[j]].pre < 0) { assert_int_equal(x->op, id[j]); continue; }
            const tfe__ein_step *t = id[j] >= n ? &p->step[id[j] - n] : &p->pre[p->leaf[id[j]].pre];
            assert_true(x->op < 0 && x->buf == t->buf && x->off == t->lay.offset);
          }
          if (k + 1 < p->nsteps) assert_true(p->src[3 * k + 2].buf == s->buf && p->src[3 * k + 2].off == s->lay.offset);
        }
      }
      for (int k = 0; k < n; k++) free(moved[k]);
      /* steps of the same shape share one stored contraction plan (labels renamed: plan.h) */
      if (N >= 4) {
        assert_non_null(p->cplan[p->npre + 1]);
        assert_ptr_equal(p->cplan[p->npre + 1], p->cplan[p->npre + 3]); /* E.A at sites 1, 2 */
        assert_ptr_equal(p->cplan[p->npre + 2], p->cplan[p->npre + 4]); /* T.B */
        assert_ptr_not_equal(p->cplan[p->npre + 1], p->cplan[p->npre + 2]);
      }
      tfe_einsum_plan_release(p);
      for (int k = 0; k < n; k++) free(data[k]);
      free(E); free(E2);
    }
}

/* ---- progress and cancellation ---------------------------------------------------------------------- */
/* The callback's log: every report checked against the previous one; cancels at report
 * number cancel_at (-1: never). */
typedef struct prog_log { int calls, cancel_at; tfe_einsum_progress_info last; bool bad; } prog_log;
static int prog_cb(void *ctx, const tfe_einsum_progress_info *in) {
  prog_log *g = (prog_log *)ctx;
  const tfe_einsum_progress_info *o = &g->last;
  if (g->calls == 0 ? (in->steps_done != 0 || in->madds_done != 0 || in->slices_done != 0)
                    : (in->steps_done != o->steps_done + 1 || in->madds_done < o->madds_done || in->seconds < o->seconds ||
                       in->slices_done < o->slices_done))
    g->bad = true;
  if (in->steps_done > in->steps_total || in->madds_done > in->madds_total * (1 + 1e-12) || in->live_bytes < 0 ||
      in->slices_done > in->slices_total || in->seconds < 0 || in->steps_total < 1)
    g->bad = true;
  g->last = *in;
  return g->calls++ == g->cancel_at;
}
static void fill99(double *y, int64_t n) { for (int64_t i = 0; i < n; i++) y[i] = 99.5; }
static bool all99(const double *y, int64_t n) { for (int64_t i = 0; i < n; i++) if (y[i] != 99.5) return false; return true; }
/* Random networks, sliced or not: a full run reports every step of every slice (counts and
 * multiply-adds add up); then a cancel at every report stops the call with TFE_ERR_CANCELLED,
 * the output untouched and nothing left allocated; a cancel at the last report is too late and
 * the call succeeds with the right result. Per thread (tfe_einsum_set_progress, plan execution)
 * and per call (opts.progress, which takes precedence; allocating, into and consuming forms). */
static void test_progress_cancel(void **state) {
  (void)state;
  tu_rng g = {0xC0FFEE};
  static double x[16][4096], y[4096], ref[4096];
  for (int t = 0; t < 16; t++) for (int i = 0; i < 4096; i++) x[t][i] = tu_unif(&g) - 0.5;
  int cases = tu_cases(24), cancels = 0;
  for (int c = 0; c < cases; c++) {
    int n = (int)tu_int(&g, 3, 7); /* random_network needs n >= 3 (ranks up to 4) */
    char expr[256];
    tfe_layout lay[16];
    const tfe_layout *lp[16];
    random_network(&g, n, expr, lay, lp);
    tfe_view_f64 v[16];
    for (int t = 0; t < n; t++) { v[t].data = x[t]; v[t].lay = lay[t]; v[t].conj = false; }
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    o.no_cache = true;
    o.out_order = TFE_ROWMAJOR;
    if (c % 2) o.memory_limit = 8 * 64; /* slices */
    tfe_einsum_plan *p = NULL;
    if (tfe_einsum_plan_new(&p, TFE_DT_F64, expr, n, lp, &o) != TFE_OK) fail_msg("%s: %s", expr, tfe_last_error());
    tfe_einsum_cost cost = tfe_einsum_plan_cost(p);
    int64_t od[TFE_MAX_RANK], on = 1;
    for (int i = 0; i < p->out_rank; i++) { od[i] = p->out_dims[i]; on *= od[i]; }
    if (on > 4096) { tfe_einsum_plan_release(p); continue; }
    tfe_view_f64 ov = rowmajor(y, p->out_rank, od);
    prog_log L = {0, -1, {0}, false};
    tfe_einsum_set_progress(prog_cb, &L);
    assert_int_equal(tfe_einsum_execute_f64(p, 1, v, 0, &ov), TFE_OK);
    memcpy(ref, y, (size_t)on * sizeof(double));
    assert_false(L.bad);
    int reports = L.calls;
    assert_int_equal(reports, L.last.steps_total + 1); /* the start, then every step */
    assert_int_equal(L.last.steps_done, L.last.steps_total);
    assert_int_equal(L.last.slices_done, cost.slices);
    assert_int_equal(L.last.slices_total, cost.slices);
    assert_true(L.last.madds_done == L.last.madds_total);
    assert_true(L.last.madds_total >= cost.flops * (1 - 1e-12)); /* pairwise steps plus leaf reductions */
    /* every report of small runs; else the first 16, the last 16 and 16 between (each cancelled
     * run costs up to a whole run: all reports of a many-slice plan would be quadratic) */
    int step = reports <= 48 ? 1 : (reports - 32) / 16 + 1;
    for (int at = 0; at < reports; at += at < 16 || at >= reports - 17 ? 1 : step) {
      if (at > 16 && at < reports - 16 && at + step > reports - 16) at = reports - 16;
      L = (prog_log){0, at, {0}, false};
      fill99(y, on);
      tu_fail_after(-1); /* counts allocations */
      long live0 = tu_live_allocs;
      tfe_status st = tfe_einsum_execute_f64(p, 1, v, 0, &ov);
      tfe_einsum_workspace_release();
      tu_alloc_restore();
      if (tu_live_allocs != live0) fail_msg("%s: leak after a cancel at report %d", expr, at);
      if (at + 1 < reports) {
        if (st != TFE_ERR_CANCELLED || !strstr(tfe_last_error(), "cancelled by the progress callback") ||
            !strstr(tfe_last_error(), "tfe_einsum_execute_f64"))
          fail_msg("%s: cancel at report %d of %d: status %d (%s)", expr, at, reports, st, tfe_last_error());
        assert_true(all99(y, on));
        cancels++;
      } else {
        assert_int_equal(st, TFE_OK); /* after the last step: too late, the call completes */
        assert_memory_equal(y, ref, (size_t)on * sizeof(double));
      }
      assert_int_equal(L.calls, at + 1); /* no report after the cancel */
    }
    /* per call: opts.progress wins over the thread's callback; the one-call forms free everything */
    prog_log T = {0, 0, {0}, false}; /* the thread's: would cancel at once */
    tfe_einsum_set_progress(prog_cb, &T);
    for (int form = 0; form < 3; form++) {
      L = (prog_log){0, reports > 1 ? 1 : -1, {0}, false};
      o.progress = prog_cb; o.progress_ctx = &L;
      fill99(y, on);
      tu_fail_after(-1);
      long live0 = tu_live_allocs;
      tfe_tensor_f64 r = {0};
      tfe_tensor_f64 own[16];
      tfe_status st;
      if (form == 0) st = tfe_einsum_into_with_f64(&ov, 1, 0, expr, n, v, &o);
      else if (form == 1) st = tfe_einsum_with_f64(&r, expr, n, v, &o);
      else {
        for (int t = 0; t < n; t++) {
          assert_int_equal(tfe_empty_f64(&own[t], lay[t].rank, lay[t].dims, TFE_COLMAJOR), TFE_OK);
          memcpy(own[t].v.data, x[t], (size_t)tfe_layout_numel(&lay[t]) * sizeof(double));
        }
        st = tfe_einsum_owned_f64(&r, expr, n, own, &o);
      }
      tfe_einsum_workspace_release();
      if (reports > 1) {
        assert_int_equal(st, TFE_ERR_CANCELLED);
        assert_null(r.st);
        assert_true(all99(y, on));
      } else {
        assert_int_equal(st, TFE_OK);
      }
      tfe_tensor_release_f64(&r);
      tu_alloc_restore();
      if (tu_live_allocs != live0) fail_msg("%s: form %d leaks after a cancel", expr, form);
      assert_int_equal(T.calls, 0);
    }
    o.progress = NULL; o.progress_ctx = NULL;
    tfe_einsum_set_progress(NULL, NULL);
    void *ctx = &o;
    assert_null(tfe_einsum_get_progress(&ctx));
    assert_null(ctx);
    L = (prog_log){0, 0, {0}, false}; /* off again: no calls */
    assert_int_equal(tfe_einsum_execute_f64(p, 1, v, 0, &ov), TFE_OK);
    assert_int_equal(L.calls, 0);
    tfe_einsum_plan_release(p);
  }
  assert_true(cancels > cases);
  assert_string_equal(tfe_status_name(TFE_ERR_CANCELLED), "cancelled");
  /* on a stream: the task keeps the options, the cancel reaches the promise */
  tfe_stream *s = NULL;
  assert_int_equal(tfe_stream_new(0, &s), TFE_OK);
  int64_t d[2] = {6, 6};
  tfe_dyn ops[3], c = {0};
  for (int t = 0; t < 3; t++) {
    assert_int_equal(tfe_dyn_empty(&ops[t], TFE_DT_F64, 2, d, TFE_COLMAJOR), TFE_OK);
    for (int i = 0; i < 36; i++) ((double *)ops[t].data)[i] = x[t][i];
  }
  for (int at = 0; at < 4; at++) { /* reports: start, 2 steps; the last cannot cancel */
    prog_log L = {0, at, {0}, false};
    tfe_einsum_opts o;
    memset(&o, 0, sizeof o);
    o.progress = prog_cb; o.progress_ctx = &L;
    assert_int_equal(tfe_einsum_async_dyn(s, &c, "ij,jk,kl->il", 3, ops, &o), TFE_OK);
    tfe_status st = tfe_wait(&c);
    if (at < 2) assert_int_equal(st, TFE_ERR_CANCELLED);
    else assert_int_equal(st, TFE_OK);
    assert_int_equal(L.calls, at < 3 ? at + 1 : 3);
    tfe_dyn_release(&c);
  }
  tfe_stream_free(s);
  for (int t = 0; t < 3; t++) tfe_dyn_release(&ops[t]);
}

/* ---- several threads through the shared caches and workspaces ------------------------------------ */
/* Threads run a mix of einsums (hits, misses and evictions in both plan caches, both workspaces
 * taken and given back, one thread dropping the kept blocks now and then) and compare every
 * result with the one computed before they started. Run under ThreadSanitizer too. */
#include <pthread.h> /* not C11 threads: ThreadSanitizer intercepts pthread_create only */
#define CT_CASES 6
typedef struct ct_case { const char *expr; int n; int rank[3]; int64_t dims[3][3]; double *want; int64_t nout; } ct_case;
static ct_case ct_cases[CT_CASES] = {
    {"ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}, NULL, 0},
    {"ij,jk,kl->il", 3, {2, 2, 2}, {{5, 6}, {6, 7}, {7, 3}}, NULL, 0},
    {"abc,cd->abd", 2, {3, 2}, {{2, 3, 4}, {4, 6}}, NULL, 0},
    {"ii,ij->j", 2, {2, 2}, {{4, 4}, {4, 3}}, NULL, 0},
    {"bij,bjk->bik", 2, {3, 3}, {{3, 8, 9}, {3, 9, 8}}, NULL, 0},
    {"ij,ij->ij", 2, {2, 2}, {{9, 7}, {9, 7}}, NULL, 0},
};
static double ct_data[4096];
typedef struct ct_job { int id, iters, bad; char msg[TFE_ERRMSG_MAX + 64]; } ct_job;
static tfe_status ct_run(int c, tfe_tensor_f64 *out) {
  tfe_view_f64 v[3];
  for (int k = 0; k < ct_cases[c].n; k++) v[k] = rowmajor(ct_data + 300 * k, ct_cases[c].rank[k], ct_cases[c].dims[k]);
  return tfe_einsum_f64(out, ct_cases[c].expr, ct_cases[c].n, v);
}
static void *ct_worker(void *arg) {
  ct_job *j = (ct_job *)arg;
  tu_rng r = {0x1234567ULL + (uint64_t)j->id};
  for (int it = 0; it < j->iters && !j->bad; it++) {
    int c = (int)tu_int(&r, 0, CT_CASES - 1);
    tfe_tensor_f64 t = {0};
    tfe_status st = ct_run(c, &t);
    if (st != TFE_OK) { j->bad++; snprintf(j->msg, sizeof j->msg, "%s: %s", ct_cases[c].expr, tfe_last_error()); break; }
    for (int64_t i = 0; i < ct_cases[c].nout; i++)
      if (t.v.data[i] != ct_cases[c].want[i]) { j->bad++; snprintf(j->msg, sizeof j->msg, "%s: element %lld", ct_cases[c].expr, (long long)i); break; }
    tfe_tensor_release_f64(&t);
    if (j->id == 0 && it % 17 == 0) { tfe_einsum_workspace_release(); tfe_contract_workspace_release(); }
  }
  return NULL;
}
static void test_threads(void **state) {
  (void)state;
  for (int i = 0; i < 4096; i++) ct_data[i] = (double)(i % 11) - 5;
  for (int c = 0; c < CT_CASES; c++) {
    tfe_tensor_f64 t = {0};
    assert_int_equal(ct_run(c, &t), TFE_OK);
    ct_cases[c].nout = tfe_layout_numel(&t.v.lay);
    ct_cases[c].want = malloc((size_t)ct_cases[c].nout * sizeof(double) + 8);
    memcpy(ct_cases[c].want, t.v.data, (size_t)ct_cases[c].nout * sizeof(double));
    tfe_tensor_release_f64(&t);
  }
  tfe_tuning keep = tfe_tuning_get(), small = keep;
  small.einsum_plan_cache_size = 3; /* evictions in both caches while the others look up */
  small.contract_plan_cache_size = 4;
  assert_int_equal(tfe_tuning_set(&small), TFE_OK);
  tfe_einsum_cache_clear();
  tfe_contract_cache_clear();
  enum { NT = 4 };
  ct_job jobs[NT];
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) {
    jobs[i] = (ct_job){i, tu_cases(3000), 0, ""};
    assert_int_equal(pthread_create(&th[i], NULL, ct_worker, &jobs[i]), 0);
  }
  for (int i = 0; i < NT; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < NT; i++)
    if (jobs[i].bad) fail_msg("thread %d: %s", i, jobs[i].msg);
  long h, m, ev;
  tfe_einsum_cache_stats(&h, &m);
  tfe_einsum_cache_info(NULL, NULL, &ev);
  print_message("einsum cache after %d threads: %ld hits, %ld misses, %ld evictions\n", NT, h, m, ev);
  assert_true(ev > 0 && h > 0);
  assert_int_equal(tfe_tuning_set(&keep), TFE_OK);
  tfe_einsum_cache_clear();
  tfe_contract_cache_clear();
  for (int c = 0; c < CT_CASES; c++) free(ct_cases[c].want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_semantics),   cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_bind_errors),
      cmocka_unit_test(test_exec_errors), cmocka_unit_test(test_alloc_failures), cmocka_unit_test(test_optimizers),
      cmocka_unit_test(test_cache),       cmocka_unit_test(test_owned_dyn), cmocka_unit_test(test_step_hook), cmocka_unit_test(test_progress_cancel),    cmocka_unit_test(test_differential), cmocka_unit_test(test_threads),
      cmocka_unit_test(test_plan_time),   cmocka_unit_test(test_plan_lm_batch), cmocka_unit_test(test_plan_parts), cmocka_unit_test(test_parallel_slices), cmocka_unit_test(test_chain_orders),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
