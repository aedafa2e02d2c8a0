/* tests/test_gpu_conformance.c — the CPU's differential cases run against each GPU backend
 * ("cuda:N"): random binary and unary contractions of f64, c128, f32 and c64 with random
 * strides (permuted, padded, negative, zero for inputs), sizes 0 and 1, repeated labels in an
 * input (trace) and in C (diagonal writes), labels in one input only, alpha/beta (beta = 0 with
 * NaN in C), lazy conjugation of A, B and C. Each case runs on the CPU backend and on the GPU
 * (operands uploaded with the same layouts, the backend inferred from their memory space) and
 * the results are compared.
 *
 * Without a GPU it skips (CI); `make test-gpu` sets TFE_GPU_REQUIRED=1, which turns "no GPU"
 * into a failure. TFE_GPU_CASES overrides the number of random cases per kind. */
#include "testutil.h"
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct hostop {
  tfe_dyn v;  /* host view over buf (no storage) */
  char *buf;
  size_t bytes;
} hostop;

static const tfe_dtype kinds[] = {TFE_DT_F64, TFE_DT_C128, TFE_DT_F32, TFE_DT_C64};
static int dev_count;

static bool cplx(tfe_dtype dt) { return dt == TFE_DT_C64 || dt == TFE_DT_C128; }
static double rnd(tu_rng *r) { return 2 * tu_unif(r) - 1; }

/* A random element of kind dt written at p. */
static void put(tfe_dtype dt, void *p, double re, double im) {
  if (dt == TFE_DT_F64) *(double *)p = re;
  else if (dt == TFE_DT_F32) *(float *)p = (float)re;
  else if (dt == TFE_DT_C128) ((double *)p)[0] = re, ((double *)p)[1] = im;
  else ((float *)p)[0] = (float)re, ((float *)p)[1] = (float)im;
}
static void get(tfe_dtype dt, const void *p, double *re, double *im) {
  *im = 0;
  if (dt == TFE_DT_F64) *re = *(const double *)p;
  else if (dt == TFE_DT_F32) *re = *(const float *)p;
  else if (dt == TFE_DT_C128) *re = ((const double *)p)[0], *im = ((const double *)p)[1];
  else *re = ((const float *)p)[0], *im = ((const float *)p)[1];
}

/* A host view of the given dims with a random layout: axes in random order, padded, some
 * reversed (negative stride), some broadcast (zero stride) when allowed. */
static void make_view(tu_rng *r, tfe_dtype dt, int rank, const int64_t *dims, bool zero_ok, hostop *h) {
  int perm[TFE_MAX_RANK];
  for (int i = 0; i < rank; i++) perm[i] = i;
  for (int i = rank - 1; i > 0; i--) {
    int j = (int)tu_int(r, 0, i), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  memset(&h->v, 0, sizeof h->v);
  h->v.dtype = dt;
  h->v.lay.rank = rank;
  int64_t s = tu_int(r, 1, 2), off = 0;
  for (int q = 0; q < rank; q++) {
    int a = perm[q];
    h->v.lay.dims[a] = dims[a];
    int64_t st = s;
    s = s * (dims[a] > 0 ? dims[a] : 1) + (tu_int(r, 0, 3) == 0 ? tu_int(r, 1, 3) : 0);
    if (zero_ok && dims[a] > 1 && tu_int(r, 0, 7) == 0) st = 0;
    else if (tu_int(r, 0, 3) == 0) st = -st, off += (dims[a] > 0 ? dims[a] - 1 : 0) * -st;
    h->v.lay.strides[a] = st;
  }
  h->v.lay.offset = off;
  size_t es = tfe_dtype_get(dt)->size;
  h->bytes = (size_t)(s + off + 1) * es;
  h->buf = malloc(h->bytes);
  assert_non_null(h->buf);
  for (size_t i = 0; i < h->bytes / es; i++) put(dt, h->buf + i * es, rnd(r), rnd(r));
  h->v.data = h->buf;
}
static void copy_op(const hostop *src, hostop *dst) {
  *dst = *src;
  dst->buf = malloc(src->bytes);
  assert_non_null(dst->buf);
  memcpy(dst->buf, src->buf, src->bytes);
  dst->v.data = dst->buf;
}

/* One random case's labels: roles per label, a few repeated. */
typedef struct lcase {
  int ra, rb, rc;
  int32_t la[12], lb[12], lc[12];
  int64_t da[12], db[12], dc[12];
} lcase;

static void shuffle(tu_rng *r, int32_t *l, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)tu_int(r, 0, i);
    int32_t t = l[i];
    l[i] = l[j], l[j] = t;
  }
}
static void make_labels(tu_rng *r, bool binary, lcase *c) {
  int64_t dim[8];
  int nl = (int)tu_int(r, 1, binary ? 6 : 4);
  c->ra = c->rb = c->rc = 0;
  for (int j = 0; j < nl; j++) {
    dim[j] = tu_int(r, 0, 40) == 0 ? 0 : tu_int(r, 1, 5);
    /* roles: 0 batch, 1 M, 2 N, 3 K, 4 A-only, 5 B-only (unary: 1 kept, 4 summed) */
    int role = binary ? (int)tu_int(r, 0, 5) : (tu_int(r, 0, 2) ? 1 : 4);
    if (role == 5 && tu_int(r, 0, 1)) role = 3; /* one-input labels rarer */
    if (role == 4 && binary && tu_int(r, 0, 1)) role = 3;
    bool in_a = role == 0 || role == 1 || role == 3 || role == 4, in_b = role == 0 || role == 2 || role == 3 || role == 5,
         in_c = role <= 2;
    if (in_a) c->la[c->ra++] = j;
    if (in_b && binary) c->lb[c->rb++] = j;
    if (in_c) c->lc[c->rc++] = j;
  }
  if (c->ra > 0 && tu_int(r, 0, 6) == 0) c->la[c->ra] = c->la[tu_int(r, 0, c->ra - 1)], c->ra++; /* trace */
  bool trace = false; /* A repeats its last label */
  for (int i = 0; i + 1 < c->ra; i++) trace = trace || c->la[i] == c->la[c->ra - 1];
  /* C diagonal; a unary case with repeats on both sides (iij -> jj) is none of the primitives:
   * the engine splits it into TRACE and ANTI_DIAG for the device (more often here) */
  (void)trace;
  if (c->rc > 0 && (tu_int(r, 0, 8) == 0 || (!binary && trace && tu_int(r, 0, 1))))
    c->lc[c->rc] = c->lc[tu_int(r, 0, c->rc - 1)], c->rc++;
  shuffle(r, c->la, c->ra), shuffle(r, c->lb, c->rb), shuffle(r, c->lc, c->rc);
  for (int i = 0; i < c->ra; i++) c->da[i] = dim[c->la[i]];
  for (int i = 0; i < c->rb; i++) c->db[i] = dim[c->lb[i]];
  for (int i = 0; i < c->rc; i++) c->dc[i] = dim[c->lc[i]];
  if (tu_int(r, 0, 2) == 0) { /* labels outside the tables' direct map (negative, >= 256) beside small ones */
    int32_t *ls[3] = {c->la, c->lb, c->lc};
    int rs[3] = {c->ra, c->rb, c->rc};
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < rs[k]; i++) ls[k][i] = ls[k][i] % 2 ? ls[k][i] * 1000 - 3000 : ls[k][i];
  }
}

static void upload(const hostop *h, int dev, tfe_dyn *d) {
  tfe_status st = tfe_gpu_upload(d, dev, &h->v);
  if (st != TFE_OK) fail_msg("upload: %s", tfe_last_error());
}

/* Compares the CPU's and the GPU's C buffers element by element; false (with a message) on
 * the first difference. */
static bool same(tfe_dtype dt, const hostop *cpu, const hostop *gpu, char *msg, size_t nmsg) {
  size_t es = tfe_dtype_get(dt)->size, n = cpu->bytes / es;
  double scale = 1;
  for (size_t i = 0; i < n; i++) {
    double re, im;
    get(dt, cpu->buf + i * es, &re, &im);
    if (isfinite(re) && isfinite(im)) scale = fmax(scale, hypot(re, im));
  }
  double tol = (dt == TFE_DT_F32 || dt == TFE_DT_C64 ? 2e-4 : 1e-11) * scale;
  for (size_t i = 0; i < n; i++) {
    double a, ai, b, bi;
    get(dt, cpu->buf + i * es, &a, &ai);
    get(dt, gpu->buf + i * es, &b, &bi);
    double e = hypot(a - b, ai - bi);
    if (!(e <= tol) && !((isnan(a) || isnan(ai)) && (isnan(b) || isnan(bi)))) {
      snprintf(msg, nmsg, "element %zu of %zu: CPU %.17g%+.17gi, GPU %.17g%+.17gi", i, n, a, ai, b, bi);
      return false;
    }
  }
  return true;
}
static void compare(tfe_dtype dt, const hostop *cpu, const hostop *gpu, int kcase, const char *what) {
  char msg[256];
  if (!same(dt, cpu, gpu, msg, sizeof msg)) fail_msg("%s case %d (%s): %s", what, kcase, tfe_dtype_name(dt), msg);
}

/* One operand of a failing case, for the log. */
static void dump(const char *name, const tfe_dyn *v, const int32_t *l) {
  printf("#   %s: conj %d offset %lld labels/dims/strides:", name, v->conj, (long long)v->lay.offset);
  for (int i = 0; i < v->lay.rank; i++)
    printf(" %d/%lld/%lld", (int)l[i], (long long)v->lay.dims[i], (long long)v->lay.strides[i]);
  printf("\n");
}
static int failures;

static void hfree(hostop *h) { free(h->buf); }

/* One random case on device dev. */
static void run_case(tu_rng *r, int dev, tfe_dtype dt, bool binary, int kcase) {
  lcase c;
  make_labels(r, binary, &c);
  hostop A, B, C, C1, C2;
  make_view(r, dt, c.ra, c.da, true, &A);
  if (binary) make_view(r, dt, c.rb, c.db, true, &B);
  make_view(r, dt, c.rc, c.dc, false, &C);
  bool cx = cplx(dt);
  A.v.conj = cx && tu_int(r, 0, 2) == 0;
  if (binary) B.v.conj = cx && tu_int(r, 0, 2) == 0;
  C.v.conj = cx && tu_int(r, 0, 4) == 0;
  double alpha[2], beta[2];
  int bk = (int)tu_int(r, 0, 3);
  put(dt, alpha, tu_int(r, 0, 3) ? rnd(r) : 1, rnd(r));
  put(dt, beta, bk == 0 ? 0 : bk == 1 ? 1 : rnd(r), bk <= 1 ? 0 : rnd(r));
  if (bk == 0 && tu_int(r, 0, 1)) { /* beta = 0 must not read C */
    size_t es = tfe_dtype_get(dt)->size;
    for (size_t i = 0; i < C.bytes / es; i++) put(dt, C.buf + i * es, NAN, NAN);
  }
  copy_op(&C, &C1), copy_op(&C, &C2);
  tfe_status s_cpu = tfe_contract_dyn(alpha, &A.v, c.la, binary ? &B.v : NULL, c.lb, beta, &C1.v, c.lc);
  char cpu_msg[TFE_ERRMSG_MAX] = "ok";
  if (s_cpu) snprintf(cpu_msg, sizeof cpu_msg, "%s", tfe_last_error());
  tfe_dyn dA, dB, dC;
  upload(&A, dev, &dA), upload(&C, dev, &dC);
  if (binary) upload(&B, dev, &dB);
  tfe_status s_gpu = tfe_contract_dyn(alpha, &dA, c.la, binary ? &dB : NULL, c.lb, beta, &dC, c.lc);
  if (s_gpu != s_cpu) fail_msg("case %d (%s): CPU says %d (%s), GPU %d (%s)", kcase, tfe_dtype_name(dt), s_cpu,
                               cpu_msg, s_gpu, s_gpu ? tfe_last_error() : "ok");
  char msg[256];
  if (s_gpu == TFE_OK) {
    if (tfe_gpu_download(&dC, &C2.v) != TFE_OK) fail_msg("download: %s", tfe_last_error());
    if (!same(dt, &C1, &C2, msg, sizeof msg)) {
      printf("# FAIL %s case %d (%s): %s; alpha %g%+gi beta %g%+gi\n", binary ? "binary" : "unary", kcase,
             tfe_dtype_name(dt), msg, alpha[0], cplx(dt) ? alpha[1] : 0, beta[0], cplx(dt) ? beta[1] : 0);
      if (dt == TFE_DT_F32 || dt == TFE_DT_C64)
        printf("#   (single precision: scalars above are raw bits of floats)\n");
      dump("A", &A.v, c.la);
      if (binary) dump("B", &B.v, c.lb);
      dump("C", &C.v, c.lc);
      failures++;
    }
  }
  tfe_dyn_release(&dA), tfe_dyn_release(&dC);
  if (binary) tfe_dyn_release(&dB), hfree(&B);
  hfree(&A), hfree(&C), hfree(&C1), hfree(&C2);
}

static int cases(void) {
  const char *e = getenv("TFE_GPU_CASES");
  return e && atoi(e) > 0 ? atoi(e) : tu_cases(400);
}

static void test_binary_random(void **state) {
  (void)state;
  for (int dev = 0; dev < dev_count; dev++)
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
      tu_rng r = {0x9E3779B97F4A7C15ULL + k};
      for (int i = 0; i < cases(); i++) run_case(&r, dev, kinds[k], true, i);
    }
  /* GEMMs into C whose M and N labels interleave (gemm.h's loop labels): no size rules
   * (TFE_GPU_GEMM_LOOPS=all), so these small random cases take the loops wherever C is not one
   * matrix; test_gemm_shapes has targeted ones. */
  setenv("TFE_GPU_GEMM_LOOPS", "all", 1);
  for (int dev = 0; dev < dev_count; dev++)
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
      tu_rng r = {0x2545F4914F6CDD1DULL + k};
      for (int i = 0; i < cases() / 2 + 1; i++) run_case(&r, dev, kinds[k], true, i);
    }
  setenv("TFE_GPU_GEMM_LOOPS", "", 1); /* the default again */
  /* small sums into a C the GEMM cannot write in place take one pass over C (gemm.h's
   * tfe__gg_ctr) by default: the GEMM and its copy of C once more */
  setenv("TFE_GPU_DIRECT_CTR", "0", 1);
  for (int dev = 0; dev < dev_count; dev++)
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
      tu_rng r = {0x9E3779B97F4A7C15ULL + k};
      for (int i = 0; i < cases() / 2 + 1; i++) run_case(&r, dev, kinds[k], true, i);
    }
  setenv("TFE_GPU_DIRECT_CTR", "", 1);
  if (failures) fail_msg("%d binary cases differ (listed above)", failures);
}
static void test_unary_random(void **state) {
  (void)state;
  failures = 0;
  for (int dev = 0; dev < dev_count; dev++)
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
      tu_rng r = {0x51ED27A1D5A3C2B1ULL + k};
      for (int i = 0; i < cases(); i++) run_case(&r, dev, kinds[k], false, i);
    }
  if (failures) fail_msg("%d unary cases differ (listed above)", failures);
}

/* A larger GEMM-shaped case (copy-free path) and its transposes, against the CPU. */
static void test_gemm_shapes(void **state) {
  (void)state;
  static const char *const shapes[] = {"ij,jk->ik", "ji,jk->ik", "ij,kj->ik", "ij,jk->ki", "bij,bjk->bik",
                                       "ibj,jbk->kbi", "ijk,kjl->il", "jk,kj->",
                                       /* products without a sum: with alpha 1, beta 0 the zip kernel */
                                       "ij,ij->ij", "ijk,kij->jki", "ij,ji->ij", "ik,jk->kji", "i,j->ji", "jk,k->kj",
                                       /* from 14: C row-major in the order written, its M and N labels
                                        * interleaved (gemm.h's loop labels; mera's last step is the first) */
                                       "abpk,kxq->pqabx", "akc,kbd->abcd", "zakc,zkbd->azbcd", "akcu,kbdv->abcd",
                                       "kap,qk->qpa", "abk,kc->bca"};
  tu_rng r = {42};
  setenv("TFE_GPU_GEMM_LOOPS", "all", 1); /* the loops for small GEMMs too */
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (size_t k = 0; k < 2; k++) {
      tfe_dtype dt = kinds[k];
      const char *e = shapes[s];
      lcase c;
      memset(&c, 0, sizeof c);
      int part = 0;
      for (const char *p = e; *p; p++) {
        if (*p == ',') { part = 1; continue; }
        if (*p == '-') { part = 2; p++; continue; }
        int32_t l = *p;
        int64_t d = s >= 14 ? 2 + (l - 'a') % 3 : 37 + (l - 'a') * 5;
        if (part == 0) c.la[c.ra] = l, c.da[c.ra++] = d;
        else if (part == 1) c.lb[c.rb] = l, c.db[c.rb++] = d;
        else c.lc[c.rc] = l, c.dc[c.rc++] = d;
      }
      hostop A, B, C, C1, C2;
      make_view(&r, dt, c.ra, c.da, false, &A), make_view(&r, dt, c.rb, c.db, false, &B), make_view(&r, dt, c.rc, c.dc, false, &C);
      double alpha[2] = {1.5, 0.25}, beta[2] = {0.5, -1};
      if (s >= 8 && r.s % 3 != 0) alpha[0] = 1, alpha[1] = 0, beta[0] = beta[1] = 0; /* mostly the zip path */
      if (s >= 8 && cplx(dt) && r.s % 5 == 0) A.v.conj = true;                        /* conjugated: the GEMM path */
      if (s >= 14) { /* C row-major (the last label fastest), sometimes padded; conjugations; beta 0 or not */
        int64_t st = 1;
        for (int i = c.rc - 1; i >= 0; i--) C.v.lay.strides[i] = st, st *= c.dc[i] + (r.s % 4 == 0 && i == 1);
        C.v.lay.offset = 0;
        size_t es = tfe_dtype_get(dt)->size;
        if ((size_t)st * es > C.bytes) {
          C.buf = realloc(C.buf, (size_t)st * es), C.bytes = (size_t)st * es, C.v.data = C.buf;
          assert_non_null(C.buf);
          for (int64_t i = 0; i < st; i++) put(dt, C.buf + i * (int64_t)es, rnd(&r), rnd(&r));
        }
        A.v.conj = cplx(dt) && r.s % 2, B.v.conj = cplx(dt) && r.s % 3 == 0, C.v.conj = cplx(dt) && r.s % 7 == 0;
        if (r.s % 5 == 1) beta[0] = beta[1] = 0;
      }
      copy_op(&C, &C1), copy_op(&C, &C2);
      assert_int_equal(tfe_contract_dyn(alpha, &A.v, c.la, &B.v, c.lb, beta, &C1.v, c.lc), TFE_OK);
      tfe_dyn dA, dB, dC;
      upload(&A, 0, &dA), upload(&B, 0, &dB), upload(&C, 0, &dC);
      if (s >= 14) { /* once before, into another copy of C: the call below takes the plan cache's analysis */
        tfe_dyn d2;
        upload(&C, 0, &d2);
        if (tfe_contract_dyn(alpha, &dA, c.la, &dB, c.lb, beta, &d2, c.lc) != TFE_OK) fail_msg("%s: %s", e, tfe_last_error());
        tfe_dyn_release(&d2);
      }
      if (tfe_contract_dyn(alpha, &dA, c.la, &dB, c.lb, beta, &dC, c.lc) != TFE_OK) fail_msg("%s: %s", e, tfe_last_error());
      assert_int_equal(tfe_gpu_download(&dC, &C2.v), TFE_OK);
      compare(dt, &C1, &C2, (int)s, e);
      tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dC);
      hfree(&A), hfree(&B), hfree(&C), hfree(&C1), hfree(&C2);
    }
  setenv("TFE_GPU_GEMM_LOOPS", "", 1); /* the default again */
}

/* einsum into a device output: the backend follows the operands' memory space. Intermediates
 * of longer einsums need the backend's memory slots (not in this tree yet): a two-operand
 * einsum has none. */
static void test_einsum_into(void **state) {
  (void)state;
  int64_t da[2] = {30, 20}, db[2] = {20, 25}, dc[2] = {30, 25};
  int32_t la[2] = {'i', 'j'}, lb[2] = {'j', 'k'}, lc[2] = {'i', 'k'};
  tu_rng r = {11};
  hostop A, B, C, C1, C2;
  make_view(&r, TFE_DT_C128, 2, da, false, &A), make_view(&r, TFE_DT_C128, 2, db, false, &B);
  make_view(&r, TFE_DT_C128, 2, dc, false, &C);
  copy_op(&C, &C1), copy_op(&C, &C2);
  double one[2] = {1, 0}, zero[2] = {0, 0};
  assert_int_equal(tfe_contract_dyn(one, &A.v, la, &B.v, lb, zero, &C1.v, lc), TFE_OK);
  tfe_dyn d[3];
  upload(&A, 0, &d[0]), upload(&B, 0, &d[1]), upload(&C, 0, &d[2]);
  tfe_status st = tfe_einsum_into_dyn(&d[2], "ij,jk->ik", 2, d, NULL);
  if (st != TFE_OK) fail_msg("einsum_into_dyn on device operands: %s", tfe_last_error());
  assert_int_equal(tfe_gpu_download(&d[2], &C2.v), TFE_OK);
  compare(TFE_DT_C128, &C1, &C2, 0, "einsum_into");
  for (int k = 0; k < 3; k++) tfe_dyn_release(&d[k]);
  hfree(&A), hfree(&B), hfree(&C), hfree(&C1), hfree(&C2);
}

/* An einsum with intermediates, allocating its result: the arena and the result come from the
 * backend's memory slots (device memory), and the result stays there. */
static void test_einsum_chain(void **state) {
  (void)state;
  int64_t da[2] = {12, 9}, db[2] = {9, 14}, dc[2] = {14, 7};
  tu_rng r = {23};
  hostop A, B, C;
  make_view(&r, TFE_DT_F64, 2, da, false, &A), make_view(&r, TFE_DT_F64, 2, db, false, &B);
  make_view(&r, TFE_DT_F64, 2, dc, false, &C);
  tfe_dyn ref, d[3], out;
  assert_int_equal(tfe_einsum_dyn(&ref, "ij,jk,kl->il", 3, (tfe_dyn[]){A.v, B.v, C.v}, NULL), TFE_OK);
  upload(&A, 0, &d[0]), upload(&B, 0, &d[1]), upload(&C, 0, &d[2]);
  tfe_status st = tfe_einsum_dyn(&out, "ij,jk,kl->il", 3, d, NULL);
  if (st != TFE_OK) fail_msg("einsum_dyn with intermediates on device operands: %s", tfe_last_error());
  assert_true(out.st->space.kind == TFE_MEM_GPU);
  hostop H;
  int64_t dh[2] = {12, 7};
  make_view(&r, TFE_DT_F64, 2, dh, false, &H);
  H.v.lay = ref.lay;
  assert_int_equal(tfe_gpu_download(&out, &H.v), TFE_OK);
  for (int i = 0; i < 12 * 7; i++)
    assert_true(fabs(((double *)H.v.data)[i] - ((double *)ref.data)[i]) <= 1e-12 * (1 + fabs(((double *)ref.data)[i])));
  for (int k = 0; k < 3; k++) tfe_dyn_release(&d[k]);
  tfe_dyn_release(&out);
  tfe_dyn_release(&ref);
  hfree(&A), hfree(&B), hfree(&C), hfree(&H);
}

/* Einsums whose steps form chains of elementwise products (a tensor times factors over some of
 * its labels, or over new ones: broadcast outer products), along a path that feeds each step the
 * previous result (up to 9 steps: chains longer than the slot's 8 inputs split), conjugated
 * operands, every kind: the device (its executor fuses each chain into one ZIPN pass) against
 * the CPU. On the emulated device the fused kernel must have run. */
