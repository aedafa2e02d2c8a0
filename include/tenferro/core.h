/* tenferro/core.h — the core room: status codes and messages, allocation hooks, overflow-safe
 * size arithmetic. Everything else in tenferro stands on this. */
#ifndef TENFERRO_CORE_H
#define TENFERRO_CORE_H

#include <tenferro/config.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

TFE_API const char *tfe_status_name(tfe_status s) {
  static const char *const names[] = {
      "ok", "null pointer", "invalid argument", "bad rank", "shape mismatch", "size overflow",
      "allocation failed", "out of bounds", "dtype mismatch", "overlapping memory",
      "incompatible strides", "parse error", "unsupported", "singular matrix",
      "no convergence", "i/o error", "device error", "internal error"};
  return (unsigned)s < (unsigned)TFE_STATUS_COUNT_ ? names[s] : "unknown status";
}

/* ---- thread-local error message ---------------------------------------------------------- */
#define TFE_ERRMSG_MAX 512
TFE_GLOBAL TFE_THREAD_LOCAL char tfe__errmsg[TFE_ERRMSG_MAX];
TFE_GLOBAL TFE_THREAD_LOCAL tfe_status tfe__errcode;

/* The message of the last failure on this thread: "function: what was wrong". */
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

/* Buffers from 4 MiB start on a 2 MiB huge page: the C library otherwise returns large
 * blocks 64 bytes into a page, so that lines of a strided tile straddle 4 KiB pages where
 * the hardware prefetchers stop (a transposed copy of 16M f64 ran at 0.73 of memcpy's
 * bandwidth at page offset 64, 0.96 page-aligned), and huge pages then cover the whole
 * buffer. The unused head is address space, never touched. (Page-aligning the 64 KiB-4 MiB
 * range too made a c128 outer product of two 64 KiB vectors 22 ms instead of 17: its inputs
 * then share their low 12 address bits.) */
TFE_INTERNAL void *tfe__default_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  if (align < sizeof(void *)) align = sizeof(void *);
  if (bytes >= ((size_t)4 << 20) && align < ((size_t)2 << 20)) align = (size_t)2 << 20;
  /* C11 aligned_alloc wants a size that is a multiple of the alignment. */
  if (bytes > SIZE_MAX - align) return NULL;
  size_t rounded = (bytes + align - 1) / align * align;
  return aligned_alloc(align, rounded ? rounded : align);
}
TFE_INTERNAL void tfe__default_free(void *ctx, void *p) { (void)ctx; free(p); }

TFE_GLOBAL tfe_allocator tfe__allocator_hook;

/* Replace the process-wide allocator (NULL restores the default). Not thread-safe with
 * respect to running operations: set it before starting work. */
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
#define tfe__alloc(bytes) tfe__alloc_at((bytes), __func__)
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
#define tfe__calloc(n, size) tfe__calloc_at((n), (size), __func__)

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

#endif
