/* tenferro/core/tuning.h — every tuning knob of tenferro in one struct, with get and set.
 *
 * The defaults are what the benchmarks in docs/benchmarks.md were measured with; the knobs
 * exist for experiments and for machines unlike ours, never for correctness (every value
 * gives the same results). Read the current values, change some, set them back:
 *
 *   tfe_tuning t = tfe_tuning_get();
 *   t.copy_tile_bytes = 1024;
 *   tfe_tuning_set(&t);          // validated: a bad value is refused, nothing changes
 *
 * The settings are process-wide; set them before starting work on several threads. What each
 * knob does is documented in the API page of its room (docs/kernel.md, docs/prims.md,
 * docs/einsum.md). Fields are only ever added at the end of a room's section. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_TUNING_H
#define TENFERRO_CORE_TUNING_H
#include <tenferro/config.h>
#include <tenferro/core/status.h>

typedef struct tfe_tuning {
  /* ---- kernel room (docs/kernel.md, "Tuning") ----------------------------------------- */
  /* Modes: -1 picks per CPU (the default where it exists), 0 off, 1 (2) on. Sizes in bytes
   * are converted to elements of the kind at hand (at least 8 elements where a tile needs it). */
  int64_t kernel_small_elems;      /* 1024: views up to this many elements run plain loops, unplanned */
  int64_t kernel_parallel_min;     /* 32768: fewer elements run on one thread */
  int64_t kernel_tiny_dim;         /* 8: a destination run shorter than this is tiny (gather tiles) */
  int64_t kernel_table_tile_bytes; /* -1: per CPU (2048 for 8-byte kinds on AMD with AVX-512, else
                                    * 512): table tiles span this much along the input, twice along G0 */
  int kernel_gather_all;           /* 0; 1: gather tiles for every transpose led by a tiny dim */
  int kernel_prefetch_strips;      /* 2: software prefetch of strided rows, in 8-row strips (0: off) */
  int64_t kernel_stream_min_bytes; /* 16 MiB: outputs from this size use streaming stores */
  int kernel_stream_edge_lines;    /* 1: partial edge lines of streamed runs streamed too (-1: AMD only) */
  int kernel_vector_gather;        /* 0: vector gathers for copy gather tiles only; 1 always; -1 never */
  int kernel_portable;             /* 0; 1: portable loops instead of the vector micro-kernels */
  int64_t copy_tile_bytes;         /* 512: transpose tiles along the source (x2 along the destination;
                                    * x2 again into written pages) */
  int64_t copy_run_split_bytes;    /* 256: shorter common runs continued outside a block are
                                    * tiled as a transpose (0: never) */
  int64_t copy_run_split_far_bytes; /* 2048: the same for shorter runs whose continuation the
                                    * destination reaches only a MiB or more later (0: never) */
  int64_t copy_run_prefetch_bytes; /* 512: run copies of large outputs prefetch this far ahead */
  int copy_buffered_tiles;         /* -1: per CPU; 2: streamed transposes through a tile buffer;
                                    * 1: only unaligned ones; 3: unaligned ones and aligned ones whose
                                    * columns fall in few lines of a 4 KiB page; 4: as 3 for table
                                    * tiles (G0 over several dims), as 1 for the others; 0: never */
  int copy_stream_narrow_columns;  /* 1: columns of tiles narrower than 8 streamed as whole lines */
  int copy_shifted_rims;           /* 1: rims of 4-, 8-, 16-byte strided transposes in register
                                    * blocks shifted back to the edge; 0: scalar loops */
  int copy_tile_pad;               /* 1: buffered transpose tiles keep their columns one line more
                                    * than a column apart (0: packed) */
  int copy_skew_lines;             /* 2: buffered tiles of 8- and 16-byte kinds (1 and more) and of
                                    * 2-byte kinds (2, 3: also 1-byte, with AVX-512 VBMI) on AVX-512
                                    * written line by line from joined register blocks, without
                                    * the buffer (0: buffered) */
  int copy_fresh_prefault;         /* 1: fresh destinations of transposing copies faulted in first */
  int copy_fresh_in_order;         /* -1 (AMD on): in-order fresh transposes written through the cache */
  int64_t copy_fresh_min_bytes;    /* 4 MiB: smaller fresh destinations take neither of the two */
  int kernel_table_input_runs;     /* 1: table tiles' input group takes only dims that continue the
                                    * input's contiguous run; 0: any dims up to the target */
  int copy_block_prefetch;         /* 2: rows of 1- and 2-byte register blocks prefetch the block
                                    * this many blocks ahead along the row (0: off) */
  int copy_block_prefetch_spread; /* 1: AVX2 1- and 2-byte register blocks issue their rows'
                                    * prefetches an eighth before each step (0: all before the block) */
  int copy_edge_stores;            /* 1: partial edge lines of streamed runs that take normal stores
                                    * as overlapping 16-, 8-, 4-byte stores (0: memcpy) */
  int64_t copy_source_chain_bytes; /* 2048: transpose tiles that read the input in pieces shorter
                                    * than this step first along the dims that continue them (0: never) */
  int copy_short_runs;             /* 1: the runs of table blocks copied by vector loads and stores
                                    * (overlapping pairs under 64 bytes); 0: element loops */
  int copy_table_runs;             /* 1: 1- and 2-byte table tiles whose input run spans several
                                    * dims of G1 transpose it whole (16-byte blocks); 0: dim by dim */
  int copy_narrow_source_tiles;    /* 0; 1: transpose tiles of 1-, 2- and 4-byte kinds span as many
                                    * elements along the source as f64's (fewer bytes); 0: bytes */
  int copy_gather_run_tiles;       /* -1 (AMD on): copy gather tiles whose destination run takes in
                                    * (cut) the source's unit-stride dim keep no column group */
  int copy_tiny_source_runs;       /* 1: copies led by a tiny dim whose transpose tiles read source
                                    * runs of 64+ bytes stay transposes (0: gather tiles) */
  int64_t elementwise_tile_bytes;  /* 0 (2048 where ops fuse, else 1024): map/zip transpose tiles
                                    * along the transposed input */
  int64_t elementwise_fused_map_tile_bytes; /* 512: the same for maps fused into the transpose */
  int64_t elementwise_run_bytes;   /* 2048: map/zip tiles along the destination */
  int64_t elementwise_gather_bytes; /* 2048: map/zip gather tiles along the destination */
  int elementwise_tile_buffers;    /* 1: whole-tile heap buffers; 0: strips on the stack */
  int64_t elementwise_strip_elems; /* 2^30: most elements of a stack strip (capped at 16 KiB) */
  int elementwise_fuse;            /* -1: per CPU; 2: f64 maps and zips fused into the register
                                    * transpose; 1: zips only; 0: never */
  int elementwise_stream_blocks;   /* 1: plain blocks of large outputs streamed; 0: normal stores */
  int64_t elementwise_column_cache_elems; /* 16384: most elements of one input's column cache */


  /* ---- prims room (docs/prims.md, "Tuning") -------------------------------------------- */
  int64_t contract_naive_work;   /* contractions of at most this many label combinations run the
                                    reference loops (128; 0: every non-empty one is planned); float
                                    kinds: at most a sixteenth of it, then the small engine where
                                    it takes them, up to it */
  int64_t contract_small_mnk;    /* largest m*n*k of one GEMM of a batch that the small-GEMM
                                    engine runs instead of BLIS (512000) */
  int64_t contract_small_buf;    /* most real elements of one thread's small-GEMM buffers (32768) */
  int64_t contract_small_mode;   /* small-GEMM engine: 0 by the crossover, 1 whenever its buffers
                                    fit, -1 never (0) */
  int64_t contract_small_orient; /* its orientation: 0 by cost, 1 never transposed, 2 always (0) */
  int64_t contract_loop_mode;    /* looping over labels that block fusion: 0 by cost, 1 whenever
                                    it saves a copy, -1 never (copy instead) (0) */
  int64_t contract_par_grain;    /* multiply-adds one more thread must get to be woken (2^20) */
  int64_t contract_plan_cache_size; /* contraction plans kept (256; 0: none) */
  int64_t semiring_gemm_isa;     /* tropical GEMM kernels: 0 the best the CPU runs, 1 generic C,
                                    2 AVX2, 3 AVX-512 (0) */


  /* ---- einsum room (docs/einsum.md, "Tuning") ------------------------------------------ */
  double einsum_write_weight;    /* cost of writing one intermediate element, in multiply-adds,
                                    for options that leave write_weight at 0 (0) */
  int64_t einsum_plan_cache_size; /* einsum plans kept (64; 0: none) */
  double einsum_plan_fraction;   /* TFE_PATH_AUTO with a time_budget: planning time as a share of
                                    the estimated contraction time (0.04; docs/einsum.md) */
  double einsum_plan_floor;      /* ... but at least this many seconds (0.015) */
  double einsum_plan_rate;       /* multiply-adds (plus elements written) per second and thread
                                    that the estimate assumes (2e10) */
  double einsum_plan_work_rate;  /* planner work units per second of the planning clock: the
                                    allowance is counted in work, so the path does not depend on
                                    the machine's load (1.5e8; 0: CPU time instead; docs/einsum.md) */


  /* ---- runtime room (docs/runtime.md, "Tuning") ---------------------------------------- */
  int64_t pool_reuse_classes;    /* larger size classes that may serve a request from the pool
                                    (1: a buffer at most ~1/4 above the request; 0: its own class) */
  int64_t pool_min_bytes;        /* smaller requests bypass the pool (0: every size is pooled) */


  /* ---- kernel room, session 20 (docs/kernel.md, "Tuning") ------------------------------ */
  int64_t copy_run_tile_bytes;     /* 1 MiB (4096 until session 45; a plain block holds 64 KiB): copies
                                    * whose common leading run is shorter than this and read alone by
                                    * a plain block (the source continues it along a dim the block
                                    * does not reach) are tiled as a transpose of runs
                                    * (0: only the copy_run_split_* rules) */
  int64_t copy_run_tile_cols;      /* 128: runs along the source per tile of those transposes */
  int copy_shared_run_dim;         /* 2: a transpose copy (4-byte and larger kinds; with 2, 1- and
                                    * 2-byte table tiles too) whose source's innermost run is under a
                                    * line and whose next source dim also continues the destination's
                                    * run (of a line or more) blocks that dim with the source (0: with
                                    * the destination) */
  int copy_half_blocks;            /* 1: transpose tiles of 4-byte kinds with 8-15 rows in 8x8 register
                                    * blocks (0: scalar loops) */
  int copy_rim_scalar_cols;        /* 3: column rims of strided transposes this narrow or narrower run
                                    * scalar loops rather than a shifted register block (0: never) */
  int copy_quarter_blocks;         /* 2: copies of 8- and 4-byte kinds whose destination run before the
                                    * input's is 4-7 elements: a transpose in 4x4 register blocks,
                                    * and of 16-byte kinds (their own 4x4 blocks: session 36);
                                    * 1: 8- and 4-byte kinds only (0: gather tiles) */
  /* ---- kernel room, session 21 (docs/kernel.md, "Tuning") ------------------------------ */
  int64_t copy_unit_run_bytes;     /* 255: a transposing copy whose leading run common to both operands
                                    * is at most this many bytes (2 or more elements) copies each run
                                    * as one unit, tiled as a transpose of units (0: never; at most 4096) */
  int64_t copy_lone_edge_bytes;    /* 512: a streamed buffered tile's column shorter than this that
                                    * goes out alone stores its partial edge lines normally (cached:
                                    * another tile completes them), not streamed (0: never) */
  int64_t copy_unit_tile_bytes;    /* 512: such tiles span this much along the source, twice along
                                    * the destination */
  int copy_unit_stream;            /* 1: streamed outputs of such copies go through a tile buffer and
                                    * out by streaming stores; 2: cached outputs through the buffer
                                    * too, out by memcpy (0: written in place) */
  int copy_unit_prefetch;          /* 1: buffered tiles of those copies prefetch their contiguous source
                                    * rows where the next tile reads them; 2: rows read through a
                                    * table too (0: none) */
  /* ---- kernel room, session 23 ---- */
  int copy_wide_tables;            /* 1: transposing copies of 1- and 2-byte kinds let G0's table take
                                    * up to 1 KiB of destination column (1024 / 512 entries) rather
                                    * than 256 entries (0: 256, as before session 23); 2: also
                                    * copies of units (units.h), up to 1024 units */
  int copy_next_prefetch;          /* 2: buffered transpose tiles ask for the next tile's source rows
                                    * while they stream their buffer out, and gather tiles of copies
                                    * for the next tile's source runs while they gather (session
                                    * 31); 1: buffered tiles only; 0: neither */
  int copy_flip_source_dims;       /* 4: a transposing copy walks the dims of its input group (G1)
                                    * that the input reads reversed the other way: 1 those after
                                    * the first, 2 the first too when G1 has more, 3 also tile
                                    * odometer dims (all without G1, else steps of at most 4 KiB
                                    * down the input), 4 also a lone G1 dim that is not the
                                    * input's run (session 44) (0: not) */
  int copy_table_run_cut;          /* 2: table tiles cut a G0 dim when the input's run (its innermost
                                    * dim and the dims it goes on through: after G0, and with 2 also
                                    * G0's after the cut one) fills register blocks (0: when the
                                    * innermost dim alone does, as before session 23) */
  /* ---- kernel room, session 24 ---- */
  int64_t copy_g1_run_bytes;       /* 32: a transpose tile's G1 stops after its first dim when that dim
                                    * is the input's run of at least this many bytes (and 8 elements
                                    * or 64 bytes) and the next would not continue it (0: never) */
  int copy_tiny_g0_wide_g1;        /* 1: a transposing copy whose G0 spans 32 bytes or less lets G1
                                    * take dims that continue the input's run up to four times its
                                    * target, with a table of up to 1024 entries (0: as before) */
  /* ---- kernel room, session 25 ---- */
  int64_t copy_buf_narrow_bytes;   /* 16: streamed transpose tiles of 1- and 2-byte kinds whose G1
                                    * spans this many bytes or more but less than a register block
                                    * (64 bytes) go through the tile buffer too (0: never) */
  int copy_g1_run_dims;            /* 1: copy_g1_run_bytes's run may span G1's first dims (those
                                    * continuing the input's run; 0: its first dim only) */

  /* ---- prims room, session 21 (docs/prims.md, "Tuning") -------------------------------- */
  int small_row_regs;              /* 1: on AVX (16 registers of 256 bits), the small engine's
                                    * kernels hold their reused vectors in registers (the vector
                                    * kernel's rows, the dot kernel's columns) rather than letting
                                    * the compiler fold their loads into every FMA, and load a
                                    * half-full last row vector (f64: 4k + 2 rows, e.g. a chain step
                                    * at D = 10) by a 128-bit load instead of a masked one (0: as
                                    * before session 21; the same results) */
  int64_t small_dot_depth;         /* -1: f64 GEMMs with both inputs depth-contiguous (a chain's T.B
                                    * step) up to this depth run the dot kernel (AVX), deeper ones
                                    * pack the transposed input; -1 picks 31 on 16-register targets
                                    * with small_row_regs on, else 32 (0: always packed; at most 32) */

  /* ---- prims room, session 26 (docs/prims.md, "Tuning") -------------------------------- */
  int small_wide_cols;             /* 1: on 32-register targets (AVX-512), the small engine's 1- and
                                    * 2-vector row blocks take up to 12 columns at a time (0: 6) */
  int64_t small_tn_pack_rows;      /* 5: f64 and f32 on AVX-512, GEMMs with both inputs
                                    * depth-contiguous (a chain's T.B step) and at least this many
                                    * rows (C's contiguous dimension) pack the transposed input by
                                    * 8 x 8 register transposes on the stack (at most 16 KiB) for
                                    * the vector kernel instead of the dot kernel (f64) or the
                                    * workspace (f32); those packed in the workspace use the same
                                    * transposes (0: never, as before) */
  int small_half_tail;             /* -1 (AMD on): on AVX-512, the small engine's 1- and 2-vector
                                    * row blocks run a masked last row vector of half the lanes
                                    * or fewer (f64 at D = 10: 8 + 2 rows) in a 256-bit register
                                    * (0: a masked 512-bit one) */

  /* ---- kernel room, session 27 (docs/kernel.md, "Tuning") ------------------------------- */
  int copy_stream_line_runs;       /* 1: copies of large (streamed) outputs made of runs of whole
                                    * lines gathered from several places (tn_light: runs of 16 f64)
                                    * stream those lines past the cache (0: normal stores) */
  int copy_interleave_rows;        /* 1: transpose tiles of 1- and 2-byte kinds with 2 to 15 (7)
                                    * rows whose destination columns follow one another (records
                                    * interleaved from a few rows) run 16-byte register transposes
                                    * (0: scalar loops) */

  /* ---- kernel room, session 28 (docs/kernel.md, "Tuning") ------------------------------- */
  int64_t copy_skew_run_bytes;     /* 8192: source run of the tiles copy_skew_lines 2 and 3 write
                                    * skewed (1- and 2-byte kinds; destination columns half as
                                    * many bytes) */
  int copy_deinterleave_rows;      /* 2: transposes of 1- and 2-byte kinds with 2 to 15 (7)
                                    * columns (short source records spread over a few
                                    * destination rows) run 16-byte register transposes, whole
                                    * aligned lines of streamed outputs streamed; 1: the same with
                                    * normal stores only (0: scalar loops) */

  /* ---- kernel room, session 29 (docs/kernel.md, "Tuning") ------------------------------- */
  int64_t copy_long_row_bytes;     /* -1: per build (8192 with AVX-512, else 0): transposes of
                                    * 4-, 8- and 16-byte kinds written in place into streamed
                                    * outputs take tiles of 16 source rows this long (0: never) */
  /* ---- kernel room, session 30 ---- */
  int copy_block_segments;         /* 2: transpose tiles of 8-byte kinds whose destination columns
                                    * run in segments at one stride (G1's first dim) run each
                                    * segment's whole blocks in one kernel call, two rows of 8x8
                                    * blocks (16 source rows) together; 1: one row of blocks a
                                    * call; 0: a pointer per column and block, as before */
  /* ---- kernel room, session 31 ---- */
  int copy_shared_keep;            /* 1: a transpose copy of elements of 8 bytes or more (kinds,
                                    * or short runs moved as units) whose G1 took a dim shared by
                                    * both runs (copy_shared_run_dim) keeps that plan where its G0
                                    * reads the input through a table; 0: rebuilt as table tiles,
                                    * as before */
  /* ---- kernel room, session 32 ---- */
  int copy_gather_blocks;          /* 1: gather tiles of 1- and 2-byte kinds move the columns that
                                    * are one source run (G1's leading dims) as register
                                    * transposes of rows read through G0's table; 0: a byte (or
                                    * pair) at a time, as before */
  int copy_unit_kinds;             /* 1: copies of 1- and 2-byte kinds whose common run is a unit of 4
                                    * bytes (copy_unit_run_bytes) run as copies of i32 where
                                    * aligned and compiled in; 2: also such runs that the source
                                    * reads backwards, into dense destinations (then turned
                                    * round in one pass); 0: as units, as before */
  int copy_short_rows;             /* 1: transpose tiles of 1- and 2-byte kinds with 2 to 15 (7) rows
                                    * and destination columns apart run 16-byte register
                                    * transposes storing each column's head; 0: scalar loops */
  int64_t copy_shared_g0_bytes;    /* 32: the least destination run (bytes) before a dim shared
                                    * by both runs that a 1- or 2-byte table plan whose source
                                    * run before that dim is 8-15 bytes leaves in G0, G1 taking
                                    * the shared dim (copy_shared_run_dim 2); 128: as before */
  int copy_run_piece_edges;        /* 1: a buffered tile's share of a run of destination columns
                                    * (copy_next_prefetch's groups cut runs at columns) streams its
                                    * edge lines as the whole run would; 0: a one-column share
                                    * under copy_lone_edge_bytes stores them normally, as before */
  int copy_chain_columns;          /* 1: a buffered tile whose destination columns follow one another
                                    * along a later G1 dim streams them out in that order, edges
                                    * streamed; 0: in G1's order, as before */
  int kernel_prefetch_l2;          /* -1: AMD only; 1: software prefetches of transposing copies
                                    * into L2 (prefetcht1), the L1's miss buffers left to the
                                    * loads; 0: into L1 (prefetcht0), as before */
  int copy_gather_source_run;      /* 1: gather tiles of 1-byte copies stop G0 at the first dim that
                                    * continues the source's run from its unit-stride dim once G0
                                    * holds a line; 0: G0 takes dims to its target, as before */
  int copy_small_wide;             /* 1: 16-byte register blocks of 1-byte transposes run two (AVX2)
                                    * or four (AVX-512BW) side by side where the tile's columns
                                    * allow; 2: of 2-byte ones too; 0: one at a time, as before */
  int copy_reverse_runs;           /* 1: runs read backwards (a reversed source dim common to both
                                    * runs) copied in 32-byte pieces reversed in registers, whole
                                    * lines of streamed outputs streamed; 0: element by element */
  int64_t copy_run_stream_bytes;   /* 256: tiles of one common run (either direction) of streamed
                                    * outputs stream runs of this many bytes and more, shorter
                                    * ones (two partial lines each) take normal stores; 0: none
                                    * streamed (forward ones as before) */

  /* ---- kernel room, session 36 (docs/kernel.md, "Tuning") ------------------------------- */
  int copy_skew_short_cols;        /* 1: copy_skew_lines' 2- and 4-byte form skips tiles of whole
                                    * destination columns shorter than the kind's break-even
                                    * (u16 under 896 bytes, f32 under 168), which take the buffer;
                                    * 0: every tile of whole columns skewed, as before */
  int copy_tile_slack;             /* 25: a transpose tile's group of one dim takes the whole dim
                                    * when it is at most this many percent longer than the tile's
                                    * cut (no thin tile of the rest); 0: cut as before */

  /* ---- kernel room, session 37 (docs/kernel.md, "Tuning") ------------------------------- */
  int64_t copy_buf_short_rows;     /* 128: streamed transpose tiles of 1- and 2-byte kinds with
                                    * 16 to 63 bytes of rows (fewer than a 64-byte register
                                    * block) whose destination columns follow one another for
                                    * this many bytes or more go through the tile buffer and out
                                    * as runs; 0: written in place by 16-byte blocks, as before */
  int64_t copy_short_row_prefetch; /* 1024: such tiles (1- and 2-byte, 16-63 bytes of rows, rows
                                    * under 2 KiB) ask, block by block, for their rows' lines in
                                    * the tile this many bytes of source on along the odometer
                                    * (whole tiles, at least one), else in the next tile; 0: no
                                    * prefetch, as before */
  int copy_skew_rim_pct;           /* 30: copy_skew_lines' 8- and 16-byte tiles whose rims (rows
                                    * and columns past the whole 8x8 or 4x4 blocks, scalar loops
                                    * there) exceed this percent of the tile take the tile buffer
                                    * (shifted register blocks); 100: always skewed, as before */
  int copy_quarter_st;             /* 2: strided transpose tiles of 4- and 8-byte kinds with 4 rows
                                    * up to a register block run 4x4 register blocks, f64 tiles of
                                    * 4 rows into one run of a streamed output with streaming
                                    * stores; 1: all with normal stores; 0: element-wise loops,
                                    * as before */
  int64_t copy_skew_buf_src_bytes; /* -1: per CPU (AMD 512 since session 45, 5632 before; else
                                    * 0); > 0: 2-byte tiles of
                                    * copy_skew_lines' form whose source run holds this many
                                    * bytes or more take the tile buffer (0: skewed, as before) */
  int64_t copy_narrow_records;     /* copies of this many bytes or more between records of r
                                    * elements (r * es < 64 bytes, r <= 8) and r streams, either
                                    * way, run whole vectors through two-vector permutes
                                    * (kernel/records.h; AVX-512); 1 (default): every such copy
                                    * that is planned (over kernel_small_elems elements); 0: their
                                    * tile plans, as before */
  int64_t copy_col_stream_bytes;   /* 512: columns of this many bytes or more of short-run
                                    * transpose tiles (runs from a table, adjacent in the
                                    * destination) of streamed outputs are assembled in an L1
                                    * buffer and streamed as whole lines; 0: normal stores run by
                                    * run, as before */
  int64_t copy_skew_min_row_bytes; /* 512: 8- and 16-byte skewed-line tiles (copy_skew_lines)
                                    * whose source rows (G1) hold fewer bytes take the tile buffer;
                                    * 0: skewed, as before */
  int copy_records_src_order;      /* 1: copies between records and streams (copy_narrow_records)
                                    * walk their outer dims in the source's order; 0: in the
                                    * destination's, as before */
  int64_t copy_run_tile_col_bytes; /* 3072: a run tile's G0 (copy_run_tile_bytes) takes whole
                                    * runs, adjacent in the destination, until its column holds this
                                    * many bytes, at least 4 runs (its table up to 1024 elements);
                                    * 0: 4 runs within 256 elements, as before */
  int64_t copy_buf_rim_pct;        /* 25: streamed 1- and 2-byte transposes whose aligned tiles
                                    * would be written in place take the tile buffer where their
                                    * rims (past whole register blocks) hold this percentage of the
                                    * tile or more; 0: in place, as before (copy_buffered_tiles 2-4) */
  int64_t copy_skew_tile_bytes;    /* 1024: 2-D transposes of 8- and 16-byte kinds into unaligned
                                    * columns (skewed lines) take tiles this many bytes along the
                                    * source (copy_tile_bytes' scale); 0: as copy_tile_bytes says,
                                    * as before session 41 (AMD only in session 41) */
  int copy_buf_short_cols;         /* 1: tiles of copy_buf_short_rows whose G1 is under a
                                    * register block's columns (64 bytes) stay in place where each
                                    * tile is a dense block of both operands and the next one
                                    * follows it in both (batches of small transposes); 0: buffered,
                                    * as before */
  int64_t copy_run_table_entries;  /* 1024: copies of short common runs (no transposed input) whose
                                    * G0 is a table (a reversed or gapped dim between the runs) take
                                    * up to this many entries into it; 256: as before */
  int64_t copy_small_run_bytes;    /* 64: the runs of such table blocks, 4 bytes to this many long
                                    * and read forwards, copied by a loop of two overlapping loads
                                    * and stores a run (normal stores); 0: run by run through
                                    * tfe__kcopy_short or the streamed column, as before */
  int copy_wide_rows;              /* 2: transpose tiles of 1- and 2-byte kinds whose source rows hold
                                    * 9-63 bytes moved in register blocks of 64 / es rows (each column
                                    * 64 bytes a block), the next block's rows prefetched; 1: without
                                    * the prefetch; 0: 16-byte blocks of 16 / es rows, as before */
  int copy_chain_next_prefetch;    /* 1: buffered transpose tiles that end a chain of tiles along the
                                    * source's rows ask for the thread's next tile's rows while
                                    * streaming out, as tiles without chains do (0: not) */
  int copy_rev_records;            /* 1: columns of records that the source reads backwards (a
                                    * reversed innermost dim common to both, at most 64 bytes, its
                                    * records one after another in both) copied a register of
                                    * records at a time (session 44) (0: record by record) */
  int64_t copy_run_tile_max_bytes; /* 262144: a run tile (copy_run_tile_bytes) over runs longer than
                                    * copy_run_tile_max_bytes / copy_run_tile_cols takes fewer runs
                                    * along the source, this many bytes of them but 8 at least, so
                                    * that long runs still make tiles for every thread (session 45;
                                    * 0: copy_run_tile_cols runs whatever their length) */
  int copy_unit_flips;             /* 1: copies of 1- and 2-byte kinds without a transpose whose
                                    * short common run (16 elements or more, units.h) the plan
                                    * reads through a G0 table (numpy's flips of an inner axis:
                                    * runs of 33 bytes in reverse order) planned as units; 0: run
                                    * by run in tiles of 1024 elements, as before */
  int64_t copy_both_run_tile_bytes; /* 32768: copies whose destination and source runs are short
                                    * and share dims (permutations of many small dims), planned as
                                    * tiles that read or write short pieces (the rules:
                                    * copy_both_run_rho_bytes, _wide, _gathers), run as tiles of
                                    * whole runs on both sides of at most this many bytes
                                    * (kernel/bothruns.h, sessions 47-48; at most 32768); 0: off */
  int64_t copy_both_run_rho_bytes; /* -1: 64 where copy_next_spread asks for unbuffered tiles
                                    * (AMD), else 128: "short columns": unbuffered transpose tiles
                                    * whose G0 spans fewer bytes than this (session 47: 32, 48: 128) */
  int copy_both_run_wide;          /* -1: copies of 4-, 8- and 16-byte kinds planned as gather
                                    * tiles or as transpose tiles whose G1 spans under 64 bytes run
                                    * as tiles of both runs too, and on AMD also 8-byte gathers
                                    * without footprint asks and transpose tiles under 8 KiB
                                    * (session 48); 1: those everywhere;
                                    * 0: off */
  int copy_both_run_gathers;       /* 2: 1- and 2-byte copies planned as gather tiles (with register
                                    * blocks too) or as unbuffered transpose tiles whose G1 spans
                                    * under 64 bytes run as tiles of both runs (session 48), gathers
                                    * of register blocks of u8 and of u16 rows of 9-63 bytes too
                                    * (session 51); 1: those not (session 48); 0: as session 47
                                    * (gathers without register blocks, short G0s) */
  int copy_both_run_ask;           /* 2: tiles of both runs ask for the next tile's source runs
                                    * into L2 (prefetcht1; session 48); 1: into L1 (prefetcht0,
                                    * session 47); 0: not at all */
  /* ---- kernel room, session 49 ---- */
  int copy_next_spread;            /* -1: 2 on AMD, else 0; 2: transpose tiles of register blocks
                                    * with source rows under 1 KiB ask for the next tile's rows a
                                    * share before each block (1- and 2-byte kinds) or row of blocks
                                    * (session 49); 1: buffered tiles only; 0: none (buffered tiles
                                    * ask while streaming out, as before) */
  /* ---- kernel room, session 50 ---- */
  int64_t copy_both_run_split_bytes; /* 256: tiles of both runs whose shorter run stops under
                                    * this many bytes because a whole dim would not fit split a
                                    * dim in two (at an exact divisor) where that lengthens the
                                    * shorter run (session 50); 0: whole dims only */
  int64_t copy_both_run_unit_bytes; /* 128: copies whose destination and source start with the
                                    * same dim (a common run) of at most this many bytes, planned
                                    * for tiles of both runs, run them with that run as the element
                                    * (session 50); 0: such copies keep their tile plans */
  int64_t copy_both_run_tiny_bytes; /* 1024: 1- and 2-byte transposes planned as buffered tiles
                                    * of fewer bytes than this run as tiles of both runs, their
                                    * rows element by element where the rows do not lie together
                                    * in the buffer (session 50); 0: they keep their tiles */
  int copy_both_run_flips;         /* 1: copies planned for tiles of both runs whose source run
                                    * is read backwards (its unit-stride dim or a dim continuing
                                    * it reversed, not one of the destination's run) walk those
                                    * dims the other way in both operands, so that the tiles take
                                    * them (session 52); 0: such copies keep the tile plans */
  int copy_footprint_reversed;     /* 1: gather tiles of copies whose source has dims read
                                    * backwards ask for the next tile's runs too, those dims taken
                                    * by |stride| (session 52); 0: such tiles ask for nothing */
  int copy_run_g1_table;           /* 2: transposes of kinds of at most this many bytes whose G1
                                    * starts with two dims that make one input run (the second
                                    * read reversed, or apart in the output) take G1 tables of up
                                    * to TFE__KTAB entries, so that a tile reads that run over both
                                    * dims (session 52); 0: G1 tables of TFE__KTAB_STD entries */
  int64_t copy_records_edge_bytes; /* 2048: copies between records and streams of 4-, 8- and
                                    * 16-byte kinds (copy_narrow_records) whose slices write
                                    * partial lines run there only with streams of this many bytes
                                    * or more (joins: half), else as tiles (session 50); 0: always */
} tfe_tuning;

