/* tenferro/prims/backend.h — prims room: the backend protocol.
 *
 * A backend is one vtable (tfe_prims_backend). Its slots are the primitive operations over
 * dtype-tagged views (tfe_dyn), each described in label form by a tfe_prim_desc (describe),
 * optionally planned once (plan) and executed any number of times (execute), plus one slot
 * for the decompositions and solvers of the linalg room. Slots may be NULL: the six core
 * operations are what the contraction engine lowers to, contract and elementwise_mul are
 * extensions; callers ask tfe_prims_supports() at run time, and tfe_prims_execute() answers
 * TFE_ERR_UNSUPPORTED.
 *
 * Every slot receives the vtable it was called through (`be`; be->ctx is the backend's own
 * data). A slot that forwards to another backend passes that backend's vtable, e.g. a
 * counting GEMM that calls the CPU's:
 *     const tfe_prims_backend *cpu = tfe_backend_find("cpu");
 *     return cpu->exec[TFE_PRIM_BATCHED_GEMM](cpu, d, plan);
 *
 * The CPU backend (tfe_prims_cpu(), cpu_backend.h) is one instance of this vtable: its slots
 * are tenferro's CPU engines. Einsum, the contraction entry points, the elementwise steps of
 * einsum and the linalg entry points call the slots of the backend chosen for the call
 * (registry.h: explicit argument, compute device, memory space). Where a slot is the CPU's
 * own, the call goes straight to the engine (no descriptor is built); where it is another
 * function, that function gets the label-form descriptor. So a copy of the CPU vtable with
 * one slot replaced (say batched_gemm) keeps every other engine and has einsum call its
 * slot for the GEMM phase of every contraction (examples/custom_backend.c).
 *
 * Custom semirings plug in at the level they choose: a kind stamped from the templates gets
 * the CPU backend's generic kernels for free; a copy of tfe_prims_cpu() with its own
 * batched_gemm slot keeps everything else; or a whole vtable replaces the protocol. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_PRIMS_BACKEND_H
#define TENFERRO_PRIMS_BACKEND_H
#include <tenferro/tensor/tensor.h>
#include <tenferro/kernel/kernel.h> /* tfe_ew_desc */
#include <tenferro/prims/labels.h> /* tfe__labmap */

/* The CPU backend's slots (cpu_backend.h), one per program (TFE_SHARED_FN). */
#define tfe__cpu_exec TFE_CAT(tfe__cpu_exec_r, TFE_MAX_RANK)
#define tfe__cpu_linalg TFE_CAT(tfe__cpu_linalg_r, TFE_MAX_RANK)
#define tfe__cpu_elementwise TFE_CAT(tfe__cpu_elementwise_r, TFE_MAX_RANK)

typedef enum tfe_prim_op {
  TFE_PRIM_BATCHED_GEMM,   /* C[b,m,n] = alpha sum_k A[b,m,k] B[b,k,n] + beta C (labels: batch, M, N, K only) */
  TFE_PRIM_REDUCE,         /* C = alpha sum over the labels of A missing in C + beta C (no repeats) */
  TFE_PRIM_TRACE,          /* A has repeated labels: C = alpha sum of the diagonal + beta C */
  TFE_PRIM_PERMUTE,        /* C = alpha A (labels of C a permutation of A's) + beta C */
  TFE_PRIM_ANTI_TRACE,     /* adjoint of trace: C has repeated labels, A broadcasts onto the diagonal */
  TFE_PRIM_ANTI_DIAG,      /* adjoint of diagonal extraction: A is written on C's diagonal */
  TFE_PRIM_CONTRACT,       /* extension: any binary contraction (tfe_contract_S rules) */
  TFE_PRIM_ELEMENTWISE_MUL,/* extension: C = alpha A*B + beta C, all labels shared */
  TFE_PRIM_COUNT
} tfe_prim_op;

/* describe: the operation, its operands and labels. Scalars point at values of the dtype.
 * Every label of a primitive is an int32; a label repeated within one operand means its
 * diagonal (the tfe_contract_S rules, docs/prims.md). */
typedef struct tfe_prim_desc {
  tfe_prim_op op;
  const tfe_dyn *a, *b, *c; /* b is NULL for unary operations */
  const int32_t *la, *lb, *lc;
  const void *alpha, *beta;
} tfe_prim_desc;

