/* tenferro/prims/blis.h — prims room: the BLIS binding.
 *
 * We never include <blis.h>: it is not -Wall -Wextra -Wpedantic clean and it clashes with
 * lapack.h (lsame_). The few BLIS functions we call are declared here under our own names,
 * bound to the BLIS symbols with asm labels, so a user who also includes <blis.h> sees no
 * conflicting prototype.
 *
 * Kernel choice. Debian's BLIS 0.9 does not recognise recent AMD and Intel AVX-512 parts
 * and falls back to its "generic" (or haswell) kernels, 2-5x slower than its AVX-512 (skx)
 * kernels on the same core. On first use tenferro therefore picks the kernel set itself,
 * once per process and before BLIS initializes: when the environment variable
 * BLIS_ARCH_TYPE is not set, it sets it to skx (0) if the CPU has avx512f/dq/bw/vl, to
 * haswell (3) if it has avx2+fma, and otherwise leaves BLIS's own choice. A user who sets
 * BLIS_ARCH_TYPE keeps their choice. tfe_blas_arch() says what BLIS ended up using.
 * The choice only takes effect when tenferro's first BLIS call precedes any direct BLIS
 * call of the program (BLIS reads the variable once, in bli_init). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_BLAS_H
#define TENFERRO_BLAS_H

#include <tenferro/core/core.h>
#include <stdatomic.h>

/* ---- BLIS declarations under our own names ------------------------------------------------ */
/* trans_t / conj_t values of BLIS 0.9 (bli_type_defs.h). */
#define TFE__BLIS_NO_TRANSPOSE 0x00
#define TFE__BLIS_TRANSPOSE 0x08
#define TFE__BLIS_CONJ_NO_TRANSPOSE 0x10
#define TFE__BLIS_CONJ_TRANSPOSE 0x18
#define TFE__BLIS_ARCH_SKX 0
#define TFE__BLIS_ARCH_HASWELL 3

/* Mirror of BLIS 0.9's rntm_t (bli_type_defs.h: the runtime object that carries a thread
 * count into one call of the expert interface bli_?gemm_ex). BLIS's public API has no
 * exported setter (bli_rntm_set_num_threads is a header inline), so tenferro writes the
 * fields itself, which is only safe when its layout is this one. It is used only when
 * (1) bli_info_get_version_str() says 0.9.x and (2) a probe at initialization shows that
 * bli_rntm_init_from_global() fills exactly these fields with plausible values and writes
 * nothing past sizeof(tfe__bli_rntm) (tfe__blas_rntm_probe). Any other BLIS gets the
 * process-wide thread setting instead (tfe_blas_set_num_threads). BLIS copies the struct
 * (rntm_l = *rntm) before filling its internal pool fields, so a const, stack-held one is
 * fine. */
typedef struct tfe__bli_rntm {
  bool auto_factor;
  int64_t num_threads;
  int64_t thrloop[6];
  bool pack_a, pack_b, l3_sup;
  void *sba_pool;
  void *pba;
} tfe__bli_rntm;

void tfe__bli_init(void) __asm__("bli_init");
int tfe__bli_arch_query_id(void) __asm__("bli_arch_query_id");
const char *tfe__bli_arch_string(int id) __asm__("bli_arch_string");
const char *tfe__bli_info_get_version_str(void) __asm__("bli_info_get_version_str");
void tfe__bli_thread_set_num_threads(int64_t n) __asm__("bli_thread_set_num_threads");
int64_t tfe__bli_thread_get_num_threads(void) __asm__("bli_thread_get_num_threads");
void tfe__bli_rntm_init_from_global(void *rntm) __asm__("bli_rntm_init_from_global");