/* The defaults, one initializer per room section, in the order of the fields above. */
#define TFE__TUNING_DEFAULTS { \
  /* kernel */ \
  .kernel_small_elems = 1024, .kernel_parallel_min = 32768, .kernel_tiny_dim = 8, \
  .kernel_table_tile_bytes = -1, .kernel_gather_all = 0, .kernel_prefetch_strips = 2, \
  .kernel_stream_min_bytes = (int64_t)16 << 20, .kernel_stream_edge_lines = 1, \
  .kernel_vector_gather = 0, .kernel_portable = 0, .copy_tile_bytes = 512, \
  .copy_run_split_bytes = 256, .copy_run_split_far_bytes = 2048, .copy_run_prefetch_bytes = 512, .copy_buffered_tiles = -1, \
  .copy_stream_narrow_columns = 1, .copy_shifted_rims = 1, .copy_tile_pad = 1, .copy_skew_lines = 2, .copy_fresh_prefault = 1, .copy_fresh_in_order = -1, \
  .copy_fresh_min_bytes = (int64_t)4 << 20, .kernel_table_input_runs = 1, .copy_block_prefetch = 2, .copy_block_prefetch_spread = 1, .copy_edge_stores = 1, .copy_source_chain_bytes = 2048, .copy_short_runs = 1, .copy_table_runs = 1, .copy_narrow_source_tiles = 0, .copy_gather_run_tiles = -1, .copy_tiny_source_runs = 1, .elementwise_tile_bytes = 0, \
  .elementwise_fused_map_tile_bytes = 512, .elementwise_run_bytes = 2048, \
  .elementwise_gather_bytes = 2048, .elementwise_tile_buffers = 1, \
  .elementwise_strip_elems = (int64_t)1 << 30, .elementwise_fuse = -1, \
  .elementwise_stream_blocks = 1, .elementwise_column_cache_elems = 16384, \
  /* prims */ .contract_naive_work = 128, .contract_small_mnk = 512000, .contract_small_buf = 32768, \
  .contract_small_mode = 0, .contract_small_orient = 0, .contract_loop_mode = 0, \
  .contract_par_grain = (int64_t)1 << 20, .contract_plan_cache_size = 256, .semiring_gemm_isa = 0, \
  /* einsum */ .einsum_write_weight = 0, .einsum_plan_cache_size = 64, .einsum_plan_fraction = 0.04, \
  .einsum_plan_floor = 0.015, .einsum_plan_rate = 2e10, .einsum_plan_work_rate = 1.5e8, \
  /* runtime */ .pool_reuse_classes = 1, .pool_min_bytes = 0, \
  /* kernel (session 20) */ .copy_run_tile_bytes = 1048576, .copy_run_tile_cols = 128, .copy_shared_run_dim = 2, .copy_half_blocks = 1, .copy_rim_scalar_cols = 3, .copy_quarter_blocks = 2, \
  /* prims (session 21) */ .small_row_regs = 1, .small_dot_depth = -1, \
  /* kernel (session 21) */ .copy_unit_run_bytes = 255, .copy_unit_tile_bytes = 512, .copy_lone_edge_bytes = 512, .copy_unit_stream = 1, .copy_unit_prefetch = 1, \
  /* kernel (session 23) */ .copy_wide_tables = 2, .copy_next_prefetch = 2, .copy_flip_source_dims = 4, .copy_table_run_cut = 2, \
  /* kernel (session 24) */ .copy_g1_run_bytes = 32, .copy_tiny_g0_wide_g1 = 1, \
  /* kernel (session 25) */ .copy_buf_narrow_bytes = 16, .copy_g1_run_dims = 1, \
  /* prims (session 26) */ .small_wide_cols = 1, .small_tn_pack_rows = 5, .small_half_tail = -1, \
  /* kernel (session 27) */ .copy_stream_line_runs = 1, .copy_interleave_rows = 1, \
  /* kernel (session 28) */ .copy_skew_run_bytes = 8192, .copy_deinterleave_rows = 2, \
  /* kernel (session 29) */ .copy_long_row_bytes = -1, \
  /* kernel (session 30) */ .copy_block_segments = 2, \
  /* kernel (session 31) */ .copy_shared_keep = 1, \
  /* kernel (session 32) */ .copy_gather_blocks = 1, .copy_unit_kinds = 2, .copy_short_rows = 1, \
  /* kernel (session 33) */ .copy_shared_g0_bytes = 32, .copy_run_piece_edges = 1, .copy_chain_columns = 1, \
  /* kernel (session 34) */ .kernel_prefetch_l2 = -1, .copy_gather_source_run = 1, .copy_small_wide = 1, \
  /* kernel (session 35) */ .copy_reverse_runs = 1, .copy_run_stream_bytes = 256, \
  /* kernel (session 36) */ .copy_skew_short_cols = 1, .copy_tile_slack = 25, \
  /* kernel (session 37) */ .copy_buf_short_rows = 128, .copy_short_row_prefetch = 1024, .copy_skew_rim_pct = 30, .copy_quarter_st = 2, \
  /* kernel (session 38) */ .copy_skew_buf_src_bytes = -1, \
  /* kernel (session 39) */ .copy_narrow_records = 1, \
  /* kernel (session 40) */ .copy_col_stream_bytes = 512, .copy_skew_min_row_bytes = 512, .copy_records_src_order = 1, \
  /* kernel (session 41) */ .copy_run_tile_col_bytes = 3072, .copy_buf_rim_pct = 25, .copy_skew_tile_bytes = 1024, .copy_buf_short_cols = 1, \
  /* kernel (session 42) */ .copy_run_table_entries = 1024, .copy_small_run_bytes = 64, \
  /* kernel (session 43) */ .copy_wide_rows = 2, .copy_chain_next_prefetch = 1, \
  /* kernel (session 44) */ .copy_rev_records = 1, \
  /* kernel (session 45) */ .copy_run_tile_max_bytes = 262144, \
  /* kernel (session 46) */ .copy_unit_flips = 1, \
  /* kernel (session 47) */ .copy_both_run_tile_bytes = 32768, .copy_both_run_rho_bytes = -1, \
  /* kernel (session 48) */ .copy_both_run_wide = -1, .copy_both_run_gathers = 2, .copy_both_run_ask = 2, \
  /* kernel (session 49) */ .copy_next_spread = -1, \
  /* kernel (session 50) */ .copy_both_run_split_bytes = 256, .copy_both_run_unit_bytes = 128, .copy_both_run_tiny_bytes = 1024, .copy_records_edge_bytes = 2048, \
  /* kernel (session 52) */ .copy_run_g1_table = 2, .copy_both_run_flips = 1, .copy_footprint_reversed = 1, \
}