#ifdef TU_GPU_EMULATED
int tu_gpu_emu_ewn_launches(void);
int tu_gpu_emu_permw_launches(void);
int tu_gpu_emu_permb_launches(void);
#endif
int tu_gpu_perm_big(int big); /* the companion part's switch of tfe_perm2d_b */
static void test_einsum_zip_chain(void **state) {
  (void)state;
  tu_rng r = {0x2192};
#ifdef TU_GPU_EMULATED
  int ewn0 = tu_gpu_emu_ewn_launches();
#endif
  for (size_t kk = 0; kk < sizeof kinds / sizeof *kinds; kk++)
    for (int c = 0; c < 8; c++) {
      /* odd cases: the tensor is the intermediate sum_z U[..z] V[z], whose buffer the arena may
       * give to a later step's result (dead after the chain's first step) */
      tfe_dtype dt = kinds[kk];
      int nf = (int)tu_int(&r, 2, 9), mid = c % 2, n = nf + 1 + mid, nl = 5;
      int64_t dim[7];
      for (int l = 0; l < 7; l++) dim[l] = tu_int(&r, 1, 4);
      char expr[128], *e = expr, used[7] = {0};
      hostop H[11];
      tfe_dyn in[11], dv[11];
      int64_t d0[6];
      for (int l = 0; l < nl; l++) *e++ = (char)('a' + l), d0[l] = dim[l], used[l] = 1;
      if (mid) *e++ = 'z', d0[nl] = 3, *e++ = ',', *e++ = 'z';
      make_view(&r, dt, nl + mid, d0, false, &H[0]);
      if (mid) make_view(&r, dt, 1, d0 + nl, false, &H[1]);
      for (int f = 1 + mid; f < n; f++) {
        *e++ = ',';
        int rk = (int)tu_int(&r, 1, 2), labs[2];
        int64_t fd[2];
        labs[0] = (int)tu_int(&r, 0, 6), labs[1] = (labs[0] + 1 + (int)tu_int(&r, 0, 5)) % 7;
        for (int q = 0; q < rk; q++) *e++ = (char)('a' + labs[q]), fd[q] = dim[labs[q]], used[labs[q]] = 1;
        make_view(&r, dt, rk, fd, true, &H[f]);
        H[f].v.conj = cplx(dt) && tu_int(&r, 0, 2) == 0;
      }
      *e++ = '-', *e++ = '>';
      for (int l = 6; l >= 0; l--) if (used[l]) *e++ = (char)('a' + l);
      *e = 0;
      int path[2 * 10];
      for (int q = 0; q < n - 1; q++) /* the tensor first, then each factor with the result so far */
        path[2 * q] = 0, path[2 * q + 1] = q == 0 ? 1 : mid ? nf + 1 - q : n - 1 - q;
      tfe_einsum_opts o;
      memset(&o, 0, sizeof o);
      o.algo = TFE_PATH_GIVEN, o.path = path, o.path_nsteps = n - 1, o.no_cache = true;
      for (int k = 0; k < n; k++) in[k] = H[k].v, upload(&H[k], 0, &dv[k]);
      tfe_dyn ref, out;
      if (tfe_einsum_dyn(&ref, expr, n, in, &o) != TFE_OK) fail_msg("%s on the CPU: %s", expr, tfe_last_error());
      if (tfe_einsum_dyn(&out, expr, n, dv, &o) != TFE_OK) fail_msg("%s on the device: %s", expr, tfe_last_error());
      hostop R = {ref, (char *)ref.data, (size_t)tfe_layout_numel(&ref.lay) * tfe_dtype_get(dt)->size}, G;
      copy_op(&R, &G);
      assert_int_equal(tfe_gpu_download(&out, &G.v), TFE_OK);
      compare(dt, &R, &G, c, expr);
      for (int k = 0; k < n; k++) tfe_dyn_release(&dv[k]), hfree(&H[k]);
      tfe_dyn_release(&out), tfe_dyn_release(&ref), hfree(&G);
    }
#ifdef TU_GPU_EMULATED
  assert_true(tu_gpu_emu_ewn_launches() > ewn0);
#endif
}

/* C = alpha op(A) + beta C on the host and on the device (A's and C's labels la, lc), compared;
 * frees A and C. */
static void permute_both(tfe_dtype dt, hostop *A, hostop *C, const int32_t *la, const int32_t *lc, const double *alpha,
                         const double *beta, int i, const char *what) {
  hostop C1, C2;
  copy_op(C, &C1), copy_op(C, &C2);
  assert_int_equal(tfe_contract_dyn(alpha, &A->v, la, NULL, NULL, beta, &C1.v, lc), TFE_OK);
  tfe_dyn dA, dC;
  upload(A, 0, &dA), upload(C, 0, &dC);
  if (tfe_contract_dyn(alpha, &dA, la, NULL, NULL, beta, &dC, lc) != TFE_OK) fail_msg("%s", tfe_last_error());
  assert_int_equal(tfe_gpu_download(&dC, &C2.v), TFE_OK);
  compare(dt, &C1, &C2, i, what);
  tfe_dyn_release(&dA), tfe_dyn_release(&dC);
  hfree(A), hfree(C), hfree(&C1), hfree(&C2);
}
/* Permutations large enough for the tiled kernel (labels of 16 and more), random layouts
 * (negative and zero strides in A), alpha/beta, conjugation; and their plain copies. */
static void test_permute_large(void **state) {
  (void)state;
  tu_rng r = {99};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    for (int i = 0; i < 12; i++) {
      tfe_dtype dt = kinds[k];
      int rank = (int)tu_int(&r, 2, 4);
      int64_t da[4], dc[4];
      int32_t la[4], lc[4];
      for (int q = 0; q < rank; q++) la[q] = lc[q] = q, da[q] = rank == 4 ? tu_int(&r, 3, 20) : tu_int(&r, 9, 70);
      shuffle(&r, lc, rank);
      for (int q = 0; q < rank; q++) dc[q] = da[lc[q]];
      hostop A, C;
      make_view(&r, dt, rank, da, true, &A), make_view(&r, dt, rank, dc, false, &C);
      A.v.conj = cplx(dt) && tu_int(&r, 0, 1);
      C.v.conj = cplx(dt) && tu_int(&r, 0, 3) == 0;
      double alpha[2], beta[2];
      put(dt, alpha, i % 3 ? rnd(&r) : 1, rnd(&r));
      put(dt, beta, i % 2 ? rnd(&r) : 0, i % 2 ? rnd(&r) : 0);
      permute_both(dt, &A, &C, la, lc, alpha, beta, i, "permute_large");
    }
  /* many small labels (tiles over groups of labels), one short side (tiles of TX x TY with one
   * of them under 32), dense layouts (labels merged before tiling) */
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    for (int i = 0; i < 24; i++) {
      tfe_dtype dt = kinds[k];
      int kind = i % 3, rank = kind == 0 ? (int)tu_int(&r, 6, 10) : kind == 1 ? (int)tu_int(&r, 2, 3) : (int)tu_int(&r, 5, 8);
      int64_t da[10], dc[10];
      int32_t la[10], lc[10];
      for (int q = 0; q < rank; q++) {
        la[q] = lc[q] = q;
        da[q] = kind == 0 ? tu_int(&r, 2, 4) : kind == 2 ? tu_int(&r, 2, 6) : (q == 0 ? tu_int(&r, 2, 5) : tu_int(&r, 40, 200));
      }
      if (kind == 1 && rank == 3) da[2] = tu_int(&r, 2, 6);
      shuffle(&r, lc, rank);
      for (int q = 0; q < rank; q++) dc[q] = da[lc[q]];
      hostop A, C;
      make_view(&r, dt, rank, da, kind != 2, &A), make_view(&r, dt, rank, dc, false, &C);
      if (kind == 2) { /* dense column-major on both sides (the buffers are at least that large) */
        assert_int_equal(tfe_layout_dense(rank, da, TFE_COLMAJOR, &A.v.lay), TFE_OK);
        assert_int_equal(tfe_layout_dense(rank, dc, TFE_COLMAJOR, &C.v.lay), TFE_OK);
      }
      A.v.conj = cplx(dt) && tu_int(&r, 0, 3) == 0;
      double alpha[2] = {1, 0}, beta[2] = {0, 0};
      if (i % 4 == 3) put(dt, alpha, rnd(&r), rnd(&r)), put(dt, beta, rnd(&r), rnd(&r));
      permute_both(dt, &A, &C, la, lc, alpha, beta, 100 + i, "permute_large (small labels)");
    }
  /* reversals of 3^9, 5^6 and 2^13, dense (the longer tile sides of exec.h's cfg.run: 3^9 in f64
   * 81 x 81, 216-byte runs grown, on tfe_perm2d_b, or with it off 81 x 27 on tfe_perm2d_w; 5^6
   * other cuts; 2^13's 256-byte runs keep 32 x 32), and 3^9 and 5^6 in random layouts with
   * alpha/beta and conjugation, each with and without tfe_perm2d_b */
#ifdef TU_GPU_EMULATED
  int permw0 = tu_gpu_emu_permw_launches(), permb0 = tu_gpu_emu_permb_launches();
#endif
  for (int big = 1; big >= 0; big--) {
    int was = tu_gpu_perm_big(big ? 8192 : 0);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
      for (int i = 0; i < 5; i++) {
        tfe_dtype dt = kinds[k];
        int rank = i == 1 ? 13 : i >= 3 ? 6 : 9;
        int64_t da[13], dc[13];
        int32_t la[13], lc[13];
        for (int q = 0; q < rank; q++) la[q] = q, lc[q] = rank - 1 - q, da[q] = i == 1 ? 2 : i >= 3 ? 5 : 3;
        for (int q = 0; q < rank; q++) dc[q] = da[lc[q]];
        hostop A, C;
        make_view(&r, dt, rank, da, true, &A), make_view(&r, dt, rank, dc, false, &C);
        double alpha[2] = {1, 0}, beta[2] = {0, 0};
        if (i < 2 || i == 3) {
          assert_int_equal(tfe_layout_dense(rank, da, TFE_COLMAJOR, &A.v.lay), TFE_OK);
          assert_int_equal(tfe_layout_dense(rank, dc, TFE_COLMAJOR, &C.v.lay), TFE_OK);
        } else {
          A.v.conj = cplx(dt);
          put(dt, alpha, rnd(&r), rnd(&r)), put(dt, beta, rnd(&r), rnd(&r));
        }
        permute_both(dt, &A, &C, la, lc, alpha, beta, 300 + i, big ? "permute_large (reversals)" : "permute_large (reversals, big 0)");
      }
    tu_gpu_perm_big(was);
#ifdef TU_GPU_EMULATED
    if (big) assert_true(tu_gpu_emu_permb_launches() > permb0); /* the 81 x 81 tiles ran on tfe_perm2d_b */
    else assert_true(tu_gpu_emu_permw_launches() > permw0);     /* the 81 x 27 tiles on tfe_perm2d_w */
#endif
  }
  /* random permutations: rank 1-7, sizes 0, 1, small and up to 40 (at most ~2^16 elements),
   * random layouts (padded, negative strides, zero strides in A), alpha/beta, conjugation */
  int ncase = cases() / 4 + 8;
  for (int i = 0; i < ncase; i++) {
    tfe_dtype dt = kinds[tu_int(&r, 0, 3)];
    int rank = (int)tu_int(&r, 1, 7);
    int64_t da[7], dc[7], n = 1;
    int32_t la[7], lc[7];
    for (int q = 0; q < rank; q++) {
      int64_t x = tu_int(&r, 0, 9);
      da[q] = x == 0 && tu_int(&r, 0, 3) == 0 ? 0 : x <= 2 ? 1 : x <= 6 ? tu_int(&r, 2, 5) : tu_int(&r, 6, 40);
      if (n * (da[q] ? da[q] : 1) > (1 << 16)) da[q] = tu_int(&r, 1, 3);
      n *= da[q] ? da[q] : 1;
      la[q] = lc[q] = q;
    }
    shuffle(&r, lc, rank);
    for (int q = 0; q < rank; q++) dc[q] = da[lc[q]];
    hostop A, C;
    make_view(&r, dt, rank, da, true, &A), make_view(&r, dt, rank, dc, false, &C);
    if (tu_int(&r, 0, 2) == 0) assert_int_equal(tfe_layout_dense(rank, da, TFE_COLMAJOR, &A.v.lay), TFE_OK);
    A.v.conj = cplx(dt) && tu_int(&r, 0, 2) == 0;
    C.v.conj = cplx(dt) && tu_int(&r, 0, 4) == 0;
    double alpha[2] = {1, 0}, beta[2] = {0, 0};
    if (i % 3 == 2) put(dt, alpha, rnd(&r), rnd(&r)), put(dt, beta, rnd(&r), rnd(&r));
    permute_both(dt, &A, &C, la, lc, alpha, beta, 200 + i, "permute_large (random ranks 1-7)");
  }
}

/* The slots through tfe_prims_execute: batched_gemm in label form on device memory. */
static void test_prims_execute(void **state) {
  (void)state;
  const tfe_prims_backend *be = tfe_gpu_backend(0);
  assert_non_null(be);
  assert_true(tfe_prims_supports(be, TFE_PRIM_BATCHED_GEMM) && tfe_prims_supports(be, TFE_PRIM_PERMUTE));
  int64_t da[3] = {3, 4, 2}, db[3] = {4, 5, 2}, dc[3] = {3, 5, 2};
  int32_t la[3] = {0, 1, 9}, lb[3] = {1, 2, 9}, lc[3] = {0, 2, 9};
  tu_rng r = {7};
  hostop A, B, C, C1, C2;
  make_view(&r, TFE_DT_F64, 3, da, false, &A), make_view(&r, TFE_DT_F64, 3, db, false, &B);
  make_view(&r, TFE_DT_F64, 3, dc, false, &C);
  copy_op(&C, &C1), copy_op(&C, &C2);
  double alpha = 2, beta = 0.5;
  tfe_prim_desc d = {TFE_PRIM_BATCHED_GEMM, &A.v, &B.v, &C1.v, la, lb, lc, &alpha, &beta};
  assert_int_equal(tfe_prims_execute(tfe_backend_find("cpu"), &d, NULL), TFE_OK);
  tfe_dyn dA, dB, dC;
  upload(&A, 0, &dA), upload(&B, 0, &dB), upload(&C, 0, &dC);
  d.a = &dA, d.b = &dB, d.c = &dC;
  assert_int_equal(tfe_prims_execute(be, &d, NULL), TFE_OK);
  assert_int_equal(tfe_gpu_download(&dC, &C2.v), TFE_OK);
  compare(TFE_DT_F64, &C1, &C2, 0, "prims_execute");
  /* kinds the GPU backend does not run: a clean refusal */
  tfe_dyn ai = dA;
  ai.dtype = TFE_DT_I64;
  d.a = d.b = d.c = &ai;
  assert_int_equal(tfe_prims_execute(be, &d, NULL), TFE_ERR_UNSUPPORTED);
  assert_non_null(strstr(tfe_gpu_last_error(), "not i64")); /* library mode: only the companion's copy */
  tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dC);
  hfree(&A), hfree(&B), hfree(&C), hfree(&C1), hfree(&C2);
}

/* ---- the elementwise slot ---------------------------------------------------------------------
 * Random copy, fill, scale, axpby, map (every unary op), zip and zipn (every binary op the kind
 * has; zipn over 2-8 inputs broadcast each its own way, random flips) and
 * reduce (every reduction, random axes, keepdims or not) with random layouts (inputs broadcast
 * with zero strides and missing leading dims, negative strides, conjugated views), on the CPU
 * backend's slot and on the device's; the results must agree (NaN where the CPU has NaN). */
static void ew_case(tu_rng *r, int dev, tfe_dtype dt, int kcase) {
  const tfe_prims_backend *gbe = tfe_gpu_backend(dev);
  tfe_prims_backend cbe = tfe_prims_cpu();
  bool cx = cplx(dt);
  tfe_ew_op op = (tfe_ew_op)tu_int(r, 0, TFE_EW_COUNT - 1);
  int code = op == TFE_EW_MAP ? (int)tu_int(r, 0, TFE_UN_COUNT_ - 1)
             : op == TFE_EW_ZIP || op == TFE_EW_ZIPN ? (int)tu_int(r, 0, cx ? TFE_BIN_DIV : TFE_BIN_COUNT_ - 1)
             : op == TFE_EW_REDUCE ? (int)tu_int(r, 0, TFE_RED_COUNT_ - 1) : 0;
  if (op == TFE_EW_REDUCE && cx && (code == TFE_RED_MAX || code == TFE_RED_MIN)) code = TFE_RED_SUM;
  int rank = (int)tu_int(r, 0, 4);
  int64_t dims[4], ddims[4], adims[4], bdims[4];
  for (int i = 0; i < rank; i++) dims[i] = tu_int(r, 0, 30) == 0 ? 0 : tu_int(r, 1, 6);
  if (op == TFE_EW_REDUCE && tu_int(r, 0, 3) == 0 && rank > 0) dims[0] = 2500; /* the block kernels (chunked when few outputs) */
  /* the input shapes: broadcast (a dim of 1, a missing leading dim) for map, zip, axpby */
  int ra = rank, rb = rank;
  for (int i = 0; i < rank; i++) adims[i] = bdims[i] = ddims[i] = dims[i];
  bool bc = op == TFE_EW_MAP || op == TFE_EW_ZIP || op == TFE_EW_AXPBY || op == TFE_EW_ZIPN;
  if (bc && rank > 0 && tu_int(r, 0, 2) == 0) {
    ra = rank - (int)tu_int(r, 0, 1);
    for (int i = 0; i < ra; i++) adims[i] = dims[i + rank - ra];
    if (ra > 0 && tu_int(r, 0, 1)) adims[tu_int(r, 0, ra - 1)] = 1;
  }
  if (bc && rank > 0 && tu_int(r, 0, 2) == 0) bdims[tu_int(r, 0, rank - 1)] = 1;
  int naxes = -1, axes[4], rd = rank;
  if (op == TFE_EW_REDUCE) {
    naxes = (int)tu_int(r, -1, rank);
    bool red[4] = {false};
    if (naxes < 0) for (int i = 0; i < rank; i++) red[i] = true;
    else {
      int perm[4] = {0, 1, 2, 3};
      for (int i = rank - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i), t = perm[i]; perm[i] = perm[j], perm[j] = t; }
      for (int k = 0; k < naxes; k++) axes[k] = perm[k], red[perm[k]] = true;
    }
    bool keep = tu_int(r, 0, 1);
    rd = 0;
    for (int i = 0; i < rank; i++) rd += keep || !red[i];
    if ((code == TFE_RED_MAX || code == TFE_RED_MIN))
      for (int i = 0; i < rank; i++) if (red[i] && dims[i] == 0) dims[i] = adims[i] = 2; /* no empty max */
    for (int i = 0, k = 0; i < rank; i++) if (keep || !red[i]) ddims[k++] = keep && red[i] ? 1 : dims[i];
  }
  hostop A, B, D, D1, D2;
  make_view(r, dt, ra, adims, true, &A);
  make_view(r, dt, rb, bdims, true, &B);
  make_view(r, dt, rd, ddims, false, &D);
  A.v.conj = cx && tu_int(r, 0, 2) == 0;
  B.v.conj = cx && tu_int(r, 0, 2) == 0;
  D.v.conj = cx && tu_int(r, 0, 4) == 0;
  if (op == TFE_EW_REDUCE && code == TFE_RED_PROD) { /* keep products near one */
    size_t es = tfe_dtype_get(dt)->size;
    for (size_t i = 0; i < A.bytes / es; i++) put(dt, A.buf + i * es, 1 + 0.1 * rnd(r), 0.1 * rnd(r));
  }
  double s0[2], s1[2];
  put(dt, s0, rnd(r) * 2, rnd(r));
  int bk = (int)tu_int(r, 0, 2);
  put(dt, s1, bk == 0 ? 0 : rnd(r), bk == 0 ? 0 : rnd(r));
  if (bk == 0 && tu_int(r, 0, 1)) { /* a zero s1 must not read dst */
    size_t es = tfe_dtype_get(dt)->size;
    for (size_t i = 0; i < D.bytes / es; i++) put(dt, D.buf + i * es, NAN, NAN);
  }
  copy_op(&D, &D1), copy_op(&D, &D2);
  /* ZIPN: A, B and up to six more inputs, each broadcast its own way, random flips */
  int nin = op == TFE_EW_ZIPN ? (int)tu_int(r, 2, TFE_EW_MAXIN) : 0;
  hostop X[TFE_EW_MAXIN];
  const tfe_dyn *in[TFE_EW_MAXIN];
  tfe_dyn dX[TFE_EW_MAXIN];
  for (int k = 2; k < nin; k++) {
    int64_t xd[4];
    for (int i = 0; i < rank; i++) xd[i] = tu_int(r, 0, 2) == 0 ? 1 : dims[i];
    make_view(r, dt, rank, xd, true, &X[k]);
    X[k].v.conj = cx && tu_int(r, 0, 2) == 0;
  }
  if (nin) X[0] = A, X[1] = B;
  for (int k = 0; k < nin; k++) in[k] = &X[k].v;
  tfe_ew_desc d = {op, code, &D1.v, &A.v, &B.v, s0, s1, naxes, axes, nin, in, (unsigned)tu_int(r, 0, 255)};
  if (op == TFE_EW_MAP && code != TFE_UN_POW && tu_int(r, 0, 1)) d.s0 = NULL;
  tfe_status s_cpu = cbe.elementwise(&cbe, &d);
  char cpu_msg[TFE_ERRMSG_MAX] = "ok";
  if (s_cpu) snprintf(cpu_msg, sizeof cpu_msg, "%s", tfe_last_error());
  tfe_dyn dA, dB, dD;
  upload(&A, dev, &dA), upload(&B, dev, &dB), upload(&D, dev, &dD);
  d.dst = &dD, d.a = &dA, d.b = &dB;
  for (int k = 2; k < nin; k++) upload(&X[k], dev, &dX[k]);
  if (nin) dX[0] = dA, dX[1] = dB;
  for (int k = 0; k < nin; k++) in[k] = &dX[k];
  tfe_status s_gpu = gbe->elementwise(gbe, &d);
  if (s_gpu != s_cpu)
    fail_msg("elementwise case %d (%s %s code %d, %s): CPU says %d (%s), GPU %d (%s)", kcase, tfe_ew_op_name(op),
             tfe_dtype_name(dt), code, tfe_dtype_name(dt), s_cpu, cpu_msg, s_gpu, s_gpu ? tfe_gpu_last_error() : "ok");
  char msg[256];
  if (s_gpu == TFE_OK) {
    if (tfe_gpu_download(&dD, &D2.v) != TFE_OK) fail_msg("download: %s", tfe_last_error());
    if (!same(dt, &D1, &D2, msg, sizeof msg)) {
      printf("# FAIL elementwise case %d (%s %s, code %d, naxes %d): %s\n", kcase, tfe_ew_op_name(op), tfe_dtype_name(dt),
             code, naxes, msg);
      int32_t l[4] = {0, 1, 2, 3};
      dump("a", &A.v, l), dump("b", &B.v, l), dump("dst", &D.v, l);
      failures++;
    }
  }
  tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dD);
  hfree(&A), hfree(&B), hfree(&D), hfree(&D1), hfree(&D2);
  for (int k = 2; k < nin; k++) tfe_dyn_release(&dX[k]), hfree(&X[k]);
}
static void test_elementwise_random(void **state) {
  (void)state;
  failures = 0;
  for (int dev = 0; dev < dev_count; dev++)
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
      tu_rng r = {0xE1E3E47ULL + k};
      for (int i = 0; i < cases(); i++) ew_case(&r, dev, kinds[k], i);
    }
  if (failures) fail_msg("%d elementwise cases differ (listed above)", failures);
}
/* The device's ZIPN refusals (the CPU slot's are in test_conformance): input count, NULL inputs,
 * op codes, kinds, shapes; status and message, dst unwritten. */
