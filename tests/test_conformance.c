/* tests/test_conformance.c — the conformance suite every backend must pass, and the choice of
 * a call's backend.
 *
 * ck_conformance(be) runs differential tests of every slot of one backend's vtable against a
 * naive reference (odometer loops over the labels): random shapes including sizes 0 and 1,
 * random axis orders, padding, negative and (inputs) zero strides, lazy conjugation, every
 * scalar kind; the linalg slot on the float kinds (checked by reconstruction). It needs
 * nothing but the vtable, and runs here against the CPU backend, a wrapping backend whose
 * every slot forwards to the CPU's, and a backend that replaces only the engine's leaves
 * (batched_gemm, reduce, permute, ...): the GPU backend runs the same function later.
 * The file includes itself once per scalar kind (CK_KIND_PASS) to stamp the typed bodies. */
#ifndef CK_KIND_PASS
#include "testutil.h"
#include <complex.h>
#include <math.h>

#define CK_MAXL 8  /* distinct labels per case */
#define CK_MAXR 10 /* rank per operand */

/* ---- backends under test ---------------------------------------------------------------------- */
static long ck_calls[TFE_PRIM_COUNT + 1]; /* slot calls of the wrapping backends; [COUNT]: linalg */
static tfe_status ck_wrap_exec(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  (void)be;
  ck_calls[d->op]++;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu");
  return cpu->exec[d->op](cpu, d, plan);
}
static tfe_status ck_wrap_linalg(const tfe_prims_backend *be, const tfe_linalg_call *c) {
  (void)be;
  ck_calls[TFE_PRIM_COUNT]++;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu");
  return cpu->linalg(cpu, c);
}
static long ck_ew_calls, ck_zipn_calls, ck_allocs, ck_frees; /* elementwise slot calls (ZIPN); memory slot calls */
static tfe_status ck_wrap_ew(const tfe_prims_backend *be, const tfe_ew_desc *d) {
  (void)be;
  ck_ew_calls++;
  ck_zipn_calls += d->op == TFE_EW_ZIPN;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu");
  return cpu->elementwise(cpu, d);
}
/* "Device" memory that is host memory with a guard word, so that a free of memory the slot did
 * not hand out, or a double free, is caught. */
static tfe_status ck_mem_alloc(const tfe_prims_backend *be, size_t bytes, void **out) {
  (void)be;
  uint64_t *p = malloc(bytes + 64);
  if (!p) return TFE_ERR_ALLOC;
  p[0] = 0xC0FFEEu;
  ck_allocs++;
  *out = (char *)p + 64;
  return TFE_OK;
}
static void ck_mem_free(const tfe_prims_backend *be, void *q) {
  (void)be;
  uint64_t *p = (uint64_t *)((char *)q - 64);
  assert_true(p[0] == 0xC0FFEEu);
  p[0] = 0;
  ck_frees++;
  free(p);
}
/* Every slot replaced by a counting forwarder (a backend with its own contract slot). */
static tfe_prims_backend ck_wrapper(const char *name) {
  tfe_prims_backend be = tfe_prims_cpu();
  be.name = name;
  be.flags = 0;
  for (int op = 0; op < TFE_PRIM_COUNT; op++) be.exec[op] = ck_wrap_exec;
  be.linalg = ck_wrap_linalg;
  be.elementwise = ck_wrap_ew;
  return be;
}
/* The engine's leaves replaced, the contract slot the CPU's: contractions are planned for the
 * backend's GEMM and every phase goes through its slots. */
static tfe_prims_backend ck_leaves(const char *name) {
  tfe_prims_backend be = tfe_prims_cpu();
  be.name = name;
  be.flags = 0;
  const tfe_prim_op ops[] = {TFE_PRIM_BATCHED_GEMM, TFE_PRIM_REDUCE, TFE_PRIM_PERMUTE, TFE_PRIM_TRACE,
                             TFE_PRIM_ANTI_DIAG, TFE_PRIM_ELEMENTWISE_MUL};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) be.exec[ops[i]] = ck_wrap_exec;
  return be;
}

/* ---- random cases in label form --------------------------------------------------------------- */
typedef struct ck_case {
  tfe_prim_op op;
  int nl;
  int32_t lab[CK_MAXL];
  int64_t dim[CK_MAXL];
  int ra, rb, rc;
  int32_t la[CK_MAXR], lb[CK_MAXR], lc[CK_MAXR];
} ck_case;

static int64_t ck_dim_of(const ck_case *k, int32_t l) {
  for (int i = 0; i < k->nl; i++)
    if (k->lab[i] == l) return k->dim[i];
  return -1;
}
static void ck_shuffle(tu_rng *r, int32_t *x, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)tu_int(r, 0, i);
    int32_t t = x[i]; x[i] = x[j]; x[j] = t;
  }
}
static void ck_add(int32_t *l, int *n, int32_t x) {
  if (*n < CK_MAXR) l[(*n)++] = x;
}
static bool ck_unary(tfe_prim_op op) {
  return op != TFE_PRIM_BATCHED_GEMM && op != TFE_PRIM_CONTRACT && op != TFE_PRIM_ELEMENTWISE_MUL;
}
/* A random case of the label shape op names (backend.h). */
static void ck_random_case(tu_rng *r, tfe_prim_op op, ck_case *k) {
  for (;;) {
    memset(k, 0, sizeof *k);
    k->op = op;
    k->nl = (int)tu_int(r, op == TFE_PRIM_TRACE || op == TFE_PRIM_ANTI_TRACE || op == TFE_PRIM_ANTI_DIAG ? 1 : 0, 5);
    int64_t space = 1;
    for (int i = 0; i < k->nl; i++) {
      k->lab[i] = (int32_t)(i * 37 + tu_int(r, -3, 30));
      for (int j = 0; j < i; j++)
        if (k->lab[j] == k->lab[i]) k->lab[i] += 100;
      int64_t u = tu_int(r, 0, 19);
      k->dim[i] = u == 0 ? 0 : u < 4 ? 1 : u < 10 ? 2 : u < 15 ? 3 : u < 18 ? 4 : 6;
      space *= k->dim[i] > 0 ? k->dim[i] : 1;
    }
    if (space > 2048) continue;
    for (int i = 0; i < k->nl; i++) {
      int32_t l = k->lab[i];
      switch (op) {
      case TFE_PRIM_BATCHED_GEMM: { /* batch, M, N or K */
        int cls = (int)tu_int(r, 0, 3);
        if (cls != 2) ck_add(k->la, &k->ra, l);
        if (cls != 1) ck_add(k->lb, &k->rb, l);
        if (cls != 3) ck_add(k->lc, &k->rc, l);
        break;
      }
      case TFE_PRIM_ELEMENTWISE_MUL:
        ck_add(k->la, &k->ra, l); ck_add(k->lb, &k->rb, l); ck_add(k->lc, &k->rc, l);
        break;
      case TFE_PRIM_CONTRACT: { /* any binary contraction, repeats included */
        int cls = (int)tu_int(r, 0, 5);
        bool inA = cls == 0 || cls == 1 || cls == 3 || cls == 4, inB = cls == 0 || cls == 2 || cls == 3 || cls == 5;
        if (inA) { ck_add(k->la, &k->ra, l); if (!tu_int(r, 0, 7)) ck_add(k->la, &k->ra, l); }
        if (inB) { ck_add(k->lb, &k->rb, l); if (!tu_int(r, 0, 7)) ck_add(k->lb, &k->rb, l); }
        if (cls <= 2) { ck_add(k->lc, &k->rc, l); if (!tu_int(r, 0, 9)) ck_add(k->lc, &k->rc, l); }
        break;
      }
      case TFE_PRIM_REDUCE:
        ck_add(k->la, &k->ra, l);
        if (tu_int(r, 0, 1)) ck_add(k->lc, &k->rc, l);
        break;
      case TFE_PRIM_PERMUTE:
        ck_add(k->la, &k->ra, l); ck_add(k->lc, &k->rc, l);
        break;
      case TFE_PRIM_TRACE: /* the first label repeated in A */
        ck_add(k->la, &k->ra, l);
        if (i == 0 || !tu_int(r, 0, 4)) ck_add(k->la, &k->ra, l);
        else if (tu_int(r, 0, 1)) ck_add(k->lc, &k->rc, l);
        break;
      default: /* ANTI_TRACE, ANTI_DIAG: the first label repeated in C */
        ck_add(k->la, &k->ra, l); ck_add(k->lc, &k->rc, l);
        if (i == 0 || !tu_int(r, 0, 4)) ck_add(k->lc, &k->rc, l);
        break;
      }
    }
    /* operands whose repeated labels square them stay small */
    const int32_t *ls[3] = {k->la, k->lb, k->lc};
    int rs[3] = {k->ra, k->rb, k->rc};
    bool ok = true;
    for (int op2 = 0; op2 < 3; op2++) {
      int64_t n = 1;
      for (int i = 0; i < rs[op2]; i++) n *= ck_dim_of(k, ls[op2][i]) > 0 ? ck_dim_of(k, ls[op2][i]) : 1;
      ok = ok && n <= 8192;
    }
    if (ok) break;
  }
  ck_shuffle(r, k->la, k->ra);
  ck_shuffle(r, k->lb, k->rb);
  ck_shuffle(r, k->lc, k->rc);
}

