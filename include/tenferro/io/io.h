/* tenferro/io.h — io room: .npy files and a small JSON reader.
 *
 * Table of contents (docs/io.md)
 *   file.h      files written whole or not at all (a temporary file renamed into place)
 *   io_npy.h    tfe_npy_parse_header, tfe_npy_load, tfe_npy_load_mem, tfe_npy_save (dtype-tagged)
 *   io_json.h   tfe_json_parse, tfe_json_get, tfe_json_at, tfe_json_free
 *   dlpack.h    tfe_dlpack_import(_versioned), tfe_dlpack_export(_versioned), tfe_dlpack_dtype */
#if !TFE__BODY_PHASE
#ifndef TENFERRO_IO_H
#define TENFERRO_IO_H

#include <tenferro/tensor/tensor.h>
#include <tenferro/io/file.h>
#include <tenferro/io/npy.h>
#include <tenferro/io/json.h>
#include <tenferro/io/dlpack.h>

#endif
#elif !defined(TENFERRO_IO_BODY) /* bodies */
#define TENFERRO_IO_BODY
#include <tenferro/tensor/tensor.h>
#include <tenferro/io/file.h>
#include <tenferro/io/npy.h>
#include <tenferro/io/json.h>
#include <tenferro/io/dlpack.h>
#endif
