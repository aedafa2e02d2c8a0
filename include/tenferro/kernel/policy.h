/* tenferro/kernel/policy.h — which path for which destination and machine: fresh
 * destinations (huge pages, faulting in first), the per-CPU defaults of the tuning modes,
 * and the thread count of a kernel. Internal helpers only (bodies). The knobs they read are
 * the kernel section of struct tfe_tuning (core/tuning.h); docs/kernel.md explains each
 * choice and docs/bench-kernel.md holds the measurements behind the defaults. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_POLICY_H
#define TENFERRO_KERNEL_POLICY_H
#include <tenferro/core/core.h>
#endif
#elif !defined(TENFERRO_KERNEL_POLICY_BODY) /* bodies */
#define TENFERRO_KERNEL_POLICY_BODY

/* ---- fresh destinations ------------------------------------------------------------------
 * A large fresh buffer costs one page fault per 4 KiB page on first touch, which makes a
 * copy into it several times slower than the copy itself. Asking for transparent huge pages
 * before the first touch (what numpy does for its arrays) makes those faults 512x fewer.
 * Declared here rather than through <sys/mman.h>, which -std=c11 hides. */
#if defined(__linux__)
extern int madvise(void *addr, size_t len, int advice);
#endif
TFE_INTERNAL void tfe__kadvise_huge(void *p, size_t bytes) {
#if defined(__linux__)
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (!p || bytes < 2 * huge) return;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (e > a) (void)madvise((void *)a, (size_t)(e - a), 14 /* MADV_HUGEPAGE */);
#else
  (void)p; (void)bytes;
#endif
}

/* Fault in a fresh buffer of `bytes` before a kernel writes it: one write per 4 KiB, `nt`
 * threads taking equal 2 MiB-aligned shares (as the kernels split their outputs). Returns
 * whether it did (buffers of at least 4 MiB, copy_fresh_prefault on). A transposing copy
 * whose own stores fault the pages in runs measurably slower than one into pages faulted
 * first (docs/bench-kernel.md). Writes bytes: only for buffers nobody has read. */
TFE_INTERNAL bool tfe__kprefault(void *p, size_t bytes, int nt) {
  const size_t huge = (size_t)2 << 20;
  if (!p || bytes < 2 * huge || !tfe__st.tune.copy_fresh_prefault) return false;
  size_t chunks = (bytes + huge - 1) / huge;
  if ((size_t)nt > chunks) nt = (int)chunks;
  TFE_OMP(parallel num_threads(nt) if (nt > 1))
  {
    size_t t = 0, n = 1;
#ifdef _OPENMP
    t = (size_t)omp_get_thread_num();
    n = (size_t)omp_get_num_threads();
#endif
    size_t lo = chunks * t / n * huge, hi = chunks * (t + 1) / n * huge;
    if (hi > bytes) hi = bytes;
    for (size_t o = lo; o < hi; o += 4096) ((volatile char *)p)[o] = 0;
  }
  return true;
}
/* copy_fresh_in_order: a transposing copy into fresh pages whose tiles walk the destination
 * in order (tfe__kplan_in_order, tiles within 2 MiB) takes each page's faults as it reaches
 * it and writes with normal stores: the system has just zeroed the page through the cache,
 * and the stores find its lines there, where streaming stores or faulting everything first
 * send the zeros to memory and back. Tiles that jump about the destination (reversals, the
 * rotation, de-interleaves) keep the faults first and the streaming stores. It measured
 * better on AMD CPUs and mixed elsewhere (docs/bench-kernel.md), hence -1: AMD only.
 * copy_fresh_min_bytes: smaller fresh destinations skip both (the C library hands small
 * buffers back from its own free lists, not as new pages; tests lower it). */

/* ---- per-CPU defaults ---------------------------------------------------------------------
 * Whether this is an AMD CPU, and a tuning mode with -1 meaning "on AMD CPUs only" (the
 * defaults were measured per CPU family: streamed edge lines, fresh in-order transposes). */
