/* tenferro.h — the umbrella header: include this, link BLIS and LAPACKE.
 * Rooms, bottom up (docs/architecture.md): core, tensor, kernel, prims, einsum, linalg, ad,
 * runtime, gpu, io, dist. */
#ifndef TENFERRO_H
#define TENFERRO_H

#include <tenferro/config.h>
#include <tenferro/core.h>
#include <tenferro/scalars.h>
#include <tenferro/tensor.h>
#include <tenferro/gen/generic.h>
#include <tenferro/kernel.h>
#include <tenferro/prims.h>
#include <tenferro/einsum.h>
#include <tenferro/linalg.h>
#include <tenferro/ad.h>
#include <tenferro/io.h>

#endif
