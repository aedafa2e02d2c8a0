/* tenferro/kernel/plan.h — the loop planner of the kernel room, kind-independent: it orders,
 * fuses and tiles the dimensions of up to three operands (one written, the others read),
 * and runs the tiles on threads.
 *
 * Operands share one index space (dims); each has its own strides. Op 0 is the written one
 * (or, for reductions, the accumulator), ops 1.. are read. The plan:
 *   1. drops size-1 dims, flips dims where the key operand's stride is negative,
 *   2. sorts dims by the key operand's |stride| and fuses dims contiguous in every operand,
 *   3. forms group G0 of the innermost dims (contiguous in the key operand) up to a block of
 *      about `t0` elements, and, when an input reads with large strides along G0 (a
 *      transpose), a group G1 of the dims that input reads contiguously, up to `t1`;
 *      the last dim of a group may be cut into blocks (its tail tile is clipped),
 *   4. the remaining dims and the block counts form the tile odometer, threads split it.
 * A tile is G0 x G1: for j < n1, for i < n0 the element at off(G0, i) + off(G1, j). Offsets
 * along a group are an arithmetic step (single dim) or a table (several small dims).
 * docs/kernel.md ("How it runs") walks through the cases with examples. Internal only: the
 * types and functions are in the bodies phase (nothing here for declarations-only units). */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_KERNEL_PLAN_H
#define TENFERRO_KERNEL_PLAN_H
#include <tenferro/config.h>

#endif
#elif !defined(TENFERRO_KERNEL_PLAN_BODY) /* bodies */
#define TENFERRO_KERNEL_PLAN_BODY
#include <string.h>

#define TFE__KOPS 3
#define TFE__KTAB 1024    /* entries a group table holds (the G0 of 1- and 2-byte transposes) */
#define TFE__KTAB_STD 256 /* entries of every other group table (tfe__kplan.tab0) */
#define TFE__KGD 16       /* dims in a group */

typedef struct tfe__kgroup {
  int nd;                       /* dims in the group, inner first; 0: the group is empty */
  int64_t len;                  /* elements of a full block */
  int64_t inner;                /* elements per step of the last (outermost) dim */
  int64_t last_n, last_b;       /* that dim's size and block (block < size: cut) */
  bool arith[TFE__KOPS];
  int64_t step[TFE__KOPS];
  int64_t tab[TFE__KOPS][TFE__KTAB];
  /* distinct entries per op: entries that differ only along dims where op o has stride 0
   * share an id (cid, in [0, ncid)); a gather tile gathers each distinct column of an
   * input once per tile. ncid = 0: not computed (group longer than a table). */
  int64_t ncid[TFE__KOPS];
  int16_t cid[TFE__KOPS][TFE__KTAB_STD];
} tfe__kgroup;

typedef struct tfe__kplan {
  int nops, key;
  int64_t numel;
  int64_t base[TFE__KOPS];               /* element offset of the origin after flips */
  int rank;                              /* sorted, fused dims */
  int64_t dims[TFE_MAX_RANK];
  int64_t str[TFE__KOPS][TFE_MAX_RANK];
  tfe__kgroup g[2];
  int no;                                /* tile odometer: counts and per-op steps */
  int64_t ocount[TFE_MAX_RANK + 2];
  int64_t ostep[TFE__KOPS][TFE_MAX_RANK + 2];
  int oclip[TFE_MAX_RANK + 2];           /* 1: cut dim of G0, 2: of G1, 0: plain */
  int64_t ntiles, nseq;                  /* tiles; leading tiles that share op 0 (reductions) */
  bool gather;                           /* G1 is a column group of a gather tile, not a transpose */
  bool tiny;                             /* a transpose whose destination run starts with a tiny dim */
  bool along_src;                        /* tiles step along the transposed input (table tiles) */
  int64_t es;                            /* element size (set by tfe__kplan_make) */
  bool copy;                             /* a copy's plan (set by tfe__kplan_make) */
  bool uplan;                            /* a copy of units (units.h; set by tfe__kplan_make) */
  int nchain;                            /* innermost odometer dims that continue the input's rows */
  bool runtile;                          /* a transpose of long common runs (copy_run_tile_bytes) */
  bool shared;                           /* G1 took a dim shared by both runs (copy_shared_run_dim) */
  int64_t unit;                          /* elements per unit of a unit plan (units.h), else 0 */
  bool urev;                             /* its units read backwards (copy_reverse_runs) */
  int64_t tab0;                          /* table entries G0 may take (tfe__kplan_build) */
  int64_t tab1;                          /* and G1 (copy_tiny_g0_wide_g1) */
  int64_t pf_run;                        /* a copy's gather tile: its source as pf_nrun runs of */
  int pf_nrun;                           /* pf_run elements at pf_off (tfe__kplan_footprint; 0: none) */
  bool pf_rev;                           /* a dim of that footprint read backwards */
  int64_t pf_off[TFE__KTAB_STD];
} tfe__kplan;

typedef struct tfe__ktile {
  int64_t off[TFE__KOPS];
  int64_t n0, n1;
  int64_t i0;              /* the tile's index along the odometer's first dim (0 without one) */
  int64_t nx[TFE__KOPS];   /* each op's offset from this tile to the thread's next (0: none) */
  int tid;
} tfe__ktile;

/* Group build modes: gather tiles forced; table tiles (see tfe__kplan_make). */
enum { TFE__KM_GATHER = 1, TFE__KM_TABLE = 2 };
enum { TFE__KCOPY_UNITS = 2 }; /* tfe__kplan_make's `copy` for a copy of units (1: any other copy) */

typedef void (*tfe__ktile_fn)(void *ctx, const tfe__kplan *p, const tfe__ktile *t);

/* Offset of entry e of group gi for op o. */
#define TFE__KOFF(p, gi, o, e) \
  ((p)->g[gi].arith[o] ? (e) * (p)->g[gi].step[o] : (p)->g[gi].tab[o][e])