TFE_INTERNAL bool tfe__kcpu_amd(void) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_is("amd");
#else
  return false;
#endif
}
TFE_INTERNAL bool tfe__kon_amd(int setting) { return setting > 0 || (setting < 0 && tfe__kcpu_amd()); }
/* copy_next_spread resolved: -1 is 2 on AMD, 0 elsewhere (kernel/copy_tpl.h, k_spread_next_). */
TFE_INTERNAL int tfe__knext_spread(void) {
  const int m = tfe__st.tune.copy_next_spread;
  return m >= 0 ? m : tfe__kcpu_amd() ? 2 : 0;
}
/* A software prefetch of a line a transposing copy reads soon: into L2 only (prefetcht1) where
 * kernel_prefetch_l2 says so, else into L1 (prefetcht0). A Zen 4 block of 64 byte rows ran
 * 1.1-1.6x faster so: the L1's few miss buffers stay with the loads (docs/bench-kernel.md). */
#define tfe__kpf(p) \
  (tfe__kon_amd(tfe__st.tune.kernel_prefetch_l2) ? __builtin_prefetch((p), 0, 2) : __builtin_prefetch((p), 0, 3))
/* Whether this CPU runs transposes fastest with the op fused into the register transpose and
 * unbuffered copy tiles: measured so only on AMD parts with AVX-512; elsewhere the buffered
 * tiles won (docs/bench-kernel.md, round 6). */
TFE_INTERNAL bool tfe__kcpu_fuses(void) {
#if defined(__AVX512F__)
  return tfe__kcpu_amd();
#else
  return false;
#endif
}
/* copy_buffered_tiles: copy transpose tiles of streamed outputs through a tile buffer: 2
 * always, 1 only when the destination columns are not 64-byte aligned, 3 also when aligned
 * columns fall in few lines of a page (k_cols_spread_), 4 as 3 for table tiles and as 1 for
 * tiles with a one-dim G0, 0 never; -1 (default) picks 3 on AMD without AVX-512 (the Zen 3 it
 * was tuned on) and 4 elsewhere (on two Intel Xeons the aligned 2048^2 and 256^3 f64
 * transposes ran at 0.87-0.94 of their buffered time, while the reversal of 2s, a table tile,
 * ran 1.06-1.33x slower unbuffered: docs/bench-kernel.md, session 27; AMD with AVX-512 had 1
 * until session 40, when a Zen 4 ran aligned c128 and f32 table tiles buffered in 0.30-0.85 of
 * the time and no case slower). See k_copy_wants_buf_. */
/* kernel_table_tile_bytes, -1: 2048 for 8-byte kinds on AMD with AVX-512 (a Zen 4 ran the
 * reversals of 2s and 3s in 0.75-0.8 of their time with 512, and 14 of 16 f64 table copies
 * of two sweeps faster; 4- and 16-byte kinds moved both ways, 0.77 to 1.29), 512 elsewhere. */
TFE_INTERNAL int64_t tfe__ktable_bytes(int64_t es) {
  const int64_t b = tfe__st.tune.kernel_table_tile_bytes;
  return b > 0 ? b : tfe__kcpu_fuses() && es == 8 ? 2048 : 512;
}
/* copy_long_row_bytes, -1: 8192 in AVX-512 builds (measured on a Zen 4 and an Intel Xeon), 0
 * (never) in others (not measured there) (k_copy_long_rows_). */
TFE_INTERNAL int64_t tfe__klong_row_bytes(void) {
  const int64_t b = tfe__st.tune.copy_long_row_bytes;
#if defined(__AVX512F__)
  return b >= 0 ? b : 8192;
#else
  return b >= 0 ? b : 0;
#endif
}
/* Why k_copy_skew_ leaves an n0 x n1 tile of es-byte elements (G1 of g1len) to the tile buffer:
 * 64 where its rims, past whole blocks of a line a side (run by scalar loops there), exceed
 * copy_skew_rim_pct of the tile; 69 where its source rows hold fewer than
 * copy_skew_min_row_bytes (G1's length, not a last tile's); 0 where it takes the skewed form.
 * (The values are the path counters.) */
