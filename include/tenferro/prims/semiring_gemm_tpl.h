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
#if !TFE__BODY_PHASE

/* Micro-kernel choice for this kind: SIMD tropical kernels where available. */
typedef struct TFE_TY(sg_kernel) { tfe__sg_ukr fn; int mr, nr; const char *name; } TFE_TY(sg_kernel);

/* Name of the micro-kernel this kind uses on this CPU ("avx512", "avx2", "generic"). */
TFE_API const char *TFE_FN(semiring_gemm_kernel)(void);

#define TFE__SG_MC 128
#define TFE__SG_KC 256
#define TFE__SG_NC 2048

/* Public entry: semiring GEMM with general strides for any kind (allocates its packing
 * workspace; C untouched on failure). threads <= 0: tfe_get_num_threads(). */
TFE_API tfe_status TFE_FN(semiring_gemm)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                         int64_t rsa, int64_t csa, const TFE_T *b, int64_t rsb, int64_t csb,
                                         TFE_T beta, TFE_T *c, int64_t rsc, int64_t csc, int threads);

#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES

/* Tropical GEMM that also records which k won each C element (first k on ties), for the
 * backward pass: C[i,j] = alpha * max_k A[i,k]*B[k,j] (beta must be the semiring zero: the
 * winner of a sum with the old C would be ambiguous). argmax is m x n with strides
 * rsi/csi; k == 0 stores -1. Packed panels as in tfe_semiring_gemm_S, with an AVX-512 argmax
 * micro-kernel for f32/f64 (generic kernel elsewhere); threads from tfe_get_num_threads()
 * when the product is large enough. A NaN product wins (the first NaN k); NaN and infinities
 * follow the semiring's rules (docs/core.md). */
TFE_API tfe_status TFE_FN(semiring_gemm_argmax)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                                int64_t rsa, int64_t csa, const TFE_T *b, int64_t rsb,
                                                int64_t csb, TFE_T *c, int64_t rsc, int64_t csc, int64_t *argmax,
                                                int64_t rsi, int64_t csi);
#endif

#else /* bodies */
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
TFE_API const char *TFE_FN(semiring_gemm_kernel)(void) { return TFE_FN(sg_pick_)().name; }
#define TFE__SG_MC 128
#define TFE__SG_KC 256
#define TFE__SG_NC 2048
/* Per-thread part: packed A block (rows rounded up to MR <= 32) and one tile (<= 32 x 16). */
TFE_INTERNAL int64_t TFE_FN(sg_thread_ws_)(int64_t mc, int64_t kc) { return (mc + 32) * kc + 32 * 16; }

/* Whether v needs the generic micro-kernel's NaN and infinity rules (core/semiring_tpl.h): the
 * SIMD kernels' vmax/vmin pass a NaN on by operand order, and the zero times the opposite
 * infinity gives NaN in IEEE arithmetic. Packing flags such values, so the fast kernels run
 * unchanged on everything else. */
TFE_INTERNAL bool TFE_FN(sg_special_)(TFE_T v) {
#if TFE_ALG == TFE_ALG_MAXPLUS
  return !(v.v < (TFE_R)INFINITY); /* NaN or +inf */
#elif TFE_ALG == TFE_ALG_MINPLUS
  return !(v.v > (TFE_R)-INFINITY); /* NaN or -inf */
#elif TFE_ALG == TFE_ALG_MAXTIMES
  return !(v.v < (TFE_R)INFINITY && v.v > (TFE_R)-INFINITY); /* NaN or an infinity */
#else
  (void)v;
  return false;
#endif
}
/* Pack rows [0, mc) x cols [0, kc) of A into MR-row slivers (column p of a sliver is MR
 * contiguous values); rows past mc are padded with zero. Returns whether a value is special. */
