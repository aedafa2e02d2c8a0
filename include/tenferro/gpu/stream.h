/* tenferro/gpu/stream.h — gpu room, companion only: runtime streams on a CUDA device.
 *
 * tfe_stream_new on a device "cuda:N" (its registry id) makes a runtime stream whose queue is a
 * CUDA stream of its own, with its own cuBLAS handle and workspace (tfe__gpu_q). The runtime's
 * worker thread runs each task with the queue swapped in (device.h: tfe__gpu_enter), so the
 * task's kernels, GEMMs and copies are enqueued there and the task returns at once; its event
 * is a CUDA event recorded after them. A task of another CUDA stream that depends on it makes
 * its queue wait for that event (cuStreamWaitEvent); a CPU stream, tfe_wait and the implicit
 * waits of the synchronous API wait on the host (cuEventSynchronize), where a device error
 * surfaces with its message. Each task first orders its queue after the device's own stream
 * (the synchronous API's queue), so work submitted synchronously before is seen.
 * Parsed only inside tenferro_gpu.c (TFE__GPU_COMPANION). */
#ifndef TENFERRO_GPU_STREAM_H
#define TENFERRO_GPU_STREAM_H
#ifdef TFE__GPU_COMPANION

static tfe_status tfe__gpu_h_create(void *ctx, void **out) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  const char *where = "tfe_stream_new";
  tfe__gpu_q *q = (tfe__gpu_q *)calloc(1, sizeof *q);
  if (!q) return TFE__GPU_FAIL_AT(TFE_ERR_ALLOC, where, "no memory for a stream");
  q->D = D;
  tfe_status st = tfe__gpu_enter(D, where);
  if (st != TFE_OK) {
    free(q);
    return st;
  }
  tfe__cu_result r = D->nq == TFE__GPU_MAXQ ? -1 : tfe__gpu.cu.cuStreamCreate(&q->s, 0);
  if (r == 0 && (r = tfe__gpu.cu.cuEventCreate(&q->ev0, TFE__CU_EVENT_DISABLE_TIMING)) != 0)
    tfe__gpu.cu.cuStreamDestroy(q->s);
  if (r == 0 && D->blas) {
    if (tfe__gpu.blas.create(&q->blas) != 0) q->blas = NULL;
    else tfe__gpu.blas.set_stream(q->blas, q->s);
  }
  if (r == 0) D->qs[D->nq++] = q;
  tfe__gpu_leave(D);
  if (r != 0) {
    free(q);
    if (r == -1) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s has %d streams already", D->bename, TFE__GPU_MAXQ);
    return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, where, "%s: cuStreamCreate: %s", D->bename, tfe__cu_errstr(r));
  }
  *out = q;
  return TFE_OK;
}
static void tfe__gpu_h_destroy(void *ctx, void *qv) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  tfe__gpu_q *q = (tfe__gpu_q *)qv;
  pthread_mutex_lock(&D->lock);
  if (D->ready && tfe__gpu.cu.cuCtxSetCurrent(D->ctx) == 0) {
    tfe__gpu.cu.cuStreamSynchronize(q->s);
    int k = 0;
    for (int i = 0; i < D->nq; i++)
      if (D->qs[i] != q) D->qs[k++] = D->qs[i];
    D->nq = k;
    if (q->ws) tfe__gpool_free(D, &D->pool, q->ws);
    if (q->blas) tfe__gpu.blas.destroy(q->blas);
    tfe__gpu.cu.cuEventDestroy(q->ev0);
    tfe__gpu.cu.cuStreamDestroy(q->s);
  }
  pthread_mutex_unlock(&D->lock);
  free(q);
}
static void tfe__gpu_h_begin(void *ctx, void *qv) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  tfe__gpu_q *q = (tfe__gpu_q *)qv;
  tfe__gpu_cur = NULL;
  if (tfe__gpu_enter(D, "tfe_stream") == TFE_OK) { /* after what the synchronous API queued */
    if (tfe__gpu.cu.cuEventRecord(q->ev0, D->stream0) == 0) tfe__gpu.cu.cuStreamWaitEvent(q->s, q->ev0, 0);
    tfe__gpu_leave(D);
  }
  tfe__gpu_cur = q;
}
static void tfe__gpu_h_end(void *ctx, void *qv) {
  (void)ctx, (void)qv;
  tfe__gpu_cur = NULL;
}
static tfe_status tfe__gpu_h_record(void *ctx, void *qv, void **dev) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  tfe__gpu_q *q = (tfe__gpu_q *)qv;
  TFE_TRY(tfe__gpu_enter(D, "tfe_stream"));
  tfe__cu_event e = NULL;
  bool ok = tfe__gp_mark(&D->pool, q->s, &e);
  tfe__gpu_leave(D);
  if (!ok) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, "tfe_stream", "%s: no CUDA event could be recorded", D->bename);
  *dev = (void *)e;
  return TFE_OK;
}
static tfe_status tfe__gpu_h_wait_device(void *ctx, void *qv, void *dev) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  tfe__gpu_q *q = (tfe__gpu_q *)qv;
  tfe__cu_result r = tfe__gpu.cu.cuCtxSetCurrent(D->ctx);
  if (r == 0) r = tfe__gpu.cu.cuStreamWaitEvent(q->s, (tfe__cu_event)dev, 0);
  if (r != 0) return TFE__GPU_FAIL_AT(TFE_ERR_DEVICE, "tfe_stream", "cuStreamWaitEvent: %s", tfe__cu_errstr(r));
  return TFE_OK;
}
static int tfe__gpu_h_query(void *ctx, void *dev) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  tfe__gpu.cu.cuCtxSetCurrent(D->ctx);
  tfe__cu_result r = tfe__gpu.cu.cuEventQuery((tfe__cu_event)dev);
  return r == 0 ? 1 : r == TFE__CU_ERROR_NOT_READY ? 0 : -1;
}
static tfe_status tfe__gpu_h_sync(void *ctx, void *dev, char *msg, size_t n) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  tfe__cu_result r = tfe__gpu.cu.cuCtxSetCurrent(D->ctx);
  if (r == 0) r = tfe__gpu.cu.cuEventSynchronize((tfe__cu_event)dev);
  if (r == 0) return TFE_OK;
  snprintf(msg, n, "tfe_wait: %s failed while running queued work: %s (CUDA error %d)", D->bename, tfe__cu_errstr(r), r);
  return TFE_ERR_DEVICE;
}
static void tfe__gpu_h_event_free(void *ctx, void *dev) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  pthread_mutex_lock(&D->lock);
  if (D->ready) tfe__gp_ev_put(&D->pool, (tfe__cu_event)dev); /* recycled: recorded again later */
  pthread_mutex_unlock(&D->lock);
}
static tfe_status tfe__gpu_h_pool_stats(void *ctx, tfe_pool_stats *out) {
  tfe__gpu_dev *D = (tfe__gpu_dev *)ctx;
  return tfe__gpu_pool_op(D->info.index, 0, 0, out, "tfe_memspace_pool_stats");
}
static void tfe__gpu_hooks_install(tfe__gpu_dev *D) {
  tfe_stream_hooks h;
  memset(&h, 0, sizeof h);
  h.ctx = D;
  h.create = tfe__gpu_h_create, h.destroy = tfe__gpu_h_destroy, h.begin = tfe__gpu_h_begin, h.end = tfe__gpu_h_end;
  h.record = tfe__gpu_h_record, h.wait_device = tfe__gpu_h_wait_device, h.query = tfe__gpu_h_query;
  h.sync = tfe__gpu_h_sync, h.event_free = tfe__gpu_h_event_free, h.pool_stats = tfe__gpu_h_pool_stats;
  if (tfe_device_set_hooks(D->info.backend_id, &h) != TFE_OK)
    tfe__gpu_note("%s: runtime streams not installed (%s)", D->bename, tfe_gpu_last_error());
}

TFE_GPU_API tfe_status tfe_gpu_stream_new(int dev, tfe_stream **out) {
  tfe__gpu_dev *D = tfe__gpu_dev_of(dev, __func__);
  if (!D) return TFE_ERR_DEVICE;
  if (D->info.backend_id < 0) return TFE__GPU_FAIL(TFE_ERR_DEVICE, "%s is not registered", D->bename);
  return tfe_stream_new(D->info.backend_id, out);
}

#endif /* TFE__GPU_COMPANION */
#endif
