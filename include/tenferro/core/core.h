/* tenferro/core.h — the core room: status codes and messages, allocation hooks and the pool of
 * large buffers (tfe_pool_*), threads, overflow-safe size arithmetic. Everything else in
 * tenferro stands on this. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_H
#define TENFERRO_CORE_H

#include <tenferro/config.h>
#include <stdio.h>

/* ---- status codes ---------------------------------------------------------------------- */
typedef enum tfe_status {
  TFE_OK = 0,
  TFE_ERR_NULL,        /* a required pointer argument was NULL */
  TFE_ERR_INVALID,     /* an argument is out of its domain (negative dim, bad flag, ...) */
  TFE_ERR_RANK,        /* rank above TFE_MAX_RANK or not what the operation needs */
  TFE_ERR_SHAPE,       /* dimensions that must agree do not */
  TFE_ERR_OVERFLOW,    /* a size computation would overflow */
  TFE_ERR_ALLOC,       /* the allocation hook returned NULL */
  TFE_ERR_BOUNDS,      /* an index or slice lies outside the tensor */
  TFE_ERR_DTYPE,       /* element kinds do not match */
  TFE_ERR_OVERLAP,     /* a written view overlaps itself or an input */
  TFE_ERR_STRIDES,     /* the strides do not allow the zero-copy operation asked for */
  TFE_ERR_PARSE,       /* malformed expression or file */
  TFE_ERR_UNSUPPORTED, /* valid request this backend / kind does not provide */
  TFE_ERR_SINGULAR,    /* singular or not positive definite matrix */
  TFE_ERR_NOCONV,      /* an iterative algorithm did not converge */
  TFE_ERR_IO,          /* file or stream error */
  TFE_ERR_DEVICE,      /* device or memory-space problem */
  TFE_ERR_INTERNAL,    /* a bug in tenferro: please report */
  TFE_STATUS_COUNT_
} tfe_status;

TFE_API const char *tfe_status_name(tfe_status s);

/* ---- thread-local error message ---------------------------------------------------------- */
#define TFE_ERRMSG_MAX 512

