/* tests/testutil.h — shared by the cmocka suites: seeded RNG, case counts, failing allocator. */
#ifndef TFE_TESTUTIL_H
#define TFE_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <tenferro.h>

/* xorshift64*: deterministic across platforms, one state per test. */
typedef struct { uint64_t s; } tu_rng;
static inline uint64_t tu_next(tu_rng *r) {
  r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ULL;
}
static inline int64_t tu_int(tu_rng *r, int64_t lo, int64_t hi) { /* inclusive */
  return lo + (int64_t)(tu_next(r) % (uint64_t)(hi - lo + 1));
}
static inline double tu_unif(tu_rng *r) { return (double)(tu_next(r) >> 11) * 0x1.0p-53; }

/* Random-case counts shrink under sanitizers and clang runs (TFE_TEST_QUICK=1). */
static inline int tu_cases(int n) {
  const char *q = getenv("TFE_TEST_QUICK");
  return (q && *q && *q != '0') ? (n / 10 > 0 ? n / 10 : 1) : n;
}

/* An allocator that fails the n-th allocation from now on (n = 0: the next one). */
static long tu_fail_countdown = -1;
static long tu_live_allocs = 0;
static void *tu_fail_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  if (tu_fail_countdown == 0) return NULL;
  if (tu_fail_countdown > 0) tu_fail_countdown--;
  if (align < sizeof(void *)) align = sizeof(void *);
  size_t rounded = (bytes + align - 1) / align * align;
  void *p = aligned_alloc(align, rounded ? rounded : align);
  if (p) tu_live_allocs++;
  return p;
}
static void tu_fail_free(void *ctx, void *p) { (void)ctx; if (p) { tu_live_allocs--; free(p); } }
static inline void tu_fail_after(long n) {
  tfe_allocator a = {tu_fail_alloc, tu_fail_free, NULL};
  tu_fail_countdown = n;
  tfe_set_allocator(&a);
}
static inline void tu_alloc_restore(void) { tu_fail_countdown = -1; tfe_set_allocator(NULL); }

/* Assert a status and that the thread-local message contains `needle`. */
#define TU_EXPECT_ERR(expr, code, needle)                                      \
  do {                                                                         \
    tfe_status st_ = (expr);                                                   \
    assert_int_equal(st_, (code));                                             \
    if (!strstr(tfe_last_error(), (needle)))                                   \
      fail_msg("message '%s' lacks '%s'", tfe_last_error(), (needle));         \
  } while (0)

#endif
