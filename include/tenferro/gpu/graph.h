/* tenferro/gpu/graph.h — gpu room, companion only: the backend's seq slot (prims/backend.h):
 * an einsum plan's steps captured once into a CUDA graph and replayed.
 *
 * The executor (einsum_tpl.h, ein_run_seq_) calls the slot around the steps of a plan run with
 * a key: the plan, the kind, alpha, beta, the operands' and the output's addresses, layouts
 * and conjugation flags, and the addresses of the intermediates. Equal keys mean equal calls
 * on equal addresses with equal scalars, so the launches (kernels with their parameter blocks
 * by value, cuBLAS GEMMs, device copies) are the same: a graph captured from one run, replayed
 * by one cuGraphLaunch, queues the same work.
 *   - a key seen for the first time runs as before (its kernels load, the workspace grows, the
 *     plan cache of binary contractions fills) and is remembered;
 *   - the second run with that key is captured from the device's queue (cuStreamBeginCapture,
 *     relaxed mode: nothing runs while capturing), instantiated and launched once;
 *   - later runs launch the graph (no step is analysed or queued on the host), as long as the
 *     queue and its workspace (the packing copies' block) are the ones captured; a workspace
 *     that moved means one more capture.
 * The device is held (its lock, context, queue) from the first step to the last, so no other
 * thread's work enters a capture; the steps' own enter/leave are no-ops meanwhile (device.h).
 * A capture that meets an allocation or free of the device's pools (a replay would not make
 * it: a temporary of a step, say), an error, or a refusal of the driver is discarded and the
 * steps run once more as before (TFE_SEQ_AGAIN); that key is then never captured again. Frees
 * met while capturing are put off until the capture ends (an event recorded on a capturing
 * queue cannot be queried). Each recorded plan is retained while its entry lives (16 per
 * device, least recently used replaced), so its address cannot name another plan.
 * tfe_gpu_graphs_enable(false), or TFE_GPU_GRAPHS=0 at first use, turns replays off; without
 * the driver's graph entries (graphs absent) every run queues its steps.
 * Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION), after memory.h. */
#ifndef TENFERRO_GPU_GRAPH_H
#define TENFERRO_GPU_GRAPH_H
#ifdef TFE__GPU_COMPANION

#define TFE__GPU_GS_SIZE 16
enum { TFE__GS_SEEN = 1, TFE__GS_GRAPH = 2, TFE__GS_NEVER = 3 };
typedef struct tfe__gseq {
  int state;               /* 0: empty */
  void *key;
  size_t nkey;
  tfe__cu_stream stream;   /* the queue it runs on (its cuBLAS handle and workspace) */
  tfe__cu_ptr ws;          /* the workspace captured */
  size_t ws_bytes;
  tfe__cu_graph_exec exec; /* GRAPH */
  void *owner;
  void (*release)(void *);
  int64_t used;
} tfe__gseq;

static int tfe__gpu_gs_on = -1; /* -1: not decided (TFE_GPU_GRAPHS at first use) */
TFE_GPU_API void tfe_gpu_graphs_enable(bool on) { __atomic_store_n(&tfe__gpu_gs_on, on ? 1 : 0, __ATOMIC_RELAXED); }
static bool tfe__gpu_gs_enabled(void) {
  int on = __atomic_load_n(&tfe__gpu_gs_on, __ATOMIC_RELAXED);
  if (on < 0) {
    const char *e = getenv("TFE_GPU_GRAPHS");
    on = !(e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "no") || !strcmp(e, "OFF")));
    __atomic_store_n(&tfe__gpu_gs_on, on, __ATOMIC_RELAXED);
  }
  return on == 1;
}
TFE_GPU_API tfe_status tfe_gpu_graph_stats(int dev, int64_t *replays, int64_t *captures, int64_t *fallbacks) {
  tfe__gpu_dev *D = tfe__gpu_device(dev);
  if (!D) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "no GPU device %d (%d found)", dev, tfe_gpu_device_count());
  pthread_mutex_lock(&D->lock);
  if (replays) *replays = D->gs_replays;
  if (captures) *captures = D->gs_captures;
  if (fallbacks) *fallbacks = D->gs_fallbacks;
  pthread_mutex_unlock(&D->lock);
  return TFE_OK;
}