/* Path counters for tests (tfe__st.kernel_stat, counted only while tfe__st.kernel_stat_on is
 * set). By the calling thread: [0] map/zip plans with gather tiles, [1] of them with column
 * caches, [2] copy plans with gather tiles, [3] copy plans whose table blocks copy runs;
 * by the tile's thread (atomically): [4] map/zip transpose tiles with the op fused into the
 * 8x8 register transpose, [5] plain map/zip blocks streamed through an L1 buffer, [6] plain
 * f64 blocks of a fusable op computed and streamed in one pass (tfe__kfu_row); by the
 * calling thread again: [7] copy plans with buffered transpose tiles (k_copy_buffered_), [8]
 * plans with table tiles (tfe__kplan_make); by the tile's thread: [9] copy tiles that ran
 * register blocks of a 4- or 16-byte kind; by the calling thread: [10] plans that tile short
 * common runs as a transpose (copy_run_split_bytes); by the tile's thread: [11] copy transpose
 * tiles whose G1 reads a reversed source dim through the tile buffer or as runs
 * (k_copy_buffered_, k_copy_runs_), [12] copy tiles of 1- or 2-byte kinds that ran 16-byte
 * register blocks on rims or on sides under a 64-byte block (k_copy_small12_), [13] strided
 * transposes of 4-, 8- or 16-byte kinds (k_copy_st_) and buffered tiles of any kind
 * (k_copy_buffered_) whose rims ran as shifted register blocks;
 * by the calling thread: [14] table-tile plans whose G1 stopped at the end of the input's run
 * (kernel_table_input_runs); by the tile's thread: [15] copy tiles written as skewed lines
 * (k_copy_skew_); [16] transpose tiles of 1- or 2-byte kinds whose input run spans several of
 * G1's dims, run as 16-byte register blocks addressed through G1's table (k_copy_runs_,
 * copy_table_runs);
 * by the calling thread: [17] copy plans whose tile odometer starts along the input's short
 * pieces (copy_source_chain_bytes); by the tile's thread: [18] run copies of table blocks by
 * vector loads and stores (k_copy_col_, copy_short_runs); [19] the same for runs of 1- and 2-byte
 * kinds under 8 elements (a gather tile's tiny common run); by the calling thread: [20] copy
 * gather plans left without columns (copy_gather_run_tiles), [21] copies led by a tiny dim
 * kept as transposes for their source runs (copy_tiny_source_runs); [22], [23] not used by the
 * kernel; by the calling thread: [24] transpose plans whose G1 took a dim shared by both
 * operands' runs (copy_shared_run_dim); by the tile's thread: [25] 4-byte tiles of 8-15 rows
 * in 8x8 register blocks (k_copy_blocks_, copy_half_blocks); by the calling thread: [26] long
 * common runs tiled as a transpose of runs (copy_run_tile_bytes); by the tile's thread: [27]
 * strided transposes whose column rims ran scalar loops (k_copy_st_, copy_rim_scalar_cols); [28]
 * copy tiles of 4-7 rows that ran 4x4 register blocks (k_copy_blocks_, copy_quarter_blocks);
 * by the calling thread: [29] copies of short common runs planned as units (units.h,
 * copy_unit_run_bytes), [30] of them streamed through tile buffers (copy_unit_stream); [31]
 * transpose plan builds whose G0 table holds more than TFE__KTAB_STD entries (copy_wide_tables;
 * a build that a rebuild replaces counts too), [32]
 * copy plans that walk reversed input dims of G1 the other way (copy_flip_source_dims), [33]
 * table-tile plans that may cut G0 for an input run continued after G0 (copy_table_run_cut), [34]
 * of them those whose run goes on through G0's candidates after the cut dim (its value 2), [35]
 * transpose plans whose G1 kept the input's run alone (copy_g1_run_bytes), [36] copy plans whose
 * tiny G0 let G1 grow (copy_tiny_g0_wide_g1), [37] flips of G1's first dim (copy_flip_source_dims
 * 2; [32] counts the others), [38] buffered 1- and 2-byte tiles narrower than a register
 * block (copy_buf_narrow_bytes), [39] G1s kept to an input run over several dims
 * (copy_g1_run_dims), [40] 1- and 2-byte table plans whose G1 took a dim shared by both runs
 * (copy_shared_run_dim 2, copy_shared_g0_bytes), [41] table copies of streamed outputs whose runs go out as streamed
 * whole lines (copy_stream_line_runs), [42] 1- and 2-byte tiles of fewer rows than a register
 * block interleaved by 16-byte transposes (copy_interleave_rows), [43] 1- and 2-byte tiles of
 * fewer columns than a register block (short records) spread by 16-byte transposes
 * (copy_deinterleave_rows), [44] 1-, 2- and 4-byte tiles written as skewed lines (k_copy_skew12_,
 * copy_skew_lines 2 and 3), [45] transposes made again as tiles of long source rows
 * (k_copy_long_rows_, copy_long_row_bytes), [46] rows of 8-byte blocks run segment by segment
 * (k_copy_segs_, copy_block_segments); by the calling thread: [47] plans whose shared dim
 * (copy_shared_run_dim) kept them from the table-tile rebuild (copy_shared_keep); by the tile's
 * thread: [48] gather tiles of copies that asked for the next tile's source (copy_next_prefetch 2),
 * [49] gather tiles of 1- and 2-byte kinds moved as register transposes (k_copy_gather12_,
 * copy_gather_blocks); by the calling thread: [50] copies of 1- and 2-byte kinds in units of 4
 * bytes run as copies of i32 (k_copy_unit_kind_, copy_unit_kinds); by the tile's thread: [51]
 * 1- and 2-byte transpose tiles of 2-15 rows whose columns are apart (k_copy_interleave_,
 * copy_short_rows), [52] one-column shares of a buffered tile's run of columns whose edge lines
 * went out streamed as the run's (k_copy_buf_out_, copy_run_piece_edges), [53] buffered tiles
 * streamed out along chains of columns (k_copy_chains_out_, copy_chain_columns); by the calling
 * thread: [54] 1-byte copies' gather tiles whose G0 stopped at the source's run
 * (copy_gather_source_run); by the tile's thread: [55] 16-byte register blocks of 1- and
 * 2-byte kinds run two or four side by side (k_copy_small12_, copy_small_wide), [56] reversed
 * common runs copied, or map/zip inputs gathered, by the vector kernel (tfe__kcopy_rev,
 * copy_reverse_runs); by the calling
 * thread: [57] odometer dims of copies of common runs walked the other way (copy_flip_source_dims
 * 3), [58] unit plans of runs the source reads backwards (tfe__krev_units, copy_reverse_runs),
 * [59] transposes of whole short 2- and 4-byte columns kept buffered (copy_skew_short_cols),
 * [60] transpose G1s widened within copy_tile_slack, [61] 16-byte copies led by a destination
 * run of 4-7 planned as transposes (copy_quarter_blocks 2), [62] 1- and 2-byte transposes of
 * 16-63 bytes of rows buffered (copy_buf_short_rows); by the tile's thread: [63] such tiles
 * (buffered or not) whose blocks asked for a later tile's rows (copy_short_row_prefetch),
 * [64] 8- and 16-byte tiles left to the tile buffer for their rims (copy_skew_rim_pct), [65]
 * strided transpose tiles of 4-7 (f32: 4-15) rows run as 4x4 register blocks (copy_quarter_st);
 * by the calling thread: [66] 2-byte transposes of long source runs kept buffered, not skewed
 * (copy_skew_buf_src_bytes), [67] copies between r-element records and r streams run by
 * two-vector permutes (records.h, copy_narrow_records); by the tile's thread: [68] columns of
 * short-run transpose tiles streamed through an L1 buffer (copy_col_stream_bytes), [69] 8- and
 * 16-byte tiles left to the tile buffer for their short source rows (copy_skew_min_row_bytes); by
 * the calling thread: [70] run tiles whose G0 took more than 4 runs (copy_run_tile_col_bytes), [71]
 * aligned 1- and 2-byte transposes buffered for their rims (copy_buf_rim_pct); by the calling thread:
 * [72] 2-D skewed-line transposes of 8- and 16-byte kinds made again with larger tiles
 * (copy_skew_tile_bytes), [73] batches of small dense 1- and 2-byte transposes left unbuffered
 * (copy_buf_short_cols), [74] copies of short common runs whose G0 table took more than
 * TFE__KTAB_STD entries (copy_run_table_entries); by the tile's thread: [75] table blocks of such
 * runs of 4-64 bytes copied by the loop of overlapping pairs (copy_small_run_bytes), [76] 1- and
 * 2-byte transpose tiles (or runs of their columns) of source rows of 9-63 bytes moved in wide
 * register blocks of 64 / es rows (k_copy_wide12_, copy_wide_rows), [77] buffered tiles at the
 * end of a chain of tiles along the source's rows that asked for the next tile's rows
 * (k_chain_next_, copy_chain_next_prefetch); by the calling thread: [78] lone G1 dims that the
 * input reads reversed, not its run, walked the other way (copy_flip_source_dims 4); by the
 * tile's thread: [79] columns of records read backwards copied a register of records at a
 * time (k_copy_rev_recs_, copy_rev_records); by the calling thread: [80] copies of blocks of
 * such records moved block by block without tiles (k_copy_rev_blocks_, copy_rev_records); [81] run
 * tiles (copy_run_tile_bytes) whose G1 took fewer runs for their length (copy_run_tile_max_bytes); [82]
 * copies of 4-byte units that the source reads backwards run as i32 and turned round in one
 * pass (k_copy_unit_kind_, copy_unit_kinds 2); [83] unit plans whose G0 table holds more than
 * TFE__KTAB_STD units (copy_wide_tables 2), [84] unit plans of copies without a transpose
 * whose G0 read the runs through a table (copy_unit_flips), [85] copies of short runs that share
 * dims run as tiles of both runs (kernel/bothruns.h, copy_both_run_tile_bytes), [86] such copies
 * of 4-, 8- and 16-byte kinds (copy_both_run_wide); by the tile's thread: [87] buffered
 * transpose tiles that asked for the next tile's rows a share before each block or row of
 * blocks (copy_next_spread), [88] unbuffered ones that did (k_copy_st_, k_copy_blocks_); by the
 * calling thread: [89] tiles of both runs over a dim split in two (copy_both_run_split_bytes), [90]
 * such tiles whose element is a run common to both sides (copy_both_run_unit_bytes), [91] such
 * tiles of 1- and 2-byte kinds whose rows move element by element (copy_both_run_tiny_bytes), [92]
 * 1- and 2-byte gathers of register blocks run so (copy_both_run_gathers 2); [93] transpose plans
 * whose G1 took a wide table for an input run over its first two dims (copy_run_g1_table); [94]
 * plans of tiles of both runs that walked a source run read backwards the other way
 * (copy_both_run_flips; counted where tfe__kbr_make flipped dims, run or not); [95] gather plans
 * whose footprint (the next tile's runs to ask for) has a dim the source reads backwards
 * (copy_footprint_reversed). */
TFE_INTERNAL void tfe__kstat_add(int k) {
  if (tfe__st.kernel_stat_on) __atomic_fetch_add(&tfe__st.kernel_stat[k], 1, __ATOMIC_RELAXED);
}
/* The same from the calling thread (no atomics). */
#define TFE__KSTAT(k) do { if (tfe__st.kernel_stat_on) tfe__st.kernel_stat[k]++; } while (0)

TFE_INTERNAL int64_t tfe__kabs(int64_t x) { return x < 0 ? -x : x; }

/* Whether input op j reads G0's first dim with a large stride while some other dim is
 * contiguous for it: then a 2-D tile keeps its cache lines in use. */
TFE_INTERNAL bool tfe__kmisaligned(const tfe__kplan *p, int j) {
  int64_t s0 = tfe__kabs(p->str[j][0]);
  if (s0 <= 1) return false; /* (stride 2 or 3, as in an interleaved source: tiles read it once) */
  for (int d = 1; d < p->rank; d++) {
    int64_t s = tfe__kabs(p->str[j][d]);
    if (s != 0 && s < s0) return true;
  }
  return false;
}

/* Move dims `sel` (in this order) to positions [at, at + n) keeping the others' order. */
TFE_INTERNAL void tfe__kmove(tfe__kplan *p, int at, int n, const int *sel) {
  int64_t dims[TFE_MAX_RANK], str[TFE__KOPS][TFE_MAX_RANK];
  bool used[TFE_MAX_RANK] = {false};
  int k = 0;
  for (int i = 0; i < at; i++) { used[i] = true; }
  for (int i = 0; i < at; i++, k++) {
    dims[k] = p->dims[i];
    for (int o = 0; o < p->nops; o++) str[o][k] = p->str[o][i];
  }
  for (int m = 0; m < n; m++, k++) {
    used[sel[m]] = true;
    dims[k] = p->dims[sel[m]];
    for (int o = 0; o < p->nops; o++) str[o][k] = p->str[o][sel[m]];
  }
  for (int i = 0; i < p->rank; i++) if (!used[i]) {
    dims[k] = p->dims[i];
    for (int o = 0; o < p->nops; o++) str[o][k] = p->str[o][i];
    k++;
  }
  memcpy(p->dims, dims, sizeof(int64_t) * (size_t)p->rank);
  for (int o = 0; o < p->nops; o++) memcpy(p->str[o], str[o], sizeof(int64_t) * (size_t)p->rank);
}

/* The distinct-entry ids of a group (see tfe__kgroup): a mixed-radix index over the dims
 * where the op moves. */
TFE_INTERNAL void tfe__kgroup_ids(const tfe__kplan *p, tfe__kgroup *g, int at) {
  for (int o = 0; o < p->nops; o++) {
    g->ncid[o] = 0;
    if (g->len > TFE__KTAB_STD) continue;
    int64_t rad[TFE__KGD], m = 1, idx[TFE__KGD] = {0}, id = 0;
    for (int k = 0; k < g->nd; k++) {
      int64_t n = k == g->nd - 1 ? g->last_b : p->dims[at + k];
      rad[k] = p->str[o][at + k] != 0 ? m : 0;
      if (p->str[o][at + k] != 0) m *= n;
    }
    g->ncid[o] = m;
    for (int64_t e = 0; e < g->len; e++) {
      g->cid[o][e] = (int16_t)id;
      for (int k = 0; k < g->nd; k++) {
        int64_t n = k == g->nd - 1 ? g->last_b : p->dims[at + k];
        if (++idx[k] < n) { id += rad[k]; break; }
        id -= (n - 1) * rad[k];
        idx[k] = 0;
      }
    }
  }
}

/* Group of dims [at, at + nd): fill the block shape, steps or tables. The last dim is cut
 * to `last_b` (= its size when whole). */
