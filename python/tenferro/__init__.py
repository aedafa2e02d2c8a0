"""tenferro: einsum and DLPack exchange over the stable C ABI of libtenferro (docs/python.md).

    import numpy as np, tenferro
    c = tenferro.einsum("ij,jk->ik", a, b)      # numpy in (no copy), numpy out (no copy)
    t = tenferro.from_dlpack(x)                 # any __dlpack__ producer, zero-copy
    np.from_dlpack(t)                           # and back

The library (libtenferro_c.so, the stable C ABI) is loaded with ctypes from the package (pip builds
it) or from $TENFERRO_LIB; einsum's hot path is the C extension tenferro._ext over the same library
(not used when $TENFERRO_LIB names another copy)."""
import ctypes
import os
import weakref

import numpy as np

__all__ = ["einsum", "einsum_path", "from_dlpack", "Tensor", "TenferroError", "linalg", "vjp", "jvp", "devices",
           "load_backend"]


class TenferroError(RuntimeError):
    """A tenferro call failed; the message is tenferro's."""


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.environ.get("TENFERRO_LIB"), os.path.join(here, "libtenferro_c.so.1")):
        if path and os.path.exists(path):
            return ctypes.CDLL(path)
    raise ImportError("libtenferro_c.so.1 not found next to the package nor in $TENFERRO_LIB")


_lib = _load()
_H = ctypes.c_void_p
_I64P = ctypes.POINTER(ctypes.c_int64)
for _name, _res, _args in [
    ("tfe_capi_version", ctypes.c_int, []),
    ("tfe_capi_last_error", ctypes.c_char_p, []),
    ("tfe_handle_borrow", ctypes.c_int, [ctypes.c_int, ctypes.c_int, _I64P, _I64P, ctypes.c_int, ctypes.c_void_p,
                                         ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_H)]),
    ("tfe_handle_release", None, [_H]),
    ("tfe_handle_dtype", ctypes.c_int, [_H]),
    ("tfe_handle_rank", ctypes.c_int, [_H]),
    ("tfe_handle_shape", ctypes.c_int, [_H, _I64P, _I64P]),
    ("tfe_handle_data", ctypes.c_void_p, [_H]),
    ("tfe_handle_einsum", ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H), ctypes.c_int,
                                         ctypes.POINTER(_H)]),
    ("tfe_handle_einsum_ex", ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H), ctypes.c_char_p,
                                            ctypes.POINTER(_H)]),
    ("tfe_handle_einsum_path", ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H), ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                              ctypes.POINTER(ctypes.c_double)]),
    ("tfe_handle_from_dlpack", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_H)]),
    ("tfe_handle_to_dlpack", ctypes.c_int, [_H, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]),
    ("tfe_handle_linalg", ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H),
                                         ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_H)]),
    ("tfe_capi_op_arity", ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]),
    ("tfe_handle_primal", ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H),
                                         ctypes.POINTER(_H)]),
    ("tfe_handle_frule", ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H),
                                        ctypes.POINTER(_H), ctypes.POINTER(_H), ctypes.POINTER(_H)]),
    ("tfe_handle_rrule", ctypes.c_int, [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_H),
                                        ctypes.POINTER(_H), ctypes.POINTER(_H), ctypes.POINTER(_H)]),
    ("tfe_capi_device_list", ctypes.c_int, [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
    ("tfe_capi_device_info", ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                            ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p, ctypes.c_int]),
    ("tfe_capi_backend_load", ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p]),
    ("tfe_capi_backend_status", ctypes.c_char_p, []),
]:
    _f = getattr(_lib, _name)
    _f.restype, _f.argtypes = _res, _args

if _lib.tfe_capi_version() != 1:
    raise ImportError(f"libtenferro C ABI version {_lib.tfe_capi_version()}, this package speaks 1")

_ROWMAJOR = 1
_KIND = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.complex64): 2,
         np.dtype(np.complex128): 3, np.dtype(np.int32): 4, np.dtype(np.int64): 5}
_NUMPY = {v: k for k, v in _KIND.items()}
_NAMES = ["f32", "f64", "c64", "c128", "i32", "i64", "maxplus_f32", "maxplus_f64", "minplus_f32", "minplus_f64",
          "maxtimes_f32", "maxtimes_f64"]
