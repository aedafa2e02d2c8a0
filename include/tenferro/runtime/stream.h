/* tenferro/runtime/stream.h — runtime room: events, streams (FIFO task queues), and the
 * bookkeeping of pending work on storage.
 *
 * An event completes once, with a status and, on failure, the message of the failed work
 * (copied out of the worker's thread-local message, so that it survives the thread). A CPU
 * stream is one worker thread of a compute device with a FIFO of tasks; each task first
 * waits for the events it depends on (a failed one fails it, with the original message), then
 * runs with the device's thread count. Every storage a task reads or writes carries a record
 * of that pending use (tfe_storage.event): a later task reading what it writes waits for it
 * (cross-stream dependencies), a writer waits for pending readers of other streams, and two
 * overlapping writers on different streams are refused (TFE_ERR_OVERLAP). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_RUNTIME_STREAM_H
#define TENFERRO_RUNTIME_STREAM_H
#include <tenferro/tensor/tensor.h>
#include <pthread.h>

typedef struct tfe_event tfe_event;
typedef struct tfe_stream tfe_stream;

/* ---- events ---------------------------------------------------------------------------- */
/* A user event, pending until tfe_event_signal (tests, and hand-made dependencies). */
TFE_API tfe_status tfe_event_new(tfe_event **out);
/* Completes a user event with status st (message msg when st != TFE_OK); once only. */
TFE_API tfe_status tfe_event_signal(tfe_event *e, tfe_status st, const char *msg);
TFE_API void tfe_event_retain(tfe_event *e);
TFE_API void tfe_event_release(tfe_event *e);
/* Whether e has completed (successfully or not). */
TFE_API bool tfe_event_done(const tfe_event *e);
/* Blocks until e completes; returns its status, and its message as tfe_last_error(). */
TFE_API tfe_status tfe_event_wait(tfe_event *e);

/* ---- streams ---------------------------------------------------------------------------- */
/* A new stream on compute device `device` (a CPU pool; tfe_device_count). Its worker runs
 * tasks with the device's thread count. */
TFE_API tfe_status tfe_stream_new(int device, tfe_stream **out);
/* Waits for the stream's tasks, stops its worker and frees it; results stay valid. */
TFE_API void tfe_stream_free(tfe_stream *s);
/* Blocks until every task submitted so far has run; the first failure among them is
 * returned (with its message). */
TFE_API tfe_status tfe_stream_sync(tfe_stream *s);
/* An event that completes when every task submitted to s so far has run. */
TFE_API tfe_status tfe_stream_record(tfe_stream *s, tfe_event **out);
/* Tasks submitted to s from now on wait for e first (e is retained). */
TFE_API tfe_status tfe_stream_wait_event(tfe_stream *s, tfe_event *e);
/* The compute device of s. */
TFE_API int tfe_stream_device(const tfe_stream *s);
/* Queues fn(arg) on s (a host function in stream order); *done (may be NULL) gets an event
 * completing with fn's status. fn runs on the worker: its tfe_last_error() travels to waiters. */
TFE_API tfe_status tfe_stream_host_fn(tfe_stream *s, tfe_status (*fn)(void *arg), void *arg, tfe_event **done);

/* ---- results: pending or ready ----------------------------------------------------------- */
/* Blocks until the work pending on x's elements (writes by stream tasks) has run. Returns the
 * first failure among it with the original message; TFE_OK for a ready or plain handle. */
TFE_API tfe_status tfe_wait(const tfe_dyn *x);
/* Whether no write to x's elements is pending (a failed one counts as done). */
TFE_API bool tfe_ready(const tfe_dyn *x);
/* Blocks until all work pending on storage s has run (first failure returned). */
TFE_API tfe_status tfe_storage_wait(tfe_storage *s);

/* ---- memory and events ---------------------------------------------------------------------- */
/* Gives p (from tenferro's allocator) back once e completes: the default allocator's pool keeps
 * it locked by e (never handed out, nor returned to the system, before e completes); with a
 * custom allocator this waits for e, then frees. e is retained as needed. */
TFE_API void tfe_free_after(void *p, tfe_event *e);
/* The pool of memory space `space` (host memory: TFE_HOST). A space without a pool (GPU
 * memory, until a GPU backend brings one) is TFE_ERR_DEVICE. */
TFE_API tfe_status tfe_memspace_pool_stats(tfe_memspace space, tfe_pool_stats *out);

/* ---- device streams: what a backend with its own queues (the GPU room) plugs in ---------- */
/* A compute device whose backend has hooks gets vendor streams: tfe_stream_new(device) makes a
 * stream whose worker thread enqueues each task's work on a vendor queue (`q`) instead of
 * running it to completion. A task's event then completes when the device has run that work
 * (a device event recorded after it); a task of another vendor stream that depends on it makes
 * its queue wait for that device event (no host wait), a CPU stream task waits on the host.
 * Every hook runs on the calling thread; ctx is the pointer given at registration. */
