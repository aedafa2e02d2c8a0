/* tenferro/core/alloc.h — allocation hooks and the pool of large buffers.
 *
 * Every tenferro allocation goes through one process-wide allocator (tfe_set_allocator
 * replaces it). The default allocator keeps large freed buffers (from 4 MiB) and hands them
 * out again: a fresh buffer costs the system zeroing every page on first touch, and the
 * intermediates of a contraction sequence and repeated permutations are exactly such
 * short-lived buffers (measurements: docs/bench-kernel.md, round 6). Kept: at most
 * tfe_pool_limit() bytes in at most TFE__POOL_SLOTS buffers, oldest given back first; a
 * request takes a kept buffer at most 1/8 larger than itself. The limit is 2 GiB, or the
 * environment's TFE_POOL_BYTES read at first use, or tfe_pool_set_limit(); 0 turns the pool
 * off (as under AddressSanitizer, whose use-after-free checks a pool would blunt). Custom
 * allocators bypass it. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_ALLOC_H
#define TENFERRO_CORE_ALLOC_H
#include <tenferro/config.h>
#include <tenferro/core/lock.h>

typedef struct tfe_allocator {
  void *(*alloc)(void *ctx, size_t bytes, size_t align); /* NULL on failure */
  void (*free)(void *ctx, void *ptr);
  void *ctx;
} tfe_allocator;

/* Alignment of every tenferro allocation (a cache line, the widest vector). */
#define TFE_ALIGN 64

/* Replace the process-wide allocator (NULL restores the default). Not thread-safe with
 * respect to running operations: set it before starting work. */
TFE_API void tfe_set_allocator(const tfe_allocator *a);
TFE_API tfe_allocator tfe_get_allocator(void);

/* The pool's limit in bytes (0: off). */
TFE_API size_t tfe_pool_limit(void);
/* Bytes the pool keeps now. */
TFE_API size_t tfe_pool_kept_bytes(void);
/* Set the limit (0 turns the pool off); kept buffers over it are given back at once. */
TFE_API void tfe_pool_set_limit(size_t bytes);
/* Give every kept buffer back to the system (the limit stays). */
TFE_API void tfe_pool_trim(void);

/* Internal: the allocation front every room uses (the message names the caller). */
#define tfe__alloc(bytes) tfe__alloc_at((bytes), __func__)
#define tfe__calloc(n, size) tfe__calloc_at((n), (size), __func__)

#define TFE__POOL_MIN ((size_t)4 << 20)
#define TFE__POOL_LIVE 1024 /* large buffers handed out whose size the pool remembers */
#define TFE__POOL_SLOTS 32
typedef struct { void *p; size_t bytes; } tfe__pblock;
/* The pool's part of the process state (core/state.h). */
typedef struct tfe__pool {
  tfe__lock lock;
  tfe__pblock live[TFE__POOL_LIVE];
  tfe__pblock kept[TFE__POOL_SLOTS]; /* oldest first */
  int nlive, nkept;
  size_t kept_sum;
  int64_t max; /* -1: not read from the environment yet */
} tfe__pool;

#if defined(__SANITIZE_ADDRESS__)
#define TFE__POOL_DEFAULT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TFE__POOL_DEFAULT 0
#endif
#endif
#ifndef TFE__POOL_DEFAULT
#define TFE__POOL_DEFAULT ((int64_t)2 << 30)
#endif

#endif
#elif !defined(TENFERRO_CORE_ALLOC_BODY) /* bodies */
#define TENFERRO_CORE_ALLOC_BODY
#include <stdlib.h>
#include <string.h>

/* The limit (lock held). */
TFE_INTERNAL size_t tfe__pool_limit_locked(void) {
  tfe__pool *P = &tfe__st.pool;
  if (P->max < 0) {
    const char *e = getenv("TFE_POOL_BYTES");
    char *end = NULL;
    unsigned long long v = e ? strtoull(e, &end, 10) : 0;
    P->max = e && end != e && v <= (unsigned long long)INT64_MAX ? (int64_t)v : TFE__POOL_DEFAULT;
  }
  return (size_t)P->max;
}
/* Drop kept buffers, oldest first, until `need` more bytes (and, when need > 0, one more
 * buffer) fit under `limit`; the dropped ones go to out[] (freed by the caller after unlocking). */
