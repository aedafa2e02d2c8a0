/* tenferro/gpu/memory.h — gpu room, companion only: the device memory pool and the pool of
 * pinned host buffers (event-locked reuse, no free waits for the queue), device tensors (tfe_dyn
 * over storage in {TFE_MEM_GPU, N}), the copies between host and device (staged through pinned
 * buffers; the backend's mem_copy slot), the pools' public side. Parsed only inside
 * tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_MEMORY_H
#define TENFERRO_GPU_MEMORY_H
#ifdef TFE__GPU_COMPANION

/* ---- the pools: device memory and pinned host buffers -----------------------------------------
 * One pool per device for its memory (einsum's arena and results, device tensors, the
 * workspace) and one of pinned host buffers (cuMemAllocHost: the staging of transfers), under
 * the runtime's pool model (docs/runtime.md): size classes (tfe_pool_class_bytes: 8 per power of
 * two), "larger serves smaller" (tfe_tuning.pool_reuse_classes classes up), a cap in bytes
 * (oldest kept blocks given back first), trim, statistics. A block freed while queued work may
 * still read it is locked by CUDA events recorded on the device's queues (its own stream and
 * every runtime stream's) at the free: it is handed out again only once cuEventQuery says they
 * completed, and returned to the driver only after cuEventSynchronize. No free waits for the
 * queue. Every function here runs with the device's lock held and its context current. */
static size_t tfe__gp_hash(tfe__cu_ptr p, size_t cap) { return (size_t)((p >> 6) * 0x9e3779b97f4a7c15ULL) & (cap - 1); }
static bool tfe__gp_live_put(tfe__gpool *P, tfe__cu_ptr p, size_t bytes) {
  if (2 * (P->hn + 1) > P->hcap) { /* grow to keep the load under one half */
    size_t cap = P->hcap ? 2 * P->hcap : 256;
    tfe__cu_ptr *k = (tfe__cu_ptr *)calloc(cap, sizeof *k);
    size_t *v = (size_t *)calloc(cap, sizeof *v);
    if (!k || !v) { free(k), free(v); return false; }
    for (size_t i = 0; i < P->hcap; i++)
      if (P->hk[i]) {
        size_t j = tfe__gp_hash(P->hk[i], cap);
        while (k[j]) j = (j + 1) & (cap - 1);
        k[j] = P->hk[i], v[j] = P->hv[i];
      }
    free(P->hk), free(P->hv);
    P->hk = k, P->hv = v, P->hcap = cap;
  }
  size_t j = tfe__gp_hash(p, P->hcap);
  while (P->hk[j]) j = (j + 1) & (P->hcap - 1);
  P->hk[j] = p, P->hv[j] = bytes, P->hn++;
  return true;
}
/* Removes p from the live table (backward-shift deletion); false when it is not there. */
static bool tfe__gp_live_take(tfe__gpool *P, tfe__cu_ptr p, size_t *bytes) {
  if (!P->hcap) return false;
  size_t m = P->hcap - 1, j = tfe__gp_hash(p, P->hcap);
  while (P->hk[j] && P->hk[j] != p) j = (j + 1) & m;
  if (!P->hk[j]) return false;
  *bytes = P->hv[j];
  P->hk[j] = 0, P->hn--;
  for (size_t i = (j + 1) & m; P->hk[i]; i = (i + 1) & m) {
    size_t h = tfe__gp_hash(P->hk[i], P->hcap);
    if ((i > j && (h <= j || h > i)) || (i < j && h <= j && h > i)) {
      P->hk[j] = P->hk[i], P->hv[j] = P->hv[i], P->hk[i] = 0;
      j = i;
    }
  }
  return true;
}
static tfe__cu_result tfe__gp_raw_alloc(tfe__gpool *P, size_t bytes, tfe__cu_ptr *p) {
  if (!P->pinned) return tfe__gpu.cu.cuMemAlloc(p, bytes);
  void *h = NULL;
  tfe__cu_result r = tfe__gpu.cu.cuMemAllocHost(&h, bytes);
  *p = (tfe__cu_ptr)(uintptr_t)h;
  return r;
}
static void tfe__gp_raw_free(tfe__gpool *P, tfe__cu_ptr p) {
  if (P->pinned) tfe__gpu.cu.cuMemFreeHost((void *)(uintptr_t)p);
  else tfe__gpu.cu.cuMemFree(p);
}
static void tfe__gp_ev_put(tfe__gpool *P, tfe__cu_event e) {
  if (P->nev == P->capev) {
    int cap = P->capev ? 2 * P->capev : 64;
    tfe__cu_event *v = (tfe__cu_event *)realloc(P->ev, (size_t)cap * sizeof *v);
    if (!v) { tfe__gpu.cu.cuEventDestroy(e); return; }
    P->ev = v, P->capev = cap;
  }
  P->ev[P->nev++] = e;
}
/* Whether kept block k may be handed out (its events completed; they are recycled then). */
static bool tfe__gp_ready(tfe__gpool *P, tfe__gblk *k) {
  for (int i = 0; i < k->nev; i++)
    if (tfe__gpu.cu.cuEventQuery(k->ev[i]) == TFE__CU_ERROR_NOT_READY) return false;
  for (int i = 0; i < k->nev; i++) tfe__gp_ev_put(P, k->ev[i]);
  k->nev = 0;
  return true;
}
/* Gives kept block i back to the driver, after the work it is locked by. */
static void tfe__gp_release(tfe__gpool *P, int i) {
  tfe__gblk *k = &P->b[i];
  for (int e = 0; e < k->nev; e++) {
    tfe__gpu.cu.cuEventSynchronize(k->ev[e]);
    tfe__gp_ev_put(P, k->ev[e]);
  }
  tfe__gp_raw_free(P, k->p);
  P->kept_bytes -= k->bytes;
  memmove(&P->b[i], &P->b[i + 1], (size_t)(P->n - i - 1) * sizeof *P->b);
  P->n--;
}
static void tfe__gp_shrink(tfe__gpool *P, size_t limit) {
  while (P->n && P->kept_bytes > limit) tfe__gp_release(P, 0);
}
/* The cap: TFE_GPU_POOL_BYTES (device pools) at first use, else half the device's memory;
 * pinned buffers: 256 MiB. */