TFE_INTERNAL bool TFE_FN(sg_pack_a_)(int64_t mc, int64_t kc, int mr, const TFE_T *a, int64_t rs, int64_t cs,
                                     bool cj, TFE_T *dst) {
  bool sp = false;
  for (int64_t i0 = 0; i0 < mc; i0 += mr) {
    int64_t me = mc - i0 < mr ? mc - i0 : mr;
    for (int64_t p = 0; p < kc; p++) {
      const TFE_T *src = a + i0 * rs + p * cs;
      int64_t i = 0;
      for (; i < me; i++) {
        dst[i] = cj ? TFE_FN(sr_conj)(src[i * rs]) : src[i * rs];
        sp |= TFE_FN(sg_special_)(dst[i]);
      }
      for (; i < mr; i++) dst[i] = TFE_FN(sr_zero)();
      dst += mr;
    }
  }
  return sp;
}
/* Pack rows [0, kc) x cols [0, nc) of B into NR-column slivers (special values as above). */
TFE_INTERNAL bool TFE_FN(sg_pack_b_)(int64_t kc, int64_t nc, int nr, const TFE_T *b, int64_t rs, int64_t cs,
                                     bool cj, TFE_T *dst) {
  bool sp = false;
  for (int64_t j0 = 0; j0 < nc; j0 += nr) {
    int64_t ne = nc - j0 < nr ? nc - j0 : nr;
    for (int64_t p = 0; p < kc; p++) {
      const TFE_T *src = b + p * rs + j0 * cs;
      int64_t j = 0;
      for (; j < ne; j++) {
        dst[j] = cj ? TFE_FN(sr_conj)(src[j * cs]) : src[j * cs];
        sp |= TFE_FN(sg_special_)(dst[j]);
      }
      for (; j < nr; j++) dst[j] = TFE_FN(sr_zero)();
      dst += nr;
    }
  }
  return sp;
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
      bool spb = TFE_FN(sg_pack_b_)(kc, nc, nr, b + pc * rsb + jc * csb, rsb, csb, cb, bpack);
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
        bool sp = TFE_FN(sg_pack_a_)(mc, kc, mr, a + ic * rsa + pc * csa, rsa, csa, ca, apack) || spb;
        tfe__sg_ukr fn = sp ? TFE_FN(sg_ukr_generic_) : K.fn; /* same packed layout, NaN rules */
        for (int64_t jr = 0; jr < nc; jr += nr)
          for (int64_t ir = 0; ir < mc; ir += mr) {
            fn(kc, mr, nr, apack + ir * kc, bpack + jr * kc, tile);
            int64_t me = mc - ir < mr ? mc - ir : mr, ne = nc - jr < nr ? nc - jr : nr;
            TFE_FN(sg_store_)(tile, mr, me, ne, alpha, beta, pc == 0, c + (ic + ir) * rsc + (jc + jr) * csc, rsc, csc);
          }
      }
    }
  }
}
TFE_API tfe_status TFE_FN(semiring_gemm)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                         int64_t rsa, int64_t csa, const TFE_T *b, int64_t rsb, int64_t csb,
                                         TFE_T beta, TFE_T *c, int64_t rsc, int64_t csc, int threads) {
  if (m < 0 || n < 0 || k < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "negative size (m %lld, n %lld, k %lld)", (long long)m, (long long)n, (long long)k);
  if ((m && n && !c) || (m && k && !a) || (k && n && !b)) return TFE_FAIL(TFE_ERR_NULL, "a matrix pointer is NULL");
  threads = threads <= 0 ? tfe_get_num_threads() : tfe__threads_cap(threads); /* no 10^6 thread workspaces */
  TFE_T *ws = (TFE_T *)tfe__alloc((size_t)TFE_FN(sg_workspace_)(threads, m, n, k) * sizeof(TFE_T));
  if (!ws) return TFE_ERR_ALLOC;
  TFE_FN(semiring_gemm_ws_)(m, n, k, alpha, a, rsa, csa, false, b, rsb, csb, false, beta, c, rsc, csc, threads, ws);
  tfe__free(ws);
  return TFE_OK;
}
#if TFE_ALG == TFE_ALG_MAXPLUS || TFE_ALG == TFE_ALG_MINPLUS || TFE_ALG == TFE_ALG_MAXTIMES
/* ---- argmax: the same packed blocking, a kernel that also keeps which k won -------------------- */
/* Strictly better in the semiring order: sr_add(best, v) is not best. */
TFE_INTERNAL bool TFE_FN(sga_better_)(TFE_T v, TFE_T best) {
  return !TFE_FN(sr_eq)(TFE_FN(sr_add)(best, v), best);
}
/* Generic argmax micro-kernel: the tile starts from the products at p = 0 (index p0), later
 * products replace an entry only when strictly better, so the first winner stays. */
