/* tenferro/tensor/storage.h — reference-counted storage and memory spaces.
 * A storage owns (or borrows) one allocation in one memory space, with an optional compute
 * device and a completion event (both read by the backend selection and the runtime). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_TENSOR_STORAGE_H
#define TENFERRO_TENSOR_STORAGE_H
#include <tenferro/core/core.h>
#include <stdatomic.h>
/* ---- memory spaces and storage ---------------------------------------------------------------- */
typedef enum tfe_memkind { TFE_MEM_HOST = 0, TFE_MEM_GPU = 1 } tfe_memkind;
typedef struct tfe_memspace { tfe_memkind kind; int device; } tfe_memspace;
#ifdef __cplusplus /* no compound literals in C++ */
#define TFE_HOST (tfe_memspace{TFE_MEM_HOST, 0})
#else
#define TFE_HOST ((tfe_memspace){TFE_MEM_HOST, 0})
#endif

typedef struct tfe_storage {
  atomic_long refcount;
  void *ptr;                 /* first byte of the allocation (host or device address) */
  size_t bytes;
  tfe_memspace space;
  int compute_device;        /* -1: none set (inferred from the memory space) */
  void *event;               /* pending work of stream tasks on it (runtime room); NULL: none ever */
  /* Who frees ptr: NULL for a wrapped user buffer (never freed by tenferro). */
  void (*free_fn)(void *ctx, void *ptr);
  void *free_ctx;
} tfe_storage;

/* A new host storage of `bytes` from the allocation hook, refcount 1. */
TFE_API tfe_status tfe_storage_new(size_t bytes, tfe_storage **out);
/* Wrap memory the caller owns (not freed by tenferro; free_fn may be given to hand it over). */
TFE_API tfe_status tfe_storage_wrap(void *ptr, size_t bytes, tfe_memspace space,
                                    void (*free_fn)(void *, void *), void *free_ctx,
                                    tfe_storage **out);
TFE_API void tfe_storage_retain(tfe_storage *s);
TFE_API void tfe_storage_release(tfe_storage *s);
/* The storage's compute device (-1: none set), and setting it (runtime/device.h lists ids). */
TFE_API int tfe_storage_device(const tfe_storage *s);
TFE_API void tfe_storage_set_device(tfe_storage *s, int device);

#if TFE__IMPL
/* runtime room: the record of pending work, and the allocator a scoped context sets. */
TFE_INTERNAL void tfe__rt_track_drop(void *track);
TFE_INTERNAL const tfe_allocator *tfe__rt_ctx_allocator(void);
#endif

#endif
#elif !defined(TENFERRO_TENSOR_STORAGE_BODY) /* bodies */
#define TENFERRO_TENSOR_STORAGE_BODY
TFE_INTERNAL void tfe__storage_free_hook(void *ctx, void *p) { (void)ctx; tfe__free(p); }
/* A scoped context's allocator (runtime room) serves the elements; the storage remembers it,
 * so that the elements go back to it wherever the last reference is dropped. */
TFE_INTERNAL void tfe__storage_ctx_free(void *ctx, void *p) {
  const tfe_allocator *a = (const tfe_allocator *)ctx;
  a->free(a->ctx, p);
}
TFE_API tfe_status tfe_storage_new(size_t bytes, tfe_storage **out) {
  TFE_CHECK_NULL(out);
  tfe_storage *s = (tfe_storage *)tfe__alloc(sizeof *s);
  if (!s) return TFE_ERR_ALLOC;
  const tfe_allocator *ca = tfe__ts.rt.nctx ? tfe__rt_ctx_allocator() : NULL;
  void *p = ca ? ca->alloc(ca->ctx, bytes, TFE_ALIGN) : tfe__alloc(bytes);
  if (!p) {
    tfe__free(s);
    return ca ? TFE_FAIL(TFE_ERR_ALLOC, "the context's allocator failed on %zu bytes", bytes) : TFE_ERR_ALLOC;
  }
  atomic_init(&s->refcount, 1);
  s->ptr = p; s->bytes = bytes; s->space = TFE_HOST; s->compute_device = -1; s->event = NULL;
  s->free_fn = ca ? tfe__storage_ctx_free : tfe__storage_free_hook;
  s->free_ctx = (void *)ca;
  *out = s;
  return TFE_OK;
}
TFE_API tfe_status tfe_storage_wrap(void *ptr, size_t bytes, tfe_memspace space,
                                    void (*free_fn)(void *, void *), void *free_ctx,
                                    tfe_storage **out) {
  TFE_CHECK_NULL(out);
  if (!ptr && bytes) return TFE_FAIL(TFE_ERR_NULL, "buffer is NULL but %zu bytes were given", bytes);
  tfe_storage *s = (tfe_storage *)tfe__alloc(sizeof *s);
  if (!s) return TFE_ERR_ALLOC;
  atomic_init(&s->refcount, 1);
  s->ptr = ptr; s->bytes = bytes; s->space = space; s->compute_device = -1; s->event = NULL;
  s->free_fn = free_fn; s->free_ctx = free_ctx;
  *out = s;
  return TFE_OK;
}
TFE_API void tfe_storage_retain(tfe_storage *s) {
  if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}
TFE_API void tfe_storage_release(tfe_storage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) == 1) {
    /* no task holds it any more (tasks keep references): its record is history */
    if (s->event) tfe__rt_track_drop(s->event);
    if (s->free_fn) s->free_fn(s->free_ctx, s->ptr);
    tfe__free(s);
  }
}
TFE_API int tfe_storage_device(const tfe_storage *s) { return s ? s->compute_device : -1; }
TFE_API void tfe_storage_set_device(tfe_storage *s, int device) {
  if (s) s->compute_device = device < 0 ? -1 : device;
}
#endif
