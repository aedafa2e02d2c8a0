/* tests/capi/test_capi.c — a client of the stable C ABI (make test-capi): it includes
 * tenferro/capi.h only (no other tenferro header, so no TFE_MAX_RANK or kind list) and links
 * libtenferro.so. Plain asserts, no cmocka: it is meant to look like a foreign client. */
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
  printf("test_capi: ok (a client of tenferro/capi.h alone, against libtenferro.so)\n");
  return 0;
}
