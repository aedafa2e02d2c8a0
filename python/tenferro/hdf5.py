"""tenferro.hdf5: tensors in HDF5 files, to docs/formats/hdf5.md, through tenferro's C code.

    tenferro.hdf5.write("out.h5", "/run1/T", array)    # groups on the path are created
    a = tenferro.hdf5.read("out.h5", "/run1/T")          # numpy array (tenferro's memory, no copy)

Needs libtenferro_hdf5.so in the package (pip builds it when libhdf5 is installed)."""
import ctypes
import os

import numpy as np

from . import TenferroError, _H, _as_operand, _borrow, _check, _lib, _release, _to_numpy, _SEMIRINGS

__all__ = ["write", "read", "OVERWRITE"]

OVERWRITE = 1

_path = os.environ.get("TENFERRO_HDF5_LIB") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "libtenferro_hdf5.so")
if not os.path.exists(_path):
    raise ImportError("tenferro was built without HDF5 (libtenferro_hdf5.so is missing: install libhdf5-dev "
                      "and reinstall)")
_h5 = ctypes.CDLL(_path)
_h5.tfe_py_hdf5_error.restype = ctypes.c_char_p
_h5.tfe_py_hdf5_write.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p,
                                  ctypes.c_uint]
_h5.tfe_py_hdf5_read.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                 ctypes.POINTER(ctypes.c_char_p)]


def _h5check(status):
    if status:
        raise TenferroError(_h5.tfe_py_hdf5_error().decode(errors="replace"))


def _delete(managed):
    fn = ctypes.c_void_p.from_address(managed + 56).value  # DLManagedTensor.deleter
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(fn)(managed)


def write(file, name, array, overwrite=False, semiring=None):
    """Writes `array` (any numpy array of a tenferro dtype, any strides) as dataset `name`.
    semiring="maxplus" / "minplus" / "maxtimes" stores a float array as that tropical kind."""
    a = _as_operand(array)
    h = _borrow(a)
    managed = ctypes.c_void_p()
    try:
        _check(_lib.tfe_handle_to_dlpack(h, 0, ctypes.byref(managed)))
    finally:
        _release(h)
    kind = None
    if semiring is not None:
        if semiring not in _SEMIRINGS or a.dtype.kind != "f":
            _delete(managed.value)
            raise TypeError(f"semiring needs a float32/float64 array and one of {list(_SEMIRINGS)}")
        kind = f"{semiring}_f{8 * a.itemsize}".encode()
    # the library takes the managed tensor in every case
    _h5check(_h5.tfe_py_hdf5_write(os.fsencode(file), name.encode(), managed, kind, OVERWRITE if overwrite else 0))


def read(file, name, with_kind=False):
    """Reads dataset `name`: a numpy array in the file's memory_order (tenferro's memory, no copy);
    with_kind=True also returns the stored tenferro kind ("f64", "maxplus_f32", ...)."""
    managed = ctypes.c_void_p()
    kind = ctypes.c_char_p()
    _h5check(_h5.tfe_py_hdf5_read(os.fsencode(file), name.encode(), ctypes.byref(managed), ctypes.byref(kind)))
    h = _H()
    status = _lib.tfe_handle_from_dlpack(managed, 0, 0, ctypes.byref(h))
    if status:
        _delete(managed.value)
        _check(status)
    arr = _to_numpy(h, None)
    return (arr, kind.value.decode()) if with_kind else arr