#define TFE__BLI_GEMM_DECL(ch, T)                                                              \
  void tfe__bli_##ch##gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const T *alpha,    \
                           const T *a, int64_t rsa, int64_t csa, const T *b, int64_t rsb,      \
                           int64_t csb, const T *beta, T *c, int64_t rsc, int64_t csc)         \
      __asm__("bli_" #ch "gemm");                                                              \
  void tfe__bli_##ch##gemm_ex(int ta, int tb, int64_t m, int64_t n, int64_t k, const T *alpha, \
                              const T *a, int64_t rsa, int64_t csa, const T *b, int64_t rsb,   \
                              int64_t csb, const T *beta, T *c, int64_t rsc, int64_t csc,      \
                              const void *cntx, const tfe__bli_rntm *rntm)                     \
      __asm__("bli_" #ch "gemm_ex");

int setenv(const char *name, const char *value, int overwrite); /* POSIX; hidden by -std=c11 */

/* Once-per-process state of the binding (a member of the prims section of tfe__st). */
typedef struct tfe__blas_state {
  atomic_int state;        /* 0: not started, 1: running, 2: done */
  const char *arch;        /* the kernel set BLIS runs */
  bool rntm_ok;            /* the rntm_t mirror matches the loaded BLIS */
  tfe__bli_rntm rntm;      /* BLIS's global runtime (pack/sup settings) */
  char chosen[16];         /* what tenferro asked for ("" = BLIS's own choice) */
} tfe__blas_state;

/* The kernel set BLIS runs ("skx", "haswell", "zen3", "generic", ...). Initializes BLIS. */
TFE_API const char *tfe_blas_arch(void);
/* BLIS's version string ("0.9.0"). */
TFE_API const char *tfe_blas_version(void);
/* Whether tenferro can give BLIS a thread count per call (BLIS 0.9.x whose runtime struct
 * passed the layout probe); otherwise BLIS runs its process-wide setting. */
TFE_API bool tfe_blas_per_call_threads(void);
/* BLIS's process-wide thread count (used for GEMMs tenferro does not size itself). */
TFE_API void tfe_blas_set_num_threads(int n);
TFE_API int tfe_blas_get_num_threads(void);

/* One typed GEMM with general strides: C = alpha*op(A)*op(B) + beta*C, op from ta/tb
 * (TFE__BLIS_* codes). nthreads > 0 asks for that many BLIS threads for this call only
 * (0: BLIS's process-wide setting). */
#define TFE__BLAS_GEMM_DEF(S, ch, T)                                                             \
  TFE_INTERNAL void tfe__blas_gemm_##S(int ta, int tb, int64_t m, int64_t n, int64_t k,           \
                                       T alpha, const T *a, int64_t rsa, int64_t csa, const T *b, \
                                       int64_t rsb, int64_t csb, T beta, T *c, int64_t rsc,       \
                                       int64_t csc, int nthreads) {                               \
    tfe__blas_init();                                                                             \
    if (nthreads > 0 && tfe__st.prims.blas.rntm_ok) {                                                      \
      tfe__bli_rntm r = tfe__st.prims.blas.rntm;                                                        \
      r.auto_factor = true;                                                                       \
      r.num_threads = nthreads;                                                                   \
      for (int i_ = 0; i_ < 6; i_++) r.thrloop[i_] = -1;                                          \
      tfe__bli_##ch##gemm_ex(ta, tb, m, n, k, &alpha, a, rsa, csa, b, rsb, csb, &beta, c, rsc,    \
                             csc, NULL, &r);                                                      \
    } else {                                                                                      \
      tfe__bli_##ch##gemm(ta, tb, m, n, k, &alpha, a, rsa, csa, b, rsb, csb, &beta, c, rsc, csc); \
    }                                                                                             \
  }

#endif
#elif !defined(TENFERRO_BLAS_BODY) /* bodies */
#define TENFERRO_BLAS_BODY
#include <complex.h>
#include <tenferro/core/core.h>
TFE__BLI_GEMM_DECL(s, float)
TFE__BLI_GEMM_DECL(d, double)
TFE__BLI_GEMM_DECL(c, float _Complex)
TFE__BLI_GEMM_DECL(z, double _Complex)
#undef TFE__BLI_GEMM_DECL

/* ---- once-per-process initialization (state: tfe__st.prims.blas) -------------------------- */

/* Which BLIS_ARCH_TYPE id this CPU should use; -1 = leave BLIS's choice. */
TFE_INTERNAL int tfe__blas_pick_arch(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return TFE__BLIS_ARCH_SKX;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return TFE__BLIS_ARCH_HASWELL;
#endif
  return -1;
}

/* Whether the loaded BLIS's rntm_t is tfe__bli_rntm: let bli_rntm_init_from_global() fill a
 * sentinel-filled buffer twice as large and check every field and the untouched tail. */