TFE_INTERNAL void tfe__kgroup_make(tfe__kplan *p, tfe__kgroup *g, int at, int nd, int64_t last_b) {
  g->nd = nd;
  g->inner = 1;
  for (int d = at; d < at + nd - 1; d++) g->inner *= p->dims[d];
  g->last_n = p->dims[at + nd - 1];
  g->last_b = last_b;
  g->len = g->inner * last_b;
  for (int o = 0; o < p->nops; o++) {
    g->arith[o] = nd == 1;
    g->step[o] = p->str[o][at];
    if (nd == 1) continue;
    int64_t idx[TFE__KGD] = {0}, off = 0;
    for (int64_t e = 0; e < g->len; e++) {
      g->tab[o][e] = off;
      for (int k = 0; k < nd; k++) {
        int64_t n = k == nd - 1 ? last_b : p->dims[at + k];
        if (++idx[k] < n) { off += p->str[o][at + k]; break; }
        off -= (n - 1) * p->str[o][at + k];
        idx[k] = 0;
      }
    }
    bool ar = true; /* an arithmetic table is a step (faster inner loops) */
    for (int64_t e = 1; e < g->len && ar; e++) ar = g->tab[o][e] == e * g->tab[o][1];
    if (ar) { g->arith[o] = true; g->step[o] = g->len > 1 ? g->tab[o][1] : 0; }
  }
  tfe__kgroup_ids(p, g, at);
}

/* Elements of a group of dims [0, nd) whose last one is cut to `cut`. */
TFE_INTERNAL int64_t tfe__kgroup_len(const tfe__kplan *p, int nd, int64_t cut) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) n *= d == nd - 1 ? cut : p->dims[d];
  return n;
}

/* Choose a group starting at `at` among dims [at, rank): whole dims while the block stays
 * within `target` (and the table within tab0 entries for G0, else TFE__KTAB_STD), then a cut of the next dim. Returns the
 * dims used; *cut gets the block of the last one. */
TFE_INTERNAL int tfe__kgroup_pick(const tfe__kplan *p, int at, int end, int64_t target, int64_t *cut) {
  const int64_t tab = at == 0 ? p->tab0 : p->tab1;
  int nd = 0;
  int64_t prod = 1;
  while (at + nd < end && nd < TFE__KGD) {
    int64_t n = p->dims[at + nd];
    if (prod * n <= target && (nd == 0 || prod * n <= tab)) {
      prod *= n; nd++; *cut = n;
      continue;
    }
    int64_t lim = nd == 0 ? target : (target < tab ? target : tab);
    int64_t b = lim / prod;
    if (b >= 2 || nd == 0) { *cut = b < 1 ? 1 : b; nd++; }
    break;
  }
  return nd;
}

/* The run of input o that starts at its unit-stride dim `at` and goes on through the dims from
 * `from` (dims of 1 and `at` skipped) whose |stride| continues it: its element count. */
TFE_INTERNAL int64_t tfe__krun_chain(const tfe__kplan *p, int o, int at, int from) {
  int64_t run = p->dims[at];
  for (bool more = true; more;) {
    more = false;
    for (int d = from; d < p->rank && !more; d++)
      if (d != at && p->dims[d] > 1 && tfe__kabs(p->str[o][d]) == run * tfe__kabs(p->str[o][at])) { run *= p->dims[d]; more = true; }
  }
  return run;
}

/* How many of the n dims from `at` (n >= 1) form one run of operand o in that order: each
 * dim's |stride| the previous one's times its extent. *elems (if given): their element count. */
TFE_INTERNAL int tfe__krun_dims(const tfe__kplan *p, int o, int at, int n, int64_t *elems) {
  int64_t run = tfe__kabs(p->str[o][at]), m = p->dims[at];
  int k = 1;
  for (; k < n && tfe__kabs(p->str[o][at + k]) == run * p->dims[at + k - 1]; k++) {
    run *= p->dims[at + k - 1];
    m *= p->dims[at + k];
  }
  if (elems) *elems = m;
  return k;
}

/* Whether a transpose's G1, about to be picked from dims [at, at + n) (sorted by input o's
 * |stride|), may hold a table of TFE__KTAB entries (copy_run_g1_table; sets p->tab1): its first
 * two dims make one run of input o that the plan could not fuse, the second read reversed or
 * the two apart in the output. With the standard table G1 took the first dim alone, and every
 * tile read a short piece of each input row whose lines the next tile read again (u8
 * [152,201r,2176] perm [2,0,1]: 201 tiles of 2176 x 152, 3.9x the streamed copy; G1 152 x 6,
 * 1.8x; kernel.md step 3e). */
TFE_INTERNAL bool tfe__kg1_run_table(tfe__kplan *p, int o, int at, int n, bool table) {
  const int es = tfe__st.tune.copy_run_g1_table;
  if (!p->copy || p->gather || table || p->es > es || n < 2 || tfe__kabs(p->str[o][at]) != 1 ||
      tfe__krun_dims(p, o, at, 2, NULL) < 2)
    return false;
  p->tab1 = TFE__KTAB;
  return true;
}

/* A transpose's G1 (dims [at, at + nd), its last cut to *cut) widened within copy_tile_slack
 * percent over its target: the cut dim whole, so that no thin tile of the rest follows (c128
 * [78,132,864] perm [1,0,2]: 78 as 64 + 14, 0.80 of the time whole), and a group of whole dims
 * takes 2 or more of the next dim where that continues input o's run (f64 [67,34,263,27] perm
 * [2,1,3,0]: G1 the source run of 67 alone, 536 bytes, where 2 x 67 is 5 % over 128: 0.81).
 * Tables stay within their entries. G0 (o < 0: its cut dim whole only) only where G1 is whole
 * dims, a batch of transposes whose tile is then a whole slice (c128 [9,150,7000] perm [1,0,2]:
 * 0.80 of the time, u16 [30,1100,1500] 0.93); of a long 2-D transpose, whole destination
 * columns of 270 f64 in place of 256 + 14 ran 1.08x slower. Returns the dims used. */
TFE_INTERNAL int tfe__kgroup_widen(const tfe__kplan *p, int at, int nd, int64_t target, int64_t *cut, int o) {
  if (nd == 0) return 0;
  const int64_t tab = at == 0 ? p->tab0 : p->tab1, lim = target + target * tfe__st.tune.copy_tile_slack / 100;
  int64_t prod = 1;
  for (int k = 0; k < nd - 1; k++) prod *= p->dims[at + k];
  const int64_t n = p->dims[at + nd - 1];
  if (*cut < n) {
    if (prod * n <= lim && (nd == 1 || prod * n <= tab)) { *cut = n; TFE__KSTAT(60); }
    return nd;
  }
  if (o < 0 || at + nd >= p->rank || nd >= TFE__KGD || tfe__krun_dims(p, o, at, nd, NULL) < nd) return nd;
  const int64_t m = p->dims[at + nd], w = prod * n;
  const int64_t b = w * m <= lim ? m : lim / w;
  if (b < 2 || w * b > tab || tfe__kabs(p->str[o][at + nd]) != w * tfe__kabs(p->str[o][at])) return nd;
  TFE__KSTAT(60);
  *cut = b;
  return nd + 1;
}

/* Whole dims from `at` until the block reaches `target` (or the table's limit, as above):
 * table tiles of 3s take 81 rather than a cut 54 for a target of 64. A next dim too large
 * for the table is cut so that the block reaches the target (a 21 x 8138 pair: 21 x 7, not
 * 21 alone, whose 168-byte destination columns were slow). */
TFE_INTERNAL int tfe__kgroup_pick_up(const tfe__kplan *p, int at, int end, int64_t target, int64_t *cut, bool may_cut) {
  const int64_t tab = at == 0 ? p->tab0 : TFE__KTAB_STD;
  int nd = 0;
  int64_t prod = 1;
  if (may_cut && at < end && p->dims[at] > tab && target >= 8) { /* (a 2460-long first dim: */
    *cut = target < p->dims[at] ? target : p->dims[at];               /* tiles of 2.4 MB; never */
    return 1;                                 /* more than the dim: 1-byte kinds' target of 512) */
  }
  while (at + nd < end && nd < TFE__KGD && prod < target && (nd == 0 || prod * p->dims[at + nd] <= tab)) {
    prod *= p->dims[at + nd];
    *cut = p->dims[at + nd];
    nd++;
  }
  if (may_cut && nd > 0 && at + nd < end && nd < TFE__KGD && prod < target) {
    int64_t b = (target + prod - 1) / prod, n = p->dims[at + nd];
    if (b > tab / prod) b = tab / prod;
    /* a wide table (tab0 above the standard) cuts the dim into equal blocks: 22 as 17 + 5 left
     * every other tile a fifth as tall (u16 [35,22,4,30,...] 1.2x slower than blocks of 8) */
    if (at == 0 && tab > TFE__KTAB_STD && b >= 2 && b < n) b = (n + (n + b - 1) / b - 1) / ((n + b - 1) / b);
    if (b >= 2) { *cut = b; nd++; }
  }
  return nd;
}

/* Elements of input o contiguous within one plain block of target t0 (dims from 0, as
 * tfe__kgroup_pick takes them): the longest chunk of o a block reads in one piece. */
TFE_INTERNAL int64_t tfe__kblock_run(const tfe__kplan *p, int o, int64_t t0) {
  int64_t cut = 1, r = 1;
  int nd = tfe__kgroup_pick(p, 0, p->rank, t0, &cut);
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < nd; i++)
      if (tfe__kabs(p->str[o][i]) == r) {
        if (i == nd - 1) return r * cut; /* the cut dim ends the chunk */
        r *= p->dims[i];
        more = true;
        break;
      }
  }
  return r;
}

/* Elements of input o that one tile reads in one contiguous piece: the tile's dims (G0's
 * [0, nd0), G1's [nd0, nd0 + nd1), each group's last dim cut to its block) chained by o's
 * strides from 1. */
TFE_INTERNAL int64_t tfe__ktile_chunk(const tfe__kplan *p, int o, int nd0, int nd1, int64_t cut0, int64_t cut1) {
  int64_t r = 1;
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < nd0 + nd1; i++)
      if (p->dims[i] > 1 && tfe__kabs(p->str[o][i]) == r) {
        int64_t n = i == nd0 - 1 ? cut0 : i == nd0 + nd1 - 1 ? cut1 : p->dims[i];
        r *= n;
        more = n == p->dims[i]; /* (a cut dim ends the chunk) */
        break;
      }
  }
  return r;
}

/* A plan q made again (tfe__alloc'd) replaces p where `ok` (path counter `stat` counted, if 0
 * or more); q is freed either way. Returns ok. */