static void test_zipn_errors(void **state) {
  (void)state;
  const tfe_prims_backend *be = tfe_gpu_backend(0);
  int64_t d34[2] = {3, 4}, d54[2] = {5, 4};
  tfe_dyn A, B, D, F, W, Z;
  assert_int_equal(tfe_gpu_alloc_dyn(&A, 0, TFE_DT_C128, 2, d34, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_gpu_alloc_dyn(&B, 0, TFE_DT_C128, 2, d34, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_gpu_alloc_dyn(&F, 0, TFE_DT_C64, 2, d34, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_gpu_alloc_dyn(&W, 0, TFE_DT_C128, 2, d54, TFE_COLMAJOR), TFE_OK);
  double h[24];
  for (int i = 0; i < 24; i++) h[i] = -7;
  tfe_dyn H = {0};
  H.dtype = TFE_DT_C128, H.data = h;
  tfe_layout_dense(2, d34, TFE_COLMAJOR, &H.lay);
  upload(&(hostop){H, (char *)h, sizeof h}, 0, &D);
  Z = A, Z.dtype = TFE_DT_I64;
  struct { int nin, code; const tfe_dyn *bad; bool null_in, i64; tfe_status want; const char *msg; } cases[] = {
      {1, TFE_BIN_MUL, NULL, false, false, TFE_ERR_INVALID, "2 to 8 inputs"},
      {9, TFE_BIN_MUL, NULL, false, false, TFE_ERR_INVALID, "2 to 8 inputs"},
      {3, TFE_BIN_MUL, NULL, true, false, TFE_ERR_NULL, "'in'"},
      {3, 99, NULL, false, false, TFE_ERR_INVALID, "unknown binary op"},
      {3, TFE_BIN_MAX, NULL, false, false, TFE_ERR_UNSUPPORTED, "not defined for this kind"},
      {3, TFE_BIN_MUL, &F, false, false, TFE_ERR_DTYPE, "zipn input 2"},
      {3, TFE_BIN_MUL, &W, false, false, TFE_ERR_SHAPE, "broadcastable"},
      {3, TFE_BIN_MUL, NULL, false, true, TFE_ERR_UNSUPPORTED, "zipn on f32, f64, c64 and c128"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const tfe_dyn *in[9] = {&A, &B, &A, &B, &A, &B, &A, &B, &A};
    if (cases[k].bad) in[2] = cases[k].bad;
    tfe_dyn Dk = D;
    if (cases[k].i64) Dk.dtype = TFE_DT_I64, in[0] = in[1] = in[2] = &Z;
    tfe_ew_desc q = {TFE_EW_ZIPN, cases[k].code, &Dk, NULL, NULL, NULL, NULL, 0, NULL, cases[k].nin,
                     cases[k].null_in ? NULL : in, 0};
    tfe_status got = be->elementwise(be, &q);
    if (got != cases[k].want || !strstr(tfe_gpu_last_error(), cases[k].msg))
      fail_msg("zipn refusal %zu: status %d (%s), expected %d", k, got, tfe_gpu_last_error(), cases[k].want);
  }
  const tfe_dyn *in[3] = {&A, NULL, &B};
  tfe_ew_desc q = {TFE_EW_ZIPN, TFE_BIN_MUL, &D, NULL, NULL, NULL, NULL, 0, NULL, 3, in, 0};
  assert_int_equal(be->elementwise(be, &q), TFE_ERR_NULL);
  assert_non_null(strstr(tfe_gpu_last_error(), "zipn input 1 is NULL"));
  double back[24];
  tfe_dyn Hb = H;
  Hb.data = back;
  assert_int_equal(tfe_gpu_download(&D, &Hb), TFE_OK);
  for (int i = 0; i < 24; i++) assert_true(back[i] == -7);
  tfe_dyn_release(&A), tfe_dyn_release(&B), tfe_dyn_release(&F), tfe_dyn_release(&W), tfe_dyn_release(&D);
}
/* The complex branch cuts: sqrt, log, pow on the negative real axis with a signed zero
 * imaginary part, and the dtype-tagged entries (tfe_map_dyn, tfe_zip_dyn, tfe_reduce_dyn,
 * tfe_fill_dyn, tfe_copy_dyn) routed to the device by the operands' memory. */
static void test_elementwise_cuts(void **state) {
  (void)state;
  static const double z[][2] = {{-4, 0}, {-4, -0.0}, {-1, 0}, {-1, -0.0}, {-0.0, 0}, {-0.0, -0.0}, {0, -0.0},
                                {-2.5, 1e-300}, {-2.5, -1e-300}, {3, -4}, {-3, 4}, {1e-3, -1e3}};
  enum { N = sizeof z / sizeof *z };
  double in[N][2], out1[N][2], out2[N][2], par[2] = {0.5, 0}, par2[2] = {-1.5, 0.25};
  memcpy(in, z, sizeof in);
  tfe_dyn h = {0};
  h.dtype = TFE_DT_C128, h.data = in, h.lay.rank = 1, h.lay.dims[0] = N, h.lay.strides[0] = 1;
  tfe_dyn o1 = h, o2 = h;
  o1.data = out1, o2.data = out2;
  static const tfe_unop ops[] = {TFE_UN_SQRT, TFE_UN_LOG, TFE_UN_POW, TFE_UN_POW, TFE_UN_EXP, TFE_UN_SIN, TFE_UN_COS,
                                 TFE_UN_TANH, TFE_UN_RECIP, TFE_UN_ABS};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    const double *p = k == 3 ? par2 : par;
    assert_int_equal(tfe_map_dyn(&o1, &h, ops[k], p), TFE_OK);
    tfe_dyn dA, dD;
    assert_int_equal(tfe_gpu_upload(&dA, 0, &h), TFE_OK);
    assert_int_equal(tfe_gpu_upload(&dD, 0, &o2), TFE_OK);
    tfe_status st = tfe_map_dyn(&dD, &dA, ops[k], p);
    if (st != TFE_OK) fail_msg("tfe_map_dyn on the device: %s", tfe_last_error());
    assert_int_equal(tfe_gpu_download(&dD, &o2), TFE_OK);
    for (int i = 0; i < N; i++) {
      double e = hypot(out1[i][0] - out2[i][0], out1[i][1] - out2[i][1]), s = 1e-13 * (1 + hypot(out1[i][0], out1[i][1]));
      bool nan_both = (isnan(out1[i][0]) || isnan(out1[i][1])) && (isnan(out2[i][0]) || isnan(out2[i][1]));
      bool inf_same = isinf(out1[i][0]) && out1[i][0] == out2[i][0] && (out1[i][1] == out2[i][1] || (isnan(out1[i][1]) && isnan(out2[i][1])));
      if (!(e <= s) && !nan_both && !inf_same)
        fail_msg("%s(%g%+gi): CPU %.17g%+.17gi, device %.17g%+.17gi", tfe_unop_name(ops[k]), z[i][0], z[i][1], out1[i][0],
                 out1[i][1], out2[i][0], out2[i][1]);
      /* the sign of a zero imaginary part: the side of the cut */
      /* (not for pow at 0: cexp(p clog(0)) takes that sign from a NaN's sign bit, which C leaves open) */
      bool at0 = z[i][0] == 0 && z[i][1] == 0;
      if (out1[i][1] == 0 && out2[i][1] == 0 && signbit(out1[i][1]) != signbit(out2[i][1]) && ops[k] != TFE_UN_ABS &&
          !(ops[k] == TFE_UN_POW && at0))
        fail_msg("%s(%g%+gi): imaginary zero %g on the CPU, %g on the device", tfe_unop_name(ops[k]), z[i][0], z[i][1],
                 out1[i][1], out2[i][1]);
      if (ops[k] == TFE_UN_SQRT || ops[k] == TFE_UN_LOG) /* the cut itself: the sign of the result's imaginary part */
        if (out1[i][1] != 0 && signbit(out1[i][1]) != signbit(out2[i][1]))
          fail_msg("%s(%g%+gi): other side of the branch cut", tfe_unop_name(ops[k]), z[i][0], z[i][1]);
    }
    tfe_dyn_release(&dA), tfe_dyn_release(&dD);
  }
  /* the other dtype-tagged entries, routed by memory space */
  tfe_dyn dA, dB, dD, dR;
  assert_int_equal(tfe_gpu_upload(&dA, 0, &h), TFE_OK);
  assert_int_equal(tfe_gpu_upload(&dB, 0, &h), TFE_OK);
  assert_int_equal(tfe_gpu_alloc_dyn(&dD, 0, TFE_DT_C128, 1, (int64_t[]){N}, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_gpu_alloc_dyn(&dR, 0, TFE_DT_C128, 0, NULL, TFE_COLMAJOR), TFE_OK);
  double v[2] = {2, -3}, sum[2] = {0, 0}, got[2];
  assert_int_equal(tfe_fill_dyn(&dD, v), TFE_OK);
  assert_int_equal(tfe_zip_dyn(&dD, &dD, &dA, TFE_BIN_MUL), TFE_OK); /* in place: element for element */
  assert_int_equal(tfe_copy_dyn(&dB, &dD), TFE_OK);
  assert_int_equal(tfe_reduce_dyn(&dR, &dB, TFE_RED_SUM, -1, NULL, NULL, NULL), TFE_OK);
  for (int i = 0; i < N; i++) sum[0] += 2 * z[i][0] + 3 * z[i][1], sum[1] += 2 * z[i][1] - 3 * z[i][0];
  tfe_dyn hr = {0};
  hr.dtype = TFE_DT_C128, hr.data = got;
  assert_int_equal(tfe_gpu_download(&dR, &hr), TFE_OK);
  assert_true(fabs(got[0] - sum[0]) <= 1e-9 * (1 + fabs(sum[0])) && fabs(got[1] - sum[1]) <= 1e-9 * (1 + fabs(sum[1])));
  tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dD), tfe_dyn_release(&dR);
}

/* ---- tropical kinds -------------------------------------------------------------------------
 * GEMM-shaped contractions of max-plus, min-plus and max-times operands (f32, f64; random
 * layouts, batch labels, alpha/beta) through tfe_contract_dyn on device operands against the
 * CPU; tfe_gpu_tropical_matmul's C and argmax against tfe_tropical_matmul_S. */
static const tfe_dtype tkinds[] = {TFE_DT_MAXPLUS_F64, TFE_DT_MINPLUS_F64, TFE_DT_MAXTIMES_F64,
                                   TFE_DT_MAXPLUS_F32, TFE_DT_MINPLUS_F32, TFE_DT_MAXTIMES_F32};
static tfe_dtype treal(tfe_dtype dt) {
  return dt == TFE_DT_MAXPLUS_F64 || dt == TFE_DT_MINPLUS_F64 || dt == TFE_DT_MAXTIMES_F64 ? TFE_DT_F64 : TFE_DT_F32;
}
/* A host view of a tropical kind with positive values (max-times needs them). */
static void make_tview(tu_rng *r, tfe_dtype dt, int rank, const int64_t *dims, hostop *h) {
  make_view(r, treal(dt), rank, dims, false, h);
  size_t es = tfe_dtype_get(treal(dt))->size;
  for (size_t i = 0; i < h->bytes / es; i++) put(treal(dt), h->buf + i * es, 0.1 + tu_unif(r), 0);
  h->v.dtype = dt;
}
static void test_tropical_contract(void **state) {
  (void)state;
  static const char *const shapes[] = {"ij,jk->ik", "ji,jk->ik", "ij,kj->ki", "bij,bjk->bik", "ibj,jbk->kbi",
                                       "ijk,kjl->il", "jk,kj->"};
  tu_rng r = {77};
  for (size_t t = 0; t < sizeof tkinds / sizeof *tkinds; t++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
      tfe_dtype dt = tkinds[t], rt = treal(dt);
      lcase c;
      memset(&c, 0, sizeof c);
      int part = 0;
      for (const char *p = shapes[s]; *p; p++) {
        if (*p == ',') { part = 1; continue; }
        if (*p == '-') { part = 2; p++; continue; }
        int32_t l = *p;
        int64_t d = 3 + (l - 'a') * 7 % 40 + (int64_t)s;
        if (part == 0) c.la[c.ra] = l, c.da[c.ra++] = d;
        else if (part == 1) c.lb[c.rb] = l, c.db[c.rb++] = d;
        else c.lc[c.rc] = l, c.dc[c.rc++] = d;
      }
      hostop A, B, C, C1, C2;
      make_tview(&r, dt, c.ra, c.da, &A), make_tview(&r, dt, c.rb, c.db, &B), make_tview(&r, dt, c.rc, c.dc, &C);
      copy_op(&C, &C1), copy_op(&C, &C2);
      double al[1], be[1];
      bool mt = dt == TFE_DT_MAXTIMES_F64 || dt == TFE_DT_MAXTIMES_F32;
      put(rt, al, s % 2 ? (mt ? 1 : 0) : (mt ? 0.75 : 0.5), 0);
      put(rt, be, s % 3 == 0 ? (mt ? 0 : dt == TFE_DT_MINPLUS_F64 || dt == TFE_DT_MINPLUS_F32 ? INFINITY : -INFINITY)
                             : (mt ? 1.25 : -0.25), 0);
      tfe_status st = tfe_contract_dyn(al, &A.v, c.la, &B.v, c.lb, be, &C1.v, c.lc);
      if (st != TFE_OK) fail_msg("CPU %s %s: %s", tfe_dtype_name(dt), shapes[s], tfe_last_error());
      tfe_dyn dA, dB, dC;
      upload(&A, 0, &dA), upload(&B, 0, &dB), upload(&C, 0, &dC);
      st = tfe_contract_dyn(al, &dA, c.la, &dB, c.lb, be, &dC, c.lc);
      if (st != TFE_OK) fail_msg("device %s %s: %s", tfe_dtype_name(dt), shapes[s], tfe_last_error());
      assert_int_equal(tfe_gpu_download(&dC, &C2.v), TFE_OK);
      C1.v.dtype = C2.v.dtype = rt;
      compare(rt, &C1, &C2, (int)s, shapes[s]);
      tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dC);
      hfree(&A), hfree(&B), hfree(&C), hfree(&C1), hfree(&C2);
    }
}
static void test_tropical_matmul_argmax(void **state) {
  (void)state;
  tu_rng r = {78};
  for (size_t t = 0; t < sizeof tkinds / sizeof *tkinds; t++) {
    tfe_dtype dt = tkinds[t], rt = treal(dt);
    int64_t m = 37 + (int64_t)t * 50, k = 29 + (int64_t)t * 31, n = 141 - (int64_t)t * 9;
    hostop A, B;
    make_tview(&r, dt, 2, (int64_t[]){m, k}, &A), make_tview(&r, dt, 2, (int64_t[]){k, n}, &B);
    /* the CPU: dense copies (tfe_tropical_matmul_S takes any strides; the dyn layer has none) */
    tfe_dyn Ac, Bc, Cc = {0}, Ic = {0}, dA, dB, dC, dI;
    assert_int_equal(tfe_dyn_empty(&Ac, dt, 2, A.v.lay.dims, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_dyn_empty(&Bc, dt, 2, B.v.lay.dims, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_copy_dyn(&Ac, &A.v), TFE_OK);
    assert_int_equal(tfe_copy_dyn(&Bc, &B.v), TFE_OK);
    tfe_status st;
    if (dt == TFE_DT_MAXPLUS_F64) {
      tfe_tensor_maxplus_f64 c = {0}; tfe_tensor_i64 i = {0};
      st = tfe_tropical_matmul_maxplus_f64(&(tfe_view_maxplus_f64){Ac.data, Ac.lay, false}, &(tfe_view_maxplus_f64){Bc.data, Bc.lay, false}, &c, &i);
      if (!st) tfe_tensor_to_dyn_maxplus_f64(&c, &Cc), tfe_tensor_to_dyn_i64(&i, &Ic);
      tfe_tensor_release_maxplus_f64(&c), tfe_tensor_release_i64(&i);
    } else if (dt == TFE_DT_MINPLUS_F64) {
      tfe_tensor_minplus_f64 c = {0}; tfe_tensor_i64 i = {0};
      st = tfe_tropical_matmul_minplus_f64(&(tfe_view_minplus_f64){Ac.data, Ac.lay, false}, &(tfe_view_minplus_f64){Bc.data, Bc.lay, false}, &c, &i);
      if (!st) tfe_tensor_to_dyn_minplus_f64(&c, &Cc), tfe_tensor_to_dyn_i64(&i, &Ic);
      tfe_tensor_release_minplus_f64(&c), tfe_tensor_release_i64(&i);
    } else if (dt == TFE_DT_MAXTIMES_F64) {
      tfe_tensor_maxtimes_f64 c = {0}; tfe_tensor_i64 i = {0};
      st = tfe_tropical_matmul_maxtimes_f64(&(tfe_view_maxtimes_f64){Ac.data, Ac.lay, false}, &(tfe_view_maxtimes_f64){Bc.data, Bc.lay, false}, &c, &i);
      if (!st) tfe_tensor_to_dyn_maxtimes_f64(&c, &Cc), tfe_tensor_to_dyn_i64(&i, &Ic);
      tfe_tensor_release_maxtimes_f64(&c), tfe_tensor_release_i64(&i);
    } else {
      tfe_dyn_release(&Ac), tfe_dyn_release(&Bc), hfree(&A), hfree(&B);
      continue; /* f32: through the contraction test above */
    }
    assert_int_equal(st, TFE_OK);
    upload(&A, 0, &dA), upload(&B, 0, &dB);
    assert_int_equal(tfe_gpu_alloc_dyn(&dC, 0, dt, 2, (int64_t[]){m, n}, TFE_ROWMAJOR), TFE_OK);
    assert_int_equal(tfe_gpu_alloc_dyn(&dI, 0, TFE_DT_I64, 2, (int64_t[]){m, n}, TFE_COLMAJOR), TFE_OK);
    st = tfe_gpu_tropical_matmul(&dA, &dB, &dC, &dI);
    if (st != TFE_OK) fail_msg("tfe_gpu_tropical_matmul: %s", tfe_gpu_last_error());
    double *hc = malloc((size_t)(m * n) * 8);
    int64_t *hi = malloc((size_t)(m * n) * 8);
    tfe_dyn vc = {0}, vi = {0};
    vc.dtype = dt, vc.data = hc, vc.lay.rank = 2, vc.lay.dims[0] = m, vc.lay.dims[1] = n, vc.lay.strides[0] = 1, vc.lay.strides[1] = m;
    vi = vc, vi.dtype = TFE_DT_I64, vi.data = hi;
    assert_int_equal(tfe_gpu_download(&dC, &vc), TFE_OK);
    assert_int_equal(tfe_gpu_download(&dI, &vi), TFE_OK);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        double want = ((const double *)Cc.data)[i * Cc.lay.strides[0] + j * Cc.lay.strides[1]];
        int64_t wi = ((const int64_t *)Ic.data)[i * Ic.lay.strides[0] + j * Ic.lay.strides[1]];
        if (fabs(hc[i + j * m] - want) > 1e-12 * (1 + fabs(want)) || hi[i + j * m] != wi)
          fail_msg("%s C[%lld,%lld]: CPU %g (k %lld), device %g (k %lld)", tfe_dtype_name(dt), (long long)i, (long long)j,
                   want, (long long)wi, hc[i + j * m], (long long)hi[i + j * m]);
      }
    (void)rt;
    free(hc), free(hi);
    tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dC), tfe_dyn_release(&dI);
    tfe_dyn_release(&Ac), tfe_dyn_release(&Bc), tfe_dyn_release(&Cc), tfe_dyn_release(&Ic);
    hfree(&A), hfree(&B);
  }
}

/* ---- tropical einsum steps beyond GEMMs ------------------------------------------------------
 * Every step of a tropical einsum runs on the device: random unary and binary contractions
 * (make_labels: traces, C diagonals, labels of one input, sizes 0 and 1, random strides with
 * zero and negative ones in the inputs) of every tropical kind, with some of the semiring's
 * zeros among the values and alpha/beta among the semiring's one, its zero (C full of NaN) and
 * random values; GEMM-shaped pairs with one-input labels, batches and C diagonals on the
 * tropical GEMM; whole einsums on device operands (permutations, traces, reductions, products,
 * folds of many elements into few); the elementwise slot's semiring ops. Each against the
 * CPU: equal infinities and NaN are equal, other values within the kind's tolerance. */
static double tzero(tfe_dtype dt) {
  return dt == TFE_DT_MAXPLUS_F64 || dt == TFE_DT_MAXPLUS_F32 ? -INFINITY
         : dt == TFE_DT_MINPLUS_F64 || dt == TFE_DT_MINPLUS_F32 ? INFINITY : 0;
}
static bool tmt(tfe_dtype dt) { return dt == TFE_DT_MAXTIMES_F64 || dt == TFE_DT_MAXTIMES_F32; }
static double tone(tfe_dtype dt) { return tmt(dt) ? 1 : 0; }
static bool tsame(tfe_dtype rt, const char *cpu, const char *gpu, size_t n, char *msg, size_t nmsg) {
  size_t es = tfe_dtype_get(rt)->size;
  double scale = 1;
  for (size_t i = 0; i < n; i++) {
    double re, im;
    get(rt, cpu + i * es, &re, &im);
    if (isfinite(re)) scale = fmax(scale, fabs(re));
  }
  double tol = (rt == TFE_DT_F32 ? 2e-5 : 1e-12) * scale;
  for (size_t i = 0; i < n; i++) {
    double a, b, im;
    get(rt, cpu + i * es, &a, &im), get(rt, gpu + i * es, &b, &im);
    if (a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= tol) continue;
    snprintf(msg, nmsg, "element %zu of %zu: CPU %.17g, GPU %.17g", i, n, a, b);
    return false;
  }
  return true;
}
/* Random values of a tropical kind (max-times: non-negative), one in eight the semiring's zero. */
static void tfill(tu_rng *r, tfe_dtype dt, hostop *h) {
  tfe_dtype rt = treal(dt);
  size_t es = tfe_dtype_get(rt)->size;
  for (size_t i = 0; i < h->bytes / es; i++)
    put(rt, h->buf + i * es, tu_int(r, 0, 7) == 0 ? tzero(dt) : tmt(dt) ? 0.1 + tu_unif(r) : 2 * rnd(r), 0);
  h->v.dtype = dt;
}
static void make_tview2(tu_rng *r, tfe_dtype dt, int rank, const int64_t *dims, bool zero_ok, hostop *h) {
  make_view(r, treal(dt), rank, dims, zero_ok, h);
  tfill(r, dt, h);
}
static void trop_case(tu_rng *r, tfe_dtype dt, bool binary, int kcase, const lcase *given) {
  lcase c;
  if (given) c = *given;
  else make_labels(r, binary, &c);
  tfe_dtype rt = treal(dt);
  hostop A, B, C, C1, C2;
  make_tview2(r, dt, c.ra, c.da, true, &A);
  if (binary) make_tview2(r, dt, c.rb, c.db, true, &B);
  make_tview2(r, dt, c.rc, c.dc, false, &C);
  int ka = (int)tu_int(r, 0, 5), kb = (int)tu_int(r, 0, 2);
  double al[1], be[1], av = ka == 0 ? tone(dt) : ka == 5 ? tzero(dt) : tmt(dt) ? 0.5 + tu_unif(r) : rnd(r),
                       bv = kb == 0 ? tzero(dt) : kb == 1 ? tone(dt) : tmt(dt) ? 0.5 + tu_unif(r) : rnd(r);
  put(rt, al, av, 0), put(rt, be, bv, 0);
  if (kb == 0 && tu_int(r, 0, 1)) { /* beta = zero: C is not read */
    size_t es = tfe_dtype_get(rt)->size;
    for (size_t i = 0; i < C.bytes / es; i++) put(rt, C.buf + i * es, NAN, 0);
  }
  copy_op(&C, &C1), copy_op(&C, &C2);
  tfe_status s_cpu = tfe_contract_dyn(al, &A.v, c.la, binary ? &B.v : NULL, c.lb, be, &C1.v, c.lc);
  char cpu_msg[TFE_ERRMSG_MAX] = "ok";
  if (s_cpu) snprintf(cpu_msg, sizeof cpu_msg, "%s", tfe_last_error());
  tfe_dyn dA, dB, dC;
  upload(&A, 0, &dA), upload(&C, 0, &dC);
  if (binary) upload(&B, 0, &dB);
  tfe_status s_gpu = tfe_contract_dyn(al, &dA, c.la, binary ? &dB : NULL, c.lb, be, &dC, c.lc);
  if (s_gpu != s_cpu)
    fail_msg("tropical %s case %d (%s): CPU says %d (%s), GPU %d (%s)", binary ? "binary" : "unary", kcase,
             tfe_dtype_name(dt), s_cpu, cpu_msg, s_gpu, s_gpu ? tfe_last_error() : "ok");
  char msg[256];
  if (s_gpu == TFE_OK) {
    if (tfe_gpu_download(&dC, &C2.v) != TFE_OK) fail_msg("download: %s", tfe_last_error());
    if (!tsame(rt, C1.buf, C2.buf, C1.bytes / tfe_dtype_get(rt)->size, msg, sizeof msg)) {
      printf("# FAIL tropical %s case %d (%s): %s; alpha %g beta %g\n", binary ? "binary" : "unary", kcase,
             tfe_dtype_name(dt), msg, av, bv);
      dump("A", &A.v, c.la);
      if (binary) dump("B", &B.v, c.lb);
      dump("C", &C.v, c.lc);
      failures++;
    }
  }
  tfe_dyn_release(&dA), tfe_dyn_release(&dC);
  if (binary) tfe_dyn_release(&dB), hfree(&B);
  hfree(&A), hfree(&C), hfree(&C1), hfree(&C2);
}
static void test_tropical_random(void **state) {
  (void)state;
  failures = 0;
  int n = cases() / 4 > 20 ? cases() / 4 : 20;
  for (size_t t = 0; t < sizeof tkinds / sizeof *tkinds; t++) {
    tu_rng r = {0x7A3D1C5B9E2F4A61ULL + t};
    for (int i = 0; i < n; i++) trop_case(&r, tkinds[t], false, i, NULL);
    for (int i = 0; i < n; i++) trop_case(&r, tkinds[t], true, i, NULL);
  }
  if (failures) fail_msg("%d tropical cases differ (listed above)", failures);
}
/* Pairs the tropical GEMM takes (M and N of 16 and more, sums of more than 16 terms): labels of
 * one input (summed while packing), batch labels, C diagonals, and the elementwise kernel's
 * large folds (one output of a long sum). */
static void test_tropical_gemm_paths(void **state) {
  (void)state;
  static const char *const shapes[] = {"ijx,jky->ik", "xij,yjk->ki", "bij,bjk->bik", "ij,jk->iki", "ji,kjy->ik",
                                       "ij,ij->", "i,i->i", "ijk,ij->k"};
  failures = 0;
  tu_rng r = {79};
  for (size_t t = 0; t < sizeof tkinds / sizeof *tkinds; t++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
      lcase c;
      memset(&c, 0, sizeof c);
      int part = 0;
      for (const char *p = shapes[s]; *p; p++) {
        if (*p == ',') { part = 1; continue; }
        if (*p == '-') { part = 2; p++; continue; }
        int32_t l = *p;
        int64_t d = l == 'i' ? 40 : l == 'j' ? (s >= 5 ? 3000 : 29) : l == 'k' ? 33 : l == 'b' ? 3 : l == 'x' ? 3 : 2;
        if (s == 7 && l != 'k') d = 45;
        if (part == 0) c.la[c.ra] = l, c.da[c.ra++] = d;
        else if (part == 1) c.lb[c.rb] = l, c.db[c.rb++] = d;
        else c.lc[c.rc] = l, c.dc[c.rc++] = d;
      }
      trop_case(&r, tkinds[t], true, (int)s, &c);
    }
  if (failures) fail_msg("%d tropical GEMM-path cases differ (listed above)", failures);
}
/* Whole einsums on device operands against the CPU's (called through a pointer: gcc's
 * -Wmaybe-uninitialized misreads the inlined operand count). */
static tfe_status (*volatile tu_einsum_dyn)(tfe_dyn *, const char *, int, const tfe_dyn *, const tfe_einsum_opts *) =
    tfe_einsum_dyn;
static void test_tropical_einsum(void **state) {
  (void)state;
  static const char *const exprs[] = {"ij,jk,kl->il", "iij,jk->ki", "ijk->kji", "ij->", "ij,ij->ij", "ii->i",
                                      "i,j->ij", "ab,bc,ca->", "abc,cd->dba", "ij,jk->", "pq->p", "pq,pq->q"};
  tu_rng r = {80};
  for (size_t t = 0; t < sizeof tkinds / sizeof *tkinds; t++)
    for (size_t e = 0; e < sizeof exprs / sizeof *exprs; e++) {
      tfe_dtype dt = tkinds[t], rt = treal(dt);
      const char *x = exprs[e];
      int nops = 1;
      for (const char *p = x; *p && *p != '-'; p++) nops += *p == ',';
      hostop H[3];
      tfe_dyn hv[3], dv[3];
      const char *p = x;
      for (int k = 0; k < nops; k++) {
        int64_t dims[8];
        int rank = 0;
        for (; *p && *p != ',' && *p != '-'; p++) /* p, q: a long sum into few outputs */
          dims[rank++] = *p == 'p' ? 9 : *p == 'q' ? 4000 : 3 + (*p - 'a') * 5 % 7;
        p++;
        make_tview2(&r, dt, rank, dims, false, &H[k]);
        hv[k] = H[k].v;
        upload(&H[k], 0, &dv[k]);
      }
      tfe_dyn ref, out;
      assert_int_equal(tu_einsum_dyn(&ref, x, nops, hv, NULL), TFE_OK);
      tfe_status st = tu_einsum_dyn(&out, x, nops, dv, NULL);
      if (st != TFE_OK) fail_msg("tropical einsum %s (%s) on device operands: %s", x, tfe_dtype_name(dt), tfe_last_error());
      assert_true(out.st->space.kind == TFE_MEM_GPU);
      size_t n = (size_t)tfe_layout_numel(&ref.lay), es = tfe_dtype_get(rt)->size;
      char *got = malloc(n * es + 1);
      assert_non_null(got);
      tfe_dyn hg = ref;
      hg.st = NULL, hg.data = got;
      assert_int_equal(tfe_gpu_download(&out, &hg), TFE_OK);
      char msg[256];
      if (!tsame(rt, (const char *)ref.data, got, n, msg, sizeof msg))
        fail_msg("tropical einsum %s (%s): %s", x, tfe_dtype_name(dt), msg);
      free(got);
      tfe_dyn_release(&ref), tfe_dyn_release(&out);
      for (int k = 0; k < nops; k++) tfe_dyn_release(&dv[k]), hfree(&H[k]);
    }
}
/* The elementwise slot on tropical device operands: zip (add, mul, max, min; broadcast),
 * reduce (sum, prod, max, min over axes, alpha and beta; a long one), fill, copy into a
 * permuted layout, map of conj; refused ops with the CPU's codes. */
static void test_tropical_elementwise(void **state) {
  (void)state;
  tu_rng r = {81};
  for (size_t t = 0; t < sizeof tkinds / sizeof *tkinds; t++) {
    tfe_dtype dt = tkinds[t], rt = treal(dt);
    size_t es = tfe_dtype_get(rt)->size;
    int64_t d2[2] = {6, 7}, d1[1] = {7}, dl[2] = {5, 3000}, dr[1] = {6}, dlr[1] = {5};
    hostop A, B, V, L, O1, O2;
    make_tview2(&r, dt, 2, d2, false, &A), make_tview2(&r, dt, 2, d2, false, &B), make_tview2(&r, dt, 1, d1, false, &V);
    make_tview2(&r, dt, 2, dl, false, &L);
    tfe_dyn dA, dB, dV, dL;
    upload(&A, 0, &dA), upload(&B, 0, &dB), upload(&V, 0, &dV), upload(&L, 0, &dL);
    char msg[256];
    /* zip */
    static const tfe_binop zops[] = {TFE_BIN_ADD, TFE_BIN_MUL, TFE_BIN_MAX, TFE_BIN_MIN};
    for (size_t z = 0; z < 4; z++) {
      make_tview2(&r, dt, 2, d2, false, &O1), copy_op(&O1, &O2);
      tfe_dyn dO;
      upload(&O2, 0, &dO);
      const tfe_dyn *second = z % 2 ? &V.v : &B.v, *dsecond = z % 2 ? &dV : &dB;
      assert_int_equal(tfe_zip_dyn(&O1.v, &A.v, second, zops[z]), TFE_OK);
      if (tfe_zip_dyn(&dO, &dA, dsecond, zops[z]) != TFE_OK) fail_msg("zip %d: %s", (int)zops[z], tfe_last_error());
      assert_int_equal(tfe_gpu_download(&dO, &O2.v), TFE_OK);
      if (!tsame(rt, O1.buf, O2.buf, O1.bytes / es, msg, sizeof msg)) fail_msg("%s zip %d: %s", tfe_dtype_name(dt), (int)zops[z], msg);
      tfe_dyn_release(&dO), hfree(&O1), hfree(&O2);
    }
    /* reduce */
    static const tfe_redop rops[] = {TFE_RED_SUM, TFE_RED_PROD, TFE_RED_MAX, TFE_RED_MIN};
    for (size_t q = 0; q < 8; q++) {
      bool lng = q >= 4;
      make_tview2(&r, dt, 1, lng ? dlr : dr, false, &O1), copy_op(&O1, &O2);
      tfe_dyn dO;
      upload(&O2, 0, &dO);
      int ax[1] = {1};
      double al[1], be[1];
      put(rt, al, tmt(dt) ? 0.75 : 0.5, 0), put(rt, be, q % 2 ? tzero(dt) : tmt(dt) ? 1.25 : -0.25, 0);
      tfe_redop op = rops[q % 4];
      if (lng && op == TFE_RED_PROD && tmt(dt)) op = TFE_RED_MAX; /* 3000 factors under 1.1 underflow */
      assert_int_equal(tfe_reduce_dyn(&O1.v, lng ? &L.v : &A.v, op, 1, ax, al, be), TFE_OK);
      if (tfe_reduce_dyn(&dO, lng ? &dL : &dA, op, 1, ax, al, be) != TFE_OK) fail_msg("reduce %d: %s", (int)op, tfe_last_error());
      assert_int_equal(tfe_gpu_download(&dO, &O2.v), TFE_OK);
      if (!tsame(rt, O1.buf, O2.buf, O1.bytes / es, msg, sizeof msg))
        fail_msg("%s reduce %d (%s): %s", tfe_dtype_name(dt), (int)op, lng ? "5 x 3000" : "6 x 7", msg);
      tfe_dyn_release(&dO), hfree(&O1), hfree(&O2);
    }
    /* fill, copy into the transposed layout, map conj; refusals */
    make_tview2(&r, dt, 2, d2, false, &O1), copy_op(&O1, &O2);
    O1.v.lay.strides[0] = 7, O1.v.lay.strides[1] = 1, O1.v.lay.offset = 0, O2.v.lay = O1.v.lay; /* row-major over the same buffer */
    tfe_dyn dO;
    upload(&O2, 0, &dO);
    assert_int_equal(tfe_copy_dyn(&O1.v, &A.v), TFE_OK);
    if (tfe_copy_dyn(&dO, &dA) != TFE_OK) fail_msg("copy: %s", tfe_last_error());
    assert_int_equal(tfe_gpu_download(&dO, &O2.v), TFE_OK);
    if (!tsame(rt, O1.buf, O2.buf, O1.bytes / es, msg, sizeof msg)) fail_msg("%s copy: %s", tfe_dtype_name(dt), msg);
    double fv[1];
    put(rt, fv, tzero(dt), 0);
    assert_int_equal(tfe_fill_dyn(&O1.v, fv), TFE_OK);
    assert_int_equal(tfe_fill_dyn(&dO, fv), TFE_OK);
    assert_int_equal(tfe_map_dyn(&O1.v, &B.v, TFE_UN_CONJ, NULL), TFE_OK);
    assert_int_equal(tfe_map_dyn(&dO, &dB, TFE_UN_CONJ, NULL), TFE_OK);
    assert_int_equal(tfe_gpu_download(&dO, &O2.v), TFE_OK);
    if (!tsame(rt, O1.buf, O2.buf, O1.bytes / es, msg, sizeof msg)) fail_msg("%s map conj: %s", tfe_dtype_name(dt), msg);
    assert_int_equal(tfe_zip_dyn(&O1.v, &A.v, &B.v, TFE_BIN_SUB), TFE_ERR_UNSUPPORTED);
    assert_int_equal(tfe_zip_dyn(&dO, &dA, &dB, TFE_BIN_SUB), TFE_ERR_UNSUPPORTED);
    assert_int_equal(tfe_map_dyn(&O1.v, &A.v, TFE_UN_EXP, NULL), TFE_ERR_UNSUPPORTED);
    assert_int_equal(tfe_map_dyn(&dO, &dA, TFE_UN_EXP, NULL), TFE_ERR_UNSUPPORTED);
    assert_int_equal(tfe_reduce_dyn(&dO, &dA, TFE_RED_MEAN, -1, NULL, NULL, NULL) != TFE_OK, 1);
    tfe_dyn_release(&dO), hfree(&O1), hfree(&O2);
    tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dV), tfe_dyn_release(&dL);
    hfree(&A), hfree(&B), hfree(&V), hfree(&L);
  }
}

/* ---- linalg on the device (gpu/solver.h): the dtype-tagged entries on device operands against
 * the same calls on the host (results, shapes, error codes and messages) ---------------------------- */
typedef double complex zc;
static double ltol(tfe_dtype dt) { return dt == TFE_DT_F32 || dt == TFE_DT_C64 ? 2e-3 : 1e-9; }
/* Element e (column-major over the view's dims) of a host view, its conj flag applied. */
static int64_t voff(const tfe_dyn *v, int64_t e) {
  int64_t off = v->lay.offset;
  for (int i = 0; i < v->lay.rank; i++) {
    int64_t d = v->lay.dims[i] > 0 ? v->lay.dims[i] : 1;
    off += (e % d) * v->lay.strides[i], e /= d;
  }
  return off;
}
static zc vget(const tfe_dyn *v, int64_t e) {
  double re, im;
  get(v->dtype, (const char *)v->data + voff(v, e) * (int64_t)tfe_dtype_get(v->dtype)->size, &re, &im);
  zc z = re + I * im;
  return v->conj ? conj(z) : z;
}
static void vset(const tfe_dyn *v, int64_t e, zc z) {
  if (v->conj) z = conj(z);
  put(v->dtype, (char *)v->data + voff(v, e) * (int64_t)tfe_dtype_get(v->dtype)->size, creal(z), cimag(z));
}
/* A device result on the host (dense column-major, as every linalg result is). */
static void fetch(const tfe_dyn *d, tfe_dyn *h) {
  assert_non_null(d->st);
  assert_int_equal(d->st->space.kind, TFE_MEM_GPU);
  assert_int_equal(tfe_dyn_empty(h, d->dtype, d->lay.rank, d->lay.dims, TFE_COLMAJOR), TFE_OK);
  if (tfe_gpu_download(d, h) != TFE_OK) fail_msg("download: %s", tfe_gpu_last_error());
}
static zc hat(const tfe_dyn *h, int64_t e) { return vget(h, e); }
static void same_shape(const tfe_dyn *a, const tfe_dyn *b, const char *what) {
  bool ok = a->lay.rank == b->lay.rank && a->dtype == b->dtype;
  for (int i = 0; ok && i < a->lay.rank; i++) ok = a->lay.dims[i] == b->lay.dims[i];
  if (!ok) fail_msg("%s: shapes or kinds differ (rank %d vs %d)", what, a->lay.rank, b->lay.rank);
}
/* max |a - b| over rows x cols of each of nb dense items (leading dimension lda, sb apart) */
static double maxdiff(const tfe_dyn *a, const tfe_dyn *b, int64_t rows, int64_t cols, int64_t lda, int64_t sb, int64_t nb) {
  double e = 0;
  for (int64_t q = 0; q < nb; q++)
    for (int64_t j = 0; j < cols; j++)
      for (int64_t i = 0; i < rows; i++) e = fmax(e, cabs(hat(a, q * sb + i + j * lda) - hat(b, q * sb + i + j * lda)));
  return e;
}
static double vmax(const tfe_dyn *a) {
  double m = 0;
  for (int64_t e = 0; e < tfe_layout_numel(&a->lay); e++) m = fmax(m, cabs(hat(a, e)));
  return m;
}
#define LA_CHECK(cond, ...) do { if (!(cond)) fail_msg(__VA_ARGS__); } while (0)
/* The same status (and message) from the host call and the device call. */
static void same_status(tfe_status sc, const char *mc, tfe_status sg, const char *what) {
  if (sc != sg || (sc != TFE_OK && strcmp(mc, tfe_last_error()) != 0))
    fail_msg("%s: CPU %d (%s), device %d (%s)", what, sc, sc ? mc : "ok", sg, sg ? tfe_last_error() : "ok");
}

static int la_cases(void) {
  const char *e = getenv("TFE_GPU_LA_CASES");
  int n = e ? atoi(e) : 0;
  return n > 0 ? n : 10;
}
/* A random batched matrix (m, n, batch...) with a random layout and conj flag. */
static void make_mat(tu_rng *r, tfe_dtype dt, int64_t m, int64_t n, hostop *A, int64_t *nb) {
  int64_t dims[4] = {m, n, 1, 1};
  int nbat = (int)tu_int(r, 0, 2);
  *nb = 1;
  for (int i = 0; i < nbat; i++) dims[2 + i] = tu_int(r, 1, 3), *nb *= dims[2 + i];
  make_view(r, dt, 2 + nbat, dims, false, A);
  A->v.conj = cplx(dt) && tu_int(r, 0, 2) == 0;
}
static bool la_big; /* sizes where cuSOLVER's blocked code runs */
static int64_t rdim(tu_rng *r) {
  if (la_big) return tu_int(r, 64, 130);
  return tu_int(r, 0, 30) == 0 ? 0 : tu_int(r, 0, 5) == 0 ? tu_int(r, 12, 40) : tu_int(r, 1, 7);
}

static void la_svd_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t m = rdim(r), n = rdim(r), nb, k = m < n ? m : n;
  hostop A;
  make_mat(r, dt, m, n, &A, &nb);
  tfe_svd_mode mode = (tfe_svd_mode)(kc % 3);
  tfe_dyn Uc = {0}, Sc = {0}, Vc = {0}, dA, Ug = {0}, Sg = {0}, Vg = {0}, U, S, V;
  bool vecs = mode != TFE_SVD_VALUES;
  tfe_status sc = tfe_svd_dyn(&A.v, mode, vecs ? &Uc : NULL, &Sc, vecs ? &Vc : NULL);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA);
  tfe_status sg = tfe_svd_dyn(&dA, mode, vecs ? &Ug : NULL, &Sg, vecs ? &Vg : NULL);
  same_status(sc, mc, sg, "svd");
  fetch(&Sg, &S);
  same_shape(&Sc, &S, "svd S");
  double tol = ltol(dt) * (1 + vmax(&Sc)) * (1 + sqrt((double)(m + n)));
  LA_CHECK(maxdiff(&Sc, &S, k, 1, k, k, nb) <= tol, "svd case %d (%s, %lldx%lld): singular values differ", kc,
           tfe_dtype_name(dt), (long long)m, (long long)n);
  for (int64_t q = 0; q < nb; q++)
    for (int64_t i = 1; i < k; i++) LA_CHECK(creal(hat(&S, q * k + i)) <= creal(hat(&S, q * k + i - 1)), "svd: S not descending");
  if (vecs) {
    fetch(&Ug, &U), fetch(&Vg, &V);
    same_shape(&Uc, &U, "svd U"), same_shape(&Vc, &V, "svd Vh");
    int64_t ku = U.lay.dims[1], kv = V.lay.dims[0];
    for (int64_t q = 0; q < nb; q++) {
      for (int64_t j = 0; j < n; j++) /* U diag(S) Vh = A */
        for (int64_t i = 0; i < m; i++) {
          zc s = 0;
          for (int64_t l = 0; l < k; l++) s += hat(&U, q * m * ku + i + l * m) * creal(hat(&S, q * k + l)) * hat(&V, q * kv * n + l + j * kv);
          LA_CHECK(cabs(s - vget(&A.v, q * m * n + i + j * m)) <= tol, "svd case %d (%s, %lldx%lld, mode %d): U S Vh != A at (%lld,%lld)",
                   kc, tfe_dtype_name(dt), (long long)m, (long long)n, (int)mode, (long long)i, (long long)j);
        }
      for (int64_t a = 0; a < ku; a++) /* U^H U = I */
        for (int64_t b = 0; b < ku; b++) {
          zc s = 0;
          for (int64_t i = 0; i < m; i++) s += conj(hat(&U, q * m * ku + i + a * m)) * hat(&U, q * m * ku + i + b * m);
          LA_CHECK(cabs(s - (a == b)) <= tol, "svd case %d: U not orthonormal", kc);
        }
      for (int64_t a = 0; a < kv; a++) /* Vh Vh^H = I */
        for (int64_t b = 0; b < kv; b++) {
          zc s = 0;
          for (int64_t j = 0; j < n; j++) s += hat(&V, q * kv * n + a + j * kv) * conj(hat(&V, q * kv * n + b + j * kv));
          LA_CHECK(cabs(s - (a == b)) <= tol, "svd case %d: Vh not orthonormal", kc);
        }
    }
    tfe_dyn_release(&U), tfe_dyn_release(&V);
  }
  tfe_dyn_release(&S);
  tfe_dyn_release(&Uc), tfe_dyn_release(&Sc), tfe_dyn_release(&Vc), tfe_dyn_release(&Ug), tfe_dyn_release(&Sg), tfe_dyn_release(&Vg);
  tfe_dyn_release(&dA), hfree(&A);
}

