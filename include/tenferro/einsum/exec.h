/* tenferro/einsum/exec.h — einsum room: what executing a plan needs besides the kind: the
 * arena workspace, the per-step profiling hook, and the backend a call runs on.
 *
 * The backend of a call is chosen once (prims/registry.h: the explicit opts.backend, the
 * operands' compute device, their memory space) and every step of the plan runs on it: a
 * step's contraction calls the backend's slots (prims/contract_tpl.h), an elementwise step
 * its elementwise_mul slot. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_EINSUM_EXEC_H
#define TENFERRO_EINSUM_EXEC_H
#include <tenferro/einsum/plan.h>

/* ---- per-step profile ---------------------------------------------------------------------------- */
/* What one executed step did, for a profiling hook: which pairwise step (leaf reductions are
 * reported with step = -1 - q), what ran (a GEMM-class contraction, an elementwise product,
 * a reduction), its multiply-adds and output elements, and its wall time. */
typedef struct tfe_einsum_step_info {
  int step, nsteps;
  int64_t slice;             /* 0 .. nslices-1 */
  const char *what;          /* "contract", "zip" or "reduce" */
  int rank_a, rank_b, rank_c;
  double flops;              /* multiply-adds (product of the sizes of every label involved) */
  double out_elems;
  double seconds;
  /* the step's views (b NULL for a reduction) and their dense label ids: valid during the call */
  const tfe_layout *lay_a, *lay_b, *lay_c;
  const int32_t *lab_a, *lab_b, *lab_c;
} tfe_einsum_step_info;
typedef void (*tfe_einsum_step_hook)(void *ctx, const tfe_einsum_step_info *info);
typedef struct tfe__ein_hook_t { _Atomic(tfe_einsum_step_hook) fn; _Atomic(void *) ctx; } tfe__ein_hook_t;
/* Calls fn(ctx, info) after every step of every plan execution in the process (NULL: off, the
 * default; then nothing is timed). For profiling: the hook runs on the calling thread, between
 * steps, and must not call einsum itself. */
TFE_API void tfe_einsum_set_step_hook(tfe_einsum_step_hook fn, void *ctx);

/* ---- progress and cancellation ------------------------------------------------------------------- */
/* Sets the progress callback of the calling thread's einsum executions (NULL: off, the
 * default; then nothing is counted or timed). opts.progress of a call takes precedence. The
 * callback runs after every step (and once before the first), never concurrently with itself,
 * on a thread of the call; a non-zero return stops the call before its next step: it frees
 * what it allocated, leaves the output untouched and returns TFE_ERR_CANCELLED. It must not
 * call einsum itself. docs/einsum.md "Progress and cancellation". */
TFE_API void tfe_einsum_set_progress(tfe_einsum_progress_fn fn, void *ctx);
/* The calling thread's callback (NULL: none), its context in *ctx when ctx is not NULL. */
TFE_API tfe_einsum_progress_fn tfe_einsum_get_progress(void **ctx);

typedef struct tfe__ein_progress_set { tfe_einsum_progress_fn fn; void *ctx; } tfe__ein_progress_set;
/* One execution's progress (exec.h: tfe__progress_begin / tfe__progress_step / _end); fn NULL
 * when off. */
typedef struct tfe__ein_prog {
  tfe_einsum_progress_fn fn;
  void *ctx;
  int npre, nsteps;
  double t0;
  double *madds;          /* per slice: leaf reduction q at [q], pairwise step k at [npre + k] */
  double *live;           /* bytes of intermediates live after step time t (0: leaf reductions) */
  tfe_einsum_progress_info info;
  tfe__lock lock;         /* around info */
  atomic_int busy;        /* a thread is in the callback: others skip their report */
  atomic_int cancelled;
} tfe__ein_prog;

/* ---- the execution workspace -------------------------------------------------------------------- */
/* The arena of a big network is hundreds of MiB: fresh pages on every call cost a page fault
 * per 4 KiB (more than the copies that fill them). The last arena is kept for the next call
 * (core/workspace.h); huge pages are asked for before the first touch. */