TFE_INTERNAL bool tfe__kreplan_keep(tfe__kplan *p, tfe__kplan *q, bool ok, int stat) {
  if (ok) {
    memcpy(p, q, sizeof *q);
    if (stat >= 0) TFE__KSTAT(stat);
  }
  tfe__free(q);
  return ok;
}

/* G0's target of a run tile (copy_run_tile_bytes) over runs of `run` elements: 4 runs, within
 * the standard table; runs shorter than a quarter of copy_run_tile_col_bytes as many whole
 * runs, adjacent in the destination, as fill that many bytes (*wide: its table up to TFE__KTAB
 * entries). Columns of 2 runs (f32 [103,387,962] perm [0,2,1]: 824 bytes, the table's 256
 * entries) went out as 128 short streams a tile, far apart. */
TFE_INTERNAL int64_t tfe__krun_tile_g0(int64_t run, int64_t es, bool *wide) {
  const int64_t cb = tfe__st.tune.copy_run_tile_col_bytes, k = cb > 0 ? cb / (run * es) : 0;
  *wide = k > 4;
  return run * (k > 4 ? k : 4);
}

/* G1's target of a run tile over runs of `bytes`: copy_run_tile_cols runs, fewer for long runs
 * (copy_run_tile_max_bytes, at least 8): G1 reads its runs one after another in the source, so a
 * tile of 8 runs of 64 KiB reads as well as one of 128, and 2.4 MB copies make tiles enough for
 * 16 threads. Fewer than 8 (2 runs of 16 KiB a tile) broke the source's order, 1.26x slower. */
TFE_INTERNAL int64_t tfe__krun_tile_g1(int64_t bytes) {
  const int64_t cols = tfe__st.tune.copy_run_tile_cols, mb = tfe__st.tune.copy_run_tile_max_bytes;
  if (mb <= 0 || bytes * cols <= mb || cols <= 8) return cols;
  TFE__KSTAT(81);
  return mb / bytes > 8 ? mb / bytes : 8;
}

/* Plan the loops. strides[o] are op o's strides over dims; offsets[o] its origin. t0
 * bounds G0 of a plain block, tt0 and tt1 G0 and G1 of a transpose tile, tg0 (0: never)
 * G0 of a gather tile. Returns false when there are no elements.
 * Gather tiles: when the destination's run before a transposed input's innermost dim is
 * shorter than a register block (dims of 2, 3, 4: a 3 x 243 transpose tile would run its
 * body on runs of 3), G0 instead takes the destination's leading dims up to tg0 elements
 * and every input is read along G0 through its offset table (vector gathers); G1 is still
 * chosen by the transposed input's strides, so each tile uses that input's lines whole. */
TFE_INTERNAL bool tfe__kplan_build(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                   const int64_t *const *strides, const int64_t *offsets, int64_t t0,
                                   int64_t tt0, int64_t tt1, int64_t tg0, bool seq_zero, int mode, int64_t run_max,
                                   int64_t run_far, int64_t far);
/* The plan of a call, built by tfe__kplan_build and rebuilt in the cases below. es: the
 * element size; copy: a copy (short common runs may be tiled as a transpose).
 * Copies (copy_run_split_bytes): when the source's contiguous chunks within a plain block
 * are shorter than this many bytes while the source continues along a dim outside the block
 * (runs of 22 doubles common to both, the next one 726 elements on in the source: each block
 * reads 176-byte pieces of lines it never finishes), the copy is tiled as a transpose of
 * runs (k_copy_tile_), which reads the source row by row; blocks that read 512-byte chunks
 * stay plain, which measured better for them (docs/bench-kernel.md). 0: never.
 * Chunks under copy_run_split_far_bytes are tiled so too when the destination order reaches
 * their continuation only a MiB or more of output later (c128 runs of 28 whose next run is
 * the destination's outermost dim: the plain blocks sweep the whole source once per value of
 * that dim, reading 448 bytes of every 2688, 3.4x memcpy; as a transpose of runs 1.1-1.4x). */
/* A copy of a 4-byte or larger kind whose transpose tiles read the source in runs of 64 bytes
 * or more along G1 (f32 [32,75,3,13,14,32] perm [2,1,0,4,3,5]: runs of 32 under a destination
 * led by 3 x 75) stays a transpose (table tiles) rather than gather tiles, which read those
 * runs column by column (copy_tiny_source_runs; 0.25-0.84 of the gather tiles' time on 29
 * random cases); not where G1's next dim continues that run and one of the two is reversed. */
TFE_INTERNAL bool tfe__kplan_src_run(const tfe__kplan *p, int nops, int key) {
  if (!p->copy || p->es < 4 || !tfe__st.tune.copy_tiny_source_runs) return false;
  int d = p->g[0].nd; /* G1's first dim */
  int64_t n = p->dims[d] < p->g[1].len ? p->dims[d] : p->g[1].len;
  for (int o = 0; o < nops; o++) {
    if (o == key) continue;
    if (tfe__kabs(p->str[o][d]) != 1 || n * p->es < 64) return false;
    if (p->g[1].nd > 1 && tfe__kabs(p->str[o][d + 1]) == p->dims[d] && (p->str[o][d] < 0 || p->str[o][d + 1] < 0))
      return false; /* (a run continued by G1's next dim, either reversed: 1.2-1.6x slower) */
  }
  return true;
}

TFE_INTERNAL void tfe__kplan_finish(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                    const int64_t *const *strides, const int64_t *offsets, int64_t t0, int64_t tt0,
                                    int64_t tt1, int64_t tg0, bool seq_zero, int64_t run_max, int64_t run_far, int64_t far);
TFE_INTERNAL void tfe__kplan_footprint(tfe__kplan *p);
TFE_INTERNAL bool tfe__kplan_make(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                  const int64_t *const *strides, const int64_t *offsets,
                                  int64_t t0, int64_t tt0, int64_t tt1, int64_t tg0, bool seq_zero, int64_t es,
                                  int copy) {
  int64_t run_max = copy ? tfe__st.tune.copy_run_split_bytes / es : 0;
  int64_t run_far = copy ? tfe__st.tune.copy_run_split_far_bytes / es : 0, far = ((int64_t)1 << 20) / es;
  p->es = es;
  p->copy = copy != 0;
  p->uplan = copy == TFE__KCOPY_UNITS;
  if (!tfe__kplan_build(p, nops, key, rank, dims, strides, offsets, t0, tt0, tt1, tg0, seq_zero, 0, run_max, run_far, far))
    return false;
  tfe__kplan_finish(p, nops, key, rank, dims, strides, offsets, t0, tt0, tt1, tg0, seq_zero, run_max, run_far, far);
  if (p->shared) TFE__KSTAT(24); /* (counted for the plan that runs) */
  if (p->runtile) TFE__KSTAT(26);
  tfe__kplan_footprint(p);
  return true;
}
/* The source a full gather tile of a copy reads, as runs: the tile's dims (G0's, then G1's, each
 * group's last one cut to its block) by the source's stride, those that continue one another from
 * stride 1 a run of pf_run elements, the others the runs' starts (at most TFE__KTAB_STD of them;
 * more or over 512 KiB in all: none, the next tile's would not fit beside this one in a 1 MiB
 * L2). Elements of 8 bytes or less: of five c128 cases two ran 1.07-1.12x slower asking, one
 * 0.89. The tile asks for the next tile's runs while it gathers (k_copy_tile_, copy_next_prefetch
 * 2). Dims the source reads backwards go by |stride|, a run's start moved to its lowest element
 * (copy_footprint_reversed; before session 52 such tiles asked nothing: f64 [6r,8,6r,42,93,3,4]
 * perm [0,3,1,5,4,2,6], records of 6 read backwards, ran 2.2x the time of the same copy read
 * upwards). */
TFE_INTERNAL void tfe__kplan_footprint(tfe__kplan *p) {
  p->pf_run = 0;
  p->pf_nrun = 0;
  p->pf_rev = false;
  const int n0 = p->g[0].nd, nd = n0 + p->g[1].nd;
  if (!p->gather || !p->copy || nd == 0 || p->nops != 2 || p->es > 8) return;
  int ord[2 * TFE__KGD];
  int64_t n[2 * TFE__KGD];
  bool rev = false;
  for (int k = 0; k < nd; k++) {
    const tfe__kgroup *g = &p->g[k < n0 ? 0 : 1];
    n[k] = (k < n0 ? k : k - n0) == g->nd - 1 ? g->last_b : p->dims[k];
    if (p->str[1][k] < 0 && !tfe__st.tune.copy_footprint_reversed) return;
    rev |= p->str[1][k] < 0;
    int j = k;
    for (; j > 0 && tfe__kabs(p->str[1][ord[j - 1]]) > tfe__kabs(p->str[1][k]); j--) ord[j] = ord[j - 1];
    ord[j] = k;
  }
  int64_t run = 1, cnt = 1, lo = 0;
  int q = 0;
  for (; q < nd && tfe__kabs(p->str[1][ord[q]]) == run; q++) {
    if (p->str[1][ord[q]] < 0) lo += (n[ord[q]] - 1) * run;
    run *= n[ord[q]];
  }
  for (int k = q; k < nd; k++) cnt *= n[ord[k]];
  if (cnt > TFE__KTAB_STD || run * cnt * p->es > (512 << 10)) return;
  if (rev) TFE__KSTAT(95);
  p->pf_rev = rev;
  p->pf_off[0] = -lo;
  int64_t m = 1;
  for (int k = q; k < nd; m *= n[ord[k]], k++)
    for (int64_t v = 1; v < n[ord[k]]; v++)
      for (int64_t e = 0; e < m; e++) p->pf_off[v * m + e] = p->pf_off[e] + v * p->str[1][ord[k]];
  p->pf_run = run;
  p->pf_nrun = (int)cnt;
}
/* The rebuilds of tfe__kplan_make (tiny transposes as gather tiles, table tiles). */
TFE_INTERNAL void tfe__kplan_finish(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                    const int64_t *const *strides, const int64_t *offsets, int64_t t0, int64_t tt0,
                                    int64_t tt1, int64_t tg0, bool seq_zero, int64_t run_max, int64_t run_far, int64_t far) {
  /* A transpose of tiny dims whose groups are tables (a random permutation of 3s: the
   * destination's and the source's small dims interleave) runs its 8x8 blocks through
   * scalar table loops; gather tiles do better there (a reversal keeps both groups unit
   * steps and stays a transpose). */
  if (tg0 > 0 && p->g[1].nd > 0 && !p->gather && p->tiny) {
    bool fast = p->g[0].arith[0] && p->g[0].step[0] == 1;
    for (int o = 0; o < nops; o++)
      if (o != key && !(p->g[0].arith[o] && p->g[0].step[o] <= 1) && !(p->g[1].arith[o] && p->g[1].step[o] == 1))
        fast = false;
    bool src_run = tfe__kplan_src_run(p, nops, key);
    if (src_run) TFE__KSTAT(21);
    if (!fast && !src_run) {
      tfe__kplan_build(p, nops, key, rank, dims, strides, offsets, t0, tt0, tt1, tg0, seq_zero, TFE__KM_GATHER, run_max, run_far, far);
      return;
    }
  }
  /* A transpose whose G0 reads its input through a table (a reversal of 2s or 3s: the tile's
   * rows lie scattered over the whole input) is rebuilt as table tiles: groups of whole dims
   * of at least 2x and 1x kernel_table_tile_bytes elements-worth (f64: 128 x 64 for 2s,
   * 243 x 81 for 3s; larger square tiles measured slower), stepped along the input
   * (tfe__kplan_build). Not where G1 took a dim shared by both runs (copy_shared_run_dim): the
   * rebuild gave that dim back to G0 and left G1 the input's innermost dim alone (a random permutation of
   * 3s, [3^15] perm [5,14,1,8,6,12,13,7,0,11,9,3,4,2,10]: G1 3 elements, 24-byte source reads,
   * 12.8x memcpy; kept, G1 243 elements, 4.4x; copy_shared_keep). Elements of 8 bytes and more
   * (units too): of 4-byte kinds, 5 of 15 sweep cases ran 1.05-1.12x slower kept (2 faster). */
  if (p->along_src && p->shared && p->es >= 8 && tfe__st.tune.copy_shared_keep) { TFE__KSTAT(47); return; }
  if (p->along_src) {
    int64_t tbb = tfe__ktable_bytes(p->es), tb = tbb / p->es < 8 ? 8 : tbb / p->es;
    tfe__kplan_build(p, nops, key, rank, dims, strides, offsets, t0, tb, tb, tg0, seq_zero, TFE__KM_TABLE, run_max, run_far, far);
    TFE__KSTAT(8);
  }
  return;
}

