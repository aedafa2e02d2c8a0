/* tenferro/core/lock.h — the one lock primitive of tenferro: a spin lock that yields.
 *
 * Every shared structure (the buffer pool, the plan caches, the workspaces) takes it around
 * short critical sections: a handful of loads and stores, never a call that may block or
 * allocate. Spinning briefly then yielding keeps a holder that the scheduler descheduled (2
 * cores, BLIS threads spinning in barriers) from stalling the others. A zero-initialised
 * tfe__lock is unlocked, so locks live in the process-state block without an init call. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_LOCK_H
#define TENFERRO_CORE_LOCK_H
#include <tenferro/config.h>

typedef struct tfe__lock { volatile char held; } tfe__lock;

#endif
#elif !defined(TENFERRO_CORE_LOCK_BODY) /* bodies */
#define TENFERRO_CORE_LOCK_BODY
#include <sched.h>

TFE_INTERNAL void tfe__lock_take(tfe__lock *l) {
  for (int spins = 0; __atomic_test_and_set(&l->held, __ATOMIC_ACQUIRE); spins++) {
    while (__atomic_load_n(&l->held, __ATOMIC_RELAXED))
      if (++spins >= 64) sched_yield();
  }
}
TFE_INTERNAL void tfe__lock_give(tfe__lock *l) { __atomic_clear(&l->held, __ATOMIC_RELEASE); }
#endif