static size_t tfe__gp_limit(tfe__gpu_dev *D, tfe__gpool *P) {
  if (!P->limit_set) {
    P->limit_set = true;
    const char *e = P->pinned ? NULL : getenv("TFE_GPU_POOL_BYTES");
    P->limit = P->pinned ? (size_t)256 << 20 : D->info.total_mem / 2;
    if (e && *e) P->limit = (size_t)strtoull(e, NULL, 10);
  }
  return P->limit;
}

static tfe_status tfe__gpool_alloc(tfe__gpu_dev *D, tfe__gpool *P, size_t bytes, tfe__cu_ptr *out, const char *where) {
  if (D->cap) D->cap_taint = true; /* graph.h: a replay would not allocate */
  size_t c = tfe_pool_class_bytes(bytes ? bytes : 1), top = c;
  tfe_tuning tu = tfe_tuning_get();
  for (int64_t k = 0; k < tu.pool_reuse_classes; k++) top = tfe_pool_class_bytes(top + 1);
  bool pooled = tfe__gp_limit(D, P) > 0;
  int best = -1;
  /* newest first: among equal fits the block freed last comes back (warm in L2, and a plan's
   * arena keeps its address from run to run, so its CUDA graph replays: graph.h keys on it) */
  for (int i = P->n - 1; pooled && i >= 0; i--) {
    tfe__gblk *k = &P->b[i];
    if (k->bytes < c || k->bytes > top || (best >= 0 && k->bytes >= P->b[best].bytes)) continue;
    if (!tfe__gp_ready(P, k)) {
      P->locked_skips++;
      continue;
    }
    best = i;
    if (k->bytes == c) break;
  }
  if (best >= 0) {
    tfe__gblk k = P->b[best];
    if (!tfe__gp_live_put(P, k.p, k.bytes))
      return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no host memory for the pool's table");
    memmove(&P->b[best], &P->b[best + 1], (size_t)(P->n - best - 1) * sizeof *P->b);
    P->n--;
    P->kept_bytes -= k.bytes;
    P->hits++;
    if (k.bytes > c) P->larger++;
    *out = k.p;
    return TFE_OK;
  }
  tfe__cu_ptr p = 0;
  tfe__cu_result r = tfe__gp_raw_alloc(P, c, &p);
  if (r != 0 && P->n) { /* out of memory: give the kept blocks back, then try again */
    tfe__gp_shrink(P, 0);
    r = tfe__gp_raw_alloc(P, c, &p);
  }
  if (r != 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "%s: %s of %zu bytes: %s", D->bename,
                            P->pinned ? "cuMemAllocHost" : "cuMemAlloc", c, tfe__cu_errstr(r));
  if (!tfe__gp_live_put(P, p, c)) {
    tfe__gp_raw_free(P, p);
    return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no host memory for the pool's table");
  }
  P->misses++;
  *out = p;
  return TFE_OK;
}
/* Records an event after the work queued so far on queue s (false: none could be made). */
static bool tfe__gp_mark(tfe__gpool *P, tfe__cu_stream s, tfe__cu_event *e) {
  *e = P->nev ? P->ev[--P->nev] : NULL;
  if (!*e && tfe__gpu.cu.cuEventCreate(e, TFE__CU_EVENT_DISABLE_TIMING) != 0) return false;
  if (tfe__gpu.cu.cuEventRecord(*e, s) != 0) {
    tfe__gpu.cu.cuEventDestroy(*e);
    return false;
  }
  return true;
}
static void tfe__gpool_free(tfe__gpu_dev *D, tfe__gpool *P, tfe__cu_ptr p) {
  size_t bytes = 0;
  if (!p) return;
  if (D->cap) { /* a stream under capture records no usable event: freed when it ends (graph.h) */
    D->cap_taint = true;
    if (D->ncap_defer == D->cap_defer_cap) {
      int cap = D->cap_defer_cap ? 2 * D->cap_defer_cap : 16;
      struct tfe__gdefer *v = (struct tfe__gdefer *)realloc(D->cap_defer, (size_t)cap * sizeof *v);
      if (!v) return; /* no host memory: the block is lost, not handed out while work may use it */
      D->cap_defer = v, D->cap_defer_cap = cap;
    }
    D->cap_defer[D->ncap_defer].P = P, D->cap_defer[D->ncap_defer].p = p;
    D->ncap_defer++;
    return;
  }
  if (!tfe__gp_live_take(P, p, &bytes)) { /* not from the pool (cannot happen): the old way */
    tfe__gpu.cu.cuStreamSynchronize(D->stream0);
    tfe__gp_raw_free(P, p);
    return;
  }
  tfe__gblk k;
  k.p = p, k.bytes = bytes, k.nev = 0;
  bool ok = tfe__gp_limit(D, P) > 0 && bytes <= P->limit;
  if (ok && P->n == P->cap) {
    int cap = P->cap ? 2 * P->cap : 64;
    tfe__gblk *v = (tfe__gblk *)realloc(P->b, (size_t)cap * sizeof *v);
    if (v) P->b = v, P->cap = cap;
    else ok = false;
  }
  /* the queues that may still read it: the device's own stream and every runtime stream's */
  tfe__cu_stream qs[TFE__GPU_MAXQ + 1];
  int nq = 0;
  qs[nq++] = D->stream0;
  for (int i = 0; i < D->nq; i++) qs[nq++] = D->qs[i]->s;
  for (int i = 0; ok && i < nq; i++) ok = tfe__gp_mark(P, qs[i], &k.ev[k.nev++]) || (k.nev--, false);
  if (!ok) { /* the pool is off, or no event: wait for the queues, then give it back */
    for (int i = 0; i < k.nev; i++) tfe__gp_ev_put(P, k.ev[i]);
    for (int i = 0; i < nq; i++) tfe__gpu.cu.cuStreamSynchronize(qs[i]);
    tfe__gp_raw_free(P, p);
    return;
  }
  P->b[P->n++] = k;
  P->kept_bytes += bytes;
  tfe__gp_shrink(P, P->limit);
}
/* Everything kept goes back to the driver (after the work locking it); the events too. */
static void tfe__gpool_trim(tfe__gpool *P, bool events) {
  tfe__gp_shrink(P, 0);
  if (events) {
    for (int i = 0; i < P->nev; i++) tfe__gpu.cu.cuEventDestroy(P->ev[i]);
    P->nev = 0;
  }
}
static void tfe__gpool_stats(tfe__gpu_dev *D, tfe__gpool *P, tfe_pool_stats *o) {
  memset(o, 0, sizeof *o);
  o->hits = P->hits, o->misses = P->misses, o->larger = P->larger, o->locked_skips = P->locked_skips;
  o->kept_bytes = P->kept_bytes, o->kept_buffers = P->n, o->limit = tfe__gp_limit(D, P);
  for (int i = 0; i < P->n; i++) {
    tfe__gblk *k = &P->b[i];
    for (int e = 0; e < k->nev; e++)
      if (tfe__gpu.cu.cuEventQuery(k->ev[e]) == TFE__CU_ERROR_NOT_READY) {
        o->locked_buffers++;
        break;
      }
  }
}

