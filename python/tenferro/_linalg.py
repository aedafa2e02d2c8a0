"""tenferro.linalg and the vjp / jvp helpers, over the stable C ABI's tfe_handle_linalg and
tfe_handle_primal / _frule / _rrule (docs/python.md, docs/capi.md).

Arrays follow numpy: a matrix argument is (..., m, n) with batch axes first; tenferro keeps its
batch axes last (A (m, n, batch...)), so operands are handed over as transposed views (no copy)
and the results come back as views of tenferro's memory, transposed the other way."""
import ctypes

import numpy as np

from . import _H, _as_operand, _borrow, _check, _lib, _release, _to_numpy

# name: (op code, inputs, matrix rank of each linalg output, of each rule output)
_OPS = {
    "einsum": (0, None, None, None),
    "svd": (10, 1, (2, 1, 2), (2, 1, 2)),
    "qr": (12, 1, (2, 2), (2, 2)),
    "lq": (13, 1, (2, 2), (2, 2)),
    "eigh": (14, 1, (1, 2), (1, 2)),
    "eig": (15, 1, (1, 2), (1, 2)),
    "lu": (16, 1, (1, 2, 2), (2, 2)),
    "cholesky": (17, 1, (2,), (2,)),
    "solve": (18, 2, (2,), (2,)),
    "inv": (19, 1, (2,), (2,)),
    "det": (20, 1, (0,), (0,)),
    "slogdet": (21, 1, (0, 0), (0,)),
    "pinv": (22, 1, (2,), (2,)),
    "expm": (24, 1, (2,), (2,)),
    "polar": (25, 1, (2, 2), (2, 2)),
    "lstsq": (27, 2, (2,), (2,)),
}
_FLOAT = {np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)}


def _to_tfe(a):
    """numpy (..., m, n) -> the view tenferro reads, (m, n, ...)."""
    a = _as_operand(a)
    if a.dtype not in _FLOAT:
        a = a.astype(np.float64)
    return np.moveaxis(a, (-2, -1), (0, 1)) if a.ndim >= 2 else a


def _from_tfe(h, mrank, keep):
    """A tenferro result (mrank matrix axes first, batch after) as numpy (batch..., matrix axes)."""
    x = _to_numpy(h, keep)
    if mrank and x.ndim > mrank:
        x = np.moveaxis(x, tuple(range(mrank)), tuple(range(x.ndim - mrank, x.ndim)))
    return x


def _borrow_all(arrays):
    hs = (_H * max(len(arrays), 1))()
    try:
        for i, a in enumerate(arrays):
            hs[i] = _borrow(a)
    except Exception:
        _release_all(hs, len(arrays))
        raise
    return hs


def _release_all(hs, n):
    for i in range(n):
        if hs[i]:
            _release(hs[i])
            hs[i] = None


def _linalg(name, *arrays, options=""):
    op, nin, ranks, _ = _OPS[name]
    xs = [_to_tfe(a) for a in arrays]
    if len(xs) == 2 and xs[0].dtype != xs[1].dtype:
        t = np.result_type(xs[0], xs[1])
        xs = [x.astype(t) for x in xs]
    hs = _borrow_all(xs)
    ys = (_H * 3)()
    nout = ctypes.c_int()
    try:
        _check(_lib.tfe_handle_linalg(op, options.encode(), len(xs), hs, ctypes.byref(nout), ys))
    finally:
        _release_all(hs, len(xs))
    out = tuple(_from_tfe(ys[i], ranks[i], None) for i in range(nout.value))
    return out if len(out) > 1 else out[0]


class _Namespace:
    """tenferro.linalg: numpy-style entry points (batch axes first)."""

    @staticmethod
    def svd(a):
        """(U, S, Vh), thin: a = U @ diag(S) @ Vh; S real, descending."""
        return _linalg("svd", a)

    @staticmethod
    def qr(a, mode="reduced"):
        """(Q, R): R upper with a real non-negative diagonal; mode "reduced" or "complete"."""
        return _linalg("qr", a, options="full=1" if mode == "complete" else "")

    @staticmethod
    def lq(a, mode="reduced"):
        """(L, Q): L lower, Q with orthonormal rows."""
        return _linalg("lq", a, options="full=1" if mode == "complete" else "")

    @staticmethod
    def eigh(a):
        """(w, V) of a Hermitian a (lower triangle read), w ascending."""
        return _linalg("eigh", a)

    @staticmethod
    def eig(a):
        """(w, V), complex."""
        return _linalg("eig", a)

    @staticmethod
    def lu(a):
        """(perm, L, U) with a[..., perm[i], :] = (L @ U)[..., i, :]; perm int64."""
        return _linalg("lu", a)

    @staticmethod
    def cholesky(a):
        """L lower with a = L @ L^H (a Hermitian positive definite; lower triangle read)."""
        return _linalg("cholesky", a)

    @staticmethod
    def solve(a, b):
        """x with a @ x = b; b (..., m, k) or (m,)."""
        b = np.asarray(b)
        if b.ndim == 1:
            return _linalg("solve", a, b[:, None])[:, 0]
        return _linalg("solve", a, b)

    @staticmethod
    def lstsq(a, b):
        """The minimum-norm least-squares x of a @ x ~ b (only x; numpy's lstsq gives more)."""
        b = np.asarray(b)
        if b.ndim == 1:
            return _linalg("lstsq", a, b[:, None])[:, 0]
        return _linalg("lstsq", a, b)

    @staticmethod
    def inv(a):
        return _linalg("inv", a)

    @staticmethod
    def det(a):
        return _linalg("det", a)

    @staticmethod
    def slogdet(a):
        """(sign, log|det a|)."""
        return _linalg("slogdet", a)

    @staticmethod
    def pinv(a, rcond=None):
        return _linalg("pinv", a, options=f"rcond={rcond}" if rcond is not None else "")

    @staticmethod
    def expm(a):
        return _linalg("expm", a)

    @staticmethod
    def polar(a):
        """(U, P) with a = U @ P, U unitary, P Hermitian positive semi-definite."""
        return _linalg("polar", a)