TFE_INTERNAL int tfe__kskew_declines(int64_t n0, int64_t n1, int64_t g1len, int64_t es) {
  const int64_t n = 64 / es, m0 = n0 - n0 % n, m1 = n1 - n1 % n, rim = tfe__st.tune.copy_skew_rim_pct;
  if (rim < 100 && (n0 * n1 - m0 * m1) * 100 > rim * n0 * n1) return 64;
  if (g1len * es < tfe__st.tune.copy_skew_min_row_bytes) return 69;
  return 0;
}
/* The least destination run (bytes) before a dim shared by both runs that a 1- or 2-byte table
 * plan leaves in G0 when G1 takes the shared dim (copy_shared_run_dim 2): copy_shared_g0_bytes
 * where the source's run before that dim is 8-15 bytes, 128 otherwise. There the old plan's G0
 * of every row of the run and the shared dim read 8-15-byte records (u8 [9,2047,45,201] perm
 * [2,1,0,3]: 990 x 9 tiles, 12x the streamed copy) where a G0 of the destination's run alone
 * makes a plain byte transpose (45 x 252: 0.45 of the time); runs of 2-7 bytes and of 16 measured
 * both ways (docs/bench-kernel.md, session 33). */
TFE_INTERNAL int64_t tfe__kshared_g0_bytes(int64_t run_bytes) {
  return run_bytes >= 8 && run_bytes < 16 ? tfe__st.tune.copy_shared_g0_bytes : 128;
}
TFE_INTERNAL int tfe__kcopy_buf_mode(void) {
  int m = tfe__st.tune.copy_buffered_tiles;
  return m >= 0 ? m : tfe__kcpu_amd() && !tfe__kcpu_fuses() ? 3 : 4;
}
/* elementwise_fuse: f64 map/zip transpose tiles with a built-in op run the op on the
 * registers of the 8x8 transpose and send the result straight to the destination, with no
 * tile buffer: 1 for zips, 2 for maps and zips, 0 never (the transposed input goes through a
 * tile buffer); -1 (default): 2 where tfe__kcpu_fuses, else 0. Fused tiles won where the
 * CPU fuses (zips; maps once their tiles are narrow: elementwise_fused_map_tile_bytes),
 * buffered ones elsewhere (docs/bench-kernel.md). */
TFE_INTERNAL int tfe__kfuse_mode(void) {
  int m = tfe__st.tune.elementwise_fuse;
  return m >= 0 ? m : tfe__kcpu_fuses() ? 2 : 0;
}

/* G1 of a copy's transpose tiles (elements along the source) for a target of t elements of
 * es bytes. With copy_narrow_source_tiles, 1-, 2- and 4-byte kinds take as many elements as
 * f64 (t * es / 8, at least one register block's columns) rather than as many bytes: their
 * register blocks read 64 / es rows at once (32 rows of u16 against 8 of f64), so a strip of
 * rows of the same bytes held 4-8x the lines in L1, and the tile 4-8x the bytes
 * (docs/bench-kernel.md, session 13). */
TFE_INTERNAL int64_t tfe__kcopy_g1(int64_t t, int64_t es) {
  if (!tfe__st.tune.copy_narrow_source_tiles || es >= 8) return t;
  int64_t g = t * es / 8, cb = es == 4 ? 8 : 64 / es;
  return g < cb ? cb : g;
}
/* Threads of a kernel over numel elements: one below kernel_parallel_min. */
TFE_INTERNAL int tfe__kthreads(int64_t numel) {
  int nt = tfe_get_num_threads();
  return numel >= tfe__st.tune.kernel_parallel_min && nt > 1 ? nt : 1;
}
#endif
