/* tenferro/einsum.h — einsum room: notation, contraction order, plans, N-ary execution. */
#ifndef TENFERRO_EINSUM_H
#define TENFERRO_EINSUM_H

#include <tenferro/tensor.h>

#endif
