/* tenferro/runtime/runtime.h — runtime room: compute devices, streams, events, asynchronous
 * operations (docs/runtime.md). The buffer pools per memory space live in core/alloc.h.
 *
 *   device.h     compute devices (tfe_device_list, tfe_cpu_device_add), the scoped device and
 *                context (tfe_with_device, tfe_with_context), the tensor compute device
 *   stream.h     events (tfe_event_*), streams (tfe_stream_new / sync / record / wait_event),
 *                pending results (tfe_wait, tfe_ready), the records of pending work on storage
 *   async.h      asynchronous forms: tfe_einsum_async_dyn, tfe_einsum_into_async_dyn,
 *                tfe_contract_async_dyn, tfe_map/zip/copy/reduce_async_dyn, tfe_transfer_async_dyn,
 *                tfe_svd/qr/eigh/solve_async_dyn
 *   async_tpl.h  per kind S: tfe_einsum_async_S; generic tfe_einsum_async(s, &out, ...)
 *
 * The synchronous API does not go through the runtime: a call on plain views costs one more
 * thread-local load (is a scoped device or context open?), nothing else. */
#include <tenferro/runtime/stream.h>
#include <tenferro/runtime/device.h>
#include <tenferro/runtime/async.h>
#ifndef TFE_NO_EINSUM
#define TFE_TEMPLATE <tenferro/runtime/async_tpl.h>
#include <tenferro/gen/foreach_kind.h>
#undef TFE_TEMPLATE
#if !TFE__BODY_PHASE && !defined(TENFERRO_RUNTIME_GENERIC_H)
#define TENFERRO_RUNTIME_GENERIC_H
#define tfe_einsum_async(s, out, expr, n, ops, opts) \
  _Generic((out), TFE_GCASES_ALL(einsum_async, tensor))(s, out, expr, n, ops, opts)
#endif
#endif