/* One call of a linalg entry point, as the linalg slot sees it: which function (a
 * tfe_linalg_op of linalg/linalg.h), the element kind of its first operand, and pointers to
 * its arguments in the order of the typed function (tfe_svd_S(A, mode, U, S, Vh): args[0]
 * points at A, args[1] at mode, ...). */
typedef struct tfe_linalg_call {
  int op;
  tfe_dtype dtype;
  int nargs;
  void *const *args;
} tfe_linalg_call;

/* Backend flags. */
#define TFE_BACKEND_INFER 1u /* may be chosen by inference from the operands' memory space */

/* A sequence of a backend's calls that an executor makes again and again (einsum runs a held
 * plan's steps): the backend may record it once and replay it (CUDA graphs, gpu/graph.h).
 * The executor calls the seq slot with TFE_SEQ_BEGIN before the calls and, unless the answer
 * was TFE_SEQ_DONE, with TFE_SEQ_END after them (status: their result); equal keys (bytes)
 * must mean equal calls on equal addresses and scalars. `owner` (the plan the key names) is
 * kept by owner_retain / owner_release while the backend keeps a recording of it, so its
 * address cannot be reused meanwhile. Answers in `action`: BEGIN gives TFE_SEQ_RUN (make the
 * calls now) or TFE_SEQ_DONE (replayed: the calls were queued, skip them; no END); END gives
 * TFE_SEQ_DONE or TFE_SEQ_AGAIN (the recording was discarded and nothing ran: make the calls
 * once more, with no END after them). A backend without the slot (NULL) sees only the calls. */
enum { TFE_SEQ_BEGIN = 0, TFE_SEQ_END = 1 };
enum { TFE_SEQ_RUN = 0, TFE_SEQ_DONE = 1, TFE_SEQ_AGAIN = 2 };
typedef struct tfe_seq_desc {
  int op;                 /* TFE_SEQ_BEGIN, TFE_SEQ_END */
  const void *key;        /* BEGIN: identifies the calls */
  size_t key_bytes;
  void *owner;            /* BEGIN: what the key refers to (NULL: nothing to keep) */
  void (*owner_retain)(void *owner), (*owner_release)(void *owner);
  tfe_status status;      /* END: the result of the calls */
  int action;             /* out: TFE_SEQ_RUN / TFE_SEQ_DONE / TFE_SEQ_AGAIN */
  void *token;            /* the backend's, from BEGIN to END */
} tfe_seq_desc;

typedef struct tfe_prims_backend tfe_prims_backend;
struct tfe_prims_backend {
  const char *name;
  void *ctx;
  tfe_memspace space; /* the memory its slots read and write */
  unsigned flags;     /* TFE_BACKEND_* */
  /* Optional: analyse once (NULL slot = nothing to plan); *plan may stay NULL. */
  tfe_status (*plan)(const tfe_prims_backend *be, const tfe_prim_desc *d, void **plan);
  void (*plan_free)(const tfe_prims_backend *be, void *plan);
  /* One slot per operation; NULL = not provided. */
  tfe_status (*exec[TFE_PRIM_COUNT])(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan);
  /* Decompositions and solvers (linalg room); NULL = not provided. */
  tfe_status (*linalg)(const tfe_prims_backend *be, const tfe_linalg_call *call);
  /* The kernel room's elementwise operations (copy, fill, scale, axpby, map, zip, reduce:
   * kernel/kernel.h, tfe_ew_desc); NULL = not provided. */
  tfe_status (*elementwise)(const tfe_prims_backend *be, const tfe_ew_desc *d);
  /* Memory in the backend's space, for the buffers tenferro allocates on its behalf (einsum's
   * intermediates and results). All three NULL: host memory from tenferro's allocator. */
  tfe_status (*mem_alloc)(const tfe_prims_backend *be, size_t bytes, void **out);
  void (*mem_free)(const tfe_prims_backend *be, void *p);
  /* bytes from src to dst, each in its own space (host, or this backend's). */
  tfe_status (*mem_copy)(const tfe_prims_backend *be, void *dst, tfe_memspace dst_space, const void *src,
                         tfe_memspace src_space, size_t bytes);
  /* Optional: record and replay a sequence of calls (tfe_seq_desc above); NULL = none. */
  tfe_status (*seq)(const tfe_prims_backend *be, tfe_seq_desc *d);
};