typedef struct tfe_stream_hooks {
  void *ctx;
  tfe_status (*create)(void *ctx, void **q);          /* a vendor queue for a new stream */
  void (*destroy)(void *ctx, void *q);                /* after its worker stopped: drain, free */
  void (*begin)(void *ctx, void *q);                  /* on the worker before a task: this thread's calls enqueue on q */
  void (*end)(void *ctx, void *q);                    /* after the task */
  tfe_status (*record)(void *ctx, void *q, void **dev_event); /* a device event after q's queued work */
  tfe_status (*wait_device)(void *ctx, void *q, void *dev_event); /* q waits for dev_event (device side) */
  /* host side: 1 done, 0 pending, < 0 failed (sync gives the status and message) */
  int (*query)(void *ctx, void *dev_event);
  tfe_status (*sync)(void *ctx, void *dev_event, char *msg, size_t msg_size);
  void (*event_free)(void *ctx, void *dev_event);
  /* the pool of the device's memory space (tfe_memspace_pool_stats), NULL: none */
  tfe_status (*pool_stats)(void *ctx, tfe_pool_stats *out);
} tfe_stream_hooks;
/* Installs (h) or removes (NULL) the hooks of compute device `device` (a registered backend's
 * id); the hooks are copied. Streams made before keep the hooks they were made with. */
TFE_API tfe_status tfe_device_set_hooks(int device, const tfe_stream_hooks *h);
/* The vendor queue of a device stream (NULL for a CPU stream). */
TFE_API void *tfe_stream_queue(const tfe_stream *s);

/* ---- internal: tasks and pending-use records (bodies only) -------------------------------- */
#if TFE__IMPL
typedef tfe_status (*tfe__task_run)(void *arg);
typedef struct tfe__task {
  struct tfe__task *next;
  tfe__task_run run;
  void (*drop)(void *arg); /* frees arg and releases what it holds (always called) */
  void *arg;
  tfe_event *ev;           /* completed after run (or when a dependency failed) */
  int ndeps, capdeps;
  tfe_event **deps;
} tfe__task;

/* One pending use of a storage: a view's elements read or written by a task. */
typedef struct tfe__rt_use {
  tfe_event *ev;
  uint64_t stream;         /* serial of the stream that runs it (0: none) */
  const char *data;        /* the view's base pointer */
  size_t elem;             /* element bytes (0: the whole storage) */
  tfe_layout lay;
  bool write;
} tfe__rt_use;
/* What tfe_storage.event points to: the pending uses of that storage (tfe__st.rt.lock). */
typedef struct tfe__rt_track {
  int n, cap;
  tfe__rt_use *u;
} tfe__rt_track;
/* Frees a storage's record (storage.h calls it on the last release). */
TFE_INTERNAL void tfe__rt_track_drop(void *track);
/* Waits for all pending work on a storage, unless the caller is itself a stream task (whose
 * dependencies were waited for when it started). prims/registry.h calls it for operands. */
TFE_INTERNAL tfe_status tfe__rt_storage_sync(tfe_storage *s, const char *where);
/* Element access (tensor/dyn.h): a read waits for pending writes that overlap x, a write for
 * every pending use that overlaps it. */
TFE_INTERNAL tfe_status tfe__rt_access_sync(const tfe_dyn *x, bool write);
#endif

#endif
#elif !defined(TENFERRO_RUNTIME_STREAM_BODY) /* bodies */
#define TENFERRO_RUNTIME_STREAM_BODY
#include <sched.h>

struct tfe_event {
  atomic_long refs;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_int done;          /* 1 once completed; status and msg are final then */
  tfe_status status;
  char msg[TFE_ERRMSG_MAX];
  /* a device stream's task: its work is queued (enq = 1) and completes with dev, a device
   * event of the hooks hk (NULL for host work) */
  atomic_int enq;
  void *dev;
  const tfe_stream_hooks *hk;
};
struct tfe_stream {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;        /* new task, or stop */
  tfe__task *head, *tail;
  tfe_event *last;          /* event of the last task submitted (NULL: none yet) */
  tfe_event *failed;        /* the first task that failed since the last tfe_stream_sync */
  tfe_event **waits;        /* events every later task waits for (tfe_stream_wait_event) */
  int nwaits, capwaits;
  bool stop;
  int device, threads;
  int numa_node;            /* the device's node (-1: unbound) */
  int bind_state;           /* 0: the worker has not bound itself yet, 1: done, 2: failed */
  uint64_t serial;
  tfe_stream_hooks hk;      /* a device stream's hooks (hk.create == NULL: a CPU stream) */
  void *q;                  /* its vendor queue */
};

/* ---- events ---------------------------------------------------------------------------- */
TFE_INTERNAL tfe_event *tfe__ev_new(void) {
  tfe_event *e = (tfe_event *)tfe__alloc(sizeof *e);
  if (!e) return NULL;
  atomic_init(&e->refs, 1);
  atomic_init(&e->done, 0);
  atomic_init(&e->enq, 0);
  e->dev = NULL;
  e->hk = NULL;
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
  e->status = TFE_OK;
  e->msg[0] = 0;
  return e;
}
TFE_API tfe_status tfe_event_new(tfe_event **out) {
  TFE_CHECK_NULL(out);
  *out = tfe__ev_new();
  return *out ? TFE_OK : TFE_ERR_ALLOC;
}
TFE_API void tfe_event_retain(tfe_event *e) {
  if (e) atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}