/* The values in use now (the defaults until tfe_tuning_set). */
TFE_API tfe_tuning tfe_tuning_get(void);
/* The defaults, whatever was set since. */
TFE_API tfe_tuning tfe_tuning_default(void);
/* Checks every field, then replaces all of them; on error nothing changes. */
TFE_API tfe_status tfe_tuning_set(const tfe_tuning *t);

#endif
#elif !defined(TENFERRO_CORE_TUNING_BODY) /* bodies */
#define TENFERRO_CORE_TUNING_BODY
/* kernel room: every knob in its range (docs/kernel.md, "Tuning"). */
#define TFE__TUNE_RANGE(f, lo, hi) \
  do { \
    if (t->f < (lo) || t->f > (hi)) \
      return TFE_FAIL_AT(TFE_ERR_INVALID, "tfe_tuning_set", "field %s is %lld, outside [%lld, %lld]", \
                         #f, (long long)t->f, (long long)(lo), (long long)(hi)); \
  } while (0)
TFE_INTERNAL tfe_status tfe__tuning_check_kernel(const tfe_tuning *t) {
  const int64_t big = (int64_t)1 << 40, tile = (int64_t)1 << 24;
  TFE__TUNE_RANGE(kernel_small_elems, 0, big);
  TFE__TUNE_RANGE(kernel_parallel_min, 0, big);
  TFE__TUNE_RANGE(kernel_tiny_dim, 0, big);
  if (t->kernel_table_tile_bytes != -1) TFE__TUNE_RANGE(kernel_table_tile_bytes, 1, tile);
  TFE__TUNE_RANGE(kernel_gather_all, 0, 1);
  TFE__TUNE_RANGE(kernel_prefetch_strips, 0, 64);
  TFE__TUNE_RANGE(kernel_stream_min_bytes, 0, big);
  TFE__TUNE_RANGE(kernel_stream_edge_lines, -1, 1);
  TFE__TUNE_RANGE(kernel_vector_gather, -1, 1);
  TFE__TUNE_RANGE(kernel_portable, 0, 1);
  TFE__TUNE_RANGE(copy_tile_bytes, 1, tile);
  TFE__TUNE_RANGE(copy_run_split_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_run_split_far_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_run_prefetch_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_buffered_tiles, -1, 4);
  TFE__TUNE_RANGE(copy_stream_narrow_columns, 0, 1);
  TFE__TUNE_RANGE(copy_shifted_rims, 0, 1);
  TFE__TUNE_RANGE(copy_tile_pad, 0, 1);
  TFE__TUNE_RANGE(copy_block_prefetch, 0, 64);
  TFE__TUNE_RANGE(copy_block_prefetch_spread, 0, 1);
  TFE__TUNE_RANGE(copy_edge_stores, 0, 1);
  TFE__TUNE_RANGE(copy_skew_lines, 0, 3);
  TFE__TUNE_RANGE(copy_fresh_prefault, 0, 1);
  TFE__TUNE_RANGE(copy_fresh_in_order, -1, 1);
  TFE__TUNE_RANGE(copy_fresh_min_bytes, 0, big);
  TFE__TUNE_RANGE(kernel_table_input_runs, 0, 1);
  TFE__TUNE_RANGE(copy_source_chain_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_short_runs, 0, 1);
  TFE__TUNE_RANGE(copy_table_runs, 0, 1);
  TFE__TUNE_RANGE(copy_narrow_source_tiles, 0, 1);
  TFE__TUNE_RANGE(copy_gather_run_tiles, -1, 1);
  TFE__TUNE_RANGE(copy_tiny_source_runs, 0, 1);
  TFE__TUNE_RANGE(copy_run_tile_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_run_tile_cols, 1, 4096);
  TFE__TUNE_RANGE(copy_shared_run_dim, 0, 2);
  TFE__TUNE_RANGE(copy_half_blocks, 0, 1);
  TFE__TUNE_RANGE(copy_rim_scalar_cols, 0, 64);
  TFE__TUNE_RANGE(copy_quarter_blocks, 0, 2);
  TFE__TUNE_RANGE(small_row_regs, 0, 1);
  TFE__TUNE_RANGE(small_dot_depth, -1, 32); /* (prims, session 21: checked with the late fields) */
  TFE__TUNE_RANGE(copy_unit_run_bytes, 0, 4096);
  TFE__TUNE_RANGE(copy_unit_tile_bytes, 1, tile);
  TFE__TUNE_RANGE(copy_lone_edge_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_unit_stream, 0, 2);
  TFE__TUNE_RANGE(copy_unit_prefetch, 0, 2);
  TFE__TUNE_RANGE(copy_wide_tables, 0, 2);
  TFE__TUNE_RANGE(copy_next_prefetch, 0, 2);
  TFE__TUNE_RANGE(copy_flip_source_dims, 0, 4);
  TFE__TUNE_RANGE(copy_table_run_cut, 0, 2);
  TFE__TUNE_RANGE(copy_g1_run_bytes, 0, 1 << 20);
  TFE__TUNE_RANGE(copy_tiny_g0_wide_g1, 0, 1);
  TFE__TUNE_RANGE(copy_buf_narrow_bytes, 0, 64);
  TFE__TUNE_RANGE(small_wide_cols, 0, 1);
  TFE__TUNE_RANGE(small_half_tail, -1, 1);
  TFE__TUNE_RANGE(small_tn_pack_rows, 0, 1 << 20);
  TFE__TUNE_RANGE(copy_stream_line_runs, 0, 1);
  TFE__TUNE_RANGE(copy_interleave_rows, 0, 1);
  TFE__TUNE_RANGE(copy_deinterleave_rows, 0, 2);
  TFE__TUNE_RANGE(copy_skew_run_bytes, 64, 1 << 20);
  TFE__TUNE_RANGE(copy_long_row_bytes, -1, 1 << 20);
  TFE__TUNE_RANGE(copy_block_segments, 0, 2);
  TFE__TUNE_RANGE(copy_shared_keep, 0, 1);
  TFE__TUNE_RANGE(copy_gather_blocks, 0, 1);
  TFE__TUNE_RANGE(copy_unit_kinds, 0, 2);
  TFE__TUNE_RANGE(copy_short_rows, 0, 1);
  TFE__TUNE_RANGE(copy_shared_g0_bytes, 1, 65536);
  TFE__TUNE_RANGE(copy_run_piece_edges, 0, 1);
  TFE__TUNE_RANGE(copy_chain_columns, 0, 1);
  TFE__TUNE_RANGE(kernel_prefetch_l2, -1, 1);
  TFE__TUNE_RANGE(copy_gather_source_run, 0, 1);
  TFE__TUNE_RANGE(copy_small_wide, 0, 2);
  TFE__TUNE_RANGE(copy_reverse_runs, 0, 1);
  TFE__TUNE_RANGE(copy_run_stream_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_skew_short_cols, 0, 1);
  TFE__TUNE_RANGE(copy_tile_slack, 0, 100);
  TFE__TUNE_RANGE(copy_buf_short_rows, 0, 1 << 20);
  TFE__TUNE_RANGE(copy_short_row_prefetch, 0, 65536);
  TFE__TUNE_RANGE(copy_skew_rim_pct, 0, 100);
  TFE__TUNE_RANGE(copy_quarter_st, 0, 2);
  TFE__TUNE_RANGE(copy_skew_buf_src_bytes, -1, (int64_t)1 << 20);
  TFE__TUNE_RANGE(copy_narrow_records, 0, (int64_t)1 << 40);
  TFE__TUNE_RANGE(copy_col_stream_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_skew_min_row_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_records_src_order, 0, 1);
  TFE__TUNE_RANGE(copy_run_tile_col_bytes, 0, (int64_t)1 << 20);
  TFE__TUNE_RANGE(copy_buf_rim_pct, 0, 100);
  TFE__TUNE_RANGE(copy_skew_tile_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_buf_short_cols, 0, 1);
  TFE__TUNE_RANGE(copy_run_table_entries, 256, 1024);
  TFE__TUNE_RANGE(copy_small_run_bytes, 0, 64);
  TFE__TUNE_RANGE(copy_wide_rows, 0, 2);
  TFE__TUNE_RANGE(copy_chain_next_prefetch, 0, 1);
  TFE__TUNE_RANGE(copy_rev_records, 0, 1);
  TFE__TUNE_RANGE(copy_run_tile_max_bytes, 0, tile);
  TFE__TUNE_RANGE(copy_unit_flips, 0, 1);
  TFE__TUNE_RANGE(copy_both_run_tile_bytes, 0, 32768);
  TFE__TUNE_RANGE(copy_both_run_rho_bytes, -1, 4096);
  TFE__TUNE_RANGE(copy_both_run_wide, -1, 1);
  TFE__TUNE_RANGE(copy_both_run_gathers, 0, 2);
  TFE__TUNE_RANGE(copy_both_run_ask, 0, 2);
  TFE__TUNE_RANGE(copy_next_spread, -1, 2);
  TFE__TUNE_RANGE(copy_both_run_split_bytes, 0, 32768);
  TFE__TUNE_RANGE(copy_records_edge_bytes, 0, 1 << 20);
  TFE__TUNE_RANGE(copy_both_run_unit_bytes, 0, 4096);
  TFE__TUNE_RANGE(copy_both_run_tiny_bytes, 0, 65536);
  TFE__TUNE_RANGE(copy_run_g1_table, 0, 16);
  TFE__TUNE_RANGE(copy_both_run_flips, 0, 1);
  TFE__TUNE_RANGE(copy_footprint_reversed, 0, 1);
  TFE__TUNE_RANGE(copy_g1_run_dims, 0, 1);
  TFE__TUNE_RANGE(elementwise_tile_bytes, 0, tile);
  TFE__TUNE_RANGE(elementwise_fused_map_tile_bytes, 1, tile);
  TFE__TUNE_RANGE(elementwise_run_bytes, 1, tile);
  TFE__TUNE_RANGE(elementwise_gather_bytes, 1, tile);
  TFE__TUNE_RANGE(elementwise_tile_buffers, 0, 1);
  TFE__TUNE_RANGE(elementwise_strip_elems, 1, big);
  TFE__TUNE_RANGE(elementwise_fuse, -1, 2);
  TFE__TUNE_RANGE(elementwise_stream_blocks, 0, 1);
  TFE__TUNE_RANGE(elementwise_column_cache_elems, 0, big);
  return TFE_OK;
}
#undef TFE__TUNE_RANGE


TFE_API tfe_tuning tfe_tuning_default(void) {
  tfe_tuning t = TFE__TUNING_DEFAULTS;
  return t;
}
TFE_API tfe_tuning tfe_tuning_get(void) { return tfe__st.tune; }
/* Each room checks its own fields (a function per room, below its section's knobs). */
TFE_API tfe_status tfe_tuning_set(const tfe_tuning *t) {
  TFE_CHECK_NULL(t);
  /* kernel checks */
  TFE_TRY(tfe__tuning_check_kernel(t));

  /* prims checks */
  if (t->contract_naive_work < 0 || t->contract_small_mnk < 0 || t->contract_small_buf < 1 ||
      t->contract_par_grain < 1 || t->contract_plan_cache_size < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "contract_naive_work, contract_small_mnk and contract_plan_cache_size must be "
                                     ">= 0, contract_small_buf and contract_par_grain >= 1");
  if (t->contract_small_mode < -1 || t->contract_small_mode > 1 || t->contract_loop_mode < -1 ||
      t->contract_loop_mode > 1 || t->contract_small_orient < 0 || t->contract_small_orient > 2 ||
      t->semiring_gemm_isa < 0 || t->semiring_gemm_isa > 3)
    return TFE_FAIL(TFE_ERR_INVALID, "contract_small_mode and contract_loop_mode take -1, 0 or 1, "
                                     "contract_small_orient 0-2, semiring_gemm_isa 0-3");
  /* einsum checks */
  if (!(t->einsum_write_weight >= 0 && t->einsum_write_weight < 1e300) || t->einsum_plan_cache_size < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "einsum_write_weight must be finite and >= 0, einsum_plan_cache_size >= 0");
  if (!(t->einsum_plan_fraction >= 0 && t->einsum_plan_fraction <= 1e6) ||
      !(t->einsum_plan_floor >= 0 && t->einsum_plan_floor <= 86400) || !(t->einsum_plan_rate > 0 && t->einsum_plan_rate < 1e300) ||
      !(t->einsum_plan_work_rate == 0 || (t->einsum_plan_work_rate >= 1e3 && t->einsum_plan_work_rate < 1e300)))
    return TFE_FAIL(TFE_ERR_INVALID, "einsum_plan_fraction must lie in [0, 1e6], einsum_plan_floor in [0, 86400] s, "
                                     "einsum_plan_rate be finite and > 0, einsum_plan_work_rate 0 or finite and >= 1e3");
  /* runtime checks */
  if (t->pool_reuse_classes < 0 || t->pool_reuse_classes > 16 || t->pool_min_bytes < 0)
    return TFE_FAIL(TFE_ERR_INVALID, "pool_reuse_classes must lie in [0, 16], pool_min_bytes >= 0");

  tfe__st.tune = *t;
  return TFE_OK;
}
#endif