/* Frees the workspace kept for the next einsum call (it is otherwise kept until exit). */
TFE_API void tfe_einsum_workspace_release(void);

#endif
#elif !defined(TENFERRO_EINSUM_EXEC_BODY) /* bodies */
#define TENFERRO_EINSUM_EXEC_BODY
#include <tenferro/einsum/plan.h>

TFE_API void tfe_einsum_set_step_hook(tfe_einsum_step_hook fn, void *ctx) {
  atomic_store(&tfe__st.einsum.hook.ctx, ctx);
  atomic_store(&tfe__st.einsum.hook.fn, fn);
}
/* Multiply-adds of a step over views a (labels la) and b (lb; NULL for a reduction): the
 * product of the sizes of the distinct labels involved. */
TFE_INTERNAL double tfe__ein_step_flops(const tfe_layout *a, const int32_t *la, const tfe_layout *b,
                                        const int32_t *lb) {
  double f = 1;
  for (int i = 0; i < a->rank; i++) {
    bool seen = false;
    for (int j = 0; j < i; j++) seen = seen || la[j] == la[i];
    if (!seen) f *= (double)a->dims[i];
  }
  for (int i = 0; b && i < b->rank; i++) {
    bool seen = false;
    for (int j = 0; j < a->rank; j++) seen = seen || la[j] == lb[i];
    for (int j = 0; j < i; j++) seen = seen || lb[j] == lb[i];
    if (!seen) f *= (double)b->dims[i];
  }
  return f;
}
/* Reports one step to the hook (called only when a hook is set). */
TFE_INTERNAL void tfe__ein_report(tfe_einsum_step_hook fn, int step, int nsteps, int64_t slice, const char *what,
                                  const tfe_layout *a, const int32_t *la, const tfe_layout *b, const int32_t *lb,
                                  const tfe_layout *c, const int32_t *lc, double seconds) {
  tfe_einsum_step_info in;
  in.step = step; in.nsteps = nsteps; in.slice = slice; in.what = what;
  in.rank_a = a->rank; in.rank_b = b ? b->rank : 0; in.rank_c = c->rank;
  in.flops = tfe__ein_step_flops(a, la, b, lb);
  in.out_elems = (double)tfe_layout_numel(c);
  in.seconds = seconds;
  in.lay_a = a; in.lay_b = b; in.lay_c = c; in.lab_a = la; in.lab_b = lb; in.lab_c = lc;
  fn(atomic_load(&tfe__st.einsum.hook.ctx), &in);
}

/* ---- progress and cancellation ------------------------------------------------------------- */
TFE_API void tfe_einsum_set_progress(tfe_einsum_progress_fn fn, void *ctx) {
  tfe__ts.ein_progress.fn = fn;
  tfe__ts.ein_progress.ctx = fn ? ctx : NULL;
}
TFE_API tfe_einsum_progress_fn tfe_einsum_get_progress(void **ctx) {
  if (ctx) *ctx = tfe__ts.ein_progress.ctx;
  return tfe__ts.ein_progress.fn;
}
/* Makes the options' callback (o->progress; NULL: none, the thread's setting applies) the one
 * of the executions below this call; returns what to restore with tfe__ein_call_end. */
TFE_INTERNAL tfe__ein_progress_set tfe__ein_call_begin(const tfe_einsum_opts *o) {
  tfe__ein_progress_set saved = tfe__ts.ein_call;
  tfe__ts.ein_call.fn = o ? o->progress : NULL;
  tfe__ts.ein_call.ctx = o ? o->progress_ctx : NULL;
  return saved;
}
TFE_INTERNAL void tfe__ein_call_end(tfe__ein_progress_set saved) { tfe__ts.ein_call = saved; }
TFE_INTERNAL tfe_status tfe__progress_step(tfe__ein_prog *g, int i, int slice_done);
/* Starts the progress of one execution of p: off (g->fn NULL, nothing else done) unless the
 * call's options or the thread set a callback. Then counts each step's multiply-adds and the
 * bytes live after each step time, and reports the start (which may cancel). */
