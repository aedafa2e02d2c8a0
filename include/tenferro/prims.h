/* tenferro/prims.h — prims room: backend protocol, BLIS binding, binary contraction, semiring GEMM. */
#ifndef TENFERRO_PRIMS_H
#define TENFERRO_PRIMS_H

#include <tenferro/tensor.h>

#endif