TFE_API void tfe_event_release(tfe_event *e) {
  if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1) return;
  if (e->dev && e->hk && e->hk->event_free) e->hk->event_free(e->hk->ctx, e->dev);
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
  tfe__free(e);
}
/* Completes e (first call only); false when it was complete already. */
TFE_INTERNAL bool tfe__ev_complete(tfe_event *e, tfe_status st, const char *msg) {
  pthread_mutex_lock(&e->mu);
  bool first = !atomic_load_explicit(&e->done, memory_order_relaxed);
  if (first) {
    e->status = st;
    snprintf(e->msg, sizeof e->msg, "%s", st != TFE_OK && msg ? msg : "");
    atomic_store_explicit(&e->done, 1, memory_order_release);
    pthread_cond_broadcast(&e->cv);
  }
  pthread_mutex_unlock(&e->mu);
  return first;
}
TFE_API tfe_status tfe_event_signal(tfe_event *e, tfe_status st, const char *msg) {
  TFE_CHECK_NULL(e);
  if (!tfe__ev_complete(e, st, msg)) return TFE_FAIL(TFE_ERR_INVALID, "the event has completed already");
  return TFE_OK;
}
/* A queued device task: waits on the host for its device event and completes e with what
 * the device says (an error raised by the device surfaces here, at the wait). */
TFE_INTERNAL void tfe__ev_dev_finish(tfe_event *e) {
  char msg[TFE_ERRMSG_MAX];
  msg[0] = 0;
  /* hooks removed since (the backend shut down after draining its queues): done */
  tfe_status st = e->hk->sync ? e->hk->sync(e->hk->ctx, e->dev, msg, sizeof msg) : TFE_OK;
  tfe__ev_complete(e, st, msg);
}
TFE_API bool tfe_event_done(const tfe_event *e) {
  if (!e || atomic_load_explicit(&e->done, memory_order_acquire)) return true;
  if (!atomic_load_explicit(&e->enq, memory_order_acquire)) return false;
  tfe_event *m = (tfe_event *)(uintptr_t)e; /* completing a finished device event is no change of value */
  int q = m->hk->query ? m->hk->query(m->hk->ctx, m->dev) : 1;
  if (q == 0) return false;
  if (q > 0) tfe__ev_complete(m, TFE_OK, NULL);
  else tfe__ev_dev_finish(m);
  return true;
}
/* Waits without touching the thread-local message; returns the status. */
TFE_INTERNAL tfe_status tfe__ev_wait(tfe_event *e) {
  if (!atomic_load_explicit(&e->done, memory_order_acquire)) {
    pthread_mutex_lock(&e->mu);
    while (!atomic_load_explicit(&e->done, memory_order_relaxed) && !atomic_load_explicit(&e->enq, memory_order_relaxed))
      pthread_cond_wait(&e->cv, &e->mu);
    bool dev = !atomic_load_explicit(&e->done, memory_order_relaxed);
    pthread_mutex_unlock(&e->mu);
    if (dev) tfe__ev_dev_finish(e);
  }
  return e->status;
}
/* Marks e's work as queued on a device (completion comes from dev_event). */
TFE_INTERNAL void tfe__ev_enqueued(tfe_event *e, const tfe_stream_hooks *hk, void *dev_event) {
  pthread_mutex_lock(&e->mu);
  e->hk = hk;
  e->dev = dev_event;
  atomic_store_explicit(&e->enq, 1, memory_order_release);
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
}
/* The event's failure as the caller's error (its message as it was raised). */
TFE_INTERNAL tfe_status tfe__ev_raise(const tfe_event *e) {
  snprintf(tfe__ts.errmsg, TFE_ERRMSG_MAX, "%s", e->msg);
  tfe__ts.errcode = e->status;
  return e->status;
}
TFE_INTERNAL bool tfe__ev_done_v(void *e) { return tfe_event_done((const tfe_event *)e); }
TFE_INTERNAL void tfe__ev_release_v(void *e) { tfe_event_release((tfe_event *)e); }
TFE_API void tfe_free_after(void *p, tfe_event *e) {
  if (!p) return;
  if (!e || tfe_event_done(e) || tfe__st.allocator.alloc) {
    if (e) tfe__ev_wait(e);
    tfe__free(p);
    return;
  }
  tfe__pool *P = &tfe__st.pool;
  tfe__lock_take(&P->lock);
  P->ev_done = tfe__ev_done_v;
  P->ev_release = tfe__ev_release_v;
  tfe__lock_give(&P->lock);
  tfe_event_retain(e); /* the pool's reference, dropped once the block is unlocked */
  tfe__default_free_after(p, e);
}
TFE_API tfe_status tfe_memspace_pool_stats(tfe_memspace space, tfe_pool_stats *out) {
  TFE_CHECK_NULL(out);
  if (space.kind != TFE_MEM_HOST) {
    for (int id = 0; id < TFE_BACKEND_MAX; id++) {
      const tfe_prims_backend *be = tfe__be_get(id);
      const tfe_stream_hooks *h = &tfe__st.rt.hooks[id];
      if (be && h->pool_stats && be->space.kind == space.kind && be->space.device == space.device)
        return h->pool_stats(h->ctx, out);
    }
    return TFE_FAIL(TFE_ERR_DEVICE, "no pool serves gpu:%d memory: a GPU backend brings it", space.device);
  }
  tfe_pool_get_stats(out);
  return TFE_OK;
}
TFE_API tfe_status tfe_event_wait(tfe_event *e) {
  TFE_CHECK_NULL(e);
  return tfe__ev_wait(e) == TFE_OK ? TFE_OK : tfe__ev_raise(e);
}