/* The first part of tfe__kplan_build: p's dims without those of 1, flipped where the key's
 * stride is negative, sorted by the key's stride and fused where contiguous in every operand
 * (rank, dims, str, base, numel); false when there are no elements. No groups or tiles: the
 * paths that need only the dims ask for this alone (records.h: a big plan's tables cost
 * microseconds). */
TFE_INTERNAL bool tfe__kplan_fuse(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                  const int64_t *const *strides, const int64_t *offsets) {
  p->nops = nops; p->key = key; p->rank = 0; p->numel = 1;
  for (int o = 0; o < nops; o++) p->base[o] = offsets[o];
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) { p->numel = 0; return false; }
    if (dims[i] == 1) continue;
    int k = p->rank++;
    p->numel *= dims[i];
    p->dims[k] = dims[i];
    bool flip = strides[key][i] < 0;
    for (int o = 0; o < nops; o++) {
      int64_t s = strides[o][i];
      if (flip) { p->base[o] += (dims[i] - 1) * s; s = -s; }
      p->str[o][k] = s;
    }
  }
  /* sort by the key's stride; ties by the sum of the others' (insertion sort: rank is small) */
  for (int i = 1; i < p->rank; i++) {
    for (int j = i; j > 0; j--) {
      int64_t a = p->str[key][j - 1], b = p->str[key][j], sa = 0, sb = 0;
      for (int o = 0; o < nops; o++) { sa += tfe__kabs(p->str[o][j - 1]); sb += tfe__kabs(p->str[o][j]); }
      if (a < b || (a == b && sa <= sb)) break;
      int64_t t = p->dims[j]; p->dims[j] = p->dims[j - 1]; p->dims[j - 1] = t;
      for (int o = 0; o < nops; o++) { t = p->str[o][j]; p->str[o][j] = p->str[o][j - 1]; p->str[o][j - 1] = t; }
    }
  }
  /* fuse neighbours contiguous in every operand */
  int k = 0;
  for (int i = 1; i < p->rank; i++) {
    bool f = true;
    for (int o = 0; o < nops && f; o++) f = p->str[o][i] == p->str[o][k] * p->dims[k];
    if (f) { p->dims[k] *= p->dims[i]; continue; }
    k++;
    p->dims[k] = p->dims[i];
    for (int o = 0; o < nops; o++) p->str[o][k] = p->str[o][i];
  }
  if (p->rank > 0) p->rank = k + 1;
  return true;
}