static void la_qr_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t m = rdim(r), n = rdim(r), nb, k = m < n ? m : n;
  bool full = tu_int(r, 0, 1);
  hostop A;
  make_mat(r, dt, m, n, &A, &nb);
  tfe_dyn Qc = {0}, Rc = {0}, dA, Qg = {0}, Rg = {0}, Q, R;
  tfe_status sc = tfe_qr_dyn(&A.v, full, &Qc, &Rc);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA);
  same_status(sc, mc, tfe_qr_dyn(&dA, full, &Qg, &Rg), "qr");
  fetch(&Qg, &Q), fetch(&Rg, &R);
  same_shape(&Qc, &Q, "qr Q"), same_shape(&Rc, &R, "qr R");
  int64_t kq = Q.lay.dims[1];
  double tol = ltol(dt) * (1 + vmax(&Rc)) * (1 + sqrt((double)(m + n)));
  /* the gauge (real non-negative diag R) makes R and the first k columns of Q unique */
  LA_CHECK(maxdiff(&Rc, &R, kq, n, kq, kq * n, nb) <= tol, "qr case %d (%s, %lldx%lld, full %d): R differs from the CPU's", kc,
           tfe_dtype_name(dt), (long long)m, (long long)n, full);
  LA_CHECK(maxdiff(&Qc, &Q, m, k, m, m * kq, nb) <= tol, "qr case %d (%s, %lldx%lld): Q differs from the CPU's", kc, tfe_dtype_name(dt),
           (long long)m, (long long)n);
  for (int64_t q = 0; q < nb; q++) {
    for (int64_t j = 0; j < k; j++) LA_CHECK(cimag(hat(&R, q * kq * n + j + j * kq)) == 0 && creal(hat(&R, q * kq * n + j + j * kq)) >= 0, "qr: diag(R) not real >= 0");
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        zc s = 0;
        for (int64_t l = 0; l < kq; l++) s += hat(&Q, q * m * kq + i + l * m) * hat(&R, q * kq * n + l + j * kq);
        LA_CHECK(cabs(s - vget(&A.v, q * m * n + i + j * m)) <= tol, "qr case %d: Q R != A", kc);
      }
    for (int64_t a = 0; a < kq; a++)
      for (int64_t b = 0; b < kq; b++) {
        zc s = 0;
        for (int64_t i = 0; i < m; i++) s += conj(hat(&Q, q * m * kq + i + a * m)) * hat(&Q, q * m * kq + i + b * m);
        LA_CHECK(cabs(s - (a == b)) <= tol, "qr case %d (full %d): Q not orthonormal", kc, full);
      }
  }
  tfe_dyn_release(&Q), tfe_dyn_release(&R), tfe_dyn_release(&Qc), tfe_dyn_release(&Rc), tfe_dyn_release(&Qg), tfe_dyn_release(&Rg);
  tfe_dyn_release(&dA), hfree(&A);
}

static void la_eigh_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t n = rdim(r), nb;
  bool vecs = tu_int(r, 0, 3) != 0;
  hostop A;
  make_mat(r, dt, n, n, &A, &nb);
  tfe_dyn Wc = {0}, Vc = {0}, dA, Wg = {0}, Vg = {0}, W, V;
  tfe_status sc = tfe_eigh_dyn(&A.v, &Wc, vecs ? &Vc : NULL);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA);
  same_status(sc, mc, tfe_eigh_dyn(&dA, &Wg, vecs ? &Vg : NULL), "eigh");
  fetch(&Wg, &W);
  same_shape(&Wc, &W, "eigh W");
  double tol = ltol(dt) * (1 + vmax(&Wc)) * (1 + sqrt((double)n));
  LA_CHECK(maxdiff(&Wc, &W, n, 1, n, n, nb) <= tol, "eigh case %d (%s, n %lld): eigenvalues differ", kc, tfe_dtype_name(dt), (long long)n);
  if (vecs) {
    fetch(&Vg, &V);
    same_shape(&Vc, &V, "eigh V");
    for (int64_t q = 0; q < nb; q++)
      for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) { /* H V = V W with H from the lower triangle */
          zc s = 0;
          for (int64_t l = 0; l < n; l++) {
            zc h = i > l ? vget(&A.v, q * n * n + i + l * n) : i < l ? conj(vget(&A.v, q * n * n + l + i * n)) : creal(vget(&A.v, q * n * n + i + i * n));
            s += h * hat(&V, q * n * n + l + j * n);
          }
          LA_CHECK(cabs(s - hat(&V, q * n * n + i + j * n) * creal(hat(&W, q * n + j))) <= tol, "eigh case %d (%s, n %lld): H V != V W",
                   kc, tfe_dtype_name(dt), (long long)n);
        }
    tfe_dyn_release(&V);
  }
  tfe_dyn_release(&W), tfe_dyn_release(&Wc), tfe_dyn_release(&Vc), tfe_dyn_release(&Wg), tfe_dyn_release(&Vg);
  tfe_dyn_release(&dA), hfree(&A);
}

/* eig (session 17, cuSOLVER's geev): the device's W as a multiset of the CPU's (each eigenvalue
 * matched to the nearest unused one: the order may differ), A V = V diag(W), unit columns with
 * their largest component real (LAPACK's normalization, which cuSOLVER documents), and each column
 * equal to the CPU's matched one up to a phase. Real kinds: TFE_ERR_UNSUPPORTED on the device
 * (convert to the complex kind), nothing kept. */