/* The message of the last failure on this thread: "function: what was wrong". */
TFE_API const char *tfe_last_error(void);
TFE_API tfe_status tfe_last_status(void);
TFE_API void tfe_clear_error(void);
/* return TFE_FAIL(TFE_ERR_SHAPE, "dim %d is %lld, expected %lld", ...); */
/* The comma form lets the compiler see the returned code (variadic functions are not inlined). */
#define TFE_FAIL(st, ...) (tfe__fail((st), __func__, __VA_ARGS__), (st))
/* The same on behalf of a named caller (helpers that validate for a public function). */
#define TFE_FAIL_AT(st, where, ...) (tfe__fail((st), (where), __VA_ARGS__), (st))
#define TFE_CHECK_NULL(p) \
  do { if (!(p)) return TFE_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", #p); } while (0)
#define TFE_TRY(expr) \
  do { tfe_status tfe__st_ = (expr); if (tfe__st_ != TFE_OK) return tfe__st_; } while (0)

/* ---- allocation hooks ---------------------------------------------------------------------- */
typedef struct tfe_allocator {
  void *(*alloc)(void *ctx, size_t bytes, size_t align); /* NULL on failure */
  void (*free)(void *ctx, void *ptr);
  void *ctx;
} tfe_allocator;

#define TFE_ALIGN 64

/* ---- the large-buffer pool ---------------------------------------------------------------
 * The default allocator keeps large freed buffers (from 4 MiB) and hands them out again.
 * A fresh buffer costs the system zeroing every page on first touch: on the 2-core Zen 3 a
 * transposing copy into 128 MiB of fresh pages took 27 ms against 16.5 ms into written
 * ones (docs/bench-kernel.md, round 6); the intermediates of a contraction sequence and
 * repeated permutations are exactly such short-lived buffers. Kept: at most
 * tfe_pool_limit() bytes in at most TFE__POOL_SLOTS buffers, oldest given back first; a
 * request takes a kept buffer at most 1/8 larger than itself. The limit is 2 GiB, or the
 * environment's TFE_POOL_BYTES read at first use, or tfe_pool_set_limit(); 0 turns the pool
 * off (as under AddressSanitizer, whose use-after-free checks a pool would blunt). Custom
 * allocators (tfe_set_allocator) bypass it. */
#define TFE__POOL_MIN ((size_t)4 << 20)
#define TFE__POOL_LIVE 1024 /* large buffers handed out whose size the pool remembers */
#define TFE__POOL_SLOTS 32
typedef struct { void *p; size_t bytes; } tfe__pblock;

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

/* The pool's limit in bytes (0: off). */
TFE_API size_t tfe_pool_limit(void);
/* Bytes the pool keeps now. */
TFE_API size_t tfe_pool_kept_bytes(void);
/* Set the limit (0 turns the pool off); kept buffers over it are given back at once. */
TFE_API void tfe_pool_set_limit(size_t bytes);
/* Give every kept buffer back to the system (the limit stays). */
TFE_API void tfe_pool_trim(void);

/* Replace the process-wide allocator (NULL restores the default). Not thread-safe with
 * respect to running operations: set it before starting work. */
TFE_API void tfe_set_allocator(const tfe_allocator *a);
TFE_API tfe_allocator tfe_get_allocator(void);
#define tfe__alloc(bytes) tfe__alloc_at((bytes), __func__)
#define tfe__calloc(n, size) tfe__calloc_at((n), (size), __func__)
TFE_API void tfe_set_num_threads(int n);
TFE_API int tfe_get_num_threads(void);

#include <tenferro/core/lock.h>
#include <tenferro/core/tuning.h>
#include <tenferro/core/lru.h>
#include <tenferro/core/workspace.h>
#endif
#elif !defined(TENFERRO_CORE_BODY) /* bodies */
#define TENFERRO_CORE_BODY
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <tenferro/config.h>
TFE_API const char *tfe_status_name(tfe_status s) {
  static const char *const names[] = {
      "ok", "null pointer", "invalid argument", "bad rank", "shape mismatch", "size overflow",
      "allocation failed", "out of bounds", "dtype mismatch", "overlapping memory",
      "incompatible strides", "parse error", "unsupported", "singular matrix",
      "no convergence", "i/o error", "device error", "internal error"};
  return (unsigned)s < (unsigned)TFE_STATUS_COUNT_ ? names[s] : "unknown status";
}
TFE_GLOBAL TFE_THREAD_LOCAL char tfe__errmsg[TFE_ERRMSG_MAX];
TFE_GLOBAL TFE_THREAD_LOCAL tfe_status tfe__errcode;
TFE_API const char *tfe_last_error(void) { return tfe__errmsg; }
TFE_API tfe_status tfe_last_status(void) { return tfe__errcode; }
TFE_API void tfe_clear_error(void) { tfe__errmsg[0] = 0; tfe__errcode = TFE_OK; }

TFE_INTERNAL tfe_status tfe__fail(tfe_status st, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
TFE_INTERNAL tfe_status tfe__fail(tfe_status st, const char *where, const char *fmt, ...) {
  int n = snprintf(tfe__errmsg, TFE_ERRMSG_MAX, "%s: ", where);
  if (n < 0 || n >= TFE_ERRMSG_MAX) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tfe__errmsg + n, (size_t)(TFE_ERRMSG_MAX - n), fmt, ap);
  va_end(ap);
  tfe__errcode = st;
  return st;
}
TFE_GLOBAL tfe__pblock tfe__pool_live[TFE__POOL_LIVE];
TFE_GLOBAL tfe__pblock tfe__pool_kept[TFE__POOL_SLOTS]; /* oldest first */
TFE_GLOBAL int tfe__pool_nlive, tfe__pool_nkept;
TFE_GLOBAL size_t tfe__pool_kept_sum;
TFE_GLOBAL int64_t tfe__pool_max = -1; /* -1: not read from the environment yet */
TFE_GLOBAL char tfe__pool_flag;
/* Whether the calling thread's last large default allocation was a kept buffer (its pages
 * already written): fresh-destination kernels skip faulting it in. */
TFE_GLOBAL TFE_THREAD_LOCAL bool tfe__pool_recycled;

TFE_INTERNAL void tfe__pool_lock(void) {
  while (__atomic_test_and_set(&tfe__pool_flag, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&tfe__pool_flag, __ATOMIC_RELAXED)) {}
}
TFE_INTERNAL void tfe__pool_unlock(void) { __atomic_clear(&tfe__pool_flag, __ATOMIC_RELEASE); }
/* The limit (lock held). */
TFE_INTERNAL size_t tfe__pool_limit_locked(void) {
  if (tfe__pool_max < 0) {
    const char *e = getenv("TFE_POOL_BYTES");
    char *end = NULL;
    unsigned long long v = e ? strtoull(e, &end, 10) : 0;
    tfe__pool_max = e && end != e && v <= (unsigned long long)INT64_MAX ? (int64_t)v : TFE__POOL_DEFAULT;
  }
  return (size_t)tfe__pool_max;
}
/* Drop kept buffers, oldest first, until `need` more bytes (and, when need > 0, one more
 * buffer) fit under `limit`; the dropped ones go to out[] (freed by the caller after unlocking). */
TFE_INTERNAL int tfe__pool_evict(size_t limit, size_t need, void **out) {
  int n = 0;
  while (tfe__pool_nkept > 0 && (tfe__pool_kept_sum + need > limit || (need && tfe__pool_nkept >= TFE__POOL_SLOTS))) {
    out[n++] = tfe__pool_kept[0].p;
    tfe__pool_kept_sum -= tfe__pool_kept[0].bytes;
    memmove(tfe__pool_kept, tfe__pool_kept + 1, (size_t)--tfe__pool_nkept * sizeof *tfe__pool_kept);
  }
  return n;
}
/* A kept buffer of at least `bytes` (at most 1/8 more) aligned to `align`, or NULL. */
TFE_INTERNAL void *tfe__pool_take(size_t bytes, size_t align) {
  void *p = NULL;
  tfe__pool_lock();
  int best = -1;
  for (int i = 0; i < tfe__pool_nkept; i++) {
    size_t b = tfe__pool_kept[i].bytes;
    if (b >= bytes && b - bytes <= bytes / 8 && (uintptr_t)tfe__pool_kept[i].p % align == 0 &&
        (best < 0 || b < tfe__pool_kept[best].bytes))
      best = i;
  }
  if (best >= 0 && tfe__pool_nlive < TFE__POOL_LIVE) {
    p = tfe__pool_kept[best].p;
    tfe__pool_live[tfe__pool_nlive++] = tfe__pool_kept[best];
    tfe__pool_kept_sum -= tfe__pool_kept[best].bytes;
    memmove(tfe__pool_kept + best, tfe__pool_kept + best + 1, (size_t)(--tfe__pool_nkept - best) * sizeof *tfe__pool_kept);
  }
  tfe__pool_unlock();
  return p;
}
/* Remember a new large buffer's size (when the table is full it is simply not pooled). */
TFE_INTERNAL void tfe__pool_track(void *p, size_t bytes) {
  tfe__pool_lock();
  if (tfe__pool_nlive < TFE__POOL_LIVE) tfe__pool_live[tfe__pool_nlive++] = (tfe__pblock){p, bytes};
  tfe__pool_unlock();
}
/* Keep a freed buffer if it is a tracked large one and fits; true when it was taken. */
TFE_INTERNAL bool tfe__pool_give(void *p) {
  void *drop[TFE__POOL_SLOTS + 1];
  int nd = 0;
  bool kept = false;
  tfe__pool_lock();
  for (int i = 0; i < tfe__pool_nlive; i++)
    if (tfe__pool_live[i].p == p) {
      tfe__pblock b = tfe__pool_live[i];
      tfe__pool_live[i] = tfe__pool_live[--tfe__pool_nlive];
      size_t limit = tfe__pool_limit_locked();
      if (b.bytes <= limit) {
        nd = tfe__pool_evict(limit, b.bytes, drop);
        tfe__pool_kept[tfe__pool_nkept++] = b;
        tfe__pool_kept_sum += b.bytes;
        kept = true;
      }
      break;
    }
  tfe__pool_unlock();
  for (int i = 0; i < nd; i++) free(drop[i]);
  return kept;
}

/* Buffers from 4 MiB start on a 2 MiB huge page: the C library otherwise returns large
 * blocks 64 bytes into a page, so that lines of a strided tile straddle 4 KiB pages where
 * the hardware prefetchers stop (a transposed copy of 16M f64 ran at 0.73 of memcpy's
 * bandwidth at page offset 64, 0.96 page-aligned), and huge pages then cover the whole
 * buffer. The unused head is address space, never touched. (Page-aligning the 64 KiB-4 MiB
 * range too made a c128 outer product of two 64 KiB vectors 22 ms instead of 17: its inputs
 * then share their low 12 address bits.) Large buffers go through the pool above. */
TFE_INTERNAL void *tfe__default_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  if (align < sizeof(void *)) align = sizeof(void *);
  if (bytes >= TFE__POOL_MIN && align < ((size_t)2 << 20)) align = (size_t)2 << 20;
  /* C11 aligned_alloc wants a size that is a multiple of the alignment. */
  if (bytes > SIZE_MAX - align) return NULL;
  size_t rounded = (bytes + align - 1) / align * align;
  if (rounded < TFE__POOL_MIN) return aligned_alloc(align, rounded ? rounded : align);
  void *p = tfe__pool_take(rounded, align);
  tfe__pool_recycled = p != NULL;
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
  tfe__pool_lock();
  size_t l = tfe__pool_limit_locked();
  tfe__pool_unlock();
  return l;
}
TFE_API size_t tfe_pool_kept_bytes(void) {
  tfe__pool_lock();
  size_t k = tfe__pool_kept_sum;
  tfe__pool_unlock();
  return k;
}
TFE_API void tfe_pool_set_limit(size_t bytes) {
  void *drop[TFE__POOL_SLOTS + 1];
  tfe__pool_lock();
  tfe__pool_max = bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
  int nd = tfe__pool_evict(bytes, 0, drop);
  tfe__pool_unlock();
  for (int i = 0; i < nd; i++) free(drop[i]);
}
TFE_API void tfe_pool_trim(void) {
  void *drop[TFE__POOL_SLOTS + 1];
  int nd = 0;
  tfe__pool_lock();
  while (tfe__pool_nkept > 0) drop[nd++] = tfe__pool_kept[--tfe__pool_nkept].p;
  tfe__pool_kept_sum = 0;
  tfe__pool_unlock();
  for (int i = 0; i < nd; i++) free(drop[i]);
}

TFE_GLOBAL tfe_allocator tfe__allocator_hook;
TFE_API void tfe_set_allocator(const tfe_allocator *a) {
  if (a) tfe__allocator_hook = *a;
  else memset(&tfe__allocator_hook, 0, sizeof tfe__allocator_hook);
}
TFE_API tfe_allocator tfe_get_allocator(void) {
  if (tfe__allocator_hook.alloc) return tfe__allocator_hook;
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

/* ---- threads -------------------------------------------------------------------------------- */
/* Threads tenferro's own kernels use (BLIS keeps its own setting). 0 = OpenMP's default. */
TFE_GLOBAL int tfe__num_threads;
TFE_API void tfe_set_num_threads(int n) { tfe__num_threads = n > 0 ? n : 0; }
TFE_API int tfe_get_num_threads(void) {
#ifdef _OPENMP
  return tfe__num_threads > 0 ? tfe__num_threads : omp_get_max_threads();
#else
  return 1;
#endif
}

/* ---- overflow-checked arithmetic ------------------------------------------------------------ */
TFE_INTERNAL bool tfe__mul_ok(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
TFE_INTERNAL bool tfe__add_ok(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
#include <tenferro/core/lru.h>
#include <tenferro/core/workspace.h>
#endif
