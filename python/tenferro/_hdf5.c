/* python/tenferro/_hdf5.c — libtenferro_hdf5.so, the HDF5 part of the Python package
 * (tenferro.hdf5). tenferro/io/hdf5.h needs the bodies of <tenferro.h>, which libtenferro's
 * stable ABI does not hand out, so this object compiles its own copy (default mode, without
 * the rooms it does not use) and meets libtenferro at the one boundary made for that: DLPack.
 * Tensors cross as legacy DLManagedTensor pointers, zero-copy both ways. */
#include <tenferro.h>
#include <tenferro/io/hdf5.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT const char *tfe_py_hdf5_error(void) { return tfe_last_error(); }

/* Writes the tensor of `managed` as kind `kind` (NULL: its own; a tropical name stores a float
 * tensor as that kind). Always takes `managed`: its deleter has run when this returns. */
EXPORT int tfe_py_hdf5_write(const char *file, const char *path, void *managed, const char *kind, unsigned flags) {
  tfe_dl_managed_tensor *m = (tfe_dl_managed_tensor *)managed;
  tfe_dtype dt = kind ? tfe_dtype_from_name(kind) : TFE_DT_COUNT;
  tfe_dyn d = {0};
  tfe_status st = kind && dt == TFE_DT_COUNT ? TFE_FAIL(TFE_ERR_DTYPE, "'%s' is not a tenferro kind", kind)
                                             : tfe_dlpack_import(m, dt, &d);
  if (st) {
    if (m && m->deleter) m->deleter(m); /* not taken by the import: given back here */
    return st;
  }
  st = tfe_hdf5_write(file, path, &d, flags);
  tfe_dyn_release(&d);
  return st;
}

/* Reads a dataset into a new managed tensor (the caller calls its deleter, or hands it on);
 * *kind receives the stored kind's name (tropical kinds arrive as their float carrier). */
EXPORT int tfe_py_hdf5_read(const char *file, const char *path, void **managed, const char **kind) {
  tfe_dyn d = {0};
  TFE_TRY(tfe_hdf5_read(file, path, &d));
  *kind = tfe_dtype_name(d.dtype);
  tfe_status st = tfe_dlpack_export(&d, (tfe_dl_managed_tensor **)managed);
  tfe_dyn_release(&d);
  return st;
}