static void la_eig_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t n = rdim(r), nb;
  bool vecs = tu_int(r, 0, 3) != 0;
  hostop A;
  make_mat(r, dt, n, n, &A, &nb);
  tfe_dyn Wc = {0}, Vc = {0}, dA, Wg = {0}, Vg = {0}, W, V;
  tfe_status sc = tfe_eig_dyn(&A.v, &Wc, vecs ? &Vc : NULL);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA);
  tfe_status sg = tfe_eig_dyn(&dA, &Wg, vecs ? &Vg : NULL);
  if (!cplx(dt)) {
    LA_CHECK(sc == TFE_OK && sg == TFE_ERR_UNSUPPORTED && strstr(tfe_last_error(), "complex kinds"),
             "eig case %d (%s): CPU %d, device %d (%s)", kc, tfe_dtype_name(dt), sc, sg, tfe_last_error());
    assert_null(Wg.st), assert_null(Vg.st);
    tfe_dyn_release(&Wc), tfe_dyn_release(&Vc), tfe_dyn_release(&dA), hfree(&A);
    return;
  }
  same_status(sc, mc, sg, "eig");
  fetch(&Wg, &W);
  same_shape(&Wc, &W, "eig W");
  if (vecs) fetch(&Vg, &V), same_shape(&Vc, &V, "eig V");
  double tol = ltol(dt) * 10 * (1 + vmax(&Wc)) * (1 + sqrt((double)n));
  int64_t *match = malloc(sizeof(int64_t) * (size_t)(n + 1));
  bool *used = malloc(sizeof(bool) * (size_t)(n + 1));
  for (int64_t q = 0; q < nb; q++) {
    for (int64_t j = 0; j < n; j++) used[j] = false;
    for (int64_t i = 0; i < n; i++) { /* the nearest unused CPU eigenvalue */
      int64_t best = -1;
      for (int64_t j = 0; j < n; j++)
        if (!used[j] && (best < 0 || cabs(hat(&W, q * n + i) - hat(&Wc, q * n + j)) < cabs(hat(&W, q * n + i) - hat(&Wc, q * n + best))))
          best = j;
      used[best] = true, match[i] = best;
      LA_CHECK(cabs(hat(&W, q * n + i) - hat(&Wc, q * n + best)) <= tol, "eig case %d (%s, n %lld): eigenvalue %lld has no CPU match",
               kc, tfe_dtype_name(dt), (long long)n, (long long)i);
    }
    for (int64_t j = 0; vecs && j < n; j++) {
      const int64_t c0 = q * n * n + j * n, cc = q * n * n + match[j] * n;
      double nrm = 0, big = 0, bigim = INFINITY;
      zc dot = 0;
      for (int64_t i = 0; i < n; i++) {
        zc s = 0, v = hat(&V, c0 + i);
        for (int64_t l = 0; l < n; l++) s += vget(&A.v, q * n * n + i + l * n) * hat(&V, c0 + l);
        LA_CHECK(cabs(s - hat(&W, q * n + j) * v) <= tol, "eig case %d (%s, n %lld): A V != V W", kc, tfe_dtype_name(dt), (long long)n);
        nrm += creal(v * conj(v)), big = fmax(big, cabs(v)), dot += conj(hat(&Vc, cc + i)) * v;
      }
      for (int64_t i = 0; i < n; i++) /* a largest component (to rounding) is real */
        if (cabs(hat(&V, c0 + i)) >= big * (1 - 1e-3)) bigim = fmin(bigim, fabs(cimag(hat(&V, c0 + i))));
      LA_CHECK(fabs(nrm - 1) <= tol && bigim <= tol, "eig case %d (%s, n %lld): column %lld: norm^2 %g, largest component's imaginary part %g",
               kc, tfe_dtype_name(dt), (long long)n, (long long)j, nrm, bigim);
      LA_CHECK(1 - cabs(dot) <= tol, "eig case %d (%s, n %lld): column %lld differs from the CPU's beyond a phase (|<vc, v>| = %g)", kc,
               tfe_dtype_name(dt), (long long)n, (long long)j, cabs(dot));
    }
  }
  free(match), free(used);
  tfe_dyn_release(&W);
  if (vecs) tfe_dyn_release(&V);
  tfe_dyn_release(&Wc), tfe_dyn_release(&Vc), tfe_dyn_release(&Wg), tfe_dyn_release(&Vg), tfe_dyn_release(&dA), hfree(&A);
}

/* A = M M^H + n I written into the view's elements (positive definite); neg: -A. */
static void make_pd(hostop *A, int64_t n, int64_t nb, bool neg) {
  zc *M = malloc(sizeof(zc) * (size_t)(n * n * nb + 1));
  for (int64_t e = 0; e < n * n * nb; e++) M[e] = vget(&A->v, e);
  for (int64_t q = 0; q < nb; q++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) {
        zc s = i == j ? (zc)n : 0;
        for (int64_t l = 0; l < n; l++) s += M[q * n * n + i + l * n] * conj(M[q * n * n + j + l * n]);
        if (!cplx(A->v.dtype)) s = creal(s);
        vset(&A->v, q * n * n + i + j * n, neg ? -s : s);
      }
  free(M);
}
static void la_chol_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t n = rdim(r), nb;
  hostop A;
  make_mat(r, dt, n, n, &A, &nb);
  bool neg = n > 0 && tu_int(r, 0, 5) == 0; /* not positive definite: the CPU's error and message */
  make_pd(&A, n, nb, neg);
  tfe_dyn Lc = {0}, dA, Lg = {0}, L;
  tfe_status sc = tfe_cholesky_dyn(&A.v, &Lc);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA);
  same_status(sc, mc, tfe_cholesky_dyn(&dA, &Lg), "cholesky");
  if (sc == TFE_OK) {
    fetch(&Lg, &L);
    same_shape(&Lc, &L, "cholesky L");
    double tol = ltol(dt) * (1 + vmax(&Lc)) * (1 + (double)n);
    LA_CHECK(maxdiff(&Lc, &L, n, n, n, n * n, nb) <= tol, "cholesky case %d (%s, n %lld): L differs", kc, tfe_dtype_name(dt), (long long)n);
    for (int64_t q = 0; q < nb; q++)
      for (int64_t j = 1; j < n; j++)
        for (int64_t i = 0; i < j; i++) LA_CHECK(hat(&L, q * n * n + i + j * n) == 0, "cholesky: upper triangle not zero");
    tfe_dyn_release(&L);
  } else
    assert_int_equal(sc, TFE_ERR_SINGULAR);
  tfe_dyn_release(&Lc), tfe_dyn_release(&Lg), tfe_dyn_release(&dA), hfree(&A);
}

static void la_lu_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t m = rdim(r), n = rdim(r), nb, k = m < n ? m : n;
  hostop A;
  make_mat(r, dt, m, n, &A, &nb);
  tfe_dyn Pc = {0}, Lc = {0}, Uc = {0}, dA, Pg = {0}, Lg = {0}, Ug = {0}, P, L, U;
  tfe_status sc = tfe_lu_dyn(&A.v, &Pc, &Lc, &Uc);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA);
  same_status(sc, mc, tfe_lu_dyn(&dA, &Pg, &Lg, &Ug), "lu");
  fetch(&Pg, &P), fetch(&Lg, &L), fetch(&Ug, &U);
  same_shape(&Pc, &P, "lu perm"), same_shape(&Lc, &L, "lu L"), same_shape(&Uc, &U, "lu U");
  double tol = ltol(dt) * (1 + vmax(&Uc)) * (1 + sqrt((double)(m + n)));
  for (int64_t q = 0; q < nb; q++) {
    const int64_t *p = (const int64_t *)P.data + q * m, *pc = (const int64_t *)Pc.data + q * m;
    for (int64_t i = 0; i < m; i++) /* partial pivoting picks the same rows (random values: no ties) */
      LA_CHECK(p[i] == pc[i], "lu case %d (%s, %lldx%lld): perm[%lld] = %lld on the device, %lld on the CPU", kc,
               tfe_dtype_name(dt), (long long)m, (long long)n, (long long)i, (long long)p[i], (long long)pc[i]);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        zc s = 0;
        for (int64_t l = 0; l < k; l++) s += hat(&L, q * m * k + i + l * m) * hat(&U, q * k * n + l + j * k);
        LA_CHECK(cabs(s - vget(&A.v, q * m * n + p[i] + j * m)) <= tol, "lu case %d: P L U != A", kc);
      }
  }
  LA_CHECK(maxdiff(&Lc, &L, m, k, m, m * k, nb) <= tol && maxdiff(&Uc, &U, k, n, k, k * n, nb) <= tol, "lu case %d: L or U differs", kc);
  tfe_dyn_release(&P), tfe_dyn_release(&L), tfe_dyn_release(&U);
  tfe_dyn_release(&Pc), tfe_dyn_release(&Lc), tfe_dyn_release(&Uc), tfe_dyn_release(&Pg), tfe_dyn_release(&Lg), tfe_dyn_release(&Ug);
  tfe_dyn_release(&dA), hfree(&A);
}

static void la_solve_case(tu_rng *r, tfe_dtype dt, int kc) {
  int64_t n = rdim(r), nb, rr = tu_int(r, 0, 3);
  hostop A, B;
  make_mat(r, dt, n, n, &A, &nb);
  bool vec = tu_int(r, 0, 2) == 0;
  int64_t bd[4];
  int br = 0;
  bd[br++] = n;
  if (!vec) bd[br++] = rr;
  for (int i = 2; i < A.v.lay.rank; i++) bd[br++] = A.v.lay.dims[i];
  make_view(r, dt, br, bd, false, &B);
  B.v.conj = cplx(dt) && tu_int(r, 0, 2) == 0;
  if (vec) rr = 1;
  bool sing = n >= 2 && tu_int(r, 0, 5) == 0; /* column 1 zero: U(1,1) = 0 exactly */
  for (int64_t q = 0; sing && q < nb; q++)
    for (int64_t i = 0; i < n; i++) vset(&A.v, q * n * n + i + n, 0);
  tfe_dyn Xc = {0}, dA, dB, Xg = {0}, X;
  tfe_status sc = tfe_solve_dyn(&A.v, &B.v, &Xc);
  char mc[TFE_ERRMSG_MAX];
  snprintf(mc, sizeof mc, "%s", tfe_last_error());
  upload(&A, 0, &dA), upload(&B, 0, &dB);
  same_status(sc, mc, tfe_solve_dyn(&dA, &dB, &Xg), "solve");
  if (sc == TFE_OK) {
    fetch(&Xg, &X);
    same_shape(&Xc, &X, "solve X");
    double xs = 1 + vmax(&Xc), tol = ltol(dt) * 10 * xs * (1 + (double)n);
    LA_CHECK(maxdiff(&Xc, &X, n, rr, n, n * rr, nb) <= tol, "solve case %d (%s, n %lld, r %lld): X differs", kc, tfe_dtype_name(dt),
             (long long)n, (long long)rr);
    for (int64_t q = 0; q < nb; q++)
      for (int64_t j = 0; j < rr; j++)
        for (int64_t i = 0; i < n; i++) {
          zc s = 0;
          for (int64_t l = 0; l < n; l++) s += vget(&A.v, q * n * n + i + l * n) * hat(&X, q * n * rr + l + j * n);
          LA_CHECK(cabs(s - vget(&B.v, q * n * rr + i + j * n)) <= tol, "solve case %d: A X != B", kc);
        }
    tfe_dyn_release(&X);
  } else
    assert_int_equal(sc, TFE_ERR_SINGULAR);
  tfe_dyn_release(&Xc), tfe_dyn_release(&Xg), tfe_dyn_release(&dA), tfe_dyn_release(&dB), hfree(&A), hfree(&B);
}

static void test_linalg_random(void **state) {
  (void)state;
  tu_rng r = {1601};
  for (size_t t = 0; t < sizeof kinds / sizeof *kinds; t++)
    for (int c = 0; c < la_cases(); c++) {
      la_svd_case(&r, kinds[t], c), la_qr_case(&r, kinds[t], c), la_eigh_case(&r, kinds[t], c);
      la_chol_case(&r, kinds[t], c), la_lu_case(&r, kinds[t], c), la_solve_case(&r, kinds[t], c);
    }

  la_big = true; /* one case of each at 64 to 130 rows and columns per kind (svd: thin) */
  for (size_t t = 0; t < sizeof kinds / sizeof *kinds; t++) {
    la_svd_case(&r, kinds[t], 0), la_qr_case(&r, kinds[t], 0), la_eigh_case(&r, kinds[t], 0);
    la_chol_case(&r, kinds[t], 0), la_lu_case(&r, kinds[t], 0), la_solve_case(&r, kinds[t], 0);
  }
  la_big = false;
  tu_rng re = {1604}; /* eig (session 17) with its own draws: the cases above keep theirs */
  for (size_t t = 0; t < sizeof kinds / sizeof *kinds; t++)
    for (int c = 0; c < la_cases(); c++) la_eig_case(&re, kinds[t], c);
  la_big = true;
  for (size_t t = 0; t < sizeof kinds / sizeof *kinds; t++) la_eig_case(&re, kinds[t], 0);
  la_big = false;
}
/* The CPU's errors from the device: NaN/Inf (named element, through A^H for a wide SVD), shapes,
 * ranks; the functions the device does not run answer TFE_ERR_UNSUPPORTED. */
static void test_linalg_errors(void **state) {
  (void)state;
  tu_rng r = {1602};
  for (size_t t = 0; t < sizeof kinds / sizeof *kinds; t++) {
    tfe_dtype dt = kinds[t];
    hostop A;
    int64_t nb;
    char mc[TFE_ERRMSG_MAX];
    /* a NaN and an infinity: the first in A's own index order is named */
    make_mat(&r, dt, 3, 5, &A, &nb);
    vset(&A.v, nb * 15 - 2, NAN), vset(&A.v, nb * 15 - 6, INFINITY);
    tfe_dyn dA, U = {0}, S = {0}, V = {0}, W = {0};
    upload(&A, 0, &dA);
    tfe_status sc = tfe_svd_dyn(&A.v, TFE_SVD_THIN, &U, &S, &V);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    assert_int_equal(sc, TFE_ERR_INVALID);
    same_status(sc, mc, tfe_svd_dyn(&dA, TFE_SVD_THIN, &U, &S, &V), "svd of a NaN");
    assert_null(U.st), assert_null(S.st), assert_null(V.st);
    sc = tfe_lu_dyn(&A.v, &U, &S, &V);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    same_status(sc, mc, tfe_lu_dyn(&dA, &U, &S, &V), "lu of a NaN");
    /* not square, and a NaN: the CPU names the NaN first (its one check comes first) */
    sc = tfe_eigh_dyn(&A.v, &W, NULL);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    assert_int_equal(sc, TFE_ERR_INVALID);
    same_status(sc, mc, tfe_eigh_dyn(&dA, &W, NULL), "eigh of a 3x5 with a NaN");
    sc = tfe_cholesky_dyn(&A.v, &W);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    same_status(sc, mc, tfe_cholesky_dyn(&dA, &W), "cholesky of a 3x5");
    /* B of the wrong rows */
    sc = tfe_solve_dyn(&A.v, &A.v, &W);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    same_status(sc, mc, tfe_solve_dyn(&dA, &dA, &W), "solve with a 3x5");
    tfe_dyn_release(&dA), hfree(&A);
    /* not square, finite */
    make_mat(&r, dt, 3, 5, &A, &nb);
    upload(&A, 0, &dA);
    sc = tfe_eigh_dyn(&A.v, &W, NULL);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    assert_int_equal(sc, TFE_ERR_SHAPE);
    same_status(sc, mc, tfe_eigh_dyn(&dA, &W, NULL), "eigh of a 3x5");
    tfe_dyn_release(&dA), hfree(&A);
    /* rank 1 */
    make_view(&r, dt, 1, (int64_t[]){4}, false, &A);
    upload(&A, 0, &dA);
    sc = tfe_qr_dyn(&A.v, false, &U, &V);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    assert_int_equal(sc, TFE_ERR_RANK);
    same_status(sc, mc, tfe_qr_dyn(&dA, false, &U, &V), "qr of a vector");
    tfe_dyn_release(&dA), hfree(&A);
    /* eigh of a square matrix with a NaN in the upper triangle (the CPU checks every element) */
    make_mat(&r, dt, 4, 4, &A, &nb);
    vset(&A.v, 4 * 3 + 1, NAN);
    upload(&A, 0, &dA);
    sc = tfe_eigh_dyn(&A.v, &W, &V);
    snprintf(mc, sizeof mc, "%s", tfe_last_error());
    same_status(sc, mc, tfe_eigh_dyn(&dA, &W, &V), "eigh of a NaN");
    if (cplx(dt)) { /* eig (session 17): the same check, code and message */
      sc = tfe_eig_dyn(&A.v, &W, &V);
      snprintf(mc, sizeof mc, "%s", tfe_last_error());
      same_status(sc, mc, tfe_eig_dyn(&dA, &W, &V), "eig of a NaN");
      hostop B;
      tfe_dyn dB;
      make_mat(&r, dt, 2, 3, &B, &nb);
      upload(&B, 0, &dB);
      sc = tfe_eig_dyn(&B.v, &W, &V);
      snprintf(mc, sizeof mc, "%s", tfe_last_error());
      assert_int_equal(sc, TFE_ERR_SHAPE);
      same_status(sc, mc, tfe_eig_dyn(&dB, &W, &V), "eig of a 2 x 3 matrix");
      tfe_dyn_release(&dB), hfree(&B);
    }
    /* not on the device */
    TU_EXPECT_ERR(tfe_inv_dyn(&dA, &W), TFE_ERR_UNSUPPORTED, "svd, qr, eigh, eig, cholesky, lu, solve (cuSOLVER) and trisolve (cuBLAS)");
    TU_EXPECT_ERR(tfe_det_dyn(&dA, &W), TFE_ERR_UNSUPPORTED, "not on the device");
    assert_null(W.st);
    tfe_dyn_release(&dA), hfree(&A);
  }
}

/* ---- the device pool, pinned staging, runtime streams, the plan cache (issue 16 / 15) ---------- */
#ifdef TU_GPU_EMULATED
void tu_gpu_emu_hold(int on);
int tu_gpu_emu_stream_waits(void);
#endif
static void dev_f64(tfe_dyn *d, int64_t n) {
  tfe_status st = tfe_gpu_alloc_dyn(d, 0, TFE_DT_F64, 1, &n, TFE_COLMAJOR);
  if (st != TFE_OK) fail_msg("alloc: %s", tfe_last_error());
}
/* Reuse of freed device blocks, "larger serves smaller", the cap, trim, statistics per memory
 * space; a block freed while queued work may read it is not reused before that work is done
 * (under emulation the device is held so that the work stays pending: the block's bytes are
 * checked untouched and the block is passed over; on a GPU the queue is synchronized first). */
static void test_pool(void **state) {
  (void)state;
  tfe_pool_stats s0, s1, sm;
  assert_int_equal(tfe_gpu_pool_trim(0), TFE_OK);
  assert_int_equal(tfe_gpu_pool_stats_reset(0), TFE_OK);
  assert_int_equal(tfe_gpu_pool_stats(0, &s0), TFE_OK);
  assert_int_equal(s0.kept_buffers, 0);
  assert_true(s0.limit > 0);
  tfe_dyn x, y;
  dev_f64(&x, 1024); /* 8192 bytes: a class of its own */
  void *px = x.data;
  tfe_dyn_release(&x);
  assert_int_equal(tfe_gpu_synchronize(0), TFE_OK);
  assert_int_equal(tfe_gpu_pool_stats(0, &s1), TFE_OK);
  assert_int_equal(s1.kept_buffers, 1);
  assert_true(s1.kept_bytes >= 8192);
  dev_f64(&y, 960); /* 7680 bytes: the class below 8192, served by the kept 8192 block */
  assert_ptr_equal(y.data, px);
  assert_int_equal(tfe_gpu_pool_stats(0, &s1), TFE_OK);
  assert_int_equal(s1.hits, 1);
  assert_int_equal(s1.larger, 1);
  assert_int_equal(s1.kept_buffers, 0);
  tfe_memspace g0 = {TFE_MEM_GPU, 0};
  assert_int_equal(tfe_memspace_pool_stats(g0, &sm), TFE_OK);
  assert_int_equal(sm.hits, s1.hits);
  assert_int_equal(sm.misses, s1.misses);
  tfe_dyn_release(&y);
  /* the cap: 0 keeps nothing */
  size_t lim = s1.limit;
  assert_int_equal(tfe_gpu_pool_set_limit(0, 0), TFE_OK);
  assert_int_equal(tfe_gpu_pool_stats(0, &s1), TFE_OK);
  assert_int_equal(s1.kept_buffers, 0);
  dev_f64(&x, 1024);
  tfe_dyn_release(&x);
  assert_int_equal(tfe_gpu_pool_stats(0, &s1), TFE_OK);
  assert_int_equal(s1.kept_buffers, 0);
  assert_int_equal(tfe_gpu_pool_set_limit(0, lim), TFE_OK);
  /* event-locked reuse */
  double pat[512];
  for (int i = 0; i < 512; i++) pat[i] = 1000 + i;
  tfe_dyn hv = {0};
  int64_t n512 = 512;
  assert_int_equal(tfe_layout_dense(1, &n512, TFE_COLMAJOR, &hv.lay), TFE_OK);
  hv.dtype = TFE_DT_F64, hv.data = pat;
#ifdef TU_GPU_EMULATED
  upload(&(hostop){hv, NULL, 0}, 0, &x);
  px = x.data;
  tu_gpu_emu_hold(1); /* from here, queued work stays pending */
  tfe_dyn_release(&x);
  assert_int_equal(tfe_gpu_pool_stats(0, &s0), TFE_OK);
  assert_int_equal(s0.locked_buffers, 1);
  dev_f64(&y, 512);
  assert_true(y.data != px);
  for (int i = 0; i < 512; i++) ((double *)y.data)[i] = -1; /* device memory is host memory here */
  for (int i = 0; i < 512; i++) assert_true(((double *)px)[i] == 1000 + i); /* not handed out, not written */
  assert_int_equal(tfe_gpu_pool_stats(0, &s1), TFE_OK);
  assert_true(s1.locked_skips > s0.locked_skips);
  tu_gpu_emu_hold(0); /* the work completed */
  dev_f64(&x, 512);
  assert_ptr_equal(x.data, px);
  tfe_dyn_release(&x), tfe_dyn_release(&y);
#else
  upload(&(hostop){hv, NULL, 0}, 0, &x);
  tfe_dyn_release(&x); /* no wait: the upload may still be running */
  dev_f64(&y, 512);
  double back[512];
  tfe_dyn bv = hv;
  bv.data = back;
  assert_int_equal(tfe_gpu_download(&y, &bv), TFE_OK);
  tfe_dyn_release(&y);
#endif
  /* pinned staging: uploads and downloads went through the pinned pool */
  assert_int_equal(tfe_gpu_pinned_stats(0, &s1), TFE_OK);
  assert_true(s1.hits + s1.misses >= 1);
  assert_int_equal(tfe_gpu_pool_trim(0), TFE_OK);
  assert_int_equal(tfe_gpu_synchronize(0), TFE_OK);
  assert_int_equal(tfe_gpu_pool_stats(0, &s1), TFE_OK);
  assert_int_equal(s1.kept_buffers, 0);
  assert_int_equal(s1.kept_bytes, 0);
}

/* host reference of one step, by the synchronous CPU API */
static tfe_dyn host_einsum(const char *expr, const tfe_dyn *a, const tfe_dyn *b) {
  tfe_dyn r;
  tfe_dyn ops[2] = {*a, *b};
  tfe_status st = tfe_einsum_dyn(&r, expr, 2, ops, NULL);
  if (st != TFE_OK) fail_msg("host einsum: %s", tfe_last_error());
  return r;
}
/* Runtime streams on the device: a random task graph over two CUDA streams and one CPU
 * stream (uploads and downloads by tfe_transfer_async_dyn, einsums on the device streams, an
 * einsum on the CPU stream over a downloaded result), every result against the synchronous
 * host computation; errors raised by a device task surface at tfe_wait, with their message,
 * also on a task of the other stream that depends on it. */
