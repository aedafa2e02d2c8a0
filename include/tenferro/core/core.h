/* tenferro/core/core.h — the core room: what every other room stands on.
 *
 *   status.h   tfe_status, tfe_status_name, tfe_last_error / tfe_last_status / tfe_clear_error,
 *              TFE_FAIL / TFE_TRY / TFE_CHECK_NULL, overflow-checked size arithmetic
 *   alloc.h    tfe_allocator, tfe_set_allocator / tfe_get_allocator, the large-buffer pool
 *              (tfe_pool_limit, tfe_pool_kept_bytes, tfe_pool_set_limit, tfe_pool_trim)
 *   threads.h  tfe_set_num_threads / tfe_get_num_threads
 *   lock.h     the one lock primitive (internal)
 *   tuning.h   tfe_tuning: every tuning knob, tfe_tuning_get / tfe_tuning_set / tfe_tuning_default
 *   kinds.h    the scalar-kind table, tfe_dtype and its info, tropical scalar types, semirings
 *   state.h    the process-state block (bodies only)
 * See docs/core.md. */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_CORE_H
#define TENFERRO_CORE_H
#include <tenferro/config.h>

/* The library's version, for a program that links libtenferro (the macros in config.h give the
 * version of the headers it was compiled with). */
TFE_API const char *tfe_version_string(void);
TFE_API int tfe_version(void);

/* Link-time ABI tag. TFE_MAX_RANK sizes every layout and view, so a unit in declarations mode
 * must agree with the library it links: the library defines tfe_abi_rank<N> for its value N
 * and every such unit refers to the one of its own value (a file-local pointer, kept by the
 * `used` attribute), so that a mismatch fails to link: "undefined reference to
 * `tfe_abi_rank8'". The default mode links no library and needs no tag. */
#define TFE__ABI_TAG TFE_CAT(tfe_abi_rank, TFE_MAX_RANK)
#if defined(TFE_IMPLEMENTATION)
__attribute__((visibility("default"))) extern const int TFE__ABI_TAG;
#elif defined(TFE_HEADER)
extern const int TFE__ABI_TAG;
static const int *const tfe__abi_ref __attribute__((used)) = &TFE__ABI_TAG;
#endif

#endif
#endif
#include <tenferro/core/status.h>
#include <tenferro/core/lock.h>
#include <tenferro/core/alloc.h>
#include <tenferro/core/threads.h>
#include <tenferro/core/tuning.h>
#include <tenferro/core/lru.h>
#include <tenferro/core/workspace.h>
#if TFE__BODY_PHASE && !defined(TENFERRO_CORE_BODY)
#define TENFERRO_CORE_BODY
TFE_API const char *tfe_version_string(void) { return TFE_VERSION_STRING; }
TFE_API int tfe_version(void) { return TFE_VERSION; }
#if defined(TFE_IMPLEMENTATION)
const int TFE__ABI_TAG = TFE_MAX_RANK;
#endif
#endif
