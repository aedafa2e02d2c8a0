/* tenferro/ad.h — ad room: reverse and forward mode automatic differentiation. */
#ifndef TENFERRO_AD_H
#define TENFERRO_AD_H

#include <tenferro/tensor.h>

#endif