TFE_INTERNAL bool tfe__kplan_build(tfe__kplan *p, int nops, int key, int rank, const int64_t *dims,
                                   const int64_t *const *strides, const int64_t *offsets, int64_t t0,
                                   int64_t tt0, int64_t tt1, int64_t tg0, bool seq_zero, int mode, int64_t run_max,
                                   int64_t run_far, int64_t far) {
  p->gather = false; p->tiny = false;
  p->along_src = false; p->runtile = false; p->shared = false; p->unit = 0; p->urev = false; p->tab0 = p->tab1 = TFE__KTAB_STD;
  if (!tfe__kplan_fuse(p, nops, key, rank, dims, strides, offsets)) return false;
  /* groups */
  int mis = -1;
  for (int o = 0; o < nops && mis < 0; o++) if (o != key && tfe__kmisaligned(p, o)) mis = o;
  int64_t cut0 = 1, cut1 = 1;
  int end0 = p->rank; /* G0 stops before the misaligned input's innermost dim (G1 takes it) */
  /* (copy_run_tile_bytes: a longer common run that a plain block reads alone, its source
   * continuation outside the block: [75,495,304] f64 runs of 600 B, each block 3 runs from 3
   * rows 182 KB apart) */
  const int64_t run_tile = p->copy ? tfe__st.tune.copy_run_tile_bytes / p->es : 0;
  if (mis < 0 && p->rank > 2 && (p->dims[0] < run_max || p->dims[0] < run_far || p->dims[0] < run_tile) && p->str[key][0] == 1)
    for (int o = 0; o < nops && mis < 0; o++) { /* a short common run continued elsewhere */
      int64_t br = o != key && tfe__kabs(p->str[o][0]) == 1 ? tfe__kblock_run(p, o, t0) : INT64_MAX;
      const bool alone = br == p->dims[0] && br < run_tile;
      if (br < run_max || br < run_far || alone)
        for (int d = 2; d < p->rank; d++) /* (either direction: reversed runs or rows) */
          if (tfe__kabs(p->str[o][d]) == p->dims[0] && (br < run_max || alone || tfe__kabs(p->str[key][d]) >= far)) {
            mis = o; end0 = d; TFE__KSTAT(10);
            if (alone && br >= run_max && !(br < run_far && tfe__kabs(p->str[key][d]) >= far)) {
              p->runtile = true;
              bool wide;
              tt0 = tfe__krun_tile_g0(p->dims[0], p->es, &wide);
              if (wide) { TFE__KSTAT(70); if (tt0 > TFE__KTAB_STD) p->tab0 = tt0 < TFE__KTAB ? tt0 : TFE__KTAB; }
              tt1 = tfe__krun_tile_g1(p->dims[0] * p->es);
            }
            break;
          }
    }
  if (mis >= 0 && end0 == p->rank)
    for (int d = 1; d < p->rank; d++) {
      int64_t s = tfe__kabs(p->str[mis][d]);
      if (s != 0 && s < tfe__kabs(p->str[mis][end0 < p->rank ? end0 : 0])) end0 = d;
    }
  /* A dim that continues both the destination's run (a line or more before it) and the
   * input's short innermost run (f32 [7,9,72,16,18,19] perm [3,1,5,2,4,0]: destination run 16,
   * then 9; source run 7, then the same 9) joins G1 rather than G0: the tile's source rows
   * are then 63 elements long instead of 7 (under a register block: scalar loops), its
   * destination columns one line each (copy_shared_run_dim). Kinds of 4 bytes and more (a u8
   * case ran 1-4 % slower with it: the 1- and 2-byte blocks are another path); with 2 also 1-
   * and 2-byte table tiles whose G0 then takes the dims before it whole (session 25: u8
   * [8,64,59,28,3,5,8] perm [2,4,1,0,3,5,6], a source run of 8 x 64 whose 64 G0 cut at 5: 8-byte
   * rows, 4.4x memcpy; G1 8 x 32 of the 64, 1.7x. Where G0 could not hold them whole it was left
   * a single short dim: 3.6x slower). G0 must hold 128 bytes, or 32 where the input's run is
   * 8-15 bytes (tfe__kshared_g0_bytes, session 33). */
  const bool shared1 = p->es >= 4 && !(mode & TFE__KM_TABLE), shared2 = tfe__st.tune.copy_shared_run_dim > 1 && p->es <= 2 && (mode & TFE__KM_TABLE);
  if (mis >= 0 && p->copy && (shared1 || shared2) && end0 < p->rank && end0 > 1 && tfe__st.tune.copy_shared_run_dim &&
      tfe__kabs(p->str[mis][end0]) == 1 && p->dims[end0] * p->es < 64) {
    int64_t pre = p->dims[0];
    for (int k = 1; k < end0; pre *= p->dims[k], k++)
      if (tfe__kabs(p->str[mis][k]) == p->dims[end0]) {
        const int64_t least = shared2 ? tfe__kshared_g0_bytes(p->dims[end0] * p->es) : 64;
        if (pre * p->es >= least && (!shared2 || pre <= 2 * tt0)) { end0 = k; p->shared = true; if (shared2) TFE__KSTAT(40); }
        break;
      }
  }
  if (tg0 > 0 && p->rank > 1 && p->dims[0] < tfe__st.tune.kernel_tiny_dim) {
    int64_t pre = 1;
    for (int d = 0; d < end0 && d < p->rank; d++) pre *= p->dims[d];
    bool strided = false; /* an input not unit-stride along the destination's run */
    for (int o = 0; o < nops; o++) if (o != key && p->str[o][0] != 1) strided = true;
    p->tiny = mis >= 0;
    /* (copy_quarter_blocks: 8- and 4-byte copies whose destination run before the input's
     * innermost dim is 4-7 elements, that dim at least 4: 4x4 register blocks, a transpose;
     * with 2 also 16-byte ones, whose register block is 4x4: c128 [60,6,13,8,3,4,12] perm
     * [5,0,6,2,3,1,4], a run of 4 = one line, gather tiles 2.9x memcpy, 0.32 of that time) */
    const int qb = tfe__st.tune.copy_quarter_blocks;
    const bool quarter = p->copy && (p->es == 8 || p->es == 4 || (p->es == 16 && qb > 1)) && qb && mis >= 0 &&
                         pre >= 4 && end0 < p->rank && p->dims[end0] >= 4 && tfe__kabs(p->str[mis][end0]) == 1;
    if (quarter && p->es == 16 && pre < 8) TFE__KSTAT(61);
    if ((mis >= 0 && ((pre < 8 && !quarter) || (mode & TFE__KM_GATHER) || tfe__st.tune.kernel_gather_all)) || (mis < 0 && strided)) {
      p->gather = true;
      end0 = p->rank;
      /* A copy's gather tile stops G0 at the first dim that continues the source's run from
       * its unit-stride dim u (through the dims G1 would get; u itself or a dim before
       * it) once G0 holds a line of destination, where that run reaches 16 bytes: G1
       * then starts with that run (whole source lines a tile, and the 16-byte register
       * transposes of k_copy_gather12_) instead of G0 taking part of it. u8 [4,4,2,4,3,2,...]
       * perm [2,4,8,12,15,0,5,...]: G0 the destination's 108-byte run and half the source's 4,
       * G1 from the source's stride 4, every column gathered a byte at a time: 0.66 of the
       * time; u8 [2,2,2,2,2,2,2,3,3,...]: the destination's fourth dim (after 64 bytes) is the
       * source's stride 4, which left G1 runs of 4 bytes (short records): 0.27 of the time.
       * Runs under 16 bytes are left alone (through k_deint_ with G0 one line, a u16 case ran
       * 1.3x slower). 1-byte kinds: 2-byte ones moved both ways (0.60-1.57 of the time on 90
       * small-dim cases; copy_gather_source_run) */
      if (mis >= 0 && p->copy && p->es == 1 && tfe__st.tune.copy_gather_source_run) {
        int u = -1;
        for (int d = 1; d < p->rank && u < 0; d++) if (tfe__kabs(p->str[mis][d]) == 1) u = d;
        int64_t pre = 1;
        for (int d = 0; u > 0 && d <= u && pre < tg0; pre *= p->dims[d], d++) {
          if (pre * p->es < 64) continue;
          /* (d continues u's run through the dims from d on: without d that run is shorter) */
          const int64_t run = tfe__krun_chain(p, mis, u, d);
          if (d != u && run == tfe__krun_chain(p, mis, u, d + 1)) continue;
          if (run >= 16) { /* (a 16-byte register block's row) */
            end0 = d;
            if (2 * pre <= tg0) TFE__KSTAT(54); /* (G0 would have taken some of dim d) */
          }
          break;
        }
      }
    }
    if (p->gather && mis < 0) mis = key == 0 ? 1 : 0;
  }
  /* 1- and 2-byte transposing copies: G0's table may reach 1 KiB of destination column
   * (copy_wide_tables), where 256 entries cut the columns every 256 or 512 bytes: u8 [220,21,
   * 132,236] perm [1,3,0,2], G0 21 x 12 of the 236 (columns of 252 B, two partial lines each,
   * the rest of each line written by another tile much later); as 21 x 48, 0.64 of the time */
  if (mis >= 0 && !p->gather && p->copy && p->es <= 2 && tfe__st.tune.copy_wide_tables && p->tab0 < TFE__KTAB / p->es)
    p->tab0 = TFE__KTAB / p->es;
  /* (2: also G0's tables of copies of units, TFE__KTAB units: u16 [3,7,31,47,14,6,25] perm
   * [0,2,6,3,5,4,1], units of 6 bytes, G0 the destination's 31 x 25 rather than 31, columns of
   * 4650 bytes rather than 186: 0.53 of the time. Other kinds of 4 bytes and more measured
   * mixed, 0.5-1.16) */
  const bool utab = mis >= 0 && !p->gather && p->uplan && tfe__st.tune.copy_wide_tables > 1 && p->tab0 < TFE__KTAB;
  if (utab) p->tab0 = TFE__KTAB;
  /* A copy of common runs whose G0 is a table (the dim after the run reversed or not its
   * continuation in one operand) took 256 entries a tile: u16 [11,8r,40,...], runs of 22 bytes,
   * tiles of 16 runs, 5.5x the streamed copy, the tile's own cost ahead of its bytes
   * (copy_run_table_entries) */
  const bool run_tab = p->copy && mis < 0 && !p->gather && nops == 2 && p->rank > 1 && p->str[1 - key][0] == 1 &&
                       p->dims[0] * p->es <= 128;
  if (run_tab && tfe__st.tune.copy_run_table_entries > p->tab0) p->tab0 = tfe__st.tune.copy_run_table_entries;
  int nd0 = p->rank ? tfe__kgroup_pick(p, 0, end0, p->gather ? tg0 : mis >= 0 ? tt0 : t0, &cut0) : 0;
  if (run_tab && nd0 > 1 && tfe__kgroup_len(p, nd0, cut0) > TFE__KTAB_STD) TFE__KSTAT(74);
  bool table = (mode & TFE__KM_TABLE) && mis >= 0 && !p->gather;
  /* (G0 cuts a dim only when the input's innermost run fills register blocks: with runs of 4
   * the cut dim, which continues them, serves better in the odometer. The run: its innermost
   * dim and the dims after G0 that continue it (copy_table_run_cut; u8 [6,18,33r,227,...]: 6 x 18,
   * where the 6 alone left G0 at the reversed 33 and every column 33 bytes, 5.6x memcpy) */
  int64_t run_in = end0 < p->rank ? p->dims[end0] : 0;
  if (table && end0 < p->rank && p->copy && tfe__st.tune.copy_table_run_cut) {
    /* (2: also G0's candidates after the dim it would cut, which the tile leaves to G1: u16
     * [4,87,30r,13,10,40] perm [5,3,2,1,0,4], a run of 4 x 87 x 30 whose 87 and 30 lie among
     * G0's candidates, had G0 the destination's 40 alone, 80-byte columns. Not where G0 reads a
     * common run (its columns long already), nor where the cut dim itself continues a run
     * shorter than a line: G1 would lose it; the value 1's run then) */
    int64_t c_ = 0;
    const int cut = tfe__st.tune.copy_table_run_cut > 1 && tfe__kabs(p->str[mis][0]) != 1
                        ? tfe__kgroup_pick_up(p, 0, end0, 2 * tt0, &c_, false) : end0;
    const int64_t before = tfe__krun_chain(p, mis, end0, end0 + 1); /* (the value 1's run) */
    run_in = tfe__krun_chain(p, mis, end0, cut + 1);
    if (cut < end0 && tfe__kabs(p->str[mis][cut]) == run_in * tfe__kabs(p->str[mis][end0]) && run_in * p->es < 64) run_in = before;
    if (run_in >= 8 && before < 8) TFE__KSTAT(34);
  }
  if (table && run_in >= 8 && p->dims[end0] < 8) TFE__KSTAT(33);
  if (table) nd0 = tfe__kgroup_pick_up(p, 0, end0, 2 * tt0, &cut0, run_in >= 8);
  /* A transpose group of several small dims (2s and 3s) runs its 8x8 blocks through
   * tables, and blocks clipped at its edges (27 = 3*8 + 3) element by element: four times
   * the target makes the clipped share small (243 x 81 tiles of 3s: 2.5 %). */
  if (mis >= 0 && !p->gather && nd0 > 1 && !table) nd0 = tfe__kgroup_pick(p, 0, end0, 4 * tt0, &cut0);
  int nd1 = 0;
  /* A copy's gather tile whose destination run cut the source's unit-stride dim (f64
   * [46,129,6,30,12] perm [2,0,1,4,3]: runs of 6 from 6 source rows) takes no column group:
   * columns from the far dims made every tile read hundreds of rows in short pieces; without
   * them the tiles step along the cut dim and read a few rows on (kernel.md step 4b). Kinds of
   * 4 bytes or more only: 1- and 2-byte tiles of G0 alone (about 500 bytes) measured both
   * faster and slower than with columns; AMD CPUs only by default (a Xeon ran two of five
   * such cases 1.5-1.6x slower, where Zen 3 ran them 2.5-4x faster). */
  bool run_tiles = p->gather && p->copy && tfe__kon_amd(tfe__st.tune.copy_gather_run_tiles) && p->es >= 4 && nd0 > 0 &&
                   cut0 < p->dims[nd0 - 1] && tfe__kabs(p->str[mis][nd0 - 1]) == 1;
  if (run_tiles) TFE__KSTAT(20);
  if (mis >= 0 && nd0 < p->rank && !run_tiles) {
    /* remaining dims by the misaligned input's |stride| (broadcast dims last); gather
     * tiles: by the inputs' summed |stride|, so broadcast dims (an input reused within the
     * tile) and small strides (its lines used whole) come first */
    int64_t key1[TFE_MAX_RANK];
    for (int d = nd0; d < p->rank; d++) {
      key1[d] = tfe__kabs(p->str[mis][d]);
      if (key1[d] == 0) key1[d] = INT64_MAX;
      if (p->gather) {
        key1[d] = 0;
        for (int o = 0; o < nops; o++) if (o != key) key1[d] += tfe__kabs(p->str[o][d]);
      }
    }
    int sel[TFE_MAX_RANK], ns = 0;
    for (int d = nd0; d < p->rank; d++) {
      int j = ns++;
      while (j > 0 && key1[sel[j - 1]] > key1[d]) { sel[j] = sel[j - 1]; j--; }
      sel[j] = d;
    }
    tfe__kmove(p, nd0, ns, sel);
    const bool wide1 = tfe__kg1_run_table(p, mis, nd0, ns, table);
    nd1 = tfe__kgroup_pick(p, nd0, p->rank, tt1, &cut1);
    if (wide1 && nd1 > 1) TFE__KSTAT(93);
    else if (wide1) p->tab1 = TFE__KTAB_STD;
    if (nd1 > 1) nd1 = tfe__kgroup_pick(p, nd0, p->rank, 4 * tt1, &cut1);
    /* A copy's G0 of half a line or less (f32 [142,6r,51,24,4,4] perm
     * [5,0,2,1,3,4]: the destination's run of 4, read 16 MB apart, and G1 the 142 alone, 29 376
     * tiles of 2.2 KB, 2.3x memcpy) lets G1 take dims that continue the input's run up to four
     * times its target, its table up to TFE__KTAB entries (copy_tiny_g0_wide_g1: G1 142 x 6,
     * 1.2x; any dims so, 59 of 217 sweep cases 1.05-1.6x slower; G0 up to a quarter of its
     * target, not half a line: 51 of 131) */
    const int64_t g0n = tfe__kgroup_len(p, nd0, cut0);
    if (p->copy && !p->gather && !table && tfe__st.tune.copy_tiny_g0_wide_g1 && g0n * p->es <= 32 &&
        tfe__kabs(p->str[mis][nd0]) == 1) {
      int64_t cw = 0;
      const int64_t tab1 = p->tab1;
      p->tab1 = TFE__KTAB;
      int nw = tfe__kgroup_pick(p, nd0, p->rank, 4 * tt1, &cw);
      const int kr = nw > 0 ? tfe__krun_dims(p, mis, nd0, nw, NULL) : 0; /* (only dims that continue the input's run) */
      if (kr < nw) { nw = kr; cw = p->dims[nd0 + kr - 1]; }
      if (nw > nd1 || (nw == nd1 && cw > cut1)) { nd1 = nw; cut1 = cw; TFE__KSTAT(36); }
      else p->tab1 = tab1;
    }
    if (table) nd1 = tfe__kgroup_pick_up(p, nd0, p->rank, tt1, &cut1, true);
    /* A G1 led by the input's run, with a next dim that does not continue it, is a table in
     * the input: its register blocks straddle the run's ends and read through the table (u16
     * [52,77,151,84] perm [1,0,2,3]: G1 52 x 4 of the batch, 2.1x memcpy; the run alone 1.2x).
     * Such a G1 keeps the run alone when it is copy_g1_run_bytes or more, and 8 elements or a
     * line (f64 runs of 6 took tiles of rims alone: 4x slower) */
    int64_t rn = nd1 > 1 ? p->dims[nd0] : 0; /* (the run may span G1's first dims: copy_g1_run_dims) */
    const int rk = nd1 > 1 && tfe__st.tune.copy_g1_run_dims ? tfe__krun_dims(p, mis, nd0, nd1 - 1, &rn) : 1;
    const int64_t rbytes = rn * p->es, g1b = tfe__st.tune.copy_g1_run_bytes;
    if (!table && p->copy && nd1 > 1 && g1b && rbytes >= g1b && (rn >= 8 || rbytes >= 64) &&
        tfe__kabs(p->str[mis][nd0]) == 1 && tfe__kabs(p->str[mis][nd0 + rk]) != rn) {
      nd1 = rk; cut1 = p->dims[nd0 + rk - 1]; TFE__KSTAT(rk > 1 ? 39 : 35);
    }
    /* Table tiles: G1 stops where the input's run stops (kernel_table_input_runs). A dim
     * beyond it (u16 [51,131,76,92] perm [3,1,0,2]: after the source run of 51, a dim of 76
     * with strides 6681 in the source and 614652 in the destination; its earlier dims taken by
     * G0) multiplies the tile's streams in both operands: 5 x 51 columns in five planes of the
     * destination far apart, read from 5 x 92 rows (the pages a tile touches, and the lines it
     * keeps open, grew fivefold; 3-7x memcpy). */
    if (table && nd1 > 1 && tfe__st.tune.kernel_table_input_runs) {
      const int k = tfe__krun_dims(p, mis, nd0, nd1, NULL);
      if (k < nd1) { nd1 = k; cut1 = p->dims[nd0 + k - 1]; TFE__KSTAT(14); }
    }
  }
  /* (scalar kinds only: units of several elements, units.h, keep their own tile sizes; c128
   * units of 7 with G1 10 whole, not 8, ran 1.15x slower) */
  if (p->copy && mis >= 0 && !p->gather && !table && tfe__st.tune.copy_tile_slack && p->es <= 16 && !(p->es & (p->es - 1))) {
    if (nd1) nd1 = tfe__kgroup_widen(p, nd0, nd1, tt1, &cut1, mis);
    /* (G0 too when G1 is whole dims: a batch of transposes, each tile then a whole slice) */
    if (nd0 == 1 && nd1 && cut1 == p->dims[nd0 + nd1 - 1]) nd0 = tfe__kgroup_widen(p, 0, nd0, tt0, &cut0, -1);
  }
  if (nd0) tfe__kgroup_make(p, &p->g[0], 0, nd0, cut0);
  else { p->g[0].nd = 0; p->g[0].len = 1; p->g[0].inner = 1; p->g[0].last_n = p->g[0].last_b = 1; }
  if (nd0 > 1 && p->g[0].len > TFE__KTAB_STD && !run_tab) TFE__KSTAT(31); /* (a transpose's: run_tab counts 74) */
  if (nd0 > 1 && p->g[0].len > TFE__KTAB_STD && utab) TFE__KSTAT(83);
  if (!nd1) p->gather = false;
  /* A copy's G1 dims after the first that the input reads reversed are walked the other way in
   * both operands (copy_flip_source_dims): G1 then stays one run of the input where it was one
   * reversed (u16 [75,7r,7,...]: G1 75 x 3 of the reversed 7, a table, and the tile fell back to
   * gather tiles, 4.4x memcpy; the destination's columns may come in any order). With 2 (session
   * 24) G1's first dim too, when G1 has more (f32 [2r,120,153,57,9] perm [4,0,2,3,1]: G1 the
   * reversed 2 x 120, a table reading 0, -1, 2, 1, ..., 8.1 -> 2.2x memcpy). With 4 (session
   * 44) also a lone G1 dim whose input stride is not 1: a tile then reads the input's runs
   * upwards, as the prefetchers follow (c128 [68,510r,298] [0,2,1], a transpose of 1088-byte
   * runs each 2 KB below the last: 26 -> 9.6 ms; counter 78). */
  const int flip = tfe__st.tune.copy_flip_source_dims;
  const bool lone = nd1 == 1 && flip > 3 && mis >= 0 && tfe__kabs(p->str[mis][nd0]) > 1;
  if (p->copy && mis >= 0 && (nd1 > 1 || lone) && flip)
    for (int k = flip > 1 ? nd0 : nd0 + 1; k < nd0 + nd1; k++)
      if (p->str[mis][k] < 0) {
        for (int o = 0; o < nops; o++) { p->base[o] += (p->dims[k] - 1) * p->str[o][k]; p->str[o][k] = -p->str[o][k]; }
        TFE__KSTAT(lone ? 78 : k == nd0 ? 37 : 32);
      }
  /* With 3 (session 35) also the tile odometer's dims that the input reads reversed, in plans
   * without G1 (blocks of common runs) and, in transposes, where one step goes at most 4 KiB
   * down the input: the input then comes upwards, as the hardware prefetchers follow it, the
   * destination downwards (f32 [400,49r,7,267]: runs of 1.6 KB each 1.6 KB below the last, 3.1
   * -> 0.95x the streamed copy with copy_run_stream_bytes; f32 [24,5,3r,35,58,40] perm
   * [0,4,1,3,5,2], units of 96 bytes 480 bytes apart: 0.50 of the time). Steps further apart
   * (u16 [57,14,3,8,47r,3,28]: 38 KB) gain nothing there and cost the destination's order: all
   * reversed odometer dims flipped ran two such cases 1.04-1.09x slower. */
  if (p->copy && nops == 2 && tfe__st.tune.copy_flip_source_dims > 2)
    for (int k = nd0 + nd1; k < p->rank; k++)
      if (p->str[1 - key][k] < 0 && (!nd1 || -p->str[1 - key][k] * p->es <= 4096)) {
        for (int o = 0; o < nops; o++) { p->base[o] += (p->dims[k] - 1) * p->str[o][k]; p->str[o][k] = -p->str[o][k]; }
        TFE__KSTAT(57);
      }
  if (nd1) tfe__kgroup_make(p, &p->g[1], nd0, nd1, cut1);
  else { p->g[1].nd = 0; p->g[1].len = 1; p->g[1].inner = 1; p->g[1].last_n = p->g[1].last_b = 1; }
  for (int gi = 0; gi < 2; gi++) if (p->g[gi].nd == 0)
    for (int o = 0; o < nops; o++) { p->g[gi].arith[o] = true; p->g[gi].step[o] = 0; }
  /* tile odometer: cut dims first, then the rest by the key's stride; with seq_zero the
   * dims where op 0 does not move come first so that they form the sequential prefix */
  int no = 0;
  int64_t cnt[TFE_MAX_RANK + 2], stp[TFE__KOPS][TFE_MAX_RANK + 2];
  int clip[TFE_MAX_RANK + 2];
  for (int gi = 0; gi < 2; gi++) {
    int nd = gi ? nd1 : nd0, last = (gi ? nd0 : 0) + nd - 1;
    if (!nd || p->g[gi].last_b >= p->g[gi].last_n) continue;
    cnt[no] = (p->g[gi].last_n + p->g[gi].last_b - 1) / p->g[gi].last_b;
    for (int o = 0; o < nops; o++) stp[o][no] = p->str[o][last] * p->g[gi].last_b;
    clip[no++] = gi + 1;
  }
  for (int d = nd0 + nd1; d < p->rank; d++) {
    cnt[no] = p->dims[d];
    for (int o = 0; o < nops; o++) stp[o][no] = p->str[o][d];
    clip[no++] = 0;
  }
  /* gather tiles with a broadcast input: tiles along dims where an input does not move (or
   * moves little) come first, so that consecutive tiles find that input's columns in cache
   * (without a broadcast input the destination's order is kept: a permuting copy sorted by
   * its source's strides measured slower) */
  bool bcast = false;
  for (int i = 0; i < no; i++) for (int o = 0; o < nops; o++) if (o != key && stp[o][i] == 0) bcast = true;
  for (int i = 1; p->gather && bcast && i < no; i++)
    for (int j = i; j > 0; j--) {
      int64_t a = 0, b = 0;
      for (int o = 0; o < nops; o++) if (o != key) { a += tfe__kabs(stp[o][j - 1]); b += tfe__kabs(stp[o][j]); }
      if (a <= b) break;
      int64_t t = cnt[j]; cnt[j] = cnt[j - 1]; cnt[j - 1] = t;
      int c = clip[j]; clip[j] = clip[j - 1]; clip[j - 1] = c;
      for (int o = 0; o < nops; o++) { t = stp[o][j]; stp[o][j] = stp[o][j - 1]; stp[o][j - 1] = t; }
    }
  /* A transpose whose G0 reads the input through a table (a reversal: its rows lie
   * scattered over the whole input) steps its tiles along that input instead: each row then
   * continues where the previous tile left it; the destination takes whole-line streamed
   * stores in any order. Transposes of single dims keep the destination's order (both
   * measured best so: docs/bench-kernel.md). */
  p->along_src = mis >= 0 && !p->gather && nd0 > 1 && !p->g[0].arith[mis] && !p->runtile;
  bool along_src = p->along_src;
  for (int i = 1; along_src && i < no; i++)
    for (int j = i; j > 0; j--) {
      if (tfe__kabs(stp[mis][j - 1]) <= tfe__kabs(stp[mis][j])) break;
      int64_t t = cnt[j]; cnt[j] = cnt[j - 1]; cnt[j - 1] = t;
      int c = clip[j]; clip[j] = clip[j - 1]; clip[j - 1] = c;
      for (int o = 0; o < nops; o++) { t = stp[o][j]; stp[o][j] = stp[o][j - 1]; stp[o][j - 1] = t; }
    }
  /* Copies whose tiles read the transposed input in short pieces (u8 [33,37,24,127,44] perm
   * [3,4,2,1,0]: 231 bytes of each of 2048 rows): the odometer dims that continue those
   * pieces come first, so that the next tile reads on where this one stopped (its rows' last
   * partial lines still in cache, each row one stream) rather than a whole sweep later; the
   * tile odometer otherwise follows the destination (copy_source_chain_bytes). One thread
   * only: threads split the odometer's outermost dim, chosen below so that each writes one
   * contiguous share of the destination, which a chain dim would often have to be. */
  int nchain = 0;
  const int64_t chain_bytes = tfe__st.tune.copy_source_chain_bytes;
  if (p->copy && chain_bytes > 0 && mis >= 0 && !p->gather && !along_src && !seq_zero && tfe__kthreads(p->numel) == 1) {
    int64_t r = tfe__ktile_chunk(p, mis, nd0, nd1, cut0, cut1);
    while (nchain < no && r * p->es < chain_bytes) {
      int f = -1;
      for (int i = nchain; i < no && f < 0; i++) if (cnt[i] > 1 && tfe__kabs(stp[mis][i]) == r) f = i;
      if (f < 0) break;
      int64_t c = cnt[f], st[TFE__KOPS];
      int cl = clip[f];
      for (int o = 0; o < nops; o++) st[o] = stp[o][f];
      for (int i = f; i > nchain; i--) {
        cnt[i] = cnt[i - 1]; clip[i] = clip[i - 1];
        for (int o = 0; o < nops; o++) stp[o][i] = stp[o][i - 1];
      }
      cnt[nchain] = c; clip[nchain] = cl;
      for (int o = 0; o < nops; o++) stp[o][nchain] = st[o];
      nchain++;
      const tfe__kgroup *g = cl ? &p->g[cl - 1] : NULL; /* (a cut dim's blocks: the whole dim) */
      r = g ? r / g->last_b * g->last_n : r * c;
    }
  }
  p->nchain = nchain;
  if (nchain) TFE__KSTAT(17);
  p->no = 0; p->ntiles = 1; p->nseq = 1;
  for (int pass = 0; pass < 2; pass++) /* seq_zero: op-0-stationary tiles first */
    for (int i = 0; i < no; i++) {
      bool z = seq_zero && stp[0][i] == 0;
      if ((pass == 0) != z) continue;
      int q = p->no++;
      p->ocount[q] = cnt[i]; p->oclip[q] = clip[i];
      for (int o = 0; o < nops; o++) p->ostep[o][q] = stp[o][i];
      p->ntiles *= cnt[i];
      if (z) p->nseq *= cnt[i];
    }
  /* Threads split the outermost odometer dim first: make it the one with op 0's largest
   * stride, so that each thread writes (and first-touches) one contiguous share of op 0
   * instead of pieces of every huge page (two threads faulting the same pages wait on
   * each other). */
  int big = -1;
  for (int q = nchain; q < p->no && !along_src; q++) /* (the chain stays innermost) */
    if (!(seq_zero && p->ostep[0][q] == 0) && p->ocount[q] > 1 &&
        (big < 0 || tfe__kabs(p->ostep[0][q]) > tfe__kabs(p->ostep[0][big])))
      big = q;
  if (big >= 0 && big != p->no - 1) {
    int64_t c = p->ocount[big], st[TFE__KOPS];
    int cl = p->oclip[big];
    for (int o = 0; o < nops; o++) st[o] = p->ostep[o][big];
    for (int q = big; q < p->no - 1; q++) {
      p->ocount[q] = p->ocount[q + 1]; p->oclip[q] = p->oclip[q + 1];
      for (int o = 0; o < nops; o++) p->ostep[o][q] = p->ostep[o][q + 1];
    }
    p->ocount[p->no - 1] = c; p->oclip[p->no - 1] = cl;
    for (int o = 0; o < nops; o++) p->ostep[o][p->no - 1] = st[o];
  }
  return true;
}