TFE_INTERNAL tfe_status tfe__progress_begin(tfe__ein_prog *g, const tfe_einsum_plan *p) {
  g->fn = tfe__ts.ein_call.fn ? tfe__ts.ein_call.fn : tfe__ts.ein_progress.fn;
  if (!g->fn) return TFE_OK;
  g->ctx = tfe__ts.ein_call.fn ? tfe__ts.ein_call.ctx : tfe__ts.ein_progress.ctx;
  g->npre = p->n > 1 ? p->npre : 0;
  g->nsteps = p->n > 1 ? p->nsteps : 1; /* one operand: the one unary step */
  g->madds = (double *)tfe__alloc((size_t)(2 * (g->npre + g->nsteps) + 2) * sizeof(double));
  if (!g->madds) { g->fn = NULL; return TFE_FAIL(TFE_ERR_ALLOC, "no memory for the progress counts"); }
  g->live = g->madds + g->npre + g->nsteps;
  memset(&g->info, 0, sizeof g->info);
  memset(&g->lock, 0, sizeof g->lock);
  atomic_store(&g->busy, 0);
  atomic_store(&g->cancelled, 0);
  double total = 0;
  tfe_layout A, B;
  if (p->n == 1) {
    tfe__ein_leaf_lay(p, 0, &A);
    g->madds[0] = tfe__ein_step_flops(&A, p->leaf[0].lab, NULL, NULL);
  }
  for (int q = 0; p->n > 1 && q < g->npre; q++) { /* the leaf itself, not its reduction */
    tfe__ein_leaf_lay(p, p->pre[q].a, &A);
    g->madds[q] = tfe__ein_step_flops(&A, p->leaf[p->pre[q].a].lab, NULL, NULL);
  }
  for (int k = 0; p->n > 1 && k < g->nsteps; k++) {
    const int32_t *la, *lb;
    const tfe_layout *pa = tfe__ein_node_lay(p, p->step[k].a, &A, &la), *pb = tfe__ein_node_lay(p, p->step[k].b, &B, &lb);
    g->madds[g->npre + k] = tfe__ein_step_flops(pa, la, pb, lb);
  }
  for (int i = 0; i < g->npre + g->nsteps; i++) total += g->madds[i];
  for (int t = 0; t <= g->nsteps + 1; t++) g->live[t] = 0;
  for (int i = 0; p->n > 1 && i < p->nbuf; i++) { /* buffer i is live over step times [from, to] */
    int a = p->buf_from[i] < 0 ? 0 : p->buf_from[i], b = p->buf_to[i] > g->nsteps ? g->nsteps : p->buf_to[i];
    if (a <= b) { g->live[a] += (double)p->buf_bytes[i]; g->live[b + 1] -= (double)p->buf_bytes[i]; }
  }
  for (int t = 1; t <= g->nsteps; t++) g->live[t] += g->live[t - 1];
  int64_t ns = p->nslices > 1 ? p->nslices : 1;
  g->info.steps_total = (int64_t)(g->npre + g->nsteps) * ns;
  g->info.slices_total = ns;
  g->info.madds_total = total * (double)ns;
  g->t0 = tfe__now();
  return tfe__progress_step(g, -1, 0);
}
TFE_INTERNAL void tfe__progress_end(tfe__ein_prog *g) {
  if (g->fn) tfe__free(g->madds);
  g->fn = NULL;
}
/* Reports that step i of the current slice is done (i: leaf reduction q, npre + k for pairwise
 * step k; -1: nothing yet) and, with slice_done, that a slice ended; then calls the callback
 * unless another thread is in it. TFE_ERR_CANCELLED once the callback asked to stop (any
 * thread's later report returns it too), except after the very last step. */
