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
  /* C diagonal; a unary case with repeats on both sides is no primitive: the engine runs it on
   * the host (not on device memory), so it is left out here */
  if (c->rc > 0 && tu_int(r, 0, 8) == 0 && (binary || !trace)) c->lc[c->rc] = c->lc[tu_int(r, 0, c->rc - 1)], c->rc++;
  shuffle(r, c->la, c->ra), shuffle(r, c->lb, c->rb), shuffle(r, c->lc, c->rc);
  for (int i = 0; i < c->ra; i++) c->da[i] = dim[c->la[i]];
  for (int i = 0; i < c->rb; i++) c->db[i] = dim[c->lb[i]];
  for (int i = 0; i < c->rc; i++) c->dc[i] = dim[c->lc[i]];
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
                                       "ibj,jbk->kbi", "ijk,kjl->il", "jk,kj->"};
  tu_rng r = {42};
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
        int64_t d = 37 + (l - 'a') * 5;
        if (part == 0) c.la[c.ra] = l, c.da[c.ra++] = d;
        else if (part == 1) c.lb[c.rb] = l, c.db[c.rb++] = d;
        else c.lc[c.rc] = l, c.dc[c.rc++] = d;
      }
      hostop A, B, C, C1, C2;
      make_view(&r, dt, c.ra, c.da, false, &A), make_view(&r, dt, c.rb, c.db, false, &B), make_view(&r, dt, c.rc, c.dc, false, &C);
      double alpha[2] = {1.5, 0.25}, beta[2] = {0.5, -1};
      copy_op(&C, &C1), copy_op(&C, &C2);
      assert_int_equal(tfe_contract_dyn(alpha, &A.v, c.la, &B.v, c.lb, beta, &C1.v, c.lc), TFE_OK);
      tfe_dyn dA, dB, dC;
      upload(&A, 0, &dA), upload(&B, 0, &dB), upload(&C, 0, &dC);
      if (tfe_contract_dyn(alpha, &dA, c.la, &dB, c.lb, beta, &dC, c.lc) != TFE_OK) fail_msg("%s: %s", e, tfe_last_error());
      assert_int_equal(tfe_gpu_download(&dC, &C2.v), TFE_OK);
      compare(dt, &C1, &C2, (int)s, e);
      tfe_dyn_release(&dA), tfe_dyn_release(&dB), tfe_dyn_release(&dC);
      hfree(&A), hfree(&B), hfree(&C), hfree(&C1), hfree(&C2);
    }
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
      hostop A, C, C1, C2;
      make_view(&r, dt, rank, da, true, &A), make_view(&r, dt, rank, dc, false, &C);
      A.v.conj = cplx(dt) && tu_int(&r, 0, 1);
      C.v.conj = cplx(dt) && tu_int(&r, 0, 3) == 0;
      double alpha[2], beta[2];
      put(dt, alpha, i % 3 ? rnd(&r) : 1, rnd(&r));
      put(dt, beta, i % 2 ? rnd(&r) : 0, i % 2 ? rnd(&r) : 0);
      copy_op(&C, &C1), copy_op(&C, &C2);
      assert_int_equal(tfe_contract_dyn(alpha, &A.v, la, NULL, NULL, beta, &C1.v, lc), TFE_OK);
      tfe_dyn dA, dC;
      upload(&A, 0, &dA), upload(&C, 0, &dC);
      if (tfe_contract_dyn(alpha, &dA, la, NULL, NULL, beta, &dC, lc) != TFE_OK) fail_msg("%s", tfe_last_error());
      assert_int_equal(tfe_gpu_download(&dC, &C2.v), TFE_OK);
      compare(dt, &C1, &C2, i, "permute_large");
      tfe_dyn_release(&dA), tfe_dyn_release(&dC);
      hfree(&A), hfree(&C), hfree(&C1), hfree(&C2);
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

#ifdef TU_GPU_EMULATED /* tests/test_gpu_emulated.c: the same suite on an emulated device */
void tu_gpu_emulate(void);
#endif

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
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prims_execute), cmocka_unit_test(test_gemm_shapes), cmocka_unit_test(test_einsum_into), cmocka_unit_test(test_einsum_chain),
      cmocka_unit_test(test_permute_large),
      cmocka_unit_test(test_binary_random), cmocka_unit_test(test_unary_random),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  tfe_gpu_shutdown(); /* every device resource back (compute-sanitizer's leak check) */
  return failed;
}