/* Decode tile t into offsets and clipped extents. */
TFE_INTERNAL void tfe__ktile_at(const tfe__kplan *p, int64_t t, tfe__ktile *tl) {
  for (int o = 0; o < p->nops; o++) tl->off[o] = p->base[o];
  tl->n0 = p->g[0].len;
  tl->n1 = p->g[1].len;
  for (int q = 0; q < p->no && t; q++) {
    int64_t c = t % p->ocount[q];
    t /= p->ocount[q];
    for (int o = 0; o < p->nops; o++) tl->off[o] += c * p->ostep[o][q];
    if (p->oclip[q]) {
      const tfe__kgroup *g = &p->g[p->oclip[q] - 1];
      int64_t rem = g->last_n - c * g->last_b;
      if (rem < g->last_b) {
        if (p->oclip[q] == 1) tl->n0 = g->inner * rem; else tl->n1 = g->inner * rem;
      }
    }
  }
}

/* Whether plan p's tiles write op 0 in address order, each tile within `span` elements:
 * the odometer's op-0 steps ascend and a tile's op-0 footprint is small. */
TFE_INTERNAL bool tfe__kplan_in_order(const tfe__kplan *p, int64_t span) {
  int64_t s = 0;
  for (int gi = 0; gi < 2; gi++) {
    const tfe__kgroup *g = &p->g[gi];
    int at = gi ? p->g[0].nd : 0;
    for (int k = 0; k < g->nd; k++) {
      int64_t n = k == g->nd - 1 ? g->last_b : p->dims[at + k];
      s += (n - 1) * tfe__kabs(p->str[0][at + k]);
    }
  }
  if (s > span) return false;
  for (int q = 1; q < p->no; q++)
    if (tfe__kabs(p->ostep[0][q]) < tfe__kabs(p->ostep[0][q - 1])) return false;
  return true;
}

