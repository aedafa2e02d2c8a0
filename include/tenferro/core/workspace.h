/* tenferro/core/workspace.h — the one "keep the last block" workspace.
 *
 * Temporaries of a contraction or of an einsum arena are large and short-lived: fresh pages
 * on every call cost a page fault per 4 KiB, more than the copies that fill them. A tfe__ws
 * keeps the last block given back (the bigger one when two come back) for the next call:
 *
 *   void *p = tfe__ws_get(&ws, bytes, &fresh);   // kept block if big enough, else a new one
 *   ... use p ...
 *   tfe__ws_put(&ws, p);                          // kept for the next call (or freed)
 *
 * Only blocks of the default allocator are kept: a user allocator gets every block back at
 * once, and a kept block is freed through the allocator it came from. Every block carries
 * its size and allocator in a 64-byte header, written before the block is published and
 * read only by the thread that holds it; the shared slot is read and written under the
 * cache's tfe__lock, so a block is never looked at after another thread may have taken it.
 * Nothing is allocated or freed under the lock. A zero-initialised tfe__ws is empty. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_WORKSPACE_H
#define TENFERRO_CORE_WORKSPACE_H
#include <tenferro/config.h>
#include <tenferro/core/lock.h>

typedef struct tfe__ws_block {
  size_t bytes;
  void (*free_fn)(void *ctx, void *ptr);
  void *free_ctx;
  bool keep; /* from the default allocator: may be kept */
  char pad_[64 - 3 * sizeof(void *) - sizeof(bool) > 0 ? 64 - 3 * sizeof(void *) - sizeof(bool) : 1];
} tfe__ws_block;

typedef struct tfe__ws {
  tfe__lock lock;
  tfe__ws_block *kept;
} tfe__ws;

#endif
#elif !defined(TENFERRO_CORE_WORKSPACE_BODY) /* bodies */
#define TENFERRO_CORE_WORKSPACE_BODY
#include <tenferro/core/lock.h>

TFE_INTERNAL void tfe__ws_block_free(tfe__ws_block *b) {
  if (b) b->free_fn(b->free_ctx, b);
}

/* A block of at least `bytes` (64-byte aligned), NULL on failure (message set). *fresh says
 * whether it is new memory (never touched: the caller may advise the kernel about it). */
TFE_INTERNAL void *tfe__ws_get(tfe__ws *w, size_t bytes, bool *fresh) {
  tfe__lock_take(&w->lock);
  tfe__ws_block *b = w->kept;
  w->kept = NULL;
  tfe__lock_give(&w->lock);
  tfe_allocator cur = tfe_get_allocator();
  if (fresh) *fresh = false;
  if (b && b->bytes >= bytes && b->free_fn == cur.free && b->free_ctx == cur.ctx) return b + 1;
  tfe__ws_block_free(b);
  if (bytes > SIZE_MAX - sizeof *b) {
    (void)TFE_FAIL(TFE_ERR_OVERFLOW, "workspace of %zu bytes", bytes);
    return NULL;
  }
  b = (tfe__ws_block *)tfe__alloc(sizeof *b + bytes);
  if (!b) return NULL;
  b->bytes = bytes;
  b->free_fn = cur.free;
  b->free_ctx = cur.ctx;
  b->keep = cur.alloc == tfe__default_alloc;
  if (fresh) *fresh = true;
  return b + 1;
}

/* Gives a block of tfe__ws_get back: kept when it is bigger than the one kept now. */
TFE_INTERNAL void tfe__ws_put(tfe__ws *w, void *p) {
  if (!p) return;
  tfe__ws_block *b = (tfe__ws_block *)p - 1;
  if (!b->keep) { /* user allocators get their memory back at once */
    tfe__ws_block_free(b);
    return;
  }
  size_t mine = b->bytes; /* read while this thread still holds b */
  tfe__lock_take(&w->lock);
  tfe__ws_block *drop = w->kept;
  if (!drop || drop->bytes <= mine) w->kept = b; /* the kept one is ours while the lock is held */
  else drop = b;
  tfe__lock_give(&w->lock);
  tfe__ws_block_free(drop);
}

/* Frees the kept block. */
TFE_INTERNAL void tfe__ws_release(tfe__ws *w) {
  tfe__lock_take(&w->lock);
  tfe__ws_block *b = w->kept;
  w->kept = NULL;
  tfe__lock_give(&w->lock);
  tfe__ws_block_free(b);
}
#endif
