/* tenferro/semiring_gemm_tpl.h — blocked, packed GEMM over the kind's semiring; re-included
 * per kind. C = alpha * (A . B) + beta * C with (+, *) the semiring's (add, mul), any strides.
 *
 * Goto-style loops: panels of B (KC x NC) and blocks of A (MC x KC) are packed into
 * contiguous slivers of NR columns / MR rows, and a micro-kernel reduces one MR x NR tile over
 * KC. Tropical f32/f64 kinds use SIMD micro-kernels (semiring_gemm_simd.h, AVX-512 or AVX2
 * chosen at run time); every other kind, user kinds included, uses the generic one below,
 * written only with tfe_sr_*. The micro-kernel starts each tile from the semiring zero, so
 * pack padding never reaches C (padded rows / columns are not stored). */

/* Generic micro-kernel: tile[i + j*mr] = sum_p a[p*mr + i] * b[p*nr + j]. */
TFE_INTERNAL void TFE_FN(sg_ukr_generic_)(int64_t kc, int mr, int nr, const void *av, const void *bv, void *tv) {
  const TFE_T *a = (const TFE_T *)av, *b = (const TFE_T *)bv;
  TFE_T *tile = (TFE_T *)tv;
  for (int x = 0; x < mr * nr; x++) tile[x] = TFE_FN(sr_zero)();
  for (int64_t p = 0; p < kc; p++) {
    const TFE_T *ap = a + p * mr, *bp = b + p * nr;
    for (int j = 0; j < nr; j++)
      for (int i = 0; i < mr; i++) tile[i + j * mr] = TFE_FN(sr_add)(tile[i + j * mr], TFE_FN(sr_mul)(ap[i], bp[j]));
  }
}

/* Micro-kernel choice for this kind: SIMD tropical kernels where available. */
typedef struct TFE_TY(sg_kernel) { tfe__sg_ukr fn; int mr, nr; const char *name; } TFE_TY(sg_kernel);

TFE_INTERNAL TFE_TY(sg_kernel) TFE_FN(sg_pick_)(void) {
  TFE_TY(sg_kernel) k = {TFE_FN(sg_ukr_generic_), 4, 4, "generic"};
#if defined(TFE__SG_HAVE_SIMD) && (TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES)
  int isa = tfe__sg_isa();
  int op = TFE_ALG == TFE_ALG_MAXPLUS ? 0 : TFE_ALG == TFE_ALG_MINPLUS ? 1 : 2;
  int dbl = sizeof(TFE_R) == 8;
  if (isa == 2) {
    k.fn = tfe__sg_kernel(2, dbl, op);
    k.mr = dbl ? 16 : 32; k.nr = 12; k.name = "avx512";
  } else if (isa == 1) {
    k.fn = tfe__sg_kernel(1, dbl, op);
    k.mr = dbl ? 8 : 16; k.nr = 6; k.name = "avx2";
  }
#endif
  return k;
}

/* Name of the micro-kernel this kind uses on this CPU ("avx512", "avx2", "generic"). */
TFE_API const char *TFE_FN(semiring_gemm_kernel)(void) { return TFE_FN(sg_pick_)().name; }

#define TFE__SG_MC 128
#define TFE__SG_KC 256
#define TFE__SG_NC 2048
/* Per-thread part: packed A block (rows rounded up to MR <= 32) and one tile (<= 32 x 16). */
TFE_INTERNAL int64_t TFE_FN(sg_thread_ws_)(int64_t mc, int64_t kc) { return (mc + 32) * kc + 32 * 16; }

/* Pack rows [0, mc) x cols [0, kc) of A into MR-row slivers (column p of a sliver is MR
 * contiguous values); rows past mc are padded with zero. */
