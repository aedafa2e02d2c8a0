/* tenferro/linalg.h — linalg room: decompositions and solvers on LAPACKE. */
#ifndef TENFERRO_LINALG_H
#define TENFERRO_LINALG_H

#include <tenferro/tensor.h>

#endif