/* The storage's free function: the block goes back to the device's pool, locked by the work
 * queued on the device so far (no wait). */
static void tfe__gpu_free_cb(void *ctx, void *ptr) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  if (tfe__gpu_enter(D, "tfe_storage_release") != TFE_OK) return;
  tfe__gpool_free(D, &D->pool, (tfe__cu_ptr)(uintptr_t)ptr);
  tfe__gpu_leave(D);
}

/* A storage of `bytes` (at least one byte) on device D, from its pool. */
static tfe_status tfe__gpu_storage(tfe__gpu_dev *D, size_t bytes, tfe_storage **out, const char *where) {
  tfe__cu_ptr p = 0;
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe_status st = tfe__gpool_alloc(D, &D->pool, bytes ? bytes : 1, &p, where);
  tfe__gpu_leave(D);
  if (st != TFE_OK) return st;
  tfe_memspace sp;
  sp.kind = TFE_MEM_GPU, sp.device = D->info.index;
  if (tfe_storage_wrap((void *)(uintptr_t)p, bytes ? bytes : 1, sp, tfe__gpu_free_cb, D, out) != TFE_OK) {
    tfe__gpu_free_cb(D, (void *)(uintptr_t)p);
    return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the storage record");
  }
  return TFE_OK;
}

/* Host bytes to device memory on the current queue (lock held): staged through a pinned
 * buffer (copied there now, so the source may change once this returns), which goes back to
 * the pinned pool locked by the copy. */