TFE_INTERNAL void TFE_FN(sg_pack_a_)(int64_t mc, int64_t kc, int mr, const TFE_T *a, int64_t rs, int64_t cs,
                                     bool cj, TFE_T *dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    int64_t me = mc - i0 < mr ? mc - i0 : mr;
    for (int64_t p = 0; p < kc; p++) {
      const TFE_T *src = a + i0 * rs + p * cs;
      int64_t i = 0;
      for (; i < me; i++) dst[i] = cj ? TFE_FN(sr_conj)(src[i * rs]) : src[i * rs];
      for (; i < mr; i++) dst[i] = TFE_FN(sr_zero)();
      dst += mr;
    }
  }
}
/* Pack rows [0, kc) x cols [0, nc) of B into NR-column slivers. */
TFE_INTERNAL void TFE_FN(sg_pack_b_)(int64_t kc, int64_t nc, int nr, const TFE_T *b, int64_t rs, int64_t cs,
                                     bool cj, TFE_T *dst) {
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    int64_t ne = nc - j0 < nr ? nc - j0 : nr;
    for (int64_t p = 0; p < kc; p++) {
      const TFE_T *src = b + p * rs + j0 * cs;
      int64_t j = 0;
      for (; j < ne; j++) dst[j] = cj ? TFE_FN(sr_conj)(src[j * cs]) : src[j * cs];
      for (; j < nr; j++) dst[j] = TFE_FN(sr_zero)();
      dst += nr;
    }
  }
}

/* Workspace (elements) the kernel needs for an m x n x k product on `threads` threads:
 * one packed B panel, and per thread a packed A block plus a tile. */
TFE_INTERNAL int64_t TFE_FN(sg_workspace_)(int threads, int64_t m, int64_t n, int64_t k) {
  int64_t kc = k < TFE__SG_KC ? k : TFE__SG_KC, nc = n < TFE__SG_NC ? n : TFE__SG_NC;
  int64_t mc = m < TFE__SG_MC ? m : TFE__SG_MC;
  if (kc < 1) kc = 1;
  return kc * (nc + 32) + (int64_t)(threads > 0 ? threads : 1) * TFE_FN(sg_thread_ws_)(mc, kc);
}

/* Merge one tile into C: first K block applies beta, later ones add. */
TFE_INTERNAL void TFE_FN(sg_store_)(const TFE_T *tile, int mr, int64_t me, int64_t ne, TFE_T alpha, TFE_T beta,
                                    bool first, TFE_T *c, int64_t rsc, int64_t csc) {
  bool one = TFE_FN(sr_eq)(alpha, TFE_FN(sr_one)());
  bool bzero = TFE_FN(sr_eq)(beta, TFE_FN(sr_zero)());
  for (int64_t j = 0; j < ne; j++)
    for (int64_t i = 0; i < me; i++) {
      TFE_T *cp = c + i * rsc + j * csc;
      TFE_T v = one ? tile[i + j * mr] : TFE_FN(sr_mul)(alpha, tile[i + j * mr]);
      if (!first) v = TFE_FN(sr_add)(*cp, v);
      else if (!bzero) v = TFE_FN(sr_add)(v, TFE_FN(sr_mul)(beta, *cp));
      *cp = v;
    }
}

/* C = alpha*A.B + beta*C. ws: TFE_FN(sg_workspace_)(threads) elements. k == 0 scales C. */
TFE_INTERNAL void TFE_FN(semiring_gemm_ws_)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                            int64_t rsa, int64_t csa, bool ca, const TFE_T *b, int64_t rsb,
                                            int64_t csb, bool cb, TFE_T beta, TFE_T *c, int64_t rsc,
                                            int64_t csc, int threads, TFE_T *ws) {
  (void)threads; /* unused without OpenMP */
  if (m <= 0 || n <= 0) return;
  TFE_TY(sg_kernel) K = TFE_FN(sg_pick_)();
  int mr = K.mr, nr = K.nr;
  if (k <= 0) { /* alpha * zero + beta * C */
    TFE_T z = TFE_FN(sr_zero)();
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) TFE_FN(sg_store_)(&z, 1, 1, 1, alpha, beta, true, c + i * rsc + j * csc, rsc, csc);
    return;
  }
  int64_t kcmax = k < TFE__SG_KC ? k : TFE__SG_KC, ncmax = n < TFE__SG_NC ? n : TFE__SG_NC;
  int64_t mcmax = m < TFE__SG_MC ? m : TFE__SG_MC, per = TFE_FN(sg_thread_ws_)(mcmax, kcmax);
  TFE_T *bpack = ws;
  TFE_T *apack0 = ws + kcmax * (ncmax + 32);
  for (int64_t jc = 0; jc < n; jc += TFE__SG_NC) {
    int64_t nc = n - jc < TFE__SG_NC ? n - jc : TFE__SG_NC;
    for (int64_t pc = 0; pc < k; pc += TFE__SG_KC) {
      int64_t kc = k - pc < TFE__SG_KC ? k - pc : TFE__SG_KC;
      TFE_FN(sg_pack_b_)(kc, nc, nr, b + pc * rsb + jc * csb, rsb, csb, cb, bpack);
      int64_t nblk = (m + TFE__SG_MC - 1) / TFE__SG_MC;
      TFE_OMP(parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && nblk > 1))
      for (int64_t ib = 0; ib < nblk; ib++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        TFE_T *apack = apack0 + (int64_t)tid * per;
        TFE_T *tile = apack + (mcmax + 32) * kcmax;
        int64_t ic = ib * TFE__SG_MC, mc = m - ic < TFE__SG_MC ? m - ic : TFE__SG_MC;
        TFE_FN(sg_pack_a_)(mc, kc, mr, a + ic * rsa + pc * csa, rsa, csa, ca, apack);
        for (int64_t jr = 0; jr < nc; jr += nr)
          for (int64_t ir = 0; ir < mc; ir += mr) {
            K.fn(kc, mr, nr, apack + ir * kc, bpack + jr * kc, tile);
            int64_t me = mc - ir < mr ? mc - ir : mr, ne = nc - jr < nr ? nc - jr : nr;
            TFE_FN(sg_store_)(tile, mr, me, ne, alpha, beta, pc == 0, c + (ic + ir) * rsc + (jc + jr) * csc, rsc, csc);
          }
      }
    }
  }
}