TFE_INTERNAL tfe_status tfe__progress_step(tfe__ein_prog *g, int i, int slice_done) {
  tfe__lock_take(&g->lock);
  if (i >= 0) {
    g->info.steps_done++;
    g->info.madds_done += g->madds[i];
    int t = i < g->npre ? 0 : i - g->npre + 1;
    g->info.live_bytes = g->live[t < g->nsteps ? t : g->nsteps];
  }
  g->info.slices_done += slice_done;
  bool last = g->info.steps_done == g->info.steps_total;
  tfe_einsum_progress_info in = g->info;
  tfe__lock_give(&g->lock);
  in.seconds = tfe__now() - g->t0;
  int no = 0;
  if (atomic_compare_exchange_strong(&g->busy, &no, 1)) {
    if (g->fn(g->ctx, &in) != 0) atomic_store(&g->cancelled, 1);
    atomic_store(&g->busy, 0);
  }
  if (last || !atomic_load(&g->cancelled)) return TFE_OK;
  return TFE_FAIL(TFE_ERR_CANCELLED, "cancelled by the progress callback after %lld of %lld steps (%.3g s)",
                  (long long)in.steps_done, (long long)in.steps_total, in.seconds);
}

/* A run replayed as a whole (a device's recorded sequence, einsum_tpl.h ein_run_seq_): every
 * step and slice done at once, one report (the last: it cannot cancel, the work is queued). */
TFE_INTERNAL void tfe__progress_all(tfe__ein_prog *g) {
  tfe__lock_take(&g->lock);
  g->info.steps_done = g->info.steps_total - 1;
  g->info.madds_done = g->info.madds_total - g->madds[g->npre + g->nsteps - 1];
  g->info.slices_done = g->info.slices_total - 1;
  tfe__lock_give(&g->lock);
  (void)tfe__progress_step(g, g->npre + g->nsteps - 1, 1);
}
/* The counts back to none done (the steps run once more: a discarded recording). */
TFE_INTERNAL void tfe__progress_rewind(tfe__ein_prog *g) {
  tfe__lock_take(&g->lock);
  g->info.steps_done = 0, g->info.madds_done = 0, g->info.slices_done = 0;
  tfe__lock_give(&g->lock);
}

/* ---- the arena workspace --------------------------------------------------------------------- */
/* A workspace of at least `bytes` (64-byte aligned), NULL on failure (message set). */
TFE_INTERNAL void *tfe__ein_ws_get(size_t bytes) {
  bool fresh;
  void *p = tfe__ws_get(&tfe__st.einsum.ws, bytes, &fresh);
  if (p && fresh) tfe__kadvise_huge(p, bytes);
  return p;
}
TFE_INTERNAL void tfe__ein_ws_put(void *p) { tfe__ws_put(&tfe__st.einsum.ws, p); }
TFE_API void tfe_einsum_workspace_release(void) { tfe__ws_release(&tfe__st.einsum.ws); }

/* ---- a plan's run as one sequence of the backend's calls (prims/backend.h, the seq slot) ------- */
TFE_INTERNAL void tfe__ein_owner_retain(void *p) { tfe_einsum_plan_retain((tfe_einsum_plan *)p); }
TFE_INTERNAL void tfe__ein_owner_release(void *p) { tfe_einsum_plan_release((tfe_einsum_plan *)p); }
/* Key words of one view: its address, conjugation and layout (key at n; returns the new n). */
TFE_INTERNAL size_t tfe__ein_key_view(int64_t *key, size_t n, const void *data, bool conj, const tfe_layout *l) {
  key[n++] = (int64_t)(intptr_t)data, key[n++] = conj, key[n++] = l->rank, key[n++] = l->offset;
  for (int i = 0; i < l->rank; i++) key[n++] = l->dims[i], key[n++] = l->strides[i];
  return n;
}

/* ---- the backend of a call ------------------------------------------------------------------- */
/* Whether the plan's stored contraction plans (made for the CPU's engines) serve backend be:
 * every slot a step may call is the CPU's own. */