/* Random strides for dims: axis order, padding, reversal, and (inputs only) zero-stride
 * broadcast. Returns the buffer length needed; sets the offset. */
static int64_t ck_layout(tu_rng *r, tfe_layout *L, int rank, const int64_t *dims, bool input) {
  L->rank = rank;
  int perm[CK_MAXR];
  for (int i = 0; i < rank; i++) perm[i] = i;
  for (int i = rank - 1; i > 0; i--) { int j = (int)tu_int(r, 0, i); int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  int64_t s = tu_int(r, 1, 2), lead = tu_int(r, 0, 3);
  for (int q = 0; q < rank; q++) {
    int i = perm[q];
    L->dims[i] = dims[i];
    if (input && dims[i] > 1 && tu_int(r, 0, 9) == 0) { L->strides[i] = 0; continue; }
    L->strides[i] = s;
    s *= (dims[i] > 0 ? dims[i] : 1);
    if (tu_int(r, 0, 4) == 0) s += tu_int(r, 1, 3);
  }
  int64_t off = lead;
  for (int i = 0; i < rank; i++)
    if (tu_int(r, 0, 3) == 0 && dims[i] > 0) {
      off += (dims[i] - 1) * L->strides[i];
      L->strides[i] = -L->strides[i];
    }
  L->offset = off;
  return s + off + lead + 1;
}

#define CK_KIND_PASS
#define TFE_TEMPLATE <test_conformance.c>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#undef CK_KIND_PASS

/* ---- the suite ------------------------------------------------------------------------------- */
/* Every slot of be, every kind: what any backend must pass. */
static void ck_conformance(const tfe_prims_backend *be, int cases) {
  for (int op = 0; op < TFE_PRIM_COUNT; op++) {
    if (!be->exec[op]) continue;
#define CK_RUN_KIND(s, T, R, alg, cplx, flt, DT) ck_slot_##s(be, (tfe_prim_op)op, cases, 0xC0DE + 31 * op + DT);
    TFE_KINDS(CK_RUN_KIND)
#undef CK_RUN_KIND
  }
  if (be->linalg) {
    ck_linalg_f32(be, cases / 20 + 4, 0x11);
    ck_linalg_f64(be, cases / 20 + 4, 0x12);
    ck_linalg_c64(be, cases / 20 + 4, 0x13);
    ck_linalg_c128(be, cases / 20 + 4, 0x14);
  }
}
/* The contraction entry points on be, every kind (they route the engine's phases to its slots). */
static void ck_entries(const tfe_prims_backend *be, int cases) {
#define CK_RUN_KIND(s, T, R, alg, cplx, flt, DT) ck_entry_##s(be, cases, 0xE1 + DT);
  TFE_KINDS(CK_RUN_KIND)
#undef CK_RUN_KIND
}

static void test_cpu(void **st) {
  (void)st;
  ck_conformance(tfe_backend_find("cpu"), tu_cases(300));
  ck_entries(tfe_backend_find("cpu"), tu_cases(300));
}
static void test_wrapper(void **st) {
  (void)st;
  tfe_prims_backend w = ck_wrapper("ck_wrap");
  assert_int_equal(tfe_backend_register(&w, NULL), TFE_OK);
  memset(ck_calls, 0, sizeof ck_calls);
  ck_conformance(tfe_backend_find("ck_wrap"), tu_cases(200));
  for (int op = 0; op <= TFE_PRIM_COUNT; op++) assert_true(ck_calls[op] > 0);
  memset(ck_calls, 0, sizeof ck_calls);
  ck_entries(tfe_backend_find("ck_wrap"), tu_cases(200));
  assert_true(ck_calls[TFE_PRIM_CONTRACT] > 0); /* binary contractions: its contract slot */
  assert_int_equal(tfe_backend_unregister("ck_wrap"), TFE_OK);
}
static void test_leaves(void **st) {
  (void)st;
  tfe_prims_backend w = ck_leaves("ck_leaves");
  assert_int_equal(tfe_backend_register(&w, NULL), TFE_OK);
  memset(ck_calls, 0, sizeof ck_calls);
  ck_conformance(tfe_backend_find("ck_leaves"), tu_cases(200));
  memset(ck_calls, 0, sizeof ck_calls);
  ck_entries(tfe_backend_find("ck_leaves"), tu_cases(400));
  /* the engine's GEMM phase, its reductions and copies, the unary primitives: all its slots */
  assert_true(ck_calls[TFE_PRIM_BATCHED_GEMM] > 0 && ck_calls[TFE_PRIM_REDUCE] > 0 && ck_calls[TFE_PRIM_PERMUTE] > 0);
  assert_true(ck_calls[TFE_PRIM_TRACE] > 0 && ck_calls[TFE_PRIM_ANTI_DIAG] > 0);
  assert_int_equal(ck_calls[TFE_PRIM_CONTRACT], 0);
  assert_int_equal(tfe_backend_unregister("ck_leaves"), TFE_OK);
}

/* Einsum on the wrapping backends gives what it gives on the CPU, and calls their slots. */
static void test_einsum_on_backends(void **st) {
  (void)st;
  tfe_prims_backend w = ck_wrapper("ck_wrap"), l = ck_leaves("ck_leaves");
  assert_int_equal(tfe_backend_register(&w, NULL), TFE_OK);
  assert_int_equal(tfe_backend_register(&l, NULL), TFE_OK);
  double x[4096];
  for (int i = 0; i < 4096; i++) x[i] = (double)(i % 7) - 3;
  const char *exprs[] = {"ij,jk,kl->il", "abx,bc,cd->ad", "ij,ij->ij", "ii,ij->j", "abc,cb->a", "ij->ji", "ijk,k->ij"};
  const int nops[] = {3, 3, 2, 2, 2, 1, 2};
  const int64_t dims[][3][3] = {{{4, 5}, {5, 6}, {6, 3}}, {{4, 5, 3}, {5, 6}, {6, 4}}, {{3, 4}, {3, 4}},
                                {{3, 3}, {3, 5}}, {{2, 3, 4}, {4, 3}}, {{5, 7}}, {{2, 3, 4}, {4}}};
  const int ranks[][3] = {{2, 2, 2}, {3, 2, 2}, {2, 2}, {2, 2}, {3, 2}, {2}, {3, 1}};
  for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; e++) {
    tfe_view_f64 v[3];
    for (int k = 0; k < nops[e]; k++)
      assert_int_equal(tfe_wrap_f64(&v[k], x + 500 * k, 4096 - 500 * k, ranks[e][k], dims[e][k], NULL, 0, TFE_COLMAJOR),
                       TFE_OK);
    tfe_tensor_f64 ref = {0};
    assert_int_equal(tfe_einsum_f64(&ref, exprs[e], nops[e], v), TFE_OK);
    const char *names[] = {"ck_wrap", "ck_leaves"};
    for (int b = 0; b < 2; b++) {
      tfe_einsum_opts o = {0};
      o.backend = tfe_backend_find(names[b]);
      memset(ck_calls, 0, sizeof ck_calls);
      tfe_tensor_f64 got = {0};
      if (tfe_einsum_with_f64(&got, exprs[e], nops[e], v, &o) != TFE_OK) fail_msg("einsum %s on %s: %s", exprs[e], names[b], tfe_last_error());
      long calls = 0;
      for (int op = 0; op < TFE_PRIM_COUNT; op++) calls += ck_calls[op];
      if (calls == 0) fail_msg("einsum %s on %s called none of its slots", exprs[e], names[b]);
      int64_t n = tfe_layout_numel(&ref.v.lay);
      for (int64_t i = 0; i < n; i++) assert_true(fabs(ref.v.data[i] - got.v.data[i]) <= 1e-12 * (1 + fabs(ref.v.data[i])));
      tfe_tensor_release_f64(&got);
    }
    tfe_tensor_release_f64(&ref);
  }
  assert_int_equal(tfe_backend_unregister("ck_wrap"), TFE_OK);
  assert_int_equal(tfe_backend_unregister("ck_leaves"), TFE_OK);
}