static void tfe__gs_drop(tfe__gseq *e) {
  if (e->exec) tfe__gpu.cu.cuGraphExecDestroy(e->exec); /* one in flight is freed when it completes */
  if (e->owner && e->release) e->release(e->owner);
  free(e->key);
  memset(e, 0, sizeof *e);
}
/* Every recorded sequence of D (lock held; teardown). */
static void tfe__gpu_gs_clear(tfe__gpu_dev *D) {
  for (int i = 0; D->gs && i < TFE__GPU_GS_SIZE; i++)
    if (D->gs[i].state) tfe__gs_drop(&D->gs[i]);
  free(D->gs), D->gs = NULL;
  free(D->cap_defer), D->cap_defer = NULL;
  D->ncap_defer = D->cap_defer_cap = 0;
}
/* The frees met while capturing, now that the queue records events again. */
static void tfe__gs_defer_flush(tfe__gpu_dev *D) {
  int n = D->ncap_defer;
  D->ncap_defer = 0;
  for (int i = 0; i < n; i++) tfe__gpool_free(D, D->cap_defer[i].P, D->cap_defer[i].p);
}
/* The entry of d's key on D's current queue, or NULL. */
static tfe__gseq *tfe__gs_find(tfe__gpu_dev *D, const tfe_seq_desc *d) {
  for (int i = 0; i < TFE__GPU_GS_SIZE; i++) {
    tfe__gseq *e = &D->gs[i];
    if (e->state && e->nkey == d->key_bytes && e->stream == D->stream && memcmp(e->key, d->key, e->nkey) == 0) return e;
  }
  return NULL;
}
/* A new entry for d's key (the least recently used one replaced), or NULL without memory. */
static tfe__gseq *tfe__gs_add(tfe__gpu_dev *D, const tfe_seq_desc *d) {
  tfe__gseq *e = &D->gs[0];
  for (int i = 0; i < TFE__GPU_GS_SIZE && e->state; i++)
    if (!D->gs[i].state || D->gs[i].used < e->used) e = &D->gs[i];
  void *key = malloc(d->key_bytes ? d->key_bytes : 1);
  if (!key) return NULL;
  if (e->state) tfe__gs_drop(e);
  memcpy(key, d->key, d->key_bytes);
  e->key = key, e->nkey = d->key_bytes, e->stream = D->stream, e->state = TFE__GS_SEEN;
  if (d->owner && d->owner_retain && d->owner_release) {
    d->owner_retain(d->owner);
    e->owner = d->owner, e->release = d->owner_release;
  }
  return e;
}
static void tfe__gs_unhold(tfe__gpu_dev *D) {
  tfe__gpu_held = NULL;
  tfe__gpu_leave(D);
}

static tfe_status tfe__gpu_seq(const tfe_prims_backend *be, tfe_seq_desc *d) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  const char *where = "tfe_einsum";
  if (d->op == TFE_SEQ_BEGIN) {
    d->action = TFE_SEQ_RUN, d->token = NULL;
    if (tfe__gpu_held) return TFE_OK; /* inside another held sequence: the calls as they come */
    TFE_TRY(tfe__gpu_enter(D, where));
    tfe__gpu_held = D, d->token = D;
    if (!tfe__gpu.cu.cuStreamBeginCapture || !tfe__gpu_gs_enabled() || D->cap) return TFE_OK;
    if (!D->gs && !(D->gs = (tfe__gseq *)calloc(TFE__GPU_GS_SIZE, sizeof *D->gs))) return TFE_OK;
    tfe__gseq *e = tfe__gs_find(D, d);
    D->gs_tick++;
    if (!e) { /* first run: as before, remembered */
      if ((e = tfe__gs_add(D, d)) != NULL) e->used = D->gs_tick;
      return TFE_OK;
    }
    e->used = D->gs_tick;
    if (e->state == TFE__GS_NEVER) return TFE_OK;
    if (e->state == TFE__GS_GRAPH) {
      if (e->ws == D->ws && e->ws_bytes == D->ws_bytes) {
        tfe__cu_result r = tfe__gpu.cu.cuGraphLaunch(e->exec, D->stream);
        if (r == 0) {
          D->gs_replays++;
          d->action = TFE_SEQ_DONE, d->token = NULL;
          tfe__gs_unhold(D);
          return TFE_OK;
        }
        tfe__gpu.cu.cuGraphExecDestroy(e->exec), e->exec = NULL;
        e->state = TFE__GS_NEVER, D->gs_fallbacks++;
        return TFE_OK;
      }
      tfe__gpu.cu.cuGraphExecDestroy(e->exec), e->exec = NULL; /* the workspace moved: capture again */
      e->state = TFE__GS_SEEN;
    }
    if (tfe__gpu.cu.cuStreamBeginCapture(D->stream, TFE__CU_STREAM_CAPTURE_MODE_RELAXED) != 0) {
      e->state = TFE__GS_NEVER, D->gs_fallbacks++;
      return TFE_OK;
    }
    D->cap = e, D->cap_taint = false;
    return TFE_OK;
  }
  /* TFE_SEQ_END */
  d->action = TFE_SEQ_DONE;
  if (d->token != D) return TFE_OK;
  tfe__gseq *e = D->cap;
  if (e) {
    tfe__cu_graph gr = NULL;
    tfe__cu_graph_exec ex = NULL;
    tfe__cu_result r = tfe__gpu.cu.cuStreamEndCapture(D->stream, &gr);
    D->cap = NULL;
    bool ok = r == 0 && gr && d->status == TFE_OK && !D->cap_taint;
    if (ok) ok = tfe__gpu.cu.cuGraphInstantiateWithFlags(&ex, gr, 0) == 0 && ex;
    if (gr) tfe__gpu.cu.cuGraphDestroy(gr);
    tfe__gs_defer_flush(D);
    if (ok) ok = tfe__gpu.cu.cuGraphLaunch(ex, D->stream) == 0;
    if (ok) {
      e->exec = ex, e->state = TFE__GS_GRAPH, e->ws = D->ws, e->ws_bytes = D->ws_bytes;
      D->gs_captures++;
    } else { /* nothing ran: the calls once more, as they come */
      if (ex) tfe__gpu.cu.cuGraphExecDestroy(ex);
      e->state = TFE__GS_NEVER, D->gs_fallbacks++;
      d->action = TFE_SEQ_AGAIN;
    }
  }
  tfe__gs_unhold(D);
  return TFE_OK;
}

#endif /* TFE__GPU_COMPANION */
#endif
