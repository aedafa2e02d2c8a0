/* tenferro/core/lru.h — the one keyed LRU cache: every plan cache of tenferro is one of these.
 *
 * Keys are byte strings with a 64-bit hash the caller computes (tfe__lru_hash, or its own
 * hash of the same bytes); values are opaque pointers to counted objects. The caller names
 * how a value is retained (a lookup hands out a counted reference) and released (eviction,
 * clearing); the cache holds one reference of its own to every value it stores.
 *
 *   uint64_t h = tfe__lru_hash(key, len);
 *   plan *p = tfe__lru_get(&cache, &vt, key, len, h);       // retained, or NULL
 *   if (!p) { p = make(...); tfe__lru_put(&cache, &vt, capacity, key, len, h, p); }
 *   (or tfe__lru_put_node(&cache, &vt, capacity, &p->node, p->key, len, h, p) for a value that
 *   carries its own node and key)
 *   ... use p ...; release(p);
 *
 * Capacity is an argument of tfe__lru_put (the caller reads it from its tuning field, so it
 * may change at run time): when more entries are stored, the least recently used ones are
 * released; 0 stores nothing. Hits, misses and evictions are counted.
 *
 * Concurrency: one tfe__lock (core/lock.h) per cache, held only for the bucket walk and the
 * list updates: never while a value is made, retained outside the cache or freed; entries
 * are allocated before the lock is taken and freed after it is given back. Two threads that
 * miss on the same key both make a value; the first one stored is kept, the second caller
 * keeps using its own (both are valid). A zero-initialised tfe__lru is an empty cache. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_LRU_H
#define TENFERRO_CORE_LRU_H
#include <tenferro/config.h>
#include <tenferro/core/lock.h>

/* How the values of one cache are counted (both required). */
typedef struct tfe__lru_vt {
  void (*retain)(void *val);
  void (*release)(void *val);
} tfe__lru_vt;

/* One entry. Its memory and key bytes are either allocated by tfe__lru_put (the key copied
 * right after the node) or part of the value itself (tfe__lru_put_node: a value that carries
 * its own node and key, so that caching it allocates nothing more). */
typedef struct tfe__lru_node {
  struct tfe__lru_node *prev, *next; /* recency list, most recent first */
  struct tfe__lru_node *chain;       /* next entry in the same bucket */
  uint64_t hash;
  size_t len;
  const unsigned char *key;
  void *val;
  void (*free_fn)(void *ctx, void *ptr); /* the allocator the node came from; NULL: part of val */
  void *free_ctx;
} tfe__lru_node;

/* Buckets: a fixed table (capacities far above it only make the chains longer). */
#define TFE__LRU_NBUCKET 1024

typedef struct tfe__lru {
  tfe__lock lock;
  long n;                          /* entries stored */
  long hits, misses, evictions;    /* since the start of the process */
  tfe__lru_node *head, *tail;
  tfe__lru_node *bucket[TFE__LRU_NBUCKET];
} tfe__lru;

#endif
#elif !defined(TENFERRO_CORE_LRU_BODY) /* bodies */
#define TENFERRO_CORE_LRU_BODY
#include <tenferro/core/lock.h>
#include <string.h>

/* A hash of n key bytes, eight at a time (keys are mostly arrays of int64). */
TFE_INTERNAL uint64_t tfe__lru_hash(const void *key, size_t n) {
  const unsigned char *p = (const unsigned char *)key;
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  }
  if (n) {
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
  }
  h ^= h >> 29;
  return h * 0x94D049BB133111EBULL ^ (h >> 31);
}

/* ---- list and bucket updates (lock held) ---- */
TFE_INTERNAL void tfe__lru_unlink(tfe__lru *c, tfe__lru_node *e) {
  if (e->prev) e->prev->next = e->next; else c->head = e->next;
  if (e->next) e->next->prev = e->prev; else c->tail = e->prev;
  e->prev = e->next = NULL;
}
TFE_INTERNAL void tfe__lru_front(tfe__lru *c, tfe__lru_node *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head) c->head->prev = e; else c->tail = e;
  c->head = e;
}
TFE_INTERNAL tfe__lru_node **tfe__lru_slot(tfe__lru *c, uint64_t h) { return &c->bucket[h % TFE__LRU_NBUCKET]; }
TFE_INTERNAL tfe__lru_node *tfe__lru_find(tfe__lru *c, const void *key, size_t len, uint64_t h) {
  for (tfe__lru_node *e = *tfe__lru_slot(c, h); e; e = e->chain)
    if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) return e;
  return NULL;
}
/* Takes e out of the cache (list, bucket, count). */
TFE_INTERNAL void tfe__lru_remove(tfe__lru *c, tfe__lru_node *e) {
  tfe__lru_unlink(c, e);
  tfe__lru_node **link = tfe__lru_slot(c, e->hash);
  while (*link != e) link = &(*link)->chain;
  *link = e->chain;
  e->chain = NULL;
  c->n--;
}
/* Releases the value and frees the node (lock not held). */
TFE_INTERNAL void tfe__lru_drop(const tfe__lru_vt *vt, tfe__lru_node *e) {
  while (e) {
    tfe__lru_node *next = e->chain; /* dropped nodes are chained through `chain` */
    void (*free_fn)(void *, void *) = e->free_fn;
    void *ctx = e->free_ctx;
    vt->release(e->val); /* frees e too when it is part of the value */
    if (free_fn) free_fn(ctx, e);
    e = next;
  }
}

