/* tenferro/core/alloc.h — allocation hooks and the buffer pool of host memory.
 *
 * Every tenferro allocation goes through one process-wide allocator (tfe_set_allocator
 * replaces it). The default allocator keeps freed buffers of every size and hands them out
 * again: a fresh large buffer costs the system zeroing every page on first touch, and small
 * ones cost malloc's locks; the intermediates of a contraction sequence and repeated
 * permutations are exactly such short-lived buffers (docs/bench-kernel.md, round 6;
 * docs/runtime.md, "Memory pools"). Buffers live in size classes (8 per power of two, so a
 * class is at most 1/8 above a request); a request takes a kept buffer of its class, or of
 * the next tfe_tuning.pool_reuse_classes larger ones ("larger serves smaller"). Kept: at most
 * tfe_pool_limit() bytes, oldest given back first. A buffer may be given back locked by an
 * event of pending work that still reads it (tfe_free_after, runtime room): it is not handed
 * out, nor given back to the system, before that event completes. The limit is 2 GiB, or the
 * environment's TFE_POOL_BYTES read at first use, or tfe_pool_set_limit(); 0 turns the pool
 * off (as under AddressSanitizer, whose use-after-free checks a pool would blunt). Custom
 * allocators bypass it. NUMA: one pool for host memory (see docs/runtime.md). */
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

/* ---- the buffer pool of host memory ------------------------------------------------------ */
/* The pool's limit in bytes (0: off). */
TFE_API size_t tfe_pool_limit(void);
/* Bytes the pool keeps now. */
TFE_API size_t tfe_pool_kept_bytes(void);
/* Set the limit (0 turns the pool off); kept buffers over it are given back at once. */
TFE_API void tfe_pool_set_limit(size_t bytes);
/* Give every kept buffer back to the system (the limit stays; buffers still locked by
 * pending work stay until it completes). */
TFE_API void tfe_pool_trim(void);

/* What a memory space's pool did (tfe_pool_stats). */
typedef struct tfe_pool_stats {
  int64_t hits;          /* requests served from kept buffers */
  int64_t misses;        /* requests that went to the system */
  int64_t larger;        /* hits served by a buffer of a larger class ("larger serves smaller") */
  int64_t locked_skips;  /* kept buffers passed over because work that reads them is pending */
  size_t kept_bytes;     /* bytes held */
  int64_t kept_buffers;
  int64_t locked_buffers; /* kept buffers waiting for an event */
  size_t limit;
  int64_t node_skips;    /* kept buffers passed over by a thread bound to another NUMA node */
} tfe_pool_stats;
/* The host pool's statistics (per memory space: tfe_memspace_pool_stats, runtime room). */
TFE_API void tfe_pool_get_stats(tfe_pool_stats *out);
/* Zeroes the counters (hits, misses, larger, locked_skips, node_skips). */
TFE_API void tfe_pool_stats_reset(void);
/* The size class a request of `bytes` is served from (what a kept buffer holds). */
TFE_API size_t tfe_pool_class_bytes(size_t bytes);

/* Internal: the allocation front every room uses (the message names the caller). */
#define tfe__alloc(bytes) tfe__alloc_at((bytes), __func__)
#define tfe__calloc(n, size) tfe__calloc_at((n), (size), __func__)

/* Buffers from 4 MiB are 2 MiB aligned (huge pages, no straddled 4 KiB pages). */
#define TFE__POOL_MIN ((size_t)4 << 20)
#define TFE__POOL_SUB 8        /* classes per power of two: a class is at most 1/8 above a request */
#define TFE__POOL_CLASSES 512
#define TFE__POOL_LIVE 8192    /* blocks handed out whose class the pool remembers (hash table) */
#define TFE__POOL_NODES 2048   /* most blocks kept at once */
/* A block handed out: what aligned_alloc returned (the caller gets that very pointer, so that a
 * block freed by another allocator's free still is freed right), its class size, and in the top
 * byte the NUMA node of the thread that allocated it, plus 1 (0: an unbound thread). */