/* ---- pending-use records --------------------------------------------------------------- */
/* The free hook of a re-tagged storage (tfe_dyn_with_device): it shares another's elements
 * and holds a reference to it. Pending uses are recorded on that root storage. */
TFE_INTERNAL void tfe__rt_unref_storage(void *ctx, void *p) {
  (void)p;
  tfe_storage_release((tfe_storage *)ctx);
}
TFE_INTERNAL tfe_storage *tfe__rt_root(tfe_storage *s) {
  while (s && s->free_fn == tfe__rt_unref_storage) s = (tfe_storage *)s->free_ctx;
  return s;
}
/* The pending-use record of s's root (NULL: nothing was ever submitted on it). */
TFE_INTERNAL tfe__rt_track *tfe__rt_pending(tfe_storage *s) {
  return (tfe__rt_track *)__atomic_load_n(&tfe__rt_root(s)->event, __ATOMIC_ACQUIRE);
}
TFE_INTERNAL void tfe__rt_lock(void) { tfe__lock_take(&tfe__st.rt.lock); }
TFE_INTERNAL void tfe__rt_unlock(void) { tfe__lock_give(&tfe__st.rt.lock); }
TFE_INTERNAL void tfe__rt_track_drop(void *track) {
  tfe__rt_track *t = (tfe__rt_track *)track;
  if (!t) return;
  for (int i = 0; i < t->n; i++) tfe_event_release(t->u[i].ev);
  tfe__free(t->u);
  tfe__free(t);
}
/* Drops the records of uses that completed successfully (failed writes stay: their elements
 * are garbage, and whoever reads them should hear why). Lock held. */
TFE_INTERNAL void tfe__rt_prune(tfe__rt_track *t) {
  int k = 0;
  for (int i = 0; i < t->n; i++) {
    tfe__rt_use *u = &t->u[i];
    if (tfe_event_done(u->ev) && (u->ev->status == TFE_OK || !u->write)) tfe_event_release(u->ev);
    else t->u[k++] = *u;
  }
  t->n = k;
}
/* Whether two uses may share an element (conservative when unsure). */
TFE_INTERNAL bool tfe__rt_overlap(const tfe__rt_use *a, const tfe__rt_use *b) {
  if (!a->elem || !b->elem || a->elem != b->elem) return true;
  ptrdiff_t d = b->data - a->data;
  if (d % (ptrdiff_t)a->elem) return true;
  return tfe_layout_overlap(&a->lay, &b->lay, (int64_t)(d / (ptrdiff_t)a->elem)) != TFE_DISJOINT;
}
TFE_INTERNAL bool tfe__lay_same(const tfe_layout *a, const tfe_layout *b) {
  if (a->rank != b->rank || a->offset != b->offset) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i] || a->strides[i] != b->strides[i]) return false;
  return true;
}
TFE_INTERNAL tfe__rt_use tfe__rt_use_of(const tfe_dyn *x, bool write) {
  tfe__rt_use u = {NULL, 0, (const char *)x->data, 0, x->lay, write};
  const tfe_dtype_info *di = tfe_dtype_get(x->dtype);
  u.elem = di ? di->size : 0;
  return u;
}

/* ---- tasks ------------------------------------------------------------------------------- */
TFE_INTERNAL tfe_status tfe__task_dep(tfe__task *t, tfe_event *e) {
  for (int i = 0; i < t->ndeps; i++)
    if (t->deps[i] == e) return TFE_OK;
  if (t->ndeps == t->capdeps) {
    int cap = t->capdeps ? 2 * t->capdeps : 8;
    tfe_event **d = (tfe_event **)tfe__alloc((size_t)cap * sizeof *d);
    if (!d) return TFE_ERR_ALLOC;
    if (t->ndeps) memcpy(d, t->deps, (size_t)t->ndeps * sizeof *d);
    tfe__free(t->deps);
    t->deps = d;
    t->capdeps = cap;
  }
  tfe_event_retain(e);
  t->deps[t->ndeps++] = e;
  return TFE_OK;
}
TFE_INTERNAL void tfe__task_free(tfe__task *t) {
  if (!t) return;
  if (t->drop) t->drop(t->arg);
  for (int i = 0; i < t->ndeps; i++) tfe_event_release(t->deps[i]);
  tfe__free(t->deps);
  tfe_event_release(t->ev);
  tfe__free(t);
}
/* A task that runs run(arg) and then drop(arg); on failure drop(arg) has been called. */
TFE_INTERNAL tfe_status tfe__task_new(tfe__task_run run, void (*drop)(void *), void *arg, tfe__task **out) {
  tfe__task *t = (tfe__task *)tfe__calloc(1, sizeof *t);
  tfe_event *e = t ? tfe__ev_new() : NULL;
  if (!e) {
    tfe__free(t);
    if (drop) drop(arg);
    return TFE_ERR_ALLOC;
  }
  t->run = run; t->drop = drop; t->arg = arg; t->ev = e;
  *out = t;
  return TFE_OK;
}

