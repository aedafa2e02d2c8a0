/* tenferro.h — the umbrella header: include this, link BLIS and LAPACKE (or libtenferro).
 * Rooms, bottom up (docs/architecture.md): core, tensor, kernel, prims, einsum, linalg, ad,
 * io (runtime, gpu and dist to come). Linkage modes: tenferro/config.h, docs/linkage.md.
 *
 * Every room header is included twice: first for its declarations (types, prototypes, the
 * generic front ends), then, unless TFE_HEADER, for its bodies (TFE__BODY_PHASE = 1). A unit
 * in declarations mode therefore parses only what a caller needs. */
#ifndef TENFERRO_H
#define TENFERRO_H

#include <tenferro/config.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <tenferro/core/core.h>
#include <tenferro/core/kinds.h>
#include <tenferro/tensor/tensor.h>
#include <tenferro/gen/generic.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/prims.h>
#include <tenferro/einsum/einsum.h>
#include <tenferro/linalg/linalg.h>
#include <tenferro/ad/ad.h>
#include <tenferro/io/io.h>

#if TFE__IMPL
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 1
#include <tenferro/core/state.h>
#include <tenferro/core/core.h>
#include <tenferro/core/kinds.h>
#include <tenferro/tensor/tensor.h>
#include <tenferro/kernel/kernel.h>
#include <tenferro/prims/prims.h>
#include <tenferro/einsum/einsum.h>
#include <tenferro/linalg/linalg.h>
#include <tenferro/ad/ad.h>
#include <tenferro/io/io.h>
#undef TFE__BODY_PHASE
#define TFE__BODY_PHASE 0
#endif

#ifdef __cplusplus
}
#endif

#endif
