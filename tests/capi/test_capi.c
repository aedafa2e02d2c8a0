/* tests/capi/test_capi.c — a client of the stable C ABI (make test-capi): it includes
 * tenferro/capi.h only (no other tenferro header, so no TFE_MAX_RANK or kind list) and links
 * libtenferro_c.so. Plain asserts, no cmocka: it is meant to look like a foreign client. */
#include <tenferro/capi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                  \
  do {                                                                            \
    if (!(c)) {                                                                   \
      fprintf(stderr, "%s:%d: %s failed (%s)\n", __FILE__, __LINE__, #c, tfe_capi_last_error()); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

/* DLPack's DLManagedTensorVersioned, declared here from the spec: it is an ABI. */
typedef struct { uint32_t major, minor; } dl_version;
typedef struct { int32_t type, id; } dl_device;
typedef struct { uint8_t code, bits; uint16_t lanes; } dl_dtype;
typedef struct { void *data; dl_device device; int32_t ndim; dl_dtype dtype; int64_t *shape, *strides; uint64_t byte_offset; } dl_tensor;
typedef struct dl_mtv { dl_version version; void *ctx; void (*deleter)(struct dl_mtv *); uint64_t flags; dl_tensor t; } dl_mtv;
static int dl_deleted;
static void dl_delete(dl_mtv *m) { (void)m; dl_deleted++; }

static int released;
static void on_release(void *ctx) { released += *(int *)ctx; }

int main(void) {
  CHECK(tfe_capi_version() == TFE_CAPI_VERSION);
  /* borrow row-major a (2x3) and b (3x2), einsum into a new column-major handle */
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  int64_t da[2] = {2, 3}, db[2] = {3, 2};
  int one = 1;
  tfe_handle *ops[2], *c = NULL;
  CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, da, NULL, TFE_CAPI_ROWMAJOR, a, on_release, &one, &ops[0]) == 0);
  CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, db, NULL, TFE_CAPI_ROWMAJOR, b, on_release, &one, &ops[1]) == 0);
  CHECK(tfe_handle_einsum("ij,jk->ik", 2, ops, TFE_CAPI_COLMAJOR, &c) == 0);
  int64_t dc[2], sc[2];
  CHECK(tfe_handle_rank(c) == 2 && tfe_handle_dtype(c) == TFE_CAPI_F64);
  CHECK(tfe_handle_shape(c, dc, sc) == 0 && dc[0] == 2 && dc[1] == 2 && sc[0] == 1 && sc[1] == 2);
  const double *pc = (const double *)tfe_handle_data(c);
  CHECK(pc[0] == 4 && pc[1] == 10 && pc[2] == 5 && pc[3] == 11); /* [[1+3, 2+3], [4+6, 5+6]] */

  /* options and the path query: a chain of three, sliced under a small memory limit */
  tfe_handle *r2 = NULL;
  int pairs[8], nsteps = 0;
  double cost[4];
  tfe_handle *chain[3] = {ops[0], ops[1], ops[0]};
  CHECK(tfe_handle_einsum_path("ij,jk,kl->il", 3, chain, "algo=dp", pairs, 4, &nsteps, cost) == 0);
  CHECK(nsteps == 2 && cost[0] > 0 && cost[2] == 1);
  CHECK(tfe_handle_einsum_ex("ij,jk,kl->il", 3, chain, "algo=greedy, memory_limit=8 order=col cache=0", &r2) == 0);
  CHECK(((const double *)tfe_handle_data(r2))[0] == 4 * 1 + 5 * 4); /* (ab)a: [[4,5],[10,11]] [[1,2,3],[4,5,6]] */
  tfe_handle_release(r2);
  CHECK(tfe_handle_einsum_ex("ij,jk->ik", 2, ops, "algo=magic", &r2) != 0 && strstr(tfe_capi_last_error(), "algo=magic"));
  CHECK(tfe_handle_einsum_ex("ij,jk->ik", 2, ops, "memory_limit", &r2) != 0 && strstr(tfe_capi_last_error(), "key=value"));
  /* a given path (the second pair of operands first), in both formats, and the other planner fields */
  CHECK(tfe_handle_einsum_path("ij,jk,kl->il", 3, chain, "path=1:2;0:1", pairs, 4, &nsteps, cost) == 0);
  CHECK(nsteps == 2 && pairs[0] == 1 && pairs[1] == 2 && pairs[2] == 0 && pairs[3] == 1);
  CHECK(tfe_handle_einsum_path("ij,jk,kl->il", 3, chain, "path=1:2;0:3 path_format=ssa", pairs, 4, &nsteps, cost) == 0);
  CHECK(nsteps == 2 && pairs[0] == 1 && pairs[1] == 2);
  CHECK(tfe_handle_einsum_ex("ij,jk,kl->il", 3, chain, "path=1:2;0:1 order=col", &r2) == 0);
  CHECK(((const double *)tfe_handle_data(r2))[0] == 4 * 1 + 5 * 4); /* a (b a): the same value */
  tfe_handle_release(r2);
  CHECK(tfe_handle_einsum_ex("ij,jk,kl->il", 3, chain, "greedy_alpha=0.5 greedy_temp=0.1 dp_max=4 write_weight=1", &r2) == 0);
  tfe_handle_release(r2);
  CHECK(tfe_handle_einsum_ex("ij,jk,kl->il", 3, chain, "path=1:2", &r2) != 0);
  printf("test_capi: a path of one step for three operands: %s\n", tfe_capi_last_error());
  CHECK(tfe_handle_einsum_ex("ij,jk,kl->il", 3, chain, "path=1-2", &r2) != 0 && strstr(tfe_capi_last_error(), "path=A:B"));
  CHECK(tfe_handle_einsum_ex("ij,jk,kl->il", 3, chain, "algo=given", &r2) != 0);

  /* integer labels over three operands: a(i,j) b(j,k) a(k',l)... here (a b)(i,k) a(k,l) */
  const int32_t l0[2] = {100, 200}, l1[2] = {200, 300}, l2[2] = {300, 400}, lout[2] = {100, 400};
  const int32_t *labs[3] = {l0, l1, l2};
  CHECK(tfe_handle_einsum_labels(3, chain, labs, lout, 2, "order=col", &r2) == 0);
  CHECK(((const double *)tfe_handle_data(r2))[0] == 4 * 1 + 5 * 4);
  tfe_handle_release(r2);
  CHECK(tfe_handle_einsum_labels(3, chain, labs, NULL, 0, NULL, &r2) == 0 && tfe_handle_rank(r2) == 2);
  tfe_handle_release(r2);

  /* a transposed view of a through explicit strides, copied */
  tfe_handle *at = NULL;
  int64_t dt[2] = {3, 2}, st[2] = {1, 3};
  CHECK(tfe_handle_copy(TFE_CAPI_F64, 2, dt, st, TFE_CAPI_ROWMAJOR, a, &at) == 0);
  CHECK(((const double *)tfe_handle_data(at))[1] == 4);

  /* DLPack out and back in: the same memory, the last release frees it */
  void *m = NULL;
  tfe_handle *back = NULL;
  CHECK(tfe_handle_to_dlpack(c, 1, &m) == 0);
  CHECK(tfe_handle_from_dlpack(m, 1, 0, &back) == 0);
  CHECK(tfe_handle_data(back) == tfe_handle_data(c));
  tfe_handle_release(c);
  CHECK(((const double *)tfe_handle_data(back))[3] == 11);
  tfe_handle_release(back);

  /* integer labels in the max-plus semiring: c(i) = max_j a(i,j) + v(j) */
  double v[3] = {10, 0, -10}, w[2] = {0, 0};
  int64_t dv[1] = {3}, dw[1] = {2};
  tfe_handle *mp_a, *mp_v, *mp_w;
  CHECK(tfe_handle_borrow(TFE_CAPI_MAXPLUS_F64, 2, da, NULL, TFE_CAPI_ROWMAJOR, a, NULL, NULL, &mp_a) == 0);
  CHECK(tfe_handle_borrow(TFE_CAPI_MAXPLUS_F64, 1, dv, NULL, TFE_CAPI_ROWMAJOR, v, NULL, NULL, &mp_v) == 0);
  CHECK(tfe_handle_borrow(TFE_CAPI_MAXPLUS_F64, 1, dw, NULL, TFE_CAPI_ROWMAJOR, w, NULL, NULL, &mp_w) == 0);
  int32_t li[2] = {7, 42}, lj[1] = {42}, lo[1] = {7};
  CHECK(tfe_handle_contract(mp_a, li, mp_v, lj, mp_w, lo) == 0);
  CHECK(w[0] == 11 && w[1] == 14);
  tfe_handle_release(mp_a);
  tfe_handle_release(mp_v);
  tfe_handle_release(mp_w);

  /* CUDA memory comes in as a GPU storage (never dereferenced); the CPU build has no backend for
   * it, so einsum refuses it with a message instead of touching device memory */
  int64_t shape4[1] = {4};
  dl_mtv cuda = {{1, 0}, NULL, dl_delete, 0, {(void *)(uintptr_t)0x7f0000001000u, {2, 0}, 1, {2, 64, 1}, shape4, NULL, 0}};
  tfe_handle *hg = NULL, *rg = NULL;
  CHECK(tfe_handle_from_dlpack(&cuda, 1, 0, &hg) == 0);
  CHECK(tfe_handle_einsum("i->", 1, &hg, 0, &rg) != 0);
  printf("test_capi: einsum on CUDA memory without a GPU backend: %s\n", tfe_capi_last_error());
  tfe_handle_release(hg);
  CHECK(dl_deleted == 1);

  /* plans: einsum with a transposed operand, planned once, run on two sets of data */
  {
    int ranks[2] = {2, 2};
    int64_t d0[2] = {2, 3}, s0[2] = {1, 2} /* column-major 2x3 */, d1[2] = {3, 2}, s1[2] = {2, 1};
    const int64_t *dims[2] = {d0, d1}, *strides[2] = {s0, s1};
    tfe_capi_plan *p = NULL;
    CHECK(tfe_capi_plan_new(TFE_CAPI_F64, "ij,jk->ik", 2, ranks, dims, strides, NULL, &p) == 0);
    int64_t od[2];
    double cost[4];
    CHECK(tfe_capi_plan_out_shape(p, od, cost) == 2 && od[0] == 2 && od[1] == 2 && cost[0] > 0);
    for (int rep = 0; rep < 2; rep++) {
      double x[6], y[6], z[4];
      for (int i = 0; i < 6; i++) { x[i] = i + rep; y[i] = 1.0 / (i + 1); }
      const void *data[2] = {x, y};
      CHECK(tfe_capi_plan_run(p, data, z) == 0);
      for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
          double r = 0;
          for (int j = 0; j < 3; j++) r += x[i + 2 * j] * y[2 * j + k];
          CHECK(fabs(z[2 * i + k] - r) < 1e-12); /* row-major result */
        }
    }
    tfe_capi_plan_release(p);
    CHECK(tfe_capi_plan_new(TFE_CAPI_F64, "ij,jk->ik", 2, ranks, dims, strides, "algo=nope", &p) != 0);
    int64_t bad3[2] = {4, 2};
    const int64_t *dims_bad[2] = {d0, bad3};
    CHECK(tfe_capi_plan_new(TFE_CAPI_F64, "ij,jk->ik", 2, ranks, dims_bad, NULL, NULL, &p) != 0);
    printf("test_capi: plan with mismatched dims refused: %s\n", tfe_capi_last_error());
  }

  /* linear algebra: svd reconstructs, solve solves, det, cholesky, lu's permutation */
  {
    double m[9] = {4, 1, 2, 1, 3, 0, 2, 0, 5}; /* symmetric positive definite */
    double rhs[3] = {1, 2, 3};
    int64_t d33[2] = {3, 3}, d31[2] = {3, 1};
    tfe_handle *hm, *hb, *y[3];
    int nout;
    CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, d33, NULL, TFE_CAPI_ROWMAJOR, m, NULL, NULL, &hm) == 0);
    CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, d31, NULL, TFE_CAPI_ROWMAJOR, rhs, NULL, NULL, &hb) == 0);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_SVD, NULL, 1, &hm, &nout, y) == 0 && nout == 3);
    tfe_handle *usv[3] = {y[0], y[1], y[2]}, *rec;
    CHECK(tfe_handle_einsum("ik,k,kj->ij", 3, usv, TFE_CAPI_ROWMAJOR, &rec) == 0);
    for (int i = 0; i < 9; i++) CHECK(fabs(((double *)tfe_handle_data(rec))[i] - m[i]) < 1e-12);
    tfe_handle_release(rec);
    for (int i = 0; i < 3; i++) tfe_handle_release(y[i]);
    tfe_handle *ab[2] = {hm, hb};
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_SOLVE, NULL, 2, ab, &nout, y) == 0 && nout == 1);
    const double *xs = (const double *)tfe_handle_data(y[0]);
    for (int i = 0; i < 3; i++) CHECK(fabs(m[3 * i] * xs[0] + m[3 * i + 1] * xs[1] + m[3 * i + 2] * xs[2] - rhs[i]) < 1e-12);
    tfe_handle_release(y[0]);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_DET, NULL, 1, &hm, &nout, y) == 0 && nout == 1 && tfe_handle_rank(y[0]) == 0);
    CHECK(fabs(*(double *)tfe_handle_data(y[0]) - 43.0) < 1e-12);
    tfe_handle_release(y[0]);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_CHOLESKY, NULL, 1, &hm, &nout, y) == 0 && nout == 1);
    tfe_handle_release(y[0]);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_LU, NULL, 1, &hm, &nout, y) == 0 && nout == 3 && tfe_handle_dtype(y[0]) == TFE_CAPI_I64);
    for (int i = 0; i < 3; i++) tfe_handle_release(y[i]);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_SOLVE, NULL, 1, &hm, &nout, y) != 0 && nout == 0);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_EINSUM, NULL, 1, &hm, &nout, y) != 0);

    /* rules: C = A B; rrule gives dA = dC B^T, dB = A^T dC; frule gives dC = dA B + A dB */
    double bb[6] = {1, 2, 3, 4, 5, 6}, dc[6] = {1, 0, 0, 1, 2, -1};
    int64_t d32[2] = {3, 2};
    tfe_handle *hB, *hdc, *prim[1], *cot[2], *tan[1];
    CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, d32, NULL, TFE_CAPI_ROWMAJOR, bb, NULL, NULL, &hB) == 0);
    CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, d32, NULL, TFE_CAPI_ROWMAJOR, dc, NULL, NULL, &hdc) == 0);
    tfe_handle *x2[2] = {hm, hB};
    for (int form = 0; form < 2; form++) {
      const char *e = form ? "0 1,1 2->0 2" : "ij,jk->ik";
      CHECK(tfe_handle_primal(TFE_CAPI_OP_EINSUM, e, 2, x2, prim) == 0);
      CHECK(tfe_handle_rrule(TFE_CAPI_OP_EINSUM, e, 2, x2, prim, &hdc, cot) == 0);
      int64_t sA[2], sB[2];
      CHECK(tfe_handle_shape(cot[0], NULL, sA) == 0 && tfe_handle_shape(cot[1], NULL, sB) == 0);
      const double *gA = (const double *)tfe_handle_data(cot[0]), *gB = (const double *)tfe_handle_data(cot[1]);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          double r = dc[2 * i] * bb[2 * j] + dc[2 * i + 1] * bb[2 * j + 1];
          CHECK(fabs(gA[i * sA[0] + j * sA[1]] - r) < 1e-12);
        }
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 2; k++) {
          double r = m[j] * dc[k] + m[3 + j] * dc[2 + k] + m[6 + j] * dc[4 + k];
          CHECK(fabs(gB[j * sB[0] + k * sB[1]] - r) < 1e-12);
        }
      tfe_handle *dx[2] = {NULL, hdc}; /* dA = 0, dB = dc: dC = A dc */
      CHECK(tfe_handle_frule(TFE_CAPI_OP_EINSUM, e, 2, x2, dx, prim, tan) == 0);
      int64_t sT[2];
      CHECK(tfe_handle_shape(tan[0], NULL, sT) == 0);
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
          double r = m[3 * i] * dc[k] + m[3 * i + 1] * dc[2 + k] + m[3 * i + 2] * dc[4 + k];
          CHECK(fabs(((const double *)tfe_handle_data(tan[0]))[i * sT[0] + k * sT[1]] - r) < 1e-12);
        }
      tfe_handle_release(prim[0]); tfe_handle_release(cot[0]); tfe_handle_release(cot[1]); tfe_handle_release(tan[0]);
    }
    CHECK(tfe_handle_primal(TFE_CAPI_OP_EINSUM, "ij,jk", 2, x2, prim) != 0 && strstr(tfe_capi_last_error(), "->"));
    /* a linalg rule: d det(A) = det(A) tr(A^-1 dA); rrule of det with cotangent 1 is det(A) A^-T */
    double one1 = 1;
    int64_t d0s[1] = {0};
    tfe_handle *hone, *pd[1], *gd[1];
    CHECK(tfe_handle_borrow(TFE_CAPI_F64, 0, d0s, NULL, TFE_CAPI_ROWMAJOR, &one1, NULL, NULL, &hone) == 0);
    CHECK(tfe_handle_primal(TFE_CAPI_OP_DET, NULL, 1, &hm, pd) == 0);
    CHECK(tfe_handle_rrule(TFE_CAPI_OP_DET, NULL, 1, &hm, pd, &hone, gd) == 0);
    CHECK(tfe_handle_linalg(TFE_CAPI_OP_INV, NULL, 1, &hm, &nout, y) == 0);
    int64_t sg[2], si[2];
    CHECK(tfe_handle_shape(gd[0], NULL, sg) == 0 && tfe_handle_shape(y[0], NULL, si) == 0);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        CHECK(fabs(((double *)tfe_handle_data(gd[0]))[i * sg[0] + j * sg[1]] -
                   43.0 * ((double *)tfe_handle_data(y[0]))[j * si[0] + i * si[1]]) < 1e-10);
    tfe_handle_release(y[0]); tfe_handle_release(pd[0]); tfe_handle_release(gd[0]); tfe_handle_release(hone);
    int nin2, nout2;
    CHECK(tfe_capi_op_arity(TFE_CAPI_OP_SVD, &nin2, &nout2) == 0 && nin2 == 1 && nout2 == 3);
    CHECK(tfe_capi_op_arity(999, &nin2, &nout2) != 0);
    tfe_handle_release(hB); tfe_handle_release(hdc); tfe_handle_release(hm); tfe_handle_release(hb);
  }

  /* devices: cpu:0 is there; loading a GPU backend on a machine without one is an error, not a crash */
  {
    int ids[8], n = tfe_capi_device_list(ids, 8), kind = -1, index = -1;
    int64_t mem = -1;
    char name[32];
    CHECK(n >= 1);
    CHECK(tfe_capi_device_info(ids[0], &kind, &index, &mem, name, sizeof name) == 0);
    CHECK(kind == TFE_CAPI_DEV_CPU && !strcmp(name, "cpu:0"));
    CHECK(tfe_capi_device_info(-5, NULL, NULL, NULL, NULL, 0) != 0);
    int st = tfe_capi_backend_load("auto", NULL);
    printf("test_capi: backend_load(auto) -> %d (%s); status: %s; %d device(s)\n", st, st ? tfe_capi_last_error() : "ok",
           tfe_capi_backend_status(), tfe_capi_device_list(NULL, 0));
    CHECK(st == 0 ? tfe_capi_device_list(NULL, 0) > n : strlen(tfe_capi_last_error()) > 0);
    n = tfe_capi_device_list(ids, 8);
    for (int i = 0; i < n && i < 8; i++) {
      CHECK(tfe_capi_device_info(ids[i], &kind, &index, &mem, name, sizeof name) == 0);
      printf("test_capi: device %d: %s kind %d index %d, %lld bytes\n", ids[i], name, kind, index, (long long)mem);
    }
    CHECK(tfe_capi_backend_load("opencl", NULL) != 0);
  }

  /* errors carry a message; a failed borrow does not call release */
  tfe_handle *bad = NULL;
  CHECK(tfe_handle_einsum("ij,jk->ik", 1, ops, 0, &bad) != 0 && strlen(tfe_capi_last_error()) > 0);
  int64_t neg[2] = {2, -1};
  CHECK(tfe_handle_borrow(TFE_CAPI_F64, 2, neg, NULL, 0, a, on_release, &one, &bad) != 0);
  CHECK(strstr(tfe_capi_last_error(), "negative") || strstr(tfe_capi_last_error(), "-1"));
  CHECK(tfe_handle_borrow(99, 1, dv, NULL, 0, a, on_release, &one, &bad) != 0);
  CHECK(tfe_handle_einsum(NULL, 2, ops, 0, &bad) != 0 && strstr(tfe_capi_last_error(), "'expr'"));
  CHECK(released == 0);
  tfe_handle_release(ops[0]);
  tfe_handle_release(ops[1]);
  tfe_handle_release(at);
  CHECK(released == 2); /* each borrowed buffer given back once */
  printf("test_capi: ok (a client of tenferro/capi.h alone, against libtenferro_c.so)\n");
  return 0;
}
