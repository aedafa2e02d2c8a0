/* tenferro/core/status.h — status codes, the thread-local message, and the macros every
 * fallible function uses (TFE_FAIL, TFE_TRY, TFE_CHECK_NULL); overflow-checked arithmetic. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_STATUS_H
#define TENFERRO_CORE_STATUS_H
#include <tenferro/config.h>

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
  TFE_ERR_CANCELLED,   /* stopped on request (a progress callback returned non-zero) */
  TFE_STATUS_COUNT_
} tfe_status;

/* "ok", "shape mismatch", ... */
TFE_API const char *tfe_status_name(tfe_status s);

/* The message of the last failure on this thread: "function: what was wrong". */
#define TFE_ERRMSG_MAX 512
TFE_API const char *tfe_last_error(void);
TFE_API tfe_status tfe_last_status(void);
TFE_API void tfe_clear_error(void);

/* return TFE_FAIL(TFE_ERR_SHAPE, "dim %d is %lld, expected %lld", ...);
 * The comma form lets the compiler see the returned code (variadic functions are not inlined). */
#define TFE_FAIL(st, ...) (tfe__fail((st), __func__, __VA_ARGS__), (st))
/* The same on behalf of a named caller (helpers that validate for a public function). */
#define TFE_FAIL_AT(st, where, ...) (tfe__fail((st), (where), __VA_ARGS__), (st))
#define TFE_CHECK_NULL(p) \
  do { if (!(p)) return TFE_FAIL(TFE_ERR_NULL, "argument '%s' is NULL", #p); } while (0)
#define TFE_TRY(expr) \
  do { tfe_status tfe__st_ = (expr); if (tfe__st_ != TFE_OK) return tfe__st_; } while (0)
/* return TFE_AS_API(st): a public entry's result, its message naming the entry (__func__)
 * where a helper (a name holding "__", e.g. tfe__ein_bind or tfe_ein_check__f64) wrote it. */
#define TFE_AS_API(st) tfe__as_api((st), __func__)

#endif
#elif !defined(TENFERRO_CORE_STATUS_BODY) /* bodies */
#define TENFERRO_CORE_STATUS_BODY
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

TFE_API const char *tfe_status_name(tfe_status s) {
  static const char *const names[] = {
      "ok", "null pointer", "invalid argument", "bad rank", "shape mismatch", "size overflow",
      "allocation failed", "out of bounds", "dtype mismatch", "overlapping memory",
      "incompatible strides", "parse error", "unsupported", "singular matrix",
      "no convergence", "i/o error", "device error", "internal error", "cancelled"};
  return (unsigned)s < (unsigned)TFE_STATUS_COUNT_ ? names[s] : "unknown status";
}
TFE_API const char *tfe_last_error(void) { return tfe__ts.errmsg; }
TFE_API tfe_status tfe_last_status(void) { return tfe__ts.errcode; }
TFE_API void tfe_clear_error(void) { tfe__ts.errmsg[0] = 0; tfe__ts.errcode = TFE_OK; }

TFE_INTERNAL tfe_status tfe__fail(tfe_status st, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
TFE_INTERNAL tfe_status tfe__fail(tfe_status st, const char *where, const char *fmt, ...) {
  int n = snprintf(tfe__ts.errmsg, TFE_ERRMSG_MAX, "%s: ", where);
  if (n < 0 || n >= TFE_ERRMSG_MAX) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tfe__ts.errmsg + n, (size_t)(TFE_ERRMSG_MAX - n), fmt, ap);
  va_end(ap);
  tfe__ts.errcode = st;
  return st;
}

/* The message of a failure on behalf of public function `api`: a helper's name ("tfe__x: ",
 * "tfe_x__f64: ") in front is replaced by api's, so the user reads the function they called. */
TFE_INTERNAL tfe_status tfe__as_api(tfe_status st, const char *api) {
  if (st == TFE_OK) return st; /* the fast path of every successful call: no string work */
  char *m = tfe__ts.errmsg, *colon = strchr(m, ':');
  if (!colon || !strstr(m, "__") || strstr(m, "__") > colon) return st;
  size_t na = strlen(api), nr = strlen(colon) + 1;
  if (na >= TFE_ERRMSG_MAX / 2) return st;
  if (na + nr > TFE_ERRMSG_MAX) nr = TFE_ERRMSG_MAX - na; /* cut the end, keep the NUL below */
  memmove(m + na, colon, nr);
  memcpy(m, api, na);
  m[TFE_ERRMSG_MAX - 1] = 0;
  return st;
}

/* The last message without its "where: " prefix (to restate it for a caller). */
TFE_INTERNAL const char *tfe__msg_body(void) {
  const char *c = strstr(tfe__ts.errmsg, ": ");
  return c ? c + 2 : tfe__ts.errmsg;
}

/* Overflow-checked size arithmetic: every size is computed through these before allocating. */
TFE_INTERNAL bool tfe__mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
TFE_INTERNAL bool tfe__add_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
#endif