static tfe_status tfe__gpu_put(tfe__gpu_dev *D, tfe__cu_ptr dst, const void *src, size_t bytes, const char *where) {
  if (!bytes) return TFE_OK;
  if (bytes > tfe__gp_limit(D, &D->pinned) / 4) { /* too large to keep pinned: straight from pageable memory */
    tfe__cu_result r = tfe__gpu.cu.cuMemcpyHtoDAsync(dst, src, bytes, D->stream);
    if (r == 0) r = tfe__gpu.cu.cuStreamSynchronize(D->stream);
    if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "copy of %zu bytes to %s: %s", bytes, D->bename, tfe__cu_errstr(r));
    return TFE_OK;
  }
  tfe__cu_ptr stage = 0;
  TFE_TRY(tfe__gpool_alloc(D, &D->pinned, bytes, &stage, where));
  memcpy((void *)(uintptr_t)stage, src, bytes);
  tfe__cu_result r = tfe__gpu.cu.cuMemcpyHtoDAsync(dst, (const void *)(uintptr_t)stage, bytes, D->stream);
  tfe__gpool_free(D, &D->pinned, stage);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "copy of %zu bytes to %s: %s", bytes, D->bename, tfe__cu_errstr(r));
  return TFE_OK;
}
/* Device bytes to host memory (lock held): on the current queue into a pinned buffer, waited
 * for, then copied out (scatter: NULL for a plain copy to dst). */
static tfe_status tfe__gpu_get(tfe__gpu_dev *D, void *dst, tfe__cu_ptr src, size_t bytes, const char *where,
                               void (*scatter)(void *arg, const char *stage), void *arg) {
  if (!bytes) return TFE_OK;
  tfe__cu_ptr stage = 0;
  char *big = NULL;
  if (bytes > tfe__gp_limit(D, &D->pinned) / 4) { /* too large to keep pinned: a pageable buffer */
    if (!(big = (char *)malloc(bytes))) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for %zu bytes", bytes);
    stage = (tfe__cu_ptr)(uintptr_t)big;
  } else
    TFE_TRY(tfe__gpool_alloc(D, &D->pinned, bytes, &stage, where));
  tfe__cu_result r = tfe__gpu.cu.cuMemcpyDtoHAsync((void *)(uintptr_t)stage, src, bytes, D->stream);
  if (r == 0) r = tfe__gpu.cu.cuStreamSynchronize(D->stream);
  if (r == 0) {
    if (scatter) scatter(arg, (const char *)(uintptr_t)stage);
    else memcpy(dst, (const void *)(uintptr_t)stage, bytes);
  }
  if (big) free(big);
  else tfe__gpool_free(D, &D->pinned, stage);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "copy of %zu bytes from %s: %s", bytes, D->bename, tfe__cu_errstr(r));
  return TFE_OK;
}