# Tropical kinds are seen from numpy as their float carrier.
_NUMPY.update({6: np.dtype(np.float32), 7: np.dtype(np.float64), 8: np.dtype(np.float32),
               9: np.dtype(np.float64), 10: np.dtype(np.float32), 11: np.dtype(np.float64)})


def _check(status):
    if status:
        raise TenferroError(_lib.tfe_capi_last_error().decode(errors="replace") or f"status {status}")


def _release(h):
    _lib.tfe_handle_release(h)


def _borrow(a, semiring=None):
    """A handle on a numpy array's memory (no copy; the caller keeps `a` alive)."""
    kind = _KIND.get(a.dtype)
    if kind is None:
        raise TypeError(f"tenferro has no kind for numpy dtype {a.dtype}")
    if semiring is not None:
        if semiring not in _SEMIRINGS or kind > 1:
            raise TypeError(f"semiring {semiring!r} needs float32/float64 operands and one of {list(_SEMIRINGS)}")
        kind = _SEMIRINGS[semiring] + kind
    nd = a.ndim
    dims = (ctypes.c_int64 * max(nd, 1))(*a.shape)
    strides = (ctypes.c_int64 * max(nd, 1))(*[s // a.itemsize for s in a.strides])
    h = _H()
    _check(_lib.tfe_handle_borrow(kind, nd, dims, strides, _ROWMAJOR, a.ctypes.data or None, None, None,
                                  ctypes.byref(h)))
    return h


_SEMIRINGS = {"maxplus": 6, "minplus": 8, "maxtimes": 10}  # + 0 for float32, + 1 for float64
_OPTIONS = {"algo", "memory_limit", "time_budget", "greedy_trials", "greedy_alpha", "greedy_temp", "dp_max",
            "write_weight", "seed", "order", "cache", "path_format"}


def _options(opts):
    words = []
    for key, value in opts.items():
        key = "algo" if key == "optimize" else key
        if key not in _OPTIONS:
            raise TypeError(f"unknown einsum option {key!r} (known: optimize/algo, {', '.join(sorted(_OPTIONS - {'algo'}))})")
        if key == "algo" and isinstance(value, (list, tuple)):  # a given path, numpy's / opt_einsum's format
            pairs = [p for p in value if not isinstance(p, str)]  # numpy's einsum_path starts with 'einsum_path'
            if any(len(p) != 2 for p in pairs):
                raise TypeError("a given path is a list of pairs of operand positions (opt_einsum's linear format)")
            words.append("path=" + ";".join(f"{int(a)}:{int(b)}" for a, b in pairs))
            continue
        words.append(f"{key}={int(value) if isinstance(value, bool) else value}")
    return " ".join(words).encode()


def _label(k, chars):
    if k not in chars:
        i = len(chars)
        chars[k] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[i] if i < 52 else chr(0x4E00 + i)
    return chars[k]


def _sublists(args):
    """numpy's integer-label form (a, [0, 1], b, [1, 2], [0, 2]) as an expression and operands."""
    args = list(args)
    out = args.pop() if len(args) % 2 else None
    chars = {}
    term = lambda labels: "".join("..." if k is Ellipsis else _label(int(k), chars) for k in labels)
    ops, terms = args[0::2], [term(labels) for labels in args[1::2]]
    expr = ",".join(terms) + ("->" + term(out) if out is not None else "")
    return expr, ops


def _handles(expr_and_arrays, semiring):
    if isinstance(expr_and_arrays[0], str):
        expr, arrays = expr_and_arrays[0], expr_and_arrays[1:]
    else:
        expr, arrays = _sublists(expr_and_arrays)
    ops = [_as_operand(x) for x in arrays]
    handles = (_H * max(len(ops), 1))()
    try:
        for i, a in enumerate(ops):
            handles[i] = _borrow(a, semiring)
    except Exception:
        for h in handles:
            if h:
                _release(h)
        raise
    return expr, ops, handles


def _as_operand(x):
    a = np.asarray(x)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if any(s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)
    return a


def _to_numpy(h, keep):
    """A numpy array on the handle's memory; the handle (and `keep`) live as long as the array."""
    rank = _lib.tfe_handle_rank(h)
    dims = (ctypes.c_int64 * max(rank, 1))()
    strides = (ctypes.c_int64 * max(rank, 1))()
    _check(_lib.tfe_handle_shape(h, dims, strides))
    dt = _NUMPY[_lib.tfe_handle_dtype(h)]
    shape = tuple(dims[i] for i in range(rank))
    if 0 in shape:
        _release(h)
        return np.empty(shape, dt)
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    base = _lib.tfe_handle_data(h) + lo * dt.itemsize
    buf = (ctypes.c_char * ((hi - lo + 1) * dt.itemsize)).from_address(base)
    weakref.finalize(buf, _release, h)
    buf._keep = keep
    return np.ndarray(shape, dt, buffer=buf, offset=-lo * dt.itemsize,
                      strides=tuple(s * dt.itemsize for s in strides[:rank]))


def _einsum_py(*operands, semiring=None, **options):
    """einsum(expr, *arrays, **options) or einsum(a, [0, 1], b, [1, 2], [0, 2], ...) -> numpy array.

    Operands are read in place (numpy arrays of one dtype: float32/64, complex64/128, int32/64);
    the result is tenferro's own memory, owned by the returned array. semiring="maxplus",
    "minplus" or "maxtimes" computes in that tropical semiring (float32/64 operands and result).
    Options: optimize (or algo) = "auto" | "greedy" | "dp" | "anneal", memory_limit (bytes of
    the largest intermediate; larger ones are sliced), time_budget, greedy_trials, seed,
    order = "row" | "col" (the result's memory order), cache (the plan cache).

    Calls with an expression, numpy arrays of one kind and known options take the C extension's
    path (tenferro._ext: a plan per expression, options, kind, shapes and strides, kept in a table
    of 256; the result is allocated by numpy, which owns it); every other call takes this one
    (ctypes), whose result lives in tenferro's memory."""
    opts = _options(options)
    expr, ops, handles = _handles(operands, semiring)
    out = _H()
    try:
        _check(_lib.tfe_handle_einsum_ex(expr.encode(), len(ops), handles, opts, ctypes.byref(out)))
    finally:
        for h in handles[:len(ops)]:
            _release(h)
    return _to_numpy(out, ops)


einsum = _einsum_py
_fast = None  # the extension (no global named _ext: `from . import _ext` would return it, not import)
if not os.environ.get("TENFERRO_LIB"):
    try:
        from . import _ext as _fast
    except ImportError:  # a build without the extension: the ctypes path serves every call
        _fast = None
if _fast is not None:
    _fast._setup(TenferroError, _einsum_py)
    einsum = _fast.einsum


def einsum_path(*operands, semiring=None, **options):
    """The contraction path and cost einsum would use: (pairs, cost), pairs in opt_einsum's
    linear format, cost = {"flops", "log2_size", "slices", "max_rank"}; nothing is computed."""
    opts = _options(options)
    expr, ops, handles = _handles(operands, semiring)
    cap = max(len(ops), 1)
    pairs = (ctypes.c_int * (2 * cap))()
    nsteps = ctypes.c_int()
    cost = (ctypes.c_double * 4)()
    try:
        _check(_lib.tfe_handle_einsum_path(expr.encode(), len(ops), handles, opts, pairs, cap, ctypes.byref(nsteps),
                                           cost))
    finally:
        for h in handles[:len(ops)]:
            _release(h)
    path = [(pairs[2 * k], pairs[2 * k + 1]) for k in range(nsteps.value)]
    return path, {"flops": cost[0], "log2_size": cost[1], "slices": int(cost[2]), "max_rank": int(cost[3])}


# ---- DLPack ----------------------------------------------------------------------------------------
_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype, _api.PyCapsule_GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                                           ctypes.c_char_p]
_api.PyCapsule_SetName.restype, _api.PyCapsule_SetName.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype, _api.PyCapsule_IsValid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype, _api.PyCapsule_New.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                                             _CapsuleDestructor]
_get_ptr_raw2 = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_DELETER_V = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Capsule names: PyCapsule_New and PyCapsule_SetName keep the pointer, not a copy, so the names
# must outlive every capsule: module constants.
_NAME_V, _NAME_L = b"dltensor_versioned", b"dltensor"
_USED = {_NAME_V: b"used_dltensor_versioned", _NAME_L: b"used_dltensor"}