/* Adds the dependencies and records of one operand (lock held): an input waits for pending
 * overlapping writes; an output waits for pending overlapping reads of other streams and is
 * refused when an overlapping write of another stream is pending. */
TFE_INTERNAL tfe_status tfe__rt_check(tfe__task *t, uint64_t serial, const tfe_dyn *x, bool write, const char *name,
                                      const char *where) {
  tfe__rt_track *tr = tfe__rt_pending(x->st);
  if (!tr) return TFE_OK;
  tfe__rt_prune(tr);
  tfe__rt_use me = tfe__rt_use_of(x, write);
  for (int i = 0; i < tr->n; i++) {
    tfe__rt_use *u = &tr->u[i];
    if (u->ev == t->ev || !tfe__rt_overlap(u, &me)) continue;
    bool pending = !tfe_event_done(u->ev);
    if (write && u->write && pending && u->stream != serial)
      return tfe__fail(TFE_ERR_OVERLAP, where,
                       "%s overlaps elements that another stream is still writing (overlapping writers are "
                       "refused; wait for the first one, or write disjoint sub-views)", name);
    /* a reader waits for writes (and inherits their failure); a writer only for pending uses */
    if (write ? pending : u->write) TFE_TRY(tfe__task_dep(t, u->ev));
  }
  return TFE_OK;
}
/* Records a use (lock held). */
TFE_INTERNAL tfe_status tfe__rt_record(tfe_storage *st, tfe__rt_use u) {
  st = tfe__rt_root(st);
  tfe__rt_track *tr = (tfe__rt_track *)st->event;
  if (!tr) {
    tr = (tfe__rt_track *)tfe__calloc(1, sizeof *tr);
    if (!tr) return TFE_ERR_ALLOC;
    __atomic_store_n(&st->event, tr, __ATOMIC_RELEASE);
  }
  if (tr->n == tr->cap) {
    int cap = tr->cap ? 2 * tr->cap : 4;
    tfe__rt_use *nu = (tfe__rt_use *)tfe__alloc((size_t)cap * sizeof *nu);
    if (!nu) return TFE_ERR_ALLOC;
    if (tr->n) memcpy(nu, tr->u, (size_t)tr->n * sizeof *nu);
    tfe__free(tr->u);
    tr->u = nu;
    tr->cap = cap;
  }
  /* a new write of exactly this view supersedes a failed one (whose record otherwise stays) */
  int k = 0;
  for (int i = 0; i < tr->n; i++) {
    tfe__rt_use *o = &tr->u[i];
    bool same = u.write && o->write && o->data == u.data && o->elem == u.elem && tfe__lay_same(&o->lay, &u.lay);
    if (same && tfe_event_done(o->ev) && o->ev->status != TFE_OK) tfe_event_release(o->ev);
    else tr->u[k++] = *o;
  }
  tr->n = k;
  tfe_event_retain(u.ev);
  tr->u[tr->n++] = u;
  return TFE_OK;
}
/* Removes the records of task event e from storage st (submission failed; lock held). */
TFE_INTERNAL void tfe__rt_unrecord(tfe_storage *st, tfe_event *e) {
  st = tfe__rt_root(st);
  tfe__rt_track *tr = (tfe__rt_track *)st->event;
  int k = 0;
  for (int i = 0; tr && i < tr->n; i++) {
    if (tr->u[i].ev == e) tfe_event_release(e);
    else tr->u[k++] = tr->u[i];
  }
  if (tr) tr->n = k;
}

/* One operand of a submission: the handle and whether the task writes it. */
typedef struct tfe__rt_operand { const tfe_dyn *x; bool write; const char *name; } tfe__rt_operand;

TFE_INTERNAL void tfe__stream_push(tfe_stream *s, tfe__task *t);
/* Submits task t to stream s over the given operands: dependencies from the pending-use
 * records and the stream's waits, then the records of t's own uses, then the queue. On
 * failure t is freed (its drop called) and nothing was recorded. */
TFE_INTERNAL tfe_status tfe__rt_submit(tfe_stream *s, tfe__task *t, int n, const tfe__rt_operand *ops,
                                       const char *where) {
  tfe_status st = TFE_OK;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->nwaits && st == TFE_OK; i++) st = tfe__task_dep(t, s->waits[i]);
  pthread_mutex_unlock(&s->mu);
  tfe__rt_lock();
  for (int k = 0; k < n && st == TFE_OK; k++)
    if (ops[k].x && ops[k].x->st) st = tfe__rt_check(t, s->serial, ops[k].x, ops[k].write, ops[k].name, where);
  int done = 0;
  for (; done < n && st == TFE_OK; done++) {
    if (!ops[done].x || !ops[done].x->st) continue;
    tfe__rt_use u = tfe__rt_use_of(ops[done].x, ops[done].write);
    u.ev = t->ev;
    u.stream = s->serial;
    st = tfe__rt_record(ops[done].x->st, u);
  }
  if (st != TFE_OK)
    for (int k = 0; k < done; k++)
      if (ops[k].x && ops[k].x->st) tfe__rt_unrecord(ops[k].x->st, t->ev);
  tfe__rt_unlock();
  if (st != TFE_OK) {
    tfe__task_free(t);
    return st;
  }
  tfe__stream_push(s, t);
  return TFE_OK;
}