TFE_API const char *tfe_prim_op_name(tfe_prim_op op);

TFE_API bool tfe_prims_supports(const tfe_prims_backend *be, tfe_prim_op op);

/* plan (may be skipped: execute with plan == NULL plans on the fly where the backend needs it). */
TFE_API tfe_status tfe_prims_plan(const tfe_prims_backend *be, const tfe_prim_desc *d, void **plan);
TFE_API tfe_status tfe_prims_execute(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan);
TFE_API void tfe_prims_plan_free(const tfe_prims_backend *be, void *plan);

/* The CPU backend's vtable: all eight operations, linalg and elementwise; host memory. Copy
 * it to override single slots. */
TFE_API tfe_prims_backend tfe_prims_cpu(void);

/* Memory in be's space (host memory where be has no memory slots); bytes == 0 gives NULL. */
TFE_API tfe_status tfe_backend_alloc(const tfe_prims_backend *be, size_t bytes, void **out);
TFE_API void tfe_backend_free(const tfe_prims_backend *be, void *p);
/* A storage of `bytes` in be's space, freed through be (refcount 1). */
TFE_API tfe_status tfe_backend_storage_new(const tfe_prims_backend *be, size_t bytes, tfe_storage **out);

#endif
#elif !defined(TENFERRO_PRIMS_BACKEND_BODY) /* bodies */
#define TENFERRO_PRIMS_BACKEND_BODY
#include <tenferro/tensor/tensor.h>

/* The CPU backend's slots (cpu_backend.h): the engines compare slots against them. */
TFE_SHARED_FN tfe_status tfe__cpu_exec(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan);
TFE_SHARED_FN tfe_status tfe__cpu_linalg(const tfe_prims_backend *be, const tfe_linalg_call *call);
TFE_SHARED_FN tfe_status tfe__cpu_elementwise(const tfe_prims_backend *be, const tfe_ew_desc *d);

/* Whether op runs in tenferro's own CPU code under be: the CPU's slot, or no slot at all
 * (the engine's glue then runs on the host). */
TFE_INTERNAL bool tfe__be_native(const tfe_prims_backend *be, tfe_prim_op op) {
  return be->exec[op] == tfe__cpu_exec || be->exec[op] == NULL;
}

/* A kind's CPU code enters the CPU slots' tables on the kind's first typed call (a load and a
 * compare after that). The slots themselves name no kind, so a unit that calls einsum on f64
 * does not compile the eleven other kinds' engines and LAPACKE code. */
TFE_INTERNAL void tfe__cpu_enroll(tfe_dtype dt, tfe__cpu_kind_fn fn) {
  if ((unsigned)dt >= (unsigned)TFE_DT_COUNT) return; /* a user kind: its own typed entries only */
  if (atomic_load_explicit(&tfe__st.prims.cpu_kind[dt], memory_order_relaxed) != fn)
    atomic_store_explicit(&tfe__st.prims.cpu_kind[dt], fn, memory_order_relaxed);
}
TFE_INTERNAL void tfe__cpu_enroll_ew(tfe_dtype dt, tfe__cpu_ew_fn fn) {
  if ((unsigned)dt >= (unsigned)TFE_DT_COUNT) return;
  if (atomic_load_explicit(&tfe__st.prims.cpu_ew[dt], memory_order_relaxed) != fn)
    atomic_store_explicit(&tfe__st.prims.cpu_ew[dt], fn, memory_order_relaxed);
}
TFE_INTERNAL void tfe__cpu_enroll_la(tfe_dtype dt, tfe__cpu_la_fn fn) {
  if ((unsigned)dt >= (unsigned)TFE_DT_COUNT) return;
  if (atomic_load_explicit(&tfe__st.prims.cpu_la[dt], memory_order_relaxed) != fn)
    atomic_store_explicit(&tfe__st.prims.cpu_la[dt], fn, memory_order_relaxed);
}
/* Every kind this unit compiles (cpu_backend.h): for the entries whose kind is known only at
 * run time (the dtype-tagged layer, and the vtable handed to users). */
TFE_INTERNAL void tfe__cpu_enroll_all(void);
/* The CPU vtable as the registry holds it (no enrolment: its slots reach the kinds enrolled). */
TFE_INTERNAL tfe_prims_backend tfe__prims_cpu_bare(void);