def _call_deleter(managed, versioned):
    # deleter sits after manager_ctx: versioned {version(8), ctx, deleter}, legacy {DLTensor(48), ctx, deleter}
    off = 16 if versioned else 56
    fn = ctypes.c_void_p.from_address(managed + off).value
    if fn:
        _DELETER_V(fn)(managed)


@_CapsuleDestructor
def _capsule_destructor(cap):
    # An unused capsule (the consumer never took it) still owns its tensor: delete it.
    for name, versioned in ((_NAME_V, True), (_NAME_L, False)):
        if _api.PyCapsule_IsValid(cap, name):
            _call_deleter(_get_ptr_raw2(cap, name), versioned)
            return


class Tensor:
    """A tenferro tensor (a handle of the C ABI): from_dlpack's result, a DLPack producer."""

    def __init__(self, handle, keep=None):
        self._h = handle
        self._keep = keep

    def __del__(self):
        if getattr(self, "_h", None):
            _release(self._h)
            self._h = None

    @property
    def shape(self):
        rank = _lib.tfe_handle_rank(self._h)
        dims = (ctypes.c_int64 * max(rank, 1))()
        _check(_lib.tfe_handle_shape(self._h, dims, None))
        return tuple(dims[i] for i in range(rank))

    @property
    def dtype(self):
        return _NAMES[_lib.tfe_handle_dtype(self._h)]

    def numpy(self):
        """A numpy array on the same memory (no copy)."""
        h = _H()
        managed = ctypes.c_void_p()
        _check(_lib.tfe_handle_to_dlpack(self._h, 0, ctypes.byref(managed)))  # a second reference
        status = _lib.tfe_handle_from_dlpack(managed, 0, 0, ctypes.byref(h))
        if status:
            _call_deleter(managed.value, False)
            _check(status)
        return _to_numpy(h, None)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("tenferro exports without copying")
        versioned = max_version is not None and max_version[0] >= 1
        managed = ctypes.c_void_p()
        _check(_lib.tfe_handle_to_dlpack(self._h, int(versioned), ctypes.byref(managed)))
        return _api.PyCapsule_New(managed, _NAME_V if versioned else _NAME_L, _capsule_destructor)