/* The CPU's ZIPN (kernel.md): the fold with flips against a loop, and its refusals (input
 * count, NULL inputs, op, kind, shape, an input sharing dst's memory) with dst unwritten. */
static tfe_dyn ck_dyn(tfe_dtype dt, void *data, int rank, const int64_t *dims) {
  tfe_dyn v;
  memset(&v, 0, sizeof v);
  v.dtype = dt, v.data = data;
  tfe_layout_dense(rank, dims, TFE_COLMAJOR, &v.lay);
  return v;
}
static void test_zipn(void **st) {
  (void)st;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu");
  double a[12], b[4], c[3], e[12], d[12], want[12];
  float f[12] = {0};
  for (int i = 0; i < 12; i++) a[i] = 0.5 * i - 2, e[i] = 1.0 / (i + 1);
  for (int i = 0; i < 4; i++) b[i] = i - 1.5;
  for (int i = 0; i < 3; i++) c[i] = 3 + i;
  int64_t d34[2] = {3, 4}, d14[2] = {1, 4}, d31[2] = {3, 1}, d54[2] = {5, 4};
  tfe_dyn A = ck_dyn(TFE_DT_F64, a, 2, d34), B = ck_dyn(TFE_DT_F64, b, 2, d14), C = ck_dyn(TFE_DT_F64, c, 2, d31);
  tfe_dyn E = ck_dyn(TFE_DT_F64, e, 2, d34), D = ck_dyn(TFE_DT_F64, d, 2, d34), F = ck_dyn(TFE_DT_F32, f, 2, d34);
  tfe_dyn W = ck_dyn(TFE_DT_F64, a, 2, d54);
  const tfe_dyn *in[9] = {&A, &B, &C, &E, &A, &A, &A, &A, &A};
  tfe_ew_desc z = {TFE_EW_ZIPN, TFE_BIN_SUB, &D, NULL, NULL, NULL, NULL, 0, NULL, 4, in, 1u << 2};
  assert_int_equal(cpu->elementwise(cpu, &z), TFE_OK);
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 3; i++) want[i + 3 * j] = (c[i] - (a[i + 3 * j] - b[j])) - e[i + 3 * j];
  for (int i = 0; i < 12; i++) assert_true(d[i] == want[i]);
  struct { int nin; int code; const tfe_dyn *bad; int at; bool null_in; tfe_status want; const char *msg; } cases[] = {
      {1, TFE_BIN_MUL, NULL, 0, false, TFE_ERR_INVALID, "2 to 8 inputs"},
      {9, TFE_BIN_MUL, NULL, 0, false, TFE_ERR_INVALID, "2 to 8 inputs"},
      {3, TFE_BIN_MUL, NULL, 0, true, TFE_ERR_NULL, "'in'"},
      {3, 99, NULL, 0, false, TFE_ERR_INVALID, "unknown binary op"},
      {4, TFE_BIN_MUL, &F, 3, false, TFE_ERR_DTYPE, "zipn input 3"},
      {4, TFE_BIN_MUL, &W, 3, false, TFE_ERR_SHAPE, ""},
      {4, TFE_BIN_MUL, &D, 2, false, TFE_ERR_OVERLAP, "zipn input 2"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    for (int i = 0; i < 12; i++) d[i] = -7;
    const tfe_dyn *v[9] = {&A, &B, &C, &E, &A, &A, &A, &A, &A};
    if (cases[k].bad) v[cases[k].at] = cases[k].bad;
    tfe_ew_desc q = {TFE_EW_ZIPN, cases[k].code, &D, NULL, NULL, NULL, NULL, 0, NULL, cases[k].nin,
                     cases[k].null_in ? NULL : v, 0};
    tfe_status got = cpu->elementwise(cpu, &q);
    if (got != cases[k].want || !strstr(tfe_last_error(), cases[k].msg))
      fail_msg("zipn refusal %zu: status %d (%s), expected %d", k, got, tfe_last_error(), cases[k].want);
    for (int i = 0; i < 12; i++) assert_true(d[i] == -7);
  }
  const tfe_dyn *v[3] = {&A, NULL, &E};
  tfe_ew_desc q = {TFE_EW_ZIPN, TFE_BIN_MUL, &D, NULL, NULL, NULL, NULL, 0, NULL, 3, v, 0};
  TU_EXPECT_ERR(cpu->elementwise(cpu, &q), TFE_ERR_NULL, "zipn input 1 is NULL");
}
/* Einsum's chains of elementwise products on a host backend with its own elementwise slot
 * (ck_wrap): the executor fuses them into ZIPN calls; results against the CPU's einsum, along
 * paths that start from a leaf and from an intermediate (whose buffer a later step's result may
 * take: the chain must then be shortened). */