TFE_API const char *tfe_prim_op_name(tfe_prim_op op) {
  static const char *const n[] = {"batched_gemm", "reduce", "trace", "permute", "anti_trace",
                                  "anti_diag", "contract", "elementwise_mul"};
  return (unsigned)op < (unsigned)TFE_PRIM_COUNT ? n[op] : "unknown";
}
TFE_API bool tfe_prims_supports(const tfe_prims_backend *be, tfe_prim_op op) {
  return be && (unsigned)op < (unsigned)TFE_PRIM_COUNT && be->exec[op] != NULL;
}
TFE_API tfe_status tfe_prims_plan(const tfe_prims_backend *be, const tfe_prim_desc *d, void **plan) {
  tfe__cpu_enroll_all();
  TFE_CHECK_NULL(be);
  TFE_CHECK_NULL(d);
  TFE_CHECK_NULL(plan);
  *plan = NULL;
  if (!tfe_prims_supports(be, d->op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' does not provide %s", be->name, tfe_prim_op_name(d->op));
  return be->plan ? be->plan(be, d, plan) : TFE_OK;
}
TFE_API tfe_status tfe_prims_execute(const tfe_prims_backend *be, const tfe_prim_desc *d, void *plan) {
  tfe__cpu_enroll_all();
  TFE_CHECK_NULL(be);
  TFE_CHECK_NULL(d);
  if (!tfe_prims_supports(be, d->op))
    return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' does not provide %s", be->name, tfe_prim_op_name(d->op));
  return be->exec[d->op](be, d, plan);
}
TFE_API void tfe_prims_plan_free(const tfe_prims_backend *be, void *plan) {
  if (be && plan && be->plan_free) be->plan_free(be, plan);
}

/* ---- memory in a backend's space ------------------------------------------------------------ */
TFE_API tfe_status tfe_backend_alloc(const tfe_prims_backend *be, size_t bytes, void **out) {
  TFE_CHECK_NULL(be);
  TFE_CHECK_NULL(out);
  *out = NULL;
  if (bytes == 0) return TFE_OK;
  if (!be->mem_alloc) {
    if (be->space.kind != TFE_MEM_HOST)
      return TFE_FAIL(TFE_ERR_UNSUPPORTED, "backend '%s' computes in device memory but has no mem_alloc slot", be->name);
    return (*out = tfe__alloc(bytes)) ? TFE_OK : TFE_ERR_ALLOC;
  }
  TFE_TRY(be->mem_alloc(be, bytes, out));
  if (!*out) return TFE_FAIL(TFE_ERR_ALLOC, "backend '%s' returned no memory for %zu bytes", be->name, bytes);
  return TFE_OK;
}
TFE_API void tfe_backend_free(const tfe_prims_backend *be, void *p) {
  if (!be || !p) return;
  if (be->mem_free) be->mem_free(be, p);
  else if (!be->mem_alloc) tfe__free(p);
}
TFE_INTERNAL void tfe__be_storage_free(void *ctx, void *p) { tfe_backend_free((const tfe_prims_backend *)ctx, p); }
TFE_API tfe_status tfe_backend_storage_new(const tfe_prims_backend *be, size_t bytes, tfe_storage **out) {
  TFE_CHECK_NULL(out);
  void *p = NULL;
  TFE_TRY(tfe_backend_alloc(be, bytes, &p));
  tfe_status st = tfe_storage_wrap(p, bytes, be->mem_alloc ? be->space : TFE_HOST, tfe__be_storage_free, (void *)be, out);
  if (st != TFE_OK) tfe_backend_free(be, p);
  return st;
}

/* ---- label checks per operation ------------------------------------------------------------ */
TFE_INTERNAL int tfe__pb_count(const int32_t *l, int n, int32_t x) {
  int c = 0;
  for (int i = 0; i < n; i++) c += l[i] == x;
  return c;
}
TFE_INTERNAL bool tfe__pb_repeats(const int32_t *l, int n) {
  uint64_t seen[TFE__LABMAP / 64] = {0}; /* small labels by a bit each, the others by a count */
  for (int i = 0; i < n; i++) {
    uint32_t x = (uint32_t)l[i];
    if (x >= TFE__LABMAP) {
      if (tfe__pb_count(l, n, l[i]) > 1) return true;
    } else if (seen[x / 64] >> (x % 64) & 1) return true;
    else seen[x / 64] |= (uint64_t)1 << (x % 64);
  }
  return false;
}
/* The primitive a unary contraction (labels la of rank ra onto lc of rank rc) is, or
 * TFE_PRIM_COUNT when it is none of them (repeats on both sides). */
TFE_INTERNAL tfe_prim_op tfe__pb_unary_op(const int32_t *la, int ra, const int32_t *lc, int rc) {
  bool rep_a = tfe__pb_repeats(la, ra), rep_c = tfe__pb_repeats(lc, rc);
  if (rep_a && rep_c) return TFE_PRIM_COUNT;
  if (rep_a) return TFE_PRIM_TRACE;
  if (rep_c) return TFE_PRIM_ANTI_DIAG;
  return ra == rc ? TFE_PRIM_PERMUTE : TFE_PRIM_REDUCE;
}
/* Checks that the labels have the shape the operation names (the general engine would accept
 * more; a backend implementing only the named primitive relies on this). */
TFE_INTERNAL tfe_status tfe__pb_check_labels(const tfe_prim_desc *d) {
  const char *w = "tfe_prims_execute";
  int ra = d->a->lay.rank, rc = d->c->lay.rank, rb = d->b ? d->b->lay.rank : 0;
  bool unary = d->op != TFE_PRIM_BATCHED_GEMM && d->op != TFE_PRIM_CONTRACT && d->op != TFE_PRIM_ELEMENTWISE_MUL;
  if (unary != (d->b == NULL)) return tfe__fail(TFE_ERR_INVALID, w, "%s takes %s", tfe_prim_op_name(d->op), unary ? "one input" : "two inputs");
  if ((ra > 0 && !d->la) || (rb > 0 && !d->lb) || (rc > 0 && !d->lc))
    return tfe__fail(TFE_ERR_NULL, w, "labels of %s are NULL", ra > 0 && !d->la ? "A" : rb > 0 && !d->lb ? "B" : "C");
  bool rep_a = tfe__pb_repeats(d->la, ra), rep_c = tfe__pb_repeats(d->lc, rc);
  switch (d->op) {
  case TFE_PRIM_REDUCE:
  case TFE_PRIM_PERMUTE:
    if (rep_a || rep_c) return tfe__fail(TFE_ERR_INVALID, w, "%s takes no repeated labels", tfe_prim_op_name(d->op));
    if (d->op == TFE_PRIM_PERMUTE && ra != rc) return tfe__fail(TFE_ERR_INVALID, w, "permute: C must carry every label of A");
    break;
  case TFE_PRIM_TRACE:
    if (!rep_a || rep_c) return tfe__fail(TFE_ERR_INVALID, w, "trace: A needs a repeated label, C none");
    break;
  case TFE_PRIM_ANTI_TRACE:
  case TFE_PRIM_ANTI_DIAG:
    if (rep_a || !rep_c) return tfe__fail(TFE_ERR_INVALID, w, "%s: C needs a repeated label, A none", tfe_prim_op_name(d->op));
    for (int i = 0; i < ra; i++)
      if (!tfe__pb_count(d->lc, rc, d->la[i])) return tfe__fail(TFE_ERR_INVALID, w, "%s: label %d of A is not in C", tfe_prim_op_name(d->op), (int)d->la[i]);
    break;
  case TFE_PRIM_BATCHED_GEMM:
  case TFE_PRIM_ELEMENTWISE_MUL:
    for (int i = 0; i < ra + rb + rc; i++) {
      int32_t x = i < ra ? d->la[i] : i < ra + rb ? d->lb[i - ra] : d->lc[i - ra - rb];
      int na = tfe__pb_count(d->la, ra, x), nb = tfe__pb_count(d->lb, rb, x), nc = tfe__pb_count(d->lc, rc, x);
      if (na > 1 || nb > 1 || nc > 1 || na + nb + nc < 2 || (d->op == TFE_PRIM_ELEMENTWISE_MUL && na + nb + nc != 3))
        return tfe__fail(TFE_ERR_INVALID, w, "%s: label %d is not a %s label", tfe_prim_op_name(d->op), (int)x,
                         d->op == TFE_PRIM_ELEMENTWISE_MUL ? "shared" : "batch, M, N or K");
    }
    break;
  default:
    break;
  }
  return TFE_OK;
}
#endif