static tfe__gpu_dev *tfe__gpu_dev_of(int dev, const char *where) {
  tfe__gpu_dev *D = tfe__gpu_device(dev);
  if (!D)
    TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "no GPU device %d (%d found: %s)", dev, tfe_gpu_device_count(),
                     tfe_gpu_status());
  return D;
}

TFE_GPU_API tfe_status tfe_gpu_alloc_dyn(tfe_dyn *out, int dev, tfe_dtype dt, int rank, const int64_t *dims,
                                         tfe_order order) {
  if (!out) return TFE__GPU_FAIL(TFE_ERR_NULL, "argument 'out' is NULL");
  tfe__gpu_dev *D = tfe__gpu_dev_of(dev, __func__);
  if (!D) return TFE_ERR_DEVICE;
  const tfe_dtype_info *info = tfe_dtype_get(dt);
  if (!info || (unsigned)dt >= (unsigned)TFE_DT_COUNT)
    return TFE__GPU_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)dt);
  tfe_layout L;
  int64_t n = 0, bytes = 0;
  if (tfe_layout_dense(rank, dims, order, &L) != TFE_OK || tfe_layout_check(&L, &n) != TFE_OK)
    return TFE__GPU_FAIL(TFE_ERR_INVALID, "bad dims for a rank-%d tensor (%s)", rank, tfe_last_error());
  if (__builtin_mul_overflow(n, (int64_t)info->size, &bytes))
    return TFE__GPU_FAIL(TFE_ERR_OVERFLOW, "%lld elements of %zu bytes overflow", (long long)n, info->size);
  tfe_storage *st = NULL;
  TFE_TRY(tfe__gpu_storage(D, (size_t)bytes, &st, __func__));
  memset(out, 0, sizeof *out);
  out->dtype = dt, out->data = st->ptr, out->lay = L, out->conj = false, out->st = st;
  return TFE_OK;
}

/* A view's kind, element size and element span [lo, hi] (false: no element). */
static bool tfe__gpu_span(const tfe_dyn *v, int64_t *lo, int64_t *hi) { return tfe_layout_extent(&v->lay, lo, hi); }

TFE_GPU_API tfe_status tfe_gpu_upload(tfe_dyn *out, int dev, const tfe_dyn *host) {
  if (!out || !host) return TFE__GPU_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", !out ? "out" : "host");
  if (host->st && host->st->space.kind != TFE_MEM_HOST)
    return TFE__GPU_FAIL(TFE_ERR_DEVICE, "the source is not in host memory");
  if (!tfe_dtype_get(host->dtype)) return TFE__GPU_FAIL(TFE_ERR_DTYPE, "unknown dtype %d", (int)host->dtype);
  tfe__gpu_dev *D = tfe__gpu_dev_of(dev, __func__);
  if (!D) return TFE_ERR_DEVICE;
  int64_t lo = 0, hi = -1, count;
  if (tfe_layout_check(&host->lay, &count) != TFE_OK) return TFE__GPU_FAIL(TFE_ERR_INVALID, "bad source layout");
  bool any = tfe__gpu_span(host, &lo, &hi);
  if (any && !host->data) return TFE__GPU_FAIL(TFE_ERR_NULL, "the source's data pointer is NULL");
  size_t es = tfe_dtype_get(host->dtype)->size, bytes = any ? (size_t)(hi - lo + 1) * es : 0;
  tfe_storage *st = NULL;
  TFE_TRY(tfe__gpu_storage(D, bytes, &st, __func__));
  tfe_status rs = tfe__gpu_enter(D, __func__);
  if (rs == TFE_OK) { /* staged through a pinned buffer: returns without waiting for the copy */
    rs = tfe__gpu_put(D, (tfe__cu_ptr)(uintptr_t)st->ptr, (const char *)host->data + lo * (int64_t)es, bytes, __func__);
    tfe__gpu_leave(D);
  }
  if (rs != TFE_OK) {
    tfe_storage_release(st);
    return rs;
  }
  memset(out, 0, sizeof *out);
  out->dtype = host->dtype, out->data = st->ptr, out->lay = host->lay, out->conj = host->conj, out->st = st;
  out->lay.offset -= lo;
  return TFE_OK;
}

