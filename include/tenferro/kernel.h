/* tenferro/kernel.h — kernel room: strided copy/permute, fill, map, zip, reduce on the CPU. */
#ifndef TENFERRO_KERNEL_H
#define TENFERRO_KERNEL_H

#include <tenferro/tensor.h>

#endif