TFE_INTERNAL bool tfe__ein_stored_ok(const tfe_prims_backend *be) {
  return tfe__be_native(be, TFE_PRIM_CONTRACT) && tfe__be_native(be, TFE_PRIM_BATCHED_GEMM) &&
         tfe__be_native(be, TFE_PRIM_REDUCE) && tfe__be_native(be, TFE_PRIM_TRACE) &&
         tfe__be_native(be, TFE_PRIM_PERMUTE) && tfe__be_native(be, TFE_PRIM_ANTI_DIAG);
}
/* ---- slices in parallel ------------------------------------------------------------------------ */
/* How many slices of p run at once on backend be (einsum_tpl.h, ein_run_par_): the plan's
 * slice_workers (the memory limit was divided among that many), at most the thread count and
 * the slice count. 1 (one slice after another) with a profiling hook set (it reports from the
 * calling thread), on a backend other than the CPU's own, inside a parallel region, and in a
 * build without OpenMP. */
TFE_INTERNAL int tfe__ein_workers(const tfe_einsum_plan *p, const tfe_prims_backend *be) {
#ifdef _OPENMP
  if (p->n < 2 || p->nslices < 2 || p->slice_workers < 2 || p->tmp_buf < 0) return 1;
  if (atomic_load(&tfe__st.einsum.hook.fn) || !tfe__ein_stored_ok(be) || be->mem_alloc != NULL ||
      be->space.kind != TFE_MEM_HOST || omp_in_parallel())
    return 1;
  int w = tfe_get_num_threads();
  if (w > p->slice_workers) w = p->slice_workers;
  if ((int64_t)w > p->nslices) w = (int)p->nslices;
  return w < 1 ? 1 : w;
#else
  (void)p; (void)be;
  return 1;
#endif
}

/* Whether an elementwise step c = a * b (labels la, lb, lc) has every label in all three
 * operands once: the shape of the elementwise_mul primitive. */
TFE_INTERNAL bool tfe__ein_all_shared(const int32_t *la, int ra, const int32_t *lb, int rb, const int32_t *lc, int rc) {
  if (ra != rc || rb != rc) return false;
  for (int i = 0; i < rc; i++)
    if (tfe__pb_count(la, ra, lc[i]) != 1 || tfe__pb_count(lb, rb, lc[i]) != 1 || tfe__pb_count(lc, rc, lc[i]) != 1)
      return false;
  return true;
}
/* The backend of an einsum over n operands whose storage is st[k] (NULL: a plain view), with
 * the explicit choice and transfer wish of the options. */
TFE_INTERNAL tfe_status tfe__ein_backend(const tfe_einsum_opts *o, int n, tfe_storage *const *st,
                                         const tfe_prims_backend **out, const char *where) {
  const tfe_prims_backend *explicit_be = o ? o->backend : NULL;
  bool transfer = o && o->allow_transfer;
  tfe_operand_place small[16] = {{NULL, NULL}}, *ops = n <= 16 ? small : (tfe_operand_place *)tfe__alloc((size_t)n * sizeof *ops);
  if (!ops) return TFE_ERR_ALLOC;
  for (int k = 0; k < n; k++) { ops[k].name = NULL; ops[k].st = st ? st[k] : NULL; }
  tfe_status s = tfe__be_select_at(explicit_be, n, ops, transfer, out, NULL, where);
  for (int k = 0; s == TFE_OK && transfer && k < n; k++) {
    tfe_memspace sp = tfe__be_place_space(&ops[k]);
    if (!tfe__be_same_space(sp, (*out)->space)) {
      char a[32], b[32];
      s = tfe__fail(TFE_ERR_UNSUPPORTED, where,
                    "operand %d is in %s memory and backend '%s' computes in %s memory: transfers between memory "
                    "spaces arrive with the runtime room; move it first",
                    k, tfe__be_space_str(sp, a, sizeof a), (*out)->name, tfe__be_space_str((*out)->space, b, sizeof b));
    }
  }
  if (ops != small) tfe__free(ops);
  return s;
}
#endif