/* A retained value for this key, or NULL. A hit becomes the most recently used entry. */
TFE_INTERNAL void *tfe__lru_get(tfe__lru *c, const tfe__lru_vt *vt, const void *key, size_t len, uint64_t h) {
  void *v = NULL;
  tfe__lock_take(&c->lock);
  tfe__lru_node *e = tfe__lru_find(c, key, len, h);
  if (e) {
    v = e->val;
    vt->retain(v);
    if (c->head != e) { tfe__lru_unlink(c, e); tfe__lru_front(c, e); }
    c->hits++;
  } else {
    c->misses++;
  }
  tfe__lock_give(&c->lock);
  return v;
}

/* Links node e (key, hash, value set) into the cache unless its key is there already; then
 * releases least recently used entries until at most `capacity` remain. The value was
 * retained for the cache. Returns whether e was stored; what was evicted, or e when it was
 * not stored, is released after the lock is given back. */
TFE_INTERNAL bool tfe__lru_link(tfe__lru *c, const tfe__lru_vt *vt, long capacity, tfe__lru_node *e) {
  tfe__lru_node *dropped = NULL;
  bool stored = false;
  tfe__lock_take(&c->lock);
  if (!tfe__lru_find(c, e->key, e->len, e->hash)) {
    tfe__lru_node **head = tfe__lru_slot(c, e->hash);
    e->chain = *head;
    *head = e;
    tfe__lru_front(c, e);
    c->n++;
    stored = true;
    while (c->n > capacity) {
      tfe__lru_node *old = c->tail;
      tfe__lru_remove(c, old);
      old->chain = dropped;
      dropped = old;
      c->evictions++;
    }
  }
  tfe__lock_give(&c->lock);
  if (!stored) { /* another thread stored the same key first */
    e->chain = NULL;
    tfe__lru_drop(vt, e);
  }
  tfe__lru_drop(vt, dropped);
  return stored;
}

/* Stores val under a copy of the key (the cache retains val) unless the key is already there.
 * An allocation failure stores nothing (the caller's value stays valid). */
TFE_INTERNAL bool tfe__lru_put(tfe__lru *c, const tfe__lru_vt *vt, long capacity, const void *key, size_t len,
                               uint64_t h, void *val) {
  if (capacity <= 0 || len > SIZE_MAX - sizeof(tfe__lru_node)) return false;
  tfe_allocator a = tfe_get_allocator();
  tfe__lru_node *e = (tfe__lru_node *)a.alloc(a.ctx, sizeof *e + len, TFE_ALIGN);
  if (!e) return false;
  memset(e, 0, sizeof *e);
  memcpy(e + 1, key, len);
  e->key = (const unsigned char *)(e + 1);
  e->hash = h;
  e->len = len;
  e->val = val;
  e->free_fn = a.free;
  e->free_ctx = a.ctx;
  vt->retain(val);
  return tfe__lru_link(c, vt, capacity, e);
}
/* The same for a value that carries its own node and key bytes (both live as long as the value;
 * a value is in at most one cache, once): nothing is allocated. */
TFE_INTERNAL bool tfe__lru_put_node(tfe__lru *c, const tfe__lru_vt *vt, long capacity, tfe__lru_node *e,
                                    const void *key, size_t len, uint64_t h, void *val) {
  if (capacity <= 0) return false;
  memset(e, 0, sizeof *e);
  e->key = (const unsigned char *)key;
  e->hash = h;
  e->len = len;
  e->val = val;
  vt->retain(val);
  return tfe__lru_link(c, vt, capacity, e);
}

/* Releases every entry (values held by callers stay valid): one entry per lock hold, so that
 * nothing is freed under the lock. */
TFE_INTERNAL void tfe__lru_clear(tfe__lru *c, const tfe__lru_vt *vt) {
  for (;;) {
    tfe__lock_take(&c->lock);
    tfe__lru_node *e = c->tail;
    if (e) tfe__lru_remove(c, e);
    tfe__lock_give(&c->lock);
    if (!e) return;
    tfe__lru_drop(vt, e);
  }
}

/* Counters and the entries stored now (any pointer may be NULL). */
TFE_INTERNAL void tfe__lru_stats(tfe__lru *c, long *entries, long *hits, long *misses, long *evictions) {
  tfe__lock_take(&c->lock);
  long n = c->n, hi = c->hits, mi = c->misses, ev = c->evictions;
  tfe__lock_give(&c->lock);
  if (entries) *entries = n;
  if (hits) *hits = hi;
  if (misses) *misses = mi;
  if (evictions) *evictions = ev;
}
#endif