/* Extents of a tile whose cut dim q (a G0 or G1 block counter) is at c. */
TFE_INTERNAL void tfe__ktile_clip(const tfe__kplan *p, int q, int64_t c, tfe__ktile *tl) {
  const tfe__kgroup *g = &p->g[p->oclip[q] - 1];
  int64_t rem = g->last_n - c * g->last_b, n = rem < g->last_b ? g->inner * rem : g->len;
  if (p->oclip[q] == 1) tl->n0 = n; else tl->n1 = n;
}

/* The calling thread's share [*lo, *hi) of n items, split evenly over the threads of the
 * enclosing parallel region (all n outside one, or without OpenMP). */
TFE_INTERNAL void tfe__kshare(int64_t n, int64_t *lo, int64_t *hi) {
  int64_t t = 0, m = 1;
#ifdef _OPENMP
  t = omp_get_thread_num();
  m = omp_get_num_threads();
#endif
  *lo = n * t / m;
  *hi = n * (t + 1) / m;
}

/* Run every tile. Tiles of one sequential run (nseq consecutive, sharing op 0 elements)
 * stay on one thread; runs are split statically so that each thread writes (and first
 * touches) one contiguous share of the output. Each thread fences its streaming stores once,
 * at the end of its share (a fence per tile drains the write-combining buffers every few KiB
 * and costs a quarter of the bandwidth). */
TFE_INTERNAL void tfe__kplan_run(const tfe__kplan *p, tfe__ktile_fn fn, void *ctx, int nt) {
  int64_t nrun = p->ntiles / p->nseq;
  if (nt > nrun) nt = (int)(nrun > 0 ? nrun : 1);
  TFE_OMP(parallel num_threads(nt) if (nt > 1))
  {
    tfe__ktile tl;
    int nth = 1;
    tl.tid = 0;
#ifdef _OPENMP
    tl.tid = omp_get_thread_num();
    nth = omp_get_num_threads();
#endif
    int64_t r0 = nrun * tl.tid / nth, r1 = nrun * (tl.tid + 1) / nth;
    int64_t t = r0 * p->nseq, t1 = r1 * p->nseq, idx[TFE_MAX_RANK + 2];
    /* decode the first tile, then step the odometer (a decode per tile costs two divisions
     * per dim: at high rank as much as a small tile's copy) */
    if (t < t1) tfe__ktile_at(p, t, &tl);
    for (int q = 0; q < p->no; q++) { idx[q] = t % p->ocount[q]; t /= p->ocount[q]; }
    for (t = r0 * p->nseq; t < t1; t++) {
      /* the step to the next tile (tl.nx, also for the tile's own prefetches), then the tile */
      int qs = 0; /* (odometer dims the step moves) */
      tl.i0 = p->no > 0 ? idx[0] : 0;
      for (int o = 0; o < p->nops; o++) tl.nx[o] = 0;
      for (int q = 0; q < p->no && t + 1 < t1; q++) {
        bool wrap = idx[q] + 1 == p->ocount[q];
        for (int o = 0; o < p->nops; o++) tl.nx[o] += wrap ? -(p->ocount[q] - 1) * p->ostep[o][q] : p->ostep[o][q];
        qs = q + 1;
        if (!wrap) break;
      }
      fn(ctx, p, &tl);
      for (int o = 0; o < p->nops; o++) tl.off[o] += tl.nx[o];
      for (int q = 0; q < qs; q++) {
        if (++idx[q] == p->ocount[q]) idx[q] = 0;
        if (p->oclip[q]) tfe__ktile_clip(p, q, idx[q], &tl);
      }
    }
    tfe__ksfence();
  }
}
#endif