static void test_einsum_zip_chains(void **st) {
  (void)st;
  tfe_prims_backend w = ck_wrapper("ck_zip");
  assert_int_equal(tfe_backend_register(&w, NULL), TFE_OK);
  const char *exprs[] = {"abc,ab,bc,c,ca,b->abc", "abcz,z,ab,bc,c,ca->cab", "ab,ba,a,b,ab,ab,a,b,ab,ba->ab"};
  const int n[] = {6, 6, 10};
  int paths[3][18] = {{0, 1, 0, 4, 0, 3, 0, 2, 0, 1}, {0, 1, 0, 4, 0, 3, 0, 2, 0, 1},
                      {0, 1, 0, 8, 0, 7, 0, 6, 0, 5, 0, 4, 0, 3, 0, 2, 0, 1}};
  tu_rng r = {77};
  for (size_t e = 0; e < sizeof exprs / sizeof exprs[0]; e++) {
    tfe_tensor_f64 t[10];
    tfe_view_f64 v[10];
    const char *p = exprs[e];
    for (int k = 0; k < n[e]; k++) {
      int64_t dims[4];
      int rank = 0;
      for (; *p && *p != ',' && *p != '-'; p++) dims[rank++] = *p == 'z' ? 2 : 3 + (*p - 'a');
      p++;
      assert_int_equal(tfe_empty_f64(&t[k], rank, dims, TFE_COLMAJOR), TFE_OK);
      for (int64_t i = 0; i < tfe_layout_numel(&t[k].v.lay); i++) t[k].v.data[i] = tu_unif(&r) - 0.5;
      v[k] = t[k].v;
    }
    tfe_einsum_opts o = {0};
    o.algo = TFE_PATH_GIVEN, o.path = paths[e], o.path_nsteps = n[e] - 1, o.no_cache = true;
    tfe_tensor_f64 ref = {0}, got = {0};
    assert_int_equal(tfe_einsum_with_f64(&ref, exprs[e], n[e], v, &o), TFE_OK);
    o.backend = tfe_backend_find("ck_zip");
    long z0 = ck_zipn_calls;
    if (tfe_einsum_with_f64(&got, exprs[e], n[e], v, &o) != TFE_OK) fail_msg("einsum %s: %s", exprs[e], tfe_last_error());
    if (ck_zipn_calls == z0) fail_msg("einsum %s on ck_zip made no ZIPN call", exprs[e]);
    int64_t m = tfe_layout_numel(&ref.v.lay);
    for (int64_t i = 0; i < m; i++) assert_true(fabs(ref.v.data[i] - got.v.data[i]) <= 1e-14 * (1 + fabs(ref.v.data[i])));
    tfe_tensor_release_f64(&ref), tfe_tensor_release_f64(&got);
    for (int k = 0; k < n[e]; k++) tfe_tensor_release_f64(&t[k]);
  }
  assert_int_equal(tfe_backend_unregister("ck_zip"), TFE_OK);
}

/* ---- the registry ------------------------------------------------------------------------------ */
static void test_registry(void **st) {
  (void)st;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu");
  assert_non_null(cpu);
  assert_int_equal(tfe_backend_id(cpu), 0);
  assert_ptr_equal(tfe_backend_get(0), cpu);
  assert_true(cpu->flags & TFE_BACKEND_INFER);
  assert_int_equal(cpu->space.kind, TFE_MEM_HOST);
  const tfe_prims_backend *list[TFE_BACKEND_MAX];
  int n0 = tfe_backend_list(list, TFE_BACKEND_MAX);
  assert_true(n0 >= 1 && list[0] == cpu);
  tfe_prims_backend w = ck_wrapper("ck_reg");
  int id = -1;
  assert_int_equal(tfe_backend_register(&w, &id), TFE_OK);
  assert_true(id > 0);
  assert_string_equal(tfe_backend_get(id)->name, "ck_reg");
  assert_int_equal(tfe_backend_list(NULL, 0), n0 + 1);
  TU_EXPECT_ERR(tfe_backend_register(&w, NULL), TFE_ERR_INVALID, "named 'ck_reg' is registered already");
  w.name = "";
  TU_EXPECT_ERR(tfe_backend_register(&w, NULL), TFE_ERR_INVALID, "needs a name");
  TU_EXPECT_ERR(tfe_backend_unregister("cpu"), TFE_ERR_INVALID, "stays registered");
  TU_EXPECT_ERR(tfe_backend_unregister("nope"), TFE_ERR_INVALID, "no backend named 'nope'");
  assert_int_equal(tfe_backend_unregister("ck_reg"), TFE_OK);
  assert_null(tfe_backend_find("ck_reg"));
  assert_null(tfe_backend_get(id));
  assert_int_equal(tfe_backend_list(NULL, 0), n0);
}