def from_dlpack(x):
    """A Tensor on the memory of any DLPack producer (numpy, torch, jax, ...), without copying.

    Asks for a versioned capsule (DLPack >= 1.0) and falls back to the legacy one."""
    try:
        cap, versioned = x.__dlpack__(max_version=(1, 0)), True
    except TypeError:
        cap, versioned = x.__dlpack__(), False
    name = _NAME_V if _api.PyCapsule_IsValid(ctypes.c_void_p(id(cap)), _NAME_V) else _NAME_L
    versioned = name == _NAME_V
    managed = _api.PyCapsule_GetPointer(cap, name)
    h = _H()
    _check(_lib.tfe_handle_from_dlpack(managed, int(versioned), 0, ctypes.byref(h)))
    _api.PyCapsule_SetName(cap, _USED[name])  # taken: the capsule no longer deletes it
    return Tensor(h)


# ---- linear algebra, rules, devices ------------------------------------------------------------------
from . import _linalg as linalg  # noqa: E402
from ._linalg import vjp, jvp  # noqa: E402,F401


def devices():
    """The compute devices: a list of {"id", "kind" ("cpu", "cuda", "rocm", "other"), "index", "name",
    "memory_bytes"} ("cpu:0" always; one per GPU once a GPU backend is loaded)."""
    n = _lib.tfe_capi_device_list(None, 0)
    ids = (ctypes.c_int * max(n, 1))()
    n = min(n, _lib.tfe_capi_device_list(ids, n))
    out = []
    for i in range(n):
        kind, index, mem, name = ctypes.c_int(), ctypes.c_int(), ctypes.c_int64(), ctypes.create_string_buffer(64)
        _check(_lib.tfe_capi_device_info(ids[i], ctypes.byref(kind), ctypes.byref(index), ctypes.byref(mem), name, 64))
        out.append({"id": ids[i], "kind": ["cpu", "cuda", "rocm", "other"][kind.value], "index": index.value,
                    "name": name.value.decode(), "memory_bytes": mem.value})
    return out


def load_backend(which="auto", path=None):
    """Loads a GPU backend at run time ("auto", "cuda", "cutensor", "hip", "hiptensor"; path None for
    the usual sonames). Raises TenferroError ("no GPU: ...") when there is none; returns the
    discovery's status line."""
    _check(_lib.tfe_capi_backend_load(which.encode(), path.encode() if path else None))
    return _lib.tfe_capi_backend_status().decode()