/* Public entry: semiring GEMM with general strides for any kind (allocates its packing
 * workspace; C untouched on failure). threads <= 0: tfe_get_num_threads(). */
TFE_API tfe_status TFE_FN(semiring_gemm)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                         int64_t rsa, int64_t csa, const TFE_T *b, int64_t rsb, int64_t csb,
                                         TFE_T beta, TFE_T *c, int64_t rsc, int64_t csc, int threads) {
  if (m < 0 || n < 0 || k < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "negative size (m %lld, n %lld, k %lld)", (long long)m, (long long)n, (long long)k);
  if ((m && n && !c) || (m && k && !a) || (k && n && !b)) return TFE_FAIL(TFE_ERR_NULL, "a matrix pointer is NULL");
  if (threads <= 0) threads = tfe_get_num_threads();
  TFE_T *ws = (TFE_T *)tfe__alloc((size_t)TFE_FN(sg_workspace_)(threads, m, n, k) * sizeof(TFE_T));
  if (!ws) return TFE_ERR_ALLOC;
  TFE_FN(semiring_gemm_ws_)(m, n, k, alpha, a, rsa, csa, false, b, rsb, csb, false, beta, c, rsc, csc, threads, ws);
  tfe__free(ws);
  return TFE_OK;
}

#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
/* Tropical GEMM that also records which k won each C element (first k on ties), for the
 * backward pass: C[i,j] = alpha * max_k A[i,k]*B[k,j] (beta must be the semiring zero: the
 * winner of a sum with the old C would be ambiguous). argmax is m x n with strides
 * rsi/csi; k == 0 stores -1. Naive loop order i, j, k keeps "first winner" exact. */
TFE_API tfe_status TFE_FN(semiring_gemm_argmax)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                                int64_t rsa, int64_t csa, const TFE_T *b, int64_t rsb,
                                                int64_t csb, TFE_T *c, int64_t rsc, int64_t csc, int64_t *argmax,
                                                int64_t rsi, int64_t csi) {
  if (m < 0 || n < 0 || k < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "negative size (m %lld, n %lld, k %lld)", (long long)m, (long long)n, (long long)k);
  if ((m && n && (!c || !argmax)) || (m && k && !a) || (k && n && !b))
    return TFE_FAIL(TFE_ERR_NULL, "a matrix pointer is NULL");
  TFE_OMP(parallel for num_threads(tfe_get_num_threads()) if (m * n * k > 32768))
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      TFE_T best = TFE_FN(sr_zero)();
      int64_t arg = -1;
      for (int64_t p = 0; p < k; p++) {
        TFE_T v = TFE_FN(sr_mul)(a[i * rsa + p * csa], b[p * rsb + j * csb]);
        /* strictly better only: the first winner stays */
        if (arg < 0 || !TFE_FN(sr_eq)(TFE_FN(sr_add)(best, v), best)) { best = v; arg = p; }
      }
      c[i * rsc + j * csc] = TFE_FN(sr_mul)(alpha, best);
      argmax[i * rsi + j * csi] = arg;
    }
  return TFE_OK;
}
#endif