static void test_streams(void **state) {
  (void)state;
  tfe_stream *g[2] = {NULL, NULL}, *cpu = NULL;
  assert_int_equal(tfe_gpu_stream_new(0, &g[0]), TFE_OK);
  assert_int_equal(tfe_gpu_stream_new(0, &g[1]), TFE_OK);
  assert_non_null(tfe_stream_queue(g[0]));
  assert_int_equal(tfe_stream_new(0, &cpu), TFE_OK);
  assert_null(tfe_stream_queue(cpu));
  tfe_memspace g0 = {TFE_MEM_GPU, 0};
#ifdef TU_GPU_EMULATED
  int waits0 = tu_gpu_emu_stream_waits();
#endif
  enum { NT = 12, STEPS = 40 };
  const int64_t n = 6;
  tfe_dyn hostv[NT], devv[NT], tmp;
  tu_rng r = {2024};
  int have = 4;
  for (int k = 0; k < have; k++) {
    int64_t dims[2] = {n, n};
    assert_int_equal(tfe_dyn_empty(&hostv[k], TFE_DT_F64, 2, dims, TFE_COLMAJOR), TFE_OK);
    for (int i = 0; i < n * n; i++) ((double *)hostv[k].data)[i] = rnd(&r) / 2;
    tfe_status st = tfe_transfer_async_dyn(g[k % 2], &devv[k], &hostv[k], g0);
    if (st != TFE_OK) fail_msg("upload: %s", tfe_last_error());
    assert_true(devv[k].st->space.kind == TFE_MEM_GPU);
  }
  static const char *const ex[] = {"ij,jk->ik", "ij,jk->ki", "ij,kj->ik", "ji,jk->ik"};
  for (int step = 0; step < STEPS; step++) {
    int a = (int)tu_int(&r, 0, have - 1), b = (int)tu_int(&r, 0, have - 1), e = (int)tu_int(&r, 0, 3);
    bool fresh = have < NT;
    int slot = fresh ? have++ : (int)tu_int(&r, 0, NT - 1);
    tfe_dyn h = host_einsum(ex[e], &hostv[a], &hostv[b]), d;
    tfe_status st = tfe_einsum_async_dyn(g[step % 2], &d, ex[e], 2, (tfe_dyn[]){devv[a], devv[b]}, NULL);
    if (st != TFE_OK) fail_msg("einsum_async step %d: %s", step, tfe_last_error());
    assert_true(d.st->space.kind == TFE_MEM_GPU);
    if (!fresh) tfe_dyn_release(&hostv[slot]), tfe_dyn_release(&devv[slot]); /* the task holds its operands */
    hostv[slot] = h, devv[slot] = d;
    if (step % 5 == 4) { /* download on a device stream, a CPU-stream einsum over it, upload back */
      tfe_dyn hd, hr, back;
      st = tfe_transfer_async_dyn(g[(step + 1) % 2], &hd, &devv[slot], TFE_HOST);
      if (st != TFE_OK) fail_msg("download: %s", tfe_last_error());
      assert_true(hd.st->space.kind == TFE_MEM_HOST);
      st = tfe_einsum_async_dyn(cpu, &hr, "ij,jk->ik", 2, (tfe_dyn[]){hd, hostv[0]}, NULL);
      if (st != TFE_OK) fail_msg("cpu einsum: %s", tfe_last_error());
      st = tfe_transfer_async_dyn(g[step % 2], &back, &hr, g0);
      if (st != TFE_OK) fail_msg("upload back: %s", tfe_last_error());
      tfe_dyn href = host_einsum("ij,jk->ik", &hostv[slot], &hostv[0]);
      tfe_dyn_release(&hostv[slot]), tfe_dyn_release(&devv[slot]);
      hostv[slot] = href, devv[slot] = back;
      tfe_dyn_release(&hd), tfe_dyn_release(&hr);
    }
  }
  for (int k = 0; k < have; k++) {
    assert_int_equal(tfe_transfer_async_dyn(g[k % 2], &tmp, &devv[k], TFE_HOST), TFE_OK);
    if (tfe_wait(&tmp) != TFE_OK) fail_msg("wait: %s", tfe_last_error());
    assert_int_equal(tmp.lay.rank, 2);
    for (int i = 0; i < n * n; i++) {
      double want = 0, got = 0;
      assert_int_equal(tfe_dyn_get(&hostv[k], (int64_t[]){i % n, i / n}, &want), TFE_OK);
      assert_int_equal(tfe_dyn_get(&tmp, (int64_t[]){i % n, i / n}, &got), TFE_OK);
      if (fabs(got - want) > 1e-9 * (1 + fabs(want))) fail_msg("tensor %d element %d: %g, want %g", k, i, got, want);
    }
    tfe_dyn_release(&tmp);
  }
#ifdef TU_GPU_EMULATED
  assert_true(tu_gpu_emu_stream_waits() > waits0); /* cross-stream dependencies waited on the device */
#endif
  /* an operand in host memory is refused by a device stream, at once */
  assert_int_equal(tfe_einsum_async_dyn(g[0], &tmp, "ij,jk->ik", 2, (tfe_dyn[]){hostv[0], devv[0]}, NULL), TFE_ERR_DEVICE);
  /* a failure on the device stream surfaces at the wait, and in a dependent task of the other */
  tfe_dyn bad, bad2, bad3;
  int64_t d4 = 4;
  assert_int_equal(tfe_gpu_alloc_dyn(&bad, 0, TFE_DT_I32, 1, &d4, TFE_COLMAJOR), TFE_OK);
  assert_int_equal(tfe_einsum_async_dyn(g[0], &bad2, "i,i->i", 2, (tfe_dyn[]){bad, bad}, NULL), TFE_OK);
  assert_int_equal(tfe_einsum_async_dyn(g[1], &bad3, "i,i->i", 2, (tfe_dyn[]){bad2, bad2}, NULL), TFE_OK);
  assert_int_not_equal(tfe_wait(&bad3), TFE_OK);
  char m3[TFE_ERRMSG_MAX];
  snprintf(m3, sizeof m3, "%s", tfe_last_error());
  assert_int_not_equal(tfe_wait(&bad2), TFE_OK);
  assert_string_equal(m3, tfe_last_error());
  assert_true(m3[0] != 0);
  assert_int_not_equal(tfe_stream_sync(g[0]), TFE_OK);
  tfe_dyn_release(&bad), tfe_dyn_release(&bad2), tfe_dyn_release(&bad3);
  for (int k = 0; k < have; k++) tfe_dyn_release(&hostv[k]), tfe_dyn_release(&devv[k]);
  tfe_stream_free(g[0]), tfe_stream_free(g[1]), tfe_stream_free(cpu);
}

/* The plan cache: a repeated contraction reuses its analysis (hits), another layout misses,
 * and the results with the cache on equal those with it off. */
static void test_plan_cache(void **state) {
  (void)state;
  tu_rng r = {77};
  int64_t da[3] = {5, 4, 3}, db[3] = {4, 6, 3}, dc[3] = {5, 6, 3};
  int32_t la[3] = {'i', 'k', 'b'}, lb[3] = {'k', 'j', 'b'}, lc[3] = {'i', 'j', 'b'};
  for (size_t q = 0; q < sizeof kinds / sizeof *kinds; q++) {
    tfe_dtype dt = kinds[q];
    hostop A, B, C, C1, C2, C3;
    make_view(&r, dt, 3, da, false, &A), make_view(&r, dt, 3, db, false, &B), make_view(&r, dt, 3, dc, false, &C);
    copy_op(&C, &C1), copy_op(&C, &C2), copy_op(&C, &C3);
    tfe_dyn a, b, c;
    upload(&A, 0, &a), upload(&B, 0, &b);
    double one[2] = {1, 0}, half[2] = {0.5, 0};
    int64_t h0 = 0, m0 = 0, h1 = 0, m1 = 0;
    assert_int_equal(tfe_gpu_plan_cache_stats(0, &h0, &m0), TFE_OK);
    for (int rep = 0; rep < 3; rep++) {
      hostop *out = rep == 0 ? &C1 : rep == 1 ? &C2 : &C3;
      if (rep == 2) tfe_gpu_plan_cache_enable(false);
      upload(&C, 0, &c);
      if (tfe_contract_dyn(one, &a, la, &b, lb, half, &c, lc) != TFE_OK) fail_msg("contract: %s", tfe_last_error());
      assert_int_equal(tfe_gpu_download(&c, &out->v), TFE_OK);
      tfe_dyn_release(&c);
      tfe_gpu_plan_cache_enable(true);
    }
    assert_int_equal(tfe_gpu_plan_cache_stats(0, &h1, &m1), TFE_OK);
    assert_true(h1 - h0 >= 1); /* the second call */
    assert_true(m1 - m0 >= 1); /* the first */
    compare(dt, &C1, &C2, 0, "plan cache hit");
    compare(dt, &C1, &C3, 0, "plan cache off");
    tfe_dyn_release(&a), tfe_dyn_release(&b);
    hfree(&A), hfree(&B), hfree(&C), hfree(&C1), hfree(&C2), hfree(&C3);
  }
}

/* CUDA graphs of einsum plans (gpu/graph.h). A plan run again on the same device addresses is
 * captured at its second run and replayed after: every run equals the run with graphs off bit
 * for bit (and the CPU's to rounding); new data at the same addresses is what a replay reads;
 * another output address is another key (captured at its own second run); alpha/beta are part
 * of the key; a discarded capture (emulated: the driver refusing it) runs the steps instead,
 * and that key is not captured again. */
#ifdef TU_GPU_EMULATED
void tu_gpu_emu_capture_fail(int on);
#endif
static tfe_status run_plan(tfe_dtype dt, const tfe_einsum_plan *p, int n, const tfe_dyn *in, const tfe_dyn *out, double al) {
  const tfe_prims_backend *be = tfe_gpu_backend(0);
  tfe_view_f64 vf[8], of;
  tfe_view_c128 vz[8], oz;
  for (int k = 0; k < n; k++) {
    vf[k].data = (double *)in[k].data, vf[k].lay = in[k].lay, vf[k].conj = false;
    vz[k].data = (double complex *)in[k].data, vz[k].lay = in[k].lay, vz[k].conj = k == 1;
  }
  of.data = (double *)out->data, of.lay = out->lay, of.conj = false;
  oz.data = (double complex *)out->data, oz.lay = out->lay, oz.conj = false;
  if (dt == TFE_DT_F64) return tfe_einsum_execute_on_f64(be, p, al, vf, 0.0, &of);
  return tfe_einsum_execute_on_c128(be, p, al + 0.25 * I, vz, 0.0, &oz);
}
static int graph_prog_calls;
static tfe_einsum_progress_info graph_prog_last;
static int graph_prog(void *ctx, const tfe_einsum_progress_info *in) {
  (void)ctx;
  graph_prog_calls++, graph_prog_last = *in;
  return 0;
}
/* The device idle before a run whose replay is counted (a block still locked by queued work
 * makes the pool hand out another, and another address is another key: seen on the H100).
 * The emulated device runs work when it is queued: nothing to wait for there. */
static void graph_sync(void) {
#ifndef TU_GPU_EMULATED
  assert_int_equal(tfe_gpu_synchronize(0), TFE_OK);
#endif
}
static void graph_stats(int64_t *v) {
  assert_int_equal(tfe_gpu_graph_stats(0, &v[0], &v[1], &v[2]), TFE_OK);
}
static void test_graphs(void **state) {
  (void)state;
  bool have = strstr(tfe_gpu_status(), "CUDA graphs absent") == NULL;
  const char *expr = "abc,cde,efa,bg,gh->dfh";
  int64_t dims[5][3] = {{3, 4, 5}, {5, 6, 7}, {7, 8, 3}, {4, 9, 0}, {9, 5, 0}};
  int rank[5] = {3, 3, 3, 2, 2};
  int64_t dout[3] = {6, 8, 5};
  tu_rng r = {2026};
  const tfe_dtype dts[2] = {TFE_DT_F64, TFE_DT_C128};
  for (int q = 0; q < 2; q++) {
    tfe_dtype dt = dts[q];
    hostop H[5], O1, O2;
    tfe_dyn d[5], out, out2;
    const tfe_layout *lays[5];
    for (int k = 0; k < 5; k++) make_view(&r, dt, rank[k], dims[k], false, &H[k]), upload(&H[k], 0, &d[k]), lays[k] = &d[k].lay;
    make_view(&r, dt, 3, dout, false, &O1), make_view(&r, dt, 3, dout, false, &O2);
    assert_int_equal(tfe_gpu_alloc_dyn(&out, 0, dt, 3, dout, TFE_COLMAJOR), TFE_OK);
    assert_int_equal(tfe_gpu_alloc_dyn(&out2, 0, dt, 3, dout, TFE_ROWMAJOR), TFE_OK);
    tfe_einsum_plan *p = NULL;
    if (tfe_einsum_plan_new(&p, dt, expr, 5, lays, NULL) != TFE_OK) fail_msg("plan: %s", tfe_last_error());
    size_t es = tfe_dtype_get(dt)->size, nb = O1.bytes > O2.bytes ? O1.bytes : O2.bytes;
    char *ref = (char *)calloc(1, nb), *got = (char *)calloc(1, nb);
    assert_non_null(ref), assert_non_null(got);
    /* the reference: graphs off; against the CPU's einsum of the same operands */
    tfe_gpu_graphs_enable(false);
    memset(O1.buf, 0, O1.bytes), memset(O2.buf, 0, O2.bytes);
    if (run_plan(dt, p, 5, d, &out, 1.5) != TFE_OK) fail_msg("run: %s", tfe_last_error());
    assert_int_equal(tfe_gpu_download(&out, &O1.v), TFE_OK);
    tfe_gpu_graphs_enable(true);
    {
      tfe_dyn hin[5], cref;
      for (int k = 0; k < 5; k++) hin[k] = H[k].v;
      if (dt == TFE_DT_C128) hin[1].conj = true;
      assert_int_equal(tfe_einsum_dyn(&cref, expr, 5, hin, NULL), TFE_OK);
      double s = dt == TFE_DT_F64 ? 1.5 : 0;
      for (int64_t i = 0; i < 6 * 8 * 5; i++) {
        int64_t e[3] = {i % 6, i / 6 % 8, i / 48}, oh = O1.v.lay.offset, oc = cref.lay.offset;
        for (int a = 0; a < 3; a++) oh += e[a] * O1.v.lay.strides[a], oc += e[a] * cref.lay.strides[a];
        double hr, hi, cr, ci;
        get(dt, O1.buf + oh * (int64_t)es, &hr, &hi), get(dt, (char *)cref.data + oc * (int64_t)es, &cr, &ci);
        if (dt == TFE_DT_F64) cr *= s;
        else { double t = 1.5 * cr - 0.25 * ci; ci = 1.5 * ci + 0.25 * cr; cr = t; }
        if (fabs(hr - cr) + fabs(hi - ci) > 1e-10 * (1 + fabs(cr) + fabs(ci))) fail_msg("element %lld differs from the CPU", (long long)i);
      }
      tfe_dyn_release(&cref);
    }
    memcpy(ref, O1.buf, O1.bytes);
    int64_t s0[3], s1[3];
    graph_sync();
    graph_stats(s0);
    for (int rep = 0; rep < 4; rep++) { /* first run, capture, two replays */
      memset(O1.buf, 0, O1.bytes);
      if (run_plan(dt, p, 5, d, &out, 1.5) != TFE_OK) fail_msg("run %d: %s", rep, tfe_last_error());
      assert_int_equal(tfe_gpu_download(&out, &O1.v), TFE_OK);
      if (memcmp(O1.buf, ref, O1.bytes) != 0) fail_msg("run %d with graphs differs from the run without", rep);
    }
    graph_stats(s1);
    if (have) {
      assert_int_equal(s1[1] - s0[1], 1); /* captured once */
      assert_int_equal(s1[0] - s0[0], 2); /* replayed twice */
      assert_int_equal(s1[2] - s0[2], 0);
    }
    /* new data at the same addresses: the replay reads it */
    double half[2] = {0.5, -0.125};
    assert_int_equal(tfe_fill_dyn(&d[2], half), TFE_OK);
    /* the fill's own blocks back to the pool first: the run's arena must get the block of the
     * captured runs (another address is another key; seen on the H100 after the merge) */
    graph_sync();
    assert_int_equal(run_plan(dt, p, 5, d, &out, 1.5), TFE_OK);
    assert_int_equal(tfe_gpu_download(&out, &O1.v), TFE_OK);
    memcpy(got, O1.buf, O1.bytes);
    tfe_gpu_graphs_enable(false);
    assert_int_equal(run_plan(dt, p, 5, d, &out, 1.5), TFE_OK);
    assert_int_equal(tfe_gpu_download(&out, &O1.v), TFE_OK);
    tfe_gpu_graphs_enable(true);
    if (memcmp(O1.buf, got, O1.bytes) != 0 || memcmp(O1.buf, ref, O1.bytes) == 0) fail_msg("a replay after new data differs");
    graph_stats(s0);
    if (have) assert_int_equal(s0[0] - s1[0], 1);
    /* a progress callback: a replayed run is the start's report and one at its end */
    tfe_einsum_set_progress(graph_prog, NULL);
    graph_prog_calls = 0;
    assert_int_equal(run_plan(dt, p, 5, d, &out, 1.5), TFE_OK);
    tfe_einsum_set_progress(NULL, NULL);
    /* its arena block back before the next run: a block still locked by queued work makes the
     * pool hand out another, and another address is another key (seen on the H100) */
    assert_int_equal(tfe_gpu_synchronize(0), TFE_OK);
    graph_stats(s1);
    if (have) assert_int_equal(graph_prog_calls, 2), assert_int_equal(s1[0] - s0[0], 1);
    assert_true(graph_prog_calls >= 2);
    assert_int_equal(graph_prog_last.steps_done, graph_prog_last.steps_total);
    assert_true(graph_prog_last.madds_done == graph_prog_last.madds_total);
    graph_sync();
    graph_stats(s0);
    /* another alpha, another output: other keys, each captured at its second run */
    for (int rep = 0; rep < 3; rep++) {
      assert_int_equal(run_plan(dt, p, 5, d, &out2, 2.0), TFE_OK);
      assert_int_equal(tfe_gpu_download(&out2, &O2.v), TFE_OK);
      memcpy(rep ? got : ref, O2.buf, O2.bytes);
      if (rep && memcmp(got, ref, O2.bytes) != 0) fail_msg("run %d on the second output differs", rep);
    }
    graph_stats(s1);
    if (have) assert_int_equal(s1[1] - s0[1], 1), assert_int_equal(s1[0] - s0[0], 1);
#ifdef TU_GPU_EMULATED
    /* a capture the driver refuses: the steps run instead; that key is not captured again */
    tfe_gpu_graphs_enable(false);
    memset(O1.buf, 0, O1.bytes);
    assert_int_equal(run_plan(dt, p, 5, d, &out, 3.0), TFE_OK);
    assert_int_equal(tfe_gpu_download(&out, &O1.v), TFE_OK);
    memcpy(ref, O1.buf, O1.bytes);
    tfe_gpu_graphs_enable(true);
    graph_stats(s0);
    for (int rep = 0; rep < 4; rep++) {
      tu_gpu_emu_capture_fail(rep == 1);
      memset(O1.buf, 0, O1.bytes);
      assert_int_equal(run_plan(dt, p, 5, d, &out, 3.0), TFE_OK);
      assert_int_equal(tfe_gpu_download(&out, &O1.v), TFE_OK);
      if (memcmp(O1.buf, ref, O1.bytes) != 0) fail_msg("run %d after a refused capture differs", rep);
    }
    tu_gpu_emu_capture_fail(0);
    graph_stats(s1);
    assert_int_equal(s1[2] - s0[2], 1), assert_int_equal(s1[1] - s0[1], 0), assert_int_equal(s1[0] - s0[0], 0);
#endif
    tfe_einsum_plan_release(p); /* the device's entries keep it until they are replaced */
    for (int k = 0; k < 5; k++) tfe_dyn_release(&d[k]), hfree(&H[k]);
    tfe_dyn_release(&out), tfe_dyn_release(&out2), hfree(&O1), hfree(&O2);
    free(ref), free(got);
  }
}

#ifdef TU_GPU_EMULATED /* tests/test_gpu_emulated.c: the same suite on an emulated device */
void tu_gpu_emulate(void);
long tu_gpu_magic_check(long *checked);
/* The divisions by magic numbers of tfe_ew and tfe_perm2d (indices below 2^31) are exact. */
static void test_magic_div(void **state) {
  (void)state;
  long checked = 0, bad = tu_gpu_magic_check(&checked);
  assert_true(checked > 190000);
  assert_int_equal(bad, 0);
}
int tu_gpu_cache_roundtrip(const char *dir);
void tu_gpu_solver_absent(bool absent);
void tu_gpu_geev_absent(bool absent);
/* Without cuSOLVER the device's linalg answers TFE_ERR_UNSUPPORTED, nothing kept; then back. */
static void test_linalg_no_solver(void **state) {
  (void)state;
  tu_rng r = {1603};
  hostop A;
  int64_t nb;
  make_mat(&r, TFE_DT_F64, 4, 3, &A, &nb);
  tfe_dyn dA, U = {0}, S = {0}, V = {0};
  upload(&A, 0, &dA);
  tu_gpu_solver_absent(true);
  TU_EXPECT_ERR(tfe_svd_dyn(&dA, TFE_SVD_THIN, &U, &S, &V), TFE_ERR_UNSUPPORTED, "cuSOLVER is not loaded");
  TU_EXPECT_ERR(tfe_qr_dyn(&dA, false, &U, &S), TFE_ERR_UNSUPPORTED, "has no linalg");
  assert_null(U.st), assert_null(S.st), assert_null(V.st);
  hostop C;
  tfe_dyn dC;
  make_mat(&r, TFE_DT_C128, 3, 3, &C, &nb);
  upload(&C, 0, &dC);
  TU_EXPECT_ERR(tfe_eig_dyn(&dC, &U, &V), TFE_ERR_UNSUPPORTED, "cuSOLVER is not loaded");
  tu_gpu_solver_absent(false);
  tu_gpu_geev_absent(true); /* a cuSOLVER before 12.6: eig alone is refused */
  TU_EXPECT_ERR(tfe_eig_dyn(&dC, &U, &V), TFE_ERR_UNSUPPORTED, "lacks cusolverDnXgeev");
  assert_null(U.st), assert_null(V.st);
  tu_gpu_geev_absent(false);
  assert_int_equal(tfe_eig_dyn(&dC, &U, &V), TFE_OK);
  tfe_dyn_release(&U), tfe_dyn_release(&V), tfe_dyn_release(&dC), hfree(&C);
  assert_int_equal(tfe_qr_dyn(&dA, false, &U, &S), TFE_OK);
  tfe_dyn_release(&U), tfe_dyn_release(&S), tfe_dyn_release(&dA), hfree(&A);
}
static void test_kernel_cache(void **state) {
  (void)state;
  char dir[64], sub[96];
  snprintf(dir, sizeof dir, "/tmp/tfe_kcache_%ld", (long)getpid());
  snprintf(sub, sizeof sub, "%s/a/b", dir); /* folders are created */
  assert_int_equal(tu_gpu_cache_roundtrip(sub), 0);
  rmdir(sub), snprintf(sub, sizeof sub, "%s/a", dir), rmdir(sub), rmdir(dir);
  /* the XDG folder's own subfolder */
  snprintf(sub, sizeof sub, "%s/a/b/tenferro", dir), rmdir(sub);
  snprintf(sub, sizeof sub, "%s/a/b", dir), rmdir(sub), snprintf(sub, sizeof sub, "%s/a", dir), rmdir(sub), rmdir(dir);
}
#endif

/* ---- AD on device tensors --------------------------------------------------------------------
 * The same tape program recorded twice, on host leaves and on device leaves (ad_var_ref of
 * uploaded tensors): output values, forward-mode tangents and reverse-mode gradients of the
 * device tape (downloaded) against the host tape's, on random cases; plus central finite
 * differences of L = Re<W, f(x)> computed from the device's primal values. */
typedef struct ad_ctx {
  lcase lc;       /* einsum labels */
  int unop, binop;
  tfe_ad_op op;   /* linalg op */
  int naxes, axes[4]; /* reduce */
} ad_ctx;
static int ad_failures;
#ifdef TU_GPU_EMULATED
void tu_gpu_geev_absent(bool absent); /* cusolverDnXgeev hidden (a cuSOLVER before 12.6) or back */
int tu_gpu_emu_geev_calls(void);
static const bool ad_emulated = true;
#else
static void tu_gpu_geev_absent(bool absent) { (void)absent; }
static const bool ad_emulated = false;
#endif
/* Rules of device values that ran on the host (tfe__ts.ad_host_rules: primal, frule, rrule) since
 * *mark: reported when the kinds in `which` (bit 0 primal, 1 frule, 2 rrule) moved. */