/* ---- waiting on storage ---------------------------------------------------------------- */
/* Waits for the pending uses of st that overlap `me` (all of them when me is NULL) and, when
 * writes_only, only for writes. Returns the first failure, raised as the caller's error. */
TFE_INTERNAL tfe_status tfe__rt_wait_on(tfe_storage *st, const tfe__rt_use *me, bool writes_only) {
  st = tfe__rt_root(st);
  for (;;) {
    tfe_event *e = NULL, *failed = NULL;
    tfe__rt_lock();
    tfe__rt_track *tr = (tfe__rt_track *)st->event;
    if (tr) tfe__rt_prune(tr);
    for (int i = 0; tr && i < tr->n && !e; i++) {
      tfe__rt_use *u = &tr->u[i];
      if ((writes_only && !u->write) || (me && !tfe__rt_overlap(u, me))) continue;
      if (!tfe_event_done(u->ev)) e = u->ev;
      else if (!failed) failed = u->ev;
    }
    tfe_event_retain(e ? e : failed);
    tfe__rt_unlock();
    if (!e && !failed) return TFE_OK;
    if (!e) {
      tfe_status r = tfe__ev_raise(failed);
      tfe_event_release(failed);
      return r;
    }
    tfe__ev_wait(e);
    tfe_event_release(e);
  }
}
TFE_INTERNAL tfe_status tfe__rt_storage_sync(tfe_storage *s, const char *where) {
  (void)where;
  if (!s || tfe__ts.rt.in_task || !tfe__rt_pending(s)) return TFE_OK;
  return tfe__rt_wait_on(s, NULL, false);
}
TFE_INTERNAL tfe_status tfe__rt_access_sync(const tfe_dyn *x, bool write) {
  if (!x->st || tfe__ts.rt.in_task || !tfe__rt_pending(x->st)) return TFE_OK;
  tfe__rt_use me = tfe__rt_use_of(x, write);
  return tfe__rt_wait_on(x->st, &me, !write);
}
TFE_API tfe_status tfe_storage_wait(tfe_storage *s) {
  TFE_CHECK_NULL(s);
  return tfe__rt_pending(s) ? tfe__rt_wait_on(s, NULL, false) : TFE_OK;
}
TFE_API tfe_status tfe_wait(const tfe_dyn *x) {
  TFE_CHECK_NULL(x);
  if (!x->st || !tfe__rt_pending(x->st)) return TFE_OK;
  tfe__rt_use me = tfe__rt_use_of(x, false);
  return tfe__rt_wait_on(x->st, &me, true);
}
TFE_API bool tfe_ready(const tfe_dyn *x) {
  if (!x || !x->st || !tfe__rt_pending(x->st)) return true;
  tfe__rt_use me = tfe__rt_use_of(x, false);
  bool ready = true;
  tfe__rt_lock();
  tfe__rt_track *tr = tfe__rt_pending(x->st);
  for (int i = 0; i < tr->n && ready; i++)
    if (tr->u[i].write && !tfe_event_done(tr->u[i].ev) && tfe__rt_overlap(&tr->u[i], &me)) ready = false;
  tfe__rt_unlock();
  return ready;
}

/* ---- streams ---------------------------------------------------------------------------- */
/* Runs one task on the worker: its dependencies first (a failed one fails it), then run. */
TFE_INTERNAL void tfe__task_exec(tfe__task *t) {
  tfe_status st = TFE_OK;
  const char *msg = NULL;
  char buf[TFE_ERRMSG_MAX];
  for (int i = 0; i < t->ndeps && st == TFE_OK; i++)
    if (tfe__ev_wait(t->deps[i]) != TFE_OK) {
      st = t->deps[i]->status;
      snprintf(buf, sizeof buf, "%s", t->deps[i]->msg); /* the original message, as raised */
      msg = buf;
    }
  if (st == TFE_OK) {
    tfe_clear_error();
    st = t->run(t->arg);
    snprintf(buf, sizeof buf, "%s", tfe__ts.errmsg);
    msg = buf;
  }
  /* references go before the event completes: a waiter may then count on them being gone */
  if (t->drop) t->drop(t->arg);
  t->drop = NULL;
  tfe__ev_complete(t->ev, st, msg);
}
/* The same on a device stream: a dependency queued on a device becomes a device-side wait of
 * this stream's queue; the task's work is enqueued on the queue, and its event completes when
 * the device has run it (a device event recorded after it). */
