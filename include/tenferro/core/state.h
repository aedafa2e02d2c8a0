/* tenferro/core/state.h — the one process-state block, and the one thread-local block.
 *
 * Everything tenferro keeps between calls lives here: the buffer pool, the allocation hook,
 * the settings and tuning knobs, the plan caches, the workspaces, the BLIS binding's state.
 * The umbrella includes this file at the start of the bodies, after every room's
 * declarations, so that the block can hold any room's types.
 *
 * Linkage: in the implementation unit the blocks are file-local (nothing exported); in the
 * default mode they are weak, so that every unit of a program shares one. Their symbol names
 * carry TFE_MAX_RANK, the only setting that changes their layout: units built with other
 * values never share a block of another layout. Rooms add members only within their own
 * section, with their defaults in the same section of TFE__STATE_INIT. */
#if TFE__BODY_PHASE && !defined(TENFERRO_CORE_STATE_BODY)
#define TENFERRO_CORE_STATE_BODY

typedef struct tfe__state {
  tfe_tuning tune;
  /* ---- core room ------------------------------------------------------------------------ */
  tfe_allocator allocator; /* zero: the default allocator with the pool */
  tfe__pool pool;
  int num_threads;         /* 0: OpenMP's default */


  /* ---- kernel room ---------------------------------------------------------------------- */
  /* Path counters for tests (kernel/plan.h lists what each one counts), counted only while
   * kernel_stat_on is set. */
  int kernel_stat_on;
  int64_t kernel_stat[96];


  /* ---- prims room ----------------------------------------------------------------------- */
  tfe__prims_state prims;  /* plan cache, workspace, backend registry, BLIS binding (prims.h) */


  /* ---- einsum room ---------------------------------------------------------------------- */
  tfe__einsum_state einsum; /* plan cache, arena workspace, profiling hook (einsum.h) */


  /* ---- runtime room --------------------------------------------------------------------- */
  tfe__rt_state rt;         /* compute devices, pending-work tracking, stream serials (runtime.h) */


} tfe__state;

#define TFE__STATE_INIT { \
  .tune = TFE__TUNING_DEFAULTS, \
  /* core */ \
  .pool = {.max = -1, .fail_countdown = -1}, \
  \
  \
  /* kernel */ \
  .kernel_stat_on = 0, .kernel_stat = {0}, \
  \
  \
  /* prims: all zero (an empty cache, no kept block, the registry filled on first use) */ \
  \
  \
  \
  /* einsum: all zero (an empty cache, no kept block, no hook) */ \
  \
  \
  \
  /* runtime: all zero (devices discovered on first use, nothing pending) */ \
  \
  \
}

/* Per thread: the last error, and what each room keeps per thread. */
typedef struct tfe__tstate {
  /* ---- core room ------------------------------------------------------------------------ */
  char errmsg[TFE_ERRMSG_MAX];
  tfe_status errcode;
  bool pool_recycled; /* the last large default allocation was a kept buffer (pages written) */
  int numa_node1;     /* the NUMA node this thread is bound to, plus 1 (0: unbound; runtime sets it) */


  /* ---- linalg room ---------------------------------------------------------------------- */
  const struct tfe_prims_backend *la_backend; /* chosen by a dtype-tagged call for its typed call */

  /* ---- ad room -------------------------------------------------------------------------- */
  const struct tfe_prims_backend *ad_backend; /* the tape's rules compute in this backend's memory
                                               * (NULL: host memory; ad/ad.h) */
  long ad_host_rules[3]; /* rules of values outside host memory that ran on the host (transfers),
                          * by kind (primal, frule, rrule): counted by ad_host_ (ad/tape_tpl.h) */

  /* ---- einsum room ---------------------------------------------------------------------- */
  tfe__ein_progress_set ein_progress; /* tfe_einsum_set_progress (this thread) */
  tfe__ein_progress_set ein_call;     /* opts.progress of the running call (exec.h) */
  double ein_pc0[2];                  /* wall and process CPU seconds where this thread's planning
                                       * began (path.h, tfe__ein_pclock) */
  double ein_work;                    /* planner work units since then (tfe__bs_log2 counts them) */
  bool ein_capped;                    /* the wall time ran ahead of the work in this planning */

  /* ---- runtime room --------------------------------------------------------------------- */
  tfe__rt_tstate rt;  /* scoped devices and contexts, the thread count of this thread, task flag */


  /* ---- other rooms ---------------------------------------------------------------------- */
  int rooms_reserved_;


} tfe__tstate;

#define tfe__st TFE_CAT(tfe__state_r, TFE_MAX_RANK)
#define tfe__ts TFE_CAT(tfe__tstate_r, TFE_MAX_RANK)
TFE_GLOBAL tfe__state tfe__st = TFE__STATE_INIT;
TFE_GLOBAL TFE_THREAD_LOCAL tfe__tstate tfe__ts;

#endif