TFE_INTERNAL bool tfe__blas_rntm_probe(tfe__bli_rntm *out) {
  union { tfe__bli_rntm r; unsigned char b[2 * sizeof(tfe__bli_rntm)]; int64_t align; } u;
  memset(&u, 0xA5, sizeof u);
  tfe__bli_rntm_init_from_global(&u);
  for (size_t i = sizeof u.r; i < sizeof u.b; i++)
    if (u.b[i] != 0xA5) return false; /* BLIS's struct is larger than ours */
  unsigned char f[4];
  memcpy(&f[0], &u.r.auto_factor, 1);
  memcpy(&f[1], &u.r.pack_a, 1);
  memcpy(&f[2], &u.r.pack_b, 1);
  memcpy(&f[3], &u.r.l3_sup, 1);
  for (int i = 0; i < 4; i++)
    if (f[i] > 1) return false;
  if (u.r.num_threads == 0 || u.r.num_threads < -1 || u.r.sba_pool || u.r.pba) return false;
  for (int i = 0; i < 6; i++)
    if (u.r.thrloop[i] == 0 || u.r.thrloop[i] < -1) return false;
  *out = u.r;
  return true;
}

TFE_INTERNAL void tfe__blas_do_init(void) {
  if (!getenv("BLIS_ARCH_TYPE")) {
    int id = tfe__blas_pick_arch();
    if (id >= 0) {
      char buf[16];
      snprintf(buf, sizeof buf, "%d", id);
      setenv("BLIS_ARCH_TYPE", buf, 0);
      snprintf(tfe__st.prims.blas.chosen, sizeof tfe__st.prims.blas.chosen, "%s", id == 0 ? "skx" : "haswell");
    }
  }
  tfe__bli_init(); /* must precede bli_arch_query_id, which aborts on an uninitialized gks */
  tfe__st.prims.blas.arch = tfe__bli_arch_string(tfe__bli_arch_query_id());
  const char *ver = tfe__bli_info_get_version_str();
  /* only 0.9.x is probed: another version may lack bli_rntm_init_from_global's semantics */
  tfe__st.prims.blas.rntm_ok = ver && strncmp(ver, "0.9.", 4) == 0 && tfe__blas_rntm_probe(&tfe__st.prims.blas.rntm);
}

/* Thread-safe, once per process; cheap after the first call. */
TFE_INTERNAL void tfe__blas_init(void) {
  if (atomic_load_explicit(&tfe__st.prims.blas.state, memory_order_acquire) == 2) return;
  int expect = 0;
  if (atomic_compare_exchange_strong(&tfe__st.prims.blas.state, &expect, 1)) {
    tfe__blas_do_init();
    atomic_store_explicit(&tfe__st.prims.blas.state, 2, memory_order_release);
    return;
  }
  while (atomic_load_explicit(&tfe__st.prims.blas.state, memory_order_acquire) != 2) {
  }
}
TFE_API const char *tfe_blas_arch(void) {
  tfe__blas_init();
  return tfe__st.prims.blas.arch ? tfe__st.prims.blas.arch : "unknown";
}
TFE_API const char *tfe_blas_version(void) {
  tfe__blas_init();
  return tfe__bli_info_get_version_str();
}
TFE_API bool tfe_blas_per_call_threads(void) {
  tfe__blas_init();
  return tfe__st.prims.blas.rntm_ok;
}
TFE_API void tfe_blas_set_num_threads(int n) {
  tfe__blas_init();
  tfe__bli_thread_set_num_threads(n > 0 ? tfe__threads_cap(n) : 1); /* capped like tfe_set_num_threads */
}
TFE_API int tfe_blas_get_num_threads(void) {
  tfe__blas_init();
  int64_t n = tfe__bli_thread_get_num_threads(); /* -1 when never set: BLIS runs one thread */
  return n > 0 ? (int)n : 1;
}
TFE__BLAS_GEMM_DEF(f32, s, float)
TFE__BLAS_GEMM_DEF(f64, d, double)
TFE__BLAS_GEMM_DEF(c64, c, float _Complex)
TFE__BLAS_GEMM_DEF(c128, z, double _Complex)
#undef TFE__BLAS_GEMM_DEF
#endif