static void ad_no_host(long *mark, int which, const char *kind, const char *what, int kc) {
  for (int w = 0; w < 3; w++) {
    long d = tfe__ts.ad_host_rules[w] - mark[w];
    if ((which >> w & 1) && d != 0) {
      printf("# AD %s %s case %d: %ld %s rule(s) of device values ran on the host\n", kind, what, kc, d,
             w == 0 ? "primal" : w == 1 ? "forward" : "reverse");
      ad_failures++;
    }
    mark[w] = tfe__ts.ad_host_rules[w];
  }
}
#define TU_AD_KIND(S, T, DT, CPX, TOL)                                                                                 \
  typedef tfe_status (*ad_prog_##S)(tfe_tape_##S *t, const int *leaf, int *out, int *nout, const ad_ctx *c);          \
  static void ad_rand_##S(tu_rng *r, tfe_tensor_##S *t, int rank, const int64_t *dims, double lo, double hi) {        \
    assert_int_equal(tfe_empty_##S(t, rank, dims, TFE_COLMAJOR), TFE_OK);                                             \
    int64_t n = tfe_layout_numel(&t->v.lay);                                                                           \
    for (int64_t i = 0; i < n; i++) put(DT, &t->v.data[i], lo + (hi - lo) * tu_unif(r), CPX ? rnd(r) : 0);           \
  }                                                                                                                    \
  static void ad_up_##S(int dev, const tfe_view_##S *h, tfe_tensor_##S *d) {                                          \
    tfe_dyn hd, dd;                                                                                                    \
    assert_int_equal(tfe_view_to_dyn_##S(h, &hd), TFE_OK);                                                             \
    if (tfe_gpu_upload(&dd, dev, &hd) != TFE_OK) fail_msg("upload: %s", tfe_last_error());                           \
    assert_int_equal(tfe_dyn_as_tensor_##S(&dd, d), TFE_OK);                                                           \
    tfe_dyn_release(&dd);                                                                                              \
  }                                                                                                                    \
  static void ad_down_##S(const tfe_tensor_##S *d, tfe_tensor_##S *h) {                                               \
    tfe_dyn dd, hd;                                                                                                    \
    assert_true(d->st && d->st->space.kind == TFE_MEM_GPU); /* the result stayed on the device */                     \
    assert_int_equal(tfe_empty_##S(h, d->v.lay.rank, d->v.lay.dims, TFE_COLMAJOR), TFE_OK);                           \
    assert_int_equal(tfe_tensor_to_dyn_##S(d, &dd), TFE_OK);                                                           \
    assert_int_equal(tfe_view_to_dyn_##S(&h->v, &hd), TFE_OK);                                                         \
    if (tfe_gpu_download(&dd, &hd) != TFE_OK) fail_msg("download: %s", tfe_last_error());                             \
    tfe_dyn_release(&dd);                                                                                              \
  }                                                                                                                    \
  /* max |dev - host| / max(1, max |host|), INFINITY when one is missing or shapes differ */                        \
  static double ad_diff_##S(const tfe_tensor_##S *dev, const tfe_view_##S *host) {                                   \
    if (!dev || !host) return dev || host ? INFINITY : 0;                                                              \
    if (dev->v.lay.rank != host->lay.rank) return INFINITY;                                                            \
    tfe_tensor_##S h = {0};                                                                                            \
    ad_down_##S(dev, &h);                                                                                              \
    int64_t n = tfe_layout_numel(&h.v.lay);                                                                            \
    double scale = 1, d = 0;                                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
      double a, ai, b, bi;                                                                                             \
      get(DT, &h.v.data[i], &a, &ai);                                                                                  \
      get(DT, &host->data[host->lay.offset + i], &b, &bi);                                                             \
      scale = fmax(scale, hypot(b, bi));                                                                               \
      d = fmax(d, isnan(a) != isnan(b) ? INFINITY : isnan(a) ? 0 : hypot(a - b, ai - bi));                            \
    }                                                                                                                  \
    tfe_tensor_release_##S(&h);                                                                                        \
    return d / scale;                                                                                                  \
  }                                                                                                                    \
  /* Records prog on a host tape and on a device tape; compares values, tangents, gradients. */                      \
  static void ad_check_##S(tu_rng *r, int dev, int nleaf, tfe_tensor_##S *leaves, ad_prog_##S prog,                   \
                           const ad_ctx *c, const char *what, int kc) {                                                \
    tfe_tape_##S th = {0}, tg = {0};                                                                                   \
    tfe_tensor_##S dl[2] = {{{0}, 0}, {{0}, 0}}, tan[2] = {{{0}, 0}, {{0}, 0}}, dtan[2] = {{{0}, 0}, {{0}, 0}};       \
    int lh[2], lg[2], oh[3], og[3], no = 0, no2 = 0;                                                                  \
    for (int k = 0; k < nleaf; k++) {                                                                                  \
      ad_rand_##S(r, &tan[k], leaves[k].v.lay.rank, leaves[k].v.lay.dims, -1, 1);                                      \
      assert_int_equal(tfe_ad_var_##S(&th, &leaves[k].v, &tan[k].v, &lh[k]), TFE_OK);                                  \
      ad_up_##S(dev, &leaves[k].v, &dl[k]);                                                                            \
      ad_up_##S(dev, &tan[k].v, &dtan[k]);                                                                             \
      if (tfe_ad_var_ref_##S(&tg, &dl[k], &dtan[k].v, &lg[k]) != TFE_OK) fail_msg("var_ref: %s", tfe_last_error());   \
    }                                                                                                                  \
    tfe_status sh = prog(&th, lh, oh, &no, c);                                                                         \
    char mh[TFE_ERRMSG_MAX];                                                                                           \
    memcpy(mh, tfe_last_error(), sizeof mh);                                                                           \
    tfe_status sg = prog(&tg, lg, og, &no2, c);                                                                        \
    if (sh != sg) {                                                                                                    \
      printf("# AD %s %s case %d: host %d (%s), device %d (%s)\n", #S, what, kc, sh, sh ? mh : "ok", sg,              \
             sg ? tfe_last_error() : "ok");                                                                            \
      ad_failures++;                                                                                                   \
    }                                                                                                                  \
    for (int j = 0; !sh && !sg && j < no; j++) {                                                                       \
      const tfe_view_##S *yh = tfe_ad_value_##S(&th, oh[j]);                                                           \
      tfe_tensor_##S W = {0}, dW = {0};                                                                                \
      ad_rand_##S(r, &W, yh->lay.rank, yh->lay.dims, -1, 1);                                                           \
      ad_up_##S(dev, &W.v, &dW);                                                                                       \
      double ev = ad_diff_##S(tfe_ad_value_tensor_##S(&tg, og[j]), yh);                                                \
      double et = ad_diff_##S(tfe_ad_tangent_tensor_##S(&tg, og[j]), tfe_ad_tangent_##S(&th, oh[j]));                \
      tfe_status bh = tfe_ad_backward_##S(&th, oh[j], &W.v), bg = tfe_ad_backward_##S(&tg, og[j], &dW.v);            \
      if (bh != TFE_OK || bg != TFE_OK || !(ev <= TOL) || !(et <= TOL)) {                                              \
        printf("# AD %s %s case %d output %d: value %.3g tangent %.3g backward %d/%d (%s)\n", #S, what, kc, j, ev,     \
               et, bh, bg, tfe_last_error());                                                                          \
        ad_failures++;                                                                                                 \
      }                                                                                                                \
      tfe_tensor_release_##S(&W), tfe_tensor_release_##S(&dW);                                                        \
    }                                                                                                                  \
    for (int k = 0; !sh && !sg && k < nleaf; k++) {                                                                   \
      double eg = ad_diff_##S(tfe_ad_grad_tensor_##S(&tg, lg[k]), tfe_ad_grad_##S(&th, lh[k]));                        \
      if (!(eg <= TOL)) {                                                                                              \
        printf("# AD %s %s case %d: gradient of leaf %d differs by %.3g\n", #S, what, kc, k, eg);                     \
        ad_failures++;                                                                                                 \
      }                                                                                                                \
    }                                                                                                                  \
    for (int k = 0; k < nleaf; k++)                                                                                    \
      tfe_tensor_release_##S(&dl[k]), tfe_tensor_release_##S(&tan[k]), tfe_tensor_release_##S(&dtan[k]);             \
    tfe_tape_free_##S(&th), tfe_tape_free_##S(&tg);                                                                    \
  }                                                                                                                    \
  /* Central finite differences of L = Re<W, f(x)> (f: output 0 of prog, all on the device) along a random   \
   * direction v, against Re<grad, v> of the device tape. */                                                         \
  static double ad_loss_##S(int dev, int nleaf, const tfe_tensor_##S *x, const tfe_tensor_##S *v, double h,            \
                            ad_prog_##S prog, const ad_ctx *c, const tfe_tensor_##S *W) {                              \
    tfe_tape_##S t = {0};                                                                                              \
    int l[2], o[3], no = 0;                                                                                            \
    tfe_tensor_##S xs[2] = {{{0}, 0}, {{0}, 0}}, d[2] = {{{0}, 0}, {{0}, 0}};                                           \
    for (int k = 0; k < nleaf; k++) {                                                                                  \
      assert_int_equal(tfe_empty_##S(&xs[k], x[k].v.lay.rank, x[k].v.lay.dims, TFE_COLMAJOR), TFE_OK);                 \
      for (int64_t i = 0; i < tfe_layout_numel(&x[k].v.lay); i++) xs[k].v.data[i] = x[k].v.data[i] + (T)h * v[k].v.data[i]; \
      ad_up_##S(dev, &xs[k].v, &d[k]);                                                                                 \
      assert_int_equal(tfe_ad_var_ref_##S(&t, &d[k], NULL, &l[k]), TFE_OK);                                            \
    }                                                                                                                  \
    if (prog(&t, l, o, &no, c) != TFE_OK) fail_msg("fd program: %s", tfe_last_error());                              \
    tfe_tensor_##S y = {0};                                                                                            \
    ad_down_##S(tfe_ad_value_tensor_##S(&t, o[0]), &y);                                                                \
    double L = 0;                                                                                                      \
    for (int64_t i = 0; i < tfe_layout_numel(&y.v.lay); i++) {                                                         \
      double a, ai, b, bi;                                                                                             \
      get(DT, &W->v.data[i], &a, &ai), get(DT, &y.v.data[i], &b, &bi);                                                 \
      L += a * b + ai * bi;                                                                                            \
    }                                                                                                                  \
    for (int k = 0; k < nleaf; k++) tfe_tensor_release_##S(&xs[k]), tfe_tensor_release_##S(&d[k]);                   \
    tfe_tensor_release_##S(&y);                                                                                        \
    tfe_tape_free_##S(&t);                                                                                             \
    return L;                                                                                                          \
  }                                                                                                                    \
  static void ad_fd_##S(tu_rng *r, int dev, int nleaf, tfe_tensor_##S *x, ad_prog_##S prog, const ad_ctx *c,          \
                        const char *what) {                                                                            \
    tfe_tensor_##S v[2] = {{{0}, 0}, {{0}, 0}}, d[2] = {{{0}, 0}, {{0}, 0}}, W = {0}, dW = {0};                        \
    tfe_tape_##S t = {0};                                                                                              \
    int l[2], o[3], no = 0;                                                                                            \
    for (int k = 0; k < nleaf; k++) {                                                                                  \
      ad_rand_##S(r, &v[k], x[k].v.lay.rank, x[k].v.lay.dims, -1, 1);                                                  \
      if (k == 0 && (c->op == TFE_AD_EIGH || c->op == TFE_AD_CHOLESKY)) { /* a Hermitian direction: one triangle read */ \
        int64_t m = x[0].v.lay.dims[0];                                                                                \
        for (int64_t q = 0; q < m; q++)                                                                                \
          for (int64_t p = 0; p <= q; p++) {                                                                           \
            T hv = (v[0].v.data[p + q * m] + TFE__AD_CONJ(v[0].v.data[q + p * m])) / 2;                                \
            if (p == q) hv = TFE__AD_REAL(hv);                                                                         \
            v[0].v.data[p + q * m] = hv, v[0].v.data[q + p * m] = TFE__AD_CONJ(hv);                                    \
          }                                                                                                            \
      }                                                                                                                \
      ad_up_##S(dev, &x[k].v, &d[k]);                                                                                  \
      assert_int_equal(tfe_ad_var_ref_##S(&t, &d[k], NULL, &l[k]), TFE_OK);                                            \
    }                                                                                                                  \
    if (prog(&t, l, o, &no, c) != TFE_OK) fail_msg("fd program: %s", tfe_last_error());                              \
    const tfe_view_##S *y = tfe_ad_value_##S(&t, o[0]);                                                                \
    ad_rand_##S(r, &W, y->lay.rank, y->lay.dims, -1, 1);                                                               \
    ad_up_##S(dev, &W.v, &dW);                                                                                         \
    if (tfe_ad_backward_##S(&t, o[0], &dW.v) != TFE_OK) fail_msg("fd backward: %s", tfe_last_error());               \
    double vjp = 0;                                                                                                    \
    for (int k = 0; k < nleaf; k++) {                                                                                  \
      tfe_tensor_##S g = {0};                                                                                          \
      ad_down_##S(tfe_ad_grad_tensor_##S(&t, l[k]), &g);                                                               \
      for (int64_t i = 0; i < tfe_layout_numel(&g.v.lay); i++) {                                                       \
        double a, ai, b, bi;                                                                                           \
        get(DT, &g.v.data[i], &a, &ai), get(DT, &v[k].v.data[i], &b, &bi);                                             \
        vjp += a * b + ai * bi;                                                                                        \
      }                                                                                                                \
      tfe_tensor_release_##S(&g);                                                                                      \
    }                                                                                                                  \
    double h = 1e-5, fd = (ad_loss_##S(dev, nleaf, x, v, h, prog, c, &W) - ad_loss_##S(dev, nleaf, x, v, -h, prog, c, &W)) / (2 * h); \
    if (!(fabs(fd - vjp) <= 1e-6 * fmax(1, fabs(fd)))) {                                                               \
      printf("# AD %s %s: finite difference %.12g, gradient %.12g\n", #S, what, fd, vjp);                              \
      ad_failures++;                                                                                                   \
    }                                                                                                                  \
    for (int k = 0; k < nleaf; k++) tfe_tensor_release_##S(&v[k]), tfe_tensor_release_##S(&d[k]);                   \
    tfe_tensor_release_##S(&W), tfe_tensor_release_##S(&dW);                                                           \
    tfe_tape_free_##S(&t);                                                                                             \
  }                                                                                                                    \
  static tfe_status ad_prog_einsum_##S(tfe_tape_##S *t, const int *l, int *o, int *no, const ad_ctx *c) {             \
    *no = 1;                                                                                                           \
    return tfe_ad_einsum_##S(t, l[0], c->lc.la, c->lc.rb >= 0 ? l[1] : -1, c->lc.lb, c->lc.rc, c->lc.lc, &o[0]);      \
  }                                                                                                                    \
  /* y = u(x0); z = y op x1; out 0: sum over axis 0 of permute(scale(z)); out 1: z */                                \
  static tfe_status ad_prog_ew_##S(tfe_tape_##S *t, const int *l, int *o, int *no, const ad_ctx *c) {                 \
    int y, s, p;                                                                                                       \
    *no = 2;                                                                                                           \
    TFE_TRY(tfe_ad_unary_##S(t, l[0], (tfe_unop)c->unop, (T)1.5, &y));                                                \
    TFE_TRY(tfe_ad_binary_##S(t, y, l[1], (tfe_binop)c->binop, &o[1]));                                                \
    TFE_TRY(tfe_ad_scale_##S(t, o[1], (T)0.75, &s));                                                                   \
    TFE_TRY(tfe_ad_permute_##S(t, s, (int[]){1, 0}, &p));                                                              \
    return tfe_ad_sum_##S(t, p, 1, (int[]){0}, &o[0]);                                                                 \
  }                                                                                                                    \
  /* gauge-invariant outputs of each decomposition */                                                                  \
  static tfe_status ad_prog_la_##S(tfe_tape_##S *t, const int *l, int *o, int *no, const ad_ctx *c) {                 \
    int f[3], sq, us;                                                                                                  \
    const int32_t ik[2] = {0, 1}, k1[1] = {1}, kj[2] = {1, 2}, ij[2] = {0, 2}, jk[2] = {2, 1};                         \
    switch (c->op) {                                                                                                   \
    case TFE_AD_SVD: case TFE_AD_SVD_TRUNC: /* S and U S^2 Vh; svd_trunc: rank 2, cutoffs, none (c->unop) */         \
      *no = 2;                                                                                                         \
      if (c->op == TFE_AD_SVD) TFE_TRY(tfe_ad_linalg_##S(t, TFE_AD_SVD, l[0], f));                                     \
      else {                                                                                                           \
        tfe_trunc tr = {c->unop == 0 ? 2 : 0, c->unop == 1 ? 0.3 : c->unop == 2 ? 0.5 : 0, c->unop == 1};             \
        TFE_TRY(tfe_ad_svd_trunc_##S(t, l[0], &tr, f));                                                                \
      }                                                                                                                \
      o[0] = f[1];                                                                                                     \
      TFE_TRY(tfe_ad_unary_##S(t, f[1], TFE_UN_SQUARE, 0, &sq));                                                       \
      TFE_TRY(tfe_ad_einsum_##S(t, f[0], ik, sq, k1, 2, ik, &us));                                                     \
      return tfe_ad_einsum_##S(t, us, ik, f[2], kj, 2, ij, &o[1]);                                                     \
    case TFE_AD_EIGH: { /* W and V W^2 V^H */                                                                          \
      int vc;                                                                                                          \
      *no = 2;                                                                                                         \
      TFE_TRY(tfe_ad_linalg_##S(t, TFE_AD_EIGH, l[0], f));                                                             \
      o[0] = f[0];                                                                                                     \
      TFE_TRY(tfe_ad_unary_##S(t, f[0], TFE_UN_SQUARE, 0, &sq));                                                       \
      TFE_TRY(tfe_ad_einsum_##S(t, f[1], ik, sq, k1, 2, ik, &us));                                                     \
      TFE_TRY(tfe_ad_unary_##S(t, f[1], TFE_UN_CONJ, 0, &vc));                                                         \
      return tfe_ad_einsum_##S(t, us, ik, vc, jk, 2, ij, &o[1]);                                                       \
    }                                                                                                                  \
    case TFE_AD_EIG: { /* V W^2 V^H and sum_i exp(w_i) per item: blind to the phases and the order of (w_i, v_i) */ \
      int vc, ew, b3 = tfe_ad_value_##S(t, l[0])->lay.rank > 2;                                                        \
      const int32_t vik[3] = {0, 1, 3}, wk[2] = {1, 3}, vjk[3] = {2, 1, 3}, oij[3] = {0, 2, 3};                        \
      *no = 2;                                                                                                         \
      TFE_TRY(tfe_ad_linalg_##S(t, TFE_AD_EIG, l[0], f));                                                              \
      TFE_TRY(tfe_ad_unary_##S(t, f[0], TFE_UN_SQUARE, 0, &sq));                                                       \
      TFE_TRY(tfe_ad_einsum_##S(t, f[1], vik, sq, wk, 2 + b3, vik, &us));                                              \
      TFE_TRY(tfe_ad_unary_##S(t, f[1], TFE_UN_CONJ, 0, &vc));                                                         \
      TFE_TRY(tfe_ad_einsum_##S(t, us, vik, vc, vjk, 2 + b3, oij, &o[0]));                                             \
      TFE_TRY(tfe_ad_unary_##S(t, f[0], TFE_UN_EXP, 0, &ew));                                                          \
      return tfe_ad_sum_##S(t, ew, 1, (int[]){0}, &o[1]);                                                              \
    }                                                                                                                  \
    case TFE_AD_SOLVE: *no = 1; return tfe_ad_solve_##S(t, l[0], l[1], &o[0]);                                        \
    case TFE_AD_LSTSQ: *no = 1; return tfe_ad_lstsq_##S(t, l[0], l[1], &o[0]);                                        \
    case TFE_AD_NORM: *no = 1; return tfe_ad_norm_##S(t, l[0], (tfe_norm_kind)c->unop, &o[0]);                       \
    case TFE_AD_REDUCE: *no = 1; return tfe_ad_reduce_##S(t, l[0], (tfe_redop)c->unop, c->naxes, c->axes, &o[0]);     \
    case TFE_AD_TRISOLVE: /* the triangle and the unit diagonal from the case (c->unop) */                             \
      *no = 1;                                                                                                         \
      return tfe_ad_trisolve_##S(t, l[0], l[1], c->unop & 1, c->unop >> 1 & 1, &o[0]);                                \
    default: /* qr, lu, cholesky, inv: every output (gauge fixed on both sides) */                                    \
      *no = tfe_ad_op_nout(c->op);                                                                                     \
      return tfe_ad_linalg_##S(t, c->op, l[0], o);                                                                     \
    }                                                                                                                  \
  }                                                                                                                    \
  /* The rules moved to the device in session 16 (dev_rules2_tpl.h): det, slogdet, slogdet_sign on     \
   * permuted well-conditioned matrices (pivoting with a random permutation, random signs), sizes 0 to  \
   * 5, batches of 2 and 3; every rule on the device; finite differences (f64, c128). */                 \
  static void ad_sq_perm_##S(tu_rng *r, T *a, int64_t m) {                                                            \
    int p[8];                                                                                                          \
    for (int q = 0; q < m; q++) p[q] = q;                                                                              \
    for (int q = (int)m - 1; q > 0; q--) { int j = (int)tu_int(r, 0, q), t = p[q]; p[q] = p[j]; p[j] = t; }            \
    for (int64_t q = 0; q < m; q++) a[p[q] + q * m] += (T)((m + 1) * (tu_int(r, 0, 1) ? 1 : -1));                      \
  }                                                                                                                    \
  /* reduce (every op; max / min real only): ranks 1 to 3, random axes or all; k 1: values in          \
   * {-1, 0, 1} (ties: the first winner; prod: blocks with no, one and several zeros) */                  \
  static void ad_reduce_cases_##S(int dev, tu_rng *r) {                                                                \
    ad_ctx c;                                                                                                          \
    memset(&c, 0, sizeof c);                                                                                           \
    c.op = TFE_AD_REDUCE;                                                                                              \
    for (int op = 0; op < (int)TFE_RED_COUNT_; op++)                                                                   \
      for (int k = 0; k < 3; k++) {                                                                                    \
        if (CPX && (op == TFE_RED_MAX || op == TFE_RED_MIN)) continue;                                                 \
        int rank = 1 + k;                                                                                              \
        int64_t dims[3];                                                                                               \
        for (int q = 0; q < rank; q++) dims[q] = tu_int(r, 1, 4);                                                      \
        c.unop = op, c.naxes = k == 2 ? -1 : 0;                                                                        \
        for (int q = 0; q < rank && k < 2; q++)                                                                        \
          if (tu_int(r, 0, 1) || (q == rank - 1 && c.naxes == 0)) c.axes[c.naxes++] = q;                               \
        tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                    \
        ad_rand_##S(r, &x[0], rank, dims, -1, 1);                                                                      \
        if (k == 1)                                                                                                    \
          for (int64_t q = 0; q < tfe_layout_numel(&x[0].v.lay); q++) put(DT, &x[0].v.data[q], (double)tu_int(r, -1, 1), 0); \
        char what[64];                                                                                                 \
        snprintf(what, sizeof what, "reduce %s", tfe_redop_name((tfe_redop)op));                                      \
        long mark[3] = {tfe__ts.ad_host_rules[0], tfe__ts.ad_host_rules[1], tfe__ts.ad_host_rules[2]};                 \
        ad_check_##S(r, dev, 1, x, ad_prog_la_##S, &c, what, k);                                                       \
        ad_no_host(mark, 7, #S, what, k);                                                                              \
        if (k != 1 && (DT == TFE_DT_F64 || DT == TFE_DT_C128)) ad_fd_##S(r, dev, 1, x, ad_prog_la_##S, &c, what);      \
        tfe_tensor_release_##S(&x[0]);                                                                                 \
      }                                                                                                                \
  }                                                                                                                    \
  /* LU of any shape (session 17: P built on the device from the i64 perm): tall, wide, square, batches  \
   * of 3 (tall) and 2 (wide), a side of size 0 or 1; one large entry per column at a random           \
   * permutation's rows (nontrivial pivoting); every rule on the device; finite differences. */        \
  static void ad_lu_cases_##S(int dev, tu_rng *r) {                                                                    \
    ad_ctx c;                                                                                                          \
    memset(&c, 0, sizeof c);                                                                                           \
    c.op = TFE_AD_LU;                                                                                                  \
    for (int k = 0; k < 8; k++) { /* 0, 1, 5: tall; 2, 3, 6: wide; 4: square; 7: a side of 0 or 1 */                \
      int64_t m, nn, nbt = k == 5 ? 3 : k == 6 ? 2 : 1;                                                                \
      if (k < 2 || k == 5) m = tu_int(r, 2, 6), nn = tu_int(r, 1, m - 1);                                              \
      else if (k < 4 || k == 6) nn = tu_int(r, 2, 6), m = tu_int(r, 1, nn - 1);                                        \
      else if (k == 4) m = nn = tu_int(r, 2, 6);                                                                       \
      else if (tu_int(r, 0, 1)) m = tu_int(r, 0, 1), nn = tu_int(r, 0, 4);                                             \
      else nn = tu_int(r, 0, 1), m = tu_int(r, 0, 4);                                                                  \
      int64_t dims[3] = {m, nn, nbt}, kk = m < nn ? m : nn;                                                            \
      tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                      \
      ad_rand_##S(r, &x[0], nbt > 1 ? 3 : 2, dims, -1, 1);                                                             \
      for (int64_t bi = 0; bi < nbt; bi++) {                                                                           \
        T *a = x[0].v.data + bi * m * nn;                                                                              \
        int p[8];                                                                                                      \
        for (int q = 0; q < m; q++) p[q] = q;                                                                          \
        for (int q = (int)m - 1; q > 0; q--) { int j = (int)tu_int(r, 0, q), t = p[q]; p[q] = p[j]; p[j] = t; }        \
        for (int64_t q = 0; q < kk; q++) a[p[q] + q * m] += (T)((m + 1) * (tu_int(r, 0, 1) ? 1 : -1));                  \
      }                                                                                                                \
      long mark[3] = {tfe__ts.ad_host_rules[0], tfe__ts.ad_host_rules[1], tfe__ts.ad_host_rules[2]};                   \
      char what[48];                                                                                                   \
      snprintf(what, sizeof what, "lu %lldx%lld", (long long)m, (long long)nn);                                        \
      ad_check_##S(r, dev, 1, x, ad_prog_la_##S, &c, what, k);                                                         \
      ad_no_host(mark, 7, #S, what, k);                                                                                \
      if (k < 5 && (DT == TFE_DT_F64 || DT == TFE_DT_C128)) ad_fd_##S(r, dev, 1, x, ad_prog_la_##S, &c, what);        \
      tfe_tensor_release_##S(&x[0]);                                                                                   \
    }                                                                                                                  \
  }                                                                                                                    \
  /* eig (session 17: cuSOLVER's geev, device rules): single matrices n 1 to 5, n 0, batches of 2 and 3; \
   * real kinds: the tape's refusal, the same on both; every rule on the device; finite differences     \
   * (c128); emulated: without cusolverDnXgeev only the primal runs on the host (once), and a device    \
   * eig reached the geev slot. */                                                                     \
  static void ad_eig_cases_##S(int dev, tu_rng *r) {                                                                   \
    ad_ctx c;                                                                                                          \
    memset(&c, 0, sizeof c);                                                                                           \
    c.op = TFE_AD_EIG;                                                                                                 \
    for (int k = 0; k < (CPX ? 7 : 1); k++) { /* 0-2: one matrix; 3: n 0; 4, 5: batches of 2, 3; 6: no geev */       \
      int64_t n = k == 3 ? 0 : tu_int(r, 1, 5), nbt = k == 4 || k == 5 ? k - 2 : 1, dims[3] = {n, n, nbt};             \
      if (k == 6 && !ad_emulated) break;                                                                              \
      tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                      \
      ad_rand_##S(r, &x[0], nbt > 1 ? 3 : 2, dims, -1, 1);                                                             \
      char what[48];                                                                                                   \
      snprintf(what, sizeof what, "eig n %lld batch %lld%s", (long long)n, (long long)nbt, k == 6 ? " (no geev)" : ""); \
      if (k == 6) tu_gpu_geev_absent(true);                                                                            \
      long mark[3] = {tfe__ts.ad_host_rules[0], tfe__ts.ad_host_rules[1], tfe__ts.ad_host_rules[2]};                   \
      ad_check_##S(r, dev, 1, x, ad_prog_la_##S, &c, what, k);                                                         \
      if (k == 6) {                                                                                                    \
        tu_gpu_geev_absent(false);                                                                                     \
        if (tfe__ts.ad_host_rules[0] - mark[0] != 1) {                                                                 \
          printf("# AD %s %s: %ld primal(s) on the host, expected 1\n", #S, what, tfe__ts.ad_host_rules[0] - mark[0]); \
          ad_failures++;                                                                                               \
        }                                                                                                              \
        mark[0] = tfe__ts.ad_host_rules[0];                                                                            \
      }                                                                                                                \
      ad_no_host(mark, 7, #S, what, k);                                                                                \
      if (k < 3 && DT == TFE_DT_C128) ad_fd_##S(r, dev, 1, x, ad_prog_la_##S, &c, what);                              \
      tfe_tensor_release_##S(&x[0]);                                                                                   \
    }                                                                                                                  \
  }                                                                                                                    \
  static void ad_cases2_##S(int dev, tu_rng *r) {                                                                      \
    ad_ctx c;                                                                                                          \
    memset(&c, 0, sizeof c);                                                                                           \
    ad_reduce_cases_##S(dev, r);                                                                                       \
    ad_eig_cases_##S(dev, r);                                                                                          \
    ad_lu_cases_##S(dev, r);                                                                                           \
    const tfe_ad_op ops[] = {TFE_AD_DET, TFE_AD_SLOGDET, TFE_AD_SLOGDET_SIGN, TFE_AD_LQ, TFE_AD_PINV, TFE_AD_POLAR,    \
                             TFE_AD_NORM, TFE_AD_NORM, TFE_AD_NORM, TFE_AD_NORM, TFE_AD_NORM, TFE_AD_LSTSQ,             \
                             TFE_AD_SVD_TRUNC, TFE_AD_EXPM};                                                           \
    const tfe_norm_kind nk[5] = {TFE_NORM_FRO, TFE_NORM_NUC, TFE_NORM_2, TFE_NORM_1, TFE_NORM_INF};                   \
    const char *const nn_[5] = {" fro", " nuc", " 2", " 1", " inf"};                                                   \
    for (int i = 0; i < (int)(sizeof ops / sizeof *ops); i++)                                                          \
      for (int k = 0; k < 5; k++) { /* k 0, 1: one matrix; 2: a size 0 or 1; 3, 4: batches of 2 and 3 */             \
        c.op = ops[i], c.unop = c.op == TFE_AD_SVD_TRUNC ? k % 4 : (int)nk[c.op == TFE_AD_NORM ? i - 6 : 0];             \
        bool sq = i < 3 || c.op == TFE_AD_EXPM, two = c.op == TFE_AD_LSTSQ;                                            \
        int64_t m = tu_int(r, 1, 5), nn = sq ? m : tu_int(r, 1, 5), nbt = k >= 3 && c.op != TFE_AD_SVD_TRUNC ? k - 1 : 1; \
        if (k == 2) m = tu_int(r, 0, 1), nn = sq ? m : tu_int(r, 0, 2);                                                \
        if ((c.op == TFE_AD_POLAR || two) && m < nn) { int64_t q = m; m = nn, nn = q; } /* tall: full column rank */  \
        int64_t dims[3] = {m, nn, nbt}, db[3] = {m, 2, nbt}, dv[2] = {m, nbt};                                        \
        tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                    \
        ad_rand_##S(r, &x[0], nbt > 1 ? 3 : 2, dims, -1, 1);                                                           \
        if (sq)                                                                                                        \
          for (int64_t bi = 0; bi < nbt; bi++) ad_sq_perm_##S(r, x[0].v.data + bi * m * m, m);                         \
        if (c.op == TFE_AD_EXPM && nbt > 1) /* items with different squaring counts */                                \
          for (int64_t q = 0; q < m * m; q++) x[0].v.data[q] *= (T)0.05;                                               \
        if (two && k % 2) ad_rand_##S(r, &x[1], nbt > 1 ? 2 : 1, dv, -1, 1); /* a vector batch */                      \
        else if (two) ad_rand_##S(r, &x[1], nbt > 1 ? 3 : 2, db, -1, 1);                                               \
        char what[64];                                                                                                 \
        snprintf(what, sizeof what, "%s%s", tfe_ad_op_name(c.op), c.op != TFE_AD_NORM ? "" : nn_[c.unop]);           \
        if (c.op == TFE_AD_NORM && c.unop >= TFE_NORM_1 && k == 1 && m > 1 && nn > 1) { /* a tie: the first wins */   \
          bool rw = c.unop == TFE_NORM_INF;                                                                            \
          for (int64_t q = 0; q < (rw ? nn : m); q++) {                                                                \
            T *a0 = &x[0].v.data[rw ? q * m : q], *a1 = &x[0].v.data[rw ? m - 1 + q * m : q + (nn - 1) * m];           \
            *a0 = *a0 * (T)2 + (T)(creal(*a0) < 0 ? -1 : 1); /* the largest row or column, copied with signs flipped */ \
            *a1 = -*a0;                                                                                                \
          }                                                                                                            \
        }                                                                                                              \
        long mark[3] = {tfe__ts.ad_host_rules[0], tfe__ts.ad_host_rules[1], tfe__ts.ad_host_rules[2]};                 \
        ad_check_##S(r, dev, two ? 2 : 1, x, ad_prog_la_##S, &c, what, k);                                             \
        ad_no_host(mark, 7, #S, what, k);                                                                              \
        bool tie = c.op == TFE_AD_NORM && c.unop >= TFE_NORM_1 && k == 1; /* not differentiable there */             \
        if (k < 2 && !tie && m > 0 && nn > 0 && (DT == TFE_DT_F64 || DT == TFE_DT_C128)) ad_fd_##S(r, dev, two ? 2 : 1, x, ad_prog_la_##S, &c, what); \
        tfe_tensor_release_##S(&x[0]), tfe_tensor_release_##S(&x[1]);                                                  \
      }                                                                                                                \
  }                                                                                                                    \
  static void ad_cases_##S(int dev) {                                                                                  \
    tu_rng r = {0xAD0000 + (uint64_t)DT};                                                                              \
    int n = cases() / 4 < 4 ? 4 : cases() / 4 > 30 ? 30 : cases() / 4; /* einsum cases: 4 to 30 */               \
    ad_ctx c;                                                                                                          \
    memset(&c, 0, sizeof c);                                                                                           \
    for (int i = 0; i < n; i++) { /* einsum: random labels (traces, diagonals, one-input labels, size 0) */           \
      bool bin = tu_int(&r, 0, 3) != 0;                                                                                \
      make_labels(&r, bin, &c.lc);                                                                                     \
      if (!bin) c.lc.rb = -1;                                                                                          \
      tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                      \
      ad_rand_##S(&r, &x[0], c.lc.ra, c.lc.da, -1, 1);                                                                 \
      if (bin) ad_rand_##S(&r, &x[1], c.lc.rb, c.lc.db, -1, 1);                                                        \
      ad_check_##S(&r, dev, bin ? 2 : 1, x, ad_prog_einsum_##S, &c, "einsum", i);                                      \
      tfe_tensor_release_##S(&x[0]), tfe_tensor_release_##S(&x[1]);                                                    \
    }                                                                                                                  \
    int64_t d34[2] = {3, 4};                                                                                           \
    for (int u = 0; u < (int)TFE_UN_COUNT_; u++) /* every unary op, with each binary op in turn */                   \
      for (int b = 0; b < (CPX ? 4 : 6); b++) {                                                                        \
        if ((u + b) % 2) continue; /* half the pairs: each op still meets several partners */                          \
        tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                    \
        ad_rand_##S(&r, &x[0], 2, d34, 0.3, 1.3);                                                                      \
        ad_rand_##S(&r, &x[1], 2, d34, 0.3, 1.3);                                                                      \
        if (u == TFE_UN_ABS) put(DT, &x[0].v.data[5], 0, 0); /* |x|' at 0 */                                          \
        c.unop = u, c.binop = b;                                                                                       \
        long mark[3] = {tfe__ts.ad_host_rules[0], tfe__ts.ad_host_rules[1], tfe__ts.ad_host_rules[2]};                 \
        ad_check_##S(&r, dev, 2, x, ad_prog_ew_##S, &c, tfe_unop_name((tfe_unop)u), b);                                \
        ad_no_host(mark, 7, #S, tfe_unop_name((tfe_unop)u), b); /* unary, binary (max, min too), views: all device */ \
        if (u != TFE_UN_ABS && b < 4 && (DT == TFE_DT_F64 || DT == TFE_DT_C128)) ad_fd_##S(&r, dev, 2, x, ad_prog_ew_##S, &c, tfe_unop_name((tfe_unop)u)); \
        tfe_tensor_release_##S(&x[0]), tfe_tensor_release_##S(&x[1]);                                                  \
      }                                                                                                                \
    const tfe_ad_op las[] = {TFE_AD_SVD, TFE_AD_QR, TFE_AD_EIGH, TFE_AD_CHOLESKY, TFE_AD_LU, TFE_AD_SOLVE, TFE_AD_INV,  \
                             TFE_AD_TRISOLVE};                                                                        \
    for (int i = 0; i < (int)(sizeof las / sizeof *las); i++)                                                          \
      for (int k = 0; k < 4; k++) {                                                                                    \
        int64_t m = tu_int(&r, 1, 6), nn = tu_int(&r, 1, 6);                                                           \
        c.op = las[i];                                                                                                 \
        bool sq = c.op != TFE_AD_SVD && c.op != TFE_AD_QR, two = c.op == TFE_AD_SOLVE || c.op == TFE_AD_TRISOLVE;     \
        c.unop = k; /* trisolve: bit 0 lower, bit 1 unit diagonal */                                                  \
        if (sq) nn = m;                                                                                                \
        if (c.op == TFE_AD_QR && m < nn) nn = m; /* the device's qr rule: tall (m >= n) */                            \
        /* case 3: a batch of 3 (qr, cholesky, lu: the programs without 2-d einsums) */                               \
        int64_t nbt = k == 3 && (c.op == TFE_AD_QR || c.op == TFE_AD_CHOLESKY || c.op == TFE_AD_LU) ? 3 : 1;         \
        if (c.op == TFE_AD_TRISOLVE && k >= 2) nbt = 2;                                                               \
        if (k == 3 && nbt == 1) continue;                                                                              \
        int64_t dims[3] = {m, nn, nbt}, db[3] = {m, 2, nbt}, dv[2] = {m, nbt};                                          \
        tfe_tensor_##S x[2] = {{{0}, 0}, {{0}, 0}};                                                                    \
        ad_rand_##S(&r, &x[0], nbt > 1 ? 3 : 2, dims, -1, 1);                                                          \
        for (int64_t bi = 0; bi < nbt; bi++) {                                                                         \
          T *xa = x[0].v.data + bi * m * nn;                                                                           \
          if (c.op == TFE_AD_EIGH || c.op == TFE_AD_CHOLESKY) { /* Hermitian (positive definite: + m I) */            \
            for (int64_t q = 0; q < m; q++)                                                                            \
              for (int64_t p = 0; p <= q; p++) {                                                                       \
                T h = (xa[p + q * m] + TFE__AD_CONJ(xa[q + p * m])) / 2;                                               \
                if (p == q) h = TFE__AD_REAL(h) + (c.op == TFE_AD_CHOLESKY ? (T)m + 1 : 0);                           \
                xa[p + q * m] = h, xa[q + p * m] = TFE__AD_CONJ(h);                                                    \
              }                                                                                                        \
          }                                                                                                            \
          if (c.op == TFE_AD_SOLVE || c.op == TFE_AD_INV || c.op == TFE_AD_LU || c.op == TFE_AD_TRISOLVE)               \
            for (int64_t q = 0; q < m; q++) xa[q + q * m] += (T)(m + 1); /* well conditioned */                       \
        }                                                                                                              \
        if (c.op == TFE_AD_SOLVE) ad_rand_##S(&r, &x[1], 2, db, -1, 1);                                                \
        if (c.op == TFE_AD_TRISOLVE) { /* B a matrix batch, or (k 1, 3) a vector batch */                           \
          if (k % 2) ad_rand_##S(&r, &x[1], nbt > 1 ? 2 : 1, dv, -1, 1);                                             \
          else ad_rand_##S(&r, &x[1], nbt > 1 ? 3 : 2, db, -1, 1);                                                    \
          if (k == 1 && m > 1) put(DT, &x[0].v.data[m + 1], 0, 0); /* lower, non-unit, (1, 1) zero: singular */       \
        }                                                                                                              \
        long mark[3] = {tfe__ts.ad_host_rules[0], tfe__ts.ad_host_rules[1], tfe__ts.ad_host_rules[2]};                 \
        ad_check_##S(&r, dev, two ? 2 : 1, x, ad_prog_la_##S, &c, tfe_ad_op_name(c.op), k);                           \
        /* every rule on the device (lu: square here, any shape in ad_lu_cases_) */          \
        ad_no_host(mark, 7, #S, tfe_ad_op_name(c.op), k);                                                              \
        if (k == 0 && (DT == TFE_DT_F64 || DT == TFE_DT_C128)) ad_fd_##S(&r, dev, two ? 2 : 1, x, ad_prog_la_##S, &c, tfe_ad_op_name(c.op)); \
        tfe_tensor_release_##S(&x[0]), tfe_tensor_release_##S(&x[1]);                                                  \
      }                                                                                                                \
    ad_cases2_##S(dev, &r);                                                                                           \
  }
#define TFE__AD_CONJ(z) (z)
#define TFE__AD_REAL(z) (z)
TU_AD_KIND(f64, double, TFE_DT_F64, 0, 1e-9)
TU_AD_KIND(f32, float, TFE_DT_F32, 0, 2e-3)
#undef TFE__AD_CONJ
#undef TFE__AD_REAL
#define TFE__AD_CONJ(z) conj(z)
#define TFE__AD_REAL(z) creal(z)
TU_AD_KIND(c128, double complex, TFE_DT_C128, 1, 1e-9)
#undef TFE__AD_CONJ
#undef TFE__AD_REAL
#define TFE__AD_CONJ(z) conjf(z)
#define TFE__AD_REAL(z) crealf(z)
TU_AD_KIND(c64, float complex, TFE_DT_C64, 1, 2e-3)
#undef TFE__AD_CONJ
#undef TFE__AD_REAL
#ifdef TU_GPU_EMULATED
int tu_gpu_emu_trsm_calls(void);
#endif
/* The device forms of session 16's rules refuse what the host refuses, with the same code: a
 * vector (rank 1) to every matrix op, a non-square matrix to det / slogdet / expm, an unknown
 * norm kind; the message names the problem (non-empty) and no output is recorded. */
static void ad_bad_inputs(int dev) {
  static const tfe_ad_op ops[] = {TFE_AD_DET, TFE_AD_SLOGDET, TFE_AD_SLOGDET_SIGN, TFE_AD_EXPM, TFE_AD_LQ,
                                  TFE_AD_PINV, TFE_AD_POLAR, TFE_AD_NORM, TFE_AD_SVD_TRUNC};
  int64_t shapes[3][2] = {{4, 1}, {2, 3}, {2, 2}};
  for (int sh = 0; sh < 3; sh++)
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
      bool square = ops[k] == TFE_AD_DET || ops[k] == TFE_AD_SLOGDET || ops[k] == TFE_AD_SLOGDET_SIGN || ops[k] == TFE_AD_EXPM;
      if (sh == 1 && !square) continue;        /* 2 x 3 is valid for the others */
      if (sh == 2 && ops[k] != TFE_AD_NORM) continue; /* 2 x 2: only the bad norm kind */
      tfe_ad_params p;
      memset(&p, 0, sizeof p);
      p.norm = sh == 2 ? 99 : TFE_NORM_FRO;
      p.trunc.max_rank = 1;
      tfe_tensor_f64 h = {0}, d = {0};
      assert_int_equal(tfe_ones_f64(&h, sh == 0 ? 1 : 2, sh == 0 ? shapes[0] : shapes[sh], TFE_COLMAJOR), TFE_OK);
      ad_up_f64(dev, &h.v, &d);
      tfe_status code[2];
      for (int side = 0; side < 2; side++) {
        tfe_tape_f64 t = {0};
        int a = -1, out[3] = {-1, -1, -1};
        assert_int_equal(side ? tfe_ad_var_ref_f64(&t, &d, NULL, &a) : tfe_ad_var_f64(&t, &h.v, NULL, &a), TFE_OK);
        tfe_clear_error();
        code[side] = tfe_ad_op_f64(&t, ops[k], &p, 1, &a, out);
        assert_int_not_equal(code[side], TFE_OK);
        assert_true(strlen(tfe_last_error()) > 0);
        assert_int_equal(t.nvars, 1); /* nothing recorded */
        tfe_tape_free_f64(&t);
      }
      if (code[0] != code[1])
        fail_msg("%s, shape %d: host %d, device %d", tfe_ad_op_name(ops[k]), sh, (int)code[0], (int)code[1]);
      tfe_tensor_release_f64(&h), tfe_tensor_release_f64(&d);
    }
}
static void test_ad_device(void **state) {
  (void)state;
  ad_failures = 0;
  for (int dev = 0; dev < dev_count; dev++) {
    ad_cases_f64(dev), ad_cases_c128(dev), ad_cases_f32(dev), ad_cases_c64(dev);
    /* a tape mixing host and device values is refused (transfers are explicit) */
    tfe_tape_f64 t = {0};
    tfe_tensor_f64 h = {0}, d = {0};
    int64_t d2[2] = {2, 2};
    int a = -1, b = -1, c = -1;
    assert_int_equal(tfe_zeros_f64(&h, 2, d2, TFE_COLMAJOR), TFE_OK);
    ad_up_f64(dev, &h.v, &d);
    assert_int_equal(tfe_ad_var_f64(&t, &h.v, NULL, &a), TFE_OK);
    assert_int_equal(tfe_ad_var_ref_f64(&t, &d, NULL, &b), TFE_OK);
    assert_int_equal(tfe_ad_binary_f64(&t, a, b, TFE_BIN_ADD, &c), TFE_ERR_DEVICE);
    ad_bad_inputs(dev);
    /* the tensor accessors: a bad id or no tape is NULL with an error; no gradient yet is NULL alone */
    const int bad[3] = {-1, 2, 1 << 30};
    for (int i = 0; i < 3; i++) {
      tfe_clear_error();
      assert_null(tfe_ad_value_tensor_f64(&t, bad[i]));
      assert_int_equal(tfe_last_status(), TFE_ERR_BOUNDS);
      tfe_clear_error();
      assert_null(tfe_ad_grad_tensor_f64(&t, bad[i]));
      assert_int_equal(tfe_last_status(), TFE_ERR_BOUNDS);
      tfe_clear_error();
      assert_null(tfe_ad_tangent_tensor_f64(&t, bad[i]));
      assert_int_equal(tfe_last_status(), TFE_ERR_BOUNDS);
      assert_non_null(strstr(tfe_last_error(), "does not exist"));
    }
    tfe_clear_error();
    assert_null(tfe_ad_value_tensor_c64(NULL, 0));
    assert_int_equal(tfe_last_status(), TFE_ERR_NULL);
    tfe_clear_error();
    assert_non_null(tfe_ad_value_tensor_f64(&t, b));
    assert_null(tfe_ad_grad_tensor_f64(&t, b)); /* no backward yet */
    assert_null(tfe_ad_tangent_tensor_f64(&t, b));
    assert_int_equal(tfe_last_status(), TFE_OK);
    tfe_tape_free_f64(&t), tfe_tensor_release_f64(&h), tfe_tensor_release_f64(&d);
  }
  if (ad_failures) fail_msg("%d AD comparisons on device tensors failed (listed above)", ad_failures);
#ifdef TU_GPU_EMULATED
  assert_true(tu_gpu_emu_trsm_calls() > 0); /* the rules' triangular solves reached the trsm slot */
  assert_true(tu_gpu_emu_geev_calls() > 0); /* the device's eig reached the geev slot */
#endif
}

int main(void) {
#ifdef TU_GPU_EMULATED
  (void)tfe_backend_find("cpu"); /* this unit sets the registry up first (gpu.h says why) */
  tu_gpu_emulate();
#endif
  tfe_status st = tfe_gpu_init();
  const char *req = getenv("TFE_GPU_REQUIRED");
  if (st != TFE_OK) {
    printf("test_gpu_conformance: skipped, %s\n", tfe_last_error());
    return req && *req == '1' ? 1 : 0;
  }
  dev_count = tfe_gpu_device_count();
  printf("# %s\n", tfe_gpu_status());
  const char *only = getenv("TFE_GPU_TEST_FILTER"); /* e.g. "test_tropical*", test_permute_large (memcheck runs) */
  if (only && *only) cmocka_set_test_filter(only);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prims_execute), cmocka_unit_test(test_gemm_shapes), cmocka_unit_test(test_einsum_into), cmocka_unit_test(test_einsum_chain), cmocka_unit_test(test_einsum_zip_chain),
      cmocka_unit_test(test_permute_large),
      cmocka_unit_test(test_binary_random), cmocka_unit_test(test_unary_random),
      cmocka_unit_test(test_elementwise_random), cmocka_unit_test(test_zipn_errors), cmocka_unit_test(test_elementwise_cuts),
      cmocka_unit_test(test_tropical_contract), cmocka_unit_test(test_tropical_matmul_argmax),
      cmocka_unit_test(test_tropical_random), cmocka_unit_test(test_tropical_gemm_paths),
      cmocka_unit_test(test_tropical_einsum), cmocka_unit_test(test_tropical_elementwise),
      cmocka_unit_test(test_linalg_random), cmocka_unit_test(test_linalg_errors),
      cmocka_unit_test(test_pool), cmocka_unit_test(test_streams), cmocka_unit_test(test_plan_cache),
      cmocka_unit_test(test_ad_device), cmocka_unit_test(test_graphs),
#ifdef TU_GPU_EMULATED
      cmocka_unit_test(test_kernel_cache), cmocka_unit_test(test_linalg_no_solver), cmocka_unit_test(test_magic_div),
#endif
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  tfe_gpu_shutdown(); /* every device resource back (compute-sanitizer's leak check) */
  return failed;
}
