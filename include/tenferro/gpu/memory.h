/* tenferro/gpu/memory.h — gpu room, companion only: device tensors (tfe_dyn over storage in
 * {TFE_MEM_GPU, N}) and the copies between host and device. Until the backend protocol gains
 * memory slots, device memory comes from cuMemAlloc directly and goes back through the
 * storage's free function. Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_MEMORY_H
#define TENFERRO_GPU_MEMORY_H
#ifdef TFE__GPU_COMPANION

/* The storage's free function: waits for the device's queued work, then frees. */
static void tfe__gpu_free_cb(void *ctx, void *ptr) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  if (tfe__gpu_enter(D, "tfe_storage_release") != TFE_OK) return;
  tfe__gpu.cu.cuStreamSynchronize(D->stream);
  tfe__gpu.cu.cuMemFree((tfe__cu_ptr)(uintptr_t)ptr);
  tfe__gpu_leave(D);
}

/* A storage of `bytes` (at least one byte) on device D. */
static tfe_status tfe__gpu_storage(tfe__gpu_dev *D, size_t bytes, tfe_storage **out, const char *where) {
  tfe__cu_ptr p = 0;
  TFE_TRY(tfe__gpu_enter(D, where));
  tfe__cu_result r = tfe__gpu.cu.cuMemAlloc(&p, bytes ? bytes : 1);
  tfe__gpu_leave(D);
  if (r != 0)
    return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "%s: cuMemAlloc of %zu bytes: %s", D->bename, bytes, tfe__cu_errstr(r));
  tfe_memspace sp;
  sp.kind = TFE_MEM_GPU, sp.device = D->info.index;
  if (tfe_storage_wrap((void *)(uintptr_t)p, bytes ? bytes : 1, sp, tfe__gpu_free_cb, D, out) != TFE_OK) {
    tfe__gpu_free_cb(D, (void *)(uintptr_t)p);
    return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for the storage record");
  }
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
  if (rs == TFE_OK) {
    tfe__cu_result r = 0;
    const char *src = (const char *)host->data + lo * (int64_t)es;
    if (bytes) r = tfe__gpu.cu.cuMemcpyHtoDAsync((tfe__cu_ptr)(uintptr_t)st->ptr, src, bytes, D->stream);
    if (r == 0) r = tfe__gpu.cu.cuStreamSynchronize(D->stream);
    if (r != 0) rs = TFE__GPU_FAIL(TFE_ERR_DEVICE, "copy of %zu bytes to %s: %s", bytes, D->bename, tfe__cu_errstr(r));
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
  char *tmp = (char *)malloc(bytes);
  if (!tmp) return TFE__GPU_FAIL(TFE_ERR_ALLOC, "no memory for a %zu-byte staging buffer", bytes);
  tfe_status rs = tfe__gpu_enter(D, __func__);
  if (rs == TFE_OK) {
    tfe__cu_ptr src = (tfe__cu_ptr)(uintptr_t)device->data + (tfe__cu_ptr)(lo * (int64_t)es);
    tfe__cu_result r = tfe__gpu.cu.cuMemcpyDtoHAsync(tmp, src, bytes, D->stream);
    if (r == 0) r = tfe__gpu.cu.cuStreamSynchronize(D->stream);
    if (r != 0) rs = TFE__GPU_FAIL(TFE_ERR_DEVICE, "copy of %zu bytes from %s: %s", bytes, D->bename, tfe__cu_errstr(r));
    tfe__gpu_leave(D);
  }
  tfe_layout sl = device->lay;
  sl.offset -= lo; /* element offsets relative to tmp */
  if (rs == TFE_OK) tfe__gpu_scatter(&host->lay, (char *)host->data, &sl, tmp, es);
  free(tmp);
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

/* Device D's resources (lock held by the caller): workspace, kernels, cuBLAS handle, stream,
 * primary context. */
static void tfe__gpu_teardown(tfe__gpu_dev *D) {
  if (!D->ready || tfe__gpu.cu.cuCtxSetCurrent(D->ctx) != 0) return;
  tfe__gpu.cu.cuStreamSynchronize(D->stream);
  if (D->ws) tfe__gpu.cu.cuMemFree(D->ws);
  for (int g = 0; g < TFE__GK_COUNT; g++)
    if (D->mod[g]) tfe__gpu.cu.cuModuleUnload(D->mod[g]);
  if (D->blas) tfe__gpu.blas.destroy(D->blas);
  tfe__gpu.cu.cuStreamDestroy(D->stream);
  tfe__gpu.cu.cuDevicePrimaryCtxRelease(D->cudev);
  memset(D->mod, 0, sizeof D->mod), memset(D->f_unary, 0, sizeof D->f_unary), memset(D->f_scale, 0, sizeof D->f_scale);
  memset(D->f_perm, 0, sizeof D->f_perm), memset(D->f_ew, 0, sizeof D->f_ew), memset(D->f_ewred, 0, sizeof D->f_ewred);
  memset(D->f_tgemm, 0, sizeof D->f_tgemm);
  D->ws = 0, D->ws_bytes = 0, D->blas = NULL, D->stream = NULL, D->ctx = NULL, D->ready = false;
}

TFE_GPU_API void tfe_gpu_shutdown(void) {
  pthread_mutex_lock(&tfe__gpu.lock);
  for (int i = 0; i < tfe__gpu.ndev; i++) {
    tfe__gpu_dev *D = &tfe__gpu.dev[i];
    if (D->info.backend_id >= 0) tfe_backend_unregister(D->bename);
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

#endif /* TFE__GPU_COMPANION */
#endif