/* ---- the choice of a call's backend (tenferro-rs #602 order) ---------------------------------- */
static tfe_storage *ck_storage(void *p, size_t bytes, tfe_memspace space, int device) {
  tfe_storage *s = NULL;
  assert_int_equal(tfe_storage_wrap(p, bytes, space, NULL, NULL, &s), TFE_OK);
  s->compute_device = device;
  return s;
}
static void test_select_order(void **st) {
  (void)st;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu"), *be = NULL;
  tfe_prims_backend w = ck_wrapper("ck_sel");
  int id = -1;
  assert_int_equal(tfe_backend_register(&w, &id), TFE_OK);
  const tfe_prims_backend *mine = tfe_backend_get(id);
  double buf[16];
  tfe_storage *host = ck_storage(buf, sizeof buf, TFE_HOST, -1), *dev = ck_storage(buf, sizeof buf, TFE_HOST, id);
  tfe_backend_rule rule = (tfe_backend_rule)-1;
  /* 5. plain views: host memory, inferred; the scoped levels 3 and 4 are skipped (no runtime) */
  tfe_operand_place views[2] = {{"A", NULL}, {"B", NULL}};
  assert_int_equal(tfe_backend_select(NULL, 2, views, false, &be, &rule), TFE_OK);
  assert_ptr_equal(be, cpu);
  assert_int_equal(rule, TFE_RULE_MEMORY_SPACE);
  tfe_operand_place hs[2] = {{"A", host}, {"B", host}};
  assert_int_equal(tfe_backend_select(NULL, 2, hs, false, &be, &rule), TFE_OK);
  assert_true(be == cpu && rule == TFE_RULE_MEMORY_SPACE);
  /* 2. a compute device beats the memory space */
  tfe_operand_place cd[2] = {{"A", host}, {"B", dev}};
  assert_int_equal(tfe_backend_select(NULL, 2, cd, false, &be, &rule), TFE_OK);
  assert_true(be == mine && rule == TFE_RULE_COMPUTE_DEVICE);
  /* 1. an explicit argument beats the compute device */
  assert_int_equal(tfe_backend_select(cpu, 2, cd, false, &be, &rule), TFE_OK);
  assert_true(be == cpu && rule == TFE_RULE_ARGUMENT);
  /* operands that name different compute devices */
  tfe_storage *dev0 = ck_storage(buf, sizeof buf, TFE_HOST, 0);
  tfe_operand_place two[2] = {{"A", dev0}, {"B", dev}};
  TU_EXPECT_ERR(tfe_backend_select(NULL, 2, two, false, &be, NULL), TFE_ERR_DEVICE,
                "ambiguous: A asks for compute device 0, B for compute device");
  /* a compute device nobody registered */
  tfe_storage *ghost = ck_storage(buf, sizeof buf, TFE_HOST, TFE_BACKEND_MAX - 1);
  tfe_operand_place gh[1] = {{NULL, ghost}};
  TU_EXPECT_ERR(tfe_backend_select(NULL, 1, gh, false, &be, NULL), TFE_ERR_DEVICE,
                "operand 0 asks for compute device 15, which no registered backend is");
  tfe_storage_release(host); tfe_storage_release(dev); tfe_storage_release(dev0); tfe_storage_release(ghost);
  assert_int_equal(tfe_backend_unregister("ck_sel"), TFE_OK);
}
static void test_select_spaces(void **st) {
  (void)st;
  const tfe_prims_backend *cpu = tfe_backend_find("cpu"), *be = NULL;
  double buf[16] = {0}, out[16] = {0};
  tfe_memspace gpu0 = {TFE_MEM_GPU, 0};
  tfe_storage *g = ck_storage(buf, sizeof buf, gpu0, -1), *h = ck_storage(out, sizeof out, TFE_HOST, -1);
  /* operands in different memory spaces: refused, naming them */
  tfe_operand_place mixed[2] = {{"A", h}, {"B", g}};
  TU_EXPECT_ERR(tfe_backend_select(NULL, 2, mixed, false, &be, NULL), TFE_ERR_DEVICE,
                "A is in host memory, B in gpu:0 memory");
  /* an explicit backend that cannot reach an operand: refused unless a transfer is asked for */
  TU_EXPECT_ERR(tfe_backend_select(cpu, 2, mixed, false, &be, NULL), TFE_ERR_DEVICE,
                "B is in gpu:0 memory but backend 'cpu' computes in host memory");
  assert_int_equal(tfe_backend_select(cpu, 2, mixed, true, &be, NULL), TFE_OK);
  assert_ptr_equal(be, cpu);
  /* no backend computes in gpu:0 memory */
  tfe_operand_place gg[1] = {{"A", g}};
  TU_EXPECT_ERR(tfe_backend_select(NULL, 1, gg, false, &be, NULL), TFE_ERR_DEVICE,
                "no registered backend computes in gpu:0 memory, where A lives");
  /* a backend for gpu:0 memory (here one that forwards to the CPU): inferred from the space */
  tfe_prims_backend fake = ck_wrapper("ck_gpu0");
  fake.space = gpu0;
  fake.flags = TFE_BACKEND_INFER;
  fake.mem_alloc = ck_mem_alloc; /* einsum's results live in its memory */
  fake.mem_free = ck_mem_free;
  assert_int_equal(tfe_backend_register(&fake, NULL), TFE_OK);
  tfe_backend_rule rule;
  assert_int_equal(tfe_backend_select(NULL, 1, gg, false, &be, &rule), TFE_OK);
  assert_true(be == tfe_backend_find("ck_gpu0") && rule == TFE_RULE_MEMORY_SPACE);
  /* einsum over dtype-tagged operands follows their storage: the gpu:0 operands run there */
  for (int i = 0; i < 16; i++) buf[i] = i + 1;
  tfe_dyn a = {TFE_DT_F64, buf, {0}, false, g}, r;
  int64_t d44[2] = {4, 4};
  tfe_layout_dense(2, d44, TFE_COLMAJOR, &a.lay);
  memset(ck_calls, 0, sizeof ck_calls);
  assert_int_equal(tfe_einsum_dyn(&r, "ij,jk->ik", 2, (tfe_dyn[]){a, a}, NULL), TFE_OK);
  assert_true(ck_calls[TFE_PRIM_CONTRACT] > 0);
  tfe_storage_release(r.st);
  /* mixed spaces through einsum: refused; with a transfer asked for: not yet possible */
  tfe_dyn hb = a;
  hb.data = out; hb.st = h;
  TU_EXPECT_ERR(tfe_einsum_dyn(&r, "ij,jk->ik", 2, (tfe_dyn[]){a, hb}, NULL), TFE_ERR_DEVICE,
                "operand 0 is in gpu:0 memory, operand 1 in host memory");
  tfe_einsum_opts o = {0};
  o.allow_transfer = true;
  o.backend = cpu;
  TU_EXPECT_ERR(tfe_einsum_dyn(&r, "ij,jk->ik", 2, (tfe_dyn[]){a, hb}, &o), TFE_ERR_UNSUPPORTED,
                "transfers between memory spaces arrive with the runtime room");
  /* contraction of dtype-tagged operands: the same rules */
  double one = 1, zero = 0;
  tfe_dyn c = hb;
  TU_EXPECT_ERR(tfe_contract_dyn(&one, &a, (int32_t[]){0, 1}, &hb, (int32_t[]){1, 2}, &zero, &c, (int32_t[]){0, 2}),
                TFE_ERR_DEVICE, "in different memory spaces");
  assert_int_equal(tfe_backend_unregister("ck_gpu0"), TFE_OK);
  tfe_storage_release(g); tfe_storage_release(h);
}
/* Two backends that may be inferred for host memory: plain views become ambiguous. */
static void test_select_ambiguous(void **st) {
  (void)st;
  tfe_prims_backend twin = ck_wrapper("ck_twin");
  twin.flags = TFE_BACKEND_INFER;
  assert_int_equal(tfe_backend_register(&twin, NULL), TFE_OK);
  double a[4] = {1, 2, 3, 4}, c[4];
  tfe_view_f64 A = {a, {2, 0, {2, 2}, {1, 2}}, false}, C = {c, {2, 0, {2, 2}, {1, 2}}, false};
  TU_EXPECT_ERR(tfe_contract_f64(1, &A, (int32_t[]){0, 1}, &A, (int32_t[]){1, 2}, 0, &C, (int32_t[]){0, 2}),
                TFE_ERR_DEVICE, "ambiguous: A, B, C (host memory, no compute device) could run on 'cpu', 'ck_twin'");
  tfe_tensor_f64 t = {0};
  TU_EXPECT_ERR(tfe_einsum_f64(&t, "ij->ji", 1, &A), TFE_ERR_DEVICE, "could run on 'cpu', 'ck_twin'");
  /* naming one settles it */
  assert_int_equal(tfe_contract_on_f64(tfe_backend_find("cpu"), 1, &A, (int32_t[]){0, 1}, &A, (int32_t[]){1, 2}, 0, &C,
                                       (int32_t[]){0, 2}),
                   TFE_OK);
  assert_true(c[0] == 1 * 1 + 3 * 2);
  assert_int_equal(tfe_backend_unregister("ck_twin"), TFE_OK);
  assert_int_equal(tfe_einsum_f64(&t, "ij->ji", 1, &A), TFE_OK);
  tfe_tensor_release_f64(&t);
}
/* Slots a backend lacks: the protocol says so; the engine runs its own code for them on the host. */
static void test_missing_slots(void **st) {
  (void)st;
  tfe_prims_backend lean = tfe_prims_cpu();
  lean.name = "ck_lean";
  lean.flags = 0;
  lean.exec[TFE_PRIM_CONTRACT] = NULL;
  lean.exec[TFE_PRIM_BATCHED_GEMM] = NULL;
  lean.linalg = NULL;
  assert_int_equal(tfe_backend_register(&lean, NULL), TFE_OK);
  const tfe_prims_backend *be = tfe_backend_find("ck_lean");
  double a[4] = {1, 2, 3, 4}, c[4] = {0}, one = 1, zero = 0;
  int64_t d22[2] = {2, 2};
  tfe_dyn A = {TFE_DT_F64, a, {0}, false, NULL}, C = {TFE_DT_F64, c, {0}, false, NULL};
  tfe_layout_dense(2, d22, TFE_COLMAJOR, &A.lay);
  C.lay = A.lay;
  tfe_prim_desc d = {TFE_PRIM_CONTRACT, &A, &A, &C, (int32_t[]){0, 1}, (int32_t[]){1, 2}, (int32_t[]){0, 2}, &one, &zero};
  assert_false(tfe_prims_supports(be, TFE_PRIM_CONTRACT));
  TU_EXPECT_ERR(tfe_prims_execute(be, &d, NULL), TFE_ERR_UNSUPPORTED, "backend 'ck_lean' does not provide contract");
  d.op = TFE_PRIM_BATCHED_GEMM;
  void *plan = NULL;
  TU_EXPECT_ERR(tfe_prims_plan(be, &d, &plan), TFE_ERR_UNSUPPORTED, "does not provide batched_gemm");
  /* the entry points still run: the engine's own GEMM on the host */
  tfe_view_f64 Av = {a, A.lay, false}, Cv = {c, C.lay, false};
  assert_int_equal(tfe_contract_on_f64(be, 1, &Av, (int32_t[]){0, 1}, &Av, (int32_t[]){1, 2}, 0, &Cv, (int32_t[]){0, 2}),
                   TFE_OK);
  assert_true(c[0] == 1 * 1 + 3 * 2 && c[3] == 3 * 2 + 4 * 4);
  assert_null(be->linalg);
  assert_int_equal(tfe_backend_unregister("ck_lean"), TFE_OK);
}

/* A backend with its own memory: einsum allocates its intermediates and result there, and the
 * kernel room's dtype-tagged entries run in its elementwise slot, with the CPU's results. */