/* Copies every element of the view sl over sbase into the view dl over dst (same dims). */
static void tfe__gpu_scatter(const tfe_layout *dl, char *dst, const tfe_layout *sl, const char *sbase, size_t es) {
  int64_t idx[TFE_MAX_RANK] = {0}, od = dl->offset, os = sl->offset;
  int r = dl->rank;
  for (;;) {
    memcpy(dst + od * (int64_t)es, sbase + os * (int64_t)es, es);
    int i = 0;
    for (; i < r; i++) {
      od += dl->strides[i], os += sl->strides[i];
      if (++idx[i] < dl->dims[i]) break;
      od -= dl->strides[i] * dl->dims[i], os -= sl->strides[i] * sl->dims[i];
      idx[i] = 0;
    }
    if (i == r) return;
  }
}

typedef struct tfe__gpu_dl { const tfe_dyn *host; tfe_layout sl; size_t es; } tfe__gpu_dl;
static void tfe__gpu_dl_scatter(void *arg, const char *stage) {
  tfe__gpu_dl *a = (tfe__gpu_dl *)arg;
  tfe__gpu_scatter(&a->host->lay, (char *)a->host->data, &a->sl, stage, a->es);
}
TFE_GPU_API tfe_status tfe_gpu_download(const tfe_dyn *device, const tfe_dyn *host) {
  if (!device || !host) return TFE__GPU_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", !device ? "device" : "host");
  if (!device->st || device->st->space.kind != TFE_MEM_GPU)
    return TFE__GPU_FAIL(TFE_ERR_DEVICE, "the source is not a device tensor (no storage in GPU memory)");
  if (host->st && host->st->space.kind != TFE_MEM_HOST)
    return TFE__GPU_FAIL(TFE_ERR_DEVICE, "the target is not in host memory");
  if (device->dtype != host->dtype || !tfe_dtype_get(host->dtype))
    return TFE__GPU_FAIL(TFE_ERR_DTYPE, "kinds differ (%s, %s)", tfe_dtype_name(device->dtype),
                         tfe_dtype_name(host->dtype));
  if (device->lay.rank != host->lay.rank ||
      memcmp(device->lay.dims, host->lay.dims, sizeof(int64_t) * (size_t)host->lay.rank) != 0)
    return TFE__GPU_FAIL(TFE_ERR_SHAPE, "dims differ");
  tfe__gpu_dev *D = tfe__gpu_dev_of(device->st->space.device, __func__);
  if (!D) return TFE_ERR_DEVICE;
  int64_t lo, hi;
  if (!tfe__gpu_span(device, &lo, &hi)) return TFE_OK;
  size_t es = tfe_dtype_get(host->dtype)->size, bytes = (size_t)(hi - lo + 1) * es;
  /* the same dense layout on both sides (strides equal, no gaps): one copy straight into the
   * host view, no staging buffer and no loop over elements */
  bool same = host->data != NULL && tfe_layout_numel(&device->lay) == hi - lo + 1;
  for (int i = 0; same && i < host->lay.rank; i++)
    same = host->lay.dims[i] <= 1 || host->lay.strides[i] == device->lay.strides[i];
  if (same) {
    int64_t hlo = host->lay.offset + (lo - device->lay.offset); /* host element of device element lo */
    tfe_status rs = tfe__gpu_enter(D, __func__);
    if (rs != TFE_OK) return rs;
    tfe__cu_ptr src = (tfe__cu_ptr)(uintptr_t)device->data + (tfe__cu_ptr)(lo * (int64_t)es);
    tfe__cu_result r = tfe__gpu.cu.cuMemcpyDtoHAsync((char *)host->data + hlo * (int64_t)es, src, bytes, D->stream);
    if (r == 0) r = tfe__gpu.cu.cuStreamSynchronize(D->stream);
    if (r != 0) rs = TFE__GPU_FAIL(TFE_ERR_DEVICE, "copy of %zu bytes from %s: %s", bytes, D->bename, tfe__cu_errstr(r));
    tfe__gpu_leave(D);
    return rs;
  }
  tfe__gpu_dl a;
  a.host = host, a.sl = device->lay, a.es = es;
  a.sl.offset -= lo; /* element offsets relative to the staging buffer */
  tfe_status rs = tfe__gpu_enter(D, __func__);
  if (rs == TFE_OK) {
    tfe__cu_ptr src = (tfe__cu_ptr)(uintptr_t)device->data + (tfe__cu_ptr)(lo * (int64_t)es);
    rs = tfe__gpu_get(D, NULL, src, bytes, __func__, tfe__gpu_dl_scatter, &a);
    tfe__gpu_leave(D);
  }
  return rs;
}

