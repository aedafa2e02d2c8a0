/* tenferro/kernel/kernel_tpl.h — the kernel room's per-kind templates, in the order they
 * build on each other; re-included per kind (no include guard), by kernel.h for the kinds of
 * the kind table and by <tenferro/stamp.h> (or directly) for a user kind. Parameters: TFE_S,
 * TFE_T, TFE_R, TFE_ALG, TFE_CPLX, TFE_FLOAT (docs/kernel.md, "User kinds").
 *   copy_tpl.h         copy, conj_copy, contiguous (and the gather and prefetch helpers)
 *   elementwise_tpl.h  the elementwise engine: plans and tiles of dst = body(a, b)
 *   map_zip_tpl.h      fill, scale, axpby, map, map_fn, zip, zip_fn
 *   reduce_tpl.h       reduce, reduce_all
 *   route_tpl.h        the public elementwise entries: the chosen backend's slot or the CPU code */
#include <tenferro/kernel/copy_tpl.h>
#include <tenferro/kernel/elementwise_tpl.h>
#include <tenferro/kernel/map_zip_tpl.h>
#include <tenferro/kernel/reduce_tpl.h>
#include <tenferro/kernel/route_tpl.h>
