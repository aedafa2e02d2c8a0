/* tenferro.h — the umbrella header: include this, link BLIS and LAPACKE.
 * Rooms, bottom up (docs/architecture.md): core, tensor, kernel, prims, einsum, linalg, ad,
 * runtime, gpu, io, dist. */
#ifndef TENFERRO_H
#define TENFERRO_H

#include <tenferro/config.h>
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

#endif