def _rule_inputs(name, arrays, expr):
    op, nin, _, ranks = _OPS[name]
    if name == "einsum":
        if not isinstance(expr, str) or "->" not in expr:
            raise TypeError("vjp/jvp of einsum need expr= with an explicit output ('ij,jk->ik')")
        xs = [_as_operand(a) for a in arrays]
        t = np.result_type(*xs)
        if t not in _FLOAT:
            t = np.dtype(np.float64)
        xs = [x.astype(t, copy=False) for x in xs]
        ranks = (None,)
        params = expr.encode()
    else:
        if len(arrays) != nin:
            raise TypeError(f"{name} takes {nin} input(s)")
        xs = [_to_tfe(a) for a in arrays]
        t = np.result_type(*xs)
        xs = [x.astype(t, copy=False) for x in xs]
        params = None
    return op, xs, ranks, params


def _matrix_in(name, a, like):
    a = np.asarray(a, dtype=like.dtype)
    return a if name == "einsum" else _to_tfe(a)


def _out(name, h, rank, keep):
    if name == "einsum":
        return _to_numpy(h, keep)
    return _from_tfe(h, rank, keep)


def vjp(name, *arrays, expr=None):
    """(ys, pullback): the primal outputs of operation `name` at the arrays (a tuple when the
    operation has several outputs) and pullback(*cotangents) -> the cotangents of the inputs (a
    tuple; a cotangent may be None: zero). name: "einsum" (expr="ij,jk->ik", one or two operands,
    or integer labels "0 1,1 2->0 2"), "svd", "qr", "lq", "eigh", "eig", "lu" (outputs L, U),
    "cholesky", "solve", "inv", "det", "slogdet" (output log|det|), "pinv", "expm", "polar",
    "lstsq". Real-valued outputs of complex inputs (S, w, log|det|) come with a zero imaginary
    part; complex cotangents follow PyTorch (docs/ad.md)."""
    op, xs, ranks, params = _rule_inputs(name, arrays, expr)
    nin = len(xs)
    nout = ctypes.c_int()
    _check(_lib.tfe_capi_op_arity(op, None, ctypes.byref(nout)))
    nout = nout.value
    hx = _borrow_all(xs)
    hy = (_H * nout)()
    try:
        _check(_lib.tfe_handle_primal(op, params, nin, hx, hy))
    except Exception:
        _release_all(hx, nin)
        raise
    rk = (lambda i: None) if ranks[0] is None else (lambda i: ranks[i])
    ys = tuple(_out(name, hy[i], rk(i), None) for i in range(nout))

    def pullback(*cts):
        if len(cts) != nout:
            raise TypeError(f"{name} has {nout} output(s): give as many cotangents (None: zero)")
        cs = [None if c is None else _matrix_in(name, c, xs[0]) for c in cts]
        hc = (_H * nout)()
        hy2 = (_H * nout)()
        hd = (_H * nin)()
        try:
            for i, c in enumerate(cs):
                if c is not None:
                    hc[i] = _borrow(c)
                hy2[i] = _borrow(_matrix_in(name, ys[i], xs[0]))
            _check(_lib.tfe_handle_rrule(op, params, nin, hx, hy2, hc, hd))
        finally:
            _release_all(hc, nout)
            _release_all(hy2, nout)
        return tuple(_out(name, hd[i], None if name == "einsum" else 2, None) for i in range(nin))

    def _free(hx=hx, n=nin):
        _release_all(hx, n)

    import weakref
    weakref.finalize(pullback, _free)
    return (ys if nout > 1 else ys[0]), pullback


def jvp(name, arrays, tangents, expr=None):
    """(ys, dys): the primal outputs of `name` at arrays and their tangents for the input
    tangents (a tangent may be None: zero). Names and conventions as vjp."""
    op, xs, ranks, params = _rule_inputs(name, arrays, expr)
    nin = len(xs)
    if len(tangents) != nin:
        raise TypeError(f"give one tangent per input ({nin})")
    nout = ctypes.c_int()
    _check(_lib.tfe_capi_op_arity(op, None, ctypes.byref(nout)))
    nout = nout.value
    ts = [None if t is None else _matrix_in(name, t, xs[0]) for t in tangents]
    hx = _borrow_all(xs)
    ht = (_H * nin)()
    hy = (_H * nout)()
    hdy = (_H * nout)()
    try:
        for i, t in enumerate(ts):
            if t is not None:
                ht[i] = _borrow(t)
        _check(_lib.tfe_handle_primal(op, params, nin, hx, hy))
        _check(_lib.tfe_handle_frule(op, params, nin, hx, ht, hy, hdy))
    except Exception:
        _release_all(hy, nout)
        raise
    finally:
        _release_all(hx, nin)
        _release_all(ht, nin)
    rk = (lambda i: None) if ranks[0] is None else (lambda i: ranks[i])
    ys = tuple(_out(name, hy[i], rk(i), None) for i in range(nout))
    dys = tuple(_out(name, hdy[i], rk(i), None) for i in range(nout))
    return (ys, dys) if nout > 1 else (ys[0], dys[0])


_ns = _Namespace()
for _n in ("svd", "qr", "lq", "eigh", "eig", "lu", "cholesky", "solve", "lstsq", "inv", "det", "slogdet", "pinv",
           "expm", "polar"):
    globals()[_n] = getattr(_ns, _n)