TFE_INTERNAL void tfe__task_exec_dev(tfe_stream *s, tfe__task *t) {
  tfe_status st = TFE_OK;
  const char *msg = NULL;
  char buf[TFE_ERRMSG_MAX];
  const tfe_stream_hooks *hk = &s->hk;
  for (int i = 0; i < t->ndeps && st == TFE_OK; i++) {
    tfe_event *e = t->deps[i];
    pthread_mutex_lock(&e->mu); /* wait until it is done, or queued on a device */
    while (!atomic_load_explicit(&e->done, memory_order_relaxed) && !atomic_load_explicit(&e->enq, memory_order_relaxed))
      pthread_cond_wait(&e->cv, &e->mu);
    bool queued = !atomic_load_explicit(&e->done, memory_order_relaxed);
    pthread_mutex_unlock(&e->mu);
    if (queued && e->hk && e->hk->wait_device == hk->wait_device) st = hk->wait_device(hk->ctx, s->q, e->dev);
    else if (tfe__ev_wait(e) != TFE_OK) {
      st = e->status;
      snprintf(buf, sizeof buf, "%s", e->msg);
      msg = buf;
    }
    if (st != TFE_OK && !msg) {
      snprintf(buf, sizeof buf, "%s", tfe__ts.errmsg);
      msg = buf;
    }
  }
  void *dev = NULL;
  if (st == TFE_OK) {
    tfe_clear_error();
    hk->begin(hk->ctx, s->q);
    st = t->run(t->arg);
    if (st == TFE_OK) st = hk->record(hk->ctx, s->q, &dev);
    snprintf(buf, sizeof buf, "%s", tfe__ts.errmsg);
    msg = buf;
    if (t->drop) t->drop(t->arg); /* device memory goes back to its pool locked by the queue's work */
    t->drop = NULL;
    hk->end(hk->ctx, s->q);
  }
  if (t->drop) t->drop(t->arg);
  t->drop = NULL;
  if (st == TFE_OK) tfe__ev_enqueued(t->ev, &tfe__st.rt.hooks[s->device], dev);
  else tfe__ev_complete(t->ev, st, msg);
}
TFE_INTERNAL tfe_status tfe__rt_bind_numa(int node);
TFE_INTERNAL void *tfe__stream_main(void *arg) {
  tfe_stream *s = (tfe_stream *)arg;
  tfe__ts.rt.in_task = true;
  tfe__ts.rt.threads = s->threads;
  tfe_status bound = s->numa_node >= 0 ? tfe__rt_bind_numa(s->numa_node) : TFE_OK;
  pthread_mutex_lock(&s->mu); /* tfe_stream_new waits for this (and reports a failure) */
  s->bind_state = bound == TFE_OK ? 1 : 2;
  if (bound != TFE_OK) s->stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for (;;) {
    pthread_mutex_lock(&s->mu);
    while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
    tfe__task *t = s->head;
    if (t) {
      s->head = t->next;
      if (!s->head) s->tail = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (!t) break;
    if (s->hk.create) tfe__task_exec_dev(s, t);
    else tfe__task_exec(t);
    if (atomic_load(&t->ev->done) && t->ev->status != TFE_OK) { /* kept for tfe_stream_sync */
      pthread_mutex_lock(&s->mu);
      if (!s->failed) { s->failed = t->ev; tfe_event_retain(t->ev); }
      pthread_mutex_unlock(&s->mu);
    }
    tfe__task_free(t);
  }
  return NULL;
}
TFE_INTERNAL void tfe__stream_push(tfe_stream *s, tfe__task *t) {
  tfe_event_retain(t->ev);
  pthread_mutex_lock(&s->mu);
  t->next = NULL;
  if (s->tail) s->tail->next = t;
  else s->head = t;
  s->tail = t;
  tfe_event *old = s->last;
  s->last = t->ev;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  tfe_event_release(old);
}
TFE_INTERNAL int tfe__device_threads(int device);
TFE_INTERNAL int tfe__device_numa_node(int id);
TFE_INTERNAL tfe_status tfe__device_check_cpu(int device, const char *where);
TFE_API tfe_status tfe_stream_new(int device, tfe_stream **out) {
  TFE_CHECK_NULL(out);
  tfe_stream_hooks hk;
  memset(&hk, 0, sizeof hk);
  if (device >= 0 && device < TFE_BACKEND_MAX && tfe__be_get(device)) {
    tfe__rt_lock();
    hk = tfe__st.rt.hooks[device];
    tfe__rt_unlock();
  }
  if (!hk.create) TFE_TRY(tfe__device_check_cpu(device, __func__));
  void *q = NULL;
  if (hk.create) TFE_TRY(hk.create(hk.ctx, &q));
  tfe_stream *s = (tfe_stream *)tfe__calloc(1, sizeof *s);
  if (!s) {
    if (hk.create) hk.destroy(hk.ctx, q);
    return TFE_ERR_ALLOC;
  }
  s->hk = hk;
  s->q = q;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->device = device;
  s->threads = tfe__device_threads(device);
  int node = s->numa_node = tfe__device_numa_node(device);
  s->serial = (uint64_t)atomic_fetch_add(&tfe__st.rt.serial, 1) + 1;
  int rc = pthread_create(&s->th, NULL, tfe__stream_main, s);
  int bound = 1;
  if (rc == 0) { /* the worker binds itself to its node first */
    pthread_mutex_lock(&s->mu);
    while (!s->bind_state) pthread_cond_wait(&s->cv, &s->mu);
    bound = s->bind_state;
    pthread_mutex_unlock(&s->mu);
    if (bound != 1) pthread_join(s->th, NULL);
  }
  if (rc != 0 || bound != 1) {
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    if (hk.create) hk.destroy(hk.ctx, q);
    tfe__free(s);
    if (rc == 0) return TFE_FAIL(TFE_ERR_DEVICE, "could not bind the stream's worker to NUMA node %d", node);
    return TFE_FAIL(TFE_ERR_DEVICE, "could not start the stream's worker thread (pthread_create: %d)", rc);
  }
  *out = s;
  return TFE_OK;
}
TFE_API void tfe_stream_free(tfe_stream *s) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->th, NULL); /* the worker drains the queue before it stops */
  if (s->hk.create) s->hk.destroy(s->hk.ctx, s->q);
  for (int i = 0; i < s->nwaits; i++) tfe_event_release(s->waits[i]);
  tfe__free(s->waits);
  tfe_event_release(s->last);
  tfe_event_release(s->failed);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  tfe__free(s);
}
/* A task that does nothing: its event marks a point in the stream. */
TFE_INTERNAL tfe_status tfe__task_nop(void *arg) { (void)arg; return TFE_OK; }
TFE_API tfe_status tfe_stream_record(tfe_stream *s, tfe_event **out) {
  TFE_CHECK_NULL(s);
  TFE_CHECK_NULL(out);
  tfe__task *t;
  TFE_TRY(tfe__task_new(tfe__task_nop, NULL, NULL, &t));
  /* it completes after every earlier task, failed or not: the FIFO runs them first */
  tfe_event *e = t->ev;
  tfe_event_retain(e);
  tfe_status st = tfe__rt_submit(s, t, 0, NULL, __func__);
  if (st != TFE_OK) { tfe_event_release(e); return st; }
  *out = e;
  return TFE_OK;
}
TFE_API tfe_status tfe_stream_sync(tfe_stream *s) {
  TFE_CHECK_NULL(s);
  tfe_event *e;
  TFE_TRY(tfe_stream_record(s, &e));
  tfe__ev_wait(e);
  tfe_event_release(e);
  /* the first failure since the last sync: a failed task leaves its event with the stream */
  pthread_mutex_lock(&s->mu);
  tfe_event *f = s->failed;
  s->failed = NULL;
  pthread_mutex_unlock(&s->mu);
  if (!f) return TFE_OK;
  tfe_status st = tfe__ev_raise(f);
  tfe_event_release(f);
  return st;
}
TFE_API tfe_status tfe_stream_wait_event(tfe_stream *s, tfe_event *e) {
  TFE_CHECK_NULL(s);
  TFE_CHECK_NULL(e);
  pthread_mutex_lock(&s->mu);
  if (s->nwaits == s->capwaits) {
    int cap = s->capwaits ? 2 * s->capwaits : 4;
    tfe_event **w = (tfe_event **)tfe__alloc((size_t)cap * sizeof *w);
    if (!w) { pthread_mutex_unlock(&s->mu); return TFE_ERR_ALLOC; }
    if (s->nwaits) memcpy(w, s->waits, (size_t)s->nwaits * sizeof *w);
    tfe__free(s->waits);
    s->waits = w;
    s->capwaits = cap;
  }
  /* completed events need no waiting: drop them while here */
  int k = 0;
  for (int i = 0; i < s->nwaits; i++) {
    if (tfe_event_done(s->waits[i]) && s->waits[i]->status == TFE_OK) tfe_event_release(s->waits[i]);
    else s->waits[k++] = s->waits[i];
  }
  s->nwaits = k;
  tfe_event_retain(e);
  s->waits[s->nwaits++] = e;
  pthread_mutex_unlock(&s->mu);
  return TFE_OK;
}
TFE_API int tfe_stream_device(const tfe_stream *s) { return s ? s->device : -1; }
TFE_API void *tfe_stream_queue(const tfe_stream *s) { return s && s->hk.create ? s->q : NULL; }
TFE_API tfe_status tfe_device_set_hooks(int device, const tfe_stream_hooks *h) {
  if (device < 0 || device >= TFE_BACKEND_MAX || !tfe__be_get(device))
    return TFE_FAIL(TFE_ERR_DEVICE, "device %d is not a registered backend", device);
  if (h && (!h->create || !h->destroy || !h->begin || !h->end || !h->record || !h->wait_device || !h->query ||
            !h->sync || !h->event_free))
    return TFE_FAIL(TFE_ERR_NULL, "every stream hook but pool_stats is needed");
  tfe__rt_lock();
  if (h) tfe__st.rt.hooks[device] = *h;
  else memset(&tfe__st.rt.hooks[device], 0, sizeof tfe__st.rt.hooks[device]);
  tfe__rt_unlock();
  return TFE_OK;
}
TFE_API tfe_status tfe_stream_host_fn(tfe_stream *s, tfe_status (*fn)(void *arg), void *arg, tfe_event **done) {
  TFE_CHECK_NULL(s);
  TFE_CHECK_NULL(fn);
  tfe__task *t;
  TFE_TRY(tfe__task_new(fn, NULL, arg, &t));
  tfe_event *e = t->ev;
  tfe_event_retain(e);
  tfe_status st = tfe__rt_submit(s, t, 0, NULL, __func__);
  if (st != TFE_OK || !done) tfe_event_release(e);
  else *done = e;
  return st;
}
#endif