static void test_device_memory(void **st) {
  (void)st;
  tfe_memspace gpu1 = {TFE_MEM_GPU, 1};
  tfe_prims_backend fake = ck_wrapper("ck_gpu1");
  fake.space = gpu1;
  fake.flags = TFE_BACKEND_INFER;
  fake.mem_alloc = ck_mem_alloc;
  fake.mem_free = ck_mem_free;
  assert_int_equal(tfe_backend_register(&fake, NULL), TFE_OK);
  const tfe_prims_backend *be = tfe_backend_find("ck_gpu1");
  ck_allocs = ck_frees = ck_ew_calls = 0;
  /* operands in the backend's memory, made through it */
  tfe_storage *sa = NULL, *sb = NULL;
  assert_int_equal(tfe_backend_storage_new(be, 24 * sizeof(double), &sa), TFE_OK);
  assert_int_equal(tfe_backend_storage_new(be, 24 * sizeof(double), &sb), TFE_OK);
  assert_true(sa->space.kind == TFE_MEM_GPU && sa->space.device == 1 && ck_allocs == 2);
  double *a = sa->ptr, *b = sb->ptr;
  for (int i = 0; i < 24; i++) { a[i] = 0.25 * i - 2; b[i] = 1.0 / (1 + i); }
  int64_t d234[3] = {2, 3, 4}, d43[2] = {4, 3};
  tfe_dyn A = {TFE_DT_F64, a, {0}, false, sa}, B = {TFE_DT_F64, b, {0}, false, sb}, R;
  tfe_layout_dense(3, d234, TFE_COLMAJOR, &A.lay);
  tfe_layout_dense(2, d43, TFE_COLMAJOR, &B.lay);
  tfe_dyn Q = B; /* the first 9 elements of b as 3x3 */
  tfe_layout_dense(2, (int64_t[]){3, 3}, TFE_COLMAJOR, &Q.lay);
  /* a three-operand einsum (an intermediate) and its result in the backend's memory */
  long allocs0 = ck_allocs;
  assert_int_equal(tfe_einsum_dyn(&R, "ijk,kl,lj->i", 3, (tfe_dyn[]){A, B, Q}, NULL), TFE_OK);
  assert_true(R.st->space.kind == TFE_MEM_GPU && R.st->space.device == 1);
  assert_true(ck_allocs >= allocs0 + 2); /* the arena of the intermediates, the result */
  tfe_view_f64 av = {a, A.lay, false}, bv = {b, B.lay, false}, qv = {b, Q.lay, false};
  tfe_tensor_f64 ref = {0};
  tfe_einsum_opts o = {0};
  o.backend = tfe_backend_find("cpu");
  assert_int_equal(tfe_einsum_with_f64(&ref, "ijk,kl,lj->i", 3, (tfe_view_f64[]){av, bv, qv}, &o), TFE_OK);
  for (int i = 0; i < 2; i++) assert_true(fabs(((double *)R.data)[i] - ref.v.data[i]) < 1e-12);
  tfe_tensor_release_f64(&ref);
  tfe_storage_release(R.st);
  /* the kernel room's dtype-tagged entries: copy, fill, map, zip, reduce in the slot */
  tfe_dyn C = A;
  C.data = b; C.st = sb; /* b as 2x3x4 */
  double two = 2, half = 0.5, zero = 0, v = 7;
  assert_int_equal(tfe_copy_dyn(&C, &A), TFE_OK);
  for (int i = 0; i < 24; i++) assert_true(b[i] == a[i]);
  assert_int_equal(tfe_map_dyn(&C, &A, TFE_UN_SQUARE, NULL), TFE_OK);
  for (int i = 0; i < 24; i++) assert_true(b[i] == a[i] * a[i]);
  assert_int_equal(tfe_zip_dyn(&C, &A, &C, TFE_BIN_SUB), TFE_OK);
  for (int i = 0; i < 24; i++) assert_true(b[i] == a[i] - a[i] * a[i]);
  tfe_dyn O = {TFE_DT_F64, b, {0}, false, sb};
  int64_t d2[1] = {2};
  tfe_layout_dense(1, d2, TFE_COLMAJOR, &O.lay);
  assert_int_equal(tfe_reduce_dyn(&O, &A, TFE_RED_SUM, 2, (int[]){1, 2}, &two, &zero), TFE_OK);
  for (int i = 0; i < 2; i++) {
    double s = 0;
    for (int j = 0; j < 12; j++) s += a[i + 2 * j];
    assert_true(fabs(b[i] - 2 * s) < 1e-12);
  }
  assert_int_equal(tfe_fill_dyn(&C, &v), TFE_OK);
  for (int i = 0; i < 24; i++) assert_true(b[i] == 7);
  assert_int_equal(tfe_map_dyn(&C, &C, TFE_UN_POW, &half), TFE_OK);
  assert_true(fabs(b[5] - sqrt(7.0)) < 1e-15);
  assert_int_equal(ck_ew_calls, 6);
  /* the dtype-tagged linalg entries run in the backend's linalg slot */
  for (int i = 0; i < 9; i++) b[i] = (i % 4 == 0) ? 4.0 : 1.0 / (2 + i); /* Q: diagonally dominant 3x3 */
  ck_calls[TFE_PRIM_COUNT] = 0;
  tfe_dyn S = {0}, X = {0};
  assert_int_equal(tfe_svd_dyn(&Q, TFE_SVD_VALUES, NULL, &S, NULL), TFE_OK);
  assert_int_equal(tfe_solve_dyn(&Q, &Q, &X), TFE_OK);
  assert_int_equal(ck_calls[TFE_PRIM_COUNT], 2);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 3; i++) assert_true(fabs(((double *)X.data)[i + 3 * j] - (i == j)) < 1e-12);
  tfe_dyn_release(&S);
  tfe_dyn_release(&X);
  /* a host operand next to device ones: refused, naming both */
  double h[24];
  tfe_dyn H = A;
  H.data = h; H.st = NULL;
  TU_EXPECT_ERR(tfe_copy_dyn(&C, &H), TFE_ERR_DEVICE, "destination is in gpu:1 memory, source in host memory");
  assert_int_equal(ck_ew_calls, 6);
  tfe_storage_release(sa);
  tfe_storage_release(sb);
  assert_int_equal(tfe_backend_unregister("ck_gpu1"), TFE_OK);
  assert_int_equal(ck_allocs, ck_frees); /* every buffer it handed out came back to it */
  /* bad input to the new entries: status and message, nothing allocated */
  void *p = (void *)1;
  TU_EXPECT_ERR(tfe_backend_alloc(NULL, 8, &p), TFE_ERR_NULL, "be");
  tfe_prims_backend bare = ck_wrapper("ck_bare");
  bare.space = gpu1;
  TU_EXPECT_ERR(tfe_backend_alloc(&bare, 8, &p), TFE_ERR_UNSUPPORTED, "has no mem_alloc slot");
  assert_null(p);
  double hb[4] = {0};
  tfe_dyn HD = {TFE_DT_F64, hb, {0}, false, NULL}, HI = HD;
  tfe_layout_dense(1, (int64_t[]){4}, TFE_COLMAJOR, &HD.lay);
  HI.dtype = TFE_DT_I32; HI.lay = HD.lay;
  TU_EXPECT_ERR(tfe_fill_dyn(&HD, NULL), TFE_ERR_NULL, "value");
  TU_EXPECT_ERR(tfe_reduce_dyn(&HD, &HI, TFE_RED_SUM, -1, NULL, NULL, NULL), TFE_ERR_DTYPE, "output is f64 but source is i32");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry),        cmocka_unit_test(test_select_order),
      cmocka_unit_test(test_select_spaces),   cmocka_unit_test(test_select_ambiguous),
      cmocka_unit_test(test_missing_slots),   cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_wrapper),         cmocka_unit_test(test_leaves),
      cmocka_unit_test(test_einsum_on_backends), cmocka_unit_test(test_device_memory),
      cmocka_unit_test(test_zipn),            cmocka_unit_test(test_einsum_zip_chains),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* ---- per-kind body (CK_KIND_PASS) ---------------------------------------------------- */