typedef struct tfe__plive { void *p; size_t bytes; } tfe__plive;
#define TFE__PLIVE_NODE_SHIFT 56
/* A kept block and the lists it is on. */
typedef struct tfe__pblock {
  void *p;
  size_t bytes;                            /* the class size */
  struct tfe__pblock *next, *prev;         /* its class's list, newest first (next: spare list too) */
  struct tfe__pblock *older, *newer;       /* all kept blocks, oldest first (eviction order) */
  void *event;                             /* a pending event that still reads it (NULL: none) */
  int node1;                               /* NUMA node of its pages plus 1 (0: unknown) */
} tfe__pblock;
/* The pool's part of the process state (core/state.h). */
typedef struct tfe__pool {
  tfe__lock lock;
  tfe__plive live[TFE__POOL_LIVE];         /* open addressing, linear probing */
  int nlive;
  tfe__pblock node[TFE__POOL_NODES];
  tfe__pblock *spare;                      /* nodes given back (the first nnode were used) */
  int nnode;
  tfe__pblock *head[TFE__POOL_CLASSES];
  tfe__pblock *oldest, *newest;
  size_t kept_sum;
  int64_t nkept, nlocked;
  int64_t hits, misses, larger, locked_skips, node_skips;
  int64_t max;                 /* -1: not read from the environment yet */
  long fail_countdown;         /* tests: > 0 counts system allocations down, 0 fails them; -1 off */
  bool (*ev_done)(void *ev);   /* the runtime's event functions (tfe_free_after) */
  void (*ev_release)(void *ev);
  void *unheld[16];            /* events of unlocked blocks, released after the lock is given */
  int nunheld;
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
#include <sched.h>
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
/* Size classes: TFE__POOL_SUB per power of two from 64 bytes, so a class is at most 1/8 above
 * any request it serves. Returns the class index; *cb gets its size. */
TFE_INTERNAL int tfe__pool_class(size_t bytes, size_t *cb) {
  if (bytes <= 64) { *cb = 64; return 0; }
  int e = 63 - __builtin_clzll((unsigned long long)(bytes - 1)); /* 2^e < bytes <= 2^(e+1) */
  size_t step = (size_t)1 << (e - 3), base = (size_t)1 << e;
  size_t k = (bytes - base + step - 1) / step;                   /* 1..8 */
  *cb = base + k * step;
  int c = (e - 6) * TFE__POOL_SUB + (int)k;
  return c < TFE__POOL_CLASSES ? c : TFE__POOL_CLASSES - 1;
}
TFE_API size_t tfe_pool_class_bytes(size_t bytes) {
  size_t cb;
  tfe__pool_class(bytes, &cb);
  return cb;
}

/* ---- the table of blocks handed out (lock held) ---------------------------------------------- */
TFE_INTERNAL size_t tfe__pool_slot(const void *p) {
  return (size_t)(((uint64_t)(uintptr_t)p >> 6) * 0x9E3779B97F4A7C15ULL >> 50) % TFE__POOL_LIVE;
}
/* Remembers p's class and node; false when the table is three-quarters full (p is then not
 * pooled). */
TFE_INTERNAL bool tfe__pool_live_put(tfe__pool *P, void *p, size_t bytes, int node1) {
  if (4 * (P->nlive + 1) > 3 * TFE__POOL_LIVE) return false;
  size_t i = tfe__pool_slot(p);
  while (P->live[i].p) i = (i + 1) % TFE__POOL_LIVE;
  P->live[i] = (tfe__plive){p, bytes | (size_t)(node1 & 0xff) << TFE__PLIVE_NODE_SHIFT};
  P->nlive++;
  return true;
}
/* Forgets p and returns its class size (and its node in *node1); 0 when p is not a block the
 * pool handed out. */
TFE_INTERNAL size_t tfe__pool_live_take(tfe__pool *P, void *p, int *node1) {
  size_t i = tfe__pool_slot(p);
  while (P->live[i].p && P->live[i].p != p) i = (i + 1) % TFE__POOL_LIVE;
  if (!P->live[i].p) return 0;
  size_t bytes = P->live[i].bytes & (((size_t)1 << TFE__PLIVE_NODE_SHIFT) - 1);
  *node1 = (int)(P->live[i].bytes >> TFE__PLIVE_NODE_SHIFT);
  P->live[i].p = NULL;
  P->nlive--;
  /* backward-shift deletion keeps every probe run unbroken */
  for (size_t j = (i + 1) % TFE__POOL_LIVE; P->live[j].p; j = (j + 1) % TFE__POOL_LIVE) {
    size_t h = tfe__pool_slot(P->live[j].p);
    bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (stays) continue;
    P->live[i] = P->live[j];
    P->live[j].p = NULL;
    i = j;
  }
  return bytes;
}

/* ---- kept blocks (lock held) ------------------------------------------------------------------- */
TFE_INTERNAL void tfe__pool_unlink(tfe__pool *P, tfe__pblock *b, int c) {
  if (b->prev) b->prev->next = b->next; else P->head[c] = b->next;
  if (b->next) b->next->prev = b->prev;
  if (b->older) b->older->newer = b->newer; else P->oldest = b->newer;
  if (b->newer) b->newer->older = b->older; else P->newest = b->older;
  P->kept_sum -= b->bytes;
  P->nkept--;
  if (b->event) P->nlocked--;
  b->next = P->spare; /* the node is spare again */
  P->spare = b;
}
/* Whether a kept block may be handed out; an event that completed is let go. */
TFE_INTERNAL bool tfe__pool_unlocked(tfe__pool *P, tfe__pblock *b) {
  if (!b->event) return true;
  /* releasing an event may free it through this pool: that waits for tfe__pool_unheld */
  if (!P->ev_done(b->event) || P->nunheld == 16) return false;
  P->unheld[P->nunheld++] = b->event;
  b->event = NULL;
  P->nlocked--;
  return true;
}
/* Releases the events of blocks unlocked meanwhile (lock not held). */
TFE_INTERNAL void tfe__pool_unheld(tfe__pool *P) {
  for (;;) {
    tfe__lock_take(&P->lock);
    void *e = P->nunheld ? P->unheld[--P->nunheld] : NULL;
    tfe__lock_give(&P->lock);
    if (!e) return;
    P->ev_release(e);
  }
}
/* Drops kept blocks, oldest first, until `need` more bytes (and, when need > 0, one more node)
 * fit under limit; blocks still locked by pending work stay. Their memory goes to out[] (at
 * most max; freed by the caller after unlocking); returns how many. */
TFE_INTERNAL int tfe__pool_evict(size_t limit, size_t need, void **out, int max) {
  tfe__pool *P = &tfe__st.pool;
  int n = 0;
  for (tfe__pblock *b = P->oldest; b && n < max;) {
    bool room = !need || P->spare || P->nnode < TFE__POOL_NODES;
    if (P->kept_sum + need <= limit && room) break;
    tfe__pblock *nb = b->newer;
    if (tfe__pool_unlocked(P, b)) {
      size_t cb;
      out[n++] = b->p;
      tfe__pool_unlink(P, b, tfe__pool_class(b->bytes, &cb));
    }
    b = nb;
  }
  return n;
}
TFE_INTERNAL void tfe__pool_release(void **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
}
/* A kept block of class c (or of the next larger ones) aligned to align, handed out and
 * remembered; NULL when none. A thread bound to a NUMA node takes only blocks of its node. */
TFE_INTERNAL void *tfe__pool_take(int c, size_t align) {
  tfe__pool *P = &tfe__st.pool;
  void *got = NULL;
  int reach = (int)tfe__st.tune.pool_reuse_classes, node1 = tfe__ts.numa_node1;
  tfe__lock_take(&P->lock);
  for (int k = c; k <= c + reach && k < TFE__POOL_CLASSES && !got; k++)
    for (tfe__pblock *b = P->head[k]; b && !got; b = b->next) {
      if ((uintptr_t)b->p % align) continue;
      if (node1 && b->node1 != node1) { P->node_skips++; continue; }
      if (!tfe__pool_unlocked(P, b)) { P->locked_skips++; continue; }
      if (!tfe__pool_live_put(P, b->p, b->bytes, b->node1)) break;
      got = b->p;
      P->larger += k > c;
      tfe__pool_unlink(P, b, k);
    }
  if (got) P->hits++; else P->misses++;
  bool unheld = P->nunheld > 0;
  tfe__lock_give(&P->lock);
  if (unheld) tfe__pool_unheld(P);
  return got;
}
/* Keeps a freed block of the pool (locked by `event` when not NULL) when it fits under the
 * limit. Returns 0 when kept, 1 when it is the pool's but not kept (the caller frees it), -1
 * when the pool did not hand it out. */
TFE_INTERNAL int tfe__pool_give(void *p, void *event) {
  tfe__pool *P = &tfe__st.pool;
  void *drop[64];
  int nd = 0, r = 1, node1 = 0;
  tfe__lock_take(&P->lock);
  size_t bytes = tfe__pool_live_take(P, p, &node1), limit = tfe__pool_limit_locked();
  if (!bytes) r = -1;
  else if (bytes <= limit) {
    nd = tfe__pool_evict(limit, bytes, drop, 64);
    if (P->kept_sum + bytes <= limit && (P->spare || P->nnode < TFE__POOL_NODES)) {
      tfe__pblock *b = P->spare ? P->spare : &P->node[P->nnode++];
      if (b == P->spare) P->spare = b->next;
      size_t cb;
      int c = tfe__pool_class(bytes, &cb);
      *b = (tfe__pblock){p, bytes, P->head[c], NULL, P->newest, NULL, event, node1};
      if (b->next) b->next->prev = b;
      P->head[c] = b;
      if (P->newest) P->newest->newer = b; else P->oldest = b;
      P->newest = b;
      P->kept_sum += bytes;
      P->nkept++;
      P->nlocked += event != NULL;
      r = 0;
    }
  }
  bool unheld = P->nunheld > 0;
  tfe__lock_give(&P->lock);
  tfe__pool_release(drop, nd);
  if (unheld) tfe__pool_unheld(P);
  return r;
}

/* The default allocator: blocks of size classes, from the pool or the system. Buffers from
 * 4 MiB start on a 2 MiB boundary: lines of a strided tile then never straddle 4 KiB pages
 * where the prefetchers stop, and huge pages cover the whole buffer (docs/bench-kernel.md,
 * "allocation alignment"); their class is a multiple of 2 MiB. The caller gets what
 * aligned_alloc returned: a table remembers the class of each block handed out. */
TFE_INTERNAL void *tfe__default_alloc(void *ctx, size_t bytes, size_t align) {
  (void)ctx;
  if (align < sizeof(void *)) align = sizeof(void *);
  if (bytes >= TFE__POOL_MIN && align < ((size_t)2 << 20)) align = (size_t)2 << 20;
  if (bytes > SIZE_MAX / 2 - align) return NULL;
  size_t cb;
  int c = tfe__pool_class(bytes, &cb);
  for (int i = 0; i < 4 && cb % align; i++) /* a class whose size is a multiple of align */
    c = tfe__pool_class((cb + align - 1) / align * align, &cb);
  bool big = bytes >= TFE__POOL_MIN, pooled = bytes >= (size_t)tfe__st.tune.pool_min_bytes && cb % align == 0;
  void *p = pooled ? tfe__pool_take(c, align) : NULL;
  if (big) tfe__ts.pool_recycled = p != NULL;
  if (p) return p;
  tfe__pool *P = &tfe__st.pool;
  if (__atomic_load_n(&P->fail_countdown, __ATOMIC_RELAXED) >= 0 && /* tests: injected failure */
      __atomic_fetch_sub(&P->fail_countdown, 1, __ATOMIC_RELAXED) == 0)
    return NULL;
  /* C11 aligned_alloc wants a size that is a multiple of the alignment. */
  p = aligned_alloc(align, pooled ? cb : (bytes + align - 1) / align * align);
  if (p && pooled) { /* a block the pool may keep later */
    tfe__lock_take(&P->lock);
    tfe__pool_live_put(P, p, cb, tfe__ts.numa_node1);
    tfe__lock_give(&P->lock);
  }
  return p;
}
/* Gives p back to the pool (locked by event while that is pending), or to the system. */
TFE_INTERNAL void tfe__default_free_after(void *p, void *event) {
  if (!p) return;
  if (tfe__pool_give(p, event) == 0) return;
  if (event) { /* not kept: the memory must outlive the work still reading it */
    while (!tfe__st.pool.ev_done(event)) sched_yield();
    tfe__st.pool.ev_release(event);
  }
  free(p);
}
TFE_INTERNAL void tfe__default_free(void *ctx, void *p) {
  (void)ctx;
  tfe__default_free_after(p, NULL);
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
  void *drop[256];
  int nd;
  tfe__lock_take(&P->lock);
  P->max = bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
  tfe__lock_give(&P->lock);
  do { /* in batches: memory goes back to the system outside the lock */
    tfe__lock_take(&P->lock);
    nd = tfe__pool_evict(bytes, 0, drop, 256);
    tfe__lock_give(&P->lock);
    tfe__pool_release(drop, nd);
  } while (nd == 256);
  tfe__pool_unheld(P);
}
TFE_API void tfe_pool_trim(void) {
  tfe__pool *P = &tfe__st.pool;
  void *drop[256];
  int nd;
  do {
    tfe__lock_take(&P->lock);
    nd = tfe__pool_evict(0, 0, drop, 256);
    tfe__lock_give(&P->lock);
    tfe__pool_release(drop, nd);
  } while (nd == 256);
  tfe__pool_unheld(P);
}
TFE_API void tfe_pool_get_stats(tfe_pool_stats *out) {
  if (!out) return;
  tfe__pool *P = &tfe__st.pool;
  tfe__lock_take(&P->lock);
  *out = (tfe_pool_stats){P->hits, P->misses, P->larger, P->locked_skips, P->kept_sum, P->nkept, P->nlocked,
                          tfe__pool_limit_locked(), P->node_skips};
  tfe__lock_give(&P->lock);
}
TFE_API void tfe_pool_stats_reset(void) {
  tfe__pool *P = &tfe__st.pool;
  tfe__lock_take(&P->lock);
  P->hits = P->misses = P->larger = P->locked_skips = P->node_skips = 0;
  tfe__lock_give(&P->lock);
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
