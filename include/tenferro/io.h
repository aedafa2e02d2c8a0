/* tenferro/io.h — io room: .npy and DLPack exchange. */
#ifndef TENFERRO_IO_H
#define TENFERRO_IO_H

#include <tenferro/tensor.h>

#endif
