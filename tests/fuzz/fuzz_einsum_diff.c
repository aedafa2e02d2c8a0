/* libFuzzer target, structure-aware: the bytes choose a small einsum (1-4 operands of rank 0-3
 * over labels a-e of sizes 1-4, an explicit or implicit output, values small integers, or for
 * max-plus also NaN and infinities of both signs) and its result must equal a naive loop over
 * every label assignment (f64: exactly, the values are small integers; max-plus: by the
 * tropical rule of docs/core.md, which does not depend on the order of terms). Aborts on a
 * mismatch or on an error from a valid request. */
#include <tenferro.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct fz { const uint8_t *d; size_t n, i; } fz;
static unsigned fz_get(fz *f, unsigned mod) { return f->i < f->n ? f->d[f->i++] % mod : 0; }

typedef struct net {
  int n, rank[4], out_rank, size[5];
  char lab[4][3], out[5];
  char expr[64];
} net;

static void make_net(fz *f, net *t) {
  t->n = 1 + (int)fz_get(f, 4);
  for (int l = 0; l < 5; l++) t->size[l] = 1 + (int)fz_get(f, 4);
  int seen[5] = {0}, p = 0;
  for (int k = 0; k < t->n; k++) {
    t->rank[k] = (int)fz_get(f, 4);
    for (int i = 0; i < t->rank[k]; i++) { t->lab[k][i] = (char)('a' + fz_get(f, 5)); seen[t->lab[k][i] - 'a'] = 1; }
    for (int i = 0; i < t->rank[k]; i++) t->expr[p++] = t->lab[k][i];
    t->expr[p++] = k + 1 < t->n ? ',' : '-';
  }
  t->expr[p++] = '>';
  for (int l = 0; l < 5; l++) if (!seen[l]) t->size[l] = 1; /* the naive loop runs over used labels only */
  t->out_rank = 0;
  for (int l = 0; l < 5; l++) /* each seen label kept in the output or summed */
    if (seen[l] && fz_get(f, 2)) t->out[t->out_rank++] = (char)('a' + l);
  for (int i = 0; i < t->out_rank; i++) t->expr[p++] = t->out[i];
  t->expr[p] = 0;
}
/* Column-major offset of operand k's element at the label assignment idx. */
static int64_t off(const net *t, int k, const int *idx) {
  int64_t o = 0, s = 1;
  for (int i = 0; i < t->rank[k]; i++) { o += idx[t->lab[k][i] - 'a'] * s; s *= t->size[t->lab[k][i] - 'a']; }
  return o;
}
static int64_t numel(const net *t, int k) {
  int64_t s = 1;
  for (int i = 0; i < t->rank[k]; i++) s *= t->size[t->lab[k][i] - 'a'];
  return s;
}
/* Whether the label assignment idx lies on output element oidx. */
static int out_at(const net *t, const int *idx, const int *oidx) {
  for (int i = 0; i < t->out_rank; i++) if (idx[t->out[i] - 'a'] != oidx[i]) return 0;
  return 1;
}
static double trop_mul(double a, double b) { return a == -INFINITY || b == -INFINITY ? -INFINITY : a + b; }

static void run(fz *f, int trop) {
  net t;
  make_net(f, &t);
  double *val[4];
  tfe_view_f64 v[4];
  tfe_view_maxplus_f64 w[4];
  for (int k = 0; k < t.n; k++) {
    int64_t n = numel(&t, k), dims[3];
    val[k] = malloc((size_t)n * sizeof(double) + 8);
    for (int64_t e = 0; e < n; e++) {
      unsigned u = fz_get(f, 16);
      val[k][e] = trop && u == 13 ? NAN : trop && u == 14 ? INFINITY : trop && u == 15 ? -INFINITY : (double)u - 6;
    }
    for (int i = 0; i < t.rank[k]; i++) dims[i] = t.size[t.lab[k][i] - 'a'];
    if (tfe_wrap_f64(&v[k], val[k], n, t.rank[k], dims, NULL, 0, TFE_COLMAJOR) != TFE_OK) abort();
    w[k].data = (tfe_maxplus_f64 *)val[k]; w[k].lay = v[k].lay; w[k].conj = false;
  }
  tfe_tensor_f64 r = {0};
  tfe_tensor_maxplus_f64 rt = {0};
  tfe_status st = trop ? tfe_einsum_maxplus_f64(&rt, t.expr, t.n, w) : tfe_einsum_f64(&r, t.expr, t.n, v);
  if (st != TFE_OK) { fprintf(stderr, "%s: %s\n", t.expr, tfe_last_error()); abort(); }
  const double *got = trop ? (const double *)rt.v.data : r.v.data;
  int oidx[5] = {0};
  for (;;) { /* every output element: the naive sum over every label assignment */
    double acc = trop ? -INFINITY : 0;
    int nan = 0, idx[5] = {0};
    for (;;) {
      if (out_at(&t, idx, oidx)) {
        double p = trop ? 0 : 1;
        for (int k = 0; k < t.n; k++) p = trop ? trop_mul(p, val[k][off(&t, k, idx)]) : p * val[k][off(&t, k, idx)];
        if (trop) { if (isnan(p)) nan = 1; else if (p > acc) acc = p; } else acc += p;
      }
      int l = 0;
      while (l < 5 && ++idx[l] == t.size[l]) idx[l++] = 0;
      if (l == 5) break;
    }
    if (nan) acc = NAN;
    int64_t o = 0, s = 1;
    for (int i = 0; i < t.out_rank; i++) { o += oidx[i] * s; s *= t.size[t.out[i] - 'a']; }
    if (!(got[o] == acc || (isnan(got[o]) && isnan(acc)))) {
      fprintf(stderr, "%s (%s): element %lld is %g, the naive loop gives %g\n", t.expr, trop ? "maxplus" : "f64",
              (long long)o, got[o], acc);
      abort();
    }
    int i = 0;
    while (i < t.out_rank && ++oidx[i] == t.size[t.out[i] - 'a']) oidx[i++] = 0;
    if (i == t.out_rank) break;
  }
  tfe_tensor_release_f64(&r);
  tfe_tensor_release_maxplus_f64(&rt);
  for (int k = 0; k < t.n; k++) free(val[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz f = {data, size, 0};
  run(&f, (int)fz_get(&f, 2));
  return 0;
}