/* A random value of the kind: small integers (exact sums in every kind, ties in tropical ones). */
static TFE_T TFE_CAT(ck_rand_, TFE_S)(tu_rng *r) {
#if TFE_ALG == TFE_ALG_MAXTIMES
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, 0, 4));
#elif TFE_ALG == TFE_ALG_STANDARD && !TFE_FLOAT
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, -3, 3));
#else
  TFE_T x = TFE_FN(sr_from_f64)((double)tu_int(r, -4, 4) * 0.5);
#endif
#if TFE_CPLX
  x += (TFE_T)((double)tu_int(r, -4, 4) * 0.5) * (TFE_T)I;
#endif
  return x;
}
static TFE_T TFE_CAT(ck_get_, TFE_S)(const TFE_TY(view) *v, const int64_t *idx) {
  TFE_T x = TFE_FN(sr_zero)();
  assert_int_equal(TFE_FN(get)(v, idx, &x), TFE_OK);
  return x;
}
static void TFE_CAT(ck_index_, TFE_S)(const int32_t *lbl, int r, const ck_case *k, const int64_t *val, int64_t *idx) {
  for (int i = 0; i < r; i++)
    for (int j = 0; j < k->nl; j++)
      if (k->lab[j] == lbl[i]) idx[i] = val[j];
}
/* The reference value of C at index ci: alpha * (sum over the labels C lacks) + beta * C; off
 * the diagonal of repeated C labels, beta * C. mag: the size of the terms, for the tolerance. */
static TFE_T TFE_CAT(ck_ref_, TFE_S)(const ck_case *k, TFE_T alpha, const TFE_TY(view) *A, const TFE_TY(view) *B,
                                      TFE_T beta, TFE_T cold, const int64_t *ci, double *mag) {
  int64_t val[CK_MAXL];
  bool set[CK_MAXL] = {false}, diag = true;
  for (int i = 0; i < k->rc; i++)
    for (int j = 0; j < k->nl; j++)
      if (k->lab[j] == k->lc[i]) {
        if (set[j] && val[j] != ci[i]) diag = false;
        val[j] = ci[i]; set[j] = true;
      }
  bool bzero = TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)());
  TFE_T bc = bzero ? TFE_FN(sr_zero)() : TFE_FN(sr_mul)(beta, cold);
  *mag = TFE_FN(sr_dist)(bc, TFE_FN(sr_zero)());
  if (!diag) return bc;
  int fr[CK_MAXL], nf = 0;
  for (int j = 0; j < k->nl; j++) if (!set[j]) { fr[nf++] = j; val[j] = 0; }
  TFE_T acc = TFE_FN(sr_zero)();
  bool empty = false;
  for (int f = 0; f < nf; f++) empty = empty || k->dim[fr[f]] == 0;
  while (!empty) {
    int64_t ia[CK_MAXR], ib[CK_MAXR];
    TFE_CAT(ck_index_, TFE_S)(k->la, k->ra, k, val, ia);
    TFE_T t = TFE_CAT(ck_get_, TFE_S)(A, ia);
    if (B) {
      TFE_CAT(ck_index_, TFE_S)(k->lb, k->rb, k, val, ib);
      t = TFE_FN(sr_mul)(t, TFE_CAT(ck_get_, TFE_S)(B, ib));
    }
    *mag += TFE_FN(sr_dist)(t, TFE_FN(sr_zero)()) * TFE_FN(sr_dist)(alpha, TFE_FN(sr_zero)());
    acc = TFE_FN(sr_add)(acc, t);
    int f = 0;
    for (; f < nf; f++) {
      if (++val[fr[f]] < k->dim[fr[f]]) break;
      val[fr[f]] = 0;
    }
    if (f == nf) break;
  }
  TFE_T res = TFE_FN(sr_mul)(alpha, acc);
  return bzero ? res : TFE_FN(sr_add)(res, bc);
}
static TFE_T *TFE_CAT(ck_buf_, TFE_S)(tu_rng *r, int64_t n) {
  TFE_T *p = (TFE_T *)malloc((size_t)(n > 0 ? n : 1) * sizeof(TFE_T));
  for (int64_t i = 0; i < n; i++) p[i] = TFE_CAT(ck_rand_, TFE_S)(r);
  return p;
}
/* One random case of k's shape: run it (through the slot, or through the contraction entry
 * points on be when entry is set), compare every element of C with the reference. */
static void TFE_CAT(ck_case_, TFE_S)(const tfe_prims_backend *be, const ck_case *k, tu_rng *r, bool entry) {
  int64_t da[CK_MAXR], db[CK_MAXR], dc[CK_MAXR];
  for (int i = 0; i < k->ra; i++) da[i] = ck_dim_of(k, k->la[i]);
  for (int i = 0; i < k->rb; i++) db[i] = ck_dim_of(k, k->lb[i]);
  for (int i = 0; i < k->rc; i++) dc[i] = ck_dim_of(k, k->lc[i]);
  bool binary = !ck_unary(k->op);
  TFE_TY(view) A, B, C;
  int64_t na = ck_layout(r, &A.lay, k->ra, da, true), nb = binary ? ck_layout(r, &B.lay, k->rb, db, true) : 0;
  int64_t nc = ck_layout(r, &C.lay, k->rc, dc, false);
  TFE_T *pa = TFE_CAT(ck_buf_, TFE_S)(r, na), *pb = TFE_CAT(ck_buf_, TFE_S)(r, nb), *pc = TFE_CAT(ck_buf_, TFE_S)(r, nc);
  TFE_T *c0 = (TFE_T *)malloc((size_t)(nc > 0 ? nc : 1) * sizeof(TFE_T));
  memcpy(c0, pc, (size_t)nc * sizeof(TFE_T));
  A.data = pa; B.data = pb; C.data = pc;
  A.conj = TFE_CPLX && tu_int(r, 0, 1); B.conj = TFE_CPLX && tu_int(r, 0, 1); C.conj = false;
  int64_t ua = tu_int(r, 0, 5), ub = tu_int(r, 0, 5);
  TFE_T alpha = ua == 0 ? TFE_FN(sr_one)() : TFE_CAT(ck_rand_, TFE_S)(r);
  TFE_T beta = ub == 0 ? TFE_FN(sr_zero)() : ub == 1 ? TFE_FN(sr_one)() : TFE_CAT(ck_rand_, TFE_S)(r);
  tfe_status st;
  if (entry) {
    st = binary ? TFE_FN(contract_on)(be, alpha, &A, k->la, &B, k->lb, beta, &C, k->lc)
                : TFE_FN(contract_unary_on)(be, alpha, &A, k->la, beta, &C, k->lc);
  } else {
    tfe_dyn x = {TFE_DT, pa, A.lay, A.conj, NULL}, y = {TFE_DT, pb, binary ? B.lay : A.lay, B.conj, NULL};
    tfe_dyn z = {TFE_DT, pc, C.lay, false, NULL};
    tfe_prim_desc d = {k->op, &x, binary ? &y : NULL, &z, k->la, binary ? k->lb : NULL, k->lc, &alpha, &beta};
    st = tfe_prims_execute(be, &d, NULL);
  }
  if (st != TFE_OK)
    fail_msg("%s %s on '%s' (ranks %d %d %d): %s", TFE_STR(TFE_S), tfe_prim_op_name(k->op), be->name, k->ra, k->rb,
             k->rc, tfe_last_error());
  /* every element of C, in the odometer of C's axes */
  TFE_TY(view) C0 = C;
  C0.data = c0;
  int64_t ci[CK_MAXR] = {0};
  bool empty = false;
  for (int i = 0; i < k->rc; i++) empty = empty || dc[i] == 0;
  while (!empty) {
    double mag;
    TFE_T want = TFE_CAT(ck_ref_, TFE_S)(k, alpha, &A, binary ? &B : NULL, beta, TFE_CAT(ck_get_, TFE_S)(&C0, ci), ci,
                                         &mag);
    TFE_T got = TFE_CAT(ck_get_, TFE_S)(&C, ci);
    double err = TFE_FN(sr_dist)(got, want), tol = TFE_FLOAT ? 1e-5 * (mag + 1) : 1e-9 * (mag + 1);
    if (!(err <= tol))
      fail_msg("%s %s on '%s': element off by %g (tolerance %g; ranks %d %d %d)", TFE_STR(TFE_S),
               tfe_prim_op_name(k->op), be->name, err, tol, k->ra, k->rb, k->rc);
    int i = 0;
    for (; i < k->rc; i++) {
      if (++ci[i] < dc[i]) break;
      ci[i] = 0;
    }
    if (i == k->rc) break;
  }
  free(pa); free(pb); free(pc); free(c0);
}
/* Random cases of one primitive through be's slot. */
static void TFE_CAT(ck_slot_, TFE_S)(const tfe_prims_backend *be, tfe_prim_op op, int cases, uint64_t seed) {
  tu_rng r = {seed | 1};
  for (int c = 0; c < cases; c++) {
    ck_case k;
    ck_random_case(&r, op, &k);
    TFE_CAT(ck_case_, TFE_S)(be, &k, &r, false);
  }
}
/* Random contractions (every primitive's shape) through the entry points on be. */
static void TFE_CAT(ck_entry_, TFE_S)(const tfe_prims_backend *be, int cases, uint64_t seed) {
  tu_rng r = {seed | 1};
  for (int c = 0; c < cases; c++) {
    ck_case k;
    ck_random_case(&r, (tfe_prim_op)(c % TFE_PRIM_COUNT), &k);
    TFE_CAT(ck_case_, TFE_S)(be, &k, &r, true);
  }
}