TFE_GPU_API tfe_status tfe_gpu_synchronize(int dev) {
  tfe__gpu_dev *D = tfe__gpu_dev_of(dev, __func__);
  if (!D) return TFE_ERR_DEVICE;
  TFE_TRY(tfe__gpu_enter(D, __func__));
  tfe__cu_result r = tfe__gpu.cu.cuStreamSynchronize(D->stream);
  tfe__gpu_leave(D);
  if (r != 0) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "%s: %s (CUDA error %d)", D->bename, tfe__cu_errstr(r), r);
  return TFE_OK;
}

static tfe_status tfe__gpu_mem_copy(const tfe_prims_backend *be, void *dst, tfe_memspace dst_space, const void *src,
                                    tfe_memspace src_space, size_t bytes) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)be->ctx;
  const char *where = "tfe_backend_copy";
  bool dd = dst_space.kind == TFE_MEM_GPU && dst_space.device == D->info.index;
  bool sd = src_space.kind == TFE_MEM_GPU && src_space.device == D->info.index;
  if (!(dd && (sd || src_space.kind == TFE_MEM_HOST)) && !(sd && dst_space.kind == TFE_MEM_HOST))
    return TFE__GPU_FAIL_AT(TFE_ERR_UNSUPPORTED, where, "%s copies between host memory and its own memory only",
                            D->bename);
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe_status st = TFE_OK;
  if (dd && sd) {
    tfe__cu_result r = bytes ? tfe__gpu.cu.cuMemcpyDtoDAsync((tfe__cu_ptr)(uintptr_t)dst, (tfe__cu_ptr)(uintptr_t)src,
                                                             bytes, D->stream) : 0;
    if (r != 0) st = TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "copy on %s: %s", D->bename, tfe__cu_errstr(r));
  } else if (dd)
    st = tfe__gpu_put(D, (tfe__cu_ptr)(uintptr_t)dst, src, bytes, where);
  else
    st = tfe__gpu_get(D, dst, (tfe__cu_ptr)(uintptr_t)src, bytes, where, NULL, NULL);
  tfe__gpu_leave(D);
  return st;
}

/* ---- the pools' public side ---------------------------------------------------------------- */
static tfe_status tfe__gpu_pool_op(int dev, int op, size_t bytes, tfe_pool_stats *out, const char *where) {
  tfe__gpu_dev *D = tfe__gpu_dev_of(dev, where);
  if (!D) return TFE_ERR_DEVICE;
  if ((op == 0 || op == 1) && !out) return TFE__GPU_FAIL_AT(TFE_ERR_NULL, where, "argument 'out' is NULL");
  TFE_TRY(tfe__gpu_enter(D, where));
  switch (op) {
  case 0: tfe__gpool_stats(D, &D->pool, out); break;
  case 1: tfe__gpool_stats(D, &D->pinned, out); break;
  case 2:
    tfe__gp_limit(D, &D->pool);
    D->pool.limit = bytes;
    tfe__gp_shrink(&D->pool, bytes);
    break;
  case 3: tfe__gpool_trim(&D->pool, false), tfe__gpool_trim(&D->pinned, false); break;
  default: D->pool.hits = D->pool.misses = D->pool.larger = D->pool.locked_skips = 0;
    D->pinned.hits = D->pinned.misses = D->pinned.larger = D->pinned.locked_skips = 0;
  }
  tfe__gpu_leave(D);
  return TFE_OK;
}
TFE_GPU_API tfe_status tfe_gpu_pool_stats(int dev, tfe_pool_stats *out) { return tfe__gpu_pool_op(dev, 0, 0, out, __func__); }
TFE_GPU_API tfe_status tfe_gpu_pinned_stats(int dev, tfe_pool_stats *out) { return tfe__gpu_pool_op(dev, 1, 0, out, __func__); }
TFE_GPU_API tfe_status tfe_gpu_pool_set_limit(int dev, size_t bytes) { return tfe__gpu_pool_op(dev, 2, bytes, NULL, __func__); }
TFE_GPU_API tfe_status tfe_gpu_pool_trim(int dev) { return tfe__gpu_pool_op(dev, 3, 0, NULL, __func__); }
TFE_GPU_API tfe_status tfe_gpu_pool_stats_reset(int dev) { return tfe__gpu_pool_op(dev, 4, 0, NULL, __func__); }