TFE_INTERNAL int tfe__pool_evict(size_t limit, size_t need, void **out) {
  tfe__pool *P = &tfe__st.pool;
  int n = 0;
  while (P->nkept > 0 && (P->kept_sum + need > limit || (need && P->nkept >= TFE__POOL_SLOTS))) {
    out[n++] = P->kept[0].p;
    P->kept_sum -= P->kept[0].bytes;
    memmove(P->kept, P->kept + 1, (size_t)--P->nkept * sizeof *P->kept);
  }
  return n;
}
/* A kept buffer of at least `bytes` (at most 1/8 more) aligned to `align`, or NULL. */
TFE_INTERNAL void *tfe__pool_take(size_t bytes, size_t align) {
  tfe__pool *P = &tfe__st.pool;
  void *p = NULL;
  tfe__lock_take(&P->lock);
  int best = -1;
  for (int i = 0; i < P->nkept; i++) {
    size_t b = P->kept[i].bytes;
    if (b >= bytes && b - bytes <= bytes / 8 && (uintptr_t)P->kept[i].p % align == 0 &&
        (best < 0 || b < P->kept[best].bytes))
      best = i;
  }
  if (best >= 0 && P->nlive < TFE__POOL_LIVE) {
    p = P->kept[best].p;
    P->live[P->nlive++] = P->kept[best];
    P->kept_sum -= P->kept[best].bytes;
    memmove(P->kept + best, P->kept + best + 1, (size_t)(--P->nkept - best) * sizeof *P->kept);
  }
  tfe__lock_give(&P->lock);
  return p;
}
/* Remember a new large buffer's size (when the table is full it is simply not pooled). */
TFE_INTERNAL void tfe__pool_track(void *p, size_t bytes) {
  tfe__pool *P = &tfe__st.pool;
  tfe__lock_take(&P->lock);
  if (P->nlive < TFE__POOL_LIVE) P->live[P->nlive++] = (tfe__pblock){p, bytes};
  tfe__lock_give(&P->lock);
}
/* Keep a freed buffer if it is a tracked large one and fits; true when it was taken. */
TFE_INTERNAL bool tfe__pool_give(void *p) {
  tfe__pool *P = &tfe__st.pool;
  void *drop[TFE__POOL_SLOTS + 1];
  int nd = 0;
  bool kept = false;
  tfe__lock_take(&P->lock);
  for (int i = 0; i < P->nlive; i++)
    if (P->live[i].p == p) {
      tfe__pblock b = P->live[i];
      P->live[i] = P->live[--P->nlive];
      size_t limit = tfe__pool_limit_locked();
      if (b.bytes <= limit) {
        nd = tfe__pool_evict(limit, b.bytes, drop);
        P->kept[P->nkept++] = b;
        P->kept_sum += b.bytes;
        kept = true;
      }
      break;
    }
  tfe__lock_give(&P->lock);
  for (int i = 0; i < nd; i++) free(drop[i]);
  return kept;
}

/* Buffers from 4 MiB start on a 2 MiB boundary: lines of a strided tile then never straddle
 * 4 KiB pages where the prefetchers stop, and huge pages cover the whole buffer; smaller
 * buffers keep the C library's placement (docs/bench-kernel.md, "allocation alignment"). The
 * unused head is address space, never touched. Large buffers go through the pool above. */
TFE_INTERNAL void *tfe__default_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  if (align < sizeof(void *)) align = sizeof(void *);
  if (bytes >= TFE__POOL_MIN && align < ((size_t)2 << 20)) align = (size_t)2 << 20;
  /* C11 aligned_alloc wants a size that is a multiple of the alignment. */
  if (bytes > SIZE_MAX - align) return NULL;
  size_t rounded = (bytes + align - 1) / align * align;
  if (rounded < TFE__POOL_MIN) return aligned_alloc(align, rounded ? rounded : align);
  void *p = tfe__pool_take(rounded, align);
  tfe__ts.pool_recycled = p != NULL;
  if (p) return p;
  p = aligned_alloc(align, rounded);
  if (p) tfe__pool_track(p, rounded);
  return p;
}
TFE_INTERNAL void tfe__default_free(void *ctx, void *p) {
  (void)ctx;
  if (p && !tfe__pool_give(p)) free(p);
}
TFE_API size_t tfe_pool_limit(void) {
  tfe__pool *P = &tfe__st.pool;
  tfe__lock_take(&P->lock);
  size_t l = tfe__pool_limit_locked();
  tfe__lock_give(&P->lock);
  return l;
}
TFE_API size_t tfe_pool_kept_bytes(void) {
  tfe__pool *P = &tfe__st.pool;
  tfe__lock_take(&P->lock);
  size_t k = P->kept_sum;
  tfe__lock_give(&P->lock);
  return k;
}
TFE_API void tfe_pool_set_limit(size_t bytes) {
  tfe__pool *P = &tfe__st.pool;
  void *drop[TFE__POOL_SLOTS + 1];
  tfe__lock_take(&P->lock);
  P->max = bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
  int nd = tfe__pool_evict(bytes, 0, drop);
  tfe__lock_give(&P->lock);
  for (int i = 0; i < nd; i++) free(drop[i]);
}
TFE_API void tfe_pool_trim(void) {
  tfe__pool *P = &tfe__st.pool;
  void *drop[TFE__POOL_SLOTS + 1];
  int nd = 0;
  tfe__lock_take(&P->lock);
  while (P->nkept > 0) drop[nd++] = P->kept[--P->nkept].p;
  P->kept_sum = 0;
  tfe__lock_give(&P->lock);
  for (int i = 0; i < nd; i++) free(drop[i]);
}

TFE_API void tfe_set_allocator(const tfe_allocator *a) {
  if (a) tfe__st.allocator = *a;
  else memset(&tfe__st.allocator, 0, sizeof tfe__st.allocator);
}
TFE_API tfe_allocator tfe_get_allocator(void) {
  if (tfe__st.allocator.alloc) return tfe__st.allocator;
  tfe_allocator d = {tfe__default_alloc, tfe__default_free, NULL};
  return d;
}

/* All tenferro allocations go through here; failure sets the thread-local message. */
TFE_INTERNAL void *tfe__alloc_at(size_t bytes, const char *where) {
  tfe_allocator a = tfe_get_allocator();
  void *p = a.alloc(a.ctx, bytes, TFE_ALIGN);
  if (!p) tfe__fail(TFE_ERR_ALLOC, where, "allocation of %zu bytes failed", bytes);
  return p;
}
TFE_INTERNAL void tfe__free(void *p) {
  if (!p) return;
  tfe_allocator a = tfe_get_allocator();
  a.free(a.ctx, p);
}
TFE_INTERNAL void *tfe__calloc_at(size_t n, size_t size, const char *where) {
  if (size && n > SIZE_MAX / size) {
    tfe__fail(TFE_ERR_OVERFLOW, where, "%zu x %zu bytes overflows", n, size);
    return NULL;
  }
  void *p = tfe__alloc_at(n * size, where);
  if (p) memset(p, 0, n * size);
  return p;
}
#endif