/* ---- the linalg slot (float kinds): results checked by reconstruction ------------------------ */
#if TFE_FLOAT
/* y = a b for column-major dense n x n (or n x m) matrices, naive. */
static void TFE_CAT(ck_mm_, TFE_S)(const TFE_T *a, const TFE_T *b, TFE_T *y, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      TFE_T s = 0;
      for (int64_t p = 0; p < k; p++) s += a[i + m * p] * b[p + k * j];
      y[i + m * j] = s;
    }
}
static double TFE_CAT(ck_diff_, TFE_S)(const TFE_T *x, const TFE_T *y, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = TFE_FN(sr_dist)(x[i], y[i]);
    if (e > d) d = e;
  }
  return d;
}
/* The elements of a tensor in column-major order. */
static void TFE_CAT(ck_dense_, TFE_S)(const TFE_TY(view) *v, TFE_T *out) {
  int64_t idx[CK_MAXR] = {0}, n = tfe_layout_numel(&v->lay);
  for (int64_t e = 0; e < n; e++) {
    out[e] = TFE_CAT(ck_get_, TFE_S)(v, idx);
    for (int i = 0; i < v->lay.rank; i++) {
      if (++idx[i] < v->lay.dims[i]) break;
      idx[i] = 0;
    }
  }
}
static void TFE_CAT(ck_linalg_, TFE_S)(const tfe_prims_backend *be, int cases, uint64_t seed) {
  tu_rng r = {seed | 1};
  double tol = sizeof(TFE_R) == 4 ? 2e-3 : 1e-9;
  for (int c = 0; c < cases; c++) {
    int64_t n = tu_int(&r, 1, 5), dims[2] = {n, n};
    TFE_TY(view) A;
    int64_t len = ck_layout(&r, &A.lay, 2, dims, false);
    TFE_T *buf = TFE_CAT(ck_buf_, TFE_S)(&r, len), a[25], x[25], y[25], id[25];
    A.data = buf;
    A.conj = TFE_CPLX && tu_int(&r, 0, 1);
    for (int64_t i = 0; i < n; i++) { /* diagonally dominant: well conditioned */
      int64_t ii[2] = {i, i};
      TFE_T v = TFE_CAT(ck_get_, TFE_S)(&A, ii) + (TFE_T)(4.0 * (double)n);
      assert_int_equal(TFE_FN(set)(&A, ii, v), TFE_OK);
    }
    TFE_CAT(ck_dense_, TFE_S)(&A, a);
    for (int64_t i = 0; i < n * n; i++) id[i] = i % (n + 1) == 0 ? 1 : 0;
    const TFE_TY(view) *pA = &A;
    /* inv: A X = I */
    TFE_TY(tensor) X = {0}, *pX = &X;
    void *inv_args[] = {(void *)&pA, (void *)&pX};
    tfe_linalg_call ci = {TFE_LA_INV, TFE_DT, 2, inv_args};
    if (be->linalg(be, &ci) != TFE_OK) fail_msg("inv on '%s': %s", be->name, tfe_last_error());
    TFE_CAT(ck_mm_, TFE_S)(a, X.v.data, y, n, n, n);
    if (TFE_CAT(ck_diff_, TFE_S)(y, id, n * n) > tol) fail_msg("%s inv on '%s' is off", TFE_STR(TFE_S), be->name);
    /* qr: Q R = A */
    TFE_TY(tensor) Q = {0}, R = {0}, *pQ = &Q, *pR = &R;
    bool full = false;
    void *qr_args[] = {(void *)&pA, (void *)&full, (void *)&pQ, (void *)&pR};
    tfe_linalg_call cq = {TFE_LA_QR, TFE_DT, 4, qr_args};
    assert_int_equal(be->linalg(be, &cq), TFE_OK);
    TFE_CAT(ck_mm_, TFE_S)(Q.v.data, R.v.data, x, n, n, n);
    if (TFE_CAT(ck_diff_, TFE_S)(x, a, n * n) > tol * 4 * (double)n) fail_msg("%s qr on '%s' is off", TFE_STR(TFE_S), be->name);
    /* solve: A X = B */
    TFE_TY(view) Bv;
    int64_t bl = ck_layout(&r, &Bv.lay, 2, dims, true);
    TFE_T *bbuf = TFE_CAT(ck_buf_, TFE_S)(&r, bl), b[25];
    Bv.data = bbuf;
    Bv.conj = false;
    TFE_CAT(ck_dense_, TFE_S)(&Bv, b);
    const TFE_TY(view) *pB = &Bv;
    TFE_TY(tensor) S = {0}, *pS = &S;
    void *solve_args[] = {(void *)&pA, (void *)&pB, (void *)&pS};
    tfe_linalg_call cs = {TFE_LA_SOLVE, TFE_DT, 3, solve_args};
    assert_int_equal(be->linalg(be, &cs), TFE_OK);
    TFE_CAT(ck_mm_, TFE_S)(a, S.v.data, y, n, n, n);
    if (TFE_CAT(ck_diff_, TFE_S)(y, b, n * n) > tol * 8 * (double)n) fail_msg("%s solve on '%s' is off", TFE_STR(TFE_S), be->name);
    /* a malformed call is refused */
    tfe_linalg_call bad = {TFE_LA_SOLVE, TFE_DT, 2, solve_args};
    assert_int_not_equal(be->linalg(be, &bad), TFE_OK);
    TFE_FN(tensor_release)(&X); TFE_FN(tensor_release)(&Q); TFE_FN(tensor_release)(&R); TFE_FN(tensor_release)(&S);
    free(buf); free(bbuf);
  }
}
#endif
#endif
