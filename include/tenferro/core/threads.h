/* tenferro/core/threads.h — the thread count tenferro's own kernels use (OpenMP, the runtime
 * BLIS uses too: no oversubscription). BLIS keeps its own setting (tfe_blas_set_num_threads). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_THREADS_H
#define TENFERRO_CORE_THREADS_H
#include <tenferro/config.h>

/* n > 0: that many threads, at most 4 per processor (more only slows down: the count is
 * capped there, docs/core.md); 0 (or negative): OpenMP's default. A stream's worker and a
 * scoped context (runtime room) override it on their own thread. */
TFE_API void tfe_set_num_threads(int n);
/* The count in effect (1 in a build without OpenMP). */
TFE_API int tfe_get_num_threads(void);

#endif
#elif !defined(TENFERRO_CORE_THREADS_BODY) /* bodies */
#define TENFERRO_CORE_THREADS_BODY
#ifdef _OPENMP
#include <omp.h>
#endif

/* A thread count capped at 4 per processor (256 without OpenMP): far oversubscribed counts only
 * cost (a typo of 10000 threads would start them all), and 4x keeps tests of many threads on
 * small machines meaningful. */
TFE_INTERNAL int tfe__threads_cap(int n) {
#ifdef _OPENMP
  int cap = 4 * omp_get_num_procs();
  return n > cap ? cap : n;
#else
  return n > 256 ? 256 : n; /* the processor count is unknown here: a fixed bound (BLIS still threads) */
#endif
}
TFE_API void tfe_set_num_threads(int n) { tfe__st.num_threads = n > 0 ? tfe__threads_cap(n) : 0; }
TFE_API int tfe_get_num_threads(void) {
  /* a stream worker or a scoped context sets this thread's count (runtime room) */
  if (tfe__ts.rt.threads > 0) return tfe__ts.rt.threads;
#ifdef _OPENMP
  return tfe__st.num_threads > 0 ? tfe__st.num_threads : omp_get_max_threads();
#else
  return 1;
#endif
}
#endif