/* Device D's resources (lock held by the caller): workspace, kernels, cuBLAS handle, stream,
 * primary context. */
static void tfe__gpu_gs_clear(tfe__gpu_dev *D); /* graph.h */
static void tfe__gpu_teardown(tfe__gpu_dev *D) {
  if (!D->ready || tfe__gpu.cu.cuCtxSetCurrent(D->ctx) != 0) return;
  tfe__gpu.cu.cuStreamSynchronize(D->stream);
  tfe__gpu_gs_clear(D);
  if (D->ws) tfe__gpool_free(D, &D->pool, D->ws);
  tfe__gpool_trim(&D->pool, true), tfe__gpool_trim(&D->pinned, true);
  free(D->pool.b), free(D->pool.hk), free(D->pool.hv), free(D->pool.ev);
  free(D->pinned.b), free(D->pinned.hk), free(D->pinned.hv), free(D->pinned.ev);
  memset(&D->pool, 0, sizeof D->pool), memset(&D->pinned, 0, sizeof D->pinned);
  D->pinned.pinned = true;
  free(D->pc), D->pc = NULL;
  for (int g = 0; g < TFE__GK_COUNT; g++)
    if (D->mod[g]) tfe__gpu.cu.cuModuleUnload(D->mod[g]);
  if (D->blas) tfe__gpu.blas.destroy(D->blas);
  if (D->solp) tfe__gpu.sol.params_destroy(D->solp);
  if (D->sol) tfe__gpu.sol.destroy(D->sol);
  tfe__gpu.cu.cuStreamDestroy(D->stream);
  tfe__gpu.cu.cuDevicePrimaryCtxRelease(D->cudev);
  memset(D->mod, 0, sizeof D->mod), memset(D->f_unary, 0, sizeof D->f_unary), memset(D->f_scale, 0, sizeof D->f_scale);
  memset(D->f_perm, 0, sizeof D->f_perm), memset(D->f_perm_w, 0, sizeof D->f_perm_w), memset(D->f_ew, 0, sizeof D->f_ew), memset(D->f_ewred, 0, sizeof D->f_ewred);
  memset(D->f_ewn, 0, sizeof D->f_ewn), memset(D->f_perm_b, 0, sizeof D->f_perm_b), memset(D->perm_bsm, 0, sizeof D->perm_bsm);
  memset(D->f_tgemm, 0, sizeof D->f_tgemm);
  memset(D->f_la, 0, sizeof D->f_la), D->sol = NULL, D->solp = NULL;
  D->ws = 0, D->ws_bytes = 0, D->blas = NULL, D->stream = NULL, D->ctx = NULL, D->ready = false;
}

TFE_GPU_API void tfe_gpu_shutdown(void) {
  pthread_mutex_lock(&tfe__gpu.lock);
  for (int i = 0; i < tfe__gpu.ndev; i++) {
    tfe__gpu_dev *D = &tfe__gpu.dev[i];
    if (D->info.backend_id >= 0) tfe_device_set_hooks(D->info.backend_id, NULL), tfe_backend_unregister(D->bename);
    pthread_mutex_lock(&D->lock);
    tfe__gpu_teardown(D);
    pthread_mutex_unlock(&D->lock);
    pthread_mutex_destroy(&D->lock);
  }
  tfe__gpu.ndev = 0;
  tfe__gpu.init_done = tfe__gpu.tried_cuda = tfe__gpu.tried_hip = false;
  tfe__gpu.status[0] = 0;
  pthread_mutex_unlock(&tfe__gpu.lock);
}

#include <tenferro/gpu/stream.h>

#endif /* TFE__GPU_COMPANION */
#endif