TFE_INTERNAL void TFE_FN(sga_ukr_generic_)(int64_t kc, int64_t p0, int mr, int nr, const TFE_T *a, const TFE_T *b,
                                           TFE_T *tile, int64_t *itile) {
  for (int j = 0; j < nr; j++)
    for (int i = 0; i < mr; i++) {
      tile[i + j * mr] = TFE_FN(sr_mul)(a[i], b[j]);
      itile[i + j * mr] = p0;
    }
  for (int64_t p = 1; p < kc; p++) {
    const TFE_T *ap = a + p * mr, *bp = b + p * nr;
    for (int j = 0; j < nr; j++)
      for (int i = 0; i < mr; i++) {
        TFE_T v = TFE_FN(sr_mul)(ap[i], bp[j]);
        if (TFE_FN(sga_better_)(v, tile[i + j * mr])) { tile[i + j * mr] = v; itile[i + j * mr] = p0 + p; }
      }
  }
}
/* Merge a tile into C / argmax: the first K block stores, later ones replace only strictly
 * better entries (earlier blocks hold smaller k, so ties keep the first winner). C holds the
 * raw maxima until the caller applies alpha. */
TFE_INTERNAL void TFE_FN(sga_store_)(const TFE_T *tile, const int64_t *itile, int mr, int64_t me, int64_t ne, bool first,
                                     TFE_T *c, int64_t rsc, int64_t csc, int64_t *arg, int64_t rsi, int64_t csi) {
  for (int64_t j = 0; j < ne; j++)
    for (int64_t i = 0; i < me; i++) {
      TFE_T *cp = c + i * rsc + j * csc;
      TFE_T v = tile[i + j * mr];
      if (first || TFE_FN(sga_better_)(v, *cp)) { *cp = v; arg[i * rsi + j * csi] = itile[i + j * mr]; }
    }
}
TFE_API tfe_status TFE_FN(semiring_gemm_argmax)(int64_t m, int64_t n, int64_t k, TFE_T alpha, const TFE_T *a,
                                                int64_t rsa, int64_t csa, const TFE_T *b, int64_t rsb,
                                                int64_t csb, TFE_T *c, int64_t rsc, int64_t csc, int64_t *argmax,
                                                int64_t rsi, int64_t csi) {
  if (m < 0 || n < 0 || k < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "negative size (m %lld, n %lld, k %lld)", (long long)m, (long long)n, (long long)k);
  if ((m && n && (!c || !argmax)) || (m && k && !a) || (k && n && !b))
    return TFE_FAIL(TFE_ERR_NULL, "a matrix pointer is NULL");
  if (m == 0 || n == 0) return TFE_OK;
  if (k == 0) {
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        c[i * rsc + j * csc] = TFE_FN(sr_mul)(alpha, TFE_FN(sr_zero)());
        argmax[i * rsi + j * csi] = -1;
      }
    return TFE_OK;
  }
  int mr = 4, nr = 4;
  tfe__sg_aukr simd = NULL;
#if defined(TFE__SG_HAVE_SIMD) /* tropical kinds have a float or double value */
  if (tfe__sg_isa() == 2 && (sizeof(TFE_R) == 8 || k <= INT32_MAX)) { /* f32 lanes hold int32 indices */
    simd = tfe__sga_kernel(sizeof(TFE_R) == 8, TFE_ALG == TFE_ALG_MAXPLUS ? 0 : TFE_ALG == TFE_ALG_MINPLUS ? 1 : 2);
    mr = sizeof(TFE_R) == 8 ? 16 : 32;
  }
#endif
  int64_t work = m > 0 && n > 0 && k > 0 && m <= ((int64_t)1 << 62) / n / k ? m * n * k : (int64_t)1 << 62;
  int threads = tfe__pr_threads_for(work, tfe_get_num_threads());
  int64_t kcmax = k < TFE__SG_KC ? k : TFE__SG_KC, ncmax = n < TFE__SG_NC ? n : TFE__SG_NC;
  int64_t mcmax = m < TFE__SG_MC ? m : TFE__SG_MC, per = TFE_FN(sg_thread_ws_)(mcmax, kcmax);
  int64_t elems = TFE_FN(sg_workspace_)(threads, m, n, k), ibytes = (int64_t)threads * 32 * 16 * (int64_t)sizeof(int64_t);
  char *mem = (char *)tfe__alloc((size_t)elems * sizeof(TFE_T) + (size_t)ibytes);
  if (!mem) return TFE_ERR_ALLOC;
  int64_t *itile0 = (int64_t *)(void *)mem;
  TFE_T *bpack = (TFE_T *)(void *)(mem + ibytes), *apack0 = bpack + kcmax * (ncmax + 32);
  for (int64_t jc = 0; jc < n; jc += TFE__SG_NC) {
    int64_t nc = n - jc < TFE__SG_NC ? n - jc : TFE__SG_NC;
    for (int64_t pc = 0; pc < k; pc += TFE__SG_KC) {
      int64_t kc = k - pc < TFE__SG_KC ? k - pc : TFE__SG_KC;
      bool spb = TFE_FN(sg_pack_b_)(kc, nc, nr, b + pc * rsb + jc * csb, rsb, csb, false, bpack);
      int64_t nblk = (m + TFE__SG_MC - 1) / TFE__SG_MC;
      TFE_OMP(parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && nblk > 1))
      for (int64_t ib = 0; ib < nblk; ib++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        TFE_T *apack = apack0 + (int64_t)tid * per, *tile = apack + (mcmax + 32) * kcmax;
        int64_t *itile = itile0 + (int64_t)tid * 32 * 16;
        int64_t ic = ib * TFE__SG_MC, mc = m - ic < TFE__SG_MC ? m - ic : TFE__SG_MC;
        bool sp = TFE_FN(sg_pack_a_)(mc, kc, mr, a + ic * rsa + pc * csa, rsa, csa, false, apack) || spb;
        for (int64_t jr = 0; jr < nc; jr += nr)
          for (int64_t ir = 0; ir < mc; ir += mr) {
            if (simd && !sp) simd(kc, pc, apack + ir * kc, bpack + jr * kc, tile, itile);
            else TFE_FN(sga_ukr_generic_)(kc, pc, mr, nr, apack + ir * kc, bpack + jr * kc, tile, itile);
            int64_t me = mc - ir < mr ? mc - ir : mr, ne = nc - jr < nr ? nc - jr : nr;
            int64_t ci = ic + ir, cj = jc + jr;
            TFE_FN(sga_store_)(tile, itile, mr, me, ne, pc == 0, c + ci * rsc + cj * csc, rsc, csc,
                               argmax + ci * rsi + cj * csi, rsi, csi);
          }
      }
    }
  }
  if (!TFE_FN(sr_eq)(alpha, TFE_FN(sr_one)()))
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) c[i * rsc + j * csc] = TFE_FN(sr_mul)(alpha, c[i * rsc + j * csc]);
  tfe__free(mem);
  return TFE_OK;
}
#endif
#endif
